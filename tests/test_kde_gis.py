"""GeoTIFF / vector-polygon windows and the geographic-CRS bandwidth check (issue 15 section 5)."""
import builtins
import json
import pickle
import warnings

import numpy as np
import pytest

import hphawkes_py as hp
from hphawkes_py.kde import Raster, Window

rasterio = pytest.importorskip("rasterio")
shapely = pytest.importorskip("shapely")
from rasterio.transform import Affine  # noqa: E402


def from_origin(west, north, xsize, ysize):
    return Affine(xsize, 0.0, west, 0.0, -ysize, north)


def _write_tif(path, values, transform, crs="EPSG:32633", nodata=-9999.0, dtype="float64"):
    v = np.asarray(values)
    with rasterio.open(path, "w", driver="GTiff", height=v.shape[0], width=v.shape[1], count=1, dtype=dtype,
                       crs=crs, transform=transform, nodata=nodata) as ds:
        ds.write(v.astype(dtype), 1)


def test_from_geotiff_mask_origin_cell_size_crs(tmp_path):
    vals = np.array([[1.0, -9999.0, 2.0], [0.0, 5.0, np.nan]])
    p = tmp_path / "m.tif"
    _write_tif(p, vals, from_origin(500.0, 2030.0, 10.0, 10.0))
    w = Window.from_geotiff(p)
    np.testing.assert_array_equal(w.mask, [[True, False, True], [False, True, False]])
    assert (w.x0, w.y0, w.cell_size) == (500.0, 2010.0, 10.0)
    assert w.crs.to_epsg() == 32633 and "EPSG:32633" in repr(w)
    w2 = pickle.loads(pickle.dumps(w))  # executors ship windows to workers
    assert w2.crs == w.crs and np.array_equal(w2.mask, w.mask)
    # cell (row 0, col 0) holds the point (505, 2025), the top-left cell centre
    assert w.contains([[505.0, 2025.0]])[0] and not w.contains([[515.0, 2025.0]])[0]


def test_raster_geotiff_round_trip_exact(tmp_path):
    p = tmp_path / "m.tif"
    mask = np.ones((4, 5))
    mask[0, 0] = 0
    _write_tif(p, mask, from_origin(100.0, 340.0, 0.5, 0.5))
    w = Window.from_geotiff(p)
    rng = np.random.default_rng(1)
    vals = np.where(w.mask, rng.random(w.shape) * 1e-3 + 1e-17, np.nan)
    r = Raster(vals, w.x0, w.y0, w.cell_size, crs=w.crs)
    out = tmp_path / "out.tif"
    r.to_geotiff(out)
    with rasterio.open(out) as ds:
        got = ds.read(1)
        assert ds.transform == from_origin(100.0, 340.0, 0.5, 0.5)
        assert ds.crs == w.crs
        nod = ds.nodata
    np.testing.assert_array_equal(np.where(got == nod, np.nan, got), vals)  # bit-exact
    w2 = Window.from_geotiff(out)
    np.testing.assert_array_equal(w2.mask, w.mask)
    assert (w2.x0, w2.y0, w2.cell_size, w2.crs) == (w.x0, w.y0, w.cell_size, w.crs)


def test_density_surface_carries_crs_to_geotiff(tmp_path):
    p = tmp_path / "m.tif"
    _write_tif(p, np.ones((20, 20)), from_origin(0.0, 20.0, 1.0, 1.0))
    w = Window.from_geotiff(p)
    pts = np.random.default_rng(0).uniform(2, 18, (30, 2))
    s = hp.kde.fit(pts, w, method="fixed", bandwidth=2.0, progress=False).density_surface()
    assert s.crs == w.crs
    s.to_geotiff(tmp_path / "s.tif")
    with rasterio.open(tmp_path / "s.tif") as ds:
        assert ds.crs.to_epsg() == 32633
        np.testing.assert_array_equal(ds.read(1), s.values)


@pytest.mark.parametrize("transform, what", [
    (Affine(1.0, 0.2, 0.0, 0.0, -1.0, 10.0), "rotated or sheared"),
    (Affine(1.0, 0.0, 0.0, 0.0, -2.0, 10.0), "not square"),
])
def test_bad_transforms_refused_naming_file(tmp_path, transform, what):
    p = tmp_path / "bad.tif"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # rasterio's NotGeoreferenced-style warnings
        _write_tif(p, np.ones((3, 3)), transform)
    with pytest.raises(ValueError, match=what) as e:
        Window.from_geotiff(p)
    assert "bad.tif" in str(e.value)


def test_geotiff_without_crs_warns_planar(tmp_path):
    p = tmp_path / "nocrs.tif"
    _write_tif(p, np.ones((3, 3)), from_origin(0.0, 3.0, 1.0, 1.0), crs=None)
    with pytest.warns(UserWarning, match="no CRS.*planar"):
        w = Window.from_geotiff(p)
    assert w.crs is None
    # no CRS: no unit check, any bandwidth goes
    pts = np.array([[0.5, 0.5], [1.5, 1.5], [2.5, 0.5]])
    hp.kde.fit(pts, w, method="fixed", bandwidth=1000.0, edge_correction=False, progress=False)


