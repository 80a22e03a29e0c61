"""Kulldorff's space-time permutation scan statistic (Kulldorff et al. 2005, SaTScan's model 2).

Cases only (no population): ``c_zd`` cases at location z on day d, ``C_z`` and ``C_d`` their
location and day totals, ``C`` in all. A cylinder (a circle Z of locations x an interval of days
[t1, t2]) has ``mu = C_Z x C_[t1,t2] / C`` expected cases, and the LLR
``c log(c/mu) + (C-c) log((C-c)/(C-mu))`` when its count is higher (lower) than expected.
Circles are centred on the locations and grown as in :func:`~hphawkes_py.scan.bernoulli`, cut at
``max_population`` x C cases over the study period (and ``max_distance``); intervals last at most
``max_temporal`` days and, with ``prospective=True``, end on the last day. Monte Carlo: the days
of the cases are permuted among the cases, which keeps every C_z and C_d.

Also the space-time discrete Poisson and Bernoulli models (:func:`space_time`): their expectations,
adjustments and null draws, scanned by the cylinders of :mod:`.space_time_scan`. Runs on the CPU engine
(Numba) and the CUDA engine (``scan_space_time`` and its variants in ``scan.cu``).
"""
from __future__ import annotations

import numpy as np

from .._validate import as_float_array, check_bool, check_in
from .locations import _check_xy, check_counts, location_population
from .permutation_strata import permutation_strata
from .result import ScanResult
from .space_time_scan import SpaceTimeOptions, _check_common, _cylinders, _days
from .time_trend import TIME_TRENDS, check_time_trend, time_trend_weights, weekly_expectations

__all__ = ["space_time_permutation", "space_time"]


