"""The purely spatial ordinal and multinomial scans once their data are checked: the circles, the observed best
window of every centre, the Monte Carlo and the cluster table (:func:`scan_categories`, for
:func:`~hphawkes_py.scan.ordinal` and :func:`~hphawkes_py.scan.multinomial`).

The observed windows are scored by :class:`~._categorical.CategoricalEngine` (or its CUDA kernel). On the CPU the
replicates' maxima come from the space-time scans' cylinder kernel over a single day
(:class:`~.cpu_categorical_space_time.CategoricalCylinderEngine`, :class:`CircleReplicates`): the same values bit
for bit, with its left-outs (the bound on a window of W cases, Pearson's chi-square against each replicate's best
so far after a pilot over every 16th centre, and the ordinal pooling only where the free likelihood can beat it).
"""
from __future__ import annotations

import math

import numpy as np

from .._backend import get_device, is_gpu_backend, threads_context
from ._categorical import CategoricalEngine, GpuCategoricalEngine, categorical_monte_carlo, window_categories
from .cpu_categorical_space_time import CategoricalCylinderEngine, permuted_cumulative
from .locations import _radius, make_centres, merge_rows, report_rows, with_empty_locations
from .result import Candidates, _clusters
from .windows import build_windows

__all__ = ["scan_categories", "CircleReplicates"]


class CircleReplicates:
    """The Monte Carlo maxima of a purely spatial ordinal or multinomial scan (``engine``: its
    :class:`~._categorical.CategoricalEngine`; ``n_loc`` (L,) the cases per location) through the cylinder kernel
    over one day: ``max_llr(counts)`` for the replicates' cases per location and category (L, K, R)."""

    backend = "cpu"

    def __init__(self, engine: CategoricalEngine, n_loc: np.ndarray):
        n_cum = np.zeros((len(n_loc), 2), dtype=np.int64)
        n_cum[:, 0] = n_loc
        day = np.zeros(1, dtype=np.int64)
        self.cylinders = CategoricalCylinderEngine(engine.offsets, engine.neighbors, engine.boundary, n_cum, day, day,
                                                   np.asarray(engine.tot).astype(np.int64), engine.ordinal,
                                                   engine.want_high, engine.want_low)

    @property
    def n_centres(self) -> int:
        return self.cylinders.n_centres

    def max_llr(self, counts: np.ndarray) -> np.ndarray:
        """(R,) every replicate's largest window LLR (0: none)."""
        L, K, R = np.shape(counts)
        cum = np.zeros((L, 2, K, R), dtype=np.int32)  # the one day's cases, then none after it
        cum[:, 0] = counts
        return self.cylinders.max_llr(cum)

    def max_llr_permuted(self, loc, cat, K: int, L: int, seeds) -> np.ndarray:
        """(R,) :meth:`max_llr` of the permutations of :func:`~._categorical.permute_categories` with ``seeds``,
        drawn by the space-time scans' fused kernel (:func:`~.cpu_categorical_space_time.permuted_cumulative`, the
        same permutations) straight into the cylinder kernel's layout."""
        return self.cylinders.max_llr(permuted_cumulative(loc, np.zeros(len(loc), dtype=np.int64), cat, K, L, 1,
                                                          seeds))


def scan_categories(xy, ids, check_ids, ws, run, cat, labels, ordinal, empty=None) -> dict:
    """The scan of the ordinal (``ordinal``) or multinomial model once its data are checked:
    ``xy`` (n, 2) each case's coordinates, ``ids`` their location ids (user's when ``check_ids``),
    ``ws``, ``run`` the checked window and run settings, ``cat`` (n,) the cases' category codes 0..K-1
    of ``labels``; ``empty``: locations without cases, centres and members of the circles too
    (:func:`~.locations.check_empty_locations`). Returns the :class:`~hphawkes_py.scan.ScanResult` fields."""
    n = xy.shape[0]
    K = len(labels)
    loc_coords, gid, members = merge_rows(xy)
    report = report_rows(members, ids, gid, check_ids)
    n_merged = n - len(members)
    loc_coords, report, ids, row_loc = with_empty_locations(loc_coords, report, ids, gid, empty)
    L = len(loc_coords)
    n_loc = np.bincount(gid, minlength=L).astype(np.int64)
    counts = np.zeros((L, K), dtype=np.int64)
    np.add.at(counts, (gid, cat), 1)
    tot = counts.sum(axis=0).astype(np.float64)
    want_high = run.direction in ("high", "both") or not ordinal
    want_low = run.direction in ("low", "both") and ordinal
    centres, centre_loc = make_centres(loc_coords, ws.grid_cell)
    with threads_context(run.threads):
        points = ws.geo.points(loc_coords)
        cpoints = ws.geo.points(centres)
        offsets, neighbors, _, boundary = build_windows(cpoints, points, n_loc, ws.max_population * n,
                                                        ws.geo.to_working(ws.max_distance))
        engine = CategoricalEngine(offsets, neighbors, boundary, tot, bool(ordinal), want_high, want_low)
        if is_gpu_backend(run.backend):
            engine = GpuCategoricalEngine(engine, device=get_device(run.backend), backend=run.backend)
        best, best_entry = engine.best_per_centre(counts[:, :, None])
        replicates = engine if is_gpu_backend(run.backend) else CircleReplicates(engine, n_loc)
        null_llr = categorical_monte_carlo(replicates, gid, cat, K, L, run)
    tables = {}

    def window_stats(mem, c, j, i):
        tables[i] = window_categories(counts[mem].sum(axis=0), tot, labels, ordinal, want_high, want_low)
        return c, math.nan, math.nan

    cand = Candidates(best[:, 0], best_entry[:, 0], offsets, neighbors, centres, centre_loc)
    clusters = _clusters(cand, _radius(ws.geo, points, cpoints), n_loc, report, ids, null_llr, window_stats,
                         extra=lambda i: tables[i])
    return dict(clusters=clusters, null_llr=null_llr, backend=run.backend, n_centres=len(centres),
                n_windows=int(boundary.sum()), max_population=ws.max_population, direction=run.direction,
                n_replicates=run.n_replicates, grid_cell=ws.grid_cell, max_distance=ws.max_distance,
                distance=ws.distance, n_locations=L, n_merged=n_merged, _loc_coords=loc_coords, _loc_cases=n_loc,
                _loc_controls=None, _loc_population=n_loc, _row_ids=ids, _row_loc=row_loc)
