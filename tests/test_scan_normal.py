"""hp.scan.normal: the normal-model scan (unweighted and weighted) against a naive NumPy formula, a
planted cluster, its input checks, and SaTScan 10.3.2 itself.

The SaTScan oracle (test_normal_matches_satscan): SaTScan 10.3.2 run on the data made here
(_satscan_data) through tests/satscan_oracle.py, its cluster information file (.col.dbf) and the location
ids of its report read back; where the binary is not built, the same output stored by

    .venv/bin/python tests/test_scan_normal.py --satscan /work/scratch/satscan/SaTScan

in hphawkes_py/data/scan/satscan_outputs/satscan10_normal.json.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hphawkes_py.scan.normal_model import NORMAL, WEIGHTED_NORMAL, PermutationEngine, normal, satscan_min_cases
from hphawkes_py.scan.null_draws import permute_measurements
from hphawkes_py.scan.windows import build_windows

sys.path.insert(0, str(Path(__file__).parent))
from engines import CUDA_ENGINES  # noqa: E402
from naive_scan import normal_llr  # noqa: E402
from satscan_oracle import (oracle, read_dbf, report_locations, run_parameter_file, scratch_folder,  # noqa: E402
                            store, stored, write_prm)

FIXTURE = stored("normal")


def _data(seed=3, n_loc=30, n_obs=150, shift=0.0, weights=False):
    """Observations at random locations (one row each), measurements N(10, 2), shifted by ``shift``
    within radius 2.5 of location 0."""
    rng = np.random.default_rng(seed)
    xy = rng.uniform(0, 10, (n_loc, 2)).round(3)
    loc = np.concatenate([np.arange(n_loc), rng.integers(0, n_loc, n_obs - n_loc)])
    x = rng.normal(10.0, 2.0, n_obs).round(4)
    x += shift * (np.hypot(*(xy[loc] - xy[0]).T) < 2.5)
    w = rng.uniform(0.5, 2.0, n_obs).round(3) if weights else None
    return xy, loc, x, w


# ---------------------------------------------------------------------------- the LLR
def _engine(xy, loc, x, w, direction, min_cases, max_population=0.5):
    L = len(xy)
    n_loc = np.bincount(loc, minlength=L).astype(np.int64)
    offsets, neighbors, _, boundary = build_windows(xy.astype(float), xy.astype(float), n_loc,
                                                    max_population * len(x))
    first, second = (x, x * x) if w is None else (x * w, w)
    if w is None:
        U, U2, A, B = float(np.add.accumulate(x)[-1]), float(np.add.accumulate(x * x)[-1]), 0.0, 0.0
    else:
        U, U2 = float(np.add.accumulate(x * w)[-1]), float(np.add.accumulate(w)[-1])
        A = float(np.add.accumulate(x * x * w)[-1])
        B = 0.5 * len(x) * math.log(float((w * (x - U / U2) ** 2).sum()))
    eng = PermutationEngine(NORMAL if w is None else WEIGHTED_NORMAL, offsets, neighbors, boundary, n_loc, len(x), U,
                            U2, A, B, min_cases, min_cases, direction in ("high", "both"), direction in ("low", "both"))
    return eng, first, second


def _naive_best(eng, loc, x, w, direction, min_cases):
    best = np.zeros(eng.n_centres)
    for i in range(eng.n_centres):
        for k in range(eng.offsets[i], eng.offsets[i + 1]):
            if eng.boundary[k]:
                inside = np.isin(loc, eng.neighbors[eng.offsets[i]:k + 1])
                best[i] = max(best[i], normal_llr(x, w, inside, direction, min_cases))
    return best


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("direction", ["high", "low", "both"])
def test_llr_of_every_centre_matches_the_naive_formula(weighted, direction):
    xy, loc, x, w = _data(shift=1.5, weights=weighted)
    m = 2
    eng, first, second = _engine(xy, loc, x, w, direction, m)
    s1 = np.zeros(len(xy))
    s2 = np.zeros(len(xy))
    np.add.at(s1, loc, first)
    np.add.at(s2, loc, second)
    got, arg = eng.best_per_centre(s1[:, None], s2[:, None])
    want = _naive_best(eng, loc, x, w, direction, m)
    assert (want > 0).sum() >= 10  # the comparison covers many centres
    np.testing.assert_allclose(got[:, 0], want, rtol=1e-12, atol=1e-12)
    assert ((arg[:, 0] >= 0) == (want > 0)).all()
    # the reported window is the one with that LLR
    for i in np.flatnonzero(want > 0)[:5]:
        inside = np.isin(loc, eng.neighbors[eng.offsets[i]:arg[i, 0] + 1])
        assert normal_llr(x, w, inside, direction, m) == pytest.approx(got[i, 0], rel=1e-12)


def test_llr_without_weights_and_with_unit_weights_agree():
    xy, loc, x, _ = _data(shift=1.0)
    a = normal(xy[loc], x, location_ids=loc, n_replicates=9, seed=1, progress=False, min_cases=2)
    b = normal(xy[loc], x, weights=np.ones(len(x)), location_ids=loc, n_replicates=9, seed=1, progress=False)
    assert a.model == "normal" and b.model == "weighted_normal"
    assert a.most_likely.location_ids == b.most_likely.location_ids
    assert a.most_likely.log_likelihood_ratio == pytest.approx(b.most_likely.log_likelihood_ratio, rel=1e-12)
    np.testing.assert_allclose(a.null_llr, b.null_llr, rtol=1e-10)  # the same permutations


def test_min_cases_and_zero_sum_windows_follow_satscan():
    # one observation far above the rest at an isolated location: with SaTScan's default for the unweighted
    # high-mean scan (no minimum) it is the most likely cluster; with min_cases=2 it cannot be one
    xy = np.array([[0.0, 0.0], [10.0, 10.0], [10.5, 10.0], [11.0, 10.0], [10.0, 11.0]])
    loc = np.array([0, 1, 1, 2, 2, 3, 3, 4, 4])
    x = np.array([30.0, 1.0, 2.0, 1.5, 2.5, 1.0, 2.0, 1.2, 1.8])
    r0 = normal(xy[loc], x, location_ids=loc, n_replicates=9, seed=1, progress=False)
    assert r0.min_cases == 0 and r0.most_likely.location_ids == [0]
    r2 = normal(xy[loc], x, location_ids=loc, n_replicates=9, seed=1, progress=False, min_cases=2)
    assert (r2.clusters.cases >= 2).all() and [0] not in r2.clusters.location_ids.tolist()
    # an isolated location whose two measurements sum to exactly 0, far below the rest: its own window
    # is never a cluster (SaTScan skips a window whose sum is 0); a hair away from 0 it is the best one
    loc0 = np.array([0, 0, 1, 1, 2, 2, 3, 3, 4])
    for a, alone in ((5.0, False), (5.001, True)):
        x0 = np.array([-5.0, a, 2.0, 1.5, 2.5, 1.0, 2.0, 1.2, 1.8])
        eng, first, second = _engine(xy, loc0, x0, None, "low", 2)
        s1 = np.bincount(loc0, weights=first, minlength=5)
        s2 = np.bincount(loc0, weights=second, minlength=5)
        _, arg = eng.best_per_centre(s1[:, None], s2[:, None])
        assert (arg[0, 0] == eng.offsets[0]) == alone


def test_min_cases_translates_the_two_minimum_settings():
    assert satscan_min_cases("high", False) == 0        # the low-rate minimum (0) serves high means
    assert satscan_min_cases("high", False, 3, 2) == 3
    assert satscan_min_cases("low", False) == 2         # the high-rate minimum serves low means
    assert satscan_min_cases("both", False) == 2
    assert satscan_min_cases("high", True) == 2
    assert satscan_min_cases("low", True, 0, 2) == 2    # raised to 2 by SaTScan
    with pytest.raises(ValueError, match="higher mean a minimum of 5 observations and windows of a lower mean 2"):
        satscan_min_cases("both", False, 5, 2)
    with pytest.raises(ValueError, match="below 2"):
        satscan_min_cases("high", False, 0, 1)


# ---------------------------------------------------------------------------- the null
def test_null_permutes_the_measurements_among_the_observations():
    rng = np.random.default_rng(0)
    x = rng.normal(size=40)
    w = rng.uniform(0.5, 2, 40)
    loc = np.arange(40)  # one observation per location: each replicate's sums are a permutation
    seeds = np.random.SeedSequence(5).spawn(7)
    s1, s2 = permute_measurements(loc, x * w, w, 40, seeds)
    assert s1.shape == (40, 7)
    for r in range(7):
        order = np.argsort(s2[:, r])
        np.testing.assert_array_equal(np.sort(s2[:, r]), np.sort(w))
        # each weight travels with its own measurement
        np.testing.assert_array_equal(s1[order, r], (x * w)[np.argsort(w)])
    assert not (s1[:, 0] == x * w).all()
    # per replicate: the same draws whatever the batch
    a1, _ = permute_measurements(loc, x, x * x, 40, seeds[2:4])
    np.testing.assert_array_equal(a1, permute_measurements(loc, x, x * x, 40, seeds)[0][:, 2:4])


def test_locations_are_reported_once():
    xy, loc, x, _ = _data(shift=2.0)
    a = normal(xy[loc], x, n_replicates=9, seed=1, progress=False)  # ids: each location's first row
    top = a.most_likely
    assert top.n_locations == len(top.location_ids) == len(set(loc[top.location_ids]))
    assert all(np.flatnonzero(loc == loc[r])[0] == r for r in top.location_ids)
    b = normal(xy[loc], x, location_ids=loc, n_replicates=9, seed=1, progress=False)
    assert b.most_likely.location_ids == [int(loc[r]) for r in top.location_ids]
    assert b.most_likely.log_likelihood_ratio == top.log_likelihood_ratio


def test_results_do_not_depend_on_batching_or_threads():
    xy, loc, x, _ = _data(shift=1.0)
    a = normal(xy[loc], x, location_ids=loc, n_replicates=40, seed=7, progress=False)
    b = normal(xy[loc], x, location_ids=loc, n_replicates=40, seed=7, progress=False, threads=1)
    np.testing.assert_array_equal(a.null_llr, b.null_llr)
    assert a.null_llr.min() >= 0 and a.null_llr.std() > 0


@pytest.mark.parametrize("backend", CUDA_ENGINES)
@pytest.mark.parametrize("weighted", [False, True])
def test_normal_cpu_and_cuda_engines_identical(weighted, backend):
    xy, loc, x, w = _data(shift=1.5, weights=weighted)
    kw = dict(weights=w, location_ids=loc, n_replicates=60, seed=5, progress=False, direction="both",
              max_population=0.4)
    a = normal(xy[loc], x, backend="cpu", **kw)
    b = normal(xy[loc], x, backend=backend, **kw)
    assert b.backend == backend and a.backend == "cpu"
    np.testing.assert_array_equal(a.null_llr, b.null_llr)
    pd.testing.assert_frame_equal(a.clusters, b.clusters)


# ---------------------------------------------------------------------------- a planted cluster
@pytest.mark.parametrize("weighted", [False, True])
def test_planted_cluster_with_a_shifted_mean_is_recovered(weighted):
    xy, loc, x, w = _data(seed=11, n_loc=50, n_obs=300, shift=3.0, weights=weighted)
    truth = set(np.flatnonzero(np.hypot(*(xy - xy[0]).T) < 2.5).tolist())
    res = normal(xy[loc], x, weights=w, location_ids=loc, n_replicates=99, seed=2, progress=False)
    top = res.most_likely
    found = set(top.location_ids)
    assert len(found & truth) >= 0.8 * len(truth) and len(found - truth) <= 2
    assert top.p_value == 0.01
    assert top.mean_inside > top.mean_outside + 2
    inside = np.isin(loc, list(found))
    assert top.cases == inside.sum()
    assert top.mean_inside == pytest.approx(x[inside].mean(), rel=1e-12)
    # low means: the planted high cluster is not reported
    low = normal(xy[loc], x, weights=w, location_ids=loc, n_replicates=19, seed=2, progress=False, direction="low")
    assert low.clusters.empty or not (set(low.most_likely.location_ids) & truth) or low.most_likely.mean_inside < \
        low.most_likely.mean_outside


# ---------------------------------------------------------------------------- input checks
@pytest.mark.parametrize("kw, match", [
    (dict(values=[1.0, np.nan, 2.0]), "values"),
    (dict(values=[1.0, 2.0]), "same length"),
    (dict(values=[2.0, 2.0, 2.0]), "all equal"),
    (dict(values=[1e300, 2.0, 3.0]), "too large"),
    (dict(weights=[1.0, 0.0, 1.0]), r"weights\[1\] = 0.0"),
    (dict(weights=[1.0, -1.0, 1.0]), "positive"),
    (dict(weights=[1.0, 1.0]), "one entry per observation"),
    (dict(weights=[1.0, 1.0, 1.0], min_cases=1), "min_cases=1"),
    (dict(direction="both", min_cases=0), "min_cases=0"),
    (dict(min_cases=-1), "min_cases"),
    (dict(backend="quantum"), "backend"),
    (dict(location_ids=["a", "a", "b"]), "different coordinates"),
    (dict(max_population=0.7), "max_population"),
])
def test_bad_inputs_are_refused(kw, match):
    args = dict(coords=[[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]], values=[1.0, 2.0, 4.0])
    args.update(kw)
    with pytest.raises(ValueError, match=match):
        normal(args.pop("coords"), args.pop("values"), n_replicates=9, progress=False, **args)


# ---------------------------------------------------------------------------- SaTScan
_ANALYSES = {  # name -> (weighted, ScanAreas, MaxSpatialSizeInPopulationAtRisk)
    "unweighted high": (False, "1", "50"),
    "unweighted low": (False, "2", "50"),
    "unweighted both 20": (False, "3", "20"),
    "weighted high": (True, "1", "50"),
    "weighted both 20": (True, "3", "20"),
}
_DIRECTIONS = {"1": "high", "2": "low", "3": "both"}


def _satscan_data():
    """The data SaTScan and hp.scan both analyse: 40 locations, 240 observations, measurements shifted
    up around location 0 and down around location 1, weights in [0.5, 2]."""
    rng = np.random.default_rng(2024)
    xy = rng.uniform(0, 100, (40, 2)).round(2)
    loc = np.concatenate([np.arange(40), rng.integers(0, 40, 200)])
    x = rng.normal(50.0, 8.0, 240)
    x += 9.0 * (np.hypot(*(xy[loc] - xy[0]).T) < 25) - 7.0 * (np.hypot(*(xy[loc] - xy[1]).T) < 20)
    return xy, loc, x.round(3), rng.uniform(0.5, 2.0, 240).round(3)


def _prm(name, folder: Path) -> Path:
    weighted, areas, size = _ANALYSES[name]
    lines = ["[Input]", "CaseFile=normal.cas" if not weighted else "CaseFile=normal_w.cas", "PrecisionCaseTimes=0",
             "StartDate=2000/1/1", "EndDate=2000/12/31", "CoordinatesFile=normal.geo", "CoordinatesType=0",
             "[Analysis]", "AnalysisType=1", "ModelType=5", f"ScanAreas={areas}",
             "[Output]", f"ResultsFile={name.replace(' ', '_')}.txt", "OutputGoogleEarthKML=n", "OutputShapefiles=n",
             "MostLikelyClusterEachCentroidDBase=y", "CensusAreasReportedClustersASCII=n",
             "LaunchMapViewer=n",
             "[Spatial Window]", f"MaxSpatialSizeInPopulationAtRisk={size}", "SpatialWindowShapeType=0",
             "[Inference]", "MonteCarloReps=999", "PValueReportType=1",
             "[Run Options]", "NumberParallelProcesses=1"]
    return write_prm(folder / f"{name.replace(' ', '_')}.prm", lines)


def run_satscan(binary) -> dict:
    """SaTScan's cluster tables for every analysis of _ANALYSES, from its .col.dbf files and reports."""
    xy, loc, x, w = _satscan_data()
    with scratch_folder("hphawkes-normal-") as folder:
        (folder / "normal.geo").write_text("".join(f"L{i} {a} {b}\n" for i, (a, b) in enumerate(xy)))
        (folder / "normal.cas").write_text("".join(f"L{g} 1 {v}\n" for g, v in zip(loc, x)))
        (folder / "normal_w.cas").write_text("".join(f"L{g} 1 {v} {u}\n" for g, v, u in zip(loc, x, w)))
        out = {}
        for name in _ANALYSES:
            run_parameter_file(binary, _prm(name, folder), folder)
            report = (folder / f"{name.replace(' ', '_')}.txt").read_text()
            out[name] = {"rows": read_dbf(folder / f"{name.replace(' ', '_')}.col.dbf"),
                         "locations": report_locations(report)}
    return out


