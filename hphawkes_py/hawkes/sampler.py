"""Adaptive Metropolis-Hastings for the spatiotemporal Hawkes model (Holbrook et al. 2021, Algorithm 1).

The sampler
-----------
* **Scan.** One *iteration* is one sweep: every sampled parameter gets one
  univariate Metropolis-Hastings update, in a fresh uniformly random order
  (a random-permutation scan). ``n_iter=10_000`` therefore means 10,000 sweeps
  and, with four sampled parameters, 40,000 proposals; one draw is stored per
  sweep. hpHawkes' sampler (``sampler`` in the R package hpHawkes,
  github.com/suchard-group/hawkes) updates one parameter per iteration, chosen
  at random, and evaluates the full O(N^2) likelihood for every proposal. The
  sweep keeps the number of updates of each parameter deterministic, and the
  caching below makes a ``mu0`` or ``theta`` update O(N) and an ``h`` or
  ``omega`` update one trigger pass.
* **State.** The spatial trigger is sampled as the precision-like ``1/h``, as
  in hpHawkes (its ``params`` vector holds ``1/h, 1/tau_x, 1/tau_t``); the same
  is done for ``tau_x`` and ``tau_t`` when they are sampled. ``omega``,
  ``theta`` and ``mu0`` are sampled as they are. Draws are reported in natural
  units (``h`` in the units of ``x``).
* **Proposals.** Random walk ``s' ~ N(s, sigma^2)`` truncated to ``s' > 0``
  (drawn by rejection: at least half of the untruncated mass is positive).
  The truncation makes the proposal asymmetric; the Hastings correction is
  ``q(s | s') / q(s' | s) = Phi(s / sigma) / Phi(s' / sigma)``.
* **Adaptation.** Each parameter keeps its own ``sigma`` (initially a quarter
  of its initial state). After a batch of ``b`` proposals of that parameter,
  ``sigma`` is multiplied by ``(acceptance in the batch) / 0.44`` clamped to
  ``[0.5, 2]``, and the next batch is longer, ``b <- ceil(b^1.1)`` (first
  batch 10 proposals). The batches grow geometrically in ``log b``, so the
  adaptation diminishes (Roberts & Rosenthal 2009) and goes on through the
  whole run; about 14 adaptations happen in 10,000 sweeps. hpHawkes uses the
  same rule (clamp, ``ceil(b^1.1)``) but starts every ``sigma`` at 2 and its
  first batch at 5 proposals.
* **Priors.** Half-normal on the sampled state with scale 10 for ``1/h``,
  ``omega``, ``theta`` (and ``1/tau_x``, ``1/tau_t``), and scale 1 for
  ``mu0`` (hpHawkes' defaults); ``priors={"theta": 5.0}`` changes a scale.
* **Sum of two exponentials** (``kernel="exp2"``). Two more parameters, sampled by
  default like ``omega``: ``omega2`` (half-normal, scale 10) and the weight ``w`` of
  the ``omega`` component (uniform on [0, 1]: the half-normal of scale ``inf``
  truncated to [0, 1]; a finite ``priors["w"]`` gives a half-normal truncated to
  [0, 1]). Proposals of ``w`` above 1 are rejected (the prior is 0 there). The
  mixture is symmetric under (omega, omega2, w) -> (omega2, omega, 1 - w); when both
  rates are sampled the prior also requires ``omega2 < omega`` (``omega`` the fast
  component, ``omega2`` the slow one), so the chains do not switch labels.

Caching
-------
With ``tau_x`` and ``tau_t`` fixed the background sums ``S_n`` never change,
so they are computed once per chain. ``lambda_n = mu0 S_n + theta G_n`` is
linear in ``mu0`` and ``theta``: their moves cost one O(N) pass
(``sum_log_intensity``) and an O(N) integral, no pair sums. ``h`` and
``omega`` moves compute the trigger sums ``G_n`` for the proposal into the
engine's second slot and swap it in only if accepted. A sampled ``tau_x`` or
``tau_t`` recomputes the background (and restores it after a rejection).
With ``background=KDEFit`` (:mod:`.kde_background`) ``S_n`` is the fixed KDE background,
computed once on the host before the chains; ``tau_x`` and ``tau_t`` are not parameters then
(they cannot be sampled and are fixed at 1, ignored, in the draws).
For the tests, :func:`_mcmc_debug` runs :func:`mcmc` re-evaluating the log-likelihood from
scratch after every move and records both values (``HawkesPosterior._debug``; tests compare them).
"""
from __future__ import annotations

