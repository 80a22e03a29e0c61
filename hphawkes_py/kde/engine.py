"""The KDE engine interface, :func:`make_engine`, and host-side helpers shared by both engines.

An engine holds the points and the window and offers the hot steps the algorithm in
:mod:`.model` is written against.  Both engines (:class:`~.cpu.CpuEngine`,
:class:`~.gpu.GpuEngine`) derive from :class:`Engine`, which owns everything host-side (the
boundary distances, the source index, the order bookkeeping), so that every step means the
same on both:

``edge_masses(bws)``
    window mass of each point's untruncated Gaussian kernel (exactly 1 farther than
    ``EDGE_SKIP x b`` from the outside); subclasses implement ``_edge_mass_subset(bws, idx)``.
``point_intensities(bws, weights, loo)``
    intensity at every sample point, leave-one-out when ``loo``.
``intensity_at(targets, bws, weights, sources=None)``
    intensity at arbitrary (q, 2) locations (over a subset of the points when ``sources`` is
    given); subclasses implement ``_gather(ix, tx, ty, self_pos)`` (targets in the kernel dtype).
``relabel_exceed(targets, bws, weights, picks, total, rho, n1, n0, small_is_case)``
    Monte Carlo relabelling counts of a relative risk (:mod:`.relrisk`); the GPU engine runs all
    relabellings in one launch.

Source index
------------
Sources are split into bandwidth classes ``b in [b_min 2^k, b_min 2^(k+1))`` so that a source is
only looked for within the reach (``cutoff x b``) of its own class: with adaptive bandwidths the
largest bandwidth can be many times the typical one, and a single grid sized for the largest reach
would make every sum scan far too many points.  Each class has its own grid of square cells (a quarter
of its reach, fewer if that would make more than ~4 cells per source); a target visits the grid rows
within reach and, in each row, the cells under the chord of its disc.  Cells are numbered row-major
and the sources sorted by (class, cell), so the cells of one chord form ONE contiguous range of the
structure-of-arrays -- the inner loops run over contiguous memory.
"""
from __future__ import annotations

import functools

import math
from dataclasses import dataclass

import numpy as np

from .._backend import get_device, is_gpu_backend
from .._validate import check_dtype
from ._window import Window

__all__ = ["Engine", "make_engine", "SourceIndex", "build_index", "counting_sort", "kernel_constants", "kernel_rows", "EDGE_REACH", "EDGE_SKIP"]

#: Rows/runs farther than EDGE_REACH x b from a point are left out of its edge mass: the mass left
#: out is below 4 Phi(-8) = 2.5e-15 (the CDF itself is computed to ~2e-16), far below the 1e-12
#: that EDGE_SKIP grants; a wider reach costs time in proportion (rows and columns in reach).
EDGE_REACH = 8.0
#: Points farther than EDGE_SKIP x b from the outside get e = 1 exactly: the mass outside a disc of
#: radius r is exp(-r^2 / (2 b^2)) = 2e-13 < 1e-12 at r = 7.5 b.
EDGE_SKIP = 7.5

_MAX_CLASSES = 60
_CELL_FRACTION = 0.25
# bandwidth classes span a factor sqrt(2) (half octaves, see _classes_loops): finer classes waste
# less reach on small bandwidths
_SQRT2 = math.sqrt(2.0)


def _counting_sort_loops(key, nkeys):
    """Stable order of ``key`` (ints in [0, nkeys)) and the start of each key: O(n + nkeys)."""
    ptr = np.zeros(nkeys + 1, np.int64)
    for k in key:
        ptr[k + 1] += 1
    for i in range(nkeys):
        ptr[i + 1] += ptr[i]
    fill = ptr[:-1].copy()
    order = np.empty(key.shape[0], np.int64)
    for i in range(key.shape[0]):
        k = key[i]
        order[fill[k]] = i
        fill[k] += 1
    return order, ptr


