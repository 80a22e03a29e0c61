"""Backend-neutral pieces of the TDP mixture: priors and state, conjugate updates, stick breaking.

All functions work in STANDARDISED units (each data column centred and divided by
its standard deviation) and are vectorised over the k components (no Python loop
over components or points).

Parametrisation (Suchard et al. 2010, Appendix A; dpmix ``DPNormalMixture``):

* mu_j | Sigma_j ~ N(m0, gamma0 Sigma_j)
* Sigma_j ~ IW(nu0 + 2, nu0 Phi) in West's notation, i.e. the standard inverse Wishart
  with ``df = nu0 + p + 1`` degrees of freedom and scale matrix ``Phi0 = nu0 Phi``
  (E[Sigma_j] = Phi0 / nu0).  dpmix's default, used here: nu0 = 1, Phi0 = nu0 I.
* v_j ~ Be(1, alpha), pi_1 = v_1, pi_j = v_j prod_{r<j}(1 - v_r), pi_k = 1 - sum of the rest.
* alpha ~ Gamma(shape e0, rate f0).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln, multigammaln

from . import _linalg

LOG_2PI = math.log(2.0 * math.pi)
_ONE_MINUS = float(np.nextafter(1.0, 0.0))


@dataclass(frozen=True)
class Priors:
    """Hyper-parameters of the TDP mixture, standardised units (see :class:`TDPGaussianMixture`)."""

    m0: np.ndarray
    gamma0: float
    nu0: float
    Phi0: np.ndarray
    e0: float
    f0: float


@dataclass
class GibbsState:
    """State of the blocked Gibbs sampler (standardised units)."""

    mu: np.ndarray  # (k, p)
    Sigma: np.ndarray  # (k, p, p)
    log_w: np.ndarray  # (k,)
    alpha: float
    N: np.ndarray | None = None  # (k,) counts of the last label draw
    loglik: float = float("nan")  # log-likelihood (standardised units) at the label draw


def unpack_stats(T: np.ndarray, p: int):
    """(k, F) feature sums -> counts N (k,), sums S1 (k, p), second moments S2 (k, p, p)."""
    k = T.shape[0]
    N = T[:, 0].copy()
    S1 = T[:, 1 : 1 + p].copy()
    S2 = np.empty((k, p, p))
    a, b = np.triu_indices(p)  # the features' order: (a, b) for a <= b, row by row
    S2[:, a, b] = T[:, 1 + p:]
    S2[:, b, a] = T[:, 1 + p:]
    return N, S1, S2


def chol_factors(Sigma: np.ndarray):
    """Batched Cholesky: (L, U = L^{-1}, log|Sigma|) for Sigma (..., p, p) (Numba loops,
    :mod:`._linalg`; tested against ``np.linalg``)."""
    return _linalg.chol_factors(Sigma)


def scatter_about(N, S1, S2, mu):
    """sum_{i in j} (x_i - mu_j)(x_i - mu_j)' from the sufficient statistics."""
    return S2 - np.einsum("ja,jb->jab", mu, S1) - np.einsum("ja,jb->jab", S1, mu) + N[:, None, None] * np.einsum(
        "ja,jb->jab", mu, mu
    )


