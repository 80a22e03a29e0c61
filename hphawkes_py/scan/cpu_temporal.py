"""The CPU engine of the purely temporal and seasonal scans (Numba): every time window of every replicate.

A window is a run of consecutive time units ``t1..t2`` (after aggregation) of ``min_len`` to
``max_len`` units. The series a kernel reads may be *extended*: the seasonal (closed-loop) scan
appends the first ``max_len - 1`` units of the year after its last one, so that a window that
starts in December and ends in January is an ordinary run of the extended series; windows then
start in the first ``n_start`` units only (the year), and never wrap twice.

Poisson (``persons`` None): a window with ``c`` of the ``C`` cases and ``mu`` expected has the LLR
``c log(c/mu) + (C-c) log((C-c)/(C-mu))`` (Kulldorff 1997); Bernoulli: ``c`` cases among ``n``
persons, ``C`` of ``N`` in all, Kulldorff's Bernoulli LLR. Both come from the ``k log k`` table
(:mod:`.llr`), the sums the spatial and space-time kernels use.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .engine import null_loglik
from .llr import _llr, _poisson_llr

__all__ = ["temporal_windows_max", "temporal_window_table"]


@njit(cache=True, inline="always")
def _window_llr(klogk, c, t1, t2, ecum, pcum, bern, C, N, l0, mc, want_high, want_low):
    """LLR of the window ``t1..t2`` (extended-series indices) holding ``c`` cases, 0 when it is not
    of interest (high: more cases than expected and at least ``mc``; low: fewer)."""
    if bern:
        n = pcum[t2 + 1] - pcum[t1]
        if n == 0 or n == N:
            return 0.0
        lhs = np.float64(c) * np.float64(N)
        rhs = np.float64(C) * np.float64(n)
        if not ((want_high and lhs > rhs and c >= mc) or (want_low and lhs < rhs)):
            return 0.0
        return _llr(klogk, c, n, C, N, l0)
    mu = ecum[t2 + 1] - ecum[t1]
    if not (mu > 0.0 and mu < np.float64(C)):
        return 0.0
    cf = np.float64(c)
    if not ((want_high and cf > mu and c >= mc) or (want_low and cf < mu)):
        return 0.0
    return _poisson_llr(klogk, c, C, np.log(mu), np.log(np.float64(C) - mu))


@njit(cache=True, parallel=True, error_model="numpy")
def _temporal_max(cases, ecum, pcum, bern, klogk, C, N, l0, n_start, min_len, max_len, t_end_min, mc, want_high,
                  want_low, best, arg):
    """Largest window LLR of each replicate (column of ``cases``, (Text, R) counts on the extended
    series) and the window's code ``t1 * Text + t2`` (-1 when no window is of interest). Windows in
    the order t1 ascending, then length ascending; of equal LLRs the first is kept. One replicate
    per iteration of the parallel loop: no reduction across threads, the same bits for any thread
    count."""
    Text = cases.shape[0]
    R = cases.shape[1]
    for r in prange(R):
        cum = np.zeros(Text + 1, dtype=np.int64)
        for t in range(Text):
            cum[t + 1] = cum[t] + cases[t, r]
        m = 0.0
        a = np.int64(-1)
        for t1 in range(n_start):
            for ln in range(min_len, max_len + 1):
                t2 = t1 + ln - 1
                if t2 >= Text:
                    break
                if t2 < t_end_min:
                    continue
                c = cum[t2 + 1] - cum[t1]
                v = _window_llr(klogk, c, t1, t2, ecum, pcum, bern, C, N, l0, mc, want_high, want_low)
                if v > m:
                    m = v
                    a = t1 * Text + t2
        best[r] = m
        arg[r] = a


def _extend(x, n_extra: int):
    """The series ``x`` (T, ...) followed by its first ``n_extra`` rows (the closed loop)."""
    return x if n_extra == 0 else np.concatenate([x, x[:n_extra]], axis=0)


def _cum(x, dtype):
    out = np.zeros(len(x) + 1, dtype=dtype)
    np.cumsum(x, out=out[1:])
    return out


def temporal_windows_max(cases, expected, persons, klogk, n_cases, min_len, max_len, prospective, closed_loop,
                         min_cases, direction):
    """(R,) largest window LLR and (R,) its window ``(t1, t2)`` code for ``cases`` (T, R) per time
    unit and replicate.

    ``expected`` (T,) the Poisson expectations (``persons`` None) or ``persons`` (T,) the
    Bernoulli persons per unit; ``closed_loop``: the seasonal scan (windows wrap from the last unit
    to the first; ``t2 >= T`` means unit ``t2 - T``); ``prospective``: windows that end on the last
    unit only. The code is ``t1 * Text + t2`` on the extended series of ``Text = T + max_len - 1``
    units (closed loop) or ``T``."""
    cases = np.asarray(cases)
    T = cases.shape[0]
    extra = max_len - 1 if closed_loop else 0
    ext = np.ascontiguousarray(_extend(cases, extra), dtype=np.int32)
    bern = persons is not None
    if bern:
        pcum = _cum(_extend(np.asarray(persons, dtype=np.int64), extra), np.int64)
        N = int(pcum[-1] if not closed_loop else np.sum(persons))
        ecum = np.zeros(1)
        l0 = null_loglik(klogk, n_cases, N)
    else:
        ecum = _cum(_extend(np.asarray(expected, dtype=np.float64), extra), np.float64)
        pcum = np.zeros(1, dtype=np.int64)
        N, l0 = int(n_cases), 0.0
    R = ext.shape[1]
    best = np.empty(R, dtype=np.float64)
    arg = np.empty(R, dtype=np.int64)
    _temporal_max(ext, ecum, pcum, bern, klogk, np.int64(n_cases), np.int64(N), l0, np.int64(T), np.int64(min_len),
                  np.int64(max_len), np.int64(T - 1 if prospective else 0), np.int64(min_cases),
                  direction in ("high", "both"), direction in ("low", "both"), best, arg)
    return best, arg



@njit(cache=True, error_model="numpy")
def _window_table(cases, ecum, pcum, bern, klogk, C, N, l0, min_len, max_len, mc, want_high, want_low, val):
    """``val[t2, t2 - t1]``: the LLR of every window of the observed series (0 when not of interest),
    from the same :func:`_window_llr` as the replicates' maxima."""
    T = cases.shape[0]
    cum = np.zeros(T + 1, dtype=np.int64)
    for t in range(T):
        cum[t + 1] = cum[t] + cases[t]
    for t2 in range(T):
        for ln in range(min_len, min(max_len, t2 + 1) + 1):
            t1 = t2 - ln + 1
            val[t2, ln - 1] = _window_llr(klogk, cum[t2 + 1] - cum[t1], t1, t2, ecum, pcum, bern, C, N, l0, mc,
                                          want_high, want_low)


def temporal_window_table(cases, expected, persons, klogk, n_cases, min_len, max_len, min_cases, direction):
    """(T, max_len) LLR of every window ``t1..t2`` of the observed ``cases`` (T,) of a linear
    (not closed-loop) series at ``[t2, t2 - t1]`` (see :func:`temporal_windows_max`)."""
    cases = np.ascontiguousarray(cases, dtype=np.int64)
    T = len(cases)
    bern = persons is not None
    if bern:
        pcum = _cum(np.asarray(persons, dtype=np.int64), np.int64)
        N = int(pcum[-1])
        ecum = np.zeros(1)
        l0 = null_loglik(klogk, n_cases, N)
    else:
        ecum = _cum(np.asarray(expected, dtype=np.float64), np.float64)
        pcum = np.zeros(1, dtype=np.int64)
        N, l0 = int(n_cases), 0.0
    val = np.zeros((T, max_len), dtype=np.float64)
    _window_table(cases, ecum, pcum, bern, klogk, np.int64(n_cases), np.int64(N), l0, np.int64(min_len),
                  np.int64(max_len), np.int64(min_cases), direction in ("high", "both"), direction in ("low", "both"),
                  val)
    return val
