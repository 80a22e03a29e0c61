"""The compensator's closed-form parts: integrals over the observation window [T0, T1] of each
event's background and trigger kernels, and the Gaussians' masses inside a spatial raster window.

The compensator of the model is

    Lambda = mu0 sum_m [Phi((T1 - t_m)/tau_t) - Phi((T0 - t_m)/tau_t)] + theta sum_m int_0^(T1 - t_m) g,

g the temporal trigger density (the spatial kernels integrate to 1 over R^D); with a spatial window
each event's background and trigger Gaussian counts only its mass inside the window
(:func:`gaussian_window_mass`). Every part is computed over all events, in float64 (never windowed).
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["phi_diff", "background_integral_part", "background_integral_terms", "trigger_integral_part",
           "trigger_integral_terms", "gaussian_window_mass", "ExponentialIntegralTail"]

#: 1 - exp(-x) rounds to exactly 1.0 in float64 for every x >= ONE_FROM: e^-40 < 2^-57 is below half
#: the spacing of the doubles under 1, and expm1 (fdlibm and its descendants, glibc's included)
#: returns -1 exactly below -56 ln 2 = -38.8 (the tests check it on the running platform).
ONE_FROM = 40.0


def phi_diff(a: np.ndarray, b: np.ndarray) -> np.ndarray:
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
    return float(np.sum(phi_diff((T1 - t) / tau_t, (T0 - t) / tau_t)))


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
    return phi_diff((T1 - t) / tau_t, (T0 - t) / tau_t)


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
        px = phi_diff((xe[None, 1:] - xb[:, :1]) / s, (xe[None, :-1] - xb[:, :1]) / s)
        py = phi_diff((ye[None, 1:] - xb[:, 1:2]) / s, (ye[None, :-1] - xb[:, 1:2]) / s)
        out[a:a + block] = np.einsum("mk,kj,mj->m", py, inside, px)
    return out


class ExponentialIntegralTail:
    """The exponential kernel's compensator part K(omega) = sum_m [1 - exp(-omega (T1 - t_m))] for
    times sorted ascending, re-evaluated for each omega in O(number of events within 41 / omega of
    T1) instead of O(N) exponentials.

    The terms of the events earlier than T1 - 41/omega are exactly 1.0 (:data:`ONE_FROM`), so they
    stay in a resident array of ones; only the tail is recomputed, by the expression of
    :func:`trigger_integral_terms`, and the array is summed by ``np.sum`` as
    :func:`trigger_integral_part` sums its terms: the value is bit-identical to
    ``trigger_integral_part(t, omega, window)``.

    Parameters
    ----------
    t_sorted : ndarray, shape (N,)
        Event times sorted ascending (units of time, e.g. hours).
    window : tuple (T0, T1)
        The observation window (same units).

    Examples
    --------
    >>> from hphawkes_py.hawkes.compensator import ExponentialIntegralTail, trigger_integral_part
    >>> t = np.linspace(0.0, 100.0, 1001)
    >>> tail = ExponentialIntegralTail(t, (0.0, 100.0))
    >>> tail(2.0) == trigger_integral_part(t, 2.0, (0.0, 100.0)), tail(0.05) == trigger_integral_part(t, 0.05, (0.0, 100.0))
    (True, True)
    """

    def __init__(self, t_sorted: np.ndarray, window) -> None:
        T1 = window[1]
        t = np.asarray(t_sorted, dtype=np.float64)
        self._d = T1 - t                      # T1 - t_m, non-increasing
        self._neg_d = -self._d                # non-decreasing, for searchsorted
        self._terms = np.ones(t.shape[0])
        self._first = t.shape[0]              # _terms[:_first] are 1.0

    def __call__(self, omega: float) -> float:
        omega = float(omega)
        # c = #events with T1 - t_m >= 41/omega: omega (T1 - t_m) >= 41 (1 - 2^-52) > ONE_FROM, a term of 1.0
        c = int(np.searchsorted(self._neg_d, -((ONE_FROM + 1.0) / omega), side="right"))
        if c > self._first:
            self._terms[self._first:c] = 1.0
        self._terms[c:] = -np.expm1(-omega * self._d[c:])
        self._first = c
        return float(np.sum(self._terms))
