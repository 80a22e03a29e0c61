"""The fitted density used for prediction: plug-in or posterior predictive, on the host or the device.

The plug-in density is the mixture of the point estimates; the posterior predictive density
averages the mixtures of the stored Gibbs draws.  Both are a :class:`PredictionMixture` in
STANDARDISED units, evaluated in NumPy on the host (:meth:`PredictionMixture.log_density`,
:meth:`PredictionMixture.proba`) or, after a fit on a GPU backend, by the engine's density
kernels (:func:`log_density`, :func:`proba` choose).
"""
from __future__ import annotations

import math

import numpy as np

from . import _math as M
from .engine import build_coefficients, features_numpy, make_engine

__all__ = ["PredictionMixture", "log_density", "proba", "PREDICTION_BUFFER_BYTES"]

#: device memory for the (terms x chunk) density buffer of one prediction launch, bytes
PREDICTION_BUFFER_BYTES = 1 << 28


def _logsumexp(D: np.ndarray, axis: int) -> np.ndarray:
    """``log sum exp(D)`` along ``axis``, stable for any finite or -inf entries (all -inf gives
    -inf)."""
    m = D.max(axis=axis)
    safe = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return safe + np.log(np.exp(D - np.expand_dims(safe, axis)).sum(axis=axis))


def _normalise_log_rows(A):
    """In place: each row of log weights A (m, k) becomes probabilities, exp(A - max) / sum."""
    A -= A.max(1, keepdims=True)
    np.exp(A, out=A)
    A /= A.sum(1, keepdims=True)
    return A


