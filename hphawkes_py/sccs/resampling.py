"""Fits over reweighted strata: K-fold cross-validation of the prior variance, and the bootstrap.

Both reuse one engine per job and express a fold's training set or a resample as stratum
weights (0/1 or multiplicities), so no data are copied; jobs run through an executor
(:func:`hphawkes_py._parallel.run_replicates`) with seeds that do not depend on it.
"""
from __future__ import annotations

import math
import warnings
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .._backend import threads_context
from .._parallel import run_replicates
from .._progress import progress_bar
from .._validate import as_float_array, check_int, check_random_state
from .ccd import MLEWarning, coordinate_descent, infinite_coefficients, infinite_signs
from .data import SCCSData
from .engine import make_engine
from .model import check_controls, check_data, check_run, fit
from .priors import check_prior, check_spline_prior, prior_spec
from .results import BootstrapResult, CVResult

__all__ = ["cross_validate", "bootstrap", "DEFAULT_GRID"]

#: Default CV grid: Cyclops' grid search defaults (lowerLimit=0.01, upperLimit=20, gridSteps=10), log-spaced.
DEFAULT_GRID = tuple(float(v) for v in np.geomspace(0.01, 20.0, 10))


def _fold_job(fold, seed_seq, data, fold_of_stratum, spec, grid, tolerance, max_iterations, convergence,
              backend, threads, dtype):
    """Fit on the training strata along the grid (warm starts); held-out log-likelihood per variance."""
    train = (fold_of_stratum != fold).astype(np.float64)
    held = ~train.astype(bool)
    out = np.empty(len(grid))
    with threads_context(threads):
        engine = make_engine(data, backend=backend, weights=train, dtype=dtype)
        beta = None
        for g, v in enumerate(grid):
            beta = coordinate_descent(engine, spec=spec.with_default_variance(v), tolerance=tolerance,
                                      max_iterations=max_iterations, beta0=beta, convergence=convergence).beta
            out[g] = float(engine.stratum_log_likelihood(beta)[held].sum())
    return out


def _fold_job_at(fold, seed_seq, data, fold_of_stratum, spec, variance, starts, tolerance, max_iterations,
                 convergence, backend, threads, dtype):
    """One fold at one variance from a warm start: (held-out log-likelihood, coefficients)."""
    train = (fold_of_stratum != fold).astype(np.float64)
    held = ~train.astype(bool)
    with threads_context(threads):
        engine = make_engine(data, backend=backend, weights=train, dtype=dtype)
        beta = coordinate_descent(engine, spec=spec.with_default_variance(variance), tolerance=tolerance,
                                  max_iterations=max_iterations, beta0=starts[fold], convergence=convergence).beta
        return float(engine.stratum_log_likelihood(beta)[held].sum()), beta


#: Auto search (Cyclops' UniModalSearch): variance factor of the bracketing steps, stop when the
#: fitted parabola's maximum is within AUTO_STOP_X (log variance) of the best variance tried or
#: promises a relative gain below AUTO_STOP_Y, and at most AUTO_MAX_STEPS variances.
AUTO_START, AUTO_FACTOR, AUTO_STOP_X, AUTO_STOP_Y, AUTO_MAX_STEPS = 1.0, 10.0, math.log(1.5), 0.01, 20
#: The search never leaves [AUTO_LIMITS[0], AUTO_LIMITS[1]] (a maximum at a limit is reported there).
AUTO_LIMITS = (1e-6, 1e6)


def _auto_next(tried: dict) -> tuple[bool, float]:
    """Next variance of the unimodal search over ``tried`` = {variance: (mean, se)}:
    (go on, variance). Bracket the maximum by factors of AUTO_FACTOR (first towards smaller
    variances, the safer side numerically), then fit a parabola in log variance to all points
    (weights 1/se) and go to its maximum."""
    xs = sorted(tried)
    means = np.array([tried[x][0] for x in xs])
    best = xs[int(np.argmax(means))]
    if len(xs) == 1:
        return True, xs[0] / AUTO_FACTOR
    if len(xs) == 2:
        return True, (xs[0] / AUTO_FACTOR if means[0] > means[1] else xs[1] * AUTO_FACTOR)
    if best == xs[0]:
        nxt = best / AUTO_FACTOR
        return nxt >= AUTO_LIMITS[0], nxt
    if best == xs[-1]:
        nxt = best * AUTO_FACTOR
        return nxt <= AUTO_LIMITS[1], nxt
    se = np.array([tried[x][1] for x in xs])
    pos = se[se > 0]
    w = np.where(se > 0, 1.0 / np.where(se > 0, se, 1.0), 1.0 / pos.min() if pos.size else 1.0)
    lx = np.log(xs)
    A = np.vstack([np.ones_like(lx), lx, lx * lx]).T
    c0, c1, c2 = np.linalg.lstsq(A * w[:, None], means * w, rcond=None)[0]
    if not c2 < 0:  # not concave: the bracket is the answer
        return False, best
    arg = -c1 / (2.0 * c2)
    expected = c0 - c1 * c1 / (4.0 * c2)
    top = float(means.max())
    nxt = float(np.exp(np.clip(arg, math.log(xs[0]), math.log(xs[-1]))))
    go = top != 0 and (expected - top) / abs(top) >= AUTO_STOP_Y and abs(arg - math.log(best)) >= AUTO_STOP_X
    # a proposal that was tried already adds nothing
    go = go and not any(abs(math.log(nxt / x)) < 1e-9 for x in xs)
    return go, nxt


