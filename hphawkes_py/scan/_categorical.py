"""The scan statistic for cases in categories: the engine the ordinal and multinomial models share.

Jung, Kulldorff & Klassen (2007, "A spatial scan statistic for ordinal data", Stat Med 26:1594) and
Jung, Kulldorff & Richard (2010, "A spatial scan statistic for multinomial data", Stat Med 29:1910),
as SaTScan computes them (``OrdinalLikelihoodCalculator``, which serves both models, and
``OrdinalDenominatorDataRandomizer``):

1. every case has a category 1..K and a location; the totals per category are ``C_k`` and
   ``C = sum_k C_k``; a location's "population" is its number of cases;
2. a window with ``c_k`` cases of category k (``W = sum_k c_k`` inside, ``U = C - W`` outside) has
   the probabilities ``p_k = c_k / W`` inside and ``q_k = (C_k - c_k) / U`` outside, and the log
   likelihood ``LL = sum_k c_k log p_k + (C_k - c_k) log q_k`` (terms with a zero probability left
   out); the null's is ``LL0 = sum_k C_k log(C_k / C)`` and the window's LLR is ``LL - LL0``;
3. the ordinal model restricts the alternative to a monotone likelihood ratio ``p_k / q_k``
   (non-decreasing in k for high clusters -- more cases of the higher categories inside --,
   non-increasing for low ones): walking k = 1..K, a category whose ratio breaks the order is pooled
   with the ones before it, the pooled block's ``p`` and ``q`` shared out in proportion to the
   categories' totals ``C_k``, until the order holds (SaTScan's pooling, kept step for step);
   the multinomial model leaves p and q free;
4. Monte Carlo inference: the categories permuted among the cases, which keep their locations.

Windows are compared by their log likelihood (SaTScan's maximizing value); a window without cases
inside or outside is never a cluster. The engines compute it from whole numbers: the order test
compares ``p_k / q_k = (c_k / W) / (d_k / U)`` as the products ``c_k d_i`` and ``c_i d_k`` (exact),
and every logarithm in the likelihood is that of a whole number (a count, a pooled count, W, U or a
category total), read from one table; the cluster report redoes SaTScan's own arithmetic
(:func:`combined_categories`) to group the categories as SaTScan prints them.
:class:`CategoricalEngine` is the CPU engine and
:class:`GpuCategoricalEngine` its CUDA kernel ``scan_categorical`` (``gpu/kernels/scan_categorical.cu``).
"""
from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np
import pandas as pd
from numba import njit, prange

from .._backend import is_gpu_backend
from .._parallel import run_replicates
from .monte_carlo import batch_children, replicate_batches, replicate_seed_batches
from .null_draws import permute_measurements

__all__ = ["UNRESTRICTED", "CategoryTotals", "CategoricalEngine", "GpuCategoricalEngine", "check_categories",
           "null_loglik", "category_table"]

#: SaTScan's "no maximizing value": minus the largest double
_NONE = -np.finfo(np.float64).max

#: the order restriction of the alternative: none (multinomial), or the ordinal model's high / low
UNRESTRICTED, HIGH, LOW = 0, 1, 2


# ---------------------------------------------------------------------------- the window statistic
@njit(cache=True, inline="always")
def _breaks_order(restrict, pk, qk, pi, qi):
    """Whether category k's ratio p/q fails to exceed (high; low: fall below) that of an earlier
    category i, ratios with q = 0 being infinite (``CompareRatioForHigh/LowScanningArea``)."""
    if restrict == HIGH:
        return (qk == 0.0 and qi == 0.0) or (qk != 0.0 and qi == 0.0) or (
            qk != 0.0 and qi != 0.0 and pk / qk <= pi / qi)
    return (qk == 0.0 and qi == 0.0) or (qk == 0.0 and qi != 0.0) or (qk != 0.0 and qi != 0.0 and pk / qk >= pi / qi)


