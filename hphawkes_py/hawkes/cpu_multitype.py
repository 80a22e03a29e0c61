"""Numba kernel of the multitype Hawkes model: the paper's Gaussian background smoother and
exponential trigger with K event types and a K x K matrix of self-excitation weights.

Model (events sorted by time, type k_n in 0..K-1)::

    lambda_n = mu0_{k_n} c_S S_n + c_G sum_k theta_{k, k_n} G_{n,k}
    S_n   = sum_{m: k_m = k_n} exp(-(|x_n - x_m|^2 / (2 tau_x^2) + (t_n - t_m)^2 / (2 tau_t^2)))   (m = n included)
    G_n,k = sum_{m < ts[n], k_m = k} exp(-(|x_n - x_m|^2 / (2 h^2) + omega (t_n - t_m)))
    c_S = phi_D(0; tau_x) phi_1(0; tau_t),   c_G = omega phi_D(0; h)

``theta[k, l]`` is the expected number of type-l offspring of a type-k event; the background of type
k smooths the type-k events only. ``ts[n]`` is the first event tied with n. With K = 1 this is the
exact (every pair) hpHawkes likelihood.

Every row is one thread's sequential loop in increasing m, stored, never added across threads:
results are identical for any thread count. Float64 throughout.
"""
from __future__ import annotations

import math

from numba import njit, prange

__all__ = ["multitype_rows"]


@njit(parallel=True, cache=True, nogil=True)
def multitype_rows(x, t, ts, k, ax, at, bh, om, do_s, do_g, out_s, out_g):
    """Fill ``out_s[n] = S_n`` (when ``do_s``) and ``out_g[n, :] = G_n,.`` (when ``do_g``).

    ``x``: (N, 3) float64 locations (zeros beyond D); ``t`` sorted times; ``ts`` tie starts; ``k``
    (N,) int64 types; ``ax = 1/(2 tau_x^2)``, ``at = 1/(2 tau_t^2)``, ``bh = 1/(2 h^2)``, ``om = omega``;
    ``out_g`` (N, K)."""
    N = t.shape[0]
    K = out_g.shape[1]
    for n in prange(N):
        kn = k[n]
        if do_s:
            s = 0.0
            for m in range(N):
                if k[m] != kn:
                    continue
                d0 = x[n, 0] - x[m, 0]
                d1 = x[n, 1] - x[m, 1]
                d2 = x[n, 2] - x[m, 2]
                dt = t[n] - t[m]
                s += math.exp(-(ax * (d0 * d0 + d1 * d1 + d2 * d2) + at * dt * dt))
            out_s[n] = s
        if do_g:
            for j in range(K):
                out_g[n, j] = 0.0
            for m in range(ts[n]):
                d0 = x[n, 0] - x[m, 0]
                d1 = x[n, 1] - x[m, 1]
                d2 = x[n, 2] - x[m, 2]
                out_g[n, k[m]] += math.exp(-(bh * (d0 * d0 + d1 * d1 + d2 * d2) + om * (t[n] - t[m])))
