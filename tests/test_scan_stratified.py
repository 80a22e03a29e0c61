"""The space-time scans adjusted by stratified randomization against SaTScan 10.3.2 run on the same data
(tests/satscan_oracle.py), through the Python API and run_prm:

* in time (hp.scan.space_time(time_trend="stratified"), SaTScan's ``TimeTrendAdjustmentType=4``): the
  discrete Poisson and Bernoulli models, retrospective and prospective. A cylinder is scored against its
  own time window's totals (SaTScan's test statistic), and the Monte Carlo keeps every day's cases on
  that day;
* in space (space_time(spatial_adjustment="stratified"), ``SpatialAdjustmentType=1``): the discrete
  Poisson model, alone and with the nonparametric and the estimated log-linear time trends. Every
  location's expected cases are its observed ones, and the Monte Carlo keeps them there.

The clusters' locations, days, cases, expected cases and statistics agree with SaTScan's to 1e-6, their
p-values within the binomial error. The kernels are also checked against a naive NumPy scan
(tests/naive_scan.py) and the draws against their definition."""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest

import hphawkes_py as hp
from satscan_oracle import assert_clusters_match, edit_prm, oracle, read_clusters, run_each, store, stored
from test_scan_time_trend import START, T, _data, _ids, space_time_prm
from test_scan_time_trend import _write_inputs as write_trend_inputs

FIXTURE = stored("stratified")
#: analysis -> (ModelType, AnalysisType, TimeTrendAdjustmentType, SpatialAdjustmentType)
_ANALYSES = {
    "poisson retrospective": ("0", "3", "4", "0"),
    "poisson prospective": ("0", "4", "4", "0"),
    "bernoulli retrospective": ("1", "3", "4", "0"),
    "bernoulli prospective": ("1", "4", "4", "0"),
    "spatial": ("0", "3", "0", "1"),
    "spatial nonparametric": ("0", "3", "1", "1"),
    "spatial estimated trend": ("0", "3", "3", "1"),
    "spatial nonparametric type 2": ("0", "3", "0", "2"),
    "spatial nonparametric type 2 time stratified": ("0", "3", "4", "2"),
}
TIME_STRATIFIED = [k for k, v in _ANALYSES.items() if v[2] == "4" and v[3] == "0"]
SPACE_STRATIFIED = [k for k, v in _ANALYSES.items() if v[3] == "1"]
SPACE_NONPARAMETRIC = [k for k, v in _ANALYSES.items() if v[3] == "2"]
#: the longest cluster, days: 10 in the spatially adjusted analyses (with 14, equal days and the data's
#: cases tie the most likely cluster with the one a day later: same cases, same expectation, and which is
#: found first turns on the last bit of the sums, SaTScan's from the study's end, ours from its start; the
#: choice then changes which secondary clusters overlap it)
_MAX_DAYS = {k: 10 if _ANALYSES[k][3] != "0" else 14 for k in _ANALYSES}
_TREND = {"0": None, "1": "nonparametric", "3": "loglinear", "4": "stratified"}


def _controls(pop):
    """Controls per location and day for the Bernoulli analyses: a fiftieth of the population, every day."""
    return np.round(pop / 50).astype(int)


def _write_inputs(folder: Path):
    """The time-trend tests' files (coordinates, population, cases) and the controls of every day."""
    write_trend_inputs(folder)
    xy, pop, loc, day, n = _data()
    ids = _ids()
    ctl = _controls(pop)
    (folder / "t.ctl").write_text("".join(f"{ids[l]} {ctl[l]} {str(START + d).replace('-', '/')}\n"
                                          for l in range(len(ids)) for d in range(T)))


def _prm(name, folder: Path) -> Path:
    model, atype, trend, spatial = _ANALYSES[name]
    data = ["PopulationFile=t.pop"] if model == "0" else ["ControlFile=t.ctl"]
    return space_time_prm(folder, name.replace(" ", "_"), model, atype, data,
                          [f"TimeTrendAdjustmentType={trend}", f"SpatialAdjustmentType={spatial}"], _MAX_DAYS[name])


