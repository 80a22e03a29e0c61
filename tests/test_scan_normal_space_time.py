"""The space-time normal scan (``hp.scan.space_time_normal``; SaTScan's ModelType=5 with AnalysisType 3 or 4):
every cylinder's LLR against the normal model's formula on the cylinder's observations (tests/naive_scan.py),
on the CPU engine and the CUDA kernel through the emulator; retrospective, prospective and weighted analyses
through run_prm against SaTScan 10.3.2 on data made here (tests/satscan_oracle.py); a planted cluster
recovered; the CLI; bad input and the settings refused by name.

``python tests/test_scan_normal_space_time.py --satscan <binary>`` stores SaTScan's output for machines
without the binary.
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
from hphawkes_py.scan._prm_space_time import run_space_time_normal
from hphawkes_py.scan.cpu_normal_space_time import NormalCylinderEngine, cumulative_from_end, intervals, \
    permuted_cumulative, surveillance_intervals
from hphawkes_py.scan.normal_model import NORMAL, WEIGHTED_NORMAL, _totals
from hphawkes_py.scan.cylinders import first_best as _first_best
from hphawkes_py.scan.null_draws import permute_measurements
from hphawkes_py.scan.windows import build_windows

sys.path.insert(0, str(Path(__file__).parent))
from engines import CUDA_ENGINES  # noqa: E402
from naive_scan import normal_llr  # noqa: E402
from satscan_oracle import oracle, read_dbf, report_locations, run_parameter_file, scratch_folder, store, stored, \
    write_prm  # noqa: E402

FIXTURE = stored("normal_space_time")


def _data(seed=4, n_loc=12, n_obs=160, T=9, shift=0.0, weights=False):
    """Observations at random locations and days, measurements N(10, 2), shifted by ``shift`` within radius 3
    of location 0 on days 3-5."""
    rng = np.random.default_rng(seed)
    xy = rng.uniform(0, 10, (n_loc, 2)).round(3)
    loc = np.concatenate([np.arange(n_loc), rng.integers(0, n_loc, n_obs - n_loc)])
    day = rng.integers(0, T, n_obs)
    x = rng.normal(10.0, 2.0, n_obs).round(4)
    x += shift * ((np.hypot(*(xy[loc] - xy[0]).T) < 3) & (day >= 3) & (day <= 5))
    w = rng.uniform(0.5, 2.0, n_obs).round(3) if weights else None
    return xy, loc, day, x, w


def _engine(xy, loc, day, x, w, T, max_t, t_end_min, direction, min_cases, max_population=0.5):
    L = len(xy)
    n_lt = np.zeros((L, T), dtype=np.int64)
    np.add.at(n_lt, (loc, day), 1)
    offsets, neighbors, _, boundary = build_windows(xy.astype(float), xy.astype(float), n_lt.sum(axis=1),
                                                    max_population * len(x))
    t1s, t2s = intervals(T, max_t, t_end_min)
    eng = NormalCylinderEngine(NORMAL if w is None else WEIGHTED_NORMAL, offsets, neighbors, boundary,
                               cumulative_from_end(n_lt), t1s, t2s, len(x), *_totals(x, w), min_cases, min_cases,
                               direction in ("high", "both"), direction in ("low", "both"), _total_squares(x, w))
    first, second = (x, x * x) if w is None else (x * w, w)
    return eng, first, second


def _total_squares(x, w):
    """The (weighted) sum of squares about the (weighted) mean, two-pass."""
    ww = np.ones(len(x)) if w is None else w
    return float((ww * (x - np.average(x, weights=ww)) ** 2).sum())


def _cell_sums(loc, day, first, second, L, T):
    s1, s2 = np.zeros((L, T, 1)), np.zeros((L, T, 1))
    np.add.at(s1[:, :, 0], (loc, day), first)
    np.add.at(s2[:, :, 0], (loc, day), second)
    return s1, s2


def _naive(eng, loc, day, x, w, direction, min_cases):
    """(m, I) the best LLR of every centre and interval over its circles, from the cylinders' observations."""
    out = np.zeros((eng.n_centres, len(eng.t1s)))
    for i in range(eng.n_centres):
        for k in range(eng.offsets[i], eng.offsets[i + 1]):
            if not eng.boundary[k]:
                continue
            here = np.isin(loc, eng.neighbors[eng.offsets[i]:k + 1])
            for a, (t1, t2) in enumerate(zip(eng.t1s, eng.t2s)):
                inside = here & (day >= t1) & (day <= t2)
                out[i, a] = max(out[i, a], normal_llr(x, w, inside, direction, min_cases))
    return out


