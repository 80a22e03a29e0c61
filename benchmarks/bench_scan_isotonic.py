"""The isotonic spatial scan (``IsotonicScan=1``) beside SaTScan 10.3.2: same data, same machine, one run.

    .venv/bin/python benchmarks/bench_scan_isotonic.py --satscan PATH/TO/SaTScan [--threads N]

``L`` locations uniform on a 100 x 100 square with populations 500-3,000, cases at a rate of 1 % (twice that within
15 of location 0, 1.4 times within 30 of it), analysed through ``hp.scan.run_prm`` on the parameter file SaTScan
runs: purely spatial discrete Poisson and Bernoulli, high rates, circles up to 50 % of the population, 999
replicates (all of them: ``PValueReportType=1``). Ours: the median of 3 warm runs; SaTScan: one run with the same
threads. The most likely clusters' LLRs must agree. Writes benchmarks/results/scan_isotonic.json.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_scan_normal_space_time import run_beside_satscan  # noqa: E402

OUT = Path(__file__).parent / "results" / "scan_isotonic.json"
#: name -> (locations, ModelType)
PROBLEMS = {"Poisson, 1,000 locations": (1000, "0"), "Bernoulli, 1,000 locations": (1000, "1"),
            "Poisson, 3,000 locations": (3000, "0")}


def write_problem(folder: Path, name: str, threads: int) -> Path:
    L, model = PROBLEMS[name]
    rng = np.random.default_rng(3)
    xy = rng.uniform(0, 100, (L, 2)).round(3)
    pop = rng.integers(500, 3000, L)
    d = np.hypot(*(xy - xy[0]).T)
    cases = rng.poisson(pop * 0.01 * np.where(d < 15, 2.0, np.where(d < 30, 1.4, 1.0)))
    stem = f"p{list(PROBLEMS).index(name)}"
    (folder / f"{stem}.geo").write_text("".join(f"L{i} {a} {b}\n" for i, (a, b) in enumerate(xy)))
    (folder / f"{stem}.cas").write_text("".join(f"L{i} {c}\n" for i, c in enumerate(cases)))
    (folder / f"{stem}.pop").write_text("".join(f"L{i} 2000 {p}\n" for i, p in enumerate(pop)))
    (folder / f"{stem}.ctl").write_text("".join(f"L{i} {p - c}\n" for i, (p, c) in enumerate(zip(pop, cases))))
    prm = folder / f"{stem}.prm"
    prm.write_text("\n".join([
        "[Input]", f"CaseFile={stem}.cas", f"PopulationFile={stem}.pop" if model == "0" else f"ControlFile={stem}.ctl",
        f"CoordinatesFile={stem}.geo", "CoordinatesType=0", "PrecisionCaseTimes=0", "StartDate=2000/1/1",
        "EndDate=2000/12/31",
        "[Analysis]", "AnalysisType=1", f"ModelType={model}", "ScanAreas=1",
        "[Output]", f"ResultsFile={stem}.txt", "OutputGoogleEarthKML=n", "OutputShapefiles=n", "LaunchMapViewer=n",
        "[Spatial Window]", "MaxSpatialSizeInPopulationAtRisk=50", "SpatialWindowShapeType=0", "IsotonicScan=1",
        "[Inference]", "MonteCarloReps=999", "PValueReportType=1",
        "[Run Options]", f"NumberParallelProcesses={threads}"]) + "\n")
    return prm


def main():
    run_beside_satscan(__doc__, PROBLEMS, write_problem, OUT, "bench_scan_isotonic.py", "isotonic")


if __name__ == "__main__":
    main()
