"""The Hawkes model with latent structure, after the branches of hpHawkes: coarsened event locations
sampled inside their known regions, and event-specific random rates (Holbrook, Ji & Suchard on
spatially coarsened ShotSpotter and wildfire data; hpHawkes' ``sampleLocations``, ``setRandomRates``,
``getRandomRatesGradient/Hessian``).

Model (the paper's Gaussian kernels and exponential trigger, see :mod:`.cpu_latent` for the sums)::

    lambda_n = mu0 c_S sum_m exp(beta_m) e_nm + theta c_G sum_{m: t_m < t_n} exp(gamma_m) u_nm
    Lambda   = sum_m [mu0 exp(beta_m) B_m + theta exp(gamma_m) C_m]

* **Coarsened locations.** Event n was recorded at ``x_n`` but truly happened somewhere in a known
  region R_n around it (a box, a ball of given radius, or the raster cell holding ``x_n``); the true
  location is latent with a uniform prior on R_n. The compensator does not involve the locations (the
  spatial kernels integrate to one over R^D), so a location move changes only the rates it touches.
* **Random rates.** A latent log-rate per event, ``gamma_m`` on event m's self-excitation weight (its
  offspring productivity, hpHawkes' ``setRandomRates`` on the log scale) or ``beta_m`` on its share of
  the background smoother, with prior N(0, sigma^2) and an inverse-gamma prior on sigma^2.

Sampler (:func:`mcmc_latent`), one sweep: (1) every sampled parameter by a random-walk Metropolis step on
its logarithm, with the half-normal priors of :func:`~.sampler.mcmc`; (2) every latent location by a
Metropolis-within-Gibbs step inside its region (the O(neighbours) update of
:func:`~.cpu_latent.location_sweep`); (3) the log-rates jointly by Hamiltonian Monte Carlo on the
analytic gradient, with a diagonal mass matrix: the likelihood's curvature (its diagonal Hessian, adapted
in burn-in) plus the prior's precision 1 / sigma^2; then sigma^2
from its conjugate inverse-gamma conditional. Proposal scales, the leapfrog step and the mass matrix
adapt during burn-in only and stay fixed afterwards, so the kept draws are a Markov chain with the
posterior as stationary law.

Time cut-offs: as the engines (:mod:`.windows`), with the bounds scaled by the weights' range
(skipped mass <= 1e-13 of every rate); ``exact=True`` evaluates every pair.
"""
from __future__ import annotations

import dataclasses
import math
import time
from typing import Any, Mapping

import numpy as np

from .._backend import get_device, is_gpu_backend, resolve_backend, threads_context
from .._validate import as_float_array, check_bool, check_int, check_positive, check_seed
from .compensator import background_integral_terms, trigger_integral_terms
from .cpu_latent import REGION_KIND, latent_columns, latent_rows, location_sweep
from .kernels import phi0
from .model import _as_params, _check_params_range, _numba_threads, prepare_data
from .mode import _check_model, _check_ranges, _to_state
from .times import tie_starts
from .windows import EPS_G, EPS_S, RHO_DEFAULT, background_delta, trigger_delta

__all__ = ["latent_gradient", "mcmc_latent", "LatentPosterior", "RANDOM_RATES"]

#: Where the per-event log-rates act: on event m's share of the background smoother or on its
#: self-excitation weight (offspring productivity).
RANDOM_RATES = ("background", "trigger")


