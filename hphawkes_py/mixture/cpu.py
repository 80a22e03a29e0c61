"""CPU engine of the truncated Dirichlet-process mixture (Numba + BLAS).

Per chunk of points (256 by default, so its densities stay in L2 between the product and the
draw) a worker builds the quadratic features feature-major (:mod:`.cpu_features`, every loop
over points, SIMD), multiplies them by the coefficient matrix (one BLAS GEMM: all k log
densities of the chunk), draws the labels (:mod:`.cpu_draw`; in float32 the certified draw of
:mod:`.cpu_float32`) and adds the label moments of the chunk's points (:mod:`.cpu_moments`).
The moments of fixed blocks of chunks are kept apart and summed in block order, so the results
are bit-identical whatever the number of threads.  Everything is processed in chunks, so memory
is O(chunk x k) whatever n is.
"""
from __future__ import annotations

import itertools
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit

from ._blas import single_threaded_blas
from .cpu_draw import _logsumexp_rows, _normalise_rows, _sample_rows, _sample_rows_pruned, prune_margin
from .cpu_features import _features_t, features
from .cpu_float32 import _sample_rows_certified, float32_error_factor, float32_error_norms
from .cpu_moments import STAT_BLOCKS, _add_moments, _clear_moments, moments_to_stats, moments_width
from .engine import Engine, build_coefficients

__all__ = ["CpuEngine"]


@njit(cache=True, nogil=True)
def _certified_chunk(D32, c0, ea, eb, eps, xnorm, u, X, Wt, z, loglik, T, kept, refined, E, M):
    """One chunk of the certified float32 sweep after its GEMM, in one call (one dispatch
    instead of two per chunk): certified draw, label moments."""
    _sample_rows_certified(D32, c0, ea, eb, eps, xnorm, u, X, Wt, z, loglik, T, kept, refined, E)
    _add_moments(X, z, M)


@njit(cache=True, nogil=True)
def _pruned_chunk(D, u, X, z, loglik, T, kept, M):
    """One chunk of the pruned float64 sweep after its GEMM: draw and label moments."""
    _sample_rows_pruned(D, u, z, loglik, T, kept)
    _add_moments(X, z, M)


