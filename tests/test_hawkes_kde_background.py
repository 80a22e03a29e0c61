"""Hawkes background from a fitted adaptive, edge-corrected KDE (``background=KDEFit``).

References are direct NumPy sums of the model in :mod:`hphawkes_py.hawkes.kde_background`:
lambda_n = mu0 N f(x_n) / (T1 - T0) + theta G_n, Lambda = mu0 N + theta sum_m (1 - exp(-omega (T1 - t_m))),
with f the untruncated KDE normalised by its window mass, computed here for a rectangle window in
closed form (products of 1-D normal probabilities), independently of the library's raster masses.
"""
import math

import numpy as np
import pytest
from scipy.special import ndtr

import hphawkes_py as hp
from hphawkes_py.hawkes.kde_background import kde_background
from tests.engines import ENGINES

RECT = (0.0, 10.0, 0.0, 5.0)  # x0, x1, y0, y1 of the window (cells of 0.25 tile it exactly)


def _window():
    return hp.kde.Window.rectangle(*RECT, 0.25)


def _events(n=40, seed=1):
    rng = np.random.default_rng(seed)
    x = np.column_stack([rng.uniform(RECT[0], RECT[1], n), rng.uniform(RECT[2], RECT[3], n)])
    # a few clustered pairs so the trigger matters
    x[1::4] = x[0::4][: len(x[1::4])] + rng.normal(0, 0.2, (len(x[1::4]), 2))
    x = np.clip(x, [RECT[0] + 1e-3, RECT[2] + 1e-3], [RECT[1] - 1e-3, RECT[3] - 1e-3])
    t = rng.uniform(0.0, 20.0, n)
    t[1::4] = t[0::4][: len(t[1::4])] + rng.exponential(0.5, len(t[1::4]))
    return x, t


@pytest.fixture(scope="module")
def data_fit():
    x, t = _events()
    fit = hp.kde.fit(x, _window(), method="adaptive", progress=False, backend="cpu")
    return x, t, fit


def _rect_mass(p, b):
    """P(N(p_j, b_j^2 I) in RECT), closed form."""
    x0, x1, y0, y1 = RECT
    return (ndtr((x1 - p[:, 0]) / b) - ndtr((x0 - p[:, 0]) / b)) * (ndtr((y1 - p[:, 1]) / b) - ndtr((y0 - p[:, 1]) / b))


def _kde_density(fit, q):
    b, w = fit.bandwidths, fit.weights
    d2 = ((q[:, None, :] - fit.points[None, :, :]) ** 2).sum(-1)
    lam = (w * np.exp(-d2 / (2 * b * b)) / (2 * math.pi * b * b)).sum(1)
    return lam / float(np.sum(w * _rect_mass(fit.points, b)))


def _reference(x, t, p, bg_rate, T):
    """sum_n log(mu0 bg_n + theta G_n) - (mu0 N + theta sum(1 - exp(-omega (T1 - t_m)))), and pi_n."""
    mu0, theta, omega, h = p["mu0"], p["theta"], p["omega"], p["h"]
    dt = t[:, None] - t[None, :]
    d2 = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    K = np.where(dt > 0, omega * np.exp(-omega * np.where(dt > 0, dt, 0.0)), 0.0) \
        * np.exp(-d2 / (2 * h * h)) / (2 * math.pi * h * h)
    G = K.sum(1)
    lam = mu0 * bg_rate + theta * G
    comp = mu0 * len(t) + theta * np.sum(-np.expm1(-omega * (T[1] - t)))
    return float(np.sum(np.log(lam)) - comp), theta * G / lam


PARAMS = dict(mu0=0.6, tau_x=1.0, tau_t=1.0, theta=0.4, omega=1.5, h=0.3)


