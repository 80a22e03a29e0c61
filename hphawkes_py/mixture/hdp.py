"""The hierarchical Dirichlet-process mixture of normals across samples (dpmix's ``HDPNormalMixture``).

:class:`HDPGaussianMixture` validates its settings and the samples, standardises the columns
over all samples together, runs the blocked Gibbs sampler or Bayesian EM of :mod:`.hdp_gibbs`
(one engine per sample, on the resolved backend) and reports the fit in original units: the
shared components, each sample's weights with credible intervals, and per-sample prediction.
"""
from __future__ import annotations

import os
import warnings

import numpy as np

from .._backend import resolve_backend
from .._parallel import run_replicates, spawn_seeds
from .._validate import (as_float_array, check_bool, check_in, check_int, check_positive, check_probability,
                         check_random_state, check_seed, describe)
from . import prediction
from ._checks import check_init, check_prior_scale, check_priors
from ._data import centre_scale, column_names, real_data
from ._math import Priors
from .draws import label_invariant_diagnostics, relabel_draws
from .model import _physical_memory
from .prediction import PredictionMixture

__all__ = ["HDPGaussianMixture"]


def _pair(value, name, what):
    if not isinstance(value, (tuple, list, np.ndarray)) or len(value) != 2:
        raise ValueError(f"{name} must be a pair {what} of positive numbers, got {describe(value)}")
    return (check_positive(value[0], f"{name}[0] (gamma shape)"), check_positive(value[1], f"{name}[1] (gamma rate)"))


