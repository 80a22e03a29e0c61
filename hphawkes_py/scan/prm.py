"""Run a SaTScan parameter file (``.prm``) unchanged.

A SaTScan user's analysis is a ``.prm`` file (INI sections ``[Input]``, ``[Analysis]``, ...).
:func:`run_prm` reads it, maps every setting that changes the analysis onto the arguments of
:func:`~hphawkes_py.scan.bernoulli`, :func:`~hphawkes_py.scan.poisson` or
:func:`~hphawkes_py.scan.space_time_permutation`, and refuses, by name, every setting it cannot
honour: an analysis is never run with a silently different design. Settings that only shape
SaTScan's own output files and GUI (KML, shapefiles, e-mail, graphs ...) are listed in the
result's ``settings["prm_not_applied"]``, with a warning when they ask for an output.
"""
from __future__ import annotations

import inspect
import warnings
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["run_prm", "read_prm", "PrmError"]


class PrmError(ValueError):
    """A parameter file that cannot be run as written (the message names the file, line and key)."""


#: Sections that only concern SaTScan's output files, GUI, notifications and run options.
OUTPUT_SECTIONS = {"Output", "Spatial Output", "Temporal Output", "Other Output", "Line List", "Notifications",
                   "Run Options", "System"}

#: Analysis settings that must keep SaTScan's default ("off") value: each changes the design in a
#: way our engines do not implement.
MUST_BE = {
    ("Input", "UseGridFile"): "n",
    ("Data Checking", "StudyPeriodCheckType"): "0",
    ("Data Checking", "GeographicalCoordinatesCheckType"): "0",
    ("Locations Network", "UseLocationsNetworkFile"): "n",
    ("Spatial Neighbors", "UseNeighborsFile"): "n",
    ("Spatial Neighbors", "UseMetaLocationsFile"): "n",
    ("Spatial Neighbors", "MultipleCoordinatesType"): "0",
    ("Spatial Window", "UseMaxCirclePopulationFileOption"): "n",
    ("Spatial Window", "IncludePurelyTemporal"): "n",
    ("Spatial Window", "SpatialWindowShapeType"): "0",
    ("Spatial Window", "IsotonicScan"): "0",
    ("Temporal Window", "IncludePurelySpatial"): "n",
    ("Temporal Window", "IncludeClusters"): "0",
    ("Cluster Restrictions", "RiskLimitHighClusters"): "n",
    ("Cluster Restrictions", "RiskLimitLowClusters"): "n",
    ("Cluster Restrictions", "MinimumCasesInLowRateClusters"): "0",
    ("Space and Time Adjustments", "TimeTrendAdjustmentType"): "0",
    ("Space and Time Adjustments", "AdjustForWeeklyTrends"): "n",
    ("Space and Time Adjustments", "SpatialAdjustmentType"): "0",
    ("Space and Time Adjustments", "UseAdjustmentsByRRFile"): "n",
    ("Inference", "AdjustForEarlierAnalyses"): "n",
    ("Inference", "IterativeScan"): "n",
    ("Cluster Drilldown", "PerformStandardDrilldown"): "n",
    ("Cluster Drilldown", "PerformBernoulliDrilldown"): "n",
    ("Miscellaneous Analysis", "CalculateOliveira"): "n",
    ("Power Evaluation", "PerformPowerEvaluation"): "n",
    ("Power Simulations", "SimulatedDataMethodType"): "0",
    ("Power Simulations", "PrintSimulatedDataToFile"): "n",
    ("Multiple Data Sets", "MultipleDataSetsPurposeType"): "0",
}

#: Settings read by :func:`run_prm` (values checked there).
HANDLED = {
    ("Input", k) for k in ("CaseFile", "ControlFile", "PopulationFile", "CoordinatesFile", "StartDate", "EndDate",
                           "CoordinatesType", "PrecisionCaseTimes")
} | {
    ("Analysis", k) for k in ("AnalysisType", "ModelType", "ScanAreas", "TimeAggregationUnits",
                              "TimeAggregationLength")
} | {
    ("Spatial Window", k) for k in ("MaxSpatialSizeInPopulationAtRisk", "UseDistanceFromCenterOption",
                                    "MaxSpatialSizeInDistanceFromCenter")
} | {
    ("Temporal Window", k) for k in ("MinimumTemporalClusterSize", "MaxTemporalSizeInterpretation",
                                     "MaxTemporalSize")
} | {("Cluster Restrictions", "MinimumCasesInHighRateClusters"), ("Inference", "MonteCarloReps"),
     ("Inference", "PValueReportType"), ("Spatial Output", "CriteriaForReportingSecondaryClusters")}

