"""Slow, obvious NumPy reference for the SCCS conditional Poisson model (test oracle).

Dense design matrix, explicit per-stratum sums, float64 throughout.
"""
from __future__ import annotations

import numpy as np


def dense_design(data):
    """Dense (n_rows, n_covariates) design matrix of an SCCSData."""
    X = np.zeros((data.n_rows, data.n_covariates))
    for j in range(data.n_covariates):
        rows = data.row_idx[data.col_ptr[j]:data.col_ptr[j + 1]]
        vals = 1.0 if data.values is None else data.values[data.col_ptr[j]:data.col_ptr[j + 1]]
        X[rows, j] = vals
    return X


def stratum_loglik(X, y, time, strata, beta):
    """Per-stratum sum_i y_i log(t_i exp(x_i b) / sum_k t_k exp(x_k b))."""
    eta = X @ beta
    out = {}
    for s in np.unique(strata):
        m = strata == s
        lin = eta[m] + np.log(time[m])
        n = y[m].sum()
        out[s] = float(np.sum(y[m] * lin) - (n * np.log(np.sum(np.exp(lin))) if n > 0 else 0.0))
    return np.array([out[s] for s in np.unique(strata)])


def loglik(X, y, time, strata, beta, weights=None):
    ll = stratum_loglik(X, y, time, strata, beta)
    w = np.ones_like(ll) if weights is None else np.asarray(weights, dtype=float)
    return float(np.dot(w, ll))


def gradient_hessian(X, y, time, strata, beta, j, weights=None):
    """d loglik / d b_j and -d^2 loglik / d b_j^2 (weighted), by explicit formulas."""
    eta = X @ beta
    us = np.unique(strata)
    w = np.ones(len(us)) if weights is None else np.asarray(weights, dtype=float)
    g = 0.0
    h = 0.0
    for k, s in enumerate(us):
        m = strata == s
        p = time[m] * np.exp(eta[m])
        p = p / p.sum()
        n = y[m].sum()
        x = X[m, j]
        mean = np.dot(p, x)
        g += w[k] * (np.dot(y[m], x) - n * mean)
        h += w[k] * n * (np.dot(p, x * x) - mean**2)
    return g, h


def log_prior(beta, prior, variance, penalized=None):
    b = np.asarray(beta) if penalized is None else np.asarray(beta)[penalized]
    if prior == "none":
        return 0.0
    if prior == "normal":
        return float(np.sum(-0.5 * np.log(2 * np.pi * variance) - b**2 / (2 * variance)))
    lam = np.sqrt(2.0 / variance)
    return float(np.sum(np.log(lam / 2) - lam * np.abs(b)))


def map_scipy(X, y, time, strata, prior, variance, weights=None):
    """MAP by scipy: L-BFGS-B; Laplace via the split b = u - v, u, v >= 0 (exact zeros at bounds)."""
    from scipy.optimize import minimize

    J = X.shape[1]
    lam = np.sqrt(2.0 / variance)

    def nll_grad(b):
        grads = np.array([gradient_hessian(X, y, time, strata, b, j, weights)[0] for j in range(J)])
        return -loglik(X, y, time, strata, b, weights), -grads

    if prior == "normal":
        def f(b):
            v, g = nll_grad(b)
            return v + np.dot(b, b) / (2 * variance), g + b / variance
        res = minimize(f, np.zeros(J), jac=True, method="L-BFGS-B", options={"ftol": 1e-15, "gtol": 1e-11, "maxiter": 5000})
        return res.x
    def f2(uv):
        b = uv[:J] - uv[J:]
        v, g = nll_grad(b)
        return v + lam * uv.sum(), np.concatenate([g + lam, -g + lam])
    res = minimize(f2, np.zeros(2 * J), jac=True, method="L-BFGS-B", bounds=[(0, None)] * (2 * J),
                   options={"ftol": 1e-15, "gtol": 1e-11, "maxiter": 5000})
    return res.x[:J] - res.x[J:]


def information(X, y, time, strata, beta, weights=None):
    """-d^2 loglik / d b d b' (weighted), by explicit per-stratum sums."""
    eta = X @ beta
    us = np.unique(strata)
    w = np.ones(len(us)) if weights is None else np.asarray(weights, dtype=float)
    J = X.shape[1]
    out = np.zeros((J, J))
    for k, s in enumerate(us):
        m = strata == s
        p = time[m] * np.exp(eta[m])
        p = p / p.sum()
        Xs = X[m]
        mean = p @ Xs
        out += w[k] * y[m].sum() * ((Xs * p[:, None]).T @ Xs - np.outer(mean, mean))
    return out


def profile_bounds(f, centre, drop, scale):
    """Ends of {x : f(x) >= f(centre) - drop} for a unimodal f, by scipy's brentq."""
    from scipy.optimize import brentq

    top = f(centre)
    ends = []
    for side in (-1.0, 1.0):
        d = scale
        while f(centre + side * d) > top - drop:
            d *= 2
        a, b = sorted((centre, centre + side * d))
        ends.append(brentq(lambda x: f(x) - (top - drop), a, b, xtol=1e-12))
    return ends
