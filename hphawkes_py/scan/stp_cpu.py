"""Numba engine for the space-time permutation scan (Kulldorff et al. 2005).

The window statistic needs, per cylinder (a circle of locations Z x a day interval D),
the observed count c(Z, D) and the expected count mu(Z, D) = C_Z C_D / C. Both marginals
C_z (cases per location) and C_d (cases per day) are invariant under the permutation of the
case dates, so only the count matrix changes between replicates. Per centre the circle grows
one location at a time (nearest first); for every temporal window the running sum of the
location's day-prefix differences gives c(Z, D) in O(1) per (location, window).
"""
from __future__ import annotations

import math

import numba as nb
import numpy as np

__all__ = ["CpuEngine"]


@nb.njit(cache=True, inline="always")
def _poisson_llr(c, mu, C):
    """Kulldorff's Poisson GLR of a window with c observed and mu expected out of C (high rates)."""
    if c <= mu:
        return 0.0
    out = c * math.log(c / mu)
    rest = C - c
    if rest > 0.0:
        out += rest * math.log(rest / (C - mu))
    return out


@nb.njit(cache=True, inline="always")
def _beats(c, log_mu, klogk, best):
    """False when the window cannot beat ``best``: for c > mu the second GLR term is <= 0, so
    LLR <= c log c - c log mu, which needs no logarithm (k log k is tabulated, log mu is a sum of
    logs computed once per circle and per window). The margin keeps rounding from ever hiding a
    window whose exact LLR is larger: pruning never changes the result."""
    bound = klogk[c] - c * log_mu
    return bound * (1.0 + 1e-12) + 1e-12 > best


@nb.njit(cache=True, parallel=True, nogil=True)
def best_per_centre(cum, cz, cd_window, log_cd_window, klogk, nbr_ptr, nbr_idx, evaluate, win_start, win_end,
                    total, min_cases, out_llr, out_size, out_window):
    """Best window of every centre.

    cum : (L, T + 1) int64, per-location prefix sums of the daily counts (cum[z, 0] = 0)
    cz : (L,) cases per location over the study period
    cd_window : (W,) cases in each temporal window over all locations
    nbr_ptr, nbr_idx : CSR neighbour lists, nearest first, already cut to the maximum circle
    evaluate : (len(nbr_idx),) 1 where the circle is complete (the next neighbour is farther)
    win_start, win_end : (W,) first and last day index of each temporal window
    out_llr, out_size, out_window : (n_centres,) best LLR, its number of locations, its window
    """
    n_centres = nbr_ptr.shape[0] - 1
    W = win_start.shape[0]
    log_total = math.log(total)
    for i in nb.prange(n_centres):
        acc = np.zeros(W, dtype=np.int64)
        cases_z = 0
        best = 0.0
        best_k = 0
        best_w = -1
        for j in range(nbr_ptr[i], nbr_ptr[i + 1]):
            z = nbr_idx[j]
            cases_z += cz[z]
            for w in range(W):
                acc[w] += cum[z, win_end[w] + 1] - cum[z, win_start[w]]
            if evaluate[j] == 0 or cases_z == 0:
                continue
            log_cz = math.log(cases_z) - log_total
            for w in range(W):
                c = acc[w]
                if c < min_cases or not _beats(c, log_cz + log_cd_window[w], klogk, best):
                    continue
                mu = cases_z * cd_window[w] / total
                llr = _poisson_llr(float(c), mu, total)
                if llr > best:
                    best = llr
                    best_k = j - nbr_ptr[i] + 1
                    best_w = w
        out_llr[i] = best
        out_size[i] = best_k
        out_window[i] = best_w


@nb.njit(cache=True, parallel=True, nogil=True)
def null_maxima(loc_of_case, day_perm, n_locations, n_days, cz, cd_window, log_cd_window, klogk, nbr_ptr, nbr_idx,
                evaluate, win_start, win_end, total, min_cases, out):
    """Maximum LLR of each replicate; day_perm[r] holds the permuted day of every case."""
    R = day_perm.shape[0]
    n_centres = nbr_ptr.shape[0] - 1
    W = win_start.shape[0]
    log_total = math.log(total)
    for r in nb.prange(R):
        counts = np.zeros((n_locations, n_days + 1), dtype=np.int64)
        for k in range(loc_of_case.shape[0]):
            counts[loc_of_case[k], day_perm[r, k] + 1] += 1
        for z in range(n_locations):
            for d in range(n_days):
                counts[z, d + 1] += counts[z, d]
        acc = np.zeros(W, dtype=np.int64)
        best = 0.0
        for i in range(n_centres):
            acc[:] = 0
            cases_z = 0
            for j in range(nbr_ptr[i], nbr_ptr[i + 1]):
                z = nbr_idx[j]
                cases_z += cz[z]
                for w in range(W):
                    acc[w] += counts[z, win_end[w] + 1] - counts[z, win_start[w]]
                if evaluate[j] == 0 or cases_z == 0:
                    continue
                log_cz = math.log(cases_z) - log_total
                for w in range(W):
                    c = acc[w]
                    if c < min_cases or not _beats(c, log_cz + log_cd_window[w], klogk, best):
                        continue
                    llr = _poisson_llr(float(c), cases_z * cd_window[w] / total, total)
                    if llr > best:
                        best = llr
        out[r] = best


class CpuEngine:
    """Space-time permutation windows on the CPU (Numba, parallel over centres / replicates)."""

    backend = "cpu"

    def __init__(self, design):
        self.d = design

    def best_per_centre(self, cum):
        d = self.d
        n = len(d.nbr_ptr) - 1
        llr = np.zeros(n)
        size = np.zeros(n, dtype=np.int64)
        window = np.full(n, -1, dtype=np.int64)
        best_per_centre(cum, d.cz, d.cd_window, d.log_cd_window, d.klogk, d.nbr_ptr, d.nbr_idx, d.evaluate,
                        d.win_start, d.win_end, float(d.total), d.min_cases, llr, size, window)
        return llr, size, window

    def null_maxima(self, day_perm):
        d = self.d
        out = np.zeros(day_perm.shape[0])
        null_maxima(d.loc_of_case, day_perm, d.n_locations, d.n_days, d.cz, d.cd_window, d.log_cd_window, d.klogk,
                    d.nbr_ptr, d.nbr_idx, d.evaluate, d.win_start, d.win_end, float(d.total), d.min_cases, out)
        return out