#: Settings without effect given the MUST_BE values above (e.g. the file of an option that is off).
DEPENDENT = {
    ("Input", "GridFile"), ("Multiple Data Sets", "DataSet1-Name"), ("Locations Network", "LocationsNetworkFilename"),
    ("Spatial Neighbors", "NeighborsFilename"), ("Spatial Neighbors", "MetaLocationsFilename"),
    ("Spatial Neighbors", "MultipleLocationsFile"), ("Spatial Window", "MaxSpatialSizeInMaxCirclePopulationFile"),
    ("Spatial Window", "MaxCirclePopulationFile"), ("Spatial Window", "NonCompactnessPenalty"),
    ("Temporal Window", "IntervalStartRange"), ("Temporal Window", "IntervalEndRange"),
    ("Cluster Restrictions", "RiskThresholdHighClusters"), ("Cluster Restrictions", "RiskThresholdLowClusters"),
    ("Space and Time Adjustments", "TimeTrendPercentage"), ("Space and Time Adjustments", "TimeStratifiedAdjLength"),
    ("Space and Time Adjustments", "TimeTrendType"),
    ("Space and Time Adjustments", "AdjustmentsByKnownRelativeRisksFilename"),
    ("Inference", "EarlyTerminationThreshold"), ("Inference", "ReportGumbel"), ("Inference", "ProspectiveStartDate"),
    ("Inference", "IterativeScanMaxIterations"), ("Inference", "IterativeScanMaxPValue"),
    ("Elliptic Scan", "EllipseShapes"), ("Elliptic Scan", "EllipseAngles"),
    ("Power Simulations", "SimulatedDataInputFilename"), ("Power Simulations", "SimulatedDataOutputFilename"),
}
DEPENDENT |= {("Cluster Drilldown", k) for k in ("DrilldownMinimumClusterLocations", "DrilldownMinimumClusterCases",
                                                  "DrilldownClusterCutoff")}
DEPENDENT |= {("Miscellaneous Analysis", k) for k in ("NumBootstrapReplications", "OliveiraPvalueCutoff",
                                                      "ProspectiveFrequencyType", "ProspectiveFrequency")}
DEPENDENT |= {("Power Evaluation", k) for k in (
    "PowerEvaluationsMethod", "PowerEvaluationTotalCases", "CriticalValueType", "CriticalValue05", "CriticalValue01",
    "CriticalValue001", "PowerEstimationType", "NumberPowerReplications", "AlternativeHypothesisFilename",
    "PowerEvaluationsSimulationMethod", "PowerEvaluationsSimulationSourceFilename",
    "ReportPowerEvaluationSimulationData", "PowerEvaluationsSimulationOutputFilename")}

MODELS = {"0": "poisson", "1": "bernoulli", "2": "space-time permutation"}
ANALYSES = {"1": "purely spatial", "2": "purely temporal", "3": "retrospective space-time",
            "4": "prospective space-time", "5": "spatial variation in temporal trends",
            "6": "prospective purely temporal", "7": "seasonal temporal"}