def run_satscan(binary) -> dict:
    """SaTScan's clusters (:func:`satscan_oracle.read_clusters`) of every analysis of _ANALYSES."""
    return run_each(binary, "hphawkes-stratified-", _write_inputs, _ANALYSES, _prm, read_clusters)


@pytest.fixture(scope="module")
def satscan_output():
    return oracle(FIXTURE, run_satscan)


def _ours(name, **kw):
    """The analysis through the Python API: one row per location and day with its cases (and, Bernoulli, its
    controls); every location has rows, so every location is a centre as in SaTScan."""
    model, atype, trend, spatial = _ANALYSES[name]
    adjust = {"time_trend": _TREND[trend], "spatial_adjustment": {"1": "stratified", "2": "nonparametric"}.get(spatial)}
    xy, pop, loc, day, n = _data()
    L = len(pop)
    c_lt = np.zeros((L, T), dtype=int)
    np.add.at(c_lt, (loc, day), n)
    rl, rd = np.indices((L, T)).reshape(2, -1)
    ids = np.array(_ids(), dtype=object)
    data = dict(population=pop[rl]) if model == "0" else \
        dict(controls=_controls(pop)[rl], model="bernoulli")
    return hp.scan.space_time(xy[rl], c_lt.ravel(), START + rd, max_population=0.5, max_temporal=_MAX_DAYS[name],
                              prospective=atype == "4", min_cases=2, n_replicates=999,
                              study_period=(START, START + T - 1), location_ids=ids[rl], seed=1, progress=False,
                              **{"backend": "cpu", **adjust, **data, **kw})


def _daily_measure(name, members):
    """``(m, rate)`` (T,) each: a set of locations' measure of every day and the day's cases per unit of
    measure, its expected cases ``m rate`` that day (Poisson: population at the day's cases per person;
    Bernoulli: persons, cases and controls, at the day's proportion of cases)."""
    model = _ANALYSES[name][0]
    xy, pop, loc, day, n = _data()
    day_cases = np.bincount(day, weights=n, minlength=T)
    if model == "0" and _ANALYSES[name][3] == "2":  # nonparametric spatial: the locations' cases as measure
        cases = np.bincount(loc, weights=n, minlength=len(pop))
        return np.full(T, float(cases[members].sum())), day_cases / cases.sum()
    if model == "0":
        return np.full(T, float(pop[members].sum())), day_cases / pop.sum()
    persons = np.zeros((len(pop), T))
    np.add.at(persons, (loc, day), n)
    persons += _controls(pop)[:, None]
    return persons[members].sum(axis=0), day_cases / persons.sum(axis=0)


def _with_expected(name, theirs):
    """SaTScan's rows with the expected cases of their definition, the sum over the cluster's days of its
    daily expected cases (:func:`_daily_measure`). SaTScan 10.3.2 writes something else where a cluster
    ends before the study period: its ``CCluster::GetExpectedCount`` takes the last day's cumulative
    measure, the measure from that day to the end of the study period, at that day's rate. That value is
    checked here against SaTScan's, so that the two agree for the clusters that end on the last day."""
    ids = _ids()
    rows = []
    for r, members in zip(theirs["rows"], theirs["ids"]):
        m, rate = _daily_measure(name, [ids.index(k) for k in members])
        a, b = ((np.datetime64("-".join(f"{int(x):02d}" for x in r[k].split("/"))) - START).astype(int)
                for k in ("START_DATE", "END_DATE"))
        satscan = (m[a:b] * rate[a:b]).sum() + (m[b:] * (rate[b:] if _ANALYSES[name][0] == "0" else rate[b])).sum()
        assert float(r["EXPECTED"]) == pytest.approx(satscan, rel=1e-9)
        rows.append(dict(r, EXPECTED=(m[a:b + 1] * rate[a:b + 1]).sum()))
    return rows


