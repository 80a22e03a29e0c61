"""Out-of-sample log scores of Hawkes forecasts (issue 14 §2): hp.hawkes.forecast_score.

A direct NumPy reference (all pairs, compensator by quadrature), the theta -> 0 limit, information
gains on simulated self-exciting and Poisson data, the CUDA engine on the emulator, bad input."""
from __future__ import annotations

import math

import numpy as np
import pytest
from engines import CUDA_ENGINES
from naive_hawkes import phi_d, trigger_sums
from scipy.integrate import quad
from scipy.special import logsumexp, ndtr

import hphawkes_py.hawkes as hk

KW = dict(backend="cpu", threads=1)
FIXED = {"tau_x": 1.0, "tau_t": 10.0}
P = dict(mu0=0.5, tau_x=1.0, tau_t=10.0, theta=0.6, omega=1.5, h=0.3)


def naive_score(x, t, p, origin, H, background="origin", window_excites=True):
    """Log score of the events in (origin, origin + H] by the definitions, all pairs; the
    compensator integrates the total rate numerically between consecutive event times.
    ``window_excites=False``: only the history triggers (the wrong, history-only score)."""
    x = np.asarray(x, float).reshape(len(t), -1)
    D = x.shape[1]
    w_end = origin + H
    T0 = t.min()
    hist = t <= origin
    win = (t > origin) & (t <= w_end)
    upto = t <= w_end
    src = upto if window_excites else hist
    xh, th, xe, te = x[hist], t[hist], x[win], t[win]
    r2 = ((xe[:, None, :] - xh[None, :, :]) ** 2).sum(-1)
    tx, tt = p["tau_x"], p["tau_t"]
    if background == "origin":
        c = ndtr(0.0) - ndtr((T0 - origin) / tt)
        B = (phi_d(r2, tx, D) * phi_d((origin - th) ** 2, tt, 1)).sum(1) / c
        bg_rate = lambda u: phi_d((origin - th) ** 2, tt, 1).sum() / c  # noqa: E731
    else:
        B = (phi_d(r2, tx, D) * phi_d((te[:, None] - th[None, :]) ** 2, tt, 1)).sum(1)
        bg_rate = lambda u: phi_d((u - th) ** 2, tt, 1).sum()  # noqa: E731
    # trigger sums over every earlier event, history and window (ties do not excite)
    G = trigger_sums(x[upto], t[upto], p["h"], p["omega"])[win[upto]]
    if not window_excites:
        G = (p["omega"] * np.exp(-p["omega"] * (te[:, None] - th[None, :])) * phi_d(r2, p["h"], D)).sum(1)
    tu = t[src]

    def rate(u):  # integral over space of lambda(., u): mu0 * background mass + theta * trigger mass
        d = u - tu
        return p["mu0"] * bg_rate(u) + p["theta"] * np.sum(np.where(d > 0, p["omega"] * np.exp(-p["omega"] * d), 0))

    knots = np.unique(np.concatenate([[origin, w_end], te]))
    comp = sum(quad(rate, a, b, epsabs=1e-13, epsrel=1e-12, limit=200)[0] for a, b in zip(knots[:-1], knots[1:]))
    lam = p["mu0"] * B + p["theta"] * G
    ls = np.log(lam).sum() - comp
    # background-only with the refitted mu0: n / sum_m [Phi((origin - t_m)/tau_t) - Phi((T0 - t_m)/tau_t)]
    mu0_bg = th.size / (ndtr((origin - th) / tt) - ndtr((T0 - th) / tt)).sum()
    bg_comp = sum(quad(bg_rate, a, b, epsabs=1e-13, epsrel=1e-12)[0] for a, b in zip(knots[:-1], knots[1:]))
    ls_bg = np.log(mu0_bg * B).sum() - mu0_bg * bg_comp
    return ls, ls_bg, mu0_bg, comp


@pytest.fixture(scope="module")
def tiny():
    """~150 events on [0, 3]^2 x [0, 60] with tied times, one event exactly at the origin and one
    exactly at the window's end."""
    x, t = hk.simulate(mu=0.3, theta=0.5, omega=1.5, h=0.3, region=3.0, duration=60.0, seed=11)
    t = np.round(t, 1)
    t[np.argmin(np.abs(t - 40.0))] = 40.0
    t[np.argmin(np.abs(t - 52.0))] = 52.0
    assert np.sum(np.diff(np.sort(t)) == 0) > 0
    return x, t


