"""Bayesian SCCS by cyclic coordinate descent (Suchard et al. 2013): the model and :func:`fit`.

The algorithm (:mod:`.ccd`) is written once against an engine (:class:`~.cpu.CpuEngine` or
:class:`~.gpu.GpuEngine`) that owns the data and the state; the priors are in :mod:`.priors`,
the results in :mod:`.results`, cross-validation and the bootstrap in :mod:`.resampling`.

Model: conditional Poisson (multinomial) log-likelihood with offset log(time) and
stratum weights ``w_s``

    l(b) = sum_s w_s [ sum_{i in s} y_i (x_i'b + log t_i) - n_s log sum_{i in s} t_i exp(x_i'b) ].

This is sum_i y_i log p_i with p_i the within-stratum probability of row i, i.e. the
conditional likelihood without the multinomial constant log(n_s! / prod y_i!) (zero when
every y_i is 0/1); it equals survival::clogit's logLik and Cyclops' SCCS log-likelihood on
the oxford example.

Priors (per coordinate, skipped for ``exclude``; per-group types and variances through
``priors=``, see :class:`~.priors.PriorSpec`): Normal(0, variance),
``log p = -log(2 pi v)/2 - b^2/(2v)``; Laplace with rate ``lambda = sqrt(2 / variance)`` (Cyclops),
``log p = log(lambda/2) - lambda |b|``.

Convergence, checked after each full cycle: ``"relative"``,
``|lp_new - lp_old| / (|lp_new| + 1) < tolerance`` with lp the log posterior (Cyclops' "lange"
criterion), or ``"gradient"``, the largest KKT residual (``|subgradient|`` of lp) ``< tolerance *
(|lp| + 1)``; ``converged`` records whether the rule was met within ``max_iterations``
cycles and every estimate is finite, ``stopped_by`` which rule ended the fit.
"""
from __future__ import annotations

import functools
import warnings
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .._backend import resolve_backend, threads_context
from .._validate import (as_float_array, check_bool, check_dtype, check_in, check_int, check_positive, check_threads,
                         describe)
from .ccd import coordinate_descent, infinite_coefficients, infinite_signs
from .data import SCCSData
from .engine import make_engine
from .priors import check_prior, check_spline_prior, normalise_ids, prior_spec
from .results import FitContext, MLEWarning, SCCSFit

__all__ = ["fit", "check_data", "check_controls", "check_run", "CONVERGENCE", "GRADIENT_RULE_BELOW"]

CONVERGENCE = ("auto", "relative", "gradient")
#: ``convergence="auto"`` uses the gradient rule at tolerances at or below this (the relative
#: change of the log posterior stops early on flat optima, see :func:`fit`).
GRADIENT_RULE_BELOW = 1e-8


def check_data(data):
    if not isinstance(data, SCCSData):
        raise TypeError(f"data must be an SCCSData (use SCCSData.from_long / from_eras), got {type(data).__name__}")


def check_controls(tolerance, max_iterations, convergence="auto"):
    tolerance = check_positive(tolerance, "tolerance")
    max_iterations = check_int(max_iterations, "max_iterations", minimum=1)
    if not isinstance(convergence, str):
        raise TypeError(f"convergence must be one of {CONVERGENCE}, got {describe(convergence)}")
    check_in(convergence, "convergence", CONVERGENCE)
    if convergence == "auto":
        convergence = "gradient" if tolerance <= GRADIENT_RULE_BELOW else "relative"
    return tolerance, max_iterations, convergence


def check_run(progress, dtype, threads, backend):
    """The run settings every entry point shares, checked in one place; the backend is
    resolved here, once per public call."""
    return check_bool(progress, "progress"), check_dtype(dtype), check_threads(threads), resolve_backend(backend)


def _check_weights(data, weights):
    if weights is None:
        return None
    w = as_float_array(weights, "weights", ndim=1, shape=(data.n_strata,))
    if np.any(w < 0):
        i = int(np.argmax(w < 0))
        raise ValueError(f"weights must be non-negative (one per stratum); weights[{i}] = {float(w[i])!r}")
    if not np.any((w > 0) & (data.n_events > 0)):
        what = "all zero" if not w.any() else "zero on every stratum with events"
        raise ValueError(f"weights are {what}: no stratum would contribute to the likelihood, so there is "
                         "nothing to fit; give at least one stratum with events a weight > 0")
    return w


