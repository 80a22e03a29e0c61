"""Bad and extreme inputs on every public Hawkes entry point (issue 18): each is refused before any
work with an error naming the argument, never silently coerced. ``test_every_entry_point_is_walked``
fails when a new public function is added without cases here."""
from __future__ import annotations

import datetime
import inspect

import numpy as np
import pandas as pd
import pytest

import hphawkes_py.hawkes as hk
from hphawkes_py.cli import main as cli_main

FIXED = {"tau_x": 1.0, "tau_t": 10.0}
P = dict(mu0=0.5, tau_x=1.0, tau_t=10.0, theta=0.3, omega=1.0, h=0.3)
KW = dict(backend="cpu", threads=1)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 3, (40, 2))
    t = np.sort(rng.uniform(0, 50, 40))
    return x, t


@pytest.fixture(scope="module")
def post(data):
    x, t = data
    return hk.mcmc(x, t, n_iter=6, burn_in=2, chains=1, fixed=FIXED, seed=1, progress=False, **KW)


# the entry points walked below; a public callable missing here fails the first test
WALKED = {"HawkesParams", "HawkesPosterior", "log_likelihood", "self_excitation_probabilities", "simulate", "mcmc",
          "posterior_mode", "self_excitation", "self_excitation_draws", "residuals", "HawkesResiduals", "super_thinned_residuals",
          "SuperThinnedResiduals", "forecast_intensity",
          "HawkesForecast", "posterior_predictive", "PosteriorPredictive", "forecast_score", "HawkesForecastScore",
          # refusals in tests/test_hawkes_gradient.py and tests/test_hawkes_nuts.py
          "log_likelihood_gradient", "mcmc_nuts",
          # refusals in tests/test_hawkes_latent.py
          "mcmc_latent", "latent_gradient", "LatentPosterior"}


def test_every_entry_point_is_walked():
    public = {n for n in hk.__all__ if callable(getattr(hk, n)) or inspect.isclass(getattr(hk, n))}
    assert public <= WALKED, f"public Hawkes entry points without bad-input cases: {sorted(public - WALKED)}"


# ----------------------------------------------------------------------------- data: x, t, window
def _bad_data(data):
    x, t = data
    ts = pd.Series(pd.date_range("2020-01-01", periods=len(t), freq="h"))
    return [
        ("datetime Series", x, ts, TypeError, r"t must hold real numbers, got datetimes.*Timedelta\(hours=1\)"),
        ("datetime64", x, ts.to_numpy(), TypeError, "t must hold real numbers, got datetimes"),
        ("Timestamps", x, list(ts), TypeError, "t must hold real numbers, got datetimes"),
        ("timedelta", x, ts - ts[0], TypeError, "t must hold real numbers, got datetimes"),
        ("python datetimes", x, [datetime.datetime(2020, 1, 1 + i % 28) for i in range(len(t))], TypeError,
         "t must hold real numbers"),
        ("bool times", x, t > 10, TypeError, "t must hold real numbers, got booleans"),
        ("bool coords", x > 1, t, TypeError, "x must hold real numbers, got booleans"),
        ("complex coords", x + 1j, t, TypeError, "x must hold real numbers, got complex"),
        ("complex times", x, t + 0j, TypeError, "t must hold real numbers, got complex"),
        ("object bools", x, np.array([True] + [1.0] * (len(t) - 1), dtype=object), TypeError, "booleans"),
        ("NaN", np.where(np.arange(len(t))[:, None] == 3, np.nan, x), t, ValueError, "x must be finite"),
        ("4-D", np.zeros((len(t), 4)), t, ValueError, "D = 1, 2 or 3"),
        ("length", x[:-1], t, ValueError, "same length"),
        ("one event", x[:1], t[:1], ValueError, "at least 2 events"),
        ("strings", x, ["a"] * len(t), TypeError, "t must be an array of numbers"),
    ]


@pytest.mark.parametrize("case", range(15))
def test_bad_data_refused_everywhere(data, case):
    name, x, t, exc, match = _bad_data(data)[case]
    calls = [
        lambda: hk.log_likelihood(x, t, P, **KW),
        lambda: hk.self_excitation_probabilities(x, t, P, **KW),
        lambda: hk.mcmc(x, t, n_iter=3, burn_in=1, chains=1, fixed=FIXED, progress=False, **KW),
        lambda: hk.posterior_mode(x, t, fixed=FIXED, **KW),
        lambda: hk.residuals(P, x, t),
    ]
    for call in calls:
        with pytest.raises(exc, match=match):
            call()


