"""Benchmark of the space-time permutation scan (hp.scan.space_time_permutation), beside SaTScan.

    .venv/bin/python benchmarks/bench_scan_spacetime.py [--satscan PATH/TO/SaTScan] [--threads N] [--quick]

Problems (999 permutations each, as SaTScan's default):
* NYCfever: SaTScan's sample analysis (NYCSpaceTimePermutation.prm: 194 cases, 192 zip codes,
  prospective, circles up to 3 km and 50 % of the cases, 1-7 days), run from the .prm file
  through ``hp.scan.run_prm``;
* synthetic retrospective: L locations uniform on a 100 x 100 km square, C cases on T days,
  circles up to 10 % of the cases, cylinders 1-14 days.
With ``--satscan`` the same analyses run in SaTScan (its batch binary, same machine, same
threads via ``NumberParallelProcesses``) in the same process run, and the ratio is reported.
Wall-clock seconds after a warm-up that compiles the Numba kernels, and the top LLR of both (they must agree). The load average is recorded.
Writes benchmarks/results/scan_spacetime.json.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import re
import shutil
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

import hphawkes_py as hp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _machine import machine_info  # noqa: E402

OUT = Path(__file__).parent / "results" / "scan_spacetime.json"


def run_satscan(binary: str, prm: Path, threads: int) -> dict:
    """Run SaTScan's batch binary on ``prm`` (a copy with our thread count); wall seconds and its top LLR."""
    text = prm.read_text()
    text = re.sub(r"(?m)^NumberParallelProcesses=.*$", f"NumberParallelProcesses={threads}", text)
    text = re.sub(r"(?m)^LaunchMapViewer=.*$", "LaunchMapViewer=n", text)
    # all replicates, as we run them (SaTScan's default stops early once 50 replicates exceed the LLR)
    text = re.sub(r"(?m)^PValueReportType=.*$", "PValueReportType=1", text)
    run = prm.with_name(prm.stem + "_bench.prm")
    run.write_text(text)
    t0 = time.perf_counter()
    proc = subprocess.run([binary, str(run)], cwd=prm.parent, capture_output=True, text=True)
    secs = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"SaTScan failed ({proc.returncode}): {proc.stderr[-2000:] or proc.stdout[-2000:]}")
    results = prm.parent / re.search(r"(?m)^ResultsFile=(.*)$", text).group(1).strip()
    report = results.read_text(errors="replace")
    llr = [float(v) for v in re.findall(r"(?:Test statistic|Log likelihood ratio)\.*:\s*([0-9.]+)", report)]
    return {"seconds": secs, "top_llr": llr[0] if llr else None, "report": str(results), "build": satscan_build(binary)}


def satscan_build(binary: str) -> str:
    """How the SaTScan binary was compiled: the ``BUILD_FLAGS`` that ``peers/build_satscan.sh`` writes beside
    it (e.g. ``OPTIMIZATION=-O3``), or ``"unrecorded"``."""
    flags = Path(binary).resolve().parent / "BUILD_FLAGS"
    return flags.read_text().strip() if flags.is_file() else "unrecorded"


def write_satscan_files(folder: Path, coords, loc, day, start, prm_template: Path, *, max_fraction, max_days,
                        prospective):
    """SaTScan files for a synthetic problem (Cartesian coordinates, one case per record)."""
    dates = np.datetime64(start) + day.astype("timedelta64[D]")
    (folder / "syn.geo").write_text("".join(f"L{i} {x:.6f} {y:.6f}\n" for i, (x, y) in enumerate(coords)))
    (folder / "syn.cas").write_text("".join(f"L{z} 1 {str(d).replace('-', '/')}\n" for z, d in zip(loc, dates)))
    text = prm_template.read_text()
    end = str(dates.max()).replace("-", "/")
    subs = {"CaseFile": "syn.cas", "CoordinatesFile": "syn.geo", "CoordinatesType": "0",
            "StartDate": str(np.datetime64(start)).replace("-", "/"), "EndDate": end,
            "AnalysisType": "4" if prospective else "3", "ResultsFile": "syn.txt",
            "UseDistanceFromCenterOption": "n", "MaxSpatialSizeInPopulationAtRisk": str(int(max_fraction * 100)),
            "MaxTemporalSizeInterpretation": "1", "MaxTemporalSize": str(max_days), "ProspectiveStartDate": end}
    for k, v in subs.items():
        text = re.sub(rf"(?m)^{k}=.*$", f"{k}={v}", text)
    prm = folder / "syn.prm"
    prm.write_text(text)
    return prm


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--satscan", help="SaTScan batch binary (built from scanstatistics/satscan)")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    out = {"machine": machine_info(args.threads), "threads": args.threads, "backend": args.backend, "loadavg": os.getloadavg(), "problems": {}}
    work = Path(tempfile.mkdtemp(prefix="hphawkes-stp-"))
    sample = hp.datasets.path("scan/satscan_sample_data")
    for f in sample.iterdir():
        shutil.copy(f, work / f.name)
    nyc = work / "NYCSpaceTimePermutation.prm"
    # warm-up (Numba compilation) on a few replicates
    hp.scan.run_prm(nyc, n_replicates=9, seed=0, progress=False, backend=args.backend, threads=args.threads)

    t0 = time.perf_counter()
    res = hp.scan.run_prm(nyc, seed=1, progress=False, backend=args.backend, threads=args.threads)
    secs = time.perf_counter() - t0
    row = {"seconds": secs, "top_llr": float(res.clusters.log_likelihood_ratio.iloc[0]),
           "p_value": float(res.clusters.p_value.iloc[0])}
    if args.satscan:
        row["satscan"] = run_satscan(args.satscan, nyc, args.threads)
        row["speedup_vs_satscan"] = row["satscan"]["seconds"] / secs
    out["problems"]["nycfever_prospective_999"] = row
    print("NYCfever", json.dumps({k: v for k, v in row.items()}, default=str))

    L, T, C = (200, 60, 2000) if args.quick else (500, 120, 5000)
    rng = np.random.default_rng(1)
    coords = rng.uniform(0, 100, size=(L, 2))
    loc = rng.integers(0, L, C)
    day = rng.integers(0, T, C)
    kw = dict(max_population=0.1, max_temporal=14, n_replicates=999, seed=1, progress=False,
              backend=args.backend, threads=args.threads)
    t0 = time.perf_counter()
    ids = np.r_[loc, np.arange(L)]  # every location is a circle centre, as in SaTScan's .geo
    res = hp.scan.space_time_permutation(coords[ids], np.r_[np.ones(C, np.int64), np.zeros(L, np.int64)],
                                         np.r_[day, np.zeros(L, np.int64)], study_period=(0, T - 1),
                                         location_ids=ids, **kw)
    secs = time.perf_counter() - t0
    row = {"L": L, "T": T, "C": C, "seconds": secs, "top_llr": float(res.clusters.log_likelihood_ratio.iloc[0])}
    if args.satscan:
        prm = write_satscan_files(work, coords, loc, day, "2020-01-01", nyc, max_fraction=0.1, max_days=14,
                                  prospective=False)
        row["satscan"] = run_satscan(args.satscan, prm, args.threads)
        row["speedup_vs_satscan"] = row["satscan"]["seconds"] / secs
    out["problems"]["synthetic_retrospective_999"] = row
    print("synthetic", json.dumps(row, default=str))
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(out, indent=1, default=str))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
