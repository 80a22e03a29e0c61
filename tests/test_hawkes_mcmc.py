"""Adaptive MH for the Hawkes model: caching, Hastings correction, adaptation, executors, pi_n, recovery."""
from __future__ import annotations

import json
import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import naive_hawkes as nh
from engines import CUDA_ENGINES

import hphawkes_py.hawkes as hk
from hphawkes_py.hawkes.sampler import _mcmc_debug
from hphawkes_py.hawkes.engine import EngineFactory

THREADS = 1
FIXED = {"tau_x": 1.5, "tau_t": 8.0}


@pytest.fixture(scope="module")
def small():
    x, t = hk.simulate(mu=0.5, theta=0.4, omega=2.0, h=0.3, region=4.0, duration=12.0, seed=3)
    assert 60 < len(t) < 250 and len(np.unique(t)) == len(t)
    return x, t


@pytest.fixture(scope="module")
def small_post(small):
    x, t = small
    return hk.mcmc(x, t, n_iter=40, burn_in=20, chains=2, fixed=FIXED, seed=5, progress=False, backend="cpu",
                   threads=THREADS)


# ----------------------------------------------------------------------------- caching
def test_cached_log_likelihood_equals_fresh_after_every_move(small):
    """Every kind of move (mu0, theta: O(N); h, omega: slot 1 + swap; tau_x, tau_t: background),
    accepted and rejected, leaves the cached log-likelihood equal to a from-scratch evaluation."""
    x, t = small
    post = _mcmc_debug(x, t, n_iter=30, burn_in=5, chains=1, sample=("h", "omega", "theta", "mu0", "tau_x", "tau_t"),
                       init={"tau_x": 1.5, "tau_t": 8.0}, fixed={}, seed=11, progress=False, backend="cpu",
                       threads=THREADS)
    log = post._debug[0]
    assert len(log) == 30 * 6
    seen = set()
    for name, accepted, cached, fresh in log:
        assert cached == pytest.approx(fresh, rel=1e-11, abs=1e-9), (name, accepted)
        seen.add((name, accepted))
    for name in ("h", "omega", "theta", "mu0", "tau_x", "tau_t"):
        assert (name, True) in seen and (name, False) in seen, f"{name} needs accepted and rejected moves"
    # the last state against the NumPy reference
    last = {n: post.draws[n][0, -1] for n in hk.PARAM_NAMES}
    o = np.argsort(t, kind="stable")
    assert log[-1][2] == pytest.approx(nh.log_likelihood(x[o], t[o], **last), rel=1e-10)


def test_truncated_proposals_sample_the_prior(monkeypatch):
    """With a flat likelihood the draws follow the half-normal priors (on theta and on 1/h).
    Without the Hastings correction for the truncation, E[theta] comes out ~0.885 instead of 0.798."""
    monkeypatch.setattr(EngineFactory, "build", lambda self, **k: nh.FlatEngine())
    x = np.random.default_rng(0).random((5, 2))
    t = np.arange(5.0)
    post = hk.mcmc(x, t, n_iter=20_000, burn_in=2_000, chains=2, sample=("theta", "h"),
                   fixed={"tau_x": 1, "tau_t": 1, "omega": 1, "mu0": 1}, priors={"theta": 1.0, "h": 10.0},
                   seed=1, progress=False)
    theta = post.draws["theta"].ravel()
    inv_h = 1.0 / post.draws["h"].ravel() / 10.0
    for v in (theta, inv_h):
        assert v.mean() == pytest.approx(math.sqrt(2 / math.pi), abs=0.04)
        assert (v**2).mean() == pytest.approx(1.0, abs=0.1)
    for rates in post.acceptance_rates.values():
        assert np.all(np.abs(rates - 0.44) < 0.05)


def test_acceptance_rates_near_target_after_adaptation(small):
    x, t = small
    post = hk.mcmc(x, t, n_iter=600, burn_in=300, chains=1, fixed=FIXED, seed=2, progress=False, backend="cpu",
                   threads=THREADS)
    for name, rate in post.acceptance_rates.items():
        assert 0.3 < rate[0] < 0.6, (name, rate)
    # the proposal scales moved away from their initial quarter of the state
    assert any(abs(post.proposal_sd[n][0] - 0.25) > 0.05 for n in post.sampled)


