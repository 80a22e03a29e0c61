"""Figures for Hawkes posteriors: traces, densities, and a map of self-excitation probabilities.

matplotlib is imported lazily; figures are returned (and saved when ``path`` is given).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

__all__ = ["plot_trace", "plot_density", "plot_self_excitation_map", "plot_residuals", "plot_intensity",
           "plot_predictive"]

_LABELS = {
    "h": "h (spatial trigger bandwidth)",
    "omega": "omega (temporal trigger rate)",
    "theta": "theta (self-excitatory weight)",
    "mu0": "mu0 (background weight)",
    "tau_x": "tau_x (background spatial bandwidth)",
    "tau_t": "tau_t (background temporal bandwidth)",
}


def _pyplot():
    import matplotlib

    if matplotlib.get_backend().lower() not in ("agg", "pdf", "svg", "ps", "cairo") and not _has_display():
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _has_display() -> bool:
    import os

    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _params(posterior, params: Sequence[str] | None) -> list[str]:
    names = list(posterior.sampled) if params is None else list(params)
    unknown = [p for p in names if p not in posterior.draws]
    if unknown:
        raise ValueError(f"params has unknown name(s) {unknown}; known: {list(posterior.draws)}")
    return names


def _finish(fig, path):
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig


def plot_trace(posterior, params: Sequence[str] | None = None, path: Any = None, labels: dict | None = None):
    """Trace of each parameter, one line per chain (post burn-in draws)."""
    plt = _pyplot()
    names = _params(posterior, params)
    labels = {**_LABELS, **(labels or {})}
    fig, axes = plt.subplots(len(names), 1, figsize=(8, 2.0 * len(names)), squeeze=False)
    for ax, name in zip(axes[:, 0], names):
        draws = posterior.draws[name]
        for c in range(draws.shape[0]):
            ax.plot(np.arange(posterior.burn_in, posterior.burn_in + draws.shape[1]), draws[c], lw=0.6,
                    label=f"chain {c}")
        ax.set_ylabel(labels.get(name, name), fontsize=8)
    axes[-1, 0].set_xlabel("iteration (sweep)")
    if posterior.chains > 1:
        axes[0, 0].legend(fontsize=7, ncol=posterior.chains, loc="upper right")
    return _finish(fig, path)


def plot_density(posterior, params: Sequence[str] | None = None, path: Any = None, labels: dict | None = None):
    """Kernel density estimate of each parameter's posterior, one curve per chain plus all chains."""
    from matplotlib.ticker import MaxNLocator
    from scipy.stats import gaussian_kde

    plt = _pyplot()
    names = _params(posterior, params)
    labels = {**_LABELS, **(labels or {})}
    ncol = min(2, len(names))
    nrow = int(np.ceil(len(names) / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.5 * ncol, 3.0 * nrow), squeeze=False)
    for ax, name in zip(axes.ravel(), names):
        draws = posterior.draws[name]
        pooled = draws.ravel()
        lo, hi = pooled.min(), pooled.max()
        if hi <= lo:  # a fixed parameter: nothing to smooth
            ax.axvline(lo, color="k")
        else:
            grid = np.linspace(lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo), 256)
            for c in range(draws.shape[0]):
                if np.ptp(draws[c]) > 0:
                    ax.plot(grid, gaussian_kde(draws[c])(grid), lw=0.8, alpha=0.7)
            ax.plot(grid, gaussian_kde(pooled)(grid), color="k", lw=1.6, label="all chains")
        ax.set_xlabel(labels.get(name, name), fontsize=8)
        ax.set_yticks([])
        ax.xaxis.set_major_locator(MaxNLocator(5))
        ax.tick_params(axis="x", labelsize=8)
    for ax in axes.ravel()[len(names):]:
        ax.set_visible(False)
    return _finish(fig, path)


def plot_self_excitation_map(x: Any, y: Any, prob: Any, path: Any = None, *, title: str | None = None,
                             units: str = "km"):
    """Map of events coloured by their (posterior mean) self-excitation probability.

    Events are drawn in increasing order of probability so that the likely
    self-excited ones are on top.
    """
    plt = _pyplot()
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    prob = np.asarray(prob, dtype=float)
    order = np.argsort(prob, kind="stable")
    fig, ax = plt.subplots(figsize=(7, 7))
    sc = ax.scatter(x[order], y[order], c=prob[order], s=2, cmap="viridis", vmin=0, vmax=1, linewidths=0)
    fig.colorbar(sc, ax=ax, shrink=0.8, label="posterior mean self-excitation probability")
    ax.set_aspect("equal")
    ax.set_xlabel(f"x ({units})")
    ax.set_ylabel(f"y ({units})")
    if title:
        ax.set_title(title)
    return _finish(fig, path)


