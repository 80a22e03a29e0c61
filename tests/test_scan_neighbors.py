"""Windows from lists of neighbours (``neighbors=`` of hp.scan.bernoulli and hp.scan.poisson; SaTScan's
non-Euclidean neighbors file, ``UseNeighborsFile``): the lists' windows against a plain loop; lists in the
circles' own order give the circular scan's results exactly; every centre's best window against the naive LLR
of each leading run; a cluster along a river recovered where circles cannot see it; run_prm against SaTScan
10.3.2 on data made here (tests/satscan_oracle.py); the CLI; bad input.

``python tests/test_scan_neighbors.py --satscan <binary>`` stores SaTScan's output for machines without it.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import hphawkes_py as hp
from hphawkes_py.cli import main
from hphawkes_py.scan.neighbor_lists import check_neighbors, neighbor_windows
from hphawkes_py.scan.windows import build_windows

sys.path.insert(0, str(Path(__file__).parent))
from naive_scan import bernoulli_llr  # noqa: E402
from satscan_oracle import assert_clusters_match, oracle, read_clusters, run_each, store, stored, write_prm  # noqa: E402

FIXTURE = stored("neighbors")


def _river(seed=5, L=40, rate=0.1, hot=(10, 16), boost=4.0):
    """Villages along a winding river: ``pos`` the distance along it (the neighbours' order), ``xy`` points on a
    zigzag whose straight-line distances do not follow the river; persons and cases per village, the rate raised
    ``boost``-fold at the villages ``hot[0]..hot[1] - 1`` along the river."""
    rng = np.random.default_rng(seed)
    pos = np.cumsum(rng.uniform(0.5, 1.5, L))
    xy = np.column_stack([np.where(np.arange(L) % 10 < 5, 1.0, -1.0) * (np.arange(L) % 5) * 3.0, pos / 4]).round(3)
    persons = rng.integers(20, 60, L)
    p = np.full(L, rate)
    p[hot[0]:hot[1]] *= boost
    cases = rng.binomial(persons, p)
    order = np.argsort(np.abs(pos[:, None] - pos[None, :]), axis=1, kind="stable")
    return pos, xy, persons, cases, order


def _ids(L):
    return np.array([f"V{i}" for i in range(L)])


# ---------------------------------------------------------------------------- the windows
def test_windows_are_the_lists_leading_runs_cut_at_the_limit():
    rng = np.random.default_rng(1)
    size = rng.integers(0, 9, 30)
    lists = [rng.permutation(30)[:rng.integers(1, 30)] for _ in range(25)]
    limit = 0.3 * size.sum()
    circle = rng.uniform(0, 5, 30)
    for with_circle in (False, True):
        offsets, neighbors, npop, boundary = neighbor_windows(lists, size, limit, circle if with_circle else None,
                                                              0.25 * circle.sum())
        for c, idx in enumerate(lists):
            want, total, ctotal = [], 0, 0.0
            for z in idx:  # SaTScan's loop: stop before the first location that takes a sum over its limit
                if total + size[z] > limit or (with_circle and ctotal + circle[z] > 0.25 * circle.sum()):
                    break
                total += size[z]
                ctotal += circle[z]
                want.append(z)
            got = neighbors[offsets[c]:offsets[c + 1]]
            assert got.tolist() == want
            assert npop[offsets[c]:offsets[c + 1]].tolist() == np.cumsum(size[want]).tolist()
    assert boundary.all() and npop.dtype == np.int32


def test_lists_in_the_circles_order_give_the_circular_scan():
    g = hp.datasets.load_grave()
    xy, ca = g[["x", "y"]].to_numpy(float), g["case"].to_numpy()
    ids = np.array([f"G{i}" for i in range(len(xy))])
    off, nb, _, _ = build_windows(xy, xy, np.ones(len(xy), dtype=np.int64), len(xy) + 1.0)
    lists = [ids[nb[off[i]:off[i + 1]]].tolist() for i in range(len(xy))]
    kw = dict(location_ids=ids, n_replicates=99, seed=1, progress=False, backend="cpu")
    a = hp.scan.bernoulli(xy, ca, 1 - ca, **kw)
    for coords in (None, xy):
        b = hp.scan.bernoulli(coords, ca, 1 - ca, neighbors=lists, **kw)
        np.testing.assert_array_equal(a.null_llr, b.null_llr)
        assert b.clusters.location_ids.tolist() == a.clusters.location_ids.tolist()
        np.testing.assert_array_equal(b.clusters.log_likelihood_ratio, a.clusters.log_likelihood_ratio)
        assert b.non_euclidean and b.clusters.radius.isna().all()
        assert f"the neighbour list of {b.clusters.location_ids[0][0]}" in b.summary() and "radius" not in b.summary()
        assert b.clusters.x.isna().all() == (coords is None)
    ny = hp.datasets.load_ny_leukemia()
    xy, ids = ny[["x", "y"]].to_numpy(), np.array([f"T{i}" for i in range(len(ny))])
    off, nb, _, _ = build_windows(xy, xy, np.ones(len(xy), dtype=np.int64), len(xy) + 1.0)
    lists = [ids[nb[off[i]:off[i + 1]]].tolist() for i in range(len(xy))]
    kw = dict(location_ids=ids, n_replicates=49, seed=2, progress=False, backend="cpu")
    a = hp.scan.poisson(xy, ny["cases_floor"], ny["population"], **kw)
    b = hp.scan.poisson(None, ny["cases_floor"], ny["population"], neighbors=lists, **kw)
    np.testing.assert_array_equal(a.null_llr, b.null_llr)
    np.testing.assert_array_equal(b.clusters.log_likelihood_ratio, a.clusters.log_likelihood_ratio)


@pytest.mark.parametrize("direction", ["high", "low", "both"])
def test_every_centres_best_window_is_the_best_leading_run(direction):
    pos, xy, persons, cases, order = _river()
    ids = _ids(len(pos))
    lists = [ids[o[:12]].tolist() for o in order]  # each village and its 11 nearest along the river
    res = hp.scan.bernoulli(None, cases, persons - cases, location_ids=ids, neighbors=lists, direction=direction,
                            n_replicates=9, seed=1, progress=False, backend="cpu")
    C, N = int(cases.sum()), int(persons.sum())
    best = []
    for o in order:
        c, n, top = 0, 0, 0.0
        for z in o[:12]:
            c, n = c + cases[z], n + persons[z]
            if n > 0.5 * N:
                break
            top = max(top, float(bernoulli_llr(c, n, C, N, direction)))
        best.append(top)
    top = res.most_likely
    assert top.log_likelihood_ratio == pytest.approx(max(best), rel=1e-9)
    assert res.n_centres == len(lists)


def test_a_cluster_along_the_river_is_found_by_the_river_neighbours():
    pos, xy, persons, cases, order = _river(seed=8, hot=(10, 16), boost=3.0)
    ids = _ids(len(pos))
    lists = [ids[o].tolist() for o in order]
    kw = dict(location_ids=ids, n_replicates=99, seed=3, progress=False, backend="cpu")
    river = hp.scan.bernoulli(xy, cases, persons - cases, neighbors=lists, **kw).most_likely
    found = {int(v[1:]) for v in river.location_ids}
    assert found >= set(range(11, 15)) and found <= set(range(8, 18)) and river.p_value <= 0.02


@pytest.mark.parametrize("kw, match", [
    (dict(location_ids=None), "location_ids"),
    (dict(neighbors=[["V0", "V99"]]), "not a location"),
    (dict(neighbors=[["V0", "V1", "V0"]]), "more than once"),
    (dict(neighbors=[[]]), "non-empty"),
    (dict(neighbors="V0 V1"), "list of lists"),
    (dict(max_distance=3.0), "max_distance"),
    (dict(window="ellipse"), "ellipse"),
    (dict(secondary="no-pairs-of-centres"), "no-overlap"),
])
def test_bad_input_is_refused_before_work(kw, match):
    pos, xy, persons, cases, order = _river()
    ids = _ids(len(pos))
    args = dict(location_ids=ids, neighbors=[ids[o].tolist() for o in order], n_replicates=9, progress=False)
    args.update(kw)
    with pytest.raises((ValueError, TypeError), match=match):
        hp.scan.bernoulli(None if "window" not in kw else xy, cases, persons - cases, **args)


def test_coordinates_must_tell_the_ids_apart():
    pos, xy, persons, cases, order = _river()
    ids = _ids(len(pos))
    xy[3] = xy[4]
    with pytest.raises(ValueError, match="own coordinates"):
        hp.scan.bernoulli(xy, cases, persons - cases, location_ids=ids, neighbors=[ids.tolist()], n_replicates=9)
    assert len(check_neighbors([["V1"]], ids.tolist())) == 1


# ---------------------------------------------------------------------------- SaTScan 10.3.2
#: name -> (ModelType, ScanAreas, MaxSpatialSizeInPopulationAtRisk)
_ANALYSES = {"bernoulli high": ("1", "1", "50"), "bernoulli both 20": ("1", "3", "20"),
             "poisson high": ("0", "1", "50")}


def _write_inputs(folder: Path) -> None:
    pos, xy, persons, cases, order = _river(seed=8, hot=(10, 16), boost=3.0)
    ids = _ids(len(pos))
    (folder / "river.geo").write_text("".join(f"{i} {a} {b}\n" for i, (a, b) in zip(ids, xy)))
    (folder / "river.cas").write_text("".join(f"{i} {c}\n" for i, c in zip(ids, cases)))
    (folder / "river.ctl").write_text("".join(f"{i} {n - c}\n" for i, n, c in zip(ids, persons, cases)))
    (folder / "river.pop").write_text("".join(f"{i} 2000 {n}\n" for i, n in zip(ids, persons)))
    (folder / "river.nei").write_text("".join(" ".join(ids[o]) + "\n" for o in order))


def _prm(name: str, folder: Path) -> Path:
    model, areas, size = _ANALYSES[name]
    stem = name.replace(" ", "_")
    data = ["ControlFile=river.ctl"] if model == "1" else ["PopulationFile=river.pop"]
    return write_prm(folder / f"{stem}.prm", [
        "[Input]", "CaseFile=river.cas", *data, "PrecisionCaseTimes=0", "StartDate=2000/1/1", "EndDate=2000/12/31",
        "CoordinatesFile=river.geo", "CoordinatesType=0",
        "[Analysis]", "AnalysisType=1", f"ModelType={model}", f"ScanAreas={areas}",
        "[Output]", f"ResultsFile={stem}.txt", "OutputGoogleEarthKML=n", "OutputShapefiles=n",
        "MostLikelyClusterEachCentroidDBase=y", "LaunchMapViewer=n",
        "[Spatial Neighbors]", "UseNeighborsFile=y", "NeighborsFilename=river.nei",
        "[Spatial Window]", f"MaxSpatialSizeInPopulationAtRisk={size}", "SpatialWindowShapeType=0",
        "[Inference]", "MonteCarloReps=999", "PValueReportType=1",
        "[Run Options]", "NumberParallelProcesses=1"])


def run_satscan(binary) -> dict:
    """SaTScan's cluster tables (``.col.dbf``), the clusters' location ids and its summary, per analysis."""
    return run_each(binary, "hphawkes-neighbors-", _write_inputs, _ANALYSES, _prm, read_clusters)


@pytest.fixture(scope="module")
def satscan_output():
    return oracle(FIXTURE, run_satscan)


@pytest.mark.parametrize("name", list(_ANALYSES))
def test_run_prm_matches_satscan(name, satscan_output, tmp_path):
    _write_inputs(tmp_path)
    res = hp.scan.run_prm(_prm(name, tmp_path), seed=1, progress=False)
    rows, ids = satscan_output[name]["rows"], satscan_output[name]["ids"]
    assert res.non_euclidean and len(res.clusters) >= 1
    assert "X" not in rows[0] and "RADIUS" not in rows[0]  # SaTScan writes no coordinates with a neighbors file
    assert_clusters_match(res.clusters, rows, ids)


def test_run_prm_tables_and_refusals(tmp_path, capsys):
    _write_inputs(tmp_path)
    prm = _prm("bernoulli high", tmp_path)
    out = tmp_path / "out"
    rc = main(["scan", "run", str(prm), "--replicates", "19", "--seed", "1", "--backend", "cpu", "--out", str(out),
               "--quiet"])
    assert rc == 0, capsys.readouterr().err
    assert "no circles" in capsys.readouterr().err
    col = pd.read_csv(out / "bernoulli_high.col.csv")
    assert "X" not in col.columns and "RADIUS" not in col.columns and len(col) >= 1
    assert not list(out.glob("*.geojson")) and "Coordinates" not in (out / "bernoulli_high.txt").read_text()
    text = prm.read_text()
    for old, new, match in (("SpatialWindowShapeType=0", "SpatialWindowShapeType=1", "SpatialWindowShapeType"),
                            ("AnalysisType=1", "AnalysisType=3", "UseNeighborsFile"),
                            ("NeighborsFilename=river.nei", "NeighborsFilename=missing.nei", "does not exist")):
        prm.write_text(text.replace(old, new))
        with pytest.raises(ValueError, match=match):
            hp.scan.run_prm(prm, progress=False)


if __name__ == "__main__":  # write the stored SaTScan output (see tests/satscan_oracle.py)
    store(FIXTURE, run_satscan, "test_scan_neighbors.py")
