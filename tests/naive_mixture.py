"""Slow, obvious NumPy/SciPy float64 reference for the TDP mixture hot steps (test oracle)."""
from __future__ import annotations

import numpy as np
from scipy.special import logsumexp
from scipy.stats import multivariate_normal


def log_component_densities(X, weights, means, covs):
    """d_ij = log w_j + log N(x_i | mu_j, Sigma_j) by scipy.stats.multivariate_normal.logpdf."""
    X = np.atleast_2d(np.asarray(X, dtype=np.float64))
    k = len(weights)
    D = np.empty((X.shape[0], k))
    for j in range(k):
        with np.errstate(divide="ignore"):
            lw = np.log(weights[j])
        D[:, j] = lw + multivariate_normal(means[j], covs[j]).logpdf(X).reshape(-1)
    return D


def sample_labels(D, u):
    """z_i = first j with cumsum_j exp(d_ij - max_i) > u_i * sum_j exp(d_ij - max_i)."""
    P = np.exp(D - D.max(axis=1, keepdims=True))
    c = np.cumsum(P, axis=1)
    target = u * c[:, -1]
    z = np.empty(D.shape[0], dtype=np.int64)
    for i in range(D.shape[0]):
        hit = np.flatnonzero(c[i] > target[i])
        z[i] = hit[0] if hit.size else np.flatnonzero(P[i] > 0)[-1]
    return z


def loglik(D):
    return logsumexp(D, axis=1)


def responsibilities(D):
    return np.exp(D - logsumexp(D, axis=1, keepdims=True))


def component_stats(X, W):
    """Counts, sums and second moments per component with weights W (n, k)."""
    N = W.sum(0)
    S1 = W.T @ X
    S2 = np.einsum("ij,ia,ib->jab", W, X, X)
    return N, S1, S2


def onehot(z, k):
    W = np.zeros((len(z), k))
    W[np.arange(len(z)), z] = 1.0
    return W


def niw_conditional_mu(N, S1, Sigma, m0, gamma0):
    """mu_j | Sigma_j, x ~ N(mean, cov): textbook conjugate normal update with prior N(m0, gamma0 Sigma)."""
    k, p = S1.shape
    means = np.empty((k, p))
    covs = np.empty((k, p, p))
    for j in range(k):
        # prior precision (gamma0 Sigma)^-1, likelihood precision N Sigma^-1
        Pinv = np.linalg.inv(Sigma[j])
        post_prec = Pinv / gamma0 + N[j] * Pinv
        covs[j] = np.linalg.inv(post_prec)
        means[j] = covs[j] @ (Pinv @ m0 / gamma0 + Pinv @ S1[j])
    return means, covs


def chol_factors(Sigma):
    """(L, L^{-1}, log|Sigma|) by LAPACK, one matrix at a time."""
    L = np.stack([np.linalg.cholesky(S) for S in Sigma])
    U = np.stack([np.linalg.inv(Lq) for Lq in L])
    logdet = np.array([np.linalg.slogdet(S)[1] for S in Sigma])
    return L, U, logdet


def inv_wishart_bartlett(Psi, adiag, alow):
    """(L A^{-T})(L A^{-T})' one matrix at a time, A from its diagonal and tril(-1) entries."""
    p = Psi.shape[-1]
    low = np.tril_indices(p, -1)
    out = []
    for P, d, a in zip(Psi, adiag, alow):
        A = np.diag(d)
        A[low] = a
        G = np.linalg.cholesky(P) @ np.linalg.inv(A).T
        out.append(G @ G.T)
    return np.stack(out)