def test_window_mass_is_n_when_edge_corrected(data_fit):
    x, t, fit = data_fit
    bg = kde_background(fit, x, (0.0, 25.0))
    assert bg.mass / fit.n == pytest.approx(1.0, abs=1e-11)  # edge correction: unit mass per kernel
    assert bg.integral == len(t)
    # the library's raster masses agree with the closed form of the rectangle
    assert bg.mass == pytest.approx(float(np.sum(fit.weights * _rect_mass(fit.points, fit.bandwidths))), rel=1e-12)
    np.testing.assert_allclose(np.sort(bg.density), np.sort(_kde_density(fit, x)), rtol=1e-12)


@pytest.mark.parametrize("backend", ENGINES)
def test_loglik_matches_numpy_reference(data_fit, backend):
    x, t, fit = data_fit
    T = (0.0, 25.0)
    bg_rate = len(t) * _kde_density(fit, x) / (T[1] - T[0])
    ref, pi_ref = _reference(x, t, PARAMS, bg_rate, T)
    got = hp.hawkes.log_likelihood(x, t, PARAMS, window=T, background=fit, backend=backend)
    assert got == pytest.approx(ref, rel=1e-12, abs=1e-10)
    if backend == "cpu":
        exact = hp.hawkes.log_likelihood(x, t, PARAMS, window=T, background=fit, backend=backend, exact=True)
        assert exact == pytest.approx(ref, rel=1e-12, abs=1e-10)
        # tau_x, tau_t are not parameters of this model
        other = hp.hawkes.log_likelihood(x, t, {**PARAMS, "tau_x": 0.01, "tau_t": 50.0}, window=T, background=fit)
        assert other == got
        # a huge theta / mu0 ratio triggers the windowed guard's rebuild; still exact
        big = {**PARAMS, "mu0": 1e-9, "theta": 5.0}
        assert hp.hawkes.log_likelihood(x, t, big, window=T, background=fit) == pytest.approx(
            _reference(x, t, big, bg_rate, T)[0], rel=1e-12)
    pi = hp.hawkes.self_excitation_probabilities(x, t, PARAMS, window=T, background=fit, backend=backend)
    np.testing.assert_allclose(pi, pi_ref, rtol=1e-11, atol=1e-14)
    # the smoother background gives a different value (the option is not ignored)
    assert hp.hawkes.log_likelihood(x, t, PARAMS, window=T, backend=backend) != pytest.approx(got, rel=1e-3)


def test_huge_bandwidth_is_a_homogeneous_background():
    x, t = _events(60, seed=3)
    T = (float(t.min()), float(t.max()))
    fit = hp.kde.fit(x, _window(), method="fixed", bandwidth=1e4, progress=False, backend="cpu")
    area = (RECT[1] - RECT[0]) * (RECT[3] - RECT[2])
    p = PARAMS
    # closed form of a homogeneous spatial background: mu0 N / (|W| (T1 - T0)) per unit area and time
    ref, _ = _reference(x, t, p, np.full(len(t), len(t) / (area * (T[1] - T[0]))), T)
    got = hp.hawkes.log_likelihood(x, t, p, background=fit)
    assert got == pytest.approx(ref, abs=1e-4)
    # and a KDE of small bandwidth is not homogeneous
    narrow = hp.kde.fit(x, _window(), method="fixed", bandwidth=0.3, cutoff=math.inf, progress=False, backend="cpu")
    assert abs(hp.hawkes.log_likelihood(x, t, p, background=narrow) - ref) > 1.0


def test_mcmc_recovers_theta():
    x, t = hp.hawkes.simulate(mu=0.02, theta=0.5, omega=1.0, h=0.3, region=10.0, duration=100.0, seed=7)
    lo, hi = x.min(axis=0) - 1.0, x.max(axis=0) + 1.0
    win = hp.kde.Window.rectangle(lo[0], hi[0], lo[1], hi[1], 0.25)
    fit = hp.kde.fit(x, win, method="fixed", bandwidth=3.0, progress=False, backend="cpu")
    post = hp.hawkes.mcmc(x, t, n_iter=600, burn_in=200, chains=1, seed=3, progress=False, backend="cpu",
                          background=fit, init={"h": 0.5, "omega": 1.0, "theta": 0.5, "mu0": 0.5})
    theta = post.draws["theta"].ravel()
    assert post.fixed["tau_x"] == 1.0 and post.fixed["tau_t"] == 1.0
    assert abs(theta.mean() - 0.5) < 0.15, (theta.mean(), len(t))
    assert abs(post.draws["mu0"].mean() - 0.5) < 0.2
    # the posterior's self-excitation probabilities use the same background
    pi = hp.hawkes.self_excitation(post, n_draws=5, seed=0, progress=False)
    assert np.all(np.isfinite(np.asarray(pi.mean if hasattr(pi, "mean") and not callable(pi.mean) else pi)))
    with pytest.raises(NotImplementedError, match="background=KDEFit"):
        hp.hawkes.forecast_intensity(post, x, t, [t.max() + 1.0], x[:3], progress=False)


