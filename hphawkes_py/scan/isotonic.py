"""The isotonic spatial scan statistic: a risk that falls in steps with the distance from a centre.

SaTScan's isotonic scan (``IsotonicScan=1``; ``CPSMonotoneAnalysis``, ``SpatialMonotoneData``) for the purely
spatial Poisson and Bernoulli models, Kulldorff's "isotonic spatial scan statistic": around every centre the
risk is a non-increasing step function of the distance instead of one level inside a circle.

1. The locations of a centre's largest circle (:func:`~.windows.build_windows`, up to ``max_population``) enter one
   at a time, nearest first, each as a step of its own; a step whose rate is not above the next one's (for high
   rates; at least 2 cases in the inner step, as SaTScan's ``HighRate``), or not below it (low rates), is pooled
   with it, back to the centre (pool adjacent violators: the steps' rates are then the isotonic maximum
   likelihood estimate).
2. The cases outside the circle enter as one more step, pooled the same way; the log likelihood ratio is
   ``sum over steps of LL(c_s, m_s) - LL0`` (Poisson: ``c log(c / m)``, ``m`` expected cases; Bernoulli:
   ``c log(c / m) + (m - c) log(1 - c / m)``, ``m`` persons).
3. The cluster is the locations of the steps left once the outside step (with the circles it took in) is taken
   away; a centre has one candidate, whose LLR is 0 when everything pooled into the outside step.
4. The Monte Carlo replicates are the model's usual null draws (:mod:`.null_draws`); each replicate's maximum is
   over every centre's isotonic cluster. The clusters are listed as the circular scan lists them.

The engine (:class:`IsotonicEngine`) runs on the CPU (Numba), and on a GPU as the CUDA kernel ``scan_isotonic``
(``gpu/kernels/scan_isotonic.cu``, :class:`~.gpu.GpuIsotonicEngine`: the same pooling, one thread per centre and
replicate); the steps of a listed cluster come from :func:`centre_steps`.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
from numba import njit, prange

__all__ = ["IsotonicEngine", "centre_steps", "step_columns"]


@njit(cache=True, inline="always")
def _of_interest(c1, m1, c2, m2, high):
    """SaTScan's ``HighRate`` / ``LowRate`` of an inner step (``c1`` cases, measure ``m1``) against the next one:
    whether the two stay apart (else they are pooled)."""
    if m1 == 0.0:
        return False
    if high:
        return c1 >= 2.0 and c1 * m2 > m1 * c2
    return c1 * m2 < m1 * c2


@njit(cache=True, inline="always")
def _step_ll(c, m, bernoulli):
    """A step's log likelihood (SaTScan's ``CalcMonotoneLogLikelihood`` terms)."""
    if bernoulli:
        if c != 0 and c != m:
            return c * math.log(c / m) + (m - c) * math.log(1.0 - (c / m))
        if c == 0:
            return (m - c) * math.log(1.0 - (c / m))
        return c * math.log(c / m)
    return c * math.log(c / m) if c != 0 else 0.0


@njit(cache=True, inline="always")
def _isotonic(start, k, neighbors, cases, r, measure, C, M, ll0, bernoulli, high, sc, sm, sl):
    """``(llr, steps, last)``: the isotonic cluster of one centre (its ``k`` neighbours from ``start``) for the case
    counts ``cases[r]`` (a row of (R, L)): its LLR (0 when none), its steps (in ``sc``, ``sm``, ``sl``: cases,
    measure and last neighbour of each) and the position of its last neighbour (-1 when none). The last step is
    kept in registers (``tc``, ``tm``, ``tl``) and stored below the new one when it stays apart: the comparison of
    every new location reads no memory written just before."""
    ns = 0  # steps below the last one, in sc / sm / sl
    has = False  # whether there is a last step
    tc = 0.0
    tm = 0.0
    tl = np.int64(0)
    gc = 0.0  # whole numbers of cases: exact in float64
    gm = 0.0
    for t in range(k + 1):
        if t < k:
            loc = neighbors[start + t]
            c = np.float64(cases[r, loc])
            m = measure[loc]
            gc += c
            gm += m
        else:  # the cases outside the circle: one more step
            if gc == C:
                break
            c = C - gc
            m = M - gm
        if has and not _of_interest(tc, tm, c, m, high):
            tc += c
            tm += m
            tl = t
            # pooled further back while the step below is not of interest against it (rare)
            while ns > 0 and not _of_interest(sc[ns - 1], sm[ns - 1], tc, tm, high):
                ns -= 1
                tc += sc[ns]
                tm += sm[ns]
        else:
            if has:
                sc[ns] = tc
                sm[ns] = tm
                sl[ns] = tl
                ns += 1
            tc = c
            tm = m
            tl = t
            has = True
    if not has:
        return 0.0, 0, -1
    ll = 0.0
    for s in range(ns):
        ll += _step_ll(sc[s], sm[s], bernoulli)
    ll += _step_ll(tc, tm, bernoulli)
    if gc != C:  # the outside step (the last one) is taken away
        if ns == 0:
            return 0.0, 0, -1
        return ll - ll0, ns, sl[ns - 1]
    sc[ns] = tc
    sm[ns] = tm
    sl[ns] = tl
    return ll - ll0, ns + 1, tl


@njit(cache=True, parallel=True)
def _best_isotonic(offsets, neighbors, cases, measure, C, M, ll0, bernoulli, want_high, want_low, best, entry):
    """For every centre and replicate (row) of ``cases`` (R, L: a replicate's counts together, which a centre's walk
    reads at random): the LLR of the centre's isotonic cluster (``best``; the larger
    of the high and low ones asked for, the high one of equal ones) and the neighbour-list entry of its last
    location (``entry``, -1 when none)."""
    m = offsets.shape[0] - 1
    R = cases.shape[0]
    for i in prange(m):
        k = offsets[i + 1] - offsets[i]
        sc = np.empty(k + 1)
        sm = np.empty(k + 1)
        sl = np.empty(k + 1, dtype=np.int64)
        for r in range(R):
            top = 0.0
            at = np.int64(-1)
            for high in (True, False):
                if (high and not want_high) or (not high and not want_low):
                    continue
                llr, ns, last = _isotonic(offsets[i], k, neighbors, cases, r, measure, C, M, ll0, bernoulli, high,
                                          sc, sm, sl)
                if ns > 0 and llr > top:
                    top = llr
                    at = offsets[i] + last
            best[i, r] = top
            entry[i, r] = at


@dataclasses.dataclass(frozen=True)
class IsotonicEngine:
    """The isotonic scan of one analysis on the CPU: the centres' neighbour lists (CSR ``offsets``, ``neighbors``;
    each centre's largest circle), the measure per location (``measure``: expected cases, Poisson, or persons,
    Bernoulli), the totals ``C`` (cases) and ``M`` (measure) and the directions asked for. ``model`` ("poisson" or
    "bernoulli") also tells the Monte Carlo which null draws to make."""

    offsets: np.ndarray
    neighbors: np.ndarray
    measure: np.ndarray
    C: int
    M: float
    model: str
    want_high: bool
    want_low: bool
    backend = "cpu"

    @property
    def n_centres(self) -> int:
        return len(self.offsets) - 1

    @property
    def n_cases(self) -> int:
        return int(self.C)

    @property
    def ll0(self) -> float:
        """The null log likelihood (SaTScan's ``GetLogLikelihoodForTotal``)."""
        C, M = float(self.C), float(self.M)
        if self.model == "bernoulli":
            return (C * math.log(C / M) if C else 0.0) + ((M - C) * math.log(1.0 - C / M) if M > C else 0.0)
        return C * math.log(C / M) if C else 0.0

    def best_per_centre(self, cases: np.ndarray, want_arg: bool = False):
        """(m, R) the LLR of every centre's isotonic cluster for the case counts ``cases`` (L, R) and (with
        ``want_arg``) the neighbour-list entry of its last location (-1: none)."""
        cases = np.ascontiguousarray(np.asarray(cases).T, dtype=np.int32)  # (R, L)
        R = cases.shape[0]
        best = np.zeros((self.n_centres, R))
        entry = np.full((self.n_centres, R), -1, dtype=np.int64)
        _best_isotonic(self.offsets, self.neighbors, cases, np.ascontiguousarray(self.measure, dtype=np.float64),
                       float(self.C), float(self.M), self.ll0, self.model == "bernoulli", bool(self.want_high),
                       bool(self.want_low), best, entry)
        return (best, entry) if want_arg else (best, None)

    def max_llr(self, cases: np.ndarray) -> np.ndarray:
        """(R,) every replicate's largest isotonic LLR over the centres."""
        best, _ = self.best_per_centre(cases)
        return best.max(axis=0) if best.shape[0] else np.zeros(np.shape(cases)[1])


def centre_steps(engine: IsotonicEngine, cases: np.ndarray, centre: int) -> list:
    """The steps of centre ``centre``'s isotonic cluster for the observed ``cases`` (L,): a list of ``(first, last,
    cases, measure)``, neighbour positions ``first..last`` of the centre's list (the direction of the larger LLR,
    the high one of equal ones; empty when there is no cluster)."""
    start, end = int(engine.offsets[centre]), int(engine.offsets[centre + 1])
    k = end - start
    col = np.ascontiguousarray(np.asarray(cases, dtype=np.int32).reshape(1, -1))
    measure = np.ascontiguousarray(engine.measure, dtype=np.float64)
    best = None
    for high, wanted in ((True, engine.want_high), (False, engine.want_low)):
        if not wanted:
            continue
        sc, sm, sl = np.empty(k + 1), np.empty(k + 1), np.empty(k + 1, np.int64)
        llr, ns, _ = _isotonic(start, k, engine.neighbors, col, 0, measure, float(engine.C), float(engine.M),
                               engine.ll0, engine.model == "bernoulli", high, sc, sm, sl)
        if ns > 0 and (best is None or llr > best[0]):
            firsts = np.concatenate([[0], sl[:ns - 1] + 1])
            best = (llr, [(int(a), int(b), int(c), float(mm)) for a, b, c, mm in zip(firsts, sl[:ns], sc[:ns],
                                                                                   sm[:ns])])
    return [] if best is None else best[1]


def step_columns(engine: IsotonicEngine, cases: np.ndarray, centre: int, ids_of, radius_of) -> dict:
    """The columns of a listed isotonic cluster (centre ``centre``, the observed ``cases``): ``steps``, each step's
    location ids (``ids_of(locations)``), radius (``radius_of(locations, centre)``: the farthest of the locations up
    to the step's last), cases, expected cases (the measure; Bernoulli: persons times C / N) and relative risk
    (SaTScan's ``GetRelativeRiskForStep``: the step's observed over expected against the cluster's outside)."""
    steps = centre_steps(engine, cases, centre)
    expected_per_measure = engine.C / engine.M if engine.model == "bernoulli" else 1.0
    nb = engine.neighbors[engine.offsets[centre]:engine.offsets[centre + 1]]
    C = float(engine.C)
    o_in = sum(s[2] for s in steps)
    e_in = sum(s[3] for s in steps) * expected_per_measure
    outside = (C - o_in) / (C - e_in) if C != e_in else math.nan
    expected = [s[3] * expected_per_measure for s in steps]
    rr = [(c / e) / outside if e and outside else (math.inf if e else math.nan)
          for (_, _, c, _), e in zip(steps, expected)]
    return {"steps": len(steps), "step_location_ids": [ids_of(nb[a:b + 1]) for a, b, _, _ in steps],
            "step_radius": [float(radius_of(nb[:b + 1], centre)) for _, b, _, _ in steps],
            "step_cases": [c for _, _, c, _ in steps], "step_expected": expected, "step_relative_risk": rr}
