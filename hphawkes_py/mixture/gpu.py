"""GPU engine of the TDP mixture (PyCUDA device or the CPU emulator; ``gpu/kernels/mixture.cu``).

Same interface as :class:`hphawkes_py.mixture.cpu.CpuEngine`.  The data live on the
device (column-major, so reads are coalesced over points) for the whole fit.  Per
sweep the host sends the packed component parameters (k x stride) and, for Gibbs,
the n uniforms (drawn on the host with ``Generator.random`` so that the CPU engine,
the GPU and the emulator produce the same labels from the same uniforms); it gets
back the (k x F) sufficient statistics and the log-likelihood.  Points are
processed in chunks of ``chunk_size`` so device memory is O(chunk x k).

Kernels: ``mix_logdens`` (thread per (point, component) pair, component tile in
shared memory), ``mix_sample`` (thread per point: normalise and draw),
``mix_normalise`` (responsibilities), ``mix_stats`` (tiled weighted feature sums),
``mix_stats_labels`` (the Gibbs statistics from hard labels in O(n F), shared-memory scatter).
"""
from __future__ import annotations

import numpy as np

from ..gpu.device import KERNELS_DIR, MAX_DYNAMIC_SHARED_BYTES
from ._math import LOG_2PI
from .engine import Engine, feature_pairs

__all__ = ["GpuEngine", "pack_components"]

BLOCK = 128
#: components per block of the density kernel (fewer when their parameters would not fit in
#: shared memory; none staged at all beyond that)
KTILE = 8
TILE = 16
#: blocks of the log-likelihood sum (mix_sum)
SUM_BLOCKS = 64
#: features per block of the hard-label statistics kernel (k x this many doubles of shared memory)
LABEL_FEATURES = 16


def _stride(p: int) -> int:
    s = p + p * (p + 1) // 2 + 1
    return s + (s % 2)


