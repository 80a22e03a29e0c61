"""GPU engine for the SCCS cyclic coordinate descent (PyCUDA device or the CPU emulator).

The data and the CCD state (eta, time*exp(eta), stratum denominators, weights) live on the
device for the whole fit. Per coordinate: one launch of ``sccs_grad_hess`` (fused
reduction over the coordinate's stratum runs; two scalars come back, nothing goes down) and, for a non-zero
step, one launch of ``sccs_update`` (the step goes down; eta/texp/denominators updated in
place with atomics). Per cycle one ``sccs_resync`` recomputes texp and the denominators
from eta and returns the weighted log-likelihood. Kernels: ``gpu/kernels/sccs.cu``.
"""
from __future__ import annotations

import numpy as np

from ..gpu.device import KERNELS_DIR
from .engine import Engine, stratum_runs

__all__ = ["GpuEngine"]

BLOCK = 256  # preferred threads per block; lowered per kernel by Device.block_size
MAX_BLOCKS = 1024


class GpuEngine(Engine):
    """CCD engine on a :class:`~hphawkes_py.gpu.device.Device` (the interface of :class:`~.engine.Engine`)."""

    def __init__(self, data, *, weights=None, device, backend="gpu", dtype=np.float64):
        super().__init__(data, weights=weights, dtype=dtype)
        self.backend = backend
        self.dev = dev = device
        real = "double" if self.dtype == np.float64 else "float"
        mod = dev.module(KERNELS_DIR / "sccs.cu", defines={"REAL": real})
        self._k_gh = mod.function("sccs_grad_hess")
        self._k_upd = mod.function("sccs_update")
        self._k_sync = mod.function("sccs_resync")
        run_start, run_stratum, col_run_ptr = stratum_runs(data)
        self._col_run_ptr = col_run_ptr
        self._col_ptr = data.col_ptr
        self._binary = np.int32(1 if data.values is None else 0)
        R = self.dtype.type
        self._d_run_start = dev.to_device(run_start)
        self._d_run_stratum = dev.to_device(run_stratum)
        self._d_row_idx = dev.to_device(data.row_idx)
        self._d_values = dev.to_device((np.ones(1) if data.values is None else data.values).astype(self.dtype))
        self._d_row_stratum = dev.to_device(data.row_stratum)
        self._d_stratum_ptr = dev.to_device(data.stratum_ptr.astype(np.int64))
        self._d_y = dev.to_device(data.y.astype(self.dtype))
        self._d_logtime = dev.to_device(np.log(data.time).astype(self.dtype))
        self._d_n_events = dev.to_device(data.n_events.astype(self.dtype))
        self._d_eta = dev.zeros(data.n_rows, self.dtype)
        self._d_texp = dev.zeros(data.n_rows, self.dtype)
        self._d_denom = dev.zeros(data.n_strata, self.dtype)
        self._d_ll_s = dev.zeros(data.n_strata, self.dtype)
        self._d_out = dev.zeros(2, self.dtype)
        self._d_gh = dev.zeros(4, self.dtype)  # two (G, H) slots, see sccs_grad_hess
        self._slot = 0
        self._zero2 = np.zeros(2, dtype=self.dtype)
        self._R = R
        # Occupancy-aware block sizes from the compiled kernels (registers, shared memory per thread).
        item = self.dtype.itemsize
        self._b_gh = dev.block_size(self._k_gh, BLOCK, shared_bytes_per_thread=item)
        self._b_upd = dev.block_size(self._k_upd, BLOCK)
        self._b_sync = dev.block_size(self._k_sync, BLOCK, shared_bytes_per_thread=item)
        self._sync_grid = max(1, min(MAX_BLOCKS, -(-data.n_strata // self._b_sync)))
        self._init_state(weights)

    def _put_weights(self, w):
        self._d_weights = self.dev.to_device(w.astype(self.dtype))
        self._d_wn = self.dev.to_device((w * self.data.n_events).astype(self.dtype))

    def _put_eta(self, eta):
        self.dev.copy_to_device(self._d_eta, eta.astype(self.dtype))
        self._resync()

    def gradient_hessian(self, j):
        r0, r1 = int(self._col_run_ptr[j]), int(self._col_run_ptr[j + 1])
        if r1 == r0:
            return float(self.xty[j]), 0.0
        dev = self.dev
        slot = self._slot
        grid = max(1, min(MAX_BLOCKS, -(-(r1 - r0) // self._b_gh)))
        dev.launch(self._k_gh, grid, self._b_gh,
                   [np.int32(slot), np.int64(r0), np.int64(r1), self._d_run_start, self._d_run_stratum,
                    self._d_row_idx, self._d_values, self._binary, self._d_texp, self._d_denom, self._d_wn,
                    self._d_gh],
                   shared_bytes=self._b_gh * self.dtype.itemsize)
        self._slot = 1 - slot
        G, H = dev.to_host(self._d_gh)[2 * slot:2 * slot + 2]
        return float(self.xty[j] - G), float(H)

    def _step(self, j, delta):
        k0, k1 = int(self._col_ptr[j]), int(self._col_ptr[j + 1])
        if k1 == k0:
            return
        grid = max(1, min(MAX_BLOCKS, -(-(k1 - k0) // self._b_upd)))
        self.dev.launch(self._k_upd, grid, self._b_upd,
                        [np.int64(k0), np.int64(k1), self._R(delta), self._d_row_idx, self._d_values, self._binary,
                         self._d_row_stratum, self._d_logtime, self._d_eta, self._d_texp, self._d_denom])

    def _resync(self):
        """texp and D recomputed from eta on the device; returns the weighted log-likelihood."""
        d = self.data
        dev = self.dev
        dev.copy_to_device(self._d_out, self._zero2)
        dev.launch(self._k_sync, self._sync_grid, self._b_sync,
                   [np.int32(d.n_strata), self._d_stratum_ptr, self._d_y, self._d_logtime, self._d_eta,
                    self._d_texp, self._d_denom, self._d_n_events, self._d_weights, self._d_ll_s, self._d_out],
                   shared_bytes=self._b_sync * self.dtype.itemsize)
        return float(dev.to_host(self._d_out)[0])

    def _log_likelihood(self):
        return self._resync()

    def _stratum_log_likelihood(self):
        return self.dev.to_host(self._d_ll_s).astype(np.float64)
