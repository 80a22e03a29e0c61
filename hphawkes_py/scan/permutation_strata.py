"""Strata of the space-time permutation scan: covariates and the day of the week.

Kulldorff et al. (2005) condition on the cases per location and per day. With strata (covariate
categories of the cases, and, adjusting for the day of the week, the weekday of every case; SaTScan's
case-file covariates and ``AdjustForWeeklyTrends``, which adds the weekday as one more covariate), the
expectation conditions on them within every stratum s: location z on day t expects
``mu_zt = sum_s C_zs C_ts / C_s`` cases (``C_zs`` the stratum's cases at z, ``C_ts`` on day t, ``C_s`` in
all), as SaTScan's ``CSpaceTimePermutationModel::CalculateMeasure`` sums over categories. Adjusted for
the weekday alone, ``mu_zt = C_{z,w(t)} C_t / C_{w(t)}``: a place whose cases come on Mondays is not a
cluster on Mondays. The Monte Carlo permutes the days among the cases of each stratum only.
"""
from __future__ import annotations

import numpy as np

from .model import _category_codes

__all__ = ["permutation_strata"]


def permutation_strata(c_rows, gid, day, abs_day, L: int, T: int, covariates=None, day_of_week: bool = False):
    """``(mu, loc_of_case, day_of_case, bounds)`` of a stratified space-time permutation analysis.

    ``c_rows`` (n,) cases per row, at location ``gid`` and day ``day`` (0 .. T - 1; ``abs_day`` the same
    as whole days since 1970-01-01, or since any day, for the weekday); ``covariates`` (n,) labels or
    (n, k) columns, or None. Returns the (L, T) expectations and the cases one by one, sorted by stratum
    (the stratum of case q is the block of ``bounds`` holding q: cases ``bounds[s] .. bounds[s + 1] - 1``),
    whose days the null permutes within each block.

    Examples
    --------
    Three rows (3 cases at location 0 on day 0, 1 there on day 7, 2 at location 1 on day 1) by weekday:
    days 0 and 7 share one, so location 0 expects its 4 cases there, 3 on day 0 and 1 on day 7:

    >>> from hphawkes_py.scan.permutation_strata import permutation_strata
    >>> day = np.array([0, 7, 1])
    >>> mu, loc, d, bounds = permutation_strata(np.array([3, 1, 2]), np.array([0, 0, 1]), day, day, 2, 8,
    ...                                         day_of_week=True)
    >>> print(mu[:, [0, 1, 7]].tolist(), bounds.tolist())
    [[3.0, 0.0, 1.0], [0.0, 2.0, 0.0]] [0, 4, 6]
    """
    n = len(c_rows)
    codes = np.zeros(n, dtype=np.int64) if covariates is None else _category_codes(covariates, n)[0]
    if day_of_week:
        codes = codes * 7 + np.mod(abs_day, 7)
    strata, stratum = np.unique(codes, return_inverse=True)
    S = len(strata)
    c_slt = np.zeros((S, L, T), dtype=np.int64)
    np.add.at(c_slt, (stratum, gid, day), c_rows)
    Cs = c_slt.sum(axis=(1, 2)).astype(np.float64)
    mu = np.zeros((L, T))
    for s in range(S):
        if Cs[s] > 0:
            mu += np.outer(c_slt[s].sum(axis=1), c_slt[s].sum(axis=0)) / Cs[s]
    counts = c_slt.reshape(S, L * T)
    cell = np.arange(L * T)
    loc_of_case = np.concatenate([np.repeat(cell // T, counts[s]) for s in range(S)])
    day_of_case = np.concatenate([np.repeat(cell % T, counts[s]) for s in range(S)])
    bounds = np.concatenate([[0], np.cumsum(counts.sum(axis=1))]).astype(np.int64)
    return mu, loc_of_case, day_of_case, bounds
