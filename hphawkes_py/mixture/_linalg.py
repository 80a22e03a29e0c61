"""Batched small dense linear algebra of the mixture's host steps, in Numba.

Every Gibbs sweep factorises k covariance matrices (p x p, p ~ 2-50) twice: Sigma_j for the
component densities and Psi_j for the inverse-Wishart draw.  NumPy's batched ``cholesky`` and
``solve`` call LAPACK once per matrix, whose per-call overhead dominates at this size, so the
factorisations and the Bartlett construction are written out as plain loops.  The random
numbers are drawn by the caller's NumPy ``Generator``.
"""
from __future__ import annotations

import functools
import math

import numpy as np

__all__ = ["chol_factors", "inv_wishart_bartlett", "iw_posterior_scale"]



def _chol_inv_loops(S, L, U, logdet, bad):
    """Cholesky L (lower) of each S[q], its inverse U = L^{-1} (lower, exact zeros above) and
    log|S[q]|.  Reads the lower triangle of S (as LAPACK's potrf 'L').  ``bad[q] = 1`` where
    S[q] is not positive definite (its outputs are then meaningless)."""
    m, p = S.shape[0], S.shape[1]
    for q in range(m):
        ok = True
        for i in range(p):
            for j in range(i + 1):
                s = S[q, i, j]
                for t in range(j):
                    s -= L[q, i, t] * L[q, j, t]
                if i == j:
                    if not s > 0.0:  # also NaN
                        ok = False
                        s = 1.0
                    L[q, i, i] = math.sqrt(s)
                else:
                    L[q, i, j] = s / L[q, j, j]
            for j in range(i + 1, p):
                L[q, i, j] = 0.0
        bad[q] = 0 if ok else 1
        ld = 0.0
        for j in range(p):
            ld += math.log(L[q, j, j])
            for i in range(j):
                U[q, i, j] = 0.0
            U[q, j, j] = 1.0 / L[q, j, j]
            for i in range(j + 1, p):
                s = 0.0
                for t in range(j, i):
                    s += L[q, i, t] * U[q, t, j]
                U[q, i, j] = -s / L[q, i, i]
        logdet[q] = 2.0 * ld


def _iw_bartlett_loops(Lpsi, adiag, alow, out):
    """out[q] = (L A^{-T})(L A^{-T})' with L = ``Lpsi[q]`` the lower Cholesky factor of Psi[q] and A
    lower triangular (diagonal ``adiag[q]``, below it ``alow[q]`` in ``np.tril_indices(p, -1)``
    order)."""
    m, p = Lpsi.shape[0], Lpsi.shape[1]
    # one p x p scratch each, allocated once and reused for every matrix (only lower triangles and
    # diagonals are read, always after being written for this q): a fresh one per matrix would
    # cost more than the arithmetic
    A = np.zeros((p, p))
    Ai = np.zeros((p, p))
    G = np.empty((p, p))
    for q in range(m):
        Lq = Lpsi[q]
        r = 0
        for i in range(p):
            A[i, i] = adiag[q, i]
            for j in range(i):
                A[i, j] = alow[q, r]
                r += 1
        for j in range(p):  # Ai = A^{-1}, lower
            Ai[j, j] = 1.0 / A[j, j]
            for i in range(j + 1, p):
                s = 0.0
                for t in range(j, i):
                    s += A[i, t] * Ai[t, j]
                Ai[i, j] = -s / A[i, i]
        for i in range(p):  # G = L Ai'
            for j in range(p):
                s = 0.0
                for t in range(min(i, j) + 1):
                    s += Lq[i, t] * Ai[j, t]
                G[i, j] = s
        for i in range(p):  # out = G G', symmetric by construction
            for j in range(i + 1):
                s = 0.0
                for t in range(p):
                    s += G[i, t] * G[j, t]
                out[q, i, j] = s
                out[q, j, i] = s


