"""Spatial triggering kernels (issue 14, "spatial Gaussian and power-law"): ``spatial_kernel=``
``"gaussian"`` (the default, unchanged) or ``("power-law", q)``, the isotropic power law
c_{D,q} h^(-D) (1 + r^2/h^2)^(-q), c_{D,q} = Gamma(q) / (Gamma(q - D/2) pi^(D/2)), q > D/2.

The engines (Numba CPU, and the CUDA kernels on the emulator / a GPU) against the float64 NumPy
reference in naive_hawkes.py, the normalising constant by quadrature, the windowed cut-off against
exact evaluation, the branching simulator's displacements, recovery of h and theta by the posterior
mode, the tools built on a posterior, the Gaussian default unchanged, and bad input."""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate, stats

sys.path.insert(0, str(Path(__file__).parent))
import naive_hawkes as nv  # noqa: E402
from engines import ENGINES  # noqa: E402

import hphawkes_py.hawkes as hk  # noqa: E402
from hphawkes_py.hawkes.engine import make_engine  # noqa: E402
from hphawkes_py.hawkes.kernels import (SpatialKernel, phi0, spatial_log_peak, spatial_peak,  # noqa: E402
                                        trigger_scale)
from hphawkes_py.hawkes.windows import trigger_delta  # noqa: E402

P = dict(mu0=0.7, tau_x=0.8, tau_t=5.0, theta=0.4, omega=0.5, h=0.3)
KW = dict(backend="cpu", threads=1)
# an exponent per dimension, each > D/2 (heavy: q close to D/2; moderate)
Q_BY_D = {1: (0.8, 2.0), 2: (1.3, 2.5), 3: (1.7, 3.0)}


_events = nv.tied_events
_ll = nv.engine_loglik


# ----------------------------------------------------------------------------- the density itself
@pytest.mark.parametrize("D", [1, 2, 3])
def test_normalising_constant_by_quadrature(D):
    """int_{R^D} c_{D,q} h^(-D) (1 + r^2/h^2)^(-q) dx = 1 (radial quadrature, surface of the unit
    sphere 2 pi^(D/2) / Gamma(D/2)); the engine's peak agrees with the reference's closed form and, in
    2-D, with (q - 1) / (pi h^2)."""
    h = 0.7
    surface = 2.0 * math.pi ** (D / 2) / math.gamma(D / 2)
    for q in (*Q_BY_D[D], 7.5):
        f0 = spatial_peak(D, h, q)
        assert f0 == pytest.approx(nv.spatial_power_law(0.0, h, D, q), rel=1e-13)
        assert math.exp(spatial_log_peak(D, h, q)) == pytest.approx(f0, rel=1e-15)

        def radial(r):
            return surface * r ** (D - 1) * f0 * (1.0 + (r / h) ** 2) ** (-q)

        total = integrate.quad(radial, 0, h, epsabs=0, epsrel=1e-12)[0] + integrate.quad(
            radial, h, np.inf, epsabs=0, epsrel=1e-12, limit=500)[0]
        assert total == pytest.approx(1.0, abs=1e-8), (D, q)
    if D == 2:
        assert spatial_peak(2, h, 2.5) == pytest.approx(1.5 / (math.pi * h * h), rel=1e-14)
    # the Gaussian peak is phi0, bit for bit (the Gaussian cut-off and scale are unchanged)
    assert spatial_peak(D, h) == phi0(D, h)
    assert spatial_log_peak(D, h) == -0.5 * D * math.log(2.0 * math.pi * h * h)
    # large q: finite through lgamma (Gamma(1e6) overflows a double)
    assert math.isfinite(spatial_log_peak(D, h, 1e6))


