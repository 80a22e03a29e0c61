"""The cylinders of the space-time normal scan on the CPU (Numba): every interval of every circle, per replicate.

In the normal model's replicates the measurements are permuted among the observations, which keep their
locations and days (:mod:`.normal_space_time`), so a cylinder's observation count ``n`` is fixed and its two
sums (x and x^2; weighted: w x and w) change from replicate to replicate. A cylinder is a circle of the
windows (:func:`~.windows.build_windows`) over the days ``t1..t2``; its sums are added location by location
along the circle's walk from each location's sums over the days, the difference of two cumulative sums
from the end of the study period (``cum[t1] - cum[t2 + 1]``, as SaTScan stores its case and measure arrays).
Each cylinder is scored by SaTScan's maximizing value (:func:`~.normal_model._maximizing_value`) after its
test of interest (:func:`~.normal_model._of_interest`), and the best of a centre is the first, in the order of
SaTScan's loop (circle entry ascending, then the intervals: end day ascending, start day descending), of the
largest values. The CUDA kernel ``scan_permutation_cylinders`` (``gpu/kernels/scan_permutation.cu``) runs
the same arithmetic in the same order, one thread per centre and replicate.
"""
from __future__ import annotations

import dataclasses

import numpy as np
from numba import njit, prange

from .normal_model import _NONE, _maximizing_value, _of_interest, _statistics

__all__ = ["NormalCylinderEngine", "cumulative_from_end", "intervals"]


def intervals(T: int, max_t: int, t_end_min: int) -> tuple:
    """The intervals ``[t1, t2]`` a space-time scan of T days looks at, in SaTScan's loop order (end day
    ascending from ``t_end_min``, start day descending, at most ``max_t`` days): ``(t1, t2)`` int64 arrays."""
    t2 = np.concatenate([np.full(min(max_t, t + 1), t) for t in range(t_end_min, T)]).astype(np.int64)
    t1 = np.concatenate([np.arange(t, max(-1, t - max_t), -1) for t in range(t_end_min, T)]).astype(np.int64)
    return t1, t2


def cumulative_from_end(sums: np.ndarray) -> np.ndarray:
    """(L, T + 1, ...) the sums per location and day ``sums`` (L, T, ...) added from the last day back:
    entry t is the sum over the days t..T - 1, entry T is 0."""
    s = np.asarray(sums)
    out = np.zeros((s.shape[0], s.shape[1] + 1) + s.shape[2:], dtype=s.dtype)
    out[:, :-1] = np.cumsum(s[:, ::-1], axis=1)[:, ::-1]
    return out


@njit(cache=True, parallel=True)
def _best_cylinders(model, offsets, neighbors, boundary, n_cum, s1_cum, s2_cum, t1s, t2s, N, U, U2, min_high,
                    min_low, want_high, want_low, best_mv, best_j, best_a, per_mv, per_j):
    """For every centre i and replicate r (``s1_cum``, ``s2_cum`` (R, L, T + 1), ``n_cum`` (L, T + 1): the
    cumulative sums from the end of :func:`cumulative_from_end`): the maximizing value of the best cylinder
    ``best_mv[i, r]`` (:data:`~.normal_model._NONE` when none is of interest), its circle entry ``best_j`` and
    interval ``best_a`` (an index of ``t1s``, ``t2s``; -1 when none); with ``per_mv`` of shape (m, I) (R = 1),
    also the best of every interval, ``per_mv[i, a]`` and its entry ``per_j[i, a]``."""
    m = offsets.shape[0] - 1
    R = s1_cum.shape[0]
    I = t1s.shape[0]
    keep_intervals = per_mv.shape[0] == m
    for q in prange(m * R):
        i = q // R
        r = q % R
        top = _NONE
        tj = np.int64(-1)
        ta = np.int64(-1)
        for a in range(I):
            t1 = t1s[a]
            e = t2s[a] + 1
            n = np.int64(0)
            u = 0.0
            u2 = 0.0
            mv = _NONE
            at = np.int64(-1)
            for k in range(offsets[i], offsets[i + 1]):
                loc = neighbors[k]
                n += n_cum[loc, t1] - n_cum[loc, e]
                u += s1_cum[r, loc, t1] - s1_cum[r, loc, e]
                u2 += s2_cum[r, loc, t1] - s2_cum[r, loc, e]
                if boundary[k] == 0:  # inside a tie group: not a window end
                    continue
                if _of_interest(model, n, u, u2, N, U, U2, min_high, min_low, want_high, want_low):
                    v = _maximizing_value(model, n, u, u2, N, U, U2)
                    if v > mv:
                        mv = v
                        at = k
            if keep_intervals:
                per_mv[i, a] = mv
                per_j[i, a] = at
            # SaTScan's loop visits circle entry k before the intervals: of equal values the smallest entry
            # first, then (the strict test) the earlier interval
            if mv > top or (mv == top and at >= 0 and at < tj):
                top = mv
                tj = at
                ta = a
        best_mv[i, r] = top
        best_j[i, r] = tj
        best_a[i, r] = ta


