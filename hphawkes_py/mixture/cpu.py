"""CPU engine of the truncated Dirichlet-process mixture (Numba + BLAS).

The hot step is the n x k matrix of weighted log component densities

    d_ij = log pi_j - p/2 log(2 pi) - 1/2 log|Sigma_j| - 1/2 (x_i - mu_j)' P_j (x_i - mu_j),

with P_j = Sigma_j^{-1}.  Expanding the quadratic form, d_ij is linear in the
*quadratic features* of x_i,

    phi(x) = [1, x_1, ..., x_p, x_a x_b (a <= b)]          (F = 1 + p + p(p+1)/2 values),

so for a chunk of points all k log densities are ONE matrix product
``Phi_chunk (c x F) @ W (F x k)`` (W holds the per-component coefficients).  This
is 2F = (p + 1)(p + 2) flops per (point, component) -- 240 for p = 14 -- done by
BLAS at near peak speed, instead of ~p^2 scalar operations of a triangular solve
that cannot be vectorised across the short p loop.  (benchmarks/bench_mixture.py
compares it with a fused Numba triangular-solve loop.)  The same features give
the component sufficient statistics: counts, sums and second moments are the
columns of ``onehot(z)' Phi`` (Gibbs) or ``R' Phi`` (Bayesian EM, R the
responsibilities), again one product per chunk.

Pruned label draw (default; ``CpuEngine(prune=False)`` is the exact draw).  A component whose
log density at x_i is more than T = log k + log 1e15 nats (40.1 for k = 256) below the
point's best carries less than 1e-15 of the point's probability in total
(:func:`prune_margin` has the bound), so the draw skips them: a vectorised pass per row finds
the maximum, a bit mask per 64 components marks the few within T of it (about 10-12 % of them
on a fitted n = 1e5, k = 256 chain), and the exponentials and the inverse-CDF scan run over
those only.
Labels equal the exact draw's for the same uniforms unless a uniform lies within 1e-15 of a
CDF boundary; the log-likelihood differs by less than 1e-15 per point (tests/test_mixture_prune.py).
The densities themselves are still all computed by the GEMM: cheap *a priori* bounds that
would let whole columns be skipped before it were measured on that chain and keep almost
every pair -- c_j - lambda_min(P_j) ||x_i - mu_j||^2 / 2 per point: 99.9 %; a per-block
bound (points grouped by their previous label, the block's ellipsoid in its component's
metric, spectral norms of U_j L_g): 99.6-99.9 %; the top-s eigen-directions of P_j plus
lambda_min for the rest: 68/46/32/24 % for s = 1..4 per point but at (s + 1) p of the F
multiply-adds per pair, so no saving -- because the fitted covariances are strongly
anisotropic and the empty components (prior draws) are broad.

Per chunk (256 points, so its densities stay in L2 between the product and the draw): the
features are built feature-major (every loop over points, SIMD), BLAS reads their transpose,
the labels are drawn, and the label statistics (counts, sums, full second moments; a row of
an outer product is p SIMD multiply-adds) are added for the chunk's points at once.  The
statistics of fixed blocks of chunks are kept apart and summed in block order, so the results
are bit-identical whatever the number of threads.  One core, n = 1e5, p = 14, k = 256,
float64: ~175 ms of GEMM (6.1e9 flops, 80 % of this core's FMA peak), 2 ms features, 24 ms
draw, 7 ms statistics per sweep; float32 halves the GEMM, and its labels are certified equal to
the float64 draw's (:func:`_sample_rows_certified`).

Rounding: in float64 the expanded form loses about |x|^2 ||P|| eps in absolute
terms; on standardised data (|x| of order 1-10) that is far below 1e-10 of the
log densities the sampler uses.  Everything is processed in chunks of points so
memory is O(chunk x k) whatever n is.
"""
from __future__ import annotations

import itertools
import math
import threading
import types

import numpy as np
from numba import njit, prange

from .._fastmath import count_trailing_zeros, exp_fast, exp_like, max_num
from .engine import Engine, _single_threaded_blas, build_coefficients, n_features

__all__ = ["CpuEngine", "features", "prune_margin", "PRUNE_TOL"]


@njit(cache=True, inline="always")
def _row_features(x, phi):
    """phi = [1, x, x_a x_b for a <= b (row-major upper triangle)]: the quadratic features of one row."""
    p = x.shape[0]
    phi[0] = 1.0
    for a in range(p):
        phi[1 + a] = x[a]
    f = 1 + p
    for a in range(p):
        xa = x[a]
        for b in range(a, p):
            phi[f] = xa * x[b]
            f += 1


def _features_impl(X, out):
    """out[i] = [1, x, x_a x_b for a <= b (row-major upper triangle)]."""
    for i in prange(X.shape[0]):
        _row_features(X[i], out[i])


@njit(cache=True, nogil=True)
def _features_t(X, out_t):
    """out_t[:, i] = phi(x_i): the features of a chunk stored feature-major (F x c).

    Every loop runs over the points, contiguous in memory, so each feature row is one
    SIMD product of two earlier rows (about 7x faster than writing the short, ragged
    per-point rows of :func:`features`); the GEMM reads the transpose without a copy.
    """
    c, p = X.shape
    for i in range(c):
        out_t[0, i] = 1.0
    for a in range(p):
        for i in range(c):
            out_t[1 + a, i] = X[i, a]
    f = 1 + p
    for a in range(p):
        for b in range(a, p):
            ra = out_t[1 + a]
            rb = out_t[1 + b]
            ro = out_t[f]
            for i in range(c):
                ro[i] = ra[i] * rb[i]
            f += 1


