"""Out-of-sample log scores of Hawkes forecasts (rolling-origin evaluation).

:func:`forecast_score` scores the events of a forecast window ``(origin, origin + horizon]``
under a fitted model, conditional on the history up to ``origin``, by the point-process log
score (the log-likelihood of the window's events; higher is better)::

    LS = sum_{i: origin < t_i <= origin + horizon} log lambda(x_i, t_i | H_{t_i})
         - integral_{origin}^{origin + horizon} integral_{R^D} lambda(s, u | H_u) ds du

and sets beside it the same score under two references, so that the difference per event is an
*information gain* (nats per event; Daley & Vere-Jones 2004, Harte & Vere-Jones 2005).

What the intensity is conditional on
------------------------------------
The score is the standard **one-step-ahead** one: the rate at ``t_i`` is conditional on every
event observed before ``t_i``, so **events inside the window do self-excite**: the trigger term
of ``lambda(x_i, t_i)`` sums over the history *and* the window's earlier events (ties do not
excite each other, as in the likelihood), and the compensator counts the offspring that every
event before the window's end is expected to have inside it.

The **background** is frozen at the origin: it is built from the events at or before
``origin`` only (window events never enter it). The model's background
``mu0 sum_m phi_D(s - x_m; tau_x) phi_1(u - t_m; tau_t)`` is a two-sided kernel smoother of
*all* events, past and future, so it has no causal version; two are offered (``background=``):

``"origin"`` (default)
    The smoother at the origin from the past events, with its temporal kernel renormalised to
    its mass inside the observed period ``[T0, origin]`` (edge correction)::

        b(s) = mu0 sum_{t_m <= origin} phi_D(s - x_m; tau_x) phi_1(origin - t_m; tau_t) / c,
        c = Phi(0) - Phi((T0 - origin) / tau_t)   (about 1/2),

    held constant over the window (a persistence forecast of the background rate).
    Without the correction the smoother at the end of the data is half its interior level,
    while ``mu0`` was fitted in the interior.
``"model"``
    The model's own background with the future events left out, as in
    :func:`~.forecast.forecast_intensity`: ``mu0 sum_{t_m <= origin} phi_D(s - x_m; tau_x)
    phi_1(u - t_m; tau_t)`` at each time ``u`` of the window: it starts at half the interior
    level and decays over the window (by ``Phi(-horizon / tau_t)`` at its end), so a model
    with triggering partly gains by making up for that deficit.

The references
--------------
* **background-only**: theta = 0 and the same background (same ``background=``, same
  bandwidths). With ``reference_mu0="refit"`` (default) its weight is the maximum-likelihood
  ``mu0`` of the background-only model on the history: ``mu0 = n / sum_m [Phi((origin - t_m) /
  tau_t) - Phi((T0 - t_m) / tau_t)]`` (closed form, about 1 -- the whole rate is background),
  once per bandwidth pair; with ``"same"`` it keeps each draw's ``mu0`` (then theta -> 0 gives
  the Hawkes score exactly, but the reference is handicapped: it predicts only the background
  fraction of the events).
* **homogeneous Poisson**: the history's event rate (over the whole history, or the last
  ``poisson_lookback``) spread uniformly over ``region`` (default the bounding box of the
  history's locations; a window event outside it scores ``-inf``).

Posterior draws
---------------
For a posterior, each draw ``k`` gives a log score ``l_k`` (the log density of the window's
events under that draw's parameters, computed exactly as above), and the reported
``log_score`` is the log posterior predictive density of the window's events,
``log mean_k exp(l_k)`` (log-sum-exp): the Bayesian one-step-ahead score, in which the posterior
is updated by the window's earlier events (chain rule). ``expected_log_score`` is ``mean_k
l_k`` (never larger, by Jensen). ``draw_weight_ess`` is the effective number of draws behind
the log-sum-exp; when it is small the Monte Carlo estimate is noisy. The intensity is never
averaged over draws before the logarithm.

Reading the gain
----------------
The gain measures what the trigger adds to *this* background, not only self-excitation. The
trigger is a second, tighter space-time smoother, and a fit can use it as one: on homogeneous
Poisson data in a region only a few ``tau_x`` wide (most of the background Gaussians' mass
falls outside the region while the compensator counts it), or with ``tau_t`` much shorter than
the horizon, the fitted model finds theta of 0.6 to 1.1 with a slow omega and gains 0.15 to 0.65 nats
per event over the background-only model, while both lose to the homogeneous Poisson
reference. In a region wide against ``tau_x`` the fit finds theta near 0 and the gain is 0
(tests/test_hawkes_forecast_score.py). Check the fitted omega and h, and the Poisson column.

The spatial kernels (Gaussian, or the trigger's power law, ``spatial_kernel=``) integrate to 1 over
R^D (the compensator is over the whole plane, as in
the likelihood; ``spatial_window=`` of the fit is not used here). The pair sums run on the
engine (``Engine.query_sums`` for the background, ``Engine.trigger_sums`` for the trigger: Numba
on the CPU, the CUDA kernels on a GPU or the emulator), windowed like
:func:`~.forecast.forecast_intensity` (absolute error of each rate below about
``1e-13 mu0 phi_D(0; tau_x) phi_1(0; tau_t)``) unless ``exact=True``.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from .._validate import check_in, check_int, check_positive, check_random_state, describe
from .compensator import background_integral_part, phi_diff
from .kde_background import refuse_kde_background
from .windows import RHO_DEFAULT, trigger_delta
from .kernels import check_kernel, kernel_label
from .model import _check_real_kind, draws_table, engine_factory, is_posterior, prepare_data

__all__ = ["forecast_score", "HawkesForecastScore"]

BACKGROUNDS = ("origin", "model")
REFERENCE_MU0 = ("refit", "same")


@dataclasses.dataclass(frozen=True, eq=False)
class HawkesForecastScore:
    """Log scores of one forecast window (see :func:`forecast_score`). Log scores in nats.

    Built by :func:`forecast_score` (the constructor's parameters are its attributes).

    Parameters
    ----------
    origin, horizon : float
        The window ``(origin, origin + horizon]`` (units of ``t``).
    n_events : int
        Events in the window.
    n_history : int
        Events at or before ``origin`` (the conditioning history).
    log_score : float
        Hawkes model: log posterior predictive density of the window's events (log-mean-exp over
        draws of the per-draw log scores; the plug-in log score for plug-in parameters).
    expected_log_score : float
        Hawkes model: mean over draws of the per-draw log scores.
    background_log_score : float
        Background-only model (theta = 0, same background), combined over draws the same way.
    poisson_log_score : float
        Homogeneous Poisson reference (``-inf`` when a window event lies outside its region).
    information_gain : float
        ``(log_score - background_log_score) / n_events``, nats per event. A window without events
        has the gain ``log_score - background_log_score = background_expected_count - expected_count``
        (each log score is minus its expected count), reported as it is: the per-event
        normalisation divides by ``max(n_events, 1)``.
    information_gain_vs_poisson : float
        ``(log_score - poisson_log_score) / max(n_events, 1)``, likewise.
    expected_count, background_expected_count, poisson_expected_count : float
        Expected number of events in the window (posterior mean of the compensator) per model.
    log_score_draws, background_log_score_draws : ndarray (K,)
        Per-draw log scores.
    draw_weight_ess : float
        Effective number of draws behind ``log_score`` (``(sum w)^2 / sum w^2``, ``w = exp(l_k)``).
    background_mu0 : ndarray (K,)
        The background-only model's weight per draw (refitted or the draw's own ``mu0``).
    event_index : ndarray (n_events,)
        Indices of the window's events in the caller's ``x``, ``t`` (time order).
    log_intensity, background_log_intensity : ndarray (n_events,)
        Mean over draws of ``log lambda`` at each window event, per model.
    background : str
        ``"origin"`` or ``"model"``.
    reference_mu0 : str
        ``"refit"`` or ``"same"``.
    poisson_rate : float
        The Poisson reference's rate per unit area (volume) per unit time.
    region_volume : float
        Area (volume) of its region.
    n_draws : int
        Draws used (1 for plug-in parameters).
    backend : str
        Engine that ran.

    Examples
    --------
    >>> x, t = hp.hawkes.simulate(mu=2.0, theta=0.2, omega=0.5, h=0.3, region=1.0, duration=20.0, seed=4)
    >>> fit = hp.hawkes.HawkesParams(mu0=0.8, tau_x=0.3, tau_t=3.0, theta=0.2, omega=0.5, h=0.3)
    >>> sc = hp.hawkes.forecast_score(fit, x, t, origin=15.0, horizon=3.0, backend="cpu")
    >>> sc.n_events, round(sc.expected_count, 2)
    (21, 10.68)
    >>> sc.summary().index.tolist()
    ['hawkes', 'background', 'poisson']
    """

    origin: float
    horizon: float
    n_events: int
    n_history: int
    log_score: float
    expected_log_score: float
    background_log_score: float
    poisson_log_score: float
    information_gain: float
    information_gain_vs_poisson: float
    expected_count: float
    background_expected_count: float
    poisson_expected_count: float
    log_score_draws: np.ndarray
    background_log_score_draws: np.ndarray
    draw_weight_ess: float
    background_mu0: np.ndarray
    event_index: np.ndarray
    log_intensity: np.ndarray
    background_log_intensity: np.ndarray
    background: str
    reference_mu0: str
    poisson_rate: float
    region_volume: float
    n_draws: int
    backend: str

    def to_dict(self) -> dict:
        """The scalars as a plain ``dict`` (JSON-ready: non-finite values become ``None``)."""
        out = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if isinstance(v, np.ndarray):
                continue
            if isinstance(v, float) and not math.isfinite(v):
                v = None
            out[f.name] = v
        return out

    def summary(self):
        """One row per model: log score, per event (divided by ``max(n_events, 1)``, as the gains),
        expected count, information gain of the Hawkes model."""
        import pandas as pd

        n = max(self.n_events, 1)
        rows = {
            "hawkes": (self.log_score, self.expected_count, 0.0),
            "background": (self.background_log_score, self.background_expected_count, self.information_gain),
            "poisson": (self.poisson_log_score, self.poisson_expected_count, self.information_gain_vs_poisson),
        }
        return pd.DataFrame(
            {"log_score": [r[0] for r in rows.values()],
             "per_event": [r[0] / n for r in rows.values()],
             "expected_count": [r[1] for r in rows.values()],
             "hawkes_gain_per_event": [r[2] for r in rows.values()]},
            index=pd.Index(list(rows), name="model"))

    def __repr__(self) -> str:
        return (f"HawkesForecastScore(origin={self.origin:g}, horizon={self.horizon:g}, n_events={self.n_events}, "
                f"log_score={self.log_score:.6g}, background_log_score={self.background_log_score:.6g}, "
                f"information_gain={self.information_gain:.4g} nats/event, background={self.background!r}, "
                f"draws={self.n_draws}, backend={self.backend!r})")


def _log_mean_exp(v: np.ndarray) -> float:
    m = float(np.max(v))
    if not math.isfinite(m):
        return m
    return m + math.log(float(np.mean(np.exp(v - m))))


def _weight_ess(v: np.ndarray) -> float:
    m = float(np.max(v))
    if not math.isfinite(m):
        return math.nan
    w = np.exp(v - m)
    return float(w.sum() ** 2 / np.sum(w * w))


def _check_real_scalar(value: Any, name: str) -> float:
    _check_real_kind(value, name)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {describe(value)}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {v}")
    return v


def _trigger_survival(d: np.ndarray, kernel, omega: float, omega2=None, w=None) -> np.ndarray:
    """P(delay > d) of the trigger kernel: exp(-omega d), (1 + omega d)^(1 - p) (power law) or
    w exp(-omega d) + (1 - w) exp(-omega2 d) ("exp2")."""
    if kernel.name == "power-law":
        return np.exp((1.0 - kernel.p) * np.log1p(omega * d))
    if kernel.name == "exp2":
        return w * np.exp(-omega * d) + (1.0 - w) * np.exp(-omega2 * d)
    return np.exp(-omega * d)


def _trigger_window_mass(d0: np.ndarray, H: float, kernel, omega: float, omega2=None, w=None) -> np.ndarray:
    """P(d0 < delay <= d0 + H) for d0 >= 0 (accurate for small H: expm1/log1p)."""
    if kernel.name == "power-law":
        # (1 + w d0)^(1-p) - (1 + w (d0 + H))^(1-p) = S(d0) (1 - ((1 + w(d0+H)) / (1 + w d0))^(1-p))
        p = kernel.p
        return _trigger_survival(d0, kernel, omega) * -np.expm1((1.0 - p) * np.log1p(omega * H / (1.0 + omega * d0)))
    if kernel.name == "exp2":
        return (w * np.exp(-omega * d0) * -math.expm1(-omega * H)
                + (1.0 - w) * np.exp(-omega2 * d0) * -math.expm1(-omega2 * H))
    return np.exp(-omega * d0) * -math.expm1(-omega * H)


def _check_window(ts, origin, horizon, end) -> tuple:
    """The scored window (origin, origin + horizon] checked against the sorted times ``ts``: inside the
    observation period (up to ``end``, default the last event), with at least 2 events of history.
    Returns ``(origin, horizon, window end, history events, events up to the window's end)``."""
    T0, t_last = float(ts[0]), float(ts[-1])
    origin = _check_real_scalar(origin, "origin")
    horizon = _check_real_scalar(horizon, "horizon")
    if not horizon > 0:
        raise ValueError(f"horizon must be > 0, got {horizon}")
    if end is None:
        end_v = t_last
    else:
        end_v = _check_real_scalar(end, "end")
        if end_v < t_last:
            raise ValueError(f"end must be at or after the last event time {t_last!r}, got {end_v!r}")
    if not T0 < origin < end_v:
        raise ValueError(f"origin must lie strictly inside the data's time range ({T0!r}, {end_v!r}), got {origin!r}")
    w_end = origin + horizon
    if w_end > end_v:
        raise ValueError(f"origin + horizon = {w_end!r} must be at most the end of the observation period "
                         f"{end_v!r} ({'the last event time' if end is None else 'end'}; events after it are "
                         "unobserved, so the window would be scored as empty there); shorten horizon or give end=")
    n_hist = int(np.searchsorted(ts, origin, side="right"))
    n_end = int(np.searchsorted(ts, w_end, side="right"))
    if n_hist < 2:
        raise ValueError(f"origin must leave at least 2 events at or before it (the history), got {n_hist}")
    return origin, horizon, w_end, n_hist, n_end


def _window_backgrounds(factory, flat, rates, x_ev, t_ev, th, T0, origin, horizon, w_end, background, exact,
                        n_hist) -> dict:
    """Per distinct bandwidth pair (tau_x, tau_t) of the draws ``flat``: the background sums B_i at the
    window's events ``x_ev``, ``t_ev`` from the history ``th`` (frozen at ``origin`` or the model's, as
    ``background`` says), their integral over the window (origin, w_end], and the background-only model's
    refitted mu0 (history events per unit of background mass). ``rates(k)``: draw k's extra trigger
    keywords."""
    eng_h = factory.build()
    n_ev = len(t_ev)
    bg_cache: dict = {}
    eng_x = None
    for k in range(flat["h"].size):
        key = (float(flat["tau_x"][k]), float(flat["tau_t"][k]))
        if key in bg_cache:
            continue
        tau_x, tau_t = key
        h, om = float(flat["h"][k]), float(flat["omega"][k])
        if background == "origin":
            c = float(phi_diff(np.array([0.0]), np.array([(T0 - origin) / tau_t]))[0])
            B = (eng_h.query_sums(x_ev, origin, tau_x, tau_t, h, om, trigger=False, **rates(k))[0] / c if n_ev
                 else np.zeros(0))
            z = (origin - th) / tau_t
            IB = horizon * float(np.sum(np.exp(-0.5 * z * z))) / (math.sqrt(2.0 * math.pi) * tau_t) / c
        else:
            B = np.array([eng_h.query_sums(x_ev[i:i + 1], float(t_ev[i]), tau_x, tau_t, h, om, trigger=False,
                                           **rates(k))[0][0] for i in range(n_ev)])
            IB = float(np.sum(phi_diff((w_end - th) / tau_t, (origin - th) / tau_t)))
        B = np.asarray(B, dtype=np.float64)
        if not exact and np.any(B == 0.0):
            # the window's cut-off can leave a zero sum (e.g. "model" far past the origin); sum those exactly
            eng_x = eng_x if eng_x is not None else factory.build(exact=True)
            for i in np.flatnonzero(B == 0.0):
                ui = origin if background == "origin" else float(t_ev[i])
                B[i] = eng_x.query_sums(x_ev[i:i + 1], ui, tau_x, tau_t, h, om, trigger=False, **rates(k))[0][0] / (
                    c if background == "origin" else 1.0)
        mu0_fit = n_hist / background_integral_part(th, tau_t, (T0, origin))
        bg_cache[key] = (B, IB, mu0_fit)
    return bg_cache


def _window_trigger_sums(factory, flat, rates, xs, ts, n_hist, n_end, origin, w_end, exact, D, kp, sq,
                         rho) -> np.ndarray:
    """Trigger sums G (draws x window events) at the window's events (``xs``, ``ts`` sorted; the window's
    events are ``n_hist:n_end``) over every earlier event, history and window, on an engine holding the
    events from the trigger's cut-off before ``origin`` to the window's end ``w_end``."""
    K, n_ev = flat["h"].size, n_end - n_hist
    G = np.zeros((K, n_ev))
    if n_ev:
        if exact:
            lo = 0
        else:
            cut = max(trigger_delta(n_end + 1, D, float(flat["tau_x"][k]), float(flat["tau_t"][k]),
                                    float(flat["h"][k]), float(flat["omega"][k]), rho, p=kp.p, q=sq, **rates(k))
                      for k in range(K))
            lo = 0 if not math.isfinite(cut) else int(np.searchsorted(ts, origin - cut, side="left"))
        lo = min(lo, n_hist - 1)
        sub = prepare_data(xs[lo:n_end], ts[lo:n_end], (float(ts[lo]), w_end))
        eng_g = factory.replace(data=sub).build()
        for k in range(K):
            eng_g.set_background(float(flat["tau_x"][k]), float(flat["tau_t"][k]))
            # package-internal: the slot's cut-off for this call's rho (theta <= mu0 / rho for every draw)
            eng_g._set_trigger(float(flat["h"][k]), eng_g._rates(float(flat["omega"][k]), **rates(k)), 0, rho)
            G[k] = eng_g.trigger_sums(0)[n_hist - lo:]
    return G


def _poisson_reference(ts, hist_x, x_ev, n_hist, origin, horizon, lookback, volume, whole_history,
                       default_region) -> tuple:
    """The homogeneous Poisson reference: its rate per unit volume and time ``c_p`` (the events of the
    last ``lookback`` before ``origin`` over ``volume``), its expected count in the window and its log
    score of the window's events ``x_ev`` (-inf when one lies outside the history's bounding box, the
    default region)."""
    n_ev = len(x_ev)
    if whole_history:
        n_look = n_hist
    else:
        n_look = n_hist - int(np.searchsorted(ts, origin - lookback, side="right"))
    rate_t = n_look / lookback
    c_p = rate_t / volume
    comp_p = rate_t * horizon
    if default_region and n_ev:
        lo_b, hi_b = hist_x.min(0), hist_x.max(0)
        outside = int(np.sum(np.any((x_ev < lo_b) | (x_ev > hi_b), axis=1)))
    else:
        outside = 0
    if n_ev and (outside or c_p == 0.0):
        ls_p = -math.inf
    else:
        ls_p = (n_ev * math.log(c_p) if n_ev else 0.0) - comp_p
    return c_p, comp_p, ls_p


def forecast_score(posterior: Any, x: Any, t: Any, *, origin: Any, horizon: Any, end: Any = None,
                   n_draws: int = 200, background: str = "origin", reference_mu0: str = "refit",
                   poisson_lookback: Any = None, region: Any = None, seed: Any = None, backend: str = "auto",
                   threads: int | None = None, dtype: Any = np.float64, exact: bool = False,
                   kernel: Any = None, spatial_kernel: Any = None) -> HawkesForecastScore:
    """Log score of the events in ``(origin, origin + horizon]`` given the history up to ``origin``,
    under the Hawkes model, the background-only model and a homogeneous Poisson process.

    The one-step-ahead point-process log score: ``sum_i log lambda(x_i, t_i) - integral of lambda``
    over the window, with the rate at ``t_i`` conditional on every earlier event (window events
    self-excite; the background is frozen at the origin). See the module notes of
    :mod:`hphawkes_py.hawkes.scoring` for the background (``background=``), the references and
    how posterior draws are combined (log-mean-exp of per-draw log densities).

    Parameters
    ----------
    posterior : HawkesPosterior, HawkesParams or dict
        Posterior draws (``n_draws`` of them, chosen at random) or plug-in parameters, fitted to
        data up to ``origin`` (or earlier) for an honest out-of-sample score.
    x : array_like (N,) or (N, D)
        Event locations, history and window (and possibly later events, ignored). Any order.
    t : array_like (N,)
        Their times.
    origin : float
        Forecast origin: events at or before it are the history, strictly inside the data's
        time range (at least 2 events at or before it).
    horizon : float
        Length of the window (> 0, units of ``t``).
    end : float, optional
        End of the observation period (default: the last event time); the window must end by it.
    n_draws : int
        Posterior draws used (all when fewer are stored).
    background : {"origin", "model"}
        Background frozen at the origin with edge correction (default), or the model's
        background of the past events evaluated through the window (no correction).
    reference_mu0 : {"refit", "same"}
        Background-only model's weight: its maximum-likelihood value on the history, or each
        draw's ``mu0``.
    poisson_lookback : float, optional
        The Poisson reference's rate is the history's events per unit time over the last
        ``poisson_lookback`` before the origin (default: the whole history). It must reach back
        past the last event before the origin (``poisson_lookback > origin - t_last``): a lookback
        holding no event estimates the rate 0, under which every window event is impossible
        (log score ``-inf``, gain ``+inf``), an artefact of the estimate, not information.
    region : float, optional
        Area (volume) over which the Poisson reference spreads its events, assuming every window
        event lies inside; default the bounding box of the history's locations.
    seed : None, int or Generator
        Chooses the draws.
    backend, threads, dtype, exact : str, int or None, dtype, bool
        As in :func:`~hphawkes_py.hawkes.log_likelihood`.
    kernel : "exponential", "power-law", ("power-law", p) or "exp2", optional
        Temporal trigger; default the posterior's, else exponential.
    spatial_kernel : "gaussian", "power-law" or ("power-law", q), optional
        Spatial trigger (scale ``h``); default the posterior's, else Gaussian.

    Returns
    -------
    HawkesForecastScore
        Log scores (nats) of the Hawkes, background-only and Poisson models on the window.

    Examples
    --------
    The 17 events of the 8 hours after hour 40, scored given the 167 before:

    >>> x, t = hp.hawkes.simulate(mu=0.5, theta=0.5, omega=2.0, h=0.1, region=2.0, duration=50.0, seed=1)
    >>> p = hp.hawkes.HawkesParams(mu0=0.5, tau_x=0.5, tau_t=5.0, theta=0.5, omega=2.0, h=0.1)
    >>> sc = hp.hawkes.forecast_score(p, x, t, origin=40.0, horizon=8.0, backend="cpu")
    >>> sc.n_events, sc.n_history, round(sc.log_score, 2), round(sc.background_log_score, 2)
    (17, 167, -34.69, -41.1)
    >>> round(sc.information_gain, 3)  # nats per event over the background-only model
    0.377
    """
    refuse_kde_background(posterior, "forecast_score")
    data = prepare_data(x, t, None)
    ts, xs = data.t_sorted, data.x_sorted
    T0 = float(ts[0])
    D = data.dim
    origin, horizon, w_end, n_hist, n_end = _check_window(ts, origin, horizon, end)
    n_draws = check_int(n_draws, "n_draws", minimum=1)
    check_in(background, "background", BACKGROUNDS)
    check_in(reference_mu0, "reference_mu0", REFERENCE_MU0)
    if poisson_lookback is None:
        lookback = origin - T0
    else:
        lookback = check_positive(poisson_lookback, "poisson_lookback")
        if lookback > origin - T0:
            raise ValueError(f"poisson_lookback must be at most the history's length origin - T0 = {origin - T0!r} "
                             f"(T0 = the first event time), got {lookback!r}")
        if n_hist == int(np.searchsorted(ts, origin - lookback, side="right")):
            # (origin - lookback, origin] holds no event: the reference's rate would be 0
            t_last = float(ts[n_hist - 1])
            raise ValueError(f"poisson_lookback must be > origin - t_last = {origin - t_last!r} (t_last = {t_last!r}, "
                             f"the last event at or before the origin), so that the lookback holds at least one "
                             f"event; got {lookback!r}, which holds none: the Poisson reference's rate would be 0 "
                             f"and every window event impossible (log score -inf)")
    hist_x = xs[:n_hist]
    if region is None:
        volume = float(np.prod(np.ptp(hist_x, axis=0)))
        if not volume > 0:
            raise ValueError("region: the history's locations span no area (volume), so the Poisson reference has "
                             "no default region; give region= (its area)")
    else:
        volume = check_positive(region, "region")
    rng = check_random_state(seed)
    if kernel is None:
        kernel = posterior.kernel if is_posterior(posterior) else "exponential"
    kp = check_kernel(kernel)
    # history-only engine: the background sums (never sees the window's events)
    hist = prepare_data(hist_x, ts[:n_hist], (T0, origin))
    if spatial_kernel is None:
        spatial_kernel = posterior.spatial_kernel if is_posterior(posterior) else "gaussian"
    factory = engine_factory(hist, backend=backend, dtype=dtype, threads=threads, exact=exact,
                             kernel=kernel_label(kp), spatial_kernel=spatial_kernel)
    sq = factory.spatial_kernel.q
    flat = draws_table(posterior, n_draws, rng, kp, factory.dtype, "posterior_or_params")

    def rates(k):  # the second rate and weight of draw k ("exp2"), as engine keywords
        return {n: float(flat[n][k]) for n in ("omega2", "w") if n in flat}
    K = flat["h"].size
    n_ev = n_end - n_hist
    x_ev, t_ev = xs[n_hist:n_end], ts[n_hist:n_end]
    rho = min(RHO_DEFAULT, float(np.min(flat["mu0"] / flat["theta"])) / 16.0)

    th = ts[:n_hist]
    # ---- the background per bandwidth pair and the trigger sums per draw, at the window's events
    bg_cache = _window_backgrounds(factory, flat, rates, x_ev, t_ev, th, T0, origin, horizon, w_end, background,
                                   exact, n_hist)
    G = _window_trigger_sums(factory, flat, rates, xs, ts, n_hist, n_end, origin, w_end, exact, D, kp, sq, rho)

    # ---- per-draw scores
    ls = np.empty(K)
    ls_bg = np.empty(K)
    mu0_bg = np.empty(K)
    comp = np.empty(K)
    comp_bg = np.empty(K)
    loglam = np.zeros(n_ev)
    loglam_bg = np.zeros(n_ev)
    d_hist = origin - th
    d_win = w_end - t_ev
    with np.errstate(divide="ignore"):
        for k in range(K):
            B, IB, mu0_fit = bg_cache[(float(flat["tau_x"][k]), float(flat["tau_t"][k]))]
            mu0, theta, om = float(flat["mu0"][k]), float(flat["theta"][k]), float(flat["omega"][k])
            trig = float(np.sum(_trigger_window_mass(d_hist, horizon, kp, om, **rates(k))))
            trig += float(np.sum(1.0 - _trigger_survival(d_win, kp, om, **rates(k)))) if n_ev else 0.0
            lam = np.log(mu0 * B + theta * G[k])
            comp[k] = mu0 * IB + theta * trig
            ls[k] = float(np.sum(lam)) - comp[k]
            m_bg = mu0_fit if reference_mu0 == "refit" else mu0
            mu0_bg[k] = m_bg
            lam_bg = np.log(m_bg * B)
            comp_bg[k] = m_bg * IB
            ls_bg[k] = float(np.sum(lam_bg)) - comp_bg[k]
            loglam += lam / K
            loglam_bg += lam_bg / K

    # ---- homogeneous Poisson reference
    c_p, comp_p, ls_p = _poisson_reference(ts, hist_x, x_ev, n_hist, origin, horizon, lookback, volume,
                                           poisson_lookback is None, region is None)

    LS, LS_bg = _log_mean_exp(ls), _log_mean_exp(ls_bg)
    # per event; a window without events still has a gain, minus the difference of the expected counts
    gain = (LS - LS_bg) / max(n_ev, 1)
    gain_p = (LS - ls_p) / max(n_ev, 1)
    return HawkesForecastScore(
        origin=origin, horizon=horizon, n_events=int(n_ev), n_history=n_hist, log_score=LS,
        expected_log_score=float(np.mean(ls)), background_log_score=LS_bg, poisson_log_score=float(ls_p),
        information_gain=float(gain), information_gain_vs_poisson=float(gain_p),
        expected_count=float(np.mean(comp)), background_expected_count=float(np.mean(comp_bg)),
        poisson_expected_count=float(comp_p), log_score_draws=ls, background_log_score_draws=ls_bg,
        draw_weight_ess=_weight_ess(ls), background_mu0=mu0_bg, event_index=data.order[n_hist:n_end].copy(),
        log_intensity=loglam, background_log_intensity=loglam_bg, background=background,
        reference_mu0=reference_mu0, poisson_rate=float(c_p), region_volume=float(volume), n_draws=int(K),
        backend=factory.backend)
