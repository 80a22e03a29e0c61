"""Posterior predictive checks: simulate from posterior draws and compare summaries with the data.

For each of ``n_draws`` posterior draws a new event history on the observation window
``[T0, T1]`` is simulated from the fitted model by its cluster construction:

* **background** -- a Poisson process with the model's kernel-smoothed intensity
  ``mu0 sum_m phi_D(s - x_m; tau_x) phi_1(u - t_m; tau_t)`` (a mixture: its count is
  Poisson(mu0 sum_m [Phi((T1 - t_m)/tau_t) - Phi((T0 - t_m)/tau_t)]), and each event is a data
  event m, chosen with probability proportional to its kernel mass in the window, moved by
  N(0, tau_x^2 I) in space and by N(0, tau_t^2) in time truncated to the window);
* **offspring** -- every simulated event has Poisson(theta) children after a delay from the
  temporal kernel (exponential or power law) and displaced by N(0, h^2 I) (or by the fit's spatial
  power law with scale h, :func:`~.simulate.draw_displacements`), recursively; children after T1 are
  dropped.

Summaries of each simulation are set beside the observed ones: event counts per time bin,
quantiles of the inter-event times, and the space-time pair-correlation summary
``K(r, u) = #{ordered pairs i != j: |x_i - x_j| <= r, |t_i - t_j| <= u} / N`` (the mean number of
other events within distance r and time lag u of an event; for a Poisson process it grows like
the volume ``N pi r^2 2u / (|A| T)``, clustering makes it larger). Bands are the 2.5% and
97.5% quantiles over the simulations; the posterior predictive p-value of each summary is the
fraction of simulations at least as large as the observed value.
"""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from .._parallel import run_replicates, spawn_seeds
from .._validate import as_float_array, check_bool, check_int, check_probability, check_random_state
from .kde_background import refuse_kde_background
from .kernels import check_kernel, check_spatial_kernel
from .model import is_posterior, prepare_data
from .plot import plot_predictive
from .simulation import draw_delays, draw_displacements

__all__ = ["posterior_predictive", "PosteriorPredictive", "simulate_from_fit", "k_function"]

_MAX_EVENTS = 5_000_000


def k_function(x: np.ndarray, t: np.ndarray, r: np.ndarray, u: np.ndarray) -> np.ndarray:
    """``K[i, j]``: mean number of other events within distance ``r[i]`` and time lag ``u[j]``
    of an event (pairs found in time-sorted blocks, O(N x events within max(u)))."""
    order = np.argsort(t, kind="stable")
    t = t[order]
    x = x[order]
    N = t.size
    out = np.zeros((r.size, u.size))
    if N < 2:
        return out
    umax = float(u.max())
    hi = np.searchsorted(t, t + umax, side="right")
    n0 = 0
    block = 4_000_000
    lens = hi - np.arange(N) - 1
    while n0 < N:
        csum = np.cumsum(lens[n0:])
        n1 = n0 + max(1, int(np.searchsorted(csum, block, side="right")))
        rows = np.repeat(np.arange(n0, n1), lens[n0:n1])
        if rows.size:
            offsets = np.concatenate([[0], np.cumsum(lens[n0:n1])[:-1]])
            m = rows + 1 + (np.arange(rows.size) - np.repeat(offsets, lens[n0:n1]))
            dt = t[m] - t[rows]
            dist = np.sqrt(((x[m] - x[rows]) ** 2).sum(1))
            ri = np.searchsorted(np.sort(r), dist, side="left")  # pairs with dist <= r[k] for k >= ri
            ui = np.searchsorted(np.sort(u), dt, side="left")
            H = np.zeros((r.size + 1, u.size + 1))
            np.add.at(H, (ri, ui), 1.0)
            out += np.cumsum(np.cumsum(H, 0), 1)[: r.size, : u.size]
        n0 = n1
    rank_r = np.argsort(np.argsort(r))
    rank_u = np.argsort(np.argsort(u))
    return 2.0 * out[np.ix_(rank_r, rank_u)] / N  # ordered pairs


