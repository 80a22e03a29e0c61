"""The posterior similarity matrix in row blocks, on the CPU or a CUDA device (``gpu/kernels/mixture_similarity.cu``).

Entry ``(i, j)`` is the fraction of the S label draws in which events i and j share a cluster.
For large n the m x m matrix (8 m^2 bytes) does not fit in memory: :func:`posterior_similarity_blocks`
yields it ``block_rows`` rows at a time (memory O(block_rows x m)), and a subsample of events
(``index=``) makes m small.  Every block holds integer counts divided by S, so the CPU, the GPU
and the emulator give the same numbers bit for bit, and the same as
:func:`~hphawkes_py.mixture.partitions.posterior_similarity`.
"""
from __future__ import annotations

import numpy as np

from .._backend import get_device, resolve_backend
from .._validate import check_int, describe
from ._labels import labels_2d

__all__ = ["posterior_similarity_blocks", "GpuSimilarity"]

#: threads per block of the counting kernel on a GPU
BLOCK = 256


class GpuSimilarity:
    """Counts of :func:`posterior_similarity_blocks` on a :class:`~hphawkes_py.gpu.device.Device`.

    The labels (S, m) stay on the device; each call counts ``R`` rows against all m columns.

    Parameters
    ----------
    device : Device
        Where the kernel runs (from :func:`hphawkes_py._backend.get_device`).
    Z : ndarray (S, m) of int
        Label draws (any integer labels; only equality matters).

    Examples
    --------
    >>> from hphawkes_py._backend import get_device
    >>> from hphawkes_py.mixture.similarity import GpuSimilarity
    >>> g = GpuSimilarity(get_device("emulator"), np.array([[0, 0, 1], [0, 1, 1]]))
    >>> g.counts(0, 3).tolist()
    [[2, 1, 0], [1, 2, 1], [0, 1, 2]]
    """

    def __init__(self, device, Z):
        from ..gpu.device import KERNELS_DIR

        self.dev = dev = device
        Z = np.ascontiguousarray(Z, dtype=np.int32)
        self.S, self.m = Z.shape
        self._f = dev.module(KERNELS_DIR / "mixture_similarity.cu").function("psm_counts")
        self.block = int(dev.block_size(self._f, BLOCK))
        self._Z = dev.to_device(Z.reshape(-1))
        self._out = None

    def counts(self, r0: int, R: int) -> np.ndarray:
        """(R, m) int32: for rows r0 .. r0 + R - 1, the draws in which each pair shares a label."""
        if self._out is None or self._out.shape[0] < R * self.m:
            self._out = self.dev.empty((R * self.m,), np.int32)
        total = R * self.m
        grid = max(1, min(-(-total // self.block), 65535))
        self.dev.launch(self._f, grid, self.block,
                        [self._Z, np.int32(self.S), np.int32(self.m), np.int32(r0), np.int32(R), self._out])
        return self.dev.to_host(self._out)[:total].reshape(R, self.m)


def _cpu_counts(Z, r0, R):
    out = np.zeros((R, Z.shape[1]), dtype=np.int32)
    for z in Z:
        out += z[r0:r0 + R, None] == z[None, :]
    return out


def similarity_labels(labels, index):
    """(S, m) int32 labels of the events kept by ``index`` (validated as posterior_similarity does)."""
    Z = labels_2d(labels)
    n = Z.shape[1]
    if index is not None:
        idx = np.asarray(index)
        if idx.ndim != 1 or idx.size == 0 or idx.dtype.kind not in "iu":
            raise TypeError(f"index must be a non-empty 1-D array of integer event indices, got {describe(index)}")
        if idx.min() < 0 or idx.max() >= n:
            raise ValueError(f"index must lie in [0, {n}) (the events of labels), got values in [{idx.min()}, {idx.max()}]")
        if np.unique(idx).size != idx.size:
            raise ValueError("index must not repeat an event")
        Z = labels_2d(Z[:, idx])
    return Z


def check_similarity_backend(backend):
    if not isinstance(backend, str) or backend not in ("auto", "cpu", "gpu", "emulator"):
        raise ValueError(f"backend must be one of ('auto', 'cpu', 'gpu', 'emulator'), got {describe(backend)}")
    return resolve_backend(backend)


def iter_blocks(Z, block_rows, resolved):
    """(r0, counts (R, m) int32) for consecutive row blocks of the m x m count matrix."""
    S, m = Z.shape
    engine = None if resolved == "cpu" else GpuSimilarity(get_device(resolved), Z)
    for r0 in range(0, m, block_rows):
        R = min(block_rows, m - r0)
        yield r0, (_cpu_counts(Z, r0, R) if engine is None else engine.counts(r0, R))


def posterior_similarity_blocks(labels, block_rows: int = 1024, *, index=None, backend: str = "auto"):
    """The posterior similarity matrix ``block_rows`` rows at a time, for n too large for the whole matrix.

    Parameters
    ----------
    labels : array_like (S, n)
        Posterior draws of the labels (integers; e.g. from :func:`sample_label_draws`).
    block_rows : int, default 1024
        Rows per block: each block takes ``8 block_rows m`` bytes on the host (and 4 on the device).
    index : array_like of int, optional
        Events to keep (a subsample): the matrix is m x m for the m events given, in that order.
    backend : {"auto", "cpu", "gpu", "emulator"}, default "auto"
        Where the counts are made (``"auto"``: a CUDA GPU when one is usable).  The counts are
        integers, so every backend gives the same blocks bit for bit.

    Yields
    ------
    start : int
        Index (among the m events) of the first row of the block.
    block : ndarray (R, m)
        ``p_ij`` for rows ``start .. start + R - 1`` and all m columns (unitless).

    Examples
    --------
    >>> from hphawkes_py.mixture import posterior_similarity_blocks
    >>> for start, block in posterior_similarity_blocks([[0, 0, 1], [0, 1, 1]], block_rows=2, backend="cpu"):
    ...     print(start, block.tolist())
    0 [[1.0, 0.5, 0.0], [0.5, 1.0, 0.5]]
    2 [[0.0, 0.5, 1.0]]
    """
    Z = similarity_labels(labels, index)
    block_rows = check_int(block_rows, "block_rows", minimum=1)
    resolved = check_similarity_backend(backend)
    S = Z.shape[0]

    def gen():
        for r0, c in iter_blocks(Z, block_rows, resolved):
            yield r0, c / S

    return gen()
