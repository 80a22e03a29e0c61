"""The scans' locations, circle centres and distances.

Input rows with identical coordinates are merged into one location (counts summed); circles are
centred on the locations or on the cells of a regular grid; distances are planar Euclidean or
great-circle (SaTScan's "Latitude/Longitude" coordinates, km).
"""
from __future__ import annotations

import dataclasses
import datetime
import math
from typing import Any

import numpy as np

from .._validate import as_count_array, as_float_array, check_in, check_positive, check_probability

__all__ = ["Locations", "prepare_locations", "merge_rows", "check_location_ids", "check_ids_per_location",
           "check_counts", "make_centres", "check_centres", "Geometry", "EARTH_RADIUS_KM", "MAX_GRID_CENTRES", "MAX_COUNT"]

#: refuse grids with more centres than this (grid_cell too small for the extent)
MAX_GRID_CENTRES = 4_000_000
#: the largest count (cases, controls) of one row: the engines count in 32-bit integers
MAX_COUNT = 2**31 - 2


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


#: values that NumPy converts to numbers but that are not coordinates: True is not 1, a date is not
#: its day number
_NOT_COORDINATES = (bool, np.bool_, complex, np.complexfloating, datetime.date, datetime.timedelta, np.datetime64,
                    np.timedelta64)


def _check_coords(coords: Any, name: str = "coords") -> np.ndarray:
    """(n, 2) finite float64 coordinates (a copy); booleans, complex numbers, dates and durations are refused."""
    kind = coords.dtype.kind if isinstance(coords, np.ndarray) else np.asarray(coords).dtype.kind
    if kind in "bcMm":
        what = {"b": "booleans", "c": "complex numbers", "M": "dates (datetime64)", "m": "durations (timedelta64)"}
        raise TypeError(f"{name} must hold real numbers (planar coordinates), got {what[kind]}")
    if not isinstance(coords, np.ndarray) or kind == "O":
        # nested lists: NumPy would read True as 1
        try:
            flat = np.asarray(coords, dtype=object).ravel()
        except (TypeError, ValueError):
            flat = ()
        bad = next((v for v in flat if isinstance(v, _NOT_COORDINATES)), None)
        if bad is not None:
            raise TypeError(f"{name} must hold real numbers (planar coordinates), got {bad!r}")
    return as_float_array(coords, name, ndim=2, finite=True, copy=True)


def check_counts(x: Any, name: str) -> np.ndarray:
    """Non-negative whole counts as int64, each at most :data:`MAX_COUNT` (checked on the values as
    given: a uint64 or float count beyond the int64 range would otherwise wrap on conversion)."""
    arr = np.asarray(x)
    if arr.dtype.kind in "uif" and arr.size:
        big = ((arr > MAX_COUNT) & np.isfinite(arr)).ravel()  # NaN and inf: as_count_array's message
        if big.any():
            i = int(np.argmax(big))
            raise ValueError(f"{name} must be at most {MAX_COUNT} (2**31 - 2: the scan engines count in 32-bit "
                             f"integers); {name}[{i}] = {arr.ravel()[i].item()!r}")
    return as_count_array(x, name)


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


def check_ids_per_location(ids: np.ndarray, gid: np.ndarray) -> None:
    """Rows that share a location id must share the location (``gid``: each row's merged location): an
    id names one coordinate pair, else the reported location ids would name the wrong places."""
    _, first_of_id, id_code = np.unique(ids.astype(str), return_index=True, return_inverse=True)
    first = first_of_id[id_code.ravel()]
    bad = gid != gid[first]
    if bad.any():
        r = int(np.argmax(bad))
        v = ids[r].item() if isinstance(ids[r], np.generic) else ids[r]
        raise ValueError(f"location_ids: {v!r} is given for rows at different coordinates "
                         f"(rows {int(first[r])} and {r}); a location id must name one coordinate pair")


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