def test_empty_geotiff_window_refused(tmp_path):
    p = tmp_path / "empty.tif"
    _write_tif(p, np.zeros((3, 3)), from_origin(0.0, 3.0, 1.0, 1.0))
    with pytest.raises(ValueError, match="empty.tif.*empty"):
        Window.from_geotiff(p)


def _geojson(path, polys, crs=None):
    doc = {"type": "FeatureCollection",
           "features": [{"type": "Feature", "id": i, "properties": {}, "geometry": {"type": "Polygon", "coordinates": rings}}
                        for i, rings in enumerate(polys)]}
    if crs:
        doc["crs"] = {"type": "name", "properties": {"name": crs}}
    path.write_text(json.dumps(doc))
    return path


def test_from_vector_geojson_matches_from_polygon(tmp_path):
    outer = [[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]]
    hole = [[3, 3], [6, 3], [6, 6], [3, 6], [3, 3]]
    second = [[12, 0], [14, 0], [14, 2], [12, 2], [12, 0]]
    p = _geojson(tmp_path / "a.geojson", [[outer, hole], [second]], crs="EPSG:32633")
    w = Window.from_vector(p, 0.5)
    ref = Window.from_polygon([np.array(outer, float), np.array(hole, float), np.array(second, float)], 0.5)
    np.testing.assert_array_equal(w.mask, ref.mask)
    assert (w.x0, w.y0, w.cell_size) == (ref.x0, ref.y0, ref.cell_size)
    assert not w.contains([[4.5, 4.5]])[0] and w.contains([[1.0, 1.0]])[0] and w.contains([[13.6, 1.6]])[0] and not w.contains([[11.2, 1.0]])[0]
    assert w.crs.to_epsg() == 32633


def test_from_vector_overlapping_features_are_unioned(tmp_path):
    a = [[0, 0], [6, 0], [6, 6], [0, 6], [0, 0]]
    b = [[4, 4], [10, 4], [10, 10], [4, 10], [4, 4]]
    w = Window.from_vector(_geojson(tmp_path / "o.geojson", [[a], [b]]), 1.0)
    assert w.contains([[5.0, 5.0]])[0]  # the overlap is inside (not an even-odd hole)
    assert w.crs is None


def test_self_intersecting_polygon_refused_naming_file_and_feature(tmp_path):
    ok = [[0, 0], [4, 0], [4, 4], [0, 4], [0, 0]]
    bowtie = [[0, 0], [4, 4], [4, 0], [0, 4], [0, 0]]
    p = _geojson(tmp_path / "bow.geojson", [[ok], [bowtie]])
    with pytest.raises(ValueError, match=r"bow\.geojson.*feature 1.*Self-intersection") as e:
        Window.from_vector(p, 0.5)
    assert "not a valid polygon" in str(e.value)


