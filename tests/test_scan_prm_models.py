"""hp.scan.run_prm and ``hphawkes scan`` for the analyses in time (purely temporal, seasonal, SVTT) and the
categorical models (ordinal, multinomial).

Every mapping of a SaTScan setting onto a keyword argument is checked by running the parameter file and the
function it names on the same data with the same seed: the clusters and the Monte Carlo maxima must be equal
bit for bit. The functions themselves are checked against SaTScan 10.3.2 in tests/test_scan_temporal.py,
test_scan_svtt.py, test_scan_ordinal.py and test_scan_multinomial.py (same settings as the files here);
test_run_prm_temporal_matches_satscan runs SaTScan itself on one file when its binary is built here.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import hphawkes_py as hp
from hphawkes_py.cli import main
from hphawkes_py.scan._prm import prm_arguments

sys.path.insert(0, str(Path(__file__).parent))
from satscan_oracle import SATSCAN, edit_prm, needs_satscan, read_dbf, run_parameter_file  # noqa: E402

RUN = dict(seed=3, backend="cpu", progress=False)


def _daily(n_days=120, seed=7):
    """Daily counts from 2020-01-01 with a raised rate on days 70-79, and controls."""
    rng = np.random.default_rng(seed)
    days = np.datetime64("2020-01-01") + np.arange(n_days)
    lam = np.where((np.arange(n_days) >= 70) & (np.arange(n_days) < 80), 6.0, 2.0)
    return days, rng.poisson(lam), rng.poisson(6.0, n_days)


def _sat_date(d) -> str:
    return str(d).replace("-", "/")


def _write_counts(path, days, counts):
    path.write_text("".join(f"A {k} {_sat_date(d)}\n" for d, k in zip(days, counts) if k > 0))


def _temporal_prm(folder: Path, days, cases, controls, *, analysis="2", model="0", areas="1", agg=1, size=50,
                  interp=0, min_t=1, reps=99, population=True, extra=()):
    _write_counts(folder / "t.cas", days, cases)
    _write_counts(folder / "t.ctl", days, controls)
    (folder / "t.pop").write_text("A 2020 100000\n")
    (folder / "t.geo").write_text("A 0 0\n")
    lines = ["[Input]", "CaseFile=t.cas", "CoordinatesFile=t.geo", "PrecisionCaseTimes=3",
             f"StartDate={_sat_date(days[0])}", f"EndDate={_sat_date(days[-1])}", "CoordinatesType=0",
             "[Analysis]", f"AnalysisType={analysis}", f"ModelType={model}", f"ScanAreas={areas}",
             "TimeAggregationUnits=3", f"TimeAggregationLength={agg}",
             "[Output]", "ResultsFile=t.txt", "OutputGoogleEarthKML=n", "OutputShapefiles=n",
             "MostLikelyClusterEachCentroidDBase=y", "LaunchMapViewer=n",
             "[Temporal Window]", f"MaxTemporalSize={size}", f"MaxTemporalSizeInterpretation={interp}",
             f"MinimumTemporalClusterSize={min_t}",
             "[Inference]", f"MonteCarloReps={reps}", "[Run Options]", "NumberParallelProcesses=1", *extra]
    if model == "1":
        lines.insert(2, "ControlFile=t.ctl")
    elif population:
        lines.insert(2, "PopulationFile=t.pop")
    p = folder / "t.prm"
    p.write_text("\n".join(lines) + "\n")
    return p


def _same(a, b):
    pd.testing.assert_frame_equal(a.clusters, b.clusters, check_exact=True)
    assert np.array_equal(a.null_llr, b.null_llr)


_DIRECTIONS = {"1": "high", "2": "low", "3": "both"}

# AnalysisType, ModelType, ScanAreas, TimeAggregationLength, MaxTemporalSize, its interpretation,
# MinimumTemporalClusterSize
_TEMPORAL = {
    "retrospective poisson": ("2", "0", "1", 1, 50, 0, 1),
    "prospective poisson": ("6", "0", "1", 1, 30, 0, 1),
    "retrospective poisson both weekly days": ("2", "0", "3", 7, 60, 1, 7),
    "retrospective poisson low min5": ("2", "0", "2", 1, 30, 0, 5),
    "retrospective bernoulli": ("2", "1", "1", 1, 50, 0, 1),
    "prospective bernoulli agg3": ("6", "1", "1", 3, 40, 0, 1),
    "seasonal poisson": ("7", "0", "1", 1, 10, 0, 1),
    "seasonal bernoulli": ("7", "1", "3", 1, 20, 1, 2),
}


@pytest.mark.parametrize("name", list(_TEMPORAL))
def test_run_prm_temporal_equals_the_direct_call(name, tmp_path):
    analysis, model, areas, agg, size, interp, min_t = _TEMPORAL[name]
    seasonal = analysis == "7"
    days, cases, controls = _daily(400 if seasonal else 120)
    prm = _temporal_prm(tmp_path, days, cases, controls, analysis=analysis, model=model, areas=areas, agg=agg,
                        size=size, interp=interp, min_t=min_t)
    res = hp.scan.run_prm(prm, **RUN)
    kw = dict(model="bernoulli" if model == "1" else "poisson", study_period=(days[0], days[-1]),
              direction=_DIRECTIONS[areas], min_temporal_length=min_t, n_replicates=99, **RUN)
    kw.update({"max_temporal_size": size / 100} if interp == 0 else {"max_temporal_length": size})
    if model == "1":
        kw["controls"] = controls
    if seasonal:
        direct = hp.scan.seasonal(days, cases, **kw)
    else:
        direct = hp.scan.temporal(days, cases, time_aggregation=agg, prospective=analysis == "6", **kw)
    assert res.analysis == ("seasonal" if seasonal else "prospective" if analysis == "6" else "retrospective")
    assert len(res.clusters) >= 1
    _same(res, direct)


def test_run_prm_temporal_without_population_or_coordinates(tmp_path):
    """SaTScan's purely temporal Poisson needs neither file: a constant population."""
    days, cases, controls = _daily()
    full = hp.scan.run_prm(_temporal_prm(tmp_path, days, cases, controls), **RUN)
    prm = _temporal_prm(tmp_path, days, cases, controls, population=False)
    prm.write_text(prm.read_text().replace("CoordinatesFile=t.geo\n", ""))
    _same(hp.scan.run_prm(prm, **RUN), full)


