"""SaTScan's data sources: the CSV, dBase and shapefile inputs its GUI import wizard describes in a
parameter file with ``<File>-SourceType``, ``-SourceFieldMap``, ``-SourceDelimiter``,
``-SourceGrouper``, ``-SourceSkip``, ``-SourceFirstRowHeader`` and ``-SourceLinelistFieldMap``.

A source is read as SaTScan 10.3 reads it (``calculation/satscan_data/DataSource.cpp``) and its
records are handed on in the field order of SaTScan's native file of that kind (e.g. a case file's
``<location id> <#cases> <date> <covariates...>``), so the readers of the native files check and use
them unchanged.

* **CSV** (``SourceType=0``): one record a line, fields split at the one-character delimiter (a blank
  or empty delimiter: any run of white space) with the one-character grouper quoting fields (a
  doubled grouper inside a quoted field is a literal grouper), every field trimmed; ``SourceSkip``
  lines, and then the header line with ``SourceFirstRowHeader=y``, are passed over; lines with no
  non-empty field are blank and skipped.
* **dBase** (``SourceType=1``): the records of the ``.dbf`` table (read with pyogrio), date fields as
  ``YYYY/MM/DD``.
* **Shapefile** (``SourceType=2``): the ``.dbf`` attributes of each shape, with the shape's point (a
  polygon: its centroid) available through ``shapeX`` / ``shapeY``.

The field map lists, for each field of the native file in order, the 1-based column of the source
that fills it, or one of SaTScan's generated values: ``oneCount`` (1), ``generatedId``
(``location<record number>``), ``unspecifiedPopDate`` (``unspecified``), ``shapeX`` and ``shapeY``
(SaTScan's ``ShapeFileDataSource`` gives the point's *y* for ``shapeX`` and its *x* for ``shapeY``:
the latitude and longitude of a lat/long coordinates file, in that order), or nothing (a field
left out, e.g. the date of an undated file). Without a field map the source's own columns are the
native fields. The line-list map ``column:type:"label"`` names 0-based source columns carried into
the cluster line list (:mod:`hphawkes_py.scan.linelist`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["DataSource", "read_source"]

#: ``SourceType`` codes (SaTScan's ``enum SourceType``; 3, Excel, is not read by SaTScan's engine)
SOURCE_TYPES = {"0": "csv", "1": "dbase", "2": "shapefile"}
#: field-map tokens of SaTScan's generated values (``IniParameterSpecification``)
GENERATED = ("oneCount", "generatedId", "unspecifiedPopDate", "shapeX", "shapeY")
#: line-list column types (SaTScan's ``enum LinelistType``)
LINELIST_TYPES = {0: "individual_id", 1: "descriptive_latitude", 2: "descriptive_longitude", 3: "general",
                  4: "categorical", 5: "continuous", 6: "discrete"}
#: the keys of one source: ``<File>-<suffix>``
SOURCE_KEYS = ("SourceType", "SourceFieldMap", "SourceDelimiter", "SourceGrouper", "SourceSkip",
               "SourceFirstRowHeader", "SourceLinelistFieldMap")


@dataclass(frozen=True)
class DataSource:
    """One input file and how SaTScan reads it.

    Parameters
    ----------
    path : Path
        The file (a shapefile's ``.shp``).
    kind : {"csv", "dbase", "shapefile"}
        The source type.
    field_map : tuple
        Per native field, in order: a 1-based source column (int) or a token of ``GENERATED``;
        empty: the source's columns as they are.
    delimiter, grouper : str
        CSV only: one character each (a blank delimiter: white space).
    skip : int
        CSV only: lines passed over at the top.
    header : bool
        CSV only: the line after the skipped ones holds column names.
    linelist : tuple of (int, int, str)
        ``(0-based column, line-list type, label)`` of the columns carried into the line list.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from hphawkes_py.scan import DataSource, read_source
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "cases.csv").write_text("id,n,day\\nzoneA,3,2020/1/5\\n")
    >>> src = DataSource(d / "cases.csv", "csv", field_map=(1, 2, 3), delimiter=",", header=True)
    >>> read_source(src)
    [(2, ['zoneA', '3', '2020/1/5'])]
    """

    path: Path
    kind: str = "csv"
    field_map: tuple = ()
    delimiter: str = " "
    grouper: str = '"'
    skip: int = 0
    header: bool = False
    linelist: tuple = field(default=())

    def __str__(self) -> str:  # messages name the file, as for SaTScan's native files
        return str(self.path)

    def __post_init__(self):
        if not isinstance(self.path, (str, Path)):
            raise TypeError(f"path must be a str or Path, got {type(self.path).__name__} {self.path!r}")
        object.__setattr__(self, "path", Path(self.path))
        if self.kind not in ("csv", "dbase", "shapefile"):
            raise ValueError(f"kind must be 'csv', 'dbase' or 'shapefile', got {self.kind!r}")
        for i, t in enumerate(self.field_map):
            ok = (isinstance(t, int) and not isinstance(t, bool) and t >= 1) or t in GENERATED or t is None
            if not ok:
                raise ValueError(f"field_map[{i}] = {t!r} must be a 1-based column, None or one of {GENERATED}")
            if t in ("shapeX", "shapeY") and self.kind != "shapefile":
                raise ValueError(f"field_map[{i}] = {t!r} is for shapefile sources only (kind={self.kind!r})")
        if self.kind == "shapefile" and not self.field_map:
            raise ValueError("a shapefile source needs a field_map (SaTScan requires SourceFieldMap for shapefiles)")
        for name in ("delimiter", "grouper"):
            if not isinstance(getattr(self, name), str) or len(getattr(self, name)) > 1:
                raise ValueError(f"{name} must be one character (or empty), got {getattr(self, name)!r}")
        if not self.grouper:
            object.__setattr__(self, "grouper", '"')
        if isinstance(self.skip, bool) or not isinstance(self.skip, int) or self.skip < 0:
            raise ValueError(f"skip must be a whole number >= 0, got {self.skip!r}")
        for i, item in enumerate(self.linelist):
            if (not isinstance(item, tuple) or len(item) != 3 or not isinstance(item[0], int) or item[0] < 0
                    or item[1] not in LINELIST_TYPES or not isinstance(item[2], str)):
                raise ValueError(f"linelist[{i}] = {item!r} must be (0-based column, type in "
                                 f"{sorted(LINELIST_TYPES)}, label)")


def _unquote(s: str) -> str:
    """A value the GUI wrote in double quotes (``" "``) without them."""
    return s[1:-1] if len(s) >= 2 and s[0] == s[-1] == '"' else s


def parse_field_map(text: str, where: str) -> tuple:
    """``SourceFieldMap``: comma-separated 1-based columns, generated-value tokens or blanks."""
    out = []
    for tok in (t.strip() for t in text.split(",")):
        if tok in GENERATED:
            out.append(tok)
        elif tok == "":
            out.append(None)
        else:
            try:
                col = int(tok)
            except ValueError:
                raise ValueError(f"{where}: item {tok!r} is not a column number or one of {GENERATED}") from None
            if col < 1:
                raise ValueError(f"{where}: column {col} must be >= 1 (columns are counted from 1)")
            out.append(col)
    return tuple(out)


def parse_linelist_map(text: str, where: str) -> tuple:
    """``SourceLinelistFieldMap``: ``column:type:"label"`` items, comma separated (labels quoted)."""
    items = _split_grouped(text, ",", '"', keep_quotes=True)
    out = []
    for it in items:
        parts = _split_grouped(it.strip(), ":", '"')
        if len(parts) != 3:
            raise ValueError(f"{where}: item {it!r} is not column:type:\"label\"")
        try:
            col, typ = int(parts[0]), int(parts[1])
        except ValueError:
            raise ValueError(f"{where}: item {it!r}: column and type must be whole numbers") from None
        if col < 0 or typ not in LINELIST_TYPES:
            raise ValueError(f"{where}: item {it!r}: column must be >= 0 (0-based) and type one of "
                             f"{sorted(LINELIST_TYPES)}")
        out.append((col, typ, parts[2]))
    return tuple(out)


def source_from_prm(values: dict, key: str, path: Path, bad) -> DataSource | None:
    """The :class:`DataSource` the ``<key>-Source...`` settings describe for file ``path`` (None:
    no such settings, SaTScan's native white-space separated file). ``bad(key, why)`` makes the
    error naming a setting."""
    given = {s: values[f"{key}-{s}"] for s in SOURCE_KEYS if f"{key}-{s}" in values}
    if not given:
        return None
    kind = SOURCE_TYPES.get(given.get("SourceType", "0") or "0")
    if kind is None:
        raise bad(f"{key}-SourceType", "must be 0 (CSV), 1 (dBase) or 2 (shapefile)")
    fmap = parse_field_map(given["SourceFieldMap"], f"{key}-SourceFieldMap") if given.get("SourceFieldMap") else ()
    if kind == "shapefile" and not fmap:
        raise bad(f"{key}-SourceFieldMap", "is required for a shapefile source (as in SaTScan)")
    if kind != "shapefile" and any(t in ("shapeX", "shapeY") for t in fmap):
        raise bad(f"{key}-SourceFieldMap", "uses shapeX/shapeY, which only a shapefile source (SourceType=2) has")
    opts = {}
    if kind == "csv":
        delim = _unquote(given.get("SourceDelimiter", "") or "")
        group = _unquote(given.get("SourceGrouper", "") or "") or '"'
        for k, val in (("SourceDelimiter", delim), ("SourceGrouper", group)):
            if len(val) > 1:
                raise bad(f"{key}-{k}", "must be one character")
        skip = given.get("SourceSkip", "0") or "0"
        if not skip.isdigit():
            raise bad(f"{key}-SourceSkip", "must be a whole number >= 0")
        head = (given.get("SourceFirstRowHeader", "n") or "n").lower()
        if head not in ("y", "n", "yes", "no", "1", "0"):
            raise bad(f"{key}-SourceFirstRowHeader", "must be y or n")
        opts = dict(delimiter=delim or " ", grouper=group, skip=int(skip), header=head in ("y", "yes", "1"))
    ll = given.get("SourceLinelistFieldMap", "")
    linelist = parse_linelist_map(ll, f"{key}-SourceLinelistFieldMap") if ll else ()
    return DataSource(path, kind, field_map=fmap, linelist=linelist, **opts)


def _split_grouped(s: str, delim: str, grouper: str, keep_quotes: bool = False) -> list:
    """Split ``s`` at ``delim`` outside ``grouper`` quotes (a doubled grouper: a literal one), as
    boost's ``escaped_list_separator`` with no escape character does."""
    out, cur, quoted, i = [], [], False, 0
    while i < len(s):
        c = s[i]
        if c == grouper:
            if quoted and s[i + 1:i + 2] == grouper:
                cur.append(grouper)
                i += 2
                continue
            quoted = not quoted
            if keep_quotes:
                cur.append(c)
        elif not quoted and (c == delim if delim.strip() else c.isspace()):
            out.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    if quoted:
        raise ValueError(f"unterminated {grouper} group in {s!r}")
    out.append("".join(cur))
    return out


def _csv_records(src: DataSource):
    """``[(line number, fields)]`` of a CSV source (blank lines and the skipped/header lines out)."""
    white = not src.delimiter.strip()
    skip = src.skip + (1 if src.header else 0)
    recs, blanks = [], 0
    try:
        text = src.path.read_text(encoding="utf-8-sig", errors="strict")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{src.path}: not a text file ({exc.reason} at byte {exc.start})") from None
    for lineno, line in enumerate(text.splitlines(), 1):
        if lineno <= skip:
            continue
        try:
            vals = [v.strip() for v in _split_grouped(line, src.delimiter, src.grouper)]
        except ValueError as exc:
            raise ValueError(f"{src.path}:{lineno}: unable to parse the CSV line ({exc})") from None
        if white:  # runs of white space are one delimiter
            vals = [v for v in vals if v]
        if not any(vals):
            blanks += 1
            continue
        # SaTScan's generated ids count the lines read, skipped and header lines included, less the blank ones
        recs.append((lineno, lineno - blanks, vals))
    return recs


def _format(v) -> str:
    """A dBase value as the text SaTScan reads (dates ``YYYY/MM/DD``; no value: empty)."""
    import datetime

    import numpy as np

    if v is None or (isinstance(v, float) and v != v):
        return ""
    if isinstance(v, (np.datetime64,)):
        v = v.astype("datetime64[D]").item()
    if isinstance(v, (datetime.date, datetime.datetime)):
        return f"{v.year:04d}/{v.month:02d}/{v.day:02d}"
    if isinstance(v, (float, np.floating)):
        return str(int(v)) if float(v).is_integer() else repr(float(v))
    if isinstance(v, bytes):
        return v.decode("latin-1").strip()
    return str(v).strip()


def _table_records(src: DataSource):
    """``[(record number, fields)]`` of a dBase table or shapefile (shapefile: the point's x and y
    as fields 0 and 1 ahead of the attributes, as SaTScan numbers them)."""
    from .geometry import _need_pyogrio

    _need_pyogrio(f"the {'dBase' if src.kind == 'dbase' else 'shapefile'} source {src.path}")
    import pyogrio.raw
    import shapely

    if not src.path.is_file():
        raise FileNotFoundError(f"data source not found: {src.path}")
    try:
        meta, _, geom, fields = pyogrio.raw.read(src.path, read_geometry=src.kind == "shapefile")
    except Exception as exc:  # GDAL's own error types vary with its version
        raise ValueError(f"{src.path}: not a readable {src.kind} file ({exc})") from None
    n = len(fields[0]) if len(fields) else (0 if geom is None else len(geom))
    cols = [[_format(v) for v in f] for f in fields]
    xy = None
    if src.kind == "shapefile":
        shapes = shapely.from_wkb(geom)
        kinds = set(shapely.get_type_id(shapes).tolist())
        if not kinds <= {0, 3, 6}:  # points, polygons, multipolygons (SaTScan: point and polygon files)
            raise ValueError(f"{src.path}: shape type {meta.get('geometry_type')} is not supported (points or "
                             f"polygons)")
        pts = shapely.centroid(shapes)
        xy = (shapely.get_x(pts), shapely.get_y(pts))
    recs = []
    for r in range(n):
        row = [c[r] for c in cols]
        if xy is not None:
            row = [f"{xy[0][r]:f}", f"{xy[1][r]:f}"] + row
        recs.append((r + 1, r + 1, row))
    return recs


def raw_records(src: DataSource):
    """``[(record number, generated-id number, source fields)]`` before the field map (CSV: line
    numbers)."""
    return _csv_records(src) if src.kind == "csv" else _table_records(src)


def read_source(src: DataSource, what: str = "input", min_cols: int = 1):
    """The records of a data source in the field order of SaTScan's native file, as SaTScan reads them.

    Parameters
    ----------
    src : DataSource
        The file and how to read it.
    what : str
        The kind of file, for messages ("case", "control", "population", "geo", ...).
    min_cols : int
        Fields every record needs after the field map (a shorter record is refused, naming the
        file and the record).

    Returns
    -------
    list of (int, list of str)
        ``(record number, fields)`` per record: the line of a CSV file (blank lines and the skipped
        and header lines left out) or the record of a table (from 1).

    Examples
    --------
    A semicolon file with quoted names, a line of meta data and a header; the coordinates file's
    fields (id, x, y) are its columns 3, 1 and 2:

    >>> import tempfile, pathlib
    >>> from hphawkes_py.scan import DataSource, read_source
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> text = "exported by hand\\nx;y;name\\n1.5;2;#Zone A#\\n\\n3;4.25;#Zone ##B###\\n"
    >>> _ = (d / "geo.txt").write_text(text)
    >>> src = DataSource(d / "geo.txt", "csv", field_map=(3, 1, 2), delimiter=";", grouper="#", skip=1,
    ...                  header=True)
    >>> read_source(src, "geo", 3)
    [(3, ['Zone A', '1.5', '2']), (5, ['Zone #B#', '3', '4.25'])]
    """
    if not isinstance(src, DataSource):
        raise TypeError(f"src must be a DataSource, got {type(src).__name__}")
    out = []
    for recno, nonblank, raw in raw_records(src):
        if not src.field_map:
            fields = raw
        else:
            fields = []
            for tok in src.field_map:
                if tok is None:
                    continue  # SaTScan strips blank mappings (a date of an undated file)
                if tok == "oneCount":
                    val = "1"
                elif tok == "generatedId":
                    val = f"location{nonblank}"
                elif tok == "unspecifiedPopDate":
                    val = "unspecified"
                elif tok == "shapeX":
                    val = raw[1]
                elif tok == "shapeY":
                    val = raw[0]
                else:
                    col = tok - 1 + (2 if src.kind == "shapefile" else 0)
                    val = raw[col] if col < len(raw) else None
                    if val == "" and src.kind == "shapefile":  # SaTScan's shapefile source: empty is missing
                        val = None
                if val is None:
                    break  # the record ends at the first missing mapped value (SaTScan's GetNumValues)
                fields.append(val)
        if len(fields) < min_cols:
            raise ValueError(f"{src.path}:{recno}: the {what} file needs at least {min_cols} fields, got "
                             f"{fields!r} (after {src.kind} field map {list(src.field_map)})")
        out.append((recno, fields))
    if not out:
        raise ValueError(f"{what} file {src.path} holds no records")
    return out
