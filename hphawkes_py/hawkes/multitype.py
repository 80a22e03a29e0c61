"""The multitype Hawkes model: K event types (crime categories, say) with a K x K matrix of
self-excitation weights -- which type triggers which -- and a background rate per type, on the
paper's Gaussian background smoother and exponential / Gaussian trigger.

Conditional intensity of a type-l event at (x, t)::

    lambda_l(x, t) = mu0_l sum_{m: k_m = l} phi_D(x - x_m; tau_x) phi_1(t - t_m; tau_t)
                     + sum_{m: t_m < t} theta[k_m, l] omega exp(-omega (t - t_m)) phi_D(x - x_m; h)

``theta[k, l]`` is the expected number of type-l offspring of a type-k event (the process is stable
when the spectral radius of theta is < 1); ``mu0_l`` weighs the smoother of the type-l events (the
paper's mu0, one per type). Log-likelihood over [T0, T1] (every pair, :mod:`.cpu_multitype` or
``kernels/hawkes_marked.cu``)::

    log L = sum_n log lambda_{k_n}(x_n, t_n) - sum_m mu0_{k_m} B_m - sum_m (sum_l theta[k_m, l]) C_m

with B_m, C_m the windowed temporal integrals of :mod:`.compensator`. K = 1 is the hpHawkes model.
The probability that event n was triggered by an event of type k is
pi[n, k] = theta[k, k_n] c_G G_{n,k} / lambda_n (the background's share is the rest).
"""
from __future__ import annotations

import math
import sys
import time
from typing import Any, Mapping

import numpy as np

from .._backend import get_device, is_gpu_backend, resolve_backend, threads_context
from .._validate import as_float_array, check_bool, check_int, check_positive, check_random_state, check_seed, describe
from .compensator import background_integral_terms, trigger_integral_terms
from .cpu_multitype import multitype_rows
from .marked_sampler import MarkedPosterior, adaptive_chain, chain_seeds, check_sampler_args, run_chains
from .kernels import phi0
from .model import SUBMODELS, _numba_threads, prepare_data
from .simulation import _region
from .times import tie_starts

__all__ = ["simulate", "log_likelihood", "probabilities", "mcmc", "plot_excitation_matrix"]

#: Half-normal prior scales of the sampled parameters (natural units), as hp.hawkes.mcmc's.
PRIOR_SCALES = {"mu0": 1.0, "theta": 10.0, "omega": 10.0, "h": 10.0}


# ------------------------------------------------------------------------------------------ checks
def _check_types(types: Any, N: int, K: int | None = None) -> tuple[np.ndarray, int]:
    k = np.asarray(types)
    if k.ndim != 1 or k.shape[0] != N:
        raise ValueError(f"types must be a 1-D array with one type per event ({N}), got shape {k.shape}")
    if k.dtype.kind not in "iu":
        raise TypeError(f"types must hold integer type codes 0..K-1, got dtype {k.dtype}")
    if N and k.min() < 0:
        raise ValueError(f"types must be integer codes 0..K-1, got {int(k.min())}")
    if K is None:
        K = int(k.max()) + 1
    elif N and k.max() >= K:
        raise ValueError(f"types must be codes 0..K-1 with K = {K} (the size of params['mu0']), got {int(k.max())}")
    return k.astype(np.int64), K


def _scalar(v: Any, name: str) -> float:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {describe(v)}")
    return check_positive(v, name)


def _check_params(params: Any, name: str = "params") -> dict:
    if not isinstance(params, Mapping):
        raise TypeError(f"{name} must be a dict with mu0 (K,), theta (K, K), omega, h, tau_x, tau_t; got "
                        f"{describe(params)}")
    need = ("mu0", "theta", "omega", "h", "tau_x", "tau_t")
    missing = [n for n in need if n not in params]
    unknown = sorted(set(params) - set(need))
    if missing or unknown:
        raise ValueError(f"{name} must give exactly {need}; missing {missing}, unknown {unknown}")
    mu0 = as_float_array(np.atleast_1d(params["mu0"]), f"{name}['mu0']", ndim=1, dtype=np.float64)
    K = mu0.shape[0]
    theta = as_float_array(np.atleast_2d(params["theta"]), f"{name}['theta']", ndim=2, dtype=np.float64)
    if theta.shape != (K, K):
        raise ValueError(f"{name}['theta'] must be K x K with K = {K} (the size of mu0), got shape {theta.shape}")
    if not np.all(mu0 > 0):
        raise ValueError(f"{name}['mu0'] must be > 0 for every type, got {mu0.tolist()}")
    if not np.all(theta >= 0):
        raise ValueError(f"{name}['theta'] must be >= 0, got min {float(theta.min())}")
    out = {"mu0": mu0, "theta": theta}
    for n in ("omega", "h", "tau_x", "tau_t"):
        out[n] = _scalar(params[n], f"{name}[{n!r}]")
    return out


