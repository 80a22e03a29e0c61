"""GPU engine for the Hawkes likelihood (PyCUDA device or the CPU emulator).

Device buffers stay resident: coordinates (structure of arrays), split times, the float64 times
used for the window searches, S, the two trigger slots G[0], G[1] and small partial-sum buffers.
Per parameter change only scalars cross: set_background / set_trigger launch one block per event
(``kernels/hawkes.cu``; windows found by binary search in the kernel), sum_log_intensity and the
trigger integral reduce on the device to one double per block, and only those few partial
sums come back. ``self_excitation``, ``background_sums`` and ``trigger_sums`` copy N values back
(that is their job).

``pair_evaluations`` counts the kernel terms the blocks evaluate (N^2 background terms and
N(N-1)/2 trigger terms in exact mode; the row-parallel GPU kernel does not use the symmetry of
the background). It is computed lazily on the host from the window cut-offs, so reading it costs
O(N log N) once per distinct cut-off, never during the likelihood evaluations themselves.
"""
from __future__ import annotations

import math

import numpy as np

from ..gpu.device import KERNELS_DIR
from .engine import Engine
from .kernels import phi0
from .times import split_time, tie_starts, time_grid

__all__ = ["GpuEngine", "GpuGradientSums"]


class GpuEngine(Engine):
    """One block per event, shared-memory tree reduction; works on any ``Device`` (given by
    :func:`~.engine.make_engine`; the engine never fetches one itself)."""

    def __init__(self, x, t, *, device, backend="emulator", dtype=np.float64, threads=None, exact=False,
                 window=None, block=None, grid_reduce=None, kernel_p=0.0, kernel=None, spatial_kernel=None):
        super().__init__(x, t, dtype=dtype, threads=threads, exact=exact, window=window, kernel_p=kernel_p,
                         kernel=kernel, spatial_kernel=spatial_kernel)
        self.backend = backend
        self.dev = dev = device
        real = "double" if self.dtype == np.float64 else "float"
        self._mod = dev.module(KERNELS_DIR / "hawkes.cu", defines={"REAL": real})
        self._f_bg = self._mod.function("hawkes_background")
        self._f_tr = self._mod.function("hawkes_trigger")
        self._f_sl = self._mod.function("hawkes_sum_log")
        self._f_pi = self._mod.function("hawkes_pi")
        self._f_ti = self._mod.function("hawkes_trigger_integral")
        self._f_q = self._mod.function("hawkes_query")
        # 256 threads per event row on a GPU, lowered to what every kernel's registers allow (one block size
        # for all launches: they share the reduction buffers); Device.block_size gives the emulator its
        # small blocks (every emulated thread is a fiber)
        if block is None:
            block = min(dev.block_size(f, 256, shared_bytes_per_thread=8)
                        for f in (self._f_bg, self._f_tr, self._f_sl, self._f_pi, self._f_ti, self._f_q))
        self.block = int(block)
        self.grid_reduce = int(grid_reduce or (128 if backend == "gpu" else 4))
        self.grid_rows = min(self.N, 65535 * 32)
        dt = self.dtype
        self._xmean = x.mean(axis=0)
        xc = x - self._xmean
        cols = [dev.to_device(np.ascontiguousarray(xc[:, d], dtype=dt)) for d in range(self.D)]
        while len(cols) < 3:
            cols.append(cols[0])
        self._x = cols
        self._tgrid = time_grid(t, dt)
        th, tl = split_time(t, dt, grid=self._tgrid)
        self._th = dev.to_device(th)
        self._tl = dev.to_device(tl)
        self._tw_host = np.ascontiguousarray(t, dtype=np.float64)
        self._tw = dev.to_device(self._tw_host)
        self._S = dev.zeros((self.N,), dt)
        self._G = [dev.zeros((self.N,), dt), dev.zeros((self.N,), dt)]
        self._partial = dev.zeros((self.grid_reduce,), np.float64)
        self._pending = []        # (kind, delta) of launches not yet counted
        self._count_cache = {}

    # -- pair counting (lazy, host side) ------------------------------------------------------
    def _pending_pairs(self) -> int:
        total = 0
        for key in self._pending:
            c = self._count_cache.get(key)
            if c is None:
                c = self._count(*key)
                self._count_cache[key] = c
            total += c
        self._pairs += total
        self._pending = []
        return 0

    def _count(self, kind, delta) -> int:
        t = self._tw_host
        N = self.N
        if kind == "bg":
            if delta < 0:
                return N * N
            lo = np.searchsorted(t, t - delta, side="left")
            hi = np.searchsorted(t, t + delta, side="right")
            return int(np.sum(hi - lo))
        ts = tie_starts(t)
        lo = np.zeros(N, np.int64) if delta < 0 else np.minimum(np.searchsorted(t, t - delta, side="left"), ts)
        return int(np.sum(ts - lo))

    # -- kernels -----------------------------------------------------------------------------
    def _real(self, v):
        return self.dtype.type(v)

    def _k_background(self, tau_x, tau_t, delta):
        d = -1.0 if not math.isfinite(delta) else float(delta)
        scale = phi0(self.D, tau_x) * phi0(1, tau_t)
        self.dev.launch(self._f_bg, self.grid_rows, self.block,
                        [*self._x, self._th, self._tl, self._tw, np.int32(self.N), np.int32(self.D),
                         self._real(0.5 / tau_x**2), self._real(0.5 / tau_t**2), np.float64(d),
                         np.float64(scale), self._S],
                        shared_bytes=self.block * self.dtype.itemsize)
        self._pending.append(("bg", d))

    def _time_args(self, consts):
        """The trigger kernels' (bh, om, kp, c1, om2, c2, sq) in REAL and the double scale (see hawkes.cu;
        sq = 0: Gaussian spatial term bh r2, sq = q > 0: spatial power law q log1p(bh r2))."""
        bh, om, c1, om2, c2, scale = consts
        return [self._real(v) for v in (bh, om, self.kernel_p, c1, om2, c2, self.spatial_q)], np.float64(scale)

    def _k_trigger(self, h, rates, delta, phys, limit=math.inf):
        d = -1.0 if not math.isfinite(delta) else float(delta)
        targs, scale = self._time_args(self._trigger_consts(h, rates))
        self.dev.launch(self._f_tr, self.grid_rows, self.block,
                        [*self._x, self._th, self._tl, self._tw, np.int32(self.N), np.int32(self.D),
                         *targs, self._limit(limit), np.float64(d), scale, self._G[phys]],
                        shared_bytes=self.block * self.dtype.itemsize)
        self._pending.append(("tr", d))

    def _k_both(self, tau_x, tau_t, delta_s, h, rates, delta_g, phys, limit_g=math.inf):
        self._k_background(tau_x, tau_t, delta_s)
        self._k_trigger(h, rates, delta_g, phys, limit_g)

    def _reduce(self, fn, args):
        self.dev.launch(fn, self.grid_reduce, self.block, args + [self._partial],
                        shared_bytes=self.block * 8)
        return float(math.fsum(self.dev.to_host(self._partial)))

    def _k_sum_log(self, mu0, theta, phys):
        return self._reduce(self._f_sl, [self._S, self._G[phys], np.int32(self.N),
                                         np.float64(mu0), np.float64(theta)])

    def _k_trigger_integral(self, omega):
        return self._reduce(self._f_ti, [self._tw, np.int32(self.N), np.float64(self.window[1]),
                                         np.float64(omega)])

    def _k_pi(self, mu0, theta, phys):
        out = self.dev.empty((self.N,), np.float64)
        self.dev.launch(self._f_pi, self.grid_reduce, self.block,
                        [self._S, self._G[phys], np.int32(self.N), np.float64(mu0), np.float64(theta), out])
        return self.dev.to_host(out)

    def _k_S(self):
        return self.dev.to_host(self._S).astype(np.float64)

    def _k_set_S(self, S):
        self.dev.copy_to_device(self._S, np.ascontiguousarray(S, dtype=self.dtype))

    def _k_G(self, phys):
        return self.dev.to_host(self._G[phys]).astype(np.float64)

    def _k_query(self, points, time, ranges, ax, at, scale_s, consts):
        dev, dt = self.dev, self.dtype
        Q = points.shape[0]
        pc = points - self._xmean
        q = [dev.to_device(np.ascontiguousarray(pc[:, d], dtype=dt)) for d in range(self.D)]
        while len(q) < 3:
            q.append(q[0])
        qh, ql = split_time(np.array([time]), dt, grid=self._tgrid)
        out_s, out_g = dev.zeros((Q,), dt), dev.zeros((Q,), dt)
        lo_s, hi_s, lo_g, hi_g = (np.int32(v) for v in ranges)
        targs, scale_g = self._time_args(consts)
        dev.launch(self._f_q, min(Q, 65535 * 32), self.block,
                   [*self._x, self._th, self._tl, np.int32(self.D), *q, np.int32(Q), self._real(qh[0]),
                    self._real(ql[0]), lo_s, hi_s, lo_g, hi_g, self._real(ax), self._real(at), *targs,
                    self._limit(math.inf), np.float64(scale_s), scale_g, out_s, out_g],
                   shared_bytes=self.block * dt.itemsize)
        self._pairs += Q * int((hi_s - lo_s) + (hi_g - lo_g))
        return dev.to_host(out_s).astype(np.float64), dev.to_host(out_g).astype(np.float64)