import contextvars
import dataclasses
import math
import time
from typing import Any, Mapping, Sequence

import numpy as np

from .._parallel import run_replicates
from .._progress import progress_bar
from .._validate import check_bool, check_int, check_seed
from .engine import EngineFactory
from .kde_background import check_background
from .kernels import check_kernel
from .model import (ETAS_SETTINGS, PARAM_NAMES, PARAM_RANGE, SUBMODELS, _check_spatial_window, check_marks,
                    engine_factory, etas_settings, etas_spatial_kernel, prepare_data, rate_kwargs, submodel)
from .mode import _check_model, _check_ranges, _from_state, _kde_model, _mode_search, _to_state
from .posterior import HawkesPosterior

__all__ = ["mcmc", "TARGET_ACCEPTANCE"]

_TRIGGER = ("h", "omega", "omega2", "w")  # parameters whose moves recompute the trigger sums
TARGET_ACCEPTANCE = 0.44
_FIRST_BATCH = 10
_BATCH_EXPONENT = 1.1






def _log_phi(z: float) -> float:
    """log Phi(z) for z >= 0 (Phi >= 1/2 there, so no underflow)."""
    return math.log(0.5 * math.erfc(-z / math.sqrt(2.0)))


def _truncnorm_positive(rng: np.random.Generator, mean: float, sd: float) -> float:
    """One draw of N(mean, sd^2) conditioned on > 0, for mean > 0 (acceptance >= 1/2)."""
    while True:
        v = mean + sd * rng.standard_normal()
        if v > 0.0:
            return v


@dataclasses.dataclass(frozen=True)
class _ChainConfig:
    factory: EngineFactory
    names: tuple  # every parameter of the model (PARAM_NAMES plus the kernel's), the draws' columns
    sampled: tuple
    fixed: dict
    init: dict
    prior_scales: dict
    n_iter: int
    burn_in: int
    progress: bool
    debug: bool


def _log_prior(cfg: _ChainConfig, values: Mapping[str, float]) -> float:
    lp = 0.0
    for name in cfg.sampled:
        s = _to_state(name, values[name]) / cfg.prior_scales[name]
        lp -= 0.5 * s * s
    return lp


def _in_support(name: str, value: float, values: Mapping[str, float], sampled, lo: float, hi: float) -> bool:
    """Whether ``value`` of parameter ``name`` (the others at ``values``) is inside the prior's support:
    the range where the kernels are finite (model notes), w in [0, 1], and omega2 < omega when both
    are sampled (the label ordering of the two exponentials)."""
    if name == "w":
        return 0.0 <= value <= 1.0
    if not lo <= value <= hi:
        return False
    if "omega" in sampled and "omega2" in sampled:
        if name == "omega":
            return value > values["omega2"]
        if name == "omega2":
            return value < values["omega"]
    return True