def test_run_prm_temporal_record_outside_period(tmp_path):
    days, cases, controls = _daily()
    prm = _temporal_prm(tmp_path, days, cases, controls)
    with open(tmp_path / "t.cas", "a") as fh:
        fh.write("A 3 2021/1/1\n")
    with pytest.raises(ValueError, match=r"t.cas: the case dated 2021-01-01 .* outside the study period"):
        hp.scan.run_prm(prm, **RUN)
    prm.write_text(prm.read_text() + "StudyPeriodCheckType=1\n")
    with pytest.warns(UserWarning, match="left out"):
        res = hp.scan.run_prm(prm, **RUN)
    assert res.n_cases == cases.sum()


@needs_satscan
def test_run_prm_temporal_matches_satscan(tmp_path):
    """The same .prm run by SaTScan and by run_prm: the clusters' windows, counts and LLRs."""
    days, cases, controls = _daily()
    prm = _temporal_prm(tmp_path, days, cases, controls, analysis="2", model="0", areas="3", reps=999)
    run_parameter_file(SATSCAN, prm, tmp_path, timeout=300)
    rows = read_dbf(tmp_path / "t.col.dbf")
    res = hp.scan.run_prm(prm, seed=1, backend="cpu", progress=False)
    ours = res.clusters
    assert len(rows) >= 1
    for k, theirs in enumerate(rows):
        o = ours.iloc[k]
        assert tuple(f"{t.year}/{t.month}/{t.day}" for t in map(pd.Timestamp, (o.start, o.end))) == \
            (theirs["START_DATE"], theirs["END_DATE"])
        assert o.cases == int(theirs["OBSERVED"])
        assert o.expected == pytest.approx(theirs["EXPECTED"], abs=1e-9)
        assert o.log_likelihood_ratio == pytest.approx(theirs["LLR"], abs=1e-9)
        p = float(theirs["P_VALUE"])
        assert abs(o.p_value - p) <= 4 * math.sqrt(max(p * (1 - p), 1e-3) * 2 / 1000) + 2e-3


# ---------------------------------------------------------------------------- SVTT
def _svtt_data():
    rng = np.random.default_rng(3)
    xy = rng.uniform(0, 10, (20, 2)).round(3)
    xy[:4] = [1.0, 1.0] + 0.2 * np.arange(4)[:, None]
    g = np.ones(20)
    g[:4] = 1.3
    cases = np.stack([rng.poisson(8 * g ** t) for t in range(8)], axis=1)
    cases[7, :] = 0  # a location without cases is a circle centre too
    return xy, cases


