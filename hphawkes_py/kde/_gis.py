"""GeoTIFF and vector-polygon input/output for :mod:`hphawkes_py.kde` (optional ``gis`` extra).

rasterio and shapely are imported lazily here only, so the rest of the package works without them;
a missing one raises ImportError naming ``pip install 'hphawkes_py[gis]'``.
"""
from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np

from .._validate import describe
from ._coords import MAX_CELLS, _as_points

_EXTRA = "pip install 'hphawkes_py[gis]'"


def _import(name: str, what: str):
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError as e:
        raise ImportError(f"{what} needs the optional package {name!r}: {_EXTRA}") from e


def crs_is_geographic(crs) -> bool:
    """True when ``crs`` says it is geographic (degrees); False for None or a projected CRS."""
    return bool(crs is not None and getattr(crs, "is_geographic", False))


def check_bandwidth_units(window, bandwidth: float, name: str = "bandwidth") -> None:
    """Refuse a bandwidth that can only be in projected units on a window with a geographic CRS.

    On a geographic CRS the coordinates are degrees, so a bandwidth longer than the window's
    diagonal (in degrees) is certainly meant in metres/feet/km. Without a CRS nothing is checked.
    """
    crs = getattr(window, "crs", None)
    if not crs_is_geographic(crs):
        return
    xmin, xmax, ymin, ymax = window.extent
    diag = math.hypot(xmax - xmin, ymax - ymin)
    if bandwidth > diag:
        raise ValueError(
            f"{name}={bandwidth!r} looks like projected units (metres, feet, km) but the window's CRS "
            f"({crs}) is geographic: coordinates are degrees and the window's diagonal is only {diag:.6g} "
            "degrees. Reproject the points and the window to a projected CRS (e.g. UTM) and give the "
            "bandwidth in its units"
        )


def _check_path(path) -> Path:
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"file not found: {path}")
    if path.is_dir() and path.suffix.lower() not in (".gdb",):
        raise IsADirectoryError(f"{path}: is a folder, expected a file")
    return path


def read_geotiff(path, band: int = 1):
    """(values float64 (rows, cols) row 0 = top, x0, y0, cell_size, nodata, crs) of a north-up,
    square-celled GeoTIFF band."""
    rasterio = _import("rasterio", "reading a GeoTIFF")
    path = _check_path(path)
    with rasterio.open(path) as ds:
        if isinstance(band, bool) or not isinstance(band, int) or not 1 <= band <= ds.count:
            raise ValueError(f"{path}: band must be an integer in 1..{ds.count}, got {band!r}")
        t = ds.transform
        if t.b != 0 or t.d != 0:
            raise ValueError(
                f"{path}: the affine transform is rotated or sheared ({tuple(t)[:6]}); only north-up rasters "
                "are supported -- warp it first (e.g. gdalwarp)"
            )
        if not (t.a > 0 and t.e < 0):
            raise ValueError(f"{path}: the transform must be north-up (positive x step, negative y step), got {tuple(t)[:6]}")
        cs = float(t.a)
        if not math.isclose(cs, -float(t.e), rel_tol=1e-9, abs_tol=0.0):
            raise ValueError(f"{path}: cells are not square ({cs!r} x {-float(t.e)!r}); resample to square cells first")
        values = ds.read(band).astype(np.float64)
        nodata = ds.nodatavals[band - 1]
        crs = ds.crs
        rows = ds.height
        x0 = float(t.c)
        y0 = float(t.f) + float(t.e) * rows
    if crs is None:
        warnings.warn(
            f"{path}: the GeoTIFF has no CRS; distances and bandwidths are taken as planar units of its coordinates",
            UserWarning,
            stacklevel=3,
        )
    return values, x0, y0, cs, (None if nodata is None else float(nodata)), crs


def write_geotiff(path, values, x0, y0, cs, crs, nodata: float = -9999.0) -> None:
    rasterio = _import("rasterio", "writing a GeoTIFF")
    from rasterio.transform import Affine

    v = np.asarray(values, dtype=np.float64)
    rows, cols = v.shape
    out = np.where(np.isnan(v), nodata, v)  # infinities are float64 values and stay
    transform = Affine(cs, 0.0, x0, 0.0, -cs, y0 + rows * cs)  # north-up, row 0 = top
    with rasterio.open(Path(path), "w", driver="GTiff", height=rows, width=cols, count=1, dtype="float64",
                       crs=crs, transform=transform, nodata=nodata) as ds:
        ds.write(out, 1)


def _parse_crs(user_input):
    if user_input is None:
        return None
    try:
        from rasterio.crs import CRS
    except ImportError:  # the CRS is informative only: kept when rasterio can read it
        return None
    try:
        return CRS.from_user_input(user_input)
    except Exception:
        return None


