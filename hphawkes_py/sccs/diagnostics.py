"""Study diagnostics of OHDSI SelfControlledCaseSeries: can an SCCS estimate be trusted?

Each function returns a :class:`Diagnostic` (the value, the decision threshold and pass/fail)
computed as SelfControlledCaseSeries computes it, with its default thresholds
(``createSccsDiagnosticThresholds``):

* :func:`mdrr` -- minimum detectable relative risk (``computeMdrr``, Musonda et al. 2006,
  signed-root-likelihood formula "SRL1"); passes below 10;
* :func:`time_stability` -- is the outcome rate stable over calendar time
  (``checkTimeStabilityAssumption``); passes when the test of an observed/expected ratio above
  1.10 has p > 0.05;
* :func:`pre_exposure_gain` -- is the outcome rate higher in the 30 days before the first
  exposure than in the 30 days after (``computePreExposureGainP``); passes when p >= 0.05;
* :func:`event_exposure_independence` -- the interval of a pre-exposure window's rate ratio meets
  (0.8, 1.25) (``checkEventExposureIndependenceAssumption``);
* :func:`event_observation_independence` -- the interval of the rate ratio of a probe window
  at the end of observation (:func:`end_of_observation_eras`) meets (0.5, 2)
  (``checkEventObservationIndependenceAssumption``);
* :func:`rare_outcome` -- prevalence of the outcome at most 0.1 when only first outcomes are
  used (``checkRareOutcomeAssumption``).

References
----------
Musonda P, Farrington CP, Whitaker HJ (2006). Sample sizes for self-controlled case series
studies. Statistics in Medicine 25(15):2618-2631.

Farrington P, Whitaker H, Ghebremichael-Weldeselassie Y (2018). Self-Controlled Case Series
Studies: A Modelling Guide with R. CRC Press.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np
import pandas as pd
from scipy import optimize, stats

from .._validate import check_bool, check_in, check_int, check_positive, check_probability, describe
from ._tables import as_days, lower_columns, require, show
from .data import SCCSData
from .model import fit as _fit
from .results import MLEWarning, SCCSFit

__all__ = ["Diagnostic", "mdrr", "time_stability", "pre_exposure_gain", "event_exposure_independence",
           "event_observation_independence", "end_of_observation_eras", "rare_outcome"]

#: SelfControlledCaseSeries' ``createSccsDiagnosticThresholds`` defaults.
MDRR_THRESHOLD = 10.0
TIME_TREND_MAX_RATIO = 1.10
RARE_OUTCOME_MAX_PREVALENCE = 0.1
EVENT_OBSERVATION_NULL_BOUNDS = (0.5, 2.0)
EVENT_EXPOSURE_NULL_BOUNDS = (0.8, 1.25)
#: Days before and after the first exposure compared by :func:`pre_exposure_gain`.
PRE_EXPOSURE_DAYS = 30
#: ``computeMdrr`` searches the log MDRR in ``[0, 10]``.
_MAX_LOG_MDRR = 10.0


@dataclass(frozen=True)
class Diagnostic:
    """The outcome of one study diagnostic: its value, the decision rule and pass/fail.

    Parameters
    ----------
    name : str
        Which diagnostic (``"mdrr"``, ``"time_stability"`` ...).
    value : float
        The diagnostic's statistic (the MDRR, a p-value, a rate ratio, a prevalence).
    threshold : float or tuple
        The value it is compared with (a bound, or the null bounds of an interval).
    passed : bool
        Whether the study passes.
    rule : str
        The decision rule in words.
    details : dict
        The quantities behind the value (counts, times, intervals).

    Examples
    --------
    >>> data, _ = hp.sccs.simulate(n_cases=400, n_drugs=2, prevalence=0.3, seed=3)
    >>> d = hp.sccs.mdrr(data, 1)
    >>> d.name, d.threshold, d.passed
    ('mdrr', 10.0, True)
    >>> d.to_dict()["rule"]
    'mdrr < 10'
    """

    name: str
    value: float
    threshold: Any
    passed: bool
    rule: str
    details: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict:
        """The fields as a flat dict (details merged in), e.g. for a row of a results table."""
        return {"diagnostic": self.name, "value": self.value, "threshold": self.threshold, "pass": self.passed,
                "rule": self.rule, **self.details}

    def __repr__(self) -> str:
        return (f"Diagnostic({self.name}: value={self.value:.4g}, {self.rule} -> "
                f"{'PASS' if self.passed else 'FAIL'})")


# ---------------------------------------------------------------------------------------------- MDRR
def _power_srl1(b, z, r, n, alpha):
    """Power of the signed-root likelihood-ratio test at log relative risk ``b`` (Musonda et al.
    expression 7), floored at ``alpha`` as in ``computeMdrr``."""
    eb = math.exp(b)
    d = eb * r + 1.0 - r
    A = 2.0 * ((eb * r / d) * b - math.log(d))
    B = b * b / A * eb * r * (1.0 - r) / (d * d)
    power = stats.norm.cdf((math.sqrt(n * A) - z) / math.sqrt(B))
    return alpha if (power < alpha or n < 1) else float(power)


def _power_binomial(b, z, r, n, alpha):
    """Power of the arcsine-transformed binomial test (Musonda et al. expression 6)."""
    p = math.exp(b)
    pi = p * r / (p * r + 1.0 - r)
    zb = math.sqrt(n * 4.0 * (math.asin(math.sqrt(pi)) - math.asin(math.sqrt(r))) ** 2) - z
    power = stats.norm.cdf(zb)
    return alpha if (power < alpha or n < 1) else float(power)


def _mdrr_search(power_of, target, precision=1e-6):
    """``computeMdrr``'s bisection for the log relative risk whose power is ``target``
    (within ``precision``) on ``[0, 10]``; +inf when even ``exp(10)`` is not detected
    (``computeMdrr`` then reports ``exp(10)``)."""
    if power_of(_MAX_LOG_MDRR) - target < -precision:
        return math.inf
    lo, hi = 0.0, _MAX_LOG_MDRR
    for _ in range(200):
        m = lo + (hi - lo) / 2.0
        d = power_of(m) - target
        if d > precision:
            hi = m
        elif -d > precision:
            lo = m
        else:
            return m
    return m


def _fit_data(obj, name="data"):
    if isinstance(obj, SCCSFit):
        return obj.context.data
    if isinstance(obj, SCCSData):
        return obj
    raise TypeError(f"{name} must be an SCCSData or an SCCSFit, got {type(obj).__name__}")


def _column(data, covariate):
    pos = pd.Index(data.covariate_ids).get_indexer([covariate])[0]
    if pos < 0:
        raise ValueError(f"covariate {covariate!r} is not in the data; its covariate ids are "
                         f"{data.covariate_ids[:10].tolist()}{' ...' if data.n_covariates > 10 else ''}")
    return int(pos)


def mdrr(data, covariate, *, alpha: float = 0.05, power: float = 0.8, two_sided: bool = True, method: str = "SRL1",
         threshold: float = MDRR_THRESHOLD) -> Diagnostic:
    """Minimum detectable relative risk of an exposure (SelfControlledCaseSeries' ``computeMdrr``).

    Over the cases exposed to ``covariate`` (strata with time at it), with ``r`` the proportion
    of their observed time that is exposed and ``n`` their number of events, the MDRR is the
    smallest relative risk ``exp(b)`` detected with probability ``power`` by a test at level
    ``alpha``; the power at ``b`` is Musonda et al.'s (2006) signed-root likelihood-ratio formula
    ("SRL1", expression 7)

        A = 2 (p b - log(e^b r + 1 - r)),  p = e^b r / (e^b r + 1 - r),
        B = b^2 / A * e^b r (1 - r) / (e^b r + 1 - r)^2,
        power = Phi((sqrt(n A) - z) / sqrt(B)),  z = Phi^-1(1 - alpha'),

    (``alpha' = alpha/2`` two-sided), or the arcsine binomial formula (``"binomial"``,
    expression 6). ``b`` is found by ``computeMdrr``'s bisection on ``[0, 10]``. As
    SelfControlledCaseSeries, a case with one row (one exposure pattern throughout its
    observation) carries no information and is left out.

    Parameters
    ----------
    data : SCCSData or SCCSFit
        The design (or a fit of it).
    covariate : hashable
        Covariate id of the exposure (an indicator covariate: values 0/1).
    alpha : float in (0, 1)
        Type I error.
    power : float in (0, 1)
        Power (1 - type II error).
    two_sided : bool
        Two-sided test (``alpha`` split over both tails).
    method : {"SRL1", "binomial"}
        Sample-size formula.
    threshold : float
        The study passes when the MDRR is below it (SelfControlledCaseSeries: 10).

    Returns
    -------
    Diagnostic
        ``value`` the MDRR (``inf`` when every exposed case is exposed throughout, when no
        case is exposed, or when even ``exp(10)`` is not detected -- ``computeMdrr`` reports
        ``exp(10)`` there); ``details``: ``time_exposed``, ``time_total``,
        ``prop_time_exposed`` (``r``), ``events`` (``n``), ``exposed_cases``.

    Raises
    ------
    ValueError
        An unknown covariate, a covariate with values other than 0/1, ``alpha`` or ``power``
        outside (0, 1), ``power <= alpha'``, a threshold <= 1.

    Examples
    --------
    >>> data, _ = hp.sccs.simulate(n_cases=400, n_drugs=2, prevalence=0.3, seed=3)
    >>> d = hp.sccs.mdrr(data, 1)
    >>> round(d.value, 3), d.passed
    (3.698, True)
    >>> round(d.details["prop_time_exposed"], 4), d.details["events"]
    (0.0215, 105.0)
    """
    data = _fit_data(data)
    alpha = check_probability(alpha, "alpha", high_open=True)
    power = check_probability(power, "power", high_open=True)
    two_sided = check_bool(two_sided, "two_sided")
    check_in(method, "method", ("SRL1", "binomial"))
    threshold = check_positive(threshold, "threshold")
    if threshold <= 1:
        raise ValueError(f"threshold must be > 1 (a relative risk), got {threshold}")
    a = alpha / 2.0 if two_sided else alpha
    if power <= a:
        raise ValueError(f"power must exceed the test's level ({a}), got {power}")
    j = _column(data, covariate)
    nz = slice(data.col_ptr[j], data.col_ptr[j + 1])
    rows = data.row_idx[nz]
    if data.values is not None and np.any(data.values[nz] != 1.0):
        raise ValueError(f"mdrr needs an exposure indicator (values 0/1); covariate {covariate!r} has other values")
    rows_per_stratum = np.diff(data.stratum_ptr)
    strata = np.unique(data.row_stratum[rows])
    strata = strata[rows_per_stratum[strata] > 1]
    keep = np.isin(data.row_stratum[rows], strata)
    time_exposed = float(data.time[rows[keep]].sum())
    stratum_time = np.bincount(data.row_stratum, weights=data.time, minlength=data.n_strata)
    time_total = float(stratum_time[strata].sum())
    n = float(data.n_events[strata].sum())
    r = time_exposed / time_total if time_total > 0 else 0.0
    z = stats.norm.ppf(1.0 - a)
    if strata.size == 0 or r >= 1.0:
        value = math.inf
    else:
        f = _power_srl1 if method == "SRL1" else _power_binomial
        value = math.exp(_mdrr_search(lambda b: f(b, z, r, n, a), power))
    return Diagnostic("mdrr", value, threshold, bool(value < threshold), f"mdrr < {threshold:g}",
                      {"time_exposed": time_exposed, "time_total": time_total, "prop_time_exposed": r, "events": n,
                       "exposed_cases": int(strata.size), "alpha": alpha, "power": power, "two_sided": two_sided,
                       "method": method})


# ------------------------------------------------------------------------------------- time stability
def _person_tables(observation_periods, outcomes):
    """Observation days per person and the outcome days inside them: ``(persons, start, end,
    outcome person index, outcome day, outcomes outside observation)``."""
    obs = lower_columns(observation_periods, "observation_periods")
    oc = lower_columns(outcomes, "outcomes")
    require(obs, ("person_id", "start", "end"), "observation_periods")
    require(oc, ("person_id", "day"), "outcomes")
    if len(obs) == 0:
        raise ValueError("observation_periods has no rows")
    persons = obs["person_id"].to_numpy()
    if pd.Index(persons).has_duplicates:
        dup = pd.Index(persons)[pd.Index(persons).duplicated()][0]
        raise ValueError(f"observation_periods must have one row per person_id; {show(dup)} appears more than once")
    start, end = as_days(obs["start"], "observation_periods.start"), as_days(obs["end"], "observation_periods.end")
    bad = end < start
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"observation_periods: end < start for {int(bad.sum())} person(s), first at row {i} "
                         f"(person_id={show(persons[i])}, start={start[i]}, end={end[i]})")
    op = pd.Index(persons).get_indexer(oc["person_id"].to_numpy())
    if np.any(op < 0):
        i = int(np.argmax(op < 0))
        raise ValueError(f"outcomes has {int((op < 0).sum())} row(s) of persons without an observation period, "
                         f"first at row {i} (person_id={show(oc['person_id'].iloc[i])})")
    day = as_days(oc["day"], "outcomes.day")
    inside = (day >= start[op]) & (day <= end[op])
    return persons, start, end, op[inside], day[inside], int((~inside).sum())


def _calendar(days, origin):
    """Month index ``12 * year + month - 1`` and day of month of integer days after ``origin``."""
    dates = origin + days.astype("timedelta64[D]")
    months = dates.astype("datetime64[M]")
    month_index = months.astype(np.int64) + 1970 * 12
    day_of_month = (dates - months.astype("datetime64[D]")).astype(np.int64) + 1
    return month_index, day_of_month


def _origin(day_origin):
    try:
        return np.datetime64(day_origin, "D")
    except (TypeError, ValueError):
        raise ValueError(f"day_origin must be a calendar date such as '1970-01-01', "
                         f"got {describe(day_origin)}") from None


def _rate_per_month(observation_periods, outcomes, day_origin):
    """Observed and expected outcome counts per calendar month (``computeOutcomeRatePerMonth``,
    without spline adjustment; see :func:`time_stability`), and the number of outcomes outside
    observation."""
    origin = _origin(day_origin)
    persons, start, end, op, day, outside = _person_tables(observation_periods, outcomes)
    counts = np.bincount(op, minlength=persons.size)
    case = counts > 0
    if not case.any():
        raise ValueError("time_stability: no person has an outcome inside the observation period")
    s_month, s_day = _calendar(start[case], origin)
    e_month, e_day = _calendar(end[case], origin)
    # as SelfControlledCaseSeries: every month counted as 31 days, the first and last partly
    s_frac, e_frac = (31 - s_day + 1) / 31.0, e_day / 31.0
    rate = counts[case] / (e_month - s_month + s_frac + e_frac)
    m0 = int(s_month.min())
    n_months = int(e_month.max()) - m0 + 1
    # full months strictly inside each case's period get `rate`; the first month gets the start
    # fraction, the last (when it differs from the first) the end fraction
    inner = np.zeros(n_months + 1)
    lo, hi = s_month - m0 + 1, e_month - m0
    ok = hi > lo
    np.add.at(inner, lo[ok], rate[ok])
    np.add.at(inner, hi[ok], -rate[ok])
    expected = np.cumsum(inner)[:n_months]
    np.add.at(expected, s_month - m0, s_frac * rate)
    later = e_month > s_month
    np.add.at(expected, e_month[later] - m0, e_frac[later] * rate[later])
    o_month, _ = _calendar(day, origin)
    observed = np.bincount(o_month - m0, minlength=n_months).astype(np.float64)
    month = np.arange(m0, m0 + n_months)
    start_date = (np.datetime64("0000-01", "M") + month.astype("timedelta64[M]")).astype("datetime64[D]")
    table = pd.DataFrame({"month": month, "month_start": start_date, "observed": observed, "expected": expected})
    return table, outside


def _log_lik_ratio(x, o, e):
    """``checkTimeStabilityAssumption``'s log-likelihood: each month's count is Poisson with mean
    ``e x`` or ``e / x`` (a rate ``x`` times too high or too low), summed over months."""
    return float(np.sum(np.logaddexp(stats.poisson.logpmf(o, e * x), stats.poisson.logpmf(o, e / x))))


def _stability_test(o, e, max_ratio):
    """The fitted ratio and the p-value of ``checkTimeStabilityAssumption`` for observed counts
    ``o`` and expected counts ``e`` per month (ratio NaN and p = 1 with fewer than two months
    or fewer than two finite log-likelihoods on the grid, as there)."""
    if o.size < 2:
        return math.nan, 1.0
    e = np.where(e == 0, np.finfo(float).eps, e)
    grid = np.exp(np.arange(0.0, math.log(10.0) + 1e-12, 0.01))
    ll = np.array([_log_lik_ratio(x, o, e) for x in grid])
    finite = np.isfinite(ll)
    if finite.sum() < 2:
        return math.nan, 1.0
    lo, hi = grid[finite].min(), grid[finite].max()
    k = int(np.argmax(np.where(finite, ll, -np.inf)))
    a, b = grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]
    res = optimize.minimize_scalar(lambda x: -_log_lik_ratio(x, o, e), bounds=(max(a, lo), min(b, hi)),
                                   method="bounded", options={"xatol": 1e-10})
    x_hat = float(res.x) if -res.fun >= ll[k] else float(grid[k])
    x0, x1 = min(x_hat, max_ratio), max(x_hat, max_ratio)
    llr = 2.0 * (_log_lik_ratio(x1, o, e) - _log_lik_ratio(x0, o, e))
    return x_hat, (float(stats.chi2.sf(llr, 1)) if llr > 0 else 1.0)


def time_stability(observation_periods, outcomes, *, max_ratio: float = TIME_TREND_MAX_RATIO, alpha: float = 0.05,
                   day_origin="1970-01-01") -> Diagnostic:
    """Is the outcome rate stable over calendar time? (``checkTimeStabilityAssumption``).

    For each calendar month the observed count of outcomes ``o`` is compared with the count
    ``e`` expected if each case's outcomes were spread evenly over its observation period
    (cases observed in the month, weighted by the part of the month observed; months counted as
    31 days, as SelfControlledCaseSeries). The ratio ``x >= 1`` maximising
    ``sum log(Pois(o; e x) + Pois(o; e / x))`` is tested against ``x <= max_ratio`` by a
    likelihood ratio (chi-square, 1 df); the rate is stable when ``p > alpha``.

    The optimum is found on SelfControlledCaseSeries' grid ``exp(0, 0.01, ..., log 10)``, then
    refined by Brent's method (SelfControlledCaseSeries runs L-BFGS-B from 1.5). Seasonality and
    calendar-time splines of a fit are not adjusted for.

    Parameters
    ----------
    observation_periods : DataFrame
        ``person_id, start, end``: one observation period per person (integer days, inclusive),
        as for :meth:`SCCSData.from_eras` (give the periods after any study-period clipping).
    outcomes : DataFrame
        ``person_id, day``: outcome days. Outcomes outside the observation period are not
        counted (their number is in ``details``).
    max_ratio : float
        The largest ratio of observed to expected still called stable (>= 1; default 1.10).
    alpha : float in (0, 1)
        Level of the test.
    day_origin : str or numpy.datetime64
        Calendar date of day 0.

    Returns
    -------
    Diagnostic
        ``value`` the p-value, ``details``: ``ratio`` (the fitted ``x``), ``months``,
        ``outcomes_outside_observation`` and the per-month table ``per_month``.

    Raises
    ------
    ValueError
        Missing columns, non-integer days, a person with two periods, ``end < start``,
        outcomes of unknown persons, no outcome inside observation, ``max_ratio < 1``.

    Examples
    --------
    >>> obs, eras, outcomes, _ = hp.sccs.simulate(n_cases=300, n_drugs=1, output="eras", seed=1)
    >>> d = hp.sccs.time_stability(obs, outcomes)
    >>> d.passed, round(d.details["ratio"], 3)
    (True, 1.0)
    """
    max_ratio = check_positive(max_ratio, "max_ratio")
    if max_ratio < 1:
        raise ValueError(f"max_ratio must be >= 1, got {max_ratio}")
    alpha = check_probability(alpha, "alpha", high_open=True)
    table, outside = _rate_per_month(observation_periods, outcomes, day_origin)
    details = {"months": len(table), "outcomes_outside_observation": outside, "per_month": table}
    x_hat, p = _stability_test(table["observed"].to_numpy(), table["expected"].to_numpy(), max_ratio)
    return Diagnostic("time_stability", p, max_ratio, bool(p > alpha), f"p > {alpha:g} for ratio <= {max_ratio:g}",
                      {"ratio": x_hat, **details})


# ---------------------------------------------------------------------------------- pre-exposure gain
def _one_sided_p(llr, b):
    """EmpiricalCalibration's ``computePFromLlr``: one-sided p for ``b > 0`` from a log-likelihood ratio."""
    if llr > 33:
        # pchisq underflows there; the log-linear extrapolation EmpiricalCalibration uses
        p = math.exp(-2.4039960592000753081 - 1.0193835554520327413 * llr)
    else:
        p = float(stats.chi2.sf(2.0 * max(llr, 0.0), 1)) / 2.0
    return 1.0 - p if b < 0 else p


def pre_exposure_gain(observation_periods, eras, outcomes, covariate, *, alpha: float = 0.05,
                      days: int = PRE_EXPOSURE_DAYS) -> Diagnostic:
    """Is the outcome rate higher just before the first exposure than just after? (``computePreExposureGainP``).

    For each case, its first era of ``covariate`` starting inside its observation period; its
    outcomes in the ``days`` days before that start and in the ``days`` days from it (days
    ``-days..-1`` and ``0..days``), with times ``min(days, days observed before)`` and
    ``min(days, days observed after)``. A conditional Poisson model (strata = cases, the
    engines of :func:`~hphawkes_py.sccs.fit` without a prior) estimates the log rate ratio
    ``b`` of before against after; the one-sided likelihood-ratio p-value for ``b > 0`` is
    ``computePFromLlr``'s. A small p suggests the outcome (or a precursor) brings the exposure
    forward. The study passes when ``p >= alpha``.

    Parameters
    ----------
    observation_periods, eras, outcomes : DataFrame
        The person-level tables of :meth:`SCCSData.from_eras` (``person_id, start, end``;
        ``person_id, start, end, covariate_id``; ``person_id, day``).
    covariate : hashable
        The exposure's ``covariate_id`` in ``eras``.
    alpha : float in (0, 1)
        Level below which the p-value fails the study.
    days : int
        Length of the windows before and after the first exposure (SelfControlledCaseSeries: 30).

    Returns
    -------
    Diagnostic
        ``value`` the p-value; ``details``: ``log_rr`` (``b``; +-inf when every event in the
        windows falls on one side), ``llr``, ``cases`` (cases with a first exposure),
        ``events_before``, ``events_after``.

    Raises
    ------
    ValueError
        Bad tables (as :meth:`SCCSData.from_eras`), a covariate not in ``eras``, no case with
        the exposure or no outcome in the windows.

    Examples
    --------
    >>> obs, eras, outcomes, _ = hp.sccs.simulate(n_cases=500, n_drugs=1, prevalence=0.8, output="eras", seed=2)
    >>> d = hp.sccs.pre_exposure_gain(obs, eras, outcomes, 1)
    >>> d.passed, d.details["cases"] > 0
    (True, True)
    """
    alpha = check_probability(alpha, "alpha", high_open=True)
    days = check_int(days, "days", minimum=1)
    persons, start, end, op, oday, _ = _person_tables(observation_periods, outcomes)
    er = lower_columns(eras, "eras")
    require(er, ("person_id", "start", "end", "covariate_id"), "eras")
    mine = (er["covariate_id"] == covariate).to_numpy()
    if not mine.any():
        raise ValueError(f"covariate {covariate!r} has no eras; eras.covariate_id has "
                         f"{pd.unique(er['covariate_id'])[:10].tolist()}")
    ep = pd.Index(persons).get_indexer(er["person_id"].to_numpy()[mine])
    if np.any(ep < 0):
        raise ValueError(f"eras has rows of persons without an observation period (first person_id="
                         f"{show(er['person_id'].to_numpy()[mine][np.argmax(ep < 0)])})")
    es = as_days(er["start"].to_numpy()[mine], "eras.start")
    cases = np.bincount(op, minlength=persons.size) > 0
    # first era start per case, among eras starting inside [start, end) (as computePreExposureGainP)
    ok = cases[ep] & (es >= start[ep]) & (es < end[ep])
    first = np.full(persons.size, np.iinfo(np.int64).max)
    np.minimum.at(first, ep[ok], es[ok])
    has = first < np.iinfo(np.int64).max
    if not has.any():
        raise ValueError(f"pre_exposure_gain: no case has an era of {covariate!r} starting inside its observation")
    idx = np.flatnonzero(has)
    t_before = np.minimum(days, first[idx] - start[idx]).astype(float)
    t_after = np.minimum(days, end[idx] - first[idx]).astype(float)
    pos = np.full(persons.size, -1)
    pos[idx] = np.arange(idx.size)
    k = pos[op]
    delta = oday - np.where(k >= 0, first[op], 0)
    sel = (k >= 0) & (delta >= -days) & (delta <= days)
    y_before = np.bincount(k[sel & (delta < 0)], minlength=idx.size).astype(float)
    y_after = np.bincount(k[sel & (delta >= 0)], minlength=idx.size).astype(float)
    rows = pd.DataFrame({"stratum_id": np.concatenate([idx, idx]), "before": np.repeat([1, 0], idx.size),
                         "time": np.concatenate([t_before, t_after]), "y": np.concatenate([y_before, y_after])})
    rows = rows[rows["time"] > 0].reset_index(drop=True)
    rows["row_id"] = np.arange(len(rows))
    n_before = float(rows.loc[rows["before"] == 1, "y"].sum())
    n_after = float(rows.loc[rows["before"] == 0, "y"].sum())
    if n_before + n_after == 0:
        raise ValueError(f"pre_exposure_gain: no outcome within {days} days of a first exposure to {covariate!r}")
    covs = pd.DataFrame({"row_id": rows["row_id"], "covariate_id": "before", "value": rows["before"].astype(float)})
    data = SCCSData.from_long(rows[["stratum_id", "row_id", "y", "time"]], covs)
    # the conditional log-likelihood at b = 0: each event falls in its row with probability time / stratum time
    total = np.bincount(data.row_stratum, weights=data.time)[data.row_stratum]
    ll0 = float(np.sum(data.y * np.log(data.time / total)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MLEWarning)
        res = _fit(data, prior="none", tolerance=1e-12, max_iterations=1000, progress=False, backend="cpu")
    b = float(res.coefficients.iloc[0]) if res.coefficients.size else 0.0
    if res.infinite:
        # every event on one side: the supremum of the conditional likelihood is 1 (log 0)
        b, ll_max = math.copysign(math.inf, b), 0.0
    else:
        ll_max = res.log_likelihood
    llr = max(ll_max - ll0, 0.0)
    p = _one_sided_p(llr, b)
    return Diagnostic("pre_exposure_gain", p, alpha, bool(p >= alpha), f"p >= {alpha:g}",
                      {"log_rr": b, "llr": llr, "cases": int(idx.size), "events_before": n_before,
                       "events_after": n_after})


# ------------------------------------------------------------------- estimates against null bounds
def _bounds(null_bounds):
    if not isinstance(null_bounds, (tuple, list)) or len(null_bounds) != 2:
        raise TypeError(f"null_bounds must be a pair (lower, upper) of rate ratios, got {describe(null_bounds)}")
    lo = check_positive(null_bounds[0], "null_bounds[0]")
    hi = check_positive(null_bounds[1], "null_bounds[1]")
    if not lo <= 1 <= hi:
        raise ValueError(f"null_bounds must surround 1 (lower <= 1 <= upper), got ({lo}, {hi})")
    return lo, hi


def _interval_check(name, fit, covariate, null_bounds, level, method):
    if not isinstance(fit, SCCSFit):
        raise TypeError(f"fit must be an SCCSFit (from hp.sccs.fit), got {type(fit).__name__}")
    lo_b, hi_b = _bounds(null_bounds)
    level = check_probability(level, "level", high_open=True)
    _column(fit.context.data, covariate)
    row = fit.results_table([covariate], level=level, method=method).iloc[0]
    lo, hi = float(row["irr_lower"]), float(row["irr_upper"])
    passed = bool(lo <= hi_b and hi >= lo_b)
    return Diagnostic(name, float(row["irr"]), (lo_b, hi_b), passed,
                      f"{int(round(100 * level))}% interval meets ({lo_b:g}, {hi_b:g})",
                      {"lower": lo, "upper": hi, "log_rr": float(row["coefficient"]), "se": float(row["se"]),
                       "level": level, "method": method})


def event_exposure_independence(fit, covariate, *, null_bounds=EVENT_EXPOSURE_NULL_BOUNDS, level: float = 0.95,
                                method: str = "profile") -> Diagnostic:
    """Does the outcome change the chance of later exposure? (``checkEventExposureIndependenceAssumption``).

    The rate ratio of a pre-exposure window (a :class:`RiskWindow` before the era start, e.g.
    days -30..-1) should be near 1; the study passes when its interval meets ``null_bounds``
    (``lower <= upper bound`` and ``upper >= lower bound``).

    Parameters
    ----------
    fit : SCCSFit
        A fit of a design with the pre-exposure window as a covariate.
    covariate : hashable
        Covariate id (label) of the pre-exposure window.
    null_bounds : (float, float)
        Rate ratios around 1 (SelfControlledCaseSeries: 0.8, 1.25).
    level : float in (0, 1)
        Level of the interval.
    method : {"profile", "wald"}
        Interval of :meth:`SCCSFit.results_table` (SelfControlledCaseSeries reports profile
        likelihood intervals).

    Returns
    -------
    Diagnostic
        ``value`` the rate ratio, ``details`` the interval (``lower``, ``upper``).

    Raises
    ------
    TypeError, ValueError
        Not a fit, an unknown covariate, bounds not around 1, ``level`` outside (0, 1).

    Examples
    --------
    >>> obs, eras, outcomes, _ = hp.sccs.simulate(n_cases=400, n_drugs=1, prevalence=0.8, output="eras", seed=4)
    >>> windows = {1: [hp.sccs.RiskWindow("pre", -30, -1, "start", "start"),
    ...                hp.sccs.RiskWindow("on", 0, 0, "start", "end")]}
    >>> data = hp.sccs.SCCSData.from_eras(obs, eras, outcomes, windows=windows)
    >>> res = hp.sccs.fit(data, prior="none", progress=False)
    >>> d = hp.sccs.event_exposure_independence(res, "pre")
    >>> d.threshold, d.passed
    ((0.8, 1.25), True)
    """
    return _interval_check("event_exposure_independence", fit, covariate, null_bounds, level, method)


def event_observation_independence(fit, covariate=99, *,
                                   null_bounds=EVENT_OBSERVATION_NULL_BOUNDS, level: float = 0.95,
                                   method: str = "profile") -> Diagnostic:
    """Does the outcome end observation? (``checkEventObservationIndependenceAssumption``).

    A probe window over the last days of each observation period
    (:func:`end_of_observation_eras`) should have a rate ratio near 1; when the outcome ends
    observation (death, moving away) its rate there is raised. The study passes when the
    interval meets ``null_bounds``.

    Parameters
    ----------
    fit : SCCSFit
        A fit of a design with the probe window as a covariate.
    covariate : hashable
        Covariate id of the probe window (as given to :func:`end_of_observation_eras`).
    null_bounds : (float, float)
        Rate ratios around 1 (SelfControlledCaseSeries: 0.5, 2).
    level : float in (0, 1)
        Level of the interval.
    method : {"profile", "wald"}
        Interval of :meth:`SCCSFit.results_table`.

    Returns
    -------
    Diagnostic
        ``value`` the rate ratio, ``details`` the interval.

    Raises
    ------
    TypeError, ValueError
        As :func:`event_exposure_independence`.

    Examples
    --------
    >>> import pandas as pd
    >>> obs, eras, outcomes, _ = hp.sccs.simulate(n_cases=400, n_drugs=1, output="eras", seed=5)
    >>> probe = hp.sccs.end_of_observation_eras(obs)
    >>> data = hp.sccs.SCCSData.from_eras(obs, pd.concat([eras, probe]), outcomes)
    >>> res = hp.sccs.fit(data, prior="none", progress=False)
    >>> hp.sccs.event_observation_independence(res).passed
    True
    """
    return _interval_check("event_observation_independence", fit, covariate, null_bounds, level, method)


def end_of_observation_eras(observation_periods, *, length: int = 30, covariate_id=99) -> pd.DataFrame:
    """Probe eras over the last ``length`` days of each observation period (SelfControlledCaseSeries'
    ``endOfObservationEraLength``), to add to the exposure eras for
    :func:`event_observation_independence`.

    Parameters
    ----------
    observation_periods : DataFrame
        ``person_id, start, end`` (inclusive days).
    length : int
        Days in the probe window (>= 1; shorter where the period is shorter).
    covariate_id : hashable
        Covariate id of the probe (SelfControlledCaseSeries uses 99); of the same type as the
        exposures' ids.

    Returns
    -------
    DataFrame
        ``person_id, start, end, covariate_id``: one era per person. With
        :meth:`SCCSData.from_eras` its risk window must be the era itself: give
        ``risk_windows={covariate_id: (0, 0)}`` when ``risk_start``/``risk_end`` are not 0.

    Examples
    --------
    >>> import pandas as pd
    >>> obs = pd.DataFrame({"person_id": [1, 2], "start": [0, 100], "end": [364, 110]})
    >>> hp.sccs.end_of_observation_eras(obs).values.tolist()
    [[1, 335, 364, 99], [2, 100, 110, 99]]
    """
    length = check_int(length, "length", minimum=1)
    if covariate_id is None:
        raise ValueError("covariate_id must name the probe covariate, got None")
    obs = lower_columns(observation_periods, "observation_periods")
    require(obs, ("person_id", "start", "end"), "observation_periods")
    start, end = as_days(obs["start"], "observation_periods.start"), as_days(obs["end"], "observation_periods.end")
    return pd.DataFrame({"person_id": obs["person_id"].to_numpy(), "start": np.maximum(start, end - length + 1),
                         "end": end, "covariate_id": covariate_id})


# ------------------------------------------------------------------------------------- rare outcome
def rare_outcome(data=None, *, n_persons: int | None = None, n_cases: int | None = None,
                 first_outcome_only: bool | None = None,
                 max_prevalence: float = RARE_OUTCOME_MAX_PREVALENCE) -> Diagnostic:
    """Is the outcome rare enough to use first outcomes only? (``checkRareOutcomeAssumption``).

    Using only each person's first outcome biases the estimate by about ``0.5 p`` with ``p``
    the prevalence (the proportion of the population with the outcome; Farrington et al.
    2018). The study passes when ``p <= max_prevalence`` or when all outcomes are used.

    Parameters
    ----------
    data : SCCSData, optional
        A design from :meth:`SCCSData.from_eras` whose ``observation_periods`` covered the whole
        population (cases and persons without the outcome): ``p = cases / (cases +
        dropped["persons_without_outcomes"])``. A table of cases alone gives ``p = 1``: give
        the counts instead.
    n_persons, n_cases : int, optional
        The population size and the persons in it with the outcome (instead of ``data``).
    first_outcome_only : bool, optional
        Whether the analysis keeps first outcomes only. Default: taken from ``data`` (True when
        built with ``first_outcome_only=True`` or when every case has one event); needed
        with the counts.
    max_prevalence : float in [0, 1]
        Largest prevalence passed (SelfControlledCaseSeries: 0.1).

    Returns
    -------
    Diagnostic
        ``value`` the prevalence; ``details``: ``n_persons``, ``n_cases``, ``first_outcome_only``.

    Raises
    ------
    TypeError, ValueError
        Both or neither of ``data`` and the counts, a design without the count of persons
        without outcomes (from :meth:`SCCSData.from_long`), ``n_cases > n_persons``.

    Examples
    --------
    >>> hp.sccs.rare_outcome(n_persons=10_000, n_cases=350, first_outcome_only=True)
    Diagnostic(rare_outcome: value=0.035, prevalence <= 0.1 or all outcomes used -> PASS)
    """
    max_prevalence = check_probability(max_prevalence, "max_prevalence", low_open=False)
    if data is not None:
        if n_persons is not None or n_cases is not None:
            raise TypeError("give either data or n_persons and n_cases, not both")
        if not isinstance(data, SCCSData):
            raise TypeError(f"data must be an SCCSData, got {type(data).__name__}")
        if "persons_without_outcomes" not in data.dropped:
            raise ValueError("data does not know the population without the outcome (it was not built by "
                             "SCCSData.from_eras); give n_persons and n_cases")
        n_cases = data.n_strata
        n_persons = n_cases + int(data.dropped["persons_without_outcomes"])
        if first_outcome_only is None:
            first_outcome_only = "later_outcomes" in data.dropped or bool(np.all(data.n_events == 1))
    else:
        if n_persons is None or n_cases is None:
            raise TypeError("rare_outcome needs data, or n_persons and n_cases")
        n_persons = check_int(n_persons, "n_persons", minimum=1)
        n_cases = check_int(n_cases, "n_cases", minimum=0)
        if n_cases > n_persons:
            raise ValueError(f"n_cases ({n_cases}) must be <= n_persons ({n_persons})")
        if first_outcome_only is None:
            raise TypeError("first_outcome_only must be True or False with n_persons and n_cases, got None")
    first_outcome_only = check_bool(first_outcome_only, "first_outcome_only")
    p = n_cases / n_persons
    passed = (p <= max_prevalence) if first_outcome_only else True
    return Diagnostic("rare_outcome", p, max_prevalence, bool(passed),
                      f"prevalence <= {max_prevalence:g} or all outcomes used",
                      {"n_persons": n_persons, "n_cases": n_cases, "first_outcome_only": first_outcome_only})
