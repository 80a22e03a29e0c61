r"""Partitions you can report: posterior similarity, a point partition by Binder or VI loss, cluster summaries.

A Gibbs fit gives a posterior over partitions of the n events, one partition per draw (the labels
z_s of draw s).  To report *one* partition, Bayesian practice (Binder 1978; Lau & Green 2007;
Wade & Ghahramani 2018; Dahl, Johnson & Müller 2022) picks the partition c that minimises the
posterior expected loss ``E[L(c, C) | x] ~ (1/S) sum_s L(c, z_s)`` for

* Binder's loss, ``L_B(c, c') = sum_{i<j} |1(c_i = c_j) - 1(c'_i = c'_j)|``: the number of pairs
  of events placed together by one partition and apart by the other (equal costs, as mcclust's
  ``binder``); its expectation is ``sum_{i<j} |1(c_i = c_j) - p_ij|`` with ``p_ij`` the posterior
  similarity (the probability that i and j share a cluster);
* the variation of information (Meilă 2007), ``VI(c, c') = H(c) + H(c') - 2 I(c, c')``, in bits
  (base-2 logarithms, as mcclust and SALSO), which penalises splitting a cluster less than
  Binder's loss does and so gives fewer tiny clusters.

Both expectations are written with the contingency counts ``n^s_{kl}`` (events in cluster k of c
and l of z_s) and ``g(x) = x (x-1)/2`` (Binder) or ``x log2 x`` (VI, then divided by n):
``sum_k g(n_k) + (1/S) sum_s sum_l g(n^s_l) - (2/S) sum_s sum_{kl} g(n^s_{kl})``, so moving one event
changes a few counts and the search needs no n x n matrix.  The search is SALSO (Dahl, Johnson &
Müller 2022): per run, a random sequential allocation, then *sweetening* sweeps (each event in
turn moves to the cluster, or a new one, of least expected loss, until none moves), then
*zealous* updates (a cluster is dissolved and its events reallocated one by one, kept when the
expected loss falls); the best of ``n_runs`` runs is returned.

Per-draw labels of a fitted :class:`TDPGaussianMixture` come from :func:`sample_label_draws`:
for each stored draw theta_s, labels are drawn from ``p(z | theta_s, x)``, so (theta_s, z_s) is a
draw from the joint posterior.  The mode-merged clusters ``cluster_labels_`` of the model are a
third, faster summary (one partition from the fitted density, no draws needed).
Summaries and plots of a partition are in :mod:`hphawkes_py.mixture.cytometry`.
"""
from __future__ import annotations

import functools
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._validate import as_float_array, check_in, check_int, check_random_state, check_threads, describe
from ._labels import as_integer_labels, labels_2d

__all__ = ["posterior_similarity", "point_partition", "PointPartition", "binder_loss", "vi_loss",
           "variation_of_information", "binder_distance", "sample_label_draws"]

LOSSES = ("VI", "binder")


# ----------------------------------------------------------------------------- validation
def _partition_1d(partition, n: int, name: str = "partition") -> np.ndarray:
    arr = np.asarray(partition)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional (one label per event), got shape {arr.shape}")
    if arr.shape[0] != n:
        raise ValueError(f"{name} has {arr.shape[0]} labels but the draws have n = {n} events")
    return labels_2d(arr, name, one_partition=True)[0]


# ----------------------------------------------------------------------------- losses
def _contingency(a, b):
    k, l = a.max() + 1, b.max() + 1
    return np.bincount(a * l + b, minlength=k * l).reshape(k, l)


def _expected(g, partition, Z) -> float:
    """sum_k g(n_k) + (1/S) sum_s [sum_l g(n^s_l) - 2 sum_kl g(n^s_kl)]: the expected loss, summed
    over pairs for Binder's g, n times the VI for VI's g."""
    S = Z.shape[0]
    total = g(np.bincount(partition)).sum()
    acc = 0.0
    for s in range(S):
        T = _contingency(partition, Z[s])
        acc += g(T.sum(0)).sum() - 2.0 * g(T).sum()
    return float(total + acc / S)


def _g_binder(c):
    c = np.asarray(c, dtype=np.float64)
    return c * (c - 1.0) / 2.0


def _g_vi(c):
    c = np.asarray(c, dtype=np.float64)
    out = np.zeros_like(c)
    pos = c > 0
    out[pos] = c[pos] * np.log2(c[pos])
    return out


