"""The discrete Poisson space-time scan adjusted for a time trend (hp.scan.space_time(time_trend=...),
hphawkes_py.scan.time_trend) against SaTScan 10.3.2 run on the same data (tests/satscan_oracle.py):
nonparametric (TimeTrendAdjustmentType=1), log-linear by a given yearly percentage (2) and log-linear
estimated from the data (3), retrospective and prospective, through the Python API and run_prm. The
clusters' locations, days, cases, expected cases and LLRs agree with SaTScan's to 1e-6, their Monte
Carlo p-values within the binomial error, and the trend SaTScan reports to its 6 printed digits. The
expected cases are also checked against their definition (the naive sums below), and the data carry a
trend strong enough that the unadjusted scan finds a different most likely cluster (the adjustment
matters)."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import hphawkes_py as hp
from hphawkes_py.scan.time_trend import time_trend_text, time_trend_weights
from satscan_oracle import assert_clusters_match, oracle, read_clusters, run_each, store, stored, write_prm

FIXTURE = stored("time_trend")
START = np.datetime64("2024-01-01")
T = 60
#: analysis -> (TimeTrendAdjustmentType, TimeTrendPercentage, AnalysisType)
_ANALYSES = {
    "none": ("0", "0", "3"),
    "nonparametric": ("1", "0", "3"),
    "percent 400": ("2", "400", "3"),
    "percent -60": ("2", "-60", "3"),
    "estimated": ("3", "0", "3"),
    "estimated prospective": ("3", "0", "4"),
    "log-quadratic": ("5", "0", "3"),
}
_KW = {"0": {}, "1": dict(time_trend="nonparametric"), "3": dict(time_trend="loglinear"),
       "5": dict(time_trend="logquadratic")}


def _data():
    """36 locations near the nodes of a 6 x 6 grid (1 km apart, moved up to 0.2 km so that no two are at
    the same distance from a third: SaTScan breaks such ties differently) with 2,000-6,000 persons each,
    60 days of Poisson cases whose rate grows 2 % a day for everyone, and an outbreak at three
    neighbouring locations on days 20-26 (three times the rate): rows (location, day, cases) with
    cases > 0."""
    rng = np.random.default_rng(2024)
    gx, gy = np.meshgrid(np.arange(6.0), np.arange(6.0))
    xy = np.round(np.c_[gx.ravel(), gy.ravel()] + rng.uniform(-0.2, 0.2, size=(36, 2)), 4)
    pop = rng.integers(2000, 6001, size=36)
    lam = 2e-4 * pop[:, None] * np.exp(0.02 * np.arange(T))[None, :]
    lam[[7, 8, 13], 20:27] *= 3.0
    c = rng.poisson(lam)
    loc, day = np.nonzero(c)
    return xy, pop, loc, day, c[loc, day]


def _ids():
    return [f"L{i:02d}" for i in range(36)]


def _write_inputs(folder: Path):
    xy, pop, loc, day, n = _data()
    ids = _ids()
    (folder / "t.geo").write_text("".join(f"{k} {x:.4f} {y:.4f}\n" for k, (x, y) in zip(ids, xy)))
    (folder / "t.pop").write_text("".join(f"{k} 2024 {p}\n" for k, p in zip(ids, pop)))
    dates = [str(START + d).replace("-", "/") for d in day]
    (folder / "t.cas").write_text("".join(f"{ids[l]} {k} {d}\n" for l, k, d in zip(loc, n, dates)))


def space_time_prm(folder: Path, stem, model, analysis_type, data, adjustments, max_days=14) -> Path:
    """A SaTScan parameter file ``<stem>.prm`` in ``folder`` for the data :func:`_write_inputs` writes there
    (days 2024/1/1-2/29, Cartesian coordinates): ``ModelType=model``, ``AnalysisType=analysis_type``
    (prospective "4": from the last day), the ``data`` file lines besides the case and coordinates files,
    the ``[Space and Time Adjustments]`` lines ``adjustments``, circles up to 50 % of the population,
    clusters up to ``max_days`` days, 999 replicates with every p-value reported, the cluster table as dBase."""
    lines = ["[Input]", "CaseFile=t.cas", *data, "CoordinatesFile=t.geo", "PrecisionCaseTimes=3",
             "StartDate=2024/1/1", "EndDate=2024/2/29", "CoordinatesType=0",
             "[Analysis]", f"AnalysisType={analysis_type}", f"ModelType={model}", "ScanAreas=1",
             "TimeAggregationUnits=3", "TimeAggregationLength=1",
             "[Output]", f"ResultsFile={stem}.txt", "OutputGoogleEarthKML=n", "OutputShapefiles=n",
             "MostLikelyClusterEachCentroidDBase=y", "LaunchMapViewer=n",
             "[Space and Time Adjustments]", *adjustments,
             "[Spatial Window]", "MaxSpatialSizeInPopulationAtRisk=50",
             "[Temporal Window]", f"MaxTemporalSize={max_days}", "MaxTemporalSizeInterpretation=1",
             "[Inference]", "MonteCarloReps=999", "PValueReportType=1",
             "[Clusters Reported]", "CriteriaForReportingSecondaryClusters=0",
             "[Run Options]", "NumberParallelProcesses=1"]
    if analysis_type == "4":
        lines.insert(lines.index("[Analysis]") + 1, "ProspectiveStartDate=2024/2/29")
    return write_prm(folder / f"{stem}.prm", lines)


def _prm(name, folder: Path) -> Path:
    kind, pct, atype = _ANALYSES[name]
    stem = name.replace(" ", "_").replace("-", "m")
    return space_time_prm(folder, stem, "0", atype, ["PopulationFile=t.pop"],
                          [f"TimeTrendAdjustmentType={kind}", f"TimeTrendPercentage={pct}"])


def run_satscan(binary) -> dict:
    """SaTScan's clusters (:func:`satscan_oracle.read_clusters`) of every analysis of _ANALYSES."""
    return run_each(binary, "hphawkes-trend-", _write_inputs, _ANALYSES, _prm, read_clusters)


