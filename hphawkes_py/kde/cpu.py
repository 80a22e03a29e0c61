"""CPU engine of :mod:`hphawkes_py.kde`: Numba kernels (``prange`` over targets / points).

Hot steps
---------
* ``gather``: intensity at targets = sum over sources within ``cutoff x b_j`` of
  ``w_j exp(-d^2 / (2 b_j^2)) / (2 pi b_j^2)``, sources found through the grid index of
  :mod:`.engine`.  By default by TILES of ``TILE`` targets consecutive on a Hilbert curve
  (:func:`gather_tiled_kernel`): the grid is walked once per tile and class, the sources that can
  reach the tile are copied to contiguous buffers, and each target sums them in one branch-free
  vectorized loop -- 3.2x faster than the per-target walk on the sim50000 adaptive search (one
  thread).  The per-target walk (:func:`gather_kernel`: one contiguous range per grid row in reach,
  ~58 rows per target late in the search) stays as the reference (``CpuEngine.tiled = False`` or
  ``cpu.TILED = False``).
* ``edge_mass``: mass of N(x_j, b_j^2 I) over the window's inside cells, as a sum over bands of
  identical raster rows of (1-D y mass of the band) x (sum over the band's runs of inside cells of
  1-D x masses) -- exact cell integrals by the normal CDF, O(bands in reach x runs) per point
  instead of O(cells in reach) (a rectangle is one band: 4 CDFs per point).  On ragged masks the
  CDF at every row and column edge in reach is computed up front in vectorised loops
  (:func:`~hphawkes_py._fastmath.ndtr_monotone`) and the runs are summed without branches: ~4x
  less time per point than the memoised scalar CDFs on the eBird mask at its widest bandwidths.
* With one bandwidth for all points (the adaptive search's pilots, fixed fits, CV) the tiled
  gather sums each pair once (one exp for both directions).
* The tiled gather's kernels are ``2**(d^2 x -log2(e) / (2 b^2))`` by
  :func:`~hphawkes_py._fastmath.exp2_mul` (the product held in an FMA, no ln 2 reduction, a degree-11
  polynomial: 14 instead of 19 multiplies/FMAs per pair), two targets per pass over a tile's buffer
  (each candidate loaded once for both; two independent chains).  Measured on sim50000, one thread:
  the search 6.4-6.7 s -> 4.9-5.9 s with the edge masses' direct path for one band and run.
* The pattern search's leave-one-out candidates go two per walk of the grid
  (:func:`gather_tiled_pair_kernel`, ``CpuEngine.point_intensities_many``): one index for the larger
  bandwidth of each source, each pair's squared distance once for both kernels, each sum with its own
  kernel's pairs.  On sim50000, one thread, two candidates: 50 -> 42 ms at the optimum (where the
  walk is ~40 % of the time), 154 -> 135 ms at the first step's bandwidth.  ``CpuEngine.paired =
  False`` evaluates them one at a time (the reference).
"""
from __future__ import annotations

import math

import numba
import numpy as np
from numba import njit, prange, types
from numba.extending import overload

from .._fastmath import _LOG2E, exp2_mul, exp2_mul_inrange, exp_fast, exp_fast32, fdiv, ndtr_fast, ndtr_monotone
from .engine import EDGE_REACH, Engine, SourceIndex, build_index, kernel_constants, kernel_rows

__all__ = ["CpuEngine", "edge_mass_kernel", "gather_kernel", "gather_tiled_kernel", "gather_tiled_pair_kernel",
           "hilbert_order"]

#: targets per block of the interleaved parallel loop
_BLOCK = 32


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


# FMAs only: no reassociation, which could move the table's edge coordinates off the memoised values
_FM_EDGE = {"contract"}


@njit(cache=True, fastmath=_FM_EDGE)
def _fill_cdf(out, origin, k0, dk, cs, centre, b):
    """``out[i] = Phi((origin + (k0 + i dk) cs - centre) / b)``: the CDF at consecutive raster edges
    (the same arithmetic as the memoised entries); the arguments are monotone in ``i``."""
    for i in range(out.shape[0]):
        out[i] = fdiv(origin + (k0 + i * dk) * cs - centre, b)
    ndtr_monotone(out)