def _cv_auto(data, fold_of_stratum, folds, spec, tolerance, max_iterations, convergence, resolved, threads, dtype,
             executor, progress):
    """Auto-searched variances: every step fits all folds at one variance, each fold warm-started
    from its own coefficients at the nearest variance tried so far."""
    tried, fold_at, betas = {}, {}, {}
    v = AUTO_START
    engine = None
    if executor is None:
        # in this process one engine serves every fold (set_weights switches the training
        # strata: no per-fold copies of the O(nnz) state)
        with threads_context(threads):
            engine = make_engine(data, backend=resolved, dtype=dtype)
    n_steps = 0
    for _ in range(AUTO_MAX_STEPS):
        n_steps += 1
        starts = betas[min(betas, key=lambda x: abs(math.log(x / v)))] if betas else [None] * folds
        if engine is not None:
            res = []
            with threads_context(threads), progress_bar(total=folds, desc=f"CV folds at {v:.3g}",
                                                        enabled=progress) as bar:
                for k in range(folds):
                    train = (fold_of_stratum != k).astype(np.float64)
                    engine.set_weights(train)
                    # the first variance: fold k starts where fold k - 1 ended (the training sets
                    # share (folds - 2) / (folds - 1) of their strata), later ones from the fold's own
                    # fit at the nearest variance
                    b0 = starts[k] if starts[k] is not None else (res[-1][1] if res else None)
                    beta = coordinate_descent(engine, spec=spec.with_default_variance(v), tolerance=tolerance,
                                              max_iterations=max_iterations, beta0=b0, convergence=convergence).beta
                    res.append((float(engine.stratum_log_likelihood(beta)[train == 0].sum()), beta))
                    bar.update(1)
        else:
            res = run_replicates(
                _fold_job_at, range(folds), seed=0, executor=executor, progress=progress,
                desc=f"CV folds at {v:.3g}",
                args=(data, fold_of_stratum, spec, v, starts, tolerance, max_iterations, convergence, resolved,
                      threads, dtype),
            )
        sc = np.array([r[0] for r in res])
        betas[v] = [r[1] for r in res]
        fold_at[v] = sc
        tried[v] = (float(sc.mean()), float(sc.std(ddof=1) / math.sqrt(folds)))
        go, v = _auto_next(tried)
        if not go or v in tried:
            break
    grid = np.array(sorted(tried))
    return grid, np.vstack([fold_at[x] for x in grid]).T


