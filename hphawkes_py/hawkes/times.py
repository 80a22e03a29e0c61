"""Event times for the engines: where tied times start, and the float32 engines' hi/lo split of
the times that keeps time differences accurate relative to the difference."""
from __future__ import annotations

import math

import numpy as np

__all__ = ["tie_starts", "time_grid", "split_time"]


def tie_starts(t: np.ndarray) -> np.ndarray:
    """ts[n] = first index m with t[m] == t[n] (times sorted): the trigger sum of n runs over m < ts[n]."""
    return np.searchsorted(t, t, side="left").astype(np.int64)


def time_grid(t: np.ndarray, dtype) -> float:
    """The power-of-two grid g of :func:`split_time` for ``t`` (0 for float64: no split)."""
    if np.dtype(dtype) == np.float64:
        return 0.0
    amax = float(np.max(np.abs(t))) if np.size(t) else 0.0
    if amax == 0.0:
        return 0.0
    return 2.0 ** math.ceil(math.log2(amax / 2.0**22))


def split_time(t: np.ndarray, dtype, grid: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Times as (t_hi, t_lo) in ``dtype`` with t ~= t_hi + t_lo and t_hi on a power-of-two grid.

    For float32 this keeps time differences accurate to float32 *relative to the difference*
    (not to |t|): t_hi are multiples of a power of two g with |t_hi| / g < 2^23, so
    t_hi[n] - t_hi[m] is exact in float32, and |t_lo| <= g/2 carries the rest. For float64
    t_lo is all zeros (double is accurate enough for times in hours over decades). ``grid``
    gives g (query times are split on the grid of the data they are compared with).
    """
    t = np.asarray(t, dtype=np.float64)
    dtype = np.dtype(dtype)
    if dtype == np.float64:
        return t.copy(), np.zeros_like(t)
    g = time_grid(t, dtype) if grid is None else float(grid)
    if g == 0.0:
        return t.astype(np.float32), np.zeros(t.shape, np.float32)
    hi = np.round(t / g) * g
    return hi.astype(np.float32), (t - hi).astype(np.float32)
