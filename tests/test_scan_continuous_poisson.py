"""SaTScan's continuous Poisson model (hp.scan.continuous_poisson; run_prm with ModelType=6). Against SaTScan
10.3.2 on its own sample analysis PolygonSpatialContinuousPoisson.prm (500 points in two triangles, 100 grid
centres; tests/satscan_oracle.py): every cluster's centre, radius, points, cases, expected count and LLR to
1e-6, the p-values within the binomial error, the spans, and the null maxima against SaTScan's simulated LLRs (KS);
points and grid centres outside the polygons under SaTScan's strict and relaxed coordinates checks. The
windows' LLRs against a NumPy float64 enumeration on the CPU engine and the CUDA emulator; the null's points
(shares per polygon, uniformity); the errors on bad input."""
from __future__ import annotations

import math
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import hphawkes_py as hp
from hphawkes_py.scan.continuous_poisson_model import _windows, check_region
from hphawkes_py.scan.cpu_continuous_poisson import draw_points, null_maxima
from hphawkes_py.scan.engine import klogk_table, make_engine
from hphawkes_py.scan.outputs import cluster_table
from satscan_oracle import assert_clusters_match, edit_prm, oracle, read_dbf, report_locations, run_parameter_file, \
    scratch_folder, store, stored

FIXTURE = stored("continuous_poisson")
SAMPLE = hp.datasets.path("scan/satscan_sample_data")
PRM = "PolygonSpatialContinuousPoisson.prm"
FILES = (PRM, "ContinuousPoissonFake.geo", "ContinuousPoissonFake.grd")
TRIANGLES = ["Y <= 10000,X >= 0,Y >= X", "Y <= X,Y >= 0,X <= 10000"]


def _copy_sample(folder: Path) -> Path:
    for f in FILES:
        shutil.copy(SAMPLE / f, folder / f)
    return edit_prm(folder / PRM, {"SaveSimLLRsASCII=n": "SaveSimLLRsASCII=y",
                                   "MostLikelyClusterEachCentroidDBase=n": "MostLikelyClusterEachCentroidDBase=y"})


#: two points and a grid centre outside both triangles
OUTSIDE = {"geo": ["PointOut 12000 5000", "PointOut2 5000 -300"], "grd": ["11000 11000"]}


def _copy_with_points_outside(folder: Path, check: int) -> Path:
    """The sample with the points and the grid centre of ``OUTSIDE`` added, GeographicalCoordinatesCheckType
    ``check`` (0 strict, 1 relaxed)."""
    folder.mkdir(parents=True, exist_ok=True)
    prm = _copy_sample(folder)
    for ext, lines in OUTSIDE.items():
        f = folder / f"ContinuousPoissonFake.{ext}"
        f.write_text(f.read_text().rstrip("\n") + "\n" + "\n".join(lines) + "\n")
    return edit_prm(prm, {"GeographicalCoordinatesCheckType=0": f"GeographicalCoordinatesCheckType={check}"})


def run_satscan(binary) -> dict:
    """SaTScan's cluster rows (.col.dbf), the clusters' point ids (report) and its 999 simulated LLRs (.llr) of the
    sample; the rows and ids of the sample with points outside the polygons under the relaxed check, and
    SaTScan's exit status and first error under the strict one."""
    out = {}
    with scratch_folder("hphawkes-continuous-poisson-") as folder:
        prm = _copy_sample(folder)
        run_parameter_file(binary, prm, folder)
        report = (folder / "ContinuousPoissonFake.txt").read_text()
        llr = [float(x) for x in (folder / "ContinuousPoissonFake.llr.txt").read_text().split()]
        out["sample"] = {"rows": read_dbf(folder / "ContinuousPoissonFake.col.dbf"), "ids": report_locations(report),
                         "llr": llr}
    with scratch_folder("hphawkes-continuous-poisson-") as folder:
        prm = _copy_with_points_outside(folder, 1)
        run_parameter_file(binary, prm, folder)
        report = (folder / "ContinuousPoissonFake.txt").read_text()
        out["relaxed"] = {"rows": read_dbf(folder / "ContinuousPoissonFake.col.dbf"), "ids": report_locations(report)}
    with scratch_folder("hphawkes-continuous-poisson-") as folder:
        prm = _copy_with_points_outside(folder, 0)
        done = subprocess.run([str(binary), str(prm)], cwd=folder, capture_output=True, text=True, timeout=600)
        errors = [line for line in (done.stderr + done.stdout).splitlines() if line.startswith("Error:")]
        out["strict"] = {"returncode": done.returncode, "error": errors[0] if errors else ""}
    return out


@pytest.fixture(scope="module")
def satscan_analyses():
    return oracle(FIXTURE, run_satscan)


@pytest.fixture(scope="module")
def satscan_output(satscan_analyses):
    return satscan_analyses["sample"]


