"""Study-area windows (raster masks) and result rasters for :mod:`hphawkes_py.kde`.

A :class:`Window` is a boolean raster: ``mask[row, col]`` is True for cells inside the study area,
row 0 is the *top* row (as in ESRI ASCII grids), ``(x0, y0)`` is the lower-left corner of the
raster and ``cell_size`` the side of the square cells, all in the units of the point coordinates.
The study area is the union of the inside cells.
"""
from __future__ import annotations

import gzip
import io
import math
import numbers
import warnings
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .._validate import check_positive, describe
from ._coords import CELL_SIZE_RANGE, MAX_CELLS, _as_points, _raster_shape, check_cell_size
from ._polygon import check_rings, rasterise_rings
from ._gis import (_need_source_crs, as_crs, read_geotiff, read_vector_rings, reproject_mask, reproject_rings,
                   source_crs as _source_crs, write_geotiff)
from . import plot as _plot

__all__ = ["Window", "Raster", "read_asc"]

_ASC_KEYS = ("ncols", "nrows", "xllcorner", "yllcorner", "cellsize")


def _open_text(path: Path) -> io.TextIOBase:
    name = path.name.lower()
    if name.endswith(".gz"):
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="ascii", errors="strict")
    if name.endswith(".zip"):
        zf = zipfile.ZipFile(path)
        members = [m for m in zf.namelist() if m.lower().endswith(".asc")]
        if len(members) != 1:
            raise ValueError(
                f"{path}: a .zip window must contain exactly one .asc file; found {len(members)} ({members[:5]})"
            )
        return io.TextIOWrapper(zf.open(members[0]), encoding="ascii", errors="strict")
    return open(path, encoding="ascii", errors="strict")


#: characters of the grid body parsed at a time (about 350 k values of "-9999 "): the body is
#: never held as a whole string nor as one Python object per cell
_ASC_CHUNK = 1 << 21


def _asc_header(fh, path) -> tuple[dict, str | None]:
    header: dict[str, float] = {}
    first_data = None
    for lineno in range(1, 8):
        line = fh.readline()
        if not line:
            break
        parts = line.split()
        if not parts:
            continue
        key = parts[0].lower()
        if key[0].isalpha():
            if len(parts) != 2:
                raise ValueError(f"{path}: malformed header line {lineno}: {line.strip()!r} (expected 'key value')")
            if key in header:  # which of the two values is meant cannot be told
                raise ValueError(f"{path}: header key {parts[0]!r} appears twice (line {lineno} repeats it, "
                                 f"{header[key]!r} then {parts[1]!r}); keep one")
            try:
                header[key] = float(parts[1])
            except ValueError:
                raise ValueError(f"{path}: header {parts[0]!r} has non-numeric value {parts[1]!r}") from None
        else:
            first_data = line
            break
    for axis in ("x", "y"):
        if f"{axis}llcenter" in header and f"{axis}llcorner" in header:
            raise ValueError(f"{path}: the header gives both {axis}llcorner and {axis}llcenter; keep one (the "
                             "corner or the centre of the lower-left cell)")
    if "xllcenter" in header and "xllcorner" not in header:
        header["xllcorner"] = header.pop("xllcenter") - 0.5 * header.get("cellsize", 0.0)
    if "yllcenter" in header and "yllcorner" not in header:
        header["yllcorner"] = header.pop("yllcenter") - 0.5 * header.get("cellsize", 0.0)
    missing = [k for k in _ASC_KEYS if k not in header]
    if missing:
        raise ValueError(f"{path}: ESRI ASCII grid header lacks {missing} (found keys {sorted(header)})")
    ncols, nrows = header["ncols"], header["nrows"]
    if ncols != int(ncols) or nrows != int(nrows) or ncols < 1 or nrows < 1:
        raise ValueError(f"{path}: ncols/nrows must be positive integers, got {ncols}, {nrows}")
    if ncols * nrows > MAX_CELLS:
        raise ValueError(f"{path}: {int(nrows)} x {int(ncols)} cells exceeds the {MAX_CELLS} cells a window may have")
    cs = header["cellsize"]
    if not (cs > 0 and math.isfinite(cs)):
        raise ValueError(f"{path}: cellsize must be positive, got {cs}")
    lo, hi = CELL_SIZE_RANGE
    if not lo <= cs <= hi:
        raise ValueError(f"{path}: cellsize must be in [{lo:g}, {hi:g}], got {cs!r}: outside it the cell area "
                         "over- or underflows in float64; rescale the coordinates")
    for k in ("xllcorner", "yllcorner"):
        if not math.isfinite(header[k]):
            raise ValueError(f"{path}: {k} must be finite, got {header[k]}")
    return header, first_data


