"""The Poisson pruned Monte Carlo's block of window ends (``cpu_poisson.POISSON_BLOCK``), per regime.

    .venv/bin/python benchmarks/bench_scan_poisson_block.py [--threads N] [--replicates R] [--repeats K]

For each Poisson regime of :mod:`bench_scan_regimes` (5,000 locations, circles up to 50 % of the
population), the null replicates of one analysis are drawn once, then the pruned kernel
(:func:`hphawkes_py.scan.cpu.max_llr_pruned`) runs on them with blocks of 1 (entry by entry), 2,
4, 8 and 16 window ends, with the default block without the second, window-end-by-window-end
bound (``POISSON_REFINE``, used with 32-bit counts), and with the default block with sub-batches of
columns down to four per thread instead of ``POISSON_SUBS_PER_THREAD`` (narrower sub-batches,
fewer parts of the centres), the settings alternating within one process,
``--repeats`` times each; the least time of each is kept, and every setting's maxima must equal entry
by entry's. The defaults (``POISSON_BLOCK`` 8, and the second bound with 32-bit counts, ``POISSON_SUBS_PER_THREAD`` 2) are the
measured best. The regimes' windows (12.5M entries) take the shared kernel by default
(``cpu.POISSON_SHARED_ENTRIES``, see ``bench_scan_poisson_kernels.py``); here they are held on the Poisson one.
Writes benchmarks/results/scan_poisson_block.{json,md}.
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
from hphawkes_py.scan import cpu, cpu_poisson, monte_carlo  # noqa: E402
from _machine import machine_info  # noqa: E402
from bench_scan_regimes import spatial_data  # noqa: E402

OUT = Path(__file__).parent / "results" / "scan_poisson_block"
BLOCKS = (1, 2, 4, 8, 16)


def null_problem(name, R):
    """The engine and the null replicates (L, R) of the regime's Poisson analysis."""
    _, coords, pop, cases = spatial_data(name, 5000)
    got = {}
    orig = monte_carlo._null_batch

    def capture(size, batch_seed, engine, weights, n_cases, penalties=None):
        got["engine"] = engine
        got["cases"] = monte_carlo.draw_multinomial_cases(weights, n_cases, monte_carlo.batch_children(batch_seed, size))
        return np.zeros(size)

    monte_carlo._null_batch = capture
    try:
        hp.scan.poisson(coords, cases, pop, n_replicates=R, seed=1, progress=False, backend="cpu", min_cases=2)
    finally:
        monte_carlo._null_batch = orig
    return got["engine"], got["cases"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--replicates", type=int, default=999)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    numba.set_num_threads(args.threads)
    rows = {}
    cpu.POISSON_SHARED_ENTRIES = np.inf  # the Poisson kernel, whatever the windows (the subject here)
    default, per_thread = cpu_poisson.POISSON_BLOCK, cpu_poisson.POISSON_SUBS_PER_THREAD
    for name in [f"poisson_{p}_{r}" for p in ("few", "many") for r in ("rare", "common")]:
        eng, cases = null_problem(name, args.replicates)
        plogs = eng._poisson_logs()
        bits = 16 if eng.n_cases < 2**15 - 1 else 32
        settings = [(b, True, per_thread) for b in BLOCKS] + [(default, False, per_thread), (default, True, 4)]
        times = {k: [] for k in settings}
        ref = None
        for rep in range(args.repeats + 1):  # the first pass compiles and is not kept
            for b, refine, subs in settings:
                cpu_poisson.POISSON_BLOCK, cpu_poisson.POISSON_REFINE, cpu_poisson.POISSON_SUBS_PER_THREAD = b, refine, subs
                t0 = time.perf_counter()
                m = cpu.max_llr_pruned(eng.windows, cases, eng.klogk, eng.n_cases, eng.n_total, eng.direction,
                                       min_cases=eng.min_cases, model="poisson", plogs=plogs)
                if rep:
                    times[b, refine, subs].append(time.perf_counter() - t0)
                ref = m if ref is None else ref
                assert np.array_equal(m, ref), (name, b, refine)
        cpu_poisson.POISSON_BLOCK, cpu_poisson.POISSON_REFINE, cpu_poisson.POISSON_SUBS_PER_THREAD = default, True, per_thread
        rows[name] = {"cases": int(eng.n_cases), "count_bits": bits, "default_block": default,
                      "subs_per_thread": per_thread,
                      "seconds": {str(b): min(times[b, True, per_thread]) for b in BLOCKS},
                      "default_block_without_refine": min(times[default, False, per_thread]),
                      "default_block_four_subs_per_thread": min(times[default, True, 4])}
        print(name, bits, {k: round(min(t), 3) for k, t in times.items()}, flush=True)
    res = {"machine": machine_info(args.threads), "threads": args.threads, "replicates": args.replicates,
           "repeats": args.repeats, "problems": rows}
    OUT.with_suffix(".json").write_text(json.dumps(res, indent=1))
    lines = [f"# Poisson pruned kernel: window ends per block ({res['machine']['cpu_model']}, {args.threads} threads, "
             f"{args.replicates} replicates, least of {args.repeats})", "",
             "| regime | cases | counts | " + " | ".join(f"block {b} (s)" for b in BLOCKS)
             + " | default block, no second bound (s) | default block, 4 sub-batches per thread (s) | default |",
             "|---|---|---|" + "---|" * len(BLOCKS) + "---|---|---|"]
    for name, r in rows.items():
        lines.append(f"| {name} | {r['cases']} | {r['count_bits']}-bit | "
                     + " | ".join(f"{r['seconds'][str(b)]:.3f}" for b in BLOCKS)
                     + f" | {r['default_block_without_refine']:.3f} | {r['default_block_four_subs_per_thread']:.3f}"
                     + f" | block {r['default_block']}, {r['subs_per_thread']} per thread |")
    OUT.with_suffix(".md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
