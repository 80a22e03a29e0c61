"""Kulldorff's space-time permutation scan statistic (Kulldorff et al. 2005, SaTScan's model 2).

Cases only (no population): ``c_zd`` cases at location z on day d, ``C_z`` and ``C_d`` their
location and day totals, ``C`` in all. A cylinder (a circle Z of locations x an interval of days
[t1, t2]) has ``mu = C_Z x C_[t1,t2] / C`` expected cases, and the LLR
``c log(c/mu) + (C-c) log((C-c)/(C-mu))`` when its count is higher (lower) than expected.
Circles are centred on the locations and grown as in :func:`~hphawkes_py.scan.bernoulli`, cut at
``max_population`` x C cases over the study period (and ``max_distance``); intervals last at most
``max_temporal`` days and, with ``prospective=True``, end on the last day. Monte Carlo: the days
of the cases are permuted among the cases, which keeps every C_z and C_d.

Runs on the CPU engine (Numba) and the CUDA engine (``scan_space_time`` in ``scan.cu``).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .._backend import resolve_backend, threads_context
from .._parallel import run_replicates
from .._validate import (as_count_array, check_bool, check_in, check_int, check_positive, check_seed, check_threads,
                         describe)
from .engine import DIRECTIONS, build_windows, klogk_table, make_space_time_engine, permute_days_cases
from .model import (BATCH_SIZE, ScanResult, _check_geometry, _check_max_population, _check_replicates,
                    _check_xy, _radius, check_location_ids, gumbel_p_values, make_centres, merge_rows,
                    replicate_seed_batches)

__all__ = ["space_time_permutation"]


def _abs_days(times, name: str, n: int | None):
    """Whole days as int64 (datetime64 / pandas dates: days since 1970-01-01) and whether they were dates."""
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
        bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if bad.any():
            i = int(np.argmax(bad.ravel()))
            raise ValueError(f"{name} must be whole days; {name}[{i}] = {arr.ravel()[i]!r}")
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


def space_time_permutation(coords, cases, times, *, max_population=0.5, max_distance=None, max_temporal=7,
                           prospective=False, study_period=None, min_cases=2, n_replicates=999, direction="high",
                           distance="euclidean", location_ids=None, seed=None, executor=None, backend="auto",
                           threads=None, progress=True) -> ScanResult:
    """Kulldorff's space-time permutation scan statistic (retrospective or prospective).

    Parameters
    ----------
    coords : array_like (n, 2)
        Location of each row (rows with identical coordinates are one location).
    cases : array_like (n,)
        Non-negative whole case counts (one row per location and day, or per case).
    times : array_like (n,)
        Day of each row: whole numbers (days) or datetime64 / pandas dates (read as days).
    max_population : float in (0, 0.5]
        Maximum circle size as a fraction of all cases over the study period.
    max_distance : float, optional
        Maximum circle radius (coordinate units; km with ``distance="great_circle"``).
    max_temporal : int >= 1
        Maximum length of the time interval (days).
    prospective : bool
        Only intervals that end on the last day of the study period (prospective surveillance).
    study_period : (start, end), optional
        First and last day (same kind as ``times``); default the first and last day with cases.
        Rows outside it are refused.
    min_cases : int >= 0
        High-rate cylinders need at least this many cases (SaTScan's default 2).
    n_replicates, direction, distance, location_ids, seed, executor, backend, threads, progress
        As in :func:`~hphawkes_py.scan.poisson`. Rows of one location share its id.

    Returns
    -------
    ScanResult
        ``model="space_time_permutation"``; ``clusters`` has ``start`` and ``end`` (days, or dates
        when ``times`` were dates), ``population`` = the circle's cases over the whole period, and
        ``expected`` = mu.
    """
    xy = _check_xy(coords)
    n = xy.shape[0]
    ca = as_count_array(cases, "cases")
    if len(ca) != n:
        raise ValueError(f"coords and cases must have the same length; got {n} and {len(ca)}")
    day, origin, T = _days(times, n, study_period)
    C = int(ca.sum())
    if C < 2:
        raise ValueError(f"cases sum to {C}: the space-time permutation scan needs at least 2 cases")
    ids = check_location_ids(location_ids, n, repeats=True)
    max_population = _check_max_population(max_population)
    if max_distance is not None:
        max_distance = check_positive(max_distance, "max_distance")
    geo = _check_geometry(distance, xy, None)
    max_temporal = check_int(max_temporal, "max_temporal", minimum=1)
    if not isinstance(prospective, (bool, np.bool_)):
        raise TypeError(f"prospective must be True or False, got {describe(prospective)}")
    min_cases = check_int(min_cases, "min_cases", minimum=0)
    n_replicates = _check_replicates(n_replicates)
    check_in(direction, "direction", DIRECTIONS)
    progress = check_bool(progress, "progress")
    threads = check_threads(threads)
    check_seed(seed)
    resolved = resolve_backend(backend)

    loc_coords, gid, members = merge_rows(xy)
    L = len(members)
    if L * T * BATCH_SIZE > 2**31:
        raise ValueError(f"{L} locations x {T} days is too large for the space-time permutation engine")
    c_lt = np.zeros((L, T), dtype=np.int64)
    np.add.at(c_lt, (gid, day), ca)
    Cz = c_lt.sum(axis=1)
    dcum = np.concatenate([[0.0], np.cumsum(c_lt.sum(axis=0)).astype(np.float64)])
    # the cases one by one (location, day): the units whose days are permuted
    loc_of_case = np.repeat(np.repeat(np.arange(L), T), c_lt.ravel())
    day_of_case = np.repeat(np.tile(np.arange(T), L), c_lt.ravel())
    t_end_min = T - 1 if prospective else 0
    report_members = [[m[0]] for m in members]
    centres, centre_loc = make_centres(loc_coords, None)

    with threads_context(threads):
        points = geo.points(loc_coords)
        windows = build_windows(points, points, Cz, max_population * C, geo.to_working(max_distance))
        engine = make_space_time_engine(windows, dcum, klogk_table(C), C, max_temporal, t_end_min, min_cases,
                                        direction, backend=resolved)
        best, arg = engine.batch(c_lt[:, :, None].astype(np.int32), want_arg=True)
        best, arg = best[:, 0], arg[:, 0]
        starts = list(range(0, n_replicates, BATCH_SIZE))
        sizes = [min(BATCH_SIZE, n_replicates - s) for s in starts]
        parts = run_replicates(_null_batch, sizes, seeds=replicate_seed_batches(seed, n_replicates),
                               executor=executor, progress=progress, desc="space-time permutation Monte Carlo",
                               args=(engine, loc_of_case, day_of_case, L, T))
    null_llr = np.concatenate(parts).astype(np.float64)
    offsets, neighbors, wsize, boundary = windows
    radius_of = _radius(geo, points, points)

    def when(t):
        return origin + np.timedelta64(int(t), "D") if isinstance(origin, np.datetime64) else origin + int(t)

    cand = np.flatnonzero(best > 0)
    cand = cand[np.lexsort((cand, -best[cand]))]
    used = np.zeros(L, dtype=bool)
    rows = []
    null_sorted = np.sort(null_llr)
    R = len(null_llr)
    ids_list = list(ids.tolist())
    for i in cand:
        code = int(arg[i])
        j, rest = divmod(code, T * T)
        t1, t2 = divmod(rest, T)
        mem = neighbors[offsets[i]:j + 1]
        if used[mem].any():
            continue
        exceed = R - np.searchsorted(null_sorted, float(best[i]), side="left")
        if rows and exceed == R:
            continue
        used[mem] = True
        c = int(c_lt[mem, t1:t2 + 1].sum())
        mu = float(wsize[j]) * (dcum[t2 + 1] - dcum[t1]) / C
        rows.append({
            "center": ids_list[members[centre_loc[i]][0]],
            "x": float(centres[i, 0]), "y": float(centres[i, 1]), "radius": radius_of(mem, i),
            "start": when(t1), "end": when(t2),
            "location_ids": [ids_list[r] for m in mem for r in report_members[m]],
            "n_locations": len(mem), "cases": c, "population": int(wsize[j]), "expected": mu,
            "observed_over_expected": c / mu,
            "relative_risk": (c / mu) / ((C - c) / (C - mu)) if C > c else math.inf,
            "log_likelihood_ratio": float(best[i]), "p_value": (1 + exceed) / (1 + R),
        })
    cols = ["center", "x", "y", "radius", "start", "end", "location_ids", "n_locations", "cases", "population",
            "expected", "observed_over_expected", "relative_risk", "log_likelihood_ratio", "p_value"]
    df = pd.DataFrame(rows, columns=cols)
    df["gumbel_p_value"] = gumbel_p_values(df["log_likelihood_ratio"].to_numpy(dtype=float), null_llr)
    return ScanResult(
        clusters=df, null_llr=null_llr, backend=resolved, n_cases=C, n_population=C, n_locations=L,
        n_merged=n - L, n_centres=len(centres), n_windows=int(boundary.sum()), max_population=max_population,
        direction=direction, n_replicates=n_replicates, model="space_time_permutation", max_distance=max_distance,
        min_cases=min_cases, distance=distance, _loc_coords=loc_coords, _loc_cases=Cz, _loc_population=Cz,
        _row_ids=ids, _row_loc=gid,
    )


def _null_batch(size, batch_seed, engine, loc_of_case, day_of_case, L, T):
    """One Monte Carlo batch: the cases' days permuted, the maximum cylinder LLR of each replicate."""
    M = permute_days_cases(loc_of_case, day_of_case, L, T, batch_seed.spawn(size))
    best, _ = engine.batch(M)
    return best.max(axis=0) if best.shape[0] else np.zeros(size)
