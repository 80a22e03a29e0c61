"""Results of SCCS fits: :class:`SCCSFit`, :class:`CVResult`, :class:`BootstrapResult`.

A fit carries its :class:`FitContext` (data, priors, an engine factory), so that intervals,
the covariance and results tables (:mod:`.inference`) can continue from it.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._validate import check_probability
from .ccd import MLEWarning
from .data import SCCSData
from .inference import confint, covariance, results_table, spline_effects
from .priors import PriorSpec

__all__ = ["SCCSFit", "CVResult", "BootstrapResult", "FitContext", "MLEWarning"]



@dataclass(frozen=True, eq=False)
class FitContext:
    """What a fit needs to be continued (profiles, covariance, tables): the data, the prior
    settings and an engine factory (a callable returning a fresh engine for the same data,
    backend, weights and precision)."""

    data: SCCSData
    spec: PriorSpec
    weights: np.ndarray | None
    engine_factory: Any
    threads: int | None
    max_iterations: int


@dataclass(frozen=True, eq=False)
class SCCSFit:
    """Maximum a posteriori (or maximum likelihood, ``prior="none"``) SCCS fit.

    Made by :func:`fit` (the fields below are its results and settings); intervals, the
    covariance and results tables come from its methods.

    Parameters
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
        The stopping rule was met within ``max_iterations`` cycles and every estimate is
        finite (``infinite`` is empty).
    prior, variance : str, float
        The prior and its variance (Laplace rate sqrt(2/variance)).
    backend : str
        Engine that ran ("cpu", "gpu" or "emulator").
    exclude : tuple
        Covariate ids fitted without prior.
    priors : tuple
        Per-group priors ``((covariate ids, prior, variance), ...)`` as given to :func:`fit`.
    tolerance : float
        Convergence tolerance of the rule in ``convergence``.
    convergence : str
        The rule asked for: ``"relative"`` (change of the log posterior) or ``"gradient"``
        (largest KKT residual), see :func:`fit`.
    stopped_by : str
        What ended the fit: ``"relative"``, ``"gradient"`` or ``"max_iterations"``.
    kkt : float
        Largest KKT residual (``|subgradient|`` of the log posterior) seen in the last cycle.
    infinite : tuple
        Covariate ids whose maximum-likelihood estimate does not exist (the likelihood keeps
        increasing as the coefficient goes to +-infinity; their values are where the fit
        stopped). Only unpenalised coefficients can be infinite; a warning says so too.
    dtype : str
        Storage precision of the engine state ("float64" or "float32"; None only for a fit
        not made by :func:`fit`).
    spline_prior, spline_variance : str, float
        Prior of the age/season/calendar spline coefficients (see :func:`fit`).
    context : FitContext, optional
        What continuing the fit needs (data, priors, an engine factory); ``None`` for a fit
        not made by :func:`fit`, which then has no intervals or covariance.
    diagnostics : StudyDiagnostics, optional
        The study diagnostics the fit carries (:meth:`with_diagnostics`); ``None`` by default.

    Examples
    --------
    >>> data, truth = hp.sccs.simulate(n_cases=500, n_drugs=5, prevalence=0.3, fraction_positive=0.4, seed=1)
    >>> result = hp.sccs.fit(data, prior="normal", variance=1.0, progress=False)
    >>> result.converged, result.stopped_by
    (True, 'relative')
    >>> result.to_frame().round(2)
       covariate_id  coefficient  relative_risk
    0             1         0.06           1.06
    1             2         0.03           1.03
    2             3        -0.06           0.94
    3             4         0.82           2.28
    4             5         0.32           1.38
    >>> result.confint([4], method="wald").round(2)
                  lower  upper
    covariate_id
    4              0.32   1.32
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
    priors: tuple = ()
    tolerance: float = 1e-6
    convergence: str = "relative"
    stopped_by: str = "relative"
    kkt: float = float("nan")
    infinite: tuple = ()
    dtype: str | None = None
    spline_prior: str = "normal"
    spline_variance: float = 1.0
    context: FitContext | None = field(default=None, repr=False)
    diagnostics: Any = field(default=None, repr=False)

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
        """:meth:`to_frame`, with the diagnostics' columns (``<diagnostic>_pass``,
        ``diagnostics_pass`` ...) when the fit carries them (:meth:`with_diagnostics`)."""
        frame = self.to_frame()
        if self.diagnostics is None:
            return frame
        wide = self.diagnostics.wide().reset_index(names="covariate_id")
        return frame.merge(wide, on="covariate_id", how="left")

    def with_diagnostics(self, diagnostics) -> "SCCSFit":
        """This fit carrying a :class:`~.diagnostics_report.StudyDiagnostics` report (from
        :func:`~.diagnostics_report.study_diagnostics`): its values and pass/fail columns then
        appear in :meth:`results_table`, :meth:`summary` and the printed fit."""
        if not (hasattr(diagnostics, "wide") and hasattr(diagnostics, "passed")):
            raise TypeError(f"diagnostics must be a StudyDiagnostics (hp.sccs.study_diagnostics), "
                            f"got {type(diagnostics).__name__}")
        return dataclasses.replace(self, diagnostics=diagnostics)

    def confint(self, covariates=None, level: float = 0.95, method: str = "profile") -> pd.DataFrame:
        """Confidence intervals for log relative risks: see :func:`.inference.confint`."""
        return confint(self, covariates, level=level, method=method)

    def covariance(self, covariates=None) -> pd.DataFrame:
        """Inverse of the negative Hessian of the log posterior at the mode: see
        :func:`.inference.covariance`."""
        return covariance(self, covariates)

    def results_table(self, covariates=None, level: float = 0.95, method: str = "wald") -> pd.DataFrame:
        """Per-exposure results (IRR, CI, p, cases, exposed cases, exposed time and events): see
        :func:`.inference.results_table`. A fit that carries diagnostics (:meth:`with_diagnostics`)
        adds, per exposure, each diagnostic's value and ``<diagnostic>_pass`` (the OHDSI
        threshold met) and ``diagnostics_pass`` (all that apply pass; NA for rows the report
        does not cover, such as pre-exposure windows)."""
        table = results_table(self, covariates, level=level, method=method)
        if self.diagnostics is None:
            return table
        wide = self.diagnostics.wide(list(table.index))
        out = table.join(wide.set_axis(table.index))
        out.attrs.update(table.attrs)
        return out

    def spline_effects(self, term=None, *, level: float = 0.95, n: int = 200) -> pd.DataFrame:
        """Age/season/calendar-time effects with pointwise bands: see :func:`.inference.spline_effects`."""
        return spline_effects(self, term, level=level, n=n)

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
            "convergence": self.convergence,
            "stopped_by": self.stopped_by,
            "kkt": self.kkt,
            "infinite": list(self.infinite),
            "exclude": list(self.exclude),
            "priors": [[list(g), p, v] for g, p, v in self.priors],
            "dtype": self.dtype,
            "spline_prior": self.spline_prior,
            "spline_variance": self.spline_variance,
        }

    def __repr__(self) -> str:
        nz = int((self.coefficients != 0).sum())
        inf = f", infinite={list(self.infinite)}" if self.infinite else ""
        return (
            f"SCCSFit(prior={self.prior!r}, variance={self.variance:g}, n_covariates={len(self.coefficients)}, "
            f"nonzero={nz}, log_likelihood={self.log_likelihood:.6f}, log_prior={self.log_prior:.6f}, "
            f"iterations={self.iterations}, converged={self.converged}, stopped_by={self.stopped_by!r}{inf}, "
            f"backend={self.backend!r})"
        ) + ("" if self.diagnostics is None else f"\n{self.diagnostics!r}")


