"""The observed data's best window per centre on the CPU, skipping blocks of windows by a bound.

The observed scan is one column of cases (``R = 1``), so the per-replicate vectorisation of
:func:`~.cpu._scan_batch` does not help it, and its cost is the log likelihood ratio of every
window end: a few loads from the ``k log k`` table at the window's population, which move by a
cache line or more from one window to the next. This kernel walks each centre's windows in blocks
of ``block`` entries and evaluates the LLR at one point per block first, a bound on every window
of the block, and walks the block entry by entry only when the bound reaches the centre's running
maximum. The Bernoulli walk also prefetches the table lines of the next ``LOOKAHEAD`` window ends
(their counts from a running sum ahead of the walk) when the table is larger than a core's L2 cache
(``PREFETCH_TABLE_BYTES``), so that those loads overlap instead of each waiting on memory.

The bound. Along a centre's walk the window's case count c and size n (persons, or expected cases
for the Poisson model) only grow. On the high-rate side (c/n > (C - c)/(N - n); Poisson c > E) the
LLR grows with c at a fixed n and falls with n at a fixed c (see :mod:`.sizes` for the Bernoulli
model; for the Poisson model dLLR/dE = (C - c)/(C - E) - c/E < 0 there), and moving to a larger c or
a smaller n stays on that side. So no high-rate window of a block beats the LLR at (the count after
the block's last entry, the size after its first entry); on the low-rate side, symmetrically, the
LLR at (the count after its first entry, the size after its last entry). A block is skipped when
neither bound reaches the running maximum less a margin far above the table's rounding, so the
best LLR and the window where it is first attained are those of the exhaustive kernel, bit for bit
(the walked entries use its additions).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .._prefetch import prefetch
from .llr import _llr, _poisson_llr

__all__ = ["best_per_centre_blocks"]

#: entries per block: one bound per block against up to ``BLOCK`` exact LLRs
BLOCK = 8
#: window ends past the block being tested whose ``k log k`` lines are prefetched (Bernoulli; 0: none)
LOOKAHEAD = 16
#: the prefetch is made only for tables at least this large: a smaller one stays in a core's L2
#: cache, where the prefetches only add instructions (measured slower)
PREFETCH_TABLE_BYTES = 2 << 20


@njit(cache=True, inline="always")
def _block_bound(c_lo, c_hi, j, jl, npop, mexp, loge, logce, klogk, C, N, l0, want_high, want_low, min_cases,
                 poisson):
    """Largest LLR any window ending in entries ``j..jl`` can have: ``c_lo``/``c_hi`` the counts after
    entries ``j`` and ``jl``; ``inf`` where the bound's point is not a valid window (never skipped)."""
    bound = -np.inf
    if poisson:
        if want_high and c_hi >= min_cases and np.float64(c_hi) > mexp[j]:
            bound = _poisson_llr(klogk, np.int32(c_hi), np.int32(C), loge[j], logce[j])
        if want_low and np.float64(c_lo) < mexp[jl]:
            bound = max(bound, _poisson_llr(klogk, np.int32(c_lo), np.int32(C), loge[jl], logce[jl]))
        return bound
    n = npop[j]
    if want_high and c_hi >= min_cases and np.float64(c_hi) * np.float64(N) > np.float64(C) * np.float64(n):
        if c_hi > n:
            return np.inf
        bound = _llr(klogk, c_hi, n, C, N, l0)
    n = npop[jl]
    if want_low and np.float64(c_lo) * np.float64(N) < np.float64(C) * np.float64(n):
        if N - n < C - c_lo:
            return np.inf
        bound = max(bound, _llr(klogk, c_lo, n, C, N, l0))
    return bound


@njit(cache=True, inline="always")
def _prefetch_llr(klogk, c, n, C, N):
    """Prefetch the ``k log k`` entries of the Bernoulli LLR of ``c`` cases among ``n`` persons that are
    far apart from one window to the next (those at the persons' counts; the cases' two move slowly)."""
    prefetch(klogk, n)
    prefetch(klogk, N - n)
    prefetch(klogk, n - c)
    prefetch(klogk, N - n - C + c)


