"""SaTScan parameter files of the analyses in time (:func:`~hphawkes_py.scan.run_prm`): the purely
temporal (``AnalysisType`` 2 retrospective, 6 prospective) and seasonal (7) scans of the discrete
Poisson and Bernoulli models, and the spatial variation in temporal trends (5, discrete Poisson).

SaTScan's settings map onto the keyword arguments of :func:`~hphawkes_py.scan.temporal`,
:func:`~hphawkes_py.scan.seasonal` and :func:`~hphawkes_py.scan.svtt` one to one:
``StartDate``/``EndDate`` -> ``study_period``; ``TimeAggregationLength`` -> ``time_aggregation``
(days, ``TimeAggregationUnits=3``; the SVTT scan also generic units, 4);
``MaxTemporalSizeInterpretation`` 0 / 1 -> ``max_temporal_size`` = ``MaxTemporalSize`` / 100 /
``max_temporal_length`` = ``MaxTemporalSize`` (days); ``MinimumTemporalClusterSize`` ->
``min_temporal_length``; ``ScanAreas`` -> ``direction``; ``MinimumCasesInHighRateClusters`` ->
``min_cases``; ``MonteCarloReps`` -> ``n_replicates``; ``MaxSpatialSizeInPopulationAtRisk`` ->
``max_population`` = value / 100; ``CoordinatesType=1`` -> great-circle distances. What these
functions cannot honour (years or months as time units, a quadratic trend, time-trend adjustment,
a maximum circle radius for the SVTT scan) is refused by name.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from ._satscan import _as_ids, _geo, _number, _population, _read_rows

__all__ = ["TEMPORAL_MODELS", "temporal_kwargs", "svtt_kwargs", "run_temporal", "run_svtt", "parse_time"]

#: run_prm's names of the purely temporal and seasonal analyses
TEMPORAL_MODELS = ("temporal_poisson", "temporal_bernoulli", "seasonal_poisson", "seasonal_bernoulli")
_UNIT_NAMES = {"1": "years", "2": "months", "3": "days", "4": "generic units"}


def parse_time(text: str, generic: bool):
    """A SaTScan date ``YYYY/MM/DD`` as numpy ``datetime64[D]``, or (``generic``: SaTScan's generic
    time units, ``PrecisionCaseTimes=4``) a whole number; ValueError otherwise."""
    if generic:
        v = float(text)
        if v != round(v):
            raise ValueError(f"{text!r} is not a whole number of generic time units")
        return int(v)
    y, m, d = (int(x) for x in text.split("/"))
    return np.datetime64(f"{y:04d}-{m:02d}-{d:02d}", "D")


def _whole(v, key, bad, default, minimum=1) -> int:
    try:
        x = int(v.get(key, default) or default)
    except ValueError:
        raise bad(key, "is not a whole number") from None
    if x < minimum:
        raise bad(key, f"must be >= {minimum}")
    return x


def _no_trend_adjustment(v, bad, name):
    if (v.get("TimeTrendAdjustmentType", "0") or "0") != "0":
        raise bad("TimeTrendAdjustmentType", f"is not supported: the {name} scan runs without time-trend adjustment "
                                             f"(TimeTrendAdjustmentType=0)")


def time_trend_kwargs(v, bad, kwargs, name, bernoulli=False):
    """The time-trend adjustment of the ``name`` scan as ``time_trend`` and ``trend_percent`` in ``kwargs``:
    discrete Poisson ``TimeTrendAdjustmentType`` 1 (nonparametric, space-time only), 2 (log-linear by
    ``TimeTrendPercentage`` per year), 3 (log-linear estimated), 5 (log-quadratic estimated) and, space-time
    only, 4 (nonparametric with time-stratified randomization), the one adjustment of the Bernoulli
    space-time scan (``bernoulli``), as in SaTScan."""
    kind = v.get("TimeTrendAdjustmentType", "0") or "0"
    if kind == "0":
        return
    space_time = name != "purely temporal"
    if kind == "4" and space_time:
        kwargs["time_trend"] = "stratified"
        return
    if bernoulli:
        raise bad("TimeTrendAdjustmentType", f"must be 0 (none) or 4 (nonparametric, with time-stratified "
                                             f"randomization): the {name} scan permits only that adjustment, as "
                                             f"in SaTScan")
    offered = ("nonparametrically (1 or, time-stratified, 4) or " if space_time else "") + \
        "for a log-linear trend, given (2) or estimated (3), or a log-quadratic trend (5)"
    if kind == "4":
        raise bad("TimeTrendAdjustmentType", f"4 (nonparametric, with time-stratified randomization) is not valid "
                                             f"for a purely temporal analysis (SaTScan refuses it alike): the {name} "
                                             f"scan adjusts {offered}")
    if kind == "1" and not space_time:
        raise bad("TimeTrendAdjustmentType", f"1 (nonparametric) cannot be used with a purely temporal analysis "
                                             f"(SaTScan refuses it alike): the {name} scan adjusts {offered}")
    if kind not in ("1", "2", "3", "5"):
        raise bad("TimeTrendAdjustmentType", "must be 0 (none), 1 (nonparametric), 2 (log-linear percentage), 3 "
                                             "(estimated log-linear trend) or 5 (log-quadratic trend)")
    kwargs["time_trend"] = {"1": "nonparametric", "5": "logquadratic"}.get(kind, "loglinear")
    if kind == "2":
        try:
            pct = float(v.get("TimeTrendPercentage", "0"))
        except ValueError:
            raise bad("TimeTrendPercentage", "is not a number") from None
        if not pct > -100 or not math.isfinite(pct):
            raise bad("TimeTrendPercentage", "must be a percentage above -100 (SaTScan refuses it alike)")
        kwargs["trend_percent"] = pct


def space_time_adjustments(v, bad, kwargs, model, name) -> None:
    """The adjustments of the ``name`` space-time scan (``model``) as ``time_trend``, ``trend_percent`` and
    ``spatial_adjustment`` in ``kwargs``: the time trends of :func:`time_trend_kwargs` (Poisson and
    Bernoulli), ``SpatialAdjustmentType=1`` (stratified randomization, discrete Poisson only, not with
    the time-stratified adjustment) and 2 (nonparametric, discrete Poisson, no time trend or the
    time-stratified one), the weekly adjustment and purely temporal and purely spatial clusters; refused by
    name otherwise."""
    if model in ("space_time_poisson", "space_time_bernoulli"):
        time_trend_kwargs(v, bad, kwargs, name, bernoulli=model == "space_time_bernoulli")
    elif model in ("space_time_exponential", "space_time_normal", "temporal_normal", "temporal_exponential",
                   "space_time_ordinal", "space_time_multinomial", "temporal_ordinal", "temporal_multinomial"):
        _no_trend_adjustment(v, bad, name)
    if (v.get("SpatialAdjustmentType", "0") or "0") == "1":
        if model != "space_time_poisson":
            raise bad("SpatialAdjustmentType", "1 (stratified randomization) is for the discrete Poisson space-time "
                                               "analyses (SaTScan refuses it elsewhere too)")
        if kwargs.get("time_trend") == "stratified":
            raise bad("SpatialAdjustmentType", "1 (stratified randomization) is not supported together with "
                                               "TimeTrendAdjustmentType=4")
        kwargs["spatial_adjustment"] = "stratified"
    if (v.get("SpatialAdjustmentType", "0") or "0") == "2":
        if model != "space_time_poisson":
            raise bad("SpatialAdjustmentType", "2 (nonparametric) is for the discrete Poisson space-time analyses "
                                               "(SaTScan refuses it elsewhere too)")
        if kwargs.get("time_trend") not in (None, "stratified"):
            raise bad("SpatialAdjustmentType", "2 (nonparametric) needs TimeTrendAdjustmentType 0 or 4 (SaTScan "
                                               "refuses the others too)")
        kwargs["spatial_adjustment"] = "nonparametric"
    if (v.get("AdjustForWeeklyTrends", "n") or "n").lower() not in ("n", "no", "false", "0"):
        if model not in ("space_time_permutation", "space_time_poisson", "space_time_bernoulli",
                         "space_time_exponential", "space_time_normal", "temporal_normal", "temporal_exponential",
                         "space_time_ordinal", "space_time_multinomial", "temporal_ordinal", "temporal_multinomial"):
            raise bad("AdjustForWeeklyTrends", "is supported for the space-time permutation, discrete Poisson, "
                                               "Bernoulli, exponential, normal, ordinal and multinomial analyses only "
                                               "(ModelType 2, 0, 1, 4, 5, 3 or 7, AnalysisType 3 or 4)")
        if kwargs.get("time_trend") in ("nonparametric", "stratified") or "spatial_adjustment" in kwargs:
            raise bad("AdjustForWeeklyTrends", "is not supported with TimeTrendAdjustmentType 1 or 4 (SaTScan refuses "
                                               "the nonparametric one too) or SpatialAdjustmentType=1")
        if (v.get("TimeAggregationUnits", "3") or "3") != "3" or (v.get("TimeAggregationLength", "1") or "1") != "1":
            raise bad("AdjustForWeeklyTrends", "needs a time aggregation of 1 day (TimeAggregationUnits=3, "
                                               "TimeAggregationLength=1), as in SaTScan")
        kwargs["day_of_week"] = True
    if (v.get("IncludePurelyTemporal", "n") or "n").lower() not in ("n", "no", "false", "0"):
        if model not in ("space_time_poisson", "space_time_bernoulli", "space_time_exponential", "space_time_normal",
                         "space_time_ordinal", "space_time_multinomial"):
            raise bad("IncludePurelyTemporal", "is supported for the discrete Poisson, Bernoulli, exponential, "
                                               "normal, ordinal and multinomial space-time analyses only (ModelType "
                                               "0, 1, 3, 4, 5 or 7, AnalysisType 3 or 4; "
                                               "the space-time permutation model's purely temporal clusters have "
                                               "LLR 0)")
        if kwargs.get("time_trend") in ("nonparametric", "stratified") or "spatial_adjustment" in kwargs:
            raise bad("IncludePurelyTemporal", "is not supported with TimeTrendAdjustmentType 1 or 4 or "
                                               "SpatialAdjustmentType=1 (purely temporal LLRs would be 0)")
        kwargs["purely_temporal"] = True
    if (v.get("IncludePurelySpatial", "n") or "n").lower() not in ("n", "no", "false", "0"):
        if model not in ("space_time_poisson", "space_time_bernoulli", "space_time_exponential", "space_time_normal",
                         "space_time_ordinal", "space_time_multinomial"):
            raise bad("IncludePurelySpatial", "is supported for the discrete Poisson, Bernoulli, exponential, normal, "
                                              "ordinal and multinomial space-time analyses only (ModelType 0, 1, 3, "
                                              "4, 5 or 7, AnalysisType 3 or 4; the space-time permutation model's "
                                              "purely spatial clusters have LLR 0)")
        if "spatial_adjustment" in kwargs:
            raise bad("IncludePurelySpatial", "is not supported with SpatialAdjustmentType 1 or 2 (purely spatial "
                                              "LLRs would be 0)")
        if (v.get("AdjustForEarlierAnalyses", "n") or "n").lower() not in ("n", "no", "false", "0"):
            raise bad("IncludePurelySpatial", "is not supported with AdjustForEarlierAnalyses=y")
        kwargs["purely_spatial"] = True


def temporal_kwargs(v, model, analysis, bad, kwargs) -> None:
    """The keyword arguments of :func:`~hphawkes_py.scan.temporal` / :func:`~hphawkes_py.scan.seasonal`
    a parameter file sets, into ``kwargs`` (which holds run_prm's common settings: the spatial ones
    are dropped, a purely temporal scan has no circles)."""
    seasonal = model.startswith("seasonal")
    name = "seasonal" if seasonal else "purely temporal"
    for key in ("distance", "max_population", "max_distance"):
        kwargs.pop(key, None)
    if model == "temporal_poisson":
        time_trend_kwargs(v, bad, kwargs, name)
        if "time_trend" in kwargs and not (v.get("PopulationFile") or "").strip():
            raise bad("TimeTrendAdjustmentType", "needs a population file (PopulationFile) in a purely temporal "
                                                 "Poisson analysis (SaTScan refuses it alike)")
    else:
        _no_trend_adjustment(v, bad, name)
    if (v.get("PrecisionCaseTimes", "3") or "3") != "3":
        raise bad("PrecisionCaseTimes", f"is not supported: the {name} scan works with dated records "
                                        f"(PrecisionCaseTimes=3, days)")
    units = v.get("TimeAggregationUnits", "3") or "3"
    if units != "3":
        raise bad("TimeAggregationUnits", f"({_UNIT_NAMES.get(units, 'unknown')}) is not supported: the {name} scan's "
                                          f"time units are days (TimeAggregationUnits=3; TimeAggregationLength days "
                                          f"make a unit)")
    length = _whole(v, "TimeAggregationLength", bad, "1")
    if seasonal and length != 1:
        raise bad("TimeAggregationLength", "must be 1: the seasonal scan works on the days of the year")
    if not seasonal:
        kwargs["time_aggregation"] = length
    include = v.get("IncludeClusters", "0") or "0"
    if include not in ("0", "1") or (seasonal and include != "0"):
        raise bad("IncludeClusters", "is not supported: 0 (all clusters)" + ("" if seasonal else
                                                                              " or 1 (alive clusters)"))
    if not seasonal:
        # prospective (6), or alive clusters only: the windows end on the last unit
        kwargs["prospective"] = analysis == "6" or include == "1"
    size = v.get("MaxTemporalSize", "50") or "50"
    try:
        size_v = float(size)
    except ValueError:
        raise bad("MaxTemporalSize", "is not a number") from None
    interp = v.get("MaxTemporalSizeInterpretation", "0") or "0"
    if interp == "0":
        if not 0 < size_v <= 90:
            raise bad("MaxTemporalSize", "must be in (0, 90] percent of the study period")
        kwargs["max_temporal_size"] = size_v / 100.0
    elif interp == "1":
        if size_v != int(size_v) or size_v < 1:
            raise bad("MaxTemporalSize", "must be a whole number of days >= 1")
        kwargs["max_temporal_length"] = int(size_v)
    else:
        raise bad("MaxTemporalSizeInterpretation", "must be 0 (percent) or 1 (time units)")
    kwargs["min_temporal_length"] = _whole(v, "MinimumTemporalClusterSize", bad, "1")


def svtt_kwargs(v, bad, kwargs) -> bool:
    """The keyword arguments of :func:`~hphawkes_py.scan.svtt` a parameter file sets, into ``kwargs``;
    returns whether the times are SaTScan's generic units (``PrecisionCaseTimes=4``) rather than dates."""
    name = "spatial variation in temporal trends"
    if (v.get("TimeTrendType", "0") or "0") != "0":
        raise bad("TimeTrendType", "is not supported: hp.scan.svtt fits SaTScan's linear (log-linear) trend "
                                   "(TimeTrendType=0), not the quadratic one")
    _no_trend_adjustment(v, bad, name)
    if "max_distance" in kwargs:
        raise bad("UseDistanceFromCenterOption", f"is not supported by the {name} scan (its circles are limited by "
                                                 f"MaxSpatialSizeInPopulationAtRisk only)")
    kwargs.pop("min_cases", None)  # the SVTT scan has no minimum number of cases
    precision = v.get("PrecisionCaseTimes", "3") or "3"
    units = v.get("TimeAggregationUnits", "3") or "3"
    if precision not in ("3", "4"):
        raise bad("PrecisionCaseTimes", f"is not supported: the {name} scan reads days (3) or generic time units (4)")
    if units != precision:
        raise bad("TimeAggregationUnits", f"({_UNIT_NAMES.get(units, 'unknown')}) is not supported with "
                                          f"PrecisionCaseTimes={precision}: the time units are "
                                          f"{_UNIT_NAMES[precision]} (TimeAggregationUnits={precision}; "
                                          f"TimeAggregationLength of them make a unit)")
    kwargs["time_aggregation"] = _whole(v, "TimeAggregationLength", bad, "1")
    return precision == "4"