# ----------------------------------------------------------------------------- engines vs NumPy
@pytest.mark.parametrize("backend", ENGINES)
@pytest.mark.parametrize("D", [1, 2, 3])
@pytest.mark.parametrize("exact", [True, False])
def test_engine_matches_numpy_reference(backend, D, exact):
    """log L, G, the integral and pi with the spatial power law against the float64 NumPy reference
    (1e-10), for each temporal kernel, one engine reused across parameter values; float32 within the
    tolerances of the other kernels' tests."""
    x, t = _events(160, D, seed=50 + D)
    perm = np.random.default_rng(D).permutation(t.size)
    S_r = nv.background_sums(x, t, P["tau_x"], P["tau_t"])
    for q in Q_BY_D[D]:
        for kernel, kw in (("exponential", {}), (("power-law", 2.2), None), ("exp2", dict(omega2=0.05, w=0.7))):
            e = make_engine(x, t, backend=backend, exact=exact, kernel=kernel, spatial_kernel=("power-law", q))
            for h in (0.3, 0.05):
                p = dict(P, h=h)
                if kw is None:  # the temporal power law (p = 2.2), written out here: naive_hawkes has only g of exp/exp2
                    dt = t[:, None] - t[None, :]
                    r2 = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
                    g = np.where(dt > 0, 1.2 * p["omega"] * (1 + p["omega"] * np.where(dt > 0, dt, 0)) ** -2.2, 0)
                    G_r = (g * nv.spatial_power_law(r2, h, D, q)).sum(1)
                    T1 = t.max()
                    integ = p["mu0"] * (stats.norm.cdf((T1 - t) / p["tau_t"]) - stats.norm.cdf(
                        (t.min() - t) / p["tau_t"])).sum() + p["theta"] * (1 - (1 + p["omega"] * (T1 - t)) ** -1.2).sum()
                    lam_r = p["mu0"] * S_r + p["theta"] * G_r
                    ll_r = float(np.log(lam_r).sum() - integ)
                    kwe = {}
                else:
                    kwe = kw
                    G_r = nv.trigger_sums(x, t, h, p["omega"], q=q, **kw)
                    lam_r = p["mu0"] * S_r + p["theta"] * G_r
                    ll_r = nv.log_likelihood(x, t, **p, q=q, **kw)
                assert abs(_ll(e, p, **kwe) - ll_r) < 1e-10 * abs(ll_r), (q, kernel, h)
                if kw is not None:  # the compensator: the spatial kernel integrates to 1
                    I_r = nv.integral(t, p["mu0"], p["tau_t"], p["theta"], p["omega"], **kw)
                    assert e.integral(p["mu0"], p["theta"], p["omega"], **kw) == pytest.approx(I_r, rel=1e-12)
                assert np.max(np.abs(p["theta"] * (e.trigger_sums() - G_r)) / lam_r) < 1e-10
                pi_r = p["theta"] * G_r / lam_r
                assert np.max(np.abs(e.self_excitation(p["mu0"], p["theta"]) - pi_r)) < 1e-10
            if kernel == "exponential":
                # the public entry points, events in any order
                sk = ("power-law", q)
                ll = hk.log_likelihood(x[perm], t[perm], P, spatial_kernel=sk, backend=backend, exact=exact)
                assert ll == pytest.approx(nv.log_likelihood(x, t, **P, q=q), rel=1e-10)
                pi = hk.self_excitation_probabilities(x[perm], t[perm], P, spatial_kernel=sk, backend=backend,
                                                      exact=exact)
                np.testing.assert_allclose(pi, nv.self_excitation(x, t, **P, q=q)[perm], rtol=1e-9, atol=1e-12)
    assert pi_r.max() > 0.05 and pi_r.min() == 0.0
    # float32 (times far from 0 stress the hi/lo time split)
    q = Q_BY_D[D][0]
    t32 = t * 3.0 + 60_000.0
    e32 = make_engine(x, t32, backend=backend, dtype=np.float32, exact=exact, spatial_kernel=("power-law", q))
    ll_r = nv.log_likelihood(x, t32, **P, q=q)
    assert abs(_ll(e32, P) - ll_r) < 2e-6 * abs(ll_r)
    lam_r = P["mu0"] * nv.background_sums(x, t32, P["tau_x"], P["tau_t"]) + P["theta"] * nv.trigger_sums(
        x, t32, P["h"], P["omega"], q=q)
    lam = P["mu0"] * e32.background_sums() + P["theta"] * e32.trigger_sums()
    assert np.max(np.abs(lam - lam_r) / lam_r) < 2e-5