# ---------------------------------------------------------------------------- the cylinders
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("direction, max_t, t_end_min", [("high", 4, 0), ("low", 9, 0), ("both", 3, 8)])
def test_every_interval_of_every_centre_matches_the_naive_formula(weighted, direction, max_t, t_end_min):
    xy, loc, day, x, w = _data(shift=2.0, weights=weighted)
    T, m_cases = 9, 2
    eng, first, second = _engine(xy, loc, day, x, w, T, max_t, t_end_min, direction, m_cases)
    s1, s2 = _cell_sums(loc, day, first, second, len(xy), T)
    per_mv, per_j = eng.interval_best(s1[:, :, 0], s2[:, :, 0])
    want = _naive(eng, loc, day, x, w, direction, m_cases)
    assert (want > 0).sum() > 20
    np.testing.assert_allclose(eng.llr(per_mv), want, rtol=1e-9, atol=1e-9)
    best, a, j = _first_best(eng.llr(per_mv), per_j)
    np.testing.assert_allclose(best, want.max(axis=1), rtol=1e-9, atol=1e-9)
    # the best cylinder's entry and interval are those of an interval attaining the maximum
    has = want.max(axis=1) > 0
    np.testing.assert_array_equal(j[has], per_j[has, a[has]])
    assert (a[~has] == -1).all() and (j[~has] == -1).all()


def test_the_first_of_equal_cylinders_in_satscans_loop_order():
    # measurements equal on every day but one: many cylinders have equal LLRs; the best is the smallest
    # circle entry, then the first interval in SaTScan's loop (end day ascending, start day descending)
    xy, loc, day, x, _ = _data(seed=6)
    x = np.where(day == 4, 20.0, 10.0)
    eng, first, second = _engine(xy, loc, day, x, None, 9, 5, 0, "high", 1)
    s1, s2 = _cell_sums(loc, day, first, second, len(xy), 9)
    per_mv, per_j = eng.interval_best(s1[:, :, 0], s2[:, :, 0])
    _, a, j = _first_best(eng.llr(per_mv), per_j)
    for i in range(eng.n_centres):
        top = per_mv[i].max()
        tied = np.flatnonzero(per_mv[i] == top)
        first_entry = per_j[i, tied].min()
        assert j[i] == first_entry
        assert a[i] == tied[per_j[i, tied] == first_entry][0]
        assert eng.t1s[a[i]] == 4 and eng.t2s[a[i]] == 4


def test_the_best_of_equal_intervals_is_the_smallest_entry_then_the_earliest_interval():
    llr = np.array([[1.0, 3.0, 3.0, 3.0, 2.0],    # tied at entries 7, 5, 5: entry 5, the earlier interval (2)
                    [0.0, 0.0, 0.0, 0.0, 0.0],    # none
                    [4.0, 1.0, 4.0, 0.0, 4.0]])   # tied at entries 9, 9, 2: entry 2 (interval 4)
    entry = np.array([[3, 7, 5, 5, 1], [-1, -1, -1, -1, -1], [9, 3, 9, -1, 2]])
    best, a, j = _first_best(llr, entry)
    np.testing.assert_array_equal(best, [3.0, 0.0, 4.0])
    np.testing.assert_array_equal(a, [2, -1, 4])
    np.testing.assert_array_equal(j, [5, -1, 2])


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("direction, t_end_min", [("high", 0), ("low", 0), ("both", 8)])
@pytest.mark.parametrize("sparse", [False, True])
def test_replicate_maxima_are_the_best_cylinders_llr(weighted, direction, t_end_min, sparse):
    # the replicates' kernel compares the between-group sums of squares, the observed one SaTScan's
    # maximizing values: the same largest LLR, to rounding; sparse: about two observations a location, so that
    # many locations have observations on one day only (the first or the last the intervals read among them)
    xy, loc, day, x, w = _data(shift=1.0, weights=weighted, n_loc=40 if sparse else 12, n_obs=90 if sparse else 160)
    T = 9
    eng, first, second = _engine(xy, loc, day, x, w, T, 5, t_end_min, direction, 2)
    s1, s2 = permute_measurements(loc * T + day, first, second, len(xy) * T, np.random.SeedSequence(3).spawn(40))
    s1, s2 = s1.reshape(len(xy), T, 40), s2.reshape(len(xy), T, 40)
    # every replicate's cylinders, one at a time, through the observed data's per-interval pass
    want = np.array([eng.llr(eng.interval_best(s1[:, :, r], s2[:, :, r])[0]).max() for r in range(40)])
    assert (want > 0).all()
    np.testing.assert_allclose(eng.max_llr(*eng.replicate_sums(s1, s2)), want, rtol=1e-10)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("backend", CUDA_ENGINES)
