"""Spatial variation in temporal trends (SVTT; Moore and Kulldorff; SaTScan's analysis type 5, Poisson).

The cases of every location are counted in time units (days aggregated into units of
``time_aggregation`` days, counted back from the last day; where they do not divide the study period
the first unit is shorter, its expected cases counted by its days, where SaTScan refuses such a study
period for SVTT). Under the null the whole region
follows one log-linear trend, ``E c_zt = m_zt exp(alpha + beta t)``, with ``m_zt`` the expected cases
from the population (constant in time: ``m_zt = C P_z len_t / (sum P x days)``). A window (a circle
of locations, as in :func:`~hphawkes_py.scan.poisson`) has its own trend inside and another outside;
its LLR compares the likelihood of the cases inside and outside under their own trends with that
under the global trend (SaTScan's ``CalcSVTTLogLikelihood``: trends fitted by its Newton-Raphson,
every case in the first / last unit read as a -inf / +inf trend). ``direction="high"`` keeps windows
whose trend inside is steeper than the global one, ``"low"`` flatter, ``"both"`` either.

Monte Carlo: the cases of each time unit are redistributed over the locations in proportion to
their population (time-stratified randomisation), which keeps the global trend of every replicate.
The Monte Carlo runs on the Numba kernel or the CUDA kernel ``scan_svtt`` (``scan_temporal.cu``).
Trends are reported as SaTScan does: ``100 (exp(beta x 365.25 / days per unit) - 1)`` percent per
year for dates, ``100 (exp(beta / units) - 1)`` per time unit for whole-number times.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
from numba import njit, prange

from .._backend import get_device, is_gpu_backend, threads_context
from .._parallel import run_replicates
from .._validate import as_float_array, check_int
from ._rng import replicate_seed_words
from .cpu_temporal import TREND_CONVERGED, TREND_NEG_INF, TREND_POS_INF, _svtt_scan, fit_trend, svtt_llr
from .gpu_temporal import GpuSVTTEngine
from .locations import (_check_geometry, _check_max_population, _check_xy, _radius, check_counts, check_location_ids,
                        location_population, merge_rows)
from .monte_carlo import BATCH_SIZE, batch_children, check_run, replicate_seed_batches
from .space_time_scan import _days
from .windows import build_windows

__all__ = ["svtt", "SVTTResult"]


@dataclasses.dataclass
class SVTTResult:
    """The result of :func:`svtt` (built by it; its fields are its parameters).

    Parameters
    ----------
    clusters : pandas.DataFrame
        Clusters in decreasing LLR, no location shared with a more likely one (secondary ones with a
        Monte Carlo p-value of 1 left out): ``cluster``, ``center`` (id of the centre location),
        ``radius``, ``location_ids``, ``n_locations``, ``population``, ``cases``, ``expected``,
        ``observed_over_expected``, ``relative_risk``, ``inside_trend`` and ``outside_trend`` (percent per year, or per
        unit; +-999999 when every case is in the last / first unit, SaTScan's indicator),
        ``log_likelihood_ratio``, ``p_value``.
    global_trend : float
        The trend of the whole region, same units.
    null_llr : numpy.ndarray
        (n_replicates,) largest window LLR of each replicate.
    n_cases : int
        Cases C.
    n_units : int
        Time units.
    backend : str
        The engine of the Monte Carlo.
    distance : str
        ``"euclidean"`` or ``"great_circle"`` (coordinates are then (latitude, longitude)).
    study_period : tuple, optional
        The first and last day of the study period (dates when ``times`` were dates, else day numbers).
    time_aggregation : int
        Days per time unit.
    loc_coords : numpy.ndarray, optional
        (L, 2) coordinates of the distinct locations (rows with identical coordinates merged).
    loc_ids : list, optional
        The ids of each location's rows (in input order).
    loc_cases : numpy.ndarray, optional
        (L, n_units) cases of each location in each time unit.
    loc_expected : numpy.ndarray, optional
        (L, n_units) expected cases under the null without trend (population x unit length).
    loc_population : numpy.ndarray, optional
        (L,) population of each location.

    Examples
    --------
    >>> xy = np.repeat([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [5.0, 5.0]], 6, axis=0)
    >>> t = np.tile(np.arange(6), 4)
    >>> cases = np.where(np.arange(24) < 6, 2 ** t, 4)
    >>> res = hp.scan.svtt(xy, t, cases, np.full(24, 1000), max_population=0.3, n_replicates=19, seed=1,
    ...                    backend="cpu", progress=False)
    >>> res.n_units, len(res.null_llr), res.most_likely.n_locations
    (6, 19, 1)
    """

    clusters: pd.DataFrame
    global_trend: float
    null_llr: np.ndarray
    n_cases: int
    n_units: int
    backend: str
    distance: str = "euclidean"
    study_period: tuple | None = None
    time_aggregation: int = 1
    loc_coords: np.ndarray | None = dataclasses.field(default=None, repr=False)
    loc_ids: list | None = dataclasses.field(default=None, repr=False)
    loc_cases: np.ndarray | None = dataclasses.field(default=None, repr=False)
    loc_expected: np.ndarray | None = dataclasses.field(default=None, repr=False)
    loc_population: np.ndarray | None = dataclasses.field(default=None, repr=False)

    @property
    def most_likely(self):
        """The most likely cluster as a named tuple (None when there is none)."""
        rows = list(self.clusters.itertuples(index=False))
        return rows[0] if rows else None

    def __repr__(self) -> str:
        top = self.most_likely
        head = f"SVTTResult({self.n_cases} cases in {self.n_units} units, global trend {self.global_trend:.4g}%"
        if top is None:
            return head + ", no cluster)"
        return head + (f"; most likely {top.n_locations} locations, trend inside {top.inside_trend:.4g}% outside "
                       f"{top.outside_trend:.4g}%, LLR={top.log_likelihood_ratio:.4f}, p={top.p_value:.4g})")


def _percent(status, beta, per):
    """SaTScan's reported trend: percent per year (per unit) from beta per unit."""
    if status == TREND_NEG_INF:
        return -999999.0
    if status == TREND_POS_INF:
        return 999999.0
    if status != TREND_CONVERGED:
        return 0.0
    v = 100.0 * (math.exp(beta * per) - 1.0)
    return 0.0 if -1e-8 < v < 1e-8 else v


def svtt(coords, times, cases, population, *, time_aggregation=1, study_period=None, max_population=0.5,
         direction="high", distance="euclidean", location_ids=None, n_replicates=999, seed=None, executor=None,
         backend="auto", threads=None, progress=True) -> SVTTResult:
    """Spatial variation in temporal trends (Poisson): circles whose log-linear trend differs from the rest.

    Parameters
    ----------
    coords : array_like (n, 2)
        Location of each row (rows with identical coordinates are one location).
    times : array_like (n,)
        Day of each row: whole numbers or datetime64 / pandas dates (tz-naive).
    cases : array_like (n,)
        Non-negative whole case counts of each row.
    population : array_like (n,)
        Population of each row's location (the same on every row of a location), persons.
    time_aggregation : int >= 1
        Days per time unit (e.g. 365 for yearly units of dates); units counted back from the last day (the
        first may be shorter).
    study_period : (start, end), optional
        First and last day (same kind as ``times``); default the first and last day of ``times``.
    max_population : float in (0, 0.5]
        Largest circle as a fraction of the total population (cut on the expected cases, which are
        proportional to it, as SaTScan cuts them).
    direction : {"high", "low", "both"}
        Trend inside steeper than the global one, flatter, or either.
    distance : {"euclidean", "great_circle"}
        As in :func:`~hphawkes_py.scan.poisson`.
    location_ids : array_like (n,), optional
        Ids reported for the rows (rows of one location share one).
    n_replicates, seed, executor, threads, progress
        As in :func:`~hphawkes_py.scan.temporal`.
    backend : {"auto", "cpu", "gpu", "emulator"}
        The Monte Carlo's engine: Numba, or the CUDA kernel ``scan_svtt`` (``scan_temporal.cu``) on a
        GPU or the CPU emulator (the emulator gives the CPU engine's maxima bit for bit; a GPU's
        exp and log may differ in the last bits); "auto": the GPU when one is usable.

    Returns
    -------
    SVTTResult
        The clusters with their trends inside and outside, the global trend and the null maxima.

    Examples
    --------
    30 locations over 10 yearly units; cases rise 30 % a year at the five locations near (1, 1), 0 % elsewhere:

    >>> rng = np.random.default_rng(3)
    >>> xy = rng.uniform(0, 10, (30, 2))
    >>> xy[:5] = [1.0, 1.0] + 0.2 * np.arange(5)[:, None]
    >>> t = np.repeat(np.arange(10), 30)
    >>> rate = np.where(np.tile(np.arange(30), 10) < 5, 1.3 ** t, 1.0) * 8
    >>> res = hp.scan.svtt(np.tile(xy, (10, 1)), t, rng.poisson(rate), np.full(300, 1000), n_replicates=99,
    ...                    seed=1, backend="cpu", progress=False)
    >>> top = res.most_likely
    >>> print(top.n_locations, round(top.inside_trend), round(top.outside_trend), top.p_value)
    5 28 0 0.01
    """
    if direction not in ("high", "low", "both"):
        raise ValueError(f"direction must be 'high', 'low' or 'both', got {direction!r}")
    xy = _check_xy(coords)
    n = xy.shape[0]
    ca = check_counts(cases, "cases")
    if len(ca) != n:
        raise ValueError(f"coords and cases must have the same length; got {n} and {len(ca)}")
    po = as_float_array(population, "population", ndim=1, copy=True)
    if len(po) != n:
        raise ValueError(f"population must have one value per row ({n}), got {len(po)}")
    if (po < 0).any():
        i = int(np.argmax(po < 0))
        raise ValueError(f"population must be non-negative; population[{i}] = {po[i]!r}")
    agg = check_int(time_aggregation, "time_aggregation", minimum=1)
    max_population = _check_max_population(max_population)
    run = check_run(0, n_replicates, direction, "no-overlap", progress, threads, seed, backend, executor)
    ids = check_location_ids(location_ids, n, repeats=True)
    geo = _check_geometry(distance, xy, None)
    day, origin, n_days = _days(times, n, study_period)
    T = -(-n_days // agg)
    if T < 3:
        raise ValueError(f"the study period ({n_days} days) in units of {agg} days gives {T} time units; a trend "
                         f"needs at least 3")
    C = int(ca.sum())
    if C < 4:
        raise ValueError(f"cases sum to {C}: the SVTT scan needs at least 4 cases (2 inside and 2 outside a window)")
    loc_coords, gid, members = merge_rows(xy)
    L = len(members)
    P = location_population(po, gid, L)
    unit_of_day = T - 1 - (n_days - 1 - np.arange(n_days)) // agg
    length = np.bincount(unit_of_day, minlength=T).astype(float)
    c_lt = np.zeros((L, T), dtype=np.int64)
    np.add.at(c_lt, (gid, unit_of_day[day]), ca)
    bad = (P <= 0) & (c_lt.sum(axis=1) > 0)
    if bad.any():
        raise ValueError(f"a location with cases has zero population (location of row "
                         f"{int(np.flatnonzero(gid == int(np.argmax(bad)))[0])})")
    measure = C * np.outer(P / P.sum(), length / n_days)
    st_g, _, beta_g = fit_trend(c_lt.sum(axis=0).astype(float), measure.sum(axis=0))
    if st_g != TREND_CONVERGED:
        raise ValueError("the global time trend is not defined (every case in the first or the last time unit)")
    per = 365.25 / agg if isinstance(origin, np.datetime64) else 1.0 / agg
    want_high, want_low = direction in ("high", "both"), direction in ("low", "both")
    with threads_context(run.threads):
        points = geo.points(loc_coords)
        # circles cut on the expected cases (SaTScan's measure, in floating point), as SaTScan does
        m_loc = measure.sum(axis=1)
        offsets, neighbors, _, boundary = build_windows(points, points, m_loc, max_population * m_loc.sum())
        # each centre's best window on the observed data (its circles only)
        best_c = np.zeros(L)
        entry_c = np.full(L, -1, dtype=np.int64)
        obs = c_lt[:, :, None].astype(np.int32)
        for i in range(L):
            o = np.array([0, offsets[i + 1] - offsets[i]], dtype=np.int64)
            b = np.empty(1)
            a = np.empty(1, dtype=np.int64)
            _svtt_scan(o, neighbors[offsets[i]:offsets[i + 1]], boundary[offsets[i]:offsets[i + 1]], obs, measure,
                       np.array([beta_g]), want_high, want_low, b, a)
            best_c[i] = b[0]
            entry_c[i] = offsets[i] + a[0] if a[0] >= 0 else -1
        engine = None
        if is_gpu_backend(run.backend):
            engine = GpuSVTTEngine((offsets, neighbors, boundary), measure, beta_g, direction,
                                   device=get_device(run.backend), backend=run.backend)
        sizes = [min(BATCH_SIZE, run.n_replicates - k) for k in range(0, run.n_replicates, BATCH_SIZE)]
        parts = run_replicates(_null_batch, sizes, seeds=replicate_seed_batches(run.seed, run.n_replicates),
                               executor=run.executor, progress=run.progress, desc="SVTT Monte Carlo",
                               args=(c_lt.sum(axis=0), P, (offsets, neighbors, boundary), measure, beta_g, want_high,
                                     want_low, engine))
    null_llr = np.concatenate(parts).astype(np.float64)
    radius_of = _radius(geo, points, points)
    ids_list = ids.tolist()  # plain Python ids (str, int) in the cluster table
    null_sorted = np.sort(null_llr)
    R = len(null_llr)
    used = np.zeros(L, dtype=bool)
    rows = []
    out = np.zeros(5)
    c_all = c_lt.sum(axis=0).astype(float)
    m_all = measure.sum(axis=0)
    for i in sorted(range(L), key=lambda k: (-best_c[k], k)):
        if not best_c[i] > 0:
            break
        exceed = R - int(np.searchsorted(null_sorted, best_c[i], side="left"))
        if rows and exceed == R:
            break  # as SaTScan: a secondary cluster below every replicate's maximum is not listed
        mem = neighbors[offsets[i]:entry_c[i] + 1]
        if used[mem].any():
            continue
        used[mem] = True
        c_in = c_lt[mem].sum(axis=0).astype(float)
        m_in = measure[mem].sum(axis=0)
        svtt_llr(c_in, m_in, c_all, m_all, beta_g, want_high, want_low, out)
        cases_in, expected = int(c_in.sum()), float(m_in.sum())
        rr = (cases_in / expected) / ((C - cases_in) / (C - expected)) if C > cases_in else math.inf
        rows.append({
            "cluster": len(rows) + 1, "center": ids_list[members[i][0]], "radius": float(radius_of(mem, i)),
            "location_ids": [ids_list[members[m][0]] for m in mem], "n_locations": len(mem),
            "population": float(P[mem].sum()),
            "cases": cases_in, "expected": expected, "observed_over_expected": cases_in / expected,
            "relative_risk": rr,
            "inside_trend": _percent(int(out[1]), out[2], per), "outside_trend": _percent(int(out[3]), out[4], per),
            "log_likelihood_ratio": float(best_c[i]), "p_value": (1 + exceed) / (1 + R)})
    cols = ["cluster", "center", "radius", "location_ids", "n_locations", "population", "cases", "expected",
            "observed_over_expected", "relative_risk", "inside_trend", "outside_trend", "log_likelihood_ratio",
            "p_value"]
    return SVTTResult(clusters=pd.DataFrame(rows, columns=cols), global_trend=_percent(TREND_CONVERGED, beta_g, per),
                      null_llr=null_llr, n_cases=C, n_units=T, backend=run.backend, distance=distance,
                      study_period=(_day(origin, 0), _day(origin, n_days - 1)), time_aggregation=agg,
                      loc_coords=loc_coords,
                      loc_ids=[list(dict.fromkeys(ids_list[r] for r in members[g])) for g in range(L)], loc_cases=c_lt,
                      loc_expected=measure, loc_population=P)


def _day(origin, d: int):
    """Day ``d`` of the study period, a date when the times were dates."""
    return origin + np.timedelta64(d, "D") if isinstance(origin, np.datetime64) else origin + d


@njit(cache=True, parallel=True)
def _stratified(c_t, cum_p, seeds, out):
    """Time-stratified null: the ``c_t[t]`` cases of every unit dropped on the locations with
    probabilities proportional to ``cum_p`` (cumulative population), one seed per replicate."""
    L = cum_p.shape[0]
    total = cum_p[L - 1]
    for r in prange(seeds.shape[0]):
        np.random.seed(seeds[r])
        for t in range(c_t.shape[0]):
            for _ in range(c_t[t]):
                u = np.random.random() * total
                loc = np.searchsorted(cum_p, u, side="right")
                out[min(loc, L - 1), t, r] += 1


def _null_batch(size, batch_seed, c_t, P, windows, measure, beta_g, want_high, want_low, engine=None):
    """One Monte Carlo batch: time-stratified null data, each replicate's largest window LLR."""
    seeds = replicate_seed_words(batch_children(batch_seed, size))
    L, T = measure.shape
    M = np.zeros((L, T, size), dtype=np.int32)
    _stratified(np.asarray(c_t, dtype=np.int64), np.cumsum(P), seeds, M)
    if engine is not None:
        return engine.max_llr(M)
    offsets, neighbors, boundary = windows
    best = np.empty(size)
    arg = np.empty(size, dtype=np.int64)
    _svtt_scan(offsets, neighbors, boundary, M, measure, np.full(size, beta_g), want_high, want_low, best, arg)
    return best

