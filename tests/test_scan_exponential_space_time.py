"""The space-time exponential scan (``hp.scan.space_time_exponential``; SaTScan's ModelType=4 with
AnalysisType 3 or 4): SaTScan's own sample analysis FakeSpaceTimeExponential.prm through run_prm against
SaTScan 10.3.2's report (tests/satscan_oracle.py); the observed cylinders against a NumPy enumeration; the
Monte Carlo kernel bounded by death days (cpu_exponential) against the day-by-day cylinders given each
replicate's expectations, on the CPU engine and the CUDA kernel through the emulator; a planted cluster
recovered; bad input."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import hphawkes_py as hp
from hphawkes_py.cli import main
from hphawkes_py.scan import space_time_scan
from hphawkes_py.scan._rng import replicate_seed_words
from hphawkes_py.scan.cpu_exponential import max_llr_death_days
from hphawkes_py.scan.engine import klogk_table, make_space_time_engine
from hphawkes_py.scan.null_draws import permute_measurements, strata_members
from hphawkes_py.scan.windows import build_windows
from satscan_oracle import edit_prm, oracle, report_locations, run_parameter_file, scratch_folder, store, stored

FIXTURE = stored("exponential_space_time")
SAMPLE = Path(hp.__file__).parent / "data" / "scan" / "satscan_sample_data"
FILES = ("FakeSpaceTimeExponential.prm", "SurvivalFake.cas", "SurvivalFake.geo")


def _copy_sample(folder: Path) -> Path:
    for name in FILES:
        shutil.copy(SAMPLE / name, folder / name)
    return folder / FILES[0]


#: SaTScan runs with random seeds (RandomlyGenerateSeed=y) whose p-values are pooled (see
#: test_satscan_sample_analysis on its default seed)
RANDOM_SEED_RUNS = 3


def _clusters_of(report: str) -> list:
    """The report's clusters as ``{label: value}`` of their lines."""
    clusters = []
    for block in report.split("CLUSTERS DETECTED", 1)[1].split("PARAMETER SETTINGS", 1)[0].split("\n\n"):
        fields = {}
        for line in block.splitlines():
            if "..:" in line:
                key, value = line.split("..:", 1)
                fields[key.strip(" .0123456789")] = value.strip()
        if fields:
            clusters.append(fields)
    return clusters


def run_satscan(binary) -> dict:
    """SaTScan's report of its sample analysis as it ships (the clusters' lines: location ids, time frame,
    individuals, cases, expected cases, LLR, p-value), and the first cluster's p-values of ``RANDOM_SEED_RUNS``
    more runs with random seeds."""
    out = {}
    with scratch_folder("hphawkes-exp-st-") as folder:
        prm = _copy_sample(folder)
        run_parameter_file(binary, prm, folder)
        report = (folder / "SurvivalFake.txt").read_text()
        out["sample"] = {"clusters": _clusters_of(report), "ids": report_locations(report)}
        ea = _earlier_analyses_prm(folder)
        run_parameter_file(binary, ea, folder)
        report = (folder / "SurvivalFake.txt").read_text()
        out["earlier_analyses"] = {"clusters": _clusters_of(report), "ids": report_locations(report)}
        ps = _purely_spatial_prm(folder)
        run_parameter_file(binary, ps, folder)
        report = (folder / "ps.txt").read_text()
        out["purely_spatial"] = {"clusters": _clusters_of(report), "ids": report_locations(report)}
        pt = edit_prm(prm, {"IncludePurelyTemporal=n": "IncludePurelyTemporal=y"}, folder / "pt.prm")
        run_parameter_file(binary, pt, folder)
        report = (folder / "SurvivalFake.txt").read_text()
        out["purely_temporal"] = {"clusters": _clusters_of(report), "ids": report_locations(report)}
        edit_prm(prm, {"[Run Options]": "[Run Options]\nRandomlyGenerateSeed=y"})
        for key, edits in (("random_seeds", {}), ("weekly", {"AdjustForWeeklyTrends=n": "AdjustForWeeklyTrends=y"})):
            edit_prm(prm, edits) if edits else None
            p_values = []
            for _ in range(RANDOM_SEED_RUNS):
                run_parameter_file(binary, prm, folder)
                p_values.append(float(_clusters_of((folder / "SurvivalFake.txt").read_text())[0]["P-value"]))
            out[key] = {"p_values": p_values}
    return out


