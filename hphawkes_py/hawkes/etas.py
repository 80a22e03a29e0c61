"""Space-time ETAS: the Hawkes model with continuous marks (earthquake magnitudes), after Ogata (1998)
and Zhuang, Ogata & Vere-Jones (2002), with Bayesian inference.

Conditional intensity of an event at time t, location x (2-D, e.g. km or degrees) and magnitude m::

    lambda(t, x, m) = s(m) [mu u(x) + sum_{j: t_j < t} kappa(m_j) g(t - t_j) f(x - x_j | m_j)]

* productivity kappa(m) = A exp(alpha (m - m0)), the expected number of direct aftershocks;
* Omori-Utsu delays g(t) = (p - 1)/c (1 + t/c)^(-p) (p > 1, c > 0, units of t);
* magnitude-dependent spatial kernel with scale sigma(m) = d exp(gamma (m - m0)) (units of x squared):
  Gaussian f(r | m) = exp(-r^2 / (2 sigma)) / (2 pi sigma) (sigma the variance per coordinate) or the
  power law f(r | m) = (q - 1)/(pi sigma) (1 + r^2/sigma)^(-q), q > 1;
* Gutenberg-Richter magnitudes s(m) = beta exp(-beta (m - m0)), m >= m0, beta = b ln 10;
* background mu u(x): mu events per unit time spread by a density u over the study region (uniform
  over a rectangle, ``region=``, or given at the events, ``background=``).

Log-likelihood over the window [T0, T1] (the spatial kernels integrate to 1 over the plane, as in
:mod:`.compensator`; edge losses at the region's border are ignored)::

    log L = sum_n log lambda_n - mu (T1 - T0) - A sum_j exp(alpha (m_j - m0)) [1 - (1 + (T1 - t_j)/c)^(1 - p)]
            + sum_n log s(m_n)

The last (Gutenberg-Richter) term separates: b has the exact conditional Gamma(N + 1, sum (m - m0)) for
beta under a flat prior. The pair sums run in :mod:`.cpu_etas` (Numba) or ``kernels/hawkes_marked.cu``.
"""
from __future__ import annotations

import math
import sys
import time
from typing import Any, Mapping

import numpy as np

from .._backend import get_device, is_gpu_backend, resolve_backend, threads_context
from .._validate import as_float_array, check_bool, check_int, check_positive, check_random_state, check_seed, describe
from .compensator import trigger_integral_terms
from .cpu_etas import SPATIAL_CODE, etas_rows
from .marked_sampler import MarkedPosterior, adaptive_chain, chain_seeds, check_sampler_args, run_chains
from .model import SUBMODELS, _numba_threads, prepare_data
from .simulation import _region, draw_delays, draw_displacements
from .times import tie_starts

__all__ = ["PARAM_NAMES", "simulate", "log_likelihood", "probabilities", "mcmc", "MarkedPosterior"]

#: ETAS parameters (``q`` only with the power-law spatial kernel).
PARAM_NAMES = ("mu", "A", "alpha", "c", "p", "d", "gamma", "q", "b")
LN10 = math.log(10.0)
#: How each parameter is sampled: log (positive), log1m (log(v - 1), v > 1) or identity.
_TRANSFORM = {"mu": "log", "A": "log", "alpha": "id", "c": "log", "p": "log1m", "d": "log", "gamma": "id",
              "q": "log1m"}
#: Prior s.d. of every sampled parameter on its transformed scale (normal prior centred at 0): wide
#: enough to be flat over any catalogue's scale.
PRIOR_SD = 10.0


# ------------------------------------------------------------------------------------------ checks
def _check_spatial(spatial_kernel: Any) -> str:
    if spatial_kernel not in SPATIAL_CODE:
        raise ValueError(f"spatial_kernel must be one of {tuple(SPATIAL_CODE)}, got {spatial_kernel!r}")
    return spatial_kernel


def _names(spatial_kernel: str) -> tuple:
    return tuple(n for n in PARAM_NAMES if n != "q" or spatial_kernel == "power-law")


