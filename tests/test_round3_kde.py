"""Issue 34 (round 3), KDE: every item a correct result or a clear error naming the argument.

Adaptive sensitivity ``alpha`` of the relative risk, polygon windows with no area or crossing edges,
repeated ``.asc`` header keys, a ``nodata`` value that is also a data value, cell sizes whose
area overflows, data-driven bandwidths outside the representable range, and results that must be
the same bits for any number of threads.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import hphawkes_py as hp
from hphawkes_py.kde import Raster, Window

SQUARE = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])


@pytest.fixture(scope="module")
def redwood():
    pts, mask_path = hp.datasets.load_redwood()
    return pts, Window.from_asc(mask_path)


# ------------------------------------------------------------------------- relative_risk(alpha=)
@pytest.mark.parametrize("alpha", [-1, -1e-9, float("nan"), float("inf")])
def test_relative_risk_refuses_negative_or_non_finite_alpha(redwood, alpha):
    pts, w = redwood
    with pytest.raises(ValueError, match=r"alpha must be a finite real number >= 0.*got " + str(alpha).replace("+", r"\+")):
        hp.kde.relative_risk(pts[:31], pts[31:], w, method="adaptive", bandwidth=0.1, alpha=alpha, backend="cpu")


def test_relative_risk_alpha_zero_is_the_fixed_bandwidth(redwood):
    pts, w = redwood
    a0 = hp.kde.relative_risk(pts[:31], pts[31:], w, method="adaptive", bandwidth=0.1, alpha=0, backend="cpu")
    fx = hp.kde.relative_risk(pts[:31], pts[31:], w, method="fixed", bandwidth=0.1, backend="cpu")
    assert a0.alpha == 0.0 and np.all(a0.bandwidths == 0.1)
    assert np.array_equal(a0.surface().values, fx.surface().values, equal_nan=True)


def test_relative_risk_alpha_whose_bandwidths_overflow_names_alpha(redwood):
    pts, w = redwood
    with pytest.raises(ValueError, match=r"alpha=1000000.0 with h=0.1 gives adaptive bandwidths"):
        hp.kde.relative_risk(pts[:31], pts[31:], w, method="adaptive", bandwidth=0.1, alpha=1e6, backend="cpu")
    with pytest.raises(ValueError, match=r"alpha=50.0 with h=0.1: edge correction impossible"):
        hp.kde.relative_risk(pts[:31], pts[31:], w, method="adaptive", bandwidth=0.1, alpha=50, backend="cpu")


def test_adaptive_search_never_evaluates_a_negative_alpha(redwood):
    # the search's candidates (h, alpha < 0) count as -inf, as (h <= 0) do: a fit never returns alpha < 0
    from hphawkes_py.kde.engine import make_engine
    from hphawkes_py.kde.model import _Objective

    pts, w = redwood
    obj = _Objective(make_engine(pts, w, 3.0, backend="cpu"), len(pts), True)
    (neg, _), (zero, _) = obj.adaptive_logliks([(0.05, -0.1), (0.05, 0.0)])
    assert neg == -np.inf and np.isfinite(zero)


# ------------------------------------------------------------------------- Window.from_polygon
@pytest.mark.parametrize("vertices", [
    np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]),  # the case: 20 cells along a line today
    np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [0.0, 0.0]]),
    np.array([[0.0, 0.0], [0.1, 0.3], [0.7, 2.1]]),  # collinear up to rounding
    np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 0.0], [0.0, 0.0]]),  # repeated vertices
])
def test_from_polygon_refuses_a_ring_without_area(vertices):
    with pytest.raises(ValueError, match="vertices: the polygon encloses no area"):
        Window.from_polygon(vertices, 0.1)


def test_from_polygon_refuses_crossing_edges():
    bowtie = SQUARE[[0, 2, 1, 3]]  # the square's vertices out of order: 49 of 100 cells today
    with pytest.raises(ValueError, match=r"the polygon's edges cross: the edge from vertex 0 \(0.0, 0.0\)"):
        Window.from_polygon(bowtie, 0.1)
    overlapping = [SQUARE, SQUARE + 0.5]  # even-odd would keep their difference, not their union
    with pytest.raises(ValueError, match="rings 0 and 1 cross"):
        Window.from_polygon(overlapping, 0.1)


def test_from_polygon_keeps_valid_rings():
    assert Window.from_polygon(SQUARE, 0.1).n_inside == 100
    assert Window.from_polygon(np.vstack([SQUARE, SQUARE[:1]]), 0.1).n_inside == 100
    hole = 0.2 + 0.6 * SQUARE
    assert Window.from_polygon([SQUARE, hole], 0.1).n_inside == 64
    touching = [SQUARE, SQUARE + [1.0, 0.0]]  # a shared edge is not a crossing
    assert Window.from_polygon(touching, 0.1).n_inside == 200
    # a hole whose vertices and one edge lie on the shell's edge touches it without crossing: kept
    notch = np.array([[0.3, 0.0], [0.5, 0.4], [0.7, 0.0]])
    assert Window.from_polygon([SQUARE, notch], 0.1).n_inside < 100


def test_from_polygon_refuses_vertices_whose_distances_overflow():
    with pytest.raises(ValueError, match="vertices: the vertices span .* overflow float64"):
        Window.from_polygon(np.array([[-1e308, 0.0], [1e308, 0.0], [0.0, 1e308]]), 1.0)


# ------------------------------------------------------------------------- .asc headers
_BODY = "1 1\n1 1\n"


def _asc(tmp_path, header):
    path = tmp_path / "w.asc"
    path.write_text(header + _BODY)
    return path


def test_asc_header_with_a_key_twice_is_refused(tmp_path):
    path = _asc(tmp_path, "ncols 2\nnrows 2\nxllcorner 0\nyllcorner 0\ncellsize 1\ncellsize 2\n")
    with pytest.raises(ValueError, match=r"header key 'cellsize' appears twice \(line 6 repeats it, 1.0 then '2'\)"):
        Window.from_asc(path)
    with pytest.raises(ValueError, match="'NODATA_value' appears twice"):
        hp.kde.read_asc(_asc(tmp_path, "ncols 2\nnrows 2\nxllcorner 0\nyllcorner 0\ncellsize 1\n"
                                       "nodata_value -9999\nNODATA_value 1\n"))


def test_asc_header_with_corner_and_centre_is_refused(tmp_path):
    path = _asc(tmp_path, "ncols 2\nnrows 2\nxllcorner 0\nxllcenter 0.5\nyllcorner 0\ncellsize 1\n")
    with pytest.raises(ValueError, match="both xllcorner and xllcenter"):
        Window.from_asc(path)


# ------------------------------------------------------------------------- nodata of the writers
VALUES = np.array([[1.0, -9999.0, 2.5], [np.nan, 3.0, 0.125]])


def test_to_geotiff_refuses_a_nodata_value_that_is_data(tmp_path):
    pytest.importorskip("rasterio")
    r = Raster(VALUES, 0.0, 0.0, 1.0)
    with pytest.raises(ValueError, match=r"nodata=-9999.0 is a data value: 1 cell holds it, the first at row 0, "
                                         r"column 1"):
        r.to_geotiff(tmp_path / "a.tif")
    with pytest.raises(ValueError, match=r"nodata=2.5 is a data value"):
        r.to_geotiff(tmp_path / "a.tif", nodata=2.5)
    assert not (tmp_path / "a.tif").exists()


@pytest.mark.parametrize("nodata", [5.0, float("nan")])
def test_to_geotiff_reads_back_every_data_cell(tmp_path, nodata):
    rasterio = pytest.importorskip("rasterio")
    values = VALUES.copy()
    values[0, 2] = np.inf  # a float64 value like any other
    Raster(values, 0.0, 0.0, 1.0).to_geotiff(tmp_path / "a.tif", nodata=nodata)
    with rasterio.open(tmp_path / "a.tif") as ds:
        back = ds.read(1, masked=True)
    assert np.array_equal(back.mask, np.isnan(values))
    assert np.array_equal(back.data[~back.mask], values[~np.isnan(values)])


def test_to_asc_refuses_a_nodata_value_that_is_data_as_written(tmp_path):
    r = Raster(VALUES, 0.0, 0.0, 1.0)
    with pytest.raises(ValueError, match=r"nodata=-9999.0 is a data value: 1 cell holds it"):
        r.to_asc(tmp_path / "a.asc")
    near = Raster(np.array([[1.0, -9999.00000001]]), 0.0, 0.0, 1.0)  # written to 10 digits as -9999
    with pytest.raises(ValueError, match=r"\(written as -9999\)"):
        near.to_asc(tmp_path / "a.asc")
    with pytest.raises(ValueError, match="no infinity"):
        Raster(np.array([[1.0, np.inf]]), 0.0, 0.0, 1.0).to_asc(tmp_path / "a.asc")
    with pytest.raises(ValueError, match="nodata must be a finite number"):
        Raster(np.array([[1.0, 2.0]]), 0.0, 0.0, 1.0).to_asc(tmp_path / "a.asc", nodata=float("nan"))


def test_to_asc_header_nodata_matches_the_written_cells(tmp_path):
    # the header once rounded nodata to 6 digits and the body to 10: NaN cells read back as data
    r = Raster(VALUES[:, [0, 2]], 0.0, 0.0, 1.0)
    r.to_asc(tmp_path / "a.asc", nodata=-12345.678)
    back, *_, nodata = hp.kde.read_asc(tmp_path / "a.asc")
    assert nodata == -12345.678
    assert np.array_equal(back == nodata, np.isnan(r.values))
    assert np.array_equal(Window.from_asc(tmp_path / "a.asc").mask, np.isfinite(r.values))


# ------------------------------------------------------------------------- sizes out of range
def test_cell_size_whose_area_overflows_is_named():
    with pytest.raises(ValueError, match=r"cell_size must be in \[1e-150, 1e\+150\].*got 1e\+308"):
        Window(np.ones((3, 3), bool), 0.0, 0.0, 1e308)
    with pytest.raises(ValueError, match=r"cell_size must be in .*got 1e-200"):
        Window(np.ones((3, 3), bool), 0.0, 0.0, 1e-200)
    with pytest.raises(ValueError, match=r"cell_size must be in .*got 1e\+300"):
        Raster(np.ones((2, 2)), 0.0, 0.0, 1e300)


def test_data_driven_bandwidth_out_of_range_names_the_coordinates(redwood):
    pts, _ = redwood
    with pytest.raises(ValueError, match=r"the rule-of-thumb bandwidth .* is inf for points with coordinates of "
                                         r"magnitude up to 9.99e\+199.*rescale"):
        hp.kde.fit(pts * 1e200, method="adaptive", progress=False, backend="cpu")


def test_asc_cellsize_out_of_range_names_the_file(tmp_path):
    path = _asc(tmp_path, "ncols 2\nnrows 2\nxllcorner 0\nyllcorner 0\ncellsize 1e200\n")
    with pytest.raises(ValueError, match=r"w.asc: cellsize must be in \[1e-150, 1e\+150\], got 1e\+200"):
        Window.from_asc(path)


@pytest.mark.parametrize("scale", [1e100, 1e-100])
def test_squared_kernel_sums_do_not_underflow_at_any_allowed_scale(redwood, scale):
    # the kernels' squares scale as 1 / b^4: 1e-400 at b = 1e100, once summed as 0 -- a standard error
    # surface of zeros (infinities at 1e-100) and adaptive asymptotic p-values all NaN
    pts, w = redwood
    ws = Window(w.mask, 0.0, 0.0, w.cell_size * scale)
    f1 = hp.kde.fit(pts, w, method="fixed", bandwidth=0.1, progress=False, backend="cpu")
    fs = hp.kde.fit(pts * scale, ws, method="fixed", bandwidth=0.1 * scale, progress=False, backend="cpu")
    se1, ses = f1.standard_error_surface().values, fs.standard_error_surface().values
    assert np.array_equal(np.isfinite(ses), np.isfinite(se1)) and np.array_equal(ses == 0, se1 == 0)
    pos = se1 > 0  # (cells beyond the cut-off of every point are 0 at both scales)
    assert pos.sum() > 10000 and np.max(np.abs(ses[pos] * scale**2 / se1[pos] - 1)) < 1e-12
    kw = dict(method="adaptive", bandwidth=0.1, alpha=0.5, backend="cpu")
    p1 = hp.kde.relative_risk(pts[:31], pts[31:], w, **kw).p_values().values
    kw["bandwidth"] = 0.1 * scale
    ps = hp.kde.relative_risk(pts[:31] * scale, pts[31:] * scale, ws, **kw).p_values().values
    assert np.array_equal(np.isnan(ps), np.isnan(p1)) and np.isfinite(p1).sum() > 500
    assert np.nanmax(np.abs(ps - p1)) < 1e-10


def test_squared_kernel_sum_is_the_unscaled_sum_bit_for_bit(redwood):
    # the power-of-two scale changes no bit where the unscaled sum is representable
    import math

    from hphawkes_py.kde.engine import make_engine
    from hphawkes_py.kde.model import squared_kernel_sum

    pts, w = redwood
    f = hp.kde.fit(pts, w, method="adaptive", progress=False, backend="cpu")
    b, e = f.bandwidths, f.edge_factors
    eng = make_engine(pts, w, 3.0 * math.sqrt(2.0), backend="cpu")
    plain = eng.intensity_at(w.cell_centres(), b / math.sqrt(2.0), e**2 / (4.0 * math.pi * b * b))
    s, k = squared_kernel_sum(eng, w.cell_centres(), b, e)
    assert k == math.frexp(float(np.median(b)))[1] and k < 0
    assert np.array_equal(np.ldexp(s, -4 * k), plain)
    assert np.array_equal(f.standard_error_surface().values[w.mask], np.sqrt(plain))


# ------------------------------------------------------------------------- thread counts
_THREADS_SCRIPT = textwrap.dedent("""
    import hashlib, json, warnings
    import numpy as np
    import hphawkes_py as hp
    from hphawkes_py.kde.engine import make_engine
    from hphawkes_py._backend import threads_context

    warnings.simplefilter("ignore")
    pts, mask_path = hp.datasets.load_redwood()
    w = hp.kde.Window.from_asc(mask_path)
    rng = np.random.default_rng(3)
    many = np.vstack([rng.normal(c, 0.05, (600, 2)) for c in ([0.3, 0.3], [0.7, 0.6], [0.5, 0.8])])
    many = np.clip(many, 0.001, 0.999)
    digests = {}
    for th in (1, 2, 3):
        f = hp.kde.fit(pts, w, method="adaptive", progress=False, threads=th, backend="cpu")
        rr = hp.kde.relative_risk(pts[:31], pts[31:], w, method="adaptive", bandwidth=0.08, threads=th,
                                  progress=False, backend="cpu")
        with threads_context(th):
            eng = make_engine(many, w, 3.0, backend="cpu")
            sym = [eng.point_intensities(np.full(len(many), 0.04), np.ones(len(many)), loo) for loo in (False, True)]
        parts = [f.bandwidths, f.edge_factors, np.array([f.h, f.alpha, f.log_likelihood]),
                 f.density_surface(threads=th).values, rr.bandwidths,
                 rr.p_values("monte_carlo", n_replicates=20, seed=5, progress=False, threads=th).values] + sym
        digests[th] = [hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest() for a in parts]
    print(json.dumps(digests))
