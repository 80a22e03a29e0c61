"""Calibration of the Hawkes adaptive Metropolis-Hastings sampler (issue 16 §1).

Simulation-based calibration needs data simulated from the model given the parameters; the
hpHawkes model's background is a kernel smoothing of the events themselves, so it is no generative
model and SBC/Geweke's successive-conditional test do not apply to it as such.  The two checks
below test the same property -- the chain's stationary distribution is the target -- directly:

1. **Prior recovery, all four parameters sampled.**  With the likelihood switched off the target is
   the prior (half-normal on each sampled state, ``1/h`` for ``h``); the thinned draws are compared
   with it by Kolmogorov-Smirnov tests.  The half-normal puts its mode at the truncation point of
   the proposal, so the Hastings correction of the truncated-normal proposal matters most there:
   the same chain with the correction removed fails.
2. **Posterior by quadrature.**  On a small real-data problem with ``theta`` and ``mu0`` sampled
   (``h``, ``omega``, ``tau_x``, ``tau_t`` fixed), the exact marginal posteriors are computed on a
   fine grid from the NumPy reference sums and compared with the chain by KS tests.

Draws are thinned to be nearly independent; every test runs at a fixed seed.
"""
from __future__ import annotations


import numpy as np
import pytest
from scipy import stats

import hphawkes_py.hawkes as hk
from hphawkes_py.hawkes.engine import EngineFactory
# the module, not the function hk.mcmc that shadows it as an attribute of the package
from hphawkes_py.hawkes import mode, sampler
import naive_hawkes as nh

FIXED = {"tau_x": 0.5, "tau_t": 2.0}
SAMPLED = ("h", "omega", "theta", "mu0")
THIN = 25


def _flat_chain(monkeypatch, n_iter, seed=11):
    x, t = hk.simulate(mu=0.5, theta=0.3, omega=2.0, h=0.3, region=2.0, duration=5.0, seed=3)
    monkeypatch.setattr(EngineFactory, "build", lambda self, **k: nh.FlatEngine())
    return hk.mcmc(x, t, n_iter=n_iter, burn_in=500, chains=1, sample=SAMPLED, fixed=FIXED, seed=seed,
                   progress=False, backend="cpu")


def _prior_pvalues(post):
    out = {}
    for name in SAMPLED:
        draws = np.asarray(post.draws[name]).ravel()[::THIN]
        state = 1.0 / draws if name == "h" else draws
        scale = mode.DEFAULT_PRIOR_SCALES[name]
        out[name] = stats.kstest(state, stats.halfnorm(scale=scale).cdf).pvalue
    return out


def test_sampler_recovers_the_prior_with_all_four_parameters_sampled(monkeypatch):
    p = _prior_pvalues(_flat_chain(monkeypatch, 40_000))
    assert min(p.values()) > 1e-3, p


def test_a_wrong_hastings_correction_fails_the_prior_recovery(monkeypatch):
    """Dropping the truncated-normal proposal's correction (log Phi terms) biases every parameter
    away from 0, where the half-normal prior has its mode: the KS tests reject it."""
    monkeypatch.setattr(sampler, "_log_phi", lambda z: 0.0)
    p = _prior_pvalues(_flat_chain(monkeypatch, 40_000))
    assert max(p.values()) < 1e-4, p


@pytest.fixture(scope="module")
def small_data():
    x, t = hk.simulate(mu=2.0, theta=0.4, omega=3.0, h=0.2, region=2.0, duration=6.0, seed=21)
    return x, t


def _grid_marginals(x, t, h, omega, tau_x, tau_t, scales):
    """Exact marginal posteriors of theta and mu0 (others fixed) on a grid, from the NumPy reference."""
    S = nh.background_sums(x, t, tau_x, tau_t)
    G = nh.trigger_sums(x, t, h, omega)
    A = nh.integral(t, 1.0, tau_t, 0.0, omega)  # the compensator is linear in mu0 and theta
    B = nh.integral(t, 0.0, tau_t, 1.0, omega)
    th = np.linspace(1e-6, 2.5, 700)
    mu = np.linspace(1e-6, 6.0, 700)
    TH, MU = np.meshgrid(th, mu, indexing="ij")
    lp = np.zeros_like(TH)
    for s, g in zip(S, G):
        lp += np.log(MU * s + TH * g)
    lp -= MU * A + TH * B + 0.5 * (TH / scales["theta"]) ** 2 + 0.5 * (MU / scales["mu0"]) ** 2
    w = np.exp(lp - lp.max())
    assert w[-1, :].max() < 1e-12 and w[:, -1].max() < 1e-12  # the grid holds all the mass
    cdfs = {}
    for name, axis, grid in (("theta", 1, th), ("mu0", 0, mu)):
        dens = w.sum(axis=axis)
        c = np.concatenate([[0.0], np.cumsum(0.5 * (dens[1:] + dens[:-1]) * np.diff(grid))])
        cdfs[name] = (grid, c / c[-1])
    return cdfs


def test_posterior_of_theta_and_mu0_matches_quadrature(small_data):
    x, t = small_data
    fixed = {"tau_x": 0.4, "tau_t": 1.5, "h": 0.2, "omega": 3.0}
    post = hk.mcmc(x, t, n_iter=30_000, burn_in=1_000, chains=1, sample=("theta", "mu0"), fixed=fixed,
                   init={"theta": 0.5, "mu0": 1.0}, seed=5, progress=False, backend="cpu")
    cdfs = _grid_marginals(x, t, fixed["h"], fixed["omega"], fixed["tau_x"], fixed["tau_t"],
                           mode.DEFAULT_PRIOR_SCALES)
    for name in ("theta", "mu0"):
        grid, cdf = cdfs[name]
        draws = np.asarray(post.draws[name]).ravel()[::THIN]
        p = stats.kstest(draws, lambda v: np.interp(v, grid, cdf)).pvalue
        assert p > 1e-3, (name, p)