def variation_of_information(a, b) -> float:
    """Variation of information between two partitions of the same events, in bits (Meilă 2007).

    Parameters
    ----------
    a, b : array_like (n,)
        Cluster labels (any integers; only which events share a label matters).

    Returns
    -------
    float
        ``H(a) + H(b) - 2 I(a, b)`` with base-2 logarithms: 0 for the same partition, at most
        ``log2 n``.

    Examples
    --------
    >>> from hphawkes_py.mixture import variation_of_information
    >>> variation_of_information([0, 0, 1, 1], [5, 5, 7, 7])
    0.0
    >>> variation_of_information([0, 0, 0, 0], [0, 1, 2, 3])
    2.0
    """
    a = labels_2d(a, "a", one_partition=True)[0]
    b = _partition_1d(b, a.size, "b")
    return _expected(_g_vi, a, b[None, :]) / a.size


def binder_distance(a, b) -> int:
    """Binder's loss between two partitions: pairs of events together in one and apart in the other.

    Parameters
    ----------
    a, b : array_like (n,)
        Cluster labels.

    Returns
    -------
    int
        ``sum_{i<j} |1(a_i = a_j) - 1(b_i = b_j)|``.

    Examples
    --------
    >>> from hphawkes_py.mixture import binder_distance
    >>> binder_distance([0, 0, 1, 1], [0, 0, 0, 1])
    3
    """
    a = labels_2d(a, "a", one_partition=True)[0]
    b = _partition_1d(b, a.size, "b")
    return int(round(_expected(_g_binder, a, b[None, :])))



def vi_loss(partition, labels) -> float:
    """Posterior expected variation of information of a partition, in bits: ``(1/S) sum_s VI(c, z_s)``.

    Parameters
    ----------
    partition : array_like (n,)
        The partition c (cluster labels of the n events).
    labels : array_like (S, n)
        Posterior draws of the labels, one row per draw.

    Returns
    -------
    float
        The Monte Carlo expected VI over the S draws.

    Examples
    --------
    >>> from hphawkes_py.mixture import vi_loss
    >>> draws = [[0, 0, 1, 1], [0, 0, 0, 1]]
    >>> round(vi_loss([0, 0, 1, 1], draws), 6)   # (0 + 1.188722) / 2
    0.594361
    """
    Z = labels_2d(labels)
    c = _partition_1d(partition, Z.shape[1])
    return _expected(_g_vi, c, Z) / Z.shape[1]


def binder_loss(partition, labels=None, *, psm=None) -> float:
    """Posterior expected Binder loss of a partition: ``sum_{i<j} |1(c_i = c_j) - p_ij|``.

    Parameters
    ----------
    partition : array_like (n,)
        The partition c.
    labels : array_like (S, n), optional
        Posterior draws of the labels (the expectation is their average, exactly).
    psm : array_like (n, n), optional
        Posterior similarity matrix instead of the draws (:func:`posterior_similarity`).

    Returns
    -------
    float
        Expected number of misclassified pairs.

    Examples
    --------
    >>> from hphawkes_py.mixture import binder_loss
    >>> draws = [[0, 0, 1, 1], [0, 0, 0, 1]]
    >>> binder_loss([0, 0, 1, 1], draws)   # (0 + 3) / 2
    1.5
    """
    if (labels is None) == (psm is None):
        raise ValueError("binder_loss needs exactly one of labels (draws x n) and psm (n x n)")
    if labels is not None:
        Z = labels_2d(labels)
        c = _partition_1d(partition, Z.shape[1])
        return _expected(_g_binder, c, Z)
    P = as_float_array(psm, "psm", ndim=2)
    n = P.shape[0]
    if P.shape != (n, n):
        raise ValueError(f"psm must be square (n x n), got shape {P.shape}")
    if P.min() < 0 or P.max() > 1:
        raise ValueError(f"psm must hold probabilities in [0, 1], got values in [{P.min()}, {P.max()}]")
    c = _partition_1d(partition, n)
    same = (c[:, None] == c[None, :]).astype(np.float64)
    iu = np.triu_indices(n, 1)
    return float(np.abs(same[iu] - P[iu]).sum())


# ----------------------------------------------------------------------------- similarity
def _psm_loops(Z, order, starts, out):
    S = Z.shape[0]
    for s in range(S):
        for g in range(starts.shape[1] - 1):
            lo, hi = starts[s, g], starts[s, g + 1]
            for a in range(lo, hi):
                i = order[s, a]
                for b in range(lo, hi):
                    out[i, order[s, b]] += 1.0