@pytest.mark.parametrize("background", ["origin", "model"])
def test_plug_in_score_matches_numpy_reference(tiny, background):
    x, t = tiny
    ls, ls_bg, mu0_bg, comp = naive_score(x, t, P, 40.0, 12.0, background)
    rev = slice(None, None, -1)  # any input order
    r = hk.forecast_score(P, x[rev], t[rev], origin=40.0, horizon=12.0, background=background, exact=True, **KW)
    n_win = int(np.sum((t > 40.0) & (t <= 52.0)))
    assert r.n_events == n_win > 10 and r.n_history == int(np.sum(t <= 40.0))
    assert r.log_score == pytest.approx(ls, rel=1e-9, abs=1e-9)
    assert r.background_log_score == pytest.approx(ls_bg, rel=1e-9, abs=1e-9)
    assert r.background_mu0[0] == pytest.approx(mu0_bg, rel=1e-12)
    assert r.expected_count == pytest.approx(comp, rel=1e-9)
    assert r.information_gain == pytest.approx((ls - ls_bg) / n_win, rel=1e-9)
    np.testing.assert_array_equal(np.sort(t[rev][r.event_index]), np.sort(t[(t > 40.0) & (t <= 52.0)]))
    # the windowed engine (default) agrees to far below the score's scale
    w = hk.forecast_score(P, x, t, origin=40.0, horizon=12.0, background=background, **KW)
    assert w.log_score == pytest.approx(ls, rel=1e-10, abs=1e-9)
    # Poisson reference: history's rate spread over the region given
    rate = np.sum(t <= 40.0) / (40.0 - t.min()) / 9.0
    rp = hk.forecast_score(P, x, t, origin=40.0, horizon=12.0, region=9.0, background=background, **KW)
    assert rp.poisson_log_score == pytest.approx(n_win * math.log(rate) - rate * 9.0 * 12.0, rel=1e-12)


def test_window_events_self_excite(tiny):
    """The window's earlier events excite later ones: the score matches the reference with them
    and not the history-only one."""
    x, t = tiny
    ls, *_ = naive_score(x, t, P, 40.0, 12.0)
    ls_hist, *_ = naive_score(x, t, P, 40.0, 12.0, window_excites=False)
    r = hk.forecast_score(P, x, t, origin=40.0, horizon=12.0, **KW)
    assert r.log_score == pytest.approx(ls, rel=1e-9)
    assert abs(ls_hist - r.log_score) > 1.0


def test_posterior_draws_combined_by_log_mean_exp(tiny):
    x, t = tiny
    post = hk.mcmc(x[t <= 40.0], t[t <= 40.0], n_iter=40, burn_in=10, chains=2, fixed=FIXED,
                   init={"theta": 0.5, "omega": 1.0, "h": 0.3, "mu0": 0.5}, seed=1, progress=False, **KW)
    r = hk.forecast_score(post, x, t, origin=40.0, horizon=12.0, n_draws=7, seed=5, **KW)
    _, flat = post.select_draws(7, 5)
    per = np.array([naive_score(x, t, {n: flat[n][k] for n in hk.PARAM_NAMES}, 40.0, 12.0)[0] for k in range(7)])
    np.testing.assert_allclose(r.log_score_draws, per, rtol=1e-9)
    assert r.log_score == pytest.approx(logsumexp(per) - math.log(7), rel=1e-9)
    assert r.expected_log_score == pytest.approx(per.mean(), rel=1e-9) and r.expected_log_score <= r.log_score
    assert 1.0 <= r.draw_weight_ess <= 7.0 and r.n_draws == 7
    # tau fixed: one refitted background-only model, the same for every draw
    assert np.ptp(r.background_log_score_draws) == 0.0
    d = r.to_dict()
    assert d["n_draws"] == 7 and "log_score_draws" not in d and "information_gain" in repr(r)
    assert list(r.summary().index) == ["hawkes", "background", "poisson"]


@pytest.mark.parametrize("background", ["origin", "model"])
def test_theta_to_zero_equals_background_only(tiny, background):
    x, t = tiny
    p0 = dict(P, theta=1e-40)
    r = hk.forecast_score(p0, x, t, origin=40.0, horizon=12.0, background=background, reference_mu0="same", **KW)
    assert r.log_score == pytest.approx(r.background_log_score, rel=1e-13, abs=1e-12)
    assert r.information_gain == pytest.approx(0.0, abs=1e-13)
    # the refitted reference equals the Hawkes model with theta -> 0 at the refitted mu0 (and not otherwise)
    ref = hk.forecast_score(p0, x, t, origin=40.0, horizon=12.0, background=background, **KW)
    at_fit = hk.forecast_score(dict(p0, mu0=ref.background_mu0[0]), x, t, origin=40.0, horizon=12.0,
                               background=background, **KW)
    assert at_fit.log_score == pytest.approx(ref.background_log_score, rel=1e-13, abs=1e-12)
    assert abs(ref.log_score - ref.background_log_score) > 1e-3