# ------------------------------------------------------------------------------------------ the model
class LatentModel:
    """Log-likelihood, rates and gradients of the latent-structure model for one data set (sorted by time).

    Parameters
    ----------
    t : ndarray, shape (N,)
        Sorted event times (float64).
    D : int
        Spatial dimension (1, 2 or 3).
    window : (T0, T1)
        Observation window.
    backend : str
        Resolved backend: ``"cpu"`` (Numba), ``"gpu"`` or ``"emulator"`` (``kernels/hawkes_latent.cu``).
    threads : int or None
        Numba threads.
    exact : bool
        Every pair (True) or the time cut-offs.

    Examples
    --------
    >>> import numpy as np
    >>> from hphawkes_py.hawkes.latent import LatentModel
    >>> t = np.array([0.0, 0.5, 1.0]); x = np.zeros((3, 3))
    >>> m = LatentModel(t, 1, (0.0, 1.0), "cpu", None, True)
    >>> p = dict(mu0=0.5, tau_x=1.0, tau_t=1.0, theta=0.5, omega=1.0, h=1.0)
    >>> round(m.log_likelihood(x, p, np.ones(3), np.ones(3)), 6)
    -4.675937
    """

    def __init__(self, t, D, window, backend, threads, exact):
        self.t = np.ascontiguousarray(t, dtype=np.float64)
        self.N = self.t.shape[0]
        self.D = int(D)
        self.window = (float(window[0]), float(window[1]))
        self.backend = backend
        self.threads = threads
        self.exact = bool(exact)
        self.ts = tie_starts(self.t)
        self._idx_key = None
        self._idx = None
        self._gpu = None
        if is_gpu_backend(backend):
            from .gpu_latent import GpuLatent
            self._gpu = GpuLatent(get_device(backend), self.t)

    # -- the cut-offs --------------------------------------------------------------------------
    def deltas(self, p: Mapping, wb, wg) -> tuple[float, float]:
        """(Delta_S, Delta_G): the time cut-offs for parameters ``p`` and weights ``wb``, ``wg``."""
        if self.exact:
            return math.inf, math.inf
        bmin, bmax = float(np.min(wb)), float(np.max(wb))
        gmax = float(np.max(wg))
        ds = background_delta(self.N, p["tau_t"], EPS_S * bmin / bmax)
        if p["theta"] > p["mu0"] / RHO_DEFAULT:
            return ds, math.inf
        dg = trigger_delta(self.N, self.D, p["tau_x"], p["tau_t"], p["h"], p["omega"], RHO_DEFAULT,
                           eps=EPS_G * bmin / gmax)
        return ds, dg

    def indices(self, ds: float, dg: float) -> tuple:
        """(lo_s, hi_s, lo_g, ts, src_s_lo, src_s_hi, src_g_lo, src_g_hi) of :mod:`.cpu_latent` (int64)."""
        if self._idx_key == (ds, dg):
            return self._idx
        t, N, ts = self.t, self.N, self.ts
        if math.isinf(ds):
            lo_s, hi_s = np.zeros(N, np.int64), np.full(N, N, np.int64)
        else:
            lo_s = np.searchsorted(t, t - ds, side="left").astype(np.int64)
            hi_s = np.searchsorted(t, t + ds, side="right").astype(np.int64)
        lo_g = np.zeros(N, np.int64) if math.isinf(dg) else np.minimum(
            np.searchsorted(t, t - dg, side="left"), ts).astype(np.int64)
        k = np.arange(N)
        # the events n whose sums hold k: lo[n] <= k < hi[n], a range since lo and hi do not decrease in n
        src_s_lo = np.searchsorted(hi_s, k, side="right").astype(np.int64)
        src_s_hi = np.searchsorted(lo_s, k, side="right").astype(np.int64)
        src_g_lo = np.searchsorted(ts, k, side="right").astype(np.int64)
        src_g_hi = np.searchsorted(lo_g, k, side="right").astype(np.int64)
        self._idx = (lo_s, hi_s, lo_g, ts, src_s_lo, src_s_hi, src_g_lo, src_g_hi)
        self._idx_key = (ds, dg)
        return self._idx

    def constants(self, p: Mapping) -> tuple:
        """(ax, at, bh, c_S, c_G) for parameters ``p``."""
        return (0.5 / p["tau_x"] ** 2, 0.5 / p["tau_t"] ** 2, 0.5 / p["h"] ** 2,
                phi0(self.D, p["tau_x"]) * phi0(1, p["tau_t"]), p["omega"] * phi0(self.D, p["h"]))

    # -- the passes ----------------------------------------------------------------------------
    def sums(self, x, p, wb, wg, do_s=True, do_g=True):
        """(S, G): the rows of :func:`~.cpu_latent.latent_rows` at locations ``x`` (N, 3)."""
        idx = self.indices(*self.deltas(p, wb, wg))
        ax, at, bh, _, _ = self.constants(p)
        if self._gpu is not None:
            return self._gpu.rows(x, idx[:4], wb, wg, ax, at, bh, p["omega"], do_s, do_g)
        S = np.zeros(self.N)
        G = np.zeros(self.N)
        with threads_context(self.threads):
            latent_rows(x, self.t, *idx[:4], wb, wg, ax, at, bh, float(p["omega"]), do_s, do_g, S, G)
        return S, G

    def compensator(self, p, wb, wg) -> float:
        """Lambda = mu0 sum_m wb_m B_m + theta sum_m wg_m C_m."""
        B = background_integral_terms(self.t, p["tau_t"], self.window)
        C = trigger_integral_terms(self.t, p["omega"], self.window)
        return float(p["mu0"] * np.dot(wb, B) + p["theta"] * np.dot(wg, C))

    def rates(self, S, G, p) -> np.ndarray:
        """lambda_n from the row sums."""
        _, _, _, cs, cg = self.constants(p)
        return p["mu0"] * cs * S + p["theta"] * cg * G

    def log_likelihood(self, x, p, wb, wg) -> float:
        """log L at locations ``x`` (N, 3), parameters ``p`` and weights ``wb``, ``wg``."""
        S, G = self.sums(x, p, wb, wg)
        return float(np.sum(np.log(self.rates(S, G, p)))) - self.compensator(p, wb, wg)

    def gradient(self, x, p, wb, wg, need: int = 7, fixed_sums=None) -> dict:
        """log L and its gradient in the locations and both kinds of log-rates (with their diagonal
        second derivatives), in sorted order; see :func:`latent_gradient`. ``need`` (bits: 1
        locations, 2 background, 4 trigger log-rates) says which are wanted (the others are not
        computed, their entries meaningless). ``fixed_sums``: ``("S", S, cut)`` or ``("G", G, cut)``, row sums
        known not to have changed (S does not depend on the trigger weights, G not on the background
        ones), reused when their cut-off is the one they were computed with (``"cut"`` entry of the result)."""
        ds, dg = self.deltas(p, wb, wg)
        reuse = fixed_sums is not None and fixed_sums[2][0 if fixed_sums[0] == "S" else 1] == (ds, dg)[
            0 if fixed_sums[0] == "S" else 1]
        S, G = self.sums(x, p, wb, wg, not (reuse and fixed_sums[0] == "S"), not (reuse and fixed_sums[0] == "G"))
        if reuse:
            S, G = (fixed_sums[1], G) if fixed_sums[0] == "S" else (S, fixed_sums[1])
        lam = self.rates(S, G, p)
        v = 1.0 / lam
        idx = self.indices(ds, dg)
        ax, at, bh, cs, cg = self.constants(p)
        if self._gpu is not None:
            LB, LG, A = self._gpu.columns(x, idx, wb, wg, v, ax, at, bh, p["omega"], need)
        else:
            LB = np.zeros((self.N, 3))
            LG = np.zeros((self.N, 3))
            A = np.zeros((self.N, 4))
            with threads_context(self.threads):
                latent_columns(x, self.t, *idx, wb, wg, v, ax, at, bh, float(p["omega"]), int(need), LB, LG, A)
        B = background_integral_terms(self.t, p["tau_t"], self.window)
        C = trigger_integral_terms(self.t, p["omega"], self.window)
        kb, kg = p["mu0"] * cs, p["theta"] * cg
        loc = (kb / p["tau_x"] ** 2) * LB + (kg / p["h"] ** 2) * LG
        gb = wb * (kb * A[:, 0] - p["mu0"] * B)
        gg = wg * (kg * A[:, 2] - p["theta"] * C)
        ll = float(np.sum(np.log(lam))) - float(p["mu0"] * np.dot(wb, B) + p["theta"] * np.dot(wg, C))
        return {"log_likelihood": ll, "locations": loc[:, :self.D], "rates": lam, "S": S, "G": G, "cut": (ds, dg),
                "background_log_rates": gb, "background_log_rates_hessian": gb - (wb * kb) ** 2 * A[:, 1],
                "trigger_log_rates": gg, "trigger_log_rates_hessian": gg - (wg * kg) ** 2 * A[:, 3]}


