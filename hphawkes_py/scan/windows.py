"""The scan windows: every centre's locations sorted by distance and cut at the maximum size.

:func:`build_windows` gives, for every centre, its neighbour list (nearest first, cut where the
window size would exceed the limit) as a flattened CSR structure (``offsets``, ``neighbors``) with,
per entry, the window size after that entry and whether a window ends there. As in SaTScan
(``CompareIdentifierDistance``, ``CalculateNumberOfNeighboringLocationsByPopulationAtRisk``), locations at
exactly the same distance enter one at a time, the lesser coordinates first, and a window ends after
every location: on a grid, the window that takes one of four equidistant neighbours is scanned too.
Built once per analysis, on the CPU (Numba) whatever the engine; both engines, and the space-time
cylinders, read the same windows.
"""
from __future__ import annotations

import concurrent.futures as cf
import contextlib
import math

import numba
import numpy as np
from numba import njit, prange

__all__ = ["build_windows", "cumulative_expected"]

#: temporary (centre, neighbour) slots per chunk of window construction and per thread (8 MB of distances
#: each): every chunk costs two parallel regions and a thread-pool round trip, which cost most when the
#: cores are shared or many, so the chunks grow with the thread count (fewer, larger chunks)
CHUNK_SLOTS = 1 << 20
#: at most this many slots per chunk whatever the thread count (512 MB of distances and keys)
CHUNK_SLOTS_MAX = 1 << 25


@njit(cache=True, inline="always")
def _sort_run(run, drow, rank):
    """``run`` (location indices) sorted in place by (distance ``drow``, ``rank``), by insertion (the runs it
    sorts are short)."""
    for t in range(1, run.shape[0]):
        v = run[t]
        q = t - 1
        while q >= 0 and (drow[run[q]] > drow[v] or (drow[run[q]] == drow[v] and rank[run[q]] > rank[v])):
            run[q + 1] = run[q]
            q -= 1
        run[q + 1] = v


@njit(cache=True, nogil=True)
def _cut_rows(d, keys, shift, pop, limit, maxd2, rank, counts, nb, circle, circle_limit):
    """Each centre's locations in distance order (row of the sorted ``keys`` of :func:`_pack_keys` or
    :func:`_pack_keys32`, the column index in their low ``shift`` bits), cut at the size limit (and the
    squared radius ``maxd2``) into the rows of ``nb`` (chunk, kmax): ``counts[i]`` locations each.

    Keys order by distance up to runs of keys equal in their high bits (distances that differ in their
    low bits only, or tie); a run's locations are put in (distance, ``rank``) order (:func:`_sort_run`), so
    that locations at exactly the same distance enter one at a time in rank order, as SaTScan's. A
    location enters while the window's size (``pop``: int persons or float64 expected cases) stays
    within ``limit``, and ``circle`` (float64, L or empty) within ``circle_limit`` (SaTScan's max circle
    size file); the window stops at the first that would pass either. The distances are read only in a
    run and for a finite radius. One thread (the rows of a chunk are split over a thread pool)."""
    n_loc = d.shape[1]
    kmax = nb.shape[1]
    radius = maxd2 < np.inf
    second = circle.shape[0] > 0
    sh = np.int64(shift)
    low = (np.int64(1) << sh) - np.int64(1)
    run = np.empty(n_loc, dtype=np.int64)
    for ii in range(d.shape[0]):
        krow = keys[ii]
        drow = d[ii]
        nrow = nb[ii]
        total = pop[0] - pop[0]  # zero of pop's type
        total2 = 0.0
        k = 0
        full = False
        while k < n_loc and k < kmax and not full:
            key = np.int64(krow[k])
            e = k + 1
            if e < n_loc and (np.int64(krow[e]) >> sh) == (key >> sh):
                # the run [k, e) of keys equal in their high bits (from a selected head, see
                # _sorted_windows, no run passes the head), in (distance, rank) order
                while e < n_loc and (np.int64(krow[e]) >> sh) == (key >> sh):
                    e += 1
                r = run[:e - k]
                for t in range(e - k):
                    r[t] = np.int64(krow[k + t]) & low
                _sort_run(r, drow, rank)
            else:
                run[0] = key & low
            for t in range(e - k):
                loc = run[t]
                if k >= kmax or (radius and drow[loc] > maxd2) or total + pop[loc] > limit:
                    full = True
                    break
                if second:
                    if total2 + circle[loc] > circle_limit:
                        full = True
                        break
                    total2 += circle[loc]
                total += pop[loc]
                nrow[k] = loc
                k += 1
        counts[ii] = k