def test_executor_does_not_change_draws(small):
    x, t = small
    kw = dict(n_iter=30, burn_in=10, chains=3, fixed=FIXED, seed=123, progress=False, backend="cpu", threads=THREADS)
    serial = hk.mcmc(x, t, **kw)
    with ThreadPoolExecutor(2) as ex:
        pooled = hk.mcmc(x, t, executor=ex, **kw)
    for n in hk.PARAM_NAMES:
        np.testing.assert_array_equal(serial.draws[n], pooled.draws[n])
    assert not np.array_equal(serial.draws["h"][0], serial.draws["h"][1])  # chains differ


def test_unsorted_input_same_chain_and_callers_order(small):
    x, t = small
    perm = np.random.default_rng(9).permutation(len(t))
    kw = dict(n_iter=20, burn_in=5, chains=1, fixed=FIXED, seed=4, progress=False, backend="cpu", threads=THREADS)
    a = hk.mcmc(x, t, **kw)
    b = hk.mcmc(x[perm], t[perm], **kw)
    np.testing.assert_array_equal(a.draws["theta"], b.draws["theta"])
    pa = a.self_excitation(n_draws=5, seed=1)
    pb = b.self_excitation(n_draws=5, seed=1)
    np.testing.assert_allclose(pb["mean"].to_numpy(), pa["mean"].to_numpy()[perm], rtol=1e-12, atol=1e-300)


# ----------------------------------------------------------------------------- outputs
def test_draws_shapes_and_fixed(small_post):
    post = small_post
    assert set(post.draws) == set(hk.PARAM_NAMES)
    for n in hk.PARAM_NAMES:
        assert post.draws[n].shape == (2, 20)
    assert np.all(post.draws["tau_x"] == 1.5) and np.all(post.draws["tau_t"] == 8.0)
    assert set(post.acceptance_rates) == {"h", "omega", "theta", "mu0"}
    assert "HawkesPosterior" in repr(post) and post.backend == "cpu"


def _direct_pi(post, x, t, idx):
    flat = {n: post.draws[n].reshape(-1)[idx] for n in hk.PARAM_NAMES}
    return np.array([hk.self_excitation_probabilities(
        x, t, hk.HawkesParams(**{n: flat[n][k] for n in hk.PARAM_NAMES}), backend="cpu", threads=THREADS)
        for k in range(len(idx))])


