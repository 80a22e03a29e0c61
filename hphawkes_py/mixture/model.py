"""The truncated Dirichlet-process Gaussian mixture estimator (Suchard et al. 2010).

:class:`TDPGaussianMixture` validates its settings and the data, standardises the columns, runs
the blocked Gibbs sampler (:mod:`.gibbs`, one or several chains) or Bayesian EM (:mod:`.bem`)
on the engine of the resolved backend, and reports the fit in original units: point estimates,
posterior draws (relabelled, :mod:`.draws`), the prediction density (:mod:`.prediction`),
clusters by modal merging (:mod:`.clusters`) and summaries.
"""
from __future__ import annotations

import numbers
import os
import warnings

import numpy as np

from .._backend import resolve_backend
from .._parallel import run_replicates, spawn_seeds
from .._validate import as_float_array, check_bool, check_in, check_int, check_positive, check_random_state, check_seed, describe
from . import prediction
from ._checks import check_init, check_prior_scale, check_priors
from ._data import centre_scale, column_names, real_data
from ._math import Priors
from .bem import bayesian_em
from .clusters import modal_clusters
from .draws import label_invariant_diagnostics, relabel_draws
from .gibbs import gibbs_chain
from .plot import plot_mixture
from .prediction import PredictionMixture

__all__ = ["TDPGaussianMixture"]


