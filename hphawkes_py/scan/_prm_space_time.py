"""The space-time analyses of :func:`~hphawkes_py.scan.run_prm`: SaTScan's dated case (and control) files,
its population file over time, and the space-time permutation, Bernoulli and discrete Poisson scans.

SaTScan's discrete Poisson expectations with populations over time (``CalcRisk``, ``Calcm`` and
``CalcMeasure`` in its ``CalculateMeasure.cpp``; ``PopulationData::SetPopulationDates``): the
population of location z in covariate category c is known on census dates (a census year is July 1
of that year, two-digit years 19xx), linear between them and constant before the first and after the
last. Over the study period of D days, category c's average population is
``Pbar_c = (1/D) sum_z int P_zc(d) dd`` and its risk ``r_c = C_c / Pbar_c`` (its cases over the study
period); time interval i of location z then has ``mu_zi = (1/D) int_{interval i} sum_c r_c P_zc(d) dd``
expected cases, which sum to C. Without covariates there is one category.
"""
from __future__ import annotations

import dataclasses
import re
import warnings

import numpy as np

from ._satscan import (_as_ids, _count_date, _geo, _number, _population, _read_continuous, _read_rows,
                       case_records_kept, circle_rows, interval_of, observed_and_empty_ids)
from .exponential_space_time import space_time_exponential
from .normal_model import satscan_min_cases
from .normal_space_time import space_time_normal
from .spatiotemporal import space_time, space_time_permutation

__all__ = ["read_case_dates", "census_day", "integral_weights", "dated_expected", "run_space_time",
           "run_space_time_exponential", "run_space_time_normal", "run_temporal_normal", "run_temporal_exponential"]

#: SaTScan's PrecisionCaseTimes: the fields a case date has (year; year/month; year/month/day)
PRECISION_FIELDS = {"1": 1, "2": 2, "3": 3}


def read_case_dates(path, what="case", model="space-time permutation", precision="3", covariates=False):
    """``<id> <#cases> <date> [covariates]`` rows of a space-time case (or, ``what="control"``, control)
    file: ``(ids, counts, dates, categories)``, each value checked where it is read (file, line, field).

    ``precision`` (SaTScan's ``PrecisionCaseTimes``): "1" years (``YYYY``), "2" months (``YYYY/MM``),
    "3" days (``YYYY/MM/DD``); a date given more precisely is read as it is, less precisely refused.
    As SaTScan, a year stands for its January 1 and a month for its first day, the parts may be separated
    by ``/``, ``-``, ``.`` or ``*``, and a four-digit year may come last (``MM/DD/YYYY``). ``categories``: the
    covariates of each row (a tuple of strings, empty without them); with ``covariates`` False a row
    with covariates is refused."""
    p, rows = _read_rows(path, what, 3)
    need = PRECISION_FIELDS[precision]
    ids, counts, dates, cats = [], [], [], []
    form = {1: "a year YYYY", 2: "a month YYYY/MM", 3: "a date YYYY/MM/DD"}[need]
    for lineno, parts in rows:
        if len(parts) > 3 and not covariates:
            raise ValueError(f"{p}:{lineno}: covariates (field 4 on) are not supported by the {model} model")
        counts.append(int(_number(parts[1], p, lineno, 2, f"#{what}s", count=True, whole=True)))
        if not need <= len(re.split(r"[/\-.*]", parts[2])) <= 3:
            raise ValueError(f"{p}:{lineno}: field 3 (date) {parts[2]!r} is not {form} "
                             f"(PrecisionCaseTimes={precision})")
        dates.append(_count_date(parts[2], p, lineno, None, None))
        ids.append(parts[0])
        cats.append(tuple(parts[3:]))
    return ids, np.array(counts, dtype=np.int64), np.array(dates, dtype="datetime64[D]"), cats


def census_day(year: float) -> int:
    """The day (since 1970-01-01) SaTScan gives a census year: July 1 (two-digit years are 19xx)."""
    y = int(year)
    if y != year:
        raise ValueError(f"census year {year!r} is not a whole year")
    return int(np.datetime64(f"{y + 1900 if y < 100 else y:04d}-07-01", "D").astype(np.int64))