FIT_FIXED = {"tau_x": 1.0, "tau_t": 50.0}


def _fit(x, t):
    m = hk.posterior_mode(x, t, fixed=FIT_FIXED, start={"theta": 0.3, "omega": 1.0, "h": 0.2, "mu0": 0.5},
                          maxiter=300, **KW)
    return dict(FIT_FIXED, **{k: m[k] for k in ("h", "omega", "theta", "mu0")})


def test_information_gain_positive_on_hawkes_data_not_on_poisson_data():
    """Fitted at the posterior mode on the history (t <= 300), scored on (300, 350]. The region
    (40 x 40) is wide against tau_x = 1 so that the background's mass outside it is small (see the
    module notes: in a small region the trigger can stand in for a tighter background)."""
    origin, H, L = 300.0, 50.0, 40.0
    x, t = hk.simulate(mu=0.0003, theta=0.8, omega=1.0, h=0.1, region=L, duration=420.0, seed=4)
    fit = _fit(x[t <= origin], t[t <= origin])
    r = hk.forecast_score(fit, x, t, origin=origin, horizon=H, region=L * L, **KW)
    assert r.n_events > 50
    assert r.information_gain > 1.0, r
    assert r.information_gain_vs_poisson > 1.0, r
    xp, tp = hk.simulate(mu=0.0015, theta=1e-9, omega=1.0, h=0.1, region=L, duration=420.0, seed=4)
    fitp = _fit(xp[tp <= origin], tp[tp <= origin])
    rp = hk.forecast_score(fitp, xp, tp, origin=origin, horizon=H, region=L * L, **KW)
    assert rp.n_events > 50
    assert abs(rp.information_gain) < 0.01, rp
    # the self-exciting fit's trigger on Poisson data loses against the background-only model
    wrong = dict(fit, mu0=fitp["mu0"])
    rw = hk.forecast_score(wrong, xp, tp, origin=origin, horizon=H, region=L * L, **KW)
    assert rw.information_gain < -0.2, rw


@pytest.mark.parametrize("backend", CUDA_ENGINES)
def test_cuda_engine_equals_cpu(tiny, backend):
    x, t = tiny
    for bg in ("origin", "model"):
        c = hk.forecast_score(P, x, t, origin=40.0, horizon=12.0, background=bg, **KW)
        g = hk.forecast_score(P, x, t, origin=40.0, horizon=12.0, background=bg, backend=backend)
        assert g.backend == backend
        assert g.log_score == pytest.approx(c.log_score, rel=1e-12)
        assert g.background_log_score == pytest.approx(c.background_log_score, rel=1e-12)


def test_power_law_kernel_compensator(tiny):
    """The power-law trigger's window mass equals numerical integration of its density."""
    x, t = tiny
    kern = ("power-law", 2.5)
    r = hk.forecast_score(P, x, t, origin=40.0, horizon=12.0, kernel=kern, exact=True, **KW)
    r0 = hk.forecast_score(dict(P, theta=1e-40), x, t, origin=40.0, horizon=12.0, kernel=kern, **KW)
    om, pw = P["omega"], 2.5
    tu = t[t <= 52.0]
    dens = lambda d: (pw - 1) * om * (1 + om * d) ** (-pw)  # noqa: E731
    mass = sum(quad(dens, max(0.0, 40.0 - s), 52.0 - s)[0] for s in tu if s < 52.0)
    assert r.expected_count - r0.expected_count == pytest.approx(P["theta"] * mass, rel=1e-9)


