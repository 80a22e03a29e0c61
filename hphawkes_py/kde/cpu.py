"""CPU engine of :mod:`hphawkes_py.kde`: Numba kernels (``prange`` over targets / points).

Hot steps
---------
* ``gather``: intensity at targets = sum over sources within ``cutoff x b_j`` of
  ``w_j exp(-d^2 / (2 b_j^2)) / (2 pi b_j^2)``, sources found through the grid index of
  :mod:`.engine` (3 contiguous ranges per class per target; the inner loop is branch-free and
  vectorizes with :func:`hphawkes_py._fastmath.exp_fast`, or its float32 twin).
* ``edge_mass``: mass of N(x_j, b_j^2 I) over the window's inside cells, as a sum over bands of
  identical raster rows of (1-D y mass of the band) x (sum over the band's runs of inside cells of
  1-D x masses) -- exact cell integrals by the normal CDF, O(bands in reach x runs) per point
  instead of O(cells in reach) (a rectangle is one band: 4 CDFs per point).
"""
from __future__ import annotations

import math

import numba
import numpy as np
from numba import njit, prange, types
from numba.extending import overload

from .._fastmath import exp_fast, exp_fast32
from .engine import EDGE_REACH, Engine, SourceIndex

__all__ = ["CpuEngine", "counting_sort", "edge_mass_kernel", "gather_kernel"]

_SQRT1_2 = 1.0 / math.sqrt(2.0)
#: targets per block of the interleaved parallel loop
_BLOCK = 32


@njit(cache=True)
def counting_sort(key, nkeys):
    """Stable order of ``key`` (ints in [0, nkeys)) and the start of each key: O(n + nkeys)."""
    ptr = np.zeros(nkeys + 1, np.int64)
    for k in key:
        ptr[k + 1] += 1
    for i in range(nkeys):
        ptr[i + 1] += ptr[i]
    fill = ptr[:-1].copy()
    order = np.empty(key.shape[0], np.int64)
    for i in range(key.shape[0]):
        k = key[i]
        order[fill[k]] = i
        fill[k] += 1
    return order, ptr


def _expg(v):  # pragma: no cover - replaced by the overload inside Numba code
    return math.exp(v)


@overload(_expg, inline="always")
def _expg_ol(v):
    # one generic kernel for both precisions: the vectorizable exp of the kernel dtype
    if v == types.float32:
        return lambda v: exp_fast32(v)
    return lambda v: exp_fast(v)


def _zero(v):  # pragma: no cover - replaced by the overload inside Numba code
    return 0.0


@overload(_zero, inline="always")
def _zero_ol(v):
    # a literal zero of the kernel dtype (a constant, so the float64 loop compiles as before)
    if v == types.float32:
        return lambda v: np.float32(0.0)
    return lambda v: 0.0


@njit(cache=True, inline="always")
def _ndtr(z):
    return 0.5 * math.erfc(-z * 0.7071067811865476)


