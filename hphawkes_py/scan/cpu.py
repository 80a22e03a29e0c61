"""Numba kernels of the Bernoulli spatial scan statistic (CPU engine).

Two hot steps:

* :func:`build_windows` -- for every centre, the locations sorted by distance and cut
  at the maximum window population (ties in distance enter together). The result is a
  flattened CSR structure (``offsets``, ``neighbors``) plus, per entry, the window
  population after that entry (``npop``) and whether a window ends there
  (``boundary``: the last entry of a tie group). Built once per analysis.
* :func:`scan_batch` -- for a batch of ``R`` case vectors (the observed data or Monte
  Carlo replicates, laid out locations x replicates so the replicate index is the
  contiguous, vectorised one), every centre walks its neighbour list once, accumulating
  the window's cases for all ``R`` replicates at once and evaluating the Bernoulli log
  likelihood ratio at each window end from a table of ``k log k``. Work per replicate
  is O(total number of window entries).
"""
from __future__ import annotations

import concurrent.futures as cf
import functools
import math

import numba
import numpy as np
from numba import njit, prange

from .engine import Engine, null_loglik, poisson_logs

#: temporary (centre, neighbour) slots per chunk of window construction and per thread (8 MB of distances
#: each): every chunk costs three parallel regions and a thread-pool round trip, which cost most when the
#: cores are shared or many, so the chunks grow with the thread count (fewer, larger chunks)
CHUNK_SLOTS = 1 << 20
#: at most this many slots per chunk whatever the thread count (512 MB of distances and keys)
CHUNK_SLOTS_MAX = 1 << 25

__all__ = ["build_windows", "draw_cases", "draw_multinomial", "scan_batch", "max_llr_pruned", "CpuEngine",
           "space_time_batch", "space_time_bernoulli_batch", "CpuSpaceTimeEngine"]


@njit(cache=True, parallel=True)
def _windows_chunk(d, order, pop, limit, maxd2, rank, counts, nb, npop, bnd):
    """Cut each centre's distance-sorted locations (row of ``order``) at the size limit (and
    the squared radius ``maxd2``), tie groups entering together, into rows of the (chunk, kmax)
    buffers; a tie group in ``rank`` order. ``pop`` is int64 (persons) or float64 (expected cases):
    one kernel, two types."""
    n_loc = d.shape[1]
    kmax = nb.shape[1]
    for ii in prange(d.shape[0]):
        total = pop[0] - pop[0]  # zero of pop's type
        k = 0
        while k < n_loc and k < kmax:
            # the tie group [k, e) of locations at exactly the same distance enters together
            e = k + 1
            group = pop[order[ii, k]]
            dk = d[ii, order[ii, k]]
            while e < n_loc and d[ii, order[ii, e]] == dk:
                group += pop[order[ii, e]]
                e += 1
            # a tie group in rank order: insertion sort
            for t in range(k + 1, e):
                v = order[ii, t]
                q = t - 1
                while q >= k and rank[order[ii, q]] > rank[v]:
                    order[ii, q + 1] = order[ii, q]
                    q -= 1
                order[ii, q + 1] = v
            if total + group > limit or e > kmax or dk > maxd2:
                break
            for t in range(k, e):
                total += pop[order[ii, t]]
                nb[ii, t] = order[ii, t]
                npop[ii, t] = total
                bnd[ii, t] = 0
            bnd[ii, e - 1] = 1  # a window ends only after the whole tie group
            k = e
        counts[ii] = k


@njit(cache=True, parallel=True)
def _compact_rows(counts, nb, npop, bnd, out_nb, out_npop, out_bnd, base):
    """The first ``counts[i]`` entries of each row of the (chunk, kmax) buffers, written one after
    the other into the outputs from position ``base`` (rows copied in parallel, rather than through a boolean mask
    over the whole buffers); returns the position after the last."""
    start = np.zeros(counts.shape[0] + 1, np.int64)
    start[0] = base
    for i in range(counts.shape[0]):
        start[i + 1] = start[i] + counts[i]
    for i in prange(counts.shape[0]):
        a = start[i]
        for t in range(counts[i]):
            out_nb[a + t] = nb[i, t]
            out_npop[a + t] = npop[i, t]
            out_bnd[a + t] = bnd[i, t]
    return start[counts.shape[0]]


@njit(cache=True, inline="always")
def _count_sorted(points, n, cum, counts):
    """``counts[l] += #{t < n: cum[l-1] <= points[t] < cum[l]}`` for sorted ``points`` (a merge
    with the cumulative sizes ``cum``; locations of size zero never receive a point)."""
    L = cum.shape[0]
    loc = 0
    for t in range(n):
        while loc < L - 1 and points[t] >= cum[loc]:
            loc += 1
        counts[loc] += 1


#: MT19937's state size and middle offset (numba's np.random generator: the null draws' stream)
_MT_N = 624
_MT_M = 397


@njit(cache=True, inline="always")
def _mt_seed(mt, seed):
    """``mt`` (624 uint32) as numba's ``np.random.seed(seed)`` leaves its state (MT19937's init_genrand,
    numba_rnd_init); returns the stream position to pass to :func:`_mt_next`, which makes the first
    draw twist the state (:func:`_mt_refill`)."""
    mask = np.uint64(0xFFFFFFFF)
    s = np.uint64(seed) & mask
    for pos in range(_MT_N):
        mt[pos] = np.uint32(s)
        s = (np.uint64(1812433253) * (s ^ (s >> np.uint64(30))) + np.uint64(pos + 1)) & mask
    return _MT_N


@njit(cache=True)
def _mt_refill(mt, out):
    """The twist of ``mt`` (numba_rnd_shuffle) and its 624 tempered words into ``out``: the next 624
    words numba's ``np.random`` would draw, made in vectorisable loops instead of one call per word
    (which loads, tests and stores the thread's state index every time)."""
    upper = np.uint32(0x80000000)
    lower = np.uint32(0x7FFFFFFF)
    matrix_a = np.uint32(0x9908B0DF)
    one = np.uint32(1)
    for i in range(_MT_N - _MT_M):
        y = (mt[i] & upper) | (mt[i + 1] & lower)
        mt[i] = mt[i + _MT_M] ^ (y >> one) ^ ((y & one) * matrix_a)
    for i in range(_MT_N - _MT_M, _MT_N - 1):
        y = (mt[i] & upper) | (mt[i + 1] & lower)
        mt[i] = mt[i + _MT_M - _MT_N] ^ (y >> one) ^ ((y & one) * matrix_a)
    y = (mt[_MT_N - 1] & upper) | (mt[0] & lower)
    mt[_MT_N - 1] = mt[_MT_M - 1] ^ (y >> one) ^ ((y & one) * matrix_a)
    for i in range(_MT_N):
        y = mt[i]
        y ^= y >> np.uint32(11)
        y ^= (y << np.uint32(7)) & np.uint32(0x9D2C5680)
        y ^= (y << np.uint32(15)) & np.uint32(0xEFC60000)
        y ^= y >> np.uint32(18)
        out[i] = y


@njit(cache=True, inline="always")
def _mt_next(mt, words, idx):
    """The next 32-bit word of the stream (``words``: the tempered block, ``idx``: the position in it)
    and the new position."""
    if idx >= _MT_N:
        _mt_refill(mt, words)
        idx = 0
    return np.uint64(words[idx]), idx + 1


@njit(cache=True, inline="always")
def _mt_random(mt, words, idx):
    """numba's ``np.random.random()`` from the stream: (a 2**26 + b) / 2**53 of the top 27 and 26 bits of
    two words; returns (value, new position)."""
    a, idx = _mt_next(mt, words, idx)
    b, idx = _mt_next(mt, words, idx)
    a >>= np.uint64(5)
    b >>= np.uint64(6)
    return (np.float64(a) * 67108864.0 + np.float64(b)) / 9007199254740992.0, idx


@njit(cache=True)
def _randint_mask(n):
    """``(mask, wide)`` of numba's ``np.random.randint(0, n)`` (n >= 2): n - 1 with every bit below its
    top bit set (its high word when ``wide``), and whether it takes two words (n - 1 >= 2**32); see
    :func:`_mt_randint`."""
    m = n - 1
    m |= m >> 1
    m |= m >> 2
    m |= m >> 4
    m |= m >> 8
    m |= m >> 16
    m |= m >> 32
    wide = m > 0xFFFFFFFF
    return np.uint64(m >> 32 if wide else m), wide


@njit(cache=True, inline="always")
def _mt_randint(mt, words, idx, n, mask, wide):
    """numba's ``np.random.randint(0, n)`` (n >= 2, int64; ``mask, wide = _randint_mask(n)``) from the
    stream: the low bits of a word (of two words, high first, when ``wide``) within ``mask``, rejected
    while >= n; returns (value, new position)."""
    while True:
        w, idx = _mt_next(mt, words, idx)
        if wide:
            lo, idx = _mt_next(mt, words, idx)
            v = np.int64(((w & mask) << np.uint64(32)) + lo)
        else:
            v = np.int64(w & mask)
        if v < n:
            return v, idx


