"""Time-trend adjustment of the discrete Poisson scans' expected cases (space-time and purely temporal),
as SaTScan does it.

A space-time Poisson analysis compares each cylinder's cases with the cases its population would have
if the risk were the same everywhere and at all times. When the risk changes over the study period
for everyone (more cases every year as a disease becomes commoner, or as it is better reported), that
change alone makes the later cylinders look like clusters. SaTScan's ``TimeTrendAdjustmentType``
takes it out of the expected cases: each day's expected cases are those of the population times a
weight ``w_t`` of the day, normalised so that the C cases are all expected (a location keeps its share
of the expected cases, a cylinder gets ``mu = E_Z sum_{t in I} w_t / sum_t w_t``), and the Monte Carlo
draws the cases in proportion to those expectations (SaTScan's ``CPoissonModel::AdjustMeasure``):

* ``"nonparametric"`` (``TimeTrendAdjustmentType=1``): ``w_t`` = the cases of day t, so that every
  day's expected cases are its observed cases; only the spatial distribution of each day's cases is
  left to be unusual.
* ``"loglinear"`` with a percentage p per year (``TimeTrendAdjustmentType=2``, ``TimeTrendPercentage``):
  ``w_t = exp(beta t)``, ``beta = log(1 + p / 100) / 365.25`` per day.
* ``"loglinear"`` estimated (``TimeTrendAdjustmentType=3``): beta is the maximum likelihood estimate of
  the log-linear trend of the daily case totals against the daily expected cases
  (:func:`~.cpu_temporal.fit_trend`, SaTScan's ``LinearTimeTrend`` with its convergence 1e-7).

* ``"logquadratic"`` (``TimeTrendAdjustmentType=5``): ``w_t = exp(beta t + beta2 t^2)``, the trend the
  maximum likelihood fit of ``E c_t = m_t exp(b0 + b1 (t + 1) + b2 (t + 1)^2)`` to the daily totals
  (:func:`fit_quadratic_trend`, SaTScan's ``QuadraticTimeTrend``: Newton-Raphson from
  ``(log mean, 0, 0)``), ``beta = b1``, ``beta2 = b2``, as SaTScan's ``AdjustForTrend`` applies them
  (its ``t`` counted from 0 there, from 1 in the fit). SaTScan reports the risk function
  ``e^(alpha + beta t + beta2 t^2)``, ``alpha = b0 + b1``, "where t=(day - <start>)".

The purely temporal scan does the same on its time units of ``L`` days (``TimeAggregationLength``): t
counts units, beta is per unit (``L log(1 + p / 100) / 365.25`` for a given p), and the estimate fits
the units' cases against their expected cases before adjustment (a population that changes in time
included). The nonparametric adjustment would expect every unit's cases exactly, so SaTScan refuses it
there, as here.

SaTScan reports the trend as the percentage change per day (for day units of any length):
``100 (exp(beta / L) - 1)`` (0 within 1e-8), "adjusting for time trend with a daily increase of ...%.".
"""
from __future__ import annotations

import math

import numpy as np

from .cpu_temporal import TREND_CONVERGED, TREND_NEG_INF, TREND_NOT_CONVERGED, TREND_POS_INF, TREND_UNDEFINED, \
    fit_trend

__all__ = ["time_trend_weights", "time_trend_text", "fit_quadratic_trend", "check_time_trend", "weekly_expectations",
           "TIME_TRENDS"]

#: the adjustments :func:`time_trend_weights` makes (None: none)
TIME_TRENDS = (None, "nonparametric", "loglinear", "logquadratic")
#: :func:`fit_quadratic_trend`'s status when its Newton matrix is singular
TREND_SINGULAR = 5
#: Newton-Raphson iterations before a trend is declared not converged (SaTScan's MAX_CONVERGENCE_ITERATIONS)
MAX_ITERATIONS = 1000000
#: days per year in SaTScan's conversion of a yearly percentage (AVERAGE_DAYS_IN_YEAR)
DAYS_PER_YEAR = 365.25
#: Newton-Raphson convergence of the estimated trend (SaTScan's CPoissonModel::gTimeTrendConvergence)
ADJUSTMENT_CONVERGENCE = 1e-7
#: a reported percentage within this of 0 is reported as 0 (SaTScan's AbstractTimeTrend::TREND_ZERO)
TREND_ZERO = 1e-8


def _percent(beta: float, days: float) -> float:
    """The percentage change over ``days`` days of a log-linear trend ``beta`` per day, as SaTScan
    reports it (0 within ``TREND_ZERO``)."""
    p = 100.0 * math.expm1(beta * days)
    return 0.0 if -TREND_ZERO < p < TREND_ZERO else p


