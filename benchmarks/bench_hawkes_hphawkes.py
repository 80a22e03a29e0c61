"""hphawkes_py beside hpHawkes, the paper's own R package, on the DC gunshot data (same machine, same run).

Usage::

    bash benchmarks/peers/build_hphawkes.sh HAWKES_SRC RCPPXSIMD_SRC RLIB     # once: build the peer
    HPHAWKES_R_LIB=RLIB .venv/bin/python benchmarks/bench_hawkes_hphawkes.py [--threads 2] [--repeat 3]

The peer is the R package hpHawkes (Holbrook, Loeffler, Flaxman & Suchard 2021; source
https://github.com/suchard-group/hawkes), built from source by ``benchmarks/peers/build_hphawkes.sh``
against Debian's Rcpp, RcppParallel and oneTBB with OHDSI's RcppXsimd. Without it the script prints
how to build it and exits (status 0, no result file).

On the bundled no-holiday DC gunshots (54,582 events; km and hours) with tau_x = 1.6 km,
tau_t = 336 h, h = 0.07 km, omega = 2 per hour, theta = 0.1, mu0 = 0.5 it measures

1. the log-likelihood from hpHawkes (``getLogLikelihood`` of an engine from ``engineInitial``, its
   TBB engine with ``--threads`` threads and its AVX kernels, ``simd = 2``) and from
   :func:`hphawkes_py.hawkes.log_likelihood` (``exact=True``, every pair, and the default windowed
   mode), and their relative differences;
2. the wall and CPU time of one full evaluation of each, alternating peer / ours ``--repeat`` times
   (best and median);
3. the time of one iteration of hpHawkes' sampler (its R function ``sampler``) against one
   iteration (sweep) of :func:`hphawkes_py.hawkes.mcmc` with tau_x and tau_t fixed.

Parametrisation. hpHawkes' ``params`` vector is ``(1/h, 1/tau_x, 1/tau_t, omega, theta, mu0)``: its
rate at event n is ``mu0 sum_m phi_2(x_n - x_m; tau_x) phi(t_n - t_m; tau_t) + theta sum_{t_m < t_n}
omega exp(-omega (t_n - t_m)) phi_2(x_n - x_m; h)`` (the background sum includes m = n), and its
compensator integrates the background over [0, t_N] and the trigger over [t_m, t_N]. That is
hphawkes_py's default model (``background="smoother"``, ``kernel="exponential"``, Gaussian spatial
kernel) with ``params = HawkesParams(mu0, tau_x, tau_t, theta, omega, h)`` and the window
``(min t, max t) = (0, t_N)`` of this data set; the agreement of the two likelihoods checks it.

hpHawkes' sampler, read from its source (``R/Untitled.R``, function ``sampler``): each iteration
picks ONE parameter at random from (1/h, omega, theta, mu0) (tau_x and tau_t stay fixed), proposes
from a normal truncated to > 0 around the current value, and evaluates the full O(N^2)
log-likelihood of the proposal with the C++ engine (there is no caching of the background or
trigger sums); the proposal scale of that parameter adapts towards acceptance 0.44 after batches of
5, ceil(5^1.1), ... of its proposals. One hpHawkes iteration therefore updates one parameter; one
hphawkes_py sweep updates all four (in random order), with the background sums computed once and
the trigger sums only on h / omega moves. Both per-iteration and per-parameter-update times are
written.

Timings are rough when the host is shared by concurrent jobs (recorded in the JSON with the load
average); CPU seconds (all threads of the process) are written beside wall seconds.
Writes ``benchmarks/results/hawkes_hphawkes.json`` and prints a table.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import hphawkes_py as hp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _rserver import RServer  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "hawkes_hphawkes.json"
BUILD = "benchmarks/peers/build_hphawkes.sh"
PARAMS = {"mu0": 0.5, "tau_x": 1.6, "tau_t": 336.0, "theta": 0.1, "omega": 2.0, "h": 0.07}
SAMPLED = ("h", "omega", "theta", "mu0")
#: hpHawkes' own starting point (its sampler's default ``params``): a second check of the agreement.
PEER_DEFAULTS = {"mu0": 1.0, "tau_x": 1.6, "tau_t": 336.0, "theta": 1.0, "omega": 1.0, "h": 1.0}

# A small R server: loads the data once, then answers one command per line on stdin. Replies start
# with "@@" because hpHawkes prints progress to stdout.
R_SERVER = r"""
args <- commandArgs(TRUE)
if (nzchar(args[1])) .libPaths(c(args[1], .libPaths()))
suppressPackageStartupMessages(library(hpHawkes))
n <- as.integer(args[4]); threads <- as.integer(args[5]); simd <- as.integer(args[6])
x <- matrix(readBin(args[2], "double", 2 * n, 8), ncol = 2, byrow = TRUE)
tt <- readBin(args[3], "double", n, 8)
reply <- function(...) { cat("@@", ..., "\n"); flush(stdout()) }
cpu <- function(pt) sum(pt[c(1, 2)])
con <- file("stdin"); open(con)
engine <- NULL
reply("ready", as.character(packageVersion("hpHawkes")), as.character(packageVersion("RcppParallel")),
      as.character(packageVersion("RcppXsimd")), R.version$major, R.version$minor,
      RcppXsimd::supportsAVX(), RcppXsimd::supportsAVX512())