def features(X: np.ndarray) -> np.ndarray:
    """Quadratic features of the rows of ``X`` (n x F), see the module docstring."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    out = np.empty((X.shape[0], n_features(X.shape[1])))
    _features(X, out)
    return out


# Reassociation lets LLVM vectorise the sums of exponentials (packed exp_fast);
# no flag that assumes away inf/NaN is used (log weights may be -inf).
_FM = {"reassoc", "contract", "arcp", "nsz"}




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


def _sample_rows_impl(D, u, z, loglik):
    """Per row: log-sum-exp of D[i], and z_i = first j with cumsum_j exp(D_ij - max) > u_i * total.

    D is scratch: its rows are overwritten with exp(D_ij - max) (no buffer per row).
    Components with D = -inf have probability 0 and are never chosen; if rounding
    leaves the cumulative sum at or below the target, the last component with
    positive probability is returned.
    """
    c, k = D.shape
    for i in prange(c):
        row = D[i]
        m = _row_max(row)
        s = _row_exp_sum(row, m, row)
        loglik[i] = m + math.log(s)
        target = u[i] * s
        acc = 0.0
        zi = -1
        last = 0
        for j in range(k):
            e = row[j]
            if e > 0.0:
                last = j
            acc += e
            if acc > target:
                zi = j
                break
        if zi < 0:
            zi = last
        z[i] = zi


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
    lowest first (``tzcnt``): a compare and a branch per component cost ~1 ns each, mostly
    mispredictions."""
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
    """:func:`_sample_rows_impl` with the components more than T nats below the row's maximum
    skipped (probability 0; bound in :func:`prune_margin`).

    Per row: the maximum m (vectorised, ``llvm.maxnum``); then, 64 components at a time, a
    bit mask of the ones with D_ij >= m - T (one vectorised compare per lane) whose set bits
    are visited lowest first (``tzcnt``), so the kept indices come out in ascending order --
    the inverse-CDF scan visits them in the exact draw's order -- and the components skipped
    cost one compare each; exp (in float64, vectorised over the gathered values), sum and
    scan run over the kept ones only.  ``kept[i]`` receives the number kept for row i.
    D is not modified.  (A fitted n = 1e5, k = 256 chain keeps ~12 % of the components;
    per 1e5 rows on one core: 24 ms, against 97 ms for a single pass with a running maximum
    and a branch-free compaction, whose dependency chains did not vectorise.)
    """
    c, k = D.shape
    idx = np.empty(k, dtype=np.int64)
    vals = np.empty(k, dtype=np.float64)
    for i in range(c):
        z[i], loglik[i], kept[i] = _draw_row(D[i], u[i], T, idx, vals)


#: unit roundoff of float32
_U32 = 2.0 ** -24


def float32_error_factor(F: int) -> float:
    """eps with |d32_ij - d_ij| <= eps * sum_f |phi_if| |W_fj| for the float32 log densities.

    d32 is the float32 product of the features phi (f >= 1) of the float32 data, each one
    rounding of a product of two rounded values (relative error <= 3u), with the rounded
    coefficients W (<= u), summed in any order, with or without FMA (<= gamma_{F} = F u /
    (1 - F u)); u = 2^-24.  (F + 8) u / (1 - (F + 8) u) covers all of these with room to spare.
    """
    a = (int(F) + 8) * _U32
    return a / (1.0 - a)


@njit(cache=True, nogil=True)
def _error_norms(W, p, a, b):
    """The loops of :func:`float32_error_norms` (k = 256, p = 14: ~0.1 ms; 0.66 ms in NumPy)."""
    k = W.shape[1]
    Q = np.empty((p, p))
    v = np.empty(p)
    w = np.empty(p)
    for j in range(k):
        s = 0.0
        for r in range(p):
            s += W[1 + r, j] * W[1 + r, j]
        a[j] = math.sqrt(s)
        f = 1 + p
        for r in range(p):
            Q[r, r] = abs(W[f, j])
            f += 1
            for c in range(r + 1, p):
                Q[r, c] = Q[c, r] = 0.5 * abs(W[f, j])
                f += 1
        for r in range(p):
            v[r] = 1.0
        for _ in range(8):  # power steps towards the Perron vector
            big = 0.0
            for r in range(p):
                t = 0.0
                for c in range(p):
                    t += Q[r, c] * v[c]
                w[r] = t
                big = max(big, t)
            big = max(big, 1e-300)
            for r in range(p):
                v[r] = w[r] / big
        bound = 0.0
        for r in range(p):
            v[r] += 1e-6  # strictly positive: the bound holds for any positive v
        for r in range(p):
            t = 0.0
            for c in range(p):
                t += Q[r, c] * v[c]
            bound = max(bound, t / v[r])
        b[j] = bound * (1.0 + 1e-12)  # the float64 rounding of the bound itself, outwards