def integral_weights(days, u: int, v: int) -> np.ndarray:
    """``w`` with ``int_u^v P(d) dd = sum_k w[k] P_k`` for a population known on the sorted ``days``
    (``P_k``), linear between them and constant before the first and after the last (days ``u <= v``)."""
    days = np.asarray(days, dtype=np.int64)
    w = np.zeros(len(days))
    w[0] += max(0, min(v, days[0]) - u)
    w[-1] += max(0, v - max(u, days[-1]))
    for k in range(len(days) - 1):
        a, b = int(days[k]), int(days[k + 1])
        lo, hi = max(a, u), min(b, v)
        if hi <= lo:
            continue
        w[k] += ((b - lo) ** 2 - (b - hi) ** 2) / (2.0 * (b - a))
        w[k + 1] += ((hi - a) ** 2 - (lo - a) ** 2) / (2.0 * (b - a))
    return w


def dated_expected(pop_path, keys, case_keys, case_counts, case_cats, starts, geo_path):
    """SaTScan's expected cases of every location and time interval (see the module notes).

    ``keys``: the location ids (the coordinates file's order); ``case_keys``, ``case_counts``,
    ``case_cats``: the case records' ids, counts and covariate categories; ``starts``: the start day of
    every interval and, last, the day after the study period (datetime64[D]). Returns ``(mu, avg)``:
    (L, I) expected cases and (L,) each location's population averaged over the study period (what
    SaTScan reports)."""
    p, rows = _read_rows(pop_path, "population", 3)
    where = {k: i for i, k in enumerate(keys)}
    table: dict = {}
    years, cats, first = set(), {}, {}
    for lineno, parts in rows:
        if parts[0] not in where:
            raise ValueError(f"{p}:{lineno}: location id {parts[0]!r} is not in the coordinates file {geo_path}")
        try:
            year = float(parts[1])
            census_day(year)
        except ValueError:
            raise ValueError(f"{p}:{lineno}: field 2 (census year) {parts[1]!r} is not a year") from None
        v = _number(parts[2], p, lineno, 3, "population", count=True)
        cat = cats.setdefault(tuple(parts[3:]), len(cats))
        key = (where[parts[0]], cat, year)
        table[key] = table.get(key, 0.0) + v
        years.add(year)
        first.setdefault(parts[0], lineno)
    years = sorted(years)
    have: dict = {}
    for z, _c, y in table:
        have.setdefault(z, set()).add(y)
    for k in keys:
        if k not in first:
            raise ValueError(f"{p}: no population for location id {k!r} of the coordinates file {geo_path}")
        missing = [y for y in years if y not in have[where[k]]]
        if missing:
            raise ValueError(f"{p}:{first[k]}: location {k!r} has no population for census year {missing[0]:g}, "
                             f"which other locations have (SaTScan would take it as 0 there); give every location "
                             f"every census year")
    widths = {len(c) for c in cats} | {len(c) for c in case_cats}
    if len(widths) > 1:
        raise ValueError(f"{p}: the case and population records must have the same number of covariates (fields "
                         f"4 on); they have {', '.join(str(w) for w in sorted(widths))}")
    L, K, Y = len(keys), len(cats), len(years)
    P = np.zeros((L, K, Y))
    for (z, c, y), v in table.items():
        P[z, c, years.index(y)] = v
    # cases per covariate category (SaTScan: a category with cases needs a population)
    C_c = np.zeros(K)
    for k, n, cat in zip(case_keys, case_counts, case_cats):
        if cat not in cats:
            raise ValueError(f"{p}: the covariate category {' '.join(cat) or '(none)'} of location {k!r}'s cases "
                             f"has no population")
        C_c[cats[cat]] += n
    days = np.array([census_day(y) for y in years], dtype=np.int64)
    s = starts.astype(np.int64)
    D = float(s[-1] - s[0])
    avg_zc = P @ integral_weights(days, int(s[0]), int(s[-1])) / D  # (L, K): averaged over the study period
    pbar = avg_zc.sum(axis=0)
    if ((pbar <= 0) & (C_c > 0)).any():
        c = int(np.argmax((pbar <= 0) & (C_c > 0)))
        raise ValueError(f"{p}: covariate category {' '.join(next(k for k, i in cats.items() if i == c))} has cases "
                         f"but no population in the study period")
    risk = np.divide(C_c, pbar, out=np.zeros(K), where=pbar > 0)
    M = np.einsum("zky,k->zy", P, risk)  # each location's expected cases per day at the census dates, x D
    W = np.stack([integral_weights(days, int(a), int(b)) for a, b in zip(s[:-1], s[1:])], axis=1)  # (Y, I)
    return M @ W / D, avg_zc.sum(axis=1)


