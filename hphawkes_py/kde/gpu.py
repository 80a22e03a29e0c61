"""GPU engine of :mod:`hphawkes_py.kde` (PyCUDA or CuPy on a real device, or the CPU emulator).

Same hot steps as :class:`hphawkes_py.kde.cpu.CpuEngine` (both derive from
:class:`~.engine.Engine`, which builds the source index on the host).  The points and the
window's row bands go to the device once.  Each kernel-sum call uploads the source index (sorted
coordinates and per-source constants, O(n)) because the bandwidths change at every step of the
search, and brings back the n (or m) intensities; the edge kernel brings back the masses of the
points near the boundary.  Kernels: ``hphawkes_py/gpu/kernels/kde.cu``, compiled with
``REAL`` = the engine's dtype.
"""
from __future__ import annotations

import math

import numpy as np

from ..gpu.device import KERNELS_DIR
from ._window import Window
from .engine import EDGE_REACH, Engine, SourceIndex, kernel_constants

__all__ = ["GpuEngine"]

#: preferred threads per block of the edge kernel (bands of one point) and of the gather kernels,
#: lowered per compiled kernel by Device.block_size (registers, shared memory per thread)
EDGE_BLOCK = 64
GATHER_BLOCK = 128


class GpuEngine(Engine):
    """Hot KDE sums on a ``Device`` (``backend="gpu"`` or ``"emulator"``); the device is given by
    :func:`~.engine.make_engine`."""

    def __init__(self, points: np.ndarray, window: Window, cutoff: float, *, device, backend: str = "emulator",
                 dtype=np.float64):
        super().__init__(points, window, cutoff, dtype=dtype)
        self.backend = backend
        self.dev = dev = device
        real = "double" if self.dtype == np.float64 else "float"
        mod = dev.module(KERNELS_DIR / "kde.cu", defines={"REAL": real})
        self._edge_fn = mod.function("kde_edge_mass")
        self._gather_fn = mod.function("kde_gather")
        self._relabel_fn = mod.function("kde_relabel_exceed")
        item = self.dtype.itemsize
        self._b_edge = dev.block_size(self._edge_fn, EDGE_BLOCK, shared_bytes_per_thread=item)
        self._b_gather = dev.block_size(self._gather_fn, GATHER_BLOCK)
        self._b_relabel = dev.block_size(self._relabel_fn, GATHER_BLOCK)
        r0, r1, bptr, c0, c1, row_band = window.row_bands()
        pad = lambda a: a if len(a) else np.zeros(1, np.int64)  # noqa: E731  (no zero-size buffers)
        self.d_px = dev.to_device(self.x.astype(self.dtype))
        self.d_py = dev.to_device(self.y.astype(self.dtype))
        self.d_bands = [dev.to_device(np.ascontiguousarray(pad(a), np.int64)) for a in (r0, r1, bptr, c0, c1, row_band)]

    def __getstate__(self):
        raise TypeError("the GPU KDE engine holds device buffers and cannot be pickled")

    def _r(self, v):
        return self.dtype.type(v)

    def _edge_mass_subset(self, bws, idx):
        dev = self.dev
        w = self.window
        d_b = dev.to_device(np.ascontiguousarray(bws, self.dtype))
        d_idx = dev.to_device(idx)
        d_out = dev.empty((len(idx),), self.dtype)
        dev.launch(self._edge_fn, (len(idx), 1, 1), (self._b_edge, 1, 1), [
            self.d_px, self.d_py, d_b, d_idx, self._r(w.x0), self._r(w.y0), self._r(w.cell_size),
            np.int32(w.mask.shape[0]), *self.d_bands, self._r(EDGE_REACH), d_out,
        ], shared_bytes=self._b_edge * self.dtype.itemsize)
        return dev.to_host(d_out).astype(np.float64)

    def _gather(self, ix: SourceIndex, tx, ty, self_pos):
        dev = self.dev
        T = self.dtype
        scut2 = ix.scut2 if math.isfinite(self.cutoff) else np.full(len(ix.sx), np.finfo(T).max)
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
        b = self._b_gather
        grid = max(1, min((len(tx) + b - 1) // b, 65535))
        dev.launch(self._gather_fn, (grid, 1, 1), (b, 1, 1), args + [d_out])
        return dev.to_host(d_out).astype(np.float64)

    #: picks uploaded per launch at most (int32 entries): bounds the device memory of one launch
    MAX_PICKS_PER_LAUNCH = 1 << 24

    def relabel_exceed(self, targets, bws, weights, picks, total, rho, n1, n0, small_is_case):
        """All relabellings in one launch of ``kde_relabel_exceed`` (split only when the picks would
        exceed ``MAX_PICKS_PER_LAUNCH`` entries); the pooled points stay resident."""
        dev, T = self.dev, self.dtype
        picks = np.ascontiguousarray(picks, dtype=np.int32)
        nrep, k = picks.shape
        inv2, coef, cut2 = kernel_constants(bws, weights, self.cutoff)
        if not math.isfinite(self.cutoff):
            cut2 = np.full(len(cut2), np.finfo(T).max)
        t = np.asarray(targets, dtype=np.float64)
        m = len(t)
        d_tx, d_ty = dev.to_device(np.ascontiguousarray(t[:, 0], T)), dev.to_device(np.ascontiguousarray(t[:, 1], T))
        d_inv2 = dev.to_device(inv2.astype(T))
        d_coef = dev.to_device(coef.astype(T))
        d_cut2 = dev.to_device(cut2.astype(T))
        d_tot = dev.to_device(np.ascontiguousarray(total, np.float64))
        d_rho = dev.to_device(np.ascontiguousarray(rho, np.float64))
        exceed = np.zeros(m, np.int64)
        step = max(1, self.MAX_PICKS_PER_LAUNCH // max(k, 1))
        grid = max(1, min((m + self._b_relabel - 1) // self._b_relabel, 65535))
        for r0 in range(0, nrep, step):
            chunk = picks[r0:r0 + step]
            d_out = dev.empty((m,), np.int64)
            dev.launch(self._relabel_fn, (grid, 1, 1), (self._b_relabel, 1, 1), [
                d_tx, d_ty, np.int64(m), self.d_px, self.d_py, d_inv2, d_coef, d_cut2,
                dev.to_device(np.ascontiguousarray(chunk)), np.int32(len(chunk)), np.int32(k), d_tot, d_rho,
                np.int32(bool(small_is_case)), np.float64(math.log(n1)), np.float64(math.log(n0)), d_out,
            ])
            exceed += dev.to_host(d_out).astype(np.int64)
        return exceed
