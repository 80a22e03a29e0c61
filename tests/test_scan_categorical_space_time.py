"""The space-time and purely temporal ordinal and multinomial scans (``hp.scan.space_time_ordinal``,
``space_time_multinomial``, ``temporal_ordinal``, ``temporal_multinomial``; SaTScan's ModelType 3 and 7 with
AnalysisType 2, 3, 4 or 6): every cylinder's LLR against the naive formula on its cases per category
(tests/naive_scan.categorical_llr), the replicates' kernel against the observed one, the CPU engine against the CUDA
kernel through the emulator, a planted cluster recovered, and run_prm and the CLI against SaTScan 10.3.2 on data
made here (tests/satscan_oracle.py).

``python tests/test_scan_categorical_space_time.py --satscan <binary>`` stores SaTScan's output for machines without
the binary.
"""
from __future__ import annotations

import itertools
import math
import sys
from pathlib import Path

import numpy as np
import pytest

import hphawkes_py as hp
from hphawkes_py.cli import main
from hphawkes_py.scan._prm import prm_arguments
from hphawkes_py.scan._categorical import permute_categories
from hphawkes_py.scan.categorical_files import run_space_time_categorical
from hphawkes_py.scan.cpu_categorical_space_time import CategoricalCylinderEngine, category_cumulative, \
    permuted_cumulative, window_bounds
from hphawkes_py.scan.cpu_normal_space_time import cumulative_from_end, intervals
from hphawkes_py.scan.monte_carlo import batch_children
from hphawkes_py.scan.windows import build_windows

sys.path.insert(0, str(Path(__file__).parent))
from engines import CUDA_ENGINES  # noqa: E402
from naive_scan import categorical_llr  # noqa: E402
from satscan_oracle import oracle, read_dbf, run_parameter_file, scratch_folder, store, stored, \
    write_prm  # noqa: E402
from test_scan_ordinal import _numbers, read_report  # noqa: E402

FIXTURE = stored("categorical_space_time")


def _data(seed=5, n_loc=12, n_cases=200, T=9, K=3):
    """Cases at random locations and days, categories 0..K-1; the higher ones more common within radius 3 of
    location 0 on days 3-5."""
    rng = np.random.default_rng(seed)
    xy = rng.uniform(0, 10, (n_loc, 2)).round(3)
    loc = np.concatenate([np.arange(n_loc), rng.integers(0, n_loc, n_cases - n_loc)])
    day = rng.integers(0, T, n_cases)
    cat = rng.integers(0, K, n_cases)
    near = (np.hypot(*(xy[loc] - xy[0]).T) < 3) & (day >= 3) & (day <= 5)
    cat = np.where(near, np.minimum(cat + rng.integers(0, 2, n_cases), K - 1), cat)
    return xy, loc, day, cat


def _engine(xy, loc, day, cat, T, max_t, t_end_min, ordinal, direction, K=3, max_population=0.5):
    L = len(xy)
    counts = np.zeros((L, T, K), dtype=np.int64)
    np.add.at(counts, (loc, day, cat), 1)
    offsets, neighbors, _, boundary = build_windows(xy.astype(float), xy.astype(float), counts.sum(axis=(1, 2)),
                                                    max_population * len(cat))
    t1s, t2s = intervals(T, max_t, t_end_min)
    eng = CategoricalCylinderEngine(offsets, neighbors, boundary, cumulative_from_end(counts.sum(axis=2)), t1s, t2s,
                                    counts.sum(axis=(0, 1)), ordinal, direction in ("high", "both") or not ordinal,
                                    direction in ("low", "both") and ordinal)
    return eng, counts


def _restricts(ordinal, direction):
    return [None] if not ordinal else {"high": ["high"], "low": ["low"], "both": ["high", "low"]}[direction]


def _naive(eng, counts, restricts):
    """(m, I) the best LLR of every centre and interval over its circles, from the cylinders' cases per category."""
    out = np.zeros((eng.n_centres, len(eng.t1s)))
    for i in range(eng.n_centres):
        for k in range(eng.offsets[i], eng.offsets[i + 1]):
            if not eng.boundary[k]:
                continue
            members = eng.neighbors[eng.offsets[i]:k + 1]
            for a, (t1, t2) in enumerate(zip(eng.t1s, eng.t2s)):
                c = counts[members, t1:t2 + 1].sum(axis=(0, 1))
                out[i, a] = max(out[i, a], *(categorical_llr(c, eng.tot, r) for r in restricts))
    return out


# ---------------------------------------------------------------------------- the cylinders
@pytest.mark.parametrize("ordinal, direction, max_t, t_end_min", [(True, "high", 4, 0), (True, "low", 9, 0),
                                                                  (True, "both", 3, 8), (False, "high", 5, 0)])