# ------------------------------------------------------------------------------------------ checks
def _pad3(x: np.ndarray) -> np.ndarray:
    out = np.zeros((x.shape[0], 3))
    out[:, :x.shape[1]] = x
    return out


def _check_log_rates(value: Any, name: str, N: int, order: np.ndarray) -> np.ndarray:
    if value is None:
        return np.ones(N)
    a = as_float_array(value, name, ndim=1, dtype=np.float64)
    if a.shape[0] != N:
        raise ValueError(f"{name} must hold one log-rate per event ({N}), got {a.shape[0]}")
    if np.max(np.abs(a)) > 50.0:
        raise ValueError(f"{name} must lie in [-50, 50] (log scale; exp(50) ~ 5e21), got max |value| "
                         f"{float(np.max(np.abs(a))):g}")
    return np.exp(a[order])


def _check_backend(backend: Any) -> str:
    return resolve_backend(backend)


def _check_region(region: Any, x: np.ndarray) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """``(kind, lo, hi, size)``: the regions of the events (caller's order, D columns; ``hi[:, 0]``
    the radius of a ball) and a length scale of each (for the proposals)."""
    N, D = x.shape
    kinds = ("box", "circle", "raster")
    if not isinstance(region, tuple) or len(region) < 2 or region[0] not in kinds:
        raise ValueError(f"location_region must be ('box', half_width), ('circle', radius) or ('raster', cell_size"
                         f"[, origin]), got {region!r}")
    kind = region[0]
    if kind == "circle":
        if len(region) != 2:
            raise ValueError(f"location_region=('circle', radius) takes one value, got {region!r}")
        r = as_float_array(np.broadcast_to(np.asarray(region[1], dtype=float), (N,)) if np.ndim(region[1]) == 0
                           else region[1], "location_region radius", ndim=1, dtype=np.float64)
        if r.shape[0] != N or not np.all(r > 0):
            raise ValueError(f"location_region radius must be > 0, one value or one per event ({N}), got "
                             f"shape {r.shape}, min {float(np.min(r)) if r.size else float('nan'):g}")
        hi = np.zeros((N, D))
        hi[:, 0] = r
        return REGION_KIND["circle"], x.copy(), hi, r.copy()
    if kind == "box":
        if len(region) != 2:
            raise ValueError(f"location_region=('box', half_width) takes one value, got {region!r}")
        try:
            hw = np.broadcast_to(np.asarray(region[1], dtype=float), (N, D)).copy()
        except (ValueError, TypeError):
            raise ValueError(f"location_region half_width must be a number, D = {D} numbers or an (N, D) array, "
                             f"got {np.shape(region[1])}") from None
        as_float_array(hw, "location_region half_width", ndim=2, dtype=np.float64)
        if not np.all(hw > 0):
            raise ValueError(f"location_region half_width must be > 0, got min {float(hw.min()):g}")
        return REGION_KIND["box"], x - hw, x + hw, hw.max(axis=1)
    if len(region) not in (2, 3):
        raise ValueError(f"location_region=('raster', cell_size[, origin]), got {region!r}")
    cs = check_positive(region[1], "location_region cell_size")
    origin = np.zeros(D) if len(region) == 2 else np.broadcast_to(
        as_float_array(np.atleast_1d(region[2]), "location_region origin", ndim=1, dtype=np.float64), (D,))
    lo = origin + np.floor((x - origin) / cs) * cs
    return REGION_KIND["box"], lo, lo + cs, np.full(N, 0.5 * cs)


