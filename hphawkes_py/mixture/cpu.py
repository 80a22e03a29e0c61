"""CPU engine of the truncated Dirichlet-process mixture (Numba + BLAS).

The hot step is the n x k matrix of weighted log component densities

    d_ij = log pi_j - p/2 log(2 pi) - 1/2 log|Sigma_j| - 1/2 (x_i - mu_j)' P_j (x_i - mu_j),

with P_j = Sigma_j^{-1}.  Expanding the quadratic form, d_ij is linear in the
*quadratic features* of x_i,

    phi(x) = [1, x_1, ..., x_p, x_a x_b (a <= b)]          (F = 1 + p + p(p+1)/2 values),

so for a chunk of points all k log densities are ONE matrix product
``Phi_chunk (c x F) @ W (F x k)`` (W holds the per-component coefficients).  This
is 2F = (p + 1)(p + 2) flops per (point, component) -- 240 for p = 14 -- done by
BLAS at near peak speed, instead of ~p^2 scalar operations of a triangular solve
that cannot be vectorised across the short p loop.  (benchmarks/bench_mixture.py
compares it with a fused Numba triangular-solve loop.)  The same features give
the component sufficient statistics: counts, sums and second moments are the
columns of ``onehot(z)' Phi`` (Gibbs) or ``R' Phi`` (Bayesian EM, R the
responsibilities), again one product per chunk.

Rounding: in float64 the expanded form loses about |x|^2 ||P|| eps in absolute
terms; on standardised data (|x| of order 1-10) that is far below 1e-10 of the
log densities the sampler uses.  Everything is processed in chunks of points so
memory is O(chunk x k) whatever n is.
"""
from __future__ import annotations

import math
import types

import numpy as np
from numba import njit, prange

from .._fastmath import exp_fast

__all__ = ["CpuEngine", "n_features", "build_coefficients", "features"]

LOG_2PI = math.log(2.0 * math.pi)


def n_features(p: int) -> int:
    """Number of quadratic features 1 + p + p(p+1)/2."""
    return 1 + p + p * (p + 1) // 2


def _features_impl(X, out):
    """out[i] = [1, x, x_a x_b for a <= b (row-major upper triangle)]."""
    n, p = X.shape
    for i in prange(n):
        out[i, 0] = 1.0
        for a in range(p):
            out[i, 1 + a] = X[i, a]
        f = 1 + p
        for a in range(p):
            xa = X[i, a]
            for b in range(a, p):
                out[i, f] = xa * X[i, b]
                f += 1


