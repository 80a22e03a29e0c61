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

from .._backend import get_device, is_gpu_backend, resolve_backend, threads_context
from .._parallel import run_replicates, spawn_seeds
from .._validate import as_count_array, as_float_array, check_in, check_int, describe
from . import cpu as _cpu

__all__ = ["bernoulli", "ScanResult", "prepare_locations", "make_centres", "gumbel_p_values",
           "make_engine", "EULER_GAMMA"]

EULER_GAMMA = 0.5772156649015329
#: replicates per Monte Carlo batch (a fixed size: the per-replicate seeds make results
#: independent of it anyway, it only sets the granularity of executor jobs)
BATCH_SIZE = 256
#: refuse grids with more centres than this (grid_cell too small for the extent)
MAX_GRID_CENTRES = 4_000_000


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


def prepare_locations(coords: Any, cases: Any, controls: Any) -> Locations:
    """Validate the input and merge rows with identical coordinates (counts summed)."""
    xy = as_float_array(coords, "coords", ndim=2, finite=True)
    if xy.shape[1] != 2:
        raise ValueError(f"coords must have shape (n, 2) (x, y columns), got {xy.shape}")
    if xy.shape[0] < 1:
        raise ValueError("coords is empty: need at least one location")
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
    # merge identical coordinates (first occurrence order kept)
    _, first, inverse = np.unique(xy, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    order_groups = np.argsort(first, kind="stable")  # group g (in unique order) -> position
    rank = np.empty_like(order_groups)
    rank[order_groups] = np.arange(len(order_groups))
    gid = rank[inverse]  # group position of every input row, in first-occurrence order
    L = len(first)
    m_cases = np.bincount(gid, weights=ca, minlength=L).astype(np.int64)
    m_controls = np.bincount(gid, weights=co, minlength=L).astype(np.int64)
    m_coords = xy[np.sort(first)]
    members: list = [[] for _ in range(L)]
    for row, g in enumerate(gid.tolist()):
        members[g].append(row)
    return Locations(m_coords, m_cases, m_controls, members, n - L)


def make_centres(loc_coords: np.ndarray, grid_cell: Any):
    """Circle centres: the locations, or the centres of the cells of a regular grid of
    side ``grid_cell`` covering the locations' bounding box. Returns (centres (m, 2),
    centre_location (m,) index of the location at the centre or -1)."""
    if grid_cell is None:
        return loc_coords.copy(), np.arange(len(loc_coords), dtype=np.int64)
    if isinstance(grid_cell, bool) or not isinstance(grid_cell, (int, float, np.integer, np.floating)):
        raise TypeError(f"grid_cell must be None or a positive number, got {describe(grid_cell)}")
    g = float(grid_cell)
    if not math.isfinite(g) or g <= 0:
        raise ValueError(f"grid_cell must be a positive finite number (cell side, coordinate units), got {grid_cell!r}")
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


# --------------------------------------------------------------------------- engines
def make_engine(windows, klogk, n_cases, n_total, direction, backend):
    """The CPU (Numba) or GPU/emulator (CUDA) engine for the resolved ``backend``."""
    if is_gpu_backend(backend):
        from .gpu import GpuEngine

        return GpuEngine(windows, klogk, n_cases, n_total, direction, get_device(backend), backend)
    return _cpu.CpuEngine(windows, klogk, n_cases, n_total, direction)


def draw_null_cases(pop: np.ndarray, n_cases: int, seeds) -> np.ndarray:
    """Cases per location for each replicate: the C cases relabelled at random among all
    N persons (a multivariate hypergeometric draw over the locations' populations, made
    as a uniformly random C-subset of the persons, O(C log L) per replicate). One seed per
    replicate (``seeds``: SeedSequences), so a replicate's data does not depend on how
    replicates are batched or on the executor. Returns (L, R) int32."""
    s32 = np.array([ss.generate_state(1, np.uint32)[0] for ss in seeds], dtype=np.uint32)
    return _cpu.draw_cases(pop, n_cases, s32)


def _null_batch(item, _batch_seed, engine, pop, n_cases):
    """One Monte Carlo batch (module level so process pools can pickle it)."""
    seeds = item
    cases = draw_null_cases(pop, n_cases, seeds)
    return engine.max_llr(cases)


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
@dataclasses.dataclass(frozen=True, repr=False)
class ScanResult:
    """Result of :func:`bernoulli`.

    Attributes
    ----------
    clusters : pandas.DataFrame
        Most likely cluster first, then the secondary clusters (no geographical overlap),
        one row each: ``center`` (id of the location at the centre, -1 for a grid point),
        ``x``, ``y`` (centre, coordinate units), ``radius`` (distance from the centre to
        the farthest location in the window, coordinate units), ``location_ids`` (list of
        the input location ids in the window, nearest first; merged duplicates all listed),
        ``n_locations``, ``cases``, ``population`` (cases + controls, persons),
        ``expected`` (population x C / N), ``observed_over_expected``, ``relative_risk``
        (case proportion inside / outside), ``log_likelihood_ratio``, ``p_value``
        (Monte Carlo, against the null maxima) and ``gumbel_p_value``.
    null_llr : numpy.ndarray
        (n_replicates,) maximum LLR of each Monte Carlo replicate.
    backend : str
        Engine that ran ("cpu", "gpu" or "emulator").
    n_cases, n_population : int
        Totals C and N.
    n_locations : int
        Locations after merging identical coordinates.
    n_merged : int
        Input rows merged into another row with identical coordinates.
    n_centres, n_windows : int
        Circle centres scanned, and windows evaluated per replicate.
    max_population, direction, n_replicates, grid_cell
        The settings used.
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
    _loc_coords: np.ndarray = dataclasses.field(default=None, repr=False)
    _loc_cases: np.ndarray = dataclasses.field(default=None, repr=False)
    _loc_controls: np.ndarray = dataclasses.field(default=None, repr=False)

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
        }

    def to_csv(self, path, **kwargs) -> None:
        """Write the cluster table; ``location_ids`` as space-separated ids."""
        df = self.clusters.copy()
        df["location_ids"] = [" ".join(str(v) for v in ids) for ids in df["location_ids"]]
        df.to_csv(path, index=False, **kwargs)

    def summary(self) -> str:
        lines = [
            f"Bernoulli spatial scan ({self.direction} rates), backend={self.backend}",
            f"  {self.n_locations} locations ({self.n_merged} rows merged), {self.n_cases} cases, "
            f"{self.n_population} persons; max window population {self.max_population:.0%}",
            f"  {self.n_centres} centres, {self.n_windows} windows, {self.n_replicates} replicates",
        ]
        for k, row in self.clusters.iterrows():
            ids = ", ".join(str(v) for v in row.location_ids[:12]) + (" ..." if row.n_locations > 12 else "")
            lines.append(
                f"{k + 1}. locations {ids}\n   centre ({row.x:.6g}, {row.y:.6g}) radius {row.radius:.6g}; "
                f"cases {row.cases}/{row.population} (expected {row.expected:.2f}, RR {row.relative_risk:.3g}); "
                f"LLR {row.log_likelihood_ratio:.6f}; p {row.p_value:.4g} (Gumbel {row.gumbel_p_value:.3g})"
            )
        return "\n".join(lines)

    def __repr__(self) -> str:
        top = self.most_likely
        best = "no cluster" if top is None else (
            f"most likely: {top.n_locations} locations, LLR={top.log_likelihood_ratio:.4f}, p={top.p_value:.4g}"
        )
        return (f"ScanResult(backend={self.backend!r}, clusters={len(self.clusters)}, "
                f"n_replicates={self.n_replicates}, {best})")

    def plot(self, ax=None, *, max_clusters: int | None = None, alpha: float = 0.05):
        """Clusters as circles over the locations (matplotlib).

        Locations are grey dots (size ~ population), red where they hold cases; the most
        likely cluster is a thick circle, secondary clusters thin (dashed when p > alpha).
        Returns the Axes.
        """
        import matplotlib.pyplot as plt
        from matplotlib.patches import Circle

        if ax is None:
            _, ax = plt.subplots(figsize=(6, 6))
        xy = self._loc_coords
        pop = self._loc_cases + self._loc_controls
        size = 6 + 30 * np.sqrt(pop / max(1, pop.max()))
        ax.scatter(xy[:, 0], xy[:, 1], s=size, c="0.6", lw=0, label="locations")
        has = self._loc_cases > 0
        ax.scatter(xy[has, 0], xy[has, 1], s=size[has], c="tab:red", lw=0, label="with cases")
        rows = self.clusters if max_clusters is None else self.clusters.iloc[:max_clusters]
        for k, row in enumerate(rows.itertuples()):
            sig = row.p_value <= alpha
            circ = Circle((row.x, row.y), max(row.radius, 1e-12), fill=False,
                          lw=2.5 if k == 0 else 1.2, ls="-" if sig or k == 0 else "--",
                          ec="tab:blue" if k == 0 else "tab:purple")
            ax.add_patch(circ)
            ax.annotate(f"{k + 1}", (row.x, row.y), fontsize=8, ha="center", va="center")
        ax.set_aspect("equal")
        ax.set_xlabel("x")
        ax.set_ylabel("y")
        ax.set_title(f"Spatial scan: {len(rows)} cluster(s), most likely p={rows.p_value.iloc[0]:.3g}"
                     if len(rows) else "Spatial scan: no cluster")
        ax.legend(loc="best", fontsize=8)
        return ax


# --------------------------------------------------------------------------- main
def _check_max_population(v):
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise TypeError(f"max_population must be a number in (0, 0.5], got {describe(v)}")
    v = float(v)
    if not (0 < v <= 0.5):
        raise ValueError(f"max_population must be in (0, 0.5] (fraction of the total population), got {v!r}")
    return v


def bernoulli(coords, cases, controls, *, max_population=0.5, n_replicates=999, direction="high",
              secondary="no-overlap", grid_cell=None, seed=None, executor=None, backend="auto",
              threads=None, location_ids=None, progress=True) -> ScanResult:
    """Kulldorff's purely spatial Bernoulli scan statistic with Monte Carlo inference.

    Semantics follow SaTScan's purely spatial Bernoulli analysis with circular windows.

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
    """
    loc = prepare_locations(coords, cases, controls)
    n_in = sum(len(m) for m in loc.members)
    if location_ids is None:
        ids = np.arange(n_in)
    else:
        ids = np.asarray(location_ids)
        if ids.ndim != 1 or len(ids) != n_in:
            raise ValueError(f"location_ids must be 1-D with one id per row ({n_in}), got shape {ids.shape}")
    max_population = _check_max_population(max_population)
    n_replicates = check_int(n_replicates, "n_replicates", minimum=1)
    check_in(direction, "direction", ("high", "low", "both"))
    check_in(secondary, "secondary", ("no-overlap",))
    resolved = resolve_backend(backend)
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
        windows = _cpu.build_windows(centres, loc.coords, pop, max_population * N)
        klogk = _cpu.klogk_table(N)
        engine = make_engine(windows, klogk, C, N, direction, resolved)
        observed = loc.cases.astype(np.int32)[:, None]
        best, best_entry = engine.best_per_centre(observed, want_arg=True)
        best = best[:, 0]
        best_entry = best_entry[:, 0]
        seeds = spawn_seeds(seed, n_replicates)
        batches = [seeds[i:i + BATCH_SIZE] for i in range(0, n_replicates, BATCH_SIZE)]
        parts = run_replicates(_null_batch, batches, seed=0, executor=executor, progress=progress,
                               desc="scan Monte Carlo", args=(engine, pop, C))
    null_llr = np.concatenate(parts).astype(np.float64)
    offsets, neighbors, npop, boundary = windows
    clusters = _clusters(best, best_entry, offsets, neighbors, npop, centres, centre_loc, loc, ids, C, N, null_llr)
    return ScanResult(
        clusters=clusters, null_llr=null_llr, backend=resolved, n_cases=C, n_population=N,
        n_locations=len(loc.members), n_merged=loc.n_merged, n_centres=len(centres),
        n_windows=int(boundary.sum()), max_population=max_population, direction=direction,
        n_replicates=n_replicates, grid_cell=grid_cell, _loc_coords=loc.coords,
        _loc_cases=loc.cases, _loc_controls=loc.controls,
    )


def _clusters(best, best_entry, offsets, neighbors, npop, centres, centre_loc, loc, ids, C, N, null_llr):
    """Most likely + secondary clusters (no geographical overlap) as a DataFrame."""
    cand = np.flatnonzero(best > 0)
    # most likely first; equal LLRs (e.g. the same window seen from several centres) in
    # centre order, i.e. input order, as SaTScan (NY leukaemia: cluster 4 centred on tract 62)
    cand = cand[np.lexsort((cand, -best[cand]))]
    used = np.zeros(len(loc.members), dtype=bool)
    rows = []
    R = len(null_llr)
    ids_list = list(ids.tolist())
    null_sorted = np.sort(null_llr)
    for i in cand:
        j = int(best_entry[i])
        members = neighbors[offsets[i]:j + 1]
        if used[members].any():
            continue
        exceed = R - np.searchsorted(null_sorted, float(best[i]), side="left")
        if rows and exceed == R:
            # as in SaTScan's output: a secondary cluster below every replicate's maximum
            # (Monte Carlo p = 1) is not listed (grave: 3 clusters; NY leukaemia: 7)
            continue
        used[members] = True
        c = int(loc.cases[members].sum())
        n = int(npop[j])
        llr = float(best[i])
        d = np.sqrt(((loc.coords[members] - centres[i]) ** 2).sum(axis=1))
        inside = c / n
        outside = (C - c) / (N - n)
        rows.append({
            "center": ids_list[loc.members[centre_loc[i]][0]] if centre_loc[i] >= 0 else -1,
            "x": float(centres[i, 0]),
            "y": float(centres[i, 1]),
            "radius": float(d.max()),
            "location_ids": [ids_list[r] for m in members for r in loc.members[m]],
            "n_locations": int(sum(len(loc.members[m]) for m in members)),
            "cases": c,
            "population": n,
            "expected": n * C / N,
            "observed_over_expected": c / (n * C / N),
            "relative_risk": inside / outside if outside > 0 else math.inf,
            "log_likelihood_ratio": llr,
            "p_value": (1 + exceed) / (1 + R),
        })
    cols = ["center", "x", "y", "radius", "location_ids", "n_locations", "cases", "population", "expected",
            "observed_over_expected", "relative_risk", "log_likelihood_ratio", "p_value"]
    df = pd.DataFrame(rows, columns=cols)
    df["gumbel_p_value"] = gumbel_p_values(df["log_likelihood_ratio"].to_numpy(dtype=float), null_llr)
    return df