class GpuGradientSums:
    """The weighted pair sums of the log-likelihood gradient on a ``Device`` (``hawkes_gradient_sums``
    in ``kernels/hawkes.cu``): the CUDA twin of :func:`~.cpu_gradient.gradient_sums`, same arguments
    after the arrays, same results (pair terms in the kernel dtype, sums in float64).

    Coordinates, split times and float64 times stay resident; a call sends only scalars and copies
    the (N, 3) and (N, 5) sums back.

    Parameters
    ----------
    cols : sequence of ndarray
        The D centred coordinate columns (kernel dtype), events sorted by time.
    th, tl : ndarray
        The split times (``times.split_time``), kernel dtype.
    tw : ndarray
        float64 times (the windows' searches).
    device : Device
        Where the kernel runs (PyCUDA, CuPy or the emulator).
    backend : {"gpu", "emulator"}
        Sizes the launch (the emulator runs small blocks).

    Examples
    --------
    >>> import numpy as np
    >>> from hphawkes_py._backend import get_device
    >>> from hphawkes_py.hawkes.gpu import GpuGradientSums
    >>> t = np.array([0.0, 0.5, 1.0])
    >>> cols = [np.zeros(3), np.zeros(3)]
    >>> sums = GpuGradientSums(cols, t, np.zeros(3), t, device=get_device("emulator"), backend="emulator")
    >>> out_s, out_g = np.zeros((3, 3)), np.zeros((3, 5))
    >>> sums(True, 0.5, 0.5, np.inf, True, 0.5, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0, 0, np.inf, out_s, out_g)
    >>> round(float(out_g[2, 0]), 6)  # exp(-0.5) + exp(-1): the two earlier events, at distance 0
    0.97441
    """

    def __init__(self, cols, th, tl, tw, *, device, backend="emulator"):
        self.dev = dev = device
        self.dtype = np.dtype(th.dtype)
        self.N = int(tw.shape[0])
        self.D = len(cols)
        real = "double" if self.dtype == np.float64 else "float"
        self._fn = dev.module(KERNELS_DIR / "hawkes.cu", defines={"REAL": real}).function("hawkes_gradient_sums")
        self.block = int(dev.block_size(self._fn, 256, shared_bytes_per_thread=8))
        self.grid = min(self.N, 65535 * 32)
        x = [dev.to_device(np.ascontiguousarray(c, dtype=self.dtype)) for c in cols]
        while len(x) < 3:
            x.append(x[0])
        self._x = x
        self._th = dev.to_device(np.ascontiguousarray(th, dtype=self.dtype))
        self._tl = dev.to_device(np.ascontiguousarray(tl, dtype=self.dtype))
        self._tw = dev.to_device(np.ascontiguousarray(tw, dtype=np.float64))
        self._out_s = dev.zeros((3 * self.N,), np.float64)
        self._out_g = dev.zeros((5 * self.N,), np.float64)

    def __call__(self, with_background, ax, at, delta_s, with_trigger, bh, om, om2, c1, c2, p, q, tkind, skind,
                 delta_g, out_s, out_g):
        """Fill ``out_s`` (N, 3) when ``with_background`` and ``out_g`` (N, 5) when ``with_trigger``
        (float64 host arrays; see :func:`~.cpu_gradient.gradient_sums` for the arguments)."""
        if self.N == 0:
            return
        r = self.dtype.type
        ds = -1.0 if not math.isfinite(delta_s) else float(delta_s)
        dg = -1.0 if not math.isfinite(delta_g) else float(delta_g)
        self.dev.launch(self._fn, self.grid, self.block,
                        [*self._x, self._th, self._tl, self._tw, np.int32(self.N), np.int32(self.D),
                         np.int32(bool(with_background)), r(ax), r(at), np.float64(ds), np.int32(bool(with_trigger)),
                         r(bh), r(om), r(om2), r(c1), r(c2), r(p), r(q), np.int32(tkind), np.int32(skind),
                         np.float64(dg), self._out_s, self._out_g],
                        shared_bytes=self.block * 8)
        if with_background:
            out_s[:] = self.dev.to_host(self._out_s).reshape(self.N, 3)
        if with_trigger:
            out_g[:] = self.dev.to_host(self._out_g).reshape(self.N, 5)
