"""SaTScan's own sample analyses (its ``installers/sample_data/*.prm``) through ``hp.scan.run_prm`` beside SaTScan
10.3.2 itself: same files, same machine, same threads, one run.

    .venv/bin/python benchmarks/bench_scan_samples.py --satscan PATH/TO/SaTScan [--threads N] [--repeat K]

The samples shipped in ``hphawkes_py/data/scan/satscan_sample_data``: North Humberside (purely spatial
Bernoulli), NYCfever (prospective space-time permutation), New Mexico (retrospective space-time discrete Poisson
with census years and covariates), FakeSpaceTimeExponential (retrospective space-time exponential) and
PolygonSpatialContinuousPoisson (continuous Poisson in two triangles, grid file). Every run does all 999
replicates (``PValueReportType=1`` for SaTScan, as ours). Our time is warm (a first run compiles the Numba
kernels), the median of ``--repeat`` runs; SaTScan's one run. Top LLRs of both are recorded (they must agree).
Writes benchmarks/results/scan_samples.json.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hphawkes_py as hp  # noqa: E402
from _machine import machine_info  # noqa: E402
from bench_scan_spacetime import run_satscan  # noqa: E402

OUT = Path(__file__).parent / "results" / "scan_samples.json"
SAMPLES = Path(hp.__file__).parent / "data" / "scan" / "satscan_sample_data"
#: sample parameter file -> the data files it reads
PROBLEMS = {
    "NHumbersideSpatialBernoulli.prm": ("NHumberside.cas", "NHumberside.ctl", "NHumberside.geo"),
    "NYCSpaceTimePermutation.prm": ("NYCfever.cas", "NYCfever.geo"),
    "NewMexicoSpaceTimePoisson.prm": ("nm.cas", "nm.pop", "nm.geo"),
    "FakeSpaceTimeExponential.prm": ("SurvivalFake.cas", "SurvivalFake.geo"),
    "PolygonSpatialContinuousPoisson.prm": ("ContinuousPoissonFake.geo", "ContinuousPoissonFake.grd"),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--satscan", required=True)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    import numba

    numba.set_num_threads(args.threads)
    out = {"machine": machine_info(args.threads), "problems": {}}
    with tempfile.TemporaryDirectory(prefix="hphawkes-samples-") as tmp:
        for prm, files in PROBLEMS.items():
            folder = Path(tmp) / Path(prm).stem
            folder.mkdir()
            for name in (prm, *files):
                shutil.copy(SAMPLES / name, folder / name)
            path = folder / prm
            run = dict(seed=1, progress=False, backend="cpu", threads=args.threads)
            hp.scan.run_prm(path, n_replicates=9, **run)  # compile
            times, res = [], None
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                res = hp.scan.run_prm(path, **run)
                times.append(time.perf_counter() - t0)
            theirs = run_satscan(args.satscan, path, args.threads)
            ours = float(np.median(times))
            row = {"seconds": ours, "runs_seconds": times, "top_llr": float(res.clusters.log_likelihood_ratio.iloc[0]),
                   "satscan": {k: theirs[k] for k in ("seconds", "top_llr", "build")},
                   "speedup_vs_satscan": theirs["seconds"] / ours, "loadavg": list(os.getloadavg())}
            out["problems"][Path(prm).stem] = row
            print(f"{Path(prm).stem:38s} ours {ours:7.3f} s  SaTScan {theirs['seconds']:7.2f} s  "
                  f"{row['speedup_vs_satscan']:6.1f}x  LLR {row['top_llr']:.6f} / {theirs['top_llr']}", flush=True)
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
