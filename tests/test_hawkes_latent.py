"""Hawkes latent structure (hphawkes_py.hawkes.latent): coarsened locations and event-specific rates.

Gradients against the every-pair NumPy reference (tests/naive_hawkes_latent.py) and against central
finite differences, the CUDA kernels on the emulator against the CPU kernels, the location sweep's
incremental rates against a fresh evaluation, recovery of simulated truth, and refusals."""
from __future__ import annotations

import numpy as np
import pytest

import hphawkes_py as hp
from hphawkes_py.hawkes.cpu_latent import location_sweep
from hphawkes_py.hawkes.latent import LatentModel, _pad3, latent_gradient, mcmc_latent

from engines import CUDA_ENGINES
import naive_hawkes_latent as nv

P = dict(mu0=0.5, tau_x=0.5, tau_t=5.0, theta=0.5, omega=2.0, h=0.1)
KEYS = ("locations", "background_log_rates", "trigger_log_rates", "background_log_rates_hessian",
        "trigger_log_rates_hessian")


@pytest.fixture(scope="module")
def data():
    x, t = hp.hawkes.simulate(mu=0.5, theta=0.5, omega=2.0, h=0.1, region=2.0, duration=40.0, seed=4)
    o = np.argsort(t, kind="stable")
    rng = np.random.default_rng(1)
    return x[o], t[o], 0.4 * rng.standard_normal(t.size), 0.4 * rng.standard_normal(t.size)


@pytest.mark.parametrize("dim", [1, 2, 3])
def test_gradient_matches_reference(data, dim):
    x, t, be, ga = data
    rng = np.random.default_rng(dim)
    xs = np.column_stack([x, rng.uniform(0, 2, (t.size, 1))])[:, :dim]
    got = latent_gradient(xs, t, P, background_log_rates=be, trigger_log_rates=ga, exact=True, backend="cpu")
    assert got["log_likelihood"] == pytest.approx(nv.log_likelihood(xs, t, P, be, ga), rel=1e-12)
    for key, ref in zip(KEYS, nv.gradient(xs, t, P, be, ga)):
        np.testing.assert_allclose(got[key], np.asarray(ref).reshape(got[key].shape), rtol=1e-10,
                                   atol=1e-10 * np.max(np.abs(ref)), err_msg=key)


def test_gradient_matches_finite_differences(data):
    x, t, be, ga = data
    p = dict(P)
    x = x.copy()
    x[3::7] += 0.01  # no exact spatial ties

    def ll(xx, b, g):
        return latent_gradient(xx, t, p, background_log_rates=b, trigger_log_rates=g, exact=True)["log_likelihood"]

    g0 = latent_gradient(x, t, p, background_log_rates=be, trigger_log_rates=ga, exact=True)
    e = 1e-6
    for k in (0, 11, 40, t.size - 1):
        for d in range(2):
            xp, xm = x.copy(), x.copy()
            xp[k, d] += e
            xm[k, d] -= e
            assert g0["locations"][k, d] == pytest.approx((ll(xp, be, ga) - ll(xm, be, ga)) / (2 * e), rel=1e-5,
                                                          abs=1e-6)
        for name, v in (("background", be), ("trigger", ga)):
            vp, vm = v.copy(), v.copy()
            vp[k] += e
            vm[k] -= e
            args_p = (vp, ga) if name == "background" else (be, vp)
            args_m = (vm, ga) if name == "background" else (be, vm)
            fd = (ll(x, *args_p) - ll(x, *args_m)) / (2 * e)
            assert g0[f"{name}_log_rates"][k] == pytest.approx(fd, rel=1e-5, abs=1e-7)
            gp = latent_gradient(x, t, p, background_log_rates=args_p[0], trigger_log_rates=args_p[1], exact=True)
            gm = latent_gradient(x, t, p, background_log_rates=args_m[0], trigger_log_rates=args_m[1], exact=True)
            fd2 = (gp[f"{name}_log_rates"][k] - gm[f"{name}_log_rates"][k]) / (2 * e)
            assert g0[f"{name}_log_rates_hessian"][k] == pytest.approx(fd2, rel=1e-5, abs=1e-7)


def test_plain_model_and_windowed_sums(data):
    x, t, be, ga = data
    plain = latent_gradient(x, t, P)
    assert plain["log_likelihood"] == pytest.approx(hp.hawkes.log_likelihood(x, t, P, backend="cpu", exact=True),
                                                    rel=1e-13)
    w = latent_gradient(x, t, P, background_log_rates=be, trigger_log_rates=ga)
    ex = latent_gradient(x, t, P, background_log_rates=be, trigger_log_rates=ga, exact=True)
    assert w["log_likelihood"] == pytest.approx(ex["log_likelihood"], rel=1e-12)
    for key in KEYS:
        np.testing.assert_allclose(w[key], ex[key], rtol=1e-9, atol=1e-11 * np.max(np.abs(ex[key])))