@njit(cache=True, inline="always")
def _mass_memo(x, y, b, x0, y0, cs, nrows, r_top, r_bot, ca, cb, g0, g1, band_r0, band_r1, band_ptr,
               runs_c0, runs_c1):
    """Window mass over bands g0..g1-1 with the CDF memoised per edge: a rectangle costs 4 CDFs."""
    # CDF at column edges ca..cb and at the top edges of rows r_top..r_bot+1 (the last = bottom
    # edge of row r_bot); -1 = not computed yet
    cdf = np.full(cb - ca + 1, -1.0)
    ydf = np.full(r_bot - r_top + 2, -1.0)
    mass = 0.0
    for g in range(g0, g1):
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
                ydf[r0 - r_top] = ndtr_fast((y0 + (nrows - r0) * cs - y) / b)
            ftop = ydf[r0 - r_top]
        fbot = 0.0
        if r1 <= r_bot + 1:
            if ydf[r1 - r_top] < 0.0:
                ydf[r1 - r_top] = ndtr_fast((y0 + (nrows - r1) * cs - y) / b)
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
                    cdf[c0 - ca] = ndtr_fast((x0 + c0 * cs - x) / b)
                f0 = cdf[c0 - ca]
            if cdf[c1 - ca] < 0.0:
                cdf[c1 - ca] = ndtr_fast((x0 + c1 * cs - x) / b)
            mx += cdf[c1 - ca] - f0
        mass += my * mx
    return mass


@njit(cache=True, inline="always")
def _mass_one_run(x, y, b, x0, y0, cs, nrows, r_top, r_bot, ca, cb, r0, r1, c0, c1):
    """:func:`_mass_memo` when a single band of rows [r0, r1) with a single run of columns [c0, c1)
    is in reach (a rectangular window, or a point deep inside one): the same four CDFs, the same
    expressions and bits, without the memo tables (their allocation was most of the time)."""
    if c0 > cb:
        return 0.0
    ftop = 1.0
    if r0 >= r_top:
        ftop = ndtr_fast((y0 + (nrows - r0) * cs - y) / b)
    fbot = 0.0
    if r1 <= r_bot + 1:
        fbot = ndtr_fast((y0 + (nrows - r1) * cs - y) / b)
    my = ftop - fbot
    if my == 0.0:
        return 0.0
    f0 = 0.0
    if c0 >= ca:
        f0 = ndtr_fast((x0 + c0 * cs - x) / b)
    cc = min(c1, cb)
    return my * (ndtr_fast((x0 + cc * cs - x) / b) - f0)


@njit(cache=True, inline="always")
def _mass_dense(x, y, b, x0, y0, cs, nrows, r_top, r_bot, ca, cb, g0, g1, band_r0, band_r1, band_ptr,
                runs_c0, runs_c1, run_band):
    """The same sum with every edge's CDF in reach computed up front by :func:`_fill_cdf`.

    ``cdf[0] = 0`` stands for every column edge left of the reach and ``cdf[n]`` (column ``cb``) for
    every edge right of it, so a run costs two clamped loads and no branch or search (runs outside
    ``[ca, cb]`` add ``cdf[i] - cdf[i] = 0``).  The bands' y masses go to a table first and the runs
    of all bands are summed in ONE loop (``run_band``: each run's band), without a loop of ~3 runs
    per band whose exit mispredicts: 18 % faster on the eBird mask.
    """
    n = cb - ca + 1
    cdf = np.empty(n + 1)
    cdf[0] = 0.0
    _fill_cdf(cdf[1:], x0, ca, 1, cs, x, b)
    ydf = np.empty(r_bot - r_top + 2)
    _fill_cdf(ydf, y0, nrows - r_top, -1, cs, y, b)
    my = np.empty(g1 - g0)
    for g in range(g1 - g0):
        # band rows [r0, r1); edges beyond the reach count as CDF 1 (top) or 0 (bottom)
        r0 = band_r0[g0 + g]
        r1 = band_r1[g0 + g]
        ftop = ydf[max(r0 - r_top, 0)]
        ftop = ftop if r0 >= r_top else 1.0
        fbot = ydf[min(r1 - r_top, r_bot + 1 - r_top)]
        fbot = fbot if r1 <= r_bot + 1 else 0.0
        my[g] = ftop - fbot
    # views from 0 (an index of unknown sign would get Numba's wraparound test)
    ra = band_ptr[g0]
    rb = band_ptr[g1]
    c0 = runs_c0[ra:rb]
    c1 = runs_c1[ra:rb]
    band = run_band[ra:rb]
    mass = 0.0
    for r in range(c0.shape[0]):
        i0 = min(max(c0[r] - ca + 1, 0), n)
        i1 = min(max(c1[r] - ca + 1, 0), n)
        mass += my[band[r] - g0] * (cdf[i1] - cdf[i0])
    return mass