# ------------------------------------------------------------------------------------------ public
def latent_gradient(x: Any, t: Any, params: Any, *, background_log_rates: Any = None,
                    trigger_log_rates: Any = None, exact: bool = False, window: Any = None,
                    backend: str = "auto", threads: int | None = None) -> dict:
    """Log-likelihood of the Hawkes model with per-event log-rates, and its gradient in the event
    locations and the log-rates (with the diagonal of the Hessian in the log-rates).

    Parameters
    ----------
    x : array_like, shape (N,) or (N, D)
        Event locations (D = 1, 2 or 3; e.g. km). Any order.
    t : array_like, shape (N,)
        Event times (e.g. hours).
    params : HawkesParams or dict
        The six parameters (exponential trigger, Gaussian kernels).
    background_log_rates, trigger_log_rates : array_like, shape (N,), optional
        Per-event log-rates beta_m (on event m's share of the background smoother) and gamma_m (on its
        self-excitation weight), in [-50, 50]; default 0 (the plain model).
    exact : bool
        Every pair (True) or the windowed sums (skipped mass below 1e-13 of every rate).
    window : (T0, T1), optional
        Observation window (units of t); default (min t, max t).
    backend : {"cpu", "gpu", "emulator", "auto"}
        Where the pair sums run ("auto": a usable GPU, else the CPU, as ``log_likelihood``).
    threads : int, optional
        CPU threads (Numba).

    Returns
    -------
    dict
        ``"log_likelihood"`` (float); ``"locations"`` (N, D), d log L / d x_n (1/units of x);
        ``"background_log_rates"``, ``"trigger_log_rates"`` (N,), d log L / d beta_n and d gamma_n;
        ``"background_log_rates_hessian"``, ``"trigger_log_rates_hessian"`` (N,), the diagonal second
        derivatives; ``"rates"`` (N,), lambda_n. All in the caller's order of events.

    Examples
    --------
    >>> x, t = hp.hawkes.simulate(mu=0.5, theta=0.5, omega=2.0, h=0.1, region=2.0, duration=50.0, seed=1)
    >>> p = dict(mu0=0.5, tau_x=0.5, tau_t=5.0, theta=0.5, omega=2.0, h=0.1)
    >>> from hphawkes_py.hawkes.latent import latent_gradient
    >>> g = latent_gradient(x, t, p)
    >>> round(g["log_likelihood"], 3), g["locations"].shape  # the plain model's log-likelihood
    (-165.468, (187, 2))
    """
    p = _as_params(params)
    prep = prepare_data(x, t, window)
    exact = check_bool(exact, "exact")
    threads = _numba_threads(threads)
    resolved = _check_backend(backend)
    _check_params_range(p, np.float64)
    wb = _check_log_rates(background_log_rates, "background_log_rates", prep.n, prep.order)
    wg = _check_log_rates(trigger_log_rates, "trigger_log_rates", prep.n, prep.order)
    model = LatentModel(prep.t_sorted, prep.dim, prep.window, resolved, threads, exact)
    out = model.gradient(_pad3(prep.x_sorted), p.to_dict(), wb, wg)
    for k in ("S", "G", "cut"):
        out.pop(k)
    inv = prep.inverse
    return {k: (v if np.ndim(v) == 0 else v[inv]) for k, v in out.items()}


