"""The CPU engine of the purely spatial Bernoulli and Poisson scans (Numba).

* :func:`scan_batch` -- for a batch of ``R`` case vectors (the observed data or Monte Carlo
  replicates, laid out locations x replicates so the replicate index is the contiguous,
  vectorised one), every centre walks its neighbour list (:mod:`.windows`) once, accumulating
  the window's cases for all ``R`` replicates at once and evaluating the log likelihood ratio
  (:mod:`.llr`) at each window end. Work per replicate is O(total number of window entries).
* :func:`max_llr_pruned` -- the Monte Carlo statistic (each replicate's largest LLR) with
  pruning: a pilot pass and rounds of centres raise each replicate's running maximum, and a
  window end whose case counts cannot beat it (a count threshold from :mod:`.llr`) is skipped.
  The maxima equal those of :func:`scan_batch`.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .cpu_observed import best_per_centre_blocks
from .cpu_poisson import max_llr_pruned_poisson
from .cpu_pruning import (GROUP, NIBBLE_MAX, PRUNE_MARGIN, _add_rows, _add_rows_nibbles, _aligned_columns,
                          _group_row_max, _lane_max, _lane_min, _narrow_counts, _pack_nibbles, _round_plan, _sub_rows,
                          _take_columns, _work_item, _work_items)
from .engine import Engine, null_loglik, poisson_logs
from .llr import _poisson_llr, _poisson_threshold_tables, _threshold_tables
from .sizes import expected_bins, size_bins

__all__ = ["scan_batch", "max_llr_pruned", "CpuEngine"]


@njit(cache=True, parallel=True, error_model="numpy")
def _scan_batch(offsets, neighbors, npop, mexp, loge, logce, boundary, cases, klogk, n_cases, n_total, l0,
                want_high, want_low, min_cases, poisson, best, best_entry, want_arg):
    """Best LLR (and, with ``want_arg``, the window end entry) of every centre for each column
    of ``cases``; one kernel for both models (``poisson`` is loop-invariant).

    Bernoulli: window ``j`` holds ``npop[j]`` persons, LLR from the ``k log k`` table of
    ``0..N``. Poisson: window ``j`` has ``mexp[j]`` expected cases (the total is C), LLR
    ``c log(c/E) + (C-c) log((C-c)/(C-E))`` with ``klogk`` over ``0..C`` and ``loge[j] = log E``,
    ``logce[j] = log(C - E)`` computed once on the host (so that both engines use the same
    logarithms). High-rate windows need at least ``min_cases`` cases.
    """
    n_centres = offsets.shape[0] - 1
    R = cases.shape[1]
    C = n_cases
    N = n_total
    Nf = np.float64(N)
    cc = np.int32(C)
    mc = np.int32(min_cases)
    for i in prange(n_centres):
        c = np.zeros(R, dtype=np.int32)
        m = np.zeros(R, dtype=np.float64)
        arg = np.full(R, -1, dtype=np.int64)
        for j in range(offsets[i], offsets[i + 1]):
            row = cases[neighbors[j]]
            for r in range(R):
                c[r] += row[r]
            if boundary[j] == 0:
                continue
            # per-entry constants, shared by all replicates of the batch
            if poisson:
                rhs = mexp[j]
                la = loge[j]
                lb = logce[j]
                scale = 1.0
                q = 0.0
                nn = np.int32(0)
                rest = np.int32(0)
            else:
                n = npop[j]
                q = -(klogk[n] + klogk[N - n]) - l0
                rhs = np.float64(C) * np.float64(n)
                scale = Nf
                la = 0.0
                lb = 0.0
                nn = np.int32(n)
                rest = np.int32(N - n - C)
            # one loop whether or not the argmax is wanted: branch-free selects vectorise, and
            # v > m[r] is exactly "ok and llr > m[r]" (m[r] >= 0; v = 0 when not ok)
            for r in range(R):
                cr = c[r]
                if poisson:
                    llr = _poisson_llr(klogk, cr, cc, la, lb)
                else:
                    t = (klogk[cr] + klogk[nn - cr]) + (klogk[cc - cr] + klogk[rest + cr])
                    llr = t + q
                lhs = np.float64(cr) * scale
                ok = (want_high & (lhs > rhs) & (cr >= mc)) | (want_low & (lhs < rhs))
                v = llr if ok else 0.0
                better = v > m[r]
                arg[r] = j if better else arg[r]
                m[r] = v if better else m[r]
        for r in range(R):
            best[i, r] = m[r]
            if want_arg:
                best_entry[i, r] = arg[r]


@njit(cache=True, inline="always")
def _end_test(cg, mg, k, npop, poisson, mexp, loge, logce, entry_u, klogk, C, N, l0, want_high, want_low, thr_hi,
              thr_lo, g):
    """The window ending at entry ``k`` for the replicates of group ``g``, whose counts are ``cg`` and
    running maxima ``mg``: the group's largest and least counts (vectorised reductions) decide whether
    some count reaches the group's thresholds; only those LLRs are evaluated (and maxima updated), with
    the additions of :func:`_scan_batch` (Bernoulli: ``npop``; Poisson, ``poisson`` True: ``mexp``,
    ``loge``, ``logce``)."""
    u = entry_u[k]
    h32 = thr_hi[u, g]
    l32 = thr_lo[u, g]
    n = np.int64(0) if poisson else npop[k]
    if h32 > (C if poisson else min(n, C)) and l32 < 0:
        return False
    mx = cg[0]
    mn = cg[0]
    for q in range(cg.shape[0]):
        mx = max(mx, cg[q])
        mn = min(mn, cg[q])
    if mx < h32 and mn > l32:
        return False
    cc = np.int32(C)
    if poisson:
        e = mexp[k]
        la = loge[k]
        lb = logce[k]
        for q in range(cg.shape[0]):
            cr = np.int32(cg[q])
            if cr >= h32 or cr <= l32:
                llr = _poisson_llr(klogk, cr, cc, la, lb)
                cf = np.float64(cr)
                ok = (want_high & (cf > e)) | (want_low & (cf < e))
                if ok and llr > mg[q]:
                    mg[q] = llr
        return True
    Nf = np.float64(N)
    cn = np.float64(C) * np.float64(n)
    qq = -(klogk[n] + klogk[N - n]) - l0
    nn = np.int32(n)
    rest = np.int32(N - n - C)
    for q in range(cg.shape[0]):
        cr = np.int32(cg[q])
        if cr >= h32 or cr <= l32:
            t = (klogk[cr] + klogk[nn - cr]) + (klogk[cc - cr] + klogk[rest + cr])
            llr = t + qq
            lhs = np.float64(cr) * Nf
            ok = (want_high & (lhs > cn)) | (want_low & (lhs < cn))
            if ok and llr > mg[q]:
                mg[q] = llr
    return True


@njit(cache=True, inline="always")
def _walk_group(c, m, r0, r1, j, jb, neighbors, npop, poisson, mexp, loge, logce, boundary, entry_u, cases, s0, klogk,
                C, N, l0, want_high, want_low, thr_hi, thr_lo, g):
    """Entries ``j..jb-1`` walked again for the replicates ``r0..r1-1`` of group ``g`` only (columns
    ``s0 + r0..s0 + r1 - 1`` of ``cases``; their counts ``c[r0:r1]`` restored to the block's start by
    the caller), every window end tested by :func:`_end_test`."""
    # views indexed from 0, so that LLVM sees non-negative indices and vectorises
    cg = c[r0:r1]
    mg = m[r0:r1]
    for k in range(j, jb):
        rg = cases[neighbors[k], s0 + r0:s0 + r1]
        for q in range(cg.shape[0]):
            cg[q] += rg[q]
        if boundary[k] != 0:
            _end_test(cg, mg, k, npop, poisson, mexp, loge, logce, entry_u, klogk, C, N, l0, want_high, want_low,
                      thr_hi, thr_lo, g)


@njit(cache=True, parallel=True, error_model="numpy")
def _scan_max_pruned(centres, n_parts, step, offsets, neighbors, npop, poisson, mexp, loge, logce, boundary, entry_u,
                     cases, packed, rowmax, R, klogk, n_cases, n_total, l0, want_high, want_low, m0, thr_hi, thr_lo,
                     block, sub, head_rate, best, stats):
    """Best LLR of the centres ``centres`` per replicate, skipping windows that cannot matter.

    Replicates come in groups of ``GROUP`` columns (sorted by ``m0``). ``m0`` (R,) are LLRs
    already attained by some window in each replicate, and each group g has a threshold
    Tg[g] <= min(m0) over the group: a window whose LLR is at most Tg[g] never changes a
    maximum of group g, and it can exceed Tg[g] only if its case count is >= thr_hi[u, g]
    (or <= thr_lo[u, g]), u = entry_u[j] the index of its population among the distinct
    ones.

    Blocks of ``block`` consecutive entries of a centre's walk are tested at once, group by
    group: along the walk the case count c and the population n only grow, and so do both
    thresholds (checked by the caller), so no window of the block can matter to group g when
    each of its replicates' count at the block's end is below the group's high threshold of the
    block's first entry and its count before the block is above the low threshold of the block's
    last entry. A group that fails it on the high side only is tested again entry by entry without
    walking: at entry k of the block each replicate's count is at most the smaller of its count at the
    block's end and the group's largest count before the block plus, for every entry up to k, the
    group's largest count at that location (``rowmax[l, g]``); the block is skipped when that bound
    is below the threshold of entry k at every window end k. Only the groups that fail both tests walk
    the block again, entry by entry, over their own replicates (:func:`_walk_group`).

    Each centre's smallest windows come first entry by entry (:func:`_end_test` for every group at every
    window end), in spans of ``block`` entries, until a span where fewer than one group in ``head_rate``
    reaches its thresholds at an entry on average (``head_rate`` 0: none): at the first windows nearly every
    group fails its block test, whose count at the block's end is several locations' cases and whose threshold
    is that of one location, and walks the block again.

    One parallel region for the whole round: its work items are (columns ``s0:s0 + step`` of the first
    ``R`` of ``cases``, a part of the centres, ``n_parts`` parts; the threads share a sub-batch's rows of
    cases). ``packed`` (L, 0) or the rows two counts to a byte (:func:`~.cpu_pruning._pack_nibbles`, each
    sub-batch's halves in a byte's nibbles): the blocks' additions read those, the walks ``cases``. And
    ``best[p]`` gets the maxima of part p over its centres (initialised to ``m0``; those of the
    exhaustive kernel wherever they exceed ``m0``). ``stats[item]``: (group-blocks tested,
    group-blocks walked again).
    """
    nc = centres.shape[0]
    n_sub = (R + step - 1) // step
    C = n_cases
    N = n_total
    for item in prange(n_sub * n_parts):
        part, s0, W, first, last = _work_item(item, n_parts, step, R, nc)
        G = (W + GROUP - 1) // GROUP
        g0 = s0 // GROUP
        nib = packed.shape[1] > 0
        c = np.zeros(step if nib else W, dtype=thr_hi.dtype)
        low0 = np.zeros(G, dtype=thr_hi.dtype)
        hi0 = np.zeros(G, dtype=np.int64)  # each group's largest count before the block
        m = m0[s0:s0 + W].copy()
        n_test = 0
        n_hit = 0
        n_tried = 0
        n_ruled = 0
        for ii in range(first, last):
            i = centres[ii]
            c[:] = 0
            hi0[:] = 0
            j = offsets[i]
            end = offsets[i + 1]
            # the smallest windows entry by entry, in spans of ``block`` entries while at least one group in
            # ``head_rate`` reaches its thresholds at an entry on average: there nearly every group fails a
            # block's test (its count after the block against the threshold of the block's first, smallest
            # window), and the tests would only pass the block on to walks
            busy = head_rate > 0
            while busy and j < end:
                jh = min(end, j + block)
                reached = 0
                while j < jh:
                    _add_rows(c[:W], cases, neighbors, j, j + 1, s0)
                    if boundary[j] != 0:
                        for g in range(G):
                            r0 = g * GROUP
                            r1 = min(W, r0 + GROUP)
                            reached += _end_test(c[r0:r1], m[r0:r1], j, npop, poisson, mexp, loge, logce, entry_u,
                                                 klogk, C, N, l0, want_high, want_low, thr_hi, thr_lo, g0 + g)
                    j += 1
                busy = reached * head_rate >= G * block
            if head_rate > 0:
                # each group's largest count before the first block (the blocks' entry-by-entry bound)
                for g in range(G):
                    hi0[g] = _lane_max(c[g * GROUP:min(W, (g + 1) * GROUP)])
            while j < end:
                jb = min(j + block, end)
                if want_low:
                    # each group's least count before the block
                    for g in range(G):
                        low0[g] = _lane_min(c[g * GROUP:min(W, (g + 1) * GROUP)])
                if nib:
                    _add_rows_nibbles(c, packed, neighbors, j, jb, s0 // 2, step // 2)
                else:
                    _add_rows(c, cases, neighbors, j, jb, s0)
                ua = entry_u[j]
                ub = entry_u[jb - 1]
                for g in range(G):
                    r0 = g * GROUP
                    r1 = min(W, r0 + GROUP)
                    cg = c[r0:r1]
                    # integer max reductions vectorise (a boolean any() over the lanes did not)
                    mx = _lane_max(cg)
                    hit = mx >= thr_hi[ua, g0 + g]
                    hit_lo = False
                    if want_low:
                        hit_lo = low0[g] <= thr_lo[ub, g0 + g]
                    n_test += 1
                    # the entry-by-entry bound (see above): no walk when no window end reaches its threshold.
                    # Where it seldom rules a block out (few persons a location: the groups' largest counts
                    # per location are far above the typical ones) it is tried on one failing block in 16
                    if hit and not hit_lo and (4 * n_ruled >= n_tried or (n_test & 15) == 0):
                        n_tried += 1
                        hit = False
                        top = hi0[g]
                        mxl = np.int64(mx)
                        for k in range(j, jb):
                            top += rowmax[neighbors[k], g0 + g]
                            if boundary[k] != 0 and min(mxl, top) >= thr_hi[entry_u[k], g0 + g]:
                                hit = True
                                break
                        n_ruled += not hit
                    hi0[g] = mx
                    hit |= hit_lo
                    if hit:
                        n_hit += 1
                        # the group's counts back to the block's start, then the block in sub-blocks of
                        # ``sub`` entries tested alike, and those that fail entry by entry
                        _sub_rows(cg, cases, neighbors, j, jb, s0 + r0)
                        k = j
                        while k < jb:
                            kb = min(k + sub, jb)
                            if kb - k < jb - j:
                                mn = _lane_min(cg)
                                _add_rows(cg, cases, neighbors, k, kb, s0 + r0)
                                mx = _lane_max(cg)
                                go = mx >= thr_hi[entry_u[k], g0 + g]
                                if want_low:
                                    go |= mn <= thr_lo[entry_u[kb - 1], g0 + g]
                                if not go:
                                    k = kb
                                    continue
                                _sub_rows(cg, cases, neighbors, k, kb, s0 + r0)
                            _walk_group(c, m, r0, r1, k, kb, neighbors, npop, poisson, mexp, loge, logce, boundary,
                                        entry_u, cases, s0, klogk, C, N, l0, want_high, want_low, thr_hi, thr_lo,
                                        g0 + g)
                            k = kb
                j = jb
        best[part, s0:s0 + W] = m
        stats[item, 0] += n_test
        stats[item, 1] += n_hit


#: fraction of the centres whose windows are all scanned first (pilot pass): a lower
#: bound of every replicate's maximum, the pruning threshold of the first round
PILOT_FRACTION = 0.01
#: the pilot evaluates one window in this many along each of its centres' walks
PILOT_STRIDE = 8
#: consecutive window entries tested at once by the pruned kernel (see _scan_max_pruned)
BLOCK = 8
#: entries per sub-block: a group whose block test fails tests the block's sub-blocks alike before
#: walking entry by entry those that fail too
SUB_BLOCK = 4
#: each centre's smallest windows are tested one by one, in spans of ``BLOCK`` entries, before the block tests take
#: over, while at least one group in this many reaches its thresholds at an entry (0: blocks from the first entry)
HEAD_RATE = 8
#: replicates (columns of cases) per work item of the Bernoulli pruned kernel, whatever the threads: the
#: threads then share the rows of cases (one long row per window entry) and split the centres; the block
#: tests are per group, so wider items test no less (measured against 128 and 512 in
#: benchmarks/results/scan_bernoulli_sub_batch.md)
SUB_BATCH = 1024

#: Poisson windows with at least this many entries in all take the shared kernel (count thresholds per bin
#: of expected cases, :func:`_scan_max_pruned`), fewer the Poisson one of :mod:`.cpu_poisson` (bounds on the
#: LLR at each window end): the shared kernel's threshold tables cost the same whatever the windows, and
#: on small problems its block tests fail more often (benchmarks/results/scan_poisson_shared_kernel.md)
POISSON_SHARED_ENTRIES = 1_000_000


def _pilot_maxima(windows, cases, klogk, n_cases, n_total, l0, hi_on, lo_on, min_cases, plogs=None):
    """(R,) LLRs attained in each replicate by windows of a few evenly spread centres: every
    ``PILOT_STRIDE``-th window of every ``1 / PILOT_FRACTION``-th centre (and of the centre with the
    most entries), with the exhaustive kernel. ``plogs``: Poisson's ``(E, log E, log(C - E))`` per entry
    (then ``windows[2]`` is not read)."""
    offsets, neighbors, npop, boundary = windows
    m = offsets.shape[0] - 1
    R = cases.shape[1]
    sizes = np.diff(offsets)
    step = max(1, int(round(1.0 / PILOT_FRACTION)))
    pilot = np.unique(np.concatenate([[int(np.argmax(sizes))], np.arange(0, m, step)]))
    p_off = np.zeros(len(pilot) + 1, dtype=np.int64)
    np.cumsum(sizes[pilot], out=p_off[1:])
    take = np.concatenate([np.arange(offsets[i], offsets[i + 1]) for i in pilot]).astype(np.int64)
    # any attained LLR is a valid lower bound, and the counts are accumulated through all entries anyway
    pb = boundary[take].copy()
    if PILOT_STRIDE > 1:
        pos = np.arange(len(take)) - np.repeat(p_off[:-1], np.diff(p_off))
        last = np.zeros(len(take), dtype=bool)
        last[p_off[1:][np.diff(p_off) > 0] - 1] = True
        pb &= ((pos % PILOT_STRIDE == PILOT_STRIDE - 1) | last).astype(np.uint8)
    pbest = np.empty((len(pilot), R), dtype=np.float64)
    dummy = np.empty((1, 1), dtype=np.int64)
    if plogs is None:
        sz, pe = npop[take], (_NO_EXPECTED, _NO_EXPECTED, _NO_EXPECTED)
    else:
        sz, pe = _NO_POP, tuple(np.ascontiguousarray(a[take]) for a in plogs)
    _scan_batch(p_off, neighbors[take], sz, *pe, pb, cases, klogk, np.int64(n_cases), np.int64(n_total), l0, hi_on,
                lo_on, np.int64(min_cases), plogs is not None, pbest, dummy, False)
    return pbest.max(axis=0)


def _bin_thresholds(klogk, low_n, high_n, n_cases, n_total, l0, Tg, hi_on, lo_on):
    """``(thr_hi, thr_lo)`` (G, bins) count thresholds of each group threshold ``Tg[g]`` for the
    population bins of :func:`~.sizes.size_bins`: the high-rate ones at each bin's smallest
    population, the low-rate ones at its largest (conservative, see :mod:`.sizes`)."""
    C, N = np.int64(n_cases), np.int64(n_total)
    if low_n is high_n or np.array_equal(low_n, high_n):
        return _threshold_tables(klogk, low_n, C, N, l0, Tg, hi_on, lo_on)
    thr_hi, thr_lo = _threshold_tables(klogk, low_n, C, N, l0, Tg, hi_on, False)
    if lo_on:
        thr_lo = _threshold_tables(klogk, high_n, C, N, l0, Tg, False, True)[1]
    return thr_hi, thr_lo


def window_bins(windows, poisson=False):
    """The bins of the windows' sizes the pruned kernel's count thresholds are tabulated for, ``(low, high,
    entry_bin)``: :func:`~.sizes.size_bins` of the persons (Bernoulli) or :func:`~.sizes.expected_bins` of the
    expected cases (Poisson, ``poisson`` True; from the largest power of 2 at most the least positive
    expected count of a window, to the largest: windows grow along a centre's walk, so these are at its
    first and last entries)."""
    offsets, _, size, _ = windows
    if not poisson:
        return size_bins(size)
    walked = np.diff(offsets) > 0
    e_first = size[offsets[:-1][walked]]
    positive = e_first[e_first > 0]
    least = float(positive.min()) if positive.size else 1.0
    largest = float(size[offsets[1:][walked] - 1].max()) if e_first.size else 1.0
    return expected_bins(size, 2.0 ** np.floor(np.log2(least)), largest)


def max_llr_pruned(windows, cases, klogk, n_cases, n_total, direction, bins=None, min_cases=0, stats=None, *,
                   model="bernoulli", plogs=None):
    """(R,) maximum LLR of each column of ``cases``; exact, with pruning.

    A pilot pass (:func:`_pilot_maxima`) gives LLRs attained in each replicate: running maxima
    ``M`` that bound the final maxima from below, so windows with LLR <= M - margin can be skipped
    by an integer comparison of their case count (:func:`_scan_max_pruned`). The centres are then
    scanned in rounds (``ROUNDS``, a fixed shuffled order), and after each round the running maxima
    rise to the maxima found so far, the replicates are regrouped by them and the count thresholds
    recomputed: later rounds skip more. ``min_cases`` (high-rate windows need at least that many
    cases, SaTScan's default 2) raises the high-rate count thresholds to at least ``min_cases``.
    ``bins``: the window populations' bins the thresholds are tabulated for
    (:func:`~.sizes.size_bins` of ``windows[2]``, computed when not given).

    Exact: a window is skipped only when its LLR cannot exceed its replicate's running maximum,
    which some window attains, and every other window's LLR is computed by the exhaustive kernel's
    additions, so each maximum is bit for bit the exhaustive one. ``stats`` (a dict, optional) gets
    the counts of group-blocks tested and walked again.

    ``model="poisson"``: ``windows[2]`` holds the expected cases after each entry and ``n_total`` is
    not read; ``plogs`` = :func:`~.engine.poisson_logs` of them (computed when not given). With at least
    ``POISSON_SHARED_ENTRIES`` window entries, the same kernel with count thresholds of the Poisson LLR
    (:func:`~.llr._poisson_threshold_tables`) for bins of the expected cases (:func:`window_bins`) and
    the Poisson LLR where a window is evaluated; with fewer, bounds on the LLR itself at each window end
    (:func:`~.cpu_poisson.max_llr_pruned_poisson`).
    """
    offsets, neighbors, npop, boundary = windows
    m = offsets.shape[0] - 1
    R = cases.shape[1]
    if m == 0:
        return np.zeros(R)
    cases = np.ascontiguousarray(cases, dtype=np.int32)
    hi_on, lo_on = direction in ("high", "both"), direction in ("low", "both")
    poisson = model == "poisson"
    if poisson:
        if R == 0:
            return np.zeros(0)
        plogs = poisson_logs(npop, n_cases) if plogs is None else plogs
        M = _pilot_maxima(windows, cases, klogk, n_cases, n_cases, 0.0, hi_on, lo_on, min_cases, plogs=plogs)
        if offsets[-1] - offsets[0] < POISSON_SHARED_ENTRIES:
            return max_llr_pruned_poisson(windows, cases, klogk, n_cases, hi_on, lo_on, min_cases, stats, plogs, M)
        l0, pe, npop = 0.0, tuple(np.ascontiguousarray(a, dtype=np.float64) for a in plogs), _NO_POP
        if bins is None:
            bins = window_bins(windows, poisson=True)
    else:
        l0 = null_loglik(klogk, n_cases, n_total)
        M = _pilot_maxima(windows, cases, klogk, n_cases, n_total, l0, hi_on, lo_on, min_cases)
        pe = (_NO_EXPECTED, _NO_EXPECTED, _NO_EXPECTED)
        if bins is None:
            bins = window_bins(windows)
    low_n, high_n, entry_u = bins
    # 16-bit counts (twice the SIMD lanes) when every count fits: c <= C < 2**15 - 1; 8-bit rows of
    # cases (half the memory read per window entry) when every location's count fits
    cases, ctype, rtype = _narrow_counts(cases, n_cases)
    cs = _aligned_columns(cases.shape[0], R, rtype)
    G = (R + GROUP - 1) // GROUP
    rowmax = np.empty((cases.shape[0], G), dtype=rtype)
    step, n_sub, n_parts = _work_items(R, SUB_BATCH)
    # rows of counts two to a byte when every count fits a nibble and a sub-batch's halves are whole groups
    nibbles = rtype is np.int8 and int(cases.max(initial=0)) <= NIBBLE_MAX and step % (2 * GROUP) == 0
    packed = np.empty((cases.shape[0], n_sub * step // 2 if nibbles else 0), dtype=np.uint8)
    perm, rounds = _round_plan(m)
    for a, b in rounds:
        # groups of replicates with similar running maxima share a threshold
        order = np.argsort(-M, kind="stable")
        Ms = np.ascontiguousarray(M[order])
        Tg = np.array([Ms[g * GROUP:(g + 1) * GROUP].min() for g in range(G)]) - PRUNE_MARGIN
        if poisson:
            thr_hi, thr_lo = _poisson_threshold_tables(klogk, low_n, high_n, np.int64(n_cases), Tg, hi_on, lo_on)
        else:
            thr_hi, thr_lo = _bin_thresholds(klogk, low_n, high_n, n_cases, n_total, l0, Tg, hi_on, lo_on)
        if min_cases > 0:
            # a high-rate window also needs min_cases cases; the max keeps the thresholds monotone in n
            np.maximum(thr_hi, np.int32(min_cases), out=thr_hi)
        # block tests need thresholds that grow with the population (they do; checked, else one
        # entry per block, which is the entry-by-entry test)
        monotone = bool((np.diff(thr_hi, axis=1) >= 0).all() and (np.diff(thr_lo, axis=1) >= 0).all())
        block = BLOCK if monotone else 1
        # (bins, groups): the thresholds of a window end's bin for all groups in one or two cache lines
        thr_hi = np.ascontiguousarray(thr_hi.T, dtype=ctype)
        thr_lo = np.ascontiguousarray(thr_lo.T, dtype=ctype)
        _take_columns(cases, order, cs)
        _group_row_max(cs, R, GROUP, rowmax)
        if nibbles:
            _pack_nibbles(cs, np.int64(R), np.int64(step), packed)
        parts = min(n_parts, b - a)
        best = np.empty((parts, R), dtype=np.float64)
        st = np.zeros((n_sub * parts, 2), dtype=np.int64)
        _scan_max_pruned(perm[a:b], np.int64(parts), np.int64(step), offsets, neighbors, npop, poisson, *pe, boundary,
                         entry_u, cs, packed, rowmax, np.int64(R), klogk, np.int64(n_cases), np.int64(n_total), l0,
                         hi_on, lo_on, Ms, thr_hi, thr_lo, np.int64(block), np.int64(SUB_BLOCK), np.int64(HEAD_RATE),
                         best, st)
        M[order] = np.maximum(Ms, best.max(axis=0))
        if stats is not None:
            s = st.sum(axis=0)
            stats.setdefault("rounds", []).append((int(b - a), int(s[0]), int(s[1])))
    return M


#: placeholders for the per-entry array the other model uses (never read)
_NO_EXPECTED = np.zeros(1, dtype=np.float64)
_NO_POP = np.zeros(1, dtype=np.int64)


def scan_batch(windows, cases: np.ndarray, klogk: np.ndarray, n_cases: int, n_total: int,
               direction: str, want_arg: bool = False, *, model: str = "bernoulli", min_cases: int = 0,
               plogs=None):
    """Best LLR per centre for each column of ``cases`` (locations x replicates, int32).

    ``windows[2]`` is the window size after each entry: persons (Bernoulli, int64) or expected
    cases (Poisson, float64). Returns ``best`` (m, R) float64 and, with ``want_arg``,
    ``best_entry`` (m, R) int64: the CSR entry where the best window of each centre ends (-1
    when no window has a positive LLR). ``plogs``: Poisson, :func:`~.engine.poisson_logs` of
    ``windows[2]`` when already computed (an engine keeps them for the observed data and the replicates).
    """
    offsets, neighbors, size, boundary = windows
    cases = np.ascontiguousarray(cases, dtype=np.int32)
    m = offsets.shape[0] - 1
    R = cases.shape[1]
    best = np.empty((m, R), dtype=np.float64)
    best_entry = np.empty((m, R) if want_arg else (1, 1), dtype=np.int64)
    poisson = model == "poisson"
    if poisson:
        npop, l0 = _NO_POP, 0.0
        mexp, loge, logce = poisson_logs(size, n_cases) if plogs is None else plogs
    else:
        npop, l0 = size, null_loglik(klogk, n_cases, n_total)
        mexp = loge = logce = _NO_EXPECTED
    hi_on, lo_on = direction in ("high", "both"), direction in ("low", "both")
    if R == 1:
        # one column (the observed data): blocks of windows skipped by a bound, same values
        b, e = best_per_centre_blocks(offsets, neighbors, npop, mexp, loge, logce, boundary, cases[:, 0], klogk,
                                      n_cases, n_total, l0, hi_on, lo_on, min_cases, poisson,
                                      PRUNE_MARGIN + 1e-12 * float(klogk[-1]))
        return (b[:, None], e[:, None]) if want_arg else (b[:, None], None)
    _scan_batch(offsets, neighbors, npop, mexp, loge, logce, boundary, cases, klogk, np.int64(n_cases),
                np.int64(n_total), l0, hi_on, lo_on, np.int64(min_cases), poisson, best, best_entry, bool(want_arg))
    return (best, best_entry) if want_arg else (best, None)


class CpuEngine(Engine):
    """Windows and the k log k table resident in host memory; Numba kernels.

    Picklable (plain arrays), so Monte Carlo batches can run in process pools.
    """

    backend = "cpu"

    def __init__(self, windows, klogk, n_cases, n_total, direction, *, model="bernoulli", min_cases=0):
        super().__init__(windows, klogk, n_cases, n_total, direction, model=model, min_cases=min_cases)
        self.klogk = klogk
        self._bins = None
        self._plogs = None

    def best_per_centre(self, cases: np.ndarray, want_arg: bool = False):
        """(m, R) best LLR per centre [and best window end entry] for cases (L, R) int32."""
        return scan_batch(self.windows, cases, self.klogk, self.n_cases, self.n_total, self.direction, want_arg,
                          model=self.model, min_cases=self.min_cases,
                          plogs=self._poisson_logs() if self.model == "poisson" else None)

    def max_llr(self, cases: np.ndarray) -> np.ndarray:
        """(R,) maximum LLR over all windows for each column of ``cases`` (exact; both models skip
        windows that cannot matter, see :func:`max_llr_pruned`)."""
        poisson = self.model == "poisson"
        return max_llr_pruned(self.windows, cases, self.klogk, self.n_cases, self.n_total, self.direction,
                              self._window_bins(), min_cases=self.min_cases, model=self.model,
                              plogs=self._poisson_logs() if poisson else None)

    def _poisson_logs(self):
        """``(E, log E, log(C - E))`` per entry (:func:`~.engine.poisson_logs`), once per engine."""
        if self._plogs is None:
            self._plogs = poisson_logs(self.windows[2], self.n_cases)
        return self._plogs

    def _window_bins(self):
        """The bins of the window sizes and each entry's bin (:func:`window_bins`: the pruning thresholds
        are tabulated per bin); computed once per engine."""
        if self._bins is None:
            self._bins = window_bins(self.windows, poisson=self.model == "poisson")
        return self._bins

    def max_llr_penalised(self, cases: np.ndarray, penalties: np.ndarray) -> np.ndarray:
        """(R,) maximum over all windows of (its block's penalty) x LLR for each column of ``cases``
        (elliptic scans with a non-compactness penalty; exact).

        The penalty is one factor per centre block (per ellipse), so over a run of consecutive
        centres with the same factor (a shape's angles) the penalised maximum is that factor times
        the run's unpenalised maximum, which the Bernoulli model prunes as :meth:`max_llr` does
        (a slice of the CSR offsets is a run's windows: entries are absolute); so does the Poisson
        model.  Same values, bit for bit, as the maximum of ``best_per_centre`` x penalty.
        """
        pen = np.ascontiguousarray(penalties, dtype=np.float64)
        R = cases.shape[1]
        poisson = self.model == "poisson"
        bins = self._window_bins()
        plogs = self._poisson_logs() if poisson else None
        offsets, neighbors, npop, boundary = self.windows
        cuts = np.flatnonzero(np.diff(pen) != 0) + 1
        out = np.zeros(R)
        for a, b in zip(np.concatenate([[0], cuts]), np.concatenate([cuts, [len(pen)]])):
            run = (offsets[a:b + 1], neighbors, npop, boundary)
            m = max_llr_pruned(run, cases, self.klogk, self.n_cases, self.n_total, self.direction, bins,
                               min_cases=self.min_cases, model=self.model, plogs=plogs)
            np.maximum(out, pen[a] * m, out=out)
        return out
