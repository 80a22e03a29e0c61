"""Window populations as the pruned Bernoulli kernels index them.

The kernels look up a case-count threshold for every window end they test, from a table with one
column per population. :func:`unique_sizes` gives the exact table's columns (the distinct
populations); :func:`size_bins` groups populations above ``exact_below`` into bins at most
1/``per_octave`` of their size wide, so that the table stays small (a few thousand columns, in a
core's cache) when windows hold up to millions of persons.

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

__all__ = ["unique_sizes", "size_bins"]


def unique_sizes(npop):
    """``(uniq, index)``: the distinct window populations (sorted, int64) and each entry's index among
    them (int32), as ``np.unique(npop, return_inverse=True)``; small populations (the usual case) by a
    table of the values present, without sorting the entries (a sort of every entry costs far more)."""
    uniq, table, inverse = _distinct(npop)
    return uniq, (inverse if table is None else _take(table, npop))


def _distinct(npop):
    """``(uniq, table, inverse)``: the distinct values of ``npop`` (sorted, int64) and either ``table``,
    the index in ``uniq`` of every value from 0 to the largest (int32; when the values are small
    non-negative integers), or ``inverse``, every entry's index (int32; otherwise); the other is None."""
    npop = np.asarray(npop)
    if npop.size == 0:
        return np.zeros(0, np.int64), None, np.zeros(0, np.int32)
    if npop.dtype.kind not in "iu" or int(npop.min()) < 0 or int(npop.max()) > 4 * npop.size + (1 << 20):
        u, inv = np.unique(npop, return_inverse=True)
        return u.astype(np.int64), None, inv.astype(np.int32).ravel()
    present = np.zeros(int(npop.max()) + 1, dtype=bool)
    _mark_present(npop, present)
    return np.flatnonzero(present).astype(np.int64), np.cumsum(present, dtype=np.int32) - 1, None


def _take(table, index):
    """``table[index]`` (int32), in parallel."""
    out = np.empty(np.asarray(index).shape[0], dtype=np.int32)
    _gather(table, index, out)
    return out


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


def size_bins(npop, exact_below=1024, per_octave=512):
    """``(low, high, index)``: bins of the window populations ``npop``, each bin's smallest and
    largest population present (sorted, int64) and each entry's bin (int32).

    Populations below ``exact_below`` are bins of their own; above it, a population n in
    [2**e, 2**(e+1)) falls in a bin 2**e / ``per_octave`` (a power of 2) persons wide. With at most
    ``exact_below`` distinct populations ``low`` equals ``high`` (the exact table of
    :func:`unique_sizes`).
    """
    uniq, table, inverse = _distinct(npop)
    if uniq.size <= exact_below:
        return uniq, uniq, (inverse if table is None else _take(table, npop))
    e = np.floor(np.log2(np.maximum(uniq, 1))).astype(np.int64)
    shift = np.maximum(e - int(np.log2(per_octave)), 0)
    key = np.where(uniq < exact_below, uniq, exact_below + (e << 32) + (uniq >> shift))
    first = np.r_[True, key[1:] != key[:-1]]
    bin_of = (np.cumsum(first) - 1).astype(np.int32)
    low = uniq[first]
    high = uniq[np.r_[first[1:], True]]
    # one gather of the entries: through a table from each value straight to its bin
    if table is None:
        return low, high, _take(bin_of, inverse)
    return low, high, _take(bin_of[table], npop)
