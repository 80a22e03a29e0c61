"""SaTScan parameter files (.prm): rerun a purely spatial Bernoulli, discrete Poisson, normal,
exponential, ordinal, multinomial or continuous Poisson analysis, a retrospective / prospective space-time
permutation, Bernoulli, discrete Poisson or exponential analysis, a purely temporal or seasonal analysis or a
spatial variation in temporal trends, from SaTScan's native files or the CSV / dBase / shapefile sources its GUI
describes.

A parameter that would change the analysis is either honoured or refused by name (never
ignored). Parameters that only choose SaTScan's output files or run options (shapefiles, KML,
dBase tables, processors, ...) do not change the clusters: they are accepted and listed in the
returned ``ignored`` record, as are the settings of analyses that are not run (temporal windows,
elliptic shapes and power evaluation when they are switched off). The output settings are read,
checked and written by :mod:`hphawkes_py.scan._prm_outputs`; the settings of the analyses in time
by :mod:`hphawkes_py.scan._prm_temporal`; the files and settings that shape the windows (grid, max circle
size and neighbors files, reported sizes, secondary clusters) by :mod:`hphawkes_py.scan._prm_windows`.
"""
from __future__ import annotations

import configparser
import warnings
from pathlib import Path

import numpy as np

from ._satscan import (_as_ids, _read_satscan, circle_rows, read_neighbors, run_continuous, time_interval_starts,
                       time_units_in_period)
from .data_sources import SOURCE_KEYS, source_from_prm
from .model import bernoulli, poisson
from .normal_model import satscan_min_cases
from .iterative import iterative_scan, prm_iterative
from .known_risks import poisson_with_known_risks, prm_known_risks
from .power_evaluation import prm_power, run_prm_power
from ._prm_temporal import TEMPORAL_MODELS, parse_time, run_svtt, run_temporal, svtt_kwargs, temporal_kwargs, \
    space_time_adjustments
from ._prm_outputs import _OFF, _on, _output_settings, _results_target, _write_results
from ._prm_continuous_poisson import continuous_poisson_kwargs, run_continuous_poisson
from ._prm_space_time import (run_space_time, run_space_time_exponential, run_space_time_normal,
                              run_temporal_exponential, run_temporal_normal)
from ._prm_windows import (_CIRCULAR_SCANS, _SPACE_TIME, _grid_file, _max_circle, _neighbors_file, _reported_kwargs,
                           _secondary, _window_kwargs)

__all__ = ["read_prm", "run_prm"]

#: parameter -> values this implementation accepts (anything else is refused by name; for a feature
#: hp.scan does not have, the values of a switched-off setting, _OFF)
_REQUIRE = {
    "IsotonicScan": {"0", "1"},  # 1: the purely spatial Poisson and Bernoulli analyses only
    "UseMetaLocationsFile": _OFF,
    "MultipleCoordinatesType": {"0"},
    "SpatialAdjustmentType": {"0", "1", "2"},  # 1, 2: the space-time Poisson model only (run_prm)
    "PValueReportType": {"0", "1", "3"},   # default / standard Monte Carlo / Gumbel (both reported)
    "SimulatedDataMethodType": {"0"},
    "RiskLimitHighClusters": _OFF,
    "RiskLimitLowClusters": _OFF,
    "UseLocationsNetworkFile": _OFF,
}

#: parameters the analysis reads (mapped below)
_USED = {"AdjustForWeeklyTrends", "IncludePurelyTemporal", "AdjustForEarlierAnalyses", "CaseFile", "ControlFile",
         "PopulationFile", "CoordinatesFile", "CoordinatesType",
         "ModelType", "ScanAreas",
         "MaxSpatialSizeInPopulationAtRisk", "UseDistanceFromCenterOption", "MaxSpatialSizeInDistanceFromCenter",
         "MonteCarloReps", "MinimumCasesInHighRateClusters", "AnalysisType", "StartDate", "EndDate",
         "PrecisionCaseTimes", "TimeAggregationUnits", "TimeAggregationLength", "MaxTemporalSizeInterpretation",
         "MaxTemporalSize", "MinimumTemporalClusterSize", "IncludePurelySpatial", "IncludeClusters",
         "SpatialWindowShapeType", "NonCompactnessPenalty", "EllipseShapes", "EllipseAngles",
         "MinimumCasesInLowRateClusters", "StudyPeriodCheckType", "IterativeScan", "IterativeScanMaxIterations",
         "IterativeScanMaxPValue", "UseMaxCirclePopulationFileOption", "MaxCirclePopulationFile",
         "MaxSpatialSizeInMaxCirclePopulationFile", "UseGridFile", "GridFile", "CriteriaForReportingSecondaryClusters",
         "UseNeighborsFile", "NeighborsFilename", "UseReportOnlySmallerClusters",
         "MaxSpatialSizeInPopulationAtRisk_Reported", "UseDistanceFromCenterOption_Reported",
         "MaxSpatialSizeInDistanceFromCenter_Reported", "UseMaxCirclePopulationFileOption_Reported"}

#: sections that only choose outputs, run options or analyses that are not run here
_NOT_ANALYSIS_SECTIONS = {"Output", "Spatial Output", "Temporal Output", "Other Output", "Run Options", "System",
                          "Power Evaluation", "Power Simulations", "Elliptic Scan", "Temporal Window",
                          "Space and Time Adjustments", "Data Checking", "Multiple Data Sets", "Notifications",
                          "Line List", "Border Analysis", "Cluster Drilldown", "Miscellaneous Analysis",
                          "Email Alerts"}
#: keys outside those sections that do not change a purely spatial analysis
_NOT_ANALYSIS_KEYS = {"PrecisionCaseTimes", "StartDate", "EndDate", "TimeAggregationUnits", "TimeAggregationLength",
                      "MetaLocationsFilename", "NonCompactnessPenalty",
                      "EarlyTerminationThreshold",
                      "ReportGumbel", "AdjustForEarlierAnalyses", "ProspectiveStartDate",
                      "AdjustmentsByKnownRelativeRisksFilename",
                      "LocationsNetworkFilename", "RiskLimitHighClustersValue", "RiskLimitLowClustersValue",
                      "MinimumCasesInLowRateClusters", "MinimumTemporalClusterSize", "OutputTemporalGraphHTML",
                      "PrecisionCaseTimesType", "TimeTrendAdjustmentType", "TimeTrendPercentage", "TimeTrendType",
                      "RandomizationSeed", "RandomlyGenerateSeed", "SatScanVersion",
                      # thresholds and files of options that are required off above
                      "RiskThresholdHighClusters", "RiskThresholdLowClusters", "MultipleLocationsFile"}

