"""Adaptive Metropolis-Hastings for the spatiotemporal Hawkes model (Holbrook et al. 2021, Algorithm 1).

The sampler
-----------
* **Scan.** One *iteration* is one sweep: every sampled parameter gets one
  univariate Metropolis-Hastings update, in a fresh uniformly random order
  (a random-permutation scan). ``n_iter=10_000`` therefore means 10,000 sweeps
  and, with four sampled parameters, 40,000 proposals; one draw is stored per
  sweep. (hpHawkes' ``mhsampler`` source was not available to us offline; the
  sweep makes ``n_iter`` comparable to the paper's 10,000 iterations of all
  four parameters and keeps the chain length per parameter deterministic.)
* **State.** The spatial trigger is sampled as the precision-like ``1/h``, as
  in hpHawkes (its ``params`` vector holds ``1/h, 1/tau_x, 1/tau_t``); the same
  is done for ``tau_x`` and ``tau_t`` when they are sampled. ``omega``,
  ``theta`` and ``mu0`` are sampled as they are. Draws are reported in natural
  units (``h`` in the units of ``x``).
* **Proposals.** Random walk ``s' ~ N(s, sigma^2)`` truncated to ``s' > 0``
  (drawn by rejection: at least half of the untruncated mass is positive).
  The truncation makes the proposal asymmetric; the Hastings correction is
  ``q(s | s') / q(s' | s) = Phi(s / sigma) / Phi(s' / sigma)``.
* **Adaptation.** Each parameter keeps its own ``sigma`` (initially a quarter
  of its initial state). After a batch of ``b`` proposals of that parameter,
  ``sigma`` is multiplied by ``(acceptance in the batch) / 0.44`` clamped to
  ``[0.5, 2]``, and the next batch is longer, ``b <- ceil(b^1.1)`` (first
  batch 10 proposals). The batches grow geometrically in ``log b``, so the
  adaptation diminishes (Roberts & Rosenthal 2009) and goes on through the
  whole run, as in hpHawkes; about 14 adaptations happen in 10,000 sweeps.
* **Priors.** Half-normal on the sampled state with scale 10 for ``1/h``,
  ``omega``, ``theta`` (and ``1/tau_x``, ``1/tau_t``), and scale 1 for
  ``mu0`` (hpHawkes' defaults); ``priors={"theta": 5.0}`` changes a scale.

Caching
-------
With ``tau_x`` and ``tau_t`` fixed the background sums ``S_n`` never change,
so they are computed once per chain. ``lambda_n = mu0 S_n + theta G_n`` is
linear in ``mu0`` and ``theta``: their moves cost one O(N) pass
(``sum_log_intensity``) and an O(N) integral, no pair sums. ``h`` and
``omega`` moves compute the trigger sums ``G_n`` for the proposal into the
engine's second slot and swap it in only if accepted. A sampled ``tau_x`` or
``tau_t`` recomputes the background (and restores it after a rejection).
``mcmc(..., _debug=True)`` re-evaluates the log-likelihood from scratch after
every move and records both values (tests compare them).
"""
from __future__ import annotations

import dataclasses
import math
import time
from typing import Any, Mapping, Sequence

import numpy as np

from .._parallel import run_replicates
from .._progress import progress_bar
from .._validate import check_int, check_positive, check_random_state
from .model import PARAM_NAMES, HawkesParams, _Prepared, build_engine, prepare_data

__all__ = ["mcmc", "posterior_mode", "HawkesPosterior", "DEFAULT_PRIOR_SCALES", "DEFAULT_INIT", "TARGET_ACCEPTANCE"]

