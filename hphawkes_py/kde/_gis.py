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
    out = np.where(np.isfinite(v), v, nodata)
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