repeat {
  line <- readLines(con, n = 1)
  if (length(line) == 0 || line == "quit") break
  w <- strsplit(line, " ")[[1]]
  if (w[1] == "ll") {
    p <- as.numeric(w[2:7])
    if (is.null(engine)) engine <- engineInitial(x, n, 2, tt, p, threads, simd, 0, 0)
    engine <- setParameters(engine, p)
    pt <- system.time(ll <- getLogLikelihood(engine))
    reply("ll", sprintf("%.17g", ll), pt[["elapsed"]], cpu(pt))
  } else if (w[1] == "sampler") {
    n_iter <- as.integer(w[2]); p <- as.numeric(w[3:8]); set.seed(as.integer(w[9]))
    pt <- system.time(res <- sampler(n_iter, locations = x, times = tt, params = p, latentDimension = 2,
                                     threads = threads, simd = simd))
    # res$Time runs from the end of iteration 1 to the end: iterations 2..n_iter, no set-up.
    reply("sampler", pt[["elapsed"]], cpu(pt), res$Time[["elapsed"]], cpu(res$Time), n_iter - 1)
  }
}
"""


class Peer(RServer):
    """hpHawkes in a long-lived ``Rscript`` process (one engine, data sent once)."""

    def __init__(self, r_lib, x, t, threads, simd, workdir):
        xf, tf = (Path(workdir) / f for f in ("x.bin", "t.bin"))
        np.ascontiguousarray(x, dtype="<f8").tofile(xf)
        np.ascontiguousarray(t, dtype="<f8").tofile(tf)
        super().__init__(R_SERVER, workdir, (r_lib or "", xf, tf, len(t), threads, simd), log_name="peer.log")


def peer_vector(p):
    """hpHawkes' parameter vector (1/h, 1/tau_x, 1/tau_t, omega, theta, mu0) of natural parameters ``p``."""
    return [1.0 / p["h"], 1.0 / p["tau_x"], 1.0 / p["tau_t"], p["omega"], p["theta"], p["mu0"]]


def find_peer(r_lib):
    """None if Rscript finds hpHawkes (in ``r_lib`` first), else the reason."""
    if shutil.which("Rscript") is None:
        return "Rscript is not on PATH"
    code = (f".libPaths(c('{r_lib}', .libPaths()));" if r_lib else "") + \
        "if (!requireNamespace('hpHawkes', quietly = TRUE)) quit(status = 3)"
    rc = subprocess.run(["Rscript", "-e", code], capture_output=True).returncode
    return None if rc == 0 else f"R package hpHawkes not found (R library {r_lib or 'default paths'})"


