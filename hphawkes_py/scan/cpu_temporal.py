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


# ---------------------------------------------------------------------------- spatial variation in temporal trends
#: status of a fitted log-linear trend (SaTScan's AbstractTimeTrend)
TREND_CONVERGED, TREND_UNDEFINED, TREND_NEG_INF, TREND_POS_INF, TREND_NOT_CONVERGED = 0, 1, 2, 3, 4
#: Newton-Raphson stops when beta moves less than this (SaTScan's default time trend convergence)
TREND_CONVERGENCE = 1e-5


@njit(cache=True, error_model="numpy")
def _sums(m, beta):
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    for t in range(m.shape[0]):
        w = m[t] * np.exp(beta * t)
        s0 += w
        s1 += t * w
        s2 += t * t * w
    return s0, s1, s2


@njit(cache=True, error_model="numpy")
def fit_trend(c, m, convergence=TREND_CONVERGENCE):
    """(status, alpha, beta) of the log-linear trend ``E c_t = m_t exp(alpha + beta t)`` by maximum
    likelihood, as SaTScan's ``LinearTimeTrend::CalculateAndSet``: undefined with fewer than 2 cases,
    -inf (+inf) when every case is in the first (last) unit, else Newton-Raphson on the profile score
    ``F(beta) = sum t c_t sum m_t e^(beta t) - C sum t m_t e^(beta t)`` from a least-squares start,
    until beta moves less than ``convergence``."""
    T = c.shape[0]
    C = 0.0
    stc = 0.0
    for t in range(T):
        C += c[t]
        stc += t * c[t]
    if C < 2:
        return TREND_UNDEFINED, 0.0, 0.0
    if c[0] == C:
        return TREND_NEG_INF, 0.0, 0.0
    if c[T - 1] == C:
        return TREND_POS_INF, 0.0, 0.0
    scm = 0.0
    stcm = 0.0
    st = 0.0
    st2 = 0.0
    for t in range(T):
        scm += c[t] - m[t]
        stcm += t * (c[t] - m[t])
        st += t
        st2 += t * t
    beta = ((T * stcm - scm * st) / (T * st2 - st * st)) / (C / T)
    good = False
    for _ in range(1000):  # a start where the Newton steps go the right way
        s0, s1, s2 = _sums(m, beta)
        if stc * s1 - C * s2 < -1:
            good = True
            break
        beta += 0.1
    if not good:
        return TREND_NOT_CONVERGED, 0.0, 0.0
    limit = np.log(np.finfo(np.float64).max)
    for _ in range(1000000):
        s0, s1, s2 = _sums(m, beta)
        f = stc * s0 - C * s1
        s = stc * s1 - C * s2
        new = beta - f / s if s != 0 else beta + 0.1
        if abs(new - beta) < convergence:
            s0, s1, s2 = _sums(m, new)
            return TREND_CONVERGED, np.log(C / s0), new
        beta = new if new * T < limit else beta + 0.1
    return TREND_NOT_CONVERGED, 0.0, 0.0


@njit(cache=True, error_model="numpy")
def _trend_loglik(c, m, alpha, beta):
    out1 = 0.0
    out2 = 0.0
    for t in range(c.shape[0]):
        if m[t] != 0:
            out1 += c[t] * (np.log(m[t]) + alpha + beta * t)
            out2 += m[t] * np.exp(alpha + beta * t)
    return out1 - out2


@njit(cache=True, error_model="numpy")
def _spatial_loglik(n, u, N, U):
    if n != N and n != 0:
        return n * np.log(n / u) + (N - n) * np.log((N - n) / (U - u))
    if n == 0:
        return (N - n) * np.log((N - n) / (U - u))
    return n * np.log(n / u)


@njit(cache=True, error_model="numpy")
def _side(c, m, st, alpha, beta, beta_g, n, u, N, U):
    """One side's (inside or outside) log likelihood ratio of its own trend against the global one."""
    if st == TREND_NEG_INF or st == TREND_POS_INF:
        return _spatial_loglik(n, u, N, U)
    s0, _, _ = _sums(m, beta_g)
    alpha_g = np.log(n / s0) if n != 0 else 0.0
    return _trend_loglik(c, m, alpha, beta) - _trend_loglik(c, m, alpha_g, beta_g)


@njit(cache=True, error_model="numpy")
def svtt_llr(c_in, m_in, c_all, m_all, beta_g, want_high, want_low, out):
    """Kulldorff's SVTT log likelihood ratio of a window (SaTScan's ``CalcSVTTLogLikelihood``):
    ``out[:]`` = (LLR, status in, beta in, status out, beta out). The inside trend must differ from
    the global trend ``beta_g`` in the direction asked for (high: steeper; low: flatter); the LLR is
    the inside and outside log likelihoods with their own trends against the global trend."""
    T = c_in.shape[0]
    c_out = c_all - c_in
    m_out = m_all - m_in
    n = c_in.sum()
    N = c_all.sum()
    u = m_in.sum()
    U = m_all.sum()
    out[0] = 0.0
    out[1] = TREND_UNDEFINED
    out[2] = 0.0
    out[3] = TREND_UNDEFINED
    out[4] = 0.0
    if n <= 1 or N - n <= 1:
        return
    st_i, a_i, b_i = fit_trend(c_in, m_in)
    out[1] = st_i
    out[2] = b_i
    if st_i == TREND_UNDEFINED or st_i == TREND_NOT_CONVERGED:
        return
    if st_i == TREND_POS_INF:
        up, down = True, False
    elif st_i == TREND_NEG_INF:
        up, down = False, True
    else:
        tol = 1e-10  # SaTScan's DBL_CMP_TOLERANCE: trends this close are the same
        up = b_i - beta_g > tol
        down = beta_g - b_i > tol
    if not ((want_high and up) or (want_low and down)):
        return
    st_o, a_o, b_o = fit_trend(c_out, m_out)
    out[3] = st_o
    out[4] = b_o
    if st_o == TREND_UNDEFINED or st_o == TREND_NOT_CONVERGED:
        return
    out[0] = (_side(c_in, m_in, st_i, a_i, b_i, beta_g, n, u, N, U)
              + _side(c_out, m_out, st_o, a_o, b_o, beta_g, N - n, U - u, N, U))


