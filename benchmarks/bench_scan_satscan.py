"""Purely spatial Bernoulli and discrete Poisson scans beside SaTScan, same data, same machine, one run.

    .venv/bin/python benchmarks/bench_scan_satscan.py --satscan PATH/TO/SaTScan [--threads N] [--quick]

* Bernoulli, synthetic: L locations uniform on a 100 x 100 square, 1-19 persons each, 10 % cases,
  circles up to 50 % of the population, 999 replicates (L = 5,000 is issue 12's benchmark);
* discrete Poisson, New York leukaemia (SaTScan's ny_leukemia.cas/.pop/.geo, 281 tracts, Cartesian),
  circles up to 50 % of the population, 9,999 replicates.
SaTScan runs its batch binary with the same threads (``NumberParallelProcesses``), all replicates
(``PValueReportType=1``, no early stop) and the same minimum of 2 cases for high-rate clusters; ours
runs ``hp.scan.bernoulli``/``hp.scan.poisson`` after a warm-up that compiles the Numba kernels.
Wall-clock seconds, the top LLR of both (they must agree), and SaTScan / ours. The load average is
recorded. Writes benchmarks/results/scan_satscan.json.
"""
from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
import re
import shutil
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

import hphawkes_py as hp
from bench_scan_spacetime import run_satscan

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _machine import machine_info  # noqa: E402

OUT = Path(__file__).parent / "results" / "scan_satscan.json"


def prm_from(template: Path, dest: Path, **subs) -> Path:
    text = template.read_text()
    for k, v in subs.items():
        text, n = re.subn(rf"(?m)^{k}=.*$", f"{k}={v}", text)
        if n != 1:
            raise KeyError(k)
    dest.write_text(text)
    return dest


def min_cases_kw(fn) -> dict:
    return {"min_cases": 2} if "min_cases" in inspect.signature(fn).parameters else {}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--satscan", required=True, help="SaTScan batch binary (built from scanstatistics/satscan)")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    out = {"machine": machine_info(args.threads), "threads": args.threads, "backend": args.backend, "loadavg_start": os.getloadavg(), "problems": {}}
    work = Path(tempfile.mkdtemp(prefix="hphawkes-satscan-"))
    for f in hp.datasets.path("scan/satscan_sample_data").iterdir():
        shutil.copy(f, work / f.name)
    template = work / "NHumbersideSpatialBernoulli.prm"
    common = dict(NumberParallelProcesses=args.threads, PValueReportType=1, LaunchMapViewer="n")

    # ---- Bernoulli, synthetic
    L = 1000 if args.quick else 5000
    rng = np.random.default_rng(0)
    coords = rng.uniform(0, 100, size=(L, 2))
    pop = rng.integers(1, 20, size=L)
    cases = rng.binomial(pop, 0.1)
    controls = pop - cases
    (work / "syn.geo").write_text("".join(f"L{i} {x:.9f} {y:.9f}\n" for i, (x, y) in enumerate(coords)))
    (work / "syn.cas").write_text("".join(f"L{i} {c}\n" for i, c in enumerate(cases) if c))
    (work / "syn.ctl").write_text("".join(f"L{i} {c}\n" for i, c in enumerate(controls) if c))
    prm = prm_from(template, work / "syn_bernoulli.prm", CaseFile="syn.cas", ControlFile="syn.ctl",
                   CoordinatesFile="syn.geo", ResultsFile="syn_bernoulli.txt", MonteCarloReps=999, **common)
    kw = dict(n_replicates=999, seed=1, progress=False, backend=args.backend, threads=args.threads,
              **min_cases_kw(hp.scan.bernoulli))
    hp.scan.bernoulli(coords[:200], cases[:200], controls[:200], **{**kw, "n_replicates": 9})  # warm-up
    t0 = time.perf_counter()
    res = hp.scan.bernoulli(coords, cases, controls, **kw)
    secs = time.perf_counter() - t0
    sat = run_satscan(args.satscan, prm, args.threads)
    row = {"L": L, "replicates": 999, "seconds": secs, "top_llr": float(res.clusters.log_likelihood_ratio.iloc[0]),
           "satscan": sat, "speedup_vs_satscan": sat["seconds"] / secs}
    out["problems"]["bernoulli_synthetic"] = row
    print("bernoulli", json.dumps(row, default=str), flush=True)

    # ---- discrete Poisson, NY leukaemia
    R = 999 if args.quick else 9999
    prm = prm_from(template, work / "ny_poisson.prm", CaseFile="ny_leukemia.cas", ControlFile="",
                   PopulationFile="ny_leukemia.pop", CoordinatesFile="ny_leukemia.geo", ModelType=0,
                   PrecisionCaseTimes=1, StartDate="2000/1/1", EndDate="2000/12/31",
                   ResultsFile="ny_poisson.txt", MonteCarloReps=R, **common)
    tab = hp.scan.read_satscan(work / "ny_leukemia.cas", None, work / "ny_leukemia.pop", work / "ny_leukemia.geo",
                               model="poisson")
    kw = dict(n_replicates=R, seed=1, progress=False, backend=args.backend, threads=args.threads,
              location_ids=tab.location_id.to_numpy(), **min_cases_kw(hp.scan.poisson))
    xy, c, p = tab[["x", "y"]].to_numpy(), tab.cases.to_numpy(), tab.population.to_numpy()
    hp.scan.poisson(xy, c, p, **{**kw, "n_replicates": 9})  # warm-up
    t0 = time.perf_counter()
    res = hp.scan.poisson(xy, c, p, **kw)
    secs = time.perf_counter() - t0
    sat = run_satscan(args.satscan, prm, args.threads)
    row = {"replicates": R, "seconds": secs, "top_llr": float(res.clusters.log_likelihood_ratio.iloc[0]),
           "satscan": sat, "speedup_vs_satscan": sat["seconds"] / secs}
    out["problems"]["poisson_ny"] = row
    print("poisson", json.dumps(row, default=str), flush=True)
    out["loadavg_end"] = os.getloadavg()
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(out, indent=1, default=str))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