@njit(cache=True, parallel=True, error_model="numpy")
def _best_blocks(offsets, neighbors, npop, mexp, loge, logce, boundary, cases, klogk, n_cases, n_total, l0,
                 want_high, want_low, min_cases, poisson, margin, block, lookahead, best, best_entry):
    """Best LLR and its first window end entry (-1: none positive) of every centre, for the one
    column ``cases`` (L,), blocks skipped by :func:`_block_bound`; the table lines of the window ends
    up to ``lookahead`` entries past each block are prefetched first (Bernoulli only: 0 for Poisson,
    see :func:`best_per_centre_blocks`; their counts from a second running sum), so that the lookups of
    a centre's walk do not each wait on memory."""
    n_centres = offsets.shape[0] - 1
    C = n_cases
    N = n_total
    Nf = np.float64(N)
    cc = np.int32(C)
    mc = np.int32(min_cases)
    for i in prange(n_centres):
        m = 0.0
        arg = -1
        c = np.int32(0)
        j = offsets[i]
        end = offsets[i + 1]
        p = j  # next entry to prefetch, and the count through the entries before it
        cp = np.int32(0)
        while j < end:
            jb = min(j + block, end)
            pe = min(jb + lookahead, end) if lookahead > 0 else p
            while p < pe:
                cp += cases[neighbors[p]]
                _prefetch_llr(klogk, cp, npop[p], C, N)
                p += 1
            c_lo = c + cases[neighbors[j]]
            c_hi = c_lo
            for k in range(j + 1, jb):
                c_hi += cases[neighbors[k]]
            if _block_bound(c_lo, c_hi, j, jb - 1, npop, mexp, loge, logce, klogk, C, N, l0, want_high, want_low,
                            mc, poisson) < m - margin:
                c = c_hi
                j = jb
                continue
            for k in range(j, jb):
                c += cases[neighbors[k]]
                if boundary[k] == 0:
                    continue
                if poisson:
                    llr = _poisson_llr(klogk, c, cc, loge[k], logce[k])
                    lhs = np.float64(c)
                    rhs = mexp[k]
                else:
                    n = npop[k]
                    llr = _llr(klogk, c, n, C, N, l0)
                    lhs = np.float64(c) * Nf
                    rhs = np.float64(C) * np.float64(n)
                ok = (want_high & (lhs > rhs) & (c >= mc)) | (want_low & (lhs < rhs))
                if ok and llr > m:
                    m = llr
                    arg = k
            j = jb
        best[i] = m
        best_entry[i] = arg


def best_per_centre_blocks(offsets, neighbors, npop, mexp, loge, logce, boundary, cases, klogk, n_cases, n_total,
                           l0, want_high, want_low, min_cases, poisson, margin, block=BLOCK, lookahead=None):
    """``(best, best_entry)`` (m,) of the one column ``cases`` (L,) int32: each centre's largest LLR
    and the entry where its best window first ends (-1 when no window has a positive LLR), equal bit
    for bit to those of :func:`~.cpu._scan_batch`; arguments as there, ``margin`` (> the LLRs'
    rounding) below the running maximum at which a block's bound skips it; ``lookahead``: window ends
    past the current block whose table lines are prefetched (any value gives the same results; None:
    ``LOOKAHEAD`` for a table of ``PREFETCH_TABLE_BYTES`` or more, else none). The Poisson model is
    never prefetched: its lookups are at the case counts, which move by a few entries from one window
    to the next, so the caches hold them (prefetching them measured slower)."""
    if poisson:
        lookahead = 0
    elif lookahead is None:
        lookahead = LOOKAHEAD if klogk.nbytes >= PREFETCH_TABLE_BYTES else 0
    m = offsets.shape[0] - 1
    best = np.empty(m, dtype=np.float64)
    best_entry = np.empty(m, dtype=np.int64)
    _best_blocks(offsets, neighbors, npop, mexp, loge, logce, boundary, np.ascontiguousarray(cases, dtype=np.int32),
                 klogk, np.int64(n_cases), np.int64(n_total), np.float64(l0), bool(want_high), bool(want_low),
                 np.int64(min_cases), bool(poisson), np.float64(margin), np.int64(block), np.int64(lookahead), best,
                 best_entry)
    return best, best_entry
