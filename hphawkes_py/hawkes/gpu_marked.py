"""CUDA twins of :mod:`.cpu_etas` and :mod:`.cpu_multitype` (``kernels/hawkes_marked.cu``) on a
PyCUDA/CuPy device or the CPU emulator, float64.

The locations, times, tie starts (and types) stay resident on the device; the per-source weights go
down when they change and the N (or N x K) row sums come back (the samplers work on them on the host).
"""
from __future__ import annotations

import numpy as np

from ..gpu.device import KERNELS_DIR

__all__ = ["GpuEtas", "GpuMultitype"]


class _Rows:
    def __init__(self, device, kernel: str, block: int | None):
        self.dev = dev = device
        self._mod = dev.module(KERNELS_DIR / "hawkes_marked.cu", defines={"REAL": "double"})
        self._f = self._mod.function(kernel)
        self.block = int(dev.block_size(self._f, 128) if block is None else block)

    def _grid(self, N: int) -> int:
        return max(1, min((N + self.block - 1) // self.block, 65535))

    def _put(self, dst, host):
        self.dev.copy_to_device(dst, np.ascontiguousarray(host, dtype=np.float64).reshape(-1))


class GpuEtas(_Rows):
    """:func:`.cpu_etas.etas_rows` on ``device`` for fixed sorted data.

    Parameters
    ----------
    device : Device
        Where the kernel runs (from :func:`hphawkes_py._backend.get_device`).
    x : ndarray, shape (N, 2)
        Locations (sorted by time).
    t, ts : ndarray, shape (N,)
        Sorted times and their tie starts.
    block : int, optional
        Threads per block.

    Examples
    --------
    >>> import numpy as np
    >>> from hphawkes_py._backend import get_device
    >>> from hphawkes_py.hawkes.gpu_marked import GpuEtas
    >>> x = np.zeros((2, 2)); t = np.array([0.0, 1.0])
    >>> g = GpuEtas(get_device("emulator"), x, t, np.array([0, 1]))
    >>> np.round(g.rows(np.ones(2), np.ones(2), 1.0, 2.0, 1.5, 0), 4).tolist()  # (1 + 1/1)^-2
    [0.0, 0.25]
    """

    def __init__(self, device, x, t, ts, block: int | None = None):
        super().__init__(device, "etas_rows", block)
        dev = self.dev
        self.N = N = int(t.shape[0])
        self._x = dev.to_device(np.ascontiguousarray(x, dtype=np.float64).reshape(-1))
        self._t = dev.to_device(np.ascontiguousarray(t, dtype=np.float64))
        self._ts = dev.to_device(np.ascontiguousarray(ts, dtype=np.int64))
        self._w = dev.zeros((N,), np.float64)
        self._s = dev.zeros((N,), np.float64)
        self._out = dev.zeros((N,), np.float64)

    def rows(self, w, sigma, c, p, q, kind):
        """G (N,) of :func:`.cpu_etas.etas_rows`."""
        self._put(self._w, w)
        self._put(self._s, sigma)
        self.dev.launch(self._f, self._grid(self.N), self.block,
                        [self._x, self._t, self._ts, self._w, self._s, np.float64(c), np.float64(p), np.float64(q),
                         np.int32(kind), np.int32(self.N), self._out])
        return self.dev.to_host(self._out).copy()


class GpuMultitype(_Rows):
    """:func:`.cpu_multitype.multitype_rows` on ``device`` for fixed sorted data.

    Parameters
    ----------
    device : Device
        Where the kernel runs.
    x : ndarray, shape (N, 3)
        Locations (zeros beyond D), sorted by time.
    t, ts, k : ndarray, shape (N,)
        Sorted times, their tie starts and the types (0..K-1).
    K : int
        Number of types.
    block : int, optional
        Threads per block.

    Examples
    --------
    >>> import numpy as np
    >>> from hphawkes_py._backend import get_device
    >>> from hphawkes_py.hawkes.gpu_marked import GpuMultitype
    >>> t = np.array([0.0, 1.0]); g = GpuMultitype(get_device("emulator"), np.zeros((2, 3)), t, np.array([0, 1]),
    ...                                             np.array([0, 1]), 2)
    >>> S, G = g.rows(0.5, 0.5, 0.5, 1.0)
    >>> S.tolist(), np.round(G, 4).tolist()  # G[1, type 0] = exp(-1)
    ([1.0, 1.0], [[0.0, 0.0], [0.3679, 0.0]])
    """

    def __init__(self, device, x, t, ts, k, K: int, block: int | None = None):
        super().__init__(device, "multitype_rows", block)
        dev = self.dev
        self.N = N = int(t.shape[0])
        self.K = int(K)
        self._x = dev.to_device(np.ascontiguousarray(x, dtype=np.float64).reshape(-1))
        self._t = dev.to_device(np.ascontiguousarray(t, dtype=np.float64))
        self._ts = dev.to_device(np.ascontiguousarray(ts, dtype=np.int64))
        self._k = dev.to_device(np.ascontiguousarray(k, dtype=np.int64))
        self._S = dev.zeros((N,), np.float64)
        self._G = dev.zeros((N * self.K,), np.float64)

    def rows(self, ax, at, bh, om, do_s=True, do_g=True):
        """(S (N,), G (N, K)) of :func:`.cpu_multitype.multitype_rows`."""
        self.dev.launch(self._f, self._grid(self.N), self.block,
                        [self._x, self._t, self._ts, self._k, np.float64(ax), np.float64(at), np.float64(bh),
                         np.float64(om), np.int32(bool(do_s)), np.int32(bool(do_g)), np.int32(self.K),
                         np.int32(self.N), self._S, self._G])
        return self.dev.to_host(self._S).copy(), self.dev.to_host(self._G).reshape(self.N, self.K).copy()