@njit(cache=True)
def _probabilities(c, r, tot, restrict, P, Q):
    """The probabilities ``P`` inside and ``Q`` outside of the window with counts ``c[:, r]``
    (``CalculateProbabilitiesInsideAndOutsideOfCluster``), pooled under the order restriction;
    False when the window has no case inside or none outside."""
    K = tot.shape[0]
    W = 0.0
    for k in range(K):
        W += c[k, r]
    if W == 0.0:
        return False
    U = 0.0
    for k in range(K):
        U += tot[k] - c[k, r]
    if U == 0.0:
        return False
    for k in range(K):
        P[k] = c[k, r] / W
        Q[k] = (tot[k] - c[k, r]) / U
        if restrict == UNRESTRICTED:
            continue
        i = k - 1
        while i >= 0 and _breaks_order(restrict, P[k], Q[k], P[i], Q[i]):
            span = 0.0
            for j in range(i, k + 1):
                span += tot[j]
            dP = 0.0
            for j in range(i, k + 1):
                dP += c[j, r]
            dP /= W
            dQ = 0.0
            for j in range(i, k + 1):
                dQ += tot[j] - c[j, r]
            dQ /= U
            if span != 0.0:
                for j in range(i, k + 1):
                    P[j] = dP * (tot[j] / span)
                    Q[j] = dQ * (tot[j] / span)
            else:
                for j in range(i, k + 1):
                    P[j] = 0.0
                    Q[j] = 0.0
            i -= 1
    return True


@njit(cache=True)
def _log_likelihood(c, r, tot, P, Q):
    """``sum_k c_k log p_k + (C_k - c_k) log q_k``, the terms of zero probabilities left out."""
    ll = 0.0
    for k in range(tot.shape[0]):
        if P[k] != 0.0:
            ll += c[k, r] * math.log(P[k])
        if Q[k] != 0.0:
            ll += (tot[k] - c[k, r]) * math.log(Q[k])
    return ll


@njit(cache=True, inline="always")
def _infinite(dR, tot):
    """Whether a category's ratio p/q is infinite in SaTScan's comparison: its q is 0 (no case of its
    pooled range outside, or no case of the category at all)."""
    return dR == 0 or tot == 0


@njit(cache=True, inline="always")
def _pooled_breaks(restrict, ck, dk, zk, ci, di, zi):
    """:func:`_breaks_order` on the pooled ranges of categories k and i (cases ``c`` inside, ``d``
    outside, ``z`` infinite ratio): ``p/q = (c/W)/(d/U)``, so the ratios compare as ``c_k d_i`` against
    ``c_i d_k`` in whole numbers, exactly."""
    if restrict == HIGH:
        return (zk and zi) or (not zk and zi) or (not zk and not zi and ck * di <= ci * dk)
    return (zk and zi) or (zk and not zi) or (not zk and not zi and ck * di >= ci * dk)


@njit(cache=True, inline="always")
def _table_log_likelihood(c, tot, K, W, U, restrict, logs, cR, dR):
    """The window's log likelihood with cases ``c`` (K,) inside (``W`` in all, ``U`` outside), its
    categories pooled as SaTScan pools them under ``restrict``; ``logs[x] = log x`` for the whole
    numbers up to the total. Category j of pooled range R has ``p_j = (c_R / W)(C_j / C_R)`` and
    ``q_j = (d_R / U)(C_j / C_R)``, so every logarithm is one of a whole number."""
    for k in range(K):
        cs = c[k]
        ds = tot[k] - c[k]
        cR[k] = cs
        dR[k] = ds
        if restrict == UNRESTRICTED:
            continue
        # pooling categories i..k one at a time from the right, as SaTScan does; the pooled sums are running
        # sums, written to the pooled categories once the pooling stops (the test reads only k's and i's)
        i = k - 1
        while i >= 0 and _pooled_breaks(restrict, cs, ds, _infinite(ds, tot[k]), cR[i], dR[i],
                                        _infinite(dR[i], tot[i])):
            cs += c[i]
            ds += tot[i] - c[i]
            i -= 1
        for j in range(i + 1, k + 1):
            cR[j] = cs
            dR[j] = ds
    lw = logs[W]
    lu = logs[U]
    ll = 0.0
    for j in range(K):
        d = tot[j] - c[j]
        share = logs[tot[j]] - logs[cR[j] + dR[j]]
        if c[j] > 0:
            ll += c[j] * ((logs[cR[j]] - lw) + share)
        if d > 0:
            ll += d * ((logs[dR[j]] - lu) + share)
    return ll


