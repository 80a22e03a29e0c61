"""SaTScan's outputs from hp.scan results (issue 29): the .col/.gis/.rr/.llr tables with SaTScan 10.3's
column names (calculation/Output/*Writer.cpp) and values (against the result, and against SaTScan 10.3.2's
own .col.dbf values stored in hphawkes_py/data/scan/satscan_outputs), the main report's cluster blocks,
cluster geometry (GeoJSON, KML, Shapefile/GeoPackage), the folium map, run_prm(write_results=...) and
`hphawkes scan --out DIR`."""
from __future__ import annotations

import json
import math
import shutil
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest

import hphawkes_py as hp
from hphawkes_py.scan import geometry, outputs

SAT = hp.datasets.satscan_sample_path
OUT = hp.datasets.path("scan/satscan_outputs")


@pytest.fixture(scope="module")
def grave():
    g = hp.datasets.load_grave()
    return hp.scan.bernoulli(g[["x", "y"]].to_numpy(), g["case"], 1 - g["case"], n_replicates=19, seed=1,
                             backend="cpu", progress=False)


def _prm(path, **changes):
    """SaTScan's sample NHumbersideSpatialBernoulli.prm with values replaced (as tests/test_scan_satscan10.py)."""
    ch = {"PValueReportType": "1", "LaunchMapViewer": "n", "ControlFile": "", "PopulationFile": "", **changes}
    lines = []
    for line in SAT("NHumbersideSpatialBernoulli.prm").read_text().splitlines():
        key = line.split("=", 1)[0]
        if "=" in line and not line.startswith(";") and key in ch:
            line = f"{key}={ch.pop(key)}"
        lines.append(line)
    assert not ch, sorted(ch)
    path.write_text("\n".join(lines) + "\n")
    return path


def _satscan_rows(file, section):
    """SaTScan 10.3.2's cluster rows of one [section] of a stored table (see the file's header)."""
    rows, on = [], False
    for line in (OUT / file).read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        if line.startswith("["):
            on = line == f"[{section}]"
            continue
        if on:
            f = [x.strip() for x in line.split("|")]
            rows.append(f)
    assert rows
    return rows


def _copy(tmp_path, *names):
    for n in names:
        shutil.copy(SAT(n), tmp_path / n)


# ---- column names: SaTScan 10.3's writers ----------------------------------------------------------

def test_col_gis_rr_llr_columns_are_satscans_bernoulli_cartesian(grave):
    # ClusterInformationWriter::DefineClusterInformationFields, Bernoulli, Cartesian, circles, one data set
    assert list(outputs.cluster_table(grave).columns) == [
        "CLUSTER", "LOC_ID", "X", "Y", "RADIUS", "SPAN", "START_DATE", "END_DATE", "NUMBER_LOC", "LLR", "P_VALUE",
        "OBSERVED", "EXPECTED", "ODE", "REL_RISK", "POPULATION", "GINI_CLUST"]
    assert list(outputs.cluster_table(grave, gumbel=True).columns)[10:12] == ["P_VALUE", "GBL_PVALUE"]
    # LocationInformationWriter::DefineFields
    assert list(outputs.location_table(grave).columns) == [
        "LOC_ID", "CLUSTER", "P_VALUE", "CLU_OBS", "CLU_EXP", "CLU_ODE", "CLU_RR", "CLU_POP", "LOC_OBS", "LOC_EXP",
        "LOC_ODE", "LOC_RR", "LOC_POP", "LOC_X", "LOC_Y", "GINI_CLUST"]
    # LocationRiskEstimateWriter::DefineFields, LoglikelihoodRatioWriter
    assert list(outputs.risk_table(grave).columns) == ["LOC_ID", "OBSERVED", "EXPECTED", "ODE", "REL_RISK"]
    assert list(outputs.llr_table(grave).columns) == ["LLR"]


@pytest.fixture(scope="module")
def nycfever(tmp_path_factory):
    return hp.scan.run_prm(SAT("NYCfever.prm"), n_replicates=19, seed=1, backend="cpu", progress=False)