def _timed_records(path, what, generic, name):
    """``<id> <#cases> <date or time>`` records: ``(ids, counts, times)`` (times datetime64[D], or
    int64 in generic units), each value checked where it is read (file, line, field)."""
    p, rows = _read_rows(path, what, 3)
    ids, counts, times = [], [], []
    for lineno, parts in rows:
        if len(parts) > 3:
            raise ValueError(f"{p}:{lineno}: covariates (field 4 on) are not supported by the {name} scan")
        counts.append(int(_number(parts[1], p, lineno, 2, f"#{what}s", count=True, whole=True)))
        try:
            times.append(parse_time(parts[2], generic))
        except ValueError:
            kind = "a whole number (generic time units)" if generic else "a date YYYY/MM/DD"
            raise ValueError(f"{p}:{lineno}: field 3 (date) {parts[2]!r} is not {kind}") from None
        ids.append(parts[0])
    times = np.array(times, dtype=np.int64 if generic else "datetime64[D]")
    return p, ids, np.array(counts, dtype=np.int64), times


def _in_period(p, what, ids, counts, times, dates):
    """The records dated in the study period: a record outside is refused (``StudyPeriodCheckType=0``)
    or left out with a warning (1), as SaTScan does."""
    start, end = dates["study_period"]
    out = (times < start) | (times > end)
    if not out.any():
        return ids, counts, times
    i = int(np.argmax(out))
    if dates["out_of_period"] == "error":
        raise ValueError(f"{p}: the {what} dated {times[i]} (record {i + 1}) is outside the study period {start} to "
                         f"{end} (StartDate/EndDate); SaTScan refuses such records (StudyPeriodCheckType=0), or "
                         f"leaves them out with StudyPeriodCheckType=1")
    warnings.warn(f"{p}: {int(out.sum())} {what} record(s) ({int(counts[out].sum())} {what}s) dated outside the study "
                  f"period {start} to {end} were left out (first: record {i + 1}, {times[i]}; StudyPeriodCheckType=1)",
                  UserWarning, stacklevel=4)
    keep = ~out
    return [k for k, kept in zip(ids, keep) if kept], counts[keep], times[keep]


