"""Results -> plain values the R package decodes exactly, and R buffers -> NumPy arrays.

The R package never lets reticulate convert NumPy or pandas objects (reticulate 1.28, the
Debian version, cannot use the NumPy 2 C API). Instead:

* R -> Python: R sends a numeric vector as the raw bytes of its little-endian doubles
  (``writeBin``) plus its ``dim``; :func:`array_from_r` rebuilds a C-contiguous float64
  (or int64 / bool) array, undoing R's column-major order. :func:`frame_from_r` builds a
  pandas DataFrame from named columns.
* Python -> R: :func:`encode` walks a result (ndarray, DataFrame, Series, dataclass, dict,
  list, NumPy scalar, ...) and returns nested dicts/lists of Python scalars and strings.
  Numeric arrays travel as base64 of little-endian float64 / int32 in **Fortran order**, so
  R can ``readBin`` them and set ``dim`` directly. Every value round-trips bit for bit.

Tagged dicts carry ``"__hp__"``: ``"array"``, ``"data.frame"``, ``"series"``, ``"record"``,
``"list"`` or ``"object"``; the R decoder is ``hphawkes:::.hp_decode``.
"""
from __future__ import annotations

import base64
import dataclasses
from collections.abc import Mapping

import numpy as np

__all__ = ["encode", "array_from_r", "frame_from_r", "describe_object", "attributes"]

_INT32_MIN, _INT32_MAX = -(2**31) + 1, 2**31 - 1  # R's NA_integer_ is -2^31


def array_from_r(buffer, dims, dtype: str = "float64") -> np.ndarray:
    """Rebuild an array that R sent as raw bytes.

    Parameters
    ----------
    buffer : bytes or bytearray
        ``writeBin(as.double(x), raw(), endian = "little")`` (``dtype="float64"``) or
        ``writeBin(as.integer(x), raw(), size = 4, endian = "little")`` (``"int64"``, ``"int32"``,
        ``"bool"``; R logicals are sent as integers 0/1).
    dims : list of int
        R's ``dim(x)`` (or ``length(x)`` for a vector). The data are in R's column-major order.
    dtype : {"float64", "int64", "int32", "bool"}

    Returns
    -------
    ndarray
        C-contiguous, owning its memory, with shape ``dims``.
    """
    dims = [int(d) for d in (dims if isinstance(dims, (list, tuple)) else [dims])]
    if dtype == "float64":
        flat = np.frombuffer(bytes(buffer), dtype="<f8")
        out_dtype = np.float64
    elif dtype in ("int64", "int32", "bool"):
        flat = np.frombuffer(bytes(buffer), dtype="<i4")
        out_dtype = {"int64": np.int64, "int32": np.int32, "bool": np.bool_}[dtype]
    else:
        raise ValueError(f"dtype must be 'float64', 'int64', 'int32' or 'bool', got {dtype!r}")
    n = int(np.prod(dims)) if dims else 1
    if flat.size != n:
        raise ValueError(f"buffer holds {flat.size} values but dims {dims} need {n}")
    arr = flat.reshape(dims, order="F") if len(dims) > 1 else flat.reshape(dims)
    return np.ascontiguousarray(arr.astype(out_dtype, copy=False)).copy()


def frame_from_r(columns: Mapping, names=None):
    """Build a pandas DataFrame from ``{name: ndarray or list}`` sent by R (column order kept)."""
    import pandas as pd

    names = list(names) if names is not None else list(columns)
    seen = set()
    twice = [n for n in names if n in seen or seen.add(n)]
    if twice:
        # a dict keeps one column per name: the other would be lost, or read twice
        raise ValueError(f"column names must be distinct, got {twice[0]!r} more than once in {names}")
    data = {}
    for name in names:
        value = columns[name]
        if isinstance(value, np.ndarray):
            data[name] = value
        elif isinstance(value, (list, tuple)):
            data[name] = list(value)
        else:  # a single value (R vector of length 1)
            data[name] = [value]
    return pd.DataFrame(data, columns=names)


def _b64(arr: np.ndarray, dtype: str) -> str:
    return base64.b64encode(np.asarray(arr, dtype=dtype).ravel(order="F").tobytes()).decode("ascii")


