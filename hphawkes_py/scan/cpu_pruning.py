"""What the pruned Monte Carlo kernels of the purely spatial scans share (Numba).

The pruned kernel of :mod:`.cpu` (Bernoulli, and Poisson with many window entries) and the Poisson one of
:mod:`.cpu_poisson` take the replicates in groups of ``GROUP`` columns and sub-batches of whole groups
(:func:`_work_items`, :func:`_work_item`), the centres in rounds (:func:`_round_plan`), and add the rows of
cases of a window's entries for all of a sub-batch's columns at once (:func:`_add_rows`, :func:`_sub_rows`),
in the narrowest types the counts fit (:func:`_narrow_counts`), from columns reordered by running maximum
(:func:`_take_columns`) into rows that start on cache lines (:func:`_aligned_columns`); counts of at most
``NIBBLE_MAX`` are read two to a byte (:func:`_pack_nibbles`, :func:`_add_rows_nibbles`): the additions are
bound by the rows' bytes read.
"""
from __future__ import annotations

import functools

import numba
import numpy as np
from numba import njit, prange

#: replicates per pruning group (one 64-byte cache line of int16 case counts; a compile-time
#: constant of every pruned kernel, Bernoulli, Poisson and space-time: fixed trip counts)
GROUP = 32

#: margin below the running maxima, far above the rounding of the table-based LLR
PRUNE_MARGIN = 1e-6

#: rows of counts are packed two to a byte (:func:`_pack_nibbles`) when every location's count is at most this
NIBBLE_MAX = 15

#: the pruned pass takes the centres (in a fixed shuffled order) in rounds ending at these
#: fractions of them; the running maxima (hence the pruning thresholds) rise after each round
ROUNDS = (0.02, 0.06, 0.15, 0.35, 1.0)


@njit(cache=True, inline="always")
def _eight_rows(rows, neighbors, k, s0, width):
    """The columns ``s0:s0 + width`` of the rows of ``rows`` of the window entries ``k..k+7`` (views)."""
    return (rows[neighbors[k], s0:s0 + width], rows[neighbors[k + 1], s0:s0 + width],
            rows[neighbors[k + 2], s0:s0 + width], rows[neighbors[k + 3], s0:s0 + width],
            rows[neighbors[k + 4], s0:s0 + width], rows[neighbors[k + 5], s0:s0 + width],
            rows[neighbors[k + 6], s0:s0 + width], rows[neighbors[k + 7], s0:s0 + width])


@njit(cache=True, inline="always")
def _add_rows(c, cases, neighbors, j, jb, s0):
    """``c += cases[neighbors[k], s0:s0 + len(c)]`` for the entries ``k = j..jb-1``, eight rows at a time
    (their sum first, in the counts' type: one load and store of ``c`` per eight rows instead of per row)."""
    R = c.shape[0]
    k = j
    while k + 8 <= jb:
        r0, r1, r2, r3, r4, r5, r6, r7 = _eight_rows(cases, neighbors, k, s0, R)
        for r in range(R):
            a = (c.dtype.type(r0[r]) + c.dtype.type(r1[r])) + (c.dtype.type(r2[r]) + c.dtype.type(r3[r]))
            b = (c.dtype.type(r4[r]) + c.dtype.type(r5[r])) + (c.dtype.type(r6[r]) + c.dtype.type(r7[r]))
            c[r] += a + b
        k += 8
    while k < jb:
        row = cases[neighbors[k], s0:s0 + R]
        for r in range(R):
            c[r] += row[r]
        k += 1


@njit(cache=True, inline="always")
def _add_rows_nibbles(c, packed, neighbors, j, jb, p0, H):
    """:func:`_add_rows` from rows of packed counts (:func:`_pack_nibbles`): ``c[:H] +=`` the low nibbles and
    ``c[H:2 H] +=`` the high nibbles of ``packed[neighbors[k], p0:p0 + H]``, ``k = j..jb-1``. Half the bytes
    read per window entry; eight rows at a time, their nibble sums in 8 bits (at most 8 x 15) and their byte
    sums in 16, the high nibbles' sum being the difference over 16."""
    lo = c[:H]
    hi = c[H:2 * H]
    m4 = np.uint8(15)
    k = j
    while k + 8 <= jb:
        r0, r1, r2, r3, r4, r5, r6, r7 = _eight_rows(packed, neighbors, k, p0, H)
        for r in range(H):
            whole = ((np.uint16(r0[r]) + np.uint16(r1[r])) + (np.uint16(r2[r]) + np.uint16(r3[r]))
                     + ((np.uint16(r4[r]) + np.uint16(r5[r])) + (np.uint16(r6[r]) + np.uint16(r7[r]))))
            low = np.uint8(((r0[r] & m4) + (r1[r] & m4)) + ((r2[r] & m4) + (r3[r] & m4))
                           + (((r4[r] & m4) + (r5[r] & m4)) + ((r6[r] & m4) + (r7[r] & m4))))
            lo[r] += low
            hi[r] += (whole - np.uint16(low)) >> 4
        k += 8
    while k < jb:
        row = packed[neighbors[k], p0:p0 + H]
        for r in range(H):
            lo[r] += row[r] & m4
            hi[r] += row[r] >> 4
        k += 1


