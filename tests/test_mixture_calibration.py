"""Geweke's joint-distribution test of the blocked Gibbs sampler of the TDP mixture (issue 16 §1).

Geweke (2004): the joint distribution of (parameters, data) can be simulated two ways,

* marginal-conditional: theta ~ prior, then (z, x) | theta -- independent draws;
* successive-conditional: alternate (z, x) | theta with one sweep of the sampler theta | x
  (:func:`hphawkes_py.mixture.gibbs.gibbs_sweep`, the very function ``fit`` runs, on the CPU engine).

If every conditional the sampler draws from is right, both have the same stationary distribution,
so the means of test functions g(theta, x) agree; the difference is z-scored with the
independent-draw variance and a batch-means variance for the chain.  Small problem (k = 3
components, n = 4 points, p = 1 and 2, proper priors with finite moments: nu0 = 3), fixed seeds.
A sampler with a deliberately wrong conjugate update (the inverse-Wishart degrees of freedom
without the +1 that the prior of mu_j | Sigma_j contributes, or the scale without the prior-mean
term) fails the same test.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from hphawkes_py.mixture import _math as M
from hphawkes_py.mixture.engine import make_engine
from hphawkes_py.mixture._math import GibbsState, Priors
from hphawkes_py.mixture.gibbs import gibbs_sweep

K, NPTS = 3, 4
Z_LIMIT = 4.0  # about 10 test functions at a fixed seed: |z| > 4 has probability ~6e-4 under the null


def _priors(p):
    return Priors(np.zeros(p), 2.0, 3.0, 3.0 * np.eye(p), 2.0, 1.0)


def _prior_theta(rng, pr, p):
    alpha = rng.gamma(pr.e0, 1.0 / pr.f0)
    v = np.clip(rng.beta(1.0, alpha, size=K - 1), 1e-300, np.nextafter(1.0, 0.0))
    Phi = np.ascontiguousarray(np.broadcast_to(pr.Phi0, (K, p, p)))
    Sigma = M.rinvwishart(rng, np.full(K, pr.nu0 + p + 1.0), Phi)
    L = np.linalg.cholesky(Sigma)
    mu = pr.m0 + math.sqrt(pr.gamma0) * np.einsum("jab,jb->ja", L, rng.standard_normal((K, p)))
    return GibbsState(mu, Sigma, M.sticks_to_log_weights(v), alpha)


def _data_given(rng, st):
    w = np.exp(st.log_w)
    z = rng.choice(K, size=NPTS, p=w / w.sum())
    L = np.linalg.cholesky(st.Sigma)
    return st.mu[z] + np.einsum("iab,ib->ia", L[z], rng.standard_normal((NPTS, st.mu.shape[1])))


def _g(st, x):
    w0 = math.exp(st.log_w[0])
    s0 = st.Sigma[0, 0, 0]
    ld = np.linalg.slogdet(st.Sigma[0])[1]
    return np.array([
        st.alpha, math.log(st.alpha), w0, w0 * w0,
        st.mu[0, 0] / math.sqrt(s0), math.log(s0), ld * ld, st.mu[0, -1] * st.mu[0, 0] / s0,
        math.tanh(x[:, 0].mean()), np.tanh(x[:, -1]).var(),
    ])


def geweke_z(p, n_draws, seed):
    """z-scores of the difference of test-function means, marginal-conditional vs successive-conditional."""
    rng = np.random.default_rng(seed)
    pr = _priors(p)
    G1 = np.empty((n_draws, 10))
    for t in range(n_draws):
        st = _prior_theta(rng, pr, p)
        G1[t] = _g(st, _data_given(rng, st))
    st = _prior_theta(rng, pr, p)
    G2 = np.empty((n_draws, 10))
    for t in range(n_draws):
        x = _data_given(rng, st)
        st = gibbs_sweep(make_engine(x, backend="cpu", threads=1), rng, st, pr)
        G2[t] = _g(st, x)
    nb = 50  # batch means for the autocorrelated chain
    b = G2[: n_draws // nb * nb].reshape(nb, -1, G2.shape[1]).mean(1)
    return (G1.mean(0) - G2.mean(0)) / np.sqrt(G1.var(0) / n_draws + b.var(0, ddof=1) / nb)


def _wrong_mu_sigma(df_extra=0.0, prior_term=True):
    """``gibbs_mu_sigma`` with a deliberate error (the textbook update otherwise, step by step)."""

    def update(rng, N, S1, S2, L_old, m0, gamma0, nu0, Phi0):
        k, p = S1.shape
        occ = N > 0
        zmu = rng.standard_normal((k, p))
        prec = 1.0 / gamma0 + N
        mu = (m0[None, :] / gamma0 + S1) / prec[:, None] + np.einsum("jab,jb->ja", L_old, zmu) / np.sqrt(prec)[:, None]
        dm = mu - m0[None, :]
        Psi = M.scatter_about(N, S1, S2, mu) + Phi0
        if prior_term:
            Psi = Psi + np.einsum("ja,jb->jab", dm, dm) / gamma0
        df = N + p + nu0 + 2.0 + df_extra
        Psi[~occ] = Phi0
        df[~occ] = nu0 + p + 1.0
        Sigma = M.rinvwishart(rng, df, 0.5 * (Psi + np.swapaxes(Psi, 1, 2)))
        if (~occ).any():
            Le = np.linalg.cholesky(Sigma[~occ])
            mu[~occ] = m0[None, :] + math.sqrt(gamma0) * np.einsum("jab,jb->ja", Le, zmu[~occ])
        return mu, Sigma

    return update


@pytest.mark.slow
@pytest.mark.parametrize("p, seed", [(1, 1), (2, 2)])
def test_gibbs_sampler_passes_geweke_joint_distribution_test(p, seed):
    z = geweke_z(p, 6000, seed)
    assert np.all(np.abs(z) < Z_LIMIT), np.round(z, 2)


@pytest.mark.slow
@pytest.mark.parametrize("wrong", [dict(df_extra=-1.0), dict(prior_term=False)], ids=["df", "scale"])
def test_a_wrong_conjugate_update_fails_the_geweke_test(monkeypatch, wrong):
    monkeypatch.setattr(M, "gibbs_mu_sigma", _wrong_mu_sigma(**wrong))
    z = geweke_z(1, 4000, 1)
    assert np.abs(z).max() > 1.5 * Z_LIMIT, np.round(z, 2)


def test_the_wrong_update_helper_is_the_library_update_when_not_wrong():
    """The deliberately wrong updates differ from the library only by their error."""
    rng = np.random.default_rng(3)
    N = np.array([3.0, 0.0, 1.0])
    X = rng.normal(size=(4, 2))
    S1 = np.stack([X[:3].sum(0), np.zeros(2), X[3]])
    S2 = np.stack([X[:3].T @ X[:3], np.zeros((2, 2)), np.outer(X[3], X[3])])
    L = np.broadcast_to(np.eye(2), (3, 2, 2))
    pr = _priors(2)
    a = M.gibbs_mu_sigma(np.random.default_rng(1), N, S1, S2, L, pr.m0, pr.gamma0, pr.nu0, pr.Phi0)
    b = _wrong_mu_sigma()(np.random.default_rng(1), N, S1, S2, L, pr.m0, pr.gamma0, pr.nu0, pr.Phi0)
    np.testing.assert_allclose(a[0], b[0], rtol=1e-12)
    np.testing.assert_allclose(a[1], b[1], rtol=1e-12)
