"""Benchmark of the TDP Gaussian mixture (Suchard et al. 2010, Table 1 setting).

100 blocked-Gibbs sweeps with p = 14, k = 256 on simulated data for n = 10^4, 10^5, 10^6,
Bayesian EM iterations, the two CPU formulations of the hot step, and a demo fit on the
12-marker FACSDiva flow-cytometry file.  Prints a table and writes
benchmarks/results/mixture.json.

Paper (2010 hardware, n = 10^5, 100 iterations): 1,907 s on one CPU core, 386 s on 8 cores,
20.4 s on a GTX 285.  Target here: n = 10^5 in under 60 s on 2 cores.

Usage::

    python benchmarks/bench_mixture.py                      # everything (long: n = 10^6)
    python benchmarks/bench_mixture.py --n 10000 100000     # chosen sizes
    python benchmarks/bench_mixture.py --iters-1e6 10       # fewer sweeps at n = 10^6
    python benchmarks/bench_mixture.py --skip-flow --skip-kernels
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import platform
import resource
import time
from pathlib import Path

import numpy as np

import hphawkes_py as hp
from hphawkes_py.mixture import TDPGaussianMixture
from hphawkes_py.mixture import _math as M
from hphawkes_py.mixture.cpu import CpuEngine
from hphawkes_py.mixture.cpu_features import _triangular_logdens, features
from hphawkes_py.mixture.engine import build_coefficients

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _machine import machine_info  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "mixture.json"


def simulate(n, p=14, n_true=12, seed=0):
    """n points from a random n_true-component normal mixture in p dimensions."""
    rng = np.random.default_rng(seed)
    w = rng.dirichlet(np.full(n_true, 2.0))
    means = rng.normal(scale=4.0, size=(n_true, p))
    A = rng.normal(scale=0.5, size=(n_true, p, p))
    covs = A @ np.swapaxes(A, 1, 2) + 0.3 * np.eye(p)
    z = rng.choice(n_true, size=n, p=w)
    L = np.linalg.cholesky(covs)
    X = rng.standard_normal((n, p))
    for j in range(n_true):  # per component: no (n, p, p) temporary
        sel = z == j
        X[sel] = means[j] + X[sel] @ L[j].T
    return X


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def loadavg():
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def bench_gibbs(n, iters, k=256, p=14, threads=None, dtype=np.float64):
    X = simulate(n, p)
    m = TDPGaussianMixture(k, n_iter=iters, burn_in=0, seed=1, progress=False, backend="cpu", threads=threads,
                           relabel=False, dtype=dtype)
    # warm-up (Numba compilation is cached on disk; this also loads it)
    TDPGaussianMixture(k, n_iter=1, burn_in=0, seed=1, progress=False, backend="cpu", dtype=dtype).fit(X[:2000])
    la0 = loadavg()
    c0 = time.process_time()
    t = time.perf_counter()
    m.fit(X)
    sec = time.perf_counter() - t
    cpu = time.process_time() - c0
    return {"method": "gibbs", "dtype": np.dtype(dtype).name, "n": n, "p": p, "k": k, "iterations": iters,
            "seconds": sec, "cpu_seconds": cpu,
            "seconds_per_100": sec * 100.0 / iters, "occupied_components": int((m.weights_ > 1e-3).sum()),
            "peak_rss_mb": peak_rss_mb(), "load_before": la0, "load_after": loadavg()}


def bench_bem(n, iters, k=256, p=14, threads=None):
    X = simulate(n, p)
    m = TDPGaussianMixture(k, method="bem", n_iter=iters, tol=0.0, seed=1, progress=False, backend="cpu",
                           threads=threads)
    la0 = loadavg()
    c0 = time.process_time()
    t = time.perf_counter()
    m.fit(X)
    sec = time.perf_counter() - t
    cpu = time.process_time() - c0
    return {"method": "bem", "n": n, "p": p, "k": k, "iterations": m.n_iter_, "seconds": sec, "cpu_seconds": cpu,
            "seconds_per_100": sec * 100.0 / m.n_iter_, "peak_rss_mb": peak_rss_mb(),
            "load_before": la0, "load_after": loadavg()}


def bench_kernels(n=100_000, k=256, p=14, reps=3):
    """One sweep's densities on ONE thread: quadratic-feature GEMM (used) vs fused Numba triangular solve."""
    import numba

    from hphawkes_py.mixture._blas import single_threaded_blas

    rng = np.random.default_rng(0)
    X = simulate(n, p)
    X = (X - X.mean(0)) / X.std(0)
    mu = X[rng.choice(n, k)]
    Sigma = np.tile(np.eye(p), (k, 1, 1)) * 0.5
    L, U, logdet = M.chol_factors(Sigma)
    lw = np.full(k, -np.log(k))
    eng = CpuEngine(X)
    eng.set_components(lw, mu, U, logdet)
    u = rng.random(n)
    eng.sample_labels(u)
    t = time.perf_counter()
    for _ in range(reps):
        eng.sample_labels(u)
    t_sample = (time.perf_counter() - t) / reps
    W = build_coefficients(lw, mu, U, logdet)
    chunk = 1024
    phi = features(X[:chunk])
    D = np.empty((chunk, k))
    with single_threaded_blas():
        t = time.perf_counter()
        for _ in range(reps):
            for lo in range(0, n, chunk):
                np.matmul(phi, W, out=D)
        t_gemm = (time.perf_counter() - t) / reps
    b = np.einsum("jab,jb->ja", U, mu)
    c0 = lw - 0.5 * p * np.log(2 * np.pi) - 0.5 * logdet
    out = np.empty((chunk, k))
    _triangular_logdens(X[:chunk], U, b, c0, out)
    prev = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        t = time.perf_counter()
        for _ in range(reps):
            for lo in range(0, n, chunk):
                _triangular_logdens(X[lo:lo + chunk], U, b, c0, out[: min(chunk, n - lo)])
        t_tri = (time.perf_counter() - t) / reps
    finally:
        numba.set_num_threads(prev)
    return {"n": n, "k": k, "p": p, "sweep_sample_labels_s": t_sample, "densities_gemm_1thread_s": t_gemm,
            "densities_fused_triangular_1thread_s": t_tri, "load": loadavg()}


