"""Temporal triggering kernels (issue 14, part 3): the power-law (Omori-Utsu) kernel through the
public entry points -- simulate, log_likelihood, posterior_mode (recovery), mcmc and the tools
built on them (the engines' power-law pair sums are tested against NumPy in test_hawkes_engine.py)
-- and the sum of two exponentials (kernel="exp2"), from the engines (CPU and the CUDA kernels on
the emulator, against naive_hawkes.py) and the windowed bound to simulation, MCMC, the CLI and bad
input (second half of this file)."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from scipy.special import ndtr

import hphawkes_py.hawkes as hk
from hphawkes_py.hawkes.residual_analysis import rescaled_times
from hphawkes_py.hawkes.sampler import _mcmc_debug

PL = ("power-law", 2.5)
FIXED = {"tau_x": 1.0, "tau_t": 10.0}
START = {"theta": 0.5, "omega": 1.0, "h": 0.2, "mu0": 0.5}
KW = dict(backend="cpu", threads=1)


def test_simulated_delays_follow_the_kernel():
    """Child - parent delays: Lomax (p - 1) omega (1 + omega dt)^(-p) for the power law, not Exp(omega)."""
    omega, p = 2.0, 2.5
    _, t, par = hk.simulate(mu=0.5, theta=0.6, omega=omega, h=0.1, region=4.0, duration=400.0, seed=3,
                            return_parents=True, kernel=("power-law", p))
    child = par >= 0
    d = t[child] - t[par[child]]
    # children born after the end are dropped: condition on the delay being < 50 / omega (short against 400)
    d = d[t[par[child]] < 400.0 - 50.0 / omega]
    d = d[d < 50.0 / omega]
    cap = 1 - (1 + 50.0) ** (1 - p)
    lomax = lambda v: (1 - (1 + omega * v) ** (1 - p)) / cap  # noqa: E731
    expo = lambda v: (1 - np.exp(-omega * v)) / (1 - np.exp(-50.0))  # noqa: E731
    assert d.size > 1000
    assert stats.kstest(d, lomax).pvalue > 0.01
    assert stats.kstest(d, expo).pvalue < 1e-6
    _, te, pare = hk.simulate(mu=0.5, theta=0.6, omega=omega, h=0.1, region=4.0, duration=400.0, seed=3,
                              return_parents=True)
    de = te[pare >= 0] - te[pare[pare >= 0]]
    assert np.mean(de) == pytest.approx(1 / omega, rel=0.1)


def _reference(x, t, p, kp):
    """(log L, pi_n) with the power-law trigger, from the all-pairs NumPy reference of the engine tests."""
    from test_hawkes_engine import _power_reference

    ll, S, G = _power_reference(x, t, p, kp)
    return ll, p["theta"] * G / (p["mu0"] * S + p["theta"] * G)


def test_public_functions_take_the_kernel():
    x, t = hk.simulate(mu=0.3, theta=0.5, omega=2.0, h=0.2, region=3.0, duration=30.0, seed=1, kernel=PL)
    p = dict(mu0=0.5, tau_x=1.0, tau_t=10.0, theta=0.4, omega=1.5, h=0.25)
    ll_ref, pi_ref = _reference(x, t, p, 2.5)
    perm = np.random.default_rng(0).permutation(t.size)
    assert hk.log_likelihood(x[perm], t[perm], p, kernel=PL, **KW) == pytest.approx(ll_ref, rel=1e-11)
    assert hk.log_likelihood(x, t, p, kernel="power-law", **KW) == pytest.approx(_reference(x, t, p, 1.5)[0],
                                                                                 rel=1e-11)
    pi = hk.self_excitation_probabilities(x[perm], t[perm], p, kernel=PL, **KW)
    np.testing.assert_allclose(pi, pi_ref[perm], rtol=1e-9, atol=1e-14)
    assert hk.log_likelihood(x, t, p, **KW) != pytest.approx(ll_ref, rel=1e-3)  # the kernel matters
    # Lambda(t_n) of the residuals with the power-law kernel, against all pairs
    lam = rescaled_times(np.sort(t), hk.HawkesParams(**p), (t.min(), t.max()), kernel_p=2.5)
    ts = np.sort(t)
    d = ts[:, None] - ts[None, :]
    tr = np.where(d > 0, 1 - (1 + p["omega"] * np.where(d > 0, d, 0)) ** (1 - 2.5), 0).sum(1)
    bg = (ndtr(d / p["tau_t"]) - ndtr((ts.min() - ts[None, :]) / p["tau_t"])).sum(1)
    np.testing.assert_allclose(lam, p["mu0"] * bg + p["theta"] * tr, rtol=1e-11)


@pytest.mark.slow
def test_power_law_parameters_recovered_at_the_mode():
    """Simulation recovery with the power-law kernel (N ~ 750, p = 2.5 known): theta and omega near
    the truth (0.5 and 2; the kernel-smoothed background absorbs a little of the triggering)."""
    x, t = hk.simulate(mu=0.2, theta=0.5, omega=2.0, h=0.2, region=5.0, duration=80.0, seed=5, kernel=PL)
    m = hk.posterior_mode(x, t, fixed=FIXED, start=START, kernel=PL, maxiter=250, **KW)
    assert abs(m["theta"] - 0.5) < 0.15 and 1.2 < m["omega"] < 3.3 and abs(m["h"] - 0.2) < 0.04, m
    res = hk.residuals(dict(FIXED, **{k: m[k] for k in ("h", "omega", "theta", "mu0")}), x, t, kernel=PL)
    assert res.ks_pvalue > 0.01


def test_mcmc_with_the_power_law_kernel_carries_it_downstream():
    x, t = hk.simulate(mu=0.3, theta=0.5, omega=2.0, h=0.2, region=3.0, duration=25.0, seed=2, kernel=PL)
    post = hk.mcmc(x, t, n_iter=12, burn_in=4, chains=1, fixed=FIXED, init=START, seed=3, progress=False, kernel=PL,
                   **KW)
    assert post.kernel == PL and "power-law" in repr(post) and post.to_dict()["kernel"] == ["power-law", 2.5]
    se = hk.self_excitation(post, n_draws=1, seed=0, progress=False)
    k = int(se.attrs["draw_indices"][0])
    p = {n: float(post.draws[n].reshape(-1)[k]) for n in hk.PARAM_NAMES}
    np.testing.assert_allclose(se["mean"], hk.self_excitation_probabilities(x, t, p, kernel=PL, **KW), rtol=1e-12)
    fc = hk.forecast_intensity(post, x, t, [t.max() + 0.5], x[:5], n_draws=2, seed=0, progress=False, **KW)
    fe = hk.forecast_intensity(post, x, t, [t.max() + 0.5], x[:5], n_draws=2, seed=0, progress=False,
                               kernel="exponential", **KW)
    assert not np.allclose(fc.mean, fe.mean)
    assert hk.residuals(post, x, t).ks_pvalue >= 0


def test_cli_kernel_and_residuals(tmp_path, capsys):
    import pandas as pd

    from hphawkes_py.cli import main as cli_main

    csv = tmp_path / "pl.csv"
    assert cli_main(["hawkes", "simulate", "--mu", "0.3", "--theta", "0.5", "--omega", "2", "--h", "0.2", "--region",
                     "3", "--duration", "25", "--seed", "2", "--kernel", "power-law:2.5", "--out", str(csv)]) == 0
    df = pd.read_csv(csv)
    x, t = df[["x_km", "y_km"]].to_numpy(), df["t_hours"].to_numpy()
    x2, t2 = hk.simulate(mu=0.3, theta=0.5, omega=2.0, h=0.2, region=3.0, duration=25.0, seed=2, kernel=PL)
    np.testing.assert_allclose(t, t2)
    pargs = ["--mu0", "0.5", "--tau-x", "1", "--tau-t", "10", "--theta", "0.4", "--omega", "1.5", "--h", "0.25"]
    capsys.readouterr()
    assert cli_main(["hawkes", "loglik", str(csv), "--kernel", "power-law:2.5", "--backend", "cpu"] + pargs) == 0
    p = dict(mu0=0.5, tau_x=1.0, tau_t=10.0, theta=0.4, omega=1.5, h=0.25)
    assert float(capsys.readouterr().out) == pytest.approx(hk.log_likelihood(x, t, p, kernel=PL, **KW), rel=1e-12)
    out, png = tmp_path / "res.csv", tmp_path / "res.png"
    assert cli_main(["hawkes", "residuals", str(csv), "--kernel", "power-law:2.5", "--out", str(out), "--png",
                     str(png)] + pargs) == 0
    assert "Kolmogorov-Smirnov" in capsys.readouterr().out
    table = pd.read_csv(out)
    ref = hk.residuals(p, x, t, kernel=PL)
    np.testing.assert_allclose(table["rescaled_time"], ref.rescaled_times, rtol=1e-12)
    assert table["event"].min() == 1 and png.stat().st_size > 1000
    with pytest.raises(SystemExit):
        cli_main(["hawkes", "loglik", str(csv), "--kernel", "power-law:x"] + pargs)
    assert cli_main(["hawkes", "loglik", str(csv), "--kernel", "power-law:0.5", "--backend", "cpu"] + pargs) == 2
    assert "kernel exponent p must be > 1" in capsys.readouterr().err


# ============================================================================= sum of two exponentials ("exp2")
# g(dt) = w omega exp(-omega dt) + (1 - w) omega2 exp(-omega2 dt): omega2 (1/hour) and w in [0, 1] are
# parameters like the others. The engines (CPU and the CUDA kernels on the emulator) against the
# float64 NumPy reference in naive_hawkes.py, the windowed cut-off (bound (3') of windows.py) against
# exact evaluation on an adversarial case, simulation, residuals, MCMC and bad input.
import math  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
import naive_hawkes as nv  # noqa: E402
from engines import ENGINES  # noqa: E402

from hphawkes_py.hawkes.engine import make_engine  # noqa: E402
from hphawkes_py.hawkes.kernels import phi0  # noqa: E402
from hphawkes_py.hawkes.windows import EPS_G, RHO_DEFAULT, trigger_delta  # noqa: E402

P2 = dict(mu0=0.7, tau_x=0.8, tau_t=5.0, theta=0.4, omega=0.5, h=0.3)
# (omega2, w): slow second component, fast second component, and the two ends of the weight
EXP2_CASES = [(0.05, 0.7), (3.0, 0.2), (0.05, 1.0), (0.05, 0.0)]


_events = nv.tied_events
_ll2 = nv.engine_loglik


@pytest.mark.parametrize("backend", ENGINES)
@pytest.mark.parametrize("D", [1, 2])
@pytest.mark.parametrize("exact", [True, False])
def test_exp2_engine_matches_numpy_reference(backend, D, exact):
    """log L, G, the integral and pi of the exp2 kernel against NumPy in float64 (1e-10), with one
    engine reused across (omega2, w), so a cache that ignored them would fail; float32 within the
    tolerances of test_hawkes_engine.py; w = 1 (w = 0) is the exponential kernel with omega (omega2)."""
    x, t = _events(200, D, seed=30 + D)
    e = make_engine(x, t, backend=backend, exact=exact, kernel="exp2")
    S_r = nv.background_sums(x, t, P2["tau_x"], P2["tau_t"])
    perm = np.random.default_rng(D).permutation(t.size)
    for omega2, w in EXP2_CASES:
        kw = dict(omega2=omega2, w=w)
        ll_r = nv.log_likelihood(x, t, **P2, **kw)
        G_r = nv.trigger_sums(x, t, P2["h"], P2["omega"], **kw)
        lam_r = P2["mu0"] * S_r + P2["theta"] * G_r
        assert abs(_ll2(e, P2, **kw) - ll_r) < 1e-10 * abs(ll_r), (omega2, w)
        assert np.max(np.abs(P2["theta"] * (e.trigger_sums() - G_r)) / lam_r) < 1e-10
        I_r = nv.integral(t, P2["mu0"], P2["tau_t"], P2["theta"], P2["omega"], **kw)
        assert e.integral(P2["mu0"], P2["theta"], P2["omega"], **kw) == pytest.approx(I_r, rel=1e-12)
        pi_r = nv.self_excitation(x, t, **P2, **kw)
        assert np.max(np.abs(e.self_excitation(P2["mu0"], P2["theta"]) - pi_r)) < 1e-10
        # the public entry points on the same backend, events in any order
        ll = hk.log_likelihood(x[perm], t[perm], dict(P2, **kw), kernel="exp2", backend=backend, exact=exact)
        assert ll == pytest.approx(ll_r, rel=1e-10)
        pi = hk.self_excitation_probabilities(x[perm], t[perm], dict(P2, **kw), kernel="exp2", backend=backend,
                                              exact=exact)
        np.testing.assert_allclose(pi, pi_r[perm], rtol=1e-9, atol=1e-12)
    assert pi_r.max() > 0.05 and pi_r.min() == 0.0
    # the two ends of the weight are the exponential kernel
    ex = make_engine(x, t, backend=backend, exact=exact)
    assert _ll2(e, P2, omega2=0.05, w=1.0) == pytest.approx(_ll2(ex, P2), rel=1e-12)
    assert _ll2(e, P2, omega2=0.05, w=0.0) == pytest.approx(_ll2(ex, dict(P2, omega=0.05)), rel=1e-12)
    # float32 (times far from 0 stress the hi/lo time split)
    t32 = t * 3.0 + 60_000.0
    e32 = make_engine(x, t32, backend=backend, dtype=np.float32, exact=exact, kernel="exp2")
    kw = dict(omega2=0.05, w=0.7)
    ll_r = nv.log_likelihood(x, t32, **P2, **kw)
    assert abs(_ll2(e32, P2, **kw) - ll_r) < 2e-6 * abs(ll_r)
    lam_r = P2["mu0"] * nv.background_sums(x, t32, P2["tau_x"], P2["tau_t"]) + P2["theta"] * nv.trigger_sums(
        x, t32, P2["h"], P2["omega"], **kw)
    lam = P2["mu0"] * e32.background_sums() + P2["theta"] * e32.trigger_sums()
    assert np.max(np.abs(lam - lam_r) / lam_r) < 2e-5


@pytest.mark.parametrize("backend", ENGINES)
def test_exp2_slots_and_query_sums(backend):
    """MCMC-style proposals into slot 1 (set_trigger with other omega2/w, swap) and the intensity
    sums at points off the data (forecasts: hawkes_query on the CUDA engines) against NumPy."""
    x, t = _events(150, 2, seed=41)
    e = make_engine(x, t, backend=backend, kernel="exp2")
    e.set_background(P2["tau_x"], P2["tau_t"])
    e.set_trigger(P2["h"], P2["omega"], slot=0, omega2=0.05, w=0.7)
    e.set_trigger(P2["h"], P2["omega"], slot=1, omega2=0.05, w=0.3)
    G7 = nv.trigger_sums(x, t, P2["h"], P2["omega"], omega2=0.05, w=0.7)
    G3 = nv.trigger_sums(x, t, P2["h"], P2["omega"], omega2=0.05, w=0.3)
    np.testing.assert_allclose(e.trigger_sums(0), G7, rtol=1e-10, atol=1e-300)
    np.testing.assert_allclose(e.trigger_sums(1), G3, rtol=1e-10, atol=1e-300)
    e.swap_trigger()
    np.testing.assert_allclose(e.trigger_sums(0), G3, rtol=1e-10, atol=1e-300)
    q = np.random.default_rng(0).uniform(-1, 6, (23, 2))
    kw = dict(omega2=0.05, w=0.7)
    for time in (t[-1] + 0.7, t[75], t[-1] + 30.0):
        Sq, Gq = e.query_sums(q, time, P2["tau_x"], P2["tau_t"], P2["h"], P2["omega"], **kw)
        d = time - t[None, :]
        r2 = ((q[:, None, :] - x[None, :, :]) ** 2).sum(-1)
        Gr = np.where(d > 0, nv.temporal_kernel(np.where(d > 0, d, 0.0), P2["omega"], **kw), 0.0) \
            * nv.phi_d(r2, P2["h"], 2)
        Gr = Gr.sum(1)
        Sr = (nv.phi_d(r2, P2["tau_x"], 2) * nv.phi_d(d**2, P2["tau_t"], 1)).sum(1)
        own = phi0(2, P2["tau_x"]) * phi0(1, P2["tau_t"])
        lam, lam_r = P2["mu0"] * Sq + P2["theta"] * Gq, P2["mu0"] * Sr + P2["theta"] * Gr
        assert np.all(np.abs(lam - lam_r) <= 1e-13 * P2["mu0"] * own + 1e-10 * lam_r)
        assert np.max(np.abs(P2["theta"] * (Gq - Gr)) / lam_r) < 1e-10


def _worst_skipped(N, D, h, omega, omega2, w, delta):
    """Largest possible skipped trigger mass of one event with the cut-off delta: N - 1 earlier events
    at distance 0, all just beyond delta."""
    return (N - 1) * phi0(D, h) * (w * omega * math.exp(-omega * delta)
                                   + (1 - w) * omega2 * math.exp(-omega2 * delta))


@pytest.mark.parametrize("omega, omega2, w", [(5.0, 0.01, 0.999), (5.0, 0.01, 0.5), (0.01, 5.0, 0.3),
                                              (2.0, 2.0, 0.5), (5.0, 0.01, 1.0), (5.0, 0.01, 0.0),
                                              (5.0, 1e-4, 1 - 1e-12)])
def test_exp2_cutoff_bound(omega, omega2, w):
    """Bound (3'): beyond Delta_G the skipped mass is at most EPS_G rho own, and the cut-off is not
    wasteful (at 0.9 Delta_G the worst case already exceeds half the budget, unless nothing is cut)."""
    N, D, tau_x, tau_t, h = 4000, 2, 0.8, 5.0, 0.3
    own = phi0(D, tau_x) * phi0(1, tau_t)
    for rho in (RHO_DEFAULT, 1e-2):
        budget = EPS_G * rho * own
        delta = trigger_delta(N, D, tau_x, tau_t, h, omega, rho, omega2=omega2, w=w)
        assert 0 < delta < math.inf
        assert _worst_skipped(N, D, h, omega, omega2, w, delta) <= budget * (1 + 1e-12)
        assert _worst_skipped(N, D, h, omega, omega2, w, 0.9 * delta) > 0.5 * budget
    # a slow component of tiny weight only stretches the cut-off as far as its weight needs
    d_small = trigger_delta(N, D, tau_x, tau_t, h, 5.0, 1e-6, omega2=0.01, w=1 - 1e-12)
    d_big = trigger_delta(N, D, tau_x, tau_t, h, 5.0, 1e-6, omega2=0.01, w=0.5)
    assert d_small < 0.6 * d_big


@pytest.mark.parametrize("backend", ENGINES)
def test_exp2_windowed_equals_exact_on_an_adversarial_case(backend):
    """Events at one place, spread over a long time: the heavy slow tail (weight 1e-3) carries mass far
    beyond the cut-off the fast rate alone would give. The windowed likelihood (which does skip pairs
    here) stays within the documented 1e-13 of every rate; a fast-rate-only window would be off by
    orders of magnitude more (checked in NumPy). Also theta >> mu0, where the rho guard rebuilds."""
    rng = np.random.default_rng(7)
    N, D = 300, 2
    t = np.sort(rng.uniform(0, 20_000.0, N))
    x = 0.02 * rng.standard_normal((N, D))
    for p, kw in [(dict(P2, omega=5.0), dict(omega2=0.01, w=0.999)),
                  (dict(P2, omega=5.0, mu0=1e-4, theta=50.0), dict(omega2=0.01, w=0.999))]:
        ex = make_engine(x, t, backend=backend, exact=True, kernel="exp2")
        wi = make_engine(x, t, backend=backend, exact=False, kernel="exp2")
        la, lb = _ll2(ex, p, **kw), _ll2(wi, p, **kw)
        lam_ex = p["mu0"] * ex.background_sums() + p["theta"] * ex.trigger_sums()
        lam_wi = p["mu0"] * wi.background_sums() + p["theta"] * wi.trigger_sums()
        assert np.all(np.abs(lam_wi - lam_ex) <= 1e-13 * lam_ex)
        assert abs(la - lb) <= N * 1e-13 + 1e-13 * abs(la)
        assert wi.pair_evaluations < 0.9 * ex.pair_evaluations  # the window did cut pairs
        # the same events with a cut-off from the fast rate alone (the exponential bound (3))
        d_fast = trigger_delta(N, D, p["tau_x"], p["tau_t"], p["h"], p["omega"], RHO_DEFAULT)
        d = t[:, None] - t[None, :]
        r2 = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
        pair = np.where(d > 0, nv.temporal_kernel(np.where(d > 0, d, 0.0), p["omega"], **kw), 0.0) \
            * nv.phi_d(r2, p["h"], D)
        skipped = np.where(d > d_fast, pair, 0.0).sum(1)
        assert np.max(p["theta"] * skipped / lam_ex) > 1e-6


def test_exp2_simulated_delays_follow_the_mixture():
    omega, omega2, w = 4.0, 0.3, 0.6
    _, t, par = hk.simulate(mu=0.5, theta=0.6, omega=omega, h=0.1, region=4.0, duration=400.0, seed=3,
                            return_parents=True, kernel="exp2", omega2=omega2, w=w)
    child = par >= 0
    d = t[child] - t[par[child]]
    keep = (t[par[child]] < 400.0 - 60.0) & (d < 60.0)  # delays are cut by the end: condition on d < 60
    d = d[keep]
    cdf60 = w * (1 - math.exp(-omega * 60)) + (1 - w) * (1 - math.exp(-omega2 * 60))
    mix = lambda v: nv.temporal_cdf(v, omega, omega2, w) / cdf60  # noqa: E731
    mean = w / omega + (1 - w) / omega2
    expo = lambda v: (1 - np.exp(-v / mean)) / (1 - math.exp(-60 / mean))  # noqa: E731
    assert d.size > 1000
    assert stats.kstest(d, mix).pvalue > 0.01
    assert stats.kstest(d, expo).pvalue < 1e-6
    # w = 1 draws the exponential delays of kernel="exponential" (one more uniform per child aside)
    _, t1, p1 = hk.simulate(mu=0.5, theta=0.6, omega=omega, h=0.1, region=4.0, duration=400.0, seed=3,
                            return_parents=True, kernel="exp2", omega2=omega2, w=1.0)
    d1 = t1[p1 >= 0] - t1[p1[p1 >= 0]]
    assert np.mean(d1) == pytest.approx(1 / omega, rel=0.1)


def test_exp2_posterior_predictive_simulations_use_the_mixture():
    """simulate_from_fit (the posterior predictive's simulator) draws exp2 delays: with all weight on a
    rate of 1e-9 per hour the children fall after the window, with the fast exponential they do not."""
    from hphawkes_py.hawkes.predictive import simulate_from_fit

    x, t = hk.simulate(mu=0.3, theta=0.5, omega=3.0, h=0.2, region=3.0, duration=40.0, seed=1)
    p = dict(mu0=0.8, tau_x=1.0, tau_t=10.0, theta=0.9, omega=50.0, h=0.2)
    win = (t.min(), t.max())
    n_exp = simulate_from_fit(p, x, t, win, np.random.default_rng(4))[1].size
    n_slow = simulate_from_fit(dict(p, omega2=1e-9, w=0.0), x, t, win, np.random.default_rng(4))[1].size
    n_fast = simulate_from_fit(dict(p, omega2=1e-9, w=1.0), x, t, win, np.random.default_rng(4))[1].size
    assert n_slow < 0.4 * n_exp and n_fast > 0.6 * n_exp


def test_exp2_residuals_against_all_pairs():
    x, t = hk.simulate(mu=0.3, theta=0.5, omega=3.0, h=0.2, region=3.0, duration=40.0, seed=1, kernel="exp2",
                       omega2=0.2, w=0.6)
    p = dict(mu0=0.5, tau_x=1.0, tau_t=10.0, theta=0.4, omega=2.0, h=0.25, omega2=0.15, w=0.7)
    ts = np.sort(t)
    lam = rescaled_times(ts, hk.HawkesParams(**p), (ts[0], ts[-1]))
    d = ts[:, None] - ts[None, :]
    tr = np.where(d > 0, nv.temporal_cdf(np.where(d > 0, d, 0.0), p["omega"], p["omega2"], p["w"]), 0.0).sum(1)
    bg = (ndtr(d / p["tau_t"]) - ndtr((ts[0] - ts[None, :]) / p["tau_t"])).sum(1)
    np.testing.assert_allclose(lam, p["mu0"] * bg + p["theta"] * tr, rtol=1e-11)
    res = hk.residuals(p, x, t, kernel="exp2")
    assert res.total == pytest.approx(nv.integral(t, p["mu0"], p["tau_t"], p["theta"], p["omega"],
                                                  omega2=p["omega2"], w=p["w"]), rel=1e-12)


def test_exp2_mcmc_moves_omega2_and_w_consistently():
    """Every move (omega2 and w included) leaves the cached log L equal to a fresh exact evaluation;
    the draws respect w in [0, 1] and omega2 < omega; the posterior carries the kernel downstream."""
    x, t = hk.simulate(mu=0.3, theta=0.5, omega=3.0, h=0.2, region=3.0, duration=30.0, seed=2, kernel="exp2",
                       omega2=0.2, w=0.6)
    init = dict(START, omega=2.0, omega2=0.3, w=0.9)
    post = _mcmc_debug(x, t, n_iter=25, burn_in=5, chains=1, fixed=FIXED, init=init, seed=3, progress=False,
                       kernel="exp2", **KW)
    assert post.sampled == ("h", "omega", "theta", "mu0", "omega2", "w")
    moved = {name for name, acc, _, _ in post._debug[0] if acc}
    assert {"omega2", "w"} <= moved
    for name, acc, ll, fresh in post._debug[0]:
        assert abs(ll - fresh) <= 1e-10 * abs(fresh), name
    assert np.all((post.draws["w"] >= 0) & (post.draws["w"] <= 1))
    assert np.all(post.draws["omega2"] < post.draws["omega"])
    assert post.kernel == "exp2" and post.to_dict()["kernel"] == "exp2" and "kernel='exp2'" in repr(post)
    assert post.to_dict()["prior_scales"]["w"] is None and post.prior_scales["omega2"] == 10.0
    assert set(post.to_frame().columns) >= {"omega2", "w"}
    se = hk.self_excitation(post, n_draws=1, seed=0, progress=False)
    k = int(se.attrs["draw_indices"][0])
    p = {n: float(post.draws[n].reshape(-1)[k]) for n in post.param_names}
    np.testing.assert_allclose(se["mean"], hk.self_excitation_probabilities(x, t, p, kernel="exp2", **KW),
                               rtol=1e-12)
    fc = hk.forecast_intensity(post, x, t, [t.max() + 0.5], x[:5], n_draws=1, seed=0, progress=False, **KW)
    _, flat = post.select_draws(1, seed=0)  # the draw the forecast used
    q = {n: float(v[0]) for n, v in flat.items()}
    u = t.max() + 0.5
    r2 = ((x[:5, None, :] - x[None, :, :]) ** 2).sum(-1)
    lam_r = (q["mu0"] * (nv.phi_d(r2, q["tau_x"], 2) * nv.phi_d((u - t) ** 2, q["tau_t"], 1)).sum(1)
             + q["theta"] * (nv.temporal_kernel(u - t, q["omega"], q["omega2"], q["w"]) * nv.phi_d(r2, q["h"], 2)).sum(1))
    np.testing.assert_allclose(fc.mean[0], lam_r, rtol=1e-10)
    # fixing omega2 and w samples the rest; fixed w = 0 is allowed (the omega2 exponential alone)
    post0 = hk.mcmc(x, t, n_iter=4, burn_in=1, chains=1, fixed=dict(FIXED, omega2=0.2, w=0.0), init=START, seed=3,
                    progress=False, kernel="exp2", **KW)
    assert post0.sampled == ("h", "omega", "theta", "mu0") and np.all(post0.draws["w"] == 0.0)


def test_exp2_priors_are_sampled_correctly(monkeypatch):
    """With a flat likelihood the chain recovers the priors of the new parameters: w uniform on [0, 1]
    (proposals above 1 rejected, the truncated proposal's Hastings term), omega2 half-normal(10); with
    omega and omega2 both sampled, the product prior restricted to omega2 < omega (then
    P(omega2 < v | omega) = F(v) / F(omega), F the half-normal cdf, so F(omega2) / F(omega) is uniform)."""
    from hphawkes_py.hawkes.engine import EngineFactory

    x, t = hk.simulate(mu=0.5, theta=0.3, omega=2.0, h=0.3, region=2.0, duration=5.0, seed=3)
    monkeypatch.setattr(EngineFactory, "build", lambda self, **k: nv.FlatEngine())
    fixed = dict(FIXED, h=0.3, theta=0.5, mu0=0.5)
    post = hk.mcmc(x, t, n_iter=30_000, burn_in=500, chains=1, sample=("omega2", "w"), fixed=dict(fixed, omega=1.0),
                   seed=11, progress=False, kernel="exp2", **KW)
    w, o2 = post.draws["w"].ravel()[::20], post.draws["omega2"].ravel()[::20]
    assert stats.kstest(w, "uniform").pvalue > 1e-3
    assert stats.kstest(o2, stats.halfnorm(scale=10.0).cdf).pvalue > 1e-3
    post = hk.mcmc(x, t, n_iter=30_000, burn_in=500, chains=1, sample=("omega", "omega2"), fixed=dict(fixed, w=0.5),
                   seed=12, progress=False, kernel="exp2", **KW)
    om, o2 = post.draws["omega"].ravel()[::20], post.draws["omega2"].ravel()[::20]
    assert np.all(o2 < om)
    F = stats.halfnorm(scale=10.0).cdf
    assert stats.kstest(F(o2) / F(om), "uniform").pvalue > 1e-3
    # the omega marginal of that prior has density 2 f(omega) F(omega): F(omega)^2 is uniform
    assert stats.kstest(F(om) ** 2, "uniform").pvalue > 1e-3


@pytest.mark.slow
def test_exp2_parameters_recovered_by_mcmc():
    """Simulation recovery (N ~ 1,450, truth theta 0.5, omega 4, omega2 0.3, w 0.6, h 0.2; tau_x, tau_t
    fixed) by a short chain from a distant start. The compensator is taken over the simulation square
    (spatial_window): with the whole plane the kernel-smoothed background loses mass at the edges and
    the slow component soaks it up (theta ~ 0.85 even on exponential data), a misspecification of the
    model, not of the kernel."""
    from hphawkes_py.kde import Window

    x, t = hk.simulate(mu=0.2, theta=0.5, omega=4.0, h=0.2, region=5.0, duration=150.0, seed=5, kernel="exp2",
                       omega2=0.3, w=0.6)
    inside = np.all((x > 0.0) & (x < 5.0), axis=1)  # offspring displaced out of the square are unobserved
    x, t = x[inside], t[inside]
    win = Window.rectangle(0.0, 5.0, 0.0, 5.0, 0.5)
    post = hk.mcmc(x, t, n_iter=400, burn_in=150, chains=1, fixed={"tau_x": 1.0, "tau_t": 30.0}, kernel="exp2",
                   init={"theta": 0.3, "omega": 2.0, "h": 0.3, "mu0": 0.5, "omega2": 0.1, "w": 0.5}, seed=1,
                   progress=False, spatial_window=win, **KW)
    m = {n: float(np.mean(post.draws[n])) for n in post.sampled}
    assert abs(m["theta"] - 0.5) < 0.1 and abs(m["h"] - 0.2) < 0.03, m
    assert 3.0 < m["omega"] < 6.0 and 0.15 < m["omega2"] < 0.5 and abs(m["w"] - 0.6) < 0.15, m
    q = {n: np.quantile(post.draws[n], [0.005, 0.995]) for n in ("omega", "omega2", "w")}
    truth = {"omega": 4.0, "omega2": 0.3, "w": 0.6}
    assert all(q[n][0] < truth[n] < q[n][1] for n in truth), q


@pytest.mark.parametrize("call, exc, match", [
    (lambda x, t: hk.log_likelihood(x, t, dict(P2, omega2=0.1, w=1.5), kernel="exp2", **KW), ValueError,
     r"w must be in \[0, 1\], got 1.5"),
    (lambda x, t: hk.log_likelihood(x, t, dict(P2, omega2=0.1, w=-0.1), kernel="exp2", **KW), ValueError,
     r"w must be in \[0, 1\]"),
    (lambda x, t: hk.log_likelihood(x, t, dict(P2, omega2=0.0, w=0.5), kernel="exp2", **KW), ValueError,
     "omega2 must be > 0"),
    (lambda x, t: hk.log_likelihood(x, t, dict(P2, omega2=-2.0, w=0.5), kernel="exp2", **KW), ValueError,
     "omega2 must be > 0"),
    (lambda x, t: hk.log_likelihood(x, t, dict(P2, omega=0.0, omega2=1.0, w=0.5), kernel="exp2", **KW),
     ValueError, "omega must be > 0"),
    (lambda x, t: hk.log_likelihood(x, t, dict(P2, omega2=float("nan"), w=0.5), kernel="exp2", **KW), ValueError,
     "omega2 must be finite"),
    (lambda x, t: hk.log_likelihood(x, t, dict(P2, omega2=0.1, w=True), kernel="exp2", **KW), TypeError,
     "w must be a real number"),
    (lambda x, t: hk.log_likelihood(x, t, P2, kernel="exp2", **KW), ValueError,
     r"params must give \['omega2', 'w'\] for kernel='exp2'"),
    (lambda x, t: hk.log_likelihood(x, t, dict(P2, w=0.5), kernel="exp2", **KW), ValueError,
     r"params must give \['omega2'\]"),
    (lambda x, t: hk.log_likelihood(x, t, dict(P2, omega2=0.1, w=0.5), **KW), ValueError,
     "only kernel='exp2' uses"),
    (lambda x, t: hk.log_likelihood(x, t, dict(P2, omega2=1e60, w=0.5), kernel="exp2", **KW), ValueError,
     "omega2 = 1e.60 is outside the range"),
    (lambda x, t: hk.log_likelihood(x, t, dict(P2, omega2=0.1, w=0.5), kernel=("exp2", 2.0), **KW), ValueError,
     "only 'power-law' takes an exponent"),
    (lambda x, t: hk.simulate(mu=0.1, theta=0.3, omega=1.0, h=0.2, region=3.0, duration=5.0, kernel="exp2",
                              omega2=0.1, w=1.2), ValueError, r"w must be in \[0, 1\]"),
    (lambda x, t: hk.simulate(mu=0.1, theta=0.3, omega=1.0, h=0.2, region=3.0, duration=5.0, kernel="exp2",
                              omega2=-1.0, w=0.5), ValueError, "omega2 must be > 0"),
    (lambda x, t: hk.simulate(mu=0.1, theta=0.3, omega=1.0, h=0.2, region=3.0, duration=5.0, kernel="exp2"),
     ValueError, "kernel='exp2' needs omega2"),
    (lambda x, t: hk.simulate(mu=0.1, theta=0.3, omega=1.0, h=0.2, region=3.0, duration=5.0, omega2=0.1, w=0.5),
     ValueError, "omega2 and w are parameters of kernel='exp2' only"),
    (lambda x, t: hk.mcmc(x, t, n_iter=3, burn_in=1, chains=1, fixed=dict(FIXED, w=1.5), progress=False,
                          kernel="exp2", **KW), ValueError, r"fixed\['w'\] must be in \[0, 1\]"),
    (lambda x, t: hk.mcmc(x, t, n_iter=3, burn_in=1, chains=1, fixed=FIXED, init={"omega2": -1.0}, progress=False,
                          kernel="exp2", **KW), ValueError, r"init\['omega2'\] must be > 0"),
    (lambda x, t: hk.mcmc(x, t, n_iter=3, burn_in=1, chains=1, fixed=FIXED, init={"w": 0.0}, progress=False,
                          kernel="exp2", **KW), ValueError, r"init\['w'\] must be in \(0, 1\] to be sampled"),
    (lambda x, t: hk.mcmc(x, t, n_iter=3, burn_in=1, chains=1, fixed=FIXED, init={"omega": 1.0, "omega2": 2.0},
                          progress=False, kernel="exp2", **KW), ValueError, "omega2 must be < omega"),
    (lambda x, t: hk.mcmc(x, t, n_iter=3, burn_in=1, chains=1, fixed=FIXED, sample=("h", "omega", "theta", "mu0",
                          "w"), progress=False, **KW), ValueError, "omega2 and w are parameters of kernel='exp2'"),
    (lambda x, t: hk.posterior_mode(x, t, fixed=FIXED, priors={"w": -1.0}, kernel="exp2", **KW), ValueError,
     r"priors\['w'\] must be > 0"),
    (lambda x, t: make_engine(x, t, kernel="exp2").log_likelihood(0.5, 1, 10, 0.4, 1.0, 0.2, omega2=1.0, w=2.0),
     ValueError, r"w must be in \[0, 1\]"),
])
def test_exp2_bad_input(call, exc, match):
    x, t = hk.simulate(mu=0.3, theta=0.5, omega=2.0, h=0.2, region=3.0, duration=10.0, seed=1)
    with pytest.raises(exc, match=match):
        call(x, t)


def test_exp2_cli(tmp_path, capsys):
    import pandas as pd

    from hphawkes_py.cli import main as cli_main

    csv = tmp_path / "e2.csv"
    sim = ["--mu", "0.3", "--theta", "0.5", "--omega", "3", "--h", "0.2", "--region", "3", "--duration", "25",
           "--seed", "2", "--kernel", "exp2"]
    assert cli_main(["hawkes", "simulate", *sim, "--omega2", "0.2", "--weight", "0.6", "--out", str(csv)]) == 0
    df = pd.read_csv(csv)
    x, t = df[["x_km", "y_km"]].to_numpy(), df["t_hours"].to_numpy()
    x2, t2 = hk.simulate(mu=0.3, theta=0.5, omega=3.0, h=0.2, region=3.0, duration=25.0, seed=2, kernel="exp2",
                         omega2=0.2, w=0.6)
    np.testing.assert_allclose(t, t2)
    pargs = ["--mu0", "0.5", "--tau-x", "1", "--tau-t", "10", "--theta", "0.4", "--omega", "1.5", "--h", "0.25"]
    capsys.readouterr()
    assert cli_main(["hawkes", "loglik", str(csv), "--kernel", "exp2", "--omega2", "0.1", "--weight", "0.7",
                     "--backend", "cpu"] + pargs) == 0
    p = dict(mu0=0.5, tau_x=1.0, tau_t=10.0, theta=0.4, omega=1.5, h=0.25, omega2=0.1, w=0.7)
    assert float(capsys.readouterr().out) == pytest.approx(hk.log_likelihood(x, t, p, kernel="exp2", **KW), rel=1e-12)
    assert cli_main(["hawkes", "loglik", str(csv), "--kernel", "exp2", "--omega2", "0.1", "--weight", "1.5",
                     "--backend", "cpu"] + pargs) == 2
    assert "w must be in [0, 1]" in capsys.readouterr().err
    assert cli_main(["hawkes", "loglik", str(csv), "--kernel", "exp2", "--backend", "cpu"] + pargs) == 2
    assert "must give ['omega2', 'w']" in capsys.readouterr().err
    assert cli_main(["hawkes", "mcmc", str(csv), "--kernel", "exp2", "--n-iter", "3", "--burn-in", "1", "--chains",
                     "1", "--tau-x", "1", "--tau-t", "10", "--weight", "0.5", "--backend", "cpu", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "omega2" in out and "acceptance rates" in out and "'w'" not in out.split("acceptance rates:")[1]