@njit(cache=True, inline="always")
def _window_value(c, tot, K, C, ordinal, want_high, want_low, logs, cR, dR):
    """SaTScan's maximizing value of the window with cases ``c`` (K,): its log likelihood (ordinal:
    the larger of the high and low restrictions asked for), :data:`_NONE` without a case inside or
    outside."""
    W = np.int64(0)
    for k in range(K):
        W += c[k]
    U = C - W
    if W == 0 or U == 0:
        return _NONE
    if not ordinal:
        return _table_log_likelihood(c, tot, K, W, U, UNRESTRICTED, logs, cR, dR)
    v = _NONE
    if want_high:
        v = _table_log_likelihood(c, tot, K, W, U, HIGH, logs, cR, dR)
    if want_low:
        lo = _table_log_likelihood(c, tot, K, W, U, LOW, logs, cR, dR)
        v = lo if lo > v else v
    return v


@njit(cache=True, parallel=True)
def _best_windows(offsets, neighbors, boundary, counts, tot, logs, ordinal, want_high, want_low, best_mv, arg):
    """For every centre and replicate (``counts``: (L, K, R) cases per location, category and
    replicate): the maximizing value of the centre's best window (``best_mv`` (m, R)) and the
    neighbour-list entry where it ends (``arg``, -1 when none). The first (smallest) of equal windows
    is kept, as SaTScan does. The CUDA kernel ``scan_categorical`` is this loop."""
    m = offsets.shape[0] - 1
    K = counts.shape[1]
    R = counts.shape[2]
    C = np.int64(0)
    for k in range(K):
        C += tot[k]
    for i in prange(m):
        c = np.zeros((K, R), dtype=np.int64)  # replicates innermost, as the counts are laid out
        w = np.empty(K, dtype=np.int64)
        cR = np.empty(K, dtype=np.int64)
        dR = np.empty(K, dtype=np.int64)
        mv = np.full(R, _NONE)
        at = np.full(R, -1, dtype=np.int64)
        for e in range(offsets[i], offsets[i + 1]):
            loc = neighbors[e]
            for k in range(K):
                for r in range(R):
                    c[k, r] += counts[loc, k, r]
            if boundary[e]:
                for r in range(R):
                    for k in range(K):
                        w[k] = c[k, r]
                    v = _window_value(w, tot, K, C, ordinal, want_high, want_low, logs, cR, dR)
                    if v > mv[r]:
                        mv[r] = v
                        at[r] = e
        for r in range(R):
            best_mv[i, r] = mv[r]
            arg[i, r] = at[r]


@njit(cache=True, parallel=True)
def _statistics(mv, ll0):
    """The LLRs (m, R) of maximizing values (``CalculateFullStatistic``: 0 for :data:`_NONE`)."""
    out = np.empty_like(mv)
    for i in prange(mv.shape[0]):
        for r in range(mv.shape[1]):
            out[i, r] = 0.0 if mv[i, r] == _NONE else mv[i, r] - ll0
    return out


def log_table(C: int) -> np.ndarray:
    """``log x`` for the whole numbers x = 0..C (0 at x = 0, never used as a logarithm)."""
    out = np.zeros(C + 1)
    out[1:] = np.log(np.arange(1, C + 1, dtype=np.float64))
    return out


