"""Kulldorff's purely spatial scan statistics, Bernoulli and discrete Poisson, written once against an engine.

The algorithm (Kulldorff 1997; SaTScan's purely spatial analyses; Larew et al. 2010 for the GPU
formulation):

1. locations with identical coordinates are merged (counts summed);
2. circular windows are centred on every location (or on the points of a regular grid,
   ``grid_cell``) and grown through the nearest neighbours until the window size (Bernoulli:
   cases + controls; Poisson: the population at risk) would exceed ``max_population`` x the
   total; locations at the same distance enter one at a time, the lesser coordinates first, each
   making a window, as in SaTScan (elliptic windows likewise, by the untransformed coordinates);
3. each window gets the model's log likelihood ratio (zero unless its rate is higher -- or lower,
   or either -- than outside);
4. the most likely cluster is the window with the largest LLR; secondary clusters are the
   best windows of the other centres that share no location with a more likely reported
   cluster (SaTScan's default "no geographical overlap");
5. Monte Carlo inference: ``n_replicates`` null data sets (Bernoulli: the C cases relabelled
   among the N persons, per location a multivariate hypergeometric draw; Poisson: the C cases
   redistributed multinomially by the expected counts), the maximum LLR of each,
   p = (1 + #{null >= observed}) / (1 + n_replicates), and SaTScan's Gumbel approximation.

Both models share everything after their checks (:func:`_scan`); they differ in the window
sizes, the engine's LLR and the null's weights.
"""
from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Any

import numpy as np
import pandas as pd

from .._backend import get_device, is_gpu_backend, threads_context
from .._validate import as_float_array, check_positive
from .ellipses import _check_ellipses, _elliptic_penalties, _elliptic_report, _elliptic_windows
from .engine import klogk_table, make_engine
from .isotonic import IsotonicEngine, step_columns
from .locations import (Geometry, _check_geometry, _check_max_population, _check_xy, _radius, _row_locations,
                        check_centres, check_counts, check_ids_per_location, check_location_ids, circle_limit,
                        make_centres, merge_rows, prepare_locations)
from .monte_carlo import RunOptions, _monte_carlo, check_run
from .neighbor_lists import check_neighbors, neighbor_windows
from .result import Candidates, ScanResult, _clusters
from .secondary import centre_overlap
from .windows import build_windows, cumulative_expected

__all__ = ["bernoulli", "poisson", "indirect_expected"]


