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

__all__ = ["GpuEngine", "stratum_runs"]

BLOCK = 256
MAX_BLOCKS = 1024


def stratum_runs(data):
    """Runs of each column's non-zeros that fall in one stratum.

    Returns ``(run_start, run_stratum, col_run_ptr)``: run ``r`` covers non-zeros
    ``run_start[r]:run_start[r+1]`` (``run_start`` has a final sentinel ``nnz``), all in
    stratum ``run_stratum[r]``; the runs of column ``j`` are ``col_run_ptr[j]:col_run_ptr[j+1]``.
    """
    nnz = data.nnz
    s = data.row_stratum[data.row_idx]
    new = np.ones(nnz, dtype=bool)
    if nnz:
        new[1:] = s[1:] != s[:-1]
        starts_col = data.col_ptr[:-1][np.diff(data.col_ptr) > 0]
        new[starts_col] = True
    run_start = np.flatnonzero(new).astype(np.int64)
    run_stratum = s[run_start].astype(np.int32)
    col_run_ptr = np.searchsorted(run_start, data.col_ptr, side="left").astype(np.int64)
    return np.append(run_start, np.int64(nnz)), run_stratum, col_run_ptr


class GpuEngine:
    """CCD engine on a :class:`~hphawkes_py.gpu.device.Device` (same interface as ``CpuEngine``)."""

    def __init__(self, data, *, weights=None, device, backend="gpu", dtype=np.float64):
        self.data = data
        self.backend = backend
        self.dev = dev = device
        self.dtype = np.dtype(dtype)
        if self.dtype not in (np.float32, np.float64):
            raise ValueError(f"dtype must be float32 or float64, got {dtype!r}")
        real = "double" if self.dtype == np.float64 else "float"
        self.n_covariates = data.n_covariates
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
        self._sync_grid = max(1, min(MAX_BLOCKS, -(-data.n_strata // BLOCK)))
        self._shared = BLOCK * self.dtype.itemsize
        self.set_weights(weights)

    def set_weights(self, weights=None):
        d = self.data
        w = np.ones(d.n_strata) if weights is None else np.asarray(weights, dtype=np.float64)
        self.weights = w
        self._d_weights = self.dev.to_device(w.astype(self.dtype))
        self._d_wn = self.dev.to_device((w * d.n_events).astype(self.dtype))
        # constant part of the gradient, sum_i w_s(i) y_i x_ij, stays on the host (float64)
        wy = (w[d.row_stratum] * d.y)[d.row_idx]
        if d.values is not None:
            wy = wy * d.values
        self.xty = np.bincount(d.column_of_nnz(), weights=wy, minlength=d.n_covariates).astype(np.float64)

    def set_beta(self, beta):
        d = self.data
        beta = np.asarray(beta, dtype=np.float64)
        x = beta[d.column_of_nnz()]
        if d.values is not None:
            x = x * d.values
        eta = np.bincount(d.row_idx, weights=x, minlength=d.n_rows)
        self.dev.copy_to_device(self._d_eta, eta.astype(self.dtype))
        self.log_likelihood()

    def gradient_hessian(self, j):
        r0, r1 = int(self._col_run_ptr[j]), int(self._col_run_ptr[j + 1])
        if r1 == r0:
            return float(self.xty[j]), 0.0
        dev = self.dev
        slot = self._slot
        grid = max(1, min(MAX_BLOCKS, -(-(r1 - r0) // BLOCK)))
        dev.launch(self._k_gh, grid, BLOCK,
                   [np.int32(slot), np.int64(r0), np.int64(r1), self._d_run_start, self._d_run_stratum,
                    self._d_row_idx, self._d_values, self._binary, self._d_texp, self._d_denom, self._d_wn,
                    self._d_gh],
                   shared_bytes=self._shared)
        self._slot = 1 - slot
        G, H = dev.to_host(self._d_gh)[2 * slot:2 * slot + 2]
        return float(self.xty[j] - G), float(H)

    def update(self, j, delta):
        k0, k1 = int(self._col_ptr[j]), int(self._col_ptr[j + 1])
        if k1 == k0:
            return
        grid = max(1, min(MAX_BLOCKS, -(-(k1 - k0) // BLOCK)))
        self.dev.launch(self._k_upd, grid, BLOCK,
                        [np.int64(k0), np.int64(k1), self._R(delta), self._d_row_idx, self._d_values, self._binary,
                         self._d_row_stratum, self._d_logtime, self._d_eta, self._d_texp, self._d_denom])

    def log_likelihood(self, beta=None):
        d = self.data
        dev = self.dev
        dev.copy_to_device(self._d_out, self._zero2)
        dev.launch(self._k_sync, self._sync_grid, BLOCK,
                   [np.int32(d.n_strata), self._d_stratum_ptr, self._d_y, self._d_logtime, self._d_eta,
                    self._d_texp, self._d_denom, self._d_n_events, self._d_weights, self._d_ll_s, self._d_out],
                   shared_bytes=self._shared)
        return float(dev.to_host(self._d_out)[0])

    def stratum_log_likelihood(self, beta=None):
        self.log_likelihood()
        return self.dev.to_host(self._d_ll_s).astype(np.float64)
