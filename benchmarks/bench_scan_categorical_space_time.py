"""The space-time and purely temporal ordinal and multinomial scans beside SaTScan 10.3.2: same data, same machine,
one run.

    .venv/bin/python benchmarks/bench_scan_categorical_space_time.py --satscan PATH/TO/SaTScan [--threads N]

Synthetic cases in grades 1-4 (probabilities .3, .3, .2, .2) of ``n`` cases at ``L`` locations uniform on a square
over ``T`` days, the higher grades more common within 30 of location 0 on days 20-29 (the recipe of
tests/test_scan_categorical_space_time.py), analysed through ``hp.scan.run_prm`` on the parameter file SaTScan runs
(circles up to 50 % of the cases, at most ``max_t`` days, 999 replicates, all of them: ``PValueReportType=1``):
retrospective and prospective space-time ordinal (ModelType=3) and multinomial (7) analyses, and the purely
temporal ones of the same cases (AnalysisType=2). Ours: the median of 3 warm runs; SaTScan: one run with the same
threads. The most likely clusters' LLRs must agree. Writes benchmarks/results/scan_categorical_space_time.json.
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

OUT = Path(__file__).parent / "results" / "scan_categorical_space_time.json"
#: name -> (locations, cases, days, ModelType, AnalysisType, ScanAreas, max_t)
PROBLEMS = {"ordinal retrospective, 40 x 900 x 60": (40, 900, 60, "3", "3", "1", 7),
            "multinomial retrospective, 40 x 900 x 60": (40, 900, 60, "7", "3", "1", 7),
            "ordinal both directions, 40 x 900 x 60": (40, 900, 60, "3", "3", "3", 7),
            "ordinal retrospective, 100 x 3,000 x 90": (100, 3000, 90, "3", "3", "1", 14),
            "ordinal prospective, 200 x 5,000 x 90": (200, 5000, 90, "3", "4", "1", 14),
            "multinomial prospective, 200 x 5,000 x 90": (200, 5000, 90, "7", "4", "1", 14),
            "ordinal purely temporal, 5,000 x 90": (200, 5000, 90, "3", "2", "1", 14),
            "multinomial purely temporal, 5,000 x 90": (200, 5000, 90, "7", "2", "1", 14)}


def write_problem(folder: Path, name: str, threads: int) -> Path:
    L, n, T, model, analysis, areas, max_t = PROBLEMS[name]
    rng = np.random.default_rng(31)
    xy = rng.uniform(0, 100, (L, 2)).round(2)
    loc = np.concatenate([np.arange(L), rng.integers(0, L, n - L)])
    day = rng.integers(0, T, n)
    cat = rng.choice([1, 2, 3, 4], n, p=[.3, .3, .2, .2])
    hi = rng.choice([1, 2, 3, 4], n, p=[.1, .2, .3, .4])
    cat = np.where((np.hypot(*(xy[loc] - xy[0]).T) < 30) & (day >= 20) & (day < 30), hi, cat)
    dates = [str(np.datetime64("2020-01-01") + np.timedelta64(int(t), "D")).replace("-", "/") for t in day]
    stem = f"p{list(PROBLEMS).index(name)}"
    (folder / f"{stem}.geo").write_text("".join(f"L{i} {a} {b}\n" for i, (a, b) in enumerate(xy)))
    (folder / f"{stem}.cas").write_text("".join(f"L{g} 1 {d} " + (f"{c}" if model == "3" else f"grade{c}") + "\n"
                                                for g, d, c in zip(loc, dates, cat)))
    end = str(np.datetime64("2020-01-01") + np.timedelta64(T - 1, "D")).replace("-", "/")
    prm = folder / f"{stem}.prm"
    prm.write_text("\n".join([
        "[Input]", f"CaseFile={stem}.cas", "PrecisionCaseTimes=3", "StartDate=2020/1/1", f"EndDate={end}",
        f"CoordinatesFile={stem}.geo", "CoordinatesType=0",
        "[Analysis]", f"AnalysisType={analysis}", f"ModelType={model}", f"ScanAreas={areas}",
        "TimeAggregationUnits=3", "TimeAggregationLength=1",
        "[Output]", f"ResultsFile={stem}.txt", "OutputGoogleEarthKML=n", "OutputShapefiles=n", "LaunchMapViewer=n",
        "[Spatial Window]", "MaxSpatialSizeInPopulationAtRisk=50", "SpatialWindowShapeType=0",
        "[Temporal Window]", "MaxTemporalSizeInterpretation=1", f"MaxTemporalSize={max_t}",
        "[Inference]", "MonteCarloReps=999", "PValueReportType=1",
        "[Run Options]", f"NumberParallelProcesses={threads}"]) + "\n")
    return prm


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--satscan", required=True, help="SaTScan batch binary (built from scanstatistics/satscan)")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    out = {"machine": machine_info(args.threads), "threads": args.threads, "satscan_build": satscan_build(args.satscan),
           "command": "python benchmarks/bench_scan_categorical_space_time.py --satscan PATH/TO/SaTScan", "rows": []}
    folder = Path(tempfile.mkdtemp(prefix="hphawkes-categorical-st-bench-"))
    for name in PROBLEMS:
        prm = write_problem(folder, name, args.threads)
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
