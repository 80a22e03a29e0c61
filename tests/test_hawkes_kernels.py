"""Temporal triggering kernels (issue 14, part 3): the power-law (Omori-Utsu) kernel through the
public entry points -- simulate, log_likelihood, posterior_mode (recovery), mcmc and the tools
built on them. The engines' power-law pair sums are tested against NumPy in test_hawkes_engine.py."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from scipy.special import ndtr

import hphawkes_py.hawkes as hk
from hphawkes_py.hawkes.residuals import rescaled_times

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