def _read_features(path: Path, layer):
    """[(feature label, geometry mapping)], crs input."""
    if path.suffix.lower() in (".geojson", ".json"):
        if layer is not None:
            raise ValueError(f"{path}: layer= is not used for GeoJSON files, got {layer!r}")
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as e:
            raise ValueError(f"{path}: not valid GeoJSON ({e})") from None
        crs = None
        if isinstance(doc, dict) and isinstance(doc.get("crs"), dict):
            crs = (doc["crs"].get("properties") or {}).get("name")
        kind = doc.get("type") if isinstance(doc, dict) else None
        if kind == "FeatureCollection":
            feats = doc.get("features") or []
        elif kind == "Feature":
            feats = [doc]
        elif kind in ("Polygon", "MultiPolygon", "GeometryCollection"):
            feats = [{"geometry": doc}]
        else:
            raise ValueError(f"{path}: expected a GeoJSON FeatureCollection, Feature or (Multi)Polygon, got type {kind!r}")
        out = []
        for i, f in enumerate(feats):
            label = f"feature {i}" + (f" (id {f['id']!r})" if isinstance(f, dict) and "id" in f else "")
            out.append((label, f.get("geometry") if isinstance(f, dict) else None))
        return out, crs
    try:
        import pyogrio
    except ImportError:
        pyogrio = None
    if pyogrio is not None:
        shapely = _import("shapely", "reading polygons")
        info = pyogrio.read_info(path, layer=layer)
        meta, _, geoms, _ = pyogrio.raw.read(path, layer=layer, read_geometry=True)
        out = [(f"feature {i}", shapely.from_wkb(g)) for i, g in enumerate(geoms)]
        return out, info.get("crs") or meta.get("crs")
    try:
        import fiona
    except ImportError:
        raise ImportError(
            f"{path}: reading {path.suffix or 'this'} files needs pyogrio or fiona (pip install pyogrio); "
            f"GeoJSON needs only shapely ({_EXTRA})"
        ) from None
    with fiona.open(path, layer=layer) as src:
        crs = src.crs.to_wkt() if src.crs else None
        out = [(f"feature {i}" + (f" (id {f.id!r})" if getattr(f, "id", None) is not None else ""),
                None if f.geometry is None else dict(f.geometry)) for i, f in enumerate(src)]
    return out, crs


def read_vector_rings(path, layer=None):
    """Rings (even-odd) of the union of the polygons in a vector file, and its CRS."""
    shapely = _import("shapely", "reading polygons")
    from shapely.geometry import shape
    from shapely.validation import explain_validity

    path = _check_path(path)
    feats, crs_input = _read_features(path, layer)
    geoms = []
    for label, g in feats:
        if g is None:
            continue
        geom = g if isinstance(g, shapely.Geometry) else shape(g)
        if geom.is_empty:
            continue
        if geom.geom_type == "GeometryCollection":
            parts = [p for p in geom.geoms if p.geom_type in ("Polygon", "MultiPolygon")]
        elif geom.geom_type in ("Polygon", "MultiPolygon"):
            parts = [geom]
        else:
            raise ValueError(f"{path}: {label} is a {geom.geom_type}, not a polygon; a window needs polygons")
        for p in parts:
            if not p.is_valid:
                raise ValueError(
                    f"{path}: {label} is not a valid polygon ({explain_validity(p)}); self-intersecting "
                    "polygons are refused -- repair it (e.g. shapely.make_valid) first"
                )
            geoms.append(p)
    if not geoms:
        raise ValueError(f"{path}: no polygon features found")
    union = shapely.union_all(geoms)
    polys = list(union.geoms) if union.geom_type == "MultiPolygon" else [union]
    rings = []
    for p in polys:
        rings.append(np.asarray(p.exterior.coords, dtype=np.float64)[:, :2])
        rings.extend(np.asarray(r.coords, dtype=np.float64)[:, :2] for r in p.interiors)
    return rings, _parse_crs(crs_input)


# ---------------------------------------------------------------------------- CRS handling, reprojection
def as_crs(value, name: str = "crs"):
    """A ``rasterio.crs.CRS`` from ``value`` (an EPSG string/int, WKT, PROJ string, a CRS object);
    None stays None.  Unknown or unparsable CRSs raise ValueError naming ``name``."""
    if value is None:
        return None
    rasterio = _import("rasterio", f"{name}=")
    from rasterio.crs import CRS

    if isinstance(value, CRS):
        return value
    if isinstance(value, bool) or not isinstance(value, (str, int, dict)) and not hasattr(value, "to_wkt"):
        raise TypeError(f"{name} must be a CRS (e.g. 'EPSG:32633', an EPSG code, WKT or a CRS object), got {describe(value)}")
    try:
        if isinstance(value, int):
            return CRS.from_epsg(value)
        if hasattr(value, "to_wkt") and not isinstance(value, (str, dict)):
            return CRS.from_wkt(value.to_wkt())
        return CRS.from_user_input(value)
    except (rasterio.errors.CRSError, ValueError) as e:
        raise ValueError(f"{name}={value!r} is not a known coordinate reference system ({e})") from None