@pytest.fixture(scope="module")
def satscan_output():
    return oracle(FIXTURE, run_satscan)


def _day(text):
    y, m, d = (int(x) for x in text.split("/"))
    return np.datetime64(f"{y:04d}-{m:02d}-{d:02d}", "D")


def _assert_as_reported(clusters, rows, ids=None):
    """Our clusters against SaTScan's report lines (``rows``, and its location ids ``ids`` when given): time
    frame, individuals, deaths, expected deaths and O/E to its printed digits, LLR to 1e-6, no relative risk."""
    for k, row in enumerate(rows):
        cl = clusters.iloc[k]
        if ids is not None:
            assert [str(v) for v in cl.location_ids] == ids[k], k
        start, end = (_day(x.strip()) for x in row["Time frame"].split(" to "))
        assert (np.datetime64(cl.start, "D"), np.datetime64(cl.end, "D")) == (start, end), k
        assert (cl.population, cl.cases) == (int(row["Total individuals"]), int(row["Number of cases"])), k
        assert cl.expected == pytest.approx(float(row["Expected cases"]), abs=0.005), k
        assert cl.observed_over_expected == pytest.approx(float(row["Observed / expected"]), abs=0.005), k
        assert cl.log_likelihood_ratio == pytest.approx(float(row["Log likelihood ratio"]), abs=1e-6), k
        assert np.isnan(cl.relative_risk), k


def test_satscan_sample_analysis(satscan_output, tmp_path):
    res = hp.scan.run_prm(_copy_sample(tmp_path), seed=1, progress=False, backend="cpu")
    sample = satscan_output["sample"]
    theirs = sample["clusters"]
    assert res.n_population == 65 and res.n_cases == 52
    # SaTScan lists three, and a fourth here (LocationB after its first cluster, LLR 1.04, p 0.999): both list a
    # secondary cluster only while some replicate's maximum is below its LLR, and SaTScan's runs have none below
    # 1.168; one replicate of this seed is (1.027)
    assert len(res.clusters) >= len(theirs) == 3
    _assert_as_reported(res.clusters, theirs, sample["ids"])
    # the p-value against SaTScan's runs with random seeds (ours from 999 replicates against their 3 x 999,
    # within 4 binomial standard errors). Their null maxima are not compared as a sample: SaTScan seeds
    # replicate i with seed + i in a Lehmer generator (x -> 48271 x mod 2**31 - 1), so the first of the random
    # numbers it sorts the (time, censoring) pairs by stays within 0.022 of one value across a run's 999
    # replicates (0.505-0.528 for its default seed), and the first record's pair lands near the middle of the
    # patients in every replicate instead of on any of them: a run's maxima are not a sample of the
    # permutation null (its default seed gives this cluster p 0.006, random seeds 0.010-0.020). This null is
    # checked against the cylinders' own enumeration below.
    _assert_p_value(res, satscan_output["random_seeds"]["p_values"])


def _assert_p_value(res, theirs):
    """The first cluster's p-value within 4 binomial standard errors of SaTScan's runs' mean (999 replicates
    here, 999 in each of theirs)."""
    p_theirs = float(np.mean(theirs))
    se = np.sqrt(p_theirs * (1 - p_theirs) * (1 / 999 + 1 / (999 * len(theirs))))
    assert abs(res.clusters.p_value.iloc[0] - p_theirs) <= 4 * se


def test_weekly_adjustment_as_satscan(satscan_output, tmp_path):
    prm = edit_prm(_copy_sample(tmp_path), {"AdjustForWeeklyTrends=n": "AdjustForWeeklyTrends=y"})
    res = hp.scan.run_prm(prm, seed=1, progress=False, backend="cpu")
    assert res.day_of_week
    # the weekday changes the null only: the clusters are the unadjusted analysis's
    theirs = satscan_output["sample"]["clusters"]
    for k, row in enumerate(theirs):
        assert res.clusters.log_likelihood_ratio.iloc[k] == pytest.approx(float(row["Log likelihood ratio"]),
                                                                          abs=1e-6)
    _assert_p_value(res, satscan_output["weekly"]["p_values"])