def test_callers_arrays_are_not_aliased_or_frozen(data):
    x, t = data
    x2, t2 = x.copy(), t[::-1].copy()
    hk.log_likelihood(x2, t2, P, **KW)
    post = hk.mcmc(x2, t2, n_iter=3, burn_in=1, chains=1, fixed=FIXED, progress=False, seed=0, **KW)
    assert x2.flags.writeable and t2.flags.writeable
    x2[:] = 0.0
    t2[:] = 0.0  # the posterior keeps its own copy
    assert post.engine_factory.data.t_sorted.max() > 0
    assert not np.shares_memory(post.engine_factory.data.x_sorted, x2)


@pytest.mark.parametrize("window, match", [((True, 60.0), "window must hold real numbers"),
                                           ((0.0, np.inf), "finite"), ((20.0, 30.0), "contain every event"),
                                           ("ab", "window")])
def test_bad_window(data, window, match):
    x, t = data
    with pytest.raises((ValueError, TypeError), match=match):
        hk.log_likelihood(x, t, P, window=window, **KW)


# ----------------------------------------------------------------------------- parameters
@pytest.mark.parametrize("name", ["h", "tau_x", "tau_t", "mu0", "theta", "omega"])
@pytest.mark.parametrize("value", [1e-300, 1e300])
def test_extreme_parameters_refused_with_the_range(data, name, value):
    """No math domain / overflow error from deep inside: the range is named instead."""
    x, t = data
    p = dict(P, **{name: value})
    for call in (lambda: hk.log_likelihood(x, t, p, **KW), lambda: hk.self_excitation_probabilities(x, t, p, **KW)):
        with pytest.raises(ValueError, match=rf"{name} = .* outside the range \[1e-50, 1e\+50\]"):
            call()
    with pytest.raises(ValueError, match=rf"{name} = .* outside the range \[1e-08, 1e\+08\]"):
        hk.log_likelihood(x, t, p, dtype=np.float32, **KW)
    fixed = {**FIXED, "h": 0.3, "omega": 1.0, "theta": 0.3, "mu0": 0.5}
    fixed[name] = value
    sample = ("theta",) if name != "theta" else ("mu0",)
    fixed.pop(sample[0])
    with pytest.raises(ValueError, match=rf"fixed\['{name}'\] = .* outside the range"):
        hk.mcmc(x, t, n_iter=3, burn_in=1, chains=1, sample=sample, fixed=fixed, progress=False, **KW)
    with pytest.raises(ValueError, match=rf"fixed\['{name}'\] = .* outside the range"):
        hk.posterior_mode(x, t, sample=sample, fixed=fixed, **KW)


def test_parameters_at_the_range_ends_give_finite_values(data):
    x, t = data
    for v in (1e-50, 1e50):
        for name in ("h", "tau_x", "tau_t"):
            ll = hk.log_likelihood(x, t, dict(P, **{name: v}), **KW)
            assert not np.isnan(ll)


@pytest.mark.parametrize("params, exc, match", [
    (dict(P, mu0=True), TypeError, "mu0 must be a real number"),
    (dict(P, h="1"), TypeError, "h must be a real number"),
    (dict(P, omega=-1.0), ValueError, "omega must be > 0"),
    (dict(P, theta=float("nan")), ValueError, "theta must be finite"),
    ({k: v for k, v in P.items() if k != "h"}, ValueError, "missing"),
    ([1, 2, 3, 4, 5, 6], TypeError, "params must be a HawkesParams or a dict"),
])
def test_bad_params(data, params, exc, match):
    x, t = data
    with pytest.raises(exc, match=match):
        hk.log_likelihood(x, t, params, **KW)


