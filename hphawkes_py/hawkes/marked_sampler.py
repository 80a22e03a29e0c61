"""The sampler shared by the marked (ETAS, :mod:`.etas`) and multitype (:mod:`.multitype`) Hawkes models:
an adaptive random-walk Metropolis chain on an unconstrained parameter vector (Haario, Saksman &
Tamminen 2001 for the joint moves), the checks and the chain runner their ``mcmc`` functions share, and
their result class :class:`MarkedPosterior`.

Each model supplies its own log-posterior on the unconstrained scale, its transforms and its
per-event summaries; this module knows nothing of the models.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable

import numpy as np

from .._validate import check_int, describe

__all__ = ["MarkedPosterior", "adaptive_chain", "check_sampler_args", "chain_seeds", "run_chains"]


@dataclasses.dataclass
class MarkedPosterior:
    """Posterior draws of a marked or multitype Hawkes model (:func:`.etas.mcmc`, :func:`.multitype.mcmc`);
    the constructor's arguments are kept as attributes of the same names.

    Parameters
    ----------
    draws : dict
        Parameter name -> array (chains, kept draws), natural units.
    acceptance_rates : dict
        Parameter name (or ``"joint"``) -> array (chains,), after burn-in.
    sampled : tuple
        The sampled parameters.
    fixed : dict
        The parameters held fixed.
    extra : dict
        Posterior means of per-event quantities (caller's order): ``background`` (ETAS) or ``pi``
        (multitype, (N, K + 1)).
    n_iter, burn_in : int
        Sweeps per chain and discarded leading sweeps.
    seed : Any
        The seed the chains were spawned from.
    backend : str
        Where the pair sums ran.
    elapsed_seconds : float
        Wall time of the chains.

    Examples
    --------
    >>> from hphawkes_py.hawkes import etas
    >>> x, t, m = etas.simulate(mu=0.5, A=0.3, alpha=1.0, c=0.01, p=1.2, d=0.02, gamma=0.5, b=1.0,
    ...                         m0=3.0, region=10.0, duration=100.0, seed=1)
    >>> post = etas.mcmc(x, t, m, m0=3.0, region=10.0, n_iter=40, burn_in=20, chains=2, seed=1)
    >>> post.chains, post.n_draws, "b" in post.summary().index
    (2, 20, True)
    """

    draws: dict
    acceptance_rates: dict
    sampled: tuple
    fixed: dict
    extra: dict
    n_iter: int
    burn_in: int
    seed: Any
    backend: str
    elapsed_seconds: float

    @property
    def chains(self) -> int:
        """Number of chains."""
        return next(iter(self.draws.values())).shape[0]

    @property
    def n_draws(self) -> int:
        """Kept draws per chain."""
        return next(iter(self.draws.values())).shape[1]

    def params_mean(self) -> dict:
        """Posterior means (sampled) and fixed values of every parameter."""
        return dict(self.fixed, **{n: float(v.mean()) for n, v in self.draws.items()})

    def to_arviz(self):
        """The draws as an ``arviz.InferenceData`` (posterior group, one variable per parameter)."""
        import arviz as az
        from .posterior import _quiet_arviz
        with _quiet_arviz():
            return az.from_dict(posterior={n: np.asarray(v) for n, v in self.draws.items()})

    def summary(self, hdi_prob: float = 0.95):
        """Posterior table (pandas DataFrame, one row per sampled parameter): mean, sd, the HDI bounds,
        ess_bulk and r_hat (ArviZ)."""
        import arviz as az
        from .posterior import _quiet_arviz
        lo = f"hdi_{100 * (1 - hdi_prob) / 2:g}%"
        hi = f"hdi_{100 * (1 - (1 - hdi_prob) / 2):g}%"
        with _quiet_arviz():
            table = az.summary(self.to_arviz(), hdi_prob=hdi_prob, round_to="none")
        return table[["mean", "sd", lo, hi, "ess_bulk", "r_hat"]].loc[list(self.draws)]


_ADAPT = 0.05


def adaptive_chain(log_post: Callable, z0: np.ndarray, n_iter: int, burn_in: int, rng, cheap: np.ndarray,
                   on_keep: Callable | None = None, gibbs: Callable | None = None):
    """Adaptive Metropolis on an unconstrained vector ``z`` (the sampler of :func:`.etas.mcmc` and
    :func:`.multitype.mcmc`). One sweep: a random-walk move of every coordinate (scales adapted to
    acceptance 0.44), then one joint move with covariance 2.38^2 / dim times the burn-in draws'
    covariance (Haario et al. 2001; from the second half of burn-in), then ``gibbs(rng)`` if given.
    Adaptation stops after burn-in, so the kept draws are a Markov chain with the posterior as
    stationary law. ``cheap``: which coordinates the model evaluates without a pair pass (they are
    moved twice per sweep). Returns (kept z (n_keep, dim), acceptance per coordinate and of the joint
    moves)."""
    dim = z0.size
    z = z0.copy()
    lp = log_post(z)
    if not np.isfinite(lp):
        raise ValueError("the starting values have zero posterior density (log L = -inf); give init=")
    sd = np.full(dim, 0.1)
    acc = np.zeros(dim)
    acc_joint = 0
    n_keep = n_iter - burn_in
    kept = np.empty((n_keep, dim))
    hist = []
    chol = None
    for it in range(n_iter):
        keep = it >= burn_in
        for i in list(range(dim)) + [i for i in range(dim) if cheap[i]]:
            new = z.copy()
            new[i] += sd[i] * rng.standard_normal()
            lp_new = log_post(new)
            ok = math.log(rng.uniform()) < lp_new - lp
            if ok:
                z, lp = new, lp_new
            acc[i] += (ok and keep) / (2.0 if cheap[i] else 1.0)  # cheap coordinates move twice per sweep
            if not keep:
                sd[i] *= math.exp(_ADAPT * ((1.0 if ok else 0.0) - 0.44) * 10.0 / math.sqrt(it + 10.0))
        if not keep and it >= burn_in // 2:
            hist.append(z.copy())
            if len(hist) > 2 * dim and it % 10 == 0:
                cov = np.cov(np.array(hist).T).reshape(dim, dim) * (2.38 ** 2 / dim) + 1e-10 * np.eye(dim)
                chol = np.linalg.cholesky(cov)
        if chol is not None:
            new = z + chol @ rng.standard_normal(dim)
            lp_new = log_post(new)
            if math.log(rng.uniform()) < lp_new - lp:
                z, lp = new, lp_new
                acc_joint += keep
        if gibbs is not None:
            gibbs(rng)
            lp = log_post(z)
        if keep:
            kept[it - burn_in] = z
            if on_keep is not None:
                on_keep(z)
    k = max(n_keep, 1)
    return kept, acc / k, acc_joint / k


def check_sampler_args(n_iter, burn_in, chains, executor):
    """The checks of :func:`.etas.mcmc` and :func:`.multitype.mcmc`: sweeps, burn-in, chains, executor."""
    n_iter = check_int(n_iter, "n_iter", minimum=1)
    burn_in = check_int(burn_in, "burn_in", minimum=0)
    if burn_in >= n_iter:
        raise ValueError(f"burn_in must be < n_iter, got burn_in={burn_in}, n_iter={n_iter}")
    chains = check_int(chains, "chains", minimum=1)
    if executor is not None and not callable(getattr(executor, "map", None)):
        raise TypeError(f"executor must have a map method (concurrent.futures.Executor), got {describe(executor)}")
    return n_iter, burn_in, chains


def run_chains(fn, args_list, executor):
    """``fn`` over the chains' arguments, one after another or through ``executor.map``."""
    return list(executor.map(fn, args_list)) if executor is not None else [fn(a) for a in args_list]


def chain_seeds(seed: Any, chains: int) -> list:
    """One ``SeedSequence`` per chain, spawned from ``seed`` (checked by ``check_seed``; a Generator
    gives one integer draw as the root entropy)."""
    root = seed if not isinstance(seed, np.random.Generator) else int(seed.integers(2 ** 63))
    return np.random.SeedSequence(root).spawn(chains)
