"""Readers for SaTScan's input files (.cas, .ctl, .pop, .geo).

Every value is checked where it is read: an error names the file, the line and the field
(``ny.cas:12: field 2 (#cases) ...``); nothing is skipped, clipped or coerced. Records dated
outside a given study period are refused as SaTScan does by default, or (``out_of_period="ignore"``,
SaTScan's relaxed study-period check) left out with a warning that counts them.
"""
from __future__ import annotations

import datetime as _dt
import math
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from .._validate import check_in

__all__ = ["read_satscan"]


def _read_rows(path, what: str, min_cols: int) -> tuple[Path, list]:
    """``(path, [(line number, fields), ...])`` of a whitespace-separated SaTScan file, or of a
    CSV / dBase / shapefile :class:`~hphawkes_py.scan.data_sources.DataSource` (its records in the
    native file's field order)."""
    from .data_sources import DataSource, read_source

    if isinstance(path, DataSource):
        if not path.path.is_file():
            raise FileNotFoundError(f"{what} file not found: {path.path}")
        return path.path, read_source(path, what, min_cols)
    p = Path(path)
    if p.is_dir():
        raise IsADirectoryError(f"{what} file {p} is a folder, expected a file")
    if not p.is_file():
        raise FileNotFoundError(f"{what} file not found: {p}")
    rows = []
    # SaTScan files are whitespace separated, often with CRLF line endings; files saved by Windows
    # editors may start with a UTF-8 byte-order mark, which SaTScan skips ("utf-8-sig" drops it)
    with open(p, encoding="utf-8-sig", errors="strict", newline=None) as fh:
        try:
            for lineno, line in enumerate(fh, 1):
                # SaTScan reads its native files as white-space separated values that double quotes
                # may group ("New York" is one id); a doubled quote inside is a literal quote
                parts = line.strip().split() if '"' not in line else _grouped_fields(line, p, lineno)
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


def _grouped_fields(line: str, p: Path, lineno: int) -> list:
    """The white-space separated, double-quote grouped fields of one line (SaTScan's default source)."""
    from .data_sources import _split_grouped

    try:
        return [v.strip() for v in _split_grouped(line.strip(), " ", '"') if v.strip()]
    except ValueError as exc:
        raise ValueError(f"{p}:{lineno}: {exc}") from None


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


def _counts(path, what: str, field_name: str, n_key: int, dates=None):
    """``<id> <count> [<date>] [covariates ...]`` -> ``(path, {id: total}, {(id, category): total},
    {id: first line})``. Several rows per id (dates, covariate strata) are summed; the category is
    the tuple of fields from ``n_key`` on (the covariates). ``dates``: None (field 3 is not read as a
    date) or ``(first day, last day, out_of_period)``: field 3 is each record's date, and records
    dated outside the period are refused (``"error"``) or left out with a warning (``"ignore"``)."""
    p, rows = _read_rows(path, what, 2)
    total: dict = {}
    by_cat: dict = {}
    first: dict = {}
    outside = []
    for lineno, parts in rows:
        v = _number(parts[1], p, lineno, 2, field_name, count=True, whole=True)
        key = parts[0]
        if dates is not None:
            start, end, mode = dates
            if len(parts) < 3:
                raise ValueError(f"{p}:{lineno}: the {what} record has no date (field 3); with a study period "
                                 f"every record needs one (YYYY, YYYY/MM or YYYY/MM/DD)")
            day = _count_date(parts[2], p, lineno, start, end)
            if not start <= day <= end:
                if mode == "error":
                    raise ValueError(f"{p}:{lineno}: field 3 (date) {parts[2]!r} is outside the study period "
                                     f"{start} to {end}; SaTScan refuses such records (StudyPeriodCheckType=0), "
                                     f"or leaves them out with out_of_period='ignore' (StudyPeriodCheckType=1)")
                outside.append((lineno, v))
                continue
        total[key] = total.get(key, 0.0) + v
        cat = tuple(parts[n_key:])
        by_cat[(key, cat)] = by_cat.get((key, cat), 0.0) + v
        first.setdefault(key, lineno)
    if outside:
        start, end, _ = dates
        warnings.warn(f"{p}: {len(outside)} {what} record(s) ({sum(v for _, v in outside):g} {field_name[1:]}) dated "
                      f"outside the study period {start} to {end} were left out (first on line {outside[0][0]}; "
                      f"out_of_period='ignore', SaTScan's StudyPeriodCheckType=1)", UserWarning, stacklevel=4)
    return p, total, by_cat, first