def test_columns_space_time_permutation_latlong(nycfever):
    assert list(outputs.cluster_table(nycfever).columns) == [
        "CLUSTER", "LOC_ID", "LATITUDE", "LONGITUDE", "RADIUS", "SPAN", "START_DATE", "END_DATE", "NUMBER_LOC",
        "TEST_STAT", "P_VALUE", "OBSERVED", "EXPECTED", "ODE", "GINI_CLUST"]
    assert list(outputs.llr_table(nycfever).columns) == ["TST_STAT"]
    gis = outputs.location_table(nycfever)
    # the location-level counts of a space-time cluster (inside its window) are not held: left out, not made up
    assert list(gis.columns) == ["LOC_ID", "CLUSTER", "P_VALUE", "CLU_OBS", "CLU_EXP", "CLU_ODE", "LOC_LAT",
                                "LOC_LONG", "GINI_CLUST"]
    with pytest.raises(ValueError, match="space-time permutation.*time window"):
        outputs.risk_table(nycfever)


# ---- values: against the result --------------------------------------------------------------------

def test_values_equal_the_result(grave):
    col, cl = outputs.cluster_table(grave), grave.clusters
    assert len(col) == len(cl) >= 2
    np.testing.assert_array_equal(col.CLUSTER, np.arange(1, len(cl) + 1))
    np.testing.assert_array_equal(col.OBSERVED, cl.cases)
    np.testing.assert_array_equal(col.EXPECTED, cl.expected)
    np.testing.assert_array_equal(col.LLR, cl.log_likelihood_ratio)
    np.testing.assert_array_equal(col.P_VALUE, cl.p_value)
    np.testing.assert_array_equal(col.REL_RISK, cl.relative_risk)
    np.testing.assert_array_equal(col.RADIUS, cl.radius)
    np.testing.assert_array_equal(col.NUMBER_LOC, cl.n_locations)
    assert list(col.LOC_ID) == [str(ids[0]) for ids in cl.location_ids]
    gis = outputs.location_table(grave)
    for k, ids in enumerate(cl.location_ids):
        part = gis[gis.CLUSTER == k + 1]
        assert list(part.LOC_ID) == [str(i) for i in ids]
        assert part.LOC_OBS.sum() == cl.cases.iloc[k]          # the cluster's cases are its locations' cases
        np.testing.assert_allclose(part.LOC_EXP.sum(), cl.expected.iloc[k], rtol=1e-12)
    rr = outputs.risk_table(grave)
    assert rr.OBSERVED.sum() == grave.n_cases and len(rr) == grave.n_locations
    # SaTScan's order: the ids sorted as text (its .rr.txt of the NY data starts 1, 10, 100, 101, ...)
    assert list(rr.LOC_ID) == sorted(str(i) for i in range(143)) and list(rr.LOC_ID[:3]) == ["0", "1", "10"]
    # SaTScan's location relative risk (O/E) / ((C-O)/(C-E)) for a location with one case
    row = rr[rr.OBSERVED == 1].iloc[0]
    C, e = grave.n_cases, row.EXPECTED
    assert row.REL_RISK == pytest.approx((1 / e) / ((C - 1) / (C - e)), rel=1e-12)
    np.testing.assert_array_equal(outputs.llr_table(grave).LLR, grave.null_llr)


# ---- values: against SaTScan 10.3.2's own .col.dbf -------------------------------------------------

def test_cluster_table_equals_satscan_poisson(tmp_path):
    _copy(tmp_path, "ny_leukemia.cas", "ny_leukemia.pop", "ny_leukemia.geo")
    p = _prm(tmp_path / "a.prm", CaseFile="ny_leukemia.cas", PopulationFile="ny_leukemia.pop",
             CoordinatesFile="ny_leukemia.geo", ModelType="0", ScanAreas="3", MaxSpatialSizeInPopulationAtRisk="10",
             PrecisionCaseTimes="1", StartDate="2000/1/1", EndDate="2000/12/31", ResultsFile="pois_both.txt")
    res = hp.scan.run_prm(p, n_replicates=19, seed=1, backend="cpu", progress=False)
    col = outputs.cluster_table(res, study_period=("2000/1/1", "2000/12/31"))
    sat = _satscan_rows("satscan10_nycfever_ny_leukemia.txt", "poisson both")
    n = min(len(col), len(sat))
    assert n >= 3
    for k in range(n):
        ids, pop, cases, exp, llr = sat[k][1].split(), float(sat[k][2]), int(sat[k][3]), float(sat[k][4]), \
            float(sat[k][5])
        assert col.LOC_ID[k] == ids[0] and col.NUMBER_LOC[k] == len(ids)
        assert col.OBSERVED[k] == cases and col.POPULATION[k] == pop
        assert col.EXPECTED[k] == pytest.approx(exp, abs=1e-9)
        assert col.LLR[k] == pytest.approx(llr, abs=1e-9)
        assert (col.START_DATE[k], col.END_DATE[k]) == ("2000/1/1", "2000/12/31")


