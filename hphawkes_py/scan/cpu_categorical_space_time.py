"""The cylinders of the space-time ordinal and multinomial scans on the CPU (Numba): every interval of every circle.

In these models' replicates the categories are permuted among the cases, which keep their locations and days
(:mod:`.categorical_space_time`), so a cylinder's number of cases ``W`` is fixed and its cases per category change
from replicate to replicate. A cylinder is a circle of the windows (:func:`~.windows.build_windows`) over the days
``t1..t2``; its cases per category are added location by location along the circle's walk, each location's from
the cumulative counts from the end of the study period (``cum[t1] - cum[t2 + 1]``, SaTScan's
``gppCategoryCases``). A cylinder is scored by the window statistic of the purely spatial models
(:func:`~._categorical._window_value`: the log likelihood, ordinal: pooled under the order restriction). The observed
data's best cylinder of every centre and interval comes from :func:`_interval_best`; the replicates' best of every
centre from :func:`_max_cylinders` (the replicates' cases from :func:`permuted_cumulative`). The CUDA kernel
``scan_categorical_cylinders`` (``gpu/kernels/scan_categorical.cu``), one thread per centre and replicate, leaves
out the cylinders that cannot change its replicate's maximum for the same reasons and scores the others with the
same arithmetic, so its maxima are the CPU's bit for bit; it walks the circle once per interval (a thread cannot
hold a circle's cases per day).
"""
from __future__ import annotations

import dataclasses
import functools

import numpy as np
from numba import njit, prange

from ._categorical import _NONE, CategoryTotals, _statistics, _window_value
from ._rng import replicate_seed_words
from .null_draws import _strata_arrays, seeded_permutation_strata

__all__ = ["CategoricalCylinderEngine", "category_cumulative", "permuted_cumulative", "window_bounds"]


def category_cumulative(counts: np.ndarray) -> np.ndarray:
    """(L, T + 1, K, ...) int32 the cases per location, day and category ``counts`` (L, T, K, ...) added from the
    last day back: entry t is the sum over the days t..T - 1, entry T is 0."""
    c = np.asarray(counts)
    out = np.zeros((c.shape[0], c.shape[1] + 1) + c.shape[2:], dtype=np.int32)
    out[:, :-1] = np.cumsum(c[:, ::-1], axis=1, dtype=np.int64)[:, ::-1]
    return out


