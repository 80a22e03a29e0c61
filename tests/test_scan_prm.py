"""hp.scan.run_prm: SaTScan parameter files rerun unchanged; what cannot be honoured is refused by name."""
from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest

import hphawkes_py as hp
from hphawkes_py.scan._prm import prm_arguments

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


def _edit(tmp_path, **changes):
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
        (dict(ModelType="8"), r"ModelType='8' \(\[Analysis\]\) \(Rank\) is not supported"),
        (dict(ModelType="2"), r"AnalysisType='1' .* must be 3 \(retrospective space-time\) or 4 \(prospective "
                              r"space-time\)"),
        (dict(AnalysisType="8"), r"AnalysisType='8' .* is not supported .* 1 \(purely spatial\), 2 .* or 7 "
                                 r"\(seasonal temporal\)"),
        (dict(AnalysisType="2"), r"PrecisionCaseTimes='1' .* the purely temporal scan works with dated records"),
        (dict(AnalysisType="3"), r"TimeAggregationLength='1' .* leaves 1 time interval in the study period"),
        (dict(SpatialWindowShapeType="2"), "SpatialWindowShapeType"),
        (dict(SpatialWindowShapeType="1", NonCompactnessPenalty="0.5"), "NonCompactnessPenalty"),
        (dict(CriteriaForReportingSecondaryClusters="6"), r"CriteriaForReportingSecondaryClusters=.6. .* must be 0-5"),
        (dict(IterativeScan="y", IterativeScanMaxPValue="2"), r"IterativeScanMaxPValue='2' .* must be in \[0, 1\]"),
        (dict(MaxSpatialSizeInPopulationAtRisk="60"), r"must be in \(0, 50\]"),
        (dict(MonteCarloReps="0"), "MonteCarloReps"),
        (dict(UseGridFile="y"), r"GridFile='' .* is required"),
        (dict(CaseFile="missing.cas"), "names a file that does not exist"),
        (dict(ControlFile="ny_leukemia.cas"), "ControlFile.*not used by the discrete Poisson model"),
        (dict(SomeNewOption="7"), r"SomeNewOption='7' \(\[Extra\]\) is not a parameter hp.scan knows"),
    ],
)
def test_run_prm_refuses_by_name(tmp_path, changes, match):
    p = _edit(tmp_path, **changes)
    with pytest.raises(ValueError, match=match):
        hp.scan.run_prm(p, progress=False, backend="cpu")


def test_run_prm_relative_paths_options_and_bernoulli(tmp_path):
    sub = tmp_path / "analysis"
    sub.mkdir()
    p = _edit(sub, ScanAreas="3", CoordinatesType="1", MaxSpatialSizeInPopulationAtRisk="50",
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
                                                           "MaxSpatialSizeInPopulationAtRisk=50").replace(
        "StartDate=2000/1/1", "StartDate=1973/1/1").replace("EndDate=2000/12/31", "EndDate=1991/12/31")
    (tmp_path / "nm.prm").write_text(text)
    res = hp.scan.run_prm(tmp_path / "nm.prm", seed=1, progress=False, backend="cpu")
    assert res.n_locations == 32 and res.n_cases == 1175
    ids = res.clusters.location_ids.iloc[0]
    assert all(isinstance(i, str) for i in ids) and len(ids) == len(set(ids)) == res.clusters.n_locations.iloc[0]


def test_run_prm_bad_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="parameter file not found"):
        hp.scan.run_prm(tmp_path / "none.prm")
    (tmp_path / "x.prm").write_text("not an ini file\n")
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