class _Model:
    """log L, rates and pi of one data set (sorted by time), the pair passes cached on their parameters."""

    def __init__(self, x, t, types, window, backend, threads, K=None):
        prep = prepare_data(x, t, window)
        self.prep = prep
        self.N, self.D = prep.n, prep.dim
        k, self.K = _check_types(types, self.N, K)
        self.k = np.ascontiguousarray(k[prep.order])
        self.t = prep.t_sorted
        self.window = prep.window
        self.x3 = np.zeros((self.N, 3))
        self.x3[:, :self.D] = prep.x_sorted
        self.ts = tie_starts(self.t)
        self.backend = resolve_backend(backend)
        self.threads = _numba_threads(threads)
        self.onehot = np.zeros((self.N, self.K))
        self.onehot[np.arange(self.N), self.k] = 1.0
        self._skey = self._gkey = None
        self._S = self._G = None
        self._gpu = None
        if is_gpu_backend(self.backend):
            from .gpu_marked import GpuMultitype
            self._gpu = GpuMultitype(get_device(self.backend), self.x3, self.t, self.ts, self.k, self.K)

    def rows(self, p: Mapping) -> tuple[np.ndarray, np.ndarray]:
        """(S (N,), G (N, K)) of :mod:`.cpu_multitype`."""
        skey, gkey = (p["tau_x"], p["tau_t"]), (p["h"], p["omega"])
        do_s, do_g = skey != self._skey, gkey != self._gkey
        if do_s or do_g:
            ax, at, bh = 0.5 / p["tau_x"] ** 2, 0.5 / p["tau_t"] ** 2, 0.5 / p["h"] ** 2
            if self._gpu is not None:
                S, G = self._gpu.rows(ax, at, bh, p["omega"], do_s, do_g)
            else:
                S = np.empty(self.N) if do_s else self._S
                G = np.empty((self.N, self.K)) if do_g else self._G
                with threads_context(self.threads):
                    multitype_rows(self.x3, self.t, self.ts, self.k, ax, at, bh, float(p["omega"]), do_s, do_g, S, G)
            if do_s:
                self._S, self._skey = S, skey
            if do_g:
                self._G, self._gkey = G, gkey
        return self._S, self._G

    def parts(self, p: Mapping) -> tuple[np.ndarray, np.ndarray]:
        """(background rate (N,), triggered rate by source type (N, K)) at every event."""
        S, G = self.rows(p)
        cs = phi0(self.D, p["tau_x"]) * phi0(1, p["tau_t"])
        cg = p["omega"] * phi0(self.D, p["h"])
        return p["mu0"][self.k] * cs * S, cg * G * p["theta"][:, self.k].T

    def compensator(self, p: Mapping) -> float:
        B = background_integral_terms(self.t, p["tau_t"], self.window)
        C = trigger_integral_terms(self.t, p["omega"], self.window)
        return float(np.dot(p["mu0"][self.k], B) + np.dot(p["theta"].sum(axis=1)[self.k], C))

    def log_likelihood(self, p: Mapping) -> float:
        bg, tr = self.parts(p)
        return float(np.sum(np.log(bg + tr.sum(axis=1)))) - self.compensator(p)

    def pi(self, p: Mapping) -> np.ndarray:
        """(N, K + 1), sorted order: column k the probability of a type-k parent, the last the background's."""
        bg, tr = self.parts(p)
        lam = bg + tr.sum(axis=1)
        return np.concatenate([tr, bg[:, None]], axis=1) / lam[:, None]


