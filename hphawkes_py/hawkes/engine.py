"""Hawkes likelihood engines: :func:`make_engine`, the :class:`Engine` base class and the
:class:`EngineFactory` results keep.

:class:`~.cpu.CpuEngine` (Numba) and :class:`~.gpu.GpuEngine` (CUDA through a ``Device``) are
siblings: both import this module, never each other, and this module imports neither at module
level (``make_engine`` imports the one asked for), so a GPU engine never loads Numba.

The engines evaluate, for events already sorted by time (``x`` of shape (N, D), ``t`` (N,)),

    S_n = sum_{m=1..N} phi_D(x_n - x_m; tau_x) phi_1(t_n - t_m; tau_t)          (all m, m = n included)
    G_n = sum_{m: t_m < t_n} g(t_n - t_m) f(x_n - x_m; h)                          (strictly earlier)
    lambda_n = mu0 S_n + theta G_n,    log L = sum_n log lambda_n - Lambda,

g and f the temporal and spatial trigger kernels (:mod:`.kernels`), Lambda the compensator
(:mod:`.compensator`). They never store anything of size N x N. ``S`` is kept resident (it changes
only with tau_x, tau_t); ``G`` lives in two resident slots so an MCMC h/omega proposal can be
computed into slot 1 and either discarded or promoted with :meth:`Engine.swap_trigger` (no copy).
By default (``exact=False``) each sum skips the pairs whose total is provably below 1e-13 of every
rate (:mod:`.windows`); :meth:`Engine.query_sums` evaluates the same sums at points off the data
(forecasts). The derivation of the likelihood, its windowed form and the bounds is the
documentation's method page ``docs/methods/hawkes_likelihood.rst``.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from .._backend import get_device, is_gpu_backend
from .compensator import (background_integral_part, background_integral_terms, gaussian_window_mass,
                          trigger_integral_part, trigger_integral_terms)
from .kernels import (SpatialKernel, TriggerKernel, as_trigger_kernel, check_spatial_kernel, exp2_weights, phi0,
                      trigger_scale)
from .windows import EPS_G, RHO_DEFAULT, background_delta, trigger_delta, trigger_limit

__all__ = ["make_engine", "Engine", "EngineFactory"]


def make_engine(x_sorted, t_sorted, *, backend: str = "cpu", dtype=np.float64, threads=None,
                exact: bool = False, window=None, kernel_p: float = 0.0, kernel=None, spatial_kernel=None):
    """Build a likelihood engine for time-sorted, validated events on a resolved backend.

    Parameters
    ----------
    x_sorted : ndarray (N, D)
        Locations (D = 1, 2, 3), sorted with the times.
    t_sorted : ndarray (N,)
        Times, non-decreasing.
    backend : {"cpu", "gpu", "emulator"}
        An already resolved backend (:func:`hphawkes_py._backend.resolve_backend` is called once,
        by the public entry point). The GPU engine receives its device here
        (:func:`hphawkes_py._backend.get_device`); engines never fetch devices themselves.
    dtype : np.float64 or np.float32
        Precision of the pair kernel. Sums are accumulated in float64 on the CPU engine
        and in REAL (the kernel precision) on the GPU engine.
    threads : int or None
        Numba threads for the CPU engine.
    exact : bool
        Evaluate every pair (as the paper); default windowed, exact to 1e-13 (:mod:`.windows`).
    window : (T0, T1) or None
        Observation window of the integral; default (t[0], t[-1]).
    kernel_p : float
        Temporal trigger kernel: 0 = exponential, p > 1 = power-law (Omori-Utsu) with exponent p.
    kernel : TriggerKernel, "exponential", "power-law", ("power-law", p) or "exp2", optional
        The temporal kernel (overrides ``kernel_p``); ``"exp2"`` is the sum of two exponentials,
        whose ``omega2`` and ``w`` the trigger methods then take as keywords.
    spatial_kernel : SpatialKernel, "gaussian" or ("power-law", q), optional
        The spatial trigger kernel (default Gaussian, scale ``h`` = its s.d.); the power law
        c_{D,q} h^(-D) (1 + r^2/h^2)^(-q) needs q > D/2 (:mod:`.kernels`).
    """
    kernel = as_trigger_kernel(kernel, kernel_p)
    spatial_kernel = check_spatial_kernel(spatial_kernel)
    x = np.asarray(x_sorted, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    t = np.asarray(t_sorted, dtype=np.float64)
    if window is None:
        window = (float(t[0]), float(t[-1]))
    window = (float(window[0]), float(window[1]))
    if is_gpu_backend(backend):
        from .gpu import GpuEngine

        return GpuEngine(x, t, device=get_device(backend), backend=backend, dtype=dtype, threads=threads,
                         exact=exact, window=window, kernel=kernel, spatial_kernel=spatial_kernel)
    if backend != "cpu":
        raise ValueError(f"make_engine needs a resolved backend ('cpu', 'gpu' or 'emulator'), got {backend!r}")
    from .cpu import CpuEngine

    return CpuEngine(x, t, dtype=dtype, threads=threads, exact=exact, window=window, kernel=kernel,
                     spatial_kernel=spatial_kernel)


@dataclasses.dataclass(frozen=True, eq=False)
class EngineFactory:
    """Everything needed to build a fresh engine for one data set: what results keep instead
    of private preparation state, so MCMC chains (in any process), the self-excitation
    probabilities and forecasts rebuild their engines from it.

    Attributes
    ----------
    data : object
        The validated, time-sorted events (:class:`~.model.HawkesData`: ``x_sorted``,
        ``t_sorted``, ``window``, ``inverse``).
    backend : {"cpu", "gpu", "emulator"}
        The resolved backend.
    dtype : numpy.dtype
    threads : int or None
    exact : bool
    kernel : TriggerKernel
        Temporal trigger kernel (``kernel_p``: its power-law exponent, 0 for the others).
    spatial_kernel : SpatialKernel
        Spatial trigger kernel (Gaussian by default; ``("power-law", q)``).
    spatial_window : hphawkes_py.kde.Window or None
        Spatial observation window of the compensator (None: the whole plane).
    background : object or None
        An external background (``sums``: S_n in the data's sorted order, ``integral``: its
        compensator part, e.g. :class:`~.kde_background.KDEBackground`) that replaces the
        space-time smoother (None: the smoother, with tau_x and tau_t).
    """

    data: Any
    backend: str
    dtype: Any = np.float64
    threads: Any = None
    exact: bool = False
    kernel: TriggerKernel = TriggerKernel("exponential")
    spatial_window: Any = None
    background: Any = None
    spatial_kernel: SpatialKernel = SpatialKernel("gaussian")

    @property
    def kernel_p(self) -> float:
        """The power-law exponent of ``kernel`` (0 for the exponential kernels)."""
        return self.kernel.p

    def build(self, *, exact: bool | None = None):
        """A new engine holding ``data`` (``exact`` overrides the factory's)."""
        eng = make_engine(self.data.x_sorted, self.data.t_sorted, backend=self.backend, dtype=self.dtype,
                          threads=self.threads, exact=self.exact if exact is None else bool(exact),
                          window=self.data.window, kernel=self.kernel, spatial_kernel=self.spatial_kernel)
        if self.spatial_window is not None:
            eng.set_spatial_window(self.data.x_sorted, self.spatial_window)
        if self.background is not None:
            eng.set_external_background(self.background.sums, self.background.integral)
        return eng

    def replace(self, **changes) -> "EngineFactory":
        """A copy with some settings changed."""
        return dataclasses.replace(self, **changes)


class Engine:
    """Parameter caching, trigger slots, the rho guard of bound (3) and the integral.

    Subclasses implement the kernels: ``_k_background(tau_x, tau_t, delta)``,
    ``_k_trigger(h, rates, delta, slot)``, ``_k_both(tau_x, tau_t, delta_s, h, rates, delta_g, slot)``,
    ``_k_sum_log(mu0, theta, slot)``, ``_k_pi(mu0, theta, slot)``, ``_k_S()``, ``_k_G(slot)``,
    ``_k_trigger_integral(omega)`` (the exponential kernel's part) and ``_k_query``. ``rates`` is the
    tuple of temporal trigger parameters: ``(omega,)``, or ``(omega, omega2, w)`` for ``"exp2"``;
    :meth:`_trigger_consts` turns it into the loops' constants.
    """

    backend = "cpu"

    def __init__(self, x, t, *, dtype, threads, exact, window, kernel_p=0.0, kernel=None, spatial_kernel=None):
        self.N, self.D = x.shape
        self.kernel = as_trigger_kernel(kernel, kernel_p)
        self.spatial_kernel = check_spatial_kernel(spatial_kernel).check_dim(self.D)
        self.spatial_q = self.spatial_kernel.q  # 0: Gaussian
        self.kernel_p = self.kernel.p
        self.exp2 = self.kernel.name == "exp2"
        if self.D not in (1, 2, 3):
            raise ValueError(f"x must have D = 1, 2 or 3 columns, got {self.D}")
        self.dtype = np.dtype(dtype)
        if self.dtype not in (np.dtype(np.float64), np.dtype(np.float32)):
            raise ValueError(f"dtype must be float64 or float32, got {self.dtype}")
        self.threads = threads
        self.exact = bool(exact)
        self.window = window
        self._t64 = t
        self._pairs = 0
        self._bg_params = None          # (tau_x, tau_t) of the resident S
        self._bg_integral = None
        self._own = None
        self._slot_params = [None, None]  # (h, rates, bound) per slot
        self._slot_order = [0, 1]       # logical slot -> physical buffer
        self._rho = RHO_DEFAULT
        self._omega_integral = (None, None)
        self._spatial = None            # (x_sorted float64, kde.Window) when the plane is replaced by a window
        self._spatial_mass = (None, None)  # (h, trigger Gaussians' masses inside the window)
        self._external = False          # True: S was set by set_external_background (tau_x, tau_t unused)

    def set_spatial_window(self, x_sorted, window) -> None:
        """Integrate the rate over the raster ``window`` (:class:`hphawkes_py.kde.Window`, D = 2)
        instead of the whole plane: each Gaussian of the background (s.d. tau_x) and of the
        trigger (s.d. h) contributes its mass inside the window (:func:`gaussian_window_mass`).
        ``x_sorted`` are the events in the engine's (time-sorted) order; the caller checks they
        lie inside the window. Only the compensator changes; the pair sums do not.
        Gaussian spatial kernel only: the window mass of the spatial power law is not implemented
        (ValueError naming ``spatial_kernel``, never a silent Gaussian mass)."""
        if self.spatial_q:
            raise ValueError("spatial_window is implemented only for spatial_kernel='gaussian' (the compensator "
                             "integrates the trigger Gaussians over the window); got spatial_kernel="
                             f"{self.spatial_kernel.label!r}")
        if self.D != 2:
            raise ValueError(f"a spatial window needs D = 2 coordinates, got D = {self.D}")
        self._spatial = (np.array(x_sorted, dtype=np.float64, copy=True), window)
        if not self._external:  # an external background brings its own integral
            self._bg_params = None
            self._bg_integral = None
        self._omega_integral = (None, None)
        self._spatial_mass = (None, None)

    @property
    def pair_evaluations(self) -> int:
        """Number of pair kernel terms evaluated so far (exp evaluations; see the engine docs)."""
        pending = int(self._pending_pairs())
        return int(self._pairs) + pending

    def _pending_pairs(self) -> int:
        return 0

    # -- temporal trigger parameters ---------------------------------------------------------
    def _rates(self, omega, omega2=None, w=None) -> tuple:
        """The temporal trigger parameters as a tuple: ``(omega,)`` or ``(omega, omega2, w)`` ("exp2")."""
        omega = float(omega)
        if not self.exp2:
            if omega2 is not None or w is not None:
                raise ValueError(f"omega2 and w are parameters of the 'exp2' kernel, not of {self.kernel.name!r}")
            return (omega,)
        if omega2 is None or w is None:
            raise ValueError("the 'exp2' kernel needs omega2 and w (the second rate and the weight of omega)")
        omega2, w = float(omega2), float(w)
        if not (omega2 > 0.0 and math.isfinite(omega2)):
            raise ValueError(f"omega2 must be a positive finite rate, got {omega2!r}")
        if not 0.0 <= w <= 1.0:
            raise ValueError(f"w must be in [0, 1] (the weight of the omega component), got {w!r}")
        return (omega, omega2, w)

    @staticmethod
    def _rate_kw(rates) -> dict:
        return {} if len(rates) == 1 else {"omega2": rates[1], "w": rates[2]}

    def _trigger_consts(self, h, rates):
        """(bh, omega, c1, omega2, c2, scale) of the pair loops: the trigger term of a pair is
        scale * [c1 exp(-(Q + T(omega, dt))) + c2 exp(-(Q + omega2 dt))] with T the kernel's
        time term and Q the spatial term: bh r2 (Gaussian, bh = 1/(2h^2)) or q log1p(bh r2) (spatial
        power law with exponent q = ``self.spatial_q``, bh = 1/h^2); c1 = 1, c2 = 0 except for "exp2"
        (:func:`exp2_weights`)."""
        omega = rates[0]
        sq = self.spatial_q
        scale = trigger_scale(self.D, h, omega, self.kernel_p, **self._rate_kw(rates), q=sq)
        if sq and self.dtype == np.float32 and not scale < 1e36:
            # the power law's peak c_{D,q} h^-D exceeds phi_D(0; h) by up to ~(q/pi)^(D/2) (2 pi)^(D/2)
            # (1e9 at q = 1e6, D = 3): extreme q, h and omega can overflow the float32 sums of the GPU engine
            raise ValueError(f"the spatial power law's peak times the trigger rate ({scale:.3g}) overflows float32 "
                             f"sums (spatial_kernel exponent q = {sq:g}, h = {h:g}); use dtype=float64 or express x "
                             "in units where h is larger")
        bh = 0.5 / h**2 if sq == 0.0 else 1.0 / h**2
        if len(rates) == 1:
            return bh, omega, 1.0, 0.0, 0.0, scale
        c1, c2 = exp2_weights(*rates)
        return bh, omega, c1, rates[1], c2, scale

    # -- windows ---------------------------------------------------------------------------
    def _delta_s(self, tau_t):
        return math.inf if self.exact else background_delta(self.N, tau_t)

    def _delta_g(self, h, rates, rho):
        if self.exact:
            return math.inf
        return trigger_delta(self.N, self.D, 1.0, 1.0, h, rates[0], rho, p=self.kernel_p, own=self._own,
                             q=self.spatial_q, **self._rate_kw(rates))

    def _limit(self, lim):
        """The space-time cut ``lim`` in the kernel dtype, as the pair loops take it (the dtype's largest
        finite value when there is none: the loops compare under fast-math, which assumes no inf)."""
        return self.dtype.type(lim) if math.isfinite(lim) else np.finfo(self.dtype).max

    def _limit_g(self, h, rates, rho, own=None):
        """The space-time cut of the trigger pass (:func:`~.windows.trigger_limit`): pairs whose trigger
        exponent Q + T reaches it are skipped (inf: none, exact or "exp2")."""
        if self.exact:
            return math.inf
        return trigger_limit(self.N, self.D, 1.0, 1.0, h, rates[0], rho, p=self.kernel_p,
                             own=self._own if own is None else own, q=self.spatial_q, **self._rate_kw(rates))

    # -- public interface -------------------------------------------------------------------
    def set_external_background(self, sums, integral) -> None:
        """Replace the space-time smoother by a fixed background: ``sums`` are S_n (shape (N,),
        sorted order, > 0, units of the rate per unit mu0), ``integral`` its compensator part
        (the integral of the background rate per unit mu0 over the observation region).

        Afterwards :meth:`set_background` is a no-op (tau_x, tau_t are unused), S is never
        recomputed, and the windowed trigger's bound (3) uses own = min_n S_n: S is exact (no
        background window), so S_n >= own holds for every n and (1) -- hence the guard -- is
        unchanged. Used for the KDE background (:mod:`.kde_background`) on every engine."""
        S = np.asarray(sums, dtype=np.float64).reshape(-1)
        if S.shape != (self.N,):
            raise ValueError(f"an external background needs {self.N} sums (one per event), got shape {S.shape}")
        Sd = S.astype(self.dtype)
        if not (np.all(np.isfinite(Sd)) and np.all(Sd > 0)):
            raise ValueError("an external background needs finite sums > 0 at every event (in the engine's "
                             f"{self.dtype.name}); got min {S.min()!r}")
        integral = float(integral)
        if not (math.isfinite(integral) and integral > 0):
            raise ValueError(f"an external background needs a finite integral > 0, got {integral!r}")
        self._k_set_S(S)
        self._external = True
        self._bg_params = ("external",)
        self._own = float(Sd.min())
        self._bg_integral = integral
        self._slot_params = [None, None]  # their bounds were made for another own

    def set_background(self, tau_x, tau_t):
        """Compute S (resident) for (tau_x, tau_t) and cache the background integral part
        (a no-op after :meth:`set_external_background`)."""
        if self._external:
            return
        tau_x, tau_t = float(tau_x), float(tau_t)
        if self._bg_params == (tau_x, tau_t):
            return
        self._k_background(tau_x, tau_t, self._delta_s(tau_t))
        self._set_bg(tau_x, tau_t)

    def _set_bg(self, tau_x, tau_t):
        self._bg_params = (tau_x, tau_t)
        self._own = phi0(self.D, tau_x) * phi0(1, tau_t)
        if self._spatial is None:
            self._bg_integral = background_integral_part(self._t64, tau_t, self.window)
        else:
            xs, win = self._spatial
            self._bg_integral = float(np.sum(gaussian_window_mass(xs, tau_x, win)
                                             * background_integral_terms(self._t64, tau_t, self.window)))

    def set_trigger(self, h, omega, slot=0, *, omega2=None, w=None):
        """Compute G for (h, omega) -- and ``omega2``, ``w`` for the "exp2" kernel -- into ``slot`` (0 or 1)."""
        self._set_trigger(float(h), self._rates(omega, omega2, w), slot, self._rho)

    def _set_trigger(self, h, rates, slot, rho):
        if slot not in (0, 1):
            raise ValueError(f"slot must be 0 or 1, got {slot!r}")
        if self._bg_params is None and not self.exact:
            raise RuntimeError("set_background must be called before set_trigger in windowed mode")
        bound = 0.0 if self.exact else EPS_G * rho * self._own
        p = self._slot_params[slot]
        if p is not None and p[:2] == (h, rates) and p[2] <= bound:
            return
        self._k_trigger(h, rates, self._delta_g(h, rates, rho), self._slot_order[slot],
                        self._limit_g(h, rates, rho))
        # p[2]: proven bound on the trigger mass skipped for any event (bound (3)); it stays valid
        # if the background changes later, the guard compares it with the current own term.
        self._slot_params[slot] = (h, rates, bound)

    def swap_trigger(self):
        """Promote slot 1 to slot 0 (after an accepted trigger proposal); no copy."""
        self._slot_order.reverse()
        self._slot_params.reverse()

    def _guard(self, mu0, theta, slot):
        """Bound (3): theta * (skipped trigger mass) <= EPS_G mu0 own; rebuild the slot if not."""
        p = self._slot_params[slot]
        if p is None:
            raise RuntimeError(f"trigger slot {slot} is empty: call set_trigger first")
        if self.exact or theta <= 0.0:
            return
        if theta * p[2] > EPS_G * mu0 * self._own * (1.0 + 1e-12):
            rho = (mu0 / theta) / 16.0
            self._rho = min(self._rho, rho)
            self._slot_params[slot] = None
            self._set_trigger(p[0], p[1], slot, rho)

    def sum_log_intensity(self, mu0, theta, slot=0) -> float:
        """sum_n log(mu0 S_n + theta G_n[slot])."""
        if self._bg_params is None:
            raise RuntimeError("call set_background first")
        mu0, theta = float(mu0), float(theta)
        self._guard(mu0, theta, slot)
        return float(self._k_sum_log(mu0, theta, self._slot_order[slot]))

    def integral(self, mu0, theta, omega, h=None, *, omega2=None, w=None) -> float:
        """Lambda = mu0 sum_m [Phi((T1-t_m)/tau_t) - Phi((T0-t_m)/tau_t)] + theta sum_m int_0^(T1 - t_m) g,
        g the temporal kernel (for "exp2": w (1 - exp(-omega d)) + (1 - w) (1 - exp(-omega2 d)))."""
        if self._bg_integral is None:
            raise RuntimeError("call set_background first")
        rates = self._rates(omega, omega2, w)
        kw = self._rate_kw(rates)
        omega = rates[0]
        if self._spatial is not None:
            if h is None:
                raise ValueError("integral over a spatial window needs the trigger bandwidth h")
            key = (rates, float(h))
            if self._omega_integral[0] != key:
                xs, win = self._spatial
                if self._spatial_mass[0] != float(h):  # kept while only the rates change
                    self._spatial_mass = (float(h), gaussian_window_mass(xs, float(h), win))
                self._omega_integral = (key, float(np.sum(
                    self._spatial_mass[1] * trigger_integral_terms(self._t64, omega, self.window, self.kernel_p, **kw))))
            return float(mu0) * self._bg_integral + float(theta) * self._omega_integral[1]
        if self._omega_integral[0] != rates:
            if self.kernel_p:
                value = trigger_integral_part(self._t64, omega, self.window, self.kernel_p)
            elif self.exp2:  # w K(omega) + (1 - w) K(omega2), K the exponential kernel's part
                w = rates[2]
                value = ((w * self._k_trigger_integral(omega) if w > 0.0 else 0.0)
                         + ((1.0 - w) * self._k_trigger_integral(rates[1]) if w < 1.0 else 0.0))
            else:
                value = self._k_trigger_integral(omega)
            self._omega_integral = (rates, float(value))
        return float(mu0) * self._bg_integral + float(theta) * self._omega_integral[1]

    def log_likelihood(self, mu0, tau_x, tau_t, theta, omega, h, *, omega2=None, w=None) -> float:
        """log L for the given parameters (reuses the resident S and slot-0 G when unchanged)."""
        tau_x, tau_t, h = float(tau_x), float(tau_t), float(h)
        rates = self._rates(omega, omega2, w)
        p0 = self._slot_params[0]
        bg_same = self._external or self._bg_params == (tau_x, tau_t)
        tr_same = p0 is not None and p0[:2] == (h, rates)
        if not bg_same and not tr_same:
            delta_s = self._delta_s(tau_t)
            if self.exact:
                delta_g = limit_g = math.inf
            else:
                delta_g = trigger_delta(self.N, self.D, tau_x, tau_t, h, rates[0], self._rho, p=self.kernel_p,
                                        q=self.spatial_q, **self._rate_kw(rates))
                limit_g = self._limit_g(h, rates, self._rho, own=phi0(self.D, tau_x) * phi0(1, tau_t))
            self._k_both(tau_x, tau_t, delta_s, h, rates, delta_g, self._slot_order[0], limit_g)
            self._set_bg(tau_x, tau_t)
            self._slot_params[0] = (h, rates, 0.0 if self.exact else EPS_G * self._rho * self._own)
        else:
            self.set_background(tau_x, tau_t)
            self._set_trigger(h, rates, 0, self._rho)
        return self.sum_log_intensity(mu0, theta, 0) - self.integral(mu0, theta, rates[0], h, **self._rate_kw(rates))

    def self_excitation(self, mu0, theta, slot=0) -> np.ndarray:
        """pi_n = theta G_n / (mu0 S_n + theta G_n), sorted order, float64 host array."""
        if self._bg_params is None:
            raise RuntimeError("call set_background first")
        mu0, theta = float(mu0), float(theta)
        self._guard(mu0, theta, slot)
        return self._k_pi(mu0, theta, self._slot_order[slot])

    def background_sums(self) -> np.ndarray:
        """Host copy of S (N,) in sorted order (float64)."""
        if self._bg_params is None:
            raise RuntimeError("call set_background first")
        return self._k_S()

    def trigger_sums(self, slot=0) -> np.ndarray:
        """Host copy of G (N,) of ``slot`` in sorted order (float64)."""
        if self._slot_params[slot] is None:
            raise RuntimeError(f"trigger slot {slot} is empty: call set_trigger first")
        return self._k_G(self._slot_order[slot])

    def query_sums(self, points, time, tau_x, tau_t, h, omega, rho=RHO_DEFAULT, *, background=True, trigger=True,
                   omega2=None, w=None):
        """Background and trigger sums of the conditional intensity at points off the data.

        For each query point ``s_g`` (``points`` (Q, D), units of x) at one time ``time``::

            Sq_g = sum_m phi_D(s_g - x_m; tau_x) phi_1(time - t_m; tau_t)           (every event)
            Gq_g = sum_{m: t_m < time} g(time - t_m) phi_D(s_g - x_m; h)

        (g the temporal kernel, omega exp(-omega dt) for the exponential; ``omega2``, ``w`` for
        "exp2"), so the intensity is ``lambda(s_g, time) = mu0 Sq_g + theta Gq_g``. Windowed (unless the
        engine is exact) with the cut-offs of bounds (2)-(3): the skipped mass is at most
        ``4e-14 (N/(N-1)) own`` in S and ``4e-14 rho own (N/(N-1))`` in G, so the intensity's
        absolute error is below ``1e-13 mu0 own`` (own = phi_D(0; tau_x) phi_1(0; tau_t)) for
        every ``theta <= mu0 / rho``. Returns ``(Sq, Gq)``, float64 host arrays (Q,);
        ``background=False`` / ``trigger=False`` skip one of them (zeros), e.g. when the caller
        keeps Sq for fixed bandwidths.
        """
        if background and self._external:
            raise ValueError("query_sums: the engine holds an external (KDE) background, known only at the "
                             "events; pass background=False")
        pts = np.asarray(points, dtype=np.float64)
        rates = self._rates(omega, omega2, w)
        t = self._t64
        if self.exact:
            lo_s, hi_s, lo_g = 0, self.N, 0
        else:
            ds = background_delta(self.N + 1, tau_t)
            dg = trigger_delta(self.N + 1, self.D, tau_x, tau_t, h, rates[0], rho, p=self.kernel_p,
                               q=self.spatial_q, **self._rate_kw(rates))
            lo_s = int(np.searchsorted(t, time - ds, side="left"))
            hi_s = int(np.searchsorted(t, time + ds, side="right"))
            lo_g = int(np.searchsorted(t, time - dg, side="left"))
        hi_g = int(np.searchsorted(t, time, side="left"))
        lo_g = min(lo_g, hi_g)
        if not background:
            hi_s = lo_s
        if not trigger:
            lo_g = hi_g
        return self._k_query(pts, float(time), (lo_s, hi_s, lo_g, hi_g), 0.5 / tau_x**2, 0.5 / tau_t**2,
                             phi0(self.D, tau_x) * phi0(1, tau_t), self._trigger_consts(float(h), rates))

    def __repr__(self):
        return (f"<{type(self).__name__} backend={self.backend!r} N={self.N} D={self.D} "
                f"dtype={self.dtype.name} exact={self.exact}"
                + ("" if self.kernel.name == "exponential" else f" kernel={self.kernel.label!r}")
                + ("" if self.spatial_q == 0.0 else f" spatial_kernel={self.spatial_kernel.label!r}") + ">")