def features(X: np.ndarray) -> np.ndarray:
    """Quadratic features of the rows of ``X`` (n x F), see the module docstring."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    out = np.empty((X.shape[0], n_features(X.shape[1])))
    _features(X, out)
    return out


def build_coefficients(log_weights, means, prec_factors, logdets) -> np.ndarray:
    """The F x k coefficient matrix W with ``phi(x) @ W[:, j] = d_j(x)``.

    ``prec_factors[j]`` is a (lower-triangular) U_j with U_j' U_j = Sigma_j^{-1}
    (U_j = L_j^{-1} for the Cholesky factor L_j of Sigma_j); ``logdets[j]`` is
    log|Sigma_j|.  Components with log weight -inf get -inf densities.
    """
    log_weights = np.asarray(log_weights, dtype=np.float64)
    means = np.asarray(means, dtype=np.float64)
    U = np.asarray(prec_factors, dtype=np.float64)
    k, p = means.shape
    P = np.einsum("jra,jrb->jab", U, U)  # precisions
    Pm = np.einsum("jab,jb->ja", P, means)
    quad = np.einsum("ja,ja->j", Pm, means)
    W = np.empty((n_features(p), k))
    with np.errstate(invalid="ignore"):
        W[0] = log_weights - 0.5 * p * LOG_2PI - 0.5 * np.asarray(logdets, dtype=np.float64) - 0.5 * quad
    W[1 : 1 + p] = Pm.T
    f = 1 + p
    for a in range(p):
        W[f] = -0.5 * P[:, a, a]
        f += 1
        for b in range(a + 1, p):
            W[f] = -P[:, a, b]
            f += 1
    return W


# Reassociation lets LLVM vectorise the sums of exponentials (packed exp_fast);
# no flag that assumes away inf/NaN is used (log weights may be -inf).
_FM = {"reassoc", "contract", "arcp", "nsz"}


@njit(cache=True)
def _row_max(row):
    m = -np.inf
    for j in range(row.shape[0]):
        v = row[j]
        if v > m:
            m = v
    return m


@njit(cache=True, fastmath=_FM)
def _row_exp_sum(row, m, buf):
    """buf[j] = exp(row[j] - m); returns sum_j buf[j] (vectorised)."""
    s = 0.0
    for j in range(row.shape[0]):
        e = exp_fast(row[j] - m)
        buf[j] = e
        s += e
    return s


def _sample_rows_impl(D, u, z, loglik):
    """Per row: log-sum-exp of D[i], and z_i = first j with cumsum_j exp(D_ij - max) > u_i * total.

    Components with D = -inf have probability 0 and are never chosen; if rounding
    leaves the cumulative sum at or below the target, the last component with
    positive probability is returned.
    """
    c, k = D.shape
    for i in prange(c):
        buf = np.empty(k)
        row = D[i]
        m = _row_max(row)
        s = _row_exp_sum(row, m, buf)
        loglik[i] = m + math.log(s)
        target = u[i] * s
        acc = 0.0
        zi = -1
        last = 0
        for j in range(k):
            e = buf[j]
            if e > 0.0:
                last = j
            acc += e
            if acc > target:
                zi = j
                break
        if zi < 0:
            zi = last
        z[i] = zi


def _normalise_rows_impl(D, loglik):
    """In place: D[i] <- exp(D[i] - logsumexp(D[i])) (responsibilities); loglik[i] = logsumexp."""
    c, k = D.shape
    for i in prange(c):
        row = D[i]
        m = _row_max(row)
        s = _row_exp_sum(row, m, row)
        inv = 1.0 / s
        for j in range(k):
            row[j] *= inv
        loglik[i] = m + math.log(s)


def _logsumexp_rows_impl(D, out):
    c, k = D.shape
    for i in prange(c):
        buf = np.empty(k)
        row = D[i]
        m = _row_max(row)
        out[i] = m + math.log(_row_exp_sum(row, m, buf))


def _label_stats_impl(X, z, k, nblocks):
    """Per-component sums of the quadratic features of the points with z_i = j.

    Each of ``nblocks`` parallel blocks accumulates into its own (k x F) partial
    table (no atomics, no races); the partials are added at the end.
    """
    n, p = X.shape
    F = 1 + p + p * (p + 1) // 2
    part = np.zeros((nblocks, k, F))
    step = (n + nblocks - 1) // nblocks
    for t in prange(nblocks):
        lo = t * step
        hi = min(n, lo + step)
        acc = part[t]
        for i in range(lo, hi):
            j = z[i]
            a_row = acc[j]
            a_row[0] += 1.0
            for a in range(p):
                a_row[1 + a] += X[i, a]
            f = 1 + p
            for a in range(p):
                xa = X[i, a]
                for b in range(a, p):
                    a_row[f] += xa * X[i, b]
                    f += 1
    out = np.zeros((k, F))
    for t in range(nblocks):
        out += part[t]
    return out


@njit(parallel=True, cache=True)
def _triangular_logdens(X, U, b, c0, out):
    """Reference fused formulation (benchmarks only): d_ij = c0_j - 1/2 ||U_j x_i - b_j||^2.

    Blocks of 64 points are transposed so the innermost loop runs over points
    (SIMD); the p x p triangular factor is applied row by row.
    """
    n, p = X.shape
    k = U.shape[0]
    B = 64
    nb = (n + B - 1) // B
    for blk in prange(nb):
        lo = blk * B
        hi = min(n, lo + B)
        m = hi - lo
        xt = np.empty((p, B))
        for a in range(p):
            for t in range(m):
                xt[a, t] = X[lo + t, a]
            for t in range(m, B):
                xt[a, t] = 0.0
        q = np.empty(B)
        tmp = np.empty(B)
        for j in range(k):
            for t in range(B):
                q[t] = 0.0
            for r in range(p):
                br = b[j, r]
                for t in range(B):
                    tmp[t] = -br
                for a in range(r + 1):
                    coef = U[j, r, a]
                    for t in range(B):
                        tmp[t] += coef * xt[a, t]
                for t in range(B):
                    q[t] += tmp[t] * tmp[t]
            for t in range(m):
                out[lo + t, j] = c0[j] - 0.5 * q[t]


def _variants(fn):
    """(parallel, serial) compilations of one kernel.

    The serial one is compiled from a copy of the function with its own
    ``__qualname__``: Numba's on-disk cache is keyed by qualified name and
    source line, not by the ``parallel`` flag, so sharing the name would make
    the two variants overwrite each other's cache entries.
    """
    ser = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__ + "_serial", fn.__defaults__, fn.__closure__)
    ser.__qualname__ = fn.__qualname__ + "_serial"
    ser.__doc__ = fn.__doc__
    return njit(parallel=True, cache=True)(fn), njit(cache=True)(ser)


# Parallel and serial compilations of each kernel: a parallel region costs tens of
# microseconds (much more on a loaded machine), so small problems run serially.
_features_par, _features_ser = _variants(_features_impl)
_sample_rows_par, _sample_rows_ser = _variants(_sample_rows_impl)
_normalise_rows_par, _normalise_rows_ser = _variants(_normalise_rows_impl)
_logsumexp_rows_par, _logsumexp_rows_ser = _variants(_logsumexp_rows_impl)
_label_stats_par, _label_stats_ser = _variants(_label_stats_impl)

#: below this many (point x component) pairs per call the serial kernels are used
PARALLEL_THRESHOLD = 200_000


def _features(X, out):
    (_features_par if X.shape[0] * out.shape[1] >= PARALLEL_THRESHOLD else _features_ser)(X, out)


class CpuEngine:
    """Hot steps of the TDP mixture on the CPU (see the module docstring).

    Parameters
    ----------
    X : ndarray (n, p)
        The (standardised) data, float64.
    chunk_size : int
        Points per chunk; memory is about ``chunk_size * (k + F) * 8`` bytes.
    """

    backend = "cpu"

    def __init__(self, X, *, chunk_size: int = 1024, dtype=np.float64):
        if np.dtype(dtype) != np.float64:
            raise ValueError("the CPU mixture engine computes in float64; use dtype=np.float64")
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        self.n, self.p = self.X.shape
        self.F = n_features(self.p)
        self.chunk = int(max(1, min(chunk_size, self.n)))
        self._phi = np.empty((self.chunk, self.F))
        self.W = None
        self.k = None
        self.z = None
        import numba

        self._nblocks = max(1, min(4 * numba.get_num_threads(), self.n))

    # ------------------------------------------------------------------ parameters
    def set_components(self, log_weights, means, prec_factors, logdets) -> None:
        """Load component parameters (standardised units) for the next hot steps."""
        self.W = np.ascontiguousarray(build_coefficients(log_weights, means, prec_factors, logdets))
        self.k = self.W.shape[1]

    def _chunks(self, X):
        n = X.shape[0]
        for lo in range(0, n, self.chunk):
            hi = min(n, lo + self.chunk)
            phi = self._phi[: hi - lo]
            _features(X[lo:hi], phi)
            yield lo, hi, phi

    # ------------------------------------------------------------------ Gibbs
    def sample_labels(self, uniforms) -> np.ndarray:
        """Draw every z_i from its configuration probabilities given ``uniforms`` (n,) in [0, 1).

        Returns z (n,) int32 and stores it for :meth:`label_stats`; the total
        log likelihood of the data under the current mixture is in ``self.loglik``.
        """
        u = np.ascontiguousarray(uniforms, dtype=np.float64)
        z = np.empty(self.n, dtype=np.int32)
        ll = np.empty(self.n)
        D = np.empty((self.chunk, self.k))
        for lo, hi, phi in self._chunks(self.X):
            d = D[: hi - lo]
            np.matmul(phi, self.W, out=d)
            (_sample_rows_par if d.size >= PARALLEL_THRESHOLD else _sample_rows_ser)(d, u[lo:hi], z[lo:hi], ll[lo:hi])
        self.z = z
        self.loglik = float(ll.sum())
        return z

    def label_stats(self) -> np.ndarray:
        """(k, F) sums of quadratic features per component for the last sampled labels."""
        if self.n * self.F >= PARALLEL_THRESHOLD:
            return _label_stats_par(self.X, self.z, self.k, self._nblocks)
        return _label_stats_ser(self.X, self.z, self.k, 1)

    # ------------------------------------------------------------------ BEM
    def responsibilities_stats(self):
        """E-step: (loglik, T) with T (k, F) the responsibility-weighted feature sums.

        Never materialises the n x k responsibility matrix: chunk by chunk,
        T += R_chunk' Phi_chunk.
        """
        T = np.zeros((self.k, self.F))
        D = np.empty((self.chunk, self.k))
        ll = np.empty(self.chunk)
        total = 0.0
        for lo, hi, phi in self._chunks(self.X):
            d = D[: hi - lo]
            np.matmul(phi, self.W, out=d)
            (_normalise_rows_par if d.size >= PARALLEL_THRESHOLD else _normalise_rows_ser)(d, ll[: hi - lo])
            total += float(ll[: hi - lo].sum())
            T += d.T @ phi
        return total, T

    # ------------------------------------------------------------------ prediction
    def log_density(self, X) -> np.ndarray:
        """log sum_j pi_j N(x_i | mu_j, Sigma_j) for the rows of X (standardised units)."""
        X = np.ascontiguousarray(X, dtype=np.float64)
        out = np.empty(X.shape[0])
        D = np.empty((self.chunk, self.k))
        for lo, hi, phi in self._chunks(X):
            d = D[: hi - lo]
            np.matmul(phi, self.W, out=d)
            (_logsumexp_rows_par if d.size >= PARALLEL_THRESHOLD else _logsumexp_rows_ser)(d, out[lo:hi])
        return out

    def component_log_density(self, X) -> np.ndarray:
        """The n x k matrix d_ij for the rows of X (for predict/predict_proba on modest n)."""
        X = np.ascontiguousarray(X, dtype=np.float64)
        return features(X) @ self.W
