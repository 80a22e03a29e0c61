"""Every public entry point of ``hp.kde`` refuses bad input before any work, naming the argument
(issue 18).  ``test_every_public_entry_point_is_walked`` fails when a new public function or
method appears without cases here (or a stated reason why it takes no user input)."""
from __future__ import annotations

import gzip
import inspect
import math
import re

import numpy as np
import pytest

from hphawkes_py import kde
from hphawkes_py.kde import Window

RNG = np.random.default_rng(0)
PTS = RNG.uniform(0.1, 0.9, size=(30, 2))
WIN = Window.rectangle(0, 1, 0, 1, 1 / 32)


@pytest.fixture(scope="module")
def fitted():
    return kde.fit(PTS, WIN, method="fixed", bandwidth=0.1, backend="cpu", progress=False)


def fit_(**kw):
    args = {"points": PTS, "window": WIN, "method": "fixed", "bandwidth": 0.1, "backend": "cpu", "progress": False}
    args.update(kw)
    return kde.fit(**args)


# (entry point, call, exception, words the message must contain)
CASES = [
    # ---- fit: points
    ("fit", lambda: fit_(points=None), TypeError, "points"),
    ("fit", lambda: fit_(points=PTS[:, 0]), ValueError, "points"),
    ("fit", lambda: fit_(points=np.c_[PTS, PTS[:, :1]]), ValueError, "points"),
    ("fit", lambda: fit_(points=np.where(np.arange(30)[:, None] == 3, np.nan, PTS)), ValueError, "points"),
    ("fit", lambda: fit_(points=np.where(np.arange(30)[:, None] == 3, np.inf, PTS)), ValueError, "points"),
    ("fit", lambda: fit_(points=PTS > 0.5), TypeError, "booleans"),
    ("fit", lambda: fit_(points=PTS + 1j), TypeError, "complex"),
    ("fit", lambda: fit_(points=PTS.astype(str)), TypeError, "strings"),
    ("fit", lambda: fit_(points=PTS[:2]), ValueError, "at least 3"),
    ("fit", lambda: fit_(points=PTS + 5), ValueError, "outside the window"),
    ("fit", lambda: fit_(points=np.tile([0.36, 0.08], (3, 1)), method="adaptive", bandwidth=None), ValueError, "coincide"),
    ("fit", lambda: fit_(points=np.tile([0.36, 0.08], (3, 1)), method="cv", bandwidth=None), ValueError, "coincide"),
    ("fit", lambda: fit_(points=np.tile([0.36, 0.08], (3, 1)), method="rule-of-thumb", bandwidth=None), ValueError,
     "coincide"),
    # coincident up to rounding noise, in metres far from the origin: still caught (scale-aware)
    ("fit", lambda: fit_(points=np.array([[5e6, 3e6], [5e6 + 1e-9, 3e6], [5e6, 3e6 - 1e-9]]), window=None,
                         method="adaptive", bandwidth=None), ValueError, "coincide"),
    # ---- fit: options
    ("fit", lambda: fit_(window="square"), TypeError, "window"),
    ("fit", lambda: fit_(method="kernel"), ValueError, "method"),
    ("fit", lambda: fit_(method=["fixed"]), TypeError, "method"),
    ("fit", lambda: fit_(bandwidth=None), ValueError, "bandwidth"),
    ("fit", lambda: fit_(bandwidth=-0.1), ValueError, "bandwidth"),
    ("fit", lambda: fit_(bandwidth=True), TypeError, "bandwidth"),
    ("fit", lambda: fit_(bandwidth="0.1"), TypeError, "bandwidth"),
    ("fit", lambda: fit_(bandwidth=math.nan), ValueError, "bandwidth"),
    ("fit", lambda: fit_(method="cv", bandwidth=0.1), ValueError, "bandwidth"),
    ("fit", lambda: fit_(bandwidth=1e-300), ValueError, "bandwidth must be in"),
    ("fit", lambda: fit_(bandwidth=1e300), ValueError, "bandwidth must be in"),
    ("fit", lambda: fit_(bandwidth=1e20), ValueError, "no representable mass"),  # edge masses underflow
    ("fit", lambda: fit_(weights=np.ones(29)), ValueError, "weights"),
    ("fit", lambda: fit_(weights=-np.ones(30)), ValueError, "weights[0]"),
    ("fit", lambda: fit_(weights=np.zeros(30)), ValueError, "weights"),
    ("fit", lambda: fit_(weights=np.full(30, np.nan)), ValueError, "weights"),
    ("fit", lambda: fit_(weights=np.ones(30, bool)), TypeError, "weights"),
    ("fit", lambda: fit_(weights=2.0), ValueError, "weights"),
    ("fit", lambda: fit_(edge_correction="no"), TypeError, "edge_correction"),
    ("fit", lambda: fit_(edge_correction=0), TypeError, "edge_correction"),
    ("fit", lambda: fit_(edge_correction=None), TypeError, "edge_correction"),
    ("fit", lambda: fit_(cutoff=True), TypeError, "cutoff"),
    ("fit", lambda: fit_(cutoff="3"), TypeError, "cutoff"),
    ("fit", lambda: fit_(cutoff=0), ValueError, "cutoff"),
    ("fit", lambda: fit_(cutoff=math.nan), ValueError, "cutoff"),
    ("fit", lambda: fit_(progress="no"), TypeError, "progress"),
    ("fit", lambda: fit_(threads=0), ValueError, "threads"),
    ("fit", lambda: fit_(threads=True), TypeError, "threads"),
    ("fit", lambda: fit_(threads=1.5), TypeError, "threads"),
    ("fit", lambda: fit_(dtype=np.int32), ValueError, "dtype"),
    ("fit", lambda: fit_(dtype="float16"), ValueError, "dtype"),
    ("fit", lambda: fit_(backend="cuda"), ValueError, "backend"),
    # ---- rule_of_thumb_bandwidth
    ("rule_of_thumb_bandwidth", lambda: kde.rule_of_thumb_bandwidth(PTS[:1]), ValueError, "at least 2"),
    ("rule_of_thumb_bandwidth", lambda: kde.rule_of_thumb_bandwidth(np.tile([0.36, 0.08], (3, 1))), ValueError,
     "coincide"),
    ("rule_of_thumb_bandwidth", lambda: kde.rule_of_thumb_bandwidth(PTS.ravel()), ValueError, "points"),
    # ---- Window
    ("Window", lambda: Window(np.ones(5, bool), 0, 0, 1), ValueError, "mask"),
    ("Window", lambda: Window(np.full((3, 3), 0.5), 0, 0, 1), TypeError, "mask"),
    ("Window", lambda: Window(np.zeros((3, 3), bool), 0, 0, 1), ValueError, "empty"),
    ("Window", lambda: Window(np.ones((3, 3), bool), math.nan, 0, 1), ValueError, "x0"),
    ("Window", lambda: Window(np.ones((3, 3), bool), 0, True, 1), TypeError, "y0"),
    ("Window", lambda: Window(np.ones((3, 3), bool), "0", 0, 1), TypeError, "x0"),
    ("Window", lambda: Window(np.ones((3, 3), bool), 0, 0, 0), ValueError, "cell_size"),
    ("Window", lambda: Window(np.ones((3, 3), bool), 0, 0, True), TypeError, "cell_size"),
    ("Window.from_mask", lambda: Window.from_mask(np.ones((3, 3), bool), 0, 0, -1), ValueError, "cell_size"),
    ("Window.from_mask", lambda: Window.from_mask([[2, 0]], 0, 0, 1), TypeError, "mask"),
    ("Window.rectangle", lambda: Window.rectangle(1, 0, 0, 1, 0.1), ValueError, "xmax > xmin"),
    ("Window.rectangle", lambda: Window.rectangle(0, math.inf, 0, 1, 0.1), ValueError, "xmax"),
    ("Window.rectangle", lambda: Window.rectangle(0, "1", 0, 1, 0.1), TypeError, "xmax"),
    ("Window.rectangle", lambda: Window.rectangle(0, 1, False, 1, 0.1), TypeError, "ymin"),
    ("Window.rectangle", lambda: Window.rectangle(0, 1, 0, 1, 1e-6), ValueError, "GiB"),
    ("Window.from_polygon", lambda: Window.from_polygon([[0, 0], [1, 0]], 0.1), ValueError, "3"),
    ("Window.from_polygon", lambda: Window.from_polygon([[0, 0], [1, 0], [np.nan, 1]], 0.1), ValueError, "vertices"),
    ("Window.from_polygon", lambda: Window.from_polygon([[0, 0], [1, 0], [1, 1]], 0), ValueError, "cell_size"),
    ("Window.from_polygon", lambda: Window.from_polygon([[0, 0], [1, 0], [1, 1]], 1e-5), ValueError, "GiB"),
    ("Window.from_polygon", lambda: Window.from_polygon([[0, 0], [1, 0], [1, 1]], 10.0), ValueError, "no cell"),
    ("Window.contains", lambda: WIN.contains([[0.5, np.nan]]), ValueError, "points"),
    ("Window.contains", lambda: WIN.contains([0.5, 0.5]), ValueError, "points"),
    ("Window.cell_index", lambda: WIN.cell_index(np.ones((2, 3))), ValueError, "points"),
    ("Window.boundary_distance", lambda: WIN.boundary_distance([[True, False]]), TypeError, "points"),
    ("Raster", lambda: kde.Raster(np.ones(3), 0, 0, 1), ValueError, "values"),
    ("Raster", lambda: kde.Raster(np.ones((3, 3)), 0, 0, -1), ValueError, "cell_size"),
    ("Raster", lambda: kde.Raster(np.ones((3, 3)), math.nan, 0, 1), ValueError, "x0"),
]


