"""Helpers shared by the SaTScan-style writers (tables, geometry, maps): one place, so the three
modules depend on it and not on each other."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from ._report_format import NORMAL_COLUMNS, NORMAL_MODELS
from .locations import EARTH_RADIUS_KM

__all__ = []

#: the models whose cases fall in categories: SaTScan reports a category table per cluster
#: instead of one observed / expected count
CATEGORICAL = ("ordinal", "multinomial", "space_time_ordinal", "space_time_multinomial", "temporal_ordinal",
               "temporal_multinomial")


def normal_columns(result) -> list:
    """The :data:`NORMAL_COLUMNS` of a normal model's ``result`` (its cluster table has them), else none."""
    if result.model not in NORMAL_MODELS:
        return []
    return [c for c in NORMAL_COLUMNS if c[2] in result.clusters.columns or not c[2].startswith(("weight",))]


def _check_result(result):
    from .result import ScanResult

    if not isinstance(result, ScanResult):
        raise TypeError(f"result must be a hp.scan ScanResult (from hp.scan.bernoulli, poisson, space_time, ...), "
                        f"got {type(result).__name__}")
    if result._row_ids is None or result._loc_coords is None:
        raise ValueError("result carries no location data (built by an older version); rerun the scan")


def _date(value, precision: str = "day") -> str:
    """A day as SaTScan writes it (``JulianToString``: ``YYYY/M/D``, no zero padding; with ``precision`` "month"
    ``YYYY/M``, "year" ``YYYY``, as it writes a purely temporal cluster's in the precision of the case times)."""
    t = pd.Timestamp(value)
    return {"year": f"{t.year}", "month": f"{t.year}/{t.month}"}.get(precision, f"{t.year}/{t.month}/{t.day}")


def _location_of_ids(result) -> tuple[dict, list]:
    """``{input id: merged location}`` and ``[(location, [its ids in input order])]`` in location order."""
    loc_of = {}
    for i, g in zip(result._row_ids.tolist(), result._row_loc.tolist()):
        loc_of.setdefault(i, int(g))
    ids_of: dict = {}
    for i, g in loc_of.items():
        ids_of.setdefault(g, []).append(i)
    return loc_of, sorted(ids_of.items())


def _location_relative_risk(observed, expected, total):
    """The ``.gis`` table's LOC_RR (``CCluster::GetRelativeRisk``): blank (NaN) when every case is at
    the location (infinite), 0 where SaTScan's formula has a zero divisor (E = 0 or C = E)."""
    if observed == total:
        return math.nan
    if expected and total - expected and (total - observed) / (total - expected):
        return (observed / expected) / ((total - observed) / (total - expected))
    return 0.0


def _span_of(xy, latlong: bool) -> float:
    """Largest distance between two of the points ``xy`` ((latitude, longitude) and km when ``latlong``)."""
    if len(xy) < 2:
        return 0.0
    if latlong:
        lat, lon = np.radians(xy[:, 0]), np.radians(xy[:, 1])
        dlat = lat[:, None] - lat[None, :]
        dlon = lon[:, None] - lon[None, :]
        h = np.sin(dlat / 2) ** 2 + np.cos(lat[:, None]) * np.cos(lat[None, :]) * np.sin(dlon / 2) ** 2
        return float(2 * EARTH_RADIUS_KM * np.arcsin(np.sqrt(np.minimum(h, 1.0))).max())
    d = xy[:, None, :] - xy[None, :, :]
    return float(np.sqrt((d ** 2).sum(axis=-1)).max())


def _check_flag(value, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__} {value!r}")
    return bool(value)


_P_VALUES = ("monte_carlo", "gumbel", "default")


def _check_p_values(p_values) -> str:
    if p_values not in _P_VALUES:
        raise ValueError(f"p_values must be 'monte_carlo' (SaTScan's PValueReportType=1), 'gumbel' (3) or 'default' "
                         f"(0: Gumbel for clusters ranked below 10, else Monte Carlo), got {p_values!r}")
    return p_values


def _write_dbf(df: pd.DataFrame, path) -> None:
    """A table as a dBase file through GDAL's shapefile driver (attributes only)."""
    from pyogrio.raw import write

    cols = []
    for c in df.columns:
        v = df[c]
        if v.dtype.kind in "iub":
            cols.append(v.to_numpy(dtype=np.int64))
        elif v.dtype.kind == "f":
            cols.append(v.to_numpy(dtype=float))
        else:
            cols.append(v.astype(str).to_numpy(dtype=object))
    path = Path(path)
    write(str(path), None, cols, fields=list(df.columns), driver="ESRI Shapefile", geometry_type=None)
    path.with_suffix(".cpg").unlink(missing_ok=True)