# ------------------------------------------------------------------------------------------ public
def log_likelihood(x: Any, t: Any, types: Any, params: Mapping, *, window: Any = None, backend: str = "cpu",
                   threads: int | None = None) -> float:
    """Log-likelihood of the multitype Hawkes model (module notes), every pair exact.

    Parameters
    ----------
    x : array_like, shape (N,) or (N, D)
        Event locations, D = 1, 2 or 3 (e.g. km). Any order.
    t : array_like, shape (N,)
        Event times (e.g. hours).
    types : array_like of int, shape (N,)
        Type code of every event, 0..K-1.
    params : dict
        ``mu0`` (K,) background weights, ``theta`` (K, K) with ``theta[k, l]`` the expected number of
        type-l offspring of a type-k event, ``omega`` (per unit of t), ``h`` (units of x), ``tau_x``,
        ``tau_t`` (background bandwidths, units of x and t).
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
    >>> from hphawkes_py.hawkes import multitype
    >>> theta = [[0.3, 0.2], [0.0, 0.4]]
    >>> x, t, k = multitype.simulate(mu=[0.5, 0.3], theta=theta, omega=2.0, h=0.1, region=2.0, duration=30.0,
    ...                              seed=1)
    >>> p = dict(mu0=[0.6, 0.5], theta=theta, omega=2.0, h=0.1, tau_x=1.0, tau_t=10.0)
    >>> round(multitype.log_likelihood(x, t, k, p), 4)
    -268.7838
    """
    p = _check_params(params)
    model = _Model(x, t, types, window, backend, threads, K=p["mu0"].shape[0])
    return model.log_likelihood(p)


def probabilities(x: Any, t: Any, types: Any, params: Mapping, *, window: Any = None, backend: str = "cpu",
                  threads: int | None = None) -> dict:
    """pi_n per type pair: the probability that event n was triggered by an event of type k.

    Parameters
    ----------
    x, t, types, params, window, backend, threads
        As in :func:`log_likelihood`.

    Returns
    -------
    dict
        ``pi`` (N, K): column k the probability that event n's parent has type k; ``background`` (N,):
        the probability that n is a background event (rows of pi plus background sum to 1);
        ``matrix`` (K, K): ``matrix[k, l]`` the expected number of type-l events triggered by type-k
        events (the sum of pi[n, k] over type-l events n). Per-event arrays in the caller's order.

    Examples
    --------
    >>> from hphawkes_py.hawkes import multitype
    >>> theta = [[0.3, 0.2], [0.0, 0.4]]
    >>> x, t, k = multitype.simulate(mu=[0.5, 0.3], theta=theta, omega=2.0, h=0.1, region=2.0, duration=30.0,
    ...                              seed=1)
    >>> pr = multitype.probabilities(x, t, k, dict(mu0=[0.6, 0.5], theta=theta, omega=2.0, h=0.1,
    ...                                            tau_x=1.0, tau_t=10.0))
    >>> bool(np.allclose(pr["pi"].sum(axis=1) + pr["background"], 1.0)), pr["matrix"].shape
    (True, (2, 2))
    """
    p = _check_params(params)
    model = _Model(x, t, types, window, backend, threads, K=p["mu0"].shape[0])
    return _pi_dict(model, model.pi(p))


def _pi_dict(model: _Model, pi_sorted: np.ndarray) -> dict:
    inv = model.prep.inverse
    matrix = pi_sorted[:, :model.K].T @ model.onehot
    return {"pi": pi_sorted[inv, :model.K], "background": pi_sorted[inv, model.K], "matrix": matrix}


