"""The null hypotheses' case draws of the scans, one seed per Monte Carlo replicate.

* Bernoulli (:func:`draw_null_cases`): the C cases relabelled at random among the N persons, a
  multivariate hypergeometric draw over the locations (or the location x day cells);
* Poisson (:func:`draw_multinomial_cases`): the C cases redistributed multinomially in proportion to
  the expected counts;
* space-time permutation (:func:`permute_days_cases`): the cases' days permuted among the cases;
* Bernoulli space-time adjusted for the day of the week (:func:`draw_cases_by_weekday`): each weekday's
  cases relabelled among that weekday's persons;
* time-stratified space-time Poisson and Bernoulli (:func:`draw_cases_by_day`): each day's cases
  redistributed among the locations (Poisson) or relabelled among the day's persons (Bernoulli), so
  that every replicate has the observed cases of every day; space-stratified Poisson
  (:func:`draw_cases_by_location`): each location's cases redistributed over the days;
* normal model (:func:`permute_measurements`): the measurements (with their weights) permuted among
  the observations, each observation keeping its location.

The draws run on the CPU (Numba) whatever the engine; a replicate's counts depend only on its
seed (:mod:`._rng`), not on threads, batching or the executor. Counts are laid out locations x
replicates (int32), the layout every scan kernel reads; the normal model's per-location sums likewise
(float64).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._rng import (_MT_N, _mt_randint, _mt_refill, _mt_random, _mt_seed, _randint_mask, _uniform53,
                   replicate_seed_words)

__all__ = ["draw_null_cases", "draw_multinomial_cases", "permute_days_cases", "draw_cases", "draw_multinomial",
           "permute_days", "permute_measurements", "draw_cases_by_day", "draw_cases_by_location", "draw_cases_by_weekday"]


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


@njit(cache=True, inline="always")
def _popcount(x):
    """Set bits of the uint64 ``x`` (the SWAR sum LLVM compiles to one ``popcnt``)."""
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@njit(cache=True, inline="always")
def _count_bits(bits, cum, counts):
    """``counts[l] = #`` set bits of ``bits`` in persons ``[cum[l-1], cum[l])``, clearing ``bits``:
    one pass over the words and the locations (a location's range is masked at its two ends)."""
    L = cum.shape[0]
    full = np.uint64(0xFFFFFFFFFFFFFFFF)
    lo = 0
    for l in range(L):
        hi = cum[l]
        c = 0
        if hi > lo:
            w0 = lo >> 6
            w1 = (hi - 1) >> 6
            head = full << np.uint64(lo & 63)
            tail = full >> np.uint64(63 - ((hi - 1) & 63))
            if w0 == w1:
                c = _popcount(bits[w0] & head & tail)
            else:
                c = _popcount(bits[w0] & head)
                for w in range(w0 + 1, w1):
                    c += _popcount(bits[w])
                c += _popcount(bits[w1] & tail)
        counts[l] = c
        lo = hi
    for w in range(bits.shape[0]):
        bits[w] = np.uint64(0)


@njit(cache=True, inline="always")
def _merge_distinct(sel, have, fresh):
    """``(merged, n)``: the distinct values of the sorted ``sel[:have]`` (distinct) and ``fresh`` (sorted,
    possibly repeating), in order, in the first ``n`` places of a new array."""
    out = np.empty(have + fresh.shape[0], dtype=np.int64)
    i = 0
    j = 0
    w = 0
    while i < have or j < fresh.shape[0]:
        if j >= fresh.shape[0] or (i < have and sel[i] <= fresh[j]):
            v = sel[i]
            i += 1
        else:
            v = fresh[j]
            j += 1
        if w == 0 or v != out[w - 1]:
            out[w] = v
            w += 1
    return out, w


@njit(cache=True, inline="always")
def _distinct_positions(mt, words, idx, n, k, mask, wide):
    """``(sel, idx)``: ``k`` distinct positions of ``0 .. n - 1`` drawn uniformly at random from the stream
    (``mask``, ``wide``: :func:`~._rng._randint_mask` of ``n``), sorted, in ``sel[:k]``, and the stream's
    position after them. Drawn in rounds, ``k`` positions and then as many as were repeats, ...: each
    round's draws sorted and merged with the distinct positions so far, repeats dropped (O(have + need
    log need) a round, not a sort of all of them)."""
    sel = np.empty(0, dtype=np.int64)
    have = 0
    while have < k:
        need = k - have
        fresh = np.empty(need, dtype=np.int64)
        for t in range(need):
            fresh[t], idx = _mt_randint(mt, words, idx, n, mask, wide)
        fresh.sort()
        sel, have = _merge_distinct(sel, have, fresh)
    return sel, idx


#: replicates whose counts a draw kernel keeps together and writes at once: the (locations x replicates)
#: output then takes whole cache lines (16 int32), instead of one count per line for every replicate
#: (which, with many locations, cost more than the draws) ...
WRITE_BLOCK = 16
#: ... while their counts take at most this many bytes a thread (fewer replicates with more locations)
WRITE_BLOCK_BYTES = 1 << 22


@njit(cache=True, inline="always")
def _block_replicates(L):
    """Replicates a draw kernel keeps together over ``L`` locations: ``WRITE_BLOCK``, fewer where their
    int32 counts would pass ``WRITE_BLOCK_BYTES``, at least 1."""
    return max(1, min(WRITE_BLOCK, WRITE_BLOCK_BYTES // (4 * max(L, 1))))


@njit(cache=True, inline="always")
def _write_block(counts, nk, out, r0):
    """``out[l, r0 + k] = counts[k, l]`` for the ``nk`` replicates of a block, location by location."""
    for l in range(out.shape[0]):
        for k in range(nk):
            out[l, r0 + k] = counts[k, l]


@njit(cache=True, parallel=True)
def _draw_cases(cumpop, n_cases, seeds, use_bits, out):
    """Random relabelling of the C cases among the N persons, per replicate (column).

    A uniformly random C-subset of the persons 0..N-1 (or its complement when C > N/2),
    drawn by rejection of repeated positions, counted per location through the cumulative
    populations: exactly the multivariate hypergeometric distribution. Replicate r uses its own
    seed (the stream of numba's ``np.random.randint`` after ``np.random.seed(seed)``, made by
    :func:`_mt_randint`), so results do not depend on threads or batching. ``out`` is
    (locations, replicates).

    The positions are drawn in rounds: k positions, then as many as were repeats, ... until k are
    distinct. ``use_bits``: repeats are found in a bit map of the N persons (N / 8 bytes per thread,
    in cache up to a few million persons) and the locations' counts are the map's set bits in each
    location's range of persons, O(k + N / 64 + L) per replicate; otherwise (N much larger than
    the k positions) the positions are sorted and deduplicated and merged with the cumulative
    populations, O(k log k + L). Both keep the same draws, hence the same subset and counts.
    """
    L = cumpop.shape[0]
    N = cumpop[L - 1]
    R = seeds.shape[0]
    flip = n_cases > N // 2
    k = N - n_cases if flip else n_cases
    mask, wide = _randint_mask(max(N, 2))  # (N <= 1: k = 0, nothing is drawn)
    one = np.uint64(1)
    K = _block_replicates(L)
    for blk in prange((R + K - 1) // K):
        r0 = blk * K
        nk = min(R, r0 + K) - r0
        bits = np.zeros((N + 63) // 64 if use_bits else 0, dtype=np.uint64)
        block = np.zeros((K, L), dtype=np.int32)
        mt = np.empty(_MT_N, dtype=np.uint32)
        words = np.empty(_MT_N, dtype=np.uint32)
        for kk in range(nk):
            counts = block[kk]
            idx = _mt_seed(mt, seeds[r0 + kk])
            if use_bits:
                have = 0
                while have < k:
                    need = k - have
                    for t in range(need):
                        v, idx = _mt_randint(mt, words, idx, N, mask, wide)
                        b = one << np.uint64(v & 63)
                        w = bits[v >> 6]
                        if (w & b) == 0:
                            bits[v >> 6] = w | b
                            have += 1
                _count_bits(bits, cumpop, counts)
            else:
                counts[:] = 0
                sel, idx = _distinct_positions(mt, words, idx, N, k, mask, wide)
                # sel[:k] is sorted: merge it with the cumulative populations
                _count_sorted(sel, k, cumpop, counts)
            if flip:
                prev = 0
                for l in range(L):
                    counts[l] = (cumpop[l] - prev) - counts[l]
                    prev = cumpop[l]
        _write_block(block, nk, out, r0)


def _draw(kernel, weights, dtype, n_cases, seeds, *extra):
    cum = np.cumsum(np.asarray(weights, dtype=dtype))
    # written in the locations x replicates layout the scan kernels read, blocks of consecutive
    # replicates at once (WRITE_BLOCK: they fill the same cache lines): no transposed copy
    out = np.empty((len(cum), len(seeds)), dtype=np.int32)
    kernel(cum, np.int64(n_cases), np.ascontiguousarray(seeds, dtype=np.uint32), *extra, out)
    return out


def draw_cases(pop, n_cases, seeds, *, method=None):
    """(L, R) int32 null case counts (hypergeometric); ``seeds`` (R,) uint32, one per replicate.

    ``method``: ``"bits"`` (a bit map of the persons) or ``"sort"`` (sorted positions), the same
    counts; by default the bit map unless its N / 64 words outnumber 64 per drawn position (plus
    64k), where sorting the k positions is the less work."""
    N = int(np.sum(pop))
    k = min(int(n_cases), N - int(n_cases))
    if method is None:
        method = "bits" if N <= 4096 * k + 2**22 else "sort"
    if method not in ("bits", "sort"):
        raise ValueError(f"method must be 'bits' or 'sort', got {method!r}")
    return _draw(_draw_cases, pop, np.int64, n_cases, seeds, method == "bits")


@njit(cache=True)
def _guide_table(cum):
    """``(guide, scale)``: for each of ``16 L`` equal buckets of [0, total) (``cum``: cumulative weights,
    last = total; bucket ``int(u scale)``), the location of a point a relative 1e-12 below the
    bucket's start, ``min(L - 1, #{l: cum[l] <= point})``. (16 L int32 buckets: few steps per
    uniform, few mispredicted branches.)"""
    L = cum.shape[0]
    total = cum[L - 1]
    K = 16 * L
    scale = K / total if total > 0 else 0.0
    guide = np.empty(K, dtype=np.int32)
    loc = 0
    for b in range(K):
        lo = (b / scale) * (1.0 - 1e-12) if scale > 0 else 0.0
        while loc < L - 1 and lo >= cum[loc]:
            loc += 1
        guide[b] = loc
    return guide, scale


@njit(cache=True, inline="always")
def _locate(u, cum, guide, scale):
    """The location ``min(L - 1, #{l: cum[l] <= u})`` of ``u`` in [0, total], exactly, whatever the guide:
    from the guide's location of u's bucket ``b = int(u scale)``, stepping up while ``u >= cum[loc]``.
    Only up: u >= b / scale up to two roundings (relative 2**-52), far less than the guide's 1e-12,
    so u's location is never below the guide's; one compare when the bucket holds no boundary."""
    L = cum.shape[0]
    b = min(max(int(u * scale), 0), guide.shape[0] - 1)
    loc = guide[b]
    while loc < L - 1 and u >= cum[loc]:
        loc += 1
    return loc


@njit(cache=True, parallel=True)
def _draw_multinomial(cum, n_cases, seeds, out):
    """C cases dropped on the locations with probabilities proportional to the expected counts
    (``cum``: cumulative expected, last = total), per replicate (column of ``out``): C uniforms on
    [0, total), each counted at location ``min(L - 1, #{l: cum[l] <= u})`` (exactly multinomial).
    One seed per replicate (numba's ``np.random.random`` stream after ``np.random.seed(seed)``, made
    by :func:`_mt_random`).

    The location of a uniform is found by :func:`_locate` from a guide table (:func:`_guide_table`):
    the counts are those of sorting the uniforms and merging them with ``cum``
    (:func:`_draw_multinomial_sorted`), without the sort."""
    L = cum.shape[0]
    total = cum[L - 1]
    R = seeds.shape[0]
    guide, scale = _guide_table(cum)
    K = _block_replicates(L)
    for blk in prange((R + K - 1) // K):
        r0 = blk * K
        nk = min(R, r0 + K) - r0
        counts = np.zeros((K, L), dtype=np.int32)
        mt = np.empty(_MT_N, dtype=np.uint32)
        words = np.empty(_MT_N, dtype=np.uint32)
        ubuf = np.empty(_MT_N // 2, dtype=np.float64)
        for k in range(nk):
            idx = _mt_seed(mt, seeds[r0 + k])
            ck = counts[k]
            t = 0
            while t < n_cases:
                if idx >= _MT_N:
                    _mt_refill(mt, words)
                    idx = 0
                # the uniforms of the block's whole pairs of words at once (a vectorised loop), the
                # stream's values as _mt_random makes them; a pair across two blocks by _mt_random
                n_u = min((_MT_N - idx) // 2, n_cases - t)
                if n_u == 0:
                    x, idx = _mt_random(mt, words, idx)
                    ubuf[0] = x * total
                    n_u = 1
                else:
                    for p in range(n_u):
                        ubuf[p] = _uniform53(np.uint64(words[idx + 2 * p]), np.uint64(words[idx + 2 * p + 1])) * total
                    idx += 2 * n_u
                for p in range(n_u):
                    ck[_locate(ubuf[p], cum, guide, scale)] += 1
                t += n_u
        _write_block(counts, nk, out, r0)


@njit(cache=True, parallel=True)
def _draw_multinomial_sorted(cum, n_cases, seeds, out):
    """:func:`_draw_multinomial` by sorting the uniforms and merging them with ``cum``: the reference
    the tests compare the guide-table kernel with (the same counts)."""
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
    the sort-and-merge kernel, a reference with the same counts)."""
    return _draw(_draw_multinomial_sorted if sorted_merge else _draw_multinomial, expected, np.float64, n_cases,
                 seeds)


@njit(cache=True, parallel=True)
def _multinomial_strata(cum, strata_cases, T, by_day, seeds, out):
    """Stratified Poisson nulls: the ``strata_cases[s]`` cases of every stratum s dropped on its cells with
    probabilities proportional to their expected counts (``cum``: cumulative, last = total), the strata one
    after the other from one stream per replicate (numba's ``np.random.random`` after
    ``np.random.seed(seed)``); ``out`` (L T, R), zeros on entry, row ``l T + d``. ``by_day``: the strata
    are the days and the cells the locations (time-stratified); else the strata are the locations and the
    cells the ``T`` days (space-stratified)."""
    total = cum[cum.shape[0] - 1]
    guide, scale = _guide_table(cum)
    for r in prange(seeds.shape[0]):
        mt = np.empty(_MT_N, dtype=np.uint32)
        words = np.empty(_MT_N, dtype=np.uint32)
        idx = _mt_seed(mt, seeds[r])
        for s in range(strata_cases.shape[0]):
            for _ in range(strata_cases[s]):
                x, idx = _mt_random(mt, words, idx)
                k = _locate(x * total, cum, guide, scale)
                out[k * T + s if by_day else s * T + k, r] += 1


@njit(cache=True, parallel=True)
def _hypergeometric_by_day(cum, day_cases, seeds, out):
    """Time-stratified Bernoulli null: the ``day_cases[d]`` cases of every day d relabelled among that day's
    persons, a uniformly random subset of them (or of its complement when it is the smaller), drawn by
    rejection of repeated positions (:func:`_distinct_positions`); ``cum`` (T, L) the
    cumulative persons of each day over the locations; ``out`` (L T, R), zeros on entry, row ``l T + d``."""
    T, L = cum.shape
    for r in prange(seeds.shape[0]):
        mt = np.empty(_MT_N, dtype=np.uint32)
        words = np.empty(_MT_N, dtype=np.uint32)
        idx = _mt_seed(mt, seeds[r])
        for d in range(T):
            Nd = cum[d, L - 1]
            flip = day_cases[d] > Nd // 2
            k = Nd - day_cases[d] if flip else day_cases[d]
            mask, wide = _randint_mask(max(Nd, 2))
            sel, idx = _distinct_positions(mt, words, idx, Nd, k, mask, wide)
            row = cum[d]
            for q in range(k):
                out[np.searchsorted(row, sel[q], side="right") * T + d, r] += 1
            if flip:
                prev = 0
                for l in range(L):
                    out[l * T + d, r] = (row[l] - prev) - out[l * T + d, r]
                    prev = row[l]


def draw_cases_by_day(weights, day_cases, seeds, *, persons=False) -> np.ndarray:
    """The time-stratified null (SaTScan's ``TimeTrendAdjustmentType=4``): (L, T, R) int32 counts with
    ``day_cases[d]`` cases on every day d of every replicate (one seed per replicate, as
    :func:`draw_null_cases`). ``persons`` False: ``weights`` (L,) the locations' expected counts, each day's
    cases dropped on them multinomially (discrete Poisson); True: ``weights`` (L, T) whole persons per
    location and day, each day's cases a uniformly random subset of the day's persons (Bernoulli)."""
    words = replicate_seed_words(seeds)
    day_cases = np.ascontiguousarray(day_cases, dtype=np.int64)
    T = len(day_cases)
    if persons:
        w = np.asarray(weights, dtype=np.int64)
        L = w.shape[0]
        out = np.zeros((L * T, len(words)), dtype=np.int32)
        _hypergeometric_by_day(np.ascontiguousarray(np.cumsum(w, axis=0).T), day_cases, words, out)
    else:
        cum = np.cumsum(np.asarray(weights, dtype=np.float64))
        L = len(cum)
        out = np.zeros((L * T, len(words)), dtype=np.int32)
        _multinomial_strata(cum, day_cases, T, True, words, out)
    return out.reshape(L, T, len(words))


def draw_cases_by_weekday(persons, cases, weekday, seeds) -> np.ndarray:
    """The Bernoulli null adjusted for the day of the week (SaTScan's ``AdjustForWeeklyTrends`` with the
    Bernoulli model, ``BernoulliNullHypothesisDayOfWeekRandomizer``): (L, T, R) int32 counts with the cases of
    every weekday's cells (every location on every day of that weekday) a uniformly random subset of those
    cells' persons. ``persons``, ``cases`` (L, T) whole persons (cases + controls) and cases per location and
    day, ``weekday`` (T,) every day's weekday (any labelling mod 7); one seed per replicate, as
    :func:`draw_null_cases`. Each weekday is one stratum of :func:`draw_cases_by_day`, its cells laid out as
    that draw's locations (location-major, padded with cells of no persons, which never get a case)."""
    persons = np.asarray(persons, dtype=np.int64)
    L, T = persons.shape
    w = np.asarray(weekday, dtype=np.int64) % 7
    days = [np.flatnonzero(w == k) for k in range(7)]
    K = max(1, max(len(d) for d in days))
    cells = np.zeros((L, K, 7), dtype=np.int64)  # (location, i-th day of the weekday, weekday)
    for k, d in enumerate(days):
        cells[:, :len(d), k] = persons[:, d]
    strata_cases = np.array([int(np.asarray(cases)[:, d].sum()) for d in days], dtype=np.int64)
    drawn = draw_cases_by_day(cells.reshape(L * K, 7), strata_cases, seeds, persons=True).reshape(L, K, 7, -1)
    out = np.empty((L, T, drawn.shape[3]), dtype=np.int32)
    for k, d in enumerate(days):
        out[:, d] = drawn[:, :len(d), k]
    return out


def draw_cases_by_location(day_weights, loc_cases, seeds) -> np.ndarray:
    """The space-stratified null of the discrete Poisson space-time scan (SaTScan's
    ``SpatialAdjustmentType=1``): (L, T, R) int32 counts with the ``loc_cases[l]`` cases of every location l
    dropped on the days multinomially in proportion to ``day_weights`` (T,), so that every replicate has
    each location's observed cases (one seed per replicate, as :func:`draw_null_cases`)."""
    words = replicate_seed_words(seeds)
    loc_cases = np.ascontiguousarray(loc_cases, dtype=np.int64)
    cum = np.cumsum(np.asarray(day_weights, dtype=np.float64))
    L, T = len(loc_cases), len(cum)
    out = np.zeros((L * T, len(words)), dtype=np.int32)
    _multinomial_strata(cum, loc_cases, T, False, words, out)
    return out.reshape(L, T, len(words))


@njit(cache=True, inline="always")
def _shuffle(a, lo, hi):
    """``a[lo:hi]`` shuffled in place (Fisher-Yates, from the last position down) by Numba's generator: the one
    shuffle of every permutation null (days among cases, measurements among observations)."""
    for q in range(hi - 1, lo, -1):
        p = lo + np.random.randint(0, q - lo + 1)
        tmp = a[q]
        a[q] = a[p]
        a[p] = tmp


@njit(cache=True, parallel=True)
def _permute_days(loc_of_case, day_of_case, bounds, seeds, out):
    """Space-time permutation null: the days of the C cases shuffled among the cases (each
    case keeps its location) within each stratum ``bounds[s] .. bounds[s + 1] - 1`` of the cases (one
    stratum: ``bounds = [0, C]``), one seed per replicate; ``out`` (R, L, T) counts."""
    R = seeds.shape[0]
    K = day_of_case.shape[0]
    for r in prange(R):
        np.random.seed(seeds[r])
        days = day_of_case.copy()
        for s in range(bounds.shape[0] - 1):
            _shuffle(days, bounds[s], bounds[s + 1])
        for q in range(K):
            out[r, loc_of_case[q], days[q]] += 1


def permute_days(loc_of_case, day_of_case, L, T, seeds, bounds=None):
    """(L, T, R) int32 null counts; ``seeds`` (R,) uint32; ``bounds``: the strata of the cases (see
    :func:`_permute_days`; None: one)."""
    out = np.zeros((len(seeds), L, T), dtype=np.int32)
    b = np.array([0, len(day_of_case)], dtype=np.int64) if bounds is None else np.asarray(bounds, dtype=np.int64)
    _permute_days(np.ascontiguousarray(loc_of_case, dtype=np.int64), np.ascontiguousarray(day_of_case, dtype=np.int64),
                  b, np.ascontiguousarray(seeds, dtype=np.uint32), out)
    return np.ascontiguousarray(out.transpose(1, 2, 0))


def draw_multinomial_cases(expected: np.ndarray, n_cases: int, seeds) -> np.ndarray:
    """Poisson model null: the C cases redistributed over the locations, multinomially with
    probabilities ``expected / sum(expected)`` (one seed per replicate, as
    :func:`draw_null_cases`). Returns (L, R) int32."""
    return draw_multinomial(expected, n_cases, replicate_seed_words(seeds))


def draw_null_cases(pop: np.ndarray, n_cases: int, seeds) -> np.ndarray:
    """Cases per location for each replicate: the C cases relabelled at random among all
    N persons (a multivariate hypergeometric draw over the locations' populations, made
    as a uniformly random C-subset of the persons: O(C + N/64 + L) per replicate with a bit map of the
    persons, O(C log C + L) by sorting the drawn positions when N is much larger than C). One seed per
    replicate (``seeds``: SeedSequences), so a replicate's data does not depend on how
    replicates are batched or on the executor. Returns (L, R) int32."""
    return draw_cases(pop, n_cases, replicate_seed_words(seeds))


def permute_days_cases(loc_of_case, day_of_case, L: int, T: int, seeds, bounds=None) -> np.ndarray:
    """Space-time permutation null: (L, T, R) int32 counts with the cases' days permuted among the
    cases (one seed per replicate, as :func:`draw_null_cases`), within each stratum of ``bounds`` (see
    :func:`_permute_days`; None: one stratum)."""
    return permute_days(loc_of_case, day_of_case, L, T, replicate_seed_words(seeds), bounds)


@njit(cache=True, inline="always")
def seeded_permutation(seed, n):
    """A uniform permutation of ``0..n-1`` (Fisher-Yates) from Numba's generator reseeded with ``seed``: the
    permutation of the permuted models' replicates (normal, exponential), the same for every kernel that
    draws it from the same seed."""
    np.random.seed(seed)
    perm = np.arange(n)
    _shuffle(perm, 0, n)
    return perm


@njit(cache=True, inline="always")
def seeded_permutation_strata(seed, n, members, bounds):
    """:func:`seeded_permutation` within strata: ``members[bounds[s]:bounds[s + 1]]`` are the items of stratum s
    (every item of ``0..n-1`` in one), each stratum's shuffled among themselves in turn (Fisher-Yates) from
    Numba's generator reseeded with ``seed``; no strata (``bounds`` empty): :func:`seeded_permutation`."""
    if bounds.shape[0] == 0:
        return seeded_permutation(seed, n)
    np.random.seed(seed)
    perm = np.empty(n, dtype=np.int64)
    for s in range(bounds.shape[0] - 1):
        a = bounds[s]
        idx = members[a:bounds[s + 1]].copy()
        _shuffle(idx, 0, idx.shape[0])
        for i in range(idx.shape[0]):
            perm[members[a + i]] = idx[i]
    return perm


def strata_members(stratum) -> tuple:
    """``(members, bounds)`` of :func:`seeded_permutation_strata` for each item's ``stratum`` (n,) code."""
    stratum = np.asarray(stratum, dtype=np.int64)
    members = np.argsort(stratum, kind="stable").astype(np.int64)
    counts = np.bincount(stratum) if len(stratum) else np.zeros(0, dtype=np.int64)
    return members, np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)


@njit(cache=True, parallel=True)
def _permute_measurements(loc_of_obs, first, second, seeds, out1, out2, members, bounds):
    """Normal model null: the pairs (``first[q]``, ``second[q]``) shuffled among the observations (each
    observation keeps its location ``loc_of_obs[q]``), within strata where ``bounds`` is not empty
    (:func:`seeded_permutation_strata`), one seed per replicate; ``out1``, ``out2`` (R, L) the per-location sums
    of the shuffled pairs' two entries, in observation order."""
    R = seeds.shape[0]
    K = first.shape[0]
    for r in prange(R):
        perm = seeded_permutation_strata(seeds[r], K, members, bounds)
        for q in range(K):
            out1[r, loc_of_obs[q]] += first[perm[q]]
            out2[r, loc_of_obs[q]] += second[perm[q]]


def permute_measurements(loc_of_obs: np.ndarray, first: np.ndarray, second: np.ndarray, L: int, seeds,
                         strata=None) -> tuple:
    """Normal model null (SaTScan's ``NormalRandomizer`` / ``WeightedNormalRandomizer``): the
    observations' measurements permuted among the observations, which keep their locations.

    ``first``, ``second`` (K,) float64: what each observation adds to its location's two sums (the
    unweighted model: x and x squared; the weighted model: w x and w), permuted together;
    ``loc_of_obs`` (K,) the observations' locations; one seed per replicate (``seeds``: SeedSequences,
    or a batch as :func:`~.monte_carlo.batch_children` gives it); ``strata``: None, or ``(members, bounds)``
    (:func:`strata_members`) to permute within strata. Returns the two sums per location, (L, R) float64 each.
    """
    words = replicate_seed_words(seeds)
    R = len(words)
    out1 = np.zeros((R, L), dtype=np.float64)
    out2 = np.zeros((R, L), dtype=np.float64)
    _permute_measurements(np.ascontiguousarray(loc_of_obs, dtype=np.int64), np.ascontiguousarray(first, np.float64),
                          np.ascontiguousarray(second, np.float64), np.ascontiguousarray(words, dtype=np.uint32),
                          out1, out2, *_strata_arrays(strata))
    return np.ascontiguousarray(out1.T), np.ascontiguousarray(out2.T)


def _strata_arrays(strata) -> tuple:
    """``(members, bounds)`` int64 of ``strata`` (:func:`strata_members`), empty for None (no strata)."""
    if strata is None:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return tuple(np.ascontiguousarray(a, dtype=np.int64) for a in strata)