@pytest.mark.parametrize("name", TIME_STRATIFIED)
def test_time_stratified_matches_satscan(name, satscan_output):
    """Locations, days, cases, expected cases, test statistics and p-values against SaTScan's; the relative
    risks against the windows' own totals too, and SaTScan's statement of the adjustment."""
    theirs = satscan_output[name]
    res = _ours(name)
    rows = _with_expected(name, theirs)
    assert_clusters_match(res.clusters, rows, theirs["ids"])
    for k, r in enumerate(rows[:len(res.clusters)]):
        assert res.clusters.relative_risk.iloc[k] == pytest.approx(float(r["REL_RISK"]), rel=1e-8)
        assert res.clusters.population.iloc[k] == pytest.approx(float(r["POPULATION"]))
    assert "adjusting for time with stratified randomization" in theirs["summary"]
    assert res.time_trend == {"adjustment": "stratified"}


@pytest.mark.parametrize("name", SPACE_STRATIFIED)
def test_space_stratified_matches_satscan(name, satscan_output):
    """Locations, days, cases, expected cases, LLRs and p-values against SaTScan's; the expected cases are
    the circle's observed cases times its days' share of the day weights, and SaTScan's statement of the
    adjustments."""
    theirs = satscan_output[name]
    res = _ours(name)
    xy, pop, loc, day, n = _data()
    c_lt = np.zeros((len(pop), T))
    np.add.at(c_lt, (loc, day), n)
    w = {"0": np.ones(T), "1": c_lt.sum(axis=0)}.get(_ANALYSES[name][2])
    assert_clusters_match(res.clusters, theirs["rows"], theirs["ids"])
    assert "adjusting for purely spatial clusters with stratified randomization." in theirs["summary"]
    assert res.spatial_adjustment == "stratified"
    ids = _ids()
    for row in res.clusters.head(3).itertuples():
        members = [ids.index(str(k)) for k in row.location_ids]
        a, b = ((np.datetime64(v, "D") - START).astype(int) for v in (row.start, row.end))
        if w is not None:
            assert row.expected == pytest.approx(c_lt[members].sum() * w[a:b + 1].sum() / w.sum(), rel=1e-12)
        assert row.cases == c_lt[members, a:b + 1].sum()
    report = hp.scan.outputs.report_text(res)
    assert "adjusting for purely spatial clusters with stratified randomization." in report


@pytest.mark.parametrize("name", SPACE_NONPARAMETRIC)
def test_space_nonparametric_matches_satscan(name, satscan_output):
    """SaTScan's SpatialAdjustmentType=2: locations, days, cases, expected cases (every location's its
    observed cases over the study period, spread over the days: C_Z days / T, or time-stratified C_Z C_I / C),
    LLRs and p-values against SaTScan's, through the API and run_prm, and its statement of the adjustment."""
    theirs = satscan_output[name]
    res = _ours(name)
    # time-stratified: SaTScan's expected cases of a cluster that ends before the study period are another
    # quantity (see _with_expected)
    rows = _with_expected(name, theirs) if _ANALYSES[name][2] == "4" else theirs["rows"]
    assert_clusters_match(res.clusters, rows, theirs["ids"])
    assert "adjusting for purely spatial clusters nonparametrically." in theirs["summary"]
    assert res.spatial_adjustment == "nonparametric"
    xy, pop, loc, day, n = _data()
    c_lt = np.zeros((len(pop), T))
    np.add.at(c_lt, (loc, day), n)
    ids = _ids()
    for row in res.clusters.head(3).itertuples():
        members = [ids.index(str(k)) for k in row.location_ids]
        a, b = ((np.datetime64(v, "D") - START).astype(int) for v in (row.start, row.end))
        share = c_lt[:, a:b + 1].sum() / c_lt.sum() if _ANALYSES[name][2] == "4" else (b - a + 1) / T
        assert row.expected == pytest.approx(c_lt[members].sum() * share, rel=1e-12)
    head = hp.scan.outputs.report_text(res).split("\n_____")[0].splitlines()[1:]
    assert theirs["summary"].endswith(" ".join(head))
    with tempfile.TemporaryDirectory() as d:
        _write_inputs(Path(d))
        via = hp.scan.run_prm(_prm(name, Path(d)), seed=1, progress=False, backend="cpu")
    assert_clusters_match(via.clusters, rows, theirs["ids"])


