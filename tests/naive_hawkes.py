"""Slow, obvious NumPy float64 reference for the Hawkes likelihood (all pairs, no windows).

Used by tests/test_hawkes_engine.py (and the inference tests) to check the engines. Follows
API.md literally; input may be in any time order (nothing here depends on sorting).
"""
from __future__ import annotations

import math

import numpy as np
from scipy.stats import norm


def phi_d(z2, s, D):
    """phi_D(z; s) given |z|^2 = z2."""
    return (2.0 * math.pi * s * s) ** (-D / 2.0) * np.exp(-z2 / (2.0 * s * s))


def spatial_power_law(z2, h, D, q):
    """The spatial power-law trigger density c (1 + |z|^2/h^2)^(-q), c = Gamma(q) / (Gamma(q - D/2)
    pi^(D/2) h^D), given |z|^2 = z2 (q > D/2); the Gamma ratio through math.lgamma (Gamma(q) overflows
    beyond q = 171)."""
    c = math.exp(math.lgamma(q) - math.lgamma(q - D / 2.0)) / (math.pi ** (D / 2.0) * h**D)
    return c * (1.0 + z2 / (h * h)) ** (-q)


def spatial_kernel(z2, h, D, q=0.0):
    """The spatial trigger density: phi_D (``q = 0``) or :func:`spatial_power_law`."""
    return phi_d(z2, h, D) if q == 0.0 else spatial_power_law(z2, h, D, q)


def background_sums(x, t, tau_x, tau_t):
    """S_n = sum_m phi_D(x_n - x_m; tau_x) phi_1(t_n - t_m; tau_t), all m including n."""
    x = np.asarray(x, float).reshape(len(t), -1)
    t = np.asarray(t, float)
    D = x.shape[1]
    z2 = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    dt = t[:, None] - t[None, :]
    return (phi_d(z2, tau_x, D) * phi_d(dt**2, tau_t, 1)).sum(axis=1)


def temporal_kernel(dt, omega, omega2=None, w=None):
    """g(dt) for dt > 0: omega exp(-omega dt), or with omega2 and w the sum of two exponentials
    w omega exp(-omega dt) + (1 - w) omega2 exp(-omega2 dt) (each term evaluated as written)."""
    if omega2 is None:
        return omega * np.exp(-omega * dt)
    return w * omega * np.exp(-omega * dt) + (1.0 - w) * omega2 * np.exp(-omega2 * dt)


def temporal_cdf(d, omega, omega2=None, w=None):
    """int_0^d g: 1 - exp(-omega d), or w (1 - exp(-omega d)) + (1 - w) (1 - exp(-omega2 d))."""
    if omega2 is None:
        return 1.0 - np.exp(-omega * d)
    return w * (1.0 - np.exp(-omega * d)) + (1.0 - w) * (1.0 - np.exp(-omega2 * d))


def trigger_sums(x, t, h, omega, omega2=None, w=None, q=0.0):
    """G_n = sum_{m: t_m < t_n} g(t_n - t_m) f(x_n - x_m; h), g = :func:`temporal_kernel`, f = phi_D or,
    with ``q > 0``, the spatial power law (:func:`spatial_kernel`)."""
    x = np.asarray(x, float).reshape(len(t), -1)
    t = np.asarray(t, float)
    D = x.shape[1]
    z2 = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    dt = t[:, None] - t[None, :]
    earlier = dt > 0
    k = np.where(earlier, temporal_kernel(np.where(earlier, dt, 0.0), omega, omega2, w), 0.0) * spatial_kernel(
        z2, h, D, q)
    return k.sum(axis=1)


def intensity(x, t, mu0, tau_x, tau_t, theta, omega, h, omega2=None, w=None, q=0.0):
    return mu0 * background_sums(x, t, tau_x, tau_t) + theta * trigger_sums(x, t, h, omega, omega2, w, q)


def integral(t, mu0, tau_t, theta, omega, window=None, omega2=None, w=None):
    t = np.asarray(t, float)
    T0, T1 = (t.min(), t.max()) if window is None else window
    bg = norm.cdf((T1 - t) / tau_t) - norm.cdf((T0 - t) / tau_t)
    tr = temporal_cdf(T1 - t, omega, omega2, w)
    return float(mu0 * bg.sum() + theta * tr.sum())


def log_likelihood(x, t, mu0, tau_x, tau_t, theta, omega, h, window=None, omega2=None, w=None, q=0.0):
    """``q > 0``: the spatial power-law trigger (it integrates to 1 over R^D, so the integral is unchanged)."""
    lam = intensity(x, t, mu0, tau_x, tau_t, theta, omega, h, omega2, w, q)
    return float(np.log(lam).sum() - integral(t, mu0, tau_t, theta, omega, window, omega2, w))


def self_excitation(x, t, mu0, tau_x, tau_t, theta, omega, h, omega2=None, w=None, q=0.0):
    xi = theta * trigger_sums(x, t, h, omega, omega2, w, q)
    return xi / (mu0 * background_sums(x, t, tau_x, tau_t) + xi)


class FlatEngine:
    """A Hawkes engine whose log-likelihood is 0 for every parameter value: an MH chain built on it
    (``EngineFactory.build`` monkeypatched to return one) must sample the prior exactly."""

    backend = "cpu"
    pair_evaluations = 0

    def __init__(self, *a, **k):
        pass

    def set_background(self, *a):
        pass

    def set_trigger(self, *a, **k):
        pass

    def swap_trigger(self):
        pass

    def sum_log_intensity(self, *a, **k):
        return 0.0

    def integral(self, *a, **k):
        return 0.0

    def log_likelihood(self, *a, **k):
        return 0.0


def tied_events(N, D, seed, span=100.0):
    """N events uniform on [0, 5]^D x [0, span] with times rounded to whole units (many exact ties),
    sorted by time: the test data of the engine-vs-reference checks."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 5, (N, D))
    t = np.round(rng.uniform(0, span, N), 0)
    o = np.argsort(t, kind="stable")
    return x[o], t[o]


def engine_loglik(e, p, **kw):
    """``e.log_likelihood`` at the parameters of the dict ``p`` (mu0, tau_x, tau_t, theta, omega, h)."""
    return e.log_likelihood(p["mu0"], p["tau_x"], p["tau_t"], p["theta"], p["omega"], p["h"], **kw)
