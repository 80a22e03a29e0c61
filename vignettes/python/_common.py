"""Shared command-line handling of the Python vignette scripts."""
from __future__ import annotations

import argparse
import os
import tempfile
import time


def parse(description: str):
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--quick", action="store_true", help="reduced data and short runs (seconds)")
    ap.add_argument("--outdir", default=None, help="where figures go (default: a temporary directory)")
    ap.add_argument("--backend", default="auto", help="auto, cpu, gpu or emulator")
    args = ap.parse_args()
    args.outdir = args.outdir or tempfile.mkdtemp(prefix="hphawkes-vignette-")
    os.makedirs(args.outdir, exist_ok=True)
    import matplotlib

    matplotlib.use("Agg")  # headless: figures are written to files
    return args


class Timer:
    def __enter__(self):
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.t0
