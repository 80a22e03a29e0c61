"""Spatiotemporal kernel density (sparr's ``spattemp.density``) with edge correction in space and time.

Conventions:

* Events ``(x_i, t_i)`` in a window ``W`` (a :class:`~._window.Window`) and a time interval
  ``[T0, T1]``; a spatial Gaussian kernel of bandwidth ``h`` and a temporal Gaussian kernel of
  bandwidth ``lam`` (separate units: coordinates and time).
* **Intensity** (expected events per unit area per unit time)
  ``lambda(x, t) = sum_i e_i c_i K_h(x - x_i) L_lam(t - t_i)`` with the spatial edge factor
  ``e_i = 1 / (window mass of N(x_i, h^2 I))`` (as :func:`hphawkes_py.kde.fit`) and the temporal
  one ``c_i = 1 / (Phi((T1 - t_i)/lam) - Phi((T0 - t_i)/lam))``; it integrates over
  ``W x [T0, T1]`` to about ``n``.  Kernels are cut at ``cutoff`` bandwidths in space and in time.
* Temporal marginal ``lambda_T(t) = sum_i c_i L_lam(t - t_i)`` (the spatial integral of
  ``lambda(., t)``, each spatial kernel having unit mass in ``W``) and the **conditional density**
  given time ``f(x | t) = lambda(x, t) / lambda_T(t)``, which integrates to 1 over ``W`` at every
  ``t``.
"""
from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass, field

import numpy as np

from .._backend import threads_context
from .._validate import as_float_array, check_bool, check_int, describe
from . import plot as _plot
from ._coords import _as_points
from ._gis import check_bandwidth_units, check_points_crs, check_search_crs
from ._window import Raster, Window
from .engine import make_engine
from .model import _check_bandwidth, _check_cutoff, _check_inside, _check_run, _check_spread, _check_window
from .selectors import oversmoothing_bandwidth

__all__ = ["spacetime", "SpaceTimeKDE", "temporal_oversmoothing_bandwidth"]


def temporal_oversmoothing_bandwidth(times) -> float:
    """Terrell's oversmoothing bandwidth of a 1-D Gaussian kernel, for the times of events.

    ``s (R(K) / (n V))^(1/5)`` with ``R(K) = 1 / (2 sqrt(pi))``,
    ``V = 16 Gamma(9/2) 3 / (9^(7/2) sqrt(pi))`` (= ``1.144 s n^(-1/5)``), ``s`` the sample
    standard deviation (sparr's ``OS.spattemp`` temporal margin, ``scaler="sd"``).

    Parameters
    ----------
    times : array_like of shape (n,)
        Event times (any unit), at least 2 distinct.

    Returns
    -------
    float
        The temporal bandwidth (time units).

    Examples
    --------
    >>> times = np.linspace(0.0, 10.0, 62)
    >>> round(hp.kde.temporal_oversmoothing_bandwidth(times), 4)
    1.482
    """
    t = as_float_array(times, "times", ndim=1)
    if len(t) < 2 or not np.ptp(t) > 0:
        raise ValueError(f"the temporal bandwidth needs at least 2 distinct times, got {describe(times)}")
    d = 1
    V = 16.0 * math.gamma((d + 8) / 2) * d * (d + 2) / ((d + 8) ** ((d + 6) / 2) * math.pi ** (d / 2))
    rk = 1.0 / (2.0 * math.sqrt(math.pi))
    return float(np.std(t, ddof=1)) * ((rk * d) / (len(t) * V)) ** (1.0 / (d + 4))


def _ndtr(z):
    from scipy.special import ndtr

    return ndtr(z)


