"""Numba kernels of the Hawkes model with latent structure: rates with per-event source weights, the
gradient of the log-likelihood in the event locations and in the per-event log-rates, and the
Metropolis-within-Gibbs sweep over coarsened locations.

Model (events sorted by time, Gaussian spatial kernels, exponential temporal trigger)::

    lambda_n = mu0 c_S S_n + theta c_G G_n,
    S_n = sum_{m in B(n)} b_m e_nm,   e_nm = exp(-(|x_n - x_m|^2 / (2 tau_x^2) + (t_n - t_m)^2 / (2 tau_t^2)))
    G_n = sum_{m in T(n)} g_m u_nm,   u_nm = exp(-(|x_n - x_m|^2 / (2 h^2) + omega (t_n - t_m)))
    c_S = phi_D(0; tau_x) phi_1(0; tau_t),   c_G = omega phi_D(0; h)

with per-source weights ``b_m = exp(beta_m)`` (background log-rates) and ``g_m = exp(gamma_m)``
(self-excitation log-rates, hpHawkes' ``setRandomRates`` on the log scale); both are 1 without
random rates. B(n) = [lo_s[n], hi_s[n]) are the events within the background's time cut-off of n
(n included), T(n) = [lo_g[n], ts[n]) the earlier events within the trigger's cut-off (tied times
excluded). The compensator sum_m (mu0 b_m B_m + theta g_m C_m) does not depend on the locations (the
spatial kernels integrate to 1 over R^D).

With v_n = 1 / lambda_n the neighbour pass returns, for every event k (as target of its own sums
and as source in the others')::

    LB_k = sum_{m in B(k)} e_km (x_m - x_k) b_m v_k  +  sum_{n: k in B(n)} e_nk (x_n - x_k) b_k v_n
    LG_k = sum_{m in T(k)} u_km (x_m - x_k) g_m v_k  +  sum_{n: k in T(n)} u_nk (x_n - x_k) g_k v_n
    AB_k = sum_{n: k in B(n)} e_nk v_n,    AB2_k = sum (e_nk v_n)^2
    AG_k = sum_{n: k in T(n)} u_nk v_n,    AG2_k = sum (u_nk v_n)^2

so that d log L / d x_k = mu0 c_S LB_k / tau_x^2 + theta c_G LG_k / h^2, and
d log L / d gamma_k = g_k theta (c_G AG_k - C_k) with diagonal second derivative
d log L / d gamma_k - (g_k theta c_G)^2 AG2_k (likewise for beta_k with mu0, c_S, B_k).
The sets {n: k in B(n)} and {n: k in T(n)} are contiguous ranges of n (the cut-offs' index arrays are
non-decreasing), found on the host, so every pair is counted under exactly the rule of the rows.

Every row is one thread's sequential loop in a fixed order and rows are stored, never added across
threads: results are identical for any thread count. Float64 throughout.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

__all__ = ["latent_rows", "latent_columns", "location_sweep", "REGION_KIND"]

#: Integer codes of the location regions in :func:`location_sweep`.
REGION_KIND = {"box": 0, "circle": 1}


@njit(cache=True, inline="always")
def _pair(x, n, m):
    d0 = x[m, 0] - x[n, 0]
    d1 = x[m, 1] - x[n, 1]
    d2 = x[m, 2] - x[n, 2]
    return d0, d1, d2, d0 * d0 + d1 * d1 + d2 * d2


@njit(cache=True)
def _row_sums(x, t, n, lo_s, hi_s, lo_g, ts, wb, wg, ax, at, bh, om, do_s, do_g):
    s = 0.0
    g = 0.0
    if do_s:
        for m in range(lo_s[n], hi_s[n]):
            _, _, _, r2 = _pair(x, n, m)
            dt = t[n] - t[m]
            s += wb[m] * math.exp(-(ax * r2 + at * dt * dt))
    if do_g:
        for m in range(lo_g[n], ts[n]):
            _, _, _, r2 = _pair(x, n, m)
            g += wg[m] * math.exp(-(bh * r2 + om * (t[n] - t[m])))
    return s, g


@njit(parallel=True, cache=True, nogil=True)
def latent_rows(x, t, lo_s, hi_s, lo_g, ts, wb, wg, ax, at, bh, om, do_s, do_g, out_s, out_g):
    """Fill ``out_s[n] = S_n`` (when ``do_s``) and ``out_g[n] = G_n`` (when ``do_g``), see the module notes.

    ``x``: (N, 3) float64 locations (zeros beyond D); ``t`` sorted times; ``ax = 1/(2 tau_x^2)``,
    ``at = 1/(2 tau_t^2)``, ``bh = 1/(2 h^2)``, ``om = omega``."""
    N = t.shape[0]
    for n in prange(N):
        s, g = _row_sums(x, t, n, lo_s, hi_s, lo_g, ts, wb, wg, ax, at, bh, om, do_s, do_g)
        if do_s:
            out_s[n] = s
        if do_g:
            out_g[n] = g


@njit(parallel=True, cache=True, nogil=True)
def latent_columns(x, t, lo_s, hi_s, lo_g, ts, src_s_lo, src_s_hi, src_g_lo, src_g_hi, wb, wg, v,
                   ax, at, bh, om, need, out_lb, out_lg, out_a):
    """Fill ``out_lb[k], out_lg[k]`` (N, 3) with LB_k, LG_k and ``out_a[k]`` (N, 4) with
    (AB_k, AB2_k, AG_k, AG2_k), see the module notes; ``v = 1 / lambda``, ``[src_s_lo[k],
    src_s_hi[k])`` and ``[src_g_lo[k], src_g_hi[k])`` the events whose background / trigger sums hold k.

    ``need`` (bits: 1 locations, 2 background log-rates, 4 trigger log-rates) skips the loops the
    caller does not need (what is skipped is returned as 0 or partial)."""
    N = t.shape[0]
    for k in prange(N):
        b0 = 0.0
        b1 = 0.0
        b2 = 0.0
        g0 = 0.0
        g1 = 0.0
        g2 = 0.0
        ab = 0.0
        ab2 = 0.0
        ag = 0.0
        ag2 = 0.0
        vk = v[k]
        loc = (need & 1) != 0
        # k as target of its own sums
        for m in range(lo_s[k], hi_s[k] if loc else lo_s[k]):
            d0, d1, d2, r2 = _pair(x, k, m)
            dt = t[k] - t[m]
            c = wb[m] * vk * math.exp(-(ax * r2 + at * dt * dt))
            b0 += c * d0
            b1 += c * d1
            b2 += c * d2
        for m in range(lo_g[k], ts[k] if loc else lo_g[k]):
            d0, d1, d2, r2 = _pair(x, k, m)
            c = wg[m] * vk * math.exp(-(bh * r2 + om * (t[k] - t[m])))
            g0 += c * d0
            g1 += c * d1
            g2 += c * d2
        # k as source in the others' sums
        for n in range(src_s_lo[k], src_s_hi[k] if (need & 3) != 0 else src_s_lo[k]):
            d0, d1, d2, r2 = _pair(x, k, n)
            dt = t[n] - t[k]
            ev = math.exp(-(ax * r2 + at * dt * dt)) * v[n]
            c = wb[k] * ev
            b0 += c * d0
            b1 += c * d1
            b2 += c * d2
            ab += ev
            ab2 += ev * ev
        for n in range(src_g_lo[k], src_g_hi[k] if (need & 5) != 0 else src_g_lo[k]):
            d0, d1, d2, r2 = _pair(x, k, n)
            uv = math.exp(-(bh * r2 + om * (t[n] - t[k]))) * v[n]
            c = wg[k] * uv
            g0 += c * d0
            g1 += c * d1
            g2 += c * d2
            ag += uv
            ag2 += uv * uv
        out_lb[k, 0] = b0
        out_lb[k, 1] = b1
        out_lb[k, 2] = b2
        out_lg[k, 0] = g0
        out_lg[k, 1] = g1
        out_lg[k, 2] = g2
        out_a[k, 0] = ab
        out_a[k, 1] = ab2
        out_a[k, 2] = ag
        out_a[k, 3] = ag2


@njit(cache=True)
def _inside(y0, y1, y2, k, kind, r_lo, r_hi):
    if kind == 0:
        return (r_lo[k, 0] <= y0 <= r_hi[k, 0] and r_lo[k, 1] <= y1 <= r_hi[k, 1]
                and r_lo[k, 2] <= y2 <= r_hi[k, 2])
    c0 = y0 - r_lo[k, 0]
    c1 = y1 - r_lo[k, 1]
    c2 = y2 - r_lo[k, 2]
    return c0 * c0 + c1 * c1 + c2 * c2 <= r_hi[k, 0] * r_hi[k, 0]


@njit(cache=True, nogil=True)
def location_sweep(x, t, lo_s, hi_s, lo_g, ts, src_s_lo, src_s_hi, src_g_lo, src_g_hi, wb, wg, ax, at, bh, om,
                   cb, cg, lam, step, z, logu, kind, r_lo, r_hi, scratch):
    """One Metropolis-within-Gibbs sweep over the latent locations, in event order; returns the
    number of accepted moves. ``x`` and ``lam`` (the rates lambda_n) are updated in place.

    Event k proposes ``y = x_k + step[k] * z[k]`` (``z`` standard normal, zeros beyond D); a
    proposal outside its region (``kind`` 0: the box ``r_lo[k] <= y <= r_hi[k]``; 1: the ball of
    centre ``r_lo[k]`` and radius ``r_hi[k, 0]``) is rejected (the prior is uniform on the region,
    the proposal symmetric). The log-likelihood ratio needs only the rates the move changes: lambda_k
    (recomputed) and lambda_n for the events whose sums hold k (changed by the difference of k's
    terms), O(neighbours) per event. ``cb = mu0 c_S``, ``cg = theta c_G``; ``scratch``: (N,) zeros."""
    N = t.shape[0]
    acc = 0
    for k in range(N):
        y0 = x[k, 0] + step[k] * z[k, 0]
        y1 = x[k, 1] + step[k] * z[k, 1]
        y2 = x[k, 2] + step[k] * z[k, 2]
        if not _inside(y0, y1, y2, k, kind, r_lo, r_hi):
            continue
        # lambda_k at y
        s = 0.0
        for m in range(lo_s[k], hi_s[k]):
            if m == k:
                s += wb[k]
                continue
            d0 = x[m, 0] - y0
            d1 = x[m, 1] - y1
            d2 = x[m, 2] - y2
            dt = t[k] - t[m]
            s += wb[m] * math.exp(-(ax * (d0 * d0 + d1 * d1 + d2 * d2) + at * dt * dt))
        g = 0.0
        for m in range(lo_g[k], ts[k]):
            d0 = x[m, 0] - y0
            d1 = x[m, 1] - y1
            d2 = x[m, 2] - y2
            g += wg[m] * math.exp(-(bh * (d0 * d0 + d1 * d1 + d2 * d2) + om * (t[k] - t[m])))
        lam_k = cb * s + cg * g
        dlog = math.log(lam_k) - math.log(lam[k])
        # the change of k's terms in the others' rates
        for n in range(src_s_lo[k], src_s_hi[k]):
            if n == k:
                continue
            dt = t[n] - t[k]
            _, _, _, r_old = _pair(x, k, n)
            d0 = x[n, 0] - y0
            d1 = x[n, 1] - y1
            d2 = x[n, 2] - y2
            r_new = d0 * d0 + d1 * d1 + d2 * d2
            scratch[n] += cb * wb[k] * (math.exp(-(ax * r_new + at * dt * dt)) - math.exp(-(ax * r_old + at * dt * dt)))
        for n in range(src_g_lo[k], src_g_hi[k]):
            _, _, _, r_old = _pair(x, k, n)
            d0 = x[n, 0] - y0
            d1 = x[n, 1] - y1
            d2 = x[n, 2] - y2
            r_new = d0 * d0 + d1 * d1 + d2 * d2
            e = math.exp(-om * (t[n] - t[k]))
            scratch[n] += cg * wg[k] * e * (math.exp(-bh * r_new) - math.exp(-bh * r_old))
        lo = min(src_s_lo[k], src_g_lo[k])
        hi = max(src_s_hi[k], src_g_hi[k])
        ok = True
        for n in range(lo, hi):
            if scratch[n] != 0.0:
                nl = lam[n] + scratch[n]
                if nl <= 0.0:  # only by rounding, when k's term was all of lambda_n
                    ok = False
                    break
                dlog += math.log(nl) - math.log(lam[n])
        accept = ok and logu[k] < dlog
        for n in range(lo, hi):
            if accept:
                lam[n] += scratch[n]
            scratch[n] = 0.0
        if accept:
            lam[k] = lam_k
            x[k, 0] = y0
            x[k, 1] = y1
            x[k, 2] = y2
            acc += 1
    return acc
