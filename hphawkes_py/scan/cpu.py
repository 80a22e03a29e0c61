"""Numba kernels of the Bernoulli spatial scan statistic (CPU engine).

Two hot steps:

* :func:`build_windows` -- for every centre, the locations sorted by distance and cut
  at the maximum window population (ties in distance enter together). The result is a
  flattened CSR structure (``offsets``, ``neighbors``) plus, per entry, the window
  population after that entry (``npop``) and whether a window ends there
  (``boundary``: the last entry of a tie group). Built once per analysis.
* :func:`scan_batch` -- for a batch of ``R`` case vectors (the observed data or Monte
  Carlo replicates, laid out locations x replicates so the replicate index is the
  contiguous, vectorised one), every centre walks its neighbour list once, accumulating
  the window's cases for all ``R`` replicates at once and evaluating the Bernoulli log
  likelihood ratio at each window end from a table of ``k log k``. Work per replicate
  is O(total number of window entries).
"""
from __future__ import annotations

import math

import numba
import numpy as np
from numba import njit, prange

__all__ = ["klogk_table", "null_loglik", "build_windows", "scan_batch", "CpuEngine"]


def klogk_table(n_total: int) -> np.ndarray:
    """``t[k] = k log k`` for k = 0..n_total (``0 log 0 = 0``), float64."""
    k = np.arange(n_total + 1, dtype=np.float64)
    out = np.zeros(n_total + 1, dtype=np.float64)
    out[1:] = k[1:] * np.log(k[1:])
    return out


def null_loglik(klogk: np.ndarray, n_cases: int, n_total: int) -> float:
    """Log likelihood of the null (one proportion C/N everywhere), from the k log k table.

    ``C log(C/N) + (N-C) log((N-C)/N) = klogk[C] + klogk[N-C] - klogk[N]``.
    """
    return float(klogk[n_cases] + klogk[n_total - n_cases] - klogk[n_total])


@njit(cache=True, parallel=True)
def _count_entries(cx, cy, x, y, pop, limit):
    n_centres = cx.shape[0]
    n_loc = x.shape[0]
    counts = np.zeros(n_centres, dtype=np.int64)
    for i in prange(n_centres):
        d = np.empty(n_loc, dtype=np.float64)
        for j in range(n_loc):
            dx = x[j] - cx[i]
            dy = y[j] - cy[i]
            d[j] = dx * dx + dy * dy
        order = np.argsort(d, kind="mergesort")
        total = 0
        k = 0
        while k < n_loc:
            # the tie group [k, e) of locations at exactly the same distance
            e = k + 1
            group = pop[order[k]]
            while e < n_loc and d[order[e]] == d[order[k]]:
                group += pop[order[e]]
                e += 1
            if total + group > limit:
                break
            total += group
            k = e
        counts[i] = k
    return counts


@njit(cache=True, parallel=True)
def _fill_entries(cx, cy, x, y, pop, offsets, neighbors, npop, boundary):
    n_centres = cx.shape[0]
    n_loc = x.shape[0]
    for i in prange(n_centres):
        start = offsets[i]
        m = offsets[i + 1] - start
        if m == 0:
            continue
        d = np.empty(n_loc, dtype=np.float64)
        for j in range(n_loc):
            dx = x[j] - cx[i]
            dy = y[j] - cy[i]
            d[j] = dx * dx + dy * dy
        order = np.argsort(d, kind="mergesort")
        total = 0
        for k in range(m):
            loc = order[k]
            total += pop[loc]
            neighbors[start + k] = loc
            npop[start + k] = total
            # a window ends after k only when the next location is farther away
            if k == m - 1 or d[order[k + 1]] != d[loc]:
                boundary[start + k] = 1
            else:
                boundary[start + k] = 0


def build_windows(centres: np.ndarray, coords: np.ndarray, pop: np.ndarray, limit: float):
    """Neighbour lists of every centre, cut where the window population would exceed ``limit``.

    Parameters
    ----------
    centres : (m, 2) float64
    coords : (L, 2) float64 location coordinates
    pop : (L,) int64 persons (cases + controls) per location
    limit : float
        Maximum window population (``max_population * N``); a tie group that would
        take the window above it is not entered, and the window stops there.

    Returns
    -------
    offsets : (m + 1,) int64
    neighbors : (E,) int32 location indices, each centre's nearest first
    npop : (E,) int64 window population after the entry
    boundary : (E,) uint8 1 where a window ends (last entry of a tie group)
    """
    cx = np.ascontiguousarray(centres[:, 0], dtype=np.float64)
    cy = np.ascontiguousarray(centres[:, 1], dtype=np.float64)
    x = np.ascontiguousarray(coords[:, 0], dtype=np.float64)
    y = np.ascontiguousarray(coords[:, 1], dtype=np.float64)
    pop = np.ascontiguousarray(pop, dtype=np.int64)
    lim = np.int64(math.floor(limit))  # populations are integers: pop <= limit <=> pop <= floor(limit)
    counts = _count_entries(cx, cy, x, y, pop, lim)
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    e = int(offsets[-1])
    neighbors = np.empty(e, dtype=np.int32)
    npop = np.empty(e, dtype=np.int64)
    boundary = np.empty(e, dtype=np.uint8)
    _fill_entries(cx, cy, x, y, pop, offsets, neighbors, npop, boundary)
    return offsets, neighbors, npop, boundary