def test_run_prm_nycfever_satscan_sample_unchanged():
    """SaTScan's own NYCfever.prm (prospective space-time permutation, 3 km, 7 days) runs as is."""
    spec = prm_arguments(SAT("NYCfever.prm"))
    assert spec["model"] == "space_time_permutation"
    kw = spec["kwargs"]
    assert kw["prospective"] and kw["max_temporal"] == 7 and kw["max_distance"] == 3.0
    assert kw["distance"] == "great_circle" and kw["study_period"] == (np.datetime64("2001-11-01"),
                                                                        np.datetime64("2001-11-24"))
    res = hp.scan.run_prm(SAT("NYCfever.prm"), n_replicates=19, seed=1, progress=False, backend="cpu")
    assert res.model == "space_time_permutation" and res.n_cases == 194
    assert (res.clusters.end == np.datetime64("2001-11-24")).all() and (res.clusters.radius <= 3.0).all()


def test_run_prm_space_time_refusals(tmp_path):
    for f in ("NYCfever.cas", "NYCfever.geo"):
        shutil.copy(SAT(f), tmp_path / f)
    base = SAT("NYCfever.prm").read_text()
    for old, new, match in [("AnalysisType=4", "AnalysisType=1", "AnalysisType='1'.*must be 3"),
                            ("EndDate=2001/11/24", "EndDate=2001/11/20", "outside the study period"),
                            ("MaxTemporalSizeInterpretation=1", "MaxTemporalSizeInterpretation=0",
                             r"MaxTemporalSize='7'"),
                            ("IncludeClusters=0", "IncludeClusters=2", "IncludeClusters")]:
        (tmp_path / "a.prm").write_text(base.replace(old, new))
        if "MaxTemporalSizeInterpretation=0" in new:
            # 7 % of 24 days is one day: accepted (percent of the study period)
            assert prm_arguments(tmp_path / "a.prm")["kwargs"]["max_temporal"] == 1
            continue
        with pytest.raises(ValueError, match=match):
            hp.scan.run_prm(tmp_path / "a.prm", n_replicates=9, progress=False, backend="cpu")


def test_run_prm_elliptic(tmp_path):
    p = _edit(tmp_path, SpatialWindowShapeType="1", NonCompactnessPenalty="1", EllipseShapes="1.5,2,3,4,5",
              EllipseAngles="4,6,9,12,15", MonteCarloReps="19")
    spec = prm_arguments(p)
    assert spec["kwargs"]["window"] == "ellipse" and spec["kwargs"]["penalty"] == "medium"
    res = hp.scan.run_prm(p, seed=1, progress=False, backend="cpu")
    assert abs(res.clusters.test_statistic.iloc[0] - 14.474236) < 1e-6  # SaTScan v9.6, medium penalty


#: SaTScan 10.3's report for its own sample analysis NYCSpaceTimePermutation.prm (NYCfever.txt, run on this
#: machine from scanstatistics/satscan @0cd87a6): locations, time frame, cases, expected, LLR, radius (km), p
#: (SaTScan's sequential Monte Carlo stopped after 207 replicates).
SATSCAN_NYC = [
    (["11418", "11415", "11419", "11435", "11416", "11421", "11451", "11375", "11417"], "2001-11-22", "2001-11-24",
     4, 0.67, 3.845418, 2.90, 0.242),
    (["11372"], "2001-11-24", "2001-11-24", 2, 0.16, 3.164201, 0.0, 0.575),
    (["10472"], "2001-11-23", "2001-11-24", 2, 0.29, 2.137259, 0.0, 0.966),
]


def test_satscan_sample_parameter_files_run_verbatim():
    """SaTScan's own sample .prm files, unchanged: the space-time permutation analysis gives SaTScan's
    cluster table; the Bernoulli one runs (the space-time Poisson one: test_scan_prm_population_time)."""
    import math
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = hp.scan.run_prm(SAT("NYCSpaceTimePermutation.prm"), seed=1, progress=False, backend="cpu")
        hp.scan.run_prm(SAT("NHumbersideSpatialBernoulli.prm"), n_replicates=19, seed=1, progress=False,
                        backend="cpu")
    cl = res.clusters
    assert len(cl) == len(SATSCAN_NYC)
    for k, (ids, start, end, cases, expected, llr, radius, p) in enumerate(SATSCAN_NYC):
        row = cl.iloc[k]
        assert [str(i) for i in row.location_ids] == ids
        assert (str(pd.Timestamp(row.start).date()), str(pd.Timestamp(row.end).date())) == (start, end)
        assert row.cases == cases
        np.testing.assert_allclose(row.expected, expected, atol=5e-3)
        np.testing.assert_allclose(row.log_likelihood_ratio, llr, atol=5e-7)
        np.testing.assert_allclose(row.radius, radius, atol=5e-3)
        se = math.sqrt(p * (1 - p) / 207 + p * (1 - p) / 999)
        assert abs(row.p_value - p) < 4 * se + 2 / 1000