@njit(parallel=True, cache=True)
def edge_mass_kernel(px, py, bws, idx, x0, y0, cs, nrows, ncols, band_r0, band_r1, band_ptr, runs_c0, runs_c1,
                     row_band, run_band, reach, out, dense_edges=4):
    """out[k] = window mass of N((px, py)[idx[k]], bws[idx[k]]^2 I), exact per-cell integrals.

    Sum over the bands of identical rows that meet [y - R, y + R] (R = reach x b) of
    (normal mass of the band's y-range) x (sum over its runs of x masses); edges beyond the reach
    count as CDF 0 or 1 (error < 4 Phi(-reach)).  Where the bands and runs in reach need most edges'
    CDFs anyway (ragged masks such as the eBird US one: ~1 band per row, ~3 runs per band), all of
    them are computed in one vectorised pass (:func:`_mass_dense`, ~4 ns per edge instead of ~35 ns
    for a scalar CDF, and no search per band; ``run_band``: the band of each run); otherwise (few
    bands in reach) each edge's CDF is computed on first use (:func:`_mass_memo`), with the same
    :func:`~hphawkes_py._fastmath.ndtr_fast`, and with one band of one run in reach (a rectangle)
    its four CDFs directly (:func:`_mass_one_run`, the memo path's bits).  ``dense_edges``: a
    point's tables are dense when (bands in reach) x dense_edges >= its row edges and (runs in
    reach) x dense_edges >= its column edges (0: never; both paths give the same masses to
    rounding).
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
            g0 = row_band[r_top]
            g1 = row_band[r_bot] + 1
            if g1 - g0 == 1 and band_ptr[g1] - band_ptr[g0] == 1 and runs_c1[band_ptr[g0]] > ca:
                lo = band_ptr[g0]
                mass = _mass_one_run(x, y, b, x0, y0, cs, nrows, r_top, r_bot, ca, cb, band_r0[g0], band_r1[g0],
                                     runs_c0[lo], runs_c1[lo])
            elif (dense_edges * (g1 - g0) >= r_bot - r_top + 2
                  and dense_edges * (band_ptr[g1] - band_ptr[g0]) >= cb - ca + 1):
                mass = _mass_dense(x, y, b, x0, y0, cs, nrows, r_top, r_bot, ca, cb, g0, g1, band_r0, band_r1,
                                   band_ptr, runs_c0, runs_c1, run_band)
            else:
                mass = _mass_memo(x, y, b, x0, y0, cs, nrows, r_top, r_bot, ca, cb, g0, g1, band_r0, band_r1,
                                  band_ptr, runs_c0, runs_c1)
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


@njit(cache=True, inline="always", fastmath=_FM)
def _class_rows(x0, x1, y0, y1, reach, s, gx0, gy0, nx, ny):
    """The grid rows [gya, gyb] of a bandwidth class (cell side ``s``, origin ``gx0, gy0``,
    ``nx x ny`` cells) that hold sources within ``reach`` of the box [x0, x1] x [y0, y1] (a point:
    x0 = x1, y0 = y1); gya > gyb when none."""
    fy0 = math.floor((y0 - reach - gy0) / s)
    fy1 = math.floor((y1 + reach - gy0) / s)
    fx0 = math.floor((x0 - reach - gx0) / s)
    fx1 = math.floor((x1 + reach - gx0) / s)
    if fy1 < 0.0 or fx1 < 0.0 or fy0 > ny - 1 or fx0 > nx - 1:
        return 0, -1
    return int(max(fy0, 0.0)), int(min(fy1, ny - 1.0))


@njit(cache=True, inline="always", fastmath=_FM)
def _row_span(gy, x0, x1, y0, y1, r2, s, gx0, gy0, nx):
    """The cells [xa, xb] of grid row ``gy`` within sqrt(r2) of the box (xa > xb when none): the
    row's vertical distance to the box leaves a horizontal half-width of sqrt(r2 - dy^2)."""
    ylo = gy0 + gy * s
    dy = max(0.0, max(ylo - y1, y0 - (ylo + s)))
    rem = r2 - dy * dy
    if rem < 0.0:
        return 0, -1
    hw = math.sqrt(rem)
    return int(max(math.floor((x0 - hw - gx0) / s), 0.0)), int(min(math.floor((x1 + hw - gx0) / s), nx - 1.0))