def rinvwishart(rng: np.random.Generator, df: np.ndarray, Psi: np.ndarray) -> np.ndarray:
    """Batched inverse-Wishart draws Sigma_j ~ IW(df_j, Psi_j) (standard parametrisation).

    Bartlett decomposition: Sigma^{-1} = C A A' C' ~ W(df, Psi^{-1}) with C C' = Psi^{-1},
    A lower triangular, A_ii^2 ~ chi^2(df - i), A_ab ~ N(0, 1) below the diagonal.  With
    Psi = L L' and C = L^{-T}: Sigma = (L A^{-T})(L A^{-T})'.
    """
    k, p, _ = Psi.shape
    idx = np.arange(p)
    adiag = np.sqrt(rng.chisquare(df[:, None] - idx[None, :]))
    alow = rng.standard_normal((k, p * (p - 1) // 2))
    return _linalg.inv_wishart_bartlett(Psi, adiag, alow)


def gibbs_mu_sigma(rng, N, S1, S2, L_old, m0, gamma0, nu0, Phi0):
    """Step (b) of the blocked Gibbs sampler, exactly as dpmix's ``_update_mu_Sigma``.

    Occupied component (n_j > 0), given the current Sigma_j (Cholesky factor ``L_old``):

    * mu_j ~ N((m0/gamma0 + s_j) / (1/gamma0 + n_j), Sigma_j / (1/gamma0 + n_j))
    * Sigma_j ~ IW(n_j + p + nu0 + 2, Phi0 + sum_i (x_i - mu_j)(x_i - mu_j)' + (mu_j - m0)(mu_j - m0)'/gamma0),
      i.e. Sigma_j^{-1} ~ Wishart with p + nu0 + 2 + n_j degrees of freedom.

    Empty component: an exact draw from the prior, Sigma_j ~ IW(nu0 + p + 1, Phi0),
    mu_j ~ N(m0, gamma0 Sigma_j).
    Returns (mu (k, p), Sigma (k, p, p)).
    """
    k, p = S1.shape
    occ = N > 0
    zmu = rng.standard_normal((k, p))
    prec = 1.0 / gamma0 + N
    post_mean = (m0[None, :] / gamma0 + S1) / prec[:, None]
    mu = post_mean + np.einsum("jab,jb->ja", L_old, zmu) / np.sqrt(prec)[:, None]
    # Phi0 + scatter_about(N, S1, S2, mu) + (mu - m0)(mu - m0)' / gamma0, Phi0 for the empty
    # components (prior draw), symmetrised: one Numba loop, bit-identical to the NumPy expression
    Psi = _linalg.iw_posterior_scale(N, S1, S2, mu, m0, gamma0, Phi0)
    df = N + p + nu0 + 2.0
    df[~occ] = nu0 + p + 1.0
    Sigma = rinvwishart(rng, df, Psi)
    if (~occ).any():
        Le = _linalg.chol_factors(Sigma[~occ])[0]  # batched Numba loops, not one LAPACK call per matrix
        mu[~occ] = m0[None, :] + math.sqrt(gamma0) * np.einsum("jab,jb->ja", Le, zmu[~occ])
    return mu, Sigma


def bem_mu_sigma(N, S1, S2, m0, gamma0, nu0, Phi0):
    """Joint posterior mode of (mu_j, Sigma_j) given (weighted) statistics.

    mu_j = (m0/gamma0 + s_j)/(1/gamma0 + n_j);
    Sigma_j = [Phi0 + sum_i r_ij (x_i - mu_j)(x_i - mu_j)' + (mu_j - m0)(mu_j - m0)'/gamma0] / (n_j + nu0 + 2p + 3).

    (dpmix's BEM computes the same numerator and the same "df" n_j + nu0 + 2p + 3 but
    divides by n_j; the mode of the normal-inverse-Wishart posterior divides by
    n_j + nu0 + 2p + 3, which is what is done here.)
    """
    k, p = S1.shape
    prec = 1.0 / gamma0 + N
    mu = (m0[None, :] / gamma0 + S1) / prec[:, None]
    dm = mu - m0[None, :]
    Psi = scatter_about(N, S1, S2, mu) + np.einsum("ja,jb->jab", dm, dm) / gamma0 + Phi0
    Psi = 0.5 * (Psi + np.swapaxes(Psi, 1, 2))
    Sigma = Psi / (N + nu0 + 2.0 * p + 3.0)[:, None, None]
    return mu, Sigma


def sticks_to_log_weights(v: np.ndarray) -> np.ndarray:
    """log pi from the k - 1 stick fractions v (pi_k = prod (1 - v_r))."""
    log1mv = np.log1p(-v)
    cum = np.concatenate([[0.0], np.cumsum(log1mv)])
    with np.errstate(divide="ignore"):
        lv = np.log(v)
    return np.concatenate([lv + cum[:-1], [cum[-1]]])


def tail_counts(N: np.ndarray) -> np.ndarray:
    """sum_{r > j} n_r for j = 0..k-2."""
    rev = np.cumsum(N[::-1])[::-1]
    return rev[1:]


def gibbs_sticks(rng, N, alpha):
    """Step (c): v_j ~ Be(1 + n_j, alpha + sum_{r>j} n_r), j < k; returns (v (k-1,), log pi (k,))."""
    if N.shape[0] == 1:
        return np.empty(0), np.zeros(1)
    v = rng.beta(1.0 + N[:-1], alpha + tail_counts(N))
    v = np.clip(v, 1e-300, _ONE_MINUS)  # keep log(v), log(1 - v) finite
    return v, sticks_to_log_weights(v)


def gibbs_alpha(rng, v, k, e0, f0):
    """Step (d): alpha ~ Gamma(shape e0 + k - 1, rate f0 - sum_{j<k} log(1 - v_j))."""
    rate = f0 - np.log1p(-v).sum()
    return float(rng.gamma(e0 + k - 1.0, 1.0 / rate))


def bem_sticks(N, alpha):
    """Mode of Be(1 + n_j, alpha + sum_{r>j} n_r): n_j / (alpha - 1 + sum_{r>=j} n_r), clipped to [1e-10, 1 - 1e-10]."""
    if N.shape[0] == 1:
        return np.empty(0), np.zeros(1)
    denom = alpha - 1.0 + N[:-1] + tail_counts(N)
    with np.errstate(divide="ignore", invalid="ignore"):
        v = np.where(denom > 0, N[:-1] / np.where(denom > 0, denom, 1.0), 1.0)
    v = np.clip(v, 1e-10, 1.0 - 1e-10)
    return v, sticks_to_log_weights(v)


def bem_alpha(v, k, e0, f0):
    """Mode of alpha's conditional Gamma(e0 + k - 1, f0 - sum log(1 - v_j)): (e0 + k - 2)/(f0 - sum log(1 - v_j))."""
    rate = f0 - np.log1p(-v).sum()
    return float(max(e0 + k - 2.0, 1e-10) / rate)


def log_prior(mu, Sigma, v, alpha, m0, gamma0, nu0, Phi0, e0, f0) -> float:
    """log p(mu, Sigma, v, alpha) (standardised units), the prior part of BEM's objective."""
    k, p = mu.shape
    L, U, logdet = chol_factors(Sigma)
    dm = mu - m0[None, :]
    y = np.einsum("jab,jb->ja", U, dm)
    lp_mu = -0.5 * p * (LOG_2PI + math.log(gamma0)) - 0.5 * logdet - 0.5 * (y * y).sum(1) / gamma0
    df = nu0 + p + 1.0
    Phi = np.broadcast_to(Phi0, Sigma.shape)
    logdet_phi = np.linalg.slogdet(Phi)[1]
    P = np.einsum("jra,jrb->jab", U, U)
    tr = np.einsum("jab,jba->j", Phi, P)
    lp_sigma = (
        0.5 * df * logdet_phi - 0.5 * df * p * math.log(2.0) - multigammaln(0.5 * df, p)
        - 0.5 * (df + p + 1.0) * logdet - 0.5 * tr
    )
    lp_v = (math.log(alpha) + (alpha - 1.0) * np.log1p(-v)).sum() if v.size else 0.0
    lp_alpha = e0 * math.log(f0) - gammaln(e0) + (e0 - 1.0) * math.log(alpha) - f0 * alpha
    return float(lp_mu.sum() + lp_sigma.sum() + lp_v + lp_alpha)