#: Half-normal prior scales on the sampled state (``1/h``, ``omega``, ``theta``, ``mu0``, ``1/tau_x``, ``1/tau_t``).
DEFAULT_PRIOR_SCALES = {"h": 10.0, "omega": 10.0, "theta": 10.0, "mu0": 1.0, "tau_x": 10.0, "tau_t": 10.0}
#: Initial values (natural units) of sampled parameters, as in hpHawkes.
DEFAULT_INIT = {"h": 1.0, "omega": 1.0, "theta": 1.0, "mu0": 1.0, "tau_x": 1.0, "tau_t": 1.0}
TARGET_ACCEPTANCE = 0.44
_FIRST_BATCH = 10
_BATCH_EXPONENT = 1.1
_INVERTED = ("h", "tau_x", "tau_t")  # sampled on the 1/value scale


def _to_state(name: str, value: float) -> float:
    return 1.0 / value if name in _INVERTED else value


def _from_state(name: str, state: float) -> float:
    return 1.0 / state if name in _INVERTED else state


def _log_phi(z: float) -> float:
    """log Phi(z) for z >= 0 (Phi >= 1/2 there, so no underflow)."""
    return math.log(0.5 * math.erfc(-z / math.sqrt(2.0)))


def _truncnorm_positive(rng: np.random.Generator, mean: float, sd: float) -> float:
    """One draw of N(mean, sd^2) conditioned on > 0, for mean > 0 (acceptance >= 1/2)."""
    while True:
        v = mean + sd * rng.standard_normal()
        if v > 0.0:
            return v


@dataclasses.dataclass(frozen=True)
class _ChainConfig:
    prep: _Prepared
    sampled: tuple
    fixed: dict
    init: dict
    prior_scales: dict
    n_iter: int
    burn_in: int
    backend: str
    dtype: Any
    threads: int | None
    exact: bool
    progress: bool
    debug: bool


def _log_prior(cfg: _ChainConfig, values: Mapping[str, float]) -> float:
    lp = 0.0
    for name in cfg.sampled:
        s = _to_state(name, values[name]) / cfg.prior_scales[name]
        lp -= 0.5 * s * s
    return lp


