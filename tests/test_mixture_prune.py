"""Pruned label draw of the CPU mixture engine (components more than log k + log 1e15 nats below a
point's best are skipped) against the exact draw over all k components."""
from __future__ import annotations

import math

import numpy as np
import pytest

from hphawkes_py.mixture import _math as M
from hphawkes_py.mixture import cpu as C
from hphawkes_py.mixture import cpu_draw as CD
from hphawkes_py.mixture.cpu import CpuEngine
from hphawkes_py.mixture._math import GibbsState, Priors
from hphawkes_py.mixture.gibbs import gibbs_sweep

import naive_mixture as nv


def _separated(seed=0, n=4000, p=8, n_true=8):
    """Well-separated clusters (pairwise distance >> spread)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=6.0, size=(n_true, p))
    z = rng.integers(0, n_true, size=n)
    X = centres[z] + rng.normal(scale=0.3, size=(n, p))
    return rng, (X - X.mean(0)) / X.std(0)


def _pair(X, k, **kw):
    return CpuEngine(X, prune=False, chunk_size=256, **kw), CpuEngine(X, prune=True, chunk_size=256, threads=2, **kw)


def _fitted_state(X, k, rng, sweeps=8):
    """A few sweeps of the exact chain from data-row means: fitted components, not random ones."""
    n, p = X.shape
    priors = Priors(np.zeros(p), 1.0, 1.0, np.eye(p), 1.0, 1.0)
    state = GibbsState(X[rng.choice(n, k, replace=False)].copy(), np.tile(np.eye(p), (k, 1, 1)),
                       np.full(k, -math.log(k)), 1.0)
    eng = CpuEngine(X, prune=False)
    for _ in range(sweeps):
        state = gibbs_sweep(eng, rng, state, priors)
    return state, priors


def _load(eng, state):
    L, U, logdet = M.chol_factors(state.Sigma)
    eng.set_components(state.log_w, state.mu, U, logdet)


def test_prune_margin_bounds_the_skipped_mass():
    for k in (1, 2, 256, 4096):
        T = CD.prune_margin(k)
        assert k * math.exp(-T) <= CD.PRUNE_TOL * (1 + 1e-12)
    assert CD.prune_margin(256) == pytest.approx(40.08, abs=0.01)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_pruned_draw_equals_exact_on_fitted_separated_mixture(dtype):
    rng, X = _separated(0)
    k = 32
    state, _ = _fitted_state(X, k, rng)
    # the reference is always the exact float64 draw: the float32 pruned draw is certified to
    # give the float64 labels (its log-likelihood carries a bound instead)
    ex = CpuEngine(X, prune=False, chunk_size=256)
    pr = CpuEngine(X, prune=True, chunk_size=256, threads=2, dtype=dtype)
    for eng in (ex, pr):
        _load(eng, state)
    for rep in range(3):
        u = rng.random(len(X))
        z_ex = ex.sample_labels(u).copy()
        z_pr = pr.sample_labels(u).copy()
        np.testing.assert_array_equal(z_pr, z_ex)
        if dtype == np.float64:
            assert pr.loglik == pytest.approx(ex.loglik, rel=1e-12)
            assert pr.last_loglik_error_bound == 0.0
        else:
            assert 0 < pr.last_loglik_error_bound < 1e-3 * abs(ex.loglik)
            assert abs(pr.loglik - ex.loglik) <= pr.last_loglik_error_bound
        np.testing.assert_allclose(pr.label_stats(), ex.label_stats(), rtol=1e-12, atol=1e-12)
    # the pruning did happen: most (point, component) pairs were skipped
    assert pr.last_kept_fraction < 0.5
    assert ex.last_kept_fraction is None


def test_pruned_draw_matches_numpy_reference():
    rng, X = _separated(3, n=1500, p=3)
    k = 12
    state, _ = _fitted_state(X, k, rng, sweeps=4)
    _, pr = _pair(X, k)
    _load(pr, state)
    u = rng.random(len(X))
    z = pr.sample_labels(u)
    covs = state.Sigma
    ref = nv.log_component_densities(X, np.exp(state.log_w), state.mu, covs)
    np.testing.assert_array_equal(z, nv.sample_labels(ref, u))
    assert pr.loglik == pytest.approx(nv.loglik(ref).sum(), rel=1e-11)


def test_pruned_gibbs_chain_equals_exact_chain():
    rng, X = _separated(1, n=2500)
    k = 24
    state0, priors = _fitted_state(X, k, rng, sweeps=2)
    traces = []
    for prune in (False, True):
        eng = CpuEngine(X, prune=prune, chunk_size=300, threads=2)
        r = np.random.default_rng(7)
        st = state0
        tr = []
        for _ in range(6):
            st = gibbs_sweep(eng, r, st, priors)
            tr.append(st.loglik)
        traces.append((np.array(tr), eng.z.copy(), st.mu))
        eng.close()
    np.testing.assert_allclose(traces[1][0], traces[0][0], rtol=1e-12)
    np.testing.assert_array_equal(traces[1][1], traces[0][1])
    np.testing.assert_allclose(traces[1][2], traces[0][2], rtol=1e-10, atol=1e-12)


def test_overlapping_broad_components_keep_everything():
    """Adversarial: every component is within a few nats of every point's best, so nothing may be
    pruned and both draws are identical to the last bit."""
    rng = np.random.default_rng(5)
    n, p, k = 3000, 3, 20
    X = rng.normal(size=(n, p))
    mu = rng.normal(scale=0.3, size=(k, p))
    Sigma = np.tile(np.eye(p) * 4.0, (k, 1, 1))
    state = GibbsState(mu, Sigma, np.log(rng.dirichlet(np.ones(k) * 5)), 1.0)
    ex, pr = _pair(X, k)
    for eng in (ex, pr):
        _load(eng, state)
    u = rng.random(n)
    np.testing.assert_array_equal(pr.sample_labels(u), ex.sample_labels(u))
    assert pr.last_kept_fraction == 1.0
    assert pr.loglik == ex.loglik
    np.testing.assert_array_equal(pr.label_stats(), ex.label_stats())


def test_a_too_small_margin_is_detected(monkeypatch):
    """The equality tests have teeth: with a margin that is not a valid bound (2 nats instead of
    ~36 for k = 12) components that matter are dropped and labels and log-likelihood change."""
    rng = np.random.default_rng(11)
    n, p, k = 3000, 2, 12
    X = rng.normal(size=(n, p))
    mu = rng.normal(scale=1.0, size=(k, p))
    Sigma = np.tile(np.eye(p) * 0.8, (k, 1, 1))
    state = GibbsState(mu, Sigma, np.full(k, -math.log(k)), 1.0)
    ex, pr = _pair(X, k)
    for eng in (ex, pr):
        _load(eng, state)
    u = rng.random(n)
    z_ex = ex.sample_labels(u).copy()
    np.testing.assert_array_equal(pr.sample_labels(u), z_ex)  # the real margin: equal
    monkeypatch.setattr(C, "prune_margin", lambda k, tol=CD.PRUNE_TOL: 2.0)
    z_bad = pr.sample_labels(u)
    assert np.count_nonzero(z_bad != z_ex) > 10
    assert abs(pr.loglik - ex.loglik) > 1e-6 * abs(ex.loglik)
    assert pr.last_kept_fraction < 1.0
