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
from .._validate import check_bool, check_int, check_positive, check_probability, check_seed
from .engine import EngineFactory
from .kde_background import check_background
from .kernels import check_kernel
from .model import (PARAM_NAMES, PARAM_RANGE, _check_spatial_window, check_param_range, engine_factory, prepare_data,
                    rate_kwargs)
from .posterior import HawkesPosterior

__all__ = ["mcmc", "posterior_mode", "DEFAULT_PRIOR_SCALES", "DEFAULT_INIT", "TARGET_ACCEPTANCE"]

#: Half-normal prior scales on the sampled state (``1/h``, ``omega``, ``theta``, ``mu0``, ``1/tau_x``, ``1/tau_t``;
#: ``omega2`` and ``w`` of ``kernel="exp2"``, ``w``'s infinite scale making its prior uniform on [0, 1]).
DEFAULT_PRIOR_SCALES = {"h": 10.0, "omega": 10.0, "theta": 10.0, "mu0": 1.0, "tau_x": 10.0, "tau_t": 10.0,
                        "omega2": 10.0, "w": math.inf}
#: Initial values (natural units) of sampled parameters, as in hpHawkes (``omega2``: None means a tenth
#: of ``omega``'s initial or fixed value, below it as the ordering omega2 < omega needs).
DEFAULT_INIT = {"h": 1.0, "omega": 1.0, "theta": 1.0, "mu0": 1.0, "tau_x": 1.0, "tau_t": 1.0, "omega2": None,
                "w": 0.5}
_TRIGGER = ("h", "omega", "omega2", "w")  # parameters whose moves recompute the trigger sums
TARGET_ACCEPTANCE = 0.44
_FIRST_BATCH = 10
_BATCH_EXPONENT = 1.1
_INVERTED = ("h", "tau_x", "tau_t")  # sampled on the 1/value scale


def _to_state(name: str, value: float) -> float:
    return 1.0 / value if name in _INVERTED else value


def _from_state(name: str, state: float) -> float:
    return 1.0 / state if name in _INVERTED else state


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


def _log_posterior_at(eng, values: Mapping[str, float], sampled, prior_scales, current: dict) -> float:
    """Log likelihood + half-normal log prior on the sampled state, with the engine's caches:
    the background sums are recomputed only when a bandwidth changed, the trigger sums only
    when h or omega (omega2, w) changed (``current`` remembers what the engine holds). -inf
    outside the prior's support (w > 1, omega2 >= omega when both are sampled)."""
    if "w" in values and not 0.0 <= values["w"] <= 1.0:
        return -math.inf
    if "omega" in sampled and "omega2" in sampled and not values["omega2"] < values["omega"]:
        return -math.inf
    kw = rate_kwargs(values)
    bg = (values["tau_x"], values["tau_t"])
    if current.get("bg") != bg:
        eng.set_background(*bg)
        current["bg"] = bg
    tr = (values["h"], values["omega"], tuple(kw.values()))
    if current.get("tr") != tr:
        eng.set_trigger(values["h"], values["omega"], slot=0, **kw)
        current["tr"] = tr
    ll = (eng.sum_log_intensity(values["mu0"], values["theta"], slot=0)
          - eng.integral(values["mu0"], values["theta"], values["omega"], values["h"], **kw))
    lp = -0.5 * sum((_to_state(n, values[n]) / prior_scales[n]) ** 2 for n in sampled)
    return ll + lp


def _kde_model(background: Any, sample: Any, fixed: Any) -> Any:
    """With a KDE background (``background`` not ``"smoother"``): refuse sampling tau_x or tau_t and
    fix them at 1 (ignored). Returns ``fixed``, completed."""
    if isinstance(background, str):
        if background != "smoother":
            raise ValueError(f"background must be 'smoother' or a fitted hphawkes_py.kde.KDEFit, got {background!r}")
        return fixed
    names = (sample,) if isinstance(sample, str) else (tuple(sample) if sample is not None else ())
    bad = [n for n in names if n in ("tau_x", "tau_t")]
    if bad:
        raise ValueError(f"sample: {bad} are bandwidths of the smoother background; with background=KDEFit "
                         "they are not parameters of the model")
    if fixed is None or isinstance(fixed, Mapping):
        fixed = {"tau_x": 1.0, "tau_t": 1.0, **(fixed or {})}
    return fixed


def posterior_mode(x: Any, t: Any, *, sample: Sequence[str] | None = None,
                   fixed: Mapping[str, float] | None = None, start: Mapping[str, float] | None = None,
                   priors: Mapping[str, float] | None = None, backend: str = "auto", threads: int | None = None,
                   dtype: Any = np.float64, window: Any = None, maxiter: int = 600, exact: bool = False,
                   kernel: Any = "exponential", background: Any = "smoother",
                   spatial_kernel: Any = "gaussian") -> dict:
    """Maximum of the posterior density of the sampled parameters (the MCMC's target, on its state).

    Nelder-Mead over the logarithms of the sampled parameters, with the same
    likelihood engine and caching as :func:`mcmc` (background sums once when the
    bandwidths are fixed). Useful as ``mcmc(..., init="mode")``: chains started at
    the mode need no long burn-in, whereas from hpHawkes' initial values (all 1)
    the trigger rate ``omega`` of the DC data takes over 1,000 sweeps to arrive.

    Parameters
    ----------
    x : array_like, shape (N,) or (N, D)
        Event locations (D = 1, 2, 3), e.g. km. Any order.
    t : array_like, shape (N,)
        Event times, e.g. hours. Any order.
    sample, fixed, priors : sequence of str, dict, dict
        As in :func:`mcmc` and checked the same way: only the ``sample`` parameters are
        optimised, the ``fixed`` ones keep their values.
    start : dict, optional
        Starting values of sampled parameters (natural units); default 1 each (``"exp2"``:
        ``omega2`` a tenth of ``omega``, ``w`` 0.5).
    maxiter : int
        Nelder-Mead iterations (>= 1).
    backend, threads, dtype, exact, window, kernel, background, spatial_kernel : optional
        As in :func:`~hphawkes_py.hawkes.log_likelihood` (engine settings, observation window
        in units of ``t``, temporal and spatial triggering kernels, background).

    Returns
    -------
    dict
        The sampled parameters' values at the mode (natural units), plus
        ``"log_posterior"`` (up to a constant) and ``"evaluations"``.

    Examples
    --------
    >>> x, t = hp.hawkes.simulate(mu=0.5, theta=0.5, omega=2.0, h=0.1, region=2.0, duration=50.0, seed=1)
    >>> mode = hp.hawkes.posterior_mode(x, t, fixed={"tau_x": 0.5, "tau_t": 5.0}, backend="cpu",
    ...                                 start={"h": 0.2, "omega": 1.0, "theta": 0.5, "mu0": 0.5})
    >>> {n: round(mode[n], 2) for n in ("h", "omega", "theta", "mu0")}
    {'h': 0.11, 'omega': 1.67, 'theta': 0.46, 'mu0': 0.61}
    """
    kern = check_kernel(kernel)
    fixed = _kde_model(background, sample, fixed)
    sample, fixed, start_vals, prior_scales = _check_model(sample, fixed, start, priors, "start", kern)
    maxiter = check_int(maxiter, "maxiter", minimum=1)
    prep = prepare_data(x, t, window)
    factory = engine_factory(prep, backend=backend, dtype=dtype, threads=threads, exact=exact, kernel=kern,
                             spatial_kernel=spatial_kernel)
    factory = factory.replace(background=check_background(background, prep))
    _check_ranges(fixed, start_vals, factory.dtype, "start")
    return _mode_search(factory, sample, fixed, start_vals, prior_scales, maxiter)


def _mode_search(factory: EngineFactory, sample, fixed, start_vals, prior_scales, maxiter) -> dict:
    from scipy.optimize import minimize

    eng = factory.build()
    current: dict = {}
    lo, hi = (math.log(v) for v in PARAM_RANGE[factory.dtype])

    def negative(z):
        if np.any(z < lo) or np.any(z > hi):
            return 1e300
        values = {**fixed, **dict(zip(sample, np.exp(z)))}
        v = -_log_posterior_at(eng, values, sample, prior_scales, current)
        return v if np.isfinite(v) else 1e300

    x0 = np.log([start_vals[n] for n in sample])
    res = minimize(negative, x0, method="Nelder-Mead", options={"maxiter": int(maxiter), "xatol": 1e-4, "fatol": 1e-3})
    out = {n: float(v) for n, v in zip(sample, np.exp(res.x))}
    out.update(log_posterior=float(-res.fun), evaluations=int(res.nfev))
    return out


