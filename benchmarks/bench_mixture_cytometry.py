"""Issue 32 scale benchmark: the HDP mixture on cytometry-shaped data, beside scikit-learn and a FlowSOM-like baseline.

The target size is 10 samples x 1,000,000 events x 14 channels, k = 256, 100 HDP Gibbs sweeps.
``--events`` sets the events per sample (a stated fraction of the target on a small machine);
per-sweep cost is linear in the events, so the full size is extrapolated from the measured
seconds per sweep and per event (and said to be an extrapolation).

Data: 14 channels, 12 populations (shared means, diagonal-dominant covariances, a few
correlated pairs as in compensated fluorescence), each sample drawing its own proportions from
a Dirichlet, and two populations present in only one sample each.

Each method runs in its own process so that its peak resident memory (``ru_maxrss``) is its own:

* ``hdp``: :class:`hphawkes_py.mixture.HDPGaussianMixture` (k components, ``--sweeps`` Gibbs sweeps:
  ``burn_in = sweeps // 2``, ``n_iter = sweeps - burn_in``), per-sample engines (memory
  O(events x p + chunk x k) per sample, no n x k matrix);
* ``sklearn``: scikit-learn's ``BayesianGaussianMixture`` (Dirichlet-process prior, k components,
  full covariances, at most ``--sweeps`` EM iterations) on the pooled events (it has no
  hierarchy across samples);
* ``flowsom``: a FlowSOM-like baseline, MiniSom's 10 x 10 self-organising map (``--som-iter``
  training steps) then a ward hierarchical metaclustering of the 100 codes into 12 clusters
  (FlowSOM's consensus clustering replaced by one ward clustering).

Accuracy: adjusted Rand index of each method's partition against the true populations
(the HDP: components merged by modal merging; scikit-learn: its components).

Usage::

    python benchmarks/bench_mixture_cytometry.py [--events 10000] [--samples 10] [--k 256] [--sweeps 100]

Writes ``benchmarks/results/mixture_cytometry_<samples>x<events>.json`` and ``.md``.
scikit-learn and MiniSom are not dependencies of the package: install them beside it to run the
baselines (a row says ``failed`` when one is missing).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
P, POPS = 14, 12


def make_data(samples, events, seed=0):
    rng = np.random.default_rng(seed)
    mu = rng.uniform(0.0, 6.0, size=(POPS, P))
    cov = np.empty((POPS, P, P))
    for c in range(POPS):
        A = np.diag(rng.uniform(0.25, 0.5, P))
        A[rng.integers(P), rng.integers(P)] += 0.3
        cov[c] = A @ A.T
    chol = np.linalg.cholesky(cov)
    Xs, zs = [], []
    for j in range(samples):
        alpha = np.full(POPS, 5.0)
        alpha[POPS - 2:] = 0.0  # two sample-specific populations
        if j == 0:
            alpha[POPS - 2] = 5.0
        if j == 1 % samples:
            alpha[POPS - 1] = 5.0
        w = np.zeros(POPS)
        w[alpha > 0] = rng.dirichlet(alpha[alpha > 0])
        z = rng.choice(POPS, size=events, p=w)
        X = mu[z] + np.einsum("nij,nj->ni", chol[z], rng.standard_normal((events, P)))
        Xs.append(X)
        zs.append(z)
    return Xs, zs


def ari(a, b):
    """Adjusted Rand index (Hubert & Arabie 1985) from the contingency table."""
    _, a = np.unique(a, return_inverse=True)
    _, b = np.unique(b, return_inverse=True)
    T = np.bincount(a * (b.max() + 1) + b, minlength=(a.max() + 1) * (b.max() + 1)).astype(np.float64)

    def pairs(c):
        return (c * (c - 1) / 2).sum()

    T = T.reshape(a.max() + 1, b.max() + 1)
    sab, sa, sb, n2 = pairs(T), pairs(T.sum(1)), pairs(T.sum(0)), len(a) * (len(a) - 1) / 2
    expected = sa * sb / n2
    return float((sab - expected) / (0.5 * (sa + sb) - expected))


def run_one(method, args):
    Xs, zs = make_data(args.samples, args.events, args.seed)
    truth = np.concatenate(zs)
    out = {"method": method}
    t0 = time.perf_counter()
    if method == "hdp":
        from hphawkes_py.mixture import HDPGaussianMixture

        burn = args.sweeps // 2
        m = HDPGaussianMixture(args.k, n_iter=args.sweeps - burn, burn_in=burn, tune_interval=max(1, burn // 2),
                               seed=args.seed, progress=False, backend=args.backend,
                               max_predictive_draws=10).fit(Xs)
        out["fit_s"] = time.perf_counter() - t0
        labels = np.concatenate([m.component_clusters_[lab] for lab in m.labels_])
        out.update(n_clusters=int(m.n_clusters_), backend=m.backend_, sweeps=args.sweeps,
                   s_per_sweep=out["fit_s"] / args.sweeps)
    elif method == "sklearn":
        from sklearn.mixture import BayesianGaussianMixture

        X = np.concatenate(Xs)
        g = BayesianGaussianMixture(n_components=args.k, weight_concentration_prior_type="dirichlet_process",
                                    covariance_type="full", max_iter=args.sweeps, random_state=args.seed).fit(X)
        out["fit_s"] = time.perf_counter() - t0
        labels = g.predict(X)
        out.update(n_iter=int(g.n_iter_), converged=bool(g.converged_),
                   n_used=int(np.unique(labels).size), s_per_sweep=out["fit_s"] / max(1, g.n_iter_))
    elif method == "flowsom":
        from minisom import MiniSom
        from sklearn.cluster import AgglomerativeClustering

        X = np.concatenate(Xs)
        som = MiniSom(10, 10, P, sigma=1.0, learning_rate=0.5, random_seed=args.seed)
        som.train_random(X, args.som_iter)
        codes = som.get_weights().reshape(-1, P)
        meta = AgglomerativeClustering(n_clusters=POPS, linkage="ward").fit_predict(codes)
        # each event to its best-matching unit, then to that unit's metacluster
        d = ((X[:, None, :] - codes[None, :, :]) ** 2).sum(-1) if X.shape[0] <= 200_000 else None
        bmu = d.argmin(1) if d is not None else np.concatenate(
            [((b[:, None, :] - codes[None]) ** 2).sum(-1).argmin(1) for b in np.array_split(X, 50)])
        labels = meta[bmu]
        out["fit_s"] = time.perf_counter() - t0
    else:
        raise ValueError(method)
    out["ari"] = ari(truth, labels)
    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=10)
    ap.add_argument("--events", type=int, default=10_000, help="events per sample")
    ap.add_argument("--k", type=int, default=256)
    ap.add_argument("--sweeps", type=int, default=100)
    ap.add_argument("--som-iter", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--methods", nargs="+", default=["hdp", "sklearn", "flowsom"])
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, args)))
        return
    sys.path.insert(0, str(HERE))
    from _machine import machine_info

    info = machine_info(threads=os.cpu_count())
    rows = []
    for method in args.methods:
        cmd = [sys.executable, __file__, "--one", method] + [a for a in sys.argv[1:] if a != "--methods"
                                                               and a not in args.methods]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            rows.append({"method": method, "error": res.stderr.strip().splitlines()[-1:]})
        else:
            rows.append(json.loads(res.stdout.strip().splitlines()[-1]))
        print(rows[-1], flush=True)
    hdp = next((r for r in rows if r["method"] == "hdp" and "fit_s" in r), None)
    target_events = 10 * 1_000_000
    n = args.samples * args.events
    result = {
        "benchmark": "mixture_cytometry (issue 32)",
        "data": {"samples": args.samples, "events_per_sample": args.events, "channels": P, "populations": POPS,
                 "k": args.k, "sweeps": args.sweeps, "n_total": n},
        "target": {"samples": 10, "events_per_sample": 1_000_000, "channels": P, "k": 256, "sweeps": 100},
        "machine": info,
        "rows": rows,
    }
    if hdp is not None:
        result["hdp_extrapolated_full_size_s"] = hdp["fit_s"] * target_events / n * 100 / args.sweeps
        for r in rows:
            if "fit_s" in r and r is not hdp:
                r["time_ratio_to_hdp"] = r["fit_s"] / hdp["fit_s"]
    result["machine"]["loadavg_end"] = list(os.getloadavg())
    RESULTS.mkdir(exist_ok=True)
    stem = f"mixture_cytometry_{args.samples}x{args.events}"
    (RESULTS / f"{stem}.json").write_text(json.dumps(result, indent=1))
    lines = [f"# HDP mixture, cytometry scale ({args.samples} samples x {args.events} events x {P} channels, "
             f"k = {args.k}, {args.sweeps} sweeps)", "",
             f"CPU: {info['cpu_model']} ({info['cpus']} cores), load average at start {info['loadavg_start']}", "",
             "| method | fit (s) | s per sweep/iteration | peak RSS (MiB) | ARI vs truth | notes |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['method']} | - | - | - | - | failed: {r['error']} |")
            continue
        note = {"hdp": f"{r.get('n_clusters')} clusters by modal merging",
                "sklearn": f"{r.get('n_iter')} EM iterations, converged={r.get('converged')}, "
                           f"{r.get('n_used')} components used",
                "flowsom": "MiniSom 10x10 + ward metaclustering into 12"}.get(r["method"], "")
        if "time_ratio_to_hdp" in r:
            note += f"; time / HDP = {r['time_ratio_to_hdp']:.2f}"
        sps = f"{r['s_per_sweep']:.3g}" if "s_per_sweep" in r else "-"
        lines.append(f"| {r['method']} | {r['fit_s']:.1f} | {sps} | {r['peak_rss_mib']:.0f} | {r['ari']:.3f} | {note} |")
    if hdp is not None and (n, args.sweeps, args.k) == (target_events, 100, 256):
        lines += ["", f"This is the full size (10 x 1M x 14, k = 256, 100 sweeps), measured: {hdp['fit_s'] / 60:.1f} min "
                      "for the HDP fit on this machine."]
    elif hdp is not None:
        lines += ["", f"Full size (10 x 1M x 14, k = 256, 100 sweeps) extrapolated linearly in events from this run: "
                      f"{result['hdp_extrapolated_full_size_s'] / 3600:.1f} h on this machine (not measured)."]
    (RESULTS / f"{stem}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
