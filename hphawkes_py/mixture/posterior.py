"""Backend-neutral pieces around the sampler: initial values, the fitted density used for
prediction (plug-in or posterior predictive), clusters by modal merging, convergence
diagnostics.  Everything here is in STANDARDISED units and runs on the host in NumPy.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from . import _math as M
from .engine import _single_threaded_blas, build_coefficients, features_numpy, logsumexp_rows

__all__ = ["kmeans_plusplus", "PredictionMixture", "modal_clusters", "label_invariant_diagnostics"]

#: rows of the standardised data beyond which k-means++ seeds on a random subsample
KMEANS_SAMPLE = 10_000


# ---------------------------------------------------------------------------- initial values
def _seed_loops(Xs, first, uniforms, centres):
    """k-means++ seeding (D^2 sampling): centre 0 is row ``first``; centre j >= 1 is the first
    row i whose running sum of d2 (the squared distance of each row to its nearest centre so
    far) exceeds ``uniforms[j - 1] * sum(d2)``, i.e. row i with probability d2_i / sum(d2); a
    uniformly chosen row when every d2 is 0."""
    n, p = Xs.shape
    k = centres.shape[0]
    d2 = np.empty(n)
    for a in range(p):
        centres[0, a] = Xs[first, a]
    for i in range(n):
        s = 0.0
        for a in range(p):
            t = Xs[i, a] - centres[0, a]
            s += t * t
        d2[i] = s
    for j in range(1, k):
        tot = 0.0
        for i in range(n):
            tot += d2[i]
        u = uniforms[j - 1]
        pick = min(int(u * n), n - 1)
        if tot > 0.0:
            target = u * tot
            acc = 0.0
            pick = -1
            last = 0
            for i in range(n):
                if d2[i] > 0.0:
                    last = i
                acc += d2[i]
                if acc > target:
                    pick = i
                    break
            if pick < 0:  # rounding left the running sum at the target: the last row with mass
                pick = last
        for a in range(p):
            centres[j, a] = Xs[pick, a]
        for i in range(n):
            s = 0.0
            for a in range(p):
                t = Xs[i, a] - centres[j, a]
                s += t * t
            if s < d2[i]:
                d2[i] = s


@functools.lru_cache(maxsize=1)
def _seed_kernel():
    # compiled on first use (cached on disk): importing the mixture loads no Numba kernels.
    # A Python loop over the k centres with NumPy temporaries took 0.33 s for k = 256 on
    # 10,000 rows; this loop takes ~0.02 s.
    from numba import njit

    return njit(cache=True, nogil=True)(_seed_loops)


def kmeans_plusplus(Xs: np.ndarray, k: int, rng: np.random.Generator, n_lloyd: int = 5) -> np.ndarray:
    """k centres by k-means++ seeding (Arthur & Vassilvitskii 2007) and a few Lloyd steps.

    Runs on at most :data:`KMEANS_SAMPLE` rows (a random subsample for larger n; seeding costs
    O(n k p)).  With fewer distinct rows than k, the remaining centres are data rows drawn
    uniformly (duplicated centres are harmless starting values for a DP mixture).
    """
    n, p = Xs.shape
    if n > KMEANS_SAMPLE:
        Xs = Xs[rng.choice(n, KMEANS_SAMPLE, replace=False)]
        n = KMEANS_SAMPLE
    Xs = np.ascontiguousarray(Xs, dtype=np.float64)
    centres = np.empty((k, p))
    first = int(rng.integers(n))
    _seed_kernel()(Xs, first, rng.random(max(k - 1, 0)), centres)
    # Lloyd steps: nearest centre by argmin_j |c_j|^2 - 2 x.c_j (|x|^2 does not change the argmin),
    # 256 rows at a time in one reused buffer that stays in cache (whole (n, k) temporaries cost
    # several times the GEMM); single-threaded BLAS: these 200 small products took 0.19-1.7 s
    # with OpenBLAS's threads on a busy 2-core host, 0.07-0.17 s on one (same centres)
    B = 256
    G = np.empty((B, k))
    lab = np.empty(n, dtype=np.intp)
    sums = np.empty((k, p))
    with _single_threaded_blas():
        for _ in range(n_lloyd):
            cc = (centres * centres).sum(1)
            Ct = np.ascontiguousarray(centres.T) * -2.0
            for lo in range(0, n, B):
                g = G[: min(B, n - lo)]
                np.matmul(Xs[lo:lo + B], Ct, out=g)
                g += cc
                g.argmin(1, out=lab[lo:lo + B])
            cnt = np.bincount(lab, minlength=k)
            for a in range(p):
                sums[:, a] = np.bincount(lab, weights=Xs[:, a], minlength=k)
            full = cnt > 0
            centres[full] = sums[full] / cnt[full, None]
    return centres


# ---------------------------------------------------------------------------- prediction
class PredictionMixture:
    """A Gaussian mixture of K' components (standardised units) used for prediction.

    The plug-in density has the k point-estimate components; the posterior predictive
    density ``(1/S) sum_s f_s(x)`` has the S x k components of the stored draws with weights
    ``w_sj / S``.  ``label[c]`` is the component index j of term c, so that label
    probabilities add up the draws of one (relabelled) component.

    Log densities use the quadratic-feature product (one GEMM) where it is accurate, and a
    direct, scaled triangular evaluation for rows far from the data (|x| > 1e4 standardised
    units) or where the product overflows: there, per-row shifts keep every log density
    difference, hence every probability, finite (``predict_proba([[1e200, 1e200]])``).
    """

    FAR = 1e4

    def __init__(self, log_w, mu, Sigma, k: int, label=None):
        self.log_w = np.asarray(log_w, dtype=np.float64).reshape(-1)
        self.mu = np.asarray(mu, dtype=np.float64).reshape(-1, mu.shape[-1])
        Sigma = np.asarray(Sigma, dtype=np.float64).reshape(-1, mu.shape[-1], mu.shape[-1])
        self.K, self.p = self.mu.shape
        self.k = int(k)
        self.label = np.arange(self.K) % self.k if label is None else np.asarray(label)
        self.n_draws = self.K // self.k
        _, self.U, logdet = M.chol_factors(Sigma)
        self.logdet = logdet
        self.c = self.log_w - 0.5 * self.p * M.LOG_2PI - 0.5 * logdet
        self.W = build_coefficients(self.log_w, self.mu, self.U, logdet)

    def _chunk(self) -> int:
        return max(1, (1 << 23) // max(1, self.K))  # <= 64 MiB of log densities per chunk

    def log_terms(self, Xs):
        """(D (m, K'), shift (m,)): the log of weight x density of every term is D - shift."""
        with np.errstate(over="ignore", invalid="ignore"):  # far rows overflow here; redone below
            D = features_numpy(Xs) @ self.W
        shift = np.zeros(Xs.shape[0])
        with np.errstate(invalid="ignore"):
            bad = (np.isnan(D) | (D == np.inf)).any(1) | ~(D.max(1) > -np.inf) | (np.abs(Xs).max(1) > self.FAR)
        if bad.any():
            D[bad], shift[bad] = self._direct(Xs[bad])
        return D, shift

    def _direct(self, Xb):
        s = np.maximum(1.0, np.abs(Xb).max(1))  # scale so that no square overflows
        y = Xb[:, None, :] / s[:, None, None] - self.mu[None, :, :] / s[:, None, None]
        t = np.einsum("jab,ijb->ija", self.U, y)
        q = (t * t).sum(-1)  # q_ij = ||U_j (x_i - mu_j)||^2 / s_i^2
        live = np.isfinite(self.c)
        qmin = np.where(live[None, :], q, np.inf).min(1)
        with np.errstate(over="ignore", invalid="ignore"):  # r = inf far away: density 0, shift inf
            r = s * s
            dq = q - qmin[:, None]
            D = self.c[None, :] - 0.5 * np.where(dq == 0, 0.0, r[:, None] * dq)
            D = np.where(np.isnan(D), -np.inf, D)
            shift = 0.5 * r * qmin
        return D, shift

    def log_density(self, Xs):
        out = np.empty(Xs.shape[0])
        step = self._chunk()
        for lo in range(0, Xs.shape[0], step):
            D, shift = self.log_terms(Xs[lo : lo + step])
            with np.errstate(over="ignore"):
                out[lo : lo + step] = logsumexp_rows(D) - shift - math.log(self.n_draws)
        return out

    def log_component(self, Xs):
        """(m, k) log of sum over draws of the terms of each component, up to a per-row constant."""
        D, _ = self.log_terms(Xs)
        if self.n_draws == 1:
            return D
        m = D.shape[0]
        G = D.reshape(m, self.n_draws, self.k)
        mx = G.max(1)
        safe = np.where(np.isfinite(mx), mx, 0.0)
        with np.errstate(divide="ignore"):
            return safe + np.log(np.exp(G - safe[:, None, :]).sum(1))

    def proba(self, Xs):
        out = np.empty((Xs.shape[0], self.k))
        step = self._chunk()
        for lo in range(0, Xs.shape[0], step):
            A = self.log_component(Xs[lo : lo + step])
            A -= A.max(1, keepdims=True)
            np.exp(A, out=A)
            A /= A.sum(1, keepdims=True)
            out[lo : lo + step] = A
        return out


# ---------------------------------------------------------------------------- clusters
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


# ---------------------------------------------------------------------------- diagnostics
def label_invariant_diagnostics(traces: dict) -> "object":
    """R-hat and bulk/tail ESS (ArviZ) of label-invariant quantities.

    ``traces`` maps a name to an array (chains, draws).  One chain is split in two halves (the
    split R-hat of a single chain).  Returns a pandas DataFrame indexed by name.
    """
    import arviz as az
    import pandas as pd

    rows = {}
    for name, a in traces.items():
        a = np.asarray(a, dtype=np.float64)
        if a.shape[0] == 1:
            h = a.shape[1] // 2
            a = np.stack([a[0, :h], a[0, h : 2 * h]])
        if a.shape[1] < 4:
            rows[name] = (float(a.mean()), np.nan, np.nan, np.nan)
            continue
        if np.ptp(a) == 0:
            rows[name] = (float(a.mean()), 1.0, np.nan, np.nan)
            continue
        rows[name] = (
            float(a.mean()),
            float(az.rhat(a)),
            float(az.ess(a, method="bulk")),
            float(az.ess(a, method="tail")),
        )
    return pd.DataFrame.from_dict(rows, orient="index", columns=["mean", "r_hat", "ess_bulk", "ess_tail"])
