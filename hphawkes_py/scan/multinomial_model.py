"""Kulldorff's spatial scan statistic for multinomial data: cases in unordered categories.

Jung, Kulldorff & Richard (2010, "A spatial scan statistic for multinomial data", Stat Med
29:1910), as SaTScan's multinomial (categorical) model computes it: every case has a category (e.g.
a subtype, a serotype) and a location; a cluster is a circle where the mix of categories differs
from outside, in any way. The likelihood of a window is multinomial inside and outside with free
probabilities (see :mod:`._categorical`); the null permutes the categories among the cases. There is
no high or low cluster: SaTScan reports each category's observed and expected cases.
"""
from __future__ import annotations

from ._categorical import check_categories
from .categorical_scan import scan_categories
from .locations import _check_xy, check_empty_locations, check_location_ids
from .model import _check_windows
from .monte_carlo import check_run
from .result import ScanResult

__all__ = ["multinomial"]


def multinomial(coords, categories, *, location_ids=None, max_population=0.5, max_distance=None, n_replicates=999,
                secondary="no-overlap", grid_cell=None, distance="euclidean", seed=None, executor=None,
                backend="auto", threads=None, progress=True, empty_locations=None,
                empty_location_ids=None) -> ScanResult:
    """Kulldorff's spatial scan statistic for multinomial data (unordered categories) with Monte Carlo inference.

    Semantics follow SaTScan's purely spatial multinomial analysis (Jung, Kulldorff & Richard 2010):
    circular windows up to ``max_population`` of the cases, each scored by the likelihood ratio of
    other category probabilities inside than outside (see :mod:`hphawkes_py.scan._categorical`),
    the categories permuted among the cases for the null.

    Parameters
    ----------
    coords : array_like (n, 2)
        Coordinates of each case's location (one row per case; rows with identical coordinates are
        one location). Planar, Euclidean distances, unless ``distance="great_circle"``.
    categories : array_like (n,)
        The category of each case: labels (strings) or numbers, at least 2 distinct; reported in
        SaTScan's order (sorted).
    location_ids : array_like (n,), optional
        Location id of each case (rows of one location share it), reported once per location.
    max_population : float in (0, 0.5]
        Maximum number of cases in a window, as a fraction of all cases.
    max_distance : float, optional
        Maximum circle radius (coordinate units; km with ``distance="great_circle"``).
    n_replicates : int >= 1
        Monte Carlo replicates (999 or 9999 as in SaTScan).
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
        ``model="multinomial"``: ``clusters.cases`` and ``population`` the window's cases;
        ``expected`` and ``relative_risk`` NaN; per category, as SaTScan reports them:
        ``categories`` (one-element tuples of the labels), ``observed_by_category``,
        ``expected_by_category``, ``ode_by_category``, ``relative_risk_by_category`` and
        ``percent_by_category``. :func:`~hphawkes_py.scan.category_table` gives them in long form.
        ``n_cases`` and ``n_population``: the cases.

    Examples
    --------
    Serotypes of 400 isolates at 40 towns, one of them more common around one town:

    >>> rng = np.random.default_rng(5)
    >>> xy = rng.uniform(0, 10, (40, 2)).round(3)
    >>> town = rng.integers(0, 40, 400)
    >>> near = np.hypot(*(xy[town] - xy[0]).T) < 2
    >>> sero = np.where(near, rng.choice(["A", "B", "C"], 400, p=[.2, .6, .2]),
    ...                 rng.choice(["A", "B", "C"], 400, p=[.4, .2, .4]))
    >>> res = hp.scan.multinomial(xy[town], sero, location_ids=town, n_replicates=99, seed=1,
    ...                           backend="cpu", progress=False)
    >>> top = res.most_likely
    >>> print(top.cases, top.observed_by_category, top.p_value)
    54 [10, 38, 6] 0.01
    """
    xy = _check_xy(coords)
    n = xy.shape[0]
    cat, labels = check_categories(categories, n, ordinal=False)
    ids = check_location_ids(location_ids, n, repeats=True)
    ws = _check_windows(xy, max_population, max_distance, grid_cell, distance, "circle", (), (), "none")
    run = check_run(0, n_replicates, "high", secondary, progress, threads, seed, backend, executor)
    empty = check_empty_locations(empty_locations, empty_location_ids, location_ids is not None)
    fields = scan_categories(xy, ids, location_ids is not None, ws, run, cat, labels, ordinal=False, empty=empty)
    return ScanResult(**fields, n_cases=n, n_population=n, min_cases=0, model="multinomial", _loc_expected=None)
