"""Inference after an SCCS fit: Hessian covariance, Wald and profile-likelihood intervals,
and the per-exposure results table.

* :func:`covariance`: the inverse of the negative Hessian of the log posterior at the mode,
  ``(I(b) + P)^-1`` with ``I`` the observed information of the conditional likelihood
  (:func:`~.engine.information_matrix`) and ``P`` the prior's curvature (``1/variance`` on the
  diagonal of Normal-penalised coordinates; the Laplace prior has none away from zero).
* :func:`confint`: ``method="wald"``: ``b_j -+ z_{(1+level)/2} se_j``; ``method="profile"``
  (Cyclops' ``confint``): the set of ``b_j`` whose profile log posterior (every other
  coefficient refitted by CCD with ``b_j`` held fixed) lies within ``chi2_1(level) / 2`` of the
  maximum, its ends found by bracketing and Brent's method. With ``prior="none"`` this is the
  likelihood-ratio interval that R gets from a profile of ``survival::clogit``.
* :func:`results_table`: per exposure the IRR with its interval, a p-value (Wald z test, or the
  likelihood-ratio test of ``b_j = 0`` on the profile for ``method="profile"``), and the
  counts analysts report next to it: cases, exposed cases, exposed person-time and events.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd

from .._backend import threads_context
from .._validate import check_in, check_probability, describe
from .ccd import MLEWarning, coordinate_descent, infinite_signs
from .engine import information_matrix

__all__ = ["covariance", "confint", "results_table", "profile_log_posterior", "spline_effects"]

METHODS = ("profile", "wald")
#: Inner CCD fits of a profile stop at KKT residual < PROFILE_TOLERANCE * (|lp| + 1), per
#: storage precision of the engine (a float32 state cannot resolve gradients below ~1e-6).
PROFILE_TOLERANCE = {"float64": 1e-11, "float32": 1e-5}
#: Interval ends beyond this distance (log RR) from the estimate are reported as infinite.
PROFILE_MAX_DISTANCE = 50.0


def _context(fit):
    ctx = getattr(fit, "context", None)
    if ctx is None:
        raise ValueError("this SCCSFit carries no fitting context (it was not made by hp.sccs.fit)")
    return ctx


def _indices(fit, covariates) -> np.ndarray:
    ids = fit.coefficients.index
    if covariates is None:
        return np.arange(len(ids))
    if isinstance(covariates, (str, bytes)) or np.isscalar(covariates):
        covariates = [covariates]
    covariates = list(covariates)
    if not covariates:
        raise ValueError("covariates must name at least one covariate id (or be None for all)")
    idx = ids.get_indexer(pd.Index(covariates))
    if np.any(idx < 0):
        unknown = [c for c, i in zip(covariates, idx) if i < 0]
        raise ValueError(f"covariates has id(s) not in the fit: {unknown[:10]}")
    return idx


def _check_level(level):
    return check_probability(level, "level", low_open=True, high_open=True)


def _check_method(method):
    if not isinstance(method, str):
        raise TypeError(f"method must be one of {METHODS}, got {describe(method)}")
    return check_in(method, "method", METHODS)


def _neg_hessian(fit) -> np.ndarray:
    ctx = _context(fit)
    b = fit.coefficients.to_numpy()
    H = information_matrix(ctx.data, b, ctx.weights)
    H[np.diag_indices_from(H)] += ctx.spec.curvature()
    return H


def covariance(fit, covariates=None) -> pd.DataFrame:
    """Covariance of the coefficients at the mode: inverse of the negative Hessian of the log
    posterior (all coefficients; the rows and columns of ``covariates`` are returned).

    For ``prior="laplace"`` the prior adds no curvature, so this is the likelihood's
    covariance evaluated at the MAP estimate (coefficients shrunk to exactly zero included).
    For a coefficient in ``fit.infinite`` (no finite MLE) it is the curvature where the fit
    stopped, which describes no estimate; :func:`results_table` and :func:`confint` report
    no Wald interval for it.

    Raises
    ------
    ValueError
        The negative Hessian is singular (e.g. a covariate without non-zeros in any case
        without a prior) or a covariate id is unknown.
    """
    idx = _indices(fit, covariates)
    H = _neg_hessian(fit)
    try:
        cov = np.linalg.inv(H)
    except np.linalg.LinAlgError:
        raise ValueError(_singular_message(fit, H)) from None
    ids = fit.coefficients.index[idx]
    return pd.DataFrame(cov[np.ix_(idx, idx)], index=ids, columns=ids)


def _singular_message(fit, H) -> str:
    """Why the negative Hessian is singular, with advice that fits the priors in use: a
    Laplace prior adds no curvature (its log density is linear away from zero), so only a
    Normal prior (or leaving the covariate out) makes the matrix invertible."""
    codes = _context(fit).spec.codes
    ids = fit.coefficients.index
    empty = np.flatnonzero(~(np.diag(H) > 0))
    involved = empty if empty.size else np.arange(len(ids))
    if empty.size:
        what = f"covariate(s) {ids[empty].tolist()[:10]} carry no information at the estimate"
    else:
        what = "collinear covariates"
    used = set(codes[involved].tolist())
    advice = []
    if 2 in used:
        advice.append("the Laplace prior adds no curvature to the Hessian (its log density is linear away from 0), "
                      "so it cannot make it invertible: fit with prior='normal' for a posterior covariance")
    if 0 in used:
        advice.append("these coefficients have no prior (prior='none' or exclude): give them a Normal prior")
    if used == {1}:
        advice.append("the Normal prior's curvature 1/variance is too small against the data's: use a smaller "
                      "variance")
    return (f"the negative Hessian of the log posterior is singular at the estimate ({what}): no covariance; "
            + "; ".join(advice) + ", or leave those covariates out")


def _infinite(fit, idx):
    """``(mask, estimates)`` over ``idx``: which coefficients have an infinite MLE
    (``fit.infinite``), and the coefficients with those replaced by +-inf."""
    b = fit.coefficients.to_numpy()[idx].astype(np.float64)
    mask = fit.coefficients.index[idx].isin(list(getattr(fit, "infinite", ()) or ()))
    if mask.any():
        ctx = _context(fit)
        b[mask] = infinite_signs(ctx.data, ctx.weights, fit.coefficients.to_numpy(), idx[mask]) * np.inf
        warnings.warn(
            f"covariate(s) {fit.coefficients.index[idx][mask].tolist()[:10]} have no finite maximum-likelihood "
            "estimate (separation, see SCCSFit.infinite): reported as -inf/+inf, with no Wald standard error, "
            "interval or p-value (NaN); method='profile' gives the likelihood-ratio interval, open on that side",
            MLEWarning, stacklevel=3)
    return mask, b


def _wald(fit, idx, level, infinite=None):
    """Wald intervals, p-values and standard errors; NaN for coefficients whose MLE is
    infinite (``infinite``: bool mask over ``idx``), where the curvature at the stopping point
    describes nothing."""
    from scipy.stats import norm

    se = np.sqrt(np.diag(covariance(fit).to_numpy())[idx])
    b = fit.coefficients.to_numpy()[idx]
    z = norm.ppf(0.5 + level / 2.0)
    p = 2.0 * norm.sf(np.abs(b) / se)
    lo, hi = b - z * se, b + z * se
    if infinite is not None and infinite.any():
        for a in (lo, hi, p, se):
            a[infinite] = np.nan
    return lo, hi, p, se


class _Profile:
    """Profile log posterior of one coefficient on one engine, with warm starts."""

    def __init__(self, fit, engine, j):
        ctx = _context(fit)
        self.fit, self.engine, self.j = fit, engine, j
        self.ctx = ctx
        self.fixed = np.zeros(len(fit.coefficients), dtype=bool)
        self.fixed[j] = True
        self.tol = PROFILE_TOLERANCE[engine.dtype.name]
        # the mode, refitted tightly so that the profile's maximum is the fit's
        mode = coordinate_descent(engine, spec=ctx.spec, tolerance=self.tol, max_iterations=ctx.max_iterations,
                                  beta0=fit.coefficients.to_numpy(), convergence="gradient")
        self.beta_hat = mode.beta
        self.lp_hat = mode.log_likelihood + mode.log_prior
        self.last = mode.beta.copy()

    def __call__(self, x: float) -> float:
        b0 = self.last.copy()
        b0[self.j] = x
        r = coordinate_descent(self.engine, spec=self.ctx.spec, tolerance=self.tol,
                               max_iterations=self.ctx.max_iterations,
                               beta0=b0, convergence="gradient", fixed=self.fixed)
        self.last = r.beta
        return r.log_likelihood + r.log_prior

    def end(self, side: float, drop: float, step: float) -> float:
        """Where the profile falls ``drop`` below its maximum on one side of the mode."""
        from scipy.optimize import brentq

        target = self.lp_hat - drop
        centre = self.beta_hat[self.j]
        inside, d = centre, step
        while True:
            x = centre + side * d
            if self(x) < target:
                break
            inside = x
            if d > PROFILE_MAX_DISTANCE:
                return side * math.inf
            d *= 2.0
        lo, hi = sorted((inside, x))
        return float(brentq(lambda v: self(v) - target, lo, hi, xtol=1e-10, rtol=1e-12))


def profile_log_posterior(fit, covariate, values) -> pd.Series:
    """Profile log posterior of one coefficient at ``values`` (the other coefficients refitted)."""
    j = int(_indices(fit, [covariate])[0])
    ctx = _context(fit)
    vals = np.asarray(values, dtype=np.float64).ravel()
    with threads_context(ctx.threads):
        prof = _Profile(fit, ctx.engine_factory(), j)
        out = [prof(v) for v in vals]
    return pd.Series(out, index=pd.Index(vals, name="value"), name="log_posterior")


def _profile(fit, idx, level, want_p):
    from scipy.stats import chi2

    ctx = _context(fit)
    drop = chi2.ppf(level, 1) / 2.0
    lower, upper, p = [], [], []
    with threads_context(ctx.threads):
        engine = ctx.engine_factory()
        for j in idx:
            prof = _Profile(fit, engine, int(j))
            engine.set_beta(prof.beta_hat)
            _, h = engine.gradient_hessian(int(j))
            step = min(max(1.0 / math.sqrt(h), 0.05), 5.0) if h > 0 else 1.0
            lower.append(prof.end(-1.0, drop, step))
            upper.append(prof.end(1.0, drop, step))
            if want_p:
                lr = 2.0 * (prof.lp_hat - prof(0.0))
                p.append(float(chi2.sf(max(lr, 0.0), 1)))
    return np.array(lower), np.array(upper), np.array(p)


def confint(fit, covariates=None, *, level: float = 0.95, method: str = "profile") -> pd.DataFrame:
    """Confidence intervals for the log relative risks of ``covariates`` (default: all).

    Parameters
    ----------
    fit : SCCSFit
    covariates : id or list of ids, optional
    level : float in (0, 1)
    method : {"profile", "wald"}
        ``"profile"``: profile log-posterior interval (Cyclops' ``confint``; every other
        coefficient refitted at each trial value, so it costs a few dozen warm-started fits
        per covariate). ``"wald"``: estimate -+ z * standard error from :func:`covariance`.

    Returns
    -------
    DataFrame
        Columns ``lower`` and ``upper`` (log relative risk), indexed by covariate id; an end
        that does not exist (the profile never falls far enough) is +-inf. A covariate in
        ``fit.infinite`` has no Wald interval (NaN, with an :class:`~hphawkes_py.sccs.MLEWarning`).
    """
    level = _check_level(level)
    method = _check_method(method)
    idx = _indices(fit, covariates)
    if method == "wald":
        lo, hi, _, _ = _wald(fit, idx, level, _infinite(fit, idx)[0])
    else:
        lo, hi, _ = _profile(fit, idx, level, want_p=False)
    out = pd.DataFrame({"lower": lo, "upper": hi}, index=fit.coefficients.index[idx])
    out.attrs.update(level=level, method=method)
    return out


def results_table(fit, covariates=None, *, level: float = 0.95, method: str = "wald") -> pd.DataFrame:
    """Per-exposure results, one row per covariate (default: all but the age/season/calendar
    spline coefficients, which :func:`spline_effects` reports as curves).

    Parameters
    ----------
    fit : SCCSFit
        A fit made by :func:`~hphawkes_py.sccs.fit`.
    covariates : id or list of ids, optional
        The rows of the table (default: every non-spline covariate).
    level : float in (0, 1)
        Confidence level of the intervals.
    method : {"wald", "profile"}
        Intervals and p-values as in :func:`confint`.

    Returns
    -------
    DataFrame
        Indexed by covariate id, with columns

        * ``coefficient``, ``se``: log relative risk and its standard error (Hessian at the mode);
        * ``irr``, ``irr_lower``, ``irr_upper``: incidence rate ratio exp(b) and its ``level``
          interval;
        * ``p``: two-sided p-value for ``b = 0``: Wald z test, or for ``method="profile"`` the
          likelihood-ratio test on the profile (with a prior both are approximate);
        * ``cases``: cases (strata with events) in the analysis;
        * ``exposed_cases``: cases with any time at a non-zero value of the covariate;
        * ``exposed_time``: person-time at non-zero values (the units of ``time``; days for
          :meth:`SCCSData.from_eras`);
        * ``exposed_events``: events during that time.

        A covariate in ``fit.infinite`` (its maximum-likelihood estimate is infinite, see
        :func:`~hphawkes_py.sccs.fit`) has ``coefficient`` -inf or +inf (``irr`` 0 or inf) and,
        with an :class:`~hphawkes_py.sccs.MLEWarning`, NaN ``se`` and Wald interval and p-value;
        ``method="profile"`` gives its likelihood-ratio interval, open on the infinite side.
    """
    level = _check_level(level)
    method = _check_method(method)
    data = _context(fit).data
    if covariates is None and getattr(data, "splines", ()):
        spline = set(data.spline_ids)
        covariates = [c for c in fit.coefficients.index if c not in spline]
    idx = _indices(fit, covariates)
    infinite, b = _infinite(fit, idx)
    lo, hi, p, se = _wald(fit, idx, level, infinite)
    if method == "profile":
        lo, hi, p = _profile(fit, idx, level, want_p=True)
    exposed_cases, exposed_time, exposed_events = [], [], []
    for j in idx:
        rows = data.row_idx[data.col_ptr[j]:data.col_ptr[j + 1]]
        exposed_cases.append(int(np.unique(data.row_stratum[rows]).size))
        exposed_time.append(float(data.time[rows].sum()))
        exposed_events.append(float(data.y[rows].sum()))
    out = pd.DataFrame(
        {
            "coefficient": b,
            "se": se,
            "irr": np.exp(b),
            "irr_lower": np.exp(lo),
            "irr_upper": np.exp(hi),
            "p": p,
            "cases": data.n_strata,
            "exposed_cases": exposed_cases,
            "exposed_time": exposed_time,
            "exposed_events": exposed_events,
        },
        index=fit.coefficients.index[idx],
    )
    out.attrs.update(level=level, method=method)
    return out


def spline_effects(fit, term=None, *, level: float = 0.95, n: int = 200) -> pd.DataFrame:
    """Fitted age / season / calendar-time effects on a grid, with pointwise Wald bands.

    The effect of a term at ``x`` is ``B(x) b`` (``B`` the term's basis, ``b`` its
    coefficients); its variance ``B(x) C B(x)'`` uses the covariance ``C`` of :func:`covariance`
    (the inverse negative Hessian of the log posterior, so with a spline prior the bands are
    posterior bands). Effects are log rate ratios relative to the term's reference (0 at the
    first knot for age and calendar time; see :mod:`.splines`).

    Parameters
    ----------
    fit : SCCSFit
    term : {"age", "season", "calendar"}, optional
        One term (default: every spline term of the design).
    level : float in (0, 1)
    n : int
        Grid points per term, evenly spaced over its knots (>= 2).

    Returns
    -------
    DataFrame
        Columns ``term, x`` (days of age, month of the year in [0, 12], or day),
        ``log_effect, se, lower, upper`` (log scale) and ``rr, rr_lower, rr_upper``.
    """
    from scipy.stats import norm

    from .._validate import check_int

    level = _check_level(level)
    n = check_int(n, "n", minimum=2)
    data = _context(fit).data
    terms = tuple(getattr(data, "splines", ()))
    if not terms:
        raise ValueError("this fit's design has no spline terms (SCCSData.from_eras age_knots=, season_knots=, "
                         "calendar_knots=)")
    if term is not None:
        if not isinstance(term, str):
            raise TypeError(f"term must be one of {[t.name for t in terms]}, got {describe(term)}")
        terms = (data.spline_term(term),)
    ids = [c for t in terms for c in t.covariate_ids]
    cov = covariance(fit, ids)
    z = norm.ppf(0.5 + level / 2.0)
    out = []
    for t in terms:
        x = t.grid(n)
        B = t.basis(x)
        b = fit.coefficients.loc[list(t.covariate_ids)].to_numpy(float)
        C = cov.loc[list(t.covariate_ids), list(t.covariate_ids)].to_numpy(float)
        eff = B @ b
        se = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", B, C, B), 0.0))
        out.append(pd.DataFrame({"term": t.name, "x": x, "log_effect": eff, "se": se, "lower": eff - z * se,
                                 "upper": eff + z * se, "rr": np.exp(eff), "rr_lower": np.exp(eff - z * se),
                                 "rr_upper": np.exp(eff + z * se)}))
    res = pd.concat(out, ignore_index=True)
    res.attrs.update(level=level)
    return res
