"""Cluster circles and ellipses as polygons: GeoJSON, KML (Google Earth), Shapefile / GeoPackage.

A cluster's window is a circle (centre, radius) or, for SaTScan's elliptic scan, an ellipse
(centre, semiminor axis ``radius``, ``semimajor_axis``, major axis at ``angle`` degrees from the
first coordinate axis). With Cartesian coordinates the polygon is the plain circle or ellipse in
the data's units. With latitude/longitude (``distance="great_circle"``: ``x`` latitude, ``y``
longitude, radius in km) a circle is the geodesic circle: the points at great-circle distance
``radius`` from the centre on a sphere of SaTScan's radius (6367 km), written as longitude,
latitude pairs as GeoJSON and KML require (CRS WGS 84, EPSG:4326). Polygons have ``n_vertices``
vertices; a regular n-gon inscribed in a circle has area ``n/2 r^2 sin(2 pi / n)``, 0.16 % below
pi r^2 for 64 vertices.

GeoJSON and KML are written here as text; Shapefile and GeoPackage need pyogrio and shapely
(the optional extra ``gis``).
"""
from __future__ import annotations

import json
import math
import warnings
import zipfile
from pathlib import Path
from xml.sax.saxutils import escape

import numpy as np

from ._output_common import CATEGORICAL, NORMAL_MODELS, normal_columns
from ._report_format import category_report_lines
from .locations import EARTH_RADIUS_KM

__all__ = ["cluster_polygons", "to_geojson", "write_geojson", "to_kml", "write_kml", "write_vector"]


def _need_pyogrio(what: str):
    try:
        import pyogrio  # noqa: F401
        import shapely  # noqa: F401
    except ImportError:
        raise ImportError(f"{what} need pyogrio and shapely: pip install 'hphawkes_py[gis]' (or pip install pyogrio "
                          f"shapely); GeoJSON and KML need neither") from None


def _ring(result, cl, n_vertices: int) -> list:
    """The closed ring of one cluster's window: ``[(x, y), ...]`` (lat/long data: (longitude, latitude))."""
    t = np.linspace(0.0, 2.0 * math.pi, n_vertices, endpoint=False)
    r = float(cl.radius)
    elliptic = "semimajor_axis" in result.clusters.columns
    if result.distance == "great_circle":
        if elliptic:  # the scan refuses ellipses with great-circle distances
            raise ValueError("elliptic windows with latitude/longitude coordinates are not scanned")
        lat0, lon0 = math.radians(float(cl.x)), math.radians(float(cl.y))
        d = r / EARTH_RADIUS_KM
        # the destination points at angular distance d in every bearing t
        lat = np.arcsin(math.sin(lat0) * math.cos(d) + math.cos(lat0) * math.sin(d) * np.cos(t))
        lon = lon0 + np.arctan2(np.sin(t) * math.sin(d) * math.cos(lat0), math.cos(d) - math.sin(lat0) * np.sin(lat))
        lon = (np.degrees(lon) + 180.0) % 360.0 - 180.0
        pts = list(zip(lon.tolist(), np.degrees(lat).tolist()))
    else:
        a = float(cl.semimajor_axis) if elliptic else r
        phi = math.radians(float(cl.angle)) if elliptic else 0.0
        u, v = a * np.cos(t), r * np.sin(t)
        xs = float(cl.x) + u * math.cos(phi) - v * math.sin(phi)
        ys = float(cl.y) + u * math.sin(phi) + v * math.cos(phi)
        pts = list(zip(xs.tolist(), ys.tolist()))
    return pts + [pts[0]]


def _check_vertices(n_vertices):
    if isinstance(n_vertices, bool) or not isinstance(n_vertices, (int, np.integer)) or n_vertices < 8:
        raise ValueError(f"n_vertices must be a whole number >= 8 (vertices of each cluster polygon), got "
                         f"{n_vertices!r}")


def _finite(v):
    """``float(v)``, None where it is not finite (an attribute a model does not have: JSON has no NaN)."""
    v = float(v)
    return v if math.isfinite(v) else None