#: (ModelType, AnalysisType) -> the analysis run_prm runs. A model or analysis added to hp.scan is a
#: row here, a row of _FILES and a runner in _RUNNERS (and its settings in _space_time_kwargs etc.).
_ANALYSES = {
    ("0", "1"): "poisson", ("0", "3"): "space_time_poisson", ("0", "4"): "space_time_poisson",
    ("1", "1"): "bernoulli", ("1", "3"): "space_time_bernoulli", ("1", "4"): "space_time_bernoulli",
    ("2", "3"): "space_time_permutation", ("2", "4"): "space_time_permutation",
    ("4", "1"): "exponential", ("4", "3"): "space_time_exponential", ("4", "4"): "space_time_exponential",
    ("5", "1"): "normal", ("5", "3"): "space_time_normal", ("5", "4"): "space_time_normal",
    ("5", "2"): "temporal_normal", ("5", "6"): "temporal_normal",
    ("4", "2"): "temporal_exponential", ("4", "6"): "temporal_exponential",
    ("0", "2"): "temporal_poisson", ("0", "6"): "temporal_poisson", ("0", "7"): "seasonal_poisson",
    ("1", "2"): "temporal_bernoulli", ("1", "6"): "temporal_bernoulli", ("1", "7"): "seasonal_bernoulli",
    ("0", "5"): "svtt", ("3", "1"): "ordinal", ("7", "1"): "multinomial",
    ("3", "3"): "space_time_ordinal", ("3", "4"): "space_time_ordinal",
    ("7", "3"): "space_time_multinomial", ("7", "4"): "space_time_multinomial",
    ("3", "2"): "temporal_ordinal", ("3", "6"): "temporal_ordinal",
    ("7", "2"): "temporal_multinomial", ("7", "6"): "temporal_multinomial",
    ("6", "1"): "continuous_poisson",
}
#: SaTScan's AnalysisType codes (calculation/ParameterTypes.h, enum AnalysisType)
_ANALYSIS_NAMES = {"1": "purely spatial", "2": "retrospective purely temporal", "3": "retrospective space-time",
                   "4": "prospective space-time", "5": "spatial variation in temporal trends",
                   "6": "prospective purely temporal", "7": "seasonal temporal"}
#: analysis -> (the input file it needs besides CaseFile and CoordinatesFile, the files it does not use)
_FILES = {
    "poisson": ("PopulationFile", ("ControlFile",)), "space_time_poisson": ("PopulationFile", ("ControlFile",)),
    "bernoulli": ("ControlFile", ("PopulationFile",)), "space_time_bernoulli": ("ControlFile", ("PopulationFile",)),
    "space_time_permutation": (None, ("ControlFile", "PopulationFile")),
    "normal": (None, ("ControlFile", "PopulationFile")), "exponential": (None, ("ControlFile", "PopulationFile")),
    "space_time_exponential": (None, ("ControlFile", "PopulationFile")),
    "space_time_normal": (None, ("ControlFile", "PopulationFile")),
    "temporal_normal": (None, ("ControlFile", "PopulationFile")),
    "temporal_exponential": (None, ("ControlFile", "PopulationFile")),
    # the Poisson purely temporal scans read PopulationFile when it is given (a constant population)
    "temporal_poisson": (None, ("ControlFile",)), "seasonal_poisson": (None, ("ControlFile",)),
    "temporal_bernoulli": ("ControlFile", ("PopulationFile",)),
    "seasonal_bernoulli": ("ControlFile", ("PopulationFile",)),
    "svtt": ("PopulationFile", ("ControlFile",)),
    "ordinal": (None, ("ControlFile", "PopulationFile")), "multinomial": (None, ("ControlFile", "PopulationFile")),
    "space_time_ordinal": (None, ("ControlFile", "PopulationFile")),
    "space_time_multinomial": (None, ("ControlFile", "PopulationFile")),
    "temporal_ordinal": (None, ("ControlFile", "PopulationFile")),
    "temporal_multinomial": (None, ("ControlFile", "PopulationFile")),
    # the points are the coordinates file's records: no case file
    "continuous_poisson": (None, ("CaseFile", "ControlFile", "PopulationFile")),
}
#: the input files whose CSV / dBase / shapefile source settings (``<File>-Source...``) are read
_SOURCE_FILES = ("CaseFile", "ControlFile", "PopulationFile", "CoordinatesFile")
#: the purely temporal analyses of the models whose records are observations (patients): read as space-time ones
_OBSERVATION_TEMPORAL = ("temporal_normal", "temporal_exponential", "temporal_ordinal", "temporal_multinomial")
_TIME_UNITS = {"1": "year", "2": "month", "3": "day"}
_MODEL_NAMES = {"0": "Discrete Poisson", "1": "Bernoulli", "2": "Space-Time Permutation", "3": "Ordinal",
                "4": "Exponential", "5": "Normal", "6": "Continuous Poisson", "7": "Multinomial",
                "8": "Rank", "9": "Uniform Time", "10": "Batched"}
_DIRECTIONS = {"1": "high", "2": "low", "3": "both"}
#: SaTScan's study period when the file gives none (``CParameters::SetAsDefaulted``)
_DEFAULT_PERIOD = {"StartDate": "2000/1/1", "EndDate": "2000/12/31"}


