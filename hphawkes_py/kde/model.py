"""Kernel density (intensity) estimation with edge correction and bandwidth selection.

Written once against an engine (:class:`.cpu.CpuEngine` or :class:`.gpu.GpuEngine`, built by
:func:`.engine.make_engine`) that owns the hot sums.  Conventions (Zhang, Zhu & Huang 2017, following Brunsdon 1995):

* Kernel: isotropic Gaussian ``K_b(d) = exp(-|d|^2 / (2 b^2)) / (2 pi b^2)``, cut at
  ``cutoff x b`` (``b`` = the bandwidth of the point the kernel is centred on).
* **Values are intensities** (expected events per unit area; no ``1/n``):
  ``lambda(x) = sum_j e_j K_{b_j}(x - x_j)``.  With edge correction each kernel is renormalised
  to unit mass over the window, so the surface integrates over the window to about ``n``
  (exactly ``n`` up to the cutoff truncation and the cell-centre discretisation); divide by
  ``n`` for a probability density.
* Edge factor ``e_j = 1 / (mass of the untruncated N(x_j, b_j^2 I) over the window's cells)``
  (exact cell integrals), computed only for points within ``7.5 b_j`` of the outside (elsewhere
  the missing mass is below 1e-12 and ``e_j = 1`` exactly).
* Leave-one-out log-likelihood ``sum_i log lambda_{-i}(x_i)`` (``-inf`` when a point has no
  neighbour within reach).
* Adaptive (Brunsdon): pilot = inclusive fixed-bandwidth estimate at the global ``h`` (edge
  corrected), ``lambda_i = (pilot_i / g)^(-alpha)``, ``g`` = geometric mean of the pilot,
  ``b_i = h lambda_i``; ``(h, alpha)`` maximise the leave-one-out log-likelihood by a pattern
  search from ``(h0, 0.5)`` with steps ``(h0/10, 0.1)``: evaluate the four axis neighbours, move to
  the best if it improves, otherwise halve both steps; stop when both steps are below 1/20 of their
  start or after 30 iterations.  The search stays in ``h > 0``, ``alpha >= 0`` (a candidate outside
  counts as log-likelihood ``-inf``): ``alpha = 0`` is the fixed bandwidth ``h``.
* Fixed-bandwidth likelihood cross-validation: golden-section search of the leave-one-out
  log-likelihood over ``[h0/10, 4 h0]``.
"""
from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from .._backend import resolve_backend, threads_context
from .._progress import progress_bar
from .._validate import as_float_array, check_bool, check_dtype, check_in, check_int, check_positive, describe
from ._gis import as_crs, check_bandwidth_units, check_points_crs, check_search_crs
from ._coords import _as_points
from ._window import Raster, Window
from .engine import make_engine

__all__ = ["fit", "KDEFit", "rule_of_thumb_bandwidth", "squared_kernel_sum", "METHODS"]

METHODS = ("adaptive", "abramson", "cv", "rule-of-thumb", "fixed")
_MAX_ITER = 30
_GOLDEN_RTOL = 1e-5  # golden-section stops when the bracket is below this fraction of h0

#: bandwidths outside this range make 1 / (2 b^2) or the kernel constant over/underflow in float64
BANDWIDTH_RANGE = (1e-150, 1e150)


def _check_bandwidth(value, name: str = "bandwidth") -> float:
    """A bandwidth: a finite real number in ``BANDWIDTH_RANGE`` (coordinate units)."""
    v = check_positive(value, name)
    lo, hi = BANDWIDTH_RANGE
    if not lo <= v <= hi:
        raise ValueError(f"{name} must be in [{lo:g}, {hi:g}] (coordinate units), got {v!r}: outside it the "
                         "Gaussian kernel's constants over- or underflow in float64")
    return v


def _check_cutoff(cutoff) -> float:
    """A kernel truncation in bandwidths: a real number > 0, ``inf`` allowed (no truncation)."""
    return check_positive(cutoff, "cutoff", finite=False)


def _check_run(progress, dtype, threads, backend):
    """The run settings every entry point shares, checked in one place; the backend is resolved
    here, once per public call."""
    if threads is not None:
        check_int(threads, "threads", minimum=1)
    return check_bool(progress, "progress"), check_dtype(dtype), threads, resolve_backend(backend)


#: the spread of a pattern must exceed this many float64 roundings of its coordinates
_SPREAD_ULPS = 1024.0


def _spread(p: np.ndarray) -> tuple[float, float]:
    """(standard distance, magnitude of the coordinates) of a pattern."""
    with np.errstate(over="ignore"):  # inf for coordinates whose squares overflow: refused by the callers
        sd = math.sqrt(float(np.mean(np.sum((p - p.mean(axis=0)) ** 2, axis=1))))
    return sd, float(np.abs(p).max())