CASES_RR = PTS[:10], PTS[10:]


def rr_(**kw):
    args = {"cases": CASES_RR[0], "controls": CASES_RR[1], "window": WIN, "bandwidth": 0.1, "backend": "cpu"}
    args.update(kw)
    return kde.relative_risk(**args)


CASES += [
    ("relative_risk", lambda: rr_(cases=PTS[:1]), ValueError, "cases needs at least 2"),
    ("relative_risk", lambda: rr_(controls=np.empty((0, 2))), ValueError, "controls"),
    ("relative_risk", lambda: rr_(controls=PTS[10:] + 3), ValueError, "controls"),
    ("relative_risk", lambda: rr_(cases=PTS[:10] > 0.5), TypeError, "cases"),
    ("relative_risk", lambda: rr_(window=None), TypeError, "window"),
    ("relative_risk", lambda: rr_(method="kernel"), ValueError, "method"),
    ("relative_risk", lambda: rr_(bandwidth="silverman"), ValueError, "bandwidth"),
    ("relative_risk", lambda: rr_(bandwidth="brunsdon"), ValueError, "bandwidth"),  # adaptive only
    ("relative_risk", lambda: rr_(bandwidth=-1.0), ValueError, "bandwidth"),
    ("relative_risk", lambda: rr_(bandwidth=True), TypeError, "bandwidth"),
    ("relative_risk", lambda: rr_(bandwidth=1e-200), ValueError, "bandwidth must be in"),
    ("relative_risk", lambda: rr_(alpha=0.5), ValueError, "alpha"),
    ("relative_risk", lambda: rr_(method="adaptive", alpha="0.5"), TypeError, "alpha"),
    ("relative_risk", lambda: rr_(method="adaptive", bandwidth="brunsdon", alpha=0.5), ValueError, "alpha"),
    ("relative_risk", lambda: rr_(edge_correction="yes"), TypeError, "edge_correction"),
    ("relative_risk", lambda: rr_(cutoff=False), TypeError, "cutoff"),
    ("relative_risk", lambda: rr_(progress=1), TypeError, "progress"),
    ("relative_risk", lambda: rr_(threads=-1), ValueError, "threads"),
    ("relative_risk", lambda: rr_(dtype=complex), ValueError, "dtype"),
    ("relative_risk", lambda: rr_(bandwidth="oversmoothing", cases=np.tile([0.5, 0.5], (2, 1)),
                                  controls=np.tile([0.5, 0.5], (3, 1))), ValueError, "coincide"),
    ("oversmoothing_bandwidth", lambda: kde.oversmoothing_bandwidth(PTS[:1]), ValueError, "at least 2"),
    ("oversmoothing_bandwidth", lambda: kde.oversmoothing_bandwidth(PTS, n=0), ValueError, "n"),
    ("oversmoothing_bandwidth", lambda: kde.oversmoothing_bandwidth(np.tile([1.0, 2.0], (4, 1))), ValueError,
     "coincide"),
    ("diggle_bandwidth", lambda: kde.diggle_bandwidth(PTS, None), TypeError, "window"),
    ("diggle_bandwidth", lambda: kde.diggle_bandwidth(PTS + 3, WIN), ValueError, "outside the window"),
    ("diggle_bandwidth", lambda: kde.diggle_bandwidth(PTS[:2], WIN), ValueError, "at least 3"),
    ("diggle_bandwidth", lambda: kde.diggle_bandwidth(PTS, WIN, nr=5), ValueError, "nr"),
    ("diggle_bandwidth", lambda: kde.diggle_bandwidth(PTS, WIN, hmax=-1.0), ValueError, "hmax"),
    ("lscv_bandwidth", lambda: kde.lscv_bandwidth(PTS[:2]), ValueError, "at least 3"),
    ("lscv_bandwidth", lambda: kde.lscv_bandwidth(PTS, bounds=(0.2, 0.1)), ValueError, "bounds"),
    ("lscv_bandwidth", lambda: kde.lscv_bandwidth(PTS, bounds=0.1), TypeError, "bounds"),
    ("lscv_bandwidth", lambda: kde.lscv_bandwidth(PTS, backend="tpu"), ValueError, "backend"),
]