def test_cluster_table_equals_satscan_ellipse_and_space_time(tmp_path):
    _copy(tmp_path, "NHumberside.cas", "NHumberside.ctl", "NHumberside.geo")
    p = _prm(tmp_path / "e.prm", CaseFile="NHumberside.cas", ControlFile="NHumberside.ctl",
             CoordinatesFile="NHumberside.geo", SpatialWindowShapeType="1", NonCompactnessPenalty="1")
    res = hp.scan.run_prm(p, n_replicates=19, seed=1, backend="cpu", progress=False)
    col = outputs.cluster_table(res)
    assert list(col.columns[4:8]) == ["E_MINOR", "E_MAJOR", "E_ANGLE", "E_SHAPE"]
    assert list(col.columns[12:14]) == ["LLR", "TEST_STAT"]
    assert list(outputs.llr_table(res, penalty="medium").columns) == ["TST_STAT"]
    sat = _satscan_rows("satscan10_nhumberside_bernoulli.txt", "ellipse medium")
    assert min(len(col), len(sat)) >= 2
    for k in range(min(len(col), len(sat), 3)):
        f = [float(x) for x in sat[k][2:]]
        assert col.LOC_ID[k] == sat[k][1].split()[0]
        np.testing.assert_allclose(col.loc[k, ["E_MINOR", "E_MAJOR", "E_ANGLE", "E_SHAPE"]].to_numpy(float), f[:4],
                                   atol=1e-6)
        assert col.POPULATION[k] == f[4] and col.OBSERVED[k] == f[5]
        np.testing.assert_allclose([col.EXPECTED[k], col.LLR[k], col.TEST_STAT[k]], f[6:9], atol=1e-6)
    # space-time permutation, retrospective: the time frame written as SaTScan writes it (no zero padding)
    _copy(tmp_path, "NYCfever.cas", "NYCfever.geo")
    q = _prm(tmp_path / "s.prm", CaseFile="NYCfever.cas", CoordinatesFile="NYCfever.geo", CoordinatesType="1",
             PrecisionCaseTimes="3", StartDate="2001/11/1", EndDate="2001/11/24", AnalysisType="3", ModelType="2",
             UseDistanceFromCenterOption="y", MaxSpatialSizeInDistanceFromCenter="3",
             MaxTemporalSizeInterpretation="1", MaxTemporalSize="7")
    res = hp.scan.run_prm(q, n_replicates=19, seed=1, backend="cpu", progress=False)
    col = outputs.cluster_table(res)
    sat = _satscan_rows("satscan10_nycfever_ny_leukemia.txt", "permutation retrospective")
    assert len(col) >= 2
    for k in range(min(len(col), 3)):
        assert (col.START_DATE[k], col.END_DATE[k]) == (sat[k][2], sat[k][3])
        assert col.OBSERVED[k] == int(sat[k][5])
        assert col.TEST_STAT[k] == pytest.approx(float(sat[k][7]), abs=1e-9)


# ---- report ------------------------------------------------------------------------------------------

def test_report_cluster_blocks_as_satscan(grave):
    txt = outputs.report_text(grave, study_period=("2000/1/1", "2000/12/31"))
    block = txt[txt.index("1.Location IDs included.: "):].split("\n\n")[0].splitlines()
    labels = [ln[:26] for ln in block if ln[2:3] != " " or ln.startswith("1.")]
    assert labels[:3] == ["1.Location IDs included.: ", "  Coordinates / radius..: ", "  Span..................: "]
    # the id list wraps at column 95, continuation lines start at the data column (22 + 2 + 2)
    assert all(len(ln) <= 95 for ln in block)
    assert block[1].startswith(" " * 26) and not block[1].startswith(" " * 27)
    cl = grave.clusters.iloc[0]
    assert f"  Log likelihood ratio..: {cl.log_likelihood_ratio:f}" in block
    assert f"  P-value...............: {cl.p_value:.2f}" in block          # 19 replicates: 2 decimals
    assert "  Time frame............: 2000/1/1 to 2000/12/31" in block
    assert f"  Number of cases.......: {cl.cases}" in block
    assert outputs._significant(0.0123) == "0.012" and outputs._significant(3.14159) == "3.14"


# ---- geometry ------------------------------------------------------------------------------------------