def read_prm(path) -> dict:
    """Parse a SaTScan parameter file: ``{"path", "section_of", "values"}`` (keys as written)."""
    p = Path(path)
    if p.is_dir():
        raise IsADirectoryError(f"parameter file {p} is a folder, expected a .prm file")
    if not p.is_file():
        raise FileNotFoundError(f"parameter file not found: {p}")
    # strict: a section or a key given twice is refused below rather than merged (the last value winning)
    cp = configparser.ConfigParser(interpolation=None, comment_prefixes=(";", "#"), inline_comment_prefixes=None,
                                   strict=True)
    cp.optionxform = str  # SaTScan's keys are case-sensitive CamelCase
    try:
        # "utf-8-sig": a UTF-8 byte-order mark (files saved by Windows editors) is skipped, as SaTScan does
        cp.read_string(p.read_text(encoding="utf-8-sig", errors="strict"), source=str(p))
    except configparser.DuplicateSectionError as exc:
        raise ValueError(f"{p}:{exc.lineno}: duplicated section [{exc.section}]; each section may appear once "
                         f"(merge the two)") from None
    except configparser.DuplicateOptionError as exc:
        raise ValueError(f"{p}:{exc.lineno}: {exc.option} is given twice in section [{exc.section}]; give each "
                         f"parameter once") from None
    except (configparser.Error, UnicodeDecodeError) as exc:
        raise ValueError(f"{p}: not a readable SaTScan parameter file ({' '.join(str(exc).split())})") from None
    if cp.defaults():
        # configparser would copy [DEFAULT]'s keys into every section
        raise ValueError(f"{p}: [DEFAULT] is not a SaTScan section; move {', '.join(cp.defaults())} into their "
                         f"sections")
    values, section_of = {}, {}
    for sec in cp.sections():
        for k, v in cp.items(sec):
            if k in section_of:
                raise ValueError(f"{p}: {k} is given in section [{section_of[k]}] ({k}={values[k]!r}) and again in "
                                 f"section [{sec}] ({k}={v.strip()!r}); give each parameter once")
            values[k] = v.strip()
            section_of[k] = sec
    if not values:
        raise ValueError(f"{p}: no parameters found")
    return {"path": p, "values": values, "section_of": section_of}


def prm_arguments(path) -> dict:
    """The :func:`~hphawkes_py.scan.bernoulli` / :func:`~hphawkes_py.scan.poisson` /
    :func:`~hphawkes_py.scan.space_time_permutation` / :func:`~hphawkes_py.scan.space_time` call a
    parameter file describes: ``{"model", "files", "kwargs", "ignored"}`` (``model``: "poisson",
    "bernoulli", "space_time_permutation", "space_time_bernoulli" or "space_time_poisson"); refuses what
    cannot be honoured."""
    prm = read_prm(path)
    p, v, sec = prm["path"], prm["values"], prm["section_of"]

    def bad(key, why):
        return ValueError(f"{p}: {key}={v.get(key, '')!r} ([{sec.get(key, '?')}]) {why}")

    for key, allowed in _REQUIRE.items():
        if key in v and v[key].lower() not in allowed:
            raise bad(key, "is not supported (hp.scan runs purely spatial and space-time analyses with circular "
                           "or elliptic windows and no-overlap secondary clusters); supported: "
                           f"{sorted(a for a in allowed if a) or 'off'}")
    model, analysis = _model_and_analysis(v, bad)
    if _on(v, "UseNeighborsFile") and model not in ("bernoulli", "poisson"):
        raise bad("UseNeighborsFile", "is supported for the purely spatial Bernoulli and discrete Poisson analyses "
                                      "(ModelType 0 or 1, AnalysisType 1)")
    ignored = _ignored(v, sec, bad)

    base = p.resolve().parent

    def file(key, required):
        """The file ``key`` names (relative to the parameter file's folder), as a
        :class:`~.data_sources.DataSource` where its ``<key>-Source...`` settings describe one."""
        name = v.get(key, "")
        if not name:
            if required:
                raise bad(key, "is required")
            return None
        f = Path(name)
        f = f if f.is_absolute() else base / f  # relative to the parameter file's folder
        if not f.is_file():
            raise bad(key, f"names a file that does not exist ({f})")
        try:
            src = source_from_prm(v, key, f, bad)
        except ValueError as exc:
            if str(exc).startswith(str(p)):
                raise
            raise ValueError(f"{p}: {exc}") from None
        return f if src is None else src

    # a purely temporal analysis needs no coordinates (SaTScan checks the case ids against them when given)
    files = {"case_file": file("CaseFile", model != "continuous_poisson"),
             "geo_file": file("CoordinatesFile", model not in TEMPORAL_MODELS + _OBSERVATION_TEMPORAL)}
    kwargs = {}
    need, unused = _FILES[model]
    what = {"0": "discrete Poisson", "2": "space-time permutation"}.get(v["ModelType"],
                                                                       _MODEL_NAMES[v["ModelType"]].lower())
    what = "Bernoulli" if what == "bernoulli" else what
    for key in unused:
        if v.get(key):
            raise bad(key, f"is not used by the {what} model " + (f"(give {need} only)" if need else
                                                                  "(the coordinates file only)" if
                                                                  model == "continuous_poisson" else "(cases only)"))
    if need:
        files[{"PopulationFile": "population_file", "ControlFile": "control_file"}[need]] = file(need, True)
    intervals, name = None, None
    if model in _SPACE_TIME + _OBSERVATION_TEMPORAL:
        name = {"space_time_permutation": "space-time permutation", "space_time_bernoulli": "Bernoulli space-time",
                "space_time_poisson": "discrete Poisson space-time",
                "space_time_exponential": "exponential space-time", "space_time_normal": "normal space-time",
                "temporal_normal": "normal purely temporal",
                "temporal_exponential": "exponential purely temporal",
                "space_time_ordinal": "ordinal space-time", "space_time_multinomial": "multinomial space-time",
                "temporal_ordinal": "ordinal purely temporal",
                "temporal_multinomial": "multinomial purely temporal"}[model]
        intervals = _space_time_kwargs(v, analysis, name, bad, kwargs)
    space_time_adjustments(v, bad, kwargs, model, name)
    if model in ("temporal_poisson", "seasonal_poisson"):
        files["population_file"] = file("PopulationFile", False)

    _window_kwargs(v, model, bad, kwargs)
    _settings_kwargs(v, model, bad, kwargs)
    circle = _max_circle(v, model, bad, file)
    _grid_file(v, model, bad, file, kwargs)
    _secondary(v, model, bad, kwargs)
    neighbors = _neighbors_file(v, model, bad, file, kwargs)
    _reported_kwargs(v, model, bad, kwargs)
    if _on(v, "AdjustForEarlierAnalyses"):
        _earlier_analyses(v, model, analysis, bad, kwargs, circle is not None)
    generic = False
    if model in TEMPORAL_MODELS:
        temporal_kwargs(v, model, analysis, bad, kwargs)
    elif model == "svtt":
        generic = svtt_kwargs(v, bad, kwargs)
    if model == "continuous_poisson":
        continuous_poisson_kwargs(v, bad, kwargs)
    if model in ("normal", "space_time_normal", "temporal_normal"):  # both minimums go into satscan_min_cases once
        # the file says
        # weighted or not
        kwargs["min_cases"] = _normal_minimums(v, kwargs["direction"], bad, ignored)
    else:
        _low_rate_minimum(v, kwargs["direction"], bad, ignored)
    return {"model": model, "analysis": analysis, "files": files, "kwargs": kwargs, "ignored": ignored,
            "dates": _record_dates(v, bad, generic), "generic_time": generic,
            "outputs": _output_settings(v, base, bad, model), "iterative": prm_iterative(v, model, bad),
            "power": prm_power(v, model, base, bad), "intervals": intervals,
            "precision": v.get("PrecisionCaseTimes", "3") or "3",
            "known_risks": prm_known_risks(v, model, base, bad), "circle": circle, "neighbors": neighbors, "path": p}


