"""Figures for SCCS fits (matplotlib imported only when a figure is drawn)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from .._validate import check_in, check_int
from ._tables import lower_columns, require

__all__ = ["plot_irr", "plot_spline_effects", "plot_time_to_event", "plot_pre_exposure", "time_to_event",
           "plot_diagnostics", "plot_time_stability"]


def _finish(fig, path):
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig


def plot_irr(fit, covariates=None, *, level: float = 0.95, method: str = "wald", ax=None, path=None):
    """Forest plot of incidence rate ratios with their intervals (log scale), one row per covariate.

    Parameters
    ----------
    fit : SCCSFit
    covariates : sequence, optional
        Covariate ids to show (default all), in the order drawn from top to bottom.
    level, method :
        Passed to :meth:`SCCSFit.results_table` (``"wald"`` or ``"profile"`` intervals).
    ax : matplotlib Axes, optional
    path : str or Path, optional
        Save the figure there.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    table = fit.results_table(covariates, level=level, method=method)
    if ax is None:
        fig, ax = plt.subplots(figsize=(6.0, 0.45 * len(table) + 1.2))
    else:
        fig = ax.figure
    y = np.arange(len(table))[::-1]
    irr = table["irr"].to_numpy(float)
    lo = table["irr_lower"].to_numpy(float) if "irr_lower" in table else np.exp(table["lower"].to_numpy(float))
    hi = table["irr_upper"].to_numpy(float) if "irr_upper" in table else np.exp(table["upper"].to_numpy(float))
    ax.errorbar(irr, y, xerr=[irr - lo, np.where(np.isfinite(hi), hi - irr, 0.0)], fmt="o", color="k",
                ecolor="0.4", capsize=3)
    ax.axvline(1.0, color="0.6", lw=1, ls="--")
    ax.set_xscale("log")
    ax.set_yticks(y, [str(i) for i in table.index])
    ax.set_xlabel(f"incidence rate ratio ({int(round(100 * level))}% {method} interval)")
    return _finish(fig, path)


def plot_spline_effects(fit, term=None, *, level: float = 0.95, n: int = 200, rate_ratio: bool = True, axes=None,
                        path=None):
    """Fitted age / season / calendar-time effects with pointwise bands, one panel per term.

    The curve and band are :meth:`SCCSFit.spline_effects` (band from the covariance at the mode):
    rate ratios relative to the term's reference (``rate_ratio=True``, log axis) or log effects.

    Parameters
    ----------
    fit : SCCSFit
        A fit of a design with spline terms (:meth:`SCCSData.from_eras` ``age_knots=`` ...).
    term : {"age", "season", "calendar"}, optional
        One term (default all).
    level : float
        Band level.
    n : int
        Grid points per curve.
    rate_ratio : bool
        Plot exp(effect) on a log axis (default) or the log effect.
    axes : sequence of matplotlib Axes, optional
        One per term.
    path : str or Path, optional
        Save the figure there.

    Returns
    -------
    matplotlib.figure.Figure
        ``lines[0]`` of each panel holds the curve (x in years for age), ``collections[0]``
        the band; the knots are drawn as faint vertical lines.
    """
    import matplotlib.pyplot as plt

    table = fit.spline_effects(term, level=level, n=n)
    names = list(dict.fromkeys(table["term"]))
    if axes is None:
        fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 3.2), squeeze=False)
        axes = axes[0]
    else:
        axes = list(np.atleast_1d(axes))
        if len(axes) != len(names):
            raise ValueError(f"axes must hold one Axes per term ({names}), got {len(axes)}")
    fig = axes[0].figure
    data = fit.context.data
    labels = {"age": "age (years)", "season": "month of the year", "calendar": "calendar day"}
    for ax, name in zip(axes, names):
        t = table[table["term"] == name]
        x = t["x"].to_numpy(float)
        xs = x / 365.25 if name == "age" else x
        cols = ("rr", "rr_lower", "rr_upper") if rate_ratio else ("log_effect", "lower", "upper")
        y, lo, hi = (t[c].to_numpy(float) for c in cols)
        ax.plot(xs, y, color="k", lw=1.5)
        ax.fill_between(xs, lo, hi, color="0.7", alpha=0.5, lw=0)
        ax.axhline(1.0 if rate_ratio else 0.0, color="0.5", lw=0.8, ls="--")
        knots = data.spline_term(name).knots
        for k in (knots / 365.25 if name == "age" else knots):
            ax.axvline(k, color="0.85", lw=0.6, zorder=0)
        if rate_ratio:
            ax.set_yscale("log")
        ax.set_xlabel(labels[name])
        ax.set_ylabel(f"{'rate ratio' if rate_ratio else 'log rate ratio'} ({int(round(100 * level))}% band)")
        ax.set_title(name)
    return _finish(fig, path)


