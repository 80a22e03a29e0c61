"""The purely spatial ordinal and multinomial scans beside SaTScan 10.3.2: same data, same machine, one run.

    .venv/bin/python benchmarks/bench_scan_categorical.py --satscan PATH/TO/SaTScan [--threads N]

``n`` cases in grades 1-4 (probabilities .3, .3, .2, .2) at ``L`` locations uniform on a 100 x 100 square, analysed
through ``hp.scan.run_prm`` on the parameter file SaTScan runs: the purely spatial ordinal (``ModelType=3``) and
multinomial (7) analyses, high rates, circles up to 50 % of the cases, 999 replicates (all of them:
``PValueReportType=1``). Ours: the median of 3 warm runs; SaTScan: one run with the same threads. The most likely
clusters' LLRs must agree. Writes benchmarks/results/scan_categorical.json.
"""
from __future__ import annotations

import os
import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_scan_normal_space_time import run_beside_satscan  # noqa: E402

OUT = Path(__file__).parent / "results" / "scan_categorical.json"
#: name -> (locations, cases, ModelType)
PROBLEMS = {"ordinal, 500 x 5,000": (500, 5000, "3"), "multinomial, 500 x 5,000": (500, 5000, "7"),
            "ordinal, 1,000 x 10,000": (1000, 10000, "3"), "multinomial, 1,000 x 10,000": (1000, 10000, "7")}


def write_problem(folder: Path, name: str, threads: int) -> Path:
    L, n, model = PROBLEMS[name]
    rng = np.random.default_rng(1)
    xy = rng.uniform(0, 100, (L, 2)).round(3)
    loc = rng.integers(0, L, n)
    cat = rng.choice([1, 2, 3, 4], n, p=[.3, .3, .2, .2])
    stem = f"p{list(PROBLEMS).index(name)}"
    (folder / f"{stem}.geo").write_text("".join(f"L{i} {a} {b}\n" for i, (a, b) in enumerate(xy)))
    rows = sorted(Counter(zip(loc.tolist(), cat.tolist())).items())
    (folder / f"{stem}.cas").write_text("".join(f"L{g} {c} " + (f"{k}" if model == "3" else f"grade{k}") + "\n"
                                                for (g, k), c in rows))
    prm = folder / f"{stem}.prm"
    prm.write_text("\n".join([
        "[Input]", f"CaseFile={stem}.cas", f"CoordinatesFile={stem}.geo", "CoordinatesType=0", "PrecisionCaseTimes=0",
        "StartDate=2000/1/1", "EndDate=2000/12/31",
        "[Analysis]", "AnalysisType=1", f"ModelType={model}", "ScanAreas=1",
        "[Output]", f"ResultsFile={stem}.txt", "OutputGoogleEarthKML=n", "OutputShapefiles=n", "LaunchMapViewer=n",
        "[Spatial Window]", "MaxSpatialSizeInPopulationAtRisk=50", "SpatialWindowShapeType=0",
        "[Inference]", "MonteCarloReps=999", "PValueReportType=1",
        "[Run Options]", f"NumberParallelProcesses={threads}"]) + "\n")
    return prm


def main():
    run_beside_satscan(__doc__, PROBLEMS, write_problem, OUT, "bench_scan_categorical.py", "categorical")


if __name__ == "__main__":
    main()