def test_bad_background_inputs(data_fit):
    x, t, fit = data_fit
    with pytest.raises(TypeError, match="background"):
        hp.hawkes.log_likelihood(x, t, PARAMS, background=42)
    with pytest.raises(ValueError, match="background"):
        hp.hawkes.log_likelihood(x, t, PARAMS, background="kde")
    small = hp.kde.fit(x[x[:, 0] < 5.0], hp.kde.Window.rectangle(0.0, 5.0, 0.0, 5.0, 0.25), method="fixed",
                       bandwidth=1.0, progress=False, backend="cpu")
    with pytest.raises(ValueError, match="background.*outside the KDE fit's window"):
        hp.hawkes.log_likelihood(x, t, PARAMS, background=small)
    with pytest.raises(ValueError, match="background.*2-D"):
        hp.hawkes.log_likelihood(x[:, 0], t, PARAMS, background=fit)
    other = hp.kde.Window.rectangle(-1.0, 11.0, -1.0, 6.0, 0.25)
    with pytest.raises(ValueError, match="spatial_window"):
        hp.hawkes.log_likelihood(x, t, PARAMS, background=fit, spatial_window=other)
    with pytest.raises(ValueError, match="sample"):
        hp.hawkes.mcmc(x, t, n_iter=2, burn_in=0, chains=1, background=fit, sample=("theta", "tau_x"),
                       fixed={"mu0": 1.0, "h": 1.0, "omega": 1.0, "tau_t": 1.0}, progress=False)
    with pytest.raises(TypeError, match="background"):
        hp.hawkes.mcmc(x, t, n_iter=2, burn_in=0, chains=1, background=object(), progress=False)


def test_engine_external_background_checks(data_fit):
    from hphawkes_py.hawkes.engine import make_engine

    x, t, fit = data_fit
    o = np.argsort(t, kind="stable")
    eng = make_engine(x[o], t[o], backend="cpu")
    with pytest.raises(ValueError, match="sums"):
        eng.set_external_background(np.ones(3), 1.0)
    with pytest.raises(ValueError, match="> 0"):
        eng.set_external_background(np.zeros(len(t)), 1.0)
    with pytest.raises(ValueError, match="integral"):
        eng.set_external_background(np.ones(len(t)), -1.0)
    S = np.linspace(0.5, 2.0, len(t))
    eng.set_external_background(S, 7.0)
    eng.set_background(0.1, 0.1)  # a no-op now
    np.testing.assert_array_equal(eng.background_sums(), S)
    eng.set_trigger(0.3, 1.5)
    assert eng._slot_params[0][2] == pytest.approx(4e-14 * 1e-6 * 0.5)  # bound (3) with own = min S
    assert eng.integral(2.0, 0.0, 1.5) == pytest.approx(14.0)
    with pytest.raises(ValueError, match="background=False"):
        eng.query_sums(x[:2], 1.0, 1.0, 1.0, 0.3, 1.5)


def test_posterior_mode_with_kde_background(data_fit):
    x, t, fit = data_fit
    mode = hp.hawkes.posterior_mode(x, t, background=fit, window=(0.0, 25.0), maxiter=200, backend="cpu")
    assert np.isfinite(mode["log_posterior"]) and mode["theta"] > 0