def _svtt_prm(folder, xy, cases, *, areas="1", extra=()):
    (folder / "s.geo").write_text("".join(f"L{i} {a} {b}\n" for i, (a, b) in enumerate(xy)))
    (folder / "s.pop").write_text("".join(f"L{i} 0 {1000 + 10 * i}\n" for i in range(len(xy))))
    (folder / "s.cas").write_text("".join(f"L{i} {cases[i, t]} {t}\n" for i in range(len(xy))
                                          for t in range(cases.shape[1]) if cases[i, t]))
    p = folder / "s.prm"
    p.write_text("\n".join([
        "[Input]", "CaseFile=s.cas", "PopulationFile=s.pop", "CoordinatesFile=s.geo", "PrecisionCaseTimes=4",
        "StartDate=0", f"EndDate={cases.shape[1] - 1}", "CoordinatesType=0",
        "[Analysis]", "AnalysisType=5", "ModelType=0", f"ScanAreas={areas}", "TimeAggregationUnits=4",
        "TimeAggregationLength=1",
        "[Output]", "ResultsFile=s.txt", "LaunchMapViewer=n",
        "[Spatial Window]", "MaxSpatialSizeInPopulationAtRisk=30",
        "[Space and Time Adjustments]", "TimeTrendType=0",
        "[Inference]", "MonteCarloReps=49", *extra]) + "\n")
    return p


@pytest.mark.parametrize("areas", ["1", "3"])
def test_run_prm_svtt_equals_the_direct_call(areas, tmp_path):
    xy, cases = _svtt_data()
    res = hp.scan.run_prm(_svtt_prm(tmp_path, xy, cases, areas=areas), **RUN)
    L, T = cases.shape
    ids = np.repeat([f"L{i}" for i in range(L)], T)
    keep = cases.ravel() > 0
    keep[7 * T] = True  # run_prm's row for the location without cases (0 cases at the start)
    direct = hp.scan.svtt(np.repeat(xy, T, axis=0)[keep], np.tile(np.arange(T), L)[keep], cases.ravel()[keep],
                          np.repeat(1000.0 + 10 * np.arange(L), T)[keep], location_ids=ids[keep].astype(object),
                          study_period=(0, T - 1), max_population=0.3, direction=_DIRECTIONS[areas],
                          n_replicates=49, **RUN)
    _same(res, direct)
    assert res.global_trend == direct.global_trend
    assert set(res.most_likely.location_ids) <= {"L0", "L1", "L2", "L3"} or areas == "3"


def test_run_prm_svtt_dates_and_great_circle(tmp_path):
    """Days (PrecisionCaseTimes=3) with TimeAggregationLength days a unit; CoordinatesType=1."""
    xy, cases = _svtt_data()
    xy = 40 + xy / 10  # latitude, longitude
    prm = _svtt_prm(tmp_path, xy, cases)
    start = np.datetime64("2020-01-01")
    (tmp_path / "s.cas").write_text("".join(f"L{i} {cases[i, t]} {_sat_date(start + 7 * t)}\n"
                                            for i in range(len(xy)) for t in range(8) if cases[i, t]))
    text = prm.read_text().replace("PrecisionCaseTimes=4", "PrecisionCaseTimes=3").replace(
        "TimeAggregationUnits=4", "TimeAggregationUnits=3").replace("TimeAggregationLength=1",
                                                                    "TimeAggregationLength=7")
    text = text.replace("StartDate=0", "StartDate=2020/1/1").replace("EndDate=7", f"EndDate={_sat_date(start + 55)}")
    prm.write_text(text.replace("CoordinatesType=0", "CoordinatesType=1"))
    spec = prm_arguments(prm)
    assert spec["kwargs"] == {"distance": "great_circle", "direction": "high", "max_population": 0.3,
                              "n_replicates": 49, "time_aggregation": 7}
    res = hp.scan.run_prm(prm, **RUN)
    assert res.n_units == 8 and len(res.null_llr) == 49