def test_geojson_valid_and_circle_areas(grave):
    fc = json.loads(json.dumps(geometry.to_geojson(grave, n_vertices=64)))
    assert fc["type"] == "FeatureCollection" and len(fc["features"]) == len(grave.clusters)
    shapely = pytest.importorskip("shapely")
    n = 64
    for f, r in zip(fc["features"], grave.clusters.radius):
        ring = f["geometry"]["coordinates"][0]
        assert ring[0] == ring[-1] and len(ring) == n + 1
        area = shapely.Polygon(ring).area
        # the inscribed regular 64-gon: n/2 r^2 sin(2 pi / n), 0.16 % below pi r^2
        assert area == pytest.approx(n / 2 * r * r * math.sin(2 * math.pi / n), rel=1e-9)
        assert area < math.pi * r * r and area > math.pi * r * r * (1 - 2e-3)


def test_ellipse_polygon_area_and_orientation(tmp_path):
    shapely = pytest.importorskip("shapely")
    _copy(tmp_path, "NHumberside.cas", "NHumberside.ctl", "NHumberside.geo")
    p = _prm(tmp_path / "e.prm", CaseFile="NHumberside.cas", ControlFile="NHumberside.ctl",
             CoordinatesFile="NHumberside.geo", SpatialWindowShapeType="1", NonCompactnessPenalty="0")
    res = hp.scan.run_prm(p, n_replicates=9, seed=1, backend="cpu", progress=False)
    cl = res.clusters.iloc[0]
    assert cl["shape"] > 1
    props, ring = geometry.cluster_polygons(res, n_vertices=256)[0]
    a, b = cl.semimajor_axis, cl.radius
    assert shapely.Polygon(ring).area == pytest.approx(math.pi * a * b, rel=1e-3)
    # the first vertex lies on the major axis, at the angle the result reports
    dx, dy = ring[0][0] - cl.x, ring[0][1] - cl.y
    assert math.hypot(dx, dy) == pytest.approx(a, rel=1e-12)
    assert math.degrees(math.atan2(dy, dx)) == pytest.approx(cl.angle, abs=1e-9)


def test_latlong_geodesic_circle_and_kml(nycfever, tmp_path):
    from hphawkes_py.scan.locations import EARTH_RADIUS_KM

    fc = geometry.to_geojson(nycfever)
    for f, (_, cl) in zip(fc["features"], nycfever.clusters.iterrows()):
        if cl.radius == 0:
            continue
        lon, lat = np.radians(np.array(f["geometry"]["coordinates"][0])).T
        lat0, lon0 = math.radians(cl.x), math.radians(cl.y)
        h = np.sin((lat - lat0) / 2) ** 2 + np.cos(lat) * math.cos(lat0) * np.sin((lon - lon0) / 2) ** 2
        np.testing.assert_allclose(2 * EARTH_RADIUS_KM * np.arcsin(np.sqrt(h)), cl.radius, rtol=1e-9)
    kml = geometry.to_kml(nycfever)
    root = ET.fromstring(kml.encode())
    ns = {"k": "http://www.opengis.net/kml/2.2"}
    marks = [m for m in root.findall(".//k:Placemark", ns) if m.find(".//k:Polygon", ns) is not None]
    assert len(marks) == len(nycfever.clusters)
    # SaTScan's IncludeClusterLocationsKML: each cluster's locations as points, at their coordinates
    folders = root.findall(".//k:Folder", ns)
    assert [len(f.findall("k:Placemark", ns)) for f in folders] == list(nycfever.clusters.n_locations)
    p0 = folders[0].find("k:Placemark", ns)
    lon, lat, _ = map(float, p0.find(".//k:coordinates", ns).text.split(","))
    assert p0.find("k:name", ns).text == str(nycfever.clusters.location_ids[0][0])
    assert (lat, lon) == pytest.approx((nycfever.clusters.x[0], nycfever.clusters.y[0]), abs=1e-7)
    assert geometry.to_kml(nycfever, locations=False).count("<Point>") == 0
    first = marks[0].find(".//k:coordinates", ns).text.split()
    assert len(first) == 65 and float(first[0].split(",")[1]) == pytest.approx(nycfever.clusters.x[0], abs=0.05)
    assert "START_DATE: " in marks[0].find("k:description", ns).text
    kmz = geometry.write_kml(nycfever, tmp_path / "c.kmz")
    import zipfile

    assert zipfile.ZipFile(kmz).read("doc.kml").decode() == kml