def bench_flow(k=256, iters=100):
    df = hp.datasets.load_flow_cytometry("facsdiva")
    df = df.drop(columns=["Time"])
    fluor = [c for c in df.columns if c not in ("FSC-A", "FSC-W", "SSC-A")]
    X = df.copy()
    X[fluor] = np.arcsinh(X[fluor] / 150.0)
    out = {}
    for method, n_iter in (("gibbs", iters), ("bem", 200)):
        m = TDPGaussianMixture(k, method=method, n_iter=n_iter, burn_in=0, seed=3, progress=False, backend="cpu")
        t = time.perf_counter()
        m.fit(X)
        sec = time.perf_counter() - t
        w = np.sort(m.weights_)[::-1]
        out[method] = {"n": len(X), "p": X.shape[1], "k": k, "iterations": m.n_iter_, "seconds": sec,
                       "components_weight_gt_1pct": int((w > 0.01).sum()),
                       "components_weight_gt_0.1pct": int((w > 0.001).sum()),
                       "top_weights": [round(float(x), 4) for x in w[:10]],
                       "alpha": m.alpha_, "final_loglik": float(m.loglik_trace_[-1]),
                       "converged": m.converged_}
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, nargs="*", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--iters-1e6", type=int, default=100)
    ap.add_argument("--bem-iters", type=int, default=20)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--dtype", choices=("float64", "float32"), default="float64",
                    help="precision of the Gibbs hot step (float32: single-precision GEMM and exp)")
    ap.add_argument("--skip-flow", action="store_true")
    ap.add_argument("--skip-kernels", action="store_true")
    ap.add_argument("--skip-bem", action="store_true")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    res = {"machine": machine_info(),
           "note": "2 cores shared with other jobs while measuring: timings are noisy (load averages recorded)",
           "paper_n1e5_100_iter_s": {"cpu_1_core": 1907, "cpu_8_cores": 386, "gtx285": 20.4},
           "gibbs": [], "bem": []}
    if args.out.exists():
        try:
            old = json.loads(args.out.read_text())
            res.update({k: v for k, v in old.items() if k in ("kernels", "flow_cytometry")})
            res["gibbs"] = [r for r in old.get("gibbs", [])
                            if r["n"] not in args.n or r.get("dtype", "float64") != args.dtype]
            res["bem"] = [r for r in old.get("bem", []) if args.skip_bem or r["n"] not in args.n]
        except Exception:
            pass
    for n in args.n:
        iters = args.iters_1e6 if n >= 1_000_000 else args.iters
        r = bench_gibbs(n, iters, threads=args.threads, dtype=np.dtype(args.dtype))
        print(f"gibbs n={n:>8} k=256 p=14 iters={iters:>4}: {r['seconds']:8.1f} s  "
              f"({r['seconds_per_100']:.1f} s per 100; CPU time {r['cpu_seconds']:.1f} s)  peak RSS {r['peak_rss_mb']:.0f} MB  load {r['load_before']}", flush=True)
        res["gibbs"].append(r)
        if not args.skip_bem:
            b = bench_bem(n, args.bem_iters, threads=args.threads)
            print(f"bem   n={n:>8} k=256 p=14 iters={b['iterations']:>4}: {b['seconds']:8.1f} s  "
                  f"({b['seconds_per_100']:.1f} s per 100; CPU time {b['cpu_seconds']:.1f} s)", flush=True)
            res["bem"].append(b)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(res, indent=2))
    if not args.skip_kernels:
        kr = bench_kernels()
        print(f"hot step n=1e5: full label sweep (all threads) {kr['sweep_sample_labels_s']:.2f} s; densities on 1 thread: "
              f"GEMM {kr['densities_gemm_1thread_s']:.2f} s vs fused triangular {kr['densities_fused_triangular_1thread_s']:.2f} s",
              flush=True)
        res["kernels"] = kr
        args.out.write_text(json.dumps(res, indent=2))
    if not args.skip_flow:
        fr = bench_flow()
        for meth, r in fr.items():
            print(f"flow cytometry facsdiva {meth}: n={r['n']} p={r['p']} k=256 iters={r['iterations']} "
                  f"{r['seconds']:.1f} s; components >1%: {r['components_weight_gt_1pct']}; top weights {r['top_weights'][:6]}",
                  flush=True)
        res["flow_cytometry"] = fr
        args.out.write_text(json.dumps(res, indent=2))
    return res


if __name__ == "__main__":
    main()
