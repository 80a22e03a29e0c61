"""hp.scan.ordinal: the ordinal-model scan against a naive NumPy formula (the order-restricted maximum
likelihood by enumeration of the pooled categories), a planted cluster, its input checks, the CUDA
kernel on the emulator, and SaTScan 10.3.2 itself.

The SaTScan oracle (test_ordinal_matches_satscan here, test_multinomial_matches_satscan in
test_scan_multinomial.py): SaTScan 10.3.2 run on the data made here (satscan_data) through
tests/satscan_oracle.py, the numbers of its text report read back; where the binary is not built, the
same output stored by

    .venv/bin/python tests/test_scan_ordinal.py --satscan /work/scratch/satscan/SaTScan

in hphawkes_py/data/scan/satscan_outputs/satscan10_categorical.json.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import hphawkes_py as hp
from hphawkes_py.scan._categorical import CategoricalEngine, category_table, permute_categories
from hphawkes_py.scan.ordinal_model import ordinal
from hphawkes_py.scan.windows import build_windows

sys.path.insert(0, str(Path(__file__).parent))
from engines import CUDA_ENGINES  # noqa: E402
from naive_scan import categorical_llr as naive_llr  # noqa: E402
import satscan_oracle  # noqa: E402
from satscan_oracle import run_parameter_file, scratch_folder, store, stored, write_prm  # noqa: E402

FIXTURE = stored("categorical")


def _data(seed=3, n_loc=30, n_cases=300, K=4, shift=True, strength=3.0):
    """Cases at random locations (one row each), categories 1..K; within radius 2.5 of location 0
    the higher categories are more common, within radius 2 of location 1 the lower ones."""
    rng = np.random.default_rng(seed)
    xy = rng.uniform(0, 10, (n_loc, 2)).round(3)
    loc = np.concatenate([np.arange(n_loc), rng.integers(0, n_loc, n_cases - n_loc)])
    cat = rng.integers(1, K + 1, n_cases)
    if shift:
        up = np.linspace(1, strength, K)
        hi = rng.choice(np.arange(1, K + 1), n_cases, p=up / up.sum())
        lo = rng.choice(np.arange(1, K + 1), n_cases, p=up[::-1] / up.sum())
        cat = np.where(np.hypot(*(xy[loc] - xy[0]).T) < 2.5, hi, np.where(np.hypot(*(xy[loc] - xy[1]).T) < 2, lo, cat))
    return xy, loc, cat


# ---------------------------------------------------------------------------- the LLR
def _engine(xy, loc, cat, ordinal_, direction, max_population=0.5):
    L = len(xy)
    n_loc = np.bincount(loc, minlength=L).astype(np.int64)
    offsets, neighbors, _, boundary = build_windows(xy.astype(float), xy.astype(float), n_loc,
                                                    max_population * len(cat))
    labels, codes = np.unique(cat, return_inverse=True)
    counts = np.zeros((L, len(labels)), dtype=np.int64)
    np.add.at(counts, (loc, codes), 1)
    tot = counts.sum(axis=0).astype(float)
    eng = CategoricalEngine(offsets, neighbors, boundary, tot, ordinal_, direction in ("high", "both") or not ordinal_,
                            direction in ("low", "both") and ordinal_)
    return eng, counts


def naive_best(eng, counts, restricts):
    """Each centre's best LLR over its windows (the maximum over ``restricts``), by :func:`naive_llr`."""
    best = np.zeros(eng.n_centres)
    for i in range(eng.n_centres):
        for k in range(eng.offsets[i], eng.offsets[i + 1]):
            if eng.boundary[k]:
                c = counts[eng.neighbors[eng.offsets[i]:k + 1]].sum(axis=0)
                best[i] = max(best[i], *(naive_llr(c, eng.tot, r) for r in restricts))
    return best


