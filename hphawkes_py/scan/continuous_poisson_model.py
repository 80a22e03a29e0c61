"""Kulldorff's purely spatial scan of points in a bounded region: SaTScan's continuous Poisson model.

SaTScan's ``ModelType=6`` (``HOMOGENEOUSPOISSON``): the data are the exact positions of N cases (no
population file: the population at risk is area), in an observable region made of convex polygons,
each the set of points satisfying a few linear inequalities (SaTScan's ``[Polygons]`` section,
``Polygon1=Y <= 10000,X >= 0,Y >= X``). Under the null the cases are a homogeneous Poisson process
on the region given N: independent uniform points.

1. circles about each centre (the points themselves, or given centres: SaTScan's grid file) grow one
   point at a time, nearest first; the window with k points whose farthest point is at distance d
   has ``k`` cases and ``E = pi d^2 N / A`` expected (A: the region's total area; the whole circle
   counts, also where it leaves the region, as in SaTScan's ``PurelySpatialHomogeneousPoissonCluster``);
2. the radius is at most ``max_radius_share x sqrt(A / pi)`` (SaTScan's
   ``MaxSpatialSizeInPopulationAtRisk`` percent of the radius of a circle of area A,
   ``CentroidNeighborCalculator``), so a circle's area is at most ``max_radius_share**2 A`` and
   ``E <= max_radius_share**2 N``; points at distance exactly 0 (a centre on a point) add no area and
   such a window is never a cluster (SaTScan: a zero measure is neither high nor low);
3. a window is scored by the discrete Poisson likelihood ratio ``c log(c/E) + (N-c) log((N-c)/(N-E))``
   when its rate is higher (lower, either) than outside; high-rate windows need ``min_cases`` points;
4. Monte Carlo replicates: N points redistributed over the polygons multinomially in proportion to
   their areas (SaTScan's sequential binomials), uniformly within each (rejection from the polygon's
   bounding box; a point drawn twice is drawn again), and, without given centres, the replicate's
   own points as centres.

The windows of a replicate depend on its points: on the CPU each replicate's points are drawn and its circles
scored in one Numba loop (:mod:`.cpu_continuous_poisson`); on a GPU (or the emulator) the same points make one set
of windows per batch of replicates, scored by the discrete Poisson engine of :func:`~.engine.make_engine`.
"""
from __future__ import annotations

import math
import re

import numpy as np
from numba import njit

from .._backend import threads_context
from .._parallel import run_replicates
from .._validate import check_in, check_positive
from ._rng import replicate_seed_words
from .cpu_continuous_poisson import draw_points, null_maxima
from .engine import make_engine, klogk_table
from .locations import _check_xy, _radius, Geometry, check_centres, check_location_ids
from .monte_carlo import check_run, replicate_seed_batches
from .result import Candidates, ScanResult, _clusters
from .windows import build_windows

__all__ = ["continuous_poisson", "Region", "check_region"]

#: SaTScan's three forms of an inequality (``ConvexPolygonBuilder::parse``): ``ay <= bx + c``, ``ay <= c``,
#: ``bx <= c`` (``<=`` or ``>=``; coefficients optional, case ignored)
_NUM = r"(-?\d+\.\d+|-?\d+)"
_Y_FULL = re.compile(_NUM + r"?y\s*(<=|>=)\s*" + _NUM + r"?x\s*(\+|-)?\s*(\d+\.\d+|\d+)?", re.IGNORECASE)
_Y_CONST = re.compile(_NUM + r"?y\s*(<=|>=)\s*" + _NUM, re.IGNORECASE)
_X_CONST = re.compile(_NUM + r"?x\s*(<=|>=)\s*" + _NUM, re.IGNORECASE)
#: replicates per Monte Carlo batch, and the most window entries one batch's windows may hold
_BATCH = 256
_BATCH_ENTRIES = 1 << 24


def _coef(s, default):
    return default if s is None or s == "" else float(s)


