"""Truncated Dirichlet-process Gaussian mixture: blocked Gibbs sampler and Bayesian EM.

The algorithm is written once here against an engine (``cpu.CpuEngine`` or
``gpu.GpuEngine``, made by :func:`.engine.make_engine` on the backend resolved at ``fit``)
that owns the hot steps (configuration probabilities for all n x k (point, component)
pairs, label draws, sufficient statistics).  Everything else (conjugate updates, stick
breaking, alpha, relabelling) works on k-sized arrays in NumPy; prediction, clusters and
diagnostics are host-side (:mod:`.posterior`).
"""
from __future__ import annotations

import math
import numbers

import numpy as np

import os
import warnings
from dataclasses import dataclass

from .._backend import resolve_backend, threads_context
from .._parallel import run_replicates, spawn_seeds
from .._progress import progress_bar
from .._validate import as_float_array, check_bool, check_in, check_int, check_positive, check_random_state, check_seed, describe
from . import _math as M
from .engine import make_engine
from .posterior import PredictionMixture, kmeans_plusplus, label_invariant_diagnostics, modal_clusters

__all__ = ["TDPGaussianMixture", "relabel_draws", "make_engine", "gibbs_sweep", "Priors"]


@dataclass(frozen=True)
class Priors:
    """Hyper-parameters of the TDP mixture, standardised units (see :class:`TDPGaussianMixture`)."""

    m0: np.ndarray
    gamma0: float
    nu0: float
    Phi0: np.ndarray
    e0: float
    f0: float


@dataclass
class GibbsState:
    """State of the blocked Gibbs sampler (standardised units)."""

    mu: np.ndarray  # (k, p)
    Sigma: np.ndarray  # (k, p, p)
    log_w: np.ndarray  # (k,)
    alpha: float
    N: np.ndarray | None = None  # (k,) counts of the last label draw
    loglik: float = float("nan")  # log-likelihood (standardised units) at the label draw


def gibbs_sweep(engine, rng: np.random.Generator, state: GibbsState, priors: Priors) -> GibbsState:
    """One sweep of the blocked Gibbs sampler (Ishwaran & James 2001; Suchard et al. 2010):

    (a) z_i | x, pi, mu, Sigma on the engine (uniforms drawn here, so every engine draws the
    same labels); (b) (mu_j, Sigma_j) | z, x by the conjugate updates; (c) sticks v_j | z, alpha;
    (d) alpha | v.  Returns the new state (the counts N and the log-likelihood of step (a)).
    """
    k = state.mu.shape[0]
    L, U, logdet = M.chol_factors(state.Sigma)
    engine.set_components(state.log_w, state.mu, U, logdet)
    engine.sample_labels(rng.random(engine.n), return_labels=False)
    loglik = engine.loglik
    N, S1, S2 = M.unpack_stats(engine.label_stats(), engine.p)
    v, log_w = M.gibbs_sticks(rng, N, state.alpha)
    alpha = M.gibbs_alpha(rng, v, k, priors.e0, priors.f0) if k > 1 else state.alpha
    mu, Sigma = M.gibbs_mu_sigma(rng, N, S1, S2, L, priors.m0, priors.gamma0, priors.nu0, priors.Phi0)
    return GibbsState(mu, Sigma, log_w, alpha, N, loglik)


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


def _gibbs_chain(chain, seed, job):
    """Run one Gibbs chain (module level: picklable for process pools and Dask).

    Returns the stored draws (standardised units), the per-sweep log-likelihood, the number of
    occupied components and alpha at the stored sweeps, and the last labels.
    """
    rng = np.random.default_rng(seed)
    Xs, k, priors = job["Xs"], job["k"], job["priors"]
    burn_in, n_iter, thin = job["burn_in"], job["n_iter"], job["thin"]
    total = burn_in + n_iter
    S = n_iter // thin
    n, p = Xs.shape
    out = {
        "weights": np.empty((S, k)),
        "means": np.empty((S, k, p)),
        "covariances": np.empty((S, k, p, p)),
        "alpha": np.empty(S),
        "loglik_stored": np.empty(S),
        "occupied": np.empty(S),
        "loglik": np.empty(total),
    }
    with threads_context(job["threads"] if job["backend"] == "cpu" else None):
        engine = make_engine(Xs, backend=job["backend"], dtype=job["dtype"], chunk_size=job["chunk_size"],
                             threads=job["threads"])
        try:
            state = initial_state(Xs, k, rng, job["init"])
            s = 0
            desc = "TDP Gibbs" if job["chains"] == 1 else f"TDP Gibbs chain {chain + 1}"
            with progress_bar(total, desc, job["progress"]) as bar:
                for it in range(total):
                    state = gibbs_sweep(engine, rng, state, priors)
                    out["loglik"][it] = state.loglik
                    j = it - burn_in
                    if j >= 0 and (j + 1) % thin == 0 and s < S:
                        out["weights"][s] = np.exp(state.log_w)
                        out["means"][s] = state.mu
                        out["covariances"][s] = state.Sigma
                        out["alpha"][s] = state.alpha
                        out["loglik_stored"][s] = state.loglik
                        out["occupied"][s] = np.count_nonzero(state.N)
                        s += 1
                    bar.update(1)
            out["labels"] = np.asarray(engine.z, dtype=np.int64)
        finally:
            engine.close()
    return out


#: BEM prunes once the relative change of the log posterior per iteration is below this
PRUNE_SETTLED = 1e-5


def _physical_memory() -> float:
    try:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return float("inf")