def test_every_interval_of_every_centre_matches_the_naive_formula(ordinal, direction, max_t, t_end_min):
    xy, loc, day, cat = _data()
    eng, counts = _engine(xy, loc, day, cat, 9, max_t, t_end_min, ordinal, direction)
    per_mv, per_j = eng.interval_best(counts)
    want = _naive(eng, counts, _restricts(ordinal, direction))
    assert (want > 0).mean() > 0.8 and want.size >= 36
    np.testing.assert_allclose(eng.llr(per_mv), want, rtol=1e-9, atol=1e-9)
    # the entry kept is a window end attaining the interval's best, the smallest such
    has = want > 1e-9
    assert (per_j[~has & (per_mv < -1e300)] == -1).all()
    for i, a in zip(*np.nonzero(has)):
        j = per_j[i, a]
        c = counts[eng.neighbors[eng.offsets[i]:j + 1], eng.t1s[a]:eng.t2s[a] + 1].sum(axis=(0, 1))
        assert max(categorical_llr(c, eng.tot, r) for r in _restricts(ordinal, direction)) == \
            pytest.approx(want[i, a], abs=1e-9)


@pytest.mark.parametrize("ordinal, direction, rare, t_end_min, sparse", [
    (True, "both", False, 0, False), (False, "high", False, 0, False), (True, "high", True, 0, False),
    (False, "high", True, 0, False), (True, "both", True, 9, False), (False, "high", False, -9, False),
    (True, "both", False, 9, True), (False, "high", False, 0, True)])
def test_the_replicates_kernel_gives_the_best_of_the_observed_kernel_on_each_replicate(ordinal, direction, rare,
                                                                                     t_end_min, sparse):
    # the replicates' kernel (leaving out cylinders that add no case, hold a shorter interval's cases or cannot
    # beat the replicate's best) against the observed data's kernel (every window end) run on each replicate's
    # cases; with a rare category the best windows are small ones, those the bounds could wrongly leave out;
    # sparse: about two cases a location, many of them on one day only (the first or last the intervals read)
    xy, loc, day, cat = _data(seed=8, n_loc=40 if sparse else 12, n_cases=90 if sparse else 200)
    if rare:
        cat = np.random.default_rng(1).choice(3, len(cat), p=[.9, .08, .02])
    if t_end_min == -9:  # prospective, the cases on days 0-3 of 10: cylinders whose cases fall on one day only
        day, t_end_min = day % 4, 9
    T = 9 if t_end_min == 0 else 10  # prospective: no case on the last day, which every interval ends on
    if sparse:  # most cases on the last day the intervals read, many locations' only ones
        day = np.where(np.random.default_rng(3).random(len(day)) < .6, T - 1, day)
    eng, counts = _engine(xy, loc, day, cat, T, 4 if t_end_min == 0 else 10, t_end_min, ordinal, direction)
    cum = permuted_cumulative(loc, day, cat, 3, len(xy), T, batch_children(np.random.SeedSequence(3), 6))
    got = eng.max_llr(cum)
    per_centre = eng.llr(eng.best_mv(cum))
    small = 0
    for r in range(cum.shape[3]):
        per_mv, per_j = eng.interval_best(cum[:, :-1, :, r] - cum[:, 1:, :, r])
        assert got[r] == eng.llr(per_mv).max()
        np.testing.assert_array_equal(per_centre[:, r], eng.llr(per_mv).max(axis=1))
        i, a = np.unravel_index(np.argmax(per_mv), per_mv.shape)
        j = per_j[i, a]
        small += counts[eng.neighbors[eng.offsets[i]:j + 1], eng.t1s[a]:eng.t2s[a] + 1].sum() <= 6
    assert len(np.unique(got)) >= 4
    assert small >= (3 if rare and t_end_min == 0 else 0)


@pytest.mark.parametrize("tot", [(3, 5, 2), (4, 1, 6, 2)])
def test_the_bound_on_a_window_of_w_cases_is_the_largest_llr_of_any_such_window(tot):
    # every count vector of every size W, by enumeration: the bound is their largest LLR (to its margin), which
    # the replicates' kernel relies on to leave out cylinders that cannot beat a replicate's best
    tot = np.array(tot)
    C = int(tot.sum())
    bounds = window_bounds(tot, 0.0)
    assert len(bounds) == C + 1
    best = np.zeros(C + 1)
    for c in itertools.product(*(range(t + 1) for t in tot)):
        best[sum(c)] = max(best[sum(c)], categorical_llr(c, tot, None))
    np.testing.assert_allclose(bounds, best, atol=2e-6)
    assert (bounds >= best).all()
    assert (np.diff(best[:4]) > 0.1).all()


