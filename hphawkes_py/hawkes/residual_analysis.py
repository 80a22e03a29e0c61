"""Goodness of fit by time rescaling (Ogata 1988): residuals of the spatiotemporal Hawkes model.

If the model's conditional intensity is right, the transformed times

    tau_n = Lambda(t_n) = integral_{T0}^{t_n} integral_{R^D} lambda(s, u) ds du
          = mu0 sum_m [Phi((t_n - t_m)/tau_t) - Phi((T0 - t_m)/tau_t)]
            + theta sum_{m: t_m < t_n} [1 - exp(-omega (t_n - t_m))]

form a unit-rate Poisson process on [0, Lambda(T1)]: the intervals ``tau_n - tau_{n-1}``
(``tau_0 = 0``) are independent Exp(1), so ``u_n = 1 - exp(-(tau_n - tau_{n-1}))`` are
Uniform(0, 1), which a Kolmogorov-Smirnov test checks, and ``Lambda(T1)`` is close to N
(Poisson). The spatial integral is over all of R^D (1), as in the likelihood, so the transform
needs only the times and costs O(N) per parameter set plus, once per ``tau_t``, a windowed sum of
normal-cdf differences (terms with ``|t_n - t_m| > 9 tau_t`` are 0 or 1 to 1e-19 and are counted
in closed form).

Tied times give zero intervals (the model has no ties); their number is reported.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from .._progress import progress_bar
from .._validate import check_bool, check_int, check_random_state
from .compensator import background_integral_part, phi_diff, trigger_integral_part
from .kde_background import refuse_kde_background
from .kernels import check_kernel, check_spatial_kernel
from .model import (HawkesParams, _as_params, _check_params_range, check_kernel_params, is_posterior, prepare_data,
                    rate_kwargs)
from .plot import plot_residuals

__all__ = ["residuals", "HawkesResiduals", "rescaled_times"]

_Z_CUT = 9.0  # Phi(-9) = 1.1e-19: beyond 9 tau_t a background term is 0 or 1 to that accuracy
_PAIRS_PER_BLOCK = 4_000_000


def _background_cumulative(t: np.ndarray, T0: float, tau_t: float) -> np.ndarray:
    """B_n = sum_m [Phi((t_n - t_m)/tau_t) - Phi((T0 - t_m)/tau_t)] for sorted t (float64)."""
    from scipy.special import erfc

    N = t.size
    cut = _Z_CUT * tau_t
    # terms with t_m <= t_n - cut are 1 - Phi((T0 - t_m)/tau_t) = Phi((t_m - T0)/tau_t); prefix sums of them
    full = 0.5 * erfc(-(t - T0) / (tau_t * math.sqrt(2.0)))
    prefix = np.concatenate([[0.0], np.cumsum(full)])
    lo = np.searchsorted(t, t - cut, side="right")   # m < lo: saturated at 1
    hi = np.searchsorted(t, t + cut, side="left")    # m >= hi: both Phi ~ 0
    out = prefix[lo].copy()
    lens = hi - lo
    n0 = 0
    while n0 < N:
        # rows n0..n1 with at most _PAIRS_PER_BLOCK pairs in all (at least one row)
        csum = np.cumsum(lens[n0:])
        n1 = n0 + max(1, int(np.searchsorted(csum, _PAIRS_PER_BLOCK, side="right")))
        rows = np.repeat(np.arange(n0, n1), lens[n0:n1])
        starts = np.repeat(lo[n0:n1] - np.concatenate([[0], np.cumsum(lens[n0:n1])[:-1]]), lens[n0:n1])
        m = starts + np.arange(rows.size)
        vals = phi_diff((t[rows] - t[m]) / tau_t, (T0 - t[m]) / tau_t)
        out[n0:n1] += np.bincount(rows - n0, weights=vals, minlength=n1 - n0)
        n0 = n1
    return out


def _trigger_cumulative(t: np.ndarray, omega: float) -> np.ndarray:
    """A_n = sum_{m: t_m < t_n} [1 - exp(-omega (t_n - t_m))] for sorted t, O(N) by recursion over
    the distinct times: E_k = sum_{j<k} c_j exp(-omega (u_k - u_j)) = exp(-omega (u_k - u_{k-1})) (E_{k-1} + c_{k-1})."""
    u, first, counts = np.unique(t, return_index=True, return_counts=True)
    decay = np.exp(-omega * np.diff(u))
    E = np.zeros(u.size)
    for k in range(1, u.size):  # O(distinct times); a Python loop is ~0.1 s per million
        E[k] = decay[k - 1] * (E[k - 1] + counts[k - 1])
    before = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.float64)
    per_time = before - E
    return np.repeat(per_time, counts)


def _trigger_cumulative_power(t: np.ndarray, omega: float, p: float) -> np.ndarray:
    """A_n = sum_{m: t_m < t_n} [1 - (1 + omega (t_n - t_m))^(1 - p)] (power-law kernel): no
    recursion exists, so all earlier pairs are summed, in blocks of rows (O(N^2) time, O(N) memory
    per block)."""
    N = t.size
    out = np.zeros(N)
    rows = max(1, _PAIRS_PER_BLOCK // max(N, 1))
    for a in range(0, N, rows):
        b = min(N, a + rows)
        d = t[a:b, None] - t[None, :b]
        pos = d > 0
        v = -np.expm1((1.0 - p) * np.log1p(omega * np.where(pos, d, 0.0)))
        out[a:b] = np.where(pos, v, 0.0).sum(1)
    return out


def rescaled_times(t_sorted: np.ndarray, params: HawkesParams, window: tuple, *, background=None,
                   kernel_p: float = 0.0) -> np.ndarray:
    """``Lambda(t_n)`` for sorted times (see the module notes); ``background`` reuses B for the same
    tau_t; ``kernel_p`` > 1 selects the power-law trigger (0: exponential); ``params`` with ``omega2``
    and ``w`` the sum of two exponentials (w A(omega) + (1 - w) A(omega2), both by the O(N) recursion)."""
    B = _background_cumulative(t_sorted, window[0], params.tau_t) if background is None else background
    if params.omega2 is not None:
        w = params.w
        A = ((w * _trigger_cumulative(t_sorted, params.omega) if w > 0.0 else 0.0)
             + ((1.0 - w) * _trigger_cumulative(t_sorted, params.omega2) if w < 1.0 else 0.0))
    elif kernel_p:
        A = _trigger_cumulative_power(t_sorted, params.omega, kernel_p)
    else:
        A = _trigger_cumulative(t_sorted, params.omega)
    return params.mu0 * B + params.theta * A


def _ks(u: np.ndarray) -> tuple[float, float]:
    from scipy import stats

    r = stats.kstest(u, "uniform")
    return float(r.statistic), float(r.pvalue)


@dataclasses.dataclass(frozen=True, eq=False)
class HawkesResiduals:
    """Time-rescaling residuals of a Hawkes fit (see :func:`residuals`).

    Built by :func:`residuals` (the constructor's parameters are its attributes).

    Parameters
    ----------
    rescaled_times : ndarray (N,)
        ``Lambda(t_n)`` in time order (dimensionless: expected number of events up to ``t_n``).
    order : ndarray (N,)
        Index in the caller's data of each time-ordered event.
    intervals : ndarray (N,)
        ``Lambda(t_n) - Lambda(t_{n-1})`` (``Lambda(t_0) = Lambda(T0) = 0``): Exp(1) under the model.
    uniform : ndarray (N,)
        ``1 - exp(-intervals)``: Uniform(0, 1) under the model.
    ks_statistic, ks_pvalue : float
        Kolmogorov-Smirnov test of ``uniform`` against Uniform(0, 1).
    total : float
        ``Lambda(T1)``, the expected number of events in the window (N under the model, +- sqrt(N)).
    n_events, n_ties : int
        Events, and events tied in time with an earlier one (zero intervals).
    params : HawkesParams
        The parameters the residuals were computed at.
    draws : pandas.DataFrame or None
        Per posterior draw (``n_draws=``): the draw's flat index, ``ks_statistic``, ``ks_pvalue``, ``total``.

    Examples
    --------
    >>> x, t = hp.hawkes.simulate(mu=1.0, theta=0.3, omega=1.0, h=0.2, region=1.0, duration=40.0, seed=3)
    >>> params = dict(mu0=0.7, tau_x=0.3, tau_t=4.0, theta=0.3, omega=1.0, h=0.2)
    >>> res = hp.hawkes.residuals(params, x, t, progress=False)
    >>> res.to_frame().columns.tolist()
    ['event', 'rescaled_time', 'interval', 'uniform']
    >>> round(res.count_z, 2)  # observed minus expected count, in standard deviations
    0.66
    """

    rescaled_times: np.ndarray
    order: np.ndarray
    intervals: np.ndarray
    uniform: np.ndarray
    ks_statistic: float
    ks_pvalue: float
    total: float
    n_events: int
    n_ties: int
    params: HawkesParams
    draws: Any = None

    @property
    def count_z(self) -> float:
        """``(N - Lambda(T1)) / sqrt(Lambda(T1))``: about N(0, 1) under the model."""
        return (self.n_events - self.total) / math.sqrt(self.total) if self.total > 0 else math.nan

    def to_frame(self):
        """Per event, in time order: ``event`` (caller's index), ``rescaled_time``, ``interval``, ``uniform``."""
        import pandas as pd

        return pd.DataFrame({"event": self.order, "rescaled_time": self.rescaled_times, "interval": self.intervals,
                             "uniform": self.uniform})

    def summary(self) -> dict:
        """KS statistic and p-value, expected vs observed count, ties, and per-draw p-value quantiles."""
        out = {"n_events": self.n_events, "expected_events": self.total, "count_z": self.count_z,
               "ks_statistic": self.ks_statistic, "ks_pvalue": self.ks_pvalue, "n_ties": self.n_ties,
               "params": self.params.to_dict()}
        if self.draws is not None:
            q = np.quantile(self.draws["ks_pvalue"], [0.025, 0.5, 0.975])
            out["draws_ks_pvalue_q2.5_50_97.5"] = [float(v) for v in q]
        return out

    def plot(self, path=None):
        """QQ plot of ``uniform`` against Uniform(0, 1) with a 95% KS band, and the rescaled times
        against the event count (matplotlib Figure)."""
        return plot_residuals(self, path=path)

    def __repr__(self) -> str:
        return (f"HawkesResiduals(n_events={self.n_events}, expected={self.total:.1f}, "
                f"ks_statistic={self.ks_statistic:.4f}, ks_pvalue={self.ks_pvalue:.3g})")


def residuals(posterior_or_params: Any, x: Any, t: Any, *, window: Any = None, n_draws: int | None = None,
              seed: Any = None, progress: bool = True, kernel: Any = None,
              spatial_kernel: Any = None) -> HawkesResiduals:
    """Time-rescaled residuals (Ogata) and a KS uniformity test of a fitted Hawkes model.

    Parameters
    ----------
    posterior_or_params : HawkesPosterior, HawkesParams or dict
        A posterior (residuals at the posterior mean of every parameter) or parameters.
    x : array_like (N,) or (N, D)
        Event locations (checked; the spatial integral of the model is 1, so only times enter).
    t : array_like (N,)
        Event times, in the units of the parameters. Any order.
    window : (T0, T1), optional
        Observation window; default (min t, max t).
    n_draws : int, optional
        With a posterior: also compute the KS test at this many random posterior draws
        (``draws`` table), to show the spread of the test over the posterior.
    seed : None, int or Generator
        Chooses the draws.
    progress : bool
        Progress bar over draws.
    kernel : "exponential", "power-law", ("power-law", p) or "exp2", optional
        Temporal trigger; default the posterior's, else exponential. (The power-law transform sums
        all earlier pairs: O(N^2).)
    spatial_kernel : "gaussian", "power-law" or ("power-law", q), optional
        Spatial trigger; default the posterior's, else Gaussian. Checked (q > D/2) but it does not
        change the rescaled times: every spatial kernel integrates to 1 over R^D, so only the
        temporal kernel enters the time transform. (Spatial residuals that do depend on it:
        :func:`~.superthin.super_thinned_residuals`.)

    Returns
    -------
    HawkesResiduals
        Rescaled times, their Exp(1) intervals and Uniform(0, 1) transforms, and the KS test.

    Examples
    --------
    >>> x, t = hp.hawkes.simulate(mu=0.5, theta=0.5, omega=2.0, h=0.1, region=2.0, duration=50.0, seed=1)
    >>> p = hp.hawkes.HawkesParams(mu0=0.5, tau_x=0.5, tau_t=5.0, theta=0.5, omega=2.0, h=0.1)
    >>> res = hp.hawkes.residuals(p, x, t, progress=False)
    >>> res.n_events, round(res.total, 1), round(res.ks_pvalue, 3)
    (187, 174.9, 0.241)

    With a posterior, the test at the posterior mean and at 20 posterior draws:

    >>> post = hp.hawkes.mcmc(x, t, n_iter=200, burn_in=50, chains=2, fixed={"tau_x": 0.5, "tau_t": 5.0},
    ...                       seed=1, progress=False, backend="cpu")
    >>> hp.hawkes.residuals(post, x, t, n_draws=20, seed=1, progress=False).draws.shape
    (20, 4)
    """
    refuse_kde_background(posterior_or_params, "residuals")
    progress = check_bool(progress, "progress")
    data = prepare_data(x, t, window)
    posterior = None
    if is_posterior(posterior_or_params):
        posterior = posterior_or_params
        params = posterior.params_mean()
    else:
        params = _as_params(posterior_or_params)
    _check_params_range(params, np.float64)
    if kernel is None:
        kernel = posterior.kernel if posterior is not None else "exponential"
    kern = check_kernel(kernel)
    kp = kern.p
    if spatial_kernel is None:
        spatial_kernel = posterior.spatial_kernel if posterior is not None else "gaussian"
    check_spatial_kernel(spatial_kernel, data.dim)  # validated; the time transform does not depend on it
    check_kernel_params(params, kern, "posterior" if posterior is not None else "posterior_or_params")
    if n_draws is not None:
        if posterior is None:
            raise ValueError("n_draws needs a posterior (HawkesPosterior), not fixed parameters")
        n_draws = check_int(n_draws, "n_draws", minimum=1)
    rng = check_random_state(seed)
    t_s, win = data.t_sorted, data.window
    bg_cache: dict = {}

    def lam(p):
        """Lambda(t_n) at p; the background part is reused while tau_t does not change."""
        if p.tau_t not in bg_cache:
            bg_cache.clear()
            bg_cache[p.tau_t] = _background_cumulative(t_s, win[0], p.tau_t)
        return rescaled_times(t_s, p, win, background=bg_cache[p.tau_t], kernel_p=kp)

    def total(p):
        return (p.mu0 * background_integral_part(t_s, p.tau_t, win)
                + p.theta * trigger_integral_part(t_s, p.omega, win, kp, **rate_kwargs(p)))

    tau = lam(params)
    intervals = np.diff(np.concatenate([[0.0], tau]))
    intervals = np.maximum(intervals, 0.0)  # rounding of equal values (ties) can give -1e-16
    u = -np.expm1(-intervals)
    ks_stat, ks_p = _ks(u)
    draws_table = None
    if n_draws is not None:
        import pandas as pd

        idx, flat = posterior.select_draws(n_draws, rng)
        rows = []
        with progress_bar(total=idx.size, desc="residuals over draws", enabled=progress) as bar:
            for k, i in enumerate(idx):
                p = HawkesParams(**{n: float(v[k]) for n, v in flat.items()})
                tau_i = lam(p)
                ui = -np.expm1(-np.maximum(np.diff(np.concatenate([[0.0], tau_i])), 0.0))
                st, pv = _ks(ui)
                rows.append((int(i), st, pv, total(p)))
                bar.update(1)
        draws_table = pd.DataFrame(rows, columns=["draw", "ks_statistic", "ks_pvalue", "total"])
    n_ties = int(np.sum(np.diff(t_s) == 0))
    return HawkesResiduals(rescaled_times=tau, order=data.order.copy(), intervals=intervals, uniform=u,
                           ks_statistic=ks_stat, ks_pvalue=ks_p, total=float(total(params)), n_events=int(t_s.size),
                           n_ties=n_ties, params=params, draws=draws_table)