@njit(cache=True, parallel=True)
def _compact_rows(counts, nb, pop, out_nb, out_npop, out_bnd, base):
    """The first ``counts[i]`` locations of each row of ``nb`` written one after the other into the outputs
    from position ``base``, with the window size after each (the running sum of ``pop``, in entry order:
    the bits of the cut's sums) and a window end at each (rows in parallel); returns the position after
    the last."""
    start = np.zeros(counts.shape[0] + 1, np.int64)
    start[0] = base
    for i in range(counts.shape[0]):
        start[i + 1] = start[i] + counts[i]
    for i in prange(counts.shape[0]):
        a = start[i]
        total = pop[0] - pop[0]
        for t in range(counts[i]):
            loc = nb[i, t]
            total += pop[loc]
            out_nb[a + t] = loc
            out_npop[a + t] = total
            out_bnd[a + t] = 1
    return start[counts.shape[0]]


@njit(cache=True, parallel=True)
def _squared_distances(P, Q, d):
    """d[i, j] = sum_k (P[j, k] - Q[i, k])^2, term by term in the order of the coordinates and
    without fused multiply-adds (the same bits as NumPy's ``(P - Q) ** 2`` sums: distance ties
    between locations must stay ties).  No (centres x points) temporaries: in NumPy they cost
    more than the sort."""
    D = P.shape[1]
    for i in prange(Q.shape[0]):
        for j in range(P.shape[0]):
            t = P[j, 0] - Q[i, 0]
            acc = t * t
            for k in range(1, D):
                t = P[j, k] - Q[i, k]
                acc += t * t
            d[i, j] = acc


@njit(cache=True, nogil=True)
def _pack_keys(d, shift, keys):
    """``keys[i, j]``: the bits of ``d[i, j]`` (>= 0, so that they order as the values) with the low
    ``shift`` bits replaced by j (``shift`` bits hold every column index)."""
    low = (np.uint64(1) << np.uint64(shift)) - np.uint64(1)
    for i in range(d.shape[0]):
        bits = d[i].view(np.uint64)
        for j in range(d.shape[1]):
            keys[i, j] = (bits[j] & ~low) | np.uint64(j)


@njit(cache=True, nogil=True)
def _pack_keys32(d, shift, keys):
    """``keys[i, j]`` (uint32): ``d[i, j]`` scaled to the row's largest distance and cut to its top
    ``32 - shift`` bits (``floor(d M / max)``, M = 2**(32 - shift) - 1: non-decreasing in d, so the keys order as
    the distances up to runs of equal high bits), with the low ``shift`` bits replaced by j. Half the bytes
    of :func:`_pack_keys`' keys: the sort, most of the windows' construction, moves half the memory."""
    top = (1 << (32 - shift)) - 1
    for i in range(d.shape[0]):
        row = d[i]
        mx = 0.0
        for j in range(row.shape[0]):
            mx = max(mx, row[j])
        scale = top / mx if mx > 0 else 0.0
        for j in range(row.shape[0]):
            q = min(np.int64(row[j] * scale), top)
            keys[i, j] = np.uint32((q << shift) | j)


#: build_windows sorts the distances of fewer centre x location pairs than this on one thread: starting a pool of
#: threads costs more than such a sort (the continuous Poisson model builds windows for every replicate)
SERIAL_DISTANCES = 1 << 18

#: the nearest locations a window can hold are selected before the sort when they are at most this fraction of
#: a row: selecting costs a fraction of a sort of the row, worth it when it leaves at least a fifth of the row
#: unsorted (benchmarks/results/scan_windows_selection.md)
SELECT_FRACTION = 0.8

#: 32-bit sort keys (:func:`_pack_keys32`) up to this many index bits (16,384 locations): at least 18 bits of
#: scaled distance are left, so runs of equal keys stay short
SHIFT32_MAX = 14