TIMES = np.linspace(0, 10, 30)


def st_(**kw):
    args = {"points": PTS, "times": TIMES, "window": WIN, "h": 0.1, "lam": 1.0, "backend": "cpu"}
    args.update(kw)
    return kde.spacetime(**args)


CASES += [
    ("spacetime", lambda: st_(times=TIMES[:5]), ValueError, "same length"),
    ("spacetime", lambda: st_(times=np.where(np.arange(30) == 2, np.nan, TIMES)), ValueError, "times"),
    ("spacetime", lambda: st_(times=np.arange(30).astype("datetime64[D]")), TypeError, "datetimes"),
    ("spacetime", lambda: st_(times=TIMES > 5), TypeError, "times"),
    ("spacetime", lambda: st_(times=np.full(30, 2.0)), ValueError, "time_window"),
    ("spacetime", lambda: st_(time_window=(5, 1)), ValueError, "time_window"),
    ("spacetime", lambda: st_(time_window=(1, 10)), ValueError, "time_window"),
    ("spacetime", lambda: st_(time_window=5), TypeError, "time_window"),
    ("spacetime", lambda: st_(h=-1), ValueError, "h"),
    ("spacetime", lambda: st_(h="silverman"), ValueError, "h"),
    ("spacetime", lambda: st_(lam=True), TypeError, "lam"),
    ("spacetime", lambda: st_(lam=0.0), ValueError, "lam"),
    ("spacetime", lambda: st_(edge_correction="no"), TypeError, "edge_correction"),
    ("spacetime", lambda: st_(cutoff=-3), ValueError, "cutoff"),
    ("spacetime", lambda: st_(points=PTS + 2), ValueError, "outside the window"),
    ("spacetime", lambda: st_(window=None), TypeError, "window"),
    ("spacetime", lambda: st_(threads=0), ValueError, "threads"),
    ("temporal_oversmoothing_bandwidth", lambda: kde.temporal_oversmoothing_bandwidth([1.0, 1.0]), ValueError,
     "distinct"),
    ("temporal_oversmoothing_bandwidth", lambda: kde.temporal_oversmoothing_bandwidth([[1.0, 2.0]]), ValueError,
     "times"),
]


