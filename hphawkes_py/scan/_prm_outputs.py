"""SaTScan parameter files' output settings (:func:`~hphawkes_py.scan.run_prm` with
``write_results``): which files the ``.prm`` asks for, checked before the analysis runs, and
written after it by :func:`~hphawkes_py.scan.outputs.write_satscan` and, for a case file with
line-list columns, :func:`~hphawkes_py.scan.linelist.prm_linelist`.

The table settings ``MostLikelyClusterEachCentroid``, ``CensusAreasReportedClusters``,
``IncludeRelativeRisksCensusAreas`` and ``SaveSimLLRs`` (``...ASCII``: CSV, ``...DBase``: dBase)
choose SaTScan's ``.col``, ``.gis``, ``.rr`` and ``.llr`` tables; ``OutputGoogleEarthKML``
(``CompressKMLtoKMZ``), ``OutputShapefiles``, ``OutputCartesianGraph`` / ``OutputGoogleMaps`` the
cluster geometry; ``PValueReportType``, ``ReportGumbel`` and ``ResultsTitle`` the report. Outputs
hp.scan does not write (the cluster case information ``.sci``, simulated data) are refused by name
when the outputs are written; those SaTScan itself leaves out (KML for Cartesian data, the
risk-estimates file of the ordinal and multinomial models) are left out with a note.
"""
from __future__ import annotations

import warnings
from pathlib import Path

from .data_sources import DataSource
from ._prm_temporal import TEMPORAL_MODELS

#: SaTScan's values of a yes/no setting that is switched off
_OFF = {"", "n", "0", "no", "false"}
#: output settings -> the table they ask for (ASCII: written as CSV; DBase: as .dbf)
_TABLE_KEYS = {"MostLikelyClusterEachCentroid": "col", "CensusAreasReportedClusters": "gis",
               "IncludeRelativeRisksCensusAreas": "rr", "SaveSimLLRs": "llr"}
#: output settings whose files hp.scan does not write: refused (by name) when the outputs are written
_NOT_WRITTEN = {"MostLikelyClusterCaseInfoEachCentroidASCII": "the cluster case information file (.sci)",
                "MostLikelyClusterCaseInfoEachCentroidDBase": "the cluster case information file (.sci.dbf)",
                "PrintSimulatedDataToFile": "the simulated data file"}


def _on(v, key) -> bool:
    return (v.get(key, "n") or "n").lower() not in _OFF


def _output_settings(v, base, bad, model=None) -> dict:
    """The files the .prm's output settings ask for, as :func:`~.outputs.write_satscan` writes
    them: ``{"results_file", "tables", "dbase", "dbase_tables", "geometry", "gumbel", "p_values",
    "title", "notes", "not_written"}`` (``tables``: written as CSV; ``dbase_tables``: as dBase)
    (``results_file``: the ``ResultsFile`` path, relative to the .prm's folder, or None;
    ``not_written``: the settings asking for files hp.scan does not write, refused when writing)."""
    name = v.get("ResultsFile", "")
    results = None
    if name:
        f = Path(name)
        results = f if f.is_absolute() else base / f
    ascii_ = [t for k, t in _TABLE_KEYS.items() if _on(v, k + "ASCII")]
    dbf = [t for k, t in _TABLE_KEYS.items() if _on(v, k + "DBase")]
    geometry = []
    latlong = v.get("CoordinatesType", "0") == "1"
    notes = []
    if model in ("ordinal", "multinomial") and "rr" in ascii_ + dbf:  # as SaTScan, which disables the option
        ascii_ = [t for t in ascii_ if t != "rr"]
        dbf = [t for t in dbf if t != "rr"]
        notes.append(f"IncludeRelativeRisksCensusAreas: the risk-estimates file is not written for the {model} "
                     f"model (as SaTScan, which disables the option)")
    if _on(v, "OutputGoogleEarthKML") and latlong:  # SaTScan writes KML for lat/long data only
        geometry.append("kmz" if _on(v, "CompressKMLtoKMZ") else "kml")
    elif _on(v, "OutputGoogleEarthKML"):
        notes.append("OutputGoogleEarthKML=y: no KML is written for Cartesian coordinates (as SaTScan, which "
                     "switches it off)")
    if _on(v, "OutputShapefiles"):
        geometry.append("shp")
    if _on(v, "OutputTemporalGraphHTML"):  # SaTScan's GUI asks for it by default; it holds no new numbers
        notes.append("OutputTemporalGraphHTML=y: the temporal graph is not written by hp.scan (the cluster table "
                     "holds each cluster's time frame)")
    if (_on(v, "OutputCartesianGraph") and not latlong) or (_on(v, "OutputGoogleMaps") and latlong):
        geometry.append("html")
    if geometry and _on(v, "UseNeighborsFile"):  # as SaTScan, which switches them off
        notes.append(f"{', '.join(geometry)}: no cluster geometry is written with UseNeighborsFile=y (the windows "
                     f"are lists of neighbours, not circles; SaTScan switches these outputs off too)")
        geometry = []
    # SaTScan's P_VALUE (PValueReportType 0: default combination, 1: Monte Carlo, 3: Gumbel) and the
    # GBL_PVALUE column beside a Monte Carlo one (CParameters::getIsReportingGumbelAsAddon)
    ptype = v.get("PValueReportType", "0") or "0"
    p_values = {"0": "default", "1": "monte_carlo", "3": "gumbel"}.get(ptype, "monte_carlo")
    gumbel = _on(v, "ReportGumbel") and ptype in ("1", "2")
    cutoff = v.get("CutoffClusterLinelistCSV", "") or "1"
    try:
        cutoff = float(cutoff)
    except ValueError:
        raise bad("CutoffClusterLinelistCSV", "is not a number") from None
    cache = v.get("LineListIndividualCache", "") or v.get("LineListEventCache", "")
    cache = None if not cache else (Path(cache) if Path(cache).is_absolute() else base / cache)
    return {"linelist_cutoff": cutoff, "linelist_cache": cache, "results_file": results, "tables": ascii_,
            "dbase": bool(dbf), "dbase_tables": dbf, "geometry": geometry,
            "gumbel": gumbel, "p_values": p_values, "title": v.get("ResultsTitle", "") or None, "notes": notes,
            "not_written": [(k, what) for k, what in _NOT_WRITTEN.items() if _on(v, k)]}