def _parse_inequality(text: str, where: str):
    """``(a, b, c, sign)`` of SaTScan's ``a y + b x + c <= 0`` (sign +1) or ``>= 0`` (-1) from one of its
    text forms."""
    s = text.strip()
    m = _Y_FULL.fullmatch(s)
    if m:
        a, op, b, pm, c = m.groups()
        c = _coef(c, 0.0)
        if c != 0.0 and pm is None:
            raise ValueError(f"{where}: {text!r}: the constant needs a sign ('y <= 2x + 5')")
        c = -c if pm == "-" else c
        return _coef(a, 1.0), -_coef(b, 1.0), -c, 1.0 if op == "<=" else -1.0
    for rx, is_y in ((_Y_CONST, True), (_X_CONST, False)):
        m = rx.fullmatch(s)
        if m:
            k, op, c = m.groups()
            k, c = _coef(k, 1.0), -float(c)
            return (k, 0.0, c, 1.0 if op == "<=" else -1.0) if is_y else (0.0, k, c, 1.0 if op == "<=" else -1.0)
    raise ValueError(f"{where}: {text!r} is not a linear inequality SaTScan reads: 'ay <= bx + c', 'ay <= c' or "
                     f"'bx <= c' (or >=; a, b, c numbers, optional), e.g. 'Y <= 10000', 'X >= 0', 'Y >= X'")


def _polygon_rows(spec, k: int) -> np.ndarray:
    """(q, 4) rows ``(a, b, c, sign)`` of polygon ``k`` given as SaTScan's text (inequalities separated by
    commas), a sequence of such texts, or a sequence of numeric ``(a, b, c, op)``: ``a x + b y op c``."""
    where = f"polygons[{k}]"
    items = spec.split(",") if isinstance(spec, str) else list(spec)
    rows = []
    for q, item in enumerate(items):
        if isinstance(item, str):
            rows.append(_parse_inequality(item, where))
            continue
        try:
            a, b, c, op = item
            a, b, c = float(a), float(b), float(c)
        except (TypeError, ValueError):
            raise ValueError(f"{where}[{q}] = {item!r}: an inequality is a text ('X >= 0') or (a, b, c, op) meaning "
                             f"a x + b y op c, op '<=' or '>='") from None
        if op not in ("<=", ">="):
            raise ValueError(f"{where}[{q}]: op must be '<=' or '>=', got {op!r}")
        if not all(math.isfinite(v) for v in (a, b, c)) or a == b == 0.0:
            raise ValueError(f"{where}[{q}] = {item!r}: a and b (not both 0) and c must be finite numbers")
        rows.append((b, a, -c, 1.0 if op == "<=" else -1.0))  # SaTScan's a y + b x + c
    if len(rows) < 3:
        raise ValueError(f"{where}: {len(rows)} inequalities; a polygon needs at least 3 (SaTScan's minimum)")
    return np.array(rows, dtype=np.float64)


def _inside(rows, x, y):
    """Whether points satisfy every inequality (boundaries included), evaluated as SaTScan does (``y a + x b + c``
    against 0)."""
    ok = np.ones(np.shape(x), dtype=bool)
    for a, b, c, s in rows:
        v = y * a + x * b + c
        ok &= (v <= 0) if s > 0 else (v >= 0)
    return ok


def _clip(poly, a, b, c, s):
    """Sutherland-Hodgman: the part of polygon ``poly`` ((k, 2) in order) where ``s (a y + b x + c) <= 0``."""
    out = []
    n = len(poly)
    for i in range(n):
        p, q = poly[i], poly[(i + 1) % n]
        fp, fq = s * (a * p[1] + b * p[0] + c), s * (a * q[1] + b * q[0] + c)
        if fp <= 0:
            out.append(p)
        if (fp < 0 < fq) or (fq < 0 < fp):
            t = fp / (fp - fq)
            out.append(p + t * (q - p))
    return np.array(out).reshape(-1, 2)


def _area(poly) -> float:
    if len(poly) < 3:
        return 0.0
    x, y = poly[:, 0], poly[:, 1]
    return 0.5 * abs(float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))))