@dataclass(frozen=True, eq=False)
class SpaceTimeKDE:
    """A spatiotemporal kernel intensity estimate (see the module notes).

    Returned by :func:`hphawkes_py.kde.spacetime` (not built by hand); the parameters are also
    its attributes.

    Parameters
    ----------
    h, lam : float
        Spatial (coordinate units) and temporal (time units) bandwidths.
    time_window : (float, float)
        The observation interval ``[T0, T1]`` (time units).
    edge_factors, time_edge_factors : ndarray (n,)
        The spatial and temporal edge factors ``e_i`` and ``c_i`` (1 / the kernel's mass in the
        window and in the time window).
    points : ndarray (n, 2)
        Copies of the event locations.
    times : ndarray (n,)
        Copies of the event times.
    window : Window
        The study area.
    cutoff : float
        Kernel truncation in bandwidths, as run.
    edge_correction : bool
        Whether the spatial and temporal edge corrections were applied, as run.
    backend : str
        Engine that ran (``"cpu"``, ``"gpu"`` or ``"emulator"``).
    dtype : numpy.dtype
        Precision of the kernel sums (float64 or float32).

    Other Parameters
    ----------------
    _factory : callable, optional
        Internal: ``_factory(dtype=...)`` builds an engine for the points and window (set by
        :func:`hphawkes_py.kde.spacetime`).

    Examples
    --------
    >>> points, mask_path = hp.datasets.load_redwood()
    >>> times = np.linspace(0.0, 10.0, len(points))
    >>> st = hp.kde.spacetime(points, times, hp.kde.Window.from_asc(mask_path), h=0.1, lam=1.0)
    >>> st.n, st.time_window
    (62, (0.0, 10.0))
    >>> print(np.round(st.marginal([2.0, 5.0]), 2))
    [6.52 6.08]
    """

    h: float
    lam: float
    time_window: tuple
    edge_factors: np.ndarray = field(repr=False)
    time_edge_factors: np.ndarray = field(repr=False)
    points: np.ndarray = field(repr=False)
    times: np.ndarray = field(repr=False)
    window: Window = field(repr=False)
    cutoff: float
    edge_correction: bool
    backend: str
    dtype: np.dtype = field(default=np.dtype(np.float64), repr=False)
    _factory: object = field(default=None, repr=False, compare=False)
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def n(self) -> int:
        return len(self.points)

    def _engine(self):
        if "engine" not in self._cache:
            self._cache["engine"] = self._factory(dtype=self.dtype)
        return self._cache["engine"]

    def _time_weights(self, t):
        """``c_i L_lam(t - t_i)`` (0 beyond ``cutoff`` temporal bandwidths)."""
        u = (t - self.times) / self.lam
        w = self.time_edge_factors * np.exp(-0.5 * u * u) / (math.sqrt(2.0 * math.pi) * self.lam)
        if math.isfinite(self.cutoff):
            w[np.abs(u) >= self.cutoff] = 0.0
        return w

    def _check_times(self, times) -> np.ndarray:
        t = as_float_array(np.atleast_1d(times) if np.ndim(times) == 0 else times, "times", ndim=1)
        if len(t) == 0:
            raise ValueError("times must hold at least one time")
        t0, t1 = self.time_window
        bad = (t < t0) | (t > t1)
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"times must lie in the time window [{t0!r}, {t1!r}]; times[{i}] = {t[i]!r}")
        return t

    def marginal(self, times) -> np.ndarray:
        """Temporal marginal intensity ``lambda_T(t)`` (events per unit time) at the given times."""
        t = self._check_times(times)
        return np.array([self._time_weights(tk).sum() for tk in t])

    def intensity_at(self, points, time: float, *, threads: int | None = None) -> np.ndarray:
        """``lambda(x, t)`` at (q, 2) locations and one time (events per unit area per unit time)."""
        q = _as_points(points)
        (t,) = self._check_times([time])
        return self._slice_values(q, t, threads)

    def _slice_values(self, q, t, threads):
        if threads is not None:
            check_int(threads, "threads", minimum=1)
        w = self._time_weights(t) * self.edge_factors
        src = np.flatnonzero(w > 0)
        if len(src) == 0:
            return np.zeros(len(q))
        with threads_context(threads):
            return self._engine().intensity_at(q, np.full(len(src), self.h), w[src], sources=src)

    def slices(self, times, *, conditional: bool = False, threads: int | None = None) -> list:
        """Surfaces over the window at the given times: ``lambda(x, t)`` or, with ``conditional=True``,
        ``f(x | t) = lambda(x, t) / lambda_T(t)`` (integrates to 1 over the window).  A list of
        :class:`Raster`, one per time (NaN outside the window)."""
        t = self._check_times(times)
        conditional = check_bool(conditional, "conditional")
        w = self.window
        centres = w.cell_centres()
        out = []
        for tk in t:
            v = self._slice_values(centres, tk, threads)
            if conditional:
                m = float(self._time_weights(tk).sum())
                v = v / m if m > 0 else np.full_like(v, np.nan)
            vals = np.full(w.mask.shape, np.nan)
            vals[w.mask] = v
            out.append(Raster(vals, w.x0, w.y0, w.cell_size, points=None, crs=w.crs))
        return out

    def plot_slices(self, times, *, conditional: bool = True, **kwargs):
        """Panels of :meth:`slices` (see :func:`hphawkes_py.kde.plot.plot_spacetime_slices`)."""
        t = self._check_times(times)
        return _plot.plot_spacetime_slices(self.slices(t, conditional=conditional), t, conditional=conditional, **kwargs)

    def animation(self, times, *, conditional: bool = True, **kwargs):
        """A matplotlib ``FuncAnimation`` over the slices (save with ``.save("st.gif", writer="pillow")``)."""
        t = self._check_times(times)
        return _plot.animate_spacetime(self.slices(t, conditional=conditional), t, conditional=conditional, **kwargs)

    def to_dict(self) -> dict:
        return {"h": self.h, "lam": self.lam, "time_window": list(self.time_window), "n": self.n,
                "cutoff": self.cutoff, "edge_correction": self.edge_correction, "backend": self.backend,
                "dtype": str(self.dtype),
                "values": "intensity (events per unit area per unit time); conditional slices integrate to 1"}


