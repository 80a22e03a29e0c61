"""The DC gunshot analysis of Holbrook, Loeffler, Flaxman & Suchard (2021), on the bundled data.

``hphawkes reproduce dc-gunshots`` (or :func:`run_dc_gunshots`) fits the
spatiotemporal Hawkes model to the 54,582 ShotSpotter events of Washington DC
(2006-2019, holidays removed; km and hours) with the background bandwidths of
the published analysis fixed (``tau_x = 1.6 km``, ``tau_t = 336 h = 14 days``)
and ``h``, ``omega``, ``theta``, ``mu0`` sampled by adaptive
Metropolis-Hastings from hpHawkes' initial values (all 1). It writes, into
one folder:

* ``posterior_summary.csv`` -- mean, sd, 95% HDI, bulk ESS and R-hat of every
  parameter, plus ``h`` in metres and the mean trigger delay ``1/omega`` in minutes;
* ``summary.json`` -- the same table, settings, acceptance rates, run times,
  the overall self-excitation proportion;
* ``draws.csv`` -- all post burn-in draws (long format);
* ``trace.png``, ``density.png`` -- trace and density plots;
* ``self_excitation.csv`` -- per event (data order): ``x_km, y_km, t_hours``
  and the posterior ``mean, sd, q2.5, q97.5`` of ``pi_n``;
* ``self_excitation_map.png`` -- map of the posterior mean ``pi_n``.

Modes: ``full`` is the paper's run (4 chains x 10,000 iterations, 1,000
burn-in; pi_n over 1,000 draws). ``quick`` (default) uses all the data with 2
chains x 1,000 iterations (300 burn-in) and pi_n over 200 draws. In both the
chains start at the posterior mode (found by Nelder-Mead with the cached
engine, about 600 likelihood evaluations): from hpHawkes' initial values
(h = omega = theta = mu0 = 1, ``--start hpHawkes``) the one-at-a-time random
walks need about 400 to 1,300 sweeps to climb the omega-theta ridge to the
posterior's omega of about 60 per hour, which would leak unconverged draws
past a 1,000-sweep burn-in (observed in one of two chains).
On a multi-core CPU the chains run in worker processes, one thread each.
"""
from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from .._backend import resolve_backend
from .._validate import check_int, check_seed, check_threads
from ..datasets import load_dc_gunshots
from ..hawkes.excitation import self_excitation
from ..hawkes.posterior import _quiet_arviz
from ..hawkes.mode import posterior_mode
from ..hawkes.sampler import mcmc
from ..hawkes.plot import plot_self_excitation_map
from ._common import CliError, atomic_output_dir, check_output_dir

__all__ = ["run_dc_gunshots", "MODES", "TAU_X_KM", "TAU_T_HOURS"]

TAU_X_KM = 1.6
TAU_T_HOURS = 336.0
MODES = {
    "quick": {"chains": 2, "n_iter": 1_000, "burn_in": 300, "n_draws": 200, "start": "mode"},
    "full": {"chains": 4, "n_iter": 10_000, "burn_in": 1_000, "n_draws": 1_000, "start": "mode"},
}


def _derived_summary(post) -> "Any":
    """ArviZ summary of the parameters plus h in metres and 1/omega in minutes."""
    import warnings

    import arviz as az

    draws = {n: post.draws[n] for n in post.sampled}
    draws["h_metres"] = 1000.0 * post.draws["h"]
    draws["trigger_delay_minutes"] = 60.0 / post.draws["omega"]
    with warnings.catch_warnings(), _quiet_arviz():
        warnings.simplefilter("ignore")
        table = az.summary(az.from_dict(posterior=draws), hdi_prob=0.95, round_to="none")
    table = table[["mean", "sd", "hdi_2.5%", "hdi_97.5%", "ess_bulk", "r_hat"]]
    units = {"h": "km", "omega": "1/hour", "theta": "events per event", "mu0": "dimensionless",
             "h_metres": "m", "trigger_delay_minutes": "min"}
    table.insert(0, "unit", [units.get(n, "") for n in table.index])
    table.index.name = "parameter"
    return table