def _vertices(rows, k: int) -> np.ndarray:
    """The polygon's corners in order, as SaTScan finds them: the intersections of pairs of boundary lines
    that satisfy every inequality; ValueError when the inequalities bound no region of positive area."""
    pts = []
    for i in range(len(rows)):
        for j in range(i + 1, len(rows)):
            a1, b1, c1, _ = rows[i]
            a2, b2, c2, _ = rows[j]
            det = b1 * a2 - a1 * b2
            if det == 0:
                continue
            pts.append(((a1 * c2 - a2 * c1) / det, (b2 * c1 - b1 * c2) / det))
    pts = np.array(pts, dtype=np.float64).reshape(-1, 2)
    pts = pts[np.isfinite(pts).all(axis=1)]
    scale = max(1.0, float(np.abs(pts).max()) if len(pts) else 1.0, float(np.abs(rows[:, 2]).max()))
    # bounded and not empty: clipping a box far beyond every corner leaves a polygon inside the box
    M = 4.0 * scale
    box = np.array([[-M, -M], [M, -M], [M, M], [-M, M]])
    for r in rows:
        box = _clip(box, *r)
        if len(box) == 0:
            break
    if _area(box) <= 1e-12 * scale * scale:
        raise ValueError(f"polygons[{k}]: the inequalities leave no region of positive area (empty, a line or a "
                         f"point)")
    if np.abs(box).max() >= M * (1 - 1e-9):
        raise ValueError(f"polygons[{k}]: the inequalities do not bound the region (it is unbounded); a polygon "
                         f"needs inequalities on every side")
    tol = 1e-9 * scale
    keep = np.ones(len(pts), dtype=bool)
    for a, b, c, s in rows:
        keep &= s * (pts[:, 1] * a + pts[:, 0] * b + c) <= tol * (abs(a) + abs(b) + 1.0)
    v = np.unique(pts[keep], axis=0)
    centre = v.mean(axis=0)
    return v[np.argsort(np.arctan2(v[:, 1] - centre[1], v[:, 0] - centre[0]))]


class Region:
    """The observable region: convex polygons that do not overlap (see :func:`check_region`).

    ``rows``: per polygon, (q, 4) ``(a, b, c, sign)`` of SaTScan's ``a y + b x + c <= 0`` (sign 1) or
    ``>= 0`` (-1); ``vertices``: per polygon, its corners in order; ``areas`` (P,) and ``area`` (their sum),
    in squared coordinate units; ``boxes`` (P, 4): each polygon's bounding box ``(x0, x1, y0, y1)``.
    """

    def __init__(self, rows, vertices):
        self.rows = rows
        self.vertices = vertices
        self.areas = np.array([_area(v) for v in vertices])
        self.area = float(self.areas.sum())
        self.boxes = np.array([(v[:, 0].min(), v[:, 0].max(), v[:, 1].min(), v[:, 1].max()) for v in vertices])

    def contains(self, xy) -> np.ndarray:
        """(n,) whether each point is in some polygon (boundaries included, SaTScan's test)."""
        xy = np.asarray(xy, dtype=np.float64)
        ok = np.zeros(len(xy), dtype=bool)
        for r in self.rows:
            ok |= _inside(r, xy[:, 0], xy[:, 1])
        return ok


def check_region(polygons) -> Region:
    """The observable region from ``polygons``, checked: a list of convex polygons, each SaTScan's text
    (``"Y <= 10000,X >= 0,Y >= X"``), a list of such inequality texts, or a list of numeric
    ``(a, b, c, op)`` (``a x + b y op c``, op ``"<="`` or ``">="``); each bounded with a positive area, and
    no two overlapping (sharing an edge is allowed)."""
    if isinstance(polygons, str) or not hasattr(polygons, "__len__") or len(polygons) == 0:
        raise ValueError("polygons must be a non-empty list of polygons (each a text such as 'Y <= 10,X >= 0,Y >= X' "
                         "or a list of inequalities)")
    rows = [_polygon_rows(p, k) for k, p in enumerate(polygons)]
    verts = [_vertices(r, k) for k, r in enumerate(rows)]
    region = Region(rows, verts)
    for i in range(len(rows)):
        for j in range(i + 1, len(rows)):
            part = verts[i]
            for r in rows[j]:
                part = _clip(part, *r)
                if len(part) == 0:
                    break
            if _area(part) > 1e-9 * min(region.areas[i], region.areas[j]):
                raise ValueError(f"polygons[{i}] and polygons[{j}] overlap (area {_area(part):.6g} in common); the "
                                 f"polygons of the region must not overlap (SaTScan's rule)")
    return region


