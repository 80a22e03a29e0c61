"""The TDP-mixture engine interface, :func:`make_engine`, and host-side helpers of both engines.

An engine holds the STANDARDISED data (n x p) and offers the hot steps the algorithms in
:mod:`.gibbs` and :mod:`.bem` are written against; both engines (:class:`~.cpu.CpuEngine`,
:class:`~.gpu.GpuEngine`) derive from :class:`Engine` and mean the same by each step:

``set_components(log_weights, means, prec_factors, logdets)``
    load the k component parameters (standardised units) for the next steps.
``sample_labels(u)``
    draw every label z_i from its configuration probabilities given uniforms ``u`` (n,);
    the total log-likelihood of the data is left in ``engine.loglik``.
``label_stats()``
    (k, F) sums of the quadratic features per component for the last labels (Gibbs).
``responsibilities_stats()``
    ``(loglik, T)``: the BEM E-step, T the (k, F) responsibility-weighted feature sums.
``log_density(X)`` / ``component_log_density(X)``
    mixture log density / the n x k weighted log component densities at new rows.

The host-side helpers here (quadratic features in NumPy, the coefficient matrix) are used by
both engines and by prediction, which runs on the host in NumPy unless a GPU engine fitted
the model.
"""
from __future__ import annotations

import numpy as np

from .._backend import get_device, is_gpu_backend
from .._validate import check_dtype
from ._math import LOG_2PI

__all__ = [
    "Engine",
    "make_engine",
    "n_features",
    "feature_pairs",
    "features_numpy",
    "build_coefficients",
]


def make_engine(X, *, backend: str, dtype=np.float64, chunk_size=None, threads=None):
    """The engine for an already resolved backend (``"cpu"``, ``"gpu"`` or ``"emulator"``)
    holding the standardised data ``X`` (n, p).

    The GPU engine receives its device here (:func:`hphawkes_py._backend.get_device`, the one
    registry); engines never fetch devices themselves.  ``threads`` is the CPU engine's worker
    count (None: Numba's setting).
    """
    dtype = check_dtype(dtype)
    if is_gpu_backend(backend):
        from .gpu import GpuEngine

        return GpuEngine(X, backend=backend, dtype=dtype, chunk_size=chunk_size, device=get_device(backend))
    if backend != "cpu":
        raise ValueError(f"make_engine needs a resolved backend ('cpu', 'gpu' or 'emulator'), got {backend!r}")
    from .cpu import CpuEngine

    return CpuEngine(X, chunk_size=chunk_size or 256, dtype=dtype, threads=threads)


# ---------------------------------------------------------------------------- host helpers
def n_features(p: int) -> int:
    """Number of quadratic features 1 + p + p(p+1)/2."""
    return 1 + p + p * (p + 1) // 2


def feature_pairs(p: int):
    """(fa, fb) int32 (F,): feature f is x[fa[f]] * x[fb[f]] with -1 meaning the constant 1.

    Order: [1, x_1..x_p, x_a x_b for a <= b row-major], the layout of :func:`features_numpy`
    and of the columns of the sufficient statistics.
    """
    fa = [-1] + list(range(p))
    fb = [-1] * (p + 1)
    for a in range(p):
        for b in range(a, p):
            fa.append(a)
            fb.append(b)
    return np.asarray(fa, dtype=np.int32), np.asarray(fb, dtype=np.int32)


def features_numpy(X: np.ndarray) -> np.ndarray:
    """Quadratic features ``[1, x, x_a x_b (a <= b)]`` of the rows of X (n x F), in NumPy."""
    X = np.asarray(X, dtype=np.float64)
    n, p = X.shape
    a, b = np.triu_indices(p)
    out = np.empty((n, n_features(p)))
    out[:, 0] = 1.0
    out[:, 1 : 1 + p] = X
    out[:, 1 + p :] = X[:, a] * X[:, b]
    return out


def build_coefficients(log_weights, means, prec_factors, logdets) -> np.ndarray:
    """The F x k coefficient matrix W with ``phi(x) @ W[:, j] = log pi_j + log N(x | mu_j, Sigma_j)``.

    ``prec_factors[j]`` is a (lower-triangular) U_j with U_j' U_j = Sigma_j^{-1}; ``logdets[j]``
    is log|Sigma_j|.  Components with log weight -inf get -inf densities.
    """
    log_weights = np.asarray(log_weights, dtype=np.float64)
    means = np.asarray(means, dtype=np.float64)
    U = np.asarray(prec_factors, dtype=np.float64)
    k, p = means.shape
    P = np.matmul(np.swapaxes(U, 1, 2), U)  # precisions U'U (a batched matmul, where einsum loops)
    Pm = np.matmul(P, means[:, :, None])[:, :, 0]
    quad = np.einsum("ja,ja->j", Pm, means)
    W = np.empty((n_features(p), k))
    with np.errstate(invalid="ignore"):
        W[0] = log_weights - 0.5 * p * LOG_2PI - 0.5 * np.asarray(logdets, dtype=np.float64) - 0.5 * quad
    W[1 : 1 + p] = Pm.T
    a, b = np.triu_indices(p)
    # diagonal terms -P_aa / 2, off-diagonal -P_ab (both orders of the symmetric form)
    W[1 + p :] = np.where(a == b, -0.5, -1.0)[:, None] * P[:, a, b].T
    return W


# ---------------------------------------------------------------------------- base class
class Engine:
    """Shared part of both engines: the data shape, the number of features, and the state
    (``k``, ``z``, ``loglik``) the hot steps leave behind.  See the module docstring for the
    meaning of each step; subclasses implement them."""

    backend = "cpu"

    def __init__(self, X, *, dtype=np.float64):
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        self.n, self.p = self.X.shape
        self.F = n_features(self.p)
        self.dtype = check_dtype(dtype)
        self.k = None
        self.z = None
        self.loglik = None

    def set_components(self, log_weights, means, prec_factors, logdets) -> None:  # pragma: no cover
        raise NotImplementedError

    def sample_labels(self, uniforms, return_labels: bool = True):  # pragma: no cover
        raise NotImplementedError

    def label_stats(self) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def responsibilities_stats(self):  # pragma: no cover
        raise NotImplementedError

    def log_density(self, X) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def component_log_density(self, X) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def _check_uniforms(self, uniforms) -> np.ndarray:
        u = np.ascontiguousarray(uniforms, dtype=np.float64)
        if u.shape != (self.n,):
            raise ValueError(f"uniforms must have shape ({self.n},), got {u.shape}")
        return u

    def close(self) -> None:
        """Release worker threads / device buffers (the engine is not used afterwards)."""
