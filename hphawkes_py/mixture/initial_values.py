"""Starting values of the TDP mixture: k-means++ centres and the initial Gibbs/BEM state.

Everything here is in STANDARDISED units and runs on the host.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ._blas import single_threaded_blas
from ._math import GibbsState

__all__ = ["kmeans_plusplus", "initial_state", "KMEANS_SAMPLE"]

#: rows of the standardised data beyond which k-means++ seeds on a random subsample
KMEANS_SAMPLE = 10_000


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
    # A Python loop over the k centres would allocate NumPy temporaries of n rows per centre.
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
    # several times the GEMM); single-threaded BLAS: these small products gain nothing from
    # OpenBLAS's threads, which only compete for the cores
    B = 256
    G = np.empty((B, k))
    lab = np.empty(n, dtype=np.intp)
    sums = np.empty((k, p))
    with single_threaded_blas():
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



def initial_state(Xs, k, rng, init) -> GibbsState:
    """Starting values: means from ``init`` (k-means++, random data rows, or given standardised
    means), Sigma_j = I (the standardised data's covariance), equal weights, alpha = 1."""
    n, p = Xs.shape
    if isinstance(init, str) and init == "kmeans++":
        mu = kmeans_plusplus(Xs, k, rng)
    elif isinstance(init, str) and init == "random":
        mu = Xs[rng.choice(n, size=k, replace=k > n)].copy()
    else:
        mu = np.array(init, dtype=np.float64)
    Sigma = np.broadcast_to(np.eye(p), (k, p, p)).copy()
    return GibbsState(mu, Sigma, np.full(k, -math.log(k)), 1.0)