def test_cuda_kernel_equals_the_cpu_engine(weighted, backend):
    from hphawkes_py._backend import get_device
    from hphawkes_py.scan.gpu import GpuNormalCylinderEngine

    xy, loc, day, x, w = _data(shift=1.0, weights=weighted)
    T = 9
    eng, first, second = _engine(xy, loc, day, x, w, T, 5, 0, "both", 2)
    s1, s2 = permute_measurements(loc * T + day, first, second, len(xy) * T, np.random.SeedSequence(3).spawn(40))
    s1, s2 = s1.reshape(len(xy), T, 40), s2.reshape(len(xy), T, 40)
    gpu = GpuNormalCylinderEngine(eng, device=get_device(backend), backend=backend)
    c = eng.replicate_sums(s1, s2)
    np.testing.assert_array_equal(gpu.max_q(*c), eng.max_q(*c))
    np.testing.assert_array_equal(gpu.max_llr(*c), eng.max_llr(*c))
    assert (eng.max_q(*c) > 0).mean() > 0.9


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("day0", [0, 4])
def test_permuted_sums_are_the_cumulative_sums_of_the_permuted_cells(weighted, day0):
    # the null's fused kernel against the permutations of permute_measurements (same seeds), added per cell and
    # from the last day back with NumPy: bit for bit, the days before day0 left out
    xy, loc, day, x, w = _data(weights=weighted)
    T, L = 9, len(xy)
    first, second = (x, x * x) if w is None else (x * w, w)
    seeds = np.random.SeedSequence(8).spawn(21)
    s1, s2 = permute_measurements(loc * T + day, first, second, L * T, seeds)
    want1, want2 = (cumulative_from_end(s.reshape(L, T, 21)[:, day0:]) for s in (s1, s2))
    c1, c2 = permuted_cumulative(loc, day, first, second, seeds, L, T - day0 + 1, day0, weighted)
    np.testing.assert_array_equal(c1, want1)
    if weighted:
        np.testing.assert_array_equal(c2, want2)
    assert c2.size == (c1.size if weighted else 1)


# ---------------------------------------------------------------------------- the analysis
def _analysis(weighted=False, shift=5.0, **kw):
    xy, loc, day, x, w = _data(seed=11, n_loc=25, n_obs=500, T=30, shift=shift, weights=weighted)
    return hp.scan.space_time_normal(xy[loc], x, day, weights=w, location_ids=loc, max_temporal=6,
                                     n_replicates=99, seed=2, progress=False, backend="cpu", **kw), (xy, loc, day,
                                                                                                     x, w)


@pytest.mark.parametrize("weighted", [False, True])
def test_planted_cluster_is_recovered_with_its_statistics(weighted):
    res, (xy, loc, day, x, w) = _analysis(weighted)
    top = res.most_likely
    truth = set(np.flatnonzero(np.hypot(*(xy - xy[0]).T) < 3).tolist())
    found = set(top.location_ids)
    assert len(found & truth) >= 0.75 * len(truth) and len(found - truth) <= 2
    assert 2 <= top.start <= 4 and 4 <= top.end <= 6 and top.p_value == 0.01
    inside = np.isin(loc, top.location_ids) & (day >= top.start) & (day <= top.end)
    assert top.cases == inside.sum() and top.population == inside.sum()
    assert top.mean_inside == pytest.approx(x[inside].mean(), rel=1e-12)
    assert top.log_likelihood_ratio == pytest.approx(normal_llr(x, w, inside, "high", res.min_cases), rel=1e-9)
    if weighted:
        assert top.weight_inside == pytest.approx(w[inside].sum(), rel=1e-12)
    assert "observations" in res.summary()


def test_results_do_not_depend_on_batching_threads_or_executor():
    from concurrent.futures import ThreadPoolExecutor

    a, _ = _analysis(shift=1.0)
    b, _ = _analysis(shift=1.0, threads=1)
    with ThreadPoolExecutor(2) as ex:
        c, _ = _analysis(shift=1.0, executor=ex)
    np.testing.assert_array_equal(a.null_llr, b.null_llr)
    np.testing.assert_array_equal(a.null_llr, c.null_llr)
    pd.testing.assert_frame_equal(a.clusters, b.clusters)


