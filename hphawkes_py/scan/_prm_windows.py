"""The settings of a SaTScan parameter file that shape the windows of an analysis, read for
:func:`~hphawkes_py.scan.run_prm` (:mod:`hphawkes_py.scan._prm`): the grid file of circle centres, the max circle
size file, the neighbors file, the smaller reported clusters, the criteria for reporting secondary clusters and
the window's shape (circles, ellipses, the isotonic scan).

Each reader takes the file's settings ``v`` (a dict), the analysis ``model`` (a name of
``_prm._ANALYSES``), ``bad(key, why)`` (the error naming a setting) and, where it reads a file, ``file(key,
required)`` (the path, resolved as run_prm resolves them); what it reads goes into the scan's keyword arguments
``kwargs``.
"""
from __future__ import annotations

import warnings

import numpy as np

from ._prm_outputs import _on
from ._satscan import _number, _read_rows
from .secondary import CRITERIA

__all__ = []

#: the space-time analyses run_prm runs
_SPACE_TIME = ("space_time_permutation", "space_time_bernoulli", "space_time_poisson", "space_time_exponential",
               "space_time_normal", "space_time_ordinal", "space_time_multinomial")
#: the analyses whose circles a grid file, a max circle size file and the secondary-cluster criteria shape
_CIRCULAR_SCANS = ("bernoulli", "poisson") + _SPACE_TIME


def _reported_kwargs(v, model, bad, kwargs) -> None:
    """``UseReportOnlySmallerClusters=y`` (SaTScan's "restrict reported clusters to maximum geographical cluster
    size"): ``max_reported_population`` (``MaxSpatialSizeInPopulationAtRisk_Reported`` / 100, at most the scan's)
    and, with ``UseDistanceFromCenterOption_Reported=y``, ``max_reported_distance`` of the purely spatial
    Bernoulli and discrete Poisson analyses with circles or neighbour lists."""
    if not _on(v, "UseReportOnlySmallerClusters"):
        return
    if model not in ("bernoulli", "poisson") or kwargs.get("window") == "ellipse":
        raise bad("UseReportOnlySmallerClusters", "is supported for the purely spatial Bernoulli and discrete "
                                                  "Poisson analyses with circular windows or a neighbors file")
    if _on(v, "UseMaxCirclePopulationFileOption_Reported"):
        raise bad("UseMaxCirclePopulationFileOption_Reported", "is not supported (the reported clusters are limited "
                                                               "by population and distance)")
    key = "MaxSpatialSizeInPopulationAtRisk_Reported"
    try:
        pct = float(v.get(key, "50") or "50")
    except ValueError:
        raise bad(key, "is not a number") from None
    if not 0 < pct / 100.0 <= kwargs.get("max_population", 0.5):
        raise bad(key, "must be in (0, MaxSpatialSizeInPopulationAtRisk] (percent of the population at risk)")
    kwargs["max_reported_population"] = pct / 100.0
    if _on(v, "UseDistanceFromCenterOption_Reported"):
        key = "MaxSpatialSizeInDistanceFromCenter_Reported"
        try:
            kwargs["max_reported_distance"] = float(v.get(key, ""))
        except ValueError:
            raise bad(key, "is not a number") from None
        if not kwargs["max_reported_distance"] > 0:
            raise bad(key, "must be positive")


def _neighbors_file(v, model, bad, file, kwargs):
    """``UseNeighborsFile=y``: the ``NeighborsFilename`` of a purely spatial Bernoulli or discrete Poisson analysis,
    whose windows are then the file's lists instead of circles (:mod:`~.neighbor_lists`; the coordinates file is
    not read, as in SaTScan); None when off. The settings that describe circles are refused by name."""
    if not _on(v, "UseNeighborsFile"):
        return None
    if (v.get("SpatialWindowShapeType", "0") or "0") != "0":
        raise bad("SpatialWindowShapeType", "must be 0 with UseNeighborsFile=y (the windows are the neighbors file's)")
    for key, given in (("UseDistanceFromCenterOption", "max_distance" in kwargs), ("UseGridFile", "centres" in kwargs),
                       ("CriteriaForReportingSecondaryClusters", kwargs.get("secondary", "no-overlap") != "no-overlap")):
        if given:
            raise bad(key, "describes circles: not with UseNeighborsFile=y (the windows are the neighbors file's)")
    return file("NeighborsFilename", True)