def timed(fn):
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0, time.process_time() - c0


def stats(wall, cpu):
    return {"wall_s": wall, "cpu_s": cpu, "best_wall_s": min(wall), "median_wall_s": float(np.median(wall)),
            "best_cpu_s": min(cpu), "median_cpu_s": float(np.median(cpu))}


def our_sweeps(x, t, threads, exact, k, seed):
    """Wall and CPU seconds per sweep of hp.hawkes.mcmc: (run of 2k sweeps - run of k sweeps) / k,
    so the one-off set-up (engine, background sums) cancels."""
    def run(n):
        return hp.hawkes.mcmc(x, t, n_iter=n, burn_in=0, chains=1, fixed={"tau_x": PARAMS["tau_x"],
                              "tau_t": PARAMS["tau_t"]}, init={n_: PARAMS[n_] for n_ in SAMPLED}, seed=seed,
                              progress=False, backend="cpu", threads=threads, exact=exact)
    run(2)  # compile / load the Numba cache
    _, w1, c1 = timed(lambda: run(k))
    _, w2, c2 = timed(lambda: run(2 * k))
    return {"sweeps": k, "wall_s_per_sweep": (w2 - w1) / k, "cpu_s_per_sweep": (c2 - c1) / k,
            "wall_s_per_update": (w2 - w1) / k / len(SAMPLED), "cpu_s_per_update": (c2 - c1) / k / len(SAMPLED)}


def machine(threads):
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        model = next(line.split(":", 1)[1].strip() for line in lscpu.splitlines() if line.startswith("Model name"))
        flags = next((line.split(":", 1)[1].split() for line in lscpu.splitlines() if line.startswith("Flags")), [])
    except (OSError, StopIteration):
        model, flags = platform.processor(), []
    return {"cpu_model": model, "avx2": "avx2" in flags, "avx512f": "avx512f" in flags, "cpu_count": os.cpu_count(),
            "threads": threads, "platform": platform.platform(), "load_average_start": list(os.getloadavg())}


