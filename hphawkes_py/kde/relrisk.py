"""Spatial relative risk: case and control intensities with shared bandwidths, the log relative
risk surface, and where it is significantly raised (sparr ``risk``/``tolerance``, spatstat ``relrisk``).

Conventions (Kelsall & Diggle 1995; Davies & Hazelton 2010):

* Cases ``x_1..x_{n1}`` and controls ``y_1..y_{n0}`` in one window.  Every point gets a bandwidth
  ``b_i`` from the **pooled** pattern (cases and controls together) and the edge factor
  ``e_i = 1 / (window mass of N(x_i, b_i^2 I))`` of :mod:`.model`; the same rule serves both
  patterns (sparr's shared pilot).  Fixed: ``b_i = h``.  Adaptive (Brunsdon/Abramson):
  ``b_i = h (pilot(x_i) / g)^(-alpha)`` with the pooled, edge-corrected fixed-``h`` pilot at the
  pooled points and ``g`` its geometric mean; ``alpha = 0.5`` is Abramson's square-root law.
* Intensities ``lambda_1(x) = sum_cases e_i K_{b_i}(x - x_i)``, ``lambda_0`` likewise; densities
  ``f = lambda_1 / n1``, ``g = lambda_0 / n0``.  The **log relative risk** is
  ``rho(x) = log f(x) - log g(x)`` (sparr's ``risk(log=TRUE)``), NaN where either intensity is 0
  (no point within ``cutoff`` bandwidths).
* p-values test ``H0: rho(x) = 0`` against raised risk (upper tail), cell by cell:

  - ``"asymptotic"`` (Hazelton & Davies 2009; adaptive: Davies & Hazelton 2010): under H0,
    ``rho(x) ~ N(0, R(K) (1/n1 + 1/n0) q(x) / (b(x)^2 f_pool(x)))`` with ``R(K) = 1/(4 pi)`` for the
    Gaussian kernel, ``f_pool`` the pooled density estimate, ``b(x)`` the bandwidth at ``x``
    and the edge term ``q(x) = m_{b/sqrt2}(x) / m_b(x)^2`` (``m_s(x)`` = window mass of
    ``N(x, s^2 I)``; 1 without edge correction).  Fixed: ``b = h``, the formula as written.
    Adaptive: the same leading term with the pilot-based bandwidths, evaluated as its kernel-sum
    estimate over the pooled points (each neighbour with its own bandwidth and edge factor) with
    the finite-sample centring: ``Var rho = N^3 / ((N-1) n1 n0) (S2 - T^2/N) / T^2``,
    ``T = sum_i e_i K_{b_i}(x - x_i)``, ``S2 = sum_i e_i^2 K_{b_i}(x - x_i)^2`` -- under H0 (cases
    and controls from one density) the z-scores have unit variance in simulation, where the bare
    ``R(K) q / (b(x)^2 f)`` gives 0.84 at a density peak (see tests);
  - ``"monte_carlo"``: random relabelling of the pooled points into ``n1`` cases and ``n0``
    controls (bandwidths and edge factors unchanged: they depend only on the pooled pattern),
    ``p(x) = (1 + #{r: rho_r(x) >= rho(x)}) / (1 + R)``.

The bandwidth selectors work on the pooled pattern: those of :mod:`.selectors` (Terrell's
oversmoothing bandwidth, as sparr's ``OS``; least-squares cross-validation; Berman & Diggle's),
likelihood cross-validation and the rule of thumb of :mod:`.model`, and Brunsdon's adaptive search
for ``(h, alpha)`` jointly.
"""
from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass, field

import numpy as np