def simulate_from_fit(params: dict, x_data: np.ndarray, t_data: np.ndarray, window: tuple, rng, kernel_p: float = 0.0,
                      max_events: int = _MAX_EVENTS, spatial_q: float = 0.0):
    """One history on ``window`` from the fitted model (see the module notes); returns (x, t) sorted by t.
    ``kernel_p``: the power-law exponent (0: exponential); ``params`` with ``omega2`` and ``w`` selects the
    sum of two exponentials (Exp(omega) delays with probability w, Exp(omega2) otherwise). ``spatial_q``: the
    spatial power-law exponent of the offspring displacements (0: Gaussian N(0, h^2 I))."""
    from scipy.special import ndtr, ndtri

    T0, T1 = window
    D = x_data.shape[1]
    mu0, tau_x, tau_t = params["mu0"], params["tau_x"], params["tau_t"]
    theta, omega, h = params["theta"], params["omega"], params["h"]
    lo = ndtr((T0 - t_data) / tau_t)
    hi = ndtr((T1 - t_data) / tau_t)
    mass = np.maximum(hi - lo, 0.0)
    total = mu0 * mass.sum()
    if total > max_events:
        raise ValueError(f"the fitted background expects {total:.3g} events > {max_events}")
    n0 = rng.poisson(total)
    src = rng.choice(t_data.size, size=n0, p=mass / mass.sum()) if n0 else np.zeros(0, np.int64)
    # truncated normal in time by inversion of the cdf between the window's bounds
    v = lo[src] + rng.random(n0) * (hi[src] - lo[src])
    tb = t_data[src] + tau_t * ndtri(np.clip(v, 1e-300, 1 - 1e-16))
    tb = np.clip(tb, T0, T1)
    xb = x_data[src] + tau_x * rng.standard_normal((n0, D))
    xs, ts = [xb], [tb]
    gx, gt = xb, tb
    count = n0
    while gt.size:
        k = rng.poisson(theta, gt.size)
        if not k.any():
            break
        px = np.repeat(gx, k, axis=0)
        pt = np.repeat(gt, k)
        ct = pt + draw_delays(rng, pt.size, omega, kernel_p, params.get("omega2"), params.get("w"))
        keep = ct <= T1
        gt = ct[keep]
        gx = px[keep] + draw_displacements(rng, int(keep.sum()), D, h, spatial_q)
        count += gt.size
        if count > max_events:
            raise ValueError(f"a predictive simulation exceeded {max_events} events (theta near or above 1?)")
        xs.append(gx)
        ts.append(gt)
    x = np.concatenate(xs)
    t = np.concatenate(ts)
    o = np.argsort(t, kind="stable")
    return x[o], t[o]


def _summaries(x, t, window, edges, probs, r, u):
    counts = np.histogram(t, bins=edges)[0].astype(np.float64)
    gaps = np.diff(np.sort(t))
    q = np.quantile(gaps, probs) if gaps.size else np.full(probs.size, np.nan)
    return counts, q, k_function(x, t, r, u), float(t.size)


def _predictive_batch(batch: dict, seed_seq, x, t, window, kernel_p, edges, probs, r, u, spatial_q=0.0):
    rng = np.random.default_rng(seed_seq)
    out = []
    for k in range(len(batch["h"])):
        p = {n: float(batch[n][k]) for n in batch}
        xs, ts = simulate_from_fit(p, x, t, window, rng, kernel_p, spatial_q=spatial_q)
        out.append(_summaries(xs, ts, window, edges, probs, r, u))
    return out


