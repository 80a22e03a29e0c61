"""Public Hawkes API: validation, caller's order, NumPy reference, simulation, CLI."""
from __future__ import annotations

import math

import numpy as np
import pytest
import naive_hawkes as nh

import hphawkes_py.hawkes as hk
from hphawkes_py.cli import main as cli_main

THREADS = 1  # small data: one thread avoids parallel start-up cost on a shared 2-core machine


def naive_loglik(x, t, mu0, tau_x, tau_t, theta, omega, h, window=None):
    """(log L, pi_n) from the shared all-pairs NumPy reference (tests/naive_hawkes.py)."""
    p = dict(mu0=mu0, tau_x=tau_x, tau_t=tau_t, theta=theta, omega=omega, h=h)
    return nh.log_likelihood(x, t, **p, window=window), nh.self_excitation(x, t, **p)


@pytest.fixture(scope="module")
def data2d():
    rng = np.random.default_rng(7)
    n = 150
    x = rng.uniform(0, 5, (n, 2))
    t = np.round(rng.uniform(0, 50, n), 1)  # rounding makes tied times
    t[5] = t[6]
    return x, t


PARAMS = hk.HawkesParams(mu0=0.6, tau_x=1.5, tau_t=8.0, theta=0.4, omega=1.3, h=0.3)


# ----------------------------------------------------------------------------- validation
def test_params_validation():
    with pytest.raises(ValueError, match="mu0"):
        hk.HawkesParams(mu0=0.0, tau_x=1, tau_t=1, theta=1, omega=1, h=1)
    with pytest.raises(ValueError, match="h"):
        hk.HawkesParams(mu0=1, tau_x=1, tau_t=1, theta=1, omega=1, h=-2)
    with pytest.raises(ValueError, match="omega"):
        hk.HawkesParams(mu0=1, tau_x=1, tau_t=1, theta=1, omega=float("nan"), h=1)
    p = hk.HawkesParams(mu0=1, tau_x=2, tau_t=3, theta=0.5, omega=4, h=0.1)
    with pytest.raises(dataclasses_frozen_error()):
        p.mu0 = 2.0
    assert p.to_dict()["tau_t"] == 3.0


def dataclasses_frozen_error():
    import dataclasses

    return dataclasses.FrozenInstanceError


@pytest.mark.parametrize(
    "x, t, match",
    [
        (np.array([[0.0, np.nan], [1, 1], [2, 2]]), [0, 1, 2], "x"),
        (np.zeros((3, 2)), [0, np.inf, 2], "t"),
        (np.zeros((3, 2)), [0, 1], "same length"),
        (np.zeros((3, 4)), [0, 1, 2], "D = 1, 2 or 3"),
        (np.zeros((1, 2)), [0.0], "at least 2"),
    ],
)
def test_bad_data(x, t, match):
    with pytest.raises(ValueError, match=match):
        hk.log_likelihood(x, t, PARAMS, backend="cpu", threads=THREADS)
    with pytest.raises(ValueError, match=match):
        hk.mcmc(x, t, n_iter=10, burn_in=1, fixed={"tau_x": 1, "tau_t": 1}, progress=False)


def test_bad_window(data2d):
    x, t = data2d
    with pytest.raises(ValueError, match="window"):
        hk.log_likelihood(x, t, PARAMS, window=(10.0, 20.0), backend="cpu")
    with pytest.raises(ValueError, match="window"):
        hk.log_likelihood(x, t, PARAMS, window=(60.0, 20.0), backend="cpu")


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_iter": 10, "burn_in": 10}, "burn_in"),
        ({"sample": ("h", "bogus")}, "sample"),
        ({"fixed": {"tau_x": 1.0, "tau_t": 1.0, "nope": 1.0}}, "fixed"),
        ({"sample": ("h", "theta"), "fixed": {"tau_x": 1.0, "tau_t": 1.0, "h": 1.0, "omega": 1, "mu0": 1}},
         "both sampled"),
        ({"fixed": {"tau_x": 1.0}}, "tau_t"),
        ({"fixed": {"tau_x": -1.0, "tau_t": 1.0}}, "tau_x"),
        ({"priors": {"theta": 0.0}}, "priors"),
        ({"priors": {"zeta": 1.0}}, "priors"),
        ({"init": {"h": -1.0}}, "init"),
    ],
)
def test_mcmc_bad_arguments(data2d, kwargs, match):
    x, t = data2d
    args = {"n_iter": 10, "burn_in": 2, "fixed": {"tau_x": 1.0, "tau_t": 1.0}, "progress": False}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        hk.mcmc(x, t, **args)


