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


# ---------------------------------------------------------------------------- reprojection (explicit, opt-in)
R_WGS84 = 6378137.0


def _mercator(lon, lat):
    """EPSG:3857 (spherical Web Mercator) in closed form, metres."""
    lon, lat = np.radians(lon), np.radians(lat)
    return np.column_stack([R_WGS84 * lon, R_WGS84 * np.log(np.tan(np.pi / 4 + lat / 2))])


def test_reproject_points_known_coordinates_to_micrometres():
    lonlat = np.array([[1.0, 1.0], [-73.98, 40.75], [151.2, -33.87], [0.0, 0.0], [15.0, 60.0]])
    got = hp.kde.reproject_points(lonlat, "EPSG:4326", "EPSG:3857")
    np.testing.assert_allclose(got, _mercator(lonlat[:, 0], lonlat[:, 1]), rtol=0, atol=1e-6)
    assert abs(got[0, 0] - 111319.49079327357) < 1e-6  # x = R pi / 180 (lon, lat order kept)
    # UTM 33N: the central meridian at the equator is the false easting, exactly
    utm = hp.kde.reproject_points([[15.0, 0.0]], 4326, rasterio.crs.CRS.from_epsg(32633))
    np.testing.assert_allclose(utm, [[500000.0, 0.0]], rtol=0, atol=1e-6)
    back = hp.kde.reproject_points(got, "EPSG:3857", "EPSG:4326")
    np.testing.assert_allclose(back, lonlat, rtol=0, atol=1e-9)
    assert hp.kde.reproject_points(np.zeros((0, 2)), 4326, 3857).shape == (0, 2)


def test_reproject_points_bad_input_names_the_argument():
    with pytest.raises(ValueError, match=r"src_crs='EPSG:99999999' is not a known coordinate reference system"):
        hp.kde.reproject_points([[1.0, 1.0]], "EPSG:99999999", "EPSG:3857")
    with pytest.raises(ValueError, match=r"dst_crs='nonsense' is not a known"):
        hp.kde.reproject_points([[1.0, 1.0]], "EPSG:4326", "nonsense")
    with pytest.raises(ValueError, match="src_crs is required"):
        hp.kde.reproject_points([[1.0, 1.0]], None, "EPSG:3857")
    with pytest.raises(ValueError, match="dst_crs is required"):
        hp.kde.reproject_points([[1.0, 1.0]], "EPSG:4326", None)
    with pytest.raises(TypeError, match="src_crs must be a CRS"):
        hp.kde.reproject_points([[1.0, 1.0]], 4326.5, "EPSG:3857")
    with pytest.raises(ValueError, match=r"points\[1\] = \(0.0, 95.0\) cannot be reprojected from EPSG:4326 to EPSG:3857"):
        hp.kde.reproject_points([[1.0, 1.0], [0.0, 95.0]], "EPSG:4326", "EPSG:3857")


def _utm_mask_tif(path):
    """A 60 x 80 cell (100 m) UTM 33N raster near (15 E, 45 N) holding a disc and a square hole."""
    rows, cols, cs = 60, 80, 100.0
    x0, ytop = 500000.0, 4990000.0
    yy, xx = np.mgrid[0:rows, 0:cols]
    m = ((xx - 40) ** 2 + (yy - 30) ** 2 < 27 ** 2) & ~((abs(xx - 40) < 6) & (abs(yy - 30) < 6))
    _write_tif(path, m.astype(float), from_origin(x0, ytop, cs, cs))
    return m, x0, ytop - rows * cs, cs


