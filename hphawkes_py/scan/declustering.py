"""Declustered spatial scan: Kulldorff's Poisson scan on the background events of a Hawkes process.

A spatiotemporal Hawkes process (:mod:`hphawkes_py.hawkes`) splits every event into
*background* (a draw of the background rate) or *triggered* (offspring of an earlier event);
``pi_n`` is the posterior probability that event ``n`` was triggered. A spatial scan of all
events finds every place with more events than the population (or the area) explains, whether
the excess is background risk or a burst of contagion that happened there. Scanning the
background events only separates the two: a cluster that is only contagion disappears from
the declustered scan, a hotspot of background risk stays.

:func:`declustered` does both scans on the same locations and windows and lines them up:

1. the events are aggregated onto locations (the cells of a square grid of side
   ``cell_size``, or the nearest of given ``locations``); every event is counted once;
2. **ordinary scan**: :func:`~hphawkes_py.scan.poisson` of the event counts ``n_l`` against
   the population (or area, or given expected counts);
3. **posterior-mean declustered scan**: the same windows with the expected number of background
   events ``b_l = sum_{n in l} (1 - pi_n)`` (a real number) against the same null shape scaled
   to ``B = sum_n (1 - pi_n)``; Kulldorff's Poisson log likelihood ratio
   ``c log(c/E) + (B - c) log((B - c)/(B - E))`` is well defined for real ``c``. Its Monte Carlo
   null redistributes ``round(B)`` background events multinomially (integer counts). This scan
   is descriptive: the posterior-mean counts are smoother than any realisation of the background
   events, so their LLR is lower than that of a typical draw (Jensen) and the p-values are
   conservative;
4. **per-draw declustered scans** (the inference): for each of ``n_draws`` draws the
   background labels are sampled, ``z_n ~ Bernoulli(1 - pi_n)``, and the integer counts of
   background events get an ordinary Poisson scan with its own Monte Carlo null. Given the
   Hawkes parameters the parents of the events are independent, so with ``pi`` a ``(draws, N)``
   matrix of per-draw probabilities (:func:`hphawkes_py.hawkes.self_excitation_draws`) each
   draw is a draw from the joint posterior of the labels; with the posterior means only, the
   labels have the right marginal posterior but ignore the correlation that parameter
   uncertainty induces. Reported per draw: the top cluster, its LLR and p-value; per location:
   the posterior probability ``p_in_cluster`` of lying in a significant (p <= ``alpha``)
   declustered cluster;
5. **the comparison**: every cluster of the ordinary scan is re-tested as the same window on
   the background events, its LLR against the null maxima of the declustered scan (of the
   posterior-mean scan, and of each draw's). A window that stays significant in most draws is a
   *background hotspot*; one that does not is *contagion only*: it was a cluster because of the
   events triggered inside it. Testing the window itself, rather than looking for an overlapping
   reported declustered cluster, keeps the verdict independent of which secondary clusters the
   no-overlap rule happens to report.

Every scan uses the same Monte Carlo seed (common random numbers), so the differences between
them are those of the data, not of the replicates; with ``pi = 0`` the declustered scans equal
the ordinary one exactly.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pandas as pd

from .._backend import threads_context
from .._progress import progress_bar
from .._validate import as_float_array, check_in, check_int, check_positive, check_probability, check_seed
from .engine import klogk_table, make_engine
from .locations import (MAX_GRID_CENTRES, Geometry, _check_coords, _check_max_population, _check_xy, _radius,
                        make_centres)
from .model import poisson
from .monte_carlo import RunOptions, _monte_carlo, check_run
from .result import Candidates, ScanResult, _clusters
from .windows import build_windows, cumulative_expected

__all__ = ["declustered", "DeclusteredScanResult"]

#: label draws when ``pi`` holds posterior means only and ``n_draws`` is not given
DEFAULT_LABEL_DRAWS = 100
#: events x locations distances per block when events are assigned to the nearest location
_ASSIGN_BLOCK = 1 << 22
VERDICTS = ("background hotspot", "contagion only", "not significant")


# --------------------------------------------------------------------------- input
def _check_pi(pi: Any, n: int) -> np.ndarray:
    """(n,) or (S, n) float64 probabilities in [0, 1]."""
    if isinstance(pi, pd.DataFrame):
        hint = " (the posterior means are pi['mean'])" if "mean" in pi.columns else ""
        raise TypeError(f"pi must be an array of probabilities, (N,) or (draws, N), got a DataFrame with columns "
                        f"{list(pi.columns)}{hint}")
    arr = as_float_array(pi, "pi", ndim=(1, 2))
    if arr.shape[-1] != n:
        raise ValueError(f"pi must have one value per event ({n}, the rows of coords) in its last axis, "
                         f"got shape {arr.shape}")
    if arr.ndim == 2 and arr.shape[0] < 1:
        raise ValueError("pi has no rows: give (N,) posterior means or a (draws, N) matrix with at least one draw")
    bad = (arr < 0) | (arr > 1)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        where = idx[0] if len(idx) == 1 else idx
        raise ValueError(f"pi must hold probabilities in [0, 1]; pi[{where}] = {arr[idx].item()!r}")
    return arr


def _check_location_values(v: Any, name: str, L: int) -> np.ndarray | None:
    if v is None:
        return None
    arr = as_float_array(v, name, ndim=1, copy=True)
    if len(arr) != L:
        raise ValueError(f"{name} must have one value per location ({L}, the rows of locations), got {len(arr)}")
    if (arr < 0).any():
        i = int(np.argmax(arr < 0))
        raise ValueError(f"{name} must be non-negative; {name}[{i}] = {arr[i].item()!r}")
    return arr


@dataclasses.dataclass(frozen=True)
class _Aggregation:
    coords: np.ndarray          # (L, 2) location coordinates (cell centres)
    event_location: np.ndarray  # (N,) location of every event
    population: np.ndarray | None
    expected: np.ndarray | None
    columns: dict               # extra columns of the location table (cell indices)
    n_empty_dropped: int


def _grid(xy: np.ndarray, cell_size: Any, empty_cells: str) -> _Aggregation:
    g = check_positive(cell_size, "cell_size")
    x0 = xy.min(axis=0)
    # cell indices in working units (a power of two times the coordinates: the same cells, with no
    # overflow of xy - x0 or underflow of the quotient), counted as floats before any integer conversion
    s = Geometry("euclidean")
    s.check(xy, gaps=False)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        fij = np.floor((s.points(xy) - s.points(x0[None, :])) / s.to_working(g))
    # a cell below the working precision (g underflows) counts as infinitely many cells
    nxf, nyf = (float(v) + 1 if math.isfinite(v) else math.inf for v in fij.max(axis=0))
    if not nxf * nyf <= MAX_GRID_CENTRES:
        raise ValueError(f"cell_size={g!r} gives a {nxf:.4g} x {nyf:.4g} grid ({nxf * nyf:.4g} cells) over the events' "
                         f"extent; the limit is {MAX_GRID_CENTRES}: use a larger cell_size")
    ij = fij.astype(np.int64)
    nx, ny = int(nxf), int(nyf)
    flat = ij[:, 1] * nx + ij[:, 0]
    cells = np.unique(flat) if empty_cells == "drop" else np.arange(nx * ny, dtype=np.int64)
    gid = np.searchsorted(cells, flat)
    ix, iy = cells % nx, cells // nx
    coords = np.column_stack([x0[0] + g * (ix + 0.5), x0[1] + g * (iy + 0.5)])
    # the null of a grid: every cell the same area, so the same expected count
    return _Aggregation(coords, gid, np.ones(len(cells), dtype=np.int64), None, {"cell_ix": ix, "cell_iy": iy},
                        nx * ny - len(cells))


def _nearest(xy: np.ndarray, locations: Any, population: Any, expected: Any) -> _Aggregation:
    loc = _check_coords(locations, "locations")
    if loc.shape[1] != 2 or loc.shape[0] < 1:
        raise ValueError(f"locations must have shape (L, 2) with L >= 1 (x, y columns), got {loc.shape}")
    _, first, inverse, counts = np.unique(loc, axis=0, return_index=True, return_inverse=True, return_counts=True)
    if (counts > 1).any():
        k = int(np.argmax(counts > 1))
        rows = np.flatnonzero(inverse.ravel() == k)[:2].tolist()
        raise ValueError(f"locations must be distinct: rows {rows[0]} and {rows[1]} are both {loc[rows[0]].tolist()}")
    L = len(loc)
    gid = np.empty(len(xy), dtype=np.int64)
    block = max(1, _ASSIGN_BLOCK // L)
    # squared distances in working units: no underflow or overflow at any coordinate magnitude
    geo = Geometry("euclidean")
    geo.check(np.vstack([xy, loc]), gaps=False)
    pts, lpts = geo.points(xy), geo.points(loc)
    for a in range(0, len(xy), block):
        d2 = ((pts[a:a + block, None, :] - lpts[None, :, :]) ** 2).sum(axis=2)
        gid[a:a + block] = np.argmin(d2, axis=1)  # ties: the first location
    po = _check_location_values(population, "population", L)
    ex = _check_location_values(expected, "expected", L)
    if po is None and ex is None:
        po = np.ones(L, dtype=np.int64)  # no population: the locations stand for equal areas
    return _Aggregation(loc, gid, po, ex, {}, 0)


def _seed_root(seed) -> np.random.SeedSequence:
    seed = check_seed(seed)
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, np.random.Generator):
        return np.random.SeedSequence(seed.integers(0, 2**63 - 1, size=4).tolist())
    return np.random.SeedSequence(seed)


def _fresh(root: np.random.SeedSequence) -> np.random.SeedSequence:
    """A copy of ``root`` with no children spawned: every scan gets the same replicates."""
    return np.random.SeedSequence(root.entropy, spawn_key=root.spawn_key, pool_size=root.pool_size)


# --------------------------------------------------------------------------- the weighted scan
def weighted_poisson_llr(c, e, total) -> np.ndarray:
    """Kulldorff's Poisson LLR ``c log(c/E) + (B - c) log((B - c)/(B - E))`` for real counts ``c``
    (``0 log 0 = 0``), with the same additions as the scan engines (integer-valued ``c`` gives
    their values bit for bit). Not restricted to high-rate windows."""
    c = np.asarray(c, dtype=np.float64)
    e = np.asarray(e, dtype=np.float64)
    B = np.float64(total)
    rest = B - c
    with np.errstate(divide="ignore", invalid="ignore"):
        xlx = np.where(c > 0, c * np.log(np.where(c > 0, c, 1.0)), 0.0)
        rlr = np.where(rest > 0, rest * np.log(np.where(rest > 0, rest, 1.0)), 0.0)
        la = np.log(e)
        lb = np.log(np.maximum(B - e, 0.0))
        out = (xlx + rlr) - (c * la + np.where(rest > 0, rest * lb, 0.0))
    return out


def _high_llr(c: float, e: float, total: float, min_cases) -> float:
    """The LLR of a window with (real) count ``c`` and expectation ``e`` of ``total``, 0 unless
    it is a high-rate window with at least ``min_cases``."""
    return float(weighted_poisson_llr(c, e, total)) if (c > e and c >= min_cases) else 0.0


def _window_p_value(c: float, e: float, total: float, min_cases, null_llr: np.ndarray) -> float:
    """Monte Carlo p-value of one given window against a scan's null maxima (adjusted for the
    scanning over all windows, as the scan's own p-values): (1 + #{null >= LLR}) / (1 + R)."""
    llr = _high_llr(c, e, total, min_cases)
    if llr <= 0:
        return 1.0
    return (1 + int((null_llr >= llr).sum())) / (1 + len(null_llr))


