"""Every-pair NumPy references (float64) for the Hawkes model with per-event log-rates and free
locations (hphawkes_py.hawkes.latent): the log-likelihood straight from its definition and its analytic
gradient from dense N x N matrices. Events must be sorted by time."""
from __future__ import annotations

import math

import numpy as np
from scipy.stats import norm


def _phi0(D, s):
    return (2.0 * math.pi * s * s) ** (-0.5 * D)


def _mats(x, t, p):
    x = np.asarray(x, float).reshape(len(t), -1)
    D = x.shape[1]
    diff = x[None, :, :] - x[:, None, :]  # diff[n, m] = x_m - x_n
    r2 = np.sum(diff ** 2, axis=2)
    dt = t[:, None] - t[None, :]  # t_n - t_m
    E = np.exp(-(r2 / (2 * p["tau_x"] ** 2) + dt ** 2 / (2 * p["tau_t"] ** 2)))
    U = np.where(dt > 0, np.exp(-(r2 / (2 * p["h"] ** 2) + p["omega"] * np.where(dt > 0, dt, 0.0))), 0.0)
    cs = _phi0(D, p["tau_x"]) * _phi0(1, p["tau_t"])
    cg = p["omega"] * _phi0(D, p["h"])
    return x, D, diff, E, U, cs, cg


def log_likelihood(x, t, p, beta=None, gamma=None, window=None):
    """sum_n log lambda_n - Lambda with weights exp(beta_m) (background) and exp(gamma_m) (trigger)."""
    t = np.asarray(t, float)
    N = len(t)
    wb = np.exp(beta) if beta is not None else np.ones(N)
    wg = np.exp(gamma) if gamma is not None else np.ones(N)
    T0, T1 = window if window is not None else (t.min(), t.max())
    x, D, diff, E, U, cs, cg = _mats(x, t, p)
    lam = p["mu0"] * cs * E @ wb + p["theta"] * cg * U @ wg
    B = norm.cdf((T1 - t) / p["tau_t"]) - norm.cdf((T0 - t) / p["tau_t"])
    C = 1.0 - np.exp(-p["omega"] * (T1 - t))
    return float(np.sum(np.log(lam)) - p["mu0"] * wb @ B - p["theta"] * wg @ C)


def gradient(x, t, p, beta=None, gamma=None, window=None):
    """(d/dx (N, D), d/dbeta, d/dgamma, diag d2/dbeta2, diag d2/dgamma2), analytic, dense."""
    t = np.asarray(t, float)
    N = len(t)
    wb = np.exp(beta) if beta is not None else np.ones(N)
    wg = np.exp(gamma) if gamma is not None else np.ones(N)
    T0, T1 = window if window is not None else (t.min(), t.max())
    x, D, diff, E, U, cs, cg = _mats(x, t, p)
    kb, kg = p["mu0"] * cs, p["theta"] * cg
    lam = kb * E @ wb + kg * U @ wg
    v = 1.0 / lam
    # d lambda_n / d x_k: as target (k = n) and as source (m = k)
    Eb = E * wb[None, :]
    Ug = U * wg[None, :]
    tgt = (kb / p["tau_x"] ** 2) * np.einsum("nm,nmd->nd", Eb, diff) + (kg / p["h"] ** 2) * np.einsum("nm,nmd->nd", Ug, diff)
    src = (kb / p["tau_x"] ** 2) * np.einsum("nk,nkd->kd", Eb * v[:, None], -diff) \
        + (kg / p["h"] ** 2) * np.einsum("nk,nkd->kd", Ug * v[:, None], -diff)
    gx = v[:, None] * tgt + src
    B = norm.cdf((T1 - t) / p["tau_t"]) - norm.cdf((T0 - t) / p["tau_t"])
    C = 1.0 - np.exp(-p["omega"] * (T1 - t))
    gb = wb * (kb * (E.T @ v) - p["mu0"] * B)
    gg = wg * (kg * (U.T @ v) - p["theta"] * C)
    hb = gb - (wb * kb) ** 2 * ((E ** 2).T @ (v ** 2))
    hg = gg - (wg * kg) ** 2 * ((U ** 2).T @ (v ** 2))
    return gx, gb, gg, hb, hg


def simulate_random_rates(mu, theta, omega, h, sigma, region, duration, seed):
    """Branching simulation of the Hawkes process whose event m has offspring productivity
    theta exp(gamma_m), gamma_m ~ N(0, sigma^2): background events uniform on [0, region]^2 x [0, duration]
    (Poisson, mean mu * duration), offspring delays Exp(omega), displacements N(0, h^2 I).
    Returns (x (N, 2), t (N,), gamma (N,)), sorted by time, offspring past ``duration`` dropped."""
    rng = np.random.default_rng(seed)
    nb = rng.poisson(mu * duration)
    xs = [rng.uniform(0, region, (nb, 2))]
    ts = [rng.uniform(0, duration, nb)]
    gs = [rng.normal(0.0, sigma, nb)]
    px, pt, pg = xs[0], ts[0], gs[0]
    while len(pt):
        k = rng.poisson(theta * np.exp(pg))
        par = np.repeat(np.arange(len(pt)), k)
        cx = px[par] + h * rng.standard_normal((len(par), 2))
        ct = pt[par] + rng.exponential(1.0 / omega, len(par))
        keep = ct <= duration
        px, pt = cx[keep], ct[keep]
        pg = rng.normal(0.0, sigma, len(pt))
        xs.append(px)
        ts.append(pt)
        gs.append(pg)
    x, t, g = np.concatenate(xs), np.concatenate(ts), np.concatenate(gs)
    o = np.argsort(t, kind="stable")
    return x[o], t[o], g[o]