def test_window_to_crs_and_back_keeps_the_mask_within_one_cell(tmp_path):
    m, x0, y0, cs = _utm_mask_tif(tmp_path / "utm.tif")
    w = Window.from_geotiff(tmp_path / "utm.tif")
    g = w.to_crs("EPSG:4326")
    assert g.crs.to_epsg() == 4326 and g.crs.is_geographic
    assert abs(g.cell_size - cs / 111_000) < 0.3 * cs / 111_000  # ~0.0009 degrees for 100 m
    # the disc's centre cell maps to its lon/lat (the hole is around it: look beside it)
    c_lonlat = hp.kde.reproject_points([[x0 + 20.5 * cs, y0 + 29.5 * cs]], w.crs, "EPSG:4326")
    assert g.contains(c_lonlat)[0]
    assert not g.contains(hp.kde.reproject_points([[x0 + 40.5 * cs, y0 + 29.5 * cs]], w.crs, "EPSG:4326"))[0]
    back = g.to_crs(w.crs, cell_size=cs)
    assert back.crs == w.crs and back.cell_size == cs
    # compare on the original grid: every original cell centre, classified by the round trip
    centres = np.column_stack([x0 + (np.arange(80)[None, :] + 0.5 + 0 * np.arange(60)[:, None]).ravel() * cs,
                               y0 + (60 - 1 - np.arange(60)[:, None] + 0.5 + 0 * np.arange(80)[None, :]).ravel() * cs])
    rt = back.contains(centres).reshape(60, 80)
    diff = rt != m
    assert diff.mean() < 0.08  # only boundary cells may flip
    from scipy.ndimage import binary_dilation, binary_erosion

    boundary = binary_dilation(m) & ~binary_erosion(m)  # cells within one cell of the boundary
    assert not (diff & ~binary_dilation(boundary)).any()
    assert abs(back.area - w.area) / w.area < 0.03


