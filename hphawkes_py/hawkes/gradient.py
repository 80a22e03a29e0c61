"""Analytic gradient of the Hawkes log-likelihood with respect to its parameters.

The log-likelihood, as the engines write it (:mod:`.engine`, :mod:`.compensator`), is

    log L = sum_n log lambda_n - Lambda,   lambda_n = mu0 S_n + theta G_n,
    S_n = own * sum_m exp(-(r2_nm / (2 tau_x^2) + dt_nm^2 / (2 tau_t^2))),  own = phi_D(0; tau_x) phi_1(0; tau_t),
    G_n = sum_{m: t_m < t_n} g(dt_nm) f(r2_nm; h),
    Lambda = mu0 sum_m B_m(tau_t) + theta sum_m C_m(omega)

(B_m = Phi((T1 - t_m)/tau_t) - Phi((T0 - t_m)/tau_t), C_m = int_0^(T1 - t_m) g; with a spatial window each
term is multiplied by its Gaussian's mass inside the window, of s.d. tau_x or h). Its partial
derivatives, with w_n = 1 / lambda_n, are

    d/d mu0    = sum_n w_n S_n - sum_m B_m
    d/d theta  = sum_n w_n G_n - sum_m C_m
    d/d tau_x  = mu0 sum_n w_n (-D S_n / tau_x + own SR_n / tau_x^3)
    d/d tau_t  = mu0 sum_n w_n (-S_n / tau_t + own ST_n / tau_t^3) - mu0 sum_m dB_m/d tau_t
    d/d h      = theta sum_n w_n dG_n/dh,       dG_n/dh = -D G_n / h + k GR_n  (k = 1/h^3 Gaussian, 2q/h power law)
    d/d omega  = theta sum_n w_n dG_n/d omega - theta sum_m dC_m/d omega

with the weighted pair sums SR, ST, GR, GAT of :mod:`.cpu_gradient` (d log g / d omega = 1/omega - dt
for the exponential, 1/omega - p dt / (1 + omega dt) for the power law; for "exp2" the two
exponentials separately, and d/dw). A windowed evaluation (``exact=False``) cuts every pair sum at the
likelihood's own time cut-offs (:mod:`.windows`): the same neighbours, so the gradient is that of the
windowed log-likelihood, whose terms the cut-offs bound by 1e-13 of each rate; the skipped terms of the
derivative sums carry at most the extra factor dt^2 / tau_t^2 (about 2 log(N / 1e-13)) or the kernels'
bounded r2 weights, so they stay near 1e-11 of the kept ones. (The engines' windowed likelihood also
skips the far pairs inside the time cut whose terms are below bound (3)'s per-term share,
``windows.trigger_limit``; the sums here keep them, so the value here and the engines' differ by less
than the bound.) The derivation is in the user guide page
``docs/user_guide/hawkes_gradients.rst``.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._backend import get_device, is_gpu_backend, threads_context
from .compensator import background_integral_terms, phi_diff, trigger_integral_terms
from .cpu_gradient import SKIND, TKIND, gradient_sums
from .engine import EngineFactory
from .kde_background import check_background
from .kernels import exp2_weights, phi0, trigger_scale
from .model import (PARAM_NAMES, _as_params, _check_params_range, _check_spatial_window, check_kernel_params,
                    engine_factory, prepare_data, rate_kwargs)
from .times import split_time, tie_starts, time_grid
from .windows import EPS_G, RHO_DEFAULT, background_delta, trigger_delta

__all__ = ["log_likelihood_gradient", "GradientModel", "window_mass_and_derivative"]

_SQRT_2PI = math.sqrt(2.0 * math.pi)


def _weighted_sum(w: np.ndarray, v: np.ndarray) -> float:
    """sum_n w_n v_n by NumPy's pairwise summation: a fixed order, whatever the machine. ``np.dot``
    would hand long vectors to BLAS, whose threaded dot product splits the sum by its own thread
    count (so the last bits would depend on it) and wakes its threads on every call."""
    return float(np.sum(w * v))


def _edge_derivative(a: np.ndarray, b: np.ndarray, s) -> np.ndarray:
    """d/ds [Phi(a) - Phi(b)] where a = (A - c)/s, b = (B - c)/s: (b phi(b) - a phi(a)) / s."""
    return (b * np.exp(-0.5 * b * b) - a * np.exp(-0.5 * a * a)) / (_SQRT_2PI * s)


def window_mass_and_derivative(x: np.ndarray, s: float, window) -> tuple[np.ndarray, np.ndarray]:
    """Mass inside the raster ``window`` of the isotropic 2-D Gaussian N(x_m, s^2 I) for every row of
    ``x`` (as :func:`~.compensator.gaussian_window_mass`) and its derivative with respect to ``s``
    (units 1/x), both float64 (N,).

    The mass is sum_{k,j} inside[k, j] P_y(m, k) P_x(m, j) with 1-D cell probabilities
    P = Phi(a) - Phi(b); its derivative follows by the product rule with
    dP/ds = (b phi(b) - a phi(a)) / s.

    Examples
    --------
    >>> import numpy as np
    >>> from hphawkes_py.kde import Window
    >>> from hphawkes_py.hawkes.gradient import window_mass_and_derivative
    >>> win = Window(mask=np.ones((4, 4), bool), cell_size=1.0, x0=0.0, y0=0.0)
    >>> m, dm = window_mass_and_derivative(np.array([[2.0, 2.0]]), 0.5, win)
    >>> round(float(m[0]), 4), bool(dm[0] < 0)  # a wider Gaussian loses mass outside the square
    (0.9999, True)
    """
    x = np.asarray(x, dtype=np.float64)
    inside = np.ascontiguousarray(window.mask[::-1], dtype=np.float64)  # row k covers y0 + [k, k+1) cs
    rows, cols = inside.shape
    cs = window.cell_size
    xe = window.x0 + cs * np.arange(cols + 1)
    ye = window.y0 + cs * np.arange(rows + 1)
    mass = np.empty(x.shape[0])
    dmass = np.empty(x.shape[0])
    block = max(1, 2_000_000 // max(1, rows * cols))
    for lo in range(0, x.shape[0], block):
        xb = x[lo:lo + block]
        ax, bx = (xe[None, 1:] - xb[:, :1]) / s, (xe[None, :-1] - xb[:, :1]) / s
        ay, by = (ye[None, 1:] - xb[:, 1:2]) / s, (ye[None, :-1] - xb[:, 1:2]) / s
        px, py = phi_diff(ax, bx), phi_diff(ay, by)
        dpx, dpy = _edge_derivative(ax, bx, s), _edge_derivative(ay, by, s)
        mass[lo:lo + block] = np.einsum("mk,kj,mj->m", py, inside, px)
        dmass[lo:lo + block] = (np.einsum("mk,kj,mj->m", dpy, inside, px)
                                + np.einsum("mk,kj,mj->m", py, inside, dpx))
    return mass, dmass


class GradientModel:
    """The log-likelihood and its gradient for one data set and engine settings.

    Built from an :class:`~.engine.EngineFactory` (what :func:`log_likelihood_gradient` and the NUTS
    sampler make from their arguments). The background sums and their derivatives are kept while
    ``tau_x`` and ``tau_t`` do not change (a sampler that fixes them pays only the trigger pass).

    Parameters
    ----------
    factory : EngineFactory
        Data (sorted by time) and settings. Its backend runs the pair sums: Numba on ``"cpu"``, the
        CUDA kernel ``hawkes_gradient_sums`` on ``"gpu"`` and ``"emulator"``
        (:class:`~.gpu.GpuGradientSums`); the O(N) rest runs in NumPy.

    Examples
    --------
    >>> from hphawkes_py.hawkes.gradient import GradientModel
    >>> from hphawkes_py.hawkes.model import engine_factory, prepare_data
    >>> x, t = hp.hawkes.simulate(mu=0.5, theta=0.5, omega=2.0, h=0.1, region=2.0, duration=50.0, seed=1)
    >>> model = GradientModel(engine_factory(prepare_data(x, t), backend="cpu"))
    >>> p = dict(mu0=0.5, tau_x=0.5, tau_t=5.0, theta=0.5, omega=2.0, h=0.1)
    >>> ll, grad = model.value_and_gradient(p)
    >>> round(ll, 3), sorted(grad) == sorted(p)
    (-165.468, True)
    """

    def __init__(self, factory: EngineFactory):
        data = factory.data
        self.dtype = np.dtype(factory.dtype)
        self.threads = factory.threads
        self.exact = bool(factory.exact)
        self.kernel = factory.kernel
        self.spatial_kernel = factory.spatial_kernel
        self.names = PARAM_NAMES + self.kernel.extra_params
        x = np.asarray(data.x_sorted, dtype=np.float64)
        t = np.asarray(data.t_sorted, dtype=np.float64)
        self.N, self.D = x.shape
        self.window = data.window
        xc = x - x.mean(axis=0)  # only differences matter; centring keeps float32 differences accurate
        cols = [np.ascontiguousarray(xc[:, d], dtype=self.dtype) for d in range(self.D)]
        cols += [np.zeros(self.N, dtype=self.dtype) for _ in range(3 - self.D)]
        self._x = tuple(cols)
        self._th, self._tl = split_time(t, self.dtype, grid=time_grid(t, self.dtype))
        self._tw = np.ascontiguousarray(t)
        self._ts = tie_starts(self._tw)
        self._t = t
        self._spatial = None
        if factory.spatial_window is not None:
            self._spatial = (x, factory.spatial_window)
        self._external = None
        if factory.background is not None:
            S = np.asarray(factory.background.sums, dtype=np.float64).reshape(-1)
            self._external = (S, float(factory.background.integral), float(S.astype(self.dtype).min()))
        self._bg_key = None
        self._bg = None
        self._mass_h = (None, None)
        self._out_s = np.zeros((self.N, 3))
        self._out_g = np.zeros((self.N, 5))
        self.backend = factory.backend
        self._gpu = None
        if is_gpu_backend(factory.backend):
            from .gpu import GpuGradientSums  # the CUDA path never needs the Numba kernels' module

            self._gpu = GpuGradientSums(cols[:self.D], self._th, self._tl, self._tw,
                                        device=get_device(factory.backend), backend=factory.backend)

    # -- background: S_n, its derivatives and the compensator's part -------------------------
    def _background(self, tau_x: float, tau_t: float):
        """(S, dS/dtau_x, dS/dtau_t, B, dB/dtau_x, dB/dtau_t, own): sums per event and the compensator's
        background part per unit mu0 with its derivatives."""
        if self._external is not None:
            S, integral, own = self._external
            zero = np.zeros_like(S)
            return S, zero, zero, integral, 0.0, 0.0, own
        key = (tau_x, tau_t)
        if self._bg_key == key:
            return self._bg
        D = self.D
        delta = math.inf if self.exact else background_delta(self.N, tau_t)
        with threads_context(self.threads):
            self._kernel(True, tau_x, tau_t, delta, False, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0, 0.0)
        own = phi0(D, tau_x) * phi0(1, tau_t)
        s0, sr, st = (self._out_s[:, k].copy() for k in range(3))
        S = own * s0
        dS_x = own * (sr / tau_x**3 - D * s0 / tau_x)
        dS_t = own * (st / tau_t**3 - s0 / tau_t)
        T0, T1 = self.window
        a, b = (T1 - self._t) / tau_t, (T0 - self._t) / tau_t
        terms = background_integral_terms(self._t, tau_t, self.window)
        dterms = _edge_derivative(a, b, tau_t)
        if self._spatial is None:
            B, dB_x, dB_t = float(np.sum(terms)), 0.0, float(np.sum(dterms))
        else:
            xs, win = self._spatial
            mass, dmass = window_mass_and_derivative(xs, tau_x, win)
            B, dB_x, dB_t = float(np.sum(mass * terms)), float(np.sum(dmass * terms)), float(np.sum(mass * dterms))
        self._bg_key = key
        self._bg = (S, dS_x, dS_t, B, dB_x, dB_t, own)
        return self._bg

    def _kernel(self, with_background, tau_x, tau_t, delta_s, with_trigger, bh, om, om2, c1, c2, p, q, tkind, skind,
                delta_g):
        """One call of :func:`~.cpu_gradient.gradient_sums` (or its CUDA twin) into ``self._out_s`` /
        ``self._out_g``."""
        if self._gpu is not None:
            self._gpu(with_background, 0.5 / tau_x**2, 0.5 / tau_t**2, delta_s, with_trigger, bh, om, om2, c1, c2,
                      p, q, tkind, skind, delta_g, self._out_s, self._out_g)
            return
        r = self.dtype.type
        gradient_sums(*self._x, self._th, self._tl, self._tw, self._ts, bool(with_background),
                      r(0.5 / tau_x**2), r(0.5 / tau_t**2), float(delta_s), r(bh), r(om), r(om2), r(c1), r(c2),
                      r(p), r(q), int(tkind), int(skind), bool(with_trigger), float(delta_g), self._out_s,
                      self._out_g)

    # -- trigger: G_n and its derivatives -------------------------------------------------------
    def _rho(self, mu0: float, theta: float) -> float:
        """The engines' rho of bound (3): the cut-off holds for theta <= mu0 / rho (engine guard)."""
        rho = RHO_DEFAULT
        if theta * rho > mu0 * (1.0 + 1e-12):
            rho = min(rho, (mu0 / theta) / 16.0)
        return rho

    def _trigger(self, v: dict, own: float):
        """G and {name: dG/dname} per event, the compensator's trigger part C per unit theta and
        {name: dC/dname}."""
        D, h, omega = self.D, v["h"], v["omega"]
        q = self.spatial_kernel.q
        p = self.kernel.p
        kw = rate_kwargs(v) if self.kernel.name == "exp2" else {}
        if self.exact:
            delta_g = math.inf
        else:
            delta_g = trigger_delta(self.N, D, 1.0, 1.0, h, omega, self._rho(v["mu0"], v["theta"]), p=p,
                                    own=own, q=q, **kw)
        scale = trigger_scale(D, h, omega, p, q=q, **kw)
        bh = 0.5 / h**2 if q == 0.0 else 1.0 / h**2
        om2, c1, c2 = 0.0, 1.0, 0.0
        if kw:
            om2 = kw["omega2"]
            c1, c2 = exp2_weights(omega, om2, kw["w"])
        with threads_context(self.threads):
            self._kernel(False, 1.0, 1.0, 0.0, True, bh, omega, om2, c1, c2, p, q, TKIND[self.kernel.name],
                         SKIND[self.spatial_kernel.name], delta_g)
        ga, gat, gb, gbt, gr = (self._out_g[:, k] for k in range(5))
        dG = {}
        if kw:
            w = kw["w"]
            f0 = scale / (w * omega + (1.0 - w) * om2)
            G = scale * (c1 * ga + c2 * gb)
            dG["omega"] = f0 * w * (ga - omega * gat)
            dG["omega2"] = f0 * (1.0 - w) * (gb - om2 * gbt)
            dG["w"] = f0 * (omega * ga - om2 * gb)
        else:
            G = scale * ga
            dG["omega"] = G / omega - (p if p else 1.0) * scale * gat
        dG["h"] = -D * G / h + scale * gr * (1.0 / h**3 if q == 0.0 else 2.0 * q / h)
        # the compensator: C_m = int_0^(T1 - t_m) g, its derivatives in the rates
        d = self.window[1] - self._t
        terms = trigger_integral_terms(self._t, omega, self.window, p, **kw)
        dterms = {}
        if kw:
            w = kw["w"]
            e1, e2 = np.exp(-omega * d), np.exp(-om2 * d)
            dterms["omega"] = w * d * e1
            dterms["omega2"] = (1.0 - w) * d * e2
            dterms["w"] = e2 - e1
        elif p:
            dterms["omega"] = (p - 1.0) * d * np.exp(-p * np.log1p(omega * d))
        else:
            dterms["omega"] = d * np.exp(-omega * d)
        if self._spatial is None:
            C = float(np.sum(terms))
            dC = {n: float(np.sum(dt)) for n, dt in dterms.items()}
            dC["h"] = 0.0
        else:
            xs, win = self._spatial
            if self._mass_h[0] != h:
                self._mass_h = (h, window_mass_and_derivative(xs, h, win))
            mass, dmass = self._mass_h[1]
            C = float(np.sum(mass * terms))
            dC = {n: float(np.sum(mass * dt)) for n, dt in dterms.items()}
            dC["h"] = float(np.sum(dmass * terms))
        return G, dG, C, dC

    def value_and_gradient(self, values: dict) -> tuple[float, dict]:
        """The log-likelihood at ``values`` (every parameter of the model by name, natural units) and
        its partial derivatives ``{name: d log L / d name}`` (units: 1 / the parameter's unit).

        With an external (KDE) background ``tau_x`` and ``tau_t`` are unused: their partials are 0.
        ValueError if a value is not finite (the parameters outside the range where the kernels are
        finite, see :data:`~.model.PARAM_RANGE`)."""
        v = {n: float(values[n]) for n in self.names}
        mu0, theta = v["mu0"], v["theta"]
        S, dS_x, dS_t, B, dB_x, dB_t, own = self._background(v["tau_x"], v["tau_t"])
        G, dG, C, dC = self._trigger(v, own)
        lam = mu0 * S + theta * G
        wn = 1.0 / lam
        ll = float(np.sum(np.log(lam))) - (mu0 * B + theta * C)
        grad = {
            "mu0": _weighted_sum(wn, S) - B,
            "tau_x": mu0 * (_weighted_sum(wn, dS_x) - dB_x),
            "tau_t": mu0 * (_weighted_sum(wn, dS_t) - dB_t),
            "theta": _weighted_sum(wn, G) - C,
        }
        for name in ("omega", "h") + self.kernel.extra_params:
            grad[name] = theta * (_weighted_sum(wn, dG[name]) - dC[name])
        grad = {n: grad[n] for n in self.names}
        bad = [n for n, g in grad.items() if not math.isfinite(g)]
        if bad or not math.isfinite(ll):
            raise ValueError(f"the log-likelihood ({ll!r}) or its partial derivatives {bad} are not finite at "
                             f"{v}; express x and t in units where the parameters are moderate")
        return ll, grad