def _secondary(v, model, bad, kwargs) -> None:
    """``CriteriaForReportingSecondaryClusters`` 0-5 as ``secondary`` (:data:`~.secondary.CRITERIA`) of the purely
    spatial Bernoulli and discrete Poisson and the space-time scans; the other analyses list them with no
    geographical overlap (0)."""
    code = v.get("CriteriaForReportingSecondaryClusters", "0") or "0"
    names = {str(c): n for n, c in CRITERIA.items()}
    if code not in names:
        raise bad("CriteriaForReportingSecondaryClusters", "must be 0-5")
    if code == "0":
        return
    if model not in _CIRCULAR_SCANS:
        raise bad("CriteriaForReportingSecondaryClusters", "is supported for the purely spatial Bernoulli and discrete "
                                                           "Poisson and the space-time analyses; the others take 0 (no "
                                                           "geographical overlap)")
    if kwargs.get("window") == "ellipse" and code != "5":
        raise bad("CriteriaForReportingSecondaryClusters", "must be 0 or 5 with elliptic windows")
    if _on(v, "ReportGiniClusters"):
        warnings.warn(f"{v.get('CriteriaForReportingSecondaryClusters')!r} with ReportGiniClusters=y: SaTScan also "
                      f"lists its Gini-optimised clusters (ranked with no geographical overlap), which hp.scan does not; "
                      f"the clusters listed are the hierarchical ones", UserWarning, stacklevel=4)
    kwargs["secondary"] = names[code]


def _grid_file(v, model, bad, file, kwargs) -> None:
    """``UseGridFile=y``: the circle centres of ``GridFile`` (records ``x y``, or ``latitude longitude`` with
    ``CoordinatesType=1``, as SaTScan reads them) as ``centres`` of the Bernoulli, discrete Poisson, continuous
    Poisson and space-time scans."""
    if not _on(v, "UseGridFile"):
        return
    if model not in _CIRCULAR_SCANS + ("continuous_poisson",):
        raise bad("UseGridFile", "is supported for the purely spatial Bernoulli, discrete Poisson and continuous "
                                 "Poisson and the space-time analyses (ModelType 0-2 and 6; 4 with AnalysisType 3 "
                                 "or 4)")
    if kwargs.get("window") == "ellipse":
        raise bad("UseGridFile", "is not supported with elliptic windows (SpatialWindowShapeType=1)")
    path = file("GridFile", True)
    p, rows = _read_rows(path, "grid", 2)
    xy = [(_number(parts[0], p, lineno, 1, "coordinate"), _number(parts[1], p, lineno, 2, "coordinate"))
          for lineno, parts in rows]
    kwargs["centres"] = np.array(xy, dtype=np.float64).reshape(-1, 2)


def _max_circle(v, model, bad, file):
    """``UseMaxCirclePopulationFileOption=y``: ``(MaxCirclePopulationFile, fraction)``, the file (as ``file``
    resolves it) and ``MaxSpatialSizeInMaxCirclePopulationFile`` / 100, a further limit on the circles of the
    Bernoulli, discrete Poisson and space-time analyses; None when off."""
    if not _on(v, "UseMaxCirclePopulationFileOption"):
        return None
    if model not in _CIRCULAR_SCANS:
        raise bad("UseMaxCirclePopulationFileOption", "is supported for the purely spatial Bernoulli and discrete "
                                                      "Poisson and the space-time analyses (ModelType 0-2; 4 with "
                                                      "AnalysisType 3 or 4)")
    try:
        pct = float(v.get("MaxSpatialSizeInMaxCirclePopulationFile", "50") or "50")
    except ValueError:
        raise bad("MaxSpatialSizeInMaxCirclePopulationFile", "is not a number") from None
    if not 0 < pct <= 50:
        raise bad("MaxSpatialSizeInMaxCirclePopulationFile", "must be in (0, 50] (percent of the max circle size "
                                                              "file's population)")
    return file("MaxCirclePopulationFile", True), pct / 100.0


def _window_kwargs(v, model, bad, kwargs):
    """The window shape into ``kwargs``: circles, or SaTScan's elliptic windows and their penalty; and the isotonic
    scan (``IsotonicScan=1``)."""
    shape = v.get("SpatialWindowShapeType", "0")
    if shape == "1":
        if model not in ("poisson", "bernoulli"):
            raise bad("SpatialWindowShapeType", "(elliptic) is supported with the discrete Poisson and Bernoulli "
                                                "models only")
        pen = {"0": "none", "1": "medium", "2": "strong"}.get(v.get("NonCompactnessPenalty", "1"))
        if pen is None:
            raise bad("NonCompactnessPenalty", "must be 0 (none), 1 (medium) or 2 (strong)")
        try:
            shapes = tuple(float(x) for x in v.get("EllipseShapes", "1.5,2,3,4,5").split(","))
            angles = tuple(int(x) for x in v.get("EllipseAngles", "4,6,9,12,15").split(","))
        except ValueError:
            raise bad("EllipseShapes", "and EllipseAngles must be comma-separated numbers (angles whole)") from None
        kwargs.update(window="ellipse", penalty=pen, ellipse_shapes=shapes, ellipse_angles=angles)
    elif shape != "0":
        raise bad("SpatialWindowShapeType", "must be 0 (circular) or 1 (elliptic)")
    if v.get("IsotonicScan", "0") == "1":
        if model not in ("poisson", "bernoulli") or shape != "0":
            raise bad("IsotonicScan", "is supported for the purely spatial discrete Poisson and Bernoulli analyses "
                                      "with circular windows (ModelType 0 or 1, AnalysisType 1)")
        kwargs["risk_function"] = "isotonic"
