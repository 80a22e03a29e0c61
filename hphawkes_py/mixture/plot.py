"""Plots of a fitted :class:`~hphawkes_py.mixture.TDPGaussianMixture` (matplotlib)."""
from __future__ import annotations

import numpy as np

__all__ = ["plot_mixture"]


def _ellipse(ax, mean, cov, n_sd, **kw):
    from matplotlib.patches import Ellipse

    vals, vecs = np.linalg.eigh(cov)
    vals = np.maximum(vals, 0.0)
    angle = np.degrees(np.arctan2(vecs[1, 1], vecs[0, 1]))
    e = Ellipse(mean, 2 * n_sd * np.sqrt(vals[1]), 2 * n_sd * np.sqrt(vals[0]), angle=angle, fill=False, **kw)
    ax.add_patch(e)
    return e


def plot_mixture(model, X=None, *, min_weight=0.01, n_sd=2.0, columns=None, max_points=20000, ax=None, seed=0):
    """Plot the fitted mixture in original units.

    p = 2: the points (coloured by most probable component) with an ellipse of ``n_sd``
    standard deviations per component of weight >= ``min_weight`` (line width ~ weight).
    p > 2: a pairs plot (lower panels: points and ellipses of the 2-D marginals;
    diagonal: histogram and the 1-D marginal mixture density).

    Parameters
    ----------
    model : fitted TDPGaussianMixture
    X : array (n, p), optional
        Data to draw (a random subset of ``max_points`` rows if larger).
    columns : list of int, optional
        Columns to show in the pairs plot (default: all, at most 8).
    ax : matplotlib Axes, optional (p = 2 only)

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    model._check_fitted()
    p = model.p_
    names = model.feature_names_ or [f"x{a}" for a in range(p)]
    comps = np.flatnonzero(model.weights_ >= min_weight)
    wmax = model.weights_[comps].max() if comps.size else 1.0
    cmap = plt.get_cmap("tab10")
    pts = lab = None
    if X is not None:
        if getattr(X, "columns", None) is not None:
            # a DataFrame stays one, so that predict checks its column names against the fit's
            rows = X if len(X) <= max_points else X.iloc[np.random.default_rng(seed).choice(len(X), max_points, replace=False)]
            lab = model.predict(rows)
            pts = np.asarray(rows, dtype=float)
        else:
            pts = np.asarray(X, dtype=float)
            if pts.ndim == 1:
                pts = pts.reshape(-1, 1)
            if len(pts) > max_points:
                pts = pts[np.random.default_rng(seed).choice(len(pts), max_points, replace=False)]
            lab = model.predict(pts)
    color_of = {j: cmap(i % 10) for i, j in enumerate(comps)}

    def panel(ax, a, b):
        if pts is not None:
            cols = [color_of.get(int(j), (0.6, 0.6, 0.6, 1.0)) for j in lab]
            ax.scatter(pts[:, a], pts[:, b], s=4, c=cols, alpha=0.5, linewidths=0)
        for j in comps:
            idx = [a, b]
            _ellipse(ax, model.means_[j, idx], model.covariances_[j][np.ix_(idx, idx)], n_sd,
                     color=color_of[j], lw=0.5 + 2.5 * model.weights_[j] / wmax)
            ax.plot(*model.means_[j, idx], "+", color="k", ms=6)
        ax.autoscale_view()

    if p == 1:
        fig, ax = plt.subplots(figsize=(6, 4)) if ax is None else (ax.figure, ax)
        lo, hi = (pts[:, 0].min(), pts[:, 0].max()) if pts is not None else (
            (model.means_[comps, 0] - 4 * np.sqrt(model.covariances_[comps, 0, 0])).min(),
            (model.means_[comps, 0] + 4 * np.sqrt(model.covariances_[comps, 0, 0])).max())
        grid = np.linspace(lo, hi, 400)
        if pts is not None:
            ax.hist(pts[:, 0], bins=50, density=True, color="0.8")
        ax.plot(grid, np.exp(model.score_samples(grid.reshape(-1, 1))), "k")
        ax.set_xlabel(names[0])
        return fig
    if p == 2:
        fig, ax = plt.subplots(figsize=(6, 5)) if ax is None else (ax.figure, ax)
        panel(ax, 0, 1)
        ax.set_xlabel(names[0])
        ax.set_ylabel(names[1])
        ax.set_title(f"TDP mixture ({model.method}): {comps.size} components with weight >= {min_weight}")
        return fig
    cols = list(range(min(p, 8))) if columns is None else list(columns)
    q = len(cols)
    fig, axes = plt.subplots(q, q, figsize=(2.2 * q, 2.2 * q), squeeze=False)
    for r, a in enumerate(cols):
        for c, b in enumerate(cols):
            ax = axes[r, c]
            if r == c:
                if pts is not None:
                    ax.hist(pts[:, a], bins=40, density=True, color="0.8")
                sd = np.sqrt(model.covariances_[:, a, a])
                lo = (model.means_[comps, a] - 4 * sd[comps]).min()
                hi = (model.means_[comps, a] + 4 * sd[comps]).max()
                g = np.linspace(lo, hi, 300)
                dens = (model.weights_[:, None] / (sd[:, None] * np.sqrt(2 * np.pi))
                        * np.exp(-0.5 * ((g[None, :] - model.means_[:, a, None]) / sd[:, None]) ** 2)).sum(0)
                ax.plot(g, dens, "k", lw=1)
            elif r > c:
                panel(ax, b, a)
            else:
                ax.axis("off")
            if r == q - 1:
                ax.set_xlabel(names[b], fontsize=8)
            if c == 0 and r > 0:
                ax.set_ylabel(names[a], fontsize=8)
            ax.tick_params(labelsize=6)
    fig.suptitle(f"TDP mixture ({model.method}): {comps.size} components with weight >= {min_weight}")
    fig.tight_layout()
    return fig
