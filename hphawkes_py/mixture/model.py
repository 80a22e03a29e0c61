"""Truncated Dirichlet-process Gaussian mixture: blocked Gibbs sampler and Bayesian EM.

The algorithm is written once here against an engine (``cpu.CpuEngine`` or
``gpu.GpuEngine``) that owns the hot steps (configuration probabilities for all
n x k (point, component) pairs, label draws, sufficient statistics).  Everything
else (conjugate updates, stick breaking, alpha, relabelling) works on k-sized
arrays in NumPy.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from .._backend import is_gpu_backend, resolve_backend, threads_context
from .._progress import progress_bar
from .._validate import as_float_array, check_in, check_int, check_positive, check_random_state, describe
from . import _math as M

__all__ = ["TDPGaussianMixture", "relabel_draws", "make_engine"]


def make_engine(X, *, backend="cpu", dtype=np.float64, chunk_size=None):
    """The engine for a resolved backend ("cpu", "gpu" or "emulator") holding the standardised data X."""
    if is_gpu_backend(backend):
        from .gpu import GpuEngine

        return GpuEngine(X, backend=backend, dtype=dtype, chunk_size=chunk_size)
    from .cpu import CpuEngine

    return CpuEngine(X, chunk_size=chunk_size or 1024, dtype=dtype)


def relabel_draws(weights, means, covariances, reference=None):
    """Undo label switching: permute each draw's components to best match a reference draw.

    Parameters
    ----------
    weights : ndarray (S, k)
    means : ndarray (S, k, p)
    covariances : ndarray (S, k, p, p)
        Posterior draws (any units; the cost is computed on ``means`` as given,
        so pass standardised means when columns have very different scales).
    reference : int, optional
        Index of the reference draw (default: the last draw).

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
    """
    from scipy.optimize import linear_sum_assignment

    weights = np.asarray(weights)
    means = np.asarray(means)
    S, k = weights.shape
    r = S - 1 if reference is None else int(reference)
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
        Precision of the GPU engine's density kernels (the CPU engine is float64;
        the conjugate updates are always float64).
    chunk_size : int, optional
        Points per chunk of the hot step (memory O(chunk_size x k)); default 1024 on the
        CPU, 65536 on the GPU.

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
    draws_ : dict or None
        Gibbs: ``weights`` (S, k), ``means`` (S, k, p), ``covariances`` (S, k, p, p)
        (original units, relabelled if ``relabel``), ``alpha`` (S,).  None for BEM.
    labels_ : ndarray (n,)
        Gibbs: the labels of the last sweep; BEM: the most probable component.
    loglik_trace_ : ndarray
        Log likelihood (original units) at every sweep / iteration.
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
        tol=1e-7,
        seed=None,
        progress=True,
        backend="auto",
        threads=None,
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
        self.relabel = bool(relabel)
        self.tol = check_positive(tol, "tol", strict=False)
        self.seed = seed
        self.progress = bool(progress)
        self.backend = backend
        self.threads = threads
        self.dtype = np.dtype(dtype)
        if self.dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
            raise ValueError(f"dtype must be numpy.float32 or numpy.float64, got {dtype!r}")
        self.chunk_size = None if chunk_size is None else check_int(chunk_size, "chunk_size", minimum=1)

    def __repr__(self) -> str:
        fitted = hasattr(self, "weights_")
        s = f"TDPGaussianMixture(n_components={self.n_components}, method={self.method!r}, n_iter={self.n_iter}"
        if fitted:
            occ = int((self.weights_ > 1e-3).sum())
            s += f"; fitted on n={self.n_}, p={self.p_}, {occ} components with weight > 0.001, backend={self.backend_!r}"
        return s + ")"

    # ------------------------------------------------------------------ validation
    def _check_data(self, X):
        if hasattr(X, "columns"):
            self.feature_names_ = [str(c) for c in X.columns]
        else:
            self.feature_names_ = None
        arr = np.asarray(X) if not isinstance(X, np.ndarray) else X
        if arr.ndim == 1:
            arr = arr.reshape(-1, 1)
        X = as_float_array(arr, "X", ndim=2)
        n, p = X.shape
        if n < 2:
            raise ValueError(f"X needs at least 2 rows (observations), got {n}")
        if p < 1:
            raise ValueError("X needs at least one column")
        if p > n:
            raise ValueError(f"X has more columns (p={p}) than rows (n={n}); the mixture needs n >= p")
        return X

    def _check_priors(self, p, k):
        if self.m0 is None:
            m0 = np.zeros(p)
        elif isinstance(self.m0, numbers.Real):
            m0 = np.full(p, float(self.m0))
        else:
            m0 = as_float_array(self.m0, "m0", shape=(p,))
        if not np.isfinite(m0).all():
            raise ValueError("m0 must be finite")
        if self.Phi0 is None:
            Phi0 = self.nu0 * np.eye(p)
        else:
            Phi0 = as_float_array(self.Phi0, "Phi0", ndim=(2, 3))
            if Phi0.shape not in ((p, p), (k, p, p)):
                raise ValueError(f"Phi0 must have shape ({p}, {p}) or ({k}, {p}, {p}), got {Phi0.shape}")
            if not np.allclose(Phi0, np.swapaxes(Phi0, -1, -2), rtol=1e-10, atol=1e-12):
                raise ValueError("Phi0 must be symmetric")
            try:
                np.linalg.cholesky(Phi0)
            except np.linalg.LinAlgError:
                raise ValueError("Phi0 must be positive definite (its Cholesky factorisation failed)") from None
        return m0, Phi0

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
        rng = check_random_state(self.seed)
        resolved = resolve_backend(self.backend)
        Xs = (X - center) / scale
        self.center_, self.scale_ = center, scale
        self.n_, self.p_ = n, p
        self.backend_ = resolved
        self._m0, self._Phi0 = m0, Phi0
        with threads_context(self.threads if resolved == "cpu" else None):
            engine = make_engine(Xs, backend=resolved, dtype=self.dtype, chunk_size=self.chunk_size)
            # initial values: means at k random data points, Sigma_j = I (the standardised data's
            # covariance), equal weights, alpha = 1 (dpmix draws means and covariances from the prior
            # instead; starting at data points avoids hundreds of far-away empty components).
            idx = rng.choice(n, size=k, replace=k > n)
            mu = Xs[idx].copy()
            Sigma = np.broadcast_to(np.eye(p), (k, p, p)).copy()
            log_w = np.full(k, -math.log(k))
            alpha = 1.0
            if self.method == "gibbs":
                self._fit_gibbs(engine, rng, mu, Sigma, log_w, alpha, m0, Phi0)
            else:
                self._fit_bem(engine, mu, Sigma, log_w, alpha, m0, Phi0)
        if hasattr(engine, "close"):
            engine.close()  # data and worker threads are not kept: prediction uses a small engine
        return self

    def _fit_gibbs(self, engine, rng, mu, Sigma, log_w, alpha, m0, Phi0):
        n, p, k = self.n_, self.p_, self.n_components
        e0, f0 = self.alpha_prior
        total = self.burn_in + self.n_iter
        S = self.n_iter // self.thin
        dw = np.empty((S, k))
        dmu = np.empty((S, k, p))
        dS = np.empty((S, k, p, p))
        dal = np.empty(S)
        ll_trace = np.empty(total)
        jac = float(np.log(self.scale_).sum())
        s = 0
        with progress_bar(total, "TDP Gibbs", self.progress) as bar:
            for it in range(total):
                L, U, logdet = M.chol_factors(Sigma)
                engine.set_components(log_w, mu, U, logdet)
                u = rng.random(n)
                engine.sample_labels(u)
                ll_trace[it] = engine.loglik - n * jac
                T = engine.label_stats()
                N, S1, S2 = M.unpack_stats(T, p)
                v, log_w = M.gibbs_sticks(rng, N, alpha)
                alpha = M.gibbs_alpha(rng, v, k, e0, f0) if k > 1 else alpha
                mu, Sigma = M.gibbs_mu_sigma(rng, N, S1, S2, L, m0, self.gamma0, self.nu0, Phi0)
                j = it - self.burn_in
                if j >= 0 and (j + 1) % self.thin == 0 and s < S:
                    dw[s] = np.exp(log_w)
                    dmu[s] = mu
                    dS[s] = Sigma
                    dal[s] = alpha
                    s += 1
                bar.update(1)
        self.labels_ = np.asarray(engine.z, dtype=np.int64) if getattr(engine, "z", None) is not None else None
        if self.relabel and S > 1:
            perms = relabel_draws(dw, dmu, dS)
            rows = np.arange(S)[:, None]
            dw, dmu, dS = dw[rows, perms], dmu[rows, perms], dS[rows, perms]
        self.loglik_trace_ = ll_trace
        self.log_posterior_trace_ = None
        self.n_iter_ = total
        self.converged_ = None
        self.draws_ = {
            "weights": dw,
            "means": self._to_original_means(dmu),
            "covariances": self._to_original_cov(dS),
            "alpha": dal,
        }
        self._set_point_estimates(dw.mean(0), dmu.mean(0), dS.mean(0), float(dal.mean()))

    def _fit_bem(self, engine, mu, Sigma, log_w, alpha, m0, Phi0):
        n, p, k = self.n_, self.p_, self.n_components
        e0, f0 = self.alpha_prior
        jac = float(np.log(self.scale_).sum())
        v = 1.0 / (k - np.arange(k - 1.0))  # the sticks of equal weights 1/k
        ll_trace, lp_trace = [], []
        converged = False
        lp_prev = None
        with progress_bar(self.n_iter, "TDP BEM", self.progress) as bar:
            for it in range(self.n_iter):
                L, U, logdet = M.chol_factors(Sigma)
                engine.set_components(log_w, mu, U, logdet)
                ll, T = engine.responsibilities_stats()
                lp = ll + M.log_prior(mu, Sigma, v, alpha, m0, self.gamma0, self.nu0, Phi0, e0, f0)
                ll_trace.append(ll - n * jac)
                lp_trace.append(lp)
                bar.update(1)
                if lp_prev is not None and abs(lp - lp_prev) <= self.tol * abs(lp_prev):
                    converged = True
                    break
                lp_prev = lp
                N, S1, S2 = M.unpack_stats(T, p)
                mu, Sigma = M.bem_mu_sigma(N, S1, S2, m0, self.gamma0, self.nu0, Phi0)
                v, log_w = M.bem_sticks(N, alpha)
                if k > 1:
                    alpha = M.bem_alpha(v, k, e0, f0)
        self.loglik_trace_ = np.asarray(ll_trace)
        self.log_posterior_trace_ = np.asarray(lp_trace)
        self.n_iter_ = it + 1
        self.converged_ = converged
        self.draws_ = None
        self._set_point_estimates(np.exp(log_w), mu, Sigma, float(alpha))
        self.labels_ = None
        self.labels_ = self.predict_standardised(engine.X)

    # ------------------------------------------------------------------ units
    def _to_original_means(self, mu):
        return self.center_ + mu * self.scale_

    def _to_original_cov(self, Sigma):
        return Sigma * self.scale_[:, None] * self.scale_[None, :]

    def _set_point_estimates(self, w, mu_std, Sigma_std, alpha):
        self._w_std = w / w.sum()
        self._mu_std = mu_std
        self._Sigma_std = 0.5 * (Sigma_std + np.swapaxes(Sigma_std, 1, 2))
        self.weights_ = self._w_std.copy()
        self.means_ = self._to_original_means(mu_std)
        self.covariances_ = self._to_original_cov(self._Sigma_std)
        self.alpha_ = alpha
        L, U, logdet = M.chol_factors(self._Sigma_std)
        from .cpu import CpuEngine

        with np.errstate(divide="ignore"):
            lw = np.log(self._w_std)
        self._pred = (lw, mu_std, U, logdet)
        self._pred_engine = CpuEngine(np.zeros((1, self.p_)), chunk_size=4096)
        self._pred_engine.set_components(*self._pred)

    # ------------------------------------------------------------------ prediction
    def _check_fitted(self):
        if not hasattr(self, "weights_"):
            raise RuntimeError("this TDPGaussianMixture is not fitted yet; call fit(X) first")

    def _standardise(self, X):
        self._check_fitted()
        arr = np.asarray(X)
        if arr.ndim == 1 and self.p_ == 1:
            arr = arr.reshape(-1, 1)
        X = as_float_array(arr, "X", ndim=2)
        if X.shape[1] != self.p_:
            raise ValueError(f"X must have {self.p_} columns (as in fit), got {X.shape[1]}")
        return (X - self.center_) / self.scale_

    def predict_standardised(self, Xs):
        """Most probable component for rows already in standardised units (chunked, O(chunk x k) memory)."""
        out = np.empty(Xs.shape[0], dtype=np.int64)
        step = 4096
        for lo in range(0, Xs.shape[0], step):
            out[lo : lo + step] = self._pred_engine.component_log_density(Xs[lo : lo + step]).argmax(1)
        return out

    def predict(self, X):
        """Most probable component of each row of X (original units) under the fitted mixture."""
        return self.predict_standardised(self._standardise(X))

    def predict_proba(self, X):
        """Posterior component probabilities P(z_i = j | x_i), shape (n, k)."""
        Xs = self._standardise(X)
        D = self._pred_engine.component_log_density(Xs)
        D -= D.max(axis=1, keepdims=True)
        np.exp(D, out=D)
        D /= D.sum(axis=1, keepdims=True)
        return D

    def score_samples(self, X):
        """Log density of the fitted mixture at the rows of X, in ORIGINAL units.

        ``log f(x) = log f_std((x - center_)/scale_) - sum(log scale_)`` (the Jacobian of
        the standardisation), so the density integrates to one over the original space.
        """
        Xs = self._standardise(X)
        return self._pred_engine.log_density(Xs) - float(np.log(self.scale_).sum())

    def score(self, X, y=None):
        """Mean log density (original units) of the rows of X."""
        return float(self.score_samples(X).mean())

    # ------------------------------------------------------------------ summaries
    def to_frame(self, min_weight: float = 0.0):
        """One row per component (sorted by weight): weight, means and sds per column (original units)."""
        import pandas as pd

        self._check_fitted()
        names = self.feature_names_ or [f"x{a}" for a in range(self.p_)]
        order = np.argsort(-self.weights_)
        order = order[self.weights_[order] >= min_weight]
        data = {"component": order, "weight": self.weights_[order]}
        for a, nm in enumerate(names):
            data[f"mean_{nm}"] = self.means_[order, a]
        for a, nm in enumerate(names):
            data[f"sd_{nm}"] = np.sqrt(self.covariances_[order, a, a])
        return pd.DataFrame(data)

    def summary(self, min_weight: float = 0.01) -> str:
        """Text table of the components with weight >= ``min_weight``."""
        head = (
            f"TDP Gaussian mixture ({self.method}, k={self.n_components}, n={self.n_}, p={self.p_}, "
            f"backend={self.backend_}); alpha = {self.alpha_:.4g}\n"
        )
        return head + self.to_frame(min_weight).to_string(index=False, float_format=lambda v: f"{v:.4g}")

    def to_dict(self) -> dict:
        """Plain-Python summary (JSON-serialisable) of the fitted parameters, original units."""
        self._check_fitted()
        return {
            "method": self.method,
            "n_components": self.n_components,
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
