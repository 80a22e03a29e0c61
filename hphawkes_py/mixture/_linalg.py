"""Batched small dense linear algebra of the mixture's host steps, in Numba.

Every Gibbs sweep factorises k covariance matrices (p x p, p ~ 2-50) twice: Sigma_j for the
component densities and Psi_j for the inverse-Wishart draw.  NumPy's batched ``cholesky`` and
``solve`` call LAPACK once per matrix, whose per-call overhead dominates at this size (on a
16-core host ~2.9 ms per sweep for k = 256, p = 14, against ~0.5 ms here), so the factorisations
and the Bartlett construction are written out as plain loops.  The random numbers are still
drawn by the caller's NumPy ``Generator`` (same streams as before).
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


def _iw_bartlett_loops(Psi, adiag, alow, out, bad):
    """out[q] = (L A^{-T})(L A^{-T})' with Psi[q] = L L' and A lower triangular (diagonal
    ``adiag[q]``, below it ``alow[q]`` in ``np.tril_indices(p, -1)`` order).  ``bad[q] = 1``
    where Psi[q] is not positive definite."""
    m, p = Psi.shape[0], Psi.shape[1]
    # one p x p scratch each, allocated once and reused for every matrix (only lower triangles and
    # diagonals are read, always after being written for this q); one per matrix, (m, p, p) zeros,
    # cost 0.8 of the 1.5 ms for k = 256, p = 14
    Lq = np.zeros((p, p))
    A = np.zeros((p, p))
    Ai = np.zeros((p, p))
    G = np.empty((p, p))
    for q in range(m):
        ok = True
        for i in range(p):
            for j in range(i + 1):
                s = Psi[q, i, j]
                for t in range(j):
                    s -= Lq[i, t] * Lq[j, t]
                if i == j:
                    if not s > 0.0:
                        ok = False
                        s = 1.0
                    Lq[i, i] = math.sqrt(s)
                else:
                    Lq[i, j] = s / Lq[j, j]
        bad[q] = 0 if ok else 1
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

    # serial: ~1 ms for k = 256, p = 14, where a parallel loop gains little on an idle host and
    # loses 10x on a loaded one; the dot products may be reassociated (SIMD), NaN checks stay
    jit = njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
    return jit(_chol_inv_loops), jit(_iw_bartlett_loops), njit(cache=True, nogil=True)(_iw_scale_loops)


def _not_pd(what: str, q: int, shape) -> np.linalg.LinAlgError:
    idx = np.unravel_index(q, shape[:-2]) if len(shape) > 2 else ()
    return np.linalg.LinAlgError(f"{what} {tuple(int(i) for i in idx)} is not positive definite")


def chol_factors(Sigma: np.ndarray):
    """Batched Cholesky of ``Sigma`` (..., p, p): ``(L, U = L^{-1}, log|Sigma|)``, L and U lower
    triangular with exact zeros above the diagonal."""
    S = np.ascontiguousarray(Sigma, dtype=np.float64)
    shape = S.shape
    p = shape[-1]
    flat = S.reshape(-1, p, p)
    L = np.empty_like(flat)
    U = np.empty_like(flat)
    logdet = np.empty(flat.shape[0])
    bad = np.zeros(flat.shape[0], np.uint8)
    _compiled()[0](flat, L, U, logdet, bad)
    if bad.any():
        raise _not_pd("covariance matrix", int(np.argmax(bad)), shape)
    return L.reshape(shape), U.reshape(shape), logdet.reshape(shape[:-2])


def inv_wishart_bartlett(Psi: np.ndarray, adiag: np.ndarray, alow: np.ndarray) -> np.ndarray:
    """Inverse-Wishart draws from their Bartlett factors: ``(L A^{-T})(L A^{-T})'`` for
    ``Psi`` (k, p, p) = L L' and A lower triangular with diagonal ``adiag`` (k, p) and strictly
    lower entries ``alow`` (k, p(p-1)/2) in ``np.tril_indices(p, -1)`` order."""
    P = np.ascontiguousarray(Psi, dtype=np.float64)
    out = np.empty_like(P)
    bad = np.zeros(P.shape[0], np.uint8)
    _compiled()[1](P, np.ascontiguousarray(adiag, dtype=np.float64), np.ascontiguousarray(alow, dtype=np.float64),
                   out, bad)
    if bad.any():
        raise _not_pd("inverse-Wishart scale matrix", int(np.argmax(bad)), P.shape)
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
