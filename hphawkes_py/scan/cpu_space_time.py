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

__all__ = ["cylinder_batch", "space_time_interval_best", "overlap_candidates", "CpuSpaceTimeEngine"]


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
def _window_totals(strata, klogk, t1, t2, C, N, l0):
    """``(C, N, Nf, l0)`` a cylinder over the days ``t1..t2`` is scored against: the whole study's cases,
    persons and null log likelihood, or, time-stratified (``strata`` the prefix sums of the cases and the
    persons per day, SaTScan's ``TimeTrendAdjustmentType=4``), those of its own days over all locations.
    ``strata`` None is resolved when the kernel is compiled: no test in the loops."""
    if strata is None:
        return C, N, np.float64(N), l0
    dc, dp = strata
    Cw = dc[t2 + 1] - dc[t1]
    Nw = dp[t2 + 1] - dp[t1]
    return Cw, Nw, np.float64(Nw), klogk[Cw] + klogk[Nw - Cw] - klogk[Nw]


@njit(cache=True, inline="always")
def _cylinder_llr(klogk, c, C, a, b, n, N, Nf, persons):
    """``(llr, cf)`` of a cylinder with ``c`` cases: its LLR (Poisson-type: ``a, b`` the logs of mu and
    C - mu; Bernoulli, ``persons`` given: ``n`` persons, ``a`` the persons' part) and the count as it is
    compared with the cylinder's expectation (``c``; Bernoulli ``c N``, against ``C n``)."""
    if persons is None:
        return _poisson_llr(klogk, c, C, a, b), np.float64(c)
    return _bernoulli_terms(klogk, c, n, C, N) + a, np.float64(c) * Nf


@njit(cache=True, inline="always")
def _cylinder_constants(klogk, didx, mu_u, la_u, lb_u, t1, t2, n, C, N, l0, persons, ef, emu):
    """``(ok, a, b, e)`` of the cylinder ``[t1, t2]``: the terms ``a, b`` of its LLR and the expectation ``e`` a
    count is compared with (see :func:`_cylinder_llr`; Poisson-type: from the circle's tables of
    :func:`_interval_logs`, or, with expectations per location and day ``emu``, the cylinder's sum of them
    ``ef``; Bernoulli: from its ``n`` persons). ``ok`` False: no cylinder to scan
    (Poisson-type: mu not in (0, C); Bernoulli: no persons, or all of them, LLR 0). ``C``, ``N``, ``l0``: the
    totals it is scored against (:func:`_window_totals`)."""
    if emu is not None:
        Cf = np.float64(C)
        if ef > 0.0 and ef < Cf:
            return True, np.log(ef), np.log(Cf - ef), ef
        return False, 0.0, 0.0, ef
    if persons is None:
        u = didx[t2, t2 - t1]
        e = mu_u[u]
        return (e > 0.0) & (e < np.float64(C)), la_u[u], lb_u[u], e
    if n == 0 or n == N:
        return False, 0.0, 0.0, 0.0
    return True, -(klogk[n] + klogk[N - n]) - l0, 0.0, np.float64(C) * np.float64(n)  # e = C n, against c N


@njit(cache=True, inline="always")
def _cylinder_top(klogk, c, C, a, b, n, N, Nf, e, mc, persons):
    """``(live, llr)``: whether ``c`` cases make a high-rate cylinder (above its expectation ``e``; the
    Bernoulli one also needs ``mc`` cases) and then its LLR (0 otherwise: the Bernoulli table is not
    read at counts that cannot be a window's); see :func:`_cylinder_llr` for the other arguments."""
    if persons is None:
        return c > e, _poisson_llr(klogk, c, C, a, b)
    above = np.float64(c) * Nf > e
    return above & (c >= mc), _bernoulli_terms(klogk, c, n, C, N) + a if above else 0.0


