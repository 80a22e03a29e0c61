"""The tiled gather of the KDE on the CPU (Numba): the grid walked once per tile of nearby targets.

Targets are taken in TILES of consecutive targets on a Hilbert curve (:func:`hilbert_order`): the
grid is walked once per tile and class (:func:`_tile_candidates`), the sources that can reach the
tile are copied to contiguous buffers, and each target sums them in one branch-free vectorized
loop, so the walk is paid once per tile rather than once per target.  The per-target walk
(:func:`~.cpu_gather.gather_kernel`) is the reference.

* With one bandwidth for all points (the adaptive search's pilots, fixed fits, CV) each pair is
  summed once (one exp for both directions).
* The kernels are ``2**(d^2 x -log2(e) / (2 b^2))`` by :func:`~hphawkes_py._fastmath.exp2_mul` (the
  product held in an FMA, no ln 2 reduction, a shorter polynomial than ``exp``'s), two targets per
  pass over a tile's buffer (each candidate loaded once for both; two independent chains).
* The pattern search's leave-one-out candidates go two per walk of the grid
  (:func:`gather_tiled_pair_kernel`): one index for the larger bandwidth of each source, each pair's
  squared distance once for both kernels, each sum with its own kernel's pairs.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange, types
from numba.extending import overload

from .._fastmath import _LOG2E, exp2_mul, exp2_mul_inrange, exp_fast32
from .cpu_gather import _FM, _class_rows, _row_sources, _zero

__all__ = ["gather_tiled_kernel", "gather_tiled_pair_kernel", "hilbert_order"]

# a source is buffered for a tile when (box distance)^2 x _BOX_MARGIN < its cut^2: the margin covers
# the rounding of d^2 in float32 (relative 1e-7) with room to spare
_BOX_MARGIN = 1.0 - 1e-5

_NEG_LOG2E = -_LOG2E  # the buffers hold -log2(e) / (2 b^2)


def _kexp(d2, nl2inv2, underflow):  # pragma: no cover - replaced by the overload inside Numba code
    return 2.0 ** (d2 * nl2inv2)


@overload(_kexp, inline="always")
def _kexp_ol(d2, nl2inv2, underflow):
    # the tiled gather's kernel exp(-d^2 / (2 b^2)) = 2**(d^2 nl2inv2), nl2inv2 = -log2(e) / (2 b^2)
    # as buffered: exp2_mul for float64 (the product unrounded, a shorter polynomial than exp's),
    # exp_fast32 for float32.  ``underflow`` None (its type decides, at compile time): no kept pair's
    # exponent is below -1022 (a finite cut-off of at most ``cpu.UNDERFLOW_FREE_CUTOFF`` bandwidths), so the
    # float64 kernel skips exp2_mul's range tests (the values of the pairs beyond the cut-off, which
    # the sums discard, are then meaningless)
    if d2 == types.float32:
        ln2 = np.float32(math.log(2.0))
        return lambda d2, nl2inv2, underflow: exp_fast32(d2 * nl2inv2 * ln2)
    if isinstance(underflow, types.NoneType):
        return lambda d2, nl2inv2, underflow: exp2_mul_inrange(d2, nl2inv2)
    return lambda d2, nl2inv2, underflow: exp2_mul(d2, nl2inv2)


@njit(cache=True, inline="always", fastmath=_FM)
def _buf_sum(x, y, me, nb, bx, by, bnl2, bcoef, bcut2, bidx, underflow):
    # _range_sum over the tile's buffer: same terms and the same inclusion rule (d^2 < cut^2 and not
    # the target itself), contiguous, so the loop vectorizes
    zero = _zero(x)
    part = zero
    for c in range(nb):
        dx = x - bx[c]
        dy = y - by[c]
        d2 = dx * dx + dy * dy
        v = bcoef[c] * _kexp(d2, bnl2[c], underflow)
        keep = (d2 < bcut2[c]) & (bidx[c] != me)
        part += v if keep else zero
    return part


@njit(cache=True, inline="always", fastmath=_FM)
def _d2_two(xa, ya, xb, yb, sx, sy):
    """Squared distances from (sx, sy) to two targets (the two-targets pass over a buffer)."""
    dxa = xa - sx
    dya = ya - sy
    dxb = xb - sx
    dyb = yb - sy
    return dxa * dxa + dya * dya, dxb * dxb + dyb * dyb


@njit(cache=True, inline="always", fastmath=_FM)
def _buf_sum2(xa, ya, mea, xb, yb, meb, nb, bx, by, bnl2, bcoef, bcut2, bidx, underflow):
    # _buf_sum for two targets in one pass: each candidate is loaded once for both, and the two
    # exp chains are independent (one chain alone keeps the core waiting on its FMA latencies)
    zero = _zero(xa)
    pa = zero
    pb = zero
    for c in range(nb):
        nl2 = bnl2[c]
        cut2 = bcut2[c]
        d2a, d2b = _d2_two(xa, ya, xb, yb, bx[c], by[c])
        va = bcoef[c] * _kexp(d2a, nl2, underflow)
        vb = bcoef[c] * _kexp(d2b, nl2, underflow)
        pa += va if (d2a < cut2) & (bidx[c] != mea) else zero
        pb += vb if (d2b < cut2) & (bidx[c] != meb) else zero
    return pa, pb


@njit(cache=True, fastmath=_FM)
def _flush(tx, ty, self_pos, t_order, t0, m, nb, bx, by, bnl2, bcoef, bcut2, bidx, acc, underflow):
    for i in range(0, m - 1, 2):
        ta = t_order[t0 + i]
        tb = t_order[t0 + i + 1]
        pa, pb = _buf_sum2(tx[ta], ty[ta], self_pos[ta], tx[tb], ty[tb], self_pos[tb], nb, bx, by, bnl2, bcoef,
                           bcut2, bidx, underflow)
        acc[i] += pa
        acc[i + 1] += pb
    if m % 2 == 1:
        t = t_order[t0 + m - 1]
        acc[m - 1] += _buf_sum(tx[t], ty[t], self_pos[t], nb, bx, by, bnl2, bcoef, bcut2, bidx, underflow)


@njit(cache=True, fastmath=_FM)
def _sym_one(x, y, ci, ri, nb, bx, by, bnl2, bcoef, bcut2, brank, bacc, underflow):
    zero = _zero(bx[0])
    part = zero
    for c in range(nb):
        dx = x - bx[c]
        dy = y - by[c]
        d2 = dx * dx + dy * dy
        k = _kexp(d2, bnl2[c], underflow)
        keep = (d2 < bcut2[c]) & (brank[c] > ri)
        part += bcoef[c] * k if keep else zero
        bacc[c] += ci * k if keep else zero
    return part


@njit(cache=True, fastmath=_FM)
def _flush_sym(tx, ty, scoef, t_order, t0, m, nb, bx, by, bnl2, bcoef, bcut2, brank, acc, bacc, underflow):
    # each buffered source c of rank above the target's: one exp for both directions of the pair
    # (equal bandwidths): the target gains bcoef[c] k, the source its coefficient times k.  Two
    # targets per pass, as in _buf_sum2.
    zero = _zero(bx[0])
    for i in range(0, m - 1, 2):
        ra = t0 + i
        ta = t_order[ra]
        tb = t_order[ra + 1]
        xa = tx[ta]
        ya = ty[ta]
        xb = tx[tb]
        yb = ty[tb]
        ca = scoef[ta]
        cb = scoef[tb]
        pa = zero
        pb = zero
        for c in range(nb):
            nl2 = bnl2[c]
            cut2 = bcut2[c]
            d2a, d2b = _d2_two(xa, ya, xb, yb, bx[c], by[c])
            ka = _kexp(d2a, nl2, underflow)
            kb = _kexp(d2b, nl2, underflow)
            keepa = (d2a < cut2) & (brank[c] > ra)
            keepb = (d2b < cut2) & (brank[c] > ra + 1)
            pa += bcoef[c] * ka if keepa else zero
            pb += bcoef[c] * kb if keepb else zero
            bacc[c] += (ca * ka if keepa else zero) + (cb * kb if keepb else zero)
        acc[i] += pa
        acc[i + 1] += pb
    if m % 2 == 1:
        ri = t0 + m - 1
        t = t_order[ri]
        acc[m - 1] += _sym_one(tx[t], ty[t], scoef[t], ri, nb, bx, by, bnl2, bcoef, bcut2, brank, bacc, underflow)


@njit(cache=True, inline="always")
def _tile_plan(tile_ptr, nthreads):
    """(number of tiles, largest tile, tiles per thread) of the tiled kernels: thread q takes tiles
    q, q + nthreads, ... (interleaved: tiles follow the Hilbert curve, so neighbours cost alike)."""
    ntiles = tile_ptr.shape[0] - 1
    mmax = 0
    for i in range(ntiles):
        mmax = max(mmax, tile_ptr[i + 1] - tile_ptr[i])
    return ntiles, mmax, (ntiles + nthreads - 1) // nthreads


@njit(cache=True, inline="always", fastmath=_FM)
def _tile_box(tx, ty, t_order, t0, m):
    """Bounding box (x0, x1, y0, y1), float64, of the targets ``t_order[t0:t0 + m]``."""
    t = t_order[t0]
    x0 = float(tx[t])
    x1 = x0
    y0 = float(ty[t])
    y1 = y0
    for i in range(1, m):
        t = t_order[t0 + i]
        x0 = min(x0, float(tx[t]))
        x1 = max(x1, float(tx[t]))
        y0 = min(y0, float(ty[t]))
        y1 = max(y1, float(ty[t]))
    return x0, x1, y0, y1


@njit(cache=True, inline="always", fastmath=_FM)
def _beyond_box(x0, x1, y0, y1, sxj, syj, cut2):
    """Whether a source at (sxj, syj) with squared cut-off ``cut2`` reaches no point of the box: the box
    distance is a lower bound of each member's, with a relative margin for the rounding of d^2 in
    the kernel dtype (so the sources kept are a superset of the pairs of every member)."""
    ex = max(0.0, max(x0 - float(sxj), float(sxj) - x1))
    ey = max(0.0, max(y0 - float(syj), float(syj) - y1))
    return (ex * ex + ey * ey) * _BOX_MARGIN >= cut2


@njit(cache=True, inline="always", fastmath=_FM)
def _tile_candidates(x0, x1, y0, y1, sx, sy, cut2, rank, t0, gx0, gy0, cls_s, cls_reach, cls_nx, cls_ny, cls_base,
                     cell_ptr, cand):
    """The walk of the grid for one tile: writes to ``cand`` the sorted positions of the sources that
    may reach the tile's box [x0, x1] x [y0, y1], in walk order (class, grid row, column), and returns
    how many.

    For each class the grid is walked ONCE, for the box grown by the class reach (the per-target walk
    of :func:`~.cpu_gather._gather_one` with the point replaced by the box: in every row the chord of
    the box's Minkowski sum with the disc, which contains each member's chord -- every step is
    monotone, so this holds in floating point too), and only the sources within their own cut-off
    ``cut2`` of the box are kept (:func:`_beyond_box`).  With ``rank`` not empty (the symmetric pass)
    a source ranked below the tile's first target ``t0`` is skipped: the pair belongs to the source's
    own tile (the rank test first: it drops half the sources at the cost of one integer compare).
    A source is in one cell of one class, so ``cand`` needs at most one entry per source.
    """
    sym = rank.shape[0] > 0
    nc = 0
    for k in range(cls_s.shape[0]):
        gya, gyb = _class_rows(x0, x1, y0, y1, cls_reach[k], cls_s[k], gx0, gy0, cls_nx[k], cls_ny[k])
        for gy in range(gya, gyb + 1):
            j0, j1 = _row_sources(k, gy, x0, x1, y0, y1, gx0, gy0, cls_s, cls_reach, cls_nx, cls_base, cell_ptr)
            for jj in range(j0, j1):
                if sym and rank[jj] < t0:
                    continue
                if _beyond_box(x0, x1, y0, y1, sx[jj], sy[jj], cut2[jj]):
                    continue
                cand[nc] = jj
                nc += 1
    return nc


@njit(cache=True, inline="always")
def _flush_any(sym, q, tx, ty, self_pos, scoef, t_order, t0, m, nb, bx, by, bnl2, bcoef, bcut2, bidx, brank, acc,
               bacc, out_thr, underflow):
    if sym:
        _flush_sym(tx, ty, scoef, t_order, t0, m, nb, bx, by, bnl2, bcoef, bcut2, brank, acc, bacc, underflow)
        for c in range(nb):  # the sources' shares, to this group's row
            out_thr[q, bidx[c]] += bacc[c]
            bacc[c] = 0.0
    else:
        _flush(tx, ty, self_pos, t_order, t0, m, nb, bx, by, bnl2, bcoef, bcut2, bidx, acc, underflow)


@njit(parallel=True, cache=True, fastmath=_FM)
def gather_tiled_kernel(tx, ty, self_pos, sx, sy, sinv2, scoef, scut2, gx0, gy0, cls_s, cls_reach, cls_nx, cls_ny,
                        cls_base, cell_ptr, t_order, tile_ptr, cap, nthreads, out, rank, out_thr, underflow):
    """:func:`~.cpu_gather.gather_kernel` by tiles of nearby targets (``t_order[tile_ptr[i]:tile_ptr[i + 1]]``).

    For each tile the grid is walked ONCE (:func:`_tile_candidates`).  The candidates are copied into
    contiguous per-thread buffers (``cap`` long; a full buffer is summed and reused) and each target of
    the tile sums them in one vectorized loop (:func:`_buf_sum`), with the same inclusion rule per pair
    as :func:`~.cpu_gather._range_sum`.  Same pairs as :func:`~.cpu_gather.gather_kernel`, another
    summation order; the grid walk is paid once per tile, not once per target.  The tiles are dealt
    to ``nthreads`` interleaved groups, group q taking tiles q, q + nthreads, ... in order (tiles
    follow the Hilbert curve, so neighbouring tiles cost about the same); the groups are the
    ``prange`` iterations, which Numba spreads over the threads there are.

    Symmetric mode (``rank`` not empty; every bandwidth equal and the targets = the sources, ``rank``
    = each source's position in ``t_order``): a pair is summed once, in the tile of its lower-ranked
    member, with one exp for both directions (sources ranked below the tile are not buffered, which
    halves the exps); each group adds its sources' shares to its row of ``out_thr`` (zeroed, nthreads
    x n) and the caller sums the rows; the point's own term (``self_pos`` = -1) is added as its
    coefficient (exp(0) = 1).  Same pairs, another summation order.  Each row is summed by one group
    in tile order, so the sums depend on the number of groups, never on the number of threads: the
    caller passes a fixed number of groups here (``cpu.symmetric_groups``), the thread count in the
    plain mode (where every target's sum lies in one tile and the grouping does not matter).

    ``underflow``: None when no kept pair's kernel can underflow (``cpu._underflow`` of the cut-off),
    which compiles the float64 kernel without exp2_mul's range tests (same values for every kept pair),
    else True.
    """
    sym = rank.shape[0] > 0
    ntiles, mmax, K = _tile_plan(tile_ptr, nthreads)
    # one iteration per thread (buffers allocated once), tiles interleaved between threads
    for q in prange(nthreads):
        cand = np.empty(sx.shape[0], dtype=np.int64)
        bx = np.empty(cap, dtype=sx.dtype)
        by = np.empty(cap, dtype=sx.dtype)
        bnl2 = np.empty(cap, dtype=sx.dtype)
        bcoef = np.empty(cap, dtype=sx.dtype)
        bcut2 = np.empty(cap, dtype=sx.dtype)
        bidx = np.empty(cap, dtype=np.int64)
        brank = np.empty(cap if sym else 0, dtype=np.int64)
        bacc = np.zeros(cap if sym else 0, dtype=sx.dtype)
        acc = np.empty(max(mmax, 1))
        for it in range(K):
            tile = it * nthreads + q
            if tile >= ntiles:
                break
            t0 = tile_ptr[tile]
            m = tile_ptr[tile + 1] - t0
            if m == 0:
                continue
            x0, x1, y0, y1 = _tile_box(tx, ty, t_order, t0, m)
            for i in range(m):
                acc[i] = 0.0
            nc = _tile_candidates(x0, x1, y0, y1, sx, sy, scut2, rank, t0, gx0, gy0, cls_s, cls_reach, cls_nx,
                                  cls_ny, cls_base, cell_ptr, cand)
            # the candidates by buffers of ``cap`` (the last one shorter), each summed and reused
            for c0 in range(0, nc, cap):
                nb = min(cap, nc - c0)
                for c in range(nb):
                    jj = cand[c0 + c]
                    if sym:
                        brank[c] = rank[jj]
                    bx[c] = sx[jj]
                    by[c] = sy[jj]
                    bnl2[c] = sinv2[jj] * _NEG_LOG2E
                    bcoef[c] = scoef[jj]
                    bcut2[c] = scut2[jj]
                    bidx[c] = jj
                _flush_any(sym, q, tx, ty, self_pos, scoef, t_order, t0, m, nb, bx, by, bnl2, bcoef, bcut2, bidx,
                           brank, acc, bacc, out_thr, underflow)
            for i in range(m):
                t = t_order[t0 + i]
                if sym:
                    out_thr[q, t] += acc[i] + (scoef[t] if self_pos[t] < 0 else 0.0)
                else:
                    out[t] = acc[i]


@njit(cache=True, inline="always", fastmath=_FM)
def _buf_sum_pair(x, y, me, nb, bx, by, bidx, B, underflow):
    # _buf_sum for the two kernels of a pair pass (B rows: nl2, coef, cut2 of each): the squared
    # distance is computed once for both, and the two exp chains are independent
    zero = _zero(x)
    pa = zero
    pb = zero
    for c in range(nb):
        dx = x - bx[c]
        dy = y - by[c]
        d2 = dx * dx + dy * dy
        va = B[1, c] * _kexp(d2, B[0, c], underflow)
        vb = B[4, c] * _kexp(d2, B[3, c], underflow)
        other = bidx[c] != me
        pa += va if (d2 < B[2, c]) & other else zero
        pb += vb if (d2 < B[5, c]) & other else zero
    return pa, pb


@njit(cache=True, fastmath=_FM)
def _flush_pair(tx, ty, t_order, t0, m, nb, bx, by, bidx, B, acc, underflow):
    # two targets x two kernels per pass over the buffer (four independent chains, as _buf_sum2 for
    # one kernel); a target's own term is left out by its sorted position (the targets are the sources)
    zero = _zero(bx[0])
    nla, ca, cua, nlb, cb, cub = B[0], B[1], B[2], B[3], B[4], B[5]
    for i in range(0, m - 1, 2):
        ta = t_order[t0 + i]
        tb = t_order[t0 + i + 1]
        xa = tx[ta]
        ya = ty[ta]
        xb = tx[tb]
        yb = ty[tb]
        p0 = zero
        p1 = zero
        p2 = zero
        p3 = zero
        for c in range(nb):
            d2a, d2b = _d2_two(xa, ya, xb, yb, bx[c], by[c])
            oa = bidx[c] != ta
            ob = bidx[c] != tb
            p0 += ca[c] * _kexp(d2a, nla[c], underflow) if (d2a < cua[c]) & oa else zero
            p1 += cb[c] * _kexp(d2a, nlb[c], underflow) if (d2a < cub[c]) & oa else zero
            p2 += ca[c] * _kexp(d2b, nla[c], underflow) if (d2b < cua[c]) & ob else zero
            p3 += cb[c] * _kexp(d2b, nlb[c], underflow) if (d2b < cub[c]) & ob else zero
        acc[0, i] += p0
        acc[1, i] += p1
        acc[0, i + 1] += p2
        acc[1, i + 1] += p3
    if m % 2 == 1:
        t = t_order[t0 + m - 1]
        pa, pb = _buf_sum_pair(tx[t], ty[t], t, nb, bx, by, bidx, B, underflow)
        acc[0, m - 1] += pa
        acc[1, m - 1] += pb


@njit(parallel=True, cache=True, fastmath=_FM)
def gather_tiled_pair_kernel(sx, sy, ucut2, consts, gx0, gy0, cls_s, cls_reach, cls_nx, cls_ny, cls_base, cell_ptr,
                             order, t_order, tile_ptr, cap, nthreads, out, underflow):
    """Leave-one-out sums at every source of TWO kernels in one walk (two candidates of the pattern
    search): ``out[k, t] = sum_{j != t} coef_kj exp(-d_tj^2 sinv2_kj) [d_tj^2 < cut2_kj]``, k = 0, 1.

    The index (``sx, sy``, classes, cells, ``ucut2``) is built for the larger of the two bandwidths of
    each source; ``consts`` (6, n) holds each kernel's ``sinv2, scoef, scut2`` in the index's order.  The
    walk is :func:`gather_tiled_kernel`'s with the union cut-off ``ucut2`` (a source is buffered when it
    may reach the tile under either kernel) and each pair keeps its own kernel's inclusion rule, so every
    sum has exactly the pairs of the one-kernel gather (in another order): the grid is walked once for
    the two candidates, and each pair's squared distance is computed once for both.  ``out`` (2, n)
    float64, in the points' order (``order``: sorted position -> point).  ``underflow``: as for
    :func:`gather_tiled_kernel`.
    """
    ntiles, mmax, K = _tile_plan(tile_ptr, nthreads)
    no_rank = np.empty(0, dtype=np.int64)
    for q in prange(nthreads):
        cand = np.empty(sx.shape[0], dtype=np.int64)
        bx = np.empty(cap, dtype=sx.dtype)
        by = np.empty(cap, dtype=sx.dtype)
        bidx = np.empty(cap, dtype=np.int64)
        B = np.empty((6, cap), dtype=sx.dtype)
        acc = np.empty((2, max(mmax, 1)))
        for it in range(K):
            tile = it * nthreads + q
            if tile >= ntiles:
                break
            t0 = tile_ptr[tile]
            m = tile_ptr[tile + 1] - t0
            if m == 0:
                continue
            x0, x1, y0, y1 = _tile_box(sx, sy, t_order, t0, m)
            for i in range(m):
                acc[0, i] = 0.0
                acc[1, i] = 0.0
            nc = _tile_candidates(x0, x1, y0, y1, sx, sy, ucut2, no_rank, t0, gx0, gy0, cls_s, cls_reach, cls_nx,
                                  cls_ny, cls_base, cell_ptr, cand)
            for c0 in range(0, nc, cap):
                nb = min(cap, nc - c0)
                for c in range(nb):
                    jj = cand[c0 + c]
                    bx[c] = sx[jj]
                    by[c] = sy[jj]
                    bidx[c] = jj
                    B[0, c] = consts[0, jj] * _NEG_LOG2E
                    B[1, c] = consts[1, jj]
                    B[2, c] = consts[2, jj]
                    B[3, c] = consts[3, jj] * _NEG_LOG2E
                    B[4, c] = consts[4, jj]
                    B[5, c] = consts[5, jj]
                _flush_pair(sx, sy, t_order, t0, m, nb, bx, by, bidx, B, acc, underflow)
            for i in range(m):
                t = order[t_order[t0 + i]]
                out[0, t] = acc[0, i]
                out[1, t] = acc[1, i]


@njit(cache=True)
def _hilbert_d(n, x, y):
    # position of cell (x, y) on the Hilbert curve of an n x n grid (n a power of two)
    d = 0
    s = n >> 1
    while s > 0:
        rx = 1 if (x & s) > 0 else 0
        ry = 1 if (y & s) > 0 else 0
        d += s * s * ((3 * rx) ^ ry)
        if ry == 0:
            if rx == 1:
                x = s - 1 - x
                y = s - 1 - y
            x, y = y, x
        s >>= 1
    return d


@njit(cache=True)
def hilbert_order(x, y):
    """Order of the points (x, y) along a Hilbert curve over their bounding box (2^16 x 2^16 cells):
    consecutive runs of it are compact groups of nearby points whatever the density."""
    n = x.shape[0]
    keys = np.empty(n, np.int64)
    if n == 0:
        return np.empty(0, np.int64)
    xmin = x.min()
    xmax = x.max()
    ymin = y.min()
    ymax = y.max()
    side = max(xmax - xmin, ymax - ymin)
    g = 1 << 16
    sc = (g - 1) / side if side > 0 else 0.0
    for i in range(n):
        cx = min(max(int((x[i] - xmin) * sc), 0), g - 1)
        cy = min(max(int((y[i] - ymin) * sc), 0), g - 1)
        keys[i] = _hilbert_d(g, cx, cy)
    return np.argsort(keys, kind="mergesort")