@pytest.mark.parametrize("kw, exc, match", [
    (dict(exact="no"), TypeError, "exact must be True or False"),
    (dict(exact=1), TypeError, "exact must be True or False"),
    (dict(dtype=np.int32), ValueError, "dtype"),
    (dict(backend="cuda"), ValueError, "backend must be one of"),
    (dict(threads=0), ValueError, "threads must be >= 1"),
    (dict(threads=True), TypeError, "threads must be an integer"),
    (dict(threads=10_000), ValueError, "threads=10000 exceeds"),
])
def test_bad_engine_settings(data, kw, exc, match):
    x, t = data
    args = dict(KW, **kw)
    with pytest.raises(exc, match=match):
        hk.log_likelihood(x, t, P, **args)
    with pytest.raises(exc, match=match):
        hk.posterior_mode(x, t, fixed=FIXED, **args)


# ----------------------------------------------------------------------------- mcmc and posterior_mode
@pytest.mark.parametrize("kw, exc, match", [
    (dict(fixed={**FIXED, "h": 0.3}), ValueError, r"\['h'\] are both sampled .* and fixed"),
    (dict(sample=("h", "h", "omega", "theta", "mu0")), ValueError, "sample lists a parameter twice"),
    (dict(sample=()), ValueError, "at least one"),
    (dict(sample=("h", "mu"), fixed=FIXED), ValueError, "unknown parameter name"),
    (dict(sample=("h", 3)), TypeError, "parameter names"),
    (dict(fixed={"tau_x": 1.0}), ValueError, "missing"),
    (dict(fixed=[("tau_x", 1.0)]), TypeError, "fixed must be a dict"),
    (dict(fixed={**FIXED, "tau_t": True}), TypeError, "fixed\\['tau_t'\\] must be a real number"),
    (dict(priors={"h": 0.0}), ValueError, "priors\\['h'\\] must be > 0"),
    (dict(priors={"zeta": 1.0}), ValueError, "unknown parameter"),
])
def test_mcmc_and_mode_share_the_model_checks(data, kw, exc, match):
    x, t = data
    kw = dict({"fixed": FIXED}, **kw)
    with pytest.raises(exc, match=match):
        hk.mcmc(x, t, n_iter=3, burn_in=1, chains=1, progress=False, **kw, **KW)
    with pytest.raises(exc, match=match):
        hk.posterior_mode(x, t, **kw, **KW)


def test_posterior_mode_own_checks(data):
    """The issue's cases: fixed h not optimised (refused as in mcmc), a start for a fixed
    parameter, maxiter <= 0 (which returned the start values as "the mode")."""
    x, t = data
    with pytest.raises(ValueError, match="both sampled"):
        hk.posterior_mode(x, t, fixed={"tau_x": 1, "tau_t": 10, "h": 0.3}, **KW)
    with pytest.raises(ValueError, match=r"start gives value\(s\) for \['tau_x'\], which are not sampled"):
        hk.posterior_mode(x, t, fixed=FIXED, start={"tau_x": 2.0}, **KW)
    for m in (0, -3):
        with pytest.raises(ValueError, match="maxiter must be >= 1"):
            hk.posterior_mode(x, t, fixed=FIXED, maxiter=m, **KW)
    with pytest.raises(TypeError, match="maxiter must be an integer"):
        hk.posterior_mode(x, t, fixed=FIXED, maxiter=10.5, **KW)
    with pytest.raises(ValueError, match=r"start\['h'\] = .* outside the range"):
        hk.posterior_mode(x, t, fixed=FIXED, start={"h": 1e-300}, **KW)
    # fixed parameters keep their values: with h, omega fixed only theta and mu0 move
    mode = hk.posterior_mode(x, t, sample=("theta", "mu0"), fixed={**FIXED, "h": 0.3, "omega": 1.0}, maxiter=50,
                             **KW)
    assert set(mode) == {"theta", "mu0", "log_posterior", "evaluations"}