class HDPGaussianMixture:
    r"""Hierarchical Dirichlet-process mixture of normals across samples (dpmix's ``HDPNormalMixture``).

    Every sample (group) j = 1..J is a mixture of the SAME K components with its own weights::

        x_ji | z_ji = k      ~ N(mu_k, Sigma_k)
        P(z_ji = k)          = pi_jk
        pi_j                 ~ DP(alpha0, beta) truncated at K = Dirichlet(alpha0 beta)
        beta                 ~ GEM(alpha) truncated at K (stick-breaking, sticks Be(1, alpha))
        alpha ~ Gamma(e0, f0),  alpha0 ~ Gamma(g0, h0)   (shape, RATE)
        mu_k | Sigma_k ~ N(m0, gamma0 Sigma_k),  Sigma_k ~ IW(nu0 + 2, nu0 Phi)  (as TDPGaussianMixture)

    The data of all samples are standardised together, per column (x - mean) / sd over the
    pooled rows (ddof=1), and the priors are on that scale; fitted parameters and densities are
    reported in ORIGINAL units.  The Gibbs sampler is dpmix's: labels of each sample drawn on
    its engine, the atoms from all samples pooled, the group sticks from their Beta
    conditionals, the top-level sticks (beta) and alpha0 by Metropolis-Hastings with dpmix's
    reflected normal proposals tuned during burn-in, alpha from its Gamma conditional
    (:mod:`.hdp_gibbs`).

    Parameters
    ----------
    n_components : int, default 256
        Truncation level K (at least 2).
    method : {"gibbs", "bem"}, default "gibbs"
        ``"gibbs"``: blocked Gibbs sampler storing posterior draws; ``"bem"``: Bayesian EM
        (:func:`.hdp_gibbs.hdp_bem`: atoms and group weights at their conditional modes,
        beta from the samples' summed expected proportions, alpha0 held at 1) -- a fast
        point estimate and the warm start of Gibbs (``warm_start=True``).
    n_iter : int, default 1000
        Gibbs: sweeps after burn-in (every ``thin``-th stored).  BEM: maximum iterations.
    burn_in : int, default 100
        Gibbs sweeps discarded before ``n_iter``; the MH proposal scales are tuned every
        ``tune_interval`` of them.
    thin : int, default 1
        Keep every ``thin``-th sweep.
    alpha_prior : (e0, f0), default (5.0, 0.1)
        Gamma shape and rate of the top-level concentration alpha (dpmix's HDP defaults).
    alpha0_prior : (g0, h0), default (0.1, 0.1)
        Gamma shape and rate of the group-level concentration alpha0 (dpmix's defaults).
    m0, gamma0, nu0, Phi0
        The atoms' Normal-inverse-Wishart prior, standardised units, as in
        :class:`TDPGaussianMixture` (defaults m0 = 0, gamma0 = 10, nu0 = 1, Phi0 = nu0 I).
    tune_interval : int, default 100
        Burn-in sweeps between tunings of the MH proposal scales (dpmix's ``tune_interval``).
    warm_start : bool, default False
        Gibbs: start the chain(s) from a BEM fit of at most ``warm_start_iter`` iterations
        instead of k-means++ atoms and equal weights.
    warm_start_iter : int, default 100
        Iterations of the BEM warm start.
    relabel : bool, default True
        Gibbs: permute the components of every stored draw to match the last one
        (:func:`relabel_draws` on the pooled weights and the means) before the posterior means
        and intervals.
    init : {"kmeans++", "random"} or array (K, p), default "kmeans++"
        Initial atoms (on the pooled standardised data), as in :class:`TDPGaussianMixture`.
    chains : int, default 1
        Gibbs chains (seeds spawned from ``seed``; run on ``executor``); their draws are pooled.
    merge_tol : float, default 0.05
        Modal merging (see ``component_clusters_``): modes closer than this (max-norm,
        standardised units) are one cluster.
    min_cluster_weight : float, default 0.01
        Modal merging: a mode whose components weigh less than this in the SAMPLE-AVERAGED
        weights (every sample counts the same, so a population of one sample keeps 1/J of
        its weight there) is a ripple, and its components join the most responsible cluster.
    max_predictive_draws : int, default 200
        Draws averaged by the posterior predictive density (evenly spaced).
    tol : float, default 1e-7
        BEM stops when the relative change of the log-likelihood is at most ``tol``.
    seed : int or numpy.random.Generator, optional
        Random state; a seed gives the same fit bit for bit on any engine and thread count.
    progress : bool, default True
        tqdm progress bar on stderr.
    backend : {"auto", "cpu", "gpu", "emulator"}, default "auto"
        Engine of the label draws (one engine per sample).
    threads : int, optional
        Numba threads of the CPU engines.
    executor : concurrent.futures.Executor or dask.distributed.Client, optional
        Where the chains run.
    dtype : numpy.float64 or numpy.float32, default float64
        Precision of the density product (see :class:`TDPGaussianMixture`).
    chunk_size : int, optional
        Points per chunk of the hot step.

    Attributes
    ----------
    group_weights_ : ndarray (J, K)
        Each sample's component weights pi_j (posterior mean; BEM: the fixed point).
    beta_ : ndarray (K,)
        Top-level weights (posterior mean; BEM: the fixed point).
    weights_ : ndarray (K,)
        Weights of the pooled data, sum_j n_j pi_j / n.
    means_, covariances_ : ndarray (K, p), (K, p, p)
        Shared components, original units (posterior means after relabelling).
    alpha_, alpha0_ : float
        Concentrations (posterior means; BEM: alpha at its mode, alpha0 = 1).
    component_clusters_ : ndarray (K,)
        Cluster of each component: the components are merged by the modes of the mixture with
        the sample-averaged weights (Chan et al. 2008, as ``TDPGaussianMixture``), so that a
        population split over several components is one cluster (-1: weight 0).
    n_clusters_ : int
        Number of clusters.
    cluster_means_ : ndarray (n_clusters, p)
        Weighted mean of each cluster's component means (sample-averaged weights), original units.
    group_cluster_weights_ : ndarray (J, n_clusters)
        Each sample's proportion of each cluster (the sum of its components' weights).
    acceptance_rates_ : ndarray (K,) or None
        Gibbs: MH acceptance rates over the stored sweeps (chains averaged) of the K - 1
        top-level sticks, then of alpha0 (dpmix's ``AR``).
    draws_ : dict or None
        Gibbs: ``group_weights`` (S, J, K), ``beta`` (S, K), ``means`` (S, K, p),
        ``covariances`` (S, K, p, p) (original units, relabelled), ``alpha``, ``alpha0`` (S,).
    labels_ : list of ndarray
        Per sample: the labels of the last sweep (Gibbs) or the most probable component (BEM).
    loglik_trace_ : ndarray
        Log-likelihood (original units) per sweep / iteration; (chains, sweeps) with several chains.
    n_samples_, n_per_sample_ : int, ndarray (J,)
        Number of samples and their row counts.
    center_, scale_ : ndarray (p,)
        Pooled column means and sds of the standardisation.
    feature_names_in_ : ndarray of str or None
        Column names when every sample is a DataFrame with the same names (checked at prediction).
    backend_ : str
        The backend that ran.

    Examples
    --------
    Three samples sharing two cell populations, the third with a population of its own:

    >>> rng = np.random.default_rng(0)
    >>> centres = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]])
    >>> def sample(counts):
    ...     z = np.repeat(np.arange(3), counts)
    ...     return centres[z] + rng.normal(scale=0.5, size=(z.size, 2))
    >>> samples = [sample([150, 150, 0]), sample([210, 90, 0]), sample([120, 90, 90])]
    >>> model = hp.mixture.HDPGaussianMixture(6, n_iter=100, burn_in=100, seed=1, progress=False)
    >>> model = model.fit(samples)
    >>> model.group_weights_.shape
    (3, 6)
    >>> third = int(np.argmin(np.abs(model.means_ - [0.0, 4.0]).sum(1)))
    >>> print(np.round(model.group_weights_[:, third], 1))
    [0.  0.  0.3]
    >>> model.predict([[0.1, 3.9]], group=2).tolist() == [third]
    True
    """

    def __init__(
        self,
        n_components=256,
        *,
        method="gibbs",
        n_iter=1000,
        burn_in=100,
        thin=1,
        alpha_prior=(5.0, 0.1),
        alpha0_prior=(0.1, 0.1),
        m0=None,
        gamma0=10.0,
        nu0=None,
        Phi0=None,
        tune_interval=100,
        warm_start=False,
        warm_start_iter=100,
        relabel=True,
        init="kmeans++",
        chains=1,
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
        self.n_components = check_int(n_components, "n_components", minimum=2)
        self.method = check_in(method, "method", ("gibbs", "bem"))
        self.n_iter = check_int(n_iter, "n_iter", minimum=1)
        self.burn_in = check_int(burn_in, "burn_in", minimum=0)
        self.thin = check_int(thin, "thin", minimum=1)
        if self.method == "gibbs" and self.thin > self.n_iter:
            raise ValueError(f"thin={self.thin} exceeds n_iter={self.n_iter}: no draw would be stored")
        self.alpha_prior = _pair(alpha_prior, "alpha_prior", "(e0, f0)")
        self.alpha0_prior = _pair(alpha0_prior, "alpha0_prior", "(g0, h0)")
        self.m0 = m0
        self.gamma0 = check_positive(gamma0, "gamma0")
        self.nu0 = 1.0 if nu0 is None else check_positive(nu0, "nu0")
        self.Phi0 = Phi0
        self.tune_interval = check_int(tune_interval, "tune_interval", minimum=1)
        self.warm_start = check_bool(warm_start, "warm_start")
        if self.warm_start and self.method != "gibbs":
            raise ValueError("warm_start=True starts the Gibbs sampler from BEM; it needs method='gibbs'")
        self.warm_start_iter = check_int(warm_start_iter, "warm_start_iter", minimum=1)
        self.relabel = check_bool(relabel, "relabel")
        if isinstance(init, str):
            check_in(init, "init", ("kmeans++", "random"))
        elif init is None or isinstance(init, (bool, int, float, complex)):
            raise TypeError(f"init must be 'kmeans++', 'random' or an array (n_components, p) of means, got {describe(init)}")
        self.init = init
        self.chains = check_int(chains, "chains", minimum=1)
        if self.chains > 1 and self.method != "gibbs":
            raise ValueError(f"chains={self.chains} needs method='gibbs' (BEM is deterministic)")
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
        s = f"HDPGaussianMixture(n_components={self.n_components}, method={self.method!r}, n_iter={self.n_iter}"
        if hasattr(self, "group_weights_"):
            s += f"; fitted on {self.n_samples_} samples, n={self.n_}, p={self.p_}, backend={self.backend_!r}"
        return s + ")"

    # ------------------------------------------------------------------ validation
    def _check_samples(self, samples):
        if isinstance(samples, np.ndarray) or hasattr(samples, "columns") or not isinstance(samples, (list, tuple)):
            hint = " (wrap a single sample as [X])" if isinstance(samples, np.ndarray) or hasattr(samples, "columns") else ""
            raise TypeError(
                f"samples must be a list of 2-D arrays or DataFrames, one per sample, got {describe(samples)}{hint}"
            )
        if len(samples) == 0:
            raise ValueError("samples must hold at least one sample, got an empty list")
        arrays, names = [], []
        for j, X in enumerate(samples):
            what = f"samples[{j}]"
            if X is None:
                raise TypeError(f"{what} must be a 2-D array of numbers, got None")
            names.append(column_names(X))
            arr = real_data(X, what)
            if arr.ndim != 2:
                raise ValueError(
                    f"{what} must be 2-dimensional (rows = events, columns = channels), got shape {arr.shape}"
                )
            arr = as_float_array(arr, what, ndim=2, copy=True)
            if arr.shape[0] == 0:
                raise ValueError(f"{what} has no rows: every sample needs at least one observation")
            if arr.shape[1] == 0:
                raise ValueError(f"{what} has no columns")
            if arrays and arr.shape[1] != arrays[0].shape[1]:
                raise ValueError(
                    f"{what} has {arr.shape[1]} columns but samples[0] has {arrays[0].shape[1]}: every sample "
                    "must have the same columns"
                )
            arrays.append(arr)
        named = [nm is not None for nm in names]
        if any(named) and not all(named):
            raise ValueError(
                f"samples {[j for j, f in enumerate(named) if f]} are DataFrames with column names but samples "
                f"{[j for j, f in enumerate(named) if not f]} are not: give every sample as a DataFrame with the "
                "same columns, or every sample as an array"
            )
        if all(named):
            for j, nm in enumerate(names[1:], start=1):
                if list(nm) != list(names[0]):
                    order = " (the same names in another order)" if set(nm) == set(names[0]) else ""
                    raise ValueError(f"samples[{j}] has columns {list(nm)}{order} but samples[0] has {list(names[0])}")
        n, p = sum(a.shape[0] for a in arrays), arrays[0].shape[1]
        if n < 2:
            raise ValueError(f"the samples hold {n} row in all; the mixture needs at least 2")
        if p > n:
            raise ValueError(f"the samples have more columns (p={p}) than rows in all (n={n}); the mixture needs n >= p")
        self.feature_names_in_ = names[0] if all(named) else None
        self.feature_names_ = None if self.feature_names_in_ is None else [str(c) for c in self.feature_names_in_]
        self.n_features_in_ = p
        return arrays

    def _check_size(self, n, p, J, k):
        """Refuse, before any allocation, a fit whose stored draws and buffers cannot fit in memory."""
        S = self.chains * (self.n_iter // self.thin) if self.method == "gibbs" else 1
        threads = self.threads or os.cpu_count() or 1
        chunk = self.chunk_size or 256
        need = 8.0 * (
            2 * S * k * (J + 1 + p + p * p)  # stored draws (standardised and original units)
            + min(S, self.max_predictive_draws) * k * (1 + p + p * (p + 1) // 2)  # one predictive density
            + J * (threads * chunk * (k + p * p) + 16 * k * (1 + p + 3) * (p + 1))  # the engines' buffers
            + 12 * k * p * p + 4 * n * p
        )
        have = _physical_memory()
        if need > have:
            raise MemoryError(
                f"n_components={k} with {J} samples, n={n}, p={p} and {S} stored draw(s) would need about "
                f"{need / 2**30:.1f} GiB of memory but this machine has {have / 2**30:.1f} GiB: reduce "
                "n_components, or n_iter (or increase thin)"
            )

    # ------------------------------------------------------------------ fit
    def fit(self, samples, y=None):
        """Fit the HDP mixture to a list of samples (each (n_j, p), original units). Returns self.

        Every sample is a 2-D array of real numbers or a DataFrame (all DataFrames with the
        same column names in the same order), with at least one row and the same columns.
        """
        from .hdp_gibbs import HDPPriors, hdp_bem

        arrays = self._check_samples(samples)
        sizes = np.array([a.shape[0] for a in arrays])
        X = np.concatenate(arrays)
        n, p = X.shape
        k = self.n_components
        center, scale = centre_scale(X, self.feature_names_, "the samples (pooled)")
        # the atoms' prior is checked exactly as the DP mixture checks it (same attributes)
        m0, Phi0 = check_priors(self.m0, self.Phi0, self.nu0, p, k)
        Xs = (X - center) / scale
        check_prior_scale(Phi0, Xs, m0, self.nu0, self.Phi0 is None)
        init = check_init(self.init, center, scale, k, p)
        self._check_size(n, p, len(arrays), k)
        resolved = resolve_backend(self.backend)
        groups = np.split(Xs, np.cumsum(sizes)[:-1])
        priors = HDPPriors(Priors(m0, self.gamma0, self.nu0, Phi0, *self.alpha_prior), *self.alpha0_prior)
        self.center_, self.scale_ = center, scale
        self.n_, self.p_, self.n_samples_, self.n_per_sample_ = n, p, len(arrays), sizes
        self.backend_ = resolved
        self._m0, self._Phi0 = m0, Phi0
        self._jac = float(np.log(scale).sum())
        self._mixtures = {}
        bem_args = dict(backend=resolved, dtype=self.dtype, chunk_size=self.chunk_size, threads=self.threads,
                        progress=self.progress)
        if self.method == "bem":
            fit = hdp_bem(groups, k, priors, init, check_random_state(self.seed), n_iter=self.n_iter, tol=self.tol,
                          **bem_args)
            self._set_bem(fit, groups)
            return self
        start = None
        rng = check_random_state(self.seed)
        if self.warm_start:
            start = hdp_bem(groups, k, priors, init, rng, n_iter=self.warm_start_iter, tol=self.tol, **bem_args)
        self._fit_gibbs(groups, resolved, priors, init, start, rng)
        return self

    def _fit_gibbs(self, groups, resolved, priors, init, start, rng):
        from .hdp_gibbs import hdp_chain

        k = self.n_components
        job = {
            "groups": groups, "k": k, "priors": priors, "burn_in": self.burn_in, "n_iter": self.n_iter,
            "thin": self.thin, "tune_interval": self.tune_interval, "backend": resolved, "dtype": self.dtype,
            "chunk_size": self.chunk_size, "threads": self.threads, "init": init, "start": start,
            "progress": self.progress, "chains": self.chains,
        }
        if self.chains == 1:
            outs = [hdp_chain(0, rng, job)]
        else:
            seeds = spawn_seeds(self.seed, self.chains)
            job["progress"] = False
            outs = run_replicates(hdp_chain, range(self.chains), seeds=seeds, executor=self.executor,
                                  progress=self.progress, desc="HDP Gibbs chains", args=(job,))

        def draws(key):
            return outs[0][key] if len(outs) == 1 else np.concatenate([o[key] for o in outs])

        pi, beta, mu, Sigma = draws("weights"), draws("beta"), draws("means"), draws("covariances")
        S = pi.shape[0]
        frac = self.n_per_sample_ / self.n_
        pooled = np.einsum("j,sjk->sk", frac, pi)
        if self.relabel and S > 1:
            perms = relabel_draws(pooled, mu, Sigma)
            rows = np.arange(S)[:, None]
            pi = np.take_along_axis(pi, perms[:, None, :], axis=2)
            beta, mu, Sigma, pooled = beta[rows, perms], mu[rows, perms], Sigma[rows, perms], pooled[rows, perms]
        ll = np.stack([o["loglik"] for o in outs]) - self.n_ * self._jac
        self.loglik_trace_ = ll[0] if self.chains == 1 else ll
        self.chain_traces_ = {
            "loglik": np.stack([o["loglik_stored"] for o in outs]) - self.n_ * self._jac,
            "occupied": np.stack([o["occupied"] for o in outs]),
            "alpha": np.stack([o["alpha"] for o in outs]),
            "alpha0": np.stack([o["alpha0"] for o in outs]),
        }
        self.acceptance_rates_ = np.mean([o["acceptance"] for o in outs], axis=0)
        self.labels_ = outs[0]["labels"]
        self.n_iter_, self.converged_ = self.burn_in + self.n_iter, None
        self.draws_ = {
            "group_weights": pi, "beta": beta, "means": self.center_ + mu * self.scale_,
            "covariances": Sigma * self.scale_[:, None] * self.scale_[None, :],
            "alpha": draws("alpha"), "alpha0": draws("alpha0"),
        }
        self._draws_std = (pi, mu, Sigma)
        self._set_point(pi.mean(0), beta.mean(0), mu.mean(0), Sigma.mean(0), float(self.draws_["alpha"].mean()),
                        float(self.draws_["alpha0"].mean()))

    def _set_bem(self, fit, groups):
        from .hdp_gibbs import beta_and_tail

        self.loglik_trace_ = fit.loglik - self.n_ * self._jac
        self.chain_traces_ = None
        self.acceptance_rates_ = None
        self.n_iter_, self.converged_ = fit.n_iter, fit.converged
        self.draws_ = None
        self._draws_std = None
        self._set_point(np.exp(fit.log_pi), beta_and_tail(fit.sticks)[0], fit.mu, fit.Sigma, float(fit.alpha), 1.0)
        self.labels_ = [self._proba_std(g, j, "plugin").argmax(1) for j, g in enumerate(groups)]

    def _set_point(self, pi, beta, mu_std, Sigma_std, alpha, alpha0):
        self._pi_std = pi / pi.sum(1, keepdims=True)
        self._mu_std = mu_std
        self._Sigma_std = 0.5 * (Sigma_std + np.swapaxes(Sigma_std, 1, 2))
        self.group_weights_ = self._pi_std.copy()
        self.beta_ = beta / beta.sum()
        self.weights_ = (self.n_per_sample_ / self.n_) @ self._pi_std
        self.means_ = self.center_ + mu_std * self.scale_
        self.covariances_ = self._Sigma_std * self.scale_[:, None] * self.scale_[None, :]
        self.alpha_, self.alpha0_ = alpha, alpha0
        self._clusters = None

    # ------------------------------------------------------------------ intervals
    def group_weight_intervals(self, level: float = 0.95, by: str = "component"):
        """Equal-tailed posterior credible intervals of every sample's proportions.

        Parameters
        ----------
        level : float in (0, 1), default 0.95
            Posterior probability inside each interval.
        by : {"component", "cluster"}, default "component"
            ``"component"``: the weights pi_jk; ``"cluster"``: each sample's proportion of each
            cluster of ``component_clusters_`` (per draw, the sum of its components' weights:
            robust to a population that the draws split over several components).

        Returns
        -------
        lower, upper : ndarray (J, K) or (J, n_clusters)
            The (1 - level)/2 and (1 + level)/2 quantiles over the stored (relabelled) Gibbs
            draws, unitless proportions.
        """
        self._check_fitted()
        if isinstance(level, (bool, np.bool_)) or not isinstance(level, (int, float, np.floating, np.integer)) \
                or not 0.0 < float(level) < 1.0:
            raise ValueError(f"level must be a probability in (0, 1), got {describe(level)}")
        check_in(by, "by", ("component", "cluster"))
        if self.draws_ is None:
            raise ValueError("group_weight_intervals needs posterior draws (method='gibbs'); this fit is BEM")
        pi = self.draws_["group_weights"]
        if by == "cluster":
            pi = pi @ self._cluster_indicator()
        q = np.quantile(pi, [(1.0 - level) / 2.0, (1.0 + level) / 2.0], axis=0)
        return q[0], q[1]

    # ------------------------------------------------------------------ clusters
    def _modal(self) -> dict:
        self._check_fitted()
        if self._clusters is None:
            from .clusters import modal_clusters

            w = self._pi_std.mean(0)
            cc, _ = modal_clusters(w, self._mu_std, self._Sigma_std, merge_tol=self.merge_tol,
                                   min_cluster_weight=self.min_cluster_weight)
            nc = int(cc.max()) + 1
            ind = np.zeros((self.n_components, nc))
            ind[cc >= 0, cc[cc >= 0]] = 1.0
            cw = w @ ind
            self._clusters = dict(component_clusters=cc, n_clusters=nc, indicator=ind,
                                  means=(ind * w[:, None]).T @ self.means_ / cw[:, None])
        return self._clusters

    def _cluster_indicator(self):
        return self._modal()["indicator"]

    @property
    def component_clusters_(self):
        """Cluster of each component (modal merging of the sample-averaged mixture; -1: weight 0)."""
        return self._modal()["component_clusters"]

    @property
    def n_clusters_(self):
        """Number of clusters (modes of the sample-averaged mixture density)."""
        return self._modal()["n_clusters"]

    @property
    def cluster_means_(self):
        """Weighted mean of each cluster's component means (sample-averaged weights), original units."""
        return self._modal()["means"]

    @property
    def group_cluster_weights_(self):
        """(J, n_clusters): each sample's proportion of each cluster."""
        return self.group_weights_ @ self._cluster_indicator()

    def to_frame(self, level: float = 0.95, by: str = "cluster"):
        """Per-sample proportions as a tidy table (pandas DataFrame), one row per sample and
        cluster (``by="cluster"``) or component (``by="component"``).

        Parameters
        ----------
        level : float in (0, 1), default 0.95
            Posterior probability of the credible intervals (Gibbs; BEM has none).
        by : {"cluster", "component"}, default "cluster"
            What the proportions are of (see :meth:`group_weight_intervals`).

        Returns
        -------
        pandas.DataFrame
            Columns ``sample``, ``cluster`` or ``component``, ``proportion`` (posterior mean)
            and, after Gibbs, ``lower`` and ``upper``; then the means of the cluster or
            component per column (original units, ``mean_<name>``).
        """
        import pandas as pd

        self._check_fitted()
        check_in(by, "by", ("component", "cluster"))
        check_probability(level, "level", high_open=True)  # checked after BEM too, where it is unused
        if by == "cluster":
            W, centres = self.group_cluster_weights_, self.cluster_means_
        else:
            W, centres = self.group_weights_, self.means_
        J, C = W.shape
        data = {"sample": np.repeat(np.arange(J), C), by: np.tile(np.arange(C), J), "proportion": W.ravel()}
        if self.draws_ is not None:
            lo, hi = self.group_weight_intervals(level, by=by)
            data["lower"], data["upper"] = lo.ravel(), hi.ravel()
        names = self.feature_names_ or [f"x{a}" for a in range(self.p_)]
        for a, nm in enumerate(names):
            data[f"mean_{nm}"] = np.tile(centres[:, a], J)
        return pd.DataFrame(data)

    def diagnostics(self):
        """R-hat and bulk/tail ESS (ArviZ) of label-invariant quantities of the Gibbs draws.

        Returns
        -------
        pandas.DataFrame or None
            Rows ``loglik``, ``occupied`` (components with a point), ``alpha`` and ``alpha0``;
            columns ``mean``, ``r_hat``, ``ess_bulk``, ``ess_tail`` (one chain is split in two
            halves).  None after BEM.
        """
        self._check_fitted()
        if self.chain_traces_ is None:
            return None
        return label_invariant_diagnostics(self.chain_traces_)

    def summary(self, level: float = 0.95, min_weight: float = 0.01) -> str:
        """Text report: the clusters with their means, every sample's cluster proportions with
        credible intervals (Gibbs), the heaviest components and the convergence diagnostics.

        Parameters
        ----------
        level : float in (0, 1), default 0.95
            Posterior probability of the credible intervals of the proportions (Gibbs).
        min_weight : float, default 0.01
            Components listed: those whose sample-averaged weight is at least this.

        Returns
        -------
        str
            The report; warns (RuntimeWarning) when an R-hat exceeds 1.01.

        Examples
        --------
        >>> rng = np.random.default_rng(0)
        >>> samples = [rng.normal(size=(80, 2)) + [4.0 * j, 0.0] for j in range(2)]
        >>> model = hp.mixture.HDPGaussianMixture(4, method="bem", n_iter=50, seed=0, progress=False)
        >>> print(model.fit(samples).summary().splitlines()[0].split(";")[0])
        HDP Gaussian mixture (bem, k=4, 2 samples, n=160, p=2, backend=cpu)
        """
        from .hdp_report import hdp_summary

        return hdp_summary(self, level, min_weight)

    def to_dict(self, level: float = 0.95) -> dict:
        """Plain-Python summary (JSON-serialisable) of the fit, original units.

        Parameters
        ----------
        level : float in (0, 1), default 0.95
            Posterior probability of the credible intervals of the per-sample proportions.

        Returns
        -------
        dict
            Settings, the shared components (``means``, ``covariances``, pooled ``weights``,
            ``beta``), ``group_weights`` (J x K), the concentrations, the clusters, and
            ``proportions``: per sample, each cluster's proportion (``cluster``) and, after Gibbs,
            its credible interval (``cluster_lower``, ``cluster_upper``, also per component).

        Examples
        --------
        >>> import json
        >>> rng = np.random.default_rng(0)
        >>> samples = [rng.normal(size=(60, 2)), rng.normal(size=(60, 2)) + 4.0]
        >>> model = hp.mixture.HDPGaussianMixture(4, n_iter=20, burn_in=20, seed=0, progress=False)
        >>> d = model.fit(samples).to_dict()
        >>> d["n_samples"], len(d["proportions"]["cluster"]), len(d["proportions"]["cluster_lower"][0])
        (2, 2, 2)
        >>> _ = json.dumps(d)
        """
        from .hdp_report import hdp_to_dict

        return hdp_to_dict(self, level)

    # ------------------------------------------------------------------ prediction
    def _check_fitted(self):
        if not hasattr(self, "group_weights_"):
            raise RuntimeError("this HDPGaussianMixture is not fitted yet; call fit(samples) first")

    def _group(self, group) -> int:
        self._check_fitted()
        if isinstance(group, (bool, np.bool_)) or not isinstance(group, (int, np.integer)):
            raise TypeError(f"group must be a sample index (an integer), got {describe(group)}")
        if not 0 <= int(group) < self.n_samples_:
            raise ValueError(
                f"group must be the index of a sample of the fit, 0..{self.n_samples_ - 1} (the order of the "
                f"list given to fit), got {int(group)}"
            )
        return int(group)

    def _estimate(self, estimate):
        if estimate is None:
            return "predictive" if self._draws_std is not None else "plugin"
        check_in(estimate, "estimate", ("predictive", "plugin"))
        if estimate == "predictive" and self._draws_std is None:
            raise ValueError("estimate='predictive' needs stored posterior draws (method='gibbs'); this fit is BEM")
        return estimate

    def _mixture(self, group, estimate):
        key = (group, estimate)
        if key not in self._mixtures:
            k = self.n_components
            if estimate == "plugin":
                with np.errstate(divide="ignore"):
                    lw = np.log(self._pi_std[group])
                mix = PredictionMixture(lw, self._mu_std, self._Sigma_std, k)
            else:
                pi, mu, Sigma = self._draws_std
                S = pi.shape[0]
                idx = np.arange(S)
                if S > self.max_predictive_draws:
                    idx = np.unique(np.linspace(0, S - 1, self.max_predictive_draws).round().astype(np.int64))
                with np.errstate(divide="ignore"):
                    lw = np.log(pi[idx, group])
                mix = PredictionMixture(lw, mu[idx], Sigma[idx], k)
            self._mixtures[key] = mix
        return self._mixtures[key]

    def _standardise(self, X):
        self._check_fitted()
        if X is None:
            raise TypeError("X must be a 2-D array of numbers, got None")
        arr = real_data(X, "X")
        names = column_names(X)
        fitted = self.feature_names_in_
        if names is not None and fitted is not None and list(names) != list(fitted):
            order = " (the same names in another order)" if set(names) == set(fitted) else ""
            raise ValueError(f"X has columns {list(names)}{order} but the model was fitted on {list(fitted)}")
        if names is not None and fitted is None:
            warnings.warn(
                f"X has feature names {list(names)}, but this HDPGaussianMixture was fitted without feature "
                "names: its columns are used by position, in the order of the fit", UserWarning, stacklevel=3,
            )
        if arr.ndim != 2:
            raise ValueError(f"X must be 2-dimensional (n observations x {self.p_} columns), got shape {arr.shape}")
        X = as_float_array(arr, "X", ndim=2)
        if X.shape[1] != self.p_:
            raise ValueError(f"X must have {self.p_} columns (as in fit), got {X.shape[1]}")
        return (X - self.center_) / self.scale_

    def _proba_std(self, Xs, group, estimate):
        return prediction.proba(self._mixture(group, estimate), Xs, self.backend_)

    def predict_proba(self, X, group, estimate=None):
        """Component probabilities P(z = k | x, sample ``group``), shape (n, K): sample
        ``group``'s weights with the shared components; posterior predictive over the stored
        draws after Gibbs (default), ``estimate="plugin"`` for the point estimates."""
        g = self._group(group)
        est = self._estimate(estimate)
        return self._proba_std(self._standardise(X), g, est)

    def predict(self, X, group, estimate=None):
        """Most probable component of each row of X (original units) in sample ``group``."""
        return self.predict_proba(X, group, estimate).argmax(1)

    def predict_cluster(self, X, group, estimate=None):
        """Cluster (see ``component_clusters_``) of each row of X in sample ``group``: the
        cluster with the largest summed component probability."""
        return (self.predict_proba(X, group, estimate) @ self._cluster_indicator()).argmax(1)

    def score_samples(self, X, group, estimate=None):
        """Log density of sample ``group``'s mixture at the rows of X, ORIGINAL units
        (``log f_std((x - center_) / scale_) - sum(log scale_)``)."""
        g = self._group(group)
        est = self._estimate(estimate)
        Xs = self._standardise(X)
        return prediction.log_density(self._mixture(g, est), Xs, self.backend_) - self._jac

    def score(self, X, group, estimate=None):
        """Mean log density (original units) of the rows of X under sample ``group``'s mixture."""
        return float(self.score_samples(X, group, estimate).mean())