def _normal_minimums(v, direction, bad, ignored):
    """``(low, high)``: SaTScan's two minimum-cases settings for the normal model (combined by
    :func:`~.normal_model.satscan_min_cases` when the case file shows whether it is weighted)."""
    out = []
    for key, default in (("MinimumCasesInLowRateClusters", "0"), ("MinimumCasesInHighRateClusters", "2")):
        try:
            n = int(v.get(key, default) or default)
        except ValueError:
            raise bad(key, "is not a whole number") from None
        if n < 0:
            raise bad(key, "must be >= 0")
        out.append(n)
    for weighted in (False, True):
        try:
            satscan_min_cases(direction, weighted, *out)
        except ValueError as exc:
            raise bad("MinimumCasesInLowRateClusters", f"and MinimumCasesInHighRateClusters="
                                                       f"{v.get('MinimumCasesInHighRateClusters', '2')!r}: {exc}") from None
    return tuple(out)


def _low_rate_minimum(v, direction, bad, ignored):
    """``MinimumCasesInLowRateClusters``: SaTScan leaves low-rate windows with fewer cases out of
    the scan, in the data and in every replicate (``AbstractLikelihoodCalculator::LowRate``), which
    changes the Monte Carlo maxima as well as the clusters. hp.scan has no such restriction for low
    rates, so a minimum above 0 is refused when low rates are scanned; with high rates only, SaTScan
    does not use it either (listed in ``ignored``)."""
    key = "MinimumCasesInLowRateClusters"
    try:
        n = int(v.get(key, "0") or "0")
    except ValueError:
        raise bad(key, "is not a whole number") from None
    if n < 0:
        raise bad(key, "must be >= 0")
    if direction == "high":
        if key in v:
            ignored[key] = v[key]
    elif n > 0:
        raise bad(key, f"is not supported with ScanAreas={v.get('ScanAreas')!r} (low rates scanned): SaTScan leaves "
                       f"low-rate windows with fewer than {n} cases out of the scan and its replicates, which hp.scan "
                       f"does not do; set it to 0 (no minimum) or scan high rates only (ScanAreas=1)")


def _record_dates(v, bad, generic=False) -> dict:
    """How the case (and control) records' dates are read, as SaTScan does: ``{"dated",
    "study_period", "out_of_period"}``. ``PrecisionCaseTimes=0``: the records have no date (their
    covariates start at field 3); otherwise (SaTScan's default is years) field 3 is the date, and
    records dated outside ``StartDate``-``EndDate`` (SaTScan's defaults 2000/1/1-2000/12/31) are
    refused (``StudyPeriodCheckType=0``, the default) or left out with a warning (1)."""
    check = v.get("StudyPeriodCheckType", "0") or "0"
    if check not in ("0", "1"):
        raise bad("StudyPeriodCheckType", "must be 0 (refuse records dated outside the study period) or 1 (leave "
                                          "them out)")
    given = {k: (v.get(k) or d) for k, d in _DEFAULT_PERIOD.items()}
    start, end = _date(given, "StartDate", bad, generic), _date(given, "EndDate", bad, generic)
    if end < start:
        raise bad("EndDate", f"is before StartDate ({start})")
    dated = (v.get("PrecisionCaseTimes", "1") or "1") != "0"
    return {"dated": dated, "study_period": (start, end),
            "out_of_period": "ignore" if dated and check == "1" else "error"}


def _model_and_analysis(v, bad):
    """``(model, AnalysisType)`` of the parameter values ``v``: the analysis this package runs for the
    file's ModelType and AnalysisType (:data:`_ANALYSES`; ``bad(key, why)``: the error naming a setting)."""
    model_code = v.get("ModelType", "")
    models = sorted({m for m, _ in _ANALYSES}, key=int)
    if model_code not in models:
        name = _MODEL_NAMES.get(model_code, "unknown")
        raise bad("ModelType", f"({name}) is not supported: " + _either(f"{m} ({_MODEL_NAMES[m]})" for m in models))
    analysis = v.get("AnalysisType", "1")
    model = _ANALYSES.get((model_code, analysis))
    if model is None:
        if model_code == "2" and analysis in ("2", "6", "7"):
            raise bad("AnalysisType", f"({_ANALYSIS_NAMES[analysis]}) is not defined for the space-time permutation "
                                      f"model, whose expected counts come from the locations' share of each day's "
                                      f"cases: without space there is nothing to permute; use ModelType 0 (discrete "
                                      f"Poisson) or 1 (Bernoulli)")
        allowed = sorted((a for m, a in _ANALYSES if m == model_code), key=int)
        raise bad("AnalysisType", f"is not supported with the {_MODEL_NAMES[model_code]} model: must be "
                  + _either(f"{a} ({_ANALYSIS_NAMES[a]})" for a in allowed))
    return model, analysis


def _either(items) -> str:
    """``"a, b or c"``."""
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def _ignored(v, sec, bad):
    """The settings that do not change the analysis (output files, run options, options set off);
    any other setting not known here is refused by name."""
    ignored = {}
    for key, val in v.items():
        if key in _USED or key in _REQUIRE:
            continue
        file_key, dash, suffix = key.partition("-")
        if dash and suffix in SOURCE_KEYS:
            if file_key in _SOURCE_FILES:
                continue  # read with the file (data_sources.source_from_prm)
            if not v.get(file_key):  # the source settings of a file that is not given
                ignored[key] = val
                continue
            raise bad(key, f"describes how to read {file_key}, which hp.scan does not read; refused rather than "
                           f"ignored")
        if sec[key] == "Polygons" and v.get("ModelType") == "6":
            continue  # the observable region (continuous_poisson_kwargs)
        if sec[key] in _NOT_ANALYSIS_SECTIONS or key in _NOT_ANALYSIS_KEYS or sec[key] == "Polygons":
            ignored[key] = val
            continue
        if val.lower() in _OFF:
            ignored[key] = val
            continue
        raise bad(key, "is not a parameter hp.scan knows; refused rather than ignored (remove it or set it off)")
    return ignored