def test_space_stratified_draws_keep_every_locations_cases():
    """The space-stratified null: every replicate has each location's observed cases there, spread over the
    days in proportion to their weights (means within 5 standard errors)."""
    from hphawkes_py.scan.null_draws import draw_cases_by_location

    rng = np.random.default_rng(4)
    L, T_, R = 6, 9, 4000
    loc_cases = rng.integers(0, 40, L)
    w = rng.uniform(0.5, 3, T_)
    seeds = np.random.SeedSequence(9).spawn(R)
    M = draw_cases_by_location(w, loc_cases, seeds)
    assert M.shape == (L, T_, R)
    np.testing.assert_array_equal(M.sum(axis=1), np.repeat(loc_cases[:, None], R, axis=1))
    p = w / w.sum()
    mean = loc_cases[:, None] * p[None, :]
    se = np.sqrt(loc_cases[:, None] * p * (1 - p) / R) + 1e-12
    assert (np.abs(M.mean(axis=2) - mean) <= 5 * se + 1e-9).all()
    np.testing.assert_array_equal(draw_cases_by_location(w, loc_cases, seeds[7:9]), M[:, :, 7:9])


def test_stratification_changes_the_clusters(satscan_output):
    """The data's rate grows 2 % a day for everyone: unadjusted, the end of the study period is the most
    likely cluster; stratified by day, the outbreak at L13 on days 20-26 is (retrospective)."""
    plain = _ours("poisson retrospective", time_trend=None)
    assert plain.clusters.end.iloc[0] == START + T - 1 and plain.clusters.n_locations.iloc[0] > 1
    for name in ("poisson retrospective", "bernoulli retrospective"):
        assert satscan_output[name]["ids"][0] == ["L13"]


def test_run_prm_reads_the_adjustment(tmp_path, satscan_output):
    """run_prm maps TimeTrendAdjustmentType=4 to time_trend="stratified" for both models, and its report
    names the statistic as SaTScan does."""
    _write_inputs(tmp_path)
    for name in ("poisson retrospective", "bernoulli prospective", "spatial nonparametric"):
        prm = _prm(name, tmp_path)
        res = hp.scan.run_prm(prm, seed=1, progress=False, backend="cpu", write_results=True)
        report = prm.with_suffix(".txt").read_text()
        if name in SPACE_STRATIFIED:
            assert_clusters_match(res.clusters, satscan_output[name]["rows"], satscan_output[name]["ids"])
            assert "adjusting for time nonparametrically\nadjusting for purely spatial clusters with stratified " \
                   "randomization." in report
            continue
        assert_clusters_match(res.clusters, _with_expected(name, satscan_output[name]), satscan_output[name]["ids"])
        assert "adjusting for time with stratified randomization" in report
        assert "Test statistic" in report and "Log likelihood ratio" not in report
    # SaTScan's limits: a spatially adjusted analysis's clusters last at most half the study period; the
    # spatial adjustment is for the Poisson model, not with the time-stratified one
    prm = _prm("spatial", tmp_path)
    edits = [
        ({"MaxTemporalSize=10": "MaxTemporalSize=60",
          "MaxTemporalSizeInterpretation=1": "MaxTemporalSizeInterpretation=0"},
         r"MaxTemporalSize='60' .* \(0, 50\] percent"),
        ({"TimeTrendAdjustmentType=0": "TimeTrendAdjustmentType=4"}, "not supported together"),
        ({"ModelType=0": "ModelType=1", "PopulationFile=t.pop": "ControlFile=t.ctl"}, "discrete Poisson space-time"),
    ]
    for edit, message in edits:
        bad = edit_prm(prm, edit, tmp_path / "bad.prm")
        with pytest.raises(ValueError, match=message):
            hp.scan.run_prm(bad, seed=1, progress=False, backend="cpu", n_replicates=9)


def test_run_prm_refuses_the_spatial_adjustment_of_a_purely_spatial_analysis(tmp_path):
    import shutil

    for f in hp.datasets.path("scan/satscan_sample_data").iterdir():
        shutil.copy(f, tmp_path / f.name)
    prm = tmp_path / "NHumbersideSpatialBernoulli.prm"
    prm.write_text(prm.read_text().replace("SpatialAdjustmentType=0", "SpatialAdjustmentType=1"))
    with pytest.raises(ValueError, match="SpatialAdjustmentType='1' .* for the discrete Poisson space-time"):
        hp.scan.run_prm(prm, n_replicates=9, progress=False, backend="cpu")