def _check_value(name: str, value: Any) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"params[{name!r}] must be a real number, got {describe(value)}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"params[{name!r}] must be finite, got {v}")
    if name in ("p", "q") and not v > 1.0:
        raise ValueError(f"params[{name!r}] must be > 1 (a normalisable power law), got {v}")
    if name in ("mu", "A", "c", "d", "b") and not v > 0.0:
        raise ValueError(f"params[{name!r}] must be > 0, got {v}")
    if name in ("alpha", "gamma") and abs(v) > 50.0:
        raise ValueError(f"params[{name!r}] must lie in [-50, 50] (per unit of magnitude), got {v}")
    return v


def _check_params(params: Any, spatial_kernel: str, name: str = "params", need_b: bool = True,
                  partial: bool = False) -> dict:
    if not isinstance(params, Mapping):
        raise TypeError(f"{name} must be a dict of ETAS parameters {_names(spatial_kernel)}, got {describe(params)}")
    names = _names(spatial_kernel)
    unknown = sorted(set(params) - set(PARAM_NAMES))
    if unknown:
        raise ValueError(f"{name} has unknown parameter(s) {unknown}; ETAS parameters are {names}")
    if "q" in params and spatial_kernel != "power-law":
        raise ValueError(f"{name}['q'] is the power-law kernel's exponent; spatial_kernel is {spatial_kernel!r}")
    missing = [] if partial else [n for n in names if n not in params and (need_b or n != "b")]
    if missing:
        raise ValueError(f"{name} is missing {missing}")
    return {n: _check_value(n, v) for n, v in params.items()}


def _check_m0(m0: Any) -> float:
    if isinstance(m0, (bool, np.bool_)) or not isinstance(m0, (int, float, np.integer, np.floating)) \
            or not math.isfinite(float(m0)):
        raise ValueError(f"m0 must be a finite number (the magnitude of completeness), got {m0!r}")
    return float(m0)


def _check_marks(m: Any, N: int, m0: Any) -> tuple[np.ndarray, float]:
    m = as_float_array(m, "m", ndim=1, dtype=np.float64)
    if m.shape[0] != N:
        raise ValueError(f"m must hold one magnitude per event ({N}), got {m.shape[0]}")
    if m0 is None:
        return m, float(np.min(m))
    m0 = _check_m0(m0)
    if np.min(m) < m0:
        raise ValueError(f"every magnitude must be >= m0 = {m0} (the catalogue's completeness), got min "
                         f"{float(np.min(m))}")
    return m, m0


class _Data:
    """Checked, time-sorted catalogue with its background density at the events."""

    def __init__(self, x, t, m, m0, window, region, background):
        prep = prepare_data(x, t, window)
        if prep.dim != 2:
            raise ValueError(f"x must hold 2-D locations (shape (N, 2)) for space-time ETAS, got D = {prep.dim}")
        self.prep = prep
        self.N = prep.n
        mm, self.m0 = _check_marks(m, self.N, m0)
        self.m = np.ascontiguousarray(mm[prep.order])
        self.x = prep.x_sorted
        self.t = prep.t_sorted
        self.window = prep.window
        self.ts = tie_starts(self.t)
        if background is not None:
            if region is not None:
                raise ValueError("give region (uniform background) or background (its density at the events), "
                                 "not both")
            u = as_float_array(background, "background", ndim=1, dtype=np.float64)
            if u.shape[0] != self.N or not np.all(u > 0):
                raise ValueError(f"background must hold one density value > 0 per event ({self.N}), got shape "
                                 f"{u.shape}, min {float(np.min(u)) if u.size else float('nan'):g}")
            self.u = np.ascontiguousarray(u[prep.order])
        else:
            if region is None:
                lo, hi = self.x.min(axis=0), self.x.max(axis=0)
                bounds = np.stack([lo, np.where(hi > lo, hi, lo + 1.0)], axis=1)
            else:
                bounds = _region(region, 2)
            self.u = np.full(self.N, 1.0 / float(np.prod(bounds[:, 1] - bounds[:, 0])))