def _windows(centres, pts, max_radius, aux):
    """Circles about ``centres`` over the points ``pts`` up to ``max_radius``, as the Poisson engine takes
    them: ``(offsets, neighbors, expected, boundary)``, ``expected = d^2 pi aux`` at the entry's distance
    d (SaTScan's order of operations); entries at distance 0 are no window ends."""
    ones = np.ones(len(pts), dtype=np.int64)
    offsets, neighbors, _, boundary = build_windows(centres, pts, ones, float(len(pts)), max_radius)
    wexp = np.empty(len(neighbors))
    _entry_expected(offsets, neighbors, np.ascontiguousarray(pts, dtype=np.float64),
                    np.ascontiguousarray(centres, dtype=np.float64), float(aux), wexp, boundary)
    return offsets, neighbors, wexp, boundary


@njit(cache=True)
def _entry_expected(offsets, neighbors, pts, centres, aux, out, boundary):
    """``out[k] = d^2 pi aux`` at each entry's distance ``d = sqrt(dx^2 + dy^2)`` from its centre (SaTScan's
    order of operations), and ``boundary[k] = 0`` where that is 0 (a point on the centre ends no window)."""
    for i in range(offsets.shape[0] - 1):
        for k in range(offsets[i], offsets[i + 1]):
            dx = pts[neighbors[k], 0] - centres[i, 0]
            dy = pts[neighbors[k], 1] - centres[i, 1]
            d = np.sqrt(dx * dx + dy * dy)
            out[k] = d * d * math.pi * aux
            if out[k] <= 0.0:
                boundary[k] = 0


def _null_batch(size, batch_seed, region, n, centres, max_radius, aux, direction, backend, min_cases):
    """Maxima of ``size`` replicates (module level: executors pickle it): each replicate's ``n`` uniform
    points and circles; on the CPU drawn and scored in one Numba loop (:mod:`.cpu_continuous_poisson`), else
    all replicates' windows (of the same points) scored in one engine call."""
    words = replicate_seed_words((batch_seed, size))
    if backend == "cpu":
        return null_maxima(region, n, centres, max_radius, aux, klogk_table(n), min_cases, direction, words)
    offs, nbs, exps, bnds = [], [], [], []
    base = 0
    for w in words:  # the CPU loop's points (draw_points), scored on the engine
        pts = draw_points(region, n, w)
        c = pts if centres is None else centres
        o, nb, e, b = _windows(c, pts, max_radius, aux)
        offs.append(o[1:] + base if offs else o + base)
        base += int(o[-1])
        nbs.append(nb + (len(nbs) * n))
        exps.append(e)
        bnds.append(b)
    windows = (np.concatenate(offs), np.concatenate(nbs).astype(np.int32), np.concatenate(exps),
               np.concatenate(bnds))
    engine = make_engine(windows, klogk_table(n), n, n, direction, backend=backend, model="poisson",
                         min_cases=min_cases)
    best, _ = engine.best_per_centre(np.ones((size * n, 1), dtype=np.int32))
    return best[:, 0].reshape(size, -1).max(axis=1) if best.size else np.zeros(size)


