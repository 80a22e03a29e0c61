"""Kulldorff's log likelihood ratios of a window from a table of ``k log k``, and the case counts
beyond which they exceed a threshold (the pruning bounds of the CPU kernels).

Bernoulli (:func:`_llr`): ``c`` cases among ``n`` persons, ``C`` of ``N`` in all; Poisson
(:func:`_poisson_llr`): ``c`` of ``C`` cases where ``E`` are expected. Both are sums of table
entries, so every kernel (spatial, space-time; CPU and CUDA) gets the same bits.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(cache=True, inline="always")
def _poisson_llr(klogk, c, C, la, lb):
    """The Poisson LLR ``c log(c/E) + (C-c) log((C-c)/(C-E))`` of ``c`` of ``C`` cases where
    ``log E = la`` and ``log(C - E) = lb``, from the ``k log k`` table: the one sum every Poisson
    kernel (purely spatial, pruned, space-time) uses, so that they agree bit for bit."""
    return (klogk[c] + klogk[C - c]) - (np.float64(c) * la + np.float64(C - c) * lb)


@njit(cache=True, inline="always")
def _bernoulli_terms(klogk, c, n, C, N):
    """The part of the Bernoulli LLR that depends on the window's cases ``c`` (``n`` persons, ``C`` of
    ``N`` in all): ``c log c + (n-c) log(n-c) + (C-c) log(C-c) + (N-n-C+c) log(N-n-C+c)`` from the
    table; the LLR adds ``-(n log n + (N-n) log(N-n)) - l0``, which depends on the persons only."""
    return (klogk[c] + klogk[n - c]) + (klogk[C - c] + klogk[N - n - C + c])


@njit(cache=True, inline="always")
def _llr(klogk, c, n, C, N, l0):
    """The Bernoulli LLR of c cases among n persons (same additions as the per-batch kernels)."""
    q = -(klogk[n] + klogk[N - n]) - l0
    return _bernoulli_terms(klogk, c, n, C, N) + q


@njit(cache=True, inline="always")
def _llr_of(klogk, c, poisson, n, C, N, l0, la, lb):
    """The LLR of ``c`` cases the threshold searches test: Poisson (``poisson``; ``la = log E``, ``lb = log(C -
    E)``, :func:`_poisson_llr`) or Bernoulli (``n`` persons, ``N`` in all, :func:`_llr`)."""
    return _poisson_llr(klogk, c, C, la, lb) if poisson else _llr(klogk, c, n, C, N, l0)


@njit(cache=True, inline="always")
def _first_above(klogk, a, cmax, T, guess, poisson, n, C, N, l0, la, lb):
    """Smallest count c in [a, cmax] whose LLR (:func:`_llr_of`, increasing in c there) exceeds T (cmax + 1 if
    none). ``guess`` (the answer for the previous, smaller window) is usually right or a step too low, so
    the answer is first sought by walking up from it (verified: LLR(guess - 1) <= T), and by bisection
    otherwise."""
    if a > cmax or not (_llr_of(klogk, cmax, poisson, n, C, N, l0, la, lb) > T):
        return cmax + 1
    if guess > a and guess <= cmax and not (_llr_of(klogk, guess - 1, poisson, n, C, N, l0, la, lb) > T):
        c = guess
        for _ in range(4):
            if _llr_of(klogk, c, poisson, n, C, N, l0, la, lb) > T:
                return c
            c += 1
        a = c
    b = cmax
    while a < b:
        mid = (a + b) // 2
        if _llr_of(klogk, mid, poisson, n, C, N, l0, la, lb) > T:
            b = mid
        else:
            a = mid + 1
    return a


@njit(cache=True, inline="always")
def _last_above(klogk, cmin, b, T, guess, poisson, n, C, N, l0, la, lb):
    """Largest count c in [cmin, b] whose LLR (decreasing in c there) exceeds T (-1 if none); as
    :func:`_first_above`, walking down from ``guess``."""
    if b < cmin or not (_llr_of(klogk, cmin, poisson, n, C, N, l0, la, lb) > T):
        return -1
    a = cmin
    if guess >= cmin and guess < b and not (_llr_of(klogk, guess + 1, poisson, n, C, N, l0, la, lb) > T):
        c = guess
        for _ in range(4):
            if _llr_of(klogk, c, poisson, n, C, N, l0, la, lb) > T:
                return c
            c -= 1
        b = c
    while a < b:
        mid = (a + b + 1) // 2
        if _llr_of(klogk, mid, poisson, n, C, N, l0, la, lb) > T:
            a = mid
        else:
            b = mid - 1
    return a


@njit(cache=True)
def _threshold_high(klogk, n, C, N, l0, T, guess):
    """Smallest c above the expected count C n / N with LLR(c, n) > T (min(n, C) + 1 if none); the LLR
    increases with c above the expected count (:func:`_first_above`, from ``guess``)."""
    # smallest c with c N > C n
    return _first_above(klogk, (C * n) // N + 1, min(n, C), T, guess, False, n, C, N, l0, 0.0, 0.0)


@njit(cache=True)
def _threshold_low(klogk, n, C, N, l0, T, guess):
    """Largest c below the expected count with LLR(c, n) > T (-1 if none); as above (:func:`_last_above`)."""
    # largest c with c N < C n
    return _last_above(klogk, max(0, C - (N - n)), (C * n - 1) // N, T, guess, False, n, C, N, l0, 0.0, 0.0)


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
def _poisson_threshold_high(klogk, E, la, lb, C, T, guess):
    """Smallest count c > E (at most C) whose Poisson LLR at ``E`` expected (``la = log E``, ``lb = log(C - E)``)
    exceeds T (C + 1 if none): the LLR increases with c above E (:func:`_first_above`, from ``guess``, the
    answer at the previous, smaller E). With E >= C no count is above E."""
    if not E < C:
        return C + 1
    return _first_above(klogk, np.int64(np.floor(E)) + 1, C, T, guess, True, 0, C, 0, 0.0, la, lb)


@njit(cache=True, inline="always")
def _poisson_threshold_low(klogk, E, la, lb, C, T, guess):
    """Largest count c < E whose Poisson LLR at ``E`` expected exceeds T (-1 if none); as above
    (:func:`_last_above`). With E >= C every count below C is taken (a bound, not the threshold: log(C - E)
    is not finite)."""
    if not E > 0:
        return -1
    b = np.int64(np.ceil(E)) - 1
    if not E < C:
        return min(b, C - 1)
    return _last_above(klogk, 0, b, T, guess, True, 0, C, 0, 0.0, la, lb)


@njit(cache=True, parallel=True)
def _poisson_threshold_tables(klogk, low_e, high_e, n_cases, Tg, want_high, want_low):
    """Case-count thresholds of every group threshold Tg[g] for the Poisson windows of every bin of
    expected cases ``[low_e[u], high_e[u]]`` (sorted): the high-rate one at the bin's least E, the
    low-rate one at its largest (at a fixed count the high-rate LLR falls with E and the low-rate one
    rises, so both are conservative for every window of the bin), as :func:`_threshold_tables`; the
    logarithms of each bin's E once for all groups."""
    G = Tg.shape[0]
    U = low_e.shape[0]
    C = n_cases
    hi = np.empty((G, U), dtype=np.int32)
    lo = np.empty((G, U), dtype=np.int32)
    la_lo = np.log(low_e)
    lb_lo = np.log(C - low_e)
    la_hi = np.log(high_e)
    lb_hi = np.log(C - high_e)
    for g in prange(G):
        h = np.int64(0)
        lw = np.int64(-1)
        for u in range(U):
            if want_high:
                h = _poisson_threshold_high(klogk, low_e[u], la_lo[u], lb_lo[u], C, Tg[g], h)
                hi[g, u] = h
            else:
                hi[g, u] = C + 1
            if want_low:
                lw = _poisson_threshold_low(klogk, high_e[u], la_hi[u], lb_hi[u], C, Tg[g], lw)
                lo[g, u] = lw
            else:
                lo[g, u] = -1
    return hi, lo