def _check_spread(p: np.ndarray, name: str = "points") -> float:
    """Refuse a pattern whose points (all but rounding noise) coincide; return its standard distance.

    Scale-aware: the standard distance is compared with the float64 resolution of the coordinates
    (``eps x max |coordinate|``), so coincident points are caught in any unit, while a genuinely
    tiny pattern far from the origin (spread above ~1e-13 of the coordinates) is accepted.
    """
    sd, scale = _spread(p)
    if not sd > _SPREAD_ULPS * np.finfo(np.float64).eps * scale:
        raise ValueError(
            f"all {len(p)} {name} coincide (standard distance {sd:.3g} at coordinates of magnitude {scale:.3g}, "
            "below the float64 resolution): a data-driven bandwidth is undefined; check the data, or give "
            'method="fixed" with bandwidth='
        )
    return sd


def _check_selected(h: float, p: np.ndarray, how: str, name: str = "points") -> float:
    """A bandwidth chosen from the data (``how``), refused outside ``BANDWIDTH_RANGE`` (or not
    finite, when the coordinates' squares overflow) with the coordinates' magnitude named."""
    lo, hi = BANDWIDTH_RANGE
    if not lo <= h <= hi:
        raise ValueError(
            f"{how} is {h!r} for {name} with coordinates of magnitude up to {float(np.abs(p).max()):.3g}: outside "
            f"[{lo:g}, {hi:g}] (coordinate units) the Gaussian kernel's constants over- or underflow in float64; "
            "rescale the coordinates (e.g. to kilometres)"
        )
    return h


def rule_of_thumb_bandwidth(points) -> float:
    """Rule-of-thumb bandwidth ``h0 = (2 / (3 n))^(1/4) * SD`` (Zhang et al. 2017, Brunsdon 1995).

    ``SD`` is the standard distance ``sqrt((1/n) sum_i |x_i - mean centre|^2)``.
    Coincident points (a spread at the rounding level of the coordinates) are refused.

    Parameters
    ----------
    points : array_like of shape (n, 2)
        Event locations (x, y), n >= 2.

    Returns
    -------
    float
        The bandwidth ``h0`` (coordinate units).

    Examples
    --------
    >>> points, _ = hp.datasets.load_redwood()
    >>> round(hp.kde.rule_of_thumb_bandwidth(points), 4)
    0.1231
    """
    p = _as_points(points)
    n = len(p)
    if n < 2:
        raise ValueError(f"the rule-of-thumb bandwidth needs at least 2 points, got {n}")
    return (2.0 / (3.0 * n)) ** 0.25 * _check_spread(p)


def _default_window(p: np.ndarray) -> Window:
    xmin, ymin = p.min(axis=0)
    xmax, ymax = p.max(axis=0)
    side = max(xmax - xmin, ymax - ymin)
    if side <= 0:
        raise ValueError("all points coincide: cannot build a default window (pass window=)")
    cs = side / 256.0
    return Window.rectangle(xmin, xmin + max(xmax - xmin, cs), ymin, ymin + max(ymax - ymin, cs), cs)


def _check_window(window) -> Window:
    if not isinstance(window, Window):
        raise TypeError(f"window must be a hphawkes_py.kde.Window, got {type(window).__name__}")
    return window


def _check_inside(p: np.ndarray, window: Window, what="points") -> None:
    inside = window.contains(p)
    if not inside.all():
        bad = np.flatnonzero(~inside)
        i = int(bad[0])
        raise ValueError(
            f"{len(bad)} of {len(p)} {what} lie outside the window (NODATA cells or beyond the raster "
            f"{window.extent}); the first is {what}[{i}] = ({float(p[i, 0])!r}, {float(p[i, 1])!r}). "
            "Remove them or use a window that covers them."
        )