@pytest.mark.parametrize("backend", ENGINES)
def test_slots_and_query_sums(backend):
    """MCMC-style proposals into slot 1 and swaps, and the intensity sums at points off the data
    (forecasts: hawkes_query on the CUDA engines) against NumPy."""
    x, t = _events(150, 2, seed=61)
    q = 1.4
    e = make_engine(x, t, backend=backend, spatial_kernel=("power-law", q))
    e.set_background(P["tau_x"], P["tau_t"])
    e.set_trigger(0.3, P["omega"], slot=0)
    e.set_trigger(0.1, P["omega"], slot=1)
    G3 = nv.trigger_sums(x, t, 0.3, P["omega"], q=q)
    G1 = nv.trigger_sums(x, t, 0.1, P["omega"], q=q)
    np.testing.assert_allclose(e.trigger_sums(0), G3, rtol=1e-10, atol=1e-300)
    np.testing.assert_allclose(e.trigger_sums(1), G1, rtol=1e-10, atol=1e-300)
    e.swap_trigger()
    np.testing.assert_allclose(e.trigger_sums(0), G1, rtol=1e-10, atol=1e-300)
    pts = np.random.default_rng(0).uniform(-1, 6, (23, 2))
    for time in (t[-1] + 0.7, t[75], t[-1] + 30.0):
        Sq, Gq = e.query_sums(pts, time, P["tau_x"], P["tau_t"], P["h"], P["omega"])
        d = time - t[None, :]
        r2 = ((pts[:, None, :] - x[None, :, :]) ** 2).sum(-1)
        Gr = (np.where(d > 0, nv.temporal_kernel(np.where(d > 0, d, 0.0), P["omega"]), 0.0)
              * nv.spatial_power_law(r2, P["h"], 2, q)).sum(1)
        Sr = (nv.phi_d(r2, P["tau_x"], 2) * nv.phi_d(d**2, P["tau_t"], 1)).sum(1)
        own = phi0(2, P["tau_x"]) * phi0(1, P["tau_t"])
        lam, lam_r = P["mu0"] * Sq + P["theta"] * Gq, P["mu0"] * Sr + P["theta"] * Gr
        # the documented bound: absolute error below 1e-13 mu0 own (windowed background), trigger relative
        assert np.all(np.abs(lam - lam_r) <= 1e-13 * P["mu0"] * own + 1e-10 * lam_r)
        assert np.max(np.abs(P["theta"] * (Gq - Gr)) / lam_r) < 1e-10


# ----------------------------------------------------------------------------- the windowed cut-off
def test_cut_off_uses_the_power_laws_peak():
    """trigger_delta with q bounds the skipped mass by omega f(0) exp(-omega Delta) with f(0) the power
    law's peak: the same formula with phi_D(0; h) swapped for that peak. With q large the peak is far
    above the Gaussian's, so a cut-off computed with the Gaussian peak would be too short."""
    N, D, h, omega, rho = 5000, 2, 0.3, 0.5, 1e-6
    own = phi0(D, 0.8) * phi0(1, 5.0)
    for q in (1.3, 50.0, 1e4):
        d_q = trigger_delta(N, D, 0.8, 5.0, h, omega, rho, q=q)
        f0 = spatial_peak(D, h, q)
        skipped = (N - 1) * omega * f0 * math.exp(-omega * d_q)
        assert skipped == pytest.approx(4e-14 * rho * own, rel=1e-9)
        # and the scale of the pair terms is the same peak
        assert trigger_scale(D, h, omega, q=q) == pytest.approx(omega * f0, rel=1e-15)
    assert trigger_delta(N, D, 0.8, 5.0, h, omega, rho, q=1e4) > trigger_delta(N, D, 0.8, 5.0, h, omega, rho) + 1.0
    # the Gaussian's cut-off and scale: the formulas of before, bit for bit
    old = (math.log(N - 1) + math.log(omega) - 0.5 * D * math.log(2.0 * math.pi * h * h) - math.log(4e-14)
           - math.log(rho) - math.log(own)) / omega
    assert trigger_delta(N, D, 0.8, 5.0, h, omega, rho) == old
    assert trigger_scale(D, h, omega) == omega * phi0(D, h)