@dataclasses.dataclass(frozen=True)
class NormalCylinderEngine:
    """One space-time normal analysis's cylinders on the CPU: the circles (CSR ``offsets``, ``neighbors``,
    ``boundary``), the observations per location and day as cumulative sums from the end (``n_cum`` (L, T + 1)
    int64), the intervals (``t1s``, ``t2s``, :func:`intervals`) and the constants of
    :class:`~.normal_model.PermutationEngine` (``model``: :data:`~.normal_model.NORMAL` or
    :data:`~.normal_model.WEIGHTED_NORMAL`; ``N``, ``U``, ``U2``, ``A``, ``B``; the minimums and directions).
    The cell sums it scans are those of x and x^2 (weighted: w x and w) per location, day and replicate."""

    model: int
    offsets: np.ndarray
    neighbors: np.ndarray
    boundary: np.ndarray
    n_cum: np.ndarray
    t1s: np.ndarray
    t2s: np.ndarray
    N: int
    U: float
    U2: float
    A: float
    B: float
    min_high: int
    min_low: int
    want_high: bool
    want_low: bool
    backend = "cpu"

    @property
    def n_centres(self) -> int:
        return len(self.offsets) - 1

    @staticmethod
    def cumulative_sums(s1: np.ndarray, s2: np.ndarray) -> tuple:
        """The cell sums ``s1``, ``s2`` (L, T, R) as the engines read them: float64 cumulative sums from the end
        of the study period, (L, T + 1, R) each (:func:`cumulative_from_end`)."""
        return tuple(np.ascontiguousarray(cumulative_from_end(np.asarray(s, np.float64))) for s in (s1, s2))

    def best_mv(self, s1: np.ndarray, s2: np.ndarray, per_interval: bool = False):
        """For the cell sums ``s1``, ``s2`` (L, T, R) float64: the (m, R) maximizing value of each centre's best
        cylinder, its circle entry and its interval (an index of ``t1s``; -1: none), and with ``per_interval``
        (R = 1) the (m, I) best value and entry of every interval (else None twice)."""
        m, R = self.n_centres, np.shape(s1)[2]
        if per_interval and R != 1:
            raise ValueError("per_interval needs one column of sums")
        c1, c2 = (np.ascontiguousarray(np.moveaxis(c, 2, 0)) for c in self.cumulative_sums(s1, s2))
        mv = np.empty((m, R))
        j = np.empty((m, R), dtype=np.int64)
        a = np.empty((m, R), dtype=np.int64)
        I = len(self.t1s)
        per_mv = np.empty((m, I) if per_interval else (0, 0))
        per_j = np.empty((m, I) if per_interval else (0, 0), dtype=np.int64)
        _best_cylinders(np.int64(self.model), self.offsets, self.neighbors, self.boundary, self.n_cum, c1, c2,
                        self.t1s, self.t2s, np.int64(self.N), np.float64(self.U), np.float64(self.U2),
                        np.int64(self.min_high), np.int64(self.min_low), self.want_high, self.want_low, mv, j, a,
                        per_mv, per_j)
        return mv, j, a, (per_mv if per_interval else None), (per_j if per_interval else None)

    def llr(self, mv: np.ndarray) -> np.ndarray:
        """The LLRs of maximizing values (0 where there is none; one host function for both engines)."""
        return _statistics(np.int64(self.model), np.ascontiguousarray(mv, dtype=np.float64), np.int64(self.N),
                           np.float64(self.U), np.float64(self.U2), np.float64(self.A), np.float64(self.B))

    def max_llr(self, s1: np.ndarray, s2: np.ndarray) -> np.ndarray:
        """(R,) the largest cylinder LLR of each replicate of the cell sums (L, T, R) (0: none)."""
        mv = self.best_mv(s1, s2)[0]
        return self.llr(mv).max(axis=0) if mv.shape[0] else np.zeros(np.shape(s1)[2])
