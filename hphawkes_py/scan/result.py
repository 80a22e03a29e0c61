"""The result of a scan: the cluster table (most likely, then secondary clusters) and its views.

:func:`_clusters` ranks the windows as SaTScan does and keeps the secondary clusters that share
no location with a more likely one; :class:`ScanResult` holds the table with the null maxima and
the settings, and gives SaTScan's location table, a summary and a plot.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pandas as pd

from ._report_format import NORMAL_MODELS, category_report_lines
from .monte_carlo import gumbel_p_values
from .time_trend import time_trend_text

#: SaTScan's statements of the spatial adjustment and of the known relative risks in its analysis summary
SPATIAL_ADJUSTMENT_TEXT = "adjusting for purely spatial clusters with stratified randomization"
SPATIAL_NONPARAMETRIC_TEXT = "adjusting for purely spatial clusters nonparametrically"
KNOWN_RISKS_TEXT = "adjusting for known relative risks"
DAY_OF_WEEK_TEXT = "adjusting for weekly trends nonparametrically"
PURELY_TEMPORAL_TEXT = "including purely temporal clusters"
PURELY_SPATIAL_TEXT = "including purely spatial clusters"
BOTH_PURE_TEXT = "including purely spatial and purely temporal clusters"


def purely_temporal_row(cl) -> bool:
    """Whether a row of a result's ``clusters`` is a purely temporal cluster (every location; see
    :attr:`ScanResult.purely_temporal`), which has no centre, radius or location table of its own."""
    return bool(getattr(cl, "purely_temporal", False) is True)


def adjustment_texts(result) -> list:
    """SaTScan's statements, in its order (``ParametersPrint::PrintAnalysisSummary``) and without full
    stops, of what a result's analysis included and was adjusted for: purely spatial and purely temporal
    clusters, its time trend (:func:`~.time_trend.time_trend_text`), spatial adjustment, the day of the week
    and known relative risks."""
    pt, ps = getattr(result, "purely_temporal", False), getattr(result, "purely_spatial", False)
    out = [BOTH_PURE_TEXT if pt and ps else PURELY_TEMPORAL_TEXT if pt else PURELY_SPATIAL_TEXT] if pt or ps else []
    if getattr(result, "time_trend", None) is not None:
        out.append(time_trend_text(result.time_trend))
    if getattr(result, "spatial_adjustment", None) is not None:
        out.append(SPATIAL_NONPARAMETRIC_TEXT if result.spatial_adjustment == "nonparametric" else
                   SPATIAL_ADJUSTMENT_TEXT)
    if getattr(result, "day_of_week", False):
        out.append(DAY_OF_WEEK_TEXT)
    if getattr(result, "known_risks", False):
        out.append(KNOWN_RISKS_TEXT)
    return out

__all__ = ["ScanResult", "Candidates"]

_TITLES = {"bernoulli": "Bernoulli spatial scan", "poisson": "Discrete Poisson spatial scan",
           "space_time_permutation": "Space-time permutation scan",
           "space_time_poisson": "Discrete Poisson space-time scan", "space_time_bernoulli": "Bernoulli space-time scan",
           "declustered": "Declustered Poisson spatial scan (expected background events)",
           "normal": "Normal spatial scan (continuous measurements)",
           "weighted_normal": "Weighted normal spatial scan (continuous measurements)",
           "exponential": "Exponential spatial scan (survival times)",
           "space_time_normal": "Normal space-time scan (continuous measurements)",
           "space_time_weighted_normal": "Weighted normal space-time scan (continuous measurements)",
           "temporal_normal": "Normal purely temporal scan (continuous measurements)",
           "temporal_weighted_normal": "Weighted normal purely temporal scan (continuous measurements)",
           "temporal_exponential": "Exponential purely temporal scan (survival times)",
           "space_time_ordinal": "Ordinal space-time scan (ordered categories)",
           "space_time_multinomial": "Multinomial space-time scan (unordered categories)",
           "temporal_ordinal": "Ordinal purely temporal scan (ordered categories)",
           "temporal_multinomial": "Multinomial purely temporal scan (unordered categories)"}
_SIZE_OF = {"poisson": "expected cases", "space_time_permutation": "cases", "declustered": "expected cases",
            "normal": "observations", "weighted_normal": "observations", "exponential": "patients",
            "space_time_normal": "observations", "space_time_weighted_normal": "observations",
            "space_time_ordinal": "cases", "space_time_multinomial": "cases"}

def _fmt_count(c) -> str:
    """A case count for the summaries: whole counts as integers, expected counts to 2 decimals."""
    return f"{c:.2f}" if isinstance(c, (float, np.floating)) and c != round(c) else f"{int(round(c))}"


@dataclasses.dataclass(frozen=True, repr=False)
class ScanResult:
    """Result of a spatial or space-time scan: the clusters, the null maxima and the settings.

    :func:`~hphawkes_py.scan.bernoulli`, :func:`~hphawkes_py.scan.poisson`,
    :func:`~hphawkes_py.scan.space_time_permutation` and :func:`~hphawkes_py.scan.space_time` build
    it; its fields are the parameters below.

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
    time_trend : dict, optional
        The space-time Poisson scan's time-trend adjustment (:func:`hphawkes_py.scan.space_time`'s
        ``time_trend``): ``adjustment``, ``estimated``, ``beta`` (per day), ``daily_percent`` and
        ``annual_percent`` (log-quadratic: ``alpha``, ``beta``, ``beta2``, ``origin``, as
        :func:`~hphawkes_py.scan.time_trend.time_trend_weights` gives them); ``{"adjustment": "stratified"}``
        for time-stratified randomization (both space-time models: ``log_likelihood_ratio`` holds SaTScan's
        test statistic); None without one.
    spatial_adjustment : str, optional
        ``"stratified"`` or ``"nonparametric"``: the space-time Poisson scan adjusted for purely spatial
        clusters by stratified randomization or nonparametrically (:func:`hphawkes_py.scan.space_time`'s
        ``spatial_adjustment``); None without it.
    known_risks : bool
        True: the expected cases were adjusted for known relative risks (:mod:`hphawkes_py.scan.known_risks`,
        set by :func:`~hphawkes_py.scan.run_prm`).
    day_of_week : bool
        True: the space-time scan was adjusted for the day of the week (``day_of_week`` of
        :func:`~hphawkes_py.scan.space_time_permutation` and :func:`~hphawkes_py.scan.space_time`).
    purely_temporal : bool
        True: a space-time scan that also scanned the purely temporal clusters (``purely_temporal`` of
        :func:`~hphawkes_py.scan.space_time`); ``clusters.purely_temporal`` marks the one listed (every
        location; ``center`` "All", no coordinates or radius).
    purely_spatial : bool
        True: a space-time scan that also scanned the purely spatial clusters (``purely_spatial`` of
        :func:`~hphawkes_py.scan.space_time`): a cluster whose ``start`` and ``end`` are the study period's
        first and last days may be one.
    time_precision : {"day", "month", "year"}
        The precision of the case times (SaTScan's ``PrecisionCaseTimes``; set by
        :func:`~hphawkes_py.scan.run_prm`): SaTScan's tables and report give a purely temporal cluster's time
        frame in it ("1985 to 1991"), every other cluster's in days.
    non_euclidean : bool
        True: the windows came from lists of neighbours (``neighbors`` of :func:`~hphawkes_py.scan.bernoulli` and
        :func:`~hphawkes_py.scan.poisson`; SaTScan's non-Euclidean neighbors file), not circles: a cluster has no
        radius, and its ``x``, ``y`` are its first location's coordinates (NaN when none were given).
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
    time_trend: Any = None
    spatial_adjustment: Any = None
    known_risks: bool = False
    day_of_week: bool = False
    purely_temporal: bool = False
    purely_spatial: bool = False
    time_precision: str = "day"
    non_euclidean: bool = False
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
            "time_trend": self.time_trend,
            "spatial_adjustment": self.spatial_adjustment,
            "known_risks": self.known_risks,
            "day_of_week": self.day_of_week,
            "non_euclidean": self.non_euclidean,
            "purely_temporal": self.purely_temporal,
            "purely_spatial": self.purely_spatial,
        }

    def to_csv(self, path, **kwargs) -> None:
        """Write the cluster table; ``location_ids`` as space-separated ids."""
        df = self.clusters.copy()
        df["location_ids"] = [" ".join(str(v) for v in ids) for ids in df["location_ids"]]
        df.to_csv(path, index=False, **kwargs)

    def summary(self) -> str:
        normal = self.model in NORMAL_MODELS
        totals = (f"{self.n_cases} observations" if normal
                  else f"{_fmt_count(self.n_cases)} cases, population {self.n_population:.10g}")
        lines = [
            f"{_TITLES.get(self.model, self.model)} ({self.direction} {'means' if normal else 'rates'}), "
            f"backend={self.backend}",
            f"  {self.n_locations} locations ({self.n_merged} rows merged), {totals}; max window "
            + (f"{self.max_population:.0%} of the {_SIZE_OF.get(self.model, 'population')}"
               if self.max_population is not None else "not limited by population")
            + (f", radius <= {self.max_distance:g}" if self.max_distance is not None else ""),
            f"  {self.n_centres} centres, {self.n_windows} windows, {self.n_replicates} replicates",
        ]
        lines += [f"  {text}" for text in adjustment_texts(self)]
        for k, row in self.clusters.iterrows():
            ids = ", ".join(str(v) for v in row.location_ids[:12]) + (" ..." if row.n_locations > 12 else "")
            when = ""
            if "start" in row.index:
                a, b = (v.date() if hasattr(v, "date") else v for v in (row.start, row.end))
                when = f" days {a} to {b};"
            if purely_temporal_row(row) and "mean_inside" in row.index:
                lines.append(
                    f"{k + 1}. all locations (purely temporal);{when} {int(row.cases)} observations, mean "
                    f"{row.mean_inside:.6g} inside, {row.mean_outside:.6g} outside (variance {row.variance:.4g}); "
                    f"LLR {row.log_likelihood_ratio:.6f}; p {row.p_value:.4g}")
                continue
            if purely_temporal_row(row):
                lines.append(
                    f"{k + 1}. all locations (purely temporal);{when} cases {_fmt_count(row.cases)} (expected "
                    f"{row.expected:.2f}, RR {row.relative_risk:.3g}); LLR {row.log_likelihood_ratio:.6f}; "
                    f"p {row.p_value:.4g}")
                continue
            if "mean_inside" in row.index:  # the normal models: observations and means, no expected count
                lines.append(
                    f"{k + 1}. locations {ids}\n   {self._window_of(row)}; "
                    f"{int(row.cases)} observations, mean {row.mean_inside:.6g} inside, {row.mean_outside:.6g} "
                    f"outside (variance {row.variance:.4g}); LLR {row.log_likelihood_ratio:.6f}; p {row.p_value:.4g}")
                continue
            if "observed_by_category" in row.index:  # ordinal, multinomial: SaTScan's category table
                kind = f" ({row.cluster_type})" if "cluster_type" in row.index else ""
                table = "; ".join(f"{label.lower()} {value}" for label, value in category_report_lines(row)[1:])
                lines.append(
                    f"{k + 1}. locations {ids}\n   {self._window_of(row)}; "
                    f"{int(row.cases)} cases{kind}; LLR {row.log_likelihood_ratio:.6f}; p {row.p_value:.4g}\n"
                    f"   {table}")
                continue
            lines.append(
                f"{k + 1}. locations {ids}\n   {self._window_of(row)};{when} "
                f"cases {_fmt_count(row.cases)}/{row.population:.10g} (expected {row.expected:.2f}, "
                f"RR {row.relative_risk:.3g}); "
                f"LLR {row.log_likelihood_ratio:.6f}; p {row.p_value:.4g} (Gumbel {row.gumbel_p_value:.3g})"
            )
        return "\n".join(lines)

    def _window_of(self, row) -> str:
        """Where a cluster's window is, for :meth:`summary`: its circle, or the neighbour list it leads."""
        if self.non_euclidean:
            return f"the neighbour list of {row.location_ids[0]} (no circle)"
        return f"centre ({row.x:.6g}, {row.y:.6g}) radius {row.radius:.6g}"

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
            if purely_temporal_row(cl):
                continue  # every location: no location table of its own (as SaTScan's .gis)
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


