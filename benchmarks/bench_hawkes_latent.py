"""Cost of the Hawkes latent-structure passes and sweeps on the DC gunshot data (issue 31).

Usage::

    .venv/bin/python benchmarks/bench_hawkes_latent.py [--backend cpu] [--threads N] [--sweeps 3] [--out PATH]

On the bundled no-holiday DC data (54,582 events, km and hours) at the paper's posterior scale
(tau_x = 1.6 km, tau_t = 336 h fixed; mu0 = 0.5, theta = 0.1, omega = 2 / 0.07 per hour, h = 0.07 km),
times, on ``--backend`` (the location moves always run on the CPU):

* ``rows``: the row sums S_n and G_n with per-event weights (one log-likelihood);
* ``gradient_trigger_rates``: the log-likelihood and its gradient and diagonal Hessian in the
  per-event trigger log-rates, the background sums reused (what one leapfrog step costs);
* ``gradient_locations``: the gradient in all 54,582 locations;
* ``location_sweep``: one Metropolis-within-Gibbs sweep over all latent locations (CPU, sequential);
* ``sweep_random_rates``: seconds per full sweep of :func:`hphawkes_py.hawkes.latent.mcmc_latent` with
  ``random_rates="trigger"`` (four parameter moves, 10 leapfrog steps, sigma^2), over ``--sweeps`` sweeps;
* ``sweep_coarsened``: the same with ``location_region=("box", 0.05)`` (locations known to 50 m).

Writes ``benchmarks/results/hawkes_latent.json`` (timings, the machine, its load) unless ``--out``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from hphawkes_py._backend import resolve_backend
from hphawkes_py.datasets import load_dc_gunshots
from hphawkes_py.hawkes.cpu_latent import location_sweep
from hphawkes_py.hawkes.latent import LatentModel, _pad3, mcmc_latent

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _machine import machine_info  # noqa: E402

P = dict(mu0=0.5, tau_x=1.6, tau_t=336.0, theta=0.1, omega=2.0 / 0.07, h=0.07)
FIXED = {"tau_x": 1.6, "tau_t": 336.0}
INIT = {n: P[n] for n in ("mu0", "theta", "omega", "h")}


def _best(fn, reps):
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return min(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--sweeps", type=int, default=3)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    backend = resolve_backend(a.backend)
    df = load_dc_gunshots("no_holidays")
    x = df[["x_km", "y_km"]].to_numpy()
    t = df["t_hours"].to_numpy()
    o = np.argsort(t, kind="stable")
    xs, ts = _pad3(x[o]), t[o]
    N = len(t)
    model = LatentModel(ts, 2, (ts[0], ts[-1]), backend, a.threads, False)
    w = np.ones(N)
    wg = np.exp(np.random.default_rng(0).normal(0.0, 0.5, N))
    res = dict(N=N, backend=backend, params=P, machine=machine_info(a.threads))
    model.gradient(xs, P, w, wg)  # compile
    res["rows_s"] = _best(lambda: model.sums(xs, P, w, wg), 3)
    S, _ = model.sums(xs, P, w, wg)
    cut = model.deltas(P, w, wg)
    res["gradient_trigger_rates_s"] = _best(lambda: model.gradient(xs, P, w, wg, need=4, fixed_sums=("S", S, cut)), 3)
    res["gradient_locations_s"] = _best(lambda: model.gradient(xs, P, w, wg, need=1), 2)
    cpu = LatentModel(ts, 2, (ts[0], ts[-1]), "cpu", a.threads, False)
    S, G = cpu.sums(xs, P, w, wg)
    idx = cpu.indices(*cpu.deltas(P, w, wg))
    ax, at, bh, cs, cg = cpu.constants(P)
    rng = np.random.default_rng(1)

    def sweep():
        lam = cpu.rates(S, G, P)
        z = np.zeros((N, 3))
        z[:, :2] = rng.standard_normal((N, 2))
        xx = xs.copy()
        box = 0.05
        lo, hi = xs.copy(), xs.copy()
        lo[:, :2] -= box
        hi[:, :2] += box
        location_sweep(xx, ts, *idx, w, wg, ax, at, bh, P["omega"], P["mu0"] * cs, P["theta"] * cg, lam,
                       np.full(N, 0.02), z, np.log(rng.uniform(size=N)), 0, lo, hi, np.zeros(N))
    sweep()
    res["location_sweep_s"] = _best(sweep, 2)
    for key, kw in (("sweep_random_rates_s", dict(random_rates="trigger")),
                    ("sweep_coarsened_s", dict(location_region=("box", 0.05)))):
        post = mcmc_latent(x, t, n_iter=a.sweeps + 1, burn_in=1, fixed=FIXED, init=INIT, seed=1, progress=False,
                           backend=backend, threads=a.threads, **kw)
        res[key] = post.seconds_per_sweep
        res[key.replace("_s", "_acceptance")] = {k: float(v.mean()) for k, v in post.acceptance_rates.items()}
    res["load_after"] = os.getloadavg()
    print(json.dumps({k: v for k, v in res.items() if k != "machine"}, indent=2, default=str))
    out = Path(a.out) if a.out else Path(__file__).parent / "results" / "hawkes_latent.json"
    out.write_text(json.dumps(res, indent=2, default=str))


if __name__ == "__main__":
    main()
