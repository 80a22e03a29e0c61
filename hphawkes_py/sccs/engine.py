"""The SCCS engine interface, :func:`make_engine`, and host-side helpers used by both engines.

An engine owns the data and the CCD state for one :class:`~.data.SCCSData` and offers the
hot steps the algorithm in :mod:`.ccd` is written against. Both engines
(:class:`~.cpu.CpuEngine`, :class:`~.gpu.GpuEngine`) derive from :class:`Engine`, which
keeps the host copy of the coefficients, so that every step means the same on both:

``set_weights(w)``
    per-stratum weights (bootstrap multiplicities, CV training indicators); ``None`` = ones.
``set_beta(b)``
    move the state to coefficients ``b`` (exact recomputation of ``time * exp(X b)``).
``gradient_hessian(j)``
    ``(g, h)``: ``d l / d b_j`` and ``-d^2 l / d b_j^2`` (weighted) at the current state.
``update(j, delta)``
    ``b_j += delta`` with a sparse update of the state.
``log_likelihood(beta=None)``
    weighted conditional log-likelihood at ``beta`` (the state is moved there first when it
    differs from the current coefficients); at the current coefficients when ``None``.
``stratum_log_likelihood(beta=None)``
    unweighted per-stratum log-likelihood at ``beta`` (or the current coefficients), by a full
    recomputation.
"""
from __future__ import annotations

import numpy as np

from .._backend import get_device, is_gpu_backend
from .._validate import check_dtype

__all__ = ["Engine", "make_engine", "eta_from_beta", "weighted_xty", "stratum_runs", "information_matrix"]


def make_engine(data, *, backend: str, weights=None, dtype=np.float64):
    """Engine for ``data`` on an already resolved backend (``"cpu"``, ``"gpu"`` or ``"emulator"``).

    The GPU engine receives its device here (:func:`hphawkes_py._backend.get_device`); engines
    never fetch devices themselves.
    """
    dtype = check_dtype(dtype)
    if is_gpu_backend(backend):
        from .gpu import GpuEngine

        return GpuEngine(data, weights=weights, device=get_device(backend), backend=backend, dtype=dtype)
    if backend != "cpu":
        raise ValueError(f"make_engine needs a resolved backend ('cpu', 'gpu' or 'emulator'), got {backend!r}")
    from .cpu import CpuEngine

    return CpuEngine(data, weights=weights, dtype=dtype)


# ---------------------------------------------------------------------------- host helpers
def eta_from_beta(data, beta: np.ndarray) -> np.ndarray:
    """Linear predictor ``X b`` per row (float64). Non-zeros are summed in column order."""
    beta = np.asarray(beta, dtype=np.float64)
    if not beta.any():  # every fit starts here: O(rows) instead of O(nnz)
        return np.zeros(data.n_rows)
    x = beta[data.column_of_nnz()]
    if data.values is not None:
        x = x * data.values
    return np.bincount(data.row_idx, weights=x, minlength=data.n_rows)


def weighted_xty(data, w: np.ndarray) -> np.ndarray:
    """``c_j = sum_i w_{s(i)} y_i x_ij``, the constant part of the gradient (float64), summed
    over the non-zeros of rows with events only (in column order)."""
    k = data.event_nnz
    rows = data.row_idx[k]
    wy = w[data.row_stratum[rows]] * data.y[rows]
    if data.values is not None:
        wy = wy * data.values[k]
    cols = np.searchsorted(data.col_ptr, k, side="right") - 1
    return np.bincount(cols, weights=wy, minlength=data.n_covariates).astype(np.float64)


def stratum_runs(data):
    """Runs of each column's non-zeros that fall in one stratum.

    Returns ``(run_start, run_stratum, col_run_ptr)``: run ``r`` covers non-zeros
    ``run_start[r]:run_start[r+1]`` (``run_start`` has a final sentinel ``nnz``), all in
    stratum ``run_stratum[r]``; the runs of column ``j`` are ``col_run_ptr[j]:col_run_ptr[j+1]``.
    """
    nnz = data.nnz
    s = data.row_stratum[data.row_idx]
    new = np.ones(nnz, dtype=bool)
    if nnz:
        new[1:] = s[1:] != s[:-1]
        starts_col = data.col_ptr[:-1][np.diff(data.col_ptr) > 0]
        new[starts_col] = True
    run_start = np.flatnonzero(new).astype(np.int64)
    run_stratum = s[run_start].astype(np.int32)
    col_run_ptr = np.searchsorted(run_start, data.col_ptr, side="left").astype(np.int64)
    return np.append(run_start, np.int64(nnz)), run_stratum, col_run_ptr