# ---------------------------------------------------------------------------- ordinal, multinomial
def _categorical_prm(folder, model):
    rng = np.random.default_rng(11)
    xy = rng.uniform(0, 10, (25, 2)).round(3)
    (folder / "c.geo").write_text("".join(f"L{i} {a} {b}\n" for i, (a, b) in enumerate(xy)))
    rows, lines = [], []
    for i in range(25):
        for k in (1, 2, 3):
            n = int(rng.poisson(6 if (i < 4 and k == 3) else 3))
            if n:
                lines.append(f"L{i} {n} {k if model == '3' else 'abc'[k - 1]}")
                rows += [(i, k)] * n
    (folder / "c.cas").write_text("\n".join(lines) + "\n")
    p = folder / "c.prm"
    p.write_text("\n".join(["[Input]", "CaseFile=c.cas", "CoordinatesFile=c.geo", "PrecisionCaseTimes=0",
                            "CoordinatesType=0", "[Analysis]", "AnalysisType=1", f"ModelType={model}", "ScanAreas=1",
                            "[Spatial Window]", "MaxSpatialSizeInPopulationAtRisk=40", "[Inference]",
                            "MonteCarloReps=49"]) + "\n")
    rows = np.array(rows)
    return p, xy[rows[:, 0]], rows[:, 1], np.array([f"L{i}" for i in rows[:, 0]], dtype=object)


@pytest.mark.parametrize("model", ["3", "7"])
def test_run_prm_categorical_equals_the_direct_call(model, tmp_path):
    prm, xy, cat, ids = _categorical_prm(tmp_path, model)
    assert prm_arguments(prm)["model"] == {"3": "ordinal", "7": "multinomial"}[model]
    res = hp.scan.run_prm(prm, **RUN)
    if model == "3":
        direct = hp.scan.ordinal(xy, cat, location_ids=ids, max_population=0.4, n_replicates=49, **RUN)
    else:
        direct = hp.scan.multinomial(xy, np.array(list("abc"))[cat - 1], location_ids=ids, max_population=0.4,
                                     n_replicates=49, **RUN)
    _same(res, direct)


# ---------------------------------------------------------------------------- refusals
@pytest.mark.parametrize("edit, match", [
    ({"ModelType=0": "ModelType=2"}, r"AnalysisType='2' .*\(retrospective purely temporal\) is not defined for the "
                                     r"space-time permutation model"),
    ({"AnalysisType=2": "AnalysisType=8"}, r"AnalysisType='8' .* must be 1 \(purely spatial\), 2 \(retrospective "
                                           r"purely temporal\), 3 .*, 4 .*, 5 \(spatial variation in temporal "
                                           r"trends\), 6 \(prospective purely temporal\) or 7 \(seasonal temporal\)"),
    ({"TimeAggregationUnits=3": "TimeAggregationUnits=2"}, r"TimeAggregationUnits='2' .*\(months\) is not supported"),
    ({"PrecisionCaseTimes=3": "PrecisionCaseTimes=1"}, r"PrecisionCaseTimes='1' .* works with dated records"),
    ({"MaxTemporalSize=50": "MaxTemporalSize=95"}, r"MaxTemporalSize='95' .* must be in \(0, 90\]"),
    ({"MinimumTemporalClusterSize=1": "MinimumTemporalClusterSize=0"}, r"MinimumTemporalClusterSize='0' .* >= 1"),
    ({"MaxTemporalSizeInterpretation=0": "MaxTemporalSizeInterpretation=2"}, "MaxTemporalSizeInterpretation='2'"),
    ({"[Run Options]": "TimeTrendAdjustmentType=4\n[Run Options]"}, r"TimeTrendAdjustmentType='4' .* time-stratified "
                                                                     r"randomization"),
    ({"AnalysisType=2": "AnalysisType=7", "[Run Options]": "TimeTrendAdjustmentType=2\n[Run Options]"},
     r"TimeTrendAdjustmentType='2' .* the seasonal scan runs without time-trend adjustment"),
    ({"AnalysisType=2": "AnalysisType=7", "TimeAggregationLength=1": "TimeAggregationLength=2"},
     r"TimeAggregationLength='2' .* must be 1: the seasonal scan"),
    ({"PopulationFile=t.pop": "PopulationFile=t.pop\nControlFile=t.ctl"}, r"ControlFile='t.ctl' .* is not used by "
                                                                           r"the discrete Poisson model"),
])
def test_run_prm_temporal_refusals(edit, match, tmp_path):
    days, cases, controls = _daily()
    prm = edit_prm(_temporal_prm(tmp_path, days, cases, controls), edit)
    with pytest.raises(ValueError, match=match):
        hp.scan.run_prm(prm, **RUN)


