"""Label draws and log-sum-exps over the rows of a chunk's log densities (CPU, Numba).

Given a chunk's (c, k) log densities d_ij (:mod:`.cpu_features`), each row's log-sum-exp is
the point's log-likelihood, and its label z_i is drawn by the inverse CDF from a uniform u_i
given by the caller (the first j with cumsum_j exp(d_ij - max) > u_i * total), so every
engine draws the same labels from the same uniforms.

Pruned draw (the default of :class:`.cpu.CpuEngine`).  A component whose log density at x_i
is more than T = log k + log 1e15 nats (40.1 for k = 256) below the point's best carries less
than 1e-15 of the point's probability in total (:func:`prune_margin` has the bound), so the
draw skips them: a vectorised pass per row finds the maximum, a bit mask per 64 components
marks the few within T of it, and the exponentials and the inverse-CDF scan run over those
only.  Labels equal the exact draw's for the same uniforms unless a uniform lies within 1e-15
of a CDF boundary; the log-likelihood differs by less than 1e-15 per point
(``tests/test_mixture_prune.py``).  The densities themselves are still all computed by the
GEMM: cheap *a priori* bounds that would let whole columns be skipped before it (per point
c_j - lambda_min(P_j) ||x_i - mu_j||^2 / 2; per block of points grouped by their previous
label; the top eigen-directions of P_j) keep almost every pair on fitted chains, because the
fitted covariances are strongly anisotropic and the empty components (prior draws) are broad.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._fastmath import count_trailing_zeros, exp_fast, exp_like, max_num

__all__ = ["prune_margin", "PRUNE_TOL", "FASTMATH"]

#: Numba fast-math flags of the vectorised row loops: reassociation lets LLVM vectorise the
#: sums of exponentials (packed exp_fast); no flag that assumes away inf/NaN is used (log
#: weights may be -inf)
FASTMATH = {"reassoc", "contract", "arcp", "nsz"}
_FM = FASTMATH


@njit(cache=True)
def _row_max(row):
    """max_j row[j], 4 or 8 lanes at a time (``llvm.maxnum``; the rows hold no NaN)."""
    m = row[0]
    for j in range(1, row.shape[0]):
        m = max_num(m, row[j])
    return m


@njit(cache=True, fastmath=_FM)
def _row_exp_sum(row, m, buf):
    """buf[j] = exp(row[j] - m) in the row's precision; returns sum_j buf[j] accumulated in
    float64 (vectorised)."""
    s = 0.0
    for j in range(row.shape[0]):
        e = exp_like(row[j] - m)
        buf[j] = e
        s += e
    return s

@njit(cache=True, inline="always")
def _inverse_cdf(vals, cnt, target):
    """(t, mass before t, mass up to and including t) for the first t whose running sum of
    ``vals[:cnt]`` exceeds ``target``; if rounding leaves the sum at or below it, the last t
    with positive mass."""
    acc = 0.0
    prev = 0.0
    last = 0
    for t in range(cnt):
        e = vals[t]
        if e > 0.0:
            last = t
        prev = acc
        acc += e
        if acc > target:
            return t, prev, acc
    return last, prev, acc


@njit(cache=True, nogil=True)
def _sample_rows(D, u, z, loglik):
    """Per row: log-sum-exp of D[i], and z_i = first j with cumsum_j exp(D_ij - max) > u_i * total.

    D is scratch: its rows are overwritten with exp(D_ij - max) (no buffer per row).
    Components with D = -inf have probability 0 and are never chosen; if rounding
    leaves the cumulative sum at or below the target, the last component with
    positive probability is returned.
    """
    c, k = D.shape
    for i in range(c):
        row = D[i]
        m = _row_max(row)
        s = _row_exp_sum(row, m, row)
        loglik[i] = m + math.log(s)
        z[i] = _inverse_cdf(row, k, u[i] * s)[0]


#: relative probability mass per point that the pruned label draw may leave out (see
#: :func:`prune_margin`); far below the float64 rounding of the log-sum-exp itself
PRUNE_TOL = 1e-15


def prune_margin(k: int, tol: float = PRUNE_TOL) -> float:
    """The margin T (nats) of the pruned label draw: components with d_ij < max_j d_ij - T are skipped.

    Bound: every skipped component has exp(d_ij - m_i) < e^{-T} with m_i = max_j d_ij, and the
    total sum_j exp(d_ij - m_i) is at least 1 (the maximum's own term), so the skipped mass is
    below k e^{-T} of the total; T = log(k) + log(1/tol) makes that <= tol (40.1 for k = 256,
    tol = 1e-15).  Treating the skipped components as probability 0 changes the log-likelihood
    of the point by less than tol (absolute, = relative error of the likelihood) and moves
    every CDF boundary by less than tol: a label can only differ from the exact draw's when the
    uniform u_i lies within tol of a boundary.
    """
    return math.log(max(int(k), 1)) + math.log(1.0 / tol)


@njit(cache=True, inline="always")
def _kept_indices(row, m, thr, idx, vals):
    """The j with row[j] >= thr, ascending, into ``idx``, and row[j] - m into ``vals``; returns their
    count.  A bit mask per 64 components from one vectorised compare per lane, its set bits visited
    lowest first (``tzcnt``): a compare and a branch per component would be mostly
    mispredicted."""
    k = row.shape[0]
    cnt = 0
    for w in range((k + 63) // 64):
        lo = w * 64
        hi = min(k, lo + 64)
        bits = np.uint64(0)
        for j in range(lo, hi):
            bits |= np.uint64(1 if row[j] >= thr else 0) << np.uint64(j - lo)
        while bits != np.uint64(0):
            j = lo + np.int64(count_trailing_zeros(bits))
            idx[cnt] = j
            vals[cnt] = row[j] - m
            cnt += 1
            bits &= bits - np.uint64(1)
    return cnt


@njit(cache=True, inline="always", fastmath=_FM)
def _kept_exp(row, m, thr, idx, vals):
    """The components j with row[j] >= thr, ascending (:func:`_kept_indices`), into ``idx``, and
    exp(row[j] - m) (float64, vectorised) into ``vals``; returns (count, sum of the exponentials)."""
    cnt = _kept_indices(row, m, thr, idx, vals)
    s = 0.0
    for t in range(cnt):
        e = exp_fast(vals[t])
        vals[t] = e
        s += e
    return cnt, s


@njit(cache=True, inline="always", fastmath=_FM)
def _draw_row(row, u, T, idx, vals):
    """The pruned draw of one row of log densities: (label, log-sum-exp, components kept);
    ``idx`` and ``vals`` are scratch of length k."""
    m = _row_max(row)
    if m == -np.inf:  # no component with positive probability (cannot happen with finite weights)
        return 0, -np.inf, 0
    cnt, s = _kept_exp(row, m, m - T, idx, vals)
    return idx[_inverse_cdf(vals, cnt, u * s)[0]], m + math.log(s), cnt


@njit(cache=True, nogil=True, fastmath=_FM)
def _sample_rows_pruned(D, u, z, loglik, T, kept):
    """:func:`_sample_rows` with the components more than T nats below the row's maximum
    skipped (probability 0; bound in :func:`prune_margin`).

    Per row: the maximum m (vectorised, ``llvm.maxnum``); then, 64 components at a time, a
    bit mask of the ones with D_ij >= m - T (one vectorised compare per lane) whose set bits
    are visited lowest first (``tzcnt``), so the kept indices come out in ascending order --
    the inverse-CDF scan visits them in the exact draw's order -- and the components skipped
    cost one compare each; exp (in float64, vectorised over the gathered values), sum and
    scan run over the kept ones only.  ``kept[i]`` receives the number kept for row i.
    D is not modified.  Two passes (maximum, then mask) rather than one with a running
    maximum and a branch-free compaction: that one's dependency chains do not vectorise.
    """
    c, k = D.shape
    idx = np.empty(k, dtype=np.int64)
    vals = np.empty(k, dtype=np.float64)
    for i in range(c):
        z[i], loglik[i], kept[i] = _draw_row(D[i], u[i], T, idx, vals)


@njit(cache=True, nogil=True)
def _normalise_rows(D, loglik):
    """In place: D[i] <- exp(D[i] - logsumexp(D[i])) (responsibilities); loglik[i] = logsumexp."""
    c, k = D.shape
    for i in range(c):
        row = D[i]
        m = _row_max(row)
        s = _row_exp_sum(row, m, row)
        inv = 1.0 / s
        for j in range(k):
            row[j] *= inv
        loglik[i] = m + math.log(s)


@njit(cache=True, nogil=True)
def _logsumexp_rows(D, out):
    """out[i] = logsumexp(D[i]); D is left as it is."""
    c, k = D.shape
    for i in range(c):
        row = D[i]
        buf = np.empty_like(row)
        m = _row_max(row)
        out[i] = m + math.log(_row_exp_sum(row, m, buf))