@dataclass(frozen=True, eq=False)
class KDEFit:
    """A fitted (edge-corrected, possibly adaptive) Gaussian kernel intensity estimate.

    Returned by :func:`hphawkes_py.kde.fit` (not built by hand); the parameters are also its
    attributes.

    Parameters
    ----------
    h : float
        Global bandwidth (coordinate units).
    alpha : float or None
        Brunsdon's sensitivity exponent (None unless ``method="adaptive"``; 0.5 for ``"abramson"``).
    bandwidths : ndarray (n,)
        Per-point bandwidths ``b_i`` (all ``h`` for a fixed bandwidth), coordinate units.
    edge_factors : ndarray (n,)
        ``e_i = 1 / window mass of point i's kernel`` (>= 1; all 1 without edge correction).
    log_likelihood : float
        Leave-one-out log-likelihood ``sum_i log lambda_{-i}(x_i)`` at the selected parameters
        (intensity units: log of events per unit area).
    n_iter : int
        Search iterations (pattern-search iterations or golden-section steps; 0 otherwise).
    method : str
        The bandwidth method of :func:`hphawkes_py.kde.fit`.
    trace : tuple of dict
        Every evaluated parameter set in order, with its log-likelihood (and the steps).
    backend : str
        Engine that ran (``"cpu"``, ``"gpu"`` or ``"emulator"``).
    h0 : float
        Rule-of-thumb bandwidth (the search's starting point).
    cutoff : float
        Kernel truncation in bandwidths, as passed.
    edge_correction : bool
        Whether the kernels are renormalised over the window, as passed.
    points : ndarray (n, 2)
        A copy of the sample points (the caller's array is never kept).
    window : Window
        The study area.
    dtype : numpy.dtype
        Precision of the kernel sums (float64 or float32).
    point_weights : ndarray (n,) or None
        The point weights (None: every point counts once).

    Other Parameters
    ----------------
    _factory : callable, optional
        Internal: ``_factory(dtype=...)`` builds an engine for the fit's points and window (set by
        :func:`hphawkes_py.kde.fit`).

    Examples
    --------
    >>> points, mask_path = hp.datasets.load_redwood()
    >>> fit = hp.kde.fit(points, hp.kde.Window.from_asc(mask_path), method="fixed", bandwidth=0.1)
    >>> fit.n, fit.h, fit.alpha
    (62, 0.1, None)
    >>> round(float(fit.density_at([[0.5, 0.5]])[0]), 2)
    52.55
    """

    h: float
    alpha: float | None
    bandwidths: np.ndarray = field(repr=False)
    edge_factors: np.ndarray = field(repr=False)
    log_likelihood: float
    n_iter: int
    method: str
    trace: tuple = field(repr=False)
    backend: str
    h0: float
    cutoff: float
    edge_correction: bool
    points: np.ndarray = field(repr=False)
    window: Window = field(repr=False)
    dtype: np.dtype = field(default=np.dtype(np.float64), repr=False)
    #: point weights (None: every point counts once)
    point_weights: np.ndarray | None = field(default=None, repr=False)
    #: builds an engine for the fit's points and window: ``_factory(dtype=...)`` (picklable)
    _factory: object = field(default=None, repr=False, compare=False)
    _engines: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def n(self) -> int:
        return len(self.points)

    @property
    def weights(self) -> np.ndarray:
        """The weight of each point's kernel: ``e_i`` times the point weight (if any)."""
        return self.edge_factors if self.point_weights is None else self.edge_factors * self.point_weights

    def _engine(self, dtype):
        # the edge factors are stored, so the fit's window serves every target window
        if dtype not in self._engines:
            self._engines[dtype] = self._factory(dtype=dtype)
        return self._engines[dtype]

    def _run(self, threads, dtype):
        if threads is not None:
            check_int(threads, "threads", minimum=1)
        return threads, self.dtype if dtype is None else check_dtype(dtype)

    def density_at(self, points, *, threads: int | None = None, dtype=None) -> np.ndarray:
        """Intensity ``lambda(x) = sum_j e_j K_{b_j}(x - x_j)`` at (q, 2) locations (events per unit area).

        Not restricted to the window (locations outside get the same formula). Divide by ``n`` for a
        probability density.  ``dtype`` (default: the fit's) is the precision of the kernel sums;
        ``threads`` the CPU threads (Numba).
        """
        q = _as_points(points, "points")
        threads, dtype = self._run(threads, dtype)
        with threads_context(threads):
            return self._engine(dtype).intensity_at(q, self.bandwidths, self.weights)

    def density_surface(self, window: Window | None = None, *, threads: int | None = None, dtype=None) -> Raster:
        """Intensity at the centre of every inside cell of ``window`` (default: the fit's window).

        Returns a :class:`Raster` with NaN outside; ``Raster.integral()`` is about ``n`` (see module notes).
        ``dtype`` (default: the fit's) is the precision of the kernel sums; ``threads`` the CPU threads.
        """
        w = self.window if window is None else _check_window(window)
        threads, dtype = self._run(threads, dtype)
        vals = np.full(w.mask.shape, np.nan)
        with threads_context(threads):
            vals[w.mask] = self._engine(dtype).intensity_at(w.cell_centres(), self.bandwidths, self.weights)
        return Raster(vals, w.x0, w.y0, w.cell_size, points=self.points, crs=w.crs)

    def standard_error_surface(self, window: Window | None = None, *, threads: int | None = None) -> Raster:
        """Pointwise standard error of the intensity over ``window`` (default: the fit's), NaN outside.

        For a Poisson process the kernel sum ``lambda(x) = sum_j e_j K_{b_j}(x - x_j)`` has variance
        ``int e(y)^2 K(x - y)^2 lambda(y) dy``, estimated by ``sum_j e_j^2 K_{b_j}(x - x_j)^2``
        (conditional on the bandwidths and edge factors; exact in that sense for a fixed bandwidth).
        Computed as one kernel sum, since ``K_b(d)^2 = K_{b/sqrt2}(d) / (4 pi b^2)``, with the same
        truncation (``cutoff`` bandwidths ``b``).  Events per unit area.
        """
        w = self.window if window is None else _check_window(window)
        if threads is not None:
            check_int(threads, "threads", minimum=1)
        key = ("se", self.dtype)
        if key not in self._engines:
            cut = self.cutoff * math.sqrt(2.0)  # same support in units of b / sqrt2
            self._engines[key] = make_engine(self.points, self.window, cut, backend=self.backend, dtype=self.dtype)
        vals = np.full(w.mask.shape, np.nan)
        with threads_context(threads):
            var, k = squared_kernel_sum(self._engines[key], w.cell_centres(), self.bandwidths, self.weights)
        vals[w.mask] = np.ldexp(np.sqrt(var), -2 * k)
        return Raster(vals, w.x0, w.y0, w.cell_size, points=self.points, crs=w.crs)

    def to_dict(self) -> dict:
        return {
            "method": self.method,
            "h": self.h,
            "alpha": self.alpha,
            "h0": self.h0,
            "log_likelihood": self.log_likelihood,
            "n_iter": self.n_iter,
            "n": self.n,
            "cutoff": self.cutoff,
            "edge_correction": self.edge_correction,
            "backend": self.backend,
            "dtype": str(self.dtype),
            "weighted": self.point_weights is not None,
            "values": "intensity (events per unit area; surface integrates to about n)",
        }

    def trace_frame(self):
        import pandas as pd

        return pd.DataFrame(list(self.trace))

    def summary(self) -> str:
        b = self.bandwidths
        lines = [
            f"KDE fit ({self.method}, backend={self.backend}), n = {self.n}",
            f"  h = {self.h:.6g}" + (f", alpha = {self.alpha:.6g}" if self.alpha is not None else "")
            + f"  (rule of thumb h0 = {self.h0:.6g})",
            f"  bandwidths: min {b.min():.4g}, median {np.median(b):.4g}, max {b.max():.4g}",
            f"  edge factors: {int((self.edge_factors > 1).sum())} points > 1, max {self.edge_factors.max():.4g}",
            f"  leave-one-out log-likelihood = {self.log_likelihood:.6f}  ({self.n_iter} iterations)",
        ]
        return "\n".join(lines)


