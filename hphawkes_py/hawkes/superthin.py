"""Spatial residuals by super-thinning (Clements, Schoenberg & Veen 2012).

Choose a rate ``k`` (events per unit area per unit time). Every observed event in the region
``A`` is kept with probability ``min(1, k / lambda(x_n, t_n))``, and points of a Poisson process
with intensity ``max(k - lambda(s, u), 0)`` are added on ``A x [T0, T1]`` (drawn by thinning a
homogeneous Poisson process of rate ``k``). If ``lambda`` is the true conditional intensity the
result is a homogeneous Poisson process of rate ``k``: clusters of residual points show where the
model under-predicts (kept events), gaps where it over-predicts. Uniformity is tested by a
chi-square test of the counts in ``cells`` equal space-time cells.

Events outside ``A`` stay in the history (they trigger events inside) but are not thinned.
The intensities come from the likelihood engine (events: ``mu0 S_n + theta G_n``; added
points: ``Engine.query_sums``), so the CPU and GPU engines both serve.
"""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from .._validate import as_float_array, check_bool, check_int, check_positive, check_random_state
from .kde_background import refuse_kde_background
from .model import (_as_params, _check_params_range, check_kernel_params, engine_factory, is_posterior, prepare_data,
                    rate_kwargs)

__all__ = ["super_thinned_residuals", "SuperThinnedResiduals"]


@dataclasses.dataclass(frozen=True, eq=False)
class SuperThinnedResiduals:
    """Result of :func:`super_thinned_residuals`.

    Built by :func:`super_thinned_residuals` (the constructor's parameters are its attributes).

    Parameters
    ----------
    x : ndarray (M, D)
        Locations of the residual points (kept events, then added points).
    t : ndarray (M,)
        Their times.
    kept : ndarray of bool (M,)
        True for kept observed events, False for added points.
    k : float
        The rate of the residual process under the model (events per unit area per unit time).
    expected : float
        ``k |A| (T1 - T0)``, the expected number of residual points.
    chi2_statistic, chi2_pvalue : float
        Chi-square test of the counts in ``cells`` equal space-time cells against uniformity.
    counts : ndarray
        Counts per cell (space cells per axis ..., time cells).

    Examples
    --------
    >>> x, t = hp.hawkes.simulate(mu=1.0, theta=0.3, omega=1.0, h=0.2, region=1.0, duration=40.0, seed=3)
    >>> params = dict(mu0=0.7, tau_x=0.3, tau_t=4.0, theta=0.3, omega=1.0, h=0.2)
    >>> st = hp.hawkes.super_thinned_residuals(params, x, t, [[0, 1], [0, 1]], cells=2, seed=3, progress=False,
    ...                                        backend="cpu")
    >>> st.counts.shape, int(st.counts.sum()) == len(st.t)  # 2 x 2 space cells, 2 time cells
    ((2, 2, 2), True)
    """

    x: np.ndarray
    t: np.ndarray
    kept: np.ndarray
    k: float
    expected: float
    chi2_statistic: float
    chi2_pvalue: float
    counts: np.ndarray

    @property
    def count_z(self) -> float:
        """``(M - expected) / sqrt(expected)``: about N(0, 1) under the model."""
        return (self.t.size - self.expected) / np.sqrt(self.expected)

    def __repr__(self) -> str:
        return (f"SuperThinnedResiduals(points={self.t.size} (kept {int(self.kept.sum())}, added "
                f"{int((~self.kept).sum())}), expected={self.expected:.1f}, chi2 p={self.chi2_pvalue:.3g})")


def _region(region, D):
    r = as_float_array(region, "region", shape=(D, 2))
    if not np.all(r[:, 1] > r[:, 0]):
        raise ValueError(f"region must be ({D}, 2) bounds (low, high) with low < high, got {r.tolist()}")
    return r


