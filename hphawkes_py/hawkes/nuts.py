"""No-U-Turn sampling of the spatiotemporal Hawkes posterior, on the analytic gradient.

:func:`mcmc_nuts` samples the same posterior as the adaptive Metropolis-Hastings sampler
(:func:`~.sampler.mcmc`: the same likelihood, half-normal priors, ``fixed=``, ``init=``, chains,
seeds and executor) with the dynamic multinomial No-U-Turn sampler of the ``mici`` package
(Graham 2019; Betancourt's multinomial variant of Hoffman & Gelman's NUTS, as in Stan), fed the
log-density and gradient of :class:`~.gradient.GradientModel`. It returns the same
:class:`~.posterior.HawkesPosterior`.

Unconstrained space
-------------------
NUTS moves in R^K. Each sampled parameter is mapped to an unconstrained coordinate z and the density
carries the Jacobian of the map, so the target is exactly the MH sampler's posterior:

* a positive parameter: z = log s, s the MH state (``1/h``, ``1/tau_x``, ``1/tau_t``, or the value
  itself for ``omega``, ``theta``, ``mu0``, ``omega2``); the half-normal prior on s and the Jacobian
  |ds/dz| = s give log p(z) = log L - (s / scale)^2 / 2 + z;
* the weight ``w`` ("exp2"): z = logit w, Jacobian w (1 - w), prior uniform on [0, 1] (or the
  half-normal of a finite ``priors["w"]``);
* ``omega`` and ``omega2`` both sampled: the label ordering omega2 < omega of the MH prior is kept by
  z1 = log omega, z2 = logit(omega2 / omega), Jacobian omega omega2 (1 - omega2 / omega).

Outside the range where the kernels are finite (:data:`~.model.PARAM_RANGE`) the density is 0 (a
divergent trajectory ends there), as the MH sampler rejects such proposals.

Why mici
--------
It takes a Python log-density and gradient directly, is pure Python on NumPy and SciPy (a 120 kB
wheel, no compiled or other dependencies), and leaves the chains to us: each chain is one call run
through :func:`~hphawkes_py._parallel.run_replicates`, so ``executor=`` and the seeds behave as in the
MH sampler. nutpie (Rust) has a lower per-step overhead but pulls pyarrow, zarr and obstore, and runs
its chains in its own threads; BlackJAX needs JAX. The per-step overhead of mici (tens of
microseconds) is small next to one gradient evaluation (a pass over the event pairs).
"""
from __future__ import annotations

import dataclasses
import math
import time
from typing import Any, Mapping, Sequence

import numpy as np

from .._backend import resolve_backend
from .._parallel import run_replicates
from .._validate import check_bool, check_int, check_probability, check_seed
from .engine import EngineFactory
from .gradient import GradientModel
from .kde_background import check_background
from .kernels import check_kernel
from .model import PARAM_NAMES, PARAM_RANGE, _check_spatial_window, engine_factory, prepare_data
from .posterior import HawkesPosterior
from .mode import _INVERTED, _check_model, _check_ranges, _kde_model, _mode_search

__all__ = ["mcmc_nuts", "NutsTarget"]


def _require_mici():
    try:
        import mici
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("mcmc_nuts needs the optional package mici (the No-U-Turn sampler): "
                          "pip install 'mici>=0.4' (or pip install 'hphawkes_py[nuts]')") from exc
    return mici


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))


