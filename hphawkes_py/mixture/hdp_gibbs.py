"""Blocked Gibbs sampler and Bayesian EM of the truncated HDP mixture of normals (dpmix's ``HDPNormalMixture``).

Model (standardised units; groups j = 1..J, components k = 1..K; Cron, Suchard, West et al., dpmix)::

    x_ji | z_ji = k      ~ N(mu_k, Sigma_k)                      shared atoms
    P(z_ji = k)          = pi_jk
    pi_j | alpha0, beta  ~ DP(alpha0, beta) truncated = Dirichlet(alpha0 beta_1, ..., alpha0 beta_K),
                           written as sticks v_jk ~ Be(alpha0 beta_k, alpha0 sum_{l>k} beta_l)
    beta                 ~ GEM(alpha) truncated: sticks s_k ~ Be(1, alpha), beta_K = prod (1 - s_k)
    alpha                ~ Gamma(shape e0, rate f0);    alpha0 ~ Gamma(shape g0, rate h0)
    (mu_k, Sigma_k)      ~ the Normal-inverse-Wishart prior of :class:`TDPGaussianMixture`

One sweep (:func:`hdp_sweep`) follows dpmix's ``HDPNormalMixture.sample``: (a) the labels of
every group on that group's engine with the group's log weights (the engine's label kernel of
the DP mixture, :mod:`.engine`); (b) the atoms from the label statistics of all groups pooled
(:func:`._math.gibbs_mu_sigma`); (c) the group sticks v_j from their Beta conditionals;
(d) the top-level sticks s_k one at a time by Metropolis-Hastings with a normal proposal
reflected into [1e-9, 1 - 1e-9] (dpmix's ``sample_beta``); (e) alpha from its Gamma
conditional; (f) alpha0 by Metropolis-Hastings with the proposal |N(alpha0, scale)| (dpmix's
``sample_alpha0``).  The proposal scales start at 0.01 (sticks) and 1 (alpha0) and are tuned
every ``tune_interval`` burn-in sweeps by dpmix's acceptance-rate table (:func:`tune_scales`).
The target of (d) and (f) takes the group sticks of all J groups, as dpmix's Python
``beta_post`` does (its Cython ``beta_post`` loops over ``range(J - 1)``, leaving the last
group out of the likelihood of beta and alpha0).

All random numbers are drawn from one NumPy Generator in a fixed order, so a seed gives the
same chain bit for bit on every engine and thread count.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from .._backend import threads_context
from .._progress import progress_bar
from . import _math as M
from ._math import Priors
from .engine import make_engine
from .initial_values import initial_state

__all__ = [
    "HDPPriors",
    "HDPState",
    "hdp_sweep",
    "hdp_chain",
    "hdp_bem",
    "initial_hdp_state",
    "tune_scales",
    "state_from_bem",
    "HDPBemResult",
    "STICK_BOUNDS",
]

#: dpmix keeps the top-level sticks s_k inside [1e-9, 1 - 1e-9] (the proposal is reflected there)
STICK_BOUNDS = (1e-9, 1.0 - 1e-9)
#: dpmix's starting proposal scales: 0.01 for every stick s_k, 1 for alpha0
STICK_SCALE0, ALPHA0_SCALE0 = 0.01, 1.0
#: Beta parameters below the smallest normal double (a top-level weight that underflowed) are raised to it
_TINY = float(np.finfo(np.float64).tiny)
_ONE_MINUS = float(np.nextafter(1.0, 0.0))


@dataclass(frozen=True)
class HDPPriors:
    """Hyper-parameters of the HDP mixture (standardised units): the atoms' prior and alpha's
    Gamma(e0, f0) as :class:`._math.Priors`, and alpha0 ~ Gamma(shape g0, rate h0)."""

    atoms: Priors
    g0: float
    h0: float


@dataclass
class HDPState:
    """State of the HDP sampler (standardised units).

    ``sticks`` are the K - 1 top-level sticks s_k (beta follows from them); ``log_pi`` (J, K)
    and the group sticks' logs ``log_v``, ``log_1mv`` (J, K - 1) are the group weights;
    ``scale`` (K,) the MH proposal scales (sticks, then alpha0), ``accepted`` (K,) the accepted
    proposals since the last tuning; ``N`` (J, K) the counts of the last label draw.
    """

    mu: np.ndarray
    Sigma: np.ndarray
    log_pi: np.ndarray
    log_v: np.ndarray
    log_1mv: np.ndarray
    sticks: np.ndarray
    alpha: float
    alpha0: float
    scale: np.ndarray
    accepted: np.ndarray
    N: np.ndarray | None = None
    loglik: float = float("nan")


# ---------------------------------------------------------------------------- beta from its sticks
def beta_and_tail(sticks: np.ndarray):
    """(beta (K,), tail (K - 1,)): beta_k = s_k prod_{l<k}(1 - s_l), beta_K = prod (1 - s_l), and
    tail_k = sum_{l>k} beta_l = prod_{l<=k}(1 - s_l), computed from the sticks (no 1 - cumsum)."""
    log_tail = np.cumsum(np.log1p(-sticks))
    beta = np.exp(M.sticks_to_log_weights(sticks))
    return beta, np.exp(log_tail)


def _tail_counts_rows(N: np.ndarray) -> np.ndarray:
    """sum_{l>k} N_jl for k = 0..K-2, per row."""
    return np.cumsum(N[:, ::-1], axis=1)[:, ::-1][:, 1:]


def _log_weights_rows(log_v: np.ndarray, log_1mv: np.ndarray) -> np.ndarray:
    """log pi_j from the logs of each group's K - 1 sticks (pi_K = prod (1 - v))."""
    J = log_v.shape[0]
    cum = np.concatenate([np.zeros((J, 1)), np.cumsum(log_1mv, axis=1)], axis=1)
    return np.concatenate([log_v + cum[:, :-1], cum[:, -1:]], axis=1)