def cross_validate(
    data: SCCSData,
    *,
    prior: str = "laplace",
    folds: int = 10,
    grid: Sequence[float] | None = None,
    seed: Any = None,
    executor: Any = None,
    exclude: Sequence[Any] = (),
    priors: Sequence[tuple] | None = None,
    spline_prior: str = "normal",
    spline_variance: float | None = 1.0,
    tolerance: float = 1e-6,
    max_iterations: int = 1000,
    convergence: str = "auto",
    progress: bool = True,
    backend: str = "auto",
    threads: int | None = None,
    dtype=np.float64,
) -> CVResult:
    """Choose the prior variance by K-fold cross-validation over strata.

    Strata (persons) are assigned to ``folds`` folds at random (``seed``), as evenly as
    possible. For each fold the model is fitted on the other folds (as stratum weights
    0/1, no data copies) along ``grid`` from the smallest variance up, each fit starting
    from the previous one (warm starts), and scored by the held-out conditional
    log-likelihood of the fold's strata. The variance with the largest mean score is
    chosen and the model refitted on all data. Only the coefficients governed by
    ``prior``/``variance`` are tuned; ``exclude`` and per-group ``priors`` stay as given.

    ``grid`` defaults to :data:`DEFAULT_GRID`, 10 log-spaced variances from 0.01 to 20
    (Cyclops' grid-search defaults). ``grid="auto"`` searches instead (Cyclops'
    ``cvType = "auto"``, its UniModalSearch): start at variance 1, step by factors of 10 until
    the mean held-out score has an interior maximum, then repeatedly go to the maximum of a
    parabola fitted (in log variance, weights 1/se) to all scores, until the proposal is
    within a factor 1.5 of the best variance or promises a relative gain below 1%; the best
    variance tried is chosen. Each fold is warm-started from its own fit at the nearest
    variance tried. Folds run through ``executor``
    (see :func:`hphawkes_py._parallel.run_replicates`).

    Parameters
    ----------
    data : SCCSData
        The design.
    prior : {"laplace", "normal"}
        The prior whose variance is tuned.
    folds : int
        Number of folds (>= 2, at most the number of strata).
    grid : sequence of float or "auto", optional
        Variances to try (> 0); default :data:`DEFAULT_GRID`; ``"auto"`` searches (see above).
    seed : None, int or Generator
        Seed of the assignment of strata to folds.
    executor : None, concurrent.futures.Executor or dask.distributed.Client
        Where the folds run; ``None`` runs them in this process.
    exclude, priors, spline_prior, spline_variance, tolerance, max_iterations, convergence : optional
        As in :func:`fit`; not tuned.
    progress, backend, threads, dtype : optional
        As in :func:`fit`; ``progress`` counts folds.

    Returns
    -------
    CVResult
        The chosen variance, the scores of every variance tried and the refit on all data.

    Examples
    --------
    >>> data, _ = hp.sccs.simulate(n_cases=500, n_drugs=5, prevalence=0.3, fraction_positive=0.4, seed=1)
    >>> cv = hp.sccs.cross_validate(data, prior="normal", folds=3, grid=[0.01, 0.1, 1.0], seed=1,
    ...                             progress=False)
    >>> cv.variance
    0.1
    >>> cv.fit.variance, cv.fit.coefficients.round(2).tolist()
    (0.1, [0.03, 0.02, -0.02, 0.5, 0.15])
    """
    check_data(data)
    if prior == "none":
        raise ValueError("cross_validate needs a prior ('laplace' or 'normal'); prior='none' has no variance to tune")
    check_prior(prior, 1.0)
    tolerance, max_iterations, convergence = check_controls(tolerance, max_iterations, convergence)
    folds = check_int(folds, "folds", minimum=2)
    if folds > data.n_strata:
        raise ValueError(f"folds ({folds}) exceeds the number of strata ({data.n_strata})")
    auto = isinstance(grid, str)
    if auto and grid != "auto":
        raise ValueError(f"grid must be a list of variances or 'auto', got {grid!r}")
    grid = np.array([1.0]) if auto else np.sort(as_float_array(DEFAULT_GRID if grid is None else grid, "grid", ndim=1))
    if grid.size == 0 or np.any(grid <= 0):
        raise ValueError(f"grid must be a non-empty list of finite variances > 0, got {grid.tolist()}")
    spline_prior, spline_variance = check_spline_prior(spline_prior, spline_variance)
    spec = prior_spec(data, prior, 1.0, exclude, priors, (spline_prior, spline_variance))
    rng = check_random_state(seed)
    progress, dtype, threads, resolved = check_run(progress, dtype, threads, backend)
    fold_of_stratum = np.empty(data.n_strata, dtype=np.int64)
    fold_of_stratum[rng.permutation(data.n_strata)] = np.arange(data.n_strata) % folds
    if auto:
        grid, fold_scores = _cv_auto(data, fold_of_stratum, folds, spec, tolerance, max_iterations, convergence,
                                     resolved, threads, dtype, executor, progress)
    else:
        res = run_replicates(
            _fold_job, range(folds), seed=0, executor=executor, progress=progress, desc="CV folds",
            args=(data, fold_of_stratum, spec, grid, tolerance, max_iterations, convergence, resolved,
                  threads, dtype),
        )
        fold_scores = np.vstack(res)
    mean = fold_scores.mean(axis=0)
    se = fold_scores.std(axis=0, ddof=1) / math.sqrt(folds)
    scores = pd.DataFrame({"variance": grid, "mean": mean, "se": se, "total": fold_scores.sum(axis=0)})
    best = float(grid[int(np.argmax(mean))])
    full = fit(data, prior=prior, variance=best, exclude=exclude, priors=priors, spline_prior=spline_prior,
               spline_variance=spline_variance, tolerance=tolerance,
               max_iterations=max_iterations,
               convergence=convergence, progress=False, backend=resolved, threads=threads, dtype=dtype)
    return CVResult(variance=best, grid=grid, scores=scores, fit=full, folds=int(folds), fold_scores=fold_scores)