@pytest.mark.parametrize("backend", ENGINES)
def test_windowed_equals_exact_on_an_adversarial_case(backend):
    """200 events at one place at time ~0 and one more there just beyond the cut-off a Gaussian peak
    would give (q = 400: the power law's peak is 800 times phi_D(0; h)), with theta = 1e7 mu0 (the rho
    guard rebuilds the slot). Those 200 pairs carry about 1e-12 of the last event's rate -- more than the
    1e-13 the window promises, so a Gaussian-peak cut-off would break the bound (checked in NumPy) --
    and the windowed engine matches the exact one to 1e-13 at every event."""
    rng = np.random.default_rng(71)
    D, q, n0 = 2, 400.0, 200
    p = dict(mu0=1e-4, tau_x=1.0, tau_t=0.5, theta=1e3, omega=0.5, h=0.05)
    N = n0 + 1
    rho = (p["mu0"] / p["theta"]) / 16.0  # the guard's rho for this theta / mu0
    d_gauss = trigger_delta(N, D, p["tau_x"], p["tau_t"], p["h"], p["omega"], rho)
    d_pl = trigger_delta(N, D, p["tau_x"], p["tau_t"], p["h"], p["omega"], rho, q=q)
    assert d_pl > d_gauss + 10.0
    t = np.concatenate([np.sort(rng.uniform(0, 0.01, n0)), [0.01 + d_gauss + 0.1 * (d_pl - d_gauss)]])
    x = np.concatenate([rng.normal(0, 1e-4, (n0, D)), np.zeros((1, D))])
    # NumPy: the pairs between the two cut-offs matter at more than 1e-13 of the last rate
    lam_r = nv.intensity(x, t, **p, q=q)
    r2 = (x[:-1] ** 2).sum(1)
    beyond = p["theta"] * (nv.temporal_kernel(t[-1] - t[:-1], p["omega"]) * nv.spatial_power_law(r2, p["h"], D, q)).sum()
    assert beyond / lam_r[-1] > 5e-13
    sk = ("power-law", q)
    w = make_engine(x, t, backend=backend, spatial_kernel=sk)
    ex = make_engine(x, t, backend=backend, exact=True, spatial_kernel=sk)
    assert _ll(w, p) == pytest.approx(_ll(ex, p), rel=1e-13)
    lam_w = p["mu0"] * w.background_sums() + p["theta"] * w.trigger_sums()
    lam_x = p["mu0"] * ex.background_sums() + p["theta"] * ex.trigger_sums()
    assert np.max(np.abs(lam_w - lam_x) / lam_x) < 1e-13
    assert np.max(np.abs(lam_x - lam_r) / lam_r) < 1e-12
    # the windowed engine did window: the last event's background pairs are beyond Delta_S
    assert w._delta_s(p["tau_t"]) < t[-1] - t[-2] and math.isfinite(w._delta_g(p["h"], (p["omega"],), rho))


# ----------------------------------------------------------------------------- the Gaussian default
def test_gaussian_default_is_unchanged():
    """spatial_kernel="gaussian" is the default, bit for bit, on every entry point (see also the NumPy
    checks of the Gaussian loops in test_hawkes_engine.py)."""
    x, t = _events(200, 2, seed=81)
    for kw in ({}, dict(exact=True), dict(dtype=np.float32), dict(kernel=("power-law", 2.0))):
        a = hk.log_likelihood(x, t, P, **KW, **kw)
        for sk in ("gaussian", SpatialKernel("gaussian"), None):
            assert hk.log_likelihood(x, t, P, spatial_kernel=sk, **KW, **kw) == a
        np.testing.assert_array_equal(
            hk.self_excitation_probabilities(x, t, P, spatial_kernel="gaussian", **KW, **kw),
            hk.self_excitation_probabilities(x, t, P, **KW, **kw))
    assert hk.log_likelihood(x, t, P, **KW) == pytest.approx(nv.log_likelihood(x, t, **P), rel=1e-12)
    a = hk.simulate(mu=0.5, theta=0.5, omega=1.0, h=0.2, region=3.0, duration=30.0, seed=5)
    b = hk.simulate(mu=0.5, theta=0.5, omega=1.0, h=0.2, region=3.0, duration=30.0, seed=5, spatial_kernel="gaussian")
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    e = make_engine(x, t)
    assert e.spatial_kernel == ("gaussian", 0.0) and "spatial_kernel" not in repr(e)
    import pickle  # engine factories travel to worker processes (executors)

    sk = SpatialKernel("power-law", 2.5)
    assert pickle.loads(pickle.dumps(sk)) == sk and type(pickle.loads(pickle.dumps(sk))) is SpatialKernel
    assert "spatial_kernel=('power-law', 2.0)" in repr(make_engine(x, t, spatial_kernel="power-law"))