#: replicates per group of the cylinders' skip test: a group's test (its largest count's LLR against its
#: smallest maximum) costs the same whatever its size, and with the evaluation limited to the counts that
#: can matter (below), larger groups than the spatial kernels' cost less in all
CYLINDER_GROUP = 128
#: steps down from a group's largest count in a cylinder towards the count below which no LLR matters,
#: before every replicate of the group is evaluated there
_STEPS = 4
#: the largest total of cases whose cylinder counts the kernels hold in 16 bits (a cylinder's count is at
#: most the total), which halves the width of the running sums
INT16_CASES = 32767


@njit(cache=True, error_model="numpy")
def _cylinders_pruned(S, P, persons, Pf, emu, strata, mu_u, la_u, lb_u, didx, klogk, C, N, l0, mc, max_t, t_end_min, j,
                      m, arg, gmin):
    """The high-rate cylinders of circle entry ``j`` (counts ``S`` (T, R) per day and replicate, 16 or
    32 bits), one group of ``CYLINDER_GROUP`` replicates at a time; updates ``m``, ``arg`` and ``gmin``
    exactly as the day-by-day loop of :func:`_scan_cylinders` does. ``mu_u``, ``la_u``, ``lb_u``,
    ``didx``: the circle's expectations and their logs per distinct interval (see :func:`_interval_logs`);
    with expectations per location and day (``emu`` not None) the circle's per day are ``Pf`` instead;
    ``strata``: see :func:`_window_totals`.

    For every end day ``t2`` the group's counts grow back one day at a time in a running sum that fits
    in a few vector registers, and its largest count comes out of the same pass. Only when that count's
    LLR could beat the group's smallest maximum is the count ``h`` found below which no LLR can (a few
    steps down from the largest), and only the replicates above it are evaluated. The order of the
    cylinders is the loop's for every replicate (``t2`` ascending, ``t1`` descending), so every maximum,
    and the cylinder where it is first attained, is the loop's."""
    T = S.shape[0]
    R = S.shape[1]
    G = CYLINDER_GROUP
    ng = gmin.shape[0]
    acc = np.zeros(G, dtype=S.dtype)  # local, so that the compiler knows it aliases nothing
    for g in range(ng):
        r0 = g * G
        w = min(R, r0 + G) - r0
        for t2 in range(t_end_min, T):
            for r in range(w):
                acc[r] = 0
            n = np.int64(0)
            ef = 0.0
            for t1 in range(t2, max(-1, t2 - max_t), -1):
                cm = acc[0]  # counts are never negative: any start is below the largest
                for r in range(w):
                    acc[r] += S[t1, r0 + r]
                    cm = max(cm, acc[r])
                if persons is not None:
                    n += P[t1]
                if emu is not None:
                    ef += Pf[t1]
                Ct, Nt, Nf, l0t = _window_totals(strata, klogk, t1, t2, C, N, l0)
                ok, a, b, e = _cylinder_constants(klogk, didx, mu_u, la_u, lb_u, t1, t2, n, Ct, Nt, l0t, persons, ef,
                                                  emu)
                if not ok:
                    continue
                # the group's largest count, then (when it could matter) the count h below which no LLR
                # beats the group's smallest maximum, a few steps down from it
                h = np.int64(cm)
                sparse = False
                for step in range(_STEPS + 1):
                    live, top = _cylinder_top(klogk, h, Ct, a, b, n, Nt, Nf, e, mc, persons)
                    # above the expectation the LLR increases with c (see _scan_cylinders); the margin
                    # keeps rounding from hiding a larger LLR
                    if not live or top * (1.0 + 1e-12) + 1e-12 <= gmin[g]:
                        sparse = True  # no count <= h matters
                        break
                    h -= 1
                if step == 0:
                    continue  # not even the largest count
                if not sparse:
                    h = -1  # every count may matter
                code = (j * T + t1) * T + t2
                for r in range(w):
                    c = np.int64(acc[r])
                    if c <= h:
                        continue
                    llr, cf = _cylinder_llr(klogk, c, Ct, a, b, n, Nt, Nf, persons)
                    v = llr if (cf > e) & (c >= mc) else 0.0
                    if v > m[r0 + r]:
                        m[r0 + r] = v
                        arg[r0 + r] = code
                gmin[g] = _group_min(m, r0, r0 + w)