def _settings_kwargs(v, model, bad, kwargs):
    """Coordinates, direction, maximum window size and distance, replicates and minimum cases into
    ``kwargs``."""
    ctype = v.get("CoordinatesType", "0")
    if ctype not in ("0", "1"):
        raise bad("CoordinatesType", "must be 0 (Cartesian) or 1 (latitude/longitude)")
    kwargs["distance"] = "great_circle" if ctype == "1" else "euclidean"
    if v.get("ScanAreas", "1") not in _DIRECTIONS:
        raise bad("ScanAreas", "must be 1 (high), 2 (low) or 3 (both)")
    kwargs["direction"] = _DIRECTIONS[v.get("ScanAreas", "1")]
    try:
        pct = float(v.get("MaxSpatialSizeInPopulationAtRisk", "50"))
    except ValueError:
        raise bad("MaxSpatialSizeInPopulationAtRisk", "is not a number") from None
    if not 0 < pct <= 50:
        raise bad("MaxSpatialSizeInPopulationAtRisk", "must be in (0, 50] (percent of the population at risk)")
    kwargs["max_population"] = pct / 100.0
    if v.get("UseDistanceFromCenterOption", "n").lower() not in _OFF:
        try:
            kwargs["max_distance"] = float(v.get("MaxSpatialSizeInDistanceFromCenter", ""))
        except ValueError:
            raise bad("MaxSpatialSizeInDistanceFromCenter", "is not a number") from None
    try:
        reps = int(v.get("MonteCarloReps", "999"))
    except ValueError:
        raise bad("MonteCarloReps", "is not a whole number") from None
    if reps < 1:
        raise bad("MonteCarloReps", "must be >= 1 (hp.scan always reports Monte Carlo p-values)")
    kwargs["n_replicates"] = reps
    if "MinimumCasesInHighRateClusters" in v:
        try:
            kwargs["min_cases"] = int(v["MinimumCasesInHighRateClusters"])
        except ValueError:
            raise bad("MinimumCasesInHighRateClusters", "is not a whole number") from None
    elif model in _CIRCULAR_SCANS:
        # SaTScan 10's default, whatever the file's version (a 9.4 file without the key is run with 2: NYCfever)
        kwargs["min_cases"] = 2


def _space_time_kwargs(v, analysis, name, bad, kwargs):
    """The space-time settings the space-time models share (time intervals, study period, temporal
    window): ``study_period``, ``prospective`` and ``max_temporal`` (in time intervals) added to
    ``kwargs``; refused by name where :func:`~hphawkes_py.scan.space_time` cannot honour them.
    Returns SaTScan's interval start days (:func:`~._satscan.time_interval_starts`) when the cases
    are aggregated into intervals longer than a day (None: days). ``PrecisionCaseTimes`` 1-3 (case dates
    in years, months or days) is read by :func:`~._prm_space_time.read_case_dates`."""
    precision = v.get("PrecisionCaseTimes", "3") or "3"
    if precision not in ("1", "2", "3"):
        raise bad("PrecisionCaseTimes", f"must be 1 (years), 2 (months) or 3 (days) for the {name} scan")
    if v.get("MinimumTemporalClusterSize", "1") != "1":
        raise bad("MinimumTemporalClusterSize", f"is not supported: the {name} scan's clusters last at least one "
                                                f"time interval (MinimumTemporalClusterSize=1)")
    units = _TIME_UNITS.get(v.get("TimeAggregationUnits", "3"))
    if units is None:
        raise bad("TimeAggregationUnits", "must be 1 (years), 2 (months) or 3 (days)")
    try:
        length = int(v.get("TimeAggregationLength", "1"))
    except ValueError:
        raise bad("TimeAggregationLength", "is not a whole number") from None
    if length < 1:
        raise bad("TimeAggregationLength", "must be >= 1")
    include = v.get("IncludeClusters", "0")
    if include not in ("0", "1"):
        raise bad("IncludeClusters", "is not supported: 0 (all) or 1 (alive) temporal clusters")
    start, end = _date(v, "StartDate", bad), _date(v, "EndDate", bad)
    if end < start:
        raise bad("EndDate", "is before StartDate")
    kwargs["study_period"] = (start, end)
    # prospective (4), or a retrospective analysis of alive clusters only (IncludeClusters=1): the
    # intervals end on the last day of the study period (no adjustment for earlier analyses)
    kwargs["prospective"] = analysis in ("4", "6") or include == "1"
    starts = None
    if (units, length) != ("day", 1):
        try:
            starts = time_interval_starts(start, end, units, length)
        except ValueError as exc:
            raise bad("TimeAggregationUnits", str(exc)) from None
        if len(starts) - 1 < 2:
            raise bad("TimeAggregationLength", f"leaves {len(starts) - 1} time interval in the study period; a "
                                               f"space-time scan needs at least 2")
    size = v.get("MaxTemporalSize", "50")
    try:
        size_v = float(size)
    except ValueError:
        raise bad("MaxTemporalSize", "is not a number") from None
    interp = v.get("MaxTemporalSizeInterpretation", "0")
    if interp == "1":
        if size_v != int(size_v) or size_v < 1:
            raise bad("MaxTemporalSize", f"must be a whole number of {units}s >= 1")
        # SaTScan's m_nIntervalCut: whole intervals within the size (CSaTScanData::SetIntervalCut)
        cut = int(size_v) // length
    elif interp == "0":
        # SaTScan lets a time-stratified analysis's cylinders span the whole study period, and a spatially
        # adjusted one's half of it
        limit = 100 if (v.get("TimeTrendAdjustmentType", "0") == "4" and not name.startswith("space-time")) else 90
        if (v.get("SpatialAdjustmentType", "0") or "0") != "0":
            limit = 50
        if not 0 < size_v <= limit:
            raise bad("MaxTemporalSize", f"must be in (0, {limit}] percent of the study period")
        if starts is None:
            cut = max(1, int(size_v / 100.0 * (int((end - start).astype(int)) + 1)))
        else:
            cut = int(np.floor(np.floor(time_units_in_period(start, end, units) * size_v / 100.0) / length))
    else:
        raise bad("MaxTemporalSizeInterpretation", "must be 0 (percent) or 1 (time units)")
    if cut < 1:
        raise bad("MaxTemporalSize", f"is shorter than one time interval ({length} {units}(s))")
    kwargs["max_temporal"] = cut
    return starts


