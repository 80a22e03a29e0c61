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


def background_sums(x, t, tau_x, tau_t):
    """S_n = sum_m phi_D(x_n - x_m; tau_x) phi_1(t_n - t_m; tau_t), all m including n."""
    x = np.asarray(x, float).reshape(len(t), -1)
    t = np.asarray(t, float)
    D = x.shape[1]
    z2 = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    dt = t[:, None] - t[None, :]
    return (phi_d(z2, tau_x, D) * phi_d(dt**2, tau_t, 1)).sum(axis=1)


def trigger_sums(x, t, h, omega):
    """G_n = sum_{m: t_m < t_n} omega exp(-omega (t_n - t_m)) phi_D(x_n - x_m; h)."""
    x = np.asarray(x, float).reshape(len(t), -1)
    t = np.asarray(t, float)
    D = x.shape[1]
    z2 = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    dt = t[:, None] - t[None, :]
    earlier = dt > 0
    k = np.where(earlier, omega * np.exp(-omega * np.where(earlier, dt, 0.0)), 0.0) * phi_d(z2, h, D)
    return k.sum(axis=1)


def intensity(x, t, mu0, tau_x, tau_t, theta, omega, h):
    return mu0 * background_sums(x, t, tau_x, tau_t) + theta * trigger_sums(x, t, h, omega)


def integral(t, mu0, tau_t, theta, omega, window=None):
    t = np.asarray(t, float)
    T0, T1 = (t.min(), t.max()) if window is None else window
    bg = norm.cdf((T1 - t) / tau_t) - norm.cdf((T0 - t) / tau_t)
    tr = 1.0 - np.exp(-omega * (T1 - t))
    return float(mu0 * bg.sum() + theta * tr.sum())


def log_likelihood(x, t, mu0, tau_x, tau_t, theta, omega, h, window=None):
    lam = intensity(x, t, mu0, tau_x, tau_t, theta, omega, h)
    return float(np.log(lam).sum() - integral(t, mu0, tau_t, theta, omega, window))


def self_excitation(x, t, mu0, tau_x, tau_t, theta, omega, h):
    xi = theta * trigger_sums(x, t, h, omega)
    return xi / (mu0 * background_sums(x, t, tau_x, tau_t) + xi)