def _proposal_loglik(eng, name: str, new: float, vals: Mapping[str, float]) -> float:
    """The log-likelihood with parameter ``name`` moved to ``new`` (the others at ``vals``), by the
    cheapest update of the engine's caches: ``mu0`` and ``theta`` only rescale the resident sums (O(N));
    a trigger parameter (h, omega, omega2, w) computes the proposal's trigger sums into slot 1 (promoted
    by ``swap_trigger`` if accepted); a bandwidth recomputes the background (restored if rejected)."""
    mu0, theta, omega = vals["mu0"], vals["theta"], vals["omega"]
    kw = rate_kwargs(vals)
    if name == "mu0":
        return eng.sum_log_intensity(new, theta, slot=0) - eng.integral(new, theta, omega, vals["h"], **kw)
    if name == "theta":
        return eng.sum_log_intensity(mu0, new, slot=0) - eng.integral(mu0, new, omega, vals["h"], **kw)
    if name in _TRIGGER:
        trial = {**vals, name: new}
        tkw = rate_kwargs(trial)
        eng.set_trigger(trial["h"], trial["omega"], slot=1, **tkw)
        return (eng.sum_log_intensity(mu0, theta, slot=1)
                - eng.integral(mu0, theta, trial["omega"], trial["h"], **tkw))
    # tau_x or tau_t: the background changes
    tx = new if name == "tau_x" else vals["tau_x"]
    tt = new if name == "tau_t" else vals["tau_t"]
    eng.set_background(tx, tt)
    return eng.sum_log_intensity(mu0, theta, slot=0) - eng.integral(mu0, theta, omega, vals["h"], **kw)


def _run_chain(chain: int, seed_seq: np.random.SeedSequence, cfg: _ChainConfig) -> dict:
    """One adaptive MH chain. Module-level so process pools and Dask can pickle it."""
    rng = np.random.default_rng(seed_seq)
    eng = cfg.factory.build()
    lo, hi = PARAM_RANGE[cfg.factory.dtype]
    vals = {**cfg.fixed, **cfg.init}
    eng.set_background(vals["tau_x"], vals["tau_t"])
    eng.set_trigger(vals["h"], vals["omega"], slot=0, **rate_kwargs(vals))
    ll = (eng.sum_log_intensity(vals["mu0"], vals["theta"], slot=0)
          - eng.integral(vals["mu0"], vals["theta"], vals["omega"], vals["h"], **rate_kwargs(vals)))
    if not np.isfinite(ll):
        raise ValueError(f"the log-likelihood at the initial values {vals} is not finite ({ll}); choose other init")
    names = cfg.sampled
    k = len(names)
    sigma = np.array([0.25 * _to_state(n, vals[n]) for n in names])
    batch_len = np.full(k, _FIRST_BATCH, dtype=np.int64)
    batch_acc = np.zeros(k, dtype=np.int64)
    batch_n = np.zeros(k, dtype=np.int64)
    acc_post = np.zeros(k, dtype=np.int64)
    n_post = np.zeros(k, dtype=np.int64)
    n_keep = cfg.n_iter - cfg.burn_in
    out = np.empty((n_keep, len(cfg.names)))
    debug_log: list = []
    fresh_eng = None
    if cfg.debug:
        fresh_eng = cfg.factory.build(exact=True)

    with progress_bar(total=cfg.n_iter, desc=f"chain {chain}", enabled=cfg.progress) as bar:
        for it in range(cfg.n_iter):
            for j in rng.permutation(k):
                name = names[j]
                s = _to_state(name, vals[name])
                sd = sigma[j]
                s_new = _truncnorm_positive(rng, s, sd)
                new = _from_state(name, s_new)
                if _in_support(name, new, vals, names, lo, hi):
                    ll_new = _proposal_loglik(eng, name, new, vals)
                else:
                    # outside the range where the kernels are finite (model notes), w outside [0, 1] or
                    # the rates' order broken: rejected, i.e. the prior is truncated there (the
                    # half-normal mass beyond the finite range is negligible)
                    ll_new = -math.inf
                scale = cfg.prior_scales[name]
                log_alpha = (ll_new - ll) - 0.5 * ((s_new / scale) ** 2 - (s / scale) ** 2) \
                    + _log_phi(s / sd) - _log_phi(s_new / sd)
                accept = bool(np.isfinite(ll_new)) and math.log(rng.random()) < log_alpha
                if accept:
                    vals[name] = new
                    ll = ll_new
                    if name in _TRIGGER:
                        eng.swap_trigger()
                elif name in ("tau_x", "tau_t"):
                    eng.set_background(vals["tau_x"], vals["tau_t"])
                if cfg.debug:
                    fresh = fresh_eng.log_likelihood(vals["mu0"], vals["tau_x"], vals["tau_t"], vals["theta"],
                                                     vals["omega"], vals["h"], **rate_kwargs(vals))
                    debug_log.append((name, accept, ll, float(fresh)))
                # adaptation (diminishing: batches grow as b <- ceil(b^1.1))
                batch_acc[j] += accept
                batch_n[j] += 1
                if batch_n[j] == batch_len[j]:
                    ratio = (batch_acc[j] / batch_n[j]) / TARGET_ACCEPTANCE
                    sigma[j] *= min(2.0, max(0.5, ratio))
                    batch_len[j] = math.ceil(batch_len[j] ** _BATCH_EXPONENT)
                    batch_acc[j] = 0
                    batch_n[j] = 0
                if it >= cfg.burn_in:
                    acc_post[j] += accept
                    n_post[j] += 1
            if it >= cfg.burn_in:
                out[it - cfg.burn_in] = [vals[n] for n in cfg.names]
            bar.update(1)
    return {
        "draws": out,
        "acceptance": {n: (acc_post[j] / n_post[j] if n_post[j] else np.nan) for j, n in enumerate(names)},
        "proposal_sd": {n: float(sigma[j]) for j, n in enumerate(names)},
        "final_loglik": float(ll),
        "backend": getattr(eng, "backend", cfg.factory.backend),
        "debug": debug_log,
    }




