def simulate(*, mu: Any, theta: Any, omega: float, h: float, region: Any, duration: float, dim: int = 2,
             seed: Any = None, return_parents: bool = False, max_events: int = 1_000_000):
    """Simulate a multitype spatiotemporal Hawkes process by the branching construction.

    Background events of type l: homogeneous Poisson with rate ``mu[l]`` per unit area (volume, length)
    per unit time on ``region x [0, duration]``. A type-k event has Poisson(theta[k, l]) children of
    type l, each after an Exp(omega) delay and displaced by N(0, h^2 I).

    Parameters
    ----------
    mu : array_like, shape (K,)
        Background rates per type (> 0).
    theta : array_like, shape (K, K)
        Expected offspring counts by (parent type, child type), >= 0, spectral radius < 1.
    omega : float
        Rate of the exponential delays (per unit of time).
    h : float
        Standard deviation of the displacements (units of x).
    region : float or array_like, shape (dim, 2)
        Background region: a side length or (low, high) per coordinate.
    duration : float
        Events are simulated on [0, duration].
    dim : int
        Spatial dimension, 1 to 3.
    seed : None, int or Generator
        Random seed.
    return_parents : bool
        Also return every event's parent (-1 for background), in the returned order.
    max_events : int
        Refuse to go past this many events.

    Returns
    -------
    x : ndarray, shape (N, dim)
    t : ndarray, shape (N,)
        Sorted.
    types : ndarray of int, shape (N,)
    parent : ndarray of int, shape (N,)
        Only with ``return_parents=True``.

    Examples
    --------
    >>> from hphawkes_py.hawkes import multitype
    >>> x, t, k = multitype.simulate(mu=[0.5, 0.3], theta=[[0.3, 0.2], [0.0, 0.4]], omega=2.0, h=0.1,
    ...                              region=2.0, duration=30.0, seed=1)
    >>> sorted(set(k.tolist())), x.shape == (t.size, 2)
    ([0, 1], True)
    """
    mu = as_float_array(np.atleast_1d(mu), "mu", ndim=1, dtype=np.float64)
    K = mu.shape[0]
    if not np.all(mu > 0):
        raise ValueError(f"mu must be > 0 for every type, got {mu.tolist()}")
    theta = as_float_array(np.atleast_2d(theta), "theta", ndim=2, dtype=np.float64)
    if theta.shape != (K, K) or not np.all(theta >= 0):
        raise ValueError(f"theta must be a K x K array (K = {K}, the size of mu) of values >= 0, got shape "
                         f"{theta.shape}")
    rho = float(np.max(np.abs(np.linalg.eigvals(theta))))
    if not rho < 1.0:
        raise ValueError(f"theta's spectral radius must be < 1 (a subcritical process), got {rho:.4g}")
    omega = check_positive(omega, "omega")
    h = check_positive(h, "h")
    duration = check_positive(duration, "duration")
    dim = check_int(dim, "dim", minimum=1, maximum=3)
    bounds = _region(region, dim)
    rng = check_random_state(seed)
    return_parents = check_bool(return_parents, "return_parents")
    max_events = check_int(max_events, "max_events", minimum=1)
    vol = float(np.prod(bounds[:, 1] - bounds[:, 0]))
    if float(mu.sum()) * vol * duration > max_events:
        raise ValueError(f"sum(mu) * |region| * duration = {float(mu.sum()) * vol * duration:.3g} expected "
                         f"background events exceeds max_events={max_events}")
    n0 = rng.poisson(mu * vol * duration)
    kk = np.repeat(np.arange(K), n0)
    n = kk.size
    xs = [bounds[:, 0] + rng.random((n, dim)) * (bounds[:, 1] - bounds[:, 0])]
    ts = [rng.random(n) * duration]
    ks = [kk]
    parents = [np.full(n, -1, np.int64)]
    gx, gt, gk, gi = xs[0], ts[0], kk, np.arange(n)
    total = n
    while gt.size:
        counts = rng.poisson(theta[gk])  # (events, K): children of each type
        local = np.repeat(np.repeat(np.arange(gt.size), K), counts.ravel())
        ctype = np.repeat(np.tile(np.arange(K), gt.size), counts.ravel())
        if local.size == 0:
            break
        ct = gt[local] + rng.exponential(1.0 / omega, local.size)
        cx = gx[local] + h * rng.standard_normal((local.size, dim))
        keep = ct <= duration
        par = gi[local][keep]
        gx, gt, gk = cx[keep], ct[keep], ctype[keep]
        gi = np.arange(total, total + gt.size)
        total += gt.size
        if total > max_events:
            raise ValueError(f"the simulation exceeded max_events={max_events}")
        xs.append(gx)
        ts.append(gt)
        ks.append(gk)
        parents.append(par)
    x, t, k, parent = (np.concatenate(a) for a in (xs, ts, ks, parents))
    order = np.argsort(t, kind="stable")
    x, t, k, parent = x[order], t[order], k[order].astype(np.int64), parent[order]
    if return_parents:
        new = np.empty_like(order)
        new[order] = np.arange(order.size)
        return x, t, k, np.where(parent >= 0, new[np.maximum(parent, 0)], -1)
    return x, t, k


# ------------------------------------------------------------------------------------------ sampler
def _names(K: int) -> list:
    return ([f"mu0[{i}]" for i in range(K)] + [f"theta[{i},{j}]" for i in range(K) for j in range(K)]
            + ["omega", "h"])


def _unpack(z: np.ndarray, K: int, fixed: Mapping) -> dict:
    v = np.exp(z)
    return {"mu0": v[:K], "theta": v[K:K + K * K].reshape(K, K), "omega": float(v[-2]), "h": float(v[-1]),
            "tau_x": fixed["tau_x"], "tau_t": fixed["tau_t"]}


