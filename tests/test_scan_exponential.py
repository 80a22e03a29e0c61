"""hp.scan.exponential: the survival-data scan against a naive NumPy formula, a planted cluster of short
survival, censoring, its input checks, and SaTScan 10.3.2 itself.

The SaTScan oracle (test_exponential_matches_satscan): SaTScan 10.3.2 run on the data made here
(_satscan_data) through tests/satscan_oracle.py, its cluster information file (.col.dbf) and the location
ids of its report read back; where the binary is not built, the same output stored by

    .venv/bin/python tests/test_scan_exponential.py --satscan /work/scratch/satscan/SaTScan

in hphawkes_py/data/scan/satscan_outputs/satscan10_exponential.json.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from hphawkes_py.scan.exponential_model import exponential
from hphawkes_py.scan.normal_model import EXPONENTIAL, PermutationEngine
from hphawkes_py.scan.null_draws import permute_measurements
from hphawkes_py.scan.windows import build_windows

sys.path.insert(0, str(Path(__file__).parent))
from engines import CUDA_ENGINES  # noqa: E402
from satscan_oracle import (oracle, read_dbf, report_locations, run_parameter_file, scratch_folder,  # noqa: E402
                            store, stored, write_prm)

FIXTURE = stored("exponential")


def _data(seed=5, n_loc=30, n_pat=180, hazard=1.0):
    """Patients at random locations, exponential times (mean 5; divided by ``hazard`` within radius 2.5 of
    location 0), censored beyond 9."""
    rng = np.random.default_rng(seed)
    xy = rng.uniform(0, 10, (n_loc, 2)).round(3)
    loc = np.concatenate([np.arange(n_loc), rng.integers(0, n_loc, n_pat - n_loc)])
    near = np.hypot(*(xy[loc] - xy[0]).T) < 2.5
    t = (rng.exponential(5.0, n_pat) / np.where(near, hazard, 1.0)).round(3) + 0.001
    cen = t > 9
    return xy, loc, np.minimum(t, 9.0), cen


def _naive_llr(t, cen, inside, direction, min_cases):
    """The window's LLR from the definition: deaths c of C, expected mu = C x its share of the total time."""
    C = int((~cen).sum())
    c = int((~cen[inside]).sum())
    mu = C * t[inside].sum() / t.sum()
    if mu == 0:
        return 0.0
    high = c > mu
    if not ((direction in ("high", "both") and high and c >= min_cases) or (direction in ("low", "both") and c < mu)):
        return 0.0

    def xlogy(a, b):
        return a * math.log(a / b) if a > 0 else 0.0

    return xlogy(c, mu) + xlogy(C - c, C - mu)


def _engine(xy, loc, t, cen, direction, min_cases):
    L = len(xy)
    n_loc = np.bincount(loc, minlength=L).astype(np.int64)
    offsets, neighbors, _, boundary = build_windows(xy.astype(float), xy.astype(float), n_loc, 0.5 * len(t))
    C = int((~cen).sum())
    mu = t * (C / float(np.add.accumulate(t)[-1]))
    U = float(np.add.accumulate(mu)[-1])
    eng = PermutationEngine(EXPONENTIAL, offsets, neighbors, boundary, n_loc, C, U, 0.0, 0.0, 0.0, min_cases, 0,
                            direction in ("high", "both"), direction in ("low", "both"))
    return eng, (~cen).astype(float), mu


@pytest.mark.parametrize("direction", ["high", "low", "both"])
def test_llr_of_every_centre_matches_the_naive_formula(direction):
    xy, loc, t, cen = _data(hazard=2.5)
    eng, dead, mu = _engine(xy, loc, t, cen, direction, 2)
    s1 = np.bincount(loc, weights=dead, minlength=len(xy))
    s2 = np.zeros(len(xy))
    np.add.at(s2, loc, mu)
    got, arg = eng.best_per_centre(s1[:, None], s2[:, None])
    want = np.zeros(eng.n_centres)
    for i in range(eng.n_centres):
        for k in range(eng.offsets[i], eng.offsets[i + 1]):
            if eng.boundary[k]:
                inside = np.isin(loc, eng.neighbors[eng.offsets[i]:k + 1])
                want[i] = max(want[i], _naive_llr(t, cen, inside, direction, 2))
    assert (want > 0).sum() >= 10
    np.testing.assert_allclose(got[:, 0], want, rtol=1e-12, atol=1e-11)
    assert ((arg[:, 0] >= 0) == (want > 0)).all()