def mcmc(x: Any, t: Any, *, n_iter: int = 10_000, burn_in: int = 1_000, chains: int = 4,
         sample: Sequence[str] | None = None, fixed: Mapping[str, float] | None = None,
         init: Mapping[str, float] | None = None, priors: Mapping[str, float] | None = None, seed: Any = None,
         executor: Any = None, progress: bool = True, backend: str = "auto", threads: int | None = None,
         dtype: Any = np.float64, exact: bool = False, window: Any = None, kernel: Any = "exponential",
         spatial_window: Any = None, background: Any = "smoother", spatial_kernel: Any = "gaussian",
         sampler: str = "mh", target_accept: float | None = None, max_tree_depth: int | None = None,
         types: Any = None, marks: Any = None, etas: Mapping | None = None) -> Any:
    """Posterior sampling for the spatiotemporal Hawkes model by adaptive Metropolis-Hastings or NUTS,
    or for its multitype (``types=``) or marked (``marks=``, space-time ETAS) extension.

    ``sampler="mh"`` (default) runs the adaptive Metropolis-Hastings sampler of the module notes (the
    paper's Algorithm 1); ``sampler="nuts"`` runs the No-U-Turn sampler on the analytic gradient
    (:func:`~hphawkes_py.hawkes.nuts.mcmc_nuts`, with these same arguments), which targets the same
    posterior and returns the same kind of result.

    Parameters
    ----------
    x : array_like, shape (N,) or (N, D)
        Event locations (D = 1, 2, 3), e.g. km. Any order.
    t : array_like, shape (N,)
        Event times, e.g. hours. Any order.
    n_iter : int
        Sweeps per chain, burn-in included (each sweep updates every sampled
        parameter once, in random order).
    burn_in : int
        Leading sweeps discarded (must be < ``n_iter``).
    chains : int
        Independent chains (seeds from ``SeedSequence(seed).spawn(chains)``).
    sample : sequence of str, optional
        Parameters to sample, from ``("h", "omega", "theta", "mu0", "tau_x", "tau_t")`` (and
        ``"omega2"``, ``"w"`` with ``kernel="exp2"``); default ``("h", "omega", "theta", "mu0")``
        plus the kernel's own parameters that ``fixed`` does not give.
    fixed : dict
        Values of every parameter not sampled (natural units). The default
        model needs ``{"tau_x": ..., "tau_t": ...}``.
    init : dict or "mode", optional
        Initial values of sampled parameters (natural units); default 1 each, as
        hpHawkes. ``"mode"`` starts every chain at :func:`posterior_mode`.
    priors : dict, optional
        Half-normal prior scales on the sampled state (``1/h`` for ``h``,
        ``1/tau`` for the bandwidths); defaults :data:`DEFAULT_PRIOR_SCALES`.
    seed : None, int or Generator
        Random seed of the chains (None: fresh entropy).
    executor : None, concurrent.futures.Executor or dask.distributed.Client
        Where chains run; the draws do not depend on it.
    progress : bool
        Progress bars on stderr.
    backend, threads, dtype, exact, window, kernel, spatial_window : optional
        As in :func:`~hphawkes_py.hawkes.log_likelihood` (``kernel``: the temporal trigger,
        ``"exponential"``, a power law (``omega`` its rate) or ``"exp2"``, the sum of two
        exponentials with the parameters ``omega2`` and ``w`` -- see the module notes on their
        priors and the ordering ``omega2 < omega``).
    spatial_kernel : "gaussian", "power-law" or ("power-law", q)
        The spatial trigger, as in :func:`~hphawkes_py.hawkes.log_likelihood`: the Gaussian (default) or
        the isotropic power law with exponent q > D/2 (fixed, not sampled); ``h`` is its scale in both
        cases and keeps its prior. Not with ``spatial_window``. The posterior remembers it
        (:attr:`HawkesPosterior.spatial_kernel`) and the tools built on it use it.
    background : "smoother" or hphawkes_py.kde.KDEFit
        As in :func:`~hphawkes_py.hawkes.log_likelihood`: with a fitted KDE the background is
        ``mu0 N f(x) / (T1 - T0)`` (f the KDE's normalised density on its window), computed once;
        ``tau_x`` and ``tau_t`` may then not be sampled (fixed at 1 and ignored unless ``fixed``
        gives them). The posterior's :func:`~hphawkes_py.hawkes.self_excitation` uses the same
        background; the forecasting and residual tools refuse such a posterior.

    sampler : {"mh", "nuts"}
        ``"mh"``: adaptive Metropolis-Hastings, ``n_iter`` sweeps. ``"nuts"``: the No-U-Turn sampler
        (needs the optional package ``mici``), ``n_iter`` NUTS transitions of up to
        ``2**max_tree_depth`` gradient evaluations each, so a few hundred to a few thousand suffice
        where MH needs tens of thousands; ``burn_in`` (>= 1) then adapts the step size and metric.
        NUTS runs its gradient on the CPU engine or, with ``backend="gpu"``/``"emulator"``, on the
        CUDA engine.
    target_accept : float, optional
        ``sampler="nuts"`` only: target of the step-size adaptation, in (0, 1); default 0.8.
    max_tree_depth : int, optional
        ``sampler="nuts"`` only: largest trajectory doubling depth; default 10.
    types : array_like of int, shape (N,), optional
        Type code 0..K-1 of every event (K = the largest code plus one): the multitype model, by
        :func:`.multitype.mcmc` (adaptive Metropolis on mu0 (K,), theta (K, K), omega and h, all
        sampled). ``fixed`` must give exactly ``tau_x`` and ``tau_t``; ``init`` may give ``mu0``,
        ``theta``, ``omega``, ``h``; ``n_iter``, ``burn_in``, ``chains``, ``seed``, ``executor``,
        ``window``, ``backend`` and ``threads`` as here. ``sample``, ``priors``, ``init="mode"``,
        ``sampler="nuts"`` and the options the model lacks (``dtype``, ``kernel``, ``spatial_kernel``,
        ``spatial_window``, ``background``) are refused; no progress bars.
    marks : array_like, shape (N,), optional
        Magnitude of every event: space-time ETAS (2-D ``x``), by :func:`.etas.mcmc`. ``sample``,
        ``fixed`` and ``init`` name ETAS parameters (``mu``, ``A``, ``alpha``, ``c``, ``p``, ``d``,
        ``gamma``, ``b`` and, with ``spatial_kernel="power-law"``, ``q``); the other arguments as for
        ``types``. Not with ``types``.
    etas : dict, optional
        With ``marks`` only: ``m0``, ``region`` or ``background``, as in
        :func:`~hphawkes_py.hawkes.log_likelihood`.

    Returns
    -------
    HawkesPosterior or MarkedPosterior
        The draws, acceptance rates and settings; ``summary()`` tabulates the sampled parameters.
        With ``sampler="nuts"`` see :func:`~hphawkes_py.hawkes.nuts.mcmc_nuts` for what
        ``acceptance_rates`` and ``proposal_sd`` hold, and its ``nuts_stats``. With ``types`` or
        ``marks`` a :class:`~.marked_sampler.MarkedPosterior` (draws named ``mu0[k]``,
        ``theta[k,l]``, ... for types; ``extra["pi"]``, ``extra["matrix"]`` or ``extra["background"]``
        the posterior mean per-event probabilities).

    Examples
    --------
    Two short chains on simulated events, the background bandwidths fixed (km and hours):

    >>> x, t = hp.hawkes.simulate(mu=0.5, theta=0.5, omega=2.0, h=0.1, region=2.0, duration=50.0, seed=1)
    >>> post = hp.hawkes.mcmc(x, t, n_iter=300, burn_in=100, chains=2, fixed={"tau_x": 0.5, "tau_t": 5.0},
    ...                       seed=1, progress=False, backend="cpu")
    >>> post.sampled, post.chains, post.n_draws
    (('h', 'omega', 'theta', 'mu0'), 2, 200)
    >>> list(post.summary().index)
    ['h', 'omega', 'theta', 'mu0']

    The same posterior by NUTS (far fewer, more expensive iterations):

    >>> post = hp.hawkes.mcmc(x, t, n_iter=150, burn_in=100, chains=2, fixed={"tau_x": 0.5, "tau_t": 5.0},
    ...                       seed=1, progress=False, backend="cpu", sampler="nuts")
    >>> post.sampled, post.chains, post.n_draws
    (('h', 'omega', 'theta', 'mu0'), 2, 50)

    Two event types: the posterior mean excitation matrix (parent types in rows):

    >>> x, t, k = hp.hawkes.simulate(mu=[0.5, 0.3], theta=[[0.3, 0.2], [0.0, 0.4]], omega=2.0, h=0.1,
    ...                              region=2.0, duration=30.0, seed=1)
    >>> post = hp.hawkes.mcmc(x, t, types=k, n_iter=30, burn_in=10, chains=2, fixed={"tau_x": 1.0, "tau_t": 10.0},
    ...                       seed=1, backend="cpu")
    >>> post.extra["matrix"].shape, post.n_draws
    ((2, 2), 20)
    """
    which = submodel(types, marks, etas, spatial_kernel, dtype=(dtype, np.float64), kernel=(kernel, "exponential"),
                     spatial_window=(spatial_window, None), background=(background, "smoother"),
                     priors=(priors, None), sampler=(sampler, "mh"), target_accept=(target_accept, None),
                     max_tree_depth=(max_tree_depth, None))
    if which is not None:
        return _mcmc_submodel(which, x, t, types=types, marks=marks, etas=etas, n_iter=n_iter, burn_in=burn_in,
                              chains=chains, sample=sample, fixed=fixed, init=init, seed=seed, executor=executor,
                              progress=progress, backend=backend, threads=threads, exact=exact, window=window,
                              spatial_kernel=spatial_kernel)
    if not isinstance(sampler, str) or sampler not in ("mh", "nuts"):
        raise ValueError(f"sampler must be 'mh' (adaptive Metropolis-Hastings) or 'nuts' (No-U-Turn), got {sampler!r}")
    nuts_only = {"target_accept": target_accept, "max_tree_depth": max_tree_depth}
    if sampler == "nuts":
        if _DEBUG.get():
            raise ValueError("sampler='nuts' has no per-move debug record (_mcmc_debug checks the MH sampler's "
                             "incremental likelihood); use sampler='mh'")
        from .nuts import mcmc_nuts  # imports this module: imported on use

        extra = {k: v for k, v in nuts_only.items() if v is not None}
        return mcmc_nuts(x, t, n_iter=n_iter, burn_in=burn_in, chains=chains, sample=sample, fixed=fixed,
                         init=init, priors=priors, seed=seed, executor=executor, progress=progress,
                         backend=backend, threads=threads, dtype=dtype, exact=exact, window=window,
                         kernel=kernel, spatial_window=spatial_window, background=background,
                         spatial_kernel=spatial_kernel, **extra)
    given = [k for k, v in nuts_only.items() if v is not None]
    if given:
        raise ValueError(f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} only for sampler='nuts' "
                         f"(the No-U-Turn sampler's settings), got {', '.join(f'{k}={nuts_only[k]!r}' for k in given)} "
                         "with sampler='mh'")
    n_iter = check_int(n_iter, "n_iter", minimum=1)
    burn_in = check_int(burn_in, "burn_in", minimum=0)
    if burn_in >= n_iter:
        raise ValueError(f"burn_in must be smaller than n_iter, got burn_in={burn_in} and n_iter={n_iter}")
    chains = check_int(chains, "chains", minimum=1)
    start_at_mode = isinstance(init, str)
    if start_at_mode and init != "mode":
        raise ValueError(f"init must be a dict of initial values or 'mode', got {init!r}")
    kern = check_kernel(kernel)
    fixed = _kde_model(background, sample, fixed)
    sample, fixed, init_vals, prior_scales = _check_model(sample, fixed, None if start_at_mode else init, priors,
                                                          "init", kern)
    seed = check_seed(seed)
    progress = check_bool(progress, "progress")
    debug = _DEBUG.get()
    prep = prepare_data(x, t, window)
    factory = engine_factory(prep, backend=backend, dtype=dtype, threads=threads, exact=exact, kernel=kern,
                             spatial_kernel=spatial_kernel)
    sw = _check_spatial_window(spatial_window, prep, factory.spatial_kernel)
    if sw is not None:
        factory = factory.replace(spatial_window=sw)
    factory = factory.replace(background=check_background(background, prep, sw))
    _check_ranges(fixed, init_vals, factory.dtype, "init")
    if start_at_mode:
        mode = _mode_search(factory, sample, fixed, init_vals, prior_scales, 600)
        init_vals = {n: mode[n] for n in sample}
    names = PARAM_NAMES + kern.extra_params
    cfg = _ChainConfig(factory=factory, names=names, sampled=sample, fixed=fixed, init=init_vals, prior_scales=prior_scales,
                       n_iter=n_iter, burn_in=burn_in, progress=progress and executor is None, debug=debug)
    t_start = time.perf_counter()
    results = run_replicates(_run_chain, range(chains), seed=seed, executor=executor,
                             progress=bool(progress) and executor is not None, desc="chains", args=(cfg,))
    elapsed = time.perf_counter() - t_start
    draws = {n: np.stack([r["draws"][:, i] for r in results]) for i, n in enumerate(names)}
    acceptance = {n: np.array([r["acceptance"][n] for r in results]) for n in sample}
    return HawkesPosterior(
        draws=draws, acceptance_rates=acceptance, sampled=sample, fixed=fixed, init=init_vals,
        prior_scales={n: prior_scales[n] for n in sample}, n_iter=n_iter, burn_in=burn_in,
        backend=results[0]["backend"], elapsed_seconds=elapsed,
        proposal_sd={n: np.array([r["proposal_sd"][n] for r in results]) for n in sample},
        engine_factory=factory, _debug=[r["debug"] for r in results],
    )


