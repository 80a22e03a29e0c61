"""Point coordinates and raster sizes of :mod:`hphawkes_py.kde`: the checks that the windows
(:mod:`._window`), the GIS helpers (:mod:`._gis`) and the estimators all apply to their inputs."""
from __future__ import annotations

import numpy as np

from .._validate import as_float_array

__all__ = ["MAX_CELLS"]

#: the largest raster a window may have (cells); also the limit of int32 cell indices in the kernels
MAX_CELLS = 2**31 - 1


def _as_points(points, name="points", *, copy=False) -> np.ndarray:
    """(n, 2) finite float64 coordinates; booleans, complex numbers, strings and datetimes refused
    (they would otherwise be cast silently)."""
    kind = getattr(np.asarray(points) if not isinstance(points, np.ndarray) else points, "dtype", None)
    if kind is not None and kind.kind in "bcUSMm":
        what = {"b": "booleans", "c": "complex numbers", "U": "strings", "S": "bytes", "M": "datetimes",
                "m": "time deltas"}[kind.kind]
        raise TypeError(f"{name} must be real (x, y) coordinates, got {what} (dtype {kind})")
    p = as_float_array(points, name, ndim=2, copy=copy)
    if p.shape[1] != 2:
        raise ValueError(f"{name} must have shape (n, 2) (x, y columns), got {p.shape}")
    return p
