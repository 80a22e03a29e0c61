"""Adaptive kernel density estimation with edge correction (Zhang, Zhu & Huang 2017), and spatial
relative risk of cases against controls with significance surfaces.

>>> import hphawkes_py as hp
>>> fit = hp.kde.fit(points, hp.kde.Window.from_asc("mask.asc"), method="adaptive")  # doctest: +SKIP
>>> surface = fit.density_surface()                                                    # doctest: +SKIP
>>> rr = hp.kde.relative_risk(cases, controls, window)                                 # doctest: +SKIP
>>> rr.tolerance_contours([0.05, 0.01], method="monte_carlo", seed=1)                  # doctest: +SKIP

Values are **intensities** (expected events per unit area, no 1/n factor): with edge correction
the surface integrates over the window to about n. See :mod:`hphawkes_py.kde.model` for the exact
conventions (kernel, cutoff, edge factors, Brunsdon's search) and :mod:`hphawkes_py.kde.relrisk`
for the relative risk.
"""
from ._gis import reproject_points
from ._window import Raster, Window, read_asc
from .model import KDEFit, fit, rule_of_thumb_bandwidth
from .relrisk import RelativeRisk, relative_risk
from .selectors import diggle_bandwidth, lscv_bandwidth, oversmoothing_bandwidth
from .spatiotemporal import SpaceTimeKDE, spacetime, temporal_oversmoothing_bandwidth

__all__ = ["Window", "Raster", "read_asc", "fit", "KDEFit", "rule_of_thumb_bandwidth", "relative_risk",
           "RelativeRisk", "oversmoothing_bandwidth", "lscv_bandwidth", "diggle_bandwidth", "spacetime", "SpaceTimeKDE",
           "temporal_oversmoothing_bandwidth", "reproject_points"]
