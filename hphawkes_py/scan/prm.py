"""Run a SaTScan parameter file (``.prm``) unchanged.

A SaTScan user's analysis is a ``.prm`` file (INI sections ``[Input]``, ``[Analysis]``, ...).
:func:`run_prm` reads it, maps every setting that changes the analysis onto the arguments of
:func:`~hphawkes_py.scan.bernoulli`, :func:`~hphawkes_py.scan.poisson` or
:func:`~hphawkes_py.scan.space_time_permutation`, and refuses, by name and line, every setting it
cannot honour: an analysis is never run with a silently different design. Settings that only
shape SaTScan's own output files, GUI and run options (KML, shapefiles, e-mail, graphs,
processors ...), and settings of analyses that are switched off, do not change the clusters: they
are listed in :func:`prm_arguments`'s ``ignored`` (and the result's ``settings`` where it has
them), with a warning when one asks for an output hp.scan does not write.
"""
from __future__ import annotations

import math
import warnings
from pathlib import Path

__all__ = ["run_prm", "read_prm", "prm_arguments", "PrmError"]


class PrmError(ValueError):
    """A parameter file that cannot be run as written (the message names the file, line and key)."""


#: values meaning "off" (an unknown key set to one of these changes nothing and is ignored)
_OFF = {"", "n", "0", "no", "false"}

#: sections that only choose outputs, notifications and run options
_OUTPUT_SECTIONS = {"Output", "Spatial Output", "Temporal Output", "Other Output", "Line List", "Notifications",
                    "Run Options", "System"}
#: sections of analyses that run only when switched on by a key checked in _REQUIRE
_SWITCHED_SECTIONS = {"Power Evaluation", "Power Simulations", "Elliptic Scan", "Cluster Drilldown",
                      "Miscellaneous Analysis", "Border Analysis", "Multiple Data Sets", "Data Checking"}
#: sections that matter only for space-time analyses (purely spatial ones ignore them)
_TEMPORAL_SECTIONS = {"Temporal Window", "Space and Time Adjustments"}

#: key -> the values this implementation honours (SaTScan's defaults: the feature is off)
_REQUIRE = {
    "UseGridFile": _OFF,
    "StudyPeriodCheckType": {"0"},
    "GeographicalCoordinatesCheckType": {"0"},
    "UseLocationsNetworkFile": _OFF,
    "UseNeighborsFile": _OFF,
    "UseMetaLocationsFile": _OFF,
    "MultipleCoordinatesType": {"0"},
    "UseMaxCirclePopulationFileOption": _OFF,
    "IncludePurelyTemporal": _OFF,
    "SpatialWindowShapeType": {"0"},  # circles
    "IsotonicScan": {"0"},
    "RiskLimitHighClusters": _OFF,
    "RiskLimitLowClusters": _OFF,
    "MinimumCasesInLowRateClusters": {"0"},
    "SpatialAdjustmentType": {"0"},
    "UseAdjustmentsByRRFile": _OFF,
    "AdjustForEarlierAnalyses": _OFF,
    "IterativeScan": _OFF,
    "PValueReportType": {"0", "1", "3"},  # default / standard Monte Carlo / Gumbel (both are reported)
    "PerformStandardDrilldown": _OFF,
    "PerformBernoulliDrilldown": _OFF,
    "CalculateOliveira": _OFF,
    "PerformPowerEvaluation": _OFF,
    "SimulatedDataMethodType": {"0"},
    "PrintSimulatedDataToFile": _OFF,
    "MultipleDataSetsPurposeType": {"0"},
    "CriteriaForReportingSecondaryClusters": {"0"},  # no geographical overlap
    "UseReportOnlySmallerClusters": _OFF,
}
#: space-time analyses only
_REQUIRE_TEMPORAL = {
    "IncludePurelySpatial": _OFF,
    "IncludeClusters": {"0"},
    "TimeTrendAdjustmentType": {"0"},
    "AdjustForWeeklyTrends": _OFF,
    "TimeAggregationUnits": {"3"},  # days
    "TimeAggregationLength": {"1"},
}

#: keys read by prm_arguments
_USED = {"CaseFile", "ControlFile", "PopulationFile", "CoordinatesFile", "CoordinatesType", "ModelType",
         "AnalysisType", "ScanAreas", "MaxSpatialSizeInPopulationAtRisk", "UseDistanceFromCenterOption",
         "MaxSpatialSizeInDistanceFromCenter", "MonteCarloReps", "MinimumCasesInHighRateClusters",
         "PrecisionCaseTimes", "StartDate", "EndDate", "MinimumTemporalClusterSize", "MaxTemporalSizeInterpretation",
         "MaxTemporalSize"}