@njit(cache=True, inline="always", fastmath=_FM)
def _row_sources(k, gy, x0, x1, y0, y1, gx0, gy0, cls_s, cls_reach, cls_nx, cls_base, cell_ptr):
    """[j0, j1): the sources of class ``k``'s grid row ``gy`` under the chord of the box grown by the
    class reach (one contiguous range of the sorted sources; j0 = j1 when none)."""
    reach = cls_reach[k]
    nx = cls_nx[k]
    xa, xb = _row_span(gy, x0, x1, y0, y1, reach * reach, cls_s[k], gx0, gy0, nx)
    if xa > xb:
        return 0, 0
    row = cls_base[k] + gy * nx
    return cell_ptr[row + xa], cell_ptr[row + xb + 1]


@njit(cache=True, fastmath=_FM)
def _gather_one(x, y, me, sx, sy, sinv2, scoef, scut2, gx0, gy0, cls_s, cls_reach, cls_nx, cls_ny, cls_base,
                cell_ptr):
    acc = 0.0
    for k in range(cls_s.shape[0]):
        gya, gyb = _class_rows(x, x, y, y, cls_reach[k], cls_s[k], gx0, gy0, cls_nx[k], cls_ny[k])
        for gy in range(gya, gyb + 1):
            j0, j1 = _row_sources(k, gy, x, x, y, y, gx0, gy0, cls_s, cls_reach, cls_nx, cls_base, cell_ptr)
            acc += _range_sum(x, y, me, j0, j1, sx, sy, sinv2, scoef, scut2)
    return acc


@njit(parallel=True, cache=True, fastmath=_FM)
def direct_kernel(tx, ty, sx, sy, sinv2, scoef, scut2, out):
    """out[t] = sum over ALL sources j of scoef_j exp(-d_tj^2 sinv2_j) [d^2 < scut2_j] (no index):
    for a few sources (a relabelling's smaller group) this beats visiting grid rows."""
    k = sx.shape[0]
    for t in prange(tx.shape[0]):
        out[t] = _range_sum(tx[t], ty[t], -1, 0, k, sx, sy, sinv2, scoef, scut2)


# --------------------------------------------------------------------------- tiled gather
#: targets per tile of the tiled gather (runs of the Hilbert order of the targets)
TILE = 16
#: candidates buffered per tile before they are summed (then the buffer is reused)
TILE_CAP = 1024
#: the tiled gather is the default; ``False`` selects the per-target walk (the reference)
TILED = True
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
    # exponent is below -1022 (a finite cut-off of at most UNDERFLOW_FREE_CUTOFF bandwidths), so the
    # float64 kernel skips exp2_mul's range tests (the values of the pairs beyond the cut-off, which
    # the sums discard, are then meaningless)
    if d2 == types.float32:
        ln2 = np.float32(math.log(2.0))
        return lambda d2, nl2inv2, underflow: exp_fast32(d2 * nl2inv2 * ln2)
    if isinstance(underflow, types.NoneType):
        return lambda d2, nl2inv2, underflow: exp2_mul_inrange(d2, nl2inv2)
    return lambda d2, nl2inv2, underflow: exp2_mul(d2, nl2inv2)


