"""Hawkes likelihood engines: :func:`make_engine`, the :class:`Engine` base class, the
:class:`EngineFactory` results keep, and the host-side helpers both engines share.

:class:`~.cpu.CpuEngine` (Numba) and :class:`~.gpu.GpuEngine` (CUDA through a ``Device``) are
siblings: both import this module, never each other, and this module imports neither at module
level (``make_engine`` imports the one asked for), so a GPU engine never loads Numba.

The engines evaluate, for events already sorted by time (``x`` of shape (N, D), ``t`` (N,)),

    S_n = sum_{m=1..N} phi_D(x_n - x_m; tau_x) phi_1(t_n - t_m; tau_t)          (all m, m = n included)
    G_n = sum_{m: t_m < t_n} omega exp(-omega (t_n - t_m)) phi_D(x_n - x_m; h)  (strictly earlier)
    lambda_n = mu0 S_n + theta G_n,    log L = sum_n log lambda_n - Lambda,
    Lambda = mu0 sum_m [Phi((T1 - t_m)/tau_t) - Phi((T0 - t_m)/tau_t)] + theta sum_m [1 - exp(-omega (T1 - t_m))].

They never store anything of size N x N. ``S`` is kept resident (it changes only with
tau_x, tau_t); ``G`` lives in two resident slots so an MCMC h/omega proposal can be computed
into slot 1 and either discarded or promoted with :meth:`swap_trigger` (no copy).

Temporal kernels (:class:`TriggerKernel`). ``"exponential"`` (``kernel_p = 0``) is the paper's
trigger; ``"power-law"`` (``kernel_p = p > 1``) the Omori-Utsu law with density
(p - 1) omega (1 + omega dt)^(-p): its pair term is exp(-(r^2/(2h^2) + p log(1 + omega dt))) and its
cut-off in (3) becomes Delta_G = ((bound)^(1/p) - 1) / omega (:func:`trigger_delta`), infinite --
every pair -- when that overflows. ``"exp2"``, the sum of two exponentials, has density

    g(dt) = w omega exp(-omega dt) + (1 - w) omega2 exp(-omega2 dt),   0 <= w <= 1,

with two more trigger parameters (``omega2``, ``w``) that every trigger method takes as keywords;
its pair term is c1 exp(-(r^2/(2h^2) + omega dt)) + c2 exp(-(r^2/(2h^2) + omega2 dt)) with
c1 = w omega / A, c2 = (1 - w) omega2 / A and the constant A phi_D(0; h), A = w omega + (1 - w) omega2
(:func:`exp2_weights`), and its cut-off is bound (3') below. :meth:`Engine.query_sums` evaluates the
same sums at points off the data (forecasts).

Spatial trigger kernels (:class:`SpatialKernel`). ``"gaussian"`` (``spatial_q = 0``, the paper's)
is phi_D(r; h); ``"power-law"`` (``spatial_q = q > D/2``) is the isotropic Student-t-like density

    f_q(r; h) = c_{D,q} h^(-D) (1 + r^2/h^2)^(-q),   c_{D,q} = Gamma(q) / (Gamma(q - D/2) pi^(D/2))

(in 2-D: (q - 1) / (pi h^2) (1 + r^2/h^2)^(-q), the ETAS / crime-Hawkes spatial law), which integrates
to 1 over R^D exactly (:func:`spatial_log_peak`). ``h`` stays the scale. The trigger pair term is then
exp(-(q log(1 + r^2/h^2) + time term)) -- the loops take bh = 1/h^2 and q instead of bh = 1/(2h^2) --
times :func:`trigger_scale`, whose spatial factor is the kernel's peak f(0) = c_{D,q} h^(-D) instead of
phi_D(0; h). The background smoother stays Gaussian.

Windowed ("default", ``exact=False``) evaluation -- the bound
==============================================================

With times sorted, the terms of event n far from t_n in time are tiny; we skip them only when
a proven bound on *everything* skipped is below EPS = 1e-13 of lambda_n, for every (mu0, theta)
the caller may use afterwards. Write own = phi_D(0; tau_x) phi_1(0; tau_t) for the m = n term
of S_n, which is always evaluated, so that for every n

    S_n^w >= own,    lambda_n^w = mu0 S_n^w + theta G_n^w >= mu0 own,          (1)

where ^w marks the windowed (computed) sums, each a sub-sum of the exact one.

Background. The kernel factorises, phi_D(z; tau_x) <= phi_D(0; tau_x), so a skipped background
term with |t_n - t_m| > Delta_S is at most phi_D(0; tau_x) phi_1(Delta_S; tau_t)
= own exp(-Delta_S^2 / (2 tau_t^2)). At most N - 1 terms are skipped, hence

    0 <= S_n - S_n^w <= (N - 1) own exp(-Delta_S^2 / (2 tau_t^2)) <= EPS_S own
    when Delta_S = tau_t sqrt(2 log((N - 1) / EPS_S)),                          (2)

and mu0 (S_n - S_n^w) <= EPS_S mu0 own <= EPS_S lambda_n^w by (1) -- for every mu0, theta.
The window |t_n - t_m| <= Delta_S is symmetric in (n, m), so the CPU engine still uses the
symmetry of the background kernel (each unordered pair evaluated once).

Trigger. A skipped trigger term has t_n - t_m > Delta_G, so it is at most
omega phi_D(0; h) exp(-omega Delta_G); with at most N - 1 of them,

    0 <= G_n - G_n^w <= (N - 1) omega phi_D(0; h) exp(-omega Delta_G) = EPS_G rho own
    when Delta_G = log((N - 1) omega phi_D(0; h) / (EPS_G rho own)) / omega.     (3)

Sum of two exponentials (3'). A skipped term is at most phi_D(0; h) (a1 exp(-omega Delta_G)
+ a2 exp(-omega2 Delta_G)) with a1 = w omega, a2 = (1 - w) omega2. Take, for every component j with
a_j > 0, Delta_j = max(0, log(2 (N - 1) a_j phi_D(0; h) / (EPS_G rho own))) / omega_j, and
Delta_G = max_j Delta_j. Then a_j exp(-omega_j Delta_G) <= a_j exp(-omega_j Delta_j)
<= EPS_G rho own / (2 (N - 1) phi_D(0; h)) for each j (if the log was clipped at 0, a_j itself is
below that), so the two components together skip at most EPS_G rho own, as in (3). The slowest
component with a non-negligible weight sets the cut-off: a slow tail of tiny weight does not
stretch the window beyond what its weight needs, and a heavy slow tail is never cut short (the
fast rate alone would: tests/test_hawkes_kernels.py has that adversarial case).

Any spatial kernel. Bounds (3) and (3') use only that the trigger term factorises as g(dt) f(r) with
g non-increasing in dt and 0 <= f(r) <= f(0): every skipped term is at most g(Delta_G) f(0). For the
spatial power law f is decreasing in r with maximum f(0) = c_{D,q} h^(-D) (finite for q > D/2), so
(3) and (3') hold verbatim with phi_D(0; h) replaced by that peak -- :func:`trigger_delta` takes the
spatial exponent ``q`` and uses log f(0) (:func:`spatial_log_peak`); the heavy spatial tail costs
nothing here because the window is in time only and every pair inside it is summed whatever its
distance. The power law's larger peak (for equal h) only lengthens Delta_G logarithmically.

Then theta (G_n - G_n^w) <= EPS_G theta rho own <= EPS_G mu0 own <= EPS_G lambda_n^w as long
as mu0 / theta >= rho. G is computed before mu0 and theta are known, so a trigger slot is built
with rho = ``RHO_DEFAULT`` = 1e-6 (theta up to a million times mu0) and records its bound
B = EPS_G rho own on the skipped mass; every consumer (sum_log_intensity, self_excitation)
first checks theta B <= EPS_G mu0 own with the *current* own (so the slot stays valid when
tau_x, tau_t change); if the check fails, the slot is rebuilt with rho = (mu0/theta)/16 before
use. So the guarantee holds for every (mu0, theta), never silently.

External background (:meth:`Engine.set_external_background`, e.g. the KDE background of
:mod:`.kde_background`). S is then given, exact (nothing skipped), and fixed; bound (2) is void and
(1) holds with own = min_n S_n > 0 in place of phi_D(0; tau_x) phi_1(0; tau_t), so (3), its cut-off
(:func:`trigger_delta` with ``own``) and the guard are unchanged.

With EPS_S = EPS_G = 4e-14 (2 x 4e-14 < 1e-13, the margin absorbing the rounding of t_n - Delta
and of Delta itself), (2) and (3) give |lambda_n - lambda_n^w| <= 8e-14 lambda_n^w <= 1e-13 lambda_n
for every n, hence |log lambda_n - log lambda_n^w| <= 1e-13, and the window never touches the
integral Lambda (computed in closed form over all events). The cut-offs adapt to N, tau_t, h,
omega, tau_x and D through (2)-(3); the ranges are found per event by binary search on sorted t.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from .._backend import get_device, is_gpu_backend

__all__ = [
    "make_engine",
    "Engine",
    "EngineFactory",
    "EPS_WINDOW",
    "EPS_S",
    "EPS_G",
    "RHO_DEFAULT",
    "phi0",
    "background_delta",
    "trigger_delta",
    "background_integral_part",
    "trigger_integral_part",
    "trigger_scale",
    "exp2_weights",
    "TriggerKernel",
    "as_trigger_kernel",
    "SPATIAL_KERNELS",
    "SpatialKernel",
    "as_spatial_kernel",
    "spatial_log_peak",
    "spatial_peak",
    "KERNEL_PARAMS",
    "tie_starts",
    "split_time",
    "time_grid",
]

EPS_WINDOW = 1e-13
EPS_S = 4e-14
EPS_G = 4e-14
RHO_DEFAULT = 1e-6

#: Trigger parameters a temporal kernel takes besides ``omega`` (keywords of the trigger methods).
KERNEL_PARAMS = {"exponential": (), "power-law": (), "exp2": ("omega2", "w")}


class TriggerKernel(tuple):
    """A validated temporal trigger kernel: ``name`` (``"exponential"``, ``"power-law"`` or
    ``"exp2"``) and the power-law exponent ``p`` (0 otherwise). A plain pair, so it compares,
    hashes and pickles as ``(name, p)``."""

    __slots__ = ()

    def __new__(cls, name: str = "exponential", p: float = 0.0):
        if name not in KERNEL_PARAMS:
            raise ValueError(f"unknown temporal kernel {name!r}; known: {tuple(KERNEL_PARAMS)}")
        p = float(p)
        if name == "power-law" and not p > 1.0:
            raise ValueError(f"the power-law kernel needs an exponent p > 1, got {p!r}")
        if name != "power-law" and p != 0.0:
            raise ValueError(f"only the power-law kernel takes an exponent, got {name!r} with p = {p!r}")
        return super().__new__(cls, (name, p))

    name = property(lambda self: self[0])
    p = property(lambda self: self[1])

    @property
    def extra_params(self) -> tuple:
        """Trigger parameters besides ``omega`` (``("omega2", "w")`` for ``"exp2"``)."""
        return KERNEL_PARAMS[self.name]

    @property
    def label(self):
        """The user-facing ``kernel=`` value: ``"exponential"``, ``("power-law", p)`` or ``"exp2"``."""
        return ("power-law", self.p) if self.name == "power-law" else self.name

    def __getnewargs__(self):
        return (self[0], self[1])

    def __repr__(self):
        return f"TriggerKernel({self.name!r}, {self.p!r})"


def as_trigger_kernel(kernel=None, kernel_p: float = 0.0) -> TriggerKernel:
    """The engines' kernel from ``kernel`` (a :class:`TriggerKernel`, a name, or ``("power-law", p)``)
    or, when ``kernel`` is None, from the legacy exponent ``kernel_p`` (0 exponential, p > 1 power law).
    Users' values are checked, with messages naming ``kernel``, by :func:`~.model.check_kernel`."""
    if isinstance(kernel, TriggerKernel):
        return kernel
    if kernel is None:
        kp = float(kernel_p)
        if not (kp == 0.0 or kp > 1.0):
            raise ValueError(f"kernel_p must be 0 (exponential) or > 1 (power-law exponent), got {kernel_p!r}")
        return TriggerKernel("exponential") if kp == 0.0 else TriggerKernel("power-law", kp)
    if isinstance(kernel, str):
        return TriggerKernel(kernel, 1.5 if kernel == "power-law" else 0.0)
    name, p = kernel
    return TriggerKernel(name, p)