def _properties(result, k, cl) -> dict:
    """The attributes of cluster ``k`` (SaTScan's names where SaTScan has them)."""
    props = {"CLUSTER": k + 1, "LOC_ID": str(cl.location_ids[0]), "NUMBER_LOC": int(cl.n_locations),
             "OBSERVED": cl.cases if isinstance(cl.cases, float) else int(cl.cases)}
    if result.model in CATEGORICAL:  # counts per group of categories, as SaTScan's report lines
        lines = dict(category_report_lines(cl))
        props.update(CATEGORY=lines["Category"], CAT_OBS=lines["Number of cases"], CAT_EXP=lines["Expected cases"],
                     CAT_ODE=lines["Observed / expected"], CAT_RR=lines["Relative risk"],
                     CAT_PCT=lines["Percent cases in area"])
    elif result.model in NORMAL_MODELS:  # means and variances, no expected count
        props.update({key: float(getattr(cl, col)) for key, _, col in normal_columns(result)})
    else:
        props.update(EXPECTED=_finite(cl.expected), ODE=_finite(cl.observed_over_expected),
                     REL_RISK=_finite(cl.relative_risk))
    props.update(LLR=float(cl.log_likelihood_ratio), P_VALUE=float(cl.p_value), RADIUS=float(cl.radius))
    if "semimajor_axis" in result.clusters.columns:
        props.update(E_MAJOR=float(cl.semimajor_axis), E_ANGLE=float(cl.angle), E_SHAPE=float(cl.shape))
    if hasattr(cl, "start"):
        from ._output_common import _date

        props.update(START_DATE=_date(cl.start), END_DATE=_date(cl.end))
    return props


def cluster_polygons(result, *, n_vertices: int = 64) -> list:
    """``[(properties, ring), ...]`` of the reported clusters, most likely first.

    Parameters
    ----------
    result : ScanResult
    n_vertices : int
        Vertices of each polygon (>= 8).

    Returns
    -------
    list of (dict, list of (float, float))
        The cluster's attributes (``CLUSTER``, ``LOC_ID``, ``OBSERVED``, ``EXPECTED``, ``REL_RISK``,
        ``LLR``, ``P_VALUE``, ``RADIUS``, ... and ``START_DATE``, ``END_DATE`` for space-time clusters)
        and its closed ring in the data's coordinates ((longitude, latitude) for lat/long data).

    Examples
    --------
    >>> from hphawkes_py.scan import geometry
    >>> g = hp.datasets.load_grave()
    >>> res = hp.scan.bernoulli(g[["x", "y"]].to_numpy(), g["case"], 1 - g["case"], n_replicates=9,
    ...                         seed=1, backend="cpu", progress=False)
    >>> props, ring = geometry.cluster_polygons(res)[0]
    >>> print(props["CLUSTER"], props["OBSERVED"], len(ring))
    1 11 65
    """
    from ._output_common import _check_result

    _check_result(result)
    _check_vertices(n_vertices)
    if getattr(result, "non_euclidean", False):
        raise ValueError("the windows came from lists of neighbours (neighbors=, SaTScan's neighbors file): the "
                         "clusters have no circles to draw (SaTScan writes no KML or shapefiles for them either)")
    from .result import purely_temporal_row

    # a purely temporal cluster (every location) has no circle: not drawn, as SaTScan's KML
    return [(_properties(result, k, cl), _ring(result, cl, n_vertices))
            for k, cl in enumerate(result.clusters.itertuples(index=False)) if not purely_temporal_row(cl)]


def to_geojson(result, *, n_vertices: int = 64) -> dict:
    """The clusters as a GeoJSON FeatureCollection (a dict; one Polygon feature per cluster).

    Lat/long data: WGS 84 longitude, latitude (RFC 7946). Cartesian data: the data's own
    coordinates (GeoJSON's RFC 7946 assumes WGS 84; tools that read such a file must be told the
    coordinate system).

    Parameters
    ----------
    result : ScanResult
        A scan's result.
    n_vertices : int
        Vertices of each polygon (>= 8).

    Returns
    -------
    dict
        ``{"type": "FeatureCollection", "features": [...]}``, the features' properties as in
        :func:`cluster_polygons`.

    Examples
    --------
    >>> from hphawkes_py.scan import geometry
    >>> g = hp.datasets.load_grave()
    >>> res = hp.scan.bernoulli(g[["x", "y"]].to_numpy(), g["case"], 1 - g["case"], n_replicates=9,
    ...                         seed=1, backend="cpu", progress=False)
    >>> fc = geometry.to_geojson(res)
    >>> print(fc["type"], len(fc["features"]), fc["features"][0]["geometry"]["type"])
    FeatureCollection 2 Polygon
    """
    feats = [{"type": "Feature", "properties": props, "geometry": {"type": "Polygon", "coordinates": [ring]}}
             for props, ring in cluster_polygons(result, n_vertices=n_vertices)]
    return {"type": "FeatureCollection", "features": feats}


