"""SaTScan's elliptic windows: the shapes and angles, the coordinate transform, the penalty.

An ellipse of shape s (major / minor axis) at an angle is a circle in coordinates where the
component along its major axis is shrunk by 1 / s; its windows are built by
:func:`~.windows.build_windows` in those coordinates. Windows are ranked by the penalised LLR
``LLR x (4 s / (1 + s)^2)^a`` (non-compactness penalty a = 0, 1/2 or 1).
"""
from __future__ import annotations

import math

import numpy as np

from .._validate import check_in, check_int, check_positive
from .windows import build_windows

__all__ = ["ellipse_set", "PENALTIES"]


PENALTIES = {"none": 0.0, "medium": 0.5, "strong": 1.0}
#: SaTScan's default numbers of angles of its five default shapes
DEFAULT_ANGLES = (4, 6, 9, 12, 15)
#: at most this many orientations per shape (half a degree apart) ...
MAX_ANGLES = 360
#: ... and this many ellipses in all: every ellipse costs a scan of all the centres' windows, so the
#: work is bounded before it starts (SaTScan's default set has 46)
MAX_ELLIPSES = 1000


def ellipse_set(shapes, angles) -> list:
    """SaTScan's elliptic windows: the circle, then for each shape s (major / minor axis) its
    ``angles`` orientations, the multiples of 180 / angles degrees in (-90, 90]."""
    out = [(1.0, 0.0)]
    for sh, k in zip(shapes, angles):
        step = 180.0 / k
        lo = int(math.floor(-90.0 / step)) + 1
        out += [(float(sh), j * step) for j in range(lo, lo + k)]
    return out


def _ellipse_transform(xy: np.ndarray, shape: float, angle: float) -> np.ndarray:
    """Coordinates in which the ellipse (major axis at ``angle`` degrees from the first axis,
    ``shape`` times the minor one) is a circle of radius = its semiminor axis.

    The arithmetic is SaTScan's (``CentroidNeighborCalculator::Transform``: the component along the
    major axis shrunk by the weight 1 / shape, the angle, shape, weight and slope in single
    precision), so that distances compare, and tie, as in SaTScan: the order of equidistant
    locations and the reported axes are SaTScan's to the last bit (checked against its compiled
    function for the shapes and angles of the default elliptic scan)."""
    f32 = np.float32
    # SaTScan's angle: pi * e / k in [0, pi) (ours: (-90, 90] degrees, the same orientations)
    a = f32(math.radians(angle if angle >= 0 else angle + 180.0))
    w = f32(f32(1.0) / f32(shape))
    x, y = xy[:, 0].astype(np.float64), xy[:, 1].astype(np.float64)
    if a == 0:
        return np.column_stack([x * np.float64(w), y])
    beta = f32(-f32(math.cos(float(a))) / f32(math.sin(float(a))))
    b = np.float64(beta)
    xp = (x + b * y) / np.float64(f32(f32(1.0) + f32(beta * beta)))
    yp = b * xp
    omw = np.float64(f32(f32(1.0) - w))
    return np.column_stack([x * np.float64(w) + xp * omw, y * np.float64(w) + yp * omw])


def _elliptic_windows(centres, coords, size, limit, ellipses, circle=None, circle_limit=None):
    """Windows of every (ellipse, centre) block, concatenated: block b = e * m + i (``circle``, ``circle_limit``:
    a second size limit, see :func:`~.windows.build_windows`)."""
    parts = [build_windows(_ellipse_transform(centres, sh, an), _ellipse_transform(coords, sh, an), size, limit,
                           tie_coords=coords, circle=circle, circle_limit=circle_limit)
             for sh, an in ellipses]
    offsets = [np.zeros(1, dtype=np.int64)]
    base = 0
    for w in parts:
        offsets.append(w[0][1:] + base)
        base += int(w[0][-1])
    return (np.concatenate(offsets), np.concatenate([w[1] for w in parts]), np.concatenate([w[2] for w in parts]),
            np.concatenate([w[3] for w in parts]))


