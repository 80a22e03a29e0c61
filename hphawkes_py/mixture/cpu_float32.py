"""The certified float32 label draw: float32 log densities, float64 labels (CPU, Numba).

In float32 the GEMM of :mod:`.cpu_features` does half the work of float64, but its log
densities carry rounding errors.  Every float32 density here carries a proven bound on that
error (:func:`float32_error_factor`, :func:`float32_error_norms`); a row's draw is *certified*
when its uniform lies farther than that bound from the cumulative-probability boundaries of
the chosen component, and then equals the float64 draw's label.  The other rows are *refined*:
their densities are recomputed in float64 for the few components that can matter and drawn
again (:func:`_sample_rows_certified`).  The chain is therefore the float64 chain.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .cpu_draw import FASTMATH as _FM
from .cpu_draw import _draw_row, _inverse_cdf, _kept_exp, _kept_indices, _row_max
from .cpu_features import _row_features

__all__ = ["float32_error_factor", "float32_error_norms"]

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
    """The loops of :func:`float32_error_norms` (per component p x p work that NumPy would spend
    in per-call overheads)."""
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
    steps (within a few per cent of rho, where the row sums, v = 1, are a much looser bound
    on fitted chains).  Per component, unlike per-feature maxima over all components, so a few
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
    chain of vector adds)."""
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
    # vectorises the conversion loop (rows of one (3, k) scratch may alias as far as it knows)
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
        m = _row_max(drow)  # a separate pass: fused with the conversion it does not vectorise
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

