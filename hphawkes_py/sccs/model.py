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

Priors (per coordinate, skipped for ``exclude``; per-group types and variances through
``priors=``, see :class:`PriorSpec`): Normal(0, variance),
log p = -log(2 pi v)/2 - b^2/(2v); Laplace with rate lambda = sqrt(2 / variance) (Cyclops),
log p = log(lambda/2) - lambda |b|.

Convergence, checked after each full cycle: ``"relative"``,
``|lp_new - lp_old| / (|lp_new| + 1) < tolerance`` with lp the log posterior (Cyclops' "lange"
criterion), or ``"gradient"``, the largest KKT residual (|subgradient| of lp) ``< tolerance *
(|lp| + 1)``; ``converged`` records whether the rule was met within ``max_iterations``
cycles and every estimate is finite, ``stopped_by`` which rule ended the fit.
"""
from __future__ import annotations

import functools
import math
import numbers
import warnings
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .._backend import resolve_backend, threads_context
from .._parallel import run_replicates
from .._progress import progress_bar
from .._validate import (as_float_array, check_bool, check_dtype, check_in, check_int, check_positive,
                         check_random_state, check_threads,
                         describe)
from .data import SCCSData
from .engine import make_engine

__all__ = [
    "SCCSFit",
    "CVResult",
    "BootstrapResult",
    "fit",
    "cross_validate",
    "bootstrap",
    "log_prior",
    "MLEWarning",
    "FitContext",
    "PriorSpec",
    "DEFAULT_GRID",
]

PRIORS = ("laplace", "normal", "none")
#: Default CV grid: Cyclops' grid search defaults (lowerLimit=0.01, upperLimit=20, gridSteps=10), log-spaced.
DEFAULT_GRID = tuple(float(v) for v in np.geomspace(0.01, 20.0, 10))
#: Initial trust-region half-width per coordinate (Genkin et al.; Cyclops' initialBound).
INITIAL_BOUND = 2.0


# ---------------------------------------------------------------------------- priors
def _check_prior(prior: str, variance: float, name: str = "") -> tuple[str, float]:
    pname, vname = (f"{name} prior", f"{name} variance") if name else ("prior", "variance")
    if not isinstance(prior, str):
        raise TypeError(f"{pname} must be one of {PRIORS}, got {describe(prior)}")
    check_in(prior, pname, PRIORS)
    if prior == "none":
        # the variance is not used; still refuse what is not a number
        if variance is None:
            return prior, float("nan")
        if isinstance(variance, bool) or not isinstance(variance, numbers.Real):
            raise TypeError(f"{vname} must be a real number, got {describe(variance)}")
        return prior, float(variance)
    return prior, check_positive(variance, vname)


def log_prior(beta: np.ndarray, prior: str, variance: float, penalized: np.ndarray) -> float:
    """Log prior density of ``beta``, summed over the penalized coordinates.

    Normal(0, variance): ``-log(2 pi v)/2 - b^2/(2 v)`` per coordinate; Laplace with rate
    ``lambda = sqrt(2 / variance)`` (Cyclops' parametrisation): ``log(lambda/2) - lambda |b|``.

    Parameters
    ----------
    beta : ndarray (n_covariates,)
        Coefficients (log relative risks).
    prior : {"laplace", "normal", "none"}
        Prior type; ``"none"`` has density 1 (log 0).
    variance : float
        Prior variance (> 0; not used for ``"none"``).
    penalized : ndarray of bool (n_covariates,)
        The coordinates that carry the prior (the others, e.g. ``exclude``, add nothing).

    Returns
    -------
    float
        The log density (normalised).

    Examples
    --------
    >>> beta = np.array([0.5, -1.0, 2.0])
    >>> penalized = np.array([True, True, False])
    >>> round(hp.sccs.log_prior(beta, "laplace", 1.0, penalized), 4)
    -2.8145
    >>> round(hp.sccs.log_prior(beta, "normal", 1.0, penalized), 4)
    -2.4629
    """
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


_CODES = {"none": 0, "normal": 1, "laplace": 2}


@dataclass(frozen=True, eq=False)
class PriorSpec:
    """The prior of every coefficient: ``codes[j]`` (0 none, 1 Normal, 2 Laplace) and
    ``variances[j]``; ``default[j]`` marks the coefficients governed by the ``prior`` /
    ``variance`` arguments (the ones cross-validation tunes), as opposed to ``exclude`` and
    per-group ``priors``."""

    codes: np.ndarray
    variances: np.ndarray
    default: np.ndarray

    def with_default_variance(self, variance: float) -> "PriorSpec":
        v = self.variances.copy()
        v[self.default] = variance
        return PriorSpec(self.codes, v, self.default)

    @property
    def unpenalized(self) -> np.ndarray:
        return self.codes == 0

    def log_prior(self, beta) -> float:
        """Sum of the coefficients' log prior densities (groups of one type and variance
        are summed in one expression, as :func:`log_prior`)."""
        beta = np.asarray(beta)
        total = 0.0
        for code, v in _groups(self.codes, self.variances):
            mask = (self.codes == code) & (self.variances == v)
            total += log_prior(beta[mask], ("none", "normal", "laplace")[code], v, np.ones(int(mask.sum()), bool))
        return total

    def curvature(self) -> np.ndarray:
        """-d^2 log prior / d b_j^2 (1/variance for Normal coordinates, 0 otherwise)."""
        return np.where(self.codes == 1, 1.0 / np.where(self.codes == 1, self.variances, 1.0), 0.0)


def _groups(codes, variances):
    pairs = {(int(c), float(v)) for c, v in zip(codes.tolist(), variances.tolist()) if c != 0}
    return sorted(pairs)


def _prior_spec(data: SCCSData, prior: str, variance: float, exclude, priors, spline=("normal", 1.0)) -> PriorSpec:
    """Per-coefficient priors from the default ``prior``/``variance``, ``exclude``, the
    per-group ``priors`` = [(covariate ids, prior, variance), ...] and, for the spline
    coefficients of age/season/calendar time that neither ``exclude`` nor ``priors`` name,
    ``spline`` = (prior, variance) -- never the drug prior, and never tuned by CV."""
    spec = _prior_spec_groups(data, prior, variance, exclude, priors)
    ids = data.spline_ids if getattr(data, "splines", ()) else []
    if not ids:
        return spec
    named = set(_normalise_exclude(exclude))
    for group, _, _ in priors or ():
        named.update(_normalise_exclude(group))
    idx = pd.Index(data.covariate_ids).get_indexer(pd.Index([c for c in ids if c not in named]))
    if idx.size:
        p, v = _check_prior(spline[0], spline[1], name="spline")
        codes, variances, default = spec.codes.copy(), spec.variances.copy(), spec.default.copy()
        codes[idx] = _CODES[p]
        variances[idx] = v if p != "none" else np.nan
        default[idx] = False
        spec = PriorSpec(codes, variances, default)
    return spec


def _prior_spec_groups(data: SCCSData, prior: str, variance: float, exclude, priors) -> PriorSpec:
    penalized = _penalized_mask(data, prior, exclude)
    J = data.n_covariates
    codes = np.where(penalized, _CODES[prior], 0).astype(np.int64)
    variances = np.full(J, variance if prior != "none" else np.nan)
    variances[~penalized] = np.nan
    default = penalized.copy() if prior != "none" else np.zeros(J, dtype=bool)
    if priors is None:
        return PriorSpec(codes, variances, default)
    if not isinstance(priors, (list, tuple)):
        raise TypeError(f"priors must be a list of (covariate ids, prior, variance) triples, got {describe(priors)}")
    assigned = ~penalized
    index = pd.Index(data.covariate_ids)
    for k, entry in enumerate(priors):
        if not isinstance(entry, (list, tuple)) or len(entry) != 3:
            raise TypeError(f"priors[{k}] must be a triple (covariate ids, prior, variance), got {describe(entry)}")
        ids, p, v = entry
        if isinstance(ids, (str, bytes)) or np.isscalar(ids):
            ids = [ids]
        ids = list(ids)
        p, v = _check_prior(p, v, name=f"priors[{k}]")
        idx = index.get_indexer(pd.Index(ids)) if ids else np.zeros(0, dtype=np.int64)
        if not ids or np.any(idx < 0):
            unknown = [c for c, i in zip(ids, idx) if i < 0]
            raise ValueError(f"priors[{k}] has covariate id(s) not in the data: {unknown[:10] or 'none given'}")
        again = [c for c, i in zip(ids, idx) if assigned[i]]
        if again:
            raise ValueError(f"priors[{k}]: covariate id(s) {again[:10]} already have a prior (exclude or an earlier group)")
        assigned[idx] = True
        codes[idx] = _CODES[p]
        variances[idx] = v if p != "none" else np.nan
        default[idx] = False
    return PriorSpec(codes, variances, default)


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


def _kkt(g: float, beta: float, prior: int, lam: float, inv_var: float) -> float:
    """|subgradient| of the log posterior along one coordinate (0 exactly at its optimum)."""
    if prior == 1:
        return abs(g - beta * inv_var)
    if prior == 2:
        if beta == 0.0:
            return max(abs(g) - lam, 0.0)
        return abs(g - (lam if beta > 0 else -lam))
    return abs(g)


@dataclass(frozen=True)
class _CCDResult:
    beta: np.ndarray
    log_likelihood: float
    log_prior: float
    iterations: int
    converged: bool
    stopped_by: str
    kkt: float
    step_halvings: int


#: How often a cycle whose log posterior is not finite (exp overflow) is retried from the
#: previous cycle's coefficients with trust regions shrunk 8-fold before the fit gives up.
MAX_STEP_HALVINGS = 40


def _ccd(engine, *, spec: PriorSpec, tolerance, max_iterations, beta0=None, convergence="relative",
         fixed=None, progress=False, desc=None) -> _CCDResult:
    """Cyclic coordinate descent on ``engine``.

    ``convergence="relative"`` stops when ``|lp - lp_old| / (|lp| + 1) < tolerance`` after a
    cycle (lp = log posterior); ``"gradient"`` when the largest KKT residual of the cycle,
    max_j |subgradient_j|, is ``< tolerance * (|lp| + 1)`` (each coordinate's residual is taken
    just before its own step; when every residual of a cycle is that small every step was
    too, so the residuals at the final point are of the same size). Coordinates in ``fixed``
    (bool mask) are not moved (profile likelihoods). A cycle that ends with a non-finite log
    posterior (exp overflow after a long step) is undone and retried with trust regions shrunk
    8-fold; a non-finite log posterior at ``beta0`` is an error.
    """
    J = engine.n_covariates
    beta = np.zeros(J) if beta0 is None else np.array(beta0, dtype=np.float64)
    engine.set_beta(beta)
    codes = spec.codes.tolist()
    # per coordinate: Laplace rate sqrt(2 / v) and Normal precision 1 / v (0 where unused)
    lams = [math.sqrt(2.0 / v) if c == 2 else 0.0 for c, v in zip(codes, spec.variances.tolist())]
    inv_vars = [1.0 / v if c == 1 else 0.0 for c, v in zip(codes, spec.variances.tolist())]
    coords = [j for j in range(J) if fixed is None or not fixed[j]]
    bound = [INITIAL_BOUND] * J
    b = beta.tolist()
    ll = engine.log_likelihood(beta)
    lp_old = ll + spec.log_prior(beta)
    if not math.isfinite(lp_old):
        eta = np.abs(beta).max() if J else 0.0
        raise ValueError(
            f"start: the log-likelihood is not finite at the starting coefficients (largest |start| = {eta:g}; "
            "time * exp(x'b) overflows or underflows); give starting values of moderate size (|b| < 50)"
        )
    converged = False
    stopped_by = "max_iterations"
    kkt_max = math.inf
    halvings = 0
    it = 0
    gh = engine.gradient_hessian
    upd = engine.update
    with progress_bar(total=max_iterations, desc=desc or "CCD cycles", enabled=progress) as bar:
        while it < max_iterations:
            it += 1
            b_prev, bound_prev = list(b), list(bound)
            kkt_max = 0.0
            for j in coords:
                g, h = gh(j)
                code = codes[j]
                lam, inv_var = lams[j], inv_vars[j]
                r = _kkt(g, b[j], code, lam, inv_var)
                if r > kkt_max:
                    kkt_max = r
                delta = _newton_step(g, h, b[j], code, lam, inv_var)
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
                    b[j] = 0.0 if (code == 2 and delta == -b[j]) else nb
            beta = np.asarray(b)
            ll = engine.log_likelihood(beta)
            lp = ll + spec.log_prior(beta)
            bar.update(1)
            if not math.isfinite(lp):
                halvings += 1
                if halvings > MAX_STEP_HALVINGS:
                    raise FloatingPointError(
                        f"CCD: the log posterior stayed non-finite after {MAX_STEP_HALVINGS} step reductions "
                        f"(cycle {it}); the model cannot be evaluated at these coefficients"
                    )
                b = b_prev
                bound = [x / 8.0 for x in bound_prev]
                engine.set_beta(np.asarray(b))
                continue
            if convergence == "gradient":
                if kkt_max < tolerance * (abs(lp) + 1.0):
                    converged, stopped_by = True, "gradient"
                    break
            elif abs(lp - lp_old) / (abs(lp) + 1.0) < tolerance:
                converged, stopped_by = True, "relative"
                break
            lp_old = lp
    beta = np.asarray(b)
    if not math.isfinite(ll):  # the last cycle was undone: evaluate where the fit stands
        ll = engine.log_likelihood(beta)
    return _CCDResult(beta, ll, spec.log_prior(beta), it, converged, stopped_by,
                      float(kkt_max), halvings)


#: |b_j| from which an unpenalised coefficient is checked for an infinite MLE (RR > 148).
DIVERGENCE_CHECK_MIN = 5.0
#: The check moves b_j this much further out; a finite MLE loses log-likelihood there.
DIVERGENCE_CHECK_STEP = 10.0


def _infinite_coefficients(engine, beta, unpenalized) -> list[int]:
    """Unpenalised coordinates along which the log-likelihood does not decrease beyond the
    estimate: moving b_j a further 10 units outwards loses less than 1e-3 (a finite MLE with a
    standard error below ~200 loses more), i.e. the maximum lies at infinity (separation, e.g.
    the exposure covers every event of every case; survival::clogit warns the same way)."""
    candidates = np.flatnonzero(unpenalized & (np.abs(beta) >= DIVERGENCE_CHECK_MIN))
    if candidates.size == 0:
        return []
    ll0 = engine.log_likelihood(beta)
    out = []
    for j in candidates:
        step = math.copysign(DIVERGENCE_CHECK_STEP, beta[j])
        moved = beta.copy()
        moved[j] += step
        ll1 = engine.log_likelihood(moved)
        if not math.isfinite(ll1) or ll1 > ll0 - 1e-3:
            out.append(int(j))
    engine.set_beta(beta)
    return out


class MLEWarning(UserWarning):
    """The maximum-likelihood estimate of some coefficients does not exist (it is infinite)."""


# ---------------------------------------------------------------------------- results
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
        Largest KKT residual (|subgradient| of the log posterior) seen in the last cycle.
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

    def confint(self, covariates=None, level: float = 0.95, method: str = "profile") -> pd.DataFrame:
        """Confidence intervals for log relative risks: see :func:`.inference.confint`."""
        from .inference import confint

        return confint(self, covariates, level=level, method=method)

    def covariance(self, covariates=None) -> pd.DataFrame:
        """Inverse of the negative Hessian of the log posterior at the mode: see
        :func:`.inference.covariance`."""
        from .inference import covariance

        return covariance(self, covariates)

    def results_table(self, covariates=None, level: float = 0.95, method: str = "wald") -> pd.DataFrame:
        """Per-exposure results (IRR, CI, p, cases, exposed cases, exposed time and events): see
        :func:`.inference.results_table`."""
        from .inference import results_table

        return results_table(self, covariates, level=level, method=method)

    def spline_effects(self, term=None, *, level: float = 0.95, n: int = 200) -> pd.DataFrame:
        """Age/season/calendar-time effects with pointwise bands: see :func:`.inference.spline_effects`."""
        from .inference import spline_effects

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
        )


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
        Estimates on each resample (columns = covariate_id).
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
CONVERGENCE = ("auto", "relative", "gradient")
#: ``convergence="auto"`` uses the gradient rule at tolerances at or below this (the relative
#: change of the log posterior stops early on flat optima, see :func:`fit`).
GRADIENT_RULE_BELOW = 1e-8


def _check_data(data):
    if not isinstance(data, SCCSData):
        raise TypeError(f"data must be an SCCSData (use SCCSData.from_long / from_eras), got {type(data).__name__}")


def _check_controls(tolerance, max_iterations, convergence="auto"):
    tolerance = check_positive(tolerance, "tolerance")
    max_iterations = check_int(max_iterations, "max_iterations", minimum=1)
    if not isinstance(convergence, str):
        raise TypeError(f"convergence must be one of {CONVERGENCE}, got {describe(convergence)}")
    check_in(convergence, "convergence", CONVERGENCE)
    if convergence == "auto":
        convergence = "gradient" if tolerance <= GRADIENT_RULE_BELOW else "relative"
    return tolerance, max_iterations, convergence


def _check_run(progress, dtype, threads, backend):
    """The run settings every entry point shares, checked in one place; the backend is
    resolved here, once per public call."""
    return check_bool(progress, "progress"), check_dtype(dtype), check_threads(threads), resolve_backend(backend)


def _check_weights(data, weights):
    if weights is None:
        return None
    w = as_float_array(weights, "weights", ndim=1, shape=(data.n_strata,))
    if np.any(w < 0):
        i = int(np.argmax(w < 0))
        raise ValueError(f"weights must be non-negative (one per stratum); weights[{i}] = {w[i]!r}")
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


def _normalise_exclude(exclude) -> tuple:
    if isinstance(exclude, (str, bytes)) or np.isscalar(exclude):
        return (exclude,)
    return tuple(exclude)


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
    spline_prior, spline_variance : str, float
        Prior of the age/season/calendar-time spline coefficients of the design
        (:meth:`SCCSData.from_eras` ``age_knots=`` ...) that ``exclude``/``priors`` do not
        name: Normal(0, 1) by default, separate from the drug prior and not tuned by
        cross-validation; ``"none"`` fits them unpenalised (SelfControlledCaseSeries'
        default ``allowRegularization = FALSE``).
    tolerance : float
        Convergence tolerance (> 0) of the rule chosen by ``convergence``.
    max_iterations : int
        Maximum number of CCD cycles.
    convergence : {"auto", "relative", "gradient"}
        ``"relative"``: stop when |lp_new - lp_old| / (|lp_new| + 1) < tolerance after a cycle
        (lp = log posterior; Cyclops' default). It can stop early on flat optima. ``"gradient"``:
        stop when the largest KKT residual (|subgradient| of the log posterior over the
        coordinates) is < tolerance * (|lp| + 1), which bounds the distance to the optimum.
        ``"auto"`` (default): ``"gradient"`` when ``tolerance <= 1e-8``, else ``"relative"``.
        The result's ``stopped_by`` says which rule ended the fit.
    weights : array (n_strata,), optional
        Non-negative stratum weights (multiplicities); used by bootstrap and CV.
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
        (separation), an :class:`MLEWarning` is issued, ``infinite`` names the coefficients
        and ``converged`` is False.

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
    _check_data(data)
    prior, variance = _check_prior(prior, variance)
    tolerance, max_iterations, convergence = _check_controls(tolerance, max_iterations, convergence)
    spline_prior, spline_variance = _check_prior(spline_prior, spline_variance, name="spline")
    spec = _prior_spec(data, prior, variance, exclude, priors, (spline_prior, spline_variance))
    weights = _check_weights(data, weights)
    beta0 = _check_start(data, start)
    progress, dtype, threads, resolved = _check_run(progress, dtype, threads, backend)
    factory = functools.partial(make_engine, data, backend=resolved, weights=weights, dtype=dtype)
    with threads_context(threads):
        engine = factory()
        res = _ccd(engine, spec=spec, tolerance=tolerance, max_iterations=max_iterations, beta0=beta0,
                   convergence=convergence, progress=progress)
        infinite = _infinite_coefficients(engine, res.beta, spec.unpenalized)
    ids = tuple(data.covariate_ids[infinite].tolist())
    if ids:
        warnings.warn(
            f"the maximum-likelihood estimate does not exist for covariate(s) {list(ids)[:10]}: the log-likelihood "
            f"keeps increasing as the coefficient goes to +-infinity (separation, e.g. the exposure covers every "
            f"event); the values {np.round(res.beta[infinite][:10], 3).tolist()} are where the fit stopped, not "
            "estimates. Use a prior, or leave the covariate out.",
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
        exclude=_normalise_exclude(exclude),
        priors=tuple((tuple(_normalise_exclude(group)), p, v) for group, p, v in (priors or ())),
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
            beta = _ccd(engine, spec=spec.with_default_variance(v), tolerance=tolerance,
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
        beta = _ccd(engine, spec=spec.with_default_variance(variance), tolerance=tolerance,
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
                    beta = _ccd(engine, spec=spec.with_default_variance(v), tolerance=tolerance,
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
    _check_data(data)
    if prior == "none":
        raise ValueError("cross_validate needs a prior ('laplace' or 'normal'); prior='none' has no variance to tune")
    _check_prior(prior, 1.0)
    tolerance, max_iterations, convergence = _check_controls(tolerance, max_iterations, convergence)
    folds = check_int(folds, "folds", minimum=2)
    if folds > data.n_strata:
        raise ValueError(f"folds ({folds}) exceeds the number of strata ({data.n_strata})")
    auto = isinstance(grid, str)
    if auto and grid != "auto":
        raise ValueError(f"grid must be a list of variances or 'auto', got {grid!r}")
    grid = np.array([1.0]) if auto else np.sort(as_float_array(DEFAULT_GRID if grid is None else grid, "grid", ndim=1))
    if grid.size == 0 or np.any(grid <= 0):
        raise ValueError(f"grid must be a non-empty list of finite variances > 0, got {grid.tolist()}")
    spline_prior, spline_variance = _check_prior(spline_prior, spline_variance, name="spline")
    spec = _prior_spec(data, prior, 1.0, exclude, priors, (spline_prior, spline_variance))
    rng = check_random_state(seed)
    progress, dtype, threads, resolved = _check_run(progress, dtype, threads, backend)
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
        return _ccd(engine, spec=spec, tolerance=tolerance, max_iterations=max_iterations, beta0=start,
                    convergence=convergence).beta


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
        The replicates' estimates and the fit on the original data.

    Examples
    --------
    >>> data, _ = hp.sccs.simulate(n_cases=500, n_drugs=5, prevalence=0.3, fraction_positive=0.4, seed=1)
    >>> boot = hp.sccs.bootstrap(data, prior="normal", variance=1.0, replicates=20, seed=1, progress=False)
    >>> boot.samples.shape
    (20, 5)
    >>> boot.summary()[["lower", "upper"]].round(2).loc[4].tolist()
    [0.43, 1.18]
    """
    _check_data(data)
    prior, variance = _check_prior(prior, variance)
    tolerance, max_iterations, convergence = _check_controls(tolerance, max_iterations, convergence)
    replicates = check_int(replicates, "replicates", minimum=1)
    check_random_state(seed)
    progress, dtype, threads, resolved = _check_run(progress, dtype, threads, backend)
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
    return BootstrapResult(samples=samples, fit=full, replicates=replicates, prior=prior, variance=variance)