@dataclasses.dataclass(frozen=True, eq=False)
class PosteriorPredictive:
    """Observed summaries, their posterior predictive draws, bands and p-values.

    Built by :func:`posterior_predictive` (the constructor's parameters are its attributes).

    Parameters
    ----------
    bin_edges : ndarray (B + 1,)
        Time bins of the counts.
    counts_observed, counts_simulated : ndarray (B,), (S, B)
        Events per time bin, observed and in each of the S simulations.
    interevent_probs : ndarray (Q,)
        Probability levels of the inter-event time quantiles.
    interevent_observed, interevent_simulated : ndarray (Q,), (S, Q)
        Quantiles of the inter-event times (units of t), observed and simulated.
    r, u : ndarray
        Distances (units of x) and time lags (units of t) of the K summary.
    k_observed, k_simulated : ndarray (R, U), (S, R, U)
        The space-time K summary (pairs within distance r and lag u, per event), observed and simulated.
    n_observed : int
        Observed events.
    n_simulated : ndarray (S,)
        Events per simulation.

    Examples
    --------
    >>> x, t = hp.hawkes.simulate(mu=1.0, theta=0.3, omega=1.0, h=0.2, region=1.0, duration=40.0, seed=3)
    >>> post = hp.hawkes.mcmc(x, t, n_iter=100, burn_in=20, chains=1, fixed={"tau_x": 0.3, "tau_t": 4.0},
    ...                       seed=3, progress=False, backend="cpu")
    >>> pp = hp.hawkes.posterior_predictive(post, x, t, n_draws=8, bins=4, seed=3, progress=False)
    >>> pp.n_observed, pp.n_simulated.shape, pp.k_observed.shape  # K(r, u) at 4 distances x 4 lags
    (37, (8,), (4, 4))
    """

    bin_edges: np.ndarray
    counts_observed: np.ndarray
    counts_simulated: np.ndarray
    interevent_probs: np.ndarray
    interevent_observed: np.ndarray
    interevent_simulated: np.ndarray
    r: np.ndarray
    u: np.ndarray
    k_observed: np.ndarray
    k_simulated: np.ndarray
    n_observed: int
    n_simulated: np.ndarray

    def summary(self):
        """Table (pandas DataFrame) of every scalar summary: observed, simulated mean, 95% band,
        posterior predictive p-value P(simulated >= observed) (with the +1 of a Monte Carlo test),
        and whether the observed value is outside the band."""
        import pandas as pd

        rows = []

        def add(name, obs, sim):
            obs = np.ravel(np.asarray(obs, dtype=np.float64))
            sim = np.asarray(sim, dtype=np.float64).reshape(sim.shape[0], -1)
            lo, hi = np.quantile(sim, [0.025, 0.975], axis=0)
            p = (1.0 + np.sum(sim >= obs[None, :], axis=0)) / (1.0 + sim.shape[0])
            for i in range(obs.size):
                label = name if obs.size == 1 else f"{name}[{i}]"
                rows.append((label, obs[i], sim[:, i].mean(), lo[i], hi[i], p[i], not lo[i] <= obs[i] <= hi[i]))

        add("events", [self.n_observed], self.n_simulated[:, None])
        add("count per bin", self.counts_observed, self.counts_simulated)
        add("inter-event quantile", self.interevent_observed, self.interevent_simulated)
        add("K(r, u)", self.k_observed, self.k_simulated)
        return pd.DataFrame(rows, columns=["summary", "observed", "simulated_mean", "lo_2.5%", "hi_97.5%",
                                           "p_value", "outside_band"])

    def plot(self, path=None):
        """Observed summaries (black) over the simulations' 95% bands (grey)."""
        return plot_predictive(self, path=path)


