"""The CPU engine of the space-time scans (Numba): cylinders of circles x time intervals.

A cylinder is a window of a centre's neighbour list (:mod:`.windows`) over the days ``t1..t2`` of
an interval of at most ``max_t`` days. :func:`cylinder_batch` scans the Poisson-type cylinders
(space-time permutation and discrete Poisson: expectations from the window's size and the days'
cumulative expectation ``dcum``) or the Bernoulli ones (cases among the persons of the cylinder)
in one loop, each centre's best cylinder for every replicate;
:class:`CpuSpaceTimeEngine` holds one analysis' constants. :func:`space_time_interval_best` gives
the observed data's best cylinder of every interval, for SaTScan's secondary clusters.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .cpu_pruning import _group_min
from .engine import null_loglik
from .llr import _bernoulli_terms, _llr, _poisson_llr

__all__ = ["cylinder_batch", "space_time_interval_best", "CpuSpaceTimeEngine"]


@njit(cache=True, inline="always")
def _add_day(acc, S, t1, G, gcmax):
    """``acc += S[t1]`` (a cylinder grows back by one day), and each group of ``G`` replicates'
    largest count after it into ``gcmax``, in the same pass."""
    R = acc.shape[0]
    for g in range(gcmax.shape[0]):
        cm = np.int32(0)
        for r in range(g * G, min(R, g * G + G)):
            acc[r] += S[t1, r]
            cm = max(cm, acc[r])
        gcmax[g] = cm


@njit(cache=True, inline="always")
def _cylinder_llr(klogk, c, C, a, b, n, N, Nf, persons):
    """``(llr, cf)`` of a cylinder with ``c`` cases: its LLR (Poisson-type: ``a, b`` the logs of mu and
    C - mu; Bernoulli, ``persons`` given: ``n`` persons, ``a`` the persons' part) and the count as it is
    compared with the cylinder's expectation (``c``; Bernoulli ``c N``, against ``C n``)."""
    if persons is None:
        return _poisson_llr(klogk, c, C, a, b), np.float64(c)
    return _bernoulli_terms(klogk, c, n, C, N) + a, np.float64(c) * Nf


@njit(cache=True, inline="always")
def _cylinder_top(klogk, c, C, a, b, n, N, Nf, e, mc, persons):
    """``(live, llr)``: whether ``c`` cases make a high-rate cylinder (above its expectation ``e``; the
    Bernoulli one also needs ``mc`` cases) and then its LLR (0 otherwise: the Bernoulli table is not
    read at counts that cannot be a window's); see :func:`_cylinder_llr` for the other arguments."""
    if persons is None:
        return c > e, _poisson_llr(klogk, c, C, a, b)
    above = np.float64(c) * Nf > e
    return above & (c >= mc), _bernoulli_terms(klogk, c, n, C, N) + a if above else 0.0


@njit(cache=True, inline="always")
def _group_max_diff(Q, k2, k1, r0, r1):
    """The largest ``Q[k2, r] - Q[k1, r]`` over ``r0 <= r < r1`` (a group's largest count)."""
    cm = np.int32(0)
    for r in range(r0, r1):
        cm = max(cm, Q[k2, r] - Q[k1, r])
    return cm


#: replicates per group of the cylinders' skip test: a group's test (its bound, then its largest count)
#: costs the same whatever its size, and with the evaluation limited to the counts that can matter
#: (below), larger groups than the spatial kernels' cost less in all
CYLINDER_GROUP = 128
#: steps down from a group's largest count in a cylinder towards the count below which no LLR matters,
#: before every replicate of the group is evaluated there
_STEPS = 4


@njit(cache=True, error_model="numpy")
def _cylinders_day_bounds(S, P, persons, mu_u, la_u, lb_u, didx, klogk, C, N, l0, mc, max_t, t_lo, t_end_min, j, m,
                          arg, gmin, Q, gq, W2, W1, gpass):
    """The high-rate cylinders of circle entry ``j`` (counts ``S`` (T, R) per day and replicate) with
    the O(1) group bounds of :func:`_scan_cylinders` (``day_bounds``); updates ``m``, ``arg`` and
    ``gmin`` exactly as its day-by-day loop does. ``mu_u``, ``la_u``, ``lb_u``, ``didx``: the circle's
    expectations and their logs per distinct interval (see :func:`_interval_logs`). ``Q``, ``gq``,
    ``W2``, ``W1``: work arrays."""
    T = S.shape[0]
    R = S.shape[1]
    G = CYLINDER_GROUP
    ng = gmin.shape[0]
    D = T - t_lo
    Cf = np.float64(C)
    Nf = np.float64(N)
    for k in range(D):
        t = t_lo + k
        for r in range(R):
            Q[k + 1, r] = Q[k, r] + S[t, r]
        for g in range(ng):
            cm = np.int32(0)
            for r in range(g * G, min(R, g * G + G)):
                cm = max(cm, S[t, r])
            gq[k + 1, g] = gq[k, g] + cm
    for k in range(D):
        k0 = max(0, k - max_t + 1)
        k3 = min(D, k + max_t)
        for g in range(ng):
            r0 = g * G
            r1 = min(R, r0 + G)
            W2[k, g] = _group_max_diff(Q, k + 1, k0, r0, r1)
            W1[k, g] = _group_max_diff(Q, k3, k, r0, r1)
    for t2 in range(t_end_min, T):
        n = np.int64(0)
        for t1 in range(t2, max(-1, t2 - max_t), -1):
            if persons is not None:
                n += P[t1]
            if persons is None:
                u = didx[t2, t2 - t1]
                e = mu_u[u]  # mu
                if not (e > 0.0 and e < Cf):
                    continue
                a = la_u[u]
                b = lb_u[u]
                cap = C
            else:
                if n == 0 or n == N:
                    continue  # no persons (or all of them): LLR 0
                a = -(klogk[n] + klogk[N - n]) - l0
                b = 0.0
                e = np.float64(C) * np.float64(n)  # C n, compared with c N
                cap = min(C, n)
            k1 = t1 - t_lo
            k2 = t2 - t_lo + 1
            code = (j * T + t1) * T + t2
            # every group's bound at once, branch-free (a loop over the groups that vectorises): its
            # largest count's upper bound and the LLR there against the group's smallest maximum
            n_pass = 0
            for g in range(ng):
                ub = min(gq[k2, g] - gq[k1, g], np.int64(min(W2[k2 - 1, g], W1[k1, g])))
                ub = min(ub, np.int64(cap))
                live, top = _cylinder_top(klogk, ub, C, a, b, n, N, Nf, e, mc, persons)
                go = live & (top * (1.0 + 1e-12) + 1e-12 > gmin[g])
                gpass[g] = go
                n_pass += go
            if n_pass == 0:
                continue
            for g in range(ng):
                if not gpass[g]:
                    continue
                r0 = g * G
                r1 = min(R, r0 + G)
                # the bound passed: the group's exact largest count, then (when it could matter) the
                # count h below which no LLR beats the group's smallest maximum, a few steps down from it
                h = np.int64(_group_max_diff(Q, k2, k1, r0, r1))
                sparse = False
                for step in range(_STEPS + 1):
                    live, top = _cylinder_top(klogk, h, C, a, b, n, N, Nf, e, mc, persons)
                    # above the expectation the LLR increases with c (see _scan_cylinders)
                    if not live or top * (1.0 + 1e-12) + 1e-12 <= gmin[g]:
                        sparse = True  # no count <= h matters
                        break
                    h -= 1
                if step == 0:
                    continue  # not even the largest count
                if not sparse:
                    h = -1  # every count may matter
                for r in range(r0, r1):
                    c = Q[k2, r] - Q[k1, r]
                    if c <= h:
                        continue
                    llr, cf = _cylinder_llr(klogk, c, C, a, b, n, N, Nf, persons)
                    v = llr if (cf > e) & (c >= mc) else 0.0
                    if v > m[r]:
                        m[r] = v
                        arg[r] = code
                gmin[g] = _group_min(m, r0, r1)


@njit(cache=True, inline="always")
def _interval_logs(cz, du, Cf, mu_u, la_u, lb_u):
    """A circle's expectations ``mu_u = cz du / C`` of the distinct interval sums ``du`` (the Poisson-type
    cylinders), with ``log mu`` and ``log(C - mu)`` where ``0 < mu < C``: every cylinder whose days sum to
    the same ``du`` has the same mu, bit for bit, so its logarithms are taken once per circle instead of
    once per cylinder."""
    for u in range(du.shape[0]):
        mu = cz * du[u] / Cf
        mu_u[u] = mu
        if mu > 0.0 and mu < Cf:
            la_u[u] = np.log(mu)
            lb_u[u] = np.log(Cf - mu)


def _interval_sums(dcum, T, max_t):
    """``(du, didx)``: the distinct values ``du`` of ``dcum[t2 + 1] - dcum[t1]`` over the intervals of at most
    ``max_t`` of the ``T`` days, and ``didx[t2, t2 - t1]`` the index of each interval's value (0 where
    ``t1 < 0``). The same subtraction as the kernels', so the same bits."""
    D = max(1, min(int(max_t), T))
    t2 = np.arange(T)[:, None]
    t1 = t2 - np.arange(D)[None, :]
    delta = np.where(t1 >= 0, dcum[t2 + 1] - dcum[np.maximum(t1, 0)], 0.0)
    du, didx = np.unique(delta, return_inverse=True)
    return np.ascontiguousarray(du, dtype=np.float64), didx.reshape(T, D).astype(np.int32)


@njit(cache=True, parallel=True, error_model="numpy")
def _scan_cylinders(offsets, neighbors, wsize, boundary, cases, persons, du, didx, klogk, n_cases, n_total, l0,
                    max_t, t_end_min, min_cases, want_high, want_low, best, best_arg, want_arg, centre_ids, floor,
                    day_bounds):
    """Best cylinder LLR per centre over the cylinders (circle x [t1, t2]), one loop for both kinds
    of cylinder; ``persons`` selects the LLR and is resolved when the kernel is compiled (Numba
    prunes the ``persons is None`` branches: two specialisations, no test in the loops).

    ``cases`` (L, T, R): counts per location, day and replicate.

    * ``persons`` None, the Poisson-type cylinders (space-time permutation, discrete Poisson):
      ``wsize[j]`` is the circle's cases over the whole period (C_Z; space-time Poisson: its
      expected cases E_Z) and ``dcum`` the prefix sums of the cases per day (C_d; space-time
      Poisson: C t / T), given as ``du[didx[t2, t2 - t1]] = dcum[t2 + 1] - dcum[t1]`` (see
      :func:`_interval_logs`). A cylinder has ``mu = C_Z x sum_{d in [t1, t2]} C_d / C`` expected
      cases and the Poisson LLR ``c log(c/mu) + (C-c) log((C-c)/(C-mu))`` (Kulldorff et al. 2005;
      Kulldorff 2001), high when ``c > mu``.
    * ``persons`` (L, T) int64, the space-time Bernoulli model: cases + controls per location and
      day (the same in every replicate: the null relabels the cases among the persons). A cylinder
      with ``c`` cases among ``n`` persons (``C`` of ``N`` in all, ``l0`` the null log likelihood)
      has the Bernoulli LLR of the spatial scan (same additions), high when ``c N > C n``.

    High-rate cylinders need ``min_cases`` cases. Intervals end at ``t2 >= t_end_min``
    (prospective: the last day only) and last at most ``max_t`` days. ``best_arg`` encodes the
    cylinder as ``(j * T + t1) * T + t2``.

    Only the centres ``centre_ids`` are scanned (row ``ii`` of ``best`` is centre ``centre_ids[ii]``),
    and every replicate's maximum starts at ``floor[r]`` instead of 0: ``best[ii, r]`` is then
    max(floor[r], the centre's best), which leaves the maximum over the centres unchanged when
    ``floor`` holds LLRs of real cylinders (a pilot's maxima) and lets the high-rate test below skip
    most cylinders from the first centre on.  The test runs per group of ``CYLINDER_GROUP``
    replicates (the group's largest count against its smallest maximum), so one replicate with many
    cases does not keep the whole batch from being skipped.

    With ``day_bounds`` (high rates only) a group's largest count is not summed day by day for
    every cylinder: the window's counts per replicate are cumulated over the days once
    (``Q[t, r]``, a cylinder's count is ``Q[t2+1] - Q[t1]``), and the group's largest count is
    first bounded in O(1) by the smaller of (a) the sum over the cylinder's days of the group's
    largest daily count and (b) the group's largest count over the longest interval ending at
    ``t2`` or starting at ``t1`` that the cylinder lies in (counts are never negative). Only when
    that bound passes the test above is the group's exact largest count taken, and then the
    count below which no LLR can beat the group's smallest maximum (a few steps down from the
    largest): only the replicates above it have their LLRs evaluated. The bounds of all the groups
    are taken first, in one branch-free loop. The LLRs evaluated, and so every maximum and the
    cylinder where it is first attained, are those of the day-by-day loop.
    """
    T = cases.shape[1]
    R = cases.shape[2]
    C = n_cases
    Cf = np.float64(C)
    N = n_total
    Nf = np.float64(N)
    mc = np.int32(min_cases)
    G = CYLINDER_GROUP
    ng = (R + G - 1) // G
    t_lo = max(0, t_end_min - max_t + 1)
    bounded = day_bounds and not want_low
    for ii in prange(centre_ids.shape[0]):
        i = centre_ids[ii]
        D = T - t_lo if bounded else 0
        Q = np.zeros((D + 1, R), dtype=np.int32)  # day_bounds: the window's counts cumulated over days
        gq = np.zeros((D + 1, ng), dtype=np.int64)  # ... and each group's largest daily counts cumulated
        W2 = np.zeros((D, ng), dtype=np.int32)  # group's largest count over the longest cylinder ending at t2
        W1 = np.zeros((D, ng), dtype=np.int32)  # ... and over the longest starting at t1
        S = np.zeros((T, R), dtype=np.int32)
        P = np.zeros(T, dtype=np.int64)
        acc = np.zeros(R, dtype=np.int32)
        m = floor.copy()
        arg = np.full(R, -1, dtype=np.int64)
        gmin = np.empty(ng)  # the smallest maximum so far of each group of replicates
        gcmax = np.empty(ng, dtype=np.int32)  # the largest count of each group in the cylinder
        gpass = np.empty(ng, dtype=np.bool_)  # day_bounds: whether a group's bound could change a maximum
        mu_u = np.empty(du.shape[0])  # the circle's mu of each distinct interval sum, and their logs
        la_u = np.empty(du.shape[0])
        lb_u = np.empty(du.shape[0])
        for g in range(ng):
            gmin[g] = _group_min(m, g * G, min(R, g * G + G))
        for j in range(offsets[i], offsets[i + 1]):
            blk = cases[neighbors[j]]
            # days before t_lo are in no cylinder (prospective scans: only the last max_t days)
            if persons is not None:
                prow = persons[neighbors[j]]
                for t in range(t_lo, T):
                    P[t] += prow[t]
            for t in range(t_lo, T):
                for r in range(R):
                    S[t, r] += blk[t, r]
            if boundary[j] == 0:
                continue
            cz = wsize[j]
            if persons is None:
                _interval_logs(cz, du, Cf, mu_u, la_u, lb_u)
            if bounded:
                _cylinders_day_bounds(S, P, persons, mu_u, la_u, lb_u, didx, klogk, C, N, l0, mc, max_t, t_lo,
                                      t_end_min, j, m, arg, gmin, Q, gq, W2, W1, gpass)
                continue
            for t2 in range(t_end_min, T):
                for r in range(R):
                    acc[r] = 0
                n = np.int64(0)
                for t1 in range(t2, max(-1, t2 - max_t), -1):
                    if persons is not None:
                        n += P[t1]
                    _add_day(acc, S, t1, G, gcmax)
                    # the cylinder's constants: a, b and the expectation e a count is compared with
                    if persons is None:
                        u = didx[t2, t2 - t1]
                        e = mu_u[u]  # mu
                        if not (e > 0.0 and e < Cf):
                            continue
                        a = la_u[u]
                        b = lb_u[u]
                    else:
                        if n == 0 or n == N:
                            continue  # no persons (or all of them): LLR 0
                        a = -(klogk[n] + klogk[N - n]) - l0
                        b = 0.0
                        e = np.float64(C) * np.float64(n)  # C n, compared with c N
                    code = (j * T + t1) * T + t2
                    for g in range(ng):
                        r0 = g * G
                        r1 = min(R, r0 + G)
                        if not want_low:
                            # high rates only: above the expectation the LLR increases with c, so no
                            # replicate of the group has a larger LLR here than its largest count c_max
                            # would give; when that cannot beat the group's smallest maximum, no maximum
                            # of the group changes (the margin keeps rounding from hiding a larger LLR)
                            c_max = gcmax[g]
                            if persons is None:
                                if c_max <= e:
                                    continue
                                top = _poisson_llr(klogk, c_max, C, a, b)
                            else:
                                if np.float64(c_max) * Nf <= e or c_max < mc:
                                    continue
                                top = _bernoulli_terms(klogk, c_max, n, C, N) + a
                            if top * (1.0 + 1e-12) + 1e-12 <= gmin[g]:
                                continue
                        for r in range(r0, r1):
                            c = acc[r]
                            llr, cf = _cylinder_llr(klogk, c, C, a, b, n, N, Nf, persons)
                            ok = (want_high & (cf > e) & (c >= mc)) | (want_low & (cf < e))
                            v = llr if ok else 0.0
                            better = v > m[r]
                            arg[r] = code if better else arg[r]
                            m[r] = v if better else m[r]
                        gmin[g] = _group_min(m, r0, r1)
        for r in range(R):
            best[ii, r] = m[r]
            if want_arg:
                best_arg[ii, r] = arg[r]


def cylinder_batch(windows, cases, persons, dcum, klogk, n_cases, n_total, max_t, t_end_min, min_cases, direction,
                   want_arg=False, centre_ids=None, floor=None, day_bounds=True):
    """(m, R) best cylinder LLR per centre [and its code] for ``cases`` (L, T, R) (see
    :func:`_scan_cylinders`): ``persons`` None, the Poisson-type cylinders (``windows[2]`` and ``dcum``
    give the expectations); ``persons`` (L, T), the space-time Bernoulli ones (``n_total`` persons in
    all; ``dcum`` not read). With ``centre_ids`` only those centres (rows in that order), with
    ``floor`` (R,) every value at least ``floor``. ``day_bounds`` False: the day-by-day loop only
    (same results; kept to compare)."""
    offsets, neighbors, wsize, boundary = windows
    cases = np.ascontiguousarray(cases, dtype=np.int32)
    R = cases.shape[2]
    ids = np.arange(offsets.shape[0] - 1, dtype=np.int64) if centre_ids is None else \
        np.ascontiguousarray(centre_ids, dtype=np.int64)
    fl = np.zeros(R) if floor is None else np.ascontiguousarray(floor, dtype=np.float64)
    best = np.empty((len(ids), R), dtype=np.float64)
    arg = np.empty((len(ids), R) if want_arg else (1, 1), dtype=np.int64)
    if persons is None:
        n_total, l0 = n_cases, 0.0
        du, didx = _interval_sums(np.asarray(dcum, dtype=np.float64), cases.shape[1], max_t)
    else:
        persons = np.ascontiguousarray(persons, dtype=np.int64)
        l0 = null_loglik(klogk, n_cases, n_total)
        du, didx = np.zeros(0), np.zeros((1, 1), dtype=np.int32)
    _scan_cylinders(offsets, neighbors, np.ascontiguousarray(wsize, dtype=np.float64), boundary, cases, persons,
                    du, didx, klogk, np.int64(n_cases), np.int64(n_total), l0,
                    np.int64(max_t), np.int64(t_end_min), np.int64(min_cases), direction in ("high", "both"),
                    direction in ("low", "both"), best, arg, bool(want_arg), ids, fl, bool(day_bounds))
    return best, (arg if want_arg else None)


@njit(cache=True, parallel=True, error_model="numpy")
def _space_time_interval_best(offsets, neighbors, wsize, boundary, cases, persons, dcum, klogk, n_cases, n_total,
                              l0, max_t, min_cases, want_high, want_low, bern, lo, val, code):
    """Observed data only: for centres ``lo + k`` the best cylinder LLR of every interval ``[t1, t2]``
    over the circles, ``val[k, t2, t2 - t1]`` (0 when none) and its circle entry ``code[k, t2, t2 - t1]``
    (-1). The LLRs, the rate tests and the order (circle entry j ascending; the first of equal LLRs
    kept) are those of :func:`_scan_cylinders` (``bern`` False: ``persons`` None; ``bern`` True:
    the Bernoulli cylinders) for one replicate."""
    K = val.shape[0]
    T = cases.shape[1]
    C = n_cases
    Cf = np.float64(C)
    N = n_total
    Nf = np.float64(N)
    mc = np.int64(min_cases)
    for k in prange(K):
        i = lo + k
        S = np.zeros(T, dtype=np.int64)
        P = np.zeros(T, dtype=np.int64)
        for j in range(offsets[i], offsets[i + 1]):
            for t in range(T):
                S[t] += cases[neighbors[j], t]
                if bern:
                    P[t] += persons[neighbors[j], t]
            if boundary[j] == 0:
                continue
            for t2 in range(T):
                c = np.int64(0)
                n = np.int64(0)
                for t1 in range(t2, max(-1, t2 - max_t), -1):
                    c += S[t1]
                    if bern:
                        n += P[t1]
                        if n == 0 or n == N:
                            continue
                        lhs = np.float64(c) * Nf
                        rhs = Cf * np.float64(n)
                        if not ((want_high and lhs > rhs and c >= mc) or (want_low and lhs < rhs)):
                            continue
                        llr = _llr(klogk, c, n, C, N, l0)
                    else:
                        mu = wsize[j] * (dcum[t2 + 1] - dcum[t1]) / Cf
                        if not (mu > 0.0 and mu < Cf):
                            continue
                        cf = np.float64(c)
                        if not ((want_high and cf > mu and c >= mc) or (want_low and cf < mu)):
                            continue
                        llr = _poisson_llr(klogk, c, C, np.log(mu), np.log(Cf - mu))
                    if llr > val[k, t2, t2 - t1]:
                        val[k, t2, t2 - t1] = llr
                        code[k, t2, t2 - t1] = j


def space_time_interval_best(windows, cases, persons, dcum, klogk, n_cases, n_total, max_t, min_cases, direction,
                             lo, hi):
    """(hi - lo, T, max_t) best LLR per interval of centres ``lo..hi-1`` and the circle entry of each
    (see :func:`_space_time_interval_best`); ``persons`` None: the Poisson-type models."""
    offsets, neighbors, wsize, boundary = windows
    T = cases.shape[1]
    mt = min(int(max_t), T)
    val = np.zeros((hi - lo, T, mt), dtype=np.float64)
    code = np.full((hi - lo, T, mt), -1, dtype=np.int64)
    bern = persons is not None
    _space_time_interval_best(offsets, neighbors, np.ascontiguousarray(wsize, dtype=np.float64), boundary,
                              np.ascontiguousarray(cases, dtype=np.int64),
                              np.ascontiguousarray(persons if bern else np.zeros((1, 1)), dtype=np.int64),
                              np.ascontiguousarray(dcum, dtype=np.float64), klogk, np.int64(n_cases),
                              np.int64(n_total), null_loglik(klogk, n_cases, n_total) if bern else 0.0,
                              np.int64(mt), np.int64(min_cases), direction in ("high", "both"),
                              direction in ("low", "both"), bern, np.int64(lo), val, code)
    return val, code


class CpuSpaceTimeEngine:
    """The space-time cylinders on the CPU (Numba): :meth:`batch` is :func:`cylinder_batch` with the
    analysis' constants. Picklable (plain arrays)."""

    backend = "cpu"
    #: False: the cylinders' day-by-day loop without the O(1) group bounds (same results)
    day_bounds = True

    def __init__(self, windows, dcum, klogk, n_cases, max_t, t_end_min, min_cases, direction, persons=None):
        self.n_cases = int(n_cases)
        self.args = (windows, dcum, klogk, n_cases, max_t, t_end_min, min_cases, direction)
        # space-time Bernoulli: persons (L, T) per location and day, N = their total
        self.persons = None if persons is None else np.ascontiguousarray(persons, dtype=np.int64)

    def batch(self, cases, want_arg=False, centre_ids=None, floor=None):
        """(m, R) best cylinder LLR per centre [and its code] for ``cases`` (L, T, R) (``centre_ids``,
        ``floor``: see :func:`cylinder_batch`)."""
        windows, dcum, klogk, n_cases, max_t, t_end_min, min_cases, direction = self.args
        n_total = n_cases if self.persons is None else int(self.persons.sum())
        return cylinder_batch(windows, cases, self.persons, dcum, klogk, n_cases, n_total, max_t, t_end_min, min_cases,
                              direction, want_arg=want_arg, centre_ids=centre_ids, floor=floor,
                              day_bounds=self.day_bounds)

    #: every PILOT_STRIDE-th centre is scanned first; its maxima are the floor of the full pass
    PILOT_STRIDE = 16

    def max_llr(self, cases):
        """(R,) the largest cylinder LLR of each replicate (0 when none): a pilot over every
        :attr:`PILOT_STRIDE`-th centre gives each replicate a real cylinder's LLR, which then
        starts every centre's maximum (``floor``) so that the high-rate test skips most
        cylinders; the result equals ``batch(cases)[0].max(axis=0)``."""
        R = cases.shape[2]
        m = self.args[0][0].shape[0] - 1
        if m == 0:
            return np.zeros(R)
        floor = None
        if m >= 4 * self.PILOT_STRIDE:
            floor = self.batch(cases, centre_ids=np.arange(0, m, self.PILOT_STRIDE))[0].max(axis=0)
        return self.batch(cases, floor=floor)[0].max(axis=0)