@pytest.fixture(scope="module")
def satscan_output():
    return oracle(FIXTURE, run_satscan)


def _ours(name):
    kind, pct, atype = _ANALYSES[name]
    xy, pop, loc, day, n = _data()
    # every location is a centre: a row without cases for each (SaTScan reads the coordinates file)
    ids = np.array(_ids(), dtype=object)
    rows_loc = np.r_[loc, np.arange(36)]
    rows_day = np.r_[day, np.zeros(36, dtype=int)]
    rows_n = np.r_[n, np.zeros(36, dtype=int)]
    order = np.argsort(rows_loc, kind="stable")
    rows_loc, rows_day, rows_n = rows_loc[order], rows_day[order], rows_n[order]
    kw = dict(_KW.get(kind, dict(time_trend="loglinear", trend_percent=float(pct))))
    return hp.scan.space_time(xy[rows_loc], rows_n, START + rows_day, population=pop[rows_loc], model="poisson",
                              max_population=0.5, max_temporal=14, prospective=atype == "4", min_cases=2,
                              n_replicates=999, study_period=(START, START + T - 1), location_ids=ids[rows_loc],
                              seed=1, progress=False, backend="cpu", **kw)


def _compare(res, theirs):
    assert_clusters_match(res.clusters, theirs["rows"], theirs["ids"])


@pytest.mark.parametrize("name", list(_ANALYSES))
def test_time_trend_matches_satscan(name, satscan_output):
    theirs = satscan_output[name]
    res = _ours(name)
    _compare(res, theirs)
    kind = _ANALYSES[name][0]
    if kind == "0":
        assert res.time_trend is None
        assert "adjusting" not in theirs["summary"]
    else:
        # SaTScan's statement of the adjustment, with the trend to its printed digits
        assert time_trend_text(res.time_trend) + "." in theirs["summary"], theirs["summary"]


def test_adjustment_changes_the_most_likely_cluster(satscan_output):
    """The unadjusted scan's most likely cluster is the end of the study period (the trend), at four
    locations; adjusted (nonparametrically or for the estimated trend), it is the outbreak at location
    13 on days 20-26 (SaTScan's rows; ours equal them in test_time_trend_matches_satscan)."""
    assert len(satscan_output["none"]["ids"][0]) > 1 and satscan_output["none"]["rows"][0]["END_DATE"] == "2024/2/29"
    for name in ("nonparametric", "estimated"):
        assert satscan_output[name]["ids"][0] == ["L13"], name
        assert (satscan_output[name]["rows"][0]["START_DATE"], satscan_output[name]["rows"][0]["END_DATE"]) == \
            ("2024/1/21", "2024/1/27")