@pytest.mark.parametrize("backend", CUDA_ENGINES)
def test_analysis_on_the_cuda_engine_equals_the_cpu_engine(backend):
    a, _ = _analysis(True, shift=1.0)
    xy, loc, day, x, w = _data(seed=11, n_loc=25, n_obs=500, T=30, shift=1.0, weights=True)
    b = hp.scan.space_time_normal(xy[loc], x, day, weights=w, location_ids=loc, max_temporal=6, n_replicates=99,
                                  seed=2, progress=False, backend=backend)
    np.testing.assert_array_equal(a.null_llr, b.null_llr)
    pd.testing.assert_frame_equal(a.clusters, b.clusters)
    pa, pb = (hp.scan.space_time_normal(xy[loc], x, day, weights=w, location_ids=loc, max_temporal=6, n_replicates=49,
                                        seed=2, progress=False, backend=e, purely_spatial=True)
              for e in ("cpu", backend))
    np.testing.assert_array_equal(pa.null_llr, pb.null_llr)


def test_a_rise_everywhere_is_the_purely_temporal_cluster():
    xy, loc, day, x, _ = _data(seed=11, n_loc=25, n_obs=500, T=30, shift=0.0)
    x = x + 4.0 * ((day >= 12) & (day <= 15))  # every location, days 12-15
    res = hp.scan.space_time_normal(xy[loc], x, day, location_ids=loc, max_temporal=6, n_replicates=99, seed=2,
                                    progress=False, backend="cpu", purely_temporal=True)
    top = res.most_likely
    assert res.purely_temporal and top.purely_temporal and top.center == "All"
    assert (top.start, top.end) == (12, 15) and top.p_value == 0.01
    inside = (day >= 12) & (day <= 15)
    assert top.cases == inside.sum() and top.log_likelihood_ratio == pytest.approx(
        normal_llr(x, None, inside, "high", res.min_cases), rel=1e-9)
    plain = hp.scan.space_time_normal(xy[loc], x, day, location_ids=loc, max_temporal=6, n_replicates=99, seed=2,
                                      progress=False, backend="cpu")
    assert (res.null_llr >= plain.null_llr).all()
    assert "purely temporal" in res.summary()


@pytest.mark.parametrize("weighted", [False, True])
def test_a_rise_on_every_day_is_a_purely_spatial_cluster(weighted):
    # higher measurements around location 5 on every day: a purely spatial cluster, with the LLR of the purely
    # spatial scan; every replicate's maximum the larger of the cylinders' (at most 7 days) and the purely spatial
    # scan's of the same permutation
    xy, loc, day, x, w = _data(seed=11, n_loc=25, n_obs=500, T=30, weights=weighted)
    x = x + 1.2 * (np.hypot(*(xy[loc] - xy[5]).T) < 2.5)
    kw = dict(weights=w, location_ids=loc, n_replicates=49, seed=2, progress=False, backend="cpu")
    res = hp.scan.space_time_normal(xy[loc], x, day, max_temporal=7, purely_spatial=True, **kw)
    cylinders = hp.scan.space_time_normal(xy[loc], x, day, max_temporal=7, **kw)
    circles = hp.scan.normal(xy[loc], x, **kw)
    np.testing.assert_array_equal(res.null_llr, np.maximum(cylinders.null_llr, circles.null_llr))
    assert (cylinders.null_llr < circles.null_llr).any() and (cylinders.null_llr > circles.null_llr).any()
    top = res.most_likely
    assert res.purely_spatial and (top.start, top.end) == (0, 29)
    # (the sums per location added day by day, not in the observations' order: the same to rounding)
    assert top.log_likelihood_ratio == pytest.approx(circles.most_likely.log_likelihood_ratio, rel=1e-12)
    assert top.location_ids == circles.most_likely.location_ids and top.cases == circles.most_likely.cases
    assert top.log_likelihood_ratio > cylinders.most_likely.log_likelihood_ratio + 1
    assert "purely spatial" in res.summary()


def test_prospective_cylinders_end_on_the_last_day():
    res, _ = _analysis(prospective=True, direction="both")
    assert len(res.clusters) and (res.clusters.end == 29).all()


