"""The random streams of the scan's null draws: numba's MT19937 and NumPy's SeedSequence hashing.

Every Monte Carlo replicate has its own seed (a :class:`numpy.random.SeedSequence` child of the
root seed), so a replicate's data do not depend on threads, batching or the executor. Two pieces of
that machinery are redone here in Numba, bit for bit:

* MT19937 as numba's ``np.random`` runs it (:func:`_mt_seed`, :func:`_mt_refill`,
  :func:`_mt_random`, :func:`_mt_randint`): the draw kernels produce a thread's words in
  vectorisable blocks instead of one call, with its state bookkeeping, per word;
* the first ``generate_state`` word of each replicate's SeedSequence (:func:`replicate_seed_words`),
  hashed in one kernel for a whole batch of children instead of one Python SeedSequence each.
"""
from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["replicate_seed_words"]


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
def _uniform53(a, b):
    """numba's ``np.random.random()`` of the two stream words ``a``, ``b`` (uint64 holding 32 bits):
    (a' 2**26 + b') / 2**53 of the top 27 and 26 bits."""
    a >>= np.uint64(5)
    b >>= np.uint64(6)
    return (np.float64(a) * 67108864.0 + np.float64(b)) / 9007199254740992.0


@njit(cache=True, inline="always")
def _mt_random(mt, words, idx):
    """numba's ``np.random.random()`` from the stream: (a 2**26 + b) / 2**53 of the top 27 and 26 bits of
    two words; returns (value, new position)."""
    a, idx = _mt_next(mt, words, idx)
    b, idx = _mt_next(mt, words, idx)
    return _uniform53(a, b), idx


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


def _uint32_words(x) -> list:
    """NumPy SeedSequence's coercion of an entropy or spawn-key value to uint32 words (little-endian
    words of a non-negative int, 0 -> [0]; sequences concatenated); None when unsure."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        n = int(x)
        if n < 0:
            return None
        words = [0] if n == 0 else []
        while n:
            words.append(n & 0xFFFFFFFF)
            n >>= 32
        return words
    if isinstance(x, (tuple, list)):
        out = []
        for v in x:
            w = _uint32_words(v)
            if w is None:
                return None
            out += w
        return out
    return None


def replicate_seed_words(seeds) -> np.ndarray:
    """(R,) uint32: the first ``generate_state`` word of each replicate's SeedSequence (the seed the
    draw kernels reseed with). ``seeds``: a sequence of SeedSequences, or ``(parent, size)`` for the
    children ``parent.n_children_spawned ..`` + size - 1 of ``parent`` (what ``parent.spawn(size)``
    would give, without creating them and without advancing ``parent``): those words come from
    NumPy's hashing algorithm redone in one Numba kernel (creating and hashing one SeedSequence per
    replicate in Python costs more than the draws), checked against NumPy on the first and last child
    (else NumPy's way)."""
    if isinstance(seeds, tuple) and len(seeds) == 2 and isinstance(seeds[0], np.random.SeedSequence):
        parent, size = seeds
        first = int(parent.n_children_spawned)
        size = int(size)

        def child(i):
            return np.random.SeedSequence(parent.entropy, spawn_key=tuple(parent.spawn_key) + (i,),
                                          pool_size=parent.pool_size)

        run = _uint32_words(parent.entropy)
        key = _uint32_words(tuple(parent.spawn_key))
        if size == 0:
            return np.zeros(0, dtype=np.uint32)
        if run is not None and key is not None and first + size <= 2**32:
            run = run + [0] * max(0, parent.pool_size - len(run))  # padded: the spawn key is never empty here
            out = np.empty(size, dtype=np.uint32)
            _child_seed_words(np.array(run + key, dtype=np.uint64), np.int64(parent.pool_size), np.int64(first), out)
            if (out[0] == child(first).generate_state(1, np.uint32)[0]
                    and out[-1] == child(first + size - 1).generate_state(1, np.uint32)[0]):
                return out
        seeds = [child(first + k) for k in range(size)]
    return np.array([ss.generate_state(1, np.uint32)[0] for ss in seeds], dtype=np.uint32)
