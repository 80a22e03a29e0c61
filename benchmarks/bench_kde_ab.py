"""sim50000 search + surface of this tree against another version of the package, alternated in ONE process.

This host's speed drifts by ~15 % over minutes, so two separate runs of ``bench_kde.py sim`` a minute apart
can invert a real 10 % difference.  Here the two versions take turns (ABBA order), each run a full adaptive
search (Brunsdon, 85 evaluations) plus the density surface on 2 threads, and the paired ratios are printed.

    git worktree add --detach /tmp/base <commit>
    python benchmarks/bench_kde_ab.py /tmp/base [--runs 8] [--threads 2]

The other version's ``hphawkes_py`` is copied to a temporary folder as ``hphawkes_old`` (its absolute
imports renamed), so both import side by side.  Both must choose the same (h, alpha), or the run stops.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import hphawkes_py as new  # noqa: E402
from _ab import import_other  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("other", type=Path, help="a checkout of the other version (its root folder)")
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args(argv)
    data = Path(new.__file__).parent / "data" / "kde" / "zhang2017"
    pts = pd.read_csv(data / "pntsSim50000.csv.gz", skipinitialspace=True).iloc[:, :2].to_numpy(float)
    with tempfile.TemporaryDirectory() as tmp:
        old = import_other(args.other, Path(tmp))
        versions = {"other": old, "this": new}
        windows = {}
        warnings.simplefilter("ignore")
        for name, hp in versions.items():  # windows read and kernels compiled outside the timings
            windows[name] = hp.kde.Window.from_asc(data / "maskSim160000.asc.gz")
            hp.kde.fit(pts[:3000], windows[name], method="adaptive", threads=args.threads,
                       progress=False).density_surface(threads=args.threads)
        secs = {"other": [], "this": []}
        chosen = set()
        for rep in range(args.runs):
            order = ("other", "this") if rep % 2 == 0 else ("this", "other")
            for name in order:
                hp = versions[name]
                t = time.perf_counter()
                f = hp.kde.fit(pts, windows[name], method="adaptive", threads=args.threads, progress=False)
                f.density_surface(threads=args.threads)
                secs[name].append(time.perf_counter() - t)
                chosen.add((f.h, f.alpha))
            if len(chosen) != 1:
                raise SystemExit(f"bench_kde_ab: the versions chose different (h, alpha): {sorted(chosen)}")
            print(f"run {rep}: other {secs['other'][-1]:.3f} s, this {secs['this'][-1]:.3f} s, "
                  f"ratio {secs['this'][-1] / secs['other'][-1]:.3f}", flush=True)
    o, n = np.array(secs["other"]), np.array(secs["this"])
    print(f"search + surface, {args.threads} threads, {args.runs} runs each: this median {np.median(n):.3f} s "
          f"({n.min():.3f}-{n.max():.3f}), other median {np.median(o):.3f} s ({o.min():.3f}-{o.max():.3f}), "
          f"median ratio {np.median(n / o):.3f}; runs of this under 3 s: {(n <= 3.0).sum()} of {len(n)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
