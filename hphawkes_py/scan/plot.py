"""Figures for scan results (matplotlib imported only when a figure is drawn)."""
from __future__ import annotations

import numpy as np

__all__ = ["plot_clusters"]


def plot_clusters(result, ax=None, *, max_clusters: int | None = None, alpha: float = 0.05, path=None):
    """Clusters as circles over the locations.

    Locations are grey dots (area ~ population), red where they hold cases; the most likely
    cluster is a thick circle, secondary clusters thin (dashed when ``p_value > alpha``),
    each labelled with its rank.

    Parameters
    ----------
    result : ScanResult
        A purely spatial result (:func:`~hphawkes_py.scan.bernoulli`, :func:`~hphawkes_py.scan.poisson`).
    ax : matplotlib Axes, optional
        Axes to draw on (default a new 6 x 6 inch figure).
    max_clusters : int, optional
        Draw only the first ``max_clusters`` clusters (default all).
    alpha : float
        Significance level separating solid from dashed circles.
    path : str or Path, optional
        Save the figure there.

    Returns
    -------
    matplotlib Axes
        The axes drawn on.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> g = hp.datasets.load_grave()
    >>> res = hp.scan.bernoulli(g[["x", "y"]].to_numpy(), g["case"], 1 - g["case"], n_replicates=99,
    ...                         seed=1, backend="cpu", progress=False)
    >>> ax = hp.scan.plot_clusters(res, path="grave_clusters.png")
    >>> ax.get_title()
    'Spatial scan: 2 cluster(s), most likely p=0.07'
    """
    if not all(hasattr(result, a) for a in ("clusters", "_loc_coords", "_loc_cases", "_loc_population")):
        raise TypeError(f"plot_clusters needs a ScanResult (from hp.scan.bernoulli or poisson), got "
                        f"{type(result).__name__}")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Circle, Ellipse

    non_euclidean = getattr(result, "non_euclidean", False)
    if non_euclidean and np.isnan(np.asarray(result._loc_coords, dtype=float)).all():
        raise ValueError("the locations have no coordinates (neighbors= without coords): nothing to plot")
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 6))
    xy = result._loc_coords
    loc_of = dict(zip(np.asarray(result._row_ids).tolist(), np.asarray(result._row_loc).tolist()))
    pop = np.asarray(result._loc_population, dtype=float)
    size = 6 + 30 * np.sqrt(pop / max(1, pop.max()))
    ax.scatter(xy[:, 0], xy[:, 1], s=size, c="0.6", lw=0, label="locations")
    has = result._loc_cases > 0
    ax.scatter(xy[has, 0], xy[has, 1], s=size[has], c="tab:red", lw=0, label="with cases")
    rows = result.clusters if max_clusters is None else result.clusters.iloc[:max_clusters]
    for k, row in enumerate(rows.itertuples()):
        if getattr(row, "purely_temporal", False) is True:
            continue  # every location: no circle to draw
        sig = row.p_value <= alpha
        style = dict(fill=False, lw=2.5 if k == 0 else 1.2, ls="-" if sig or k == 0 else "--",
                     ec="tab:blue" if k == 0 else "tab:purple")
        if non_euclidean:  # windows from lists of neighbours: their locations ringed, no circle
            g = [loc_of[i] for i in row.location_ids]
            ax.scatter(xy[g, 0], xy[g, 1], s=80, facecolors="none", edgecolors=style["ec"], lw=style["lw"])
            ax.annotate(f"{k + 1}", (row.x, row.y), fontsize=8, ha="center", va="center")
            continue
        if "semimajor_axis" in rows.columns:  # elliptic window: major axis at `angle` degrees from the x axis
            circ = Ellipse((row.x, row.y), 2 * max(row.semimajor_axis, 1e-12), 2 * max(row.radius, 1e-12),
                           angle=row.angle, **style)
        else:
            circ = Circle((row.x, row.y), max(row.radius, 1e-12), **style)
        ax.add_patch(circ)
        ax.annotate(f"{k + 1}", (row.x, row.y), fontsize=8, ha="center", va="center")
    ax.set_aspect("equal")
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.set_title(f"Spatial scan: {len(rows)} cluster(s), most likely p={rows.p_value.iloc[0]:.3g}"
                 if len(rows) else "Spatial scan: no cluster")
    ax.legend(loc="best", fontsize=8)
    if path is not None:
        ax.figure.savefig(path, dpi=120, bbox_inches="tight")
    return ax
