"""Kulldorff's spatial scan statistic for continuous measurements: the normal model, unweighted and weighted.

Kulldorff, Huang & Konty (2009, "A scan statistic for continuous data based on the normal probability
model", Int J Health Geogr 8:58) and SaTScan's weighted normal model (``NormalLikelihoodCalculator``,
``WeightedNormalLikelihoodCalculator``, ``NormalRandomizer``, ``WeightedNormalRandomizer``):

1. every observation (a measurement ``x``, with a weight ``w`` in the weighted model) sits at a
   location; rows with identical coordinates are one location;
2. circular windows are centred on every location and grown through the nearest neighbours until
   the number of observations inside would exceed ``max_population`` x the total N (SaTScan's
   population at risk of the normal model is the observation count); locations at the same
   distance enter one at a time, the lesser coordinates first (SaTScan's order);
3. a window with ``n`` observations is scored by its log likelihood ratio with one mean inside,
   one outside and a common variance, against one mean everywhere (the variances estimated by
   maximum likelihood under each hypothesis)::

       unweighted:  LLR = N log sigma0 - N log sigma1,
                    sigma1^2 = (sum_in (x - mean_in)^2 + sum_out (x - mean_out)^2) / N,
                    sigma0^2 = sum (x - mean)^2 / N;
       weighted:    LLR = N/2 log(S0) - N/2 log(S1),
                    S1 = sum_i w_i x_i^2 - (sum_in w x)^2 / sum_in w - (sum_out w x)^2 / sum_out w,
                    S0 = sum_i w_i (x_i - wmean)^2,

   when its mean (weighted mean) is higher (lower, either) than outside;
4. Monte Carlo inference: ``n_replicates`` data sets with the measurements (and their weights)
   permuted among the observations, which keep their locations; p = (1 + #{null >= observed}) /
   (1 + n_replicates).

SaTScan's arithmetic is followed term by term (its expanded sums of squares, its test of the
window's mean against the overall mean by cross products), and so are two of its rules: a window
whose sum of measurements (weighted: of ``w x``) is exactly 0 is never a cluster, and the minimum
number of observations of a cluster follows its settings (see :func:`satscan_min_cases`).

The engine (:class:`PermutationEngine`, and its CUDA kernel ``scan_permutation`` through
:class:`~.gpu.GpuPermutationEngine`) serves every model whose null permutes the observations' values:
these two and the exponential model (:mod:`.exponential`).
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
from numba import njit, prange

from .._backend import get_device, is_gpu_backend, threads_context
from .._parallel import run_replicates
from .._validate import as_float_array, check_int
from .locations import (_check_xy, _radius, check_empty_locations, check_location_ids, make_centres, merge_rows,
                        report_rows, with_empty_locations)
from .model import _check_windows
from .monte_carlo import batch_children, check_run, replicate_batches, replicate_seed_batches
from .null_draws import permute_measurements
from .result import Candidates, ScanResult, _clusters
from .windows import build_windows

__all__ = ["normal", "satscan_min_cases", "PermutationEngine", "permutation_monte_carlo", "scan_observations",
           "NORMAL", "WEIGHTED_NORMAL", "EXPONENTIAL"]

#: SaTScan's "no maximizing value" (a window that is not of interest): minus the largest double
_NONE = -np.finfo(np.float64).max


# ---------------------------------------------------------------------------- the window statistic
#: the models of the permutation engine (:class:`PermutationEngine`)
NORMAL, WEIGHTED_NORMAL, EXPONENTIAL = 0, 1, 2


@njit(cache=True, inline="always")
def _of_interest(model, n, u, u2, N, U, U2, min_high, min_low, want_high, want_low):
    """Whether a window is of interest, as SaTScan tests it: never when ``u`` is 0; a higher mean (rate)
    needs ``n >= min_high``, a lower one ``n >= min_low``.

    Normal: ``n`` observations, ``u`` their sum; a higher mean is ``n U < u N`` (the cross products
    SaTScan compares). Weighted normal: ``u``, ``u2`` the window's sums of w x and w; its weighted mean
    ``u / u2`` against ``U / U2``. Exponential: ``n`` uncensored cases, ``u`` their expected count (the
    calibrated survival time); a higher rate is ``n U > u N``."""
    if u == 0.0:
        return False
    if model == WEIGHTED_NORMAL:
        m = u / u2
        M = U / U2
        return (want_high and n >= min_high and m > M) or (want_low and n >= min_low and m < M)
    a = np.float64(n) * U
    b = u * np.float64(N)
    if model == EXPONENTIAL:
        return (want_high and n >= min_high and a > b) or (want_low and n >= min_low and a < b)
    return (want_high and n >= min_high and a < b) or (want_low and n >= min_low and a > b)


@njit(cache=True, inline="always")
def _maximizing_value(model, n, u, u2, N, U, U2):
    """SaTScan's maximizing value of a window (larger is more likely), :data:`_NONE` when there is none.

    Normal (``CalculateMaximizingValueNormal``): minus the common variance sigma1^2 of ``n``
    observations with sums ``u``, ``u2`` of x and x^2 (none when ``n`` is 0 or N, or the variance is
    not positive). Weighted normal: ``u^2 / u2 + (U - u)^2 / (U2 - u2)`` (sums of w x and w).
    Exponential (``PoissonLikelihoodCalculator::CalculateMaximizingValue``): the Poisson log likelihood
    ``n log(n/u) + (N-n) log((N-n)/(U-u))`` of ``n`` cases where ``u`` are expected."""
    if model == EXPONENTIAL:
        if n != N and n != 0:
            return n * math.log(n / u) + (N - n) * math.log((N - n) / (U - u))
        if n == 0:
            return (N - n) * math.log((N - n) / (U - u))
        return n * math.log(n / u)
    if n == 0 or n == N:
        return _NONE
    if model == WEIGHTED_NORMAL:
        return u * u / u2 + (U - u) * (U - u) / (U2 - u2)
    mi = u / n
    mo = (U - u) / (N - n)
    var = (1.0 / N) * (u2 - 2.0 * u * mi + n * (mi * mi) + (U2 - u2) - 2.0 * (U - u) * mo + (N - n) * (mo * mo))
    return -var if var > 0.0 else _NONE


@njit(cache=True, inline="always")
def _full_statistic(model, mv, N, U, U2, A, B):
    """The LLR of a maximizing value (``CalculateFullStatistic``; 0 for :data:`_NONE`). Normal:
    ``-N log sqrt(-mv) + N log sqrt(U2/N - (U/N)^2)``; weighted normal: ``-N/2 log(A - mv) + B`` with
    ``A`` the total of w x^2 and ``B = N/2 log S0``; exponential: ``mv - N log(N/U)``."""
    if mv == _NONE:
        return 0.0
    if model == EXPONENTIAL:
        return mv - N * math.log(N / U)
    if model == WEIGHTED_NORMAL:
        return -0.5 * N * math.log(A - mv) + B
    return -1.0 * N * math.log(math.sqrt(-mv)) + N * math.log(math.sqrt(U2 / N - (U / N) * (U / N)))


@njit(cache=True, parallel=True)
def _best_windows(model, offsets, neighbors, boundary, n_loc, s1, s2, N, U, U2, min_high, min_low, want_high,
                  want_low, best_mv, arg):
    """For every centre and every column of the per-location sums ``s1``, ``s2`` (L, R): the maximizing
    value of the centre's best window (``best_mv`` (m, R), :data:`_NONE` when none is of interest) and
    the neighbour-list entry where it ends (``arg``, -1 when none). Windows are compared by their
    maximizing value, the first (smallest) of equal ones kept, as SaTScan does. The normal models
    count a window's observations from ``n_loc``; the exponential model its cases from ``s1`` (whole
    numbers). The CUDA kernel ``scan_permutation`` (``gpu/kernels/scan_permutation.cu``) is this loop."""
    m = offsets.shape[0] - 1
    R = s1.shape[1]
    for i in prange(m):
        u = np.zeros(R)
        u2 = np.zeros(R)
        mv = np.full(R, _NONE)
        at = np.full(R, -1, dtype=np.int64)
        n = np.int64(0)
        for k in range(offsets[i], offsets[i + 1]):
            loc = neighbors[k]
            n += n_loc[loc]
            for r in range(R):
                u[r] += s1[loc, r]
                u2[r] += s2[loc, r]
            if boundary[k]:
                for r in range(R):
                    if model == EXPONENTIAL:
                        c = np.int64(u[r])
                        ok = _of_interest(model, c, u2[r], 0.0, N, U, U2, min_high, min_low, want_high, want_low)
                        v = _maximizing_value(model, c, u2[r], 0.0, N, U, U2) if ok else _NONE
                    else:
                        ok = _of_interest(model, n, u[r], u2[r], N, U, U2, min_high, min_low, want_high, want_low)
                        v = _maximizing_value(model, n, u[r], u2[r], N, U, U2) if ok else _NONE
                    if v > mv[r]:
                        mv[r] = v
                        at[r] = k
        for r in range(R):
            best_mv[i, r] = mv[r]
            arg[i, r] = at[r]


@njit(cache=True, parallel=True)
def _statistics(model, mv, N, U, U2, A, B):
    """The LLRs (m, R) of the maximizing values ``mv`` (m, R) (:func:`_full_statistic`): one host
    function for both engines, so that equal maximizing values give equal LLRs."""
    out = np.empty_like(mv)
    for i in prange(mv.shape[0]):
        for r in range(mv.shape[1]):
            out[i, r] = _full_statistic(model, mv[i, r], N, U, U2, A, B)
    return out


@dataclasses.dataclass(frozen=True)
class PermutationEngine:
    """One analysis of the models whose null permutes the observations' values (normal, weighted
    normal, exponential) on the CPU: its windows (:func:`~.windows.build_windows`), the observations
    per location and the data set's totals.

    ``model``: :data:`NORMAL`, :data:`WEIGHTED_NORMAL` or :data:`EXPONENTIAL`. ``N``: observations
    (exponential: uncensored cases); ``U``, ``U2``: totals of x and x^2 (weighted: of w x and w;
    exponential: ``U`` the calibrated survival time); ``A`` (weighted): total of w x^2; ``B``
    (weighted): N/2 log S0; ``min_high``, ``min_low``: observations (cases) a window with a higher
    (lower) mean (rate) needs. The per-location sums it scans (``s1``, ``s2``) are those of x and x^2
    (weighted: w x and w; exponential: uncensored cases and calibrated time).
    """

    model: int
    offsets: np.ndarray
    neighbors: np.ndarray
    boundary: np.ndarray
    n_loc: np.ndarray
    N: int
    U: float
    U2: float
    A: float
    B: float
    min_high: int
    min_low: int
    want_high: bool
    want_low: bool
    backend = "cpu"

    @property
    def n_centres(self) -> int:
        return len(self.offsets) - 1

    def best_mv(self, s1: np.ndarray, s2: np.ndarray):
        """(m, R) maximizing value of each centre's best window and (m, R) int64 entry where it ends
        (-1: none), for the per-location sums ``s1``, ``s2`` (L, R) float64."""
        s1 = np.ascontiguousarray(s1, dtype=np.float64)
        s2 = np.ascontiguousarray(s2, dtype=np.float64)
        R = s1.shape[1]
        mv = np.empty((self.n_centres, R))
        arg = np.empty((self.n_centres, R), dtype=np.int64)
        _best_windows(np.int64(self.model), self.offsets, self.neighbors, self.boundary, self.n_loc, s1, s2,
                      np.int64(self.N), np.float64(self.U), np.float64(self.U2), np.int64(self.min_high),
                      np.int64(self.min_low), self.want_high, self.want_low, mv, arg)
        return mv, arg

    def llr(self, mv: np.ndarray) -> np.ndarray:
        """The LLRs of maximizing values (0 where there is none)."""
        return _statistics(np.int64(self.model), np.ascontiguousarray(mv, dtype=np.float64), np.int64(self.N),
                           np.float64(self.U), np.float64(self.U2), np.float64(self.A), np.float64(self.B))

    def best_per_centre(self, s1: np.ndarray, s2: np.ndarray):
        """(m, R) best LLR per centre (0: no window of interest) and (m, R) entry where that window ends."""
        mv, arg = self.best_mv(s1, s2)
        return self.llr(mv), arg

    def max_llr(self, s1: np.ndarray, s2: np.ndarray) -> np.ndarray:
        """(R,) maximum LLR over all windows of each column."""
        best, _ = self.best_per_centre(s1, s2)
        return best.max(axis=0) if best.shape[0] else np.zeros(np.shape(s1)[1])


def _null_batch(size, batch_seed, engine, loc_of_obs, first, second, L):
    """One Monte Carlo batch: ``size`` permutations of the observations' values and their maxima (module
    level so process pools can pickle it)."""
    s1, s2 = permute_measurements(loc_of_obs, first, second, L, batch_children(batch_seed, size))
    return engine.max_llr(s1, s2)


def permutation_monte_carlo(engine: PermutationEngine, gid, first, second, L: int, run) -> np.ndarray:
    """(n_replicates,) maxima of the permutation replicates, in replicate order (each replicate's
    permutation depends on its seed only): the pairs (``first``, ``second``) of the observations
    permuted among them (``gid``: each observation's location), ``run``: the checked
    :class:`~.monte_carlo.RunOptions`."""
    R = run.n_replicates
    # a replicate holds its sums and its per-centre maxima
    batch, sizes = replicate_batches(R, 16 * L + 16 * engine.n_centres, is_gpu_backend(engine.backend), run.executor)
    parts = run_replicates(_null_batch, sizes, seeds=replicate_seed_batches(run.seed, R, batch),
                           executor=run.executor, progress=run.progress, desc="scan Monte Carlo",
                           args=(engine, gid, first, second, L))
    return np.concatenate(parts).astype(np.float64)


# ---------------------------------------------------------------------------- checks
def satscan_min_cases(direction: str, weighted: bool, low_rate_minimum: int = 0, high_rate_minimum: int = 2) -> int:
    """The ``min_cases`` of :func:`normal` that runs what SaTScan runs with its settings
    ``MinimumCasesInLowRateClusters`` (``low_rate_minimum``) and ``MinimumCasesInHighRateClusters``
    (``high_rate_minimum``).

    SaTScan scans the unweighted normal model's high means as its "low rates" and its low means as
    "high rates" (``CParameters::GetExecuteScanRateType``), so there the low-rate minimum is the one
    high means need; it raises the low-rate minimum to 2 when low (or both) rates are scanned, and
    refuses a high-rate minimum below 2 when high (or both) rates are. One ``min_cases`` stands for
    both when they agree.

    Parameters
    ----------
    direction : {"high", "low", "both"}
    weighted : bool
        Whether the case file has weights (SaTScan's weighted normal model).
    low_rate_minimum, high_rate_minimum : int >= 0
        SaTScan's two settings (its defaults 0 and 2).

    Returns
    -------
    int
        The minimum number of observations of a cluster.

    Raises
    ------
    ValueError
        The settings give high and low means different minimums (not expressible by one
        ``min_cases``), or SaTScan would refuse them.

    Examples
    --------
    >>> from hphawkes_py.scan.normal_model import satscan_min_cases
    >>> satscan_min_cases("high", weighted=False)   # SaTScan's defaults
    0
    >>> satscan_min_cases("high", weighted=True)
    2
    """
    from .._validate import check_bool, check_in

    check_in(direction, "direction", ("high", "low", "both"))
    weighted = check_bool(weighted, "weighted")
    lo = check_int(low_rate_minimum, "low_rate_minimum", minimum=0)
    hi = check_int(high_rate_minimum, "high_rate_minimum", minimum=0)
    if direction in ("high", "both") and hi < 2:
        raise ValueError(f"high_rate_minimum={hi}: SaTScan refuses a minimum below 2 when high rates are scanned")
    if direction in ("low", "both"):
        lo = max(lo, 2)
    # which SaTScan minimum the windows of a higher / lower mean need
    high_mean, low_mean = (hi, lo) if weighted else (lo, hi)
    if direction == "high":
        return high_mean
    if direction == "low":
        return low_mean
    if high_mean != low_mean:
        raise ValueError(f"with direction='both', SaTScan's settings give windows of a higher mean a minimum of "
                         f"{high_mean} observations and windows of a lower mean {low_mean}; normal() takes one "
                         f"min_cases for both")
    return high_mean


def _check_min_cases(min_cases, direction: str, weighted: bool) -> int:
    """``min_cases`` of :func:`normal` checked (None: SaTScan's defaults, see :func:`satscan_min_cases`)."""
    if min_cases is None:
        return satscan_min_cases(direction, weighted)
    m = check_int(min_cases, "min_cases", minimum=0)
    if m < 2 and (weighted or direction == "both"):
        what = "the weighted model" if weighted else "direction='both'"
        raise ValueError(f"min_cases={m}: with {what} SaTScan needs at least 2 observations in a cluster (it refuses "
                         f"or raises a smaller minimum); give min_cases >= 2")
    return m


def _check_observations(values, weights, n):
    """The measurements (and weights) of :func:`normal`, checked: ``(x, w or None)`` float64."""
    x = as_float_array(values, "values", ndim=1, copy=True)
    if len(x) != n:
        raise ValueError(f"coords and values must have the same length (one row per observation); got coords {n}, "
                         f"values {len(x)}")
    if n < 2:
        raise ValueError(f"the normal model needs at least 2 observations, got {n}")
    w = None
    if weights is not None:
        w = as_float_array(weights, "weights", ndim=1, copy=True)
        if len(w) != n:
            raise ValueError(f"weights must have one entry per observation ({n}), got {len(w)}")
        if (w <= 0).any():
            i = int(np.argmax(w <= 0))
            raise ValueError(f"weights must be positive; weights[{i}] = {float(w[i])!r}")
    if not (x != x[0]).any():
        raise ValueError(f"values are all equal ({float(x[0])!r}): the normal model needs measurements that vary")
    with np.errstate(over="ignore"):
        big = not np.isfinite(np.abs(x).max() ** 2 * n * (1.0 if w is None else float(w.max())))
    if big:
        raise ValueError(f"values up to {float(np.abs(x).max())!r} are too large: their (weighted) squares would sum "
                         f"beyond the floating-point range; rescale them (e.g. another unit)")
    return x, w


def _totals(x, w):
    """``(U, U2, A, B)``: the data set's totals as SaTScan sums them (observation order)."""
    if w is None:
        return float(np.add.accumulate(x)[-1]), float(np.add.accumulate(x * x)[-1]), 0.0, 0.0
    wx = x * w
    U = float(np.add.accumulate(wx)[-1])
    U2 = float(np.add.accumulate(w)[-1])
    A = float(np.add.accumulate(x * x * w)[-1])
    d = x - U / U2
    S0 = float(np.add.accumulate(w * (d * d))[-1])
    return U, U2, A, 0.5 * len(x) * math.log(S0)


def total_squares(x, w) -> float:
    """The (weighted) sum of squares of the measurements about their (weighted) mean, two-pass: the S0 of
    :class:`~.cpu_normal_space_time.NormalCylinderEngine`."""
    ww = np.ones(len(x)) if w is None else w
    return float((ww * (x - np.average(x, weights=ww)) ** 2).sum())


def _window_table(x, w, inside):
    """SaTScan's cluster statistics of one window (``inside``: boolean per observation): means inside
    and outside, the common variance and its square root (``GetUnbiasedVariance``, divisor N - 1), and
    with weights the weighted means, weighted variance and the weight inside
    (``AbstractWeightedNormalRandomizer::getClusterStatistics``)."""
    N = len(x)
    xi, xo = x[inside], x[~inside]
    n = len(xi)
    if w is None:
        u, u2 = xi.sum(), (xi * xi).sum()
        U, U2 = x.sum(), (x * x).sum()
        mi = u / n if n else 0.0
        mo = (U - u) / (N - n) if N - n else 0.0
        var = 1.0 / (N - 1) * (u2 - 2.0 * u * mi + n * mi * mi + (U2 - u2) - 2.0 * (U - u) * mo + (N - n) * mo * mo)
        var = max(var, 0.0)
        return {"mean_inside": mi, "mean_outside": mo, "variance": var, "std": math.sqrt(var)}
    wi, wo = w[inside], w[~inside]
    mi, mo = xi.mean(), xo.mean()
    wmi, wmo = (wi * xi).sum() / wi.sum(), (wo * xo).sum() / wo.sum()
    var = (((xi - mi) ** 2).sum() + ((xo - mo) ** 2).sum()) / N * (N / (N - 1))
    wvar = ((wi * (xi - wmi) ** 2).sum() + (wo * (xo - wmo) ** 2).sum()) / w.sum() * (N / (N - 1))
    return {"mean_inside": mi, "mean_outside": mo, "variance": var, "std": math.sqrt(var),
            "weighted_mean_inside": wmi, "weighted_mean_outside": wmo, "weighted_variance": wvar,
            "weighted_std": math.sqrt(wvar), "weight_inside": float(wi.sum())}


# ---------------------------------------------------------------------------- the scan
def normal(coords, values, *, weights=None, location_ids=None, max_population=0.5, max_distance=None, min_cases=None,
           n_replicates=999, direction="high", secondary="no-overlap", grid_cell=None, distance="euclidean", seed=None,
           executor=None, backend="auto", threads=None, progress=True, empty_locations=None,
           empty_location_ids=None) -> ScanResult:
    """Kulldorff's spatial scan statistic for continuous measurements (normal model) with Monte Carlo inference.

    Semantics follow SaTScan's purely spatial normal analysis (Kulldorff, Huang & Konty 2009), and
    its weighted normal model when ``weights`` are given: circular windows up to ``max_population``
    of the observations, each scored by the likelihood ratio of a different mean inside than outside
    with a common variance (see the module notes for the formulas), the measurements permuted among
    the observations for the null.

    Parameters
    ----------
    coords : array_like (n, 2)
        Coordinates of each observation's location (one row per observation; rows with identical
        coordinates are one location). Planar, Euclidean distances, unless ``distance="great_circle"``.
    values : array_like (n,)
        The measurement of each observation (real numbers, in any unit; not all equal).
    weights : array_like (n,), optional
        Positive weight of each observation (e.g. the inverse variance of a measurement that is a
        mean or an estimate): SaTScan's weighted normal model, whose means and variances are weighted
        and whose null permutes the (measurement, weight) pairs. Without weights, the unweighted model.
    location_ids : array_like (n,), optional
        Location id of each observation (rows of one location share it; an id names one coordinate
        pair). Reported in ``clusters.location_ids`` once per location (default: the row of each
        location's first observation).
    max_population : float in (0, 0.5]
        Maximum number of observations in a window, as a fraction of all observations.
    max_distance : float, optional
        Maximum circle radius (coordinate units; km with ``distance="great_circle"``).
    min_cases : int >= 0, optional
        Observations a cluster needs (windows with fewer are not of interest, in the data and in
        every replicate). Default: SaTScan's defaults, 2, except for the unweighted model scanning
        high means, where SaTScan applies its low-rate minimum (0) and a window of one observation
        can be a cluster; :func:`satscan_min_cases` translates SaTScan's two settings. With weights
        or ``direction="both"`` at least 2.
    n_replicates : int >= 1
        Monte Carlo replicates (999 or 9999 as in SaTScan).
    direction : {"high", "low", "both"}
        Scan for windows whose mean (weighted mean) is higher (lower, either) than outside.
    secondary : {"no-overlap"}
        As in :func:`~hphawkes_py.scan.bernoulli`.
    grid_cell : float, optional
        Circles centred on the cells of a regular grid of this side instead of on the locations.
    distance : {"euclidean", "great_circle"}
        As in :func:`~hphawkes_py.scan.bernoulli` (great-circle: coords are (latitude, longitude), km).
    seed : None, int, SeedSequence or Generator
        Root of the per-replicate seeds: results do not depend on executor or batching.
    executor : None, concurrent.futures.Executor or dask Client
        Where the Monte Carlo batches run.
    backend : {"auto", "cpu", "gpu", "emulator"}
        The engine (the CUDA kernel on a GPU, or on the CPU emulator); both give the same LLRs.
    threads : int, optional
        Numba threads.
    progress : bool
        Show a progress bar over Monte Carlo batches.
    empty_locations : array_like (k, 2), optional
        Locations without observations (a SaTScan coordinates file's locations that no record names): circle
        centres, and members of the circles that reach them, as SaTScan scans them.
    empty_location_ids : array_like (k,), optional
        Their ids (needed with ``location_ids``).

    Returns
    -------
    ScanResult
        ``model="normal"`` (``"weighted_normal"`` with weights). ``clusters.cases`` and
        ``clusters.population`` are the window's observations, ``expected`` and ``relative_risk`` are
        NaN (no expected count in this model); ``mean_inside``, ``mean_outside``, ``variance`` (the
        common variance adjusted for the cluster, divisor N - 1) and ``std``, as SaTScan reports them,
        and with weights ``weighted_mean_inside``, ``weighted_mean_outside``, ``weighted_variance``,
        ``weighted_std`` and ``weight_inside``. ``n_cases`` and ``n_population``: the observations N.

    Examples
    --------
    Birth weights (kg) of 200 children at 40 villages, heavier around one of them:

    >>> rng = np.random.default_rng(1)
    >>> xy = rng.uniform(0, 10, (40, 2)).round(3)
    >>> village = rng.integers(0, 40, 200)
    >>> near = np.hypot(*(xy[village] - xy[0]).T) < 2
    >>> kg = rng.normal(3.3, 0.5, 200) + 0.6 * near
    >>> res = hp.scan.normal(xy[village], kg, location_ids=village, n_replicates=99, seed=1,
    ...                      backend="cpu", progress=False)
    >>> top = res.most_likely
    >>> print(top.cases, round(top.mean_inside, 2), round(top.mean_outside, 2), top.p_value)
    35 3.85 3.23 0.01
    """
    xy = _check_xy(coords)
    n = xy.shape[0]
    x, w = _check_observations(values, weights, n)
    ids = check_location_ids(location_ids, n, repeats=True)
    ws = _check_windows(xy, max_population, max_distance, grid_cell, distance, "circle", (), (), "none")
    weighted = w is not None
    run = check_run(0, n_replicates, direction, secondary, progress, threads, seed, backend, executor)
    m_cases = _check_min_cases(min_cases, run.direction, weighted)

    if weighted:
        first, second = x * w, w.copy()
    else:
        first, second = x, x * x
    U, U2, A, B = _totals(x, w)

    def stats(inside, c):
        return c, math.nan, math.nan, _window_table(x, w, inside)

    empty = check_empty_locations(empty_locations, empty_location_ids, location_ids is not None)
    fields = scan_observations(WEIGHTED_NORMAL if weighted else NORMAL, xy, ids, location_ids is not None, ws, run,
                               first, second, np.ones(n, dtype=np.int64), (n, U, U2, A, B), (m_cases, m_cases), stats,
                               empty)
    return ScanResult(**fields, n_cases=n, n_population=n, min_cases=m_cases,
                      model="weighted_normal" if weighted else "normal", _loc_expected=None)


def scan_observations(model, xy, ids, check_ids, ws, run, first, second, counted, totals, minimums, stats,
                      empty=None) -> dict:
    """The scan of a permutation model once its data are checked: locations, windows, the observed
    best window of every centre, the permutation maxima and the cluster table.

    ``xy`` (n, 2): each observation's coordinates (rows with identical coordinates are one location;
    ``ids`` the rows' location ids, given by the user when ``check_ids`` (then checked to name one
    coordinate pair each, and every distinct id reported), else row numbers (a location reported by
    its first row));
    ``ws``, ``run``: the checked window and run settings; ``first``, ``second`` (n,): what each
    observation adds to its location's two sums (permuted together for the null); ``counted`` (n,)
    int: what it adds to the window's count (observations; the exponential model's uncensored cases);
    ``totals``: ``(N, U, U2, A, B)`` and ``minimums``: ``(min_high, min_low)`` of the
    :class:`PermutationEngine`; ``stats(inside, c)``: the reported ``(population, expected,
    relative_risk, extra columns)`` of the window holding the observations ``inside`` (boolean (n,))
    and counting ``c``; ``empty``: locations without observations, centres and members of the circles too
    (:func:`~.locations.check_empty_locations`). Returns the :class:`~hphawkes_py.scan.ScanResult` fields the
    models share.
    """
    n = xy.shape[0]
    loc_coords, gid, members = merge_rows(xy)
    report = report_rows(members, ids, gid, check_ids)
    n_merged = n - len(members)
    loc_coords, report, ids, row_loc = with_empty_locations(loc_coords, report, ids, gid, empty)
    L = len(loc_coords)
    n_loc = np.bincount(gid, minlength=L).astype(np.int64)
    loc_count = np.bincount(gid, weights=counted, minlength=L).astype(np.int64)
    s1 = np.zeros(L)
    s2 = np.zeros(L)
    np.add.at(s1, gid, first)  # unbuffered, in observation order (SaTScan's order of summation)
    np.add.at(s2, gid, second)
    want_high, want_low = run.direction in ("high", "both"), run.direction in ("low", "both")
    centres, centre_loc = make_centres(loc_coords, ws.grid_cell)
    with threads_context(run.threads):
        points = ws.geo.points(loc_coords)
        cpoints = ws.geo.points(centres)
        offsets, neighbors, _, boundary = build_windows(cpoints, points, n_loc, ws.max_population * n,
                                                        ws.geo.to_working(ws.max_distance))
        engine = PermutationEngine(model, offsets, neighbors, boundary, n_loc, *totals, *minimums, want_high, want_low)
        if is_gpu_backend(run.backend):
            from .gpu import GpuPermutationEngine

            engine = GpuPermutationEngine(engine, device=get_device(run.backend), backend=run.backend)
        best, best_entry = engine.best_per_centre(s1[:, None], s2[:, None])
        null_llr = permutation_monte_carlo(engine, gid, first, second, L, run)
    tables = {}

    def window_stats(mem, c, j, i):
        population, expected, rr, tables[i] = stats(np.isin(gid, mem), c)
        return population, expected, rr

    cand = Candidates(best[:, 0], best_entry[:, 0], offsets, neighbors, centres, centre_loc)
    clusters = _clusters(cand, _radius(ws.geo, points, cpoints), loc_count, report, ids, null_llr, window_stats,
                         extra=lambda i: tables[i])
    return dict(clusters=clusters, null_llr=null_llr, backend=run.backend, n_centres=len(centres),
                n_windows=int(boundary.sum()), max_population=ws.max_population, direction=run.direction,
                n_replicates=run.n_replicates, grid_cell=ws.grid_cell, max_distance=ws.max_distance,
                distance=ws.distance, n_locations=L, n_merged=n_merged, _loc_coords=loc_coords, _loc_cases=loc_count,
                _loc_controls=None, _loc_population=n_loc, _row_ids=ids, _row_loc=row_loc)
