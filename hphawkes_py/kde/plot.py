"""Figures for :mod:`hphawkes_py.kde` (matplotlib, imported lazily: the methods never need it).

* :func:`plot_surface` -- a :class:`~._window.Raster` as an image, the sample points overlaid
  (``Raster.plot`` calls it).
"""
from __future__ import annotations

import numpy as np

__all__ = ["plot_surface", "plot_tolerance_contours", "plot_spacetime_slices", "animate_spacetime"]


def plot_surface(raster, ax=None, *, points: bool = True, cmap: str = "viridis", colorbar: bool = True,
                 label: str = "intensity (events per unit area)", **kwargs):
    """Draw a surface with matplotlib (``imshow``), the sample points overlaid; returns the Axes.

    Parameters
    ----------
    raster : Raster
        ``values[row, col]`` (row 0 = top), NaN outside the window (left blank).
    ax : matplotlib Axes, optional
        Drawn into a new figure when None.
    points : bool
        Overlay ``raster.points`` (when the raster carries them).
    cmap : str
        Matplotlib colour map.
    colorbar : bool
        Add a colour bar labelled ``label``.
    **kwargs
        Passed to ``imshow`` (``vmin``, ``vmax``, ``norm`` ...).
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots()
    im = ax.imshow(np.ma.masked_invalid(raster.values), extent=raster.extent, origin="upper", cmap=cmap, **kwargs)
    if points and raster.points is not None:
        ax.scatter(raster.points[:, 0], raster.points[:, 1], s=4, c="white", edgecolors="black", linewidths=0.3)
    if colorbar:
        ax.figure.colorbar(im, ax=ax, label=label)
    ax.set_aspect("equal")
    return ax


def plot_tolerance_contours(log_risk, p_values, levels, *, ax=None, cases=None, controls=None, cmap: str = "RdBu_r",
                            colorbar: bool = True):
    """The log relative risk surface with tolerance contours of its p-value surface.

    Parameters
    ----------
    log_risk, p_values : Raster
        On the same raster (``RelativeRisk.surface()`` and ``RelativeRisk.p_values()``).
    levels : sequence of float
        p-value levels in (0, 1): the contour at ``a`` encloses the cells with ``p < a``
        (risk significantly raised at level ``a``).
    ax : matplotlib Axes, optional
    cases, controls : array (n, 2), optional
        Drawn as points (cases red, controls small grey).
    cmap : str
        Diverging colour map, centred at 0 (no change in risk).

    Returns
    -------
    matplotlib Axes; the ``QuadContourSet`` is ``ax.tolerance_contours`` (``None`` when no cell
    reaches any level).
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots()
    v = log_risk.values
    lim = float(np.nanmax(np.abs(v))) if np.isfinite(v).any() else 1.0
    im = ax.imshow(np.ma.masked_invalid(v), extent=log_risk.extent, origin="upper", cmap=cmap, vmin=-lim, vmax=lim)
    if colorbar:
        ax.figure.colorbar(im, ax=ax, label="log relative risk")
    rows, cols = p_values.values.shape
    xmin, xmax, ymin, ymax = p_values.extent
    cs = p_values.cell_size
    xc = xmin + (np.arange(cols) + 0.5) * cs
    yc = ymax - (np.arange(rows) + 0.5) * cs
    p = np.where(np.isfinite(p_values.values), p_values.values, 1.0)
    cset = None
    if (p < max(levels)).any():
        cset = ax.contour(xc, yc, p, levels=sorted(levels), colors="black",
                          linestyles=["solid", "dashed", "dotted"][: len(levels)] or "solid", linewidths=1.0)
        ax.clabel(cset, fmt=lambda lv: f"p={lv:g}", fontsize=7)
    if controls is not None:
        ax.scatter(controls[:, 0], controls[:, 1], s=2, c="0.5", linewidths=0)
    if cases is not None:
        ax.scatter(cases[:, 0], cases[:, 1], s=6, c="red", linewidths=0)
    ax.set_aspect("equal")
    ax.tolerance_contours = cset
    return ax


def _slice_label(conditional):
    return "f(x | t) (per unit area)" if conditional else "intensity (per unit area per unit time)"


def plot_spacetime_slices(rasters, times, *, conditional: bool = True, ncols: int = 3, cmap: str = "viridis"):
    """Panels of spatiotemporal slices on one colour scale; returns the Figure."""
    import matplotlib.pyplot as plt

    n = len(rasters)
    ncols = max(1, min(ncols, n))
    nrows = (n + ncols - 1) // ncols
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 3.8 * nrows), squeeze=False)
    finite = [r.values[np.isfinite(r.values)] for r in rasters]
    vmax = max((float(f.max()) for f in finite if f.size), default=1.0)
    for ax, r, t in zip(axes.ravel(), rasters, times):
        plot_surface(r, ax, points=False, cmap=cmap, colorbar=False, vmin=0.0, vmax=vmax)
        ax.set_title(f"t = {t:g}", fontsize=9)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    fig.colorbar(axes[0, 0].images[0], ax=axes.ravel().tolist(), label=_slice_label(conditional))
    return fig


def animate_spacetime(rasters, times, *, conditional: bool = True, interval: int = 300, cmap: str = "viridis"):
    """A ``matplotlib.animation.FuncAnimation`` stepping through the slices (one colour scale)."""
    import matplotlib.pyplot as plt
    from matplotlib.animation import FuncAnimation

    finite = [r.values[np.isfinite(r.values)] for r in rasters]
    vmax = max((float(f.max()) for f in finite if f.size), default=1.0)
    fig, ax = plt.subplots()
    plot_surface(rasters[0], ax, points=False, cmap=cmap, colorbar=True, vmin=0.0, vmax=vmax,
                 label=_slice_label(conditional))
    im = ax.images[0]
    title = ax.set_title(f"t = {times[0]:g}")

    def update(k):
        im.set_data(np.ma.masked_invalid(rasters[k].values))
        title.set_text(f"t = {times[k]:g}")
        return im, title

    return FuncAnimation(fig, update, frames=len(rasters), interval=interval, blit=False)