def squared_kernel_sum(engine, targets, bws, weights) -> tuple[np.ndarray, int]:
    """``(S, k)`` with ``S = 2^(4k) sum_j w_j^2 K_{b_j}(x - x_j)^2`` at the (q, 2) ``targets``.

    One kernel sum, since ``K_b(d)^2 = K_{b/sqrt2}(d) / (4 pi b^2)``; the kernels' squares scale as
    ``1 / b^4``, which under- or overflows float64 for bandwidths far from 1 (``b = 1e100`` gives
    ``1e-400``), so the sum is taken scaled by ``2^(4k)``, ``2^k`` about the median bandwidth.  A
    power of two scales every product and quotient exactly: where the unscaled sum is representable,
    ``S = 2^(4k)`` times it, bit for bit (``sqrt(S) / 2^(2k)`` is then its square root, bit for bit).

    Parameters
    ----------
    engine : Engine
        Built on the sources (its cut-off applies to the bandwidths ``b / sqrt2``).
    targets : ndarray (q, 2)
        Where to sum (coordinate units).
    bws, weights : ndarray (n,)
        Each source's bandwidth ``b_j`` (coordinate units) and kernel weight ``w_j``.

    Returns
    -------
    S : ndarray (q,)
        The scaled sum (events^2 per unit area^2, times ``2^(4k)``).
    k : int
        The scale's exponent.

    Examples
    --------
    >>> from hphawkes_py.kde.engine import make_engine
    >>> from hphawkes_py.kde.model import squared_kernel_sum
    >>> pts = np.array([[0.4, 0.5], [0.6, 0.5]])
    >>> eng = make_engine(pts, hp.kde.Window.rectangle(0, 1, 0, 1, 0.1), np.inf, backend="cpu")
    >>> s, k = squared_kernel_sum(eng, np.array([[0.5, 0.5]]), np.full(2, 0.1), np.ones(2))
    >>> k, round(float(np.ldexp(s, -4 * k)[0]), 6)  # 2 (exp(-1/2) / (2 pi 0.1^2))^2
    (-3, 186.369902)
    """
    b = np.asarray(bws, dtype=np.float64)
    k = math.frexp(float(np.median(b)))[1]
    # (w^2 / (4 pi b^2)) 2^(4k), in two exact steps of 2^(2k) (2^(4k) alone may not be a float64)
    w = np.ldexp(np.ldexp(np.asarray(weights, dtype=np.float64) ** 2, 2 * k) / (4.0 * math.pi * b * b), 2 * k)
    return engine.intensity_at(targets, b / math.sqrt(2.0), w), k