def _classes_loops(bws, max_classes):
    """Bandwidth class of each source (``b in [b_min 2^(k/2), b_min 2^((k+1)/2))``, half octaves,
    the last class open-ended), numbered 0.. over the classes in use, with the
    members and the largest bandwidth of each class: one pass over the sources after the minimum."""
    n = bws.shape[0]
    bmin = bws[0]
    for i in range(n):
        if bws[i] < bmin:
            bmin = bws[i]
    raw = np.empty(n, np.int64)
    count = np.zeros(max_classes, np.int64)
    bmax = np.zeros(max_classes)
    for i in range(n):
        # half octaves without a logarithm (a scalar libm call per source would dominate this loop):
        # r = m 2^e with m in [0.5, 1), so log2 r = (e - 1) + log2(2m), 2m in [1, 2)
        mant, e = math.frexp(bws[i] / bmin)
        k = 2 * (e - 1) + (1 if 2.0 * mant >= _SQRT2 else 0)
        k = min(max(k, 0), max_classes - 1)
        raw[i] = k
        count[k] += 1
        if bws[i] > bmax[k]:
            bmax[k] = bws[i]
    remap = np.full(max_classes, -1, np.int64)
    C = 0
    for k in range(max_classes):
        if count[k] > 0:
            remap[k] = C
            count[C] = count[k]
            bmax[C] = bmax[k]
            C += 1
    for i in range(n):
        raw[i] = remap[raw[i]]
    return raw, count[:C].copy(), bmax[:C].copy()


def _cell_ids_loops(x, y, cls, cls_s, cls_nx, cls_ny, cls_base, gx0, gy0):
    """Row-major cell of each source in its class's grid: the kernels' expression (floor of the
    quotient, clipped to the grid) so that cells agree bit for bit."""
    out = np.empty(x.shape[0], np.int64)
    for i in range(x.shape[0]):
        k = cls[i]
        s = cls_s[k]
        cx = int(math.floor((x[i] - gx0) / s))
        cy = int(math.floor((y[i] - gy0) / s))
        cx = min(max(cx, 0), cls_nx[k] - 1)
        cy = min(max(cy, 0), cls_ny[k] - 1)
        out[i] = cls_base[k] + cy * cls_nx[k] + cx
    return out


def _sorted_positions_loops(order, x, y):
    """Rows (sx, sy, ., ., .) of the sources in sorted order, the last three left for
    :func:`_kernel_rows_loops`, and the inverse permutation ``pos``."""
    n = order.shape[0]
    out = np.empty((5, n))
    pos = np.empty(n, np.int64)
    for i in range(n):
        j = order[i]
        pos[j] = i
        out[0, i] = x[j]
        out[1, i] = y[j]
    return out, pos


def _kernel_rows_loops(order, bws, w, cutoff, finite, out):
    """``out`` (3, n) = (sinv2, scoef, scut2) of the sources in sorted order: the expressions of
    :func:`kernel_constants`, in the same order of operations (same bits)."""
    two_pi = 2.0 * math.pi
    for i in range(order.shape[0]):
        j = order[i]
        b = bws[j]
        out[0, i] = 1.0 / (2.0 * b * b)
        out[1, i] = w[j] / (two_pi * b * b)
        cb = cutoff * b
        out[2, i] = cb * cb if finite else np.inf


@functools.lru_cache(maxsize=1)
def _compiled():
    # compiled on first use, so that importing the engines (the GPU one included) loads no Numba;
    # the index is rebuilt at every step of the bandwidth search on the host for both engines: a
    # loop in NumPy per bandwidth class cost ~7 ms per build at n = 50,000 (most of the GPU search)
    from numba import njit

    jit = njit(cache=True, nogil=True)
    return (jit(_counting_sort_loops), jit(_classes_loops), jit(_cell_ids_loops),
            jit(_sorted_positions_loops), jit(_kernel_rows_loops))


def counting_sort(key, nkeys):
    """Stable order of ``key`` (ints in [0, nkeys)) and the start of each key, in O(n + nkeys)
    (the host-side sort of the source index, shared by both engines)."""
    return _compiled()[0](np.ascontiguousarray(key, dtype=np.int64), int(nkeys))