def _physical_memory() -> float:
    try:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return float("inf")


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
        (so the inverse-Wishart has a mean); with the default ``Phi0 = nu0 * I`` it must also be
        large enough for float64 to resolve ``Phi0`` beside the data's scatter (about
        ``4 p eps`` times the sum of squares of the standardised data; refused before the fit).
    Phi0 : array (p, p) or (k, p, p), optional
        Inverse-Wishart scale matrix ("nu Phi" of the paper), standardised units,
        symmetric positive definite, its smallest eigenvalue above float64's resolution beside
        the data's scatter (see ``nu0``).  Default ``nu0 * I`` (dpmix), i.e. the prior mean of
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
        BEM only (refused with ``method="gibbs"``, whose sampler keeps all k components): once the fit has settled (relative change of the log posterior < 1e-5), components
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
    executor : concurrent.futures.Executor or dask.distributed.Client, optional
        Where the chains run (default: one after the other in this process).
    dtype : numpy.float64 or numpy.float32, default float64
        Precision of the hot step on either engine (the n x k log densities: GEMM and exp on the
        CPU, the density kernels on the GPU).  On the CPU, float32 halves the GEMM and its Gibbs
        labels are *certified* equal to the float64 draw's (each row's float32 draw carries a
        proven bound on its rounding; the few rows whose uniform falls within that bound of a
        cumulative-probability boundary are redrawn from float64 densities), so the chain is the
        float64 chain; the per-sweep log-likelihood is then within
        ``engine.last_loglik_error_bound`` of the float64 value, a tiny fraction of it.  On the GPU and in Bayesian EM float32 is plain single
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
    feature_names_in_ : ndarray of str or None
        Column names of a DataFrame given to ``fit`` (None for an array), with scikit-learn's
        rule: ``predict``, ``predict_proba``, ``predict_cluster``, ``score_samples`` and
        ``score`` refuse (ValueError) a DataFrame whose names differ from these or come in
        another order.  A model fitted on an array warns (UserWarning) when it predicts on a
        DataFrame, whose names it cannot check: the columns are used by position.  A plain
        array is always taken by position, in the order of the fit.
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
        if self.prune > 0 and self.method != "bem":
            # the Gibbs sampler keeps every component: an empty one is drawn from the prior, which is
            # part of the truncated Dirichlet process; dropping components is a BEM device
            raise ValueError(
                f"prune={self.prune:g} applies to method='bem' only; method={self.method!r} keeps all "
                f"n_components={self.n_components} components: leave prune=0 or use method='bem'"
            )
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
        names = column_names(X)
        arr = real_data(X, "X")
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
            + 16 * k * (1 + p + 3) * (p + 1)  # per-block label moments (cpu_moments.STAT_BLOCKS, moments_width)
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
        """Fit the mixture to X (n, p) (rows = observations, original units). Returns self.

        X holds real numbers (bool, integer or float); dates, durations, strings and complex
        numbers are refused rather than cast.  A DataFrame's column names are kept in
        ``feature_names_in_`` and checked at prediction.
        """
        X = self._check_data(X)
        n, p = X.shape
        k = self.n_components
        center, scale = centre_scale(X, self.feature_names_)
        m0, Phi0 = check_priors(self.m0, self.Phi0, self.nu0, p, k)
        Xs = (X - center) / scale
        check_prior_scale(Phi0, Xs, m0, self.nu0, self.Phi0 is None)
        init = check_init(self.init, center, scale, k, p)
        self._check_size(n, p, k)
        resolved = resolve_backend(self.backend)
        priors = Priors(m0, self.gamma0, self.nu0, Phi0, *self.alpha_prior)
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
            outs = [gibbs_chain(0, check_random_state(self.seed), job)]
        else:
            seeds = spawn_seeds(self.seed, self.chains)
            job["progress"] = False
            outs = run_replicates(gibbs_chain, range(self.chains), seeds=seeds, executor=self.executor,
                                  progress=self.progress, desc="TDP Gibbs chains", args=(job,))
        n = self.n_

        def draws(key):
            # one chain: its arrays as they are (the stored covariances are S k p^2 values, and a
            # copy would fault in that many fresh pages)
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
        fit = bayesian_em(Xs, self.n_components, priors, init, check_random_state(self.seed), n_iter=self.n_iter,
                          tol=self.tol, prune=self.prune, backend=resolved, dtype=self.dtype,
                          chunk_size=self.chunk_size, threads=self.threads, progress=self.progress)
        jac = float(np.log(self.scale_).sum())
        self.loglik_trace_ = fit.loglik - self.n_ * jac
        self.log_posterior_trace_ = fit.log_posterior
        self.n_iter_ = fit.n_iter
        self.converged_ = fit.converged
        self.draws_ = None
        self.chain_traces_ = None
        self._draws_std = None
        self.n_components_kept_ = int(fit.active.sum())
        with np.errstate(divide="ignore"):
            w = np.exp(fit.log_w)
        self._set_point_estimates(w, fit.mu, fit.Sigma, float(fit.alpha))
        self.labels_ = self._proba_std(Xs, "plugin").argmax(1)

    # ------------------------------------------------------------------ units
    def _to_original_means(self, mu):
        return self.center_ + mu * self.scale_

    def _to_original_cov(self, Sigma):
        # (Sigma * s_a) * s_b with the second product in place: one new (S, k, p, p) array, not two
        # (the draws' covariances are large, and fresh pages are costly)
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
        # the modal merging (a mode ascent from every component through the whole mixture) and the
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
        arr = real_data(X, "X")
        names = column_names(X)
        fitted = getattr(self, "feature_names_in_", None)
        if names is not None and fitted is not None and list(names) != list(fitted):
            if set(names) == set(fitted):
                raise ValueError(
                    f"X has the columns of the fit in another order: {list(names)}; the model was fitted on "
                    f"{list(fitted)} (select them in that order, e.g. X[model.feature_names_in_])"
                )
            raise ValueError(f"X has columns {list(names)} but the model was fitted on {list(fitted)}")
        if names is not None and fitted is None:
            # names that cannot be checked: the user may believe they are matched (scikit-learn warns too)
            warnings.warn(
                f"X has feature names {list(names)}, but this TDPGaussianMixture was fitted without feature "
                "names: its columns are used by position, in the order of the fit", UserWarning, stacklevel=3,
            )
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
        return prediction.proba(self._mixture(estimate), Xs, self.backend_)

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
        return prediction.log_density(mix, Xs, self.backend_) - float(np.log(self.scale_).sum())

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
        return plot_mixture(self, X, **kwargs)
