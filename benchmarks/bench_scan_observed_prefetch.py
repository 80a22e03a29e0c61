"""The observed data's scan (one column of cases): window ends per block and the table prefetch.

    .venv/bin/python benchmarks/bench_scan_observed_prefetch.py [--threads N] [--repeats K]

For each spatial regime of :mod:`bench_scan_regimes` (5,000 locations, circles up to 50 % of the
population), the observed scan's arguments are captured from one analysis, then
:func:`hphawkes_py.scan.cpu_observed.best_per_centre_blocks` runs on them with blocks of 1 (every
window end) and 8 window ends (``BLOCK``), each without prefetching and with the ``k log k`` lines of
the next 8, 16 (``LOOKAHEAD``) and 32 window ends prefetched, and with the default (``None``: 16 for a
table of ``PREFETCH_TABLE_BYTES`` or more, else none), the settings alternating within one
process, ``--repeats`` times each; the least time of each is kept, and every setting's best LLRs and
entries must equal the first's. The Bernoulli LLR reads the table at the window's persons, a cache line
or more apart from one window end to the next (an 8 MB table for a million persons): those loads are
what the prefetch overlaps. The Poisson LLR reads it at the case counts, which move by a few entries; it
is not prefetched (the kernel ignores ``lookahead`` there), so its rows show the cost of nothing; nor is a
Bernoulli table that fits a core's L2 cache (a few persons a location), where prefetching measured slower.
Writes benchmarks/results/scan_observed_prefetch.{json,md}.
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
from hphawkes_py.scan import cpu, cpu_observed  # noqa: E402
from _machine import machine_info  # noqa: E402
from bench_scan_regimes import spatial_call, spatial_data  # noqa: E402

OUT = Path(__file__).parent / "results" / "scan_observed_prefetch"
SETTINGS = [(1, 0), (1, 16), (8, 0), (8, 8), (8, 16), (8, 32), (8, None)]


def observed_arguments(name):
    """The arguments of the observed data's block scan in the regime's analysis."""
    model, coords, pop, cases = spatial_data(name, 5000)
    got = {}
    orig = cpu.best_per_centre_blocks

    def capture(*a, **k):
        got["args"] = a
        return orig(*a, **k)

    cpu.best_per_centre_blocks = capture
    try:
        fn, data = spatial_call(hp, model, coords, pop, cases)
        fn(*data, n_replicates=9, seed=1, progress=False, backend="cpu", min_cases=2)
    finally:
        cpu.best_per_centre_blocks = orig
    return got["args"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    numba.set_num_threads(args.threads)
    rows = {}
    for name in [f"{m}_{p}_{r}" for m in ("bernoulli", "poisson") for p in ("few", "many") for r in ("rare", "common")]:
        a = observed_arguments(name)
        times = {s: [] for s in SETTINGS}
        ref = None
        for rep in range(args.repeats + 1):  # the first pass compiles and is not kept
            for block, ahead in SETTINGS:
                t0 = time.perf_counter()
                best, entry = cpu_observed.best_per_centre_blocks(*a, block=block, lookahead=ahead)
                if rep:
                    times[block, ahead].append(time.perf_counter() - t0)
                ref = (best, entry) if ref is None else ref
                assert np.array_equal(best, ref[0]) and np.array_equal(entry, ref[1]), (name, block, ahead)
        rows[name] = {"entries": int(a[1].shape[0]), "table_bytes": int(a[8].nbytes),
                      "seconds": {f"{b}/{k}": min(t) for (b, k), t in times.items()}}
        print(name, {k: round(v, 3) for k, v in rows[name]["seconds"].items()}, flush=True)
    res = {"machine": machine_info(args.threads), "threads": args.threads, "repeats": args.repeats,
           "settings": "block/lookahead", "problems": rows}
    OUT.with_suffix(".json").write_text(json.dumps(res, indent=1))
    lines = [f"# Observed data's scan: block of window ends / prefetch lookahead ({res['machine']['cpu_model']}, "
             f"{args.threads} threads, least of {args.repeats})", "",
             "| regime | window entries | table (MB) | " + " | ".join(f"{b} / {'default' if k is None else k} (s)" for b, k in SETTINGS) + " |",
             "|---|---|---|" + "---|" * len(SETTINGS)]
    for name, r in rows.items():
        lines.append(f"| {name} | {r['entries']:,} | {r['table_bytes'] / 2**20:.1f} | " + " | ".join(f"{r['seconds'][f'{b}/{k}']:.3f}"
                                                                   for b, k in SETTINGS) + " |")
    OUT.with_suffix(".md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