def _check_start(data, start):
    if start is None:
        return None
    if isinstance(start, pd.Series):
        unknown = start.index.difference(pd.Index(data.covariate_ids))
        if len(unknown):
            raise ValueError(f"start has covariate id(s) not in the data: {list(unknown[:10])}")
        start = start.reindex(data.covariate_ids).fillna(0.0)
    return as_float_array(start, "start", ndim=1, shape=(data.n_covariates,))



def fit(
    data: SCCSData,
    *,
    prior: str = "laplace",
    variance: float = 1.0,
    exclude: Sequence[Any] = (),
    priors: Sequence[tuple] | None = None,
    spline_prior: str = "normal",
    spline_variance: float | None = 1.0,
    tolerance: float = 1e-6,
    max_iterations: int = 1000,
    convergence: str = "auto",
    weights=None,
    start=None,
    progress: bool = True,
    backend: str = "auto",
    threads: int | None = None,
    dtype=np.float64,
) -> SCCSFit:
    """Fit the Bayesian SCCS model by cyclic coordinate descent.

    Parameters
    ----------
    data : SCCSData
        The design (strata, rows, sparse covariates).
    prior : {"laplace", "normal", "none"}
        Laplace (rate sqrt(2/variance)), Normal(0, variance), or none (conditional MLE).
    variance : float
        Prior variance (> 0; ignored for ``"none"``).
    exclude : sequence
        Covariate ids without prior (e.g. the exposure of interest; Cyclops' ``exclude``).
    priors : list of (ids, prior, variance), optional
        Per-group priors overriding ``prior``/``variance`` for the listed covariate ids,
        e.g. ``[(age_ids, "normal", 10.0), (["drugA"], "none", None)]``. A covariate may be in
        one group only, and not also in ``exclude``.
    spline_prior, spline_variance : str, float or None
        Prior of the age/season/calendar-time spline coefficients of the design
        (:meth:`SCCSData.from_eras` ``age_knots=`` ...) that ``exclude``/``priors`` do not
        name: Normal(0, 1) by default, separate from the drug prior and not tuned by
        cross-validation; ``"none"`` fits them unpenalised (SelfControlledCaseSeries'
        default ``allowRegularization = FALSE``). ``spline_variance=None`` is an infinite
        variance, a flat prior: unpenalised as with ``"none"`` (the fit then records
        ``spline_prior="none"``).
    tolerance : float
        Convergence tolerance (> 0) of the rule chosen by ``convergence``.
    max_iterations : int
        Maximum number of CCD cycles.
    convergence : {"auto", "relative", "gradient"}
        ``"relative"``: stop when ``|lp_new - lp_old| / (|lp_new| + 1) < tolerance`` after a cycle
        (lp = log posterior; Cyclops' default). It can stop early on flat optima. ``"gradient"``:
        stop when the largest KKT residual (``|subgradient|`` of the log posterior over the
        coordinates) is ``< tolerance * (|lp| + 1)``, which bounds the distance to the optimum.
        ``"auto"`` (default): ``"gradient"`` when ``tolerance <= 1e-8``, else ``"relative"``.
        The result's ``stopped_by`` says which rule ended the fit.
    weights : array (n_strata,), optional
        Non-negative, finite stratum weights (multiplicities); used by bootstrap and CV. At
        least one stratum with events must have a weight > 0.
    start : array or Series, optional
        Starting coefficients (warm start); default zeros.
    progress : bool
        Show a bar of CCD cycles on stderr.
    backend : {"auto", "cpu", "gpu", "emulator"}
        Engine: Numba on the CPU, CUDA on a GPU, or the CUDA kernels on the CPU emulator;
        ``"auto"`` takes the GPU when one is usable.
    threads : int, optional
        CPU threads (Numba); None leaves the current setting.
    dtype : numpy.float64 or numpy.float32
        Storage precision of the engine state (the CCD itself runs in float64).

    Returns
    -------
    SCCSFit
        When the maximum-likelihood estimate of an unpenalised coefficient does not exist
        (separation, e.g. an exposure whose person-time has no events; detected from the data
        whatever the tolerance, and along the fit), an :class:`MLEWarning` is issued,
        ``infinite`` names the coefficients and ``converged`` is False.

    See Also
    --------
    cross_validate : choose ``variance`` by cross-validation.
    bootstrap : resample strata at a fixed prior.

    Examples
    --------
    Two of five drugs raise the risk (log relative risks 0.405 and 0.693):

    >>> data, truth = hp.sccs.simulate(n_cases=500, n_drugs=5, prevalence=0.3, fraction_positive=0.4, seed=1)
    >>> truth.round(3).tolist()
    [0.0, 0.0, 0.405, 0.693, 0.0]
    >>> result = hp.sccs.fit(data, prior="normal", variance=1.0, progress=False)
    >>> result.coefficients.round(2).tolist()
    [0.06, 0.03, -0.06, 0.82, 0.32]
    >>> result.converged
    True

    A Laplace prior sets weak effects exactly to zero; ``exclude`` leaves a drug unpenalised:

    >>> lasso = hp.sccs.fit(data, prior="laplace", variance=0.1, exclude=[4], progress=False)
    >>> lasso.coefficients.round(2).tolist()
    [0.0, 0.0, 0.0, 0.88, 0.0]
    """
    check_data(data)
    prior, variance = check_prior(prior, variance)
    tolerance, max_iterations, convergence = check_controls(tolerance, max_iterations, convergence)
    spline_prior, spline_variance = check_spline_prior(spline_prior, spline_variance)
    spec = prior_spec(data, prior, variance, exclude, priors, (spline_prior, spline_variance))
    weights = _check_weights(data, weights)
    beta0 = _check_start(data, start)
    progress, dtype, threads, resolved = check_run(progress, dtype, threads, backend)
    factory = functools.partial(make_engine, data, backend=resolved, weights=weights, dtype=dtype)
    with threads_context(threads):
        engine = factory()
        res = coordinate_descent(engine, spec=spec, tolerance=tolerance, max_iterations=max_iterations, beta0=beta0,
                                 convergence=convergence, progress=progress)
        infinite = infinite_coefficients(engine, res.beta, spec.unpenalized)
    ids = tuple(data.covariate_ids[infinite].tolist())
    if ids:
        signs = infinite_signs(data, weights, res.beta, infinite)
        where = ", ".join(f"{c!r} -> {'+' if sgn > 0 else '-'}inf" for c, sgn in zip(ids[:10], signs[:10]))
        warnings.warn(
            f"the maximum-likelihood estimate does not exist for covariate(s) {list(ids)[:10]} ({where}): the "
            "log-likelihood keeps increasing as the coefficient goes to +-infinity (separation: e.g. the exposed "
            "person-time has no events, or the exposure covers every event); the values "
            f"{np.round(res.beta[infinite][:10], 3).tolist()} are where the fit stopped, not estimates, and "
            "results_table reports them as infinite with no Wald interval. Use a prior, or leave the covariate out.",
            MLEWarning,
            stacklevel=2,
        )
    ctx = FitContext(data=data, spec=spec, weights=weights, engine_factory=factory, threads=threads,
                     max_iterations=max_iterations)
    return SCCSFit(
        coefficients=pd.Series(res.beta, index=pd.Index(data.covariate_ids, name="covariate_id"), name="coefficient"),
        log_likelihood=float(res.log_likelihood),
        log_prior=float(res.log_prior),
        iterations=int(res.iterations),
        converged=bool(res.converged and not ids),
        prior=prior,
        variance=float(variance),
        backend=resolved,
        exclude=normalise_ids(exclude),
        priors=tuple((tuple(normalise_ids(group)), p, v) for group, p, v in (priors or ())),
        spline_prior=spline_prior,
        spline_variance=float(spline_variance),
        tolerance=float(tolerance),
        convergence=convergence,
        stopped_by=res.stopped_by,
        kkt=res.kkt,
        infinite=ids,
        dtype=dtype.name,
        context=ctx,
    )