#: Spatial trigger kernels (``spatial_kernel=``).
SPATIAL_KERNELS = ("gaussian", "power-law")


class SpatialKernel(tuple):
    """A validated spatial trigger kernel: ``name`` (``"gaussian"`` or ``"power-law"``) and the
    power-law exponent ``q`` (0 for the Gaussian). A plain pair, so it compares, hashes and pickles
    as ``(name, q)``. ``q > D/2`` (integrability in D dimensions) is checked where D is known
    (:meth:`check_dim`)."""

    __slots__ = ()

    def __new__(cls, name: str = "gaussian", q: float = 0.0):
        if name not in SPATIAL_KERNELS:
            raise ValueError(f"unknown spatial kernel {name!r}; known: {SPATIAL_KERNELS}")
        q = float(q)
        if name == "power-law" and not (math.isfinite(q) and 0.5 < q <= 1e6):
            raise ValueError(f"the spatial power-law kernel needs a finite exponent q in (D/2, 1e6], got {q!r}")
        if name != "power-law" and q != 0.0:
            raise ValueError(f"only the spatial power-law kernel takes an exponent, got {name!r} with q = {q!r}")
        return super().__new__(cls, (name, q))

    name = property(lambda self: self[0])
    q = property(lambda self: self[1])

    @property
    def label(self):
        """The user-facing ``spatial_kernel=`` value: ``"gaussian"`` or ``("power-law", q)``."""
        return ("power-law", self.q) if self.name == "power-law" else self.name

    def check_dim(self, D: int) -> "SpatialKernel":
        """Self, after checking q > D/2 (the power law integrates over R^D); ValueError naming
        ``spatial_kernel`` otherwise."""
        if self.name == "power-law" and not self.q > 0.5 * D:
            raise ValueError(f"spatial_kernel exponent q must be > D/2 = {0.5 * D:g} for D = {D} coordinates "
                             f"(an integrable power law), got q = {self.q!r}")
        return self

    def __getnewargs__(self):
        return (self[0], self[1])

    def __repr__(self):
        return f"SpatialKernel({self.name!r}, {self.q!r})"