def report_rows(members: list, ids, gid: np.ndarray, check_ids: bool) -> list:
    """The input rows that report each merged location (``members`` from :func:`merge_rows`): one row
    per distinct location id, the first with that id (observations of one id are one location), after
    checking that an id names one coordinate pair; without user ids (``check_ids`` False), the
    location's first row."""
    if not check_ids:
        return [[rows[0]] for rows in members]
    check_ids_per_location(ids, gid)
    report = []
    for rows in members:
        seen = {}
        for r in rows:
            seen.setdefault(ids[r].item() if isinstance(ids[r], np.generic) else ids[r], r)
        report.append(list(seen.values()))
    return report


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
    ca = check_counts(cases, "cases")
    co = check_counts(controls, "controls")
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


def check_empty_locations(empty_locations, empty_location_ids, with_ids: bool):
    """``(coords (k, 2), ids (k,) or None)`` of the locations without observations a scan of the observation
    models takes as circle centres and members (SaTScan's coordinates-file locations that no record names), or
    None; their ids are needed when the observations' locations have ids (``with_ids``)."""
    if empty_locations is None:
        if empty_location_ids is not None:
            raise ValueError("empty_location_ids needs empty_locations")
        return None
    xy = _check_coords(empty_locations, "empty_locations")
    if xy.shape[1] != 2:
        raise ValueError(f"empty_locations must have shape (k, 2) (x, y columns), got {xy.shape}")
    if not with_ids:
        if empty_location_ids is not None:
            raise ValueError("empty_location_ids needs location_ids (the observations' location ids)")
        return xy, None
    if empty_location_ids is None or len(empty_location_ids) != len(xy):
        raise ValueError(f"empty_location_ids must give the {len(xy)} empty locations' ids (with location_ids)")
    return xy, np.asarray(empty_location_ids, dtype=object)


def with_empty_locations(loc_coords, report, ids, gid, empty):
    """The merged locations of the observations (``loc_coords``, ``report`` rows of ``ids``, each observation's
    location ``gid``) followed by the ``empty`` ones (:func:`check_empty_locations`; None: unchanged):
    ``(loc_coords, report, ids, row_loc)`` with one reporting row per empty location appended to ``ids``
    (its id, or its row number without ids) and ``row_loc`` the location of every row of ``ids``."""
    if empty is None:
        return loc_coords, report, ids, gid
    exy, eids = empty
    n, L0, k = len(ids), len(loc_coords), len(exy)
    more = np.arange(n, n + k) if eids is None else eids
    ids = np.concatenate([np.asarray(ids, dtype=object if eids is not None else None), more])
    return (np.vstack([loc_coords, exy]), report + [[n + q] for q in range(k)], ids,
            np.concatenate([gid, L0 + np.arange(k)]))


def _row_locations(members) -> np.ndarray:
    """The merged location of every input row."""
    out = np.empty(sum(len(m) for m in members), dtype=np.int64)
    for g, m in enumerate(members):
        out[m] = g
    return out


def location_population(population, gid, L, name="population"):
    """(L,) float64 population of every location from ``population`` per row (checked: one value per row,
    non-negative, the same on every row of a location; ``name``: the argument's name in the messages)."""
    po = as_float_array(population, name, ndim=1, copy=True)
    if len(po) != len(gid):
        raise ValueError(f"{name} must have one value per row ({len(gid)}), got {len(po)}")
    if (po < 0).any():
        i = int(np.argmax(po < 0))
        raise ValueError(f"{name} must be non-negative; {name}[{i}] = {po[i]!r}")
    P = np.zeros(L)
    P[gid] = po
    if (P[gid] != po).any():
        i = int(np.argmax(P[gid] != po))
        raise ValueError(f"{name} must be the same on every row of a location; row {i} has {po[i]!r}, another "
                         f"row of its location {P[gid[i]]!r}")
    return P


def circle_limit(circle_population, max_circle_population, gid, L):
    """``(circle, limit)``: the population of SaTScan's max circle size file per location (``circle_population``
    per row, :func:`location_population`'s checks) and the largest a window may hold,
    ``max_circle_population`` (in (0, 0.5]) x its total; ``(None, None)`` without ``circle_population``."""
    if circle_population is None:
        return None, None
    frac = check_probability(max_circle_population, "max_circle_population")
    if frac > 0.5:
        raise ValueError(f"max_circle_population must be in (0, 0.5] (fraction of the total circle_population), "
                         f"got {max_circle_population!r}")
    circle = location_population(circle_population, gid, L, name="circle_population")
    if circle.sum() <= 0:
        raise ValueError("circle_population sums to 0: the max circle size needs a positive total")
    return circle, frac * float(circle.sum())


