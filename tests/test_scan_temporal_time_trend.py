"""The purely temporal discrete Poisson scan adjusted for a log-linear time trend (hp.scan.temporal(
time_trend="loglinear"), run_prm with TimeTrendAdjustmentType 2 and 3) against SaTScan 10.3.2 run on the
same parameter files (tests/satscan_oracle.py): retrospective and prospective, day and 7-day units, a
given yearly percentage and the trend estimated from the data. The clusters' days, cases, expected
cases and LLRs agree with SaTScan's to 1e-6, the p-values within the binomial error, and the trend
SaTScan reports to its printed digits. The data rise 1 % a day with a burst on days 80-89: unadjusted,
the most likely cluster is the end of the period; adjusted, the burst."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import hphawkes_py as hp
from hphawkes_py.scan.time_trend import time_trend_text, time_trend_weights
from satscan_oracle import assert_clusters_match, oracle, read_dbf, report_summary, run_each, store, stored, write_prm

FIXTURE = stored("temporal_time_trend")
START = np.datetime64("2020-01-01")
T = 200
#: analysis -> (TimeTrendAdjustmentType, TimeTrendPercentage, AnalysisType, TimeAggregationLength)
_ANALYSES = {
    "none": ("0", "0", "2", 1),
    "percent 300": ("2", "300", "2", 1),
    "percent -50 prospective": ("2", "-50", "6", 1),
    "estimated": ("3", "0", "2", 1),
    "estimated 7-day units": ("3", "0", "2", 7),
    "log-quadratic": ("5", "0", "2", 1),
    "log-quadratic 7-day units prospective": ("5", "0", "6", 7),
}


def _data():
    """Daily cases from 2020-01-01, the rate 2 a day rising 1 % a day, 2.5 times that on days 80-89."""
    rng = np.random.default_rng(31)
    lam = 2.0 * np.exp(0.01 * np.arange(T))
    lam[80:90] *= 2.5
    return START + np.arange(T), rng.poisson(lam)


def _prm(name, folder: Path) -> Path:
    kind, pct, atype, agg = _ANALYSES[name]
    stem = name.replace(" ", "_").replace("-", "m")
    lines = ["[Input]", "CaseFile=t.cas", "PopulationFile=t.pop", "CoordinatesFile=t.geo", "PrecisionCaseTimes=3",
             "StartDate=2020/1/1", "EndDate=2020/7/18", "CoordinatesType=0",
             "[Analysis]", f"AnalysisType={atype}", "ModelType=0", "ScanAreas=1", "TimeAggregationUnits=3",
             f"TimeAggregationLength={agg}",
             "[Output]", f"ResultsFile={stem}.txt", "OutputGoogleEarthKML=n", "OutputShapefiles=n",
             "MostLikelyClusterEachCentroidDBase=y", "LaunchMapViewer=n",
             "[Space and Time Adjustments]", f"TimeTrendAdjustmentType={kind}", f"TimeTrendPercentage={pct}",
             "[Temporal Window]", "MaxTemporalSize=50", "MaxTemporalSizeInterpretation=0",
             "[Inference]", "MonteCarloReps=999",
             "[Run Options]", "NumberParallelProcesses=1"]
    return write_prm(folder / f"{stem}.prm", lines)


def _write_inputs(folder: Path):
    days, cases = _data()
    (folder / "t.cas").write_text("".join(f"A {k} {str(d).replace('-', '/')}\n" for d, k in zip(days, cases) if k))
    (folder / "t.pop").write_text("A 2020 100000\n")
    (folder / "t.geo").write_text("A 0 0\n")


def run_satscan(binary) -> dict:
    """SaTScan's cluster table (.col.dbf) and its report's analysis summary of every analysis."""
    return run_each(binary, "hphawkes-ttrend-", _write_inputs, _ANALYSES, _prm,
                    lambda prm: {"rows": read_dbf(prm.with_suffix(".col.dbf")),
                                 "summary": report_summary(prm.with_suffix(".txt").read_text())})


@pytest.fixture(scope="module")
def satscan_output():
    return oracle(FIXTURE, run_satscan)


@pytest.mark.parametrize("name", list(_ANALYSES))
def test_temporal_time_trend_matches_satscan(name, satscan_output, tmp_path):
    _write_inputs(tmp_path)
    res = hp.scan.run_prm(_prm(name, tmp_path), seed=1, progress=False, backend="cpu")
    rows = satscan_output[name]["rows"]
    assert len(res.clusters) >= 1 and len(rows) >= 1
    assert_clusters_match(res.clusters, rows)
    summary = satscan_output[name]["summary"]
    if _ANALYSES[name][0] == "0":
        assert res.time_trend is None and "adjusting" not in summary
    else:
        assert time_trend_text(res.time_trend) + "." in summary, summary
        assert time_trend_text(res.time_trend) + "." in hp.scan.outputs_temporal.time_report_text(res)


def test_the_adjustment_finds_the_burst(satscan_output):
    """Unadjusted, SaTScan's most likely cluster ends on the last day (the trend); adjusted for the
    estimated trend, it is the burst of days 80-89 (2020/3/21-3/30)."""
    assert satscan_output["none"]["rows"][0]["END_DATE"] == "2020/7/18"
    top = satscan_output["estimated"]["rows"][0]
    assert (top["START_DATE"], top["END_DATE"]) == ("2020/3/21", "2020/3/30")


def test_expected_cases_follow_their_definition():
    """Unit u's expected cases: C m_u exp(beta u) / sum_v m_v exp(beta v), m_u the population-time of the
    unit (its days: 7-day units counted back from the end, the 4 days left over joining the first); the
    estimated beta solves the profile score sum u c_u = C sum u m_u e^(beta u) / sum m_u e^(beta u)."""
    days, cases = _data()
    res = hp.scan.temporal(days, cases, time_aggregation=7, time_trend="loglinear", n_replicates=9, seed=1,
                           backend="cpu", progress=False)
    n_units = T // 7
    u = np.arange(n_units)
    m = np.full(n_units, 7.0)
    m[0] = T - 7 * (n_units - 1)
    c = np.array([cases[0 if k == 0 else T - 7 * (n_units - k):T - 7 * (n_units - 1 - k)].sum() for k in u])
    assert n_units == 28 and m[0] == 11
    np.testing.assert_array_equal(res.unit_cases, c)
    beta = res.time_trend["beta"] * 7
    e = m * np.exp(beta * u)
    np.testing.assert_allclose(res.unit_expected, c.sum() * e / e.sum(), rtol=1e-12)
    assert (u * c).sum() == pytest.approx(c.sum() * (u * e).sum() / e.sum(), rel=1e-9)
    w, info = time_trend_weights(c, "loglinear", 300.0, unit_days=7)
    assert info["beta"] == pytest.approx(math.log(4.0) / 365.25, rel=1e-15)
    np.testing.assert_allclose(w, np.exp(7 * info["beta"] * u), rtol=1e-14)


def test_refusals(tmp_path):
    days, cases = _data()
    with pytest.raises(ValueError, match="nonparametric.*no purely temporal cluster"):
        hp.scan.temporal(days, cases, time_trend="nonparametric", progress=False)
    with pytest.raises(ValueError, match="model='poisson'"):
        hp.scan.temporal(days, cases, controls=cases + 5, model="bernoulli", time_trend="loglinear", progress=False)
    with pytest.raises(ValueError, match="trend_percent is for"):
        hp.scan.temporal(days, cases, trend_percent=5.0, progress=False)
    _write_inputs(tmp_path)
    prm = _prm("estimated", tmp_path)
    for old, new, match in [("TimeTrendAdjustmentType=3", "TimeTrendAdjustmentType=1", "nonparametric"),
                            ("TimeTrendAdjustmentType=3", "TimeTrendAdjustmentType=4", "nonparametric"),
                            ("PopulationFile=t.pop", "PopulationFile=", "needs a population file")]:
        bad = tmp_path / "bad.prm"
        bad.write_text(prm.read_text().replace(old, new))
        with pytest.raises(ValueError, match=match):
            hp.scan.run_prm(bad, progress=False)


if __name__ == "__main__":  # write the stored SaTScan output (see tests/satscan_oracle.py)
    store(FIXTURE, run_satscan, "test_scan_temporal_time_trend.py")