def test_censored_patients_count_in_the_window_not_in_the_cases():
    xy, loc, t, cen = _data(hazard=3.0)
    assert cen.sum() >= 5
    res = exponential(xy[loc], t, cen, location_ids=loc, n_replicates=19, seed=1, progress=False)
    top = res.most_likely
    inside = np.isin(loc, top.location_ids)
    assert top.population == inside.sum() and top.cases == (inside & ~cen).sum()
    assert top.censored == (inside & cen).sum()
    C = int((~cen).sum())
    assert res.n_cases == C and res.n_population == len(t)
    assert top.expected == pytest.approx(C * t[inside].sum() / t.sum(), rel=1e-12)
    assert top.mean_time_inside == pytest.approx(t[inside].mean(), rel=1e-12)
    # censoring given as 0/1 or as booleans gives the same analysis; no censoring is another one
    res01 = exponential(xy[loc], t, cen.astype(int), location_ids=loc, n_replicates=19, seed=1, progress=False)
    assert res01.most_likely.log_likelihood_ratio == top.log_likelihood_ratio
    np.testing.assert_array_equal(res01.null_llr, res.null_llr)
    none = exponential(xy[loc], t, location_ids=loc, n_replicates=19, seed=1, progress=False)
    assert none.n_cases == len(t) and none.most_likely.log_likelihood_ratio != top.log_likelihood_ratio


def test_null_permutes_time_and_censoring_together():
    rng = np.random.default_rng(0)
    t = rng.uniform(0.1, 5, 30)
    dead = (rng.uniform(size=30) < 0.7).astype(float)
    s1, s2 = permute_measurements(np.arange(30), dead, t, 30, np.random.SeedSequence(3).spawn(5))
    for r in range(5):
        np.testing.assert_array_equal(np.sort(s2[:, r]), np.sort(t))
        np.testing.assert_array_equal(s1[np.argsort(s2[:, r]), r], dead[np.argsort(t)])


@pytest.mark.parametrize("backend", CUDA_ENGINES)
def test_exponential_cpu_and_cuda_engines_agree(backend):
    xy, loc, t, cen = _data(hazard=2.0)
    kw = dict(location_ids=loc, n_replicates=60, seed=5, progress=False, direction="both", max_population=0.4)
    a = exponential(xy[loc], t, cen, backend="cpu", **kw)
    b = exponential(xy[loc], t, cen, backend=backend, **kw)
    assert b.backend == backend
    # the same windows; the LLRs within an ulp or so (the device's logarithms)
    np.testing.assert_allclose(a.null_llr, b.null_llr, rtol=1e-13, atol=1e-12)
    assert a.clusters.location_ids.tolist() == b.clusters.location_ids.tolist()
    np.testing.assert_allclose(a.clusters.log_likelihood_ratio, b.clusters.log_likelihood_ratio, rtol=1e-13)


def test_planted_cluster_of_short_survival_is_recovered():
    xy, loc, t, cen = _data(seed=8, n_loc=50, n_pat=400, hazard=4.0)
    truth = set(np.flatnonzero(np.hypot(*(xy - xy[0]).T) < 2.5).tolist())
    res = exponential(xy[loc], t, cen, location_ids=loc, n_replicates=99, seed=2, progress=False)
    top = res.most_likely
    found = set(top.location_ids)
    assert len(found & truth) >= 0.8 * len(truth) and len(found - truth) <= 2
    assert top.p_value == 0.01 and top.cases > 2 * top.expected
    assert top.mean_time_inside < top.mean_time_outside / 2
    low = exponential(xy[loc], t, cen, location_ids=loc, n_replicates=19, seed=2, progress=False, direction="low")
    assert low.clusters.empty or (low.clusters.cases < low.clusters.expected).all()


@pytest.mark.parametrize("kw, match", [
    (dict(times=[1.0, 0.0, 2.0]), r"times\[1\] = 0.0"),
    (dict(times=[1.0, np.inf, 2.0]), "times"),
    (dict(times=[1.0, 2.0]), "same length"),
    (dict(times=[1e308, 1e308, 1.0]), "too large"),
    (dict(censored=[0, 2, 0]), r"censored\[1\] = 2"),
    (dict(censored=["no", "yes", "no"]), "censored"),
    (dict(censored=[0, 1]), "one entry per patient"),
    (dict(censored=[1, 1, 1]), "every patient is censored"),
    (dict(min_cases=1), "min_cases=1"),
    (dict(backend="quantum"), "backend"),
    (dict(location_ids=["a", "a", "b"]), "different coordinates"),
])
def test_bad_inputs_are_refused(kw, match):
    args = dict(coords=[[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]], times=[1.0, 2.0, 4.0])
    args.update(kw)
    with pytest.raises(ValueError, match=match):
        exponential(args.pop("coords"), args.pop("times"), n_replicates=9, progress=False, **args)