def float32_error_norms(W: np.ndarray, p: int):
    """(a, b) (k,) with sum_{f >= 1} |phi_f(x)| |W_fj| <= a_j ||x|| + b_j ||x||^2 for every x.

    The non-constant features are x_r (coefficients ``W[1:1 + p]``) and x_r x_c, r <= c
    (``W[1 + p:]``).  Cauchy-Schwarz on the linear part gives a_j = ||W[1:1 + p, j]||; the
    quadratic part is |x|' Q_j |x| with Q_j symmetric and non-negative (Q_rr = |W_rr|,
    Q_rc = |W_rc| / 2), at most rho(Q_j) ||x||^2, and b_j is the Collatz-Wielandt upper bound
    rho(Q) <= max_r (Q v)_r / v_r for a positive v, here Q's Perron vector after a few power
    steps (within a few per cent of rho; the row sums, v = 1, are ~35 % above it on fitted
    chains).  Per component, unlike per-feature maxima over all components, so a few
    concentrated components do not widen every row's bound.
    """
    W = np.ascontiguousarray(W, dtype=np.float64)
    k = W.shape[1]
    a = np.empty(k)
    b = np.empty(k)
    _error_norms(W, int(p), a, b)
    return a, b


#: for 0 <= x <= 0.1, e^x <= 1 + x + x^2/2 + (x^3/6) e^{0.1} (Lagrange remainder), and
#: e^{0.1} / 6 = 0.18420...; 0.1843 rounds it upwards
_CUBIC_UP = 0.1843


@njit(cache=True, inline="always")
def _exp_upper(x):
    """An upper bound on e^x for x >= 0 (but for the last bit's rounding), without a call to exp
    when x <= 0.1 (a cubic, within 0.018 x^3 of e^x, relative)."""
    if x <= 0.1:
        return 1.0 + x * (1.0 + x * (0.5 + x * _CUBIC_UP))
    return math.exp(x) * (1.0 + 1e-15)


@njit(cache=True, inline="always", fastmath=_FM)
def _candidate_dots(phi, Wt, cand, nc, dc):
    """dc[t] = phi . Wt[cand[t]] for t < nc, four candidates per pass over phi: four
    independent accumulators (one dot product at a time is bound by the latency of its single
    chain of vector adds: 735 -> 467 ns for 31 candidates, F = 120)."""
    F = phi.shape[0]
    t = 0
    while t + 4 <= nc:
        w0 = Wt[cand[t]]
        w1 = Wt[cand[t + 1]]
        w2 = Wt[cand[t + 2]]
        w3 = Wt[cand[t + 3]]
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        a3 = 0.0
        for f in range(F):
            q = phi[f]
            a0 += q * w0[f]
            a1 += q * w1[f]
            a2 += q * w2[f]
            a3 += q * w3[f]
        dc[t] = a0
        dc[t + 1] = a1
        dc[t + 2] = a2
        dc[t + 3] = a3
        t += 4
    while t < nc:
        wr = Wt[cand[t]]
        a = 0.0
        for f in range(F):
            a += phi[f] * wr[f]
        dc[t] = a
        t += 1


@njit(cache=True, inline="always")
def _certified(prev, acc, s, u, E):
    """The certificate of :func:`_sample_rows_certified`: whether u lies strictly between the
    bounds on the exact CDF before and at the chosen component (mass ``prev`` before it, ``acc``
    up to and including it, ``s`` in all) when every log density is within E of its float32
    value; e^{+-2E} and the float64 sums rounded outwards by a 1e-12 relative slack."""
    slack = 1e-12
    g = _exp_upper(2.0 * E) * (1.0 + slack)
    hi_prev = prev / (prev + (s - prev) / g)
    lo_this = acc / (acc + (s - acc) * g)
    return hi_prev * (1.0 + slack) < u and u * (1.0 + slack) < lo_this