from .._backend import threads_context
from .._parallel import as_executor, run_replicates, spawn_seeds
from .._progress import progress_bar
from .._validate import check_bool, check_in, check_int, check_seed, describe
from . import plot as _plot
from ._coords import _as_points
from ._gis import check_bandwidth_units, check_points_crs, check_search_crs
from ._window import Raster, Window
from .engine import make_engine
from .model import (BANDWIDTH_RANGE, _check_bandwidth, _check_cutoff, _check_inside, _check_run, _check_selected,
                    _check_spread, _check_window, _Objective, rule_of_thumb_bandwidth)
from .model import fit as _fit_kde
from .model import squared_kernel_sum
from .selectors import RK, diggle_bandwidth, lscv_bandwidth, oversmoothing_bandwidth

__all__ = ["relative_risk", "RelativeRisk"]

FIXED_SELECTORS = ("oversmoothing", "lscv", "diggle", "cv", "rule-of-thumb")
#: relabellings per Monte Carlo job (jobs are the unit of work sent to an executor; fixed, so that
#: the p-values do not depend on the executor)
_MC_BATCH = 50


# ---------------------------------------------------------------------------- the estimate
@dataclass(frozen=True, eq=False)
class RelativeRisk:
    """Case and control intensities with shared bandwidths and the log relative risk.

    Returned by :func:`hphawkes_py.kde.relative_risk` (not built by hand); the parameters are also
    its attributes.

    Parameters
    ----------
    method : {"fixed", "adaptive"}
        Fixed or adaptive bandwidths.
    h : float
        Global bandwidth (coordinate units).
    alpha : float or None
        Sensitivity exponent of the adaptive bandwidths (None when fixed).
    selector : str
        How ``h`` (and ``alpha``) were chosen: ``"given"``, ``"oversmoothing"``, ``"lscv"``,
        ``"cv"``, ``"rule-of-thumb"`` or ``"brunsdon"``.
    bandwidths, edge_factors : ndarray (n1 + n0,)
        Per point, cases first.
    cases, controls : ndarray (n1, 2), (n0, 2)
        Copies of the patterns.
    window : Window
        The common study area.
    cutoff : float
        Kernel truncation in bandwidths, as run.
    edge_correction : bool
        Whether the kernels are renormalised over the window, as run.
    backend : str
        Engine that ran (``"cpu"``, ``"gpu"`` or ``"emulator"``).
    dtype : numpy.dtype
        Precision of the kernel sums (float64 or float32).

    Other Parameters
    ----------------
    _factory : callable, optional
        Internal: ``_factory(dtype=...)`` builds an engine for the pooled points and window (set by
        :func:`hphawkes_py.kde.relative_risk`).

    Examples
    --------
    >>> points, mask_path = hp.datasets.load_redwood()
    >>> window = hp.kde.Window.from_asc(mask_path)
    >>> rr = hp.kde.relative_risk(points[:31], points[31:], window, bandwidth=0.15)
    >>> rr.n_cases, rr.n_controls, rr.selector
    (31, 31, 'given')
    >>> print(np.round(rr.log_risk_at([[0.5, 0.5]]), 3))
    [-0.682]
    """

    method: str
    h: float
    alpha: float | None
    selector: str
    bandwidths: np.ndarray = field(repr=False)
    edge_factors: np.ndarray = field(repr=False)
    cases: np.ndarray = field(repr=False)
    controls: np.ndarray = field(repr=False)
    window: Window = field(repr=False)
    cutoff: float
    edge_correction: bool
    backend: str
    dtype: np.dtype = field(default=np.dtype(np.float64), repr=False)
    _factory: object = field(default=None, repr=False, compare=False)
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def n_cases(self) -> int:
        return len(self.cases)

    @property
    def n_controls(self) -> int:
        return len(self.controls)

    def _engine(self):
        if "engine" not in self._cache:
            self._cache["engine"] = self._factory(dtype=self.dtype)
        return self._cache["engine"]

    def _split_weights(self):
        n1 = self.n_cases
        w1 = self.edge_factors.copy()
        w1[n1:] = 0.0
        w0 = self.edge_factors - w1
        return w1, w0

    def intensities_at(self, points, *, threads: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(lambda_1, lambda_0)``: case and control intensities at (q, 2) locations (events per unit area)."""
        q = _as_points(points)
        if threads is not None:
            check_int(threads, "threads", minimum=1)
        eng = self._engine()
        n1 = self.n_cases
        cases, controls = np.arange(n1), np.arange(n1, n1 + self.n_controls)
        with threads_context(threads):
            l1 = eng.intensity_at(q, self.bandwidths[cases], self.edge_factors[cases], sources=cases)
            l0 = eng.intensity_at(q, self.bandwidths[controls], self.edge_factors[controls], sources=controls)
        return l1, l0

    def log_risk_at(self, points, *, threads: int | None = None) -> np.ndarray:
        """``rho(x) = log(lambda_1(x) / n1) - log(lambda_0(x) / n0)`` at (q, 2) locations (NaN where
        an intensity is 0)."""
        l1, l0 = self.intensities_at(points, threads=threads)
        return _log_ratio(l1, l0, self.n_cases, self.n_controls)

    def _cells(self, threads):
        key = "cells"
        if key not in self._cache:
            self._cache[key] = self.intensities_at(self.window.cell_centres(), threads=threads)
        return self._cache[key]

    def _raster(self, v) -> Raster:
        w = self.window
        vals = np.full(w.mask.shape, np.nan)
        vals[w.mask] = v
        return Raster(vals, w.x0, w.y0, w.cell_size, points=None, crs=w.crs)

    def surface(self, kind: str = "log", *, threads: int | None = None) -> Raster:
        """A surface over the window's inside cells (NaN outside).

        kind : ``"log"`` (default) the log relative risk ``rho``; ``"ratio"`` ``exp(rho) = f / g``;
        ``"cases"`` / ``"controls"`` the intensities ``lambda_1`` / ``lambda_0``.
        """
        check_in(kind, "kind", ("log", "ratio", "cases", "controls"))
        l1, l0 = self._cells(threads)
        if kind == "cases":
            return self._raster(l1)
        if kind == "controls":
            return self._raster(l0)
        rho = _log_ratio(l1, l0, self.n_cases, self.n_controls)
        return self._raster(rho if kind == "log" else np.exp(rho))

    def p_values(self, method: str = "asymptotic", *, n_replicates: int = 999, seed=None, executor=None,
                 progress: bool = True, threads: int | None = None) -> Raster:
        """Upper-tail p-value surface of ``H0: rho(x) = 0`` (see the module notes).

        Parameters
        ----------
        method : {"asymptotic", "monte_carlo"}
            ``asymptotic``: normal approximation -- Hazelton & Davies (2009) for fixed bandwidths,
            the local-bandwidth version of Davies & Hazelton (2010) for adaptive ones (see
            ``_asymptotic``; checked by simulation: uniform under H0, close to Monte Carlo).
            ``monte_carlo``: ``n_replicates`` random relabellings of the pooled points.
        n_replicates : int
            Relabellings (``monte_carlo``); p-values are multiples of ``1 / (n_replicates + 1)``.
        seed : None, int, SeedSequence or Generator
            Root of the relabellings' seeds (results do not depend on ``executor``).
        executor : concurrent.futures.Executor or dask Client, optional
            Runs batches of relabellings in parallel.
        progress : bool
            Progress bar over the batches (``monte_carlo``).
        threads : int, optional
            CPU threads (Numba).
        """
        check_in(method, "method", ("asymptotic", "monte_carlo"))
        progress = check_bool(progress, "progress")
        if threads is not None:
            check_int(threads, "threads", minimum=1)
        if method == "asymptotic":
            if n_replicates != 999 or seed is not None or executor is not None:
                raise ValueError('n_replicates=, seed= and executor= are only used with method="monte_carlo"')
            return self._raster(self._asymptotic(threads))
        n_replicates = check_int(n_replicates, "n_replicates", minimum=1, maximum=10**7)
        check_seed(seed)
        as_executor(executor)  # refused before any work
        l1, l0 = self._cells(threads)
        rho = _log_ratio(l1, l0, self.n_cases, self.n_controls)
        sizes = [min(_MC_BATCH, n_replicates - k) for k in range(0, n_replicates, _MC_BATCH)]
        seeds = spawn_seeds(seed, len(sizes))
        job = _McJob(self._factory, self.dtype, self.bandwidths, self.edge_factors, self.n_cases,
                     self.window.cell_centres(), l1 + l0, rho, threads)
        if executor is None:
            # in this process: the resident engine, all relabellings in one call (one GPU launch)
            job._engine = self._engine()
            with progress_bar(total=n_replicates, desc="relabellings", enabled=progress) as bar:
                exceed = _mc_all(sizes, seeds, job)
                bar.update(n_replicates)
        else:
            counts = run_replicates(_mc_batch, sizes, seeds=seeds, executor=executor, progress=progress,
                                    desc="relabellings", args=(job,))
            exceed = np.sum(counts, axis=0)
        p = (1.0 + exceed) / (1.0 + n_replicates)
        p[~np.isfinite(rho)] = np.nan
        return self._raster(p)

    def _asymptotic(self, threads):
        """Upper-tail normal p-values of rho at the inside cells (see the module notes)."""
        l1, l0 = self._cells(threads)
        n1, n0 = self.n_cases, self.n_controls
        rho = _log_ratio(l1, l0, n1, n0)
        if self.method == "adaptive":
            var = self._adaptive_variance(l1 + l0, threads)
        else:
            h = self.h
            f_pool = (l1 + l0) / (n1 + n0)
            q = np.ones_like(f_pool)
            if self.edge_correction:
                centres = self.window.cell_centres()
                with threads_context(threads):
                    eng = make_engine(centres, self.window, self.cutoff, backend=self.backend)
                    m = len(centres)
                    m_h = eng.edge_masses(np.full(m, h))
                    m_h2 = eng.edge_masses(np.full(m, h / math.sqrt(2.0)))
                q = m_h2 / (m_h * m_h)
            with np.errstate(divide="ignore", invalid="ignore"):
                var = RK * (1.0 / n1 + 1.0 / n0) * q / (h * h * f_pool)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = rho / np.sqrt(var)
        from scipy.special import ndtr

        p = ndtr(-z)
        p[~np.isfinite(z)] = np.nan
        return p

    def _adaptive_variance(self, total, threads):
        """Variance of rho at the cells under H0 for adaptive bandwidths (random-labelling form).

        With ``a_i(x) = e_i K_{b_i}(x - x_i)`` over the N pooled points, ``T = sum a_i`` (the pooled
        intensity) and ``S2 = sum a_i^2``: ``Var rho = N^3 / ((N - 1) n1 n0) (S2 - T^2 / N) / T^2``
        (delta method on ``lambda_1`` for n1 labels drawn from N).  ``S2`` is one kernel sum,
        ``K_b(y)^2 = K_{b/sqrt2}(y) / (4 pi b^2)``.  Its leading term ``N S2 / T^2 ~ R(K) q(x) /
        (b(x)^2 f(x))`` is Davies & Hazelton's (2010) adaptive variance; the kernel sum keeps the
        neighbours' own bandwidths and edge factors, and ``- T^2 / N`` the finite-sample centring
        that matters where an adaptive kernel covers a large share of the points.
        """
        n1, n0 = self.n_cases, self.n_controls
        N = n1 + n0
        b, e = self.bandwidths, self.edge_factors
        with threads_context(threads):
            s2, k = squared_kernel_sum(self._engine(), self.window.cell_centres(), b, e)
        t = np.ldexp(total, 2 * k)  # on the scale of s2 (2^(4k)), so that t^2 does not underflow either
        with np.errstate(divide="ignore", invalid="ignore"):
            v = N**3 / ((N - 1.0) * n1 * n0) * (s2 - t * t / N) / (t * t)
        return np.where(v > 0, v, np.nan)

    def tolerance_contours(self, levels=(0.05, 0.01), *, p_values: Raster | None = None, method: str = "asymptotic",
                           ax=None, **kwargs):
        """Draw the log relative risk with tolerance contours of its p-value surface (matplotlib).

        ``levels`` are p-value levels (each in (0, 1)); ``p_values`` a surface from :meth:`p_values`
        (computed with ``method`` and ``**kwargs`` when None).  Returns the Axes; the contour set is
        ``ax.tolerance_contours``.  See :func:`hphawkes_py.kde.plot.plot_tolerance_contours`.
        """
        levels = _check_levels(levels)
        if p_values is None:
            p_values = self.p_values(method, **kwargs)
        elif not isinstance(p_values, Raster) or p_values.values.shape != self.window.mask.shape:
            raise TypeError(f"p_values must be a Raster on the fit's window, got {describe(p_values)}")
        return _plot.plot_tolerance_contours(self.surface("log"), p_values, levels, ax=ax, cases=self.cases,
                                             controls=self.controls)

    def to_dict(self) -> dict:
        return {"method": self.method, "h": self.h, "alpha": self.alpha, "selector": self.selector,
                "n_cases": self.n_cases, "n_controls": self.n_controls, "cutoff": self.cutoff,
                "edge_correction": self.edge_correction, "backend": self.backend, "dtype": str(self.dtype),
                "values": "log relative risk log(f/g), f and g densities (intensity / count)"}

    def summary(self) -> str:
        a = "" if self.alpha is None else f", alpha = {self.alpha:.6g}"
        return (f"Relative risk ({self.method}, {self.selector}; backend={self.backend}): "
                f"{self.n_cases} cases, {self.n_controls} controls, h = {self.h:.6g}{a}")


class _McJob:
    """What a batch of relabellings needs (picklable: the engine is rebuilt in a worker)."""

    def __init__(self, factory, dtype, bws, e, n1, targets, total, rho, threads):
        self.factory, self.dtype, self.bws, self.e, self.n1 = factory, dtype, bws, e, n1
        self.targets, self.total, self.rho, self.threads = targets, total, rho, threads
        self._engine = None

    def __getstate__(self):
        d = dict(self.__dict__)
        d["_engine"] = None
        return d

    def engine(self):
        if self._engine is None:
            self._engine = self.factory(dtype=self.dtype)
        return self._engine


def _mc_picks(size, seedseq, n, k) -> np.ndarray:
    """The smaller group's members in each of ``size`` relabellings (a uniformly random k-subset of
    the pooled points each), from the batch's own seed."""
    rng = np.random.default_rng(seedseq)
    return np.stack([np.sort(rng.permutation(n)[:k]) for _ in range(size)])