@njit(cache=True, inline="always")
def _interval_logs(cz, du, Cf, mu_u, la_u, lb_u, strata):
    """A circle's expectations ``mu_u = cz du / C`` of the distinct interval sums ``du`` (the Poisson-type
    cylinders), with ``log mu`` and ``log(C - mu)`` where ``0 < mu < C``: every cylinder whose days sum to
    the same ``du`` has the same mu, bit for bit, so its logarithms are taken once per circle instead of
    once per cylinder. Time-stratified (``strata`` not None) ``du`` is the interval's own cases, the total
    its cylinders are scored against: ``log(du - mu)`` where ``0 < mu < du``."""
    for u in range(du.shape[0]):
        mu = cz * du[u] / Cf
        mu_u[u] = mu
        cap = Cf if strata is None else du[u]
        if mu > 0.0 and mu < cap:
            la_u[u] = np.log(mu)
            lb_u[u] = np.log(cap - mu)


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
def _scan_cylinders(offsets, neighbors, wsize, boundary, cases, persons, emu, strata, du, didx, klogk, n_cases, n_total,
                    l0, max_t, t_end_min, min_cases, want_high, want_low, best, best_arg, want_arg, centre_ids, floor,
                    pruned, width):
    """Best cylinder LLR per centre over the cylinders (circle x [t1, t2]), one loop for both kinds
    of cylinder; ``persons`` selects the LLR and is resolved when the kernel is compiled (Numba
    prunes the ``persons is None`` branches: two specialisations, no test in the loops).

    ``cases`` (L, T, R): counts per location, day and replicate; a circle's counts per day are summed
    in the integers of ``width`` (an empty array: 16 bits where the total of cases fits, else 32).

    * ``persons`` None, the Poisson-type cylinders (space-time permutation, discrete Poisson):
      ``wsize[j]`` is the circle's cases over the whole period (C_Z; space-time Poisson: its
      expected cases E_Z) and ``dcum`` the prefix sums of the cases per day (C_d; space-time
      Poisson: C t / T), given as ``du[didx[t2, t2 - t1]] = dcum[t2 + 1] - dcum[t1]`` (see
      :func:`_interval_logs`). A cylinder has ``mu = C_Z x sum_{d in [t1, t2]} C_d / C`` expected
      cases and the Poisson LLR ``c log(c/mu) + (C-c) log((C-c)/(C-mu))`` (Kulldorff et al. 2005;
      Kulldorff 2001), high when ``c > mu``.
    * ``emu`` (L, T) float64 (``persons`` None): the Poisson-type cylinders with expectations that are
      not a location's share times a day's (populations that change over time, covariates): ``emu[z, t]``
      are location z's expected cases on day t, summing to C, and a cylinder's mu is their sum over its
      circle and days (``wsize`` and ``dcum`` are not read). None otherwise.
    * ``persons`` (L, T) int64, the space-time Bernoulli model: cases + controls per location and
      day (the same in every replicate: the null relabels the cases among the persons). A cylinder
      with ``c`` cases among ``n`` persons (``C`` of ``N`` in all, ``l0`` the null log likelihood)
      has the Bernoulli LLR of the spatial scan (same additions), high when ``c N > C n``.
    * ``strata`` (None or the prefix sums of the cases and the persons per day, int64 (T + 1,) each):
      time-stratified (SaTScan's ``TimeTrendAdjustmentType=4``), a cylinder's ``C`` and ``N`` are the
      cases and persons of its own days over all locations (:func:`_window_totals`; Poisson: ``dcum`` the
      prefix sums of the cases per day, so that ``mu = E_Z C_I / C`` of the interval's ``C_I`` cases):
      SaTScan's test statistic of the time-stratified analyses.

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

    With ``pruned`` (high rates only) the cylinders run one group at a time
    (:func:`_cylinders_pruned`): the group's running sums stay in registers, and only the replicates
    whose counts could beat the group's smallest maximum have their LLRs evaluated. The maxima, and
    the cylinders where they are first attained, are those of the day-by-day loop here.
    """
    T = cases.shape[1]
    R = cases.shape[2]
    C = n_cases
    Cf = np.float64(C)
    N = n_total
    mc = np.int32(min_cases)
    G = CYLINDER_GROUP
    ng = (R + G - 1) // G
    t_lo = max(0, t_end_min - max_t + 1)
    grouped = pruned and not want_low
    for ii in prange(centre_ids.shape[0]):
        i = centre_ids[ii]
        S = np.zeros((T, R), dtype=width.dtype)
        P = np.zeros(T, dtype=np.int64)
        Pf = np.zeros(T)  # the circle's expectations per day (emu)
        acc = np.zeros(R, dtype=np.int32)
        m = floor.copy()
        arg = np.full(R, -1, dtype=np.int64)
        gmin = np.empty(ng)  # the smallest maximum so far of each group of replicates
        gcmax = np.empty(ng, dtype=np.int32)  # the largest count of each group in the cylinder
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
            if emu is not None:
                erow = emu[neighbors[j]]
                for t in range(t_lo, T):
                    Pf[t] += erow[t]
            for t in range(t_lo, T):
                for r in range(R):
                    S[t, r] += blk[t, r]
            if boundary[j] == 0:
                continue
            cz = wsize[j]
            if persons is None:
                if emu is None:
                    _interval_logs(cz, du, Cf, mu_u, la_u, lb_u, strata)
            if grouped:
                _cylinders_pruned(S, P, persons, Pf, emu, strata, mu_u, la_u, lb_u, didx, klogk, C, N, l0, mc, max_t,
                                  t_end_min, j, m, arg, gmin)
                continue
            for t2 in range(t_end_min, T):
                for r in range(R):
                    acc[r] = 0
                n = np.int64(0)
                ef = 0.0
                for t1 in range(t2, max(-1, t2 - max_t), -1):
                    if persons is not None:
                        n += P[t1]
                    if emu is not None:
                        ef += Pf[t1]
                    _add_day(acc, S, t1, G, gcmax)
                    Ct, Nt, Nf, l0t = _window_totals(strata, klogk, t1, t2, C, N, l0)
                    ok, a, b, e = _cylinder_constants(klogk, didx, mu_u, la_u, lb_u, t1, t2, n, Ct, Nt, l0t, persons,
                                                      ef, emu)
                    if not ok:
                        continue
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
                                top = _poisson_llr(klogk, c_max, Ct, a, b)
                            else:
                                if np.float64(c_max) * Nf <= e or c_max < mc:
                                    continue
                                top = _bernoulli_terms(klogk, c_max, n, Ct, Nt) + a
                            if top * (1.0 + 1e-12) + 1e-12 <= gmin[g]:
                                continue
                        for r in range(r0, r1):
                            c = acc[r]
                            llr, cf = _cylinder_llr(klogk, c, Ct, a, b, n, Nt, Nf, persons)
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
                   want_arg=False, centre_ids=None, floor=None, pruned=True, strata=None, expected=None):
    """(m, R) best cylinder LLR per centre [and its code] for ``cases`` (L, T, R) (see
    :func:`_scan_cylinders`): ``persons`` None, the Poisson-type cylinders (``windows[2]`` and ``dcum``
    give the expectations); ``persons`` (L, T), the space-time Bernoulli ones (``n_total`` persons in
    all; ``dcum`` not read). With ``centre_ids`` only those centres (rows in that order), with
    ``floor`` (R,) every value at least ``floor``. ``pruned`` False: the day-by-day loop only
    (same results; kept to compare). ``strata``: None, or time-stratified the cases and persons per day
    (T,) each (Poisson: the cases twice), see :func:`_window_totals`. ``expected``: None, or (L, T) the
    expected cases per location and day of the Poisson-type cylinders (summing to ``n_cases``; ``persons``
    and ``strata`` None), which then give every cylinder's mu in place of ``windows[2]`` and ``dcum``."""
    offsets, neighbors, wsize, boundary = windows
    cases = np.ascontiguousarray(cases, dtype=np.int32)
    R = cases.shape[2]
    ids = np.arange(offsets.shape[0] - 1, dtype=np.int64) if centre_ids is None else \
        np.ascontiguousarray(centre_ids, dtype=np.int64)
    fl = np.zeros(R) if floor is None else np.ascontiguousarray(floor, dtype=np.float64)
    best = np.empty((len(ids), R), dtype=np.float64)
    arg = np.empty((len(ids), R) if want_arg else (1, 1), dtype=np.int64)
    emu = None if expected is None else _check_expected(expected, cases.shape[:2], persons, strata)
    if persons is None:
        n_total, l0 = n_cases, 0.0
        du, didx = ((np.zeros(1), np.zeros((1, 1), dtype=np.int32)) if emu is not None else
                    _interval_sums(np.asarray(dcum, dtype=np.float64), cases.shape[1], max_t))
    else:
        persons = np.ascontiguousarray(persons, dtype=np.int64)
        l0 = null_loglik(klogk, n_cases, n_total)
        du, didx = np.zeros(0), np.zeros((1, 1), dtype=np.int32)
    _scan_cylinders(offsets, neighbors, np.ascontiguousarray(wsize, dtype=np.float64), boundary, cases, persons, emu,
                    strata_prefix_sums(strata), du, didx, klogk, np.int64(n_cases), np.int64(n_total), l0,
                    np.int64(max_t), np.int64(t_end_min), np.int64(min_cases), direction in ("high", "both"),
                    direction in ("low", "both"), best, arg, bool(want_arg), ids, fl, bool(pruned),
                    np.empty(0, np.int16 if n_cases <= INT16_CASES else np.int32))
    return best, (arg if want_arg else None)


