"""The purely temporal scan statistic for survival data: the exponential model over time intervals.

SaTScan's purely temporal exponential analysis (``ModelType=4`` with ``AnalysisType`` 2 or 6): the patients of the
whole region, each with a survival time, a censoring flag and a day; an interval of at most ``max_temporal``
days (prospective: ending on the last day) expects the calibrated time of its patients as deaths and is scored by
the Poisson likelihood ratio, as the space-time exponential scan scores a cylinder
(:mod:`.exponential_space_time`); the Monte Carlo permutes the (time, censoring) pairs among the patients. The
replicates' maxima are those of the space-time exponential scan's purely temporal clusters (every location),
and the clusters are listed as SaTScan's purely temporal analyses list them: the most likely interval and,
retrospective, the first interval of LLR > 1 wholly before and wholly after it, recursively
(:func:`~.temporal_model._apart`), in decreasing LLR.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .exponential_model import _calibrated, _check_patients
from .exponential_space_time import space_time_exponential
from .result import ScanResult
from .space_time_scan import _days
from .normal_temporal import interval_clusters, longest_interval

__all__ = ["temporal_exponential"]


def temporal_exponential(times, survival_times, censored=None, *, max_temporal=None, max_temporal_percent=50.0,
                         prospective=False, study_period=None, min_cases=2, n_replicates=999, direction="high",
                         seed=None, executor=None, backend="auto", threads=None, progress=True,
                         day_of_week=False) -> ScanResult:
    """Kulldorff's purely temporal scan statistic for survival data (exponential model).

    Semantics follow SaTScan's purely temporal exponential analysis (``ModelType=4``, ``AnalysisType`` 2 or 6):
    intervals of days whose patients die sooner (later) than expected, the (time, censoring) pairs permuted among
    the patients for the null (see the module notes).

    Parameters
    ----------
    times : array_like (n,)
        The day of each patient: whole numbers (days) or datetime64 / pandas dates, tz-naive.
    survival_times : array_like (n,)
        Survival (follow-up) time of each patient, > 0, in any unit (it is calibrated away).
    censored : array_like (n,) of bool or 0/1, optional
        1 (True) where the patient's survival time is censored; default none.
    max_temporal : int >= 1, optional
        The longest interval (days); replaces ``max_temporal_percent``.
    max_temporal_percent : float in (0, 90]
        The longest interval as a percentage of the study period (SaTScan's default 50).
    prospective : bool
        Only intervals that end on the last day of the study period (``AnalysisType=6``).
    study_period : (first, last), optional
        The study period's first and last day (default: the patients' first and last).
    min_cases : int >= 2
        Uncensored patients a high-rate interval needs.
    n_replicates, direction, seed, executor, backend, threads, progress, day_of_week
        As in :func:`~hphawkes_py.scan.space_time_exponential`.

    Returns
    -------
    ScanResult
        ``model="temporal_exponential"``, ``purely_temporal=True``: every cluster an interval of the whole region
        (``center`` "All", no location ids, coordinates or radius) with ``start``, ``end``, ``cases`` (uncensored
        patients), ``population`` (patients), ``expected`` (expected deaths) and ``observed_over_expected``.

    Examples
    --------
    Shorter survival among the patients of ten days of a hundred:

    >>> rng = np.random.default_rng(2)
    >>> day = rng.integers(0, 100, 600)
    >>> t = rng.exponential(np.where((day >= 40) & (day < 50), 1.0, 6.0)).round(3) + 0.001
    >>> res = hp.scan.temporal_exponential(day, np.minimum(t, 8), t > 8, max_temporal=20, n_replicates=99,
    ...                                    seed=1, backend="cpu", progress=False)
    >>> top = res.most_likely
    >>> print(top.start, top.end, top.cases, round(top.expected, 1), top.p_value)
    40 49 68 12.3 0.01
    """
    day, origin, T = _days(times, len(np.asarray(times).reshape(-1)), study_period)
    n = len(day)
    t, cen = _check_patients(survival_times, censored, n, "survival_times")
    max_t = longest_interval(max_temporal, max_temporal_percent, T)
    # every patient at one location, which holds more than any circle may: no cylinder, only the purely
    # temporal clusters, whose replicate maxima are this analysis's
    res = space_time_exponential(np.zeros((n, 2)), t, times, cen, max_population=0.5, max_temporal=max_t,
                                 prospective=prospective, study_period=study_period, min_cases=min_cases,
                                 n_replicates=n_replicates, direction=direction, seed=seed, executor=executor,
                                 backend=backend, threads=threads, progress=progress, day_of_week=day_of_week,
                                 purely_temporal=True)
    dead = (~cen).astype(np.int64)
    C = int(dead.sum())
    mu, _ = _calibrated(t, C)
    deaths = np.bincount(day, weights=dead, minlength=T)
    expected = np.bincount(day, weights=mu, minlength=T)
    patients = np.bincount(day, minlength=T)
    val = _interval_llrs(deaths, expected, C, max_t, T - 1 if prospective else 0, res.min_cases,
                         res.direction)
    clusters = _clusters(val, deaths, expected, patients, origin, res.null_llr, prospective)
    return ScanResult(
        clusters=clusters, null_llr=res.null_llr, backend=res.backend, n_cases=C, n_population=n, n_locations=1,
        n_merged=0, n_centres=1, n_windows=int((val > -np.inf).sum()), max_population=1.0, direction=res.direction,
        n_replicates=res.n_replicates, model="temporal_exponential", min_cases=res.min_cases, purely_temporal=True,
        day_of_week=res.day_of_week, _loc_coords=np.full((1, 2), np.nan), _loc_cases=np.array([C]),
        _loc_population=np.array([n]), _loc_expected=np.array([float(expected.sum())]), _loc_controls=None,
        _row_ids=np.zeros(n, dtype=np.int64), _row_loc=np.zeros(n, dtype=np.int64))


def _interval_llrs(deaths, expected, C: int, max_t: int, t_end_min: int, min_cases: int, direction: str):
    """``val[t2, t2 - t1]``: the LLR of every interval (0 when it is not of interest; -inf when it is not scanned),
    ``c log(c/mu) + (C-c) log((C-c)/(C-mu))`` of its deaths c and expected deaths mu, a higher rate needing
    ``c > mu`` and ``min_cases`` deaths, a lower one ``c < mu``."""
    T = len(deaths)
    S = np.concatenate([[0.0], np.cumsum(deaths)])
    E = np.concatenate([[0.0], np.cumsum(expected)])
    val = np.full((T, max_t), -np.inf)
    high, low = direction in ("high", "both"), direction in ("low", "both")
    for t2 in range(t_end_min, T):
        for span in range(min(max_t, t2 + 1)):
            t1 = t2 - span
            c, e = S[t2 + 1] - S[t1], E[t2 + 1] - E[t1]
            ok = 0 < e < C and ((high and c > e and c >= min_cases) or (low and c < e))
            if not ok:
                val[t2, span] = 0.0
                continue
            inside = c * math.log(c / e) if c > 0 else 0.0
            outside = (C - c) * math.log((C - c) / (C - e)) if C > c else 0.0
            val[t2, span] = inside + outside
    return val


def _clusters(val, deaths, expected, patients, origin, null_llr, prospective: bool) -> pd.DataFrame:
    """The cluster table of the intervals' LLRs (:func:`~.normal_temporal.interval_clusters`): an interval's
    deaths, patients and expected deaths."""
    def fields(t1, t2):
        c, e = int(deaths[t1:t2 + 1].sum()), float(expected[t1:t2 + 1].sum())
        return {"cases": c, "population": int(patients[t1:t2 + 1].sum()), "expected": e,
                "observed_over_expected": c / e, "relative_risk": math.nan}

    return interval_clusters(val, null_llr, origin, prospective, fields,
                             ["center", "start", "end", "cases", "expected", "log_likelihood_ratio", "p_value",
                              "purely_temporal"])
