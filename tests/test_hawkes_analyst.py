"""The analyst's tools (issue 14): time-rescaled residuals, intensity forecasts, posterior predictive."""
from __future__ import annotations

import numpy as np
import pytest
from engines import ENGINES
from scipy.special import ndtr

import hphawkes_py.hawkes as hk
from hphawkes_py.hawkes.residual_analysis import rescaled_times

FIXED = {"tau_x": 1.0, "tau_t": 10.0}
START = {"theta": 0.5, "omega": 1.0, "h": 0.2, "mu0": 0.5}
KW = dict(backend="cpu", threads=1)


def _naive_lambda(t, p, T0):
    """Lambda(t_n) by the all-pairs formula (float64 NumPy)."""
    d = t[:, None] - t[None, :]
    bg = (ndtr(d / p["tau_t"]) - ndtr((T0 - t[None, :]) / p["tau_t"])).sum(1)
    tr = np.where(d > 0, -np.expm1(-p["omega"] * np.where(d > 0, d, 0.0)), 0.0).sum(1)
    return p["mu0"] * bg + p["theta"] * tr


def test_rescaled_times_match_the_all_pairs_formula():
    rng = np.random.default_rng(5)
    t = np.sort(np.round(rng.uniform(0, 400, 900), 1))  # ties included
    p = hk.HawkesParams(mu0=0.4, tau_x=1.0, tau_t=7.0, theta=0.6, omega=0.8, h=0.3)
    for T0 in (t[0], t[0] - 5.0):
        lam = rescaled_times(t, p, (T0, t[-1] + 3.0))
        ref = _naive_lambda(t, p.to_dict(), T0)
        np.testing.assert_allclose(lam, ref, rtol=1e-12, atol=1e-10)
    # Lambda(T1) of the residuals is the likelihood's integral
    x = rng.uniform(0, 3, (t.size, 2))
    res = hk.residuals(p, x, t[::-1])
    ll_parts = hk.log_likelihood(x, t, p, **KW)
    assert res.total == pytest.approx(_naive_total(t, p), rel=1e-12)
    assert res.n_ties == int(np.sum(np.diff(t) == 0)) > 0
    assert np.all(res.intervals >= 0) and np.isfinite(ll_parts)
    # caller's order: event n of the time-ordered table is t[::-1][order[n]]
    np.testing.assert_array_equal(t[::-1][res.order], t)


def _naive_total(t, p):
    T0, T1 = t[0], t[-1]
    bg = (ndtr((T1 - t) / p.tau_t) - ndtr((T0 - t) / p.tau_t)).sum()
    return p.mu0 * bg + p.theta * (-np.expm1(-p.omega * (T1 - t))).sum()


def _other_kernel(seed, lag=2.0, theta=0.7, mu=0.15, T=300.0):
    """Background Poisson on [0, 5]^2 x [0, T] with children at a fixed delay (lag +- 0.05)
    instead of an exponential one: data from another temporal kernel."""
    rng = np.random.default_rng(seed)
    n0 = rng.poisson(mu * 25 * T)
    t, x = [rng.uniform(0, T, n0)], [rng.uniform(0, 5, (n0, 2))]
    gt, gx = t[0], x[0]
    while gt.size:
        k = rng.poisson(theta, gt.size)
        ct = np.repeat(gt, k) + lag + 0.05 * rng.standard_normal(k.sum())
        cx = np.repeat(gx, k, axis=0) + 0.2 * rng.standard_normal((k.sum(), 2))
        keep = ct <= T
        gt, gx = ct[keep], cx[keep]
        t.append(gt)
        x.append(gx)
    return np.concatenate(x), np.concatenate(t)


def _fit(x, t):
    m = hk.posterior_mode(x, t, fixed=FIXED, start=START, maxiter=300, **KW)
    return dict(FIXED, **{k: m[k] for k in ("h", "omega", "theta", "mu0")})


@pytest.mark.slow
def test_residuals_uniform_on_model_data_not_on_another_kernel():
    """The KS test accepts data simulated from the model (fitted at its posterior mode) and
    rejects, clearly, data whose delays follow another kernel fitted with the exponential one."""
    x, t = hk.simulate(mu=0.2, theta=0.5, omega=1.0, h=0.2, region=5.0, duration=300.0, seed=2)
    res = hk.residuals(_fit(x, t), x, t)
    assert res.ks_pvalue > 0.05, res
    assert abs(res.count_z) < 0.5  # at the mode Lambda(T1) ~ N
    xo, to = _other_kernel(2)
    bad = hk.residuals(_fit(xo, to), xo, to)
    assert bad.ks_pvalue < 1e-6, bad
    assert bad.ks_statistic > 2 * res.ks_statistic


