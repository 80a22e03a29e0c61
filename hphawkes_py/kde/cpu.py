"""CPU engine of :mod:`hphawkes_py.kde` (Numba): :class:`CpuEngine` and the settings of its kernels.

The kernels live by concern: the edge masses in :mod:`.cpu_edge`, the per-target walk of the grid
index (the reference) in :mod:`.cpu_gather`, the tiled gather (the default: the grid walked once
per tile of nearby targets, one exp per pair with one bandwidth, two leave-one-out candidates per
walk) in :mod:`.cpu_tiled`.
"""
from __future__ import annotations

import numba
import numpy as np

from .cpu_edge import edge_mass_kernel, run_bands
from .cpu_gather import direct_kernel, gather_kernel
from .cpu_tiled import gather_tiled_kernel, gather_tiled_pair_kernel, hilbert_order
from .engine import EDGE_REACH, Engine, SourceIndex, build_index, kernel_constants, kernel_rows

__all__ = ["CpuEngine", "edge_mass_kernel", "gather_kernel", "gather_tiled_kernel", "gather_tiled_pair_kernel",
           "hilbert_order"]

#: targets per tile of the tiled gather (runs of the Hilbert order of the targets)
TILE = 16
#: candidates buffered per tile before they are summed (then the buffer is reused)
TILE_CAP = 1024
#: the tiled gather is the default; ``False`` selects the per-target walk (the reference)
TILED = True

#: kept pairs (d < cutoff b) have exponents d^2 log2(e) / (2 b^2) of at most cutoff^2 log2(e) / 2 in
#: size: below 1022 (no subnormal kernel) up to a cutoff of sqrt(2044 ln 2) = 37.6; 30 leaves room
UNDERFLOW_FREE_CUTOFF = 30.0


def _underflow(cutoff):
    """The tiled kernels' ``underflow`` argument for a cut-off: None when no kept pair can underflow."""
    return None if cutoff <= UNDERFLOW_FREE_CUTOFF else True



def tiles(order, tile=None):
    """``tile_ptr`` of the runs of ``tile`` targets along ``order`` (the last run shorter)."""
    tile = max(1, TILE if tile is None else int(tile))
    n = len(order)
    return np.append(np.arange(0, n, tile, dtype=np.int64), np.int64(n))



def _equal_bandwidths(ix: SourceIndex) -> bool:
    """Whether every source has the same kernel (the same 1 / (2 b^2) and cut-off)."""
    return (len(ix.sinv2) > 0 and len(ix.cls_s) == 1 and ix.sinv2.min() == ix.sinv2.max()
            and ix.scut2.min() == ix.scut2.max())


#: tile groups of the symmetric gather (each sums its sources' shares into its own row; the rows
#: are added in order): a constant, not the thread count, so that the sums are the same bits for
#: any number of threads; up to this many threads share the work
SYMMETRIC_GROUPS = 16
#: the symmetric gather's rows (groups x points) take at most about this many bytes (fewer groups
#: for very large patterns)
SYMMETRIC_ROWS_BYTES = 1 << 27


