"""Reading the user's tables: case-insensitive column names, required columns, values shown in errors.

Shared by :meth:`~.data.SCCSData.from_long` and the study-design builder of :mod:`.design`.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd


__all__ = ["show", "lower_columns", "require", "as_days", "refuse_missing"]

_COVARIATE_ALIASES = {"covariate_value": "value"}


def show(v: Any) -> str:
    """repr of a value from a user's table, NumPy scalars shown as plain Python values."""
    return repr(v.item() if isinstance(v, np.generic) else v)


def lower_columns(df: Any, name: str) -> pd.DataFrame:
    """``df`` with lower-case column names (``covariate_value`` read as ``value``)."""
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"{name} must be a pandas DataFrame, got {type(df).__name__}")
    out = df.rename(columns={c: str(c).lower() for c in df.columns})
    out = out.rename(columns={k: v for k, v in _COVARIATE_ALIASES.items() if k in out.columns})
    if len(set(out.columns)) != len(out.columns):
        raise ValueError(f"{name} has duplicate column names after lower-casing: {list(df.columns)}")
    return out


def require(df: pd.DataFrame, cols, name: str) -> None:
    """Refuse a table without one of ``cols`` (names the missing ones)."""
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ValueError(f"{name} must have columns {list(cols)} (case-insensitive); missing {missing}, got {list(df.columns)}")


def as_days(s, name: str) -> np.ndarray:
    """A column of integer days as int64 (whole-valued floats accepted; anything else refused)."""
    a = np.asarray(s)
    if a.size and (not np.issubdtype(a.dtype, np.number) or a.dtype.kind == "b"):
        raise ValueError(f"{name} must be integer days, got dtype {a.dtype}")
    bad = ~np.isfinite(a)
    bad[~bad] = a[~bad] != np.round(a[~bad])  # rounding only finite values: NaN would warn from rint
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"{name} must be integer days: {int(bad.sum())} bad value(s), first at row {i} "
                         f"({a[i].item()!r})")
    return a.astype(np.int64)


def refuse_missing(df: pd.DataFrame, col: str, name: str) -> None:
    """Refuse missing values (NaN, None, NaT) in an id column, naming the column and the first
    row, rather than letting them become an id such as ``"nan"``."""
    miss = pd.isna(df[col]).to_numpy()
    if miss.any():
        i = int(np.argmax(miss))
        raise ValueError(f"{name}.{col} has {int(miss.sum())} missing value(s) (NaN/None), first at row {i} "
                         f"(index {show(df.index[i])}); every row needs a {col}")
