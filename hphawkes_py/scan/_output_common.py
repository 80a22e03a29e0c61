"""Helpers shared by the SaTScan-style writers (tables, geometry, maps): one place, so the three
modules depend on it and not on each other."""
from __future__ import annotations

import pandas as pd

__all__ = []

#: the models whose cases fall in categories: SaTScan reports a category table per cluster
#: instead of one observed / expected count
CATEGORICAL = ("ordinal", "multinomial")


def _check_result(result):
    from .result import ScanResult

    if not isinstance(result, ScanResult):
        raise TypeError(f"result must be a hp.scan ScanResult (from hp.scan.bernoulli, poisson, space_time, ...), "
                        f"got {type(result).__name__}")
    if result._row_ids is None or result._loc_coords is None:
        raise ValueError("result carries no location data (built by an older version); rerun the scan")


def _date(value) -> str:
    """A day as SaTScan writes it (``JulianToString``: ``YYYY/M/D``, no zero padding)."""
    t = pd.Timestamp(value)
    return f"{t.year}/{t.month}/{t.day}"


def _location_of_ids(result) -> tuple[dict, list]:
    """``{input id: merged location}`` and ``[(location, [its ids in input order])]`` in location order."""
    loc_of = {}
    for i, g in zip(result._row_ids.tolist(), result._row_loc.tolist()):
        loc_of.setdefault(i, int(g))
    ids_of: dict = {}
    for i, g in loc_of.items():
        ids_of.setdefault(g, []).append(i)
    return loc_of, sorted(ids_of.items())