def check_time_trend(time_trend, trend_percent, model, options=TIME_TRENDS) -> None:
    """Refuse a time-trend request a scan cannot honour, before any work: ``time_trend`` not one of
    ``options``, a ``trend_percent`` without ``time_trend="loglinear"``, or an adjustment of a model other
    than the discrete Poisson (SaTScan adjusts only its expected cases).

    Examples
    --------
    >>> check_time_trend("loglinear", 5.0, "poisson")
    >>> check_time_trend(None, 5.0, "poisson")
    Traceback (most recent call last):
    ...
    ValueError: trend_percent is for time_trend='loglinear' (a log-linear trend of the risk per year)
    """
    if time_trend not in options:
        raise ValueError(f"time_trend must be one of {', '.join(map(repr, options))}, got {time_trend!r}")
    if trend_percent is not None and time_trend != "loglinear":
        raise ValueError("trend_percent is for time_trend='loglinear' (a log-linear trend of the risk per year)")
    if time_trend not in (None, "stratified") and model != "poisson":
        raise ValueError(f"time_trend={time_trend!r} adjusts the expected cases of model='poisson', not {model!r} "
                         f"(SaTScan adjusts only the Poisson model so: the Bernoulli model's expected cases come "
                         f"from the controls; time_trend='stratified' adjusts both)")


def fit_quadratic_trend(c, m, convergence=ADJUSTMENT_CONVERGENCE):
    """``(status, (b0, b1, b2))`` of the log-quadratic trend
    ``E c_t = m_t exp(b0 + b1 (t + 1) + b2 (t + 1)^2)`` (t = 0 .. T - 1) by maximum likelihood, as SaTScan's
    ``QuadraticTimeTrend::CalculateAndSet``: undefined with fewer than 2 cases or fewer than 3 units with
    cases; else Newton-Raphson from ``(log(C / T), 0, 0)`` until the step's norm is at most ``convergence``
    (``TREND_SINGULAR`` when its matrix cannot be inverted).

    Examples
    --------
    >>> t = np.arange(30)
    >>> status, b = fit_quadratic_trend(np.round(50 * np.exp(0.1 * (t + 1) - 0.004 * (t + 1) ** 2)), np.ones(30))
    >>> status, [round(float(v), 3) for v in b]
    (0, [3.91, 0.101, -0.004])
    """
    y = np.asarray(c, dtype=np.float64)
    m = np.asarray(m, dtype=np.float64)
    T = y.size
    C = y.sum()
    if C < 2 or np.count_nonzero(y) < 3:  # (so never every case in the first or the last unit)
        return TREND_UNDEFINED, (0.0, 0.0, 0.0)
    u = np.arange(1, T + 1, dtype=np.float64)
    X = np.column_stack([np.ones(T), u, u * u])
    b = np.array([math.log(C / T), 0.0, 0.0])
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(MAX_ITERATIONS):
            mu = np.exp(X @ b) * m
            try:
                # SaTScan's step: b - A^-1 (-X)' (y - mu), A = X' diag(mu) X
                step = np.linalg.inv((X.T * mu) @ X) @ (X.T @ (y - mu))
            except np.linalg.LinAlgError:
                return TREND_SINGULAR, (0.0, 0.0, 0.0)
            new = b + step
            if not np.isfinite(new).all():
                return TREND_SINGULAR, (0.0, 0.0, 0.0)
            done = math.sqrt(float(((b - new) ** 2).sum())) <= convergence
            b = new
            if done:
                return TREND_CONVERGED, tuple(float(v) for v in b)
    return TREND_NOT_CONVERGED, (0.0, 0.0, 0.0)


