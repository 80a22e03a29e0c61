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

import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_scan_normal_space_time import run_beside_satscan  # noqa: E402

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
    run_beside_satscan(__doc__, PROBLEMS, write_problem, OUT, "bench_scan_categorical_space_time.py", "categorical-st")


if __name__ == "__main__":
    main()
