"""Figures for scan results (matplotlib imported only when a figure is drawn)."""
from __future__ import annotations

import numpy as np

__all__ = ["plot_clusters", "plot_space_time_clusters"]


def plot_clusters(result, ax=None, *, max_clusters: int | None = None, alpha: float = 0.05, path=None):
    """Clusters as circles over the locations.

    Locations are grey dots (area ~ population), red where they hold cases; the most likely
    cluster is a thick circle, secondary clusters thin (dashed when ``p_value > alpha``),
    each labelled with its rank.

    Parameters
    ----------
    result : ScanResult
    ax : matplotlib Axes, optional
    max_clusters : int, optional
        Draw only the first ``max_clusters`` clusters (default all).
    alpha : float
        Significance level separating solid from dashed circles.
    path : str or Path, optional
        Save the figure there.

    Returns
    -------
    matplotlib Axes
    """
    if hasattr(result, "_day_cases"):
        return plot_space_time_clusters(result, max_clusters=max_clusters, alpha=alpha, path=path)
    if not all(hasattr(result, a) for a in ("clusters", "_loc_coords", "_loc_cases", "_loc_population")):
        raise TypeError(f"plot_clusters needs a ScanResult (from hp.scan.bernoulli or poisson), got "
                        f"{type(result).__name__}")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Circle

    if ax is None:
        _, ax = plt.subplots(figsize=(6, 6))
    xy = result._loc_coords
    pop = np.asarray(result._loc_population, dtype=float)
    size = 6 + 30 * np.sqrt(pop / max(1, pop.max()))
    ax.scatter(xy[:, 0], xy[:, 1], s=size, c="0.6", lw=0, label="locations")
    has = result._loc_cases > 0
    ax.scatter(xy[has, 0], xy[has, 1], s=size[has], c="tab:red", lw=0, label="with cases")
    rows = result.clusters if max_clusters is None else result.clusters.iloc[:max_clusters]
    for k, row in enumerate(rows.itertuples()):
        sig = row.p_value <= alpha
        circ = Circle((row.x, row.y), max(row.radius, 1e-12), fill=False,
                      lw=2.5 if k == 0 else 1.2, ls="-" if sig or k == 0 else "--",
                      ec="tab:blue" if k == 0 else "tab:purple")
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


def plot_space_time_clusters(result, *, max_clusters: int | None = 5, alpha: float = 0.05, path=None):
    """Space-time clusters: a map of the locations with each cluster's locations (left) and the
    daily case counts with each cluster's days shaded (right).

    Longitude is drawn horizontally for ``distance="great_circle"`` results (coordinates are
    (latitude, longitude)); clusters with ``p_value > alpha`` are drawn hollow.

    Returns
    -------
    matplotlib Figure
    """
    if not hasattr(result, "_day_cases"):
        raise TypeError(f"plot_space_time_clusters needs a SpaceTimeScanResult, got {type(result).__name__}")
    import matplotlib.pyplot as plt

    fig, (ax_map, ax_t) = plt.subplots(1, 2, figsize=(11, 4.8), gridspec_kw={"width_ratios": [1, 1.3]})
    xy = np.asarray(result._loc_xy, dtype=float)
    latlong = result.settings.get("distance") == "great_circle"
    px, py = (xy[:, 1], xy[:, 0]) if latlong else (xy[:, 0], xy[:, 1])
    cases = np.asarray(result._loc_cases, dtype=float)
    ax_map.scatter(px, py, s=6 + 30 * np.sqrt(cases / max(1.0, cases.max())), c="0.65", lw=0, label="locations")
    index = {lid: i for i, lid in enumerate(result._loc_ids)}
    rows = result.clusters if max_clusters is None else result.clusters.iloc[:max_clusters]
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    days = np.arange(len(result._day_cases))
    ax_t.bar(days, result._day_cases, color="0.6", width=0.9)
    for k, row in enumerate(rows.itertuples()):
        col = colours[k % len(colours)]
        members = [index[m] for m in row.location_ids]
        sig = row.p_value <= alpha
        ax_map.scatter(px[members], py[members], s=40, facecolors=col if sig else "none", edgecolors=col,
                       label=f"{k + 1}: p={row.p_value:.3g}")
        lo = result._days.index(row.start)
        hi = result._days.index(row.end)
        ax_t.axvspan(lo - 0.45, hi + 0.45, color=col, alpha=0.25 if sig else 0.1)
        ax_t.annotate(str(k + 1), (hi + 0.45, ax_t.get_ylim()[1] * (0.95 - 0.07 * k)), color=col, fontsize=8)
    ax_map.set_xlabel("longitude" if latlong else "x")
    ax_map.set_ylabel("latitude" if latlong else "y")
    ax_map.set_aspect("equal" if not latlong else 1 / max(1e-6, np.cos(np.radians(np.mean(py)))))
    ax_map.legend(fontsize=7, loc="best")
    step = max(1, len(days) // 8)
    ax_t.set_xticks(days[::step])
    ax_t.set_xticklabels([str(d) for d in result._days[::step]], rotation=30, ha="right", fontsize=7)
    ax_t.set_ylabel("cases per day")
    kind = "prospective" if result.settings.get("prospective") else "retrospective"
    fig.suptitle(f"Space-time permutation scan ({kind}): {len(rows)} cluster(s) shown")
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120, bbox_inches="tight")
    return fig