def relabel_draws(weights, means, covariances, reference=None):
    """Undo label switching: permute each draw's components to best match a reference draw.

    Parameters
    ----------
    weights : ndarray (S, k)
        Mixture weights of the S posterior draws (unitless, each row sums to one).
    means : ndarray (S, k, p)
        Component means of the draws (any units; the cost is computed on ``means`` as given,
        so pass standardised means when columns have very different scales).
    covariances : ndarray (S, k, p, p)
        Component covariances of the draws (units of ``means`` squared); checked for shape,
        not used by the cost.
    reference : int, optional
        Index of the reference draw (default: the last draw; negative indices count from
        the end).

    Returns
    -------
    perms : ndarray (S, k) int
        ``perms[s, i]`` is the component of draw s that is labelled i after relabelling.

    Notes
    -----
    For every draw s, solves the assignment problem (``scipy.optimize.linear_sum_assignment``)
    with cost ``C[i, j] = (w_ref_i + w_sj) * ||mu_ref_i - mu_sj||^2``: heavy components
    are matched by location first, and empty components (weight ~ 0) are matched
    arbitrarily, which does not change posterior means of weights.  dpmix relabels by a
    cost built from classifications of all n points to the initial values; the
    mean/weight cost used here needs no per-draw labels (O(k^2 p) per draw).

    Examples
    --------
    Three draws of a two-component mixture in one dimension; the middle draw has its labels
    switched:

    >>> from hphawkes_py.mixture import relabel_draws
    >>> weights = np.array([[0.3, 0.7], [0.7, 0.3], [0.3, 0.7]])
    >>> means = np.array([[[0.0], [5.0]], [[5.0], [0.0]], [[0.1], [4.9]]])
    >>> covariances = np.ones((3, 2, 1, 1))
    >>> perms = relabel_draws(weights, means, covariances)
    >>> perms.tolist()
    [[0, 1], [1, 0], [0, 1]]
    >>> rows = np.arange(3)[:, None]
    >>> print(means[rows, perms][:, :, 0])
    [[0.  5. ]
     [0.  5. ]
     [0.1 4.9]]
    """
    from scipy.optimize import linear_sum_assignment

    weights = as_float_array(weights, "weights", ndim=2)
    S, k = weights.shape
    means = as_float_array(means, "means", ndim=3)
    if means.shape[:2] != (S, k):
        raise ValueError(f"means must have shape ({S}, {k}, p) to match weights, got {means.shape}")
    p = means.shape[2]
    as_float_array(covariances, "covariances", shape=(S, k, p, p))
    r = S - 1 if reference is None else check_int(reference, "reference", minimum=-S, maximum=S - 1) % S
    wr, mr = weights[r], means[r]
    perms = np.empty((S, k), dtype=np.int64)
    sq_r = (mr * mr).sum(1)
    for s in range(S):
        ms = means[s]
        d2 = sq_r[:, None] + (ms * ms).sum(1)[None, :] - 2.0 * mr @ ms.T
        cost = (wr[:, None] + weights[s][None, :]) * np.maximum(d2, 0.0)
        _, cols = linear_sum_assignment(cost)
        perms[s] = cols
    return perms