def _max_p_define(p: int) -> int:
    """Size of the kernel's per-thread arrays: p rounded up to a multiple of 16 (one compiled
    module per 16 columns)."""
    return max(16, -(-p // 16) * 16)


def pack_components(log_weights, means, prec_factors, logdets, dtype=np.float64) -> np.ndarray:
    """(k, stride) packed parameters: mu, U packed lower triangle (row by row), c = log w - p/2 log 2pi - 1/2 log|Sigma|."""
    means = np.asarray(means, dtype=np.float64)
    k, p = means.shape
    U = np.asarray(prec_factors, dtype=np.float64)
    rows, cols = np.tril_indices(p)
    out = np.zeros((k, _stride(p)))
    out[:, :p] = means
    out[:, p : p + len(rows)] = U[:, rows, cols]
    with np.errstate(invalid="ignore"):
        out[:, p + len(rows)] = np.asarray(log_weights, dtype=np.float64) - 0.5 * p * LOG_2PI - 0.5 * np.asarray(logdets)
    return np.ascontiguousarray(out.astype(dtype))


class GpuEngine(Engine):
    """Hot steps of the TDP mixture on a :class:`~hphawkes_py.gpu.device.Device`.

    Parameters
    ----------
    X : ndarray (n, p)
        Standardised data (any p; above about p = 100 the component parameters no longer fit
        in shared memory and are read from global memory).
    backend : {"gpu", "emulator"}
    dtype : float32 or float64
        Precision of the data, the component parameters and the density matrix; the
        log-sum-exp, the draws and the statistics accumulate in double.
    chunk_size : int, optional
        Points per chunk (default 65536 on a GPU, 4096 on the emulator).
    """

    def __init__(self, X, *, backend="gpu", dtype=np.float64, chunk_size=None, device=None):
        if device is None:
            raise ValueError("GpuEngine needs its device (make_engine passes hphawkes_py._backend.get_device(backend))")
        super().__init__(X, dtype=dtype)
        self.backend = backend
        self.dev = dev = device
        default = 65536 if backend == "gpu" else 4096
        self.chunk = int(max(1, min(chunk_size or default, self.n)))
        real = "double" if self.dtype == np.float64 else "float"
        mod = dev.module(KERNELS_DIR / "mixture.cu", defines={"REAL": real, "MIX_MAX_P": _max_p_define(self.p)})
        self._k_dens = mod.function("mix_logdens")
        self._k_sample = mod.function("mix_sample")
        self._k_norm = mod.function("mix_normalise")
        self._k_stats = mod.function("mix_stats")
        self._k_stats_lab = mod.function("mix_stats_labels")
        self._k_sum = mod.function("mix_sum")
        self._k_group = mod.function("mix_group_logsumexp")
        # occupancy-aware threads per block for the 1-D kernels (the density kernel's per-thread
        # arrays grow with p and can lower what its registers allow); mix_stats keeps its TILE x TILE
        # shape, which its shared arrays are sized for
        self._b_dens = dev.block_size(self._k_dens, BLOCK)
        self._b_sample = dev.block_size(self._k_sample, BLOCK)
        self._b_norm = dev.block_size(self._k_norm, BLOCK)
        self._b_stats_lab = dev.block_size(self._k_stats_lab, 256)
        self._b_sum = dev.block_size(self._k_sum, 256, shared_bytes_per_thread=8)
        self._d_ll_part = dev.zeros(SUM_BLOCKS, np.float64)
        self._z_host, self._z_stale = None, False
        self._d_Xt = dev.to_device(np.ascontiguousarray(self.X.T, dtype=self.dtype))
        fa, fb = feature_pairs(self.p)
        self._d_fa = dev.to_device(fa)
        self._d_fb = dev.to_device(fb)
        self._d_z = dev.zeros(self.n, np.int32)
        self._d_ll = dev.zeros(self.n, np.float64)
        self._d_u = dev.zeros(self.n, np.float64)
        self._stride = _stride(self.p)
        per = self._stride * self.dtype.itemsize
        self._ktile = int(max(1, min(KTILE, MAX_DYNAMIC_SHARED_BYTES // per)))
        self._staged = per <= MAX_DYNAMIC_SHARED_BYTES
        self._d_resp_dummy = dev.zeros(1, self.dtype)

    # ------------------------------------------------------------------ parameters
    def set_components(self, log_weights, means, prec_factors, logdets) -> None:
        packed = pack_components(log_weights, means, prec_factors, logdets, self.dtype)
        k = packed.shape[0]
        if k != self.k:
            self.k = k
            self._d_comp = self.dev.to_device(packed)
            self._d_dens = self.dev.empty((k, self.chunk), self.dtype)
        else:
            self.dev.copy_to_device(self._d_comp, packed)

    # ------------------------------------------------------------------ launches
    def _logdens(self, d_Xt, n_total, row0, m):
        kt = self._ktile
        grid = (-(-m // self._b_dens), -(-self.k // kt))
        shared = kt * self._stride * self.dtype.itemsize if self._staged else 0
        self.dev.launch(
            self._k_dens, grid, self._b_dens,
            [d_Xt, np.int64(n_total), np.int32(self.p), np.int64(row0), np.int32(m), np.int32(self.k),
             self._d_comp, np.int32(self._stride), np.int32(kt), np.int32(int(self._staged)), self._d_dens],
            shared_bytes=shared,
        )

    def _stats(self, row0, m, mode, d_T):
        ft = min(LABEL_FEATURES, self.F, MAX_DYNAMIC_SHARED_BYTES // (8 * self.k))
        if mode == 0 and ft >= 1:
            # hard labels: O(m F) scatter into shared memory (see mix_stats_labels)
            # (the emulator splits in two so that the partial-sum path is exercised in CI)
            split = max(1, min(256, m // 2048)) if self.backend == "gpu" else (2 if m >= 64 else 1)
            self.dev.launch(
                self._k_stats_lab, (-(-self.F // ft), split), self._b_stats_lab,
                [self._d_Xt, np.int64(self.n), np.int32(self.p), np.int64(row0), np.int32(m), np.int32(self.k),
                 self._d_z, self._d_fa, self._d_fb, np.int32(self.F), np.int32(ft), d_T],
                shared_bytes=8 * self.k * ft,
            )
            return
        zsplit = max(1, min(64, m // 1024)) if self.backend == "gpu" else 1
        grid = (-(-self.F // TILE), -(-self.k // TILE), zsplit)
        resp = self._d_dens if mode == 1 else self._d_resp_dummy
        self.dev.launch(
            self._k_stats, grid, (TILE, TILE),
            [self._d_Xt, np.int64(self.n), np.int32(self.p), np.int64(row0), np.int32(m), np.int32(self.k),
             resp, self._d_z, np.int32(mode), self._d_fa, self._d_fb, np.int32(self.F), d_T],
        )

    def _chunks(self, n):
        for lo in range(0, n, self.chunk):
            yield lo, min(n, lo + self.chunk) - lo

    # ------------------------------------------------------------------ Gibbs
    @property
    def z(self):
        """Labels of the last :meth:`sample_labels` (copied from the device on first use)."""
        if self._z_stale:
            self._z_host, self._z_stale = self.dev.to_host(self._d_z), False
        return self._z_host

    @z.setter
    def z(self, value):
        self._z_host, self._z_stale = value, False

    def _device_sum(self, d_x, n) -> float:
        self.dev.launch(self._k_sum, SUM_BLOCKS, self._b_sum, [d_x, np.int64(n), self._d_ll_part],
                        shared_bytes=8 * self._b_sum)
        return float(self.dev.to_host(self._d_ll_part).sum())

    def sample_labels(self, uniforms, return_labels: bool = True):
        """Draw every z_i given uniforms (n,) in [0, 1); returns z (n,) int32, or None when
        ``return_labels`` is false (the labels stay on the device until ``z`` is read: the
        Gibbs sweep only needs their statistics)."""
        self.dev.copy_to_device(self._d_u, self._check_uniforms(uniforms))
        for row0, m in self._chunks(self.n):
            self._logdens(self._d_Xt, self.n, row0, m)
            self.dev.launch(
                self._k_sample, -(-m // self._b_sample), self._b_sample,
                [self._d_dens, np.int32(m), np.int32(self.k), self._d_u, np.int64(row0), self._d_z, self._d_ll],
            )
        self._z_stale = True
        self.loglik = self._device_sum(self._d_ll, self.n)
        return self.z if return_labels else None

    def label_stats(self) -> np.ndarray:
        """(k, F) feature sums per component for the labels of the last :meth:`sample_labels`."""
        d_T = self.dev.zeros((self.k, self.F), np.float64)
        for row0, m in self._chunks(self.n):
            self._stats(row0, m, 0, d_T)
        return self.dev.to_host(d_T)

    # ------------------------------------------------------------------ BEM
    def responsibilities_stats(self):
        """E-step: (loglik, T (k, F) responsibility-weighted feature sums), chunk by chunk."""
        d_T = self.dev.zeros((self.k, self.F), np.float64)
        for row0, m in self._chunks(self.n):
            self._logdens(self._d_Xt, self.n, row0, m)
            self.dev.launch(
                self._k_norm, -(-m // self._b_norm), self._b_norm,
                [self._d_dens, np.int32(m), np.int32(self.k), np.int64(row0), self._d_ll, np.int32(1)],
            )
            self._stats(row0, m, 1, d_T)
        return float(self.dev.to_host(self._d_ll).sum()), self.dev.to_host(d_T)

    # ------------------------------------------------------------------ prediction
    def log_density(self, X) -> np.ndarray:
        """log sum_j pi_j N(x_i | mu_j, Sigma_j) for the rows of X (standardised units)."""
        X = np.ascontiguousarray(X, dtype=np.float64)
        n = X.shape[0]
        d_Xt = self.dev.to_device(np.ascontiguousarray(X.T, dtype=self.dtype))
        d_ll = self.dev.zeros(n, np.float64)
        for row0, m in self._chunks(n):
            m = min(m, self.chunk)
            self._logdens(d_Xt, n, row0, m)
            self.dev.launch(
                self._k_norm, -(-m // self._b_norm), self._b_norm,
                [self._d_dens, np.int32(m), np.int32(self.k), np.int64(row0), d_ll, np.int32(0)],
            )
        return self.dev.to_host(d_ll)

    def component_log_density(self, X) -> np.ndarray:
        """The n x k matrix of weighted log component densities (small n; for tests)."""
        X = np.ascontiguousarray(X, dtype=np.float64)
        n = X.shape[0]
        d_Xt = self.dev.to_device(np.ascontiguousarray(X.T, dtype=self.dtype))
        out = np.empty((n, self.k))
        for row0, m in self._chunks(n):
            self._logdens(d_Xt, n, row0, m)
            out[row0 : row0 + m] = self.dev.to_host(self._d_dens).ravel()[: self.k * m].reshape(self.k, m).T
        return out

    def component_group_log_density(self, X, n_draws: int) -> np.ndarray:
        """(n, k / n_draws) log of the summed terms of each component over the ``n_draws`` stored
        draws (the components set here are draw-major: term ``s * k' + j``), up to nothing: the
        weights already carry the 1/S.  For the predictive ``predict_proba``."""
        S = int(n_draws)
        if self.k % S:
            raise ValueError(f"{self.k} terms are not {S} draws of equally many components")
        kc = self.k // S
        X = np.ascontiguousarray(X, dtype=np.float64)
        n = X.shape[0]
        d_Xt = self.dev.to_device(np.ascontiguousarray(X.T, dtype=self.dtype))
        d_out = self.dev.empty((kc * self.chunk,), np.float64)
        out = np.empty((n, kc))
        b = self._b_norm
        for row0, m in self._chunks(n):
            self._logdens(d_Xt, n, row0, m)
            grid = max(1, min(-(-(m * kc) // b), 65535))
            self.dev.launch(self._k_group, grid, b, [self._d_dens, np.int32(m), np.int32(S), np.int32(kc), d_out])
            out[row0 : row0 + m] = self.dev.to_host(d_out)[: kc * m].reshape(kc, m).T
        return out