def _mc_batch(size, seedseq, job: _McJob) -> np.ndarray:
    """Counts of ``rho_r(x) >= rho(x)`` over ``size`` relabellings (one engine call: the GPU engine
    runs them in one launch)."""
    n = len(job.bws)
    n1, n0 = job.n1, n - job.n1
    picks = _mc_picks(size, seedseq, n, min(n1, n0))
    with threads_context(job.threads):
        return job.engine().relabel_exceed(job.targets, job.bws, job.e, picks, job.total, job.rho, n1, n0,
                                           n1 <= n0)


#: picks (replicates x group size) held at once by a serial Monte Carlo run
_MC_MAX_PICKS = 1 << 24


def _mc_all(sizes, seeds, job: _McJob) -> np.ndarray:
    """Every batch's relabellings (drawn from the batch's seed, as on an executor) in as few engine
    calls as memory allows (one for usual sizes: one GPU launch)."""
    n = len(job.bws)
    n1, n0 = job.n1, n - job.n1
    k = min(n1, n0)
    exceed = np.zeros(len(job.targets), np.int64)
    group: list = []
    held = 0
    with threads_context(job.threads):
        for i, (sz, sd) in enumerate(zip(sizes, seeds)):
            group.append(_mc_picks(sz, sd, n, k))
            held += sz * k
            if held >= _MC_MAX_PICKS or i == len(sizes) - 1:
                exceed += job.engine().relabel_exceed(job.targets, job.bws, job.e, np.concatenate(group), job.total,
                                                      job.rho, n1, n0, n1 <= n0)
                group, held = [], 0
    return exceed


