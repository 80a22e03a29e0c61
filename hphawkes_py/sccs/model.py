"""Bayesian SCCS by cyclic coordinate descent (Suchard et al. 2013, Algorithm 1).

The algorithm is written once here against an engine (:class:`~.cpu.CpuEngine` or
:class:`~.gpu.GpuEngine`) that owns the data and the state:

    g, h = engine.gradient_hessian(j)   # fused reduction over coordinate j's non-zeros
    delta = newton step with the prior, Laplace exact at zero, trust region
    engine.update(j, delta)              # sparse update of eta, time*exp(eta), D_s

Model: conditional Poisson (multinomial) log-likelihood with offset log(time) and
stratum weights ``w_s``

    l(b) = sum_s w_s [ sum_{i in s} y_i (x_i'b + log t_i) - n_s log sum_{i in s} t_i exp(x_i'b) ].

This is sum_i y_i log p_i with p_i the within-stratum probability of row i, i.e. the
conditional likelihood without the multinomial constant log(n_s! / prod y_i!) (zero when
every y_i is 0/1); it equals survival::clogit's logLik and Cyclops' SCCS log-likelihood on
the oxford example.

Priors (per coordinate, skipped for ``exclude``): Normal(0, variance),
log p = -log(2 pi v)/2 - b^2/(2v); Laplace with rate lambda = sqrt(2 / variance) (Cyclops),
log p = log(lambda/2) - lambda |b|.

Convergence: after each full cycle, ``|lp_new - lp_old| / (|lp_new| + 1) < tolerance`` with
lp the log posterior (Cyclops' "lange" criterion); ``converged`` records whether it was met
within ``max_iterations`` cycles.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .._backend import get_device, is_gpu_backend, resolve_backend, threads_context
from .._parallel import run_replicates
from .._progress import progress_bar
from .data import SCCSData

__all__ = [
    "SCCSFit",
    "CVResult",
    "BootstrapResult",
    "fit",
    "cross_validate",
    "bootstrap",
    "make_engine",
    "log_prior",
    "DEFAULT_GRID",
]

PRIORS = ("laplace", "normal", "none")
#: Default CV grid: Cyclops' grid search defaults (lowerLimit=0.01, upperLimit=20, gridSteps=10), log-spaced.
DEFAULT_GRID = tuple(float(v) for v in np.geomspace(0.01, 20.0, 10))
#: Initial trust-region half-width per coordinate (Genkin et al.; Cyclops' initialBound).
INITIAL_BOUND = 2.0


# ---------------------------------------------------------------------------- engines
def make_engine(data: SCCSData, *, backend: str = "auto", weights=None, dtype=np.float64):
    """Engine for ``data`` on the resolved backend (``cpu``, ``gpu`` or ``emulator``)."""
    resolved = resolve_backend(backend)
    if is_gpu_backend(resolved):
        from .gpu import GpuEngine

        return GpuEngine(data, weights=weights, device=get_device(resolved), backend=resolved, dtype=dtype)
    from .cpu import CpuEngine

    return CpuEngine(data, weights=weights)


# ---------------------------------------------------------------------------- priors
def _check_prior(prior: str, variance: float) -> tuple[str, float]:
    if prior not in PRIORS:
        raise ValueError(f"prior must be one of {PRIORS}, got {prior!r}")
    try:
        v = float(variance)
    except (TypeError, ValueError):
        raise TypeError(f"variance must be a positive number, got {variance!r}") from None
    if prior != "none" and not (math.isfinite(v) and v > 0):
        raise ValueError(f"variance must be finite and > 0, got {variance!r}")
    return prior, v


def log_prior(beta: np.ndarray, prior: str, variance: float, penalized: np.ndarray) -> float:
    """Log prior density of ``beta`` (sum over penalized coordinates)."""
    b = np.asarray(beta)[penalized]
    if prior == "none" or b.size == 0:
        return 0.0
    if prior == "normal":
        return float(-0.5 * b.size * math.log(2 * math.pi * variance) - 0.5 * np.dot(b, b) / variance)
    lam = math.sqrt(2.0 / variance)
    return float(b.size * math.log(lam / 2.0) - lam * np.abs(b).sum())


def _penalized_mask(data: SCCSData, prior: str, exclude: Sequence[Any]) -> np.ndarray:
    if isinstance(exclude, (str, bytes)) or np.isscalar(exclude):
        exclude = (exclude,)
    exclude = list(exclude)
    mask = np.ones(data.n_covariates, dtype=bool)
    if not exclude:
        return mask
    idx = pd.Index(data.covariate_ids).get_indexer(pd.Index(exclude))
    if np.any(idx < 0):
        unknown = [e for e, i in zip(exclude, idx) if i < 0]
        raise ValueError(f"exclude has covariate id(s) not in the data: {unknown[:10]}")
    mask[idx] = False
    return mask


# ---------------------------------------------------------------------------- CCD
def _newton_step(g: float, h: float, beta: float, prior: int, lam: float, inv_var: float) -> float:
    """Step for one coordinate. g = dl/db, h = -d2l/db2 (>= 0). prior: 0 none, 1 normal, 2 laplace."""
    if prior == 1:
        return (g - beta * inv_var) / (h + inv_var)
    if prior == 0:
        return g / h if h > 0 else 0.0
    # Laplace (Genkin et al. / Cyclops): minimise -l + lam|b| along the coordinate.
    if h <= 0:  # no information in the data: the prior's mode
        return -beta
    if beta == 0.0:
        # moving up costs lam, moving down gains lam: move only if |g| > lam (soft threshold)
        if g > lam:
            return (g - lam) / h
        if g < -lam:
            return (g + lam) / h
        return 0.0
    sgn = 1.0 if beta > 0 else -1.0
    delta = (g - sgn * lam) / h
    if (beta + delta) * sgn <= 0.0:  # would cross (or hit) zero: stop exactly at zero
        return -beta
    return delta


def _ccd(engine, *, prior, variance, penalized, tolerance, max_iterations, beta0=None, progress=False, desc=None):
    """Cyclic coordinate descent on ``engine``; returns (beta, log_likelihood, log_prior, iterations, converged)."""
    J = engine.n_covariates
    beta = np.zeros(J) if beta0 is None else np.array(beta0, dtype=np.float64)
    engine.set_beta(beta)
    codes = np.where(penalized, {"none": 0, "normal": 1, "laplace": 2}[prior], 0).tolist()
    lam = math.sqrt(2.0 / variance) if prior == "laplace" else 0.0
    inv_var = 1.0 / variance if prior == "normal" else 0.0
    bound = [INITIAL_BOUND] * J
    b = beta.tolist()
    ll = engine.log_likelihood(beta)
    lp_old = ll + log_prior(beta, prior, variance, penalized)
    converged = False
    it = 0
    gh = engine.gradient_hessian
    upd = engine.update
    with progress_bar(total=max_iterations, desc=desc or "CCD cycles", enabled=progress) as bar:
        for it in range(1, max_iterations + 1):
            for j in range(J):
                g, h = gh(j)
                delta = _newton_step(g, h, b[j], codes[j], lam, inv_var)
                # Genkin's trust region: |delta| <= Delta_j, then Delta_j = max(2|delta|, Delta_j / 2)
                bj = bound[j]
                if delta > bj:
                    delta = bj
                elif delta < -bj:
                    delta = -bj
                ad = abs(delta)
                bound[j] = max(2.0 * ad, 0.5 * bj)
                if delta != 0.0:
                    upd(j, delta)
                    nb = b[j] + delta
                    # a Laplace step that stops at zero must land exactly on zero
                    b[j] = 0.0 if (codes[j] == 2 and delta == -b[j]) else nb
            beta = np.asarray(b)
            ll = engine.log_likelihood(beta)
            lp = ll + log_prior(beta, prior, variance, penalized)
            bar.update(1)
            if not math.isfinite(lp):
                break
            if abs(lp - lp_old) / (abs(lp) + 1.0) < tolerance:
                converged = True
                break
            lp_old = lp
    beta = np.asarray(b)
    return beta, ll, log_prior(beta, prior, variance, penalized), it, converged


# ---------------------------------------------------------------------------- results
@dataclass(frozen=True, eq=False)
class SCCSFit:
    """Maximum a posteriori (or maximum likelihood, ``prior="none"``) SCCS fit.

    Attributes
    ----------
    coefficients : Series
        Log relative risks indexed by covariate_id (exp() gives incidence rate ratios).
    log_likelihood : float
        Conditional log-likelihood at the estimate (see :mod:`.model`).
    log_prior : float
        Log prior density at the estimate (0 for ``prior="none"``).
    iterations : int
        CCD cycles (one cycle visits every coordinate once).
    converged : bool
        Whether the relative change of the log posterior fell below ``tolerance``.
    prior, variance : str, float
        The prior and its variance (Laplace rate sqrt(2/variance)).
    backend : str
        Engine that ran ("cpu", "gpu" or "emulator").
    exclude : tuple
        Covariate ids fitted without prior.
    tolerance : float
    """

    coefficients: pd.Series
    log_likelihood: float
    log_prior: float
    iterations: int
    converged: bool
    prior: str
    variance: float
    backend: str
    exclude: tuple = ()
    tolerance: float = 1e-6

    @property
    def log_posterior(self) -> float:
        """log_likelihood + log_prior (unnormalised log posterior)."""
        return self.log_likelihood + self.log_prior

    def to_frame(self) -> pd.DataFrame:
        """Coefficient table: covariate_id, coefficient (log RR), relative_risk."""
        return pd.DataFrame(
            {
                "covariate_id": self.coefficients.index,
                "coefficient": self.coefficients.to_numpy(),
                "relative_risk": np.exp(self.coefficients.to_numpy()),
            }
        )

    def summary(self) -> pd.DataFrame:
        return self.to_frame()

    def to_dict(self) -> dict:
        return {
            "coefficients": self.coefficients.to_dict(),
            "log_likelihood": self.log_likelihood,
            "log_prior": self.log_prior,
            "iterations": self.iterations,
            "converged": self.converged,
            "prior": self.prior,
            "variance": self.variance,
            "backend": self.backend,
        }

    def __repr__(self) -> str:
        nz = int((self.coefficients != 0).sum())
        return (
            f"SCCSFit(prior={self.prior!r}, variance={self.variance:g}, n_covariates={len(self.coefficients)}, "
            f"nonzero={nz}, log_likelihood={self.log_likelihood:.6f}, log_prior={self.log_prior:.6f}, "
            f"iterations={self.iterations}, converged={self.converged}, backend={self.backend!r})"
        )


@dataclass(frozen=True, eq=False)
class CVResult:
    """Cross-validated choice of the prior variance.

    Attributes
    ----------
    variance : float
        The grid variance with the largest mean held-out predictive log-likelihood.
    grid : ndarray
        Variances tried (ascending).
    scores : DataFrame
        One row per variance: ``variance``, ``mean`` (mean over folds of the held-out
        conditional log-likelihood of the fold's strata), ``se`` (its standard error,
        sd / sqrt(folds)), ``total`` (sum over folds).
    fit : SCCSFit
        Refit on all data at ``variance``.
    folds : int
    fold_scores : ndarray (folds, len(grid))
    """

    variance: float
    grid: np.ndarray
    scores: pd.DataFrame
    fit: SCCSFit
    folds: int
    fold_scores: np.ndarray

    def summary(self) -> pd.DataFrame:
        return self.scores

    def __repr__(self) -> str:
        return f"CVResult(variance={self.variance:g}, folds={self.folds}, grid={len(self.grid)} values, fit={self.fit!r})"


@dataclass(frozen=True, eq=False)
class BootstrapResult:
    """Stratum (person) bootstrap of the MAP estimate at a fixed prior variance.

    Attributes
    ----------
    samples : DataFrame (replicates x covariates)
        Estimates on each resample (columns = covariate_id).
    fit : SCCSFit
        The estimate on the original data.
    """

    samples: pd.DataFrame
    fit: SCCSFit
    replicates: int
    prior: str
    variance: float

    def summary(self, level: float = 0.95) -> pd.DataFrame:
        """Per covariate: estimate (original data), percentile interval ``lower``/``upper``
        at ``level``, and ``p_nonzero`` (share of replicates with a non-zero estimate)."""
        a = (1.0 - level) / 2.0
        s = self.samples
        return pd.DataFrame(
            {
                "estimate": self.fit.coefficients,
                "lower": s.quantile(a),
                "upper": s.quantile(1.0 - a),
                "p_nonzero": (s != 0).mean(),
            }
        )

    def __repr__(self) -> str:
        return f"BootstrapResult(replicates={self.replicates}, prior={self.prior!r}, variance={self.variance:g})"


# ---------------------------------------------------------------------------- public API
def _check_data(data):
    if not isinstance(data, SCCSData):
        raise TypeError(f"data must be an SCCSData (use SCCSData.from_long / from_eras), got {type(data).__name__}")


def _check_controls(tolerance, max_iterations):
    if not (isinstance(tolerance, (int, float)) and math.isfinite(tolerance) and tolerance > 0):
        raise ValueError(f"tolerance must be a finite number > 0, got {tolerance!r}")
    if isinstance(max_iterations, bool) or not isinstance(max_iterations, (int, np.integer)) or max_iterations < 1:
        raise ValueError(f"max_iterations must be an integer >= 1, got {max_iterations!r}")


def fit(
    data: SCCSData,
    *,
    prior: str = "laplace",
    variance: float = 1.0,
    exclude: Sequence[Any] = (),
    tolerance: float = 1e-6,
    max_iterations: int = 1000,
    weights=None,
    start=None,
    progress: bool = False,
    backend: str = "auto",
    threads: int | None = None,
) -> SCCSFit:
    """Fit the Bayesian SCCS model by cyclic coordinate descent.

    Parameters
    ----------
    data : SCCSData
    prior : {"laplace", "normal", "none"}
        Laplace (rate sqrt(2/variance)), Normal(0, variance), or none (conditional MLE).
    variance : float
        Prior variance (> 0; ignored for ``"none"``).
    exclude : sequence
        Covariate ids without prior (e.g. the exposure of interest).
    tolerance : float
        Stop when |lp_new - lp_old| / (|lp_new| + 1) < tolerance after a cycle.
    max_iterations : int
        Maximum number of CCD cycles.
    weights : array (n_strata,), optional
        Non-negative stratum weights (multiplicities); used by bootstrap and CV.
    start : array or Series, optional
        Starting coefficients (warm start); default zeros.
    progress : bool
        Show a bar of CCD cycles.
    backend, threads
        Engine selection and CPU threads.

    Returns
    -------
    SCCSFit
    """
    _check_data(data)
    prior, variance = _check_prior(prior, variance)
    _check_controls(tolerance, max_iterations)
    penalized = _penalized_mask(data, prior, exclude)
    if weights is not None:
        weights = np.asarray(weights, dtype=np.float64)
        if weights.shape != (data.n_strata,) or not np.all(np.isfinite(weights)) or np.any(weights < 0):
            raise ValueError(f"weights must be {data.n_strata} finite non-negative numbers (one per stratum)")
    beta0 = None
    if start is not None:
        beta0 = np.asarray(start.reindex(data.covariate_ids).fillna(0.0) if isinstance(start, pd.Series) else start,
                           dtype=np.float64)
        if beta0.shape != (data.n_covariates,) or not np.all(np.isfinite(beta0)):
            raise ValueError(f"start must hold {data.n_covariates} finite coefficients")
    resolved = resolve_backend(backend)
    with threads_context(threads):
        engine = make_engine(data, backend=resolved, weights=weights)
        beta, ll, lpr, it, conv = _ccd(
            engine, prior=prior, variance=variance, penalized=penalized, tolerance=tolerance,
            max_iterations=int(max_iterations), beta0=beta0, progress=progress,
        )
    return _make_fit(data, beta, ll, lpr, it, conv, prior, variance, resolved, exclude, tolerance)


def _make_fit(data, beta, ll, lpr, it, conv, prior, variance, backend, exclude, tolerance):
    if isinstance(exclude, (str, bytes)) or np.isscalar(exclude):
        exclude = (exclude,)
    return SCCSFit(
        coefficients=pd.Series(beta, index=pd.Index(data.covariate_ids, name="covariate_id"), name="coefficient"),
        log_likelihood=float(ll),
        log_prior=float(lpr),
        iterations=int(it),
        converged=bool(conv),
        prior=prior,
        variance=float(variance),
        backend=backend,
        exclude=tuple(exclude),
        tolerance=float(tolerance),
    )


def _fold_job(fold, seed_seq, data, fold_of_stratum, prior, grid, penalized, tolerance, max_iterations, backend, threads):
    """Fit on the training strata along the grid (warm starts); held-out log-likelihood per variance."""
    train = (fold_of_stratum != fold).astype(np.float64)
    held = ~train.astype(bool)
    out = np.empty(len(grid))
    with threads_context(threads):
        engine = make_engine(data, backend=backend, weights=train)
        beta = None
        for g, v in enumerate(grid):
            beta, *_ = _ccd(engine, prior=prior, variance=v, penalized=penalized, tolerance=tolerance,
                            max_iterations=max_iterations, beta0=beta)
            out[g] = float(engine.stratum_log_likelihood(beta)[held].sum())
    return out


def cross_validate(
    data: SCCSData,
    *,
    prior: str = "laplace",
    folds: int = 10,
    grid: Sequence[float] | None = None,
    seed: Any = None,
    executor: Any = None,
    exclude: Sequence[Any] = (),
    tolerance: float = 1e-6,
    max_iterations: int = 1000,
    progress: bool = False,
    backend: str = "auto",
    threads: int | None = None,
) -> CVResult:
    """Choose the prior variance by K-fold cross-validation over strata.

    Strata (persons) are assigned to ``folds`` folds at random (``seed``), as evenly as
    possible. For each fold the model is fitted on the other folds (as stratum weights
    0/1, no data copies) along ``grid`` from the smallest variance up, each fit starting
    from the previous one (warm starts), and scored by the held-out conditional
    log-likelihood of the fold's strata. The variance with the largest mean score is
    chosen and the model refitted on all data.

    ``grid`` defaults to :data:`DEFAULT_GRID`, 10 log-spaced variances from 0.01 to 20
    (Cyclops' grid-search defaults). Folds run through ``executor``
    (see :func:`hphawkes_py._parallel.run_replicates`).
    """
    _check_data(data)
    if prior == "none":
        raise ValueError("cross_validate needs a prior ('laplace' or 'normal'); prior='none' has no variance to tune")
    _check_prior(prior, 1.0)
    _check_controls(tolerance, max_iterations)
    if isinstance(folds, bool) or not isinstance(folds, (int, np.integer)) or folds < 2:
        raise ValueError(f"folds must be an integer >= 2, got {folds!r}")
    if folds > data.n_strata:
        raise ValueError(f"folds ({folds}) exceeds the number of strata ({data.n_strata})")
    grid = np.sort(np.asarray(DEFAULT_GRID if grid is None else grid, dtype=np.float64).ravel())
    if grid.size == 0 or not np.all(np.isfinite(grid)) or np.any(grid <= 0):
        raise ValueError("grid must be a non-empty list of finite variances > 0")
    penalized = _penalized_mask(data, prior, exclude)
    resolved = resolve_backend(backend)
    rng = np.random.default_rng(seed)
    fold_of_stratum = np.empty(data.n_strata, dtype=np.int64)
    fold_of_stratum[rng.permutation(data.n_strata)] = np.arange(data.n_strata) % folds
    res = run_replicates(
        _fold_job, range(folds), seed=0, executor=executor, progress=progress, desc="CV folds",
        args=(data, fold_of_stratum, prior, grid, penalized, tolerance, int(max_iterations), resolved, threads),
    )
    fold_scores = np.vstack(res)
    mean = fold_scores.mean(axis=0)
    se = fold_scores.std(axis=0, ddof=1) / math.sqrt(folds)
    scores = pd.DataFrame({"variance": grid, "mean": mean, "se": se, "total": fold_scores.sum(axis=0)})
    best = float(grid[int(np.argmax(mean))])
    full = fit(data, prior=prior, variance=best, exclude=exclude, tolerance=tolerance,
               max_iterations=max_iterations, backend=resolved, threads=threads)
    return CVResult(variance=best, grid=grid, scores=scores, fit=full, folds=int(folds), fold_scores=fold_scores)


def _boot_job(rep, seed_seq, data, prior, variance, penalized, tolerance, max_iterations, start, backend, threads):
    rng = np.random.default_rng(seed_seq)
    n = data.n_strata
    w = np.bincount(rng.integers(0, n, size=n), minlength=n).astype(np.float64)
    with threads_context(threads):
        engine = make_engine(data, backend=backend, weights=w)
        beta, *_ = _ccd(engine, prior=prior, variance=variance, penalized=penalized, tolerance=tolerance,
                        max_iterations=max_iterations, beta0=start)
    return beta


def bootstrap(
    data: SCCSData,
    *,
    prior: str = "laplace",
    variance: float = 1.0,
    replicates: int = 200,
    seed: Any = None,
    executor: Any = None,
    exclude: Sequence[Any] = (),
    tolerance: float = 1e-6,
    max_iterations: int = 1000,
    progress: bool = False,
    backend: str = "auto",
    threads: int | None = None,
) -> BootstrapResult:
    """Nonparametric bootstrap over strata at a fixed prior.

    Each replicate draws ``n_strata`` strata with replacement and refits with each
    stratum weighted by its multiplicity (identical to duplicating the strata, without
    copying data), starting from the full-data estimate. Replicates run through
    ``executor`` with seeds from ``seed`` that do not depend on the executor.
    """
    _check_data(data)
    prior, variance = _check_prior(prior, variance)
    _check_controls(tolerance, max_iterations)
    if isinstance(replicates, bool) or not isinstance(replicates, (int, np.integer)) or replicates < 1:
        raise ValueError(f"replicates must be an integer >= 1, got {replicates!r}")
    penalized = _penalized_mask(data, prior, exclude)
    resolved = resolve_backend(backend)
    full = fit(data, prior=prior, variance=variance, exclude=exclude, tolerance=tolerance,
               max_iterations=max_iterations, backend=resolved, threads=threads)
    res = run_replicates(
        _boot_job, range(int(replicates)), seed=seed, executor=executor, progress=progress, desc="bootstrap",
        args=(data, prior, variance, penalized, tolerance, int(max_iterations), full.coefficients.to_numpy(),
              resolved, threads),
    )
    samples = pd.DataFrame(np.vstack(res), columns=pd.Index(data.covariate_ids, name="covariate_id"))
    samples.index.name = "replicate"
    return BootstrapResult(samples=samples, fit=full, replicates=int(replicates), prior=prior, variance=variance)
