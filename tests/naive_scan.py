"""Slow, obvious NumPy reference of the Bernoulli spatial scan statistic (test oracle).

Explicit distance matrix, explicit window membership sets, log likelihoods with np.log.
"""
from __future__ import annotations

import numpy as np


def xlogy_ratio(a, b):
    """a * log(a / b) with 0 log 0 = 0."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(a > 0, a * np.log(np.where(a > 0, a, 1.0) / np.where(b > 0, b, 1.0)), 0.0)


def bernoulli_llr(c, n, C, N, direction="high"):
    """Kulldorff's Bernoulli LLR of a window with c cases among n persons (C of N in total)."""
    c = np.asarray(c, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    full = (xlogy_ratio(c, n) + xlogy_ratio(n - c, n) + xlogy_ratio(C - c, N - n)
            + xlogy_ratio(N - n - (C - c), N - n) - (xlogy_ratio(C, N) + xlogy_ratio(N - C, N)))
    inside_high = c * (N - n) > (C - c) * n
    inside_low = c * (N - n) < (C - c) * n
    ok = {"high": inside_high, "low": inside_low, "both": inside_high | inside_low}[direction]
    return np.where(ok, full, 0.0)


def all_windows(centres, coords, pop, max_population):
    """Every circular window: list of (centre index, frozenset of member locations).

    For each centre and each distinct distance r to a location, the window is
    {j : d(centre, j) <= r}; kept while its population <= max_population * total.
    """
    centres = np.asarray(centres, dtype=np.float64)
    coords = np.asarray(coords, dtype=np.float64)
    pop = np.asarray(pop)
    limit = max_population * pop.sum()
    D = ((centres[:, None, :] - coords[None, :, :]) ** 2).sum(axis=2)
    out = []
    for i in range(len(centres)):
        for r in np.unique(D[i]):
            members = np.flatnonzero(D[i] <= r)
            if pop[members].sum() > limit:
                break
            out.append((i, frozenset(members.tolist())))
    return out


def scan(centres, coords, cases, controls, max_population=0.5, direction="high"):
    """Per-centre best LLR and window, and the overall maximum LLR."""
    cases = np.asarray(cases)
    pop = cases + np.asarray(controls)
    C, N = int(cases.sum()), int(pop.sum())
    best = np.zeros(len(centres))
    best_set = [frozenset()] * len(centres)
    for i, members in all_windows(centres, coords, pop, max_population):
        idx = np.fromiter(members, dtype=np.int64)
        llr = float(bernoulli_llr(cases[idx].sum(), pop[idx].sum(), C, N, direction))
        if llr > best[i] + 1e-12 * max(1.0, abs(best[i])):
            best[i] = llr
            best_set[i] = members
    return best, best_set, float(best.max()) if len(best) else 0.0