def test_from_vector_bad_inputs(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.geojson"):
        Window.from_vector(tmp_path / "nope.geojson", 1.0)
    line = tmp_path / "line.geojson"
    line.write_text(json.dumps({"type": "Feature", "geometry": {"type": "LineString", "coordinates": [[0, 0], [1, 1]]}}))
    with pytest.raises(ValueError, match="line.geojson.*LineString"):
        Window.from_vector(line, 1.0)


def test_from_vector_shapefile_when_pyogrio_is_installed(tmp_path):
    pyogrio = pytest.importorskip("pyogrio")
    outer = [[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]]
    hole = [[3, 3], [6, 3], [6, 6], [3, 6], [3, 3]]
    geom = shapely.Polygon(outer, [hole])
    shp = tmp_path / "area.shp"
    pyogrio.raw.write(shp, np.array([shapely.to_wkb(geom)], dtype=object), [], [], geometry_type="Polygon",
                      crs="EPSG:32633", driver="ESRI Shapefile")
    w = Window.from_vector(shp, 0.5)
    ref = Window.from_vector(_geojson(tmp_path / "a.geojson", [[outer, hole]]), 0.5)
    np.testing.assert_array_equal(w.mask, ref.mask)
    assert (w.x0, w.y0, w.cell_size) == (ref.x0, ref.y0, ref.cell_size)
    assert w.crs.to_epsg() == 32633
    bowtie = shapely.Polygon([[0, 0], [4, 4], [4, 0], [0, 4], [0, 0]])
    bad = tmp_path / "bad.shp"
    pyogrio.raw.write(bad, np.array([shapely.to_wkb(geom), shapely.to_wkb(bowtie)], dtype=object), [], [],
                      geometry_type="Polygon", crs="EPSG:32633", driver="ESRI Shapefile")
    with pytest.raises(ValueError, match=r"bad\.shp.*feature 1.*Self-intersection"):
        Window.from_vector(bad, 0.5)


def _geographic_window():
    return Window(np.ones((10, 10), bool), 10.0, 50.0, 0.01, crs=rasterio.crs.CRS.from_epsg(4326))


def test_projected_bandwidth_on_geographic_crs_refused_in_fit_and_relative_risk():
    w = _geographic_window()
    rng = np.random.default_rng(2)
    cases = rng.uniform([10.01, 50.01], [10.09, 50.09], (10, 2))
    controls = rng.uniform([10.01, 50.01], [10.09, 50.09], (20, 2))
    with pytest.raises(ValueError, match=r"bandwidth=500.0 looks like projected units.*geographic"):
        hp.kde.fit(cases, w, method="fixed", bandwidth=500.0, progress=False)
    with pytest.raises(ValueError, match=r"bandwidth=500.0 looks like projected units.*geographic"):
        hp.kde.relative_risk(cases, controls, w, bandwidth=500.0, progress=False)
    with pytest.raises(ValueError, match=r"h=500.0 looks like projected units"):
        hp.kde.spacetime(cases, np.arange(10.0), w, h=500.0)
    # a bandwidth in degrees is accepted
    f = hp.kde.fit(cases, w, method="fixed", bandwidth=0.02, progress=False)
    assert f.h == 0.02
    hp.kde.relative_risk(cases, controls, w, bandwidth=0.02, progress=False)
    # the same numbers on a projected CRS are not checked
    wp = Window(np.ones((10, 10), bool), 10.0, 50.0, 0.01, crs=rasterio.crs.CRS.from_epsg(32633))
    hp.kde.fit(cases, wp, method="fixed", bandwidth=500.0, edge_correction=False, progress=False)


def test_missing_extra_raises_importerror_naming_pip(tmp_path, monkeypatch):
    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name.split(".")[0] in ("rasterio", "shapely"):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    import importlib

    monkeypatch.setattr(importlib, "import_module", lambda n, *a: fake_import(n))
    p = tmp_path / "x.tif"
    p.write_bytes(b"")
    with pytest.raises(ImportError, match=r"pip install 'hphawkes_py\[gis\]'"):
        Window.from_geotiff(p)
    g = _geojson(tmp_path / "a.geojson", [[[[0, 0], [1, 0], [1, 1], [0, 0]]]])
    with pytest.raises(ImportError, match=r"pip install 'hphawkes_py\[gis\]'"):
        Window.from_vector(g, 0.1)
    with pytest.raises(ImportError, match=r"pip install 'hphawkes_py\[gis\]'"):
        Raster(np.ones((2, 2)), 0.0, 0.0, 1.0).to_geotiff(tmp_path / "o.tif")


def test_cli_geotiff_and_polygon_windows(tmp_path, capsys):
    from hphawkes_py.cli import main

    tif = tmp_path / "w.tif"
    _write_tif(tif, np.ones((25, 25)), from_origin(0.0, 25.0, 1.0, 1.0))
    pts = np.random.default_rng(3).uniform(3, 22, (40, 2))
    csv = tmp_path / "p.csv"
    np.savetxt(csv, pts, delimiter=",", header="x,y", comments="")
    out = tmp_path / "o1"
    assert main(["kde", str(csv), "--window", str(tif), "--method", "fixed", "--bandwidth", "2", "--backend", "cpu",
                 "--no-png", "--quiet", "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["fit.json", "surface.asc", "surface.tif"]
    d = json.loads((out / "fit.json").read_text())
    assert d["geotiff_file"] == "surface.tif" and "32633" in d["crs"]
    with rasterio.open(out / "surface.tif") as ds:
        assert ds.crs.to_epsg() == 32633 and ds.transform == from_origin(0.0, 25.0, 1.0, 1.0)
    gj = _geojson(tmp_path / "w.geojson", [[[[0, 0], [25, 0], [25, 25], [0, 25], [0, 0]]]])
    base = ["kde", str(csv), "--window", str(gj), "--method", "fixed", "--bandwidth", "2", "--backend", "cpu",
            "--no-png", "--quiet"]
    assert main(base + ["--cell-size", "1", "--out", str(tmp_path / "o2")]) == 0
    capsys.readouterr()
    assert main(base + ["--out", str(tmp_path / "o3")]) == 2  # a polygon window needs --cell-size
    err = capsys.readouterr().err
    assert "needs --cell-size" in err and len(err.strip().splitlines()) == 1
    assert main(["kde", str(csv), "--window", str(tif), "--cell-size", "1", "--out", str(tmp_path / "o4")]) == 2
    assert "--cell-size is only used" in capsys.readouterr().err


def test_shapefile_without_a_reader_and_bad_band(tmp_path, monkeypatch):
    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name.split(".")[0] in ("pyogrio", "fiona"):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    shp = tmp_path / "a.shp"
    shp.write_bytes(b"")
    with monkeypatch.context() as m:
        m.setattr(builtins, "__import__", fake_import)
        with pytest.raises(ImportError, match=r"a\.shp.*pyogrio or fiona"):
            Window.from_vector(shp, 1.0)
    tif = tmp_path / "b.tif"
    _write_tif(tif, np.ones((3, 3)), from_origin(0.0, 3.0, 1.0, 1.0))
    for band in (0, 2, True, "1"):
        with pytest.raises(ValueError, match=r"b\.tif: band must be an integer in 1\.\.1"):
            Window.from_geotiff(tif, band=band)