@pytest.mark.parametrize("bern", [False, True])
@pytest.mark.parametrize("prospective", [False, True])
def test_kernels_against_numpy(bern, prospective):
    """The CPU kernel (pruned and day by day) and the CUDA kernel on the emulator: every centre's best
    time-stratified cylinder of every replicate equals a plain NumPy enumeration (tests/naive_scan.py), the
    two CPU loops and the emulator bit for bit; the statistic differs from the unstratified one."""
    from naive_scan import space_time_stratified
    from hphawkes_py.scan.cpu_space_time import cylinder_batch
    from hphawkes_py.scan.engine import klogk_table, make_space_time_engine
    from hphawkes_py.scan.null_draws import draw_cases_by_day
    from hphawkes_py.scan.windows import build_windows

    rng = np.random.default_rng(11)
    L, T_, R, max_t = 14, 12, 40, 5
    xy = rng.uniform(0, 10, (L, 2))
    day_cases = rng.integers(3, 20, T_) * (1 + np.arange(T_) // 3)
    seeds = np.random.SeedSequence(3).spawn(R)
    if bern:
        P = rng.integers(2, 9, (L, T_)) * 3
        M = draw_cases_by_day(P, day_cases, seeds, persons=True)
        sz = P.sum(axis=1).astype(float)
        windows = build_windows(xy, xy, sz, 0.4 * sz.sum())
        N = int(P.sum())
        strata, dcum = (day_cases, P.sum(axis=0)), np.zeros(T_ + 1)
    else:
        P = None
        pop = rng.integers(100, 1000, L).astype(float)
        M = draw_cases_by_day(pop, day_cases, seeds)
        windows = build_windows(xy, xy, pop, 0.4 * pop.sum())
        Ez = day_cases.sum() * pop / pop.sum()
        offsets, neighbors, _, boundary = windows
        csum = np.concatenate([np.cumsum(Ez[neighbors[offsets[i]:offsets[i + 1]]]) for i in range(L)])
        windows = (offsets, neighbors, csum, boundary)
        N = int(day_cases.sum())
        strata, dcum = (day_cases, day_cases), np.r_[0.0, np.cumsum(day_cases)].astype(float)
    C = int(day_cases.sum())
    t_end_min = T_ - 1 if prospective else 0
    kl = klogk_table(N)
    args = (windows, M, P, dcum, kl, C, N, max_t, t_end_min, 2, "high")
    b0, a0 = cylinder_batch(*args, want_arg=True, pruned=False, strata=strata)
    b1, a1 = cylinder_batch(*args, want_arg=True, pruned=True, strata=strata)
    np.testing.assert_array_equal(b1, b0)
    np.testing.assert_array_equal(a1, a0)
    ref = space_time_stratified(windows, M, day_cases, P, max_t=max_t, prospective=prospective)
    assert (ref > 0).mean() > 0.5
    np.testing.assert_allclose(b0, ref, rtol=1e-10, atol=1e-10)
    plain, _ = cylinder_batch(*args, pruned=False)
    assert not np.allclose(plain, b0)
    emu = make_space_time_engine(windows, dcum, kl, C, max_t, t_end_min, 2, "high", backend="emulator", persons=P,
                                 strata=strata)
    e_best, e_arg = emu.batch(M, want_arg=True)
    np.testing.assert_array_equal(e_best, b0)
    np.testing.assert_array_equal(e_arg, a0)


@pytest.mark.parametrize("model", ["poisson", "bernoulli"])
def test_cuda_engine_on_the_emulator_equals_cpu(model):
    """The whole time-stratified analysis on the CUDA kernels (emulator) and on the CPU engine: the same
    clusters and null maxima, bit for bit."""
    rng = np.random.default_rng(6)
    xy = rng.uniform(0, 10, (12, 2))
    loc, day = np.indices((12, 10)).reshape(2, -1)
    cases = rng.poisson(0.3 * np.exp(0.1 * day))
    data = dict(population=np.full(loc.size, 1000)) if model == "poisson" else \
        dict(controls=rng.integers(1, 6, loc.size), model="bernoulli")
    kw = dict(n_replicates=19, seed=1, progress=False, max_temporal=4, time_trend="stratified", **data)
    cpu = hp.scan.space_time(xy[loc], cases, day, backend="cpu", **kw)
    emu = hp.scan.space_time(xy[loc], cases, day, backend="emulator", **kw)
    assert cpu.null_llr.max() > 0
    np.testing.assert_array_equal(emu.null_llr, cpu.null_llr)
    np.testing.assert_array_equal(emu.clusters.log_likelihood_ratio, cpu.clusters.log_likelihood_ratio)
    np.testing.assert_array_equal(emu.clusters.expected, cpu.clusters.expected)


def test_draws_keep_every_days_cases():
    """The time-stratified null: every replicate has each day's observed cases on that day (Bernoulli: never
    more cases than persons in a cell); the counts' means are each day's cases shared in proportion to the
    expected counts (Poisson) or the cell's persons (Bernoulli), within 5 standard errors; the same seeds
    give the same counts whatever the batch."""
    from hphawkes_py.scan.null_draws import draw_cases_by_day

    rng = np.random.default_rng(2)
    L, T_, R = 9, 7, 4000
    day_cases = rng.integers(0, 30, T_)
    day_cases[0] = 0
    seeds = np.random.SeedSequence(8).spawn(R)
    w = rng.uniform(1, 5, L)
    P = rng.integers(0, 12, (L, T_))
    P[:, 3] += 40  # a day where most persons are cases is drawn through the complement
    day_cases[3] = int(0.8 * P[:, 3].sum())
    for persons, weights in ((False, w), (True, P)):
        M = draw_cases_by_day(weights, day_cases, seeds, persons=persons)
        assert M.shape == (L, T_, R)
        np.testing.assert_array_equal(M.sum(axis=0), np.repeat(day_cases[:, None], R, axis=1))
        if persons:
            assert (M <= P[:, :, None]).all()
            p = P / np.maximum(P.sum(axis=0), 1)
            var = day_cases * p * (1 - p) * (P.sum(axis=0) - day_cases) / np.maximum(P.sum(axis=0) - 1, 1)
        else:
            p = np.repeat((w / w.sum())[:, None], T_, axis=1)
            var = day_cases * p * (1 - p)
        mean = day_cases * p
        se = np.sqrt(var / R) + 1e-12
        assert (np.abs(M.mean(axis=2) - mean) <= 5 * se + 1e-9).all()
        np.testing.assert_array_equal(draw_cases_by_day(weights, day_cases, seeds[5:9], persons=persons),
                                      M[:, :, 5:9])


@pytest.mark.parametrize("kwargs, message", [
    (dict(time_trend="stratified", trend_percent=5.0), "trend_percent is for time_trend='loglinear'"),
    (dict(time_trend="stratified ", model="bernoulli"), "time_trend must be one of"),
    (dict(time_trend="nonparametric", model="bernoulli"), "time_trend='stratified' adjusts both"),
    (dict(spatial_adjustment="stratified", time_trend="stratified"), "spatial_adjustment='stratified' adjusts"),
    (dict(spatial_adjustment="stratified", model="bernoulli"), "spatial_adjustment='stratified' adjusts"),
    (dict(spatial_adjustment="nonparametric", time_trend="loglinear"), "spatial_adjustment='nonparametric'"),
    (dict(spatial_adjustment="nonparametric", model="bernoulli"), "spatial_adjustment='nonparametric'"),
    (dict(spatial_adjustment="other"), "spatial_adjustment"),
])
def test_bad_settings_are_refused(kwargs, message):
    xy, pop, loc, day, n = _data()
    data = dict(controls=pop[loc]) if kwargs.get("model") == "bernoulli" else dict(population=pop[loc])
    with pytest.raises(ValueError, match=message):
        hp.scan.space_time(xy[loc], n, day, n_replicates=9, progress=False, backend="cpu", **data, **kwargs)


if __name__ == "__main__":  # write the stored SaTScan output (see tests/satscan_oracle.py)
    store(FIXTURE, run_satscan, "test_scan_time_stratified.py")