# ----------------------------------------------------------------------------- reference + order
@pytest.mark.parametrize("D", [1, 2, 3])
def test_loglik_and_pi_match_reference(D):
    rng = np.random.default_rng(D)
    n = 120
    x = rng.uniform(0, 4, (n, D))
    t = np.round(rng.uniform(0, 30, n), 0)  # many ties
    for exact in (False, True):
        ll = hk.log_likelihood(x, t, PARAMS, exact=exact, backend="cpu", threads=THREADS)
        ref, pi_ref = naive_loglik(x, t, **PARAMS.to_dict())
        assert ll == pytest.approx(ref, rel=1e-10)
    # exact: every pi_n to rounding, however small; windowed: within the windows' bound (a pi_n made only of
    # terms below the bound's per-term share is 0 there)
    pi_ex = hk.self_excitation_probabilities(x, t, PARAMS, exact=True, backend="cpu", threads=THREADS)
    np.testing.assert_allclose(pi_ex, pi_ref, rtol=1e-9, atol=1e-300)
    pi = hk.self_excitation_probabilities(x, t, PARAMS, backend="cpu", threads=THREADS)
    np.testing.assert_allclose(pi, pi_ref, rtol=1e-9, atol=1e-13)
    assert np.all((pi >= 0) & (pi <= 1))


def test_window_reference(data2d):
    x, t = data2d
    ll = hk.log_likelihood(x, t, PARAMS, window=(-5.0, 60.0), backend="cpu", threads=THREADS)
    assert ll == pytest.approx(naive_loglik(x, t, **PARAMS.to_dict(), window=(-5.0, 60.0))[0], rel=1e-10)


def test_unsorted_input_gives_callers_order(data2d):
    x, t = data2d
    perm = np.random.default_rng(3).permutation(len(t))
    xs, ts = x[perm], t[perm]
    ll_sorted = hk.log_likelihood(x, t, PARAMS, backend="cpu", threads=THREADS)
    ll_perm = hk.log_likelihood(xs, ts, PARAMS.to_dict(), backend="cpu", threads=THREADS)
    assert ll_perm == pytest.approx(ll_sorted, rel=1e-12)
    pi = hk.self_excitation_probabilities(x, t, PARAMS, backend="cpu", threads=THREADS)
    pi_perm = hk.self_excitation_probabilities(xs, ts, PARAMS, backend="cpu", threads=THREADS)
    np.testing.assert_allclose(pi_perm, pi[perm], rtol=1e-12, atol=1e-300)
    # and against the reference computed directly on the caller's (unsorted) order (exact: to rounding;
    # windowed: within the windows' bound)
    ref_perm = naive_loglik(xs, ts, **PARAMS.to_dict())[1]
    np.testing.assert_allclose(pi_perm, ref_perm, rtol=1e-9, atol=1e-13)
    pi_perm_ex = hk.self_excitation_probabilities(xs, ts, PARAMS, exact=True, backend="cpu", threads=THREADS)
    np.testing.assert_allclose(pi_perm_ex, ref_perm, rtol=1e-9, atol=1e-300)


def test_one_dimensional_x_accepted():
    rng = np.random.default_rng(11)
    x = rng.uniform(0, 3, 40)
    t = rng.uniform(0, 10, 40)
    a = hk.log_likelihood(x, t, PARAMS, backend="cpu", threads=THREADS)
    b = hk.log_likelihood(x[:, None], t, PARAMS, backend="cpu", threads=THREADS)
    assert a == b == pytest.approx(naive_loglik(x, t, **PARAMS.to_dict())[0], rel=1e-10)


# ----------------------------------------------------------------------------- simulation
def test_simulate_counts_match_theory():
    """E[N] = mu |A| T / (1 - theta) up to the children lost after T (1/omega << T here)."""
    mu, L, T, theta, omega = 0.02, 10.0, 100.0, 0.6, 20.0
    counts, triggered = [], []
    for seed in range(40):
        x, t, parent = hk.simulate(mu=mu, theta=theta, omega=omega, h=0.2, region=L, duration=T, seed=seed,
                                   return_parents=True)
        assert np.all(np.diff(t) >= 0) and np.all((t >= 0) & (t <= T))
        assert np.all(parent < np.arange(len(t)))  # a parent precedes its child
        counts.append(len(t))
        triggered.append((parent >= 0).mean())
    background = mu * L * L * T
    expected = background / (1 - theta)
    # Var(N) of a Poisson cluster process: background * E[S^2], S the cluster size (Borel-type);
    # E[S^2] = 1 / (1 - theta)^3 for Poisson offspring.
    se = math.sqrt(background / (1 - theta) ** 3 / len(counts))
    assert abs(np.mean(counts) - expected) < 3.5 * se
    assert np.mean(triggered) == pytest.approx(theta, abs=0.03)


def test_simulate_displacements_and_delays():
    x, t, parent = hk.simulate(mu=0.05, theta=0.5, omega=4.0, h=0.3, region=[[0, 20], [0, 20]], duration=200,
                               seed=5, return_parents=True)
    kids = np.flatnonzero(parent >= 0)
    delay = t[kids] - t[parent[kids]]
    disp = x[kids] - x[parent[kids]]
    assert delay.mean() == pytest.approx(1 / 4.0, rel=0.1)
    assert disp.std(axis=0) == pytest.approx([0.3, 0.3], rel=0.1)