# ---------------------------------------------------------------------------- Numba kernels
@njit(cache=True, nogil=True)
def _stick_terms(sticks, sum_log_v, sum_log_1mv, J, alpha0, start, out):
    """out[l], l >= start: sum over the J groups of log Be(v_jl | alpha0 beta_l, alpha0 tail_l),
    from the column sums of log v_jl and log(1 - v_jl) (the Beta normaliser enters J times)."""
    cum = 0.0  # log prod_{r<l} (1 - s_r)
    for l in range(sticks.shape[0]):
        l1m = math.log1p(-sticks[l])
        if l >= start:
            a = max(alpha0 * math.exp(math.log(sticks[l]) + cum), _TINY)
            b = max(alpha0 * math.exp(cum + l1m), _TINY)
            c = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
            out[l] = J * c + (a - 1.0) * sum_log_v[l] + (b - 1.0) * sum_log_1mv[l]
        cum += l1m


@njit(cache=True, nogil=True)
def _mh_sticks(sticks, sum_log_v, sum_log_1mv, J, alpha0, alpha, normals, exps, scale, accepted, lo, hi):
    """dpmix's ``sample_beta``: each top-level stick s_k in turn, a normal proposal reflected into
    [lo, hi], accepted when an Exp(1) variate exceeds log p(old) - log p(new) (the Beta
    likelihood of all group sticks and the Be(1, alpha) prior of s_k).  In place."""
    K1 = sticks.shape[0]
    terms = np.empty(K1)
    prop_terms = np.empty(K1)
    _stick_terms(sticks, sum_log_v, sum_log_1mv, J, alpha0, 0, terms)
    for k in range(K1):
        old = sticks[k]
        prop = old + scale[k] * normals[k]
        while prop > hi or prop < lo:
            if prop > hi:
                prop = 2.0 * hi - prop
            else:
                prop = 2.0 * lo - prop
        sticks[k] = prop
        _stick_terms(sticks, sum_log_v, sum_log_1mv, J, alpha0, k, prop_terms)
        # terms l < k do not depend on s_k; the difference is summed, not the two totals
        delta = (alpha - 1.0) * (math.log1p(-prop) - math.log1p(-old))
        for l in range(k, K1):
            delta += prop_terms[l] - terms[l]
        if exps[k] > -delta:
            accepted[k] += 1.0
            for l in range(k, K1):
                terms[l] = prop_terms[l]
        else:
            sticks[k] = old


def _group_stick_loglik(sticks, sum_log_v, sum_log_1mv, J, alpha0) -> float:
    out = np.empty(sticks.shape[0])
    _stick_terms(sticks, sum_log_v, sum_log_1mv, J, alpha0, 0, out)
    return float(out.sum())