class _Model:
    """log L of one catalogue, with the pair pass cached on the parameters it depends on."""

    def __init__(self, data: _Data, spatial_kernel: str, backend: str, threads):
        self.data = data
        self.kind = SPATIAL_CODE[spatial_kernel]
        self.backend = backend
        self.threads = threads
        self._key = None
        self._G = None
        self._gpu = None
        if is_gpu_backend(backend):
            from .gpu_marked import GpuEtas
            self._gpu = GpuEtas(get_device(backend), data.x, data.t, data.ts)

    def rows(self, p: Mapping) -> np.ndarray:
        """G_n of :mod:`.cpu_etas` (without A and the kernels' constants)."""
        q = p.get("q", 0.0)
        key = (p["alpha"], p["c"], p["p"], p["d"], p["gamma"], q)
        if key == self._key:
            return self._G
        dm = self.data.m - self.data.m0
        sigma = p["d"] * np.exp(p["gamma"] * dm)
        w = np.exp(p["alpha"] * dm) / sigma
        if self._gpu is not None:
            G = self._gpu.rows(w, sigma, p["c"], p["p"], q, self.kind)
        else:
            G = np.empty(self.data.N)
            with threads_context(self.threads):
                etas_rows(self.data.x, self.data.t, self.data.ts, w, sigma, float(p["c"]), float(p["p"]), float(q),
                          self.kind, G)
        self._key, self._G = key, G
        return G

    def constant(self, p: Mapping) -> float:
        """C_g C_f of :mod:`.cpu_etas`."""
        cf = 0.5 / math.pi if self.kind == 0 else (p["q"] - 1.0) / math.pi
        return (p["p"] - 1.0) / p["c"] * cf

    def parts(self, p: Mapping) -> tuple[np.ndarray, np.ndarray]:
        """(background rate mu u_n, triggered rate) at every event (spatio-temporal, without s(m))."""
        return p["mu"] * self.data.u, p["A"] * self.constant(p) * self.rows(p)

    def compensator(self, p: Mapping) -> float:
        d = self.data
        T0, T1 = d.window
        kap = np.exp(p["alpha"] * (d.m - d.m0))
        return p["mu"] * (T1 - T0) + p["A"] * float(np.dot(kap, trigger_integral_terms(d.t, 1.0 / p["c"], d.window,
                                                                                        p["p"])))

    def marks_term(self, b: float) -> float:
        beta = b * LN10
        return self.data.N * math.log(beta) - beta * float(np.sum(self.data.m - self.data.m0))

    def log_likelihood(self, p: Mapping, marks: bool = True) -> float:
        bg, tr = self.parts(p)
        ll = float(np.sum(np.log(bg + tr))) - self.compensator(p)
        return ll + (self.marks_term(p["b"]) if marks else 0.0)


def _setup(x, t, m, m0, window, region, background, spatial_kernel, backend, threads) -> _Model:
    spatial_kernel = _check_spatial(spatial_kernel)
    data = _Data(x, t, m, m0, window, region, background)
    return _Model(data, spatial_kernel, resolve_backend(backend), _numba_threads(threads))


# ------------------------------------------------------------------------------------------ public
def log_likelihood(x: Any, t: Any, m: Any, params: Mapping, *, m0: float | None = None, region: Any = None,
                   background: Any = None, spatial_kernel: str = "gaussian", marks: bool = True, window: Any = None,
                   backend: str = "cpu", threads: int | None = None) -> float:
    """Log-likelihood of the space-time ETAS model (module notes), every pair exact.

    Parameters
    ----------
    x : array_like, shape (N, 2)
        Epicentres (e.g. km; ``d`` is in units of x squared). Any order.
    t : array_like, shape (N,)
        Occurrence times (e.g. days; ``c`` is in units of t).
    m : array_like, shape (N,)
        Magnitudes, all >= ``m0``.
    params : dict
        ``mu`` (background events per unit time), ``A``, ``alpha`` (per unit magnitude), ``c``, ``p``
        (> 1), ``d``, ``gamma`` (per unit magnitude), ``q`` (> 1; power-law kernel only) and ``b``
        (Gutenberg-Richter b-value; needed when ``marks`` is True).
    m0 : float, optional
        Magnitude of completeness (default: the smallest magnitude).
    region : float or array_like, shape (2, 2), optional
        Rectangle over which the background is uniform (a side length or (low, high) per coordinate);
        default the events' bounding box.
    background : array_like, shape (N,), optional
        Instead of ``region``: the background density u(x_n) at every event (integrating to 1 over the
        study region, units 1 / x squared).
    spatial_kernel : {"gaussian", "power-law"}
        Spatial triggering kernel.
    marks : bool
        Add the Gutenberg-Richter term sum_n log s(m_n).
    window : (T0, T1), optional
        Observation window (default: the first and last times).
    backend : {"cpu", "gpu", "emulator", "auto"}
        Where the pair sums run.
    threads : int, optional
        CPU threads (Numba).

    Returns
    -------
    float
        log L.

    Examples
    --------
    >>> from hphawkes_py.hawkes import etas
    >>> p = dict(mu=0.5, A=0.3, alpha=1.0, c=0.01, p=1.2, d=0.02, gamma=0.5, b=1.0)
    >>> x, t, m = etas.simulate(**p, m0=3.0, region=10.0, duration=100.0, seed=1)
    >>> round(etas.log_likelihood(x, t, m, p, m0=3.0, region=10.0, window=(0, 100)), 4)
    -350.4063
    """
    marks = check_bool(marks, "marks")
    spatial_kernel = _check_spatial(spatial_kernel)
    p = _check_params(params, spatial_kernel, need_b=marks)
    model = _setup(x, t, m, m0, window, region, background, spatial_kernel, backend, threads)
    return model.log_likelihood(p, marks)


