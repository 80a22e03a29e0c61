"""The cylinders of the space-time normal scan on the CPU (Numba): every interval of every circle, per replicate.

In the normal model's replicates the measurements are permuted among the observations, which keep their
locations and days (:mod:`.normal_space_time`), so a cylinder's observation count ``n`` is fixed and its two
sums (x and x^2; weighted: w x and w) change from replicate to replicate. A cylinder is a circle of the
windows (:func:`~.windows.build_windows`) over the days ``t1..t2``; its sums are added location by location
along the circle's walk from each location's sums over the days, the difference of two cumulative sums
from the end of the study period (``cum[t1] - cum[t2 + 1]``, as SaTScan stores its case and measure arrays).
The observed data's cylinders are scored by SaTScan's maximizing value (:func:`~.normal_model._maximizing_value`)
after its test of interest (:func:`~.normal_model._of_interest`), the best of every centre and interval kept
(:func:`_interval_best`; the best of a centre, the first in SaTScan's loop of equal ones, is chosen from these by
:func:`~.cylinders.first_best`). The replicates' cylinders are compared by the between-group sum of squares
(:func:`_max_q_cylinders`, which walks each circle once and takes a cylinder's sums as the difference of the
circle's sums at two days); the CUDA kernel ``scan_normal_cylinders`` (``gpu/kernels/scan_permutation.cu``) runs
the same arithmetic in the same order, one thread per centre and replicate.
"""
from __future__ import annotations

import dataclasses

import numpy as np
from numba import njit, prange

from ._rng import replicate_seed_words
from .normal_model import _NONE, WEIGHTED_NORMAL, _maximizing_value, _of_interest, _statistics
from .null_draws import _strata_arrays, seeded_permutation_strata

__all__ = ["NormalCylinderEngine", "cumulative_from_end", "intervals", "permuted_cumulative", "surveillance_intervals"]


def intervals(T: int, max_t: int, t_end_min: int) -> tuple:
    """The intervals ``[t1, t2]`` a space-time scan of T days looks at, in SaTScan's loop order (end day
    ascending from ``t_end_min``, start day descending, at most ``max_t`` days): ``(t1, t2)`` int64 arrays."""
    t2 = np.concatenate([np.full(min(max_t, t + 1), t) for t in range(t_end_min, T)]).astype(np.int64)
    t1 = np.concatenate([np.arange(t, max(-1, t - max_t), -1) for t in range(t_end_min, T)]).astype(np.int64)
    return t1, t2


def surveillance_intervals(T: int, cuts) -> tuple:
    """The intervals a prospective surveillance's analyses looked at (SaTScan's ``AdjustForEarlierAnalyses``):
    ``cuts`` ``((a, m), ...)``, from day a on (until the next range) the analysis ending on day t scanned the
    intervals ending on t of at most m days (:func:`~.space_time_scan._surveillance_cuts`); ``(t1, t2)`` as
    :func:`intervals` gives them, in its order."""
    firsts = [a for a, _ in cuts] + [T]
    t1, t2 = [], []
    for (a, m), b in zip(cuts, firsts[1:]):
        for t in range(a, b):
            k = min(m, t + 1)
            t2 += [t] * k
            t1 += range(t, t - k, -1)
    return np.asarray(t1, dtype=np.int64), np.asarray(t2, dtype=np.int64)


def cumulative_from_end(sums: np.ndarray) -> np.ndarray:
    """(L, T + 1, ...) the sums per location and day ``sums`` (L, T, ...) added from the last day back:
    entry t is the sum over the days t..T - 1, entry T is 0."""
    s = np.asarray(sums)
    out = np.zeros((s.shape[0], s.shape[1] + 1) + s.shape[2:], dtype=s.dtype)
    out[:, :-1] = np.cumsum(s[:, ::-1], axis=1)[:, ::-1]
    return out