def _earlier_analyses(v, model, analysis, bad, kwargs, circle: bool) -> None:
    """``AdjustForEarlierAnalyses=y``: ``surveillance_start`` (``ProspectiveStartDate``) of a prospective
    space-time analysis, its circles limited by distance or a max circle size file (``circle``) alone (as
    SaTScan: ``max_population`` None), and with a percentage maximum temporal size each analysis's cut
    (``max_temporal_percent``)."""
    if model not in _SPACE_TIME or analysis != "4":
        raise bad("AdjustForEarlierAnalyses", "is for the prospective space-time analyses (AnalysisType=4)")
    if "max_distance" not in kwargs and not circle:
        raise bad("AdjustForEarlierAnalyses", "needs the maximum circle size as a distance "
                                              "(UseDistanceFromCenterOption=y, MaxSpatialSizeInDistanceFromCenter) or "
                                              "a max circle size file, as SaTScan, whose population at risk then "
                                              "limits no circle")
    if v.get("MaxTemporalSizeInterpretation", "0") == "0":
        # each earlier analysis's longest cylinder a percentage of its own period (whole days, months or
        # years: SaTScan counts the period in time units)
        if (v.get("TimeAggregationLength", "1") or "1") != "1":
            raise bad("AdjustForEarlierAnalyses", "with a percentage maximum temporal size needs "
                                                  "TimeAggregationLength=1")
        kwargs["max_temporal_percent"] = float(v.get("MaxTemporalSize", "50"))
    kwargs["max_population"] = None
    kwargs["surveillance_start"] = _date(v, "ProspectiveStartDate", bad)


def _date(v, key, bad, generic=False):
    """A SaTScan date (YYYY/MM/DD or YYYY/M/D) as numpy datetime64[D] (``generic``: a whole number of
    SaTScan's generic time units, ``PrecisionCaseTimes=4``)."""
    try:
        return parse_time(v.get(key, ""), generic)
    except ValueError:
        raise bad(key, "is not a whole number (generic time units)" if generic else "is not a date YYYY/MM/DD") \
            from None