def time_to_event(eras, outcomes, covariate_id=None, *, anchor: str = "start", window=(-90, 180)):
    """Days from each exposure era's start (or end) to each outcome of the same person.

    Parameters
    ----------
    eras, outcomes : DataFrame
        As for :meth:`SCCSData.from_eras` (``person_id, start, end, covariate_id`` and
        ``person_id, day``).
    covariate_id : optional
        Only eras of this exposure (default all eras).
    anchor : {"start", "end"}
    window : (int, int)
        Keep differences in ``window[0]..window[1]`` days (inclusive).

    Returns
    -------
    ndarray of int64
        One difference ``day - anchor`` per (outcome, era) pair of a person within ``window``.
    """
    check_in(anchor, "anchor", ("start", "end"))
    if not isinstance(window, (tuple, list)) or len(window) != 2:
        raise TypeError(f"window must be a pair of days (before, after), got {window!r}")
    w0, w1 = check_int(window[0], "window[0]"), check_int(window[1], "window[1]")
    if w1 < w0:
        raise ValueError(f"window must be (before, after) with before <= after, got {window!r}")
    er = lower_columns(eras, "eras")
    oc = lower_columns(outcomes, "outcomes")
    require(er, ("person_id", "start", "end", "covariate_id"), "eras")
    require(oc, ("person_id", "day"), "outcomes")
    if covariate_id is not None:
        if not (er["covariate_id"] == covariate_id).any():
            raise ValueError(f"covariate_id {covariate_id!r} has no eras")
        er = er[er["covariate_id"] == covariate_id]
    pairs = pd.merge(er[["person_id", anchor]], oc[["person_id", "day"]], on="person_id")
    d = (pairs["day"].to_numpy(np.int64) - pairs[anchor].to_numpy(np.int64))
    return d[(d >= w0) & (d <= w1)]


def plot_time_to_event(eras, outcomes, covariate_id=None, *, anchor: str = "start", window=(-90, 180),
                       bin_days: int = 7, ax=None, path=None):
    """Histogram of the days from exposure start (or end) to the outcomes (:func:`time_to_event`).

    A dip just before day 0 means that outcomes delay or prevent exposure (event-dependent
    exposure, which the pre-exposure window checks); a peak after day 0 is the risk window.

    Returns
    -------
    matplotlib.figure.Figure
        The bars (``ax.patches``) have the counts of the ``bin_days``-wide bins from
        ``window[0]``.
    """
    import matplotlib.pyplot as plt

    bin_days = check_int(bin_days, "bin_days", minimum=1)
    d = time_to_event(eras, outcomes, covariate_id, anchor=anchor, window=window)
    edges = np.arange(window[0], window[1] + bin_days + 1, bin_days) - 0.5
    if ax is None:
        fig, ax = plt.subplots(figsize=(6.5, 3.2))
    else:
        fig = ax.figure
    counts, _ = np.histogram(d, bins=edges)
    ax.bar(edges[:-1], counts, width=bin_days, align="edge", color="0.45", edgecolor="white", lw=0.3)
    ax.axvline(0.0, color="firebrick", lw=1)
    what = "" if covariate_id is None else f" of {covariate_id}"
    ax.set_xlabel(f"days from exposure {anchor}{what} to outcome")
    ax.set_ylabel(f"outcomes per {bin_days} days")
    return _finish(fig, path)