""")


def test_results_are_the_same_bits_for_one_two_and_three_threads():
    # a fresh process with 3 Numba threads (this one may have fewer); Numba's cache is shared
    env = dict(os.environ, NUMBA_NUM_THREADS="3")
    out = subprocess.run([sys.executable, "-c", _THREADS_SCRIPT], env=env, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    digests = json.loads(out.stdout.strip().splitlines()[-1])
    names = ["fit bandwidths", "fit edge factors", "fit h, alpha, loglik", "fit surface", "rr bandwidths",
             "rr Monte Carlo p-values", "pilot (symmetric gather)", "leave-one-out (symmetric gather)"]
    for th in ("2", "3"):
        differ = [n for n, a, b in zip(names, digests["1"], digests[th]) if a != b]
        assert not differ, f"threads=1 and threads={th} differ in {differ}"


def test_symmetric_groups_depend_on_the_pattern_size_only():
    from hphawkes_py.kde import cpu

    assert cpu.symmetric_groups(62) == cpu.SYMMETRIC_GROUPS
    assert cpu.symmetric_groups(10**8) == 1  # rows kept within SYMMETRIC_ROWS_BYTES
    assert 1 <= cpu.symmetric_groups(2 * 10**6) < cpu.SYMMETRIC_GROUPS
