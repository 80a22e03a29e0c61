"""Bayesian EM for the TDP mixture: the posterior mode, with optional pruning of light components.

An ECM algorithm: the E-step (the engine's responsibility-weighted feature sums of all n
points) is followed by the mode of each full conditional given them (:mod:`._math`), so the
log posterior never decreases.  Written once against an engine made by
:func:`.engine.make_engine`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._backend import threads_context
from .._progress import progress_bar
from . import _math as M
from ._math import Priors
from .engine import make_engine
from .initial_values import initial_state

__all__ = ["bayesian_em", "BemResult", "PRUNE_SETTLED"]

#: BEM prunes once the relative change of the log posterior per iteration is below this
PRUNE_SETTLED = 1e-5


@dataclass
class BemResult:
    """The posterior mode found by :func:`bayesian_em` (standardised units).

    ``log_w`` is -inf for pruned components (``active`` False); ``loglik`` and
    ``log_posterior`` are the traces over the iterations run.
    """

    mu: np.ndarray  # (k, p)
    Sigma: np.ndarray  # (k, p, p)
    log_w: np.ndarray  # (k,)
    alpha: float
    active: np.ndarray  # (k,) bool
    loglik: np.ndarray
    log_posterior: np.ndarray
    n_iter: int
    converged: bool


def bayesian_em(Xs, k: int, priors: Priors, init, rng, *, n_iter: int, tol: float, prune: float, backend: str,
                dtype, chunk_size, threads, progress: bool) -> BemResult:
    """Bayesian EM from :func:`.initial_values.initial_state` until the relative change of the
    log posterior is at most ``tol`` (or ``n_iter`` iterations).

    With ``prune > 0``, once the fit has settled (change at most ``max(tol, PRUNE_SETTLED)``),
    the lightest component whose weight is below ``prune`` is removed, one per iteration; the
    fit converges only with every kept weight >= ``prune``.
    """
    n, p = Xs.shape
    e0, f0 = priors.e0, priors.f0
    ll_trace, lp_trace = [], []
    converged = False
    lp_prev = None
    state = initial_state(Xs, k, rng, init)
    mu, Sigma, log_w, alpha = state.mu, state.Sigma, state.log_w, state.alpha
    v = 1.0 / (k - np.arange(k - 1.0))  # the sticks of equal weights 1/k
    active = np.ones(k, dtype=bool)
    with threads_context(threads if backend == "cpu" else None):
        engine = make_engine(Xs, backend=backend, dtype=dtype, chunk_size=chunk_size, threads=threads)
        try:
            with progress_bar(n_iter, "TDP BEM", progress) as bar:
                for it in range(n_iter):
                    L, U, logdet = M.chol_factors(Sigma)
                    engine.set_components(log_w, mu, U, logdet)
                    ll, T = engine.responsibilities_stats()
                    Phi_a = priors.Phi0 if priors.Phi0.ndim == 2 else priors.Phi0[active]
                    lp = ll + M.log_prior(mu[active], Sigma[active], v, alpha, priors.m0, priors.gamma0,
                                          priors.nu0, Phi_a, e0, f0)
                    ll_trace.append(ll)
                    lp_trace.append(lp)
                    bar.update(1)
                    N, S1, S2 = M.unpack_stats(T, p)
                    change = None if lp_prev is None else abs(lp - lp_prev) / abs(lp_prev)
                    # pruning waits until the fit has settled (weights of a fresh start are all
                    # ~1/k); components below the threshold are removed, and the fit goes on
                    low = active & (N / n < prune) if prune > 0 else np.zeros(k, dtype=bool)
                    if low.all():
                        low[np.argmax(N)] = False
                    if change is not None and change <= tol and not low.any():
                        converged = True
                        break
                    lp_prev = lp
                    mu, Sigma = M.bem_mu_sigma(N, S1, S2, priors.m0, priors.gamma0, priors.nu0, priors.Phi0)
                    if low.any() and change is not None and change <= max(tol, PRUNE_SETTLED):
                        # one component at a time (the lightest): its points move to the others,
                        # which may lift them above the threshold
                        active[np.flatnonzero(low)[np.argmin(N[low])]] = False
                        lp_prev = None  # a smaller model: the objective changed
                    v, lw = M.bem_sticks(N[active], alpha)
                    log_w = np.full(k, -np.inf)
                    log_w[active] = lw
                    if active.sum() > 1:
                        alpha = M.bem_alpha(v, int(active.sum()), e0, f0)
        finally:
            engine.close()
    return BemResult(mu, Sigma, log_w, alpha, active, np.asarray(ll_trace), np.asarray(lp_trace), it + 1, converged)