def test_run_prm_temporal_population_with_census_years_refused(tmp_path):
    days, cases, controls = _daily()
    prm = _temporal_prm(tmp_path, days, cases, controls)
    (tmp_path / "t.pop").write_text("A 2019 100000\nA 2021 120000\n")
    with pytest.raises(ValueError, match=r"t.pop:1: location 'A' has 2 census years"):
        hp.scan.run_prm(prm, **RUN)


def test_run_prm_temporal_write_results_refused(tmp_path):
    days, cases, controls = _daily()
    prm = _temporal_prm(tmp_path, days, cases, controls)
    with pytest.raises(ValueError, match="write_results is not available for the retrospective purely temporal"):
        hp.scan.run_prm(prm, write_results=True, **RUN)


@pytest.mark.parametrize("extra, match", [
    (("TimeTrendType=1",), r"TimeTrendType='1' .* not the quadratic one"),
    (("UseDistanceFromCenterOption=y", "MaxSpatialSizeInDistanceFromCenter=3"),
     r"UseDistanceFromCenterOption='y' .* is not supported by the spatial variation in temporal trends scan"),
])
def test_run_prm_svtt_refusals(extra, match, tmp_path):
    xy, cases = _svtt_data()
    prm = _svtt_prm(tmp_path, xy, cases)
    text = prm.read_text().replace("TimeTrendType=0\n", "")
    prm.write_text(text + "[More]\n" + "\n".join(extra) + "\n")
    with pytest.raises(ValueError, match=match):
        prm_arguments(prm)


def test_run_prm_svtt_units_must_match_precision(tmp_path):
    xy, cases = _svtt_data()
    prm = _svtt_prm(tmp_path, xy, cases)
    prm.write_text(prm.read_text().replace("TimeAggregationUnits=4", "TimeAggregationUnits=1"))
    with pytest.raises(ValueError, match=r"TimeAggregationUnits='1' .*\(years\) is not supported with "
                                         r"PrecisionCaseTimes=4"):
        prm_arguments(prm)


# ---------------------------------------------------------------------------- hphawkes scan ANALYSIS
def test_cli_analysis_parsers_mirror_the_keywords():
    from hphawkes_py.cli import build_parser

    args = build_parser().parse_args(["scan", "temporal", "d.csv", "--time", "day", "--prospective",
                                      "--time-aggregation", "7", "--max-temporal-length", "28", "--model", "bernoulli",
                                      "--study-period", "2020-01-01", "2020-06-30", "--seed", "4"])
    assert (args.analysis, args.csv, args.time, args.prospective, args.time_aggregation, args.max_temporal_length,
            args.model, args.study_period, args.seed) == ("temporal", "d.csv", "day", True, 7, 28, "bernoulli",
                                                          ["2020-01-01", "2020-06-30"], 4)
    args = build_parser().parse_args(["scan", "ordinal", "c.csv", "--direction", "both", "--count", "n"])
    assert (args.analysis, args.direction, args.count, args.max_population) == ("ordinal", "both", "n", 0.5)
    # the spatial scan's own arguments are untouched
    args = build_parser().parse_args(["scan", "data.csv", "--model", "poisson", "--population", "pop"])
    assert args.csv == ["data.csv"] and args.model == "poisson"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["scan", "multinomial", "c.csv", "--direction", "low"])  # no direction there