@dataclasses.dataclass
class LatentPosterior:
    """Draws of :func:`mcmc_latent`: the parameters' chains and the latent quantities' posterior moments.

    Parameters
    ----------
    draws : dict of str -> ndarray, shape (chains, n_iter - burn_in)
        Kept draws of every parameter (natural units; fixed ones constant), and ``"sigma"`` (the
        log-rates' prior s.d.) when random rates were sampled.
    acceptance_rates : dict of str -> ndarray, shape (chains,)
        Post burn-in acceptance of every parameter's Metropolis step, of the location moves
        (``"locations"``) and of the log-rates' HMC (``"log_rates"``).
    locations_mean, locations_sd : ndarray, shape (N, D) or None
        Posterior mean and s.d. of every event's latent location (caller's order), when sampled.
    log_rates_mean, log_rates_sd : ndarray, shape (N,) or None
        Posterior mean and s.d. of every event's log-rate, when sampled.
    self_excitation : ndarray, shape (N,)
        Posterior mean of pi_n = (theta part of lambda_n) / lambda_n, averaged over the parameters
        and the latent locations and rates.
    random_rates : str or None
        ``"background"``, ``"trigger"`` or None.
    location_region : tuple or None
        The ``location_region=`` argument.
    sampled, fixed : tuple, dict
        Sampled parameters; fixed parameters and their values.
    n_iter, burn_in : int
        Sweeps per chain and discarded sweeps.
    backend : str
        Where the pair sums ran.
    elapsed_seconds : float
        Wall time of all chains.
    seconds_per_sweep : float
        ``elapsed_seconds / (chains * n_iter)``.

    Examples
    --------
    >>> x, t = hp.hawkes.simulate(mu=0.5, theta=0.5, omega=2.0, h=0.1, region=2.0, duration=50.0, seed=1)
    >>> from hphawkes_py.hawkes.latent import mcmc_latent
    >>> post = mcmc_latent(x, t, location_region=("raster", 0.2), n_iter=30, burn_in=10,
    ...                    fixed={"tau_x": 0.5, "tau_t": 5.0}, seed=1, progress=False)
    >>> post.draws["theta"].shape, post.locations_mean.shape
    ((1, 20), (187, 2))
    """

    draws: dict
    acceptance_rates: dict
    locations_mean: Any
    locations_sd: Any
    log_rates_mean: Any
    log_rates_sd: Any
    self_excitation: np.ndarray
    random_rates: Any
    location_region: Any
    sampled: tuple
    fixed: dict
    n_iter: int
    burn_in: int
    backend: str
    elapsed_seconds: float
    seconds_per_sweep: float

    def params_mean(self) -> dict:
        """Posterior means of the parameters (natural units)."""
        return {n: float(v.mean()) for n, v in self.draws.items()}

    def to_arviz(self):
        """The parameters' draws as an ``arviz.InferenceData`` (for ``az.summary``, ``az.ess``)."""
        import arviz as az
        return az.from_dict(posterior={n: v for n, v in self.draws.items()})



# ------------------------------------------------------------------------------------------ sampler
_ADAPT = 0.05  # Robbins-Monro gain of the burn-in adaptation (log scale)


def _log_prior_z(name: str, value: float, scale: float) -> float:
    """Log prior of log(value): the half-normal on the sampled state s (s = value or 1/value) of
    :func:`~.sampler.mcmc`, with the Jacobian |ds / d log value| = s."""
    s = _to_state(name, value)
    return -0.5 * (s / scale) ** 2 + math.log(s)