def _mcmc_submodel(which: str, x: Any, t: Any, *, types, marks, etas, n_iter, burn_in, chains, sample, fixed, init,
                   seed, executor, progress, backend, threads, exact, window, spatial_kernel):
    """:func:`mcmc` with ``types=`` (``which="multitype"``) or ``marks=`` (``"etas"``): its arguments mapped
    onto :func:`.multitype.mcmc` or :func:`.etas.mcmc`, those the model does not have refused."""
    check_bool(progress, "progress")  # the submodels' chains draw no progress bars
    check_bool(exact, "exact")  # every pair is evaluated either way
    if isinstance(init, str):
        arg = "types" if which == "multitype" else "marks"
        raise ValueError(f"init={init!r} (start at the posterior mode) is not implemented with {arg}=; give a dict "
                         "of starting values or None")
    if which == "etas":
        s = etas_settings(etas, ETAS_SETTINGS[:3])
        return SUBMODELS["etas"].mcmc(x, t, check_marks(marks), n_iter=n_iter, burn_in=burn_in, chains=chains,
                                      sample=sample, fixed=fixed, init=init, m0=s.get("m0"), region=s.get("region"),
                                      background=s.get("background"),
                                      spatial_kernel=etas_spatial_kernel(spatial_kernel), window=window, seed=seed,
                                      executor=executor, backend=backend, threads=threads)
    if sample is not None:
        raise ValueError(f"sample={sample!r} is not implemented with types=: the multitype model samples all of mu0, "
                         "theta, omega and h (tau_x and tau_t fixed); leave sample=None")
    if not isinstance(fixed, Mapping) or set(fixed) != {"tau_x", "tau_t"}:
        raise ValueError("with types= fixed must give exactly the background bandwidths {'tau_x': ..., 'tau_t': ...} "
                         f"(the multitype model samples the rest), got fixed={fixed!r}")
    return SUBMODELS["multitype"].mcmc(x, t, types, tau_x=fixed["tau_x"], tau_t=fixed["tau_t"], n_iter=n_iter,
                                       burn_in=burn_in, chains=chains, init=init, window=window, seed=seed,
                                       executor=executor, backend=backend, threads=threads)


# Set only by _mcmc_debug: the check the tests run is not part of mcmc's public signature.
_DEBUG = contextvars.ContextVar("hphawkes_mcmc_debug", default=False)


def _mcmc_debug(x: Any, t: Any, **kwargs: Any) -> "HawkesPosterior":
    """:func:`mcmc` (same arguments) that also re-evaluates the log-likelihood from scratch after every
    move and keeps both values in ``HawkesPosterior._debug`` (per chain, ``(parameter, accepted,
    incremental, fresh)`` per move): the tests compare them. Slow.

    Examples
    --------
    >>> from hphawkes_py.hawkes.sampler import _mcmc_debug
    >>> x, t = hp.hawkes.simulate(mu=0.5, theta=0.5, omega=2.0, h=0.1, region=2.0, duration=20.0, seed=1)
    >>> post = _mcmc_debug(x, t, n_iter=3, burn_in=1, chains=1, fixed={"tau_x": 0.5, "tau_t": 5.0}, seed=1,
    ...                    progress=False, backend="cpu")
    >>> len(post._debug[0])  # one record per move: 3 sweeps of 4 parameters
    12
    """
    token = _DEBUG.set(True)
    try:
        return mcmc(x, t, **kwargs)
    finally:
        _DEBUG.reset(token)