def run_space_time(spec, run):
    """The space-time permutation, Bernoulli and discrete Poisson analyses (:func:`run_prm`); cases
    aggregated into SaTScan's time intervals (``spec["intervals"]``) are scanned interval by interval
    and the clusters' time frames given as the days their intervals span. A discrete Poisson analysis
    whose population changes over time (census years), has covariates or is aggregated into intervals
    longer than a day takes SaTScan's expectations of every location and interval
    (:func:`dated_expected`)."""
    f = spec["files"]
    seed, executor, backend, threads, progress = (run[k] for k in ("seed", "executor", "backend", "threads",
                                                                    "progress"))
    gp, keys, xs, ys, seen = _geo(f["geo_file"])
    start, end = spec["kwargs"]["study_period"]
    bern = spec["model"] == "space_time_bernoulli"
    poisson = spec["model"] == "space_time_poisson"
    name = {"space_time_bernoulli": "Bernoulli space-time", "space_time_poisson": "discrete Poisson space-time",
            "space_time_permutation": "space-time permutation"}[spec["model"]]
    starts = spec.get("intervals")
    dated = False
    if poisson:
        p, total, by_cat, first, years = _population(f["population_file"])
        dated = starts is not None or any(len(y) > 1 for y in years.values()) or any(c for _, c in by_cat)
        if not dated:  # one census year per location, no covariates: the population constant in time
            for lid in total:
                if lid not in seen:
                    raise ValueError(f"{p}:{first[lid]}: location id {lid!r} is not in the coordinates file {gp}")
            pop = total
    tables = [("case", f["case_file"])] + ([("control", f["control_file"])] if bern else [])
    ids, cases, controls, dates, cats = [], [], [], [], []
    for what, path_ in tables:
        # covariates: the discrete Poisson model's with a population over time, the permutation model's
        # (strata, :mod:`.permutation_strata`)
        with_cov = dated or spec["model"] == "space_time_permutation"
        t_ids, t_counts, t_dates, t_cats = read_case_dates(path_, what, name, spec.get("precision", "3"),
                                                           covariates=with_cov)
        keep = case_records_kept(spec, t_ids, t_dates, gp, seen, path=path_, what=what, counts=t_counts,
                                 stacklevel=4)
        if not keep.all():
            t_ids = [k for k, kept in zip(t_ids, keep) if kept]
            t_cats = [c for c, kept in zip(t_cats, keep) if kept]
            t_counts, t_dates = t_counts[keep], t_dates[keep]
        zeros = np.zeros(len(t_ids), dtype=np.int64)
        ids += t_ids
        cats += t_cats
        cases.append(t_counts if what == "case" else zeros)
        controls.append(t_counts if what == "control" else zeros)
        dates.append(t_dates)
    common = dict(seed=seed, executor=executor, backend=backend, threads=threads, progress=progress,
                  **spec["kwargs"])
    if dated and starts is None:  # the dated scan counts days as intervals
        starts = np.arange(start, end + np.timedelta64(2, "D"), dtype="datetime64[D]")
    if common.get("surveillance_start") is not None and starts is not None:
        # the scan counts time intervals: the surveillance starts in the interval holding its first day
        common["surveillance_start"] = int(interval_of(np.array([common["surveillance_start"]]), starts)[0])
    where = {k: i for i, k in enumerate(keys)}
    if dated:
        res = _dated_poisson(spec, keys, where, ids, np.concatenate(cases), np.concatenate(dates), cats, xs, ys,
                             starts, gp, common)
    else:
        # locations of the coordinates file without cases (or controls) are circle centres too (as
        # in SaTScan): one row with 0 cases (and 0 controls) each, dated at the start of the study period
        listed = set(ids)
        absent = [k for k in keys if k not in listed]
        zeros = np.zeros(len(absent), dtype=np.int64)
        ids += absent
        cats += [cats[0] if cats else ()] * len(absent)  # no cases: their category changes nothing
        cases, controls = np.concatenate(cases + [zeros]), np.concatenate(controls + [zeros])
        dates = np.concatenate(dates + [np.full(len(absent), start)])
        # the locations in the coordinates file's order (SaTScan's order of equal clusters' centres)
        order = np.argsort(np.array([where[k] for k in ids], dtype=np.int64), kind="stable")
        ids = [ids[i] for i in order]
        cats = [cats[i] for i in order]
        cases, controls, dates = cases[order], controls[order], dates[order]
        xy = np.array([(xs[where[k]], ys[where[k]]) for k in ids], dtype=float).reshape(-1, 2)
        common["location_ids"] = np.array(_as_ids(ids), dtype=object)
        common.update(circle_rows(spec, common["location_ids"]))
        if starts is not None:  # interval indices stand for the days of the scan
            dates = interval_of(dates, starts)
            common["study_period"] = (0, len(starts) - 2)
        if bern:
            res = space_time(xy, cases, dates, controls=controls, model="bernoulli", **common)
        elif poisson:
            missing = [k for k in keys if k not in pop]
            if missing:
                raise ValueError(f"{f['population_file']}: no population for location id {missing[0]!r} of the "
                                 f"coordinates file {gp}")
            res = space_time(xy, cases, dates, population=np.array([pop[k] for k in ids], dtype=float),
                             model="poisson", **common)
        else:
            if any(cats):
                widths = {len(c) for c in cats}
                if len(widths) > 1:
                    raise ValueError(f"{f['case_file']}: every case record must have the same number of covariates "
                                     f"(fields 4 on); they have {', '.join(str(w) for w in sorted(widths))}")
                common["covariates"] = np.array(cats, dtype=object).reshape(len(cats), -1)
            res = space_time_permutation(xy, cases, dates, **common)
    if starts is not None and len(res.clusters):
        cl = res.clusters
        first = cl["start"].to_numpy(dtype=np.int64)
        last = cl["end"].to_numpy(dtype=np.int64)
        cl["start"] = starts[first]
        cl["end"] = starts[last + 1] - np.timedelta64(1, "D")
    precision = {"1": "year", "2": "month"}.get(spec.get("precision", "3"))
    if precision is not None and res.purely_temporal:
        res = dataclasses.replace(res, time_precision=precision)
    return res