#: kept pairs (d < cutoff b) have exponents d^2 log2(e) / (2 b^2) of at most cutoff^2 log2(e) / 2 in
#: size: below 1022 (no subnormal kernel) up to a cutoff of sqrt(2044 ln 2) = 37.6; 30 leaves room
UNDERFLOW_FREE_CUTOFF = 30.0


def _underflow(cutoff):
    """The tiled kernels' ``underflow`` argument for a cut-off: None when no kept pair can underflow."""
    return None if cutoff <= UNDERFLOW_FREE_CUTOFF else True


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
    # exp chains are independent (with exp_nonpos one chain alone kept the core waiting on its FMA
    # latencies: 2.2 -> 1.9 ns per pair, one thread; with the shorter exp2_mul the two loops come
    # out about equal in isolation, and the shared loads remain)
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


@njit(cache=True, inline="always")
def _flush_any(sym, q, tx, ty, self_pos, scoef, t_order, t0, m, nb, bx, by, bnl2, bcoef, bcut2, bidx, brank, acc,
               bacc, out_thr, underflow):
    if sym:
        _flush_sym(tx, ty, scoef, t_order, t0, m, nb, bx, by, bnl2, bcoef, bcut2, brank, acc, bacc, underflow)
        for c in range(nb):  # the sources' shares, to this thread's row
            out_thr[q, bidx[c]] += bacc[c]
            bacc[c] = 0.0
    else:
        _flush(tx, ty, self_pos, t_order, t0, m, nb, bx, by, bnl2, bcoef, bcut2, bidx, acc, underflow)


