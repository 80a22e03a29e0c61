"""Figures for :mod:`hphawkes_py.kde` (matplotlib, imported lazily: the methods never need it).

* :func:`plot_surface` -- a :class:`~._window.Raster` as an image, the sample points overlaid
  (``Raster.plot`` calls it).
"""
from __future__ import annotations

import numpy as np

__all__ = ["plot_surface"]


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