# --- Bernoulli space-time (ModelType=1, AnalysisType 3/4): dated .cas and .ctl files --------------------------------

_BST_START = np.datetime64("2024-01-01")
_BST_DAYS = 20


def _bernoulli_st_files(tmp_path, **changes):
    """A synthetic Bernoulli space-time analysis: 8 locations with cases and controls on 20 days
    (more cases at locations 1-2 on days 14-17), location 9 in the coordinates file only; returns
    the .prm path and the (ids, xy, cases, controls, dates) rows in file order (.cas, .ctl, then 9)."""
    rng = np.random.default_rng(7)
    geo = {k: (float(k % 3) + 0.1 * k, float(k // 3)) for k in range(1, 10)}
    cas, ctl = [], []
    for k in range(1, 9):
        for d in range(_BST_DAYS):
            date = _BST_START + d
            c = rng.poisson(4.0 if (k in (1, 2) and 14 <= d <= 17) else 0.7)
            if c:
                cas.append((k, int(c), date))
            if d % 2 == 0 or k == 3:  # controls on some days only; some days have cases only
                ctl.append((k, int(rng.integers(1, 6)), date))

    def line(k, n, date):
        y, m, dd = str(date).split("-")
        return f"{k} {n} {int(y)}/{int(m)}/{int(dd)}"  # SaTScan's YYYY/M/D form too

    (tmp_path / "b.cas").write_text("\n".join(line(*r) for r in cas) + "\n")
    (tmp_path / "b.ctl").write_text("\n".join(line(*r) for r in ctl) + "\n")
    (tmp_path / "b.geo").write_text("".join(f"{k} {x} {y}\n" for k, (x, y) in geo.items()))
    prm = {"Input": {"CaseFile": "b.cas", "ControlFile": "b.ctl", "PopulationFile": "", "CoordinatesFile": "b.geo",
                     "PrecisionCaseTimes": "3", "StartDate": "2024/01/01", "EndDate": "2024/01/20",
                     "CoordinatesType": "0"},
           "Analysis": {"AnalysisType": "3", "ModelType": "1", "ScanAreas": "1", "TimeAggregationUnits": "3",
                        "TimeAggregationLength": "1"},
           "Output": {"ResultsFile": "b.txt"},
           "Spatial Window": {"MaxSpatialSizeInPopulationAtRisk": "50", "UseDistanceFromCenterOption": "n",
                              "MaxSpatialSizeInDistanceFromCenter": "1", "IncludePurelyTemporal": "n",
                              "SpatialWindowShapeType": "0"},
           "Temporal Window": {"MinimumTemporalClusterSize": "1", "MaxTemporalSizeInterpretation": "1",
                               "MaxTemporalSize": "5", "IncludePurelySpatial": "n", "IncludeClusters": "0"},
           "Cluster Restrictions": {"MinimumCasesInHighRateClusters": "2"},
           "Inference": {"MonteCarloReps": "99", "PValueReportType": "0"},
           "Space and Time Adjustments": {"AdjustForWeeklyTrends": "n"},
           "Run Options": {"ProspectiveStartDate": "2024/01/20", "AdjustForEarlierAnalyses": "n"}}
    for key, val in changes.items():
        for sec in prm.values():
            if key in sec:
                sec[key] = val
                break
        else:
            prm["Analysis"][key] = val
    (tmp_path / "b.prm").write_text("".join(f"[{s}]\n" + "".join(f"{k}={v}\n" for k, v in kv.items())
                                            for s, kv in prm.items()))
    rows = ([(k, n, 0, d) for k, n, d in cas] + [(k, 0, n, d) for k, n, d in ctl]
            + [(9, 0, 0, _BST_START)])
    ids = [r[0] for r in rows]
    xy = np.array([geo[k] for k in ids])
    cases = np.array([r[1] for r in rows])
    controls = np.array([r[2] for r in rows])
    dates = np.array([r[3] for r in rows], dtype="datetime64[D]")
    return tmp_path / "b.prm", (ids, xy, cases, controls, dates)


def _assert_same_result(res, direct):
    pd.testing.assert_frame_equal(res.clusters, direct.clusters)
    np.testing.assert_array_equal(res.null_llr, direct.null_llr)
    assert (res.model, res.n_cases, res.n_population, res.n_locations) == (
        direct.model, direct.n_cases, direct.n_population, direct.n_locations)


@pytest.mark.parametrize("analysis", ["3", "4"])
def test_run_prm_bernoulli_space_time_equals_direct_call(tmp_path, analysis):
    p, (ids, xy, cases, controls, dates) = _bernoulli_st_files(tmp_path, AnalysisType=analysis)
    spec = prm_arguments(p)
    assert spec["model"] == "space_time_bernoulli"
    assert spec["files"]["control_file"] == tmp_path / "b.ctl"
    kw = spec["kwargs"]
    assert kw == {"study_period": (_BST_START, _BST_START + _BST_DAYS - 1), "prospective": analysis == "4",
                  "max_temporal": 5, "distance": "euclidean", "direction": "high", "max_population": 0.5,
                  "n_replicates": 99, "min_cases": 2}
    assert "ResultsFile" in spec["ignored"] and "ProspectiveStartDate" in spec["ignored"]
    res = hp.scan.run_prm(p, seed=3, progress=False, backend="cpu")
    direct = hp.scan.space_time(xy, cases, dates, controls=controls, model="bernoulli", max_population=0.5,
                                max_temporal=5, prospective=analysis == "4",
                                study_period=(_BST_START, _BST_START + _BST_DAYS - 1), min_cases=2,
                                n_replicates=99, direction="high", location_ids=np.array(ids, dtype=object),
                                seed=3, progress=False, backend="cpu")
    _assert_same_result(res, direct)
    assert res.model == "space_time_bernoulli" and res.n_locations == 9  # location 9: coordinates file only
    assert res.n_cases == cases.sum() and res.n_population == cases.sum() + controls.sum()
    top = res.clusters.iloc[0]
    if analysis == "3":
        assert set(top.location_ids) >= {1, 2} and top.start >= np.datetime64("2024-01-13")
        assert top.end <= np.datetime64("2024-01-19") and top.p_value < 0.05
    else:
        assert (res.clusters.end == np.datetime64("2024-01-20")).all()
    # a different seed gives other null maxima (the comparison above can fail)
    other = hp.scan.run_prm(p, seed=4, progress=False, backend="cpu")
    assert not np.array_equal(other.null_llr, res.null_llr)


def test_run_prm_bernoulli_space_time_options(tmp_path):
    # percent of the study period, both directions, a distance limit, alive clusters, the replicate override
    p, (ids, xy, cases, controls, dates) = _bernoulli_st_files(
        tmp_path, MaxTemporalSizeInterpretation="0", MaxTemporalSize="50", ScanAreas="3", IncludeClusters="1",
        UseDistanceFromCenterOption="y", MaxSpatialSizeInDistanceFromCenter="1.5",
        MaxSpatialSizeInPopulationAtRisk="30", MinimumCasesInHighRateClusters="3")
    kw = prm_arguments(p)["kwargs"]
    assert kw["max_temporal"] == 10 and kw["direction"] == "both" and kw["prospective"]  # 50 % of 20 days
    assert kw["max_distance"] == 1.5 and kw["max_population"] == 0.3 and kw["min_cases"] == 3
    res = hp.scan.run_prm(p, n_replicates=19, seed=5, progress=False, backend="cpu")
    direct = hp.scan.space_time(xy, cases, dates, controls=controls, model="bernoulli", max_population=0.3,
                                max_distance=1.5, max_temporal=10, prospective=True,
                                study_period=(_BST_START, _BST_START + _BST_DAYS - 1), min_cases=3,
                                n_replicates=19, direction="both", location_ids=np.array(ids, dtype=object),
                                seed=5, progress=False, backend="cpu")
    _assert_same_result(res, direct)
    assert (res.clusters.radius <= 1.5).all() and len(res.null_llr) == 19
    # no MinimumCasesInHighRateClusters (parameter files before SaTScan 9.5): SaTScan 10's default, 2, as it runs
    # them (its report of the NYCfever sample, version 9.4.0: "Minimum Cases in Cluster for High Rates : 2")
    text = p.read_text().replace("MinimumCasesInHighRateClusters=3\n", "")
    p.write_text(text)
    assert prm_arguments(p)["kwargs"]["min_cases"] == 2


@pytest.mark.parametrize(
    "changes, key",
    [
        (dict(AnalysisType="5"), "AnalysisType"),
        (dict(TimeAggregationLength="0"), "TimeAggregationLength"),
        (dict(TimeAggregationUnits="4"), "TimeAggregationUnits"),
        (dict(PrecisionCaseTimes="5"), "PrecisionCaseTimes"),
        (dict(MinimumTemporalClusterSize="2"), "MinimumTemporalClusterSize"),
        (dict(IncludeClusters="2"), "IncludeClusters"),
        (dict(IncludePurelyTemporal="y", TimeTrendAdjustmentType="4"), "IncludePurelyTemporal"),
        (dict(AdjustForEarlierAnalyses="y"), "AdjustForEarlierAnalyses"),
        (dict(SpatialWindowShapeType="1"), "SpatialWindowShapeType"),
        (dict(PopulationFile="b.cas"), "PopulationFile"),
        (dict(ControlFile=""), "ControlFile"),
        (dict(MaxTemporalSize="95", MaxTemporalSizeInterpretation="0"), "MaxTemporalSize"),
        (dict(MaxTemporalSizeInterpretation="2"), "MaxTemporalSizeInterpretation"),
        (dict(EndDate="2023/12/31"), "EndDate"),
        (dict(StartDate="2024-01-01"), "StartDate"),
        (dict(SomeNewOption="1"), "SomeNewOption"),
    ],
)
def test_run_prm_bernoulli_space_time_refuses_by_name(tmp_path, changes, key):
    p, _ = _bernoulli_st_files(tmp_path, **changes)
    with pytest.raises(ValueError, match=rf"b\.prm: {key}="):
        hp.scan.run_prm(p, n_replicates=9, progress=False, backend="cpu")


def test_run_prm_bernoulli_space_time_bad_data_files(tmp_path):
    p, _ = _bernoulli_st_files(tmp_path)
    ctl = tmp_path / "b.ctl"
    good = ctl.read_text()
    for text, match in [(good + "3 2 2024/1/21\n", r"b\.ctl: the control dated 2024-01-21 .* outside the study "
                                                   r"period .*StartDate/EndDate"),
                        (good + "12 2 2024/1/5\n", r"b\.ctl: location id '12' is not in the coordinates file"),
                        (good + "3 2 2024/1/5 1\n", r"b\.ctl:\d+: covariates .* Bernoulli space-time model"),
                        (good + "3 2 Jan5\n", r"b\.ctl:\d+: field 3 \(date\)"),
                        (good + "3 -1 2024/1/5\n", r"b\.ctl:\d+: field 2 \(#controls\)")]:
        ctl.write_text(text)
        with pytest.raises(ValueError, match=match):
            hp.scan.run_prm(p, n_replicates=9, progress=False, backend="cpu")
    ctl.write_text(good)
    (tmp_path / "b.cas").write_text((tmp_path / "b.cas").read_text() + "1 1 2023/12/31\n")
    with pytest.raises(ValueError, match=r"b\.cas: the case dated 2023-12-31"):
        hp.scan.run_prm(p, n_replicates=9, progress=False, backend="cpu")


def test_cli_scan_run_bernoulli_space_time(tmp_path):
    from hphawkes_py.cli import main

    p, _ = _bernoulli_st_files(tmp_path, AnalysisType="4")
    out = tmp_path / "st.csv"
    assert main(["scan", "run", str(p), "--replicates", "19", "--seed", "2", "--backend", "cpu", "-o", str(out),
                 "--png", "", "--quiet"]) == 0
    res = hp.scan.run_prm(p, n_replicates=19, seed=2, progress=False, backend="cpu")
    t = pd.read_csv(out)
    np.testing.assert_allclose(t.log_likelihood_ratio, res.clusters.log_likelihood_ratio, rtol=1e-12)
    assert (pd.to_datetime(t.end) == pd.Timestamp("2024-01-20")).all()


def test_run_prm_alive_clusters_space_time_permutation(tmp_path):
    """IncludeClusters=1 (alive clusters) in a retrospective analysis: intervals end on the last day."""
    for f in ("NYCfever.cas", "NYCfever.geo"):
        shutil.copy(SAT(f), tmp_path / f)
    (tmp_path / "a.prm").write_text(SAT("NYCfever.prm").read_text().replace("AnalysisType=4", "AnalysisType=3")
                                    .replace("IncludeClusters=0", "IncludeClusters=1"))
    assert prm_arguments(tmp_path / "a.prm")["kwargs"]["prospective"]
    (tmp_path / "a.prm").write_text(SAT("NYCfever.prm").read_text().replace("AnalysisType=4", "AnalysisType=3"))
    assert not prm_arguments(tmp_path / "a.prm")["kwargs"]["prospective"]


def test_run_prm_adjusting_for_earlier_analyses_refusals(tmp_path):
    """AdjustForEarlierAnalyses=y: prospective analyses only, circles limited by a distance (or a max circle size
    file), and a percentage maximum temporal size with time intervals of one unit (the analysis itself:
    test_scan_satscan_samples.py)."""
    for f in ("NYCfever.cas", "NYCfever.geo"):
        shutil.copy(SAT(f), tmp_path / f)
    base = SAT("NYCfever.prm").read_text().replace("AdjustForEarlierAnalyses=n", "AdjustForEarlierAnalyses=y")
    for edits, match in [({"AnalysisType=4": "AnalysisType=3"}, "is for the prospective space-time analyses"),
                         ({"UseDistanceFromCenterOption=y": "UseDistanceFromCenterOption=n"},
                          "needs the maximum circle size as a distance"),
                         ({"MaxTemporalSizeInterpretation=1": "MaxTemporalSizeInterpretation=0",
                           "MaxTemporalSize=7": "MaxTemporalSize=50", "TimeAggregationLength=1": "TimeAggregationLength=2"},
                          "with a percentage maximum temporal size needs TimeAggregationLength=1"),
                         ({"ProspectiveStartDate=2001/11/24": "ProspectiveStartDate=2001/12/24"},
                          "surveillance_start .* is outside the study period")]:
        text = base
        for old, new in edits.items():
            assert old in text
            text = text.replace(old, new)
        (tmp_path / "a.prm").write_text(text)
        with pytest.raises(ValueError, match=match):
            hp.scan.run_prm(tmp_path / "a.prm", n_replicates=9, progress=False, backend="cpu")