@njit(parallel=True, cache=True, fastmath=_FM)
def gather_tiled_kernel(tx, ty, self_pos, sx, sy, sinv2, scoef, scut2, gx0, gy0, cls_s, cls_reach, cls_nx, cls_ny,
                        cls_base, cell_ptr, t_order, tile_ptr, cap, nthreads, out, rank, out_thr, underflow):
    """:func:`gather_kernel` by tiles of nearby targets (``t_order[tile_ptr[i]:tile_ptr[i + 1]]``).

    For each tile and class the grid is walked ONCE, for the tile's bounding box grown by the class
    reach (the per-target walk of :func:`_gather_one` with the point replaced by the box: in every row
    the chord of the box's Minkowski sum with the disc, which contains each member's chord -- every
    step is monotone, so this holds in floating point too).  The candidates within their own cut-off
    of the box are copied into contiguous per-thread buffers (``cap`` long; a full buffer is summed
    and reused) and each target of the tile sums them in one vectorized loop (:func:`_buf_sum`), with
    the same inclusion rule per pair as :func:`_range_sum`.  Same pairs as :func:`gather_kernel`,
    another summation order; the grid walk is paid once per tile instead of once per target.
    Threads take every ``nthreads``-th tile (tiles follow the Hilbert curve, so neighbouring tiles
    cost about the same).

    Symmetric mode (``rank`` not empty; every bandwidth equal and the targets = the sources, ``rank``
    = each source's position in ``t_order``): a pair is summed once, in the tile of its lower-ranked
    member, with one exp for both directions (sources ranked below the tile are not buffered, which
    halves the exps); each thread adds its sources' shares to its row of ``out_thr`` (zeroed, nthreads
    x n) and the caller sums the rows; the point's own term (``self_pos`` = -1) is added as its
    coefficient (exp(0) = 1).  Same pairs, another summation order.

    ``underflow``: None when no kept pair's kernel can underflow (:func:`_underflow` of the cut-off),
    which compiles the float64 kernel without exp2_mul's range tests (same values for every kept pair),
    else True.
    """
    sym = rank.shape[0] > 0
    ntiles, mmax, K = _tile_plan(tile_ptr, nthreads)
    C = cls_s.shape[0]
    # one iteration per thread (buffers allocated once), tiles interleaved between threads
    for q in prange(nthreads):
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
            nb = 0
            for k in range(C):
                gya, gyb = _class_rows(x0, x1, y0, y1, cls_reach[k], cls_s[k], gx0, gy0, cls_nx[k], cls_ny[k])
                for gy in range(gya, gyb + 1):
                    j0, j1 = _row_sources(k, gy, x0, x1, y0, y1, gx0, gy0, cls_s, cls_reach, cls_nx, cls_base,
                                          cell_ptr)
                    for jj in range(j0, j1):
                        # only the sources within their own cut-off of the box
                        # (the rank test first: it drops half the sources of the symmetric walk at
                        # the cost of one integer compare)
                        if sym and rank[jj] < t0:  # the pair belongs to the source's own tile
                            continue
                        if _beyond_box(x0, x1, y0, y1, sx[jj], sy[jj], scut2[jj]):
                            continue
                        if sym:
                            brank[nb] = rank[jj]
                        bx[nb] = sx[jj]
                        by[nb] = sy[jj]
                        bnl2[nb] = sinv2[jj] * _NEG_LOG2E
                        bcoef[nb] = scoef[jj]
                        bcut2[nb] = scut2[jj]
                        bidx[nb] = jj
                        nb += 1
                        if nb == cap:
                            _flush_any(sym, q, tx, ty, self_pos, scoef, t_order, t0, m, nb, bx, by, bnl2, bcoef,
                                       bcut2, bidx, brank, acc, bacc, out_thr, underflow)
                            nb = 0
            if nb > 0:
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
    C = cls_s.shape[0]
    for q in prange(nthreads):
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
            nb = 0
            for k in range(C):
                gya, gyb = _class_rows(x0, x1, y0, y1, cls_reach[k], cls_s[k], gx0, gy0, cls_nx[k], cls_ny[k])
                for gy in range(gya, gyb + 1):
                    j0, j1 = _row_sources(k, gy, x0, x1, y0, y1, gx0, gy0, cls_s, cls_reach, cls_nx, cls_base,
                                          cell_ptr)
                    for jj in range(j0, j1):
                        if _beyond_box(x0, x1, y0, y1, sx[jj], sy[jj], ucut2[jj]):
                            continue
                        bx[nb] = sx[jj]
                        by[nb] = sy[jj]
                        bidx[nb] = jj
                        B[0, nb] = consts[0, jj] * _NEG_LOG2E
                        B[1, nb] = consts[1, jj]
                        B[2, nb] = consts[2, jj]
                        B[3, nb] = consts[3, jj] * _NEG_LOG2E
                        B[4, nb] = consts[4, jj]
                        B[5, nb] = consts[5, jj]
                        nb += 1
                        if nb == cap:
                            _flush_pair(sx, sy, t_order, t0, m, nb, bx, by, bidx, B, acc, underflow)
                            nb = 0
            if nb > 0:
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


def tiles(order, tile=None):
    """``tile_ptr`` of the runs of ``tile`` targets along ``order`` (the last run shorter)."""
    tile = max(1, TILE if tile is None else int(tile))
    n = len(order)
    return np.append(np.arange(0, n, tile, dtype=np.int64), np.int64(n))


def run_bands(band_ptr: np.ndarray) -> np.ndarray:
    """The band of each run (``band_ptr`` of :meth:`Window.row_bands`)."""
    return np.repeat(np.arange(len(band_ptr) - 1, dtype=np.int64), np.diff(band_ptr))


def _equal_bandwidths(ix: SourceIndex) -> bool:
    """Whether every source has the same kernel (the same 1 / (2 b^2) and cut-off)."""
    return (len(ix.sinv2) > 0 and len(ix.cls_s) == 1 and ix.sinv2.min() == ix.sinv2.max()
            and ix.scut2.min() == ix.scut2.max())


