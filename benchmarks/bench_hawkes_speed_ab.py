"""A/B of the MCMC sweep on the DC gunshot data: this tree against an earlier commit, in one process.

Usage::

    .venv/bin/python benchmarks/bench_hawkes_speed_ab.py --base 19bb3a0 [--sweeps 200] [--rounds 4]

The earlier commit's ``hphawkes_py`` is extracted (``git archive``) into a temporary folder as the
package ``hphawkes_base`` (its imports are relative), so both versions run in the same process,
alternating, on the same data: a chain of ``--sweeps`` sweeps (one thread, started at the posterior
mean, as ``reproduce dc-gunshots`` starts at the mode) minus a 20-sweep chain, so the one-off set-up
cancels. Prints per-sweep wall and CPU milliseconds (min and median over rounds), their ratios, a hash
of each version's draws (equal hashes: the same chain) and the load average. On a shared machine only
the ratio means something.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
INIT = {"mu0": 0.849, "theta": 0.153, "omega": 59.4, "h": 0.0696}  # the DC posterior mean (quick run)


def _extract(commit: str, dest: Path) -> None:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "hphawkes_py"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    (dest / "hphawkes_py").rename(dest / "hphawkes_base")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, help="the earlier commit")
    ap.add_argument("--sweeps", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=4)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="hawkes_ab_"))
    _extract(a.base, tmp)
    sys.path.insert(0, str(tmp))
    import hphawkes_base as base  # noqa: E402
    import hphawkes_py as new  # noqa: E402
    from hphawkes_py.datasets import load_dc_gunshots  # noqa: E402

    df = load_dc_gunshots("no_holidays")
    x = df[["x_km", "y_km"]].to_numpy()
    t = df["t_hours"].to_numpy()
    kw = dict(sample=("h", "omega", "theta", "mu0"), fixed={"tau_x": 1.6, "tau_t": 336.0}, init=INIT, seed=1,
              progress=False, backend="cpu", threads=1)

    def run(mod, n):
        t0, c0 = time.perf_counter(), time.process_time()
        post = mod.hawkes.mcmc(x, t, n_iter=n, burn_in=n // 2, chains=1, **kw)
        return time.perf_counter() - t0, time.process_time() - c0, post

    for mod in (base, new):
        run(mod, 5)  # compile / load the Numba caches
    res = {"base": [], "new": []}
    digest = {}
    load0 = os.getloadavg()
    for _ in range(a.rounds):
        for name, mod in (("base", base), ("new", new)):
            short, long = run(mod, 20), run(mod, 20 + a.sweeps)
            res[name].append(((long[0] - short[0]) / a.sweeps * 1e3, (long[1] - short[1]) / a.sweeps * 1e3))
            draws = np.concatenate([long[2].draws[k].ravel() for k in ("h", "omega", "theta", "mu0")])
            digest[name] = hashlib.sha1(draws.tobytes()).hexdigest()[:12]
    out = {"base_commit": a.base}
    for name, v in res.items():
        w = np.array(v)
        out[name] = {"wall_ms_min": float(w[:, 0].min()), "wall_ms_median": float(np.median(w[:, 0])),
                     "cpu_ms_min": float(w[:, 1].min()), "cpu_ms_median": float(np.median(w[:, 1]))}
    out["cpu_ratio_median"] = out["base"]["cpu_ms_median"] / out["new"]["cpu_ms_median"]
    out["wall_ratio_median"] = out["base"]["wall_ms_median"] / out["new"]["wall_ms_median"]
    out["same_draws"] = digest["base"] == digest["new"]
    out["draws_sha1"] = digest
    out["loadavg_start_end"] = [load0, os.getloadavg()]
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