@njit(parallel=True, cache=True)
def edge_mass_kernel(px, py, bws, idx, x0, y0, cs, nrows, ncols, band_r0, band_r1, band_ptr, runs_c0, runs_c1,
                     row_band, reach, out):
    """out[k] = window mass of N((px, py)[idx[k]], bws[idx[k]]^2 I), exact per-cell integrals.

    Sum over the bands of identical rows that meet [y - R, y + R] (R = reach x b) of
    (normal mass of the band's y-range) x (sum over its runs of x masses).  The normal CDF at every
    column and row edge within reach is memoised per point, so each edge costs at most one CDF however
    many bands/runs share it (ragged masks like the eBird US one), while a rectangle costs 4 CDFs;
    edges beyond the reach count as CDF 0 or 1 (error < 1e-18).
    """
    for k in prange(idx.shape[0]):
        j = idx[k]
        x = px[j]
        y = py[j]
        b = bws[j]
        R = reach * b
        r_top = nrows - 1 - int(math.floor((y + R - y0) / cs))
        r_bot = nrows - 1 - int(math.floor((y - R - y0) / cs))
        r_top = max(r_top, 0)
        r_bot = min(r_bot, nrows - 1)
        ca = int(max(math.floor((x - R - x0) / cs), 0.0))
        cb = int(min(math.floor((x + R - x0) / cs) + 1.0, float(ncols)))
        mass = 0.0
        if r_top <= r_bot and ca <= cb:
            # memo tables of the CDF at column edges ca..cb and at the top edges of rows
            # r_top..r_bot+1 (the last = bottom edge of row r_bot); -1 = not computed yet, so a
            # rectangle costs 4 CDFs and a ragged mask at most one per edge within reach
            cdf = np.full(cb - ca + 1, -1.0)
            ydf = np.full(r_bot - r_top + 2, -1.0)
            for g in range(row_band[r_top], row_band[r_bot] + 1):
                lo = band_ptr[g]
                hi = band_ptr[g + 1]
                if lo == hi:
                    continue
                # band rows [r0, r1); edges beyond the reach count as CDF 1 (top) or 0 (bottom)
                r0 = band_r0[g]
                r1 = band_r1[g]
                ftop = 1.0
                if r0 >= r_top:
                    if ydf[r0 - r_top] < 0.0:
                        ydf[r0 - r_top] = _ndtr((y0 + (nrows - r0) * cs - y) / b)
                    ftop = ydf[r0 - r_top]
                fbot = 0.0
                if r1 <= r_bot + 1:
                    if ydf[r1 - r_top] < 0.0:
                        ydf[r1 - r_top] = _ndtr((y0 + (nrows - r1) * cs - y) / b)
                    fbot = ydf[r1 - r_top]
                my = ftop - fbot
                if my == 0.0:
                    continue
                # first run ending right of column ca (runs sorted, disjoint)
                a = lo
                z = hi
                while a < z:
                    mid = (a + z) // 2
                    if runs_c1[mid] <= ca:
                        a = mid + 1
                    else:
                        z = mid
                mx = 0.0
                for r in range(a, hi):
                    c0 = runs_c0[r]
                    if c0 > cb:
                        break
                    c1 = min(runs_c1[r], cb)
                    f0 = 0.0
                    if c0 >= ca:
                        if cdf[c0 - ca] < 0.0:
                            cdf[c0 - ca] = _ndtr((x0 + c0 * cs - x) / b)
                        f0 = cdf[c0 - ca]
                    if cdf[c1 - ca] < 0.0:
                        cdf[c1 - ca] = _ndtr((x0 + c1 * cs - x) / b)
                    mx += cdf[c1 - ca] - f0
                mass += my * mx
        out[k] = mass


# reassociation lets LLVM vectorize the sum; no nnan/ninf flags (scut2 may be +inf when cutoff=inf)
# and no arcp (cell indices must be computed with exact divisions, as in _index.py)
_FM = {"reassoc", "contract", "nsz"}


@njit(cache=True, inline="always", fastmath=_FM)
def _range_sum(x, y, me, j0, j1, sx, sy, sinv2, scoef, scut2):
    # branch-free body so the loop vectorizes (exp_fast has no libm call); the sum runs in the
    # kernel dtype (x, sx, ... all float64 or all float32: mixing blocks LLVM's vectorizer) and
    # the caller adds it to a float64 accumulator
    zero = _zero(x)
    part = zero
    for j in range(j0, j1):
        dx = x - sx[j]
        dy = y - sy[j]
        d2 = dx * dx + dy * dy
        v = scoef[j] * _expg(-d2 * sinv2[j])
        keep = (d2 < scut2[j]) & (j != me)
        part += v if keep else zero
    return part


@njit(parallel=True, cache=True, fastmath=_FM)
def gather_kernel(tx, ty, self_pos, sx, sy, sinv2, scoef, scut2, gx0, gy0, cls_s, cls_reach, cls_nx, cls_ny,
                  cls_base, cell_ptr, nthreads, out):
    """out[t] = sum_j scoef_j exp(-d_tj^2 sinv2_j) [d^2 < scut2_j, j != self_pos[t]] via the grid.

    ``tx, ty, sx, sy, sinv2, scoef, scut2`` share the kernel dtype (float64 or float32); the grid
    geometry is computed in float64 (exact for float32 coordinates) and ``out`` is float64.

    For each class, the grid rows within the class reach of the target are visited; in each row only
    the columns within the disc's chord are read (one contiguous range of sources per row).
    """
    nt = tx.shape[0]
    nblocks = (nt + _BLOCK - 1) // _BLOCK
    K = (nblocks + nthreads - 1) // nthreads
    # prange hands each thread one contiguous range of the iteration space; targets are sorted by
    # cell, so contiguous ranges would give one thread all the dense clusters.  Iteration q is mapped
    # to block (q mod K) * nthreads + q // K: each thread gets every nthreads-th block (interleaved).
    for q in prange(K * nthreads):
        blk = (q % K) * nthreads + q // K
        if blk >= nblocks:
            continue
        for t in range(blk * _BLOCK, min((blk + 1) * _BLOCK, nt)):
            out[t] = _gather_one(tx[t], ty[t], self_pos[t], sx, sy, sinv2, scoef, scut2, gx0, gy0, cls_s, cls_reach,
                                 cls_nx, cls_ny, cls_base, cell_ptr)