@pytest.mark.parametrize("kw, exc, match", [
    (dict(n_iter=0), ValueError, "n_iter must be >= 1"),
    (dict(n_iter=5.0), TypeError, "n_iter must be an integer"),
    (dict(burn_in=-1), ValueError, "burn_in must be >= 0"),
    (dict(burn_in=3), ValueError, "burn_in must be smaller"),
    (dict(chains=0), ValueError, "chains must be >= 1"),
    (dict(chains=True), TypeError, "chains must be an integer"),
    (dict(seed=-1), ValueError, "seed must be a non-negative integer"),
    (dict(seed=1.5), TypeError, "seed must be None, an int"),
    (dict(seed=True), TypeError, "seed must be None"),
    (dict(progress="no"), TypeError, "progress must be True or False"),
    (dict(init="start"), ValueError, "init must be a dict"),
    (dict(init={"tau_x": 1.0}), ValueError, "init gives value"),
    (dict(init={"h": 0.0}), ValueError, "init\\['h'\\] must be > 0"),
    (dict(executor="pool"), TypeError, "executor must be None"),
])
def test_bad_mcmc_arguments(data, kw, exc, match):
    x, t = data
    args = dict(n_iter=3, burn_in=1, chains=1, fixed=FIXED, progress=False, **KW)
    args.update(kw)
    with pytest.raises(exc, match=match):
        hk.mcmc(x, t, **args)


@pytest.mark.parametrize("kernel, exc, match", [
    ("gaussian", ValueError, "kernel must be one of"),
    (("power-law", 1.0), ValueError, "kernel exponent p must be > 1"),
    (("power-law", True), TypeError, "kernel exponent p must be a real number"),
    (("exponential", 2.0), ValueError, "only 'power-law' takes an exponent"),
    (3, TypeError, "kernel must be one of"),
    (("power-law", float("inf")), ValueError, "kernel exponent p must be finite"),
])
def test_bad_kernel(data, post, kernel, exc, match):
    x, t = data
    calls = [lambda: hk.log_likelihood(x, t, P, kernel=kernel, **KW),
             lambda: hk.self_excitation_probabilities(x, t, P, kernel=kernel, **KW),
             lambda: hk.mcmc(x, t, n_iter=3, burn_in=1, chains=1, fixed=FIXED, progress=False, kernel=kernel, **KW),
             lambda: hk.posterior_mode(x, t, fixed=FIXED, kernel=kernel, **KW),
             lambda: hk.simulate(mu=0.1, theta=0.3, omega=1.0, h=0.2, region=3.0, duration=5.0, kernel=kernel),
             lambda: hk.residuals(P, x, t, kernel=kernel),
             lambda: hk.forecast_intensity(post, x, t, [t.max()], np.zeros((2, 2)), kernel=kernel, **KW)]
    for call in calls:
        with pytest.raises(exc, match=match):
            call()


@pytest.mark.parametrize("kw, exc, match", [
    (dict(n_draws=0), ValueError, "n_draws must be >= 1"),
    (dict(bins=0), ValueError, "bins must be >= 1"),
    (dict(bins=2.5), TypeError, "bins must be an integer"),
    (dict(interevent_probs=(0.5, 1.0)), ValueError, "interevent_probs must be in"),
    (dict(r=[0.0, 1.0]), ValueError, "r must hold positive values"),
    (dict(u=[np.nan]), ValueError, "u must be finite"),
    (dict(progress="no"), TypeError, "progress must be True or False"),
    (dict(seed=-1), ValueError, "seed must be a non-negative"),
    (dict(executor=3), TypeError, "executor must be None"),
])
def test_bad_posterior_predictive(data, post, kw, exc, match):
    x, t = data
    with pytest.raises(exc, match=match):
        hk.posterior_predictive(post, x, t, **dict(dict(n_draws=2, progress=False), **kw))


def test_posterior_predictive_needs_a_posterior(data):
    x, t = data
    with pytest.raises(TypeError, match="posterior must be a HawkesPosterior"):
        hk.posterior_predictive(P, x, t)
    with pytest.raises(TypeError, match="t must hold real numbers"):
        hk.posterior_predictive(hk.mcmc(x, t, n_iter=3, burn_in=1, chains=1, fixed=FIXED, progress=False, **KW),
                                x, t > 5)


# ----------------------------------------------------------------------------- residuals
def test_bad_residuals(data, post):
    x, t = data
    with pytest.raises(ValueError, match=r"h = .* outside the range"):
        hk.residuals(dict(P, h=1e300), x, t)
    with pytest.raises(TypeError, match="params must be a HawkesParams"):
        hk.residuals("posterior", x, t)
    with pytest.raises(TypeError, match="progress must be True or False"):
        hk.residuals(P, x, t, progress="no")
    with pytest.raises(ValueError, match="n_draws must be >= 1"):
        hk.residuals(post, x, t, n_draws=0)
    with pytest.raises(ValueError, match="n_draws needs a posterior"):
        hk.residuals(P, x, t, n_draws=2)
    with pytest.raises(ValueError, match="seed must be a non-negative"):
        hk.residuals(post, x, t, n_draws=2, seed=-1)


