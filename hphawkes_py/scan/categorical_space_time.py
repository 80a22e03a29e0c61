"""The space-time and purely temporal scan statistics for cases in categories: the ordinal and multinomial models.

SaTScan's space-time (``AnalysisType`` 3 / 4) and purely temporal (2 / 6) analyses of its ordinal (``ModelType=3``)
and multinomial (``ModelType=7``) models (``CategoricalTemporalDataEvaluator``, ``OrdinalLikelihoodCalculator``,
``OrdinalDenominatorDataRandomizer``):

1. every case has a category, a location and a day;
2. a cylinder is a circle Z (grown through the nearest locations up to ``max_population`` of the cases, as in
   :func:`~hphawkes_py.scan.ordinal`) over the days ``t1..t2`` (at most ``max_temporal``; prospective: ending on
   the last day); the purely temporal analyses' windows are the intervals of the whole region;
3. it is scored by the likelihood ratio of the purely spatial models (:mod:`._categorical`) with the cylinder's
   cases per category in place of the circle's: multinomial probabilities inside and outside, free (multinomial)
   or with a likelihood ratio monotone in the category (ordinal; pooled as SaTScan pools them);
4. Monte Carlo inference: the categories permuted among the cases, which keep their locations and days.

Of equal cylinders the first in SaTScan's loop is reported (the smallest circle, then the earliest end day, then
the shortest interval). The cylinders are scanned by
:class:`~.cpu_categorical_space_time.CategoricalCylinderEngine` (the replicates by the CUDA kernel
``scan_categorical_cylinders`` on a GPU); the clusters are listed as the space-time normal scan lists them
(:mod:`.cylinders`), the purely temporal ones as SaTScan's purely temporal analyses list them
(:func:`~.normal_temporal.interval_clusters`).
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from .._backend import get_device, is_gpu_backend, threads_context
from .._parallel import run_replicates
from .._validate import check_bool
from ._categorical import CategoricalEngine, GpuCategoricalEngine, check_categories, window_categories
from .cpu_categorical_space_time import CategoricalCylinderEngine, permuted_cumulative
from .cpu_normal_space_time import cumulative_from_end, intervals, surveillance_intervals
from .cylinders import cylinder_clusters, first_best, interval_candidates, observation_circles
from .locations import _check_xy, check_empty_locations
from .monte_carlo import batch_children, check_run, replicate_batches, replicate_seed_batches
from .normal_temporal import interval_clusters, longest_interval
from .null_draws import strata_members
from .result import ScanResult
from .space_time_scan import (SpaceTimeOptions, _check_common, _days, _with_purely_spatial, check_purely_spatial,
                              longest_cylinder, weekdays, with_empty_rows)
from .spatiotemporal import _period_days

__all__ = ["space_time_ordinal", "space_time_multinomial", "temporal_ordinal", "temporal_multinomial"]


def space_time_ordinal(coords, categories, times, *, max_population=0.5, max_distance=None, max_temporal=7,
                       prospective=False, study_period=None, n_replicates=999, direction="high",
                       distance="euclidean", location_ids=None, seed=None, executor=None, backend="auto",
                       threads=None, progress=True, max_temporal_percent=None, circle_population=None,
                       max_circle_population=0.5, centres=None, secondary="no-overlap", empty_locations=None,
                       empty_location_ids=None, purely_temporal=False, surveillance_start=None,
                       day_of_week=False, purely_spatial=False) -> ScanResult:
    """Kulldorff's space-time scan statistic for ordinal data (ordered categories), retrospective or prospective.

    Semantics follow SaTScan's space-time ordinal analysis (``ModelType=3``, ``AnalysisType=3`` or ``4``):
    cylinders as in :func:`~hphawkes_py.scan.space_time_normal` (circles up to ``max_population`` of the cases x
    intervals of at most ``max_temporal`` days), each scored by :func:`~hphawkes_py.scan.ordinal`'s likelihood
    ratio over the cylinder's cases; the categories are permuted among the cases for the null (see the module
    notes of :mod:`hphawkes_py.scan.categorical_space_time`).

    Parameters
    ----------
    coords : array_like (n, 2)
        Coordinates of each case's location (one row per case; rows with identical coordinates are one location).
        Planar, Euclidean distances, unless ``distance="great_circle"``.
    categories : array_like (n,) of numbers
        The ordinal category of each case (any numbers, ordered by value; at least 2 distinct).
    times : array_like (n,)
        The day of each case: whole numbers (days) or datetime64 / pandas dates, tz-naive.
    max_population : float in (0, 0.5]
        Maximum circle size as a fraction of all cases over the study period.
    max_distance : float, optional
        Maximum circle radius (coordinate units; km with ``distance="great_circle"``).
    max_temporal : int >= 1
        Maximum length of a cylinder's interval (days).
    prospective : bool
        Only intervals that end on the last day of the study period.
    study_period : (first, last), optional
        The study period's first and last day (default: the cases' first and last).
    n_replicates : int >= 1
        Monte Carlo replicates.
    direction : {"high", "low", "both"}
        Scan for cylinders whose cases lean to the higher categories (lower, either).
    distance : {"euclidean", "great_circle"}
        As in :func:`~hphawkes_py.scan.bernoulli`.
    location_ids : array_like (n,), optional
        Location id of each case (rows of one location share it), reported once per location.
    seed : None, int, SeedSequence or Generator
        Root of the per-replicate seeds: results do not depend on executor or batching.
    executor : None, concurrent.futures.Executor or dask Client
        Where the Monte Carlo batches run.
    backend : {"auto", "cpu", "gpu", "emulator"}
        The engine of the replicates' cylinders (the CUDA kernel on a GPU, or on the CPU emulator; both give the
        same maxima). The observed data's cylinders are scanned on the CPU.
    threads : int, optional
        Numba threads.
    progress : bool
        Show a progress bar over Monte Carlo batches.
    max_temporal_percent : float in (0, 100], optional
        The longest interval as a percentage of the study period (SaTScan's ``MaxTemporalSizeInterpretation=0``);
        replaces ``max_temporal``.
    circle_population, max_circle_population, centres, secondary
        As in :func:`~hphawkes_py.scan.space_time` (``circle_population``: one value per row of ``coords`` and
        then one per empty location).
    empty_locations : array_like (k, 2), optional
        Locations without cases (a SaTScan coordinates file's locations that no record names): circle centres,
        and members of the circles that reach them, as SaTScan scans them.
    empty_location_ids : array_like (k,), optional
        Their ids (with ``location_ids``).
    purely_temporal : bool
        Also the purely temporal clusters (every location; SaTScan's ``IncludePurelyTemporal``).
    surveillance_start : day or date, optional
        With ``prospective``: adjust for the earlier analyses of a surveillance that began on this day (SaTScan's
        ``AdjustForEarlierAnalyses``): every replicate's maximum is over the cylinders of every analysis since
        then, as in :func:`~hphawkes_py.scan.space_time_permutation` (SaTScan 10.3.2 takes the setting for
        these models but does not adjust).
    day_of_week : bool
        Adjust for the day of the week (SaTScan's ``AdjustForWeeklyTrends``): the Monte Carlo permutes the
        categories among the cases of each weekday only; the cylinders' LLRs are unchanged.
    purely_spatial : bool
        Also the purely spatial clusters (SaTScan's ``IncludePurelySpatial``): every circle over the whole study
        period, the cylinders then at most one day shorter than it; a centre's purely spatial cluster is its
        candidate where its LLR is above its best cylinder's, and every replicate's maximum is over both. Not
        with ``surveillance_start``.

    Returns
    -------
    ScanResult
        ``model="space_time_ordinal"``: ``clusters.cases`` and ``population`` the cylinder's cases, ``start`` and
        ``end`` its days, ``expected`` and ``relative_risk`` NaN, and :func:`~hphawkes_py.scan.ordinal`'s category
        table (``categories``, ``observed_by_category``, ``expected_by_category``, ``ode_by_category``,
        ``relative_risk_by_category``, ``percent_by_category``, ``cluster_type``). ``n_cases`` and
        ``n_population``: the cases.

    Examples
    --------
    Severer cases (grades 1-3) around one village during ten days of sixty:

    >>> rng = np.random.default_rng(3)
    >>> xy = rng.uniform(0, 10, (30, 2)).round(3)
    >>> village = rng.integers(0, 30, 1500)
    >>> day = rng.integers(0, 60, 1500)
    >>> near = (np.hypot(*(xy[village] - xy[0]).T) < 3) & (day >= 20) & (day < 30)
    >>> grade = np.where(near, rng.choice([1, 2, 3], 1500, p=[.1, .2, .7]),
    ...                  rng.choice([1, 2, 3], 1500, p=[.5, .3, .2]))
    >>> res = hp.scan.space_time_ordinal(xy[village], grade, day, location_ids=village, max_temporal=14,
    ...                                  n_replicates=99, seed=1, backend="cpu", progress=False)
    >>> top = res.most_likely
    >>> print(top.start, top.end, top.cases, top.observed_by_category, top.cluster_type, top.p_value)
    20 29 30 [3, 7, 20] high 0.02
    """
    return _space_time(coords, categories, times, True, locals())


def space_time_multinomial(coords, categories, times, *, max_population=0.5, max_distance=None, max_temporal=7,
                           prospective=False, study_period=None, n_replicates=999, distance="euclidean",
                           location_ids=None, seed=None, executor=None, backend="auto", threads=None, progress=True,
                           max_temporal_percent=None, circle_population=None, max_circle_population=0.5,
                           centres=None, secondary="no-overlap", empty_locations=None, empty_location_ids=None,
                           purely_temporal=False, surveillance_start=None, day_of_week=False,
                           purely_spatial=False) -> ScanResult:
    """Kulldorff's space-time scan statistic for multinomial data (unordered categories), retrospective or
    prospective.

    Semantics follow SaTScan's space-time multinomial analysis (``ModelType=7``, ``AnalysisType=3`` or ``4``):
    the cylinders of :func:`~hphawkes_py.scan.space_time_ordinal`, each scored by
    :func:`~hphawkes_py.scan.multinomial`'s likelihood ratio (free category probabilities inside and outside)
    over the cylinder's cases; the categories are permuted among the cases for the null.

    Parameters
    ----------
    coords : array_like (n, 2)
        Coordinates of each case's location (one row per case).
    categories : array_like (n,)
        The category of each case: labels or numbers, at least 2 distinct; reported in SaTScan's order (sorted).
    times : array_like (n,)
        The day of each case: whole numbers (days) or datetime64 / pandas dates, tz-naive.
    max_population, max_distance, max_temporal, prospective, study_period, n_replicates, distance, location_ids
        As in :func:`~hphawkes_py.scan.space_time_ordinal`.
    seed, executor, backend, threads, progress, max_temporal_percent, circle_population, max_circle_population
        As in :func:`~hphawkes_py.scan.space_time_ordinal`.
    centres, secondary, empty_locations, empty_location_ids, purely_temporal, surveillance_start, day_of_week
        As in :func:`~hphawkes_py.scan.space_time_ordinal`.
    purely_spatial
        As in :func:`~hphawkes_py.scan.space_time_ordinal`.

    Returns
    -------
    ScanResult
        ``model="space_time_multinomial"``: as :func:`~hphawkes_py.scan.space_time_ordinal`'s, each category its
        own row of the category table and no ``cluster_type``.

    Examples
    --------
    One serotype (of A, B, C) more common around one village during ten days of sixty:

    >>> rng = np.random.default_rng(5)
    >>> xy = rng.uniform(0, 10, (30, 2)).round(3)
    >>> village = rng.integers(0, 30, 1500)
    >>> day = rng.integers(0, 60, 1500)
    >>> near = (np.hypot(*(xy[village] - xy[0]).T) < 3) & (day >= 20) & (day < 30)
    >>> sero = np.where(near, rng.choice(list("ABC"), 1500, p=[.1, .8, .1]), rng.choice(list("ABC"), 1500))
    >>> res = hp.scan.space_time_multinomial(xy[village], sero, day, location_ids=village, max_temporal=14,
    ...                                      n_replicates=99, seed=1, backend="cpu", progress=False)
    >>> top = res.most_likely
    >>> print(top.start, top.end, top.categories, top.observed_by_category, top.p_value)
    20 29 [('A',), ('B',), ('C',)] [1, 39, 9] 0.01
    """
    return _space_time(coords, categories, times, False, dict(locals(), direction="high"))


def _space_time(coords, categories, times, ordinal: bool, kw: dict) -> ScanResult:
    """The space-time ordinal (``ordinal``) or multinomial scan with the public function's arguments ``kw``."""
    xy = _check_xy(coords)
    n = len(xy)
    cat, labels = check_categories(categories, n, ordinal=ordinal)
    purely_temporal = check_bool(kw["purely_temporal"], "purely_temporal")
    day_of_week = check_bool(kw["day_of_week"], "day_of_week")
    purely_spatial = check_purely_spatial(kw["purely_spatial"], kw["surveillance_start"])
    empty = check_empty_locations(kw["empty_locations"], kw["empty_location_ids"], kw["location_ids"] is not None)
    xy, counted, times, location_ids = with_empty_rows(xy, np.ones(n, dtype=np.int64), times, kw["location_ids"],
                                                       empty)
    opts = SpaceTimeOptions(kw["max_population"], kw["max_distance"], kw["max_temporal"], kw["prospective"],
                            kw["study_period"], 0, kw["n_replicates"], kw["direction"], kw["distance"], location_ids,
                            kw["seed"], kw["executor"], kw["backend"], kw["threads"], kw["progress"],
                            kw["surveillance_start"],
                            kw["circle_population"], kw["max_circle_population"], kw["centres"],
                            kw["max_temporal_percent"], kw["secondary"])
    cm = _check_common(xy, counted, times, opts)
    K = len(labels)
    L, T = cm.c_lt.shape
    counts = np.zeros((L, T, K), dtype=np.int64)
    np.add.at(counts, (cm.gid[:n], cm.day[:n], cat), 1)
    tot = counts.sum(axis=(0, 1))
    want_high = cm.run.direction in ("high", "both") or not ordinal
    want_low = cm.run.direction in ("low", "both") and ordinal
    max_t = min(longest_cylinder(cm.max_temporal, T, purely_spatial), T)
    t1s, t2s = intervals(T, max_t, T - 1 if cm.prospective else 0)
    # the days before the first interval's start are in no cylinder (but in the purely spatial clusters)
    day0 = 0 if purely_spatial else int(t1s.min())
    size = cm.c_lt.sum(axis=1)
    with threads_context(cm.run.threads):
        circles_ = observation_circles(cm, size, purely_temporal)
        offsets, neighbors, boundary, m = circles_[4:]
        engine = CategoricalCylinderEngine(offsets, neighbors, boundary, cumulative_from_end(cm.c_lt[:, day0:]),
                                           t1s - day0, t2s - day0, tot, ordinal, want_high, want_low)
        per_mv, per_j = engine.interval_best(counts[:, day0:])
        per_llr = engine.llr(per_mv)
        found = interval_candidates(per_llr[:m], per_j[:m], t1s, t2s, T, max_t, not cm.prospective and T > 2)
        pt = first_best(per_llr[m:], per_j[m:])[:2] if purely_temporal else None
        ps = None
        if purely_spatial:  # the circles over the whole period: the purely spatial scan of the cases per location
            ps = CategoricalEngine(offsets[:m + 1], neighbors, boundary, tot, ordinal, want_high, want_low)
            ps_best, ps_j = (v[:, 0] for v in ps.best_per_centre(counts.sum(axis=1)[:, :, None].astype(np.int32)))
            found = _with_purely_spatial(*found, ps_best, ps_j, T)
        null_engine, null_day0 = engine, day0
        if cm.null_end_min is not None:
            # adjusted for earlier analyses: the replicates' maxima over the cylinders of every analysis since the
            # surveillance began (each ending on its own last day), the observed clusters those ending last
            n1, n2 = surveillance_intervals(T, cm.null_cuts or ((cm.null_end_min, cm.max_temporal),))
            null_day0 = int(n1.min())
            null_engine = dataclasses.replace(engine, n_cum=cumulative_from_end(cm.c_lt[:, null_day0:]),
                                              t1s=n1 - null_day0, t2s=n2 - null_day0)
        # the weekday adjustment: the categories permuted among each weekday's cases
        strata = strata_members(np.mod(_period_days(cm)[cm.day[:n]], 7)) if day_of_week else None
        null_llr = _null_maxima(_device_engine(null_engine, cm.run.backend), cm.gid[:n], cm.day[:n] - null_day0, cat,
                                K, L, T - null_day0, cm.run, strata, _device_engine(ps, cm.run.backend))

    def table(members, t1, t2):
        return window_categories(counts[members, t1:t2 + 1].sum(axis=(0, 1)), tot, labels, ordinal, want_high,
                                 want_low)

    df = cylinder_clusters(cm, circles_, found, pt, t1s, t2s, null_llr, purely_temporal, table)
    return ScanResult(
        clusters=df, null_llr=null_llr, backend=cm.run.backend, n_cases=n, n_population=n, n_locations=L,
        n_merged=cm.n - L, n_centres=len(circles_[0]), n_windows=int(boundary[:offsets[m]].sum()),
        max_population=cm.max_population, direction=cm.run.direction, n_replicates=cm.run.n_replicates,
        model="space_time_ordinal" if ordinal else "space_time_multinomial", max_distance=cm.max_distance,
        min_cases=0, distance=cm.distance, _loc_coords=cm.loc_coords, _loc_cases=size, _loc_population=size,
        _loc_expected=None, _loc_controls=None, _row_ids=cm.ids, _row_loc=cm.gid, purely_temporal=purely_temporal,
        day_of_week=day_of_week, purely_spatial=purely_spatial)


def temporal_ordinal(times, categories, *, max_temporal=None, max_temporal_percent=50.0, prospective=False,
                     study_period=None, n_replicates=999, direction="high", seed=None, executor=None, backend="auto",
                     threads=None, progress=True, day_of_week=False) -> ScanResult:
    """Kulldorff's purely temporal scan statistic for ordinal data (ordered categories).

    Semantics follow SaTScan's purely temporal ordinal analysis (``ModelType=3``, ``AnalysisType`` 2 or 6):
    intervals of days of the whole region, each scored by :func:`~hphawkes_py.scan.ordinal`'s likelihood ratio
    over the interval's cases, the categories permuted among the cases (which keep their days) for the null.

    Parameters
    ----------
    times : array_like (n,)
        The day of each case: whole numbers (days) or datetime64 / pandas dates, tz-naive.
    categories : array_like (n,) of numbers
        The ordinal category of each case (any numbers, ordered by value; at least 2 distinct).
    max_temporal : int >= 1, optional
        The longest interval (days); replaces ``max_temporal_percent``.
    max_temporal_percent : float in (0, 90]
        The longest interval as a percentage of the study period (SaTScan's default 50).
    prospective : bool
        Only intervals that end on the last day of the study period (SaTScan's ``AnalysisType=6``).
    study_period : (first, last), optional
        The study period's first and last day (default: the cases' first and last).
    n_replicates : int >= 1
        Monte Carlo replicates.
    direction : {"high", "low", "both"}
        Scan for intervals whose cases lean to the higher categories (lower, either).
    seed, executor, backend, threads, progress, day_of_week
        As in :func:`~hphawkes_py.scan.space_time_ordinal`.

    Returns
    -------
    ScanResult
        ``model="temporal_ordinal"``, ``purely_temporal=True``: every cluster is an interval of the whole region
        (``center`` "All", ``location_ids`` empty, no coordinates or radius) with ``start``, ``end``, ``cases`` and
        :func:`~hphawkes_py.scan.ordinal`'s category table.

    Examples
    --------
    Severer cases for ten days of a hundred:

    >>> rng = np.random.default_rng(4)
    >>> day = rng.integers(0, 100, 800)
    >>> late = (day >= 40) & (day < 50)
    >>> grade = np.where(late, rng.choice([1, 2, 3], 800, p=[.2, .3, .5]), rng.choice([1, 2, 3], 800, p=[.5, .3, .2]))
    >>> res = hp.scan.temporal_ordinal(day, grade, max_temporal=20, n_replicates=99, seed=1, backend="cpu",
    ...                                progress=False)
    >>> top = res.most_likely
    >>> print(top.start, top.end, top.cases, top.observed_by_category, top.p_value)
    40 51 84 [17, 29, 38] 0.01
    """
    return _temporal(times, categories, True, locals())


def temporal_multinomial(times, categories, *, max_temporal=None, max_temporal_percent=50.0, prospective=False,
                         study_period=None, n_replicates=999, seed=None, executor=None, backend="auto", threads=None,
                         progress=True, day_of_week=False) -> ScanResult:
    """Kulldorff's purely temporal scan statistic for multinomial data (unordered categories).

    Semantics follow SaTScan's purely temporal multinomial analysis (``ModelType=7``, ``AnalysisType`` 2 or 6):
    :func:`~hphawkes_py.scan.temporal_ordinal`'s intervals, each scored by
    :func:`~hphawkes_py.scan.multinomial`'s likelihood ratio.

    Parameters
    ----------
    times : array_like (n,)
        The day of each case: whole numbers (days) or datetime64 / pandas dates, tz-naive.
    categories : array_like (n,)
        The category of each case: labels or numbers, at least 2 distinct; reported in SaTScan's order (sorted).
    max_temporal, max_temporal_percent, prospective, study_period, n_replicates
        As in :func:`~hphawkes_py.scan.temporal_ordinal`.
    seed, executor, backend, threads, progress, day_of_week
        As in :func:`~hphawkes_py.scan.space_time_ordinal`.

    Returns
    -------
    ScanResult
        ``model="temporal_multinomial"``: as :func:`~hphawkes_py.scan.temporal_ordinal`'s, each category its own
        row of the category table and no ``cluster_type``.

    Examples
    --------
    One subtype (of A, B, C) more common for ten days of a hundred:

    >>> rng = np.random.default_rng(6)
    >>> day = rng.integers(0, 100, 800)
    >>> late = (day >= 40) & (day < 50)
    >>> sub = np.where(late, rng.choice(list("ABC"), 800, p=[.1, .8, .1]), rng.choice(list("ABC"), 800))
    >>> res = hp.scan.temporal_multinomial(day, sub, max_temporal=20, n_replicates=99, seed=1, backend="cpu",
    ...                                    progress=False)
    >>> top = res.most_likely
    >>> print(top.start, top.end, top.observed_by_category, top.p_value)
    41 50 [10, 64, 10] 0.01
    """
    return _temporal(times, categories, False, dict(locals(), direction="high"))


def _temporal(times, categories, ordinal: bool, kw: dict) -> ScanResult:
    """The purely temporal ordinal (``ordinal``) or multinomial scan with the public function's arguments ``kw``."""
    day, origin, T = _days(times, len(np.asarray(times).reshape(-1)), kw["study_period"])
    n = len(day)
    cat, labels = check_categories(categories, n, ordinal=ordinal)
    prospective = check_bool(kw["prospective"], "prospective")
    day_of_week = check_bool(kw["day_of_week"], "day_of_week")
    max_t = longest_interval(kw["max_temporal"], kw["max_temporal_percent"], T)
    run = check_run(0, kw["n_replicates"], kw["direction"], "no-overlap", kw["progress"], kw["threads"], kw["seed"],
                    kw["backend"], kw["executor"])
    K = len(labels)
    counts = np.zeros((1, T, K), dtype=np.int64)
    np.add.at(counts, (0, day, cat), 1)
    tot = counts.sum(axis=(0, 1))
    want_high = run.direction in ("high", "both") or not ordinal
    want_low = run.direction in ("low", "both") and ordinal
    t1s, t2s = intervals(T, max_t, T - 1 if prospective else 0)
    day0 = int(t1s.min())
    # one window holding the one location every case is at: its cylinders are the intervals
    engine = CategoricalCylinderEngine(np.array([0, 1], dtype=np.int64), np.zeros(1, dtype=np.int32),
                                       np.ones(1, dtype=np.uint8), cumulative_from_end(counts[:, day0:].sum(axis=2)),
                                       t1s - day0, t2s - day0, tot, ordinal, want_high, want_low)
    with threads_context(run.threads):
        per_mv, _ = engine.interval_best(counts[:, day0:])
        val = np.zeros((T, max_t))
        val[t2s, t2s - t1s] = engine.llr(per_mv)[0]
        null_llr = _null_maxima(_device_engine(engine, run.backend), np.zeros(n, dtype=np.int64), day - day0, cat, K,
                                1, T - day0, run, strata_members(weekdays(day, origin)) if day_of_week else None)

    def fields(t1, t2):
        o = counts[0, t1:t2 + 1].sum(axis=0)
        return {"cases": int(o.sum()), "population": int(o.sum()), "expected": math.nan,
                "observed_over_expected": math.nan, "relative_risk": math.nan,
                **window_categories(o, tot, labels, ordinal, want_high, want_low)}

    clusters = interval_clusters(val, null_llr, origin, prospective, fields,
                                 ["center", "start", "end", "cases", "categories", "observed_by_category",
                                  "log_likelihood_ratio", "p_value", "purely_temporal"])
    return ScanResult(
        clusters=clusters, null_llr=null_llr, backend=run.backend, n_cases=n, n_population=n, n_locations=1,
        n_merged=0, n_centres=1, n_windows=len(t1s), max_population=1.0, direction=run.direction,
        n_replicates=run.n_replicates, model="temporal_ordinal" if ordinal else "temporal_multinomial", min_cases=0,
        purely_temporal=True, day_of_week=day_of_week, _loc_coords=np.full((1, 2), np.nan), _loc_cases=np.array([n]),
        _loc_population=np.array([n]), _loc_expected=None, _loc_controls=None, _row_ids=np.zeros(n, dtype=np.int64),
        _row_loc=np.zeros(n, dtype=np.int64))


# ---------------------------------------------------------------------------- the null
def _device_engine(engine, backend: str):
    """The engine of the replicates: ``engine`` itself (a :class:`CategoricalCylinderEngine`, a purely spatial
    :class:`~._categorical.CategoricalEngine` or None), or its CUDA kernel on a GPU backend."""
    if engine is None or not is_gpu_backend(backend):
        return engine
    if isinstance(engine, CategoricalEngine):
        return GpuCategoricalEngine(engine, device=get_device(backend), backend=backend)
    from .gpu import GpuCategoricalCylinderEngine

    return GpuCategoricalCylinderEngine(engine, device=get_device(backend), backend=backend)


def _null_batch(size, batch_seed, engine, loc, day, cat, K, L, T1, strata=None, ps=None):
    """One Monte Carlo batch: ``size`` permutations of the categories and their largest cylinder LLRs (and purely
    spatial ones: ``ps``, the engine of the circles over every day of the cumulative counts) (module level so
    process pools can pickle it)."""
    cum = permuted_cumulative(loc, day, cat, K, L, T1, batch_children(batch_seed, size), strata)
    best = engine.max_llr(cum)
    return best if ps is None else np.maximum(best, ps.max_llr(np.ascontiguousarray(cum[:, 0])))


def _null_maxima(engine, loc, day, cat, K: int, L: int, T1: int, run, strata=None, ps=None) -> np.ndarray:
    """(n_replicates,) float64 largest cylinder LLR of each null replicate (with ``ps``, of :func:`_null_batch`), in
    replicate order, in batches whose cumulative counts (L x (T1 + 1) x K int32 a replicate) stay within
    ``CPU_BATCH_BYTES`` (a GPU: 256 MiB)."""
    R = run.n_replicates
    batch, sizes = replicate_batches(R, 16 * L * (T1 + 1) * K, is_gpu_backend(engine.backend), run.executor, least=1)
    parts = run_replicates(_null_batch, sizes, seeds=replicate_seed_batches(run.seed, R, batch),
                           executor=run.executor, progress=run.progress, desc="space-time categorical Monte Carlo",
                           args=(engine, loc, day, cat, K, L, T1, strata, ps))
    return np.concatenate(parts).astype(np.float64)