#: at most this many sources are summed directly by ``intensity_at(..., sources=...)``
DIRECT_MAX_SOURCES = 256


class CpuEngine(Engine):
    """Hot steps of the KDE on the CPU (Numba); see :class:`~.engine.Engine` for their meaning.

    The Numba thread count is the caller's (the public entry points set it with
    :func:`hphawkes_py._backend.threads_context`).
    """

    backend = "cpu"
    #: see :func:`edge_mass_kernel` (0: every CDF memoised on first use, the reference path)
    dense_edges = 4

    def _edge_mass_subset(self, bws, idx):
        w = self.window
        r0, r1, bptr, c0, c1, row_band = w.row_bands()
        res = np.empty(len(idx))
        edge_mass_kernel(
            self.x, self.y, bws, idx, w.x0, w.y0, w.cell_size, w.mask.shape[0], w.mask.shape[1], r0, r1, bptr, c0,
            c1, row_band, run_bands(bptr), EDGE_REACH, res, self.dense_edges,
        )
        return res

    #: tiled gather (None: the module's ``TILED``); ``False`` is the per-target reference walk
    tiled = None
    #: one exp per pair when every bandwidth is equal (tiled gather only); ``False``: both directions
    symmetric = True
    _hilbert = None  # Hilbert order of the points (the leave-one-out targets), on first use
    _targets_order = None  # (tx, ty, Hilbert order) of the last other targets

    def _points_order(self, ix: SourceIndex):
        """The points as targets, in their Hilbert order (computed once per engine), as positions in
        the index ``ix``'s sorted order."""
        if self._hilbert is None:
            self._hilbert = hilbert_order(self.x, self.y)
        return ix.pos[self._hilbert]

    def _use_tiles(self):
        return TILED if self.tiled is None else bool(self.tiled)

    def _gather_points(self, ix: SourceIndex, loo: bool):
        if not self._use_tiles():
            return super()._gather_points(ix, loo)
        self_pos = np.arange(self.n, dtype=np.int64) if loo else np.full(self.n, -1, np.int64)
        t_order = self._points_order(ix)
        if self.symmetric and _equal_bandwidths(ix):
            return self._gather_symmetric(ix, self_pos, t_order)
        return self._gather(ix, ix.sx, ix.sy, self_pos, t_order=t_order)

    #: ``point_intensities_many`` runs two leave-one-out candidates per walk of the grid
    #: (:func:`gather_tiled_pair_kernel`); ``False``: one at a time (the reference)
    paired = True

    def point_intensities_many(self, cases, loo: bool):
        if not (loo and self.paired and self._use_tiles() and len(cases) > 1 and self.n > 0):
            return super().point_intensities_many(cases, loo)
        out = []
        for i in range(0, len(cases) - 1, 2):
            out.extend(self._point_intensities_pair(*cases[i], *cases[i + 1]))
        if len(cases) % 2:
            out.append(self.point_intensities(*cases[-1], loo))
        return out

    def _point_intensities_pair(self, bws_a, w_a, bws_b, w_b):
        # one index for the larger bandwidth of each source; each kernel's constants in its order (the
        # expressions of kernel_constants, same bits), so each pair term is the one-kernel gather's
        T = self.dtype
        c = lambda a: np.ascontiguousarray(a, dtype=T)  # noqa: E731
        bws_a, w_a, bws_b, w_b = (np.ascontiguousarray(a, dtype=np.float64) for a in (bws_a, w_a, bws_b, w_b))
        ix = build_index(self.x, self.y, np.maximum(bws_a, bws_b), np.ones(self.n), self.cutoff, self._lo, self._hi,
                         sort=self._sort)
        consts = np.empty((6, self.n), dtype=T)
        kernel_rows(ix.order, bws_a, w_a, self.cutoff, consts[:3])
        kernel_rows(ix.order, bws_b, w_b, self.cutoff, consts[3:])
        t_order = self._points_order(ix)
        out = np.empty((2, self.n))
        gather_tiled_pair_kernel(c(ix.sx), c(ix.sy), c(ix.scut2), consts, ix.gx0, ix.gy0, ix.cls_s, ix.cls_reach,
                                 ix.cls_nx, ix.cls_ny, ix.cls_base, ix.cell_ptr, ix.order, t_order, tiles(t_order),
                                 TILE_CAP, numba.get_num_threads(), out, _underflow(self.cutoff))
        return out[0], out[1]

    def _gather_symmetric(self, ix: SourceIndex, self_pos, t_order):
        # one bandwidth (a pilot, a fixed-bandwidth fit or CV): each pair once, one exp for both
        T = self.dtype
        c = lambda a: np.ascontiguousarray(a, dtype=T)  # noqa: E731
        nthreads = numba.get_num_threads()
        rank = np.empty(self.n, np.int64)
        rank[t_order] = np.arange(self.n, dtype=np.int64)
        out_thr = np.zeros((nthreads, self.n), dtype=T)
        sx, sy = c(ix.sx), c(ix.sy)
        gather_tiled_kernel(sx, sy, self_pos, sx, sy, c(ix.sinv2), c(ix.scoef), c(ix.scut2), ix.gx0, ix.gy0,
                            ix.cls_s, ix.cls_reach, ix.cls_nx, ix.cls_ny, ix.cls_base, ix.cell_ptr, t_order,
                            tiles(t_order), TILE_CAP, nthreads, np.empty(0), rank, out_thr,
                            _underflow(self.cutoff))
        return out_thr.sum(axis=0, dtype=np.float64)

    def _gather(self, ix: SourceIndex, tx, ty, self_pos, t_order=None):
        T = self.dtype
        c = lambda a: np.ascontiguousarray(a, dtype=T)  # noqa: E731  (no copy in float64)
        out = np.empty(len(tx))
        args = (c(tx), c(ty), np.ascontiguousarray(self_pos, np.int64), c(ix.sx), c(ix.sy), c(ix.sinv2),
                c(ix.scoef), c(ix.scut2), ix.gx0, ix.gy0, ix.cls_s, ix.cls_reach, ix.cls_nx, ix.cls_ny, ix.cls_base,
                ix.cell_ptr)
        if not self._use_tiles() or len(tx) == 0:
            gather_kernel(*args, numba.get_num_threads(), out)
            return out
        if t_order is None:
            # the Hilbert order of the last targets is kept: the Monte Carlo relabellings of
            # :mod:`.relrisk` and the surfaces gather at the same targets many times
            tx64 = np.ascontiguousarray(tx, np.float64)
            ty64 = np.ascontiguousarray(ty, np.float64)
            last = self._targets_order
            if last is not None and np.array_equal(last[0], tx64) and np.array_equal(last[1], ty64):
                t_order = last[2]
            else:
                t_order = hilbert_order(tx64, ty64)
                self._targets_order = (tx64.copy(), ty64.copy(), t_order)
        gather_tiled_kernel(*args, t_order, tiles(t_order), TILE_CAP, numba.get_num_threads(), out,
                            np.empty(0, np.int64), np.empty((0, 0), dtype=T), _underflow(self.cutoff))
        return out

    def intensity_at(self, targets, bws, weights, sources=None):
        if sources is None or len(sources) > DIRECT_MAX_SOURCES:
            return super().intensity_at(targets, bws, weights, sources)
        # a few sources: every target sums all of them in one vectorized loop, no index to build
        T = self.dtype
        src = np.asarray(sources, dtype=np.int64)
        sinv2, scoef, scut2 = kernel_constants(bws, weights, self.cutoff)
        t = np.asarray(targets, dtype=np.float64)
        if T == np.float32:  # as Engine.intensity_at: targets rounded once
            t = t.astype(np.float32).astype(np.float64)
        c = lambda a: np.ascontiguousarray(a, dtype=T)  # noqa: E731
        out = np.empty(len(t))
        direct_kernel(c(t[:, 0]), c(t[:, 1]), c(self.x[src]), c(self.y[src]), c(sinv2), c(scoef), c(scut2), out)
        return out