# ----------------------------------------------------------------------------- simulation
@pytest.mark.parametrize("D", [1, 2, 3])
def test_simulated_displacements_follow_the_power_law(D):
    """Child - parent distances: F(r) = I_{r^2/(h^2+r^2)}(D/2, q - D/2) (1 - (1 + r^2/h^2)^(1-q) in 2-D),
    not the Gaussian's chi law; directions isotropic."""
    h, q = 0.2, Q_BY_D[D][0] + 0.3
    x, t, par = hk.simulate(mu=0.5, theta=0.6, omega=2.0, h=h, region=4.0, duration={1: 1000.0, 2: 300.0, 3: 100.0}[D],
                            dim=D, seed=3, return_parents=True, spatial_kernel=("power-law", q))
    child = par >= 0
    dx = x[child] - x[par[child]]
    r = np.sqrt((dx**2).sum(1))
    assert r.size > 1000
    a, b = D / 2, q - D / 2

    def cdf(v):
        return stats.beta.cdf(v**2 / (h**2 + v**2), a, b)

    assert stats.kstest(r, cdf).pvalue > 0.01
    if D == 2:
        np.testing.assert_allclose(cdf(np.array([0.1, 1.0, 10.0])),
                                   1 - (1 + np.array([0.1, 1.0, 10.0]) ** 2 / h**2) ** (1 - q), rtol=1e-10)
    assert stats.kstest(r, lambda v: stats.chi.cdf(v / h, D)).pvalue < 1e-6
    # isotropic: each coordinate's sign balanced, and in 2-D the angle uniform
    assert abs(np.mean(dx[:, 0] > 0) - 0.5) < 0.05
    if D == 2:
        assert stats.kstest(np.arctan2(dx[:, 1], dx[:, 0]), stats.uniform(-np.pi, 2 * np.pi).cdf).pvalue > 0.01


def test_far_tail_of_the_displacements():
    """The radius's inverse CDF stays accurate far in the tail (u = B / (1 - B) from two inverses)."""
    from hphawkes_py.hawkes.simulation import draw_displacements

    class Fixed:  # a generator whose uniforms are chosen
        def __init__(self, u):
            self.u = np.asarray(u, float)

        def random(self, size):
            return self.u

        def standard_normal(self, shape):
            return np.ones(shape)

    U = np.array([1e-12, 0.5, 1 - 1e-12])
    for D, q in ((1, 0.9), (2, 1.5), (3, 2.0)):
        z = draw_displacements(Fixed(U), 3, D, 0.5, q)
        r = np.sqrt((z**2).sum(1))
        F = stats.beta.cdf(r**2 / (0.25 + r**2), D / 2, q - D / 2)
        sf = stats.beta.sf(r**2 / (0.25 + r**2), D / 2, q - D / 2)
        assert F[0] == pytest.approx(1e-12, rel=1e-6) and F[1] == pytest.approx(0.5, rel=1e-10)
        assert sf[2] == pytest.approx(1e-12, rel=1e-6)


@pytest.mark.slow
def test_recovery_of_h_and_theta():
    """Simulate with the 2-D power law (q = 1.5, h = 0.1, theta = 0.6) and maximise the posterior: the
    power-law fit recovers h and theta, the Gaussian fit does not (h 40% too wide, theta too small) and
    has a much lower posterior."""
    sk = ("power-law", 1.5)
    x, t = hk.simulate(mu=0.02, theta=0.6, omega=1.0, h=0.1, region=10.0, duration=300.0, seed=8, spatial_kernel=sk)
    assert t.size > 1200
    kw = dict(fixed={"tau_x": 2.0, "tau_t": 50.0}, start={"h": 0.2, "omega": 1.0, "theta": 0.5, "mu0": 0.5}, **KW)
    m = hk.posterior_mode(x, t, spatial_kernel=sk, **kw)
    g = hk.posterior_mode(x, t, **kw)
    assert m["h"] == pytest.approx(0.1, rel=0.15)
    assert m["theta"] == pytest.approx(0.6, abs=0.07)
    assert m["omega"] == pytest.approx(1.0, rel=0.15)
    assert not g["h"] == pytest.approx(0.1, rel=0.15)
    assert not g["theta"] == pytest.approx(0.6, abs=0.07)
    assert m["log_posterior"] > g["log_posterior"] + 50.0


