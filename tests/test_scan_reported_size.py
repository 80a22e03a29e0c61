"""Clusters reported within a smaller maximum size than the windows scanned (``max_reported_population``,
``max_reported_distance`` of hp.scan.bernoulli and hp.scan.poisson; SaTScan's "restrict reported clusters to
maximum geographical cluster size", ``UseReportOnlySmallerClusters``): the Monte Carlo unchanged, every reported
cluster within the limits and the best such window of its centre; SaTScan's New York leukaemia and North
Humberside sample analyses so restricted, through run_prm, against SaTScan 10.3.2 (tests/satscan_oracle.py);
bad settings.

``python tests/test_scan_reported_size.py --satscan <binary>`` stores SaTScan's output for machines without it.
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

import hphawkes_py as hp
from hphawkes_py.scan._prm import prm_arguments

sys.path.insert(0, str(Path(__file__).parent))
from satscan_oracle import (assert_clusters_match, oracle, read_clusters, run_each, store, stored,  # noqa: E402
                            write_prm)

FIXTURE = stored("reported_size")
SAMPLE = Path(hp.__file__).parent / "data" / "scan" / "satscan_sample_data"


def _ny():
    ny = hp.datasets.load_ny_leukemia()
    return ny[["x", "y"]].to_numpy(), ny["cases_floor"].to_numpy(), ny["population"].to_numpy()


@pytest.mark.parametrize("kw", [dict(max_reported_population=0.1), dict(max_reported_distance=5.0),
                                dict(max_reported_population=0.05, max_reported_distance=20.0)])
def test_reported_clusters_keep_within_the_limits_and_the_null_is_unchanged(kw):
    xy, cases, pop = _ny()
    run = dict(n_replicates=49, seed=4, progress=False, backend="cpu")
    full = hp.scan.poisson(xy, cases, pop, **run)
    res = hp.scan.poisson(xy, cases, pop, **kw, **run)
    np.testing.assert_array_equal(res.null_llr, full.null_llr)
    cl = res.clusters
    assert len(cl) and res.n_windows == full.n_windows
    if "max_reported_population" in kw:
        assert (cl.population <= kw["max_reported_population"] * pop.sum()).all()
    if "max_reported_distance" in kw:
        assert (cl.radius <= kw["max_reported_distance"]).all()
    # the most likely reported cluster is the best window within the limits: the full scan of the same limits
    small = hp.scan.poisson(xy, cases, pop, max_population=kw.get("max_reported_population", 0.5),
                            max_distance=kw.get("max_reported_distance"), **run)
    assert cl.log_likelihood_ratio.iloc[0] == small.clusters.log_likelihood_ratio.iloc[0]
    assert cl.location_ids.iloc[0] == small.clusters.location_ids.iloc[0]
    assert cl.log_likelihood_ratio.iloc[0] < full.clusters.log_likelihood_ratio.iloc[0]


def test_bad_limits_are_refused():
    xy, cases, pop = _ny()
    for kw, match in ((dict(max_reported_population=0.6), "max_population"),
                      (dict(max_population=0.2, max_reported_population=0.3), "above max_population"),
                      (dict(max_reported_distance=-1.0), "max_reported_distance"),
                      (dict(max_reported_population=0.1, window="ellipse"), "ellipse")):
        with pytest.raises(ValueError, match=match):
            hp.scan.poisson(xy, cases, pop, n_replicates=9, progress=False, **kw)


# ---------------------------------------------------------------------------- SaTScan 10.3.2
#: name -> (ModelType, the sample's files, MaxSpatialSizeInPopulationAtRisk_Reported, ..._DistanceFromCenter_Reported);
#: the New York case file has a year field (PrecisionCaseTimes=1), North Humberside's none
_ANALYSES = {"ny 10 %": ("0", ("ny_leukemia.cas", "ny_leukemia.pop", "ny_leukemia.geo"), "10", None),
             "ny 5 % and 10 km": ("0", ("ny_leukemia.cas", "ny_leukemia.pop", "ny_leukemia.geo"), "5", "10"),
             "north humberside 20 %": ("1", ("NHumberside.cas", "NHumberside.ctl", "NHumberside.geo"), "20", None)}


def _write_inputs(folder: Path) -> None:
    for _, files, _, _ in _ANALYSES.values():
        for name in files:
            shutil.copy(SAMPLE / name, folder / name)


def _prm(name: str, folder: Path) -> Path:
    model, (cas, second, geo), pct, km = _ANALYSES[name]
    stem = name.replace(" ", "_").replace("%", "pct")
    second = f"PopulationFile={second}" if model == "0" else f"ControlFile={second}"
    return write_prm(folder / f"{stem}.prm", [
        "[Input]", f"CaseFile={cas}", second, f"PrecisionCaseTimes={'1' if model == '0' else '0'}",
        "StartDate=2000/1/1", "EndDate=2000/12/31",
        f"CoordinatesFile={geo}", "CoordinatesType=0",
        "[Analysis]", "AnalysisType=1", f"ModelType={model}", "ScanAreas=1",
        "[Output]", f"ResultsFile={stem}.txt", "OutputGoogleEarthKML=n", "OutputShapefiles=n",
        "MostLikelyClusterEachCentroidDBase=y", "LaunchMapViewer=n",
        "[Spatial Window]", "MaxSpatialSizeInPopulationAtRisk=50", "SpatialWindowShapeType=0",
        "[Inference]", "MonteCarloReps=999", "PValueReportType=1",
        "[Spatial Output]", "UseReportOnlySmallerClusters=y", f"MaxSpatialSizeInPopulationAtRisk_Reported={pct}",
        f"UseDistanceFromCenterOption_Reported={'y' if km else 'n'}",
        f"MaxSpatialSizeInDistanceFromCenter_Reported={km or 1}",
        "[Run Options]", "NumberParallelProcesses=1"])


def run_satscan(binary) -> dict:
    """SaTScan's cluster tables (``.col.dbf``), the clusters' location ids and its summary, per analysis."""
    return run_each(binary, "hphawkes-reported-", _write_inputs, _ANALYSES, _prm, read_clusters)


@pytest.fixture(scope="module")
def satscan_output():
    return oracle(FIXTURE, run_satscan)


@pytest.mark.parametrize("name", list(_ANALYSES))
def test_run_prm_matches_satscan(name, satscan_output, tmp_path):
    _write_inputs(tmp_path)
    prm = _prm(name, tmp_path)
    assert "max_reported_population" in prm_arguments(prm)["kwargs"]
    res = hp.scan.run_prm(prm, seed=1, progress=False)
    assert_clusters_match(res.clusters, satscan_output[name]["rows"], satscan_output[name]["ids"])


if __name__ == "__main__":  # write the stored SaTScan output (see tests/satscan_oracle.py)
    store(FIXTURE, run_satscan, "test_scan_reported_size.py")
