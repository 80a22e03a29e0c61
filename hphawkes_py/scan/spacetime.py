"""Space-time permutation scan statistic (Kulldorff, Heffernan, Hartman, Assunção & Mostashari 2005).

Only case counts by location and day are needed. With C cases in all, C_z at location z and
C_d on day d, the expected count of a cylinder (a circle of locations Z times a day interval D)
is ``mu = C_Z * C_D / C``: what it would hold if where and when the cases happened were
independent. Each cylinder is scored with Kulldorff's Poisson generalised likelihood ratio

    LLR = c log(c / mu) + (C - c) log((C - c) / (C - mu)),   c > mu,

and the most likely cluster's significance comes from Monte Carlo replicates that permute the
case dates among the cases (both marginals stay fixed). Semantics follow SaTScan's space-time
permutation model (circular windows centred on the locations, tie groups of equidistant
locations entering a circle together, high rates, secondary clusters without geographical
overlap); ``prospective=True`` keeps only cylinders that end on the last day of the study
period, as SaTScan's prospective analysis with no earlier analyses.
"""
from __future__ import annotations

import dataclasses
import functools
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._backend import get_device, is_gpu_backend, resolve_backend, threads_context
from .._parallel import run_replicates, spawn_seeds
from .._validate import as_float_array, check_in, check_int, check_positive, describe

__all__ = ["space_time_permutation", "SpaceTimeScanResult", "read_satscan_spacetime", "EARTH_RADIUS_KM"]

#: SaTScan's earth radius for latitude/longitude coordinates (``EARTH_RADIUS_km`` in its sources).
EARTH_RADIUS_KM = 6367.0

#: Replicates permuted and scanned per batch (bounds the (batch, cases) permutation buffer).
_BATCH = 256


# ----------------------------------------------------------------------------------------- input
def _as_days(times: Any, n: int) -> tuple[np.ndarray, Any]:
    """Day numbers (int64) and the origin to turn them back into dates (None for plain numbers)."""
    if isinstance(times, pd.Series) and (pd.api.types.is_datetime64_any_dtype(times)):
        times = times.to_numpy()
    arr = np.asarray(times)
    if arr.ndim != 1 or len(arr) != n:
        raise ValueError(f"times must be 1-D with one entry per record ({n}), got shape {arr.shape}")
    if np.issubdtype(arr.dtype, np.datetime64) or arr.dtype == object or arr.dtype.kind in "US":
        try:
            dt = pd.to_datetime(pd.Series(arr), errors="raise", format="mixed").to_numpy("datetime64[ns]")
        except (TypeError, ValueError) as exc:
            raise TypeError(f"times must be dates (datetime64, pandas Timestamps, 'YYYY-MM-DD' strings) "
                            f"or whole day numbers: {exc}") from None
        if np.isnat(dt).any():
            raise ValueError(f"times holds missing dates (first at record {int(np.flatnonzero(np.isnat(dt))[0])})")
        days_ns = dt.astype("datetime64[D]")
        if (days_ns.astype("datetime64[ns]") != dt).any():
            bad = int(np.flatnonzero(days_ns.astype("datetime64[ns]") != dt)[0])
            raise ValueError(f"times must be whole days (time aggregation is one day); record {bad} is "
                             f"{pd.Timestamp(dt[bad])} — floor them yourself if that is what you mean")
        origin = np.datetime64("1970-01-01", "D")
        return (days_ns - origin).astype(np.int64), origin
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number) or np.iscomplexobj(arr):
        raise TypeError(f"times must be dates or whole day numbers, got dtype {arr.dtype}")
    f = arr.astype(np.float64)
    if not np.all(np.isfinite(f)) or np.any(f != np.round(f)):
        bad = int(np.flatnonzero(~np.isfinite(f) | (f != np.round(f)))[0])
        raise ValueError(f"times must be whole day numbers; record {bad} is {arr[bad]!r}")
    return f.astype(np.int64), None