def _run_latent_chain(model, x_obs, region, rr, cfg, seed_seq):
    rng = np.random.default_rng(seed_seq)
    N, D = model.N, model.D
    p = dict(cfg["fixed"], **cfg["init"])
    sampled = cfg["sampled"]
    x = _pad3(x_obs)
    wb = np.ones(N)
    wg = np.ones(N)
    sigma2 = cfg["rate_prior"][1] / max(cfg["rate_prior"][0] - 1.0, 1.0)
    # the log-rates (of rr) start as a draw from their prior: started at 0, a first rejected move would
    # leave them all at 0 and sigma^2 | 0 would collapse
    a = math.sqrt(sigma2) * rng.standard_normal(N) if rr else np.zeros(N)
    curvature = np.zeros(N)  # -d2 log L / d a_k^2 (>= 0), adapted in burn-in; the mass adds 1 / sigma^2
    eps_hmc = 0.1 * min(1.0, (1000.0 / N) ** 0.25)  # the leapfrog error grows with the dimension like N eps^4
    L = cfg["leapfrog_steps"]
    prop_sd = {n: 0.1 for n in sampled}
    loc_scale = 0.5
    if region is not None:
        kind, r_lo, r_hi, size = region
        r_lo3, r_hi3 = _pad3(r_lo), _pad3(r_hi)
        if kind == REGION_KIND["box"]:  # the unused dimensions' box is [0, 0]
            r_lo3[:, D:] = 0.0
            r_hi3[:, D:] = 0.0
        scratch = np.zeros(N)
    n_keep = cfg["n_iter"] - cfg["burn_in"]
    names = list(cfg["names"]) + (["sigma"] if rr else [])
    draws = {n: np.empty(n_keep) for n in names}
    acc = {n: 0 for n in sampled}
    acc_loc = 0
    acc_hmc = 0
    m1 = np.zeros((N, 3))
    m2 = np.zeros((N, 3))
    r1 = np.zeros(N)
    r2 = np.zeros(N)
    pi_sum = np.zeros(N)

    def refresh(q, b, g, cut, S, G, s_dirty, g_dirty):
        """Row sums at (q, b, g) recomputing only what changed (or whose cut-off moved), and log L."""
        new_cut = model.deltas(q, b, g)
        do_s = s_dirty or new_cut[0] != cut[0]
        do_g = g_dirty or new_cut[1] != cut[1]
        if do_s or do_g:
            Sn, Gn = model.sums(x, q, b, g, do_s, do_g)
            S, G = (Sn if do_s else S), (Gn if do_g else G)
        return new_cut, S, G, float(np.sum(np.log(model.rates(S, G, q)))) - model.compensator(q, b, g)

    cut, S, G, ll = refresh(p, wb, wg, (None, None), None, None, True, True)

    def weights(av):
        return (np.exp(av), wg) if rr == "background" else (wb, np.exp(av))

    def log_post_rates(av, cache):
        b, g = weights(av)
        out = model.gradient(x, p, b, g, need=2 if rr == "background" else 4, fixed_sums=cache)
        key = rr + "_log_rates"
        return (out["log_likelihood"] - 0.5 * np.dot(av, av) / sigma2, out[key] - av / sigma2,
                out[key + "_hessian"] - 1.0 / sigma2)

    for it in range(cfg["n_iter"]):
        keep = it >= cfg["burn_in"]
        # (1) parameters, one at a time
        for n in sampled:
            new = dict(p)
            new[n] = p[n] * math.exp(prop_sd[n] * rng.standard_normal())
            try:
                _check_params_range(_as_params(new), np.float64)
            except ValueError:
                ok = False
            else:
                cut_new, Sn, Gn, ll_new = refresh(new, wb, wg, cut, S, G, n in ("tau_x", "tau_t"), n in ("h", "omega"))
                sc = cfg["prior_scales"][n]
                log_r = ll_new - ll + _log_prior_z(n, new[n], sc) - _log_prior_z(n, p[n], sc)
                ok = math.log(rng.uniform()) < log_r
            if ok:
                p, cut, S, G, ll = new, cut_new, Sn, Gn, ll_new
                acc[n] += keep
            if not keep:
                prop_sd[n] *= math.exp(_ADAPT * ((1.0 if ok else 0.0) - 0.44) * 10.0 / math.sqrt(it + 10.0))
        # (2) latent locations
        if region is not None:
            lam = model.rates(S, G, p)
            idx = model.indices(*model.deltas(p, wb, wg))
            ax, at, bh, cs, cg = model.constants(p)
            z = np.zeros((N, 3))
            z[:, :D] = rng.standard_normal((N, D))
            with threads_context(model.threads):
                k = location_sweep(x, model.t, *idx, wb, wg, ax, at, bh, float(p["omega"]), p["mu0"] * cs,
                                   p["theta"] * cg, lam, loc_scale * size, z, np.log(rng.uniform(size=N)),
                                   kind, r_lo3, r_hi3, scratch)
            acc_loc += k if keep else 0
            if not keep:
                loc_scale *= math.exp(_ADAPT * (k / N - 0.3) * 10.0 / math.sqrt(it + 10.0))
            cut, S, G, ll = refresh(p, wb, wg, cut, S, G, True, True)
        # (3) log-rates by HMC with a diagonal mass, then sigma^2 | log-rates
        if rr:
            fixed_sums = ("G", G, model.deltas(p, wb, wg)) if rr == "background" else ("S", S, model.deltas(p, wb, wg))
            lp0, g0, h0 = log_post_rates(a, fixed_sums)
            if not keep and it % 10 == 0:  # the likelihood's curvature, fixed after burn-in
                curvature = np.maximum(-(h0 + 1.0 / sigma2), 0.0)
            mass = curvature + 1.0 / sigma2  # the diagonal of the negative Hessian of log p(a | sigma^2, ...)
            mom = rng.standard_normal(N) * np.sqrt(mass)
            h_start = -lp0 + 0.5 * np.sum(mom * mom / mass)
            av, gv = a.copy(), g0
            mom = mom + 0.5 * eps_hmc * gv
            for step in range(L):
                av = av + eps_hmc * mom / mass
                lpv, gv, _ = log_post_rates(av, fixed_sums) if np.all(np.abs(av) < 50.0) else (-np.inf, gv, None)
                if not np.isfinite(lpv):
                    break
                if step < L - 1:
                    mom = mom + eps_hmc * gv
            mom = mom + 0.5 * eps_hmc * gv
            h_end = -lpv + 0.5 * np.sum(mom * mom / mass)
            prob = math.exp(min(0.0, h_start - h_end)) if np.isfinite(h_end) else 0.0
            if rng.uniform() < prob:
                a = av
                acc_hmc += keep
            if not keep:
                eps_hmc *= math.exp(_ADAPT * (prob - 0.7) * 10.0 / math.sqrt(it + 10.0))
            shape = cfg["rate_prior"][0] + 0.5 * N
            scale = cfg["rate_prior"][1] + 0.5 * float(np.dot(a, a))
            sigma2 = scale / rng.gamma(shape)
            wb, wg = weights(a)
            cut, S, G, ll = refresh(p, wb, wg, cut, S, G, rr == "background", rr == "trigger")
        if keep:
            j = it - cfg["burn_in"]
            for n in cfg["names"]:
                draws[n][j] = p[n]
            if rr:
                draws["sigma"][j] = math.sqrt(sigma2)
            m1 += x
            m2 += x * x
            r1 += a
            r2 += a * a
            _, _, _, _, cg = model.constants(p)
            pi_sum += p["theta"] * cg * G / model.rates(S, G, p)
        if cfg["progress"] and (it + 1) % max(1, cfg["n_iter"] // 10) == 0:
            print(f"sweep {it + 1}/{cfg['n_iter']}: log L = {ll:.3f}", flush=True)
    k = max(n_keep, 1)
    rates = dict({n: acc[n] / k for n in sampled}, locations=acc_loc / (k * N), log_rates=acc_hmc / k)
    return draws, rates, (m1 / k, m2 / k), (r1 / k, r2 / k), pi_sum / k


def mcmc_latent(x: Any, t: Any, *, location_region: Any = None, random_rates: Any = None, n_iter: int = 1000,
                burn_in: int = 200, chains: int = 1, sample: Any = None, fixed: Mapping | None = None,
                init: Mapping | None = None, priors: Mapping | None = None, rate_prior: Any = (2.0, 0.5),
                leapfrog_steps: int = 10, seed: Any = None, exact: bool = False, window: Any = None,
                backend: str = "auto", threads: int | None = None, progress: bool = True) -> LatentPosterior:
    """Bayesian inference for the Hawkes model with coarsened locations and/or per-event random rates.

    Parameters
    ----------
    x : array_like, shape (N,) or (N, D)
        Recorded (possibly coarsened) event locations, D = 1, 2 or 3 (e.g. km). Any order.
    t : array_like, shape (N,)
        Event times (e.g. hours).
    location_region : tuple, optional
        Where each event's true location may lie (uniform prior there); sampled when given:
        ``("box", half_width)`` the box x_n +- half_width (a number, D numbers or (N, D));
        ``("circle", radius)`` the ball of that radius around x_n (a number or (N,)); ``("raster",
        cell_size[, origin])`` the cell of the square grid (units of x) that holds x_n.
    random_rates : {"background", "trigger"}, optional
        Sample a log-rate per event on its share of the background smoother or on its self-excitation
        weight (offspring productivity), with prior N(0, sigma^2).
    n_iter, burn_in : int
        Sweeps per chain (>= 1) and discarded leading sweeps (0 <= burn_in < n_iter), in which
        the proposal scales, the leapfrog step and the mass matrix adapt.
    chains : int
        Independent chains, run one after another (>= 1).
    sample, fixed, init, priors : optional
        As in :func:`~hphawkes_py.hawkes.mcmc`: the sampled parameters (default h, omega, theta, mu0),
        values of the others, starting values (natural units; default: the posterior mode given the
        recorded data, :func:`~hphawkes_py.hawkes.posterior_mode`) and half-normal prior scales.
    rate_prior : (shape, scale)
        Inverse-gamma prior on sigma^2 (both > 0; mean scale / (shape - 1) for shape > 1).
    leapfrog_steps : int
        Leapfrog steps of each HMC move of the log-rates (>= 1).
    seed : int, optional
        Random seed.
    exact : bool
        Every pair (True) or the windowed sums.
    window : (T0, T1), optional
        Observation window (units of t).
    backend : {"cpu", "gpu", "emulator", "auto"}
        Where the rows and gradient passes run ("auto": a usable GPU, else the CPU); the location
        moves run on the CPU.
    threads : int, optional
        CPU threads (Numba).
    progress : bool
        Print the log-likelihood every tenth of the run.

    Returns
    -------
    LatentPosterior
        Parameter draws, acceptance rates, and the latent locations' and log-rates' posterior means and
        s.d., the posterior mean of pi_n, all in the caller's order of events.

    Examples
    --------
    >>> x, t = hp.hawkes.simulate(mu=0.5, theta=0.5, omega=2.0, h=0.1, region=2.0, duration=50.0, seed=1)
    >>> from hphawkes_py.hawkes.latent import mcmc_latent
    >>> post = mcmc_latent(x, t, random_rates="trigger", n_iter=20, burn_in=5,
    ...                    fixed={"tau_x": 0.5, "tau_t": 5.0}, seed=1, progress=False)
    >>> post.log_rates_mean.shape, sorted(post.acceptance_rates)[:3]
    ((187,), ['h', 'locations', 'log_rates'])
    """
    prep = prepare_data(x, t, window)
    n_iter = check_int(n_iter, "n_iter", minimum=1)
    burn_in = check_int(burn_in, "burn_in", minimum=0)
    if burn_in >= n_iter:
        raise ValueError(f"burn_in must be < n_iter, got burn_in={burn_in}, n_iter={n_iter}")
    chains = check_int(chains, "chains", minimum=1)
    leapfrog_steps = check_int(leapfrog_steps, "leapfrog_steps", minimum=1)
    if random_rates is not None and random_rates not in RANDOM_RATES:
        raise ValueError(f"random_rates must be None or one of {RANDOM_RATES}, got {random_rates!r}")
    if not isinstance(rate_prior, (tuple, list)) or len(rate_prior) != 2:
        raise ValueError(f"rate_prior must be (shape, scale) of the inverse-gamma prior on sigma^2, got {rate_prior!r}")
    rate_prior = (check_positive(rate_prior[0], "rate_prior shape"), check_positive(rate_prior[1], "rate_prior scale"))
    region = None if location_region is None else _check_region(location_region, prep.x_sorted[prep.inverse])
    if region is None and random_rates is None:
        raise ValueError("mcmc_latent needs location_region and/or random_rates (without either it is "
                         "hp.hawkes.mcmc)")
    sample, fixed, start, scales = _check_model(sample, fixed, init, priors, "init")
    _check_ranges(fixed, start, np.float64, "init")
    exact = check_bool(exact, "exact")
    progress = check_bool(progress, "progress")
    threads = _numba_threads(threads)
    resolved = _check_backend(backend)
    seed_seq = np.random.SeedSequence(check_seed(seed))
    if init is None:  # the mode given the recorded data: a short burn-in suffices
        from .mode import posterior_mode
        mode = posterior_mode(x, t, sample=sample, fixed=fixed, priors=priors, backend="cpu", threads=threads,
                              window=window, exact=exact, start=start)
        start = {n: mode[n] for n in sample}
    if region is not None:  # the regions in sorted order
        region = (region[0], region[1][prep.order], region[2][prep.order], region[3][prep.order])
    model = LatentModel(prep.t_sorted, prep.dim, prep.window, resolved, threads, exact)
    cfg = dict(fixed=fixed, init=start, sampled=sample, names=("mu0", "tau_x", "tau_t", "theta", "omega", "h"),
               prior_scales=scales, rate_prior=rate_prior, leapfrog_steps=leapfrog_steps, n_iter=n_iter,
               burn_in=burn_in, progress=progress)
    t0 = time.perf_counter()
    runs = [_run_latent_chain(model, prep.x_sorted, region, random_rates, cfg, s) for s in seed_seq.spawn(chains)]
    elapsed = time.perf_counter() - t0
    inv, D = prep.inverse, prep.dim
    draws = {n: np.stack([r[0][n] for r in runs]) for n in runs[0][0]}
    acc = {n: np.array([r[1][n] for r in runs]) for n in runs[0][1]}

    def pooled(i):
        m = np.mean([r[i][0] for r in runs], axis=0)
        v = np.mean([r[i][1] for r in runs], axis=0) - m * m
        return m, np.sqrt(np.maximum(v, 0.0))
    lm, ls = pooled(2)
    rm, rs = pooled(3)
    pi = np.mean([r[4] for r in runs], axis=0)
    return LatentPosterior(
        draws=draws, acceptance_rates=acc,
        locations_mean=None if region is None else lm[inv, :D], locations_sd=None if region is None else ls[inv, :D],
        log_rates_mean=None if random_rates is None else rm[inv], log_rates_sd=None if random_rates is None else rs[inv],
        self_excitation=pi[inv], random_rates=random_rates, location_region=location_region, sampled=sample,
        fixed=fixed, n_iter=n_iter, burn_in=burn_in, backend=resolved, elapsed_seconds=elapsed,
        seconds_per_sweep=elapsed / (chains * n_iter))