def kernel_rows(order, bws, weights, cutoff, out):
    """``out`` (3, n), any float dtype: :func:`kernel_constants` of the sources taken in the sorted
    ``order`` (same bits before the cast to ``out``'s dtype), by one loop, without the temporaries."""
    _compiled()[4](order, np.ascontiguousarray(bws, dtype=np.float64), np.ascontiguousarray(weights, dtype=np.float64),
                   float(cutoff), math.isfinite(cutoff), out)


@dataclass
class SourceIndex:
    order: np.ndarray  # (n,) sorted position -> original index
    pos: np.ndarray  # (n,) original index -> sorted position
    sx: np.ndarray
    sy: np.ndarray
    sinv2: np.ndarray  # 1 / (2 b^2)
    scoef: np.ndarray  # w / (2 pi b^2)
    scut2: np.ndarray  # (cutoff b)^2
    gx0: float
    gy0: float
    cls_s: np.ndarray  # (C,) cell side
    cls_reach: np.ndarray  # (C,) cutoff x largest bandwidth of the class
    cls_nx: np.ndarray  # (C,) int64
    cls_ny: np.ndarray
    cls_base: np.ndarray  # (C,) offset of the class's cells in cell_ptr
    cell_ptr: np.ndarray  # (sum(nx*ny)+1,) start of each cell's sources
    packed: np.ndarray  # (5, n) rows sx, sy, sinv2, scoef, scut2: the fields sx .. scut2 are its views