def plot_residuals(res, path: Any = None):
    """Time-rescaling diagnostics of :func:`~hphawkes_py.hawkes.residuals`: QQ plot of the
    uniform residuals with the 95% Kolmogorov-Smirnov band (1.36 / sqrt(N)), and the rescaled
    times against the event number (a unit-slope line under the model)."""
    plt = _pyplot()
    u = np.sort(np.asarray(res.uniform))
    n = u.size
    q = (np.arange(1, n + 1) - 0.5) / n
    band = 1.36 / np.sqrt(n)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4.2))
    a1.plot(q, u, ".", ms=2, color="C0")
    a1.plot([0, 1], [0, 1], "k-", lw=1)
    a1.plot([0, 1], [band, 1 + band], "k--", lw=0.8)
    a1.plot([0, 1], [-band, 1 - band], "k--", lw=0.8)
    a1.set(xlim=(0, 1), ylim=(0, 1), xlabel="Uniform quantile", ylabel="1 - exp(-interval)",
           title=f"KS = {res.ks_statistic:.3f}, p = {res.ks_pvalue:.3g}")
    a2.plot(np.arange(1, n + 1), res.rescaled_times, lw=1, color="C0")
    a2.plot([0, n], [0, n], "k--", lw=0.8)
    a2.set(xlabel="event number", ylabel="Lambda(t_n)", title=f"expected {res.total:.0f} vs observed {n}")
    return _finish(fig, path)


def plot_intensity(forecast, time_index: int = 0, stat: str = "mean", path: Any = None, ax=None):
    """Map of a forecast's conditional intensity (mean or a quantile) at one time, on its grid
    points (colour = intensity per unit area per unit time)."""
    plt = _pyplot()
    values = forecast.values(stat)[time_index]
    pts = forecast.grid
    fig = None
    if ax is None:
        fig, ax = plt.subplots(figsize=(6, 5))
    if pts.shape[1] >= 2:
        sc = ax.scatter(pts[:, 0], pts[:, 1], c=values, s=8, marker="s", cmap="viridis")
        ax.set(xlabel="x", ylabel="y", aspect="equal")
    else:
        sc = None
        ax.plot(pts[:, 0], values)
        ax.set(xlabel="x", ylabel="intensity")
    ax.set_title(f"{stat} intensity at t = {forecast.times[time_index]:g}")
    if sc is not None:
        ax.figure.colorbar(sc, ax=ax, label="events per unit area per unit time")
    return _finish(ax.figure if fig is None else fig, path)


def plot_predictive(pp, path: Any = None):
    """Posterior predictive checks: counts per time bin, inter-event time quantiles and K(r, u) at
    the largest lag, observed (black) against the simulations' 95% bands (grey)."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))

    def band(ax, xs, sim, obs):
        lo, hi = np.quantile(sim, [0.025, 0.975], axis=0)
        ax.fill_between(xs, lo, hi, color="0.8", label="95% predictive band")
        ax.plot(xs, np.median(sim, axis=0), color="0.5", lw=1)
        ax.plot(xs, obs, "k.-", lw=1, label="observed")

    mids = 0.5 * (pp.bin_edges[1:] + pp.bin_edges[:-1])
    band(axes[0], mids, pp.counts_simulated, pp.counts_observed)
    axes[0].set(xlabel="time", ylabel="events per bin", title="counts")
    axes[0].legend(fontsize=8)
    band(axes[1], pp.interevent_probs, pp.interevent_simulated, pp.interevent_observed)
    axes[1].set(xlabel="probability", ylabel="inter-event time", yscale="log", title="inter-event quantiles")
    j = int(np.argmax(pp.u))
    band(axes[2], pp.r, pp.k_simulated[:, :, j], pp.k_observed[:, j])
    axes[2].set(xlabel="distance r", ylabel="K(r, u)", title=f"K at lag u = {pp.u[j]:.3g}")
    return _finish(fig, path)
