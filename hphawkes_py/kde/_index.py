"""Uniform-grid spatial index of the kernel sources (host side, shared by the CPU and GPU engines).

Sources are split into bandwidth classes ``b in [b_min 2^k, b_min 2^(k+1))`` so that a source is
only looked for within the reach (``cutoff x b``) of its own class: with adaptive bandwidths the
largest bandwidth can be many times the typical one, and a single grid sized for the largest reach
would make every sum scan far too many points.  Each class has its own grid of square cells (a quarter
of its reach, fewer if that would make more than ~4 cells per source); a target visits the grid rows
within reach and, in each row, the cells under the chord of its disc.  Cells are numbered row-major
and the sources sorted by (class, cell), so the cells of one chord form ONE contiguous range of the
structure-of-arrays -- the inner loops run over contiguous memory.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

__all__ = ["SourceIndex", "build_index"]

_MAX_CLASSES = 60
_CELL_FRACTION = 0.25
# bandwidth classes span a factor 2**_CLASS_LOG2: finer classes waste less reach on small bandwidths
_CLASS_LOG2 = 0.5


@njit(cache=True)
def _counting_sort(key, nkeys):
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


@dataclass
class SourceIndex:
    order: np.ndarray  # (n,) sorted position -> original index
    pos: np.ndarray  # (n,) original index -> sorted position
    sx: np.ndarray
    sy: np.ndarray
    sinv2: np.ndarray  # 1 / (2 b^2)
    scoef: np.ndarray  # w / (2 pi b^2)
    scut2: np.ndarray  # (cutoff b)^2
    gx0: float
    gy0: float
    cls_s: np.ndarray  # (C,) cell side
    cls_reach: np.ndarray  # (C,) cutoff x largest bandwidth of the class
    cls_nx: np.ndarray  # (C,) int64
    cls_ny: np.ndarray
    cls_base: np.ndarray  # (C,) offset of the class's cells in cell_ptr
    cell_ptr: np.ndarray  # (sum(nx*ny)+1,) start of each cell's sources


def build_index(x, y, bws, weights, cutoff, lo, hi) -> SourceIndex:
    """Index sources (x, y) with bandwidths ``bws`` and weights; ``lo``/``hi`` bound every target."""
    n = len(x)
    bmin = float(bws.min())
    ratio = bws / bmin
    cls = np.minimum(np.floor(np.log2(ratio) / _CLASS_LOG2).astype(np.int64), _MAX_CLASSES - 1)
    cls = np.maximum(cls, 0)
    used = np.flatnonzero(np.bincount(cls, minlength=_MAX_CLASSES))
    remap = np.full(_MAX_CLASSES, -1, np.int64)
    remap[used] = np.arange(len(used))
    cls = remap[cls]
    C = len(used)
    gx0, gy0 = float(lo[0]), float(lo[1])
    width = max(float(hi[0] - lo[0]), 1e-300)
    height = max(float(hi[1] - lo[1]), 1e-300)
    cls_s = np.empty(C)
    cls_reach = np.empty(C)
    cls_nx = np.empty(C, np.int64)
    cls_ny = np.empty(C, np.int64)
    cls_base = np.empty(C, np.int64)
    cellid = np.empty(n, np.int64)
    base = 0
    for k in range(C):
        members = cls == k
        nk = int(members.sum())
        reach = cutoff * float(bws[members].max()) if math.isfinite(cutoff) else math.inf
        # cap the number of cells at ~4 per source (and 2^22 in all) so tiny bandwidths over a huge
        # extent do not allocate a giant, nearly empty grid; larger cells keep the 3x3 search exact.
        max_cells = max(16, min(4 * nk, 1 << 22))
        s_min = math.sqrt(width * height / max_cells)
        if not math.isfinite(reach):
            reach = 2.0 * math.hypot(width, height)
        # cells of a quarter of the reach: the rows within reach are visited, and in each row only the
        # chord of the disc (rounded out to whole cells), so about (pi + 1) reach^2 of area is scanned
        # instead of 9 reach^2 for 3 x 3 cells of side reach
        s = max(reach * _CELL_FRACTION, s_min, width / 65536.0, height / 65536.0)
        cls_reach[k] = reach * (1.0 + 1e-12)
        nx = int(width // s) + 1
        ny = int(height // s) + 1
        cls_s[k], cls_nx[k], cls_ny[k], cls_base[k] = s, nx, ny, base
        # same expression as the kernels (floor of the quotient) so cells agree bit for bit
        cx = np.clip(np.floor((x[members] - gx0) / s).astype(np.int64), 0, nx - 1)
        cy = np.clip(np.floor((y[members] - gy0) / s).astype(np.int64), 0, ny - 1)
        cellid[members] = base + cy * nx + cx
        base += nx * ny
    order, cell_ptr = _counting_sort(cellid, base)
    pos = np.empty(n, np.int64)
    pos[order] = np.arange(n)
    b = bws[order]
    return SourceIndex(
        order=order,
        pos=pos,
        sx=np.ascontiguousarray(x[order]),
        sy=np.ascontiguousarray(y[order]),
        sinv2=1.0 / (2.0 * b * b),
        scoef=weights[order] / (2.0 * math.pi * b * b),
        scut2=(cutoff * b) ** 2 if math.isfinite(cutoff) else np.full(n, np.inf),
        gx0=gx0,
        gy0=gy0,
        cls_s=cls_s,
        cls_reach=cls_reach,
        cls_nx=cls_nx,
        cls_ny=cls_ny,
        cls_base=cls_base,
        cell_ptr=cell_ptr,
    )