def test_caller_order(data):
    x, t, be, ga = data
    perm = np.random.default_rng(3).permutation(t.size)
    a = latent_gradient(x, t, P, trigger_log_rates=ga, exact=True)
    b = latent_gradient(x[perm], t[perm], P, trigger_log_rates=ga[perm], exact=True)
    np.testing.assert_array_equal(b["trigger_log_rates"], a["trigger_log_rates"][perm])
    np.testing.assert_array_equal(b["locations"], a["locations"][perm])


@pytest.mark.parametrize("backend", CUDA_ENGINES)
def test_cuda_kernels_match_cpu(data, backend):
    x, t, be, ga = data
    n = 120
    for exact in (True, False):
        c = latent_gradient(x[:n], t[:n], P, background_log_rates=be[:n], trigger_log_rates=ga[:n], exact=exact)
        g = latent_gradient(x[:n], t[:n], P, background_log_rates=be[:n], trigger_log_rates=ga[:n], exact=exact,
                            backend=backend)
        assert g["log_likelihood"] == pytest.approx(c["log_likelihood"], rel=1e-13)
        for key in KEYS + ("rates",):
            np.testing.assert_allclose(g[key], c[key], rtol=1e-12, atol=1e-13 * np.max(np.abs(c[key])))


@pytest.mark.parametrize("kind", ["box", "circle"])
def test_location_sweep_updates_rates_exactly(data, kind):
    x, t, be, ga = data
    N = t.size
    m = LatentModel(t, 2, (t[0], t[-1]), "cpu", None, False)
    X = _pad3(x)
    wb, wg = np.exp(be), np.exp(ga)
    S, G = m.sums(X, P, wb, wg)
    lam = m.rates(S, G, P)
    idx = m.indices(*m.deltas(P, wb, wg))
    ax, at, bh, cs, cg = m.constants(P)
    rng = np.random.default_rng(5)
    if kind == "box":
        r_lo, r_hi = _pad3(x - 0.1), _pad3(x + 0.1)
        code = 0
    else:
        r_lo, r_hi = X.copy(), np.zeros((N, 3))
        r_hi[:, 0] = 0.1
        code = 1
    z = np.zeros((N, 3))
    z[:, :2] = rng.standard_normal((N, 2))
    acc = location_sweep(X, t, *idx, wb, wg, ax, at, bh, 2.0, 0.5 * cs, 0.5 * cg, lam, np.full(N, 0.05), z,
                         np.log(rng.uniform(size=N)), code, r_lo, r_hi, np.zeros(N))
    assert 0 < acc < N
    S2, G2 = m.sums(X, P, wb, wg)
    np.testing.assert_allclose(lam, m.rates(S2, G2, P), rtol=1e-10)
    moved = np.any(X[:, :2] != x, axis=1)
    assert moved.sum() == acc
    if kind == "box":
        assert np.all(np.abs(X[:, :2] - x) <= 0.1)
    else:
        assert np.all(np.linalg.norm(X[:, :2] - x, axis=1) <= 0.1)


def test_sampler_keeps_locations_in_their_cells_and_pi_in_range(data):
    x, t, _, _ = data
    cs = 0.25
    post = mcmc_latent(x, t, location_region=("raster", cs), n_iter=12, burn_in=4,
                       fixed={"tau_x": 0.5, "tau_t": 5.0}, init=dict(mu0=0.5, theta=0.5, omega=2.0, h=0.1),
                       seed=2, progress=False)
    cell = np.floor(x / cs)
    assert np.all(np.floor(post.locations_mean / cs) == cell)
    assert post.draws["h"].shape == (1, 8)
    assert np.all((post.self_excitation >= 0) & (post.self_excitation <= 1))
    assert 0 < post.acceptance_rates["locations"][0] < 1
    again = mcmc_latent(x, t, location_region=("raster", cs), n_iter=12, burn_in=4,
                        fixed={"tau_x": 0.5, "tau_t": 5.0}, init=dict(mu0=0.5, theta=0.5, omega=2.0, h=0.1),
                        seed=2, progress=False)
    np.testing.assert_array_equal(again.draws["h"], post.draws["h"])


@pytest.mark.parametrize("kwargs", [dict(random_rates="background"),
                                    dict(random_rates="trigger", location_region=("circle", 0.05))])
def test_sampler_runs_every_combination(data, kwargs):
    x, t, _, _ = data
    post = mcmc_latent(x[:150], t[:150], n_iter=8, burn_in=3, leapfrog_steps=3, fixed={"tau_x": 0.5, "tau_t": 5.0},
                       init=dict(mu0=0.5, theta=0.5, omega=2.0, h=0.1), seed=4, progress=False, **kwargs)
    assert post.log_rates_mean.shape == (150,) and np.all(np.isfinite(post.log_rates_mean))
    assert np.all(post.log_rates_sd >= 0) and np.any(post.log_rates_sd > 0)
    assert post.draws["sigma"].shape == (1, 5) and np.all(post.draws["sigma"] > 0)
    if "location_region" in kwargs:
        assert np.all(np.linalg.norm(post.locations_mean - x[:150], axis=1) <= 0.05 + 1e-12)
    else:
        assert post.locations_mean is None
    idata = post.to_arviz()
    np.testing.assert_array_equal(idata.posterior["theta"].values, post.draws["theta"])