class NutsTarget:
    """The log posterior density of the sampled parameters in the unconstrained coordinates z (see
    the module notes) and its gradient.

    Parameters
    ----------
    model : GradientModel
        The log-likelihood and its gradient.
    sampled : tuple of str
        The sampled parameters, in the order of z.
    fixed : dict
        Values of the other parameters (natural units).
    prior_scales : dict
        Half-normal prior scales on the MH state (``1/h`` for ``h``, ...), by name.
    lo, hi : float
        The range every positive parameter must lie in (the density is 0 outside).

    Examples
    --------
    >>> from hphawkes_py.hawkes.gradient import GradientModel
    >>> from hphawkes_py.hawkes.model import engine_factory, prepare_data
    >>> from hphawkes_py.hawkes.nuts import NutsTarget
    >>> x, t = hp.hawkes.simulate(mu=0.5, theta=0.5, omega=2.0, h=0.1, region=2.0, duration=50.0, seed=1)
    >>> model = GradientModel(engine_factory(prepare_data(x, t), backend="cpu"))
    >>> target = NutsTarget(model, ("theta", "mu0"), {"tau_x": 0.5, "tau_t": 5.0, "h": 0.1, "omega": 2.0},
    ...                     {"theta": 10.0, "mu0": 1.0})
    >>> z = target.to_unconstrained({"theta": 0.5, "mu0": 0.5})
    >>> lp, grad = target.log_density_and_gradient(z)
    >>> target.to_values(z) == {"theta": 0.5, "mu0": 0.5}, grad.shape
    (True, (2,))
    """

    def __init__(self, model: Any, sampled: Sequence[str], fixed: Mapping[str, float],
                 prior_scales: Mapping[str, float], lo: float = 1e-50, hi: float = 1e50):
        self.model = model
        self.sampled = tuple(sampled)
        self.fixed = dict(fixed)
        self.scales = {n: float(prior_scales[n]) for n in self.sampled}
        self.lo, self.hi = lo, hi
        self.ordered = "omega" in self.sampled and "omega2" in self.sampled
        self.index = {n: i for i, n in enumerate(self.sampled)}
        self.evaluations = 0

    def to_values(self, z: np.ndarray) -> dict:
        """The sampled parameters' natural values at z."""
        out = {}
        for n, i in self.index.items():
            zi = float(z[i])
            if n == "w":
                out[n] = _sigmoid(zi)
            elif n == "omega2" and self.ordered:
                continue
            else:
                s = math.exp(zi)
                out[n] = 1.0 / s if n in _INVERTED else s
        if self.ordered:
            out["omega2"] = out["omega"] * _sigmoid(float(z[self.index["omega2"]]))
        return {n: out[n] for n in self.sampled}

    def to_unconstrained(self, values: Mapping[str, float]) -> np.ndarray:
        """z of natural ``values`` of the sampled parameters (the inverse of :meth:`to_values`)."""
        z = np.empty(len(self.sampled))
        for n, i in self.index.items():
            v = float(values[n])
            if n == "w" or (n == "omega2" and self.ordered):
                r = v if n == "w" else v / float(values["omega"])
                z[i] = math.log(r) - math.log1p(-r)
            else:
                z[i] = -math.log(v) if n in _INVERTED else math.log(v)
        return z

    def log_density_and_gradient(self, z: np.ndarray) -> tuple[float, np.ndarray]:
        """log p(z) (up to a constant) and its gradient; ``(-inf, 0)`` outside the support."""
        self.evaluations += 1
        z = np.asarray(z, dtype=np.float64)
        grad = np.zeros(z.shape[0])
        if not np.all(np.isfinite(z)):
            return -math.inf, grad
        v = self.to_values(z)
        for n, val in v.items():
            if n == "w":
                if not 0.0 < val < 1.0:
                    return -math.inf, grad
            elif not (self.lo <= val <= self.hi):
                return -math.inf, grad
        try:
            ll, dv = self.model.value_and_gradient({**self.fixed, **v})
        except ValueError:  # not finite at extreme parameters: no density there
            return -math.inf, grad
        lp = ll
        # d(log L + log prior)/d value, then the chain rule to z, plus the log-Jacobian's derivative
        a = {}
        for n in self.sampled:
            val, sc = v[n], self.scales[n]
            if n == "w":
                a[n] = dv[n] - (val / sc**2 if math.isfinite(sc) else 0.0)
                lp += (-0.5 * (val / sc) ** 2 if math.isfinite(sc) else 0.0) + math.log(val) + math.log1p(-val)
            elif n in _INVERTED:  # prior on s = 1/value: handled directly in z = log s below
                s = 1.0 / val
                lp += -0.5 * (s / sc) ** 2 + math.log(s)
                grad[self.index[n]] = -val * dv[n] - (s / sc) ** 2 + 1.0
            else:
                a[n] = dv[n] - val / sc**2
                lp += -0.5 * (val / sc) ** 2
        for n, an in a.items():
            i, val = self.index[n], v[n]
            if n == "w":
                grad[i] = an * val * (1.0 - val) + 1.0 - 2.0 * val
            elif self.ordered and n == "omega2":
                r = val / v["omega"]
                lp += math.log(r) + math.log1p(-r)
                grad[i] = an * v["omega"] * r * (1.0 - r) + 1.0 - 2.0 * r
                grad[self.index["omega"]] += an * val + 1.0
                lp += math.log(v["omega"])  # omega2 = omega r: the Jacobian's second factor omega
            else:
                grad[i] += an * val + 1.0
                lp += math.log(val)
        return lp, grad


