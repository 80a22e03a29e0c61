"""Forecasts of the conditional intensity over a grid, with posterior uncertainty.

For a location ``s`` and a time ``u`` after the data, the model's conditional intensity given the
events ``(x_m, t_m)`` observed so far is

    lambda(s, u) = mu0 sum_m phi_D(s - x_m; tau_x) phi_1(u - t_m; tau_t)
                 + theta omega sum_{m: t_m < u} exp(-omega (u - t_m)) phi_D(s - x_m; h)

(events per unit area per unit time, in the units of ``x`` and ``t``): what a patrol map shows.
:func:`forecast_intensity` evaluates it on the grid points at each forecast time for posterior
draws and returns its posterior mean and quantiles. It assumes no further events between the
data's end and ``u`` (the usual one-step-ahead conditional intensity); the background term is
the model's kernel-smoothed one. The pair sums run on the engine (``Engine.query_sums``: Numba
on the CPU, the ``hawkes_query`` CUDA kernel on a GPU), windowed with an absolute error below
1e-13 ``mu0 phi_D(0; tau_x) phi_1(0; tau_t)``; the background sums are computed once per
bandwidth pair and time, the trigger sums once per draw and time.
"""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from .._parallel import run_replicates, split_evenly
from .._validate import as_float_array, check_bool, check_int, check_positive, check_probability, check_random_state
from .kde_background import refuse_kde_background
from .model import _check_real_kind, draws_table, engine_factory, is_posterior, prepare_data, rate_kwargs
from .plot import plot_intensity
from .windows import RHO_DEFAULT

__all__ = ["forecast_intensity", "HawkesForecast"]

#: Intensity values (draws x times x grid points) a forecast may hold: 2 x 8 bytes each (total and background).
_MAX_VALUES = 100_000_000


@dataclasses.dataclass(frozen=True, eq=False)
class HawkesForecast:
    """Posterior of the conditional intensity on a grid (see :func:`forecast_intensity`).

    Built by :func:`forecast_intensity` (the constructor's parameters are its attributes).

    Parameters
    ----------
    times : ndarray (T,)
        Forecast times (units of ``t``).
    grid : ndarray (G, D)
        Grid points (units of ``x``).
    mean : ndarray (T, G)
        Posterior mean intensity (events per unit area per unit time).
    quantiles : dict of float -> ndarray (T, G)
        Posterior quantiles of the intensity.
    background_mean : ndarray (T, G)
        Posterior mean of the background part (the rest is triggered by past events).
    n_draws : int
        Draws used (1 for plug-in parameters).
    backend : str
        Engine that ran.

    Examples
    --------
    >>> x, t = hp.hawkes.simulate(mu=1.0, theta=0.3, omega=1.0, h=0.2, region=1.0, duration=40.0, seed=3)
    >>> params = dict(mu0=0.7, tau_x=0.3, tau_t=4.0, theta=0.3, omega=1.0, h=0.2)
    >>> fc = hp.hawkes.forecast_intensity(params, x, t, times=41.0, grid=[[0.25, 0.25], [0.75, 0.75]],
    ...                                   backend="cpu", progress=False)
    >>> fc.values("mean").shape, bool((fc.background_mean <= fc.mean).all())
    ((1, 2), True)
    """

    times: np.ndarray
    grid: np.ndarray
    mean: np.ndarray
    quantiles: dict
    background_mean: np.ndarray
    n_draws: int
    backend: str

    def values(self, stat: str | float = "mean") -> np.ndarray:
        """``"mean"``, ``"background"`` or a quantile level (e.g. 0.975) as a (T, G) array."""
        if stat == "mean":
            return self.mean
        if stat == "background":
            return self.background_mean
        if stat in self.quantiles:
            return self.quantiles[stat]
        raise ValueError(f"stat must be 'mean', 'background' or one of the quantiles {sorted(self.quantiles)}, "
                         f"got {stat!r}")

    def expected_counts(self, cell_area: float, duration: float) -> np.ndarray:
        """Posterior mean expected events per grid cell of area ``cell_area`` over a short
        ``duration`` after each time (mean intensity x area x duration; first-order, so for
        durations short against 1/omega)."""
        return self.mean * check_positive(cell_area, "cell_area") * check_positive(duration, "duration")

    def to_frame(self):
        """Long table: ``time``, ``x0..``, ``mean``, ``background``, one column per quantile."""
        import pandas as pd

        T, G = self.mean.shape
        data = {"time": np.repeat(self.times, G)}
        for d in range(self.grid.shape[1]):
            data[f"x{d}"] = np.tile(self.grid[:, d], T)
        data["mean"] = self.mean.reshape(-1)
        data["background"] = self.background_mean.reshape(-1)
        for q, v in self.quantiles.items():
            data[f"q{100 * q:g}"] = v.reshape(-1)
        return pd.DataFrame(data)

    def plot(self, time_index: int = 0, stat: str | float = "mean", path=None, ax=None):
        """Map of the intensity at one forecast time (see :func:`~.plot.plot_intensity`)."""
        return plot_intensity(self, time_index=time_index, stat=stat, path=path, ax=ax)

    def __repr__(self) -> str:
        return (f"HawkesForecast(times={self.times.size}, grid={self.grid.shape[0]} points, draws={self.n_draws}, "
                f"backend={self.backend!r})")