@functools.lru_cache(maxsize=1)
def _psm_kernel():
    # compiled on first use (cached on disk): importing the mixture loads no Numba kernels
    from numba import njit

    return njit(cache=True, nogil=True)(_psm_loops)


def posterior_similarity(labels, index=None, *, backend: str = "auto", block_rows: int = 4096) -> np.ndarray:
    """Posterior similarity matrix: the fraction of draws in which events i and j share a cluster.

    Parameters
    ----------
    labels : array_like (S, n)
        Posterior draws of the labels.
    index : array_like of int, optional
        Events to keep (a subsample, e.g. ``rng.choice(n, 2000, replace=False)``): the matrix
        is m x m for the m events given, in that order.  The matrix has n^2 entries (8 n^2
        bytes), so large n needs a subsample (or :func:`posterior_similarity_blocks`, which
        yields the matrix a block of rows at a time).
    backend : {"auto", "cpu", "gpu", "emulator"}, default "auto"
        Where the pairs are counted: ``"cpu"`` (Numba, cost below), or a CUDA device
        (``"auto"`` picks a usable GPU; ``"emulator"`` runs the CUDA kernel on the CPU), one
        thread per pair, ``block_rows`` rows per launch.  The counts are integers: every
        backend gives the same matrix bit for bit.
    block_rows : int, default 4096
        Rows of the matrix per kernel launch on a CUDA device (device memory 4 x block_rows x m bytes).

    Returns
    -------
    ndarray (m, m)
        ``p_ij`` (unitless, 1 on the diagonal, symmetric).

    Notes
    -----
    Each draw adds 1 to the pairs inside each of its clusters (events grouped by label), so
    the cost is ``sum_s sum_l (n^s_l)^2``, at most S m^2 and much less with many clusters.

    Examples
    --------
    >>> from hphawkes_py.mixture import posterior_similarity
    >>> posterior_similarity([[0, 0, 1], [0, 1, 1]])
    array([[1. , 0.5, 0. ],
           [0.5, 1. , 0.5],
           [0. , 0.5, 1. ]])
    """
    from .similarity import check_similarity_backend, iter_blocks, similarity_labels

    Z = similarity_labels(labels, index)
    S, m = Z.shape
    block_rows = check_int(block_rows, "block_rows", minimum=1)
    resolved = check_similarity_backend(backend)
    if m > 50_000:
        raise ValueError(f"the similarity matrix of m = {m} events would take {8 * m * m / 2**30:.0f} GiB; "
                         f"pass index= with a subsample of at most 50000 events, or read it in row blocks "
                         f"with posterior_similarity_blocks")
    if resolved != "cpu":
        out = np.empty((m, m))
        for r0, counts in iter_blocks(Z, block_rows, resolved):
            out[r0:r0 + counts.shape[0]] = counts
        out /= S
        return out
    order = np.argsort(Z, axis=1, kind="stable").astype(np.int64)
    L = int(Z.max()) + 1
    starts = np.zeros((S, L + 1), dtype=np.int64)
    for s in range(S):
        starts[s, 1:] = np.cumsum(np.bincount(Z[s], minlength=L))
    out = np.zeros((m, m))
    _psm_kernel()(Z, order, starts, out)
    out /= S
    return out