def _log_ratio(l1, l0, n1, n0):
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.log(l1 / n1) - np.log(l0 / n0)
    rho[~((l1 > 0) & (l0 > 0))] = np.nan
    return rho


def _check_levels(levels):
    if isinstance(levels, numbers.Real) and not isinstance(levels, bool):
        levels = (levels,)
    if not isinstance(levels, (tuple, list, np.ndarray)) or len(levels) == 0:
        raise TypeError(f"levels must be p-value levels in (0, 1), got {describe(levels)}")
    out = []
    for i, v in enumerate(levels):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not 0 < float(v) < 1:
            raise ValueError(f"levels[{i}] must be a p-value level in (0, 1), got {v!r}")
        out.append(float(v))
    return tuple(sorted(out))


def _check_bandwidth_choice(bandwidth, alpha, method: str, window: Window):
    """``(bandwidth, alpha)`` of :func:`relative_risk`, checked: a selector name allowed for ``method``
    (on a window whose CRS measures distances) or a positive bandwidth in the window's units, and
    ``alpha`` only where it is not chosen by a search."""
    if isinstance(bandwidth, str):
        allowed = FIXED_SELECTORS + (("brunsdon",) if method == "adaptive" else ())
        check_in(bandwidth, "bandwidth", allowed)
        check_search_crs(window, f"bandwidth={bandwidth!r} (a bandwidth selector)")
    elif isinstance(bandwidth, bool) or not isinstance(bandwidth, numbers.Real):
        raise TypeError(f"bandwidth must be a positive number or a selector name, got {describe(bandwidth)}")
    else:
        bandwidth = _check_bandwidth(bandwidth)
        check_bandwidth_units(window, bandwidth)
    if alpha is not None:
        if method != "adaptive":
            raise ValueError('alpha= is only used with method="adaptive"')
        if bandwidth == "brunsdon":
            raise ValueError('alpha= is chosen by the search with bandwidth="brunsdon"; give a bandwidth to fix it')
        if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real):
            raise TypeError(f"alpha must be a finite real number >= 0, got {describe(alpha)}")
        if not (math.isfinite(alpha) and alpha >= 0):
            why = "; a negative alpha would widen the kernels where the pilot is high" if alpha < 0 else ""
            raise ValueError(f"alpha must be a finite real number >= 0 (the sensitivity of the adaptive bandwidths: "
                             f"0 gives the fixed bandwidth h, 0.5 Abramson's square-root law), got {alpha!r}{why}")
        alpha = float(alpha)
    return bandwidth, alpha