def _st_cases(st):
    return [
        ("SpaceTimeKDE.slices", lambda: st.slices([11.0]), ValueError, "time window"),
        ("SpaceTimeKDE.slices", lambda: st.slices([]), ValueError, "at least one"),
        ("SpaceTimeKDE.slices", lambda: st.slices([1.0], conditional="yes"), TypeError, "conditional"),
        ("SpaceTimeKDE.marginal", lambda: st.marginal([np.nan]), ValueError, "times"),
        ("SpaceTimeKDE.intensity_at", lambda: st.intensity_at([[0.5, 0.5]], -1.0), ValueError, "time window"),
        ("SpaceTimeKDE.intensity_at", lambda: st.intensity_at([0.5, 0.5], 1.0), ValueError, "points"),
        ("SpaceTimeKDE.plot_slices", lambda: st.plot_slices([20.0]), ValueError, "time window"),
        ("SpaceTimeKDE.animation", lambda: st.animation([-5.0]), ValueError, "time window"),
    ]


def test_spacetime_methods_refuse_bad_input():
    st = st_()
    for _, call, exc, words in _st_cases(st):
        with pytest.raises(exc, match=re.escape(words)):
            call()


def _rr_cases(r):
    return [
        ("RelativeRisk.surface", lambda: r.surface("odds"), ValueError, "kind"),
        ("RelativeRisk.intensities_at", lambda: r.intensities_at([[0.5, np.inf]]), ValueError, "points"),
        ("RelativeRisk.log_risk_at", lambda: r.log_risk_at([0.5, 0.5]), ValueError, "points"),
        ("RelativeRisk.p_values", lambda: r.p_values("bootstrap"), ValueError, "method"),
        ("RelativeRisk.p_values", lambda: r.p_values("monte_carlo", n_replicates=0), ValueError, "n_replicates"),
        ("RelativeRisk.p_values", lambda: r.p_values("monte_carlo", n_replicates=10**12), ValueError, "n_replicates"),
        ("RelativeRisk.p_values", lambda: r.p_values("monte_carlo", n_replicates=True), TypeError, "n_replicates"),
        ("RelativeRisk.p_values", lambda: r.p_values("monte_carlo", seed=-1), ValueError, "seed"),
        ("RelativeRisk.p_values", lambda: r.p_values("monte_carlo", executor="pool"), TypeError, "executor"),
        ("RelativeRisk.p_values", lambda: r.p_values("monte_carlo", progress="no"), TypeError, "progress"),
        ("RelativeRisk.p_values", lambda: r.p_values("asymptotic", seed=1), ValueError, "monte_carlo"),
        ("RelativeRisk.tolerance_contours", lambda: r.tolerance_contours([0.05, 1.5]), ValueError, "levels[1]"),
        ("RelativeRisk.tolerance_contours", lambda: r.tolerance_contours("0.05"), TypeError, "levels"),
        ("RelativeRisk.tolerance_contours", lambda: r.tolerance_contours(0.05, p_values=np.ones((32, 32))),
         TypeError, "p_values"),
    ]


