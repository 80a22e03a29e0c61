"""Effective sample size per second: NUTS (``mcmc(sampler="nuts")``) against the adaptive MH sampler.

Usage::

    .venv/bin/python benchmarks/bench_hawkes_nuts_ess.py [--events 5000] [--mh-iter 4000] [--nuts-iter 400]
        [--repeat 2] [--backend cpu] [--threads 1]

The DC gunshot data (no holidays; ``tau_x = 1.6`` km and ``tau_t = 336`` h fixed, ``h, omega, theta,
mu0`` sampled with the default priors, as ``hphawkes reproduce dc-gunshots``), or its last
``--events`` events (a stated subsample: the whole data take a NUTS gradient pass per leapfrog
step). Both samplers start at the same point (the DC posterior mean) with one chain; the first
half of each run is burn-in (MH: adaptation of the proposal scales; NUTS: step size and metric).
For each parameter, ArviZ's ``ess_bulk`` and ``ess_tail`` of the kept draws, divided by the
wall time of the whole run (burn-in included: both need theirs). The two samplers run alternately
``--repeat`` times (different seeds), so a change of load on a shared machine hits both; the
ratios of one run are what to read. Writes ``benchmarks/results/hawkes_nuts_ess.json`` and a
markdown table beside it.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from hphawkes_py.cli.hawkes_reproduce import TAU_T_HOURS, TAU_X_KM
from hphawkes_py.datasets import load_dc_gunshots
from hphawkes_py.hawkes import mcmc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _machine import machine_info  # noqa: E402

SAMPLED = ("h", "omega", "theta", "mu0")
POST = {"mu0": 0.849, "theta": 0.153, "omega": 59.4, "h": 0.0696}  # the DC posterior mean (quick run)


def _ess(post) -> dict:
    import arviz as az

    idata = az.from_dict(posterior={n: np.asarray(post.draws[n]) for n in SAMPLED})
    bulk = az.ess(idata, method="bulk")
    tail = az.ess(idata, method="tail")
    return {n: {"ess_bulk": float(bulk[n]), "ess_tail": float(tail[n])} for n in SAMPLED}


def _run(sampler, x, t, n_iter, seed, backend, threads) -> dict:
    kw = dict(n_iter=n_iter, burn_in=n_iter // 2, chains=1, sample=SAMPLED,
              fixed={"tau_x": TAU_X_KM, "tau_t": TAU_T_HOURS}, init=POST, seed=seed, progress=False,
              backend=backend, threads=threads, sampler=sampler)
    t0 = time.perf_counter()
    post = mcmc(x, t, **kw)
    wall = time.perf_counter() - t0
    ess = _ess(post)
    out = {"sampler": sampler, "n_iter": n_iter, "burn_in": n_iter // 2, "seed": seed, "wall_s": wall,
           "per_param": {n: dict(e, ess_bulk_per_s=e["ess_bulk"] / wall,
                                 mean=float(np.mean(post.draws[n])), sd=float(np.std(post.draws[n])))
                         for n, e in ess.items()}}
    out["min_ess_bulk_per_s"] = min(v["ess_bulk_per_s"] for v in out["per_param"].values())
    if sampler == "nuts":
        out["nuts_stats"] = {k: np.asarray(v).tolist() for k, v in post.nuts_stats.items()}
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=5000, help="last N events of DC (0: all 54,582)")
    ap.add_argument("--mh-iter", type=int, default=4000)
    ap.add_argument("--nuts-iter", type=int, default=400)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "hawkes_nuts_ess.json"))
    a = ap.parse_args(argv)
    df = load_dc_gunshots("no_holidays").sort_values("t_hours", kind="stable")
    if a.events:
        df = df.iloc[-a.events:]
    x = df[["x_km", "y_km"]].to_numpy()
    t = df["t_hours"].to_numpy()
    # compile (Numba caches) outside the timings
    for s, n in (("mh", 4), ("nuts", 4)):
        mcmc(x[:200], t[:200], n_iter=n, burn_in=2, chains=1, fixed={"tau_x": TAU_X_KM, "tau_t": TAU_T_HOURS},
             init=POST, seed=0, progress=False, backend=a.backend, threads=a.threads, sampler=s)
    runs = []
    for r in range(a.repeat):
        for s, n in (("mh", a.mh_iter), ("nuts", a.nuts_iter)):
            res = _run(s, x, t, n, 100 + r, a.backend, a.threads)
            print(f"{s:4s} seed {100 + r}: {res['wall_s']:.1f} s, min ESS_bulk/s {res['min_ess_bulk_per_s']:.3f}",
                  flush=True)
            runs.append(res)
    summary = {}
    for s in ("mh", "nuts"):
        rs = [r for r in runs if r["sampler"] == s]
        summary[s] = {n: float(np.mean([r["per_param"][n]["ess_bulk_per_s"] for r in rs])) for n in SAMPLED}
        summary[s]["min"] = float(np.mean([r["min_ess_bulk_per_s"] for r in rs]))
    ratio = {n: summary["nuts"][n] / summary["mh"][n] for n in (*SAMPLED, "min")}
    result = {
        "benchmark": "ESS per second, NUTS vs adaptive MH, DC gunshots",
        "data": {"events": int(len(t)), "subsample": f"last {a.events} events" if a.events else "all",
                 "tau_x_km": TAU_X_KM, "tau_t_hours": TAU_T_HOURS, "init": POST},
        "backend": a.backend, "machine": machine_info(a.threads), "runs": runs,
        "mean_ess_bulk_per_s": summary, "nuts_over_mh": ratio,
        "load_average_end": [round(v, 2) for v in os.getloadavg()],
    }
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    lines = [f"# ESS/s, NUTS vs adaptive MH ({result['data']['subsample']} of DC, {len(t):,} events, "
             f"backend {a.backend}, {a.threads} thread(s), {result['machine']['cpu_model']}, "
             f"load average at the end {result['load_average_end']})", "",
             f"MH: 1 chain x {a.mh_iter} sweeps; NUTS: 1 chain x {a.nuts_iter} iterations; half burn-in; "
             f"{a.repeat} alternating repeats; ArviZ ess_bulk / wall time of the whole run.", "",
             "| parameter | MH ESS_bulk/s | NUTS ESS_bulk/s | NUTS / MH |", "| --- | --- | --- | --- |"]
    for n in (*SAMPLED, "min"):
        lines.append(f"| {n} | {summary['mh'][n]:.3f} | {summary['nuts'][n]:.3f} | {ratio[n]:.2f} |")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return result


if __name__ == "__main__":
    main()
