"""Windows from lists of neighbours instead of circles: SaTScan's non-Euclidean neighbors file.

A user who knows which places neighbour which (along a river, a road network, travel times) gives, for every
centre, its locations in the order a window takes them in: the centre first, then its nearest neighbour, and so
on (SaTScan's ``UseNeighborsFile`` / ``NeighborsFilename``: one record per centre, a list of location ids).
Every leading run of a list is a window, cut as SaTScan cuts its circles (``CalculateNeighborsForCurrentState``
over the file's order): a window stops before the first location that would take its size above
``max_population`` of the total (and, with a max circle size file, its population above that limit). The
windows then go through the same engines as circles; a window has no centre point and no radius.
"""
from __future__ import annotations

import numpy as np

from .._validate import describe

__all__ = ["check_neighbors", "neighbor_windows"]


def check_neighbors(neighbors, location_ids) -> list:
    """The ``neighbors`` of a scan checked: one sequence per centre of the ids in ``location_ids`` (each
    location's id, in location order), at least the centre itself, no id twice in one list. Returns one int64
    array of location indices per centre."""
    if isinstance(neighbors, (str, bytes)) or not hasattr(neighbors, "__len__"):
        raise TypeError(f"neighbors must be a list of lists of location ids (one list per centre, the centre "
                        f"first), got {describe(neighbors)}")
    if len(neighbors) == 0:
        raise ValueError("neighbors is empty: give one list of location ids per centre")
    where = {}
    for k, v in enumerate(location_ids):
        where.setdefault(v if not isinstance(v, np.generic) else v.item(), k)
    out = []
    for c, row in enumerate(neighbors):
        if isinstance(row, (str, bytes)) or not hasattr(row, "__len__") or len(row) == 0:
            raise ValueError(f"neighbors[{c}] must be a non-empty list of location ids (the centre first), got "
                             f"{describe(row)}")
        idx = []
        for v in row:
            key = v.item() if isinstance(v, np.generic) else v
            if key not in where:
                raise ValueError(f"neighbors[{c}] names location {v!r}, which is not a location of the data")
            idx.append(where[key])
        idx = np.asarray(idx, dtype=np.int64)
        if len(np.unique(idx)) != len(idx):
            dup = row[int(np.flatnonzero(np.bincount(idx)[idx] > 1)[0])]
            raise ValueError(f"neighbors[{c}] names location {dup!r} more than once")
        out.append(idx)
    return out


def neighbor_windows(lists, size, limit: float, circle=None, circle_limit=None):
    """The windows of neighbour ``lists`` (:func:`check_neighbors`) as :func:`~.windows.build_windows` gives
    circles: ``(offsets, neighbors, npop, boundary)``, each list cut before the first location that would take
    the window's ``size`` (per location: persons, or expected cases) above ``limit`` (and its ``circle``
    population above ``circle_limit``), every entry a window end. A list whose centre alone exceeds the limit
    has no window."""
    size = np.asarray(size)
    sizes = size.astype(np.float64)
    kept = []
    for idx in lists:
        s = np.cumsum(sizes[idx])
        n = int(np.searchsorted(s, limit, side="right"))  # entries whose running size stays <= limit
        if circle is not None:
            n = min(n, int(np.searchsorted(np.cumsum(np.asarray(circle, np.float64)[idx]), circle_limit,
                                           side="right")))
        kept.append(idx[:n])
    offsets = np.zeros(len(kept) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(k) for k in kept])
    neighbors = np.concatenate(kept).astype(np.int32) if offsets[-1] else np.zeros(0, dtype=np.int32)
    if size.dtype.kind == "f":
        npop = np.concatenate([np.cumsum(size[k]) for k in kept]) if offsets[-1] else np.zeros(0)
    else:
        wide = int(size.sum()) >= 2**31 - 1
        npop = np.concatenate([np.cumsum(size[k].astype(np.int64)) for k in kept]) if offsets[-1] else \
            np.zeros(0, dtype=np.int64)
        npop = npop.astype(np.int64 if wide else np.int32)
    return offsets, neighbors, npop, np.ones(len(neighbors), dtype=np.uint8)