def write_geojson(result, path, *, n_vertices: int = 64) -> Path:
    """Write :func:`to_geojson` to a file.

    Parameters
    ----------
    result : ScanResult
        A scan's result.
    path : path
        The ``.geojson`` file.
    n_vertices : int
        Vertices of each polygon (>= 8).

    Returns
    -------
    pathlib.Path
        ``path``.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> from hphawkes_py.scan import geometry
    >>> g = hp.datasets.load_grave()
    >>> res = hp.scan.bernoulli(g[["x", "y"]].to_numpy(), g["case"], 1 - g["case"], n_replicates=9,
    ...                         seed=1, backend="cpu", progress=False)
    >>> p = geometry.write_geojson(res, pathlib.Path(tempfile.mkdtemp()) / "clusters.geojson")
    >>> len(json.loads(p.read_text())["features"]) == len(res.clusters)
    True
    """
    path = Path(path)
    path.write_text(json.dumps(to_geojson(result, n_vertices=n_vertices), allow_nan=False))
    return path


def to_kml(result, *, n_vertices: int = 64, locations: bool = True) -> str:
    """The clusters as KML for Google Earth: one placemark per cluster (its polygon and a
    description with cases, expected, relative risk, LLR, p-value and, for space-time clusters,
    the time window) and, as SaTScan's ``IncludeClusterLocationsKML``, a folder of each cluster's
    locations as points. KML is longitude, latitude (WGS 84): lat/long data only.

    Parameters
    ----------
    result : ScanResult
        A scan's result with ``distance="great_circle"``.
    n_vertices : int
        Vertices of each polygon (>= 8).
    locations : bool
        Add each cluster's locations as point placemarks.

    Returns
    -------
    str
        The KML document.

    Raises
    ------
    ValueError
        Cartesian data (KML has no other coordinate system; use GeoJSON or the HTML map).

    Examples
    --------
    >>> from hphawkes_py.scan import geometry
    >>> ny = hp.datasets.satscan_sample_path("NYCfever.prm")
    >>> res = hp.scan.run_prm(ny, n_replicates=9, seed=1, backend="cpu", progress=False)
    >>> geometry.to_kml(res).count("<Polygon>") == len(res.clusters)
    True
    """
    from ._output_common import _check_result

    _check_result(result)
    if result.distance != "great_circle":
        raise ValueError("KML is longitude/latitude: this result has Cartesian coordinates (distance="
                         f"{result.distance!r}); write GeoJSON or the HTML map instead")
    from ._output_common import _location_of_ids

    loc_of, _ = _location_of_ids(result)
    coords = np.asarray(result._loc_coords, dtype=float)
    marks = []
    from .result import purely_temporal_row

    drawn = [cl.location_ids for cl in result.clusters.itertuples(index=False) if not purely_temporal_row(cl)]
    for (props, ring), ids in zip(cluster_polygons(result, n_vertices=n_vertices), drawn):
        desc = "<br/>".join(f"{escape(k)}: {escape(str(v))}" for k, v in props.items())
        ring_text = " ".join(f"{x:.7f},{y:.7f},0" for x, y in ring)
        marks.append(
            f"<Placemark><name>Cluster {props['CLUSTER']}</name><description><![CDATA[{desc}]]></description>"
            f"<styleUrl>#cluster</styleUrl><Polygon><outerBoundaryIs><LinearRing><coordinates>{ring_text}"
            f"</coordinates></LinearRing></outerBoundaryIs></Polygon></Placemark>")
        if locations:
            seen, points = set(), []
            for lid in ids:
                g = loc_of[lid]
                if g not in seen:
                    seen.add(g)
                    points.append(f"<Placemark><name>{escape(str(lid))}</name><styleUrl>#location</styleUrl><Point>"
                                  f"<coordinates>{coords[g, 1]:.7f},{coords[g, 0]:.7f},0</coordinates></Point>"
                                  f"</Placemark>")
            marks.append(f"<Folder><name>Cluster {props['CLUSTER']} locations</name>{''.join(points)}</Folder>")
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<kml xmlns="http://www.opengis.net/kml/2.2"><Document>'
            '<name>hphawkes_py scan clusters</name><Style id="cluster"><LineStyle><color>ff0000ff</color><width>2'
            '</width></LineStyle><PolyStyle><color>400000ff</color></PolyStyle></Style>'
            '<Style id="location"><IconStyle><scale>0.5</scale></IconStyle></Style>'
            + "".join(marks) + "</Document></kml>\n")