def as_spatial_kernel(spatial_kernel=None) -> SpatialKernel:
    """The engines' spatial kernel from ``spatial_kernel`` (a :class:`SpatialKernel`, None or
    ``"gaussian"``, or ``("power-law", q)``). Users' values are checked, with messages naming
    ``spatial_kernel``, by :func:`~.model.check_spatial_kernel`."""
    if isinstance(spatial_kernel, SpatialKernel):
        return spatial_kernel
    if spatial_kernel is None:
        return SpatialKernel("gaussian")
    if isinstance(spatial_kernel, str):
        return SpatialKernel(spatial_kernel, 2.0 if spatial_kernel == "power-law" else 0.0)
    name, q = spatial_kernel
    return SpatialKernel(name, q)


def spatial_log_peak(D: int, h: float, q: float = 0.0) -> float:
    """log f(0) of the spatial trigger density with scale ``h``: log phi_D(0; h) = -(D/2) log(2 pi h^2)
    (Gaussian, ``q = 0``) or log(c_{D,q} h^(-D)), c_{D,q} = Gamma(q) / (Gamma(q - D/2) pi^(D/2)), for the
    power law c_{D,q} h^(-D) (1 + r^2/h^2)^(-q) (``q > D/2``); through lgamma, so finite for q up to 1e6."""
    if q == 0.0:
        return -0.5 * D * math.log(2.0 * math.pi * h * h)
    return math.lgamma(q) - math.lgamma(q - 0.5 * D) - 0.5 * D * math.log(math.pi) - D * math.log(h)