@pytest.mark.parametrize("percent", [None, 30.0])
def test_surveillance_scans_every_earlier_analysis_cylinders(percent):
    from hphawkes_py.scan.space_time_scan import _surveillance_cuts

    T, first, m = 30, 18, 6
    cuts = _surveillance_cuts(first, T, percent) if percent else ((first, m),)
    t1, t2 = surveillance_intervals(T, cuts)
    longest = (lambda t: math.floor((t + 1) * percent / 100)) if percent else (lambda t: m)
    want = {(a, b) for b in range(first, T) for a in range(0, b + 1) if b - a + 1 <= longest(b)}
    assert set(zip(t1.tolist(), t2.tolist())) == want and len(t1) == len(want)
    # the replicates' maxima can only grow: the last analysis's cylinders are among them
    xy, loc, day, x, _ = _data(seed=11, n_loc=25, n_obs=500, T=T, shift=0.0)
    kw = dict(location_ids=loc, max_population=None, max_distance=4.0, prospective=True, n_replicates=49, seed=3,
              progress=False, backend="cpu", **({"max_temporal_percent": percent} if percent else {"max_temporal": m}))
    last = hp.scan.space_time_normal(xy[loc], x, day, **kw)
    adjusted = hp.scan.space_time_normal(xy[loc], x, day, surveillance_start=first, **kw)
    assert (adjusted.null_llr >= last.null_llr).all() and (adjusted.null_llr > last.null_llr).mean() > 0.5
    np.testing.assert_array_equal(adjusted.clusters.log_likelihood_ratio,
                                  last.clusters.log_likelihood_ratio[:len(adjusted.clusters)])


@pytest.mark.parametrize("kw, match", [
    (dict(values=np.ones(500)), "all equal"),
    (dict(values=np.ones(3)), "same length"),
    (dict(weights=-np.ones(500)), "positive"),
    (dict(weights=np.ones(500), min_cases=1), "at least 2"),
    (dict(max_temporal=0), "max_temporal"),
    (dict(direction="up"), "direction"),
    (dict(day_of_week="yes"), "day_of_week"),
    (dict(purely_spatial=1), "purely_spatial"),
    (dict(purely_spatial=True, prospective=True, surveillance_start=20), "surveillance_start"),
])
def test_bad_input_is_refused_before_work(kw, match):
    xy, loc, day, x, w = _data(seed=11, n_loc=25, n_obs=500, T=30)
    args = dict(values=x, weights=None, location_ids=loc, n_replicates=9, progress=False)
    args.update(kw)
    with pytest.raises((ValueError, TypeError), match=match):
        hp.scan.space_time_normal(xy[loc], times=day, **args)


# ---------------------------------------------------------------------------- SaTScan 10.3.2
#: name -> (case file, AnalysisType, ScanAreas)
_ANALYSES = {"retrospective": ("st.cas", "3", "1"), "prospective": ("st.cas", "4", "1"),
             "weighted both": ("stw.cas", "3", "3"), "surveillance": ("st.cas", "4", "1"),
             "surveillance 20 %": ("stw.cas", "4", "1"), "weekly": ("stwk.cas", "3", "1"),
             "temporal": ("st.cas", "2", "1"), "temporal prospective": ("st.cas", "6", "1"),
             "temporal weighted both": ("stw.cas", "2", "3"), "purely temporal included": ("stw.cas", "3", "3"),
             "purely spatial included": ("stps.cas", "3", "1"), "purely spatial prospective": ("stps.cas", "4", "1"),
             "purely temporal and purely spatial included": ("stps.cas", "3", "1")}
#: the measurements of the weekly analysis are higher on Mondays (2020/1/6 is day 5) everywhere
_MONDAY_EXCESS = 8.0
#: and those of the purely spatial analyses around location 8
_SPATIAL_EXCESS = 4.0
#: the surveillances: prospective analyses adjusted for the earlier ones since 2020/2/15, circles up to 30 (the
#: limit SaTScan takes then), at most 14 days or 20 % of each analysis's period
_SURVEILLANCE = {"surveillance": ["MaxTemporalSizeInterpretation=1", "MaxTemporalSize=14"],
                 "surveillance 20 %": ["MaxTemporalSizeInterpretation=0", "MaxTemporalSize=20"]}


def _satscan_data():
    """40 locations, 600 observations over 60 days (2020/1/1 to 2020/2/29), measurements N(50, 8) raised by 12
    within 30 of location 0 on days 20-29; weights in [0.5, 2]."""
    rng = np.random.default_rng(7)
    xy = rng.uniform(0, 100, (40, 2)).round(2)
    loc = np.concatenate([np.arange(40), rng.integers(0, 40, 560)])
    day = rng.integers(0, 60, 600)
    x = rng.normal(50.0, 8.0, 600)
    x += 12.0 * ((np.hypot(*(xy[loc] - xy[0]).T) < 30) & (day >= 20) & (day < 30))
    return xy, loc, day, x.round(3), rng.uniform(0.5, 2.0, 600).round(3)