def crs_label(crs) -> str:
    """Short human-readable name of a CRS ('EPSG:32633' when it has a code, else its WKT/string)."""
    if crs is None:
        return "None"
    try:
        epsg = crs.to_epsg()
    except Exception:
        epsg = None
    if epsg is not None:
        return f"EPSG:{epsg}"
    s = str(crs)
    return s if len(s) <= 80 else s[:77] + "..."


_REPROJECT_HINT = (
    "Bandwidths are distances: reproject the points with hp.kde.reproject_points(points, src_crs, dst_crs) "
    "and the window with Window.to_crs(crs) or Window.from_geotiff/from_vector(..., crs=...) to a projected "
    "CRS (e.g. the UTM zone of the study area; bandwidths then in metres)"
)


def check_search_crs(window, what: str = "the bandwidth search") -> None:
    """Refuse an automatic bandwidth choice on a window whose CRS is geographic (degrees): a degree of
    longitude is not a degree of latitude, so isotropic distances (and bandwidths) need a projected CRS."""
    crs = getattr(window, "crs", None)
    if crs_is_geographic(crs):
        raise ValueError(
            f"{what} needs a projected CRS, but the window's CRS ({crs_label(crs)}) is geographic "
            f"(longitude/latitude in degrees). {_REPROJECT_HINT}"
        )


def check_points_crs(points_crs, window, name: str = "points_crs"):
    """Check that the CRS declared for the points is the window's; never reprojects.

    Returns the parsed CRS (or None).  A window without a CRS takes the points' CRS on trust
    (nothing to compare with); different CRSs raise ValueError naming both and the way to reproject.
    """
    crs = as_crs(points_crs, name)
    if crs is None:
        return None
    wcrs = getattr(window, "crs", None)
    if wcrs is not None and crs != wcrs:
        raise ValueError(
            f"{name}={crs_label(crs)} is not the window's CRS ({crs_label(wcrs)}); points are never reprojected "
            f"silently: convert them with hp.kde.reproject_points(points, src_crs={crs_label(crs)!r}, "
            f"dst_crs=window.crs) (or read the window in the points' CRS with "
            f"Window.from_geotiff/from_vector(..., crs={crs_label(crs)!r}) or Window.to_crs)"
        )
    return crs


def _need_source_crs(src, what: str, fix: str):
    if src is None:
        raise ValueError(f"{what} has no CRS, so it cannot be reprojected to crs=; {fix}")


def source_crs(file_crs, given, path):
    """The CRS of a file's coordinates: the file's own, or ``source_crs=`` when the file declares none.
    A ``source_crs`` contradicting the file's CRS is refused naming both."""
    given = as_crs(given, "source_crs")
    if given is None:
        return file_crs
    if file_crs is not None and given != file_crs:
        raise ValueError(
            f"{path}: source_crs={crs_label(given)} contradicts the file's own CRS ({crs_label(file_crs)}); "
            "source_crs= is only for files that declare no CRS -- drop it (use crs= to reproject)"
        )
    return given