def _run_chain(args):
    model, fixed, start, n_iter, burn_in, seed_seq, scales = args
    rng = np.random.default_rng(seed_seq)
    K = model.K
    z0 = np.log(np.concatenate([start["mu0"], start["theta"].ravel(), [start["omega"], start["h"]]]))
    cheap = np.arange(z0.size) < K + K * K
    pi_sum = np.zeros((model.N, K + 1))

    def log_post(z):
        if np.any(np.abs(z) > 30.0):
            return -math.inf
        v = np.exp(z)
        ll = model.log_likelihood(_unpack(z, K, fixed))  # half-normal priors, Jacobian of the log scale
        return ll + float(np.sum(-0.5 * (v / scales) ** 2 + z)) if np.isfinite(ll) else -math.inf

    def on_keep(z):
        pi_sum[:] += model.pi(_unpack(z, K, fixed))

    kept, acc, acc_joint = adaptive_chain(log_post, z0, n_iter, burn_in, rng, cheap, on_keep)
    names = _names(K)
    draws = {n: np.exp(kept[:, i]) for i, n in enumerate(names)}
    rates = {n: float(acc[i]) for i, n in enumerate(names)}
    rates["joint"] = float(acc_joint)
    return draws, rates, pi_sum / max(n_iter - burn_in, 1)


def mcmc(x: Any, t: Any, types: Any, *, tau_x: float, tau_t: float, n_iter: int = 2000, burn_in: int = 500,
         chains: int = 2, init: Mapping | None = None, n_types: int | None = None, window: Any = None,
         seed: Any = None, executor: Any = None, backend: str = "cpu", threads: int | None = None) -> MarkedPosterior:
    """Bayesian inference for the multitype Hawkes model by adaptive Metropolis.

    Samples mu0 (K), theta (K x K), omega and h on the log scale with half-normal priors (scales 1 for
    mu0, 10 for the others, as :func:`hphawkes_py.hawkes.mcmc`), one coordinate at a time and jointly with
    the burn-in covariance (:func:`~.marked_sampler.adaptive_chain`); the background bandwidths are fixed.

    Parameters
    ----------
    x, t, types : array_like
        Locations (N,) or (N, D), times (N,) and integer type codes 0..K-1 (N,).
    tau_x, tau_t : float
        Background bandwidths (units of x and t).
    n_iter, burn_in : int
        Sweeps per chain (>= 1) and discarded leading sweeps (0 <= burn_in < n_iter).
    chains : int
        Independent chains (>= 1).
    init : dict, optional
        Starting values of ``mu0`` (K,), ``theta`` (K, K), ``omega``, ``h`` (default 1, 0.1, 1, 1).
    n_types : int, optional
        K (default: the largest code plus one).
    window : (T0, T1), optional
        Observation window.
    seed : int, optional
        Seed of the chains (one spawned stream each).
    executor : concurrent.futures.Executor, optional
        Runs the chains (``executor.map``); default one after another.
    backend : {"cpu", "gpu", "emulator", "auto"}
        Where the pair sums run.
    threads : int, optional
        CPU threads (Numba).

    Returns
    -------
    MarkedPosterior
        Draws named ``mu0[k]``, ``theta[k,l]``, ``omega``, ``h``; ``extra["pi"]`` (N, K + 1) the posterior
        mean of pi (last column the background), ``extra["matrix"]`` the posterior mean theta (K, K).

    Examples
    --------
    >>> from hphawkes_py.hawkes import multitype
    >>> x, t, k = multitype.simulate(mu=[0.5, 0.3], theta=[[0.3, 0.2], [0.0, 0.4]], omega=2.0, h=0.1,
    ...                              region=2.0, duration=30.0, seed=1)
    >>> post = multitype.mcmc(x, t, k, tau_x=1.0, tau_t=10.0, n_iter=30, burn_in=10, seed=1)
    >>> post.extra["matrix"].shape, post.n_draws
    ((2, 2), 20)
    """
    n_iter, burn_in, chains = check_sampler_args(n_iter, burn_in, chains, executor)
    fixed = {"tau_x": _scalar(tau_x, "tau_x"), "tau_t": _scalar(tau_t, "tau_t")}
    if n_types is not None:
        n_types = check_int(n_types, "n_types", minimum=1)
    model = _Model(x, t, types, window, backend, threads, K=n_types)
    K = model.K
    start = {"mu0": np.ones(K), "theta": np.full((K, K), 0.1), "omega": 1.0, "h": 1.0}
    if init is not None:
        if not isinstance(init, Mapping):
            raise TypeError(f"init must be a dict of starting values, got {describe(init)}")
        unknown = sorted(set(init) - set(start))
        if unknown:
            raise ValueError(f"init has unknown key(s) {unknown}; it takes {tuple(start)}")
        full = _check_params(dict(start, **fixed, **init), "init")
        if full["mu0"].shape[0] != K:
            raise ValueError(f"init['mu0'] must hold K = {K} values, got {full['mu0'].shape[0]}")
        if not np.all(full["theta"] > 0):
            raise ValueError("init['theta'] must be > 0 (sampled on the log scale)")
        start = {n: full[n] for n in start}
    scales = np.array([PRIOR_SCALES["mu0"]] * K + [PRIOR_SCALES["theta"]] * (K * K)
                      + [PRIOR_SCALES["omega"], PRIOR_SCALES["h"]])
    seed = check_seed(seed)
    seqs = chain_seeds(seed, chains)
    t0 = time.perf_counter()
    runs = run_chains(_run_chain, [(model, fixed, start, n_iter, burn_in, s, scales) for s in seqs], executor)
    elapsed = time.perf_counter() - t0
    draws = {n: np.stack([r[0][n] for r in runs]) for n in runs[0][0]}
    rates = {n: np.array([r[1][n] for r in runs]) for n in runs[0][1]}
    pi = np.mean([r[2] for r in runs], axis=0)
    theta_mean = np.array([[draws[f"theta[{i},{j}]"].mean() for j in range(K)] for i in range(K)])
    extra = {"pi": pi[model.prep.inverse], "matrix": theta_mean}
    return MarkedPosterior(draws=draws, acceptance_rates=rates, sampled=tuple(draws), fixed=fixed, extra=extra,
                           n_iter=n_iter, burn_in=burn_in, seed=seed, backend=model.backend, elapsed_seconds=elapsed)