def _check_expected(expected, shape, persons, strata):
    """``expected`` as the (L, T) float64 array the kernels read, for cases of ``shape`` (L, T)."""
    if persons is not None or strata is not None:
        raise ValueError("expectations per location and day are for the Poisson-type cylinders without time "
                         "strata")
    emu = np.ascontiguousarray(expected, dtype=np.float64)
    if emu.shape != tuple(shape):
        raise ValueError(f"expected must be (locations, days) = {tuple(shape)}, got {emu.shape}")
    return emu


def strata_prefix_sums(strata):
    """The prefix sums ``(dc, dp)`` (int64, (T + 1,) each) of the cases and persons per day ``strata`` that
    :func:`_window_totals` reads, or None."""
    if strata is None:
        return None
    return tuple(np.concatenate([[0], np.cumsum(np.asarray(a, dtype=np.int64))]) for a in strata)


@njit(cache=True, parallel=True, error_model="numpy")
def _space_time_interval_best(offsets, neighbors, wsize, boundary, cases, persons, emu, dated, strata, du, didx, klogk,
                              n_cases, n_total, l0, max_t, min_cases, want_high, want_low, bern, lo, val, code):
    """Observed data only: for centres ``lo + k`` the best cylinder LLR of every interval ``[t1, t2]``
    over the circles, ``val[k, t2, t2 - t1]`` (0 when none) and its circle entry ``code[k, t2, t2 - t1]``
    (-1). The LLRs, the rate tests and the order (circle entry j ascending; the first of equal LLRs
    kept) are those of :func:`_scan_cylinders` (``bern`` False: ``persons`` None, the expectations from
    the distinct interval sums ``du``, ``didx``, or with ``dated`` the sums of ``emu`` (L, T) over the
    cylinder; ``bern`` True: the Bernoulli cylinders; ``strata``: see :func:`_window_totals`) for one
    replicate."""
    K = val.shape[0]
    T = cases.shape[1]
    C = n_cases
    Cf = np.float64(C)
    N = n_total
    mc = np.int64(min_cases)
    for k in prange(K):
        i = lo + k
        S = np.zeros(T, dtype=np.int64)
        P = np.zeros(T, dtype=np.int64)
        Pf = np.zeros(T)
        mu_u = np.empty(du.shape[0])  # the circle's mu of each distinct interval sum, and their logs
        la_u = np.empty(du.shape[0])
        lb_u = np.empty(du.shape[0])
        for j in range(offsets[i], offsets[i + 1]):
            for t in range(T):
                S[t] += cases[neighbors[j], t]
                if bern:
                    P[t] += persons[neighbors[j], t]
                if dated:
                    Pf[t] += emu[neighbors[j], t]
            if boundary[j] == 0:
                continue
            if not bern and not dated:
                _interval_logs(wsize[j], du, Cf, mu_u, la_u, lb_u, strata)
            for t2 in range(T):
                c = np.int64(0)
                n = np.int64(0)
                ef = 0.0
                for t1 in range(t2, max(-1, t2 - max_t), -1):
                    c += S[t1]
                    Ct, Nt, Nf, l0t = _window_totals(strata, klogk, t1, t2, C, N, l0)
                    if dated:
                        # the same sums and logarithms as _scan_cylinders' (_cylinder_constants)
                        ef += Pf[t1]
                        Ctf = np.float64(Ct)
                        if not (ef > 0.0 and ef < Ctf):
                            continue
                        cf = np.float64(c)
                        if not ((want_high and cf > ef and c >= mc) or (want_low and cf < ef)):
                            continue
                        llr = _poisson_llr(klogk, c, Ct, np.log(ef), np.log(Ctf - ef))
                    elif bern:
                        n += P[t1]
                        if n == 0 or n == Nt:
                            continue
                        lhs = np.float64(c) * Nf
                        rhs = np.float64(Ct) * np.float64(n)
                        if not ((want_high and lhs > rhs and c >= mc) or (want_low and lhs < rhs)):
                            continue
                        llr = _llr(klogk, c, n, Ct, Nt, l0t)
                    else:
                        u = didx[t2, t2 - t1]
                        mu = mu_u[u]
                        if not (mu > 0.0 and mu < np.float64(Ct)):
                            continue
                        cf = np.float64(c)
                        if not ((want_high and cf > mu and c >= mc) or (want_low and cf < mu)):
                            continue
                        llr = _poisson_llr(klogk, c, Ct, la_u[u], lb_u[u])
                    if llr > val[k, t2, t2 - t1]:
                        val[k, t2, t2 - t1] = llr
                        code[k, t2, t2 - t1] = j