# ----------------------------------------------------------------------------- the tools on a posterior
@pytest.fixture(scope="module")
def fitted():
    sk = ("power-law", 1.6)
    x, t = hk.simulate(mu=0.3, theta=0.5, omega=1.0, h=0.2, region=4.0, duration=40.0, seed=2, spatial_kernel=sk)
    post = hk.mcmc(x, t, n_iter=30, burn_in=10, chains=1, fixed={"tau_x": 1.0, "tau_t": 10.0}, seed=1,
                   progress=False, spatial_kernel=sk, **KW)
    return x, t, post, sk


def test_posterior_remembers_the_spatial_kernel(fitted):
    x, t, post, sk = fitted
    assert post.spatial_kernel == sk
    assert post.to_dict()["spatial_kernel"] == list(sk)
    assert "spatial_kernel=('power-law', 1.6)" in repr(post)
    # self-excitation over draws: every draw's pi from the power-law engine
    pi = hk.self_excitation_draws(post, n_draws=3, seed=0, progress=False)
    idx, flat = post.select_draws(3, 0)
    for k in range(3):
        p = {n: float(v[k]) for n, v in flat.items()}
        np.testing.assert_allclose(pi[k], nv.self_excitation(x, t, **p, q=1.6), rtol=1e-9, atol=1e-12)