def _run_chain(chain: int, seed_seq: np.random.SeedSequence, cfg: _ChainConfig) -> dict:
    """One adaptive MH chain. Module-level so process pools and Dask can pickle it."""
    rng = np.random.default_rng(seed_seq)
    eng = build_engine(cfg.prep, backend=cfg.backend, dtype=cfg.dtype, threads=cfg.threads, exact=cfg.exact)
    vals = {**cfg.fixed, **cfg.init}
    eng.set_background(vals["tau_x"], vals["tau_t"])
    eng.set_trigger(vals["h"], vals["omega"], slot=0)
    ll = eng.sum_log_intensity(vals["mu0"], vals["theta"], slot=0) - eng.integral(vals["mu0"], vals["theta"], vals["omega"])
    if not np.isfinite(ll):
        raise ValueError(f"the log-likelihood at the initial values {vals} is not finite ({ll}); choose other init")
    names = cfg.sampled
    k = len(names)
    sigma = np.array([0.25 * _to_state(n, vals[n]) for n in names])
    batch_len = np.full(k, _FIRST_BATCH, dtype=np.int64)
    batch_acc = np.zeros(k, dtype=np.int64)
    batch_n = np.zeros(k, dtype=np.int64)
    acc_post = np.zeros(k, dtype=np.int64)
    n_post = np.zeros(k, dtype=np.int64)
    n_keep = cfg.n_iter - cfg.burn_in
    out = np.empty((n_keep, len(PARAM_NAMES)))
    debug_log: list = []
    fresh_eng = None
    if cfg.debug:
        fresh_eng = build_engine(cfg.prep, backend=cfg.backend, dtype=cfg.dtype, threads=cfg.threads, exact=True)

    with progress_bar(total=cfg.n_iter, desc=f"chain {chain}", enabled=cfg.progress) as bar:
        for it in range(cfg.n_iter):
            for j in rng.permutation(k):
                name = names[j]
                s = _to_state(name, vals[name])
                sd = sigma[j]
                s_new = _truncnorm_positive(rng, s, sd)
                new = _from_state(name, s_new)
                mu0, theta, omega = vals["mu0"], vals["theta"], vals["omega"]
                if name == "mu0":
                    ll_new = eng.sum_log_intensity(new, theta, slot=0) - eng.integral(new, theta, omega)
                elif name == "theta":
                    ll_new = eng.sum_log_intensity(mu0, new, slot=0) - eng.integral(mu0, new, omega)
                elif name == "h":
                    eng.set_trigger(new, omega, slot=1)
                    ll_new = eng.sum_log_intensity(mu0, theta, slot=1) - eng.integral(mu0, theta, omega)
                elif name == "omega":
                    eng.set_trigger(vals["h"], new, slot=1)
                    ll_new = eng.sum_log_intensity(mu0, theta, slot=1) - eng.integral(mu0, theta, new)
                else:  # tau_x or tau_t: the background changes
                    tx = new if name == "tau_x" else vals["tau_x"]
                    tt = new if name == "tau_t" else vals["tau_t"]
                    eng.set_background(tx, tt)
                    ll_new = eng.sum_log_intensity(mu0, theta, slot=0) - eng.integral(mu0, theta, omega)
                scale = cfg.prior_scales[name]
                log_alpha = (ll_new - ll) - 0.5 * ((s_new / scale) ** 2 - (s / scale) ** 2) \
                    + _log_phi(s / sd) - _log_phi(s_new / sd)
                accept = bool(np.isfinite(ll_new)) and math.log(rng.random()) < log_alpha
                if accept:
                    vals[name] = new
                    ll = ll_new
                    if name in ("h", "omega"):
                        eng.swap_trigger()
                elif name in ("tau_x", "tau_t"):
                    eng.set_background(vals["tau_x"], vals["tau_t"])
                if cfg.debug:
                    fresh = fresh_eng.log_likelihood(vals["mu0"], vals["tau_x"], vals["tau_t"], vals["theta"],
                                                     vals["omega"], vals["h"])
                    debug_log.append((name, accept, ll, float(fresh)))
                # adaptation (diminishing: batches grow as b <- ceil(b^1.1))
                batch_acc[j] += accept
                batch_n[j] += 1
                if batch_n[j] == batch_len[j]:
                    ratio = (batch_acc[j] / batch_n[j]) / TARGET_ACCEPTANCE
                    sigma[j] *= min(2.0, max(0.5, ratio))
                    batch_len[j] = math.ceil(batch_len[j] ** _BATCH_EXPONENT)
                    batch_acc[j] = 0
                    batch_n[j] = 0
                if it >= cfg.burn_in:
                    acc_post[j] += accept
                    n_post[j] += 1
            if it >= cfg.burn_in:
                out[it - cfg.burn_in] = [vals[n] for n in PARAM_NAMES]
            bar.update(1)
    return {
        "draws": out,
        "acceptance": {n: (acc_post[j] / n_post[j] if n_post[j] else np.nan) for j, n in enumerate(names)},
        "proposal_sd": {n: float(sigma[j]) for j, n in enumerate(names)},
        "final_loglik": float(ll),
        "backend": getattr(eng, "backend", cfg.backend),
        "debug": debug_log,
    }


def _log_posterior_at(eng, values: Mapping[str, float], sampled, prior_scales, current: dict) -> float:
    """Log likelihood + half-normal log prior on the sampled state, with the engine's caches:
    the background sums are recomputed only when a bandwidth changed, the trigger sums only
    when h or omega changed (``current`` remembers what the engine holds)."""
    bg = (values["tau_x"], values["tau_t"])
    if current.get("bg") != bg:
        eng.set_background(*bg)
        current["bg"] = bg
    tr = (values["h"], values["omega"])
    if current.get("tr") != tr:
        eng.set_trigger(*tr, slot=0)
        current["tr"] = tr
    ll = (eng.sum_log_intensity(values["mu0"], values["theta"], slot=0)
          - eng.integral(values["mu0"], values["theta"], values["omega"]))
    lp = -0.5 * sum((_to_state(n, values[n]) / prior_scales[n]) ** 2 for n in sampled)
    return ll + lp


