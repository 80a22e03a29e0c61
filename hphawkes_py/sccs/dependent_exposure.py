"""Event-dependent exposures: the pseudo-likelihood of Farrington, Whitaker & Hocine (2009),
the SCCS package's ``eventdepenexp``.

The SCCS likelihood assumes that the event does not change later exposure. When it does
(a vaccination postponed or cancelled after an intussusception), Farrington et al. replace
the likelihood by a pseudo-likelihood built from stacked data sets, one per exposure level:

* level 0: each case unexposed at the start of observation, from the start of observation;
* level ``i`` (``i = 1 .. number of doses``): each case that had dose ``i``, from the day of
  dose ``i`` to the end of observation.

At level ``i`` only the risk periods of dose ``i`` are exposed; later doses (which the event
may have delayed or stopped) are treated as unexposed time, and an event inside a later
dose's risk period ``k`` counts ``exp(-beta_k)`` instead of 1. The weighted-event model is a
conditional Poisson model (strata = case x level) fitted again with the weights from the
previous estimate until the estimate settles. Standard errors are sandwich errors that sum
the estimating equations of a case over its levels and include the derivative of the
weights (the package's ``Amat``). Doses after the event are treated as missing, since no
exposure is possible after the event under this model.

Day conventions (the SCCS package's): days are integers; observation covers days
``start .. end``; a dose on day ``d`` with risk starts ``r_1 < r_2 < ...`` (``risk_starts``)
and risk end ``e`` (``dose_ends``) has risk period ``k`` on days ``d + r_k .. d + r_{k+1} - 1``
and the last on days ``d + r_K .. e``; a later dose ends the earlier dose's risk; age groups
start on the days in ``age_groups``. A first risk start above 0 leaves days ``d .. d + r_1 - 1``
unexposed (in the reference, as the package does).
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from .._validate import check_bool, check_int, check_positive, check_probability

__all__ = ["EventDependentExposureFit", "event_dependent_exposure"]


@dataclass(frozen=True, eq=False)
class EventDependentExposureFit:
    """Pseudo-likelihood fit of an SCCS model with event-dependent exposures.

    Made by :func:`event_dependent_exposure`.

    Parameters
    ----------
    coefficients : Series
        Log relative incidences: exposure parameters (named like the SCCS package:
        the first dose column and the risk level, e.g. ``"rv1"``), then age groups
        (``"age2"``, ... relative to the first age group).
    covariance : DataFrame
        Sandwich covariance of the coefficients.
    iterations : int
        Reweighting rounds (each a full conditional Poisson fit).
    converged : bool
        The estimate changed by less than ``tolerance`` times the number of exposure
        parameters in the last round.
    n_cases : int
        Cases in the analysis.
    n_strata : int
        Case x level strata of the stacked data.
    doses_after_event : int
        Doses given after the event, treated as missing.
    log_likelihood : float
        Weighted conditional Poisson log-likelihood of the last round.

    Examples
    --------
    >>> import pandas as pd
    >>> from hphawkes_py.sccs import event_dependent_exposure
    >>> rng = np.random.default_rng(0)
    >>> n = 400
    >>> dose = rng.integers(60, 120, n).astype(float)
    >>> event = rng.integers(30, 180, n)
    >>> dose[event < dose] = np.nan  # no dose after the event
    >>> cases = pd.DataFrame({"case": np.arange(n), "start": 30, "end": 180, "event": event, "dose": dose})
    >>> fit = event_dependent_exposure(cases, event="event", doses=["dose"], dose_ends=21)
    >>> fit.results_table().columns.tolist()
    ['coef', 'rr', 'se', 'z', 'p', 'lower', 'upper']
    """

    coefficients: pd.Series
    covariance: pd.DataFrame = field(repr=False)
    iterations: int = 0
    converged: bool = False
    n_cases: int = 0
    n_strata: int = 0
    doses_after_event: int = 0
    log_likelihood: float = float("nan")

    @property
    def se(self) -> pd.Series:
        """Sandwich standard errors of the coefficients."""
        return pd.Series(np.sqrt(np.diag(self.covariance.to_numpy())), index=self.coefficients.index, name="se")

    def results_table(self, level: float = 0.95) -> pd.DataFrame:
        """Estimates with sandwich standard errors, Wald z, two-sided p-values and intervals.

        Parameters
        ----------
        level : float
            Confidence level of the Wald interval of the relative incidence.

        Returns
        -------
        DataFrame
            Indexed by coefficient name: ``coef`` (log relative incidence), ``rr`` = exp(coef),
            ``se``, ``z``, ``p``, ``lower``, ``upper`` (interval of ``rr``).

        Examples
        --------
        >>> import pandas as pd
        >>> fit = hp.sccs.EventDependentExposureFit(pd.Series({"rv1": 0.5}), pd.DataFrame([[0.04]], ["rv1"], ["rv1"]))
        >>> fit.results_table().round(3).loc["rv1", ["rr", "se", "lower"]].tolist()
        [1.649, 0.2, 1.114]
        """
        level = check_probability(level, "level", high_open=True)
        coef, se = self.coefficients, self.se
        z = coef / se
        q = stats.norm.ppf(0.5 + level / 2)
        return pd.DataFrame({"coef": coef, "rr": np.exp(coef), "se": se, "z": z, "p": 2 * stats.norm.sf(np.abs(z)),
                             "lower": np.exp(coef - q * se), "upper": np.exp(coef + q * se)})

    def summary(self) -> pd.DataFrame:
        """:meth:`results_table` at the 95% level."""
        return self.results_table()

    def __repr__(self) -> str:
        body = self.results_table().round(4).to_string()
        return (f"EventDependentExposureFit(n_cases={self.n_cases}, strata={self.n_strata}, "
                f"iterations={self.iterations}, converged={self.converged}, "
                f"doses_after_event={self.doses_after_event})\n{body}")


# ----------------------------------------------------------------------------- input
def _column(cases, name, what):
    if not isinstance(name, str) or name not in cases.columns:
        raise ValueError(f"{what}={name!r} is not a column of cases (columns: {list(cases.columns)})")
    return cases[name]


def _days(series, name, *, allow_missing=False):
    try:
        x = np.asarray(series, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"cases[{name!r}] must be numeric days, got dtype {series.dtype}") from None
    # missing days from R arrive as NaNs with a payload (NA) that some operations flag as invalid:
    # replaced by the plain NaN
    with np.errstate(invalid="ignore"):
        x = np.where(np.isnan(x), np.nan, x)
        bad = ~np.isfinite(x) if not allow_missing else np.isinf(x)
        bad |= np.isfinite(x) & (x != np.round(np.where(np.isfinite(x), x, 0.0)))
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"cases[{name!r}] must be whole days{' or missing' if allow_missing else ''}: "
                         f"{int(bad.sum())} bad value(s), first at row {i} ({x[i]!r})")
    return x


def _names(value, what):
    if isinstance(value, str):
        return [value]
    try:
        out = list(value)
    except TypeError:
        raise TypeError(f"{what} must be a column name or a list of them, got {value!r}") from None
    if not out or not all(isinstance(v, str) for v in out):
        raise TypeError(f"{what} must be a non-empty list of column names, got {value!r}")
    return out


def _risk_starts(risk_starts):
    if isinstance(risk_starts, numbers.Integral) and not isinstance(risk_starts, bool):
        risk_starts = [risk_starts]
    try:
        r = [int(v) if isinstance(v, numbers.Integral) and not isinstance(v, bool) else None for v in risk_starts]
    except TypeError:
        raise TypeError(f"risk_starts must be an integer or a list of integers, got {risk_starts!r}") from None
    if not r or None in r:
        raise TypeError(f"risk_starts must be a non-empty list of integers (days after the dose), got {risk_starts!r}")
    if r[0] < 0:
        raise ValueError(f"risk_starts must be >= 0 (pre-exposure periods are not allowed in this model), got {r}")
    if any(b <= a for a, b in zip(r[:-1], r[1:])):
        raise ValueError(f"risk_starts must be strictly increasing, got {r}")
    return r


# ----------------------------------------------------------------------------- intervals
def _intervals(astart, aend, aevent, adrug, aedrug, expogrp, agegrp):
    """The SCCS package's ``formatdata`` (dose-specific levels): one row per interval between
    cut points, per person in order. Returns ``(person, level, age, length, event)``; ``level``
    is ``(dose - 1) * len(expogrp) + k`` in risk period ``k`` of a dose, 0 outside."""
    n, n_doses = adrug.shape
    numrisk = len(expogrp)
    low = astart - 1
    cols, levels = [], []
    for d in range(n_doses):
        for k, r in enumerate(expogrp):
            cols.append(np.where(np.isnan(adrug[:, d]), aend, adrug[:, d] - 1 + r))
            levels.append(d * numrisk + k + 1)
        cols.append(np.where(np.isnan(aedrug[:, d]), aend, aedrug[:, d]))
        levels.append(0)
    cuts = np.column_stack(cols)
    # a risk period ends where the next one (of this or the next dose) begins
    for k in range(1, cuts.shape[1]):
        cuts[:, k - 1] = np.minimum(cuts[:, k], cuts[:, k - 1])
    cuts = np.minimum(cuts, aend[:, None])
    age_cuts = np.asarray(agegrp, dtype=np.float64) - 1
    allcuts = np.column_stack([low, aend, cuts, np.broadcast_to(age_cuts, (n, age_cuts.size))])
    allcuts.sort(axis=1)
    length = np.diff(allcuts, axis=1)
    upper = allcuts[:, 1:]
    keep = (upper > low[:, None]) & (upper <= aend[:, None]) & (length > 0)
    person = np.broadcast_to(np.arange(n)[:, None], upper.shape)[keep]
    upper, length = upper[keep], length[keep]
    # the level of an interval is that of the last cut (in column order) below its end
    level = np.zeros(upper.shape[0], dtype=np.int64)
    for k in range(cuts.shape[1]):
        level = np.where(upper > cuts[person, k], levels[k], level)
    breaks = np.concatenate([[low.min()], age_cuts, [aend.max()]])
    age = np.searchsorted(breaks, upper, side="left")
    event = ((aevent[person] > upper - length) & (aevent[person] <= upper)).astype(np.float64)
    return person, level, age, length, event


def _first_of_runs(person, n):
    """Index of every person's first row (rows grouped by person, in order)."""
    start = np.searchsorted(person, np.arange(n), side="left")
    return start