def _asc_values(fh, first_data, path, expected: int):
    """Yield the grid body as float64 arrays, ``_ASC_CHUNK`` characters at a time (cut at whitespace
    so no number is split), parsed by NumPy's C parser."""
    carry = first_data or ""
    done = 0
    while True:
        block = fh.read(_ASC_CHUNK)
        text = carry + block
        if block:
            cut = max(text.rfind(c) for c in " \n\t\r")
            if cut < 0:  # one giant token so far: keep reading
                carry = text
                continue
            chunk, carry = text[:cut], text[cut:]
        else:
            chunk, carry = text, ""
        chunk = chunk.strip()
        if chunk:  # (NumPy reads a blank string as [-1.0])
            try:
                vals = np.fromstring(chunk, dtype=np.float64, sep=" ")
            except ValueError:
                bad = next((i, t) for i, t in enumerate(chunk.split()) if not _is_number(t))
                k = done + bad[0]
                raise ValueError(
                    f"{path}: non-numeric value {bad[1][:30]!r} in the grid body (value number {k + 1})"
                ) from None
            if done + vals.size > expected:
                raise ValueError(f"{path}: the header says {expected} values, the body holds more")
            done += vals.size
            yield vals
        if not block:
            break
    if done != expected:
        raise ValueError(f"{path}: the header says {expected} values, the body holds {done}")


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def _read_asc(path, as_mask: bool):
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"window file not found: {path}")
    if path.is_dir():
        raise IsADirectoryError(f"{path}: is a folder, expected an ESRI ASCII grid file")
    with _open_text(path) as fh:
        header, first_data = _asc_header(fh, path)
        nrows, ncols = int(header["nrows"]), int(header["ncols"])
        nodata = header.get("nodata_value")
        out = np.empty(nrows * ncols, dtype=bool if as_mask else np.float64)
        pos = 0
        for vals in _asc_values(fh, first_data, path, nrows * ncols):
            if as_mask:
                inside = np.isfinite(vals)
                if nodata is not None:
                    inside &= vals != nodata
                out[pos:pos + vals.size] = inside
            else:
                out[pos:pos + vals.size] = vals
            pos += vals.size
    return out.reshape(nrows, ncols), header["xllcorner"], header["yllcorner"], header["cellsize"], nodata


def read_asc(path) -> tuple[np.ndarray, float, float, float, float | None]:
    """Read an ESRI ASCII grid (``.asc``, ``.asc.gz`` or a ``.zip`` holding one ``.asc``).

    The body is parsed numerically in chunks (no Python object per cell).

    Parameters
    ----------
    path : str or path-like
        The grid file.

    Returns
    -------
    values : ndarray of float64, shape (nrows, ncols)
        The cell values, row 0 = top row (NODATA cells keep the ``nodata`` value).
    x0, y0 : float
        Lower-left corner of the grid (coordinate units; ``xllcenter``/``yllcenter`` headers are
        converted to the corner).
    cell_size : float
        Side of the square cells (coordinate units).
    nodata : float or None
        The ``NODATA_value`` header, None when absent.

    Examples
    --------
    >>> _, mask_path = hp.datasets.load_redwood()
    >>> values, x0, y0, cell_size, nodata = hp.kde.read_asc(mask_path)
    >>> values.shape, x0, y0, cell_size, nodata
    ((128, 128), 0.0, 0.0, 0.0078125, -9999.0)
    """
    return _read_asc(path, as_mask=False)