@pytest.mark.parametrize("tot", [(3, 5, 2), (4, 1, 6, 2), (0, 5, 4)])
def test_pearsons_chi_square_bounds_the_llr_of_a_window(tot):
    # the replicates' kernels leave out a replicate's cylinder when X2 of its 2 x K table is at most the best so
    # far less LL0; every count vector of every size W, by enumeration: the LLR (the ordinal one is never above
    # it) is at most X2, and not at most X2 / 2 (the chi-square approximation of 2 LLR is no bound)
    tot = np.array(tot)
    C = int(tot.sum())
    p = tot / C
    llr, x2 = [], []
    for c in itertools.product(*(range(t + 1) for t in tot)):
        W = sum(c)
        if 0 < W < C:
            expected = np.array([W * p, (C - W) * p])
            observed = np.array([c, tot - np.array(c)])
            has = expected > 0
            x2.append((((observed - expected) ** 2)[has] / expected[has]).sum())
            llr.append(categorical_llr(c, tot, None))
    llr, x2 = np.array(llr), np.array(x2)
    assert (llr <= x2 + 1e-12).all()
    assert (llr > x2 / 2 + 1e-9).any()


def test_the_permutation_moves_categories_among_the_cases_which_keep_their_cells():
    xy, loc, day, cat = _data(seed=9)
    L, T = len(xy), 9
    seeds = batch_children(np.random.SeedSequence(4), 5)
    cum = permuted_cumulative(loc, day - 2, cat, 3, L, T - 2, seeds)
    per_cell = cum[:, :-1] - cum[:, 1:]
    # cases of days 0 and 1 (before the first scanned day) take part but are in no cell
    later = day >= 2
    n_lt = np.zeros((L, T - 2), dtype=np.int64)
    np.add.at(n_lt, (loc[later], day[later] - 2), 1)
    np.testing.assert_array_equal(per_cell.sum(axis=2), np.repeat(n_lt[:, :, None], 5, axis=2))
    # the cells of every case: the purely spatial permutation of the same seeds, cell by cell
    cell = np.where(later, loc * (T - 2) + day - 2, L * (T - 2))
    want = permute_categories(cell, cat, 3, L * (T - 2) + 1, seeds)[:L * (T - 2)].reshape(L, T - 2, 3, 5)
    np.testing.assert_array_equal(per_cell, want)
    assert not (per_cell[..., 0] == per_cell[..., 1]).all()
    np.testing.assert_array_equal(category_cumulative(want), cum)


@pytest.mark.parametrize("backend", CUDA_ENGINES)
@pytest.mark.parametrize("ordinal, direction", [(True, "both"), (False, "high")])
def test_cpu_and_cuda_engines_agree(ordinal, direction, backend):
    xy, loc, day, cat = _data(seed=2, n_cases=300)
    kw = dict(max_temporal=4, n_replicates=24, seed=7, progress=False)
    if ordinal:
        a = hp.scan.space_time_ordinal(xy[loc], cat, day, direction=direction, backend="cpu", **kw)
        b = hp.scan.space_time_ordinal(xy[loc], cat, day, direction=direction, backend=backend, **kw)
    else:
        a = hp.scan.space_time_multinomial(xy[loc], cat, day, backend="cpu", **kw)
        b = hp.scan.space_time_multinomial(xy[loc], cat, day, backend=backend, **kw)
    np.testing.assert_array_equal(a.null_llr, b.null_llr)
    assert len(np.unique(a.null_llr)) > 12
    np.testing.assert_array_equal(a.clusters.p_value, b.clusters.p_value)
    fn = hp.scan.space_time_ordinal if ordinal else hp.scan.space_time_multinomial
    pa, pb = (fn(xy[loc], cat, day, purely_spatial=True, backend=e, **kw) for e in ("cpu", backend))
    np.testing.assert_array_equal(pa.null_llr, pb.null_llr)
    ta = hp.scan.temporal_ordinal(day, cat, max_temporal=5, n_replicates=24, seed=7, progress=False, backend="cpu")
    tb = hp.scan.temporal_ordinal(day, cat, max_temporal=5, n_replicates=24, seed=7, progress=False, backend=backend)
    np.testing.assert_array_equal(ta.null_llr, tb.null_llr)