def _weighted_scan(ordinary: ScanResult, weights: np.ndarray, population_null: bool, run: RunOptions,
                   root) -> ScanResult:
    """The Poisson scan of real counts ``weights`` per location, on the windows of ``ordinary``
    (rebuilt the way :func:`poisson` builds them) and its null shape scaled to ``sum(weights)``;
    ``run``: the settings of the declustered scan, ``root``: the root of its seeds."""
    min_cases, n_replicates = run.min_cases, run.n_replicates
    coords = ordinary._loc_coords
    l_pop = ordinary._loc_population
    l_exp = ordinary._loc_expected  # sums to the number of events N
    N = ordinary.n_cases
    B = float(weights.sum())
    B_int = int(round(B))
    L = len(coords)
    size = l_pop if population_null else l_exp
    geo = Geometry("euclidean")
    geo.check(coords)
    centres, centre_loc = make_centres(coords, None)
    points = geo.points(coords)
    with threads_context(run.threads):
        windows = build_windows(points, points, size, ordinary.max_population * size.sum(),
                                geo.to_working(ordinary.max_distance))
        offsets, neighbors, _, boundary = windows
        e_b = l_exp * (B / N)  # expected background events per location under the null
        wexp = cumulative_expected(windows, e_b)
        wc = cumulative_expected(windows, weights)
        llr = weighted_poisson_llr(wc, wexp, B)
        ok = (boundary == 1) & (wc > wexp) & (wc >= min_cases)
        v = np.where(ok, llr, 0.0)
        best = np.zeros(len(centres))
        best_entry = np.full(len(centres), -1, dtype=np.int64)
        for i in range(len(centres)):
            a, b = int(offsets[i]), int(offsets[i + 1])
            if b > a:
                j = a + int(np.argmax(v[a:b]))  # the first maximum, as the engines
                if v[j] > 0:
                    best[i], best_entry[i] = v[j], j
        # Monte Carlo: round(B) background events dropped multinomially on the null shape
        e_int = l_exp * (B_int / N)
        engine = make_engine((offsets, neighbors, cumulative_expected(windows, e_int), boundary), klogk_table(B_int),
                             B_int, B_int, "high", backend=run.backend, model="poisson", min_cases=min_cases)
        null_llr = _monte_carlo(engine, e_int, B_int, n_replicates, _fresh(root), run.executor, False)

    def window_stats(members, c, j, i):
        e = float(wexp[j])
        rr = (c / e) / ((B - c) / (B - e)) if B > c else math.inf
        p = l_pop[members].sum()
        return (int(p) if l_pop.dtype.kind == "i" else float(p)), e, rr

    ids = ordinary._row_ids
    cand = Candidates(best, best_entry, offsets, neighbors, centres, centre_loc)
    clusters = _clusters(cand, _radius(geo, points, points), weights, [[k] for k in range(L)], ids, null_llr,
                         window_stats)
    return ScanResult(
        clusters=clusters, null_llr=null_llr, backend=ordinary.backend, n_cases=B, n_population=ordinary.n_population,
        n_locations=L, n_merged=0, n_centres=len(centres), n_windows=int(boundary.sum()),
        max_population=ordinary.max_population, direction="high", n_replicates=n_replicates, grid_cell=None,
        model="declustered", max_distance=ordinary.max_distance, min_cases=min_cases, distance="euclidean",
        _loc_coords=coords, _loc_cases=weights, _loc_controls=None, _loc_population=l_pop, _loc_expected=e_b,
        _row_ids=ids, _row_loc=np.arange(L),
    )