def _iw_scale_loops(N, S1, S2, mu, m0, gamma0, Phi0, out):
    """out[j] = sym(S2_j - mu_j s_j' - s_j mu_j' + n_j mu_j mu_j' + (mu_j - m0)(mu_j - m0)' / gamma0 + Phi0_j)
    where n_j > 0 and sym(Phi0_j) where n_j = 0, sym(A) = (A + A') / 2 (s_j = ``S1[j]``): the
    inverse-Wishart scale of :func:`._math.gibbs_mu_sigma`, every entry with the same operations
    in the same order as its NumPy expression (no fast-math: no fused multiply-adds), so the bits
    are the same, without its eight (k, p, p) temporaries."""
    k, p = S1.shape
    A = np.empty((p, p))
    for j in range(k):
        if N[j] > 0:
            for a in range(p):
                da = mu[j, a] - m0[a]
                for b in range(p):
                    sc = ((S2[j, a, b] - mu[j, a] * S1[j, b]) - S1[j, a] * mu[j, b]) + N[j] * (mu[j, a] * mu[j, b])
                    A[a, b] = (sc + (da * (mu[j, b] - m0[b])) / gamma0) + Phi0[j, a, b]
        else:
            for a in range(p):
                for b in range(p):
                    A[a, b] = Phi0[j, a, b]
        for a in range(p):
            for b in range(p):
                out[j, a, b] = 0.5 * (A[a, b] + A[b, a])


@functools.lru_cache(maxsize=1)
def _compiled():
    # compiled on first use (cached on disk): importing the mixture loads no Numba kernels
    from numba import njit

    # serial: the work per call is small, so a parallel region gains little when the cores are
    # free and loses much when they are shared; the dot products may be reassociated (SIMD), NaN
    # checks stay
    jit = njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
    return jit(_chol_inv_loops), jit(_iw_bartlett_loops), njit(cache=True, nogil=True)(_iw_scale_loops)


def _not_pd(what: str, q: int, shape) -> np.linalg.LinAlgError:
    idx = np.unravel_index(q, shape[:-2]) if len(shape) > 2 else ()
    return np.linalg.LinAlgError(f"{what} {tuple(int(i) for i in idx)} is not positive definite")


def _cholesky(S: np.ndarray, what: str, shape):
    """(L, U, logdet) of the C-contiguous (m, p, p) float64 ``S`` by :func:`_chol_inv_loops`;
    LinAlgError naming ``what`` and its index in ``shape`` (S's shape before flattening) if one
    matrix is not positive definite."""
    m = S.shape[0]
    L = np.empty_like(S)
    U = np.empty_like(S)
    logdet = np.empty(m)
    bad = np.zeros(m, np.uint8)
    _compiled()[0](S, L, U, logdet, bad)
    if bad.any():
        raise _not_pd(what, int(np.argmax(bad)), shape)
    return L, U, logdet


def chol_factors(Sigma: np.ndarray):
    """Batched Cholesky of ``Sigma`` (..., p, p): ``(L, U = L^{-1}, log|Sigma|)``, L and U lower
    triangular with exact zeros above the diagonal."""
    S = np.ascontiguousarray(Sigma, dtype=np.float64)
    shape = S.shape
    p = shape[-1]
    flat = S.reshape(-1, p, p)
    L, U, logdet = _cholesky(flat, "covariance matrix", shape)
    return L.reshape(shape), U.reshape(shape), logdet.reshape(shape[:-2])


def inv_wishart_bartlett(Psi: np.ndarray, adiag: np.ndarray, alow: np.ndarray) -> np.ndarray:
    """Inverse-Wishart draws from their Bartlett factors: ``(L A^{-T})(L A^{-T})'`` for
    ``Psi`` (k, p, p) = L L' and A lower triangular with diagonal ``adiag`` (k, p) and strictly
    lower entries ``alow`` (k, p(p-1)/2) in ``np.tril_indices(p, -1)`` order."""
    P = np.ascontiguousarray(Psi, dtype=np.float64)
    L = _cholesky(P, "inverse-Wishart scale matrix", P.shape)[0]
    out = np.empty_like(P)
    _compiled()[1](L, np.ascontiguousarray(adiag, dtype=np.float64), np.ascontiguousarray(alow, dtype=np.float64),
                   out)
    return out


def iw_posterior_scale(N, S1, S2, mu, m0, gamma0, Phi0) -> np.ndarray:
    """The (k, p, p) inverse-Wishart scales of the Gibbs step for Sigma (see :func:`_iw_scale_loops`):
    ``Phi0 + scatter about mu_j + (mu_j - m0)(mu_j - m0)' / gamma0`` for occupied components
    (``N[j] > 0``), ``Phi0`` for empty ones, symmetrised.  ``Phi0`` is (p, p) or (k, p, p)."""
    k, p = S1.shape
    out = np.empty((k, p, p))
    f64 = functools.partial(np.ascontiguousarray, dtype=np.float64)
    _compiled()[2](f64(N), f64(S1), f64(S2), f64(mu), f64(m0), float(gamma0),
                   np.broadcast_to(np.asarray(Phi0, dtype=np.float64), (k, p, p)), out)
    return out