@dataclasses.dataclass(frozen=True)
class _NutsConfig:
    factory: EngineFactory
    names: tuple
    sampled: tuple
    fixed: dict
    init: dict
    prior_scales: dict
    n_iter: int
    burn_in: int
    target_accept: float
    max_tree_depth: int
    progress: bool


def _run_nuts_chain(chain: int, seed_seq: np.random.SeedSequence, cfg: _NutsConfig) -> dict:
    """One NUTS chain (mici), adapted during the burn-in. Module-level so process pools and Dask can
    pickle it."""
    mici = _require_mici()
    rng = np.random.default_rng(seed_seq)
    lo, hi = PARAM_RANGE[cfg.factory.dtype]
    target = NutsTarget(GradientModel(cfg.factory), cfg.sampled, cfg.fixed, cfg.prior_scales, lo, hi)
    z0 = target.to_unconstrained(cfg.init)
    lp0, _ = target.log_density_and_gradient(z0)
    if not math.isfinite(lp0):
        raise ValueError(f"the log-posterior at the initial values {cfg.init} is not finite; choose other init")

    def grad_and_value(z):
        lp, g = target.log_density_and_gradient(z)
        return -g, -lp

    def neg_log_dens(z):
        return grad_and_value(z)[1]

    system = mici.systems.EuclideanMetricSystem(neg_log_dens, grad_neg_log_dens=grad_and_value)
    integrator = mici.integrators.LeapfrogIntegrator(system)
    sampler = mici.samplers.DynamicMultinomialHMC(system, integrator, rng, max_tree_depth=cfg.max_tree_depth)
    adapters = [mici.adapters.DualAveragingStepSizeAdapter(adapt_stat_target=cfg.target_accept),
                mici.adapters.OnlineVarianceMetricAdapter()]
    import logging

    mici_log = logging.getLogger("mici")
    level = mici_log.level
    mici_log.setLevel(logging.WARNING)  # mici logs every trajectory that ends on a divergence at INFO
    try:
        out = sampler.sample_chains(cfg.burn_in, cfg.n_iter - cfg.burn_in, [z0],
                                    adapters=adapters,
                                    trace_funcs=[lambda state: {"z": state.pos}], n_worker=1,
                                    display_progress=cfg.progress)
    finally:
        mici_log.setLevel(level)
    z = np.asarray(out.traces["z"])[0]  # (kept draws, K)
    stats = out.statistics
    values = [target.to_values(zi) for zi in z]
    draws = np.empty((z.shape[0], len(cfg.names)))
    for j, n in enumerate(cfg.names):
        draws[:, j] = [vv[n] for vv in values] if n in cfg.sampled else cfg.fixed[n]
    return {
        "draws": draws,
        "accept_stat": float(np.mean(stats["accept_stat"][0])),
        "step_size": float(integrator.step_size),
        "divergences": int(np.sum(stats["diverging"][0])),
        "mean_tree_depth": float(np.mean(stats["tree_depth"][0])),
        "n_step": int(np.sum(stats["n_step"][0])),
        "evaluations": int(target.evaluations),
    }


