"""Kulldorff's purely spatial Bernoulli scan statistic, written once against an engine.

The algorithm (Kulldorff 1997; SaTScan's purely spatial Bernoulli analysis; Larew et al.
2010 for the GPU formulation):

1. locations with identical coordinates are merged (counts summed);
2. circular windows are centred on every location (or on the points of a regular grid,
   ``grid_cell``) and grown through the nearest neighbours until the window population
   (cases + controls) would exceed ``max_population`` x the total; locations at the same
   distance enter together;
3. each window gets the Bernoulli log likelihood ratio (zero unless its case proportion
   is higher -- or lower, or either -- than outside);
4. the most likely cluster is the window with the largest LLR; secondary clusters are the
   best windows of the other centres that share no location with a more likely reported
   cluster (SaTScan's default "no geographical overlap");
5. Monte Carlo inference: ``n_replicates`` random relabellings of the C cases among the N
   persons (per location a multivariate hypergeometric draw), the maximum LLR of each,
   p = (1 + #{null >= observed}) / (1 + n_replicates), and SaTScan's Gumbel approximation.
"""
from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Any

import numpy as np
import pandas as pd

from .._backend import is_gpu_backend, resolve_backend, threads_context
from .._parallel import run_replicates, spawn_seeds
from .._validate import (as_count_array, as_float_array, check_bool, check_in, check_int, check_positive,
                         check_probability, check_seed, check_threads)
from .engine import (DIRECTIONS, build_windows, cumulative_expected, draw_multinomial_cases, draw_null_cases,
                     klogk_table, make_engine)

__all__ = ["bernoulli", "poisson", "ScanResult", "merge_rows", "Geometry", "EARTH_RADIUS_KM", "prepare_locations", "make_centres", "gumbel_p_values",
           "replicate_seed_batches", "draw_null_cases", "EULER_GAMMA"]

EULER_GAMMA = 0.5772156649015329
#: replicates per Monte Carlo batch (a fixed size: the per-replicate seeds make results
#: independent of it anyway, it only sets the granularity of executor jobs)
BATCH_SIZE = 256
#: largest Monte Carlo batch on a GPU engine (see _replicate_batch)
GPU_BATCH_SIZE = 2048
#: memory for the case counts and per-centre maxima of one Monte Carlo batch on the CPU engine when
#: the batches run here, one after the other (see _replicate_batch)
CPU_BATCH_BYTES = 1 << 26
#: refuse grids with more centres than this (grid_cell too small for the extent)
MAX_GRID_CENTRES = 4_000_000
#: refuse more Monte Carlo replicates than this (SaTScan's own limit is 999,999; the null
#: maxima alone take 8 bytes each and every replicate evaluates every window)
MAX_REPLICATES = 10**8


# --------------------------------------------------------------------------- input
@dataclasses.dataclass(frozen=True)
class Locations:
    """Locations after merging identical coordinates.

    ``coords`` (L, 2), ``cases``/``controls``/``pop`` (L,) int64, ``members``: list of the
    input row positions merged into each location, ``n_merged``: input rows absorbed.
    """

    coords: np.ndarray
    cases: np.ndarray
    controls: np.ndarray
    members: list
    n_merged: int

    @property
    def pop(self) -> np.ndarray:
        return self.cases + self.controls


def _check_coords(coords: Any) -> np.ndarray:
    """(n, 2) finite float64 coordinates (a copy); booleans and complex numbers are refused."""
    kind = coords.dtype.kind if isinstance(coords, np.ndarray) else np.asarray(coords).dtype.kind
    if kind in "bc":
        what = "booleans" if kind == "b" else "complex numbers"
        raise TypeError(f"coords must hold real numbers (planar coordinates), got {what}")
    if not isinstance(coords, np.ndarray) or kind == "O":
        # nested lists: NumPy would read True as 1
        try:
            flat = np.asarray(coords, dtype=object).ravel()
        except (TypeError, ValueError):
            flat = ()
        bad = next((v for v in flat if isinstance(v, (bool, np.bool_, complex, np.complexfloating))), None)
        if bad is not None:
            raise TypeError(f"coords must hold real numbers (planar coordinates), got {bad!r}")
    return as_float_array(coords, "coords", ndim=2, finite=True, copy=True)


def check_location_ids(location_ids: Any, n: int, repeats: bool = False) -> np.ndarray:
    """Ids reported for the input rows: default 0..n-1; one per row, no duplicates (unless
    ``repeats``: rows of one location, e.g. its covariate categories, share its id)."""
    if location_ids is None:
        return np.arange(n)
    ids = np.array(location_ids)
    if ids.ndim != 1 or len(ids) != n:
        raise ValueError(f"location_ids must be 1-D with one id per row ({n}), got shape {ids.shape}")
    if repeats:
        return ids
    uniq, first, counts = np.unique(ids, return_index=True, return_counts=True)
    if (counts > 1).any():
        k = int(np.argmax(counts > 1))
        rows = np.flatnonzero(ids == uniq[k])[:2].tolist()
        dup = uniq[k].item() if hasattr(uniq[k], "item") else uniq[k]
        raise ValueError(f"location_ids must be unique: {dup!r} is given for rows {rows[0]} and {rows[1]}")
    return ids


