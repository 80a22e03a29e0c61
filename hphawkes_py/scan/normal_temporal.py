"""The purely temporal scan statistic for continuous measurements: the normal model over time intervals.

SaTScan's purely temporal normal analysis (``ModelType=5`` with ``AnalysisType`` 2 or 6): the observations of
the whole region, each with a measurement (and a weight) and a day; a window is an interval of at most
``max_temporal`` days (prospective: ending on the last day), scored as :func:`~hphawkes_py.scan.normal` scores a
circle (one mean inside, one outside, a common variance); the Monte Carlo permutes the measurements among the
observations, which keep their days. The intervals are the cylinders of one window holding every location
(:class:`~.cpu_normal_space_time.NormalCylinderEngine` over a single location), and the clusters are listed as
SaTScan's purely temporal analyses list them: the most likely interval and, retrospective, the first interval of
LLR > 1 wholly before and wholly after it, recursively (:func:`~.temporal_model._apart`), in decreasing LLR.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .._backend import get_device, is_gpu_backend, threads_context
from .._validate import check_bool, check_int, check_positive
from .cpu_normal_space_time import NormalCylinderEngine, cumulative_from_end, intervals
from .monte_carlo import check_run
from .normal_model import (NORMAL, WEIGHTED_NORMAL, _check_min_cases, _check_observations, _totals, _window_table,
                           total_squares)
from .normal_space_time import _null_maxima
from .null_draws import strata_members
from .result import ScanResult
from .space_time_scan import _days, day_of, weekdays
from .temporal_model import listed_windows, with_p_values

__all__ = ["temporal_normal"]


def temporal_normal(times, values, *, weights=None, max_temporal=None, max_temporal_percent=50.0,
                    prospective=False, study_period=None, min_cases=None, n_replicates=999, direction="high",
                    seed=None, executor=None, backend="auto", threads=None, progress=True,
                    day_of_week=False) -> ScanResult:
    """Kulldorff's purely temporal scan statistic for continuous measurements (normal model).

    Semantics follow SaTScan's purely temporal normal analysis (``ModelType=5``, ``AnalysisType`` 2 or 6), and
    its weighted normal model with ``weights``: intervals of days scored by the likelihood ratio of a different
    mean inside than outside with a common variance, the measurements permuted among the observations for the
    null (see the module notes).

    Parameters
    ----------
    times : array_like (n,)
        The day of each observation: whole numbers (days) or datetime64 / pandas dates, tz-naive.
    values : array_like (n,)
        The measurement of each observation (real numbers; not all equal).
    weights : array_like (n,), optional
        Positive weight of each observation (SaTScan's weighted normal model).
    max_temporal : int >= 1, optional
        The longest interval (days); replaces ``max_temporal_percent``.
    max_temporal_percent : float in (0, 90]
        The longest interval as a percentage of the study period (SaTScan's default 50).
    prospective : bool
        Only intervals that end on the last day of the study period (SaTScan's ``AnalysisType=6``).
    study_period : (first, last), optional
        The study period's first and last day (default: the observations' first and last).
    min_cases : int >= 0, optional
        Observations a cluster needs, as in :func:`~hphawkes_py.scan.normal` (default: SaTScan's).
    n_replicates : int >= 1
        Monte Carlo replicates.
    direction : {"high", "low", "both"}
        Scan for intervals whose mean (weighted mean) is higher (lower, either) than outside.
    seed, executor, backend, threads, progress
        As in :func:`~hphawkes_py.scan.space_time_normal`.
    day_of_week : bool
        Adjust for the day of the week (SaTScan's ``AdjustForWeeklyTrends``): the measurements permuted among
        each weekday's observations only.

    Returns
    -------
    ScanResult
        ``model="temporal_normal"`` (``"temporal_weighted_normal"``), ``purely_temporal=True``: every cluster is
        an interval of the whole region (``center`` "All", ``location_ids`` empty, no coordinates or radius) with
        ``start``, ``end``, ``cases`` (its observations) and :func:`~hphawkes_py.scan.normal`'s columns
        (``mean_inside``, ``mean_outside``, ``variance``, ``std``; the weighted ones with weights).

    Examples
    --------
    Measurements that rise for ten days of a hundred:

    >>> rng = np.random.default_rng(4)
    >>> day = rng.integers(0, 100, 800)
    >>> x = rng.normal(20.0, 3.0, 800) + 2.5 * ((day >= 40) & (day < 50))
    >>> res = hp.scan.temporal_normal(day, x, max_temporal=20, n_replicates=99, seed=1, backend="cpu",
    ...                               progress=False)
    >>> top = res.most_likely
    >>> print(top.start, top.end, top.cases, round(top.mean_inside - top.mean_outside, 1), top.p_value)
    40 49 65 3.1 0.01
    """
    day, origin, T = _days(times, len(np.asarray(times).reshape(-1)), study_period)
    n = len(day)
    x, w = _check_observations(values, weights, n)
    day_of_week = check_bool(day_of_week, "day_of_week")
    prospective = check_bool(prospective, "prospective")
    max_t = longest_interval(max_temporal, max_temporal_percent, T)
    run = check_run(0, n_replicates, direction, "no-overlap", progress, threads, seed, backend, executor)
    weighted = w is not None
    m_cases = _check_min_cases(min_cases, run.direction, weighted)
    t1s, t2s = intervals(T, max_t, T - 1 if prospective else 0)
    day0 = int(t1s.min())
    first, second = (x * w, w.copy()) if weighted else (x, x * x)
    s1, s2 = np.zeros(T), np.zeros(T)
    np.add.at(s1, day, first)  # in observation order, as SaTScan sums them
    np.add.at(s2, day, second)
    counts = np.bincount(day, minlength=T)[None, :]
    U, U2, A, B = _totals(x, w)
    S0 = total_squares(x, w)
    # one window holding the one location every observation is at: its cylinders are the intervals
    engine = NormalCylinderEngine(WEIGHTED_NORMAL if weighted else NORMAL, np.array([0, 1], dtype=np.int64),
                                  np.zeros(1, dtype=np.int32), np.ones(1, dtype=np.uint8),
                                  cumulative_from_end(counts[:, day0:]), t1s - day0, t2s - day0, n, U, U2, A, B,
                                  m_cases, m_cases, run.direction in ("high", "both"), run.direction in ("low", "both"),
                                  S0)
    with threads_context(run.threads):
        per_mv, _ = engine.interval_best(s1[None, day0:], s2[None, day0:])
        val = np.zeros((T, max_t))
        val[t2s, t2s - t1s] = engine.llr(per_mv)[0]
        null_engine = engine
        if is_gpu_backend(run.backend):
            from .gpu import GpuNormalCylinderEngine

            null_engine = GpuNormalCylinderEngine(engine, device=get_device(run.backend), backend=run.backend)
        null_llr = _null_maxima(null_engine, np.zeros(n, dtype=np.int64), day, first, second, 1, T - day0 + 1, day0,
                                run, strata_members(weekdays(day, origin)) if day_of_week else None)
    clusters = _clusters(val, x, w, day, origin, null_llr, prospective)
    return ScanResult(
        clusters=clusters, null_llr=null_llr, backend=run.backend, n_cases=n, n_population=n, n_locations=1,
        n_merged=0, n_centres=1, n_windows=len(t1s), max_population=1.0, direction=run.direction,
        n_replicates=run.n_replicates, model="temporal_weighted_normal" if weighted else "temporal_normal",
        min_cases=m_cases, purely_temporal=True, day_of_week=day_of_week, _loc_coords=np.full((1, 2), np.nan),
        _loc_cases=np.array([n]), _loc_population=np.array([n]), _loc_expected=None, _loc_controls=None,
        _row_ids=np.zeros(n, dtype=np.int64), _row_loc=np.zeros(n, dtype=np.int64))


def longest_interval(max_temporal, max_temporal_percent, T: int) -> int:
    """The longest interval (days, at most the T of the study period) of a purely temporal analysis:
    ``max_temporal`` days, or without it ``max_temporal_percent`` (in (0, 90], SaTScan's limit) of the period."""
    if max_temporal is not None:
        max_t = check_int(max_temporal, "max_temporal", minimum=1)
    else:
        pct = check_positive(max_temporal_percent, "max_temporal_percent")
        if pct > 90:
            raise ValueError(f"max_temporal_percent must be in (0, 90] (SaTScan's limit), got {max_temporal_percent!r}")
        max_t = math.floor(T * pct / 100.0)
        if max_t < 1:
            raise ValueError(f"max_temporal_percent={max_temporal_percent!r} of {T} days is less than a day")
    return min(max_t, T)


def interval_clusters(val, null_llr, origin, prospective: bool, fields, empty_columns) -> pd.DataFrame:
    """The cluster table of a purely temporal analysis of the models whose records are observations (patients),
    from the intervals' LLRs ``val[t2, t2 - t1]`` (0: not of interest; -inf: not scanned): the best (the first of
    equal ones in the intervals' order: end day ascending, then length ascending) and, retrospective, the
    intervals apart from it (:func:`~.temporal_model.listed_windows`), with their p-values against ``null_llr``
    (:func:`~.temporal_model.with_p_values`). ``fields(t1, t2)``: the model's columns of an interval (its
    observations, expectation, means, ...); ``empty_columns``: the table's columns when nothing is listed."""
    T = val.shape[0]
    t2, span = divmod(int(np.argmax(val)), val.shape[1])
    windows = []
    if val[t2, span] > 0:
        windows = listed_windows((float(val[t2, span]), t2 - span, t2), np.where(np.isfinite(val), val, 0.0), T,
                                 not prospective and T > 2)
    rows = [{"center": "All", "x": math.nan, "y": math.nan, "radius": math.nan, "start": day_of(origin, t1),
             "end": day_of(origin, t2), "n_locations": 1, "location_ids": [], **fields(t1, t2),
             "log_likelihood_ratio": llr, "p_value": p, "purely_temporal": True}
            for llr, t1, t2, p in with_p_values(windows, null_llr)]
    return pd.DataFrame(rows, columns=None if rows else list(empty_columns))


def _clusters(val, x, w, day, origin, null_llr, prospective: bool) -> pd.DataFrame:
    """The cluster table of the intervals' LLRs ``val[t2, t2 - t1]`` (:func:`interval_clusters`): an interval's
    observations and :func:`~.normal_model.normal`'s columns."""
    def fields(t1, t2):
        inside = (day >= t1) & (day <= t2)
        return {"cases": int(inside.sum()), "population": int(inside.sum()), "expected": math.nan,
                "observed_over_expected": math.nan, "relative_risk": math.nan, **_window_table(x, w, inside)}

    return interval_clusters(val, null_llr, origin, prospective, fields,
                             ["center", "start", "end", "cases", "log_likelihood_ratio", "p_value", "purely_temporal"])
