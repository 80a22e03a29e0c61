"""SaTScan parameter files of the continuous Poisson model (``ModelType=6``, purely spatial) for
:func:`~hphawkes_py.scan.run_prm`: :func:`~hphawkes_py.scan.continuous_poisson` on the points of the
coordinates file (``<id> <x> <y>`` or ``<x> <y>`` records; no case file), in the region of the
``[Polygons]`` section (``Polygon1=``, ``Polygon2=``, ... in SaTScan's inequality text), with the grid file's
centres. ``MaxSpatialSizeInPopulationAtRisk`` / 100 is ``max_radius_share`` (SaTScan limits the circle's
radius to that share of the radius of a circle as large as the region); ``UseDistanceFromCenterOption``,
``ScanAreas``, ``MinimumCasesInHighRateClusters`` and ``MonteCarloReps`` as for the other models;
``GeographicalCoordinatesCheckType=1`` leaves points and grid centres outside the region out (with a warning),
as SaTScan does. Latitude/longitude coordinates are refused (SaTScan has none for this model), as is every
other setting :func:`~hphawkes_py.scan._prm.prm_arguments` refuses for it.
"""
from __future__ import annotations

import re
import warnings

import numpy as np

from ._satscan import _number, _read_rows

__all__ = ["continuous_poisson_kwargs", "run_continuous_poisson"]


def continuous_poisson_kwargs(v, bad, kwargs) -> None:
    """The continuous Poisson settings of the parameter values ``v`` into ``kwargs`` (after the settings every
    model shares): ``polygons``, ``max_radius_share``, ``relaxed`` (``GeographicalCoordinatesCheckType=1``)."""
    if kwargs.pop("distance", "euclidean") != "euclidean":
        raise bad("CoordinatesType", "is not supported with the continuous Poisson model: Cartesian coordinates "
                                     "only (CoordinatesType=0), as SaTScan")
    keys = sorted((k for k in v if re.fullmatch(r"Polygon\d+", k)), key=lambda k: int(k[7:]))
    keys = [k for k in keys if v[k]]
    polygons = [v[k] for k in keys]
    if not polygons:
        raise bad("Polygon1", "is required: the continuous Poisson model needs the observable region as [Polygons] "
                              "Polygon1=..., Polygon2=... (inequalities such as 'Y <= 10000,X >= 0,Y >= X')")
    from .continuous_poisson_model import check_region

    try:
        check_region(polygons)
    except ValueError as exc:
        # the function's polygons[k] is the file's k-th Polygon key
        named = [keys[int(k)] for k in re.findall(r"polygons\[(\d+)\]", str(exc))] or keys[:1]
        raise bad(named[0], re.sub(r"polygons\[(\d+)\]", lambda m: keys[int(m.group(1))], str(exc))) from None
    kwargs["polygons"] = polygons
    kwargs["max_radius_share"] = kwargs.pop("max_population")
    check = v.get("GeographicalCoordinatesCheckType", "0") or "0"
    if check not in ("0", "1"):
        raise bad("GeographicalCoordinatesCheckType", "must be 0 (strict) or 1 (relaxed)")
    kwargs["relaxed"] = check == "1"


def _points(path):
    """``(ids, xy)`` of the coordinates file: ``<id> <x> <y>`` records, or ``<x> <y>`` (the first record decides,
    as SaTScan; ids then ``point<line>``)."""
    p, rows = _read_rows(path, "coordinates", 2)
    named = len(rows[0][1]) >= 3
    ids, xy = [], []
    for lineno, parts in rows:
        if named and len(parts) < 3:
            raise ValueError(f"{p}:{lineno}: the first record gives an id and two coordinates; this one has "
                             f"{len(parts)} field(s)")
        f = 1 if named else 0
        xy.append((_number(parts[f], p, lineno, f + 1, "x"), _number(parts[f + 1], p, lineno, f + 2, "y")))
        ids.append(parts[0] if named else f"point{lineno}")
    return p, np.array(ids, dtype=object), np.array(xy, dtype=np.float64).reshape(-1, 2)


def run_continuous_poisson(spec, run):
    """The purely spatial continuous Poisson analysis of :func:`~hphawkes_py.scan.run_prm`."""
    from .continuous_poisson_model import check_region, continuous_poisson

    kw = dict(spec["kwargs"])
    relaxed = kw.pop("relaxed")
    p, ids, xy = _points(spec["files"]["geo_file"])
    if relaxed:
        region = check_region(kw["polygons"])
        inside = region.contains(xy)
        if not inside.all():
            warnings.warn(f"{p}: {int((~inside).sum())} point(s) outside the polygons left out "
                          f"(GeographicalCoordinatesCheckType=1)", UserWarning, stacklevel=3)
            ids, xy = ids[inside], xy[inside]
        if kw.get("centres") is not None:
            keep = region.contains(kw["centres"])
            if not keep.all():
                warnings.warn(f"{int((~keep).sum())} grid centre(s) outside the polygons left out "
                              f"(GeographicalCoordinatesCheckType=1)", UserWarning, stacklevel=3)
                kw["centres"] = kw["centres"][keep]
    return continuous_poisson(xy, point_ids=ids, **kw, **run)