def _write_inputs(folder: Path) -> None:
    xy, loc, day, x, w = _satscan_data()
    dates = [str(np.datetime64("2020-01-01") + np.timedelta64(int(t), "D")).replace("-", "/") for t in day]
    # and one location without observations (a centre, and a member of the circles that reach it, in SaTScan)
    (folder / "st.geo").write_text("".join(f"L{i} {a} {b}\n" for i, (a, b) in enumerate(xy)) + "E0 62.5 80.5\n")
    (folder / "st.cas").write_text("".join(f"L{g} 1 {d} {v}\n" for g, d, v in zip(loc, dates, x)))
    (folder / "stw.cas").write_text("".join(f"L{g} 1 {d} {v} {u}\n" for g, d, v, u in zip(loc, dates, x, w)))
    (folder / "stwk.cas").write_text("".join(f"L{g} 1 {d} {v}\n" for g, d, v in zip(loc, dates, _weekly(x, day))))
    (folder / "stps.cas").write_text("".join(f"L{g} 1 {d} {v}\n" for g, d, v in zip(loc, dates,
                                                                                      _spatially(xy, loc, x))))


def _spatially(xy, loc, x):
    """The purely spatial analyses' measurements: also higher by ``_SPATIAL_EXCESS`` within 20 of location 8 on every
    day."""
    return (x + _SPATIAL_EXCESS * (np.hypot(*(xy[loc] - xy[8]).T) < 20)).round(3)


def _weekly(x, day):
    return (x + _MONDAY_EXCESS * (day % 7 == 5)).round(3)


def _prm(name: str, folder: Path) -> Path:
    cas, analysis, areas = _ANALYSES[name]
    stem = name.replace(" ", "_").replace("%", "pct")
    window = _SURVEILLANCE.get(name, ["MaxTemporalSizeInterpretation=1", "MaxTemporalSize=14"])
    earlier = (["AdjustForEarlierAnalyses=y", "ProspectiveStartDate=2020/2/15"] if name in _SURVEILLANCE else [])
    distance = (["UseDistanceFromCenterOption=y", "MaxSpatialSizeInDistanceFromCenter=30"] if name in _SURVEILLANCE
                else [])
    return write_prm(folder / f"{stem}.prm", [
        "[Input]", f"CaseFile={cas}", "PrecisionCaseTimes=3", "StartDate=2020/1/1", "EndDate=2020/2/29",
        "CoordinatesFile=st.geo", "CoordinatesType=0",
        "[Analysis]", f"AnalysisType={analysis}", "ModelType=5", f"ScanAreas={areas}", "TimeAggregationUnits=3",
        "TimeAggregationLength=1", *earlier,
        "[Space and Time Adjustments]", f"AdjustForWeeklyTrends={'y' if name == 'weekly' else 'n'}",
        "[Output]", f"ResultsFile={stem}.txt", "OutputGoogleEarthKML=n", "OutputShapefiles=n",
        "MostLikelyClusterEachCentroidDBase=y", "LaunchMapViewer=n",
        "[Spatial Window]", "MaxSpatialSizeInPopulationAtRisk=50", "SpatialWindowShapeType=0", *distance,
        f"IncludePurelyTemporal={'y' if name.startswith('purely temporal') else 'n'}",
        "[Temporal Window]", *window, f"IncludePurelySpatial={'y' if 'purely spatial' in name else 'n'}",
        "[Inference]", "MonteCarloReps=999", "PValueReportType=1",
        "[Run Options]", "NumberParallelProcesses=1"])


def run_satscan(binary) -> dict:
    """SaTScan's cluster tables (``.col.dbf``) and the clusters' location ids (report) of every analysis."""
    out = {}
    with scratch_folder("hphawkes-normal-st-") as folder:
        _write_inputs(folder)
        for name in _ANALYSES:
            prm = _prm(name, folder)
            run_parameter_file(binary, prm, folder)
            out[name] = {"rows": read_dbf(prm.with_suffix(".col.dbf")),
                         "ids": report_locations(prm.with_suffix(".txt").read_text())}
    return out


@pytest.fixture(scope="module")
def satscan_output():
    return oracle(FIXTURE, run_satscan)