def _dated_poisson(spec, keys, where, ids, cases, dates, cats, xs, ys, starts, gp, common):
    """The discrete Poisson space-time scan with SaTScan's expectations of every location and interval
    (``starts``: each interval's first day, and the day after the last): one row per location and
    interval, its cases, expectation and the location's average population; times are interval indices."""
    mu, avg = dated_expected(spec["files"]["population_file"], keys, ids, cases, cats, starts, gp)
    L, n_int = mu.shape
    c_li = np.zeros((L, n_int), dtype=np.int64)
    np.add.at(c_li, (np.array([where[k] for k in ids], dtype=np.int64), interval_of(dates, starts)), cases)
    z, i = np.divmod(np.arange(L * n_int), n_int)
    xy = np.column_stack([np.asarray(xs, dtype=float)[z], np.asarray(ys, dtype=float)[z]])
    common["location_ids"] = np.array(_as_ids(list(keys)), dtype=object)[z]
    common.update(circle_rows(spec, common["location_ids"]))
    common["study_period"] = (0, n_int - 1)
    return space_time(xy, c_li[z, i], i, population=avg[z], expected=mu[z, i], model="poisson", **common)


def run_space_time_exponential(spec, run):
    """The space-time exponential analyses (:func:`run_prm`): one patient per case of every record
    (``<id> <#cases> <date> <survival time> [<censored 0/1>]``), at its location of the coordinates file and
    on its record's day (or time interval, ``spec["intervals"]``), in the coordinates file's order of the
    locations (SaTScan's order of equal clusters' centres)."""
    def scan(xy, values, second, days, kwargs):
        return space_time_exponential(xy, values, days, None if second is None else second.astype(bool), **kwargs,
                                      **run)

    return _run_observations(spec, "exponential", scan)


