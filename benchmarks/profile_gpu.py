"""Where the GPU rows of bench_gpu.py spend their time: each workload once under cProfile.

    python benchmarks/profile_gpu.py [--only kde scan mixture] [--top 25]

Kernel time shows up in the calls that synchronise (``to_host``), host work under its own name.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_gpu  # noqa: E402

WORKLOADS = {"kde": bench_gpu.kde_sim, "scan": bench_gpu.scan_bernoulli, "mixture": bench_gpu.mixture_gibbs,
             "sccs": bench_gpu.sccs_fit}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", choices=sorted(WORKLOADS), default=["kde", "scan", "mixture"])
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    for name in args.only:
        WORKLOADS[name](True, False)  # compile and warm every kernel outside the profile
        prof = cProfile.Profile()
        prof.enable()
        res = WORKLOADS[name](args.quick, False)
        prof.disable()
        s = io.StringIO()
        st = pstats.Stats(prof, stream=s)
        st.sort_stats("tottime").print_stats(args.top)
        st.sort_stats("cumulative").print_stats(args.top)
        print(f"==== {name}: {res}\n{s.getvalue()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