def spatial_peak(D: int, h: float, q: float = 0.0) -> float:
    """f(0) of the spatial trigger density (units 1/x^D): :func:`phi0` for the Gaussian (``q = 0``),
    c_{D,q} h^(-D) for the power law (see :func:`spatial_log_peak`)."""
    if q == 0.0:
        return phi0(D, h)
    return math.exp(spatial_log_peak(D, h, q))


def phi0(D: int, s: float) -> float:
    """phi_D(0; s) = (2 pi s^2)^(-D/2) (finite for s in the model's PARAM_RANGE)."""
    return (2.0 * math.pi * s * s) ** (-0.5 * D)


def background_delta(N: int, tau_t: float, eps: float = EPS_S) -> float:
    """Time cut Delta_S of bound (2): skipped background mass <= eps * own term. inf if nothing may be cut."""
    if N < 2:
        return math.inf
    return tau_t * math.sqrt(2.0 * math.log((N - 1) / eps))


def trigger_delta(N: int, D: int, tau_x: float, tau_t: float, h: float, omega: float, rho: float,
                  eps: float = EPS_G, p: float = 0.0, omega2: float | None = None, w: float | None = None,
                  own: float | None = None, q: float = 0.0) -> float:
    """Time cut Delta_G of bound (3): skipped trigger mass <= eps * rho * own (own = phi_D(0;tau_x) phi_1(0;tau_t)).

    ``p = 0``: exponential kernel, a skipped term is at most omega phi_D(0;h) exp(-omega Delta).
    ``p > 1``: power-law kernel (see :func:`trigger_scale`), a skipped term is at most
    (p - 1) omega phi_D(0;h) (1 + omega Delta)^(-p), so Delta = ((bound)^(1/p) - 1) / omega
    (inf -- nothing skipped -- when that overflows: heavy tails may need every pair).
    ``omega2``, ``w`` given: sum of two exponentials, bound (3') of the module notes -- each component
    j with weight a_j = w omega or (1 - w) omega2 gets half the budget, Delta = max_j Delta_j.
    ``own``, given, replaces phi_D(0;tau_x) phi_1(0;tau_t) as the lower bound (1) of every background
    sum (an external background, :meth:`Engine.set_external_background`: its smallest S_n).
    ``q > 0``: the spatial power-law kernel (module notes, "Any spatial kernel"): its peak
    c_{D,q} h^(-D) (:func:`spatial_log_peak`) replaces phi_D(0; h) in every bound above -- the proof
    needs only that f(r) <= f(0) -- so the cut-off keeps its 1e-13 guarantee.
    """
    if N < 2:
        return math.inf
    if own is None:
        own = phi0(D, tau_x) * phi0(1, tau_t)
    if omega2 is not None:
        delta = 0.0
        for a, rate in ((w * omega, omega), ((1.0 - w) * omega2, omega2)):
            if a > 0.0:
                logb = (math.log(2.0 * (N - 1)) + math.log(a) + spatial_log_peak(D, h, q)
                        - math.log(eps) - math.log(rho) - math.log(own))
                delta = max(delta, max(logb, 0.0) / rate)
        return delta
    # log((N-1) omega f(0) / (eps rho own)) in logs to avoid overflow for tiny h / rho (f(0) = phi_D(0;h) or the
    # spatial power law's peak).
    logb = (math.log(N - 1) + math.log(omega) + spatial_log_peak(D, h, q)
            - math.log(eps) - math.log(rho) - math.log(own))
    if p > 0.0:
        logb += math.log(p - 1.0)
        e = max(logb, 0.0) / p
        return math.expm1(e) / omega if e < 700.0 else math.inf
    return max(logb, 0.0) / omega