def test_self_excitation_matches_direct_computation(small, small_post):
    x, t = small
    post = small_post
    df = post.self_excitation(n_draws=1000, seed=0)  # more than the 40 draws: all of them
    idx = df.attrs["draw_indices"]
    np.testing.assert_array_equal(idx, np.arange(40))
    pis = _direct_pi(post, x, t, idx)
    assert list(df.columns) == ["mean", "sd", "q2.5", "q97.5"] and len(df) == len(t)
    np.testing.assert_allclose(df["mean"], pis.mean(0), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(df["sd"], pis.std(0, ddof=1), rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(df["q2.5"], np.quantile(pis, 0.025, axis=0), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(df["q97.5"], np.quantile(pis, 0.975, axis=0), rtol=1e-10, atol=1e-14)
    assert ((df.to_numpy() >= 0) & (df.to_numpy() <= 1)).all()
    assert (df["q2.5"] <= df["mean"] + 1e-12).all() and (df["mean"] <= df["q97.5"] + 1e-12).all()
    # bounded-memory path: float32 spill file read back in blocks of events
    spilled = post.self_excitation(n_draws=1000, seed=0, max_values=100)
    np.testing.assert_allclose(spilled["mean"], df["mean"], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(spilled[["q2.5", "q97.5"]], df[["q2.5", "q97.5"]], rtol=1e-6, atol=1e-7)
    # a random subset of draws
    sub = post.self_excitation(n_draws=7, seed=3)
    sidx = sub.attrs["draw_indices"]
    assert len(sidx) == 7 and len(set(sidx)) == 7
    np.testing.assert_allclose(sub["mean"], _direct_pi(post, x, t, sidx).mean(0), rtol=1e-10, atol=1e-14)


def test_self_excitation_function_on_an_executor_gives_the_same_table(small_post):
    """The function beside the model (the method delegates to it): batches of draws on a thread
    pool, in memory and spilled, equal the serial result exactly."""
    serial = hk.self_excitation(small_post, n_draws=11, seed=4, progress=False, max_values=300)
    assert serial.equals(small_post.self_excitation(n_draws=11, seed=4, progress=False, max_values=300))
    with ThreadPoolExecutor(2) as ex:
        pooled = hk.self_excitation(small_post, n_draws=11, seed=4, progress=False, max_values=300, executor=ex)
        in_memory = hk.self_excitation(small_post, n_draws=11, seed=4, progress=False, executor=ex)
    assert serial.equals(pooled)
    np.testing.assert_allclose(in_memory["mean"], serial["mean"], rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(serial.attrs["draw_indices"], pooled.attrs["draw_indices"])
    with pytest.raises(TypeError, match="posterior"):
        hk.self_excitation({"draws": {}})
    with pytest.raises(TypeError, match="progress"):
        hk.self_excitation(small_post, progress="no")


def test_summary_arviz_and_exports(small_post, tmp_path):
    post = small_post
    table = post.summary()
    assert list(table.columns) == ["mean", "sd", "hdi_2.5%", "hdi_97.5%", "ess_bulk", "r_hat"]
    assert list(table.index[:4]) == ["h", "omega", "theta", "mu0"]
    assert table.loc["theta", "mean"] == pytest.approx(post.draws["theta"].mean())
    assert table.loc["h", "hdi_2.5%"] <= table.loc["h", "mean"] <= table.loc["h", "hdi_97.5%"]
    idata = post.to_arviz()
    assert idata.posterior["theta"].shape == (2, 20)
    d = json.loads(json.dumps(post.to_dict()))
    assert d["chains"] == 2 and d["summary"]["theta"]["mean"] == pytest.approx(table.loc["theta", "mean"])
    post.to_csv(tmp_path / "draws.csv")
    post.to_json(tmp_path / "post.json")
    frame = post.to_frame()
    assert frame.shape == (40, 2 + 6)
    import matplotlib

    matplotlib.use("Agg")
    post.plot_trace(path=tmp_path / "trace.png")
    post.plot_density(path=tmp_path / "density.png")
    assert (tmp_path / "trace.png").stat().st_size > 1000 and (tmp_path / "density.png").stat().st_size > 1000


# ----------------------------------------------------------------------------- recovery
@pytest.mark.slow
def test_simulation_recovery():
    """theta, omega and h inside their 95% HDI in most of six seeds (default init, adaptive MH).

    The fitting model's background is a space-time KDE of all events, not the homogeneous
    background of the simulation, so wide background bandwidths (tau_x = 8, tau_t = 30 on a
    20 x 20 x 100 window) are used; theta then carries a small known downward bias (~0.02).
    """
    truth = {"theta": 0.5, "omega": 5.0, "h": 0.2}
    inside = {n: 0 for n in truth}
    for seed in range(6):
        x, t = hk.simulate(mu=0.0125, theta=0.5, omega=5.0, h=0.2, region=20, duration=100, seed=seed)
        post = hk.mcmc(x, t, n_iter=500, burn_in=150, chains=1, fixed={"tau_x": 8.0, "tau_t": 30.0}, seed=seed,
                       progress=False, backend="cpu", threads=THREADS)
        table = post.summary()
        for n, v in truth.items():
            inside[n] += table.loc[n, "hdi_2.5%"] <= v <= table.loc[n, "hdi_97.5%"]
    assert all(k >= 4 for k in inside.values()), inside


def test_summary_lists_only_sampled_parameters(small_post):
    """Fixed parameters have no posterior: no row with sd ~0 and R-hat NaN; their values stay in ``fixed``."""
    table = small_post.summary()
    assert list(table.index) == list(small_post.sampled) == ["h", "omega", "theta", "mu0"]
    assert not {"tau_x", "tau_t"} & set(table.index)
    assert np.all(np.isfinite(table["r_hat"])) and np.all(table["sd"] > 0)
    assert set(small_post.fixed) == {"tau_x", "tau_t"}
    assert "fixed={'tau_x'" in repr(small_post)
    assert set(small_post.to_dict()["summary"]) == set(small_post.sampled)


def test_summary_of_one_chain_is_quiet(small, capsys):
    """One chain has no R-hat; ArviZ logs a shape warning for it through its own logger, which the
    summary silences (R users saw it on every one-chain fit)."""
    x, t = small
    one = hk.mcmc(x, t, n_iter=40, burn_in=20, chains=1, fixed=FIXED, seed=5, progress=False, backend="cpu",
                  threads=THREADS)
    capsys.readouterr()
    table = one.summary()
    err = capsys.readouterr().err
    assert "Shape validation" not in err and "WARNING" not in err, err
    assert list(table.index) == list(one.sampled) and np.all(np.isnan(table["r_hat"]))


def test_to_coda(small_post):
    pytest.importorskip("rpy2")
    from rpy2 import robjects as ro

    ml = small_post.to_coda()
    assert list(ro.r["class"](ml)) == ["mcmc.list"]
    assert int(ro.r["nchain"](ml)[0]) == 2
    assert int(ro.r["niter"](ml)[0]) == 20
    means = ro.r("function(m) colMeans(as.matrix(m))")(ml)
    names = list(ro.r["names"](means))
    assert sorted(names) == sorted(small_post.sampled)  # fixed tau_x, tau_t are not exported
    assert means[names.index("theta")] == pytest.approx(small_post.draws["theta"].mean(), rel=1e-12)
    # coda's multivariate diagnostic works (it fails on constant columns of fixed parameters)
    psrf = ro.r("function(m) coda::gelman.diag(m)$mpsrf")(ml)
    assert np.isfinite(psrf[0])
    with_fixed = small_post.to_coda(include_fixed=True)
    assert "tau_x" in list(ro.r("function(m) colnames(as.matrix(m))")(with_fixed))


@pytest.mark.parametrize("backend", CUDA_ENGINES)
def test_same_chain_on_cuda_engine(backend):
    """The sampler is written once against the engine interface: the GPU engine (on the emulator
    and on a real GPU) gives the same chain as the CPU engine, and its cached values match fresh ones."""
    x, t = hk.simulate(mu=0.5, theta=0.4, omega=2.0, h=0.3, region=3.0, duration=8.0, seed=3)
    kw = dict(n_iter=6, burn_in=2, chains=1, fixed=FIXED, seed=1, progress=False)
    emu = _mcmc_debug(x, t, backend=backend, **kw)
    cpu = hk.mcmc(x, t, backend="cpu", threads=THREADS, **kw)
    assert emu.backend == backend
    for n in hk.PARAM_NAMES:
        np.testing.assert_allclose(emu.draws[n], cpu.draws[n], rtol=1e-9)
    for _, _, cached, fresh in emu._debug[0]:
        assert cached == pytest.approx(fresh, rel=1e-11)


def _naive_log_posterior(x, t, values, sampled, scales):
    lp = nh.log_likelihood(x, t, **values)
    for n in sampled:
        state = 1.0 / values[n] if n in ("h", "tau_x", "tau_t") else values[n]
        lp -= 0.5 * (state / scales[n]) ** 2
    return lp


def test_posterior_mode_is_a_local_maximum_of_the_naive_posterior(small):
    x, t = small
    sampled = ("h", "omega", "theta", "mu0")
    mode = hk.posterior_mode(x, t, fixed=FIXED, backend="cpu", threads=THREADS)
    values = {**FIXED, **{n: mode[n] for n in sampled}}
    scales = hk.DEFAULT_PRIOR_SCALES
    best = _naive_log_posterior(x, t, values, sampled, scales)
    assert mode["log_posterior"] == pytest.approx(best, rel=1e-10)
    for n in sampled:
        for f in (0.97, 1.03):  # Nelder-Mead stops at xatol 1e-4 on the log scale: 3% moves must lose
            moved = dict(values, **{n: values[n] * f})
            assert _naive_log_posterior(x, t, moved, sampled, scales) < best, (n, f)


def test_mcmc_init_mode_starts_chains_at_the_mode(small):
    x, t = small
    mode = hk.posterior_mode(x, t, fixed=FIXED, backend="cpu", threads=THREADS)
    post = hk.mcmc(x, t, n_iter=3, burn_in=1, chains=1, fixed=FIXED, init="mode", seed=1, progress=False,
                   backend="cpu", threads=THREADS)
    for n in ("h", "omega", "theta", "mu0"):
        assert post.init[n] == pytest.approx(mode[n], rel=1e-12)
    with pytest.raises(ValueError, match="init must be a dict of initial values or 'mode'"):
        hk.mcmc(x, t, n_iter=3, burn_in=1, chains=1, fixed=FIXED, init="median", progress=False)