def reproject_points(points, src_crs, dst_crs) -> np.ndarray:
    """Reproject point coordinates from one CRS to another (explicit; nothing is reprojected silently).

    Parameters
    ----------
    points : array (n, 2)
        ``(x, y)`` coordinates in ``src_crs``; for a geographic CRS ``x`` is the **longitude** and ``y``
        the latitude, in degrees (traditional GIS order, whatever the CRS's official axis order).
    src_crs, dst_crs : str, int or CRS
        Source and target coordinate reference systems ('EPSG:4326', 4326, WKT, PROJ string or a
        ``rasterio.crs.CRS``).

    Returns
    -------
    ndarray (n, 2) float64
        The coordinates in ``dst_crs`` (metres for a metric projected CRS).

    Notes
    -----
    Uses ``rasterio.warp.transform`` (PROJ, through GDAL); needs ``pip install 'hphawkes_py[gis]'``.
    A point that cannot be transformed (outside the projection's domain) raises ValueError naming it.

    Examples
    --------
    Longitude and latitude to Web Mercator (metres):

    >>> lonlat = np.array([[0.0, 0.0], [1.0, 45.0]])
    >>> print(hp.kde.reproject_points(lonlat, "EPSG:4326", "EPSG:3857").round(1))
    [[      0.             0. ]
     [ 111319.5    5621521.5]]
    """
    p = _as_points(points, "points")
    src = as_crs(src_crs, "src_crs")
    dst = as_crs(dst_crs, "dst_crs")
    if src is None:
        raise ValueError("src_crs is required: the CRS of the points (e.g. 'EPSG:4326' for longitude/latitude)")
    if dst is None:
        raise ValueError("dst_crs is required: the CRS to reproject the points to (e.g. a UTM zone 'EPSG:326xx')")
    if len(p) == 0:
        return np.zeros((0, 2))
    from rasterio.warp import transform

    try:
        xs, ys = transform(src, dst, p[:, 0], p[:, 1])
        out = np.column_stack([np.asarray(xs, dtype=np.float64), np.asarray(ys, dtype=np.float64)])
        bad = ~np.isfinite(out).all(axis=1)
    except Exception as e:  # PROJ refused the batch: find the points it refuses, one by one
        out = np.full_like(p, np.nan)
        for i in range(len(p)):
            try:
                xi, yi = transform(src, dst, p[i:i + 1, 0], p[i:i + 1, 1])
                out[i] = xi[0], yi[0]
            except Exception:
                pass
        bad = ~np.isfinite(out).all(axis=1)
        if not bad.any():
            raise ValueError(f"points cannot be reprojected from {crs_label(src)} to {crs_label(dst)}: {e}") from None
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(
            f"points[{i}] = ({float(p[i, 0])!r}, {float(p[i, 1])!r}) cannot be reprojected from {crs_label(src)} to {crs_label(dst)} "
            f"(outside the projection's domain?); {int(bad.sum())} such point(s)"
        )
    return out


def reproject_mask(mask, x0, y0, cs, src_crs, dst_crs, cell_size=None):
    """Nearest-neighbour reprojection of a boolean north-up mask; returns (mask, x0, y0, cell_size).

    The target grid is GDAL's suggested warp output (``rasterio.warp.calculate_default_transform``):
    it covers the source's footprint, with square cells of ``cell_size`` target units (default
    GDAL's suggestion, about the source's resolution).  A target cell is inside when the source
    cell under its centre is inside (nearest neighbour: no new values, boundaries move by at most
    about one cell).
    """
    from rasterio.enums import Resampling
    from rasterio.transform import Affine
    from rasterio.warp import calculate_default_transform, reproject

    rows, cols = mask.shape
    left, bottom, right, top = x0, y0, x0 + cols * cs, y0 + rows * cs
    kw = {} if cell_size is None else {"resolution": (cell_size, cell_size)}
    t, w, h = calculate_default_transform(src_crs, dst_crs, cols, rows, left, bottom, right, top, **kw)
    if t is None or not (w and h):
        raise ValueError(f"the window cannot be reprojected from {crs_label(src_crs)} to {crs_label(dst_crs)}")
    dx, dy = float(t.a), -float(t.e)
    if not math.isclose(dx, dy, rel_tol=1e-9):
        # GDAL suggests square cells; force them if it did not (keep the footprint)
        d = math.sqrt(dx * dy)
        w2, h2 = int(math.ceil(w * dx / d)), int(math.ceil(h * dy / d))
        t, w, h = Affine(d, 0.0, t.c, 0.0, -d, t.f), w2, h2
    if w * h > MAX_CELLS:
        raise ValueError(f"the reprojected window would have {h} x {w} cells (more than {MAX_CELLS}); give a larger cell_size")
    src = np.ascontiguousarray(mask, dtype=np.uint8)
    dst = np.zeros((h, w), dtype=np.uint8)
    src_t = Affine(cs, 0.0, x0, 0.0, -cs, y0 + rows * cs)
    reproject(src, dst, src_transform=src_t, src_crs=src_crs, dst_transform=t, dst_crs=dst_crs,
              resampling=Resampling.nearest, src_nodata=None, dst_nodata=None)
    d = float(t.a)
    return dst.astype(bool), float(t.c), float(t.f) - h * d, d


def reproject_rings(rings, src_crs, dst_crs):
    """Reproject polygon rings, densified first (edges cut to 1/256 of the bounding box's diagonal) so
    that straight edges in the source CRS follow their curved image in the target CRS."""
    shapely = _import("shapely", "reprojecting polygons")
    allv = np.vstack(rings)
    diag = float(np.hypot(*(allv.max(axis=0) - allv.min(axis=0))))
    out = []
    for r in rings:
        ring = shapely.LinearRing(r) if len(r) >= 3 else None
        coords = np.asarray(shapely.segmentize(ring, diag / 256.0).coords)[:, :2] if ring is not None and diag > 0 else r
        out.append(reproject_points(coords, src_crs, dst_crs))
    return out