def space_time_permutation(coords, cases, times, *, max_population=0.5, max_distance=None, max_temporal=7,
                           prospective=False, study_period=None, min_cases=2, n_replicates=999, direction="high",
                           distance="euclidean", location_ids=None, seed=None, executor=None, backend="auto",
                           threads=None, progress=True, covariates=None, day_of_week=False,
                           surveillance_start=None, circle_population=None, max_circle_population=0.5,
                           centres=None, max_temporal_percent=None, secondary="no-overlap") -> ScanResult:
    """Kulldorff's space-time permutation scan statistic (retrospective or prospective).

    With ``covariates`` or ``day_of_week`` the expectations condition on the cases of every location
    and day within each stratum (:mod:`~hphawkes_py.scan.permutation_strata`), ``mu_zt = sum_s C_zs C_ts /
    C_s``, and the Monte Carlo permutes the days within the strata, as SaTScan does with case-file
    covariates and ``AdjustForWeeklyTrends``.

    Parameters
    ----------
    coords : array_like (n, 2)
        Location of each row (rows with identical coordinates are one location).
    cases : array_like (n,)
        Non-negative whole case counts (one row per location and day, or per case).
    times : array_like (n,)
        Day of each row: whole numbers (days) or datetime64 / pandas dates (read as days;
        time-zone-aware dates are refused: give the local calendar dates, tz-naive).
    max_population : float in (0, 0.5], or None
        Maximum circle size as a fraction of all cases over the study period; None: no limit by
        size, the circles limited by ``max_distance`` alone (SaTScan's only limit when adjusting for
        earlier analyses).
    max_distance : float, optional
        Maximum circle radius (coordinate units; km with ``distance="great_circle"``).
    max_temporal : int >= 1
        Maximum length of the time interval (days).
    prospective : bool
        Only intervals that end on the last day of the study period (prospective surveillance).
    surveillance_start : day or date, optional
        With ``prospective``: adjust for the earlier analyses of a surveillance that began on this day
        (SaTScan's ``AdjustForEarlierAnalyses`` with ``ProspectiveStartDate``; same kind as ``times``):
        the clusters listed still end on the last day, but every replicate's maximum is over the
        cylinders ending on any day from it on, so that a p-value accounts for having looked every day.
    study_period : (start, end), optional
        First and last day (same kind as ``times``); default the first and last day with cases.
        Rows outside it are refused.
    min_cases : int >= 0
        High-rate cylinders need at least this many cases (SaTScan's default 2).
    n_replicates, direction, distance, location_ids, seed, executor, backend, threads, progress
        As in :func:`~hphawkes_py.scan.poisson`. Rows of one location share its id; an id
        given to rows at different coordinates is refused.
    covariates : array_like (n,) or (n, k), optional
        Covariate category of each row's cases (labels, or k columns such as age group and sex):
        strata within which the expectations are computed and the days permuted.
    day_of_week : bool
        Adjust for the day of the week (SaTScan's ``AdjustForWeeklyTrends``): the weekday of every
        case is one more stratum, so that weekly patterns of reporting are not clusters (days mod 7:
        whole days from any origin, or dates).
    circle_population : array_like (n,), optional
        The population of each row's location in SaTScan's max circle size file (rows of one location
        agree; SaTScan's ``UseMaxCirclePopulationFileOption``): circles then also hold at most
        ``max_circle_population`` of its total, on top of ``max_population`` (of the cases here) and
        ``max_distance``; the usual way to size this model's circles by persons.
    max_circle_population : float in (0, 0.5]
        See ``circle_population``.
    centres : array_like (m, 2), optional
        The circle centres themselves (coordinates as ``coords``; SaTScan's grid file, ``UseGridFile``),
        instead of the locations.
    max_temporal_percent : float in (0, 100], optional
        The longest cylinder as a percentage of the study period, instead of ``max_temporal``:
        ``floor(T percent / 100)`` days; with ``surveillance_start``, each earlier analysis's own period's
        (the cylinders ending on day t last at most ``floor((t + 1) percent / 100)`` days), as SaTScan's
        percentage maximum temporal size with ``AdjustForEarlierAnalyses``.
    secondary : str
        The criterion for secondary clusters, as :func:`~hphawkes_py.scan.bernoulli`'s
        (:mod:`hphawkes_py.scan.secondary`); in retrospective analyses clusters apart in time never conflict.

    Returns
    -------
    ScanResult
        ``model="space_time_permutation"``; ``clusters`` has ``start`` and ``end`` (days, or dates
        when ``times`` were dates), ``population`` = the circle's cases over the whole period, and
        ``expected`` = mu. Secondary clusters as in SaTScan 10: no location in common with a more
        likely cluster, except, in retrospective analyses, clusters apart in time (at least one day
        between them), which may also come from the same centre.

    Examples
    --------
    Forty locations over 30 days, with a burst of cases on day 28 at five neighbouring locations:

    >>> rng = np.random.default_rng(1)
    >>> xy = rng.uniform(0, 10, (40, 2))
    >>> days = rng.integers(0, 30, 40)
    >>> cases = rng.poisson(1.0, 40)
    >>> xy[:5] = [1.0, 1.0] + 0.1 * np.arange(5)[:, None]
    >>> cases[:5] += 4
    >>> days[:5] = 28
    >>> res = hp.scan.space_time_permutation(xy, cases, days, max_temporal=7, n_replicates=99, seed=1,
    ...                                      backend="cpu", progress=False)
    >>> top = res.most_likely
    >>> print(top.start, top.end, top.n_locations, top.cases, round(top.log_likelihood_ratio, 3), top.p_value)
    28 28 5 26 10.227 0.01

    A clinic (location 0) that reports its cases on Mondays, and an outbreak near (7, 7) on days
    20-22: unadjusted, a Monday of the clinic is the most likely cluster; adjusted for the day of the
    week (each location's cases on a weekday are expected on that weekday), the outbreak is:

    >>> rng = np.random.default_rng(2)
    >>> xy = rng.uniform(0, 10, (30, 2))
    >>> near = np.argsort(((xy - [7, 7]) ** 2).sum(axis=1))[:4]
    >>> loc, day = np.indices((30, 28)).reshape(2, -1)
    >>> lam = np.full(loc.size, 0.3)
    >>> lam[(loc == 0) & (day % 7 == 0)] += 4
    >>> lam[np.isin(loc, near) & (day >= 20) & (day <= 22)] += 2
    >>> cases = rng.poisson(lam)
    >>> for dow in (False, True):
    ...     r = hp.scan.space_time_permutation(xy[loc], cases, day, day_of_week=dow, location_ids=loc,
    ...                                        max_temporal=7, n_replicates=99, seed=1, backend="cpu",
    ...                                        progress=False)
    ...     top = r.most_likely
    ...     print(dow, sorted(int(i) for i in top.location_ids), top.start, top.end, top.cases, top.p_value)
    False [0] 7 7 8 0.01
    True [2, 6, 13, 16, 28] 21 23 17 0.04
    """
    check_bool(day_of_week, "day_of_week")
    opts = SpaceTimeOptions(max_population, max_distance, max_temporal, prospective, study_period, min_cases,
                            n_replicates, direction, distance, location_ids, seed, executor, backend, threads, progress,
                            surveillance_start, circle_population, max_circle_population, centres,
                            max_temporal_percent, secondary)
    common = _check_common(coords, cases, times, opts)
    c_lt, L = common.c_lt, common.L
    T = c_lt.shape[1]
    Cz = c_lt.sum(axis=1)
    dcum = np.concatenate([[0.0], np.cumsum(c_lt.sum(axis=0)).astype(np.float64)])
    if covariates is not None or day_of_week:
        abs_day = _period_days(common)[common.day]
        mu, loc_of_case, day_of_case, bounds = permutation_strata(check_counts(cases, "cases"), common.gid, common.day,
                                                                  abs_day, L, T, covariates, bool(day_of_week))
        return _cylinders(common, "space_time_permutation", Cz, Cz, dcum,
                          ("permute", loc_of_case, day_of_case, bounds), expected_lt=mu, day_of_week=bool(day_of_week))
    # the cases one by one (location, day): the units whose days are permuted
    loc_of_case = np.repeat(np.repeat(np.arange(L), T), c_lt.ravel())
    day_of_case = np.repeat(np.tile(np.arange(T), L), c_lt.ravel())
    return _cylinders(common, "space_time_permutation", Cz, Cz, dcum, ("permute", loc_of_case, day_of_case))


