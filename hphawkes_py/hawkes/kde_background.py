"""Hawkes background from a fitted adaptive, edge-corrected KDE (``background=KDEFit``).

Model. With ``background=fit`` (a :class:`hphawkes_py.kde.KDEFit`, e.g.
``hp.kde.fit(points, window, method="adaptive")``, Brunsdon's adaptive bandwidths, Zhang et al.'s
edge correction) the background rate replaces the space-time smoother of Holbrook et al.::

    lambda_bg(x, t) = mu0 * N * f(x) / (T1 - T0)       for x in W, t in [T0, T1]  (0 outside W)
    f(x)            = lambda_KDE(x) / Z,   lambda_KDE(x) = sum_j e_j w_j K_{b_j}(x - x_j),
    Z               = int_W lambda_KDE(x) dx = sum_j e_j w_j P(N(x_j, b_j^2 I) in W),

with ``W`` the fit's window (raster mask), ``b_j``, ``e_j``, ``w_j`` the fit's bandwidths, edge
factors and point weights, ``K_b`` the isotropic 2-D Gaussian **untruncated**, and ``N`` the number of
Hawkes events. So f is a probability density on W (per unit area, units of x^-2), constant in time
(a homogeneous temporal rate over the observation period ``[T0, T1]``), and ``mu0`` keeps its
meaning: the expected number of background events is ``mu0 * N`` (about the background fraction).
In the engines' terms S_n = N f(x_n) / (T1 - T0) (events per unit area per unit time per unit mu0)
and the background part of the compensator is exactly ``mu0 * N``, since

    int_{T0}^{T1} int_W N f(x) / (T1 - T0) dx dt = N int_W f = N.

Exactness of the compensator. ``Z`` is computed with exact cell integrals of every Gaussian
(:func:`~.engine.gaussian_window_mass`), so ``int_W f = 1`` to rounding. For an edge-corrected fit
without point weights ``e_j = 1 / P(N(x_j, b_j^2 I) in W)`` (exactly, or ``e_j = 1`` where the
missing mass is below 1e-12), hence ``Z = n`` (the KDE's number of points) to about 1e-12
relative -- the "unit window mass by construction" of the edge correction, checked in the tests.
The fit's own surface (``KDEFit.density_at``) truncates each kernel at ``cutoff`` bandwidths (3 by
default: 1 - exp(-4.5) = 98.9 % of its mass), so it integrates to about 0.989 n, not n; that is why
the background evaluates the untruncated kernels (``cutoff = inf``) at the fitted bandwidths and
edge factors, and normalises by Z.

The spatial support of the background is W. The trigger's compensator is over the whole plane
(default) or over ``spatial_window``, which must then be the fit's window (the same raster).
tau_x and tau_t are not parameters of this model (any positive value is accepted and ignored).
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from .compensator import gaussian_window_mass

__all__ = ["KDEBackground", "kde_background", "check_background"]


@dataclasses.dataclass(frozen=True, eq=False)
class KDEBackground:
    """A fixed background for the Hawkes engines (see the module notes).

    Attributes
    ----------
    sums : ndarray (N,)
        S_n = N f(x_n) / (T1 - T0) in the data's time-sorted order (per unit area per unit time).
    integral : float
        The background part of the compensator per unit mu0 (= N).
    density : ndarray (N,)
        f(x_n), the normalised spatial density at the events, sorted order (per unit area).
    mass : float
        Z, the window mass of the untruncated KDE intensity (about ``fit.n`` when edge-corrected).
    n_kde : int
        Number of points of the KDE fit.
    """

    sums: np.ndarray
    integral: float
    density: np.ndarray
    mass: float
    n_kde: int


def _same_window(a, b) -> bool:
    return (a.mask.shape == b.mask.shape and bool(np.array_equal(a.mask, b.mask))
            and float(a.x0) == float(b.x0) and float(a.y0) == float(b.y0) and float(a.cell_size) == float(b.cell_size))


def kde_background(fit: Any, x_sorted: np.ndarray, window: tuple, *, spatial_window: Any = None,
                   name: str = "background") -> KDEBackground:
    """The :class:`KDEBackground` of ``fit`` for time-sorted events ``x_sorted`` (N, 2) observed over
    the time window ``(T0, T1)``; ``name`` is the argument named in errors."""
    from ..kde import KDEFit
    from ..kde.engine import make_engine as make_kde_engine

    if not isinstance(fit, KDEFit):
        raise TypeError(f"{name} must be 'smoother' or a fitted hphawkes_py.kde.KDEFit (from hp.kde.fit), "
                        f"got {type(fit).__name__}")
    xs = np.asarray(x_sorted, dtype=np.float64)
    if xs.ndim != 2 or xs.shape[1] != 2:
        raise ValueError(f"{name}: a KDE background needs 2-D locations (x of shape (N, 2)), got shape {xs.shape}")
    W = fit.window
    inside = np.asarray(W.contains(xs), dtype=bool)
    if not inside.all():
        i = int(np.flatnonzero(~inside)[0])
        raise ValueError(f"{name}: {int((~inside).sum())} of {len(xs)} events lie outside the KDE fit's window "
                         f"(the background's support), e.g. ({xs[i, 0]:g}, {xs[i, 1]:g}); fit the KDE on a window "
                         "that contains every event")
    if spatial_window is not None and not _same_window(spatial_window, W):
        raise ValueError(f"{name}: with a KDE background, spatial_window must be the KDE fit's window (the "
                         "background's support) or None")
    b = np.asarray(fit.bandwidths, dtype=np.float64)
    wts = np.asarray(fit.weights, dtype=np.float64)
    mass = float(np.sum(wts * gaussian_window_mass(fit.points, b, W)))
    eng = make_kde_engine(fit.points, W, math.inf, backend="cpu", dtype=np.float64)
    lam = np.asarray(eng.intensity_at(np.ascontiguousarray(xs), b, wts), dtype=np.float64)
    if not (math.isfinite(mass) and mass > 0.0):
        raise ValueError(f"{name}: the KDE has no mass inside its window (Z = {mass!r})")
    dens = lam / mass
    if not np.all(dens > 0.0):
        raise ValueError(f"{name}: the KDE density underflows to 0 at {int(np.sum(dens <= 0))} events; "
                         "use larger bandwidths or other units of x")
    N = len(xs)
    T0, T1 = float(window[0]), float(window[1])
    return KDEBackground(sums=N * dens / (T1 - T0), integral=float(N), density=dens, mass=mass, n_kde=int(fit.n))


def check_background(background: Any, prep: Any, spatial_window: Any = None,
                     name: str = "background") -> "KDEBackground | None":
    """``background=``: ``"smoother"`` (None returned: the paper's space-time smoother) or a
    :class:`~hphawkes_py.kde.KDEFit` (its :class:`KDEBackground` for the prepared data ``prep``)."""
    if isinstance(background, str):
        if background == "smoother":
            return None
        raise ValueError(f"{name} must be 'smoother' or a fitted hphawkes_py.kde.KDEFit, got {background!r}")
    return kde_background(background, prep.x_sorted, prep.window, spatial_window=spatial_window, name=name)


def refuse_kde_background(posterior: Any, what: str) -> None:
    """Raise if ``posterior`` was fitted with a KDE background (``what`` cannot use it yet)."""
    factory = getattr(posterior, "engine_factory", None)
    if factory is not None and getattr(factory, "background", None) is not None:
        raise NotImplementedError(f"{what} does not support a posterior fitted with background=KDEFit yet "
                                  "(only the 'smoother' background); use log_likelihood, mcmc and self_excitation")
