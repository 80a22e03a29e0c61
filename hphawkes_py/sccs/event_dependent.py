"""Event-dependent observation periods: the pseudo-likelihood of Farrington, Whitaker &
Ghebremichael (2011).

The SCCS likelihood conditions on each person's observation period, which is wrong when the
outcome shortens it (death after a myocardial infarction). Farrington et al. model the end of
observation given the event age ``t`` and replace the person-time of every interval by the
integral of a weight function over it,

    W_k = integral over interval k of w(t) dt,

    w(t) = f(aend | event at t)   if the observation ended early (``censor = 1``),
    w(t) = S(aend | event at t)   if it reached its nominal end (``censor = 0``),

with ``f``/``S`` the density/survival of the end of observation (``aend``) in a censoring
model; the SCCS model is then fitted with offset ``log W_k`` instead of ``log(time)``. The
censoring models are mixtures (with probability ``pi`` an exponential with rate ``1/rho``
for the time after the event, else a Weibull or a Gamma), on the age scale (``"EWA"``,
``"EGA"``: the end of observation has a Weibull/Gamma distribution in age, truncated at the
event age) or the interval scale (``"EWI"``, ``"EGI"``: in the time since the event). Each has
four parameters ``p = (log rho, log mu, logit pi, log nu)`` (the SCCS package's ``eventdepenobs``
without ``regress``): exponential rate ``lamA = exp(-p[0])``, Weibull/Gamma scale
``lamB = exp(-p[1])`` (Gamma rate ``nu * lamB``), ``pi = expit(p[2])``, shape ``nu = exp(p[3])``.
Ages are in years (days / 365.25), as in the SCCS package and SelfControlledCaseSeries.

All four are fitted by maximum likelihood to ``(aevent, aend, censor)`` of the cases (each
person's first outcome) and the one with the smallest AIC is used, as ``eventdepenobs`` does.

Day conventions (the SCCS package's): a person's day ``d`` is the age interval
``(a(d) - 1, a(d)]`` with ``a(d) = d - birth_day`` days; the event is at ``a(event day)``, the
end of observation at ``a(last day)``, moved one day on where the event is on the last day (a
zero time after the event has density zero in the interval models). Interval weights are the
integrals over the intervals' full age ranges; the weight function's integral over an
interval model is in closed form, over an age model by composite Gauss-Legendre quadrature.
Standard errors of the SCCS fit are the model-based ones (as the package reports them), not
sandwich errors of the pseudo-likelihood.

:meth:`~.data.SCCSData.from_eras` builds the design with ``event_dependent_observation=``.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import optimize, special

from .._validate import describe

__all__ = ["CENSORING_MODELS", "CensoringFit", "fit_censoring_models", "interval_weights", "check_censor",
           "censoring_loglik", "MIN_WEIGHT"]

#: The censoring models, in the SCCS package's order (ties in AIC go to the first).
CENSORING_MODELS = ("EWA", "EWI", "EGA", "EGI")
_NAMES = {"EWA": "exponential-Weibull (age)", "EWI": "exponential-Weibull (interval)",
          "EGA": "exponential-Gamma (age)", "EGI": "exponential-Gamma (interval)"}
#: Interval weights below this are raised to it (the SCCS package's floor, so that the
#: offset ``log W`` is finite); :meth:`SCCSData.from_eras` counts such rows in ``dropped``.
MIN_WEIGHT = 1e-15
#: ``S(aevent)`` of the Gamma age model below which the package divides by 1e-9 instead.
_GAMMA_SURVIVAL_FLOOR = 1e-9
DAYS_PER_YEAR = 365.25
_OPTIMISER_ROUNDS = 4
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(16)
_PANEL_YEARS = 30 / DAYS_PER_YEAR


#: Parameters of a censoring model: 4, or 7 with the package's ``regress=TRUE``.
N_PARAMS = {False: 4, True: 7}


def _parts(p, model=None, t=None, astart=None):
    """``(lamA, lamB, pi, nu)`` of a censoring model. With 7 parameters (the package's
    ``regress=TRUE``) ``log mu``, ``logit pi`` and ``log nu`` are linear: ``log mu = p1 + p2 x``
    and ``log nu = p5 + p6 x`` with ``x`` the log age at the start of observation (age models)
    or the log event age (interval models), ``logit pi = p3 + p4 t`` in the event age ``t``."""
    if len(p) == 4:
        return np.exp(-p[0]), np.exp(-p[1]), special.expit(p[2]), np.exp(p[3])
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.log(astart) if model in ("EWA", "EGA") else np.log(t)
    return np.exp(-p[0]), np.exp(-(p[1] + p[2] * x)), special.expit(p[3] + p[4] * t), np.exp(p[5] + p[6] * x)


def _gamma_logpdf(x, shape, rate):
    with np.errstate(divide="ignore"):
        return shape * np.log(rate) + (shape - 1) * np.log(x) - rate * x - special.gammaln(shape)


def _log_w_branch(model, p, t, aend, ended: bool, astart=None):
    """log of the censoring model's density (``ended``: observation ended early) or survival
    (observed to the nominal end) of the end of observation at ``aend`` given the event at ``t``
    (years): the log-likelihood terms of :func:`censoring_loglik` and the weight function of
    the pseudo-likelihood."""
    lamA, lamB, pi, nu = _parts(p, model, t, astart)
    u = aend - t
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if ended:
            exp_part = pi * lamA * np.exp(-lamA * u)
        else:
            exp_part = pi * np.exp(-lamA * u)
        if model == "EWA":
            h = np.exp(-((aend * lamB) ** nu - (t * lamB) ** nu))
            other = nu * lamB * (aend * lamB) ** (nu - 1) * h if ended else h
        elif model == "EWI":
            h = np.exp(-((u * lamB) ** nu))
            other = nu * lamB * (u * lamB) ** (nu - 1) * h if ended else h
        elif model == "EGA":
            rate = nu * lamB
            s_t = special.gammaincc(nu, rate * t)
            s_t = np.where(s_t == 0, _GAMMA_SURVIVAL_FLOOR, s_t)
            other = (np.exp(_gamma_logpdf(aend, nu, rate)) if ended else special.gammaincc(nu, rate * aend)) / s_t
        else:  # EGI
            rate = nu * lamB
            other = np.exp(_gamma_logpdf(u, nu, rate)) if ended else special.gammaincc(nu, rate * u)
        return np.log(exp_part + (1 - pi) * other)


def _log_w(model, p, t, aend, censor, astart=None):
    """:func:`_log_w_branch` for each censoring indicator (1: ended early)."""
    return np.where(censor == 1, _log_w_branch(model, p, t, aend, True, astart),
                    _log_w_branch(model, p, t, aend, False, astart))


def censoring_loglik(model, p, aevent, aend, censor, astart=None):
    """Log-likelihood of a censoring model (ages in years; ``censor`` 1 where observation
    ended early; ``astart``, the age at the start of observation, for the 7-parameter age
    models). Same terms as the SCCS package's ``mod_ewad2`` ... ``mod_egid2`` (which return
    -2 times it)."""
    p = np.asarray(p, dtype=np.float64)
    aevent, aend, ended = np.asarray(aevent, dtype=np.float64), np.asarray(aend, dtype=np.float64), np.asarray(censor) == 1
    a = np.ones_like(aevent) if astart is None else np.asarray(astart, dtype=np.float64)
    return float(np.sum(_log_w_branch(model, p, aevent[ended], aend[ended], True, a[ended]))
                 + np.sum(_log_w_branch(model, p, aevent[~ended], aend[~ended], False, a[~ended])))


@dataclass(frozen=True)
class CensoringFit:
    """The censoring models fitted to the cases, and the one used for the weights.

    Parameters
    ----------
    model : str
        The model used: the smallest AIC of those fitted (or the one asked for).
    params : dict
        ``{model: array (4,)}``, ``(log rho, log mu, logit pi, log nu)`` at the maximum; with
        ``regress`` ``{model: array (7,)}`` (intercepts and slopes, see :func:`fit_censoring_models`).
    loglik, aic : dict
        ``{model: float}``: maximised log-likelihood and ``AIC = 2 k - 2 loglik`` (``k`` = 4 or 7).
    converged : dict
        ``{model: bool}``: whether the optimiser reported convergence to a finite optimum.
    n_cases, n_ended_early : int
        Persons in the fit and those whose observation ended early (``censor = 1``).
    regress : bool
        The 7-parameter models (the package's ``regress=TRUE``).

    Examples
    --------
    >>> from hphawkes_py.sccs.event_dependent import CENSORING_MODELS, fit_censoring_models
    >>> rng = np.random.default_rng(1)
    >>> aevent = rng.uniform(50, 70, 300)
    >>> aend = np.minimum(aevent + rng.exponential(2.0, 300), aevent + 5)
    >>> censor = (aend < aevent + 5).astype(int)
    >>> fits = fit_censoring_models(aevent, aend, censor)
    >>> fits.model in CENSORING_MODELS, fits.n_cases, fits.n_ended_early
    (True, 300, 280)
    """

    model: str
    params: dict = field(repr=False)
    loglik: dict = field(repr=False)
    aic: dict = field(repr=False)
    converged: dict = field(repr=False)
    n_cases: int = 0
    n_ended_early: int = 0
    regress: bool = False

    def table(self) -> pd.DataFrame:
        """One row per model fitted: log-likelihood, AIC, convergence and whether it is used
        (the SCCS package's ``modelfit``, transposed)."""
        rows = [{"model": m, "description": _NAMES[m], "loglik": self.loglik[m], "aic": self.aic[m],
                 "converged": self.converged[m], "used": m == self.model} for m in self.params]
        return pd.DataFrame(rows).set_index("model")


def check_censor(censor, name):
    c = np.asarray(censor)
    if c.dtype.kind == "b":
        return c.astype(np.int64)
    try:
        cf = c.astype(np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be 0/1 (or True/False), got dtype {c.dtype}") from None
    bad = ~np.isin(cf, (0.0, 1.0))
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"{name} must be 0 (observed to the nominal end) or 1 (observation ended early): "
                         f"{int(bad.sum())} bad value(s), first at row {i} ({c[i].item()!r})")
    return cf.astype(np.int64)


def fit_censoring_models(aevent, aend, censor, *, models=CENSORING_MODELS, start=None, regress: bool = False,
                         astart=None) -> CensoringFit:
    """Fit the censoring models of the event-dependent observation pseudo-likelihood by
    maximum likelihood and pick the smallest AIC (the SCCS package's ``eventdepenobs``).

    Parameters
    ----------
    aevent, aend : array (n,)
        Age at the event and at the end of observation of each case, in years
        (``aend > aevent >= 0``; :meth:`SCCSData.from_eras` passes days / 365.25).
    censor : array (n,) of 0/1
        1 where the observation ended early (an end that may depend on the event, such as
        death), 0 where it reached its nominal end.
    models : sequence of str
        Which of ``"EWA"``, ``"EWI"``, ``"EGA"``, ``"EGI"`` to fit; the one with the smallest
        AIC is used. One name fits and uses that model.
    start : array (4,) or (7,), optional
        Starting values; default 0.1 for all (the package's ``initval``).
    regress : bool
        The package's ``regress=TRUE``: 7 parameters ``(log rho, a, b, c, d, e, f)`` with
        ``log mu = a + b x``, ``logit pi = c + d t`` and ``log nu = e + f x``, where ``t`` is the
        event age and ``x`` the log age at the start of observation (age models) or the log
        event age (interval models). Weights are then integrated by quadrature for all models.
    astart : array (n,), optional
        Age at the start of observation (years, > 0); needed with ``regress`` for the age models.

    Returns
    -------
    CensoringFit

    Raises
    ------
    ValueError
        Unknown model names, ages that are not finite or with ``aend <= aevent``, a ``censor``
        that is not 0/1, no cases, or no model fitted to a finite log-likelihood.

    Examples
    --------
    >>> from hphawkes_py.sccs.event_dependent import fit_censoring_models
    >>> aevent = np.array([60.1, 55.0, 70.3, 64.2, 58.9, 61.0])
    >>> aend = np.array([61.0, 56.0, 70.5, 65.2, 60.9, 61.2])
    >>> fits = fit_censoring_models(aevent, aend, [0, 0, 1, 0, 0, 1], models=["EWI"])
    >>> fits.model, round(fits.aic["EWI"], 3) == round(8 - 2 * fits.loglik["EWI"], 3)
    ('EWI', True)
    """
    if isinstance(models, str):
        models = (models,)
    models = tuple(models)
    unknown = [m for m in models if m not in CENSORING_MODELS]
    if unknown or not models:
        raise ValueError(f"models must name some of {CENSORING_MODELS}, got {list(models)!r}")
    aevent = np.asarray(aevent, dtype=np.float64)
    aend = np.asarray(aend, dtype=np.float64)
    censor = check_censor(censor, "censor")
    if not (aevent.shape == aend.shape == censor.shape) or aevent.ndim != 1:
        raise ValueError(f"aevent, aend and censor must be 1-d of one length, got shapes {aevent.shape}, "
                         f"{aend.shape}, {censor.shape}")
    if aevent.size == 0:
        raise ValueError("no cases to fit the censoring models to")
    bad = ~np.isfinite(aevent) | ~np.isfinite(aend) | (aevent < 0) | (aend <= aevent)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"ages must be finite with 0 <= aevent < aend: {int(bad.sum())} bad case(s), first at "
                         f"position {i} (aevent={float(aevent[i])!r}, aend={float(aend[i])!r})")
    regress = bool(regress)
    k = N_PARAMS[regress]
    if regress and any(m in ("EWA", "EGA") for m in models):
        if astart is None:
            raise ValueError("regress=True with the age models (EWA, EGA) needs astart, the age at the start of "
                             "observation")
    a = np.ones_like(aevent) if astart is None else np.asarray(astart, dtype=np.float64)
    if astart is not None and (a.shape != aevent.shape or not np.all(np.isfinite(a) & (a > 0)) or np.any(a > aevent)):
        raise ValueError(f"astart must be finite ages with 0 < astart <= aevent, one per case, got {describe(astart)}")
    p0 = np.full(k, 0.1) if start is None else np.asarray(start, dtype=np.float64)
    if p0.shape != (k,) or not np.all(np.isfinite(p0)):
        raise ValueError(f"start must be {k} finite numbers, got {start!r}")
    params, loglik, aic, conv = {}, {}, {}, {}
    for m in models:
        def objective(p, m=m):
            v = -2 * censoring_loglik(m, p, aevent, aend, censor, a)
            return v if np.isfinite(v) else 1e300
        best, ok = _maximise(objective, p0)
        if regress and start is None:
            # the 7-parameter model holds the 4-parameter one (slopes 0): starting there too
            # gives at least its likelihood, which the start at 0.1 can miss (local optima)
            p4 = fit_censoring_models(aevent, aend, censor, models=(m,)).params[m]
            nested, ok4 = _maximise(objective, np.array([p4[0], p4[1], 0.0, p4[2], 0.0, p4[3], 0.0]))
            if nested.fun < best.fun:
                best, ok = nested, ok4
        ll = -best.fun / 2
        params[m] = np.asarray(best.x, dtype=np.float64)
        loglik[m] = float(ll) if best.fun < 1e300 else -np.inf
        aic[m] = 2 * k - 2 * loglik[m]
        conv[m] = bool(np.isfinite(loglik[m]) and ok)
    finite = [m for m in models if np.isfinite(aic[m])]
    if not finite:
        raise ValueError(f"no censoring model could be fitted to a finite log-likelihood ({list(models)})")
    chosen = min(finite, key=lambda m: (aic[m], models.index(m)))
    return CensoringFit(model=chosen, params=params, loglik=loglik, aic=aic, converged=conv,
                        n_cases=int(aevent.size), n_ended_early=int(censor.sum()), regress=regress)


def _maximise(objective, p0):
    """Minimise ``objective`` (-2 log-likelihood): quasi-Newton from ``p0``, then rounds of
    Nelder-Mead and BFGS from the best point until a round gains nothing. Returns the best
    result and whether the last round's optimisers reported success."""
    # a flat or non-finite region stops BFGS early where the simplex still moves, and a
    # restarted simplex gets along curved ridges (the Gamma age model's). Trial points far out
    # overflow (exp of a parameter); they get the sentinel value, so their floating-point
    # warnings say nothing about the result
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        best = optimize.minimize(objective, p0, method="BFGS", options={"gtol": 1e-8, "maxiter": 2000})
        ok = False
        for _ in range(_OPTIMISER_ROUNDS):
            r2 = optimize.minimize(objective, best.x, method="Nelder-Mead",
                                   options={"xatol": 1e-7, "fatol": 1e-10, "maxfev": 3000})
            r3 = optimize.minimize(objective, r2.x, method="BFGS", options={"gtol": 1e-9, "maxiter": 2000})
            new = r3 if r3.fun <= r2.fun else r2
            ok = r2.success or r3.success
            gain = best.fun - new.fun
            if new.fun <= best.fun:
                best = new
            if gain < 1e-10:
                break
    return best, ok


def _interval_model_integral(model, p, lo, hi, aend, censor):
    """Closed-form integral of the interval models' weight over ``[lo, hi]`` (years)."""
    lamA, lamB, pi, nu = _parts(p)
    u1, u2 = aend - hi, aend - lo  # time after the event at the interval's ends
    ended = censor == 1
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # exp(-lamA u1) - exp(-lamA u2) by expm1: lamA can be tiny (an exponential part that
        # the fit pushed to rate ~0), where the plain difference is 0 and 0 / lamA is lost
        diff = np.exp(-lamA * u1) * -np.expm1(-lamA * (u2 - u1))
        exp_part = np.where(ended, pi * diff, pi * diff / lamA)
        if model == "EWI":
            # density part: the Weibull survival's difference; survival part: the integral of
            # exp(-(lamB u)^nu), an incomplete gamma function of order 1/nu
            x1, x2 = (lamB * u1) ** nu, (lamB * u2) ** nu
            f_part = np.exp(-x1) * -np.expm1(-(x2 - x1))
            s_part = special.gamma(1 / nu) / (nu * lamB) * (special.gammainc(1 / nu, x2) - special.gammainc(1 / nu, x1))
        else:  # EGI
            rate = nu * lamB
            f_part = special.gammainc(nu, rate * u2) - special.gammainc(nu, rate * u1)

            def mean_survival(x):  # integral of the Gamma survival from 0 to x
                return x * special.gammaincc(nu, rate * x) + nu / rate * special.gammainc(nu + 1, rate * x)

            s_part = mean_survival(u2) - mean_survival(u1)
        return exp_part + (1 - pi) * np.where(ended, f_part, s_part)


def _quadrature(model, p, lo, hi, aend, censor, astart):
    """Composite 16-point Gauss-Legendre integral of the weight over ``[lo, hi]`` (years), in
    panels of at most 30 days (the age models' weights are smooth inside the observation)."""
    n_panel = np.maximum(1, np.ceil((hi - lo) / _PANEL_YEARS).astype(np.int64))
    owner = np.repeat(np.arange(lo.shape[0]), n_panel)
    k = np.arange(owner.shape[0]) - np.repeat(np.cumsum(n_panel) - n_panel, n_panel)
    width = (hi - lo)[owner] / n_panel[owner]
    a = lo[owner] + k * width
    t = a[:, None] + (_GL_NODES[None, :] + 1) * (width[:, None] / 2)
    w = np.exp(_log_w(model, p, t, aend[owner][:, None], censor[owner][:, None], astart[owner][:, None]))
    panel = (w @ _GL_WEIGHTS) * (width / 2)
    return np.bincount(owner, weights=panel, minlength=lo.shape[0])


def interval_weights(fit: CensoringFit, lo, hi, aend, censor, model: str | None = None, astart=None) -> np.ndarray:
    """The pseudo-likelihood weights ``W_k``: the integral of the weight function of the
    censoring model over each interval ``(lo, hi]`` (ages in years) of a person with end of
    observation ``aend`` and ``censor``.

    Parameters
    ----------
    fit : CensoringFit
        The fitted censoring models.
    lo, hi, aend, censor : array (n_intervals,)
        Interval ends, the person's end of observation (years) and censoring indicator.
    model : str, optional
        The model to use; default ``fit.model``.
    astart : array (n_intervals,), optional
        The person's age at the start of observation (years); needed by the 7-parameter
        (``regress``) age models.

    Returns
    -------
    ndarray (n_intervals,)
        Non-negative weights (not yet floored at :data:`MIN_WEIGHT`).

    Examples
    --------
    >>> from hphawkes_py.sccs.event_dependent import fit_censoring_models, interval_weights
    >>> fits = fit_censoring_models([60.1, 55.0, 70.3, 64.2], [61.0, 56.0, 70.5, 65.2],
    ...                             [0, 0, 1, 1], models=["EWI"])
    >>> w = interval_weights(fits, np.array([59.0, 60.0]), np.array([60.0, 61.0]),
    ...                      np.array([61.0, 61.0]), np.array([0, 0]))
    >>> bool(np.all(w > 0))
    True
    """
    model = fit.model if model is None else model
    p = fit.params[model]
    lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
    aend, censor = np.asarray(aend, dtype=np.float64), np.asarray(censor)
    if model in ("EWI", "EGI") and len(p) == 4:
        return _interval_model_integral(model, p, lo, hi, aend, censor)
    a = np.ones_like(lo) if astart is None else np.broadcast_to(np.asarray(astart, dtype=np.float64), lo.shape)
    if len(p) == 7 and model in ("EWA", "EGA") and astart is None:
        raise ValueError("the 7-parameter age models need astart (the age at the start of observation)")
    return _quadrature(model, p, lo, hi, aend, censor, a)


def check_model_choice(choice):
    """``event_dependent_observation`` of :meth:`SCCSData.from_eras`: the models to fit, or None."""
    if choice is None or choice is False:
        return None
    if choice is True or choice == "auto":
        return CENSORING_MODELS
    if isinstance(choice, str) and choice in CENSORING_MODELS:
        return (choice,)
    raise ValueError(f"event_dependent_observation must be False, True/'auto' (the smallest AIC of "
                     f"{CENSORING_MODELS}) or one of those names, got {choice!r}")


def observation_weights(design, birth, obs_end, censor, case_person, case_day, models, person_ids, obs_start=None,
                        regress=False):
    """Pseudo-likelihood weights of the unmerged intervals of an interval design.

    Parameters
    ----------
    design : IntervalDesign
        Unmerged intervals (one per cut point), persons ``0..P-1``.
    birth, obs_end, censor : ndarray (P,)
        Day of birth, last observed day and censoring indicator of every person.
    case_person, case_day : ndarray
        Person index and day of the (single) outcome of every case.
    models : tuple of str
        The censoring models to fit (the smallest AIC is used).
    person_ids : ndarray (P,)
        The persons' ids (for error messages).
    obs_start : ndarray (P,), optional
        First observed day of every person (the age at it enters the 7-parameter models).
    regress : bool
        The 7-parameter censoring models.

    Returns
    -------
    weights : ndarray (n_intervals,)
        ``W_k`` for the intervals of cases (floored at :data:`MIN_WEIGHT`), the interval's
        days for persons without an outcome (who leave the design).
    fit : CensoringFit
    n_floored : int
        Intervals of cases whose weight was raised to :data:`MIN_WEIGHT`.
    """
    aevent_days = (case_day - birth[case_person]).astype(np.float64)
    aend_days = (obs_end[case_person] - birth[case_person]).astype(np.float64)
    # an event on the last day leaves no time after it: the package moves the end one day on
    aend_days = np.where(aend_days == aevent_days, aend_days + 1, aend_days)
    astart_person = None if obs_start is None else (obs_start - birth).astype(np.float64) / DAYS_PER_YEAR
    fit = fit_censoring_models(aevent_days / DAYS_PER_YEAR, aend_days / DAYS_PER_YEAR, censor[case_person],
                               models=models, regress=regress,
                               astart=None if astart_person is None else astart_person[case_person])
    weights = design.row_time.astype(np.float64).copy()
    is_case = np.zeros(birth.shape[0], dtype=bool)
    is_case[case_person] = True
    aend_person = np.zeros(birth.shape[0])
    aend_person[case_person] = aend_days
    k = np.flatnonzero(is_case[design.row_person])
    person = design.row_person[k]
    first_day = design.keys[k] - person * design.span + design.day0
    lo = (first_day - birth[person] - 1) / DAYS_PER_YEAR
    hi = (first_day + design.row_time[k] - 1 - birth[person]) / DAYS_PER_YEAR
    w = interval_weights(fit, lo, hi, aend_person[person] / DAYS_PER_YEAR, censor[person],
                         astart=None if astart_person is None else astart_person[person])
    bad = ~np.isfinite(w)
    if bad.any():
        raise ValueError(f"the {fit.model} censoring model's weight is not finite on {int(bad.sum())} interval(s), "
                         f"first of person_id={person_ids[person[bad][0]]!r}; choose another model with "
                         f"event_dependent_observation= (fitted: {fit.table()['aic'].round(3).to_dict()})")
    n_floored = int((w < MIN_WEIGHT).sum())
    weights[k] = np.maximum(w, MIN_WEIGHT)
    return weights, fit, n_floored