def run_space_time_normal(spec, run):
    """The space-time normal analyses (:func:`run_prm`): one observation per case of every record
    (``<id> <#cases> <date> <measurement> [<weight>]``, weighted when the weights are given), placed as in
    :func:`run_space_time_exponential`; SaTScan's two minimum-cases settings combined once the file shows
    whether it is weighted (:func:`~.normal_model.satscan_min_cases`)."""
    warn_unadjusted(spec, "the normal model")

    def scan(xy, values, second, days, kwargs):
        kwargs["min_cases"] = satscan_min_cases(kwargs["direction"], second is not None, *kwargs["min_cases"])
        return space_time_normal(xy, values, days, weights=second, **kwargs, **run)

    return _run_observations(spec, "normal", scan)


def warn_unadjusted(spec, models: str) -> None:
    """With ``AdjustForEarlierAnalyses=y`` in ``spec``: a warning that the p-values are adjusted for the surveillance's
    earlier analyses where SaTScan 10.3.2 does not adjust them for ``models``."""
    if spec["kwargs"].get("surveillance_start") is not None:
        warnings.warn(f"{spec['path']}: AdjustForEarlierAnalyses=y: the p-values are adjusted for the surveillance's "
                      f"earlier analyses (every replicate's maximum over the cylinders ending on any day since "
                      f"ProspectiveStartDate); SaTScan 10.3.2 does not adjust them for {models} (its replicates' "
                      f"cylinders end on the last day only), so its p-values are smaller", UserWarning, stacklevel=5)


def run_temporal_normal(spec, run):
    """The purely temporal normal analyses (:func:`run_prm`; ``AnalysisType`` 2 or 6): one observation per case of
    every record (``<id> <#cases> <date> <measurement> [<weight>]``) of the whole region (:func:`_run_temporal`)."""
    return _run_temporal(spec, run, "normal")


def run_temporal_exponential(spec, run):
    """The purely temporal exponential analyses (:func:`run_prm`; ``AnalysisType`` 2 or 6): one patient per case of
    every record (``<id> <#cases> <date> <survival time> [<censored 0/1>]``) of the whole region
    (:func:`_run_temporal`)."""
    return _run_temporal(spec, run, "exponential")


def _run_temporal(spec, run, model):
    """A purely temporal analysis of one observation (patient) per case of every record of a normal or exponential
    case file (:func:`temporal_rows`)."""
    from .exponential_temporal import temporal_exponential
    from .normal_temporal import temporal_normal

    days, values, second, temporal, starts = temporal_rows(spec, lambda path: _read_continuous(path, model, True))
    kw = spec["kwargs"]
    if model == "normal":
        temporal["min_cases"] = satscan_min_cases(kw["direction"], second is not None, *kw["min_cases"])
        res = temporal_normal(days, values, weights=second, **temporal, **run)
    else:
        temporal["min_cases"] = kw.get("min_cases", 2)
        res = temporal_exponential(days, values, None if second is None else second.astype(bool), **temporal, **run)
    return interval_dates(res, starts)


