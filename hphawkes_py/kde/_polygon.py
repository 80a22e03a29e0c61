"""Polygon rings for :meth:`hphawkes_py.kde.Window.from_polygon`: their checks and their rasterisation.

A cell is inside the window when its centre is inside the polygon (even-odd rule over the rings),
so two kinds of rings would give a window that is silently not the intended area:

* a ring that encloses no area (collinear or repeated vertices): the point-in-polygon test counts
  cell centres lying on its edges as inside, giving a window of stray cells along a line;
* edges that cross (a self-intersecting ring, such as a rectangle with its vertices out of order,
  or two overlapping rings): the even-odd rule then keeps only part of the area (a bow tie
  instead of the rectangle; the difference of overlapping polygons instead of their union).

Both are refused.  Edges that only touch (a shared vertex or edge) are allowed.
"""
from __future__ import annotations

import numpy as np

from ._coords import _raster_shape

__all__ = ["check_rings", "rasterise_rings", "ring_area"]

#: a ring whose area is below this fraction of its bounding box's squared diagonal encloses no area
_AREA_RTOL = 1e-12
#: candidate edge pairs tested at once by :func:`_first_crossing`
_PAIR_CHUNK = 1 << 20


def _open_ring(ring: np.ndarray) -> np.ndarray:
    """The ring's vertices without a closing vertex equal to the first."""
    if len(ring) > 1 and np.array_equal(ring[0], ring[-1]):
        return ring[:-1]
    return ring


def ring_area(ring: np.ndarray) -> tuple[float, float]:
    """(area, bound of its rounding error) of a ring by the shoelace formula, both >= 0, in squared
    coordinate units; the vertices are taken relative to the first, which keeps the products small."""
    v = _open_ring(ring)
    c = v - v[0]
    x, y = c[:, 0], c[:, 1]
    xn, yn = np.roll(x, -1), np.roll(y, -1)
    area = 0.5 * abs(float(np.sum(x * yn - xn * y)))
    scale = 0.5 * float(np.sum(np.abs(x * yn) + np.abs(xn * y)))
    return area, (len(v) + 4) * np.finfo(np.float64).eps * scale


def _orient(ax, ay, bx, by, cx, cy):
    """Sign of the turn a -> b -> c (the cross product (b - a) x (c - a)), 0 when c is a or b or
    within rounding of the line ab (so that a vertex lying on another edge, as where a hole touches
    its shell, is never taken for a crossing)."""
    u = (bx - ax) * (cy - ay)
    v = (by - ay) * (cx - ax)
    d = u - v
    return np.where(np.abs(d) <= 8 * np.finfo(np.float64).eps * (np.abs(u) + np.abs(v)), 0.0, np.sign(d))


def _first_crossing(p: np.ndarray, q: np.ndarray):
    """The first pair (i, j), i < j, of segments p[i]q[i] and p[j]q[j] that cross properly (each
    one's end points strictly on both sides of the other), or None.  Segments sharing an end point
    never count (its turn is exactly 0).  Candidates are the pairs whose x ranges overlap, found by
    sorting on the left end; they are tested in chunks of ``_PAIR_CHUNK``."""
    xlo = np.minimum(p[:, 0], q[:, 0])
    xhi = np.maximum(p[:, 0], q[:, 0])
    ylo = np.minimum(p[:, 1], q[:, 1])
    yhi = np.maximum(p[:, 1], q[:, 1])
    order = np.argsort(xlo, kind="stable")
    xlo_s = xlo[order]
    # segment order[k] may meet order[k + 1 .. end[k] - 1] (left ends up to its right end)
    end = np.searchsorted(xlo_s, xhi[order], side="right")
    count = np.maximum(end - np.arange(len(order)) - 1, 0)
    start = 0
    best = None
    while start < len(order):
        stop = start + 1
        total = int(count[start])
        while stop < len(order) and total + int(count[stop]) <= _PAIR_CHUNK:
            total += int(count[stop])
            stop += 1
        ks = np.repeat(np.arange(start, stop), count[start:stop])
        first = np.repeat(np.cumsum(count[start:stop]) - count[start:stop], count[start:stop])
        js = ks + 1 + (np.arange(len(ks)) - first)
        a, b = order[ks], order[js]
        keep = (ylo[a] <= yhi[b]) & (ylo[b] <= yhi[a])
        a, b = a[keep], b[keep]
        pa, qa, pb, qb = p[a].T, q[a].T, p[b].T, q[b].T
        cross = ((_orient(*pa, *qa, *pb) * _orient(*pa, *qa, *qb) < 0)
                 & (_orient(*pb, *qb, *pa) * _orient(*pb, *qb, *qa) < 0))
        if cross.any():
            i, j = np.minimum(a[cross], b[cross]), np.maximum(a[cross], b[cross])
            k = int(np.lexsort((j, i))[0])
            pair = (int(i[k]), int(j[k]))
            best = pair if best is None else min(best, pair)
        start = stop
    return best