def _constant_population(path, seen, geo_path, name) -> dict:
    """{location id: population} of a population file with one census year per location and no
    covariates (the population constant in time, as the scans here assume it); refused otherwise
    (SaTScan would interpolate between census years)."""
    p, total, by_cat, first, years = _population(path)
    for lid, cat in by_cat:
        if cat:
            raise ValueError(f"{p}:{first[lid]}: covariates (field 4 on) are not supported by the {name} scan (give "
                             f"one population per location)")
    for lid, ys in years.items():
        if seen is not None and lid not in seen:
            raise ValueError(f"{p}:{first[lid]}: location id {lid!r} is not in the coordinates file {geo_path}")
        if len(ys) > 1:
            raise ValueError(f"{p}:{first[lid]}: location {lid!r} has {len(ys)} census years; the {name} scan holds "
                             f"the population constant in time: give one census year per location")
    return total


def run_temporal(spec, run):
    """The purely temporal and seasonal analyses of :func:`~hphawkes_py.scan.run_prm`: the dated case
    (and, Bernoulli, control) records of the whole region, by day."""
    from .temporal_model import seasonal, temporal

    f, model = spec["files"], spec["model"]
    bern = model.endswith("bernoulli")
    name = "seasonal" if model.startswith("seasonal") else "purely temporal"
    geo = f.get("geo_file")
    gp, seen = (None, None) if geo is None else (lambda g: (g[0], g[4]))(_geo(geo))
    tables = [("case", f["case_file"])] + ([("control", f["control_file"])] if bern else [])
    times, cases, controls = [], [], []
    for what, path in tables:
        p, ids, counts, t = _timed_records(path, what, False, name)
        if seen is not None:
            missing = [k for k in ids if k not in seen]
            if missing:
                raise ValueError(f"{p}: location id {missing[0]!r} is not in the coordinates file {gp}")
        ids, counts, t = _in_period(p, what, ids, counts, t, spec["dates"])
        zeros = np.zeros(len(t), dtype=np.int64)
        times.append(t)
        cases.append(counts if what == "case" else zeros)
        controls.append(counts if what == "control" else zeros)
    if not bern and f.get("population_file") is not None:
        # one census year per location: the region's population is constant in time, SaTScan's
        # expected cases those of no population file
        _constant_population(f["population_file"], seen, gp, name)
    fn = seasonal if name == "seasonal" else temporal
    kw = dict(spec["kwargs"], study_period=spec["dates"]["study_period"])
    return fn(np.concatenate(times), np.concatenate(cases), controls=np.concatenate(controls) if bern else None,
              model="bernoulli" if bern else "poisson", **kw, **run)