@njit(cache=True, nogil=True, fastmath=_FM)
def _sample_rows_certified(D32, c0, ea, eb, eps, xnorm, u, X, Wt, z, loglik, T, kept, refined, E):
    """The float64 pruned draw, computed from float32 log densities and certified.

    ``D32`` (c, k) are the float32 products of the non-constant features, ``c0`` (k,) the
    float64 constants (log weight, normalisation; may be -inf).  The float32 error of d_ij is
    at most eps (a_j ||x_i|| + b_j ||x_i||^2) (:func:`float32_error_factor`,
    :func:`float32_error_norms`; ``ea``, ``eb`` = a, b); per row, E is its maximum over the
    components the draw keeps (written to ``E[i]``) and E_all over all of them.  Per row the
    draw of :func:`_sample_rows_pruned` runs on d~_j = D32_ij + c0_j; then, with A~ the mass up
    to the component before the chosen one, A~' the mass up to and including it and s~ the
    total, the exact (float64) cumulative probabilities satisfy, because every kept d is within
    E of d~ (the components that one draw keeps and the other leaves out carry less than
    ``PRUNE_TOL`` e^{2 E_all} of the mass, as for the float64 pruned draw itself),

        CDF_{z-1} <= A~ / (A~ + (s~ - A~) e^{-2E}),   CDF_z >= A~' / (A~' + (s~ - A~') e^{2E}),

    so if u_i lies strictly between the two (with 1e-12 relative slack for the float64 sums)
    the exact draw gives the same label.  Otherwise the row is *refined*: its k log densities
    are recomputed in float64 from the data row ``X[i]`` and ``Wt`` (k, F) = W' -- only for the
    components with d~_j >= max d~ - T - 2 E_all, the others cannot be kept -- and drawn by
    :func:`_sample_rows_pruned`.  Labels therefore equal
    the float64 engine's unless u_i is within ~1e-12 of a boundary; ``loglik[i]`` is the
    float32 value (within E_i of the float64 one) for certified rows and exact for refined
    ones.  ``refined[i]`` is 1 for refined rows.
    """
    k = D32.shape[1]
    F = Wt.shape[1]
    c = D32.shape[0]
    # separate allocations, not rows of one array: LLVM then knows they do not alias and
    # vectorises the conversion loop (one (3, k) scratch made the draw 1.4x slower)
    idx = np.empty(k, dtype=np.int64)
    cand = np.empty(k, dtype=np.int64)
    vals = np.empty(k, dtype=np.float64)
    drow = np.empty(k, dtype=np.float64)
    dc = np.empty(k, dtype=np.float64)
    phi = np.empty(F, dtype=np.float64)
    # the bound's own rounding and |phi(x32)| vs |phi(x)| (as in float32_error_factor), outwards
    eps = eps * (1.0 + 4.0 * 2.0 ** -24)
    amax = 0.0
    bmax = 0.0
    for j in range(k):
        amax = max(amax, ea[j])
        bmax = max(bmax, eb[j])
    for i in range(c):
        r32 = D32[i]
        for j in range(k):
            drow[j] = np.float64(r32[j]) + c0[j]
        m = _row_max(drow)  # a separate pass: fused with the conversion it did not vectorise (3x slower)
        xn = xnorm[i]
        xx = xn * xn
        e_all = eps * (amax * xn + bmax * xx) + 1e-10
        ok = m > -np.inf
        if ok:
            cnt, s = _kept_exp(drow, m, m - T, idx, vals)
            zt, prev, acc = _inverse_cdf(vals, cnt, u[i] * s)
            # first with E_all, which bounds the kept components too (no pass over them)
            E[i] = e_all
            ok = _certified(prev, acc, s, u[i], e_all)
            if not ok:  # the tighter bound over the kept components only, before refining
                e = 0.0
                for t in range(cnt):
                    j = idx[t]
                    e = max(e, ea[j] * xn + eb[j] * xx)
                E[i] = eps * e + 1e-10
                ok = _certified(prev, acc, s, u[i], E[i])
        if ok:
            z[i] = idx[zt]
            loglik[i] = m + math.log(s)
            kept[i] = cnt
            refined[i] = 0
        else:
            # exact float64 densities of this row, then the float64 pruned draw
            _row_features(X[i], phi)
            # only candidates can be kept by the float64 draw: d~_j < m~ - T - 2 E_all implies
            # d_j < max_j d_j - T (all d within E_all of d~)
            nc = _kept_indices(drow, 0.0, m - T - 2.0 * e_all, cand, vals)  # vals: scratch here
            # the pruned draw over the candidates' exact densities only (the others would be -inf:
            # never kept), the same kept components in the same order, so the same label and
            # log-likelihood
            _candidate_dots(phi, Wt, cand, nc, dc)
            zc, loglik[i], kept[i] = _draw_row(dc[:nc], u[i], T, idx, vals)
            z[i] = cand[zc] if kept[i] > 0 else 0  # 0 as the full row's draw when nothing has mass
            refined[i] = 1


@njit(cache=True, nogil=True)
def _certified_chunk(D32, c0, ea, eb, eps, xnorm, u, X, Wt, z, loglik, T, kept, refined, E, M):
    """One chunk of the certified float32 sweep after its GEMM, in one call (one dispatch
    instead of two per chunk): certified draw, label moments."""
    _sample_rows_certified(D32, c0, ea, eb, eps, xnorm, u, X, Wt, z, loglik, T, kept, refined, E)
    _add_moments(X, z, M)


@njit(cache=True, nogil=True)
def _pruned_chunk(D, u, X, z, loglik, T, kept, M):
    """One chunk of the pruned float64 sweep after its GEMM: draw and label moments."""
    _sample_rows_pruned(D, u, z, loglik, T, kept)
    _add_moments(X, z, M)


def _normalise_rows_impl(D, loglik):
    """In place: D[i] <- exp(D[i] - logsumexp(D[i])) (responsibilities); loglik[i] = logsumexp."""
    c, k = D.shape
    for i in prange(c):
        row = D[i]
        m = _row_max(row)
        s = _row_exp_sum(row, m, row)
        inv = 1.0 / s
        for j in range(k):
            row[j] *= inv
        loglik[i] = m + math.log(s)


def _logsumexp_rows_impl(D, out):
    c, k = D.shape
    for i in prange(c):
        row = D[i]
        buf = np.empty_like(row)
        m = _row_max(row)
        out[i] = m + math.log(_row_exp_sum(row, m, buf))


