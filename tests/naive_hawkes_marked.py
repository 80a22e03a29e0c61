"""Obvious NumPy references (float64, every pair, one formula per line of the papers) for the ETAS
and multitype Hawkes log-likelihoods of hphawkes_py.hawkes.etas and .multitype."""
from __future__ import annotations

import math

import numpy as np


def etas_loglik(x, t, m, p, m0, u, window, kernel="gaussian", marks=True):
    """log L of space-time ETAS (Zhuang, Ogata & Vere-Jones 2002) by a double loop; u the background
    density at each event."""
    x, t, m, u = (np.asarray(a, float) for a in (x, t, m, u))
    T0, T1 = window
    N = t.size
    ll = 0.0
    for n in range(N):
        lam = p["mu"] * u[n]
        for j in range(N):
            if not t[j] < t[n]:
                continue
            kappa = p["A"] * math.exp(p["alpha"] * (m[j] - m0))
            dt = t[n] - t[j]
            g = (p["p"] - 1.0) / p["c"] * (1.0 + dt / p["c"]) ** (-p["p"])
            sig = p["d"] * math.exp(p["gamma"] * (m[j] - m0))
            r2 = float(np.sum((x[n] - x[j]) ** 2))
            if kernel == "gaussian":
                f = math.exp(-r2 / (2.0 * sig)) / (2.0 * math.pi * sig)
            else:
                f = (p["q"] - 1.0) / (math.pi * sig) * (1.0 + r2 / sig) ** (-p["q"])
            lam += kappa * g * f
        ll += math.log(lam)
    comp = p["mu"] * (T1 - T0)
    for j in range(N):
        comp += p["A"] * math.exp(p["alpha"] * (m[j] - m0)) * (1.0 - (1.0 + (T1 - t[j]) / p["c"]) ** (1.0 - p["p"]))
    ll -= comp
    if marks:
        beta = p["b"] * math.log(10.0)
        ll += float(np.sum(np.log(beta) - beta * (m - m0)))
    return ll


def _phi(z2, s, D):
    return math.exp(-z2 / (2 * s * s)) / (2 * math.pi * s * s) ** (D / 2)


def multitype_loglik(x, t, k, mu0, theta, omega, h, tau_x, tau_t, window):
    """log L of the multitype hpHawkes model by a double loop: background of type k_n = mu0[k_n] times the
    Gaussian smoother of the type-k_n events, trigger theta[k_m, k_n] omega exp(-omega dt) phi_D(.; h)."""
    from scipy.stats import norm
    x = np.asarray(x, float).reshape(len(t), -1)
    t = np.asarray(t, float)
    D = x.shape[1]
    T0, T1 = window
    N = t.size
    ll = 0.0
    for n in range(N):
        lam = 0.0
        for j in range(N):
            r2 = float(np.sum((x[n] - x[j]) ** 2))
            if k[j] == k[n]:
                lam += mu0[k[n]] * _phi(r2, tau_x, D) * _phi((t[n] - t[j]) ** 2, tau_t, 1)
            if t[j] < t[n]:
                lam += theta[k[j]][k[n]] * omega * math.exp(-omega * (t[n] - t[j])) * _phi(r2, h, D)
        ll += math.log(lam)
    for j in range(N):
        ll -= mu0[k[j]] * (norm.cdf((T1 - t[j]) / tau_t) - norm.cdf((T0 - t[j]) / tau_t))
        ll -= sum(theta[k[j]]) * (1.0 - math.exp(-omega * (T1 - t[j])))
    return ll