# ----------------------------------------------------------------------------- fit
def _conditional_poisson(X, y, offset, stratum, n_strata, beta0, tol=1e-12, max_iter=200):
    """Newton's method for the conditional (stratum-eliminated) Poisson model with real
    responses ``y``; returns ``(beta, fitted, hessian, loglik)``."""
    beta = beta0.copy()
    n_s = np.bincount(stratum, weights=y, minlength=n_strata)

    def parts(b):
        eta = X @ b + offset
        eta_max = np.full(n_strata, -np.inf)
        np.maximum.at(eta_max, stratum, eta)
        e = np.exp(eta - eta_max[stratum])
        tot = np.bincount(stratum, weights=e, minlength=n_strata)
        p = e / tot[stratum]
        mu = n_s[stratum] * p
        ll = float(np.sum(y[y > 0] * np.log(p[y > 0])))
        return p, mu, ll

    for _ in range(max_iter):
        p, mu, ll = parts(beta)
        grad = X.T @ (y - mu)
        # -Hessian = sum_s n_s (X' diag(p) X - (X'p)(X'p)') over strata
        Xp = np.zeros((n_strata, X.shape[1]))
        np.add.at(Xp, stratum, X * p[:, None])
        info = X.T @ (X * mu[:, None]) - Xp.T @ (Xp * n_s[:, None])
        step = np.linalg.solve(info, grad)
        # the log-likelihood is concave: a full Newton step is taken unless it lowers it (far from
        # the optimum), then halved until it does not
        for _ in range(40):
            if parts(beta + step)[2] >= ll - 1e-12 * abs(ll):
                break
            step = step / 2
        beta = beta + step
        if np.max(np.abs(step)) < tol:
            break
    p, mu, ll = parts(beta)
    Xp = np.zeros((n_strata, X.shape[1]))
    np.add.at(Xp, stratum, X * p[:, None])
    info = X.T @ (X * mu[:, None]) - Xp.T @ (Xp * n_s[:, None])
    return beta, mu, -info, ll