def write_kml(result, path, *, n_vertices: int = 64, locations: bool = True) -> Path:
    """Write :func:`to_kml` to a file (``.kmz``: zipped as ``doc.kml``, SaTScan's CompressKMLtoKMZ).

    Parameters
    ----------
    result : ScanResult
        A scan's result with ``distance="great_circle"``.
    path : path
        The ``.kml`` or ``.kmz`` file.
    n_vertices : int
        Vertices of each polygon (>= 8).
    locations : bool
        Add each cluster's locations as point placemarks.

    Returns
    -------
    pathlib.Path
        ``path``.

    Examples
    --------
    >>> import tempfile, pathlib, zipfile
    >>> from hphawkes_py.scan import geometry
    >>> res = hp.scan.run_prm(hp.datasets.satscan_sample_path("NYCfever.prm"), n_replicates=9, seed=1,
    ...                       backend="cpu", progress=False)
    >>> p = geometry.write_kml(res, pathlib.Path(tempfile.mkdtemp()) / "clusters.kmz")
    >>> zipfile.ZipFile(p).namelist()
    ['doc.kml']
    """
    path = Path(path)
    text = to_kml(result, n_vertices=n_vertices, locations=locations)
    if path.suffix.lower() == ".kmz":
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("doc.kml", text)
    else:
        path.write_text(text)
    return path


def write_vector(result, path, *, n_vertices: int = 64, driver: str | None = None, attributes=None) -> Path:
    """Write the cluster polygons with their attributes through pyogrio: ``.shp`` (ESRI
    Shapefile, as SaTScan's ``<name>.col.shp``), ``.gpkg`` (GeoPackage) or another GDAL vector
    format named by ``driver``. Lat/long data get CRS EPSG:4326; Cartesian data none.

    ``attributes``: a table with one row per cluster, most likely first, to write instead of the
    polygons' own attributes (SaTScan's shapefile carries its cluster table,
    :func:`hphawkes_py.scan.outputs.cluster_table`, as the ``.col.dbf`` beside ``.col.shp``).

    Parameters
    ----------
    result : ScanResult
        A scan's result.
    path : path
        The file to write.
    n_vertices : int
        Vertices of each polygon (>= 8).
    driver : str, optional
        GDAL driver; default from the suffix (``.shp``, ``.gpkg``, ``.geojson``).
    attributes : pandas.DataFrame, optional
        One row per cluster, written instead of the polygons' own attributes.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    ImportError
        pyogrio or shapely missing (optional extra ``gis``).
    ValueError
        A suffix with no known driver, or ``attributes`` with another number of rows than clusters.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from hphawkes_py.scan import geometry
    >>> g = hp.datasets.load_grave()
    >>> res = hp.scan.bernoulli(g[["x", "y"]].to_numpy(), g["case"], 1 - g["case"], n_replicates=9,
    ...                         seed=1, backend="cpu", progress=False)
    >>> geometry.write_vector(res, pathlib.Path(tempfile.mkdtemp()) / "clusters.gpkg").suffix
    '.gpkg'
    """
    _need_pyogrio("Shapefiles and GeoPackages")
    import shapely
    from pyogrio.raw import write

    path = Path(path)
    if driver is None:
        drivers = {".shp": "ESRI Shapefile", ".gpkg": "GPKG", ".geojson": "GeoJSON"}
        if path.suffix.lower() not in drivers:
            raise ValueError(f"path {path}: give a .shp, .gpkg or .geojson file, or name the GDAL driver")
        driver = drivers[path.suffix.lower()]
    polys = cluster_polygons(result, n_vertices=n_vertices)
    if attributes is not None:
        if len(attributes) != len(polys):
            raise ValueError(f"attributes has {len(attributes)} rows; the result has {len(polys)} clusters")
        table = [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}
                 for row in attributes.to_dict(orient="records")]
        names = list(attributes.columns)
    else:
        table = [p for p, _ in polys]
        names = list(polys[0][0]) if polys else ["CLUSTER"]
    geoms = shapely.to_wkb(np.array([shapely.Polygon(ring) for _, ring in polys], dtype=object))
    fields = []
    for name in names:
        vals = [p.get(name) for p in table]
        if all(isinstance(v, (int, np.integer)) for v in vals):
            fields.append(np.array(vals, dtype=np.int64))
        elif all(isinstance(v, (int, float, np.number)) or v is None for v in vals):
            fields.append(np.array([np.nan if v is None else v for v in vals], dtype=float))
        else:
            fields.append(np.array([str(v) for v in vals], dtype=object))
    crs = "EPSG:4326" if result.distance == "great_circle" else None
    with warnings.catch_warnings():
        # Cartesian data have no coordinate reference system: pyogrio's warning says only that
        warnings.filterwarnings("ignore", message="'crs' was not provided")
        write(str(path), geoms, fields, fields=names, driver=driver, geometry_type="Polygon", crs=crs)
    return path