#: keys without effect given the required values above (the file of an option that is off, ...)
_DEPENDENT = {"GridFile", "NeighborsFilename", "MetaLocationsFilename", "MultipleLocationsFile",
              "MaxCirclePopulationFile", "MaxSpatialSizeInMaxCirclePopulationFile", "NonCompactnessPenalty",
              "LocationsNetworkFilename", "RiskThresholdHighClusters", "RiskThresholdLowClusters",
              "RiskLimitHighClustersValue", "RiskLimitLowClustersValue", "AdjustmentsByKnownRelativeRisksFilename",
              "EarlyTerminationThreshold", "ReportGumbel", "ProspectiveStartDate", "IterativeScanMaxIterations",
              "IterativeScanMaxPValue", "IntervalStartRange", "IntervalEndRange", "TimeTrendPercentage",
              "TimeStratifiedAdjLength", "TimeTrendType", "RandomizationSeed", "RandomlyGenerateSeed",
              "PrecisionCaseTimesType", "SatScanVersion"}

_MODELS = {"0": "poisson", "1": "bernoulli", "2": "space-time permutation"}
_MODEL_NAMES = {"0": "Discrete Poisson", "1": "Bernoulli", "2": "Space-Time Permutation", "3": "Ordinal",
                "4": "Exponential", "5": "Normal", "6": "Continuous Poisson", "7": "Multinomial",
                "8": "Rank", "9": "Uniform Time", "10": "Batched"}
_ANALYSES = {"1": "purely spatial", "2": "purely temporal", "3": "retrospective space-time",
             "4": "prospective space-time", "5": "spatial variation in temporal trends",
             "6": "prospective purely temporal", "7": "seasonal temporal"}
_DIRECTIONS = {"1": "high", "2": "low", "3": "both"}
#: output options whose "y" asks for a file hp.scan does not write (warned about)
_QUIET_OUTPUTS = {"ReportHierarchicalClusters"}


def read_prm(path) -> dict:
    """Parse a ``.prm`` file: ``{"path", "values", "section_of", "line_of"}`` (keys as written).

    Comments start with ';' or '#'. A line that is neither ``[Section]`` nor ``Key=value`` is a
    :class:`PrmError` naming the file and line.
    """
    p = Path(path)
    if p.is_dir():
        raise IsADirectoryError(f"parameter file {p} is a folder, expected a .prm file")
    if not p.is_file():
        raise FileNotFoundError(f"parameter file not found: {p}")
    values, section_of, line_of = {}, {}, {}
    section = None
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise PrmError(f"{p}: not a readable SaTScan parameter file (not UTF-8 text: {exc.reason})") from None
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith((";", "#")):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
            continue
        if "=" not in line or section is None:
            raise PrmError(f"{p}:{lineno}: not a readable SaTScan parameter file: expected 'Key=value' "
                           f"inside a [Section], got {line!r}")
        key, value = line.split("=", 1)
        key = key.strip()
        values[key] = value.strip()
        section_of[key] = section
        line_of[key] = lineno
    if not values:
        raise PrmError(f"{p}: no parameters found")
    return {"path": p, "values": values, "section_of": section_of, "line_of": line_of}