@njit(cache=True, parallel=True, error_model="numpy")
def _scan_batch(offsets, neighbors, npop, boundary, cases, klogk, n_cases, n_total, l0,
                want_high, want_low, best, best_entry, want_arg):
    n_centres = offsets.shape[0] - 1
    R = cases.shape[1]
    C = n_cases
    N = n_total
    Nf = np.float64(N)
    for i in prange(n_centres):
        c = np.zeros(R, dtype=np.int32)
        m = np.zeros(R, dtype=np.float64)
        arg = np.full(R, -1, dtype=np.int64)
        for j in range(offsets[i], offsets[i + 1]):
            row = cases[neighbors[j]]
            for r in range(R):
                c[r] += row[r]
            if boundary[j] == 0:
                continue
            n = npop[j]
            # per-entry constants, shared by all replicates of the batch
            q = -(klogk[n] + klogk[N - n]) - l0
            cn = np.float64(C) * np.float64(n)
            nn = np.int32(n)
            cc = np.int32(C)
            rest = np.int32(N - n - C)
            if want_arg:
                for r in range(R):
                    cr = c[r]
                    t = (klogk[cr] + klogk[nn - cr]) + (klogk[cc - cr] + klogk[rest + cr])
                    llr = t + q
                    lhs = np.float64(cr) * Nf
                    ok = (want_high & (lhs > cn)) | (want_low & (lhs < cn))
                    if ok and llr > m[r]:
                        m[r] = llr
                        arg[r] = j
            else:
                for r in range(R):
                    cr = c[r]
                    t = (klogk[cr] + klogk[nn - cr]) + (klogk[cc - cr] + klogk[rest + cr])
                    llr = t + q
                    lhs = np.float64(cr) * Nf
                    ok = (want_high & (lhs > cn)) | (want_low & (lhs < cn))
                    v = llr if ok else 0.0
                    m[r] = max(m[r], v)
        for r in range(R):
            best[i, r] = m[r]
            if want_arg:
                best_entry[i, r] = arg[r]


def scan_batch(windows, cases: np.ndarray, klogk: np.ndarray, n_cases: int, n_total: int,
               direction: str, want_arg: bool = False):
    """Best LLR per centre for each column of ``cases`` (locations x replicates, int32).

    Returns ``best`` (m, R) float64 and, with ``want_arg``, ``best_entry`` (m, R) int64:
    the CSR entry where the best window of each centre ends (-1 when no window has a
    positive LLR).
    """
    offsets, neighbors, npop, boundary = windows
    cases = np.ascontiguousarray(cases, dtype=np.int32)
    m = offsets.shape[0] - 1
    R = cases.shape[1]
    best = np.empty((m, R), dtype=np.float64)
    best_entry = np.empty((m, R) if want_arg else (1, 1), dtype=np.int64)
    l0 = null_loglik(klogk, n_cases, n_total)
    _scan_batch(offsets, neighbors, npop, boundary, cases, klogk, np.int64(n_cases),
                np.int64(n_total), l0, direction in ("high", "both"), direction in ("low", "both"),
                best, best_entry, bool(want_arg))
    return (best, best_entry) if want_arg else (best, None)


class CpuEngine:
    """Windows and the k log k table resident in host memory; Numba kernels.

    Picklable (plain arrays), so Monte Carlo batches can run in process pools.
    """

    backend = "cpu"

    def __init__(self, windows, klogk, n_cases, n_total, direction):
        self.windows = windows
        self.klogk = klogk
        self.n_cases = int(n_cases)
        self.n_total = int(n_total)
        self.direction = direction

    def best_per_centre(self, cases: np.ndarray, want_arg: bool = False):
        """(m, R) best LLR per centre [and best window end entry] for cases (L, R) int32."""
        return scan_batch(self.windows, cases, self.klogk, self.n_cases, self.n_total, self.direction, want_arg)

    def max_llr(self, cases: np.ndarray) -> np.ndarray:
        """(R,) maximum LLR over all windows for each column of ``cases``."""
        best, _ = self.best_per_centre(cases)
        return best.max(axis=0) if best.shape[0] else np.zeros(cases.shape[1])