# ---------------------------------------------------------------------------- SaTScan
_ANALYSES = {"high": ("1", "50"), "low": ("2", "50"), "both 20": ("3", "20")}  # ScanAreas, max % of patients


def _satscan_data():
    """The data SaTScan and hp.scan both analyse: 40 locations, 260 patients, shorter survival around
    location 0 and longer around location 1, censored beyond 12."""
    rng = np.random.default_rng(77)
    xy = rng.uniform(0, 100, (40, 2)).round(2)
    loc = np.concatenate([np.arange(40), rng.integers(0, 40, 220)])
    scale = np.where(np.hypot(*(xy[loc] - xy[0]).T) < 25, 2.0, 5.0)
    scale = np.where(np.hypot(*(xy[loc] - xy[1]).T) < 20, 10.0, scale)
    t = rng.exponential(scale).round(3) + 0.001
    return xy, loc, np.minimum(t, 12.0), (t > 12.0).astype(int)


def run_satscan(binary) -> dict:
    """SaTScan's cluster tables for every analysis of _ANALYSES, from its .col.dbf files and reports."""
    xy, loc, t, cen = _satscan_data()
    with scratch_folder("hphawkes-exponential-") as folder:
        (folder / "exp.geo").write_text("".join(f"L{i} {a} {b}\n" for i, (a, b) in enumerate(xy)))
        (folder / "exp.cas").write_text("".join(f"L{g} 1 {v} {c}\n" for g, v, c in zip(loc, t, cen)))
        out = {}
        for name, (areas, size) in _ANALYSES.items():
            stem = "exp_" + name.replace(" ", "_")
            prm = write_prm(folder / f"{stem}.prm", [
                "[Input]", "CaseFile=exp.cas", "PrecisionCaseTimes=0", "StartDate=2000/1/1", "EndDate=2000/12/31",
                "CoordinatesFile=exp.geo", "CoordinatesType=0", "[Analysis]", "AnalysisType=1", "ModelType=4",
                f"ScanAreas={areas}", "[Output]", f"ResultsFile={stem}.txt", "OutputGoogleEarthKML=n",
                "OutputShapefiles=n", "MostLikelyClusterEachCentroidDBase=y",
                "LaunchMapViewer=n", "[Spatial Window]", f"MaxSpatialSizeInPopulationAtRisk={size}",
                "SpatialWindowShapeType=0", "[Inference]", "MonteCarloReps=999", "PValueReportType=1",
                "[Run Options]", "NumberParallelProcesses=1"])
            run_parameter_file(binary, prm, folder)
            out[name] = {"rows": read_dbf(folder / f"{stem}.col.dbf"),
                         "locations": report_locations((folder / f"{stem}.txt").read_text())}
    return out


@pytest.fixture(scope="module")
def satscan_output():
    return oracle(FIXTURE, run_satscan)


@pytest.mark.parametrize("name", list(_ANALYSES))
def test_exponential_matches_satscan(name, satscan_output):
    areas, size = _ANALYSES[name]
    sat = satscan_output[name]
    xy, loc, t, cen = _satscan_data()
    res = exponential(xy[loc], t, cen, location_ids=np.array([f"L{g}" for g in loc]), max_population=int(size) / 100,
                      direction={"1": "high", "2": "low", "3": "both"}[areas], n_replicates=999, seed=1,
                      progress=False)
    rows = sat["rows"]
    assert len(res.clusters) == len(rows), res.clusters
    for k, (ours, theirs) in enumerate(zip(res.clusters.itertuples(), rows)):
        assert ours.location_ids == sat["locations"][k]
        assert ours.cases == int(float(theirs["OBSERVED"]))
        assert ours.expected == pytest.approx(theirs["EXPECTED"], abs=1e-9)
        assert ours.log_likelihood_ratio == pytest.approx(theirs["LLR"], abs=1e-9)
        p = float(theirs["P_VALUE"])
        se = math.sqrt(max(p * (1 - p), 1e-3) * 2 / 1000)
        assert abs(ours.p_value - p) <= 4 * se + 2e-3


if __name__ == "__main__":  # write the stored SaTScan output (see the module notes)
    store(FIXTURE, run_satscan, "test_scan_exponential.py")