def continuous_poisson(points, polygons, *, centres=None, max_radius_share=0.5, max_distance=None, min_cases=2,
                       point_ids=None, n_replicates=999, direction="high", distance="euclidean", seed=None,
                       executor=None, backend="auto", threads=None, progress=True) -> ScanResult:
    """Kulldorff's spatial scan statistic for points in a bounded region (SaTScan's continuous Poisson model).

    Semantics follow SaTScan's purely spatial continuous Poisson analysis (see the module notes): the
    cases are points, their null a homogeneous Poisson process on a region of convex polygons; a circle
    with ``c`` points, the farthest at distance d, expects ``pi d^2 N / A`` of the ``N`` points (``A``: the
    region's area) and is scored by the discrete Poisson likelihood ratio.

    Parameters
    ----------
    points : array_like (N, 2)
        Planar coordinates of the cases, distinct, every one in the region.
    polygons : sequence
        The observable region: convex polygons that do not overlap, each SaTScan's text
        ``"Y <= 10000,X >= 0,Y >= X"`` (inequalities ``ay <= bx + c``, ``ay <= c`` or ``bx <= c``, ``<=`` or
        ``>=``, separated by commas), a list of such inequalities, or a list of numeric ``(a, b, c, op)``
        meaning ``a x + b y op c``. At least 3 inequalities each, bounding a region of positive area.
    centres : array_like (m, 2), optional
        Circle centres (SaTScan's grid file), in the region; default the points (and in each Monte
        Carlo replicate, its own points, as SaTScan).
    max_radius_share : float in (0, 0.5]
        Largest circle radius as a share of ``sqrt(A / pi)``, the radius of a circle as large as the
        region (SaTScan's ``MaxSpatialSizeInPopulationAtRisk`` / 100): a circle covers at most
        ``max_radius_share**2`` of the region's area (a quarter at 0.5).
    max_distance : float, optional
        Largest circle radius (coordinate units), on top of ``max_radius_share``.
    min_cases : int >= 2
        Points a high-rate circle needs (SaTScan's minimum cases for high rates, at least 2).
    point_ids : array_like (N,), optional
        Distinct ids of the points, reported in ``clusters.location_ids`` (default 0-based row numbers).
    n_replicates : int >= 1
        Monte Carlo replicates.
    direction : {"high", "low", "both"}
        Scan for circles with more (fewer, either) points than their area leads to expect.
    distance : {"euclidean"}
        Planar distances only (SaTScan has no latitude/longitude for this model).
    seed : None, int, SeedSequence or Generator
        Root of the per-replicate seeds.
    executor : None, concurrent.futures.Executor or dask Client
        Where the Monte Carlo batches run.
    backend : {"auto", "cpu", "gpu", "emulator"}
        The Poisson engine that scores the circles (the CUDA kernel on a GPU, or on the CPU emulator).
    threads : int, optional
        Numba threads.
    progress : bool
        Show a progress bar over Monte Carlo batches.

    Returns
    -------
    ScanResult
        ``model="continuous_poisson"``: ``clusters.cases`` the points in the circle, ``radius`` the distance
        to the farthest (coordinate units), ``population`` the circle's area (squared coordinate units),
        ``expected`` ``pi radius^2 N / A``, ``relative_risk`` ``(c / E) / ((N - c) / (N - E))``. ``n_cases``:
        N, ``n_population``: the region's area A; ``max_population``: ``max_radius_share**2``, the largest
        circle's share of A.

    Examples
    --------
    300 points on the unit square, 40 more near (0.3, 0.7):

    >>> rng = np.random.default_rng(2)
    >>> pts = np.r_[rng.uniform(0, 1, (300, 2)), rng.normal((0.3, 0.7), 0.03, (40, 2))]
    >>> res = hp.scan.continuous_poisson(pts, ["X >= 0,X <= 1,Y >= 0,Y <= 1"], n_replicates=99, seed=1,
    ...                                  backend="cpu", progress=False)
    >>> top = res.most_likely
    >>> print(top.cases, round(top.expected, 2), round(top.radius, 3), top.p_value)
    38 3.48 0.057 0.01
    """
    xy = _check_xy(points)
    n = len(xy)
    region = check_region(polygons)
    out = ~region.contains(xy)
    if out.any():
        i = int(np.argmax(out))
        raise ValueError(f"points[{i}] = {tuple(xy[i].tolist())} is outside every polygon of the region "
                         f"({int(out.sum())} point(s) outside); every point must be in the region")
    _, first, counts = np.unique(xy, axis=0, return_index=True, return_counts=True)
    if (counts > 1).any():
        i = int(first[np.argmax(counts > 1)])
        raise ValueError(f"points[{i}] = {tuple(xy[i].tolist())} is given more than once; two cases cannot have "
                         f"the same location in the continuous Poisson model (SaTScan's rule)")
    check_in(distance, "distance", ("euclidean",))
    share = check_positive(max_radius_share, "max_radius_share")
    if share > 0.5:
        raise ValueError(f"max_radius_share must be in (0, 0.5] (SaTScan's maximum of 50 percent), got {share!r}")
    max_radius = share * math.sqrt(region.area / math.pi)
    if max_distance is not None:
        max_radius = min(max_radius, check_positive(max_distance, "max_distance"))
    c = check_centres(centres, "euclidean")
    if c is not None:
        cout = ~region.contains(c)
        if cout.any():
            i = int(np.argmax(cout))
            raise ValueError(f"centres[{i}] = {tuple(c[i].tolist())} is outside every polygon of the region; "
                             f"circle centres must be in the region (SaTScan's rule)")
    ids = check_location_ids(point_ids, n)
    run = check_run(min_cases, n_replicates, direction, "no-overlap", progress, threads, seed, backend, executor)
    if run.direction in ("high", "both") and run.min_cases < 2:
        raise ValueError(f"min_cases={run.min_cases}: SaTScan needs at least 2 cases in a high-rate cluster; give "
                         f"min_cases >= 2")
    aux = n / region.area
    cpoints = xy if c is None else c
    centre_loc = np.arange(n, dtype=np.int64) if c is None else np.full(len(c), -1, dtype=np.int64)
    with threads_context(run.threads):
        windows = _windows(cpoints, xy, max_radius, aux)
        offsets, neighbors, wexp, boundary = windows
        engine = make_engine(windows, klogk_table(n), n, n, run.direction, backend=run.backend, model="poisson",
                             min_cases=run.min_cases)
        best, best_entry = engine.best_per_centre(np.ones((n, 1), dtype=np.int32), want_arg=True)
        batch = max(1, min(_BATCH, _BATCH_ENTRIES // max(len(neighbors), 1)))
        starts = list(range(0, run.n_replicates, batch))
        sizes = [min(batch, run.n_replicates - s) for s in starts]
        parts = run_replicates(_null_batch, sizes, seeds=replicate_seed_batches(run.seed, run.n_replicates, batch),
                               executor=run.executor, progress=run.progress, desc="continuous Poisson Monte Carlo",
                               args=(region, n, c, max_radius, aux, run.direction, run.backend, run.min_cases))
    null_llr = np.concatenate(parts).astype(np.float64)

    def window_stats(members, cases, j, i):
        e = float(wexp[j])
        rr = (cases / e) / ((n - cases) / (n - e)) if n > cases else math.inf
        return e / aux, e, rr

    cand = Candidates(best[:, 0], best_entry[:, 0], offsets, neighbors, cpoints, centre_loc)
    members_of = [[k] for k in range(n)]
    clusters = _clusters(cand, _radius(Geometry("euclidean"), xy, cpoints), np.ones(n, dtype=np.int64), members_of,
                         ids, null_llr, window_stats)
    return ScanResult(clusters=clusters, null_llr=null_llr, backend=run.backend, n_cases=n, n_population=region.area,
                      n_locations=n, n_merged=0, n_centres=len(cpoints), n_windows=int(boundary.sum()),
                      max_population=share ** 2, direction=run.direction, n_replicates=run.n_replicates,
                      max_distance=max_distance, min_cases=run.min_cases, distance="euclidean",
                      model="continuous_poisson", _loc_coords=xy, _loc_cases=np.ones(n, dtype=np.int64),
                      _loc_population=np.ones(n), _loc_expected=None, _row_ids=ids, _row_loc=np.arange(n))