def prm_arguments(path) -> dict:
    """The analysis a parameter file describes: ``{"model", "files", "kwargs", "ignored"}``.

    ``model`` is ``"bernoulli"``, ``"poisson"`` or ``"space-time permutation"``; ``kwargs`` are the
    arguments of the matching ``hp.scan`` function; ``ignored`` maps the keys that do not change the
    analysis to their values. Raises :class:`PrmError` (file:line: [Section] Key=value: why) for
    every setting that cannot be honoured.
    """
    prm = read_prm(path)
    p, v, sec, line = prm["path"], prm["values"], prm["section_of"], prm["line_of"]

    def bad(key, why):
        where = f"{p}:{line[key]}" if key in line else str(p)
        return PrmError(f"{where}: [{sec.get(key, '?')}] {key}={v.get(key, '')}: {why}")

    model_code = v.get("ModelType", "0")
    if model_code not in _MODELS:
        raise bad("ModelType", f"({_MODEL_NAMES.get(model_code, 'unknown')}) is not supported: 0 (discrete "
                               f"Poisson), 1 (Bernoulli) or 2 (space-time permutation)")
    model = _MODELS[model_code]
    analysis = v.get("AnalysisType", "1")
    temporal = model == "space-time permutation"
    if temporal and analysis not in ("3", "4"):
        raise bad("AnalysisType", "the space-time permutation model needs 3 (retrospective) or 4 (prospective)")
    if not temporal and analysis != "1":
        raise bad("AnalysisType", f"({_ANALYSES.get(analysis, 'unknown')}) is not supported for the {model} model: "
                                  f"1 (purely spatial)")
    required = dict(_REQUIRE, **(_REQUIRE_TEMPORAL if temporal else {}))
    for key, allowed in required.items():
        if key in v and v[key].lower() not in allowed:
            raise bad(key, f"not supported (hp.scan honours only {sorted(a for a in allowed if a) or 'off'})")

    ignored, asked = {}, []
    for key, val in v.items():
        if key in _USED or key in required:
            continue
        s = sec[key]
        if s in _OUTPUT_SECTIONS:
            ignored[key] = val
            if val.lower() == "y" and key not in _QUIET_OUTPUTS:
                asked.append(key)
            continue
        if key in _DEPENDENT or s in _SWITCHED_SECTIONS or (not temporal and (s in _TEMPORAL_SECTIONS or key in
                                                                             _REQUIRE_TEMPORAL)):
            ignored[key] = val
            continue
        if s == "Input" and key[-1].isdigit():
            raise bad(key, "several data sets are not supported")
        if val.lower() in _OFF:
            ignored[key] = val
            continue
        raise bad(key, "is not a parameter hp.scan knows; refused rather than ignored (remove it or set it off)")
    if asked:
        warnings.warn(f"{p}: SaTScan output options not written by hp.scan: {', '.join(asked)}", stacklevel=3)

    base = p.resolve().parent

    def file(key, required=True):
        name = v.get(key, "")
        if not name:
            if required:
                raise PrmError(f"{p}: [Input] {key} is required for the {model} model")
            return None
        f = Path(name)
        f = f if f.is_absolute() else base / f  # relative to the parameter file's folder, as SaTScan
        if not f.is_file():
            raise bad(key, f"names a file that does not exist ({f})")
        return f

    def number(key, default, *, whole=False, low=0.0, high=math.inf, low_open=False):
        if key not in v:
            return default
        try:
            x = float(v[key])
        except ValueError:
            raise bad(key, "not a number") from None
        if not math.isfinite(x) or x < low or x > high or (low_open and x == low) or (whole and x != round(x)):
            rng = f"{'(' if low_open else '['}{low:g}, {high:g}]"
            raise bad(key, f"must be {'a whole number ' if whole else ''}in {rng}")
        return int(x) if whole else x

    ctype = v.get("CoordinatesType", "0")
    if ctype not in ("0", "1"):
        raise bad("CoordinatesType", "must be 0 (Cartesian) or 1 (latitude/longitude)")
    direction = _DIRECTIONS.get(v.get("ScanAreas", "1"))
    if direction is None:
        raise bad("ScanAreas", "must be 1 (high), 2 (low) or 3 (both)")
    kwargs: dict = {"distance": "great_circle" if ctype == "1" else "euclidean"}
    if v.get("UseDistanceFromCenterOption", "n").lower() not in _OFF:
        if "MaxSpatialSizeInDistanceFromCenter" not in v:
            raise bad("UseDistanceFromCenterOption", "needs MaxSpatialSizeInDistanceFromCenter")
        kwargs["max_distance"] = number("MaxSpatialSizeInDistanceFromCenter", None, low=0.0, low_open=True)
    pct = number("MaxSpatialSizeInPopulationAtRisk", 50.0, low=0.0, high=50.0, low_open=True)
    reps = number("MonteCarloReps", 999, whole=True, low=0 if temporal else 1, high=1e7)
    min_cases = number("MinimumCasesInHighRateClusters", None, whole=True)

    files = {"case_file": file("CaseFile"), "geo_file": file("CoordinatesFile")}
    if temporal:
        if direction != "high":
            raise bad("ScanAreas", "the space-time permutation model scans for high rates only (1)")
        if v.get("PrecisionCaseTimes", "3") != "3":
            raise bad("PrecisionCaseTimes", "the space-time permutation scan needs case dates to the day (3)")
        kwargs.update(max_spatial_fraction=pct / 100.0, prospective=analysis == "4",
                      min_temporal_days=number("MinimumTemporalClusterSize", 1, whole=True, low=1),
                      min_cases=2 if min_cases is None else min_cases, n_replicates=reps)
        max_t = number("MaxTemporalSize", 50.0, low=0.0, low_open=True)
        if v.get("MaxTemporalSizeInterpretation", "0") == "1":
            if max_t != round(max_t):
                raise bad("MaxTemporalSize", "must be a whole number of days")
            kwargs["max_temporal_days"] = int(max_t)
        elif v.get("MaxTemporalSizeInterpretation", "0") == "0":
            kwargs["max_temporal_fraction"] = max_t / 100.0
        else:
            raise bad("MaxTemporalSizeInterpretation", "must be 0 (% of the study period) or 1 (days)")
        for key, name in (("StartDate", "study_start"), ("EndDate", "study_end")):
            if key in v:
                kwargs[name] = _date(v[key], lambda why, key=key: bad(key, why))
    else:
        kwargs.update(direction=direction, max_population=pct / 100.0, n_replicates=reps)
        if min_cases is not None:
            kwargs["min_cases"] = min_cases
        elif model == "poisson":
            kwargs["min_cases"] = 0  # parameter files from before SaTScan 9.5 had no such restriction
        extra = _extra_case_fields(files["case_file"])
        if v.get("PrecisionCaseTimes", "0") == "0" and extra:
            raise bad("PrecisionCaseTimes", f"with no case times SaTScan reads the fields after the count in "
                                            f"{files['case_file'].name} as covariates; give the time precision "
                                            f"of the date field (1 = year, 3 = day)")
        if model == "bernoulli":
            files["control_file"] = file("ControlFile")
            if v.get("PopulationFile"):
                raise bad("PopulationFile", "is not used by the Bernoulli model (give ControlFile only)")
        else:
            files["population_file"] = file("PopulationFile")
            if v.get("ControlFile"):
                raise bad("ControlFile", "is not used by the discrete Poisson model (give PopulationFile only)")
    return {"model": model, "files": files, "kwargs": kwargs, "ignored": ignored}


