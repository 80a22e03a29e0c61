"""Readers for SaTScan's input files (.cas, .ctl, .pop, .geo)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["read_satscan"]


def _read_rows(path, what: str, min_cols: int) -> list[list[str]]:
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{what} file not found: {p}")
    rows = []
    # SaTScan files are whitespace separated, often with CRLF line endings
    with open(p, encoding="utf-8", errors="replace", newline=None) as fh:
        for lineno, line in enumerate(fh, 1):
            parts = line.strip().split()
            if not parts or parts[0].startswith(("#", "//")):
                continue
            if len(parts) < min_cols:
                raise ValueError(f"{p}:{lineno}: the {what} file needs at least {min_cols} columns, got {line.strip()!r}")
            rows.append(parts)
    if not rows:
        raise ValueError(f"{what} file {p} holds no records")
    return rows


def _number(s: str, p, what: str) -> float:
    try:
        return float(s)
    except ValueError:
        raise ValueError(f"{what} file {p}: {s!r} is not a number") from None


def _counts(path, what: str) -> dict:
    """<id> <count> [date ...] -> {id: summed count} (several rows per id are summed)."""
    out: dict = {}
    for parts in _read_rows(path, what, 2):
        v = _number(parts[1], path, what)
        out[parts[0]] = out.get(parts[0], 0.0) + v
    return out


def _population(path) -> dict:
    """<id> <year> <population> [covariates ...]: summed within a year, averaged over years."""
    per_year: dict = {}
    for parts in _read_rows(path, "population", 3):
        key = (parts[0], parts[1])
        per_year[key] = per_year.get(key, 0.0) + _number(parts[2], path, "population")
    acc: dict = {}
    for (lid, _year), v in per_year.items():
        s, k = acc.get(lid, (0.0, 0))
        acc[lid] = (s + v, k + 1)
    return {lid: s / k for lid, (s, k) in acc.items()}


def _as_ids(keys: list[str]):
    try:
        return [int(k) for k in keys]
    except ValueError:
        return list(keys)


def read_satscan(case_file, control_file=None, population_file=None, geo_file=None) -> pd.DataFrame:
    """Read SaTScan input files into one row per location.

    Parameters
    ----------
    case_file : path
        ``.cas``: ``<location id> <#cases> [<date> <covariates>...]``; several rows per
        location (dates, covariate strata) are summed.
    control_file : path, optional
        ``.ctl``: ``<location id> <#controls> [<date>...]`` (Bernoulli model); summed likewise.
    population_file : path, optional
        ``.pop``: ``<location id> <year> <population> [<covariates>...]``; summed within a
        year, averaged over years (SaTScan's population averaged over time). Without a
        control file, ``controls = population - cases`` (cases are part of the population).
    geo_file : path
        ``.geo``: ``<location id> <x> <y>`` (Cartesian) or ``<location id> <lat> <long>``.
        Coordinates are returned as read (columns ``x`` = 2nd field, ``y`` = 3rd field) and
        :func:`bernoulli` treats them as planar Cartesian coordinates: for latitude/longitude
        files this is the usual small-area approximation (or project them first).

    Returns
    -------
    pandas.DataFrame
        Columns ``location_id, x, y, cases, controls`` (+ ``population`` when a population
        file is given), one row per location of the geo file, in its order. Locations of the
        geo file absent from the count files get 0. Counts are integers when whole.

    Raises
    ------
    ValueError
        A location in a count file is missing from the geo file; malformed rows; negative
        controls from ``population - cases``.
    """
    if geo_file is None:
        raise ValueError("geo_file is required (the .geo coordinates file)")
    if control_file is None and population_file is None:
        raise ValueError("give control_file (.ctl) or population_file (.pop): the Bernoulli model needs controls")
    geo_rows = _read_rows(geo_file, "geo", 3)
    keys, xs, ys, seen = [], [], [], set()
    for parts in geo_rows:
        if parts[0] in seen:
            raise ValueError(f"geo file {geo_file}: location id {parts[0]!r} appears more than once")
        seen.add(parts[0])
        keys.append(parts[0])
        xs.append(_number(parts[1], geo_file, "geo"))
        ys.append(_number(parts[2], geo_file, "geo"))
    cases = _counts(case_file, "case")
    tables = {"case": cases}
    controls = _counts(control_file, "control") if control_file is not None else None
    if controls is not None:
        tables["control"] = controls
    population = _population(population_file) if population_file is not None else None
    if population is not None:
        tables["population"] = population
    for what, tab in tables.items():
        missing = [k for k in tab if k not in seen]
        if missing:
            raise ValueError(f"{what} file: location id(s) {missing[:5]} not in the geo file {geo_file}")

    def col(tab):
        v = np.array([tab.get(k, 0.0) for k in keys], dtype=np.float64)
        return v.astype(np.int64) if np.all(v == np.round(v)) else v

    df = pd.DataFrame({"location_id": _as_ids(keys), "x": xs, "y": ys, "cases": col(cases)})
    if controls is not None:
        df["controls"] = col(controls)
    if population is not None:
        df["population"] = col(population)
        if controls is None:
            ctl = df["population"] - df["cases"]
            if (ctl < 0).any():
                i = int(np.argmax((ctl < 0).to_numpy()))
                raise ValueError(f"location {keys[i]!r} has more cases than population ({df.cases[i]} > {df.population[i]})")
            df["controls"] = ctl
        df = df[["location_id", "x", "y", "cases", "controls", "population"]]
    return df