def _sorted_windows(P, Q, pool, d, keys64, nb, counts, cut, keys32=None):
    """Squared distances between the centres ``Q`` (rows) and the points ``P`` (columns), any dimension,
    into ``d``, each row's locations sorted by distance and cut into the rows of ``nb`` (``counts``: their
    numbers; ``cut``: the other arguments of :func:`_cut_rows`), rows split over the workers of ``pool``
    (one per Numba thread, None: all on this one; the sort and the Numba helpers release the GIL, and each
    worker cuts the rows it sorted while they are in its cache).

    The order: each distance's bits with the column index in their low bits (:func:`_pack_keys`), sorted by
    NumPy's SIMD sort of uint64 (into ``keys64``), the indices read back from the keys by the cut, which
    puts the few runs of distances equal in their high bits in distance order: exactly the order of
    ``argsort`` up to ties (which the cut puts in rank order), at the speed of a SIMD sort (NumPy's
    argsort has no SIMD version on AVX2).

    Only the first ``kmax = nb.shape[1]`` positions of each row are needed (no window holds more
    locations): the ``kmax`` nearest are selected (``np.partition``) and only they sorted, unless the
    nearest left out may tie with the last one kept (equal high bits), when the whole row is sorted; so no
    run of equal high bits read from the head passes it.

    ``keys32`` (uint32, the shape of ``d``): with up to ``SHIFT32_MAX`` index bits the keys are 32-bit ones
    (:func:`_pack_keys32`) sorted there, the same order at half the bytes."""
    _squared_distances(P, Q, d)
    shift = max(1, int(P.shape[0] - 1).bit_length())
    L = P.shape[0]
    head = nb.shape[1]
    partial = 0 < head <= SELECT_FRACTION * L
    narrow = keys32 is not None and keys32.shape[1] == L and shift <= SHIFT32_MAX

    def rows(a, b):
        if narrow:
            keys = keys32[a:b]
            _pack_keys32(d[a:b], shift, keys)
        else:
            keys = keys64[a:b]
            _pack_keys(d[a:b], shift, keys)
        if partial:
            keys.partition(head, axis=1)
            keys[:, :head].sort(axis=1)
            high = keys.dtype.type(shift)
            for r in np.flatnonzero((keys[:, head - 1] >> high) == (keys[:, head] >> high)):
                keys[r].sort()
        else:
            keys.sort(axis=1)
        _cut_rows(d[a:b], keys, shift, *cut[:4], counts[a:b], nb[a:b], *cut[4:])

    parts = 1 if pool is None else max(1, min(numba.get_num_threads(), Q.shape[0]))
    bounds = np.linspace(0, Q.shape[0], parts + 1).astype(int)
    if parts == 1:
        rows(0, Q.shape[0])
    else:
        list(pool.map(rows, bounds[:-1], bounds[1:]))


def _window_rows(P, Q, pop, lim, maxd2, rank, pool, counts, scratch, out, base, circle, circle_lim):
    """The (neighbors, size, boundary) entries of the centres ``Q`` written into the arrays ``out``
    from position ``base``; ``counts`` (out) gets each centre's number of entries; ``scratch``:
    (d, keys64, nb, keys32) buffers of at least ``len(Q)`` rows.  Returns the position after the last
    entry."""
    c = Q.shape[0]
    d, keys64, nb, keys32 = (b[:c] for b in scratch)
    # no window holds more than kmax = nb.shape[1] locations (see build_windows)
    _sorted_windows(P, Q, pool, d, keys64, nb, counts, (pop, lim, maxd2, rank, circle, circle_lim), keys32=keys32)
    return _compact_rows(counts, nb, pop, *out, base)


def _square(r: float) -> float:
    """``r ** 2``, inf where it overflows: a radius beyond every distance is no limit."""
    try:
        return r ** 2
    except OverflowError:
        return math.inf