def null_loglik(tot) -> float:
    """``LL0 = sum_k C_k log(C_k / C)`` over the categories with cases, in category order, from the
    same table of logarithms as the windows' log likelihoods."""
    tot = np.asarray(tot, dtype=np.int64)
    logs = log_table(int(tot.sum()))
    C = int(tot.sum())
    ll0 = 0.0
    for t in tot.tolist():
        if t:
            ll0 += t * (logs[t] - logs[C])
    return ll0


class CategoryTotals:
    """What an engine of the ordinal and multinomial models derives from its windows (``offsets``) and its cases
    per category ``tot``: the number of centres, the null log likelihood ``ll0`` and the table of logarithms
    ``logs`` its statistic reads (the base of :class:`CategoricalEngine` and of the space-time engine)."""

    backend = "cpu"

    @property
    def n_centres(self) -> int:
        return len(self.offsets) - 1

    @functools.cached_property
    def ll0(self) -> float:
        return null_loglik(self.tot)

    @functools.cached_property
    def logs(self) -> np.ndarray:
        return log_table(int(np.asarray(self.tot).sum()))


@dataclasses.dataclass(frozen=True)
class CategoricalEngine(CategoryTotals):
    """One analysis of the ordinal or multinomial model on the CPU: its windows, the totals per
    category ``tot`` (K,) and the order restriction (``ordinal``, ``want_high``, ``want_low``)."""

    offsets: np.ndarray
    neighbors: np.ndarray
    boundary: np.ndarray
    tot: np.ndarray
    ordinal: bool
    want_high: bool
    want_low: bool

    def best_mv(self, counts: np.ndarray):
        """(m, R) maximizing value of each centre's best window and (m, R) int64 entry where it ends,
        for ``counts`` (L, K, R) cases per location and category."""
        counts = np.ascontiguousarray(counts, dtype=np.int32)
        R = counts.shape[2]
        mv = np.empty((self.n_centres, R))
        arg = np.empty((self.n_centres, R), dtype=np.int64)
        _best_windows(self.offsets, self.neighbors, self.boundary, counts, np.asarray(self.tot, dtype=np.int64),
                      self.logs, self.ordinal, self.want_high, self.want_low, mv, arg)
        return mv, arg

    def llr(self, mv: np.ndarray) -> np.ndarray:
        """The LLRs of maximizing values (0 where there is none)."""
        return _statistics(np.ascontiguousarray(mv, dtype=np.float64), self.ll0)

    def best_per_centre(self, counts: np.ndarray):
        """(m, R) best LLR per centre (0: no window) and (m, R) entry where that window ends."""
        mv, arg = self.best_mv(counts)
        return self.llr(mv), arg

    def max_llr(self, counts: np.ndarray) -> np.ndarray:
        """(R,) maximum LLR over all windows of each replicate."""
        best, _ = self.best_per_centre(counts)
        return best.max(axis=0) if best.shape[0] else np.zeros(np.shape(counts)[2])