def test_expected_cases_follow_their_definition():
    """A cylinder's expected cases: E_Z sum_{t in I} w_t / sum_t w_t with E_Z = C P_Z / P, w the day
    weights (cases per day, exp(beta t)); the log-linear beta from a yearly percentage, and the
    estimated one a root of the profile score."""
    xy, pop, loc, day, n = _data()
    C = int(n.sum())
    day_cases = np.bincount(day, weights=n, minlength=T)
    for name in ("nonparametric", "percent 400", "estimated"):
        res = _ours(name)
        w, info = time_trend_weights(day_cases, *((_KW[_ANALYSES[name][0]]["time_trend"],) if name != "percent 400"
                                                   else ("loglinear", 400.0)))
        if name == "nonparametric":
            np.testing.assert_array_equal(w, day_cases)
        else:
            beta = info["beta"]
            np.testing.assert_allclose(w, np.exp(beta * np.arange(T)), rtol=1e-15)
            if name == "percent 400":
                assert beta == pytest.approx(math.log(5.0) / 365.25, rel=1e-15)
                assert info["annual_percent"] == pytest.approx(400.0, rel=1e-12)
            else:  # the maximum likelihood trend: sum t c_t = C sum t e^(bt) / sum e^(bt)
                t = np.arange(T)
                e = np.exp(beta * t)
                assert (t * day_cases).sum() == pytest.approx(C * (t * e).sum() / e.sum(), rel=1e-9)
                assert 1.0 < info["daily_percent"] < 3.0  # the simulated 2 % a day
        ids = np.array(_ids())
        for row in res.clusters.head(3).itertuples():
            members = np.flatnonzero(np.isin(ids, [str(v) for v in row.location_ids]))
            a, b = ((pd.Timestamp(v) - pd.Timestamp(START)).days for v in (row.start, row.end))
            mu = C * pop[members].sum() / pop.sum() * w[a:b + 1].sum() / w.sum()
            assert row.expected == pytest.approx(mu, rel=1e-12)
            assert row.cases == int(n[np.isin(loc, members) & (day >= a) & (day <= b)].sum())


def test_run_prm_reads_the_adjustment(tmp_path, satscan_output):
    """run_prm maps TimeTrendAdjustmentType 1-3 and 5 (and TimeTrendPercentage) to space_time's time_trend
    (4: tests/test_scan_time_stratified.py) and refuses others by name."""
    _write_inputs(tmp_path)
    for name, adjustment in (("nonparametric", "nonparametric"), ("percent -60", "loglinear"),
                             ("estimated", "loglinear"), ("log-quadratic", "logquadratic")):
        res = hp.scan.run_prm(_prm(name, tmp_path), seed=1, progress=False, backend="cpu")
        _compare(res, satscan_output[name])
        assert res.time_trend["adjustment"] == adjustment
    prm = _prm("none", tmp_path)
    for kind, what in (("6", "must be 0 \\(none\\)"),):
        text = prm.read_text().replace("TimeTrendAdjustmentType=0", f"TimeTrendAdjustmentType={kind}")
        bad = tmp_path / f"bad{kind}.prm"
        bad.write_text(text)
        with pytest.raises(ValueError, match=f"TimeTrendAdjustmentType='{kind}'.*{what}"):
            hp.scan.run_prm(bad, seed=1, progress=False, backend="cpu", n_replicates=9)
    bad.write_text(prm.read_text().replace("TimeTrendAdjustmentType=0", "TimeTrendAdjustmentType=2")
                   .replace("TimeTrendPercentage=0", "TimeTrendPercentage=-100"))
    with pytest.raises(ValueError, match="TimeTrendPercentage.*above -100"):
        hp.scan.run_prm(bad, seed=1, progress=False, backend="cpu", n_replicates=9)