def test_relative_risk_methods_refuse_bad_input():
    r = rr_()
    for _, call, exc, words in _rr_cases(r):
        with pytest.raises(exc, match=re.escape(words)):
            call()
    ra = rr_(method="adaptive")
    # adaptive asymptotic p-values exist now (Davies & Hazelton 2010; see test_kde_relrisk): a surface
    # of probabilities on the inside cells, not a refusal
    p = ra.p_values("asymptotic").values[ra.window.mask]
    assert np.isfinite(p).any() and np.all((p[np.isfinite(p)] >= 0) & (p[np.isfinite(p)] <= 1))
    with pytest.raises(ValueError, match="only used with method=\"monte_carlo\""):
        ra.p_values("asymptotic", seed=1)


def _fitted_cases(f):
    return [
        ("KDEFit.density_at", lambda: f.density_at([[0.5, np.nan]]), ValueError, "points"),
        ("KDEFit.density_at", lambda: f.density_at([0.5, 0.5]), ValueError, "points"),
        ("KDEFit.density_at", lambda: f.density_at([[0.5, 0.5]], threads=0), ValueError, "threads"),
        ("KDEFit.density_at", lambda: f.density_at([[0.5, 0.5]], dtype=np.float16), ValueError, "dtype"),
        ("KDEFit.density_surface", lambda: f.density_surface("window"), TypeError, "window"),
        ("KDEFit.density_surface", lambda: f.density_surface(threads="2"), TypeError, "threads"),
        ("KDEFit.standard_error_surface", lambda: f.standard_error_surface(np.ones((3, 3))), TypeError, "window"),
        ("KDEFit.standard_error_surface", lambda: f.standard_error_surface(threads=0), ValueError, "threads"),
    ]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_bad_input_is_refused_naming_the_argument(case):
    _, call, exc, words = CASES[case]
    with pytest.raises(exc, match=re.escape(words)):
        call()