def test_cli_temporal_and_seasonal(tmp_path, capsys):
    days, cases, controls = _daily(400)
    pd.DataFrame({"day": days.astype(str), "cases": cases, "controls": controls}).to_csv(tmp_path / "d.csv",
                                                                                       index=False)
    out = tmp_path / "t.csv"
    assert main(["scan", "temporal", str(tmp_path / "d.csv"), "--time", "day", "--model", "bernoulli",
                 "--time-aggregation", "2", "--replicates", "19", "--seed", "3", "--backend", "cpu", "--quiet",
                 "--out", str(out)]) == 0
    direct = hp.scan.temporal(days, cases, controls=controls, model="bernoulli", time_aggregation=2, n_replicates=19,
                              **RUN)
    got = pd.read_csv(out)
    assert got.cases.tolist() == direct.clusters.cases.tolist()
    np.testing.assert_array_equal(got.log_likelihood_ratio, direct.clusters.log_likelihood_ratio)
    assert got.start.tolist() == [pd.Timestamp(d).strftime("%Y-%m-%d") for d in direct.clusters.start]
    folder = tmp_path / "seasonal"
    assert main(["scan", "seasonal", str(tmp_path / "d.csv"), "--time", "day", "--replicates", "19", "--seed", "3",
                 "--backend", "cpu", "--out", str(folder)]) == 0
    # the folder holds what SaTScan writes for a seasonal analysis, with its columns
    direct = hp.scan.seasonal(days, cases, n_replicates=19, **RUN)
    ref = tmp_path / "ref"
    ref.mkdir()
    expected = sorted(p.name for p in hp.scan.write_satscan(direct, ref / "seasonal.txt", dbase=True))
    assert "seasonal.col.csv" in expected and "seasonal.llr.csv" in expected
    assert sorted(f.name for f in folder.iterdir()) == expected
    col = pd.read_csv(folder / "seasonal.col.csv")
    assert col.columns[0] == "CLUSTER" and "LOC_ID" in col
    pd.testing.assert_frame_equal(col, pd.read_csv(ref / "seasonal.col.csv"))
    np.testing.assert_array_equal(pd.read_csv(folder / "seasonal.llr.csv").LLR, direct.null_llr)
    assert "TemporalResult(seasonal poisson" in capsys.readouterr().out


def test_cli_svtt(tmp_path):
    xy, cases = _svtt_data()
    L, T = cases.shape
    df = pd.DataFrame({"x": np.repeat(xy[:, 0], T), "y": np.repeat(xy[:, 1], T), "time": np.tile(np.arange(T), L),
                       "cases": cases.ravel(), "population": 1000, "id": np.repeat([f"L{i}" for i in range(L)], T)})
    df.to_csv(tmp_path / "s.csv", index=False)
    assert main(["scan", "svtt", str(tmp_path / "s.csv"), "--id", "id", "--max-population", "0.3", "--replicates",
                 "19", "--seed", "3", "--backend", "cpu", "--quiet", "--out", str(tmp_path / "s_out.csv")]) == 0
    direct = hp.scan.svtt(df[["x", "y"]].to_numpy(), df.time.to_numpy(), df.cases.to_numpy(), df.population.to_numpy(),
                          location_ids=df.id.to_numpy(), max_population=0.3, n_replicates=19, **RUN)
    got = pd.read_csv(tmp_path / "s_out.csv")
    assert got.location_ids.tolist() == [" ".join(v) for v in direct.clusters.location_ids]
    np.testing.assert_array_equal(got.inside_trend, direct.clusters.inside_trend)


@pytest.mark.parametrize("name", ["ordinal", "multinomial"])
def test_cli_categorical(name, tmp_path):
    prm, xy, cat, ids = _categorical_prm(tmp_path, "3")
    df = pd.DataFrame({"x": xy[:, 0], "y": xy[:, 1], "category": cat, "id": ids})
    df.to_csv(tmp_path / "c.csv", index=False)
    assert main(["scan", name, str(tmp_path / "c.csv"), "--id", "id", "--replicates", "19", "--seed", "3",
                 "--backend", "cpu", "--quiet", "--out", str(tmp_path / "c_out.csv")]) == 0
    fn = getattr(hp.scan, name)
    direct = fn(xy, cat, location_ids=ids, n_replicates=19, **RUN)
    got = pd.read_csv(tmp_path / "c_out.csv")
    assert got.location_ids.tolist() == [" ".join(v) for v in direct.clusters.location_ids]
    np.testing.assert_array_equal(got.log_likelihood_ratio, direct.clusters.log_likelihood_ratio)
    # --count: one row per location and category with its number of cases gives the same scan
    agg = df.groupby(["id", "category"], sort=False).agg(x=("x", "first"), y=("y", "first"), n=("x", "size"))
    agg.reset_index().to_csv(tmp_path / "agg.csv", index=False)
    assert main(["scan", name, str(tmp_path / "agg.csv"), "--id", "id", "--count", "n", "--replicates", "19",
                 "--seed", "3", "--backend", "cpu", "--quiet", "--out", str(tmp_path / "agg_out.csv")]) == 0
    again = pd.read_csv(tmp_path / "agg_out.csv")
    np.testing.assert_allclose(again.log_likelihood_ratio, got.log_likelihood_ratio, rtol=1e-12)