def _gradient_factory(x, t, params, window, background, spatial_window, backend, **settings):
    """The checked parameters and the engine factory of a gradient call (every input checked first)."""
    p = _as_params(params)
    prep = prepare_data(x, t, window)
    factory = engine_factory(prep, backend=backend, **settings)
    check_kernel_params(p, factory.kernel)
    _check_params_range(p, factory.dtype)
    sw = _check_spatial_window(spatial_window, prep, factory.spatial_kernel)
    factory = factory.replace(spatial_window=sw, background=check_background(background, prep, sw))
    return p, factory


def log_likelihood_gradient(x: Any, t: Any, params: Any, *, exact: bool = False, window: Any = None,
                            dtype: Any = np.float64, backend: str = "auto", threads: int | None = None,
                            kernel: Any = "exponential", spatial_window: Any = None, background: Any = "smoother",
                            spatial_kernel: Any = "gaussian") -> dict:
    """Analytic gradient of the Hawkes log-likelihood with respect to every parameter.

    The partial derivatives of :func:`~hphawkes_py.hawkes.log_likelihood` (same arguments, same
    model, same windowed cut-offs), derived from the likelihood as the engines write it (see the
    module notes and the user guide page "Gradients and NUTS").

    Parameters
    ----------
    x : array_like, shape (N,) or (N, D)
        Event locations, D = 1, 2 or 3 (e.g. km). Any order.
    t : array_like, shape (N,)
        Event times (e.g. hours). Any order; tied events do not excite each other.
    params : HawkesParams or dict
        Model parameters, in the units of ``x`` and ``t`` (with ``omega2`` and ``w`` for
        ``kernel="exp2"``).
    exact : bool
        ``True`` sums every pair; the default cuts the sums at the log-likelihood's own time
        cut-offs (the gradient of the windowed log-likelihood, within about 1e-11 of the exact one).
    window : (T0, T1), optional
        Observation window (units of t); default ``(min t, max t)``.
    dtype : numpy.float64 or numpy.float32
        Precision of the pair terms (sums are accumulated in float64).
    backend : {"auto", "cpu", "gpu", "emulator"}
        Where the pair sums run, as in :func:`~hphawkes_py.hawkes.log_likelihood`: the CPU engine
        (Numba), a CUDA GPU, or the GPU kernel on the CPU emulator; ``"auto"`` picks a GPU when one
        is usable, else the CPU. The results agree to rounding (float64: ~1e-12 relative).
    threads : int, optional
        CPU threads (Numba); default all. The result is the same for any number.
    kernel : "exponential", "power-law", ("power-law", p) or "exp2"
        Temporal triggering kernel, as in :func:`~hphawkes_py.hawkes.log_likelihood`.
    spatial_window : hphawkes_py.kde.Window, optional
        Spatial observation window (D = 2): the compensator's Gaussians count their mass inside it,
        whose derivatives in ``tau_x`` and ``h`` are included.
    background : "smoother" or hphawkes_py.kde.KDEFit
        As in :func:`~hphawkes_py.hawkes.log_likelihood`; with a KDE ``tau_x`` and ``tau_t`` are
        unused and their partials are 0.
    spatial_kernel : "gaussian", "power-law" or ("power-law", q)
        Spatial triggering kernel, as in :func:`~hphawkes_py.hawkes.log_likelihood`.

    Returns
    -------
    dict
        ``{name: d log L / d name}`` for ``mu0, tau_x, tau_t, theta, omega, h`` (and ``omega2``,
        ``w`` for "exp2"), floats in 1 / the parameter's unit (e.g. per km for ``h``, hours for
        ``omega`` in 1/hour).

    Raises
    ------
    ValueError, TypeError
        The inputs :func:`~hphawkes_py.hawkes.log_likelihood` refuses, or a gradient that is not
        finite at extreme parameters.

    Examples
    --------
    >>> x, t = hp.hawkes.simulate(mu=0.5, theta=0.5, omega=2.0, h=0.1, region=2.0, duration=50.0, seed=1)
    >>> p = hp.hawkes.HawkesParams(mu0=0.5, tau_x=0.5, tau_t=5.0, theta=0.5, omega=2.0, h=0.1)
    >>> from hphawkes_py.hawkes.gradient import log_likelihood_gradient
    >>> g = log_likelihood_gradient(x, t, p, backend="cpu")
    >>> list(g)
    ['mu0', 'tau_x', 'tau_t', 'theta', 'omega', 'h']
    >>> bool(abs(g["theta"]) < 1e3)
    True
    """
    p, factory = _gradient_factory(x, t, params, window, background, spatial_window, backend, dtype=dtype,
                                   threads=threads, exact=exact, kernel=kernel, spatial_kernel=spatial_kernel)
    _, grad = GradientModel(factory).value_and_gradient(p.to_dict())
    return grad
