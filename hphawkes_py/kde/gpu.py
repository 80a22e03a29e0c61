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
        self._dev_index = None
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

    def _device_index(self, ix: SourceIndex):
        """The index's sources and classes on the device, two uploads, kept for the last index
        (the search evaluates each index once for the sample points, the surface once more)."""
        if self._dev_index is not None and self._dev_index[0] is ix:
            return self._dev_index[1:]
        T = self.dtype
        src = np.ascontiguousarray(ix.packed, dtype=T)  # (5, n) rows sx, sy, sinv2, scoef, scut2
        if not math.isfinite(self.cutoff):
            src = src.copy()
            src[4] = np.finfo(T).max
        ints = np.concatenate([ix.cls_nx, ix.cls_ny, ix.cls_base, ix.cell_ptr]).astype(np.int64)
        d = (self.dev.to_device(src), self.dev.to_device(np.concatenate([ix.cls_s, ix.cls_reach]).astype(T)),
             self.dev.to_device(ints))
        self._dev_index = (ix, *d)
        return d

    def _launch_gather(self, ix: SourceIndex, d_tgt, ntargets: int, loo: bool):
        dev, T = self.dev, self.dtype
        d_src, d_cls_real, d_cls_int = self._device_index(ix)
        d_out = dev.empty((max(ntargets, 1),), T)
        b = self._b_gather
        grid = max(1, min((ntargets + b - 1) // b, 65535))
        dev.launch(self._gather_fn, (grid, 1, 1), (b, 1, 1), [
            d_tgt, np.int64(ntargets), np.int32(bool(loo)), d_src, np.int64(len(ix.sx)), T.type(ix.gx0),
            T.type(ix.gy0), d_cls_real, d_cls_int, np.int32(len(ix.cls_s)), d_out,
        ])
        return dev.to_host(d_out)[:ntargets].astype(np.float64)

    def _gather_points(self, ix: SourceIndex, loo: bool):
        # the targets are the sources: the packed source rows start with (sx | sy), no upload
        return self._launch_gather(ix, self._device_index(ix)[0], len(ix.sx), loo)

    def _gather(self, ix: SourceIndex, tx, ty, self_pos):
        if np.any(np.asarray(self_pos) >= 0):
            raise ValueError("the GPU gather leaves a point out only through _gather_points")
        d_tgt = self.dev.to_device(np.concatenate([np.asarray(tx, self.dtype), np.asarray(ty, self.dtype)]))
        return self._launch_gather(ix, d_tgt, len(tx), False)

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