@pytest.mark.parametrize("argv, match", [
    (["temporal", "{csv}", "--time", "nope"], r"column 'nope' not found"),
    (["temporal", "{csv}", "--time", "day", "--cases", "label"], r"column 'label' must be numeric; row 2"),
    (["temporal", "{csv}", "--time", "label"], r"column 'label': neither whole numbers nor dates"),
    (["temporal", "{csv}", "--time", "day", "--out", "x.json"], r"--out x.json: give a .csv file"),
    (["temporal", "{csv}", "--time", "day", "--overwrite"], r"--overwrite applies to an --out folder"),
    (["ordinal", "{csv}", "--x", "cases", "--y", "cases", "--category", "cases", "--count", "neg"],
     r"column 'neg' must hold whole numbers >= 0; row 2"),
])
def test_cli_analysis_refusals(argv, match, tmp_path, capsys):
    pd.DataFrame({"day": ["2020-01-01", "2020-01-02"], "cases": [1, 2], "label": ["a", "b"], "neg": [-1, 2]}).to_csv(
        tmp_path / "d.csv", index=False)
    argv = [a.replace("{csv}", str(tmp_path / "d.csv")) for a in argv]
    assert main(["scan", *argv, "--replicates", "9", "--backend", "cpu", "--quiet"]) == 2
    assert match.replace("\\", "") in capsys.readouterr().err or pytest.fail(capsys.readouterr().err)


def test_cli_run_prm_temporal(tmp_path):
    """``hphawkes scan run`` on a purely temporal .prm: the table, or the folder of table, maxima and summary."""
    days, cases, controls = _daily()
    prm = _temporal_prm(tmp_path, days, cases, controls)
    direct = hp.scan.run_prm(prm, n_replicates=19, **RUN)
    assert main(["scan", "run", str(prm), "--replicates", "19", "--seed", "3", "--backend", "cpu", "--quiet",
                 "--out", str(tmp_path / "r.csv")]) == 0
    np.testing.assert_array_equal(pd.read_csv(tmp_path / "r.csv").log_likelihood_ratio,
                                  direct.clusters.log_likelihood_ratio)
    assert main(["scan", "run", str(prm), "--replicates", "19", "--seed", "3", "--backend", "cpu", "--quiet",
                 "--out", str(tmp_path / "rdir")]) == 0
    ref = tmp_path / "ref"
    ref.mkdir()
    expected = sorted(p.name for p in hp.scan.write_satscan(direct, ref / "t.txt", dbase=True))
    assert {"t.col.csv", "t.llr.csv", "t.txt"} <= set(expected)
    assert sorted(f.name for f in (tmp_path / "rdir").iterdir()) == expected  # SaTScan's files, its columns
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "rdir" / "t.col.csv"), pd.read_csv(ref / "t.col.csv"))
    np.testing.assert_array_equal(pd.read_csv(tmp_path / "rdir" / "t.llr.csv").LLR, direct.null_llr)


def test_cli_categorical_folder(tmp_path):
    """SaTScan's whole set for an ordinal .prm (its clusters have no expected count: null in the GeoJSON)."""
    prm, *_ = _categorical_prm(tmp_path, "3")
    assert main(["scan", "run", str(prm), "--replicates", "19", "--seed", "3", "--backend", "cpu", "--quiet",
                 "--out", str(tmp_path / "cdir")]) == 0
    assert (tmp_path / "cdir" / "c.col.csv").exists()


@pytest.mark.parametrize("model", ["3", "7"])
def test_run_prm_categorical_risk_file_is_left_out_as_satscan_does(model, tmp_path):
    """SaTScan writes no risk-estimates file (.rr) for the ordinal and multinomial models: it disables the
    option with a note; run_prm does the same instead of failing after the analysis."""
    prm, *_ = _categorical_prm(tmp_path, model)
    text = prm.read_text().replace("[Input]", "[Output]\nResultsFile=out/c.txt\nIncludeRelativeRisksCensusAreasASCII=y\n"
                                   "CensusAreasReportedClustersASCII=y\n[Input]")
    prm.write_text(text)
    (tmp_path / "out").mkdir()
    with pytest.warns(UserWarning, match="risk-estimates file is not written"):
        hp.scan.run_prm(prm, write_results=True, **RUN)
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert "c.txt" in written and any(n.startswith("c.gis") for n in written), written
    assert not any(".rr" in n for n in written), written
