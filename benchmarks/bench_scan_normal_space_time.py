"""The space-time normal scan beside SaTScan 10.3.2: same data, same machine, one run.

    .venv/bin/python benchmarks/bench_scan_normal_space_time.py --satscan PATH/TO/SaTScan [--threads N]

Synthetic measurements N(50, 8) of ``n`` observations at ``L`` locations uniform on a square over ``T`` days,
raised by 12 within 30 of location 0 on days 20-29 (the recipe of tests/test_scan_normal_space_time.py, larger),
analysed through ``hp.scan.run_prm`` on the parameter file SaTScan runs (circles up to 50 % of the
observations, at most 14 days, 999 replicates, all of them: ``PValueReportType=1``): retrospective,
prospective and weighted (both directions), and the purely temporal analysis of the same observations
(``AnalysisType=2``, :func:`hphawkes_py.scan.temporal_normal`). Ours: the median of 3 warm runs; SaTScan: one run with the same
threads. The most likely clusters' LLRs must agree. Writes benchmarks/results/scan_normal_space_time.json.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hphawkes_py as hp  # noqa: E402
from _machine import machine_info  # noqa: E402
from bench_scan_spacetime import run_satscan, satscan_build  # noqa: E402

OUT = Path(__file__).parent / "results" / "scan_normal_space_time.json"
#: name -> (locations, observations, days, AnalysisType, ScanAreas, weighted)
PROBLEMS = {"retrospective 40 x 600 x 60": (40, 600, 60, "3", "1", False),
            "retrospective 200 x 5,000 x 90": (200, 5000, 90, "3", "1", False),
            "prospective 200 x 5,000 x 90": (200, 5000, 90, "4", "1", False),
            "weighted both, 200 x 5,000 x 90": (200, 5000, 90, "3", "3", True),
            "purely temporal, 5,000 x 90": (200, 5000, 90, "2", "1", False),
            "purely temporal weighted both, 5,000 x 90": (200, 5000, 90, "2", "3", True)}


def write_problem(folder: Path, name: str, threads: int) -> Path:
    L, n, T, analysis, areas, weighted = PROBLEMS[name]
    rng = np.random.default_rng(7)
    xy = rng.uniform(0, 100, (L, 2)).round(2)
    loc = np.concatenate([np.arange(L), rng.integers(0, L, n - L)])
    day = rng.integers(0, T, n)
    x = rng.normal(50.0, 8.0, n)
    x += 12.0 * ((np.hypot(*(xy[loc] - xy[0]).T) < 30) & (day >= 20) & (day < 30))
    w = rng.uniform(0.5, 2.0, n)
    dates = [str(np.datetime64("2020-01-01") + np.timedelta64(int(t), "D")).replace("-", "/") for t in day]
    stem = f"p{list(PROBLEMS).index(name)}"
    (folder / f"{stem}.geo").write_text("".join(f"L{i} {a} {b}\n" for i, (a, b) in enumerate(xy)))
    (folder / f"{stem}.cas").write_text("".join(f"L{g} 1 {d} {v:.3f}" + (f" {u:.3f}" if weighted else "") + "\n"
                                                for g, d, v, u in zip(loc, dates, x, w)))
    end = str(np.datetime64("2020-01-01") + np.timedelta64(T - 1, "D")).replace("-", "/")
    prm = folder / f"{stem}.prm"
    prm.write_text("\n".join([
        "[Input]", f"CaseFile={stem}.cas", "PrecisionCaseTimes=3", "StartDate=2020/1/1", f"EndDate={end}",
        f"CoordinatesFile={stem}.geo", "CoordinatesType=0",
        "[Analysis]", f"AnalysisType={analysis}", "ModelType=5", f"ScanAreas={areas}", "TimeAggregationUnits=3",
        "TimeAggregationLength=1",
        "[Output]", f"ResultsFile={stem}.txt", "OutputGoogleEarthKML=n", "OutputShapefiles=n", "LaunchMapViewer=n",
        "[Spatial Window]", "MaxSpatialSizeInPopulationAtRisk=50", "SpatialWindowShapeType=0",
        "[Temporal Window]", "MaxTemporalSizeInterpretation=1", "MaxTemporalSize=14",
        "[Inference]", "MonteCarloReps=999", "PValueReportType=1",
        "[Run Options]", f"NumberParallelProcesses={threads}"]) + "\n")
    return prm


def main():
    run_beside_satscan(__doc__, PROBLEMS, write_problem, OUT, "bench_scan_normal_space_time.py", "normal-st")


def run_beside_satscan(doc, problems, write, out_default, script: str, prefix: str):
    """The command line of a benchmark that runs ``hp.scan.run_prm`` and SaTScan on the parameter file
    ``write(folder, name, threads)`` writes for every problem of ``problems`` (ours: the median of 3 warm runs;
    SaTScan: one run with the same threads; the most likely clusters' LLRs must agree); writes the rows to
    ``--out`` (default ``out_default``)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--satscan", required=True, help="SaTScan batch binary (built from scanstatistics/satscan)")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--out", type=Path, default=out_default)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    out = {"machine": machine_info(args.threads), "threads": args.threads, "satscan_build": satscan_build(args.satscan),
           "command": f"python benchmarks/{script} --satscan PATH/TO/SaTScan", "rows": []}
    folder = Path(tempfile.mkdtemp(prefix=f"hphawkes-{prefix}-bench-"))
    for name in problems:
        prm = write(folder, name, args.threads)
        hp.scan.run_prm(prm, n_replicates=9, seed=1, progress=False, threads=args.threads)  # compile, warm
        runs = []
        for _ in range(3):
            t0 = time.perf_counter()
            res = hp.scan.run_prm(prm, seed=1, progress=False, threads=args.threads)
            runs.append(time.perf_counter() - t0)
        sat = run_satscan(args.satscan, prm, args.threads)
        ours_llr = float(res.clusters.log_likelihood_ratio.iloc[0])
        if sat["top_llr"] is None or abs(sat["top_llr"] - ours_llr) > 1e-5:
            raise RuntimeError(f"{name}: most likely cluster's LLR {ours_llr} here, {sat['top_llr']} in SaTScan")
        row = {"name": name, "seconds": statistics.median(runs), "runs_seconds": runs, "satscan_seconds":
               sat["seconds"], "speedup_vs_satscan": sat["seconds"] / statistics.median(runs), "top_llr": ours_llr,
               "satscan_top_llr": sat["top_llr"], "centres": res.n_centres, "windows": res.n_windows}
        out["rows"].append(row)
        print(json.dumps(row), flush=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