def run_prm(path, *, n_replicates=None, seed=None, executor=None, backend="auto", threads=None, progress=True,
            write_results=False):
    """Run the analysis a SaTScan parameter file describes: purely spatial Bernoulli, discrete
    Poisson, normal, exponential, ordinal, multinomial or continuous Poisson; space-time permutation,
    Bernoulli, discrete Poisson or exponential; purely temporal or seasonal Poisson or Bernoulli; spatial
    variation in temporal trends (file names relative to the parameter file's folder; covariates of a Poisson
    analysis's .cas/.pop files adjusted for by indirect standardisation).

    Parameters
    ----------
    path : str or Path
        The ``.prm`` file. Supported: ``AnalysisType=1`` (purely spatial), ``ModelType`` 0
        (discrete Poisson) or 1 (Bernoulli), circular or elliptic windows (``SpatialWindowShapeType``,
        ``NonCompactnessPenalty``, ``EllipseShapes``, ``EllipseAngles``), Cartesian or latitude/longitude
        coordinates, ``ScanAreas``, ``MaxSpatialSizeInPopulationAtRisk``, the distance limit, the max circle
        size file (``UseMaxCirclePopulationFileOption``: ``circle_population`` of the scans), a grid file
        (``UseGridFile``: ``centres``),
        ``MonteCarloReps``, ``MinimumCasesInHighRateClusters``, no-overlap secondary clusters, and for the
        discrete Poisson model ``UseAdjustmentsByRRFile`` (:mod:`hphawkes_py.scan.known_risks`); and
        ``ModelType`` 2 (space-time permutation; covariates in the case file and ``AdjustForWeeklyTrends``
        stratify it, :func:`~hphawkes_py.scan.space_time_permutation`'s ``covariates`` and
        ``day_of_week``), 1 (Bernoulli: dated ``.cas`` and ``.ctl`` files,
        run by :func:`~hphawkes_py.scan.space_time` with ``model="bernoulli"``; ``TimeTrendAdjustmentType``
        0 or 4, time-stratified; ``AdjustForWeeklyTrends``) or 0 (discrete Poisson:
        dated ``.cas``, a ``.pop`` file; with one census year per location and no covariates, the
        time-trend adjustments ``TimeTrendAdjustmentType`` 1-5, and ``SpatialAdjustmentType`` 0 or 1
        (stratified randomization, with ``TimeTrendAdjustmentType`` other than 4), ``AdjustForWeeklyTrends``
        (days, not with ``TimeTrendAdjustmentType`` 1 or 4 or a spatial adjustment), ``IncludePurelyTemporal``
        and ``IncludePurelySpatial`` (discrete Poisson and Bernoulli; also the exponential, normal, ordinal and
        multinomial models), ``AdjustForEarlierAnalyses`` (prospective analyses, circles
        limited by distance: ``surveillance_start`` of :func:`~hphawkes_py.scan.space_time`); with several
        census years (every location every year) or covariates in the case and population files,
        SaTScan's expected cases of every location and time interval (see
        :func:`~hphawkes_py.scan.space_time` with ``expected=``);
        ``model="poisson"``) with ``AnalysisType``
        3 (retrospective; ``IncludeClusters`` 0 all or 1 alive clusters) or 4 (prospective, no
        adjustment for earlier analyses), case times in years, months or days (``PrecisionCaseTimes``
        1-3: the records' dates at least that precise, a year read as its January 1 and a month as its
        first day), the study period (``StartDate``/``EndDate``) and the maximum temporal size (time
        intervals or percent of the study period). Any other setting that changes the
        analysis is refused by name, as are a section or a parameter given twice and
        ``MinimumCasesInLowRateClusters`` above 0 when low rates are scanned. As in SaTScan, the
        date of every case (and control) record is checked against ``StartDate``-``EndDate``
        (SaTScan's defaults 2000/1/1-2000/12/31; no dates with ``PrecisionCaseTimes=0``, whose
        records' covariates start at field 3): a record outside is refused
        (``StudyPeriodCheckType=0``, the default) or left out with a warning (1).
        The space-time analyses also run in SaTScan's time intervals
        (``TimeAggregationUnits`` 1 years, 2 months, 3 days; ``TimeAggregationLength``: intervals
        counted back from ``EndDate``, a short first one merged into the next; the maximum temporal
        size in whole intervals), and the clusters' time frames are the days their intervals span.
        ``ModelType`` 5 (normal: ``<id> <#cases> [<date>] <measurement> [<weight>]``, weighted when
        the weights are given) and 4 (exponential: ``<id> <#cases> [<date>] <survival time>
        [<censored 0/1>]``) run the purely spatial scans of :func:`~hphawkes_py.scan.normal` and
        :func:`~hphawkes_py.scan.exponential`. The case, control, population and coordinates files
        may be CSV, dBase or shapefile data sources as SaTScan's GUI describes them
        (``<File>-SourceType``, ``-SourceFieldMap``, ``-SourceDelimiter``, ``-SourceGrouper``,
        ``-SourceSkip``, ``-SourceFirstRowHeader``; see :mod:`hphawkes_py.scan.data_sources`).
        ``ModelType`` 3 (ordinal) and 7 (multinomial) with ``AnalysisType=1``: ``<id> <#cases>
        [<date>] <category>`` records, run by :func:`~hphawkes_py.scan.ordinal` /
        :func:`~hphawkes_py.scan.multinomial`; with ``AnalysisType`` 3 or 4 by
        :func:`~hphawkes_py.scan.space_time_ordinal` / :func:`~hphawkes_py.scan.space_time_multinomial`,
        with 2 or 6 by :func:`~hphawkes_py.scan.temporal_ordinal` /
        :func:`~hphawkes_py.scan.temporal_multinomial`. ``AnalysisType`` 2 (retrospective purely temporal),
        6 (prospective purely temporal) and 7 (seasonal) with ``ModelType`` 0 or 1 run
        :func:`~hphawkes_py.scan.temporal` / :func:`~hphawkes_py.scan.seasonal` on the dated
        records (days; a population file, optional, with one census year per location; no
        coordinates needed; Poisson: the log-linear and log-quadratic time-trend adjustments
        ``TimeTrendAdjustmentType`` 2, 3 and 5, with a population file, as SaTScan);
        ``AnalysisType=5`` with ``ModelType=0`` runs :func:`~hphawkes_py.scan.svtt` (days or generic
        time units, ``PrecisionCaseTimes`` 3 or 4, a linear trend). The settings they read are listed in
        :mod:`hphawkes_py.scan._prm_temporal`; ``write_results`` is refused for them (their result's
        ``clusters`` is the cluster table).
    n_replicates : int, optional
        Overrides the file's ``MonteCarloReps``.
    seed, executor, backend, threads, progress
        As in :func:`~hphawkes_py.scan.bernoulli`.
    write_results : bool or path
        False (default): nothing is written. True: write the files the parameter file's output
        settings ask for, as SaTScan does: the report to ``ResultsFile`` (relative to the
        parameter file's folder) and beside it the tables that
        ``MostLikelyClusterEachCentroid``, ``CensusAreasReportedClusters``,
        ``IncludeRelativeRisksCensusAreas`` and ``SaveSimLLRs`` ask for (``...ASCII=y``: as CSV,
        ``<name>.col.csv``; ``...DBase=y``: ``<name>.col.dbf``), ``OutputGoogleEarthKML`` (lat/long
        data; ``CompressKMLtoKMZ``), ``OutputShapefiles`` (``<name>.col.shp``),
        ``OutputCartesianGraph`` / ``OutputGoogleMaps`` (the self-contained HTML map), with the
        p-values ``PValueReportType`` chooses, ``ReportGumbel`` and ``ResultsTitle``; see
        :func:`hphawkes_py.scan.outputs.write_satscan`; and, when the case file's
        ``CaseFile-SourceLinelistFieldMap`` names line-list columns, SaTScan's cluster line list
        ``<name>.linelist.csv`` (``CutoffClusterLinelistCSV``, ``LineListIndividualCache``; see
        :func:`hphawkes_py.scan.linelist.cluster_linelist`). A path: the same
        files, the report at that path instead of ``ResultsFile``.

    Returns
    -------
    ScanResult, TemporalResult or SVTTResult
        The settings that do not change the analysis (output files, run options) are listed by
        ``hp.scan._prm.prm_arguments(path)["ignored"]``; the output settings are honoured with
        ``write_results``.

    Raises
    ------
    ValueError
        Naming the setting (and its section) or the file, line and field that cannot be honoured;
        with ``write_results``, before any work: no ``ResultsFile``, a results folder that does not
        exist, or an output hp.scan does not write switched on (the cluster case information
        ``.sci``, simulated data; ``OutputTemporalGraphHTML=y`` is said in a warning).
    ImportError
        With ``write_results``: dBase tables or shapefiles asked for without pyogrio and shapely
        (before any work).

    Examples
    --------
    SaTScan's North Humberside sample analysis (purely spatial Bernoulli), with fewer replicates:

    >>> prm = hp.datasets.satscan_sample_path("NHumbersideSpatialBernoulli.prm")
    >>> res = hp.scan.run_prm(prm, n_replicates=99, seed=1, backend="cpu", progress=False)
    >>> top = res.most_likely
    >>> print(res.model, top.n_locations, top.cases, round(top.log_likelihood_ratio, 3))
    bernoulli 4 4 4.837
    """
    spec = prm_arguments(path)
    target = _results_target(spec, write_results, path, _ANALYSIS_NAMES[spec["analysis"]])  # before any work
    res = _run(spec, n_replicates, seed, executor, backend, threads, progress)
    if target is not None:
        _write_results(res, spec, target)
    return res



def _run(spec, n_replicates, seed, executor, backend, threads, progress):
    """The analysis :func:`run_prm` runs for the parameters ``spec`` (:func:`prm_arguments`)."""
    if n_replicates is not None:
        spec["kwargs"]["n_replicates"] = n_replicates
    run = dict(seed=seed, executor=executor, backend=backend, threads=threads, progress=progress)
    return _RUNNERS[spec["model"]](spec, run)


