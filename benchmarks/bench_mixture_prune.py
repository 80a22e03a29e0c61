"""Exact vs pruned label draw of the CPU mixture engine on a fitted chain (issue 16).

    python benchmarks/bench_mixture_prune.py [--n 100000] [--k 256] [--burn-in 10] [--reps 5]

Simulated data of bench_mixture.py (p = 14), a real Gibbs chain run for ``--burn-in`` sweeps so
the components are fitted, then, alternating in the same process on the same state: the label
draw (``sample_labels``) and one full Gibbs sweep with the exact engine (``prune=False``) and the
pruned one (default), each repeated ``--reps`` times.  Reports milliseconds, per-rep ratios,
the fraction of (point, component) pairs the pruned draw kept, and whether labels and
log-likelihood agree.  Writes benchmarks/results/mixture_prune.json.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import time
from pathlib import Path

import numpy as np

from bench_mixture import loadavg, simulate

from hphawkes_py.mixture import _math as M
from hphawkes_py.mixture._math import Priors
from hphawkes_py.mixture.cpu import CpuEngine
from hphawkes_py.mixture.cpu_draw import prune_margin
from hphawkes_py.mixture.gibbs import gibbs_sweep
from hphawkes_py.mixture.initial_values import initial_state

RESULTS = Path(__file__).resolve().parent / "results" / "mixture_prune.json"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--k", type=int, default=256)
    ap.add_argument("--burn-in", type=int, default=10)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    p = 14
    X = simulate(args.n, p)
    Xs = (X - X.mean(0)) / X.std(0)
    ex = CpuEngine(Xs, prune=False)
    pr = CpuEngine(Xs, prune=True)
    rng = np.random.default_rng(1)
    priors = Priors(np.zeros(p), 1.0, 1.0, np.eye(p), 1.0, 1.0)
    state = initial_state(Xs, args.k, rng, "kmeans++")
    t0 = time.perf_counter()
    for _ in range(args.burn_in):
        state = gibbs_sweep(pr, rng, state, priors)
    burn_s = time.perf_counter() - t0
    L, U, logdet = M.chol_factors(state.Sigma)
    for eng in (ex, pr):
        eng.set_components(state.log_w, state.mu, U, logdet)
    u = rng.random(args.n)
    z_ex = ex.sample_labels(u).copy()
    z_pr = pr.sample_labels(u).copy()
    agree = {"labels_equal": bool(np.array_equal(z_ex, z_pr)), "labels_differing": int(np.count_nonzero(z_ex != z_pr)),
             "loglik_rel_diff": abs(pr.loglik - ex.loglik) / abs(ex.loglik),
             "label_stats_max_abs_diff": float(np.abs(pr.label_stats() - ex.label_stats()).max())}
    kept = pr.last_kept_fraction
    la0 = loadavg()
    lab = {"exact": [], "pruned": []}
    sweep = {"exact": [], "pruned": []}
    for r in range(args.reps):
        for name, eng in (("exact", ex), ("pruned", pr)) if r % 2 == 0 else (("pruned", pr), ("exact", ex)):
            eng.set_components(state.log_w, state.mu, U, logdet)
            t = time.perf_counter()
            eng.sample_labels(u, return_labels=False)
            lab[name].append(time.perf_counter() - t)
        for name, eng in (("exact", ex), ("pruned", pr)) if r % 2 == 0 else (("pruned", pr), ("exact", ex)):
            rr = np.random.default_rng(100 + r)
            t = time.perf_counter()
            gibbs_sweep(eng, rr, state, priors)
            sweep[name].append(time.perf_counter() - t)
    res = {
        "n": args.n, "p": p, "k": args.k, "burn_in_sweeps": args.burn_in, "burn_in_seconds": burn_s,
        "occupied_components": int(np.count_nonzero(state.N)), "cpus": os.cpu_count(),
        "margin_nats": prune_margin(args.k), "tolerance_relative_mass": math.exp(-prune_margin(args.k)) * args.k,
        "kept_pair_fraction": kept, "gemm_pair_fraction": 1.0, "agreement": agree,
        "sample_labels_ms": {k_: [round(1e3 * x, 1) for x in v] for k_, v in lab.items()},
        "sample_labels_ratio_exact_over_pruned": [round(a / b, 3) for a, b in zip(lab["exact"], lab["pruned"])],
        "sweep_ms": {k_: [round(1e3 * x, 1) for x in v] for k_, v in sweep.items()},
        "sweep_ratio_exact_over_pruned": [round(a / b, 3) for a, b in zip(sweep["exact"], sweep["pruned"])],
        "load_before": la0, "load_after": loadavg(),
        "note": "2 cores shared with other jobs: absolute times are noisy, compare the per-rep ratios",
    }
    for name in ("exact", "pruned"):
        print(f"{name:7s} sample_labels median {1e3 * np.median(lab[name]):7.1f} ms   sweep median "
              f"{1e3 * np.median(sweep[name]):7.1f} ms")
    print(f"ratios exact/pruned: labels {res['sample_labels_ratio_exact_over_pruned']}  "
          f"sweep {res['sweep_ratio_exact_over_pruned']}")
    print(f"kept pairs {kept:.4f}; agreement {agree}; load {la0} -> {res['load_after']}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=2))
    return res


if __name__ == "__main__":
    main()
