"""CUDA twin of :mod:`.cpu_latent` (``kernels/hawkes_latent.cu``) on a PyCUDA/CuPy device or the CPU
emulator: the rows S_n, G_n and the neighbour pass of the location and log-rate gradients, float64.

The times and the index ranges of every event's sums stay resident on the device; the locations and the
weights go down when they change, and S, G or the neighbour sums come back (N values each: the sampler
works on them on the host).
"""
from __future__ import annotations

import numpy as np

from ..gpu.device import KERNELS_DIR

__all__ = ["GpuLatent"]


class GpuLatent:
    """The two passes of :mod:`.cpu_latent` on ``device`` (a :class:`~hphawkes_py.gpu.device.Device`).

    Parameters
    ----------
    device : Device
        Where the kernels run (from :func:`hphawkes_py._backend.get_device`).
    t : ndarray, shape (N,)
        Sorted event times (float64).
    block : int, optional
        Threads per block (default: what the device prefers for the kernels).

    Examples
    --------
    >>> import numpy as np
    >>> from hphawkes_py._backend import get_device
    >>> from hphawkes_py.hawkes.gpu_latent import GpuLatent
    >>> t = np.array([0.0, 1.0, 2.0])
    >>> gl = GpuLatent(get_device("emulator"), t)
    >>> x = np.zeros((3, 3)); idx = np.array([0, 0, 0]), np.array([3, 3, 3]), np.array([0, 0, 0]), np.array([0, 1, 2])
    >>> S, G = gl.rows(x, idx, np.ones(3), np.ones(3), 0.5, 0.5, 0.5, 1.0)
    >>> np.round(G, 4).tolist()  # G_2 = exp(-2) + exp(-1)
    [0.0, 0.3679, 0.5032]
    """

    def __init__(self, device, t: np.ndarray, block: int | None = None):
        self.dev = dev = device
        self._mod = dev.module(KERNELS_DIR / "hawkes_latent.cu", defines={"REAL": "double"})
        self._f_rows = self._mod.function("latent_rows")
        self._f_cols = self._mod.function("latent_columns")
        if block is None:
            block = min(dev.block_size(f, 128) for f in (self._f_rows, self._f_cols))
        self.block = int(block)
        self.N = N = int(t.shape[0])
        self.grid = max(1, min((N + self.block - 1) // self.block, 65535))
        self._t = dev.to_device(np.ascontiguousarray(t, dtype=np.float64))
        self._x = dev.zeros((N * 3,), np.float64)
        self._wb = dev.zeros((N,), np.float64)
        self._wg = dev.zeros((N,), np.float64)
        self._v = dev.zeros((N,), np.float64)
        self._S = dev.zeros((N,), np.float64)
        self._G = dev.zeros((N,), np.float64)
        self._lb = dev.zeros((N * 3,), np.float64)
        self._lg = dev.zeros((N * 3,), np.float64)
        self._a = dev.zeros((N * 4,), np.float64)
        self._idx_key = None
        self._idx = None

    def _indices(self, idx) -> list:
        key = tuple(id(a) for a in idx) + tuple(hash(np.asarray(a).tobytes()) for a in idx)
        if key != self._idx_key:
            self._idx = [self.dev.to_device(np.ascontiguousarray(a, dtype=np.int64)) for a in idx]
            self._idx_key = key
        return self._idx

    def _put(self, dst, host):
        self.dev.copy_to_device(dst, np.ascontiguousarray(host, dtype=np.float64).reshape(-1))

    def rows(self, x, idx, wb, wg, ax, at, bh, om, do_s=True, do_g=True):
        """(S, G) of :func:`.cpu_latent.latent_rows`; ``idx`` = (lo_s, hi_s, lo_g, ts)."""
        self._put(self._x, x)
        self._put(self._wb, wb)
        self._put(self._wg, wg)
        lo_s, hi_s, lo_g, ts = self._indices(idx)
        self.dev.launch(self._f_rows, self.grid, self.block,
                        [self._x, self._t, lo_s, hi_s, lo_g, ts, self._wb, self._wg, np.float64(ax), np.float64(at),
                         np.float64(bh), np.float64(om), np.int32(bool(do_s)), np.int32(bool(do_g)),
                         np.int32(self.N), self._S, self._G])
        return self.dev.to_host(self._S).copy(), self.dev.to_host(self._G).copy()

    def columns(self, x, idx, wb, wg, v, ax, at, bh, om, need=7):
        """(LB, LG, A) of :func:`.cpu_latent.latent_columns`; ``idx`` = (lo_s, hi_s, lo_g, ts, src_s_lo,
        src_s_hi, src_g_lo, src_g_hi)."""
        self._put(self._x, x)
        self._put(self._wb, wb)
        self._put(self._wg, wg)
        self._put(self._v, v)
        d = self._indices(idx)
        self.dev.launch(self._f_cols, self.grid, self.block,
                        [self._x, self._t, *d, self._wb, self._wg, self._v, np.float64(ax), np.float64(at),
                         np.float64(bh), np.float64(om), np.int32(need), np.int32(self.N), self._lb, self._lg, self._a])
        N = self.N
        return (self.dev.to_host(self._lb).reshape(N, 3).copy(), self.dev.to_host(self._lg).reshape(N, 3).copy(),
                self.dev.to_host(self._a).reshape(N, 4).copy())