def test_simulate_validation():
    with pytest.raises(ValueError, match="theta"):
        hk.simulate(mu=1, theta=1.2, omega=1, h=1, region=1, duration=1)
    with pytest.raises(ValueError, match="region"):
        hk.simulate(mu=1, theta=0.5, omega=1, h=1, region=[[0, 1]], duration=1, dim=2)
    with pytest.raises(ValueError, match="dim"):
        hk.simulate(mu=1, theta=0.5, omega=1, h=1, region=1, duration=1, dim=4)
    a = hk.simulate(mu=1, theta=0.5, omega=1, h=1, region=2, duration=5, dim=3, seed=1)
    b = hk.simulate(mu=1, theta=0.5, omega=1, h=1, region=2, duration=5, dim=3, seed=1)
    np.testing.assert_array_equal(a[0], b[0])
    assert a[0].shape[1] == 3


# ----------------------------------------------------------------------------- CLI
def test_cli_simulate_loglik_probabilities(tmp_path, capsys):
    csv = tmp_path / "events.csv"
    assert cli_main(["hawkes", "simulate", "--mu", "0.05", "--theta", "0.4", "--omega", "3", "--h", "0.2",
                     "--region", "5", "--duration", "40", "--seed", "1", "--out", str(csv)]) == 0
    import pandas as pd

    df = pd.read_csv(csv)
    assert list(df.columns) == ["x_km", "y_km", "t_hours"] and len(df) > 10
    capsys.readouterr()
    pargs = ["--mu0", "0.6", "--tau-x", "1.5", "--tau-t", "8", "--theta", "0.4", "--omega", "1.3", "--h", "0.3",
             "--backend", "cpu", "--threads", "1"]
    assert cli_main(["hawkes", "loglik", str(csv)] + pargs) == 0
    value = float(capsys.readouterr().out.strip())
    ref = naive_loglik(df[["x_km", "y_km"]].to_numpy(), df["t_hours"].to_numpy(), **PARAMS.to_dict())[0]
    assert value == pytest.approx(ref, rel=1e-10)
    out = tmp_path / "pi.csv"
    assert cli_main(["hawkes", "probabilities", str(csv), "--out", str(out)] + pargs) == 0
    pi = pd.read_csv(out)["self_excitation_probability"].to_numpy()
    np.testing.assert_allclose(pi, naive_loglik(df[["x_km", "y_km"]].to_numpy(), df["t_hours"].to_numpy(),
                                                **PARAMS.to_dict())[1], rtol=1e-8, atol=1e-300)
    # a bad column name is a clean error (exit code 2), not a traceback
    assert cli_main(["hawkes", "loglik", str(csv), "--t", "time"] + pargs) == 2


def test_cli_reproduce_registered(capsys):
    with pytest.raises(SystemExit) as exc:
        cli_main(["reproduce", "dc-gunshots", "--help"])
    assert exc.value.code == 0
    assert "--full" in capsys.readouterr().out


def test_reproduce_dc_pipeline_smoke(tmp_path):
    """The main job's plumbing on the full DC data with a tiny chain (the statistics are checked elsewhere)."""
    import json

    import pandas as pd

    from hphawkes_py.cli.hawkes_reproduce import format_table, run_dc_gunshots

    res = run_dc_gunshots(tmp_path / "dc", mode="quick", start="hpHawkes", chains=1, n_iter=3, burn_in=1, n_draws=2,
                          backend="cpu", threads=1, progress=False, log=lambda *a: None)
    files = {k: tmp_path / "dc" / p.split("/")[-1] for k, p in res["files"].items()}
    for name in ("posterior_summary", "draws", "trace", "density", "self_excitation", "self_excitation_map",
                 "summary"):
        assert files[name].exists() and files[name].stat().st_size > 100, name
    table = pd.read_csv(files["posterior_summary"], index_col=0)
    assert {"h", "omega", "theta", "mu0", "h_metres", "trigger_delay_minutes"} <= set(table.index)
    assert table.loc["h_metres", "mean"] == pytest.approx(1000 * table.loc["h", "mean"], rel=1e-12)
    pe = pd.read_csv(files["self_excitation"])
    assert len(pe) == 54_582 and list(pe.columns) == ["x_km", "y_km", "t_hours", "mean", "sd", "q2.5", "q97.5"]
    assert pe["mean"].between(0, 1).all()
    summary = json.loads(files["summary"].read_text())
    assert summary["events"] == 54_582 and summary["fixed"] == {"tau_x_km": 1.6, "tau_t_hours": 336.0}
    assert "h_metres" in format_table(res)