def read_prm(path) -> dict:
    """Parse a ``.prm`` file into ``{(section, key): (value, line_number)}``; comments start with ';'."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"parameter file not found: {p}")
    out: dict = {}
    section = None
    with open(p, encoding="utf-8", errors="replace", newline=None) as fh:
        for lineno, raw in enumerate(fh, 1):
            line = raw.strip()
            if not line or line.startswith(";"):
                continue
            if line.startswith("[") and line.endswith("]"):
                section = line[1:-1].strip()
                continue
            if "=" not in line:
                raise PrmError(f"{p}:{lineno}: expected 'Key=value' or '[Section]', got {line!r}")
            if section is None:
                raise PrmError(f"{p}:{lineno}: {line!r} comes before any [Section]")
            key, value = line.split("=", 1)
            out[(section, key.strip())] = (value.strip(), lineno)
    if not out:
        raise PrmError(f"{p} holds no parameters")
    return out


def run_prm(path, *, n_replicates=None, backend="auto", threads=None, seed=None, executor=None, progress=True):
    """Run the analysis a SaTScan parameter file describes.

    Relative file names in the file are resolved from the parameter file's folder, as SaTScan does.
    Supported: purely spatial Bernoulli (``ModelType=1``) and discrete Poisson (``ModelType=0``,
    when :func:`hphawkes_py.scan.poisson` is available) with circular windows, and the space-time
    permutation model (``ModelType=2``, retrospective or prospective, days). Every setting that
    changes the analysis and is not implemented is refused by name (:class:`PrmError` naming the
    file, line and key).

    Parameters
    ----------
    path : str or path
        The ``.prm`` file.
    n_replicates : int, optional
        Overrides ``MonteCarloReps`` (e.g. fewer replicates for a quick look).
    backend, threads, seed, executor, progress
        As everywhere in hphawkes_py.

    Returns
    -------
    ScanResult or SpaceTimeScanResult
        With ``settings["prm"]`` (the file) and ``settings["prm_not_applied"]`` (output-only keys).
    """
    from . import spacetime

    p = Path(path)
    prm = read_prm(p)
    folder = p.resolve().parent

    def get(section, key, default=None):
        return prm.get((section, key), (default, None))[0]

    def refuse(section, key, why):
        value, line = prm[(section, key)]
        raise PrmError(f"{p}:{line}: [{section}] {key}={value}: {why}")

    not_applied, asked = [], []
    for (section, key), (value, _line) in prm.items():
        if (section, key) in HANDLED or (section, key) in DEPENDENT:
            continue
        if (section, key) in MUST_BE:
            if value.lower() != MUST_BE[(section, key)]:
                refuse(section, key, f"not supported (only {MUST_BE[(section, key)]!r}, SaTScan's default)")
            continue
        if section in OUTPUT_SECTIONS:
            not_applied.append(f"[{section}] {key}")
            if value.lower() == "y" and key not in ("ReportHierarchicalClusters",):
                asked.append(key)
            continue
        if section == "Multiple Data Sets" and key.startswith("DataSet"):
            refuse(section, key, "several data sets are not supported")
        if section == "Input" and key[-1].isdigit():
            refuse(section, key, "several data sets are not supported")
        refuse(section, key, "unknown to hphawkes_py's SaTScan reader, so it cannot be honoured")
    if asked:
        warnings.warn(f"{p}: SaTScan output options not written by hphawkes_py: {', '.join(asked)}", stacklevel=2)

    model = MODELS.get(get("Analysis", "ModelType", "0"))
    if model is None:
        refuse("Analysis", "ModelType", "only 0 (discrete Poisson), 1 (Bernoulli) and 2 (space-time permutation)")
    analysis = get("Analysis", "AnalysisType", "1")
    if model == "space-time permutation":
        if analysis not in ("3", "4"):
            refuse("Analysis", "AnalysisType", "the space-time permutation model needs 3 (retrospective) or 4 (prospective)")
    elif analysis != "1":
        refuse("Analysis", "AnalysisType", f"the {model} model is supported purely spatial (1) only, "
                                           f"not {ANALYSES.get(analysis, analysis)}")
    areas = get("Analysis", "ScanAreas", "1")
    direction = {"1": "high", "2": "low", "3": "both"}.get(areas)
    if direction is None:
        refuse("Analysis", "ScanAreas", "must be 1 (high), 2 (low) or 3 (both)")
    if get("Spatial Output", "CriteriaForReportingSecondaryClusters", "0") != "0":
        refuse("Spatial Output", "CriteriaForReportingSecondaryClusters",
               "only 0 (no geographical overlap) is supported")
    if get("Inference", "PValueReportType", "0") not in ("0", "1"):
        refuse("Inference", "PValueReportType", "only 0 (default) and 1 (standard Monte Carlo) are supported")
    reps_in_file = int(_number(prm, p, "Inference", "MonteCarloReps", 999))  # checked even when overridden
    reps = reps_in_file if n_replicates is None else n_replicates
    frac = _number(prm, p, "Spatial Window", "MaxSpatialSizeInPopulationAtRisk", 50) / 100.0
    max_distance = None
    if get("Spatial Window", "UseDistanceFromCenterOption", "n").lower() == "y":
        max_distance = _number(prm, p, "Spatial Window", "MaxSpatialSizeInDistanceFromCenter", None)
    latlong = get("Input", "CoordinatesType", "0") == "1"
    min_cases = int(_number(prm, p, "Cluster Restrictions", "MinimumCasesInHighRateClusters", 2))

    def file(key, required=True):
        name = get("Input", key, "")
        if not name:
            if required:
                raise PrmError(f"{p}: [Input] {key} is required for the {model} model")
            return None
        f = Path(name)
        f = f if f.is_absolute() else folder / f
        if not f.is_file():
            _value, line = prm[("Input", key)]
            raise PrmError(f"{p}:{line}: [Input] {key}={name}: file not found ({f})")
        return f

    common = dict(backend=backend, threads=threads, seed=seed, executor=executor, progress=progress)
    if model == "space-time permutation":
        if direction != "high":
            refuse("Analysis", "ScanAreas", "the space-time permutation model scans for high rates only (1)")
        if get("Analysis", "TimeAggregationUnits", "3") != "3" or get("Analysis", "TimeAggregationLength", "1") != "1":
            refuse("Analysis", "TimeAggregationUnits", "only daily time aggregation (units 3, length 1) is supported")
        df = spacetime.read_satscan_spacetime(file("CaseFile"), file("CoordinatesFile"))
        interp = get("Temporal Window", "MaxTemporalSizeInterpretation", "0")
        max_t = _number(prm, p, "Temporal Window", "MaxTemporalSize", 50)
        temporal = (dict(max_temporal_days=int(max_t)) if interp == "1"
                    else dict(max_temporal_fraction=max_t / 100.0))
        result = spacetime.space_time_permutation(
            df[["a", "b"]].to_numpy(), df["cases"], df["date"], location_ids=df["location_id"],
            distance="great_circle" if latlong else "euclidean", max_distance=max_distance,
            max_spatial_fraction=frac, min_temporal_days=int(_number(prm, p, "Temporal Window",
                                                                     "MinimumTemporalClusterSize", 1)),
            prospective=analysis == "4", study_start=_date(prm, p, "StartDate"), study_end=_date(prm, p, "EndDate"),
            min_cases=min_cases, n_replicates=reps, **temporal, **common)
    else:
        from . import _satscan

        if latlong:
            refuse("Input", "CoordinatesType", f"latitude/longitude coordinates are supported for the space-time "
                                               f"permutation model; project them for the {model} model")
        fn = _model_function(model)
        params = inspect.signature(fn).parameters
        kwargs: dict[str, Any] = dict(n_replicates=reps, **common)
        if "direction" in params:
            kwargs["direction"] = direction
        elif direction != "high":
            refuse("Analysis", "ScanAreas", f"the {model} scan here looks for high rates only")
        if "max_population" in params:
            kwargs["max_population"] = frac
        if max_distance is not None:
            if "max_distance" not in params:
                refuse("Spatial Window", "UseDistanceFromCenterOption", "a maximum radius is not supported here")
            kwargs["max_distance"] = max_distance
        if "min_cases" in params:
            kwargs["min_cases"] = min_cases
        elif min_cases > 1 and ("Cluster Restrictions", "MinimumCasesInHighRateClusters") in prm:
            refuse("Cluster Restrictions", "MinimumCasesInHighRateClusters",
                   f"the {model} scan here has no minimum number of cases")
        if model == "bernoulli":
            tab = _satscan.read_satscan(file("CaseFile"), file("ControlFile", required=False),
                                        file("PopulationFile", required=False), file("CoordinatesFile"))
            result = fn(tab[["x", "y"]].to_numpy(), tab["cases"], tab["controls"],
                        location_ids=tab["location_id"].to_numpy(), **kwargs)
        else:
            cas = file("CaseFile")
            extra = _extra_case_fields(cas)
            if get("Input", "PrecisionCaseTimes", "0") == "0" and extra:
                refuse("Input", "PrecisionCaseTimes", f"with no case times SaTScan reads the fields after the "
                                                      f"count in {cas.name} as covariates; give the time precision "
                                                      f"of the date field (1 = year, 3 = day)")
            covariates = extra > 1  # fields after the date are covariate categories
            tab = _satscan.read_satscan(cas, None, file("PopulationFile"), file("CoordinatesFile"), model="poisson",
                                        covariates=covariates)
            if covariates:  # rows are location x covariate category: ids repeat, positions are reported
                kwargs["covariates"] = tab["category"].to_numpy()
            else:
                kwargs["location_ids"] = tab["location_id"].to_numpy()
            result = fn(tab[["x", "y"]].to_numpy(), tab["cases"].to_numpy(), tab["population"].to_numpy(), **kwargs)
    settings = getattr(result, "settings", None)
    if isinstance(settings, dict):
        settings["prm"] = str(p)
        settings["prm_not_applied"] = not_applied
    return result


def _extra_case_fields(case_file) -> int:
    """Number of fields after ``<id> <count>`` on the first record of a case file."""
    with open(case_file, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            parts = line.split()
            if parts and not parts[0].startswith(("#", "//")):
                return max(0, len(parts) - 2)
    return 0


def _model_function(model: str):
    from . import model as scan_model

    if model == "bernoulli":
        return scan_model.bernoulli
    fn = getattr(__import__("hphawkes_py.scan", fromlist=["poisson"]), "poisson", None)
    if fn is None:
        raise PrmError("the discrete Poisson model (ModelType=0) is not available in this version")
    return fn


def _number(prm, p, section, key, default):
    if (section, key) not in prm:
        if default is None:
            raise PrmError(f"{p}: [{section}] {key} is required")
        return float(default)
    value, line = prm[(section, key)]
    try:
        v = float(value)
    except ValueError:
        raise PrmError(f"{p}:{line}: [{section}] {key}={value}: not a number") from None
    if not np.isfinite(v) or v < 0:
        raise PrmError(f"{p}:{line}: [{section}] {key}={value}: must be a finite non-negative number")
    return v


def _date(prm, p, key):
    if ("Input", key) not in prm:
        return None
    value, line = prm[("Input", key)]
    import pandas as pd

    try:
        return pd.Timestamp(value.replace("/", "-"))
    except ValueError:
        raise PrmError(f"{p}:{line}: [Input] {key}={value}: not a date (YYYY/MM/DD)") from None
