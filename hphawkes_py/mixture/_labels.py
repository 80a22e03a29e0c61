"""Cluster labels as the partition tools take them: whole numbers, relabelled per draw."""
from __future__ import annotations

import numpy as np

__all__ = ["labels_2d", "as_integer_labels"]


def labels_2d(labels, name: str = "labels", *, one_partition: bool = False) -> np.ndarray:
    """(S, n) integer labels, each draw's relabelled 0..L_s-1 (order of first appearance kept).

    ``one_partition``: a 1-D array of n labels is the only input (returned as one row); otherwise
    draws must be 2-D, so that one partition is not taken for a posterior sample by mistake."""
    if labels is None:
        raise TypeError(f"{name} must be an integer array (draws x n), got None")
    arr = np.asarray(labels)
    if one_partition:
        if arr.ndim != 1:
            raise ValueError(f"{name} must be 1-dimensional (one label per event), got shape {arr.shape}")
        arr = arr[None, :]
    elif arr.ndim == 1:
        raise ValueError(f"{name} must be 2-dimensional (draws x n events), got a 1-D array of {arr.shape[0]} "
                         f"labels; for a single partition write {name}[None, :]")
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-dimensional (draws x n events), got shape {arr.shape}")
    if arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError(f"{name} needs at least one draw and one event, got shape {arr.shape}")
    arr = as_integer_labels(arr, name)
    out = np.empty(arr.shape, dtype=np.int32)
    for s in range(arr.shape[0]):
        _, out[s] = np.unique(arr[s], return_inverse=True)
    return out


def as_integer_labels(arr, name):
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold integer cluster labels, got dtype {arr.dtype}")
    if arr.dtype.kind == "f":
        if not np.isfinite(arr).all():
            raise ValueError(f"{name} must be finite integer labels; found NaN/inf")
        frac = arr != np.round(arr)
        if frac.any():
            idx = tuple(int(i) for i in np.argwhere(frac)[0])
            raise ValueError(f"{name} must hold whole numbers; {name}{list(idx)} = {arr[idx]!r}")
        arr = arr.astype(np.int64)
    return arr