def time_trend_weights(day_cases, time_trend, trend_percent=None, *, measure=None, unit_days=1, origin=None):
    """The day (or time unit) weights ``w`` (T,) of a time-trend adjustment and a description of it.

    Parameters
    ----------
    day_cases : array_like (T,)
        Cases of each day (time unit) of the study period (all locations).
    time_trend : {"nonparametric", "loglinear", "logquadratic"}
        The adjustment (see the module notes).
    trend_percent : float, optional
        ``"loglinear"``: the change of the risk per year, percent (> -100); None estimates it from
        ``day_cases``.
    measure : array_like (T,), optional
        The expected cases of each day (unit) before adjustment, against which the trend is estimated;
        default ``C / T`` each (a population constant in time, units of equal length).
    unit_days : int >= 1
        Days per time unit (``t`` counts units; beta is per unit).
    origin : date or int, optional
        The first day of the study period, for the log-quadratic trend's description (SaTScan's "where
        t=(day - origin)").

    Returns
    -------
    w : numpy.ndarray (T,)
        Positive (non-negative for ``"nonparametric"``) weight of each day (unit), to multiply the
        expected cases by; only their ratios matter.
    info : dict
        ``adjustment`` (``time_trend``), ``estimated`` (bool), ``beta`` (the log-linear trend per day,
        the fit's beta per unit / ``unit_days``; None for ``"nonparametric"``), ``daily_percent`` and
        ``annual_percent`` (the change per day and per 365.25 days, percent; None for
        ``"nonparametric"``); ``"logquadratic"``: ``alpha``, ``beta``
        and ``beta2`` per unit (SaTScan's risk function), ``origin`` (the first day as SaTScan prints it,
        ``"2024/1/1"``) and ``unit_days``, the percentages None.

    Examples
    --------
    >>> w, info = time_trend_weights([10, 12, 14, 17, 20], "loglinear")
    >>> round(info["daily_percent"], 2), bool(info["estimated"])
    (18.94, True)
    >>> w, info = time_trend_weights([3, 0, 5], "nonparametric")
    >>> w.tolist()
    [3.0, 0.0, 5.0]
    """
    c = np.asarray(day_cases, dtype=np.float64)
    if c.ndim != 1 or c.size == 0 or not np.isfinite(c).all() or (c < 0).any():
        raise ValueError("day_cases must be a non-empty vector of non-negative case counts")
    check_time_trend(time_trend, trend_percent, "poisson", TIME_TRENDS[1:])
    T = c.size
    C = float(c.sum())
    if isinstance(unit_days, bool) or not isinstance(unit_days, (int, np.integer)) or unit_days < 1:
        raise ValueError(f"unit_days must be a whole number of days >= 1, got {unit_days!r}")
    if measure is None:
        m = np.full(T, C / T)
    else:
        m = np.asarray(measure, dtype=np.float64)
        if m.shape != c.shape or not np.isfinite(m).all() or (m < 0).any():
            raise ValueError(f"measure must hold one non-negative expected count per day (unit), {T} in all")
    if time_trend == "nonparametric":
        if C <= 0:
            raise ValueError("time_trend='nonparametric' needs cases: every day's expected cases are its cases")
        return c.copy(), dict(adjustment="nonparametric", estimated=False, beta=None, daily_percent=None,
                              annual_percent=None)
    if time_trend == "logquadratic":
        status, (b0, b1, b2) = fit_quadratic_trend(c, m, ADJUSTMENT_CONVERGENCE)
        _check_status(status)
        t = np.arange(T, dtype=np.float64)
        w = np.exp(b1 * t + b2 * t * t)
        return w, dict(adjustment="logquadratic", estimated=True, alpha=b0 + b1, beta=b1, beta2=b2,
                       daily_percent=None, annual_percent=None, origin=_day_text(origin), unit_days=unit_days)
    if trend_percent is not None:
        p = float(trend_percent)
        if not math.isfinite(p) or p <= -100.0:
            raise ValueError(f"trend_percent must be a finite percentage above -100 (a yearly change of the risk), "
                             f"got {trend_percent!r}")
        beta = math.log1p(p / 100.0) / (DAYS_PER_YEAR / unit_days)
        estimated = False
    else:
        status, _, beta = fit_trend(c, m, ADJUSTMENT_CONVERGENCE)
        _check_status(status)
        beta = float(beta)
        estimated = True
    w = np.exp(beta * np.arange(T, dtype=np.float64))
    day = beta / unit_days
    return w, dict(adjustment="loglinear", estimated=estimated, beta=day, daily_percent=_percent(day, 1.0),
                   annual_percent=_percent(day, DAYS_PER_YEAR))


def _check_status(status) -> None:
    """Stop, as SaTScan stops, where the estimated trend is undefined, infinite or not found."""
    if status == TREND_UNDEFINED:
        raise ValueError("the time trend is undefined (fewer than 2 cases, or for a log-quadratic trend fewer than 3 "
                         "days with cases), so the temporal adjustment could not be made (SaTScan stops alike); run "
                         "without time_trend, or give trend_percent")
    if status in (TREND_NEG_INF, TREND_POS_INF):
        raise ValueError("the time trend is infinite (every case on the first or the last day), so the temporal "
                         "adjustment could not be made (SaTScan stops alike); run without time_trend, or give "
                         "trend_percent")
    if status != TREND_CONVERGED:
        what = "matrix is singular" if status == TREND_SINGULAR else "did not converge"
        assert status in (TREND_SINGULAR, TREND_NOT_CONVERGED)
        raise ValueError(f"the estimated time trend's Newton-Raphson {what}; give trend_percent instead")