def _earlier_analyses_prm(folder: Path) -> Path:
    """The sample as a prospective surveillance since 2005/6/1 (AdjustForEarlierAnalyses=y; circles up to 3
    units, SaTScan's only limit then)."""
    if not (folder / FILES[0]).exists():
        _copy_sample(folder)
    return edit_prm(folder / FILES[0], {"AnalysisType=3": "AnalysisType=4",
                                        "AdjustForEarlierAnalyses=n": "AdjustForEarlierAnalyses=y",
                                        "ProspectiveStartDate=2000/12/31": "ProspectiveStartDate=2005/6/1",
                                        "UseDistanceFromCenterOption=n": "UseDistanceFromCenterOption=y",
                                        "MaxSpatialSizeInDistanceFromCenter=1": "MaxSpatialSizeInDistanceFromCenter=3"},
                    folder / "ea.prm")


@pytest.mark.parametrize("backend", ["cpu", pytest.param("emulator", marks=pytest.mark.emulator)])
def test_adjusted_for_earlier_analyses_as_satscan(satscan_output, tmp_path, backend):
    # the emulator's Monte Carlo runs one engine per end day's cut (107 here) per replicate: two replicates; its
    # maxima are the CPU kernel's (test_death_day_kernel_equals_..., "surveillance")
    n_rep = 999 if backend == "cpu" else 2
    res = hp.scan.run_prm(_earlier_analyses_prm(tmp_path), seed=1, progress=False, backend=backend,
                          n_replicates=n_rep)
    theirs = satscan_output["earlier_analyses"]
    # two replicates list only the most likely cluster (a secondary one needs a replicate's maximum below it)
    rows = theirs["clusters"] if backend == "cpu" else theirs["clusters"][:1]
    assert len(res.clusters) == len(rows) and len(theirs["clusters"]) == 2
    _assert_as_reported(res.clusters, rows, theirs["ids"])
    assert (res.clusters.end == np.datetime64("2005-12-31")).all()  # prospective: the clusters end on the last day
    for k, row in enumerate(rows):
        p = float(row["P-value"])  # the surveillance's maxima: each over every end day since 2005/6/1
        if backend == "cpu":
            assert abs(res.clusters.p_value.iloc[k] - p) <= 4 * np.sqrt(p * (1 - p) * 2 / 999) + 2 / 1000


def _purely_spatial_prm(folder: Path) -> Path:
    """Patients at 8 places over 60 days of 2020, shorter survival at place P0 throughout (a purely spatial
    cluster beats every cylinder), and the sample's parameter file for them with IncludePurelySpatial=y."""
    rng = np.random.default_rng(12)
    xy = rng.uniform(0, 10, (8, 2)).round(2)
    where = rng.integers(0, 8, 240)
    day = rng.integers(0, 60, 240)
    t = (rng.exponential(np.where(where == 0, 1.5, 6.0)) + 0.01).round(2)
    dates = np.datetime64("2020-01-01") + day.astype("timedelta64[D]")
    (folder / "ps.geo").write_text("".join(f"P{i} {a} {b}\n" for i, (a, b) in enumerate(xy)))
    (folder / "ps.cas").write_text("".join(f"P{g} 1 {str(d).replace('-', '/')} {min(v, 9.0)} {int(v > 9.0)}\n"
                                           for g, d, v in zip(where, dates, t)))
    if not (folder / FILES[0]).exists():
        _copy_sample(folder)
    return edit_prm(folder / FILES[0], {"CaseFile=SurvivalFake.cas": "CaseFile=ps.cas",
                                        "CoordinatesFile=SurvivalFake.geo": "CoordinatesFile=ps.geo",
                                        "StartDate=2000/1/1": "StartDate=2020/1/1",
                                        "EndDate=2005/12/31": "EndDate=2020/2/29",
                                        "ResultsFile=SurvivalFake.txt": "ResultsFile=ps.txt",
                                        "IncludePurelySpatial=n": "IncludePurelySpatial=y"}, folder / "ps.prm")