def mcmc_nuts(x: Any, t: Any, *, n_iter: int = 2_000, burn_in: int = 1_000, chains: int = 4,
              sample: Sequence[str] | None = None, fixed: Mapping[str, float] | None = None,
              init: Mapping[str, float] | str | None = None, priors: Mapping[str, float] | None = None,
              seed: Any = None, executor: Any = None, progress: bool = True, backend: str = "auto",
              threads: int | None = None, dtype: Any = np.float64, exact: bool = False, window: Any = None,
              kernel: Any = "exponential", spatial_window: Any = None, background: Any = "smoother",
              spatial_kernel: Any = "gaussian", target_accept: float = 0.8, max_tree_depth: int = 10
              ) -> HawkesPosterior:
    """Posterior sampling for the spatiotemporal Hawkes model by the No-U-Turn sampler.

    The posterior of :func:`~hphawkes_py.hawkes.mcmc` (same likelihood, priors and arguments),
    sampled by mici's dynamic multinomial NUTS on the analytic gradient
    (:func:`~hphawkes_py.hawkes.gradient.log_likelihood_gradient`) in unconstrained coordinates (see the
    module notes). Each iteration is one NUTS transition (a trajectory of up to 2^max_tree_depth
    leapfrog steps, each one gradient evaluation); the step size (dual averaging) and a diagonal metric
    adapt during the burn-in. Needs the optional package ``mici``.

    Parameters
    ----------
    x : array_like, shape (N,) or (N, D)
        Event locations (D = 1, 2, 3), e.g. km. Any order.
    t : array_like, shape (N,)
        Event times, e.g. hours. Any order.
    n_iter : int
        NUTS iterations per chain, burn-in (adaptation) included.
    burn_in : int
        Leading iterations that adapt the step size and metric and are discarded (>= 1, < n_iter).
    chains : int
        Independent chains (seeds from ``SeedSequence(seed).spawn(chains)``).
    sample, fixed, init, priors, seed, executor, progress
        As in :func:`~hphawkes_py.hawkes.mcmc` (``init="mode"`` starts at the posterior mode).
    backend : {"auto", "cpu", "gpu", "emulator"}
        Where the gradient's pair sums run (:class:`~hphawkes_py.hawkes.gradient.GradientModel`): the CPU
        engine (Numba), a CUDA GPU or the GPU kernel on the CPU emulator; ``"auto"`` picks a GPU when one
        is usable.
    threads, dtype, exact, window, kernel, spatial_window, background, spatial_kernel
        As in :func:`~hphawkes_py.hawkes.mcmc`.
    target_accept : float
        Target of the step-size adaptation's acceptance statistic, in (0, 1); raise it (0.9, 0.95)
        when there are divergences.
    max_tree_depth : int
        Largest trajectory doubling depth (at most 2^max_tree_depth leapfrog steps per iteration).

    Returns
    -------
    HawkesPosterior
        As :func:`~hphawkes_py.hawkes.mcmc`'s; ``acceptance_rates`` holds each chain's mean NUTS acceptance
        statistic (the same for every sampled parameter), ``proposal_sd`` the adapted leapfrog step size
        (on the unconstrained scale), and the extra attribute ``nuts_stats`` (dict of per-chain arrays:
        ``divergences``, ``mean_tree_depth``, ``step_size``, ``n_step`` leapfrog steps and
        ``evaluations`` of the gradient).

    Examples
    --------
    >>> from hphawkes_py.hawkes.nuts import mcmc_nuts
    >>> x, t = hp.hawkes.simulate(mu=0.5, theta=0.5, omega=2.0, h=0.1, region=2.0, duration=50.0, seed=1)
    >>> post = mcmc_nuts(x, t, n_iter=150, burn_in=100, chains=2, fixed={"tau_x": 0.5, "tau_t": 5.0},
    ...                  seed=1, progress=False, backend="cpu")
    >>> post.sampled, post.chains, post.n_draws
    (('h', 'omega', 'theta', 'mu0'), 2, 50)
    """
    _require_mici()
    resolve_backend(backend)  # refuses an unknown or unusable backend before any other work
    n_iter = check_int(n_iter, "n_iter", minimum=2)
    burn_in = check_int(burn_in, "burn_in", minimum=1)
    if burn_in >= n_iter:
        raise ValueError(f"burn_in must be smaller than n_iter, got burn_in={burn_in} and n_iter={n_iter}")
    chains = check_int(chains, "chains", minimum=1)
    target_accept = check_probability(target_accept, "target_accept")
    if not target_accept < 1.0:
        raise ValueError(f"target_accept must be in (0, 1), got {target_accept!r}")
    max_tree_depth = check_int(max_tree_depth, "max_tree_depth", minimum=1)
    if max_tree_depth > 20:
        raise ValueError(f"max_tree_depth must be at most 20 (2^20 gradient evaluations per iteration), "
                         f"got {max_tree_depth}")
    start_at_mode = isinstance(init, str)
    if start_at_mode and init != "mode":
        raise ValueError(f"init must be a dict of initial values or 'mode', got {init!r}")
    kern = check_kernel(kernel)
    fixed = _kde_model(background, sample, fixed)
    sample, fixed, init_vals, prior_scales = _check_model(sample, fixed, None if start_at_mode else init, priors,
                                                          "init", kern)
    if "w" in init_vals and not 0.0 < init_vals["w"] < 1.0:
        raise ValueError(f"init['w'] must be strictly inside (0, 1) for NUTS (its coordinate is logit w), "
                         f"got {init_vals['w']}")
    seed = check_seed(seed)
    progress = check_bool(progress, "progress")
    prep = prepare_data(x, t, window)
    factory = engine_factory(prep, backend=backend, dtype=dtype, threads=threads, exact=exact, kernel=kern,
                             spatial_kernel=spatial_kernel)
    sw = _check_spatial_window(spatial_window, prep, factory.spatial_kernel)
    factory = factory.replace(spatial_window=sw, background=check_background(background, prep, sw))
    _check_ranges(fixed, init_vals, factory.dtype, "init")
    if start_at_mode:
        mode = _mode_search(factory, sample, fixed, init_vals, prior_scales, 600)
        init_vals = {n: mode[n] for n in sample}
    names = PARAM_NAMES + kern.extra_params
    cfg = _NutsConfig(factory=factory, names=names, sampled=sample, fixed=fixed, init=init_vals,
                      prior_scales=prior_scales, n_iter=n_iter, burn_in=burn_in, target_accept=target_accept,
                      max_tree_depth=max_tree_depth, progress=progress and executor is None)
    t_start = time.perf_counter()
    results = run_replicates(_run_nuts_chain, range(chains), seed=seed, executor=executor,
                             progress=bool(progress) and executor is not None, desc="chains", args=(cfg,))
    elapsed = time.perf_counter() - t_start
    draws = {n: np.stack([r["draws"][:, i] for r in results]) for i, n in enumerate(names)}
    accept = np.array([r["accept_stat"] for r in results])
    step = np.array([r["step_size"] for r in results])
    post = HawkesPosterior(
        draws=draws, acceptance_rates={n: accept.copy() for n in sample}, sampled=sample, fixed=fixed,
        init=init_vals, prior_scales={n: prior_scales[n] for n in sample}, n_iter=n_iter, burn_in=burn_in,
        backend=factory.backend, elapsed_seconds=elapsed, proposal_sd={n: step.copy() for n in sample},
        engine_factory=factory, _debug=[[] for _ in results],
    )
    post.nuts_stats = {k: np.array([r[k] for r in results])
                       for k in ("divergences", "mean_tree_depth", "step_size", "n_step", "evaluations")}
    return post
