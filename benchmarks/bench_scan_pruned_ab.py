"""The scan regimes of this tree against another version of the package, alternated in ONE process.

This host's speed drifts by up to 1.5x between runs minutes apart, more than most kernel changes; here the
two versions take turns (ABBA order) on the same data, each a whole ``hp.scan.bernoulli`` / ``hp.scan.poisson``
run (windows, observed scan, 999 replicates drawn and scanned, pruned Monte Carlo), or a whole retrospective
``hp.scan.space_time_permutation`` / ``hp.scan.space_time`` run, warm, and the least and the median time of each
are printed with their ratio. Both must give the same top LLR and p-value.

    git worktree add --detach /tmp/base <commit>
    python benchmarks/bench_scan_pruned_ab.py /tmp/base [--runs 5] [--threads 2] [--only NAME ...]

The regimes are those of ``bench_scan_regimes.py`` (spatial: 5,000 locations; space-time: 500 locations,
5,000 cases on 120 days). Writes nothing; paste the table into
``benchmarks/results/`` with the commit and the CPU.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import hphawkes_py as new  # noqa: E402
from _ab import import_other  # noqa: E402
from _machine import machine_info  # noqa: E402
from bench_scan_regimes import SPACE_TIME, SPATIAL, space_time_call, space_time_data, spatial_call, \
    spatial_data  # noqa: E402


def _run(hp, name, data, kw):
    if name in SPACE_TIME:
        fn, args, more = space_time_call(hp, *data)
        kw = {**kw, **more}
    else:
        fn, args = spatial_call(hp, *data)
    t0 = time.perf_counter()
    res = fn(*args, **kw)
    top = res.clusters.iloc[0]
    return time.perf_counter() - t0, (float(top.log_likelihood_ratio), float(top.p_value))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("other", type=Path, help="a checkout of the other version (its root folder)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--only", nargs="+", choices=SPATIAL + SPACE_TIME, default=SPATIAL + SPACE_TIME)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    kw = dict(n_replicates=999, seed=1, progress=False, backend="cpu", threads=args.threads, min_cases=2)
    info = machine_info(args.threads)
    print(f"{info['cpu_model']}, AVX2 {info['avx2']}, AVX-512 {info['avx512f']}, {args.threads} threads")
    print("| regime | other: least / median (s) | this: least / median (s) | ratio of least | ratio of medians |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        old = import_other(args.other, Path(tmp))
        for name in args.only:
            data = space_time_data(name) if name in SPACE_TIME else spatial_data(name, 5000)
            times = {"other": [], "this": []}
            tops = {}
            for label, hp in (("other", old), ("this", new)):  # compiles outside the timings
                tops[label] = _run(hp, name, data, {**kw, "n_replicates": 9})[1]
            for k in range(args.runs):
                order = (("other", old), ("this", new)) if k % 2 == 0 else (("this", new), ("other", old))
                for label, hp in order:
                    t, top = _run(hp, name, data, kw)
                    times[label].append(t)
                    tops[label] = top
            if tops["other"] != tops["this"]:
                raise SystemExit(f"{name}: the versions disagree: {tops}")
            o, n = np.array(times["other"]), np.array(times["this"])
            print(f"| {name} | {o.min():.2f} / {np.median(o):.2f} | {n.min():.2f} / {np.median(n):.2f} | "
                  f"{o.min() / n.min():.2f}x | {np.median(o) / np.median(n):.2f}x |", flush=True)


if __name__ == "__main__":
    main()