@pytest.mark.parametrize("backend", ["cpu", pytest.param("emulator", marks=pytest.mark.emulator)])
def test_purely_spatial_clusters_as_satscan(satscan_output, tmp_path, backend):
    res = hp.scan.run_prm(_purely_spatial_prm(tmp_path), seed=1, progress=False, backend=backend,
                          n_replicates=999 if backend == "cpu" else 49)
    theirs = satscan_output["purely_spatial"]
    _assert_as_reported(res.clusters, theirs["clusters"][:1], theirs["ids"])
    cl = res.clusters.iloc[0]  # the whole period: a purely spatial cluster
    assert (np.datetime64(cl.start, "D"), np.datetime64(cl.end, "D")) == \
        (np.datetime64("2020-01-01"), np.datetime64("2020-02-29"))
    if backend == "cpu":
        assert cl.p_value == pytest.approx(float(theirs["clusters"][0]["P-value"]), abs=0.01)


def test_purely_temporal_clusters_as_satscan(satscan_output, tmp_path):
    prm = edit_prm(_copy_sample(tmp_path), {"IncludePurelyTemporal=n": "IncludePurelyTemporal=y"})
    res = hp.scan.run_prm(prm, seed=1, progress=False, backend="cpu")
    theirs = satscan_output["purely_temporal"]["clusters"]
    assert theirs[0]["Time frame"] and res.clusters.center.iloc[0] == "All" and res.clusters.purely_temporal.iloc[0]
    _assert_as_reported(res.clusters, theirs[:2])


@pytest.mark.emulator
def test_purely_temporal_null_on_the_engines_equals_the_cpu_kernel():
    xy, where, day, t, censored = _data(seed=9, L=6, T=16, n=150)
    kw = dict(location_ids=where, max_temporal=5, purely_temporal=True, n_replicates=19, seed=3, progress=False)
    cpu = hp.scan.space_time_exponential(xy[where], t, day, censored, backend="cpu", **kw)
    emu = hp.scan.space_time_exponential(xy[where], t, day, censored, backend="emulator", **kw)
    np.testing.assert_allclose(emu.null_llr, cpu.null_llr, rtol=1e-9)
    assert cpu.clusters.log_likelihood_ratio.iloc[0] == pytest.approx(emu.clusters.log_likelihood_ratio.iloc[0])