def _comparison(ordinary, mean_scan, windows, weights, window_sig, alpha, min_cases) -> pd.DataFrame:
    """The ``comparison`` table of :class:`DeclusteredScanResult`: every cluster of the ``ordinary``
    scan (its locations ``windows``) re-tested on the background events (``weights`` per location),
    against the posterior-mean scan's null maxima and, per label draw, ``window_sig`` (draws x
    clusters: significant in that draw's scan)."""
    n_draws = window_sig.shape[0]
    B = float(weights.sum())
    e_bg = mean_scan._loc_expected
    comp = []
    for k, (r, m) in enumerate(zip(ordinary.clusters.itertuples(), windows)):
        c, e = float(weights[m].sum()), float(e_bg[m].sum())
        support = float(window_sig[:, k].mean()) if n_draws else math.nan
        p_bg = _window_p_value(c, e, B, min_cases, mean_scan.null_llr)
        decide = support if n_draws else float(p_bg <= alpha)
        verdict = (VERDICTS[2] if r.p_value > alpha else VERDICTS[0] if decide >= 0.5 else VERDICTS[1])
        comp.append({
            "cluster": k + 1, "n_locations": int(r.n_locations), "events": int(r.cases), "expected": float(r.expected),
            "relative_risk": float(r.relative_risk), "log_likelihood_ratio": float(r.log_likelihood_ratio),
            "p_value": float(r.p_value), "background": c, "expected_background": e,
            "background_relative_risk": (c / e) / ((B - c) / (B - e)) if B > c else math.inf,
            "background_log_likelihood_ratio": _high_llr(c, e, B, 0), "background_p_value": p_bg,
            "background_share": c / r.cases if r.cases else math.nan, "draw_support": support, "verdict": verdict,
        })
    cols = ["cluster", "n_locations", "events", "expected", "relative_risk", "log_likelihood_ratio", "p_value",
            "background", "expected_background", "background_relative_risk", "background_log_likelihood_ratio",
            "background_p_value", "background_share", "draw_support", "verdict"]
    return pd.DataFrame(comp, columns=cols)