def plot_pre_exposure(fit, pre, covariates=None, *, level: float = 0.95, method: str = "wald", ax=None, path=None):
    """The pre-exposure check: IRRs of the pre-exposure window(s) next to the risk windows.

    An IRR of a pre-exposure window (e.g. ``RiskWindow("pre", -30, -1, "start", "start")``)
    clearly below 1 means that the outcome delays exposure (event-dependent exposure, which
    biases SCCS); above 1, that exposure is given because of prodromal signs. The panel draws
    the forest plot of ``pre`` and ``covariates`` (default: every non-spline covariate) with the
    pre-exposure rows in red and their p-value in the title.

    Returns
    -------
    matplotlib.figure.Figure
        ``ax.containers[0]`` holds the risk windows' error bars and ``ax.containers[1]`` the
        pre-exposure windows' (``.lines[0]`` is the line of points).
    """
    import matplotlib.pyplot as plt

    pre = [pre] if isinstance(pre, (str, bytes)) or np.isscalar(pre) else list(pre)
    if covariates is None:
        spline = set(fit.context.data.spline_ids) if fit.context is not None else set()
        covariates = [c for c in fit.coefficients.index if c not in spline and c not in pre]
    covariates = [c for c in covariates if c not in pre]
    table = fit.results_table(list(covariates) + pre, level=level, method=method)
    if ax is None:
        fig, ax = plt.subplots(figsize=(6.0, 0.45 * len(table) + 1.4))
    else:
        fig = ax.figure
    y = np.arange(len(table))[::-1]
    is_pre = np.isin(np.asarray(table.index, dtype=object), np.asarray(pre, dtype=object))
    irr, lo, hi = (table[c].to_numpy(float) for c in ("irr", "irr_lower", "irr_upper"))
    for mask, color in ((~is_pre, "k"), (is_pre, "firebrick")):
        ax.errorbar(irr[mask], y[mask], xerr=[irr[mask] - lo[mask], np.where(np.isfinite(hi[mask]), hi[mask] - irr[mask], 0.0)],
                    fmt="o", color=color, ecolor=color, capsize=3)
    ax.axvline(1.0, color="0.6", lw=1, ls="--")
    ax.set_xscale("log")
    ax.set_yticks(y, [str(i) for i in table.index])
    p = ", ".join(f"{c}: IRR {table.loc[c, 'irr']:.2f}, p = {table.loc[c, 'p']:.2g}" for c in pre)
    ax.set_title(f"pre-exposure check ({p})", fontsize=9)
    ax.set_xlabel(f"incidence rate ratio ({int(round(100 * level))}% {method} interval)")
    return _finish(fig, path)


_PASS_COLOR, _FAIL_COLOR = "seagreen", "firebrick"