@pytest.fixture(scope="module")
def satscan_output():
    return oracle(FIXTURE, run_satscan)


@pytest.mark.parametrize("name", list(_ANALYSES))
def test_normal_matches_satscan(name, satscan_output):
    weighted, areas, size = _ANALYSES[name]
    sat = satscan_output[name]
    xy, loc, x, w = _satscan_data()
    direction = _DIRECTIONS[areas]
    res = normal(xy[loc], x, weights=w if weighted else None, location_ids=np.array([f"L{g}" for g in loc]),
                 max_population=int(size) / 100, direction=direction, n_replicates=999, seed=1, progress=False)
    rows = sat["rows"]
    assert len(res.clusters) == len(rows), res.clusters
    for k, (ours, theirs) in enumerate(zip(res.clusters.itertuples(), rows)):
        assert ours.location_ids == sat["locations"][k]
        assert ours.cases == int(float(theirs["OBSERVED"]))
        assert ours.log_likelihood_ratio == pytest.approx(theirs["LLR"], abs=1e-9)
        assert ours.mean_inside == pytest.approx(theirs["MEAN_IN"], abs=1e-9)
        assert ours.mean_outside == pytest.approx(theirs["MEAN_OUT"], abs=1e-9)
        assert ours.variance == pytest.approx(theirs["VARIANCE"], abs=1e-9)
        if weighted:
            assert ours.weighted_mean_inside == pytest.approx(theirs["W_MEAN_IN"], abs=1e-9)
            assert ours.weighted_variance == pytest.approx(theirs["W_VARIANCE"], abs=1e-9)
        p = float(theirs["P_VALUE"])
        # two Monte Carlo estimates of one p-value (999 replicates each): within 4 binomial s.e.
        se = math.sqrt(max(p * (1 - p), 1e-3) * 2 / 1000)
        assert abs(ours.p_value - p) <= 4 * se + 2e-3


if __name__ == "__main__":  # write the stored SaTScan output (see the module notes)
    store(FIXTURE, run_satscan, "test_scan_normal.py")