def check_rings(rings: list[np.ndarray], name: str = "vertices") -> None:
    """Refuse rings that enclose no area or whose edges cross (see the module notes), naming the
    ring and the offending vertices.

    Parameters
    ----------
    rings : list of ndarray (k, 2)
        Closed or open rings of finite (x, y) vertices, at least 3 each.
    name : str
        The argument the rings came from, for the messages.

    Raises
    ------
    ValueError
        A ring of (near) zero area, or two crossing edges.

    Examples
    --------
    >>> from hphawkes_py.kde._polygon import check_rings
    >>> check_rings([np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])])  # a square
    >>> check_rings([np.array([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0], [0.0, 1.0]])])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: vertices: the polygon's edges cross: ...
    """
    where = (lambda r: f"ring {r}") if len(rings) > 1 else (lambda r: "the polygon")
    opened = [_open_ring(ring) for ring in rings]
    allv = np.vstack(opened)
    lo, hi = allv.min(axis=0), allv.max(axis=0)
    with np.errstate(over="ignore"):
        span = hi - lo
        # squared distances between vertices must be finite for the area and crossing tests
        if not np.all(np.isfinite(span * span)):
            raise ValueError(
                f"{name}: the vertices span x [{lo[0]:.6g}, {hi[0]:.6g}], y [{lo[1]:.6g}, {hi[1]:.6g}]: the squared "
                "distances between them overflow float64; rescale the coordinates"
            )
    p = np.vstack(opened)
    q = np.vstack([np.roll(v, -1, axis=0) for v in opened])
    owner = np.concatenate([np.full(len(v), r) for r, v in enumerate(opened)])
    first = np.concatenate([np.arange(len(v)) for v in opened])
    hit = _first_crossing(p, q)
    if hit is not None:
        i, j = hit
        ri, rj = int(owner[i]), int(owner[j])

        def edge(k, r):
            whose = "the edge" if len(rings) == 1 else f"the edge of ring {r}"
            return f"{whose} from vertex {int(first[k])} {tuple(map(float, p[k]))} to {tuple(map(float, q[k]))}"

        if len(rings) == 1:
            what = "the polygon's edges cross"
        else:
            what = f"ring {ri} crosses itself" if ri == rj else f"rings {ri} and {rj} cross"
        raise ValueError(
            f"{name}: {what}: {edge(i, ri)} meets {edge(j, rj)}. The window keeps cells by the even-odd rule, so a "
            "self-intersecting ring (e.g. vertices out of order) or overlapping rings would cover only part of the "
            "intended area; give the vertices in order around the boundary, with holes as separate rings inside"
        )
    # after the crossings: a bow tie's signed areas cancel, but it is refused above as crossing
    for r, v in enumerate(opened):
        area, err = ring_area(v)
        diag2 = float(np.sum((v.max(axis=0) - v.min(axis=0)) ** 2))
        if not area > max(err, _AREA_RTOL * diag2):
            raise ValueError(
                f"{name}: {where(r)} encloses no area (shoelace area {area:.3g} for a bounding box of diagonal "
                f"{diag2 ** 0.5:.3g}): its {len(v)} vertices are collinear or repeated, and a window needs a polygon "
                "with an interior"
            )


def rasterise_rings(rings: list[np.ndarray], cs: float) -> tuple[np.ndarray, float, float]:
    """(mask, x0, y0) of the cells of side ``cs`` on the rings' bounding box whose centre is inside
    the rings (even-odd rule); mask row 0 is the top row.  Refused when no centre is inside."""
    from matplotlib.path import Path as MPath

    allv = np.vstack(rings)
    xmin, ymin = allv.min(axis=0)
    xmax, ymax = allv.max(axis=0)
    rows, cols = _raster_shape(float(xmax - xmin), float(ymax - ymin), cs, "the polygon's bounding box")
    xc = xmin + (np.arange(cols) + 0.5) * cs
    paths = [MPath(r) for r in rings]
    mask = np.zeros((rows, cols), bool)
    # row blocks of ~1 M cells: the cell centres never exist for the whole raster at once
    step = max(1, (1 << 20) // cols)
    for r0 in range(0, rows, step):
        rr = np.arange(r0, min(rows, r0 + step))
        yc = ymin + (rows - 1 - rr + 0.5) * cs
        X, Y = np.meshgrid(xc, yc)
        pts = np.column_stack([X.ravel(), Y.ravel()])
        inside = np.zeros(len(pts), bool)
        for path in paths:
            inside ^= path.contains_points(pts)
        mask[r0:r0 + len(rr)] = inside.reshape(len(rr), cols)
    if not mask.any():
        raise ValueError(f"the polygon contains no cell centre at cell_size {cs}; use a smaller cell size")
    return mask, float(xmin), float(ymin)
