"""SaTScan parameter files run unchanged (hp.scan.run_prm, hphawkes scan run): same analysis as the direct
call, SaTScan's NY results, relative file names from the file's folder, every unsupported setting refused by
name and line."""
from __future__ import annotations

import shutil
import warnings

import numpy as np
import pandas as pd
import pytest

import hphawkes_py as hp
from hphawkes_py.scan import spacetime as st
from hphawkes_py.scan.prm import prm_arguments

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
    assert "OutputGoogleEarthKML" in res.settings["prm_ignored"]


@pytest.mark.parametrize("key, value, match", [
    ("IterativeScan", "y", r"\[Inference\] IterativeScan=y: not supported"),
    ("SpatialWindowShapeType", "1", r"\[Spatial Window\] SpatialWindowShapeType=1"),
    ("TimeTrendAdjustmentType", "2", r"TimeTrendAdjustmentType=2"),
    ("ModelType", "5", r"\[Analysis\] ModelType=5"),
    ("AnalysisType", "1", r"AnalysisType=1: the space-time permutation model needs 3"),
    ("ScanAreas", "3", r"ScanAreas=3"),
    ("TimeAggregationUnits", "2", r"TimeAggregationUnits=2"),
    ("MonteCarloReps", "lots", r"MonteCarloReps=lots: not a number"),
    ("CaseFile", "missing.cas", r"CaseFile=missing.cas: names a file that does not exist"),
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
    with pytest.raises(hp.scan.PrmError, match=r"\[Analysis\] FancyNewOption=3: is not a parameter hp.scan knows"):
        hp.scan.run_prm(prm, n_replicates=9, backend="cpu", progress=False)
    prm.write_text("just words\n")
    with pytest.raises(hp.scan.PrmError, match=r":1: not a readable SaTScan parameter file: expected 'Key=value'"):
        hp.scan.run_prm(prm)


def test_space_time_poisson_sample_is_refused_naming_the_analysis(sample):
    with pytest.raises(hp.scan.PrmError, match=r"AnalysisType=3: \(retrospective space-time\) is not supported for the poisson"):
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


SAT = hp.datasets.satscan_sample_path
PRM = SAT("ny_leukemia_poisson.prm")


def test_run_prm_reproduces_satscan_ny():
    spec = prm_arguments(PRM)
    assert spec["model"] == "poisson"
    assert spec["kwargs"] == {"distance": "euclidean", "direction": "high", "max_population": 0.1,
                              "n_replicates": 999, "min_cases": 2}
    assert "OutputShapefiles" in spec["ignored"] and "ReportGiniClusters" in spec["ignored"]
    res = hp.scan.run_prm(PRM, seed=1, progress=False, backend="cpu")
    llr = res.clusters.log_likelihood_ratio.to_numpy()[:7]
    np.testing.assert_allclose(llr, [11.577255, 9.019716, 6.114140, 4.651839, 4.169203, 3.363518, 3.209485],
                               atol=1e-6)
    assert res.clusters.location_ids.iloc[3] == [62, 64, 67, 65]


def _edit_ny(tmp_path, **changes):
    """A copy of the NY parameter file (and its data) with some values replaced or added."""
    for f in ("ny_leukemia.cas", "ny_leukemia.pop", "ny_leukemia.geo"):
        shutil.copy(SAT(f), tmp_path / f)
    text = PRM.read_text()
    lines = []
    for line in text.splitlines():
        key = line.split("=", 1)[0]
        if "=" in line and not line.startswith(";") and key in changes:
            line = f"{key}={changes.pop(key)}"
        lines.append(line)
    extra = [f"{k}={v}" for k, v in changes.items()]
    p = tmp_path / "a.prm"
    p.write_text("\n".join(lines + (["[Extra]"] + extra if extra else [])) + "\n")
    return p


@pytest.mark.parametrize(
    "changes, match",
    [
        (dict(ModelType="2"), r"AnalysisType=1: the space-time permutation model needs 3"),
        (dict(ModelType="4"), r"ModelType=4: \(Exponential\) is not supported"),
        (dict(AnalysisType="3"), r"AnalysisType=3: \(retrospective space-time\) is not supported"),
        (dict(SpatialWindowShapeType="1"), "SpatialWindowShapeType"),
        (dict(UseGridFile="y"), "UseGridFile"),
        (dict(CriteriaForReportingSecondaryClusters="5"), "CriteriaForReportingSecondaryClusters"),
        (dict(IterativeScan="y"), "IterativeScan"),
        (dict(MaxSpatialSizeInPopulationAtRisk="60"), r"must be in \(0, 50\]"),
        (dict(MonteCarloReps="0"), "MonteCarloReps"),
        (dict(CaseFile="missing.cas"), "names a file that does not exist"),
        (dict(ControlFile="ny_leukemia.cas"), "ControlFile.*not used by the discrete Poisson model"),
        (dict(SomeNewOption="7"), r"a.prm:\d+: \[Extra\] SomeNewOption=7: is not a parameter hp.scan knows"),
    ],
)
def test_run_prm_refuses_by_name(tmp_path, changes, match):
    p = _edit_ny(tmp_path, **changes)
    with pytest.raises(ValueError, match=match):
        hp.scan.run_prm(p, progress=False, backend="cpu")


def test_run_prm_relative_paths_options_and_bernoulli(tmp_path):
    sub = tmp_path / "analysis"
    sub.mkdir()
    p = _edit_ny(sub, ScanAreas="3", CoordinatesType="1", MaxSpatialSizeInPopulationAtRisk="50",
              MinimumCasesInHighRateClusters="0", MonteCarloReps="19", UseDistanceFromCenterOption="y",
              MaxSpatialSizeInDistanceFromCenter="20", SomeOffOption="n")
    spec = prm_arguments(p)
    assert spec["kwargs"]["direction"] == "both" and spec["kwargs"]["distance"] == "great_circle"
    assert spec["kwargs"]["max_distance"] == 20.0 and spec["ignored"]["SomeOffOption"] == "n"
    res = hp.scan.run_prm(p, seed=0, progress=False, backend="cpu")  # file names relative to the .prm
    assert res.distance == "great_circle" and (res.clusters.radius <= 20).all()
    # Bernoulli: grave
    for f in ("grave.cas", "grave.ctl", "grave.geo"):
        shutil.copy(SAT(f), tmp_path / f)
    text = PRM.read_text().replace("CaseFile=ny_leukemia.cas", "CaseFile=grave.cas").replace(
        "ControlFile=", "ControlFile=grave.ctl").replace("PopulationFile=ny_leukemia.pop", "PopulationFile=").replace(
        "CoordinatesFile=ny_leukemia.geo", "CoordinatesFile=grave.geo").replace("ModelType=0", "ModelType=1").replace(
        "MaxSpatialSizeInPopulationAtRisk=10", "MaxSpatialSizeInPopulationAtRisk=50").replace(
        "MinimumCasesInHighRateClusters=2", "MinimumCasesInHighRateClusters=0").replace(
        "MonteCarloReps=999", "MonteCarloReps=99")
    (tmp_path / "g.prm").write_text(text)
    g = hp.scan.run_prm(tmp_path / "g.prm", seed=1, progress=False, backend="cpu")
    assert g.model == "bernoulli" and abs(g.clusters.log_likelihood_ratio.iloc[0] - 7.419340) < 1e-6


def test_run_prm_with_covariates_new_mexico(tmp_path):
    for f in ("nm.cas", "nm.pop", "nm.geo"):
        shutil.copy(SAT(f), tmp_path / f)
    text = PRM.read_text().replace("ny_leukemia", "nm").replace("\nCoordinatesType=0", "\nCoordinatesType=1").replace(
        "MonteCarloReps=999", "MonteCarloReps=19").replace("MaxSpatialSizeInPopulationAtRisk=10",
                                                           "MaxSpatialSizeInPopulationAtRisk=50")
    (tmp_path / "nm.prm").write_text(text)
    res = hp.scan.run_prm(tmp_path / "nm.prm", seed=1, progress=False, backend="cpu")
    assert res.n_locations == 32 and res.n_cases == 1175
    ids = res.clusters.location_ids.iloc[0]
    assert all(isinstance(i, str) for i in ids) and len(ids) == len(set(ids)) == res.clusters.n_locations.iloc[0]


def test_run_prm_bad_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="parameter file not found"):
        hp.scan.run_prm(tmp_path / "none.prm")
    (tmp_path / "x.prm").write_text("not an ini file\n")  # SaTScan's format is INI
    with pytest.raises(ValueError, match="not a readable SaTScan parameter file"):
        hp.scan.run_prm(tmp_path / "x.prm")


def test_cli_scan_run(tmp_path, capsys):
    from hphawkes_py.cli import main

    out = tmp_path / "c.csv"
    rc = main(["scan", "run", str(PRM), "--replicates", "19", "--seed", "1", "--backend", "cpu", "-o", str(out),
               "--png", "", "--quiet"])
    assert rc == 0
    t = pd.read_csv(out)
    assert abs(t.log_likelihood_ratio.iloc[0] - 11.577255) < 1e-6
