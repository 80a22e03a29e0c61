"""The per-target walk of the KDE's grid index on the CPU (Numba), and the grid-walk primitives the
tiled gather of :mod:`.cpu_tiled` shares.

``gather``: intensity at targets = sum over sources within ``cutoff x b_j`` of
``w_j exp(-d^2 / (2 b_j^2)) / (2 pi b_j^2)``, the sources found through the grid index of
:mod:`.engine`: for each bandwidth class, the grid rows within the class reach of the target, and
in each row one contiguous range of sources under the disc's chord (:func:`_row_sources`).
:func:`gather_kernel` walks the grid once per target; it is the reference of the tiled gather
(``CpuEngine.tiled = False``).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange, types
from numba.extending import overload

from .._fastmath import exp_fast, exp_fast32

__all__ = ["direct_kernel", "gather_kernel"]

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
    # a literal zero of the kernel dtype (a constant: the float64 loop adds a literal 0.0)
    if v == types.float32:
        return lambda v: np.float32(0.0)
    return lambda v: 0.0


# reassociation lets LLVM vectorize the sum; no nnan/ninf flags (scut2 may be +inf when cutoff=inf)
# and no arcp (cell indices must be computed with exact divisions, as in the index of engine.py)
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

