"""Benchmarks of hp.scan.bernoulli and hp.scan.poisson (Kulldorff's spatial scan).

Prints a table and writes benchmarks/results/scan.json.

    .venv/bin/python benchmarks/bench_scan.py            # full set
    .venv/bin/python benchmarks/bench_scan.py --quick    # smaller scaling grid

Problems:
* New York leukaemia (281 tracts, planar x/y km, cases = floor(cases), controls = population -
  cases, 1,057,673 persons), 50% maximum, 9,999 replications;
* synthetic: L locations uniform on a 100 x 100 square, 1-19 persons each, 10% cases,
  50% maximum, 999 replications (L = 5,000 is the issue's target: < 30 s on 2 cores);
* scaling in locations (999 replications) and in replications (L = 1,000);
* exhaustive (every window of every replicate) vs pruned Monte Carlo kernel;
* discrete Poisson on SaTScan's NY leukaemia files, 10% maximum, 9,999 replications.
Timings are wall-clock seconds (time.perf_counter), after a warm-up that compiles the Numba
kernels; the machine is shared, so the load average is recorded with each run.
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

import hphawkes_py as hp
from hphawkes_py.scan import cpu as scan_cpu
from hphawkes_py.scan.engine import klogk_table
from hphawkes_py.scan.null_draws import draw_null_cases
from hphawkes_py.scan.windows import build_windows
from hphawkes_py._parallel import spawn_seeds

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _machine import machine_info  # noqa: E402

OUT = Path(__file__).parent / "results" / "scan.json"


def synthetic(L, seed=0):
    rng = np.random.default_rng(seed)
    coords = rng.uniform(0, 100, size=(L, 2))
    pop = rng.integers(1, 20, size=L)
    cases = rng.binomial(pop, 0.1)
    return coords, cases, pop - cases


CPU_TIME = {}


def timed_run(coords, cases, controls, R, **kw):
    """Wall seconds (and, in CPU_TIME["last"], CPU seconds of all threads of this process:
    a load-independent measure of work; wall time on an idle 2-core machine ~ CPU / 2)."""
    c0 = time.process_time()
    t0 = time.perf_counter()
    res = hp.scan.bernoulli(coords, cases, controls, n_replicates=R, seed=1, progress=False, **kw)
    CPU_TIME["last"] = time.process_time() - c0
    return time.perf_counter() - t0, res


def windows_time(coords, cases, controls, maxp=0.5):
    pop = np.asarray(cases) + np.asarray(controls)
    t0 = time.perf_counter()
    w = build_windows(coords, coords, pop, maxp * pop.sum())
    return time.perf_counter() - t0, w


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--backend", default="cpu")
    args = ap.parse_args(argv)
    import numba

    rows = []

    def record(name, **kv):
        kv = {"benchmark": name, **kv, "loadavg_1min": os.getloadavg()[0]}
        rows.append(kv)
        print(" | ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in kv.items()), flush=True)

    # warm-up (compiles / loads the cached kernels)
    c, a, b = synthetic(200)
    timed_run(c, a, b, 50, backend=args.backend)

    # New York leukaemia, 9,999 replications
    ny = hp.datasets.load_ny_leukemia()
    ny_cases = np.floor(ny.cases.to_numpy()).astype(np.int64)
    ny_ctl = ny.population.to_numpy() - ny_cases
    xy = ny[["x", "y"]].to_numpy()
    for maxp in (0.5, 0.1):
        tw, w = windows_time(xy, ny_cases, ny_ctl, maxp)
        t, res = timed_run(xy, ny_cases, ny_ctl, 9999, max_population=maxp, backend=args.backend)
        top = res.clusters.iloc[0]
        record("ny_leukemia", locations=281, replicates=9999, max_population=maxp, windows=res.n_windows,
               seconds=t, windows_seconds=tw, cpu_seconds=CPU_TIME["last"], top_llr=float(top.log_likelihood_ratio), top_p=float(top.p_value))

    # discrete Poisson, NY leukaemia from SaTScan's files, 10% maximum, 9,999 replications (issue 12)
    S = hp.datasets.satscan_sample_path
    nyp = hp.scan.read_satscan(S("ny_leukemia.cas"), population_file=S("ny_leukemia.pop"),
                               geo_file=S("ny_leukemia.geo"), model="poisson")
    hp.scan.poisson(nyp[["x", "y"]].to_numpy(), nyp.cases, nyp.population, n_replicates=20, progress=False,
                    backend=args.backend)
    c0 = time.process_time()
    t0 = time.perf_counter()
    resp = hp.scan.poisson(nyp[["x", "y"]].to_numpy(), nyp.cases, nyp.population, max_population=0.1,
                           n_replicates=9999, seed=1, progress=False, backend=args.backend)
    record("ny_poisson", locations=281, replicates=9999, max_population=0.1, windows=resp.n_windows,
           seconds=time.perf_counter() - t0, cpu_seconds=time.process_time() - c0,
           top_llr=float(resp.clusters.log_likelihood_ratio.iloc[0]))

    # synthetic 5,000 locations, 999 replications (the target)
    c, a, b = synthetic(5000)
    tw, w = windows_time(c, a, b)
    t, res = timed_run(c, a, b, 999, backend=args.backend)
    record("synthetic_5000", locations=5000, replicates=999, max_population=0.5, windows=res.n_windows,
           seconds=t, cpu_seconds=CPU_TIME["last"], windows_seconds=tw)

    # exhaustive vs pruned Monte Carlo kernel on one batch of 256 replicates
    L = 2000 if args.quick else 5000
    c, a, b = synthetic(L)
    pop = a + b
    N, C = int(pop.sum()), int(a.sum())
    _, w = windows_time(c, a, b)
    eng = scan_cpu.CpuEngine(w, klogk_table(N), C, N, "high")
    M = draw_null_cases(pop, C, spawn_seeds(3, 256))
    c0 = time.process_time()
    t0 = time.perf_counter()
    x1 = eng.max_llr(M)
    tp = time.perf_counter() - t0
    cp = time.process_time() - c0
    c0 = time.process_time()
    t0 = time.perf_counter()
    x2 = eng.max_llr_exhaustive(M)
    te = time.perf_counter() - t0
    ce = time.process_time() - c0
    entries = int(w[0][-1])
    record("kernel_pruned_vs_exhaustive", locations=L, replicates=256, window_entries=entries,
           pruned_seconds=tp, exhaustive_seconds=te, pruned_cpu_seconds=cp, exhaustive_cpu_seconds=ce, identical=bool(np.array_equal(x1, x2)),
           pruned_ns_per_entry_replicate=tp / (entries * 256) * 1e9,
           exhaustive_ns_per_entry_replicate=te / (entries * 256) * 1e9)

    # scaling in locations (999 replications) and replications (L = 1,000)
    Ls = (500, 1000, 2000) if args.quick else (500, 1000, 2000, 5000)
    for L in Ls:
        c, a, b = synthetic(L, seed=L)
        tw, _ = windows_time(c, a, b)
        t, res = timed_run(c, a, b, 999, backend=args.backend)
        record("scaling_locations", locations=L, replicates=999, windows=res.n_windows, seconds=t,
               cpu_seconds=CPU_TIME["last"], windows_seconds=tw)
    c, a, b = synthetic(1000, seed=7)
    for R in ((99, 999) if args.quick else (99, 999, 9999)):
        t, res = timed_run(c, a, b, R, backend=args.backend)
        record("scaling_replicates", locations=1000, replicates=R, seconds=t, cpu_seconds=CPU_TIME["last"])

    # the CUDA emulator (validation engine; CPU fibers, not a performance target)
    try:
        g = hp.datasets.load_grave()
        t, res = timed_run(g[["x", "y"]].to_numpy(), g.case.to_numpy(), 1 - g.case.to_numpy(), 999,
                           backend="emulator")
        record("grave_emulator", locations=143, replicates=999, seconds=t,
               top_llr=float(res.clusters.log_likelihood_ratio.iloc[0]))
    except Exception as exc:  # emulator needs g++
        print("emulator skipped:", exc)

    meta = {
        "machine": machine_info(),
        "cpu_count": os.cpu_count(),
        "numba_threads": numba.get_num_threads(),
        "note": "shared 2-core machine, other engineers' jobs running: see loadavg_1min per row",
        "command": "python benchmarks/bench_scan.py" + (" --quick" if args.quick else ""),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"meta": meta, "results": rows}, indent=2))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