def test_kml_refuses_cartesian(grave):
    with pytest.raises(ValueError, match="KML is longitude/latitude.*Cartesian"):
        geometry.to_kml(grave)
    with pytest.raises(ValueError, match="n_vertices must be a whole number >= 8"):
        geometry.to_geojson(grave, n_vertices=3)


def test_shapefile_geopackage_and_dbase(grave, tmp_path):
    pyogrio = pytest.importorskip("pyogrio")
    pytest.importorskip("shapely")
    files = outputs.write_satscan(grave, tmp_path / "g.txt", dbase=True, geometry=("shp", "gpkg"))
    names = [f.name for f in files]
    assert names == ["g.txt", "g.col.csv", "g.gis.csv", "g.gis.dbf", "g.rr.csv", "g.rr.dbf", "g.llr.csv",
                     "g.llr.dbf", "g.col.shp", "g.col.dbf", "g.gpkg"]
    # SaTScan's shapefile carries the cluster table as its .col.dbf
    meta, _, geom, fields = pyogrio.raw.read(str(tmp_path / "g.col.shp"))
    col = pd.read_csv(tmp_path / "g.col.csv", keep_default_na=False)
    assert list(meta["fields"]) == list(col.columns) and len(geom) == len(grave.clusters)
    np.testing.assert_allclose(fields[list(meta["fields"]).index("LLR")], grave.clusters.log_likelihood_ratio)
    meta, _, _, fields = pyogrio.raw.read(str(tmp_path / "g.rr.dbf"))
    assert list(meta["fields"]) == ["LOC_ID", "OBSERVED", "EXPECTED", "ODE", "REL_RISK"]
    assert int(fields[1].sum()) == grave.n_cases
    meta, _, geom, _ = pyogrio.raw.read(str(tmp_path / "g.gpkg"))
    assert len(geom) == len(grave.clusters)


# ---- HTML maps -------------------------------------------------------------------------------------

def test_svg_map_is_self_contained_with_popups(nycfever):
    from hphawkes_py.scan import cluster_map

    page = cluster_map(nycfever)
    assert page.count('<polygon class="cluster') == len(nycfever.clusters)
    assert page.count("<circle ") == nycfever.n_locations
    # nothing is fetched: no external script, style sheet or image
    assert "src=" not in page and "href=" not in page and "@import" not in page
    data = json.loads(page.split('id="cluster-data">')[1].split("</script>")[0])
    cl = nycfever.clusters.iloc[0]
    assert dict(data[0])["Time window"] == f"{outputs._date(cl.start)} to {outputs._date(cl.end)}"
    assert dict(data[0])["Log likelihood ratio"] == f"{cl.log_likelihood_ratio:.6f}"
    with pytest.raises(ValueError, match="engine must be 'svg'"):
        cluster_map(nycfever, engine="leaflet")


def _screenshot(page, tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("no chromium")
    import subprocess

    import matplotlib.image

    (tmp_path / "m.html").write_text(page)
    png = tmp_path / "m.png"
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", f"--screenshot={png}",
                    "--window-size=960,720", (tmp_path / "m.html").as_uri()], check=True, timeout=120,
                   capture_output=True)
    return matplotlib.image.imread(str(png))[..., :3]


def test_svg_map_renders_the_clusters_offline_in_chromium(grave, tmp_path):
    """A headless-Chromium screenshot of the page (opened from a file, nothing else to load) shows the
    cluster outlines in their colours; the same page without clusters shows none of them."""
    from hphawkes_py.scan import cluster_map

    def coloured(img):
        red = np.all(np.abs(img - np.array([0xd7, 0x19, 0x1c]) / 255) < 0.06, axis=-1).sum()
        blue = np.all(np.abs(img - np.array([0x2c, 0x7b, 0xb6]) / 255) < 0.06, axis=-1).sum()
        return red + blue

    with_clusters = coloured(_screenshot(cluster_map(grave), tmp_path))
    without = coloured(_screenshot(cluster_map(grave, max_clusters=0), tmp_path))
    assert without == 0 and with_clusters > 200


def test_folium_map_popups(nycfever, tmp_path):
    pytest.importorskip("folium")
    from hphawkes_py.scan import cluster_map

    path = cluster_map(nycfever, tmp_path / "m.html", engine="folium")
    page = path.read_text()
    cl = nycfever.clusters.iloc[0]
    assert "Time window" in page and outputs._date(cl.start) in page
    assert f"{cl.log_likelihood_ratio:.6f}" in page and "L.polygon" in page


