"""Time per adaptive-MH move and per iteration on the DC gunshot data; projected full-run time.

Usage::

    .venv/bin/python benchmarks/bench_hawkes_mcmc.py [--threads 1 2] [--sweeps 200] [--repeat 20]

Measures, on the bundled no-holiday DC data (54,582 events, tau_x = 1.6 km and
tau_t = 336 h fixed) with the CPU engine:

* the one-off set-up of a chain (engine + background sums S_n);
* each kind of move at posterior-like parameters: ``mu0``/``theta`` (one O(N)
  pass, no pair sums), ``h``/``omega`` (trigger sums into slot 1 + one pass);
* a real chain of ``--sweeps`` iterations (4 moves each) started at the
  posterior mean (as ``reproduce dc-gunshots`` starts at the mode), including
  Python overhead; wall and CPU time;

and projects the paper's full run (4 chains x 10,000 iterations) on this
machine (chains run one after another; each uses ``threads`` cores).
Writes ``benchmarks/results/hawkes_mcmc.json``. Timings on a shared machine are
noisy: the load average is recorded.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import platform
import time
from pathlib import Path

import numpy as np

from hphawkes_py.datasets import load_dc_gunshots
from hphawkes_py.hawkes import mcmc
from hphawkes_py.hawkes.engine import make_engine

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _machine import machine_info  # noqa: E402

POST = {"mu0": 0.849, "theta": 0.153, "omega": 59.4, "h": 0.0696}  # the DC posterior mean (quick run)


def _best(fn, repeat):
    times = []
    for i in range(repeat):
        t0 = time.perf_counter()
        fn(i)
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), float(np.min(times))


def bench(threads: int, repeat: int, sweeps: int) -> dict:
    df = load_dc_gunshots("no_holidays")
    x = df[["x_km", "y_km"]].to_numpy()
    t = df["t_hours"].to_numpy()
    o = np.argsort(t, kind="stable")
    xs, ts = x[o], t[o]
    res = {"threads": threads, "events": int(len(t))}

    t0 = time.perf_counter()
    eng = make_engine(xs, ts, backend="cpu", threads=threads)
    eng.set_background(1.6, 336.0)
    res["setup_seconds"] = time.perf_counter() - t0  # includes Numba cache load / compile on first use
    t0 = time.perf_counter()
    eng2 = make_engine(xs, ts, backend="cpu", threads=threads)
    eng2.set_background(1.6, 336.0)
    res["setup_seconds_warm"] = time.perf_counter() - t0
    mu0, theta, omega, h = POST["mu0"], POST["theta"], POST["omega"], POST["h"]
    eng.set_trigger(h, omega, slot=0)

    def mu0_move(i):
        eng.sum_log_intensity(mu0 * (1 + 1e-4 * (i + 1)), theta, slot=0) - eng.integral(mu0, theta, omega)

    def theta_move(i):
        eng.sum_log_intensity(mu0, theta * (1 + 1e-4 * (i + 1)), slot=0) - eng.integral(mu0, theta, omega)

    def h_move(i):
        eng.set_trigger(h * (1 + 1e-4 * (i + 1)), omega, slot=1)
        eng.sum_log_intensity(mu0, theta, slot=1) - eng.integral(mu0, theta, omega)

    def omega_move(i):
        om = omega * (1 + 1e-4 * (i + 1))
        eng.set_trigger(h, om, slot=1)
        eng.sum_log_intensity(mu0, theta, slot=1) - eng.integral(mu0, theta, om)

    moves = {}
    for name, fn in (("mu0", mu0_move), ("theta", theta_move), ("h", h_move), ("omega", omega_move)):
        med, best = _best(fn, repeat)
        moves[name] = {"median_ms": 1e3 * med, "min_ms": 1e3 * best}
    res["moves"] = moves
    p0 = eng.pair_evaluations
    eng.set_trigger(h * 1.01, omega, slot=1)
    res["trigger_pairs_per_set"] = int(eng.pair_evaluations - p0)
    res["sweep_ms_from_moves"] = sum(m["median_ms"] for m in moves.values())

    t0 = time.perf_counter()
    c0 = time.process_time()
    post = mcmc(x, t, n_iter=sweeps, burn_in=sweeps // 2, chains=1, fixed={"tau_x": 1.6, "tau_t": 336.0}, seed=1,
                init={k: POST[k] for k in ("h", "omega", "theta", "mu0")}, progress=False, backend="cpu",
                threads=threads)
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    res["chain"] = {"sweeps": sweeps, "wall_seconds": wall, "seconds_per_sweep_incl_setup": wall / sweeps,
                    "posterior_mean_last_half": {n: float(post.draws[n].mean()) for n in post.sampled}}
    per_sweep = (wall - res["setup_seconds_warm"]) / sweeps
    res["chain"]["seconds_per_sweep"] = per_sweep
    # CPU time of this process per sweep: with one thread, the wall time per sweep on an idle core
    # (the machine is shared, so wall times above include waiting for a core).
    res["chain"]["cpu_seconds_per_sweep"] = cpu / sweeps
    if threads == 1:
        res["projected_full_run_minutes_idle_2cores"] = 2 * 10_000 * cpu / sweeps / 60
        res["projected_quick_run_minutes_idle_2cores"] = 1_000 * cpu / sweeps / 60
    res["projected_full_run_minutes"] = (4 * (res["setup_seconds_warm"] + 10_000 * per_sweep)) / 60
    res["projected_quick_run_minutes"] = (2 * (res["setup_seconds_warm"] + 1_000 * per_sweep)) / 60
    # what `hphawkes reproduce dc-gunshots --full` does on 2 cores: 2 worker processes, 1 thread each,
    # so 4 chains take 2 chain-lengths (assumes both cores are free; pi_n over 1,000 draws comes on top)
    if threads == 1:
        cores = os.cpu_count() or 1
        rounds = int(np.ceil(4 / min(4, cores)))
        res["projected_full_run_minutes_processes"] = rounds * (res["setup_seconds_warm"] + 10_000 * per_sweep) / 60
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--sweeps", type=int, default=200)
    args = ap.parse_args()
    results = {"machine": {**machine_info(), "cpus": os.cpu_count(), "platform": platform.platform(),
                           "loadavg_start": os.getloadavg()}, "runs": []}
    print(f"{'threads':>7} {'setup s':>8} {'mu0 ms':>8} {'theta ms':>9} {'h ms':>8} {'omega ms':>9} "
          f"{'sweep s':>8} {'cpu/sweep s':>11} {'full 4x10k min':>15} {'quick min':>10} {'full, 1 chain/core min':>23} "
          f"{'full idle 2 cores min':>22}")
    for th in args.threads:
        r = bench(th, args.repeat, args.sweeps)
        results["runs"].append(r)
        m = r["moves"]
        print(f"{th:>7} {r['setup_seconds_warm']:>8.2f} {m['mu0']['median_ms']:>8.2f} {m['theta']['median_ms']:>9.2f} "
              f"{m['h']['median_ms']:>8.2f} {m['omega']['median_ms']:>9.2f} {r['chain']['seconds_per_sweep']:>8.4f} "
              f"{r['chain']['cpu_seconds_per_sweep']:>11.4f} {r['projected_full_run_minutes']:>15.1f} {r['projected_quick_run_minutes']:>10.1f} "
              f"{r.get('projected_full_run_minutes_processes', float('nan')):>23.1f} "
              f"{r.get('projected_full_run_minutes_idle_2cores', float('nan')):>22.1f}", flush=True)
    results["machine"]["loadavg_end"] = os.getloadavg()
    out = Path(__file__).parent / "results" / "hawkes_mcmc.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.exists():  # keep entries written by other runs (e.g. measured reproduce runs)
        previous = json.loads(out.read_text())
        results.update({k: v for k, v in previous.items() if k not in results})
    out.write_text(json.dumps(results, indent=2))
    print(f"wrote {out} (load average {results['machine']['loadavg_start']} -> {results['machine']['loadavg_end']}: "
          "timings on a shared machine are noisy)")


if __name__ == "__main__":
    main()