def test_from_geotiff_crs_reprojects_and_refuses_files_without_crs(tmp_path):
    _utm_mask_tif(tmp_path / "utm.tif")
    w = Window.from_geotiff(tmp_path / "utm.tif")
    g = Window.from_geotiff(tmp_path / "utm.tif", crs="EPSG:4326")
    np.testing.assert_array_equal(g.mask, w.to_crs("EPSG:4326").mask)
    g2 = Window.from_geotiff(tmp_path / "utm.tif", crs=3857, cell_size=150.0)
    assert g2.cell_size == 150.0 and g2.crs.to_epsg() == 3857
    # Web Mercator stretches by 1/cos(45 deg): the area in EPSG:3857 units is ~2x the true area
    assert abs(g2.area / w.area - 1 / np.cos(np.radians(45.0)) ** 2) < 0.06
    with pytest.raises(ValueError, match=r"crs='EPSG:0' is not a known coordinate reference system"):
        Window.from_geotiff(tmp_path / "utm.tif", crs="EPSG:0")
    with pytest.raises(ValueError, match="cell_size= is only used with crs="):
        Window.from_geotiff(tmp_path / "utm.tif", cell_size=10.0)
    p = tmp_path / "nocrs.tif"
    _write_tif(p, np.ones((3, 3)), from_origin(0.0, 3.0, 1.0, 1.0), crs=None)
    with pytest.warns(UserWarning, match="no CRS"), \
            pytest.raises(ValueError, match=r"nocrs\.tif has no CRS, so it cannot be reprojected to crs=.*source_crs="):
        Window.from_geotiff(p, crs="EPSG:3857")
    # source_crs= names the coordinates of a file without CRS (no warning then)
    p2 = tmp_path / "nocrs_utm.tif"
    _write_tif(p2, np.ones((3, 3)), from_origin(500000.0, 4990300.0, 100.0, 100.0), crs=None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ws = Window.from_geotiff(p2, source_crs="EPSG:32633")
    assert ws.crs.to_epsg() == 32633
    with pytest.raises(ValueError, match=r"source_crs=EPSG:4326 contradicts the file's own CRS \(EPSG:32633\)"):
        Window.from_geotiff(tmp_path / "utm.tif", source_crs=4326)
    with pytest.raises(ValueError, match=r"the window has no CRS, so it cannot be reprojected"):
        Window.rectangle(0, 1, 0, 1, 0.1).to_crs("EPSG:3857")


def test_from_vector_crs_reprojects_the_polygon(tmp_path):
    # a 2 x 1 degree lon/lat rectangle at 45 N, reprojected to UTM 33N and rasterised at 1 km
    ring = [[14.0, 44.5], [16.0, 44.5], [16.0, 45.5], [14.0, 45.5], [14.0, 44.5]]
    p = _geojson(tmp_path / "ll.geojson", [[ring]], crs="EPSG:4326")
    w = Window.from_vector(p, 1000.0, crs="EPSG:32633")
    assert w.crs.to_epsg() == 32633 and w.cell_size == 1000.0
    # spherical estimate of the area: R^2 * dlon * (sin lat1 - sin lat0), within 1% (ellipsoid, raster)
    R = 6371008.8
    area = R**2 * np.radians(2.0) * (np.sin(np.radians(45.5)) - np.sin(np.radians(44.5)))
    assert abs(w.area / area - 1) < 0.01
    corners = hp.kde.reproject_points([[14.05, 44.55], [15.95, 45.45], [15.0, 45.0]], 4326, 32633)
    assert w.contains(corners).all()
    assert not w.contains(hp.kde.reproject_points([[13.95, 45.0], [15.0, 45.55]], 4326, 32633)).any()
    # the edges are densified: the top edge (a parallel) is curved in UTM, the centre of it bulges
    top_mid = hp.kde.reproject_points([[15.0, 45.49]], 4326, 32633)
    assert w.contains(top_mid)[0]
    # GeoJSON without a crs member: crs= needs source_crs=
    q = _geojson(tmp_path / "nocrs.geojson", [[ring]])
    with pytest.raises(ValueError, match=r"nocrs\.geojson has no CRS.*source_crs="):
        Window.from_vector(q, 1000.0, crs="EPSG:32633")
    w2 = Window.from_vector(q, 1000.0, crs="EPSG:32633", source_crs="EPSG:4326")
    np.testing.assert_array_equal(w2.mask, w.mask)
    with pytest.raises(ValueError, match=r"crs='EPSG:nope' is not a known"):
        Window.from_vector(p, 1000.0, crs="EPSG:nope")


def test_mismatched_points_crs_is_refused_naming_both_and_the_fix():
    wp = Window(np.ones((10, 10), bool), 500000.0, 4980000.0, 100.0, crs=rasterio.crs.CRS.from_epsg(32633))
    rng = np.random.default_rng(4)
    lonlat = hp.kde.reproject_points(rng.uniform([500100, 4980100], [500900, 4980900], (20, 2)), 32633, 4326)
    pts = hp.kde.reproject_points(lonlat, "EPSG:4326", wp.crs)
    assert wp.contains(pts).all()
    for call in (lambda crs: hp.kde.fit(pts, wp, method="fixed", bandwidth=200.0, progress=False, points_crs=crs),
                 lambda crs: hp.kde.relative_risk(pts[:10], pts[10:], wp, bandwidth=200.0, progress=False, points_crs=crs),
                 lambda crs: hp.kde.spacetime(pts, np.arange(20.0), wp, h=200.0, points_crs=crs)):
        with pytest.raises(ValueError, match=r"points_crs=EPSG:4326 is not the window's CRS \(EPSG:32633\).*"
                                             r"never reprojected silently.*hp\.kde\.reproject_points"):
            call("EPSG:4326")
        with pytest.raises(ValueError, match=r"points_crs='EPSG:123456789' is not a known coordinate reference system"):
            call("EPSG:123456789")
        call("EPSG:32633")  # the same CRS is accepted
    f = hp.kde.fit(pts, wp, method="fixed", bandwidth=200.0, progress=False, points_crs=32633)
    assert f.density_surface().crs == wp.crs


def test_bandwidth_search_refused_on_geographic_crs():
    w = _geographic_window()
    rng = np.random.default_rng(5)
    cases = rng.uniform([10.01, 50.01], [10.09, 50.09], (15, 2))
    controls = rng.uniform([10.01, 50.01], [10.09, 50.09], (25, 2))
    msg = r"needs a projected CRS, but the window's CRS \(EPSG:4326\) is geographic.*reproject_points.*metres"
    for method in ("adaptive", "abramson", "cv", "rule-of-thumb"):
        with pytest.raises(ValueError, match=rf"method='{method}'.*{msg}"):
            hp.kde.fit(cases, w, method=method, progress=False)
    for sel in ("oversmoothing", "lscv", "diggle", "cv", "rule-of-thumb"):
        with pytest.raises(ValueError, match=rf"bandwidth='{sel}'.*{msg}"):
            hp.kde.relative_risk(cases, controls, w, bandwidth=sel, progress=False)
    with pytest.raises(ValueError, match=rf"bandwidth='brunsdon'.*{msg}"):
        hp.kde.relative_risk(cases, controls, w, method="adaptive", bandwidth="brunsdon", progress=False)
    with pytest.raises(ValueError, match=rf"h='oversmoothing'.*{msg}"):
        hp.kde.spacetime(cases, np.arange(15.0), w, h="oversmoothing")
    with pytest.raises(ValueError, match=rf"diggle_bandwidth.*{msg}"):
        hp.kde.diggle_bandwidth(cases, w)
    # default window from geographic points: points_crs makes it geographic, so it is refused too
    with pytest.raises(ValueError, match=msg):
        hp.kde.fit(cases, method="adaptive", progress=False, points_crs="EPSG:4326")
    # after reprojection the search runs, and the surface carries the projected CRS
    wu = w.to_crs("EPSG:32632", cell_size=100.0)
    f = hp.kde.fit(hp.kde.reproject_points(cases, w.crs, wu.crs), wu, method="rule-of-thumb", progress=False)
    assert 100.0 < f.h < 10000.0 and f.density_surface().crs.to_epsg() == 32632


def test_cli_crs_options_check_reproject_and_refuse(tmp_path, capsys):
    """--points-crs is checked against the window (refused naming both CRSs), --reproject-points moves
    the points into the window's CRS, --window-crs reprojects a GeoTIFF window."""
    from hphawkes_py.cli import main

    tif = tmp_path / "utm.tif"
    m, x0, y0, cs = _utm_mask_tif(tif)
    rng = np.random.default_rng(9)
    # an annulus well inside the disc (radius 27 cells) and outside its hole (half-width 6 cells), so the
    # points stay inside after a nearest-neighbour reprojection of the mask
    r = cs * rng.uniform(10, 22, 60)
    a = rng.uniform(0, 2 * np.pi, 60)
    utm = np.column_stack([x0 + 40 * cs + r * np.cos(a), y0 + 30 * cs + r * np.sin(a)])
    assert Window.from_geotiff(tif).contains(utm).all()
    lonlat = hp.kde.reproject_points(utm, 32633, 4326)
    csv = tmp_path / "lonlat.csv"
    np.savetxt(csv, lonlat, delimiter=",", header="lon,lat", comments="", fmt="%.12f")
    base = ["kde", str(csv), "--window", str(tif), "--method", "fixed", "--bandwidth", "300", "--backend", "cpu",
            "--no-png", "--quiet", "--points-crs", "EPSG:4326"]
    assert main(base + ["--out", str(tmp_path / "o1")]) == 2
    err = capsys.readouterr().err
    assert "EPSG:4326" in err and "32633" in err and "reproject" in err
    assert main(base + ["--reproject-points", "--out", str(tmp_path / "o2")]) == 0
    d = json.loads((tmp_path / "o2" / "fit.json").read_text())
    assert "32633" in d["crs"]
    assert main(base + ["--reproject-points", "--window-crs", "EPSG:3857", "--out", str(tmp_path / "o3")]) == 0
    d3 = json.loads((tmp_path / "o3" / "fit.json").read_text())
    assert "3857" in d3["crs"]
    capsys.readouterr()
    assert main(["kde", str(csv), "--rectangle", "0", "1", "0", "1", "--cell-size", "0.1", "--window-crs",
                 "EPSG:3857", "--method", "fixed", "--bandwidth", "1", "--out", str(tmp_path / "o4")]) == 2
    assert "--window-crs reprojects" in capsys.readouterr().err
    assert main(["kde", str(csv), "--rectangle", "0", "1", "0", "1", "--cell-size", "0.1", "--reproject-points",
                 "--method", "fixed", "--bandwidth", "1", "--out", str(tmp_path / "o5")]) == 2
    assert "--reproject-points needs" in capsys.readouterr().err
