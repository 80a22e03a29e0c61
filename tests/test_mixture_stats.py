"""TDP Gaussian mixture: recovery of a known mixture and the Old Faithful clusters."""
from __future__ import annotations

import numpy as np
import pytest

import hphawkes_py as hp
from hphawkes_py.mixture import TDPGaussianMixture

TRUE_W = np.array([0.5, 0.3, 0.2])
TRUE_MU = np.array([[0.0, 0.0], [6.0, 2.0], [-4.0, 5.0]])
TRUE_COV = np.array([[[1.0, 0.5], [0.5, 1.0]], [[0.5, 0.0], [0.0, 2.0]], [[1.5, -0.6], [-0.6, 0.8]]])


def _simulate(n, seed=42):
    rng = np.random.default_rng(seed)
    z = rng.choice(3, n, p=TRUE_W)
    L = np.linalg.cholesky(TRUE_COV)
    return TRUE_MU[z] + np.einsum("iab,ib->ia", L[z], rng.standard_normal((n, 2)))


def _merge(w, mu, S, groups, ngroups):
    """Moment-matched (weight, mean, covariance) of the components in each group."""
    out = []
    for g in range(ngroups):
        sel = groups == g
        W = w[sel].sum()
        m = (w[sel, None] * mu[sel]).sum(0) / W
        second = (w[sel, None, None] * (S[sel] + np.einsum("ja,jb->jab", mu[sel], mu[sel]))).sum(0) / W
        out.append((W, m, second - np.outer(m, m)))
    return out


@pytest.mark.parametrize("method", ["gibbs", "bem"])
def test_recovers_known_three_component_mixture(method):
    X = _simulate(900)
    m = TDPGaussianMixture(8, method=method, n_iter=150, burn_in=100, seed=1, progress=False, backend="cpu").fit(X)
    heavy = m.weights_ > 0.01
    assert m.weights_[heavy].sum() > 0.97
    # each occupied component belongs to the nearest true component (BEM may split one in two)
    d = ((m.means_[:, None, :] - TRUE_MU[None]) ** 2).sum(-1)
    groups = np.where(heavy, d.argmin(1), -1)
    merged = _merge(m.weights_, m.means_, m.covariances_, groups, 3)
    for g, (W, mu, S) in enumerate(merged):
        n_g = 900 * TRUE_W[g]
        assert abs(W - TRUE_W[g]) < 0.05, (g, W)
        # means within ~4 standard errors, covariances within ~25 %
        se = np.sqrt(np.diag(TRUE_COV[g]) / n_g)
        assert np.all(np.abs(mu - TRUE_MU[g]) < 5 * se + 0.05), (g, mu)
        np.testing.assert_allclose(S, TRUE_COV[g], atol=0.3 * np.abs(TRUE_COV[g]).max())
    # components merged by the modes of the fitted density: one cluster per true component
    assert m.n_clusters_ == 3
    order = np.argsort(-TRUE_W)
    np.testing.assert_allclose(m.cluster_weights_, TRUE_W[order], atol=0.05)
    np.testing.assert_allclose(m.cluster_means_, TRUE_MU[order], atol=0.3)
    assert np.mean(m.cluster_labels_ == m.predict_cluster(X)) == 1.0


@pytest.mark.slow
@pytest.mark.parametrize("method", ["gibbs", "bem"])
def test_old_faithful_two_clusters(method):
    df = hp.datasets.load_faithful()
    m = TDPGaussianMixture(16, method=method, n_iter=200, burn_in=100, seed=1, progress=False, backend="cpu").fit(df)
    # group the components of weight > 1% by short (< 3 min) / long eruptions (posterior means of
    # rarely occupied components mix prior draws and are not meaningful locations)
    groups = np.where(m.weights_ > 0.01, (m.means_[:, 0] >= 3.0).astype(int), -1)
    assert m.weights_[groups >= 0].sum() > 0.9
    (w0, mu0, _), (w1, mu1, _) = _merge(m.weights_, m.means_, m.covariances_, groups, 2)
    # the well-known answer: weights ~0.35 / 0.65, means ~(2.04, 54.5) and ~(4.29, 80.0)
    w0, w1 = w0 / (w0 + w1), w1 / (w0 + w1)
    assert w0 == pytest.approx(0.35, abs=0.04)
    assert w1 == pytest.approx(0.65, abs=0.04)
    tol = np.array([0.12, 1.5])
    assert np.all(np.abs(mu0 - [2.04, 54.5]) < tol), mu0
    assert np.all(np.abs(mu1 - [4.29, 80.0]) < tol), mu1
    # classification of the eruptions
    lab = m.predict(df)
    short = m.means_[lab, 0] < 3.0
    assert short.mean() == pytest.approx(97 / 272, abs=0.02)
    # density in original units integrates to ~1 over a grid covering the data
    ex, wt = np.meshgrid(np.linspace(0.5, 6.5, 241), np.linspace(30, 110, 241))
    grid = np.column_stack([ex.ravel(), wt.ravel()])
    mass = np.exp(m.score_samples(grid)).sum() * (6.0 / 240) * (80.0 / 240)
    assert mass == pytest.approx(1.0, abs=0.02)


@pytest.mark.slow
@pytest.mark.parametrize("method, kw", [("gibbs", dict(n_iter=400, burn_in=150)), ("bem", dict(n_iter=1000))])
def test_issue16_goal_heldout_density_and_clusters(method, kw):
    """4,000 points of the 3-component mixture, 32 components, default priors: the held-out mean log
    density is within 0.01 nats/point of the true density's and the merged clusters are the 3 true ones."""
    from scipy.special import logsumexp
    from scipy.stats import multivariate_normal

    X = _simulate(4000, seed=0)
    Xte = _simulate(20000, seed=99)
    truth = logsumexp(np.stack([np.log(TRUE_W[j]) + multivariate_normal(TRUE_MU[j], TRUE_COV[j]).logpdf(Xte)
                                for j in range(3)], 1), axis=1).mean()
    m = TDPGaussianMixture(32, method=method, seed=0, progress=False, backend="cpu", **kw).fit(X)
    gap = m.score(Xte) - truth
    assert gap > -0.01, gap
    assert m.n_clusters_ == 3