@njit(cache=True, parallel=True)
def _draw_cases(cumpop, n_cases, seeds, out):
    """Random relabelling of the C cases among the N persons, per replicate (column).

    A uniformly random C-subset of the persons 0..N-1 (or its complement when C > N/2),
    drawn by rejection of repeated positions, counted per location through the cumulative
    populations: exactly the multivariate hypergeometric distribution, in O(C log L) per
    replicate whatever the population size. Replicate r uses its own seed (the stream of numba's
    ``np.random.randint`` after ``np.random.seed(seed)``, made by :func:`_mt_randint`), so results do
    not depend on threads or batching. ``out`` is (locations, replicates).
    """
    L = cumpop.shape[0]
    N = cumpop[L - 1]
    R = seeds.shape[0]
    flip = n_cases > N // 2
    k = N - n_cases if flip else n_cases
    # draws in rounds: k positions, then as many as were repeats, ... until k distinct. Small
    # populations mark positions in a byte map (no sort; positions located by a table),
    # large ones sort and deduplicate; both keep the same draws, hence the same subset.
    bitmap = N <= 16 * k + 65536
    # with the byte map, each person's location comes from a table: one load per case, where a
    # binary search over the cumulative populations costs log L dependent loads
    loc_of = np.empty(N if bitmap else 0, dtype=np.int32)
    if bitmap:
        prev = 0
        for l in range(L):
            for v in range(prev, cumpop[l]):
                loc_of[v] = l
            prev = cumpop[l]
    mask, wide = _randint_mask(max(N, 2))  # (N <= 1: k = 0, nothing is drawn)
    n_chunks = min(R, 64)
    for ch in prange(n_chunks):
        mark = np.zeros(N if bitmap else 1, dtype=np.uint8)
        chosen = np.empty(k, dtype=np.int64)
        counts = np.zeros(L, dtype=np.int32)
        mt = np.empty(_MT_N, dtype=np.uint32)
        words = np.empty(_MT_N, dtype=np.uint32)
        for r in range(ch * R // n_chunks, (ch + 1) * R // n_chunks):
            idx = _mt_seed(mt, seeds[r])
            counts[:] = 0
            if bitmap:
                have = 0
                while have < k:
                    need = k - have
                    for t in range(need):
                        v, idx = _mt_randint(mt, words, idx, N, mask, wide)
                        if mark[v] == 0:
                            mark[v] = 1
                            chosen[have] = v
                            have += 1
                for t in range(k):
                    counts[loc_of[chosen[t]]] += 1
                    mark[chosen[t]] = 0
            else:
                sel = np.empty(0, dtype=np.int64)
                have = 0
                while have < k:
                    # distinct positions so far plus fresh draws, sorted and deduplicated in place
                    need = k - have
                    buf = np.empty(have + need, dtype=np.int64)
                    for t in range(have):
                        buf[t] = sel[t]
                    for t in range(need):
                        buf[have + t], idx = _mt_randint(mt, words, idx, N, mask, wide)
                    buf.sort()
                    w = 1
                    for t in range(1, buf.shape[0]):
                        if buf[t] != buf[w - 1]:
                            buf[w] = buf[t]
                            w += 1
                    sel = buf
                    have = w
                # sel[:k] is sorted: merge it with the cumulative populations
                _count_sorted(sel, k, cumpop, counts)
            if flip:
                prev = 0
                for l in range(L):
                    out[l, r] = (cumpop[l] - prev) - counts[l]
                    prev = cumpop[l]
            else:
                for l in range(L):
                    out[l, r] = counts[l]


@njit(cache=True, inline="always")
def _hashmix(value, hc):
    """NumPy SeedSequence's hashmix on uint32 values held in uint64 (``hc``: the hash constant, updated
    by the caller); returns (value, new hash constant)."""
    mask = np.uint64(0xFFFFFFFF)
    value = (value ^ hc) & mask
    hc = (hc * np.uint64(0x931E8875)) & mask
    value = (value * hc) & mask
    value ^= value >> np.uint64(16)
    return value, hc


@njit(cache=True)
def _child_seed_words(prefix, pool_size, first, out):
    """``out[k]``: the first uint32 word of ``generate_state`` of the SeedSequence whose assembled
    entropy is ``prefix`` followed by the one word ``first + k`` (the children ``first + k`` of a
    SeedSequence, see :func:`~.engine.replicate_seed_words`), by NumPy's mixing algorithm
    (mix_entropy, then generate_state's hash of the pool's first word)."""
    mask = np.uint64(0xFFFFFFFF)
    n = prefix.shape[0] + 1
    for k in range(out.shape[0]):  # a few hashes each: not worth a parallel region
        ent = np.empty(n, dtype=np.uint64)
        for t in range(n - 1):
            ent[t] = np.uint64(prefix[t])
        ent[n - 1] = np.uint64(first + k)
        mixer = np.zeros(pool_size, dtype=np.uint64)
        hc = np.uint64(0x43B0D7E5)
        for t in range(pool_size):
            v = ent[t] if t < n else np.uint64(0)
            mixer[t], hc = _hashmix(v, hc)
        for src in range(pool_size):
            for dst in range(pool_size):
                if src != dst:
                    h, hc = _hashmix(mixer[src], hc)
                    x = (np.uint64(0xCA01F9DD) * mixer[dst] - np.uint64(0x4973F715) * h) & mask
                    mixer[dst] = x ^ (x >> np.uint64(16))
        for src in range(pool_size, n):
            for dst in range(pool_size):
                h, hc = _hashmix(ent[src], hc)
                x = (np.uint64(0xCA01F9DD) * mixer[dst] - np.uint64(0x4973F715) * h) & mask
                mixer[dst] = x ^ (x >> np.uint64(16))
        hb = np.uint64(0x8B51F9DD)
        v = (mixer[0] ^ hb) & mask
        hb = (hb * np.uint64(0x58F38DED)) & mask
        v = (v * hb) & mask
        v ^= v >> np.uint64(16)
        out[k] = np.uint32(v)


def _draw(kernel, weights, dtype, n_cases, seeds):
    cum = np.cumsum(np.asarray(weights, dtype=dtype))
    # written in the locations x replicates layout the scan kernels read, each thread's replicates
    # a contiguous range (consecutive replicates fill the same cache lines): no transposed copy
    out = np.empty((len(cum), len(seeds)), dtype=np.int32)
    kernel(cum, np.int64(n_cases), np.ascontiguousarray(seeds, dtype=np.uint32), out)
    return out


def draw_cases(pop, n_cases, seeds):
    """(L, R) int32 null case counts (hypergeometric); ``seeds`` (R,) uint32, one per replicate."""
    return _draw(_draw_cases, pop, np.int64, n_cases, seeds)


@njit(cache=True, parallel=True)
def _draw_multinomial(cum, n_cases, seeds, out):
    """C cases dropped on the locations with probabilities proportional to the expected counts
    (``cum``: cumulative expected, last = total), per replicate (column of ``out``): C uniforms on
    [0, total), each counted at location ``min(L - 1, #{l: cum[l] <= u})`` (exactly multinomial).
    One seed per replicate (numba's ``np.random.random`` stream after ``np.random.seed(seed)``, made
    by :func:`_mt_random`).

    The location of a uniform is found from a guide table (the location of the start of each of
    ``16 L`` equal buckets of [0, total)), then exactly by stepping up while ``u >= cum[loc]`` and
    down while ``u < cum[loc - 1]``: the location does not depend on the guide, so the counts are
    those of sorting the uniforms and merging them with ``cum``, without
    the sort. (16 L int32 buckets: few steps per uniform, hence few mispredicted branches.)"""
    L = cum.shape[0]
    total = cum[L - 1]
    R = seeds.shape[0]
    K = 16 * L
    scale = K / total if total > 0 else 0.0
    guide = np.empty(K, dtype=np.int32)
    loc = 0
    for b in range(K):
        lo = b / scale if scale > 0 else 0.0
        while loc < L - 1 and lo >= cum[loc]:
            loc += 1
        guide[b] = loc
    n_chunks = min(R, 64)
    for ch in prange(n_chunks):
        counts = np.zeros(L, dtype=np.int32)
        mt = np.empty(_MT_N, dtype=np.uint32)
        words = np.empty(_MT_N, dtype=np.uint32)
        for r in range(ch * R // n_chunks, (ch + 1) * R // n_chunks):
            idx = _mt_seed(mt, seeds[r])
            counts[:] = 0
            for t in range(n_cases):
                x, idx = _mt_random(mt, words, idx)
                u = x * total
                b = int(u * scale)
                b = min(max(b, 0), K - 1)
                loc = guide[b]
                while loc < L - 1 and u >= cum[loc]:
                    loc += 1
                while loc > 0 and u < cum[loc - 1]:
                    loc -= 1
                counts[loc] += 1
            for l in range(L):
                out[l, r] = counts[l]


@njit(cache=True, parallel=True)
def _draw_multinomial_sorted(cum, n_cases, seeds, out):
    """The earlier :func:`_draw_multinomial` (sorted uniforms merged with ``cum``); kept for the tests
    that check the guide-table version gives the same counts."""
    L = cum.shape[0]
    total = cum[L - 1]
    R = seeds.shape[0]
    for r in prange(R):
        np.random.seed(seeds[r])
        u = np.empty(n_cases, dtype=np.float64)
        for t in range(n_cases):
            u[t] = np.random.random() * total
        u.sort()
        counts = np.zeros(L, dtype=np.int32)
        _count_sorted(u, n_cases, cum, counts)
        for l in range(L):
            out[l, r] = counts[l]


def draw_multinomial(expected, n_cases, seeds, *, sorted_merge=False):
    """(L, R) int32 multinomial case counts; ``seeds`` (R,) uint32, one per replicate (``sorted_merge``:
    the earlier sort-and-merge kernel, same counts)."""
    return _draw(_draw_multinomial_sorted if sorted_merge else _draw_multinomial, expected, np.float64, n_cases,
                 seeds)


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
def _unpack_keys(d, shift, order):
    """``order`` holding the sorted keys of :func:`_pack_keys` (as int64), in place: each row's column
    indices, in the order of their distances ``d``. The keys order by the distances' high bits, then by
    index: a run of equal high bits (distances that differ in their low ``shift`` bits only, or tie) is
    put in distance order by insertion (such runs are rare and short)."""
    low = (np.int64(1) << np.int64(shift)) - np.int64(1)
    n = order.shape[1]
    for i in range(order.shape[0]):
        o = order[i]
        for j in range(n):
            o[j] &= low
        bits = d[i].view(np.uint64)
        a = 0
        while a < n:
            top = bits[o[a]] >> np.uint64(shift)
            b = a + 1
            while b < n and bits[o[b]] >> np.uint64(shift) == top:
                b += 1
            for t in range(a + 1, b):
                v = o[t]
                q = t - 1
                while q >= a and d[i, o[q]] > d[i, v]:
                    o[q + 1] = o[q]
                    q -= 1
                o[q + 1] = v
            a = b


def _sorted_distances(P, Q, pool, d, order):
    """Squared distances between the centres ``Q`` (rows) and the points ``P`` (columns), any
    dimension, into ``d``, and their order into ``order``, rows split over the workers of ``pool``
    (one per Numba thread; the sort and the Numba helpers release the GIL). Tied locations may come in
    any order here: :func:`_windows_chunk` puts every tie group in rank order.

    The order: each distance's bits with the column index in their low bits (:func:`_pack_keys`),
    sorted by NumPy's SIMD sort of uint64, then the indices taken back and the few runs of distances
    equal in their high bits put in distance order (:func:`_unpack_keys`): exactly the order of
    ``argsort`` up to ties, at the speed of a SIMD sort (NumPy's argsort has no SIMD version on AVX2)."""
    _squared_distances(P, Q, d)
    shift = max(1, int(P.shape[0] - 1).bit_length())

    def rows(a, b):
        keys = order[a:b].view(np.uint64)
        _pack_keys(d[a:b], shift, keys)
        keys.sort(axis=1)
        _unpack_keys(d[a:b], shift, order[a:b])

    parts = max(1, min(numba.get_num_threads(), Q.shape[0]))
    bounds = np.linspace(0, Q.shape[0], parts + 1).astype(int)
    if parts == 1:
        rows(0, Q.shape[0])
    else:
        list(pool.map(rows, bounds[:-1], bounds[1:]))


def _window_rows(P, Q, pop, lim, maxd2, rank, pool, counts, scratch, out, base):
    """The (neighbors, size, boundary) entries of the centres ``Q`` written into the arrays ``out``
    from position ``base``; ``counts`` (out) gets each centre's number of entries; ``scratch``:
    (d, order, nb, npop, boundary) buffers of at least ``len(Q)`` rows.  Returns the position
    after the last entry."""
    c = Q.shape[0]
    d, order, nb, npo, bnd = (b[:c] for b in scratch)
    _sorted_distances(P, Q, pool, d, order)
    _windows_chunk(d, order, pop, lim, maxd2, rank, counts, nb, npo, bnd)
    return _compact_rows(counts, nb, npo, bnd, *out, base)


def build_windows(centres: np.ndarray, coords: np.ndarray, pop: np.ndarray, limit: float,
                  max_distance: float | None = None, tie_coords: np.ndarray | None = None):
    """Neighbour lists of every centre, cut where the window size would exceed ``limit``.

    Parameters
    ----------
    centres : (m, D) float64
    coords : (L, D) float64 location coordinates (planar: D = 2; unit vectors for great-circle
        distances: D = 3, the order by chord length is the order by great-circle distance)
    pop : (L,) integer persons (cases + controls) per location, or float64 expected cases
    limit : float
        Maximum window size (``max_population * N``); a tie group that would take the
        window above it is not entered, and the window stops there.
    max_distance : float, optional
        Maximum radius (in the units of ``coords``): locations farther from the centre never enter.
    tie_coords : (L, D') float64, optional
        Locations at exactly the same distance from a centre enter in the order of these
        coordinates (lexicographic, as SaTScan breaks distance ties: the lesser coordinates first);
        default ``coords`` (elliptic windows pass the untransformed coordinates).

    Returns
    -------
    offsets : (m + 1,) int64
    neighbors : (E,) int32 location indices, each centre's nearest first
    npop : (E,) window size after the entry: int32 persons when they total under 2**31 - 1 (the
        largest window array: 4 bytes less per entry to write into fresh memory, whose first
        writes are slow page faults), else int64; float64 expected cases
    boundary : (E,) uint8 1 where a window ends (last entry of a tie group)
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
    maxd2 = np.float64(np.inf if max_distance is None else float(max_distance) ** 2)
    m = Q.shape[0]
    tc = P if tie_coords is None else np.asarray(tie_coords, dtype=np.float64)
    rank = np.empty(P.shape[0], dtype=np.int64)
    rank[np.lexsort(tc.T[::-1])] = np.arange(P.shape[0])
    # the largest possible window: the smallest populations first
    kmax = int(np.searchsorted(np.cumsum(np.sort(pop)), lim, side="right"))
    kmax = max(1, min(kmax, P.shape[0]))
    # chunks of centres whose scratch (distances, order, rows of entries) is allocated once and
    # 16 MB per thread: fresh large buffers per chunk cost more in page faults than the work in them
    L = P.shape[0]
    slots = min(CHUNK_SLOTS * max(1, numba.get_num_threads()), CHUNK_SLOTS_MAX)
    chunk = max(1, min(m, slots // max(kmax, L)))
    scratch = (np.empty((chunk, L)), np.empty((chunk, L), dtype=np.int64), np.empty((chunk, kmax), dtype=np.int32),
               np.empty((chunk, kmax), dtype=pop.dtype), np.empty((chunk, kmax), dtype=np.uint8))
    counts_all = np.zeros(m, dtype=np.int64)
    # the outputs at their largest possible size (m kmax entries; pages never written are never
    # mapped), filled chunk after chunk and returned as views of their first E entries: no
    # concatenation of per-chunk parts (a second copy of every entry)
    out = (np.empty(m * kmax, np.int32), np.empty(m * kmax, pop.dtype), np.empty(m * kmax, np.uint8))
    E = 0
    # one pool for every chunk (starting threads costs more than a small chunk's work)
    with cf.ThreadPoolExecutor(max(1, numba.get_num_threads())) as pool:
        for first in range(0, m, chunk):
            last = min(m, first + chunk)
            E = _window_rows(P, Q[first:last], pop, lim, maxd2, rank, pool, counts_all[first:last], scratch, out, E)
    offsets = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(counts_all, out=offsets[1:])
    return offsets, out[0][:E], out[1][:E], out[2][:E]


@njit(cache=True, inline="always")
def _poisson_llr(klogk, c, C, la, lb):
    """The Poisson LLR ``c log(c/E) + (C-c) log((C-c)/(C-E))`` of ``c`` of ``C`` cases where
    ``log E = la`` and ``log(C - E) = lb``, from the ``k log k`` table: the one sum every Poisson
    kernel (purely spatial, pruned, space-time) uses, so that they agree bit for bit."""
    return (klogk[c] + klogk[C - c]) - (np.float64(c) * la + np.float64(C - c) * lb)


@njit(cache=True, parallel=True, error_model="numpy")
def _scan_batch(offsets, neighbors, npop, mexp, loge, logce, boundary, cases, klogk, n_cases, n_total, l0,
                want_high, want_low, min_cases, poisson, best, best_entry, want_arg):
    """Best LLR (and, with ``want_arg``, the window end entry) of every centre for each column
    of ``cases``; one kernel for both models (``poisson`` is loop-invariant).

    Bernoulli: window ``j`` holds ``npop[j]`` persons, LLR from the ``k log k`` table of
    ``0..N``. Poisson: window ``j`` has ``mexp[j]`` expected cases (the total is C), LLR
    ``c log(c/E) + (C-c) log((C-c)/(C-E))`` with ``klogk`` over ``0..C`` and ``loge[j] = log E``,
    ``logce[j] = log(C - E)`` computed once on the host (so that both engines use the same
    logarithms). High-rate windows need at least ``min_cases`` cases.
    """
    n_centres = offsets.shape[0] - 1
    R = cases.shape[1]
    C = n_cases
    N = n_total
    Nf = np.float64(N)
    cc = np.int32(C)
    mc = np.int32(min_cases)
    for i in prange(n_centres):
        c = np.zeros(R, dtype=np.int32)
        m = np.zeros(R, dtype=np.float64)
        arg = np.full(R, -1, dtype=np.int64)
        for j in range(offsets[i], offsets[i + 1]):
            row = cases[neighbors[j]]
            for r in range(R):
                c[r] += row[r]
            if boundary[j] == 0:
                continue
            # per-entry constants, shared by all replicates of the batch
            if poisson:
                rhs = mexp[j]
                la = loge[j]
                lb = logce[j]
                scale = 1.0
                q = 0.0
                nn = np.int32(0)
                rest = np.int32(0)
            else:
                n = npop[j]
                q = -(klogk[n] + klogk[N - n]) - l0
                rhs = np.float64(C) * np.float64(n)
                scale = Nf
                la = 0.0
                lb = 0.0
                nn = np.int32(n)
                rest = np.int32(N - n - C)
            # one loop whether or not the argmax is wanted: branch-free selects vectorise, and
            # v > m[r] is exactly "ok and llr > m[r]" (m[r] >= 0; v = 0 when not ok)
            for r in range(R):
                cr = c[r]
                if poisson:
                    llr = _poisson_llr(klogk, cr, cc, la, lb)
                else:
                    t = (klogk[cr] + klogk[nn - cr]) + (klogk[cc - cr] + klogk[rest + cr])
                    llr = t + q
                lhs = np.float64(cr) * scale
                ok = (want_high & (lhs > rhs) & (cr >= mc)) | (want_low & (lhs < rhs))
                v = llr if ok else 0.0
                better = v > m[r]
                arg[r] = j if better else arg[r]
                m[r] = v if better else m[r]
        for r in range(R):
            best[i, r] = m[r]
            if want_arg:
                best_entry[i, r] = arg[r]


@njit(cache=True, inline="always")
def _llr(klogk, c, n, C, N, l0):
    """The Bernoulli LLR of c cases among n persons (same additions as the per-batch kernels)."""
    q = -(klogk[n] + klogk[N - n]) - l0
    t = (klogk[c] + klogk[n - c]) + (klogk[C - c] + klogk[N - n - C + c])
    return t + q


@njit(cache=True)
def _threshold_high(klogk, n, C, N, l0, T, guess):
    """Smallest c above the expected count C n / N with LLR(c, n) > T (min(n, C) + 1 if none).

    The LLR increases with c above the expected count. ``guess`` (the answer for the
    previous, smaller window of the same centre) is usually right or a step too low, so
    the answer is first sought by walking up from it (verified: LLR(start - 1) <= T), and
    by bisection otherwise.
    """
    cmax = min(n, C)
    a = (C * n) // N + 1  # smallest c with c N > C n
    if a > cmax or not (_llr(klogk, cmax, n, C, N, l0) > T):
        return cmax + 1
    if guess > a and guess <= cmax and not (_llr(klogk, guess - 1, n, C, N, l0) > T):
        c = guess
        for _ in range(4):
            if _llr(klogk, c, n, C, N, l0) > T:
                return c
            c += 1
        a = c
    b = cmax
    while a < b:
        mid = (a + b) // 2
        if _llr(klogk, mid, n, C, N, l0) > T:
            b = mid
        else:
            a = mid + 1
    return a


@njit(cache=True)
def _threshold_low(klogk, n, C, N, l0, T, guess):
    """Largest c below the expected count with LLR(c, n) > T (-1 if none); as above."""
    cmin = max(0, C - (N - n))
    b = (C * n - 1) // N  # largest c with c N < C n
    if b < cmin or not (_llr(klogk, cmin, n, C, N, l0) > T):
        return -1
    a = cmin
    if guess >= cmin and guess < b and not (_llr(klogk, guess + 1, n, C, N, l0) > T):
        c = guess
        for _ in range(4):
            if _llr(klogk, c, n, C, N, l0) > T:
                return c
            c -= 1
        b = c
    while a < b:
        mid = (a + b + 1) // 2
        if _llr(klogk, mid, n, C, N, l0) > T:
            a = mid
        else:
            b = mid - 1
    return a


@njit(cache=True, parallel=True)
def _threshold_tables(klogk, uniq_n, n_cases, n_total, l0, Tg, want_high, want_low):
    """Case-count thresholds (see _threshold_high/_low) of every group threshold Tg[g] and
    every distinct window population uniq_n[u] (sorted), walking up in n from the previous
    answer (thresholds grow with n; each answer is verified, bisection otherwise)."""
    G = Tg.shape[0]
    U = uniq_n.shape[0]
    C = n_cases
    N = n_total
    hi = np.empty((G, U), dtype=np.int32)
    lo = np.empty((G, U), dtype=np.int32)
    for g in prange(G):
        h = np.int64(0)
        lw = np.int64(-1)
        for u in range(U):
            n = uniq_n[u]
            if want_high:
                h = _threshold_high(klogk, n, C, N, l0, Tg[g], h)
                hi[g, u] = h
            else:
                hi[g, u] = min(n, C) + 1
            if want_low:
                lw = _threshold_low(klogk, n, C, N, l0, Tg[g], lw)
                lo[g, u] = lw
            else:
                lo[g, u] = -1
    return hi, lo


@njit(cache=True, inline="always")
def _add_rows(c, cases, neighbors, j, jb, s0):
    """``c += cases[neighbors[k], s0:s0 + len(c)]`` for the entries ``k = j..jb-1``, eight rows at a time
    (their sum first, in the counts' type: one load and store of ``c`` per eight rows instead of per row)."""
    R = c.shape[0]
    k = j
    while k + 8 <= jb:
        r0 = cases[neighbors[k], s0:s0 + R]
        r1 = cases[neighbors[k + 1], s0:s0 + R]
        r2 = cases[neighbors[k + 2], s0:s0 + R]
        r3 = cases[neighbors[k + 3], s0:s0 + R]
        r4 = cases[neighbors[k + 4], s0:s0 + R]
        r5 = cases[neighbors[k + 5], s0:s0 + R]
        r6 = cases[neighbors[k + 6], s0:s0 + R]
        r7 = cases[neighbors[k + 7], s0:s0 + R]
        for r in range(R):
            a = (c.dtype.type(r0[r]) + c.dtype.type(r1[r])) + (c.dtype.type(r2[r]) + c.dtype.type(r3[r]))
            b = (c.dtype.type(r4[r]) + c.dtype.type(r5[r])) + (c.dtype.type(r6[r]) + c.dtype.type(r7[r]))
            c[r] += a + b
        k += 8
    while k < jb:
        row = cases[neighbors[k], s0:s0 + R]
        for r in range(R):
            c[r] += row[r]
        k += 1


@njit(cache=True, inline="always")
def _walk_group(c, m, r0, r1, j, jb, neighbors, npop, boundary, entry_u, cases, s0, klogk, C, N, l0, want_high,
                want_low, thr_hi, thr_lo, g):
    """Entries ``j..jb-1`` walked again for the replicates ``r0..r1-1`` of group ``g`` only (columns
    ``s0 + r0..s0 + r1 - 1`` of ``cases``; their counts ``c[r0:r1]`` restored to the block's start by
    the caller): at every window end, the group's largest and least counts (vectorised reductions)
    decide whether some count reaches the group's thresholds; only those LLRs are evaluated (and
    maxima updated)."""
    # views indexed from 0, so that LLVM sees non-negative indices and vectorises
    cg = c[r0:r1]
    mg = m[r0:r1]
    Nf = np.float64(N)
    cc = np.int32(C)
    for k in range(j, jb):
        rg = cases[neighbors[k], s0 + r0:s0 + r1]
        for q in range(cg.shape[0]):
            cg[q] += rg[q]
        if boundary[k] == 0:
            continue
        n = npop[k]
        u = entry_u[k]
        h32 = thr_hi[g, u]
        l32 = thr_lo[g, u]
        if h32 > min(n, C) and l32 < 0:
            continue
        mx = cg[0]
        mn = cg[0]
        for q in range(cg.shape[0]):
            mx = max(mx, cg[q])
            mn = min(mn, cg[q])
        if mx < h32 and mn > l32:
            continue
        cn = np.float64(C) * np.float64(n)
        qq = -(klogk[n] + klogk[N - n]) - l0
        nn = np.int32(n)
        rest = np.int32(N - n - C)
        for q in range(cg.shape[0]):
            cr = np.int32(cg[q])
            if cr >= h32 or cr <= l32:
                t = (klogk[cr] + klogk[nn - cr]) + (klogk[cc - cr] + klogk[rest + cr])
                llr = t + qq
                lhs = np.float64(cr) * Nf
                ok = (want_high & (lhs > cn)) | (want_low & (lhs < cn))
                if ok and llr > mg[q]:
                    mg[q] = llr


@njit(cache=True, parallel=True, error_model="numpy")
def _scan_max_pruned(centres, n_parts, step, offsets, neighbors, npop, boundary, entry_u, cases, R, klogk, n_cases,
                     n_total, l0, want_high, want_low, m0, thr_hi, thr_lo, block, best, stats):
    """Best LLR of the centres ``centres`` per replicate, skipping windows that cannot matter.

    Replicates come in groups of ``GROUP`` columns (sorted by ``m0``). ``m0`` (R,) are LLRs
    already attained by some window in each replicate, and each group g has a threshold
    Tg[g] <= min(m0) over the group: a window whose LLR is at most Tg[g] never changes a
    maximum of group g, and it can exceed Tg[g] only if its case count is >= thr_hi[g, u]
    (or <= thr_lo[g, u]), u = entry_u[j] the index of its population among the distinct
    ones.

    Blocks of ``block`` consecutive entries of a centre's walk are tested at once, group by
    group: along the walk the case count c and the population n only grow, and so do both
    thresholds (checked by the caller), so no window of the block can matter to group g when
    each of its replicates' count at the block's end is below the group's high threshold of the
    block's first entry and its count before the block is above the low threshold of the block's
    last entry. Only the groups that fail this test walk the block again, entry by entry, over
    their own replicates (:func:`_walk_group`).

    One parallel region for the whole round: its work items are (columns ``s0:s0 + step`` of the first
    ``R`` of ``cases``, a part of the centres, ``n_parts`` parts; a sub-batch's rows of cases stay in the
    core's cache), and
    ``best[p]`` gets the maxima of part p over its centres (initialised to ``m0``; those of the
    exhaustive kernel wherever they exceed ``m0``). ``stats[item]``: (group-blocks tested,
    group-blocks walked again).
    """
    nc = centres.shape[0]
    n_sub = (R + step - 1) // step
    C = n_cases
    N = n_total
    for item in prange(n_sub * n_parts):
        # consecutive items share their columns
        s = item // n_parts
        part = item - s * n_parts
        s0 = s * step
        W = min(R, s0 + step) - s0
        G = (W + GROUP - 1) // GROUP
        g0 = s0 // GROUP
        c = np.zeros(W, dtype=thr_hi.dtype)
        low0 = np.zeros(G, dtype=thr_hi.dtype)
        m = m0[s0:s0 + W].copy()
        n_test = 0
        n_hit = 0
        for ii in range(part * nc // n_parts, (part + 1) * nc // n_parts):
            i = centres[ii]
            c[:] = 0
            j = offsets[i]
            end = offsets[i + 1]
            while j < end:
                jb = min(j + block, end)
                if want_low:
                    # each group's least count before the block
                    for g in range(G):
                        cg = c[g * GROUP:min(W, (g + 1) * GROUP)]
                        mn = cg[0]
                        for k in range(cg.shape[0]):
                            mn = min(mn, cg[k])
                        low0[g] = mn
                _add_rows(c, cases, neighbors, j, jb, s0)
                ua = entry_u[j]
                ub = entry_u[jb - 1]
                for g in range(G):
                    r0 = g * GROUP
                    r1 = min(W, r0 + GROUP)
                    cg = c[r0:r1]
                    # integer max reductions vectorise (a boolean any() over the lanes did not)
                    mx = cg[0]
                    for k in range(cg.shape[0]):
                        mx = max(mx, cg[k])
                    hit = mx >= thr_hi[g0 + g, ua]
                    if want_low:
                        hit |= low0[g] <= thr_lo[g0 + g, ub]
                    n_test += 1
                    if hit:
                        n_hit += 1
                        # the group's counts back to the block's start, then the block entry by entry
                        for k in range(j, jb):
                            rg = cases[neighbors[k], s0 + r0:s0 + r1]
                            for q in range(cg.shape[0]):
                                cg[q] -= rg[q]
                        _walk_group(c, m, r0, r1, j, jb, neighbors, npop, boundary, entry_u, cases, s0, klogk, C, N,
                                    l0, want_high, want_low, thr_hi, thr_lo, g0 + g)
                j = jb
        best[part, s0:s0 + W] = m
        stats[item, 0] += n_test
        stats[item, 1] += n_hit


@njit(cache=True, inline="always")
def _group_min(m, r0, r1):
    """The smallest of ``m[r0:r1]`` (a group's smallest maximum in the pruned kernels)."""
    gm = m[r0]
    for r in range(r0 + 1, r1):
        gm = min(gm, m[r])
    return gm


@njit(cache=True, parallel=True, error_model="numpy")
def _scan_max_pruned_poisson(centres, n_parts, step, offsets, neighbors, boundary, mexp, loge, logce, cases, R,
                             klogk, n_cases, want_high, want_low, min_cases, m0, margin, cproto, best, stats):
    """Poisson version of :func:`_scan_max_pruned`: best LLR of the centres ``centres`` per replicate,
    skipping windows that cannot matter; replicates (the first ``R`` columns of ``cases``, a multiple of
    ``GROUP``) in groups of ``GROUP`` columns.

    One parallel region for the whole round: its work items are (columns ``s0:s0 + step``, a part of
    the centres, ``n_parts`` parts), so that a round over few replicates still costs one fork and join
    (there were 200 per NY analysis), and each item walks its centres one after the other with running
    maxima ``m`` (starting at ``m0``) that rise along the way. ``best[p]``: the maxima of part p.

    The bound. With C cases in all, the high-rate LLR f(c, E) = c log(c/E) + (C-c) log((C-c)/(C-E))
    (c > E) increases with c (df/dc = log(c/E) - log((C-c)/(C-E)) > 0); the low-rate one (c < E)
    decreases with c. So at a window end with E expected, if the largest count cmax of some replicates
    is <= E (or < min_cases), or f(cmax, E) <= T, where T is their smallest running maximum less
    ``margin`` (far above the rounding of the LLRs), none of them has a high-rate window there that
    changes its maximum (likewise f(cmin, E) for the low rates). The test is made first for all the
    item's columns at once (their extremes are reductions along the additions of the window's counts;
    T the least of the groups' thresholds), which rules out most window ends with one LLR; then group
    by group (its own extremes and threshold), and only the replicates of a group that passes have
    their LLRs evaluated, with the additions of :func:`_scan_batch` (and the group's threshold raised
    to its new smallest maximum). Every maximum above ``m0`` is therefore bit for bit the exhaustive
    one. An inf/NaN bound (E = 0, E >= C) never prunes. ``stats[item]``: (group-window tests, group
    extremes taken, LLR evaluations of a group).
    """
    nc = centres.shape[0]
    n_sub = (R + step - 1) // step
    cc = np.int32(n_cases)
    mc = min_cases
    for item in prange(n_sub * n_parts):
        # consecutive items share their columns (a thread's columns stay in its core's cache)
        s = item // n_parts
        part = item - s * n_parts
        s0 = s * step
        W = min(R, s0 + step) - s0
        G = W // GROUP
        c = np.zeros(W, dtype=cproto.dtype)
        m = m0[s0:s0 + W].copy()
        Tg = np.empty(G)
        for g in range(G):
            Tg[g] = _group_min(m, g * GROUP, g * GROUP + GROUP) - margin
        t_all = _group_min(Tg, 0, G)
        n_test = 0
        n_red = 0
        n_eval = 0
        for ii in range(part * nc // n_parts, (part + 1) * nc // n_parts):
            i = centres[ii]
            c[:] = 0
            for k in range(offsets[i], offsets[i + 1]):
                row = cases[neighbors[k], s0:s0 + W]
                for r in range(W):
                    c[r] += row[r]
                if boundary[k] == 0:
                    continue
                e = mexp[k]
                la = loge[k]
                lgb = logce[k]
                n_test += G
                # all the item's columns at once: their largest (least) count against the least threshold
                go = False
                if want_high:
                    mx = c[0]
                    for r in range(W):
                        mx = max(mx, c[r])
                    go = np.float64(mx) > e and mx >= mc and not (_poisson_llr(klogk, mx, cc, la, lgb) <= t_all)
                if want_low and not go:
                    mn = c[0]
                    for r in range(W):
                        mn = min(mn, c[r])
                    go = np.float64(mn) < e and not (_poisson_llr(klogk, mn, cc, la, lgb) <= t_all)
                if not go:
                    continue
                raised = False
                for g in range(G):
                    T = Tg[g]
                    # the exact extremes of the group
                    n_red += 1
                    r0 = g * GROUP
                    mx = c[r0]
                    mn = c[r0]
                    go_hi = False
                    go_lo = False
                    if want_high:
                        for q in range(GROUP):
                            mx = max(mx, c[r0 + q])
                        go_hi = np.float64(mx) > e and mx >= mc and not (_poisson_llr(klogk, mx, cc, la, lgb) <= T)
                    if want_low:
                        for q in range(GROUP):
                            mn = min(mn, c[r0 + q])
                        go_lo = np.float64(mn) < e and not (_poisson_llr(klogk, mn, cc, la, lgb) <= T)
                    if not (go_hi or go_lo):
                        continue
                    n_eval += 1
                    # one direction (the usual case): the count threshold h (l) below (above) which no
                    # LLR of this window exceeds T, by a few steps down (up) from the extreme count;
                    # only the replicates beyond it are evaluated
                    sparse = False
                    h = np.int32(mx)
                    lw = np.int32(mn)
                    if go_hi and not go_lo:
                        lw = np.int32(-1)
                        for _ in range(_STEPS):
                            if (np.float64(h - 1) > e and h - 1 >= mc
                                    and not (_poisson_llr(klogk, h - 1, cc, la, lgb) <= T)):
                                h -= 1
                            else:
                                sparse = True  # counts below h: not high, below min_cases, or LLR <= T
                                break
                    elif go_lo and not go_hi:
                        h = cc + 1
                        for _ in range(_STEPS):
                            if np.float64(lw + 1) < e and not (_poisson_llr(klogk, lw + 1, cc, la, lgb) <= T):
                                lw += 1
                            else:
                                sparse = True  # counts above lw: not low or LLR <= T
                                break
                    if sparse:
                        for q in range(GROUP):
                            cr = c[r0 + q]
                            if cr >= h or cr <= lw:
                                llr = _poisson_llr(klogk, cr, cc, la, lgb)
                                cf = np.float64(cr)
                                ok = (want_high & (cf > e) & (cr >= mc)) | (want_low & (cf < e))
                                if ok and llr > m[r0 + q]:
                                    m[r0 + q] = llr
                    else:
                        for q in range(GROUP):
                            cr = c[r0 + q]
                            llr = _poisson_llr(klogk, cr, cc, la, lgb)
                            cf = np.float64(cr)
                            ok = (want_high & (cf > e) & (cr >= mc)) | (want_low & (cf < e))
                            v = llr if ok else 0.0
                            m[r0 + q] = v if v > m[r0 + q] else m[r0 + q]
                    # the group's maxima may have risen: so does its threshold
                    Tg[g] = max(T, _group_min(m, r0, r0 + GROUP) - margin)
                    raised = True
                if raised:
                    t_all = _group_min(Tg, 0, G)
        best[part, s0:s0 + W] = m
        stats[item, 0] += n_test
        stats[item, 1] += n_red
        stats[item, 2] += n_eval


#: replicates (columns of cases) per work item of the Poisson pruned kernel: a compromise between the
#: rows of cases staying in cache (fewer columns) and the test of all of an item's columns at once,
#: which rules out fewer window ends when they are more
POISSON_SUB_BATCH = 256
#: steps from a group's extreme count towards the count threshold of a window before the Poisson
#: pruned kernel evaluates all of the group's replicates there instead of those beyond the threshold
_STEPS = 4


#: fraction of the centres whose windows are all scanned first (pilot pass): a lower
#: bound of every replicate's maximum, the pruning threshold of the first round
PILOT_FRACTION = 0.01
#: the pilot evaluates one window in this many along each of its centres' walks
PILOT_STRIDE = 8
#: replicates per pruning group (one 64-byte cache line of int16 case counts; a compile-time
#: constant of every pruned kernel, Bernoulli, Poisson and space-time: fixed trip counts)
GROUP = 32
#: margin below the running maxima, far above the rounding of the table-based LLR
PRUNE_MARGIN = 1e-6
#: consecutive window entries tested at once by the pruned kernel (see _scan_max_pruned)
BLOCK = 16
#: the pruned pass takes the centres (in a fixed shuffled order) in rounds ending at these
#: fractions of them; the running maxima (hence the pruning thresholds) rise after each round
ROUNDS = (0.02, 0.06, 0.15, 0.35, 1.0)
#: replicates (columns of cases) per work item of the Bernoulli pruned kernel (its rows of cases stay in the
#: core's cache)
SUB_BATCH = 128


def _pilot_maxima(windows, cases, klogk, n_cases, n_total, l0, hi_on, lo_on, min_cases, plogs=None):
    """(R,) LLRs attained in each replicate by windows of a few evenly spread centres: every
    ``PILOT_STRIDE``-th window of every ``1 / PILOT_FRACTION``-th centre (and of the centre with the
    most entries), with the exhaustive kernel. ``plogs``: Poisson's ``(E, log E, log(C - E))`` per entry
    (then ``windows[2]`` is not read)."""
    offsets, neighbors, npop, boundary = windows
    m = offsets.shape[0] - 1
    R = cases.shape[1]
    sizes = np.diff(offsets)
    step = max(1, int(round(1.0 / PILOT_FRACTION)))
    pilot = np.unique(np.concatenate([[int(np.argmax(sizes))], np.arange(0, m, step)]))
    p_off = np.zeros(len(pilot) + 1, dtype=np.int64)
    np.cumsum(sizes[pilot], out=p_off[1:])
    take = np.concatenate([np.arange(offsets[i], offsets[i + 1]) for i in pilot]).astype(np.int64)
    # any attained LLR is a valid lower bound, and the counts are accumulated through all entries anyway
    pb = boundary[take].copy()
    if PILOT_STRIDE > 1:
        pos = np.arange(len(take)) - np.repeat(p_off[:-1], np.diff(p_off))
        last = np.zeros(len(take), dtype=bool)
        last[p_off[1:][np.diff(p_off) > 0] - 1] = True
        pb &= ((pos % PILOT_STRIDE == PILOT_STRIDE - 1) | last).astype(np.uint8)
    pbest = np.empty((len(pilot), R), dtype=np.float64)
    dummy = np.empty((1, 1), dtype=np.int64)
    if plogs is None:
        sz, pe = npop[take], (_NO_EXPECTED, _NO_EXPECTED, _NO_EXPECTED)
    else:
        sz, pe = _NO_POP, tuple(np.ascontiguousarray(a[take]) for a in plogs)
    _scan_batch(p_off, neighbors[take], sz, *pe, pb, cases, klogk, np.int64(n_cases), np.int64(n_total), l0, hi_on,
                lo_on, np.int64(min_cases), plogs is not None, pbest, dummy, False)
    return pbest.max(axis=0)


def unique_sizes(npop):
    """``(uniq, index)``: the distinct window populations (sorted, int64) and each entry's index among
    them (int32), as ``np.unique(npop, return_inverse=True)``; small populations (the usual case) by a
    table of the values present, without sorting the entries (a sort of every entry costs far more)."""
    npop = np.asarray(npop)
    if npop.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int32)
    if npop.dtype.kind not in "iu" or int(npop.min()) < 0 or int(npop.max()) > 4 * npop.size + (1 << 20):
        u, inv = np.unique(npop, return_inverse=True)
        return u.astype(np.int64), inv.astype(np.int32).ravel()
    present = np.zeros(int(npop.max()) + 1, dtype=bool)
    _mark_present(npop, present)
    uniq = np.flatnonzero(present).astype(np.int64)
    index = np.cumsum(present, dtype=np.int32) - 1
    out = np.empty(npop.shape[0], dtype=np.int32)
    _gather(index, npop, out)
    return uniq, out


@njit(cache=True, parallel=True)
def _mark_present(values, present):
    """``present[values] = True`` in parallel (every thread writes the same value: the result does not
    depend on their order), where NumPy's scatter runs on one thread."""
    for i in prange(values.shape[0]):
        present[values[i]] = True


@njit(cache=True, parallel=True)
def _gather(table, index, out):
    """``out[:] = table[index]`` in parallel."""
    for i in prange(index.shape[0]):
        out[i] = table[index[i]]


def max_llr_pruned(windows, cases, klogk, n_cases, n_total, direction, uniq=None, min_cases=0, stats=None, *,
                   model="bernoulli", plogs=None):
    """(R,) maximum LLR of each column of ``cases``; exact, with pruning.

    A pilot pass (:func:`_pilot_maxima`) gives LLRs attained in each replicate: running maxima
    ``M`` that bound the final maxima from below, so windows with LLR <= M - margin can be skipped
    by an integer comparison of their case count (:func:`_scan_max_pruned`). The centres are then
    scanned in rounds (``ROUNDS``, a fixed shuffled order), and after each round the running maxima
    rise to the maxima found so far, the replicates are regrouped by them and the count thresholds
    recomputed: later rounds skip more. ``min_cases`` (high-rate windows need at least that many
    cases, SaTScan's default 2) raises the high-rate count thresholds to at least ``min_cases``.

    Exact: a window is skipped only when its LLR cannot exceed its replicate's running maximum,
    which some window attains, and every other window's LLR is computed by the exhaustive kernel's
    additions, so each maximum is bit for bit the exhaustive one. ``stats`` (a dict, optional) gets
    the counts of group-blocks tested and walked again.

    ``model="poisson"``: ``windows[2]`` holds the expected cases after each entry and ``n_total`` is
    not read; ``plogs`` = :func:`~.engine.poisson_logs` of them (computed when not given). No count
    tables: each window end is tested against each replicate group's running maximum by bounds on
    the LLR itself (:func:`_scan_max_pruned_poisson`).
    """
    offsets, neighbors, npop, boundary = windows
    m = offsets.shape[0] - 1
    R = cases.shape[1]
    if m == 0:
        return np.zeros(R)
    cases = np.ascontiguousarray(cases, dtype=np.int32)
    hi_on, lo_on = direction in ("high", "both"), direction in ("low", "both")
    if model == "poisson":
        return _max_llr_pruned_poisson(windows, cases, klogk, n_cases, hi_on, lo_on, min_cases, stats,
                                       poisson_logs(npop, n_cases) if plogs is None else plogs)
    l0 = null_loglik(klogk, n_cases, n_total)
    M = _pilot_maxima(windows, cases, klogk, n_cases, n_total, l0, hi_on, lo_on, min_cases)
    if uniq is None:
        uniq = unique_sizes(npop)
    uniq_n, entry_u = uniq
    # 16-bit counts (twice the SIMD lanes) when every count fits: c <= C < 2**15 - 1; 8-bit rows of
    # cases (half the memory read per window entry) when every location's count fits
    ctype = np.int16 if n_cases < 2**15 - 1 else np.int32
    rtype = np.int8 if cases.size and int(cases.max()) <= 127 else ctype
    cases = cases.astype(rtype)  # narrow once: the columns are reordered every round
    cs = _aligned_columns(cases.shape[0], R, rtype)
    G = (R + GROUP - 1) // GROUP
    step, n_sub, n_parts = _work_items(R, SUB_BATCH)
    perm, cuts = _round_plan(m)
    a = 0
    for b in cuts:
        if b <= a:
            continue
        # groups of replicates with similar running maxima share a threshold
        order = np.argsort(-M, kind="stable")
        Ms = np.ascontiguousarray(M[order])
        Tg = np.array([Ms[g * GROUP:(g + 1) * GROUP].min() for g in range(G)]) - PRUNE_MARGIN
        thr_hi, thr_lo = _threshold_tables(klogk, uniq_n, np.int64(n_cases), np.int64(n_total), l0, Tg, hi_on,
                                           lo_on)
        if min_cases > 0:
            # a high-rate window also needs min_cases cases; the max keeps the thresholds monotone in n
            np.maximum(thr_hi, np.int32(min_cases), out=thr_hi)
        # block tests need thresholds that grow with the population (they do; checked, else one
        # entry per block, which is the entry-by-entry test)
        monotone = bool((np.diff(thr_hi, axis=1) >= 0).all() and (np.diff(thr_lo, axis=1) >= 0).all())
        block = BLOCK if monotone else 1
        thr_hi = thr_hi.astype(ctype)
        thr_lo = thr_lo.astype(ctype)
        _take_columns(cases, order, cs)
        parts = min(n_parts, b - a)
        best = np.empty((parts, R), dtype=np.float64)
        st = np.zeros((n_sub * parts, 2), dtype=np.int64)
        _scan_max_pruned(perm[a:b], np.int64(parts), np.int64(step), offsets, neighbors, npop, boundary, entry_u, cs,
                         np.int64(R), klogk, np.int64(n_cases), np.int64(n_total), l0, hi_on, lo_on, Ms, thr_hi, thr_lo,
                         np.int64(block), best, st)
        M[order] = np.maximum(Ms, best.max(axis=0))
        if stats is not None:
            s = st.sum(axis=0)
            stats.setdefault("rounds", []).append((int(b - a), int(s[0]), int(s[1])))
        a = b
    return M


def _aligned_columns(L, R, dtype):
    """An empty (L, R') array of ``dtype``, R' >= R columns, whose rows start on 64-byte boundaries: a
    sub-batch's slice of a row then spans whole cache lines (two, not three, for 128 one-byte
    columns), fewer lines per window entry in the Bernoulli walk."""
    item = np.dtype(dtype).itemsize
    cols = -(-R * item // 64) * 64 // item
    buf = np.empty(L * cols * item + 64, dtype=np.uint8)
    first = (-buf.ctypes.data) % 64
    return buf[first:first + L * cols * item].view(dtype).reshape(L, cols)


@njit(cache=True, parallel=True)
def _take_columns(cases, order, out):
    """``out[:, :len(order)] = cases[:, order]``, rows in parallel."""
    for l in prange(cases.shape[0]):
        for j in range(order.shape[0]):
            out[l, j] = cases[l, order[j]]


def _work_items(R, sub_batch):
    """``(step, n_sub, n_parts)``: the work items of a pruned kernel's round over ``R`` replicates, ``n_sub``
    sub-batches of ``step`` columns (whole groups; ``sub_batch``, whose rows of cases stay in a core's
    cache, or fewer when that leaves under four sub-batches per thread) times ``n_parts`` parts of the
    centres (as many as it takes to make four items per thread)."""
    G = (R + GROUP - 1) // GROUP
    threads = numba.get_num_threads()
    step = GROUP * max(1, min(sub_batch // GROUP, G // (4 * threads)))
    n_sub = (R + step - 1) // step
    return step, n_sub, max(1, -(-4 * threads // n_sub))


@functools.lru_cache(maxsize=16)
def _round_plan(m):
    """The shuffled order of ``m`` centres and the ends of the rounds (see ``ROUNDS``)."""
    perm = np.random.default_rng(0x5CA7).permutation(m).astype(np.int64)
    perm.setflags(write=False)
    return perm, tuple(sorted({min(m, max(1, int(round(f * m)))) for f in ROUNDS} | {m}))


def _max_llr_pruned_poisson(windows, cases, klogk, n_cases, hi_on, lo_on, min_cases, stats, plogs):
    """:func:`max_llr_pruned` of the Poisson model (same pilot and rounds; groups of ``GROUP`` replicates,
    the last one padded with copies of its last column)."""
    offsets, neighbors, _, boundary = windows
    m = offsets.shape[0] - 1
    R = cases.shape[1]
    if R == 0:
        return np.zeros(0)
    mexp, loge, logce = (np.ascontiguousarray(a, dtype=np.float64) for a in plogs)
    M = _pilot_maxima(windows, cases, klogk, n_cases, n_cases, 0.0, hi_on, lo_on, min_cases, plogs=plogs)
    ctype = np.int16 if n_cases < 2**15 - 1 else np.int32
    rtype = np.int8 if cases.size and int(cases.max()) <= 127 else ctype
    cases = cases.astype(rtype)  # narrow once: the columns are reordered every round
    cproto = np.zeros(1, dtype=ctype)
    # the margin: far above the rounding of LLRs made of terms up to C log C
    margin = PRUNE_MARGIN + 1e-12 * float(klogk[n_cases])
    G = (R + GROUP - 1) // GROUP
    Rp = G * GROUP
    step, n_sub, n_parts = _work_items(Rp, POISSON_SUB_BATCH)
    cs = _aligned_columns(cases.shape[0], Rp, rtype)
    perm, cuts = _round_plan(m)
    a = 0
    for b in cuts:
        if b <= a:
            continue
        order = np.argsort(-M, kind="stable")
        order = np.concatenate([order, np.full(Rp - R, order[-1])])
        Ms = np.ascontiguousarray(M[order])
        _take_columns(cases, order, cs)
        parts = min(n_parts, b - a)
        best = np.empty((parts, Rp), dtype=np.float64)
        st = np.zeros((n_sub * parts, 3), dtype=np.int64)
        _scan_max_pruned_poisson(perm[a:b], np.int64(parts), np.int64(step), offsets, neighbors, boundary, mexp, loge,
                                 logce, cs, np.int64(Rp), klogk, np.int64(n_cases), hi_on, lo_on, np.int64(min_cases),
                                 Ms, np.float64(margin), cproto, best, st)
        M[order[:R]] = np.maximum(Ms[:R], best[:, :R].max(axis=0))
        if stats is not None:
            s = st.sum(axis=0)
            stats.setdefault("rounds", []).append((int(b - a), int(s[0]), int(s[1]), int(s[2])))
        a = b
    return M


#: placeholders for the per-entry array the other model uses (never read)
_NO_EXPECTED = np.zeros(1, dtype=np.float64)
_NO_POP = np.zeros(1, dtype=np.int64)


def scan_batch(windows, cases: np.ndarray, klogk: np.ndarray, n_cases: int, n_total: int,
               direction: str, want_arg: bool = False, *, model: str = "bernoulli", min_cases: int = 0):
    """Best LLR per centre for each column of ``cases`` (locations x replicates, int32).

    ``windows[2]`` is the window size after each entry: persons (Bernoulli, int64) or expected
    cases (Poisson, float64). Returns ``best`` (m, R) float64 and, with ``want_arg``,
    ``best_entry`` (m, R) int64: the CSR entry where the best window of each centre ends (-1
    when no window has a positive LLR).
    """
    offsets, neighbors, size, boundary = windows
    cases = np.ascontiguousarray(cases, dtype=np.int32)
    m = offsets.shape[0] - 1
    R = cases.shape[1]
    best = np.empty((m, R), dtype=np.float64)
    best_entry = np.empty((m, R) if want_arg else (1, 1), dtype=np.int64)
    poisson = model == "poisson"
    if poisson:
        npop, l0 = _NO_POP, 0.0
        mexp, loge, logce = poisson_logs(size, n_cases)
    else:
        npop, l0 = size, null_loglik(klogk, n_cases, n_total)
        mexp = loge = logce = _NO_EXPECTED
    _scan_batch(offsets, neighbors, npop, mexp, loge, logce, boundary, cases, klogk, np.int64(n_cases),
                np.int64(n_total), l0, direction in ("high", "both"), direction in ("low", "both"),
                np.int64(min_cases), poisson, best, best_entry, bool(want_arg))
    return (best, best_entry) if want_arg else (best, None)


class CpuEngine(Engine):
    """Windows and the k log k table resident in host memory; Numba kernels.

    Picklable (plain arrays), so Monte Carlo batches can run in process pools.
    """

    backend = "cpu"

    def __init__(self, windows, klogk, n_cases, n_total, direction, *, model="bernoulli", min_cases=0):
        super().__init__(windows, klogk, n_cases, n_total, direction, model=model, min_cases=min_cases)
        self.klogk = klogk
        self._uniq = None
        self._plogs = None

    def best_per_centre(self, cases: np.ndarray, want_arg: bool = False):
        """(m, R) best LLR per centre [and best window end entry] for cases (L, R) int32."""
        return scan_batch(self.windows, cases, self.klogk, self.n_cases, self.n_total, self.direction, want_arg,
                          model=self.model, min_cases=self.min_cases)

    def max_llr(self, cases: np.ndarray) -> np.ndarray:
        """(R,) maximum LLR over all windows for each column of ``cases`` (exact; both models skip
        windows that cannot matter, see :func:`max_llr_pruned`)."""
        if self.model == "poisson":
            return max_llr_pruned(self.windows, cases, self.klogk, self.n_cases, self.n_total, self.direction,
                                  min_cases=self.min_cases, model="poisson", plogs=self._poisson_logs())
        return max_llr_pruned(self.windows, cases, self.klogk, self.n_cases, self.n_total, self.direction,
                              self._unique_sizes(), min_cases=self.min_cases)

    def _poisson_logs(self):
        """``(E, log E, log(C - E))`` per entry (:func:`~.engine.poisson_logs`), once per engine."""
        if self._plogs is None:
            self._plogs = poisson_logs(self.windows[2], self.n_cases)
        return self._plogs

    def _unique_sizes(self):
        """The distinct window populations and each entry's index among them (the pruning thresholds
        are tabulated per distinct population); computed once per engine."""
        if self._uniq is None:
            self._uniq = unique_sizes(self.windows[2])
        return self._uniq

    def max_llr_penalised(self, cases: np.ndarray, penalties: np.ndarray) -> np.ndarray:
        """(R,) maximum over all windows of (its block's penalty) x LLR for each column of ``cases``
        (elliptic scans with a non-compactness penalty; exact).

        The penalty is one factor per centre block (per ellipse), so over a run of consecutive
        centres with the same factor (a shape's angles) the penalised maximum is that factor times
        the run's unpenalised maximum, which the Bernoulli model prunes as :meth:`max_llr` does
        (a slice of the CSR offsets is a run's windows: entries are absolute); so does the Poisson
        model.  Same values, bit for bit, as the maximum of ``best_per_centre`` x penalty.
        """
        pen = np.ascontiguousarray(penalties, dtype=np.float64)
        R = cases.shape[1]
        poisson = self.model == "poisson"
        uniq = None if poisson else self._unique_sizes()
        plogs = self._poisson_logs() if poisson else None
        offsets, neighbors, npop, boundary = self.windows
        cuts = np.flatnonzero(np.diff(pen) != 0) + 1
        out = np.zeros(R)
        for a, b in zip(np.concatenate([[0], cuts]), np.concatenate([cuts, [len(pen)]])):
            run = (offsets[a:b + 1], neighbors, npop, boundary)
            m = max_llr_pruned(run, cases, self.klogk, self.n_cases, self.n_total, self.direction, uniq,
                               min_cases=self.min_cases, model=self.model, plogs=plogs)
            np.maximum(out, pen[a] * m, out=out)
        return out


# --------------------------------------------------------------------------- space-time permutation
@njit(cache=True, inline="always")
def _add_day(acc, S, t1, G, gcmax):
    """``acc += S[t1]`` (a cylinder grows back by one day), and each group of ``G`` replicates'
    largest count after it into ``gcmax``, in the same pass."""
    R = acc.shape[0]
    for g in range(gcmax.shape[0]):
        cm = np.int32(0)
        for r in range(g * G, min(R, g * G + G)):
            acc[r] += S[t1, r]
            cm = max(cm, acc[r])
        gcmax[g] = cm


@njit(cache=True, parallel=True, error_model="numpy")
def _scan_space_time(offsets, neighbors, wsize, boundary, cases, dcum, klogk, n_cases, max_t, t_end_min,
                     min_cases, want_high, want_low, best, best_arg, want_arg, centre_ids, floor):
    """Best space-time permutation LLR per centre over the cylinders (circle x [t1, t2]).

    ``cases`` (L, T, R): counts per location, day and replicate; ``wsize[j]``: cases of the
    circle ending at entry ``j`` over the whole period (C_Z; space-time Poisson: its expected
    cases E_Z, float64); ``dcum``: prefix sums of the cases per day (C_d; space-time Poisson:
    C t / T). A cylinder has ``mu = C_Z x sum_{d in [t1, t2]} C_d / C`` expected cases and the
    Poisson LLR ``c log(c/mu) + (C-c) log((C-c)/(C-mu))`` (Kulldorff et al. 2005; Kulldorff 2001). Intervals end at
    ``t2 >= t_end_min`` (prospective: the last day only) and last at most ``max_t`` days.
    ``best_arg`` encodes the cylinder as ``(j * T + t1) * T + t2``.

    Only the centres ``centre_ids`` are scanned (row ``ii`` of ``best`` is centre ``centre_ids[ii]``),
    and every replicate's maximum starts at ``floor[r]`` instead of 0: ``best[ii, r]`` is then
    max(floor[r], the centre's best), which leaves the maximum over the centres unchanged when
    ``floor`` holds LLRs of real cylinders (a pilot's maxima) and lets the high-rate test below skip
    most cylinders from the first centre on.  The test runs per group of 32 replicates (the group's
    largest count against its smallest maximum), so one replicate with many cases does not keep
    the other 31 from being skipped.
    """
    T = cases.shape[1]
    R = cases.shape[2]
    C = n_cases
    Cf = np.float64(C)
    mc = np.int32(min_cases)
    G = GROUP
    ng = (R + G - 1) // G
    for ii in prange(centre_ids.shape[0]):
        i = centre_ids[ii]
        S = np.zeros((T, R), dtype=np.int32)
        acc = np.zeros(R, dtype=np.int32)
        m = floor.copy()
        arg = np.full(R, -1, dtype=np.int64)
        gmin = np.empty(ng)  # the smallest maximum so far of each group of replicates
        gcmax = np.empty(ng, dtype=np.int32)  # the largest count of each group in the cylinder
        for g in range(ng):
            gmin[g] = _group_min(m, g * G, min(R, g * G + G))
        for j in range(offsets[i], offsets[i + 1]):
            blk = cases[neighbors[j]]
            for t in range(T):
                for r in range(R):
                    S[t, r] += blk[t, r]
            if boundary[j] == 0:
                continue
            cz = wsize[j]
            for t2 in range(t_end_min, T):
                for r in range(R):
                    acc[r] = 0
                for t1 in range(t2, max(-1, t2 - max_t), -1):
                    _add_day(acc, S, t1, G, gcmax)
                    mu = cz * (dcum[t2 + 1] - dcum[t1]) / Cf
                    if not (mu > 0.0 and mu < Cf):
                        continue
                    la = np.log(mu)
                    lb = np.log(Cf - mu)
                    code = (j * T + t1) * T + t2
                    for g in range(ng):
                        r0 = g * G
                        r1 = min(R, r0 + G)
                        if not want_low:
                            # high rates only: above mu the LLR increases with c, so no replicate of the
                            # group has a larger LLR here than its largest count c_max would give; when
                            # that cannot beat the group's smallest maximum, no maximum of the group
                            # changes (the margin keeps rounding from hiding a larger LLR)
                            c_max = gcmax[g]
                            if c_max <= mu:
                                continue
                            top = _poisson_llr(klogk, c_max, C, la, lb)
                            if top * (1.0 + 1e-12) + 1e-12 <= gmin[g]:
                                continue
                        for r in range(r0, r1):
                            c = acc[r]
                            llr = _poisson_llr(klogk, c, C, la, lb)
                            cf = np.float64(c)
                            ok = (want_high & (cf > mu) & (c >= mc)) | (want_low & (cf < mu))
                            v = llr if ok else 0.0
                            better = v > m[r]
                            arg[r] = code if better else arg[r]
                            m[r] = v if better else m[r]
                        gmin[g] = _group_min(m, r0, r1)
        for r in range(R):
            best[ii, r] = m[r]
            if want_arg:
                best_arg[ii, r] = arg[r]


def _centres_and_floor(offsets, R, centre_ids, floor):
    ids = np.arange(offsets.shape[0] - 1, dtype=np.int64) if centre_ids is None else \
        np.ascontiguousarray(centre_ids, dtype=np.int64)
    fl = np.zeros(R) if floor is None else np.ascontiguousarray(floor, dtype=np.float64)
    return ids, fl


def space_time_batch(windows, cases, dcum, klogk, n_cases, max_t, t_end_min, min_cases, direction, want_arg=False,
                     centre_ids=None, floor=None):
    """(m, R) best cylinder LLR per centre [and its code] for ``cases`` (L, T, R); with
    ``centre_ids`` only those centres (rows in that order), with ``floor`` (R,) every value at
    least ``floor`` (see :func:`_scan_space_time`)."""
    offsets, neighbors, wsize, boundary = windows
    cases = np.ascontiguousarray(cases, dtype=np.int32)
    R = cases.shape[2]
    ids, fl = _centres_and_floor(offsets, R, centre_ids, floor)
    best = np.empty((len(ids), R), dtype=np.float64)
    arg = np.empty((len(ids), R) if want_arg else (1, 1), dtype=np.int64)
    _scan_space_time(offsets, neighbors, np.ascontiguousarray(wsize, dtype=np.float64), boundary, cases,
                     np.ascontiguousarray(dcum, dtype=np.float64), klogk, np.int64(n_cases), np.int64(max_t),
                     np.int64(t_end_min), np.int64(min_cases), direction in ("high", "both"),
                     direction in ("low", "both"), best, arg, bool(want_arg), ids, fl)
    return best, (arg if want_arg else None)


@njit(cache=True, parallel=True, error_model="numpy")
def _scan_space_time_bernoulli(offsets, neighbors, boundary, cases, persons, klogk, n_cases, n_total, l0, max_t,
                               t_end_min, min_cases, want_high, want_low, best, best_arg, want_arg, centre_ids, floor):
    """Best Bernoulli LLR per centre over the cylinders (circle x [t1, t2]), space-time Bernoulli.

    ``cases`` (L, T, R): cases per location, day and replicate; ``persons`` (L, T) int64: cases +
    controls per location and day (the same in every replicate: the null relabels the cases among
    the persons). A cylinder with ``c`` cases among ``n`` persons (``C`` of ``N`` in all) has the
    Bernoulli LLR of :func:`_scan_batch` (same additions), high when ``c N > C n``; high-rate
    cylinders need ``min_cases`` cases. Intervals as in :func:`_scan_space_time`; ``best_arg`` encodes
    the cylinder as ``(j * T + t1) * T + t2``. ``centre_ids`` and ``floor`` (and the test per group of
    32 replicates) as in :func:`_scan_space_time`.
    """
    T = cases.shape[1]
    R = cases.shape[2]
    C = n_cases
    N = n_total
    Nf = np.float64(N)
    mc = np.int32(min_cases)
    G = GROUP
    ng = (R + G - 1) // G
    for ii in prange(centre_ids.shape[0]):
        i = centre_ids[ii]
        S = np.zeros((T, R), dtype=np.int32)
        P = np.zeros(T, dtype=np.int64)
        acc = np.zeros(R, dtype=np.int32)
        m = floor.copy()
        arg = np.full(R, -1, dtype=np.int64)
        gmin = np.empty(ng)  # the smallest maximum so far of each group of replicates
        gcmax = np.empty(ng, dtype=np.int32)  # the largest count of each group in the cylinder
        for g in range(ng):
            gmin[g] = _group_min(m, g * G, min(R, g * G + G))
        for j in range(offsets[i], offsets[i + 1]):
            blk = cases[neighbors[j]]
            prow = persons[neighbors[j]]
            for t in range(T):
                P[t] += prow[t]
                for r in range(R):
                    S[t, r] += blk[t, r]
            if boundary[j] == 0:
                continue
            for t2 in range(t_end_min, T):
                for r in range(R):
                    acc[r] = 0
                n = np.int64(0)
                for t1 in range(t2, max(-1, t2 - max_t), -1):
                    n += P[t1]
                    _add_day(acc, S, t1, G, gcmax)
                    if n == 0 or n == N:
                        continue  # no persons (or all of them): LLR 0
                    q = -(klogk[n] + klogk[N - n]) - l0
                    rhs = np.float64(C) * np.float64(n)
                    code = (j * T + t1) * T + t2
                    for g in range(ng):
                        r0 = g * G
                        r1 = min(R, r0 + G)
                        if not want_low:
                            # high rates only: the LLR grows with c above the expected count, so no
                            # replicate's LLR here exceeds that of the group's c_max; skip the group when
                            # that cannot beat its smallest maximum (the margin keeps rounding from ever
                            # hiding a larger LLR)
                            c_max = gcmax[g]
                            if np.float64(c_max) * Nf <= rhs or c_max < mc:
                                continue
                            tm = (klogk[c_max] + klogk[n - c_max]) + (klogk[C - c_max] + klogk[N - n - C + c_max])
                            if (tm + q) * (1.0 + 1e-12) + 1e-12 <= gmin[g]:
                                continue
                        for r in range(r0, r1):
                            cr = acc[r]
                            t = (klogk[cr] + klogk[n - cr]) + (klogk[C - cr] + klogk[N - n - C + cr])
                            llr = t + q
                            lhs = np.float64(cr) * Nf
                            ok = (want_high & (lhs > rhs) & (cr >= mc)) | (want_low & (lhs < rhs))
                            v = llr if ok else 0.0
                            better = v > m[r]
                            arg[r] = code if better else arg[r]
                            m[r] = v if better else m[r]
                        gmin[g] = _group_min(m, r0, r1)
        for r in range(R):
            best[ii, r] = m[r]
            if want_arg:
                best_arg[ii, r] = arg[r]


def space_time_bernoulli_batch(windows, cases, persons, klogk, n_cases, n_total, max_t, t_end_min, min_cases,
                               direction, want_arg=False, centre_ids=None, floor=None):
    """(m, R) best space-time Bernoulli cylinder LLR per centre [and its code] for ``cases`` (L, T, R);
    ``persons`` (L, T) cases + controls per location and day; ``centre_ids``, ``floor`` as in
    :func:`space_time_batch`."""
    offsets, neighbors, _, boundary = windows
    cases = np.ascontiguousarray(cases, dtype=np.int32)
    R = cases.shape[2]
    ids, fl = _centres_and_floor(offsets, R, centre_ids, floor)
    best = np.empty((len(ids), R), dtype=np.float64)
    arg = np.empty((len(ids), R) if want_arg else (1, 1), dtype=np.int64)
    _scan_space_time_bernoulli(offsets, neighbors, boundary, cases, np.ascontiguousarray(persons, dtype=np.int64),
                               klogk, np.int64(n_cases), np.int64(n_total), null_loglik(klogk, n_cases, n_total),
                               np.int64(max_t), np.int64(t_end_min), np.int64(min_cases),
                               direction in ("high", "both"), direction in ("low", "both"), best, arg, bool(want_arg),
                               ids, fl)
    return best, (arg if want_arg else None)


@njit(cache=True, parallel=True, error_model="numpy")
def _space_time_interval_best(offsets, neighbors, wsize, boundary, cases, persons, dcum, klogk, n_cases, n_total,
                              l0, max_t, min_cases, want_high, want_low, bern, lo, val, code):
    """Observed data only: for centres ``lo + k`` the best cylinder LLR of every interval ``[t1, t2]``
    over the circles, ``val[k, t2, t2 - t1]`` (0 when none) and its circle entry ``code[k, t2, t2 - t1]``
    (-1). The LLRs, the rate tests and the order (circle entry j ascending; the first of equal LLRs
    kept) are those of :func:`_scan_space_time` (``bern`` False) and :func:`_scan_space_time_bernoulli`
    (``bern`` True) for one replicate."""
    K = val.shape[0]
    T = cases.shape[1]
    C = n_cases
    Cf = np.float64(C)
    N = n_total
    Nf = np.float64(N)
    mc = np.int64(min_cases)
    for k in prange(K):
        i = lo + k
        S = np.zeros(T, dtype=np.int64)
        P = np.zeros(T, dtype=np.int64)
        for j in range(offsets[i], offsets[i + 1]):
            for t in range(T):
                S[t] += cases[neighbors[j], t]
                if bern:
                    P[t] += persons[neighbors[j], t]
            if boundary[j] == 0:
                continue
            for t2 in range(T):
                c = np.int64(0)
                n = np.int64(0)
                for t1 in range(t2, max(-1, t2 - max_t), -1):
                    c += S[t1]
                    if bern:
                        n += P[t1]
                        if n == 0 or n == N:
                            continue
                        lhs = np.float64(c) * Nf
                        rhs = Cf * np.float64(n)
                        if not ((want_high and lhs > rhs and c >= mc) or (want_low and lhs < rhs)):
                            continue
                        q = -(klogk[n] + klogk[N - n]) - l0
                        llr = ((klogk[c] + klogk[n - c]) + (klogk[C - c] + klogk[N - n - C + c])) + q
                    else:
                        mu = wsize[j] * (dcum[t2 + 1] - dcum[t1]) / Cf
                        if not (mu > 0.0 and mu < Cf):
                            continue
                        cf = np.float64(c)
                        if not ((want_high and cf > mu and c >= mc) or (want_low and cf < mu)):
                            continue
                        llr = (klogk[c] + klogk[C - c]) - (cf * np.log(mu) + np.float64(C - c) * np.log(Cf - mu))
                    if llr > val[k, t2, t2 - t1]:
                        val[k, t2, t2 - t1] = llr
                        code[k, t2, t2 - t1] = j


def space_time_interval_best(windows, cases, persons, dcum, klogk, n_cases, n_total, max_t, min_cases, direction,
                             lo, hi):
    """(hi - lo, T, max_t) best LLR per interval of centres ``lo..hi-1`` and the circle entry of each
    (see :func:`_space_time_interval_best`); ``persons`` None: the Poisson-type models."""
    offsets, neighbors, wsize, boundary = windows
    T = cases.shape[1]
    mt = min(int(max_t), T)
    val = np.zeros((hi - lo, T, mt), dtype=np.float64)
    code = np.full((hi - lo, T, mt), -1, dtype=np.int64)
    bern = persons is not None
    _space_time_interval_best(offsets, neighbors, np.ascontiguousarray(wsize, dtype=np.float64), boundary,
                              np.ascontiguousarray(cases, dtype=np.int64),
                              np.ascontiguousarray(persons if bern else np.zeros((1, 1)), dtype=np.int64),
                              np.ascontiguousarray(dcum, dtype=np.float64), klogk, np.int64(n_cases),
                              np.int64(n_total), null_loglik(klogk, n_cases, n_total) if bern else 0.0,
                              np.int64(mt), np.int64(min_cases), direction in ("high", "both"),
                              direction in ("low", "both"), bern, np.int64(lo), val, code)
    return val, code


@njit(cache=True, parallel=True)
def _permute_days(loc_of_case, day_of_case, seeds, out):
    """Space-time permutation null: the days of the C cases shuffled among the cases (each
    case keeps its location), one seed per replicate; ``out`` (R, L, T) counts."""
    R = seeds.shape[0]
    K = day_of_case.shape[0]
    for r in prange(R):
        np.random.seed(seeds[r])
        days = day_of_case.copy()
        for q in range(K - 1, 0, -1):  # Fisher-Yates
            p = np.random.randint(0, q + 1)
            tmp = days[q]
            days[q] = days[p]
            days[p] = tmp
        for q in range(K):
            out[r, loc_of_case[q], days[q]] += 1


def permute_days(loc_of_case, day_of_case, L, T, seeds):
    """(L, T, R) int32 null counts; ``seeds`` (R,) uint32."""
    out = np.zeros((len(seeds), L, T), dtype=np.int32)
    _permute_days(np.ascontiguousarray(loc_of_case, dtype=np.int64), np.ascontiguousarray(day_of_case, dtype=np.int64),
                  np.ascontiguousarray(seeds, dtype=np.uint32), out)
    return np.ascontiguousarray(out.transpose(1, 2, 0))


class CpuSpaceTimeEngine:
    """The space-time permutation cylinders on the CPU (Numba): :meth:`batch` is
    :func:`space_time_batch` with the analysis' constants. Picklable (plain arrays)."""

    backend = "cpu"

    def __init__(self, windows, dcum, klogk, n_cases, max_t, t_end_min, min_cases, direction, persons=None):
        self.n_cases = int(n_cases)
        self.args = (windows, dcum, klogk, n_cases, max_t, t_end_min, min_cases, direction)
        # space-time Bernoulli: persons (L, T) per location and day, N = their total
        self.persons = None if persons is None else np.ascontiguousarray(persons, dtype=np.int64)

    def batch(self, cases, want_arg=False, centre_ids=None, floor=None):
        """(m, R) best cylinder LLR per centre [and its code] for ``cases`` (L, T, R) (``centre_ids``,
        ``floor``: see :func:`space_time_batch`)."""
        w = self.args
        if self.persons is not None:
            return space_time_bernoulli_batch(w[0], cases, self.persons, w[2], w[3], int(self.persons.sum()), *w[4:],
                                              want_arg=want_arg, centre_ids=centre_ids, floor=floor)
        return space_time_batch(w[0], cases, *w[1:], want_arg=want_arg, centre_ids=centre_ids, floor=floor)

    #: every PILOT_STRIDE-th centre is scanned first; its maxima are the floor of the full pass
    PILOT_STRIDE = 16

    def max_llr(self, cases):
        """(R,) the largest cylinder LLR of each replicate (0 when none): a pilot over every
        :attr:`PILOT_STRIDE`-th centre gives each replicate a real cylinder's LLR, which then
        starts every centre's maximum (``floor``) so that the high-rate test skips most
        cylinders; the result equals ``batch(cases)[0].max(axis=0)``."""
        R = cases.shape[2]
        m = self.args[0][0].shape[0] - 1
        if m == 0:
            return np.zeros(R)
        floor = None
        if m >= 4 * self.PILOT_STRIDE:
            floor = self.batch(cases, centre_ids=np.arange(0, m, self.PILOT_STRIDE))[0].max(axis=0)
        return self.batch(cases, floor=floor)[0].max(axis=0)
