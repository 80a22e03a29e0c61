"""The data matrix X as the mixture takes it: real numbers, and the column names of a DataFrame.

Both are checked before any work, at ``fit`` and at every prediction, following scikit-learn's
``feature_names_in_`` rule for the names.
"""
from __future__ import annotations

import numbers

import numpy as np

from .._validate import check_real

__all__ = ["column_names", "real_data", "centre_scale"]


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
    """X as an ndarray of real numbers: :func:`hphawkes_py._validate.check_real`."""
    return check_real(X, name)


def centre_scale(X, names, what="X"):
    """Column means and standard deviations of X (n, p), the standardisation of the mixtures.

    A column whose spread under- or overflows when squared (magnitudes near 1e-300 or 1e300) is
    measured in its own unit (its largest absolute value); a column that does not vary is refused,
    named by ``names`` (column names, or None for positions), since the standardised data would
    be singular. ``what`` names the data in the message.
    """
    center = X.mean(axis=0)
    mag = np.max(np.abs(X), axis=0)
    with np.errstate(over="ignore", under="ignore"):
        scale = X.std(axis=0, ddof=1)
    tiny = ~(scale > 1e-12 * mag) | ~np.isfinite(scale)
    if tiny.any():
        unit = np.where(mag > 0, mag, 1.0)
        scale = np.where(tiny, unit * (X / unit).std(axis=0, ddof=1), scale)
    const = np.flatnonzero(~(scale > 1e-12 * mag))
    if const.size:
        shown = [names[c] for c in const] if names else list(const)
        raise ValueError(f"{what} has constant (zero-variance) column(s) {shown}: the standardised data would be "
                         "singular; drop them before fitting")
    return center, scale