def kernel_constants(bws, weights, cutoff):
    """Per-source constants of the truncated Gaussian kernel ``w exp(-d^2 sinv2) / (2 pi b^2)``:
    ``(sinv2 = 1 / (2 b^2), scoef = w / (2 pi b^2), scut2 = (cutoff b)^2)`` (float64; ``scut2`` is
    ``inf`` for ``cutoff = inf``).  The one definition behind every engine's sums."""
    b = np.asarray(bws, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    scut2 = (cutoff * b) ** 2 if math.isfinite(cutoff) else np.full(len(b), np.inf)
    return 1.0 / (2.0 * b * b), w / (2.0 * math.pi * b * b), scut2


def build_index(x, y, bws, weights, cutoff, lo, hi, sort=counting_sort) -> SourceIndex:
    """Index sources (x, y) with bandwidths ``bws`` and weights; ``lo``/``hi`` bound every target.

    ``sort(key, nkeys)`` returns the stable order of the cell keys and the cells' start offsets.
    """
    _, classes, cell_ids, sorted_positions, _ = _compiled()
    x = np.ascontiguousarray(x, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    bws = np.ascontiguousarray(bws, dtype=np.float64)
    weights = np.ascontiguousarray(weights, dtype=np.float64)
    cls, count, bmax = classes(bws, _MAX_CLASSES)
    C = len(count)
    gx0, gy0 = float(lo[0]), float(lo[1])
    width = max(float(hi[0] - lo[0]), 1e-300)
    height = max(float(hi[1] - lo[1]), 1e-300)
    cls_s = np.empty(C)
    cls_reach = np.empty(C)
    cls_nx = np.empty(C, np.int64)
    cls_ny = np.empty(C, np.int64)
    cls_base = np.empty(C, np.int64)
    base = 0
    for k in range(C):
        nk = int(count[k])
        reach = cutoff * float(bmax[k]) if math.isfinite(cutoff) else math.inf
        # cap the number of cells at ~4 per source (and 2^22 in all) so tiny bandwidths over a huge
        # extent do not allocate a giant, nearly empty grid; larger cells keep the 3x3 search exact.
        max_cells = max(16, min(4 * nk, 1 << 22))
        s_min = math.sqrt(width * height / max_cells)
        if not math.isfinite(reach):
            reach = 2.0 * math.hypot(width, height)
        # cells of a quarter of the reach: the rows within reach are visited, and in each row only the
        # chord of the disc (rounded out to whole cells), so about (pi + 1) reach^2 of area is scanned
        # instead of 9 reach^2 for 3 x 3 cells of side reach
        s = max(reach * _CELL_FRACTION, s_min, width / 65536.0, height / 65536.0)
        cls_reach[k] = reach * (1.0 + 1e-12)
        nx = int(width // s) + 1
        ny = int(height // s) + 1
        cls_s[k], cls_nx[k], cls_ny[k], cls_base[k] = s, nx, ny, base
        base += nx * ny
    cellid = cell_ids(x, y, cls, cls_s, cls_nx, cls_ny, cls_base, gx0, gy0)
    order, cell_ptr = sort(cellid, base)
    packed, pos = sorted_positions(order, x, y)
    kernel_rows(order, bws, weights, cutoff, packed[2:])
    return SourceIndex(
        order=order,
        pos=pos,
        sx=packed[0],
        sy=packed[1],
        sinv2=packed[2],
        scoef=packed[3],
        scut2=packed[4],
        gx0=gx0,
        gy0=gy0,
        cls_s=cls_s,
        cls_reach=cls_reach,
        cls_nx=cls_nx,
        cls_ny=cls_ny,
        cls_base=cls_base,
        cell_ptr=cell_ptr,
        packed=packed,
    )


def make_engine(points, window: Window, cutoff: float, *, backend: str, dtype=np.float64):
    """Engine for ``points`` in ``window`` on an already resolved backend (``"cpu"``, ``"gpu"`` or
    ``"emulator"``).

    The GPU engine receives its device here (:func:`hphawkes_py._backend.get_device`); engines never
    fetch devices themselves.  ``dtype`` is the precision of the kernel sums (float64 or float32).
    """
    dtype = check_dtype(dtype)
    if is_gpu_backend(backend):
        from .gpu import GpuEngine

        return GpuEngine(points, window, cutoff, device=get_device(backend), backend=backend, dtype=dtype)
    if backend != "cpu":
        raise ValueError(f"make_engine needs a resolved backend ('cpu', 'gpu' or 'emulator'), got {backend!r}")
    from .cpu import CpuEngine

    return CpuEngine(points, window, cutoff, dtype=dtype)


class Engine:
    """Shared part of both engines (see the module notes).  All arrays passed in and returned are
    in the caller's point order and float64; ``dtype`` is the precision of the kernel sums.

    With ``dtype=float32`` the coordinates are rounded to float32 once, here, and every host-side
    computation (boundary distances, the index's cells) uses the rounded values, so the kernels'
    cell geometry agrees exactly with the index.
    """

    backend = "cpu"
    #: the stable sort used to build the source index (the CPU engine uses a Numba one)
    _sort = staticmethod(counting_sort)

    def __init__(self, points: np.ndarray, window: Window, cutoff: float, *, dtype=np.float64):
        self.dtype = check_dtype(dtype)
        p = np.asarray(points, dtype=np.float64)
        if self.dtype == np.float32:
            p = p.astype(np.float32).astype(np.float64)
        self.x = np.ascontiguousarray(p[:, 0])
        self.y = np.ascontiguousarray(p[:, 1])
        self.n = len(self.x)
        self.window = window
        self.cutoff = float(cutoff)
        self.dist = window.boundary_distance(p)  # lower bound to the outside
        xmin, xmax, ymin, ymax = window.extent
        self._lo = np.array([min(xmin, self.x.min()), min(ymin, self.y.min())])
        self._hi = np.array([max(xmax, self.x.max()), max(ymax, self.y.max())])
        self._index_key = None
        self._index = None

    # -- edge correction ---------------------------------------------------------------------
    def near_boundary(self, bws: np.ndarray) -> np.ndarray:
        """Indices of the points whose kernel may lose more than 1e-12 of its mass."""
        return np.flatnonzero(self.dist <= EDGE_SKIP * bws).astype(np.int64)

    def edge_masses(self, bws: np.ndarray) -> np.ndarray:
        """Window mass of each point's (untruncated) kernel; exactly 1 far from the boundary."""
        bws = np.ascontiguousarray(bws, dtype=np.float64)
        out = np.ones(self.n)
        idx = self.near_boundary(bws)
        if len(idx):
            out[idx] = self._edge_mass_subset(bws, idx)
        return out

    def _edge_mass_subset(self, bws: np.ndarray, idx: np.ndarray) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    # -- kernel sums -------------------------------------------------------------------------
    def source_index(self, bws, weights) -> SourceIndex:
        """The grid index of the sources for these bandwidths and weights (cached for the last pair)."""
        bws = np.ascontiguousarray(bws, dtype=np.float64)
        weights = np.ascontiguousarray(weights, dtype=np.float64)
        key = (bws.tobytes(), weights.tobytes())
        if self._index_key != key:
            self._index = build_index(self.x, self.y, bws, weights, self.cutoff, self._lo, self._hi, sort=self._sort)
            self._index_key = key
        return self._index

    def _gather(self, ix: SourceIndex, tx, ty, self_pos) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def _gather_points(self, ix: SourceIndex, loo: bool) -> np.ndarray:
        """Intensity at the sources themselves, in sorted order (leave-one-out when ``loo``)."""
        self_pos = np.arange(self.n, dtype=np.int64) if loo else np.full(self.n, -1, np.int64)
        return self._gather(ix, ix.sx, ix.sy, self_pos)

    def point_intensities(self, bws: np.ndarray, weights: np.ndarray, loo: bool) -> np.ndarray:
        """Intensity at every sample point (leave-one-out when ``loo``).

        Targets are visited in source (cell) order, so that neighbouring threads read the same
        cells (cache reuse on the CPU, coalesced reads on the GPU).
        """
        ix = self.source_index(bws, weights)
        out_sorted = self._gather_points(ix, loo)
        out = np.empty(self.n)
        out[ix.order] = out_sorted
        return out

    def point_intensities_many(self, cases, loo: bool) -> list:
        """:meth:`point_intensities` of each ``(bws, weights)`` of ``cases`` (the pattern search's
        candidates).  One at a time here; the CPU engine sums two leave-one-out candidates per walk
        of its grid (the same pairs, each sum in another order)."""
        return [self.point_intensities(b, w, loo) for b, w in cases]

    def intensity_at(self, targets: np.ndarray, bws: np.ndarray, weights: np.ndarray, sources=None) -> np.ndarray:
        """Intensity at arbitrary (q, 2) targets (no point left out).

        ``sources`` (indices into the points), when given, restricts the sum to those points
        (``bws``/``weights`` are then per source); their index is built for this call only --
        the Monte Carlo relabelling of :mod:`.relrisk` sums over a different subset each time.
        """
        if sources is None:
            ix = self.source_index(bws, weights)
        else:
            src = np.asarray(sources, dtype=np.int64)
            ix = build_index(self.x[src], self.y[src], np.ascontiguousarray(bws, dtype=np.float64),
                             np.ascontiguousarray(weights, dtype=np.float64), self.cutoff, self._lo, self._hi,
                             sort=self._sort)
        t = np.asarray(targets, dtype=np.float64)
        if self.dtype == np.float32:
            t = t.astype(np.float32).astype(np.float64)
        tx = np.ascontiguousarray(t[:, 0])
        ty = np.ascontiguousarray(t[:, 1])
        return self._gather(ix, tx, ty, np.full(len(tx), -1, np.int64))

    def relabel_exceed(self, targets, bws, weights, picks, total, rho, n1: int, n0: int,
                       small_is_case: bool) -> np.ndarray:
        """Counts, per target, of the relabellings whose log relative risk is >= ``rho``.

        ``picks`` (R, k) holds, per relabelling, the indices of the smaller group's points (the
        cases when ``small_is_case``); its intensity is summed directly and the other group's is
        ``total - part`` (the pooled intensity does not depend on the labels).  ``bws``/``weights``
        are per point (all points); ``rho`` is the observed log relative risk (NaN never counts).
        """
        exceed = np.zeros(len(targets), np.int64)
        for pick in np.asarray(picks, dtype=np.int64):
            part = self.intensity_at(targets, bws[pick], weights[pick], sources=pick)
            rest = np.maximum(total - part, 0.0)
            l1, l0 = (part, rest) if small_is_case else (rest, part)
            with np.errstate(divide="ignore", invalid="ignore"):
                rho_r = np.log(l1 / n1) - np.log(l0 / n0)
            rho_r[~((l1 > 0) & (l0 > 0))] = np.nan
            exceed += rho_r >= rho
        return exceed