@njit(cache=True, parallel=True, error_model="numpy")
def _svtt_scan(offsets, neighbors, boundary, cases, measure, beta_g, want_high, want_low, best, arg):
    """Best SVTT window LLR of each replicate (``cases`` (L, T, R), ``beta_g`` (R,) its global trend)
    and its window entry: one replicate per iteration of the parallel loop (same bits for any
    thread count); windows in centre order, then growing; of equal LLRs the first is kept."""
    L, T, R = cases.shape
    for r in prange(R):
        c_all = np.zeros(T)
        m_all = np.zeros(T)
        for l in range(L):
            for t in range(T):
                c_all[t] += cases[l, t, r]
                m_all[t] += measure[l, t]
        c_in = np.zeros(T)
        m_in = np.zeros(T)
        out = np.zeros(5)
        b = 0.0
        a = np.int64(-1)
        for i in range(offsets.shape[0] - 1):
            c_in[:] = 0.0
            m_in[:] = 0.0
            for j in range(offsets[i], offsets[i + 1]):
                z = neighbors[j]
                for t in range(T):
                    c_in[t] += cases[z, t, r]
                    m_in[t] += measure[z, t]
                if boundary[j] == 0:
                    continue
                svtt_llr(c_in, m_in, c_all, m_all, beta_g[r], want_high, want_low, out)
                if out[0] > b:
                    b = out[0]
                    a = j
        best[r] = b
        arg[r] = a


@njit(cache=True, error_model="numpy")
def _window_constants(ecum, pcum, bern, klogk, C, N, l0, Text, n_start, min_len, max_len, t_end_min):
    """The windows in the order of :func:`_temporal_max` and their constants for the CUDA kernel
    (``scan_temporal.cu``), computed here so that both engines use the same logarithms:
    Poisson ``(mu, log mu, log(C - mu))``, Bernoulli ``(C n, -(klogk[n] + klogk[N-n]) - l0)`` with
    ``n``; ``e = 0`` marks a window with no LLR (mu outside (0, C); no persons or all of them)."""
    K = 0
    for t1 in range(n_start):
        for ln in range(min_len, max_len + 1):
            t2 = t1 + ln - 1
            if t2 >= Text:
                break
            if t2 >= t_end_min:
                K += 1
    wt1 = np.empty(K, dtype=np.int64)
    wt2 = np.empty(K, dtype=np.int64)
    wn = np.zeros(K, dtype=np.int64)
    we = np.zeros(K)
    wa = np.zeros(K)
    wb = np.zeros(K)
    k = 0
    for t1 in range(n_start):
        for ln in range(min_len, max_len + 1):
            t2 = t1 + ln - 1
            if t2 >= Text:
                break
            if t2 < t_end_min:
                continue
            wt1[k] = t1
            wt2[k] = t2
            if bern:
                n = pcum[t2 + 1] - pcum[t1]
                wn[k] = n
                if n != 0 and n != N:
                    we[k] = np.float64(C) * np.float64(n)
                    wa[k] = -(klogk[n] + klogk[N - n]) - l0
            else:
                mu = ecum[t2 + 1] - ecum[t1]
                if mu > 0.0 and mu < np.float64(C):
                    we[k] = mu
                    wa[k] = np.log(mu)
                    wb[k] = np.log(np.float64(C) - mu)
            k += 1
    return wt1, wt2, wn, we, wa, wb


def window_constants(T, expected, persons, klogk, n_cases, min_len, max_len, prospective, closed_loop):
    """``(wt1, wt2, wn, we, wa, wb)`` of every window on the extended series (see
    :func:`_window_constants`), and ``Text``."""
    extra = max_len - 1 if closed_loop else 0
    Text = T + extra
    bern = persons is not None
    if bern:
        pcum = _cum(_extend(np.asarray(persons, dtype=np.int64), extra), np.int64)
        N = int(np.sum(persons))
        ecum = np.zeros(1)
        l0 = null_loglik(klogk, n_cases, N)
    else:
        ecum = _cum(_extend(np.asarray(expected, dtype=np.float64), extra), np.float64)
        pcum = np.zeros(1, dtype=np.int64)
        N, l0 = int(n_cases), 0.0
    out = _window_constants(ecum, pcum, bern, klogk, np.int64(n_cases), np.int64(N), l0, np.int64(Text), np.int64(T),
                            np.int64(min_len), np.int64(max_len), np.int64(T - 1 if prospective else 0))
    return out, Text, N
