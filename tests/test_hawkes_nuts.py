"""The NUTS sampler of the Hawkes posterior (issue 31, "Gradients and a real NUTS sampler").

Calibration as the MH sampler's (tests/test_sampler_calibration.py): (1) with the likelihood switched
off the chain must recover the half-normal priors on the MH state (``1/h`` for ``h``), which in the
sampler's log coordinates needs the Jacobian -- the same chain without it fails; (2) on a small
simulated data set with ``theta`` and ``mu0`` sampled, the marginal posteriors must match quadrature
of the NumPy reference. Then the result object, reproducibility, the executor, "exp2" and refusals.
"""
from __future__ import annotations

import concurrent.futures
import sys

import numpy as np
import pytest
from scipy import stats

import hphawkes_py.hawkes as hk
from hphawkes_py.hawkes import mode, nuts, sampler
from hphawkes_py.hawkes.gradient import GradientModel
from hphawkes_py.hawkes.nuts import NutsTarget, mcmc_nuts
import naive_hawkes as nh

pytest.importorskip("mici")

FIXED = {"tau_x": 0.5, "tau_t": 2.0}
SAMPLED = ("h", "omega", "theta", "mu0")


def _flat(monkeypatch):
    """Switch the likelihood off: the target is the prior."""
    def flat(self, values):
        return 0.0, {n: 0.0 for n in self.names}
    monkeypatch.setattr(GradientModel, "value_and_gradient", flat)


def _prior_pvalues(post, thin=2):
    out = {}
    for name in SAMPLED:
        draws = np.asarray(post.draws[name]).ravel()[::thin]
        state = 1.0 / draws if name == "h" else draws
        out[name] = stats.kstest(state, stats.halfnorm(scale=mode.DEFAULT_PRIOR_SCALES[name]).cdf).pvalue
    return out


@pytest.fixture(scope="module")
def small():
    return hk.simulate(mu=0.5, theta=0.3, omega=2.0, h=0.3, region=2.0, duration=5.0, seed=3)


def test_nuts_recovers_the_prior(monkeypatch, small):
    _flat(monkeypatch)
    x, t = small
    post = mcmc_nuts(x, t, n_iter=1300, burn_in=300, chains=1, sample=SAMPLED, fixed=FIXED, seed=11,
                     progress=False, backend="cpu")
    p = _prior_pvalues(post)
    assert min(p.values()) > 1e-3, p


def test_nuts_with_a_wrong_jacobian_fails_the_prior_recovery(monkeypatch, small):
    """Every sampled parameter here has the coordinate z = log s (s the MH state), whose Jacobian adds
    z to the log density and 1 to each partial. Counting it twice (a proper but wrong target; without
    it the density in z would be improper) makes the KS tests reject."""
    _flat(monkeypatch)

    class DoubleJacobian(NutsTarget):
        def log_density_and_gradient(self, z):
            lp, g = super().log_density_and_gradient(z)
            return lp + float(np.sum(z)), g + 1.0

    monkeypatch.setattr(nuts, "NutsTarget", DoubleJacobian)
    x, t = small
    post = mcmc_nuts(x, t, n_iter=1300, burn_in=300, chains=1, sample=SAMPLED, fixed=FIXED, seed=11,
                     progress=False, backend="cpu")
    p = _prior_pvalues(post)
    assert max(p.values()) < 1e-4, p


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


def test_nuts_posterior_of_theta_and_mu0_matches_quadrature():
    x, t = hk.simulate(mu=2.0, theta=0.4, omega=3.0, h=0.2, region=2.0, duration=6.0, seed=21)
    fixed = {"tau_x": 0.4, "tau_t": 1.5, "h": 0.2, "omega": 3.0}
    post = mcmc_nuts(x, t, n_iter=1500, burn_in=300, chains=1, sample=("theta", "mu0"), fixed=fixed,
                     init={"theta": 0.5, "mu0": 1.0}, seed=5, progress=False, backend="cpu")
    cdfs = _grid_marginals(x, t, fixed["h"], fixed["omega"], fixed["tau_x"], fixed["tau_t"],
                           mode.DEFAULT_PRIOR_SCALES)
    for name in ("theta", "mu0"):
        grid, cdf = cdfs[name]
        draws = np.asarray(post.draws[name]).ravel()[::2]
        p = stats.kstest(draws, lambda v: np.interp(v, grid, cdf)).pvalue
        assert p > 1e-3, (name, p)
    # the check can fail: the MH prior scale on mu0 ten times smaller moves the posterior visibly
    narrow = mcmc_nuts(x, t, n_iter=500, burn_in=200, chains=1, sample=("theta", "mu0"), fixed=fixed,
                       init={"theta": 0.5, "mu0": 1.0}, priors={"mu0": 0.1}, seed=5, progress=False, backend="cpu")
    grid, cdf = cdfs["mu0"]
    p = stats.kstest(np.asarray(narrow.draws["mu0"]).ravel()[::2], lambda v: np.interp(v, grid, cdf)).pvalue
    assert p < 1e-6