def bernoulli(coords, cases, controls, *, max_population=0.5, n_replicates=999, direction="high",
              secondary="no-overlap", grid_cell=None, max_distance=None, distance="euclidean", min_cases=0,
              window="circle", ellipse_shapes=(1.5, 2, 3, 4, 5), ellipse_angles=(4, 6, 9, 12, 15), penalty="medium",
              location_ids=None, seed=None, executor=None, backend="auto", threads=None, progress=True,
              circle_population=None, max_circle_population=0.5, centres=None, neighbors=None,
              max_reported_population=None, max_reported_distance=None, risk_function="standard") -> ScanResult:
    """Kulldorff's purely spatial Bernoulli scan statistic with Monte Carlo inference.

    Semantics follow SaTScan's purely spatial Bernoulli analysis with circular (or elliptic)
    windows.

    Parameters
    ----------
    coords : array_like (n, 2)
        Planar (Cartesian) location coordinates, real numbers of any magnitude (not dates);
        distances are Euclidean. Latitude/longitude is not converted: project it first (or accept
        the planar approximation).
    cases, controls : array_like (n,)
        Non-negative integer counts per location (point data: 1/0).
    max_population : float in (0, 0.5]
        Maximum window population (cases + controls) as a fraction of the total.
    n_replicates : int >= 1
        Monte Carlo replicates (999 or 9999 as in SaTScan).
    direction : {"high", "low", "both"}
        Scan for windows with a higher (lower, either) case proportion than outside.
    secondary : {"no-overlap", "no-centres-in-others", "no-centres-in-more-likely", "no-centres-in-less-likely", \
"no-pairs-of-centres", "no-restrictions"}
        Secondary clusters: best window of each centre, kept when it shares no location
        with a more likely reported cluster (SaTScan's default), or by SaTScan's other criteria on the
        circles' centres and radii (:mod:`hphawkes_py.scan.secondary`; circles only). As in SaTScan's
        output, secondary clusters whose LLR is below the maximum of every replicate (Monte Carlo
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
        circle alone (the circular scan's clusters, with the elliptic scan's columns). Each shape
        is > 1; each number of angles at most 360, and at most 1000 ellipses in all (every ellipse
        is a scan of every centre).
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
    circle_population : array_like (n,), optional
        The population of each row's location in SaTScan's max circle size file (rows of one location
        agree): windows then also hold at most ``max_circle_population`` of its total, on top of
        ``max_population`` and ``max_distance`` (SaTScan's ``UseMaxCirclePopulationFileOption``).
    max_circle_population : float in (0, 0.5]
        See ``circle_population``.
    centres : array_like (m, 2), optional
        The circle centres themselves (coordinates as ``coords``; SaTScan's grid file, ``UseGridFile``),
        instead of the locations; not with ``grid_cell`` or ``window="ellipse"``.
    neighbors : sequence of sequences of location ids, optional
        Windows from lists of neighbours instead of circles (SaTScan's non-Euclidean neighbors file,
        :mod:`hphawkes_py.scan.neighbor_lists`): one list per centre, the centre's id first and then its
        neighbours' in the order a window takes them; every leading run of a list is a window, cut at
        ``max_population`` (and ``max_circle_population``). Needs ``location_ids``; ``coords`` may then be
        None (locations known by id alone). Not with ``window="ellipse"``, ``grid_cell``, ``centres``,
        ``max_distance`` or a ``secondary`` criterion other than "no-overlap". The clusters have no radius.
    max_reported_population, max_reported_distance : float, optional
        Report only clusters within these limits (a fraction of the total up to ``max_population``; a radius),
        while the Monte Carlo, and so every p-value, scans all the windows (SaTScan's "restrict reported clusters
        to maximum geographical cluster size", ``UseReportOnlySmallerClusters``); circles and neighbour lists.
    risk_function : {"standard", "isotonic"}
        "isotonic": SaTScan's isotonic spatial scan (``IsotonicScan=1``; :mod:`hphawkes_py.scan.isotonic`): around
        each centre a risk that falls in steps with the distance (the isotonic estimate over its largest circle),
        one cluster per centre, with the columns ``steps``, ``step_location_ids``, ``step_radius``,
        ``step_cases``, ``step_expected`` and ``step_relative_risk``. Circles around the locations only (not with
        ``window="ellipse"``, ``grid_cell``, ``centres``, ``neighbors``, reported limits or ``min_cases`` above
        2).

    Returns
    -------
    ScanResult
        ``model="bernoulli"``; ``clusters``, most likely first (see :class:`~hphawkes_py.scan.ScanResult`).

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
    coords, placed = _by_id(coords, neighbors, location_ids, len(np.asarray(cases).reshape(-1)))
    loc = prepare_locations(coords, cases, controls)
    n_in = sum(len(m) for m in loc.members)
    ids = check_location_ids(location_ids, n_in)
    ws = _check_windows(loc.coords, max_population, max_distance, grid_cell, distance, window, ellipse_shapes,
                        ellipse_angles, penalty, centres)
    ws = _with_neighbors(ws, neighbors, placed, ids, loc.members)
    ws = _with_reported(ws, max_reported_population, max_reported_distance)
    if circle_population is not None:
        ws = dataclasses.replace(ws, circle=circle_limit(circle_population, max_circle_population,
                                                         _row_locations(loc.members), len(loc.members)))
    isotonic = _check_risk_function(risk_function, ws, min_cases, neighbors,
                                    (max_reported_population, max_reported_distance))
    run = check_run(min_cases, n_replicates, direction, secondary, progress, threads, seed, backend, executor)
    _check_secondary(ws, run)
    if loc.n_merged and neighbors is None:
        warnings.warn(
            f"{loc.n_merged} input row(s) share coordinates with another row and were merged "
            f"({n_in} rows -> {len(loc.members)} locations); counts were summed",
            UserWarning, stacklevel=2,
        )
    C = int(loc.cases.sum())
    N = C + int(loc.controls.sum())
    pop = loc.pop

    def bernoulli_engine(windows):
        npop = windows[2]

        def window_stats(members, c, j, i):
            n = int(npop[j])
            inside, outside = c / n, (C - c) / (N - n)
            return n, n * C / N, inside / outside if outside > 0 else math.inf

        if isotonic:
            engine = _isotonic_engine(windows, pop, C, N, "bernoulli", run.direction, run.backend)
        else:
            engine = make_engine(windows, klogk_table(N), C, N, run.direction, backend=run.backend,
                                 min_cases=run.min_cases, location_size=pop)
        return engine, window_stats

    scanned = _scan(ws, run, loc.coords, loc.cases, loc.members, ids, pop, ws.max_population * N, pop,
                    bernoulli_engine)
    return ScanResult(
        **scanned, n_cases=C, n_population=N, n_locations=len(loc.members), n_merged=loc.n_merged,
        model="bernoulli", _loc_coords=loc.coords if placed else np.full_like(loc.coords, np.nan),
        _loc_cases=loc.cases, _loc_controls=loc.controls,
        _loc_population=pop, _loc_expected=pop * (C / N), _row_ids=ids, _row_loc=_row_locations(loc.members),
    )


def _check_poisson_rows(n, cases, population, expected, covariates):
    """The per-row inputs of :func:`poisson` checked: ``(cases, population, expected, codes,
    categories)`` (population or expected None when not given; the covariate categories' codes
    and the categories, or None)."""
    ca = check_counts(cases, "cases")
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
    return ca, po, ex, codes, cats


def _expected_cases(ca, po, ex, codes, cats):
    """Expected cases per row under the null: by indirect standardisation over the covariate
    categories (or proportional to the population) when ``ex`` is None, else ``ex`` rescaled to
    sum to C; a row with cases must expect some."""
    C = int(ca.sum())
    given = ex is not None
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
        what = "expected" if given else "population"
        raise ValueError(f"row {i} has {ca[i]} case(s) but zero {what}: a Poisson rate there is undefined")
    return ex


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
            progress=True, circle_population=None, max_circle_population=0.5, centres=None,
            neighbors=None, max_reported_population=None, max_reported_distance=None,
            risk_function="standard") -> ScanResult:
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
        adjustment of the .cas/.pop covariates; see :func:`~hphawkes_py.scan.read_satscan` with ``covariates=True``).
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
    secondary : str
        As in :func:`bernoulli`.
    grid_cell : float, optional
        Circles centred on the cells of a regular grid of this side instead of on the locations.
    distance : {"euclidean", "great_circle"}
        As in :func:`bernoulli` (great-circle: coords are (latitude, longitude), km).
    window : {"circle", "ellipse"}
        ``"ellipse"``: SaTScan's elliptic scan, the circle plus ellipses of each shape in
        ``ellipse_shapes`` (major / minor axis) at ``ellipse_angles`` orientations each (multiples of
        180 / angles degrees in (-90, 90]); Euclidean coordinates, no grid, no ``max_distance``.
    ellipse_shapes, ellipse_angles : sequences
        SaTScan's defaults (1.5, 2, 3, 4, 5) and (4, 6, 9, 12, 15); limits as in :func:`bernoulli`.
    penalty : {"none", "medium", "strong"}
        Non-compactness penalty of the elliptic scan: windows are ranked (and the Monte Carlo
        maxima taken) by ``LLR x (4 s / (1 + s)^2)^a``, a = 0, 1/2, 1; reported as ``test_statistic``.
    location_ids : array_like (n,), optional
        Ids reported in ``clusters.location_ids`` (default: 0-based input row positions); unique,
        except with ``covariates``, where the rows of one location (its categories) share its id;
        a location is then reported once, by the id of its first row.
    seed, executor, backend, threads, progress, circle_population, max_circle_population, centres, neighbors, \
max_reported_population, max_reported_distance, risk_function
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
    coords, placed = _by_id(coords, neighbors, location_ids, len(np.asarray(cases).reshape(-1)))
    xy = _check_xy(coords)
    n = xy.shape[0]
    ca, po, ex, codes, cats = _check_poisson_rows(n, cases, population, expected, covariates)
    C = int(ca.sum())
    ids = check_location_ids(location_ids, n, repeats=covariates is not None)
    ws = _check_windows(xy, max_population, max_distance, grid_cell, distance, window, ellipse_shapes, ellipse_angles,
                        penalty, centres)
    isotonic = _check_risk_function(risk_function, ws, min_cases, neighbors,
                                    (max_reported_population, max_reported_distance))
    run = check_run(min_cases, n_replicates, direction, secondary, progress, threads, seed, backend, executor)
    _check_secondary(ws, run)

    ex = _expected_cases(ca, po, ex, codes, cats)

    loc_coords, gid, members = merge_rows(xy)
    L = len(members)
    n_merged = n - L
    if circle_population is not None:
        ws = dataclasses.replace(ws, circle=circle_limit(circle_population, max_circle_population, gid, L))
    ws = _with_neighbors(ws, neighbors, placed, ids, members)
    ws = _with_reported(ws, max_reported_population, max_reported_distance)
    if n_merged and neighbors is None:
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
            check_ids_per_location(ids, gid)
        report_members = [[m[0]] for m in members]
    l_cases = np.bincount(gid, weights=ca, minlength=L).astype(np.int64)
    l_exp = np.bincount(gid, weights=ex, minlength=L)
    l_pop = np.bincount(gid, weights=po, minlength=L) if po is not None else l_exp.copy()
    if po is not None and np.all(l_pop == np.round(l_pop)) and l_pop.sum() < 2**53:
        l_pop = l_pop.astype(np.int64)
    # windows are cut by the population at risk: the population itself when the expected counts
    # are proportional to it (exact integer comparisons), else the expected counts
    size = l_pop if (expected is None and covariates is None) else l_exp

    def poisson_engine(windows):
        offsets, neighbors, _, boundary = windows
        wexp = cumulative_expected(windows, l_exp)

        def window_stats(members, c, j, i):
            e = float(wexp[j])
            rr = (c / e) / ((C - c) / (C - e)) if C > c else math.inf
            p = l_pop[members].sum()
            return (int(p) if l_pop.dtype.kind == "i" else float(p)), e, rr

        if isotonic:
            engine = _isotonic_engine(windows, l_exp, C, float(l_exp.sum()), "poisson", run.direction, run.backend)
        else:
            engine = make_engine((offsets, neighbors, wexp, boundary), klogk_table(C), C, C, run.direction,
                                 backend=run.backend, model="poisson", min_cases=run.min_cases)
        return engine, window_stats

    scanned = _scan(ws, run, loc_coords, l_cases, report_members, ids, size, ws.max_population * size.sum(),
                    l_exp, poisson_engine)
    total_pop = l_pop.sum()
    return ScanResult(
        **scanned, n_cases=C, n_population=int(total_pop) if l_pop.dtype.kind == "i" else float(total_pop),
        n_locations=L, n_merged=n_merged, model="poisson",
        _loc_coords=loc_coords if placed else np.full_like(loc_coords, np.nan), _loc_cases=l_cases,
        _loc_controls=None, _loc_population=l_pop, _loc_expected=l_exp, _row_ids=ids, _row_loc=gid,
    )


def _check_risk_function(risk_function, ws, min_cases, neighbors, reported) -> bool:
    """Whether ``risk_function`` asks for the isotonic scan (:mod:`.isotonic`), refusing what it does not do."""
    if risk_function not in ("standard", "isotonic"):
        raise ValueError(f"risk_function must be 'standard' or 'isotonic', got {risk_function!r}")
    if risk_function == "standard":
        return False
    for name, given in (("window='ellipse'", ws.ellipses is not None), ("grid_cell", ws.grid_cell is not None),
                        ("centres", ws.centres is not None), ("neighbors", neighbors is not None),
                        ("max_reported_population / max_reported_distance", any(v is not None for v in reported))):
        if given:
            raise ValueError(f"risk_function='isotonic' scans circles around the locations: not with {name}")
    if min_cases is not None and min_cases > 2:
        raise ValueError(f"risk_function='isotonic': min_cases={min_cases} is not applied (a step of a high risk "
                         f"needs 2 cases, as in SaTScan); give min_cases <= 2")
    return True


def _isotonic_engine(windows, measure, C: int, M: float, model: str, direction: str, backend: str):
    """The isotonic scan's engine over the centres' largest circles of ``windows`` (on a CUDA backend its kernel,
    :class:`~.gpu.GpuIsotonicEngine`)."""
    cpu = IsotonicEngine(windows[0], windows[1], np.asarray(measure, dtype=np.float64), C, M, model,
                         direction in ("high", "both"), direction in ("low", "both"))
    if not is_gpu_backend(backend):
        return cpu
    from .gpu import GpuIsotonicEngine

    return GpuIsotonicEngine(cpu, device=get_device(backend), backend=backend)


@dataclasses.dataclass(frozen=True)
class WindowSettings:
    """The window options of a purely spatial scan, checked (see :func:`_check_windows`).

    ``max_population``: largest window as a fraction of the total size; ``max_distance``: largest
    radius (coordinate units or km; None: no limit); ``grid_cell``: side of the grid of centres
    (None: the locations); ``distance``: "euclidean" or "great_circle"; ``geo``: its
    :class:`~.locations.Geometry`; ``ellipses``: SaTScan's (shape, angle) set (None: circles) and
    ``pen_a`` its non-compactness penalty exponent; ``circle``: (population of the max circle size file per
    location, the most a window may hold) or (None, None) (:func:`~.locations.circle_limit`); ``centres``: the
    circle centres as given (SaTScan's grid file) or None.
    """

    max_population: float
    max_distance: Any
    grid_cell: Any
    distance: str
    geo: Geometry
    ellipses: Any
    pen_a: Any
    circle: Any = (None, None)
    centres: Any = None
    neighbors: Any = None
    placed: bool = True
    reported: Any = None


def _by_id(coords, neighbors, location_ids, n: int):
    """``(coords, placed)``: with ``neighbors`` (windows from lists of location ids) the locations are their ids,
    so ``location_ids`` are needed; ``coords`` None then stands for no coordinates at all (``placed`` False: each
    id gets a point of its own, in the order the ids first appear, for the rows to merge by), and given
    coordinates must tell the ids apart. Without ``neighbors``, ``coords`` as given."""
    if neighbors is None:
        return coords, True
    if location_ids is None:
        raise ValueError("neighbors names the locations by id: give location_ids (one per row)")
    ids = np.asarray(location_ids, dtype=object).reshape(-1)
    if len(ids) != n:
        raise ValueError(f"location_ids must have one id per row ({n}), got {len(ids)}")
    _, first, code = np.unique(ids.astype(str), return_index=True, return_inverse=True)
    rank = np.argsort(np.argsort(first))[code.reshape(-1)]
    if coords is None:
        return np.column_stack([rank.astype(np.float64), np.zeros(n)]), False
    xy = _check_xy(coords)
    if len(xy) == n:
        _, gid, _ = merge_rows(xy)
        pairs = np.unique(np.column_stack([gid, rank]), axis=0)
        if len(np.unique(pairs[:, 0])) != len(pairs) or len(np.unique(pairs[:, 1])) != len(pairs):
            raise ValueError("with neighbors, each location id has its own coordinates: rows of one id share them and "
                             "rows of different ids differ (or give coords=None)")
    return xy, True


def _with_neighbors(ws, neighbors, placed: bool, ids, members):
    """``ws`` with the neighbour lists (:func:`~.neighbor_lists.check_neighbors`, in the merged locations'
    indices; ``members``: each location's rows, ``ids`` the rows' ids) when ``neighbors`` is given, after
    refusing the window options that describe circles."""
    if neighbors is None:
        return ws
    for given, name in ((ws.ellipses is not None, "window='ellipse'"), (ws.grid_cell is not None, "grid_cell"),
                        (ws.centres is not None, "centres"), (ws.max_distance is not None, "max_distance")):
        if given:
            raise ValueError(f"{name} describes circles: not with neighbors (the windows are the lists' leading runs)")
    lists = check_neighbors(neighbors, [ids[m[0]] for m in members])
    return dataclasses.replace(ws, neighbors=lists, placed=placed)


def _with_reported(ws, max_reported_population, max_reported_distance):
    """``ws`` with the limits of the clusters reported (``reported``: (fraction, radius or None)) when either is
    given: the fraction at most ``max_population`` (default it), the radius positive; circles and neighbour lists
    only."""
    if max_reported_population is None and max_reported_distance is None:
        return ws
    if ws.ellipses is not None:
        raise ValueError("max_reported_population / max_reported_distance are for circles and neighbour lists (not "
                         "window='ellipse')")
    frac = ws.max_population if max_reported_population is None else _check_max_population(max_reported_population)
    if frac > ws.max_population:
        raise ValueError(f"max_reported_population={max_reported_population!r} is above max_population="
                         f"{ws.max_population!r}: the reported clusters are a part of the windows scanned")
    dist = None if max_reported_distance is None else check_positive(max_reported_distance, "max_reported_distance")
    if dist is not None and ws.neighbors is not None:
        raise ValueError("max_reported_distance describes circles: not with neighbors")
    return dataclasses.replace(ws, reported=(frac, dist))


def _check_secondary(ws: WindowSettings, run: RunOptions) -> None:
    """SaTScan's criteria on the clusters' centres and radii are for circles here (its ellipse tests are not, and
    lists of neighbours have neither)."""
    if ws.ellipses is not None and run.secondary not in ("no-overlap", "no-restrictions"):
        raise ValueError(f"secondary={run.secondary!r} is for circular windows; window='ellipse' takes 'no-overlap' or "
                         f"'no-restrictions'")


def _check_windows(xy, max_population, max_distance, grid_cell, distance, window, ellipse_shapes, ellipse_angles,
                   penalty, centres=None) -> WindowSettings:
    """The window options of :func:`bernoulli` and :func:`poisson`, checked in the order of their
    parameters (``xy``: the coordinates the geometry checks)."""
    max_population = _check_max_population(max_population)
    max_distance = None if max_distance is None else check_positive(max_distance, "max_distance")
    geo = _check_geometry(distance, xy, grid_cell)
    ellipses, pen_a = _check_ellipses(window, geo, grid_cell, max_distance, ellipse_shapes, ellipse_angles, penalty)
    c = check_centres(centres, distance, grid_cell)
    if c is not None and ellipses is not None:
        raise ValueError("centres are for circles (window='circle')")
    return WindowSettings(max_population, max_distance, grid_cell, distance, geo, ellipses, pen_a, centres=c)


def _scan(ws: WindowSettings, run: RunOptions, coords, cases, members, ids, size, limit, weights, make) -> dict:
    """The purely spatial scan once its data are checked, for both models: windows, the observed
    best window of every centre, the Monte Carlo maxima and the cluster table.

    ``coords``, ``cases`` (L,): the merged locations and their case counts; ``members``: the input
    rows reported for each location, ``ids`` their ids; windows are cut where their ``size`` (L,)
    would exceed ``limit``; ``weights`` (L,): the null's persons (Bernoulli) or expected cases
    (Poisson) per location; ``make(windows)`` gives the model's ``(engine, window_stats)`` (see
    :func:`~.result._clusters`). Returns the :class:`~hphawkes_py.scan.ScanResult` fields the models share.
    """
    centres, centre_loc = make_centres(coords, ws.grid_cell, ws.centres)
    if ws.neighbors is not None:  # a list's first location is its centre
        centre_loc = np.array([idx[0] for idx in ws.neighbors], dtype=np.int64)
        centres = coords[centre_loc] if ws.placed else np.full((len(centre_loc), 2), np.nan)
        if run.secondary != "no-overlap":
            raise ValueError(f"secondary={run.secondary!r} looks at circles' centres and radii: with neighbors "
                             f"secondary='no-overlap'")
    pens = None
    with threads_context(run.threads):
        points = ws.geo.points(coords)
        cpoints = ws.geo.points(coords[centre_loc] if ws.neighbors is not None else centres)
        circle, circle_lim = ws.circle

        def cut(limit, max_distance):
            if ws.neighbors is not None:
                return neighbor_windows(ws.neighbors, size, limit, circle, circle_lim)
            return build_windows(cpoints, points, size, limit, ws.geo.to_working(max_distance), circle=circle,
                                 circle_limit=circle_lim)

        if ws.ellipses is None:
            windows = cut(limit, ws.max_distance)
        else:
            windows = _elliptic_windows(cpoints, points, size, limit, ws.ellipses, circle, circle_lim)
            pens = _elliptic_penalties(ws.ellipses, len(centres), ws.pen_a)
        engine, window_stats = make(windows)
        scanned = windows
        observed = engine
        if ws.reported is not None:
            # the clusters reported are the windows within the smaller limits; the replicates scan them all
            frac, dist = ws.reported
            dist = dist if ws.max_distance is None or dist is None else min(dist, ws.max_distance)
            scanned = cut(frac * float(np.sum(size)) if frac < ws.max_population else limit,
                          ws.max_distance if dist is None else dist)
            observed, window_stats = make(scanned)
        best, best_entry = observed.best_per_centre(cases.astype(np.int32)[:, None], want_arg=True)
        best = best[:, 0]
        best_entry = best_entry[:, 0]
        null_llr = _monte_carlo(engine, weights, engine.n_cases, run.n_replicates, run.seed, run.executor, run.progress,
                                penalties=pens if (pens is not None and ws.pen_a > 0) else None)
    offsets, neighbors, _, boundary = scanned
    stat = extra_cols = tiebreak = None
    if ws.ellipses is not None:
        stat, radius_of, extra_cols, centres, centre_loc, tiebreak = _elliptic_report(
            best, pens, ws.ellipses, points, cpoints, centres, centre_loc, ws.geo)
    elif ws.neighbors is not None:
        def radius_of(members, i):
            return math.nan
    else:
        radius_of = _radius(ws.geo, points, cpoints)
    if isinstance(getattr(engine, "cpu", engine), IsotonicEngine):  # each listed cluster's steps
        ids_list = list(ids)

        def extra_cols(i):
            return step_columns(getattr(engine, "cpu", engine), cases, i,
                                lambda locs: [ids_list[r] for m in locs for r in members[m]], radius_of)
    cand = Candidates(best, best_entry, offsets, neighbors, centres, centre_loc)
    # SaTScan's other criteria for secondary clusters look at the circles' centres and radii
    overlap = None if run.secondary == "no-overlap" else centre_overlap(run.secondary, cpoints.__getitem__, points)
    clusters = _clusters(cand, radius_of, cases, members, ids, null_llr, window_stats, stat=stat, extra=extra_cols,
                         tiebreak=tiebreak, overlap=overlap)
    if ws.ellipses is not None:  # the radius of an ellipse is its semiminor axis
        clusters.insert(clusters.columns.get_loc("radius") + 1, "semimajor_axis", clusters.radius * clusters["shape"])
    return dict(clusters=clusters, null_llr=null_llr, backend=run.backend, n_centres=len(centres),
                n_windows=int(windows[3].sum()), max_population=ws.max_population, direction=run.direction,
                n_replicates=run.n_replicates, grid_cell=ws.grid_cell, max_distance=ws.max_distance,
                min_cases=run.min_cases, distance=ws.distance, non_euclidean=ws.neighbors is not None)