def space_time(coords, cases, times, *, population=None, controls=None, model="poisson", max_population=0.5,
               max_distance=None, max_temporal=7, prospective=False, study_period=None, min_cases=2, n_replicates=999,
               direction="high", distance="euclidean", location_ids=None, seed=None, executor=None, backend="auto",
               threads=None, progress=True, time_trend=None, trend_percent=None,
               spatial_adjustment=None, expected=None, day_of_week=False, purely_temporal=False,
               surveillance_start=None, purely_spatial=False, circle_population=None,
               max_circle_population=0.5, centres=None, max_temporal_percent=None,
               secondary="no-overlap") -> ScanResult:
    """Kulldorff's retrospective (or prospective) space-time scan: discrete Poisson or Bernoulli model.

    Cylinders as in :func:`space_time_permutation`: circles centred on the locations x intervals of
    at most ``max_temporal`` days (ending on the last day with ``prospective=True``).

    ``model="poisson"`` (SaTScan's discrete Poisson): the expected cases come from the population:
    location z has ``E_z = C P_z / sum P`` expected cases, spread evenly over the days of the study
    period (population constant in time), so a cylinder has ``mu = E_Z (t2 - t1 + 1) / T``; the Monte
    Carlo redistributes the C cases multinomially over the location x day cells in proportion to their
    expectations. Circles are cut at ``max_population`` x the total population. With ``time_trend``
    the days get weights ``w_t`` instead (SaTScan's time-trend adjustment, :mod:`.time_trend`):
    ``mu = E_Z sum_{t1..t2} w_t / sum w``, and the Monte Carlo draws in proportion to ``E_z w_t``.
    With ``expected`` (expected cases per location and day, e.g. by indirect standardisation with a
    population that changes over time, as SaTScan computes from census years and covariates), a
    cylinder's mu is the sum of its cells' expectations ``mu = sum_{z in Z, t in I} e_zt`` (rescaled
    to sum to C), which need not be a location's share times a day's; circles are then cut at
    ``max_population`` x C of the expected cases over the study period (SaTScan's population at risk),
    and the Monte Carlo draws in proportion to ``e_zt``.

    ``time_trend="stratified"`` (SaTScan's ``TimeTrendAdjustmentType=4``, "nonparametric, with time
    stratified randomization"; both models) adjusts for any change of the risk in time by comparing
    places within each day only: a cylinder over the days ``I`` is scored against the cases (and, Bernoulli,
    the persons) of its own days over all locations, ``C_I`` (``N_I``) in place of ``C`` (``N``) in its LLR,
    with ``mu = E_Z C_I / C`` (Poisson) and ``c N_I > C_I n`` for a high rate (Bernoulli); the Monte Carlo
    keeps every day's cases on that day (each day's cases redistributed multinomially over the locations
    in proportion to ``E_z``, or relabelled among that day's persons). As in SaTScan, the LLRs of different
    windows are then not one likelihood's: ``log_likelihood_ratio`` holds SaTScan's "test statistic"
    (its reports name it so), and a cluster's expected cases are ``sum_{t in I}`` of its locations' share of
    each day's cases (Poisson ``E_Z C_I / C``; Bernoulli ``sum_t n_t C_t / N_t``), its relative risk
    ``(c / mu) / ((C_I - c) / (C_I - mu))`` (Bernoulli ``(c / n) / ((C_I - c) / (N_I - n))``).

    ``spatial_adjustment="stratified"`` (Poisson; SaTScan's ``SpatialAdjustmentType=1``, "adjusting for
    purely spatial clusters with stratified randomization") takes out stable differences between places:
    every location's expected cases over the study period are its observed cases ``C_z`` (in place of
    ``E_z``; the days' weights as above, ``mu = C_Z sum_{t in I} w_t / sum w``), and the Monte Carlo
    keeps every location's cases there, redistributing them over its days in proportion to ``w_t``.
    As in SaTScan, ``max_population`` is then a fraction of the cases (the adjusted expectations), not of
    the population.

    ``model="bernoulli"`` (SaTScan's Bernoulli, AnalysisType 3/4): cases and controls per location
    and day; a cylinder with ``c`` cases among ``n`` persons (cases + controls in its locations and
    days; ``C`` cases of ``N`` persons in all) has Kulldorff's Bernoulli LLR
    ``c log(c/n) + (n-c) log((n-c)/n) + (C-c) log((C-c)/(N-n)) + (N-n-C+c) log((N-n-C+c)/(N-n))
    - C log(C/N) - (N-C) log((N-C)/N)`` when its case proportion is higher (lower) than outside;
    the Monte Carlo relabels the C cases at random among all N persons of the study (every
    location and day: a multivariate hypergeometric draw over the location x day cells, as SaTScan
    permutes the Bernoulli case/control labels). Circles are cut at ``max_population`` x N (the
    persons of the whole study period).

    Parameters
    ----------
    coords, cases, times
        As in :func:`space_time_permutation` (one row per location and day, or per person).
    population : array_like (n,), optional
        ``model="poisson"`` (required without ``expected``): population of each row's location (the same
        on every row of a location), persons; with ``expected`` it is reported (``clusters.population``,
        e.g. averaged over the study period) and does not enter the scan.
    controls : array_like (n,), optional
        ``model="bernoulli"`` (required): non-negative whole numbers of controls of each row (its
        location and day), persons; rows may carry cases, controls or both.
    model : {"poisson", "bernoulli"}
        The probability model (see above).
    max_population, max_distance, max_temporal, prospective, study_period, min_cases, n_replicates, direction
        As in :func:`space_time_permutation` (``max_population``: fraction of the total population,
        Poisson, or of all persons, Bernoulli; ``max_temporal`` in days).
    distance, location_ids, seed, executor, backend, threads, progress
        As in :func:`space_time_permutation` (``backend="gpu"``/``"emulator"`` run the CUDA cylinder
        kernels of both models).
    surveillance_start : day or date, optional
        As in :func:`space_time_permutation`: with ``prospective``, the replicates' maxima are over the
        cylinders ending on any day from it on (adjusted for the earlier analyses).
    time_trend : {None, "nonparametric", "loglinear", "logquadratic", "stratified"}
        ``model="poisson"``: adjust the expected cases for a trend of the risk over the study period
        (SaTScan's ``TimeTrendAdjustmentType`` 1, 2, 3 and 5): ``"nonparametric"``, every day's expected
        cases are its observed cases; ``"loglinear"``, a log-linear trend, ``trend_percent`` or else
        estimated from the daily case totals; ``"logquadratic"``, a log-quadratic trend estimated from
        them. ``"stratified"`` (both models; ``TimeTrendAdjustmentType=4``): time-stratified
        randomization (see above). None (default): no adjustment.
    trend_percent : float, optional
        ``time_trend="loglinear"``: the change of the risk per year, percent (> -100; SaTScan's
        ``TimeTrendPercentage``), ``beta = log(1 + trend_percent / 100) / 365.25`` per day. None: the
        maximum likelihood trend of the data.
    spatial_adjustment : {None, "stratified", "nonparametric"}
        ``model="poisson"``: ``"stratified"`` adjusts for purely spatial clusters by stratified
        randomization (see above; with any ``time_trend`` but ``"stratified"``); ``"nonparametric"``
        (SaTScan's ``SpatialAdjustmentType=2``) makes every location's expected cases its observed ones
        with the usual multinomial Monte Carlo, with no ``time_trend`` or ``"stratified"`` (a cylinder's
        expectation then ``C_Z C_I / C``, every day's cases kept on their day). None (default): no
        adjustment.
    expected : array_like (n,), optional
        ``model="poisson"``: non-negative expected cases of each row's cell (its location and day;
        the rows of a cell add up, and a cell without a row has none, so give a row, with 0 cases, to
        every cell at risk), rescaled to sum to C. A cell with cases needs expected cases. Not with
        ``time_trend`` or ``spatial_adjustment`` (adjust the expectations themselves).
    day_of_week : bool
        ``model="poisson"``: adjust the expected cases for the day of the week as SaTScan's
        ``AdjustForWeeklyTrends`` does (:func:`~hphawkes_py.scan.time_trend.weekly_expectations`: the
        weekday as a covariate of the expectations per location and day, after any ``time_trend``
        other than ``"nonparametric"`` and ``"stratified"``; not with ``spatial_adjustment``); the
        circles are then cut by the adjusted expected cases. ``model="bernoulli"`` (no ``time_trend``): as
        SaTScan's Bernoulli ``AdjustForWeeklyTrends``, the Monte Carlo relabels each weekday's cases among
        that weekday's persons (the cells of every location on the days of that weekday); the LLRs are the
        unadjusted ones.
    purely_temporal : bool
        Also scan the purely temporal clusters (every location over an interval of at most
        ``max_temporal`` days; SaTScan's ``IncludePurelyTemporal``): they enter every replicate's
        maximum, and the most likely one is listed among the clusters in the order of its LLR
        (``clusters.purely_temporal`` True, ``center`` "All", no coordinates), never keeping a
        space-time cluster from being listed, as in SaTScan. Not with ``time_trend`` "nonparametric" or
        "stratified" or ``spatial_adjustment`` (its LLR would be 0).
    purely_spatial : bool
        Also scan the purely spatial clusters (the circles over the whole study period; SaTScan's
        ``IncludePurelySpatial``): a centre's best circle replaces its cylinders as candidates when its LLR
        is greater, they enter every replicate's maximum, and the cylinders then span at most T - 1 days
        (the whole period is the purely spatial window). Not with a ``spatial_adjustment`` (its LLR would
        be 0) or ``surveillance_start``.
    circle_population, max_circle_population, centres, max_temporal_percent, secondary
        As in :func:`space_time_permutation`: a second limit on the circles from SaTScan's max circle
        size file, the circle centres of its grid file, the longest cylinder as a percentage, and the
        criterion for secondary clusters.

    Returns
    -------
    ScanResult
        ``model="space_time_poisson"`` (``clusters.population``: the circle's population; with
        ``expected`` and no ``population``, its expected cases over the study period) or
        ``"space_time_bernoulli"`` (``clusters.population``: the cylinder's persons, cases + controls;
        ``expected`` = n C / N; ``relative_risk`` = (c / n) / ((C - c) / (N - n))); ``start``, ``end``
        as in :func:`space_time_permutation`; ``time_trend``: the adjustment made (see
        :func:`~hphawkes_py.scan.time_trend.time_trend_weights`; ``daily_percent`` is the figure SaTScan
        reports), None without one.

    Examples
    --------
    The data of :func:`space_time_permutation`'s example, with a population per location:

    >>> rng = np.random.default_rng(1)
    >>> xy = rng.uniform(0, 10, (40, 2))
    >>> days = rng.integers(0, 30, 40)
    >>> cases = rng.poisson(1.0, 40)
    >>> xy[:5] = [1.0, 1.0] + 0.1 * np.arange(5)[:, None]
    >>> cases[:5] += 4
    >>> days[:5] = 28
    >>> pop = np.full(40, 500)
    >>> res = hp.scan.space_time(xy, cases, days, population=pop, max_temporal=7, n_replicates=99, seed=1,
    ...                          backend="cpu", progress=False)
    >>> top = res.most_likely
    >>> print(res.model, top.start, top.end, top.n_locations, top.cases, round(top.log_likelihood_ratio, 3))
    space_time_poisson 28 28 5 26 99.072

    The same with the expected cases adjusted for a log-linear trend estimated from the daily totals:

    >>> adj = hp.scan.space_time(xy, cases, days, population=pop, max_temporal=7, n_replicates=99, seed=1,
    ...                          backend="cpu", progress=False, time_trend="loglinear")
    >>> print(adj.most_likely.cases, round(adj.time_trend["daily_percent"], 4))
    26 7.7801

    Time-stratified: each cylinder against its own days' cases, every day's cases kept on their day in
    the Monte Carlo:

    >>> st = hp.scan.space_time(xy, cases, days, population=pop, max_temporal=7, n_replicates=99, seed=1,
    ...                         backend="cpu", progress=False, time_trend="stratified")
    >>> top = st.most_likely
    >>> print(st.time_trend["adjustment"], top.start, top.end, top.cases, round(top.log_likelihood_ratio, 3))
    stratified 28 28 26 54.065

    Expected cases per location and day (here a population that doubles over the month in the first
    ten locations only), one row per cell:

    >>> loc, day = np.divmod(np.arange(40 * 30), 30)
    >>> grow = np.where(loc < 10, 1 + day / 29, 1.0)
    >>> c_lt = np.zeros((40, 30), dtype=int)
    >>> np.add.at(c_lt, (np.arange(40), days), cases)
    >>> ex = hp.scan.space_time(xy[loc], c_lt[loc, day], day, expected=500 * grow, max_temporal=7,
    ...                         n_replicates=99, seed=1, backend="cpu", progress=False)
    >>> top = ex.most_likely
    >>> print(top.start, top.end, top.cases, round(top.expected, 2), round(top.log_likelihood_ratio, 3))
    28 28 26 0.46 85.557
    """
    check_in(model, "model", ("poisson", "bernoulli"))
    check_time_trend(time_trend, trend_percent, model, options=TIME_TRENDS + ("stratified",))
    check_in(spatial_adjustment, "spatial_adjustment", (None, "stratified", "nonparametric"))
    check_bool(day_of_week, "day_of_week")
    if day_of_week and (time_trend in ("nonparametric", "stratified") or spatial_adjustment is not None
                        or (model == "bernoulli" and time_trend is not None)):
        raise ValueError("day_of_week adjusts the discrete Poisson model (model='poisson') with time_trend None, "
                         "'loglinear' or 'logquadratic', or the Bernoulli model without a time_trend, and no "
                         "spatial_adjustment (the space-time permutation model: space_time_permutation(day_of_week=True))")
    check_bool(purely_temporal, "purely_temporal")
    if purely_temporal and (time_trend in ("nonparametric", "stratified") or spatial_adjustment is not None):
        raise ValueError("purely_temporal clusters are not scanned with time_trend 'nonparametric' or 'stratified' or "
                         "a spatial_adjustment: their LLR would be 0 (SaTScan refuses them too)")
    pt = bool(purely_temporal)
    check_bool(purely_spatial, "purely_spatial")
    if purely_spatial and (spatial_adjustment is not None or surveillance_start is not None):
        raise ValueError("purely_spatial clusters are not scanned with a spatial_adjustment (their LLR would be 0) "
                         "or a surveillance_start")
    ps = bool(purely_spatial)
    if spatial_adjustment == "stratified" and (model != "poisson" or time_trend == "stratified"):
        raise ValueError("spatial_adjustment='stratified' adjusts the discrete Poisson model (model='poisson') without "
                         "time_trend='stratified' (SaTScan's SpatialAdjustmentType=1 with TimeTrendAdjustmentType 0-3 "
                         "or 5)")
    if spatial_adjustment == "nonparametric" and (model != "poisson" or time_trend not in (None, "stratified")):
        raise ValueError("spatial_adjustment='nonparametric' adjusts the discrete Poisson model (model='poisson') with "
                         "no time_trend or time_trend='stratified' (SaTScan's SpatialAdjustmentType=2 with "
                         "TimeTrendAdjustmentType 0 or 4)")
    opts = SpaceTimeOptions(max_population, max_distance, max_temporal, prospective, study_period, min_cases,
                            n_replicates, direction, distance, location_ids, seed, executor, backend, threads, progress,
                            surveillance_start, circle_population, max_circle_population, centres,
                            max_temporal_percent, secondary)
    if model == "bernoulli":
        if population is not None:
            raise ValueError("model='bernoulli' takes cases and controls (give controls=, not population=)")
        if controls is None:
            raise ValueError("model='bernoulli' needs controls= (controls per row: location and day)")
        return _space_time_bernoulli(coords, cases, times, controls, opts, time_trend == "stratified", pt, ps,
                                     bool(day_of_week))
    if controls is not None:
        raise ValueError("controls= is for model='bernoulli'; the Poisson model takes population=")
    if expected is not None:
        if time_trend is not None or spatial_adjustment is not None:
            raise ValueError("expected= gives the expectations of every location and day: adjust them for a time "
                             "trend or for space themselves (time_trend and spatial_adjustment must be None)")
        common = _check_common(coords, cases, times, opts)
        return _dated_poisson(common, expected, None if population is None else
                              location_population(population, common.gid, common.L), bool(day_of_week), pt, ps)
    if population is None:
        raise ValueError("model='poisson' needs population= (population of each row's location) or expected= "
                         "(expected cases of each row's location and day)")
    common = _check_common(coords, cases, times, opts)
    P = location_population(population, common.gid, common.L)
    c_lt = common.c_lt
    T = c_lt.shape[1]
    C = int(c_lt.sum())
    bad = (P <= 0) & (c_lt.sum(axis=1) > 0)
    if bad.any():
        raise ValueError(f"a location with cases has zero population (location of row "
                         f"{int(np.flatnonzero(common.gid == int(np.argmax(bad)))[0])})")
    Ez = C * P / P.sum()
    size = P.astype(np.int64) if np.all(P == np.round(P)) else P
    if spatial_adjustment == "nonparametric":
        return _space_nonparametric(common, size, time_trend)
    if spatial_adjustment is not None:
        return _space_stratified(common, size, time_trend, trend_percent)
    if time_trend == "stratified":
        # a cylinder's expectation E_Z C_I / C from the running sums of the cases per day (whole numbers:
        # exact), the total it is scored against C_I from the same sums
        day_cases = c_lt.sum(axis=0)
        dcum = np.concatenate([[0.0], np.cumsum(day_cases).astype(np.float64)])
        return _cylinders(common, "space_time_poisson", size, Ez, dcum, ("multinomial_by_day", Ez, day_cases),
                          time_trend=_STRATIFIED, strata=(day_cases, day_cases), purely_spatial=ps)
    w, dcum, info = _day_weights(common, time_trend, trend_percent)
    if day_of_week:
        mu = weekly_expectations(np.outer(Ez, w / w.sum()), c_lt.sum(axis=0), _period_days(common))
        return _cylinders(common, "space_time_poisson", size, mu.sum(axis=1), dcum, ("multinomial", mu.ravel()),
                          time_trend=info, cut_size=mu.sum(axis=1), expected_lt=mu, day_of_week=True,
                          purely_temporal=pt, purely_spatial=ps)
    if time_trend is None:
        return _cylinders(common, "space_time_poisson", size, Ez, dcum, ("multinomial", np.repeat(Ez / T, T)),
                          purely_temporal=pt, purely_spatial=ps)
    # expected cases of location z on day t: E_z w_t / sum w
    return _cylinders(common, "space_time_poisson", size, Ez, dcum, ("multinomial", np.outer(Ez, w / w.sum()).ravel()),
                      time_trend=info, purely_temporal=pt, purely_spatial=ps)


