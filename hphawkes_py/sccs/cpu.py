"""CPU (Numba) engine for the SCCS cyclic coordinate descent.

State kept per row: the linear predictor ``eta_i = x_i'b`` and ``texp_i = time_i exp(eta_i)``;
per stratum: the denominator ``D_s = sum_{i in s} texp_i`` and the weighted event count
``wn_s = w_s n_s`` (``w_s`` = bootstrap multiplicity / CV training indicator).

* :meth:`CpuEngine.gradient_hessian` -- one fused pass over the non-zeros of a column
  (sorted by row, hence grouped by stratum): per stratum run the numerators
  ``N1 = sum texp_i x_ij`` and ``N2 = sum texp_i x_ij^2`` are accumulated, then
  ``G += wn_s N1/D_s`` and ``H += wn_s (N2/D_s - (N1/D_s)^2)``. O(nnz_j); W is never formed.
* :meth:`CpuEngine.update` -- sparse update of eta, texp and D after a step on one
  coordinate. For indicator columns ``texp_i *= exp(delta)`` is one multiply per non-zero.
* :meth:`CpuEngine.log_likelihood` -- O(rows) resynchronisation (texp recomputed from eta,
  D summed afresh, so round-off of the incremental updates never accumulates across
  cycles) fused with the per-stratum log-likelihood.

The loop over coordinates is sequential by nature (each step changes D); per-coordinate
work is a few tens of microseconds for typical drug columns, so calling two small
compiled kernels per coordinate from Python costs little (measured in bench_sccs.py).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["CpuEngine"]


@njit(cache=True, nogil=True)
def _grad_hess(start, end, row_idx, values, binary, row_stratum, texp, denom, wn):
    G = 0.0
    H = 0.0
    k = start
    while k < end:
        s = row_stratum[row_idx[k]]
        n1 = 0.0
        n2 = 0.0
        if binary:
            while k < end:
                r = row_idx[k]
                if row_stratum[r] != s:
                    break
                n1 += texp[r]
                k += 1
            n2 = n1
        else:
            while k < end:
                r = row_idx[k]
                if row_stratum[r] != s:
                    break
                v = texp[r] * values[k]
                n1 += v
                n2 += v * values[k]
                k += 1
        w = wn[s]
        if w != 0.0:
            d = denom[s]
            ratio = n1 / d
            G += w * ratio
            H += w * (n2 / d - ratio * ratio)
    return G, H


@njit(cache=True, nogil=True)
def _update(start, end, delta, row_idx, values, binary, row_stratum, eta, texp, denom):
    if binary:
        f = math.exp(delta)
        for k in range(start, end):
            r = row_idx[k]
            eta[r] += delta
            old = texp[r]
            new = old * f
            texp[r] = new
            denom[row_stratum[r]] += new - old
    else:
        for k in range(start, end):
            r = row_idx[k]
            x = values[k]
            eta[r] += delta * x
            old = texp[r]
            new = old * math.exp(delta * x)
            texp[r] = new
            denom[row_stratum[r]] += new - old


@njit(cache=True, nogil=True)
def _resync(stratum_ptr, y, logtime, eta, texp, denom, n_events, ll_s):
    """Recompute texp and D from eta; per-stratum log-likelihood
    ll_s = sum_i y_i (eta_i + log t_i) - n_s log D_s (0 for strata without events)."""
    n_strata = stratum_ptr.shape[0] - 1
    for s in range(n_strata):
        d = 0.0
        num = 0.0
        for i in range(stratum_ptr[s], stratum_ptr[s + 1]):
            lin = eta[i] + logtime[i]
            v = math.exp(lin)
            texp[i] = v
            d += v
            if y[i] != 0.0:
                num += y[i] * lin
        denom[s] = d
        ll_s[s] = num - n_events[s] * math.log(d) if n_events[s] != 0.0 else 0.0


@njit(cache=True, nogil=True)
def _eta_from_beta(n_rows, col_ptr, row_idx, values, binary, beta):
    eta = np.zeros(n_rows)
    for j in range(col_ptr.shape[0] - 1):
        b = beta[j]
        if b == 0.0:
            continue
        for k in range(col_ptr[j], col_ptr[j + 1]):
            eta[row_idx[k]] += b if binary else b * values[k]
    return eta


@njit(cache=True, nogil=True)
def _weighted_xty(col_ptr, row_idx, values, binary, row_stratum, y, weights):
    """c_j = sum_i w_{s(i)} y_i x_ij (the constant part of the gradient)."""
    J = col_ptr.shape[0] - 1
    c = np.zeros(J)
    for j in range(J):
        acc = 0.0
        for k in range(col_ptr[j], col_ptr[j + 1]):
            r = row_idx[k]
            yr = y[r]
            if yr != 0.0:
                acc += weights[row_stratum[r]] * yr * (1.0 if binary else values[k])
        c[j] = acc
    return c


class CpuEngine:
    """Numba engine holding the CCD state for one :class:`SCCSData` (see module docstring)."""

    backend = "cpu"

    def __init__(self, data, weights=None):
        self.data = data
        self.n_covariates = data.n_covariates
        self._binary = data.values is None
        self._values = np.ones(1) if self._binary else data.values
        self._logtime = np.log(data.time)
        self._eta = np.zeros(data.n_rows)
        self._texp = data.time.copy()
        self._denom = np.zeros(data.n_strata)
        self._ll_s = np.zeros(data.n_strata)
        self._col_ptr = data.col_ptr
        self.set_weights(weights)

    # -------------------------------------------------------------- state
    def set_weights(self, weights=None):
        """Per-stratum weights (multiplicities); ``None`` = all ones."""
        d = self.data
        w = np.ones(d.n_strata) if weights is None else np.ascontiguousarray(weights, dtype=np.float64)
        self.weights = w
        self._wn = w * d.n_events
        self.xty = _weighted_xty(d.col_ptr, d.row_idx, self._values, self._binary, d.row_stratum, d.y, w)

    def set_beta(self, beta):
        """Set all coefficients (recomputes eta, texp and D)."""
        d = self.data
        self._eta = _eta_from_beta(d.n_rows, d.col_ptr, d.row_idx, self._values, self._binary,
                                   np.ascontiguousarray(beta, dtype=np.float64))
        _resync(d.stratum_ptr, d.y, self._logtime, self._eta, self._texp, self._denom, d.n_events, self._ll_s)

    # -------------------------------------------------------------- hot steps
    def gradient_hessian(self, j):
        """(g, h): d loglik / d b_j and -d^2 loglik / d b_j^2 at the current state (weighted)."""
        d = self.data
        G, H = _grad_hess(self._col_ptr[j], self._col_ptr[j + 1], d.row_idx, self._values, self._binary,
                          d.row_stratum, self._texp, self._denom, self._wn)
        return self.xty[j] - G, H

    def update(self, j, delta):
        """Add ``delta`` to coefficient j: sparse update of eta, time*exp(eta) and D."""
        d = self.data
        _update(self._col_ptr[j], self._col_ptr[j + 1], float(delta), d.row_idx, self._values, self._binary,
                d.row_stratum, self._eta, self._texp, self._denom)

    def log_likelihood(self):
        """Weighted conditional log-likelihood at the current state (also resynchronises D)."""
        d = self.data
        _resync(d.stratum_ptr, d.y, self._logtime, self._eta, self._texp, self._denom, d.n_events, self._ll_s)
        return float(np.dot(self.weights, self._ll_s))

    def stratum_log_likelihood(self):
        """Unweighted per-stratum log-likelihood at the current state (after a resync)."""
        d = self.data
        _resync(d.stratum_ptr, d.y, self._logtime, self._eta, self._texp, self._denom, d.n_events, self._ll_s)
        return self._ll_s.copy()
