"""The Monte Carlo of the continuous Poisson scan on the CPU (Numba): each replicate's points drawn and its
circles scored in one parallel loop over the replicates.

A replicate spreads the N points over the region's polygons (sequential binomials on their areas, as SaTScan's
``HomogeneousPoissonRandomizer``), uniformly within each (rejection from its bounding box; a point equal to
another is drawn again), and scores the circles about every centre (the given centres, or the replicate's own
points): the k nearest points within the largest radius, expected ``d^2 pi N / A`` at the k-th distance d, by
the discrete Poisson likelihood ratio (:mod:`.continuous_poisson_model`). The windows and LLRs are those of the
Poisson engine on :func:`~.continuous_poisson_model._windows` (tested against it on the same points); the
points differ from the NumPy draws of the other backends (another generator), not their distribution.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .llr import _poisson_llr

__all__ = ["draw_points", "null_maxima"]


@njit(cache=True, inline="always")
def _inside(rows, k0, k1, x, y):
    """Whether (x, y) satisfies the inequalities ``rows[k0:k1]`` (``a y + b x + c`` <= 0 for sign 1, >= 0 for
    -1; boundaries included, SaTScan's test)."""
    for q in range(k0, k1):
        v = y * rows[q, 0] + x * rows[q, 1] + rows[q, 2]
        if (v > 0.0) if rows[q, 3] > 0 else (v < 0.0):
            return False
    return True


@njit(cache=True, inline="always")
def _point_in(rows, row_start, boxes, k, out, i):
    """A uniform point of polygon ``k`` into ``out[i]`` (rejection from its bounding box)."""
    x0, x1, y0, y1 = boxes[k, 0], boxes[k, 1], boxes[k, 2], boxes[k, 3]
    while True:
        x = x0 + (x1 - x0) * np.random.random()
        y = y0 + (y1 - y0) * np.random.random()
        if _inside(rows, row_start[k], row_start[k + 1], x, y):
            out[i, 0] = x
            out[i, 1] = y
            return


@njit(cache=True)
def _draw(seed, n, rows, row_start, boxes, areas):
    """``n`` distinct uniform points of the region, from Numba's generator reseeded with ``seed``."""
    np.random.seed(seed)
    out = np.empty((n, 2))
    owner = np.empty(n, dtype=np.int64)
    left = n
    area_left = areas.sum()
    i = 0
    for k in range(areas.shape[0]):
        m = left if k == areas.shape[0] - 1 else np.random.binomial(left, min(1.0, areas[k] / area_left))
        for _ in range(m):
            _point_in(rows, row_start, boxes, k, out, i)
            owner[i] = k
            i += 1
        left -= m
        area_left -= areas[k]
    while True:  # the later of two equal points is drawn again
        order = np.argsort(out[:, 0])
        again = False
        for q in range(1, n):
            a, b = order[q - 1], order[q]
            if out[a, 0] == out[b, 0] and out[a, 1] == out[b, 1]:
                later = max(a, b)
                _point_in(rows, row_start, boxes, owner[later], out, later)
                again = True
        if not again:
            return out


@njit(cache=True, inline="always")
def _best_about(cx, cy, pts, d2, max_r2, aux, klogk, C, min_cases, want_high, want_low):
    """The largest LLR of the circles about (cx, cy): the points within the largest radius by distance, each a
    window end with expected ``d^2 pi aux`` (none at distance 0)."""
    m = 0
    for q in range(pts.shape[0]):
        dx = pts[q, 0] - cx
        dy = pts[q, 1] - cy
        v = dx * dx + dy * dy
        if v <= max_r2:
            d2[m] = v
            m += 1
    near = np.sort(d2[:m])
    Cf = np.float64(C)
    best = 0.0
    for k in range(m):
        d = np.sqrt(near[k])
        e = d * d * math.pi * aux
        if not (e > 0.0 and e < Cf):
            continue
        c = k + 1
        high = want_high and np.float64(c) > e and c >= min_cases
        low = want_low and np.float64(c) < e
        if high or low:
            best = max(best, _poisson_llr(klogk, c, C, np.log(e), np.log(Cf - e)))
    return best


@njit(cache=True, parallel=True)
def _null_maxima(words, n, rows, row_start, boxes, areas, centres, own_centres, max_r2, aux, klogk, min_cases,
                 want_high, want_low, out):
    for r in prange(words.shape[0]):
        pts = _draw(words[r], n, rows, row_start, boxes, areas)
        cen = pts if own_centres else centres
        d2 = np.empty(n)
        best = 0.0
        for i in range(cen.shape[0]):
            best = max(best, _best_about(cen[i, 0], cen[i, 1], pts, d2, max_r2, aux, klogk, n, min_cases,
                                         want_high, want_low))
        out[r] = best


def _region_arrays(region):
    """The polygons' inequalities stacked (Q, 4) with each polygon's first row, and their boxes and areas."""
    rows = np.ascontiguousarray(np.concatenate(region.rows), dtype=np.float64)
    row_start = np.concatenate([[0], np.cumsum([len(r) for r in region.rows])]).astype(np.int64)
    return rows, row_start, np.ascontiguousarray(region.boxes, dtype=np.float64), \
        np.ascontiguousarray(region.areas, dtype=np.float64)


def draw_points(region, n: int, seed: int) -> np.ndarray:
    """(n, 2) the points of the replicate of seed word ``seed`` (those :func:`null_maxima` scores)."""
    return _draw(np.uint32(seed), int(n), *_region_arrays(region))


def null_maxima(region, n: int, centres, max_radius: float, aux: float, klogk, min_cases: int, direction: str,
                words) -> np.ndarray:
    """(R,) the largest circle LLR of each replicate (one per seed word of ``words``; 0: none): its ``n``
    points drawn in ``region`` (:class:`~.continuous_poisson_model.Region`), circles about ``centres``
    ((m, 2), or None: the replicate's points) up to ``max_radius``, expected ``d^2 pi aux``."""
    out = np.zeros(len(words))
    own = centres is None
    cen = np.zeros((0, 2)) if own else np.ascontiguousarray(centres, dtype=np.float64)
    _null_maxima(np.ascontiguousarray(words, dtype=np.uint32), int(n), *_region_arrays(region), cen, own,
                 float(max_radius) ** 2, float(aux), klogk, int(min_cases), direction in ("high", "both"),
                 direction in ("low", "both"), out)
    return out