@njit(cache=True, parallel=True)
def _pack_nibbles(cases, R, step, packed):
    """``packed[l, s step / 2 + q]``: ``cases[l, s step + q]`` in the low nibble and ``cases[l, s step + step / 2
    + q]`` in the high one, for each sub-batch ``s`` of ``step`` columns (columns from ``R`` on count 0), rows in
    parallel; every count must be at most ``NIBBLE_MAX``."""
    H = step // 2
    for l in prange(cases.shape[0]):
        for s0 in range(0, packed.shape[1] * 2, step):
            for q in range(H):
                a = s0 + q
                b = a + H
                lo = np.uint8(cases[l, a]) if a < R else np.uint8(0)
                hi = np.uint8(cases[l, b]) if b < R else np.uint8(0)
                packed[l, s0 // 2 + q] = lo | (hi << np.uint8(4))


@njit(cache=True, inline="always")
def _sub_rows(c, cases, neighbors, j, jb, s0):
    """``c -= cases[neighbors[k], s0:s0 + len(c)]`` for the entries ``k = j..jb-1`` (undoes :func:`_add_rows`)."""
    R = c.shape[0]
    for k in range(j, jb):
        row = cases[neighbors[k], s0:s0 + R]
        for r in range(R):
            c[r] -= row[r]


@njit(cache=True, inline="always")
def _work_item(item, n_parts, step, R, nc):
    """Work item ``item`` of a pruned round over ``R`` replicates and ``nc`` centres:
    ``(part, s0, W, first, last)``, its columns ``s0:s0 + W`` (sub-batch ``item // n_parts`` of
    ``step`` columns: consecutive items share their columns, which stay in a core's cache) and its
    part of the centres, ``first:last``."""
    s = item // n_parts
    part = item - s * n_parts
    s0 = s * step
    return part, s0, min(R, s0 + step) - s0, part * nc // n_parts, (part + 1) * nc // n_parts


@njit(cache=True, inline="always")
def _lane_max(cg):
    """The largest of the counts ``cg`` (a group's lanes, a view: integer max reductions over a view indexed from 0
    vectorise)."""
    mx = cg[0]
    for k in range(cg.shape[0]):
        mx = max(mx, cg[k])
    return mx


@njit(cache=True, inline="always")
def _lane_min(cg):
    """The least of the counts ``cg`` (see :func:`_lane_max`)."""
    mn = cg[0]
    for k in range(cg.shape[0]):
        mn = min(mn, cg[k])
    return mn


@njit(cache=True, inline="always")
def _group_min(m, r0, r1):
    """The smallest of ``m[r0:r1]`` (a group's smallest maximum in the pruned kernels)."""
    gm = m[r0]
    for r in range(r0 + 1, r1):
        gm = min(gm, m[r])
    return gm


def _narrow_counts(cases, n_cases):
    """``(cases, ctype, rtype)`` of a pruned pass: ``ctype`` holds any window's count of the ``n_cases``
    cases (int16 when it can), ``rtype`` every location's (int8 when every count fits), and ``cases``
    narrowed to ``rtype`` once (its columns are reordered every round)."""
    ctype = np.int16 if n_cases < 2**15 - 1 else np.int32
    rtype = np.int8 if cases.size and int(cases.max()) <= 127 else ctype
    return cases.astype(rtype), ctype, rtype


def _aligned_columns(L, R, dtype):
    """An empty (L, R') array of ``dtype``, R' >= R columns, whose rows start on 64-byte boundaries: a
    sub-batch's slice of a row then spans whole cache lines (two, not three, for 128 one-byte
    columns), fewer lines per window entry in the Bernoulli walk."""
    item = np.dtype(dtype).itemsize
    cols = -(-R * item // 64) * 64 // item
    buf = np.empty(L * cols * item + 64, dtype=np.uint8)
    first = (-buf.ctypes.data) % 64
    return buf[first:first + L * cols * item].view(dtype).reshape(L, cols)


@njit(cache=True, parallel=True)
def _group_row_max(cases, R, group, out):
    """``out[l, g]``: the largest of ``cases[l, g * group:(g + 1) * group]`` (of the first ``R`` columns), rows in
    parallel."""
    for l in prange(cases.shape[0]):
        for g in range(out.shape[1]):
            r0 = g * group
            v = cases[l, r0]
            for r in range(r0 + 1, min(R, r0 + group)):
                v = max(v, cases[l, r])
            out[l, g] = v


@njit(cache=True, parallel=True)
def _take_columns(cases, order, out):
    """``out[:, :len(order)] = cases[:, order]``, rows in parallel."""
    for l in prange(cases.shape[0]):
        for j in range(order.shape[0]):
            out[l, j] = cases[l, order[j]]


def _work_items(R, sub_batch, per_thread=None):
    """``(step, n_sub, n_parts)``: the work items of a pruned kernel's round over ``R`` replicates, ``n_sub``
    sub-batches of ``step`` columns (whole groups; ``sub_batch``, or fewer when that leaves under
    ``per_thread`` sub-batches per thread; ``None``: no such limit) times ``n_parts`` parts of the centres
    (as many as it takes to make four items per thread)."""
    G = (R + GROUP - 1) // GROUP
    threads = numba.get_num_threads()
    groups = sub_batch // GROUP
    if per_thread is not None:
        groups = min(groups, G // (per_thread * threads))
    step = GROUP * max(1, groups)
    n_sub = (R + step - 1) // step
    return step, n_sub, max(1, -(-4 * threads // n_sub))


@functools.lru_cache(maxsize=16)
def _round_plan(m):
    """``(perm, rounds)``: the shuffled order of ``m`` centres and the rounds (see ``ROUNDS``), each the
    non-empty range ``perm[a:b]`` as ``(a, b)``."""
    perm = np.random.default_rng(0x5CA7).permutation(m).astype(np.int64)
    perm.setflags(write=False)
    ends = sorted({min(m, max(1, int(round(f * m)))) for f in ROUNDS} | {m})
    return perm, tuple((a, b) for a, b in zip([0] + ends[:-1], ends) if b > a)