@pytest.mark.parametrize("kw, exc, match", [
    (dict(times=[10.0]), ValueError, r"times must be at or after the last event time .* times\[0\] = 10.0"),
    (dict(times=[np.nan]), ValueError, "times must be finite"),
    (dict(times=[True]), TypeError, "times must hold real numbers, got booleans"),
    (dict(times=pd.Series(pd.date_range("2030-01-01", periods=2))), TypeError, "times must hold real numbers"),
    (dict(times=[]), ValueError, "times needs at least 1 rows"),
    (dict(grid=np.zeros((4, 3))), ValueError, r"grid must have shape \(G, 2\)"),
    (dict(grid=np.zeros(4)), ValueError, r"grid must have shape \(G, 2\)"),
    (dict(grid=[[0.0, np.inf]]), ValueError, "grid must be finite"),
    (dict(grid=np.zeros((2, 2)) + 1j), TypeError, "grid must hold real numbers, got complex"),
    (dict(quantiles=(0.5, 1.5)), ValueError, "quantiles must be in"),
    (dict(n_draws=0), ValueError, "n_draws must be >= 1"),
    (dict(progress="yes"), TypeError, "progress must be True or False"),
    (dict(backend="tpu"), ValueError, "backend must be one of"),
    (dict(seed=-4), ValueError, "seed must be a non-negative"),
])
def test_bad_forecast(data, post, kw, exc, match):
    x, t = data
    args = dict(times=[t.max() + 1.0], grid=np.zeros((3, 2)), progress=False, **KW)
    args.update(kw)
    with pytest.raises(exc, match=match):
        hk.forecast_intensity(post, x, t, **args)


def test_forecast_size_guard(data, post):
    x, t = data
    with pytest.raises(ValueError, match=r"would need .* GiB"):
        hk.forecast_intensity(post, x, t, np.linspace(t.max(), t.max() + 10, 1000), np.zeros((200_000, 2)),
                              n_draws=4, **KW)


@pytest.mark.parametrize("kw, exc, match", [
    (dict(origin=60.0), ValueError, "origin must lie strictly inside the data's time range"),
    (dict(origin=np.nan), ValueError, "origin must be finite"),
    (dict(origin=[20.0]), TypeError, "origin must be a real number"),
    (dict(origin=pd.Timestamp("2020-01-01")), TypeError, "origin must"),
    (dict(horizon=0.0), ValueError, "horizon must be > 0"),
    (dict(horizon=1e6), ValueError, r"origin \+ horizon .* must be at most the end"),
    (dict(end=1.0), ValueError, "end must be at or after the last event time"),
    (dict(n_draws=0), ValueError, "n_draws must be >= 1"),
    (dict(background="both"), ValueError, "background must be one of"),
    (dict(reference_mu0=0.5), ValueError, "reference_mu0 must be one of"),
    (dict(poisson_lookback=0.0), ValueError, "poisson_lookback must be > 0"),
    (dict(region=-2.0), ValueError, "region must be > 0"),
    (dict(backend="tpu"), ValueError, "backend must be one of"),
    (dict(seed=-4), ValueError, "seed must be a non-negative"),
])
def test_bad_forecast_score(data, post, kw, exc, match):
    x, t = data
    args = dict(origin=20.0, horizon=5.0, **KW)
    args.update(kw)
    with pytest.raises(exc, match=match):
        hk.forecast_score(post, x, t, **args)


def test_forecast_parameters_outside_their_domain(data):
    x, t = data
    with pytest.raises(ValueError, match=r"omega = .* outside the range"):
        hk.forecast_intensity(dict(P, omega=1e300), x, t, [t.max()], np.zeros((2, 2)), **KW)
    with pytest.raises(TypeError, match="params must be a HawkesParams"):
        hk.forecast_intensity(None, x, t, [t.max()], np.zeros((2, 2)), **KW)
    with pytest.raises(ValueError, match=r"omega = .* outside the range"):
        hk.forecast_score(dict(P, omega=1e300), x, t, origin=20.0, horizon=5.0, **KW)
    with pytest.raises(TypeError, match="params must be a HawkesParams"):
        hk.forecast_score(None, x, t, origin=20.0, horizon=5.0, **KW)


