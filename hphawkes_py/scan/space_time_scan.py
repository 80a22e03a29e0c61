"""The cylinder scan the space-time models share: the checks of the rows (:func:`_check_common`), the
scan of every centre's cylinders on an engine, the cluster list SaTScan 10 gives (:func:`_cylinders`) and
the Monte Carlo (:func:`_null_maxima`); each model (:mod:`.spatiotemporal`) gives the expectations and
how replicates are drawn.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pandas as pd

from .._backend import threads_context
from .._parallel import run_replicates
from .._validate import check_bool, check_int, check_positive, describe
from ._rng import replicate_seed_words
from .cpu_exponential import max_llr_death_days
from .cpu_space_time import overlap_candidates, space_time_interval_best
from .engine import klogk_table, make_engine, make_space_time_engine
from .locations import (Geometry, _check_geometry, _check_max_population, _check_xy, _radius, check_counts,
                        check_centres, check_ids_per_location, check_location_ids, circle_limit, make_centres,
                        merge_rows)
from .monte_carlo import BATCH_SIZE, RunOptions, batch_children, check_run, replicate_seed_batches
from .result import Candidates, ScanResult, _clusters
from .secondary import centre_overlap
from .null_draws import draw_cases_by_day, draw_cases_by_location, draw_cases_by_weekday, draw_multinomial_cases, \
    draw_null_cases, permute_days_cases, permute_measurements
from .windows import build_windows, cumulative_expected

@dataclasses.dataclass(frozen=True)
class SpaceTimeOptions:
    """The settings of :func:`space_time_permutation` and :func:`space_time` as given (checked by
    :func:`_check_common`); the parameters of the same names."""

    max_population: Any
    max_distance: Any
    max_temporal: Any
    prospective: Any
    study_period: Any
    min_cases: Any
    n_replicates: Any
    direction: Any
    distance: Any
    location_ids: Any
    seed: Any
    executor: Any
    backend: Any
    threads: Any
    progress: Any
    surveillance_start: Any = None
    circle_population: Any = None
    max_circle_population: Any = 0.5
    centres: Any = None
    max_temporal_percent: Any = None
    secondary: Any = "no-overlap"


#: whole days beyond +-2**53 are not exact in double precision (and their differences overflow int64)
MAX_ABS_DAY = 2**53


def _refuse_time_zone(times, name: str) -> None:
    """Time-zone-aware dates are refused: their calendar day depends on the zone (converted to UTC, the
    days of late-evening cases would move)."""
    tz = getattr(getattr(times, "dtype", None), "tz", None)
    if tz is None and isinstance(times, (list, tuple, np.ndarray)):
        flat = np.asarray(times, dtype=object).ravel() if not isinstance(times, np.ndarray) or times.dtype.kind == "O" \
            else ()
        tz = next((v.tzinfo for v in flat if getattr(v, "tzinfo", None) is not None), None)
    if tz is not None:
        raise ValueError(f"{name} holds time-zone-aware dates ({tz}); their calendar day depends on the zone and is "
                         f"not converted silently: give tz-naive dates, e.g. the local dates with "
                         f"{name}.dt.tz_localize(None) (an index: .tz_localize(None)), or another zone's with "
                         f".dt.tz_convert(zone) first")


def _abs_days(times, name: str, n: int | None):
    """Whole days as int64 (datetime64 / pandas dates: days since 1970-01-01) and whether they were dates."""
    _refuse_time_zone(times, name)
    if isinstance(times, (pd.Series, pd.Index)) and pd.api.types.is_datetime64_any_dtype(times):
        times = times.to_numpy().astype("datetime64[D]")
    arr = np.asarray(times)
    if n is not None and (arr.ndim != 1 or len(arr) != n):
        raise ValueError(f"{name} must be 1-D with one time per row ({n}), got shape {arr.shape}")
    if arr.dtype.kind == "M":
        if np.isnat(arr).any():
            raise ValueError(f"{name} must not hold NaT; {name}[{int(np.argmax(np.isnat(arr.ravel())))}] is NaT")
        return arr.astype("datetime64[D]").astype(np.int64), True
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be whole days (integers) or datetime64 dates, got dtype {arr.dtype}")
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(arr)
        bad[~bad] = arr[~bad] != np.round(arr[~bad])  # round only finite values: NaN would warn from rint
        if bad.any():
            i = int(np.argmax(bad.ravel()))
            raise ValueError(f"{name} must be whole days; {name}[{i}] = {arr.ravel()[i]!r}")
    far = ((arr > MAX_ABS_DAY) | (arr < -MAX_ABS_DAY)).ravel() if arr.size else np.zeros(0, bool)
    if far.any():
        i = int(np.argmax(far))
        raise ValueError(f"{name} must be whole days within +-2**53; {name}[{i}] = {arr.ravel()[i].item()!r}")
    return arr.astype(np.int64), False


def _days(times, n: int, study_period=None):
    """Day index of every row from the start of the study period (default: first to last day),
    the origin (an int or a datetime64 day) and the number of days T."""
    a, dates = _abs_days(times, "times", n)
    if study_period is None:
        lo, hi = int(a.min()), int(a.max())
    else:
        if not isinstance(study_period, (tuple, list)) or len(study_period) != 2:
            raise TypeError(f"study_period must be (start, end), got {describe(study_period)}")
        ends, edates = _abs_days(np.asarray(study_period), "study_period", 2)
        if edates != dates:
            raise TypeError("study_period must be given in the same kind as times (dates or whole days)")
        lo, hi = int(ends[0]), int(ends[1])
        if hi < lo:
            raise ValueError(f"study_period ends before it starts: {study_period!r}")
        out = (a < lo) | (a > hi)
        if out.any():
            i = int(np.argmax(out))
            raise ValueError(f"times[{i}] = {times[i]!r} is outside the study period {study_period!r}")
    origin = np.datetime64(lo, "D") if dates else lo
    return a - lo, origin, hi - lo + 1


@dataclasses.dataclass(frozen=True)
class SpaceTimeData:
    """One space-time analysis after its checks (:func:`_check_common`): ``n`` input rows with ids
    ``ids``; days counted from ``origin`` (a day number or a date); the window settings
    (``max_population``, ``max_distance``, ``geo`` for ``distance``, ``max_temporal`` days,
    ``prospective``) and ``run``; the merged locations ``loc_coords`` (L, 2), each row's location
    ``gid``, each location's rows ``members``, each row's day ``day`` (from ``origin``), and the cases
    per location and day ``c_lt`` (L, T); ``null_end_min``: with ``surveillance_start``, the first day on
    which the Monte Carlo's cylinders may end (None: as the observed data's); ``circle``: the max circle size
    file's population per location and the most a circle may hold, or (None, None)
    (:func:`~.locations.circle_limit`); ``centres``: the circle centres as given (SaTScan's grid file) or None
    (the locations); ``null_cuts``: with ``surveillance_start`` and ``max_temporal_percent``, the Monte Carlo's
    ``(first end day, longest cylinder)`` ranges (:func:`_surveillance_cuts`), else None."""

    n: int
    ids: np.ndarray
    origin: Any
    max_population: float
    max_distance: Any
    geo: Geometry
    distance: str
    max_temporal: int
    prospective: bool
    run: RunOptions
    loc_coords: np.ndarray
    gid: np.ndarray
    members: list
    L: int
    c_lt: np.ndarray
    day: np.ndarray
    null_end_min: Any = None
    circle: Any = (None, None)
    centres: Any = None
    null_cuts: Any = None


def _surveillance_cuts(first: int, T: int, percent: float) -> tuple:
    """The cylinders a surveillance from day ``first`` to day T - 1 looked at, when each analysis's longest is
    ``percent`` of its own period (SaTScan's ``gvProspectiveIntervalCuts``: the analysis ending on day t allows
    ``floor((t + 1) percent / 100)`` days): ``((a, m), ...)``, the days a.. on which the longest is m, as
    ranges of end days. The longest only grows with t, so the cylinders ending on day a or later with at most
    m days are exactly those the analyses of the range and the later ones allowed: the Monte Carlo's maximum is
    the largest over the ranges of an engine's with ``t_end_min`` a and ``max_t`` m."""
    cuts = [math.floor((t + 1) * percent / 100.0) for t in range(first, T)]
    if cuts[0] < 1:
        raise ValueError(f"max_temporal_percent={percent!r} allows no day to the analysis of the surveillance's first "
                         f"day ({first + 1} days into the study period)")
    return tuple((first + k, m) for k, m in enumerate(cuts) if k == 0 or m != cuts[k - 1])


def _check_common(coords, cases, times, opts: SpaceTimeOptions) -> SpaceTimeData:
    """The checks and the (location x day) case table both space-time models share."""
    xy = _check_xy(coords)
    n = xy.shape[0]
    ca = check_counts(cases, "cases")
    if len(ca) != n:
        raise ValueError(f"coords and cases must have the same length; got {n} and {len(ca)}")
    day, origin, T = _days(times, n, opts.study_period)
    C = int(ca.sum())
    if C < 2:
        raise ValueError(f"cases sum to {C}: the space-time scan needs at least 2 cases")
    if C >= 2**31 - 1:
        raise ValueError(f"{C} cases are too many (must be < 2**31 - 1)")
    ids = check_location_ids(opts.location_ids, n, repeats=True)
    max_distance = opts.max_distance
    if max_distance is not None:
        max_distance = check_positive(max_distance, "max_distance")
    if opts.max_population is None and max_distance is None and opts.circle_population is None:
        raise ValueError("max_population=None (no limit by population) needs max_distance or circle_population")
    max_population = None if opts.max_population is None else _check_max_population(opts.max_population)
    geo = _check_geometry(opts.distance, xy, None)
    centres = check_centres(opts.centres, opts.distance)
    max_temporal = check_int(opts.max_temporal, "max_temporal", minimum=1)
    percent = opts.max_temporal_percent
    if percent is not None:
        percent = check_positive(percent, "max_temporal_percent")
        if percent > 100:
            raise ValueError(f"max_temporal_percent must be in (0, 100] (percent of the study period), got {percent!r}")
    if not isinstance(opts.prospective, (bool, np.bool_)):
        raise TypeError(f"prospective must be True or False, got {describe(opts.prospective)}")
    run = check_run(opts.min_cases, opts.n_replicates, opts.direction, opts.secondary, opts.progress, opts.threads,
                    opts.seed, opts.backend, opts.executor)
    loc_coords, gid, members = merge_rows(xy)
    if opts.location_ids is not None:
        check_ids_per_location(ids, gid)
    L = len(members)
    if L * T * BATCH_SIZE > 2**31:
        raise ValueError(f"{L} locations x {T} days is too large for the space-time engine")
    c_lt = np.zeros((L, T), dtype=np.int64)
    np.add.at(c_lt, (gid, day), ca)
    circle = circle_limit(opts.circle_population, opts.max_circle_population, gid, L)
    if percent is not None:
        max_temporal = math.floor(T * percent / 100.0)
        if max_temporal < 1:
            raise ValueError(f"max_temporal_percent={percent!r} of {T} days is less than a day")
    null_end_min = None
    null_cuts = None
    if opts.surveillance_start is not None:
        if not opts.prospective:
            raise ValueError("surveillance_start (adjusting for earlier analyses) is for prospective analyses "
                             "(prospective=True)")
        s, s_dates = _abs_days(np.asarray([opts.surveillance_start]), "surveillance_start", 1)
        if s_dates != isinstance(origin, np.datetime64):
            raise TypeError("surveillance_start must be given in the same kind as times (a date or a whole day)")
        null_end_min = int(s[0]) - (int(origin.astype(np.int64)) if s_dates else int(origin))
        if not 0 <= null_end_min < T:
            raise ValueError(f"surveillance_start {opts.surveillance_start!r} is outside the study period")
        if percent is not None:
            null_cuts = _surveillance_cuts(null_end_min, T, percent)
    return SpaceTimeData(n=n, ids=ids, origin=origin, max_population=max_population, max_distance=max_distance,
                         geo=geo, distance=opts.distance, max_temporal=max_temporal,
                         prospective=bool(opts.prospective), run=run, loc_coords=loc_coords, gid=gid,
                         members=members, L=L, c_lt=c_lt, day=day, null_end_min=null_end_min, circle=circle,
                         centres=centres, null_cuts=null_cuts)


def with_empty_rows(xy, counts, times, location_ids, empty) -> tuple:
    """``(xy, counts, times, location_ids)`` with the rows of the locations without observations ``empty``
    (:func:`~.locations.check_empty_locations`; None: none) appended: counting 0, dated on the first row's day
    (in no cell the null draws fill), with their ids after the rows' when ids are given."""
    if empty is None:
        return xy, counts, times, location_ids
    extra, extra_ids = empty
    if extra_ids is not None:
        location_ids = np.concatenate([np.asarray(location_ids, dtype=object), extra_ids])
    times = np.asarray(times)
    return (np.vstack([xy, extra]), np.concatenate([counts, np.zeros(len(extra), dtype=np.int64)]),
            np.concatenate([times, np.repeat(times[:1], len(extra))]), location_ids)


def day_of(origin, t):
    """Day ``t`` of a study period that starts on ``origin`` (a date, or a day number)."""
    return origin + np.timedelta64(int(t), "D") if isinstance(origin, np.datetime64) else origin + int(t)


def weekdays(day, origin) -> np.ndarray:
    """The weekday code (0-6, the same for the same weekday) of every day ``day`` of a study period that starts on
    ``origin`` (a date, or a day number counted as dates are, from 1970-01-01)."""
    return np.mod(day + (int(origin.astype(np.int64)) if isinstance(origin, np.datetime64) else int(origin)), 7)


def circles(cm: SpaceTimeData, cut):
    """The circles of a space-time analysis, cut at ``max_population`` x ``cut.sum()`` (``cut``: the size of each
    location; ``max_population`` None: by ``max_distance`` alone) and at the max circle size file's limit:
    ``(centres, centre_loc, points, cpoints, windows)`` (:func:`~.locations.make_centres`,
    :func:`~.windows.build_windows`), the locations and centres in the working coordinates."""
    centres, centre_loc = make_centres(cm.loc_coords, None, cm.centres)
    points = cm.geo.points(cm.loc_coords)
    cpoints = points if cm.centres is None else cm.geo.points(centres)
    windows = build_windows(cpoints, points, cut, (1.0 if cm.max_population is None else cm.max_population)
                            * cut.sum(), cm.geo.to_working(cm.max_distance), circle=cm.circle[0],
                            circle_limit=cm.circle[1])
    return centres, centre_loc, points, cpoints, windows


def cylinder_overlap(cm: SpaceTimeData, L: int, retrospective: bool, centre_of, t1_of, t2_of, cpoints, points):
    """``overlap(members, i)`` of the cluster table (:func:`~.result._clusters`) for the candidate cylinders
    (centre ``centre_of``, days ``t1_of..t2_of``): SaTScan's secondary-cluster criterion ``cm.run.secondary``
    (:func:`~.secondary.centre_overlap`), or with "no-overlap" in a ``retrospective`` analysis clusters that
    share locations listed both when they are apart in time (None: any location in common)."""
    if cm.run.secondary != "no-overlap":
        # SaTScan's other criteria: the circles' centres and radii, and (retrospective) the cylinders' days
        return centre_overlap(cm.run.secondary, lambda i: cpoints[centre_of[i]], points,
                              None if cm.prospective else (lambda i: (t1_of[i], t2_of[i])))
    if not retrospective:
        return None
    kept = []

    def overlaps_kept(members, k):
        t1, t2 = t1_of[k], t2_of[k]
        for mem, a, b in kept:
            # SaTScan counts cylinders on adjacent days as overlapping in time too
            if not (b + 1 < t1 or a > t2 + 1) and mem[members].any():
                return True
        mask = np.zeros(L, dtype=bool)
        mask[members] = True
        kept.append((mask, t1, t2))
        return False

    return overlaps_kept


def _cylinders(cm: SpaceTimeData, model, size, wsize_loc, dcum, null, persons=None, controls_loc=None,
               time_trend=None, strata=None, spatial_adjustment=None, cut_size=None, expected_lt=None,
               day_of_week=False, purely_temporal=False, purely_spatial=False, individuals_lt=None):
    """Scan the cylinders of circles cut at ``max_population`` x ``size.sum()``; ``wsize_loc``: each
    location's C_z (or E_z) summed along the walks; ``null``: how replicates are drawn. With
    ``persons`` ((L, T) cases + controls), the Bernoulli model (``wsize_loc`` and ``dcum`` unused).
    ``strata``: time-stratified, the cases and persons per day (see
    :func:`~.cpu_space_time.cylinder_batch`). ``cut_size``: what the circles are cut by, when not ``size``
    (which the clusters report). ``expected_lt``: the expectations per location and day, when a cylinder's
    are not ``wsize_loc`` times ``dcum``'s share; ``day_of_week``: recorded in the result.
    ``purely_temporal``: also the purely temporal clusters (every location, :func:`_temporal_best`; SaTScan's
    ``IncludePurelyTemporal``): the best one is a candidate cluster, always listed and never keeping
    another from being listed (SaTScan's ``ShouldRetainCandidateCluster``), and every replicate's maximum
    takes them in. ``purely_spatial``: also the purely spatial clusters (the circles over the whole study period,
    :func:`_purely_spatial_engine`; SaTScan's ``IncludePurelySpatial``): a centre's best one replaces its
    cylinders as candidates when its LLR is greater (SaTScan's ``C_ST_PS_Analysis::CalculateTopClusters``),
    every replicate's maximum takes them in, and the cylinders then span at most T - 1 days (SaTScan's
    ``CSpaceTimeData::SetIntervalCut``: the whole period is the purely spatial window). ``individuals_lt``: the
    individuals per location and day (the exponential model's patients), reported as a cluster's population (of
    its cylinder, not its circle), with no relative risk (SaTScan reports none for that model)."""
    c_lt, L, T = cm.c_lt, cm.L, cm.c_lt.shape[1]
    C = int(c_lt.sum())
    bern = persons is not None
    N = int(persons.sum()) if bern else C
    if bern:
        wsize_loc = np.zeros(L)
    geo, members = cm.geo, cm.members
    t_end_min = T - 1 if cm.prospective else 0
    max_t = longest_cylinder(cm.max_temporal, T, purely_spatial)
    report_members = [[m[0]] for m in members]
    with threads_context(cm.run.threads):
        centres, centre_loc, points, cpoints, windows = circles(cm, size if cut_size is None else cut_size)
        offsets, neighbors, _, boundary = windows
        csum = cumulative_expected(windows, wsize_loc)  # C_Z (E_Z) of the circle after each entry, in walk order
        engine = make_space_time_engine((offsets, neighbors, csum, boundary), dcum, klogk_table(N), C,
                                        max_t, t_end_min, cm.run.min_cases, cm.run.direction,
                                        backend=cm.run.backend, persons=persons, strata=strata,
                                        expected=expected_lt)
        best, arg = engine.batch(c_lt[:, :, None].astype(np.int32), want_arg=True)
        best, arg = best[:, 0], arg[:, 0]
        pt = None
        if purely_temporal:
            # the days' expected cases (Poisson-type: the share of C dcum gives them, or the cells'
            # expectations) or persons (Bernoulli) over all locations
            totals = (persons.sum(axis=0) if bern else expected_lt.sum(axis=0) if expected_lt is not None
                      else np.diff(dcum))
            pt = (bern, np.asarray(totals, dtype=np.float64), C, N, min(cm.max_temporal, T), t_end_min,
                  cm.run.min_cases, cm.run.direction)
            pt_llr, pt_t1, pt_t2 = _temporal_best(c_lt.sum(axis=0)[:, None], pt, want_arg=True)
        ps = None
        if purely_spatial:
            ps = _purely_spatial_engine(windows, csum, persons, C, N, cm.run)
            ps_best, ps_j = (v[:, 0] for v in ps.best_per_centre(c_lt.sum(axis=1)[:, None].astype(np.int32),
                                                                  want_arg=True))
        null_engines, null_pts = [engine], [] if pt is None else [pt]
        if cm.null_end_min is not None:
            # adjusted for earlier analyses (SaTScan's ProspectiveStartDate): the replicates' maxima are over
            # the cylinders ending on any day of the surveillance, the observed clusters those ending last; with
            # a percentage, each analysis's longest cylinder a share of its own period (one engine per range of
            # end days with the same longest, _surveillance_cuts)
            cuts = cm.null_cuts or ((cm.null_end_min, cm.max_temporal),)
            null_engines = [make_space_time_engine((offsets, neighbors, csum, boundary), dcum, klogk_table(N), C,
                                                   m, a, cm.run.min_cases, cm.run.direction, backend=cm.run.backend,
                                                   persons=persons, strata=strata, expected=expected_lt)
                            for a, m in cuts]
            null_pts = [] if pt is None else [pt[:4] + (min(m, T), a) + pt[6:] for a, m in cuts]
        null_llr = _null_maxima(null_engines, null, cm.run, L, T, null_pts, ps)
    radius_of = _radius(geo, points, cpoints)
    origin = cm.origin
    pop_loc = np.asarray(size)

    # the cylinder of each centre: window end j and days [t1, t2] from the kernel's code
    j_of, rest = np.divmod(arg, T * T)
    t1_of, t2_of = np.divmod(rest, T)
    centre_of = np.arange(len(best))
    retrospective = not cm.prospective and T > 2
    if retrospective:
        # SaTScan 10's retrospective space-time analyses: more candidates per centre (cylinders apart
        # in time), and clusters that share locations are both listed when they are apart in time
        centre_of, best, j_of, t1_of, t2_of = _retrospective_candidates(
            (offsets, neighbors, csum, boundary), best, j_of, t1_of, t2_of, c_lt, persons, dcum, N,
            max_t, cm.run.min_cases, cm.run.direction, strata, expected_lt)
    if ps is not None:
        centre_of, best, j_of, t1_of, t2_of = _with_purely_spatial(centre_of, best, j_of, t1_of, t2_of, ps_best, ps_j,
                                                                   T)
    k_pt = -1  # the purely temporal candidate's index, if any
    cand_offsets, cand_neighbors, cand_centres, cand_loc = offsets[centre_of], neighbors, centres[centre_of], \
        centre_loc[centre_of]
    tiebreak = centre_of
    if pt is not None and pt_llr[0] > 0:
        # one more candidate: a window of every location, after the circles' entries
        k_pt = len(best)
        cand_offsets = np.append(cand_offsets, len(neighbors))
        cand_neighbors = np.concatenate([neighbors, np.arange(L, dtype=neighbors.dtype)])
        cand_centres = np.vstack([cand_centres, [np.nan, np.nan]])
        cand_loc = np.append(cand_loc, -1)
        best, j_of = np.append(best, pt_llr[0]), np.append(j_of, len(neighbors) + L - 1)
        t1_of, t2_of = np.append(t1_of, pt_t1[0]), np.append(t2_of, pt_t2[0])
        tiebreak = np.append(centre_of, len(offsets))
    overlap = cylinder_overlap(cm, L, retrospective, centre_of, t1_of, t2_of, cpoints, points)

    def count(members, i):
        return c_lt[members, t1_of[i]:t2_of[i] + 1].sum()

    def window_stats(members, c, j, i):
        a, b = t1_of[i], t2_of[i] + 1
        if i == k_pt:  # every location over the days
            e = float(pt[1][a:b].sum())
            if individuals_lt is not None:
                return int(individuals_lt[:, a:b].sum()), e, math.nan
            if bern:
                return int(e), e * C / N, (c / e) / ((C - c) / (N - e)) if C > c and N > e else math.inf
            p = pop_loc.sum()
            return (int(p) if pop_loc.dtype.kind == "i" else float(p)), e, (c / e) / ((C - c) / (C - e)) \
                if C > c else math.inf
        # the totals the cylinder is scored against: the study's, or time-stratified its own days'
        Ct, Nt = (int(strata[0][a:b].sum()), int(strata[1][a:b].sum())) if strata is not None else (C, N)
        if bern:
            p_days = persons[members, a:b].sum(axis=0)
            n = int(p_days.sum())
            if strata is None:
                e = n * C / N
            else:  # each day's persons at the day's rate of cases
                rate = np.divide(strata[0][a:b], strata[1][a:b], out=np.zeros(b - a), where=strata[1][a:b] > 0)
                e = float((p_days * rate).sum())
            outside = (Ct - c) / (Nt - n) if Nt > n else 0.0
            return n, e, (c / n) / outside if outside > 0 else math.inf
        mu = (float(csum[j]) * (dcum[b] - dcum[a]) / C if expected_lt is None else
              float(expected_lt[members, a:b].sum()))
        if individuals_lt is not None:
            return int(individuals_lt[members, a:b].sum()), mu, math.nan
        p = pop_loc[members].sum()
        return (int(p) if pop_loc.dtype.kind == "i" else float(p)), mu, (c / mu) / ((Ct - c) / (Ct - mu)) \
            if Ct > c else math.inf

    cand = Candidates(best, j_of, cand_offsets, cand_neighbors, cand_centres, cand_loc)

    def extra(i):
        more = {"start": day_of(origin, t1_of[i]), "end": day_of(origin, t2_of[i])}
        return {**more, "purely_temporal": bool(i == k_pt)} if pt is not None else more

    df = _clusters(cand, lambda members, k: math.nan if k == k_pt else radius_of(members, centre_of[k]), None,
                   report_members, cm.ids, null_llr, window_stats, count=count, extra=extra, tiebreak=tiebreak,
                   overlap=overlap, exempt=k_pt)
    if pt is not None:
        if "purely_temporal" not in df.columns:
            df["purely_temporal"] = pd.Series(dtype=bool)
        df["center"] = df["center"].astype(object)
        df.loc[df["purely_temporal"].astype(bool), "center"] = "All"
    if "start" not in df.columns:  # no cluster at all: the same columns, empty
        df["start"] = pd.Series(dtype=object)
        df["end"] = pd.Series(dtype=object)
    df.insert(df.columns.get_loc("radius") + 1, "start", df.pop("start"))
    df.insert(df.columns.get_loc("start") + 1, "end", df.pop("end"))
    total = pop_loc.sum()
    return ScanResult(
        clusters=df, null_llr=null_llr, backend=cm.run.backend, n_cases=C,
        n_population=int(total) if pop_loc.dtype.kind == "i" else float(total), n_locations=L,
        n_merged=cm.n - L, n_centres=len(centres), n_windows=int(boundary.sum()),
        max_population=cm.max_population, direction=cm.run.direction, n_replicates=cm.run.n_replicates, model=model,
        max_distance=cm.max_distance, min_cases=cm.run.min_cases, distance=cm.distance,
        _loc_coords=cm.loc_coords, _loc_cases=c_lt.sum(axis=1), _loc_population=pop_loc,
        _loc_expected=(None if model == "space_time_permutation" else
                       pop_loc * (C / N) if bern else np.asarray(wsize_loc, dtype=float)),
        _loc_controls=controls_loc,
        _row_ids=cm.ids, _row_loc=cm.gid, time_trend=time_trend, spatial_adjustment=spatial_adjustment,
        day_of_week=day_of_week, purely_temporal=pt is not None, purely_spatial=ps is not None,
    )


#: SaTScan keeps the further cylinders of a centre only above this LLR (MIN_CLUSTER_LLR_RETAINED)
_MIN_LLR_RETAINED = 1.0


def _retrospective_candidates(windows, best, j_of, t1_of, t2_of, c_lt, persons, dcum, N, max_t, min_cases,
                              direction, strata=None, expected_lt=None):
    """The cylinders a retrospective space-time analysis ranks for its clusters, as SaTScan 10 does
    (``CClusterSetTemporalOverlap``): each centre's most likely cylinder and, recursively, the best
    cylinder (over the circles; LLR > 1) wholly before and wholly after it in time
    (:func:`~.cpu_space_time.overlap_candidates`), from the best cylinder of every interval of a chunk of
    centres at a time. Returns (centre, LLR, window entry, t1, t2) per candidate, each centre's in that
    order."""
    offsets = windows[0]
    L, T = c_lt.shape
    C = int(c_lt.sum())
    klogk = klogk_table(N)
    mt = min(int(max_t), T)
    m = len(offsets) - 1
    chunk = max(1, 2_000_000 // (T * mt))
    parts = []
    for lo in range(0, m, chunk):
        hi = min(m, lo + chunk)
        val, code = space_time_interval_best(windows, c_lt, persons, dcum, klogk, C, N, mt, min_cases, direction,
                                             lo, hi, strata, expected_lt)
        parts.append(overlap_candidates(val, code, best, j_of, t1_of, t2_of, lo, _MIN_LLR_RETAINED))
    if not parts:
        none = np.zeros(0, dtype=np.int64)
        return none, np.zeros(0), none, none, none
    return tuple(np.concatenate([p[q] for p in parts]) for q in range(5))


def _null_maxima(engines, null, run: RunOptions, L: int, T: int, pts=(), ps=None) -> np.ndarray:
    """(n_replicates,) float64 largest cylinder LLR of each null replicate over the ``engines`` (one, or one per
    range of a surveillance's end days), in replicate order (batches of ``BATCH_SIZE`` replicates where
    ``run.executor`` runs them); with ``pts`` (each as :func:`_temporal_best` takes it) the purely temporal
    clusters' too, with ``ps`` (:func:`_purely_spatial_engine`) the purely spatial ones'."""
    n_rep = run.n_replicates
    sizes = [min(BATCH_SIZE, n_rep - s) for s in range(0, n_rep, BATCH_SIZE)]
    parts = run_replicates(_null_batch, sizes, seeds=replicate_seed_batches(run.seed, n_rep), executor=run.executor,
                           progress=run.progress, desc="space-time Monte Carlo", args=(engines, null, L, T, pts, ps))
    return np.concatenate(parts).astype(np.float64)


def _temporal_best(c_tr, pt, want_arg=False):
    """The best purely temporal cluster (every location, days ``t1..t2``) of each replicate: ``c_tr`` (T, R)
    cases per day; ``pt = (bern, totals, C, N, max_t, t_end_min, min_cases, direction)`` with ``totals``
    (T,) the days' expected cases (Poisson-type: ``mu`` of an interval is their sum) or persons
    (Bernoulli: ``n``), scored with the cylinders' LLRs (float64 logarithms). Returns the (R,) best LLRs
    (0: none) and, with ``want_arg``, the first interval attaining each (end days ascending, start days
    descending, as the cylinders' loop), else None twice."""
    bern, totals, C, N, max_t, t_end_min, min_cases, direction = pt
    high, low = direction in ("high", "both"), direction in ("low", "both")
    T, R = c_tr.shape
    S = np.concatenate([np.zeros((1, R)), np.cumsum(c_tr, axis=0, dtype=np.float64)])
    E = np.concatenate([[0.0], np.cumsum(totals)])
    best = np.zeros(R)
    t1b = np.full(R, -1, dtype=np.int64)
    t2b = np.full(R, -1, dtype=np.int64)
    Cf, Nf = float(C), float(N)
    for t2 in range(t_end_min, T):
        t1 = np.arange(t2, max(-1, t2 - max_t), -1)  # the loop's order: latest start first
        c = S[t2 + 1][None, :] - S[t1]
        e = (E[t2 + 1] - E[t1])[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            if bern:
                ok_n = (e > 0) & (e < Nf)
                llr = (_xlogy(c, c / e) + _xlogy(e - c, (e - c) / e) + _xlogy(Cf - c, (Cf - c) / (Nf - e))
                       + _xlogy(Nf - e - Cf + c, (Nf - e - Cf + c) / (Nf - e))
                       - _xlogy(Cf, Cf / Nf) - _xlogy(Nf - Cf, (Nf - Cf) / Nf))
                hi, lo = c * (Nf - e) > (Cf - c) * e, c * (Nf - e) < (Cf - c) * e
            else:
                ok_n = (e > 0) & (e < Cf)
                llr = _xlogy(c, c / e) + _xlogy(Cf - c, (Cf - c) / (Cf - e))
                hi, lo = c > e, c < e
        ok = ok_n & ((high & hi & (c >= min_cases)) | (low & lo))
        v = np.where(ok, llr, 0.0)
        k = np.argmax(v, axis=0)
        top = v[k, np.arange(R)]
        better = top > best
        best = np.where(better, top, best)
        t1b = np.where(better, t1[k], t1b)
        t2b = np.where(better, t2, t2b)
    return (best, t1b, t2b) if want_arg else (best, None, None)


def _xlogy(a, b):
    """``a log b``, 0 where ``a`` is 0."""
    return np.where(a > 0, a * np.log(np.where(a > 0, b, 1.0)), 0.0)


def _null_batch(size, batch_seed, engines, null, L, T, pts=(), ps=None):
    """One Monte Carlo batch: the null data (days permuted among the cases, the cases dropped
    multinomially on the location x day cells, or relabelled among the persons of the cells), the
    maximum cylinder LLR of each replicate over the ``engines`` (and of the purely temporal clusters of
    ``pts``, of the purely spatial ones with ``ps``)."""
    seeds = batch_children(batch_seed, size)
    n_cases = engines[0].n_cases
    if null[0] == "exponential":
        return _exponential_null_batch(seeds, engines, null, L, T, pts, ps)
    if null[0] == "permute":  # the days permuted among the cases (within strata: null[3], their bounds)
        M = permute_days_cases(null[1], null[2], L, T, seeds, null[3] if len(null) > 3 else None)
    elif null[0] == "hypergeometric":  # Bernoulli: the cases relabelled among the persons of every cell
        M = draw_null_cases(null[1], n_cases, seeds).reshape(L, T, size)
    elif null[0] == "hypergeometric_by_weekday":  # Bernoulli adjusted for the day of the week
        M = draw_cases_by_weekday(null[1], null[2], null[3], seeds)
    elif null[0].endswith("_by_day"):  # time-stratified: every day's cases kept on that day
        M = draw_cases_by_day(null[1], null[2], seeds, persons=null[0] == "hypergeometric_by_day")
    elif null[0] == "multinomial_by_location":  # space-stratified: every location's cases kept there
        M = draw_cases_by_location(null[1], null[2], seeds)
    else:
        M = draw_multinomial_cases(null[1], n_cases, seeds).reshape(L, T, size)
    m = np.zeros(size)
    for e in engines:
        m = np.maximum(m, _engine_max(e, M))
    for pt in pts:
        m = np.maximum(m, _temporal_best(M.sum(axis=0), pt)[0])
    if ps is not None:
        m = np.maximum(m, ps.max_llr(np.ascontiguousarray(M.sum(axis=1), dtype=np.int32)))
    return m


def _engine_max(engine, M):
    """(R,) the largest cylinder LLR of each replicate of ``M`` (L, T, R) on ``engine`` (0: none)."""
    if hasattr(engine, "max_llr"):  # the CPU engine prunes with a pilot's maxima
        return engine.max_llr(M)
    best, _ = engine.batch(M)
    return best.max(axis=0) if best.shape[0] else np.zeros(M.shape[2])


def _exponential_null_batch(seeds, engines, null, L, T, pts=(), ps=None):
    """The space-time exponential model's replicates (``null = ("exponential", cell, mu, dead, strata)``: each
    patient's location x day cell, calibrated time and death indicator, and None or the strata within which the
    pairs are permuted): the (time, censoring) pairs permuted among the patients, who keep their cells, so that
    every replicate has its own expectations per location and day, and its maximum over the ``engines`` given
    those (:meth:`~.cpu_space_time.CpuSpaceTimeEngine.with_expected`; high rates on the CPU:
    :func:`~.cpu_exponential.max_llr_death_days`, the same maxima), over the purely temporal clusters of ``pts``
    (every location: on the CPU one more circle, of all the locations) and, with ``ps``, over the purely spatial
    ones (each circle over the whole period). ``cell`` must be sorted."""
    _, cell, mu, dead, strata = null
    args = [e.args for e in engines if e.backend == "cpu"]
    if len(args) == len(engines) and all(a[7] == "high" for a in args):
        # high rates on the CPU: the cylinders bounded by deaths decide the maxima (cpu_exponential)
        windows, _, klogk, n_cases, _, _, min_cases, _ = args[0]
        words = replicate_seed_words(seeds)
        m = max_llr_death_days(windows, cell // T, cell % T, mu, dead, L, T, words, klogk, n_cases,
                               [(a[5], a[4]) for a in args], min_cases, strata, whole_period=ps is not None)
        for pt in pts:  # the circle of every location, its intervals those of the purely temporal clusters
            every = (np.array([0, L], dtype=np.int64), np.arange(L, dtype=np.int32), None,
                     np.r_[np.zeros(L - 1, np.uint8), np.uint8(1)])
            m = np.maximum(m, max_llr_death_days(every, cell // T, cell % T, mu, dead, L, T, words, klogk, n_cases,
                                                 [(pt[5], pt[4])], pt[6], strata))
        return m
    e_sum, d_sum = permute_measurements(cell, mu, dead, L * T, seeds, strata)
    R = e_sum.shape[1]
    m = np.zeros(R)
    for r in range(R):
        M = np.rint(d_sum[:, r]).astype(np.int32).reshape(L, T, 1)
        E = e_sum[:, r].reshape(L, T)
        for e in engines:
            m[r] = max(m[r], _engine_max(e.with_expected(E), M)[0])
        for pt in pts:  # this replicate's expectations per day
            m[r] = max(m[r], _temporal_best(M.sum(axis=0), pt[:1] + (E.sum(axis=0),) + pt[2:])[0][0])
        if ps is not None:  # the circles over the whole period, with this replicate's expectations
            w = ps.windows
            ps_r = make_engine((w[0], w[1], cumulative_expected(w, E.sum(axis=1)), w[3]), klogk_table(ps.n_cases),
                               ps.n_cases, ps.n_cases, ps.direction, backend=ps.backend, model="poisson",
                               min_cases=ps.min_cases)
            m[r] = max(m[r], ps_r.max_llr(np.ascontiguousarray(M.sum(axis=1), dtype=np.int32))[0])
    return m


def check_purely_spatial(purely_spatial, surveillance_start) -> bool:
    """``purely_spatial`` of a space-time scan, checked: a bool, and not with a ``surveillance_start`` (the
    purely spatial clusters of a surveillance's earlier analyses are not scanned, as in :func:`~hphawkes_py.scan.space_time`)."""
    purely_spatial = check_bool(purely_spatial, "purely_spatial")
    if purely_spatial and surveillance_start is not None:
        raise ValueError("purely_spatial clusters are not scanned with a surveillance_start (as in space_time)")
    return purely_spatial


def longest_cylinder(max_temporal: int, T: int, purely_spatial: bool) -> int:
    """The longest cylinder's days: ``max_temporal``, and with the purely spatial clusters (the whole study period
    of ``T`` days is theirs) at most ``T - 1``, as in SaTScan; a period of one day has no cylinder then."""
    if not purely_spatial:
        return max_temporal
    if T < 2:
        raise ValueError("purely_spatial clusters need a study period of at least 2 days (with one day every "
                         "cylinder is purely spatial)")
    return min(max_temporal, T - 1)


def _purely_spatial_engine(windows, csum, persons, C: int, N: int, run: RunOptions):
    """The purely spatial scan engine (:func:`~.engine.make_engine`) of the cylinders' circles over the whole
    study period: a circle's expected cases are ``csum`` (Poisson-type: its E_Z, the sum of its cylinders'
    over every day), or its persons over every day (Bernoulli, ``persons`` (L, T))."""
    offsets, neighbors, _, boundary = windows
    if persons is None:
        return make_engine((offsets, neighbors, csum, boundary), klogk_table(C), C, C, run.direction,
                           backend=run.backend, model="poisson", min_cases=run.min_cases)
    # whole persons summed in walk order: exact in float64 (N < 2**31)
    npop = np.rint(cumulative_expected(windows, persons.sum(axis=1))).astype(np.int32)
    return make_engine((offsets, neighbors, npop, boundary), klogk_table(N), C, N, run.direction,
                       backend=run.backend, model="bernoulli", min_cases=run.min_cases)


def _with_purely_spatial(centre_of, best, j_of, t1_of, t2_of, ps_best, ps_j, T: int):
    """The candidates (centre, LLR, window entry, t1, t2; each centre's together) with each centre's cylinders
    replaced by its best purely spatial window (days 0..T - 1) where that LLR is greater (by more than SaTScan's
    tolerance, 1e-9: ``macro_less_than``)."""
    top = np.zeros(len(ps_best))
    np.maximum.at(top, centre_of, best)
    wins = ps_best > top + 1e-9
    keep = ~wins[centre_of]
    won = np.flatnonzero(wins)
    centre = np.concatenate([centre_of[keep], won])
    order = np.argsort(centre, kind="stable")  # each centre's candidates together, in centre order
    days = np.zeros(len(won), dtype=t1_of.dtype)
    return (centre[order], np.concatenate([best[keep], ps_best[won]])[order],
            np.concatenate([j_of[keep], ps_j[won].astype(j_of.dtype)])[order],
            np.concatenate([t1_of[keep], days])[order], np.concatenate([t2_of[keep], days + (T - 1)])[order])

