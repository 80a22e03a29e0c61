"""Slow, obvious NumPy float64 reference for the gradient of the Hawkes log-likelihood (all pairs as
N x N matrices, no windows, any time order), written from the model's formulas independently of
the engines: each kernel matrix is differentiated entry by entry.

log L = sum_n log lambda_n - Lambda, lambda_n = mu0 sum_m K_nm + theta sum_{m: t_m < t_n} g(dt) f(r2),
so d log L / d a = sum_n (d lambda_n / d a) / lambda_n - d Lambda / d a.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.stats import norm

import naive_hawkes as nh


def _pairs(x, t):
    x = np.asarray(x, float).reshape(len(t), -1)
    t = np.asarray(t, float)
    z2 = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    dt = t[:, None] - t[None, :]
    return x.shape[1], z2, dt


def log_likelihood_gradient(x, t, mu0, tau_x, tau_t, theta, omega, h, window=None, p=0.0, omega2=None, w=None,
                            q=0.0):
    """{name: d log L / d name}; ``p > 1``: the power-law temporal kernel (p - 1) omega (1 + omega dt)^(-p);
    ``omega2``, ``w``: the sum of two exponentials; ``q > 0``: the spatial power law."""
    D, z2, dt = _pairs(x, t)
    t = np.asarray(t, float)
    T0, T1 = (t.min(), t.max()) if window is None else window
    # background K_nm = phi_D(z; tau_x) phi_1(dt; tau_t) and its derivatives
    K = nh.phi_d(z2, tau_x, D) * nh.phi_d(dt**2, tau_t, 1)
    dK_tx = K * (z2 / tau_x**3 - D / tau_x)
    dK_tt = K * (dt**2 / tau_t**3 - 1.0 / tau_t)
    # trigger g(dt) f(z) for dt > 0
    earlier = dt > 0
    d = np.where(earlier, dt, 1.0)
    if omega2 is not None:
        g = w * omega * np.exp(-omega * d) + (1 - w) * omega2 * np.exp(-omega2 * d)
        dg = {"omega": w * np.exp(-omega * d) * (1 - omega * d),
              "omega2": (1 - w) * np.exp(-omega2 * d) * (1 - omega2 * d),
              "w": omega * np.exp(-omega * d) - omega2 * np.exp(-omega2 * d)}
    elif p > 0.0:
        g = (p - 1) * omega * (1 + omega * d) ** (-p)
        dg = {"omega": (p - 1) * (1 + omega * d) ** (-p) - (p - 1) * omega * p * d * (1 + omega * d) ** (-p - 1)}
    else:
        g = omega * np.exp(-omega * d)
        dg = {"omega": np.exp(-omega * d) - omega * d * np.exp(-omega * d)}
    f = nh.spatial_kernel(z2, h, D, q)
    if q == 0.0:
        df_h = f * (z2 / h**3 - D / h)
    else:  # f = c h^-D (1 + z2/h^2)^-q
        df_h = f * (-D / h + q * (2 * z2 / h**3) / (1 + z2 / h**2))
    mask = earlier.astype(float)
    S = K.sum(1)
    G = (mask * g * f).sum(1)
    lam = mu0 * S + theta * G
    # compensator parts
    A, B = (T1 - t) / tau_t, (T0 - t) / tau_t
    bg = norm.cdf(A) - norm.cdf(B)
    dbg_tt = norm.pdf(A) * (-A / tau_t) - norm.pdf(B) * (-B / tau_t)
    e = T1 - t
    if omega2 is not None:
        tr = w * (1 - np.exp(-omega * e)) + (1 - w) * (1 - np.exp(-omega2 * e))
        dtr = {"omega": w * e * np.exp(-omega * e), "omega2": (1 - w) * e * np.exp(-omega2 * e),
               "w": np.exp(-omega2 * e) - np.exp(-omega * e)}
    elif p > 0.0:
        tr = 1 - (1 + omega * e) ** (1 - p)
        dtr = {"omega": (p - 1) * e * (1 + omega * e) ** (-p)}
    else:
        tr = 1 - np.exp(-omega * e)
        dtr = {"omega": e * np.exp(-omega * e)}
    out = {
        "mu0": float(np.sum(S / lam) - bg.sum()),
        "tau_x": float(np.sum(mu0 * dK_tx.sum(1) / lam)),
        "tau_t": float(np.sum(mu0 * dK_tt.sum(1) / lam) - mu0 * dbg_tt.sum()),
        "theta": float(np.sum(G / lam) - tr.sum()),
        "h": float(np.sum(theta * (mask * g * df_h).sum(1) / lam)),
    }
    for name, dgm in dg.items():
        out[name] = float(np.sum(theta * (mask * dgm * f).sum(1) / lam) - theta * dtr[name].sum())
    names = ("mu0", "tau_x", "tau_t", "theta", "omega", "h") + (("omega2", "w") if omega2 is not None else ())
    return {n: out[n] for n in names}


def finite_difference(fun, params, name, rel=1e-6):
    """Central difference of ``fun(params)`` in parameter ``name`` with step ``rel * value``."""
    v = params[name]
    step = rel * v if v != 0 else rel
    hi = fun({**params, name: v + step})
    lo = fun({**params, name: v - step})
    return (hi - lo) / (2.0 * step)


def relative_error(a, b):
    return abs(a - b) / max(abs(b), math.ulp(1.0))