class _Objective:
    """Leave-one-out log-likelihood for fixed and adaptive bandwidths on one engine.

    ``point_weights`` (optional, > 0): point i counts as ``point_weights[i]`` events in every kernel
    sum, in the likelihood ``sum_i w_i log lambda_{-i}(x_i)`` and in the pilot's geometric mean.
    """

    #: adaptive evaluations kept by (h, alpha): the pattern search evaluates the previous centre
    #: again after every accepted move (a quarter of the sim50000 search's evaluations)
    _CACHE_SIZE = 8

    def __init__(self, engine, n, edge_correction, point_weights=None):
        self.eng = engine
        self.n = n
        self.edge = edge_correction
        self.pw = point_weights
        self.evaluations = 0
        self._pilot_cache: dict = {}
        self._adaptive_cache: dict = {}

    def weights(self, bws):
        """Edge factors ``e_i`` (all 1 without edge correction)."""
        for _, cached_bws, cached_w in self._adaptive_cache.values():
            if cached_bws is bws:  # the bandwidths of a cached evaluation: same edge factors
                return cached_w
        if not self.edge:
            return np.ones(self.n)
        m = self.eng.edge_masses(bws)
        if not np.all(m > 0):
            i = int(np.argmin(m))
            raise ValueError(
                f"edge correction impossible: the kernel of point {i} (bandwidth {float(bws[i]):.6g}) has no "
                f"representable mass inside the window (extent {self.eng.window.extent}); the bandwidth is far "
                "too large (or too small) for the window -- use a bandwidth on the scale of the study area"
            )
        return 1.0 / m

    def kernel_weights(self, e):
        """The weight of each point's kernel: ``e_i`` times the point weight."""
        return e if self.pw is None else e * self.pw

    def loglik(self, bws, w=None):
        if w is None:
            w = self.weights(bws)
        return self._loglik_of(self.eng.point_intensities(bws, self.kernel_weights(w), loo=True))

    def _loglik_of(self, dens):
        """The leave-one-out log-likelihood of the intensities ``dens`` at the points."""
        self.evaluations += 1
        if np.any(dens <= 0):
            return -math.inf
        if self.pw is None:
            return float(np.sum(np.log(dens)))
        return float(np.sum(self.pw * np.log(dens)))

    def centred_log_pilot(self, h):
        # the pattern search evaluates (h, alpha +- step) at the same h: cache the pilot by h
        if h not in self._pilot_cache:
            if len(self._pilot_cache) > 8:
                self._pilot_cache.pop(next(iter(self._pilot_cache)))
            hs = np.full(self.n, h)
            logp = np.log(self.eng.point_intensities(hs, self.kernel_weights(self.weights(hs)), loo=False))
            centre = logp.mean() if self.pw is None else float(np.sum(self.pw * logp) / np.sum(self.pw))
            self._pilot_cache[h] = logp - centre
        return self._pilot_cache[h]

    def adaptive_bandwidths(self, h, alpha):
        """Brunsdon: b_i = h (pilot_i / g)^(-alpha), pilot = inclusive edge-corrected fixed-h estimate."""
        return h * np.exp(-alpha * self.centred_log_pilot(h))

    def adaptive_loglik(self, h, alpha):
        """(leave-one-out log-likelihood, bandwidths) at (h, alpha); repeated (h, alpha) come from a
        small cache (the same floats give the same result, so the search is unchanged)."""
        return self.adaptive_logliks([(h, alpha)])[0]

    def adaptive_logliks(self, cands):
        """:meth:`adaptive_loglik` of every (h, alpha) of ``cands`` (a pattern-search iteration's
        candidates): the kernel sums of the ones not cached go to the engine together, so that the CPU
        engine walks its grid once for two of them."""
        done = {}
        todo = []
        for key in cands:
            # the search stays in h > 0 and alpha >= 0 (a negative alpha would widen the kernels
            # where the pilot is high, the opposite of adaptive smoothing)
            if not (key[0] > 0 and key[1] >= 0):
                done[key] = (-math.inf, None)
            elif key in self._adaptive_cache:
                done[key] = self._adaptive_cache[key][:2]
            elif key not in todo:
                todo.append(key)
        bws = [self.adaptive_bandwidths(h, alpha) for h, alpha in todo]
        ws = [self.weights(b) for b in bws]
        dens = self.eng.point_intensities_many([(b, self.kernel_weights(w)) for b, w in zip(bws, ws)], loo=True)
        for key, b, w, d in zip(todo, bws, ws, dens):
            ll = self._loglik_of(d)
            done[key] = (ll, b)
            if self._CACHE_SIZE > 0:
                if len(self._adaptive_cache) >= self._CACHE_SIZE:
                    self._adaptive_cache.pop(next(iter(self._adaptive_cache)))
                self._adaptive_cache[key] = (ll, b, w)
        return [done[key] for key in cands]


