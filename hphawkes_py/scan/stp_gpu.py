"""GPU engine of the space-time permutation scan (a real device through PyCUDA/CuPy, or the emulator).

The neighbour lists, marginals and temporal windows go to the device once; per batch of
replicates only their per-location day-prefix sums (int32, [location][day][replicate]) go in
and one maximum per replicate comes back. Kernel: ``hphawkes_py/gpu/kernels/scan_stp.cu``.
"""
from __future__ import annotations

import numpy as np

from ..gpu.device import KERNELS_DIR

__all__ = ["GpuEngine"]

#: preferred threads per block (replicates of one centre), lowered by Device.block_size
BLOCK = 128


class GpuEngine:
    """Same interface as :class:`hphawkes_py.scan.stp_cpu.CpuEngine`, through a ``Device``."""

    def __init__(self, design, *, device, backend="gpu"):
        self.d = d = design
        self.backend = backend
        self.dev = dev = device
        self._fn = dev.module(KERNELS_DIR / "scan_stp.cu").function("stp_scan")
        pad = (lambda a, dt: np.ascontiguousarray(a if len(a) else np.zeros(1), dtype=dt))
        self.d_ptr = dev.to_device(np.ascontiguousarray(d.nbr_ptr, dtype=np.int64))
        self.d_idx = dev.to_device(pad(d.nbr_idx, np.int64))
        self.d_eval = dev.to_device(pad(d.evaluate, np.int8))
        self.d_cz = dev.to_device(np.ascontiguousarray(d.cz, dtype=np.int64))
        self.d_cdw = dev.to_device(np.ascontiguousarray(d.cd_window, dtype=np.float64))
        self.d_log_cdw = dev.to_device(np.ascontiguousarray(d.log_cd_window, dtype=np.float64))
        self.d_klogk = dev.to_device(np.ascontiguousarray(d.klogk, dtype=np.float64))
        self.d_ws = dev.to_device(np.ascontiguousarray(d.win_start, dtype=np.int64))
        self.d_we = dev.to_device(np.ascontiguousarray(d.win_end, dtype=np.int64))
        self.block = dev.block_size(self._fn, BLOCK)

    def __getstate__(self):
        raise TypeError("the GPU scan engine holds device buffers and cannot be pickled")

    def _run(self, cum: np.ndarray, want_best: bool):
        """cum: (L, T + 1, R) int32 prefix sums."""
        d, dev = self.d, self.dev
        L, T1, R = cum.shape
        m = len(d.nbr_ptr) - 1
        d_cum = dev.to_device(np.ascontiguousarray(cum, dtype=np.int32))
        d_max = dev.zeros((R,), np.float64)
        shape = (m, R) if want_best else (1,)
        d_best = dev.zeros(shape, np.float64)
        d_size = dev.zeros(shape, np.int64)
        d_win = dev.zeros(shape, np.int64)
        block = min(self.block, 32 * ((R + 31) // 32))
        if m > 0:
            dev.launch(self._fn, (m, (R + block - 1) // block), (block, 1, 1), [
                self.d_ptr, self.d_idx, self.d_eval, self.d_cz, self.d_cdw, self.d_log_cdw, self.d_klogk, self.d_ws,
                self.d_we,
                np.int32(len(d.win_start)), d_cum, np.int32(T1), np.int32(R), np.float64(d.total),
                np.int32(d.min_cases), np.int32(bool(want_best)), d_best, d_size, d_win, d_max,
            ])
        if want_best:
            return dev.to_host(d_max), dev.to_host(d_best), dev.to_host(d_size), dev.to_host(d_win)
        return dev.to_host(d_max)

    def best_per_centre(self, cum):
        _, best, size, win = self._run(np.asarray(cum)[:, :, None], True)
        return best[:, 0].copy(), size[:, 0].copy(), win[:, 0].copy()

    def null_maxima(self, day_perm):
        d = self.d
        R = day_perm.shape[0]
        counts = np.zeros((d.n_locations, d.n_days + 1, R), dtype=np.int32)
        rep = np.broadcast_to(np.arange(R)[:, None], day_perm.shape)
        np.add.at(counts, (np.broadcast_to(d.loc_of_case, day_perm.shape), day_perm + 1, rep), 1)
        np.cumsum(counts, axis=1, out=counts)
        return self._run(counts, False)