def run_dc_gunshots(out: Any = "hphawkes-dc-gunshots", *, mode: str = "quick", backend: str = "auto",
                    threads: int | None = None, seed: Any = 2021, chains: int | None = None,
                    n_iter: int | None = None, burn_in: int | None = None, n_draws: int | None = None,
                    start: str | None = None, executor: Any = None, progress: bool = True, overwrite: bool = False,
                    log=print) -> dict:
    """Run the DC gunshot analysis and write its outputs into ``out``.

    Every setting and the output folder are checked before any work. The outputs are written
    into a temporary folder beside ``out`` and moved into place only when the whole run has
    succeeded (:func:`~hphawkes_py.cli._common.atomic_output_dir`).

    Parameters
    ----------
    out : path
        Output folder; an existing non-empty folder is refused unless ``overwrite``.
    mode : {"quick", "full"}
        Preset sizes (see the module docstring); ``chains``, ``n_iter``,
        ``burn_in``, ``n_draws`` and ``start`` override them.
    start : {"mode", "hpHawkes"}, optional
        Start the chains at the posterior mode, or at hpHawkes' initial values (all 1).
    backend, threads, seed, executor, progress
        As in :func:`hphawkes_py.hawkes.mcmc`.
    log : callable
        Receives progress messages (``print`` by default).

    Returns
    -------
    dict
        The content of ``summary.json`` (paths of every output under ``"files"``).
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {tuple(MODES)}, got {mode!r}")
    settings = dict(MODES[mode])
    if start is not None and start not in ("mode", "hpHawkes"):
        raise ValueError(f"start must be 'mode' or 'hpHawkes', got {start!r}")
    for k, v in {"chains": chains, "n_iter": n_iter, "burn_in": burn_in, "n_draws": n_draws, "start": start}.items():
        if v is not None:
            settings[k] = v
    # everything checkable is checked before the mode search and the MCMC
    for k in ("chains", "n_iter", "n_draws"):
        settings[k] = check_int(settings[k], k, minimum=1)
    settings["burn_in"] = check_int(settings["burn_in"], "burn_in", minimum=0)
    if settings["burn_in"] >= settings["n_iter"]:
        raise ValueError(f"burn_in ({settings['burn_in']}) must be smaller than n_iter ({settings['n_iter']})")
    seed = check_seed(seed)
    threads = check_threads(threads)
    backend = resolve_backend(backend)  # a GPU asked for and unusable fails here, before any work
    out = Path(out)
    check_output_dir(out, overwrite)
    with contextlib.ExitStack() as stack:
        try:  # the lock and the temporary folder: a folder that cannot be written fails here, before the work
            tmp = stack.enter_context(atomic_output_dir(out, overwrite))
        except OSError as exc:
            raise CliError(f"--out {out}: cannot write the output folder there ({exc.strerror or exc})") from None
        result = _run(tmp, out, mode, settings, backend, threads, seed, executor, progress, log)
    return result


def _run(tmp, out, mode, settings, backend, threads, seed, executor, progress, log) -> dict:
    """The analysis, writing into ``tmp``; the paths it reports are those under ``out``."""

    df = load_dc_gunshots("no_holidays")
    x = df[["x_km", "y_km"]].to_numpy()
    t = df["t_hours"].to_numpy()
    log(f"DC gunshots (no holidays): {len(df):,} events over {t.max() / 24 / 365.25:.1f} years; "
        f"tau_x = {TAU_X_KM} km, tau_t = {TAU_T_HOURS:g} h fixed; mode {mode}: {settings['chains']} chains x "
        f"{settings['n_iter']:,} iterations ({settings['burn_in']:,} burn-in)")
    resolved = resolve_backend(backend)
    pool = None
    chain_threads = threads
    cores = os.cpu_count() or 1
    if executor is None and threads is None and resolved == "cpu" and cores > 1 and settings["chains"] > 1:
        # Chains are independent: one single-threaded chain per core in worker processes beats
        # multi-threaded kernels here (the O(N) mu0/theta moves are too short to amortise a parallel
        # region, and Numba kernels hold the GIL, so threads would not overlap). Draws do not depend on it.
        import concurrent.futures as cf
        import multiprocessing as mp

        pool = cf.ProcessPoolExecutor(max_workers=min(cores, settings["chains"]), mp_context=mp.get_context("spawn"))
        executor, chain_threads = pool, 1
        log(f"running {settings['chains']} chains in {min(cores, settings['chains'])} worker processes "
            "(1 thread each)")
    t0 = time.perf_counter()
    init = None
    mode_info = None
    if settings["start"] == "mode":
        # 1,000 sweeps from hpHawkes' (1, 1, 1, 1) are not enough for one-at-a-time random walks to
        # climb the omega-theta ridge (omega ends near 60/h); starting at the posterior mode is.
        mode_info = posterior_mode(x, t, fixed={"tau_x": TAU_X_KM, "tau_t": TAU_T_HOURS}, backend=resolved,
                                   threads=1 if pool is not None else threads)
        init = {k: mode_info[k] for k in ("h", "omega", "theta", "mu0")}
        log(f"posterior mode found in {time.perf_counter() - t0:.1f} s ({mode_info['evaluations']} evaluations): "
            + ", ".join(f"{k} = {v:.4g}" for k, v in init.items()) + "; chains start there")
    try:
        post = mcmc(x, t, n_iter=settings["n_iter"], burn_in=settings["burn_in"], chains=settings["chains"],
                    sample=("h", "omega", "theta", "mu0"), fixed={"tau_x": TAU_X_KM, "tau_t": TAU_T_HOURS},
                    init=init, seed=seed, executor=executor, progress=progress, backend=resolved, threads=chain_threads)
    finally:
        if pool is not None:
            pool.shutdown()
    t_mcmc = time.perf_counter() - t0
    log(f"MCMC done in {t_mcmc:.1f} s on backend {post.backend!r}")

    table = _derived_summary(post)
    files = {}
    files["posterior_summary"] = tmp / "posterior_summary.csv"
    table.to_csv(files["posterior_summary"])
    files["draws"] = tmp / "draws.csv"
    post.to_csv(files["draws"])
    files["trace"] = tmp / "trace.png"
    files["density"] = tmp / "density.png"
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.close(post.plot_trace(path=files["trace"]))
    plt.close(post.plot_density(path=files["density"]))

    t1 = time.perf_counter()
    pi = self_excitation(post, n_draws=settings["n_draws"], seed=seed, progress=progress)
    t_pi = time.perf_counter() - t1
    log(f"self-excitation probabilities over {len(pi.attrs['draw_indices'])} draws in {t_pi:.1f} s")
    per_event = df.copy()
    for c in pi.columns:
        per_event[c] = pi[c].to_numpy()
    files["self_excitation"] = tmp / "self_excitation.csv"
    per_event.to_csv(files["self_excitation"], index=False)
    files["self_excitation_map"] = tmp / "self_excitation_map.png"
    plt.close(plot_self_excitation_map(df["x_km"], df["y_km"], pi["mean"], path=files["self_excitation_map"],
                                       title="Washington DC gunshots 2006-2019: P(self-excited)"))

    result = {
        "analysis": "Holbrook, Loeffler, Flaxman & Suchard (2021), Washington DC ShotSpotter data, no holidays",
        "events": int(len(df)),
        "mode": mode, **settings, "seed": seed if isinstance(seed, (int, type(None))) else str(seed),
        "fixed": {"tau_x_km": TAU_X_KM, "tau_t_hours": TAU_T_HOURS},
        "start": settings["start"], "init": post.init, "mode_search": mode_info,
        "backend": post.backend, "threads": threads, "chain_processes": bool(pool is not None),
        "seconds": {"mcmc": t_mcmc, "self_excitation": t_pi, "total": time.perf_counter() - t0},
        "acceptance_rates": {n: v.tolist() for n, v in post.acceptance_rates.items()},
        "posterior": {n: {k: (v if isinstance(v, str) else (None if not np.isfinite(v) else float(v)))
                          for k, v in row.items()} for n, row in table.iterrows()},
        "self_excitation": {
            "mean_probability": float(pi["mean"].mean()),
            "events_with_mean_above_0.5": int((pi["mean"] > 0.5).sum()),
            "note": "mean_probability is the expected fraction of events triggered by an earlier event",
        },
        "files": {k: os.fspath(out.resolve() / v.name) for k, v in files.items()},
    }
    result["files"]["summary"] = os.fspath(out.resolve() / "summary.json")
    with open(tmp / "summary.json", "w") as fh:
        json.dump(result, fh, indent=2)
    return result


def format_table(result: dict) -> str:
    """The posterior table of a :func:`run_dc_gunshots` result as aligned text."""
    lines = [f"{'parameter':<24}{'unit':<18}{'mean':>12}{'sd':>12}{'hdi_2.5%':>12}{'hdi_97.5%':>12}"
             f"{'ess_bulk':>10}{'r_hat':>8}"]
    for name, row in result["posterior"].items():
        def f(v, w, p="{:.4g}"):
            return f"{'nan' if v is None else p.format(v):>{w}}"
        lines.append(f"{name:<24}{row['unit']:<18}{f(row['mean'], 12)}{f(row['sd'], 12)}{f(row['hdi_2.5%'], 12)}"
                     f"{f(row['hdi_97.5%'], 12)}{f(row['ess_bulk'], 10, '{:.0f}')}{f(row['r_hat'], 8, '{:.3f}')}")
    return "\n".join(lines)