def _check_ellipses(window, geo, grid_cell, max_distance, ellipse_shapes, ellipse_angles, penalty):
    """``(ellipses, penalty exponent)`` of an elliptic scan (``(None, None)`` for circles): SaTScan's
    window set (:func:`ellipse_set`) after checking the options shared by :func:`bernoulli` and
    :func:`poisson`."""
    check_in(window, "window", ("circle", "ellipse"))
    if window != "ellipse":
        return None, None
    if geo.great_circle or grid_cell is not None or max_distance is not None:
        raise ValueError("window='ellipse' needs Euclidean coordinates and no grid_cell or max_distance "
                         "(as SaTScan's elliptic scan)")
    shapes = [check_positive(v, "ellipse_shapes") for v in ellipse_shapes]
    angles = [check_int(v, "ellipse_angles", minimum=1) for v in ellipse_angles]
    many = [v for v in angles if v > MAX_ANGLES]
    if many:
        raise ValueError(f"ellipse_angles gives the number of orientations of each shape, at most {MAX_ANGLES} (half a "
                         f"degree apart; SaTScan's defaults are {DEFAULT_ANGLES}), got {many[0]}")
    low = [v for v in shapes if v <= 1]
    if low:
        raise ValueError(f"ellipse_shapes must be each > 1 (the major axis over the minor one; the circle is always "
                         f"scanned), got {low[0]!r}")
    if len(shapes) != len(angles):
        raise ValueError(f"ellipse_shapes and ellipse_angles must have the same length (one number of angles per "
                         f"shape), got {len(shapes)} shapes and {len(angles)} angle counts")
    if sum(angles) > MAX_ELLIPSES:
        raise ValueError(f"ellipse_angles: {sum(angles)} ellipses in all (the sum of ellipse_angles) is more than the "
                         f"{MAX_ELLIPSES} an elliptic scan may have; each ellipse is a full scan of every centre "
                         f"(SaTScan's default is {sum(DEFAULT_ANGLES)})")
    return ellipse_set(shapes, angles), PENALTIES[check_in(penalty, "penalty", tuple(PENALTIES))]


def _elliptic_penalties(ellipses, m0: int, pen_a: float) -> np.ndarray:
    """Non-compactness factor ``(4 s / (1 + s)^2)^a`` of every (ellipse, centre) window block."""
    sh = np.repeat([e[0] for e in ellipses], m0)
    return (4.0 * sh / (1.0 + sh) ** 2) ** pen_a


def _elliptic_report(best, pens, ellipses, points, cpoints, centres, centre_loc, geo):
    """What :func:`_clusters` needs for an elliptic scan: ``(stat, radius_of, extra, centres,
    centre_loc, tiebreak)`` over the (ellipse, centre) blocks ``b = e * m + i`` (``points``,
    ``cpoints`` in the working units of the :class:`~.locations.Geometry` ``geo``).

    As SaTScan: one candidate per centre, its best window over all shapes and angles by the
    penalised statistic (the secondary clusters are drawn from these; the others are not
    reported); equal statistics in the centres' input order; ``radius_of`` gives the semiminor axis."""
    m0 = len(cpoints)
    stat = best * pens
    keep = np.zeros_like(stat, dtype=bool)
    per = stat.reshape(len(ellipses), m0)
    keep[np.argmax(per, axis=0) * m0 + np.arange(m0)] = True
    stat = np.where(keep, stat, 0.0)
    tpts = [_ellipse_transform(points, a, b) for a, b in ellipses]
    tctr = [_ellipse_transform(cpoints, a, b) for a, b in ellipses]

    def radius_of(members, b):
        e, i = divmod(int(b), m0)
        return float(geo.from_working(np.sqrt(((tpts[e][members] - tctr[e][i]) ** 2).sum(axis=1)).max()))

    def extra_cols(b):
        e, i = divmod(int(b), m0)
        return {"shape": ellipses[e][0], "angle": ellipses[e][1]}

    return (stat, radius_of, extra_cols, np.tile(centres, (len(ellipses), 1)), np.tile(centre_loc, len(ellipses)),
            np.tile(np.arange(m0), len(ellipses)))
