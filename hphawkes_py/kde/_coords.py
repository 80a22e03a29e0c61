"""Point coordinates and raster sizes of :mod:`hphawkes_py.kde`: the checks that the windows
(:mod:`._window`), the GIS helpers (:mod:`._gis`) and the estimators all apply to their inputs."""
from __future__ import annotations

import math

import numpy as np

from .._validate import as_float_array

__all__ = ["MAX_CELLS", "CELL_SIZE_RANGE", "check_cell_size"]

#: the largest raster a window may have (cells); also the limit of int32 cell indices in the kernels
MAX_CELLS = 2**31 - 1
#: cell sizes outside this range make the cell area ``cell_size**2`` over- or underflow in float64
CELL_SIZE_RANGE = (1e-150, 1e150)


def check_cell_size(cell_size: float) -> None:
    """Refuse a cell size whose cell area ``cell_size**2`` over- or underflows in float64 (outside
    :data:`CELL_SIZE_RANGE`), naming ``cell_size``.  With at most :data:`MAX_CELLS` cells of such a
    size, the raster's extent is then finite wherever its corner is."""
    lo, hi = CELL_SIZE_RANGE
    if not lo <= cell_size <= hi:
        raise ValueError(f"cell_size must be in [{lo:g}, {hi:g}] (coordinate units), got {cell_size!r}: outside it the "
                         "cell area cell_size**2 over- or underflows in float64; rescale the coordinates")


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


def _raster_shape(width: float, height: float, cs: float, what: str, slack: float = 0.0) -> tuple[int, int]:
    """(rows, cols) of a raster of ``cs`` cells covering width x height; refused before anything is
    allocated when it would exceed MAX_CELLS, with the memory it would need."""
    fcols = max(1.0, float(math.ceil(min(width / cs - slack, 1e300))))
    frows = max(1.0, float(math.ceil(min(height / cs - slack, 1e300))))
    cells = fcols * frows
    if cells > MAX_CELLS:
        gib = cells / 2**30
        raise ValueError(
            f"{what} at cell_size {cs!r} would be {frows:.4g} x {fcols:.4g} = {cells:.4g} cells: the mask alone "
            f"would need {gib:.4g} GiB (a density surface {8 * gib:.4g} GiB); at most {MAX_CELLS} cells are "
            "allowed. Use a larger cell_size"
        )
    return int(frows), int(fcols)
