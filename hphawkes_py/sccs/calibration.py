"""Empirical calibration with negative controls (Schuemie et al. 2014, 2018).

Negative controls are exposure-outcome pairs believed to have no causal effect (true relative
risk 1). Their estimates show the study's systematic error: each observed log relative risk is

    log_rr_i ~ N(mean, sd^2 + se_i^2),

the bias ``N(mean, sd^2)`` (the *empirical null*) plus the estimate's own sampling error
``se_i``. :meth:`EmpiricalNull.fit` finds ``mean`` and ``sd`` by maximum likelihood, as
EmpiricalCalibration's ``fitNull``; the fitted null then calibrates p-values (``calibrateP``)
and confidence intervals (``calibrateConfidenceInterval`` with the error model of
``convertNullToErrorModel``: the same bias at every true effect size).

References
----------
Schuemie MJ, Ryan PB, DuMouchel W, Suchard MA, Madigan D (2014). Interpreting observational
studies: why empirical calibration is needed to correct p-values. Statistics in Medicine
33(2):209-218.

Schuemie MJ, Hripcsak G, Ryan PB, Madigan D, Suchard MA (2018). Empirical confidence interval
calibration for population-level effect estimation studies in observational healthcare data.
PNAS 115(11):2571-2577.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np
import pandas as pd
from scipy import optimize, stats

from .._parallel import run_replicates
from .._validate import as_float_array, check_bool, check_in, check_probability, check_same_length, describe
from .data import SCCSData
from .model import fit as _fit
from .results import MLEWarning

__all__ = ["EmpiricalNull", "SystematicErrorModel", "fit_negative_controls", "MIN_CONTROLS", "EXTREME_LOG_RR", "EASE_THRESHOLD"]

#: Fewest usable negative controls :meth:`EmpiricalNull.fit` accepts: the null has two
#: parameters, and with two controls its standard deviation rests on a single difference.
MIN_CONTROLS = 3
#: ``fitNull`` leaves out estimates with ``|log_rr| > log(100)`` (a failed fit, not a bias).
EXTREME_LOG_RR = math.log(100.0)
#: SelfControlledCaseSeries' default ``easeThreshold``: a study passes with EASE below it.
EASE_THRESHOLD = 0.25


def _pair(log_rr, se_log_rr):
    """Both arguments as float arrays of one length (NaN/inf allowed here; callers decide)."""
    x = as_float_array(log_rr, "log_rr", ndim=1, finite=False)
    s = as_float_array(se_log_rr, "se_log_rr", ndim=1, finite=False)
    check_same_length(log_rr=x, se_log_rr=s)
    # a finite standard error must be positive; NaN/inf are the callers' business
    bad = np.isfinite(s) & (s <= 0)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"se_log_rr must be > 0 (a standard error): {int(bad.sum())} value(s) <= 0, first "
                         f"se_log_rr[{i}] = {s[i].item()!r}")
    return x, s


def _neg_log_lik(mean, sd, x, se):
    """Minus the log-likelihood of the null ``(mean, sd)``: sum of -log N(x_i; mean, sd^2 + se_i^2)."""
    v = sd * sd + se * se
    return 0.5 * float(np.sum(np.log(2.0 * np.pi * v) + (x - mean) ** 2 / v))


def _profile_mean(sd, x, se):
    """The mean that maximises the likelihood at a given ``sd`` (inverse-variance weighted mean)."""
    w = 1.0 / (sd * sd + se * se)
    return float(np.sum(w * x) / np.sum(w))


def _fit_null(x, se):
    """Maximum-likelihood ``(mean, sd, log-likelihood)``.

    The mean is profiled out in closed form, leaving a one-dimensional problem in ``sd`` on
    ``[0, max(x) - min(x)]`` (beyond the spread of the estimates a wider null only lowers the
    likelihood): a grid finds the basin, Brent's method the optimum, and ``sd = 0`` (no
    systematic error beyond sampling error) is a candidate of its own.
    """
    def profile(sd):
        return _neg_log_lik(_profile_mean(sd, x, se), sd, x, se)

    upper = float(np.max(x) - np.min(x))
    candidates = [(profile(0.0), 0.0)]
    if upper > 0:
        grid = upper * np.linspace(0.0, 1.0, 201) ** 2
        values = np.array([profile(s) for s in grid])
        k = int(np.argmin(values))
        lo, hi = grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]
        if hi > lo:
            res = optimize.minimize_scalar(profile, bounds=(lo, hi), method="bounded",
                                           options={"xatol": 1e-12 * max(upper, 1e-300)})
            candidates.append((float(res.fun), float(res.x)))
        candidates.append((float(values[k]), float(grid[k])))
    nll, sd = min(candidates)
    return _profile_mean(sd, x, se), sd, -nll


@dataclass(frozen=True)
class EmpiricalNull:
    """The empirical null distribution ``N(mean, sd^2)`` of the systematic error (log scale).

    Fit it with :meth:`fit` to the estimates of negative controls; then
    :meth:`calibrate_p` and :meth:`calibrate_ci` calibrate the estimates of interest.

    Parameters
    ----------
    mean : float
        Mean of the systematic error on the log relative-risk scale (0: unbiased on average).
    sd : float
        Standard deviation of the systematic error (>= 0).
    n_controls : int
        Negative controls used in the fit.
    log_likelihood : float
        Log-likelihood at the estimate.
    dropped : dict
        Estimates left out of the fit, and why (counts): ``"non_finite"`` (NaN or infinite
        log_rr or se) and ``"extreme"`` (``|log_rr| > log(100)``).

    See Also
    --------
    hphawkes_py.sccs.fit : fits the negative-control exposures of a study.

    Examples
    --------
    Forty negative controls with a bias of mean 0.2 and sd 0.1:

    >>> rng = np.random.default_rng(1)
    >>> se = rng.uniform(0.05, 0.3, 40)
    >>> log_rr = rng.normal(0.2, np.sqrt(0.1**2 + se**2))
    >>> null = hp.sccs.EmpiricalNull.fit(log_rr, se)
    >>> round(null.mean, 2), round(null.sd, 2)
    (0.2, 0.04)

    A drug with an observed relative risk of 1.5 (log 0.405, se 0.1) is much less surprising
    once the bias is allowed for:

    >>> from scipy.stats import norm
    >>> round(float(2 * norm.sf(np.log(1.5) / 0.1)), 5)
    5e-05
    >>> null.calibrate_p([np.log(1.5)], [0.1]).round(3).tolist()
    [0.056]

    Calibrated intervals shift by the mean bias and widen by its spread:

    >>> null.calibrate_ci([np.log(1.5)], [0.1])[["rr", "lower", "upper"]].round(2).to_numpy().tolist()
    [[1.23, 0.99, 1.53]]
    """

    mean: float
    sd: float
    n_controls: int
    log_likelihood: float
    dropped: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def fit(cls, log_rr, se_log_rr, *, invalid: str = "drop") -> "EmpiricalNull":
        """Maximum-likelihood fit of the null to negative-control estimates (``fitNull``).

        Each ``log_rr_i ~ N(mean, sd^2 + se_log_rr_i^2)``; the mean is profiled out in closed
        form (the inverse-variance weighted mean at a given ``sd``) and ``sd >= 0`` found by a
        bounded one-dimensional search, so the optimum, including ``sd = 0``, is found to
        machine precision (EmpiricalCalibration searches ``(mean, 1/sd^2)`` by Nelder-Mead from
        ``(0, 1)``, which agrees to its own tolerance).

        Parameters
        ----------
        log_rr : array_like (n,)
            Log relative-risk estimates of the negative controls.
        se_log_rr : array_like (n,)
            Their standard errors (> 0).
        invalid : {"drop", "raise"}
            Estimates with NaN or infinite ``log_rr`` or ``se_log_rr`` (a control without
            events in one period, say) and extreme ones (``|log_rr| > log(100)``) cannot be
            used. ``"drop"`` (default, as ``fitNull``) leaves them out with a warning and
            counts them in ``dropped``; ``"raise"`` refuses them.

        Returns
        -------
        EmpiricalNull

        Raises
        ------
        ValueError
            Lengths differ, a standard error <= 0, fewer than :data:`MIN_CONTROLS` usable
            controls, or (``invalid="raise"``) an unusable estimate.
        """
        check_in(invalid, "invalid", ("drop", "raise"))
        x, s = _pair(log_rr, se_log_rr)
        non_finite = ~(np.isfinite(x) & np.isfinite(s))
        extreme = ~non_finite & (np.abs(np.where(non_finite, 0.0, x)) > EXTREME_LOG_RR)
        bad = non_finite | extreme
        if bad.any():
            i = int(np.argmax(bad))
            what = (f"{int(non_finite.sum())} NaN/infinite and {int(extreme.sum())} extreme (|log_rr| > log(100)) "
                    f"estimate(s), first at index {i} (log_rr={x[i].item()!r}, se_log_rr={s[i].item()!r})")
            if invalid == "raise":
                raise ValueError(f"negative controls: {what}; use invalid='drop' to leave them out")
            warnings.warn(f"negative controls: {what} left out of the null fit", UserWarning, stacklevel=2)
        x, s = x[~bad], s[~bad]
        if x.size < MIN_CONTROLS:
            raise ValueError(f"fitting the empirical null needs at least {MIN_CONTROLS} negative controls with finite "
                             f"estimates, got {x.size} (of {bad.size}; {int(bad.sum())} unusable)")
        mean, sd, ll = _fit_null(x, s)
        return cls(mean=mean, sd=sd, n_controls=int(x.size), log_likelihood=ll,
                   dropped={"non_finite": int(non_finite.sum()), "extreme": int(extreme.sum())})

    def __post_init__(self):
        if not (np.isfinite(self.mean) and np.isfinite(self.sd) and self.sd >= 0):
            raise ValueError(f"EmpiricalNull needs a finite mean and a finite sd >= 0, got mean={self.mean!r}, "
                             f"sd={self.sd!r}")

    def _total_sd(self, s):
        return np.sqrt(self.sd * self.sd + s * s)

    def calibrate_p(self, log_rr, se_log_rr, *, alternative: str = "two-sided") -> np.ndarray:
        """Calibrated p-values (``calibrateP``): the estimate judged against the null plus its own error.

        With ``z = (log_rr - mean) / sqrt(sd^2 + se^2)`` the two-sided p-value is
        ``2 min(Phi(z), Phi(-z))``; ``"greater"`` is ``Phi(-z)`` (evidence of a raised risk,
        ``calibrateP(upper=TRUE)``), ``"less"`` is ``Phi(z)``.

        Parameters
        ----------
        log_rr, se_log_rr : array_like (n,)
            Estimates to calibrate and their standard errors (> 0).
        alternative : {"two-sided", "greater", "less"}

        Returns
        -------
        ndarray (n,)
            Calibrated p-values, in the order given; NaN where ``log_rr`` or ``se_log_rr`` is
            NaN or infinite (as ``calibrateP``'s NA: such an estimate has no p-value).

        Raises
        ------
        ValueError
            Lengths differ or a standard error <= 0.
        """
        check_in(alternative, "alternative", ("two-sided", "greater", "less"))
        x, s = _pair(log_rr, se_log_rr)
        ok = np.isfinite(x) & np.isfinite(s)
        p = np.full(x.shape, np.nan)
        z = (x[ok] - self.mean) / self._total_sd(s[ok])
        if alternative == "two-sided":
            p[ok] = 2.0 * stats.norm.cdf(-np.abs(z))
        elif alternative == "greater":
            p[ok] = stats.norm.sf(z)
        else:
            p[ok] = stats.norm.cdf(z)
        return p

    def calibrate_ci(self, log_rr, se_log_rr, level: float = 0.95) -> pd.DataFrame:
        """Calibrated estimates and confidence intervals (``calibrateConfidenceInterval``).

        The error model is the null at every true effect size (EmpiricalCalibration's
        ``convertNullToErrorModel`` with ``meanSlope = 1, sdSlope = 0``): an estimate of a true
        log relative risk ``t`` is ``N(t + mean, sd^2 + se^2)``. Inverting it gives

            log_rr_cal = log_rr - mean,   bounds = log_rr - mean -+ z sqrt(sd^2 + se^2),

        with ``z`` the ``(1 + level) / 2`` normal quantile; the calibrated standard error is
        ``sqrt(sd^2 + se^2)``. EmpiricalCalibration finds the same bounds by root finding.

        Parameters
        ----------
        log_rr, se_log_rr : array_like (n,)
            Estimates and their standard errors (> 0).
        level : float in (0, 1)
            Confidence level.

        Returns
        -------
        DataFrame
            One row per estimate, in the order given: ``log_rr``, ``log_lower``,
            ``log_upper``, ``se_log_rr`` (calibrated, log scale) and ``rr``, ``lower``,
            ``upper`` (their exponentials). NaN rows where the input is NaN or infinite.

        Raises
        ------
        ValueError
            Lengths differ, a standard error <= 0, ``level`` outside (0, 1).
        """
        level = check_probability(level, "level", high_open=True)
        x, s = _pair(log_rr, se_log_rr)
        ok = np.isfinite(x) & np.isfinite(s)
        z = stats.norm.ppf(0.5 + level / 2.0)
        centre = np.full(x.shape, np.nan)
        centre[ok] = x[ok] - self.mean  # finite rows only: arithmetic on R's NA (a signalling NaN) warns
        total = np.where(ok, self._total_sd(np.where(ok, s, 0.0)), np.nan)
        out = pd.DataFrame({"log_rr": centre, "log_lower": centre - z * total, "log_upper": centre + z * total,
                            "se_log_rr": total})
        for a, b in (("rr", "log_rr"), ("lower", "log_lower"), ("upper", "log_upper")):
            out[a] = np.exp(out[b])
        out.attrs["level"] = level
        return out

    @property
    def ease(self) -> float:
        """Expected absolute systematic error ``E|B|`` for ``B ~ N(mean, sd^2)`` (EmpiricalCalibration's
        ``computeExpectedAbsoluteSystematicError``; SelfControlledCaseSeries passes a study when it
        is below :data:`EASE_THRESHOLD`). The mean of a folded normal distribution:
        ``sd sqrt(2/pi) exp(-mean^2 / (2 sd^2)) + mean (1 - 2 Phi(-mean/sd))``, ``|mean|`` when ``sd = 0``."""
        m, sd = self.mean, self.sd
        if sd == 0:
            return abs(m)
        return float(sd * math.sqrt(2.0 / math.pi) * math.exp(-m * m / (2.0 * sd * sd))
                     + m * (1.0 - 2.0 * stats.norm.cdf(-m / sd)))

    def plot(self, log_rr, se_log_rr, *, level: float = 0.95, ax=None, path=None):
        """Calibration plot (EmpiricalCalibration's ``plotCalibrationEffect``).

        Estimates as points (relative risk on a log axis against the standard error); the
        dashed lines bound the region where the uncalibrated p-value is above ``1 - level``
        (``|log_rr| < z se``), the shaded region the same for the calibrated p-value
        (``|log_rr - mean| < z sqrt(sd^2 + se^2)``). Negative controls belong inside it.

        Parameters
        ----------
        log_rr, se_log_rr : array_like (n,)
            Estimates to show (negative controls, say) and their standard errors (> 0);
            NaN or infinite estimates cannot be drawn and are refused.
        level : float in (0, 1)
            ``1 - level`` is the significance level of the boundaries.
        ax : matplotlib Axes, optional
        path : str or Path, optional
            Save the figure there.

        Returns
        -------
        matplotlib.axes.Axes

        Raises
        ------
        ImportError
            matplotlib is not installed.
        """
        level = check_probability(level, "level", high_open=True)
        x, s = _pair(log_rr, se_log_rr)
        bad = ~(np.isfinite(x) & np.isfinite(s))
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"plot needs finite estimates: {int(bad.sum())} NaN/infinite, first at index {i} "
                             f"(log_rr={x[i].item()!r}, se_log_rr={s[i].item()!r})")
        try:
            import matplotlib.pyplot as plt
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("EmpiricalNull.plot needs matplotlib: pip install matplotlib") from exc
        if ax is None:
            _, ax = plt.subplots(figsize=(5.5, 4.0))
        z = stats.norm.ppf(0.5 + level / 2.0)
        top = max(1.5 * float(s.max()) if s.size else 1.0, 0.25)
        grid = np.linspace(0.0, top, 200)
        half = z * self._total_sd(grid)
        ax.fill_betweenx(grid, np.exp(self.mean - half), np.exp(self.mean + half), color="#fdd49e", alpha=0.7,
                         label=f"calibrated p > {1 - level:.2g}")
        ax.plot(np.exp(-z * grid), grid, "k--", lw=1, label=f"uncalibrated p = {1 - level:.2g}")
        ax.plot(np.exp(z * grid), grid, "k--", lw=1)
        ax.scatter(np.exp(x), s, s=14, color="#1f4e79", zorder=3)
        ax.axvline(1.0, color="0.5", lw=0.8)
        ax.set_xscale("log")
        span = max(float(np.max(np.abs(x))) if x.size else 1.0, float(abs(self.mean) + half[-1]))
        ax.set_xlim(np.exp(-span * 1.05), np.exp(span * 1.05))
        ax.set_ylim(top, 0.0)
        ax.set_xlabel("relative risk")
        ax.set_ylabel("standard error of log relative risk")
        ax.legend(loc="lower right", fontsize=8, frameon=False)
        if path is not None:
            ax.figure.savefig(path, dpi=120)
        return ax

    def __repr__(self) -> str:
        drop = ", ".join(f"{k}={v}" for k, v in self.dropped.items() if v) or "nothing"
        return (f"EmpiricalNull(mean={self.mean:.4f}, sd={self.sd:.4f}, n_controls={self.n_controls}, "
                f"dropped: {drop})")


# ------------------------------------------------------------------ with positive controls
def _error_model_nll(theta, x, se, t):
    """Minus the log-likelihood of the systematic error model (``fitSystematicErrorModel``):
    ``x_i ~ N(a + b t_i, (c + d |t_i|)^2 + se_i^2)``; +inf where a standard deviation is negative."""
    a, b, c, d = theta
    sd = c + d * np.abs(t)
    if np.any(sd < 0):
        return math.inf
    return _neg_log_lik(a + b * t, sd, x, se)


@dataclass(frozen=True)
class SystematicErrorModel:
    """Systematic error as a function of the true effect size (Schuemie et al. 2018).

    An estimate of a true log relative risk ``t`` is ``N(mean_intercept + mean_slope t,
    (sd_intercept + sd_slope |t|)^2 + se^2)``: EmpiricalCalibration's (non-legacy)
    ``fitSystematicErrorModel``, fitted to negative controls (``t = 0``) and positive controls
    (known ``t != 0``, usually synthetic). :meth:`from_null` is the model of an
    :class:`EmpiricalNull` alone (``convertNullToErrorModel``).

    Parameters
    ----------
    mean_intercept, mean_slope : float
        Mean of the estimate's error as ``mean_intercept + mean_slope t`` (``mean_slope`` 1: the
        same bias at every effect size; below 1: estimates shrunk towards the null).
    sd_intercept, sd_slope : float
        Standard deviation of the error as ``sd_intercept + sd_slope |t|``.
    n_controls : int
        Controls used in the fit (0 for :meth:`from_null`).
    log_likelihood : float
        Log-likelihood at the estimate (NaN for :meth:`from_null`).
    dropped : dict
        Estimates left out of the fit (``"non_finite"``: NaN or infinite ``log_rr`` or ``se``).

    Examples
    --------
    Twenty controls at each of the true relative risks 1, 2 and 4, estimated with a bias of mean
    0.2 that shrinks the larger effects a little:

    >>> rng = np.random.default_rng(5)
    >>> t = np.repeat(np.log([1.0, 2.0, 4.0]), 20)
    >>> se = rng.uniform(0.05, 0.2, t.size)
    >>> x = rng.normal(0.2 + 0.9 * t, np.sqrt(0.1**2 + se**2))
    >>> model = hp.sccs.SystematicErrorModel.fit(x, se, t)
    >>> round(model.mean_intercept, 2), round(model.mean_slope, 2)
    (0.19, 0.89)
    >>> model.calibrate_ci([np.log(3.0)], [0.1])[["rr", "lower", "upper"]].round(2).to_numpy().tolist()
    [[2.79, 2.1, 3.81]]
    """

    mean_intercept: float
    mean_slope: float
    sd_intercept: float
    sd_slope: float
    n_controls: int = 0
    log_likelihood: float = math.nan
    dropped: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self):
        theta = (self.mean_intercept, self.mean_slope, self.sd_intercept, self.sd_slope)
        if not all(np.isfinite(v) for v in theta):
            raise ValueError(f"SystematicErrorModel needs finite parameters, got {theta}")

    @classmethod
    def from_null(cls, null: EmpiricalNull, *, mean_slope: float = 1.0, sd_slope: float = 0.0) -> "SystematicErrorModel":
        """The error model of a null alone (``convertNullToErrorModel``): the null's mean and sd as
        intercepts, with assumed slopes (default: the same error at every effect size)."""
        if not isinstance(null, EmpiricalNull):
            raise TypeError(f"null must be an EmpiricalNull, got {type(null).__name__}")
        return cls(mean_intercept=null.mean, mean_slope=float(mean_slope), sd_intercept=null.sd,
                   sd_slope=float(sd_slope))

    @classmethod
    def fit(cls, log_rr, se_log_rr, true_log_rr, *, invalid: str = "drop") -> "SystematicErrorModel":
        """Maximum-likelihood fit to negative and positive controls (``fitSystematicErrorModel``).

        Parameters
        ----------
        log_rr, se_log_rr : array_like (n,)
            Estimates of the controls and their standard errors (> 0).
        true_log_rr : array_like (n,)
            The controls' true log relative risks (0 for negative controls); finite, with at
            least two distinct values (the slopes need them).
        invalid : {"drop", "raise"}
            NaN or infinite estimates: left out with a warning and counted (as
            ``fitSystematicErrorModel``), or refused.

        Returns
        -------
        SystematicErrorModel

        Raises
        ------
        ValueError
            Lengths differ, a standard error <= 0, non-finite ``true_log_rr``, fewer than
            :data:`MIN_CONTROLS` usable controls or one true value only.
        """
        check_in(invalid, "invalid", ("drop", "raise"))
        x, s = _pair(log_rr, se_log_rr)
        t = as_float_array(true_log_rr, "true_log_rr", ndim=1)
        check_same_length(log_rr=x, true_log_rr=t)
        bad = ~(np.isfinite(x) & np.isfinite(s))
        if bad.any():
            i = int(np.argmax(bad))
            what = (f"{int(bad.sum())} NaN/infinite estimate(s), first at index {i} (log_rr={x[i].item()!r}, "
                    f"se_log_rr={s[i].item()!r})")
            if invalid == "raise":
                raise ValueError(f"controls: {what}; use invalid='drop' to leave them out")
            warnings.warn(f"controls: {what} left out of the error model", UserWarning, stacklevel=2)
        x, s, t = x[~bad], s[~bad], t[~bad]
        if x.size < MIN_CONTROLS:
            raise ValueError(f"fitting the error model needs at least {MIN_CONTROLS} controls with finite estimates, "
                             f"got {x.size}")
        if np.unique(t).size < 2:
            raise ValueError("true_log_rr must hold at least two different true effect sizes (negative and positive "
                             f"controls), got only {np.unique(t).tolist()}: use EmpiricalNull.fit for negative controls")
        theta = _fit_error_model(x, s, t)
        return cls(*map(float, theta), n_controls=int(x.size), log_likelihood=-_error_model_nll(theta, x, s, t),
                   dropped={"non_finite": int(bad.sum())})

    def calibrate_ci(self, log_rr, se_log_rr, level: float = 0.95) -> pd.DataFrame:
        """Calibrated estimates and intervals (``calibrateConfidenceInterval``).

        The bound of level ``level`` for an estimate ``log_rr`` is the true ``t`` that solves
        ``z + (mean(t) - log_rr) / sqrt(sd(t)^2 + se^2) = 0`` (``z`` the normal quantile of the
        bound; 0 for the point estimate), found by Brent's method on ``[-100, 100]``.

        Parameters
        ----------
        log_rr, se_log_rr : array_like (n,)
            Estimates and their standard errors (> 0).
        level : float in (0, 1)
            Confidence level.

        Returns
        -------
        DataFrame
            As :meth:`EmpiricalNull.calibrate_ci`; NaN rows for NaN/infinite input and NaN
            where no root lies in ``[-100, 100]`` (with a warning).

        Raises
        ------
        ValueError
            Lengths differ, a standard error <= 0, ``level`` outside (0, 1).
        """
        level = check_probability(level, "level", high_open=True)
        x, s = _pair(log_rr, se_log_rr)
        z = stats.norm.ppf(0.5 + level / 2.0)
        est, lower, upper = (np.full(x.shape, np.nan) for _ in range(3))
        missed = 0
        for i in np.flatnonzero(np.isfinite(x) & np.isfinite(s)):
            for out, q in ((est, 0.0), (lower, z), (upper, -z)):
                out[i] = self._root(q, x[i], s[i])
                missed += int(np.isnan(out[i]))
        if missed:
            warnings.warn(f"{missed} calibrated bound(s) have no solution in [-100, 100] and are NaN", UserWarning,
                          stacklevel=2)
        out = pd.DataFrame({"log_rr": est, "log_lower": lower, "log_upper": upper,
                            "se_log_rr": (upper - lower) / (2.0 * z)})
        for a, b in (("rr", "log_rr"), ("lower", "log_lower"), ("upper", "log_upper")):
            out[a] = np.exp(out[b])
        out.attrs["level"] = level
        return out

    def _root(self, q, x, se):
        def f(t):
            sd = self.sd_intercept + self.sd_slope * abs(t)
            return q + (self.mean_intercept + self.mean_slope * t - x) / math.sqrt(sd * sd + se * se)

        lo, hi = f(-100.0), f(100.0)
        if (lo < 0 and hi < 0) or (lo > 0 and hi > 0):
            return math.nan
        return optimize.brentq(f, -100.0, 100.0, xtol=1e-12, rtol=4 * np.finfo(float).eps)


def _fit_error_model(x, se, t):
    """Maximum-likelihood ``(a, b, c, d)`` of :class:`SystematicErrorModel` under ``c + d |t| >= 0``
    at every control: SLSQP from ``fitSystematicErrorModel``'s start ``(0, 1, 0.1, 0)`` and from
    the least-squares line, the better optimum kept."""
    abs_t = np.abs(t)
    cons = [{"type": "ineq", "fun": lambda th, u=u: th[2] + th[3] * u} for u in (abs_t.min(), abs_t.max())]
    slope, intercept = np.polyfit(t, x, 1)
    best = None
    for start in ((0.0, 1.0, 0.1, 0.0), (intercept, slope, 0.1, 0.0)):
        res = optimize.minimize(_error_model_nll, np.array(start, dtype=float), args=(x, se, t), method="SLSQP",
                                constraints=cons, options={"ftol": 1e-14, "maxiter": 1000})
        if np.isfinite(res.fun) and (best is None or res.fun < best.fun):
            best = res
    if best is None:
        raise ValueError("the systematic error model could not be fitted to these controls")
    return best.x


# ------------------------------------------------------------------------ fitting the controls
def _select_columns(data: SCCSData, ids) -> SCCSData:
    """The design with only the covariates ``ids`` (in the data's order); rows and strata as they are."""
    idx = np.sort(pd.Index(data.covariate_ids).get_indexer(pd.Index(ids)))
    parts = [np.arange(data.col_ptr[j], data.col_ptr[j + 1]) for j in idx]
    take = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    col_ptr = np.zeros(idx.size + 1, dtype=np.int64)
    np.cumsum([p.size for p in parts], out=col_ptr[1:])
    return SCCSData(stratum_ids=data.stratum_ids, row_ids=data.row_ids, covariate_ids=data.covariate_ids[idx],
                    stratum_ptr=data.stratum_ptr, row_stratum=data.row_stratum, y=data.y, time=data.time,
                    n_events=data.n_events, col_ptr=col_ptr, row_idx=data.row_idx[take],
                    values=None if data.values is None else data.values[take], dropped=dict(data.dropped),
                    splines=data.splines, censoring=data.censoring)


def _control_job(control, _seed, data, adjust, options):
    """One negative control's own model: its covariate (no prior) with ``adjust`` and the splines."""
    sub = _select_columns(data, [control, *adjust, *data.spline_ids])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MLEWarning)
        res = _fit(sub, exclude=[control], progress=False, **options)
    b = float(res.coefficients[control])
    j = int(pd.Index(sub.covariate_ids).get_loc(control))
    rows = sub.row_idx[sub.col_ptr[j]:sub.col_ptr[j + 1]]
    events = float(sub.y[rows].sum())
    if control in res.infinite:
        return math.copysign(math.inf, b), math.inf, events, False
    se = float(res.results_table([control], method="wald")["se"].iloc[0])
    return b, se, events, bool(res.converged)


def fit_negative_controls(data, controls, *, adjust=(), prior: str = "normal", variance: float = 1.0,
                          spline_prior: str = "normal", spline_variance: float | None = 1.0,
                          tolerance: float = 1e-8, max_iterations: int = 1000, executor=None, progress: bool = True,
                          backend: str = "auto", threads: int | None = None) -> pd.DataFrame:
    """Estimate every negative control in its own model, as OHDSI studies do.

    For each control the design keeps its covariate (unpenalised), the covariates in
    ``adjust`` (with ``prior``) and the age/season/calendar-time splines of ``data``, and is
    fitted by :func:`~hphawkes_py.sccs.fit`; the jobs run through ``executor``. The standard
    error is the Wald one (inverse Hessian), the input :meth:`EmpiricalNull.fit` expects.

    Parameters
    ----------
    data : SCCSData
        A design holding the negative-control exposures as covariates (one
        :meth:`SCCSData.from_eras` call with all their eras).
    controls : sequence
        Covariate ids of the negative controls (unique; not the splines).
    adjust : sequence
        Covariates kept in every control's model (e.g. co-medications); not a control.
    prior, variance : str, float
        Prior of the ``adjust`` covariates (as :func:`~hphawkes_py.sccs.fit`).
    spline_prior, spline_variance : str, float
        Prior of the spline coefficients (as :func:`~hphawkes_py.sccs.fit`).
    tolerance, max_iterations : float, int
        Convergence of each fit (as :func:`~hphawkes_py.sccs.fit`).
    executor : None, concurrent.futures.Executor or dask.distributed.Client
        Where the fits run; ``None`` runs them in this process.
    progress : bool
        Count finished fits on stderr (default True, as everywhere in the library).
    backend, threads :
        As in :func:`~hphawkes_py.sccs.fit`.

    Returns
    -------
    DataFrame
        Indexed by control id: ``log_rr``, ``se_log_rr``, ``exposed_events`` and
        ``converged``. A control whose maximum-likelihood estimate does not exist (no event,
        or every event, in its exposed time) has ``log_rr`` -inf or +inf and ``se_log_rr``
        inf, which :meth:`EmpiricalNull.fit` leaves out with a warning.

    Raises
    ------
    TypeError, ValueError
        Not an SCCSData; controls missing from the data, repeated, spline coefficients, or also
        in ``adjust``; no controls.

    Examples
    --------
    Ten drugs without effect as negative controls:

    >>> data, _ = hp.sccs.simulate(n_cases=1500, n_drugs=10, prevalence=0.3, fraction_positive=0.0, seed=4)
    >>> est = hp.sccs.fit_negative_controls(data, list(range(1, 11)))
    >>> list(est.columns)
    ['log_rr', 'se_log_rr', 'exposed_events', 'converged']
    >>> null = hp.sccs.EmpiricalNull.fit(est["log_rr"], est["se_log_rr"])
    >>> abs(null.mean) < 0.2
    True
    """
    if not isinstance(data, SCCSData):
        raise TypeError(f"data must be an SCCSData, got {type(data).__name__}")
    progress = check_bool(progress, "progress")
    controls, adjust = _id_list(controls, "controls"), _id_list(adjust, "adjust")
    if not controls:
        raise ValueError("controls must name at least one covariate")
    known = pd.Index(data.covariate_ids)
    for name, ids in (("controls", controls), ("adjust", adjust)):
        missing = [c for c, i in zip(ids, known.get_indexer(pd.Index(ids, dtype=object))) if i < 0]
        if missing:
            raise ValueError(f"{name} has covariate id(s) not in the data: {missing[:10]}")
        dup = pd.Index(ids, dtype=object)[pd.Index(ids, dtype=object).duplicated()]
        if len(dup):
            raise ValueError(f"{name} repeats covariate id(s) {list(dup[:10])}")
        spline = [c for c in ids if c in set(data.spline_ids)]
        if spline:
            raise ValueError(f"{name} has spline coefficient(s) {spline[:10]}: the splines are in every model already")
    both = [c for c in controls if c in set(adjust)]
    if both:
        raise ValueError(f"covariate id(s) {both[:10]} are both negative controls and adjusted for; give each once")
    options = dict(prior=prior, variance=variance, spline_prior=spline_prior, spline_variance=spline_variance,
                   tolerance=tolerance, max_iterations=max_iterations, backend=backend, threads=threads)
    # check the settings once, on a first fit, before any job is sent out
    first = _control_job(controls[0], None, data, adjust, options)
    rest = run_replicates(_control_job, controls[1:], executor=executor, progress=progress, desc="negative controls",
                          args=(data, adjust, options))
    out = pd.DataFrame([first, *rest], columns=["log_rr", "se_log_rr", "exposed_events", "converged"],
                       index=pd.Index(controls, name="covariate_id"))
    return out


def _id_list(ids, name):
    if isinstance(ids, (str, bytes)) or not hasattr(ids, "__iter__"):
        raise TypeError(f"{name} must be a list of covariate ids, got {describe(ids)}")
    return [i.item() if isinstance(i, np.generic) else i for i in ids]