def _four_digit_year(y: int, start, end) -> int | None:
    """SaTScan's century of a two-digit year (``DateStringParser::Ensure4DigitYear``): that of the
    study period when it lies in one century, else the one that puts the year inside the period;
    None where that is ambiguous or impossible."""
    if y >= 1753:
        return y
    if y > 99 or start is None:
        return None
    lo, hi = int(str(start)[:4]), int(str(end)[:4])
    if lo // 100 == hi // 100:
        return y + lo // 100 * 100
    if hi - lo >= 100:
        return None
    if y >= lo % 100:
        return y + lo // 100 * 100
    if y <= hi % 100:
        return y + hi // 100 * 100
    return None


def _count_date(s: str, p: Path, lineno: int, start, end) -> np.datetime64:
    """The day of a case or control record's date as SaTScan reads it (``ParseCountDateString``):
    YYYY, YYYY/MM, YYYY/MM/DD, MM/YYYY or MM/DD/YYYY (separators / - . *), a missing month or day
    being the first; two-digit years in the study period's century."""
    parts = re.split(r"[/\-.*]", s)
    bad = ValueError(f"{p}:{lineno}: field 3 (date) {s!r} is not a date: YYYY, YYYY/MM or YYYY/MM/DD (or MM/DD/YYYY)")
    if len(parts) > 3 or not all(x.isdigit() for x in parts):
        raise bad
    v = [int(x) for x in parts]
    if len(v) > 1 and v[-1] > 999:  # month/day first: four-digit years only
        y, md = v[-1], v[:-1]
    else:
        y, md = _four_digit_year(v[0], start, end), v[1:]
        if y is None:
            raise ValueError(f"{p}:{lineno}: field 3 (date) {s!r}: the year is not a four-digit year" +
                             ("" if start is None else f" (or a two-digit year whose century the study period "
                                                       f"{start} to {end} settles)"))
    m, d = (md + [1, 1])[:2]
    try:
        return np.datetime64(_dt.date(y, m, d), "D")
    except ValueError:
        raise bad from None


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

_DATE_FORMS = ("a date: 'YYYY-MM-DD' or 'YYYY/MM/DD' (SaTScan's StartDate/EndDate), numpy.datetime64, "
               "datetime.date or pandas.Timestamp")


def _period_day(value, which: str) -> np.datetime64:
    """One end of ``study_period`` as a day; a bare number (a year such as 2001 would otherwise be
    read as 2001 days after 1970-01-01) and times within a day are refused."""
    where = f"study_period {which} day"
    if isinstance(value, (bool, np.bool_, int, float, np.integer, np.floating)):
        raise TypeError(f"{where} must be {_DATE_FORMS}; got the number {value} (a year is not a day: write "
                        f"'{int(value) if float(value).is_integer() else 'YYYY'}-01-01' or "
                        f"'{int(value) if float(value).is_integer() else 'YYYY'}-12-31')")
    if isinstance(value, str):
        m = re.fullmatch(r"\s*(\d{4})[-/](\d{1,2})[-/](\d{1,2})\s*", value)
        if not m:
            raise ValueError(f"{where} must be {_DATE_FORMS}; got {value!r}")
        try:
            return np.datetime64(_dt.date(*(int(x) for x in m.groups())), "D")
        except ValueError as exc:
            raise ValueError(f"{where} {value!r} is not a date ({exc})") from None
    if value is pd.NaT or (isinstance(value, np.datetime64) and np.isnat(value)):
        raise ValueError(f"{where} is NaT; give {_DATE_FORMS}")
    if getattr(value, "tzinfo", None) is not None:
        raise ValueError(f"{where} {value!r} has a time zone; give the local calendar day (tz-naive)")
    if isinstance(value, np.datetime64) and np.datetime_data(value.dtype)[0] in ("Y", "M", "W"):
        # a year or month is a span of days: which of its days is meant is not said
        raise ValueError(f"{where} {value!r} is a {np.datetime_data(value.dtype)[0]}-unit datetime64, not a day; "
                         f"give {_DATE_FORMS}")
    if isinstance(value, (_dt.datetime, np.datetime64)):
        d = np.datetime64(value)
        if d != d.astype("datetime64[D]"):
            raise ValueError(f"{where} {value!r} is not a whole day (a time of day is given); give a date")
        return d.astype("datetime64[D]")
    if isinstance(value, _dt.date):
        return np.datetime64(value, "D")
    raise TypeError(f"{where} must be {_DATE_FORMS}; got {type(value).__name__} {value!r}")