def test_folium_map_without_folium_says_so(grave, monkeypatch):
    from hphawkes_py.scan import cluster_map

    monkeypatch.setitem(sys.modules, "folium", None)
    with pytest.raises(ImportError, match="needs folium: pip install folium"):
        cluster_map(grave, engine="folium")
    assert "<svg" in cluster_map(grave)          # the self-contained page needs no folium


# ---- write_satscan / run_prm / CLI -----------------------------------------------------------------

def test_write_satscan_refuses_by_name(grave, nycfever, tmp_path):
    with pytest.raises(ValueError, match="tables: 'sci' is not a SaTScan table"):
        outputs.write_satscan(grave, tmp_path / "a.txt", tables=("col", "sci"))
    with pytest.raises(TypeError, match="got the string 'geojson'"):
        outputs.write_satscan(grave, tmp_path / "a.txt", geometry="geojson")
    with pytest.raises(ValueError, match="folder .* does not exist"):
        outputs.write_satscan(grave, tmp_path / "none" / "a.txt")
    with pytest.raises(ValueError, match="space-time permutation"):
        outputs.write_satscan(nycfever, tmp_path / "a.txt", tables=("col", "rr"))
    with pytest.raises(ValueError, match="KML is longitude/latitude"):
        outputs.write_satscan(grave, tmp_path / "a.txt", geometry=("geojson", "kml"))
    assert list(tmp_path.iterdir()) == []   # every check before the first file
    names = [f.name for f in outputs.write_satscan(nycfever, tmp_path / "n.txt")]
    assert names == ["n.txt", "n.col.csv", "n.gis.csv", "n.llr.csv"]


def test_run_prm_writes_what_the_prm_asks(tmp_path):
    _copy(tmp_path, "NYCfever.cas", "NYCfever.geo")
    text = SAT("NYCfever.prm").read_text()
    for k in ("OutputGoogleEarthKML", "MostLikelyClusterEachCentroidASCII", "SaveSimLLRsDBase", "ReportGumbel"):
        text = text.replace(f"{k}=n", f"{k}=y")
    (tmp_path / "f.prm").write_text(text.replace("PValueReportType=0", "PValueReportType=1"))
    res = hp.scan.run_prm(tmp_path / "f.prm", n_replicates=9, seed=1, backend="cpu", progress=False,
                          write_results=True)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("NYCfever.") and p.suffix not in
                  (".cas", ".geo")) == ["NYCfever.col.csv", "NYCfever.kml", "NYCfever.llr.dbf", "NYCfever.txt"]
    col = pd.read_csv(tmp_path / "NYCfever.col.csv")
    assert "GBL_PVALUE" in col.columns and col.TEST_STAT[0] == pytest.approx(res.clusters.log_likelihood_ratio[0])
    np.testing.assert_allclose(col.P_VALUE, res.clusters.p_value, rtol=1e-12)   # PValueReportType=1: Monte Carlo
    # nothing written without write_results (the output settings are honoured only when asked)
    (tmp_path / "NYCfever.txt").unlink()
    hp.scan.run_prm(tmp_path / "f.prm", n_replicates=9, seed=1, backend="cpu", progress=False)
    assert not (tmp_path / "NYCfever.txt").exists()
    # a report path of its own
    hp.scan.run_prm(tmp_path / "f.prm", n_replicates=9, seed=1, backend="cpu", progress=False,
                    write_results=tmp_path / "other.txt")
    assert (tmp_path / "other.col.csv").exists()


def test_run_prm_refuses_unwritable_outputs_before_work(tmp_path, monkeypatch):
    _copy(tmp_path, "NYCfever.cas", "NYCfever.geo")
    base = SAT("NYCfever.prm").read_text()
    (tmp_path / "sci.prm").write_text(base.replace("MostLikelyClusterCaseInfoEachCentroidASCII=n",
                                                   "MostLikelyClusterCaseInfoEachCentroidASCII=y"))
    import hphawkes_py.scan._prm as prm_mod

    monkeypatch.setattr(prm_mod, "_run", lambda *a, **k: pytest.fail("the analysis ran"))
    with pytest.raises(ValueError, match="MostLikelyClusterCaseInfoEachCentroidASCII=y asks for the cluster case"):
        hp.scan.run_prm(tmp_path / "sci.prm", write_results=True)
    (tmp_path / "none.prm").write_text(base.replace("ResultsFile=NYCfever.txt", "ResultsFile="))
    with pytest.raises(ValueError, match="ResultsFile is empty"):
        hp.scan.run_prm(tmp_path / "none.prm", write_results=True)
    (tmp_path / "dir.prm").write_text(base.replace("ResultsFile=NYCfever.txt", "ResultsFile=nowhere/r.txt"))
    with pytest.raises(ValueError, match="folder .*nowhere does not exist"):
        hp.scan.run_prm(tmp_path / "dir.prm", write_results=True)
    with pytest.raises(TypeError, match="write_results must be False, True"):
        hp.scan.run_prm(tmp_path / "none.prm", write_results=1)
    assert not (tmp_path / "NYCfever.txt").exists()