def event_dependent_exposure(cases: pd.DataFrame, *, person: str = "case", start: str = "start", end: str = "end",
                             event: str = "event", doses=("dose",), dose_ends=None, risk_starts=0, age_groups=None,
                             same_dose_parameters: bool = True, tolerance: float = 1e-8,
                             max_iterations: int = 100) -> EventDependentExposureFit:
    """Fit the SCCS model for exposures that the event delays or stops (Farrington, Whitaker &
    Hocine 2009; the SCCS package's ``eventdepenexp``).

    Parameters
    ----------
    cases : DataFrame
        One row per case (its first event): the columns named below. Days are integers on
        one scale (typically age in days).
    person, start, end, event : str
        Columns: case id, first and last day of observation, day of the event
        (``start <= event <= end``).
    doses : list of str
        Columns with the day of each dose (first dose, second dose, ...; missing where not
        given). Doses after the event are treated as missing (counted in the result).
    dose_ends : list of str or int
        Last day of each dose's risk: columns (one per dose) or a number of days after the
        dose day (the package's ``aedrug = adrug + 21`` is ``dose_ends=21``).
    risk_starts : int or list of int
        Days after the dose day at which the risk periods begin (the package's ``expogrp``;
        ``[1, 8]`` gives days 1-7 and 8 to the dose end). ``>= 0`` and increasing; a first
        start above 0 leaves the days before it unexposed.
    age_groups : list of int, optional
        Days on which a new age group begins (the package's ``agegrp``); the first group is
        the reference.
    same_dose_parameters : bool
        One set of risk-period parameters for all doses (the package's ``sameexpopar=TRUE``)
        or one per dose.
    tolerance : float
        Reweighting stops when the Euclidean change of the exposure parameters is below
        ``tolerance`` times their number.
    max_iterations : int
        Most reweighting rounds.

    Returns
    -------
    EventDependentExposureFit

    Raises
    ------
    ValueError
        Missing columns, days that are not whole numbers, ``end < start``, an event outside
        observation, a case id twice, a negative or unordered ``risk_starts``, a dose end
        before its dose, non-increasing ``age_groups``, a parameter without any person-time.
    TypeError
        Non-numeric columns, arguments of the wrong kind.

    Examples
    --------
    Rotavirus vaccine and intussusception (the SCCS package's ``rotdat``, simulated here):
    two doses, risk days 1-21, age groups of 14 days.

    >>> import pandas as pd
    >>> rng = np.random.default_rng(1)
    >>> n = 300
    >>> rv = rng.integers(60, 100, n).astype(float)
    >>> rvd2 = rv + rng.integers(30, 60, n)
    >>> intus = rng.integers(42, 184, n)
    >>> rv[intus < rv] = np.nan
    >>> cases = pd.DataFrame({"case": np.arange(1, n + 1), "sta": 42, "end": 183, "intus": intus,
    ...                       "rv": rv, "rvd2": rvd2})
    >>> fit = hp.sccs.event_dependent_exposure(cases, start="sta", event="intus", doses=["rv", "rvd2"],
    ...                                        dose_ends=21, risk_starts=1, age_groups=[100, 140])
    >>> fit.coefficients.index.tolist(), fit.converged
    (['rv1', 'age2', 'age3'], True)
    """
    if not isinstance(cases, pd.DataFrame):
        raise TypeError(f"cases must be a pandas DataFrame (one row per case), got {type(cases).__name__}")
    if len(cases) == 0:
        raise ValueError("cases has no rows")
    doses = _names(doses, "doses")
    ids = _column(cases, person, "person")
    if ids.isna().any() or ids.duplicated().any():
        bad = ids[ids.isna() | ids.duplicated()].iloc[0]
        raise ValueError(f"cases[{person!r}] must identify each case once (one row per case, its first event); "
                         f"{bad!r} is missing or repeated")
    astart = _days(_column(cases, start, "start"), start)
    aend = _days(_column(cases, end, "end"), end)
    aevent = _days(_column(cases, event, "event"), event)
    adrug = np.column_stack([_days(_column(cases, d, "doses"), d, allow_missing=True) for d in doses])
    if dose_ends is None:
        raise ValueError("dose_ends must be given: a number of days after the dose or one column per dose")
    if isinstance(dose_ends, numbers.Integral) and not isinstance(dose_ends, bool):
        check_int(dose_ends, "dose_ends", minimum=0)
        aedrug = adrug + dose_ends
    else:
        end_cols = _names(dose_ends, "dose_ends")
        if len(end_cols) != len(doses):
            raise ValueError(f"dose_ends must name one column per dose ({len(doses)}), got {end_cols}")
        aedrug = np.column_stack([_days(_column(cases, d, "dose_ends"), d, allow_missing=True) for d in end_cols])
    expogrp = _risk_starts(risk_starts)
    if age_groups is None:
        agegrp = np.zeros(0)
    else:
        agegrp = np.atleast_1d(np.asarray(age_groups))
        if agegrp.dtype.kind not in "iu" and not (agegrp.dtype.kind == "f" and np.all(agegrp == np.round(agegrp))):
            raise TypeError(f"age_groups must be whole days, got {age_groups!r}")
        agegrp = agegrp.astype(np.float64)
        if agegrp.ndim != 1 or np.any(np.diff(agegrp) <= 0):
            raise ValueError(f"age_groups must be strictly increasing days, got {age_groups!r}")
    same = check_bool(same_dose_parameters, "same_dose_parameters")
    tolerance = check_positive(tolerance, "tolerance")
    max_iterations = check_int(max_iterations, "max_iterations", minimum=1)
    bad = astart > aend
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"observation must have start <= end: {int(bad.sum())} bad case(s), first "
                         f"{person}={ids.iloc[i]!r} ({start}={astart[i]:g}, {end}={aend[i]:g})")
    bad = (aevent < astart) | (aevent > aend)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"the event must be inside observation: {int(bad.sum())} bad case(s), first "
                         f"{person}={ids.iloc[i]!r} ({event}={aevent[i]:g}, observed {astart[i]:g}..{aend[i]:g})")
    bad = np.isfinite(adrug) & ~(aedrug >= adrug)
    if bad.any():
        i, d = np.argwhere(bad)[0]
        raise ValueError(f"each dose's risk end must be on or after its dose day: first at {person}={ids.iloc[i]!r}, "
                         f"dose {doses[d]!r} on day {adrug[i, d]:g}, risk end {aedrug[i, d]}")

    order = np.argsort(ids.to_numpy(), kind="stable")
    astart, aend, aevent, adrug, aedrug = astart[order], aend[order], aevent[order], adrug[order], aedrug[order]
    after = np.isfinite(adrug) & (aevent[:, None] < adrug)
    adrug = np.where(after, np.nan, adrug)
    aedrug = np.where(after, np.nan, aedrug)
    n = astart.shape[0]

    # -- the stacked data (the package's base.dat and stack.dat)
    riskstart = expogrp[0]
    expo_starts = [0] + expogrp if riskstart > 0 else expogrp
    numrisk = len(expo_starts)
    fitrisk = numrisk - 1 if riskstart > 0 else numrisk
    pers, lev, age, length, ev = _intervals(astart, aend, aevent, adrug, aedrug, expo_starts, agegrp)
    dose = -(-lev // numrisk)
    risk = lev.copy()
    if riskstart > 0:  # the days before the first risk start are in the reference
        risk = np.where(lev % numrisk == 1, 0, lev - dose)
    first = _first_of_runs(pers, n)
    weight0 = np.where(ev == 1, risk, 0)
    parts = []  # (row, level, expo, weight)
    unexposed_at_start = lev[first[pers]] == 0
    rows = np.flatnonzero(unexposed_at_start)
    parts.append((rows, 0, np.zeros(rows.size, dtype=np.int64), weight0[rows]))
    max_dose = int(dose.max()) if dose.size else 0
    for i in range(1, max_dose + 1):
        at_i = np.flatnonzero(dose == i)
        started = np.full(n, np.iinfo(np.int64).max)
        np.minimum.at(started, pers[at_i], at_i)
        rows = np.flatnonzero(np.arange(pers.size) >= started[pers])
        expo = np.where(dose[rows] == i, risk[rows], 0)
        weight = np.where((ev[rows] == 1) & (dose[rows] > i), risk[rows], 0)
        parts.append((rows, i, expo, weight))
    row = np.concatenate([p[0] for p in parts])
    level = np.concatenate([np.full(p[0].size, p[1]) for p in parts])
    expo = np.concatenate([p[2] for p in parts])
    weight = np.concatenate([p[3] for p in parts])
    stratum_key = pers[row] * (max_dose + 1) + level
    keys, stratum = np.unique(stratum_key, return_inverse=True)
    maxw = np.zeros(keys.size, dtype=np.int64)
    np.maximum.at(maxw, stratum, weight)
    maxw = maxw[stratum]
    drow = dose[row]
    if same:
        expo = np.where(expo > 0, risk[row] - fitrisk * (drow - 1), 0)
        weight = np.where(weight > 0, weight - fitrisk * (drow - 1), 0)
        maxw = np.where(maxw > 0, maxw - (-(-maxw // fitrisk) - 1) * fitrisk, 0)
    n_beta = fitrisk if same else max_dose * fitrisk
    n_alpha = agegrp.size
    names = [f"{doses[0]}{j}" for j in range(1, n_beta + 1)] + [f"age{a}" for a in range(2, n_alpha + 2)]
    X = np.zeros((row.size, n_beta + n_alpha))
    for j in range(n_beta):
        X[:, j] = expo == j + 1
    for a in range(n_alpha):
        X[:, n_beta + a] = age[row] == a + 2
    empty = ~X.any(axis=0)
    if empty.any():
        raise ValueError(f"no person-time in {[names[j] for j in np.flatnonzero(empty)]}: the model cannot be fitted "
                         f"(check risk_starts, dose_ends and age_groups against the data)")
    offset = np.log(length[row])
    y0 = ev[row]

    # -- reweighting: events in later doses' risk periods count exp(-beta)
    beta_all = np.zeros(n_beta + n_alpha)
    iterations, diff = 0, np.inf
    while diff > tolerance * n_beta and iterations < max_iterations:
        wevent = y0.copy()
        for j in range(n_beta):
            wevent = np.where(weight == j + 1, np.exp(-beta_all[j]), wevent)
        old = beta_all[:n_beta].copy()
        beta_all, fitted, hessian, loglik = _conditional_poisson(X, wevent, offset, stratum, keys.size, beta_all)
        diff = float(np.sqrt(np.sum((beta_all[:n_beta] - old) ** 2)))
        iterations += 1
    converged = bool(diff <= tolerance * n_beta)

    # -- sandwich: estimating equations summed per case over its levels, and their derivative
    # in the weights (an event weighted exp(-beta_k) moves the scores of its stratum)
    residual = wevent - fitted
    case_of_row = pers[row]
    M = np.zeros((n, X.shape[1]))
    np.add.at(M, case_of_row, X * residual[:, None])
    meat = M.T @ M
    A = np.zeros((X.shape[1], X.shape[1]))
    for k in range(n_beta):
        at = maxw == k + 1
        A[:, k] = -(X[at] * residual[at, None]).sum(axis=0)
    bread = A + hessian
    inv = np.linalg.inv(bread)
    sandwich = inv @ meat @ inv.T
    coef = pd.Series(beta_all, index=names, name="coef")
    return EventDependentExposureFit(coefficients=coef, covariance=pd.DataFrame(sandwich, index=names, columns=names),
                                     iterations=iterations, converged=converged, n_cases=n, n_strata=int(keys.size),
                                     doses_after_event=int(after.sum()), log_likelihood=loglik)