def _check_adaptive_bandwidths(bws, h, alpha):
    """Refuse adaptive bandwidths outside ``BANDWIDTH_RANGE`` (a large ``alpha`` raises the pilot's
    ratios to a power that over- or underflows), naming ``alpha`` and ``h``."""
    lo, hi = BANDWIDTH_RANGE
    if not (np.all(bws >= lo) and np.all(bws <= hi)):
        bad = bws[~((bws >= lo) & (bws <= hi))]
        raise ValueError(
            f"alpha={alpha!r} with h={h!r} gives adaptive bandwidths from {float(np.min(bws)):.3g} to "
            f"{float(np.max(bws)):.3g} ({len(bad)} outside [{lo:g}, {hi:g}], where the Gaussian kernel's constants "
            "over- or underflow in float64); use a smaller alpha"
        )


def _select_bandwidth(bandwidth, alpha, pooled, n1: int, n0: int, window: Window, *, edge_correction, cutoff,
                      progress, backend, dtype):
    """``(h, alpha)`` of :func:`relative_risk`: the given bandwidth, or the selector's on the pooled
    pattern (``alpha`` as given, except with ``"brunsdon"``, whose search chooses it)."""
    if bandwidth == "brunsdon":
        f = _fit_kde(pooled, window, method="adaptive", edge_correction=edge_correction, cutoff=cutoff,
                     progress=progress, backend=backend, threads=None, dtype=dtype)
        return f.h, f.alpha
    if bandwidth == "oversmoothing":
        h = oversmoothing_bandwidth(pooled, n=math.sqrt(n1 * n0))
    elif bandwidth == "lscv":
        h = lscv_bandwidth(pooled, backend=backend)
    elif bandwidth == "diggle":
        h = diggle_bandwidth(pooled, window)
    elif bandwidth == "cv":
        h = _fit_kde(pooled, window, method="cv", edge_correction=edge_correction, cutoff=cutoff,
                     progress=progress, backend=backend, dtype=dtype).h
    elif bandwidth == "rule-of-thumb":
        h = rule_of_thumb_bandwidth(pooled)
    else:
        h = bandwidth
    return h, alpha