def posterior_predictive(posterior: Any, x: Any, t: Any, *, n_draws: int = 100, bins: int = 20,
                         interevent_probs: Any = (0.1, 0.25, 0.5, 0.75, 0.9), r: Any = None, u: Any = None,
                         window: Any = None, seed: Any = None, executor: Any = None,
                         progress: bool = True) -> PosteriorPredictive:
    """Posterior predictive checks of a fitted Hawkes model (see the module notes).

    Parameters
    ----------
    posterior : HawkesPosterior
        The fit; its temporal kernel is used for the offspring delays and its spatial kernel
        (``spatial_kernel=`` of :func:`~.mcmc.mcmc`) for their displacements.
    x, t : array_like, array_like
        The data it was fitted to (locations (N, D) and times; any order).
    n_draws : int
        Posterior draws, one simulated history each.
    bins : int
        Equal time bins over the window for the counts (e.g. weeks: ``(T1 - T0) / 168`` for hours).
    interevent_probs : sequence of float in (0, 1)
        Levels of the inter-event time quantiles compared.
    r, u : array_like, optional
        Distances and time lags of the K summary; default 0.5, 1, 2, 4 times the posterior mean
        ``h`` and ``1/omega``.
    window : (T0, T1), optional
        Observation window; default (min t, max t).
    seed, executor, progress : None, int or Generator; Executor or None; bool
        Draws and simulations are seeded per draw (results do not depend on the executor).

    Returns
    -------
    PosteriorPredictive
        Observed summaries beside their simulated draws, 95% bands and p-values.

    Examples
    --------
    >>> x, t = hp.hawkes.simulate(mu=0.5, theta=0.5, omega=2.0, h=0.1, region=2.0, duration=50.0, seed=1)
    >>> post = hp.hawkes.mcmc(x, t, n_iter=200, burn_in=50, chains=2, fixed={"tau_x": 0.5, "tau_t": 5.0},
    ...                       seed=1, progress=False, backend="cpu")
    >>> pp = hp.hawkes.posterior_predictive(post, x, t, n_draws=10, bins=5, seed=1, progress=False)
    >>> pp.counts_simulated.shape, pp.counts_observed.tolist()
    ((10, 5), [60.0, 40.0, 24.0, 39.0, 24.0])
    >>> pp.summary().columns.tolist()
    ['summary', 'observed', 'simulated_mean', 'lo_2.5%', 'hi_97.5%', 'p_value', 'outside_band']
    """
    refuse_kde_background(posterior, "posterior_predictive")
    progress = check_bool(progress, "progress")
    if not is_posterior(posterior):
        raise TypeError(f"posterior must be a HawkesPosterior from hphawkes_py.hawkes.mcmc, got "
                        f"{type(posterior).__name__}")
    data = prepare_data(x, t, window)
    n_draws = check_int(n_draws, "n_draws", minimum=1)
    bins = check_int(bins, "bins", minimum=1, maximum=100_000)
    probs = np.array([check_probability(p, "interevent_probs", high_open=True) for p in np.atleast_1d(interevent_probs)])
    mean = posterior.params_mean()
    r = np.array([0.5, 1.0, 2.0, 4.0]) * mean.h if r is None else as_float_array(np.atleast_1d(r), "r", ndim=1)
    u = np.array([0.5, 1.0, 2.0, 4.0]) / mean.omega if u is None else as_float_array(np.atleast_1d(u), "u", ndim=1)
    for name, v in (("r", r), ("u", u)):
        if np.any(v <= 0):
            raise ValueError(f"{name} must hold positive values, got {v.tolist()}")
    rng = check_random_state(seed)
    kp = check_kernel(posterior.kernel).p
    sq = check_spatial_kernel(posterior.spatial_kernel, data.dim).q
    idx, flat = posterior.select_draws(n_draws, rng)
    edges = np.linspace(data.window[0], data.window[1], bins + 1)
    xs, ts = data.x_sorted, data.t_sorted
    # one job per draw, each with its own child seed (the same on any executor)
    jobs = [{n: v[k:k + 1] for n, v in flat.items()} for k in range(idx.size)]
    seeds = spawn_seeds(rng, len(jobs))
    results = run_replicates(_predictive_batch, jobs, seeds=seeds, executor=executor, progress=progress,
                             desc="predictive simulations", args=(xs, ts, data.window, kp, edges, probs, r, u, sq))
    sims = [s for batch in results for s in batch]
    obs = _summaries(xs, ts, data.window, edges, probs, r, u)
    return PosteriorPredictive(
        bin_edges=edges, counts_observed=obs[0], counts_simulated=np.array([s[0] for s in sims]),
        interevent_probs=probs, interevent_observed=obs[1], interevent_simulated=np.array([s[1] for s in sims]),
        r=r, u=u, k_observed=obs[2], k_simulated=np.array([s[2] for s in sims]), n_observed=int(ts.size),
        n_simulated=np.array([s[3] for s in sims], dtype=np.int64))