def posterior_mode(x: Any, t: Any, *, sample: Sequence[str] = ("h", "omega", "theta", "mu0"),
                   fixed: Mapping[str, float] | None = None, start: Mapping[str, float] | None = None,
                   priors: Mapping[str, float] | None = None, backend: str = "auto", threads: int | None = None,
                   dtype: Any = np.float64, window: Any = None, maxiter: int = 600) -> dict:
    """Maximum of the posterior density of the sampled parameters (the MCMC's target, on its state).

    Nelder-Mead over the logarithms of the sampled parameters, with the same
    likelihood engine and caching as :func:`mcmc` (background sums once when the
    bandwidths are fixed). Useful as ``mcmc(..., init="mode")``: chains started at
    the mode need no long burn-in, whereas from hpHawkes' initial values (all 1)
    the trigger rate ``omega`` of the DC data takes over 1,000 sweeps to arrive.

    Returns
    -------
    dict
        The sampled parameters' values at the mode (natural units), plus
        ``"log_posterior"`` (up to a constant) and ``"evaluations"``.
    """
    from scipy.optimize import minimize

    sample = tuple((sample,) if isinstance(sample, str) else sample)
    _check_names(sample, "sample")
    fixed = dict(fixed or {})
    _check_names(fixed, "fixed")
    missing = [n for n in PARAM_NAMES if n not in sample and n not in fixed]
    if missing:
        raise ValueError(f"fixed must give a value for every parameter not sampled; missing {missing}")
    fixed = {n: check_positive(v, f"fixed[{n!r}]") for n, v in fixed.items()}
    start = dict(start or {})
    _check_names(start, "start")
    x0 = np.log([check_positive(start.get(n, DEFAULT_INIT[n]), f"start[{n!r}]") for n in sample])
    priors = dict(priors or {})
    _check_names(priors, "priors")
    scales = {n: check_positive(priors.get(n, DEFAULT_PRIOR_SCALES[n]), f"priors[{n!r}]") for n in PARAM_NAMES}
    prep = prepare_data(x, t, window)
    eng = build_engine(prep, backend=backend, dtype=dtype, threads=threads)
    current: dict = {}

    def negative(z):
        values = {**fixed, **dict(zip(sample, np.exp(z)))}
        v = -_log_posterior_at(eng, values, sample, scales, current)
        return v if np.isfinite(v) else 1e300

    res = minimize(negative, x0, method="Nelder-Mead", options={"maxiter": int(maxiter), "xatol": 1e-4, "fatol": 1e-3})
    out = {n: float(v) for n, v in zip(sample, np.exp(res.x))}
    out.update(log_posterior=float(-res.fun), evaluations=int(res.nfev))
    return out


def _check_names(value: Any, name: str) -> None:
    unknown = [v for v in value if v not in PARAM_NAMES]
    if unknown:
        raise ValueError(f"{name} has unknown parameter name(s) {unknown}; known: {PARAM_NAMES}")