@njit(cache=True, parallel=True)
def _permuted_cumulative(loc, day, first, second, words, members, bounds, day0, weighted, c1, c2):
    """The null replicates' sums as the replicates' kernel reads them: for replicate r (``words[r]``: its seed)
    the pairs (``first``, ``second``) permuted among the observations (:func:`~.null_draws.seeded_permutation_strata`;
    each keeps its location ``loc`` and day ``day``), added per location and day in observation order, and added
    up from the last day back into ``c1[:, :, r]`` (and, ``weighted``, ``c2``), (L, T1, R) for the days ``day0``
    on (the last entry 0): :func:`cumulative_from_end` of the cell sums, bit for bit. Observations dated before
    ``day0`` are in no cylinder and add nothing."""
    L, T1, R = c1.shape
    K = first.shape[0]
    B = 8  # replicates per task: each (location, day) row of the output is written 64 bytes at a time
    for b in prange((R + B - 1) // B):
        r0 = b * B
        nr = min(B, R - r0)
        s1 = np.zeros((L, T1, B))
        s2 = np.zeros((L, T1, B) if weighted else (1, 1, B))
        for j in range(nr):
            perm = seeded_permutation_strata(words[r0 + j], K, members, bounds)
            for q in range(K):
                t = day[q] - day0
                if t >= 0:
                    s1[loc[q], t, j] += first[perm[q]]
                    if weighted:
                        s2[loc[q], t, j] += second[perm[q]]
        for z in range(L):
            for t in range(T1 - 3, -1, -1):
                for j in range(nr):
                    s1[z, t, j] += s1[z, t + 1, j]
                    if weighted:
                        s2[z, t, j] += s2[z, t + 1, j]
            for t in range(T1):
                for j in range(nr):
                    c1[z, t, r0 + j] = s1[z, t, j]
                    if weighted:
                        c2[z, t, r0 + j] = s2[z, t, j]


def permuted_cumulative(loc, day, first, second, seeds, L: int, T1: int, day0: int, weighted: bool,
                        strata=None) -> tuple:
    """``(c1, c2)`` of the null replicates of one batch (``seeds``: one per replicate, as
    :func:`~.null_draws.permute_measurements` takes them, which draws the same permutations; ``strata``: None or
    ``(members, bounds)`` of :func:`~.null_draws.strata_members`, to permute within them): the cumulative sums
    from the end, (L, T1, R), of the permuted ``first`` (x, weighted w x) and, ``weighted``, ``second`` (w; else
    a one-element placeholder) per location ``loc`` and day ``day`` from ``day0`` on (:func:`_permuted_cumulative`),
    as :meth:`NormalCylinderEngine.max_q` reads them."""
    words = replicate_seed_words(seeds)
    R = len(words)
    c1 = np.empty((L, T1, R))
    c2 = np.empty((L, T1, R) if weighted else (1, 1, 1))
    _permuted_cumulative(np.ascontiguousarray(loc, dtype=np.int64), np.ascontiguousarray(day, dtype=np.int64),
                         np.ascontiguousarray(first, np.float64), np.ascontiguousarray(second, np.float64),
                         np.ascontiguousarray(words, dtype=np.uint32), *_strata_arrays(strata), np.int64(day0),
                         weighted, c1, c2)
    return c1, c2


@njit(cache=True, parallel=True)
def _interval_best(model, offsets, neighbors, boundary, n_cum, s1_cum, s2_cum, t1s, t2s, N, U, U2, min_high,
                   min_low, want_high, want_low, per_mv, per_j):
    """For every centre i and interval a of the observed cell sums (``s1_cum``, ``s2_cum``, ``n_cum`` (L, T + 1):
    the cumulative sums from the end of :func:`cumulative_from_end`): the maximizing value of the interval's best
    cylinder over the centre's circles, ``per_mv[i, a]`` (:data:`~.normal_model._NONE` when none is of interest),
    and the circle entry where it ends, ``per_j[i, a]`` (-1), the first (smallest) of equal ones, as SaTScan's
    loop keeps it."""
    m = offsets.shape[0] - 1
    I = t1s.shape[0]
    for q in prange(m * I):
        i = q // I
        a = q % I
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
            u += s1_cum[loc, t1] - s1_cum[loc, e]
            u2 += s2_cum[loc, t1] - s2_cum[loc, e]
            if boundary[k] == 0:  # inside a tie group: not a window end
                continue
            if _of_interest(model, n, u, u2, N, U, U2, min_high, min_low, want_high, want_low):
                v = _maximizing_value(model, n, u, u2, N, U, U2)
                if v > mv:
                    mv = v
                    at = k
        per_mv[i, a] = mv
        per_j[i, a] = at


@njit(cache=True, parallel=True)
def _max_q_cylinders(weighted, offsets, neighbors, boundary, n_cum, c1, c2, t1s, t2s, N, Ubar, W, S0, min_high,
                     min_low, want_high, want_low, best):
    """For every centre i and replicate r (``c1``, ``c2`` (L, T + 1, R): the cumulative sums from the end of x
    (weighted: w x) and of w, ``c2`` unread without weights): the largest between-group sum of squares ``Q``
    of a cylinder of interest, ``best[i, r]`` (0 when none). Unweighted, ``Q = (u - n Ubar)^2 N / (n (N - n))``
    for a cylinder of ``n`` observations summing to ``u`` (``Ubar = U / N``); weighted,
    ``Q = (u - v Ubar)^2 W / (v (W - v))`` with ``v`` its weight (``Ubar = U / W``, ``W`` the total weight).
    The LLR is ``N/2 log(S0 / (S0 - Q))`` (``S0``: the total sum of squares about the (weighted) mean), the
    statistic of :func:`~.normal_model._full_statistic` with the expanded sums of SaTScan's maximizing value
    simplified (the sum of squares of the measurements cancels); a cylinder of interest is one whose mean is
    higher (lower) than outside, ``u != 0``, ``n`` in ``[min, N)`` and ``Q < S0`` (SaTScan: variance > 0).

    Each circle is walked once: its sums per day from the end (over its locations with observations on the days
    the intervals read) grow location by location, and at every window end each interval's cylinder is the
    difference of two of its days; the CUDA kernel adds the same sums in the same order, per interval."""
    m = offsets.shape[0] - 1
    R = c1.shape[2]
    I = t1s.shape[0]
    Nf = np.float64(N)
    # the days a cylinder's sums are read at: from the earliest start to the day after the latest end
    d0 = t1s.min() if I else 0
    D = (t2s.max() + 2 - d0) if I else 0
    for i in prange(m):
        # the circle's sums per day (and replicate), added from the end as the circle grows: a cylinder's sums
        # are the difference of two of its rows (row t - d0 for day t); the circle is walked once, not once per
        # interval
        n_circle = np.zeros(D, dtype=np.int64)
        u_circle = np.zeros((D, R))
        v_circle = np.zeros((D if weighted else 1, R))
        scored = np.full(I, -1, dtype=np.int64)  # per interval, the observations of the cylinder scored last
        top = np.zeros(R)
        for k in range(offsets[i], offsets[i + 1]):
            loc = neighbors[k]
            # a location without observations on the days read adds exactly 0 to every sum: skipped, and so is a
            # window end whose cylinder holds the observations of the one of its interval scored last
            if n_cum[loc, d0] != n_cum[loc, d0 + D - 1]:
                for t in range(D):
                    n_circle[t] += n_cum[loc, d0 + t]
                    for r in range(R):
                        u_circle[t, r] += c1[loc, d0 + t, r]
                    if weighted:
                        for r in range(R):
                            v_circle[t, r] += c2[loc, d0 + t, r]
            if boundary[k] == 0:
                continue
            for a in range(I):
                t1 = t1s[a] - d0
                e = t2s[a] + 1 - d0
                n = n_circle[t1] - n_circle[e]
                if n == scored[a] or n == 0 or n == N:
                    continue
                scored[a] = n
                hi = want_high and n >= min_high
                lo = want_low and n >= min_low
                if not (hi or lo):
                    continue
                if weighted:
                    for r in range(R):
                        u = u_circle[t1, r] - u_circle[e, r]
                        v = v_circle[t1, r] - v_circle[e, r]
                        dev = u - v * Ubar
                        q = dev * dev * W / (v * (W - v))
                        ok = u != 0.0 and q < S0 and ((hi and dev > 0.0) or (lo and dev < 0.0))
                        top[r] = max(top[r], q if ok else 0.0)
                else:
                    nU = np.float64(n) * Ubar
                    cn = Nf / (np.float64(n) * np.float64(N - n))
                    for r in range(R):
                        u = u_circle[t1, r] - u_circle[e, r]
                        dev = u - nU
                        q = dev * dev * cn
                        ok = u != 0.0 and q < S0 and ((hi and dev > 0.0) or (lo and dev < 0.0))
                        top[r] = max(top[r], q if ok else 0.0)
        for r in range(R):
            best[i, r] = top[r]


@dataclasses.dataclass(frozen=True)
class NormalCylinderEngine:
    """One space-time normal analysis's cylinders on the CPU: the circles (CSR ``offsets``, ``neighbors``,
    ``boundary``), the observations per location and day as cumulative sums from the end (``n_cum`` (L, T + 1)
    int64), the intervals (``t1s``, ``t2s``, :func:`intervals`) and the constants of
    :class:`~.normal_model.PermutationEngine` (``model``: :data:`~.normal_model.NORMAL` or
    :data:`~.normal_model.WEIGHTED_NORMAL`; ``N``, ``U``, ``U2``, ``A``, ``B``; the minimums and directions)
    and ``S0``, the total sum of squares about the (weighted) mean. The cell sums it scans are those of x and
    x^2 (weighted: w x and w) per location, day and replicate.

    The observed data's cylinders are compared by SaTScan's maximizing value (:meth:`interval_best`: the same
    cylinder as SaTScan's of equal ones); the replicates' maxima (:meth:`max_llr`) by the between-group sum of
    squares ``Q`` it simplifies to, vectorised over the replicates (:func:`_max_q_cylinders`): their LLRs agree
    to rounding (about 1e-13 relative)."""

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
    S0: float = 0.0
    backend = "cpu"

    @property
    def n_centres(self) -> int:
        return len(self.offsets) - 1

    @property
    def weighted(self) -> bool:
        return self.model == WEIGHTED_NORMAL

    def replicate_sums(self, s1: np.ndarray, s2: np.ndarray) -> tuple:
        """What :meth:`max_q` reads of the cell sums (L, T, R): the cumulative sums from the end of ``s1`` and,
        weighted, of ``s2`` (the weights; unweighted a one-element placeholder: x^2 is not needed)."""
        c1 = np.ascontiguousarray(cumulative_from_end(np.asarray(s1, np.float64)))
        c2 = np.ascontiguousarray(cumulative_from_end(np.asarray(s2, np.float64))) if self.weighted else \
            np.zeros((1, 1, 1))
        return c1, c2

    def interval_best(self, s1: np.ndarray, s2: np.ndarray) -> tuple:
        """For the observed cell sums ``s1``, ``s2`` (L, T) float64: the (m, I) maximizing value of the best
        cylinder of every centre and interval and its circle entry (:func:`_interval_best`)."""
        c1, c2 = (np.ascontiguousarray(cumulative_from_end(np.asarray(s, np.float64))) for s in (s1, s2))
        m, I = self.n_centres, len(self.t1s)
        per_mv = np.empty((m, I))
        per_j = np.empty((m, I), dtype=np.int64)
        _interval_best(np.int64(self.model), self.offsets, self.neighbors, self.boundary, self.n_cum, c1, c2,
                       self.t1s, self.t2s, np.int64(self.N), np.float64(self.U), np.float64(self.U2),
                       np.int64(self.min_high), np.int64(self.min_low), self.want_high, self.want_low, per_mv, per_j)
        return per_mv, per_j

    def llr(self, mv: np.ndarray) -> np.ndarray:
        """The LLRs of maximizing values (0 where there is none; one host function for both engines)."""
        return _statistics(np.int64(self.model), np.ascontiguousarray(mv, dtype=np.float64), np.int64(self.N),
                           np.float64(self.U), np.float64(self.U2), np.float64(self.A), np.float64(self.B))

    @property
    def days_read(self) -> tuple:
        """``(d0, dlast)``: the earliest first day of an interval and the day after the latest last one (the
        engine's days), the range of the cumulative sums a cylinder is read from."""
        if not len(self.t1s):
            return 0, 0
        return int(self.t1s.min()), int(self.t2s.max()) + 1

    def max_q(self, c1: np.ndarray, c2: np.ndarray) -> np.ndarray:
        """(m, R) the largest between-group sum of squares ``Q`` of each centre's cylinders of interest for the
        replicates' cumulative sums ``c1``, ``c2`` (:meth:`replicate_sums`, :func:`permuted_cumulative`; 0: none;
        :func:`_max_q_cylinders`)."""
        weighted = self.weighted
        best = np.zeros((self.n_centres, c1.shape[2]))
        _max_q_cylinders(weighted, self.offsets, self.neighbors, self.boundary, self.n_cum, c1, c2, self.t1s, self.t2s, np.int64(self.N),
                         np.float64(self.U / (self.U2 if weighted else self.N)), np.float64(self.U2),
                         np.float64(self.S0), np.int64(self.min_high), np.int64(self.min_low), self.want_high,
                         self.want_low, best)
        return best

    def llr_of_q(self, q: np.ndarray) -> np.ndarray:
        """The LLRs ``N/2 log(S0 / (S0 - Q))`` of between-group sums of squares (0 where Q is 0)."""
        q = np.asarray(q, dtype=np.float64)
        with np.errstate(divide="ignore"):
            return np.where(q > 0.0, 0.5 * self.N * np.log(self.S0 / (self.S0 - np.where(q > 0.0, q, 0.0))), 0.0)

    def max_llr(self, c1: np.ndarray, c2: np.ndarray) -> np.ndarray:
        """(R,) the largest cylinder LLR of each replicate of the cumulative sums ``c1``, ``c2`` (as :meth:`max_q`
        takes them; 0: none)."""
        q = self.max_q(c1, c2)
        return self.llr_of_q(q.max(axis=0) if q.shape[0] else np.zeros(np.shape(c1)[2]))
