"""The space-time scan statistic for survival data: the exponential model over cylinders.

Huang, Kulldorff & Gregorio (2007) scored by SaTScan's space-time exponential analysis
(``ExponentialRandomizer`` with time intervals, ``PoissonLikelihoodCalculator``):

1. every patient has a survival (follow-up) time ``t > 0``, is censored or not, and has a location and a
   date (the day the patient enters the data: diagnosis, exposure);
2. the times are calibrated to total the number C of uncensored patients (``t C / sum t``, as in the purely
   spatial model, :func:`~hphawkes_py.scan.exponential`); ``mu_zd``, the calibrated time of the patients of
   location z dated on day d, is their expected number of deaths under one hazard everywhere and always;
3. a cylinder (a circle Z x the days ``t1..t2``) with ``c`` deaths and ``mu = sum_{z in Z, d in [t1, t2]}
   mu_zd`` has the Poisson log likelihood ratio ``c log(c/mu) + (C-c) log((C-c)/(C-mu))`` when its rate
   ``c / mu`` is higher (lower, either) than outside: a higher rate is shorter survival;
4. Monte Carlo inference: the (time, censoring) pairs permuted among the patients, who keep their
   locations and dates, so that both a cylinder's deaths and its expectation change from replicate to
   replicate.

The cylinders are those of the discrete Poisson space-time scan with expectations per location and day
(:func:`~.cpu_space_time.cylinder_batch` with ``expected``; ``scan_space_time_dated`` on a GPU), given each
replicate's expectations in turn (:meth:`~.cpu_space_time.CpuSpaceTimeEngine.with_expected`).
"""
from __future__ import annotations

import numpy as np

from .._validate import check_bool
from .exponential_model import _calibrated, _check_patients
from .null_draws import strata_members
from .locations import _check_xy, check_empty_locations
from .result import ScanResult
from .space_time_scan import SpaceTimeOptions, _check_common, _cylinders, check_purely_spatial, with_empty_rows
from .spatiotemporal import _period_days

__all__ = ["space_time_exponential"]


