"""Slow, obvious NumPy float64 reference for every KDE sum (tests only).

Conventions (the same as :mod:`hphawkes_py.kde`):

* Gaussian kernel ``K_b(d) = exp(-|d|^2 / (2 b^2)) / (2 pi b^2)``, cut at ``cutoff * b`` of the
  *source* point's bandwidth (``|d| < cutoff * b`` contributes; ``cutoff=inf`` keeps all).
* Values are intensities: ``lambda(x) = sum_j e_j K_{b_j}(x - x_j)`` (no 1/n).
* Edge mass of point j: mass of the untruncated Gaussian ``N(x_j, b_j^2 I)`` over the union of the
  window's inside cells, either the exact integral over each cell (``mode="integral"``) or the
  centre value times the cell area (``mode="midpoint"``); ``e_j = 1 / mass``.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr


def rule_of_thumb(points):
    p = np.asarray(points, float)
    sd2 = np.mean(np.sum((p - p.mean(axis=0)) ** 2, axis=1))
    return (2.0 / (3.0 * len(p))) ** 0.25 * math.sqrt(sd2)


def cell_edges(mask, x0, y0, cs):
    """Cell x-edges (cols+1) and y-edges per row (row 0 = top): returns xl, xr (cols,), yb, yt (rows,)."""
    rows, cols = mask.shape
    xl = x0 + np.arange(cols) * cs
    yb = y0 + (rows - 1 - np.arange(rows)) * cs
    return xl, xl + cs, yb, yb + cs


def edge_masses(points, bws, mask, x0, y0, cs, mode="integral"):
    points = np.asarray(points, float)
    xl, xr, yb, yt = cell_edges(mask, x0, y0, cs)
    out = np.empty(len(points))
    for j, ((x, y), b) in enumerate(zip(points, bws)):
        if mode == "integral":
            mx = ndtr((xr - x) / b) - ndtr((xl - x) / b)
            my = ndtr((yt - y) / b) - ndtr((yb - y) / b)
        else:
            mx = np.exp(-0.5 * ((xl + 0.5 * cs - x) / b) ** 2) * cs / (math.sqrt(2 * math.pi) * b)
            my = np.exp(-0.5 * ((yb + 0.5 * cs - y) / b) ** 2) * cs / (math.sqrt(2 * math.pi) * b)
        out[j] = np.sum(np.outer(my, mx) * mask)
    return out


def kernel_matrix(targets, sources, bws, cutoff):
    t = np.asarray(targets, float)
    s = np.asarray(sources, float)
    d2 = (t[:, None, 0] - s[None, :, 0]) ** 2 + (t[:, None, 1] - s[None, :, 1]) ** 2
    b2 = np.asarray(bws, float)[None, :] ** 2
    k = np.exp(-d2 / (2 * b2)) / (2 * math.pi * b2)
    k[d2 >= cutoff**2 * b2] = 0.0
    return k


def intensity(targets, sources, bws, weights, cutoff):
    return kernel_matrix(targets, sources, bws, cutoff) @ np.asarray(weights, float)


def point_intensities(points, bws, weights, cutoff, loo):
    k = kernel_matrix(points, points, bws, cutoff)
    if loo:
        np.fill_diagonal(k, 0.0)
    return k @ np.asarray(weights, float)


def surface(mask, x0, y0, cs, points, bws, weights, cutoff):
    rows, cols = mask.shape
    xc = x0 + (np.arange(cols) + 0.5) * cs
    yc = y0 + (rows - 1 - np.arange(rows) + 0.5) * cs
    X, Y = np.meshgrid(xc, yc)
    out = np.full(mask.shape, np.nan)
    inside = mask.astype(bool)
    out[inside] = intensity(np.column_stack([X[inside], Y[inside]]), points, bws, weights, cutoff)
    return out


def adaptive_bandwidths(points, h, alpha, mask, x0, y0, cs, cutoff, edge=True, mode="integral"):
    """Brunsdon: pilot = inclusive fixed KDE at h (edge corrected), lambda = (pilot/g)^-alpha."""
    n = len(points)
    hs = np.full(n, h)
    e = 1.0 / edge_masses(points, hs, mask, x0, y0, cs, mode) if edge else np.ones(n)
    pilot = point_intensities(points, hs, e, cutoff, loo=False)
    g = np.exp(np.mean(np.log(pilot)))
    return h * (pilot / g) ** (-alpha)


def loo_loglik(points, bws, mask, x0, y0, cs, cutoff, edge=True, mode="integral"):
    e = 1.0 / edge_masses(points, bws, mask, x0, y0, cs, mode) if edge else np.ones(len(points))
    with np.errstate(divide="ignore"):
        return float(np.sum(np.log(point_intensities(points, bws, e, cutoff, loo=True))))