def _period_days(common) -> np.ndarray:
    """The whole day number of every day of the study period (from 1970-01-01 for dates, else as given)."""
    origin = common.origin
    first = int(origin.astype(np.int64)) if isinstance(origin, np.datetime64) else int(origin)
    return first + np.arange(common.c_lt.shape[1], dtype=np.int64)


def _dated_poisson(common, expected, P, day_of_week=False, purely_temporal=False, purely_spatial=False):
    """:func:`space_time`'s discrete Poisson scan with ``expected`` per row: the expectations per location
    and day ``e_zt`` (rescaled to sum to C, and with ``day_of_week`` adjusted for the weekday,
    :func:`~.time_trend.weekly_expectations`) give every cylinder's mu; ``P``, the locations' populations
    to report (None: their expected cases)."""
    ex = as_float_array(expected, "expected", ndim=1)
    n = len(common.gid)
    if len(ex) != n:
        raise ValueError(f"expected must have one value per row ({n}), got {len(ex)}")
    if (ex < 0).any():
        i = int(np.argmax(ex < 0))
        raise ValueError(f"expected must be non-negative; expected[{i}] = {ex[i]!r}")
    c_lt = common.c_lt
    L, T = c_lt.shape
    e_lt = np.zeros((L, T))
    np.add.at(e_lt, (common.gid, common.day), ex)
    bad = (e_lt <= 0) & (c_lt > 0)
    if bad.any():
        z, t = (int(v) for v in np.argwhere(bad)[0])
        row = int(np.flatnonzero((common.gid == z) & (common.day == t))[0])
        raise ValueError(f"the cell of row {row} (its location and day) has cases but no expected cases")
    C = int(c_lt.sum())
    e_lt *= C / e_lt.sum()
    if day_of_week:
        e_lt = weekly_expectations(e_lt, c_lt.sum(axis=0), _period_days(common))
    Ez = e_lt.sum(axis=1)
    size = Ez if P is None else (P.astype(np.int64) if np.all(P == np.round(P)) else P)
    return _cylinders(common, "space_time_poisson", size, Ez, C * np.arange(T + 1, dtype=np.float64) / T,
                      ("multinomial", e_lt.ravel()), cut_size=Ez, expected_lt=e_lt, day_of_week=day_of_week,
                      purely_temporal=purely_temporal, purely_spatial=purely_spatial)