# ----------------------------------------------------------------------------- SALSO search
def _salso_loops(Z, L, kmax, dg, g, seed, n_zealous, max_sweeps, z_out):
    """One SALSO run (numba): sequential allocation, sweetening, zealous updates. Returns the loss
    up to a constant of the draws.

    ``g[x]`` is the loss term of a count x (x(x-1)/2 or x log2 x) and ``dg[x] = g[x+1] - g[x]``,
    tabulated for x = 0..n; ``m[s, l, k]`` counts the events of cluster k with label l in draw s.
    """
    S, n = Z.shape
    np.random.seed(seed)
    z = -np.ones(n, dtype=np.int64)
    nk = np.zeros(kmax, dtype=np.int64)
    m = np.zeros((S, L, kmax), dtype=np.int64)
    acc = np.zeros(kmax)

    def place(i):
        # the cluster (or a new one, cost 0) of least expected loss for the unplaced event i
        acc[:] = 0.0
        for s in range(S):
            row = m[s, Z[s, i]]
            for k in range(kmax):
                acc[k] += dg[row[k]]
        best, bestc, free = -1, 0.0, -1
        for k in range(kmax):
            if nk[k] == 0:
                if free < 0:
                    free = k
                continue
            c = dg[nk[k]] - 2.0 * acc[k] / S
            if best < 0 or c < bestc:
                best, bestc = k, c
        if free >= 0 and (best < 0 or bestc > 0.0):
            best = free
        return best

    def add(i, k):
        z[i] = k
        nk[k] += 1
        for s in range(S):
            m[s, Z[s, i], k] += 1

    def remove(i):
        k = z[i]
        nk[k] -= 1
        for s in range(S):
            m[s, Z[s, i], k] -= 1
        z[i] = -1

    def loss():
        tot = 0.0
        for k in range(kmax):
            tot += g[nk[k]]
        inner = 0.0
        for s in range(S):
            for l in range(L):
                for k in range(kmax):
                    inner += g[m[s, l, k]]
        return tot - 2.0 * inner / S

    def sweeten():
        for _ in range(max_sweeps):
            moved = False
            for i in np.random.permutation(n):
                old = z[i]
                remove(i)
                k = place(i)
                add(i, k)
                if k != old:
                    moved = True
            if not moved:
                break

    for i in np.random.permutation(n):
        add(i, place(i))
    sweeten()
    best_loss = loss()
    accepted = False
    for _ in range(n_zealous):
        occupied = np.flatnonzero(nk > 0)
        if occupied.size < 2:
            break
        victim = occupied[np.random.randint(occupied.size)]
        saved_z, saved_nk, saved_m = z.copy(), nk.copy(), m.copy()
        members = np.flatnonzero(z == victim)
        for i in members:
            remove(i)
        for i in np.random.permutation(members):
            add(i, place(i))
        new = loss()
        if new < best_loss - 1e-12 * max(1.0, abs(best_loss)):
            best_loss = new
            accepted = True
        else:
            z[:] = saved_z
            nk[:] = saved_nk
            m[:, :, :] = saved_m
    if accepted:
        # leave a partition that no single move improves
        sweeten()
        best_loss = loss()
    z_out[:] = z
    return best_loss


@functools.lru_cache(maxsize=1)
def _salso_kernel():
    from numba import njit

    return njit(cache=True, nogil=True)(_salso_loops)


@dataclass(frozen=True)
class PointPartition:
    """A point estimate of the partition and its posterior expected loss (see :func:`point_partition`).

    Parameters
    ----------
    labels : ndarray (n,)
        Cluster of each event, numbered 0, 1, ... by decreasing size.
    loss : str
        ``"VI"`` or ``"binder"``.
    expected_loss : float
        Posterior expected loss of ``labels`` over the draws (bits for VI, pairs for Binder).
    n_clusters : int
        Number of clusters.

    Examples
    --------
    >>> from hphawkes_py.mixture import point_partition
    >>> est = point_partition([[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 0, 1]], seed=0)
    >>> est.labels.tolist(), est.n_clusters
    ([0, 0, 1, 1], 2)
    """

    labels: np.ndarray
    loss: str
    expected_loss: float
    n_clusters: int


