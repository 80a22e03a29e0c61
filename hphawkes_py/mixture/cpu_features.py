"""Quadratic features of the data: the log densities of all k components as one matrix product.

The hot step of the TDP mixture is the n x k matrix of weighted log component densities

    d_ij = log pi_j - p/2 log(2 pi) - 1/2 log|Sigma_j| - 1/2 (x_i - mu_j)' P_j (x_i - mu_j),

with P_j = Sigma_j^{-1}.  Expanding the quadratic form, d_ij is linear in the
*quadratic features* of x_i,

    phi(x) = [1, x_1, ..., x_p, x_a x_b (a <= b)]          (F = 1 + p + p(p+1)/2 values),

so for a chunk of points all k log densities are ONE matrix product
``Phi_chunk (c x F) @ W (F x k)`` (W holds the per-component coefficients,
:func:`.engine.build_coefficients`).  This is 2F = (p + 1)(p + 2) flops per (point,
component) -- 240 for p = 14 -- done by BLAS at near peak speed, where a triangular solve
costs ~p^2 scalar operations that cannot be vectorised across the short p loop
(``benchmarks/bench_mixture.py`` compares the two with :func:`_triangular_logdens`).  The
same features give the component sufficient statistics: counts, sums and second moments are
the columns of ``onehot(z)' Phi`` (Gibbs) or ``R' Phi`` (Bayesian EM, R the
responsibilities).

Rounding: in float64 the expanded form loses about |x|^2 ||P|| eps in absolute terms; on
standardised data (|x| of order 1-10) that is far below 1e-10 of the log densities the
sampler uses.
"""
from __future__ import annotations

import types

import numpy as np
from numba import njit, prange

from .engine import n_features

__all__ = ["features", "PARALLEL_THRESHOLD"]

#: below this many (point x feature) values per call the serial kernel is used
PARALLEL_THRESHOLD = 2_000_000


@njit(cache=True, inline="always")
def _row_features(x, phi):
    """phi = [1, x, x_a x_b for a <= b (row-major upper triangle)]: the quadratic features of one row."""
    p = x.shape[0]
    phi[0] = 1.0
    for a in range(p):
        phi[1 + a] = x[a]
    f = 1 + p
    for a in range(p):
        xa = x[a]
        for b in range(a, p):
            phi[f] = xa * x[b]
            f += 1


def _features_impl(X, out):
    """out[i] = [1, x, x_a x_b for a <= b (row-major upper triangle)]."""
    for i in prange(X.shape[0]):
        _row_features(X[i], out[i])


@njit(cache=True, nogil=True)
def _features_t(X, out_t):
    """out_t[:, i] = phi(x_i): the features of a chunk stored feature-major (F x c).

    Every loop runs over the points, contiguous in memory, so each feature row is one
    SIMD product of two earlier rows (the per-point rows of :func:`features` are short and
    ragged, and do not vectorise); the GEMM reads the transpose without a copy.
    """
    c, p = X.shape
    for i in range(c):
        out_t[0, i] = 1.0
    for a in range(p):
        for i in range(c):
            out_t[1 + a, i] = X[i, a]
    f = 1 + p
    for a in range(p):
        for b in range(a, p):
            ra = out_t[1 + a]
            rb = out_t[1 + b]
            ro = out_t[f]
            for i in range(c):
                ro[i] = ra[i] * rb[i]
            f += 1


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
    return njit(parallel=True, cache=True)(fn), njit(cache=True, nogil=True)(ser)


# a parallel region costs more than the work for a small X, so small problems run serially
_features_par, _features_ser = _variants(_features_impl)


def _features(X, out):
    (_features_par if X.shape[0] * out.shape[1] >= PARALLEL_THRESHOLD else _features_ser)(X, out)


def features(X: np.ndarray) -> np.ndarray:
    """Quadratic features of the rows of ``X`` (n x F), see the module docstring."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    out = np.empty((X.shape[0], n_features(X.shape[1])))
    _features(X, out)
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

