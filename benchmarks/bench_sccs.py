"""Benchmark of hp.sccs: simulate(), one Laplace MAP fit, and 10-fold x 10-variance CV.

Each stage runs in its own subprocess so that its peak resident memory (ru_maxrss) is its own:

1. ``simulate``: hp.sccs.simulate(n_cases, n_drugs) -> wall time, peak RSS; data saved to a
   temporary .npz (uncompressed) for the next stages.
2. ``fit``: load the data, warm the Numba cache on a tiny problem, then
   hp.sccs.fit(prior="laplace", variance=V) -> wall time, CCD cycles, time per cycle,
   converged, peak RSS (data + engine), for each requested thread count.
3. ``cv``: hp.sccs.cross_validate(folds=10, grid="auto" (Cyclops' unimodal search, default)
   or the 10-variance grid). With ``--cv-cases`` equal to ``--n-cases`` (the default) it runs
   on the same data as the fit: measured at full size, not extrapolated. A smaller
   ``--cv-cases`` simulates a smaller problem and also reports a linear-in-nnz extrapolation.

Usage:
    python benchmarks/bench_sccs.py                       # 1,000,000 cases, 1,000 drugs; CV at full size
    python benchmarks/bench_sccs.py --n-cases 100000 --cv-cases 20000   # quick

Writes benchmarks/results/sccs.json and prints a table. The machine is shared (2 cores):
timings are noisy; the load average and a calibration time (10 x a*3+1 on 3M int64, about
0.05 s on an idle core) are recorded at each stage to show how loaded the machine was.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _machine import machine_info  # noqa: E402

FIELDS = ("stratum_ids", "row_ids", "covariate_ids", "stratum_ptr", "row_stratum", "y", "time", "n_events",
          "col_ptr", "row_idx")


def _rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6  # Linux: KiB -> GB (1e6 KiB ~ 1 GB)


def _save(data, path):
    import numpy as np

    arrays = {f: getattr(data, f) for f in FIELDS}
    np.savez(path, **arrays)


def _load(path):
    import numpy as np

    from hphawkes_py.sccs import SCCSData

    z = np.load(path)
    return SCCSData(**{f: z[f] for f in FIELDS}, values=None, dropped={})


def calibration() -> float:
    """Seconds for 10 x (3M int64 a*3+1): about 0.05 s on an idle core; shows how loaded the machine is."""
    import numpy as np

    a = np.arange(3_000_000)
    t = time.perf_counter()
    for _ in range(10):
        a * 3 + 1
    return time.perf_counter() - t


def stage_simulate(args):
    import hphawkes_py as hp

    t = time.perf_counter()
    data, truth = hp.sccs.simulate(n_cases=args.n_cases, n_drugs=args.n_drugs, seed=args.seed)
    el = time.perf_counter() - t
    _save(data, args.path)
    truth.to_csv(args.path + ".truth.csv")
    return {"seconds": el, "peak_rss_gb": _rss_gb(), "n_strata": data.n_strata, "n_rows": data.n_rows,
            "nnz": data.nnz, "n_covariates": data.n_covariates, "events": int(data.n_events.sum()),
            "data_gb": data.nbytes / 1e9, "load_avg": os.getloadavg()[0], "calibration_s": calibration()}


def stage_fit(args):
    import numpy as np

    import hphawkes_py as hp

    warm, _ = hp.sccs.simulate(n_cases=200, n_drugs=5, seed=0)
    for th in args.threads:
        hp.sccs.fit(warm, prior="laplace", variance=args.variance, backend="cpu", threads=th, progress=False)  # compile / load cache
    data = _load(args.path)
    base = _rss_gb()
    out = {"data_rss_gb": base, "runs": []}
    import pandas as pd

    truth = pd.read_csv(args.path + ".truth.csv", index_col=0).iloc[:, 0]
    runs = [(th, rep, args.tolerances[0]) for th in args.threads for rep in range(args.repeat)]
    runs += [(args.threads[0], 0, tol) for tol in args.tolerances[1:]]
    for th, rep, tol in runs:
        if True:
            t = time.perf_counter()
            f = hp.sccs.fit(data, prior="laplace", variance=args.variance, tolerance=tol, backend="cpu", threads=th,
                            progress=False)
            el = time.perf_counter() - t
            b = f.coefficients.to_numpy()
            out["runs"].append({
                "threads": th, "repeat": rep, "tolerance": tol, "seconds": el, "iterations": f.iterations,
                "seconds_per_cycle": el / f.iterations, "converged": f.converged, "stopped_by": f.stopped_by,
                "nonzero": int((b != 0).sum()), "rmse_vs_truth": float(np.sqrt(np.mean((b - truth.to_numpy()) ** 2))),
                "load_avg": os.getloadavg()[0], "calibration_s": calibration(),
            })
    out["peak_rss_gb"] = _rss_gb()
    return out


def stage_cv(args):
    import hphawkes_py as hp

    if args.cv_cases == args.n_cases:
        data = _load(args.path)
    else:
        data, _ = hp.sccs.simulate(n_cases=args.cv_cases, n_drugs=args.n_drugs, seed=args.seed + 1)
    warm, _ = hp.sccs.simulate(n_cases=200, n_drugs=5, seed=0)
    grid = "auto" if args.cv_grid == "auto" else None
    hp.sccs.cross_validate(warm, folds=2, grid=grid, backend="cpu", threads=args.threads[-1], progress=False)
    t = time.perf_counter()
    cv = hp.sccs.cross_validate(data, prior="laplace", folds=10, grid=grid, seed=1, backend="cpu",
                                threads=args.threads[-1], progress=False)
    el = time.perf_counter() - t
    return {"n_cases": int(data.n_strata), "nnz": data.nnz, "grid_kind": args.cv_grid, "threads": args.threads[-1],
            "seconds": el, "chosen_variance": cv.variance,
            "grid": list(map(float, cv.grid)), "scores_mean": list(map(float, cv.scores["mean"])),
            "refit_iterations": cv.fit.iterations, "peak_rss_gb": _rss_gb(), "load_avg": os.getloadavg()[0],
            "calibration_s": calibration()}


def _run_stage(stage, args, path):
    cmd = [sys.executable, __file__, "--stage", stage, "--path", path,
           "--n-cases", str(args.n_cases), "--n-drugs", str(args.n_drugs), "--cv-cases", str(args.cv_cases),
           "--variance", str(args.variance), "--cv-grid", args.cv_grid, "--seed", str(args.seed), "--repeat", str(args.repeat),
           "--threads", ",".join(map(str, args.threads)), "--tolerances", ",".join(map(repr, args.tolerances))]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"stage {stage} failed:\n{res.stderr}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n-cases", type=int, default=1_000_000)
    p.add_argument("--n-drugs", type=int, default=1000)
    p.add_argument("--cv-cases", type=int, default=None, help="default: --n-cases (measured at full size)")
    p.add_argument("--cv-grid", choices=("auto", "grid"), default="auto")
    p.add_argument("--variance", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=2013)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--threads", type=lambda s: [int(v) for v in s.split(",")], default=[1, 2])
    p.add_argument("--tolerances", type=lambda s: [float(v) for v in s.split(",")], default=[1e-6, 1e-8, 1e-10],
                   help="first: the timed runs (API default 1e-6); others: one extra fit each (cycles to convergence)")
    p.add_argument("--skip-cv", action="store_true")
    p.add_argument("--stage", default=None, help=argparse.SUPPRESS)
    p.add_argument("--path", default=None, help=argparse.SUPPRESS)
    p.add_argument("--out", default=str(Path(__file__).parent / "results" / "sccs.json"))
    args = p.parse_args()
    if args.cv_cases is None:
        args.cv_cases = args.n_cases
    if args.stage:
        fn = {"simulate": stage_simulate, "fit": stage_fit, "cv": stage_cv}[args.stage]
        print(json.dumps(fn(args)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "sccs.npz")
        sim = _run_stage("simulate", args, path)
        print(f"simulate: {sim['seconds']:.1f} s, peak RSS {sim['peak_rss_gb']:.2f} GB, {sim['n_strata']} strata, "
              f"{sim['n_rows']} rows, nnz {sim['nnz']}, data {sim['data_gb']:.2f} GB", flush=True)
        fit = _run_stage("fit", args, path)
        cv = None if args.skip_cv else _run_stage("cv", args, path)
    print("fit (Laplace, variance %g):" % args.variance)
    print(f"{'threads':>7} {'tol':>6} {'seconds':>8} {'cycles':>6} {'s/cycle':>8} {'conv':>5} {'nonzero':>7} {'load':>5} {'calib':>6}")
    for r in fit["runs"]:
        print(f"{r['threads']:>7} {r['tolerance']:>6.0e} {r['seconds']:>8.2f} {r['iterations']:>6} {r['seconds_per_cycle']:>8.3f} "
              f"{str(r['converged']):>5} {r['nonzero']:>7} {r['load_avg']:>5.1f} {r['calibration_s']:>6.2f}")
    print(f"fit process peak RSS {fit['peak_rss_gb']:.2f} GB (data loaded: {fit['data_rss_gb']:.2f} GB)")
    if cv is not None:
        print(f"10-fold CV ({cv['grid_kind']}: {len(cv['grid'])} variances) at {cv['n_cases']} cases (nnz {cv['nnz']}), "
              f"{cv['threads']} thread(s): {cv['seconds']:.1f} s measured, chose variance {cv['chosen_variance']:.4g}")
        if cv["nnz"] != sim["nnz"]:
            cv["extrapolated_full_seconds"] = cv["seconds"] * sim["nnz"] / cv["nnz"]
            print(f"  extrapolated to nnz {sim['nnz']}: {cv['extrapolated_full_seconds']:.0f} s")
    result = {
        "command": " ".join([Path(sys.executable).name] + sys.argv),
        "machine": {**machine_info(), "note": "see load_avg and calibration_s for how loaded the machine was"},
        "n_cases": args.n_cases, "n_drugs": args.n_drugs, "variance": args.variance,
        "simulate": sim, "fit": fit, "cv": cv,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