def plot_excitation_matrix(matrix: Any, labels: Any = None, path: Any = None, ax: Any = None):
    """Heat map of the excitation matrix: ``matrix[k, l]`` for parent type k (rows) and offspring type l
    (columns), each cell annotated with its value.

    Parameters
    ----------
    matrix : array_like, shape (K, K), or MarkedPosterior
        theta (or the expected counts of :func:`probabilities`); a posterior from :func:`mcmc` plots
        its posterior mean theta.
    labels : sequence of str, optional
        Type names (default 0..K-1).
    path : str or path, optional
        Save the figure there.
    ax : matplotlib Axes, optional
        Draw into it.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from hphawkes_py.hawkes import multitype
    >>> fig = multitype.plot_excitation_matrix([[0.3, 0.2], [0.0, 0.4]], labels=["burglary", "robbery"])
    >>> len(fig.axes) >= 1
    True
    """
    if isinstance(matrix, MarkedPosterior):
        if "matrix" not in matrix.extra:
            raise ValueError("matrix is a posterior without an excitation matrix (not from multitype.mcmc)")
        matrix = matrix.extra["matrix"]
    M = as_float_array(np.atleast_2d(matrix), "matrix", ndim=2, dtype=np.float64)
    K = M.shape[0]
    if M.shape != (K, K):
        raise ValueError(f"matrix must be square (K, K), got shape {M.shape}")
    labels = [str(i) for i in range(K)] if labels is None else [str(s) for s in labels]
    if len(labels) != K:
        raise ValueError(f"labels must name the K = {K} types, got {len(labels)}")
    import matplotlib.pyplot as plt
    if ax is None:
        fig, ax = plt.subplots(figsize=(1.2 * K + 2.5, 1.2 * K + 1.5))
    else:
        fig = ax.figure
    im = ax.imshow(M, cmap="viridis", vmin=0.0)
    for i in range(K):
        for j in range(K):
            ax.text(j, i, f"{M[i, j]:.2f}", ha="center", va="center",
                    color="white" if M[i, j] < 0.6 * max(M.max(), 1e-300) else "black")
    ax.set_xticks(range(K), labels)
    ax.set_yticks(range(K), labels)
    ax.set_xlabel("offspring type")
    ax.set_ylabel("parent type")
    ax.set_title("excitation matrix theta")
    fig.colorbar(im, ax=ax)
    if path is not None:
        fig.savefig(path, bbox_inches="tight")
    return fig


# hp.hawkes.log_likelihood, simulate, mcmc, ... with types= hand over to this module
SUBMODELS["multitype"] = sys.modules[__name__]
