"""The Hawkes model at a million events (issue 14, "Scale"): simulation, windowed log-likelihood,
one MH sweep and an adaptive-MH chain on the CPU engine, with the peak memory.

    .venv/bin/python benchmarks/bench_hawkes_scale.py [--N 1000000] [--iters 1000] [--threads 2]

DC-like data: the DC posterior's parameters (tau_x = 1.6 km, tau_t = 336 h, theta = 0.153,
omega = 59.4 / h, h = 69.6 m) and the DC event density per km^2 and hour, over 13.4 years on a
square city large enough for N events (N = 1e6: ~56 km x 56 km). The events per neighbourhood,
hence the windowed work per event, are the DC data's; the work grows like N.

Writes ``benchmarks/results/hawkes_scale.json`` (with the load average: a shared machine is noisy).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import time
from pathlib import Path

import numpy as np

import hphawkes_py as hp

HERE = Path(__file__).resolve().parent
DC = dict(events=54_582, hours=13.4 * 365.25 * 24, area_km2=160.0, mu0=0.849, theta=0.153, omega=59.4,
          h=0.0696, tau_x=1.6, tau_t=336.0)


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--N", type=int, default=1_000_000, help="expected number of events")
    ap.add_argument("--iters", type=int, default=1000, help="MH sweeps of the timed chain")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "hawkes_scale.json")
    args = ap.parse_args(argv)
    out = dict(machine=platform.machine(), cpu_count=os.cpu_count(), threads=args.threads,
               load_average_at_start=os.getloadavg()[0], date=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()))

    # background rate per km^2 per hour as in DC (the background share of DC's events is 1 - theta)
    mu = DC["events"] * (1 - DC["theta"]) / (DC["area_km2"] * DC["hours"])
    side = math.sqrt(args.N * (1 - DC["theta"]) / (mu * DC["hours"]))
    t0 = time.perf_counter()
    x, t = hp.hawkes.simulate(mu=mu, theta=DC["theta"], omega=DC["omega"], h=DC["h"], region=side,
                              duration=DC["hours"], seed=args.seed, max_events=5 * args.N)
    out["simulate_s"] = time.perf_counter() - t0
    out.update(N=int(len(t)), side_km=side, hours=DC["hours"])
    print(f"simulated {len(t):,} events on {side:.1f} km x {side:.1f} km over {DC['hours'] / 24 / 365.25:.1f} years "
          f"in {out['simulate_s']:.1f} s", flush=True)

    params = {k: DC[k] for k in ("mu0", "theta", "omega", "h", "tau_x", "tau_t")}
    kw = dict(backend="cpu", threads=args.threads)
    t0 = time.perf_counter()
    ll = hp.hawkes.log_likelihood(x, t, params, **kw)
    out["first_loglik_s"] = time.perf_counter() - t0  # includes the sort, S (background) and compilation
    t0 = time.perf_counter()
    ll2 = hp.hawkes.log_likelihood(x, t, params, **kw)
    out["loglik_s"] = time.perf_counter() - t0
    out["log_likelihood"] = ll
    assert ll == ll2
    print(f"windowed log-likelihood {ll:.6f}: {out['loglik_s']:.2f} s (first call {out['first_loglik_s']:.2f} s)",
          flush=True)

    mc = dict(chains=1, fixed={"tau_x": DC["tau_x"], "tau_t": DC["tau_t"]},
              init={k: DC[k] for k in ("mu0", "theta", "omega", "h")}, seed=args.seed, progress=False, **kw)
    t0 = time.perf_counter()
    hp.hawkes.mcmc(x, t, n_iter=2, burn_in=1, **mc)
    out["setup_plus_2_sweeps_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    post = hp.hawkes.mcmc(x, t, n_iter=args.iters, burn_in=args.iters // 10, **mc)
    out["chain_s"] = time.perf_counter() - t0
    out["chain_iters"] = args.iters
    out["chain_s_per_sweep"] = out["chain_s"] / args.iters
    out["chain_1000_projected_s"] = out["chain_s_per_sweep"] * 1000
    out["posterior_mean"] = {k: float(np.mean(post.draws[k])) for k in ("mu0", "theta", "omega", "h")}
    out["peak_rss_mb"] = _rss_mb()
    out["load_average_at_end"] = os.getloadavg()[0]
    print(f"chain of {args.iters} sweeps: {out['chain_s']:.1f} s ({1e3 * out['chain_s_per_sweep']:.0f} ms per sweep; "
          f"1,000 sweeps {out['chain_1000_projected_s'] / 60:.1f} min); peak RSS {out['peak_rss_mb']:.0f} MB; "
          f"posterior mean {out['posterior_mean']}", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1))
    print(f"-> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