@dataclass(frozen=True, eq=False)
class CVResult:
    """Cross-validated choice of the prior variance (made by :func:`cross_validate`).

    Parameters
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
        Number of folds.
    fold_scores : ndarray (folds, len(grid))
        Held-out conditional log-likelihood of each fold at each variance.

    Examples
    --------
    >>> data, _ = hp.sccs.simulate(n_cases=500, n_drugs=5, prevalence=0.3, fraction_positive=0.4, seed=1)
    >>> cv = hp.sccs.cross_validate(data, prior="normal", folds=3, grid=[0.01, 0.1, 1.0], seed=1,
    ...                             progress=False)
    >>> cv.variance, cv.fold_scores.shape
    (0.1, (3, 3))
    >>> cv.scores.round(2)
       variance   mean    se   total
    0      0.01 -52.37  4.67 -157.12
    1      0.10 -52.00  4.32 -156.01
    2      1.00 -52.22  3.95 -156.66
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

    Made by :func:`bootstrap`.

    Parameters
    ----------
    samples : DataFrame (replicates x covariates)
        Estimates on each resample (columns = covariate_id); -inf or +inf where the resample
        separates an unpenalised coefficient (no finite maximum-likelihood estimate).
    fit : SCCSFit
        The estimate on the original data.
    replicates : int
        Number of resamples.
    prior, variance : str, float
        The prior of every replicate's fit and its variance.

    Examples
    --------
    >>> data, _ = hp.sccs.simulate(n_cases=500, n_drugs=5, prevalence=0.3, fraction_positive=0.4, seed=1)
    >>> boot = hp.sccs.bootstrap(data, prior="normal", variance=1.0, replicates=20, seed=1, progress=False)
    >>> boot.samples.shape
    (20, 5)
    >>> boot.summary().round(2)
                  estimate  lower  upper  p_nonzero
    covariate_id
    1                 0.06  -0.58   0.45        1.0
    2                 0.03  -0.47   0.29        1.0
    3                -0.06  -0.66   0.27        1.0
    4                 0.82   0.43   1.18        1.0
    5                 0.32  -0.49   0.72        1.0
    """

    samples: pd.DataFrame
    fit: SCCSFit
    replicates: int
    prior: str
    variance: float

    def summary(self, level: float = 0.95) -> pd.DataFrame:
        """Per covariate: estimate (original data), percentile interval ``lower``/``upper``
        at ``level`` (in (0, 1); linear interpolation between order statistics, an infinite
        one included), and ``p_nonzero`` (share of replicates with a non-zero estimate)."""
        a = (1.0 - check_probability(level, "level", low_open=True, high_open=True)) / 2.0
        s = self.samples
        return pd.DataFrame(
            {
                "estimate": self.fit.coefficients,
                "lower": _quantile(s, a),
                "upper": _quantile(s, 1.0 - a),
                "p_nonzero": (s != 0).mean(),
            }
        )

    def __repr__(self) -> str:
        return f"BootstrapResult(replicates={self.replicates}, prior={self.prior!r}, variance={self.variance:g})"



def _quantile(samples: pd.DataFrame, q: float) -> pd.Series:
    """Column quantiles by linear interpolation between order statistics (pandas' default).
    Replicates with an infinite estimate (separation) are kept: a quantile that interpolates
    towards -inf or +inf with positive weight is that infinity, where plain interpolation
    would give NaN."""
    with np.errstate(invalid="ignore"):  # inf - inf in the interpolation; those columns are redone below
        out = samples.quantile(q)
    infinite = np.isinf(samples.to_numpy()).any(axis=0)
    for j in np.flatnonzero(infinite):
        x = np.sort(samples.iloc[:, j].to_numpy(np.float64))
        h = (len(x) - 1) * q
        lo, hi = int(np.floor(h)), int(np.ceil(h))
        if h == lo:
            v = x[lo]
        elif x[lo] == -np.inf or x[hi] == np.inf:
            v = x[lo] if x[lo] == -np.inf else x[hi]
        else:
            v = x[lo] + (x[hi] - x[lo]) * (h - lo)
        out.iloc[j] = v
    return out