# --------------------------------------------------------------------------- result
@dataclasses.dataclass(frozen=True, repr=False)
class DeclusteredScanResult:
    """Result of :func:`declustered`: the ordinary and the declustered scans of the same events.

    :func:`declustered` builds it; its fields are the parameters below.

    Parameters
    ----------
    ordinary : ScanResult
        :func:`~hphawkes_py.scan.poisson` of all events per location (``cases`` = events).
    declustered : ScanResult
        The posterior-mean declustered scan (``model="declustered"``): ``clusters.cases`` are
        expected numbers of background events ``sum (1 - pi_n)``, ``clusters.expected`` their
        expectation under the null, p-values against ``round(B)`` multinomial background events
        (conservative, see the module notes).
    draws : pandas.DataFrame
        One row per label draw: ``draw``, ``n_background`` (background events drawn),
        ``n_significant`` (reported clusters with p <= ``alpha``), and the top cluster's
        ``center``, ``x``, ``y``, ``radius`` (coordinate units), ``location_ids``,
        ``n_locations``, ``cases`` (background events), ``expected``, ``relative_risk``,
        ``log_likelihood_ratio`` and ``p_value`` (NaN when the draw has no cluster). Empty when
        ``n_draws=0``.
    locations : pandas.DataFrame
        One row per location: ``location_id``, ``x``, ``y`` (cell centre or given location;
        grids add ``cell_ix``, ``cell_iy``), ``events``, ``background`` (expected background
        events ``sum (1 - pi_n)``), ``expected`` (events expected under the null),
        ``expected_background``, ``ordinary_cluster`` and ``declustered_cluster`` (rank of the
        significant cluster of each scan holding the location, 0 when none) and
        ``p_in_cluster`` (fraction of the label draws in which the location lies in a reported
        significant declustered cluster; NaN without draws). A map, not a test: under SaTScan's
        no-overlap rule a location whose best window overlaps a more likely cluster is in no
        reported cluster, however many background events it holds.
    comparison : pandas.DataFrame
        One row per cluster of the ordinary scan: ``cluster`` (rank), ``n_locations``,
        ``events``, ``expected``, ``relative_risk``, ``log_likelihood_ratio``, ``p_value``;
        then the **same window** on the background events: ``background`` (``sum (1 - pi_n)``),
        ``expected_background``, ``background_relative_risk``, ``background_log_likelihood_ratio``
        (0 unless above expectation), ``background_p_value`` (that LLR against the null maxima
        of the posterior-mean declustered scan: the p-value the window would have in the scan of
        background events, adjusted for the scanning as the scan's own), ``background_share``
        (background / events; the overall share is ``background_total / n_events``),
        ``draw_support`` (fraction of the label draws in which the window is significant,
        p <= ``alpha``, in that draw's scan of background events: the posterior probability that
        the window is a hotspot of background risk; NaN without draws) and ``verdict``:
        ``"not significant"`` when the ordinary p-value exceeds ``alpha``; else
        ``"background hotspot"`` when ``draw_support >= 0.5`` (without draws: when
        ``background_p_value <= alpha``), the excess of events is there in the background
        events alone; else ``"contagion only"``, the window is a cluster only because of the
        events triggered inside it.
    event_location : numpy.ndarray
        (N,) index into ``locations`` of every event (input order): no event is left out.
    n_events : int
    background_total : float
        ``B = sum_n (1 - pi_n)``, the expected number of background events.
    pi_source : str
        ``"posterior mean"`` (``pi`` was (N,)) or ``"posterior draws"`` (``pi`` was (S, N)).
    alpha, n_draws, cell_size, empty_cells, n_empty_dropped
        Settings (``n_empty_dropped``: grid cells without events left out of the study area).
    backend : str
        Engine that ran ("cpu", "gpu" or "emulator").

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> x = np.vstack([rng.uniform(0, 4, (150, 2)), rng.normal(1.0, 0.2, (30, 2))])
    >>> pi = np.r_[np.full(150, 0.1), np.full(30, 0.9)]
    >>> res = hp.scan.declustered(x, pi, cell_size=1.0, n_draws=5, n_replicates=49, seed=1,
    ...                           backend="cpu", progress=False)
    >>> print(res.n_events, round(res.background_total, 1), res.pi_source, len(res.locations))
    180 138.0 posterior mean 16
    >>> print(res.ordinary.most_likely.cases, res.comparison.verdict[0])
    61 contagion only
    """

    ordinary: ScanResult
    declustered: ScanResult
    draws: pd.DataFrame
    locations: pd.DataFrame
    comparison: pd.DataFrame
    event_location: np.ndarray
    n_events: int
    background_total: float
    pi_source: str
    alpha: float
    n_draws: int
    cell_size: Any
    empty_cells: Any
    n_empty_dropped: int
    backend: str

    def __repr__(self) -> str:
        v = self.comparison["verdict"].value_counts() if len(self.comparison) else {}
        parts = ", ".join(f"{int(v.get(k, 0))} {k}" for k in VERDICTS[:2])
        return (f"DeclusteredScanResult({self.n_events} events, {self.background_total:.1f} expected background, "
                f"{len(self.locations)} locations, {self.n_draws} label draws from the {self.pi_source}; "
                f"ordinary clusters: {parts}; backend={self.backend!r})")

    def to_frame(self) -> pd.DataFrame:
        """The comparison table (a copy)."""
        return self.comparison.copy()

    def to_dict(self) -> dict:
        def records(df):
            return df.to_dict(orient="records")

        return {
            "ordinary": self.ordinary.to_dict(), "declustered": self.declustered.to_dict(),
            "comparison": records(self.comparison), "draws": records(self.draws),
            "locations": records(self.locations), "n_events": self.n_events,
            "background_total": self.background_total, "pi_source": self.pi_source, "alpha": self.alpha,
            "n_draws": self.n_draws, "cell_size": self.cell_size, "empty_cells": self.empty_cells,
            "n_empty_dropped": self.n_empty_dropped, "backend": self.backend,
        }

    def summary(self) -> str:
        o = self.ordinary
        lines = [
            f"Declustered Poisson spatial scan, backend={self.backend}",
            f"  {self.n_events} events on {len(self.locations)} locations"
            + (f" ({self.cell_size:g} x {self.cell_size:g} cells, {self.n_empty_dropped} empty cells left out)"
               if self.cell_size is not None else "")
            + f"; expected background events {self.background_total:.2f} "
            f"({self.background_total / self.n_events:.1%}); pi from the {self.pi_source}",
            f"  max window {o.max_population:.0%} of the population, {o.n_replicates} replicates, "
            f"{self.n_draws} label draws, alpha {self.alpha:g}",
            "Ordinary clusters (all events) and what the background events say about them:",
        ]
        for r in self.comparison.itertuples():
            lines.append(
                f"{r.cluster}. {r.n_locations} locations, events {r.events} (expected {r.expected:.1f}, RR "
                f"{r.relative_risk:.3g}), LLR {r.log_likelihood_ratio:.3f}, p {r.p_value:.4g} | background "
                f"{r.background:.1f} (expected {r.expected_background:.1f}, RR {r.background_relative_risk:.3g}, "
                f"LLR {r.background_log_likelihood_ratio:.3f}, p {r.background_p_value:.4g})"
                + (f", significant in {r.draw_support:.0%} of draws" if np.isfinite(r.draw_support) else "")
                + f" -> {r.verdict}")
        top = self.declustered.most_likely
        lines.append("Posterior-mean declustered scan: " + (
            "no cluster" if top is None else
            f"most likely {top.n_locations} locations, background {top.cases:.1f} (expected {top.expected:.1f}), "
            f"LLR {top.log_likelihood_ratio:.3f}, p {top.p_value:.4g}"))
        if len(self.draws):
            d = self.draws
            q = np.nanquantile(d.log_likelihood_ratio, [0.025, 0.5, 0.975]) if d.log_likelihood_ratio.notna().any() \
                else [np.nan] * 3
            lines.append(
                f"Per-draw declustered scans: top LLR median {q[1]:.3f} (95% {q[0]:.3f} to {q[2]:.3f}); "
                f"P(top p <= {self.alpha:g}) = {(d.p_value <= self.alpha).mean():.2f}; background events "
                f"{d.n_background.mean():.1f} +- {d.n_background.std(ddof=1) if len(d) > 1 else 0:.1f}")
        return "\n".join(lines)

    def plot(self, *, path=None):
        """Three maps over the locations (squares): all events with the ordinary clusters coloured
        by verdict (blue: background hotspot, red: contagion only, grey dashed: not significant);
        the expected background events ``sum (1 - pi_n)`` with the significant clusters of the
        posterior-mean declustered scan; and each location's ``p_in_cluster``. A cluster of one
        location is drawn as a circle of half a cell (or 2% of the extent). Returns the matplotlib
        Figure (saved when ``path`` is given)."""
        import matplotlib.pyplot as plt
        from matplotlib.lines import Line2D
        from matplotlib.colors import Normalize, PowerNorm
        from matplotlib.patches import Circle

        loc = self.locations
        xy = loc[["x", "y"]].to_numpy()
        r_min = 0.5 * self.cell_size if self.cell_size is not None else 0.02 * float(np.ptp(xy, axis=0).max() or 1.0)
        colours = dict(zip(VERDICTS, ("tab:blue", "tab:red", "0.45")))
        fig, axes = plt.subplots(1, 3, figsize=(17, 5.8))

        def base(ax, values, label, cmap, vmax=None, sqrt=False):
            norm = PowerNorm(0.5, vmin=0, vmax=vmax) if sqrt else Normalize(vmin=0, vmax=vmax)
            sc = ax.scatter(xy[:, 0], xy[:, 1], c=values, s=16, marker="s", cmap=cmap, norm=norm, lw=0)
            fig.colorbar(sc, ax=ax, shrink=0.8, label=label)
            ax.set_aspect("equal")
            ax.set_xlabel("x")
            ax.set_ylabel("y")

        def circle(ax, x, y, radius, colour, rank, dashed=False):
            ax.add_patch(Circle((x, y), max(radius, r_min), fill=False, ec=colour, lw=1.2 if dashed else 2.2,
                                ls="--" if dashed else "-"))
            ax.annotate(str(rank), (x + max(radius, r_min), y + max(radius, r_min)), fontsize=8, color=colour)

        vmax = float(loc.events.max())
        base(axes[0], loc.events, "events (square-root scale)", "Greys", vmax, sqrt=True)
        for r, cl in zip(self.comparison.itertuples(), self.ordinary.clusters.itertuples()):
            circle(axes[0], cl.x, cl.y, cl.radius, colours[r.verdict], r.cluster, dashed=r.verdict == VERDICTS[2])
        axes[0].legend(handles=[Line2D([], [], color=colours[v], lw=2, ls="--" if v == VERDICTS[2] else "-", label=v)
                                for v in VERDICTS], loc="best", fontsize=8)
        axes[0].set_title("all events: ordinary clusters by verdict")
        base(axes[1], loc.background, "expected background events", "Greys", vmax, sqrt=True)
        sig = self.declustered.clusters[self.declustered.clusters.p_value <= self.alpha]
        for k, cl in enumerate(sig.itertuples()):
            circle(axes[1], cl.x, cl.y, cl.radius, "tab:blue", k + 1)
        axes[1].set_title(f"background events (posterior mean): {len(sig)} cluster(s) p <= {self.alpha:g}")
        has = loc.p_in_cluster.notna().any()
        base(axes[2], loc.p_in_cluster if has else (loc.declustered_cluster > 0) * 1.0,
             "P(in a significant background cluster)" if has else "in a significant background cluster", "viridis",
             1.0)
        axes[2].set_title(f"{self.n_draws} label draws" if has else "posterior-mean scan")
        fig.tight_layout()
        if path is not None:
            fig.savefig(path, dpi=110, bbox_inches="tight")
        return fig