@pytest.mark.parametrize("name", list(_ANALYSES))
def test_run_prm_matches_satscan(name, satscan_output, tmp_path):
    _write_inputs(tmp_path)
    prm = _prm(name, tmp_path)
    if name in _SURVEILLANCE:
        with pytest.warns(UserWarning, match="SaTScan 10.3.2 does not adjust them"):
            res = hp.scan.run_prm(prm, seed=1, progress=False)
        # SaTScan 10.3.2 takes AdjustForEarlierAnalyses for the normal model but its replicates' cylinders end
        # on the last day only: its p-values are those of the unadjusted surveillance's last analysis. Ours
        # (every replicate's maximum over the cylinders of every analysis since the start) are larger.
        spec = prm_arguments(prm)
        spec["kwargs"].pop("surveillance_start")
        last = run_space_time_normal(spec, dict(seed=1, executor=None, backend="auto", threads=None, progress=False))
        k = len(res.clusters)
        assert 0 < k <= len(last.clusters)
        np.testing.assert_array_equal(res.clusters.log_likelihood_ratio, last.clusters.log_likelihood_ratio[:k])
        assert (res.clusters.p_value.to_numpy() >= last.clusters.p_value.to_numpy()[:k]).all()
        assert res.clusters.p_value.iloc[0] > last.clusters.p_value.iloc[0] + 0.2
        res = last  # SaTScan's clusters and p-values are those of the last analysis alone
    else:
        res = hp.scan.run_prm(prm, seed=1, progress=False)
    pvals = res.clusters.p_value
    rows, ids = satscan_output[name]["rows"], satscan_output[name]["ids"]
    xy, loc, day, x, w = _satscan_data()
    if analysis_of(name) in ("2", "6"):
        _assert_temporal_as_satscan(res, satscan_output[name], x, w if name.endswith("weighted both") else None, day)
        return
    if "purely spatial" in name:
        x = _spatially(xy, loc, x)
    if name == "weekly":
        x = _weekly(x, day)
        assert res.day_of_week
        unadjusted = hp.scan.run_prm(prm.write_text(prm.read_text().replace("AdjustForWeeklyTrends=y",
                                                                            "AdjustForWeeklyTrends=n")) and prm,
                                     seed=1, progress=False)
        # the same clusters; the Mondays' excess is in every replicate too, so the p-values differ
        np.testing.assert_array_equal(unadjusted.clusters.log_likelihood_ratio[:len(res.clusters)],
                                      res.clusters.log_likelihood_ratio)
        assert abs(unadjusted.clusters.p_value.iloc[0] - res.clusters.p_value.iloc[0]) > 0.1
    weighted = _ANALYSES[name][0] == "stw.cas"
    assert res.model == ("space_time_weighted_normal" if weighted else "space_time_normal")
    cl = res.clusters
    # (the purely spatial cluster overlaps, in time, every other cluster that shares a location with it)
    assert len(cl) >= (2 if "purely spatial" in name else 3) and all(float(r["P_VALUE"]) >= 0.99 for r in rows[len(cl):])
    whole = (str(np.datetime64(cl.start.iloc[0], "D")), str(np.datetime64(cl.end.iloc[0], "D"))) == \
        ("2020-01-01", "2020-02-29")
    assert ("purely spatial" in name) == whole == res.purely_spatial
    for k, r in enumerate(rows[:len(cl)]):
        row = cl.iloc[k]
        pt_row = bool(getattr(row, "purely_temporal", False) is True)
        assert ([str(v) for v in row.location_ids] if not pt_row else ["All"]) == ids[k], k
        when = tuple(np.datetime64("-".join(f"{int(v):02d}" for v in r[key].split("/"))) for key in
                     ("START_DATE", "END_DATE"))
        assert (np.datetime64(row.start, "D"), np.datetime64(row.end, "D")) == when, k
        assert row.log_likelihood_ratio == pytest.approx(float(r["LLR"]), abs=1e-6), k
        p = float(r["P_VALUE"])
        assert abs(pvals.iloc[k] - p) <= 4 * math.sqrt(max(p * (1 - p), 1e-3) * 2 / 1000) + 2e-3, k
        members = [int(str(v)[1:]) for v in row.location_ids if str(v).startswith("L")]  # E0: no observations
        t1, t2 = (int((np.datetime64(v, "D") - np.datetime64("2020-01-01")).astype(int)) for v in (row.start, row.end))
        ours = np.isin(loc, members) & (day >= t1) & (day <= t2)
        assert row.cases == ours.sum() == int(float(r["OBSERVED"])), k
        assert row.mean_inside == pytest.approx(x[ours].mean(), rel=1e-12), k
        if not weighted:
            assert row.mean_inside == pytest.approx(float(r["MEAN_IN"]), abs=1e-9), k
            assert row.mean_outside == pytest.approx(float(r["MEAN_OUT"]), abs=1e-9), k
            assert row.variance == pytest.approx(float(r["VARIANCE"]), abs=1e-9), k
        else:
            # SaTScan 10.3.2's weighted cluster statistics (weight, means, variances) take in one more day than
            # the cluster's time frame (its LLR, time frame and count do not); ours are the cylinder's own
            theirs = np.isin(loc, members) & (day >= t1) & (day <= t2 + 1)
            assert float(r["WEIGHT_IN"]) == pytest.approx(w[theirs].sum(), abs=1e-9), k
            assert float(r["MEAN_IN"]) == pytest.approx(x[theirs].mean(), abs=1e-9), k
            assert row.weight_inside == pytest.approx(w[ours].sum(), rel=1e-12), k