def trigger_scale(D: int, h: float, omega: float, p: float = 0.0, omega2: float | None = None,
                  w: float | None = None, q: float = 0.0) -> float:
    """Constant factor of the trigger kernel: omega phi_D(0; h) (exponential, ``p = 0``) or
    (p - 1) omega phi_D(0; h) (power-law, the density (p - 1) omega (1 + omega dt)^(-p) of
    Omori-Utsu form with c = 1/omega); the pair term is exp(-(r^2/(2h^2) + time term)).
    With ``omega2``, ``w`` (sum of two exponentials): (w omega + (1 - w) omega2) phi_D(0; h), the
    pair term being weighted by :func:`exp2_weights`. ``q > 0`` (spatial power law): phi_D(0; h) is
    replaced by the spatial kernel's peak c_{D,q} h^(-D) (:func:`spatial_peak`) and the pair term's
    spatial part is exp(-q log(1 + r^2/h^2))."""
    f0 = spatial_peak(D, h, q)
    if omega2 is not None:
        return (w * omega + (1.0 - w) * omega2) * f0
    return (omega if p == 0.0 else (p - 1.0) * omega) * f0


def exp2_weights(omega: float, omega2: float, w: float) -> tuple[float, float]:
    """(c1, c2): the sum-of-exponentials pair term is c1 exp(-(q + omega dt)) + c2 exp(-(q + omega2 dt))
    times :func:`trigger_scale`; c1 + c2 = 1, c1 = w omega / (w omega + (1 - w) omega2)."""
    a1, a2 = w * omega, (1.0 - w) * omega2
    return a1 / (a1 + a2), a2 / (a1 + a2)


