"""The data matrix X as the mixture takes it: real numbers, and the column names of a DataFrame.

Both are checked before any work, at ``fit`` and at every prediction, following scikit-learn's
``feature_names_in_`` rule for the names.
"""
from __future__ import annotations

import numbers

import numpy as np

from .._validate import check_real

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
    """X as an ndarray of real numbers: :func:`hphawkes_py._validate.check_real`."""
    return check_real(X, name)