# ---------------------------------------------------------------------------- conditional steps
def draw_group_sticks(rng, N, sticks, alpha0):
    """Step (c): v_jk ~ Be(alpha0 beta_k + N_jk, alpha0 tail_k + sum_{l>k} N_jl) for every group
    (the stick form of pi_j ~ Dirichlet(alpha0 beta + N_j)).  Returns (log v, log(1 - v), log pi)."""
    beta, tail = beta_and_tail(sticks)
    a = np.maximum(alpha0 * beta[:-1] + N[:, :-1], _TINY)
    b = np.maximum(alpha0 * tail + _tail_counts_rows(N), _TINY)
    v = np.clip(rng.beta(a, b), 1e-300, _ONE_MINUS)  # keep log(v), log(1 - v) finite
    log_v, log_1mv = np.log(v), np.log1p(-v)
    return log_v, log_1mv, _log_weights_rows(log_v, log_1mv)


def mh_alpha0(rng, state: HDPState, g0: float, h0: float) -> float:
    """Step (f), dpmix's ``sample_alpha0``: proposal |alpha0 + scale N(0, 1)|, target the group
    sticks' Beta likelihood times the Gamma(g0, h0) prior."""
    z, e = rng.standard_normal(), rng.exponential()
    J = state.log_v.shape[0]
    slv, sl1 = state.log_v.sum(0), state.log_1mv.sum(0)
    old = state.alpha0
    prop = abs(old + state.scale[-1] * z)
    if not prop > 0.0:
        return old

    def lpost(a0):
        return _group_stick_loglik(state.sticks, slv, sl1, J, a0) + (g0 - 1.0) * math.log(a0) - h0 * a0

    if e > lpost(old) - lpost(prop):
        state.accepted[-1] += 1.0
        return prop
    return old


def tune_scales(scale: np.ndarray, accepted: np.ndarray, interval: int) -> None:
    """dpmix's ``_tune``, in place: each proposal scale is multiplied by the square root of
    0.1, 0.5, 0.9 (acceptance rate below 0.001, 0.05, 0.2) or of 10, 2, 1.1 (above 0.95, 0.75, 0.5),
    and the acceptance counts are reset."""
    rate = accepted / interval
    factor = np.select(
        [rate < 0.001, rate < 0.05, rate < 0.2, rate > 0.95, rate > 0.75, rate > 0.5],
        [0.1, 0.5, 0.9, 10.0, 2.0, 1.1],
        default=1.0,
    )
    scale *= np.sqrt(factor)
    accepted[:] = 0.0


def hdp_sweep(engines, rng: np.random.Generator, state: HDPState, priors: HDPPriors) -> HDPState:
    """One sweep (a)-(f) of the blocked Gibbs sampler (module docstring); updates ``state``."""
    K = state.mu.shape[0]
    p = engines[0].p
    L, U, logdet = M.chol_factors(state.Sigma)
    T = None
    N = np.empty((len(engines), K))
    loglik = 0.0
    for j, eng in enumerate(engines):  # (a), group by group, in group order
        eng.set_components(state.log_pi[j], state.mu, U, logdet)
        eng.sample_labels(rng.random(eng.n), return_labels=False)
        loglik += eng.loglik
        Tj = eng.label_stats()
        N[j] = Tj[:, 0]
        T = Tj.copy() if T is None else T + Tj
    Np, S1, S2 = M.unpack_stats(T, p)
    a = priors.atoms
    state.mu, state.Sigma = M.gibbs_mu_sigma(rng, Np, S1, S2, L, a.m0, a.gamma0, a.nu0, a.Phi0)  # (b)
    state.log_v, state.log_1mv, state.log_pi = draw_group_sticks(rng, N, state.sticks, state.alpha0)  # (c)
    normals, exps = rng.standard_normal(K - 1), rng.exponential(size=K - 1)  # (d)
    _mh_sticks(state.sticks, state.log_v.sum(0), state.log_1mv.sum(0), len(engines), state.alpha0, state.alpha,
               normals, exps, state.scale, state.accepted, *STICK_BOUNDS)
    state.alpha = M.gibbs_alpha(rng, state.sticks, K, a.e0, a.f0)  # (e)
    state.alpha0 = mh_alpha0(rng, state, priors.g0, priors.h0)  # (f)
    state.N, state.loglik = N, loglik
    return state