#: the ``time_trend`` record of a time-stratified analysis (see :func:`space_time`)
_STRATIFIED = {"adjustment": "stratified"}


def _day_weights(common, time_trend, trend_percent):
    """``(w, dcum, info)``: the days' weights of the discrete Poisson expectations (1 each without
    ``time_trend``, else :func:`~.time_trend.time_trend_weights`'), the running sums ``C w / sum w`` that
    give a cylinder's share of its circle's expectation, and the trend's record (None without one)."""
    c_lt = common.c_lt
    T = c_lt.shape[1]
    C = int(c_lt.sum())
    if time_trend is None:
        # as C t / T exactly (the general sums below, C cumsum(1/T), differ in the last bits)
        return np.ones(T), C * np.arange(T + 1, dtype=np.float64) / T, None
    w, info = time_trend_weights(c_lt.sum(axis=0), time_trend, trend_percent, origin=common.origin)
    return w, np.concatenate([[0.0], C * np.cumsum(w / w.sum())]), info


def _space_nonparametric(common, size, time_trend):
    """:func:`space_time`'s discrete Poisson scan with ``spatial_adjustment="nonparametric"`` (SaTScan's
    ``SpatialAdjustmentType=2``, ``AdjustForSpatialNonParameteric``): every location's expected cases its
    observed ones spread evenly over the days, the Monte Carlo the usual multinomial over every location
    and day; with ``time_trend="stratified"`` (which SaTScan's ``AdjustForTemporalNonParameteric`` then
    applies) a cylinder's expectation is ``C_Z C_I / C``, scored against its days' cases, with every day's
    cases kept on that day in the Monte Carlo. The circles are cut by the cases, as SaTScan's by the
    adjusted expectations."""
    c_lt = common.c_lt
    T = c_lt.shape[1]
    loc_cases = c_lt.sum(axis=1)
    Cz = loc_cases.astype(np.float64)
    if time_trend == "stratified":
        day_cases = c_lt.sum(axis=0)
        dcum = np.concatenate([[0.0], np.cumsum(day_cases).astype(np.float64)])
        return _cylinders(common, "space_time_poisson", size, Cz, dcum, ("multinomial_by_day", Cz, day_cases),
                          time_trend=_STRATIFIED, strata=(day_cases, day_cases), spatial_adjustment="nonparametric",
                          cut_size=loc_cases)
    _, dcum, _ = _day_weights(common, None, None)
    return _cylinders(common, "space_time_poisson", size, Cz, dcum, ("multinomial", np.repeat(Cz / T, T)),
                      spatial_adjustment="nonparametric", cut_size=loc_cases)


