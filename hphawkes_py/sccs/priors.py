"""Priors of the Bayesian SCCS model: per-coefficient types and variances, and their log density.

Normal(0, variance): ``log p = -log(2 pi v)/2 - b^2/(2v)``; Laplace with rate
``lambda = sqrt(2 / variance)`` (Cyclops): ``log p = log(lambda/2) - lambda |b|``; or none.
:func:`prior_spec` resolves the ``prior``/``variance``, ``exclude``, per-group ``priors`` and
spline-prior arguments of :func:`~.model.fit` into one :class:`PriorSpec`, the form the
coordinate descent reads.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .._validate import check_in, check_positive, describe
from .data import SCCSData

__all__ = ["PRIORS", "PriorSpec", "log_prior", "check_prior", "check_spline_prior", "prior_spec", "normalise_ids"]

PRIORS = ("laplace", "normal", "none")


def check_prior(prior: str, variance: float, name: str = "") -> tuple[str, float]:
    """``(prior, variance)`` checked; the variance of ``"none"`` may be None (read as NaN)."""
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


def check_spline_prior(prior: str, variance: float | None) -> tuple[str, float]:
    """``(spline_prior, spline_variance)`` checked. ``spline_variance=None`` is an infinite
    variance, i.e. a flat prior: the spline coefficients are fitted unpenalised, as with
    ``spline_prior="none"`` (SelfControlledCaseSeries' ``allowRegularization = FALSE``), and
    the fit records ``("none", nan)``."""
    prior, v = check_prior(prior, 1.0 if variance is None else variance, name="spline")
    return ("none", float("nan")) if variance is None else (prior, v)


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


def prior_spec(data: SCCSData, prior: str, variance: float, exclude, priors, spline=("normal", 1.0)) -> PriorSpec:
    """Per-coefficient priors from the default ``prior``/``variance``, ``exclude``, the
    per-group ``priors`` = [(covariate ids, prior, variance), ...] and, for the spline
    coefficients of age/season/calendar time that neither ``exclude`` nor ``priors`` name,
    ``spline`` = (prior, variance) -- never the drug prior, and never tuned by CV."""
    spec = _group_priors(data, prior, variance, exclude, priors)
    ids = data.spline_ids if getattr(data, "splines", ()) else []
    if not ids:
        return spec
    named = set(normalise_ids(exclude))
    for group, _, _ in priors or ():
        named.update(normalise_ids(group))
    idx = pd.Index(data.covariate_ids).get_indexer(pd.Index([c for c in ids if c not in named]))
    if idx.size:
        p, v = check_prior(spline[0], spline[1], name="spline")
        codes, variances, default = spec.codes.copy(), spec.variances.copy(), spec.default.copy()
        codes[idx] = _CODES[p]
        variances[idx] = v if p != "none" else np.nan
        default[idx] = False
        spec = PriorSpec(codes, variances, default)
    return spec


def _group_priors(data: SCCSData, prior: str, variance: float, exclude, priors) -> PriorSpec:
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
        p, v = check_prior(p, v, name=f"priors[{k}]")
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



def normalise_ids(exclude) -> tuple:
    """One covariate id or a sequence of them, as a tuple."""
    if isinstance(exclude, (str, bytes)) or np.isscalar(exclude):
        return (exclude,)
    return tuple(exclude)