# ---------------------------------------------------------------------------- starting values
def initial_hdp_state(Xs_pooled, J: int, k: int, rng, init) -> HDPState:
    """dpmix's starting values: atoms from :func:`.initial_values.initial_state` on the pooled
    data, equal group weights 1/K, top-level sticks s_k ~ Be(1, 1), alpha = alpha0 = 1,
    proposal scales 0.01 (sticks) and 1 (alpha0)."""
    base = initial_state(Xs_pooled, k, rng, init)
    sticks = np.clip(rng.beta(1.0, 1.0, size=k - 1), *STICK_BOUNDS)
    v = 1.0 / (k - np.arange(k - 1.0))  # the sticks of equal weights 1/k
    log_v = np.tile(np.log(v), (J, 1))
    log_1mv = np.tile(np.log1p(-v), (J, 1))
    scale = np.full(k, STICK_SCALE0)
    scale[-1] = ALPHA0_SCALE0
    return HDPState(base.mu, base.Sigma, np.full((J, k), -math.log(k)), log_v, log_1mv, sticks, 1.0, 1.0,
                    scale, np.zeros(k))


def _engines(groups, job):
    return [make_engine(Xg, backend=job["backend"], dtype=job["dtype"], chunk_size=job["chunk_size"],
                        threads=job["threads"]) for Xg in groups]


def hdp_chain(chain, seed, job):
    """Run one HDP Gibbs chain (module level: picklable for process pools and Dask).

    Returns the stored draws (standardised units): group weights (S, J, K), top-level weights
    beta (S, K), means, covariances, alpha, alpha0; the per-sweep log-likelihood; the
    acceptance rates of the MH steps over the stored sweeps; the last labels of every group.
    """
    rng = np.random.default_rng(seed)
    groups, k, priors = job["groups"], job["k"], job["priors"]
    burn_in, n_iter, thin, interval = job["burn_in"], job["n_iter"], job["thin"], job["tune_interval"]
    J, p = len(groups), groups[0].shape[1]
    total, S = burn_in + n_iter, n_iter // thin
    out = {
        "weights": np.empty((S, J, k)), "beta": np.empty((S, k)), "means": np.empty((S, k, p)),
        "covariances": np.empty((S, k, p, p)), "alpha": np.empty(S), "alpha0": np.empty(S),
        "loglik_stored": np.empty(S), "occupied": np.empty(S), "loglik": np.empty(total),
    }
    with threads_context(job["threads"] if job["backend"] == "cpu" else None):
        engines = _engines(groups, job)
        try:
            if job.get("start") is not None:  # BEM's fixed point (the warm start)
                state = state_from_bem(job["start"])
            else:
                state = initial_hdp_state(np.concatenate(groups), J, k, rng, job["init"])
            s = 0
            desc = "HDP Gibbs" if job["chains"] == 1 else f"HDP Gibbs chain {chain + 1}"
            with progress_bar(total, desc, job["progress"]) as bar:
                for it in range(total):
                    state = hdp_sweep(engines, rng, state, priors)
                    out["loglik"][it] = state.loglik
                    if it < burn_in and (it + 1) % interval == 0:
                        tune_scales(state.scale, state.accepted, interval)
                    if it + 1 == burn_in:
                        state.accepted[:] = 0.0  # the reported rates are those of the stored phase
                    j = it - burn_in
                    if j >= 0 and (j + 1) % thin == 0 and s < S:
                        out["weights"][s] = np.exp(state.log_pi)
                        out["beta"][s] = beta_and_tail(state.sticks)[0]
                        out["means"][s] = state.mu
                        out["covariances"][s] = state.Sigma
                        out["alpha"][s] = state.alpha
                        out["alpha0"][s] = state.alpha0
                        out["loglik_stored"][s] = state.loglik
                        out["occupied"][s] = np.count_nonzero(state.N.sum(0))
                        s += 1
                    bar.update(1)
            out["acceptance"] = state.accepted / n_iter
            out["labels"] = [np.asarray(e.z, dtype=np.int64) for e in engines]
        finally:
            for e in engines:
                e.close()
    return out


# ---------------------------------------------------------------------------- Bayesian EM
@dataclass
class HDPBemResult:
    """The fixed point found by :func:`hdp_bem` (standardised units)."""

    mu: np.ndarray
    Sigma: np.ndarray
    log_pi: np.ndarray  # (J, K)
    sticks: np.ndarray  # (K - 1,) top-level sticks
    alpha: float
    loglik: np.ndarray
    n_iter: int
    converged: bool


def _bem_stick_modes(a, b):
    """Mode (a - 1)/(a + b - 2) of Be(a, b), clipped to [1e-10, 1 - 1e-10] (the boundary where
    a <= 1 or b <= 1 puts the density's supremum), as the DP mixture's BEM clips its sticks."""
    den = a + b - 2.0
    with np.errstate(divide="ignore", invalid="ignore"):
        v = np.where(den > 0, (a - 1.0) / np.where(den > 0, den, 1.0), np.where(a >= b, 1.0, 0.0))
    return np.clip(v, 1e-10, 1.0 - 1e-10)


