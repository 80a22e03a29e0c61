"""CPU (Numba) engine for the SCCS cyclic coordinate descent.

State kept per row: ``texp_i = time_i exp(x_i'b)``; per stratum: the denominator ``D_s = sum_{i in s} texp_i`` and the weighted event count
``wn_s = w_s n_s`` (``w_s`` = bootstrap multiplicity / CV training indicator).

* ``gradient_hessian`` -- one fused pass over the non-zeros of a column
  (sorted by row, hence grouped by stratum): per stratum run the numerators
  ``N1 = sum texp_i x_ij`` and ``N2 = sum texp_i x_ij^2`` are accumulated, then
  ``G += wn_s N1/D_s`` and ``H += wn_s (N2/D_s - (N1/D_s)^2)``. O(nnz_j); W is never formed.
* ``update`` -- sparse update of texp and D after a step on one coordinate:
  ``texp_i *= exp(delta x_ij)`` (for indicator columns one multiply per non-zero) and
  ``D_s += new - old``. The linear predictor is not stored: the likelihood needs only
  ``sum_j b_j c_j`` with ``c_j = sum_i w y_i x_ij``, which saves a random read-modify-write
  per non-zero.
* ``log_likelihood`` -- O(rows) sequential pass: D summed afresh from texp
  (so the round-off of the additive D updates never accumulates across cycles).
  ``set_beta`` (start of every fit) recomputes texp = time exp(X b) exactly.

The host copy of the coefficients, the weights and the gradient constants live in
:class:`~.engine.Engine`.

The loop over coordinates is sequential by nature (each step changes D), so it stays in
Python and calls two small compiled kernels per coordinate; the call costs little next to
the work of a typical drug column.
"""
from __future__ import annotations

import math

import numpy as np
from numba import get_num_threads, njit, prange

from .engine import Engine

__all__ = ["CpuEngine", "PARALLEL_MIN_NNZ"]

#: Columns with at least this many non-zeros are split across threads (at stratum-run
#: boundaries). One parallel region per coordinate step is a synchronisation per step, which
#: costs more than the work of all but very large columns, so only those go parallel. The
#: cores are better used by running CV folds / bootstrap replicates in parallel (executor).
PARALLEL_MIN_NNZ = 2_000_000


@njit(cache=True, error_model="numpy", nogil=True, inline="always")
def _gh_range(start, end, row_idx, values, binary, nnz_stratum, run_end, texp, denom, wn):
    """(G, H) over the non-zeros [start, end) of one column, which must begin at a stratum run.

    ``run_end[k]`` marks the last non-zero of each run (precomputed once per data set, see
    :attr:`SCCSData.nnz_run_end`): one flat loop with a flag test, because a nested loop's
    data-dependent exit mispredicts on the short runs (a few non-zeros) typical of drug columns."""
    G = 0.0
    H = 0.0
    n1 = 0.0
    n2 = 0.0
    for k in range(start, end):
        if binary:
            n1 += texp[row_idx[k]]
        else:
            v = texp[row_idx[k]] * values[k]
            n1 += v
            n2 += v * values[k]
        if run_end[k]:
            s = nnz_stratum[k]
            w = wn[s]
            d = denom[s]
            ratio = n1 / d
            G += w * ratio
            H += w * ((n1 if binary else n2) / d - ratio * ratio)
            n1 = 0.0
            n2 = 0.0
    return G, H


@njit(cache=True, error_model="numpy", nogil=True, inline="always")
def _update_range(start, end, delta, f, row_idx, values, binary, nnz_stratum, texp, denom):
    if binary:
        for k in range(start, end):
            r = row_idx[k]
            old = texp[r]
            new = old * f
            texp[r] = new
            denom[nnz_stratum[k]] += new - old
    else:
        for k in range(start, end):
            r = row_idx[k]
            x = values[k]
            old = texp[r]
            new = old * math.exp(delta * x)
            texp[r] = new
            denom[nnz_stratum[k]] += new - old


@njit(cache=True, error_model="numpy", nogil=True)
def _grad_hess(start, end, row_idx, values, binary, nnz_stratum, run_end, texp, denom, wn):
    return _gh_range(start, end, row_idx, values, binary, nnz_stratum, run_end, texp, denom, wn)


@njit(cache=True, error_model="numpy", nogil=True)
def _update(start, end, delta, row_idx, values, binary, nnz_stratum, texp, denom):
    _update_range(start, end, delta, math.exp(delta), row_idx, values, binary, nnz_stratum, texp, denom)


@njit(cache=True, error_model="numpy", nogil=True)
def _chunk_bounds(start, end, nchunks, nnz_stratum):
    """Split [start, end) into nchunks pieces whose boundaries fall between stratum runs, so
    that each stratum's numerators (and its denominator update) belong to one chunk."""
    b = np.empty(nchunks + 1, dtype=np.int64)
    b[0] = start
    for c in range(1, nchunks):
        k = start + (end - start) * c // nchunks
        if k < b[c - 1]:
            k = b[c - 1]
        while k > start and k < end and nnz_stratum[k] == nnz_stratum[k - 1]:
            k += 1
        b[c] = k
    b[nchunks] = end
    return b


