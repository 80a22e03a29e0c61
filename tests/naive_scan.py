"""Slow, obvious NumPy reference of the Bernoulli spatial scan statistic (test oracle).

Explicit distance matrix, explicit window membership sets, log likelihoods with np.log.
"""
from __future__ import annotations

import itertools
import math

import numpy as np


def xlogy_ratio(a, b):
    """a * log(a / b) with 0 log 0 = 0."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(a > 0, a * np.log(np.where(a > 0, a, 1.0) / np.where(b > 0, b, 1.0)), 0.0)


def bernoulli_llr(c, n, C, N, direction="high"):
    """Kulldorff's Bernoulli LLR of a window with c cases among n persons (C of N in total)."""
    c = np.asarray(c, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    full = (xlogy_ratio(c, n) + xlogy_ratio(n - c, n) + xlogy_ratio(C - c, N - n)
            + xlogy_ratio(N - n - (C - c), N - n) - (xlogy_ratio(C, N) + xlogy_ratio(N - C, N)))
    inside_high = c * (N - n) > (C - c) * n
    inside_low = c * (N - n) < (C - c) * n
    ok = {"high": inside_high, "low": inside_low, "both": inside_high | inside_low}[direction]
    return np.where(ok, full, 0.0)


def circle_prefixes(d2, tie_coords, size, limit, max_d2=np.inf):
    """SaTScan's windows about one centre: the locations sorted by (squared) distance ``d2``, equal
    distances by their coordinates ``tie_coords`` (the lesser first, lexicographically), and a window
    after every location: the member index arrays of each prefix whose size stays <= ``limit`` and
    whose last location lies within ``max_d2``."""
    tie_coords = np.asarray(tie_coords, dtype=np.float64)
    order = np.lexsort(tuple(tie_coords.T[::-1]) + (d2,))
    out = []
    for k in range(len(order)):
        members = order[:k + 1]
        if d2[order[k]] > max_d2 or size[members].sum() > limit:
            break
        out.append(members)
    return out


def all_windows(centres, coords, pop, max_population):
    """Every circular window: list of (centre index, frozenset of member locations), SaTScan's
    (:func:`circle_prefixes`), kept while the population <= max_population * total."""
    centres = np.asarray(centres, dtype=np.float64)
    coords = np.asarray(coords, dtype=np.float64)
    pop = np.asarray(pop)
    limit = max_population * pop.sum()
    D = ((centres[:, None, :] - coords[None, :, :]) ** 2).sum(axis=2)
    return [(i, frozenset(m.tolist())) for i in range(len(centres)) for m in circle_prefixes(D[i], coords, pop, limit)]


def scan(centres, coords, cases, controls, max_population=0.5, direction="high"):
    """Per-centre best LLR and window, and the overall maximum LLR."""
    cases = np.asarray(cases)
    pop = cases + np.asarray(controls)
    C, N = int(cases.sum()), int(pop.sum())
    best = np.zeros(len(centres))
    best_set = [frozenset()] * len(centres)
    for i, members in all_windows(centres, coords, pop, max_population):
        idx = np.fromiter(members, dtype=np.int64)
        llr = float(bernoulli_llr(cases[idx].sum(), pop[idx].sum(), C, N, direction))
        if llr > best[i] + 1e-12 * max(1.0, abs(best[i])):
            best[i] = llr
            best_set[i] = members
    return best, best_set, float(best.max()) if len(best) else 0.0


def ellipse_distance2(centre, coords, shape, angle_deg):
    """Squared elliptic distance: the major axis (``shape`` x the minor one) at ``angle_deg`` degrees
    from the x axis; 1 on the ellipse with semiminor axis 1."""
    t = np.radians(angle_deg)
    dx = np.asarray(coords, dtype=np.float64)[:, 0] - centre[0]
    dy = np.asarray(coords, dtype=np.float64)[:, 1] - centre[1]
    along = dx * np.cos(t) + dy * np.sin(t)
    across = -dx * np.sin(t) + dy * np.cos(t)
    return (along / shape) ** 2 + across ** 2


def scan_elliptic(coords, cases, controls, ellipses, max_population=0.5, direction="high"):
    """Bernoulli LLR of the best window of every (ellipse, centre) block: (len(ellipses), L) array.

    Each ellipse (shape, angle) centred on every location is grown through the locations in
    order of elliptic distance (equal distances by the untransformed coordinates), one at a time,
    while the window's persons stay <= max_population x the total."""
    coords = np.asarray(coords, dtype=np.float64)
    cases = np.asarray(cases)
    pop = cases + np.asarray(controls)
    C, N = int(cases.sum()), int(pop.sum())
    out = np.zeros((len(ellipses), len(coords)))
    for e, (shape, angle) in enumerate(ellipses):
        for i in range(len(coords)):
            d2 = ellipse_distance2(coords[i], coords, shape, angle)
            for idx in circle_prefixes(d2, coords, pop, max_population * N):
                llr = float(bernoulli_llr(cases[idx].sum(), pop[idx].sum(), C, N, direction))
                out[e, i] = max(out[e, i], llr)
    return out


def space_time_bernoulli(coords, cases_lt, controls_lt, max_population=0.5, max_t=7, prospective=False,
                         min_cases=0, direction="high"):
    """Per-centre best Bernoulli LLR over the cylinders (circle x [t1, t2], at most ``max_t`` days):
    ``cases_lt``, ``controls_lt`` (L, T) per location and day; circles cut at ``max_population`` x the
    persons of the whole period. Returns ``(best (L,), cylinder (L,) as (members, t1, t2) or None)``."""
    coords = np.asarray(coords, dtype=np.float64)
    c_lt = np.asarray(cases_lt)
    p_lt = c_lt + np.asarray(controls_lt)
    L, T = c_lt.shape
    C, N = int(c_lt.sum()), int(p_lt.sum())
    Pz = p_lt.sum(axis=1)
    best = np.zeros(L)
    arg = [None] * L
    for i in range(L):
        d2 = ((coords - coords[i]) ** 2).sum(axis=1)
        for Z in circle_prefixes(d2, coords, Pz, max_population * N):
            for t2 in (range(T - 1, T) if prospective else range(T)):
                for t1 in range(max(0, t2 - max_t + 1), t2 + 1):
                    c = int(c_lt[Z, t1:t2 + 1].sum())
                    n = int(p_lt[Z, t1:t2 + 1].sum())
                    if direction != "low" and c * (N - n) > (C - c) * n and c < min_cases:
                        continue
                    llr = float(bernoulli_llr(c, n, C, N, direction))
                    if llr > best[i] + 1e-12 * max(1.0, best[i]):
                        best[i] = llr
                        arg[i] = (frozenset(Z.tolist()), t1, t2)
    return best, arg


def overlap_candidates(val, code, best, j_of, t1_of, t2_of, min_llr=1.0):
    """SaTScan 10's retrospective candidates (``CClusterSetTemporalOverlap``, ``findBestInRange``) by
    plain recursion over each centre's table of the best LLR per interval ``val[i, t2, t2 - t1]``: the
    centre's own best cylinder, then the best one (LLR > ``min_llr``; of equal LLRs the latest end day,
    then the latest start day) ending at least two days before its start, recursively, then the best one
    starting at least two days after its end (never ending on the last day). (centre, LLR, code, t1, t2)."""
    T, mt = val.shape[1], val.shape[2]
    out = []

    def find(i, a, b):
        cands = [(val[i, t2, c], t2, -c) for t2 in range(a, b) for c in range(min(mt, t2 - a + 1))
                 if val[i, t2, c] > min_llr]
        if not cands:
            return
        v, t2, negc = max(cands)
        out.append((i, float(v), int(code[i, t2, -negc]), t2 + negc, t2))
        find(i, a, t2 + negc - 1)
        find(i, t2 + 2, b)

    for i in range(val.shape[0]):
        if best[i] > 0:
            out.append((i, float(best[i]), int(j_of[i]), int(t1_of[i]), int(t2_of[i])))
            find(i, 0, int(t1_of[i]) - 1)
            find(i, int(t2_of[i]) + 2, T - 1)
    return out


def space_time_stratified(windows, M, day_cases, P=None, max_t=7, min_cases=2, prospective=False):
    """Per-centre best high-rate cylinder of every replicate, time-stratified (SaTScan's
    ``TimeTrendAdjustmentType=4``), by plain enumeration: ``windows`` (offsets, neighbors, wsize, boundary)
    as the kernels take them, ``M`` (L, T, R) cases, ``day_cases`` (T,) the cases of every day. A
    cylinder over the days I is scored against the cases C_I (Bernoulli: and persons N_I) of those days:
    Poisson (``P`` None; ``wsize`` the circle's E_Z = C P_Z / P), ``mu = E_Z C_I / C`` and
    ``c log(c/mu) + (C_I - c) log((C_I - c)/(C_I - mu))`` when ``c > mu``; Bernoulli (``P`` (L, T) persons),
    :func:`bernoulli_llr` of ``c`` among ``n`` with totals ``C_I`` of ``N_I``. ``prospective``: the
    intervals ending on the last day only. Returns (centres, R)."""
    offsets, neighbors, wsize, boundary = windows
    L, T, R = M.shape
    C = float(np.sum(day_cases))
    day_persons = None if P is None else np.asarray(P).sum(axis=0)
    out = np.zeros((len(offsets) - 1, R))
    for i in range(len(offsets) - 1):
        S = np.zeros((T, R))
        n_t = np.zeros(T)
        for j in range(offsets[i], offsets[i + 1]):
            S += M[neighbors[j]]
            if P is not None:
                n_t += P[neighbors[j]]
            if not boundary[j]:
                continue
            for t2 in range(T - 1 if prospective else 0, T):
                for t1 in range(max(0, t2 - max_t + 1), t2 + 1):
                    c = S[t1:t2 + 1].sum(axis=0)
                    CI = float(np.sum(day_cases[t1:t2 + 1]))
                    if P is None:
                        mu = wsize[j] * CI / C
                        if not 0.0 < mu < CI:
                            continue
                        llr = xlogy_ratio(c, mu) + xlogy_ratio(CI - c, CI - mu)
                        ok = (c > mu) & (c >= min_cases)
                    else:
                        n = n_t[t1:t2 + 1].sum()
                        NI = float(day_persons[t1:t2 + 1].sum())
                        if n == 0 or n == NI:
                            continue
                        llr = bernoulli_llr(c, n, CI, NI)
                        ok = (c * NI > CI * n) & (c >= min_cases)
                    out[i] = np.maximum(out[i], np.where(ok, llr, 0.0))
    return out


def space_time_dated(windows, M, E, max_t=7, min_cases=2, prospective=False, direction="high"):
    """Per-centre best cylinder of every replicate for the space-time Poisson model whose expectations
    are given per location and day, by plain enumeration: ``windows`` (offsets, neighbors, wsize, boundary)
    as the kernels take them, ``M`` (L, T, R) cases, ``E`` (L, T) expected cases (summing to the total
    C). A cylinder (circle Z x days I) has ``mu = sum_{z in Z, t in I} E[z, t]`` and the LLR
    ``c log(c/mu) + (C - c) log((C - c)/(C - mu))``, high when ``c > mu`` (and ``c >= min_cases``), low when
    ``c < mu``. Returns (centres, R)."""
    offsets, neighbors, _, boundary = windows
    L, T, R = M.shape
    C = float(M[:, :, 0].sum())
    out = np.zeros((len(offsets) - 1, R))
    for i in range(len(offsets) - 1):
        members = []
        for j in range(offsets[i], offsets[i + 1]):
            members.append(neighbors[j])
            if not boundary[j]:
                continue
            for t2 in range(T - 1 if prospective else 0, T):
                for t1 in range(max(0, t2 - max_t + 1), t2 + 1):
                    c = M[members, t1:t2 + 1].sum(axis=(0, 1)).astype(float)
                    mu = float(E[members, t1:t2 + 1].sum())
                    if not 0.0 < mu < C:
                        continue
                    llr = xlogy_ratio(c, mu) + xlogy_ratio(C - c, C - mu)
                    high, low = (c > mu) & (c >= min_cases), c < mu
                    ok = {"high": high, "low": low, "both": high | low}[direction]
                    out[i] = np.maximum(out[i], np.where(ok, llr, 0.0))
    return out


def normal_llr(x, w, inside, direction, min_cases):
    """The normal model's LLR of the window (or cylinder) holding the observations ``inside`` (boolean) from
    its definition (two-pass means and sums of squares; weighted with ``w``), 0 when its mean is not of
    interest (SaTScan's rules: n >= min_cases, a sum of measurements that is not 0)."""
    N = len(x)
    n = int(inside.sum())
    if n == 0 or n == N or n < min_cases:
        return 0.0
    ww = np.ones(N) if w is None else w
    if (ww[inside] * x[inside]).sum() == 0:
        return 0.0
    mi = np.average(x[inside], weights=ww[inside])
    mo = np.average(x[~inside], weights=ww[~inside])
    if not ((direction in ("high", "both") and mi > mo) or (direction in ("low", "both") and mi < mo)):
        return 0.0
    m = np.average(x, weights=ww)
    s0 = (ww * (x - m) ** 2).sum()
    s1 = (ww[inside] * (x[inside] - mi) ** 2).sum() + (ww[~inside] * (x[~inside] - mo) ** 2).sum()
    return 0.5 * N * math.log(s0 / s1)


def categorical_llr(c, tot, restrict):
    """The window's LLR from its definition: the multinomial log likelihood inside and outside
    (``restrict`` None: free probabilities), or its maximum under a likelihood ratio p_k / q_k
    non-decreasing ("high") or non-increasing ("low") in k, found by trying every partition of the
    categories into runs of pooled neighbours (pooled: one ratio, p and q shared out by the totals).
    0 when the window has no case inside or outside."""
    c = np.asarray(c, dtype=float)
    tot = np.asarray(tot, dtype=float)
    d = tot - c
    W, U, C = c.sum(), d.sum(), tot.sum()
    if W == 0 or U == 0:
        return 0.0
    ll0 = sum(t * math.log(t / C) for t in tot if t > 0)

    def ll(p, q):
        return sum(a * math.log(x) for a, x in zip(c, p) if x > 0) + sum(b * math.log(y) for b, y in zip(d, q) if y > 0)

    if restrict is None:
        return ll(c / W, d / U) - ll0
    K = len(tot)
    best = -math.inf
    for cuts in itertools.product([0, 1], repeat=K - 1):
        blocks, start = [], 0
        for k, cut in enumerate(cuts, start=1):
            if cut:
                blocks.append(list(range(start, k)))
                start = k
        blocks.append(list(range(start, K)))
        p, q, ratios = np.zeros(K), np.zeros(K), []
        for b in blocks:
            bp, bq, bt = c[b].sum() / W, d[b].sum() / U, tot[b].sum()
            if bt == 0:  # categories without any case: no probability, no constraint
                continue
            p[b], q[b] = bp * tot[b] / bt, bq * tot[b] / bt
            ratios.append(math.inf if bq == 0 else bp / bq)
        pairs = list(zip(ratios, ratios[1:]))
        if restrict == "high" and any(a > b for a, b in pairs) or restrict == "low" and any(a < b for a, b in pairs):
            continue
        best = max(best, ll(p, q) - ll0)
    return best


def isotonic_llr(cases, measure, members, C, M, bernoulli, high):
    """``(llr, steps)``: the isotonic cluster of the locations ``members`` (nearest first) as SaTScan's
    ``SpatialMonotoneData`` builds it, written as plainly as possible: each location a step, a step pooled into
    the one before while the inner one is not of interest (high: at least 2 cases and a rate c / m strictly above
    the next step's, compared as c1 m2 > m1 c2; low: strictly below), then the cases outside as one more step,
    pooled the same way and dropped after the LLR; ``steps``: (cases, measure, location count) of each step
    left."""
    steps = []  # [cases, measure, number of locations]

    def keeps(a, b):
        if a[1] == 0:
            return False
        return a[0] >= 2 and a[0] * b[1] > a[1] * b[0] if high else a[0] * b[1] < a[1] * b[0]

    def push(step):
        steps.append(step)
        while len(steps) > 1 and not keeps(steps[-2], steps[-1]):
            last = steps.pop()
            steps[-1] = [steps[-1][0] + last[0], steps[-1][1] + last[1], steps[-1][2] + last[2]]

    inside = sum(int(cases[l]) for l in members)
    for l in members:
        push([int(cases[l]), float(measure[l]), 1])
    rest = inside != C
    if rest:
        push([C - inside, M - sum(float(measure[l]) for l in members), 0])

    def ll(c, m):
        if bernoulli:
            return (xlogy_ratio(c, m) if c else 0.0) + (xlogy_ratio(m - c, m) if m > c else 0.0)
        return xlogy_ratio(c, m) if c else 0.0

    null = ll(C, M)
    total = sum(ll(c, m) for c, m, _ in steps)
    if rest:
        steps.pop()
    return (total - null, steps) if steps else (0.0, [])