@pytest.mark.parametrize("kw, exc, match", [
    (dict(region=[[0, 3]]), ValueError, r"region must have shape \(2, 2\)"),
    (dict(region=[[0, 3], [2, 2]]), ValueError, "low < high"),
    (dict(region=[[0, np.nan], [0, 3]]), ValueError, "region must be finite"),
    (dict(k=0.0), ValueError, "k must be > 0"),
    (dict(k=True), TypeError, "k must be a real number"),
    (dict(cells=0), ValueError, "cells must be >= 1"),
    (dict(seed=-1), ValueError, "seed must be a non-negative"),
    (dict(progress="no"), TypeError, "progress must be True or False"),
    (dict(kernel="gauss"), ValueError, "kernel must be one of"),
])
def test_bad_super_thinning(data, kw, exc, match):
    x, t = data
    args = dict(region=[[0, 3], [0, 3]], **KW)
    args.update(kw)
    region = args.pop("region")
    with pytest.raises(exc, match=match):
        hk.super_thinned_residuals(P, x, t, region, **args)


# ----------------------------------------------------------------------------- self_excitation, simulate
@pytest.mark.parametrize("kw, exc, match", [
    (dict(n_draws=0), ValueError, "n_draws must be >= 1"),
    (dict(n_draws=2.0), TypeError, "n_draws must be an integer"),
    (dict(max_values=0), ValueError, "max_values must be >= 1"),
    (dict(seed=-2), ValueError, "seed must be a non-negative integer"),
    (dict(progress=1), TypeError, "progress must be True or False"),
])
def test_bad_self_excitation(post, kw, exc, match):
    with pytest.raises(exc, match=match):
        hk.self_excitation(post, **kw)
    with pytest.raises(exc, match=match):
        post.self_excitation(**kw)
    with pytest.raises(exc, match=match):
        hk.self_excitation_draws(post, **kw)
    with pytest.raises(exc, match=match):
        post.self_excitation_draws(**kw)


def test_self_excitation_needs_a_posterior():
    with pytest.raises(TypeError, match="posterior must be a HawkesPosterior"):
        hk.self_excitation(object())
    with pytest.raises(TypeError, match="posterior must be a HawkesPosterior"):
        hk.self_excitation_draws(object())


SIM = dict(mu=0.1, theta=0.3, omega=1.0, h=0.2, region=3.0, duration=20.0)


@pytest.mark.parametrize("kw, exc, match", [
    (dict(mu=1e300), ValueError, "expected background events exceeds max_events"),
    (dict(duration=1e300), ValueError, "expected background events exceeds max_events"),
    (dict(theta=1.0), ValueError, "theta must be < 1"),
    (dict(theta=True), TypeError, "theta must be a real number"),
    (dict(h=0.0), ValueError, "h must be > 0"),
    (dict(dim=4), ValueError, "dim must be <= 3"),
    (dict(dim=2.0), TypeError, "dim must be an integer"),
    (dict(region=[[0, 1], [1, 0]]), ValueError, "region"),
    (dict(region=True), TypeError, "region must be a real number"),
    (dict(seed=-1), ValueError, "seed must be a non-negative integer"),
    (dict(return_parents="yes"), TypeError, "return_parents must be True or False"),
    (dict(max_events=0), ValueError, "max_events must be >= 1"),
])
def test_bad_simulate(kw, exc, match):
    with pytest.raises(exc, match=match):
        hk.simulate(**dict(SIM, **kw))


def test_simulate_extreme_but_valid_values_work():
    x, t = hk.simulate(**dict(SIM, h=1e-300, omega=1e300, seed=1))
    assert np.isfinite(x).all() and np.isfinite(t).all()


# ----------------------------------------------------------------------------- CLI: one-line errors, checks first
@pytest.fixture(scope="module")
def csv(tmp_path_factory, data):
    x, t = data
    p = tmp_path_factory.mktemp("hk") / "events.csv"
    pd.DataFrame({"x_km": x[:, 0], "y_km": x[:, 1], "t_hours": t}).to_csv(p, index=False)
    return p


