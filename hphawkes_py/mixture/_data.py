"""The data matrix X as the mixture takes it: real numbers, and the column names of a DataFrame.

Both are checked before any work, at ``fit`` and at every prediction, following scikit-learn's
``feature_names_in_`` rule for the names.
"""
from __future__ import annotations

import numbers

import numpy as np

__all__ = ["column_names", "real_data"]


def column_names(X):
    """Column names of a DataFrame-like X as an object array (None for arrays or non-str names),
    the rule of scikit-learn's ``feature_names_in_``."""
    cols = getattr(X, "columns", None)
    if cols is None:
        return None
    names = np.asarray(list(cols), dtype=object)
    if len(names) and all(isinstance(c, str) for c in names):
        return names
    return None


def real_data(X, name):
    """X as an ndarray of real numbers (bool, integer or float), before any conversion.

    NumPy casts dates, durations, complex numbers and numeric strings to float without a word
    (a datetime64 becomes days since 1970, a complex number loses its imaginary part); here
    they are refused, naming the column of a DataFrame.
    """
    dtypes = getattr(X, "dtypes", None)
    if dtypes is not None and hasattr(dtypes, "items"):
        for col, dt in dtypes.items():
            kind = getattr(dt, "kind", "O")
            if kind not in "biuf":
                raise TypeError(
                    f"{name} must be an array of numbers (bool, integer or float columns), but column {col!r} has "
                    f"dtype {dt}: convert it to numbers explicitly (dates, e.g., to days since an origin)"
                )
    arr = X if isinstance(X, np.ndarray) else np.asarray(X)
    kind = arr.dtype.kind
    if kind == "O":
        flat = arr.ravel()
        bad = [i for i, v in enumerate(flat) if not isinstance(v, (numbers.Real, np.bool_))]
        if bad:
            v = flat[bad[0]]
            where = np.unravel_index(bad[0], arr.shape) if arr.ndim > 1 else (bad[0],)
            raise TypeError(
                f"{name} must be an array of numbers (bool, integer or float), got {type(v).__name__} {v!r} at index "
                f"{tuple(int(i) for i in where)} ({len(bad)} such value(s))"
            )
    elif kind not in "biuf":
        hint = ": convert dates and durations to numbers explicitly (e.g. days since an origin)" if kind in "Mm" else ""
        raise TypeError(f"{name} must be an array of numbers (bool, integer or float), got an array of dtype {arr.dtype}{hint}")
    return arr