def _check_max_population(v):
    v = check_probability(v, "max_population")
    if v > 0.5:
        raise ValueError(f"max_population must be in (0, 0.5] (fraction of the total population), got {v!r}")
    return v


def check_centres(centres, distance: str, grid_cell=None):
    """``centres`` (m, 2) float64, checked: finite coordinates of at least one centre (latitude and longitude in
    degrees with ``distance="great_circle"``), not together with ``grid_cell``; None stays None."""
    if centres is None:
        return None
    if grid_cell is not None:
        raise ValueError("give centres (the circle centres themselves) or grid_cell (a regular grid of them), not both")
    c = as_float_array(centres, "centres", ndim=2, copy=True)
    if c.shape[1] != 2 or c.shape[0] < 1:
        raise ValueError(f"centres must have shape (m, 2) with m >= 1 (x, y or latitude, longitude), got {c.shape}")
    Geometry(distance).check(c, gaps=False)  # latitude and longitude ranges
    return c


def make_centres(loc_coords: np.ndarray, grid_cell: Any, centres: np.ndarray | None = None):
    """Circle centres: the locations, the centres of the cells of a regular grid of
    side ``grid_cell`` covering the locations' bounding box, or ``centres`` as given (SaTScan's grid file,
    checked by :func:`check_centres`). Returns (centres (m, 2), centre_location (m,) index of the location
    at the centre or -1)."""
    if centres is not None:
        return np.array(centres, dtype=np.float64), np.full(len(centres), -1, dtype=np.int64)
    if grid_cell is None:
        return loc_coords.copy(), np.arange(len(loc_coords), dtype=np.int64)
    g = check_positive(grid_cell, "grid_cell")
    lo = loc_coords.min(axis=0)
    hi = loc_coords.max(axis=0)
    # the extent halved and the cell halved (exact: powers of two) where hi - lo overflows
    with np.errstate(over="ignore", divide="ignore"):
        span = hi - lo
        cells = span / g if np.isfinite(span).all() else (hi / 2 - lo / 2) / (g / 2)
    nxf, nyf = (max(1.0, float(math.ceil(c))) if math.isfinite(c) else math.inf for c in cells)
    if nxf * nyf > MAX_GRID_CENTRES:
        raise ValueError(
            f"grid_cell={g!r} gives a {nxf:.4g} x {nyf:.4g} grid ({nxf * nyf:.4g} centres) over the locations' "
            f"extent; the limit is {MAX_GRID_CENTRES}: use a larger grid_cell"
        )
    nx, ny = int(nxf), int(nyf)
    gx = lo[0] + g * (np.arange(nx) + 0.5)
    gy = lo[1] + g * (np.arange(ny) + 0.5)
    if not (np.isfinite(gx).all() and np.isfinite(gy).all()):
        raise ValueError(f"grid_cell={g!r} puts grid centres beyond the floating-point range of the coordinates: "
                         f"use a smaller grid_cell")
    X, Y = np.meshgrid(gx, gy, indexing="xy")
    centres = np.column_stack([X.ravel(), Y.ravel()])
    return centres, np.full(len(centres), -1, dtype=np.int64)


#: Earth radius of SaTScan's great-circle distances (km)
EARTH_RADIUS_KM = 6367.0
DISTANCES = ("euclidean", "great_circle")


#: planar coordinates are used as given when the largest is in [2**-11, 2**500] (squared distances of
#: locations MIN_GAP apart neither underflow nor overflow), else rescaled by a power of two to near 1
SAFE_RANGE = (2.0 ** -11, 2.0 ** 500)
#: distinct locations closer than this, relative to the largest coordinate, have squared distances
#: that underflow: they would tie with the centre instead of entering after it, so they are refused
MIN_GAP = 2.0 ** -500


