"""The Monte Carlo kernel of the space-time exponential scan on the CPU (Numba): cylinders bounded by deaths.

In the exponential model's replicates both a cylinder's deaths and its expectation change (the (time,
censoring) pairs are permuted among the patients, :mod:`.exponential_space_time`), so the cylinders of every
replicate would be scanned day by day with their own expectations
(:meth:`~.cpu_space_time.CpuSpaceTimeEngine.with_expected`). For high rates far fewer cylinders decide the
maximum: a cylinder [t1, t2] with c deaths and expectation mu > 0 keeps its c deaths when it is shrunk to its
first and last death days, and its expectation can only fall (every calibrated time is positive), while the
high-rate LLR ``c log(c/mu) + (C-c) log((C-c)/(C-mu))`` falls with mu where c > mu
(d/dmu = (C-c)/(C-mu) - c/mu < 0). The shrunk cylinder is no longer and, where its end may not move below
``t_end_min`` (prospective scans, surveillance), it ends there instead: every replicate's maximum is attained
by a cylinder that starts on a death day and ends on one or on ``t_end_min``, which are all this kernel
scores: O(D^2) cylinders per circle for D days with deaths in it, not O(T max_t).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .llr import _poisson_llr
from .null_draws import _strata_arrays, seeded_permutation_strata

__all__ = ["max_llr_death_days"]


@njit(cache=True, inline="always")
def _circle_sums(cm, cnt, Ccum, ccum, days, T):
    """The prefix sums over the days of a circle's expectations ``cm`` and deaths ``cnt`` (``Ccum[t]``,
    ``ccum[t]``: before day t) and its days with deaths in ``days``; returns their number."""
    s = 0.0
    k = np.int64(0)
    nd = 0
    for t in range(T):
        Ccum[t] = s
        ccum[t] = k
        s += cm[t]
        k += cnt[t]
        if cnt[t] > 0:
            days[nd] = t
            nd += 1
    Ccum[T] = s
    ccum[T] = k
    return nd


@njit(cache=True, inline="always")
def _high_llr(klogk, c, C, Cf, e_mu):
    """The Poisson LLR of ``c`` deaths where ``e_mu`` are expected when that is a high rate (0 otherwise, and where
    ``e_mu`` is 0 or the total)."""
    if not (np.float64(c) > e_mu and e_mu > 0.0 and e_mu < Cf):
        return 0.0
    return _poisson_llr(klogk, c, C, np.log(e_mu), np.log(Cf - e_mu))


@njit(cache=True, parallel=True, error_model="numpy")
def _max_llr_death_days(offsets, neighbors, boundary, loc_start, day, mu, dead, words, klogk, C, T, cut_end, cut_len,
                        min_cases, members, bounds, whole, out):
    """``out[r]``: the largest high-rate cylinder LLR of replicate r (0: none) over the cylinders ending on day
    ``cut_end[k]`` or later with at most ``cut_len[k]`` days, for every k. The patients (stationary: each keeps
    its location and ``day``, sorted by location, location l's ``loc_start[l]:loc_start[l + 1]``) receive the
    (``mu``, ``dead``) pairs of the permutation :func:`~.null_draws.seeded_permutation_strata` draws from the
    replicate's seed ``words[r]`` (within the strata ``members``, ``bounds``; none where empty), as
    :func:`~.null_draws.permute_measurements` does. With ``whole`` every circle over the whole study period too
    (the purely spatial clusters)."""
    R = words.shape[0]
    n = mu.shape[0]
    nc = offsets.shape[0] - 1
    Cf = np.float64(C)
    for r in prange(R):
        perm = seeded_permutation_strata(words[r], n, members, bounds)
        pm = np.empty(n)
        pd = np.empty(n, dtype=np.int64)
        for q in range(n):
            pm[q] = mu[perm[q]]
            pd[q] = dead[perm[q]]
        cm = np.zeros(T)
        cnt = np.zeros(T, dtype=np.int64)
        Ccum = np.zeros(T + 1)
        ccum = np.zeros(T + 1, dtype=np.int64)
        days = np.empty(T + 1, dtype=np.int64)
        best = 0.0
        for i in range(nc):
            cm[:] = 0.0
            cnt[:] = 0
            for j in range(offsets[i], offsets[i + 1]):
                loc = neighbors[j]
                for q in range(loc_start[loc], loc_start[loc + 1]):
                    cm[day[q]] += pm[q]
                    cnt[day[q]] += pd[q]
                if boundary[j] == 0:
                    continue
                nd = _circle_sums(cm, cnt, Ccum, ccum, days, T)
                if ccum[T] < min_cases:
                    continue
                if whole:
                    best = max(best, _high_llr(klogk, ccum[T], C, Cf, Ccum[T]))
                for k in range(cut_end.shape[0]):
                    e = cut_end[k]
                    m = cut_len[k]
                    first = 0  # the first death day after e (the ends: e, then those)
                    while first < nd and days[first] <= e:
                        first += 1
                    for bi in range(first - 1, nd):
                        b = e if bi == first - 1 else days[bi]
                        # the starts: the death days up to b, latest first, while the cylinder has at most m days
                        ai = bi if bi >= first else first - 1
                        while ai >= 0 and b - days[ai] < m:
                            a = days[ai]
                            ai -= 1
                            c = ccum[b + 1] - ccum[a]
                            if c >= min_cases:
                                best = max(best, _high_llr(klogk, c, C, Cf, Ccum[b + 1] - Ccum[a]))
        out[r] = best


def max_llr_death_days(windows, loc, day, mu, dead, L: int, T: int, words, klogk, n_cases: int, cuts, min_cases: int,
                       strata=None, whole_period=False):
    """(R,) the largest high-rate cylinder LLR of each replicate of the space-time exponential model's null
    (the (``mu``, ``dead``) pairs permuted among the patients, one replicate per seed word of ``words``),
    over the cylinders of ``windows`` and ``cuts`` ((first end day, longest cylinder) pairs; each replicate's
    maximum is over all of them), from the cylinders bounded by death days (see the module notes); equal,
    up to the rounding of the sums, to the day-by-day cylinders' with each replicate's expectations.
    ``loc``, ``day`` (n,): each patient's location and day, sorted by location; ``strata``: None, or the
    patients' strata (:func:`~.null_draws.strata_members`) within which the pairs are permuted (SaTScan's
    weekly adjustment: the weekdays); ``whole_period``: every circle over the whole study period too."""
    offsets, neighbors, _, boundary = windows
    loc = np.asarray(loc, dtype=np.int64)
    if len(loc) > 1 and (np.diff(loc) < 0).any():
        raise ValueError("the patients must be sorted by location")
    loc_start = np.searchsorted(loc, np.arange(L + 1)).astype(np.int64)
    cut_end = np.array([int(e) for e, _ in cuts], dtype=np.int64)
    cut_len = np.array([int(m) for _, m in cuts], dtype=np.int64)
    out = np.zeros(len(words))
    _max_llr_death_days(offsets, neighbors, boundary, loc_start, np.ascontiguousarray(day, dtype=np.int64),
                        np.ascontiguousarray(mu, dtype=np.float64), np.ascontiguousarray(dead, dtype=np.int64),
                        np.ascontiguousarray(words, dtype=np.uint32), klogk, np.int64(n_cases), np.int64(T), cut_end,
                        cut_len, np.int64(min_cases), *_strata_arrays(strata), bool(whole_period), out)
    return out
