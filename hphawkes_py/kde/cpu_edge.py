"""Edge masses of the KDE on the CPU: the window mass of each point's Gaussian kernel (Numba).

``edge_mass``: mass of N(x_j, b_j^2 I) over the window's inside cells, as a sum over bands of
identical raster rows of (1-D y mass of the band) x (sum over the band's runs of inside cells of
1-D x masses) -- exact cell integrals by the normal CDF, O(bands in reach x runs) per point rather
than O(cells in reach) (a rectangle is one band: 4 CDFs per point).  On ragged masks the CDF at
every row and column edge in reach is computed up front in vectorised loops
(:func:`~hphawkes_py._fastmath.ndtr_monotone`) and the runs are summed without branches: a
vectorised CDF costs a fraction of a scalar one, and nearly every edge in reach is needed anyway.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .._fastmath import fdiv, ndtr_fast, ndtr_monotone

__all__ = ["edge_mass_kernel", "run_bands"]

# FMAs only: no reassociation, which could move the table's edge coordinates off the memoised values
_FM_EDGE = {"contract"}


@njit(cache=True, fastmath=_FM_EDGE)
def _fill_cdf(out, origin, k0, dk, cs, centre, b):
    """``out[i] = Phi((origin + (k0 + i dk) cs - centre) / b)``: the CDF at consecutive raster edges
    (the same arithmetic as the memoised entries); the arguments are monotone in ``i``."""
    for i in range(out.shape[0]):
        out[i] = fdiv(origin + (k0 + i * dk) * cs - centre, b)
    ndtr_monotone(out)


@njit(cache=True, inline="always")
def _mass_memo(x, y, b, x0, y0, cs, nrows, r_top, r_bot, ca, cb, g0, g1, band_r0, band_r1, band_ptr,
               runs_c0, runs_c1):
    """Window mass over bands g0..g1-1 with the CDF memoised per edge: a rectangle costs 4 CDFs."""
    # CDF at column edges ca..cb and at the top edges of rows r_top..r_bot+1 (the last = bottom
    # edge of row r_bot); -1 = not computed yet
    cdf = np.full(cb - ca + 1, -1.0)
    ydf = np.full(r_bot - r_top + 2, -1.0)
    mass = 0.0
    for g in range(g0, g1):
        lo = band_ptr[g]
        hi = band_ptr[g + 1]
        if lo == hi:
            continue
        # band rows [r0, r1); edges beyond the reach count as CDF 1 (top) or 0 (bottom)
        r0 = band_r0[g]
        r1 = band_r1[g]
        ftop = 1.0
        if r0 >= r_top:
            if ydf[r0 - r_top] < 0.0:
                ydf[r0 - r_top] = ndtr_fast((y0 + (nrows - r0) * cs - y) / b)
            ftop = ydf[r0 - r_top]
        fbot = 0.0
        if r1 <= r_bot + 1:
            if ydf[r1 - r_top] < 0.0:
                ydf[r1 - r_top] = ndtr_fast((y0 + (nrows - r1) * cs - y) / b)
            fbot = ydf[r1 - r_top]
        my = ftop - fbot
        if my == 0.0:
            continue
        # first run ending right of column ca (runs sorted, disjoint)
        a = lo
        z = hi
        while a < z:
            mid = (a + z) // 2
            if runs_c1[mid] <= ca:
                a = mid + 1
            else:
                z = mid
        mx = 0.0
        for r in range(a, hi):
            c0 = runs_c0[r]
            if c0 > cb:
                break
            c1 = min(runs_c1[r], cb)
            f0 = 0.0
            if c0 >= ca:
                if cdf[c0 - ca] < 0.0:
                    cdf[c0 - ca] = ndtr_fast((x0 + c0 * cs - x) / b)
                f0 = cdf[c0 - ca]
            if cdf[c1 - ca] < 0.0:
                cdf[c1 - ca] = ndtr_fast((x0 + c1 * cs - x) / b)
            mx += cdf[c1 - ca] - f0
        mass += my * mx
    return mass


@njit(cache=True, inline="always")
def _mass_one_run(x, y, b, x0, y0, cs, nrows, r_top, r_bot, ca, cb, r0, r1, c0, c1):
    """:func:`_mass_memo` when a single band of rows [r0, r1) with a single run of columns [c0, c1)
    is in reach (a rectangular window, or a point deep inside one): the same four CDFs, the same
    expressions and bits, without the memo tables (whose allocation would cost more than the CDFs)."""
    if c0 > cb:
        return 0.0
    ftop = 1.0
    if r0 >= r_top:
        ftop = ndtr_fast((y0 + (nrows - r0) * cs - y) / b)
    fbot = 0.0
    if r1 <= r_bot + 1:
        fbot = ndtr_fast((y0 + (nrows - r1) * cs - y) / b)
    my = ftop - fbot
    if my == 0.0:
        return 0.0
    f0 = 0.0
    if c0 >= ca:
        f0 = ndtr_fast((x0 + c0 * cs - x) / b)
    cc = min(c1, cb)
    return my * (ndtr_fast((x0 + cc * cs - x) / b) - f0)


@njit(cache=True, inline="always")
def _mass_dense(x, y, b, x0, y0, cs, nrows, r_top, r_bot, ca, cb, g0, g1, band_r0, band_r1, band_ptr,
                runs_c0, runs_c1, run_band):
    """The same sum with every edge's CDF in reach computed up front by :func:`_fill_cdf`.

    ``cdf[0] = 0`` stands for every column edge left of the reach and ``cdf[n]`` (column ``cb``) for
    every edge right of it, so a run costs two clamped loads and no branch or search (runs outside
    ``[ca, cb]`` add ``cdf[i] - cdf[i] = 0``).  The bands' y masses go to a table first and the runs
    of all bands are summed in ONE loop (``run_band``: each run's band), not in a short loop per
    band (a few runs each) whose exit the branch predictor would miss.
    """
    n = cb - ca + 1
    cdf = np.empty(n + 1)
    cdf[0] = 0.0
    _fill_cdf(cdf[1:], x0, ca, 1, cs, x, b)
    ydf = np.empty(r_bot - r_top + 2)
    _fill_cdf(ydf, y0, nrows - r_top, -1, cs, y, b)
    my = np.empty(g1 - g0)
    for g in range(g1 - g0):
        # band rows [r0, r1); edges beyond the reach count as CDF 1 (top) or 0 (bottom)
        r0 = band_r0[g0 + g]
        r1 = band_r1[g0 + g]
        ftop = ydf[max(r0 - r_top, 0)]
        ftop = ftop if r0 >= r_top else 1.0
        fbot = ydf[min(r1 - r_top, r_bot + 1 - r_top)]
        fbot = fbot if r1 <= r_bot + 1 else 0.0
        my[g] = ftop - fbot
    # views from 0 (an index of unknown sign would get Numba's wraparound test)
    ra = band_ptr[g0]
    rb = band_ptr[g1]
    c0 = runs_c0[ra:rb]
    c1 = runs_c1[ra:rb]
    band = run_band[ra:rb]
    mass = 0.0
    for r in range(c0.shape[0]):
        i0 = min(max(c0[r] - ca + 1, 0), n)
        i1 = min(max(c1[r] - ca + 1, 0), n)
        mass += my[band[r] - g0] * (cdf[i1] - cdf[i0])
    return mass


@njit(parallel=True, cache=True)
def edge_mass_kernel(px, py, bws, idx, x0, y0, cs, nrows, ncols, band_r0, band_r1, band_ptr, runs_c0, runs_c1,
                     row_band, run_band, reach, out, dense_edges=4):
    """out[k] = window mass of N((px, py)[idx[k]], bws[idx[k]]^2 I), exact per-cell integrals.

    Sum over the bands of identical rows that meet [y - R, y + R] (R = reach x b) of
    (normal mass of the band's y-range) x (sum over its runs of x masses); edges beyond the reach
    count as CDF 0 or 1 (error < 4 Phi(-reach)).  Where the bands and runs in reach need most edges'
    CDFs anyway (ragged masks such as the eBird US one: ~1 band per row, ~3 runs per band), all of
    them are computed in one vectorised pass (:func:`_mass_dense`: a vectorised CDF costs a small
    fraction of a scalar one, and there is no search per band; ``run_band``: the band of each run); otherwise (few
    bands in reach) each edge's CDF is computed on first use (:func:`_mass_memo`), with the same
    :func:`~hphawkes_py._fastmath.ndtr_fast`, and with one band of one run in reach (a rectangle)
    its four CDFs directly (:func:`_mass_one_run`, the memo path's bits).  ``dense_edges``: a
    point's tables are dense when (bands in reach) x dense_edges >= its row edges and (runs in
    reach) x dense_edges >= its column edges (0: never; both paths give the same masses to
    rounding).
    """
    for k in prange(idx.shape[0]):
        j = idx[k]
        x = px[j]
        y = py[j]
        b = bws[j]
        R = reach * b
        r_top = nrows - 1 - int(math.floor((y + R - y0) / cs))
        r_bot = nrows - 1 - int(math.floor((y - R - y0) / cs))
        r_top = max(r_top, 0)
        r_bot = min(r_bot, nrows - 1)
        ca = int(max(math.floor((x - R - x0) / cs), 0.0))
        cb = int(min(math.floor((x + R - x0) / cs) + 1.0, float(ncols)))
        mass = 0.0
        if r_top <= r_bot and ca <= cb:
            g0 = row_band[r_top]
            g1 = row_band[r_bot] + 1
            if g1 - g0 == 1 and band_ptr[g1] - band_ptr[g0] == 1 and runs_c1[band_ptr[g0]] > ca:
                lo = band_ptr[g0]
                mass = _mass_one_run(x, y, b, x0, y0, cs, nrows, r_top, r_bot, ca, cb, band_r0[g0], band_r1[g0],
                                     runs_c0[lo], runs_c1[lo])
            elif (dense_edges * (g1 - g0) >= r_bot - r_top + 2
                  and dense_edges * (band_ptr[g1] - band_ptr[g0]) >= cb - ca + 1):
                mass = _mass_dense(x, y, b, x0, y0, cs, nrows, r_top, r_bot, ca, cb, g0, g1, band_r0, band_r1,
                                   band_ptr, runs_c0, runs_c1, run_band)
            else:
                mass = _mass_memo(x, y, b, x0, y0, cs, nrows, r_top, r_bot, ca, cb, g0, g1, band_r0, band_r1,
                                  band_ptr, runs_c0, runs_c1)
        out[k] = mass


def run_bands(band_ptr: np.ndarray) -> np.ndarray:
    """The band of each run (``band_ptr`` of :meth:`Window.row_bands`)."""
    return np.repeat(np.arange(len(band_ptr) - 1, dtype=np.int64), np.diff(band_ptr))