def run_prm(path, *, n_replicates=None, seed=None, executor=None, backend="auto", threads=None, progress=True):
    """Run the analysis a SaTScan parameter file describes.

    Supported: purely spatial Bernoulli (``ModelType=1``) and discrete Poisson (``ModelType=0``,
    covariates of the .cas/.pop files adjusted for by indirect standardisation) with circular
    windows, and the space-time permutation model (``ModelType=2``, retrospective or prospective,
    days); Cartesian or latitude/longitude coordinates; ``ScanAreas``, the % of the population at
    risk, the distance limit, ``MonteCarloReps``, ``MinimumCasesInHighRateClusters``, temporal
    window limits, no-overlap secondary clusters. File names are resolved from the parameter
    file's folder. Every other setting that changes the analysis is refused (:class:`PrmError`
    naming the file, line and key).

    Parameters
    ----------
    path : str or Path
        The ``.prm`` file.
    n_replicates : int, optional
        Overrides the file's ``MonteCarloReps`` (e.g. fewer replicates for a quick look).
    seed, executor, backend, threads, progress
        As everywhere in hphawkes_py.

    Returns
    -------
    ScanResult or SpaceTimeScanResult
    """
    from ._satscan import read_satscan
    from .model import bernoulli, poisson
    from .spacetime import read_satscan_spacetime, space_time_permutation

    spec = prm_arguments(path)
    kw = dict(spec["kwargs"])
    if n_replicates is not None:
        kw["n_replicates"] = n_replicates
    f = spec["files"]
    common = dict(seed=seed, executor=executor, backend=backend, threads=threads, progress=progress, **kw)
    if spec["model"] == "space-time permutation":
        df = read_satscan_spacetime(f["case_file"], f["geo_file"])
        res = space_time_permutation(df[["a", "b"]].to_numpy(), df["cases"], df["date"],
                                     location_ids=df["location_id"], **common)
        res.settings["prm"] = str(path)
        res.settings["prm_ignored"] = sorted(spec["ignored"])
        return res
    if spec["model"] == "bernoulli":
        df = read_satscan(f["case_file"], control_file=f["control_file"], geo_file=f["geo_file"])
        return bernoulli(df[["x", "y"]].to_numpy(float), df["cases"].to_numpy(), df["controls"].to_numpy(),
                         location_ids=df["location_id"].to_numpy(), **common)
    long = read_satscan(f["case_file"], population_file=f["population_file"], geo_file=f["geo_file"],
                        model="poisson", covariates=True)
    if long["category"].nunique() > 1:
        return poisson(long[["x", "y"]].to_numpy(float), long["cases"].to_numpy(), long["population"].to_numpy(),
                       covariates=long["category"].to_numpy(), location_ids=long["location_id"].to_numpy(), **common)
    df = read_satscan(f["case_file"], population_file=f["population_file"], geo_file=f["geo_file"], model="poisson")
    return poisson(df[["x", "y"]].to_numpy(float), df["cases"].to_numpy(), df["population"].to_numpy(),
                   location_ids=df["location_id"].to_numpy(), **common)


def _date(text: str, fail):
    import pandas as pd

    try:
        return pd.Timestamp(text.replace("/", "-"))
    except ValueError:
        raise fail("not a date (YYYY/MM/DD)") from None


def _extra_case_fields(case_file) -> int:
    """Number of fields after ``<id> <count>`` on the first record of a case file."""
    with open(case_file, encoding="utf-8", errors="replace") as fh:
        for row in fh:
            parts = row.split()
            if parts and not parts[0].startswith(("#", "//")):
                return max(0, len(parts) - 2)
    return 0