def test_weekday_permutation_keeps_each_weekdays_pairs():
    windows, cell, mu, dead, L, T, C = _null_setup()
    weekday = np.mod(cell % T, 7)
    strata = strata_members(weekday)
    seeds = (np.random.SeedSequence(5), 16)
    e_sum, d_sum = permute_measurements(cell, mu, dead, L * T, seeds, strata)
    day = np.arange(L * T) % T
    for w in range(7):
        # every replicate's expectations and deaths of each weekday total that weekday's own
        on_w = np.mod(day, 7) == w
        np.testing.assert_allclose(e_sum[on_w].sum(axis=0), mu[weekday == w].sum(), rtol=1e-12)
        np.testing.assert_array_equal(np.rint(d_sum[on_w].sum(axis=0)), dead[weekday == w].sum())
    free, _ = permute_measurements(cell, mu, dead, L * T, seeds)
    assert not np.allclose(free, e_sum)
    klogk = klogk_table(C)
    words = replicate_seed_words(seeds)
    fast = max_llr_death_days(windows, cell // T, cell % T, mu, dead, L, T, words, klogk, C, [(0, 8)], 2, strata)
    engine = make_space_time_engine(windows, np.zeros(T + 1), klogk, C, 8, 0, 2, "high", backend="cpu",
                                    expected=np.ones((L, T)) * C / (L * T))
    slow = [space_time_scan._engine_max(engine.with_expected(e_sum[:, r].reshape(L, T)),
                                        np.rint(d_sum[:, r]).astype(np.int32).reshape(L, T, 1))[0]
            for r in range(len(words))]
    np.testing.assert_allclose(fast, slow, rtol=1e-10, atol=1e-12)


def _data(seed=3, L=12, T=40, n=800, planted=True):
    rng = np.random.default_rng(seed)
    xy = rng.uniform(0, 10, (L, 2)).round(3)
    where = rng.integers(0, L, n)
    day = rng.integers(0, T, n)
    hot = (where == 0) & (day >= 10) & (day < 16) if planted else np.zeros(n, dtype=bool)
    t = (rng.exponential(np.where(hot, 0.2, 5.0)) + 0.01).round(3)
    censored = t > 9.0
    return xy, where, day, np.minimum(t, 9.0), censored


def _naive_top(xy, where, day, t, censored, max_population, max_temporal):
    """The largest high-rate cylinder LLR, every circle (each location's nearest locations while they hold at
    most max_population of the patients) and interval enumerated in float64."""
    dead = ~censored
    C = dead.sum()
    mu = t * C / t.sum()
    L, T = len(xy), day.max() + 1
    n_l = np.bincount(where, minlength=L)
    best = 0.0
    for i in range(L):
        d = np.hypot(*(xy - xy[i]).T)
        order = np.lexsort((xy[:, 1], xy[:, 0], d))
        inside = np.zeros(L, dtype=bool)
        for k, loc in enumerate(order):
            if n_l[inside].sum() + n_l[loc] > max_population * len(t):
                break
            inside[loc] = True
            if k + 1 < L and d[order[k + 1]] == d[loc]:
                continue  # a circle holds every location at its radius
            sel = inside[where]
            for t2 in range(T):
                for t1 in range(max(0, t2 - max_temporal + 1), t2 + 1):
                    w = sel & (day >= t1) & (day <= t2)
                    c, e = dead[w].sum(), mu[w].sum()
                    if c >= 2 and c > e > 0:
                        best = max(best, c * np.log(c / e) + (C - c) * np.log((C - c) / (C - e)))
    return best


def test_observed_cylinders_against_enumeration():
    xy, where, day, t, censored = _data()
    res = hp.scan.space_time_exponential(xy[where], t, day, censored, location_ids=where, max_population=0.3,
                                         max_temporal=8, n_replicates=99, seed=2, progress=False, backend="cpu")
    naive = _naive_top(xy, where, day, t, censored, 0.3, 8)
    assert res.most_likely.log_likelihood_ratio == pytest.approx(naive, rel=1e-10)
    top = res.most_likely
    assert 0 in list(top.location_ids) and 8 <= int(top.start) <= int(top.end) <= 17
    assert res.most_likely.p_value <= 0.05


def _null_setup():
    xy, where, day, t, censored = _data(seed=5, planted=False)
    L, T = len(xy), 40
    dead = (~censored).astype(np.int64)
    C = int(dead.sum())
    mu = t * C / t.sum()
    cell = where.astype(np.int64) * T + day
    order = np.argsort(cell, kind="stable")
    patients = np.bincount(where, minlength=L).astype(float)
    windows = build_windows(xy, xy, patients, 0.4 * patients.sum(), None)
    return windows, cell[order], mu[order], dead[order], L, T, C


@pytest.mark.parametrize("cuts", [[(0, 8)], [(39, 12)], [(30, 5), (34, 9)]], ids=["retrospective", "prospective",
                                                                                 "surveillance"])
@pytest.mark.parametrize("backend", ["cpu", pytest.param("emulator", marks=pytest.mark.emulator)])
def test_death_day_kernel_equals_the_cylinders_with_each_replicates_expectations(cuts, backend):
    windows, cell, mu, dead, L, T, C = _null_setup()
    seeds = (np.random.SeedSequence(11), 24)
    words = replicate_seed_words(seeds)
    klogk = klogk_table(C)
    fast = max_llr_death_days(windows, cell // T, cell % T, mu, dead, L, T, words, klogk, C, cuts, 2)
    e_sum, d_sum = permute_measurements(cell, mu, dead, L * T, seeds)
    dcum = np.zeros(T + 1)
    engines = [make_space_time_engine(windows, dcum, klogk, C, m, e, 2, "high", backend=backend,
                                      expected=np.ones((L, T)) * C / (L * T)) for e, m in cuts]
    slow = np.array([max(space_time_scan._engine_max(eng.with_expected(e_sum[:, r].reshape(L, T)),
                                                     np.rint(d_sum[:, r]).astype(np.int32).reshape(L, T, 1))[0]
                         for eng in engines) for r in range(len(words))])
    assert (slow > 0).mean() > 0.5
    np.testing.assert_allclose(fast, slow, rtol=1e-10, atol=1e-12)


def test_low_rates_take_the_day_by_day_cylinders():
    xy, where, day, t, censored = _data(seed=7)
    kw = dict(location_ids=where, max_population=0.3, max_temporal=6, n_replicates=9, seed=4, progress=False,
              backend="cpu")
    both = hp.scan.space_time_exponential(xy[where], t, day, censored, direction="both", **kw)
    high = hp.scan.space_time_exponential(xy[where], t, day, censored, direction="high", **kw)
    # every replicate's maximum over both directions is at least its high-rate maximum (same permutations)
    assert (both.null_llr >= high.null_llr - 1e-9).all() and (both.null_llr > high.null_llr + 1e-9).any()


def test_bad_input():
    xy, where, day, t, censored = _data()
    kw = dict(n_replicates=9, progress=False, backend="cpu")
    with pytest.raises(ValueError, match="survival_times must be positive"):
        hp.scan.space_time_exponential(xy[where], -t, day, censored, **kw)
    with pytest.raises(ValueError, match="every patient is censored"):
        hp.scan.space_time_exponential(xy[where], t, day, np.ones(len(t), bool), **kw)
    with pytest.raises(ValueError, match="one time per row"):
        hp.scan.space_time_exponential(xy[where], t, day[:-1], censored, **kw)
    with pytest.raises(ValueError, match="coords and survival_times must have the same length"):
        hp.scan.space_time_exponential(xy[where], t[:-1], day, censored, **kw)
    with pytest.raises(ValueError, match="min_cases"):
        hp.scan.space_time_exponential(xy[where], t, day, censored, min_cases=1, **kw)
    with pytest.raises(TypeError, match="purely_temporal must be True or False, got 'yes'"):
        hp.scan.space_time_exponential(xy[where], t, day, censored, purely_temporal="yes", **kw)
    with pytest.raises(ValueError, match="purely_spatial clusters are not scanned with a surveillance_start"):
        hp.scan.space_time_exponential(xy[where], t, day, censored, prospective=True, purely_spatial=True,
                                       surveillance_start=30, **kw)


def test_run_prm_reads_satscan_dates_and_refuses_what_it_cannot_honour(tmp_path):
    prm = _copy_sample(tmp_path)
    kw = dict(n_replicates=9, progress=False, backend="cpu", seed=1)
    iso = hp.scan.run_prm(prm, **kw)
    cas = tmp_path / "SurvivalFake.cas"
    # SaTScan's other ways of writing a date: MM/DD/YYYY and other separators
    lines = []
    for line in cas.read_text().splitlines():
        f = line.split()
        y, m, d = f[2].split("-")
        f[2] = f"{m}/{d}/{y}" if len(lines) % 2 else f"{y}.{m}.{d}"
        lines.append("\t".join(f))
    cas.write_text("\n".join(lines) + "\n")
    other = hp.scan.run_prm(prm, **kw)
    np.testing.assert_array_equal(other.null_llr, iso.null_llr)
    assert other.clusters.log_likelihood_ratio.tolist() == iso.clusters.log_likelihood_ratio.tolist()
    with pytest.raises(ValueError, match="SpatialAdjustmentType.*for the discrete Poisson space-time"):
        hp.scan.run_prm(edit_prm(prm, {"SpatialAdjustmentType=0": "SpatialAdjustmentType=1"}, tmp_path / "sa.prm"),
                        **kw)
    with pytest.raises(ValueError, match="TimeTrendAdjustmentType='1'.*without time-trend adjustment"):
        hp.scan.run_prm(edit_prm(prm, {"TimeTrendAdjustmentType=0": "TimeTrendAdjustmentType=1"}, tmp_path / "tt.prm"),
                        **kw)
    with pytest.raises(ValueError, match="AdjustForWeeklyTrends.*TimeAggregationUnits=3"):
        hp.scan.run_prm(edit_prm(prm, {"AdjustForWeeklyTrends=n": "AdjustForWeeklyTrends=y",
                                       "TimeAggregationUnits=3": "TimeAggregationUnits=2"}, tmp_path / "wk.prm"), **kw)


def test_locations_without_patients_are_centres_and_members(tmp_path):
    prm = _copy_sample(tmp_path)
    kw = dict(n_replicates=19, progress=False, backend="cpu", seed=1)
    before = hp.scan.run_prm(prm, **kw)
    with open(tmp_path / "SurvivalFake.geo", "a") as fh:
        fh.write("LocationF\t5\t6.5\n")  # between LocationA (6, 8) and LocationC (6, 5); no patient
    res = hp.scan.run_prm(prm, **kw)
    assert (res.n_locations, res.n_centres, res.n_population) == (6, 6, 65)
    top = res.clusters.iloc[0]
    # SaTScan 10.3.2 on this file: LocationA, LocationF, LocationC, and (with no restrictions on secondary
    # clusters) the same cylinder about LocationF next
    assert top.location_ids == ["LocationA", "LocationF", "LocationC"]
    assert top.log_likelihood_ratio == before.clusters.log_likelihood_ratio.iloc[0]
    every = hp.scan.run_prm(edit_prm(prm, {"CriteriaForReportingSecondaryClusters=0":
                                           "CriteriaForReportingSecondaryClusters=5"}, tmp_path / "all.prm"), **kw)
    assert every.clusters.center.iloc[1] == "LocationF"
    assert every.clusters.location_ids.iloc[1] == ["LocationF", "LocationC", "LocationA"]
    spatial = edit_prm(prm, {"AnalysisType=3": "AnalysisType=1"}, tmp_path / "spatial.prm")
    assert hp.scan.run_prm(spatial, **kw).n_centres == 6  # the purely spatial scan too (test_scan_empty_locations)
    with pytest.raises(ValueError, match="empty_location_ids must give the 1 empty locations' ids"):
        hp.scan.space_time_exponential([[0.0, 0.0], [1.0, 1.0]], [1.0, 2.0], [0, 1], location_ids=["a", "b"],
                                       empty_locations=[[2.0, 2.0]], n_replicates=9, progress=False)


@pytest.mark.parametrize("prm, files", [
    ("FakeSpaceTimeExponential.prm", ("SurvivalFake.cas", "SurvivalFake.geo")),
    ("PolygonSpatialContinuousPoisson.prm", ("ContinuousPoissonFake.geo", "ContinuousPoissonFake.grd")),
])
def test_cli_runs_satscans_sample_analyses_into_a_folder(tmp_path, capsys, prm, files):
    for name in (prm, *files):
        shutil.copy(SAMPLE / name, tmp_path / name)
    out = tmp_path / "out"
    rc = main(["scan", "run", str(tmp_path / prm), "--replicates", "19", "--seed", "1", "--backend", "cpu",
               "--out", str(out), "--quiet"])
    assert rc == 0, capsys.readouterr().err
    stem = Path(prm).stem
    table = pd.read_csv(out / f"{stem}.col.csv")
    ref = hp.scan.run_prm(tmp_path / prm, n_replicates=19, seed=1, progress=False, backend="cpu")
    np.testing.assert_allclose(table.LLR.to_numpy(), ref.clusters.log_likelihood_ratio.to_numpy(), rtol=1e-6)
    assert (out / f"{stem}.txt").read_text().count("Log likelihood ratio") == len(ref.clusters)
    assert (out / f"{stem}.png").stat().st_size > 0


if __name__ == "__main__":  # write the stored SaTScan output (see tests/satscan_oracle.py)
    store(FIXTURE, run_satscan, "test_scan_exponential_space_time.py")