def run_svtt(spec, run):
    """The spatial variation in temporal trends analysis of :func:`~hphawkes_py.scan.run_prm`: the
    case records at their locations, every location of the coordinates file a circle centre, its
    population from the population file (one census year)."""
    from .svtt_model import svtt

    f = spec["files"]
    name = "spatial variation in temporal trends"
    gp, keys, xs, ys, seen = _geo(f["geo_file"])
    p, ids, counts, t = _timed_records(f["case_file"], "case", spec["generic_time"], name)
    missing = [k for k in ids if k not in seen]
    if missing:
        raise ValueError(f"{p}: location id {missing[0]!r} is not in the coordinates file {gp}")
    ids, counts, t = _in_period(p, "case", ids, counts, t, spec["dates"])
    pop = _constant_population(f["population_file"], seen, gp, name)
    without = [k for k in keys if k not in pop]
    if without:
        raise ValueError(f"{f['population_file']}: no population for location id {without[0]!r} of the coordinates "
                         f"file {gp}")
    # locations without cases are circle centres too: one row with 0 cases at the study period's start
    listed = set(ids)
    absent = [k for k in keys if k not in listed]
    start = spec["dates"]["study_period"][0]
    ids = ids + absent
    counts = np.concatenate([counts, np.zeros(len(absent), dtype=np.int64)])
    t = np.concatenate([t, np.full(len(absent), start, dtype=t.dtype)])
    where = {k: i for i, k in enumerate(keys)}
    order = np.argsort(np.array([where[k] for k in ids], dtype=np.int64), kind="stable")  # the file's order
    ids = [ids[i] for i in order]
    xy = np.array([(xs[where[k]], ys[where[k]]) for k in ids], dtype=float).reshape(-1, 2)
    kw = dict(spec["kwargs"], study_period=spec["dates"]["study_period"])
    return svtt(xy, t[order], counts[order], np.array([pop[k] for k in ids], dtype=float),
                location_ids=np.array(_as_ids(ids), dtype=object), **kw, **run)