class Geometry:
    """Distances between locations: planar Euclidean on the coordinates as given, or great-circle
    distances (km) on (latitude, longitude) in degrees, as SaTScan computes them for
    "Latitude/Longitude" coordinates. Windows are built on :meth:`points` (for great-circle
    distances, unit vectors: the order by chord length is the order by great-circle distance).

    Planar coordinates of any magnitude (1e-300 as 1e300): :meth:`check` sets ``scale``, a power of
    two that brings the largest coordinate near 1 when squared distances would leave the
    floating-point range. Scaling by a power of two is exact, so distances compare and tie as in the
    user's units, and :meth:`from_working` gives radii in those units."""

    def __init__(self, distance: str):
        self.great_circle = check_in(distance, "distance", DISTANCES) == "great_circle"
        self.scale = 1.0

    def check(self, xy: np.ndarray, gaps: bool = True) -> None:
        """Check the coordinates ``xy`` (n, 2) and set the working scale from them (``gaps``: refuse
        distinct locations too close to be told apart by their squared distance)."""
        if self.great_circle:
            lat, lon = xy[:, 0], xy[:, 1]
            if (np.abs(lat) > 90).any():
                i = int(np.argmax(np.abs(lat) > 90))
                raise ValueError(f"distance='great_circle' reads coords as (latitude, longitude) in degrees; "
                                 f"coords[{i}, 0] = {lat[i]!r} is not a latitude in [-90, 90]")
            if (np.abs(lon) > 360).any():
                i = int(np.argmax(np.abs(lon) > 360))
                raise ValueError(f"distance='great_circle': coords[{i}, 1] = {lon[i]!r} is not a longitude in degrees")
        top = float(np.abs(xy).max()) if xy.size else 0.0
        if not self.great_circle and top > 0 and not SAFE_RANGE[0] <= top <= SAFE_RANGE[1]:
            self.scale = math.ldexp(1.0, -math.frexp(top)[1])
        if gaps:
            self._check_gaps(xy)

    def _check_gaps(self, xy: np.ndarray) -> None:
        """Refuse distinct locations closer, along an axis of :meth:`points`, than MIN_GAP x the
        largest coordinate: their squared distance would underflow to zero."""
        pts = xy if not self.great_circle else self.points(xy)
        top = float(np.abs(pts).max()) if pts.size else 0.0
        for k in range(pts.shape[1]):
            u = np.unique(pts[:, k])
            gaps = np.diff(u)
            if gaps.size and gaps.min() < MIN_GAP * top:
                j = int(np.argmin(gaps))
                r0, r1 = int(np.argmax(pts[:, k] == u[j])), int(np.argmax(pts[:, k] == u[j + 1]))
                raise ValueError(
                    f"coords[{r0}] = {xy[r0].tolist()} and coords[{r1}] = {xy[r1].tolist()} are distinct but so "
                    f"close, for coordinates as large as {float(np.abs(xy).max())!r}, that their squared distance "
                    f"underflows in double precision: give them identical coordinates (one location) or use units "
                    f"of a common scale")

    def points(self, xy: np.ndarray) -> np.ndarray:
        if not self.great_circle:
            return xy if self.scale == 1.0 else xy * self.scale
        lat, lon = np.radians(xy[:, 0]), np.radians(xy[:, 1])
        return np.column_stack([np.cos(lat) * np.cos(lon), np.cos(lat) * np.sin(lon), np.sin(lat)])

    def to_working(self, distance):
        """A distance (coordinate units, or km) in the units of :meth:`points` (chord length)."""
        if distance is None:
            return distance
        if not self.great_circle:
            return distance if self.scale == 1.0 else distance * self.scale
        return 2.0 * math.sin(min(distance / (2.0 * EARTH_RADIUS_KM), math.pi / 2))

    def from_working(self, w: np.ndarray) -> np.ndarray:
        if not self.great_circle:
            return w if self.scale == 1.0 else w / self.scale
        return 2.0 * EARTH_RADIUS_KM * np.arcsin(np.minimum(np.asarray(w) / 2.0, 1.0))


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
