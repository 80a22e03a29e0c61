"""The blocked Gibbs sampler of the TDP mixture (Ishwaran & James 2001; Suchard et al. 2010).

One sweep (:func:`gibbs_sweep`) is written once against an engine (``cpu.CpuEngine`` or
``gpu.GpuEngine``, made by :func:`.engine.make_engine`) that owns the hot step, the labels of
all n points; the conjugate updates work on k-sized arrays in NumPy (:mod:`._math`).
:func:`gibbs_chain` runs one chain and keeps its draws.
"""
from __future__ import annotations

import numpy as np

from .._backend import threads_context
from .._progress import progress_bar
from . import _math as M
from ._math import GibbsState, Priors
from .engine import make_engine
from .initial_values import initial_state

__all__ = ["gibbs_sweep", "gibbs_chain"]


def gibbs_sweep(engine, rng: np.random.Generator, state: GibbsState, priors: Priors) -> GibbsState:
    """One sweep of the blocked Gibbs sampler (Ishwaran & James 2001; Suchard et al. 2010):

    (a) z_i | x, pi, mu, Sigma on the engine (uniforms drawn here, so every engine draws the
    same labels); (b) (mu_j, Sigma_j) | z, x by the conjugate updates; (c) sticks v_j | z, alpha;
    (d) alpha | v.  Returns the new state (the counts N and the log-likelihood of step (a)).
    """
    k = state.mu.shape[0]
    L, U, logdet = M.chol_factors(state.Sigma)
    engine.set_components(state.log_w, state.mu, U, logdet)
    engine.sample_labels(rng.random(engine.n), return_labels=False)
    loglik = engine.loglik
    N, S1, S2 = M.unpack_stats(engine.label_stats(), engine.p)
    v, log_w = M.gibbs_sticks(rng, N, state.alpha)
    alpha = M.gibbs_alpha(rng, v, k, priors.e0, priors.f0) if k > 1 else state.alpha
    mu, Sigma = M.gibbs_mu_sigma(rng, N, S1, S2, L, priors.m0, priors.gamma0, priors.nu0, priors.Phi0)
    return GibbsState(mu, Sigma, log_w, alpha, N, loglik)


def gibbs_chain(chain, seed, job):
    """Run one Gibbs chain (module level: picklable for process pools and Dask).

    Returns the stored draws (standardised units), the per-sweep log-likelihood, the number of
    occupied components and alpha at the stored sweeps, and the last labels.
    """
    rng = np.random.default_rng(seed)
    Xs, k, priors = job["Xs"], job["k"], job["priors"]
    burn_in, n_iter, thin = job["burn_in"], job["n_iter"], job["thin"]
    total = burn_in + n_iter
    S = n_iter // thin
    n, p = Xs.shape
    out = {
        "weights": np.empty((S, k)),
        "means": np.empty((S, k, p)),
        "covariances": np.empty((S, k, p, p)),
        "alpha": np.empty(S),
        "loglik_stored": np.empty(S),
        "occupied": np.empty(S),
        "loglik": np.empty(total),
    }
    with threads_context(job["threads"] if job["backend"] == "cpu" else None):
        engine = make_engine(Xs, backend=job["backend"], dtype=job["dtype"], chunk_size=job["chunk_size"],
                             threads=job["threads"])
        try:
            state = initial_state(Xs, k, rng, job["init"])
            s = 0
            desc = "TDP Gibbs" if job["chains"] == 1 else f"TDP Gibbs chain {chain + 1}"
            with progress_bar(total, desc, job["progress"]) as bar:
                for it in range(total):
                    state = gibbs_sweep(engine, rng, state, priors)
                    out["loglik"][it] = state.loglik
                    j = it - burn_in
                    if j >= 0 and (j + 1) % thin == 0 and s < S:
                        out["weights"][s] = np.exp(state.log_w)
                        out["means"][s] = state.mu
                        out["covariances"][s] = state.Sigma
                        out["alpha"][s] = state.alpha
                        out["loglik_stored"][s] = state.loglik
                        out["occupied"][s] = np.count_nonzero(state.N)
                        s += 1
                    bar.update(1)
            out["labels"] = np.asarray(engine.z, dtype=np.int64)
        finally:
            engine.close()
    return out