def point_partition(labels, loss: str = "VI", *, n_runs: int = 16, max_clusters=None, n_zealous: int = 10,
                    max_sweeps: int = 100, seed=None, threads=None) -> PointPartition:
    """The partition minimising the posterior expected Binder or VI loss (SALSO search).

    Parameters
    ----------
    labels : array_like (S, n)
        Posterior draws of the labels (e.g. :func:`sample_label_draws`); label values need
        not be consecutive, only which events share a label in a draw matters.
    loss : {"VI", "binder"}, default "VI"
        Variation of information (bits, base-2 logs) or Binder's loss with equal costs.
    n_runs : int, default 16
        Independent runs of the search (random orders); the best is returned.
    max_clusters : int, optional
        Most clusters the estimate may have.  Default: the largest number of clusters in any
        draw (SALSO's default); a larger value is allowed.
    n_zealous : int, default 10
        Zealous updates tried per run (a cluster dissolved and its events reallocated).
    max_sweeps : int, default 100
        Most sweetening sweeps in a row (each stops early when no event moves).
    seed : int or numpy.random.Generator, optional
        Random state of the search orders.
    threads : int, optional
        Runs searched at once, one per thread (default: all cores); the result does not depend
        on it.

    Returns
    -------
    PointPartition
        ``labels`` (n,), numbered by decreasing cluster size, ``expected_loss``,
        ``n_clusters``, ``loss``.

    Notes
    -----
    SALSO (Dahl, Johnson & Müller 2022, *J. Comput. Graph. Stat.* 31:1189), searching the
    exact Monte Carlo expected loss over the draws (no similarity-matrix approximation): cost
    O(n K S) per sweep for K clusters and S draws; memory S x L x K counts for L labels per draw.
    A zealous update is kept when it lowers the expected loss, and the run ends with sweeps
    until no single event moves.  A greedy search: it finds a local minimum
    that no single move or cluster reallocation improves; more runs make the global one more
    likely.

    Examples
    --------
    Draws that mostly split six events in two groups of three:

    >>> from hphawkes_py.mixture import point_partition
    >>> draws = [[0, 0, 0, 1, 1, 1]] * 6 + [[0, 0, 1, 1, 1, 1]] * 3 + [[0, 1, 2, 3, 4, 5]]
    >>> est = point_partition(draws, loss="VI", seed=1)
    >>> est.labels.tolist(), round(est.expected_loss, 4)
    ([0, 0, 0, 1, 1, 1], 0.4585)
    """
    Z = labels_2d(labels)
    S, n = Z.shape
    check_in(loss, "loss", LOSSES)
    n_runs = check_int(n_runs, "n_runs", minimum=1)
    n_zealous = check_int(n_zealous, "n_zealous", minimum=0)
    max_sweeps = check_int(max_sweeps, "max_sweeps", minimum=1)
    L = int(Z.max()) + 1
    kmax = L if max_clusters is None else check_int(max_clusters, "max_clusters", minimum=1)
    kmax = min(kmax, n)
    if S * kmax * L > 25_000_000:
        raise ValueError(f"the search keeps S x max_clusters x L = {S} x {kmax} x {L} counts; "
                         f"use fewer draws or a smaller max_clusters")
    threads = check_threads(threads)
    rng = check_random_state(seed)
    seeds = rng.integers(0, 2**31 - 1, size=n_runs)
    kernel = _salso_kernel()
    g = _g_vi if loss == "VI" else _g_binder
    g_tab = g(np.arange(n + 2))
    dg_tab = np.diff(g_tab)

    def run(r):
        # each run seeds Numba's generator of the thread it runs on: results do not depend on threads
        z = np.empty(n, dtype=np.int64)
        return kernel(Z, L, kmax, dg_tab, g_tab, int(seeds[r]), n_zealous, max_sweeps, z), z

    workers = min(n_runs, threads or os.cpu_count() or 1)
    if workers > 1:
        with ThreadPoolExecutor(workers) as pool:  # the kernel releases the GIL
            results = list(pool.map(run, range(n_runs)))
    else:
        results = [run(r) for r in range(n_runs)]
    best = min(range(n_runs), key=lambda r: (results[r][0], r))
    out = _by_size(results[best][1])
    expected = _expected(g, out, Z) / (n if loss == "VI" else 1)
    return PointPartition(labels=out, loss=loss, expected_loss=expected, n_clusters=int(out.max()) + 1)


def _by_size(z):
    """Relabel clusters 0, 1, ... by decreasing size (ties: first event first)."""
    _, first, inv, counts = np.unique(z, return_index=True, return_inverse=True, return_counts=True)
    rank = np.lexsort((first, -counts))
    new = np.empty_like(rank)
    new[rank] = np.arange(rank.size)
    return new[inv].astype(np.int64)


