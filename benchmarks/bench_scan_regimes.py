"""Scan speed across regimes beside SaTScan 10.3.2, same data, same machine, one run (issue 29, "Speed").

    .venv/bin/python benchmarks/bench_scan_regimes.py --satscan PATH/TO/SaTScan [--threads N] [--quick]
        [--only NAME [NAME ...]] [--replicates R] [--repeat K]

Purely spatial (circles up to 50 % of the population, 999 replicates, L = 5,000 locations uniform
on a 100 x 100 square, min. 2 cases for high-rate clusters):

* ``bernoulli_{few,many}_{rare,common}``: 1-19 (few) or 150-250 (many, about 1M persons) persons per
  location, cases Binomial(persons, 1 % (rare) or 10 % (common));
* ``poisson_{few,many}_{rare,common}``: the same populations, cases Poisson(persons x rate), SaTScan's
  discrete Poisson (one population date, no covariates).

Retrospective space-time (999 replicates, cylinders 1-14 days, circles up to 10 % of the cases /
population): ``spacetime_permutation`` (L = 500 locations, 5,000 cases on 120 days) and
``spacetime_poisson`` (the same locations, populations 1,000-5,000, 5,000 cases on 120 days);
``spacetime_poisson_stratified`` (with ``--only``): the Poisson one adjusted by time-stratified randomization
(SaTScan's ``TimeTrendAdjustmentType=4``).
The space-time scans run twice, with the cylinders' pruned loop and without it
(``CpuSpaceTimeEngine.pruned = False``, the exact day-by-day loop): same maxima, and the two
ratios to SaTScan measured in this one run are the "before" and "after".

Our timings are warm (a warm-up compiles the Numba kernels); a spatial regime's time is the median of
``--repeat`` runs (3; all of them are stored), the space-time ones one run each; SaTScan runs its batch
binary with the same threads, all replicates (``PValueReportType=1``). Top LLRs of both are recorded (they must
agree), and so are SaTScan's compiler flags (``BUILD_FLAGS`` of ``peers/build_satscan.sh``: build it
optimised, as its default ``-O3``, SaTScan's own; an unoptimised build is slower, and a ratio against it
overstates ours). The machine may be shared: the load average is recorded at the start and the end of
every problem; ratios measured side by side in one run are what counts.
Writes benchmarks/results/scan_regimes.json.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hphawkes_py as hp  # noqa: E402
from hphawkes_py.scan import cpu_space_time  # noqa: E402
from _machine import machine_info  # noqa: E402
from bench_scan_satscan import prm_from  # noqa: E402
from bench_scan_spacetime import run_satscan, satscan_build, write_satscan_files  # noqa: E402

OUT = Path(__file__).parent / "results" / "scan_regimes.json"
SPATIAL = [f"{m}_{p}_{r}" for m in ("bernoulli", "poisson") for p in ("few", "many") for r in ("rare", "common")]
SPACE_TIME = ["spacetime_permutation", "spacetime_poisson"]
#: the space-time Poisson regime adjusted by time-stratified randomization (TimeTrendAdjustmentType=4): not
#: in the default run (the stored table's rows), and not in the A/B script (older versions lack it)
STRATIFIED = ["spacetime_poisson_stratified"]


def spatial_data(name, L, seed=0):
    model, persons, rarity = name.split("_")
    rng = np.random.default_rng(seed)
    coords = rng.uniform(0, 100, size=(L, 2))
    pop = rng.integers(1, 20, size=L) if persons == "few" else rng.integers(150, 251, size=L)
    rate = 0.01 if rarity == "rare" else 0.1
    cases = rng.binomial(pop, rate) if model == "bernoulli" else np.minimum(rng.poisson(pop * rate), pop)
    return model, coords, pop, cases


def spatial_call(hp, model, coords, pop, cases):
    """``(fn, data)``: the package ``hp``'s scan of a regime (:func:`spatial_data`) and its positional
    arguments, ``fn(*data, **options)`` (Bernoulli: cases and controls; Poisson: cases and population)."""
    if model == "bernoulli":
        return hp.scan.bernoulli, (coords, cases, pop - cases)
    return hp.scan.poisson, (coords, cases, pop)


def _timed(fn, *a, **kw):
    t0 = time.perf_counter()
    res = fn(*a, **kw)
    return res, time.perf_counter() - t0


def run_spatial(name, work, template, args, common):
    model, coords, pop, cases = spatial_data(name, 1000 if args.quick else 5000)
    L = len(pop)
    ids = [f"L{i}" for i in range(L)]
    (work / f"{name}.geo").write_text("".join(f"{z} {x:.9f} {y:.9f}\n" for z, (x, y) in zip(ids, coords)))
    kw = dict(n_replicates=args.replicates, seed=1, progress=False, backend="cpu", threads=args.threads, min_cases=2)
    if model == "bernoulli":
        (work / f"{name}.cas").write_text("".join(f"{z} {c}\n" for z, c in zip(ids, cases) if c))
        (work / f"{name}.ctl").write_text("".join(f"{z} {c}\n" for z, c in zip(ids, pop - cases) if c))
        prm = prm_from(template, work / f"{name}.prm", CaseFile=f"{name}.cas", ControlFile=f"{name}.ctl",
                       CoordinatesFile=f"{name}.geo", ResultsFile=f"{name}.txt", MonteCarloReps=args.replicates,
                       **common)
    else:
        (work / f"{name}.cas").write_text("".join(f"{z} {c} 2000\n" for z, c in zip(ids, cases) if c))
        (work / f"{name}.pop").write_text("".join(f"{z} 2000 {p}\n" for z, p in zip(ids, pop)))
        prm = prm_from(template, work / f"{name}.prm", CaseFile=f"{name}.cas", ControlFile="",
                       PopulationFile=f"{name}.pop", CoordinatesFile=f"{name}.geo", ModelType=0,
                       PrecisionCaseTimes=1, StartDate="2000/1/1", EndDate="2000/12/31",
                       ResultsFile=f"{name}.txt", MonteCarloReps=args.replicates, **common)
    fn, data = spatial_call(hp, model, coords, pop, cases)
    # warm-up on the same data, so the timed run compiles nothing (the kernels specialise on the
    # count type, which depends on the totals)
    fn(*data, **{**kw, "n_replicates": 9})
    load0 = os.getloadavg()
    # the median of a few runs: this host's speed drifts by up to 1.5x within minutes, and SaTScan's one
    # run of half a minute averages over that drift where one run of ours (a second or two) does not
    runs = [_timed(fn, *data, **kw) for _ in range(args.repeat)]
    res, secs = runs[0][0], float(np.median([t for _, t in runs]))
    sat = run_satscan(args.satscan, prm, args.threads)
    return {"L": L, "persons": int(pop.sum()), "cases": int(cases.sum()), "replicates": args.replicates,
            "seconds": secs, "runs_seconds": [t for _, t in runs],
            "top_llr": float(res.clusters.log_likelihood_ratio.iloc[0]), "satscan": sat,
            "speedup_vs_satscan": sat["seconds"] / secs, "loadavg": [load0, os.getloadavg()]}


def space_time_data(name, quick=False):
    """A space-time regime's data: ``(coords (L, 2), loc (C,), day (C,), pop (L,) or None, T)``, one case
    per entry of ``loc``/``day`` (permutation: uniform; Poisson: locations in proportion to ``pop``)."""
    L, T, C = (200, 60, 2000) if quick else (500, 120, 5000)
    rng = np.random.default_rng(1)
    coords = rng.uniform(0, 100, size=(L, 2))
    if name == "spacetime_permutation":
        return coords, rng.integers(0, L, C), rng.integers(0, T, C), None, T
    pop = rng.integers(1000, 5001, size=L)
    loc = rng.choice(L, C, p=pop / pop.sum())
    return coords, loc, rng.integers(0, T, C), pop, T


def space_time_call(hp, coords, loc, day, pop, T):
    """``(fn, data, kw)``: the package ``hp``'s retrospective scan of a regime (:func:`space_time_data`), its
    positional arguments and its options (circles up to 10 %, 1-14 days), ``fn(*data, **kw, **options)``:
    one row per location and day with cases, and a row without cases for every location (each is a
    circle centre, as in SaTScan's coordinates file)."""
    L = len(coords)
    kw = dict(max_population=0.1, max_temporal=14, study_period=(0, T - 1))
    if pop is None:
        ids = np.r_[loc, np.arange(L)]
        data = (coords[ids], np.r_[np.ones(len(loc), np.int64), np.zeros(L, np.int64)],
                np.r_[day, np.zeros(L, np.int64)])
        return hp.scan.space_time_permutation, data, {**kw, "location_ids": ids}
    cnt = np.zeros((L, T), np.int64)
    np.add.at(cnt, (loc, day), 1)
    z, t = np.nonzero(cnt)
    ids = np.r_[z, np.arange(L)]
    data = (coords[ids], np.r_[cnt[z, t], np.zeros(L, np.int64)], np.r_[t, np.zeros(L, np.int64)])
    return hp.scan.space_time, data, {**kw, "population": pop[ids], "model": "poisson", "location_ids": ids}


def run_space_time(name, work, template, args):
    coords, loc, day, pop, T = space_time_data(name, args.quick)
    L, C = len(coords), len(loc)
    fn, data, kw = space_time_call(hp, coords, loc, day, pop, T)
    kw.update(seed=1, progress=False, backend="cpu", threads=args.threads)
    if name in STRATIFIED:
        kw["time_trend"] = "stratified"
    prm = write_satscan_files(work, coords, loc, day, "2020-01-01", template, max_fraction=0.1, max_days=14,
                              prospective=False)
    subs = {}
    if pop is not None:
        (work / "syn.pop").write_text("".join(f"L{i} 2020/01/01 {p}\n" for i, p in enumerate(pop)))
        subs = dict(ModelType=0, PopulationFile="syn.pop", ControlFile="")
    if name in STRATIFIED:
        subs["TimeTrendAdjustmentType"] = 4
    prm = prm_from(prm, work / f"{name}.prm", ResultsFile=f"{name}.txt", MonteCarloReps=args.replicates, **subs)
    fn(*data, **{**kw, "n_replicates": 9})  # warm-up
    row = {"L": L, "T": T, "C": C, "replicates": args.replicates}
    for pruned in (False, True):
        cpu_space_time.CpuSpaceTimeEngine.pruned = pruned
        load0 = os.getloadavg()
        res, secs = _timed(fn, *data, n_replicates=args.replicates, **kw)
        row["pruned" if pruned else "exact_loop"] = {
            "seconds": secs, "top_llr": float(res.clusters.log_likelihood_ratio.iloc[0]),
            "p_value": float(res.clusters.p_value.iloc[0]), "loadavg": [load0, os.getloadavg()]}
    cpu_space_time.CpuSpaceTimeEngine.pruned = True
    assert row["pruned"]["p_value"] == row["exact_loop"]["p_value"]
    row["satscan"] = sat = run_satscan(args.satscan, prm, args.threads)
    row["speedup_vs_satscan_exact_loop"] = sat["seconds"] / row["exact_loop"]["seconds"]
    row["speedup_vs_satscan"] = sat["seconds"] / row["pruned"]["seconds"]
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--satscan", required=True, help="SaTScan batch binary (built from scanstatistics/satscan)")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--replicates", type=int, default=999)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs of each spatial regime (the median is reported)")
    ap.add_argument("--only", nargs="+", choices=SPATIAL + SPACE_TIME + STRATIFIED, default=SPATIAL + SPACE_TIME)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    out = {"machine": machine_info(args.threads), "threads": args.threads, "loadavg_start": os.getloadavg(),
           "quick": args.quick, "satscan_build": satscan_build(args.satscan), "problems": {}}
    work = Path(tempfile.mkdtemp(prefix="hphawkes-regimes-"))
    for f in hp.datasets.path("scan/satscan_sample_data").iterdir():
        shutil.copy(f, work / f.name)
    common = dict(NumberParallelProcesses=args.threads, PValueReportType=1, LaunchMapViewer="n")
    for name in args.only:
        if name in SPATIAL:
            row = run_spatial(name, work, work / "NHumbersideSpatialBernoulli.prm", args, common)
        else:
            row = run_space_time(name, work, work / "NYCSpaceTimePermutation.prm", args)
        out["problems"][name] = row
        print(name, json.dumps(row, default=str), flush=True)
        out["loadavg_end"] = os.getloadavg()
        args.out.parent.mkdir(exist_ok=True)
        args.out.write_text(json.dumps(out, indent=1, default=str))  # after every problem: partial runs count
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