class TDPGaussianMixture:
    r"""Truncated Dirichlet-process mixture of multivariate normals (Suchard et al. 2010).

    Model (the paper's Appendix A; defaults of the authors' dpmix ``DPNormalMixture``)::

        x_i | z_i = j       ~ N(mu_j, Sigma_j)
        P(z_i = j)          = pi_j,  pi_1 = v_1, pi_j = v_j prod_{r<j} (1 - v_r), pi_k = 1 - sum of the rest
        v_j                 ~ Be(1, alpha)
        mu_j | Sigma_j      ~ N(m0, gamma0 Sigma_j)
        Sigma_j             ~ IW(nu0 + 2, nu0 Phi)  (West's notation) = inverse Wishart with
                              nu0 + p + 1 degrees of freedom and scale Phi0 = nu0 Phi
        alpha               ~ Gamma(shape e0, rate f0)

    The model is fitted to the data STANDARDISED per column (x - column mean) / column sd
    (sample sd, ddof=1), as dpmix does; all prior hyper-parameters below are on that
    standardised scale.  Fitted parameters and densities are reported in ORIGINAL units.

    Parameters
    ----------
    n_components : int, default 256
        Truncation level k (number of mixture components).
    method : {"gibbs", "bem"}, default "gibbs"
        ``"gibbs"``: blocked Gibbs sampler (Ishwaran & James 2001) storing posterior draws;
        ``"bem"``: Bayesian EM to a posterior mode (an ECM algorithm: every update is the
        mode of a full conditional given the expected labels, so the log posterior never
        decreases).
    n_iter : int, default 1000
        Gibbs: sweeps after burn-in (every ``thin``-th is stored).  BEM: maximum number
        of iterations.
    burn_in : int, default 100
        Gibbs sweeps discarded before ``n_iter`` (ignored by BEM).
    thin : int, default 1
        Keep every ``thin``-th sweep: ``n_iter // thin`` stored draws.
    alpha_prior : (e0, f0), default (10.0, 1.0)
        Shape and RATE of the gamma prior of the DP concentration alpha (prior mean
        e0/f0 = 10).  Scale-free.
    m0 : float or array (p,), optional
        Prior mean of the component means, standardised units.  Default 0 (the data mean).
    gamma0 : float, default 10.0
        mu_j | Sigma_j ~ N(m0, gamma0 Sigma_j): the prior spread of the means relative to the
        component covariance (standardised units).  Must be > 0.
    nu0 : float, optional
        Prior degrees-of-freedom parameter nu (the inverse-Wishart has nu0 + p + 1 standard
        degrees of freedom, so E[Sigma_j] = Phi0 / nu0).  Default 1 (dpmix).  Must be > 0
        (so the inverse-Wishart has a mean).
    Phi0 : array (p, p) or (k, p, p), optional
        Inverse-Wishart scale matrix ("nu Phi" of the paper), standardised units,
        symmetric positive definite.  Default ``nu0 * I`` (dpmix), i.e. the prior mean of
        each Sigma_j is the identity = the covariance of the standardised data.
    relabel : bool, default True
        Gibbs only: permute the components of every stored draw to match the last draw
        (:func:`relabel_draws`) before computing the posterior means ``weights_``,
        ``means_``, ``covariances_``.
    init : {"kmeans++", "random"} or array (k, p), default "kmeans++"
        Initial component means: k-means++ seeding and 5 Lloyd steps on the standardised data
        (on a random subsample of 10,000 rows when n is larger), k random data rows, or the
        given means in ORIGINAL units.  Initial Sigma_j = the standardised data's covariance
        (identity), equal weights, alpha = 1.
    chains : int, default 1
        Gibbs: independent chains (seeds spawned from ``seed``; run on ``executor``).  Their
        relabelled draws are pooled; ``summary()`` reports R-hat and ESS of label-invariant
        quantities (log-likelihood, occupied components, alpha) across them.
    prune : float, default 0.0
        BEM: once the fit has settled (relative change of the log posterior < 1e-5), components
        whose weight is below ``prune`` are removed one at a time, lightest first (weight 0;
        the stick-breaking prior and alpha then run over the ``n_components_kept_`` remaining
        components) and the iterations go on; the fit converges only with every kept weight >= ``prune``.  0 keeps all k.
    merge_tol : float, default 0.05
        Modal merging: modes of the fitted density closer than this (max-norm, standardised
        units) are one cluster (see ``cluster_labels_``).
    min_cluster_weight : float, default 0.01
        Modal merging: a mode whose components weigh less than this in total (a ripple of the
        density made by a rarely used, broad component) is not a cluster; its components join
        the cluster most responsible for that mode.
    max_predictive_draws : int, default 200
        The posterior predictive density averages over at most this many stored draws, evenly
        spaced (all of them when fewer are stored): a Monte Carlo average whose cost is
        O(n x draws x k) per prediction.
    executor : concurrent.futures.Executor or dask.distributed.Client, optional
        Where the chains run (default: one after the other in this process).
    tol : float, default 1e-7
        BEM stops when the relative change of the log posterior between iterations,
        ``|lp_t - lp_{t-1}| / |lp_{t-1}|``, is at most ``tol`` (or after ``n_iter`` iterations).
    seed : int or numpy.random.Generator, optional
        Random state (initial values, uniforms of the label draws, conjugate draws).
    progress : bool, default True
        Show a tqdm progress bar on stderr.
    backend : {"auto", "cpu", "gpu", "emulator"}, default "auto"
        Engine of the hot step (n x k densities and label draws).
    threads : int, optional
        Numba threads for the CPU engine (default: Numba's setting).
    dtype : numpy.float64 or numpy.float32, default float64
        Precision of the hot step on either engine (the n x k log densities: GEMM and exp on the
        CPU, the density kernels on the GPU).  On the CPU, float32 halves the GEMM and its Gibbs
        labels are *certified* equal to the float64 draw's (each row's float32 draw carries a
        proven bound on its rounding; rows whose uniform falls within that bound of a
        cumulative-probability boundary, ~10 % on a fitted n = 1e5, k = 256 chain, are redrawn
        from float64 densities), so the chain is the float64 chain; the per-sweep log-likelihood
        is then within ``engine.last_loglik_error_bound`` of the float64 value (measured: ~1e-3
        nats in a total of -7.6e5).  On the GPU and in Bayesian EM float32 is plain single
        precision (log densities accurate to ~1e-4 nats on standardised data).  Sums, the
        sufficient statistics and the conjugate updates are float64.
    chunk_size : int, optional
        Points per chunk of the hot step (memory O(chunk_size x k)); default 256 on the
        CPU (a chunk's densities stay in the core's L2 cache between the product and the draw),
        65536 on the GPU.

    Attributes
    ----------
    weights_ : ndarray (k,)
        Mixture weights (posterior mean for Gibbs, mode for BEM).
    means_ : ndarray (k, p)
        Component means, original units.
    covariances_ : ndarray (k, p, p)
        Component covariance matrices, original units squared.
    alpha_ : float
        DP concentration (posterior mean for Gibbs, mode for BEM).
    n_components_kept_ : int
        BEM: components left after pruning (k without ``prune``); Gibbs: k.
    cluster_labels_ : ndarray (n,)
        Cluster of each training row: components are merged into clusters by the modes of the
        fitted (plug-in) density (Chan et al. 2008); clusters numbered by decreasing weight.
    component_clusters_ : ndarray (k,)
        Cluster of each component (-1 for components of weight 0).
    n_clusters_ : int
        Number of clusters (modes of the fitted density).
    cluster_weights_, cluster_means_ : ndarray
        Total weight and moment-matched mean (original units) of each cluster.
    feature_names_in_ : ndarray of str
        Column names of a DataFrame given to ``fit`` (as scikit-learn); prediction on a
        DataFrame requires the same names in the same order.
    draws_ : dict or None
        Gibbs: ``weights`` (S, k), ``means`` (S, k, p), ``covariances`` (S, k, p, p)
        (original units, relabelled if ``relabel``), ``alpha`` (S,).  With several chains,
        the chains' draws one after the other (S = chains x n_iter // thin).  None for BEM.
    chain_traces_ : dict or None
        Gibbs: per-chain traces (chains, n_iter // thin) of ``loglik``, ``occupied`` (number
        of components holding at least one point) and ``alpha``, for diagnostics.
    labels_ : ndarray (n,)
        Gibbs: the labels of the last sweep; BEM: the most probable component.
    loglik_trace_ : ndarray
        Log likelihood (original units) at every sweep / iteration; (chains, sweeps) with
        several chains.
    log_posterior_trace_ : ndarray
        BEM: log posterior (standardised units, up to the Jacobian constant) per iteration.
    n_iter_ : int
        Iterations run (BEM may stop early).
    converged_ : bool
        BEM: whether the tolerance was met.
    center_, scale_ : ndarray (p,)
        Column means and sds used for the standardisation.
    backend_ : str
        The backend that ran ("cpu", "gpu" or "emulator").

    Notes
    -----
    ``score_samples``, ``predict_proba`` and ``predict`` use the posterior predictive density
    ``(1/S) sum_s f(x | theta_s)`` over the stored Gibbs draws by default
    (``estimate="predictive"``); ``estimate="plugin"`` uses the mixture of the point estimates
    ``weights_``, ``means_``, ``covariances_`` (BEM has only the plug-in).

    Examples
    --------
    Old Faithful's eruptions (272 rows: duration in minutes, waiting time in minutes), Bayesian
    EM to a posterior mode, then the clusters found by modal merging:

    >>> X = hp.datasets.load_faithful()
    >>> model = hp.mixture.TDPGaussianMixture(8, method="bem", n_iter=200, seed=0, progress=False)
    >>> model = model.fit(X)
    >>> model.n_clusters_
    2
    >>> print(np.round(model.cluster_weights_, 1))
    [0.7 0.3]
    >>> print(np.round(model.cluster_means_))
    [[ 4. 80.]
     [ 2. 55.]]
    >>> print(round(model.score(X), 2))
    -4.11
    >>> model.predict_cluster(X[:3]).tolist()
    [0, 1, 0]

    The blocked Gibbs sampler stores its posterior draws (original units):

    >>> gibbs = hp.mixture.TDPGaussianMixture(8, n_iter=50, burn_in=20, seed=0, progress=False).fit(X)
    >>> gibbs.draws_["means"].shape
    (50, 8, 2)
    """

    def __init__(
        self,
        n_components=256,
        *,
        method="gibbs",
        n_iter=1000,
        burn_in=100,
        thin=1,
        alpha_prior=(10.0, 1.0),
        m0=None,
        gamma0=10.0,
        nu0=None,
        Phi0=None,
        relabel=True,
        init="kmeans++",
        chains=1,
        prune=0.0,
        merge_tol=0.05,
        min_cluster_weight=0.01,
        max_predictive_draws=200,
        tol=1e-7,
        seed=None,
        progress=True,
        backend="auto",
        threads=None,
        executor=None,
        dtype=np.float64,
        chunk_size=None,
    ):
        self.n_components = check_int(n_components, "n_components", minimum=1)
        self.method = check_in(method, "method", ("gibbs", "bem"))
        self.n_iter = check_int(n_iter, "n_iter", minimum=1)
        self.burn_in = check_int(burn_in, "burn_in", minimum=0)
        self.thin = check_int(thin, "thin", minimum=1)
        if self.method == "gibbs" and self.thin > self.n_iter:
            raise ValueError(f"thin={self.thin} exceeds n_iter={self.n_iter}: no draw would be stored")
        if not isinstance(alpha_prior, (tuple, list, np.ndarray)) or len(alpha_prior) != 2:
            raise ValueError(f"alpha_prior must be a pair (e0, f0) of positive numbers, got {describe(alpha_prior)}")
        self.alpha_prior = (
            check_positive(alpha_prior[0], "alpha_prior[0] (gamma shape e0)"),
            check_positive(alpha_prior[1], "alpha_prior[1] (gamma rate f0)"),
        )
        self.m0 = m0
        self.gamma0 = check_positive(gamma0, "gamma0")
        self.nu0 = 1.0 if nu0 is None else check_positive(nu0, "nu0")
        self.Phi0 = Phi0
        self.relabel = check_bool(relabel, "relabel")
        if isinstance(init, str):
            check_in(init, "init", ("kmeans++", "random"))
        elif init is None or isinstance(init, (bool, numbers.Number)):
            raise TypeError(f"init must be 'kmeans++', 'random' or an array (n_components, p) of means, got {describe(init)}")
        self.init = init
        self.chains = check_int(chains, "chains", minimum=1)
        if self.chains > 1 and self.method != "gibbs":
            raise ValueError(f"chains={self.chains} needs method='gibbs' (BEM is deterministic)")
        self.prune = check_positive(prune, "prune", strict=False)
        if self.prune >= 1.0:
            raise ValueError(f"prune must be a weight threshold in [0, 1), got {self.prune}")
        self.merge_tol = check_positive(merge_tol, "merge_tol")
        self.min_cluster_weight = check_positive(min_cluster_weight, "min_cluster_weight", strict=False)
        if self.min_cluster_weight >= 1.0:
            raise ValueError(f"min_cluster_weight must be in [0, 1), got {self.min_cluster_weight}")
        self.max_predictive_draws = check_int(max_predictive_draws, "max_predictive_draws", minimum=1)
        self.tol = check_positive(tol, "tol", strict=False)
        self.seed = check_seed(seed)
        self.progress = check_bool(progress, "progress")
        self.backend = backend
        if threads is not None:
            check_int(threads, "threads", minimum=1)
        self.threads = threads
        self.executor = executor
        self.dtype = np.dtype(dtype)
        if self.dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
            raise ValueError(f"dtype must be numpy.float32 or numpy.float64, got {dtype!r}")
        self.chunk_size = None if chunk_size is None else check_int(chunk_size, "chunk_size", minimum=1)

    def __repr__(self) -> str:
        fitted = hasattr(self, "weights_")
        s = f"TDPGaussianMixture(n_components={self.n_components}, method={self.method!r}, n_iter={self.n_iter}"
        if fitted:
            occ = int((self.weights_ > 1e-3).sum())
            s += (f"; fitted on n={self.n_}, p={self.p_}, {occ} components with weight > 0.001, "
                  f"{self.n_clusters_} clusters, backend={self.backend_!r}")
        return s + ")"

    # ------------------------------------------------------------------ validation
    def _check_data(self, X):
        if X is None:
            raise TypeError("X must be an array of numbers (n observations x p columns), got None")
        names = _column_names(X)
        arr = X if isinstance(X, np.ndarray) else np.asarray(X)
        if arr.ndim == 1:
            raise ValueError(
                f"X must be 2-dimensional (n observations x p columns), got a 1-D array of shape {arr.shape}: "
                "reshape your data with X.reshape(-1, 1) if it has a single column or X.reshape(1, -1) if it "
                "is a single observation"
            )
        X = as_float_array(arr, "X", ndim=2, copy=True)
        n, p = X.shape
        if n < 2:
            raise ValueError(f"X needs at least 2 rows (observations), got {n}")
        if p < 1:
            raise ValueError("X needs at least one column")
        if p > n:
            raise ValueError(f"X has more columns (p={p}) than rows (n={n}); the mixture needs n >= p")
        self.feature_names_in_ = names
        self.feature_names_ = None if names is None else [str(c) for c in names]
        self.n_features_in_ = p
        return X

    def _check_priors(self, p, k):
        if self.m0 is None:
            m0 = np.zeros(p)
        elif isinstance(self.m0, numbers.Real) and not isinstance(self.m0, bool):
            m0 = np.full(p, float(self.m0))
        else:
            m0 = as_float_array(self.m0, "m0", shape=(p,))
        if not np.isfinite(m0).all():
            raise ValueError("m0 must be finite")
        if self.Phi0 is None:
            Phi0 = self.nu0 * np.eye(p)
        else:
            Phi0 = as_float_array(self.Phi0, "Phi0", ndim=(2, 3), copy=True)
            if Phi0.shape not in ((p, p), (k, p, p)):
                raise ValueError(f"Phi0 must have shape ({p}, {p}) or ({k}, {p}, {p}), got {Phi0.shape}")
            if not np.allclose(Phi0, np.swapaxes(Phi0, -1, -2), rtol=1e-10, atol=1e-12):
                raise ValueError("Phi0 must be symmetric")
            try:
                np.linalg.cholesky(Phi0)
            except np.linalg.LinAlgError:
                raise ValueError("Phi0 must be positive definite (its Cholesky factorisation failed)") from None
        return m0, Phi0

    def _check_init(self, X, center, scale, k, p):
        if isinstance(self.init, str):
            return self.init
        mu = as_float_array(self.init, "init", shape=(k, p), copy=True)
        return (mu - center) / scale

    def _check_size(self, n, p, k):
        """Refuse, before any allocation, a problem whose arrays cannot fit in memory."""
        S = self.chains * (self.n_iter // self.thin) if self.method == "gibbs" else 1
        F = 1 + p + p * (p + 1) // 2
        threads = self.threads or os.cpu_count() or 1
        chunk = self.chunk_size or 256
        need = 8.0 * (
            3 * S * k * (1 + p + p * p)  # stored draws (standardised + original units) and the predictive
            + min(S, self.max_predictive_draws) * k * F  # coefficients of the predictive density
            + 12 * k * p * p  # per-sweep component arrays (Sigma, Cholesky factors, precisions, ...)
            + threads * chunk * (k + F)  # per-worker chunk buffers of the hot step
            + 16 * k * (1 + p + 3) * (p + 1)  # per-block label moments (cpu.STAT_BLOCKS, cpu.moments_width)
            + 4 * n * p  # data copies
        )
        have = _physical_memory()
        if need > have:
            raise MemoryError(
                f"n_components={k} with n={n}, p={p} and {S} stored draw(s) would need about "
                f"{need / 2**30:.1f} GiB of memory but this machine has {have / 2**30:.1f} GiB: reduce "
                "n_components (or n_iter / increase thin for Gibbs)"
            )

    # ------------------------------------------------------------------ fit
    def fit(self, X, y=None):
        """Fit the mixture to X (n, p) (rows = observations, original units). Returns self."""
        X = self._check_data(X)
        n, p = X.shape
        k = self.n_components
        center = X.mean(axis=0)
        scale = X.std(axis=0, ddof=1)
        const = np.flatnonzero(~(scale > 1e-12 * np.maximum(1.0, np.abs(center))))
        if const.size:
            names = [self.feature_names_[c] for c in const] if self.feature_names_ else list(const)
            raise ValueError(
                f"X has constant (zero-variance) column(s) {names}: the standardised data would be singular; "
                "drop them before fitting"
            )
        m0, Phi0 = self._check_priors(p, k)
        init = self._check_init(X, center, scale, k, p)
        self._check_size(n, p, k)
        resolved = resolve_backend(self.backend)
        priors = Priors(m0, self.gamma0, self.nu0, Phi0, *self.alpha_prior)
        Xs = (X - center) / scale
        self.center_, self.scale_ = center, scale
        self.n_, self.p_ = n, p
        self.backend_ = resolved
        self._m0, self._Phi0 = m0, Phi0
        if self.method == "gibbs":
            self._fit_gibbs(Xs, resolved, priors, init)
        else:
            self._fit_bem(Xs, resolved, priors, init)
        self._set_clusters(Xs)
        return self

    def _fit_gibbs(self, Xs, resolved, priors, init):
        k, jac = self.n_components, float(np.log(self.scale_).sum())
        job = {
            "Xs": Xs, "k": k, "priors": priors, "burn_in": self.burn_in, "n_iter": self.n_iter,
            "thin": self.thin, "backend": resolved, "dtype": self.dtype, "chunk_size": self.chunk_size,
            "threads": self.threads, "init": init, "progress": self.progress, "chains": self.chains,
        }
        if self.chains == 1:
            # one chain: the seed drives the chain directly (same fit for seed=5 and default_rng(5))
            outs = [_gibbs_chain(0, check_random_state(self.seed), job)]
        else:
            seeds = spawn_seeds(self.seed, self.chains)
            job["progress"] = False
            outs = run_replicates(_gibbs_chain, range(self.chains), seeds=seeds, executor=self.executor,
                                  progress=self.progress, desc="TDP Gibbs chains", args=(job,))
        n = self.n_

        def draws(key):
            # one chain: its arrays as they are (a copy of the 40 MB of covariances at S = 100,
            # k = 256, p = 14 cost ~0.1 s of fresh pages on a 2-core VM)
            return outs[0][key] if len(outs) == 1 else np.concatenate([o[key] for o in outs])

        dw, dmu, dS, dal = draws("weights"), draws("means"), draws("covariances"), draws("alpha")
        S = dw.shape[0]
        self.labels_ = outs[0]["labels"]
        if self.relabel and S > 1:
            perms = relabel_draws(dw, dmu, dS)
            rows = np.arange(S)[:, None]
            dw, dmu, dS = dw[rows, perms], dmu[rows, perms], dS[rows, perms]
        ll = np.stack([o["loglik"] for o in outs]) - n * jac
        self.loglik_trace_ = ll[0] if self.chains == 1 else ll
        self.chain_traces_ = {
            "loglik": np.stack([o["loglik_stored"] for o in outs]) - n * jac,
            "occupied": np.stack([o["occupied"] for o in outs]),
            "alpha": np.stack([o["alpha"] for o in outs]),
        }
        self.log_posterior_trace_ = None
        self.n_iter_ = self.burn_in + self.n_iter
        self.converged_ = None
        self.n_components_kept_ = k
        self.draws_ = {
            "weights": dw,
            "means": self._to_original_means(dmu),
            "covariances": self._to_original_cov(dS),
            "alpha": dal,
        }
        self._draws_std = (dw, dmu, dS)
        self._set_point_estimates(dw.mean(0), dmu.mean(0), dS.mean(0), float(dal.mean()))

    def _fit_bem(self, Xs, resolved, priors, init):
        n, p, k = self.n_, self.p_, self.n_components
        e0, f0 = priors.e0, priors.f0
        jac = float(np.log(self.scale_).sum())
        ll_trace, lp_trace = [], []
        converged = False
        lp_prev = None
        rng = check_random_state(self.seed)
        state = initial_state(Xs, k, rng, init)
        mu, Sigma, log_w, alpha = state.mu, state.Sigma, state.log_w, state.alpha
        v = 1.0 / (k - np.arange(k - 1.0))  # the sticks of equal weights 1/k
        active = np.ones(k, dtype=bool)
        with threads_context(self.threads if resolved == "cpu" else None):
            engine = make_engine(Xs, backend=resolved, dtype=self.dtype, chunk_size=self.chunk_size,
                                 threads=self.threads)
            try:
                with progress_bar(self.n_iter, "TDP BEM", self.progress) as bar:
                    for it in range(self.n_iter):
                        L, U, logdet = M.chol_factors(Sigma)
                        engine.set_components(log_w, mu, U, logdet)
                        ll, T = engine.responsibilities_stats()
                        Phi_a = priors.Phi0 if priors.Phi0.ndim == 2 else priors.Phi0[active]
                        lp = ll + M.log_prior(mu[active], Sigma[active], v, alpha, priors.m0, priors.gamma0,
                                              priors.nu0, Phi_a, e0, f0)
                        ll_trace.append(ll - n * jac)
                        lp_trace.append(lp)
                        bar.update(1)
                        N, S1, S2 = M.unpack_stats(T, p)
                        change = None if lp_prev is None else abs(lp - lp_prev) / abs(lp_prev)
                        # pruning waits until the fit has settled (weights of a fresh start are all
                        # ~1/k); components below the threshold are removed, and the fit goes on
                        low = active & (N / n < self.prune) if self.prune > 0 else np.zeros(k, dtype=bool)
                        if low.all():
                            low[np.argmax(N)] = False
                        if change is not None and change <= self.tol and not low.any():
                            converged = True
                            break
                        lp_prev = lp
                        mu, Sigma = M.bem_mu_sigma(N, S1, S2, priors.m0, priors.gamma0, priors.nu0, priors.Phi0)
                        if low.any() and change is not None and change <= max(self.tol, PRUNE_SETTLED):
                            # one component at a time (the lightest): its points move to the others,
                            # which may lift them above the threshold
                            active[np.flatnonzero(low)[np.argmin(N[low])]] = False
                            lp_prev = None  # a smaller model: the objective changed
                        v, lw = M.bem_sticks(N[active], alpha)
                        log_w = np.full(k, -np.inf)
                        log_w[active] = lw
                        if active.sum() > 1:
                            alpha = M.bem_alpha(v, int(active.sum()), e0, f0)
            finally:
                engine.close()
        self.loglik_trace_ = np.asarray(ll_trace)
        self.log_posterior_trace_ = np.asarray(lp_trace)
        self.n_iter_ = it + 1
        self.converged_ = converged
        self.draws_ = None
        self.chain_traces_ = None
        self._draws_std = None
        self.n_components_kept_ = int(active.sum())
        with np.errstate(divide="ignore"):
            w = np.exp(log_w)
        self._set_point_estimates(w, mu, Sigma, float(alpha))
        self.labels_ = self._proba_std(Xs, "plugin").argmax(1)

    # ------------------------------------------------------------------ units
    def _to_original_means(self, mu):
        return self.center_ + mu * self.scale_

    def _to_original_cov(self, Sigma):
        # (Sigma * s_a) * s_b with the second product in place: one new (S, k, p, p) array, not two
        # (fresh pages cost ~3 ms per MB on a 2-core VM; the draws' covariances are 40 MB at S = 100)
        out = Sigma * self.scale_[:, None]
        out *= self.scale_[None, :]
        return out

    def _set_point_estimates(self, w, mu_std, Sigma_std, alpha):
        self._w_std = w / w.sum()
        self._mu_std = mu_std
        self._Sigma_std = 0.5 * (Sigma_std + np.swapaxes(Sigma_std, 1, 2))
        self.weights_ = self._w_std.copy()
        self.means_ = self._to_original_means(mu_std)
        self.covariances_ = self._to_original_cov(self._Sigma_std)
        self.alpha_ = alpha
        self._mixtures = {}

    def _mixture(self, estimate):
        """The prediction density (standardised units), built once per kind."""
        if estimate not in self._mixtures:
            k = self.n_components
            if estimate == "plugin":
                with np.errstate(divide="ignore"):
                    lw = np.log(self._w_std)
                mix = PredictionMixture(lw, self._mu_std, self._Sigma_std, k)
            else:
                dw, dmu, dS = self._draws_std
                S = dw.shape[0]
                if S > self.max_predictive_draws:
                    idx = np.unique(np.linspace(0, S - 1, self.max_predictive_draws).round().astype(np.int64))
                    dw, dmu, dS = dw[idx], dmu[idx], dS[idx]
                with np.errstate(divide="ignore"):
                    lw = np.log(dw)
                mix = PredictionMixture(lw, dmu, dS, k)
            self._mixtures[estimate] = mix
        return self._mixtures[estimate]

    def _set_clusters(self, Xs):
        # the modal merging (a mode ascent from every component, ~0.4 s at k = 256, p = 14) and the
        # training rows' clusters are computed on first use of a cluster attribute, not in fit
        self._Xs_train = Xs
        self._clusters = None
        self._cluster_labels = None

    def _modal(self) -> dict:
        if getattr(self, "_clusters", None) is None:
            if not hasattr(self, "_Xs_train"):
                raise AttributeError("the cluster attributes exist after fit(X)")
            cc, modes = modal_clusters(self._w_std, self._mu_std, self._Sigma_std, merge_tol=self.merge_tol,
                                       min_cluster_weight=self.min_cluster_weight)
            nc = int(modes.shape[0])
            w = self._w_std
            cw = np.bincount(cc[cc >= 0], weights=w[cc >= 0], minlength=nc)
            cm = np.stack([(w[cc == c, None] * self.means_[cc == c]).sum(0) / cw[c] for c in range(nc)])
            self._clusters = dict(component_clusters=cc, n_clusters=nc, modes=self._to_original_means(modes),
                                  weights=cw, means=cm)
        return self._clusters

    @property
    def component_clusters_(self):
        """Cluster of each component (-1: weight below ``min_cluster_weight``); computed on first use."""
        return self._modal()["component_clusters"]

    @property
    def n_clusters_(self):
        """Number of modes of the fitted density (clusters); computed on first use."""
        return self._modal()["n_clusters"]

    @property
    def cluster_modes_(self):
        """Modes of the fitted density, original units; computed on first use."""
        return self._modal()["modes"]

    @property
    def cluster_weights_(self):
        """Total weight of each cluster's components; computed on first use."""
        return self._modal()["weights"]

    @property
    def cluster_means_(self):
        """Weighted mean of each cluster's component means, original units; computed on first use."""
        return self._modal()["means"]

    @property
    def cluster_labels_(self):
        """Cluster of each training row (computed on first access, then kept)."""
        if getattr(self, "_cluster_labels", None) is None:
            if not hasattr(self, "_Xs_train"):
                raise AttributeError("cluster_labels_ exists after fit(X)")
            self._cluster_labels = self._cluster_from_proba(self._proba_std(self._Xs_train, self._default_estimate()))
        return self._cluster_labels

    def _cluster_from_proba(self, P):
        cc = self.component_clusters_
        G = np.zeros((P.shape[0], self.n_clusters_))
        live = cc >= 0
        np.add.at(G.T, cc[live], P[:, live].T)
        return G.argmax(1)

    # ------------------------------------------------------------------ prediction
    def _check_fitted(self):
        if not hasattr(self, "weights_"):
            raise RuntimeError("this TDPGaussianMixture is not fitted yet; call fit(X) first")

    def _default_estimate(self):
        return "predictive" if self._draws_std is not None else "plugin"

    def _estimate(self, estimate):
        if estimate is None:
            return self._default_estimate()
        check_in(estimate, "estimate", ("predictive", "plugin"))
        if estimate == "predictive" and self._draws_std is None:
            raise ValueError("estimate='predictive' needs stored posterior draws (method='gibbs'); this fit is BEM")
        return estimate

    def _standardise(self, X):
        self._check_fitted()
        names = _column_names(X)
        fitted = getattr(self, "feature_names_in_", None)
        if names is not None and fitted is not None and list(names) != list(fitted):
            if set(names) == set(fitted):
                raise ValueError(
                    f"X has the columns of the fit in another order: {list(names)}; the model was fitted on "
                    f"{list(fitted)} (select them in that order, e.g. X[model.feature_names_in_])"
                )
            raise ValueError(f"X has columns {list(names)} but the model was fitted on {list(fitted)}")
        arr = X if isinstance(X, np.ndarray) else np.asarray(X)
        if arr.ndim == 1:
            raise ValueError(
                f"X must be 2-dimensional (n observations x {self.p_} columns), got a 1-D array of shape "
                f"{arr.shape}: reshape with X.reshape(-1, 1) for one column or X.reshape(1, -1) for one observation"
            )
        X = as_float_array(arr, "X", ndim=2)
        if X.shape[1] != self.p_:
            raise ValueError(f"X must have {self.p_} columns (as in fit), got {X.shape[1]}")
        return (X - self.center_) / self.scale_

    def _proba_std(self, Xs, estimate):
        mix = self._mixture(estimate)
        if self.backend_ in ("gpu", "emulator"):
            return self._device_proba(Xs, mix)
        return mix.proba(Xs)

    def _prediction_engine(self, Xs, mix):
        chunk = max(1, self.PREDICTION_BUFFER_BYTES // (8 * mix.K))
        eng = make_engine(np.ascontiguousarray(Xs), backend=self.backend_, chunk_size=chunk)
        eng.set_components(mix.log_w, mix.mu, mix.U, mix.logdet)
        return eng

    def _device_proba(self, Xs, mix):
        """Component probabilities on the fit's GPU engine: the density kernel over every term
        (component x stored draw), the draws of each component summed in log space on the device,
        normalised on the host.  Far rows keep the host's scaled evaluation (as score_samples)."""
        out = np.empty((Xs.shape[0], mix.k))
        far = np.abs(Xs).max(1) > mix.FAR
        if far.any():
            out[far] = mix.proba(Xs[far])
        near = ~far
        if near.any():
            eng = self._prediction_engine(Xs[near], mix)
            try:
                A = eng.component_group_log_density(Xs[near], mix.n_draws)
            finally:
                eng.close()
            A -= A.max(1, keepdims=True)
            np.exp(A, out=A)
            A /= A.sum(1, keepdims=True)
            out[near] = A
        return out

    def predict(self, X, estimate=None):
        """Most probable component of each row of X (original units); see :meth:`predict_proba`."""
        return self.predict_proba(X, estimate).argmax(1)

    def predict_proba(self, X, estimate=None):
        """Component probabilities P(z_i = j | x_i), shape (n, k).

        ``estimate="predictive"`` (default after Gibbs): ``E_s[w_sj N(x | mu_sj, Sigma_sj)] /
        E_s[f_s(x)]`` over the stored (relabelled) draws; ``"plugin"`` (default and only choice
        after BEM): the responsibilities of the point-estimate mixture.  Computed in log space:
        finite for any finite x.
        """
        return self._proba_std(self._standardise(X), self._estimate(estimate))

    def predict_cluster(self, X, estimate=None):
        """Cluster (mode of the fitted density, see ``cluster_labels_``) of each row of X: the
        cluster with the largest summed component probability."""
        return self._cluster_from_proba(self.predict_proba(X, estimate))

    def score_samples(self, X, estimate=None):
        """Log density at the rows of X, in ORIGINAL units (posterior predictive after Gibbs by
        default, ``estimate="plugin"`` for the point-estimate mixture).

        ``log f(x) = log f_std((x - center_)/scale_) - sum(log scale_)`` (the Jacobian of
        the standardisation), so the density integrates to one over the original space.
        """
        Xs = self._standardise(X)
        mix = self._mixture(self._estimate(estimate))
        if self.backend_ in ("gpu", "emulator"):
            return self._device_log_density(Xs, mix) - float(np.log(self.scale_).sum())
        return mix.log_density(Xs) - float(np.log(self.scale_).sum())

    #: device memory for the (terms x chunk) density buffer of one prediction launch, bytes
    PREDICTION_BUFFER_BYTES = 1 << 28

    def _device_log_density(self, Xs, mix):
        """The prediction density on the fit's GPU engine: every term (component x stored draw) is one
        component of one launch of the density kernel, log-sum-exp on the device. Rows far from the
        data (|x| > PredictionMixture.FAR standardised units) keep the host's scaled evaluation, which
        stays finite where the plain quadratic form would overflow."""
        out = np.empty(Xs.shape[0])
        far = np.abs(Xs).max(1) > mix.FAR
        if far.any():
            out[far] = mix.log_density(Xs[far])
        near = ~far
        if near.any():
            eng = self._prediction_engine(Xs[near], mix)
            try:
                out[near] = eng.log_density(Xs[near]) - math.log(mix.n_draws)
            finally:
                eng.close()
        return out

    def score(self, X, y=None, estimate=None):
        """Mean log density (original units) of the rows of X."""
        return float(self.score_samples(X, estimate).mean())

    # ------------------------------------------------------------------ summaries
    def diagnostics(self):
        """R-hat and bulk/tail ESS (ArviZ) of label-invariant quantities of the Gibbs draws: the
        log-likelihood, the number of occupied components and alpha (pandas DataFrame).  A single
        chain is split in two halves.  None for BEM."""
        self._check_fitted()
        if self.chain_traces_ is None:
            return None
        return label_invariant_diagnostics(self.chain_traces_)

    def to_frame(self, min_weight: float = 0.0):
        """One row per component (sorted by weight): weight, cluster, means and sds per column (original units)."""
        import pandas as pd

        self._check_fitted()
        min_weight = check_positive(min_weight, "min_weight", strict=False)
        names = self.feature_names_ or [f"x{a}" for a in range(self.p_)]
        order = np.argsort(-self.weights_)
        order = order[self.weights_[order] >= min_weight]
        data = {"component": order, "weight": self.weights_[order], "cluster": self.component_clusters_[order]}
        for a, nm in enumerate(names):
            data[f"mean_{nm}"] = self.means_[order, a]
        for a, nm in enumerate(names):
            data[f"sd_{nm}"] = np.sqrt(self.covariances_[order, a, a])
        return pd.DataFrame(data)

    def summary(self, min_weight: float = 0.01) -> str:
        """Text table of the components with weight >= ``min_weight``, the clusters, and (Gibbs)
        convergence diagnostics; warns when an R-hat exceeds 1.01."""
        self._check_fitted()
        head = (
            f"TDP Gaussian mixture ({self.method}, k={self.n_components}, n={self.n_}, p={self.p_}, "
            f"backend={self.backend_}); alpha = {self.alpha_:.4g}"
        )
        if self.method == "bem" and self.prune > 0:
            head += f"; {self.n_components_kept_} components kept after pruning below {self.prune:g}"
        if self.method == "gibbs":
            head += f"; {self.chains} chain(s), {self.draws_['alpha'].shape[0]} draws"
        text = head + "\n" + self.to_frame(min_weight).to_string(index=False, float_format=lambda v: f"{v:.4g}")
        names = self.feature_names_ or [f"x{a}" for a in range(self.p_)]
        text += f"\n{self.n_clusters_} cluster(s) by modal merging:"
        for c in range(self.n_clusters_):
            means = ", ".join(f"{nm}={v:.4g}" for nm, v in zip(names, self.cluster_means_[c]))
            text += f"\n  cluster {c}: weight {self.cluster_weights_[c]:.3f}, mean {means}"
        diag = self.diagnostics()
        if diag is not None:
            text += "\nlabel-invariant convergence diagnostics:\n" + diag.to_string(float_format=lambda v: f"{v:.4g}")
            bad = diag.index[diag["r_hat"] > 1.01].tolist()
            if bad:
                warnings.warn(
                    f"R-hat > 1.01 for {bad}: the Gibbs chain(s) may not have converged; run longer "
                    "(n_iter, burn_in) or more chains", RuntimeWarning, stacklevel=2,
                )
        return text

    def to_dict(self) -> dict:
        """Plain-Python summary (JSON-serialisable) of the fitted parameters, original units."""
        self._check_fitted()
        return {
            "method": self.method,
            "n_components": self.n_components,
            "n_components_kept": self.n_components_kept_,
            "n": self.n_,
            "p": self.p_,
            "backend": self.backend_,
            "feature_names": self.feature_names_,
            "alpha": self.alpha_,
            "weights": self.weights_.tolist(),
            "means": self.means_.tolist(),
            "covariances": self.covariances_.tolist(),
            "center": self.center_.tolist(),
            "scale": self.scale_.tolist(),
            "n_iter": self.n_iter_,
            "converged": self.converged_,
            "chains": self.chains,
            "clusters": {
                "n_clusters": self.n_clusters_,
                "component_cluster": self.component_clusters_.tolist(),
                "weights": self.cluster_weights_.tolist(),
                "means": self.cluster_means_.tolist(),
                "modes": self.cluster_modes_.tolist(),
            },
            "priors": {
                "alpha_prior": list(self.alpha_prior),
                "m0_standardised": self._m0.tolist(),
                "gamma0": self.gamma0,
                "nu0": self.nu0,
                "Phi0_standardised": np.asarray(self._Phi0).tolist(),
            },
        }

    def plot(self, X=None, **kwargs):
        """Plot the fitted mixture (2-D: ellipses over points; p > 2: pairs plot). See :mod:`.plot`."""
        from .plot import plot_mixture

        return plot_mixture(self, X, **kwargs)

def _column_names(X):
    """Column names of a DataFrame-like X as an object array (None for arrays or non-str names),
    the rule of scikit-learn's ``feature_names_in_``."""
    cols = getattr(X, "columns", None)
    if cols is None:
        return None
    names = np.asarray(list(cols), dtype=object)
    if len(names) and all(isinstance(c, str) for c in names):
        return names
    return None