def _space_stratified(common, size, time_trend, trend_percent):
    """:func:`space_time`'s discrete Poisson scan with ``spatial_adjustment="stratified"``: every location's
    expected cases its observed ones, spread over the days by their weights (1, or the time trend's), and
    its cases redistributed over its days in the Monte Carlo. As in SaTScan, whose circles are cut by the
    adjusted expected cases, the circles are cut at ``max_population`` of the cases."""
    loc_cases = common.c_lt.sum(axis=1)
    w, dcum, info = _day_weights(common, time_trend, trend_percent)
    return _cylinders(common, "space_time_poisson", size, loc_cases.astype(np.float64), dcum,
                      ("multinomial_by_location", w, loc_cases), time_trend=info, spatial_adjustment="stratified",
                      cut_size=loc_cases)


def _space_time_bernoulli(coords, cases, times, controls, opts: SpaceTimeOptions, stratified=False,
                          purely_temporal=False, purely_spatial=False, day_of_week=False):
    """:func:`space_time` with ``model="bernoulli"`` (time-stratified with ``stratified``; with
    ``purely_temporal`` and ``purely_spatial`` the purely temporal and purely spatial clusters too; with
    ``day_of_week`` each weekday's cases relabelled among that weekday's persons in the Monte Carlo,
    :func:`~.null_draws.draw_cases_by_weekday`)."""
    n = len(_check_xy(coords))
    co = check_counts(controls, "controls")
    if len(co) != n:
        raise ValueError(f"coords and controls must have the same length; got {n} and {len(co)}")
    common = _check_common(coords, cases, times, opts)
    c_lt = common.c_lt
    L, T = c_lt.shape
    ctl_lt = np.zeros((L, T), dtype=np.int64)
    day, _, _ = _days(times, n, opts.study_period)
    np.add.at(ctl_lt, (common.gid, day), co)
    p_lt = c_lt + ctl_lt
    C, N = int(c_lt.sum()), int(p_lt.sum())
    if C == N:
        raise ValueError("all persons are cases (controls sum to 0): the Bernoulli scan needs controls too")
    if N >= 2**31 - 1:
        raise ValueError(f"total population {N} (cases + controls) is too large (must be < 2**31 - 1)")
    if stratified:
        day_cases = c_lt.sum(axis=0)
        return _cylinders(common, "space_time_bernoulli", p_lt.sum(axis=1), None, np.zeros(T + 1),
                          ("hypergeometric_by_day", p_lt, day_cases), persons=p_lt,
                          controls_loc=ctl_lt.sum(axis=1), time_trend=_STRATIFIED,
                          strata=(day_cases, p_lt.sum(axis=0)), purely_spatial=purely_spatial)
    null = ("hypergeometric_by_weekday", p_lt, c_lt, _period_days(common)) if day_of_week else \
        ("hypergeometric", p_lt.ravel())
    return _cylinders(common, "space_time_bernoulli", p_lt.sum(axis=1), None, np.zeros(T + 1), null, persons=p_lt,
                      controls_loc=ctl_lt.sum(axis=1), purely_temporal=purely_temporal, purely_spatial=purely_spatial,
                      day_of_week=day_of_week)

