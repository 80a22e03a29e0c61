"""The windowed trigger pass with the space-time cut against the time cut alone, on the DC data.

Usage::

    .venv/bin/python benchmarks/bench_hawkes_cut.py [--repeat 200] [--sweeps 1000]

On the bundled no-holiday DC data (54,582 events, tau_x = 1.6 km, tau_t = 336 h fixed), CPU engine, one
thread (as each chain of ``reproduce dc-gunshots`` runs), at the posterior mean:

* pairs in the trigger pass's pair list, and the time per trigger pass (an ``h`` move's sums), with the
  space-time cut (``windows.trigger_limit``, the default) and with the time cut Delta_G alone (the cut
  disabled by patching the engine's limit to inf, which is the earlier algorithm);
* an adaptive-MH chain of ``--sweeps`` sweeps with each, from the same seed: wall time, and the largest
  difference between the two chains' draws (both are within the windows' 1e-13 bound of the exact
  likelihood, so the draws agree unless an accept decision falls within that margin);
* the exact likelihood's sum of logs against both, as the accuracy check.

Both variants run in the same process, alternating, so the ratio is comparable on a loaded machine; the
load average is recorded. Writes ``benchmarks/results/hawkes_spacetime_cut.json``.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

from hphawkes_py.datasets import load_dc_gunshots
from hphawkes_py.hawkes import engine as engine_mod
from hphawkes_py.hawkes import mcmc
from hphawkes_py.hawkes.engine import make_engine

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _machine import machine_info  # noqa: E402

POST = {"mu0": 0.849, "theta": 0.153, "omega": 59.4, "h": 0.0696}  # the DC posterior mean
TAU = (1.6, 336.0)


@contextlib.contextmanager
def time_cut_only():
    """Disable the space-time cut: every engine made inside uses the time cut alone."""
    orig = engine_mod.Engine._limit_g
    engine_mod.Engine._limit_g = lambda self, h, rates, rho, own=None: math.inf
    try:
        yield
    finally:
        engine_mod.Engine._limit_g = orig


def _engine(x, t):
    e = make_engine(x, t, backend="cpu", threads=1)
    e.set_background(*TAU)
    e.set_trigger(POST["h"], POST["omega"], slot=0)
    return e


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=200)
    ap.add_argument("--sweeps", type=int, default=1000)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "hawkes_spacetime_cut.json"))
    a = ap.parse_args(argv)
    df = load_dc_gunshots("no_holidays")
    x = df[["x_km", "y_km"]].to_numpy()
    t = df["t_hours"].to_numpy()
    o = np.argsort(t, kind="stable")
    xs, ts = x[o], t[o]
    res = {"machine": machine_info(threads=1), "N": int(t.size), "params": POST, "repeat": a.repeat,
           "sweeps": a.sweeps}
    cut = _engine(xs, ts)
    with time_cut_only():
        old = _engine(xs, ts)
    res["pairs_space_time_cut"] = int(cut._pair_list.r2.size)
    with time_cut_only():
        res["pairs_time_cut"] = int(old._pair_list.r2.size)
    # one trigger pass (an h move), alternating the two engines
    times = {"space_time_cut": [], "time_cut": []}
    for i in range(a.repeat):
        h = POST["h"] * (1 + 1e-4 * ((i % 7) - 3))
        for name, e in (("space_time_cut", cut), ("time_cut", old)):
            ctx = time_cut_only() if name == "time_cut" else contextlib.nullcontext()
            with ctx:
                t0 = time.perf_counter()
                e.set_trigger(h, POST["omega"], slot=1)
                times[name].append(time.perf_counter() - t0)
    for name, v in times.items():
        res[f"trigger_pass_ms_{name}"] = 1e3 * float(np.median(v))
    res["trigger_pass_ratio"] = res["trigger_pass_ms_time_cut"] / res["trigger_pass_ms_space_time_cut"]
    # accuracy: the windowed sums of logs against the exact one
    ex = make_engine(xs, ts, backend="cpu", exact=True)
    ll_ex = ex.log_likelihood(POST["mu0"], *TAU, POST["theta"], POST["omega"], POST["h"])
    ll_cut = cut.log_likelihood(POST["mu0"], *TAU, POST["theta"], POST["omega"], POST["h"])
    with time_cut_only():
        ll_old = old.log_likelihood(POST["mu0"], *TAU, POST["theta"], POST["omega"], POST["h"])
    res["loglik_exact"] = ll_ex
    res["loglik_rel_error_space_time_cut"] = abs(ll_cut - ll_ex) / abs(ll_ex)
    res["loglik_rel_error_time_cut"] = abs(ll_old - ll_ex) / abs(ll_ex)
    # a chain with each
    kw = dict(n_iter=a.sweeps, burn_in=a.sweeps // 10, chains=1, sample=("h", "omega", "theta", "mu0"),
              fixed={"tau_x": TAU[0], "tau_t": TAU[1]}, init=POST, seed=11, progress=False, backend="cpu",
              threads=1)
    mcmc(x, t, **{**kw, "n_iter": 20, "burn_in": 2})  # compile
    t0 = time.perf_counter()
    p_cut = mcmc(x, t, **kw)
    res["chain_s_space_time_cut"] = time.perf_counter() - t0
    with time_cut_only():
        t0 = time.perf_counter()
        p_old = mcmc(x, t, **kw)
        res["chain_s_time_cut"] = time.perf_counter() - t0
    res["chain_ratio"] = res["chain_s_time_cut"] / res["chain_s_space_time_cut"]
    res["chain_max_abs_draw_difference"] = {n: float(np.max(np.abs(p_cut.draws[n] - p_old.draws[n])))
                                            for n in p_cut.sampled}
    res["machine"]["loadavg_end"] = list(os.getloadavg())
    Path(a.out).write_text(json.dumps(res, indent=2) + "\n")
    print(json.dumps({k: v for k, v in res.items() if k != "machine"}, indent=2))
    print(f"CPU {res['machine']['cpu_model']}, load {res['machine']['loadavg_start']} -> {res['machine']['loadavg_end']}")


if __name__ == "__main__":
    main()