def tie_starts(t: np.ndarray) -> np.ndarray:
    """ts[n] = first index m with t[m] == t[n] (times sorted): the trigger sum of n runs over m < ts[n]."""
    return np.searchsorted(t, t, side="left").astype(np.int64)


def _phi_diff(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Phi(a) - Phi(b) for a >= b, accurate in both tails (erfc of the side away from 0)."""
    from scipy.special import erf, erfc

    r2 = math.sqrt(2.0)
    out = np.empty_like(a)
    hi = b > 0  # both positive: 1 - Phi differences
    lo = a < 0  # both negative
    mid = ~(hi | lo)
    out[hi] = 0.5 * (erfc(b[hi] / r2) - erfc(a[hi] / r2))
    out[lo] = 0.5 * (erfc(-a[lo] / r2) - erfc(-b[lo] / r2))
    out[mid] = 0.5 * (erf(a[mid] / r2) - erf(b[mid] / r2))
    return out


def background_integral_part(t: np.ndarray, tau_t: float, window) -> float:
    """sum_m [Phi((T1 - t_m)/tau_t) - Phi((T0 - t_m)/tau_t)] (float64)."""
    T0, T1 = window
    t = np.asarray(t, dtype=np.float64)
    return float(np.sum(_phi_diff((T1 - t) / tau_t, (T0 - t) / tau_t)))


def trigger_integral_part(t: np.ndarray, omega: float, window, p: float = 0.0, omega2: float | None = None,
                          w: float | None = None) -> float:
    """sum_m [1 - exp(-omega (T1 - t_m))] (exponential) or sum_m [1 - (1 + omega (T1 - t_m))^(1 - p)]
    (power-law, ``p > 1``) or, with ``omega2`` and ``w``, sum_m [w (1 - exp(-omega (T1 - t_m)))
    + (1 - w) (1 - exp(-omega2 (T1 - t_m)))]; float64, through expm1/log1p for small arguments."""
    return float(np.sum(trigger_integral_terms(t, omega, window, p, omega2, w)))

def background_integral_terms(t: np.ndarray, tau_t: float, window) -> np.ndarray:
    """Per-event summands of :func:`background_integral_part` (float64, shape (N,))."""
    T0, T1 = window
    t = np.asarray(t, dtype=np.float64)
    return _phi_diff((T1 - t) / tau_t, (T0 - t) / tau_t)


def trigger_integral_terms(t: np.ndarray, omega: float, window, p: float = 0.0, omega2: float | None = None,
                           w: float | None = None) -> np.ndarray:
    """Per-event summands of :func:`trigger_integral_part` (float64, shape (N,))."""
    T1 = window[1]
    t = np.asarray(t, dtype=np.float64)
    if omega2 is not None:
        return -(w * np.expm1(-omega * (T1 - t)) + (1.0 - w) * np.expm1(-omega2 * (T1 - t)))
    if p > 0.0:
        return -np.expm1((1.0 - p) * np.log1p(omega * (T1 - t)))
    return -np.expm1(-omega * (T1 - t))


def gaussian_window_mass(x: np.ndarray, s, window) -> np.ndarray:
    """Mass inside a raster ``window`` (:class:`hphawkes_py.kde.Window`) of the isotropic 2-D
    Gaussian N(x_m, s_m^2 I) for every row of ``x`` (float64, shape (N,), each in [0, 1]); ``s`` is
    one standard deviation for all rows or one per row (units of x).

    The Gaussian factorises, so the mass over the inside cells is
    sum_{k,j} inside[k, j] P_y(m, k) P_x(m, j) with P the 1-D cell probabilities (exact, no
    quadrature); cost O(N (rows + cols) + N rows cols / vector width) in blocks of events.
    """
    x = np.asarray(x, dtype=np.float64)
    inside = np.ascontiguousarray(window.mask[::-1], dtype=np.float64)  # row k covers y0 + [k, k+1) cs
    rows, cols = inside.shape
    cs = window.cell_size
    xe = window.x0 + cs * np.arange(cols + 1)
    ye = window.y0 + cs * np.arange(rows + 1)
    out = np.empty(x.shape[0])
    s_all = np.broadcast_to(np.asarray(s, dtype=np.float64), (x.shape[0],))[:, None]
    block = max(1, 2_000_000 // max(1, rows * cols))
    for a in range(0, x.shape[0], block):
        xb = x[a:a + block]
        s = s_all[a:a + block]
        px = _phi_diff((xe[None, 1:] - xb[:, :1]) / s, (xe[None, :-1] - xb[:, :1]) / s)
        py = _phi_diff((ye[None, 1:] - xb[:, 1:2]) / s, (ye[None, :-1] - xb[:, 1:2]) / s)
        out[a:a + block] = np.einsum("mk,kj,mj->m", py, inside, px)
    return out



def time_grid(t: np.ndarray, dtype) -> float:
    """The power-of-two grid g of :func:`split_time` for ``t`` (0 for float64: no split)."""
    if np.dtype(dtype) == np.float64:
        return 0.0
    amax = float(np.max(np.abs(t))) if np.size(t) else 0.0
    if amax == 0.0:
        return 0.0
    return 2.0 ** math.ceil(math.log2(amax / 2.0**22))


def split_time(t: np.ndarray, dtype, grid: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Times as (t_hi, t_lo) in ``dtype`` with t ~= t_hi + t_lo and t_hi on a power-of-two grid.

    For float32 this keeps time differences accurate to float32 *relative to the difference*
    (not to |t|): t_hi are multiples of a power of two g with |t_hi| / g < 2^23, so
    t_hi[n] - t_hi[m] is exact in float32, and |t_lo| <= g/2 carries the rest. For float64
    t_lo is all zeros (double is accurate enough for times in hours over decades). ``grid``
    gives g (query times are split on the grid of the data they are compared with).
    """
    t = np.asarray(t, dtype=np.float64)
    dtype = np.dtype(dtype)
    if dtype == np.float64:
        return t.copy(), np.zeros_like(t)
    g = time_grid(t, dtype) if grid is None else float(grid)
    if g == 0.0:
        return t.astype(np.float32), np.zeros(t.shape, np.float32)
    hi = np.round(t / g) * g
    return hi.astype(np.float32), (t - hi).astype(np.float32)


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
        Evaluate every pair (as the paper); default windowed, exact to 1e-13 (see module doc).
    window : (T0, T1) or None
        Observation window of the integral; default (t[0], t[-1]).
    kernel_p : float
        Temporal trigger kernel: 0 = exponential, p > 1 = power-law (Omori-Utsu) with exponent p.
    kernel : TriggerKernel, "exponential", "power-law", ("power-law", p) or "exp2", optional
        The temporal kernel (overrides ``kernel_p``); ``"exp2"`` is the sum of two exponentials,
        whose ``omega2`` and ``w`` the trigger methods then take as keywords.
    spatial_kernel : SpatialKernel, "gaussian" or ("power-law", q), optional
        The spatial trigger kernel (default Gaussian, scale ``h`` = its s.d.); the power law
        c_{D,q} h^(-D) (1 + r^2/h^2)^(-q) needs q > D/2 (module notes).
    """
    kernel = as_trigger_kernel(kernel, kernel_p)
    spatial_kernel = as_spatial_kernel(spatial_kernel)
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
        self.spatial_kernel = as_spatial_kernel(spatial_kernel).check_dim(self.D)
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
        self._k_trigger(h, rates, self._delta_g(h, rates, rho), self._slot_order[slot])
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
                delta_g = math.inf
            else:
                delta_g = trigger_delta(self.N, self.D, tau_x, tau_t, h, rates[0], self._rho, p=self.kernel_p,
                                        q=self.spatial_q, **self._rate_kw(rates))
            self._k_both(tau_x, tau_t, delta_s, h, rates, delta_g, self._slot_order[0])
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
