"""Window populations as the pruned Bernoulli kernels index them.

The kernels look up a case-count threshold for every window end they test, from a table with one
row per population bin. :func:`size_bins` gives every population below ``exact_below`` a bin of its own
and groups those above into bins at most 1/``per_octave`` of their size wide, so that the table stays
small (a few thousand rows, in a core's cache) when windows hold up to millions of persons.

A bin's thresholds are those of its smallest population for the high-rate side and of its largest
for the low-rate side. That is conservative: at a fixed case count ``c`` the Bernoulli LLR
decreases with the persons ``n`` where the window's rate is the higher (dLLR/dn = log(1 - c/n) -
log(1 - (C-c)/(N-n)) < 0 when c/n > (C-c)/(N-n)) and increases where it is the lower, so the
smallest high-rate count that exceeds a threshold grows with ``n`` and so does the largest
low-rate one. A bin's thresholds therefore pass every window an exact threshold would pass (and a
few more, whose LLRs the kernels then compute and find below the maximum).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__ = ["size_bins", "expected_bins"]


#: entries per chunk of the bin passes (their float64 copies stay in a core's cache)
_CHUNK = 1 << 14


def _bin_key(n, E0, eb, pb):
    """The bin of population ``n`` among all bins of :func:`size_bins` (empty ones too): ``n`` below ``E0 =
    2**eb``; above, ``E0 + (e - eb) 2**pb + (n >> (e - pb)) - 2**pb``, ``e = floor(log2 n)``."""
    if n < E0:
        return n
    e = n.bit_length() - 1
    return E0 + ((e - eb) << pb) + (n >> (e - pb)) - (1 << pb)


@njit(cache=True, parallel=True)
def _bin_pass(npop, E0, eb, pb, out):
    """``out[i]``: the bin of ``npop[i]`` (:func:`_bin_key`, ``e`` from the exponent bits of the population as a
    float64, exact for any integer below 2**53), in vectorised loops over chunks of the entries."""
    n_all = npop.shape[0]
    for ch in prange((n_all + _CHUNK - 1) // _CHUNK):
        a = ch * _CHUNK
        b = min(n_all, a + _CHUNK)
        f = np.empty(b - a, dtype=np.float64)
        for i in range(b - a):
            f[i] = npop[a + i]
        bits = f.view(np.int64)
        for i in range(b - a):
            n = np.int64(npop[a + i])
            e = (bits[i] >> 52) - 1023
            out[a + i] = n if n < E0 else E0 + ((e - eb) << pb) + (n >> max(e - pb, 0)) - (1 << pb)


def size_bins(npop, exact_below=1024, per_octave=512):
    """``(low, high, index)``: bins of the window populations ``npop``, each bin's smallest and
    largest population (sorted, int64) and each entry's bin (int32).

    Populations below ``exact_below`` are bins of their own; above it, a population n in
    [2**e, 2**(e+1)) falls in a bin 2**e / ``per_octave`` persons wide (both powers of 2, ``per_octave``
    at most ``exact_below``). Every bin up to the largest population's is listed, with its nominal range
    ``[low, high]`` (``high`` at most the largest population), whether or not some population falls in
    it: a bin is found by arithmetic, in one parallel pass over the entries, without a table over the
    populations' range (for windows of a million persons, larger than the caches). When every
    population is below ``exact_below``, ``low`` equals ``high``: every population's own bin.
    """
    npop = np.asarray(npop)
    eb, pb = int(exact_below).bit_length() - 1, int(per_octave).bit_length() - 1
    if exact_below != 1 << eb or per_octave != 1 << pb or pb > eb:
        raise ValueError(f"exact_below ({exact_below}) and per_octave ({per_octave}) must be powers of 2, "
                         f"per_octave <= exact_below")
    if npop.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int32)
    if npop.dtype.kind not in "iu" or int(npop.min()) < 0:
        raise ValueError("window populations must be non-negative integers")
    top = int(npop.max())
    E0 = 1 << eb
    keys = np.arange(_bin_key(top, E0, eb, pb) + 1, dtype=np.int64)
    above = keys >= E0
    e = eb + ((keys - E0) >> pb)
    shift = np.where(above, e - pb, 0)
    r = (keys - E0) - ((e - eb) << pb) + (1 << pb)
    low = np.where(above, r << shift, keys)
    high = np.minimum(np.where(above, ((r + 1) << shift) - 1, keys), top)
    index = np.empty(npop.shape[0], dtype=np.int32)
    _bin_pass(npop, np.int64(E0), np.int64(eb), np.int64(pb), index)
    return low, high, index


@njit(cache=True, parallel=True)
def _expected_pass(E, smallest, base, sh, out):
    """``out[i]``: the bin of ``E[i]`` (see :func:`expected_bins`): 0 below ``smallest``, else 1 + the float's
    bits shifted right by ``sh``, less ``base`` (the bits of a non-negative float64 order as its value)."""
    bits = E.view(np.int64)
    for i in prange(E.shape[0]):
        out[i] = np.int32((bits[i] >> sh) - base + 1) if E[i] >= smallest else np.int32(0)


def expected_bins(E, smallest, largest, per_octave=512):
    """``(low, high, index)``: bins of the windows' expected cases ``E`` (float64, >= 0, at most
    ``largest``), each bin's least and largest E (sorted, float64) and each entry's bin (int32).

    Bin 0 holds every E below ``smallest`` (a power of 2; ``low`` 0); above it, an E in [2**e, 2**(e+1))
    falls in a bin 2**e / ``per_octave`` wide (a power of 2), found from the float's exponent and top
    mantissa bits in one parallel pass. Every bin up to ``largest``'s is listed with its nominal range,
    ``high`` the next bin's ``low`` (an upper bound of its E), the last one ``largest``. The Poisson
    counterpart of :func:`size_bins`: a bin's high-rate count thresholds are those of its ``low``, the
    low-rate ones those of its ``high``.

    Examples
    --------
    >>> import numpy as np
    >>> low, high, index = expected_bins(np.array([0.0, 0.3, 1.0, 1.5, 6.0]), 0.5, 6.0, per_octave=2)
    >>> low[index].tolist(), high[index].tolist()
    ([0.0, 0.0, 1.0, 1.5, 6.0], [0.5, 0.5, 1.5, 2.0, 6.0])
    """
    E = np.ascontiguousarray(E, dtype=np.float64)
    pb = int(per_octave).bit_length() - 1
    if per_octave != 1 << pb or pb > 52:
        raise ValueError(f"per_octave must be a power of 2, got {per_octave}")
    smallest, largest = float(smallest), float(largest)
    if not (smallest > 0 and np.frexp(smallest)[0] == 0.5):
        raise ValueError(f"smallest must be a positive power of 2, got {smallest}")
    sh = 52 - pb
    base = int(np.array(smallest).view(np.int64)) >> sh
    top = max(int(np.array(max(largest, smallest)).view(np.int64)) >> sh, base)
    starts = ((np.arange(base, top + 2, dtype=np.int64) << sh).view(np.float64))
    low = np.concatenate([[0.0], starts[:-1]])
    high = starts
    high[-1] = max(largest, low[-1])
    index = np.empty(E.shape[0], dtype=np.int32)
    _expected_pass(E, np.float64(smallest), np.int64(base), np.int64(sh), index)
    return low, high, index