def space_time_interval_best(windows, cases, persons, dcum, klogk, n_cases, n_total, max_t, min_cases, direction,
                             lo, hi, strata=None, expected=None):
    """(hi - lo, T, max_t) best LLR per interval of centres ``lo..hi-1`` and the circle entry of each
    (see :func:`_space_time_interval_best`); ``persons`` None: the Poisson-type models; ``strata``: as in
    :func:`cylinder_batch`, and so is ``expected``."""
    offsets, neighbors, wsize, boundary = windows
    T = cases.shape[1]
    mt = min(int(max_t), T)
    val = np.zeros((hi - lo, T, mt), dtype=np.float64)
    code = np.full((hi - lo, T, mt), -1, dtype=np.int64)
    bern = persons is not None
    dated = expected is not None
    emu = _check_expected(expected, cases.shape[:2], persons, strata) if dated else np.zeros((1, 1))
    if bern or dated:
        du, didx = np.zeros(0), np.zeros((1, 1), dtype=np.int32)
    else:
        du, didx = _interval_sums(np.asarray(dcum, dtype=np.float64), T, mt)
    _space_time_interval_best(offsets, neighbors, np.ascontiguousarray(wsize, dtype=np.float64), boundary,
                              np.ascontiguousarray(cases, dtype=np.int64),
                              np.ascontiguousarray(persons if bern else np.zeros((1, 1)), dtype=np.int64), emu, dated,
                              strata_prefix_sums(strata), du, didx, klogk, np.int64(n_cases),
                              np.int64(n_total), null_loglik(klogk, n_cases, n_total) if bern else 0.0,
                              np.int64(mt), np.int64(min_cases), direction in ("high", "both"),
                              direction in ("low", "both"), bern, np.int64(lo), val, code)
    return val, code


