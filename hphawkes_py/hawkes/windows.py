"""The windowed likelihood's time cut-offs: how far back from each event the pair sums must reach.

With the events sorted by time, the terms of event n far from t_n in time are tiny. The engines skip
them only when a proven bound on *everything* skipped is below :data:`EPS_WINDOW` = 1e-13 of the
rate lambda_n, for every (mu0, theta) the caller may use afterwards: the background sum S_n is
cut at |t_n - t_m| <= Delta_S (:func:`background_delta`, bound (2)) and the trigger sum G_n at
t_n - t_m <= Delta_G (:func:`trigger_delta`, bounds (3) and (3') for the sum of two exponentials),
the trigger's cut-off being made for theta up to ``mu0 / rho`` (:data:`RHO_DEFAULT`; the engines
rebuild a trigger sum whose bound no longer holds). The bounds and their proofs, for every
temporal and spatial kernel and for an external background, are derived in the documentation's
method page ``docs/methods/hawkes_likelihood.rst``.
"""
from __future__ import annotations

import math

from .kernels import phi0, spatial_log_peak

__all__ = ["EPS_WINDOW", "EPS_S", "EPS_G", "RHO_DEFAULT", "background_delta", "trigger_delta", "trigger_limit"]

#: Relative error of every windowed log-rate, |log lambda_n - log lambda_n^w| <= EPS_WINDOW.
EPS_WINDOW = 1e-13
#: Share of the bound given to the skipped background mass (bound (2)); EPS_S + EPS_G < EPS_WINDOW, the
#: margin absorbing the rounding of t_n - Delta and of Delta itself.
EPS_S = 4e-14
#: Share of the bound given to the skipped trigger mass (bound (3)).
EPS_G = 4e-14
#: The trigger cut-off is first made for theta up to mu0 / RHO_DEFAULT.
RHO_DEFAULT = 1e-6


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
    ``p > 1``: power-law kernel (see :func:`~.kernels.trigger_scale`), a skipped term is at most
    (p - 1) omega phi_D(0;h) (1 + omega Delta)^(-p), so Delta = ((bound)^(1/p) - 1) / omega
    (inf -- nothing skipped -- when that overflows: heavy tails may need every pair).
    ``omega2``, ``w`` given: sum of two exponentials, bound (3') -- each component j with weight
    a_j = w omega or (1 - w) omega2 gets half the budget, Delta = max_j Delta_j.
    ``own``, given, replaces phi_D(0;tau_x) phi_1(0;tau_t) as the lower bound (1) of every background
    sum (an external background, :meth:`~.engine.Engine.set_external_background`: its smallest S_n).
    ``q > 0``: the spatial power-law kernel ("Any spatial kernel" in the method page): its peak
    c_{D,q} h^(-D) (:func:`~.kernels.spatial_log_peak`) replaces phi_D(0; h) in every bound above -- the proof
    needs only that f(r) <= f(0) -- so the cut-off keeps its 1e-13 guarantee.
    """
    if N < 2:
        return math.inf
    if own is None:
        own = phi0(D, tau_x) * phi0(1, tau_t)
    if omega2 is None:
        logb = _log_budget(N, D, h, omega, rho, eps, p, own, q)
        if p > 0.0:
            e = logb / p
            return math.expm1(e) / omega if e < 700.0 else math.inf
        return logb / omega
    delta = 0.0
    for a, rate in ((w * omega, omega), ((1.0 - w) * omega2, omega2)):
        if a > 0.0:
            logb = (math.log(2.0 * (N - 1)) + math.log(a) + spatial_log_peak(D, h, q)
                    - math.log(eps) - math.log(rho) - math.log(own))
            delta = max(delta, max(logb, 0.0) / rate)
    return delta


def _log_budget(N, D, h, omega, rho, eps, p, own, q) -> float:
    """max(0, log((N-1) a f(0) / (eps rho own))): a skipped pair term is at most a f(0) exp(-E), E = Q + T
    its exponent (Q the spatial part, T the time part: omega dt, or p log(1 + omega dt) for the power law;
    a = omega, or (p - 1) omega), and a row skips at most N - 1 of them, so E >= log_budget for every
    skipped term keeps bound (3). Computed in logs to avoid overflow for tiny h / rho (f(0) = phi_D(0;h)
    or the spatial power law's peak)."""
    logb = (math.log(N - 1) + math.log(omega) + spatial_log_peak(D, h, q)
            - math.log(eps) - math.log(rho) - math.log(own))
    if p > 0.0:
        logb += math.log(p - 1.0)
    return max(logb, 0.0)


def trigger_limit(N: int, D: int, tau_x: float, tau_t: float, h: float, omega: float, rho: float,
                  eps: float = EPS_G, p: float = 0.0, omega2: float | None = None, w: float | None = None,
                  own: float | None = None, q: float = 0.0) -> float:
    """Space-time cut of bound (3): a trigger pair term with exponent Q + T >= limit may be skipped.

    The trigger term of a pair is ``a f(0) exp(-(Q + T))`` with Q >= 0 the spatial part (``r^2 / (2 h^2)``
    for the Gaussian, ``q log(1 + r^2 / h^2)`` for the spatial power law) and T the time part (``omega dt``,
    or ``p log(1 + omega dt)`` for the power law). :func:`trigger_delta` skips the pairs with
    ``T >= limit`` (the time cut Delta_G is where T reaches ``limit``); skipping every pair with
    ``Q + T >= limit`` skips no term larger than those and at most N - 1 of them per row, so bound (3)
    and its proof are unchanged, while far-apart pairs within Delta_G are skipped too. On the DC data
    (h = 70 m in a city 20 km across) that is 4 pairs in 5 of the time window. Arguments as
    :func:`trigger_delta`; ``inf`` (no space-time cut: the time cut alone) for the sum of two
    exponentials, whose two components have separate budgets, and for N < 2.
    """
    if N < 2 or omega2 is not None:
        return math.inf
    if own is None:
        own = phi0(D, tau_x) * phi0(1, tau_t)
    return _log_budget(N, D, h, omega, rho, eps, p, own, q)