def test_result_object_seeds_and_executor(small):
    x, t = small
    kw = dict(n_iter=120, burn_in=60, chains=2, fixed=FIXED, seed=3, progress=False, backend="cpu")
    a = mcmc_nuts(x, t, **kw)
    b = mcmc_nuts(x, t, **kw)
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        c = mcmc_nuts(x, t, executor=ex, **kw)
    for n in a.param_names:
        np.testing.assert_array_equal(a.draws[n], b.draws[n])
        np.testing.assert_array_equal(a.draws[n], c.draws[n])
    assert a.sampled == SAMPLED and a.chains == 2 and a.n_draws == 60
    assert np.all(a.draws["tau_x"] == 0.5) and np.all(a.draws["tau_t"] == 2.0)
    assert not np.array_equal(a.draws["theta"][0], a.draws["theta"][1])  # independent chains
    assert set(a.summary().index) == set(SAMPLED)
    assert a.to_arviz().posterior["theta"].shape == (2, 60)
    assert set(a.nuts_stats) == {"divergences", "mean_tree_depth", "step_size", "n_step", "evaluations"}
    assert np.all((a.acceptance_rates["h"] > 0) & (a.acceptance_rates["h"] <= 1))
    pi = hk.self_excitation(a, n_draws=10, seed=1, progress=False)
    assert len(pi) == len(t)


def test_exp2_keeps_the_rates_ordered_and_the_weight_inside():
    x, t = hk.simulate(mu=0.5, theta=0.5, omega=2.0, h=0.1, region=2.0, duration=30.0, seed=1)
    post = mcmc_nuts(x, t, n_iter=150, burn_in=100, chains=1, kernel="exp2", fixed={"tau_x": 0.5, "tau_t": 5.0},
                     init={"omega": 2.0, "omega2": 0.2, "w": 0.5}, seed=2, progress=False, backend="cpu")
    assert post.sampled == ("h", "omega", "theta", "mu0", "omega2", "w")
    assert np.all(post.draws["omega2"] < post.draws["omega"])
    assert np.all((post.draws["w"] > 0) & (post.draws["w"] < 1))


def test_target_gradient_matches_finite_differences(small):
    from hphawkes_py.hawkes.model import engine_factory, prepare_data
    x, t = small
    model = GradientModel(engine_factory(prepare_data(x, t), backend="cpu", kernel="exp2"))
    names = ("h", "omega", "theta", "mu0", "tau_x", "omega2", "w")
    target = NutsTarget(model, names, {"tau_t": 2.0}, {**mode.DEFAULT_PRIOR_SCALES, "w": 3.0})
    z = target.to_unconstrained(dict(h=0.3, omega=2.0, theta=0.4, mu0=0.6, tau_x=0.5, omega2=0.4, w=0.3))
    lp, g = target.log_density_and_gradient(z)
    for i, n in enumerate(names):
        e = np.zeros_like(z)
        e[i] = 1e-6
        fd = (target.log_density_and_gradient(z + e)[0] - target.log_density_and_gradient(z - e)[0]) / 2e-6
        assert abs(g[i] - fd) < 1e-6 * max(1.0, abs(fd)), (n, g[i], fd)