def _golden(f, a, b, tol, trace, bar=None):
    gr = (math.sqrt(5.0) - 1.0) / 2.0
    c = b - gr * (b - a)
    d = a + gr * (b - a)
    fc, fd = f(c), f(d)
    trace.extend([{"h": c, "log_likelihood": fc}, {"h": d, "log_likelihood": fd}])
    it = 0
    while b - a > tol and it < 200:
        it += 1
        if fc > fd:  # (both -inf: move right, -inf comes from too small bandwidths)
            b, d, fd = d, c, fc
            c = b - gr * (b - a)
            fc = f(c)
            trace.append({"h": c, "log_likelihood": fc})
        else:
            a, c, fc = c, d, fd
            d = a + gr * (b - a)
            fd = f(d)
            trace.append({"h": d, "log_likelihood": fd})
        if bar is not None:
            bar.update(1)
            bar.set_postfix(h=f"{0.5 * (a + b):.4g}")
    return 0.5 * (a + b), it


def _duplicates(p):
    """(number of points equal to an earlier one, the smallest duplicated point) of an (n, 2) float64
    array, as ``np.unique(p, axis=0, return_counts=True)`` gives them (rows in (x, y) order, -0.0 ==
    0.0), sorting the rows as complex numbers (one 1-D sort in place of a lexicographic row sort)."""
    z = np.sort(np.ascontiguousarray(p, dtype=np.float64).view(np.complex128).ravel())
    same = z[1:] == z[:-1]
    n_dup = int(np.count_nonzero(same))
    if n_dup == 0:
        return 0, None
    first = z[1:][np.argmax(same)]
    return n_dup, (first.real, first.imag)


