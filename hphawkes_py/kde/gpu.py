"""GPU engine of :mod:`hphawkes_py.kde` (PyCUDA on a real device, or the CPU emulator).

Same interface as :class:`hphawkes_py.kde.cpu.CPUEngine`.  The points and the window's row bands
go to the device once.  Each kernel-sum call uploads the source index (sorted coordinates and
per-source constants, O(n)) because the bandwidths change at every step of the search, and brings
back the n (or m) intensities; the edge kernel brings back the masses of the points near the
boundary.  Kernels: ``hphawkes_py/gpu/kernels/kde.cu``.
"""
from __future__ import annotations

import math

import numpy as np

from .._backend import get_device
from ..gpu.device import KERNELS_DIR
from ._index import build_index
from ._window import Window
from .cpu import EDGE_REACH, EDGE_SKIP

__all__ = ["GPUEngine"]

#: threads per block of the edge kernel (bands of one point) and of the gather kernel
EDGE_BLOCK = 64
GATHER_BLOCK = 128


class GPUEngine:
    """Hot KDE sums on a ``Device`` (``backend="gpu"`` or ``"emulator"``)."""

    def __init__(self, points: np.ndarray, window: Window, cutoff: float, backend: str = "emulator",
                 dtype=np.float64):
        self.backend = backend
        self.dev = dev = get_device(backend)
        self.dtype = np.dtype(dtype)
        real = "double" if self.dtype == np.float64 else "float"
        mod = dev.module(KERNELS_DIR / "kde.cu", defines={"REAL": real})
        self._edge_fn = mod.function("kde_edge_mass")
        self._gather_fn = mod.function("kde_gather")
        self.x = np.ascontiguousarray(points[:, 0], dtype=np.float64)
        self.y = np.ascontiguousarray(points[:, 1], dtype=np.float64)
        self.n = len(self.x)
        self.window = window
        self.cutoff = float(cutoff)
        self.dist = window.boundary_distance(points)
        xmin, xmax, ymin, ymax = window.extent
        self._lo = np.array([min(xmin, self.x.min()), min(ymin, self.y.min())])
        self._hi = np.array([max(xmax, self.x.max()), max(ymax, self.y.max())])
        r0, r1, bptr, c0, c1, row_band = window.row_bands()
        pad = lambda a: a if len(a) else np.zeros(1, np.int64)  # noqa: E731  (no zero-size buffers)
        self.d_px = dev.to_device(self.x.astype(self.dtype))
        self.d_py = dev.to_device(self.y.astype(self.dtype))
        self.d_bands = [dev.to_device(np.ascontiguousarray(pad(a), np.int64)) for a in (r0, r1, bptr, c0, c1, row_band)]

    def __getstate__(self):
        raise TypeError("the GPU KDE engine holds device buffers and cannot be pickled")

    def _r(self, v):
        return self.dtype.type(v)

    # -- edge correction ---------------------------------------------------------------------
    def near_boundary(self, bws):
        return np.flatnonzero(self.dist <= EDGE_SKIP * bws).astype(np.int64)

    def edge_masses(self, bws: np.ndarray) -> np.ndarray:
        out = np.ones(self.n)
        idx = self.near_boundary(bws)
        if len(idx):
            dev = self.dev
            w = self.window
            d_b = dev.to_device(np.ascontiguousarray(bws, self.dtype))
            d_idx = dev.to_device(idx)
            d_out = dev.empty((len(idx),), self.dtype)
            dev.launch(self._edge_fn, (len(idx), 1, 1), (EDGE_BLOCK, 1, 1), [
                self.d_px, self.d_py, d_b, d_idx, self._r(w.x0), self._r(w.y0), self._r(w.cell_size),
                np.int32(w.mask.shape[0]), *self.d_bands, self._r(EDGE_REACH), d_out,
            ], shared_bytes=EDGE_BLOCK * self.dtype.itemsize)
            out[idx] = dev.to_host(d_out)
        return out

    # -- kernel sums -------------------------------------------------------------------------
    def _index(self, bws, weights):
        return build_index(self.x, self.y, np.asarray(bws, float), np.asarray(weights, float), self.cutoff,
                           self._lo, self._hi)

    def _gather(self, ix, tx, ty, self_pos):
        dev = self.dev
        T = self.dtype
        scut2 = ix.scut2 if math.isfinite(self.cutoff) else np.full(self.n, np.finfo(T).max)
        args = [
            dev.to_device(np.ascontiguousarray(tx, T)), dev.to_device(np.ascontiguousarray(ty, T)),
            dev.to_device(np.ascontiguousarray(self_pos, np.int64)), np.int64(len(tx)),
            dev.to_device(ix.sx.astype(T)), dev.to_device(ix.sy.astype(T)), dev.to_device(ix.sinv2.astype(T)),
            dev.to_device(ix.scoef.astype(T)), dev.to_device(scut2.astype(T)), T.type(ix.gx0), T.type(ix.gy0),
            dev.to_device(ix.cls_s.astype(T)), dev.to_device(ix.cls_reach.astype(T)),
            dev.to_device(ix.cls_nx), dev.to_device(ix.cls_ny), dev.to_device(ix.cls_base), np.int32(len(ix.cls_s)),
            dev.to_device(ix.cell_ptr),
        ]
        d_out = dev.empty((len(tx),), T)
        grid = max(1, min((len(tx) + GATHER_BLOCK - 1) // GATHER_BLOCK, 65535))
        dev.launch(self._gather_fn, (grid, 1, 1), (GATHER_BLOCK, 1, 1), args + [d_out])
        return dev.to_host(d_out).astype(np.float64)

    def point_intensities(self, bws, weights, loo: bool) -> np.ndarray:
        # targets in source (cell) order so neighbouring threads read the same cells
        ix = self._index(bws, weights)
        self_pos = np.arange(self.n, dtype=np.int64) if loo else np.full(self.n, -1, np.int64)
        vals = self._gather(ix, ix.sx, ix.sy, self_pos)
        out = np.empty(self.n)
        out[ix.order] = vals
        return out

    def intensity_at(self, targets, bws, weights) -> np.ndarray:
        t = np.asarray(targets, float)
        vals = self._gather(self._index(bws, weights), t[:, 0], t[:, 1], np.full(len(t), -1, np.int64))
        return vals