def moments_width(p: int) -> int:
    """Columns of a component's row of moments: count, sums and p rows of second moments, the
    vectors padded to a multiple of 4 entries (whole AVX2 vectors, no scalar remainder loops)."""
    P4 = -(-int(p) // 4) * 4
    return 1 + P4 + p * P4


@njit(cache=True, nogil=True, fastmath=_FM)
def _add_moments(X, z, M):
    """M[z_i] += [1, x_i, x_i x_i'] for every row (vectors zero-padded to P4 = 4 ceil(p / 4)
    entries, see :func:`moments_width`): counts, sums and the p rows of the full second-moment
    matrix per component; each row of the outer product is P4 / 4 vector multiply-adds, the upper
    triangle is taken afterwards by :func:`moments_to_stats`."""
    n, p = X.shape
    P4 = (M.shape[1] - 1) // (p + 1)
    xi = np.zeros(P4)
    for i in range(n):
        for a in range(p):
            xi[a] = X[i, a]
        mrow = M[z[i]]
        mrow[0] += 1.0
        for a in range(P4):
            mrow[1 + a] += xi[a]
        off = 1 + P4
        for a in range(p):
            xa = xi[a]
            for b in range(P4):
                mrow[off + b] += xa * xi[b]
            off += P4


@njit(cache=True, nogil=True)
def _clear_moments(M):
    """Zero one block of label moments (k, width), without the GIL: only the rows of components
    with a non-zero count, since :func:`_add_moments` writes no row without adding 1 to its
    count (a fitted chain leaves ~35-90 of 256 rows to clear: 16 blocks x 0.5 MB memset per
    sweep were ~2 % of the sweep's CPU time)."""
    for j in range(M.shape[0]):
        if M[j, 0] != 0.0:
            M[j, :] = 0.0


def moments_to_stats(M: np.ndarray, p: int) -> np.ndarray:
    """(k, :func:`moments_width`) moments of :func:`_add_moments` as the (k, F) feature sums of
    the engine interface (counts, sums, upper triangle of the second moments, row-major)."""
    P4 = (M.shape[1] - 1) // (p + 1)
    a, b = np.triu_indices(p)
    return np.concatenate([M[:, :1], M[:, 1:1 + p], M[:, 1 + P4:][:, a * P4 + b]], axis=1)


@njit(parallel=True, cache=True)
def _triangular_logdens(X, U, b, c0, out):
    """Reference fused formulation (benchmarks only): d_ij = c0_j - 1/2 ||U_j x_i - b_j||^2.

    Blocks of 64 points are transposed so the innermost loop runs over points
    (SIMD); the p x p triangular factor is applied row by row.
    """
    n, p = X.shape
    k = U.shape[0]
    B = 64
    nb = (n + B - 1) // B
    for blk in prange(nb):
        lo = blk * B
        hi = min(n, lo + B)
        m = hi - lo
        xt = np.empty((p, B))
        for a in range(p):
            for t in range(m):
                xt[a, t] = X[lo + t, a]
            for t in range(m, B):
                xt[a, t] = 0.0
        q = np.empty(B)
        tmp = np.empty(B)
        for j in range(k):
            for t in range(B):
                q[t] = 0.0
            for r in range(p):
                br = b[j, r]
                for t in range(B):
                    tmp[t] = -br
                for a in range(r + 1):
                    coef = U[j, r, a]
                    for t in range(B):
                        tmp[t] += coef * xt[a, t]
                for t in range(B):
                    q[t] += tmp[t] * tmp[t]
            for t in range(m):
                out[lo + t, j] = c0[j] - 0.5 * q[t]


def _variants(fn):
    """(parallel, serial) compilations of one kernel.

    The serial one is compiled from a copy of the function with its own
    ``__qualname__``: Numba's on-disk cache is keyed by qualified name and
    source line, not by the ``parallel`` flag, so sharing the name would make
    the two variants overwrite each other's cache entries.
    """
    ser = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__ + "_serial", fn.__defaults__, fn.__closure__)
    ser.__qualname__ = fn.__qualname__ + "_serial"
    ser.__doc__ = fn.__doc__
    return njit(parallel=True, cache=True)(fn), njit(cache=True, nogil=True)(ser)


# Parallel and serial compilations of each kernel: a parallel region costs tens of
# microseconds (much more on a loaded machine), so small problems run serially.
_features_par, _features_ser = _variants(_features_impl)
_sample_rows_par, _sample_rows_ser = _variants(_sample_rows_impl)
_normalise_rows_par, _normalise_rows_ser = _variants(_normalise_rows_impl)
_logsumexp_rows_par, _logsumexp_rows_ser = _variants(_logsumexp_rows_impl)

#: fixed blocks of chunks whose label statistics are summed separately (see ``CpuEngine._run``)
STAT_BLOCKS = 16

#: below this many (point x component) pairs per call the serial kernels are used
PARALLEL_THRESHOLD = 2_000_000


def _features(X, out):
    (_features_par if X.shape[0] * out.shape[1] >= PARALLEL_THRESHOLD else _features_ser)(X, out)


