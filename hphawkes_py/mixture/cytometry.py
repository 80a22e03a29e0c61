"""What cytometrists read from a partition: per-cluster marker summaries (gate-like), per-sample
cluster proportions, biaxial plots coloured by cluster and per-sample proportion bars.

The partition is any labelling of the events: a point partition from
:func:`~hphawkes_py.mixture.point_partition`, the mode-merged ``cluster_labels_`` of a fitted
mixture, or its ``predict``/``predict_cluster``.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .._validate import as_float_array, check_in, check_int, check_random_state, describe
from ._labels import as_integer_labels

__all__ = ["cluster_summary", "sample_proportions", "plot_biaxial", "plot_sample_proportions"]


def _labels_for(data, labels, name="labels"):
    lab = np.asarray(labels)
    if lab.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional (one cluster per event), got shape {lab.shape}")
    if lab.shape[0] != len(data):
        raise ValueError(f"{name} has {lab.shape[0]} entries but the data have {len(data)} events")
    return as_integer_labels(lab, name)


def cluster_summary(data, labels, *, statistic: str = "median") -> pd.DataFrame:
    """Gate-like summary of each cluster: its events, its share and its marker medians (or means).

    Parameters
    ----------
    data : pandas.DataFrame or array_like (n, p)
        Events x markers (e.g. :func:`read_fcs` output, transformed); array columns are named
        ``x0, x1, ...``.
    labels : array_like (n,)
        Cluster of each event.
    statistic : {"median", "mean"}, default "median"
        Per-marker summary of each cluster (units of ``data``).

    Returns
    -------
    pandas.DataFrame
        One row per cluster (index ``cluster``, sorted): ``events`` (count), ``proportion``
        (of all events), then one column per marker.

    Examples
    --------
    >>> import pandas as pd
    >>> from hphawkes_py.mixture import cluster_summary
    >>> data = pd.DataFrame({"CD4": [1.0, 3.0, 10.0], "CD8": [5.0, 7.0, 0.0]})
    >>> cluster_summary(data, [0, 0, 1])
             events  proportion   CD4  CD8
    cluster
    0             2    0.666667   2.0  6.0
    1             1    0.333333  10.0  0.0
    """
    check_in(statistic, "statistic", ("median", "mean"))
    if isinstance(data, pd.DataFrame):
        df = data
        bad = [c for c in df.columns if not pd.api.types.is_numeric_dtype(df[c]) or pd.api.types.is_bool_dtype(df[c])]
        if bad:
            raise TypeError(f"data must hold numeric marker columns; {bad} are not numeric")
        # a NaN would be skipped by the medians: refused, as everywhere
        as_float_array(df.to_numpy(dtype=np.float64), "data", ndim=2)
    else:
        arr = as_float_array(data, "data", ndim=2)
        df = pd.DataFrame(arr, columns=[f"x{a}" for a in range(arr.shape[1])])
    lab = _labels_for(df, labels)
    grouped = df.groupby(pd.Index(lab, name="cluster"), sort=True)
    stats = grouped.median() if statistic == "median" else grouped.mean()
    counts = grouped.size()
    head = pd.DataFrame({"events": counts, "proportion": counts / len(df)})
    return pd.concat([head, stats], axis=1)


def sample_proportions(labels, samples) -> pd.DataFrame:
    """Share of each sample's events in each cluster.

    Parameters
    ----------
    labels : array_like (n,)
        Cluster of each event.
    samples : array_like (n,)
        Sample (file, donor) of each event, any hashable values.

    Returns
    -------
    pandas.DataFrame (samples x clusters)
        Each row sums to one; clusters a sample has no event in are 0.

    Examples
    --------
    >>> from hphawkes_py.mixture import sample_proportions
    >>> sample_proportions([0, 0, 1, 1, 1], ["a", "a", "a", "b", "b"])
    cluster         0         1
    sample
    a        0.666667  0.333333
    b        0.000000  1.000000
    """
    s = np.asarray(samples)
    lab = _labels_for(s, labels)
    if s.ndim != 1:
        raise ValueError(f"samples must be 1-dimensional, got shape {s.shape}")
    if pd.isna(pd.Series(s)).any():
        raise ValueError("samples must not contain missing values")
    tab = pd.crosstab(pd.Series(s, name="sample"), pd.Series(lab, name="cluster"), normalize="index")
    return tab


# ----------------------------------------------------------------------------- plots
def plot_biaxial(data, labels, x, y, *, max_points: int = 20000, ax=None, seed=None, s: float = 2.0):
    """Biaxial (dot) plot of two markers, events coloured by cluster, as cytometrists read them.

    Parameters
    ----------
    data : pandas.DataFrame
        Events x markers.
    labels : array_like (n,)
        Cluster of each event.
    x, y : str
        Columns of ``data`` on the horizontal and vertical axes.
    max_points : int, default 20000
        Draw a random subset of this many events when there are more (every cluster keeps its
        share).
    ax : matplotlib Axes, optional
        Where to draw (a new figure otherwise).
    seed : int, optional
        Random state of the subset drawn when there are more than ``max_points`` events (give one
        for the same figure every time; None, as every ``seed`` in the library, draws afresh).
    s : float, default 2.0
        Marker size (points^2).

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import pandas as pd
    >>> from hphawkes_py.mixture import plot_biaxial
    >>> data = pd.DataFrame({"CD4": [1.0, 1.2, 5.0], "CD8": [4.0, 4.1, 0.5]})
    >>> ax = plot_biaxial(data, [0, 0, 1], "CD4", "CD8")
    >>> ax.get_xlabel(), len(ax.collections)
    ('CD4', 2)
    """
    import matplotlib.pyplot as plt

    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"data must be a pandas DataFrame (markers as columns), got {describe(data)}")
    for name, col in (("x", x), ("y", y)):
        if col not in data.columns:
            raise ValueError(f"{name} = {col!r} is not a column of data; columns: {list(data.columns)}")
    lab = _labels_for(data, labels)
    max_points = check_int(max_points, "max_points", minimum=1)
    rows = np.arange(len(data))
    if rows.size > max_points:
        rows = np.sort(check_random_state(seed).choice(rows.size, max_points, replace=False))
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 5))
    clusters = np.unique(lab)
    for j, c in enumerate(clusters):
        r = rows[lab[rows] == c]
        ax.scatter(data[x].to_numpy()[r], data[y].to_numpy()[r], s=s, color=_colour(j, clusters.size),
                   label=str(c), rasterized=True, linewidths=0)
    ax.set_xlabel(str(x))
    ax.set_ylabel(str(y))
    ax.legend(title="cluster", markerscale=4, fontsize="small", loc="best")
    return ax


def plot_sample_proportions(proportions, *, ax=None):
    """Stacked bars: the share of each sample's events in each cluster.

    Parameters
    ----------
    proportions : pandas.DataFrame (samples x clusters)
        As :func:`sample_proportions` returns (rows sum to one).
    ax : matplotlib Axes, optional
        Where to draw.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> from hphawkes_py.mixture import sample_proportions, plot_sample_proportions
    >>> props = sample_proportions([0, 0, 1, 1, 1], ["a", "a", "a", "b", "b"])
    >>> ax = plot_sample_proportions(props)
    >>> len(ax.patches)
    4
    """
    import matplotlib.pyplot as plt

    if not isinstance(proportions, pd.DataFrame):
        raise TypeError(f"proportions must be a DataFrame (samples x clusters), got {describe(proportions)}")
    vals = proportions.to_numpy(dtype=np.float64)
    if vals.size == 0 or not np.isfinite(vals).all() or (vals < 0).any():
        raise ValueError("proportions must be a non-empty table of finite, non-negative shares")
    new_figure = ax is None
    if new_figure:
        _, ax = plt.subplots(figsize=(max(4, 0.6 * len(proportions) + 2), 4))
    bottom = np.zeros(len(proportions))
    pos = np.arange(len(proportions))
    for j, c in enumerate(proportions.columns):
        ax.bar(pos, vals[:, j], bottom=bottom, color=_colour(j, vals.shape[1]), label=str(c))
        bottom += vals[:, j]
    ax.set_xticks(pos)
    ax.set_xticklabels([str(i) for i in proportions.index], rotation=45, ha="right")
    ax.set_ylabel("share of events")
    ax.legend(title="cluster", bbox_to_anchor=(1.02, 1), loc="upper left", fontsize="small")
    if new_figure:
        ax.figure.tight_layout()
    return ax


def _colour(j: int, n: int):
    """Cluster j's colour: tab10 (distinct hues) up to 10 clusters, tab20 up to 20, then repeats."""
    import matplotlib.pyplot as plt

    return plt.get_cmap("tab10" if n <= 10 else "tab20")(j % (10 if n <= 10 else 20))