def space_time_exponential(coords, survival_times, times, censored=None, *, max_population=0.5, max_distance=None,
                           max_temporal=7, prospective=False, study_period=None, min_cases=2, n_replicates=999,
                           direction="high", distance="euclidean", location_ids=None, seed=None, executor=None,
                           backend="auto", threads=None, progress=True, max_temporal_percent=None,
                           circle_population=None, max_circle_population=0.5, centres=None,
                           secondary="no-overlap", empty_locations=None, empty_location_ids=None,
                           day_of_week=False, purely_temporal=False, purely_spatial=False,
                           surveillance_start=None) -> ScanResult:
    """Kulldorff's space-time scan statistic for survival data (exponential model), retrospective or prospective.

    Semantics follow SaTScan's space-time exponential analysis (``ModelType=4``, ``AnalysisType=3`` or ``4``):
    cylinders as in :func:`~hphawkes_py.scan.space_time_permutation` (circles up to ``max_population`` of the
    patients x intervals of at most ``max_temporal`` days), each scored by the likelihood ratio of a
    different hazard inside than outside (see the module notes); the (time, censoring) pairs are permuted
    among the patients for the null.

    Parameters
    ----------
    coords : array_like (n, 2)
        Coordinates of each patient's location (one row per patient; rows with identical coordinates are one
        location). Planar, Euclidean distances, unless ``distance="great_circle"``.
    survival_times : array_like (n,)
        Survival (follow-up) time of each patient, > 0, in any unit (it is calibrated away).
    times : array_like (n,)
        The day of each patient (SaTScan's case-file date): whole numbers (days) or datetime64 / pandas
        dates, tz-naive.
    censored : array_like (n,) of bool or 0/1, optional
        1 (True) where the patient's survival time is censored; default none.
    max_population : float in (0, 0.5]
        Maximum circle size as a fraction of all patients (censored or not) over the study period.
    max_distance : float, optional
        Maximum circle radius (coordinate units; km with ``distance="great_circle"``).
    max_temporal : int >= 1
        Maximum length of a cylinder's interval (days).
    prospective : bool
        Only intervals that end on the last day of the study period.
    study_period : (first, last), optional
        The study period's first and last day (default: the patients' first and last).
    min_cases : int >= 2
        Uncensored patients a high-rate cylinder needs (SaTScan's minimum, default 2).
    n_replicates : int >= 1
        Monte Carlo replicates.
    direction : {"high", "low", "both"}
        Scan for cylinders with a higher death rate (shorter survival; lower, either) than outside.
    distance : {"euclidean", "great_circle"}
        As in :func:`~hphawkes_py.scan.bernoulli`.
    location_ids : array_like (n,), optional
        Location id of each patient (rows of one location share it), reported once per location.
    seed : None, int, SeedSequence or Generator
        Root of the per-replicate seeds.
    executor : None, concurrent.futures.Executor or dask Client
        Where the Monte Carlo batches run.
    backend : {"auto", "cpu", "gpu", "emulator"}
        The engine of the cylinders.
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
        Locations without patients (a SaTScan coordinates file's locations that no case record names): circle
        centres, and members of the circles that reach them, as SaTScan scans them.
    empty_location_ids : array_like (k,), optional
        Their ids (with ``location_ids``).
    day_of_week : bool
        Adjust for the day of the week (SaTScan's ``AdjustForWeeklyTrends``): the Monte Carlo permutes the
        (time, censoring) pairs among the patients of each weekday only; the cylinders' LLRs are unchanged.
    purely_temporal, purely_spatial : bool
        Also the purely temporal clusters (every location; SaTScan's ``IncludePurelyTemporal``), the purely
        spatial ones (each circle over the whole study period; ``IncludePurelySpatial``), as in
        :func:`~hphawkes_py.scan.space_time`.
    surveillance_start : day or date, optional
        With ``prospective``: adjust for the earlier analyses of a surveillance that began on this day (SaTScan's
        ``AdjustForEarlierAnalyses``), as in :func:`~hphawkes_py.scan.space_time_permutation`.

    Returns
    -------
    ScanResult
        ``model="space_time_exponential"``: ``clusters.cases`` the uncensored patients in the cylinder,
        ``population`` its patients (censored or not; SaTScan's "total individuals"), ``expected`` its expected
        deaths (calibrated time), ``observed_over_expected``; ``relative_risk`` is NaN (SaTScan reports none for
        this model); ``start`` and ``end`` its days. ``n_cases``: uncensored patients, ``n_population``:
        patients.

    Examples
    --------
    Shorter survival of the patients of one place during ten days of a hundred:

    >>> rng = np.random.default_rng(2)
    >>> xy = rng.uniform(0, 10, (30, 2)).round(3)
    >>> where = rng.integers(0, 30, 600)
    >>> day = rng.integers(0, 100, 600)
    >>> hot = (np.hypot(*(xy[where] - xy[0]).T) < 2.5) & (day >= 40) & (day < 50)
    >>> t = rng.exponential(np.where(hot, 1.0, 6.0)).round(3) + 0.001
    >>> res = hp.scan.space_time_exponential(xy[where], np.minimum(t, 8), day, t > 8, location_ids=where,
    ...                                      max_temporal=20, n_replicates=99, seed=1, backend="cpu",
    ...                                      progress=False)
    >>> top = res.most_likely
    >>> print(top.start, top.end, top.cases, round(top.expected, 1), top.p_value)
    43 49 10 0.6 0.01
    """
    xy = _check_xy(coords)
    n = len(xy)
    day_of_week, purely_temporal = (check_bool(v, k) for v, k in ((day_of_week, "day_of_week"),
                                                                   (purely_temporal, "purely_temporal")))
    purely_spatial = check_purely_spatial(purely_spatial, surveillance_start)
    t, cen = _check_patients(survival_times, censored, n, "survival_times")
    dead = (~cen).astype(np.int64)
    empty = check_empty_locations(empty_locations, empty_location_ids, location_ids is not None)
    xy, dead, times, location_ids = with_empty_rows(xy, dead, times, location_ids, empty)  # rows without patients
    opts = SpaceTimeOptions(max_population, max_distance, max_temporal, prospective, study_period, min_cases,
                            n_replicates, direction, distance, location_ids, seed, executor, backend, threads, progress,
                            surveillance_start, circle_population, max_circle_population, centres,
                            max_temporal_percent, secondary)
    common = _check_common(xy, dead, times, opts)
    if common.run.direction in ("high", "both") and common.run.min_cases < 2:
        raise ValueError(f"min_cases={common.run.min_cases}: SaTScan needs at least 2 cases in a high-rate cluster; "
                         f"give min_cases >= 2")
    L, T = common.c_lt.shape
    C = int(dead.sum())
    mu, _ = _calibrated(t, C)
    dead = dead[:n]
    cell = common.gid[:n].astype(np.int64) * T + common.day[:n]
    mu_lt = np.zeros(L * T)
    np.add.at(mu_lt, cell, mu)
    mu_lt = mu_lt.reshape(L, T)
    by_cell = np.argsort(cell, kind="stable")  # the patients in location x day order (the null's, see _cylinders)
    strata = strata_members(np.mod(_period_days(common)[common.day[:n][by_cell]], 7)) if day_of_week else None
    patients_lt = np.bincount(cell, minlength=L * T).reshape(L, T)
    dcum = np.concatenate([[0.0], np.cumsum(mu_lt.sum(axis=0))])
    return _cylinders(common, "space_time_exponential", patients_lt.sum(axis=1), mu_lt.sum(axis=1), dcum,
                      ("exponential", cell[by_cell], mu[by_cell], dead[by_cell], strata), expected_lt=mu_lt,
                      individuals_lt=patients_lt, day_of_week=day_of_week, purely_temporal=purely_temporal,
                      purely_spatial=purely_spatial)
