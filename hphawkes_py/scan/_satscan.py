"""Readers for SaTScan's input files (.cas, .ctl, .pop, .geo).

Every value is checked where it is read: an error names the file, the line and the field
(``ny.cas:12: field 2 (#cases) ...``); nothing is skipped, clipped or coerced.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from .._validate import check_in

__all__ = ["read_satscan"]


def _read_rows(path, what: str, min_cols: int) -> tuple[Path, list]:
    """``(path, [(line number, fields), ...])`` of a whitespace-separated SaTScan file."""
    p = Path(path)
    if p.is_dir():
        raise IsADirectoryError(f"{what} file {p} is a folder, expected a file")
    if not p.is_file():
        raise FileNotFoundError(f"{what} file not found: {p}")
    rows = []
    # SaTScan files are whitespace separated, often with CRLF line endings
    with open(p, encoding="utf-8", errors="strict", newline=None) as fh:
        try:
            for lineno, line in enumerate(fh, 1):
                parts = line.strip().split()
                if not parts or parts[0].startswith(("#", "//")):
                    continue
                if len(parts) < min_cols:
                    raise ValueError(f"{p}:{lineno}: the {what} file needs at least {min_cols} fields, "
                                     f"got {line.strip()!r}")
                rows.append((lineno, parts))
        except UnicodeDecodeError as exc:
            raise ValueError(f"{p}: not a text file ({exc.reason} at byte {exc.start})") from None
    if not rows:
        raise ValueError(f"{what} file {p} holds no records")
    return p, rows


def _number(s: str, p: Path, lineno: int, field: int, name: str, *, count: bool = False,
            whole: bool = False) -> float:
    """A finite number (``count``: also >= 0; ``whole``: also an integer) from field ``field``."""
    where = f"{p}:{lineno}: field {field} ({name})"
    try:
        v = float(s)
    except ValueError:
        raise ValueError(f"{where}: {s!r} is not a number") from None
    if not math.isfinite(v):
        raise ValueError(f"{where}: {s!r} is not a finite number")
    if count and v < 0:
        raise ValueError(f"{where}: {s!r} is negative; counts must be >= 0")
    if whole and v != round(v):
        raise ValueError(f"{where}: {s!r} is not a whole number of cases")
    return v


def _counts(path, what: str, field_name: str, n_key: int):
    """``<id> <count> [<date>] [covariates ...]`` -> ``(path, {id: total}, {(id, category): total},
    {id: first line})``. Several rows per id (dates, covariate strata) are summed; the category is
    the tuple of fields from ``n_key`` on (the covariates)."""
    p, rows = _read_rows(path, what, 2)
    total: dict = {}
    by_cat: dict = {}
    first: dict = {}
    for lineno, parts in rows:
        v = _number(parts[1], p, lineno, 2, field_name, count=True, whole=True)
        key = parts[0]
        total[key] = total.get(key, 0.0) + v
        cat = tuple(parts[n_key:])
        by_cat[(key, cat)] = by_cat.get((key, cat), 0.0) + v
        first.setdefault(key, lineno)
    return p, total, by_cat, first


def _time_weights(years, p: Path) -> dict:
    """Weights of the census years in the population averaged over time: the population is
    linear between census years (SaTScan's interpolation) and averaged over their span
    (trapezoidal weights); one census year gets weight 1."""
    ts = sorted(set(years))
    if len(ts) == 1:
        return {ts[0]: 1.0}
    span = ts[-1] - ts[0]
    w = {t: 0.0 for t in ts}
    for a, b in zip(ts[:-1], ts[1:]):
        w[a] += 0.5 * (b - a) / span
        w[b] += 0.5 * (b - a) / span
    return w


def _study_period_weights(years, study_period) -> dict:
    """Weights of the census years in the population averaged over the study period, as SaTScan
    (``PopulationData::CalculateAlpha``): a census year is July 1 of that year (two-digit years
    19xx), the population is linear between census dates and constant before the first and after
    the last, and averaged over the days of ``study_period`` = (first day, last day)."""
    ts = sorted(set(years))
    day = [int(np.datetime64(f"{int(y) + 1900 if y < 100 else int(y):04d}-07-01", "D").astype(np.int64)) for y in ts]
    s0 = int(np.datetime64(study_period[0], "D").astype(np.int64))
    s1 = int(np.datetime64(study_period[1], "D").astype(np.int64)) + 1
    w = [0.0] * len(ts)
    # constant before the first and after the last census date
    w[0] += max(0, min(s1, day[0]) - s0)
    w[-1] += max(0, s1 - max(s0, day[-1]))
    for k in range(len(ts) - 1):
        a, b = day[k], day[k + 1]
        u, v = max(a, s0), min(b, s1)
        if v <= u:
            continue
        w[k] += ((b - u) ** 2 - (b - v) ** 2) / (2.0 * (b - a))
        w[k + 1] += ((v - a) ** 2 - (u - a) ** 2) / (2.0 * (b - a))
    return {t: wk / (s1 - s0) for t, wk in zip(ts, w)}


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _population(path, study_period=None):
    """``<id> <census year> <population> [covariates ...]`` -> ``(path, {id: population},
    {(id, category): population}, {id: first line}, {id: set of census years})``: summed over
    covariates within a census year, then averaged over time (:func:`_time_weights`, or with
    ``study_period`` :func:`_study_period_weights`)."""
    p, rows = _read_rows(path, "population", 3)
    per: dict = {}
    first: dict = {}
    for lineno, parts in rows:
        v = _number(parts[2], p, lineno, 3, "population", count=True)
        if not _is_number(parts[1]):
            raise ValueError(f"{p}:{lineno}: field 2 (census year) {parts[1]!r} is not a year")
        key = (parts[0], float(parts[1]), tuple(parts[3:]))
        per[key] = per.get(key, 0.0) + v
        first.setdefault(parts[0], lineno)
    # each location over the census years it has (a location listed for one year only keeps
    # that year's population)
    loc_years: dict = {}
    for (lid, year, _cat) in per:
        loc_years.setdefault(lid, set()).add(year)
    weights = {lid: (_time_weights(sorted(ys), p) if study_period is None else
                     _study_period_weights(sorted(ys), study_period)) for lid, ys in loc_years.items()}
    total: dict = {}
    by_cat: dict = {}
    for (lid, year, cat), v in per.items():
        w = weights[lid][year]
        total[lid] = total.get(lid, 0.0) + w * v
        by_cat[(lid, cat)] = by_cat.get((lid, cat), 0.0) + w * v
    return p, total, by_cat, first, loc_years


def _as_ids(keys: list[str]):
    try:
        return [int(k) for k in keys]
    except ValueError:
        return list(keys)


def _geo(geo_file):
    p, rows = _read_rows(geo_file, "geo", 3)
    keys, xs, ys, seen = [], [], [], {}
    for lineno, parts in rows:
        if parts[0] in seen:
            raise ValueError(f"{p}:{lineno}: field 1 (location id) {parts[0]!r} is duplicated "
                             f"(first on line {seen[parts[0]]})")
        seen[parts[0]] = lineno
        keys.append(parts[0])
        xs.append(_number(parts[1], p, lineno, 2, "x / latitude"))
        ys.append(_number(parts[2], p, lineno, 3, "y / longitude"))
    return p, keys, xs, ys, seen


def _check_known(p, first: dict, seen: dict, geo_path):
    for key, lineno in first.items():
        if key not in seen:
            raise ValueError(f"{p}:{lineno}: field 1 (location id) {key!r} is not in the coordinates file {geo_path}")


def read_satscan(case_file, control_file=None, population_file=None, geo_file=None, *,
                 model: str = "bernoulli", covariates: bool = False, study_period=None) -> pd.DataFrame:
    """Read SaTScan input files into one row per location (or per location and covariate category).

    Parameters
    ----------
    case_file : path
        ``.cas``: ``<location id> <#cases> [<date> <covariates>...]``; several rows per
        location (dates, covariate strata) are summed.
    control_file : path, optional
        ``.ctl``: ``<location id> <#controls> [<date>...]`` (Bernoulli model); summed likewise.
    population_file : path, optional
        ``.pop``: ``<location id> <census year> <population> [<covariates>...]``; summed over the
        covariates within a census year; over time, the population is linear between census years
        and averaged over their span (one census year: that year's population).
    geo_file : path
        ``.geo``: ``<location id> <x> <y>`` (Cartesian) or ``<location id> <lat> <long>``.
        Coordinates are returned as read (columns ``x`` = 2nd field, ``y`` = 3rd field).
    model : {"bernoulli", "poisson"}
        ``"bernoulli"`` needs exactly one of ``control_file`` and ``population_file`` (with a
        population file, ``controls = population - cases``); ``"poisson"`` needs a population file
        and no control file.
    covariates : bool
        Poisson only: one row per location and covariate category (the ``.cas`` fields after the
        date and the ``.pop`` fields after the population, joined by spaces in column
        ``category``), for :func:`hphawkes_py.scan.poisson`'s indirect standardisation.
    study_period : (start, end), optional
        First and last day (dates) of the study period: the population is then averaged over it as
        SaTScan does (a census year at July 1 of that year, linear between census dates, constant
        outside them; :func:`hphawkes_py.scan.run_prm` passes the file's StartDate/EndDate).
        Default: averaged over the span of the census years.

    Returns
    -------
    pandas.DataFrame
        Bernoulli: ``location_id, x, y, cases, controls`` (+ ``population``); Poisson: ``location_id,
        x, y, cases, population`` (+ ``category``). One row per location of the geo file, in its
        order; locations absent from the count files get 0. Counts are integers when whole.

    Raises
    ------
    ValueError
        Naming the file, line and field: a value that is not a finite number, a negative count,
        fractional cases, a location id missing from the geo file or duplicated in it; a location
        with more cases than population (Bernoulli); both or neither of the control and
        population files (Bernoulli).

    Examples
    --------
    SaTScan's grave sample (Bernoulli: a case and a control file):

    >>> f = hp.datasets.satscan_sample_path
    >>> tab = hp.scan.read_satscan(f("grave.cas"), control_file=f("grave.ctl"), geo_file=f("grave.geo"))
    >>> print(tab.shape, int(tab.cases.sum()), int(tab.controls.sum()))
    (143, 5) 30 113
    >>> tab.head(2)
       location_id       x       y  cases  controls
    0            1  8072.0  8970.0      0         1
    1            2  9004.0  7953.0      0         1
    """
    check_in(model, "model", ("bernoulli", "poisson"))
    if not isinstance(covariates, (bool, np.bool_)):
        raise TypeError(f"covariates must be True or False, got {covariates!r}")
    if covariates and model != "poisson":
        raise ValueError("covariates=True needs model='poisson' (indirect standardisation of the Poisson model)")
    if geo_file is None:
        raise ValueError("geo_file is required (the .geo coordinates file)")
    if model == "bernoulli":
        if control_file is None and population_file is None:
            raise ValueError("give control_file (.ctl) or population_file (.pop): the Bernoulli model needs controls")
        if control_file is not None and population_file is not None:
            raise ValueError(f"give control_file (.ctl) or population_file (.pop), not both: the controls would be "
                             f"either {control_file} or population - cases from {population_file}")
    else:
        if control_file is not None:
            raise ValueError("the Poisson model has no control file (control_file must be None)")
        if population_file is None:
            raise ValueError("model='poisson' needs population_file (.pop)")
    gp, keys, xs, ys, seen = _geo(geo_file)
    # cases: <id> <#cases> <date> <covariates...>; the covariates start at field 4
    cp, cases, cases_cat, cases_first = _counts(case_file, "case", "#cases", 3)
    _check_known(cp, cases_first, seen, gp)
    controls = None
    if control_file is not None:
        kp, controls, _, ctl_first = _counts(control_file, "control", "#controls", 3)
        _check_known(kp, ctl_first, seen, gp)
    population = None
    if population_file is not None:
        pp, population, pop_cat, pop_first, _ = _population(population_file, study_period)
        _check_known(pp, pop_first, seen, gp)

    def col(tab):
        v = np.array([tab.get(k, 0.0) for k in keys], dtype=np.float64)
        return v.astype(np.int64) if np.all(v == np.round(v)) else v

    if covariates:
        cats = sorted({c for (_, c) in pop_cat} | {c for (_, c) in cases_cat})
        extra = sorted({c for (_, c) in cases_cat} - {c for (_, c) in pop_cat})
        if extra:
            k = next(key for key in cases_cat if key[1] == tuple(extra[0]))
            raise ValueError(f"{cp}:{cases_first[k[0]]}: covariates {' '.join(extra[0])!r} of location {k[0]!r} "
                             f"do not occur in the population file {pp}")
        recs = []
        for k, x, y in zip(keys, xs, ys):
            for c in cats:
                recs.append((k, x, y, " ".join(c), cases_cat.get((k, c), 0.0), pop_cat.get((k, c), 0.0)))
        df = pd.DataFrame(recs, columns=["location_id", "x", "y", "category", "cases", "population"])
        df["location_id"] = _as_ids(df["location_id"].tolist())
        df["cases"] = df["cases"].astype(np.int64)
        if np.all(df["population"] == np.round(df["population"])):
            df["population"] = df["population"].astype(np.int64)
        return df

    df = pd.DataFrame({"location_id": _as_ids(keys), "x": xs, "y": ys, "cases": col(cases)})
    if model == "poisson":
        df["population"] = col(population)
        return df
    if controls is not None:
        df["controls"] = col(controls)
        return df
    df["population"] = col(population)
    ctl = df["population"] - df["cases"]
    if (ctl < 0).any():
        i = int(np.argmax((ctl < 0).to_numpy()))
        k = keys[i]
        raise ValueError(
            f"{cp}:{cases_first[k]}: field 2 (#cases): location {k!r} has {df.cases[i]} cases in all but a "
            f"population of {df.population[i]} ({pp}:{pop_first.get(k, '?')}, field 3): the Bernoulli model "
            f"needs cases <= population (controls = population - cases)")
    df["controls"] = ctl
    return df[["location_id", "x", "y", "cases", "controls", "population"]]