def _day(value: Any, name: str, origin) -> int:
    if origin is None:
        v = check_int(value, name)
        return int(v)
    try:
        d = pd.Timestamp(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a date like the times, got {describe(value)}") from None
    if d != d.normalize():
        raise ValueError(f"{name} must be a whole day, got {d}")
    return int((np.datetime64(d.date(), "D") - origin).astype(np.int64))


def _chord_coordinates(latlong: np.ndarray) -> np.ndarray:
    """SaTScan's conversion of (latitude, longitude) in degrees to 3-D points on a sphere of radius 6367 km;
    distances between them are chords, increasing with the great-circle distance."""
    lat = np.radians(latlong[:, 0])
    lon = np.radians(latlong[:, 1])
    return EARTH_RADIUS_KM * np.column_stack([np.cos(lon) * np.cos(lat), np.sin(lon) * np.cos(lat), np.sin(lat)])


# ---------------------------------------------------------------------------------------- design
@dataclasses.dataclass
class _Design:
    n_locations: int
    n_days: int
    loc_of_case: np.ndarray   # (C,) int64 location of each case
    day_of_case: np.ndarray   # (C,) int64 day index (0 = study start) of each case
    cz: np.ndarray            # (L,) int64 cases per location
    cd_window: np.ndarray     # (W,) float64 cases in each temporal window
    nbr_ptr: np.ndarray       # (L + 1,) int64
    nbr_idx: np.ndarray       # (E,) int64 location indices, nearest first
    nbr_dist: np.ndarray      # (E,) float64 distance from the centre (chord for great circle)
    evaluate: np.ndarray      # (E,) int8 window complete after this entry
    win_start: np.ndarray     # (W,) int64
    win_end: np.ndarray       # (W,) int64
    total: int
    min_cases: int

    @functools.cached_property
    def log_cd_window(self) -> np.ndarray:
        """log C_D of each temporal window (-inf for a window without cases: never a cluster)."""
        with np.errstate(divide="ignore"):
            return np.log(self.cd_window)

    @functools.cached_property
    def klogk(self) -> np.ndarray:
        """k log k for k = 0..C (0 log 0 = 0)."""
        k = np.arange(self.total + 1, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(k > 0, k * np.log(k), 0.0)

    def counts_prefix(self, day_of_case: np.ndarray) -> np.ndarray:
        counts = np.zeros((self.n_locations, self.n_days + 1), dtype=np.int64)
        np.add.at(counts, (self.loc_of_case, day_of_case + 1), 1)
        return np.cumsum(counts, axis=1)


def _neighbours(points: np.ndarray, cz: np.ndarray, max_dist: float, max_cases: float):
    """Each location's neighbours nearest first, cut at the distance and case limits; equidistant
    locations enter together (a circle cannot separate them)."""
    L = len(points)
    ptr = [0]
    idx, dist, ev = [], [], []
    lim = math.floor(max_cases + 1e-9)
    for i in range(L):
        d = np.sqrt(((points - points[i]) ** 2).sum(axis=1))
        order = np.argsort(d, kind="stable")
        d_sorted = d[order]
        keep = d_sorted <= max_dist * (1 + 1e-12)
        order, d_sorted = order[keep], d_sorted[keep]
        # tie groups: a window ends only after the last member of a group
        last_of_group = np.r_[d_sorted[1:] != d_sorted[:-1], True]
        cum = np.cumsum(cz[order])
        group_end_cum = cum[last_of_group]
        ok_groups = group_end_cum <= lim
        n_groups = int(np.argmin(ok_groups)) if not ok_groups.all() else len(ok_groups)
        n_keep = int(np.flatnonzero(last_of_group)[n_groups - 1] + 1) if n_groups else 0
        idx.append(order[:n_keep])
        dist.append(d_sorted[:n_keep])
        ev.append(last_of_group[:n_keep].astype(np.int8))
        ptr.append(ptr[-1] + n_keep)
    return (np.asarray(ptr, dtype=np.int64), np.concatenate(idx).astype(np.int64),
            np.concatenate(dist), np.concatenate(ev))


def _temporal_windows(n_days: int, min_len: int, max_len: int, prospective: bool):
    starts, ends = [], []
    for e in range(n_days):
        if prospective and e != n_days - 1:
            continue
        for length in range(min_len, max_len + 1):
            s = e - length + 1
            if s < 0:
                break
            starts.append(s)
            ends.append(e)
    return np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64)


# ---------------------------------------------------------------------------------------- result
@dataclasses.dataclass
class SpaceTimeScanResult:
    """Result of :func:`space_time_permutation`.

    Attributes
    ----------
    clusters : pandas.DataFrame
        Most likely cluster first, then secondary clusters without geographical overlap, one row
        each: ``center`` (id of the centre location), ``x``, ``y`` (its coordinates; latitude and
        longitude for ``distance="great_circle"``), ``radius`` (distance to the farthest location
        in the circle: km for great circle, coordinate units otherwise), ``location_ids`` (nearest
        first), ``n_locations``, ``start``, ``end`` (first and last day of the cylinder, dates when
        the times were dates), ``days``, ``cases`` (observed), ``expected``,
        ``observed_over_expected``, ``log_likelihood_ratio``, ``p_value`` (Monte Carlo rank
        p-value, (1 + #replicates with a maximum >= LLR) / (R + 1)) and, for prospective analyses,
        ``recurrence_interval_days`` (1 / p days, SaTScan's recurrence interval for daily analyses).
    null_llr : numpy.ndarray
        (n_replicates,) maximum LLR of each permutation replicate.
    backend : str
    n_cases, n_locations, n_days, n_windows : int
        Cases, locations, days of the study period and cylinders per replicate.
    settings : dict
        The options used.
    """

    clusters: pd.DataFrame
    null_llr: np.ndarray
    backend: str
    n_cases: int
    n_locations: int
    n_days: int
    n_windows: int
    settings: dict
    _loc_xy: np.ndarray = dataclasses.field(default=None, repr=False)
    _loc_cases: np.ndarray = dataclasses.field(default=None, repr=False)
    _day_cases: np.ndarray = dataclasses.field(default=None, repr=False)
    _loc_ids: list = dataclasses.field(default=None, repr=False)
    _days: list = dataclasses.field(default=None, repr=False)

    @property
    def most_likely(self):
        return self.clusters.iloc[0] if len(self.clusters) else None

    def to_frame(self, iso_dates: bool = False) -> pd.DataFrame:
        """The cluster table (a copy); ``iso_dates=True`` writes ``start``/``end`` as 'YYYY-MM-DD' strings."""
        df = self.clusters.copy()
        if iso_dates:
            for col in ("start", "end"):
                df[col] = df[col].astype(str)
        return df

    def to_csv(self, path, **kwargs) -> None:
        df = self.clusters.copy()
        df["location_ids"] = [" ".join(str(v) for v in ids) for ids in df["location_ids"]]
        df.to_csv(path, index=False, **kwargs)

    def to_dict(self) -> dict:
        df = self.clusters.copy()
        for col in ("start", "end"):
            df[col] = df[col].astype(str)
        return {"clusters": df.to_dict(orient="records"), "null_llr": self.null_llr.tolist(),
                "backend": self.backend, "n_cases": self.n_cases, "n_locations": self.n_locations,
                "n_days": self.n_days, "settings": self.settings}

    def summary(self) -> str:
        s = self.settings
        lines = [f"Space-time permutation scan ({'prospective' if s['prospective'] else 'retrospective'}), "
                 f"backend={self.backend}",
                 f"  {self.n_cases} cases at {self.n_locations} locations over {self.n_days} days; "
                 f"{self.n_windows} cylinders; {s['n_replicates']} replicates"]
        for k, row in self.clusters.iterrows():
            ids = ", ".join(str(v) for v in row.location_ids[:12]) + (" ..." if row.n_locations > 12 else "")
            lines.append(f"{k + 1}. locations {ids}; {row.start} to {row.end}; radius {row.radius:.4g}; "
                         f"observed {row.cases}, expected {row.expected:.2f} (O/E {row.observed_over_expected:.3g}); "
                         f"LLR {row.log_likelihood_ratio:.6f}; p {row.p_value:.4g}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        top = self.most_likely
        best = "no cluster" if top is None else (
            f"most likely: {top.n_locations} locations, {top.days} days, LLR={top.log_likelihood_ratio:.4f}, "
            f"p={top.p_value:.4g}")
        return f"SpaceTimeScanResult(backend={self.backend!r}, clusters={len(self.clusters)}, {best})"


# ------------------------------------------------------------------------------------ entry point
def space_time_permutation(coords, cases, times, *, location_ids=None, distance="euclidean",
                           max_distance=None, max_spatial_fraction=0.5, max_temporal_days=None,
                           max_temporal_fraction=0.5, min_temporal_days=1, prospective=False,
                           study_start=None, study_end=None, min_cases=2, n_replicates=999,
                           backend="auto", threads=None, seed=None, executor=None, progress=True):
    """Space-time permutation scan statistic (SaTScan's space-time permutation model).

    Parameters
    ----------
    coords : array_like of shape (n_records, 2)
        Coordinates of each record's location: planar (x, y) for ``distance="euclidean"``, or
        (latitude, longitude) in degrees for ``distance="great_circle"`` (SaTScan's .geo order).
        Records at the same location must share the same coordinates.
    cases : array_like of shape (n_records,)
        Non-negative whole case counts of each record.
    times : array_like of shape (n_records,)
        Day of each record: dates (datetime64, pandas Timestamps, ISO strings) or whole day numbers.
    location_ids : array_like of shape (n_records,), optional
        Location identifier of each record (default: records are grouped by identical coordinates
        and locations numbered in order of first appearance).
    distance : {"euclidean", "great_circle"}
        Great-circle distances in km on SaTScan's sphere of radius 6367 km.
    max_distance : float, optional
        Largest circle radius (km for great circle, coordinate units otherwise); default no limit.
    max_spatial_fraction : float in (0, 0.5]
        Largest circle as a fraction of all cases (SaTScan's "% of population at risk", which is
        the cases for this model).
    max_temporal_days, max_temporal_fraction : int or float
        Longest cylinder in days, or (if ``max_temporal_days`` is None) as a fraction of the study
        period (SaTScan's default 50 %).
    min_temporal_days : int
        Shortest cylinder in days.
    prospective : bool
        Only cylinders that end on the last day of the study period (prospective surveillance).
    study_start, study_end : date or int, optional
        Study period (default: first and last case day); cases outside it are an error.
    min_cases : int
        Fewest observed cases for a cylinder to count as a cluster (SaTScan's
        "minimum number of cases in high-rate clusters", default 2).
    n_replicates : int
        Monte Carlo permutations (999 as SaTScan; 0 for no p-values).
    backend, threads, seed, executor, progress
        As everywhere in hphawkes_py: batches of replicates run on ``executor`` (process pools
        need ``backend="cpu"``), each from its own seed, so the null distribution does not depend
        on the executor.

    Returns
    -------
    SpaceTimeScanResult
    """
    check_in(distance, "distance", ("euclidean", "great_circle"))
    if not isinstance(prospective, (bool, np.bool_)):
        raise TypeError(f"prospective must be True or False, got {describe(prospective)}")
    if not isinstance(progress, (bool, np.bool_)):
        raise TypeError(f"progress must be True or False, got {describe(progress)}")
    n_replicates = check_int(n_replicates, "n_replicates", minimum=0, maximum=10**7)
    min_cases = check_int(min_cases, "min_cases", minimum=1)
    min_temporal_days = check_int(min_temporal_days, "min_temporal_days", minimum=1)
    frac = check_positive(max_spatial_fraction, "max_spatial_fraction")
    if frac > 0.5:
        raise ValueError(f"max_spatial_fraction must be in (0, 0.5], got {max_spatial_fraction!r}")
    if max_distance is not None:
        max_distance = check_positive(max_distance, "max_distance")
    resolved = resolve_backend(backend)

    xy = as_float_array(coords, "coords", ndim=2)
    if xy.shape[1] != 2:
        raise ValueError(f"coords must have 2 columns, got shape {xy.shape}")
    n = len(xy)
    if n == 0:
        raise ValueError("coords holds no records")
    if distance == "great_circle":
        if np.any(np.abs(xy[:, 0]) > 90) or np.any(np.abs(xy[:, 1]) > 180):
            bad = int(np.flatnonzero((np.abs(xy[:, 0]) > 90) | (np.abs(xy[:, 1]) > 180))[0])
            raise ValueError(f"coords must be (latitude, longitude) in degrees for great-circle distances; "
                             f"record {bad} is {tuple(xy[bad])}")
    cnt = as_float_array(cases, "cases", ndim=1)
    if len(cnt) != n:
        raise ValueError(f"cases has {len(cnt)} entries but coords has {n} records")
    if np.any(cnt < 0) or np.any(cnt != np.round(cnt)):
        bad = int(np.flatnonzero((cnt < 0) | (cnt != np.round(cnt)))[0])
        raise ValueError(f"cases must be non-negative whole counts; record {bad} is {cnt[bad]!r}")
    cnt = cnt.astype(np.int64)
    days, origin = _as_days(times, n)

    # locations: by id, or by identical coordinates
    if location_ids is not None:
        ids_arr = np.asarray(location_ids)
        if ids_arr.shape != (n,):
            raise ValueError(f"location_ids must have one entry per record ({n}), got shape {ids_arr.shape}")
        uniq, first, loc = np.unique(ids_arr, return_index=True, return_inverse=True)
        loc = loc.reshape(-1)
        if np.any(np.abs(xy - xy[first][loc]).max(axis=1) > 0):
            bad = int(np.flatnonzero(np.abs(xy - xy[first][loc]).max(axis=1) > 0)[0])
            raise ValueError(f"location {ids_arr[bad]!r} has two different coordinates "
                             f"({tuple(xy[first][loc][bad])} and {tuple(xy[bad])}, record {bad})")
        # locations numbered in order of first appearance (SaTScan breaks ties by that order)
        rank = np.empty(len(first), dtype=np.int64)
        rank[np.argsort(first, kind="stable")] = np.arange(len(first))
        loc = rank[loc]
        loc_ids = uniq[np.argsort(first, kind="stable")].tolist()  # plain Python ids (numpy scalars do not cross to R)
        first = np.sort(first)
    else:
        _, first, loc = np.unique(xy, axis=0, return_index=True, return_inverse=True)
        loc = loc.reshape(-1)
        # number locations by first appearance, not by sorted coordinates
        rank = np.empty(len(first), dtype=np.int64)
        rank[np.argsort(first, kind="stable")] = np.arange(len(first))
        loc = rank[loc]
        first = np.sort(first)
        loc_ids = list(range(len(first)))
    loc_xy = xy[first]

    with_cases = days[cnt > 0] if np.any(cnt > 0) else days
    start = int(with_cases.min()) if study_start is None else _day(study_start, "study_start", origin)
    end = int(with_cases.max()) if study_end is None else _day(study_end, "study_end", origin)
    if end < start:
        raise ValueError(f"study_end ({study_end}) is before study_start ({study_start})")
    outside = (days < start) | (days > end)
    if np.any(outside & (cnt > 0)):
        bad = int(np.flatnonzero(outside & (cnt > 0))[0])
        raise ValueError(f"record {bad} (day {times[bad] if hasattr(times, '__getitem__') else days[bad]}) "
                         f"lies outside the study period")
    n_days = end - start + 1
    if max_temporal_days is not None:
        max_len = check_int(max_temporal_days, "max_temporal_days", minimum=1)
    else:
        f = check_positive(max_temporal_fraction, "max_temporal_fraction")
        if f > 0.9:
            raise ValueError(f"max_temporal_fraction must be in (0, 0.9], got {max_temporal_fraction!r}")
        max_len = max(1, int(math.floor(f * n_days + 1e-9)))
    max_len = min(max_len, n_days)
    if min_temporal_days > max_len:
        raise ValueError(f"min_temporal_days ({min_temporal_days}) exceeds the longest cylinder ({max_len} days)")

    C = int(cnt.sum())
    if C < 2:
        raise ValueError(f"the space-time permutation scan needs at least 2 cases, got {C}")
    loc_of_case = np.repeat(loc.astype(np.int64), cnt)
    day_of_case = np.repeat(days - start, cnt).astype(np.int64)
    L = len(loc_xy)
    cz = np.bincount(loc_of_case, minlength=L).astype(np.int64)
    cd = np.bincount(day_of_case, minlength=n_days).astype(np.int64)
    cd_cum = np.r_[0, np.cumsum(cd)]
    win_start, win_end = _temporal_windows(n_days, min_temporal_days, max_len, bool(prospective))
    cd_window = (cd_cum[win_end + 1] - cd_cum[win_start]).astype(np.float64)

    points = _chord_coordinates(loc_xy) if distance == "great_circle" else loc_xy
    if max_distance is None:
        dmax = np.inf
    elif distance == "great_circle":
        dmax = 2 * EARTH_RADIUS_KM * math.sin(min(max_distance / (2 * EARTH_RADIUS_KM), math.pi / 2))
    else:
        dmax = max_distance
    ptr, idx, dist, ev = _neighbours(points, cz, dmax, frac * C)
    design = _Design(L, n_days, loc_of_case, day_of_case, cz, cd_window, ptr, idx, dist, ev,
                     win_start, win_end, C, min_cases)
    n_windows = int(ev.sum()) * len(win_start)

    engine = _make_engine(design, resolved)
    sizes = [min(_BATCH, n_replicates - b0) for b0 in range(0, n_replicates, _BATCH)]
    seeds = spawn_seeds(seed, len(sizes))  # one stream per batch: the same null on any executor
    with threads_context(threads):
        llr, size, window = engine.best_per_centre(design.counts_prefix(day_of_case))
        parts = run_replicates(_null_batch, sizes, seeds=seeds, executor=executor, progress=bool(progress),
                               desc="Space-time permutations", args=(engine,))
    null = np.concatenate(parts) if parts else np.zeros(0)

    clusters = _cluster_table(design, llr, size, window, loc_ids, loc_xy, points, distance, start, origin,
                              null, bool(prospective))
    settings = dict(distance=distance, max_distance=max_distance, max_spatial_fraction=frac,
                    max_temporal_days=max_len, min_temporal_days=min_temporal_days,
                    prospective=bool(prospective), min_cases=min_cases, n_replicates=n_replicates,
                    study_start=str(_date(start, origin)), study_end=str(_date(end, origin)))
    return SpaceTimeScanResult(clusters, null, resolved, C, L, n_days, n_windows, settings, _loc_xy=loc_xy,
                               _loc_cases=cz, _day_cases=cd, _loc_ids=loc_ids,
                               _days=[_date(start + k, origin) for k in range(n_days)])


def _null_batch(size, seed_sequence, engine):
    """Maximum LLR of ``size`` replicates, each permuting the case dates with its batch's stream."""
    rng = np.random.default_rng(seed_sequence)
    days = engine.d.day_of_case
    perm = np.stack([rng.permutation(days) for _ in range(size)])
    return engine.null_maxima(perm)


def _date(day: int, origin):
    return day if origin is None else (origin + np.timedelta64(int(day), "D")).astype("datetime64[D]").item()


def _make_engine(design, resolved: str):
    """Space-time engine on an already resolved backend; the GPU engine receives its device here."""
    if is_gpu_backend(resolved):
        from .stp_gpu import GpuEngine

        return GpuEngine(design, device=get_device(resolved), backend=resolved)
    from .stp_cpu import CpuEngine

    return CpuEngine(design)


def _satscan_order(llr, size, radius):
    """Centres by SaTScan's ranking of clusters: LLR descending; LLRs within 1e-9 of each other
    (SaTScan's DBL_CMP_TOLERANCE) prefer fewer locations, then the smaller radius, then the
    lesser centre index (input order)."""
    def cmp(a, b):
        if abs(llr[a] - llr[b]) < 1e-9:
            for key in (size, radius):
                if key[a] != key[b]:
                    return -1 if key[a] < key[b] else 1
            return -1 if a < b else (1 if a > b else 0)
        return -1 if llr[a] > llr[b] else 1

    cand = [int(i) for i in np.flatnonzero(llr > 0)]
    return sorted(cand, key=functools.cmp_to_key(cmp))


def _cluster_table(d: _Design, llr, size, window, loc_ids, loc_xy, points, distance, start, origin, null,
                   prospective) -> pd.DataFrame:
    """SaTScan's reporting: the best cylinder of every centre in SaTScan's ranking, each kept only if
    it shares no location with a more likely kept one; as in SaTScan's report, secondary clusters
    that no replicate falls below (Monte Carlo p = 1) are not listed."""
    radius_all = np.array([d.nbr_dist[d.nbr_ptr[i] + size[i] - 1] if size[i] > 0 else 0.0
                           for i in range(len(llr))])
    taken = np.zeros(d.n_locations, dtype=bool)
    rows = []
    R = len(null)
    for i in _satscan_order(llr, size, radius_all):
        members = d.nbr_idx[d.nbr_ptr[i]:d.nbr_ptr[i] + size[i]]
        if taken[members].any():
            continue
        exceed = int(np.sum(null >= llr[i] * (1 - 1e-12)))
        if rows and R and exceed == R:
            continue
        taken[members] = True
        w = window[i]
        s, e = int(d.win_start[w]), int(d.win_end[w])
        c = int((np.isin(d.loc_of_case, members) & (d.day_of_case >= s) & (d.day_of_case <= e)).sum())
        mu = d.cz[members].sum() * d.cd_window[w] / d.total
        radius = float(radius_all[i])
        if distance == "great_circle":
            radius = 2 * EARTH_RADIUS_KM * math.asin(min(1.0, radius / (2 * EARTH_RADIUS_KM)))
        p = (1 + exceed) / (R + 1) if R else np.nan
        row = dict(center=loc_ids[i], x=float(loc_xy[i, 0]), y=float(loc_xy[i, 1]), radius=radius,
                   location_ids=[loc_ids[m] for m in members], n_locations=int(size[i]),
                   start=_date(start + s, origin), end=_date(start + e, origin), days=e - s + 1,
                   cases=c, expected=float(mu), observed_over_expected=c / mu,
                   log_likelihood_ratio=float(llr[i]), p_value=p)
        if prospective:
            row["recurrence_interval_days"] = 1.0 / p if R else np.nan
        rows.append(row)
    cols = ["center", "x", "y", "radius", "location_ids", "n_locations", "start", "end", "days", "cases",
            "expected", "observed_over_expected", "log_likelihood_ratio", "p_value"]
    if prospective:
        cols.append("recurrence_interval_days")
    return pd.DataFrame(rows, columns=cols)


# ------------------------------------------------------------------------------------------ files
def read_satscan_spacetime(case_file, geo_file) -> pd.DataFrame:
    """Read SaTScan's space-time case file (``<id> <cases> <date>``) and coordinates file (``<id> <a> <b>``).

    Returns a DataFrame with one row per case record: ``location_id``, ``cases``, ``date``
    (datetime64[ns]; SaTScan's ``YYYY/MM/DD``), ``a``, ``b`` (the .geo coordinates: latitude and
    longitude, or x and y). It starts with one row with 0 cases (dated on the first case date) for
    every location of the coordinates file, in the file's order, so that, as in SaTScan, circles
    are centred on every location and ties are broken by that order. Errors name the file, line
    and field.
    """
    geo = {}
    for lineno, parts in _lines(geo_file, 3):
        try:
            a, b = float(parts[1]), float(parts[2])
        except ValueError:
            raise ValueError(f"{geo_file}:{lineno}: coordinates {parts[1]!r} {parts[2]!r} are not numbers") from None
        if not (math.isfinite(a) and math.isfinite(b)):
            raise ValueError(f"{geo_file}:{lineno}: coordinates must be finite, got {parts[1]} {parts[2]}")
        if parts[0] in geo and geo[parts[0]] != (a, b):
            raise ValueError(f"{geo_file}:{lineno}: location {parts[0]!r} appears twice with different coordinates")
        geo[parts[0]] = (a, b)
    rows = []
    for lineno, parts in _lines(case_file, 3):
        lid = parts[0]
        if lid not in geo:
            raise ValueError(f"{case_file}:{lineno}: location {lid!r} is not in the coordinates file {geo_file}")
        try:
            c = float(parts[1])
        except ValueError:
            raise ValueError(f"{case_file}:{lineno}: case count {parts[1]!r} is not a number") from None
        if not math.isfinite(c) or c < 0 or c != round(c):
            raise ValueError(f"{case_file}:{lineno}: case count must be a non-negative whole number, got {parts[1]!r}")
        try:
            date = pd.Timestamp(parts[2].replace("/", "-"))
        except ValueError:
            raise ValueError(f"{case_file}:{lineno}: date {parts[2]!r} is not a date (YYYY/MM/DD)") from None
        rows.append((lid, int(c), date, *geo[lid]))
    # SaTScan scans circles around every location of the coordinates file, with or without cases,
    # and breaks ties by the file's order: one 0-case row per location first, in that order
    first = min(r[2] for r in rows)
    rows = [(lid, 0, first, *ab) for lid, ab in geo.items()] + rows
    return pd.DataFrame(rows, columns=["location_id", "cases", "date", "a", "b"])


def _lines(path, min_cols: int):
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"file not found: {p}")
    out = []
    with open(p, encoding="utf-8", errors="replace", newline=None) as fh:
        for lineno, line in enumerate(fh, 1):
            parts = line.strip().split()
            if not parts or parts[0].startswith(("#", "//")):
                continue
            if len(parts) < min_cols:
                raise ValueError(f"{p}:{lineno}: needs at least {min_cols} fields, got {line.strip()!r}")
            out.append((lineno, parts))
    if not out:
        raise ValueError(f"{p} holds no records")
    return out
