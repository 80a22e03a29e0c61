"""Clusters of mixture components by the modes of the fitted density (Chan et al. 2008).

Everything here is in STANDARDISED units and runs on the host in NumPy.
"""
from __future__ import annotations

import numpy as np

__all__ = ["modal_clusters"]


def _mode_ascent(w, mu, P, starts, tol=1e-8, max_iter=500):
    """Modal EM (Li, Ray & Lindsay 2007) on the mixture sum_j w_j N(mu_j, P_j^{-1}) from each start.

    Fixed point x <- (sum_j r_j(x) P_j)^{-1} sum_j r_j(x) P_j mu_j with r_j(x) the component
    posterior probabilities at x: the density increases at every step.  Starts that have
    converged (step < ``tol``) are not iterated further.
    """
    Pm = np.einsum("jab,jb->ja", P, mu)
    logc = np.log(w) + 0.5 * np.linalg.slogdet(P)[1]
    x = starts.copy()
    active = np.arange(len(x))
    for _ in range(max_iter):
        xa = x[active]
        dx = xa[:, None, :] - mu[None, :, :]
        q = np.einsum("ija,jab,ijb->ij", dx, P, dx, optimize=True)
        L = logc[None, :] - 0.5 * q
        L -= L.max(1, keepdims=True)
        R = np.exp(L)
        R /= R.sum(1, keepdims=True)
        A = np.einsum("ij,jab->iab", R, P, optimize=True)
        x_new = np.linalg.solve(A, (R @ Pm)[:, :, None])[:, :, 0]
        step = np.abs(x_new - xa).max(1)
        x[active] = x_new
        active = active[step >= tol]
        if active.size == 0:
            break
    return x


def _responsible(x, wl, mu, P, allowed):
    """Index of the allowed component with the largest posterior probability at x."""
    dx = x[None, :] - mu
    q = np.einsum("ja,jab,jb->j", dx, P, dx)
    L = np.log(wl) + 0.5 * np.linalg.slogdet(P)[1] - 0.5 * q
    L[~allowed] = -np.inf
    return int(np.argmax(L))


def modal_clusters(weights, means, covs, *, merge_tol=0.05, min_cluster_weight=0.01):
    """Clusters of mixture components by the modes of the mixture density (Chan et al. 2008).

    From the mean of every component of weight >= ``min_cluster_weight / 10``, climb the fitted
    mixture density to a mode (modal EM); components whose climbs end at the same mode (within
    ``merge_tol``, max-norm, standardised units) form one cluster.  A mode whose cluster weighs
    less than ``min_cluster_weight`` (a ripple made by a rarely used component), and every
    lighter component, join the cluster of the heavy component most responsible for them.

    Returns
    -------
    comp_cluster : ndarray (k,) int
        Cluster of each component (-1 for components of weight 0); clusters numbered by
        decreasing weight.
    modes : ndarray (n_clusters, p)
        Mode of each cluster (standardised units).
    """
    w = np.asarray(weights, dtype=np.float64)
    live = np.flatnonzero(w > 0)
    mu, S = means[live], covs[live]
    wl = w[live] / w[live].sum()
    P = np.linalg.inv(S)
    P = 0.5 * (P + np.swapaxes(P, 1, 2))
    climb = wl >= min_cluster_weight / 10.0
    if not climb.any():
        climb[np.argmax(wl)] = True
    ends = np.full(mu.shape, np.nan)
    ends[climb] = _mode_ascent(wl, mu, P, mu[climb])
    # group the end points (greedy over climbing components by weight)
    order = [j for j in np.argsort(-wl) if climb[j]]
    modes, assign = [], np.full(len(live), -1, dtype=np.int64)
    for j in order:
        for c, m in enumerate(modes):
            if np.abs(ends[j] - m).max() < merge_tol:
                assign[j] = c
                break
        else:
            modes.append(ends[j])
            assign[j] = len(modes) - 1
    modes = np.array(modes)
    cw = np.bincount(assign[climb], weights=wl[climb], minlength=len(modes))
    heavy = cw >= min_cluster_weight
    if not heavy.any():
        heavy[np.argmax(cw)] = True
    in_heavy = np.zeros(len(live), dtype=bool)
    in_heavy[climb] = heavy[assign[climb]]
    for c in np.flatnonzero(~heavy):
        assign[assign == c] = assign[_responsible(modes[c], wl, mu, P, in_heavy)]
    for j in np.flatnonzero(~climb):
        assign[j] = assign[_responsible(mu[j], wl, mu, P, in_heavy)]
    kept = np.unique(assign)
    cw = np.bincount(assign, weights=wl, minlength=len(modes))[kept]
    rank = kept[np.argsort(-cw, kind="stable")]
    remap = np.full(len(modes), -1)
    remap[rank] = np.arange(len(rank))
    comp_cluster = np.full(len(w), -1, dtype=np.int64)
    comp_cluster[live] = remap[assign]
    return comp_cluster, modes[rank]