def hdp_bem(groups, k: int, priors: HDPPriors, init, rng, *, n_iter: int, tol: float, backend: str, dtype,
            chunk_size, threads, progress: bool) -> HDPBemResult:
    """Bayesian EM (an ECM algorithm) for the HDP mixture, with alpha0 held at 1.

    E-step: every group's responsibilities on its engine.  Conditional maximisations: the atoms
    (mu_k, Sigma_k) at the mode of their Normal-inverse-Wishart conditional given the pooled
    expected statistics (:func:`._math.bem_mu_sigma`); each group's sticks v_jk at the mode of
    Be(alpha0 beta_k + E N_jk, alpha0 tail_k + E sum_{l>k} N_jl) (clipped as in
    :func:`_bem_stick_modes`); the top-level sticks s_k at the mode of Be(1 + M_k, alpha +
    sum_{l>k} M_l), M_k = sum_j E N_jk / n_j (each group's expected proportions, summed, so
    every group weighs the same in beta whatever its size); alpha at its conditional mode.
    Stops when the relative change of the log-likelihood is at most ``tol``.
    """
    J, p = len(groups), groups[0].shape[1]
    a = priors.atoms
    n_j = np.array([g.shape[0] for g in groups], dtype=np.float64)
    state = initial_state(np.concatenate(groups), k, rng, init)
    mu, Sigma = state.mu, state.Sigma
    log_pi = np.full((J, k), -math.log(k))
    sticks = 1.0 / (k - np.arange(k - 1.0))
    alpha, alpha0 = 1.0, 1.0
    trace, converged, prev = [], False, None
    with threads_context(threads if backend == "cpu" else None):
        engines = [make_engine(g, backend=backend, dtype=dtype, chunk_size=chunk_size, threads=threads)
                   for g in groups]
        try:
            with progress_bar(n_iter, "HDP BEM", progress) as bar:
                for it in range(n_iter):
                    L, U, logdet = M.chol_factors(Sigma)
                    ll, T, N = 0.0, None, np.empty((J, k))
                    for j, eng in enumerate(engines):
                        eng.set_components(log_pi[j], mu, U, logdet)
                        llj, Tj = eng.responsibilities_stats()
                        ll += llj
                        N[j] = Tj[:, 0]
                        T = Tj.copy() if T is None else T + Tj
                    trace.append(ll)
                    bar.update(1)
                    if prev is not None and abs(ll - prev) <= tol * abs(prev):
                        converged = True
                        break
                    prev = ll
                    Np, S1, S2 = M.unpack_stats(T, p)
                    mu, Sigma = M.bem_mu_sigma(Np, S1, S2, a.m0, a.gamma0, a.nu0, a.Phi0)
                    beta, tail = beta_and_tail(sticks)
                    v = _bem_stick_modes(alpha0 * beta[:-1] + N[:, :-1], alpha0 * tail + _tail_counts_rows(N))
                    log_pi = _log_weights_rows(np.log(v), np.log1p(-v))
                    Mk = (N / n_j[:, None]).sum(0)
                    sticks = np.clip(_bem_stick_modes(1.0 + Mk[:-1], alpha + M.tail_counts(Mk)), *STICK_BOUNDS)
                    alpha = M.bem_alpha(sticks, k, a.e0, a.f0)
        finally:
            for e in engines:
                e.close()
    return HDPBemResult(mu, Sigma, log_pi, sticks, alpha, np.asarray(trace), it + 1, converged)


def state_from_bem(fit: HDPBemResult) -> HDPState:
    """The Gibbs chain's starting state from a BEM fit: its atoms, group weights (as sticks
    v_jk = pi_jk / sum_{l>=k} pi_jl), top-level sticks and alpha; alpha0 = 1 and dpmix's
    starting proposal scales."""
    k = fit.log_pi.shape[1]
    pi = np.exp(fit.log_pi)
    rest = np.cumsum(pi[:, ::-1], axis=1)[:, ::-1]
    v = np.clip(pi[:, :-1] / rest[:, :-1], 1e-300, _ONE_MINUS)
    scale = np.full(k, STICK_SCALE0)
    scale[-1] = ALPHA0_SCALE0
    return HDPState(fit.mu.copy(), fit.Sigma.copy(), fit.log_pi.copy(), np.log(v), np.log1p(-v),
                    fit.sticks.copy(), float(fit.alpha), 1.0, scale, np.zeros(k))