class PredictionMixture:
    """A Gaussian mixture of K' components (standardised units) used for prediction.

    The plug-in density has the k point-estimate components; the posterior predictive
    density ``(1/S) sum_s f_s(x)`` has the S x k components of the stored draws with weights
    ``w_sj / S``.  ``label[c]`` is the component index j of term c, so that label
    probabilities add up the draws of one (relabelled) component.

    Log densities use the quadratic-feature product (one GEMM) where it is accurate, and a
    direct, scaled triangular evaluation for rows far from the data (|x| > 1e4 standardised
    units) or where the product overflows: there, per-row shifts keep every log density
    difference, hence every probability, finite (``predict_proba([[1e200, 1e200]])``).
    """

    FAR = 1e4

    def __init__(self, log_w, mu, Sigma, k: int, label=None):
        self.log_w = np.asarray(log_w, dtype=np.float64).reshape(-1)
        self.mu = np.asarray(mu, dtype=np.float64).reshape(-1, mu.shape[-1])
        Sigma = np.asarray(Sigma, dtype=np.float64).reshape(-1, mu.shape[-1], mu.shape[-1])
        self.K, self.p = self.mu.shape
        self.k = int(k)
        self.label = np.arange(self.K) % self.k if label is None else np.asarray(label)
        self.n_draws = self.K // self.k
        _, self.U, logdet = M.chol_factors(Sigma)
        self.logdet = logdet
        self.c = self.log_w - 0.5 * self.p * M.LOG_2PI - 0.5 * logdet
        self.W = build_coefficients(self.log_w, self.mu, self.U, logdet)

    def _chunk(self) -> int:
        return max(1, (1 << 23) // max(1, self.K))  # <= 64 MiB of log densities per chunk

    def log_terms(self, Xs):
        """(D (m, K'), shift (m,)): the log of weight x density of every term is D - shift."""
        with np.errstate(over="ignore", invalid="ignore"):  # far rows overflow here; redone below
            D = features_numpy(Xs) @ self.W
        shift = np.zeros(Xs.shape[0])
        with np.errstate(invalid="ignore"):
            bad = (np.isnan(D) | (D == np.inf)).any(1) | ~(D.max(1) > -np.inf) | (np.abs(Xs).max(1) > self.FAR)
        if bad.any():
            D[bad], shift[bad] = self._direct(Xs[bad])
        return D, shift

    def _direct(self, Xb):
        s = np.maximum(1.0, np.abs(Xb).max(1))  # scale so that no square overflows
        y = Xb[:, None, :] / s[:, None, None] - self.mu[None, :, :] / s[:, None, None]
        t = np.einsum("jab,ijb->ija", self.U, y)
        q = (t * t).sum(-1)  # q_ij = ||U_j (x_i - mu_j)||^2 / s_i^2
        live = np.isfinite(self.c)
        qmin = np.where(live[None, :], q, np.inf).min(1)
        with np.errstate(over="ignore", invalid="ignore"):  # r = inf far away: density 0, shift inf
            r = s * s
            dq = q - qmin[:, None]
            D = self.c[None, :] - 0.5 * np.where(dq == 0, 0.0, r[:, None] * dq)
            D = np.where(np.isnan(D), -np.inf, D)
            shift = 0.5 * r * qmin
        return D, shift

    def log_density(self, Xs):
        """(m,) log density of the mixture at the rows of Xs (host)."""
        out = np.empty(Xs.shape[0])
        step = self._chunk()
        for lo in range(0, Xs.shape[0], step):
            D, shift = self.log_terms(Xs[lo : lo + step])
            with np.errstate(over="ignore"):
                out[lo : lo + step] = _logsumexp(D, axis=1) - shift - math.log(self.n_draws)
        return out

    def log_component(self, Xs):
        """(m, k) log of sum over draws of the terms of each component, up to a per-row constant."""
        D, _ = self.log_terms(Xs)
        if self.n_draws == 1:
            return D
        return _logsumexp(D.reshape(D.shape[0], self.n_draws, self.k), axis=1)

    def proba(self, Xs):
        """(m, k) component probabilities at the rows of Xs (host)."""
        out = np.empty((Xs.shape[0], self.k))
        step = self._chunk()
        for lo in range(0, Xs.shape[0], step):
            out[lo : lo + step] = _normalise_log_rows(self.log_component(Xs[lo : lo + step]))
        return out


def _is_device(backend) -> bool:
    return backend in ("gpu", "emulator")


def _prediction_engine(Xs, mix, backend):
    chunk = max(1, PREDICTION_BUFFER_BYTES // (8 * mix.K))
    eng = make_engine(np.ascontiguousarray(Xs), backend=backend, chunk_size=chunk)
    eng.set_components(mix.log_w, mix.mu, mix.U, mix.logdet)
    return eng


def _on_device(mix, Xs, backend, out, host, device):
    """``out`` for the rows of Xs: ``device(engine, rows)`` on a prediction engine of the fit's
    backend for the rows near the data, ``host(rows)`` (the scaled evaluation of
    :class:`PredictionMixture`, finite where the plain quadratic form would overflow) for the
    rows farther than ``PredictionMixture.FAR`` standardised units."""
    far = np.abs(Xs).max(1) > mix.FAR
    if far.any():
        out[far] = host(Xs[far])
    near = ~far
    if near.any():
        eng = _prediction_engine(Xs[near], mix, backend)
        try:
            out[near] = device(eng, Xs[near])
        finally:
            eng.close()
    return out


def _device_proba(mix, Xs, backend):
    """Component probabilities on the fit's GPU engine: the density kernel over every term
    (component x stored draw), the draws of each component summed in log space on the device,
    normalised on the host."""
    return _on_device(mix, Xs, backend, np.empty((Xs.shape[0], mix.k)), mix.proba,
                      lambda eng, X: _normalise_log_rows(eng.component_group_log_density(X, mix.n_draws)))


def _device_log_density(mix, Xs, backend):
    """The prediction density on the fit's GPU engine: every term (component x stored draw) is one
    component of one launch of the density kernel, log-sum-exp on the device."""
    return _on_device(mix, Xs, backend, np.empty(Xs.shape[0]), mix.log_density,
                      lambda eng, X: eng.log_density(X) - math.log(mix.n_draws))


def proba(mix, Xs, backend):
    """(m, k) component probabilities of ``mix`` at the standardised rows Xs, on the fit's
    backend (the GPU engine for ``"gpu"``/``"emulator"``, NumPy otherwise)."""
    return _device_proba(mix, Xs, backend) if _is_device(backend) else mix.proba(Xs)


def log_density(mix, Xs, backend):
    """(m,) log density of ``mix`` at the standardised rows Xs (standardised units), on the
    fit's backend (the GPU engine for ``"gpu"``/``"emulator"``, NumPy otherwise)."""
    return _device_log_density(mix, Xs, backend) if _is_device(backend) else mix.log_density(Xs)
