"""Figures for SCCS fits (matplotlib imported only when a figure is drawn)."""
from __future__ import annotations

import numpy as np

__all__ = ["plot_irr"]


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
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig
