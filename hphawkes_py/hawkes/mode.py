"""The Hawkes posterior as a function of the parameters, and its mode.

Which parameters are sampled and which fixed, their half-normal priors on the sampling scale (``1/h``,
``1/tau_x``, ``1/tau_t``; the others as they are), the checks of those settings, the log posterior
evaluated through an engine's caches, and :func:`posterior_mode`, its maximum. The samplers
(:func:`~hphawkes_py.hawkes.mcmc`, :func:`~hphawkes_py.hawkes.mcmc_nuts`, the latent-structure
sampler) all start from these.
"""
from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

from .._validate import check_int, check_positive, check_probability
from .engine import EngineFactory
from .kde_background import check_background
from .kernels import check_kernel
from .model import PARAM_NAMES, PARAM_RANGE, check_param_range, engine_factory, prepare_data, rate_kwargs

__all__ = ["posterior_mode", "DEFAULT_PRIOR_SCALES", "DEFAULT_INIT"]


#: Half-normal prior scales on the sampled state (``1/h``, ``omega``, ``theta``, ``mu0``, ``1/tau_x``, ``1/tau_t``;
#: ``omega2`` and ``w`` of ``kernel="exp2"``, ``w``'s infinite scale making its prior uniform on [0, 1]).
DEFAULT_PRIOR_SCALES = {"h": 10.0, "omega": 10.0, "theta": 10.0, "mu0": 1.0, "tau_x": 10.0, "tau_t": 10.0,
                        "omega2": 10.0, "w": math.inf}


#: Initial values (natural units) of sampled parameters, as in hpHawkes (``omega2``: None means a tenth
#: of ``omega``'s initial or fixed value, below it as the ordering omega2 < omega needs).
DEFAULT_INIT = {"h": 1.0, "omega": 1.0, "theta": 1.0, "mu0": 1.0, "tau_x": 1.0, "tau_t": 1.0, "omega2": None,
                "w": 0.5}


_INVERTED = ("h", "tau_x", "tau_t")  # sampled on the 1/value scale


def _to_state(name: str, value: float) -> float:
    return 1.0 / value if name in _INVERTED else value


def _from_state(name: str, state: float) -> float:
    return 1.0 / state if name in _INVERTED else state


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