@dataclasses.dataclass(frozen=True)
class Candidates:
    """The best window of every centre (or window block), the candidates of the cluster table.

    ``llr`` (m,): its LLR (0: no window qualifies); ``entry`` (m,): the neighbour-list entry where it
    ends; ``offsets``, ``neighbors``: the windows' CSR neighbour lists; ``centres`` (m, 2): the
    centres (coordinate units); ``centre_loc`` (m,): the location at each centre (-1: a grid point).
    """

    llr: np.ndarray
    entry: np.ndarray
    offsets: np.ndarray
    neighbors: np.ndarray
    centres: np.ndarray
    centre_loc: np.ndarray


def _clusters(candidates: Candidates, radius_of, cases, members_of, ids, null_llr, window_stats, *, stat=None,
              extra=None, tiebreak=None, count=None, overlap=None, exempt=-1):
    """Most likely + secondary clusters (no geographical overlap) as a DataFrame, from the
    ``candidates`` (``cases``: per location; ``members_of``: the input rows of each location,
    ``ids`` their ids; ``null_llr``: the Monte Carlo maxima).

    ``window_stats(members, c, j, i)`` gives the model's ``(population, expected, relative_risk)``
    of the window ending at entry ``j`` with locations ``members`` and ``c`` cases;
    ``radius_of(members, i)`` the distance from centre ``i`` to its farthest member. ``stat``
    (default ``best``): the test statistic that ranks windows and gives p-values (elliptic scans:
    the penalised LLR); ``extra(i)``: more columns for window block ``i``; ``tiebreak``: the order
    of equal statistics (default the block index; elliptic scans: the centre's input order);
    ``count(members, i)``: the window's cases (default: the members' ``cases``; space-time: the
    cylinder's); ``overlap(members, i)``: whether candidate ``i`` may not be listed beside the clusters
    listed so far (it records the candidate when it may; default: any location in common); candidate
    ``exempt`` (a purely temporal cluster, SaTScan's ``ShouldRetainCandidateCluster``) is listed without
    that check and keeps no later one out."""
    best, best_entry = candidates.llr, candidates.entry
    offsets, neighbors = candidates.offsets, candidates.neighbors
    centres, centre_loc = candidates.centres, candidates.centre_loc
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
        if i == exempt:
            pass
        elif overlap is None:
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