def _day_text(origin) -> str:
    """A study period's first day as SaTScan prints it (``2024/1/1``; a day number as it is)."""
    if origin is None:
        return "the first day"
    if isinstance(origin, np.datetime64):
        y, mth, d = str(origin.astype("datetime64[D]")).split("-")
        return f"{int(y)}/{int(mth)}/{int(d)}"
    return str(origin)


def time_trend_text(info) -> str:
    """SaTScan's statement of the adjustment ``info`` (from :func:`time_trend_weights`) in its analysis
    summary (``ParametersPrint::getCalculatedTimeTrendAsString``, day intervals), without the full stop.

    Examples
    --------
    >>> time_trend_text(time_trend_weights([10, 12, 14, 17, 20], "loglinear")[1])
    'adjusting for time trend with a daily increase of 18.9407%'
    """
    if info["adjustment"] == "nonparametric":
        return "adjusting for time nonparametrically"
    if info["adjustment"] == "stratified":
        return "adjusting for time with stratified randomization"
    if info["adjustment"] == "logquadratic":
        half = (info["unit_days"] - 1) / 2.0
        return (f"adjusting for log quadratic time trend with: e^({info['alpha']:g} + {info['beta']:g} t + "
                f"{info['beta2']:g} t^2) where t=(day - {info['origin']})" + (f" + {half:g}" if half else ""))
    p = info["daily_percent"]
    return f"adjusting for time trend with a daily {'decrease' if p < 0 else 'increase'} of {abs(p):g}%"


def weekly_expectations(measure, day_cases, weekday):
    """SaTScan's adjustment of the discrete Poisson expectations for the day of the week
    (``AdjustForWeeklyTrends``; ``CPoissonModel::CalculateMeasure``): the expectations are computed
    again with the weekday as the one covariate, from a population that is the expectations.

    ``measure`` (L, T): the expected cases of every location and day (summing to C; after any time-trend
    adjustment); ``day_cases`` (T,): the cases of every day; ``weekday`` (T,): every day's weekday (any
    labelling of the days mod 7). As SaTScan builds it, weekday w's population at location z is known at
    the start of every day n = 0 .. T (n = T: the day after the study period): day t's expectation
    ``M_zt`` (stored in single precision) is weekday w(t)'s population at the start of day t and again
    at the start of day t + 1 (a population dated to a day also holds on the next,
    ``PopulationData::AddCovariateCategoryPopulation``), and the population is linear in between. Weekday
    w's risk is its cases over its population averaged over the study period's D = T days (weights 1/2,
    1, ..., 1, 1/2 of the moments), ``r_w = C_w / Pbar_w``, and day t's expectation is the integral of the
    risk-weighted population over the day, ``mu_zt = (m_zt + m_z,t+1) / (2 D)`` with
    ``m_zn = sum_w r_w P_wz(n) = r_w(n) M_zn + r_w(n-1) M_z,n-1``; they sum to C. Returns (L, T).

    Examples
    --------
    Two weeks at two locations with the same expectation every day, and six times the cases on the first
    weekday: that weekday's expectations rise (and, by SaTScan's construction, the days either side a little):

    >>> from hphawkes_py.scan.time_trend import weekly_expectations
    >>> mu = weekly_expectations(np.ones((2, 14)), np.tile([6, 1, 1, 1, 1, 1, 1], 2), np.arange(14))
    >>> print(np.round(mu[0, :7], 3), round(mu.sum(), 6))
    [1.839 1.232 0.5   0.5   0.5   0.518 1.268] 24.0
    """
    M = np.asarray(measure, dtype=np.float32).astype(np.float64)
    L, T = M.shape
    w = np.asarray(weekday, dtype=np.int64) % 7
    # each day's expectation is its weekday's population at the start of the day and of the next
    # (moments n = 0 .. T, averaged with weights alpha)
    alpha = np.ones(T + 1)
    alpha[0] = alpha[-1] = 0.5
    pbar = np.zeros(7)
    np.add.at(pbar, w, (alpha[:T] + alpha[1:]) * M.sum(axis=0))
    pbar /= T
    cases_w = np.zeros(7)
    np.add.at(cases_w, w, np.asarray(day_cases, dtype=np.float64))
    risk = np.divide(cases_w, pbar, out=np.zeros(7), where=pbar > 0)
    rM = risk[w][None, :] * M  # day t's weekday risk times its expectation
    m = np.zeros((L, T + 1))
    m[:, :T] += rM
    m[:, 1:] += rM
    return 0.5 * (m[:, :-1] + m[:, 1:]) / T