@pytest.fixture(scope="module")
def ours(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cp")
    return hp.scan.run_prm(_copy_sample(folder), seed=1, progress=False, backend="cpu")


def test_sample_clusters_match_satscan(ours, satscan_output):
    rows = satscan_output["rows"]
    assert ours.model == "continuous_poisson" and ours.n_cases == 500 and ours.n_centres == 100
    assert ours.n_population == pytest.approx(1e8)
    assert len(ours.clusters) >= 3
    assert_clusters_match(ours.clusters, rows, satscan_output["ids"])
    for k, r in enumerate(rows[:len(ours.clusters)]):
        cl = ours.clusters.iloc[k]
        assert (cl.x, cl.y) == pytest.approx((float(r["X"]), float(r["Y"])), abs=1e-9)
        assert cl.radius == pytest.approx(float(r["RADIUS"]), abs=1e-6)
        assert cl.location_ids[0] == r["LOC_ID"]  # the point nearest the centre
        assert cl.n_locations == int(r["NUMBER_LOC"])
        # SaTScan's expected count: pi radius^2 N / A, the whole circle
        assert cl.expected == pytest.approx(math.pi * cl.radius ** 2 * 500 / 1e8, rel=1e-12)
    # the cluster information table's span (the largest distance between two of a cluster's points)
    table = cluster_table(ours)
    np.testing.assert_allclose(table.SPAN.to_numpy(float)[:len(ours.clusters)],
                               [float(r["SPAN"]) for r in rows[:len(ours.clusters)]], rtol=0, atol=1e-6)


def test_points_outside_the_polygons_as_satscan(tmp_path, satscan_analyses):
    """Points and grid centres outside every polygon: SaTScan's strict coordinates check
    (GeographicalCoordinatesCheckType=0) stops at the first point, as run_prm does; its relaxed check (=1)
    leaves them out, and so does run_prm, with a warning for each file: the clusters are SaTScan's."""
    strict = satscan_analyses["strict"]
    assert strict["returncode"] != 0 and "Record 501 " in strict["error"]
    assert "not within any of the defined polygons" in strict["error"]
    with pytest.raises(ValueError, match=r"points\[500\] = \(12000.0, 5000.0\) is outside every polygon"):
        hp.scan.run_prm(_copy_with_points_outside(tmp_path / "strict", 0), seed=1, progress=False, backend="cpu")
    with pytest.warns(UserWarning) as caught:
        res = hp.scan.run_prm(_copy_with_points_outside(tmp_path / "relaxed", 1), seed=1, progress=False,
                              backend="cpu")
    said = [str(w.message) for w in caught]
    assert any("2 point(s) outside the polygons left out" in m for m in said)
    assert any("1 grid centre(s) outside the polygons left out" in m for m in said)
    assert res.n_cases == 500 and res.n_centres == 100
    assert_clusters_match(res.clusters, satscan_analyses["relaxed"]["rows"], satscan_analyses["relaxed"]["ids"])


def test_sample_null_maxima_match_satscans_simulated_llrs(ours, satscan_output):
    theirs = np.array(satscan_output["llr"])
    assert len(theirs) == len(ours.null_llr) == 999
    assert stats.ks_2samp(ours.null_llr, theirs).pvalue > 1e-3


def _naive_best(centres, pts, area, max_radius, direction="high", min_cases=2):
    """(m,) best LLR of each centre: k nearest points, E = pi d_k^2 N / A, in NumPy float64."""
    n = len(pts)
    out = np.zeros(len(centres))
    for i, c in enumerate(centres):
        d = np.sort(np.sqrt(((pts - c) ** 2).sum(axis=1)))
        for k in range(1, n + 1):
            if d[k - 1] > max_radius:
                break
            e = math.pi * d[k - 1] ** 2 * n / area
            if e == 0:
                continue
            high, low = k > e, k < e
            if not ((direction in ("high", "both") and high and k >= min_cases)
                    or (direction in ("low", "both") and low)):
                continue
            llr = k * math.log(k / e) + ((n - k) * math.log((n - k) / (n - e)) if n > k else 0.0)
            out[i] = max(out[i], llr)
    return out


@pytest.mark.parametrize("backend", ["cpu", "emulator"])
@pytest.mark.parametrize("direction", ["high", "low", "both"])
def test_window_llrs_against_numpy(backend, direction):
    rng = np.random.default_rng(5)
    pts = np.r_[rng.uniform(0, 10, (70, 2)), rng.normal((3, 7), 0.4, (15, 2))].clip(0, 10)
    region = check_region(["X >= 0,X <= 10,Y >= 0,Y <= 10"])
    centres = np.r_[pts[:20], rng.uniform(0, 10, (15, 2))]  # on points (distance 0) and between them
    max_r = 0.5 * math.sqrt(region.area / math.pi)
    n = len(pts)
    w = _windows(centres, pts, max_r, n / region.area)
    eng = make_engine(w, klogk_table(n), n, n, direction, backend=backend, model="poisson", min_cases=2)
    best, _ = eng.best_per_centre(np.ones((n, 1), dtype=np.int32))
    np.testing.assert_allclose(best[:, 0], _naive_best(centres, pts, region.area, max_r, direction), rtol=1e-9,
                               atol=1e-12)


def test_null_points_share_the_polygons_by_area_and_are_uniform():
    # a unit square and a triangle of area 1.5 beside it: expected shares 0.4 and 0.6 (the replicates' points of
    # every backend, cpu_continuous_poisson.draw_points)
    region = check_region(["X >= 0,X <= 1,Y >= 0,Y <= 1", [(1, 0, 1, ">="), (1, 0, 4, "<="), (1, 3, 4, "<="),
                                                           (0, 1, 0, ">=")]])
    np.testing.assert_allclose(region.areas, [1.0, 1.5])
    pts = np.concatenate([draw_points(region, 50, 1000 + k) for k in range(400)])
    in_square = pts[:, 0] <= 1
    counts = np.array([in_square.sum(), (~in_square).sum()])
    assert stats.chisquare(counts, len(pts) * region.areas / region.area).pvalue > 1e-3
    sq = pts[in_square]
    assert stats.kstest(sq[:, 0], "uniform").pvalue > 1e-3
    assert stats.kstest(sq[:, 1], "uniform").pvalue > 1e-3
    # the triangle (1,0), (4,0), (1,1): x - 1 has density 2 (3 - u) / 9 on [0, 3]
    u = pts[~in_square, 0] - 1
    assert stats.kstest(u, lambda t: 1 - (3 - np.clip(t, 0, 3)) ** 2 / 9).pvalue > 1e-3
    assert region.contains(pts).all()
    assert len(np.unique(draw_points(region, 2000, 7), axis=0)) == 2000


@pytest.mark.emulator
def test_the_engines_score_the_cpu_loops_replicates():
    rng = np.random.default_rng(2)
    pts = np.r_[rng.uniform(0, 1, (200, 2)), rng.normal((0.3, 0.7), 0.03, (30, 2))]
    kw = dict(n_replicates=19, seed=1, progress=False)
    cpu = hp.scan.continuous_poisson(pts, ["X >= 0,X <= 1,Y >= 0,Y <= 1"], backend="cpu", **kw)
    emu = hp.scan.continuous_poisson(pts, ["X >= 0,X <= 1,Y >= 0,Y <= 1"], backend="emulator", **kw)
    np.testing.assert_allclose(emu.null_llr, cpu.null_llr, rtol=1e-12)
    assert (cpu.null_llr > 0).all()


@pytest.mark.parametrize("grid", [False, True], ids=["own points", "grid"])
@pytest.mark.parametrize("direction", ["high", "both"])
def test_cpu_null_kernel_equals_the_engine_on_the_same_points(grid, direction):
    region = check_region(TRIANGLES)
    n, share = 300, 0.5
    max_radius = share * np.sqrt(region.area / np.pi)
    aux = n / region.area
    centres = np.random.default_rng(3).uniform(100, 9900, (40, 2)) if grid else None
    if grid:
        centres = centres[region.contains(centres)]
    klogk = klogk_table(n)
    words = np.arange(7, 19, dtype=np.uint32)
    fast = null_maxima(region, n, centres, max_radius, aux, klogk, 2, direction, words)
    for w, v in zip(words, fast):
        pts = draw_points(region, n, w)
        assert region.contains(pts).all() and len(np.unique(pts, axis=0)) == n
        windows = _windows(pts if centres is None else centres, pts, max_radius, aux)
        engine = make_engine(windows, klogk, n, n, direction, backend="cpu", model="poisson", min_cases=2)
        best, _ = engine.best_per_centre(np.ones((n, 1), dtype=np.int32))
        assert v == pytest.approx(best.max(), rel=1e-12, abs=1e-12)
    assert (fast > 0).all()


def test_numeric_and_text_polygons_agree():
    a = check_region(TRIANGLES)
    b = check_region([[(0, 1, 10000, "<="), (1, 0, 0, ">="), (-1, 1, 0, ">=")],
                      ["Y <= X", "Y >= 0", "X <= 10000"]])
    np.testing.assert_allclose(a.areas, [5e7, 5e7])
    np.testing.assert_allclose(b.areas, a.areas)
    xy = np.array([[1.0, 2.0], [5000, 5000], [10000, 0], [-1, 5], [3, 10000.5]])
    np.testing.assert_array_equal(a.contains(xy), [True, True, True, False, False])
    np.testing.assert_array_equal(b.contains(xy), a.contains(xy))


def test_function_matches_run_prm(ours):
    geo = [line.split() for line in (SAMPLE / "ContinuousPoissonFake.geo").read_text().splitlines() if line.strip()]
    grd = np.loadtxt(SAMPLE / "ContinuousPoissonFake.grd")
    res = hp.scan.continuous_poisson(np.array([[float(g[1]), float(g[2])] for g in geo]), TRIANGLES, centres=grd,
                                     point_ids=[g[0] for g in geo], seed=1, progress=False, backend="cpu")
    np.testing.assert_array_equal(res.null_llr, ours.null_llr)
    assert res.clusters.location_ids.tolist() == ours.clusters.location_ids.tolist()


def test_bad_input_errors(tmp_path):
    kw = dict(n_replicates=9, progress=False, backend="cpu")
    pts = np.array([[0.2, 0.3], [0.5, 0.5], [0.7, 0.1]])
    sq = ["X >= 0,X <= 1,Y >= 0,Y <= 1"]
    with pytest.raises(ValueError, match="does not bound|unbounded"):
        hp.scan.continuous_poisson(pts, ["X >= 0,Y >= 0,Y <= 1"], **kw)
    with pytest.raises(ValueError, match="no region of positive area"):
        hp.scan.continuous_poisson(pts, ["X >= 2,X <= 1,Y >= 0,Y <= 1"], **kw)
    with pytest.raises(ValueError, match="at least 3"):
        hp.scan.continuous_poisson(pts, ["X >= 0,X <= 1"], **kw)
    with pytest.raises(ValueError, match=r"polygons\[0\] and polygons\[1\] overlap"):
        hp.scan.continuous_poisson(pts, sq + ["X >= 0.5,X <= 2,Y >= 0,Y <= 1"], **kw)
    hp.scan.continuous_poisson(pts, sq + ["X >= 1,X <= 2,Y >= 0,Y <= 1"], **kw)  # a shared edge is no overlap
    with pytest.raises(ValueError, match="not a linear inequality"):
        hp.scan.continuous_poisson(pts, ["X >= 0,X <= 1,Y >= 0,Y < 1"], **kw)
    with pytest.raises(ValueError, match=r"points\[1\] .* outside every polygon"):
        hp.scan.continuous_poisson([[0.2, 0.3], [1.5, 0.5]], sq, **kw)
    with pytest.raises(ValueError, match=r"points\[0\] .* more than once"):
        hp.scan.continuous_poisson([[0.2, 0.3], [0.2, 0.3], [0.4, 0.4]], sq, **kw)
    with pytest.raises(ValueError, match=r"centres\[0\] .* outside"):
        hp.scan.continuous_poisson(pts, sq, centres=[[3.0, 3.0]], **kw)
    with pytest.raises(ValueError, match="min_cases=1"):
        hp.scan.continuous_poisson(pts, sq, min_cases=1, **kw)
    with pytest.raises(ValueError, match="max_radius_share"):
        hp.scan.continuous_poisson(pts, sq, max_radius_share=0.6, **kw)
    with pytest.raises(ValueError, match="distance"):
        hp.scan.continuous_poisson(pts, sq, distance="great_circle", **kw)
    prm = _copy_sample(tmp_path)
    for edit, message in [({"\nCoordinatesType=0": "\nCoordinatesType=1"}, "CoordinatesType='1'.*Cartesian"),
                          ({"CaseFile=\n": "CaseFile=ContinuousPoissonFake.geo\n"}, "CaseFile=.*not used"),
                          ({"Polygon1=Y <= 10000,X >= 0,Y >= X": "Polygon1=Y <= 10000,X >= 0"}, "Polygon1=.*at least 3"),
                          ({"Polygon2=Y <= X,Y >= 0,X <= 10000": "Polygon2=Y <= 1x + 10,Y >= 0,X <= 10000"},
                           "Polygon1 and Polygon2 overlap"),
                          ({"Polygon1=Y <= 10000,X >= 0,Y >= X\n": "", "Polygon2=Y <= X,Y >= 0,X <= 10000\n": ""},
                           "Polygon1=.*is required"),
                          ({"CriteriaForReportingSecondaryClusters=0": "CriteriaForReportingSecondaryClusters=1"},
                           "CriteriaForReportingSecondaryClusters"),
                          ({"SpatialWindowShapeType=0": "SpatialWindowShapeType=1"}, "SpatialWindowShapeType"),
                          ({"AnalysisType=1": "AnalysisType=3"}, "AnalysisType='3'.*Continuous Poisson")]:
        bad = edit_prm(prm, edit, tmp_path / "bad.prm")
        with pytest.raises(ValueError, match=message):
            hp.scan.run_prm(bad, **kw)


if __name__ == "__main__":  # write the stored SaTScan output (see tests/satscan_oracle.py)
    store(FIXTURE, run_satscan, "test_scan_continuous_poisson.py")