def symmetric_groups(n: int, itemsize: int = 8) -> int:
    """Tile groups of the symmetric gather for ``n`` points: :data:`SYMMETRIC_GROUPS`, fewer when
    their rows would exceed :data:`SYMMETRIC_ROWS_BYTES`; depends on ``n`` only, never on the
    thread count."""
    return max(1, min(SYMMETRIC_GROUPS, SYMMETRIC_ROWS_BYTES // max(1, n * itemsize)))


#: at most this many sources are summed directly by ``intensity_at(..., sources=...)``
DIRECT_MAX_SOURCES = 256


class CpuEngine(Engine):
    """Hot steps of the KDE on the CPU (Numba); see :class:`~.engine.Engine` for their meaning.

    The Numba thread count is the caller's (the public entry points set it with
    :func:`hphawkes_py._backend.threads_context`).
    """

    backend = "cpu"
    #: see :func:`~.cpu_edge.edge_mass_kernel` (0: every CDF memoised on first use, the reference path)
    dense_edges = 4

    def _in_dtype(self, a):
        """``a`` as a contiguous array of the kernel dtype (no copy when it is one already)."""
        return np.ascontiguousarray(a, dtype=self.dtype)

    def _edge_mass_subset(self, bws, idx):
        w = self.window
        r0, r1, bptr, c0, c1, row_band = w.row_bands()
        res = np.empty(len(idx))
        edge_mass_kernel(
            self.x, self.y, bws, idx, w.x0, w.y0, w.cell_size, w.mask.shape[0], w.mask.shape[1], r0, r1, bptr, c0,
            c1, row_band, run_bands(bptr), EDGE_REACH, res, self.dense_edges,
        )
        return res

    #: tiled gather (None: the module's ``TILED``); ``False`` is the per-target reference walk
    tiled = None
    #: one exp per pair when every bandwidth is equal (tiled gather only); ``False``: both directions
    symmetric = True
    _hilbert = None  # Hilbert order of the points (the leave-one-out targets), on first use
    _targets_order = None  # (tx, ty, Hilbert order) of the last other targets

    def _points_order(self, ix: SourceIndex):
        """The points as targets, in their Hilbert order (computed once per engine), as positions in
        the index ``ix``'s sorted order."""
        if self._hilbert is None:
            self._hilbert = hilbert_order(self.x, self.y)
        return ix.pos[self._hilbert]

    def _use_tiles(self):
        return TILED if self.tiled is None else bool(self.tiled)

    def _gather_points(self, ix: SourceIndex, loo: bool):
        if not self._use_tiles():
            return super()._gather_points(ix, loo)
        self_pos = np.arange(self.n, dtype=np.int64) if loo else np.full(self.n, -1, np.int64)
        t_order = self._points_order(ix)
        if self.symmetric and _equal_bandwidths(ix):
            return self._gather_symmetric(ix, self_pos, t_order)
        return self._gather(ix, ix.sx, ix.sy, self_pos, t_order=t_order)

    #: ``point_intensities_many`` runs two leave-one-out candidates per walk of the grid
    #: (:func:`~.cpu_tiled.gather_tiled_pair_kernel`); ``False``: one at a time (the reference)
    paired = True

    def point_intensities_many(self, cases, loo: bool):
        if not (loo and self.paired and self._use_tiles() and len(cases) > 1 and self.n > 0):
            return super().point_intensities_many(cases, loo)
        out = []
        for i in range(0, len(cases) - 1, 2):
            out.extend(self._point_intensities_pair(*cases[i], *cases[i + 1]))
        if len(cases) % 2:
            out.append(self.point_intensities(*cases[-1], loo))
        return out

    def _point_intensities_pair(self, bws_a, w_a, bws_b, w_b):
        # one index for the larger bandwidth of each source; each kernel's constants in its order (the
        # expressions of kernel_constants, same bits), so each pair term is the one-kernel gather's
        T = self.dtype
        c = self._in_dtype
        bws_a, w_a, bws_b, w_b = (np.ascontiguousarray(a, dtype=np.float64) for a in (bws_a, w_a, bws_b, w_b))
        ix = build_index(self.x, self.y, np.maximum(bws_a, bws_b), np.ones(self.n), self.cutoff, self._lo, self._hi,
                         sort=self._sort)
        consts = np.empty((6, self.n), dtype=T)
        kernel_rows(ix.order, bws_a, w_a, self.cutoff, consts[:3])
        kernel_rows(ix.order, bws_b, w_b, self.cutoff, consts[3:])
        t_order = self._points_order(ix)
        out = np.empty((2, self.n))
        gather_tiled_pair_kernel(c(ix.sx), c(ix.sy), c(ix.scut2), consts, ix.gx0, ix.gy0, ix.cls_s, ix.cls_reach,
                                 ix.cls_nx, ix.cls_ny, ix.cls_base, ix.cell_ptr, ix.order, t_order, tiles(t_order),
                                 TILE_CAP, numba.get_num_threads(), out, _underflow(self.cutoff))
        return out[0], out[1]

    def _gather_symmetric(self, ix: SourceIndex, self_pos, t_order):
        # one bandwidth (a pilot, a fixed-bandwidth fit or CV): each pair once, one exp for both.  The
        # kernel's "threads" are the fixed tile groups of symmetric_groups (Numba spreads them over the
        # threads there are): each group's row is summed in one fixed order, so the result does not
        # depend on the thread count
        T = self.dtype
        c = self._in_dtype
        groups = symmetric_groups(self.n, np.dtype(T).itemsize)
        rank = np.empty(self.n, np.int64)
        rank[t_order] = np.arange(self.n, dtype=np.int64)
        out_grp = np.zeros((groups, self.n), dtype=T)
        sx, sy = c(ix.sx), c(ix.sy)
        gather_tiled_kernel(sx, sy, self_pos, sx, sy, c(ix.sinv2), c(ix.scoef), c(ix.scut2), ix.gx0, ix.gy0,
                            ix.cls_s, ix.cls_reach, ix.cls_nx, ix.cls_ny, ix.cls_base, ix.cell_ptr, t_order,
                            tiles(t_order), TILE_CAP, groups, np.empty(0), rank, out_grp,
                            _underflow(self.cutoff))
        return out_grp.sum(axis=0, dtype=np.float64)

    def _gather(self, ix: SourceIndex, tx, ty, self_pos, t_order=None):
        T = self.dtype
        c = self._in_dtype
        out = np.empty(len(tx))
        args = (c(tx), c(ty), np.ascontiguousarray(self_pos, np.int64), c(ix.sx), c(ix.sy), c(ix.sinv2),
                c(ix.scoef), c(ix.scut2), ix.gx0, ix.gy0, ix.cls_s, ix.cls_reach, ix.cls_nx, ix.cls_ny, ix.cls_base,
                ix.cell_ptr)
        if not self._use_tiles() or len(tx) == 0:
            gather_kernel(*args, numba.get_num_threads(), out)
            return out
        if t_order is None:
            # the Hilbert order of the last targets is kept: the Monte Carlo relabellings of
            # :mod:`.relrisk` and the surfaces gather at the same targets many times
            tx64 = np.ascontiguousarray(tx, np.float64)
            ty64 = np.ascontiguousarray(ty, np.float64)
            last = self._targets_order
            if last is not None and np.array_equal(last[0], tx64) and np.array_equal(last[1], ty64):
                t_order = last[2]
            else:
                t_order = hilbert_order(tx64, ty64)
                self._targets_order = (tx64.copy(), ty64.copy(), t_order)
        gather_tiled_kernel(*args, t_order, tiles(t_order), TILE_CAP, numba.get_num_threads(), out,
                            np.empty(0, np.int64), np.empty((0, 0), dtype=T), _underflow(self.cutoff))
        return out

    def intensity_at(self, targets, bws, weights, sources=None):
        if sources is None or len(sources) > DIRECT_MAX_SOURCES:
            return super().intensity_at(targets, bws, weights, sources)
        # a few sources: every target sums all of them in one vectorized loop, no index to build
        T = self.dtype
        src = np.asarray(sources, dtype=np.int64)
        sinv2, scoef, scut2 = kernel_constants(bws, weights, self.cutoff)
        t = np.asarray(targets, dtype=np.float64)
        if T == np.float32:  # as Engine.intensity_at: targets rounded once
            t = t.astype(np.float32).astype(np.float64)
        c = self._in_dtype
        out = np.empty(len(t))
        direct_kernel(c(t[:, 0]), c(t[:, 1]), c(self.x[src]), c(self.y[src]), c(sinv2), c(scoef), c(scut2), out)
        return out