def fit(
    points,
    window: Window | None = None,
    *,
    method: str = "adaptive",
    bandwidth: float | None = None,
    weights=None,
    edge_correction: bool = True,
    cutoff: float = 3.0,
    progress: bool = True,
    backend: str = "auto",
    threads: int | None = None,
    dtype=np.float64,
    points_crs=None,
) -> KDEFit:
    """Fit a Gaussian kernel intensity estimate to a planar point pattern.

    Parameters
    ----------
    points : array (n, 2)
        Event locations (x, y), n >= 3, all inside ``window``.
    window : Window, optional
        Study area; default the points' bounding box rasterised at 1/256 of its longer side.
    method : {"adaptive", "abramson", "cv", "rule-of-thumb", "fixed"}
        ``adaptive``: Brunsdon's adaptive bandwidths, (h, alpha) by pattern search;
        ``abramson``: the same bandwidths with Abramson's alpha = 0.5 fixed and h by leave-one-out
        likelihood cross-validation (golden section over ``[h0/10, 4 h0]``);
        ``cv``: fixed h by leave-one-out likelihood cross-validation;
        ``rule-of-thumb``: ``h = rule_of_thumb_bandwidth(points)``; ``fixed``: ``h = bandwidth``.
    bandwidth : float, optional
        The bandwidth for ``method="fixed"`` (coordinate units); not allowed otherwise.
    weights : array (n,), optional
        Positive point weights, as frequencies: point i counts as ``weights[i]`` events in the intensity, in the
        leave-one-out likelihood ``sum_i w_i log lambda_{-i}(x_i)``, in the pilot's geometric mean,
        and in the rule of thumb (weighted standard distance, ``sum w`` in place of n).
    edge_correction : bool
        Renormalise every kernel to unit mass over the window (default True). True or False only.
    cutoff : float
        Kernel truncation in bandwidths (default 3, as in the paper; ``inf`` = no truncation).
    progress : bool
        Show a progress bar on stderr over the bandwidth search (``method="adaptive"`` or ``"cv"``).
    backend : {"auto", "cpu", "gpu", "emulator"}
    threads : int, optional
        CPU threads (Numba); None leaves the current setting.
    dtype : numpy.float64 or numpy.float32
        Precision of the kernel sums (coordinates are rounded to it once; the search, the edge
        masses on the CPU and the likelihood are accumulated in float64).
    points_crs : str, int or CRS, optional
        The CRS of ``points``, checked against ``window.crs`` (needs rasterio): a different CRS is
        refused naming both -- nothing is reprojected silently; use
        :func:`hphawkes_py.kde.reproject_points` or :meth:`Window.to_crs`. The default window
        (``window=None``) takes this CRS.

    Returns
    -------
    KDEFit

    Raises
    ------
    ValueError
        Bandwidth search (every ``method`` but ``"fixed"``) on a geographic CRS (longitude/latitude
        in degrees): bandwidths are distances, reproject to a projected CRS (metres) first.

    Notes
    -----
    Values are intensities (see :mod:`hphawkes_py.kde.model`).  Duplicated points are kept as
    separate events (as in the paper's eBird and simulated data); leave-one-out removes only the
    point itself, so a duplicate counts as its twin's neighbour -- a ``UserWarning`` names how many.

    Examples
    --------
    Brunsdon's adaptive bandwidths on the redwood seedlings (62 points in the unit square):

    >>> points, mask_path = hp.datasets.load_redwood()
    >>> window = hp.kde.Window.from_asc(mask_path)
    >>> fit = hp.kde.fit(points, window, method="adaptive", progress=False)
    >>> round(fit.h, 3), round(fit.alpha, 2)
    (0.035, 1.46)
    >>> surface = fit.density_surface()
    >>> round(surface.integral())  # edge-corrected: about n events over the window
    61
    """
    if not isinstance(method, str):
        raise TypeError(f"method must be one of {METHODS}, got {describe(method)}")
    method = check_in(method, "method", METHODS)
    p = _as_points(points, copy=True)  # the fit keeps its own copy, never the caller's array
    n = len(p)
    if n < 3:
        raise ValueError(f"need at least 3 points for kernel density estimation, got {n}")
    cutoff = _check_cutoff(cutoff)
    edge_correction = check_bool(edge_correction, "edge_correction")
    if method == "fixed":
        if bandwidth is None:
            raise ValueError('method="fixed" needs bandwidth= (a positive number in coordinate units)')
        bandwidth = _check_bandwidth(bandwidth)
    elif bandwidth is not None:
        raise ValueError(f'bandwidth= is only used with method="fixed" (got method={method!r})')
    progress, dtype, threads, resolved = _check_run(progress, dtype, threads, backend)
    pw = _check_point_weights(weights, n)
    if pw is not None:
        if method != "fixed":
            _check_spread(p)
        sd_w = _weighted_standard_distance(p, pw)
        h0 = (2.0 / (3.0 * float(pw.sum()))) ** 0.25 * sd_w
    elif method == "fixed":
        sd, scale = _spread(p)
        # the rule of thumb is only reported for a fixed bandwidth: NaN for coincident points
        h0 = (2.0 / (3.0 * n)) ** 0.25 * sd if sd > _SPREAD_ULPS * np.finfo(float).eps * scale else math.nan
    else:
        h0 = (2.0 / (3.0 * n)) ** 0.25 * _check_spread(p)
    if method != "fixed":
        _check_selected(h0, p, "the rule-of-thumb bandwidth (the start of the bandwidth search)")
    if window is None:
        window = _default_window(p)
        if points_crs is not None:
            window = Window(window.mask, window.x0, window.y0, window.cell_size, crs=as_crs(points_crs, "points_crs"))
    else:
        _check_window(window)
    check_points_crs(points_crs, window)
    if bandwidth is not None:
        check_bandwidth_units(window, bandwidth)
    else:
        check_search_crs(window, f"the bandwidth search of method={method!r}")
    _check_inside(p, window)
    n_dup, first = _duplicates(p)
    if n_dup:
        warnings.warn(
            f"{n_dup} duplicated points (first at ({float(first[0])!r}, {float(first[1])!r})); they are kept as separate "
            "events and each counts as the other's neighbour in the leave-one-out likelihood",
            UserWarning,
            stacklevel=2,
        )
    p.flags.writeable = False
    factory = functools.partial(make_engine, p, window, cutoff, backend=resolved)
    with threads_context(threads):
        return _fit(p, window, factory, method=method, bandwidth=bandwidth, edge_correction=edge_correction,
                    cutoff=cutoff, h0=h0, progress=progress, dtype=dtype, point_weights=pw)


def _check_point_weights(weights, n):
    if weights is None:
        return None
    kind = np.asarray(weights).dtype.kind
    if kind in "bcUSMmO":
        raise TypeError(f"weights must be positive real numbers, got dtype {np.asarray(weights).dtype}")
    w = as_float_array(weights, "weights", ndim=1, shape=(n,), copy=True)
    if not np.all(w > 0):
        i = int(np.argmax(~(w > 0)))
        raise ValueError(f"weights must be > 0 (one per point); weights[{i}] = {w[i]!r}")
    w.flags.writeable = False
    return w


