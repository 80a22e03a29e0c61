"""Kulldorff's spatial scan statistic for ordinal data: cases in ordered categories.

Jung, Kulldorff & Klassen (2007, "A spatial scan statistic for ordinal data", Stat Med 26:1594), as
SaTScan's ordinal model computes it: every case has an ordered category (e.g. a cancer stage, a
severity grade) and a location; a cluster is a circle where the cases lean to the higher categories
(``direction="high"``) or the lower ones (``"low"``) compared with outside. The likelihood of a
window is multinomial inside and outside, its alternative restricted to likelihood ratios p_k / q_k
monotone in the category k (see :mod:`._categorical` for the formulas and SaTScan's pooling of the
categories that break the order). The null permutes the categories among the cases.
"""
from __future__ import annotations

from ._categorical import check_categories
from .categorical_scan import scan_categories
from .locations import _check_xy, check_empty_locations, check_location_ids
from .model import _check_windows
from .monte_carlo import check_run
from .result import ScanResult

__all__ = ["ordinal"]


def ordinal(coords, categories, *, location_ids=None, max_population=0.5, max_distance=None, n_replicates=999,
            direction="high", secondary="no-overlap", grid_cell=None, distance="euclidean", seed=None,
            executor=None, backend="auto", threads=None, progress=True, empty_locations=None,
            empty_location_ids=None) -> ScanResult:
    """Kulldorff's spatial scan statistic for ordinal data (ordered categories) with Monte Carlo inference.

    Semantics follow SaTScan's purely spatial ordinal analysis (Jung, Kulldorff & Klassen 2007):
    circular windows up to ``max_population`` of the cases, each scored by the likelihood ratio of
    other category probabilities inside than outside with a likelihood ratio monotone in the
    category (see :mod:`hphawkes_py.scan._categorical`), the categories permuted among the cases
    for the null.

    Parameters
    ----------
    coords : array_like (n, 2)
        Coordinates of each case's location (one row per case; rows with identical coordinates are
        one location). Planar, Euclidean distances, unless ``distance="great_circle"``.
    categories : array_like (n,) of numbers
        The ordinal category of each case (e.g. 1, 2, 3; any numbers, ordered by value; at least 2
        distinct values).
    location_ids : array_like (n,), optional
        Location id of each case (rows of one location share it), reported once per location.
    max_population : float in (0, 0.5]
        Maximum number of cases in a window, as a fraction of all cases (SaTScan's population of the
        ordinal model is its cases).
    max_distance : float, optional
        Maximum circle radius (coordinate units; km with ``distance="great_circle"``).
    n_replicates : int >= 1
        Monte Carlo replicates (999 or 9999 as in SaTScan).
    direction : {"high", "low", "both"}
        Scan for windows whose cases lean to the higher categories (lower, either).
    secondary : {"no-overlap"}
        As in :func:`~hphawkes_py.scan.bernoulli`.
    grid_cell : float, optional
        Circles centred on the cells of a regular grid of this side instead of on the locations.
    distance : {"euclidean", "great_circle"}
        As in :func:`~hphawkes_py.scan.bernoulli` (great-circle: coords are (latitude, longitude), km).
    seed : None, int, SeedSequence or Generator
        Root of the per-replicate seeds: results do not depend on executor or batching.
    executor : None, concurrent.futures.Executor or dask Client
        Where the Monte Carlo batches run.
    backend : {"auto", "cpu", "gpu", "emulator"}
        The engine (the CUDA kernel on a GPU, or on the CPU emulator); both give the same LLRs.
    threads : int, optional
        Numba threads.
    progress : bool
        Show a progress bar over Monte Carlo batches.
    empty_locations : array_like (k, 2), optional
        Locations without cases (a SaTScan coordinates file's locations that no case record names): circle
        centres, and members of the circles that reach them, as SaTScan scans them.
    empty_location_ids : array_like (k,), optional
        Their ids (needed with ``location_ids``).

    Returns
    -------
    ScanResult
        ``model="ordinal"``: ``clusters.cases`` and ``population`` the window's cases; ``expected``
        and ``relative_risk`` NaN; the category table as SaTScan reports it, one entry per group of
        categories (categories pooled by the order restriction are one group): ``categories``
        (tuples of category values), ``observed_by_category``, ``expected_by_category`` (the
        window's cases x the category's share of all cases), ``ode_by_category`` (observed /
        expected), ``relative_risk_by_category``, ``percent_by_category``, and ``cluster_type``
        ("high" or "low"). :func:`~hphawkes_py.scan.category_table` gives them in long form.
        ``n_cases`` and ``n_population``: the cases.

    Examples
    --------
    Stages (1-3) of 400 cancers at 40 towns, later stages around one of them:

    >>> rng = np.random.default_rng(2)
    >>> xy = rng.uniform(0, 10, (40, 2)).round(3)
    >>> town = rng.integers(0, 40, 400)
    >>> near = np.hypot(*(xy[town] - xy[0]).T) < 2
    >>> stage = np.where(near, rng.choice([1, 2, 3], 400, p=[.2, .3, .5]),
    ...                  rng.choice([1, 2, 3], 400, p=[.5, .3, .2]))
    >>> res = hp.scan.ordinal(xy[town], stage, location_ids=town, n_replicates=99, seed=1,
    ...                       backend="cpu", progress=False)
    >>> top = res.most_likely
    >>> print(top.cases, top.observed_by_category, top.cluster_type, top.p_value)
    44 [9, 11, 24] high 0.01
    """
    xy = _check_xy(coords)
    n = xy.shape[0]
    cat, labels = check_categories(categories, n, ordinal=True)
    ids = check_location_ids(location_ids, n, repeats=True)
    ws = _check_windows(xy, max_population, max_distance, grid_cell, distance, "circle", (), (), "none")
    run = check_run(0, n_replicates, direction, secondary, progress, threads, seed, backend, executor)
    empty = check_empty_locations(empty_locations, empty_location_ids, location_ids is not None)
    fields = scan_categories(xy, ids, location_ids is not None, ws, run, cat, labels, ordinal=True, empty=empty)
    return ScanResult(**fields, n_cases=n, n_population=n, min_cases=0, model="ordinal", _loc_expected=None)