def _check_model(sample, fixed, values, priors, values_name, kernel=None):
    """The checks :func:`mcmc` and :func:`posterior_mode` share. Returns
    ``(sample, fixed, start values of every sampled parameter, prior scales of every parameter)``.
    ``kernel`` (a checked TriggerKernel) adds its parameters (``omega2``, ``w`` for "exp2"); a
    ``sample`` of None samples h, omega, theta, mu0 and those of them not in ``fixed``."""
    extra = kernel.extra_params if kernel is not None else ()
    names = PARAM_NAMES + extra
    if sample is None:  # the kernel's own parameters are sampled unless fixed
        sample = ("h", "omega", "theta", "mu0") + tuple(
            n for n in extra if not (isinstance(fixed, Mapping) and n in fixed))
    if isinstance(sample, str):
        sample = (sample,)
    try:
        sample = tuple(sample)
    except TypeError:
        raise TypeError(f"sample must be a parameter name or a sequence of them, got {sample!r}") from None
    bad = [s for s in sample if not isinstance(s, str)]
    if bad:
        raise TypeError(f"sample must hold parameter names (str), got {bad[:5]}")
    _check_names(sample, "sample", names)
    if len(set(sample)) != len(sample):
        raise ValueError(f"sample lists a parameter twice: {sample}")
    if not sample:
        raise ValueError("sample must name at least one parameter")
    fixed = _check_mapping(fixed, "fixed", names)
    both = sorted(set(sample) & set(fixed))
    if both:
        raise ValueError(f"parameter(s) {both} are both sampled (sample) and fixed (fixed); choose one")
    missing = [n for n in names if n not in sample and n not in fixed]
    if missing:
        raise ValueError(f"fixed must give a value for every parameter not sampled; missing {missing}")
    fixed = {n: (_check_weight(v, f"fixed[{n!r}]") if n == "w" else check_positive(v, f"fixed[{n!r}]"))
             for n, v in fixed.items()}
    values = _check_mapping(values, values_name, names)
    not_sampled = sorted(set(values) - set(sample))
    if not_sampled:
        raise ValueError(f"{values_name} gives value(s) for {not_sampled}, which are not sampled "
                         "(fixed parameters keep the value given in fixed)")
    start = {}
    for n in sample:
        if n == "omega2" and values.get(n) is None:
            continue  # after omega: a tenth of it
        v = values.get(n, DEFAULT_INIT[n])
        if n == "w":
            v = _check_weight(v, f"{values_name}[{n!r}]")
            if v == 0.0:  # the proposal's scale is a quarter of the start: it would never move
                raise ValueError(f"{values_name}['w'] must be in (0, 1] to be sampled, got 0.0")
        else:
            v = check_positive(v, f"{values_name}[{n!r}]")
        start[n] = v
    if "omega2" in sample and "omega2" not in start:
        start["omega2"] = 0.1 * start.get("omega", fixed.get("omega", DEFAULT_INIT["omega"]))
    start = {n: start[n] for n in sample}
    if "omega" in sample and "omega2" in sample and not start["omega2"] < start["omega"]:
        raise ValueError(f"{values_name}: omega2 must be < omega when both are sampled (omega the fast rate, "
                         f"omega2 the slow one: the ordering keeps the two exponentials from switching labels); "
                         f"got omega={start['omega']}, omega2={start['omega2']}")
    priors = _check_mapping(priors, "priors", names)
    scales = {n: (check_positive(priors[n], f"priors[{n!r}]") if n in priors else DEFAULT_PRIOR_SCALES[n])
              for n in names}
    return sample, fixed, start, scales


def _check_weight(value, name) -> float:
    return check_probability(value, name, low_open=False)


def _check_mapping(value, name, names=PARAM_NAMES) -> dict:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a dict of parameter values, got {type(value).__name__}")
    value = dict(value)
    _check_names(value, name, names)
    return value


def _check_ranges(fixed, start, dtype, values_name) -> None:
    for n, v in fixed.items():
        if n != "w":  # a weight in [0, 1], checked already
            check_param_range(f"fixed[{n!r}]", v, dtype)
    for n, v in start.items():
        if n != "w":
            check_param_range(f"{values_name}[{n!r}]", v, dtype)


def _check_names(value: Any, name: str, names=PARAM_NAMES) -> None:
    unknown = [v for v in value if v not in names]
    if unknown:
        hint = ("; omega2 and w are parameters of kernel='exp2'"
                if any(v in ("omega2", "w") for v in unknown) else "")
        raise ValueError(f"{name} has unknown parameter name(s) {unknown}; known: {names}{hint}")


def mcmc(x: Any, t: Any, *, n_iter: int = 10_000, burn_in: int = 1_000, chains: int = 4,
         sample: Sequence[str] | None = None, fixed: Mapping[str, float] | None = None,
         init: Mapping[str, float] | None = None, priors: Mapping[str, float] | None = None, seed: Any = None,
         executor: Any = None, progress: bool = True, backend: str = "auto", threads: int | None = None,
         dtype: Any = np.float64, exact: bool = False, window: Any = None, kernel: Any = "exponential",
         spatial_window: Any = None, background: Any = "smoother", spatial_kernel: Any = "gaussian",
         sampler: str = "mh", target_accept: float | None = None, max_tree_depth: int | None = None
         ) -> "HawkesPosterior":
    """Posterior sampling for the spatiotemporal Hawkes model by adaptive Metropolis-Hastings or NUTS.

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

    Returns
    -------
    HawkesPosterior
        The draws, acceptance rates and settings; ``summary()`` tabulates the sampled parameters.
        With ``sampler="nuts"`` see :func:`~hphawkes_py.hawkes.nuts.mcmc_nuts` for what
        ``acceptance_rates`` and ``proposal_sd`` hold, and its ``nuts_stats``.

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
    """
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