def spacetime(
    points,
    times,
    window: Window,
    *,
    h="oversmoothing",
    lam="oversmoothing",
    time_window=None,
    edge_correction: bool = True,
    cutoff: float = 3.0,
    backend: str = "auto",
    threads: int | None = None,
    dtype=np.float64,
    points_crs=None,
) -> SpaceTimeKDE:
    """Spatiotemporal kernel intensity with separate spatial and temporal bandwidths.

    Parameters
    ----------
    points : array (n, 2)
        Event locations, inside ``window``.
    times : array (n,)
        Event times (any unit; ``lam`` is in the same unit); numbers, not datetimes.
    window : Window
    h : float or "oversmoothing"
        Spatial bandwidth (coordinate units); default Terrell's oversmoothing bandwidth of the points.
    lam : float or "oversmoothing"
        Temporal bandwidth (time units); default Terrell's 1-D oversmoothing bandwidth of the times.
    time_window : (T0, T1), optional
        The observation interval (default the range of ``times``); every time must lie in it.
    edge_correction : bool
        Spatial and temporal edge correction (True or False).
    cutoff : float
        Kernel truncation in bandwidths, in space and in time (``inf`` = none).
    backend, threads, dtype :
        As :func:`hphawkes_py.kde.fit`.
    points_crs : str, int or CRS, optional
        The CRS of ``points``, checked against ``window.crs`` (refused when different; nothing is
        reprojected silently -- see :func:`hphawkes_py.kde.reproject_points`).

    Returns
    -------
    SpaceTimeKDE
        ``.slices(times, conditional=...)``, ``.marginal(times)``, ``.intensity_at(points, t)``,
        ``.plot_slices(times)``, ``.animation(times)``.

    Examples
    --------
    The redwood seedlings with made-up times, spread evenly over ``[0, 10]``:

    >>> points, mask_path = hp.datasets.load_redwood()
    >>> times = np.linspace(0.0, 10.0, len(points))
    >>> st = hp.kde.spacetime(points, times, hp.kde.Window.from_asc(mask_path))
    >>> round(st.h, 4), round(st.lam, 4)
    (0.1486, 1.482)
    >>> slices = st.slices([2.5, 7.5])
    >>> len(slices), slices[0].values.shape
    (2, (128, 128))
    """
    p = _as_points(points, copy=True)
    tt = np.asarray(times)
    if tt.dtype.kind in "bcUSMmO" and not (tt.dtype.kind == "O" and all(isinstance(v, numbers.Real) for v in tt.ravel())):
        raise TypeError(f"times must be real numbers (convert datetimes to a time unit first), got dtype {tt.dtype}")
    t = as_float_array(tt, "times", ndim=1, copy=True)
    if len(t) != len(p):
        raise ValueError(f"points and times must have the same length: points has {len(p)}, times has {len(t)}")
    if len(p) < 2:
        raise ValueError(f"need at least 2 events, got {len(p)}")
    _check_window(window)
    check_points_crs(points_crs, window)
    _check_inside(p, window)
    if time_window is None:
        t0, t1 = float(t.min()), float(t.max())
        if not t1 > t0:
            raise ValueError("all times are equal: give time_window=(T0, T1) with T1 > T0")
    else:
        if not isinstance(time_window, (tuple, list)) or len(time_window) != 2:
            raise TypeError(f"time_window must be a pair (T0, T1), got {describe(time_window)}")
        t0, t1 = (float(as_float_array([v], f"time_window[{i}]")[0]) for i, v in enumerate(time_window))
        if not t1 > t0:
            raise ValueError(f"time_window must satisfy T0 < T1, got {time_window!r}")
        bad = (t < t0) | (t > t1)
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"times must lie in time_window [{t0!r}, {t1!r}]; times[{i}] = {t[i]!r}")
    if isinstance(h, str):
        if h != "oversmoothing":
            raise ValueError(f"h must be a positive number or 'oversmoothing', got {h!r}")
        check_search_crs(window, "h='oversmoothing'")
        _check_spread(p)
        h = oversmoothing_bandwidth(p)
    else:
        h = _check_bandwidth(h, "h")
        check_bandwidth_units(window, h, "h")
    if isinstance(lam, str):
        if lam != "oversmoothing":
            raise ValueError(f"lam must be a positive number or 'oversmoothing', got {lam!r}")
        lam = temporal_oversmoothing_bandwidth(t)
    else:
        lam = _check_bandwidth(lam, "lam")
    edge_correction = check_bool(edge_correction, "edge_correction")
    cutoff = _check_cutoff(cutoff)
    _, dtype, threads, resolved = _check_run(True, dtype, threads, backend)
    p.flags.writeable = False
    t.flags.writeable = False
    factory = functools.partial(make_engine, p, window, cutoff, backend=resolved)
    with threads_context(threads):
        engine = factory(dtype=dtype)
        if edge_correction:
            m = engine.edge_masses(np.full(len(p), h))
            if not np.all(m > 0):
                raise ValueError(f"h = {h!r} is far too large for the window: a kernel has no representable mass in it")
            e = 1.0 / m
            mt = _ndtr((t1 - t) / lam) - _ndtr((t0 - t) / lam)
            if not np.all(mt > 0):
                raise ValueError(f"lam = {lam!r} is far too large for the time window [{t0!r}, {t1!r}]")
            c = 1.0 / mt
        else:
            e = np.ones(len(p))
            c = np.ones(len(p))
    result = SpaceTimeKDE(h=float(h), lam=float(lam), time_window=(t0, t1), edge_factors=e, time_edge_factors=c,
                          points=p, times=t, window=window, cutoff=cutoff, edge_correction=edge_correction,
                          backend=engine.backend, dtype=dtype, _factory=factory)
    result._cache["engine"] = engine
    return result