def _results_target(spec, write_results, path, analysis_name):
    """The report file ``run_prm(write_results=...)`` writes (None: nothing), every output
    setting checked before the analysis runs (``spec``: :func:`~._prm.prm_arguments`;
    ``analysis_name``: SaTScan's name of its ``AnalysisType``)."""
    if write_results is False or write_results is None:
        return None
    if spec["model"] in TEMPORAL_MODELS + ("svtt",):
        raise ValueError(f"{path}: write_results is not available for the {analysis_name} "
                         f"analysis yet (SaTScan's tables are written for the spatial scans); the result's "
                         f"clusters hold its cluster table")
    if spec["iterative"] or spec["power"]:
        key = "IterativeScan" if spec["iterative"] else "PerformPowerEvaluation"
        raise ValueError(f"{path}: write_results is not available with {key}=y yet (the result is not a single "
                         f"scan's cluster table); run without it")
    out = spec["outputs"]
    if write_results is True:
        target = out["results_file"]
        if target is None:
            raise ValueError(f"{path}: ResultsFile is empty; set it or pass write_results=<report path>")
    elif isinstance(write_results, (str, Path)):
        target = Path(write_results).expanduser()
    else:
        raise TypeError(f"write_results must be False, True (the .prm's ResultsFile) or a report path, got "
                        f"{type(write_results).__name__} {write_results!r}")
    if out["not_written"]:
        key, what = out["not_written"][0]
        raise ValueError(f"{path}: {key}=y asks for {what}, which hp.scan does not write; set it to n (or run "
                         f"without write_results)")
    if target.is_dir() or not target.parent.is_dir():
        raise ValueError(f"{path}: results file {target} is a folder or its folder {target.parent} does not exist "
                         f"(ResultsFile is relative to the parameter file's folder)")
    for note in out["notes"]:
        warnings.warn(f"{path}: {note}", UserWarning, stacklevel=3)
    if out["dbase"] or "shp" in out["geometry"]:
        from .geometry import _need_pyogrio

        _need_pyogrio("the dBase tables and shapefiles the parameter file asks for")
    return target


def _write_results(res, spec, target):
    """Write the files the parameter file's output settings ask for (``spec["outputs"]``, from
    :func:`_output_settings`) for the result ``res``, the report at ``target``."""
    from .outputs import write_satscan

    out = spec["outputs"]
    write_satscan(res, target, tables=out["tables"], dbase=out["dbase_tables"], geometry=out["geometry"],
                  study_period=spec["kwargs"].get("study_period", spec["dates"]["study_period"]),
                  gumbel=out["gumbel"], p_values=out["p_values"], penalty=spec["kwargs"].get("penalty"),
                  title=out["title"])
    case = spec["files"]["case_file"]
    if isinstance(case, DataSource) and case.linelist:
        from .linelist import prm_linelist

        prm_linelist(res, spec, case, target)
