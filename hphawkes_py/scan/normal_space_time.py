"""The space-time scan statistic for continuous measurements: the normal model over cylinders.

Kulldorff, Huang & Konty (2009) extended to cylinders as SaTScan's space-time normal analysis runs it
(``ModelType=5`` with ``AnalysisType`` 3 or 4; ``NormalLikelihoodCalculator``,
``WeightedNormalLikelihoodCalculator``, ``NormalRandomizer``):

1. every observation has a measurement ``x`` (with a weight ``w`` in the weighted model), a location and a day;
2. a cylinder is a circle Z (grown through the nearest locations up to ``max_population`` of the
   observations, as in :func:`~hphawkes_py.scan.normal`) over the days ``t1..t2`` (at most ``max_temporal``;
   prospective: ending on the last day); it holds the observations of its locations on its days;
3. it is scored by the likelihood ratio of one mean inside and one outside with a common variance against one
   mean everywhere, the formulas of the purely spatial model (:mod:`.normal_model`) with the cylinder's
   observations in place of the circle's, when its mean (weighted mean) is higher (lower, either) than outside;
4. Monte Carlo inference: the measurements (with their weights) permuted among the observations, which keep
   their locations and days.

The cylinders are scanned by :class:`~.cpu_normal_space_time.NormalCylinderEngine` (the replicates by the CUDA
kernel ``scan_normal_cylinders`` on a GPU); a retrospective analysis lists its clusters as SaTScan 10 does, from
each centre's best cylinder and the best ones before and after it in time (:mod:`.cylinders`).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .._backend import get_device, is_gpu_backend, threads_context
from .._validate import check_bool
from .._parallel import run_replicates
from .cpu_normal_space_time import (NormalCylinderEngine, cumulative_from_end, intervals, permuted_cumulative,
                                    surveillance_intervals)
from .cylinders import cylinder_clusters, first_best, interval_candidates, observation_circles
from .locations import _check_xy, check_empty_locations
from .monte_carlo import batch_children, replicate_batches, replicate_seed_batches
from .normal_model import (NORMAL, WEIGHTED_NORMAL, PermutationEngine, _check_min_cases, _check_observations, _totals,
                           _window_table, total_squares)
from .null_draws import permute_measurements, strata_members
from .result import ScanResult
from .space_time_scan import (SpaceTimeOptions, _check_common, _with_purely_spatial, check_purely_spatial,
                              longest_cylinder, with_empty_rows)
from .spatiotemporal import _period_days

__all__ = ["space_time_normal"]


def space_time_normal(coords, values, times, *, weights=None, max_population=0.5, max_distance=None, max_temporal=7,
                      prospective=False, study_period=None, min_cases=None, n_replicates=999, direction="high",
                      distance="euclidean", location_ids=None, seed=None, executor=None, backend="auto", threads=None,
                      progress=True, max_temporal_percent=None, circle_population=None, max_circle_population=0.5,
                      centres=None, secondary="no-overlap", empty_locations=None,
                      empty_location_ids=None, surveillance_start=None, day_of_week=False,
                      purely_temporal=False, purely_spatial=False) -> ScanResult:
    """Kulldorff's space-time scan statistic for continuous measurements (normal model), retrospective or prospective.

    Semantics follow SaTScan's space-time normal analysis (``ModelType=5``, ``AnalysisType=3`` or ``4``), and its
    weighted normal model when ``weights`` are given: cylinders as in
    :func:`~hphawkes_py.scan.space_time_permutation` (circles up to ``max_population`` of the observations x
    intervals of at most ``max_temporal`` days), each scored by the likelihood ratio of a different mean inside
    than outside with a common variance (:func:`~hphawkes_py.scan.normal`'s formulas over the cylinder's
    observations); the measurements (and weights) are permuted among the observations for the null.

    Parameters
    ----------
    coords : array_like (n, 2)
        Coordinates of each observation's location (one row per observation; rows with identical coordinates are
        one location). Planar, Euclidean distances, unless ``distance="great_circle"``.
    values : array_like (n,)
        The measurement of each observation (real numbers, in any unit; not all equal).
    times : array_like (n,)
        The day of each observation: whole numbers (days) or datetime64 / pandas dates, tz-naive.
    weights : array_like (n,), optional
        Positive weight of each observation: SaTScan's weighted normal model (weighted means and variances, the
        (measurement, weight) pairs permuted together). Without weights, the unweighted model.
    max_population : float in (0, 0.5]
        Maximum circle size as a fraction of all observations over the study period.
    max_distance : float, optional
        Maximum circle radius (coordinate units; km with ``distance="great_circle"``).
    max_temporal : int >= 1
        Maximum length of a cylinder's interval (days).
    prospective : bool
        Only intervals that end on the last day of the study period.
    study_period : (first, last), optional
        The study period's first and last day (default: the observations' first and last).
    min_cases : int >= 0, optional
        Observations a cluster needs, as in :func:`~hphawkes_py.scan.normal` (default: SaTScan's).
    n_replicates : int >= 1
        Monte Carlo replicates.
    direction : {"high", "low", "both"}
        Scan for cylinders whose mean (weighted mean) is higher (lower, either) than outside.
    distance : {"euclidean", "great_circle"}
        As in :func:`~hphawkes_py.scan.bernoulli`.
    location_ids : array_like (n,), optional
        Location id of each observation (rows of one location share it), reported once per location.
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
        Locations without observations (a SaTScan coordinates file's locations that no record names): circle
        centres, and members of the circles that reach them, as SaTScan scans them.
    empty_location_ids : array_like (k,), optional
        Their ids (with ``location_ids``).
    surveillance_start : day or date, optional
        With ``prospective``: adjust for the earlier analyses of a surveillance that began on this day (SaTScan's
        ``AdjustForEarlierAnalyses``): every replicate's maximum is over the cylinders of every analysis since
        then, as in :func:`~hphawkes_py.scan.space_time_permutation`.
    day_of_week : bool
        Adjust for the day of the week (SaTScan's ``AdjustForWeeklyTrends``): the Monte Carlo permutes the
        measurements among the observations of each weekday only; the cylinders' LLRs are unchanged.
    purely_temporal : bool
        Also the purely temporal clusters (every location; SaTScan's ``IncludePurelyTemporal``), as in
        :func:`~hphawkes_py.scan.space_time`.
    purely_spatial : bool
        Also the purely spatial clusters (SaTScan's ``IncludePurelySpatial``): every circle over the whole study
        period, scored as :func:`~hphawkes_py.scan.normal` scores it, the cylinders then at most one day shorter;
        a centre's purely spatial cluster is its candidate where its LLR is above its best cylinder's, and every
        replicate's maximum is over both. Not with ``surveillance_start``.

    Returns
    -------
    ScanResult
        ``model="space_time_normal"`` (``"space_time_weighted_normal"`` with weights): ``clusters.cases`` and
        ``population`` the cylinder's observations, ``expected`` and ``relative_risk`` NaN, ``start`` and
        ``end`` its days, and the columns of :func:`~hphawkes_py.scan.normal` (``mean_inside``, ``mean_outside``,
        ``variance``, ``std``, and with weights the weighted ones and ``weight_inside``). ``n_cases`` and
        ``n_population``: the observations N.

    Examples
    --------
    Higher measurements around one village during ten days of sixty:

    >>> rng = np.random.default_rng(3)
    >>> xy = rng.uniform(0, 10, (30, 2)).round(3)
    >>> village = rng.integers(0, 30, 900)
    >>> day = rng.integers(0, 60, 900)
    >>> near = (np.hypot(*(xy[village] - xy[0]).T) < 2.5) & (day >= 20) & (day < 30)
    >>> x = rng.normal(10.0, 2.0, 900) + 3.0 * near
    >>> res = hp.scan.space_time_normal(xy[village], x, day, location_ids=village, max_temporal=14,
    ...                                 n_replicates=99, seed=1, backend="cpu", progress=False)
    >>> top = res.most_likely
    >>> print(top.start, top.end, top.cases, round(top.mean_inside, 1), round(top.mean_outside, 1), top.p_value)
    20 28 11 13.4 10.1 0.01
    """
    xy = _check_xy(coords)
    n = len(xy)
    x, w = _check_observations(values, weights, n)
    day_of_week, purely_temporal = (check_bool(v, k) for v, k in ((day_of_week, "day_of_week"),
                                                                   (purely_temporal, "purely_temporal")))
    purely_spatial = check_purely_spatial(purely_spatial, surveillance_start)
    counted = np.ones(n, dtype=np.int64)
    empty = check_empty_locations(empty_locations, empty_location_ids, location_ids is not None)
    xy, counted, times, location_ids = with_empty_rows(xy, counted, times, location_ids, empty)
    opts = SpaceTimeOptions(max_population, max_distance, max_temporal, prospective, study_period, 0, n_replicates,
                            direction, distance, location_ids, seed, executor, backend, threads, progress,
                            surveillance_start, circle_population, max_circle_population, centres,
                            max_temporal_percent, secondary)
    cm = _check_common(xy, counted, times, opts)
    weighted = w is not None
    m_cases = _check_min_cases(min_cases, cm.run.direction, weighted)
    L, T = cm.c_lt.shape
    cell = cm.gid[:n].astype(np.int64) * T + cm.day[:n]
    first, second = (x * w, w.copy()) if weighted else (x, x * x)
    s1, s2 = np.zeros(L * T), np.zeros(L * T)
    np.add.at(s1, cell, first)  # unbuffered, in observation order (SaTScan's order of summation)
    np.add.at(s2, cell, second)
    U, U2, A, B = _totals(x, w)
    S0 = total_squares(x, w)
    t_end_min = T - 1 if cm.prospective else 0
    max_t = min(longest_cylinder(cm.max_temporal, T, purely_spatial), T)
    t1s, t2s = intervals(T, max_t, t_end_min)
    # the days before the first interval's start are in no cylinder (but in the purely spatial clusters): the
    # engine's days start at day0
    day0 = 0 if purely_spatial else int(t1s.min())
    size = cm.c_lt.sum(axis=1)
    with threads_context(cm.run.threads):
        circles_ = observation_circles(cm, size, purely_temporal)
        offsets, neighbors, boundary, m = circles_[4:]
        engine = NormalCylinderEngine(WEIGHTED_NORMAL if weighted else NORMAL, offsets, neighbors, boundary,
                                      cumulative_from_end(cm.c_lt[:, day0:]), t1s - day0, t2s - day0, n, U, U2, A, B,
                                      m_cases, m_cases, cm.run.direction in ("high", "both"),
                                      cm.run.direction in ("low", "both"), S0)
        per_llr, per_j = _per_interval(engine, s1.reshape(L, T)[:, day0:], s2.reshape(L, T)[:, day0:])
        found = interval_candidates(per_llr[:m], per_j[:m], t1s, t2s, T, max_t, not cm.prospective and T > 2)
        pt = first_best(per_llr[m:], per_j[m:])[:2] if purely_temporal else None
        ps = None
        if purely_spatial:  # the circles over the whole period: the purely spatial scan of the sums per location
            ps = PermutationEngine(WEIGHTED_NORMAL if weighted else NORMAL, offsets[:m + 1], neighbors, boundary,
                                   size, n, U, U2, A, B, m_cases, m_cases, cm.run.direction in ("high", "both"),
                                   cm.run.direction in ("low", "both"))
            ps_best, ps_j = (v[:, 0] for v in ps.best_per_centre(s1.reshape(L, T).sum(axis=1)[:, None],
                                                                  s2.reshape(L, T).sum(axis=1)[:, None]))
            found = _with_purely_spatial(*found, ps_best, ps_j, T)
        null_engine, null_day0 = engine, day0
        if cm.null_end_min is not None:
            # adjusted for earlier analyses: the replicates' maxima over the cylinders of every analysis since
            # the surveillance began (each ending on its own last day), the observed clusters those ending last
            n1, n2 = surveillance_intervals(T, cm.null_cuts or ((cm.null_end_min, cm.max_temporal),))
            null_day0 = int(n1.min())
            null_engine = dataclasses.replace(engine, n_cum=cumulative_from_end(cm.c_lt[:, null_day0:]),
                                              t1s=n1 - null_day0, t2s=n2 - null_day0)
        if is_gpu_backend(cm.run.backend):
            from .gpu import GpuNormalCylinderEngine, GpuPermutationEngine

            null_engine = GpuNormalCylinderEngine(null_engine, device=get_device(cm.run.backend),
                                                  backend=cm.run.backend)
            if ps is not None:
                ps = GpuPermutationEngine(ps, device=get_device(cm.run.backend), backend=cm.run.backend)
        # the weekday adjustment: the measurements permuted among each weekday's observations
        strata = strata_members(np.mod(_period_days(cm)[cm.day[:n]], 7)) if day_of_week else None
        null_llr = _null_maxima(null_engine, cm.gid[:n], cm.day[:n], first, second, L, T - null_day0 + 1, null_day0,
                                cm.run, strata, ps)

    day = cm.day[:n]

    def table(members, t1, t2):
        return _window_table(x, w, np.isin(cm.gid[:n], members) & (day >= t1) & (day <= t2))

    df = cylinder_clusters(cm, circles_, found, pt, t1s, t2s, null_llr, purely_temporal, table)
    return ScanResult(
        clusters=df, null_llr=null_llr, backend=cm.run.backend, n_cases=n, n_population=n, n_locations=L,
        n_merged=cm.n - L, n_centres=len(circles_[0]), n_windows=int(boundary[:offsets[m]].sum()),
        max_population=cm.max_population,
        direction=cm.run.direction, n_replicates=cm.run.n_replicates,
        model="space_time_weighted_normal" if weighted else "space_time_normal", max_distance=cm.max_distance,
        min_cases=m_cases, distance=cm.distance, _loc_coords=cm.loc_coords, _loc_cases=size, _loc_population=size,
        _loc_expected=None, _loc_controls=None, _row_ids=cm.ids, _row_loc=cm.gid, day_of_week=day_of_week,
        purely_temporal=purely_temporal, purely_spatial=purely_spatial)


def _per_interval(engine: NormalCylinderEngine, s1, s2) -> tuple:
    """The best cylinder of every window centre and interval for the observed cell sums ``s1``, ``s2`` (L, T; the
    engine's days): its LLR and circle entry, (m, I) each (0 and -1 where none)."""
    per_mv, per_j = engine.interval_best(s1, s2)
    return engine.llr(per_mv), per_j


def _null_batch(size, batch_seed, engine, loc, day, first, second, L, T1, day0, strata=None, ps=None):
    """One Monte Carlo batch: ``size`` permutations of the measurements among the observations (each keeping its
    location ``loc`` and ``day``) and each replicate's largest cylinder LLR (and purely spatial one: ``ps``, the
    engine of the circles over the whole period, scans the sums per location of the same permutations) (module
    level so process pools can pickle it)."""
    seeds = batch_children(batch_seed, size)
    c1, c2 = permuted_cumulative(loc, day, first, second, seeds, L, T1, day0, engine.weighted, strata)
    best = engine.max_llr(c1, c2)
    if ps is None:
        return best
    # the sums per location drawn again rather than read off c1 at day 0: summed in the observations' order, as
    # the purely spatial scan sums them (and with x^2, which the unweighted cylinders do not keep), so its values
    # are that scan's bit for bit
    return np.maximum(best, ps.max_llr(*permute_measurements(loc, first, second, L, seeds, strata)))


def _null_maxima(engine, loc, day, first, second, L: int, T1: int, day0: int, run, strata=None,
                 ps=None) -> np.ndarray:
    """(n_replicates,) float64 largest cylinder LLR of each null replicate (with ``ps``, of :func:`_null_batch`), in
    replicate order, in batches whose cumulative sums (``L`` x ``T1`` days from ``day0`` on,
    :func:`~.cpu_normal_space_time.permuted_cumulative`; ``strata``: permuted within them) stay within
    ``CPU_BATCH_BYTES`` (a GPU: 256 MiB)."""
    R = run.n_replicates
    batch, sizes = replicate_batches(R, 16 * L * T1, is_gpu_backend(engine.backend), run.executor, least=1)
    parts = run_replicates(_null_batch, sizes, seeds=replicate_seed_batches(run.seed, R, batch),
                           executor=run.executor, progress=run.progress, desc="space-time normal Monte Carlo",
                           args=(engine, loc, day, first, second, L, T1, day0, strata, ps))
    return np.concatenate(parts).astype(np.float64)