def _check_study_period(study_period) -> tuple:
    """``(first day, last day)`` as numpy days, both included; a reversed period is refused."""
    if isinstance(study_period, (str, bytes)) or not hasattr(study_period, "__len__") or len(study_period) != 2:
        raise TypeError(f"study_period must be (first day, last day), each {_DATE_FORMS}; got {study_period!r}")
    start, end = _period_day(study_period[0], "first"), _period_day(study_period[1], "last")
    if end < start:
        raise ValueError(f"study_period ends ({end}) before it starts ({start}); give (first day, last day)")
    return start, end


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


#: the census year of a population record dated "unspecified" (its only year: weight 1)
_UNSPECIFIED_YEAR = -1.0


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
        if parts[1] == "unspecified":  # a data source's unspecifiedPopDate: one population for the whole period
            year = _UNSPECIFIED_YEAR
        elif not _is_number(parts[1]):
            raise ValueError(f"{p}:{lineno}: field 2 (census year) {parts[1]!r} is not a year")
        else:
            year = float(parts[1])
        key = (parts[0], year, tuple(parts[3:]))
        per[key] = per.get(key, 0.0) + v
        first.setdefault(parts[0], lineno)
    # each location over the census years it has (a location listed for one year only keeps
    # that year's population)
    loc_years: dict = {}
    for (lid, year, _cat) in per:
        loc_years.setdefault(lid, set()).add(year)
    for lid, ys in loc_years.items():
        if _UNSPECIFIED_YEAR in ys and len(ys) > 1:
            raise ValueError(f"{p}:{first[lid]}: location {lid!r} has an unspecified population date and census years; "
                             f"give one or the other")
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


def read_neighbors(path) -> list:
    """SaTScan's non-Euclidean neighbors file (``NeighborsFilename``): one record per centre, the location ids
    of its windows in order (the centre first), whitespace separated (or a CSV / dBase source); the lists of
    ids as text. An id twice in a record is refused, naming the file and line."""
    p, rows = _read_rows(path, "neighbors", 1)
    out = []
    for lineno, parts in rows:
        seen = set()
        for v in parts:
            if v in seen:
                raise ValueError(f"{p}:{lineno}: location id {v!r} occurs more than once in the record")
            seen.add(v)
        out.append(list(parts))
    if not out:
        raise ValueError(f"{p}: the neighbors file has no records")
    return out


def _check_known(p, first: dict, seen: dict, geo_path):
    for key, lineno in first.items():
        if key not in seen:
            raise ValueError(f"{p}:{lineno}: field 1 (location id) {key!r} is not in the coordinates file {geo_path}")