def analysis_of(name: str) -> str:
    return _ANALYSES[name][1]


def _assert_temporal_as_satscan(res, sat, x, w, day):
    """A purely temporal analysis against SaTScan's: intervals, observations, means and LLRs, p-values within
    Monte Carlo error; its report's location lines say "All"."""
    rows = sat["rows"]
    assert res.model == ("temporal_weighted_normal" if w is not None else "temporal_normal") and res.purely_temporal
    cl = res.clusters
    assert len(cl) >= 1 and all(float(r["P_VALUE"]) >= 0.99 for r in rows[len(cl):])
    for k, r in enumerate(rows[:len(cl)]):
        row = cl.iloc[k]
        assert r["LOC_ID"] == "All" and sat["ids"][k] == ["All"], k
        when = tuple(np.datetime64("-".join(f"{int(v):02d}" for v in r[key].split("/"))) for key in
                     ("START_DATE", "END_DATE"))
        assert (np.datetime64(row.start, "D"), np.datetime64(row.end, "D")) == when, k
        assert row.log_likelihood_ratio == pytest.approx(float(r["LLR"]), abs=1e-6), k
        t1, t2 = (int((np.datetime64(v, "D") - np.datetime64("2020-01-01")).astype(int)) for v in (row.start, row.end))
        inside = (day >= t1) & (day <= t2)
        assert row.cases == inside.sum() == int(float(r["OBSERVED"])), k
        if w is None:
            assert row.mean_inside == pytest.approx(float(r["MEAN_IN"]), abs=1e-9), k
            assert row.variance == pytest.approx(float(r["VARIANCE"]), abs=1e-9), k
        p = float(r["P_VALUE"])
        assert abs(row.p_value - p) <= 4 * math.sqrt(max(p * (1 - p), 1e-3) * 2 / 1000) + 2e-3, k


def test_run_prm_refuses_what_the_normal_space_time_scan_does_not_honour(tmp_path):
    _write_inputs(tmp_path)
    prm = _prm("prospective", tmp_path)
    text = prm.read_text()
    for edits, match in (({"[Analysis]": "[Analysis]\nAdjustForEarlierAnalyses=y\nProspectiveStartDate=2020/2/1"},
                          "AdjustForEarlierAnalyses.*distance"),
                         ({"AdjustForWeeklyTrends=n": "AdjustForWeeklyTrends=y",
                           "TimeAggregationLength=1": "TimeAggregationLength=2"}, "AdjustForWeeklyTrends.*1 day"),
                         ({"IncludePurelySpatial=n": "IncludePurelySpatial=y",
                           "[Analysis]": "[Analysis]\nAdjustForEarlierAnalyses=y\nProspectiveStartDate=2020/2/1",
                           "SpatialWindowShapeType=0": "SpatialWindowShapeType=0\nUseDistanceFromCenterOption=y\n"
                                                       "MaxSpatialSizeInDistanceFromCenter=30"},
                          "IncludePurelySpatial")):
        edited = text
        for old, new in edits.items():
            edited = edited.replace(old, new, 1)
        prm.write_text(edited)
        with pytest.raises(ValueError, match=match):
            hp.scan.run_prm(prm, progress=False)


def test_cli_writes_the_analysis_into_a_folder(tmp_path, capsys):
    _write_inputs(tmp_path)
    prm = _prm("retrospective", tmp_path)
    out = tmp_path / "out"
    rc = main(["scan", "run", str(prm), "--replicates", "19", "--seed", "1", "--backend", "cpu", "--out", str(out),
               "--quiet"])
    assert rc == 0, capsys.readouterr().err
    table = pd.read_csv(out / "retrospective.col.csv")
    ref = hp.scan.run_prm(prm, n_replicates=19, seed=1, progress=False, backend="cpu")
    np.testing.assert_allclose(table.LLR.to_numpy(), ref.clusters.log_likelihood_ratio.to_numpy(), rtol=1e-6)
    assert (out / "retrospective.txt").read_text().count("Log likelihood ratio") == len(ref.clusters)


if __name__ == "__main__":  # write the stored SaTScan output (see tests/satscan_oracle.py)
    store(FIXTURE, run_satscan, "test_scan_normal_space_time.py")