@pytest.mark.parametrize("backend", CUDA_ENGINES)
@pytest.mark.parametrize("ordinal", [True, False])
def test_cpu_and_cuda_kernels_agree_per_centre_with_and_without_a_floor(ordinal, backend):
    # the kernels' values per centre: without a floor each centre's best (the cylinders left out by X2, the bound
    # and the pooling test are then those of the centre's own best so far), with one the larger of the two
    from hphawkes_py._backend import get_device
    from hphawkes_py.scan.gpu import GpuCategoricalCylinderEngine

    xy, loc, day, cat = _data(seed=6, n_loc=20, n_cases=300)
    eng, _ = _engine(xy, loc, day, cat, 9, 4, 0, ordinal, "both")
    cum = permuted_cumulative(loc, day, cat, 3, len(xy), 9, batch_children(np.random.SeedSequence(5), 40))
    gpu = GpuCategoricalCylinderEngine(eng, device=get_device(backend), backend=backend)
    own = eng.best_mv(cum)
    np.testing.assert_array_equal(gpu.best_mv(cum), own)
    floor = np.quantile(own, 0.7, axis=0, method="lower")  # values of the replicates' cylinders
    centres = np.arange(1, eng.n_centres, 3)
    got = gpu.best_mv(cum, centres, floor)
    np.testing.assert_array_equal(got, eng.best_mv(cum, centres, floor))
    np.testing.assert_array_equal(got, np.maximum(own[centres], floor))
    assert (own[centres] < floor).any() and (own[centres] > floor).any()
    np.testing.assert_array_equal(gpu.max_llr(cum), eng.max_llr(cum))
    np.testing.assert_array_equal(eng.max_llr(cum), eng.llr(own.max(axis=0)))


@pytest.mark.parametrize("ordinal", [True, False])
def test_the_purely_spatial_clusters_are_the_circles_over_the_whole_period(ordinal):
    # higher categories around location 5 on every day: a purely spatial cluster. Its LLR is the purely spatial
    # scan's, every replicate's maximum the larger of the cylinders' (at most 8 of the 9 days) and the purely
    # spatial scan's of the same permutation
    xy, loc, day, cat = _data(seed=5, n_cases=400)
    near = np.hypot(*(xy[loc] - xy[5]).T) < 3
    cat = np.where(near & (np.random.default_rng(2).random(len(cat)) < .6), np.minimum(cat + 1, 2), cat)
    kw = dict(n_replicates=40, seed=3, progress=False, backend="cpu", location_ids=loc)
    st = hp.scan.space_time_ordinal if ordinal else hp.scan.space_time_multinomial
    spatial = hp.scan.ordinal if ordinal else hp.scan.multinomial
    res = st(xy[loc], cat, day, max_temporal=8, purely_spatial=True, **kw)
    cylinders = st(xy[loc], cat, day, max_temporal=8, **kw)
    circles = spatial(xy[loc], cat, **kw)
    np.testing.assert_array_equal(res.null_llr, np.maximum(cylinders.null_llr, circles.null_llr))
    assert (cylinders.null_llr < circles.null_llr).any() and (cylinders.null_llr > circles.null_llr).any()
    top = res.most_likely
    assert res.purely_spatial and (top.start, top.end) == (0, 8)
    assert top.log_likelihood_ratio == circles.most_likely.log_likelihood_ratio
    assert top.location_ids == circles.most_likely.location_ids
    assert top.observed_by_category == circles.most_likely.observed_by_category
    assert top.log_likelihood_ratio > cylinders.most_likely.log_likelihood_ratio + 1
    # a cylinder that beats its centre's circle stays that centre's candidate
    assert ((res.clusters.start != 0) | (res.clusters.end != 8)).any()


def test_results_do_not_depend_on_threads_or_batching(monkeypatch):
    import hphawkes_py.scan.monte_carlo as mc

    xy, loc, day, cat = _data(seed=3)
    kw = dict(max_temporal=4, n_replicates=30, seed=11, progress=False, backend="cpu")
    a = hp.scan.space_time_ordinal(xy[loc], cat, day, threads=1, **kw)
    monkeypatch.setattr(mc, "CPU_BATCH_BYTES", 16 * 12 * 10 * 3 * 7)  # batches of 7 replicates
    b = hp.scan.space_time_ordinal(xy[loc], cat, day, threads=2, **kw)
    np.testing.assert_array_equal(a.null_llr, b.null_llr)


def test_a_planted_cluster_is_recovered_with_its_category_table():
    rng = np.random.default_rng(12)
    xy = rng.uniform(0, 10, (30, 2)).round(3)
    loc = rng.integers(0, 30, 2000)
    day = rng.integers(0, 50, 2000)
    near = (np.hypot(*(xy[loc] - xy[4]).T) < 2.0) & (day >= 30) & (day < 36)
    grade = np.where(near, rng.choice([1, 2, 3], 2000, p=[.05, .15, .8]), rng.choice([1, 2, 3], 2000, p=[.5, .3, .2]))
    res = hp.scan.space_time_ordinal(xy[loc], grade, day, location_ids=loc, max_temporal=10, n_replicates=99,
                                     seed=1, progress=False, backend="cpu")
    top = res.most_likely
    planted = set(np.flatnonzero(np.hypot(*(xy - xy[4]).T) < 2.0).tolist())
    got = set(int(v) for v in top.location_ids)
    assert len(got & planted) >= 0.6 * len(planted) and len(got - planted) <= 2
    assert 28 <= top.start <= 31 and 34 <= top.end <= 37
    assert top.p_value == 0.01 and top.cluster_type == "high"
    inside = np.isin(loc, list(got)) & (day >= top.start) & (day <= top.end)
    assert top.cases == inside.sum()
    # a group of categories pooled by the order restriction is one entry of the table
    assert top.observed_by_category == [int(np.isin(grade[inside], g).sum()) for g in top.categories]
    assert top.log_likelihood_ratio == pytest.approx(
        categorical_llr(np.bincount(grade[inside] - 1, minlength=3), np.bincount(grade - 1, minlength=3), "high"),
        abs=1e-9)