def test_cli_out_folder_writes_the_set(tmp_path, capsys):
    from hphawkes_py.cli import main

    out = tmp_path / "res"
    assert main(["scan", "run", str(SAT("NYCfever.prm")), "--replicates", "9", "--seed", "1", "--backend", "cpu",
                 "--out", str(out), "--quiet"]) == 0
    names = {p.name for p in out.iterdir()}
    assert {"NYCfever.txt", "NYCfever.col.csv", "NYCfever.gis.csv", "NYCfever.llr.csv", "NYCfever.clusters.geojson",
            "NYCfever.kml", "NYCfever.html", "NYCfever.png"} <= names
    assert "not written: " in capsys.readouterr().err and "NYCfever.rr.csv" not in names   # said, not dropped
    res = hp.scan.run_prm(SAT("NYCfever.prm"), n_replicates=9, seed=1, backend="cpu", progress=False)
    col = pd.read_csv(out / "NYCfever.col.csv")
    np.testing.assert_allclose(col.TEST_STAT, res.clusters.log_likelihood_ratio, rtol=1e-12)
    # refused before any work: an existing folder, a .txt --out, a --png path beside a folder
    (tmp_path / "empty").mkdir()
    for argv, msg in ((["--out", str(out)], "is a folder that exists; pass --overwrite"),
                      (["--out", str(tmp_path / "empty")], "is a folder that exists; pass --overwrite"),
                      (["--out", str(tmp_path / "r.txt")], "give a .csv file"),
                      (["--out", str(tmp_path / "x"), "--png", str(tmp_path / "m.png")], "written into the folder")):
        assert main(["scan", "run", str(SAT("NYCfever.prm")), "--backend", "cpu", "--quiet", *argv]) == 2
        assert msg in capsys.readouterr().err
    assert not (tmp_path / "x").exists() and not any((tmp_path / "empty").iterdir())
    # --overwrite replaces the set (another seed: other replicate maxima)
    before = pd.read_csv(out / "NYCfever.llr.csv").TST_STAT.to_numpy()
    assert main(["scan", "run", str(SAT("NYCfever.prm")), "--replicates", "9", "--seed", "2", "--backend", "cpu",
                 "--out", str(out), "--overwrite", "--quiet"]) == 0
    after = pd.read_csv(out / "NYCfever.llr.csv").TST_STAT.to_numpy()
    assert len(after) == 9 and not np.array_equal(before, after)


def test_arguments_refused_by_name(grave, tmp_path):
    with pytest.raises(TypeError, match="study_period .* got the number 2000"):
        outputs.cluster_table(grave, study_period=(2000, 2001))
    with pytest.raises(ValueError, match="ends .* before it starts"):
        outputs.report_text(grave, study_period=("2001/1/1", "2000/1/1"))
    with pytest.raises(TypeError, match="gumbel must be True or False, got str 'n'"):
        outputs.location_table(grave, gumbel="n")
    with pytest.raises(TypeError, match="dbase must be True/False"):
        outputs.write_satscan(grave, tmp_path / "a.txt", dbase="col")
    import dataclasses

    circles = grave.clusters.assign(semimajor_axis=grave.clusters.radius, shape=1.0, angle=0.0,
                                    test_statistic=grave.clusters.log_likelihood_ratio)
    elliptic = dataclasses.replace(grave, clusters=circles)
    with pytest.raises(ValueError, match="penalty must be 'none', 'medium' or 'strong'"):
        outputs.llr_table(elliptic, penalty="high")
    # an elliptic result whose clusters are all circles does not show its penalty: asked for, not guessed
    with pytest.raises(ValueError, match="does not say whether its statistic was penalised"):
        outputs.llr_table(elliptic)
    assert list(outputs.llr_table(elliptic, penalty="strong").columns) == ["TST_STAT"]
    with pytest.raises(TypeError, match="result must be a hp.scan ScanResult"):
        outputs.cluster_table(grave.clusters)
    assert list(tmp_path.iterdir()) == []