class CpuEngine(Engine):
    """Hot steps of the TDP mixture on the CPU (see the module docstring).

    Parallel over chunks of points: ``threads`` Python worker threads (Numba's thread
    count by default; the calling thread is one of them) each claim fixed blocks of consecutive
    chunks, one at a time, and run, per chunk, the quadratic features (Numba, GIL released), the
    GEMM against the coefficient matrix (single-threaded BLAS, GIL released) and the per-row
    log-sum-exp and draw (Numba, GIL released); a worker with no block left draws the last
    unstarted chunks of the blocks still running, whose own workers add their label moments
    (:meth:`_run`).  Per-worker buffers and per-block partial sums, each block accumulated in
    chunk order: the result does not depend on the number of threads.

    Parameters
    ----------
    X : ndarray (n, p)
        The (standardised) data, float64.
    chunk_size : int
        Points per chunk; memory is about ``threads * chunk_size * (k + F) * 8`` bytes.
    threads : int, optional
        Worker threads (default ``numba.get_num_threads()``).
    prune : bool, default True
        Label draws skip, per point, the components whose log density is more than
        :func:`prune_margin` (about 40 nats for k = 256) below the point's best: they are
        treated as probability 0, which leaves out less than ``PRUNE_TOL`` = 1e-15 of the
        point's probability mass (the bound is in :func:`prune_margin`).  The densities
        themselves are still all computed (one GEMM); what is saved is the exponentials and
        the inverse-CDF scan over the ~90 % of components that cannot matter.  False: the
        exact draw over all k components.  ``last_kept_fraction`` holds the fraction of
        (point, component) pairs the last pruned draw kept.  With ``dtype=float32`` the pruned
        draw is certified to give the float64 labels (:func:`_sample_rows_certified`;
        ``last_refined_fraction``: rows redrawn in float64, ``last_loglik_error_bound``: bound
        on |loglik - float64 loglik|).
    """

    backend = "cpu"

    def __init__(self, X, *, chunk_size: int = 256, dtype=np.float64, threads=None, prune: bool = True):
        super().__init__(X, dtype=dtype)
        # the density product runs in self.dtype (float32: single-precision GEMM and exp, about
        # twice as fast); the sufficient statistics are always accumulated from the float64 data
        self._Xf = self.X if self.dtype == np.float64 else self.X.astype(self.dtype)
        self.chunk = int(max(1, chunk_size))
        if threads is None:
            import numba

            threads = numba.get_num_threads()
        self.threads = int(max(1, threads))
        self._pool = None
        self.W = None
        self.prune = bool(prune)
        self._last_draw = None  # (kept, refined, E, k) of the last label draw, for the diagnostics

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_pool"] = None
        state.pop("_M", None)  # scratch (the label-moment blocks), rebuilt on use
        state["_last_draw"] = None  # n-long diagnostics arrays
        return state

    def close(self):
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    # ------------------------------------------------------------------ parameters
    def set_components(self, log_weights, means, prec_factors, logdets) -> None:
        """Load component parameters (standardised units) for the next hot steps."""
        W64 = build_coefficients(log_weights, means, prec_factors, logdets)
        self.W = np.ascontiguousarray(W64, dtype=self.dtype)
        self.k = self.W.shape[1]
        if self.dtype == np.float32:
            # the certified float32 draw: float32 product of the non-constant features, float64
            # constants (log weights may be -inf), error bounds, and W' for refined rows
            self._W32x = np.ascontiguousarray(self.W[1:])
            self._c0 = W64[0].copy()
            self._ea, self._eb = float32_error_norms(W64, self.p)
            self._Wt64 = np.ascontiguousarray(W64.T)

    # ------------------------------------------------------------------ parallel driver
    def _run(self, n, work, nblocks: int = 1, start_block=None, finish=None):
        """Call ``work(lo, hi, phi_t, D, b)`` for every chunk of [0, n) on the worker threads.

        ``phi_t`` is an (F, hi - lo) feature-major scratch (rows of a larger buffer, so
        ``phi_t.T`` is a Fortran-ordered view that BLAS reads without a copy), ``D`` a
        (hi - lo, k) scratch, both in the engine dtype.  The chunks are grouped into
        ``min(nblocks, chunks)`` fixed blocks of consecutive chunks; each worker claims the next
        unclaimed block whenever it is done with one (so a worker that other jobs on the host
        slow down takes fewer blocks instead of holding the others up at the end); ``b`` is the
        chunk's block.  Returns, per block, the sum of ``work``'s return values over its chunks
        in order (None where ``work`` returns None): a block is always summed the same way,
        whichever worker takes it, so totals taken over the blocks in order do not depend on the
        number of threads or on the scheduling.  ``start_block(b)``, if given, is called by the
        worker that takes block ``b`` before its first chunk (to clear the block's accumulators
        on that worker's core).  The calling thread is one of the workers (one thread fewer to
        wake per call).

        ``finish(lo, hi, b)``, if given, lets a worker that finds no unclaimed block left take the
        last not yet started chunks of the blocks still running, one at a time (those blocks are
        ~1/16 of the sweep each: without this the first worker done idled for half a block on
        average, 2-3 ms per sweep): it calls ``work(lo, hi, phi_t, D, -1)``, which must do
        everything but the part that has to run in chunk order within the block (the label
        moments), and the block's worker calls ``finish(lo, hi, b)`` for those chunks, in order,
        once they are done, so every block is still accumulated in the same order.  ``work`` must
        then return None.
        """
        chunk = max(1, min(self.chunk, n))
        nchunks = -(-n // chunk)
        B = max(1, min(int(nblocks), nchunks))
        T = max(1, min(self.threads, B if B > 1 else nchunks))
        if B == 1 and T > 1:  # one block: split its chunks between the workers (work returns None)
            tasks = [(t * nchunks // T, (t + 1) * nchunks // T, 0) for t in range(T)]
            if start_block is not None:
                start_block(0)
                start_block = None
            finish = None
        else:
            tasks = [(b * nchunks // B, (b + 1) * nchunks // B, b) for b in range(B)]
        out = [None] * len(tasks)
        claim = itertools.count()  # next() on it is atomic (C code under the GIL): no lock
        # per task: [next chunk its worker takes, end of the chunks left to that worker]; chunks
        # from the end on were taken by other workers, and their events are set once drawn
        left = [[c0, c1] for c0, c1, _ in tasks]
        lock = threading.Lock()
        drawn = {}

        def bounds(c):
            return c * chunk, min(n, (c + 1) * chunk)

        def own(i, phi_t, D):
            c0, c1, b = tasks[i]
            if start_block is not None:
                start_block(b)
            acc = None
            st = left[i]
            while True:
                with lock:
                    c = st[0]
                    if c >= st[1]:
                        break
                    st[0] = c + 1
                lo, hi = bounds(c)
                r = work(lo, hi, phi_t[:, : hi - lo], D[: hi - lo], b)
                if r is not None:
                    acc = r if acc is None else acc + r
            for c in range(st[1], c1):  # drawn by other workers: the ordered part, in order
                drawn[c].wait()
                finish(*bounds(c), b)
            out[i] = acc

        def steal(phi_t, D):
            with lock:
                i = max(range(len(tasks)), key=lambda t: left[t][1] - left[t][0])
                if left[i][1] <= left[i][0]:
                    return False
                left[i][1] -= 1
                c = left[i][1]
                done = drawn[c] = threading.Event()
            try:
                lo, hi = bounds(c)
                work(lo, hi, phi_t[:, : hi - lo], D[: hi - lo], -1)
            finally:
                done.set()  # also on an error: the block's worker must not wait for ever
            return True

        def worker(_):
            phi_t = np.empty((self.F, chunk), dtype=self.dtype)
            D = np.empty((chunk, self.k), dtype=self.dtype)
            for i in iter(lambda: next(claim), None):
                if i >= len(tasks):
                    break
                own(i, phi_t, D)
            if finish is not None:
                while steal(phi_t, D):
                    pass

        with _single_threaded_blas():
            if T == 1:
                worker(0)
            else:
                if self._pool is None or self._pool._max_workers < T - 1:
                    from concurrent.futures import ThreadPoolExecutor

                    self.close()
                    self._pool = ThreadPoolExecutor(max_workers=T - 1, thread_name_prefix="hphawkes-mixture")
                futures = [self._pool.submit(worker, t) for t in range(1, T)]
                try:
                    worker(0)
                finally:
                    for f in futures:
                        f.result()  # waits; re-raises a worker's exception
        return out

    def _xnorm(self):
        """||x_i|| of the float64 data rows (rounded upwards), for the float32 error bounds."""
        if getattr(self, "_xn", None) is None:
            self._xn = np.sqrt(np.einsum("ia,ia->i", self.X, self.X)) * (1.0 + 1e-15)
        return self._xn

    def _moment_blocks(self, k):
        """The (STAT_BLOCKS, k, :func:`moments_width`) label-moment accumulators, kept between
        sweeps: a fresh ``np.zeros`` of these 7.9 MB (k = 256, p = 14) cost a serial memset or
        page faults every sweep; the blocks are cleared by the workers (``_run``'s
        ``start_block``, :func:`_clear_moments`: the rows last filled only) instead, each on the
        core that fills it.  Blocks that ``_run`` does not use (fewer chunks than blocks) are
        cleared here."""
        shape = (STAT_BLOCKS, k, moments_width(self.p))
        M = getattr(self, "_M", None)
        if M is None or M.shape != shape:
            M = self._M = np.zeros(shape)
        nchunks = -(-self.n // max(1, min(self.chunk, self.n))) if self.n else 0
        M[min(STAT_BLOCKS, nchunks):] = 0.0
        return M

    # ------------------------------------------------------------------ Gibbs
    def sample_labels(self, uniforms, return_labels: bool = True):
        """Draw every z_i from its configuration probabilities given ``uniforms`` (n,) in [0, 1).

        Returns z (n,) int32 (None when ``return_labels`` is false; ``self.z`` holds it either
        way) and stores it for :meth:`label_stats`; the total
        log likelihood of the data under the current mixture is in ``self.loglik``.
        The label statistics are accumulated in the same pass (from the float64 data, whatever
        the engine dtype), while the chunk is in cache.
        """
        u = self._check_uniforms(uniforms)
        z = np.empty(self.n, dtype=np.int32)
        ll = np.empty(self.n)
        X, Xf, W, k, p = self.X, self._Xf, self.W, self.k, self.p
        prune = self.prune
        if prune:
            margin = prune_margin(k)
            kept = np.empty(self.n, dtype=np.int32)
        M = self._moment_blocks(k)
        certified = prune and self.dtype == np.float32
        if certified:
            W32x, c0, ea, eb, Wt64 = self._W32x, self._c0, self._ea, self._eb, self._Wt64
            xnorm = self._xnorm()
            eps = float32_error_factor(self.F)
            E = np.empty(self.n)
            refined = np.empty(self.n, dtype=np.uint8)

        def work(lo, hi, phi_t, D, b):
            # b < 0: a chunk taken from another worker's block, whose worker adds its moments (finish)
            _features_t(Xf[lo:hi], phi_t)
            if certified:
                np.matmul(phi_t[1:].T, W32x, out=D)
                args = (D, c0, ea, eb, eps, xnorm[lo:hi], u[lo:hi], X[lo:hi], Wt64, z[lo:hi], ll[lo:hi], margin,
                        kept[lo:hi], refined[lo:hi], E[lo:hi])
                if b >= 0:
                    _certified_chunk(*args, M[b])
                else:
                    _sample_rows_certified(*args)
                return
            np.matmul(phi_t.T, W, out=D)
            if prune:
                if b >= 0:
                    _pruned_chunk(D, u[lo:hi], X[lo:hi], z[lo:hi], ll[lo:hi], margin, kept[lo:hi], M[b])
                else:
                    _sample_rows_pruned(D, u[lo:hi], z[lo:hi], ll[lo:hi], margin, kept[lo:hi])
            else:
                _sample_rows_ser(D, u[lo:hi], z[lo:hi], ll[lo:hi])
                if b >= 0:
                    _add_moments(X[lo:hi], z[lo:hi], M[b])

        def finish(lo, hi, b):
            _add_moments(X[lo:hi], z[lo:hi], M[b])

        self._run(self.n, work, STAT_BLOCKS, lambda b: _clear_moments(M[b]), finish)
        self._T_last = moments_to_stats(M.sum(axis=0), p)
        self.z = z
        self.loglik = float(ll.sum())
        # the draw's diagnostics are summed when read (the sampler does not read them: 0.25 ms of
        # serial sums per sweep at n = 1e5)
        self._last_draw = (kept if prune else None, refined if certified else None, E if certified else None, k)
        return z if return_labels else None

    @property
    def last_kept_fraction(self):
        """Fraction of the (point, component) pairs the last pruned draw kept (None: not pruned)."""
        kept, _, _, k = getattr(self, "_last_draw", None) or (None,) * 4
        return float(kept.sum(dtype=np.int64)) / (self.n * k) if kept is not None and self.n else None

    @property
    def last_refined_fraction(self):
        """Fraction of the rows the last certified float32 draw redrew in float64 (None: not that draw)."""
        _, refined, _, _ = getattr(self, "_last_draw", None) or (None,) * 4
        return float(refined.sum(dtype=np.int64)) / self.n if refined is not None and self.n else None

    @property
    def last_loglik_error_bound(self):
        """Bound on |loglik - float64 loglik| of the last draw (0 but for the certified float32 draw,
        whose certified rows carry the float32 log-sum-exp, within E_i of the float64 one)."""
        _, refined, E, _ = getattr(self, "_last_draw", None) or (None,) * 4
        return float(E[refined == 0].sum()) if E is not None else 0.0

    def label_stats(self) -> np.ndarray:
        """(k, F) sums of quadratic features per component for the last sampled labels."""
        if getattr(self, "_T_last", None) is not None:
            return self._T_last.copy()
        X, z, k, p = self.X, self.z, self.k, self.p
        M = self._moment_blocks(k)

        def work(lo, hi, phi_t, D, b):
            _add_moments(X[lo:hi], z[lo:hi], M[b])

        self._run(self.n, work, STAT_BLOCKS, lambda b: _clear_moments(M[b]))
        return moments_to_stats(M.sum(axis=0), p)

    # ------------------------------------------------------------------ BEM
    def responsibilities_stats(self):
        """E-step: (loglik, T) with T (k, F) the responsibility-weighted feature sums.

        Never materialises the n x k responsibility matrix: chunk by chunk,
        T += R_chunk' Phi_chunk (per-block partial sums, added in block order at the end).
        """
        X, W = self._Xf, self.W
        ll = np.empty(self.n)

        def work(lo, hi, phi_t, D, b):
            _features_t(X[lo:hi], phi_t)
            np.matmul(phi_t.T, W, out=D)
            _normalise_rows_ser(D, ll[lo:hi])
            return (phi_t @ D).T.astype(np.float64)

        parts = [r for r in self._run(self.n, work, STAT_BLOCKS) if r is not None]
        return float(ll.sum()), np.sum(parts, axis=0)

    # ------------------------------------------------------------------ prediction
    def log_density(self, X) -> np.ndarray:
        """log sum_j pi_j N(x_i | mu_j, Sigma_j) for the rows of X (standardised units)."""
        X = np.ascontiguousarray(X, dtype=self.dtype)
        out = np.empty(X.shape[0])
        W = self.W

        def work(lo, hi, phi_t, D, b):
            _features_t(X[lo:hi], phi_t)
            np.matmul(phi_t.T, W, out=D)
            _logsumexp_rows_ser(D, out[lo:hi])

        if X.shape[0]:
            self._run(X.shape[0], work)
        return out

    def component_log_density(self, X) -> np.ndarray:
        """The n x k matrix d_ij for the rows of X (for predict/predict_proba on modest n)."""
        X = np.ascontiguousarray(X, dtype=np.float64)
        with _single_threaded_blas():
            return (features(X).astype(self.dtype) @ self.W).astype(np.float64)