@pytest.mark.parametrize("kwargs, message", [
    (dict(time_trend="quadratic"), "time_trend"),
    (dict(trend_percent=5.0), "trend_percent is for time_trend='loglinear'"),
    (dict(time_trend="nonparametric", trend_percent=5.0), "trend_percent is for time_trend='loglinear'"),
    (dict(time_trend="loglinear", trend_percent=-100.0), "above -100"),
    (dict(time_trend="loglinear", trend_percent=float("nan")), "above -100"),
])
def test_bad_time_trend_settings_are_refused(kwargs, message):
    xy, pop, loc, day, n = _data()
    with pytest.raises(ValueError, match=message):
        hp.scan.space_time(xy[loc], n, day, population=pop[loc], n_replicates=9, progress=False, backend="cpu",
                           **kwargs)


def test_bernoulli_and_degenerate_trends_are_refused():
    xy, pop, loc, day, n = _data()
    with pytest.raises(ValueError, match="model='poisson'"):
        hp.scan.space_time(xy[loc], n, day, controls=pop[loc], model="bernoulli", time_trend="loglinear",
                           n_replicates=9, progress=False, backend="cpu")
    # every case on the last day: SaTScan stops (an infinite trend); one case: undefined
    with pytest.raises(ValueError, match="infinite"):
        time_trend_weights([0, 0, 0, 5], "loglinear")
    with pytest.raises(ValueError, match="undefined"):
        time_trend_weights([0, 1, 0, 0], "loglinear")


@pytest.mark.parametrize("time_trend", ["nonparametric", "loglinear"])
def test_cuda_engine_on_the_emulator_equals_cpu(time_trend):
    """The CUDA cylinder kernels read the adjusted day sums as the CPU engine does: the same clusters and
    null maxima bit for bit (on the emulator)."""
    rng = np.random.default_rng(5)
    xy = rng.uniform(0, 10, (12, 2))
    loc, day = np.indices((12, 10)).reshape(2, -1)
    cases = rng.poisson(0.3 * np.exp(0.1 * day))
    kw = dict(population=np.full(loc.size, 1000), n_replicates=19, seed=1, progress=False, max_temporal=4,
              time_trend=time_trend)
    cpu = hp.scan.space_time(xy[loc], cases, day, backend="cpu", **kw)
    emu = hp.scan.space_time(xy[loc], cases, day, backend="emulator", **kw)
    np.testing.assert_array_equal(emu.null_llr, cpu.null_llr)
    np.testing.assert_array_equal(emu.clusters.log_likelihood_ratio, cpu.clusters.log_likelihood_ratio)
    np.testing.assert_array_equal(emu.clusters.expected, cpu.clusters.expected)
    assert cpu.null_llr.max() > 0 and emu.time_trend == cpu.time_trend

def test_module_examples_run():
    import doctest

    from hphawkes_py.scan import time_trend

    result = doctest.testmod(time_trend, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 5 and result.failed == 0


def test_log_quadratic_fit_solves_its_score_equations():
    """fit_quadratic_trend: at the estimate X'(c - mu) = 0 (mu = m exp(X b), X = [1, t + 1, (t + 1)^2]); with
    fewer than 3 days with cases the trend is undefined."""
    from hphawkes_py.scan.cpu_temporal import TREND_CONVERGED, TREND_UNDEFINED
    from hphawkes_py.scan.time_trend import fit_quadratic_trend

    xy, pop, loc, day, n = _data()
    c = np.bincount(day, weights=n, minlength=T)
    m = np.full(T, c.sum() / T)
    status, b = fit_quadratic_trend(c, m, 1e-10)
    assert status == TREND_CONVERGED
    u = np.arange(1, T + 1.0)
    X = np.column_stack([np.ones(T), u, u * u])
    mu = m * np.exp(X @ np.array(b))
    np.testing.assert_allclose(X.T @ (c - mu), 0.0, atol=1e-6 * c.sum() * T * T)
    assert fit_quadratic_trend([0, 5, 0, 3, 0], np.ones(5))[0] == TREND_UNDEFINED
    assert fit_quadratic_trend([9, 0, 0, 0], np.ones(4))[0] == TREND_UNDEFINED


if __name__ == "__main__":  # write the stored SaTScan output (see tests/satscan_oracle.py)
    store(FIXTURE, run_satscan, "test_scan_time_trend.py")