def probabilities(x: Any, t: Any, m: Any, params: Mapping, *, m0: float | None = None, region: Any = None,
                  background: Any = None, spatial_kernel: str = "gaussian", window: Any = None,
                  backend: str = "cpu", threads: int | None = None) -> dict:
    """Stochastic declustering (Zhuang et al. 2002): each event's probability of being a background event.

    Parameters
    ----------
    x, t, m, params, m0, region, background, spatial_kernel, window, backend, threads
        As in :func:`log_likelihood` (``params['b']`` is not used).

    Returns
    -------
    dict
        ``background`` (N,): mu u(x_n) / lambda_n, the background probability (Zhuang's phi_n);
        ``triggered`` (N,): 1 minus it, the probability pi_n that event n is an aftershock; both in the
        caller's order of events.

    Examples
    --------
    >>> from hphawkes_py.hawkes import etas
    >>> p = dict(mu=0.5, A=0.3, alpha=1.0, c=0.01, p=1.2, d=0.02, gamma=0.5, b=1.0)
    >>> x, t, m = etas.simulate(**p, m0=3.0, region=10.0, duration=100.0, seed=1)
    >>> pr = etas.probabilities(x, t, m, p, m0=3.0, region=10.0)
    >>> bool(0.0 < pr["background"].min() and pr["background"].max() <= 1.0)
    True
    """
    spatial_kernel = _check_spatial(spatial_kernel)
    p = _check_params(params, spatial_kernel, need_b=False)
    model = _setup(x, t, m, m0, window, region, background, spatial_kernel, backend, threads)
    bg, tr = model.parts(p)
    phi = (bg / (bg + tr))[model.data.prep.inverse]
    return {"background": phi, "triggered": 1.0 - phi}