def super_thinned_residuals(posterior_or_params: Any, x: Any, t: Any, region: Any, *, k: float | None = None,
                            cells: int = 4, window: Any = None, seed: Any = None, kernel: Any = None,
                            spatial_kernel: Any = None,
                            backend: str = "auto", threads: int | None = None,
                            progress: bool = True) -> SuperThinnedResiduals:
    """Super-thinned residuals of a fitted Hawkes model on a rectangular region (see the module notes).

    Parameters
    ----------
    posterior_or_params : HawkesPosterior, HawkesParams or dict
        A posterior (its posterior mean is used) or parameters.
    x, t : array_like, array_like
        The data (any order): locations (N, D) in the units of the parameters, times (N,).
    region : array_like (D, 2)
        Bounds (low, high) of the region per coordinate (units of x).
    k : float, optional
        Rate of the residual process; default the observed rate ``N_A / (|A| (T1 - T0))``.
    cells : int
        Cells per axis (space and time) of the uniformity test.
    window : (T0, T1), optional
        Observation window (units of t); default (min t, max t).
    seed : None, int or Generator
        Random seed of the thinning and the added points.
    kernel : "exponential", "power-law", ("power-law", p) or "exp2", optional
        Temporal kernel; default the posterior's, else exponential.
    spatial_kernel : "gaussian", "power-law" or ("power-law", q), optional
        Spatial trigger (scale ``h``); default the posterior's, else Gaussian.
    backend, threads : str, int or None
        Engine (as in :func:`~hphawkes_py.hawkes.log_likelihood`).
    progress : bool
        Progress bar on stderr.
        Unused (the work is one pass); accepted for the common signature.

    Returns
    -------
    SuperThinnedResiduals
        The residual points (kept events and added points) and the chi-square uniformity test.

    Examples
    --------
    >>> x, t = hp.hawkes.simulate(mu=0.5, theta=0.5, omega=2.0, h=0.1, region=2.0, duration=50.0, seed=1)
    >>> p = hp.hawkes.HawkesParams(mu0=0.5, tau_x=0.5, tau_t=5.0, theta=0.5, omega=2.0, h=0.1)
    >>> st = hp.hawkes.super_thinned_residuals(p, x, t, region=[[0, 2], [0, 2]], seed=1, progress=False,
    ...                                        backend="cpu")
    >>> int(st.kept.sum()), st.x.shape, round(st.expected, 1), st.counts.shape
    (123, (218, 2), 179.0, (4, 4, 4))
    """
    refuse_kde_background(posterior_or_params, "super_thinned_residuals")
    from scipy import stats

    check_bool(progress, "progress")
    data = prepare_data(x, t, window)
    D = data.dim
    bounds = _region(region, D)
    cells = check_int(cells, "cells", minimum=1, maximum=100)
    is_post = is_posterior(posterior_or_params)
    p = posterior_or_params.params_mean() if is_post else _as_params(posterior_or_params)
    if kernel is None:
        kernel = posterior_or_params.kernel if is_post else "exponential"
    if spatial_kernel is None:
        spatial_kernel = posterior_or_params.spatial_kernel if is_post else "gaussian"
    factory = engine_factory(data, backend=backend, threads=threads, kernel=kernel, spatial_kernel=spatial_kernel)
    check_kernel_params(p, factory.kernel, "posterior_or_params")
    _check_params_range(p, factory.dtype)
    rng = check_random_state(seed)
    T0, T1 = data.window
    area = float(np.prod(bounds[:, 1] - bounds[:, 0]))
    inside = np.all((data.x_sorted >= bounds[:, 0]) & (data.x_sorted <= bounds[:, 1]), axis=1)
    if not inside.any():
        raise ValueError("region contains no event")
    k = float(inside.sum()) / (area * (T1 - T0)) if k is None else check_positive(k, "k")
    eng = factory.build()
    eng.set_background(p.tau_x, p.tau_t)
    eng.set_trigger(p.h, p.omega, **rate_kwargs(p))
    lam = p.mu0 * eng.background_sums() + p.theta * eng.trigger_sums()
    keep = inside & (rng.random(lam.size) < np.minimum(1.0, k / lam))
    n_cand = rng.poisson(k * area * (T1 - T0))
    cx = bounds[:, 0] + rng.random((n_cand, D)) * (bounds[:, 1] - bounds[:, 0])
    ct = np.sort(T0 + rng.random(n_cand) * (T1 - T0))
    lam_c = np.empty(n_cand)
    for i in range(n_cand):  # one query per candidate time (the query kernel takes one time)
        S, G = eng.query_sums(cx[i:i + 1], ct[i], p.tau_x, p.tau_t, p.h, p.omega, **rate_kwargs(p))
        lam_c[i] = p.mu0 * S[0] + p.theta * G[0]
    add = rng.random(n_cand) < np.maximum(k - lam_c, 0.0) / k
    rx = np.concatenate([data.x_sorted[keep], cx[add]])
    rt = np.concatenate([data.t_sorted[keep], ct[add]])
    kept = np.concatenate([np.ones(int(keep.sum()), bool), np.zeros(int(add.sum()), bool)])
    edges = [np.linspace(lo, hi, cells + 1) for lo, hi in bounds] + [np.linspace(T0, T1, cells + 1)]
    counts, _ = np.histogramdd(np.column_stack([rx, rt]), bins=edges)
    chi2, pv = stats.chisquare(counts.ravel()) if counts.sum() > 0 else (np.nan, np.nan)
    return SuperThinnedResiduals(x=rx, t=rt, kept=kept, k=k, expected=k * area * (T1 - T0),
                                 chi2_statistic=float(chi2), chi2_pvalue=float(pv), counts=counts)
