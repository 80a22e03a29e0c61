"""One blocked-Gibbs sweep of the TDP mixture taken apart: seconds per step, host and device.

    python benchmarks/profile_mixture_sweep.py [--backend gpu] [--n 100000] [--sweeps 20]

Each device step is followed by a synchronisation so that its time is its own.
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_mixture import simulate  # noqa: E402

from hphawkes_py.mixture import _math as M  # noqa: E402
from hphawkes_py.mixture.engine import make_engine  # noqa: E402
from hphawkes_py.mixture._math import GibbsState  # noqa: E402
from hphawkes_py.mixture.initial_values import initial_state  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="gpu")
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--k", type=int, default=256)
    ap.add_argument("--sweeps", type=int, default=20)
    ap.add_argument("--dtype", default="float64")
    args = ap.parse_args(argv)
    X = simulate(args.n, 14)
    Xs = (X - X.mean(0)) / X.std(0)
    eng = make_engine(Xs, backend=args.backend, dtype=args.dtype)
    sync = getattr(getattr(eng, "dev", None), "synchronize", lambda: None)
    rng = np.random.default_rng(1)
    p = Xs.shape[1]
    state = initial_state(Xs, args.k, rng, "kmeans++")
    t = defaultdict(float)

    def step(name, fn):
        t0 = time.perf_counter()
        out = fn()
        sync()
        t[name] += time.perf_counter() - t0
        return out

    for s in range(args.sweeps + 1):
        if s == 1:
            t.clear()
        L, U, logdet = step("host chol_factors", lambda: M.chol_factors(state.Sigma))
        step("set_components", lambda: eng.set_components(state.log_w, state.mu, U, logdet))
        u = step("host uniforms", lambda: rng.random(eng.n))
        step("sample_labels", lambda: eng.sample_labels(u))
        T = step("label_stats", lambda: eng.label_stats())
        N, S1, S2 = step("host unpack_stats", lambda: M.unpack_stats(T, p))
        v, log_w = step("host sticks", lambda: M.gibbs_sticks(rng, N, state.alpha))
        alpha = step("host alpha", lambda: M.gibbs_alpha(rng, v, args.k, 1.0, 1.0))
        mu, Sigma = step("host mu_sigma", lambda: M.gibbs_mu_sigma(rng, N, S1, S2, L, np.zeros(p), 1.0, 1.0,
                                                                       np.eye(p)))
        state = GibbsState(mu, Sigma, log_w, alpha, N, eng.loglik)
    tot = sum(t.values())
    print(f"backend={args.backend} n={args.n} k={args.k}: {tot / args.sweeps * 1e3:.2f} ms per sweep")
    for name, sec in sorted(t.items(), key=lambda kv: -kv[1]):
        print(f"  {name:20s} {sec / args.sweeps * 1e3:8.3f} ms  {100 * sec / tot:5.1f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