@njit(cache=True, parallel=True)
def _overlap_candidates(val, code, best, j_of, t1_of, t2_of, lo, min_llr, n_out, v_out, j_out, t1_out, t2_out):
    """For centres ``lo + k``: the best cylinder (``best``, its circle entry ``j_of``, days ``t1_of..t2_of``)
    and then, depth first, the best cylinder over the circles (``val[k]``, ``code[k]`` of
    :func:`space_time_interval_best`; LLR > ``min_llr``) wholly in the days before and wholly in the days
    after each cylinder found, as :func:`overlap_candidates` describes; ``n_out[k]`` of them in
    ``v_out[k]``, ``j_out[k]``, ``t1_out[k]``, ``t2_out[k]``."""
    K, T, mt = val.shape
    for k in prange(K):
        i = lo + k
        n_out[k] = 0
        if not best[i] > 0:
            continue
        v_out[k, 0] = best[i]
        j_out[k, 0] = j_of[i]
        t1_out[k, 0] = t1_of[i]
        t2_out[k, 0] = t2_of[i]
        n = 1
        # the ranges [a, b) of end days still to search (start days >= a), the range before a cylinder on
        # top so that it is searched, with all it holds, before the range after it
        stack = np.empty((T + 3, 2), dtype=np.int64)
        stack[0, 0], stack[0, 1] = t2_of[i] + 2, T - 1
        stack[1, 0], stack[1, 1] = 0, t1_of[i] - 1
        sp = 2
        while sp > 0:
            sp -= 1
            a, b = stack[sp, 0], stack[sp, 1]
            top = -np.inf
            bt2 = -1
            bc = -1
            for t2 in range(a, b):
                for c in range(min(mt, t2 - a + 1)):
                    v = val[k, t2, c]
                    # of equal LLRs the latest end day, then the latest start day (SaTScan's order)
                    if v > min_llr and (v > top or (v == top and t2 > bt2)):
                        top = v
                        bt2 = t2
                        bc = c
            if bt2 < 0:
                continue
            t1 = bt2 - bc
            v_out[k, n] = top
            j_out[k, n] = code[k, bt2, bc]
            t1_out[k, n] = t1
            t2_out[k, n] = bt2
            n += 1
            stack[sp, 0], stack[sp, 1] = bt2 + 2, b
            stack[sp + 1, 0], stack[sp + 1, 1] = a, t1 - 1
            sp += 2
        n_out[k] = n


