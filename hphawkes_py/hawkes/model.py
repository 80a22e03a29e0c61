"""The spatiotemporal Hawkes model of Holbrook et al. (2021): parameters, input checks, ordering.

Model, for locations ``x_n`` in R^D (D = 1, 2 or 3) and times ``t_n``::

    lambda_n = mu0 * sum_{m=1..N} phi_D(x_n - x_m; tau_x) * phi_1(t_n - t_m; tau_t)
             + theta * omega * sum_{m: t_m < t_n} exp(-omega (t_n - t_m)) * phi_D(x_n - x_m; h)
    Lambda   = sum_m [ mu0 (Phi((T1 - t_m)/tau_t) - Phi((T0 - t_m)/tau_t))
                       + theta (1 - exp(-omega (T1 - t_m))) ]
    log L    = sum_n log lambda_n - Lambda

(with the paper's exponential temporal kernel omega exp(-omega dt); ``kernel=`` chooses another,
see :data:`~.kernels.KERNELS`; and the paper's Gaussian spatial trigger phi_D(.; h); ``spatial_kernel=`` chooses
the isotropic power law instead, see :data:`~.kernels.SPATIAL_KERNELS`)

with ``phi_D(z; s) = (2 pi s^2)^(-D/2) exp(-|z|^2 / (2 s^2))``.  The background
sum runs over all events including ``m = n``; triggering needs ``t_m < t_n``
strictly (tied times do not excite each other).  The observation window is
``[T0, T1] = (min t, max t)`` unless given; the spatial integral is over all
of R^D (taken as 1), as in the paper.

The hot sums live in an *engine* (:mod:`hphawkes_py.hawkes.engine`), which
needs its data sorted by time.  This module validates the user's input, sorts
it stably by time (:class:`HawkesData`), resolves the backend once per public
call into an :class:`~.engine.EngineFactory`, and maps results back to the
caller's order.

Parameter range
---------------
Every parameter must lie in ``PARAM_RANGE[dtype]`` (float64: 1e-50 to 1e50; float32:
1e-8 to 1e8). Inside it every kernel constant (``1/(2 s^2)``, ``phi_D(0; s)``, ``omega
phi_D(0; h)``) and every rate ``lambda_n`` is a finite, normal number of the kernel precision,
whatever the combination; outside it they would overflow or underflow. Express ``x`` and ``t``
in units where the parameters are moderate (km and hours for city-scale crime data).
With the spatial power law (``spatial_kernel=("power-law", q)``) the trigger's peak c_{D,q} h^(-D)
exceeds phi_D(0; h) by a factor that grows like q^(D/2) (at most about 1e9 at q = 1e6); in float32
the engines refuse (ValueError) a combination whose peak times the rate would overflow.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Mapping

import numpy as np

from .._backend import resolve_backend
from .._backend import threads_context
from .._validate import (as_float_array, check_bool, check_dtype, check_positive, check_probability,
                         check_same_length, check_threads, describe)
from .engine import EngineFactory
from .kde_background import check_background
from .kernels import TriggerKernel, check_kernel, check_spatial_kernel

__all__ = ["HawkesParams", "HawkesData", "log_likelihood", "self_excitation_probabilities", "PARAM_NAMES",
           "PARAM_RANGE", "ETAS_SETTINGS", "prepare_data", "engine_factory", "check_param_range", "rate_kwargs",
           "check_kernel_params"]


def rate_kwargs(params: Any) -> dict:
    """The extra trigger parameters of ``params`` (a :class:`HawkesParams` or a mapping) as the engines'
    keywords: ``{"omega2": ..., "w": ...}`` when given (``"exp2"``), else ``{}``."""
    get = params.get if isinstance(params, dict) else (lambda n, d=None: getattr(params, n, d))
    out = {}
    for n in ("omega2", "w"):
        v = get(n, None)
        if v is not None:
            out[n] = float(v)
    return out


def check_kernel_params(p: "HawkesParams", kernel: TriggerKernel, name: str = "params") -> None:
    """``p`` gives exactly the extra parameters ``kernel`` needs (``omega2``, ``w`` for "exp2", none otherwise)."""
    needed = kernel.extra_params
    given = tuple(n for n in ("omega2", "w") if getattr(p, n) is not None)
    missing = [n for n in needed if n not in given]
    if missing:
        raise ValueError(f"{name} must give {missing} for kernel={kernel.label!r} (omega2: second rate, "
                         "per unit of t; w: weight of the omega component, in [0, 1])")
    extra = [n for n in given if n not in needed]
    if extra:
        raise ValueError(f"{name} gives {extra}, which only kernel='exp2' uses (kernel={kernel.label!r})")


def is_posterior(obj: Any) -> bool:
    """Whether ``obj`` is a posterior (draws) rather than plug-in parameters."""
    return hasattr(obj, "draws") and hasattr(obj, "params_mean")


def draws_table(posterior: Any, n_draws: int, rng, kernel: TriggerKernel, dtype, params_name: str = "params") -> dict:
    """The parameter values a per-draw tool evaluates, ``{name: (K,) float64}``: ``n_draws`` posterior
    draws chosen by ``rng`` (all when fewer are stored), or the K = 1 plug-in values of ``posterior``
    (:class:`HawkesParams` or dict). Checked before any work: the extra parameters ``kernel`` needs
    (errors name ``"posterior"`` or ``params_name``) and the range of the ``dtype`` kernels (``w`` is
    a weight in [0, 1])."""
    post = is_posterior(posterior)
    if post:
        _, flat = posterior.select_draws(n_draws, rng)
    else:
        flat = {n: np.array([v]) for n, v in _as_params(posterior).to_dict().items()}
    check_kernel_params(HawkesParams(**{n: float(v[0]) for n, v in flat.items()}), kernel,
                        "posterior" if post else params_name)
    for n in flat:
        if n == "w":
            continue  # a weight in [0, 1]
        for v in (flat[n].min(), flat[n].max()):
            check_param_range(n, float(v), dtype)
    return flat


#: Every parameter of the model, in the order of :class:`HawkesParams`.
PARAM_NAMES = ("mu0", "tau_x", "tau_t", "theta", "omega", "h")
#: Range every parameter must lie in, per kernel precision (see the module notes).
PARAM_RANGE = {np.dtype(np.float64): (1e-50, 1e50), np.dtype(np.float32): (1e-8, 1e8)}


def check_param_range(name: str, value: float, dtype=np.float64) -> float:
    """``value`` of parameter ``name`` inside :data:`PARAM_RANGE` for ``dtype`` (else ValueError)."""
    lo, hi = PARAM_RANGE[np.dtype(dtype)]
    if not lo <= value <= hi:
        raise ValueError(
            f"{name} = {value!r} is outside the range [{lo:g}, {hi:g}] where the {np.dtype(dtype).name} kernels "
            "are finite; express x and t in other units so the parameters are moderate")
    return value


def _check_params_range(p: "HawkesParams", dtype) -> None:
    for name in PARAM_NAMES:
        check_param_range(name, getattr(p, name), dtype)
    if p.omega2 is not None:
        check_param_range("omega2", p.omega2, dtype)


@dataclasses.dataclass(frozen=True)
class HawkesParams:
    """Parameters of the spatiotemporal Hawkes model (all > 0).

    Parameters
    ----------
    mu0 : float
        Background weight (dimensionless multiplier of the space-time kernel
        density background; about the fraction of events that are background).
    tau_x : float
        Spatial bandwidth of the background kernel (units of ``x``, e.g. km).
    tau_t : float
        Temporal bandwidth of the background kernel (units of ``t``, e.g. hours).
    theta : float
        Self-excitatory weight: expected number of events directly triggered by
        one event.
    omega : float
        Rate of the exponential temporal trigger (per unit of ``t``); ``1/omega``
        is the mean delay between an event and its offspring.
    h : float
        Spatial bandwidth (standard deviation) of the Gaussian trigger kernel
        (units of ``x``).
    omega2 : float, optional
        ``kernel="exp2"`` only: rate of the second exponential component (per unit of ``t``,
        e.g. 1/hour; > 0). The trigger density is then
        ``w omega exp(-omega dt) + (1 - w) omega2 exp(-omega2 dt)``.
    w : float, optional
        ``kernel="exp2"`` only: weight of the ``omega`` component, in [0, 1] (dimensionless).

    Examples
    --------
    >>> p = hp.hawkes.HawkesParams(mu0=0.5, tau_x=0.5, tau_t=5.0, theta=0.5, omega=2.0, h=0.1)
    >>> p.replace(theta=0.8).to_dict()
    {'mu0': 0.5, 'tau_x': 0.5, 'tau_t': 5.0, 'theta': 0.8, 'omega': 2.0, 'h': 0.1}
    >>> hp.hawkes.HawkesParams(mu0=0.5, tau_x=0.5, tau_t=5.0, theta=-1.0, omega=2.0, h=0.1)
    Traceback (most recent call last):
    ...
    ValueError: theta must be > 0...
    """

    mu0: float
    tau_x: float
    tau_t: float
    theta: float
    omega: float
    h: float
    omega2: float | None = None
    w: float | None = None

    def __post_init__(self) -> None:
        for name in PARAM_NAMES:
            object.__setattr__(self, name, check_positive(getattr(self, name), name))
        if self.omega2 is not None:
            object.__setattr__(self, "omega2", check_positive(self.omega2, "omega2"))
        if self.w is not None:
            object.__setattr__(self, "w", check_probability(self.w, "w", low_open=False))

    def to_dict(self) -> dict[str, float]:
        """The parameters as a plain ``dict`` (``omega2``, ``w`` only when given)."""
        out = {name: getattr(self, name) for name in PARAM_NAMES}
        out.update(rate_kwargs(self))
        return out

    def replace(self, **changes: float) -> "HawkesParams":
        """A copy with some parameters changed (validated again)."""
        return dataclasses.replace(self, **changes)


def _as_params(params: Any) -> HawkesParams:
    if isinstance(params, HawkesParams):
        return params
    if isinstance(params, dict):
        unknown = set(params) - set(PARAM_NAMES) - {"omega2", "w"}
        missing = set(PARAM_NAMES) - set(params)
        if unknown or missing:
            raise ValueError(
                f"params must give exactly {PARAM_NAMES} (plus omega2 and w for kernel='exp2'); "
                f"unknown: {sorted(unknown)}, missing: {sorted(missing)}"
            )
        return HawkesParams(**params)
    raise TypeError(f"params must be a HawkesParams or a dict, got {type(params).__name__}")


@dataclasses.dataclass(frozen=True, eq=False)
class HawkesData:
    """Validated events sorted by time, with the permutation back to the caller's order.

    ``x_sorted[i] = x[order[i]]``; a per-event result ``r_sorted`` in sorted
    order comes back to the caller's order as ``r_sorted[inverse]``.
    """

    x_sorted: np.ndarray  # (N, D) float64
    t_sorted: np.ndarray  # (N,) float64
    order: np.ndarray
    inverse: np.ndarray
    window: tuple[float, float]

    @property
    def n(self) -> int:
        return self.t_sorted.shape[0]

    @property
    def dim(self) -> int:
        return self.x_sorted.shape[1]


def _check_real_kind(value: Any, name: str) -> None:
    """Refuse booleans, complex numbers and datetimes/timedeltas where real numbers are meant
    (NumPy would silently read True as 1, drop imaginary parts, or give nanoseconds)."""
    if value is None:
        return
    try:
        arr = np.asarray(value)
    except Exception:  # noqa: BLE001 - as_float_array reports what it cannot convert
        return
    kind = arr.dtype.kind
    bad = None
    if kind == "b":
        bad = "booleans"
    elif kind == "c":
        bad = "complex numbers"
    elif kind in "mM":
        bad = f"datetimes/timedeltas ({arr.dtype})"
    elif kind == "O" and arr.size:
        import datetime

        for v in arr.reshape(-1)[:100_000]:
            if isinstance(v, (bool, np.bool_)):
                bad = "booleans"
            elif isinstance(v, (complex, np.complexfloating)):
                bad = "complex numbers"
            elif isinstance(v, (datetime.date, datetime.timedelta, np.datetime64, np.timedelta64)):
                bad = f"datetimes/timedeltas ({type(v).__name__})"
            if bad:
                break
    if bad is None:
        return
    hint = ""
    if "datetime" in bad:
        hint = ("; convert them to numbers in the unit the parameters use, e.g. hours since the first event: "
                "(t - t.min()) / pandas.Timedelta(hours=1)")
    raise TypeError(f"{name} must hold real numbers, got {bad}{hint}")


def prepare_data(x: Any, t: Any, window: Any = None) -> HawkesData:
    """Check ``x``, ``t``, ``window``; sort stably by ``t``.

    Raises ``ValueError`` naming the argument for NaN/inf, mismatched lengths,
    a dimension outside 1..3, fewer than two events, or events outside the window,
    and ``TypeError`` for booleans, complex numbers or datetimes.
    """
    _check_real_kind(x, "x")
    _check_real_kind(t, "t")
    x_arr = as_float_array(x, "x", ndim=(1, 2), dtype=np.float64)
    if x_arr.ndim == 1:
        x_arr = x_arr[:, None]
    if not 1 <= x_arr.shape[1] <= 3:
        raise ValueError(
            f"x must have shape (N,) or (N, D) with D = 1, 2 or 3 spatial dimensions, got shape {x_arr.shape}"
        )
    t_arr = as_float_array(t, "t", ndim=1, dtype=np.float64)
    check_same_length(x=x_arr, t=t_arr)
    if t_arr.shape[0] < 2:
        raise ValueError(f"x and t must hold at least 2 events, got {t_arr.shape[0]}")
    order = np.argsort(t_arr, kind="stable")
    inverse = np.empty_like(order)
    inverse[order] = np.arange(order.size)
    t_sorted = np.ascontiguousarray(t_arr[order])
    x_sorted = np.ascontiguousarray(x_arr[order])
    if window is None:
        win = (float(t_sorted[0]), float(t_sorted[-1]))
        if not win[1] > win[0]:
            raise ValueError("t must span a positive time range (all times are equal); give window=(T0, T1)")
    else:
        _check_real_kind(window, "window")
        if isinstance(window, (list, tuple)) and any(isinstance(v, (bool, np.bool_)) for v in window):
            raise TypeError(f"window must hold real numbers, got booleans in {window!r}")
        try:
            t0, t1 = (float(v) for v in window)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"window must be a pair (T0, T1) of finite numbers, got {window!r}") from exc
        if not (np.isfinite(t0) and np.isfinite(t1) and t1 > t0):
            raise ValueError(f"window must be (T0, T1) with finite T0 < T1, got {window!r}")
        if t_sorted[0] < t0 or t_sorted[-1] > t1:
            raise ValueError(
                f"window {window!r} must contain every event time; t ranges over [{t_sorted[0]}, {t_sorted[-1]}]"
            )
        win = (t0, t1)
    return HawkesData(x_sorted, t_sorted, order, inverse, win)


# ------------------------------------------------------------------------- types and marks: the submodels
#: Keys of ``etas=`` in :func:`log_likelihood`, :func:`self_excitation_probabilities` and
#: :func:`~.sampler.mcmc`: the ETAS settings that are not parameters (``gutenberg_richter`` only in
#: :func:`log_likelihood`).
ETAS_SETTINGS = ("m0", "region", "background", "gutenberg_richter")
_LABEL = {"multitype": "multitype model (types=, hp.hawkes.multitype)",
          "etas": "space-time ETAS model (marks=, hp.hawkes.etas)"}

#: The models ``types=`` and ``marks=`` hand over to, by name: ``"multitype"`` (:mod:`.multitype`) and
#: ``"etas"`` (:mod:`.etas`). Each module enters itself here when imported (``hphawkes_py.hawkes``
#: imports both): they build on this module, so this module does not import them.
SUBMODELS: dict = {}

#: Why an option does not apply to a submodel, where the reason is not obvious.
_HINT = {("etas", "kernel"): ", whose temporal trigger is the Omori-Utsu law with c and p in params",
         ("multitype", "kernel"): ", whose temporal trigger is the exponential",
         ("etas", "background"): ", whose background is uniform over etas['region'] or etas['background']",
         ("multitype", "background"): ", whose background is the paper's smoother"}


def _is_default(value: Any, default: Any) -> bool:
    """Whether an option still has its default (compared by kind: None, bool, str or a dtype)."""
    if default is None:
        return value is None
    if isinstance(default, bool):
        return isinstance(value, (bool, np.bool_)) and bool(value) == default
    if isinstance(default, str):
        return isinstance(value, str) and value == default
    if value is None:  # np.dtype(None) would read as float64
        return False
    try:
        return np.dtype(value) == np.dtype(default)
    except TypeError:
        return False


def submodel(types: Any, marks: Any, etas: Any, spatial_kernel: Any = "gaussian", **options: Any) -> str | None:
    """The model a call asks for: ``None`` (the paper's), ``"multitype"`` (``types=`` given) or ``"etas"``
    (``marks=`` given), every argument that model does not have refused before any work. ``options``:
    name -> (value, default) of the arguments neither submodel implements (each must keep its default);
    ``spatial_kernel``: the multitype model has only the Gaussian, ETAS the Gaussian or the power law
    (:func:`etas_spatial_kernel`)."""
    if types is None and marks is None:
        if etas is not None:
            raise ValueError(f"etas= holds the ETAS settings {ETAS_SETTINGS}; it needs marks= (the magnitudes), "
                             f"got marks=None and etas={etas!r}")
        return None
    if types is not None and marks is not None:
        raise ValueError("types= and marks= together (a multitype model with magnitudes) are not implemented; give "
                         "types= (the multitype model, hp.hawkes.multitype) or marks= (space-time ETAS, "
                         "hp.hawkes.etas)")
    which = "multitype" if types is not None else "etas"
    if which == "multitype" and etas is not None:
        raise ValueError(f"etas= holds ETAS settings, which the {_LABEL[which]} does not have; got etas={etas!r}")
    for name, (value, default) in options.items():
        if not _is_default(value, default):
            hint = _HINT.get((which, name), "")
            raise ValueError(f"{name}={value!r} is not implemented for the {_LABEL[which]}{hint}; leave {name} at "
                             f"its default {default!r}")
    if which == "multitype" and not _is_default(spatial_kernel, "gaussian"):
        raise ValueError(f"spatial_kernel={spatial_kernel!r} is not implemented for the {_LABEL[which]}, whose "
                         "spatial trigger is the Gaussian; leave spatial_kernel at 'gaussian'")
    return which


def etas_spatial_kernel(spatial_kernel: Any) -> str:
    """``spatial_kernel`` of a call with ``marks=``: ETAS has ``"gaussian"`` and ``"power-law"``, whose
    exponent ``q`` is an ETAS parameter (in ``params``; sampled by ``mcmc``), not part of the kernel's name."""
    if isinstance(spatial_kernel, str) and spatial_kernel in ("gaussian", "power-law"):
        return spatial_kernel
    raise ValueError(f"with marks= (space-time ETAS) spatial_kernel must be 'gaussian' or 'power-law' (its exponent "
                     f"q is an ETAS parameter, params['q']), got {spatial_kernel!r}")


def etas_settings(etas: Any, allowed: tuple = ETAS_SETTINGS) -> dict:
    """``etas=`` checked: a dict with keys from ``allowed`` (the values are checked by :mod:`.etas`)."""
    if etas is None:
        return {}
    if not isinstance(etas, Mapping):
        raise TypeError(f"etas must be a dict of ETAS settings with keys from {allowed}, got {describe(etas)}")
    unknown = sorted(set(etas) - set(allowed), key=str)
    if unknown:
        raise ValueError(f"etas has unknown key(s) {unknown}; it takes {allowed}")
    return dict(etas)


def check_marks(marks: Any) -> np.ndarray:
    """``marks=``: one finite real magnitude per event (the count is checked against the events later)."""
    _check_real_kind(marks, "marks")
    return as_float_array(marks, "marks", ndim=1, dtype=np.float64)


def _numba_threads(threads: Any) -> int | None:
    """``threads`` checked by :func:`~hphawkes_py._validate.check_threads` and, when given, against the
    threads Numba was started with (refused at the entry point, before any work)."""
    threads = check_threads(threads)
    if threads is not None:
        threads = int(threads)
        with threads_context(threads):
            pass
    return threads


def engine_factory(data: HawkesData, *, backend: str = "auto", dtype: Any = np.float64, threads: Any = None,
                   exact: Any = False, kernel: Any = "exponential", spatial_kernel: Any = "gaussian") -> EngineFactory:
    """Check the engine settings and resolve ``backend`` (once, here) into an
    :class:`~.engine.EngineFactory` for ``data`` (``spatial_kernel`` checked against its dimension)."""
    dt = check_dtype(dtype)
    exact = check_bool(exact, "exact")
    threads = _numba_threads(threads)
    kern = check_kernel(kernel)
    skern = check_spatial_kernel(spatial_kernel, data.dim)
    return EngineFactory(data=data, backend=resolve_backend(backend), dtype=dt, threads=threads, exact=exact,
                         kernel=kern, spatial_kernel=skern)


def _check_spatial_window(spatial_window: Any, prep, spatial_kernel: Any = None) -> Any:
    """``spatial_window=``: None or a :class:`hphawkes_py.kde.Window` containing every event (D = 2);
    only with the Gaussian spatial kernel (``spatial_kernel``, checked, if given)."""
    if spatial_window is None:
        return None
    if spatial_kernel is not None and check_spatial_kernel(spatial_kernel).name != "gaussian":
        raise ValueError("spatial_window is implemented only for spatial_kernel='gaussian' (its compensator "
                         "integrates the trigger Gaussians over the window); got spatial_kernel="
                         f"{check_spatial_kernel(spatial_kernel).label!r}")
    from ..kde import Window
    if not isinstance(spatial_window, Window):
        raise TypeError(f"spatial_window must be None or a hphawkes_py.kde.Window, got {type(spatial_window).__name__}")
    xs = np.asarray(prep.x_sorted, dtype=np.float64)
    if xs.shape[1] != 2:
        raise ValueError(f"spatial_window needs 2-D locations (x of shape (N, 2)), got D = {xs.shape[1]}")
    inside = np.asarray(spatial_window.contains(xs[prep.inverse]), dtype=bool)
    if not inside.all():
        i = int(np.flatnonzero(~inside)[0])
        pt = xs[prep.inverse][i]
        raise ValueError(f"event {i} at ({pt[0]:g}, {pt[1]:g}) lies outside spatial_window "
                         f"({int((~inside).sum())} of {inside.size} events outside); the window must contain every event")
    return spatial_window


def _plugin_engine(x: Any, t: Any, params: Any, window: Any, background: Any, spatial_window: Any, **settings):
    """The checked parameters, data and a fresh engine of a call at fixed parameters (``settings``: the
    engine settings of :func:`engine_factory`), every input checked before any work."""
    p = _as_params(params)
    prep = prepare_data(x, t, window)
    factory = engine_factory(prep, **settings)
    check_kernel_params(p, factory.kernel)
    _check_params_range(p, factory.dtype)
    sw = _check_spatial_window(spatial_window, prep, factory.spatial_kernel)
    factory = factory.replace(spatial_window=sw, background=check_background(background, prep, sw))
    return p, prep, factory.build()


def log_likelihood(x: Any, t: Any, params: HawkesParams | dict, *, exact: bool = False, window: Any = None,
                   dtype: Any = np.float64, backend: str = "auto", threads: int | None = None,
                   kernel: Any = "exponential", spatial_window: Any = None, background: Any = "smoother",
                   spatial_kernel: Any = "gaussian", types: Any = None, marks: Any = None,
                   etas: Mapping | None = None) -> float:
    """Log-likelihood of the spatiotemporal Hawkes model, or of its multitype (``types=``) or marked
    (``marks=``, space-time ETAS) extension.

    Parameters
    ----------
    x : array_like, shape (N,) or (N, D)
        Event locations, D = 1, 2 or 3 (e.g. km). Any order.
    t : array_like, shape (N,)
        Event times (e.g. hours). Any order; ties allowed (tied events do not
        excite each other).
    params : HawkesParams or dict
        Model parameters, in the units of ``x`` and ``t`` (with ``omega2`` and ``w`` for
        ``kernel="exp2"``). With ``types``: a dict of ``mu0`` (K,), ``theta`` (K, K), ``omega``, ``h``,
        ``tau_x``, ``tau_t`` (:func:`.multitype.log_likelihood`). With ``marks``: a dict of the ETAS
        parameters ``mu``, ``A``, ``alpha``, ``c``, ``p``, ``d``, ``gamma``, ``b`` (and ``q``)
        (:func:`.etas.log_likelihood`).
    exact : bool
        ``True`` evaluates every pair as the paper does; the default skips
        only pairs whose total contribution is provably below 1e-13 of each
        rate (exact to double precision, much faster). With ``types`` or ``marks`` every pair is
        always evaluated.
    window : (T0, T1), optional
        Observation window; default ``(min t, max t)``.
    dtype : numpy.float64 or numpy.float32
        Precision of the pair sums.
    backend : {"auto", "cpu", "gpu", "emulator"}
        Where the pair sums run (``"auto"``: a GPU when one is usable, else the CPU).
    threads : int, optional
        CPU threads (Numba); default all.
    kernel : "exponential", "power-law", ("power-law", p) or "exp2"
        Temporal triggering kernel (see :data:`~.kernels.KERNELS`); ``omega`` is its rate (1/c of the power
        law); ``"exp2"``: the sum of two exponentials, ``w omega exp(-omega dt)
        + (1 - w) omega2 exp(-omega2 dt)``, whose ``omega2`` and ``w`` come in ``params``.
    spatial_kernel : "gaussian", "power-law" or ("power-law", q)
        Spatial triggering kernel (see :data:`~.kernels.SPATIAL_KERNELS`), with scale ``h`` (units of x):
        the Gaussian phi_D(z; h) (default), or the isotropic power law
        ``Gamma(q) / (Gamma(q - D/2) pi^(D/2) h^D) (1 + |z|^2/h^2)^(-q)`` with exponent q > D/2
        (``"power-law"`` alone: q = 2). Not with ``spatial_window``.
    spatial_window : hphawkes_py.kde.Window, optional
        Spatial observation window (raster mask, D = 2 only). The compensator then integrates
        the rate over the window instead of the whole plane: each background Gaussian (s.d.
        tau_x) and trigger Gaussian (s.d. h) counts only its mass inside the window, as in
        windowed ETAS. Every event must lie inside it.
    background : "smoother" or hphawkes_py.kde.KDEFit
        ``"smoother"`` (default): the paper's space-time Gaussian smoother of all events
        (bandwidths ``tau_x``, ``tau_t``). A fitted KDE (``hp.kde.fit(points, window,
        method="adaptive")``, D = 2): the background rate is ``mu0 N f(x) / (T1 - T0)`` with f the
        KDE normalised to a probability density on its window (per unit area; untruncated kernels,
        exact window mass) and a constant rate over the period ``[T0, T1]``; its compensator part
        is exactly ``mu0 N``, and ``tau_x``, ``tau_t`` are ignored. Every event must lie in the
        KDE's window; ``spatial_window``, if given, must be that window. See
        :mod:`hphawkes_py.hawkes.kde_background`.
    types : array_like of int, shape (N,), optional
        Type code 0..K-1 of every event: the multitype model, K taken from ``params['mu0']``; the
        result is :func:`.multitype.log_likelihood`'s. Only with the defaults of ``dtype``, ``kernel``,
        ``spatial_kernel``, ``spatial_window`` and ``background`` (ValueError otherwise).
    marks : array_like, shape (N,), optional
        Magnitude of every event: space-time ETAS (2-D ``x``); the result is
        :func:`.etas.log_likelihood`'s. ``spatial_kernel`` may be ``"gaussian"`` or ``"power-law"``
        (then ``params['q']``); ``dtype``, ``kernel``, ``spatial_window`` and ``background`` keep their
        defaults (the ETAS background is set by ``etas``). Not with ``types``.
    etas : dict, optional
        With ``marks`` only, the ETAS settings (keys of :data:`ETAS_SETTINGS`): ``m0`` (magnitude of
        completeness; default the smallest mark), ``region`` (rectangle of the uniform background; default
        the events' bounding box) or ``background`` (the background density at every event, 1 / units
        of x squared), and ``gutenberg_richter`` (bool, default True: add the magnitudes' term
        sum_n log s(m_n)).

    Returns
    -------
    float
        ``sum_n log lambda_n - Lambda``.

    Examples
    --------
    Events simulated on a 2 km square over 50 hours, and the log-likelihood at the true
    trigger (the windowed default equals the paper's every-pair sum to 1e-13):

    >>> x, t = hp.hawkes.simulate(mu=0.5, theta=0.5, omega=2.0, h=0.1, region=2.0, duration=50.0, seed=1)
    >>> p = hp.hawkes.HawkesParams(mu0=0.5, tau_x=0.5, tau_t=5.0, theta=0.5, omega=2.0, h=0.1)
    >>> round(hp.hawkes.log_likelihood(x, t, p, backend="cpu"), 3)
    -165.468
    >>> round(hp.hawkes.log_likelihood(x, t, p, backend="cpu", exact=True), 3)
    -165.468
    >>> round(hp.hawkes.log_likelihood(x, t, p, backend="cpu", kernel=("power-law", 2.5)), 3)
    -164.668

    Two event types (``theta[k, l]``: type-l offspring of a type-k event) and earthquake magnitudes
    (space-time ETAS):

    >>> x, t, k = hp.hawkes.simulate(mu=[0.5, 0.3], theta=[[0.3, 0.2], [0.0, 0.4]], omega=2.0, h=0.1,
    ...                              region=2.0, duration=30.0, seed=1)
    >>> p = dict(mu0=[0.6, 0.5], theta=[[0.3, 0.2], [0.0, 0.4]], omega=2.0, h=0.1, tau_x=1.0, tau_t=10.0)
    >>> round(hp.hawkes.log_likelihood(x, t, p, types=k, backend="cpu"), 4)
    -268.7838
    >>> truth = dict(mu=0.5, A=0.3, alpha=1.0, c=0.01, p=1.2, d=0.02, gamma=0.5, b=1.0)
    >>> x, t, m = hp.hawkes.simulate(etas=dict(truth, m0=3.0), region=10.0, duration=100.0, seed=1)
    >>> round(hp.hawkes.log_likelihood(x, t, truth, marks=m, etas={"m0": 3.0, "region": 10.0},
    ...                                window=(0, 100), backend="cpu"), 4)
    -350.4063
    """
    which = submodel(types, marks, etas, spatial_kernel, dtype=(dtype, np.float64), kernel=(kernel, "exponential"),
                     spatial_window=(spatial_window, None), background=(background, "smoother"))
    if which is not None:
        check_bool(exact, "exact")  # every pair is evaluated either way
    if which == "multitype":
        return SUBMODELS["multitype"].log_likelihood(x, t, types, params, window=window, backend=backend,
                                                     threads=threads)
    if which == "etas":
        s = etas_settings(etas)
        return SUBMODELS["etas"].log_likelihood(x, t, check_marks(marks), params, m0=s.get("m0"),
                                                region=s.get("region"), background=s.get("background"),
                                                spatial_kernel=etas_spatial_kernel(spatial_kernel),
                                                marks=s.get("gutenberg_richter", True), window=window,
                                                backend=backend, threads=threads)
    p, _, eng = _plugin_engine(x, t, params, window, background, spatial_window, backend=backend, dtype=dtype,
                               threads=threads, exact=exact, kernel=kernel, spatial_kernel=spatial_kernel)
    return float(eng.log_likelihood(p.mu0, p.tau_x, p.tau_t, p.theta, p.omega, p.h, **rate_kwargs(p)))


def self_excitation_probabilities(x: Any, t: Any, params: HawkesParams | dict, *, exact: bool = False,
                                  window: Any = None, dtype: Any = np.float64, backend: str = "auto",
                                  threads: int | None = None, kernel: Any = "exponential",
                                  background: Any = "smoother", spatial_kernel: Any = "gaussian",
                                  types: Any = None, marks: Any = None, etas: Mapping | None = None) -> Any:
    """Probability that each event was triggered by an earlier event (per type pair with ``types=``;
    with ``marks=`` the ETAS declustering probabilities).

    ``pi_n = xi_n / lambda_n`` with ``xi_n`` the self-excitatory part of the
    rate (``theta * G_n``), at fixed parameters (for a posterior see
    :func:`self_excitation`).

    Parameters
    ----------
    x : array_like, shape (N,) or (N, D)
        Event locations, D = 1, 2 or 3 (e.g. km). Any order.
    t : array_like, shape (N,)
        Event times (e.g. hours). Any order.
    params : HawkesParams or dict
        Model parameters, in the units of ``x`` and ``t``.
    exact : bool
        ``True`` evaluates every pair; the default skips only pairs whose contribution is
        provably below 1e-13 of each rate.
    window : (T0, T1), optional
        Observation window (units of ``t``); default ``(min t, max t)``.
    dtype : numpy.float64 or numpy.float32
        Precision of the pair sums.
    backend : {"auto", "cpu", "gpu", "emulator"}
        Where the pair sums run.
    threads : int, optional
        CPU threads (Numba); default all.
    kernel : "exponential", "power-law", ("power-law", p) or "exp2"
        Temporal triggering kernel, as in :func:`log_likelihood`.
    background : "smoother" or hphawkes_py.kde.KDEFit
        The background, as in :func:`log_likelihood`.
    spatial_kernel : "gaussian", "power-law" or ("power-law", q)
        Spatial triggering kernel, as in :func:`log_likelihood`.
    types : array_like of int, shape (N,), optional
        Type codes 0..K-1: the multitype model, as in :func:`log_likelihood` (``params`` its dict).
    marks : array_like, shape (N,), optional
        Magnitudes: space-time ETAS, as in :func:`log_likelihood` (``params`` its dict; ``b`` unused).
    etas : dict, optional
        With ``marks``: ``m0``, ``region`` or ``background``, as in :func:`log_likelihood`.

    Returns
    -------
    ndarray, shape (N,), or dict
        ``pi_n`` in [0, 1] (dimensionless), in the caller's order of events. With ``types`` the dict
        of :func:`.multitype.probabilities`: ``pi`` (N, K), column k the probability that event n was
        triggered by a type-k event, ``background`` (N,) and ``matrix`` (K, K), the expected number of
        type-l events triggered by type-k events. With ``marks`` the dict of
        :func:`.etas.probabilities`: ``background`` (N,) and ``triggered`` (N,), pi_n.

    Examples
    --------
    >>> x, t = hp.hawkes.simulate(mu=0.5, theta=0.5, omega=2.0, h=0.1, region=2.0, duration=50.0, seed=1)
    >>> p = hp.hawkes.HawkesParams(mu0=0.5, tau_x=0.5, tau_t=5.0, theta=0.5, omega=2.0, h=0.1)
    >>> pi = hp.hawkes.self_excitation_probabilities(x, t, p, backend="cpu")
    >>> pi.shape, round(float(pi.sum()), 1)  # about 85 of the 187 events are offspring
    ((187,), 85.0)

    Per type pair: ``matrix[k, l]`` counts the type-l events expected to be offspring of type-k events:

    >>> theta = [[0.3, 0.2], [0.0, 0.4]]
    >>> x, t, k = hp.hawkes.simulate(mu=[0.5, 0.3], theta=theta, omega=2.0, h=0.1, region=2.0, duration=30.0,
    ...                              seed=1)
    >>> pr = hp.hawkes.self_excitation_probabilities(x, t, dict(mu0=[0.6, 0.5], theta=theta, omega=2.0, h=0.1,
    ...                                                         tau_x=1.0, tau_t=10.0), types=k, backend="cpu")
    >>> pr["pi"].shape == (t.size, 2), bool(np.allclose(pr["pi"].sum(axis=1) + pr["background"], 1.0))
    (True, True)
    """
    which = submodel(types, marks, etas, spatial_kernel, dtype=(dtype, np.float64), kernel=(kernel, "exponential"),
                     background=(background, "smoother"))
    if which is not None:
        check_bool(exact, "exact")  # every pair is evaluated either way
    if which == "multitype":
        return SUBMODELS["multitype"].probabilities(x, t, types, params, window=window, backend=backend,
                                                    threads=threads)
    if which == "etas":
        s = etas_settings(etas, ETAS_SETTINGS[:3])
        return SUBMODELS["etas"].probabilities(x, t, check_marks(marks), params, m0=s.get("m0"),
                                               region=s.get("region"), background=s.get("background"),
                                               spatial_kernel=etas_spatial_kernel(spatial_kernel), window=window,
                                               backend=backend, threads=threads)
    p, prep, eng = _plugin_engine(x, t, params, window, background, None, backend=backend, dtype=dtype,
                                  threads=threads, exact=exact, kernel=kernel, spatial_kernel=spatial_kernel)
    eng.set_background(p.tau_x, p.tau_t)
    eng.set_trigger(p.h, p.omega, slot=0, **rate_kwargs(p))
    pi_sorted = np.asarray(eng.self_excitation(p.mu0, p.theta, slot=0), dtype=np.float64)
    return pi_sorted[prep.inverse]