def _encode_array(arr: np.ndarray):
    arr = np.asarray(arr)
    dim = [int(d) for d in arr.shape]
    kind = arr.dtype.kind
    if kind == "f":
        return {"__hp__": "array", "type": "double", "dim": dim, "b64": _b64(arr, "<f8")}
    if kind in "iu":
        if arr.size == 0 or (int(arr.min()) >= _INT32_MIN and int(arr.max()) <= _INT32_MAX):
            return {"__hp__": "array", "type": "integer", "dim": dim, "b64": _b64(arr, "<i4")}
        return {"__hp__": "array", "type": "double", "dim": dim, "b64": _b64(arr, "<f8")}
    if kind == "b":
        return {"__hp__": "array", "type": "logical", "dim": dim, "b64": _b64(arr, "<i4")}
    if kind in "US":
        return {"__hp__": "array", "type": "character", "dim": dim,
                "values": [str(v) for v in arr.ravel(order="F")]}
    if kind == "M":  # datetimes -> ISO strings
        return {"__hp__": "array", "type": "character", "dim": dim,
                "values": [str(v) for v in arr.ravel(order="F")]}
    if kind == "O":
        flat = arr.ravel(order="F")
        if all(isinstance(v, str) for v in flat):
            return {"__hp__": "array", "type": "character", "dim": dim, "values": list(flat)}
        if all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in flat):
            return _encode_array(flat.astype(np.float64).reshape(arr.shape, order="F"))
        return {"__hp__": "list", "dim": dim, "items": [encode(v) for v in flat]}
    raise TypeError(f"cannot encode an array of dtype {arr.dtype} for R")


def _encode_index(index):
    import pandas as pd

    if isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1:
        return None
    return _encode_array(np.asarray(index.astype(object) if index.dtype.kind == "O" else index))


def encode(obj, _depth: int = 0):
    """Convert ``obj`` to nested plain Python values that reticulate passes to R unchanged.

    Handles None, bool, int, float, str, NumPy scalars and arrays, pandas DataFrame / Series /
    Index, dataclasses (as ``"record"`` with their fields), mappings (str keys), lists and
    tuples. Anything else becomes ``{"__hp__": "object", "class": ..., "repr": ...}``.
    """
    if _depth > 50:
        raise RecursionError("object nesting too deep to encode for R")
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, (int, np.integer)) and not isinstance(obj, (bool, np.bool_)):
        v = int(obj)
        return v if _INT32_MIN <= v <= _INT32_MAX else float(v)
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, (float, np.floating)):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return _encode_array(obj)
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover
        pd = None
    if pd is not None:
        if isinstance(obj, pd.DataFrame):
            return {
                "__hp__": "data.frame",
                "names": [str(c) for c in obj.columns],
                "columns": [_encode_column(obj.iloc[:, j]) for j in range(obj.shape[1])],
                "nrow": int(obj.shape[0]),
                "index": _encode_index(obj.index),
                "index_name": None if obj.index.name is None else str(obj.index.name),
            }
        if isinstance(obj, pd.Series):
            return {
                "__hp__": "series",
                "values": _encode_column(obj),
                "index": _encode_index(obj.index),
                "name": None if obj.name is None else str(obj.name),
            }
        if isinstance(obj, pd.Index):
            return _encode_array(np.asarray(obj))
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {
            "__hp__": "record",
            "class": type(obj).__name__,
            "fields": {f.name: encode(getattr(obj, f.name), _depth + 1) for f in dataclasses.fields(obj)},
        }
    if isinstance(obj, Mapping):
        return {"__hp__": "dict", "names": [str(k) for k in obj.keys()],
                "items": [encode(v, _depth + 1) for v in obj.values()]}
    if isinstance(obj, (list, tuple)):
        return {"__hp__": "list", "items": [encode(v, _depth + 1) for v in obj]}
    return describe_object(obj)


def _encode_column(series):
    """One DataFrame column: numeric/bool/str arrays as such, object columns of arrays as a list."""
    values = series.to_numpy()
    if values.dtype.kind == "O":
        if all(isinstance(v, str) for v in values):
            return _encode_array(values.astype(str))
        if all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))
               for v in values):
            return _encode_array(values.astype(np.float64))
        return {"__hp__": "list", "items": [encode(v) for v in values]}
    if values.dtype.kind == "f" and series.dtype.kind != "f":  # pandas nullable ints -> float with NaN
        return _encode_array(values.astype(np.float64))
    return _encode_array(values)


def describe_object(obj):
    """Fallback encoding: class name and repr."""
    try:
        text = repr(obj)
    except Exception as exc:  # noqa: BLE001 - a failing repr must not break the conversion
        text = f"<{type(obj).__name__} (repr failed: {exc})>"
    return {"__hp__": "object", "class": type(obj).__name__, "repr": text}


def attributes(obj, names) -> dict:
    """``{name: getattr(obj, name)}`` for the listed attributes (missing ones -> None; methods
    without arguments are called). Pass the result through :func:`encode` for R."""
    out = {}
    for name in names:
        value = getattr(obj, name, None)
        if callable(value) and not isinstance(value, np.ndarray):
            value = value()
        out[name] = value
    return out