def simulate(*, mu: float, A: float, alpha: float, c: float, p: float, d: float, gamma: float, b: float,
             m0: float, region: Any, duration: float, q: float | None = None, spatial_kernel: str = "gaussian",
             seed: Any = None, return_parents: bool = False, max_events: int = 1_000_000):
    """Simulate a space-time ETAS catalogue by the branching construction.

    Background events: Poisson with ``mu`` per unit time, uniform over ``region``, on [0, duration]. Every
    event of magnitude m has Poisson(A exp(alpha (m - m0))) direct aftershocks, each after an Omori-Utsu
    delay (Lomax, by inversion), displaced by the spatial kernel with scale d exp(gamma (m - m0)) and with
    a Gutenberg-Richter magnitude m0 + Exp(b ln 10). Aftershocks may land outside ``region``.

    Parameters
    ----------
    mu, A, alpha, c, p, d, gamma, b, q
        The model's parameters (module notes); ``q`` only with ``spatial_kernel="power-law"``. The
        branching ratio A beta / (beta - alpha), beta = b ln 10, must be < 1 (alpha < beta).
    m0 : float
        Magnitude of completeness (the smallest simulated magnitude).
    region : float or array_like, shape (2, 2)
        Background rectangle: a side length or (low, high) per coordinate.
    duration : float
        Events are simulated on [0, duration].
    spatial_kernel : {"gaussian", "power-law"}
        Spatial triggering kernel.
    seed : None, int or Generator
        Random seed.
    return_parents : bool
        Also return the parent of every event (-1 for background events), in the returned order.
    max_events : int
        Refuse to go past this many events.

    Returns
    -------
    x : ndarray, shape (N, 2)
    t : ndarray, shape (N,)
        Sorted.
    m : ndarray, shape (N,)
    parent : ndarray of int, shape (N,)
        Only with ``return_parents=True``.

    Examples
    --------
    >>> from hphawkes_py.hawkes import etas
    >>> x, t, m = etas.simulate(mu=0.5, A=0.3, alpha=1.0, c=0.01, p=1.2, d=0.02, gamma=0.5, b=1.0,
    ...                         m0=3.0, region=10.0, duration=100.0, seed=1)
    >>> x.shape == (t.size, 2) and bool(m.min() >= 3.0)
    True
    """
    spatial_kernel = _check_spatial(spatial_kernel)
    vals = dict(mu=mu, A=A, alpha=alpha, c=c, p=p, d=d, gamma=gamma, b=b)
    if spatial_kernel == "power-law":
        if q is None:
            raise ValueError("spatial_kernel='power-law' needs q (> 1), the kernel's exponent")
        vals["q"] = q
    elif q is not None:
        raise ValueError(f"q is the power-law kernel's exponent; spatial_kernel is {spatial_kernel!r}")
    vals = _check_params(vals, spatial_kernel)
    m0 = _check_m0(m0)
    beta = vals["b"] * LN10
    if not (vals["alpha"] < beta and vals["A"] * beta / (beta - vals["alpha"]) < 1.0):
        raise ValueError(f"the branching ratio A beta / (beta - alpha) must be < 1 with alpha < beta = b ln 10 "
                         f"(a subcritical catalogue); got A={A}, alpha={alpha}, b={b}")
    duration = check_positive(duration, "duration")
    bounds = _region(region, 2)
    rng = check_random_state(seed)
    return_parents = check_bool(return_parents, "return_parents")
    max_events = check_int(max_events, "max_events", minimum=1)
    if mu * duration > max_events:
        raise ValueError(f"mu * duration = {mu * duration:.3g} expected background events exceeds max_events="
                         f"{max_events}")
    n0 = rng.poisson(mu * duration)
    qq = vals.get("q", 0.0)
    xs = [bounds[:, 0] + rng.random((n0, 2)) * (bounds[:, 1] - bounds[:, 0])]
    ts = [rng.random(n0) * duration]
    ms = [m0 + rng.exponential(1.0 / beta, n0)]
    parents = [np.full(n0, -1, np.int64)]
    gx, gt, gm, gi = xs[0], ts[0], ms[0], np.arange(n0)
    total = n0
    while gt.size:
        k = rng.poisson(vals["A"] * np.exp(vals["alpha"] * (gm - m0)))
        if k.sum() == 0:
            break
        local = np.repeat(np.arange(gt.size), k)
        n = local.size
        ct = gt[local] + draw_delays(rng, n, 1.0 / vals["c"], vals["p"])
        scale = np.sqrt(vals["d"] * np.exp(vals["gamma"] * (gm[local] - m0)))
        cx = gx[local] + scale[:, None] * draw_displacements(rng, n, 2, 1.0, qq)
        cm = m0 + rng.exponential(1.0 / beta, n)
        keep = ct <= duration
        par = gi[local][keep]
        gx, gt, gm = cx[keep], ct[keep], cm[keep]
        gi = np.arange(total, total + gt.size)
        total += gt.size
        if total > max_events:
            raise ValueError(f"the simulation exceeded max_events={max_events}")
        xs.append(gx)
        ts.append(gt)
        ms.append(gm)
        parents.append(par)
    x, t, mm, parent = (np.concatenate(a) for a in (xs, ts, ms, parents))
    order = np.argsort(t, kind="stable")
    x, t, mm, parent = x[order], t[order], mm[order], parent[order]
    if return_parents:
        new = np.empty_like(order)
        new[order] = np.arange(order.size)
        return x, t, mm, np.where(parent >= 0, new[np.maximum(parent, 0)], -1)
    return x, t, mm