# --------------------------------------------------------------------------- main
def declustered(coords, pi, *, cell_size=None, locations=None, population=None, expected=None, empty_cells="drop",
                n_draws=None, max_population=0.5, max_distance=None, min_cases=2, n_replicates=999, alpha=0.05,
                seed=None, executor=None, backend="auto", threads=None, progress=True) -> DeclusteredScanResult:
    """Spatial scan of the background events of a Hawkes process, beside the scan of all events.

    Each event is weighted by ``1 - pi_n``, its posterior probability of being a background
    event, so that a cluster made only of contagion (events triggered by earlier ones at the
    same place) is told apart from a hotspot of background risk. See the module notes
    (:mod:`hphawkes_py.scan.declustering`) for the three scans and their statistics.

    Parameters
    ----------
    coords : array_like (N, 2)
        Event locations, planar coordinates (km in the DC examples); Euclidean distances.
    pi : array_like (N,) or (S, N)
        Probability that each event was triggered by an earlier one (dimensionless, in [0, 1]):
        posterior means (``hp.hawkes.self_excitation(post)["mean"]``) or one row per posterior
        draw (``hp.hawkes.self_excitation_draws(post, S)``). ``pi = 0`` everywhere makes every
        event background and the declustered scans equal the ordinary one.
    cell_size : float, optional
        Aggregate the events onto the cells of a square grid of this side (coordinate units),
        anchored at the events' minimum x and y. The null is uniform over the cells (equal area,
        equal expected count). Give this or ``locations``.
    locations : array_like (L, 2), optional
        Aggregate every event onto its nearest location (e.g. tract centroids; ties to the first).
    population, expected : array_like (L,), optional
        With ``locations``: the population at risk (or area) of each location, and/or the expected
        counts under the null (as :func:`~hphawkes_py.scan.poisson`; expected counts are rescaled to
        the events, and to the background events). Neither: equal expected counts (equal areas).
    empty_cells : {"drop", "keep"}
        With ``cell_size``: ``"drop"`` leaves cells without any event out of the study area (for
        sensor data such as ShotSpotter, the cells ever reporting an event are the covered area;
        the number left out is reported), ``"keep"`` scans the whole bounding box.
    n_draws : int, optional
        Label draws for the per-draw scans. ``pi`` (S, N): the first ``n_draws`` rows (default
        all S); ``pi`` (N,): ``n_draws`` draws from the posterior means (default 100). 0 skips the
        per-draw scans (only the posterior-mean scan is made).
    max_population : float in (0, 0.5]
        Maximum window size as a fraction of the population (area) at risk.
    max_distance : float, optional
        Maximum circle radius (coordinate units).
    min_cases : int >= 0
        High-rate windows need at least this many events (background events, expected background
        events in the posterior-mean scan); SaTScan's default 2.
    n_replicates : int >= 1
        Monte Carlo replicates of every scan (the same replicates for all: common random numbers).
    alpha : float in (0, 1)
        Significance level of ``p_in_cluster``, ``draw_support`` and the verdicts.
    seed : None, int, SeedSequence or Generator
        Root of the Monte Carlo replicates (with an int, the ordinary scan is exactly
        ``hp.scan.poisson(..., seed=seed)``) and of the label draws.
    executor, backend, threads
        As in :func:`~hphawkes_py.scan.poisson` (the executor runs the Monte Carlo batches).
    progress : bool
        Progress bar over the label draws.

    Returns
    -------
    DeclusteredScanResult
        ``ordinary``, ``declustered`` (:class:`~hphawkes_py.scan.ScanResult`), ``draws``, ``locations`` and
        ``comparison`` tables; ``comparison.verdict`` says which ordinary clusters are contagion only.

    Examples
    --------
    A cluster of 30 events that are mostly triggered (``pi`` = 0.9) among 150 background events:

    >>> rng = np.random.default_rng(1)
    >>> x = np.vstack([rng.uniform(0, 4, (150, 2)), rng.normal(1.0, 0.2, (30, 2))])
    >>> pi = np.r_[np.full(150, 0.1), np.full(30, 0.9)]
    >>> res = hp.scan.declustered(x, pi, cell_size=1.0, n_draws=5, n_replicates=49, seed=1,
    ...                           backend="cpu", progress=False)
    >>> res.comparison[["cluster", "events", "p_value", "verdict"]]
       cluster  events  p_value         verdict
    0        1      61     0.02  contagion only

    With posterior draws of ``pi`` from a Hawkes fit (``post``): ``pi =
    hp.hawkes.self_excitation_draws(post, n_draws=100, seed=1)``, a (100, N) array.
    """
    xy = _check_xy(coords)
    n = xy.shape[0]
    p = _check_pi(pi, n)
    check_in(empty_cells, "empty_cells", ("drop", "keep"))
    if (cell_size is None) == (locations is None):
        raise ValueError("give exactly one of cell_size= (a square grid) or locations= (nearest location)")
    if cell_size is not None and (population is not None or expected is not None):
        raise ValueError("population= and expected= go with locations= (one value per location); with cell_size= the "
                         "null is uniform over the grid cells")
    max_population = _check_max_population(max_population)
    max_distance = None if max_distance is None else check_positive(max_distance, "max_distance")
    alpha = check_probability(alpha, "alpha", high_open=True)
    run = check_run(min_cases, n_replicates, "high", "no-overlap", progress, threads, seed, backend, executor)
    min_cases, n_replicates, progress, threads, resolved = (run.min_cases, run.n_replicates, run.progress, run.threads,
                                                            run.backend)
    S = p.shape[0] if p.ndim == 2 else None
    if n_draws is None:
        n_draws = S if S is not None else DEFAULT_LABEL_DRAWS
    else:
        n_draws = check_int(n_draws, "n_draws", minimum=0, maximum=S)
    agg = _grid(xy, cell_size, empty_cells) if cell_size is not None else _nearest(xy, locations, population, expected)
    L = len(agg.coords)
    gid = agg.event_location
    events = np.bincount(gid, minlength=L).astype(np.int64)
    null_size = agg.expected if agg.expected is not None else agg.population
    empty = (null_size <= 0) & (events > 0)
    if empty.any():
        k = int(np.argmax(empty))
        what = "expected" if agg.expected is not None else "population"
        raise ValueError(f"locations[{k}] receives {events[k]} event(s) but has zero {what}: the Poisson rate there is "
                         f"undefined (give it a positive {what}, or leave the location out)")
    pibar = p.mean(axis=0) if p.ndim == 2 else p
    weights = np.bincount(gid, weights=1.0 - pibar, minlength=L)
    B = float(weights.sum())
    if B < 1.0:
        raise ValueError(f"the expected number of background events sum(1 - pi) is {B:.3g} (< 1): there are no "
                         f"background events to scan")
    root = _seed_root(seed)
    ids = np.arange(L)
    scan_kw = dict(max_population=max_population, max_distance=max_distance, min_cases=min_cases,
                   n_replicates=n_replicates, direction="high", location_ids=ids, executor=executor,
                   backend=resolved, threads=threads, progress=False)

    ordinary = poisson(agg.coords, events, agg.population, expected=agg.expected, seed=_fresh(root), **scan_kw)
    mean_scan = _weighted_scan(ordinary, weights, agg.expected is None, run, root)

    # the ordinary clusters' windows, re-tested on the background events below
    windows = [np.asarray(m, dtype=np.int64) for m in ordinary.clusters.location_ids]
    e_share = ordinary._loc_expected / n  # null share of every location (sums to 1)

    # per-draw scans of sampled background labels
    rng = np.random.default_rng(_fresh(root))
    in_sig = np.zeros((n_draws, L), dtype=bool)
    window_sig = np.zeros((n_draws, len(windows)), dtype=bool)
    draw_cols = ["draw", "n_background", "n_significant", "center", "x", "y", "radius", "location_ids", "n_locations",
                 "cases", "expected", "relative_risk", "log_likelihood_ratio", "p_value"]
    rows = []
    with progress_bar(total=n_draws, desc="declustered scans", enabled=progress) as bar:
        for s in range(n_draws):
            ps = p[s] if p.ndim == 2 else pibar
            z = rng.random(n) < 1.0 - ps
            counts = np.bincount(gid[z], minlength=L).astype(np.int64)
            row = {"draw": s, "n_background": int(counts.sum()), "n_significant": 0}
            if counts.sum() > 0:
                res = poisson(agg.coords, counts, agg.population, expected=agg.expected, seed=_fresh(root), **scan_kw)
                cl = res.clusters
                sig = cl[cl.p_value <= alpha]
                row["n_significant"] = len(sig)
                for ids_k in sig.location_ids:
                    in_sig[s, np.asarray(ids_k, dtype=np.int64)] = True
                B_s = float(counts.sum())
                for k, m in enumerate(windows):
                    window_sig[s, k] = _window_p_value(float(counts[m].sum()), float(e_share[m].sum()) * B_s, B_s,
                                                       min_cases, res.null_llr) <= alpha
                if len(cl):
                    top = cl.iloc[0]
                    row.update({k: top[k] for k in draw_cols[3:]})
            rows.append(row)
            bar.update(1)
    draws = pd.DataFrame(rows, columns=draw_cols)
    p_in = in_sig.mean(axis=0) if n_draws else np.full(L, np.nan)

    def ranks(result):
        out = np.zeros(L, dtype=np.int64)
        for k, r in enumerate(result.clusters.itertuples()):
            if r.p_value <= alpha:
                out[np.asarray(r.location_ids, dtype=np.int64)] = k + 1
        return out

    e_all = ordinary._loc_expected
    e_bg = mean_scan._loc_expected
    loc_table = pd.DataFrame({"location_id": ids, "x": agg.coords[:, 0], "y": agg.coords[:, 1], **agg.columns,
                              "events": events, "background": weights, "expected": e_all, "expected_background": e_bg,
                              "ordinary_cluster": ranks(ordinary), "declustered_cluster": ranks(mean_scan),
                              "p_in_cluster": p_in})

    return DeclusteredScanResult(
        ordinary=ordinary, declustered=mean_scan, draws=draws, locations=loc_table,
        comparison=_comparison(ordinary, mean_scan, windows, weights, window_sig, alpha, min_cases),
        event_location=gid, n_events=n, background_total=B,
        pi_source="posterior draws" if p.ndim == 2 else "posterior mean", alpha=alpha, n_draws=n_draws,
        cell_size=None if cell_size is None else float(cell_size), empty_cells=empty_cells if cell_size is not None
        else None, n_empty_dropped=agg.n_empty_dropped, backend=ordinary.backend,
    )