def information_matrix(data, beta, weights=None, columns=None) -> np.ndarray:
    """Observed information ``-d^2 l / d b d b'`` of the conditional likelihood (float64).

    Per stratum ``s`` with probabilities ``p_i = t_i exp(x_i'b) / D_s``:
    ``I = sum_s w_s n_s (sum_i p_i x_i x_i' - m_s m_s')``, ``m_s = sum_i p_i x_i``. Computed on
    the host with sparse products over the columns asked for (``columns``: covariate indices,
    default all), so its cost is O(nnz of those columns); returns ``(k, k)``.
    """
    from scipy import sparse

    J = data.n_covariates
    cols = np.arange(J) if columns is None else np.asarray(columns, dtype=np.int64)
    w = np.ones(data.n_strata) if weights is None else np.asarray(weights, dtype=np.float64)
    eta = eta_from_beta(data, beta)
    lin = eta + np.log(data.time)
    # per-stratum shift before exp: p_i is invariant to it and it keeps exp() finite
    shift = np.maximum.reduceat(lin, data.stratum_ptr[:-1]) if data.n_rows else lin
    e = np.exp(lin - shift[data.row_stratum])
    denom = np.bincount(data.row_stratum, weights=e, minlength=data.n_strata)
    p = e / denom[data.row_stratum]
    vals = np.ones(data.nnz) if data.values is None else data.values
    X = sparse.csc_matrix((vals, data.row_idx, data.col_ptr), shape=(data.n_rows, J))[:, cols]
    wn = w * data.n_events
    a = wn[data.row_stratum] * p
    A = (X.T @ sparse.diags(a) @ X).toarray()
    # per-stratum means m_s as a sparse (strata, k) matrix: dense would be n_strata x k
    S = sparse.csr_matrix((p, (data.row_stratum, np.arange(data.n_rows))), shape=(data.n_strata, data.n_rows))
    M = (S @ X).tocsc()
    return A - (M.T @ sparse.diags(wn) @ M).toarray()


# ---------------------------------------------------------------------------- base class
class Engine:
    """Shared part of both engines: weights, the host copy of the coefficients, and the
    meaning of ``log_likelihood(beta)`` / ``stratum_log_likelihood(beta)`` (see module docs).

    Subclasses implement ``_put_weights(w)``, ``_put_eta(eta)``, ``_step(j, delta)``,
    ``_log_likelihood()``, ``_stratum_log_likelihood()`` and ``gradient_hessian(j)``.
    """

    backend = "cpu"

    def __init__(self, data, *, weights=None, dtype=np.float64):
        self.data = data
        self.dtype = check_dtype(dtype)
        self.n_covariates = data.n_covariates
        self.beta = np.zeros(data.n_covariates)
        self._exact = False  # the state was recomputed from self.beta and not updated since

    def _init_state(self, weights):
        """Called by the subclass once its buffers exist: weights, then the state at b = 0."""
        self.set_weights(weights)
        self.set_beta(self.beta)

    def set_weights(self, weights=None):
        """Per-stratum weights (multiplicities); ``None`` = all ones."""
        d = self.data
        w = np.ones(d.n_strata) if weights is None else np.array(weights, dtype=np.float64)
        self.weights = w
        self.xty = weighted_xty(d, w)
        self._put_weights(w)
        self._exact = False  # engines may keep weight-dependent state that set_beta refreshes

    def set_beta(self, beta):
        """Set all coefficients: the state is recomputed exactly from ``X b`` (skipped when it
        was just recomputed for the same coefficients, e.g. a fit on a fresh engine)."""
        beta = np.array(beta, dtype=np.float64)
        if self._exact and beta.shape == self.beta.shape and np.array_equal(beta, self.beta):
            return
        self.beta = beta
        self._put_eta(eta_from_beta(self.data, self.beta))
        self._exact = True

    def update(self, j, delta):
        """Add ``delta`` to coefficient ``j`` (sparse update of the state)."""
        self.beta[j] += delta
        self._exact = False
        self._step(j, float(delta))

    def _move_to(self, beta):
        if beta is not None:
            beta = np.asarray(beta, dtype=np.float64)
            if beta.shape != self.beta.shape or not np.array_equal(beta, self.beta):
                self.set_beta(beta)

    def log_likelihood(self, beta=None):
        """Weighted conditional log-likelihood at ``beta`` (default: the current coefficients)."""
        self._move_to(beta)
        return self._log_likelihood()

    def stratum_log_likelihood(self, beta=None):
        """Unweighted per-stratum log-likelihood at ``beta`` (default: the current coefficients),
        by a full recomputation (O(nnz + rows))."""
        self.set_beta(self.beta if beta is None else beta)
        return self._stratum_log_likelihood()