# ------------------------------------------------------------------------------------------ sampler
def to_natural(name: str, z: float) -> float:
    """A parameter's natural value from its sampled (transformed) value."""
    tr = _TRANSFORM[name]
    return math.exp(z) if tr == "log" else (1.0 + math.exp(z) if tr == "log1m" else z)


def to_sampled(name: str, v: float) -> float:
    """The inverse of :func:`to_natural`."""
    tr = _TRANSFORM[name]
    return math.log(v) if tr == "log" else (math.log(v - 1.0) if tr == "log1m" else v)


def _run_chain(args):
    model, sample, fixed, start, n_iter, burn_in, seed_seq, sample_b = args
    rng = np.random.default_rng(seed_seq)
    d = model.data
    z0 = np.array([to_sampled(n, start[n]) for n in sample])
    cheap = np.array([n in ("mu", "A") for n in sample])
    state = {"b": fixed.get("b", start.get("b"))}
    bg_sum = np.zeros(d.N)
    b_draws = []

    def vals(z):
        v = dict(fixed)
        for n, zi in zip(sample, z):
            v[n] = to_natural(n, zi)
        return v

    def log_post(z):
        if np.any(np.abs(z) > 50.0):
            return -math.inf
        ll = model.log_likelihood(vals(z), marks=False)
        return ll - 0.5 * float(np.dot(z, z)) / PRIOR_SD ** 2 if np.isfinite(ll) else -math.inf

    def gibbs(rng_):  # beta | magnitudes ~ Gamma(N + 1, sum (m - m0)) under a flat prior
        if sample_b:
            state["b"] = rng_.gamma(d.N + 1.0, 1.0 / float(np.sum(d.m - d.m0))) / LN10

    def on_keep(z):
        bg, tr = model.parts(vals(z))
        bg_sum[:] += bg / (bg + tr)
        b_draws.append(state["b"])

    gibbs(rng)
    kept, acc, acc_joint = adaptive_chain(log_post, z0, n_iter, burn_in, rng, cheap, on_keep, gibbs)
    draws = {n: np.array([to_natural(n, v) for v in kept[:, i]]) for i, n in enumerate(sample)}
    rates = {n: float(acc[i]) for i, n in enumerate(sample)}
    rates["joint"] = float(acc_joint)
    if sample_b:
        draws["b"] = np.array(b_draws)
        rates["b"] = 1.0
    return draws, rates, bg_sum / max(n_iter - burn_in, 1)