def mcmc(x: Any, t: Any, *, n_iter: int = 10_000, burn_in: int = 1_000, chains: int = 4,
         sample: Sequence[str] = ("h", "omega", "theta", "mu0"), fixed: Mapping[str, float] | None = None,
         init: Mapping[str, float] | None = None, priors: Mapping[str, float] | None = None, seed: Any = None,
         executor: Any = None, progress: bool = True, backend: str = "auto", threads: int | None = None,
         dtype: Any = np.float64, exact: bool = False, window: Any = None, _debug: bool = False) -> "HawkesPosterior":
    """Posterior sampling for the spatiotemporal Hawkes model by adaptive Metropolis-Hastings.

    Parameters
    ----------
    x : array_like, shape (N,) or (N, D)
        Event locations (D = 1, 2, 3), e.g. km. Any order.
    t : array_like, shape (N,)
        Event times, e.g. hours. Any order.
    n_iter : int
        Sweeps per chain, burn-in included (each sweep updates every sampled
        parameter once, in random order).
    burn_in : int
        Leading sweeps discarded (must be < ``n_iter``).
    chains : int
        Independent chains (seeds from ``SeedSequence(seed).spawn(chains)``).
    sample : sequence of str
        Parameters to sample, from ``("h", "omega", "theta", "mu0", "tau_x", "tau_t")``.
    fixed : dict
        Values of every parameter not sampled (natural units). The default
        model needs ``{"tau_x": ..., "tau_t": ...}``.
    init : dict or "mode", optional
        Initial values of sampled parameters (natural units); default 1 each, as
        hpHawkes. ``"mode"`` starts every chain at :func:`posterior_mode`.
    priors : dict, optional
        Half-normal prior scales on the sampled state (``1/h`` for ``h``,
        ``1/tau`` for the bandwidths); defaults :data:`DEFAULT_PRIOR_SCALES`.
    seed : None, int or Generator
    executor : None, concurrent.futures.Executor or dask.distributed.Client
        Where chains run; the draws do not depend on it.
    progress : bool
        Progress bars on stderr.
    backend, threads, dtype, exact, window
        As in :func:`~hphawkes_py.hawkes.log_likelihood`.

    Returns
    -------
    HawkesPosterior
    """
    prep = prepare_data(x, t, window)
    n_iter = check_int(n_iter, "n_iter", minimum=1)
    burn_in = check_int(burn_in, "burn_in", minimum=0)
    if burn_in >= n_iter:
        raise ValueError(f"burn_in must be smaller than n_iter, got burn_in={burn_in} and n_iter={n_iter}")
    chains = check_int(chains, "chains", minimum=1)
    if isinstance(sample, str):
        sample = (sample,)
    sample = tuple(sample)
    _check_names(sample, "sample")
    if len(set(sample)) != len(sample):
        raise ValueError(f"sample lists a parameter twice: {sample}")
    if not sample:
        raise ValueError("sample must name at least one parameter")
    fixed = dict(fixed or {})
    _check_names(fixed, "fixed")
    both = sorted(set(sample) & set(fixed))
    if both:
        raise ValueError(f"parameter(s) {both} are both sampled (sample) and fixed (fixed); choose one")
    missing = [n for n in PARAM_NAMES if n not in sample and n not in fixed]
    if missing:
        raise ValueError(f"fixed must give a value for every parameter not sampled; missing {missing}")
    fixed = {n: check_positive(v, f"fixed[{n!r}]") for n, v in fixed.items()}
    start_at_mode = isinstance(init, str)
    if start_at_mode and init != "mode":
        raise ValueError(f"init must be a dict of initial values or 'mode', got {init!r}")
    init = {} if start_at_mode else dict(init or {})
    _check_names(init, "init")
    not_sampled = sorted(set(init) - set(sample))
    if not_sampled:
        raise ValueError(f"init gives value(s) for {not_sampled}, which are not sampled (use fixed)")
    init_vals = {n: check_positive(init.get(n, DEFAULT_INIT[n]), f"init[{n!r}]") for n in sample}
    priors = dict(priors or {})
    _check_names(priors, "priors")
    prior_scales = {n: check_positive(priors.get(n, DEFAULT_PRIOR_SCALES[n]), f"priors[{n!r}]") for n in PARAM_NAMES}
    if start_at_mode:
        mode = posterior_mode(prep.x_sorted, prep.t_sorted, sample=sample, fixed=fixed, priors=priors, backend=backend,
                              threads=threads, dtype=dtype, window=prep.window)
        init_vals = {n: mode[n] for n in sample}
    if isinstance(seed, bool) or not (seed is None or isinstance(seed, (int, np.integer, np.random.Generator,
                                                                         np.random.SeedSequence))):
        raise TypeError(f"seed must be None, an int, a SeedSequence or a Generator, got {type(seed).__name__}")
    rng_seed = int(seed) if isinstance(seed, np.integer) else seed
    cfg = _ChainConfig(prep=prep, sampled=sample, fixed=fixed, init=init_vals, prior_scales=prior_scales,
                       n_iter=n_iter, burn_in=burn_in, backend=backend, dtype=dtype, threads=threads,
                       exact=bool(exact), progress=bool(progress) and executor is None, debug=bool(_debug))
    t_start = time.perf_counter()
    results = run_replicates(_run_chain, range(chains), seed=rng_seed, executor=executor,
                             progress=bool(progress) and executor is not None, desc="chains", args=(cfg,))
    elapsed = time.perf_counter() - t_start
    draws = {n: np.stack([r["draws"][:, i] for r in results]) for i, n in enumerate(PARAM_NAMES)}
    acceptance = {n: np.array([r["acceptance"][n] for r in results]) for n in sample}
    return HawkesPosterior(
        draws=draws, acceptance_rates=acceptance, sampled=sample, fixed=fixed, init=init_vals,
        prior_scales={n: prior_scales[n] for n in sample}, n_iter=n_iter, burn_in=burn_in,
        backend=results[0]["backend"], elapsed_seconds=elapsed,
        proposal_sd={n: np.array([r["proposal_sd"][n] for r in results]) for n in sample},
        _prep=prep, _engine_options={"backend": backend, "dtype": dtype, "threads": threads, "exact": bool(exact)},
        _debug=[r["debug"] for r in results],
    )