def _weighted_standard_distance(p, w):
    m = (w[:, None] * p).sum(axis=0) / w.sum()
    return math.sqrt(float(np.sum(w * np.sum((p - m) ** 2, axis=1)) / w.sum()))


def _fit(p, window, factory, *, method, bandwidth, edge_correction, cutoff, h0, progress, dtype,
         point_weights=None) -> KDEFit:
    n = len(p)
    engine = factory(dtype=dtype)
    obj = _Objective(engine, n, edge_correction, point_weights)
    trace: list = []
    alpha = None
    n_iter = 0
    if method in ("fixed", "rule-of-thumb"):
        h = bandwidth if method == "fixed" else h0
        bws = np.full(n, h)
        w = obj.weights(bws)
        ll = obj.loglik(bws, w)
        trace.append({"h": h, "log_likelihood": ll})
    elif method == "abramson":
        # Abramson's square-root law: Brunsdon's bandwidths with alpha = 0.5 fixed, h by likelihood CV
        alpha = 0.5
        f = lambda hh: obj.adaptive_loglik(hh, alpha)[0]  # noqa: E731
        with progress_bar(total=None, desc="KDE Abramson CV", enabled=progress, unit="step") as bar:
            h, n_iter = _golden(f, h0 / 10.0, 4.0 * h0, _GOLDEN_RTOL * h0, trace, bar)
        ll, bws = obj.adaptive_loglik(h, alpha)
        trace.append({"h": h, "log_likelihood": ll})
        w = obj.weights(bws)
    elif method == "cv":
        f = lambda hh: obj.loglik(np.full(n, hh))  # noqa: E731
        with progress_bar(total=None, desc="KDE likelihood CV", enabled=progress, unit="step") as bar:
            h, n_iter = _golden(f, h0 / 10.0, 4.0 * h0, _GOLDEN_RTOL * h0, trace, bar)
        bws = np.full(n, h)
        w = obj.weights(bws)
        ll = obj.loglik(bws, w)
        trace.append({"h": h, "log_likelihood": ll})
    else:
        h, alpha = h0, 0.5
        sh0, sa0 = h0 / 10.0, 0.1
        sh, sa = sh0, sa0
        ll, bws = obj.adaptive_loglik(h, alpha)
        trace.append({"iteration": 0, "h": h, "alpha": alpha, "log_likelihood": ll, "step_h": sh, "step_alpha": sa, "accepted": True})
        # at most _MAX_ITER iterations of 4 likelihood evaluations each (the search usually stops earlier)
        with progress_bar(total=_MAX_ITER, desc="KDE adaptive search", enabled=progress, unit="it") as bar:
            for it in range(1, _MAX_ITER + 1):
                n_iter = it
                cands = [(h, alpha + sa), (h, alpha - sa), (h + sh, alpha), (h - sh, alpha)]
                best = (-math.inf, None, None)
                for (ch, ca), (cl, cb) in zip(cands, obj.adaptive_logliks(cands)):
                    trace.append({"iteration": it, "h": ch, "alpha": ca, "log_likelihood": cl, "step_h": sh, "step_alpha": sa, "accepted": False})
                    if cl > best[0]:
                        best = (cl, (ch, ca), cb)
                if best[0] > ll:
                    ll, (h, alpha), bws = best[0], best[1], best[2]
                    trace.append({"iteration": it, "h": h, "alpha": alpha, "log_likelihood": ll, "step_h": sh, "step_alpha": sa, "accepted": True})
                else:
                    sh /= 2.0
                    sa /= 2.0
                bar.update(1)
                bar.set_postfix(h=f"{h:.4g}", alpha=f"{alpha:.3f}", loglik=f"{ll:.6g}")
                if sh < sh0 / 20.0 and sa < sa0 / 20.0:
                    break
        w = obj.weights(bws)
    if ll == -math.inf:
        warnings.warn(
            "the leave-one-out log-likelihood is -inf at the selected parameters: some points have no other "
            f"point within cutoff ({cutoff:g}) x bandwidth; consider a larger cutoff (cutoff=float('inf'))",
            RuntimeWarning,
            stacklevel=3,
        )
    result = KDEFit(
        h=float(h),
        alpha=None if alpha is None else float(alpha),
        bandwidths=np.asarray(bws, float),
        edge_factors=np.asarray(w, float),
        log_likelihood=float(ll),
        n_iter=int(n_iter),
        method=method,
        trace=tuple(trace),
        backend=engine.backend,
        h0=float(h0),
        cutoff=cutoff,
        edge_correction=edge_correction,
        points=p,
        window=window,
        dtype=dtype,
        point_weights=point_weights,
        _factory=factory,
    )
    result._engines[dtype] = engine
    return result
