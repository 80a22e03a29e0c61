"""The two pruned Poisson Monte Carlo kernels side by side, by problem size.

    .venv/bin/python benchmarks/bench_scan_poisson_kernels.py [--threads N] [--repeats K] [--quick]

``CpuEngine.max_llr`` of the Poisson model takes the shared kernel (``cpu._scan_max_pruned``: count
thresholds per bin of expected cases, tested per group of 32 replicates and block of 8 window entries)
when the windows hold at least ``cpu.POISSON_SHARED_ENTRIES`` entries, and the Poisson kernel of
``cpu_poisson`` (bounds on the LLR at each window end, items of 256 replicates) below. This runs both on
the same null replicates (``POISSON_SHARED_ENTRIES`` set to 0 and to infinity, alternating within one
process, the least of ``--repeats`` runs each; the maxima of the two must be equal) for NY leukaemia
(SaTScan's sample, 281 locations, 9,999 replicates) and for synthetic sets of 281 to 5,000 locations
uniform on a square, with 1-19 (few) or 150-250 (many) persons each and cases Poisson(persons x rate),
rate 1 % or 10 % (999 replicates; the 5,000-location ones are the regimes of ``bench_scan_regimes.py``),
circles up to 50 % of the population, SaTScan's minimum of 2 cases. The pilot pass, which both take, is
in both times. Writes benchmarks/results/scan_poisson_shared_kernel.{json,md}.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numba
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hphawkes_py as hp  # noqa: E402
from hphawkes_py.scan import cpu, null_draws  # noqa: E402
from hphawkes_py.scan import engine as se  # noqa: E402
from hphawkes_py.scan import windows as sw  # noqa: E402
from _machine import machine_info  # noqa: E402

OUT = Path(__file__).parent / "results" / "scan_poisson_shared_kernel"
CASES = [(281, "few", 0.01, 999), (281, "many", 0.01, 999), (500, "few", 0.01, 999), (1000, "few", 0.01, 999),
         (1000, "many", 0.1, 999), (2000, "few", 0.1, 999), (2000, "many", 0.01, 999), (5000, "few", 0.01, 999),
         (5000, "many", 0.1, 999)]


def _engine(xy, pop, ex, C):
    windows = sw.build_windows(xy, xy, pop, 0.5 * pop.sum())
    wexp = sw.cumulative_expected(windows, ex)
    return se.make_engine((windows[0], windows[1], wexp, windows[3]), se.klogk_table(C), C, C, "high",
                          backend="cpu", model="poisson", min_cases=2)


def synthetic(L, persons, rate, seed=0):
    """``(xy, pop, expected, C)`` of a synthetic set (the regimes' recipe, :mod:`bench_scan_regimes`)."""
    rng = np.random.default_rng(seed)
    xy = rng.uniform(0, 100, (L, 2))
    pop = rng.integers(1, 20, L) if persons == "few" else rng.integers(150, 251, L)
    C = int(rng.poisson(pop * rate).sum())
    return xy, pop, pop * (C / pop.sum()), C


def ny():
    S = hp.datasets.satscan_sample_path
    d = hp.scan.read_satscan(S("ny_leukemia.cas"), None, S("ny_leukemia.pop"), S("ny_leukemia.geo"), model="poisson")
    pop = d.population.to_numpy().astype(np.int64)
    C = int(round(d.cases.sum()))
    return d[["x", "y"]].to_numpy(), pop, pop * (C / pop.sum()), C


def compare(name, data, R, repeats):
    xy, pop, ex, C = data
    eng = _engine(xy, pop, ex, C)
    mat = null_draws.draw_multinomial_cases(ex, C, np.random.SeedSequence(1).spawn(R))
    times = {"poisson": [], "shared": []}
    maxima = {}
    default = cpu.POISSON_SHARED_ENTRIES
    try:
        for _ in range(repeats + 1):  # the first of each compiles nothing new but warms the caches
            for kernel, limit in (("poisson", np.inf), ("shared", 0)):
                cpu.POISSON_SHARED_ENTRIES = limit
                t = time.perf_counter()
                maxima[kernel] = eng.max_llr(mat)
                times[kernel].append(time.perf_counter() - t)
    finally:
        cpu.POISSON_SHARED_ENTRIES = default
    assert np.array_equal(maxima["poisson"], maxima["shared"]), name
    n_entries = int(len(eng.windows[1]))
    best = {k: min(v[1:]) for k, v in times.items()}
    return {"name": name, "locations": len(pop), "cases": C, "replicates": R, "entries": n_entries,
            "seconds_poisson_kernel": best["poisson"], "seconds_shared_kernel": best["shared"],
            "speedup_shared": best["poisson"] / best["shared"],
            "default": "shared" if n_entries >= default else "poisson"}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="no 5,000-location sets")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    numba.set_num_threads(args.threads)
    rows = [compare("NY leukaemia", ny(), 9999, args.repeats)]
    for L, persons, rate, R in CASES:
        if args.quick and L > 2000:
            continue
        rows.append(compare(f"{L} locations, {persons} persons, rate {rate:g}", synthetic(L, persons, rate), R,
                            args.repeats))
        print(rows[-1], flush=True)
    out = {"machine": machine_info(args.threads), "threshold_entries": cpu.POISSON_SHARED_ENTRIES, "rows": rows}
    args.out.with_suffix(".json").write_text(json.dumps(out, indent=1))
    lines = ["# Pruned Poisson Monte Carlo: the Poisson kernel and the shared one, by size",
             "",
             f"Host: {out['machine']['cpu_model']}, {args.threads} threads; least of {args.repeats} runs each, "
             f"alternated in one process; maxima equal. Default: the shared kernel from "
             f"{cpu.POISSON_SHARED_ENTRIES:,} window entries (`cpu.POISSON_SHARED_ENTRIES`).",
             "",
             "| problem | replicates | window entries | Poisson kernel | shared kernel | ratio | default |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['name']} | {r['replicates']:,} | {r['entries']:,} | {r['seconds_poisson_kernel']:.3f} s | "
                     f"{r['seconds_shared_kernel']:.3f} s | {r['speedup_shared']:.2f} | {r['default']} |")
    args.out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
