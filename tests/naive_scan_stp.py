"""Brute-force NumPy reference of the space-time permutation scan (Kulldorff et al. 2005).

Every circle (centre = a location, radius = the distance to each other location, within the
distance and case limits) times every temporal window; observed and expected counts summed
from the full (location x day) table, not from prefix sums."""
from __future__ import annotations

import math

import numpy as np


def llr(c, mu, C):
    if c <= mu:
        return 0.0
    out = c * math.log(c / mu)
    if C - c > 0:
        out += (C - c) * math.log((C - c) / (C - mu))
    return out


def windows(n_days, min_len, max_len, prospective):
    return [(e - L + 1, e) for e in range(n_days) for L in range(min_len, max_len + 1)
            if e - L + 1 >= 0 and (not prospective or e == n_days - 1)]


def best_per_centre(points, table, max_dist, max_cases, wins, min_cases):
    """table: (L, T) counts. Returns per centre (llr, set of locations, window)."""
    L, T = table.shape
    C = table.sum()
    cz = table.sum(axis=1)
    cd = table.sum(axis=0)
    out = []
    for i in range(L):
        d = np.sqrt(((points - points[i]) ** 2).sum(axis=1))
        best = (0.0, frozenset(), None)
        for r in np.unique(d):
            if r > max_dist * (1 + 1e-12):
                break
            inside = d <= r
            if cz[inside].sum() > max_cases:
                break
            for (s, e) in wins:
                c = table[inside, s:e + 1].sum()
                if c < min_cases:
                    continue
                mu = cz[inside].sum() * cd[s:e + 1].sum() / C
                v = llr(float(c), mu, float(C))
                if v > best[0] * (1 + 1e-13) or (best[2] is None and v > 0):
                    best = (v, frozenset(np.flatnonzero(inside).tolist()), (s, e))
        out.append(best)
    return out


def table_from_cases(loc_of_case, day_of_case, L, T):
    t = np.zeros((L, T), dtype=np.int64)
    np.add.at(t, (loc_of_case, day_of_case), 1)
    return t
