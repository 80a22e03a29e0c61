"""Adaptive kernel density estimation with edge correction (Zhang, Zhu & Huang 2017).

>>> import hphawkes_py as hp
>>> fit = hp.kde.fit(points, hp.kde.Window.from_asc("mask.asc"), method="adaptive")  # doctest: +SKIP
>>> surface = fit.density_surface()                                                    # doctest: +SKIP

Values are **intensities** (expected events per unit area, no 1/n factor): with edge correction
the surface integrates over the window to about n. See :mod:`hphawkes_py.kde.model` for the exact
conventions (kernel, cutoff, edge factors, Brunsdon's search).
"""
from ._window import Raster, Window, read_asc
from .model import KDEFit, fit, rule_of_thumb_bandwidth

__all__ = ["Window", "Raster", "read_asc", "fit", "KDEFit", "rule_of_thumb_bandwidth"]
