"""Benchmarks of hphawkes_py.kde on the paper's problems (Zhang, Zhu & Huang 2017).

* ``sim``: pntsSim50000 with maskSim160000 (n = 50,000, m = 160,000), Brunsdon's adaptive search end
  to end (paper: 1,459.6 s on one core, 63.6 s on 32 cores, 2.1 s on a GPU), plus the surface.
* ``scaling``: time of one adaptive leave-one-out evaluation (pilot + edge factors + LOO sum) at the
  rule-of-thumb h0(n), alpha = 0.5, for subsamples of pntsSim100000.
* ``ebird``: ebird_80k with us_1km (n = 78,977, 12.9 M cells, 7.8 M inside; paper: 5,245.7 s on
  32 cores, 346.5 s on a GPU), adaptive search end to end plus the surface.

* ``ebird-eval``: the eBird problem's window read, edge factors and ONE adaptive evaluation.
* ``chorley``: relative risk of larynx cases (58) against lung controls (978) on the 0.1 km mask,
  fixed (oversmoothing) and adaptive bandwidths, with 999 Monte Carlo relabellings (fit + surface +
  p-value surface; issue goal <= 10 s on 2 cores).

Usage: ``python benchmarks/bench_kde.py [sim] [scaling] [ebird] [ebird-eval] [chorley] [--threads T] [--backend cpu]``.
Prints a table and merges the results into ``benchmarks/results/kde.json``.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import hphawkes_py as hp
from hphawkes_py._backend import resolve_backend
from hphawkes_py.kde.engine import make_engine
from hphawkes_py.kde.model import _Objective

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _machine import machine_info  # noqa: E402

DATA = Path(hp.__file__).parent / "data" / "kde" / "zhang2017"
OUT = Path(__file__).parent / "results" / "kde.json"


def _points(name):
    df = pd.read_csv(DATA / name, skipinitialspace=True)
    return df.iloc[:, :2].to_numpy(float)


def _load(name):
    t = time.perf_counter()
    w = hp.kde.Window.from_asc(DATA / name)
    return w, time.perf_counter() - t


def _warm(backend, threads):
    # compile the Numba kernels outside the timings (they are cached on disk after the first run)
    pts = _points("pntsRedwood.csv")
    w, _ = _load("redwood.asc.gz")
    hp.kde.fit(pts, w, method="fixed", bandwidth=0.05, backend=backend, threads=threads)
    # the adaptive search's kernels too (two candidates per walk, pilots, surfaces)
    hp.kde.fit(pts, w, method="adaptive", backend=backend, threads=threads, progress=False).density_surface(threads=threads)


def bench_fit(points_file, window_file, backend, threads, paper):
    pts = _points(points_file)
    w, t_read = _load(window_file)
    # hp.kde.fit refuses points outside the window; 988 eBird points fall in NODATA cells of us_1km
    # (coasts, borders).  The paper's code kept them; here they are removed, explicitly and reported.
    inside = w.contains(pts)
    n_outside = int((~inside).sum())
    pts = pts[inside]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # duplicated points (kept, as in the paper)
        t, c = time.perf_counter(), time.process_time()
        f = hp.kde.fit(pts, w, method="adaptive", backend=backend, threads=threads)
        t_fit, c_fit = time.perf_counter() - t, time.process_time() - c
    evals = sum(1 for r in f.trace if not r.get("accepted", False)) + 1
    t = time.perf_counter()
    s = f.density_surface()
    t_surf = time.perf_counter() - t
    near = int((f.edge_factors > 1.0).sum())
    return {
        "points": points_file, "window": window_file, "n": len(pts), "points_removed_outside_window": n_outside, "cells": int(w.mask.size),
        "inside_cells": w.n_inside, "backend": f.backend, "threads": threads,
        "h": f.h, "alpha": f.alpha, "h0": f.h0, "log_likelihood": f.log_likelihood, "iterations": f.n_iter,
        "likelihood_evaluations": evals, "points_with_edge_factor_above_1": near,
        "seconds_read_window": t_read, "seconds_search": t_fit, "cpu_seconds_search": c_fit, "seconds_per_evaluation": t_fit / evals,
        "seconds_surface": t_surf, "surface_integral": s.integral(), "paper_seconds": paper,
    }


def bench_scaling(backend, threads, sizes=(12500, 25000, 50000, 100000), reps=3):
    allp = _points("pntsSim100000.csv.gz")
    w, _ = _load("maskSim160000.asc.gz")
    rows = []
    for n in sizes:
        pts = allp[:n]
        eng = make_engine(pts, w, 3.0, backend=resolve_backend(backend))
        obj = _Objective(eng, n, True)
        h0 = hp.kde.rule_of_thumb_bandwidth(pts)
        times, cpu = [], []
        for r in range(reps):
            obj._pilot_cache.clear()
            t, c = time.perf_counter(), time.process_time()
            obj.adaptive_loglik(h0 * (1 + 1e-9 * r), 0.5)
            times.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
        rows.append({"n": n, "h0": h0, "seconds_per_evaluation_min": min(times), "seconds_all": times,
                     "cpu_seconds_per_evaluation_min": min(cpu)})
    for a, b in zip(rows, rows[1:]):
        b["exponent_vs_previous"] = float(np.log(b["seconds_per_evaluation_min"] / a["seconds_per_evaluation_min"]) / np.log(b["n"] / a["n"]))
    return rows


def bench_ebird_eval(backend, threads):
    """eBird: window read, edge factors and one adaptive leave-one-out evaluation at (h0, 0.5)."""
    pts = _points("ebird_80k.csv.gz")
    w, t_read = _load("us_1km.zip")
    inside = w.contains(pts)
    pts = pts[inside]
    n = len(pts)
    eng = make_engine(pts, w, 3.0, backend=resolve_backend(backend))
    obj = _Objective(eng, n, True)
    h0 = hp.kde.rule_of_thumb_bandwidth(pts)
    bw = np.full(n, h0)
    t, c = time.perf_counter(), time.process_time()
    m = eng.edge_masses(bw)
    t_edge, c_edge = time.perf_counter() - t, time.process_time() - c
    t, c = time.perf_counter(), time.process_time()
    eng.point_intensities(bw, 1 / m, True)
    t_loo, c_loo = time.perf_counter() - t, time.process_time() - c
    t, c = time.perf_counter(), time.process_time()
    ll, b = obj.adaptive_loglik(h0, 0.5)
    t_ad, c_ad = time.perf_counter() - t, time.process_time() - c
    return {"n": n, "points_removed_outside_window": int((~inside).sum()), "cells": int(w.mask.size),
            "inside_cells": w.n_inside, "bands": int(len(w.row_bands()[0])), "h0": h0,
            "points_near_boundary_at_h0": int((m < 1).sum()), "seconds_read_window": t_read,
            "seconds_edge_factors_h0": t_edge, "cpu_seconds_edge_factors_h0": c_edge,
            "seconds_loo_sum_h0": t_loo, "cpu_seconds_loo_sum_h0": c_loo,
            "seconds_adaptive_evaluation": t_ad, "cpu_seconds_adaptive_evaluation": c_ad,
            "log_likelihood_h0_alpha05": ll, "max_bandwidth": float(b.max()),
            "paper_seconds": {"32_cores": 5245.7, "gpu": 346.5}}


def bench_chorley(backend, threads, n_replicates=999):
    df = pd.read_csv(Path(hp.__file__).parent / "data" / "kde" / "chorley.csv")
    w = hp.kde.Window.from_asc(Path(hp.__file__).parent / "data" / "kde" / "chorley_mask_0.1km.asc.gz")
    xy = df[["x", "y"]].to_numpy(float)
    cases, controls = xy[df["mark"].to_numpy() == "larynx"], xy[df["mark"].to_numpy() == "lung"]
    out = {"cases": len(cases), "controls": len(controls), "cells": int(w.mask.size), "inside_cells": w.n_inside,
           "n_replicates": n_replicates}
    for method in ("fixed", "adaptive"):
        t, c = time.perf_counter(), time.process_time()
        rr = hp.kde.relative_risk(cases, controls, w, method=method, backend=backend, threads=threads, progress=False)
        rr.surface()
        p = rr.p_values("monte_carlo", n_replicates=n_replicates, seed=1, progress=False, threads=threads)
        out[f"seconds_{method}"] = time.perf_counter() - t
        out[f"cpu_seconds_{method}"] = time.process_time() - c
        out[f"fraction_of_cells_below_0.05_{method}"] = float(np.nanmean(p.values < 0.05))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("problems", nargs="*", default=["sim", "scaling"], choices=["sim", "scaling", "ebird", "ebird-eval", "chorley"])
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--backend", default="cpu")
    args = ap.parse_args(argv)
    import numba

    threads = args.threads or numba.get_num_threads()
    numba.set_num_threads(threads)  # the engine-level benchmarks run under the process setting
    _warm(args.backend, threads)
    results = {}
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    meta = {"cpu_count": os.cpu_count(), "threads": threads, "machine": machine_info(threads),
            "load_average_at_start": load, "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())}
    print(f"hphawkes_py.kde benchmarks, backend={args.backend}, threads={threads}, load average {load}")
    if "sim" in args.problems:
        r = bench_fit("pntsSim50000.csv.gz", "maskSim160000.asc.gz", args.backend, threads,
                      {"one_core": 1459.6, "32_cores": 63.6, "gpu": 2.1})
        r.update(meta)
        results[f"sim50000_adaptive_{args.backend}_{threads}t"] = r
        print(f"sim50000 adaptive: search {r['seconds_search']:.3g} s wall, {r['cpu_seconds_search']:.3g} s CPU ({r['likelihood_evaluations']} evaluations, "
              f"{r['seconds_per_evaluation']:.3f} s each), surface {r['seconds_surface']:.2f} s; "
              f"h = {r['h']:.5f}, alpha = {r['alpha']:.4f}   [paper: 1459.6 s 1 core, 63.6 s 32 cores, 2.1 s GPU]")
    if "scaling" in args.problems:
        rows = bench_scaling(args.backend, threads)
        results[f"scaling_adaptive_eval_{args.backend}_{threads}t"] = {"rows": rows, **meta}
        print(f"{'n':>8} {'h0':>9} {'s/eval':>9} {'cpu s':>9} {'exponent':>9}")
        for r in rows:
            print(f"{r['n']:>8} {r['h0']:>9.5f} {r['seconds_per_evaluation_min']:>9.3f} "
                  f"{r['cpu_seconds_per_evaluation_min']:>9.3f} {r.get('exponent_vs_previous', float('nan')):>9.2f}")
    if "ebird" in args.problems:
        r = bench_fit("ebird_80k.csv.gz", "us_1km.zip", args.backend, threads, {"32_cores": 5245.7, "gpu": 346.5})
        r.update(meta)
        results[f"ebird_adaptive_{args.backend}_{threads}t"] = r
        print(f"ebird adaptive (n = {r['n']}, {r['points_removed_outside_window']} points outside the mask removed): read window {r['seconds_read_window']:.1f} s, search {r['seconds_search']:.1f} s "
              f"({r['likelihood_evaluations']} evaluations, {r['seconds_per_evaluation']:.3f} s each), surface "
              f"{r['seconds_surface']:.1f} s; h = {r['h']:.1f}, alpha = {r['alpha']:.4f}   [paper: 5245.7 s 32 cores, 346.5 s GPU]")
    if "ebird-eval" in args.problems:
        r = bench_ebird_eval(args.backend, threads)
        r.update(meta)
        results[f"ebird_one_evaluation_{args.backend}_{threads}t"] = r
        print(f"ebird (n = {r['n']}, {r['points_removed_outside_window']} outside removed, {r['bands']} row bands): "
              f"read {r['seconds_read_window']:.1f} s; at h0 = {r['h0']:.0f}: edge factors {r['seconds_edge_factors_h0']:.1f} s "
              f"({r['points_near_boundary_at_h0']} points near the boundary), LOO sum {r['seconds_loo_sum_h0']:.1f} s; "
              f"one adaptive evaluation {r['seconds_adaptive_evaluation']:.1f} s wall / "
              f"{r['cpu_seconds_adaptive_evaluation']:.1f} s CPU")
    if "chorley" in args.problems:
        r = bench_chorley(args.backend, threads)
        r.update(meta)
        results[f"chorley_relative_risk_999_{args.backend}_{threads}t"] = r
        print(f"chorley relative risk, {r['cases']} cases / {r['controls']} controls, {r['inside_cells']} cells, "
              f"999 relabellings: fixed {r['seconds_fixed']:.3g} s, adaptive {r['seconds_adaptive']:.3g} s [goal 10 s]")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    # merge with what is on disk NOW (another benchmark run may have written meanwhile)
    merged = json.loads(OUT.read_text()) if OUT.exists() else {}
    merged.update(results)
    OUT.write_text(json.dumps(merged, indent=2))
    print(f"-> {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