def _check_finite_real(v, name: str) -> float:
    """A finite real number (bools and numeric strings refused)."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
        raise TypeError(f"{name} must be a finite real number, got {describe(v)}")
    if not math.isfinite(float(v)):
        raise ValueError(f"{name} must be finite, got {v!r}")
    return float(v)


#: the ESRI ASCII grid's number format (the header's NODATA_value and the body alike)
_ASC_FMT = "%.10g"


def _cells(k: int) -> str:
    return "1 cell holds" if k == 1 else f"{k} cells hold"


def _check_nodata(values: np.ndarray, nodata, fmt: str | None = None, *, allow_nan: bool = False) -> float:
    """``nodata`` checked for writing ``values`` (NaN cells become ``nodata``): a real number that
    no finite value equals -- as written, when the file rounds to ``fmt`` -- so that reading the
    file back loses no data cell."""
    if isinstance(nodata, (bool, np.bool_)) or not isinstance(nodata, numbers.Real):
        raise TypeError(f"nodata must be a real number, got {describe(nodata)}")
    nd = float(nodata)
    if not (math.isfinite(nd) or (allow_nan and math.isnan(nd))):
        allowed = "a finite number (or NaN)" if allow_nan else "a finite number"
        raise ValueError(f"nodata must be {allowed}, got {nodata!r}")
    if math.isnan(nd):
        return nd
    v = np.asarray(values, dtype=np.float64)
    # the values equal to nodata, or (written with fmt) within its rounding of nodata
    near = np.isfinite(v) & (np.abs(v - nd) <= (1e-9 * abs(nd) if fmt else 0.0))
    if fmt and near.any():
        near[near] = np.array([fmt % x for x in v[near]]) == fmt % nd
    if near.any():
        r, c = (int(i[0]) for i in np.nonzero(near))
        written = f" (written as {fmt % nd})" if fmt and v[r, c] != nd else ""
        raise ValueError(
            f"nodata={nodata!r} is a data value: {_cells(int(near.sum()))} it{written}, the first at row {r}, "
            f"column {c} ({float(v[r, c])!r}); reading the file back would lose them. Give a nodata value outside "
            f"the data (the finite values range from {float(np.nanmin(v)):.6g} to {float(np.nanmax(v)):.6g})"
        )
    return nd


def _write_asc(path, values: np.ndarray, x0: float, y0: float, cs: float, nodata: float = -9999.0) -> None:
    path = Path(path)
    values = np.asarray(values, dtype=np.float64)
    nodata = _check_nodata(values, nodata, _ASC_FMT)
    if np.isinf(values).any():
        r, c = (int(i[0]) for i in np.nonzero(np.isinf(values)))
        raise ValueError(f"the raster holds {int(np.isinf(values).sum())} infinite value(s) (the first at row {r}, "
                         f"column {c}): an ESRI ASCII grid has no infinity (write a GeoTIFF, or replace them)")
    rows, cols = values.shape
    v = np.where(np.isnan(values), nodata, values)
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    with opener(path, "wt") as fh:
        fh.write(
            f"ncols         {cols}\nnrows         {rows}\nxllcorner     {x0!r}\nyllcorner     {y0!r}\n"
            f"cellsize      {cs!r}\nNODATA_value  {_ASC_FMT % nodata}\n"
        )
        np.savetxt(fh, v, fmt=_ASC_FMT)


@dataclass(frozen=True, eq=False)
class Window:
    """A study area as a boolean raster.

    Parameters
    ----------
    mask : ndarray of bool (rows, cols)
        True inside; ``mask[0]`` is the top row (largest y).
    x0, y0 : float
        Lower-left corner of the raster (coordinate units).
    cell_size : float
        Side of the square cells (coordinate units).
    crs : rasterio.crs.CRS, optional
        Coordinate reference system (kept from GeoTIFF/vector files, written back by
        :meth:`Raster.to_geotiff`); None means planar coordinates in unknown units.

    See Also
    --------
    Window.rectangle, Window.from_asc, Window.from_polygon, Window.from_geotiff, Window.from_vector

    Examples
    --------
    >>> w = hp.kde.Window(np.ones((4, 5), bool), 0.0, 0.0, 0.25)
    >>> w
    Window(4 rows x 5 cols, cell_size=0.25, x0=0, y0=0, 20 inside cells, area=1.25)
    >>> w.contains(np.array([[0.5, 0.5], [2.0, 0.5]]))
    array([ True, False])
    >>> _, mask_path = hp.datasets.load_redwood()
    >>> hp.kde.Window.from_asc(mask_path).area
    1.0
    """

    mask: np.ndarray
    x0: float
    y0: float
    cell_size: float
    #: coordinate reference system (a ``rasterio.crs.CRS`` or anything with ``is_geographic``), or None
    crs: object = field(default=None, repr=False, compare=False)
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self):
        m = np.asarray(self.mask)
        if m.ndim != 2 or m.shape[0] < 1 or m.shape[1] < 1:
            raise ValueError(f"mask must be a non-empty 2-D array, got shape {m.shape}")
        if m.dtype != bool and not (np.issubdtype(m.dtype, np.integer) and np.isin(m, (0, 1)).all()):
            raise TypeError(f"mask must be boolean (True inside) or 0/1 integers, got dtype {m.dtype}")
        if m.size > MAX_CELLS:
            raise ValueError(f"mask has {m.size} cells, more than the {MAX_CELLS} a window may have")
        # our own read-only copy: the caller's array is neither aliased nor frozen
        m = np.array(m, dtype=bool, order="C", copy=True)
        if not m.any():
            raise ValueError("the window is empty: the mask has no inside (True) cells")
        for name in ("x0", "y0"):
            _check_finite_real(getattr(self, name), name)
        check_positive(self.cell_size, "cell_size")
        check_cell_size(float(self.cell_size))
        m.flags.writeable = False
        object.__setattr__(self, "mask", m)
        object.__setattr__(self, "x0", float(self.x0))
        object.__setattr__(self, "y0", float(self.y0))
        object.__setattr__(self, "cell_size", float(self.cell_size))

    # ---------------------------------------------------------------- constructors
    @classmethod
    def rectangle(cls, xmin, xmax, ymin, ymax, cell_size) -> "Window":
        """The rectangle ``[xmin, xmax] x [ymin, ymax]`` rasterised with square cells.

        The raster starts at ``(xmin, ymin)`` and has ``ceil(width / cell_size)`` columns, so the
        rectangle is covered exactly when the cell size divides the sides (otherwise the last
        column/row sticks out by less than one cell).
        """
        xmin, xmax, ymin, ymax = (_check_finite_real(v, name) for name, v in
                                  (("xmin", xmin), ("xmax", xmax), ("ymin", ymin), ("ymax", ymax)))
        if not xmax > xmin or not ymax > ymin:
            raise ValueError(f"empty rectangle: need xmax > xmin and ymax > ymin, got x [{xmin}, {xmax}], y [{ymin}, {ymax}]")
        cs = check_positive(cell_size, "cell_size")
        rows, cols = _raster_shape(xmax - xmin, ymax - ymin, cs, "the rectangle", slack=1e-9)
        return cls(np.ones((rows, cols), bool), float(xmin), float(ymin), cs)

    @classmethod
    def from_mask(cls, mask, x0, y0, cell_size) -> "Window":
        """A window from a boolean mask (True inside, row 0 = top) with lower-left corner ``(x0, y0)``."""
        return cls(np.asarray(mask), x0, y0, cell_size)

    @classmethod
    def from_polygon(cls, vertices, cell_size) -> "Window":
        """Rasterise a polygon: a cell is inside when its centre is inside the polygon.

        ``vertices`` is an (k, 2) array (closing vertex optional), or a list of such rings
        (even-odd rule, so holes are rings inside rings). The raster covers the bounding box.
        A ring that encloses no area (collinear or repeated vertices) and crossing edges (a ring
        that crosses itself, e.g. vertices out of order, or two overlapping rings) are refused:
        the even-odd rule would keep stray cells along a line, or only part of the intended area.
        """
        rings = vertices if isinstance(vertices, (list, tuple)) and len(vertices) and np.ndim(vertices[0]) == 2 else [vertices]
        rings = [_as_points(r, "vertices") for r in rings]
        for r in rings:
            if r.shape[0] < 3:
                raise ValueError(f"a polygon ring needs at least 3 (x, y) vertices, got shape {r.shape}")
        cs = check_positive(cell_size, "cell_size")
        check_rings(rings, "vertices")
        return cls(*rasterise_rings(rings, cs), cs)

    @classmethod
    def from_asc(cls, path) -> "Window":
        """Read an ESRI ASCII grid (``.asc``, ``.asc.gz`` or ``.zip`` of one ``.asc``); NODATA cells are outside.

        Parsed in chunks straight into the boolean mask: peak memory is about one byte per cell
        plus a few megabytes (the 12.9 M-cell eBird raster needs ~13 MB, not one Python string per cell).
        """
        mask, x0, y0, cs, _ = _read_asc(path, as_mask=True)
        if not mask.any():
            raise ValueError(f"{path}: every cell is NODATA, the window is empty")
        return cls(mask, x0, y0, cs)

    @classmethod
    def from_geotiff(cls, path, band: int = 1, *, crs=None, cell_size=None, source_crs=None) -> "Window":
        """Read a window from a GeoTIFF (needs the ``gis`` extra: ``pip install 'hphawkes_py[gis]'``).

        Cells holding the band's nodata value, NaN or zero are outside; every other cell is inside.
        The cell size and lower-left corner come from the affine transform (north-up, square cells:
        rotated or sheared transforms and rectangular cells are refused) and the CRS is kept as
        ``Window.crs``. A file without a CRS is read with ``crs=None`` and a warning that distances
        are taken in planar units.

        Parameters
        ----------
        path : str or Path
        band : int
            1-based band number.
        crs : str, int or CRS, optional
            Reproject the mask to this CRS (explicit opt-in; see :meth:`to_crs`: nearest neighbour on
            a new north-up grid of square cells). Default: keep the file's CRS and grid.
        cell_size : float, optional
            Side of the reprojected cells in ``crs`` units (only with ``crs=``; default GDAL's
            suggestion, about the file's resolution).
        source_crs : str, int or CRS, optional
            The CRS of a file that declares none (no warning then); refused when the file has a
            different one.
        """
        target = as_crs(crs, "crs")
        if cell_size is not None and target is None:
            raise ValueError("cell_size= is only used with crs= (the GeoTIFF's own cells are kept otherwise)")
        given = as_crs(source_crs, "source_crs")
        with warnings.catch_warnings():
            if given is not None:  # the user has said what the coordinates are
                warnings.filterwarnings("ignore", message=".*has no CRS", category=UserWarning)
            values, x0, y0, cs, nodata, src = read_geotiff(path, band)
        src = _source_crs(src, given, path)
        inside = np.isfinite(values) & (values != 0)
        if nodata is not None:
            inside &= values != nodata
        if not inside.any():
            raise ValueError(f"{path}: every cell is nodata or zero, the window is empty")
        w = cls(inside, x0, y0, cs, crs=src)
        if target is None:
            return w
        _need_source_crs(src, f"{path}", "give the file's CRS with source_crs= (e.g. source_crs='EPSG:4326')")
        return w.to_crs(target, cell_size=cell_size)

    @classmethod
    def from_vector(cls, path, cell_size, layer=None, *, crs=None, source_crs=None) -> "Window":
        """Rasterise the polygons of a GeoJSON file (or a Shapefile/GeoPackage when pyogrio or fiona
        is installed) with :meth:`from_polygon` (a cell is inside when its centre is in the union
        of the polygons). Needs shapely (``pip install 'hphawkes_py[gis]'``).

        Parameters
        ----------
        path : str or Path
        cell_size : float
            Side of the square cells, in the units of the window's CRS (the file's, or ``crs``'s
            when given: metres for a UTM zone).
        layer : str or int, optional
            Layer of a multi-layer source (Shapefile/GeoPackage readers only).
        crs : str, int or CRS, optional
            Reproject the polygons to this CRS before rasterising (explicit opt-in): the rings are
            densified (edges cut to 1/256 of the bounding box's diagonal) and their vertices
            transformed with ``rasterio.warp.transform``. The file must declare its CRS (or give
            ``source_crs``).
        source_crs : str, int or CRS, optional
            The CRS of a file that declares none (e.g. a GeoJSON file without a ``crs`` member:
            RFC 7946 GeoJSON is ``'OGC:CRS84'`` longitude/latitude); refused when the file has a
            different one.

        Invalid (e.g. self-intersecting) polygons are refused naming the file, the feature and
        shapely's explanation. The file's CRS (GeoJSON ``crs`` member or the driver's) is kept
        when rasterio can parse it.
        """

        target = as_crs(crs, "crs")
        rings, src = read_vector_rings(path, layer)
        src = _source_crs(src, source_crs, path)
        if target is not None:
            _need_source_crs(src, f"{path}", "give the file's CRS with source_crs= (e.g. source_crs='EPSG:4326')")
            rings = reproject_rings(rings, src, target)
            src = target
        cs = check_positive(cell_size, "cell_size")
        if target is not None:  # the transformed rings may cross where the valid originals did not
            check_rings(rings, f"{path} reprojected to {target}")
        # rings of shapely's (valid) union: no crossing, no empty ring
        return cls(*rasterise_rings(rings, cs), cs, crs=src)

    def to_crs(self, crs, *, cell_size=None) -> "Window":
        """This window reprojected to another CRS (explicit; windows are never reprojected silently).

        The mask is resampled with ``rasterio.warp.reproject`` by **nearest neighbour** (a target
        cell is inside when the source cell under its centre is inside; no partial cells) onto
        GDAL's suggested north-up grid covering the window's footprint
        (``rasterio.warp.calculate_default_transform``), with square cells. Boundaries move by at
        most about one cell; reprojecting there and back keeps the mask within one cell.

        Parameters
        ----------
        crs : str, int or CRS
            Target CRS ('EPSG:32633', 32633, WKT, a ``rasterio.crs.CRS``).
        cell_size : float, optional
            Side of the target cells in the target CRS's units (default GDAL's suggestion, about
            the current resolution).

        Returns
        -------
        Window
            With ``crs`` set to the target. Needs ``pip install 'hphawkes_py[gis]'``.
        """

        target = as_crs(crs, "crs")
        if target is None:
            raise ValueError("crs is required: the CRS to reproject the window to")
        if cell_size is not None:
            cell_size = check_positive(cell_size, "cell_size")
        _need_source_crs(self.crs, "the window",
                         "build it with its CRS (Window(mask, x0, y0, cell_size, crs=...) or source_crs= of from_geotiff/from_vector)")
        mask, x0, y0, cs = reproject_mask(self.mask, self.x0, self.y0, self.cell_size, self.crs, target, cell_size)
        if not mask.any():
            raise ValueError(f"the window reprojected to {target} has no inside cell; use a smaller cell_size")
        return type(self)(mask, x0, y0, cs, crs=target)

    # ---------------------------------------------------------------- geometry
    @property
    def shape(self) -> tuple[int, int]:
        return self.mask.shape

    @property
    def n_inside(self) -> int:
        """Number of inside cells."""
        return int(self._cached("n_inside", lambda: int(self.mask.sum())))

    @property
    def area(self) -> float:
        """Area of the study area (inside cells x cell area)."""
        return self.n_inside * self.cell_size**2

    @property
    def extent(self) -> tuple[float, float, float, float]:
        """(xmin, xmax, ymin, ymax) of the raster."""
        rows, cols = self.mask.shape
        return (self.x0, self.x0 + cols * self.cell_size, self.y0, self.y0 + rows * self.cell_size)

    def _cached(self, key, fn):
        if key not in self._cache:
            self._cache[key] = fn()
        return self._cache[key]

    def cell_index(self, points) -> tuple[np.ndarray, np.ndarray]:
        """(row, col) of the cell holding each point (may be out of range for points outside).

        Points on the raster's right/top edge belong to the last column/row.
        """
        p = _as_points(points)
        rows, cols = self.mask.shape
        fc = np.floor((p[:, 0] - self.x0) / self.cell_size)
        fr = np.floor((p[:, 1] - self.y0) / self.cell_size)
        xmax, ymax = self.extent[1], self.extent[3]
        fc = np.where(p[:, 0] == xmax, cols - 1, fc)
        fr = np.where(p[:, 1] == ymax, rows - 1, fr)
        with np.errstate(invalid="ignore"):
            col = np.clip(fc, -1, cols).astype(np.int64)
            row = (rows - 1 - np.clip(fr, -1, rows)).astype(np.int64)
        return row, col

    def contains(self, points) -> np.ndarray:
        """Boolean array: is each point in an inside cell."""
        row, col = self.cell_index(points)
        rows, cols = self.mask.shape
        ok = (row >= 0) & (row < rows) & (col >= 0) & (col < cols)
        out = np.zeros(len(row), bool)
        out[ok] = self.mask[row[ok], col[ok]]
        return out

    def cell_centres(self) -> np.ndarray:
        """(m, 2) centres of the inside cells, row-major (top row first)."""

        def make():
            r, c = np.nonzero(self.mask)
            rows = self.mask.shape[0]
            x = self.x0 + (c + 0.5) * self.cell_size
            y = self.y0 + (rows - 1 - r + 0.5) * self.cell_size
            return np.column_stack([x, y])

        return self._cached("centres", make)

    def row_runs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Runs of inside cells per row: ``ptr`` (rows+1,), ``c0``, ``c1`` (half-open column ranges)."""

        def make():
            m = self.mask
            rows, cols = m.shape
            padded = np.zeros((rows, cols + 2), np.int8)
            padded[:, 1:-1] = m
            d = np.diff(padded, axis=1)
            sr, sc = np.nonzero(d == 1)
            er, ec = np.nonzero(d == -1)
            # np.nonzero is row-major, so starts and ends pair up in order
            ptr = np.zeros(rows + 1, np.int64)
            np.add.at(ptr, sr + 1, 1)
            return np.cumsum(ptr), sc.astype(np.int64), ec.astype(np.int64)

        return self._cached("runs", make)

    def row_bands(self) -> tuple:
        """Maximal bands of consecutive rows with identical runs of inside cells.

        Returns ``band_r0`` (first row, top), ``band_r1`` (last row + 1), ``band_ptr`` (bands+1,) into
        ``c0``/``c1`` (half-open column ranges of the band's runs) and ``row_band`` (rows,). The mass of a
        separable kernel over a band is (1-D mass of its y-range) x (sum of 1-D masses of its runs), so a
        rectangle is ONE band whatever its size.
        """

        def make():
            ptr, c0, c1 = self.row_runs()
            rows = self.mask.shape[0]
            starts = [0]
            for r in range(1, rows):
                a0, a1, b0, b1 = ptr[r - 1], ptr[r], ptr[r], ptr[r + 1]
                same = (a1 - a0) == (b1 - b0) and np.array_equal(c0[a0:a1], c0[b0:b1]) and np.array_equal(c1[a0:a1], c1[b0:b1])
                if not same:
                    starts.append(r)
            r0 = np.array(starts, np.int64)
            r1 = np.append(r0[1:], rows).astype(np.int64)
            counts = ptr[r0 + 1] - ptr[r0]
            bptr = np.zeros(len(r0) + 1, np.int64)
            np.cumsum(counts, out=bptr[1:])
            sel = np.concatenate([np.arange(ptr[r], ptr[r + 1]) for r in r0]) if len(r0) else np.zeros(0, np.int64)
            sel = sel.astype(np.int64)
            row_band = np.repeat(np.arange(len(r0), dtype=np.int64), r1 - r0)
            return r0, r1, bptr, c0[sel].copy(), c1[sel].copy(), row_band

        return self._cached("bands", make)

    def boundary_distance(self, points) -> np.ndarray:
        """Lower bound on the distance from each (inside) point to the outside of the window.

        Outside means NODATA cells and everything beyond the raster. Computed from a Euclidean
        distance transform of the mask padded with one outside cell: for a point in cell c,
        ``(edt(c) - sqrt(2)) * cell_size`` (never negative) bounds the true distance from below.
        """
        from scipy.ndimage import distance_transform_edt

        edt = self._cached(
            "edt", lambda: distance_transform_edt(np.pad(self.mask, 1, constant_values=False))[1:-1, 1:-1]
        )
        row, col = self.cell_index(points)
        return np.maximum(edt[row, col] - math.sqrt(2.0), 0.0) * self.cell_size

    def to_asc(self, path) -> None:
        """Write the mask as an ESRI ASCII grid (1 inside, -9999 outside)."""
        _write_asc(path, np.where(self.mask, 1.0, np.nan), self.x0, self.y0, self.cell_size)

    def __repr__(self) -> str:
        rows, cols = self.mask.shape
        return (
            f"Window({rows} rows x {cols} cols, cell_size={self.cell_size:g}, x0={self.x0:g}, y0={self.y0:g}, "
            f"{self.n_inside} inside cells, area={self.area:g}" + ("" if self.crs is None else f", crs={self.crs}") + ")"
        )


@dataclass(frozen=True, eq=False)
class Raster:
    """A surface on a raster: ``values[row, col]`` (row 0 = top), NaN outside the window.

    The surfaces of :mod:`hphawkes_py.kde` (intensities, standard errors, log relative risks)
    come as Rasters; the parameters are also its attributes.

    Parameters
    ----------
    values : ndarray of shape (rows, cols)
        The surface, in the units of what it holds (an intensity: events per unit area).
    x0, y0 : float
        Lower-left corner of the raster (coordinate units).
    cell_size : float
        Side of the square cells (coordinate units).
    points : ndarray of shape (n, 2), optional
        The sample points, drawn by :meth:`plot`.
    crs : rasterio.crs.CRS, optional
        The window's coordinate reference system, written by :meth:`to_geotiff`.

    Examples
    --------
    >>> r = hp.kde.Raster(np.array([[1.0, 2.0], [np.nan, 3.0]]), 0.0, 0.0, 0.5)
    >>> r
    Raster(2 x 2, cell_size=0.5, 3 finite cells, integral=1.5)
    >>> r.extent
    (0.0, 1.0, 0.0, 1.0)
    """

    values: np.ndarray
    x0: float
    y0: float
    cell_size: float
    points: np.ndarray | None = field(default=None, repr=False)
    crs: object = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        v = np.asarray(self.values)
        if v.ndim != 2 or v.size == 0 or v.dtype.kind not in "fiu":
            raise ValueError(f"values must be a non-empty 2-D array of numbers, got {describe(self.values)}")
        object.__setattr__(self, "x0", _check_finite_real(self.x0, "x0"))
        object.__setattr__(self, "y0", _check_finite_real(self.y0, "y0"))
        object.__setattr__(self, "cell_size", check_positive(self.cell_size, "cell_size"))
        check_cell_size(self.cell_size)
        if self.points is not None:
            object.__setattr__(self, "points", _as_points(self.points, "points"))

    @property
    def extent(self) -> tuple[float, float, float, float]:
        rows, cols = self.values.shape
        return (self.x0, self.x0 + cols * self.cell_size, self.y0, self.y0 + rows * self.cell_size)

    def integral(self) -> float:
        """Sum over the finite cells of value x cell area."""
        return float(np.nansum(self.values) * self.cell_size**2)

    def to_asc(self, path, nodata: float = -9999.0) -> None:
        """Write an ESRI ASCII grid (NaN cells as ``nodata``); ``.gz`` paths are gzipped.

        Values are written to 10 significant digits.  ``nodata`` (a finite number) must differ from
        every value as written, and infinite values are refused (the format has none): a
        ``ValueError`` says which cell, rather than a file whose data cells read back as NODATA.
        """
        _write_asc(path, self.values, self.x0, self.y0, self.cell_size, nodata)

    def to_geotiff(self, path, nodata: float = -9999.0) -> None:
        """Write a single-band float64 GeoTIFF with the window's transform and CRS (NaN cells as
        ``nodata``); values, infinities included, round-trip exactly. Needs ``pip install
        'hphawkes_py[gis]'``.

        ``nodata`` (a finite number, or NaN) must not occur among the values: a ``ValueError``
        says which cell holds it, rather than a file whose data cell reads back as nodata.
        """
        nodata = _check_nodata(self.values, nodata, allow_nan=True)
        write_geotiff(path, self.values, self.x0, self.y0, self.cell_size, self.crs, nodata)

    def plot(self, ax=None, *, points: bool = True, cmap: str = "viridis", colorbar: bool = True, **kwargs):
        """Draw the surface (see :func:`hphawkes_py.kde.plot.plot_surface`); returns the Axes."""
        return _plot.plot_surface(self, ax, points=points, cmap=cmap, colorbar=colorbar, **kwargs)

    def __repr__(self) -> str:
        rows, cols = self.values.shape
        finite = np.isfinite(self.values)
        return (
            f"Raster({rows} x {cols}, cell_size={self.cell_size:g}, {int(finite.sum())} finite cells, "
            f"integral={self.integral():.6g})"
        )