def _forecast_batch(batch: dict, seed_seq, factory, grid, times, rho) -> tuple[np.ndarray, np.ndarray]:
    """Intensity (draws, T, G) and its background part for the draws of one batch."""
    eng = factory.build()
    m = len(batch["h"])
    lam = np.empty((m, times.size, grid.shape[0]))
    bgp = np.empty_like(lam)
    cache = {}
    for k in range(m):
        p = {n: float(batch[n][k]) for n in batch}
        kw = rate_kwargs(p)
        for j, u in enumerate(times):
            key = (p["tau_x"], p["tau_t"], j)
            if key not in cache:  # fixed bandwidths: once per time
                if len(cache) > 64:
                    cache.clear()
                cache[key] = eng.query_sums(grid, u, p["tau_x"], p["tau_t"], p["h"], p["omega"], rho,
                                            trigger=False, **kw)[0]
            Sq = cache[key]
            Gq = eng.query_sums(grid, u, p["tau_x"], p["tau_t"], p["h"], p["omega"], rho, background=False,
                                **kw)[1]
            bgp[k, j] = p["mu0"] * Sq
            lam[k, j] = bgp[k, j] + p["theta"] * Gq
    return lam, bgp


def forecast_intensity(posterior: Any, x: Any, t: Any, times: Any, grid: Any, *, n_draws: int = 200,
                       quantiles: Any = (0.025, 0.975), seed: Any = None, executor: Any = None,
                       progress: bool = True, backend: str = "auto", threads: int | None = None,
                       dtype: Any = np.float64, exact: bool = False, kernel: Any = None,
                       spatial_kernel: Any = None) -> HawkesForecast:
    """Posterior mean and quantiles of the conditional intensity on a grid at future times.

    Parameters
    ----------
    posterior : HawkesPosterior, HawkesParams or dict
        Posterior draws (``n_draws`` of them, chosen at random) or plug-in parameters.
    x : array_like (N,) or (N, D)
        Locations of the events observed so far (units of the parameters, e.g. km).
    t : array_like (N,)
        Their times (e.g. hours). Any order.
    times : float or array_like (T,)
        Forecast times, each at or after the last event time.
    grid : array_like (G, D) or (G,) for D = 1
        Points where the intensity is evaluated (e.g. raster cell centres).
    n_draws : int
        Posterior draws used (all when fewer are stored).
    quantiles : sequence of float in (0, 1)
        Posterior quantiles reported.
    seed : None, int or Generator
        Chooses the draws.
    executor : None, concurrent.futures.Executor or dask.distributed.Client
        Batches of draws run there; the result does not depend on it.
    progress : bool
        Progress bar over batches.
    backend, threads, dtype, exact : str, int or None, dtype, bool
        As in :func:`~hphawkes_py.hawkes.log_likelihood`.
    kernel : "exponential", "power-law", ("power-law", p) or "exp2", optional
        Temporal trigger; default the posterior's, else exponential.
    spatial_kernel : "gaussian", "power-law" or ("power-law", q), optional
        Spatial trigger (scale ``h``); default the posterior's, else Gaussian.

    Returns
    -------
    HawkesForecast
        Posterior mean, quantiles and background part of the intensity, shape (times, grid).

    Examples
    --------
    >>> x, t = hp.hawkes.simulate(mu=0.5, theta=0.5, omega=2.0, h=0.1, region=2.0, duration=50.0, seed=1)
    >>> p = hp.hawkes.HawkesParams(mu0=0.5, tau_x=0.5, tau_t=5.0, theta=0.5, omega=2.0, h=0.1)
    >>> fc = hp.hawkes.forecast_intensity(p, x, t, times=[50.0, 52.0], grid=[[0.5, 0.5], [1.0, 1.0], [1.5, 1.5]],
    ...                                   backend="cpu", progress=False)
    >>> fc.mean.shape  # (times, grid points), events per km^2 per hour
    (2, 3)
    >>> fc.mean.round(3)
    array([[0.065, 0.1  , 0.112],
           [0.043, 0.067, 0.075]])

    From a posterior, the mean and 95% band over 20 draws:

    >>> post = hp.hawkes.mcmc(x, t, n_iter=200, burn_in=50, chains=2, fixed={"tau_x": 0.5, "tau_t": 5.0},
    ...                       seed=1, progress=False, backend="cpu")
    >>> fc = hp.hawkes.forecast_intensity(post, x, t, times=50.0, grid=[[1.0, 1.0]], n_draws=20, seed=1,
    ...                                   backend="cpu", progress=False)
    >>> fc.n_draws, sorted(fc.quantiles)
    (20, [0.025, 0.975])
    """
    refuse_kde_background(posterior, "forecast_intensity")
    progress = check_bool(progress, "progress")
    data = prepare_data(x, t, None)
    D = data.dim
    _check_real_kind(times, "times")
    times_arr = as_float_array(np.atleast_1d(times) if np.ndim(times) == 0 else times, "times", ndim=1, min_rows=1)
    last = float(data.t_sorted[-1])
    if np.any(times_arr < last):
        i = int(np.argmax(times_arr < last))
        raise ValueError(f"times must be at or after the last event time {last!r} (a forecast), got times[{i}] = "
                         f"{float(times_arr[i])!r}")
    _check_real_kind(grid, "grid")
    g = as_float_array(grid, "grid", ndim=(1, 2), min_rows=1)
    if g.ndim == 1:
        if D != 1:
            raise ValueError(f"grid must have shape (G, {D}) like x, got shape {g.shape}")
        g = g[:, None]
    if g.shape[1] != D:
        raise ValueError(f"grid must have shape (G, {D}) like x, got shape {g.shape}")
    n_draws = check_int(n_draws, "n_draws", minimum=1)
    if isinstance(quantiles, (int, float)):
        quantiles = (quantiles,)
    qs = tuple(check_probability(q, "quantiles", high_open=True) for q in quantiles)
    rng = check_random_state(seed)
    if kernel is None:
        kernel = posterior.kernel if is_posterior(posterior) else "exponential"
    if spatial_kernel is None:
        spatial_kernel = posterior.spatial_kernel if is_posterior(posterior) else "gaussian"
    factory = engine_factory(data, backend=backend, dtype=dtype, threads=threads, exact=exact, kernel=kernel,
                             spatial_kernel=spatial_kernel)
    flat = draws_table(posterior, n_draws, rng, factory.kernel, factory.dtype)
    n_values = flat["h"].size * times_arr.size * g.shape[0]
    if n_values > _MAX_VALUES:
        raise ValueError(f"n_draws x times x grid points = {n_values:,} intensity values would need "
                         f"{2 * 8 * n_values / 2**30:.1f} GiB (limit {_MAX_VALUES:,} values); use fewer draws, "
                         "times or grid points")
    # the trigger window's rho (bound (3)): theta <= mu0 / rho for every draw
    rho = min(RHO_DEFAULT, float(np.min(flat["mu0"] / flat["theta"])) / 16.0)
    m = flat["h"].size
    sizes = [m] if executor is None else split_evenly(m, 8)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    batches = [{n: v[a:a + s] for n, v in flat.items()} for a, s in zip(starts, sizes)]
    seeds = [np.random.SeedSequence(0)] * len(batches)  # deterministic work: the seeds are unused
    results = run_replicates(_forecast_batch, batches, seeds=seeds, executor=executor,
                             progress=progress and len(batches) > 1, desc="forecast batches",
                             args=(factory, g, times_arr, rho))
    lam = np.concatenate([r[0] for r in results])
    bgp = np.concatenate([r[1] for r in results])
    quant = {q: np.quantile(lam, q, axis=0) for q in qs}
    return HawkesForecast(times=times_arr, grid=g, mean=lam.mean(0), quantiles=quant, background_mean=bgp.mean(0),
                          n_draws=int(m), backend=factory.backend)
