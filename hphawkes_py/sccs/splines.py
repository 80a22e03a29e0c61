"""Spline terms of an SCCS design: age, season and calendar time (SelfControlledCaseSeries style).

The conditional Poisson likelihood needs covariates that are constant within each row, so
every spline is evaluated on *intervals*: the observation time is cut at each month of age
(age bins of 365.25/12 days from the day of birth) and at each calendar month, and each piece
gets the basis values of its bin (age at the bin's midpoint, clipped to the knots; calendar
month for season and calendar time). Within a bin the rate is constant, as in OHDSI
SelfControlledCaseSeries, which also splits time per month.

Bases (no intercept: a constant per person is absorbed by the stratum):

* ``"bspline"`` (age, calendar time): cubic B-splines with boundary knots at the first and
  last knot and the others interior, the first column dropped -- exactly R's
  ``splines::bs(x, knots = knots[2:(n-1)], Boundary.knots = knots[c(1, n)])``; ``n`` knots give
  ``n + 1`` coefficients. The effect is 0 at the first knot (the reference).
* ``"cyclic"`` (season): cyclic cubic B-splines over the year (month-of-year ``x`` in [0, 12),
  period 12 months), a port of mgcv's ``cSplineDes``; ``n`` knots on the cycle give ``n``
  basis functions summing to 1, the first dropped (so ``n - 1`` coefficients, effect relative
  to the season at the first knot's basis peak).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["SplineTerm", "bspline_basis", "cyclic_basis", "AGE_BIN_DAYS"]

#: Length of one age bin (days): a month of age.
AGE_BIN_DAYS = 365.25 / 12.0
#: the number of Gregorian days in 16 age bins is 487, so bin k starts at day (487 k) // 16
_AGE_BIN_NUM, _AGE_BIN_DEN = 487, 16


def _spline_design(t: np.ndarray, x: np.ndarray, k: int = 3, outer_ok: bool = False) -> np.ndarray:
    """B-spline basis of degree ``k`` on knot vector ``t`` at ``x``; shape (len(x), len(t) - k - 1).

    ``outer_ok=False``: ``x`` in the base interval ``[t[k], t[n]]`` (right end included, as
    R's ``bs``). ``outer_ok=True``: as R's ``splineDesign(outer.ok=TRUE)``, every basis function
    is evaluated on its whole support within ``[t[0], t[-1]]`` (zero beyond)."""
    from scipy.interpolate import BSpline

    n = len(t) - k - 1
    x = np.asarray(x, dtype=np.float64)
    out = np.zeros((x.shape[0], n))
    if outer_ok:
        # extra knots outside add basis functions but change none of the existing ones
        # (B_i depends on t[i..i+k+1] only); the base interval then spans t[0]..t[-1]
        pad = np.arange(1, k + 1, dtype=np.float64)
        tp = np.concatenate([t[0] - pad[::-1], t, t[-1] + pad])
        inside = (x >= t[0]) & (x < t[-1])
        if inside.any():
            out[inside] = BSpline.design_matrix(x[inside], tp, k, extrapolate=False).toarray()[:, k:k + n]
        return out
    inside = (x >= t[k]) & (x <= t[n])
    if inside.any():
        out[inside] = BSpline.design_matrix(x[inside], t, k, extrapolate=False).toarray()
    return out


def bspline_basis(x, knots) -> np.ndarray:
    """Cubic B-spline basis without intercept, equal to R's ``splines::bs(x, knots =
    knots[2:(n-1)], Boundary.knots = knots[c(1, n)])``; ``x`` must lie within the knots."""
    knots = np.asarray(knots, dtype=np.float64)
    t = np.concatenate([np.repeat(knots[0], 4), knots[1:-1], np.repeat(knots[-1], 4)])
    return _spline_design(t, x)[:, 1:]


def cyclic_basis(x, knots) -> np.ndarray:
    """Cyclic cubic B-spline basis (mgcv ``cSplineDes``) on ``knots[0]..knots[-1]`` (the period),
    first column dropped; shape (len(x), len(knots) - 2)."""
    knots = np.sort(np.asarray(knots, dtype=np.float64))
    nk, ord_ = knots.shape[0], 4
    k1 = knots[0]
    x = np.asarray(x, dtype=np.float64).copy()
    xc = knots[nk - ord_]
    t = np.concatenate([k1 - (knots[nk - 1] - knots[nk - ord_:nk - 1]), knots])
    X = _spline_design(t, x, outer_ok=True)
    ind = x > xc
    if ind.any():
        X[ind] += _spline_design(t, x[ind] - knots[-1] + k1, outer_ok=True)
    return X[:, 1:]


@dataclass(frozen=True, eq=False)
class SplineTerm:
    """One spline term of a design: its name, covariate ids, kind, knots and x unit.

    :meth:`SCCSData.from_eras` makes these (``age_knots=``, ``season_knots=``,
    ``calendar_knots=``); the design's ``splines`` lists them and
    :meth:`SCCSFit.spline_effects` evaluates them.

    Parameters
    ----------
    name : {"age", "season", "calendar"}
        Which time scale the term adjusts for.
    covariate_ids : tuple
        Ids of its coefficients in the design (``"<name>_1"``, ...).
    kind : {"bspline", "cyclic"}
        Cubic B-splines without intercept (age, calendar time) or cyclic cubic B-splines
        over the year (season); see the module docstring.
    knots : ndarray
        Age terms: days of age; season: months of the year on [0, 12] (the cycle is
        ``knots[0]..knots[-1]``); calendar: days on the data's day scale.
    unit : str
        Unit of ``x`` for display.

    Examples
    --------
    An age term with knots at 0, 10, 20 and 30 years (days of age), evaluated at ages 0, 15
    and 30 years (the effect is 0 at the first knot):

    >>> knots = np.array([0.0, 3652.5, 7305.0, 10957.5])
    >>> term = hp.sccs.SplineTerm("age", tuple(f"age_{i}" for i in range(1, 6)), "bspline", knots, "days of age")
    >>> B = term.basis([0.0, 5478.75, 10957.5])
    >>> B.shape
    (3, 5)
    >>> B.round(6)
    array([[0.     , 0.     , 0.     , 0.     , 0.     ],
           [0.03125, 0.46875, 0.46875, 0.03125, 0.     ],
           [0.     , 0.     , 0.     , 0.     , 1.     ]])
    """

    name: str
    covariate_ids: tuple
    kind: str
    knots: np.ndarray
    unit: str

    def basis(self, x) -> np.ndarray:
        """Basis values at ``x`` (within the knots), shape (len(x), n_coefficients)."""
        x = np.atleast_1d(np.asarray(x, dtype=np.float64))
        if self.kind == "cyclic":
            return cyclic_basis(np.mod(x - self.knots[0], self.knots[-1] - self.knots[0]) + self.knots[0], self.knots)
        if np.any(x < self.knots[0]) or np.any(x > self.knots[-1]):
            raise ValueError(f"{self.name} spline: x outside the knots [{self.knots[0]:g}, {self.knots[-1]:g}]")
        return bspline_basis(x, self.knots)

    def grid(self, n: int = 200) -> np.ndarray:
        """Evenly spaced x over the knots (for plots and tables)."""
        return np.linspace(self.knots[0], self.knots[-1], n)


def age_bin_of(age_days: np.ndarray) -> np.ndarray:
    """Index of the month-of-age bin of each age in days (bin k starts at (487 k) // 16 days)."""
    return (np.asarray(age_days, dtype=np.int64) * _AGE_BIN_DEN + _AGE_BIN_DEN - 1) // _AGE_BIN_NUM


def age_bin_start(k: np.ndarray) -> np.ndarray:
    """First day of age of bin ``k``."""
    return (np.asarray(k, dtype=np.int64) * _AGE_BIN_NUM) // _AGE_BIN_DEN