def overlap_candidates(val, code, best, j_of, t1_of, t2_of, lo, min_llr):
    """The cylinders a retrospective space-time analysis ranks for the centres ``lo .. lo + len(val) - 1``,
    as SaTScan 10 does (``CClusterSetTemporalOverlap``): each centre's most likely cylinder (``best``,
    its circle entry ``j_of``, days ``t1_of..t2_of``, arrays over all centres) and, recursively, the best
    cylinder over the circles (LLR > ``min_llr``) wholly before and wholly after it in time, where
    "before" ends at least two days before the cylinder's first day and "after" starts at least two days
    after its last day, and never ends on the last day of the study period; of equal LLRs the one with
    the latest end day, then the latest start day. ``val``, ``code`` (K, T, max_t): the best LLR and circle
    entry of every interval of the centres (:func:`space_time_interval_best`).

    Returns (centre, LLR, window entry, t1, t2) per candidate, centre by centre, each centre's own most
    likely cylinder first and then depth first, the days before a cylinder before the days after it."""
    K, T = val.shape[0], val.shape[1]
    n = np.zeros(K, dtype=np.int64)
    v = np.empty((K, T + 1))
    j, t1, t2 = (np.empty((K, T + 1), dtype=np.int64) for _ in range(3))
    _overlap_candidates(val, code, np.asarray(best, dtype=np.float64), np.asarray(j_of, dtype=np.int64),
                        np.asarray(t1_of, dtype=np.int64), np.asarray(t2_of, dtype=np.int64), np.int64(lo),
                        np.float64(min_llr), n, v, j, t1, t2)
    keep = np.arange(T + 1)[None, :] < n[:, None]
    return np.repeat(np.arange(lo, lo + K, dtype=np.int64), n), v[keep], j[keep], t1[keep], t2[keep]