class _quiet_arviz:
    """Silence ArviZ's logger (it warns that one chain or few draws cannot be shape-validated)."""

    def __enter__(self):
        import logging

        self._logger = logging.getLogger("arviz")
        self._level = self._logger.level
        self._logger.setLevel(logging.ERROR)

    def __exit__(self, *exc):
        self._logger.setLevel(self._level)
        return False


@dataclasses.dataclass(repr=False, eq=False)
class HawkesPosterior:
    """Posterior draws of the spatiotemporal Hawkes model from :func:`mcmc`.

    Attributes
    ----------
    draws : dict of str -> ndarray, shape (chains, n_iter - burn_in)
        Post burn-in draws of every parameter in natural units (``h``,
        ``tau_x`` in units of ``x``; ``omega`` per unit of ``t``; ``tau_t`` in
        units of ``t``), fixed parameters included (constant rows).
    acceptance_rates : dict of str -> ndarray, shape (chains,)
        Post burn-in Metropolis-Hastings acceptance rate of each sampled parameter.
    sampled : tuple of str
        The sampled parameters.
    fixed : dict
        The fixed parameters and their values.
    init, prior_scales : dict
        Initial values and half-normal prior scales of the sampled parameters.
    n_iter, burn_in : int
        Sweeps per chain and discarded leading sweeps.
    backend : str
        Engine that ran (``"cpu"``, ``"gpu"`` or ``"emulator"``).
    elapsed_seconds : float
        Wall time of the sampling.
    proposal_sd : dict of str -> ndarray, shape (chains,)
        Final adapted proposal standard deviations (on the sampled state scale).
    """

    draws: dict
    acceptance_rates: dict
    sampled: tuple
    fixed: dict
    init: dict
    prior_scales: dict
    n_iter: int
    burn_in: int
    backend: str
    elapsed_seconds: float
    proposal_sd: dict
    _prep: Any = None
    _engine_options: dict = dataclasses.field(default_factory=dict)
    _debug: list = dataclasses.field(default_factory=list)

    # ---------------------------------------------------------------- basics
    @property
    def chains(self) -> int:
        """Number of chains."""
        return next(iter(self.draws.values())).shape[0]

    @property
    def n_draws(self) -> int:
        """Kept draws per chain."""
        return next(iter(self.draws.values())).shape[1]

    def __repr__(self) -> str:
        means = ", ".join(f"{n}={self.draws[n].mean():.4g}" for n in self.sampled)
        return (f"HawkesPosterior(chains={self.chains}, draws={self.n_draws}, sampled={list(self.sampled)}, "
                f"fixed={self.fixed}, posterior means: {means}, backend={self.backend!r})")

    def params_mean(self) -> HawkesParams:
        """Posterior means as :class:`HawkesParams`."""
        return HawkesParams(**{n: float(self.draws[n].mean()) for n in PARAM_NAMES})

    # ---------------------------------------------------------------- tables
    def to_arviz(self):
        """An :class:`arviz.InferenceData` with the draws as its posterior group."""
        import arviz as az

        with _quiet_arviz():
            return az.from_dict(posterior={n: np.asarray(v) for n, v in self.draws.items()})

    def summary(self, hdi_prob: float = 0.95):
        """Posterior table (pandas DataFrame) via ArviZ, one row per parameter.

        Columns: ``mean``, ``sd``, ``hdi_2.5%``, ``hdi_97.5%`` (95% highest
        density interval), ``ess_bulk``, ``r_hat``. Fixed parameters appear
        with sd 0 (their ESS and R-hat are undefined, NaN).
        """
        import warnings

        import arviz as az

        lo = f"hdi_{100 * (1 - hdi_prob) / 2:g}%"
        hi = f"hdi_{100 * (1 - (1 - hdi_prob) / 2):g}%"
        with warnings.catch_warnings(), _quiet_arviz():
            warnings.simplefilter("ignore")  # constant (fixed) rows make ArviZ warn about R-hat
            table = az.summary(self.to_arviz(), hdi_prob=hdi_prob, round_to="none")
        table = table[["mean", "sd", lo, hi, "ess_bulk", "r_hat"]]
        order = list(self.sampled) + [n for n in PARAM_NAMES if n not in self.sampled]
        return table.loc[order]

    def to_frame(self):
        """Long table of draws: columns ``chain``, ``draw`` and one per parameter."""
        import pandas as pd

        c, d = self.chains, self.n_draws
        data = {"chain": np.repeat(np.arange(c), d), "draw": np.tile(np.arange(d), c)}
        data.update({n: self.draws[n].reshape(-1) for n in PARAM_NAMES})
        return pd.DataFrame(data)

    def to_dict(self) -> dict:
        """JSON-friendly summary: settings, posterior table, acceptance rates."""
        table = self.summary()
        return {
            "chains": self.chains, "n_iter": self.n_iter, "burn_in": self.burn_in, "draws_per_chain": self.n_draws,
            "sampled": list(self.sampled), "fixed": dict(self.fixed), "init": dict(self.init),
            "prior_scales": dict(self.prior_scales), "backend": self.backend,
            "elapsed_seconds": self.elapsed_seconds,
            "acceptance_rates": {n: v.tolist() for n, v in self.acceptance_rates.items()},
            "summary": {n: {k: (None if not np.isfinite(v) else float(v)) for k, v in row.items()}
                        for n, row in table.iterrows()},
        }

    def to_csv(self, path) -> None:
        """Write the draws (long format, :meth:`to_frame`) to a CSV file."""
        self.to_frame().to_csv(path, index=False)

    def to_json(self, path) -> None:
        """Write :meth:`to_dict` to a JSON file."""
        import json

        with open(path, "w") as fh:
            json.dump(self.to_dict(), fh, indent=2)

    def to_coda(self, include_fixed: bool = False):
        """The draws as an R ``coda::mcmc.list``, one ``mcmc`` per chain (needs rpy2 and R's coda).

        Only the sampled parameters are exported by default: a fixed parameter is a
        constant column, which makes coda's multivariate ``gelman.diag`` fail on a
        singular covariance. ``include_fixed=True`` adds them.
        """
        from ..interop.coda import draws_to_coda

        names = [n for n in self.draws if include_fixed or n in self.sampled]
        return draws_to_coda({n: np.asarray(self.draws[n]) for n in names})

    # ---------------------------------------------------------------- figures
    def plot_trace(self, params: Sequence[str] | None = None, path=None):
        """Trace plots per parameter and chain (matplotlib Figure; saved when ``path`` given)."""
        from .plots import plot_trace

        return plot_trace(self, params=params, path=path)

    def plot_density(self, params: Sequence[str] | None = None, path=None):
        """Posterior density per parameter and chain (matplotlib Figure)."""
        from .plots import plot_density

        return plot_density(self, params=params, path=path)

    # ---------------------------------------------------------------- pi_n
    def self_excitation(self, n_draws: int = 1000, seed: Any = None, *, progress: bool = False,
                        max_values: int = 2**23):
        """Posterior of the self-excitation probability ``pi_n`` of every event.

        ``pi_n`` is computed for ``n_draws`` posterior draws chosen at random
        without replacement from all chains (all draws when there are fewer).

        Memory stays bounded: per-event mean and sd are accumulated in one pass
        (Welford, float64). Exact 2.5% and 97.5% quantiles need every value of
        every event; when ``n_draws * N <= max_values`` (default 8.4 million,
        64 MB) they are kept in memory in float64, otherwise each draw's
        ``pi`` vector is spilled to a temporary float32 file (relative error
        6e-8) which is then read back in blocks of events, so at most
        ``max_values`` values are ever in memory.

        Returns
        -------
        pandas.DataFrame
            One row per event in the caller's input order: ``mean``, ``sd``
            (ddof=1), ``q2.5``, ``q97.5``. ``df.attrs["draw_indices"]`` holds the
            flat indices (``chain * n_draws + draw``) of the draws used.
        """
        import os
        import tempfile

        import pandas as pd

        n_draws = check_int(n_draws, "n_draws", minimum=1)
        max_values = check_int(max_values, "max_values", minimum=1)
        rng = check_random_state(seed)
        total = self.chains * self.n_draws
        if n_draws >= total:
            idx = np.arange(total)
        else:
            idx = np.sort(rng.choice(total, size=n_draws, replace=False))
        m = idx.size
        flat = {n: self.draws[n].reshape(-1)[idx] for n in PARAM_NAMES}
        prep = self._prep
        n_events = prep.n
        eng = build_engine(prep, **self._engine_options)
        mean = np.zeros(n_events)
        m2 = np.zeros(n_events)
        in_memory = m * n_events <= max_values
        tmpdir = None
        if in_memory:
            store = np.empty((m, n_events))
        else:
            tmpdir = tempfile.TemporaryDirectory(prefix="hphawkes-pi-")
            store = np.memmap(os.path.join(tmpdir.name, "pi.f32"), dtype=np.float32, mode="w+", shape=(m, n_events))
        try:
            background = None
            with progress_bar(total=m, desc="pi_n over draws", enabled=progress) as bar:
                for k in range(m):
                    bg = (flat["tau_x"][k], flat["tau_t"][k])
                    if bg != background:  # fixed bandwidths: computed once
                        eng.set_background(*bg)
                        background = bg
                    eng.set_trigger(flat["h"][k], flat["omega"][k], slot=0)
                    pi = np.asarray(eng.self_excitation(flat["mu0"][k], flat["theta"][k], slot=0), dtype=np.float64)
                    delta = pi - mean
                    mean += delta / (k + 1)
                    m2 += delta * (pi - mean)
                    store[k] = pi
                    bar.update(1)
            sd = np.sqrt(m2 / (m - 1)) if m > 1 else np.full(n_events, np.nan)
            q = np.empty((2, n_events))
            block = max(1, max_values // m)
            for j0 in range(0, n_events, block):
                j1 = min(n_events, j0 + block)
                q[:, j0:j1] = np.quantile(np.asarray(store[:, j0:j1], dtype=np.float64), [0.025, 0.975], axis=0)
        finally:
            if tmpdir is not None:
                del store
                tmpdir.cleanup()
        inv = prep.inverse
        df = pd.DataFrame({"mean": mean[inv], "sd": sd[inv], "q2.5": q[0][inv], "q97.5": q[1][inv]})
        df.attrs["draw_indices"] = idx
        return df
