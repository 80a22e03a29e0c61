"""SaTScan parameter files run unchanged (hp.scan.run_prm): same analysis as the direct call,
relative file names from the file's folder, every unsupported setting refused by name."""
from __future__ import annotations

import shutil
import warnings

import numpy as np
import pandas as pd
import pytest

import hphawkes_py as hp
from hphawkes_py.scan import spacetime as st

SAMPLE = "scan/satscan_sample_data"


@pytest.fixture()
def sample(tmp_path):
    """The SaTScan sample folder copied somewhere else (relative names must resolve from there)."""
    src = hp.datasets.path(SAMPLE)
    dst = tmp_path / "satscan"
    shutil.copytree(src, dst)
    return dst


def _edit(prm, key, value):
    lines = prm.read_text().splitlines()
    out = [f"{key}={value}" if ln.split("=", 1)[0] == key else ln for ln in lines]
    assert out != lines, key
    prm.write_text("\n".join(out) + "\n")


def test_nyc_prm_runs_the_same_analysis_as_the_direct_call(sample, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # not the parameter file's folder
    with pytest.warns(UserWarning, match="IncludeClusterLocationsKML"):
        res = hp.scan.run_prm(sample / "NYCSpaceTimePermutation.prm", n_replicates=99, seed=4, backend="cpu",
                              progress=False)
    df = st.read_satscan_spacetime(sample / "NYCfever.cas", sample / "NYCfever.geo")
    direct = st.space_time_permutation(df[["a", "b"]].to_numpy(), df.cases, df.date, location_ids=df.location_id,
                                       distance="great_circle", max_distance=3, max_temporal_days=7,
                                       prospective=True, study_start="2001-11-01", study_end="2001-11-24",
                                       min_cases=2, n_replicates=99, seed=4, backend="cpu", progress=False)
    pd.testing.assert_frame_equal(res.clusters, direct.clusters)
    np.testing.assert_array_equal(res.null_llr, direct.null_llr)
    assert res.settings["prm"].endswith("NYCSpaceTimePermutation.prm")
    assert "[Output] OutputGoogleEarthKML" in res.settings["prm_not_applied"]


@pytest.mark.parametrize("key, value, match", [
    ("IterativeScan", "y", r"\[Inference\] IterativeScan=y: not supported"),
    ("SpatialWindowShapeType", "1", r"\[Spatial Window\] SpatialWindowShapeType=1"),
    ("TimeTrendAdjustmentType", "2", r"TimeTrendAdjustmentType=2"),
    ("ModelType", "5", r"\[Analysis\] ModelType=5"),
    ("AnalysisType", "1", r"AnalysisType=1: the space-time permutation model needs 3"),
    ("ScanAreas", "3", r"ScanAreas=3"),
    ("TimeAggregationUnits", "2", r"TimeAggregationUnits=2"),
    ("MonteCarloReps", "lots", r"MonteCarloReps=lots: not a number"),
    ("CaseFile", "missing.cas", r"CaseFile=missing.cas: file not found"),
    ("CriteriaForReportingSecondaryClusters", "1", r"CriteriaForReportingSecondaryClusters=1"),
])
def test_unsupported_settings_are_refused_by_name_and_line(sample, key, value, match):
    prm = sample / "NYCSpaceTimePermutation.prm"
    _edit(prm, key, value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(hp.scan.PrmError, match=r"NYCSpaceTimePermutation.prm:\d+: .*" + match):
            hp.scan.run_prm(prm, n_replicates=9, backend="cpu", progress=False)


def test_unknown_keys_and_malformed_lines_are_refused(sample):
    prm = sample / "NYCSpaceTimePermutation.prm"
    text = prm.read_text()
    prm.write_text(text.replace("[Analysis]\n", "[Analysis]\nFancyNewOption=3\n", 1))
    with pytest.raises(hp.scan.PrmError, match=r"\[Analysis\] FancyNewOption=3: unknown"):
        hp.scan.run_prm(prm, n_replicates=9, backend="cpu", progress=False)
    prm.write_text("just words\n")
    with pytest.raises(hp.scan.PrmError, match=r":1: expected 'Key=value'"):
        hp.scan.run_prm(prm)


def test_space_time_poisson_sample_is_refused_naming_the_analysis(sample):
    with pytest.raises(hp.scan.PrmError, match=r"AnalysisType=3: the poisson model is supported purely spatial"):
        hp.scan.run_prm(sample / "NewMexicoSpaceTimePoisson.prm", n_replicates=9, backend="cpu", progress=False)


def test_purely_spatial_poisson_prm_equals_the_direct_call(sample):
    """A purely spatial discrete Poisson .prm (SaTScan's NY leukaemia files) runs hp.scan.poisson."""
    prm = sample / "NHumbersideSpatialBernoulli.prm"
    for key, value in [("CaseFile", "ny_leukemia.cas"), ("ControlFile", ""), ("PopulationFile", "ny_leukemia.pop"),
                       ("CoordinatesFile", "ny_leukemia.geo"), ("ModelType", "0"),
                       ("MaxSpatialSizeInPopulationAtRisk", "10"), ("PrecisionCaseTimes", "1")]:
        _edit(prm, key, value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = hp.scan.run_prm(prm, n_replicates=49, seed=2, backend="cpu", progress=False)
    tab = hp.scan.read_satscan(sample / "ny_leukemia.cas", None, sample / "ny_leukemia.pop",
                               sample / "ny_leukemia.geo", model="poisson")
    direct = hp.scan.poisson(tab[["x", "y"]].to_numpy(), tab.cases.to_numpy(), tab.population.to_numpy(),
                             location_ids=tab.location_id.to_numpy(), max_population=0.1, min_cases=2,
                             n_replicates=49, seed=2, backend="cpu", progress=False)
    pd.testing.assert_frame_equal(res.clusters, direct.clusters)
    assert len(res.clusters) >= 1


def test_case_file_fields_read_as_covariates_without_times_are_refused(sample):
    prm = sample / "NHumbersideSpatialBernoulli.prm"
    for key, value in [("CaseFile", "ny_leukemia.cas"), ("ControlFile", ""), ("PopulationFile", "ny_leukemia.pop"),
                       ("CoordinatesFile", "ny_leukemia.geo"), ("ModelType", "0")]:
        _edit(prm, key, value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(hp.scan.PrmError, match=r"PrecisionCaseTimes=0: with no case times SaTScan reads"):
            hp.scan.run_prm(prm, n_replicates=9, backend="cpu", progress=False)