@pytest.mark.parametrize("direction", ["high", "low", "both"])
@pytest.mark.parametrize("K", [3, 5])
def test_llr_of_every_centre_matches_the_naive_formula(direction, K):
    xy, loc, cat = _data(K=K)
    eng, counts = _engine(xy, loc, cat, True, direction)
    got, arg = eng.best_per_centre(counts[:, :, None])
    want = naive_best(eng, counts, {"high": ["high"], "low": ["low"], "both": ["high", "low"]}[direction])
    assert (want > 0.5).sum() >= 10  # the comparison covers many centres
    np.testing.assert_allclose(got[:, 0], want, rtol=1e-12, atol=1e-12)
    # the reported window is the one with that LLR
    for i in np.flatnonzero(want > 0)[:8]:
        c = counts[eng.neighbors[eng.offsets[i]:arg[i, 0] + 1]].sum(axis=0)
        r = {"both": ["high", "low"]}.get(direction, [direction])
        assert max(naive_llr(c, eng.tot, x) for x in r) == pytest.approx(got[i, 0], rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("ordinal_, direction", [(True, "high"), (True, "both"), (False, "high")])
@pytest.mark.parametrize("rare", [False, True])
def test_the_replicates_maxima_through_the_cylinder_kernel_are_the_window_engines(ordinal_, direction, rare):
    # the purely spatial scans' Monte Carlo runs the space-time cylinder kernel over one day (its left-outs: the
    # bound on W cases, Pearson's chi-square after a pilot floor, the ordinal pooling test): every replicate's
    # maximum equals the window engine's, bit for bit; with a rare category the best windows are small ones
    from hphawkes_py.scan.categorical_scan import CircleReplicates

    xy, loc, cat = _data(K=4)
    if rare:
        cat = np.random.default_rng(2).choice(4, len(cat), p=[.82, .1, .05, .03])
    eng, counts = _engine(xy, loc, cat, ordinal_, direction)
    assert counts.shape[1] == 4
    codes = np.unique(cat, return_inverse=True)[1]
    reps = permute_categories(loc, codes, 4, len(xy), np.random.SeedSequence(6).spawn(30))
    want = eng.max_llr(reps)
    circles = CircleReplicates(eng, counts.sum(axis=1))
    np.testing.assert_array_equal(circles.max_llr(reps), want)
    # and with its own draws of the same permutations
    np.testing.assert_array_equal(circles.max_llr_permuted(loc, codes, 4, len(xy), np.random.SeedSequence(6).spawn(30)),
                                  want)
    assert len(np.unique(want)) > 20


def test_llr_with_empty_categories_and_no_case_outside():
    tot = np.array([5.0, 0.0, 7.0, 3.0])
    eng = CategoricalEngine(np.array([0, 1, 2]), np.array([0, 1]), np.array([True, True]), tot, True, True, True)
    for c in ([5, 0, 0, 0], [0, 0, 7, 3], [2, 0, 1, 3], [5, 0, 7, 3], [0, 0, 0, 0]):
        counts = np.array([c, (tot - c).astype(int)])[:, :, None]
        got, _ = eng.best_per_centre(counts)
        want = max(naive_llr(c, tot, "high"), naive_llr(c, tot, "low"))
        assert got[0, 0] == pytest.approx(want, rel=1e-12, abs=1e-12), c


def test_ordinal_restriction_never_beats_the_free_multinomial_and_pools_against_the_order():
    xy, loc, cat = _data(K=4)
    eng_o, counts = _engine(xy, loc, cat, True, "both")
    eng_m, _ = _engine(xy, loc, cat, False, "high")
    a, _ = eng_o.best_per_centre(counts[:, :, None])
    b, _ = eng_m.best_per_centre(counts[:, :, None])
    assert (a <= b + 1e-12).all() and (a < b - 1e-6).any()
    # a window whose categories lean the wrong way is pooled into one block: no high cluster
    tot = np.array([30.0, 30.0, 30.0])
    c = np.array([10, 5, 1])
    assert naive_llr(c, tot, "high") == pytest.approx(0.0, abs=1e-12)
    e = CategoricalEngine(np.array([0, 1]), np.array([0]), np.array([True]), tot, True, True, False)
    got, _ = e.best_per_centre(np.array([c, (tot - c).astype(int)])[:1, :, None])
    assert got[0, 0] == pytest.approx(0.0, abs=1e-12)


# ---------------------------------------------------------------------------- the null
def test_null_permutes_the_categories_among_the_cases():
    xy, loc, cat = _data(K=5)
    L = len(xy)
    codes = cat - 1
    seeds = np.random.SeedSequence(5).spawn(6)
    counts = permute_categories(loc, codes, 5, L, seeds)
    assert counts.shape == (L, 5, 6)
    n_loc = np.bincount(loc, minlength=L)
    tot = np.bincount(codes, minlength=5)
    observed = np.zeros((L, 5), dtype=int)
    np.add.at(observed, (loc, codes), 1)
    for r in range(6):
        np.testing.assert_array_equal(counts[:, :, r].sum(axis=1), n_loc)  # cases stay at their locations
        np.testing.assert_array_equal(counts[:, :, r].sum(axis=0), tot)    # categories keep their totals
        assert (counts[:, :, r] >= 0).all() and not (counts[:, :, r] == observed).all()
    # per replicate: the same draws whatever the batch
    np.testing.assert_array_equal(permute_categories(loc, codes, 5, L, seeds[2:4]), counts[:, :, 2:4])


def test_results_do_not_depend_on_batching_or_threads():
    xy, loc, cat = _data()
    a = ordinal(xy[loc], cat, location_ids=loc, n_replicates=40, seed=7, progress=False, backend="cpu")
    b = ordinal(xy[loc], cat, location_ids=loc, n_replicates=40, seed=7, progress=False, backend="cpu", threads=1)
    np.testing.assert_array_equal(a.null_llr, b.null_llr)
    assert a.null_llr.min() >= 0 and a.null_llr.std() > 0


@pytest.mark.parametrize("backend", CUDA_ENGINES)
@pytest.mark.parametrize("direction", ["high", "both"])
def test_ordinal_cpu_and_cuda_engines_agree(direction, backend):
    xy, loc, cat = _data(K=4)
    kw = dict(location_ids=loc, n_replicates=40, seed=5, progress=False, direction=direction, max_population=0.4)
    a = ordinal(xy[loc], cat, backend="cpu", **kw)
    b = ordinal(xy[loc], cat, backend=backend, **kw)
    assert b.backend == backend and a.backend == "cpu"
    np.testing.assert_array_equal(b.null_llr, a.null_llr)
    assert b.clusters.location_ids.tolist() == a.clusters.location_ids.tolist()
    pd.testing.assert_frame_equal(a.clusters, b.clusters)
    eng, counts = _engine(xy, loc, cat, True, direction, 0.4)
    from hphawkes_py._backend import get_device
    from hphawkes_py.scan._categorical import GpuCategoricalEngine

    g = GpuCategoricalEngine(eng, device=get_device(backend), backend=backend)
    null = permute_categories(loc, cat - 1, 4, len(xy), np.random.SeedSequence(1).spawn(33))
    mv_c, arg_c = eng.best_mv(null)
    mv_g, arg_g = g.best_mv(null)
    np.testing.assert_array_equal(mv_g, mv_c)
    np.testing.assert_array_equal(arg_g, arg_c)


# ---------------------------------------------------------------------------- a planted cluster
def test_planted_cluster_of_higher_categories_is_recovered():
    xy, loc, cat = _data(seed=11, n_loc=50, n_cases=600, K=4, strength=6.0)
    truth = set(np.flatnonzero(np.hypot(*(xy - xy[0]).T) < 2.5).tolist())
    res = ordinal(xy[loc], cat, location_ids=loc, n_replicates=99, seed=2, progress=False, backend="cpu")
    top = res.most_likely
    found = set(top.location_ids)
    assert len(found & truth) >= 0.8 * len(truth) and len(found - truth) <= 0.5 * len(truth)
    assert top.p_value == 0.01 and top.cluster_type == "high"
    inside = np.isin(loc, list(found))
    assert top.cases == inside.sum()
    obs = [int(sum((cat[inside] == v).sum() for v in g)) for g in top.categories]
    assert top.observed_by_category == obs
    assert top.ode_by_category[-1] > 1 > top.ode_by_category[0]
    # expected: the cluster's cases x each group's share of all cases
    shares = [sum((cat == v).sum() for v in g) / len(cat) for g in top.categories]
    np.testing.assert_allclose(top.expected_by_category, np.array(shares) * top.cases, rtol=1e-12)
    tab = category_table(res)
    assert tab[tab.cluster == 1].observed.tolist() == obs
    # low clusters: the planted low one (around location 1), not the high one
    low = ordinal(xy[loc], cat, location_ids=loc, n_replicates=19, seed=2, progress=False, backend="cpu",
                  direction="low")
    assert low.most_likely.cluster_type == "low" and not (set(low.most_likely.location_ids) & {0})


# ---------------------------------------------------------------------------- input checks
@pytest.mark.parametrize("kw, exc, match", [
    (dict(categories=[1.0, np.nan, 2.0]), ValueError, r"categories\[1\] = nan"),
    (dict(categories=["a", "b", "c"]), TypeError, "must be numbers"),
    (dict(categories=[1, 2]), ValueError, r"one entry per case \(3\)"),
    (dict(categories=[2, 2, 2]), ValueError, "at least 2 categories"),
    (dict(direction="up"), ValueError, "direction"),
    (dict(n_replicates=0), ValueError, "n_replicates"),
    (dict(backend="quantum"), ValueError, "backend"),
    (dict(location_ids=["a", "a", "b"]), ValueError, "different coordinates"),
    (dict(max_population=0.7), ValueError, "max_population"),
])
def test_bad_inputs_are_refused(kw, exc, match):
    args = dict(coords=[[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]], categories=[1, 2, 3])
    args.update(kw)
    with pytest.raises(exc, match=match):
        ordinal(args.pop("coords"), args.pop("categories"), n_replicates=args.pop("n_replicates", 9), progress=False,
                **args)


def test_category_table_refuses_other_results():
    xy, loc, x = _data()[0], _data()[1], np.arange(300.0)
    res = hp.scan.normal(xy[loc], x, n_replicates=9, seed=1, progress=False)
    with pytest.raises(TypeError, match="model='normal'"):
        category_table(res)


# ---------------------------------------------------------------------------- SaTScan
ANALYSES = {  # name -> (ModelType, ScanAreas, MaxSpatialSizeInPopulationAtRisk)
    "ordinal high": ("3", "1", "50"),
    "ordinal low": ("3", "2", "50"),
    "ordinal both 20": ("3", "3", "20"),
    "multinomial": ("7", "1", "50"),
    "multinomial 20": ("7", "1", "20"),
}
DIRECTIONS = {"1": "high", "2": "low", "3": "both"}


def satscan_data():
    """The data SaTScan and hp.scan both analyse: 40 locations, 400 cases in 4 categories, the higher
    ones more common around location 0 and the lower ones around location 1; the multinomial
    analyses read the categories as the labels "grade1" .. "grade4"."""
    rng = np.random.default_rng(2025)
    xy = rng.uniform(0, 100, (40, 2)).round(2)
    loc = np.concatenate([np.arange(40), rng.integers(0, 40, 360)])
    d0 = np.hypot(*(xy[loc] - xy[0]).T) < 25
    d1 = np.hypot(*(xy[loc] - xy[1]).T) < 20
    cat = rng.choice([1, 2, 3, 4], 400, p=[.3, .3, .2, .2])
    hi = rng.choice([1, 2, 3, 4], 400, p=[.1, .2, .3, .4])
    lo = rng.choice([1, 2, 3, 4], 400, p=[.5, .3, .15, .05])
    return xy, loc, np.where(d0, hi, np.where(d1, lo, cat))


def _prm(name, folder: Path) -> Path:
    model, areas, size = ANALYSES[name]
    stem = name.replace(" ", "_")
    lines = ["[Input]", "CaseFile=ordinal.cas" if model == "3" else "CaseFile=multinomial.cas", "PrecisionCaseTimes=0",
             "StartDate=2000/1/1", "EndDate=2000/12/31", "CoordinatesFile=categorical.geo", "CoordinatesType=0",
             "[Analysis]", "AnalysisType=1", f"ModelType={model}", f"ScanAreas={areas}",
             "[Output]", f"ResultsFile={stem}.txt", "OutputGoogleEarthKML=n", "OutputShapefiles=n",
             "CensusAreasReportedClustersASCII=n", "LaunchMapViewer=n",
             "[Spatial Window]", f"MaxSpatialSizeInPopulationAtRisk={size}", "SpatialWindowShapeType=0",
             "[Inference]", "MonteCarloReps=999", "PValueReportType=1",
             "[Run Options]", "NumberParallelProcesses=1"]
    return write_prm(folder / f"{stem}.prm", lines)


def read_report(report: str) -> list:
    """The clusters of SaTScan's text report: per cluster its fields as printed (a field continued on
    the next lines joined), e.g. ``{"Location IDs included": "L1, L17", "Number of cases": "43, 19"}``."""
    clusters, key = [], None
    body = report.split("CLUSTERS DETECTED", 1)[1].split("_____", 1)[0]
    for line in body.splitlines():
        s = line.strip()
        if not s:
            key = None
            continue
        head = s.split(".", 1)
        if head[0].isdigit() and "Location IDs included" in s:
            clusters.append({})
            s = head[1]
        if ":" in s and ".." in s.split(":", 1)[0] + ".":
            k, v = s.split(":", 1)
            key = k.rstrip(".").strip()
            clusters[-1][key] = v.strip()
        elif key is not None:
            clusters[-1][key] += " " + s
    return clusters


def run_satscan(binary, names=None) -> dict:
    """SaTScan's cluster reports for the analyses ``names`` of ANALYSES (default all)."""
    with scratch_folder("hphawkes-categorical-") as folder:
        write_satscan_files(folder)
        out = {}
        for name in ANALYSES if names is None else names:
            run_parameter_file(binary, _prm(name, folder), folder)
            out[name] = read_report((folder / f"{name.replace(' ', '_')}.txt").read_text())
    return out


def oracle(names=None):
    """SaTScan's reports of the analyses ``names``: from the binary when it is here, else stored."""
    return satscan_oracle.oracle(FIXTURE, lambda binary: run_satscan(binary, names))


def _numbers(s):
    return [math.inf if v.strip() == "infinity" else float(v) for v in s.split(",")]


def check_against_satscan(res, sat):
    """Our clusters against SaTScan's report: locations, cases, the category table to SaTScan's
    printed digits, the LLR to its 6 decimals and the p-value within Monte Carlo error."""
    assert len(res.clusters) == len(sat), res.clusters
    for ours, theirs in zip(res.clusters.itertuples(), sat):
        assert ours.location_ids == theirs["Location IDs included"].replace(",", " ").split()
        assert ours.cases == int(theirs["Total cases"])
        groups = [g.strip(" []").replace(" ", "").split(",") for g in theirs["Category"].split("],")]
        assert [[str(v) for v in g] for g in ours.categories] == groups
        assert ours.observed_by_category == [int(v) for v in theirs["Number of cases"].split(",")]
        for col, key, digits in (("expected_by_category", "Expected cases", 2),
                                 ("ode_by_category", "Observed / expected", 2),
                                 ("relative_risk_by_category", "Relative risk", 2),
                                 ("percent_by_category", "Percent cases in area", 1)):
            for a, b in zip(getattr(ours, col), _numbers(theirs[key])):
                assert a == b if math.isinf(b) or b == 0 else abs(a - b) <= 0.5 * 10 ** -digits + 1e-9, (col, a, b)
        assert ours.log_likelihood_ratio == pytest.approx(float(theirs["Log likelihood ratio"]), abs=5e-7 + 1e-12)
        p = float(theirs["P-value"])
        # two Monte Carlo estimates of one p-value (999 replicates each): within 4 binomial s.e.
        se = math.sqrt(max(p * (1 - p), 1e-3) * 2 / 1000)
        assert abs(ours.p_value - p) <= 4 * se + 2e-3


@pytest.fixture(scope="module")
def satscan_output():
    return oracle([n for n in ANALYSES if n.startswith("ordinal")])


@pytest.mark.parametrize("name", [n for n in ANALYSES if n.startswith("ordinal")])
def test_ordinal_matches_satscan(name, satscan_output):
    _, areas, size = ANALYSES[name]
    xy, loc, cat = satscan_data()
    res = ordinal(xy[loc], cat, location_ids=np.array([f"L{g}" for g in loc]), max_population=int(size) / 100,
                  direction=DIRECTIONS[areas], n_replicates=999, seed=1, progress=False, backend="cpu")
    check_against_satscan(res, satscan_output[name])


def write_satscan_files(folder: Path):
    """The SaTScan input files of satscan_data in ``folder``: coordinates, ordinal and multinomial cases."""
    xy, loc, cat = satscan_data()
    (folder / "categorical.geo").write_text("".join(f"L{i} {a} {b}\n" for i, (a, b) in enumerate(xy)))
    (folder / "ordinal.cas").write_text("".join(f"L{g} 1 {c}\n" for g, c in zip(loc, cat)))
    (folder / "multinomial.cas").write_text("".join(f"L{g} 1 grade{c}\n" for g, c in zip(loc, cat)))


def run_spec(folder, name):
    """run_prm's description of the analysis ``name`` of ANALYSES on the files in ``folder``."""
    model, areas, size = ANALYSES[name]
    ordinal_ = model == "3"
    return {"model": "ordinal" if ordinal_ else "multinomial",
            "files": {"case_file": folder / ("ordinal.cas" if ordinal_ else "multinomial.cas"),
                      "geo_file": folder / "categorical.geo"},
            "dates": {"dated": False},
            "kwargs": {"direction": DIRECTIONS[areas], "max_population": int(size) / 100, "distance": "euclidean",
                       "n_replicates": 999, "min_cases": 0}}


def test_run_categorical_reads_satscan_files_as_satscan_does(tmp_path, satscan_output):
    from hphawkes_py.scan.categorical_files import run_categorical

    write_satscan_files(tmp_path)
    res = run_categorical(run_spec(tmp_path, "ordinal high"), dict(seed=1, backend="cpu", progress=False))
    check_against_satscan(res, satscan_output["ordinal high"])
    (tmp_path / "bad.cas").write_text("L0 1 1\nL1 1 high\n")
    spec = run_spec(tmp_path, "ordinal high")
    spec["files"]["case_file"] = tmp_path / "bad.cas"
    with pytest.raises(ValueError, match="'high' is not a number"):
        run_categorical(spec, dict(seed=1, backend="cpu", progress=False))
    (tmp_path / "bad.cas").write_text("L0 1 1\nL99 1 2\n")
    with pytest.raises(ValueError, match="'L99' is not in the coordinates file"):
        run_categorical(spec, dict(seed=1, backend="cpu", progress=False))


if __name__ == "__main__":  # write the stored SaTScan output (see the module notes)
    store(FIXTURE, run_satscan, "test_scan_ordinal.py")