def test_forecast_tools_use_the_spatial_kernel(fitted):
    x, t, post, sk = fitted
    p = post.params_mean().to_dict()
    grid = np.random.default_rng(0).uniform(0, 4, (6, 2))
    T = t.max() + 0.5
    f = hk.forecast_intensity(p, x, t, [T], grid, spatial_kernel=sk, progress=False, **KW)
    d = T - t[None, :]
    r2 = ((grid[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    G = (p["omega"] * np.exp(-p["omega"] * d) * nv.spatial_power_law(r2, p["h"], 2, 1.6)).sum(1)
    S = (nv.phi_d(r2, p["tau_x"], 2) * nv.phi_d(d**2, p["tau_t"], 1)).sum(1)
    np.testing.assert_allclose(f.mean[0], p["mu0"] * S + p["theta"] * G, rtol=1e-10)
    # the posterior's kernel is the default of the forecast tools
    fp = hk.forecast_intensity(post, x, t, [T], grid, n_draws=4, seed=1, progress=False, **KW)
    fe = hk.forecast_intensity(post, x, t, [T], grid, n_draws=4, seed=1, progress=False, spatial_kernel=sk, **KW)
    fg = hk.forecast_intensity(post, x, t, [T], grid, n_draws=4, seed=1, progress=False, spatial_kernel="gaussian",
                               **KW)
    np.testing.assert_array_equal(fp.mean, fe.mean)
    assert not np.allclose(fp.mean, fg.mean)
    # forecast score: the compensator does not depend on the spatial kernel, the window events' rates do
    origin, H = 30.0, 8.0
    sp = hk.forecast_score(p, x, t, origin=origin, horizon=H, spatial_kernel=sk, exact=True, **KW)
    sg = hk.forecast_score(p, x, t, origin=origin, horizon=H, exact=True, **KW)
    assert sp.expected_count == pytest.approx(sg.expected_count, rel=1e-12)
    upto = t <= origin + H
    win = (t > origin) & upto
    Gp = nv.trigger_sums(x[upto], t[upto], p["h"], p["omega"], q=1.6)[win[upto]]
    Gg = nv.trigger_sums(x[upto], t[upto], p["h"], p["omega"])[win[upto]]
    order = np.argsort(t[sp.event_index], kind="stable")
    lam_p, lam_g = np.exp(sp.log_intensity[order]), np.exp(sg.log_intensity[order])
    np.testing.assert_allclose(lam_p - lam_g, p["theta"] * (Gp - Gg), rtol=1e-8, atol=1e-12)
    sw = hk.forecast_score(p, x, t, origin=origin, horizon=H, spatial_kernel=sk, **KW)
    assert sw.log_score == pytest.approx(sp.log_score, rel=1e-11)
    # super-thinning's intensities come from the power-law engine: differs from the Gaussian one
    a = hk.super_thinned_residuals(post, x, t, [[0, 4], [0, 4]], seed=0, **KW)
    b = hk.super_thinned_residuals(post, x, t, [[0, 4], [0, 4]], seed=0, spatial_kernel="gaussian", **KW)
    assert a.x.shape != b.x.shape or not np.array_equal(a.x, b.x)
    # residuals: the time transform does not depend on the spatial kernel (it integrates to 1)
    ra = hk.residuals(post, x, t, progress=False)
    rb = hk.residuals(post, x, t, progress=False, spatial_kernel="gaussian")
    np.testing.assert_array_equal(ra.rescaled_times, rb.rescaled_times)
    # posterior predictive: the offspring displacements follow the fit's kernel
    pp = hk.posterior_predictive(post, x, t, n_draws=2, seed=1, progress=False)
    assert pp.n_simulated.shape == (2,)


def test_spatial_window_refuses_the_power_law():
    from hphawkes_py.kde import Window

    x, t = _events(50, 2, seed=91)
    win = Window.rectangle(-1.0, 6.0, -1.0, 6.0, cell_size=0.5)
    assert np.isfinite(hk.log_likelihood(x, t, P, spatial_window=win, **KW))
    with pytest.raises(ValueError, match="spatial_window is implemented only for spatial_kernel='gaussian'"):
        hk.log_likelihood(x, t, P, spatial_window=win, spatial_kernel=("power-law", 2.0), **KW)
    with pytest.raises(ValueError, match="spatial_kernel='gaussian'"):
        hk.mcmc(x, t, n_iter=3, burn_in=1, chains=1, fixed={"tau_x": 1.0, "tau_t": 1.0}, progress=False,
                spatial_window=win, spatial_kernel="power-law", **KW)
    e = make_engine(x, t, spatial_kernel=("power-law", 2.0))
    with pytest.raises(ValueError, match="spatial_kernel"):
        e.set_spatial_window(x, win)


# ----------------------------------------------------------------------------- bad input
BAD = [
    (("power-law", 1.0), ValueError, r"q must be > D/2 = 1 for D = 2"),
    (("power-law", 0.5), ValueError, r"spatial_kernel exponent q must be > D/2"),
    (("power-law", -3.0), ValueError, r"spatial_kernel exponent q must be > D/2"),
    (("power-law", float("nan")), ValueError, "spatial_kernel exponent q must be finite"),
    (("power-law", float("inf")), ValueError, "spatial_kernel exponent q must be finite"),
    (("power-law", 2e6), ValueError, r"spatial_kernel exponent q must be <= 1e6"),
    (("power-law", True), TypeError, "spatial_kernel exponent q must be a real number"),
    (("power-law", "2"), TypeError, "spatial_kernel exponent q must be a real number"),
    (("gaussian", 2.0), ValueError, "spatial_kernel: only 'power-law' takes an exponent"),
    ("cauchy", ValueError, "spatial_kernel must be 'gaussian', 'power-law' or"),
    ("exponential", ValueError, "spatial_kernel must be"),
    (2.0, TypeError, "spatial_kernel must be"),
    (("power-law", 2.0, 1.0), TypeError, "spatial_kernel must be"),
]


@pytest.mark.parametrize("bad,exc,match", BAD)
def test_bad_spatial_kernel_names_the_argument(bad, exc, match):
    x, t = _events(30, 2, seed=3)
    calls = [
        lambda: hk.log_likelihood(x, t, P, spatial_kernel=bad, **KW),
        lambda: hk.self_excitation_probabilities(x, t, P, spatial_kernel=bad, **KW),
        lambda: hk.mcmc(x, t, n_iter=3, burn_in=1, chains=1, fixed={"tau_x": 1.0, "tau_t": 1.0}, progress=False,
                        spatial_kernel=bad, **KW),
        lambda: hk.posterior_mode(x, t, fixed={"tau_x": 1.0, "tau_t": 1.0}, spatial_kernel=bad, **KW),
        lambda: hk.simulate(mu=0.1, theta=0.5, omega=1.0, h=0.1, region=1.0, duration=5.0, spatial_kernel=bad),
        lambda: hk.forecast_intensity(P, x, t, [t.max()], x[:2], spatial_kernel=bad, progress=False, **KW),
        lambda: hk.forecast_score(P, x, t, origin=50.0, horizon=5.0, spatial_kernel=bad, **KW),
        lambda: hk.residuals(P, x, t, spatial_kernel=bad, progress=False),
        lambda: hk.super_thinned_residuals(P, x, t, [[0, 5], [0, 5]], spatial_kernel=bad, **KW),
    ]
    for call in calls:
        with pytest.raises(exc, match=match):
            call()


def test_exponent_checked_against_the_dimension():
    """q > D/2: 1.2 is fine in 1-D and 2-D but not in 3-D (nor for the 3-D simulator)."""
    for D in (1, 2):
        x, t = _events(30, D, seed=4)
        assert np.isfinite(hk.log_likelihood(x, t, P, spatial_kernel=("power-law", 1.2), **KW))
    x, t = _events(30, 3, seed=4)
    with pytest.raises(ValueError, match=r"q must be > D/2 = 1.5 for D = 3"):
        hk.log_likelihood(x, t, P, spatial_kernel=("power-law", 1.2), **KW)
    with pytest.raises(ValueError, match=r"q must be > D/2 = 1.5 for D = 3"):
        hk.simulate(mu=0.1, theta=0.5, omega=1.0, h=0.1, region=1.0, duration=5.0, dim=3,
                    spatial_kernel=("power-law", 1.2))
    with pytest.raises(ValueError, match="spatial_kernel exponent q must be > D/2 = 1.5"):
        make_engine(x, t, spatial_kernel=("power-law", 1.2))
    # "power-law" alone is q = 2, valid in every dimension
    assert hk.log_likelihood(x, t, P, spatial_kernel="power-law", **KW) == hk.log_likelihood(
        x, t, P, spatial_kernel=("power-law", 2.0), **KW)
    # the largest exponent allowed works (a near-Gaussian shape, finite constants)
    assert np.isfinite(hk.log_likelihood(x, t, P, spatial_kernel=("power-law", 1e6), **KW))
    # ... except where its peak would overflow float32 sums: refused, not inf
    tiny = dict(P, h=1e-8, omega=1e8)
    assert np.isfinite(hk.log_likelihood(x, t, tiny, spatial_kernel=("power-law", 1e6), **KW))
    with pytest.raises(ValueError, match="overflows float32 sums.*spatial_kernel exponent q"):
        hk.log_likelihood(x, t, tiny, spatial_kernel=("power-law", 1e6), dtype=np.float32, **KW)


def test_cli_spatial_kernel(tmp_path, capsys):
    from hphawkes_py.cli import main as cli_main

    x, t = _events(40, 2, seed=5)
    csv = tmp_path / "ev.csv"
    csv.write_text("x_km,y_km,t_hours\n" + "\n".join(f"{a},{b},{c}" for (a, b), c in zip(x, t)))
    pargs = ["--mu0", "0.7", "--tau-x", "0.8", "--tau-t", "5", "--theta", "0.4", "--omega", "0.5", "--h", "0.3",
             "--backend", "cpu"]
    assert cli_main(["hawkes", "loglik", str(csv), "--spatial-kernel", "power-law:1.5"] + pargs) == 0
    out = float(capsys.readouterr().out.strip())
    assert out == pytest.approx(hk.log_likelihood(x, t, P, spatial_kernel=("power-law", 1.5), **KW), rel=1e-12)
    with pytest.raises(SystemExit):
        cli_main(["hawkes", "loglik", str(csv), "--spatial-kernel", "cauchy"] + pargs)
    assert cli_main(["hawkes", "loglik", str(csv), "--spatial-kernel", "power-law:0.9"] + pargs) == 2
    assert "spatial_kernel exponent q must be > D/2" in capsys.readouterr().err