class GpuCategoricalEngine:
    """The windows of :class:`CategoricalEngine` (``cpu``) on a device: the kernel ``scan_categorical``
    gives the maximizing values, the host function of the CPU engine turns them into LLRs."""

    def __init__(self, cpu: CategoricalEngine, *, device, backend="gpu"):
        from ..gpu.device import KERNELS_DIR
        from .gpu import BLOCK

        self.cpu = cpu
        self.backend = backend
        self.dev = dev = device
        K = len(cpu.tot)
        self._fn = dev.module(KERNELS_DIR / "scan_categorical.cu", defines={"KMAX": K}).function("scan_categorical")
        self._block = dev.block_size(self._fn, BLOCK)
        pad = (lambda a, dt: dev.to_device(np.ascontiguousarray(a if len(a) else np.zeros(1), dtype=dt)))
        self.d_offsets = pad(cpu.offsets, np.int64)
        self.d_neighbors = pad(cpu.neighbors, np.int32)
        self.d_boundary = pad(cpu.boundary, np.uint8)
        self.d_tot = pad(cpu.tot, np.int64)
        self.d_logs = pad(cpu.logs, np.float64)

    def __getstate__(self):
        raise TypeError("the GPU scan engine holds device buffers and cannot be pickled: "
                        "use executor=None or a thread pool with backend='gpu'/'emulator'")

    @property
    def n_centres(self) -> int:
        return self.cpu.n_centres

    def best_mv(self, counts: np.ndarray):
        """(m, R) maximizing value of each centre's best window and (m, R) entry where it ends."""
        dev = self.dev
        c = self.cpu
        counts = np.ascontiguousarray(counts, dtype=np.int32)
        R = counts.shape[2]
        m = self.n_centres
        if m == 0:
            return np.empty((0, R)), np.empty((0, R), np.int64)
        d_mv = dev.empty((m, R), np.float64)
        d_arg = dev.empty((m, R), np.int64)
        block = min(self._block, 32 * ((R + 31) // 32))
        dev.launch(self._fn, (m, (R + block - 1) // block), (block, 1, 1), [
            self.d_offsets, self.d_neighbors, self.d_boundary, dev.to_device(counts), self.d_tot, self.d_logs,
            np.int32(len(c.tot)), np.int32(c.ordinal), np.int32(c.want_high), np.int32(c.want_low), np.int32(R),
            d_mv, d_arg])
        return dev.to_host(d_mv), dev.to_host(d_arg)

    def best_per_centre(self, counts: np.ndarray):
        mv, arg = self.best_mv(counts)
        return self.cpu.llr(mv), arg

    def max_llr(self, counts: np.ndarray) -> np.ndarray:
        best, _ = self.best_per_centre(counts)
        return best.max(axis=0) if best.shape[0] else np.zeros(np.shape(counts)[2])


# ---------------------------------------------------------------------------- the null
def permute_categories(loc_of_case, cat, K: int, L: int, seeds, strata=None) -> np.ndarray:
    """(L, K, R) int32 cases per location and category of the replicates whose seeds are ``seeds``:
    the categories ``cat`` (n,) permuted among the cases, which keep their locations ``loc_of_case``
    (``strata``: None, or ``(members, bounds)`` of :func:`~.null_draws.strata_members`, to permute
    within them). The permutation of a replicate depends on its seed only (the normal model's
    permutation, applied to the indicators of two categories at a time)."""
    n_loc = np.bincount(loc_of_case, minlength=L)
    out = None
    for k in range(0, K - 1, 2):
        a = (cat == k).astype(np.float64)
        b = (cat == k + 1).astype(np.float64) if k + 1 < K - 1 else np.zeros(len(cat))
        s1, s2 = permute_measurements(loc_of_case, a, b, L, seeds, strata)
        if out is None:
            out = np.empty((L, K, s1.shape[1]), dtype=np.int32)
        out[:, k, :] = s1
        if k + 1 < K - 1:
            out[:, k + 1, :] = s2
    out[:, K - 1, :] = n_loc[:, None] - out[:, :K - 1, :].sum(axis=1)
    return out


def _null_batch(size, batch_seed, engine, loc_of_case, cat, K, L):
    """One Monte Carlo batch: ``size`` permutations of the categories and their maxima (an engine with
    ``max_llr_permuted`` draws the same permutations itself, into the layout it reads)."""
    seeds = batch_children(batch_seed, size)
    if hasattr(engine, "max_llr_permuted"):
        return engine.max_llr_permuted(loc_of_case, cat, K, L, seeds)
    return engine.max_llr(permute_categories(loc_of_case, cat, K, L, seeds))


def categorical_monte_carlo(engine, gid, cat, K: int, L: int, run) -> np.ndarray:
    """(n_replicates,) maxima of the permutation replicates, in replicate order."""
    R = run.n_replicates
    per = 4 * L * K + 24 * engine.n_centres  # bytes a replicate holds: its counts and per-centre maxima
    batch, sizes = replicate_batches(R, per, is_gpu_backend(engine.backend), run.executor)
    parts = run_replicates(_null_batch, sizes, seeds=replicate_seed_batches(run.seed, R, batch),
                           executor=run.executor, progress=run.progress, desc="scan Monte Carlo",
                           args=(engine, gid, cat, K, L))
    return np.concatenate(parts).astype(np.float64)


# ---------------------------------------------------------------------------- checks
def check_categories(categories, n: int, ordinal: bool):
    """The category of every case, checked: ``(codes (n,) int64 in 0..K-1, labels (K,))``. Ordinal
    categories are numbers, ordered by value; multinomial ones any labels, ordered as sorted text
    (SaTScan's order of categories)."""
    arr = np.asarray(categories)
    if arr.ndim != 1 or len(arr) != n:
        raise ValueError(f"categories must have one entry per case ({n}), got shape {arr.shape}")
    if ordinal:
        if arr.dtype.kind not in "iuf":
            raise TypeError(f"categories of the ordinal model must be numbers (their order is the order of the "
                            f"categories), got dtype {arr.dtype}")
        x = arr.astype(np.float64)
        if not np.isfinite(x).all():
            i = int(np.argmax(~np.isfinite(x)))
            raise ValueError(f"categories must be finite numbers; categories[{i}] = {float(x[i])!r}")
        labels, codes = np.unique(arr, return_inverse=True)
    else:
        if arr.dtype.kind == "f" and not np.isfinite(arr).all():
            i = int(np.argmax(~np.isfinite(arr)))
            raise ValueError(f"categories must not be missing; categories[{i}] = {float(arr[i])!r}")
        if arr.dtype.kind not in "iufb":
            vals = arr.tolist()
            bad = [i for i, v in enumerate(vals) if v is None or (isinstance(v, float) and v != v)]
            if bad:
                raise ValueError(f"categories must not be missing; categories[{bad[0]}] = {vals[bad[0]]!r}")
            arr = np.array([str(v) for v in vals]) if len(vals) else arr.astype(str)
        labels, codes = np.unique(arr, return_inverse=True)
    if len(labels) < 2:
        what = "ordinal" if ordinal else "multinomial"
        raise ValueError(f"the {what} model needs cases of at least 2 categories, got only {labels.tolist()!r}")
    return codes.astype(np.int64).ravel(), labels


# ---------------------------------------------------------------------------- reporting
def combined_categories(o, tot, ordinal, want_high, want_low):
    """The groups of categories SaTScan reports for a window with counts ``o`` (K,)
    (``CalculateOrdinalCombinedCategories``): each category alone (multinomial), or those pooled by
    the order restriction of the larger of the high and low likelihoods (high on ties)."""
    K = len(tot)
    if not ordinal:
        return [[k] for k in range(K)]
    c = np.asarray(o, dtype=np.float64).reshape(K, 1)
    tot = np.asarray(tot, dtype=np.float64)
    P, Q = np.empty(K), np.empty(K)
    best, groups = None, []
    for restrict, want in ((HIGH, want_high), (LOW, want_low)):
        if want and _probabilities(c, 0, tot, restrict, P, Q):
            ll = _log_likelihood(c, 0, tot, P, Q)
            if best is None or ll > best:
                best = ll
                groups = []
                k = 0
                while k < K:
                    g = [k]
                    i = k
                    while i + 1 < K and ((Q[k] == 0 and Q[i + 1] == 0) or (
                            Q[k] != 0 and Q[i + 1] != 0 and abs(P[k] / Q[k] - P[i + 1] / Q[i + 1]) < 1e-7)):
                        i += 1
                        g.append(i)
                        k = i
                    groups.append(g)
                    k += 1
    return groups


def _relative_risk(o, e, T):
    """SaTScan's relative risk of ``o`` observed where ``e`` expected among ``T`` (``GetRelativeRisk``):
    infinite when every case is inside, 0 when undefined."""
    if T == o:
        return math.inf
    if e and T - e and (T - o) / (T - e):
        return (o / e) / ((T - o) / (T - e))
    return 0.0


def window_categories(o, tot, labels, ordinal, want_high, want_low) -> dict:
    """The category table of a cluster with counts ``o`` (K,): per group of categories, the labels,
    observed and expected cases, observed / expected, relative risk and percent of the cluster's
    cases, as SaTScan reports them; for the ordinal model whether the cluster is high or low."""
    o = np.asarray(o, dtype=np.int64)
    tot = np.asarray(tot, dtype=np.float64)
    C = float(tot.sum())
    W = int(o.sum())
    groups = combined_categories(o, tot, ordinal, want_high, want_low)
    obs, exp, ode, rr, pct, lab = [], [], [], [], [], []
    for g in groups:
        og = int(o[g].sum())
        eg = 0.0
        for k in g:
            eg += W * tot[k] / C
        Tg = float(tot[g].sum())
        lab.append(tuple(labels[k].item() if isinstance(labels[k], np.generic) else labels[k] for k in g))
        obs.append(og)
        exp.append(float(eg))
        ode.append(float(og / eg) if eg else math.inf)
        rr.append(float(_relative_risk(og, eg, Tg)))
        pct.append(100.0 * og / W if W else 0.0)
    out = {"categories": lab, "observed_by_category": obs, "expected_by_category": exp,
           "ode_by_category": ode, "relative_risk_by_category": rr, "percent_by_category": pct}
    if ordinal:
        if len(groups) == 1:
            out["cluster_type"] = "high" if ode[0] >= 1.0 else "low"
        else:
            out["cluster_type"] = "high" if ode[1] >= ode[0] else "low"
    return out


def category_table(result) -> pd.DataFrame:
    """The category tables of an ordinal or multinomial scan's clusters in long form: one row per
    cluster and group of categories.

    Parameters
    ----------
    result : ScanResult
        The result of :func:`~hphawkes_py.scan.ordinal` or :func:`~hphawkes_py.scan.multinomial`.

    Returns
    -------
    pandas.DataFrame
        ``cluster`` (1 the most likely), ``categories`` (the labels of the group: more than one where
        the ordinal model pooled categories), ``observed``, ``expected``, ``observed_over_expected``,
        ``relative_risk`` (inf where every case of the group is inside) and ``percent_cases``.

    Examples
    --------
    >>> from hphawkes_py.scan._categorical import category_table
    >>> rng = np.random.default_rng(0)
    >>> xy = rng.uniform(0, 10, (30, 2)).round(3)
    >>> where = rng.integers(0, 30, 300)
    >>> grade = rng.integers(1, 4, 300)
    >>> res = hp.scan.multinomial(xy[where], grade, location_ids=where, n_replicates=9, seed=1,
    ...                           backend="cpu", progress=False)
    >>> list(category_table(res).columns)[:3]
    ['cluster', 'categories', 'observed']
    """
    if not hasattr(result, "clusters") or "observed_by_category" not in getattr(result.clusters, "columns", ()):
        model = "" if not hasattr(result, "model") else f" (model={result.model!r})"
        raise TypeError(f"result must be the ScanResult of hp.scan.ordinal or hp.scan.multinomial, got "
                        f"{type(result).__name__}{model}")
    rows = []
    for i, row in enumerate(result.clusters.itertuples(index=False), start=1):
        for j, lab in enumerate(row.categories):
            rows.append({"cluster": i, "categories": lab, "observed": row.observed_by_category[j],
                         "expected": row.expected_by_category[j], "observed_over_expected": row.ode_by_category[j],
                         "relative_risk": row.relative_risk_by_category[j],
                         "percent_cases": row.percent_by_category[j]})
    return pd.DataFrame(rows, columns=["cluster", "categories", "observed", "expected", "observed_over_expected",
                                       "relative_risk", "percent_cases"])