PARGS = ["--mu0", "0.5", "--tau-x", "1", "--tau-t", "10", "--theta", "0.3", "--omega", "1", "--h", "0.3",
         "--backend", "cpu", "--threads", "1"]


def _err(capsys):
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("hphawkes: error:"), err
    assert "Traceback" not in err[0]
    return err[0]


def test_cli_mcmc_checks_before_work(csv, tmp_path, capsys):
    base = ["hawkes", "mcmc", str(csv), "--tau-x", "1", "--tau-t", "10", "--backend", "cpu", "--no-progress"]
    assert cli_main(base + ["--n-iter", "0"]) == 2
    assert "--n-iter must be >= 1" in _err(capsys)
    assert cli_main(base + ["--n-iter", "5", "--burn-in", "5"]) == 2
    assert "--burn-in (5) must be smaller" in _err(capsys)
    assert cli_main(base + ["--n-iter", "5", "--burn-in", "1", "--out", "/proc/no/such/dir"]) == 2
    assert "--out /proc/no/such/dir" in _err(capsys)
    full = tmp_path / "full"
    full.mkdir()
    (full / "old.txt").write_text("keep")
    assert cli_main(base + ["--n-iter", "5", "--burn-in", "1", "--out", str(full)]) == 2
    assert "--overwrite" in _err(capsys)
    assert (full / "old.txt").read_text() == "keep"
    assert cli_main(base + ["--n-iter", "4", "--burn-in", "1", "--chains", "1", "--out", str(full),
                            "--overwrite", "--seed", "1"]) == 0
    assert not (full / "old.txt").exists() and (full / "draws.csv").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".full.tmp")]


def test_cli_one_line_errors(csv, tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("x_km,y_km,t_hours\n0,0,1\n1,1,two\n")
    assert cli_main(["hawkes", "loglik", str(bad)] + PARGS) == 2
    assert "column 't_hours' row 3 holds 'two'" in _err(capsys)
    cut = tmp_path / "cut.csv"
    cut.write_text("x_km,y_km,t_hours\n0,0,1\n1,1,2\n1,")
    assert cli_main(["hawkes", "loglik", str(cut)] + PARGS) == 2
    _err(capsys)
    gz = tmp_path / "broken.csv.gz"
    gz.write_bytes(b"\x1f\x8b\x08\x00garbage")
    assert cli_main(["hawkes", "loglik", str(gz)] + PARGS) == 2
    assert "broken.csv.gz" in _err(capsys)
    assert cli_main(["hawkes", "loglik", str(tmp_path)] + PARGS) == 2
    _err(capsys)
    assert cli_main(["hawkes", "loglik", str(tmp_path / "missing.csv")] + PARGS) == 2
    assert "missing.csv" in _err(capsys)
    assert cli_main(["hawkes", "loglik", str(csv)] + PARGS[:-4] + ["--backend", "gpu"]) in (0, 2)
    capsys.readouterr()
    assert cli_main(["hawkes", "loglik", str(csv), "--h", "1e300"] + PARGS[:10] + PARGS[12:]) == 2
    assert "outside the range" in _err(capsys)
    assert cli_main(["hawkes", "probabilities", str(csv), "--out", str(tmp_path)] + PARGS) == 2
    assert "is a folder" in _err(capsys)
    assert cli_main(["hawkes", "simulate", "--mu", "1e300", "--theta", "0.3", "--omega", "1", "--h", "0.2",
                     "--region", "3", "--duration", "10", "--out", str(tmp_path / "s.csv")]) == 2
    assert "max_events" in _err(capsys)
    assert not (tmp_path / "s.csv").exists()


def test_cli_reproduce_refuses_before_work(tmp_path, capsys):
    full = tmp_path / "dc"
    full.mkdir()
    (full / "summary.json").write_text("{}")
    for args, match in ((["--n-iter", "0"], "n_iter must be >= 1"), (["--burn-in", "2000"], "burn_in (2000)"),
                        (["--chains", "0"], "chains must be >= 1"), ([], "--overwrite"),
                        (["--seed", "-1"], "seed must be a non-negative")):
        assert cli_main(["reproduce", "dc-gunshots", "--out", str(full), "--backend", "cpu"] + args) == 2
        assert match in _err(capsys)
    assert (full / "summary.json").read_text() == "{}"