def relative_risk(
    cases,
    controls,
    window: Window,
    *,
    method: str = "fixed",
    bandwidth="oversmoothing",
    alpha: float | None = None,
    edge_correction: bool = True,
    cutoff: float = 3.0,
    progress: bool = True,
    backend: str = "auto",
    threads: int | None = None,
    dtype=np.float64,
    points_crs=None,
) -> RelativeRisk:
    """Kernel estimate of the spatial log relative risk of cases against controls.

    Parameters
    ----------
    cases, controls : array (n1, 2), (n0, 2)
        Locations, each pattern with at least 2 points, all inside ``window``.
    window : Window
        The common study area (both patterns are observed in it).
    method : {"fixed", "adaptive"}
        Fixed bandwidth, or adaptive bandwidths from the pooled pilot (see the module notes).
    bandwidth : float or str
        ``method="fixed"``: a bandwidth (coordinate units) or a selector on the pooled pattern:
        ``"oversmoothing"`` (default; Terrell, with ``n`` the geometric mean of n1 and n0 as in
        Davies & Hazelton 2010), ``"lscv"``, ``"diggle"`` (Berman-Diggle, spatstat's
        ``bw.diggle``), ``"cv"`` (likelihood CV), ``"rule-of-thumb"``.
        ``method="adaptive"``: the global bandwidth ``h`` (a number or one of the selectors above,
        with ``alpha``), or ``"brunsdon"`` to choose ``(h, alpha)`` jointly by Brunsdon's
        likelihood search on the pooled pattern (:func:`hphawkes_py.kde.fit`).
    alpha : float, optional
        Sensitivity of the adaptive bandwidths ``b_i = h (pilot_i / g)^(-alpha)``
        (``method="adaptive"``; default 0.5, Abramson's square-root law; chosen by the search with
        ``bandwidth="brunsdon"``).  Any finite ``alpha >= 0``: 0 gives the fixed bandwidth ``h``,
        larger values narrow the kernels more where the pilot is high (Brunsdon's search may choose
        values above 1); a negative alpha, which would widen them there, is refused.
    edge_correction : bool
        Renormalise each kernel to unit mass over the window.
    cutoff : float
        Kernel truncation in bandwidths (``inf`` = none, as spatstat and sparr).
    progress : bool
        Progress bar of the bandwidth search (``"cv"``, ``"brunsdon"``).
    backend, threads, dtype :
        As :func:`hphawkes_py.kde.fit`.
    points_crs : str, int or CRS, optional
        The CRS of ``cases`` and ``controls``, checked against ``window.crs`` (a different CRS is
        refused naming both; nothing is reprojected silently -- see
        :func:`hphawkes_py.kde.reproject_points`).

    Returns
    -------
    RelativeRisk
        ``.surface()``, ``.p_values(...)``, ``.tolerance_contours(levels)``.

    Examples
    --------
    Cases and controls drawn at random from one pattern (a random half each), so that the true
    log relative risk is 0 everywhere:

    >>> points, mask_path = hp.datasets.load_redwood()
    >>> window = hp.kde.Window.from_asc(mask_path)
    >>> is_case = np.random.default_rng(1).random(len(points)) < 0.5
    >>> rr = hp.kde.relative_risk(points[is_case], points[~is_case], window)
    >>> rr.selector, round(rr.h, 3)
    ('oversmoothing', 0.167)
    >>> surface = rr.surface()
    >>> surface.values.shape
    (128, 128)
    >>> round(float(np.nanmax(np.abs(surface.values))), 1)
    1.3
    """
    x1 = _as_points(cases, "cases", copy=True)
    x0 = _as_points(controls, "controls", copy=True)
    for name, x in (("cases", x1), ("controls", x0)):
        if len(x) < 2:
            raise ValueError(f"{name} needs at least 2 points, got {len(x)}")
    _check_window(window)
    check_points_crs(points_crs, window)
    if not isinstance(method, str):
        raise TypeError(f"method must be 'fixed' or 'adaptive', got {describe(method)}")
    check_in(method, "method", ("fixed", "adaptive"))
    cutoff = _check_cutoff(cutoff)
    edge_correction = check_bool(edge_correction, "edge_correction")
    progress, dtype, threads, resolved = _check_run(progress, dtype, threads, backend)
    _check_inside(x1, window, "cases")
    _check_inside(x0, window, "controls")
    pooled = np.vstack([x1, x0])
    n1, n0 = len(x1), len(x0)
    n = n1 + n0
    bandwidth, alpha = _check_bandwidth_choice(bandwidth, alpha, method, window)
    if isinstance(bandwidth, str) and bandwidth != "brunsdon":
        _check_spread(pooled, "pooled points")
    x1.flags.writeable = False
    x0.flags.writeable = False
    factory = functools.partial(make_engine, pooled, window, cutoff, backend=resolved)
    selector = bandwidth if isinstance(bandwidth, str) else "given"
    with threads_context(threads):
        h, alpha = _select_bandwidth(bandwidth, alpha, pooled, n1, n0, window, edge_correction=edge_correction,
                                     cutoff=cutoff, progress=progress, backend=resolved, dtype=dtype)
        if selector != "given":
            _check_selected(h, pooled, f"the bandwidth selected by {selector!r}", "the pooled points")
        engine = factory(dtype=dtype)
        obj = _Objective(engine, n, edge_correction)
        if method == "adaptive":
            if alpha is None:
                alpha = 0.5
            with np.errstate(over="ignore", under="ignore"):  # refused just below
                bws = obj.adaptive_bandwidths(h, alpha)
            _check_adaptive_bandwidths(bws, h, alpha)
            try:
                e = obj.weights(bws)
            except ValueError as exc:  # a kernel with no mass in the window: say which alpha made it
                raise ValueError(f"alpha={alpha!r} with h={h!r}: {exc}") from None
        else:
            alpha = None
            bws = np.full(n, float(h))
            e = obj.weights(bws)
    result = RelativeRisk(method=method, h=float(h), alpha=None if alpha is None else float(alpha),
                          selector=selector, bandwidths=np.asarray(bws, float), edge_factors=np.asarray(e, float),
                          cases=x1, controls=x0, window=window, cutoff=cutoff, edge_correction=edge_correction,
                          backend=engine.backend, dtype=dtype, _factory=factory)
    result._cache["engine"] = engine
    return result