def merge_rows(xy: np.ndarray):
    """Rows with identical coordinates merged, first occurrence order kept.

    Returns ``(coords (L, 2), gid (n,) location of every input row, members: list of the input
    rows of each location)``."""
    _, first, inverse = np.unique(xy, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    order_groups = np.argsort(first, kind="stable")  # group g (in unique order) -> position
    rank = np.empty_like(order_groups)
    rank[order_groups] = np.arange(len(order_groups))
    gid = rank[inverse]  # group position of every input row, in first-occurrence order
    members: list = [[] for _ in range(len(first))]
    for row, g in enumerate(gid.tolist()):
        members[g].append(row)
    return xy[np.sort(first)], gid, members


def _check_xy(coords) -> np.ndarray:
    xy = _check_coords(coords)
    if xy.shape[1] != 2:
        raise ValueError(f"coords must have shape (n, 2) (x, y columns), got {xy.shape}")
    if xy.shape[0] < 1:
        raise ValueError("coords is empty: need at least one location")
    return xy


def prepare_locations(coords: Any, cases: Any, controls: Any) -> Locations:
    """Validate the input and merge rows with identical coordinates (counts summed)."""
    xy = _check_xy(coords)
    ca = as_count_array(cases, "cases")
    co = as_count_array(controls, "controls")
    n = xy.shape[0]
    if ca.shape[0] != n or co.shape[0] != n:
        raise ValueError(
            f"coords, cases and controls must have the same length; got {n}, {ca.shape[0]}, {co.shape[0]}"
        )
    C = int(ca.sum())
    N = C + int(co.sum())
    if C == 0:
        raise ValueError("cases sum to 0: the scan statistic needs at least one case")
    if C == N:
        raise ValueError("all persons are cases (controls sum to 0): the Bernoulli scan needs controls too")
    if N >= 2**31 - 1:
        raise ValueError(f"total population {N} is too large (must be < 2**31 - 1)")
    m_coords, gid, members = merge_rows(xy)
    L = len(members)
    m_cases = np.bincount(gid, weights=ca, minlength=L).astype(np.int64)
    m_controls = np.bincount(gid, weights=co, minlength=L).astype(np.int64)
    return Locations(m_coords, m_cases, m_controls, members, n - L)


def make_centres(loc_coords: np.ndarray, grid_cell: Any):
    """Circle centres: the locations, or the centres of the cells of a regular grid of
    side ``grid_cell`` covering the locations' bounding box. Returns (centres (m, 2),
    centre_location (m,) index of the location at the centre or -1)."""
    if grid_cell is None:
        return loc_coords.copy(), np.arange(len(loc_coords), dtype=np.int64)
    g = check_positive(grid_cell, "grid_cell")
    lo = loc_coords.min(axis=0)
    hi = loc_coords.max(axis=0)
    nx = max(1, int(math.ceil((hi[0] - lo[0]) / g)))
    ny = max(1, int(math.ceil((hi[1] - lo[1]) / g)))
    if nx * ny > MAX_GRID_CENTRES:
        raise ValueError(
            f"grid_cell={g} gives a {nx} x {ny} grid ({nx * ny} centres) over the locations' extent; "
            f"the limit is {MAX_GRID_CENTRES}: use a larger grid_cell"
        )
    gx = lo[0] + g * (np.arange(nx) + 0.5)
    gy = lo[1] + g * (np.arange(ny) + 0.5)
    X, Y = np.meshgrid(gx, gy, indexing="xy")
    centres = np.column_stack([X.ravel(), Y.ravel()])
    return centres, np.full(len(centres), -1, dtype=np.int64)


# --------------------------------------------------------------------------- distances
#: Earth radius of SaTScan's great-circle distances (km)
EARTH_RADIUS_KM = 6367.0
DISTANCES = ("euclidean", "great_circle")


class Geometry:
    """Distances between locations: planar Euclidean on the coordinates as given, or great-circle
    distances (km) on (latitude, longitude) in degrees, as SaTScan computes them for
    "Latitude/Longitude" coordinates. Windows are built on :meth:`points` (for great-circle
    distances, unit vectors: the order by chord length is the order by great-circle distance)."""

    def __init__(self, distance: str):
        self.great_circle = check_in(distance, "distance", DISTANCES) == "great_circle"

    def check(self, xy: np.ndarray) -> None:
        if self.great_circle:
            lat, lon = xy[:, 0], xy[:, 1]
            if (np.abs(lat) > 90).any():
                i = int(np.argmax(np.abs(lat) > 90))
                raise ValueError(f"distance='great_circle' reads coords as (latitude, longitude) in degrees; "
                                 f"coords[{i}, 0] = {lat[i]!r} is not a latitude in [-90, 90]")
            if (np.abs(lon) > 360).any():
                i = int(np.argmax(np.abs(lon) > 360))
                raise ValueError(f"distance='great_circle': coords[{i}, 1] = {lon[i]!r} is not a longitude in degrees")

    def points(self, xy: np.ndarray) -> np.ndarray:
        if not self.great_circle:
            return xy
        lat, lon = np.radians(xy[:, 0]), np.radians(xy[:, 1])
        return np.column_stack([np.cos(lat) * np.cos(lon), np.cos(lat) * np.sin(lon), np.sin(lat)])

    def to_working(self, distance):
        """A distance (coordinate units, or km) in the units of :meth:`points` (chord length)."""
        if distance is None or not self.great_circle:
            return distance
        return 2.0 * math.sin(min(distance / (2.0 * EARTH_RADIUS_KM), math.pi / 2))

    def from_working(self, w: np.ndarray) -> np.ndarray:
        if not self.great_circle:
            return w
        return 2.0 * EARTH_RADIUS_KM * np.arcsin(np.minimum(np.asarray(w) / 2.0, 1.0))


# --------------------------------------------------------------------------- Monte Carlo
def replicate_seed_batches(seed, n_replicates: int, batch: int = BATCH_SIZE) -> list:
    """One SeedSequence per batch of ``batch`` replicates; ``.spawn(size)`` of the batch
    starting at replicate ``s`` gives the seeds of replicates ``s .. s + size - 1``, which are
    the children ``s ..`` of the root seed (``spawn_seeds(seed, n_replicates)``), whatever the
    batching or the executor. Only the batch seeds are created here (not ``n_replicates`` seeds)."""
    first = spawn_seeds(seed, 1)[0]  # replicate 0: carries the root's entropy and spawn key
    return [np.random.SeedSequence(first.entropy, spawn_key=first.spawn_key[:-1], pool_size=first.pool_size,
                                   n_children_spawned=start)
            for start in range(0, n_replicates, batch)]


def batch_children(batch_seed, size: int):
    """The seeds of a batch's ``size`` replicates, the children of ``batch_seed``, as the draw
    functions take them: ``(batch_seed, size)`` for a SeedSequence, whose children's seed words
    are then hashed in one kernel (:func:`~.engine.replicate_seed_words`) instead of creating
    ``size`` SeedSequences in Python; else ``batch_seed.spawn(size)``."""
    return (batch_seed, size) if isinstance(batch_seed, np.random.SeedSequence) else batch_seed.spawn(size)


def _check_replicates(n_replicates):
    n = check_int(n_replicates, "n_replicates", minimum=1)
    if n > MAX_REPLICATES:
        raise ValueError(
            f"n_replicates={n} is too many: the null maxima alone would need {8 * n / 2**30:.3g} GiB, and every "
            f"replicate evaluates every window ({n:.3g} x the number of windows log likelihood ratios); "
            f"at most {MAX_REPLICATES:,} (SaTScan allows 999,999)"
        )
    return n


def check_run(min_cases, n_replicates, direction, secondary, progress, threads, seed, backend):
    """The settings every scan entry point shares, checked before any work; the backend is
    resolved here, once per public call. Returns (min_cases, n_replicates, progress, threads, backend)."""
    min_cases = check_int(min_cases, "min_cases", minimum=0)
    n_replicates = _check_replicates(n_replicates)
    check_in(direction, "direction", DIRECTIONS)
    check_in(secondary, "secondary", ("no-overlap",))
    progress = check_bool(progress, "progress")
    threads = check_threads(threads)
    check_seed(seed)
    return min_cases, n_replicates, progress, threads, resolve_backend(backend)


def _monte_carlo(engine, weights, n_cases, n_replicates, seed, executor, progress, penalties=None):
    """(n_replicates,) float64 maxima of the null replicates, in replicate order. The null:
    Bernoulli, the cases relabelled among the persons (``weights``: persons per location);
    Poisson, the cases redistributed multinomially (``weights``: expected cases per location)."""
    batch = _replicate_batch(engine, len(weights), n_replicates, executor)
    starts = list(range(0, n_replicates, batch))
    sizes = [min(batch, n_replicates - s) for s in starts]
    parts = run_replicates(_null_batch, sizes, seeds=replicate_seed_batches(seed, n_replicates, batch),
                           executor=executor, progress=progress, desc="scan Monte Carlo",
                           args=(engine, weights, n_cases, penalties))
    return np.concatenate(parts).astype(np.float64)


def _replicate_batch(engine, n_locations: int, n_replicates: int, executor=None) -> int:
    """Replicates per Monte Carlo batch (the null does not depend on it: replicate seeds are
    batching-invariant).

    CPU engine: BATCH_SIZE when an ``executor`` runs the batches (its jobs); run here, as few
    batches of equal size as keep each within CPU_BATCH_BYTES of int32 case counts and float64
    per-centre maxima (or BATCH_SIZE replicates, when more), since every batch costs a pilot pass,
    rounds of pruned passes (a parallel region each) and their Python steps whatever its size (NY
    leukaemia, 281 locations x 9,999 replicates: one batch instead of 40 of 256). GPU: as many as
    256 MiB allow, at most GPU_BATCH_SIZE, since every batch costs a host-device round trip and a
    launch whose blocks are fuller with more replicates."""
    n_centres = getattr(engine, "n_centres", 0)
    if not is_gpu_backend(getattr(engine, "backend", "cpu")):
        if executor is not None:
            return BATCH_SIZE
        cap = max(BATCH_SIZE, CPU_BATCH_BYTES // max(4 * n_locations + 8 * n_centres, 1))
        n_batches = math.ceil(n_replicates / cap)
        return max(1, math.ceil(n_replicates / n_batches))
    per_replicate = max(4 * n_locations, 16 * n_centres, 1)
    return int(max(BATCH_SIZE, min(GPU_BATCH_SIZE, (1 << 28) // per_replicate)))


def _null_batch(size, batch_seed, engine, weights, n_cases, penalties=None):
    """One Monte Carlo batch of ``size`` replicates (module level so process pools can pickle it).
    With ``penalties`` (one factor per window block, elliptic scans), the maximum of the penalised
    best LLR of every block."""
    draw = draw_multinomial_cases if engine.model == "poisson" else draw_null_cases
    cases = draw(weights, n_cases, batch_children(batch_seed, size))
    if penalties is None:
        return engine.max_llr(cases)
    if hasattr(engine, "max_llr_penalised"):  # CPU: pruned per run of equal penalties
        return engine.max_llr_penalised(cases, penalties)
    best, _ = engine.best_per_centre(cases)
    return (best * penalties[:, None]).max(axis=0) if best.shape[0] else np.zeros(size)


def gumbel_p_values(observed: np.ndarray, null_max: np.ndarray) -> np.ndarray:
    """SaTScan's Gumbel approximation: fit a Gumbel distribution to the null maxima by
    the method of moments (scale = sd sqrt(6) / pi, location = mean - gamma scale) and
    return its upper tail probability at each observed LLR."""
    observed = np.asarray(observed, dtype=np.float64)
    sd = float(np.std(null_max, ddof=1)) if len(null_max) > 1 else 0.0
    if not sd > 0:
        return np.where(observed > float(np.max(null_max)), 0.0, 1.0)
    beta = sd * math.sqrt(6.0) / math.pi
    mu = float(np.mean(null_max)) - EULER_GAMMA * beta
    return -np.expm1(-np.exp(-(observed - mu) / beta))


# --------------------------------------------------------------------------- result
_TITLES = {"bernoulli": "Bernoulli spatial scan", "poisson": "Discrete Poisson spatial scan",
           "space_time_permutation": "Space-time permutation scan",
           "space_time_poisson": "Discrete Poisson space-time scan", "space_time_bernoulli": "Bernoulli space-time scan",
           "declustered": "Declustered Poisson spatial scan (expected background events)"}
_SIZE_OF = {"poisson": "expected cases", "space_time_permutation": "cases", "declustered": "expected cases"}

def _fmt_count(c) -> str:
    """A case count for the summaries: whole counts as integers, expected counts to 2 decimals."""
    return f"{c:.2f}" if isinstance(c, (float, np.floating)) and c != round(c) else f"{int(round(c))}"


@dataclasses.dataclass(frozen=True, repr=False)
class ScanResult:
    """Result of the spatial and space-time scans (:func:`bernoulli`, :func:`poisson`,
    :func:`space_time_permutation`, :func:`space_time`).

    The scan functions build it; its fields are the parameters below.

    Parameters
    ----------
    clusters : pandas.DataFrame
        Most likely cluster first, then the secondary clusters (no geographical overlap),
        one row each: ``center`` (id of the location at the centre, -1 for a grid point),
        ``x``, ``y`` (centre, coordinate units), ``radius`` (distance from the centre to
        the farthest location in the window, coordinate units), ``location_ids`` (list of
        the input location ids in the window, nearest first; merged duplicates all listed),
        ``n_locations``, ``cases``, ``population`` (Bernoulli: cases + controls, persons;
        Poisson: the population given), ``expected`` (Bernoulli: population x C / N; Poisson: the
        expected cases under the null), ``observed_over_expected``, ``relative_risk`` (Bernoulli:
        case proportion inside / outside; Poisson: (c / E) / ((C - c) / (C - E))),
        ``log_likelihood_ratio``, ``p_value`` (Monte Carlo, against the null maxima) and
        ``gumbel_p_value``.
    null_llr : numpy.ndarray
        (n_replicates,) maximum LLR of each Monte Carlo replicate.
    backend : str
        Engine that ran ("cpu", "gpu" or "emulator").
    n_cases, n_population : int
        Totals C and N (``model="declustered"``: ``n_cases`` is the expected number of background
        events, a float, and ``clusters.cases`` the windows' expected background counts; see
        :func:`hphawkes_py.scan.declustered`).
    n_locations : int
        Locations after merging identical coordinates.
    n_merged : int
        Input rows merged into another row with identical coordinates.
    n_centres, n_windows : int
        Circle centres scanned, and windows evaluated per replicate.
    max_population, direction, n_replicates, grid_cell, model, max_distance, min_cases, distance
        The settings used (``model``: "bernoulli" or "poisson"; radii and ``max_distance`` in km
        when ``distance="great_circle"``).
    _loc_coords, _loc_cases, _loc_controls, _loc_population, _loc_expected, _row_ids, _row_loc : numpy.ndarray, optional
        Per-location data behind :meth:`location_table` and :meth:`plot` (merged locations:
        coordinates, cases, controls, population, expected cases; the input rows' ids and
        locations). Set by the scan functions.

    Examples
    --------
    >>> g = hp.datasets.load_grave()
    >>> res = hp.scan.bernoulli(g[["x", "y"]].to_numpy(), g["case"], 1 - g["case"], n_replicates=99,
    ...                         seed=1, backend="cpu", progress=False)
    >>> res
    ScanResult(model='bernoulli', backend='cpu', clusters=2, n_replicates=99, most likely: 19 locations, LLR=7.4193, p=0.07)
    >>> print(res.n_cases, res.n_population, res.n_locations, len(res.null_llr))
    30 143 143 99
    >>> res.location_table()[["cluster", "location_id", "cases"]].head(2)
       cluster  location_id  cases
    0        1          125      0
    1        1          123      0
    """

    clusters: pd.DataFrame
    null_llr: np.ndarray
    backend: str
    n_cases: int
    n_population: int
    n_locations: int
    n_merged: int
    n_centres: int
    n_windows: int
    max_population: float
    direction: str
    n_replicates: int
    grid_cell: Any = None
    model: str = "bernoulli"
    max_distance: Any = None
    min_cases: int = 0
    distance: str = "euclidean"
    _loc_coords: np.ndarray = dataclasses.field(default=None, repr=False)
    _loc_cases: np.ndarray = dataclasses.field(default=None, repr=False)
    _loc_controls: np.ndarray = dataclasses.field(default=None, repr=False)
    _loc_population: np.ndarray = dataclasses.field(default=None, repr=False)
    _loc_expected: np.ndarray = dataclasses.field(default=None, repr=False)
    _row_ids: np.ndarray = dataclasses.field(default=None, repr=False)
    _row_loc: np.ndarray = dataclasses.field(default=None, repr=False)

    @property
    def most_likely(self) -> pd.Series | None:
        """The most likely cluster (first row of ``clusters``), or None when no window has LLR > 0."""
        return self.clusters.iloc[0] if len(self.clusters) else None

    def to_frame(self) -> pd.DataFrame:
        """The cluster table (a copy)."""
        return self.clusters.copy()

    def to_dict(self) -> dict:
        return {
            "clusters": self.clusters.to_dict(orient="records"),
            "null_llr": self.null_llr.tolist(),
            "backend": self.backend,
            "n_cases": self.n_cases,
            "n_population": self.n_population,
            "n_locations": self.n_locations,
            "n_merged": self.n_merged,
            "max_population": self.max_population,
            "direction": self.direction,
            "n_replicates": self.n_replicates,
            "model": self.model,
            "max_distance": self.max_distance,
            "min_cases": self.min_cases,
            "distance": self.distance,
        }

    def to_csv(self, path, **kwargs) -> None:
        """Write the cluster table; ``location_ids`` as space-separated ids."""
        df = self.clusters.copy()
        df["location_ids"] = [" ".join(str(v) for v in ids) for ids in df["location_ids"]]
        df.to_csv(path, index=False, **kwargs)

    def summary(self) -> str:
        lines = [
            f"{_TITLES.get(self.model, self.model)} ({self.direction} rates), backend={self.backend}",
            f"  {self.n_locations} locations ({self.n_merged} rows merged), {_fmt_count(self.n_cases)} cases, "
            f"population {self.n_population:.10g}; max window {self.max_population:.0%} of the "
            f"{_SIZE_OF.get(self.model, 'population')}"
            + (f", radius <= {self.max_distance:g}" if self.max_distance is not None else ""),
            f"  {self.n_centres} centres, {self.n_windows} windows, {self.n_replicates} replicates",
        ]
        for k, row in self.clusters.iterrows():
            ids = ", ".join(str(v) for v in row.location_ids[:12]) + (" ..." if row.n_locations > 12 else "")
            when = ""
            if "start" in row.index:
                a, b = (v.date() if hasattr(v, "date") else v for v in (row.start, row.end))
                when = f" days {a} to {b};"
            lines.append(
                f"{k + 1}. locations {ids}\n   centre ({row.x:.6g}, {row.y:.6g}) radius {row.radius:.6g};{when} "
                f"cases {_fmt_count(row.cases)}/{row.population:.10g} (expected {row.expected:.2f}, "
                f"RR {row.relative_risk:.3g}); "
                f"LLR {row.log_likelihood_ratio:.6f}; p {row.p_value:.4g} (Gumbel {row.gumbel_p_value:.3g})"
            )
        return "\n".join(lines)

    def __repr__(self) -> str:
        top = self.most_likely
        best = "no cluster" if top is None else (
            f"most likely: {top.n_locations} locations, LLR={top.log_likelihood_ratio:.4f}, p={top.p_value:.4g}"
        )
        return (f"ScanResult(model={self.model!r}, backend={self.backend!r}, clusters={len(self.clusters)}, "
                f"n_replicates={self.n_replicates}, {best})")

    def location_table(self) -> pd.DataFrame:
        """SaTScan's location information: one row per location of each reported cluster.

        Columns ``cluster`` (rank, 1 = most likely), ``location_id``, ``cases`` and ``expected``
        (the location's own counts over the study period; merged rows with identical coordinates
        count as one location; ``expected`` is NaN for the space-time permutation model, whose
        expectation depends on the cluster's days), ``observed_over_expected``, and the cluster's
        ``cluster_cases``, ``cluster_expected``, ``cluster_log_likelihood_ratio``, ``cluster_p_value``.
        """
        cols = ["cluster", "location_id", "cases", "expected", "observed_over_expected", "cluster_cases",
                "cluster_expected", "cluster_log_likelihood_ratio", "cluster_p_value"]
        if self._row_ids is None:
            raise ValueError("this result carries no location data (built by an older version)")
        first_row = {}
        for r, i in enumerate(self._row_ids.tolist()):
            first_row.setdefault(i, r)
        rows = []
        for k, cl in enumerate(self.clusters.itertuples()):
            for lid in cl.location_ids:
                g = int(self._row_loc[first_row[lid]])
                c = self._loc_cases[g]
                c = int(c) if self._loc_cases.dtype.kind in "iub" else float(c)
                e = float(self._loc_expected[g]) if self._loc_expected is not None else math.nan
                rows.append([k + 1, lid, c, e, c / e if e > 0 else math.nan, cl.cases, cl.expected,
                             cl.log_likelihood_ratio, cl.p_value])
        return pd.DataFrame(rows, columns=cols)

    def plot(self, ax=None, *, max_clusters: int | None = None, alpha: float = 0.05):
        """Clusters as circles over the locations: :func:`hphawkes_py.scan.plot.plot_clusters`."""
        from .plot import plot_clusters

        return plot_clusters(self, ax, max_clusters=max_clusters, alpha=alpha)


# --------------------------------------------------------------------------- main
def _check_geometry(distance, xy, grid_cell) -> Geometry:
    geo = Geometry(distance)
    geo.check(xy)
    if geo.great_circle and grid_cell is not None:
        raise ValueError("grid_cell is not available with distance='great_circle' (a grid of latitude/longitude "
                         "cells is not a regular grid on the sphere): give grid_cell=None")
    return geo


def _radius(geo, points, cpoints):
    """``radius_of(members, i)``: distance from centre ``i`` to its farthest member (reported units)."""
    def radius_of(members, i):
        w = np.sqrt(((points[members] - cpoints[i]) ** 2).sum(axis=1)).max()
        return float(geo.from_working(w))
    return radius_of


PENALTIES = {"none": 0.0, "medium": 0.5, "strong": 1.0}


def ellipse_set(shapes, angles) -> list:
    """SaTScan's elliptic windows: the circle, then for each shape s (major / minor axis) its
    ``angles`` orientations, the multiples of 180 / angles degrees in (-90, 90]."""
    out = [(1.0, 0.0)]
    for sh, k in zip(shapes, angles):
        step = 180.0 / k
        lo = int(math.floor(-90.0 / step)) + 1
        out += [(float(sh), j * step) for j in range(lo, lo + k)]
    return out


def _ellipse_transform(xy: np.ndarray, shape: float, angle: float) -> np.ndarray:
    """Coordinates in which the ellipse (major axis at ``angle`` degrees from the first axis,
    ``shape`` times the minor one) is a circle of radius = its semiminor axis.

    The arithmetic is SaTScan's (``CentroidNeighborCalculator::Transform``: the component along the
    major axis shrunk by the weight 1 / shape, the angle, shape, weight and slope in single
    precision), so that distances compare, and tie, as in SaTScan: the order of equidistant
    locations and the reported axes are SaTScan's to the last bit (checked against its compiled
    function for the shapes and angles of the default elliptic scan)."""
    f32 = np.float32
    # SaTScan's angle: pi * e / k in [0, pi) (ours: (-90, 90] degrees, the same orientations)
    a = f32(math.radians(angle if angle >= 0 else angle + 180.0))
    w = f32(f32(1.0) / f32(shape))
    x, y = xy[:, 0].astype(np.float64), xy[:, 1].astype(np.float64)
    if a == 0:
        return np.column_stack([x * np.float64(w), y])
    beta = f32(-f32(math.cos(float(a))) / f32(math.sin(float(a))))
    b = np.float64(beta)
    xp = (x + b * y) / np.float64(f32(f32(1.0) + f32(beta * beta)))
    yp = b * xp
    omw = np.float64(f32(f32(1.0) - w))
    return np.column_stack([x * np.float64(w) + xp * omw, y * np.float64(w) + yp * omw])


def _elliptic_windows(centres, coords, size, limit, ellipses):
    """Windows of every (ellipse, centre) block, concatenated: block b = e * m + i."""
    parts = [build_windows(_ellipse_transform(centres, sh, an), _ellipse_transform(coords, sh, an), size, limit,
                           tie_coords=coords)
             for sh, an in ellipses]
    offsets = [np.zeros(1, dtype=np.int64)]
    base = 0
    for w in parts:
        offsets.append(w[0][1:] + base)
        base += int(w[0][-1])
    return (np.concatenate(offsets), np.concatenate([w[1] for w in parts]), np.concatenate([w[2] for w in parts]),
            np.concatenate([w[3] for w in parts]))


def _check_ellipses(window, geo, grid_cell, max_distance, ellipse_shapes, ellipse_angles, penalty):
    """``(ellipses, penalty exponent)`` of an elliptic scan (``(None, None)`` for circles): SaTScan's
    window set (:func:`ellipse_set`) after checking the options shared by :func:`bernoulli` and
    :func:`poisson`."""
    check_in(window, "window", ("circle", "ellipse"))
    if window != "ellipse":
        return None, None
    if geo.great_circle or grid_cell is not None or max_distance is not None:
        raise ValueError("window='ellipse' needs Euclidean coordinates and no grid_cell or max_distance "
                         "(as SaTScan's elliptic scan)")
    shapes = [check_positive(v, "ellipse_shapes") for v in ellipse_shapes]
    angles = [check_int(v, "ellipse_angles", minimum=1) for v in ellipse_angles]
    if len(shapes) != len(angles) or any(v <= 1 for v in shapes):
        raise ValueError("ellipse_shapes (each > 1) and ellipse_angles must have the same length")
    return ellipse_set(shapes, angles), PENALTIES[check_in(penalty, "penalty", tuple(PENALTIES))]


def _elliptic_penalties(ellipses, m0: int, pen_a: float) -> np.ndarray:
    """Non-compactness factor ``(4 s / (1 + s)^2)^a`` of every (ellipse, centre) window block."""
    sh = np.repeat([e[0] for e in ellipses], m0)
    return (4.0 * sh / (1.0 + sh) ** 2) ** pen_a


def _elliptic_report(best, pens, ellipses, points, cpoints, centres, centre_loc):
    """What :func:`_clusters` needs for an elliptic scan: ``(stat, radius_of, extra, centres,
    centre_loc, tiebreak)`` over the (ellipse, centre) blocks ``b = e * m + i``.

    As SaTScan: one candidate per centre, its best window over all shapes and angles by the
    penalised statistic (the secondary clusters are drawn from these; the others are not
    reported); equal statistics in the centres' input order; ``radius_of`` gives the semiminor axis."""
    m0 = len(cpoints)
    stat = best * pens
    keep = np.zeros_like(stat, dtype=bool)
    per = stat.reshape(len(ellipses), m0)
    keep[np.argmax(per, axis=0) * m0 + np.arange(m0)] = True
    stat = np.where(keep, stat, 0.0)
    tpts = [_ellipse_transform(points, a, b) for a, b in ellipses]
    tctr = [_ellipse_transform(cpoints, a, b) for a, b in ellipses]

    def radius_of(members, b):
        e, i = divmod(int(b), m0)
        return float(np.sqrt(((tpts[e][members] - tctr[e][i]) ** 2).sum(axis=1)).max())

    def extra_cols(b):
        e, i = divmod(int(b), m0)
        return {"shape": ellipses[e][0], "angle": ellipses[e][1]}

    return (stat, radius_of, extra_cols, np.tile(centres, (len(ellipses), 1)), np.tile(centre_loc, len(ellipses)),
            np.tile(np.arange(m0), len(ellipses)))


def _row_locations(members) -> np.ndarray:
    """The merged location of every input row."""
    out = np.empty(sum(len(m) for m in members), dtype=np.int64)
    for g, m in enumerate(members):
        out[m] = g
    return out


def _check_max_population(v):
    v = check_probability(v, "max_population")
    if v > 0.5:
        raise ValueError(f"max_population must be in (0, 0.5] (fraction of the total population), got {v!r}")
    return v


def bernoulli(coords, cases, controls, *, max_population=0.5, n_replicates=999, direction="high",
              secondary="no-overlap", grid_cell=None, max_distance=None, distance="euclidean", min_cases=0,
              window="circle", ellipse_shapes=(1.5, 2, 3, 4, 5), ellipse_angles=(4, 6, 9, 12, 15), penalty="medium",
              location_ids=None, seed=None, executor=None, backend="auto", threads=None, progress=True) -> ScanResult:
    """Kulldorff's purely spatial Bernoulli scan statistic with Monte Carlo inference.

    Semantics follow SaTScan's purely spatial Bernoulli analysis with circular (or elliptic)
    windows.

    Parameters
    ----------
    coords : array_like (n, 2)
        Planar (Cartesian) location coordinates; distances are Euclidean. Latitude/
        longitude is not converted: project it first (or accept the planar approximation).
    cases, controls : array_like (n,)
        Non-negative integer counts per location (point data: 1/0).
    max_population : float in (0, 0.5]
        Maximum window population (cases + controls) as a fraction of the total.
    n_replicates : int >= 1
        Monte Carlo replicates (999 or 9999 as in SaTScan).
    direction : {"high", "low", "both"}
        Scan for windows with a higher (lower, either) case proportion than outside.
    secondary : {"no-overlap"}
        Secondary clusters: best window of each centre, kept when it shares no location
        with a more likely reported cluster (SaTScan's default). As in SaTScan's output,
        secondary clusters whose LLR is below the maximum of every replicate (Monte Carlo
        p = 1) are not listed.
    grid_cell : float, optional
        When given, circles are centred on the centres of a regular grid of this cell
        side (coordinate units) covering the locations, instead of on the locations.
    max_distance : float, optional
        Maximum circle radius (coordinate units; km with ``distance="great_circle"``), on top of
        ``max_population``.
    distance : {"euclidean", "great_circle"}
        ``"great_circle"``: coords are (latitude, longitude) in degrees and distances are
        great-circle distances in km (SaTScan's "Latitude/Longitude" coordinates; radii reported in km).
    min_cases : int >= 0
        High-rate windows need at least this many cases (SaTScan >= 9.5's "minimum cases in cluster
        for high rates"; 0, the default, is no restriction as in earlier versions).
    window : {"circle", "ellipse"}
        ``"ellipse"``: SaTScan's elliptic scan, as in :func:`poisson`: the circle plus ellipses of
        each shape in ``ellipse_shapes`` (major / minor axis, dimensionless) at ``ellipse_angles``
        orientations each (multiples of 180 / angles degrees in (-90, 90]), every window cut at
        ``max_population`` x the total persons; Euclidean coordinates, no grid, no ``max_distance``.
        The result gains ``test_statistic`` (penalised LLR), ``shape``, ``angle`` (degrees) and
        ``semimajor_axis`` (coordinate units; ``radius`` is the semiminor axis).
    ellipse_shapes, ellipse_angles : sequences
        SaTScan's defaults (1.5, 2, 3, 4, 5) and (4, 6, 9, 12, 15); empty sequences leave the
        circle alone (the circular scan's clusters, with the elliptic scan's columns).
    penalty : {"none", "medium", "strong"}
        Non-compactness penalty of the elliptic scan: windows are ranked (and the Monte Carlo
        maxima taken) by ``LLR x (4 s / (1 + s)^2)^a``, a = 0, 1/2, 1 (s = the shape).
    seed : None, int, SeedSequence or Generator
        Root of the per-replicate seeds: results do not depend on executor or batching.
    executor : None, concurrent.futures.Executor or dask Client
        Where the Monte Carlo batches run (process pools need ``backend="cpu"``).
    backend : {"auto", "cpu", "gpu", "emulator"}
    threads : int, optional
        Numba threads for the CPU engine.
    location_ids : array_like (n,), optional
        Ids reported in ``clusters.location_ids`` (default: 0-based input row positions).
    progress : bool
        Show a progress bar over Monte Carlo batches.

    Returns
    -------
    ScanResult
        ``model="bernoulli"``; ``clusters``, most likely first (see :class:`ScanResult`).

    Examples
    --------
    The medieval grave sites: are the 30 graves with a tooth deformity clustered among the 143?

    >>> g = hp.datasets.load_grave()
    >>> res = hp.scan.bernoulli(g[["x", "y"]].to_numpy(), g["case"], 1 - g["case"], n_replicates=99,
    ...                         seed=1, backend="cpu", progress=False)
    >>> top = res.most_likely
    >>> print(top.n_locations, top.cases, round(top.log_likelihood_ratio, 3), round(top.p_value, 2))
    19 11 7.419 0.07
    """
    loc = prepare_locations(coords, cases, controls)
    n_in = sum(len(m) for m in loc.members)
    ids = check_location_ids(location_ids, n_in)
    max_population = _check_max_population(max_population)
    max_distance = None if max_distance is None else check_positive(max_distance, "max_distance")
    geo = _check_geometry(distance, loc.coords, grid_cell)
    ellipses, pen_a = _check_ellipses(window, geo, grid_cell, max_distance, ellipse_shapes, ellipse_angles, penalty)
    min_cases, n_replicates, progress, threads, resolved = check_run(
        min_cases, n_replicates, direction, secondary, progress, threads, seed, backend)
    if loc.n_merged:
        warnings.warn(
            f"{loc.n_merged} input row(s) share coordinates with another row and were merged "
            f"({n_in} rows -> {len(loc.members)} locations); counts were summed",
            UserWarning, stacklevel=2,
        )
    C = int(loc.cases.sum())
    N = C + int(loc.controls.sum())
    pop = loc.pop
    centres, centre_loc = make_centres(loc.coords, grid_cell)

    with threads_context(threads):
        points = geo.points(loc.coords)
        cpoints = geo.points(centres)
        m0 = len(centres)
        pens = None
        if ellipses is None:
            windows = build_windows(cpoints, points, pop, max_population * N, geo.to_working(max_distance))
        else:
            windows = _elliptic_windows(cpoints, points, pop, max_population * N, ellipses)
            pens = _elliptic_penalties(ellipses, m0, pen_a)
        engine = make_engine(windows, klogk_table(N), C, N, direction, backend=resolved, min_cases=min_cases,
                             location_size=pop)
        observed = loc.cases.astype(np.int32)[:, None]
        best, best_entry = engine.best_per_centre(observed, want_arg=True)
        best = best[:, 0]
        best_entry = best_entry[:, 0]
        null_llr = _monte_carlo(engine, pop, C, n_replicates, seed, executor, progress,
                                penalties=pens if (pens is not None and pen_a > 0) else None)
    offsets, neighbors, npop, boundary = windows
    stat = extra_cols = tiebreak = None
    if ellipses is not None:
        stat, radius_of, extra_cols, centres, centre_loc, tiebreak = _elliptic_report(
            best, pens, ellipses, points, cpoints, centres, centre_loc)
    else:
        radius_of = _radius(geo, points, cpoints)

    def window_stats(members, c, j, i):
        n = int(npop[j])
        inside, outside = c / n, (C - c) / (N - n)
        return n, n * C / N, inside / outside if outside > 0 else math.inf

    clusters = _clusters(best, best_entry, offsets, neighbors, centres, centre_loc, radius_of, loc.cases, loc.members,
                         ids, null_llr, window_stats, stat=stat, extra=extra_cols, tiebreak=tiebreak)
    if ellipses is not None:  # the radius of an ellipse is its semiminor axis
        clusters.insert(clusters.columns.get_loc("radius") + 1, "semimajor_axis", clusters.radius * clusters["shape"])
    return ScanResult(
        clusters=clusters, null_llr=null_llr, backend=resolved, n_cases=C, n_population=N,
        n_locations=len(loc.members), n_merged=loc.n_merged, n_centres=len(centres),
        n_windows=int(boundary.sum()), max_population=max_population, direction=direction,
        n_replicates=n_replicates, grid_cell=grid_cell, max_distance=max_distance, distance=distance,
        min_cases=min_cases, _loc_coords=loc.coords,
        _loc_cases=loc.cases, _loc_controls=loc.controls, _loc_population=pop, _loc_expected=pop * (C / N),
        _row_ids=ids, _row_loc=_row_locations(loc.members),
    )


def _category_codes(covariates, n: int) -> tuple[np.ndarray, list]:
    """Integer code per row of the covariate category (``covariates``: (n,) labels or (n, k)
    columns, one category per distinct row), and the categories in order of first appearance."""
    if isinstance(covariates, pd.DataFrame):
        rows = list(covariates.itertuples(index=False, name=None))
    elif isinstance(covariates, pd.Series):
        rows = covariates.tolist()
    else:
        arr = np.asarray(covariates, dtype=object)
        if arr.ndim not in (1, 2):
            raise ValueError(f"covariates must be 1-D (one label per row) or 2-D (columns), got shape {arr.shape}")
        rows = [tuple(r) for r in arr.tolist()] if arr.ndim == 2 else arr.tolist()
    if len(rows) != n:
        raise ValueError(f"covariates must have one row per location row ({n}), got {len(rows)}")
    codes, cats = pd.factorize(pd.Series(rows, dtype=object), sort=False)
    if (codes < 0).any():
        i = int(np.argmax(codes < 0))
        raise ValueError(f"covariates must not be missing; row {i} is {rows[i]!r}")
    return codes.astype(np.int64), list(cats)


def indirect_expected(cases: np.ndarray, population: np.ndarray, codes: np.ndarray | None = None,
                      categories: list | None = None) -> np.ndarray:
    """Expected cases per row by indirect standardisation: ``E = population x C_k / P_k`` with
    ``C_k`` and ``P_k`` the cases and population of the row's covariate category ``k`` (one
    category when ``codes`` is None: ``E = population x C / P``). The expected counts sum to C."""
    if codes is None:
        codes = np.zeros(len(cases), dtype=np.int64)
    K = int(codes.max()) + 1 if len(codes) else 0
    Ck = np.bincount(codes, weights=cases, minlength=K)
    Pk = np.bincount(codes, weights=population, minlength=K)
    bad = (Pk <= 0) & (Ck > 0)
    if bad.any():
        k = int(np.argmax(bad))
        name = f"covariate category {categories[k]!r}" if categories is not None else "the study area"
        raise ValueError(f"{name} has {int(Ck[k])} case(s) but zero population: its expected counts are undefined")
    rate = np.divide(Ck, Pk, out=np.zeros(K), where=Pk > 0)
    return population * rate[codes]


def poisson(coords, cases, population, *, expected=None, covariates=None, max_population=0.5, max_distance=None,
            min_cases=2, n_replicates=999, direction="high", secondary="no-overlap", grid_cell=None,
            distance="euclidean", window="circle", ellipse_shapes=(1.5, 2, 3, 4, 5), ellipse_angles=(4, 6, 9, 12, 15),
            penalty="medium", location_ids=None, seed=None, executor=None, backend="auto", threads=None,
            progress=True) -> ScanResult:
    """Kulldorff's purely spatial discrete Poisson scan statistic with Monte Carlo inference.

    Semantics follow SaTScan's purely spatial discrete Poisson analysis with circular windows:
    a window with ``c`` cases and ``E`` expected cases (of ``C`` in all) has log likelihood ratio
    ``c log(c/E) + (C-c) log((C-c)/(C-E))`` when its rate is higher (lower, either) than outside,
    replicates redistribute the C cases multinomially in proportion to the expected counts, and
    secondary clusters are the best windows of other centres sharing no location with a more
    likely reported cluster (those with Monte Carlo p = 1 are not listed, as in SaTScan).

    Parameters
    ----------
    coords : array_like (n, 2)
        Planar (Cartesian) location coordinates; distances are Euclidean. Rows with identical
        coordinates are merged (with ``covariates``, give one row per location and category).
    cases : array_like (n,)
        Non-negative integer case counts.
    population : array_like (n,)
        Non-negative population (persons or person-time; need not be whole numbers).
    expected : array_like (n,), optional
        Expected cases per row under the null (e.g. from an external standardisation), used
        instead of the population; rescaled to sum to C. Not together with ``covariates``.
    covariates : array_like (n,) or (n, k), optional
        Covariate category of each row (labels, or k columns such as age group and sex):
        expected counts by indirect standardisation over the categories (SaTScan's covariate
        adjustment of the .cas/.pop covariates; see :func:`read_satscan` with ``covariates=True``).
    max_population : float in (0, 0.5]
        Maximum window size as a fraction of the total population at risk (of the expected
        cases, which is the same without covariates).
    max_distance : float, optional
        Maximum circle radius (coordinate units), on top of ``max_population``.
    min_cases : int >= 0
        High-rate windows need at least this many cases (SaTScan's default 2); the restriction
        applies to the data and to every replicate.
    n_replicates : int >= 1
    direction : {"high", "low", "both"}
    secondary : {"no-overlap"}
    grid_cell : float, optional
        Circles centred on the cells of a regular grid of this side instead of on the locations.
    distance : {"euclidean", "great_circle"}
        As in :func:`bernoulli` (great-circle: coords are (latitude, longitude), km).
    window : {"circle", "ellipse"}
        ``"ellipse"``: SaTScan's elliptic scan, the circle plus ellipses of each shape in
        ``ellipse_shapes`` (major / minor axis) at ``ellipse_angles`` orientations each (multiples of
        180 / angles degrees in (-90, 90]); Euclidean coordinates, no grid, no ``max_distance``.
    ellipse_shapes, ellipse_angles : sequences
        SaTScan's defaults (1.5, 2, 3, 4, 5) and (4, 6, 9, 12, 15).
    penalty : {"none", "medium", "strong"}
        Non-compactness penalty of the elliptic scan: windows are ranked (and the Monte Carlo
        maxima taken) by ``LLR x (4 s / (1 + s)^2)^a``, a = 0, 1/2, 1; reported as ``test_statistic``.
    location_ids : array_like (n,), optional
        Ids reported in ``clusters.location_ids`` (default: 0-based input row positions); unique,
        except with ``covariates``, where the rows of one location (its categories) share its id;
        a location is then reported once, by the id of its first row.
    seed, executor, backend, threads, progress
        As in :func:`bernoulli`.

    Returns
    -------
    ScanResult
        ``model="poisson"``; ``clusters.population`` is the population in the window and
        ``clusters.expected`` its expected cases.

    Examples
    --------
    Leukaemia in 281 census tracts of upstate New York (whole cases, populations in persons):

    >>> ny = hp.datasets.load_ny_leukemia()
    >>> res = hp.scan.poisson(ny[["x", "y"]].to_numpy(), ny["cases_floor"], ny["population"],
    ...                       n_replicates=99, seed=1, backend="cpu", progress=False)
    >>> top = res.most_likely
    >>> print(top.n_locations, top.cases, round(top.expected, 2), round(top.log_likelihood_ratio, 3))
    37 117 70.61 15.006
    >>> print(round(top.p_value, 2))
    0.01
    """
    xy = _check_xy(coords)
    n = xy.shape[0]
    ca = as_count_array(cases, "cases")
    if expected is not None and covariates is not None:
        raise ValueError("give expected= or covariates=, not both (covariates are used to compute the expected counts)")
    po = None
    if population is not None or expected is None:
        po = as_float_array(population, "population", ndim=1, copy=True)
        if (po < 0).any():
            i = int(np.argmax(po < 0))
            raise ValueError(f"population must be non-negative; population[{i}] = {po[i]!r}")
    ex = None
    if expected is not None:
        ex = as_float_array(expected, "expected", ndim=1, copy=True)
        if (ex < 0).any():
            i = int(np.argmax(ex < 0))
            raise ValueError(f"expected must be non-negative; expected[{i}] = {ex[i]!r}")
    lengths = {"coords": n, "cases": len(ca)}
    if po is not None:
        lengths["population"] = len(po)
    if ex is not None:
        lengths["expected"] = len(ex)
    if len(set(lengths.values())) > 1:
        raise ValueError("coords, cases, population (and expected) must have the same length; got "
                         + ", ".join(f"{k} {v}" for k, v in lengths.items()))
    C = int(ca.sum())
    if C == 0:
        raise ValueError("cases sum to 0: the scan statistic needs at least one case")
    if C >= 2**31 - 1:
        raise ValueError(f"{C} cases are too many (must be < 2**31 - 1)")
    codes = cats = None
    if covariates is not None:
        codes, cats = _category_codes(covariates, n)
    ids = check_location_ids(location_ids, n, repeats=covariates is not None)
    max_population = _check_max_population(max_population)
    max_distance = None if max_distance is None else check_positive(max_distance, "max_distance")
    geo = _check_geometry(distance, xy, grid_cell)
    ellipses, pen_a = _check_ellipses(window, geo, grid_cell, max_distance, ellipse_shapes, ellipse_angles, penalty)
    min_cases, n_replicates, progress, threads, resolved = check_run(
        min_cases, n_replicates, direction, secondary, progress, threads, seed, backend)

    if ex is None:
        ex = indirect_expected(ca, po, codes, cats)
    else:
        total = float(ex.sum())
        if not total > 0:
            raise ValueError("expected sums to 0: need positive expected counts")
        ex = ex * (C / total)
    bad = (ex <= 0) & (ca > 0)
    if bad.any():
        i = int(np.argmax(bad))
        what = "expected" if expected is not None else "population"
        raise ValueError(f"row {i} has {ca[i]} case(s) but zero {what}: a Poisson rate there is undefined")

    loc_coords, gid, members = merge_rows(xy)
    L = len(members)
    n_merged = n - L
    if n_merged:
        same = n_merged if codes is None else n - len({(g, k) for g, k in zip(gid.tolist(), codes.tolist())})
        if same:
            warnings.warn(
                f"{same} input row(s) share coordinates{'' if codes is None else ' and covariates'} with another "
                f"row and were merged; counts were summed", UserWarning, stacklevel=2)
    report_members = members
    if codes is not None:
        # rows are location x category: a location is reported once, by its first row's id, and
        # rows sharing an id must share the coordinates
        if location_ids is not None:
            _, first_of_id, id_code = np.unique(ids.astype(str), return_index=True, return_inverse=True)
            bad = gid != gid[first_of_id[id_code.ravel()]]
            if bad.any():
                r = int(np.argmax(bad))
                raise ValueError(f"location_ids: {ids[r]!r} is given for rows at different coordinates "
                                 f"(rows {int(first_of_id[id_code.ravel()[r]])} and {r})")
        report_members = [[m[0]] for m in members]
    l_cases = np.bincount(gid, weights=ca, minlength=L).astype(np.int64)
    l_exp = np.bincount(gid, weights=ex, minlength=L)
    l_pop = np.bincount(gid, weights=po, minlength=L) if po is not None else l_exp.copy()
    if po is not None and np.all(l_pop == np.round(l_pop)) and l_pop.sum() < 2**53:
        l_pop = l_pop.astype(np.int64)
    # windows are cut by the population at risk: the population itself when the expected counts
    # are proportional to it (exact integer comparisons), else the expected counts
    size = l_pop if (expected is None and covariates is None) else l_exp
    centres, centre_loc = make_centres(loc_coords, grid_cell)

    m0 = len(centres)
    pens = stat = extra_cols = None
    with threads_context(threads):
        points = geo.points(loc_coords)
        cpoints = geo.points(centres)
        if ellipses is None:
            windows = build_windows(cpoints, points, size, max_population * size.sum(), geo.to_working(max_distance))
        else:
            windows = _elliptic_windows(cpoints, points, size, max_population * size.sum(), ellipses)
            pens = _elliptic_penalties(ellipses, m0, pen_a)
        offsets, neighbors, _, boundary = windows
        wexp = cumulative_expected(windows, l_exp)
        engine = make_engine((offsets, neighbors, wexp, boundary), klogk_table(C), C, C, direction,
                             backend=resolved, model="poisson", min_cases=min_cases)
        best, best_entry = engine.best_per_centre(l_cases.astype(np.int32)[:, None], want_arg=True)
        best = best[:, 0]
        best_entry = best_entry[:, 0]
        null_llr = _monte_carlo(engine, l_exp, C, n_replicates, seed, executor, progress,
                                penalties=pens if (pens is not None and pen_a > 0) else None)
    tiebreak = None
    if ellipses is not None:
        stat, radius_of, extra_cols, centres, centre_loc, tiebreak = _elliptic_report(
            best, pens, ellipses, points, cpoints, centres, centre_loc)
    else:
        radius_of = _radius(geo, points, cpoints)

    def window_stats(members, c, j, i):
        e = float(wexp[j])
        rr = (c / e) / ((C - c) / (C - e)) if C > c else math.inf
        p = l_pop[members].sum()
        return (int(p) if l_pop.dtype.kind == "i" else float(p)), e, rr

    clusters = _clusters(best, best_entry, offsets, neighbors, centres, centre_loc, radius_of,
                         l_cases, report_members, ids, null_llr, window_stats, stat=stat, extra=extra_cols,
                         tiebreak=tiebreak)
    if ellipses is not None:  # the radius of an ellipse is its semiminor axis
        clusters.insert(clusters.columns.get_loc("radius") + 1, "semimajor_axis", clusters.radius * clusters["shape"])
    total_pop = l_pop.sum()
    return ScanResult(
        clusters=clusters, null_llr=null_llr, backend=resolved, n_cases=C,
        n_population=int(total_pop) if l_pop.dtype.kind == "i" else float(total_pop),
        n_locations=L, n_merged=n_merged, n_centres=len(centres), n_windows=int(boundary.sum()),
        max_population=max_population, direction=direction, n_replicates=n_replicates, grid_cell=grid_cell,
        model="poisson", max_distance=max_distance, min_cases=min_cases, distance=distance, _loc_coords=loc_coords,
        _loc_cases=l_cases, _loc_controls=None, _loc_population=l_pop, _loc_expected=l_exp, _row_ids=ids,
        _row_loc=gid,
    )


def _clusters(best, best_entry, offsets, neighbors, centres, centre_loc, radius_of, cases, members_of, ids, null_llr,
              window_stats, stat=None, extra=None, tiebreak=None, count=None, overlap=None):
    """Most likely + secondary clusters (no geographical overlap) as a DataFrame.

    ``window_stats(members, c, j, i)`` gives the model's ``(population, expected, relative_risk)``
    of the window ending at entry ``j`` with locations ``members`` and ``c`` cases;
    ``radius_of(members, i)`` the distance from centre ``i`` to its farthest member. ``stat``
    (default ``best``): the test statistic that ranks windows and gives p-values (elliptic scans:
    the penalised LLR); ``extra(i)``: more columns for window block ``i``; ``tiebreak``: the order
    of equal statistics (default the block index; elliptic scans: the centre's input order);
    ``count(members, i)``: the window's cases (default: the members' ``cases``; space-time: the
    cylinder's); ``overlap(members, i)``: whether candidate ``i`` may not be listed beside the clusters
    listed so far (it records the candidate when it may; default: any location in common)."""
    llr_of = best
    best = llr_of if stat is None else stat
    cand = np.flatnonzero(best > 0)
    ids_list = list(ids.tolist())
    # most likely first; equal statistics (e.g. the same window seen from several centres) ordered
    # as SaTScan's CompareClustersRatios: fewer locations first, then the centre location's id
    # (SaTScan's identifier index: ids sorted as text; NY leukaemia: cluster 4 centred on tract 62,
    # North Humberside: postcode 170 before 18), then the centre's input order
    n_loc = np.asarray(best_entry)[cand] - np.asarray(offsets)[cand] + 1
    loc_of = np.asarray(centre_loc)[cand]
    names = np.array([str(ids_list[members_of[k][0]]) if k >= 0 else "" for k in loc_of.tolist()], dtype=object)
    name_rank = np.empty(len(cand), dtype=np.int64)
    if len(cand):
        uniq = sorted(set(names.tolist()))
        pos = {v: r for r, v in enumerate(uniq)}
        name_rank = np.array([pos[v] for v in names.tolist()], dtype=np.int64)
    cand = cand[np.lexsort((cand if tiebreak is None else tiebreak[cand], name_rank, n_loc, -best[cand]))]
    used = np.zeros(len(members_of), dtype=bool)
    rows = []
    R = len(null_llr)
    null_sorted = np.sort(null_llr)
    for i in cand:
        exceed = R - np.searchsorted(null_sorted, float(best[i]), side="left")
        if rows and exceed == R:
            # as in SaTScan's output: a secondary cluster below every replicate's maximum
            # (Monte Carlo p = 1) is not listed (grave: 3 clusters; NY leukaemia: 7); the
            # candidates come in decreasing statistic, so every later one is below it too
            break
        j = int(best_entry[i])
        members = neighbors[offsets[i]:j + 1]
        if overlap is None:
            if used[members].any():
                continue
            used[members] = True
        elif overlap(members, i):
            continue
        if count is None:  # whole counts stay int; expected background counts (declustered) are real
            c = cases[members].sum()
            c = int(c) if cases.dtype.kind in "iub" else float(c)
        else:
            c = int(count(members, i))
        n, expected, rr = window_stats(members, c, j, i)
        rows.append({
            "center": ids_list[members_of[centre_loc[i]][0]] if centre_loc[i] >= 0 else -1,
            "x": float(centres[i, 0]),
            "y": float(centres[i, 1]),
            "radius": float(radius_of(members, i)),
            "location_ids": [ids_list[r] for m in members for r in members_of[m]],
            "n_locations": int(sum(len(members_of[m]) for m in members)),
            "cases": c,
            "population": n,
            "expected": expected,
            "observed_over_expected": c / expected,
            "relative_risk": rr,
            "log_likelihood_ratio": float(llr_of[i]),
            "p_value": (1 + exceed) / (1 + R),
            **({"test_statistic": float(best[i])} if stat is not None else {}),
            **(extra(i) if extra is not None else {}),
        })
    cols = ["center", "x", "y", "radius", "location_ids", "n_locations", "cases", "population", "expected",
            "observed_over_expected", "relative_risk", "log_likelihood_ratio", "p_value"]
    if rows:
        cols = cols + [k for k in rows[0] if k not in cols]
    df = pd.DataFrame(rows, columns=cols)
    key = "test_statistic" if "test_statistic" in df.columns else "log_likelihood_ratio"
    df["gumbel_p_value"] = gumbel_p_values(df[key].to_numpy(dtype=float), null_llr)
    return df