# ----------------------------------------------------------------------------- draws of a fit
def sample_label_draws(model, X, n_draws=None, *, group=None, seed=None) -> np.ndarray:
    """Posterior draws of the labels of the rows of X from a Gibbs fit: z_s ~ p(z | theta_s, x).

    Parameters
    ----------
    model : TDPGaussianMixture or HDPGaussianMixture
        Fitted with ``method="gibbs"`` (its stored draws ``draws_`` are used; a BEM fit has
        none and is refused).
    X : array_like (n, p), or list of arrays
        Events in the units of the fit (a DataFrame must have the fit's columns, in order).  For
        the HDP mixture: one array per sample, in the order of the fit (their events are stacked,
        each with its sample's weights), or one array with ``group``.
    n_draws : int, optional
        Use this many stored draws, evenly spaced (default: all).
    group : int, optional
        HDP mixture only: the sample (0-based, as in the fit) whose weights label the rows of X.
    seed : int or numpy.random.Generator, optional
        Random state of the label draws.

    Returns
    -------
    ndarray (n_draws, n) int64
        Component of each event in each draw, the input of :func:`posterior_similarity` and
        :func:`point_partition`.

    Notes
    -----
    Given a stored draw theta_s = (weights, means, covariances), the labels are independent
    with ``P(z_i = j) ~ w_sj N(x_i | mu_sj, Sigma_sj)`` -- the sampler's own label step -- so
    (theta_s, z_s) is a draw from the joint posterior and z_s one from the posterior of the
    partition (the HDP mixture's components are shared, so the labels of all samples form one
    partition of all their events).  Cost O(n_draws n k p^2).

    Examples
    --------
    >>> from hphawkes_py.mixture import TDPGaussianMixture, sample_label_draws, point_partition
    >>> X = hp.datasets.load_faithful()[["eruptions", "waiting"]].to_numpy()
    >>> fit = TDPGaussianMixture(8, n_iter=40, burn_in=20, seed=0, progress=False).fit(X)
    >>> Z = sample_label_draws(fit, X, n_draws=20, seed=0)
    >>> Z.shape
    (20, 272)
    >>> est = point_partition(Z, seed=0)   # the two kinds of eruption and two outlying ones
    >>> np.bincount(est.labels).tolist()
    [174, 96, 2]
    """
    from .prediction import PredictionMixture

    if not hasattr(model, "draws_") or not hasattr(model, "center_"):
        raise ValueError("sample_label_draws needs a fitted mixture: call fit first")
    draws = model.draws_
    if draws is None:
        raise ValueError("sample_label_draws needs the posterior draws of a Gibbs fit (method='gibbs'); this "
                         "model has none (BEM): use its cluster_labels_ or predict_cluster(X)")
    Mu, Sg = draws["means"], draws["covariances"]
    S_all, k, p = Mu.shape
    hdp = "group_weights" in draws
    W = draws["group_weights"] if hdp else draws["weights"][:, None, :]  # (S, J, k)
    if not hdp and group is not None:
        raise ValueError(f"group applies to a mixture fitted across samples; this {type(model).__name__} has one")
    if hdp and isinstance(X, (list, tuple)):
        if group is not None:
            raise ValueError("give either a list of samples or one array with group, not both")
        if len(X) != W.shape[1]:
            raise ValueError(f"X must hold one array per sample of the fit ({W.shape[1]}), got {len(X)}")
        parts = [_events(x, model, p, f"X[{j}]") for j, x in enumerate(X)]
        groups = np.repeat(np.arange(len(parts)), [len(x) for x in parts])
        Xa = np.vstack(parts)
    else:
        if hdp and group is None:
            raise ValueError(f"X of a mixture fitted across {W.shape[1]} samples needs group= (its sample) or "
                             f"a list of one array per sample")
        j = 0 if group is None else check_int(group, "group", minimum=0, maximum=W.shape[1] - 1)
        Xa = _events(X, model, p, "X")
        groups = np.full(Xa.shape[0], j)
    n_draws = S_all if n_draws is None else check_int(n_draws, "n_draws", minimum=1, maximum=S_all)
    rng = check_random_state(seed)
    use = np.unique(np.linspace(0, S_all - 1, n_draws).round().astype(np.int64))
    center, scale = np.asarray(model.center_), np.asarray(model.scale_)
    # standardised units, as the fit: the label probabilities do not change under the affine map
    Xs = (Xa - center) / scale
    out = np.empty((use.size, Xa.shape[0]), dtype=np.int64)
    for r, s in enumerate(use):
        for j in np.unique(groups):
            rows = np.flatnonzero(groups == j)
            with np.errstate(divide="ignore"):
                log_w = np.log(W[s, j])
            mix = PredictionMixture(log_w, (Mu[s] - center) / scale, Sg[s] / np.outer(scale, scale), k)
            cum = np.cumsum(mix.proba(Xs[rows]), axis=1)
            u = rng.random(rows.size) * cum[:, -1]
            out[r, rows] = np.minimum((cum < u[:, None]).sum(1), k - 1)
    return out


def _events(X, model, p, name):
    fitted = getattr(model, "feature_names_in_", None)
    if isinstance(X, pd.DataFrame) and fitted is not None and list(X.columns) != list(fitted):
        raise ValueError(f"{name} has columns {list(X.columns)} but the model was fitted on {list(fitted)}")
    Xa = as_float_array(X, name, ndim=2)
    if Xa.shape[1] != p:
        raise ValueError(f"{name} must have {p} columns (as in fit), got {Xa.shape[1]}")
    return Xa