def test_run_prm_kml_of_cartesian_data_is_said(tmp_path):
    _copy(tmp_path, "NHumberside.cas", "NHumberside.ctl", "NHumberside.geo")
    p = _prm(tmp_path / "k.prm", CaseFile="NHumberside.cas", ControlFile="NHumberside.ctl",
             CoordinatesFile="NHumberside.geo", OutputGoogleEarthKML="y", ResultsFile="k.txt")
    with pytest.warns(UserWarning, match="no KML is written for Cartesian coordinates"):
        hp.scan.run_prm(p, n_replicates=9, seed=1, backend="cpu", progress=False, write_results=True)
    assert (tmp_path / "k.txt").exists() and not list(tmp_path.glob("*.km[lz]"))


def test_relative_risk_edge_cases_as_satscan():
    # .rr (LocationRiskEstimateWriter::writeGeneric): blank when E = 0, C = E or O = C
    assert math.isnan(outputs._relative_risk(0, 0.0, 10)) and math.isnan(outputs._relative_risk(10, 3.0, 10))
    assert outputs._relative_risk(2, 1.0, 10) == pytest.approx((2 / 1) / (8 / 9))
    # .gis LOC_RR (CCluster::GetRelativeRisk): blank when O = C (infinite), 0 when E = 0
    assert math.isnan(outputs._location_relative_risk(10, 3.0, 10))
    assert outputs._location_relative_risk(0, 0.0, 10) == 0.0
    assert outputs._location_relative_risk(2, 1.0, 10) == pytest.approx((2 / 1) / (8 / 9))


def test_p_values_as_pvaluereporttype(grave, tmp_path):
    """SaTScan's P_VALUE: Monte Carlo (PValueReportType=1), Gumbel (3), or its default combination (0:
    the Gumbel p for clusters of Monte Carlo rank below 10 in high-rate scans); GBL_PVALUE only beside a
    Monte Carlo p-value (ReportGumbel=y)."""
    cl = grave.clusters
    rank = np.rint(cl.p_value * (grave.n_replicates + 1)).astype(int)
    assert (rank < 10).any() and (rank >= 10).any()          # grave, 19 replicates: one of each
    mc = outputs.cluster_table(grave).P_VALUE
    gb = outputs.cluster_table(grave, p_values="gumbel").P_VALUE
    df = outputs.cluster_table(grave, p_values="default").P_VALUE
    np.testing.assert_array_equal(mc, cl.p_value)
    np.testing.assert_array_equal(gb, np.maximum(cl.gumbel_p_value, 1e-17))
    np.testing.assert_array_equal(df, np.where(rank < 10, gb, mc))
    np.testing.assert_array_equal(outputs.location_table(grave, p_values="default").groupby("CLUSTER").P_VALUE.first(),
                                  df.to_numpy())
    txt = outputs.report_text(grave, p_values="default", gumbel=True)
    first = txt[txt.index("1.Location"):].split("\n\n")[0]
    assert f"  P-value...............: {outputs._significant(cl.gumbel_p_value[0])}" in first
    assert f"  Gumbel P-value........: {outputs._significant(cl.gumbel_p_value[0])}" in first
    assert outputs._gumbel_text(0.0) == "< 0.00000000000000001"
    with pytest.raises(ValueError, match="p_values must be 'monte_carlo'"):
        outputs.cluster_table(grave, p_values="standard")
    # run_prm: the .prm's PValueReportType and ReportGumbel
    _copy(tmp_path, "NHumberside.cas", "NHumberside.ctl", "NHumberside.geo")
    for ptype, report_gumbel, want_p, want_gbl in (("0", "y", "default", False), ("1", "y", "monte_carlo", True),
                                                    ("3", "n", "gumbel", False)):
        p = _prm(tmp_path / f"p{ptype}.prm", CaseFile="NHumberside.cas", ControlFile="NHumberside.ctl",
                 CoordinatesFile="NHumberside.geo", PValueReportType=ptype, ReportGumbel=report_gumbel)
        out = hp.scan._prm.prm_arguments(p)["outputs"]
        assert (out["p_values"], out["gumbel"]) == (want_p, want_gbl)