@pytest.mark.slow
def test_recovers_truth_from_coarsened_locations():
    x, t = hp.hawkes.simulate(mu=1.0, theta=0.6, omega=2.0, h=0.05, region=2.0, duration=60.0, seed=3)
    cs = 0.2
    xc = (np.floor(x / cs) + 0.5) * cs  # published: the 200 m cells' centres, h = 50 m
    post = mcmc_latent(xc, t, location_region=("raster", cs), n_iter=300, burn_in=100,
                       fixed={"tau_x": 0.5, "tau_t": 10.0}, init=dict(mu0=0.5, theta=0.6, omega=2.0, h=0.06),
                       seed=1, progress=False)
    for name, truth in (("h", 0.05), ("theta", 0.6), ("omega", 2.0)):
        lo, hi = np.percentile(post.draws[name], [0.5, 99.5])
        assert lo < truth < hi, (name, lo, hi)
    err_post = np.mean(np.linalg.norm(post.locations_mean - x, axis=1))
    err_coarse = np.mean(np.linalg.norm(xc - x, axis=1))
    assert err_post < err_coarse


@pytest.mark.slow
def test_recovers_event_specific_rates():
    x, t, g = nv.simulate_random_rates(1.0, 0.5, 2.0, 0.05, 1.0, 2.0, 80.0, seed=2)
    post = mcmc_latent(x, t, random_rates="trigger", n_iter=100, burn_in=40, leapfrog_steps=6,
                       fixed={"tau_x": 0.5, "tau_t": 10.0}, init=dict(mu0=0.5, theta=0.5, omega=2.0, h=0.05),
                       seed=1, progress=False)
    assert np.corrcoef(post.log_rates_mean, g)[0, 1] > 0.3
    lo, hi = np.percentile(post.draws["sigma"], [0.5, 99.5])
    assert lo < 1.0 < hi
    assert 0.3 < post.acceptance_rates["log_rates"][0] <= 1.0


# ---------------------------------------------------------------------------------------------- refusals
def test_gradient_refusals(data):
    x, t, be, _ = data
    with pytest.raises(ValueError, match="background_log_rates must hold one log-rate per event"):
        latent_gradient(x, t, P, background_log_rates=be[:-1])
    with pytest.raises(ValueError, match=r"trigger_log_rates must lie in \[-50, 50\]"):
        latent_gradient(x, t, P, trigger_log_rates=np.full(t.size, 60.0))
    with pytest.raises(ValueError, match="trigger_log_rates"):
        latent_gradient(x, t, P, trigger_log_rates=np.full(t.size, np.nan))
    with pytest.raises(ValueError, match="backend"):
        latent_gradient(x, t, P, backend="tpu")
    with pytest.raises(TypeError, match="exact"):
        latent_gradient(x, t, P, exact="yes")
    with pytest.raises(ValueError, match="theta must be > 0"):
        latent_gradient(x, t, dict(P, theta=-1.0))


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(), ValueError, "needs location_region and/or random_rates"),
    (dict(random_rates="mark"), ValueError, "random_rates must be None or one of"),
    (dict(location_region="box"), ValueError, "location_region must be"),
    (dict(location_region=("hexagon", 1.0)), ValueError, "location_region must be"),
    (dict(location_region=("circle", -1.0)), ValueError, "radius must be > 0"),
    (dict(location_region=("box", 0.0)), ValueError, "half_width must be > 0"),
    (dict(location_region=("box", [0.1, 0.1, 0.1])), ValueError, "half_width must be a number"),
    (dict(location_region=("raster", 0.0)), ValueError, "cell_size"),
    (dict(random_rates="trigger", n_iter=0), ValueError, "n_iter"),
    (dict(random_rates="trigger", n_iter=5, burn_in=5), ValueError, "burn_in must be < n_iter"),
    (dict(random_rates="trigger", chains=0), ValueError, "chains"),
    (dict(random_rates="trigger", leapfrog_steps=0), ValueError, "leapfrog_steps"),
    (dict(random_rates="trigger", rate_prior=(1.0,)), ValueError, "rate_prior must be"),
    (dict(random_rates="trigger", rate_prior=(1.0, -2.0)), ValueError, "rate_prior scale"),
    (dict(random_rates="trigger", fixed={"zeta": 1.0}), ValueError, "unknown parameter"),
    (dict(random_rates="trigger", backend="tpu"), ValueError, "backend"),
    (dict(random_rates="trigger", progress="no"), TypeError, "progress"),
])
def test_sampler_refusals(data, kwargs, exc, match):
    x, t, _, _ = data
    kwargs = dict({"fixed": {"tau_x": 0.5, "tau_t": 5.0}}, **kwargs)
    with pytest.raises(exc, match=match):
        mcmc_latent(x, t, **kwargs)
