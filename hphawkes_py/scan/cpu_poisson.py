"""The pruned Monte Carlo kernel of the purely spatial Poisson scan (Numba).

:func:`max_llr_pruned_poisson` is :func:`~.cpu.max_llr_pruned` for the Poisson model: the same pilot pass
and rounds of centres, with each window end tested against each replicate group's running maximum by
bounds on the Poisson LLR itself (:func:`_scan_max_pruned_poisson`; no count tables) and blocks of window
ends ruled out at once. The maxima equal the exhaustive kernel's (:func:`~.cpu.scan_batch`) bit for bit.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .cpu_pruning import (GROUP, PRUNE_MARGIN, _add_rows, _aligned_columns, _group_min, _group_row_max,
                          _narrow_counts, _round_plan, _sub_rows, _take_columns, _work_item, _work_items)
from .llr import _poisson_llr

__all__ = ["max_llr_pruned_poisson"]

#: replicates (columns of cases) per work item of the Poisson pruned kernel: a compromise between the
#: rows of cases staying in cache (fewer columns) and the test of all of an item's columns at once,
#: which rules out fewer window ends when they are more
POISSON_SUB_BATCH = 256
#: the Poisson pruned kernel keeps its sub-batches of ``POISSON_SUB_BATCH`` columns while they leave at least
#: this many per thread (then parts of the centres make the items): fewer, wider sub-batches add each
#: window entry's row fewer times, which the weaker all-columns bound costs less than (measured per
#: regime in benchmarks/results/scan_poisson_block.md)
POISSON_SUBS_PER_THREAD = 2
#: consecutive window entries the Poisson pruned kernel rules out with one bound (1: entry by entry;
#: measured per regime in benchmarks/results/scan_poisson_block.md)
POISSON_BLOCK = 8
#: whether the Poisson pruned kernel bounds a failing block again window end by window end (see
#: :func:`_scan_max_pruned_poisson`) when the counts are 32-bit: with many cases a location a block's count
#: and E grow by more along it, its bound is loose, and the second bound often spares the walk
#: (benchmarks/results/scan_poisson_block.md)
POISSON_REFINE = True
#: steps from a group's extreme count towards the count threshold of a window before the Poisson
#: pruned kernel evaluates all of the group's replicates there instead of those beyond the threshold
_STEPS = 4


@njit(cache=True, parallel=True, error_model="numpy")
def _scan_max_pruned_poisson(centres, n_parts, step, offsets, neighbors, boundary, mexp, loge, logce, cases, rowmax,
                             R, klogk, n_cases, want_high, want_low, min_cases, m0, margin, block, refine, cproto,
                             best, stats):
    """Poisson version of :func:`_scan_max_pruned`: best LLR of the centres ``centres`` per replicate,
    skipping windows that cannot matter; replicates (the first ``R`` columns of ``cases``, a multiple of
    ``GROUP``) in groups of ``GROUP`` columns.

    One parallel region for the whole round: its work items are (columns ``s0:s0 + step``, a part of
    the centres, ``n_parts`` parts), so that a round over few replicates still costs one fork and join
    (there were 200 per NY analysis), and each item walks its centres one after the other with running
    maxima ``m`` (starting at ``m0``) that rise along the way. ``best[p]``: the maxima of part p.

    The bound. With C cases in all, the high-rate LLR f(c, E) = c log(c/E) + (C-c) log((C-c)/(C-E))
    (c > E) increases with c (df/dc = log(c/E) - log((C-c)/(C-E)) > 0); the low-rate one (c < E)
    decreases with c. So at a window end with E expected, if the largest count cmax of some replicates
    is <= E (or < min_cases), or f(cmax, E) <= T, where T is their smallest running maximum less
    ``margin`` (far above the rounding of the LLRs), none of them has a high-rate window there that
    changes its maximum (likewise f(cmin, E) for the low rates). The test is made first for all the
    item's columns at once (their extremes are reductions along the additions of the window's counts;
    T the least of the groups' thresholds), which rules out most window ends with one LLR; then group
    by group (its own extremes and threshold), and only the replicates of a group that passes have
    their LLRs evaluated, with the additions of :func:`_scan_batch` (and the group's threshold raised
    to its new smallest maximum). Every maximum above ``m0`` is therefore bit for bit the exhaustive
    one. An inf/NaN bound (E = 0, E >= C) never prunes.

    Before that, ``block`` consecutive entries of a centre's walk are ruled out at once by one bound
    (``mexp`` holds the running sums at every entry, windows or not, as
    :func:`~.windows.cumulative_expected` gives them): along the walk c and E only grow, and the high-rate f falls with E where c > E
    (df/dE = (C-c)/(C-E) - c/E < 0), so every high-rate window of the block has
    f <= f(cmax, E_first), cmax the item's largest count at the block's end and E_first the block's
    first (least) E; the low-rate f rises with E, so every low-rate window has f <= f(cmin, E_last),
    cmin the least count before the block. With ``refine``, a block whose bound exceeds T (high rates
    only) is bounded again window end by window end: at entry k every count is at most the smaller of
    cmax and the item's largest count before the block plus, for every entry up to k, the item's
    largest count at that location (``rowmax[l, s]``, sub-batch s); only a block where that fails too
    is walked entry by entry as above. ``stats[item]``: (group-window tests, group extremes taken, LLR evaluations of a
    group, blocks tested).
    """
    nc = centres.shape[0]
    n_sub = (R + step - 1) // step
    cc = np.int32(n_cases)
    mc = min_cases
    for item in prange(n_sub * n_parts):
        part, s0, W, first, last = _work_item(item, n_parts, step, R, nc)
        G = W // GROUP
        c = np.zeros(W, dtype=cproto.dtype)
        m = m0[s0:s0 + W].copy()
        Tg = np.empty(G)
        for g in range(G):
            Tg[g] = _group_min(m, g * GROUP, g * GROUP + GROUP) - margin
        t_all = _group_min(Tg, 0, G)
        n_test = 0
        n_red = 0
        n_eval = 0
        n_block = 0
        sb = s0 // step
        for ii in range(first, last):
            i = centres[ii]
            c[:] = 0
            hi0 = np.int64(0)  # the item's largest count before the block
            j = offsets[i]
            end = offsets[i + 1]
            while j < end:
                jb = min(j + block, end)
                if jb - j > 1:
                    # the block's bound (see the docstring): the largest count after it at the block's
                    # least E, the least count before it at its largest E
                    mn = c[0]
                    if want_low:
                        for r in range(W):
                            mn = min(mn, c[r])
                    _add_rows(c, cases, neighbors, j, jb, s0)
                    n_block += 1
                    go = False
                    if want_high:
                        mx = c[0]
                        for r in range(W):
                            mx = max(mx, c[r])
                        go = (np.float64(mx) > mexp[j] and mx >= mc
                              and not (_poisson_llr(klogk, mx, cc, loge[j], logce[j]) <= t_all))
                    if want_low and not go:
                        go = (np.float64(mn) < mexp[jb - 1]
                              and not (_poisson_llr(klogk, mn, cc, loge[jb - 1], logce[jb - 1]) <= t_all))
                    if go and refine and want_high and not want_low:
                        # each window end's own bound (see the docstring)
                        go = False
                        top = hi0
                        for k in range(j, jb):
                            top += rowmax[neighbors[k], sb]
                            ub = np.int32(min(np.int64(mx), top))
                            if (boundary[k] != 0 and np.float64(ub) > mexp[k] and ub >= mc
                                    and not (_poisson_llr(klogk, ub, cc, loge[k], logce[k]) <= t_all)):
                                go = True
                                break
                    if refine and want_high:
                        hi0 = np.int64(mx)
                    if not go:
                        j = jb
                        continue
                    _sub_rows(c, cases, neighbors, j, jb, s0)
                for k in range(j, jb):
                    row = cases[neighbors[k], s0:s0 + W]
                    for r in range(W):
                        c[r] += row[r]
                    if boundary[k] == 0:
                        continue
                    e = mexp[k]
                    la = loge[k]
                    lgb = logce[k]
                    n_test += G
                    # all the item's columns at once: their largest (least) count against the least threshold
                    go = False
                    if want_high:
                        mx = c[0]
                        for r in range(W):
                            mx = max(mx, c[r])
                        go = np.float64(mx) > e and mx >= mc and not (_poisson_llr(klogk, mx, cc, la, lgb) <= t_all)
                    if want_low and not go:
                        mn = c[0]
                        for r in range(W):
                            mn = min(mn, c[r])
                        go = np.float64(mn) < e and not (_poisson_llr(klogk, mn, cc, la, lgb) <= t_all)
                    if not go:
                        continue
                    raised = False
                    for g in range(G):
                        T = Tg[g]
                        # the exact extremes of the group
                        n_red += 1
                        r0 = g * GROUP
                        mx = c[r0]
                        mn = c[r0]
                        go_hi = False
                        go_lo = False
                        if want_high:
                            for q in range(GROUP):
                                mx = max(mx, c[r0 + q])
                            go_hi = np.float64(mx) > e and mx >= mc and not (_poisson_llr(klogk, mx, cc, la, lgb) <= T)
                        if want_low:
                            for q in range(GROUP):
                                mn = min(mn, c[r0 + q])
                            go_lo = np.float64(mn) < e and not (_poisson_llr(klogk, mn, cc, la, lgb) <= T)
                        if not (go_hi or go_lo):
                            continue
                        n_eval += 1
                        # one direction (the usual case): the count threshold h (l) below (above) which no
                        # LLR of this window exceeds T, by a few steps down (up) from the extreme count;
                        # only the replicates beyond it are evaluated
                        sparse = False
                        h = np.int32(mx)
                        lw = np.int32(mn)
                        if go_hi and not go_lo:
                            lw = np.int32(-1)
                            for _ in range(_STEPS):
                                if (np.float64(h - 1) > e and h - 1 >= mc
                                        and not (_poisson_llr(klogk, h - 1, cc, la, lgb) <= T)):
                                    h -= 1
                                else:
                                    sparse = True  # counts below h: not high, below min_cases, or LLR <= T
                                    break
                        elif go_lo and not go_hi:
                            h = cc + 1
                            for _ in range(_STEPS):
                                if np.float64(lw + 1) < e and not (_poisson_llr(klogk, lw + 1, cc, la, lgb) <= T):
                                    lw += 1
                                else:
                                    sparse = True  # counts above lw: not low or LLR <= T
                                    break
                        if sparse:
                            for q in range(GROUP):
                                cr = c[r0 + q]
                                if cr >= h or cr <= lw:
                                    llr = _poisson_llr(klogk, cr, cc, la, lgb)
                                    cf = np.float64(cr)
                                    ok = (want_high & (cf > e) & (cr >= mc)) | (want_low & (cf < e))
                                    if ok and llr > m[r0 + q]:
                                        m[r0 + q] = llr
                        else:
                            for q in range(GROUP):
                                cr = c[r0 + q]
                                llr = _poisson_llr(klogk, cr, cc, la, lgb)
                                cf = np.float64(cr)
                                ok = (want_high & (cf > e) & (cr >= mc)) | (want_low & (cf < e))
                                v = llr if ok else 0.0
                                m[r0 + q] = v if v > m[r0 + q] else m[r0 + q]
                        # the group's maxima may have risen: so does its threshold
                        Tg[g] = max(T, _group_min(m, r0, r0 + GROUP) - margin)
                        raised = True
                    if raised:
                        t_all = _group_min(Tg, 0, G)
                if refine and want_high:
                    # the walk leaves the counts at the block's end: their largest, for the next block
                    mx = c[0]
                    for r in range(W):
                        mx = max(mx, c[r])
                    hi0 = np.int64(mx)
                j = jb
        best[part, s0:s0 + W] = m
        stats[item, 0] += n_test
        stats[item, 1] += n_red
        stats[item, 2] += n_eval
        stats[item, 3] += n_block



def max_llr_pruned_poisson(windows, cases, klogk, n_cases, hi_on, lo_on, min_cases, stats, plogs, M):
    """:func:`~.cpu.max_llr_pruned` of the Poisson model from the pilot's maxima ``M`` (R,) (rounds of
    centres; groups of ``GROUP`` replicates, the last one padded with copies of its last column):
    each replicate's maximum LLR, float64 (R,); ``M`` is raised in place to them.

    Examples
    --------
    See :func:`~.cpu.max_llr_pruned`, which computes ``M`` and calls this for ``model="poisson"``.
    """
    offsets, neighbors, _, boundary = windows
    m = offsets.shape[0] - 1
    R = cases.shape[1]
    mexp, loge, logce = (np.ascontiguousarray(a, dtype=np.float64) for a in plogs)
    cases, ctype, rtype = _narrow_counts(cases, n_cases)
    cproto = np.zeros(1, dtype=ctype)
    wide = ctype is np.int32
    # the margin: far above the rounding of LLRs made of terms up to C log C
    margin = PRUNE_MARGIN + 1e-12 * float(klogk[n_cases])
    G = (R + GROUP - 1) // GROUP
    Rp = G * GROUP
    step, n_sub, n_parts = _work_items(Rp, POISSON_SUB_BATCH, POISSON_SUBS_PER_THREAD)
    cs = _aligned_columns(cases.shape[0], Rp, rtype)
    rowmax = np.empty((cases.shape[0], n_sub), dtype=rtype)
    perm, rounds = _round_plan(m)
    for a, b in rounds:
        order = np.argsort(-M, kind="stable")
        order = np.concatenate([order, np.full(Rp - R, order[-1])])
        Ms = np.ascontiguousarray(M[order])
        _take_columns(cases, order, cs)
        _group_row_max(cs, Rp, step, rowmax)
        parts = min(n_parts, b - a)
        best = np.empty((parts, Rp), dtype=np.float64)
        st = np.zeros((n_sub * parts, 4), dtype=np.int64)
        _scan_max_pruned_poisson(perm[a:b], np.int64(parts), np.int64(step), offsets, neighbors, boundary, mexp, loge,
                                 logce, cs, rowmax, np.int64(Rp), klogk, np.int64(n_cases), hi_on, lo_on,
                                 np.int64(min_cases), Ms, np.float64(margin), np.int64(POISSON_BLOCK),
                                 wide and POISSON_REFINE, cproto, best, st)
        M[order[:R]] = np.maximum(Ms[:R], best[:, :R].max(axis=0))
        if stats is not None:
            s = st.sum(axis=0)
            stats.setdefault("rounds", []).append((int(b - a), int(s[0]), int(s[1]), int(s[2]), int(s[3])))
    return M