@njit(cache=True, fastmath=_FM)
def _gather_one(x, y, me, sx, sy, sinv2, scoef, scut2, gx0, gy0, cls_s, cls_reach, cls_nx, cls_ny, cls_base,
                cell_ptr):
    C = cls_s.shape[0]
    acc = 0.0
    for k in range(C):
        s = cls_s[k]
        reach = cls_reach[k]
        nx = cls_nx[k]
        ny = cls_ny[k]
        fy0 = math.floor((y - reach - gy0) / s)
        fy1 = math.floor((y + reach - gy0) / s)
        fx0 = math.floor((x - reach - gx0) / s)
        fx1 = math.floor((x + reach - gx0) / s)
        if fy1 < 0.0 or fx1 < 0.0 or fy0 > ny - 1 or fx0 > nx - 1:
            continue
        gya = int(max(fy0, 0.0))
        gyb = int(min(fy1, ny - 1.0))
        r2 = reach * reach
        base = cls_base[k]
        for gy in range(gya, gyb + 1):
            ylo = gy0 + gy * s
            dy = max(0.0, max(ylo - y, y - (ylo + s)))
            rem = r2 - dy * dy
            if rem < 0.0:
                continue
            hw = math.sqrt(rem)
            xa = int(max(math.floor((x - hw - gx0) / s), 0.0))
            xb = int(min(math.floor((x + hw - gx0) / s), nx - 1.0))
            if xa > xb:
                continue
            row = base + gy * nx
            acc += _range_sum(x, y, me, cell_ptr[row + xa], cell_ptr[row + xb + 1], sx, sy, sinv2, scoef, scut2)
    return acc


@njit(parallel=True, cache=True, fastmath=_FM)
def direct_kernel(tx, ty, sx, sy, sinv2, scoef, scut2, out):
    """out[t] = sum over ALL sources j of scoef_j exp(-d_tj^2 sinv2_j) [d^2 < scut2_j] (no index):
    for a few sources (a relabelling's smaller group) this beats visiting grid rows."""
    k = sx.shape[0]
    for t in prange(tx.shape[0]):
        out[t] = _range_sum(tx[t], ty[t], -1, 0, k, sx, sy, sinv2, scoef, scut2)


#: at most this many sources are summed directly by ``intensity_at(..., sources=...)``
DIRECT_MAX_SOURCES = 256


class CpuEngine(Engine):
    """Hot steps of the KDE on the CPU (Numba); see :class:`~.engine.Engine` for their meaning.

    The Numba thread count is the caller's (the public entry points set it with
    :func:`hphawkes_py._backend.threads_context`).
    """

    backend = "cpu"
    _sort = staticmethod(counting_sort)

    def _edge_mass_subset(self, bws, idx):
        w = self.window
        r0, r1, bptr, c0, c1, row_band = w.row_bands()
        res = np.empty(len(idx))
        edge_mass_kernel(
            self.x, self.y, bws, idx, w.x0, w.y0, w.cell_size, w.mask.shape[0], w.mask.shape[1], r0, r1, bptr, c0,
            c1, row_band, EDGE_REACH, res,
        )
        return res

    def _gather(self, ix: SourceIndex, tx, ty, self_pos):
        T = self.dtype
        c = lambda a: np.ascontiguousarray(a, dtype=T)  # noqa: E731  (no copy in float64)
        out = np.empty(len(tx))
        gather_kernel(
            c(tx), c(ty), np.ascontiguousarray(self_pos, np.int64), c(ix.sx), c(ix.sy), c(ix.sinv2), c(ix.scoef),
            c(ix.scut2), ix.gx0, ix.gy0, ix.cls_s, ix.cls_reach, ix.cls_nx, ix.cls_ny, ix.cls_base, ix.cell_ptr,
            numba.get_num_threads(), out,
        )
        return out

    def intensity_at(self, targets, bws, weights, sources=None):
        if sources is None or len(sources) > DIRECT_MAX_SOURCES:
            return super().intensity_at(targets, bws, weights, sources)
        # a few sources: every target sums all of them in one vectorized loop, no index to build
        T = self.dtype
        src = np.asarray(sources, dtype=np.int64)
        b = np.ascontiguousarray(bws, dtype=np.float64)
        w = np.ascontiguousarray(weights, dtype=np.float64)
        scut2 = (self.cutoff * b) ** 2 if math.isfinite(self.cutoff) else np.full(len(b), np.inf)
        t = np.asarray(targets, dtype=np.float64)
        c = lambda a: np.ascontiguousarray(a, dtype=T)  # noqa: E731
        out = np.empty(len(t))
        direct_kernel(c(t[:, 0]), c(t[:, 1]), c(self.x[src]), c(self.y[src]), c(1.0 / (2.0 * b * b)),
                      c(w / (2.0 * math.pi * b * b)), c(scut2), out)
        return out
