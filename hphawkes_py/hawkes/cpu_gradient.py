"""Numba kernels of the Hawkes log-likelihood gradient: the weighted pair sums its partial
derivatives need (:mod:`.gradient` turns them into the gradient).

For events sorted by time, row n of the background pass returns, over the neighbours m with
|t_n - t_m| <= Delta_S (every m when exact; m = n included, its term is 1)::

    S0_n = sum_m e_nm,   SR_n = sum_m e_nm r2_nm,   ST_n = sum_m e_nm dt_nm^2,
    e_nm = exp(-(r2_nm / (2 tau_x^2) + dt_nm^2 / (2 tau_t^2)))

and row n of the trigger pass, over the earlier events m in [lo_n, ts_n) (t_n - t_m <= Delta_G,
tied times excluded), with u_nm the kernel's pair term without its constant factor
(:func:`~.kernels.trigger_scale`)::

    GA_n = sum_m u_nm,  GAT_n = sum_m u_nm a(dt),  GR_n = sum_m u_nm b(r2)
    GB_n, GBT_n: the second exponential's u and u dt ("exp2" only; then GA, GAT are the first's)

a(dt) = dt (exponential kernels) or dt / (1 + omega dt) (power law); b(r2) = r2 (Gaussian) or
z / (1 + z) with z = r2 / h^2 (spatial power law); for "exp2" GR_n weighs the two exponentials by
their shares c1, c2 (:func:`~.kernels.exp2_weights`). These are the derivatives of the pair terms'
logarithms with respect to the bandwidths and rates up to known factors.

Every row is one thread's sequential loop and the rows' results are stored, never added across
threads, so every value is the same for any thread count (the O(N) sums over n happen afterwards,
in NumPy, in a fixed order). Rows are handed out in pairs (p, N-1-p) so every thread gets a
similar share of a triangular (exact) trigger pass. Pair terms are computed in the kernel dtype
(coordinates centred, times split as the engines do) and accumulated in float64.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .._fastmath import exp_like, fadd, fsub

__all__ = ["gradient_sums", "TKIND", "SKIND"]

#: Integer codes of the temporal kernels in :func:`gradient_sums`.
TKIND = {"exponential": 0, "power-law": 1, "exp2": 2}
#: Integer codes of the spatial kernels in :func:`gradient_sums`.
SKIND = {"gaussian": 0, "power-law": 1}


@njit(cache=True, inline="always")
def _first_at_least(a, v, lo, hi):
    """First index i in [lo, hi) with a[i] >= v (a sorted), hi if none."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < v:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, inline="always")
def _first_above(a, v, lo, hi):
    """First index i in [lo, hi) with a[i] > v (a sorted), hi if none."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] <= v:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, fastmath=True)
def _background_row(x0, x1, x2, th, tl, n, lo, hi, ax, at):
    a0, a1, a2, tn, tln = x0[n], x1[n], x2[n], th[n], tl[n]
    s0 = 0.0
    sr = 0.0
    st = 0.0
    for m in range(lo, hi):
        d0 = x0[m] - a0
        d1 = x1[m] - a1
        d2 = x2[m] - a2
        r2 = d0 * d0 + d1 * d1 + d2 * d2
        dt = fadd(fsub(th[m], tn), fsub(tl[m], tln))
        dt2 = dt * dt
        e = exp_like(-(ax * r2 + at * dt2))
        s0 += e
        sr += e * r2
        st += e * dt2
    return s0, sr, st


@njit(cache=True, fastmath=True)
def _trigger_row(x0, x1, x2, th, tl, n, lo, hi, bh, om, om2, c1, c2, p, q, tkind, skind):
    a0, a1, a2, tn, tln = x0[n], x1[n], x2[n], th[n], tl[n]
    one = bh / bh
    ga = 0.0
    gat = 0.0
    gb = 0.0
    gbt = 0.0
    gr = 0.0
    for m in range(lo, hi):
        d0 = x0[m] - a0
        d1 = x1[m] - a1
        d2 = x2[m] - a2
        r2 = d0 * d0 + d1 * d1 + d2 * d2
        dt = fadd(fsub(tn, th[m]), fsub(tln, tl[m]))
        if skind == 0:
            sq = bh * r2
            b = r2
        else:
            z = bh * r2
            sq = q * math.log1p(z)
            b = z / (one + z)
        if tkind == 0:
            u = exp_like(-(sq + om * dt))
            ga += u
            gat += u * dt
            gr += u * b
        elif tkind == 1:
            od = om * dt
            u = exp_like(-(sq + p * math.log1p(od)))
            ga += u
            gat += u * (dt / (one + od))
            gr += u * b
        else:
            u1 = exp_like(-(sq + om * dt))
            u2 = exp_like(-(sq + om2 * dt))
            ga += u1
            gat += u1 * dt
            gb += u2
            gbt += u2 * dt
            gr += (c1 * u1 + c2 * u2) * b
    return ga, gat, gb, gbt, gr


@njit(parallel=True, cache=True, nogil=True)
def gradient_sums(x0, x1, x2, th, tl, tw, ts, with_background, ax, at, delta_s, bh, om, om2, c1, c2, p, q,
                  tkind, skind, with_trigger, delta_g, out_s, out_g):
    """Fill ``out_s`` (N, 3) with (S0, SR, ST) (when ``with_background``) and ``out_g`` (N, 5)
    with (GA, GAT, GB, GBT, GR) (when ``with_trigger``), see the module notes.

    ``x0, x1, x2``: centred coordinate columns in the kernel dtype (zeros beyond D); ``th, tl``: the
    split times; ``tw``: float64 times (the windows' searches); ``ts``: first index of each event's
    tie; ``ax = 1/(2 tau_x^2)``, ``at = 1/(2 tau_t^2)``; ``bh = 1/(2 h^2)`` (Gaussian) or ``1/h^2``
    (power law); ``delta_s``, ``delta_g``: the time cut-offs (inf when exact)."""
    N = tw.shape[0]
    npair = (N + 1) // 2
    for pp in prange(npair):
        for k in range(2):
            n = np.int64(pp) if k == 0 else np.int64(N - 1) - np.int64(pp)
            if k == 1 and n == np.int64(pp):
                break
            if with_background:
                lo = 0
                hi = N
                if delta_s < np.inf:
                    lo = _first_at_least(tw, tw[n] - delta_s, 0, n)
                    hi = _first_above(tw, tw[n] + delta_s, n + 1, N)
                s0, sr, st = _background_row(x0, x1, x2, th, tl, n, lo, hi, ax, at)
                out_s[n, 0] = s0
                out_s[n, 1] = sr
                out_s[n, 2] = st
            if not with_trigger:
                continue
            hi = ts[n]
            lo = 0
            if delta_g < np.inf:
                lo = _first_at_least(tw, tw[n] - delta_g, 0, hi)
            ga, gat, gb, gbt, gr = _trigger_row(x0, x1, x2, th, tl, n, lo, hi, bh, om, om2, c1, c2, p, q,
                                                tkind, skind)
            out_g[n, 0] = ga
            out_g[n, 1] = gat
            out_g[n, 2] = gb
            out_g[n, 3] = gbt
            out_g[n, 4] = gr