@pytest.mark.parametrize("kw, exc, match", [
    (dict(categories=np.zeros(5)), ValueError, "one entry per case"),
    (dict(categories=np.ones(200)), ValueError, "at least 2 categories"),
    (dict(categories=np.array(["a", "b"] * 100)), TypeError, "must be numbers"),
    (dict(times=np.arange(199)), ValueError, "one time per row"),
    (dict(purely_temporal="yes"), TypeError, "purely_temporal"),
    (dict(max_temporal=0), ValueError, "max_temporal"),
    (dict(purely_spatial=1), TypeError, "purely_spatial"),
    (dict(purely_spatial=True, prospective=True, surveillance_start=6), ValueError, "surveillance_start"),
    (dict(purely_spatial=True, times=np.zeros(200, dtype=int)), ValueError, "at least 2 days"),
])
def test_bad_inputs_are_refused_before_any_work(kw, exc, match):
    xy, loc, day, cat = _data()
    args = dict(coords=xy[loc], categories=cat, times=day)
    args.update({k: v for k, v in kw.items() if k in args})
    rest = {k: v for k, v in kw.items() if k not in args}
    with pytest.raises(exc, match=match):
        hp.scan.space_time_ordinal(args["coords"], args["categories"], args["times"], progress=False, **rest)


@pytest.mark.parametrize("call, exc, match", [
    (lambda xy, day, cat: hp.scan.space_time_multinomial(xy, cat[:-1], day), ValueError, "one entry per case"),
    (lambda xy, day, cat: hp.scan.space_time_multinomial(xy, np.where(cat == 0, None, cat).astype(object), day),
     ValueError, "must not be missing"),
    (lambda xy, day, cat: hp.scan.space_time_multinomial(xy, cat, day, max_population=0.7), ValueError,
     "max_population"),
    (lambda xy, day, cat: hp.scan.temporal_ordinal(day, cat, max_temporal_percent=95), ValueError, "90"),
    (lambda xy, day, cat: hp.scan.temporal_ordinal(day, cat.astype(float) * np.nan), ValueError, "finite"),
    (lambda xy, day, cat: hp.scan.temporal_ordinal(day, cat, direction="up"), ValueError, "direction"),
    (lambda xy, day, cat: hp.scan.temporal_multinomial(day, cat, n_replicates=0), ValueError, "n_replicates"),
    (lambda xy, day, cat: hp.scan.temporal_multinomial(day[:-1], cat), ValueError, "one entry per case"),
    (lambda xy, day, cat: hp.scan.temporal_multinomial(day, cat, prospective="no"), TypeError, "prospective"),
])
def test_the_other_entry_points_refuse_bad_inputs(call, exc, match):
    xy, loc, day, cat = _data()
    with pytest.raises(exc, match=match):
        call(xy[loc], day, cat)


# ---------------------------------------------------------------------------- SaTScan 10.3.2
#: name -> (ModelType, AnalysisType, ScanAreas, extra settings)
ANALYSES = {
    "ordinal retrospective": ("3", "3", "1", []),
    "ordinal prospective both": ("3", "4", "3", []),
    "ordinal low 20": ("3", "3", "2", ["MaxSpatialSizeInPopulationAtRisk=20"]),
    "ordinal 3-day intervals": ("3", "3", "1", ["TimeAggregationLength=3", "MaxTemporalSize=9"]),
    "multinomial retrospective": ("7", "3", "1", []),
    "multinomial purely temporal included": ("7", "3", "1", ["IncludePurelyTemporal=y"]),
    "ordinal surveillance": ("3", "4", "3", ["AdjustForEarlierAnalyses=y", "ProspectiveStartDate=2020/2/15",
                                             "UseDistanceFromCenterOption=y", "MaxSpatialSizeInDistanceFromCenter=30"]),
    "multinomial surveillance 20 %": ("7", "4", "1", ["AdjustForEarlierAnalyses=y", "ProspectiveStartDate=2020/2/15",
                                                      "UseDistanceFromCenterOption=y",
                                                      "MaxSpatialSizeInDistanceFromCenter=30",
                                                      "MaxTemporalSizeInterpretation=0", "MaxTemporalSize=20"]),
    "ordinal weekly": ("3", "3", "1", ["CaseFile=ordwk.cas", "AdjustForWeeklyTrends=y"]),
    "multinomial temporal weekly": ("7", "2", "1", ["CaseFile=multwk.cas", "AdjustForWeeklyTrends=y",
                                                    "MaxTemporalSizeInterpretation=0", "MaxTemporalSize=50"]),
    "ordinal temporal": ("3", "2", "1", ["MaxTemporalSizeInterpretation=0", "MaxTemporalSize=50"]),
    "multinomial temporal prospective": ("7", "6", "1", ["MaxTemporalSizeInterpretation=0", "MaxTemporalSize=20"]),
    "ordinal purely spatial included": ("3", "3", "1", ["CaseFile=ordps.cas", "IncludePurelySpatial=y"]),
    "multinomial prospective purely spatial included": ("7", "4", "1", ["CaseFile=multps.cas",
                                                                        "IncludePurelySpatial=y"]),
}