def mcmc(x: Any, t: Any, m: Any, *, n_iter: int = 2000, burn_in: int = 500, chains: int = 2,
         sample: Any = None, fixed: Mapping | None = None, init: Mapping | None = None, m0: float | None = None,
         region: Any = None, background: Any = None, spatial_kernel: str = "gaussian", window: Any = None,
         seed: Any = None, executor: Any = None, backend: str = "cpu",
         threads: int | None = None) -> MarkedPosterior:
    """Bayesian inference for space-time ETAS by adaptive Metropolis.

    Every sampled parameter moves on an unconstrained scale (log of mu, A, c, d; log(p - 1),
    log(q - 1); alpha and gamma as they are) with a N(0, 10^2) prior there, one coordinate at a time
    and jointly with the burn-in covariance (:func:`~.marked_sampler.adaptive_chain`); b is drawn from its exact
    conditional (beta = b ln 10 ~ Gamma(N + 1, sum (m - m0)), flat prior on beta).

    Parameters
    ----------
    x, t, m : array_like
        Epicentres (N, 2), times (N,), magnitudes (N,) (see :func:`log_likelihood`).
    n_iter, burn_in : int
        Sweeps per chain (>= 1) and discarded leading sweeps (0 <= burn_in < n_iter), in which the
        proposals adapt.
    chains : int
        Independent chains (>= 1).
    sample : sequence of str, optional
        The sampled parameters (default all of :data:`PARAM_NAMES` the kernel has, less ``fixed``).
    fixed : dict, optional
        Values of the parameters not sampled.
    init : dict, optional
        Starting values (default mu = N / (2 (T1 - T0)), A = 0.2, alpha = 1, c = 0.01, p = 1.2,
        d = 1e-3 of the region's squared extent, gamma = 0.5, q = 2).
    m0, region, background, spatial_kernel, window
        As in :func:`log_likelihood`.
    seed : int, optional
        Seed of the chains (one spawned stream per chain).
    executor : concurrent.futures.Executor, optional
        Runs the chains (``executor.map``); default one after another.
    backend : {"cpu", "gpu", "emulator", "auto"}
        Where the pair sums run.
    threads : int, optional
        CPU threads (Numba).

    Returns
    -------
    MarkedPosterior
        Draws, acceptance rates, and ``extra["background"]``: the posterior mean background probability of
        every event (caller's order).

    Examples
    --------
    >>> from hphawkes_py.hawkes import etas
    >>> x, t, m = etas.simulate(mu=0.5, A=0.3, alpha=1.0, c=0.01, p=1.2, d=0.02, gamma=0.5, b=1.0,
    ...                         m0=3.0, region=10.0, duration=100.0, seed=1)
    >>> post = etas.mcmc(x, t, m, m0=3.0, region=10.0, n_iter=40, burn_in=20, seed=1)
    >>> sorted(post.draws)[:3], post.extra["background"].shape == t.shape
    (['A', 'alpha', 'b'], True)
    """
    spatial_kernel = _check_spatial(spatial_kernel)
    names = _names(spatial_kernel)
    n_iter, burn_in, chains = check_sampler_args(n_iter, burn_in, chains, executor)
    fixed = {} if fixed is None else fixed
    fixed = _check_params(fixed, spatial_kernel, "fixed", partial=True)
    if sample is None:
        sample = tuple(n for n in names if n not in fixed)
    if isinstance(sample, str):
        sample = (sample,)
    sample = tuple(sample)
    bad = [n for n in sample if n not in names]
    if bad:
        raise ValueError(f"sample names unknown parameter(s) {bad}; ETAS parameters are {names}")
    both = sorted(set(sample) & set(fixed))
    if both:
        raise ValueError(f"parameter(s) {both} are both sampled and fixed; choose one")
    missing = [n for n in names if n not in sample and n not in fixed]
    if missing:
        raise ValueError(f"fixed must give a value for every parameter not sampled; missing {missing}")
    model = _setup(x, t, m, m0, window, region, background, spatial_kernel, backend, threads)
    d = model.data
    T0, T1 = d.window
    ext = float(np.max(np.ptp(d.x, axis=0))) or 1.0
    start = dict(mu=d.N / (2.0 * (T1 - T0)), A=0.2, alpha=1.0, c=0.01, p=1.2, d=1e-3 * ext ** 2, gamma=0.5, q=2.0,
                 b=1.0)
    if init is not None:
        init = _check_params(init, spatial_kernel, "init", partial=True)
        extra = sorted(set(init) - set(sample))
        if extra:
            raise ValueError(f"init gives value(s) for {extra}, which are not sampled")
        start.update(init)
    start = {n: start[n] for n in sample}
    sample_b = "b" in sample
    z_names = tuple(n for n in sample if n != "b")
    if not z_names:
        raise ValueError("sample must name at least one parameter besides b")
    seed = check_seed(seed)
    seqs = chain_seeds(seed, chains)
    fixed_all = dict(fixed)
    t0 = time.perf_counter()
    runs = run_chains(_run_chain, [(model, z_names, fixed_all, start, n_iter, burn_in, s, sample_b) for s in seqs],
                      executor)
    elapsed = time.perf_counter() - t0
    draws = {n: np.stack([r[0][n] for r in runs]) for n in runs[0][0]}
    rates = {n: np.array([r[1][n] for r in runs]) for n in runs[0][1]}
    bg = np.mean([r[2] for r in runs], axis=0)[d.prep.inverse]
    return MarkedPosterior(draws=draws, acceptance_rates=rates, sampled=tuple(draws), fixed=fixed, extra={"background": bg},
                           n_iter=n_iter, burn_in=burn_in, seed=seed, backend=model.backend, elapsed_seconds=elapsed)


# hp.hawkes.log_likelihood, simulate, mcmc, ... with marks= hand over to this module
SUBMODELS["etas"] = sys.modules[__name__]