def _boot_job(rep, seed_seq, data, spec, tolerance, max_iterations, convergence, start, backend, threads, dtype):
    rng = np.random.default_rng(seed_seq)
    n = data.n_strata
    w = np.bincount(rng.integers(0, n, size=n), minlength=n).astype(np.float64)
    with threads_context(threads):
        engine = make_engine(data, backend=backend, weights=w, dtype=dtype)
        beta = coordinate_descent(engine, spec=spec, tolerance=tolerance, max_iterations=max_iterations, beta0=start,
                                  convergence=convergence).beta
        # a resample can separate an unpenalised coefficient that the full data do not: its
        # estimate is -inf or +inf, not where the coordinate descent stopped
        infinite = infinite_coefficients(engine, beta, spec.unpenalized) if spec.unpenalized.any() else []
    if infinite:
        beta = beta.copy()
        beta[infinite] = infinite_signs(data, w, beta, infinite) * np.inf
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
    priors: Sequence[tuple] | None = None,
    spline_prior: str = "normal",
    spline_variance: float | None = 1.0,
    tolerance: float = 1e-6,
    max_iterations: int = 1000,
    convergence: str = "auto",
    progress: bool = True,
    backend: str = "auto",
    threads: int | None = None,
    dtype=np.float64,
) -> BootstrapResult:
    """Nonparametric bootstrap over strata at a fixed prior.

    Each replicate draws ``n_strata`` strata with replacement and refits with each
    stratum weighted by its multiplicity (identical to duplicating the strata, without
    copying data), starting from the full-data estimate. Replicates run through
    ``executor`` with seeds from ``seed`` that do not depend on the executor.

    Parameters
    ----------
    data : SCCSData
        The design.
    prior : {"laplace", "normal", "none"}
        Prior of every fit.
    variance : float
        Its variance (> 0).
    replicates : int
        Number of resamples (>= 1).
    seed : None, int or Generator
        Root of the replicates' seeds (the same samples on any executor).
    executor : None, concurrent.futures.Executor or dask.distributed.Client
        Where the replicates run; ``None`` runs them in this process.
    exclude, priors, spline_prior, spline_variance, tolerance, max_iterations, convergence : optional
        As in :func:`fit`.
    progress, backend, threads, dtype : optional
        As in :func:`fit`; ``progress`` counts replicates.

    Returns
    -------
    BootstrapResult
        The replicates' estimates and the fit on the original data. A replicate whose
        resample separates an unpenalised coefficient (its maximum-likelihood estimate is
        infinite, see :func:`fit`) holds -inf or +inf for it, with an :class:`MLEWarning`.

    Examples
    --------
    With a Laplace prior, how often each drug is selected (a non-zero estimate) across
    resamples of the persons:

    >>> data, _ = hp.sccs.simulate(n_cases=500, n_drugs=5, prevalence=0.3, fraction_positive=0.4, seed=1)
    >>> boot = hp.sccs.bootstrap(data, prior="laplace", variance=0.1, replicates=20, seed=2, progress=False)
    >>> boot.fit.coefficients.round(2).tolist()
    [0.0, 0.0, 0.0, 0.55, 0.0]
    >>> boot.summary()["p_nonzero"].round(2).tolist()
    [0.1, 0.15, 0.0, 1.0, 0.2]
    """
    check_data(data)
    prior, variance = check_prior(prior, variance)
    tolerance, max_iterations, convergence = check_controls(tolerance, max_iterations, convergence)
    replicates = check_int(replicates, "replicates", minimum=1)
    check_random_state(seed)
    progress, dtype, threads, resolved = check_run(progress, dtype, threads, backend)
    full = fit(data, prior=prior, variance=variance, exclude=exclude, priors=priors, spline_prior=spline_prior,
               spline_variance=spline_variance, tolerance=tolerance,
               max_iterations=max_iterations, convergence=convergence, progress=False, backend=resolved,
               threads=threads, dtype=dtype)
    res = run_replicates(
        _boot_job, range(replicates), seed=seed, executor=executor, progress=progress, desc="bootstrap",
        args=(data, full.context.spec, tolerance, max_iterations, convergence, full.coefficients.to_numpy(), resolved,
              threads, dtype),
    )
    samples = pd.DataFrame(np.vstack(res), columns=pd.Index(data.covariate_ids, name="covariate_id"))
    samples.index.name = "replicate"
    n_inf = np.isinf(samples).sum()
    if n_inf.any():
        hit = n_inf[n_inf > 0]
        warnings.warn(
            f"in some resamples the maximum-likelihood estimate does not exist (separation, e.g. no events in the "
            f"exposed time of the resampled cases): replicates with an infinite estimate per covariate "
            f"{hit.to_dict()} of {replicates}; they are -inf/+inf in samples and the percentile interval is open on "
            "that side when they exceed its tail. Use a prior for these covariates.",
            MLEWarning, stacklevel=2)
    return BootstrapResult(samples=samples, fit=full, replicates=replicates, prior=prior, variance=variance)