def test_residuals_of_a_posterior_and_per_draw(tmp_path):
    x, t = hk.simulate(mu=0.3, theta=0.4, omega=2.0, h=0.3, region=3.0, duration=40.0, seed=4)
    post = hk.mcmc(x, t, n_iter=30, burn_in=10, chains=2, fixed=FIXED, init=START, seed=1, progress=False, **KW)
    res = hk.residuals(post, x, t, n_draws=5, seed=2, progress=False)
    assert res.params == post.params_mean()
    assert len(res.draws) == 5 and res.draws["ks_pvalue"].between(0, 1).all()
    assert list(res.to_frame().columns) == ["event", "rescaled_time", "interval", "uniform"]
    assert "draws_ks_pvalue_q2.5_50_97.5" in res.summary() and "ks_pvalue" in repr(res)
    import matplotlib

    matplotlib.use("Agg")
    fig = res.plot(path=tmp_path / "qq.png")
    assert (tmp_path / "qq.png").stat().st_size > 1000
    import matplotlib.pyplot as plt

    plt.close(fig)
    with pytest.raises(ValueError, match="n_draws needs a posterior"):
        hk.residuals(post.params_mean(), x, t, n_draws=3)


# ----------------------------------------------------------------------------- forecasts
def _naive_intensity(x, t, q, u, p):
    D = x.shape[1]
    r2 = ((q[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    dt = u - t[None, :]
    phi = lambda z2, s, d: (2 * np.pi * s * s) ** (-d / 2) * np.exp(-z2 / (2 * s * s))  # noqa: E731
    bg = p["mu0"] * (phi(r2, p["tau_x"], D) * phi(dt**2, p["tau_t"], 1)).sum(1)
    tr = p["theta"] * np.where(dt > 0, p["omega"] * np.exp(-p["omega"] * np.where(dt > 0, dt, 0)) * phi(r2, p["h"], D),
                               0).sum(1)
    return bg + tr, bg


@pytest.fixture(scope="module")
def small():
    x, t = hk.simulate(mu=0.3, theta=0.4, omega=2.0, h=0.3, region=3.0, duration=40.0, seed=4)
    post = hk.mcmc(x, t, n_iter=30, burn_in=10, chains=2, fixed=FIXED, init=START, seed=1, progress=False, **KW)
    return x, t, post


@pytest.mark.parametrize("backend", ENGINES)
def test_forecast_intensity_matches_numpy(small, backend):
    """Posterior mean/quantiles over draws equal the NumPy intensity averaged over the same draws,
    on the CPU engine and on the CUDA kernel (emulator)."""
    x, t, post = small
    gx, gy = np.meshgrid(np.linspace(-0.5, 3.5, 9), np.linspace(-0.5, 3.5, 7))
    grid = np.column_stack([gx.ravel(), gy.ravel()])
    times = [t.max(), t.max() + 0.3, t.max() + 5.0]
    fc = hk.forecast_intensity(post, x[::-1], t[::-1], times, grid, n_draws=6, seed=3, progress=False,
                               backend=backend, threads=1 if backend == "cpu" else None, exact=True)
    total = post.chains * post.n_draws
    idx = np.sort(np.random.default_rng(3).choice(total, size=6, replace=False))
    lam = np.empty((6, 3, grid.shape[0]))
    bg = np.empty_like(lam)
    for k, i in enumerate(idx):
        p = {n: post.draws[n].reshape(-1)[i] for n in hk.PARAM_NAMES}
        for j, u in enumerate(times):
            lam[k, j], bg[k, j] = _naive_intensity(x, t, grid, u, p)
    np.testing.assert_allclose(fc.mean, lam.mean(0), rtol=1e-10)
    np.testing.assert_allclose(fc.background_mean, bg.mean(0), rtol=1e-10)
    np.testing.assert_allclose(fc.quantiles[0.975], np.quantile(lam, 0.975, axis=0), rtol=1e-10)
    assert fc.backend == backend and fc.n_draws == 6
    # windowed (default) within the documented absolute bound
    fw = hk.forecast_intensity(post, x, t, times, grid, n_draws=6, seed=3, progress=False, backend=backend)
    own = (2 * np.pi * FIXED["tau_x"] ** 2) ** -1 * (2 * np.pi * FIXED["tau_t"] ** 2) ** -0.5
    assert np.max(np.abs(fw.mean - fc.mean)) <= 1e-13 * post.draws["mu0"].max() * own + 1e-12 * fc.mean.max()


def test_forecast_plug_in_executor_and_outputs(small, tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    x, t, post = small
    grid = np.random.default_rng(0).uniform(0, 3, (20, 2))
    p = post.params_mean()
    fc = hk.forecast_intensity(p, x, t, t.max() + 1.0, grid, progress=False, **KW)
    ref, _ = _naive_intensity(x, t, grid, t.max() + 1.0, p.to_dict())
    np.testing.assert_allclose(fc.mean[0], ref, rtol=1e-10)
    assert fc.n_draws == 1
    serial = hk.forecast_intensity(post, x, t, [t.max() + 0.5], grid, n_draws=9, seed=1, progress=False, **KW)
    with ThreadPoolExecutor(2) as ex:
        pooled = hk.forecast_intensity(post, x, t, [t.max() + 0.5], grid, n_draws=9, seed=1, progress=False,
                                       executor=ex, **KW)
    np.testing.assert_array_equal(serial.mean, pooled.mean)
    df = fc.to_frame()
    assert list(df.columns) == ["time", "x0", "x1", "mean", "background", "q2.5", "q97.5"] and len(df) == 20
    assert fc.expected_counts(0.25, 2.0).shape == (1, 20)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.close(fc.plot(path=tmp_path / "map.png"))
    assert (tmp_path / "map.png").stat().st_size > 1000


# ----------------------------------------------------------------------------- posterior predictive
def test_k_function_matches_brute_force():
    from hphawkes_py.hawkes.predictive import k_function

    rng = np.random.default_rng(1)
    x = rng.uniform(0, 2, (150, 2))
    t = np.round(rng.uniform(0, 30, 150), 1)
    r = np.array([0.4, 0.1, 0.8])
    u = np.array([2.0, 0.5])
    d = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))
    dt = np.abs(t[:, None] - t[None])
    off = ~np.eye(150, dtype=bool)
    ref = np.array([[((d <= a) & (dt <= b) & off).sum() / 150 for b in u] for a in r])
    np.testing.assert_allclose(k_function(x, t, r, u), ref)


def test_posterior_predictive_agrees_with_model_data_and_flags_a_misfit(tmp_path):
    x, t = hk.simulate(mu=0.3, theta=0.5, omega=1.0, h=0.2, region=3.0, duration=60.0, seed=8)
    post = hk.mcmc(x, t, n_iter=60, burn_in=20, chains=1, fixed=FIXED, init=START, seed=2, progress=False, **KW)
    pp = hk.posterior_predictive(post, x, t, n_draws=40, seed=1, progress=False)
    table = pp.summary()
    assert pp.k_simulated.shape == (40, 4, 4) and len(pp.counts_observed) == 20
    assert table["outside_band"].mean() < 0.25, table[table["outside_band"]]
    assert not table.loc[table["summary"] == "events", "outside_band"].item()
    # the same data with the triggering switched off (theta fixed tiny): clustering at short range and lag
    # is then far above every simulation (K), which the check must show
    flat = hk.mcmc(x, t, n_iter=60, burn_in=20, chains=1, sample=("mu0",),
                   fixed={**FIXED, "h": 0.2, "omega": 1.0, "theta": 1e-3}, seed=2, progress=False, **KW)
    bad = hk.posterior_predictive(flat, x, t, n_draws=40, seed=1, progress=False, r=[0.2, 0.4], u=[0.5, 1.0])
    assert np.all(bad.k_observed > bad.k_simulated.max(0))
    assert bad.summary().query("summary.str.startswith('K')")["p_value"].max() < 0.05
    # same result on any executor (one child seed per draw)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as ex:
        again = hk.posterior_predictive(post, x, t, n_draws=40, seed=1, progress=False, executor=ex)
    np.testing.assert_array_equal(again.k_simulated, pp.k_simulated)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.close(pp.plot(path=tmp_path / "ppc.png"))
    assert (tmp_path / "ppc.png").stat().st_size > 1000


# ----------------------------------------------------------------------------- super-thinning
@pytest.mark.parametrize("backend", ENGINES)
def test_super_thinned_residuals_uniform_for_the_model_not_without_triggering(backend):
    """Clements et al. (2012): homogeneous (chi-square accepts) at the fitted model's intensity;
    clustered (rejected) when the triggering is switched off."""
    x, t = hk.simulate(mu=0.2, theta=0.5, omega=1.0, h=0.2, region=5.0, duration=100.0, seed=3)
    p = _fit(x, t)
    region = [[0, 5], [0, 5]]
    kw = dict(seed=1, backend=backend, threads=1 if backend == "cpu" else None)
    good = hk.super_thinned_residuals(p, x, t, region, **kw)
    assert good.chi2_pvalue > 0.05, good
    assert good.kept.sum() < (t.size) and (~good.kept).sum() > 0
    inside = np.all((good.x >= 0) & (good.x <= 5), axis=1)
    assert inside.all() and good.t.min() >= t.min() and good.t.max() <= t.max()
    flat = dict(p, theta=1e-3)
    bad = hk.super_thinned_residuals(flat, x, t, region, **kw)
    assert bad.chi2_pvalue < 1e-3, bad
    with pytest.raises(ValueError, match="region must"):
        hk.super_thinned_residuals(p, x, t, [[0, 5], [5, 0]])
    with pytest.raises(ValueError, match="region contains no event"):
        hk.super_thinned_residuals(p, x, t, [[100, 101], [0, 5]])