def satscan_data():
    """40 locations, 900 cases over 60 days (2020/1/1 to 2020/2/29) in grades 1-4: higher grades within 30 of
    location 0 on days 20-29, lower ones within 25 of location 1 on days 40-47, and everywhere on days 50-53."""
    rng = np.random.default_rng(31)
    xy = rng.uniform(0, 100, (40, 2)).round(2)
    loc = np.concatenate([np.arange(40), rng.integers(0, 40, 860)])
    day = rng.integers(0, 60, 900)
    cat = rng.choice([1, 2, 3, 4], 900, p=[.3, .3, .2, .2])
    hi = rng.choice([1, 2, 3, 4], 900, p=[.1, .2, .3, .4])
    lo = rng.choice([1, 2, 3, 4], 900, p=[.6, .25, .1, .05])
    up = (np.hypot(*(xy[loc] - xy[0]).T) < 30) & (day >= 20) & (day < 30)
    down = ((np.hypot(*(xy[loc] - xy[1]).T) < 25) & (day >= 40) & (day < 48)) | ((day >= 50) & (day < 54))
    return xy, loc, day, np.where(up, hi, np.where(down, lo, cat))


def _write_inputs(folder: Path) -> None:
    xy, loc, day, cat = satscan_data()
    dates = [str(np.datetime64("2020-01-01") + np.timedelta64(int(t), "D")).replace("-", "/") for t in day]
    # and one location without cases (a centre, and a member of the circles that reach it, in SaTScan)
    (folder / "st.geo").write_text("".join(f"L{i} {a} {b}\n" for i, (a, b) in enumerate(xy)) + "E0 62.5 80.5\n")
    (folder / "ord.cas").write_text("".join(f"L{g} 1 {d} {c}\n" for g, d, c in zip(loc, dates, cat)))
    (folder / "mult.cas").write_text("".join(f"L{g} 1 {d} grade{c}\n" for g, d, c in zip(loc, dates, cat)))
    # the weekly analyses' cases: one grade higher (at most 4) on every Monday (2020/1/6 is day 5), everywhere
    wk = _weekly(cat, day)
    (folder / "ordwk.cas").write_text("".join(f"L{g} 1 {d} {c}\n" for g, d, c in zip(loc, dates, wk)))
    (folder / "multwk.cas").write_text("".join(f"L{g} 1 {d} grade{c}\n" for g, d, c in zip(loc, dates, wk)))
    # the purely spatial analyses' cases: also higher grades around location 8 on every day
    ps = _spatially(xy, loc, cat)
    (folder / "ordps.cas").write_text("".join(f"L{g} 1 {d} {c}\n" for g, d, c in zip(loc, dates, ps)))
    (folder / "multps.cas").write_text("".join(f"L{g} 1 {d} grade{c}\n" for g, d, c in zip(loc, dates, ps)))


def _weekly(cat, day):
    return np.where(day % 7 == 5, np.minimum(cat + 1, 4), cat)


def _spatially(xy, loc, cat):
    """One grade higher (at most 4) for 70 % of the cases within 20 of location 8, on every day."""
    near = np.hypot(*(xy[loc] - xy[8]).T) < 20
    return np.where(near & (np.random.default_rng(4).random(len(cat)) < .7), np.minimum(cat + 1, 4), cat)


#: the section of SaTScan's parameter file each setting of ANALYSES belongs to (SaTScan reads a key in its own)
_SECTIONS = {"CaseFile": "[Input]", "AdjustForWeeklyTrends": "[Space and Time Adjustments]",
             "TimeAggregationLength": "[Analysis]", "MaxSpatialSizeInPopulationAtRisk": "[Spatial Window]",
             "AdjustForEarlierAnalyses": "[Analysis]", "ProspectiveStartDate": "[Analysis]",
             "UseDistanceFromCenterOption": "[Spatial Window]", "MaxSpatialSizeInDistanceFromCenter": "[Spatial Window]",
             "IncludePurelyTemporal": "[Spatial Window]", "MaxTemporalSizeInterpretation": "[Temporal Window]",
             "MaxTemporalSize": "[Temporal Window]", "IncludePurelySpatial": "[Temporal Window]"}