@njit(cache=True, parallel=True)
def _permuted_cumulative(loc, day, cat, words, members, bounds, out):
    """The null replicates' cases as the replicates' kernel reads them: for replicate r (``words[r]``: its seed) the
    categories ``cat`` permuted among the cases (:func:`~.null_draws.seeded_permutation_strata`; each keeps its
    location ``loc`` and day ``day``, a case with ``day < 0`` in no cell), counted per location, day and category
    and added up from the last day back into ``out[:, :, :, r]`` ((L, T + 1, K, R) int32, zero on entry; the last
    day row stays 0): :func:`category_cumulative` of the counts of :func:`~._categorical.permute_categories`,
    whose permutation of a seed it draws."""
    L, T1, K, R = out.shape
    n = cat.shape[0]
    B = 8  # replicates per task: a (location, day, category) row of the output is written 32 bytes at a time
    for b in prange((R + B - 1) // B):
        r0 = b * B
        nr = min(B, R - r0)
        cnt = np.zeros((L, T1, K, B), dtype=np.int32)
        for j in range(nr):
            perm = seeded_permutation_strata(words[r0 + j], n, members, bounds)
            for q in range(n):
                if day[q] >= 0:
                    cnt[loc[q], day[q], cat[perm[q]], j] += 1
        for z in range(L):
            for t in range(T1 - 3, -1, -1):
                for k in range(K):
                    for j in range(nr):
                        cnt[z, t, k, j] += cnt[z, t + 1, k, j]
            for t in range(T1):
                for k in range(K):
                    for j in range(nr):
                        out[z, t, k, r0 + j] = cnt[z, t, k, j]


def permuted_cumulative(loc, day, cat, K: int, L: int, T: int, seeds, strata=None) -> np.ndarray:
    """(L, T + 1, K, R) int32 the cases per location, day and category of the replicates whose seeds are ``seeds``
    (one per replicate, as :func:`~._categorical.permute_categories` takes them, which draws the same permutations),
    added from the last day back: the categories ``cat`` (codes 0..K-1) permuted among the cases, which keep their
    location ``loc`` and day ``day`` (of the T scanned; a case before them, ``day < 0``, takes part in the
    permutation but is in no cylinder); ``strata``: None or ``(members, bounds)`` of
    :func:`~.null_draws.strata_members`, to permute within them (:func:`_permuted_cumulative`)."""
    words = replicate_seed_words(seeds)
    out = np.zeros((L, T + 1, K, len(words)), dtype=np.int32)
    _permuted_cumulative(np.ascontiguousarray(loc, dtype=np.int64), np.ascontiguousarray(day, dtype=np.int64),
                         np.ascontiguousarray(cat, dtype=np.int64), np.ascontiguousarray(words, dtype=np.uint32),
                         *_strata_arrays(strata), out)
    return out


@njit(cache=True, parallel=True)
def _interval_best(offsets, neighbors, boundary, cum, t1s, t2s, tot, logs, ordinal, want_high, want_low, per_mv,
                   per_j):
    """For every centre i and interval a of the observed cases (``cum`` (L, T + 1, K): :func:`category_cumulative`):
    the maximizing value of the interval's best cylinder over the centre's circles, ``per_mv[i, a]``
    (:data:`~._categorical._NONE` when none has a case inside and one outside), and the circle entry where it ends,
    ``per_j[i, a]`` (-1), the first (smallest) of equal ones, as SaTScan's loop keeps it."""
    m = offsets.shape[0] - 1
    I = t1s.shape[0]
    K = tot.shape[0]
    C = np.int64(0)
    for k in range(K):
        C += tot[k]
    for q in prange(m * I):
        i = q // I
        a = q % I
        t1 = t1s[a]
        e = t2s[a] + 1
        c = np.zeros(K, dtype=np.int64)
        cR = np.empty(K, dtype=np.int64)
        dR = np.empty(K, dtype=np.int64)
        mv = _NONE
        at = np.int64(-1)
        for j in range(offsets[i], offsets[i + 1]):
            loc = neighbors[j]
            for k in range(K):
                c[k] += cum[loc, t1, k] - cum[loc, e, k]
            if boundary[j] == 0:  # inside a tie group: not a window end
                continue
            v = _window_value(c, tot, K, C, ordinal, want_high, want_low, logs, cR, dR)
            if v > mv:
                mv = v
                at = j
        per_mv[i, a] = mv
        per_j[i, a] = at


@njit(cache=True, parallel=True)
def _max_cylinders(offsets, neighbors, boundary, n_cum, cum, t1s, t2s, t_end_min, tot, logs, ll0, ordinal, want_high,
                   want_low, bound, margin, centres, floor, best_mv):
    """For the centres ``centres[q]`` and every replicate r (``cum`` (L, T + 1, K, R): the replicates' cases per
    location and category added from the end; ``n_cum`` (L, T + 1): all their cases, the same in every replicate):
    the largest maximizing value of the centre's cylinders if it is above ``floor[r]``, else ``floor[r]``, in
    ``best_mv[q, r]`` (``floor``: a value some cylinder of the replicate attains, or :data:`~._categorical._NONE`;
    with ``_NONE`` every centre's own best). The circle grows location by location, its cases per day added up
    from the end (the walk is made once, not once per interval); at every window end each interval's cylinder is
    the difference of two of its days.

    Five kinds of cylinder are not scored, each holding the cases of one scored elsewhere or unable to beat
    the replicate's best so far (``floor[r]`` or above), so the maxima are those of scoring every cylinder:

    * a window end whose cylinder holds the cases of the one of its interval scored last (a location without cases
      on the interval's days adds nothing);
    * a cylinder without cases on its interval's first day (it holds those of the interval one day shorter at
      the start), or, where the interval one day shorter at the end is scanned too (it ends on ``t_end_min`` or
      later: the intervals' longest grows by at most a day from one end day to the next, as in a surveillance's
      analyses), without cases on its last day;
    * a cylinder of W cases when ``bound[W]`` (:func:`window_bounds`: no window of W cases has a larger value) is
      not above any replicate's best so far;
    * for replicate r, a cylinder whose Pearson chi-square ``X2`` (of its 2 x K table of cases inside and outside
      by category) is at most the replicate's best so far less ``ll0``: the log likelihood ratio of either model
      is ``W KL(q || p) + (C - W) KL(q' || p)`` (q, q': the proportions inside and outside, p: overall, the
      ordinal model's never above the multinomial one's), and ``KL(q || p) <= chi2(q || p)`` adds up to ``X2``,
      which needs no logarithm (``margin`` for the rounding);
    * for replicate r of the ordinal model, a cylinder whose multinomial log likelihood (free probabilities,
      never below the order-restricted one) is not above the replicate's best so far: the pooling under the
      order restriction, most of an ordinal cylinder's cost, is left out.

    The multinomial log likelihood (the model's value, the ordinal one's bound) is summed in
    :func:`~._categorical._table_log_likelihood`'s order (so the same values bit for bit).
    """
    R = cum.shape[3]
    I = t1s.shape[0]
    K = tot.shape[0]
    C = np.int64(0)
    for k in range(K):
        C += tot[k]
    nb = bound.shape[0]
    # 1 / p_k = C / C_k of the categories with cases (the others add nothing to X2)
    inv_p = np.zeros(K)
    for k in range(K):
        if tot[k] > 0:
            inv_p[k] = C / tot[k]
    # the days a cylinder's cases are read at: from the earliest start to the day after the latest end (a
    # prospective analysis's few intervals read a few of the study period's days)
    d0 = t1s.min() if I else 0
    D = (t2s.max() + 2 - d0) if I else 0
    for q in prange(centres.shape[0]):
        i = centres[q]
        # the circle's cases per day (and category and replicate), added from the end as the circle grows: a
        # cylinder's cases are the difference of two of its rows (row t - d0 for day t)
        n_circle = np.zeros(D, dtype=np.int64)
        c_circle = np.zeros((D, K, R), dtype=np.int32)
        scored = np.full(I, -1, dtype=np.int64)  # per interval, the cases of the cylinder scored last
        w = np.empty(K, dtype=np.int64)
        cR = np.empty(K, dtype=np.int64)
        dR = np.empty(K, dtype=np.int64)
        top = floor.copy()
        # the chi-square each replicate's cylinder needs to be scored: its best so far less ll0 and the margin
        need = np.empty(R)
        for r in range(R):
            need[r] = top[r] - ll0 - margin
        lowest = top.min()  # the smallest of the replicates' bests
        x2 = np.empty(R)
        for j in range(offsets[i], offsets[i + 1]):
            loc = neighbors[j]
            if n_cum[loc, d0] != n_cum[loc, d0 + D - 1]:  # a location without cases on the read days adds nothing
                for t in range(D):
                    n_circle[t] += n_cum[loc, d0 + t]
                    for k in range(K):
                        for r in range(R):
                            c_circle[t, k, r] += cum[loc, d0 + t, k, r]
            if boundary[j] == 0:  # inside a tie group: not a window end
                continue
            for a in range(I):
                t1 = t1s[a] - d0
                t2 = t2s[a] - d0
                e = t2 + 1
                n = n_circle[t1] - n_circle[e]
                if n == scored[a] or n == 0 or n == C:
                    continue
                scored[a] = n
                if t1 < t2 and (n_circle[t1] == n_circle[t1 + 1]
                                or (t2 - 1 >= t_end_min - d0 and n_circle[t2] == n_circle[e])):
                    continue  # no case on the first (last) day: a shorter interval's cases
                if n < nb and bound[n] <= lowest:  # no replicate's best can be beaten by W = n cases
                    continue
                # X2 = sum_k (c_k - W p_k)^2 / p_k x C / (W (C - W)) of every replicate at once
                x2[:] = 0.0
                for k in range(K):
                    ek = n * tot[k] / C
                    ik = inv_p[k]
                    for r in range(R):
                        d = (c_circle[t1, k, r] - c_circle[e, k, r]) - ek
                        x2[r] += d * d * ik
                scale = C / (n * (C - n))
                lw = logs[n]
                lu = logs[C - n]
                changed = False
                for r in range(R):
                    if x2[r] * scale <= need[r]:
                        continue
                    # the multinomial log likelihood: _table_log_likelihood's terms, in its order (a category's
                    # share is exactly 0 without pooling; a 0 count adds 0)
                    v = 0.0
                    for k in range(K):
                        ck = np.int64(c_circle[t1, k, r]) - np.int64(c_circle[e, k, r])
                        w[k] = ck
                        tk = tot[k]
                        v += ck * (logs[ck] - lw)
                        v += (tk - ck) * (logs[tk - ck] - lu)
                    if ordinal:
                        if v + margin <= top[r]:
                            continue
                        v = _window_value(w, tot, K, C, ordinal, want_high, want_low, logs, cR, dR)
                    if v <= top[r]:
                        continue
                    top[r] = v
                    need[r] = v - ll0 - margin
                    changed = True
                if changed:
                    lowest = top.min()
        for r in range(R):
            best_mv[q, r] = top[r]


def _xlogx(x):
    """``x log x`` (0 at 0), elementwise."""
    x = np.asarray(x, dtype=np.float64)
    return np.where(x > 0, x * np.log(np.where(x > 0, x, 1.0)), 0.0)


def window_bounds(tot, ll0: float, largest: int = 256) -> np.ndarray:
    """(min(C, largest) + 1,) float64: for W = 0.. cases, a value no window of W cases exceeds (SaTScan's maximizing
    value, the log likelihood, of either model: the ordinal one's is at most the multinomial one's).

    The multinomial log likelihood ratio ``sum_k f_k(c_k) + xlogx(C) - xlogx(W) - xlogx(C - W)``, with
    ``f_k(x) = xlogx(x) + xlogx(C_k - x) - xlogx(C_k)`` convex and at most 0, is convex in the counts ``c`` (sum W,
    ``0 <= c_k <= C_k``), so its maximum is at a vertex of that polytope: every category full or empty but one,
    which holds the rest. The bound is that maximum over every vertex, plus ``ll0`` (the null log likelihood) and
    a margin for the rounding of the engines' arithmetic (1e-6, and 1e-12 of ``C log C``, whose size the log
    likelihood's terms have)."""
    tot = np.asarray(tot, dtype=np.int64)
    K, C = len(tot), int(tot.sum())
    top = min(C, largest)
    W = np.arange(top + 1)
    subset = np.array([[(s >> k) & 1 for k in range(K)] for s in range(1 << K)], dtype=np.int64)
    filled = subset @ tot  # the cases of every subset of full categories
    best = np.full(top + 1, -np.inf)
    for k in range(K):
        without = subset[:, k] == 0
        rest = W[None, :] - filled[without][:, None]  # category k holds the rest
        ok = (rest >= 0) & (rest <= tot[k])
        f = np.where(ok, _xlogx(np.clip(rest, 0, tot[k])) + _xlogx(tot[k] - np.clip(rest, 0, tot[k]))
                     - _xlogx(tot[k]), -np.inf)
        best = np.maximum(best, f.max(axis=0))
    return best + _xlogx(C) - _xlogx(W) - _xlogx(C - W) + ll0 + 1e-6 + 1e-12 * float(_xlogx(C))


#: :meth:`CategoricalCylinderEngine.pilot_then_rest` scans every this-many-th centre first, for a floor to the others' scores
PILOT_STRIDE = 16


@dataclasses.dataclass(frozen=True)
class CategoricalCylinderEngine(CategoryTotals):
    """One space-time ordinal or multinomial analysis's cylinders on the CPU: the circles (CSR ``offsets``,
    ``neighbors``, ``boundary``), the cases per location and day as cumulative counts from the end (``n_cum``
    (L, T + 1) int64), the intervals (``t1s``, ``t2s``, :func:`~.cpu_normal_space_time.intervals`), the cases per
    category ``tot`` (K,) and the order restriction (``ordinal``, ``want_high``, ``want_low``) of
    :class:`~._categorical.CategoricalEngine`."""

    offsets: np.ndarray
    neighbors: np.ndarray
    boundary: np.ndarray
    n_cum: np.ndarray
    t1s: np.ndarray
    t2s: np.ndarray
    tot: np.ndarray
    ordinal: bool
    want_high: bool
    want_low: bool

    @functools.cached_property
    def bounds(self) -> np.ndarray:
        """:func:`window_bounds` of the totals per category."""
        return window_bounds(self.tot, self.ll0)

    @property
    def margin(self) -> float:
        """What the engines' log likelihoods may differ by from the exact ones by rounding, and more: 1e-9 and
        1e-10 of the null log likelihood's size (the size of their terms)."""
        return 1e-9 + 1e-10 * abs(self.ll0)

    @property
    def t_end_min(self) -> int:
        """The first day an interval ends on (the engine's days)."""
        return int(self.t2s.min()) if len(self.t2s) else 0

    def _tot(self) -> np.ndarray:
        return np.ascontiguousarray(self.tot, dtype=np.int64)

    def interval_best(self, counts: np.ndarray) -> tuple:
        """For the observed cases per location, day and category ``counts`` (L, T, K): the (m, I) maximizing
        value of the best cylinder of every centre and interval and its circle entry (:func:`_interval_best`)."""
        cum = category_cumulative(counts)
        m, I = self.n_centres, len(self.t1s)
        per_mv = np.empty((m, I))
        per_j = np.empty((m, I), dtype=np.int64)
        _interval_best(self.offsets, self.neighbors, self.boundary, cum, self.t1s, self.t2s, self._tot(), self.logs,
                       bool(self.ordinal), bool(self.want_high), bool(self.want_low), per_mv, per_j)
        return per_mv, per_j

    def llr(self, mv: np.ndarray) -> np.ndarray:
        """The LLRs of maximizing values (0 where there is none; one host function for both engines)."""
        mv = np.asarray(mv, dtype=np.float64)
        return _statistics(np.ascontiguousarray(mv.reshape(-1, mv.shape[-1])), self.ll0).reshape(mv.shape)

    def best_mv(self, cum: np.ndarray, centres: np.ndarray | None = None, floor: np.ndarray | None = None) -> np.ndarray:
        """(m, R) the largest maximizing value of each centre's cylinders for the replicates' cumulative counts
        ``cum`` (L, T + 1, K, R) int32 (:func:`category_cumulative`; :func:`_max_cylinders`); ``centres``: those
        centres only (one row each); ``floor`` (R,): values the replicates' cylinders attain, which a centre's
        row holds where its best is not above them (default: every centre's own best)."""
        R = np.shape(cum)[3]
        centres = np.arange(self.n_centres, dtype=np.int64) if centres is None else np.asarray(centres, np.int64)
        floor = self.no_floor(R) if floor is None else np.ascontiguousarray(floor, dtype=np.float64)
        best = np.empty((len(centres), R))
        _max_cylinders(self.offsets, self.neighbors, self.boundary, self.n_cum, np.ascontiguousarray(cum, np.int32),
                       self.t1s, self.t2s, np.int64(self.t_end_min), self._tot(), self.logs, float(self.ll0),
                       bool(self.ordinal), bool(self.want_high), bool(self.want_low), self.bounds, self.margin,
                       centres, floor, best)
        return best

    def max_llr(self, cum: np.ndarray) -> np.ndarray:
        """(R,) the largest cylinder LLR of each replicate of the cumulative counts ``cum`` (as :meth:`best_mv`
        takes them; 0: none; :meth:`pilot_then_rest`)."""
        R = np.shape(cum)[3]
        return self.llr_of_maxima(self.pilot_then_rest(lambda c, f: self.best_mv(cum, c, f), R), R)

    @staticmethod
    def no_floor(R: int) -> np.ndarray:
        """(R,) the floor of none (:data:`~._categorical._NONE`): every centre's own best."""
        return np.full(R, _NONE)

    def pilot_then_rest(self, best_mv, R: int) -> np.ndarray:
        """(2, R) the replicates' largest window values over the centres, as two rows whose larger is the largest:
        ``best_mv(centres, floor)`` (an engine's ``best_mv`` of the replicates' counts) scans every
        ``PILOT_STRIDE``-th centre first, and then the others with the pilot's maxima as the floor their cylinders
        must beat to be scored (values the replicates attain, so the maxima are exact); one function for both
        engines."""
        pilot = np.zeros(self.n_centres, dtype=bool)
        pilot[::PILOT_STRIDE] = True
        floor = self.no_floor(R)
        if pilot.any():
            floor = best_mv(np.flatnonzero(pilot), floor).max(axis=0)
        rest = best_mv(np.flatnonzero(~pilot), floor).max(axis=0) if (~pilot).any() else floor
        return np.vstack([floor, rest])

    def llr_of_maxima(self, mv: np.ndarray, R: int) -> np.ndarray:
        """(R,) the LLR of each replicate's largest value over the centres' ``mv`` (m, R) (0: none; one host function
        for both engines)."""
        return self.llr(mv.max(axis=0) if mv.shape[0] else np.full(R, _NONE))