class CpuSpaceTimeEngine:
    """The space-time cylinders on the CPU (Numba): :meth:`batch` is :func:`cylinder_batch` with the
    analysis' constants. Picklable (plain arrays)."""

    backend = "cpu"
    #: False: the cylinders' day-by-day loop, without the pruned one of :func:`_cylinders_pruned` (same results)
    pruned = True

    def __init__(self, windows, dcum, klogk, n_cases, max_t, t_end_min, min_cases, direction, persons=None,
                 strata=None, expected=None):
        self.n_cases = int(n_cases)
        # expectations per location and day (see cylinder_batch), or None
        self.expected = None if expected is None else np.ascontiguousarray(expected, dtype=np.float64)
        self.strata = strata  # time-stratified: the cases and persons per day (see cylinder_batch)
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
                              pruned=self.pruned, strata=self.strata, expected=self.expected)

    def with_expected(self, expected):
        """The same engine with other expectations per location and day (``expected`` (L, T); see
        :func:`cylinder_batch`): the space-time exponential model's replicates each have their own."""
        if self.expected is None:
            raise ValueError("with_expected is for an engine built with expectations per location and day")
        other = object.__new__(type(self))
        other.__dict__.update(self.__dict__)
        other.expected = _check_expected(expected, np.shape(self.expected), self.persons, self.strata)
        return other

    #: every PILOT_STRIDE-th centre is scanned first; its maxima are the floor of the full pass
    PILOT_STRIDE = 16
    #: the pilot itself starts from the maxima of a coarser one, over every PILOT_COARSEN x PILOT_STRIDE-th
    #: centre: without a floor every cylinder of the pilot's centres is evaluated
    PILOT_COARSEN = 4

    def max_llr(self, cases):
        """(R,) the largest cylinder LLR of each replicate (0 when none): a pilot over every
        :attr:`PILOT_STRIDE`-th centre (itself floored by a coarser one, :attr:`PILOT_COARSEN`) gives
        each replicate a real cylinder's LLR, which then starts every centre's maximum (``floor``) so
        that the high-rate test skips most cylinders; the result equals ``batch(cases)[0].max(axis=0)``."""
        R = cases.shape[2]
        m = self.args[0][0].shape[0] - 1
        if m == 0:
            return np.zeros(R)
        floor = None
        for stride in (self.PILOT_COARSEN * self.PILOT_STRIDE, self.PILOT_STRIDE):
            if m >= 4 * stride:
                floor = self.batch(cases, centre_ids=np.arange(0, m, stride), floor=floor)[0].max(axis=0)
        return self.batch(cases, floor=floor)[0].max(axis=0)