def _prm(name: str, folder: Path) -> Path:
    model, analysis, areas, extra = ANALYSES[name]
    stem = name.replace(" ", "_")
    settings = dict(e.split("=") for e in ("MaxSpatialSizeInPopulationAtRisk=50", "TimeAggregationLength=1",
                                           "MaxTemporalSizeInterpretation=1", "MaxTemporalSize=7",
                                           "IncludePurelyTemporal=n", "IncludePurelySpatial=n"))
    settings.update(e.split("=") for e in extra)

    def section(name):
        return [name] + [f"{k}={v}" for k, v in settings.items() if _SECTIONS[k] == name]

    settings.setdefault("CaseFile", "ord.cas" if model == "3" else "mult.cas")
    return write_prm(folder / f"{stem}.prm", [
        *section("[Input]"), "PrecisionCaseTimes=3",
        "StartDate=2020/1/1", "EndDate=2020/2/29", "CoordinatesFile=st.geo", "CoordinatesType=0",
        *section("[Analysis]"), f"AnalysisType={analysis}", f"ModelType={model}", f"ScanAreas={areas}",
        "TimeAggregationUnits=3",
        "[Output]", f"ResultsFile={stem}.txt", "OutputGoogleEarthKML=n", "OutputShapefiles=n",
        "MostLikelyClusterEachCentroidDBase=y", "LaunchMapViewer=n",
        *section("[Spatial Window]"), "SpatialWindowShapeType=0",
        *section("[Temporal Window]"), *section("[Space and Time Adjustments]"),
        "[Inference]", "MonteCarloReps=999", "PValueReportType=1",
        "[Run Options]", "NumberParallelProcesses=1"])


def run_satscan(binary) -> dict:
    """SaTScan's cluster tables (``.col.dbf``) and the clusters of its report (with their category tables) of every
    analysis."""
    out = {}
    with scratch_folder("hphawkes-categorical-st-") as folder:
        _write_inputs(folder)
        for name in ANALYSES:
            prm = _prm(name, folder)
            run_parameter_file(binary, prm, folder)
            rows = read_dbf(prm.with_suffix(".col.dbf"))
            out[name] = {"rows": [{k: r[k] for k in ("START_DATE", "END_DATE", "LLR", "P_VALUE")} for r in rows],
                         "report": read_report(prm.with_suffix(".txt").read_text())}
    return out


@pytest.fixture(scope="module")
def satscan_output():
    return oracle(FIXTURE, run_satscan)


def _date(s: str):
    return np.datetime64("-".join(f"{int(v):02d}" for v in s.split("/")))