def test_exp2_kernel_reduces_to_each_exponential_and_mixes_linearly(tiny):
    """kernel="exp2": all weight on one rate is that rate's exponential score (w = 1: omega,
    w = 0: omega2; a swapped weight fails), and the intensity at the window's events mixes the
    two exponential trigger sums linearly."""
    x, t = tiny
    om2 = 0.2
    kw = dict(origin=40.0, horizon=12.0, exact=True, **KW)
    e1 = hk.forecast_score(P, x, t, **kw)
    e2 = hk.forecast_score(dict(P, omega=om2), x, t, **kw)
    m1 = hk.forecast_score(dict(P, omega2=om2, w=1.0), x, t, kernel="exp2", **kw)
    m0 = hk.forecast_score(dict(P, omega2=om2, w=0.0), x, t, kernel="exp2", **kw)
    assert m1.log_score == pytest.approx(e1.log_score, rel=1e-12)
    assert m0.log_score == pytest.approx(e2.log_score, rel=1e-12)
    assert m0.expected_count == pytest.approx(e2.expected_count, rel=1e-12)
    wt = 0.3
    mh = hk.forecast_score(dict(P, omega2=om2, w=wt), x, t, kernel="exp2", **kw)
    # lambda = mu0 B + theta (w G1 + (1 - w) G2): from each exponential's log intensities
    lam1, lam2 = np.exp(e1.log_intensity), np.exp(e2.log_intensity)
    np.testing.assert_allclose(np.exp(mh.log_intensity), wt * lam1 + (1 - wt) * lam2, rtol=1e-11)
    assert mh.expected_count == pytest.approx(wt * e1.expected_count + (1 - wt) * e2.expected_count, rel=1e-11)
    with pytest.raises(ValueError, match="omega2"):
        hk.forecast_score(P, x, t, kernel="exp2", **kw)


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("kw, exc, match", [
    ({"origin": -1.0}, ValueError, "origin must lie strictly inside"),
    ({"origin": 0.0}, ValueError, "origin must lie strictly inside"),
    ({"origin": float("nan")}, ValueError, "origin must be finite"),
    ({"origin": "40"}, TypeError, "origin must be a real number"),
    ({"origin": True}, TypeError, "origin must"),
    ({"horizon": 0.0}, ValueError, "horizon must be > 0"),
    ({"horizon": -3.0}, ValueError, "horizon must be > 0"),
    ({"horizon": float("inf")}, ValueError, "horizon must be finite"),
    ({"horizon": 30.0}, ValueError, "origin \\+ horizon .* must be at most"),
    ({"end": 10.0}, ValueError, "end must be at or after the last event time"),
    ({"n_draws": 0}, ValueError, "n_draws must be >= 1"),
    ({"background": "kde"}, ValueError, "background must be one of"),
    ({"reference_mu0": "mle"}, ValueError, "reference_mu0 must be one of"),
    ({"poisson_lookback": -1.0}, ValueError, "poisson_lookback must be > 0"),
    ({"poisson_lookback": 1e6}, ValueError, "poisson_lookback must be at most"),
    ({"region": 0.0}, ValueError, "region must be > 0"),
    ({"kernel": "gauss"}, ValueError, "kernel must be one of"),
    ({"backend": "tpu"}, ValueError, "backend"),
])
def test_bad_input_names_the_argument(tiny, kw, exc, match):
    x, t = tiny
    args = dict(origin=40.0, horizon=12.0, **KW)
    args.update(kw)
    with pytest.raises(exc, match=match):
        hk.forecast_score(P, x, t, **args)


def test_bad_input_data_and_params(tiny):
    x, t = tiny
    with pytest.raises(ValueError, match="at least 2 events at or before"):
        hk.forecast_score(P, x, t, origin=float(np.sort(t)[0]) + 1e-9, horizon=1.0, **KW)
    with pytest.raises(ValueError, match="x and t"):
        hk.forecast_score(P, x[:-1], t, origin=40.0, horizon=1.0, **KW)
    with pytest.raises(ValueError, match="params must give exactly"):
        hk.forecast_score({"mu0": 1.0}, x, t, origin=40.0, horizon=1.0, **KW)
    with pytest.raises(ValueError, match="omega = .* is outside the range"):
        hk.forecast_score(dict(P, omega=1e300), x, t, origin=40.0, horizon=1.0, **KW)
    with pytest.raises(ValueError, match="region: the history's locations span no area"):
        hk.forecast_score(P, np.zeros_like(x), t, origin=40.0, horizon=1.0, **KW)
    # a window event outside the default region (bounding box of the history) scores -inf under Poisson
    x2 = x.copy()
    x2[np.flatnonzero((t > 40.0) & (t <= 52.0))[0]] = [4.5, 4.5]
    r = hk.forecast_score(P, x2, t, origin=40.0, horizon=12.0, **KW)
    assert r.poisson_log_score == -math.inf and math.isfinite(r.log_score)
    # an empty window: scores are minus the expected counts, and so is the gain (divided by max(n_events, 1))
    gap = hk.forecast_score(P, x, t, origin=40.0, horizon=1e-9, **KW)  # times are multiples of 0.1
    assert gap.n_events == 0 and gap.information_gain == gap.log_score - gap.background_log_score
    assert gap.log_score == pytest.approx(-gap.expected_count)
    assert gap.to_dict()["information_gain"] == gap.information_gain