def test_refusals(small, monkeypatch):
    x, t = small
    kw = dict(fixed=FIXED, progress=False)
    with pytest.raises(ValueError, match="backend must be one of"):
        mcmc_nuts(x, t, backend="tpu", **kw)
    with pytest.raises(ValueError, match="burn_in must be >= 1"):
        mcmc_nuts(x, t, burn_in=0, backend="cpu", **kw)
    with pytest.raises(ValueError, match="burn_in must be smaller than n_iter"):
        mcmc_nuts(x, t, n_iter=10, burn_in=10, backend="cpu", **kw)
    with pytest.raises(ValueError, match="target_accept"):
        mcmc_nuts(x, t, target_accept=1.0, backend="cpu", **kw)
    with pytest.raises(ValueError, match="max_tree_depth"):
        mcmc_nuts(x, t, max_tree_depth=40, backend="cpu", **kw)
    with pytest.raises(ValueError, match=r"init\['w'\] must be strictly inside"):
        mcmc_nuts(x, t, kernel="exp2", init={"w": 1.0}, backend="cpu", **kw)
    with pytest.raises(ValueError, match="both sampled"):
        mcmc_nuts(x, t, sample=("h", "tau_x"), backend="cpu", **kw)
    monkeypatch.setitem(sys.modules, "mici", None)
    with pytest.raises(ImportError, match="pip install"):
        mcmc_nuts(x, t, backend="cpu", **kw)


# -- mcmc(sampler="nuts") ---------------------------------------------------------------------------
def test_mcmc_sampler_nuts_is_mcmc_nuts(small):
    x, t = small
    kw = dict(n_iter=24, burn_in=12, chains=2, fixed=FIXED, seed=7, progress=False, backend="cpu")
    a = hk.mcmc(x, t, sampler="nuts", target_accept=0.9, max_tree_depth=4, **kw)
    b = mcmc_nuts(x, t, target_accept=0.9, max_tree_depth=4, **kw)
    mh = hk.mcmc(x, t, **kw)
    assert type(a) is type(mh) is hk.HawkesPosterior
    assert a.sampled == mh.sampled == SAMPLED and a.chains == mh.chains == 2 and a.n_draws == mh.n_draws == 12
    for n in a.draws:
        np.testing.assert_array_equal(a.draws[n], b.draws[n])
    assert hasattr(a, "nuts_stats") and not hasattr(mh, "nuts_stats")
    assert not np.array_equal(a.draws["theta"], mh.draws["theta"])  # a different sampler ran


def test_mcmc_sampler_mh_is_the_default(small):
    x, t = small
    kw = dict(n_iter=30, burn_in=10, chains=1, fixed=FIXED, seed=4, progress=False, backend="cpu")
    a = hk.mcmc(x, t, **kw)
    b = hk.mcmc(x, t, sampler="mh", **kw)
    for n in a.draws:
        np.testing.assert_array_equal(a.draws[n], b.draws[n])
    for n in a.sampled:
        np.testing.assert_array_equal(a.proposal_sd[n], b.proposal_sd[n])


def test_mcmc_sampler_refusals(small):
    x, t = small
    kw = dict(n_iter=20, burn_in=10, chains=1, fixed=FIXED, progress=False, backend="cpu")
    with pytest.raises(ValueError, match="sampler must be 'mh'.*got 'hmc'"):
        hk.mcmc(x, t, sampler="hmc", **kw)
    with pytest.raises(ValueError, match="sampler must be"):
        hk.mcmc(x, t, sampler=None, **kw)
    with pytest.raises(ValueError, match="target_accept is only for sampler='nuts'.*target_accept=0.9"):
        hk.mcmc(x, t, target_accept=0.9, **kw)
    with pytest.raises(ValueError, match="target_accept, max_tree_depth are only for sampler='nuts'"):
        hk.mcmc(x, t, target_accept=0.9, max_tree_depth=5, **kw)
    # NUTS's own checks apply through mcmc
    with pytest.raises(ValueError, match="burn_in must be >= 1"):
        hk.mcmc(x, t, sampler="nuts", **dict(kw, burn_in=0))
    with pytest.raises(ValueError, match="target_accept"):
        hk.mcmc(x, t, sampler="nuts", target_accept=1.5, **kw)
    with pytest.raises(ValueError, match="no per-move debug record"):
        sampler._mcmc_debug(x, t, sampler="nuts", **kw)


def test_nuts_on_the_emulated_gpu_gradient(small):
    """The CUDA gradient kernel (on the emulator) drives the same chain as the CPU one: its sums agree to
    ~1e-15, so a short seeded chain takes the same path."""
    x, t = small
    kw = dict(n_iter=12, burn_in=6, chains=1, fixed=FIXED, seed=2, progress=False, max_tree_depth=5)
    cpu = mcmc_nuts(x, t, backend="cpu", **kw)
    emu = hk.mcmc(x, t, sampler="nuts", backend="emulator", **kw)
    assert emu.backend == "emulator" and cpu.backend == "cpu"
    for n in SAMPLED:
        np.testing.assert_allclose(emu.draws[n], cpu.draws[n], rtol=1e-8)