def test_fitted_result_methods_refuse_bad_input(fitted):
    for _, call, exc, words in _fitted_cases(fitted):
        with pytest.raises(exc, match=re.escape(words)):
            call()


# ---- files
def _asc(tmp_path, body, header=None, name="w.asc"):
    header = header or "ncols 3\nnrows 2\nxllcorner 0\nyllcorner 0\ncellsize 1\nNODATA_value -9999\n"
    p = tmp_path / name
    p.write_text(header + body)
    return p


@pytest.mark.parametrize("reader", [Window.from_asc, kde.read_asc])
def test_ascii_grid_errors_name_the_file(tmp_path, reader):
    with pytest.raises(FileNotFoundError, match="not found"):
        reader(tmp_path / "missing.asc")
    with pytest.raises(IsADirectoryError, match="folder"):
        reader(tmp_path)
    with pytest.raises(ValueError, match=r"non-numeric value 'x'.*value number 5"):
        reader(_asc(tmp_path, "1 1 1\n1 x 1\n"))
    with pytest.raises(ValueError, match="holds 5"):
        reader(_asc(tmp_path, "1 1 1\n1 1\n"))
    with pytest.raises(ValueError, match="holds more"):
        reader(_asc(tmp_path, "1 1 1\n1 1 1 1\n"))
    with pytest.raises(ValueError, match="lacks"):
        reader(_asc(tmp_path, "1 1 1\n1 1 1\n", header="ncols 3\nnrows 2\ncellsize 1\n"))
    with pytest.raises(ValueError, match="cellsize"):
        reader(_asc(tmp_path, "1 1 1\n1 1 1\n", header="ncols 3\nnrows 2\nxllcorner 0\nyllcorner 0\ncellsize -1\n"))
    bad_gz = tmp_path / "w.asc.gz"
    bad_gz.write_bytes(b"not gzip at all")
    with pytest.raises(OSError):
        reader(bad_gz)


def test_all_nodata_window_is_refused(tmp_path):
    with pytest.raises(ValueError, match="every cell is NODATA"):
        Window.from_asc(_asc(tmp_path, "-9999 -9999 -9999\n-9999 -9999 -9999\n"))


def test_ascii_grid_parsed_in_chunks_is_exact(tmp_path, monkeypatch):
    from hphawkes_py.kde import _window

    rng = np.random.default_rng(3)
    vals = np.where(rng.uniform(size=(37, 53)) < 0.3, -9999.0, rng.normal(size=(37, 53)))
    p = tmp_path / "big.asc.gz"
    with gzip.open(p, "wt") as fh:
        fh.write("ncols 53\nnrows 37\nxllcorner 1\nyllcorner 2\ncellsize 0.5\nNODATA_value -9999\n")
        np.savetxt(fh, vals, fmt="%.17g")
    monkeypatch.setattr(_window, "_ASC_CHUNK", 97)  # many chunks, cut mid-line
    got, x0, y0, cs, nodata = kde.read_asc(p)
    assert np.array_equal(got, vals) and (x0, y0, cs, nodata) == (1, 2, 0.5, -9999)
    assert np.array_equal(Window.from_asc(p).mask, vals != -9999)