def temporal_rows(spec, read) -> tuple:
    """The rows of a purely temporal analysis of one observation (patient, case) per case of every record of the
    case file, which ``read(path)`` reads as ``(ids, counts, dates, values, second or None)``, on its record's day
    (or time interval); the location ids are checked against the coordinates file when one is given. The
    windows' spatial settings do not apply. Returns ``(days, values, second, temporal, starts)``: the rows' days,
    values and second fields, the keyword arguments of the purely temporal scans every model takes
    (``max_temporal`` or ``max_temporal_percent``, ``prospective``, ``study_period``, ``n_replicates``,
    ``direction``, ``day_of_week``) and the time intervals' first days (None: days), as :func:`interval_dates` takes them."""
    f = spec["files"]
    ids, counts, dates, values, second = read(f["case_file"])
    if f.get("geo_file") is not None:
        gp, _, _, _, seen = _geo(f["geo_file"])
        keep = case_records_kept(spec, ids, dates, gp, seen)
    else:
        keep = case_records_kept(spec, ids, dates, None, dict.fromkeys(ids))
    rows = np.repeat(np.arange(len(ids)), np.where(keep, counts, 0))
    kw = spec["kwargs"]
    days = dates[rows]
    starts = spec.get("intervals")
    period = kw["study_period"]
    if starts is not None:  # interval indices stand for the days of the scan
        days = interval_of(days, starts)
        period = (0, len(starts) - 2)
    temporal = {"max_temporal": kw.get("max_temporal"), "prospective": kw["prospective"], "study_period": period,
                "n_replicates": kw["n_replicates"], "direction": kw["direction"],
                "day_of_week": kw.get("day_of_week", False)}
    if kw.get("max_temporal_percent") is not None:
        temporal.update(max_temporal=None, max_temporal_percent=kw["max_temporal_percent"])
    return days, values[rows], None if second is None else second[rows], temporal, starts


def interval_dates(res, starts):
    """``res`` with its clusters' days put back as dates when the scan ran over time intervals whose first days are
    ``starts`` (None: days, left as they are)."""
    if starts is not None and len(res.clusters):
        cl = res.clusters
        cl["start"] = starts[cl["start"].to_numpy(dtype=np.int64)]
        cl["end"] = starts[cl["end"].to_numpy(dtype=np.int64) + 1] - np.timedelta64(1, "D")
    return res


def _run_observations(spec, model, scan, read=None):
    """A space-time analysis of one observation (patient, case) per case of every record of a ``model`` case file
    (:func:`~._satscan._read_continuous`, or ``read(path)``, which returns what it returns):
    ``scan(xy, values, second, days, kwargs)`` runs it on the rows, their measurements (categories), their second
    field (None when the file has none) and days (time intervals), with the parameter file's keyword arguments;
    the clusters' days are put back as dates with time intervals."""
    f = spec["files"]
    gp, keys, xs, ys, seen = _geo(f["geo_file"])
    ids, counts, dates, values, second = (read or (lambda path: _read_continuous(path, model, True)))(f["case_file"])
    keep = case_records_kept(spec, ids, dates, gp, seen)
    where = {k: i for i, k in enumerate(keys)}
    order = np.argsort(np.array([where[k] for k in ids], dtype=np.int64), kind="stable")
    rows = np.repeat(order, np.where(keep, counts, 0)[order])
    xy = np.array([(xs[where[ids[r]]], ys[where[ids[r]]]) for r in rows], dtype=float).reshape(-1, 2)
    kwargs = dict(spec["kwargs"])
    # locations of the coordinates file without observations are circle centres too (as in SaTScan)
    kwargs["location_ids"], empty = observed_and_empty_ids(keys, ids, rows, xs, ys, where)
    kwargs.update(empty)
    kwargs.update(circle_rows(spec, np.concatenate([kwargs["location_ids"], kwargs.get("empty_location_ids", [])])))
    days = dates[rows]
    starts = spec.get("intervals")
    if starts is not None:  # interval indices stand for the days of the scan
        days = interval_of(days, starts)
        kwargs["study_period"] = (0, len(starts) - 2)
        if kwargs.get("surveillance_start") is not None:  # in the interval holding its first day
            kwargs["surveillance_start"] = int(interval_of(np.array([kwargs["surveillance_start"]]), starts)[0])
    return interval_dates(scan(xy, values[rows], None if second is None else second[rows], days, kwargs), starts)