class CpuEngine(Engine):
    """Hot steps of the TDP mixture on the CPU (see the module docstring).

    Parallel over chunks of points: ``threads`` Python worker threads (Numba's thread
    count by default; the calling thread is one of them) each claim fixed blocks of consecutive
    chunks, one at a time, and run, per chunk, the quadratic features (Numba, GIL released), the
    GEMM against the coefficient matrix (single-threaded BLAS, GIL released) and the per-row
    log-sum-exp and draw (Numba, GIL released); a worker with no block left draws the last
    unstarted chunks of the blocks still running, whose own workers add their label moments
    (:meth:`_run`).  Per-worker buffers and per-block partial sums, each block accumulated in
    chunk order: the result does not depend on the number of threads.

    Parameters
    ----------
    X : ndarray (n, p)
        The (standardised) data, float64.
    chunk_size : int
        Points per chunk; memory is about ``threads * chunk_size * (k + F) * 8`` bytes.
    threads : int, optional
        Worker threads (default ``numba.get_num_threads()``).
    prune : bool, default True
        Label draws skip, per point, the components whose log density is more than
        :func:`.cpu_draw.prune_margin` (about 40 nats for k = 256) below the point's best: they
        are treated as probability 0, which leaves out less than ``PRUNE_TOL`` = 1e-15 of the
        point's probability mass (the bound is in :func:`.cpu_draw.prune_margin`).  The densities
        themselves are still all computed (one GEMM); what is saved is the exponentials and
        the inverse-CDF scan over the many components that cannot matter.  False: the
        exact draw over all k components.  ``last_kept_fraction`` holds the fraction of
        (point, component) pairs the last pruned draw kept.  With ``dtype=float32`` the pruned
        draw is certified to give the float64 labels (:mod:`.cpu_float32`;
        ``last_refined_fraction``: rows redrawn in float64, ``last_loglik_error_bound``: bound
        on |loglik - float64 loglik|).
    """

    backend = "cpu"

    def __init__(self, X, *, chunk_size: int = 256, dtype=np.float64, threads=None, prune: bool = True):
        super().__init__(X, dtype=dtype)
        # the density product runs in self.dtype (float32: single-precision GEMM and exp, twice
        # the values per SIMD register); the sufficient statistics are always accumulated from the float64 data
        self._Xf = self.X if self.dtype == np.float64 else self.X.astype(self.dtype)
        self.chunk = int(max(1, chunk_size))
        if threads is None:
            import numba

            threads = numba.get_num_threads()
        self.threads = int(max(1, threads))
        self._pool = None
        self.W = None
        self.prune = bool(prune)
        self._last_draw = None  # (kept, refined, E, k) of the last label draw, for the diagnostics

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_pool"] = None
        state.pop("_M", None)  # scratch (the label-moment blocks), rebuilt on use
        state["_last_draw"] = None  # n-long diagnostics arrays
        return state

    def close(self):
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    # ------------------------------------------------------------------ parameters
    def set_components(self, log_weights, means, prec_factors, logdets) -> None:
        """Load component parameters (standardised units) for the next hot steps."""
        W64 = build_coefficients(log_weights, means, prec_factors, logdets)
        self.W = np.ascontiguousarray(W64, dtype=self.dtype)
        self.k = self.W.shape[1]
        if self.dtype == np.float32:
            # the certified float32 draw: float32 product of the non-constant features, float64
            # constants (log weights may be -inf), error bounds, and W' for refined rows
            self._W32x = np.ascontiguousarray(self.W[1:])
            self._c0 = W64[0].copy()
            self._ea, self._eb = float32_error_norms(W64, self.p)
            self._Wt64 = np.ascontiguousarray(W64.T)

    # ------------------------------------------------------------------ parallel driver
    def _run(self, n, work, nblocks: int = 1, start_block=None, finish=None):
        """Call ``work(lo, hi, phi_t, D, b)`` for every chunk of [0, n) on the worker threads.

        ``phi_t`` is an (F, hi - lo) feature-major scratch (rows of a larger buffer, so
        ``phi_t.T`` is a Fortran-ordered view that BLAS reads without a copy), ``D`` a
        (hi - lo, k) scratch, both in the engine dtype.  The chunks are grouped into
        ``min(nblocks, chunks)`` fixed blocks of consecutive chunks; each worker claims the next
        unclaimed block whenever it is done with one (so a worker that other jobs on the host
        slow down takes fewer blocks instead of holding the others up at the end); ``b`` is the
        chunk's block.  Returns, per block, the sum of ``work``'s return values over its chunks
        in order (None where ``work`` returns None): a block is always summed the same way,
        whichever worker takes it, so totals taken over the blocks in order do not depend on the
        number of threads or on the scheduling.  ``start_block(b)``, if given, is called by the
        worker that takes block ``b`` before its first chunk (to clear the block's accumulators
        on that worker's core).  The calling thread is one of the workers (one thread fewer to
        wake per call).

        ``finish(lo, hi, b)``, if given, lets a worker that finds no unclaimed block left take the
        last not yet started chunks of the blocks still running, one at a time (those blocks are
        ~1/16 of the sweep each: without this the first worker done would idle for half a block
        on average): it calls ``work(lo, hi, phi_t, D, -1)``, which must do
        everything but the part that has to run in chunk order within the block (the label
        moments), and the block's worker calls ``finish(lo, hi, b)`` for those chunks, in order,
        once they are done, so every block is still accumulated in the same order.  ``work`` must
        then return None.
        """
        chunk = max(1, min(self.chunk, n))
        nchunks = -(-n // chunk)
        B = max(1, min(int(nblocks), nchunks))
        T = max(1, min(self.threads, B if B > 1 else nchunks))
        if B == 1 and T > 1:  # one block: split its chunks between the workers (work returns None)
            tasks = [(t * nchunks // T, (t + 1) * nchunks // T, 0) for t in range(T)]
            if start_block is not None:
                start_block(0)
                start_block = None
            finish = None
        else:
            tasks = [(b * nchunks // B, (b + 1) * nchunks // B, b) for b in range(B)]
        out = [None] * len(tasks)
        claim = itertools.count()  # next() on it is atomic (C code under the GIL): no lock
        # per task: [next chunk its worker takes, end of the chunks left to that worker]; chunks
        # from the end on were taken by other workers, and their events are set once drawn
        left = [[c0, c1] for c0, c1, _ in tasks]
        lock = threading.Lock()
        drawn = {}

        def bounds(c):
            return c * chunk, min(n, (c + 1) * chunk)

        def own(i, phi_t, D):
            c0, c1, b = tasks[i]
            if start_block is not None:
                start_block(b)
            acc = None
            st = left[i]
            while True:
                with lock:
                    c = st[0]
                    if c >= st[1]:
                        break
                    st[0] = c + 1
                lo, hi = bounds(c)
                r = work(lo, hi, phi_t[:, : hi - lo], D[: hi - lo], b)
                if r is not None:
                    acc = r if acc is None else acc + r
            for c in range(st[1], c1):  # drawn by other workers: the ordered part, in order
                drawn[c].wait()
                finish(*bounds(c), b)
            out[i] = acc

        def steal(phi_t, D):
            with lock:
                i = max(range(len(tasks)), key=lambda t: left[t][1] - left[t][0])
                if left[i][1] <= left[i][0]:
                    return False
                left[i][1] -= 1
                c = left[i][1]
                done = drawn[c] = threading.Event()
            try:
                lo, hi = bounds(c)
                work(lo, hi, phi_t[:, : hi - lo], D[: hi - lo], -1)
            finally:
                done.set()  # also on an error: the block's worker must not wait for ever
            return True

        def worker(_):
            phi_t = np.empty((self.F, chunk), dtype=self.dtype)
            D = np.empty((chunk, self.k), dtype=self.dtype)
            for i in iter(lambda: next(claim), None):
                if i >= len(tasks):
                    break
                own(i, phi_t, D)
            if finish is not None:
                while steal(phi_t, D):
                    pass

        self._run_workers(worker, T)
        return out

    def _run_workers(self, worker, T):
        """``worker(t)`` for t < T, BLAS on one thread: worker 0 on the calling thread, the others
        on the engine's thread pool (kept between calls); re-raises a worker's exception."""
        with single_threaded_blas():
            if T == 1:
                worker(0)
                return
            if self._pool is None or self._pool._max_workers < T - 1:
                self.close()
                self._pool = ThreadPoolExecutor(max_workers=T - 1, thread_name_prefix="hphawkes-mixture")
            futures = [self._pool.submit(worker, t) for t in range(1, T)]
            try:
                worker(0)
            finally:
                for f in futures:
                    f.result()  # waits; re-raises a worker's exception

    def _xnorm(self):
        """||x_i|| of the float64 data rows (rounded upwards), for the float32 error bounds."""
        if getattr(self, "_xn", None) is None:
            self._xn = np.sqrt(np.einsum("ia,ia->i", self.X, self.X)) * (1.0 + 1e-15)
        return self._xn

    def _moment_blocks(self, k):
        """The (STAT_BLOCKS, k, :func:`moments_width`) label-moment accumulators, kept between
        sweeps: a fresh ``np.zeros`` of these 7.9 MB (k = 256, p = 14) cost a serial memset or
        page faults every sweep; the blocks are cleared by the workers (``_run``'s
        ``start_block``, :func:`_clear_moments`: the rows last filled only) instead, each on the
        core that fills it.  Blocks that ``_run`` does not use (fewer chunks than blocks) are
        cleared here."""
        shape = (STAT_BLOCKS, k, moments_width(self.p))
        M = getattr(self, "_M", None)
        if M is None or M.shape != shape:
            M = self._M = np.zeros(shape)
        nchunks = -(-self.n // max(1, min(self.chunk, self.n))) if self.n else 0
        M[min(STAT_BLOCKS, nchunks):] = 0.0
        return M

    # ------------------------------------------------------------------ Gibbs
    def sample_labels(self, uniforms, return_labels: bool = True):
        """Draw every z_i from its configuration probabilities given ``uniforms`` (n,) in [0, 1).

        Returns z (n,) int32 (None when ``return_labels`` is false; ``self.z`` holds it either
        way) and stores it for :meth:`label_stats`; the total
        log likelihood of the data under the current mixture is in ``self.loglik``.
        The label statistics are accumulated in the same pass (from the float64 data, whatever
        the engine dtype), while the chunk is in cache.
        """
        u = self._check_uniforms(uniforms)
        z = np.empty(self.n, dtype=np.int32)
        ll = np.empty(self.n)
        X, Xf, W, k, p = self.X, self._Xf, self.W, self.k, self.p
        prune = self.prune
        if prune:
            margin = prune_margin(k)
            kept = np.empty(self.n, dtype=np.int32)
        M = self._moment_blocks(k)
        certified = prune and self.dtype == np.float32
        if certified:
            W32x, c0, ea, eb, Wt64 = self._W32x, self._c0, self._ea, self._eb, self._Wt64
            xnorm = self._xnorm()
            eps = float32_error_factor(self.F)
            E = np.empty(self.n)
            refined = np.empty(self.n, dtype=np.uint8)

        def work(lo, hi, phi_t, D, b):
            # b < 0: a chunk taken from another worker's block, whose worker adds its moments (finish)
            _features_t(Xf[lo:hi], phi_t)
            if certified:
                np.matmul(phi_t[1:].T, W32x, out=D)
                args = (D, c0, ea, eb, eps, xnorm[lo:hi], u[lo:hi], X[lo:hi], Wt64, z[lo:hi], ll[lo:hi], margin,
                        kept[lo:hi], refined[lo:hi], E[lo:hi])
                if b >= 0:
                    _certified_chunk(*args, M[b])
                else:
                    _sample_rows_certified(*args)
                return
            np.matmul(phi_t.T, W, out=D)
            if prune:
                if b >= 0:
                    _pruned_chunk(D, u[lo:hi], X[lo:hi], z[lo:hi], ll[lo:hi], margin, kept[lo:hi], M[b])
                else:
                    _sample_rows_pruned(D, u[lo:hi], z[lo:hi], ll[lo:hi], margin, kept[lo:hi])
            else:
                _sample_rows(D, u[lo:hi], z[lo:hi], ll[lo:hi])
                if b >= 0:
                    _add_moments(X[lo:hi], z[lo:hi], M[b])

        def finish(lo, hi, b):
            _add_moments(X[lo:hi], z[lo:hi], M[b])

        self._run(self.n, work, STAT_BLOCKS, lambda b: _clear_moments(M[b]), finish)
        self._T_last = moments_to_stats(M.sum(axis=0), p)
        self.z = z
        self.loglik = float(ll.sum())
        # the draw's diagnostics are summed when read: the sampler does not read them, and their
        # serial sums would cost every sweep
        self._last_draw = (kept if prune else None, refined if certified else None, E if certified else None, k)
        return z if return_labels else None

    @property
    def last_kept_fraction(self):
        """Fraction of the (point, component) pairs the last pruned draw kept (None: not pruned)."""
        kept, _, _, k = getattr(self, "_last_draw", None) or (None,) * 4
        return float(kept.sum(dtype=np.int64)) / (self.n * k) if kept is not None and self.n else None

    @property
    def last_refined_fraction(self):
        """Fraction of the rows the last certified float32 draw redrew in float64 (None: not that draw)."""
        _, refined, _, _ = getattr(self, "_last_draw", None) or (None,) * 4
        return float(refined.sum(dtype=np.int64)) / self.n if refined is not None and self.n else None

    @property
    def last_loglik_error_bound(self):
        """Bound on |loglik - float64 loglik| of the last draw (0 but for the certified float32 draw,
        whose certified rows carry the float32 log-sum-exp, within E_i of the float64 one)."""
        _, refined, E, _ = getattr(self, "_last_draw", None) or (None,) * 4
        return float(E[refined == 0].sum()) if E is not None else 0.0

    def label_stats(self) -> np.ndarray:
        """(k, F) sums of quadratic features per component for the last sampled labels."""
        if getattr(self, "_T_last", None) is not None:
            return self._T_last.copy()
        X, z, k, p = self.X, self.z, self.k, self.p
        M = self._moment_blocks(k)

        def work(lo, hi, phi_t, D, b):
            _add_moments(X[lo:hi], z[lo:hi], M[b])

        self._run(self.n, work, STAT_BLOCKS, lambda b: _clear_moments(M[b]))
        return moments_to_stats(M.sum(axis=0), p)

    # ------------------------------------------------------------------ BEM
    def responsibilities_stats(self):
        """E-step: (loglik, T) with T (k, F) the responsibility-weighted feature sums.

        Never materialises the n x k responsibility matrix: chunk by chunk,
        T += R_chunk' Phi_chunk (per-block partial sums, added in block order at the end).
        """
        X, W = self._Xf, self.W
        ll = np.empty(self.n)

        def work(lo, hi, phi_t, D, b):
            _features_t(X[lo:hi], phi_t)
            np.matmul(phi_t.T, W, out=D)
            _normalise_rows(D, ll[lo:hi])
            return (phi_t @ D).T.astype(np.float64)

        parts = [r for r in self._run(self.n, work, STAT_BLOCKS) if r is not None]
        return float(ll.sum()), np.sum(parts, axis=0)

    # ------------------------------------------------------------------ prediction
    def log_density(self, X) -> np.ndarray:
        """log sum_j pi_j N(x_i | mu_j, Sigma_j) for the rows of X (standardised units)."""
        X = np.ascontiguousarray(X, dtype=self.dtype)
        out = np.empty(X.shape[0])
        W = self.W

        def work(lo, hi, phi_t, D, b):
            _features_t(X[lo:hi], phi_t)
            np.matmul(phi_t.T, W, out=D)
            _logsumexp_rows(D, out[lo:hi])

        if X.shape[0]:
            self._run(X.shape[0], work)
        return out

    def component_log_density(self, X) -> np.ndarray:
        """The n x k matrix d_ij for the rows of X (for predict/predict_proba on modest n)."""
        X = np.ascontiguousarray(X, dtype=np.float64)
        with single_threaded_blas():
            return (features(X).astype(self.dtype) @ self.W).astype(np.float64)