def build_windows(centres: np.ndarray, coords: np.ndarray, pop: np.ndarray, limit: float,
                  max_distance: float | None = None, tie_coords: np.ndarray | None = None,
                  circle: np.ndarray | None = None, circle_limit: float | None = None):
    """Neighbour lists of every centre, cut where the window size would exceed ``limit``.

    Parameters
    ----------
    centres : (m, D) float64
    coords : (L, D) float64 location coordinates (planar: D = 2; unit vectors for great-circle
        distances: D = 3, the order by chord length is the order by great-circle distance)
    pop : (L,) integer persons (cases + controls) per location, or float64 expected cases
    limit : float
        Maximum window size (``max_population * N``); the first location that would take the
        window above it is not entered, and the window stops there.
    max_distance : float, optional
        Maximum radius (in the units of ``coords``): locations farther from the centre never enter.
    tie_coords : (L, D') float64, optional
        Locations at exactly the same distance from a centre enter one at a time in the order of
        these coordinates (lexicographic, as SaTScan breaks distance ties: the lesser coordinates
        first);
        default ``coords`` (elliptic windows pass the untransformed coordinates).
    circle : (L,) float64, optional
        A second size per location (the population of SaTScan's max circle size file) whose sum over
        a window must stay within ``circle_limit`` too: a window stops before the first location that
        would take either sum above its limit (SaTScan's ``CalculateNumberOfNeighboringLocationsByMaxCirclePopulation``
        as a further restriction).

    Returns
    -------
    offsets : (m + 1,) int64
    neighbors : (E,) int32 location indices, each centre's nearest first
    npop : (E,) window size after the entry: int32 persons when they total under 2**31 - 1 (the
        largest window array: 4 bytes less per entry to write into fresh memory, whose first
        writes are slow page faults), else int64; float64 expected cases
    boundary : (E,) uint8 1 where a window ends: every entry here (the kernels take the mask
        because the Monte Carlo pilot scans a thinned set of windows, see ``cpu._pilot_maxima``)
    """
    Q = np.ascontiguousarray(centres, dtype=np.float64)
    P = np.ascontiguousarray(coords, dtype=np.float64)
    if np.asarray(pop).dtype.kind == "f":
        pop = np.ascontiguousarray(pop, dtype=np.float64)
        lim = np.float64(limit)
    else:
        pop = np.ascontiguousarray(pop, dtype=np.int64)
        if pop.size and pop.min() >= 0 and pop.sum() < 2**31 - 1:
            pop = pop.astype(np.int32)  # every window size (a partial sum) fits
        lim = np.int64(math.floor(limit))  # populations are integers: pop <= limit <=> pop <= floor(limit)
    maxd2 = np.float64(np.inf if max_distance is None else _square(float(max_distance)))
    if circle is None:
        circle, circle_lim = np.zeros(0), np.float64(np.inf)
    else:
        circle, circle_lim = np.ascontiguousarray(circle, dtype=np.float64), np.float64(circle_limit)
    m = Q.shape[0]
    tc = P if tie_coords is None else np.asarray(tie_coords, dtype=np.float64)
    rank = np.empty(P.shape[0], dtype=np.int64)
    rank[np.lexsort(tc.T[::-1])] = np.arange(P.shape[0])
    # the largest possible window: the smallest populations first
    kmax = int(np.searchsorted(np.cumsum(np.sort(pop)), lim, side="right"))
    kmax = max(1, min(kmax, P.shape[0]))
    # chunks of centres whose scratch (distances, sort keys, rows of locations) is allocated once and
    # 16 MB per thread: fresh large buffers per chunk cost more in page faults than the work in them
    L = P.shape[0]
    slots = min(CHUNK_SLOTS * max(1, numba.get_num_threads()), CHUNK_SLOTS_MAX)
    chunk = max(1, min(m, slots // max(kmax, L)))
    narrow = (L - 1).bit_length() <= SHIFT32_MAX
    scratch = (np.empty((chunk, L)), np.empty((0, 0) if narrow else (chunk, L), dtype=np.uint64),
               np.empty((chunk, kmax), dtype=np.int32), np.empty((chunk, L) if narrow else (0, 0), dtype=np.uint32))
    counts_all = np.zeros(m, dtype=np.int64)
    # the outputs at their largest possible size (m kmax entries; pages never written are never
    # mapped), filled chunk after chunk and returned as views of their first E entries: no
    # concatenation of per-chunk parts (a second copy of every entry)
    out = (np.empty(m * kmax, np.int32), np.empty(m * kmax, pop.dtype), np.empty(m * kmax, np.uint8))
    E = 0
    # one pool for every chunk (starting threads costs more than a small chunk's work), none for a problem
    # whose distances are fewer than SERIAL_DISTANCES
    threads = max(1, numba.get_num_threads()) if m * L >= SERIAL_DISTANCES else 1
    with cf.ThreadPoolExecutor(threads) if threads > 1 else contextlib.nullcontext() as pool:
        for first in range(0, m, chunk):
            last = min(m, first + chunk)
            E = _window_rows(P, Q[first:last], pop, lim, maxd2, rank, pool, counts_all[first:last], scratch, out, E,
                             circle, circle_lim)
    offsets = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(counts_all, out=offsets[1:])
    return offsets, out[0][:E], out[1][:E], out[2][:E]


def cumulative_expected(windows, expected: np.ndarray) -> np.ndarray:
    """(E,) expected cases of each centre's window after each entry (sums in entry order)."""
    offsets, neighbors = windows[0], windows[1]
    out = np.empty(len(neighbors), dtype=np.float64)
    _running_sums(offsets, neighbors, np.ascontiguousarray(expected, dtype=np.float64), out)
    return out


@njit(cache=True, parallel=True)
def _running_sums(offsets, neighbors, expected, out):
    """``out[a:b] = cumsum(expected[neighbors[a:b]])`` for every centre's entries ``a:b``, one addition
    after the other in entry order (the bits of ``np.cumsum``), centres on the threads."""
    for i in prange(offsets.shape[0] - 1):
        acc = 0.0
        for k in range(offsets[i], offsets[i + 1]):
            acc += expected[neighbors[k]]
            out[k] = acc