def read_satscan(case_file, control_file=None, population_file=None, geo_file=None, *,
                 model: str = "bernoulli", covariates: bool = False, study_period=None,
                 out_of_period: str = "error") -> pd.DataFrame:
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
        First and last day of the study period, both included: dates as ``"YYYY-MM-DD"`` or
        ``"YYYY/MM/DD"`` strings (SaTScan's StartDate/EndDate), ``numpy.datetime64``,
        ``datetime.date`` or ``pandas.Timestamp`` (a bare year such as 2001 is refused: it is not a
        day). The population is then averaged over it as SaTScan does (a census year at July 1 of
        that year, linear between census dates, constant outside them;
        :func:`hphawkes_py.scan.run_prm` passes the file's StartDate/EndDate), and field 3 of every
        case (and control) record is its date (YYYY, YYYY/MM or YYYY/MM/DD, a missing month or day
        being the first), checked against the period. Default: averaged over the span of the census
        years, dates not checked.
    out_of_period : {"error", "ignore"}
        With ``study_period``: a case or control record dated outside it is refused, naming the
        file and line (``"error"``, SaTScan's default StudyPeriodCheckType=0), or left out with a
        warning that counts such records (``"ignore"``, StudyPeriodCheckType=1).

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
        fractional cases, a location id missing from the geo file or duplicated in it, a record
        dated outside ``study_period``; a location with more cases than population (Bernoulli);
        both or neither of the control and population files (Bernoulli); a reversed
        ``study_period``.
    TypeError
        ``study_period`` given as numbers (years) rather than dates.

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

    The New York leukaemia counts (Poisson), the population averaged over the year 2000 and the
    case dates checked against it:

    >>> ny = hp.scan.read_satscan(f("ny_leukemia.cas"), population_file=f("ny_leukemia.pop"),
    ...                           geo_file=f("ny_leukemia.geo"), model="poisson",
    ...                           study_period=("2000/1/1", "2000/12/31"))
    >>> print(len(ny), int(ny.cases.sum()))
    281 552
    """
    return _read_satscan(case_file, control_file, population_file, geo_file, model=model, covariates=covariates,
                         study_period=study_period, out_of_period=out_of_period, dated=True)


def _read_satscan(case_file, control_file, population_file, geo_file, *, model, covariates, study_period,
                  out_of_period, dated, located=None):
    """:func:`read_satscan`; ``dated=False``: the case and control records have no date field
    (SaTScan's PrecisionCaseTimes=0), so their covariates start at field 3 and no date is checked. ``located``:
    ``(path, ids)``, the locations a neighbors file names, in place of the coordinates file (their x and y 0)."""
    check_in(model, "model", ("bernoulli", "poisson"))
    check_in(out_of_period, "out_of_period", ("error", "ignore"))
    period = None if study_period is None else _check_study_period(study_period)
    if out_of_period != "error" and (period is None or not dated):
        raise ValueError(f"out_of_period={out_of_period!r} needs study_period (the dates of the records are checked "
                         f"against it)")
    dates = (period[0], period[1], out_of_period) if period is not None and dated else None
    n_key = 3 if dated else 2
    if not isinstance(covariates, (bool, np.bool_)):
        raise TypeError(f"covariates must be True or False, got {covariates!r}")
    if covariates and model != "poisson":
        raise ValueError("covariates=True needs model='poisson' (indirect standardisation of the Poisson model)")
    if geo_file is None and located is None:
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
    if located is None:
        gp, keys, xs, ys, seen = _geo(geo_file)
    else:
        gp, keys = located[0], list(located[1])
        xs, ys, seen = [0.0] * len(keys), [0.0] * len(keys), {k: 0 for k in keys}
    # cases: <id> <#cases> [<date>] <covariates...>; the covariates start after the date
    cp, cases, cases_cat, cases_first = _counts(case_file, "case", "#cases", n_key, dates)
    _check_known(cp, cases_first, seen, gp)
    controls = None
    if control_file is not None:
        kp, controls, _, ctl_first = _counts(control_file, "control", "#controls", n_key, dates)
        _check_known(kp, ctl_first, seen, gp)
    population = None
    if population_file is not None:
        pp, population, pop_cat, pop_first, _ = _population(population_file, period)
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


# ------------------------------------------------------------------ time aggregation (SaTScan's intervals)

def _shift_back(day: np.datetime64, units: str, k: int) -> np.datetime64:
    """``day`` moved back ``k`` months (``units="month"``) or years, keeping its day of the month
    (at most 28 here: SaTScan's rules for later days are not followed, so they are refused upstream)."""
    d = day.astype(object)
    months = d.year * 12 + (d.month - 1) - (k if units == "month" else 12 * k)
    return np.datetime64(_dt.date(months // 12, months % 12 + 1, d.day), "D")


def time_interval_starts(start, end, units: str, length: int) -> np.ndarray:
    """SaTScan's time intervals of the study period ``start``-``end`` (datetime64[D]) aggregated in
    ``length`` ``units`` ("day", "month", "year"): the start day of every interval and, last, the day
    after ``end`` (``CSaTScanData::SetIntervalStartTimes``: counted back from the day after the end;
    a shorter first interval is merged into the second, so the first may be longer)."""
    nxt = end + np.timedelta64(1, "D")
    if units != "day" and nxt.astype(object).day > 28:
        raise ValueError(f"aggregation in {units}s needs a study period ending on a day after which the day of the "
                         f"month is at most 28 (e.g. a month's last day); EndDate {end} is not supported")
    starts, k = [nxt], 1
    while True:
        s = nxt - np.timedelta64(k * length, "D") if units == "day" else _shift_back(nxt, units, k * length)
        if s <= start:
            break
        starts.append(s)
        k += 1
    if s < start and len(starts) > 1:
        starts.pop()  # the partial first interval joins the next one
    starts.append(start)
    return np.array(starts[::-1], dtype="datetime64[D]")


def time_units_in_period(start, end, units: str) -> float:
    """The study period's length in ``units`` (whole units counted back from the day after ``end``,
    and the fraction of a unit left at the start: SaTScan's ``CalculateNumberOfTimeIntervals``)."""
    if units == "day":
        return float((end - start).astype(int) + 1)
    nxt = end + np.timedelta64(1, "D")
    n, k = 0.0, 1
    s = _shift_back(nxt, units, k)
    while s > start:
        n += 1
        k += 1
        s = _shift_back(nxt, units, k)
    if s == start:
        return n + 1
    diff = float((start - s).astype(int))
    d = start.astype(object)
    if units == "month":
        size = float(((np.datetime64(f"{d.year:04d}-{d.month:02d}", "M") + 1).astype("datetime64[D]")
                      - np.datetime64(f"{d.year:04d}-{d.month:02d}-01", "D")).astype(int))
    else:
        size = 366.0 if (d.year % 4 == 0 and (d.year % 100 != 0 or d.year % 400 == 0)) else 365.0
    return n + (size - diff) / size


def interval_of(dates, starts) -> np.ndarray:
    """The interval index (0-based) of each date (``starts`` from :func:`time_interval_starts`)."""
    return np.searchsorted(starts, np.asarray(dates, dtype="datetime64[D]"), side="right") - 1


# ------------------------------------------------------------------ continuous models' case files

def _day(text: str, p, lineno) -> np.datetime64:
    """Field 3 of a case record of the continuous and categorical models: a day, as SaTScan reads it
    (:func:`_count_date`: YYYY/MM/DD or MM/DD/YYYY, separators / - . *; four-digit years)."""
    if len(re.split(r"[/\-.*]", text)) != 3:
        raise ValueError(f"{p}:{lineno}: field 3 (date) {text!r} is not a date YYYY/MM/DD")
    return _count_date(text, p, lineno, None, None)


def _read_continuous(path, model: str, dated: bool):
    """The records of a normal or exponential case file: ``(ids, counts, dates or None, values,
    second)`` (normal: ``<id> <#cases> [<date>] <measurement> [<weight>]``, ``second`` the weights or
    None; exponential: ``<id> <#cases> [<date>] <survival time> [<censored 0/1>]``, ``second`` the
    censoring flags), each value checked where it is read (file, line, field)."""
    first = 3 if dated else 2
    p, rows = _read_rows(path, "case", first + 1)
    name = "measurement" if model == "normal" else "survival time"
    extra = "weight" if model == "normal" else "censored"
    ids, counts, dates, values, second = [], [], [], [], []
    has_second = None
    for lineno, parts in rows:
        if len(parts) > first + 2:
            raise ValueError(f"{p}:{lineno}: covariates (field {first + 3} on) are not supported by the {model} "
                             f"model")
        counts.append(int(_number(parts[1], p, lineno, 2, "#cases", count=True, whole=True)))
        if dated:
            dates.append(_day(parts[2], p, lineno))
        values.append(_number(parts[first], p, lineno, first + 1, name))
        here = len(parts) == first + 2
        if has_second is None:
            has_second = here
        elif has_second != here:
            raise ValueError(f"{p}:{lineno}: field {first + 2} ({extra}) is given on some records and not on others")
        if here:
            v = _number(parts[first + 1], p, lineno, first + 2, extra)
            if model == "exponential" and v not in (0.0, 1.0):
                raise ValueError(f"{p}:{lineno}: field {first + 2} (censored) {parts[first + 1]!r} must be 0 or 1")
            second.append(v)
        ids.append(parts[0])
    counts = np.array(counts, dtype=np.int64)
    return (ids, counts, np.array(dates, dtype="datetime64[D]") if dated else None, np.array(values, dtype=float),
            np.array(second, dtype=float) if has_second else None)


def case_records_kept(spec, ids, dates, geo_path, seen, path=None, what="case", counts=None,
                      stacklevel=4) -> np.ndarray:
    """Which records of a case (``what="control"``: control) file ``path`` (default the case file) an
    analysis of :func:`~hphawkes_py.scan.run_prm` keeps: every record's location must be in the coordinates
    file; a record dated outside the study period is refused (``StudyPeriodCheckType=0``, SaTScan's
    default) or left out with a warning (``=1``; with ``counts``, the records' counts, it says how many
    cases and which record first)."""
    path = spec["files"]["case_file"] if path is None else path
    missing = [k for k in ids if k not in seen]
    if missing:
        raise ValueError(f"{path}: location id {missing[0]!r} is not in the coordinates file {geo_path}")
    keep = np.ones(len(ids), dtype=bool)
    if dates is not None:
        start, end = spec["dates"]["study_period"]
        out = (dates < start) | (dates > end)
        if out.any():
            i = int(np.argmax(out))
            if spec["dates"]["out_of_period"] == "error":
                raise ValueError(f"{path}: the {what} dated {dates[i]} (record {i + 1}) is outside the study "
                                 f"period {start} to {end} (StartDate/EndDate); SaTScan refuses such records "
                                 f"(StudyPeriodCheckType=0), or leaves them out with StudyPeriodCheckType=1")
            n = "" if counts is None else f" ({int(counts[out].sum())} {what}s)"
            first = "" if counts is None else f"first: record {i + 1}, {dates[i]}; "
            warnings.warn(f"{path}: {int(out.sum())} {what} record(s){n} dated outside the study period {start} to "
                          f"{end} were left out ({first}StudyPeriodCheckType=1)", UserWarning, stacklevel=stacklevel)
            keep = ~out
    return keep


def run_continuous(spec, run):
    """The purely spatial normal and exponential analyses of :func:`~hphawkes_py.scan.run_prm`: one observation
    (patient) per case of every record, at its location of the coordinates file (the file's other locations as
    ``empty_locations``)."""
    f, model = spec["files"], spec["model"]
    gp, keys, xs, ys, seen = _geo(f["geo_file"])
    ids, counts, dates, values, second = _read_continuous(f["case_file"], model, spec["dates"]["dated"])
    keep = case_records_kept(spec, ids, dates, gp, seen)
    reps = np.where(keep, counts, 0)
    rows = np.repeat(np.arange(len(ids)), reps)
    where = {k: i for i, k in enumerate(keys)}
    xy = np.array([(xs[where[ids[r]]], ys[where[ids[r]]]) for r in rows], dtype=float).reshape(-1, 2)
    loc_ids, empty = observed_and_empty_ids(keys, ids, rows, xs, ys, where)
    from .exponential_model import exponential
    from .normal_model import normal, satscan_min_cases

    kwargs = dict(spec["kwargs"])
    if model == "normal":
        kwargs["min_cases"] = satscan_min_cases(kwargs["direction"], second is not None, *kwargs["min_cases"])
        return normal(xy, values[rows], weights=None if second is None else second[rows], location_ids=loc_ids,
                      **empty, **kwargs, **run)
    return exponential(xy, values[rows], None if second is None else second[rows].astype(bool), location_ids=loc_ids,
                       **empty, **kwargs, **run)


def observed_and_empty_ids(keys, ids, rows, xs, ys, where) -> tuple:
    """``(location ids of the observations rows, {empty_locations, empty_location_ids})``: the coordinates file's
    locations (``keys``) that no observation row of ``ids`` names are circle centres and members too, as SaTScan
    scans them (the ids read alike, :func:`_as_ids`; ``xs``, ``ys``, ``where``: the file's coordinates)."""
    used = {ids[r] for r in np.unique(rows).tolist()}
    absent = [k for k in keys if k not in used]
    every = np.array(_as_ids([ids[r] for r in rows] + absent), dtype=object)
    if not absent:
        return every, {}
    return every[:len(rows)], {"empty_locations": np.array([(xs[where[k]], ys[where[k]]) for k in absent], dtype=float),
                               "empty_location_ids": every[len(rows):]}


def circle_rows(spec, ids) -> dict:
    """The keyword arguments of the max circle size file (``spec["circle"]``: the file and fraction
    :func:`~._prm.prm_arguments` read) for rows of the location ids ``ids``: ``circle_population`` per row (the
    file's population of the row's location, summed over its records and read in single precision as SaTScan
    reads it; 0 where it has none) and ``max_circle_population``; none without the file. Ids the coordinates
    file lacks are refused."""
    if spec.get("circle") is None:
        return {}
    path, frac = spec["circle"]
    p, rows = _read_rows(path, "max circle size", 2)
    ids = list(ids)
    known = set(ids)
    # the analysis' ids are whole numbers where every id of the coordinates file is one (_as_ids): the file's
    # ids are read alike
    whole = all(isinstance(k, (int, np.integer)) for k in ids)
    pop: dict = {}
    for lineno, parts in rows:
        try:
            key = int(parts[0]) if whole else parts[0]
        except ValueError:
            key = parts[0]
        if key not in known:
            raise ValueError(f"{p}:{lineno}: location id {parts[0]!r} of the max circle size file is not a location "
                             f"of the analysis")
        value = float(np.float32(_number(parts[1], p, lineno, 2, "population")))
        if value < 0:
            raise ValueError(f"{p}:{lineno}: the population must be >= 0, got {parts[1]!r}")
        pop[key] = pop.get(key, 0.0) + value
    return {"circle_population": np.array([pop.get(k, 0.0) for k in ids]), "max_circle_population": frac}