def _neighbor_lists(path) -> tuple:
    """``((path, ids), lists)`` of SaTScan's neighbors file: the locations it names in the order they first
    appear (SaTScan's identifiers), and each record's list, the ids read as :func:`~._satscan.read_satscan`
    reads a coordinates file's (whole numbers where every id is one)."""
    lists = read_neighbors(path)
    keys = list(dict.fromkeys(k for row in lists for k in row))
    as_id = dict(zip(keys, _as_ids(keys)))
    return (getattr(path, "path", path), keys), [[as_id[k] for k in row] for row in lists]


def _run_spatial(spec, run):
    """The purely spatial Bernoulli and discrete Poisson analyses (:func:`run_prm`)."""
    f = spec["files"]
    common = dict(**run, **spec["kwargs"])
    # the records' dates checked against the study period, and the population averaged over it, as
    # SaTScan does
    read = dict(study_period=spec["dates"]["study_period"], out_of_period=spec["dates"]["out_of_period"],
                dated=spec["dates"]["dated"])
    if spec.get("circle") is not None and (spec["iterative"] or spec["power"] or spec["known_risks"] is not None):
        raise ValueError(f"{spec['path']}: UseMaxCirclePopulationFileOption=y is not supported with an iterative scan, "
                         f"a power evaluation or known relative risks")
    if "max_reported_population" in common and (spec["iterative"] or spec["power"] or spec["known_risks"] is not None):
        raise ValueError(f"{spec['path']}: UseReportOnlySmallerClusters=y is not supported with an iterative scan, "
                         f"a power evaluation or known relative risks")
    if common.get("risk_function") == "isotonic" and (spec["iterative"] or spec["power"] or
                                                      spec["known_risks"] is not None):
        raise ValueError(f"{spec['path']}: IsotonicScan=1 is not supported with an iterative scan, a power "
                         f"evaluation or known relative risks")
    placed = spec.get("neighbors") is None
    if not placed:
        if spec["iterative"] or spec["power"] or spec["known_risks"] is not None:
            raise ValueError(f"{spec['path']}: UseNeighborsFile=y is not supported with an iterative scan, a power "
                             f"evaluation or known relative risks")
        read["located"], common["neighbors"] = _neighbor_lists(spec["neighbors"])

    def xy(df):  # without coordinates (a neighbors file), the locations are their ids
        return df[["x", "y"]].to_numpy(float) if placed else None

    if spec["model"] == "bernoulli":
        df = _read_satscan(f["case_file"], f["control_file"], None, f["geo_file"], model="bernoulli",
                           covariates=False, **read)
        args = (xy(df), df["cases"].to_numpy(), df["controls"].to_numpy())
        common.update(circle_rows(spec, df["location_id"].to_numpy()))
        if spec["iterative"]:
            return iterative_scan("bernoulli", *args, location_ids=df["location_id"].to_numpy(), **spec["iterative"],
                                  **common)
        return bernoulli(*args, location_ids=df["location_id"].to_numpy(), **common)
    long = _read_satscan(f["case_file"], None, f["population_file"], f["geo_file"], model="poisson", covariates=True,
                         **read)
    if spec["known_risks"] is not None:
        return poisson_with_known_risks(long, spec["known_risks"], **common)
    if long["category"].nunique() > 1:
        if spec.get("circle") is not None:
            raise ValueError(f"{spec['path']}: UseMaxCirclePopulationFileOption=y is not supported with covariates in "
                             f"the case and population files")
        if spec["power"]:
            raise ValueError(f"{f['case_file']}, {f['population_file']}: PerformPowerEvaluation=y with covariates in "
                             f"the case and population files is not supported (hp.scan.power has no covariate "
                             f"adjustment yet)")
        args = (xy(long), long["cases"].to_numpy(), long["population"].to_numpy())
        cov = dict(covariates=long["category"].to_numpy(), location_ids=long["location_id"].to_numpy())
        if spec["iterative"]:
            return iterative_scan("poisson", *args, **cov, **spec["iterative"], **common)
        return poisson(*args, **cov, **common)
    with warnings.catch_warnings():  # records left out were reported by the first reading
        warnings.simplefilter("ignore")
        df = _read_satscan(f["case_file"], None, f["population_file"], f["geo_file"], model="poisson",
                           covariates=False, **read)
    args = (xy(df), df["cases"].to_numpy(), df["population"].to_numpy())
    common.update(circle_rows(spec, df["location_id"].to_numpy()))
    if spec["power"]:
        return run_prm_power(spec["power"], *args, df["location_id"].to_numpy(), **common)
    if spec["iterative"]:
        return iterative_scan("poisson", *args, location_ids=df["location_id"].to_numpy(), **spec["iterative"],
                              **common)
    return poisson(*args, location_ids=df["location_id"].to_numpy(), **common)


def _run_categorical(spec, run):
    """The ordinal and multinomial analyses (:func:`run_prm`; SaTScan's case files read by
    :mod:`~hphawkes_py.scan.categorical_files`): purely spatial, space-time or purely temporal."""
    from . import categorical_files

    kind = spec["model"].split("_")[0]
    return {"space": categorical_files.run_space_time_categorical, "temporal": categorical_files.run_temporal_categorical
            }.get(kind, categorical_files.run_categorical)(spec, run)


#: analysis -> the function that runs it for run_prm
_RUNNERS = {"space_time_permutation": run_space_time, "space_time_bernoulli": run_space_time,
            "space_time_poisson": run_space_time, "bernoulli": _run_spatial, "poisson": _run_spatial,
            "normal": run_continuous, "exponential": run_continuous,
            "space_time_exponential": run_space_time_exponential, "space_time_normal": run_space_time_normal,
            "temporal_normal": run_temporal_normal, "temporal_exponential": run_temporal_exponential,
            "temporal_poisson": run_temporal,
            "temporal_bernoulli": run_temporal, "seasonal_poisson": run_temporal, "seasonal_bernoulli": run_temporal,
            "svtt": run_svtt, "ordinal": _run_categorical, "multinomial": _run_categorical,
            "space_time_ordinal": _run_categorical, "space_time_multinomial": _run_categorical,
            "temporal_ordinal": _run_categorical, "temporal_multinomial": _run_categorical,
            "continuous_poisson": run_continuous_poisson}