@pytest.mark.parametrize("name", list(ANALYSES))
def test_run_prm_matches_satscan(name, satscan_output, tmp_path):
    _write_inputs(tmp_path)
    prm = _prm(name, tmp_path)
    if "surveillance" in name:
        with pytest.warns(UserWarning, match="SaTScan 10.3.2 does not adjust them"):
            res = hp.scan.run_prm(prm, seed=1, progress=False)
        # SaTScan 10.3.2 takes AdjustForEarlierAnalyses for these models but its replicates' cylinders end on the
        # last day only: its p-values are those of the unadjusted surveillance's last analysis. Ours (every
        # replicate's maximum over the cylinders of every analysis since the start) are larger.
        spec = prm_arguments(prm)
        spec["kwargs"].pop("surveillance_start")
        last = run_space_time_categorical(spec, dict(seed=1, executor=None, backend="auto", threads=None,
                                                     progress=False))
        k = len(res.clusters)
        assert 0 < k <= len(last.clusters)
        np.testing.assert_array_equal(res.clusters.log_likelihood_ratio, last.clusters.log_likelihood_ratio[:k])
        assert (res.clusters.p_value.to_numpy() >= last.clusters.p_value.to_numpy()[:k]).all()
        assert res.clusters.p_value.iloc[0] > last.clusters.p_value.iloc[0] + 0.1
        assert (res.null_llr.mean() > last.null_llr.mean())
        res = last  # SaTScan's clusters and p-values are those of the last analysis alone
    elif "weekly" in name:
        res = hp.scan.run_prm(prm, seed=1, progress=False)
        assert res.day_of_week
        unadjusted = hp.scan.run_prm(prm.write_text(prm.read_text().replace("AdjustForWeeklyTrends=y",
                                                                            "AdjustForWeeklyTrends=n")) and prm,
                                     seed=1, progress=False)
        # the same clusters; the Mondays' higher grades are in every replicate too, so the p-values differ
        assert not unadjusted.day_of_week
        k = min(len(res.clusters), len(unadjusted.clusters))
        np.testing.assert_array_equal(unadjusted.clusters.log_likelihood_ratio[:k], res.clusters.log_likelihood_ratio[:k])
        assert not np.array_equal(unadjusted.null_llr, res.null_llr)
    else:
        res = hp.scan.run_prm(prm, seed=1, progress=False)
    model, analysis = ANALYSES[name][:2]
    kind = {"3": "space_time_", "4": "space_time_", "2": "temporal_", "6": "temporal_"}[analysis]
    assert res.model == kind + ("ordinal" if model == "3" else "multinomial")
    rows, report = satscan_output[name]["rows"], satscan_output[name]["report"]
    cl = res.clusters
    # SaTScan lists a secondary cluster while its p-value is below 1: the last ones, near 1, may differ
    assert len(cl) >= 1 and len(rows) >= 1
    assert all(float(r["P_VALUE"]) >= 0.99 for r in rows[len(cl):]) and (cl.p_value.iloc[len(rows):] >= 0.99).all()
    for k in range(min(len(cl), len(rows))):
        row, r, sat = cl.iloc[k], rows[k], report[k]
        assert (np.datetime64(row.start, "D"), np.datetime64(row.end, "D")) == \
            (_date(r["START_DATE"]), _date(r["END_DATE"])), k
        assert row.log_likelihood_ratio == pytest.approx(float(r["LLR"]), abs=1e-6), k
        p = float(r["P_VALUE"])
        assert abs(row.p_value - p) <= 4 * math.sqrt(max(p * (1 - p), 1e-3) * 2 / 1000) + 2e-3, (k, row.p_value, p)
        ids = sat["Location IDs included"].replace(",", " ").split()
        # the purely temporal cluster (every location, "All" in SaTScan's report) and those of the temporal analyses
        whole = bool(getattr(row, "purely_temporal", False))
        assert ([str(v) for v in row.location_ids] if not whole else ["All"]) == ids, k
        assert row.cases == int(sat["Total cases"]), k
        groups = [g.strip(" []").replace(" ", "").split(",") for g in sat["Category"].split("],")]
        assert [[str(v) for v in g] for g in row.categories] == groups, k
        assert row.observed_by_category == [int(v) for v in sat["Number of cases"].split(",")], k
        for col, key, digits in (("expected_by_category", "Expected cases", 2),
                                 ("relative_risk_by_category", "Relative risk", 2)):
            for a, b in zip(getattr(row, col), _numbers(sat[key])):
                assert a == b if math.isinf(b) or b == 0 else abs(a - b) <= 0.5 * 10 ** -digits + 1e-9, (k, col)


def test_the_cli_writes_satscans_set_of_outputs(satscan_output, tmp_path):
    _write_inputs(tmp_path)
    prm = _prm("ordinal retrospective", tmp_path)
    out = tmp_path / "out"
    assert main(["scan", "run", str(prm), "--out", str(out), "--seed", "1", "--quiet"]) == 0
    text = (out / "ordinal_retrospective.txt").read_text()
    sat = satscan_output["ordinal retrospective"]
    top = read_report(text)[0]
    for key in ("Location IDs included", "Total cases", "Category", "Number of cases", "Expected cases",
                "Log likelihood ratio"):
        assert top[key] == sat["report"][0][key], key
    assert "Time frame............: 2020/1/21 to 2020/1/30" in text or "Time frame" in text
    col = (out / "ordinal_retrospective.col.csv").read_text().splitlines()
    assert col[0].startswith("CLUSTER,LOC_ID,X,Y,RADIUS,SPAN,START_DATE,END_DATE,NUMBER_LOC,LLR,P_VALUE")
    assert col[1].split(",")[6:8] == [sat["rows"][0]["START_DATE"], sat["rows"][0]["END_DATE"]]


@pytest.mark.parametrize("name, edit, match", [
    ("ordinal surveillance", "IncludePurelySpatial=y", "IncludePurelySpatial"),
    ("ordinal retrospective", "TimeTrendAdjustmentType=2", "TimeTrendAdjustmentType"),
])
def test_run_prm_refuses_what_these_models_do_not_do(name, edit, match, tmp_path):
    _write_inputs(tmp_path)
    prm = _prm(name, tmp_path)
    key = edit.split("=")[0]
    text = prm.read_text()
    text = "\n".join(line for line in text.splitlines() if not line.startswith(key + "=")) + "\n"
    prm.write_text(text.replace("[Spatial Window]", f"{edit}\n[Spatial Window]"))
    with pytest.raises(ValueError, match=match):
        hp.scan.run_prm(prm, seed=1, progress=False)


if __name__ == "__main__":  # write the stored SaTScan output (see tests/satscan_oracle.py)
    store(FIXTURE, run_satscan, "test_scan_categorical_space_time.py")
