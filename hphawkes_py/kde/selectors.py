"""Bandwidth selectors of :mod:`hphawkes_py.kde` for a fixed isotropic Gaussian kernel:
Terrell's oversmoothing bandwidth (sparr's ``OS``), least-squares cross-validation, and Berman &
Diggle's criterion (spatstat's ``bw.diggle``).  The rule of thumb and likelihood cross-validation
are in :mod:`.model`; :func:`~hphawkes_py.kde.relative_risk` applies any of them to the pooled
pattern.  Every bandwidth is in coordinate units.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .._backend import threads_context
from .._validate import check_int, check_positive, describe
from ._coords import _as_points
from ._gis import check_search_crs
from ._window import Window
from .engine import make_engine
from .model import _check_inside, _check_run, _check_spread, _check_window, rule_of_thumb_bandwidth

__all__ = ["oversmoothing_bandwidth", "lscv_bandwidth", "diggle_bandwidth"]

#: R(K) = integral of K^2 for the standard bivariate Gaussian kernel
RK = 1.0 / (4.0 * math.pi)


def oversmoothing_bandwidth(points, *, n=None) -> float:
    """Terrell's (1990) oversmoothing bandwidth for an isotropic Gaussian kernel in 2-D.

    ``h_OS = s (2 R(K) / (n V))^(1/6)``, ``V = 16 Gamma(5) 2 (2 + 2) / (10^4 pi)``, the largest
    AMISE-optimal bandwidth compatible with the scale ``s`` of the data (the mean of the two
    coordinates' sample standard deviations) -- sparr's ``OS(pp, scaler="sd")``.

    Parameters
    ----------
    points : array (n, 2)
        Coordinates (any planar unit; the bandwidth is in the same unit).
    n : float, optional
        Sample size in the formula (default: the number of points; sparr's ``nstar``; for relative
        risk the geometric mean of the case and control counts is common).

    Returns
    -------
    float
        The bandwidth ``h_OS`` (coordinate units).

    Examples
    --------
    >>> points, _ = hp.datasets.load_redwood()
    >>> round(hp.kde.oversmoothing_bandwidth(points), 4)
    0.1486
    """
    p = _as_points(points)
    if len(p) < 2:
        raise ValueError(f"the oversmoothing bandwidth needs at least 2 points, got {len(p)}")
    _check_spread(p)
    nstar = float(len(p)) if n is None else check_positive(n, "n")
    s = float(np.mean(np.std(p, axis=0, ddof=1)))
    d = 2
    V = 16.0 * math.gamma((d + 8) / 2) * d * (d + 2) / ((d + 8) ** ((d + 6) / 2) * math.pi ** (d / 2))
    return s * ((RK * d) / (nstar * V)) ** (1.0 / (d + 4))


def _lscv_score(eng, n, h):
    """LSCV(h) = int f^2 - (2/n) sum_i f_{-i}(x_i) for f = (1/n) sum K_h (no edge correction):
    int f^2 = (1/n^2) [n K_{sqrt2 h}(0) + sum_{i != j} K_{sqrt2 h}(x_i - x_j)]."""
    ones = np.ones(n)
    pair2 = float(eng.point_intensities(np.full(n, math.sqrt(2.0) * h), ones, True).sum())
    loo = float(eng.point_intensities(np.full(n, h), ones, True).sum())
    int_f2 = (n * RK / (h * h) + pair2) / n**2  # K_{sqrt2 h}(0) = 1 / (4 pi h^2) = R(K) / h^2
    return int_f2 - 2.0 * loo / (n * (n - 1))


def lscv_bandwidth(points, *, bounds=None, backend: str = "auto", threads: int | None = None) -> float:
    """Least-squares cross-validation bandwidth of a fixed isotropic Gaussian kernel.

    Minimises ``LSCV(h) = int f_h^2 - (2/n) sum_i f_{h,-i}(x_i)`` (Bowman 1984; Rudemo 1982),
    the unbiased estimate of the integrated squared error up to a constant, with every kernel
    sum exact to 1e-14 (kernels cut at 8 bandwidths), over ``bounds`` (default ``[h0/20, 4 h0]``
    around the rule-of-thumb ``h0``): a log-spaced scan of 41 values, then golden-section
    refinement around the best.  No edge correction (the criterion is that of the density over
    the plane).

    Parameters
    ----------
    points : array_like of shape (n, 2)
        Event locations (x, y), n >= 3.
    bounds : (float, float), optional
        The search interval of ``h`` (coordinate units); default ``[h0/20, 4 h0]``.
    backend : {"auto", "cpu", "gpu", "emulator"}
        Engine of the kernel sums, as :func:`hphawkes_py.kde.fit`.
    threads : int, optional
        CPU threads (Numba); None leaves the current setting.

    Returns
    -------
    float
        The LSCV bandwidth (coordinate units).

    Examples
    --------
    >>> points, _ = hp.datasets.load_redwood()
    >>> round(float(hp.kde.lscv_bandwidth(points)), 4)
    0.0465
    """
    p = _as_points(points)
    n = len(p)
    if n < 3:
        raise ValueError(f"LSCV needs at least 3 points, got {n}")
    h0 = rule_of_thumb_bandwidth(p)
    if bounds is None:
        lo, hi = h0 / 20.0, 4.0 * h0
    else:
        if not isinstance(bounds, (tuple, list)) or len(bounds) != 2:
            raise TypeError(f"bounds must be a pair (low, high), got {describe(bounds)}")
        lo, hi = check_positive(bounds[0], "bounds[0]"), check_positive(bounds[1], "bounds[1]")
        if not hi > lo:
            raise ValueError(f"bounds must satisfy low < high, got {bounds!r}")
    _, _, threads, resolved = _check_run(False, np.float64, threads, backend)
    xmin, ymin = p.min(axis=0)
    xmax, ymax = p.max(axis=0)
    side = max(xmax - xmin, ymax - ymin)
    w = Window.rectangle(xmin, xmin + side, ymin, ymin + side, side)  # the window plays no role here
    with threads_context(threads):
        eng = make_engine(p, w, 8.0, backend=resolved)
        grid = np.geomspace(lo, hi, 41)
        scores = np.array([_lscv_score(eng, n, h) for h in grid])
        k = int(np.argmin(scores))
        a, b = grid[max(k - 1, 0)], grid[min(k + 1, len(grid) - 1)]
        gr = (math.sqrt(5.0) - 1.0) / 2.0
        c, d = b - gr * (b - a), a + gr * (b - a)
        fc, fd = _lscv_score(eng, n, c), _lscv_score(eng, n, d)
        while b - a > 1e-6 * h0:
            if fc < fd:
                b, d, fd = d, c, fc
                c = b - gr * (b - a)
                fc = _lscv_score(eng, n, c)
            else:
                a, c, fc = c, d, fd
                d = a + gr * (b - a)
                fd = _lscv_score(eng, n, d)
    return 0.5 * (a + b)


def _translate_weights(window: Window, dx, dy):
    """Translation edge correction ``|W| / |W cap (W + (dx, dy))|`` for pairs at offsets (dx, dy).

    Exact for a full rectangle; for other masks the set covariogram of the inside cells (by FFT
    autocorrelation, in cells) is interpolated bilinearly at the offsets (an approximation at the
    scale of a cell)."""
    cs = window.cell_size
    rows, cols = window.mask.shape
    if window.mask.all():
        w_, h_ = cols * cs, rows * cs
        return (w_ * h_) / ((w_ - np.abs(dx)) * (h_ - np.abs(dy)))
    from scipy.signal import fftconvolve

    m = window.mask.astype(float)
    cov = fftconvolve(m, m[::-1, ::-1], mode="full") * cs * cs  # cov[rows-1+k, cols-1+l]: shift (l, -k) cells
    u = np.abs(dx) / cs  # the covariogram is symmetric: |W cap (W + v)| = |W cap (W - v)|
    v = -dy / cs * np.sign(np.where(dx == 0, 1.0, dx))
    from scipy.ndimage import map_coordinates

    vals = map_coordinates(cov, [rows - 1 + v, cols - 1 + u], order=1, mode="constant", cval=0.0)
    with np.errstate(divide="ignore"):
        return np.where(vals > 0, window.area / vals, 0.0)


def diggle_bandwidth(points, window: Window, *, nr: int = 512, hmax: float | None = None) -> float:
    """Berman & Diggle's cross-validated bandwidth for the intensity (spatstat's ``bw.diggle``).

    Minimises ``M(sigma) = (1/lambda - 2 K(r)) / (pi r^2) + J(r) / (pi r^2)^2`` over ``sigma = r / 2``
    on the grid ``r = 0 .. rmax`` (``nr`` values), where ``lambda = n / |W|``, ``K`` is Ripley's K
    function with the translation edge correction (pairs at distance ``< r``, weights
    ``|W| / |W cap (W + x_i - x_j)|``, ``lambda^2`` estimated by ``n (n - 1) / |W|^2``) and
    ``J(r) = 2 r^2 sum_t (acos(y) - y sqrt(1 - y^2)) dK(t)``, ``y = t / (2 r) < 1`` (disc overlaps),
    only for ``r <= rmax / 2``.  ``rmax = 4 hmax`` or Ripley's rule
    ``min(short side of the window's frame / 4, sqrt(1000 / (pi lambda)))``.  Equals
    ``bw.diggle(X, correction = "translate")`` for rectangular windows (the translation weights of
    other masks come from the raster's set covariogram).

    Parameters
    ----------
    points : array_like of shape (n, 2)
        Event locations (x, y), n >= 3, all inside ``window``.
    window : Window
        The study area.
    nr : int
        Number of values of ``r`` on the grid ``0 .. rmax`` (default 512, as spatstat).
    hmax : float, optional
        Largest bandwidth considered (coordinate units): ``rmax = 4 hmax``; default Ripley's rule.

    Returns
    -------
    float
        The bandwidth ``sigma`` (coordinate units).

    Examples
    --------
    >>> points, mask_path = hp.datasets.load_redwood()
    >>> round(hp.kde.diggle_bandwidth(points, hp.kde.Window.from_asc(mask_path)), 4)
    0.0225
    """
    from scipy.spatial import cKDTree

    p = _as_points(points)
    _check_window(window)
    check_search_crs(window, "diggle_bandwidth")
    _check_inside(p, window)
    n = len(p)
    if n < 3:
        raise ValueError(f"the Berman-Diggle bandwidth needs at least 3 points, got {n}")
    nr = check_int(nr, "nr", minimum=16, maximum=10**6)
    lam = n / window.area
    xmin, xmax, ymin, ymax = window.extent
    if hmax is None:
        rmax = min(min(xmax - xmin, ymax - ymin) / 4.0, math.sqrt(1000.0 / (math.pi * lam)))
    else:
        rmax = 4.0 * check_positive(hmax, "hmax")
    r = np.linspace(0.0, rmax, nr)
    pairs = cKDTree(p).query_pairs(rmax, output_type="ndarray")
    dxy = p[pairs[:, 1]] - p[pairs[:, 0]]
    d = np.hypot(dxy[:, 0], dxy[:, 1])
    e = _translate_weights(window, dxy[:, 0], dxy[:, 1])
    # K(r_k) = sum over ordered pairs with d < r_k (each unordered pair twice) of e / (lambda^2 |W|)
    order = np.argsort(d, kind="stable")
    cum = np.concatenate([[0.0], np.cumsum(2.0 * e[order])])
    K = cum[np.searchsorted(d[order], r, side="left")] / (n * (n - 1) / window.area)
    ok = r <= r[-1] / 2.0
    dK = np.diff(K)
    rr = r[ok]
    J = np.zeros(len(rr))
    t = r[:-1]
    for i in range(1, len(rr)):
        y = t / (2.0 * rr[i])
        m = y < 1.0
        J[i] = 2.0 * rr[i] ** 2 * np.sum((np.arccos(y[m]) - y[m] * np.sqrt(1.0 - y[m] ** 2)) * dK[m])
    pir2 = math.pi * rr[1:] ** 2
    M = (1.0 / lam - 2.0 * K[ok][1:]) / pir2 + J[1:] / pir2**2
    k = int(np.argmin(M))
    if k == len(M) - 1:
        warnings.warn(f"the Berman-Diggle criterion is minimal at the largest bandwidth tried ({rr[-1] / 2:.6g}); "
                      "give a larger hmax", RuntimeWarning, stacklevel=2)
    return float(rr[1:][k] / 2.0)