def versions(ready):
    import numba
    out = {"python": platform.python_version(), "numpy": np.__version__, "numba": numba.__version__,
           "hphawkes_py": getattr(hp, "__version__", "unknown"), "hpHawkes": ready[1], "RcppParallel": ready[2],
           "RcppXsimd": ready[3], "R": f"{ready[4]}.{ready[5]}"}
    dpkg = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libtbb-dev"], capture_output=True, text=True)
    if dpkg.returncode == 0:
        out["oneTBB (libtbb-dev)"] = dpkg.stdout
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--r-lib", default=os.environ.get("HPHAWKES_R_LIB", ""),
                    help="private R library holding hpHawkes (default $HPHAWKES_R_LIB, then R's own paths)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3, help="alternating likelihood evaluations of each")
    ap.add_argument("--peer-iterations", type=int, default=3, help="hpHawkes sampler iterations (first one untimed)")
    ap.add_argument("--sweeps", type=int, default=50, help="our windowed-mode sweeps (exact mode: a tenth)")
    ap.add_argument("--seed", type=int, default=2021)
    ap.add_argument("--out", type=Path, default=RESULTS)
    a = ap.parse_args(argv)

    why = find_peer(a.r_lib)
    if why:
        print(f"SKIP: {why}. Build it with\n  bash {BUILD} HAWKES_SRC RCPPXSIMD_SRC RLIB\n(checkouts of "
              "github.com/suchard-group/hawkes and github.com/OHDSI/RcppXsimd) and rerun with HPHAWKES_R_LIB=RLIB.")
        return 0

    df = hp.datasets.load_dc_gunshots("no_holidays")
    x = df[["x_km", "y_km"]].to_numpy()
    t = df["t_hours"].to_numpy()
    o = np.argsort(t, kind="stable")  # hpHawkes takes the last time as the end of the window
    x, t = x[o], t[o]
    assert t[0] == 0.0, "hpHawkes integrates the background from time 0: the window must start at 0"
    pv = " ".join(repr(v) for v in peer_vector(PARAMS))
    mach = machine(a.threads)

    with tempfile.TemporaryDirectory() as work:
        peer = Peer(a.r_lib, x, t, a.threads, 2, work)
        try:
            ours = {True: ([], []), False: ([], [])}
            theirs = ([], [])
            ll_ours = {ex: hp.hawkes.log_likelihood(x, t, PARAMS, exact=ex, threads=a.threads, backend="cpu")
                       for ex in (True, False)}  # also compiles / loads the Numba cache
            ll_peer_runs = []
            for _ in range(a.repeat):
                r = peer.ask(f"ll {pv}")
                ll_peer_runs.append(float(r[1]))
                theirs[0].append(float(r[2]))
                theirs[1].append(float(r[3]))
                for ex in (True, False):
                    ll, w, c = timed(lambda: hp.hawkes.log_likelihood(x, t, PARAMS, exact=ex, threads=a.threads,
                                                                      backend="cpu"))
                    assert ll == ll_ours[ex]
                    ours[ex][0].append(w)
                    ours[ex][1].append(c)
            ll_peer = ll_peer_runs[0]
            r = peer.ask("ll " + " ".join(repr(v) for v in peer_vector(PEER_DEFAULTS)))
            at_defaults = {"params": PEER_DEFAULTS, "hpHawkes": float(r[1]),
                           "hphawkes_py_exact": hp.hawkes.log_likelihood(x, t, PEER_DEFAULTS, exact=True,
                                                                         threads=a.threads, backend="cpu")}
            at_defaults["rel_diff_exact"] = abs(at_defaults["hphawkes_py_exact"] - at_defaults["hpHawkes"]) / abs(
                at_defaults["hpHawkes"])
            r = peer.ask(f"sampler {a.peer_iterations} {pv} {a.seed}")
            n_timed = int(r[5])
            peer_iter = {"iterations": a.peer_iterations, "timed_iterations": n_timed,
                         "run_wall_s": float(r[1]), "run_cpu_s": float(r[2]),
                         "wall_s_per_iteration": float(r[3]) / n_timed, "cpu_s_per_iteration": float(r[4]) / n_timed}
            ready = peer.ready
        finally:
            peer.close()
    sweeps = {"windowed": our_sweeps(x, t, a.threads, False, a.sweeps, a.seed),
              "exact": our_sweeps(x, t, a.threads, True, max(1, a.sweeps // 10), a.seed)}
    mach["load_average_end"] = list(os.getloadavg())

    def built_from(pkg):
        f = Path(a.r_lib, f"{pkg}.source") if a.r_lib else None
        return f.read_text().strip() if f is not None and f.exists() else None

    res = {
        "what": "hphawkes_py beside the paper's R package hpHawkes: DC log-likelihood agreement, time per full "
                "likelihood evaluation, time per sampler iteration",
        "note": "timings rise when the host is shared by other jobs (see load_average); "
                "CPU seconds count all threads of each process",
        "command": f"HPHAWKES_R_LIB=RLIB .venv/bin/python benchmarks/bench_hawkes_hphawkes.py --threads {a.threads} "
                   f"--repeat {a.repeat} --peer-iterations {a.peer_iterations} --sweeps {a.sweeps}",
        "build": f"bash {BUILD} HAWKES_SRC RCPPXSIMD_SRC RLIB",
        "peer": {"name": "hpHawkes", "source": "https://github.com/suchard-group/hawkes",
                 "source_commit": built_from("hpHawkes"),
                 "rcppxsimd_source": "https://github.com/OHDSI/RcppXsimd", "rcppxsimd_commit": built_from("RcppXsimd"),
                 "engine": f"C++ (RcppParallel/oneTBB, {a.threads} threads), AVX kernels (simd = 2), double",
                 "sampler": "R function sampler(): one randomly chosen parameter of (1/h, omega, theta, mu0) per "
                            "iteration, truncated-normal random walk, full O(N^2) likelihood of each proposal"},
        "machine": mach,
        "versions": versions(ready),
        "data": {"name": "DC gunshots, no holidays", "events": int(t.size), "units": "km, hours",
                 "window_hours": [float(t[0]), float(t[-1])]},
        "params": PARAMS,
        "peer_params_vector": peer_vector(PARAMS),
        "log_likelihood": {
            "hpHawkes": ll_peer, "hphawkes_py_exact": ll_ours[True], "hphawkes_py_windowed": ll_ours[False],
            "rel_diff_exact": abs(ll_ours[True] - ll_peer) / abs(ll_peer),
            "rel_diff_windowed": abs(ll_ours[False] - ll_peer) / abs(ll_peer),
            "hpHawkes_each_run": ll_peer_runs,
            "note": "hpHawkes sums the events in a TBB parallel_reduce, whose order varies from run to run: its "
                    "last digits vary (hpHawkes_each_run); hphawkes_py's is the same in every run at a given thread count (checked: each timed run equals the first)"},
        "log_likelihood_at_peer_defaults": at_defaults,
        "loglik_time": {"hpHawkes": stats(*theirs), "hphawkes_py_exact": stats(*ours[True]),
                        "hphawkes_py_windowed": stats(*ours[False])},
        "sampler_time": {"hpHawkes": peer_iter, "hphawkes_py_windowed": sweeps["windowed"],
                         "hphawkes_py_exact": sweeps["exact"]},
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(res, indent=2) + "\n")

    L, T, S = res["log_likelihood"], res["loglik_time"], res["sampler_time"]
    print(f"DC gunshots, N = {t.size}, {a.threads} threads, {mach['cpu_model']}, load average {mach['load_average_start'][0]:.1f}")
    print(f"{'':34s}{'log-likelihood':>22s}{'rel. diff':>11s}{'best s':>9s}{'median s':>10s}{'CPU s':>9s}")
    for key, label, rd in (("hpHawkes", "hpHawkes (AVX, TBB)", None),
                           ("hphawkes_py_exact", "hphawkes_py exact", L["rel_diff_exact"]),
                           ("hphawkes_py_windowed", "hphawkes_py windowed (default)", L["rel_diff_windowed"])):
        ll = L[key]
        print(f"{label:34s}{ll:22.10f}{'' if rd is None else f'{rd:.1e}':>11s}{T[key]['best_wall_s']:9.3f}"
              f"{T[key]['median_wall_s']:10.3f}{T[key]['best_cpu_s']:9.3f}")
    D = res["log_likelihood_at_peer_defaults"]
    print(f"at hpHawkes' default parameters (h = omega = theta = mu0 = 1): hpHawkes {D['hpHawkes']:.10f}, "
          f"hphawkes_py exact {D['hphawkes_py_exact']:.10f}, rel. diff {D['rel_diff_exact']:.1e}")
    print(f"sampler: hpHawkes {S['hpHawkes']['wall_s_per_iteration']:.3f} s per iteration (one parameter); "
          f"hphawkes_py windowed {S['hphawkes_py_windowed']['wall_s_per_sweep'] * 1e3:.2f} ms per sweep "
          f"({S['hphawkes_py_windowed']['wall_s_per_update'] * 1e3:.2f} ms per parameter), exact "
          f"{S['hphawkes_py_exact']['wall_s_per_sweep']:.3f} s per sweep "
          f"({S['hphawkes_py_exact']['wall_s_per_update']:.3f} s per parameter)")
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