def test_window_from_asc_peak_memory_is_about_the_mask(tmp_path, monkeypatch):
    import tracemalloc

    from hphawkes_py.kde import _window

    monkeypatch.setattr(_window, "_ASC_CHUNK", 1 << 16)  # the default 2 MB chunks, scaled to this raster

    rows, cols = 400, 1000
    p = tmp_path / "m.asc"
    with open(p, "w") as fh:
        fh.write(f"ncols {cols}\nnrows {rows}\nxllcorner 0\nyllcorner 0\ncellsize 1\nNODATA_value -9999\n")
        line = " ".join(["-9999"] * (cols // 2) + ["1"] * (cols // 2)) + "\n"
        fh.write(line * rows)
    tracemalloc.start()
    w = Window.from_asc(p)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert w.n_inside == rows * cols // 2
    # one string per cell (the old parser) needed ~75 bytes per cell; now: 2 x 1-byte masks + a chunk
    assert peak < 8 * rows * cols, peak


# ---- the caller's arrays are never aliased or frozen
def test_window_copies_the_callers_mask():
    m = np.ones((4, 4), bool)
    w = Window(m, 0, 0, 1)
    assert m.flags.writeable and w.mask is not m and not np.shares_memory(w.mask, m)
    m[0, 0] = False
    assert w.mask[0, 0]
    w2 = Window.from_mask(m, 0, 0, 1)
    assert m.flags.writeable and not np.shares_memory(w2.mask, m)


def test_fit_points_are_a_copy():
    p = PTS.copy()
    f = fit_(points=p)
    assert p.flags.writeable and not np.shares_memory(f.points, p)
    p[0] = [0.5, 0.5]
    assert not np.array_equal(f.points[0], p[0])


def test_coincident_points_with_fixed_bandwidth_are_a_valid_fit():
    f = fit_(points=np.tile([0.36, 0.08], (3, 1)), bandwidth=0.05)
    assert f.h == 0.05 and math.isnan(f.h0) and np.isfinite(f.log_likelihood)


def test_tiny_but_real_spread_far_from_the_origin_is_accepted():
    pts = np.array([[5e6, 3e6], [5e6 + 1e-3, 3e6], [5e6, 3e6 - 1e-3], [5e6 + 2e-3, 3e6 + 1e-3]])
    assert kde.rule_of_thumb_bandwidth(pts) > 0


# ---- command line: one line, no traceback, nothing half-written
def _run_cli(argv, capsys):
    from hphawkes_py.cli import main

    rc = main(argv)
    err = capsys.readouterr().err
    return rc, err


def test_cli_errors_are_one_line(tmp_path, capsys):
    csv = tmp_path / "p.csv"
    np.savetxt(csv, PTS, delimiter=",", header="x,y", comments="")
    base = ["kde", str(csv), "--rectangle", "0", "1", "0", "1", "--cell-size", "0.05", "--backend", "cpu", "--quiet"]
    bad = tmp_path / "bad.csv"
    bad.write_text("x,y\n0.5,0.5\n0.4,abc\n0.3,0.3\n")
    broken = tmp_path / "p.csv.gz"
    broken.write_bytes(b"\x1f\x8b\x08garbage")
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "old.txt").write_text("keep me")
    cases = [
        (base + ["--method", "fixed", "--out", str(tmp_path / "o1")], "--bandwidth"),
        (base + ["--bandwidth", "0.1", "--out", str(tmp_path / "o2")], "--bandwidth"),
        (["kde", str(bad), "--rectangle", "0", "1", "0", "1", "--cell-size", "0.05", "--out", str(tmp_path / "o3")],
         "row 3"),
        (["kde", str(broken), "--rectangle", "0", "1", "0", "1", "--cell-size", "0.05", "--out", str(tmp_path / "o4")],
         "p.csv.gz"),
        (["kde", str(tmp_path), "--rectangle", "0", "1", "0", "1", "--cell-size", "0.05", "--out", str(tmp_path / "o5")],
         "folder"),
        (["kde", str(csv), "--window", str(tmp_path / "none.asc"), "--out", str(tmp_path / "o6")], "none.asc"),
        (base + ["--out", str(occupied)], "--overwrite"),
        (base + ["--out", str(tmp_path / "no" / "such" / "dir")], "does not exist"),
        (base + ["--x", "east", "--out", str(tmp_path / "o7")], "east"),
    ]
    for argv, words in cases:
        rc, err = _run_cli(argv, capsys)
        assert rc == 2, (argv, err)
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("hphawkes: error:") and words in lines[0], (argv, err)
        assert "Traceback" not in err
    assert [p.name for p in occupied.iterdir()] == ["old.txt"]
    assert not any(p.name.startswith(("o", ".o")) and p.name != "occupied" for p in tmp_path.iterdir())


def test_cli_failing_figure_leaves_nothing(tmp_path, capsys, monkeypatch):
    from hphawkes_py.cli import kde as kcli

    csv = tmp_path / "p.csv"
    np.savetxt(csv, PTS, delimiter=",", header="x,y", comments="")
    out = tmp_path / "out"

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(kcli, "_save_surface_png", boom)
    rc, err = _run_cli(["kde", str(csv), "--rectangle", "0", "1", "0", "1", "--cell-size", "0.05", "--method",
                        "fixed", "--bandwidth", "0.1", "--backend", "cpu", "--quiet", "--out", str(out)], capsys)
    assert rc == 2 and "disk full" in err
    assert list(tmp_path.iterdir()) == [csv]


# ---- the walk covers every public entry point
NO_USER_INPUT = {  # name -> why it needs no validation cases
    "Window.cell_centres": "no arguments", "Window.row_runs": "no arguments", "Window.row_bands": "no arguments",
    "Window.to_asc": "path only (OSError names it)", "Raster.integral": "no arguments",
    "Raster.to_asc": "path and a number format value", "Raster.plot": "matplotlib options",
    "KDEFit": "built by fit()", "KDEFit.summary": "no arguments", "KDEFit.to_dict": "no arguments",
    "KDEFit.trace_frame": "no arguments", "RelativeRisk": "built by relative_risk()",
    "RelativeRisk.summary": "no arguments", "RelativeRisk.to_dict": "no arguments",
    "SpaceTimeKDE": "built by spacetime()", "SpaceTimeKDE.to_dict": "no arguments",
}


def _public_names():
    for name in kde.__all__:
        obj = getattr(kde, name)
        if inspect.isclass(obj):
            yield name
            for m, _ in inspect.getmembers(obj, inspect.isfunction):
                if not m.startswith("_"):
                    yield f"{name}.{m}"
            for m, v in vars(obj).items():
                if isinstance(v, classmethod) and not m.startswith("_"):
                    yield f"{name}.{m}"
        elif callable(obj):
            yield name


def test_every_public_entry_point_is_walked():
    covered = ({c[0] for c in CASES} | {c[0] for c in _fitted_cases(None)} | {c[0] for c in _rr_cases(None)} | {c[0] for c in _st_cases(None)}
               | {"read_asc", "Window.from_asc"}
               # GIS files: bad transforms/CRS/polygons and the missing extra in test_kde_gis.py
               | {"Window.from_geotiff", "Window.from_vector", "Raster.to_geotiff",
                  # reprojection: unknown/missing CRSs, points outside the domain in test_kde_gis.py
                  "Window.to_crs", "reproject_points"})
    missing = sorted(set(_public_names()) - covered - set(NO_USER_INPUT))
    assert not missing, f"public kde entry points without bad-input cases: {missing}"