@njit(cache=True, error_model="numpy", nogil=True, parallel=True)
def _grad_hess_par(start, end, nchunks, row_idx, values, binary, nnz_stratum, run_end, texp, denom, wn):
    b = _chunk_bounds(start, end, nchunks, nnz_stratum)
    part = np.zeros((nchunks, 2))
    for c in prange(nchunks):
        g, h = _gh_range(b[c], b[c + 1], row_idx, values, binary, nnz_stratum, run_end, texp, denom, wn)
        part[c, 0] = g
        part[c, 1] = h
    return part[:, 0].sum(), part[:, 1].sum()


@njit(cache=True, error_model="numpy", nogil=True, parallel=True)
def _update_par(start, end, nchunks, delta, row_idx, values, binary, nnz_stratum, texp, denom):
    b = _chunk_bounds(start, end, nchunks, nnz_stratum)
    f = math.exp(delta)
    for c in prange(nchunks):
        _update_range(b[c], b[c + 1], delta, f, row_idx, values, binary, nnz_stratum, texp, denom)


@njit(cache=True, error_model="numpy", nogil=True)
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


@njit(cache=True, error_model="numpy", nogil=True)
def _sum_denominators(stratum_ptr, texp, denom):
    """D_s summed afresh from texp (removes the round-off of the additive D updates)."""
    for s in range(stratum_ptr.shape[0] - 1):
        d = 0.0
        for i in range(stratum_ptr[s], stratum_ptr[s + 1]):
            d += texp[i]
        denom[s] = d


@njit(cache=True, error_model="numpy", nogil=True)
def _weighted_log_denominators(wn, denom):
    acc = 0.0
    for s in range(denom.shape[0]):
        if wn[s] != 0.0:
            acc += wn[s] * math.log(denom[s])
    return acc


class CpuEngine(Engine):
    """Numba engine holding the CCD state for one :class:`SCCSData` (see module docstring).

    ``dtype`` is the storage precision of the per-row and per-stratum state (``texp``, ``D``);
    sums are accumulated in float64 in either case.
    """

    backend = "cpu"

    def __init__(self, data, *, weights=None, dtype=np.float64):
        super().__init__(data, weights=weights, dtype=dtype)
        self._binary = data.values is None
        self._values = np.ones(1) if self._binary else data.values
        # per-data-set arrays computed once and shared by every engine on the data (CV folds,
        # bootstrap replicates, profiles)
        self._logtime = data.log_time
        self._texp = data.time.astype(self.dtype)
        self._denom = np.zeros(data.n_strata, dtype=self.dtype)
        self._ll_s = np.zeros(data.n_strata)
        self._col_ptr = data.col_ptr
        # stratum of every non-zero: one dependent load less per non-zero in the hot loops
        self._nnz_stratum = data.nnz_stratum
        self._run_end = data.nnz_run_end
        self._threads = get_num_threads()
        self._init_state(weights)

    # -------------------------------------------------------------- state
    def _put_weights(self, w):
        d = self.data
        self._wn = w * d.n_events
        self._wylogt = float(np.dot(w[d.row_stratum] * d.y, self._logtime))

    def _put_eta(self, eta):
        d = self.data
        _resync(d.stratum_ptr, d.y, self._logtime, eta, self._texp, self._denom, d.n_events, self._ll_s)

    # -------------------------------------------------------------- hot steps
    def gradient_hessian(self, j):
        """(g, h): d loglik / d b_j and -d^2 loglik / d b_j^2 at the current state (weighted)."""
        d = self.data
        a, b = self._col_ptr[j], self._col_ptr[j + 1]
        if self._threads > 1 and b - a >= PARALLEL_MIN_NNZ:
            G, H = _grad_hess_par(a, b, self._threads, d.row_idx, self._values, self._binary, self._nnz_stratum,
                                  self._run_end, self._texp, self._denom, self._wn)
        else:
            G, H = _grad_hess(a, b, d.row_idx, self._values, self._binary, self._nnz_stratum, self._run_end,
                              self._texp, self._denom, self._wn)
        return self.xty[j] - G, H

    def _step(self, j, delta):
        d = self.data
        a, b = self._col_ptr[j], self._col_ptr[j + 1]
        if self._threads > 1 and b - a >= PARALLEL_MIN_NNZ:
            _update_par(a, b, self._threads, delta, d.row_idx, self._values, self._binary, self._nnz_stratum,
                        self._texp, self._denom)
        else:
            _update(a, b, delta, d.row_idx, self._values, self._binary, self._nnz_stratum, self._texp, self._denom)

    def _log_likelihood(self):
        # sum_i w y_i x_i'b = sum_j b_j c_j needs no linear predictor; D is summed afresh
        d = self.data
        _sum_denominators(d.stratum_ptr, self._texp, self._denom)
        return float(np.dot(self.beta, self.xty) + self._wylogt - _weighted_log_denominators(self._wn, self._denom))

    def _stratum_log_likelihood(self):
        return self._ll_s.copy()
