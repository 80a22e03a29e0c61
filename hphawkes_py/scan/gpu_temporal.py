"""CUDA engines of the purely temporal and seasonal scans (``scan_temporal`` in ``scan_temporal.cu``)
and of the SVTT scan's Monte Carlo (``scan_svtt``), on a real device or the CPU emulator: the
maxima of :func:`~.cpu_temporal.temporal_windows_max` and :func:`~.cpu_temporal._svtt_scan`.

The windows and their constants (:func:`~.cpu_temporal.window_constants`, the CPU engine's own
arithmetic) and the ``k log k`` table go to the device once; per batch the replicates' cumulative
counts go in and the (R,) maxima and windows come back.
"""
from __future__ import annotations

import numpy as np

from ..gpu.device import KERNELS_DIR
from .cpu_temporal import _extend, window_constants

__all__ = ["GpuTemporalEngine", "GpuSVTTEngine"]

#: threads per block (one replicate each)
BLOCK = 128


class GpuTemporalEngine:
    """The windows of one temporal analysis on a device: :meth:`max_llr` is
    :func:`~.cpu_temporal.temporal_windows_max` for the analysis' constants."""

    def __init__(self, T, expected, persons, klogk, n_cases, min_len, max_len, prospective, closed_loop, min_cases,
                 direction, *, device, backend="gpu"):
        self.backend = backend
        self.dev = dev = device
        (wt1, wt2, wn, we, wa, wb), self.Text, N = window_constants(T, expected, persons, klogk, n_cases, min_len,
                                                                   max_len, prospective, closed_loop)
        self.T = T
        self.extra = max_len - 1 if closed_loop else 0
        self.wt1, self.wt2 = wt1, wt2
        self.K = len(wt1)
        pad = (lambda a, dt: dev.to_device(np.ascontiguousarray(a if len(a) else np.zeros(1), dtype=dt)))
        self.d = [pad(wt1, np.int64), pad(wt2, np.int64), pad(wn, np.int64), pad(we, np.float64),
                  pad(wa, np.float64), pad(wb, np.float64)]
        self.d_klogk = dev.to_device(np.ascontiguousarray(klogk, dtype=np.float64))
        self.model = 0 if persons is None else 1
        self.consts = (np.int64(n_cases), np.int64(N), np.int64(min_cases), np.int32(direction in ("high", "both")),
                       np.int32(direction in ("low", "both")))
        self._fn = dev.module(KERNELS_DIR / "scan_temporal.cu", defines={"REAL": "double"}).function("scan_temporal")
        self._block = dev.block_size(self._fn, BLOCK)

    def __getstate__(self):
        raise TypeError("the GPU temporal engine holds device buffers and cannot be pickled: use executor=None or a "
                        "thread pool with backend='gpu'/'emulator'")

    def max_llr(self, cases):
        """(R,) largest window LLR of each replicate (column of ``cases`` (T, R)) and (R,) its window
        code ``t1 * Text + t2`` (-1: none), as the CPU engine gives them."""
        dev = self.dev
        ext = _extend(np.asarray(cases, dtype=np.int64), self.extra)
        R = ext.shape[1]
        cum = np.zeros((ext.shape[0] + 1, R), dtype=np.int32)
        np.cumsum(ext, axis=0, out=cum[1:])
        d_best = dev.empty((R,), np.float64)
        d_arg = dev.empty((R,), np.int64)
        block = min(self._block, 32 * ((R + 31) // 32))
        dev.launch(self._fn, ((R + block - 1) // block, 1), (block, 1, 1), [
            np.int32(self.model), dev.to_device(cum), *self.d, np.int64(self.K), self.d_klogk, *self.consts,
            np.int32(R), d_best, d_arg])
        best, w = dev.to_host(d_best), dev.to_host(d_arg)
        code = np.where(w >= 0, self.wt1[np.maximum(w, 0)] * self.Text + self.wt2[np.maximum(w, 0)], -1)
        return best, code


class GpuSVTTEngine:
    """The SVTT windows on a device (``scan_svtt`` in ``scan_temporal.cu``): :meth:`max_llr` gives the
    largest window LLR of each replicate, as :func:`~.cpu_temporal._svtt_scan` does."""

    def __init__(self, windows, measure, beta_g, direction, *, device, backend="gpu"):
        offsets, neighbors, boundary = windows
        self.backend = backend
        self.dev = dev = device
        pad = (lambda a, dt: dev.to_device(np.ascontiguousarray(a if len(a) else np.zeros(1), dtype=dt)))
        self.m = len(offsets) - 1
        self.d_offsets = pad(offsets, np.int64)
        self.d_neighbors = pad(neighbors, np.int32)
        self.d_boundary = pad(boundary, np.uint8)
        self.measure = np.ascontiguousarray(measure, dtype=np.float64)
        self.d_measure = dev.to_device(self.measure)
        self.d_mall = dev.to_device(np.ascontiguousarray(self.measure.sum(axis=0)))
        self.beta_g = float(beta_g)
        self.want = (np.int32(direction in ("high", "both")), np.int32(direction in ("low", "both")))
        self._fn = dev.module(KERNELS_DIR / "scan_temporal.cu", defines={"REAL": "double"}).function("scan_svtt")
        self._block = dev.block_size(self._fn, BLOCK)

    def __getstate__(self):
        raise TypeError("the GPU SVTT engine holds device buffers and cannot be pickled: use executor=None or a "
                        "thread pool with backend='gpu'/'emulator'")

    def max_llr(self, cases):
        """(R,) largest window LLR of each replicate of ``cases`` (L, T, R)."""
        dev = self.dev
        cases = np.ascontiguousarray(cases, dtype=np.int32)
        L, T, R = cases.shape
        if self.m == 0:
            return np.zeros(R)
        call = np.ascontiguousarray(cases.sum(axis=0), dtype=np.float64)  # (T, R)
        d_best = dev.empty((self.m, R), np.float64)
        d_scratch = dev.empty((self.m * R * 4 * T,), np.float64)
        block = min(self._block, 32 * ((R + 31) // 32))
        dev.launch(self._fn, (self.m, (R + block - 1) // block), (block, 1, 1), [
            self.d_offsets, self.d_neighbors, self.d_boundary, dev.to_device(cases), self.d_measure,
            dev.to_device(call), self.d_mall, np.int32(L), np.int32(T), np.float64(self.beta_g), *self.want,
            np.int32(R), d_scratch, d_best])
        return dev.to_host(d_best).max(axis=0)