def plot_diagnostics(diagnostics, *, path=None):
    """The study diagnostics, one panel per diagnostic: each exposure's value against the OHDSI
    threshold (dashed; the null bounds of an interval check shaded), green where it passes and
    red where it fails. Read it before the estimates: an exposure with a red point is one that
    SelfControlledCaseSeries would not unblind.

    Parameters
    ----------
    diagnostics : StudyDiagnostics
        From :func:`~hphawkes_py.sccs.study_diagnostics`.
    path : str, optional
        Save the figure there.

    Returns
    -------
    matplotlib.figure.Figure
        One axis per diagnostic (in the report's order); each axis's first collection holds the
        points, with one facecolor per point.

    Examples
    --------
    >>> obs, eras, outcomes, _ = hp.sccs.simulate(n_cases=300, n_drugs=2, prevalence=0.5, output="eras", seed=1)
    >>> fit = hp.sccs.fit(hp.sccs.SCCSData.from_eras(obs, eras, outcomes, risk_end=30), prior="none")
    >>> fig = hp.sccs.plot.plot_diagnostics(hp.sccs.study_diagnostics(fit, obs, eras, outcomes))
    >>> [ax.get_title().split(" (")[0] for ax in fig.axes]
    ['mdrr', 'pre_exposure_gain', 'time_stability']
    """
    import matplotlib.pyplot as plt

    if not (hasattr(diagnostics, "items") and hasattr(diagnostics, "wide")):
        raise TypeError(f"diagnostics must be a StudyDiagnostics (hp.sccs.study_diagnostics), "
                        f"got {type(diagnostics).__name__}")
    names = list(dict.fromkeys(d.name for _, d in diagnostics.items))
    if not names:
        raise ValueError("the report holds no diagnostics to plot")
    fig, axes = plt.subplots(len(names), 1, figsize=(6.0, 1.3 + 1.0 * len(names)), squeeze=False)
    for ax, name in zip(axes[:, 0], names):
        rows = [(c, d) for c, d in diagnostics.items if d.name == name]
        labels = ["study" if c is None else str(c) for c, _ in rows]
        y = np.arange(len(rows))[::-1]
        values = np.array([d.value for _, d in rows], dtype=float)
        colors = [_PASS_COLOR if d.passed else _FAIL_COLOR for _, d in rows]
        ax.scatter(values, y, c=colors, zorder=3)
        threshold = rows[0][1].threshold
        if isinstance(threshold, tuple):  # interval checks: the interval must meet the null bounds
            ax.axvspan(threshold[0], threshold[1], color="0.9", zorder=0)
            for yi, (_, d) in zip(y, rows):
                ax.plot([d.details["lower"], d.details["upper"]], [yi, yi], color="0.3", lw=1.2, zorder=2)
            ax.set_xscale("log")
        else:
            ax.axvline(float(threshold), color="0.4", ls="--", lw=1)
            if name == "mdrr":
                ax.set_xscale("log")
        ax.set_yticks(y, labels)
        ax.set_ylim(-0.7, len(rows) - 0.3)
        ax.set_title(f"{name} ({rows[0][1].rule})", fontsize=9)
    return _finish(fig, path)


def plot_time_stability(diagnostic, *, ax=None, path=None):
    """Observed and expected outcomes per calendar month (the time-stability diagnostic): a
    steady gap or a trend between the two means the outcome rate changes over calendar time,
    which SCCS takes for an exposure effect unless calendar time is adjusted for.

    Parameters
    ----------
    diagnostic : Diagnostic or StudyDiagnostics
        :func:`~hphawkes_py.sccs.time_stability`'s result, or a report holding it.
    ax : matplotlib axis, optional
    path : str, optional
        Save the figure there.

    Returns
    -------
    matplotlib.figure.Figure
        ``ax.lines[0]`` is the observed count per month, ``ax.lines[1]`` the expected.

    Examples
    --------
    >>> obs, eras, outcomes, _ = hp.sccs.simulate(n_cases=300, n_drugs=1, output="eras", seed=1)
    >>> fig = hp.sccs.plot.plot_time_stability(hp.sccs.time_stability(obs, outcomes))
    >>> len(fig.axes[0].lines)
    2
    """
    import matplotlib.pyplot as plt

    if hasattr(diagnostic, "items") and not hasattr(diagnostic, "details"):
        found = [d for _, d in diagnostic.items if d.name == "time_stability"]
        if not found:
            raise ValueError("the report has no time_stability diagnostic (give observation_periods and outcomes)")
        diagnostic = found[0]
    if getattr(diagnostic, "name", None) != "time_stability":
        raise TypeError(f"diagnostic must be the result of hp.sccs.time_stability, got {diagnostic!r}")
    table = diagnostic.details["per_month"]
    if ax is None:
        fig, ax = plt.subplots(figsize=(6.5, 3.0))
    else:
        fig = ax.figure
    when = pd.to_datetime(table["month_start"])
    ax.plot(when, table["observed"], color="k", lw=1.2, label="observed")
    ax.plot(when, table["expected"], color=_PASS_COLOR if diagnostic.passed else _FAIL_COLOR, lw=1.2, ls="--",
            label="expected if stable")
    ax.set_ylabel("outcomes per month")
    ax.legend(fontsize=8, frameon=False)
    ax.set_title(f"time stability: ratio {diagnostic.details['ratio']:.3g}, p = {diagnostic.value:.3g} "
                 f"({'PASS' if diagnostic.passed else 'FAIL'})", fontsize=9)
    return _finish(fig, path)
