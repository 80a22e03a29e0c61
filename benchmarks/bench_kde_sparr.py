"""hphawkes_py's kernel intensity estimates beside R's sparr (and spatstat under it): same data, same run.

Usage::

    apt-get install -y --no-install-recommends r-cran-sparr      # Debian: sparr, spatstat
    .venv/bin/python benchmarks/bench_kde_sparr.py [--threads 2] [--repeat 5]

Without ``Rscript`` or sparr the script says so and exits (status 0, no result file).

What is compared (both sides compute the same quantity, checked before anything is timed):

1. **Fixed-bandwidth Gaussian intensity with Diggle's edge correction** at the centres of the inside
   cells of a raster window: ``lambda(x) = sum_j e_j K_h(x - x_j)`` with ``e_j = 1 / (window mass
   of N(x_j, h^2 I))``.  hphawkes_py: :func:`hphawkes_py.kde.fit` (``method="fixed"``,
   ``cutoff=inf``) and :meth:`KDEFit.density_surface`.  sparr:
   ``bivariate.density(pp, h0 = h, adapt = FALSE, edge = "diggle", intensity = TRUE, xy = grid)``,
   which calls spatstat's ``density.ppp(diggle = TRUE)``: an FFT on the pixel grid with the points
   moved to their pixels' centres, the kernel sampled (not integrated) at pixel offsets and the
   edge masses from the FFT of the window mask.  hphawkes_py sums the kernels over the exact point
   locations with the edge masses integrated exactly over the cells.  The differences are that
   discretisation: run again with our points moved to their cells' centres (``snapped_*``, a
   diagnostic), ours and sparr's agree to about 1e-4.  sparr's default ``edge = "uniform"`` divides
   by the kernel mass at the *evaluation* point instead -- a different estimator, whose distance
   from ours is also written.  Our default truncation (``cutoff=3`` bandwidths) is timed and
   compared too (``cutoff3``), labelled as such: it is not the same quantity.
2. **Log relative risk and its p-values** (fixed bandwidth shared by cases and controls, Diggle's
   edge correction): :func:`hphawkes_py.kde.relative_risk` with ``.surface()`` and
   ``.p_values("asymptotic")`` (Hazelton & Davies 2009, the reference density under H0 estimated
   from the pooled points) against sparr's ``risk(f, g, h0 = h, adapt = FALSE, edge = "diggle",
   xy = grid)`` with ``tolerance(method = "ASY", ref.density = <pooled bivariate.density>)`` -- the
   same formula.  ``risk(tolerate = TRUE)`` uses the *controls'* density as the reference; its
   distance from ours is written too (a different choice, not timed as the equivalent).  sparr
   normalises each density to integrate to 1 over its grid, hphawkes_py divides the intensities by
   n1 and n0.  Monte Carlo p-values: ``tolerance(method = "MC", ITER = R + 1)`` (R random
   relabellings of the pooled points, each two FFT density estimates; ``parallelise`` forks R
   processes) against ``.p_values("monte_carlo", n_replicates=R)`` -- the same test, different random
   relabellings, so they agree only within Monte Carlo error.
3. **Adaptive log relative risk** (Abramson's square-root law): sparr's ``risk(adapt = TRUE,
   pilot.symmetry = "pooled", h0 = h, hp = h, edge = "diggle")`` and ``relative_risk(method =
   "adaptive", bandwidth = h, alpha = 0.5)`` give every point the bandwidth
   ``h (pilot(x_i) / g)^(-1/2)`` from the pooled edge-corrected fixed-h pilot (sparr reads the pilot
   off its FFT image; its ``trim`` cap does not bind here) and sum the kernels directly.  The
   bandwidths and surfaces are compared and timed.  Their asymptotic p-values are different
   formulas (sparr: Davies & Hazelton 2010; ours: the random-labelling variance with finite-sample
   centring, see :mod:`hphawkes_py.kde.relrisk`), so only their distance is written.

Data: the redwood seedlings (62 points, unit square, 128 x 128 cells, h = 0.1), the Chorley-Ribble
lung controls (978 points, h = 1.2 km) and larynx cases (58) on the 0.1 km mask (230 x 214 cells,
padded with outside rows to a square grid because sparr's ``xy`` grid must be square), and Zhang
et al.'s (2017) simulated points (the first 10,000, and all 50,000) on a 256 x 256 unit square
(h = 0.02).  The FFT's cost does not grow with n; a kernel sum's does.

Timing: alternating sparr / ours ``--repeat`` times, best and median wall seconds.  sparr's side is
timed inside R (``system.time`` around the call, data already loaded); ours around fit + surface
(edge factors included) in this process after a warm-up that compiles Numba.  spatstat's FFT runs
on one thread; ours on ``--threads``.  Rough when the host is shared (the load average is recorded).
Writes ``benchmarks/results/kde_sparr.json`` and prints a table.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import hphawkes_py as hp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _machine import machine_info  # noqa: E402
from _rserver import RServer  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "kde_sparr.json"
DATA = Path(hp.__file__).parent / "data" / "kde"

# A small R server: one command per line on stdin, results to binary files, replies start "@@".
R_SERVER = r"""
suppressPackageStartupMessages(library(sparr))
reply <- function(...) { cat("@@", ..., "\n"); flush(stdout()) }
rd <- function(f, n) readBin(f, "double", n, 8)
con <- file("stdin"); open(con)
reply("ready", as.character(packageVersion("sparr")), as.character(packageVersion("spatstat")),
      as.character(packageVersion("spatstat.explore")), as.character(packageVersion("spatstat.geom")),
      R.version$major, R.version$minor)
W <- NULL; grid <- NULL
pts <- function(f, n) { m <- matrix(rd(f, 2 * n), ncol = 2, byrow = TRUE); ppp(m[, 1], m[, 2], window = W) }
# an image on the square grid, as a vector in the order of the mask's rows from the top
out_vec <- function(im) as.vector(t(as.matrix(im)[nrow(as.matrix(im)):1, ]))
repeat {
  line <- readLines(con, n = 1)
  if (length(line) == 0 || line == "quit") break
  w <- strsplit(line, " ")[[1]]
  if (w[1] == "window") {  # maskfile side x0 y0 cs  (square 0/1 mask, top row first)
    s <- as.integer(w[3]); x0 <- as.numeric(w[4]); y0 <- as.numeric(w[5]); cs <- as.numeric(w[6])
    m <- matrix(readBin(w[2], "integer", s * s, 4), nrow = s, byrow = TRUE)[s:1, ] == 1
    W <- owin(xrange = x0 + c(0, s * cs), yrange = y0 + c(0, s * cs), mask = m)
    grid <- list(x = x0 + (seq_len(s) - 0.5) * cs, y = y0 + (seq_len(s) - 0.5) * cs)
    reply("window", sum(m))
  } else if (w[1] == "dens") {  # ptsfile n edge h outfile
    pp <- pts(w[2], as.integer(w[3])); h <- as.numeric(w[5])
    pt <- system.time(d <- bivariate.density(pp, h0 = h, adapt = FALSE, edge = w[4], intensity = TRUE,
                                             xy = grid, verbose = FALSE))
    writeBin(out_vec(d$z), w[6], size = 8)
    reply("dens", pt[["elapsed"]], sum(pt[c(1, 2)]))
  } else if (w[1] == "riskada") {  # casesfile n1 controlsfile n0 h outfile tolerate: Abramson, pooled pilot
    f <- pts(w[2], as.integer(w[3])); g <- pts(w[4], as.integer(w[5])); h <- as.numeric(w[6])
    pt <- system.time(r <- risk(f, g, h0 = h, hp = h, adapt = TRUE, pilot.symmetry = "pooled",
                                tolerate = w[8] == "1", edge = "diggle", xy = grid, verbose = FALSE))
    P <- if (is.null(r$P)) rep(NA_real_, length(out_vec(r$rr))) else out_vec(r$P)
    writeBin(c(out_vec(r$rr), P, r$f$h, r$g$h), w[7], size = 8)
    reply(w[1], pt[["elapsed"]], sum(pt[c(1, 2)]))
  } else if (w[1] %in% c("risk", "riskpool", "riskmc")) {  # casesfile n1 controlsfile n0 h outfile [iter cores seed]
    f <- pts(w[2], as.integer(w[3])); g <- pts(w[4], as.integer(w[5])); h <- as.numeric(w[6])
    if (w[1] == "risk") {  # sparr's own p-values: risk(tolerate = TRUE), reference density = the controls'
      pt <- system.time(r <- risk(f, g, h0 = h, adapt = FALSE, tolerate = TRUE, edge = "diggle", xy = grid,
                                  verbose = FALSE))
      P <- r$P
    } else if (w[1] == "riskpool") {  # reference density = the pooled pattern's, as Hazelton & Davies (2009)
      pt <- system.time({
        r <- risk(f, g, h0 = h, adapt = FALSE, edge = "diggle", xy = grid, verbose = FALSE)
        pool <- bivariate.density(superimpose(f, g), h0 = h, adapt = FALSE, edge = "diggle", xy = grid,
                                  verbose = FALSE)
        P <- tolerance(r, method = "ASY", ref.density = pool, verbose = FALSE)
      })
    } else {  # Monte Carlo: ITER - 1 random relabellings, on `cores` forked R processes (0: this one)
      iter <- as.integer(w[8]); cores <- as.integer(w[9]); set.seed(as.integer(w[10]))
      pt <- system.time({
        r <- risk(f, g, h0 = h, adapt = FALSE, edge = "diggle", xy = grid, verbose = FALSE)
        P <- tolerance(r, method = "MC", ITER = iter, parallelise = if (cores > 0) cores else NULL,
                       verbose = FALSE)
      })
    }
    writeBin(c(out_vec(r$rr), out_vec(P)), w[7], size = 8)
    reply(w[1], pt[["elapsed"]], sum(pt[c(1, 2)]))
  }
}
"""


class Sparr(RServer):
    """sparr in a long-lived ``Rscript`` process."""

    def __init__(self, workdir: Path):
        super().__init__(R_SERVER, workdir)

    def write(self, name, a, dtype="<f8"):
        p = self.dir / name
        np.ascontiguousarray(a, dtype=dtype).tofile(p)
        return p


def square(w: hp.kde.Window) -> hp.kde.Window:
    """``w`` with outside rows or columns added at the top / right so that the raster is square."""
    r, c = w.mask.shape
    s = max(r, c)
    m = np.zeros((s, s), bool)
    m[s - r:, :c] = w.mask
    return hp.kde.Window(m, w.x0, w.y0, w.cell_size)


def problems():
    redwood, mask = hp.datasets.load_redwood()
    chorley = pd.read_csv(DATA / "chorley.csv")
    xy = chorley[["x", "y"]].to_numpy(float)
    cases, controls = xy[chorley["mark"].to_numpy() == "larynx"], xy[chorley["mark"].to_numpy() == "lung"]
    wc = square(hp.kde.Window.from_asc(DATA / "chorley_mask_0.1km.asc.gz"))
    sim = hp.datasets.load_zhang2017_points("sim50000")
    return {
        "redwood": dict(points=redwood, window=hp.kde.Window.from_asc(mask), h=0.1,
                        label="redwood seedlings, 62 points, unit square 128 x 128"),
        "chorley_lung": dict(points=controls, window=wc, h=1.2, cases=cases,
                             label="Chorley-Ribble lung controls, 978 points, 0.1 km mask 230 x 214 (square 230)"),
        "sim10000": dict(points=sim[:10000], window=hp.kde.Window.rectangle(0, 1, 0, 1, 1 / 256), h=0.02,
                         label="Zhang et al. (2017) sim50000, first 10,000 points, unit square 256 x 256"),
        "sim50000": dict(points=sim, window=hp.kde.Window.rectangle(0, 1, 0, 1, 1 / 256), h=0.02,
                         label="Zhang et al. (2017) sim50000, 50,000 points, unit square 256 x 256"),
    }


def rel_stats(ours, peer, interior):
    ok = np.isfinite(ours) & np.isfinite(peer) & (peer > 0)
    rd = np.abs(ours[ok] / peer[ok] - 1.0)
    ri = np.abs(ours[ok & interior] / peer[ok & interior] - 1.0)
    return {"cells": int(ok.sum()), "max_rel_diff": float(rd.max()), "median_rel_diff": float(np.median(rd)),
            "p99_rel_diff": float(np.quantile(rd, 0.99)), "interior_cells": int((ok & interior).sum()),
            "interior_max_rel_diff": float(ri.max()) if ri.size else None,
            "interior_median_rel_diff": float(np.median(ri)) if ri.size else None}


def snapped(points, w: hp.kde.Window):
    """``points`` moved to the centres of their cells, as spatstat's FFT does (a diagnostic only)."""
    origin = np.array([w.x0, w.y0])
    return origin + (np.floor((points - origin) / w.cell_size) + 0.5) * w.cell_size


def ours_density(pr, threads, cutoff=math.inf, points=None):
    with warnings.catch_warnings():  # duplicated points: kept, as sparr keeps them
        warnings.simplefilter("ignore", UserWarning)
        fit = hp.kde.fit(pr["points"] if points is None else points, pr["window"], method="fixed",
                         bandwidth=pr["h"], cutoff=cutoff, progress=False, backend="cpu", threads=threads)
    return fit.density_surface(threads=threads).values[pr["window"].mask]


def ours_risk_adaptive(pr, threads, snap=False, p_values=False):
    """Abramson's bandwidths (alpha = 1/2) from the pooled fixed-h pilot, as sparr's pilot.symmetry="pooled"."""
    cases, controls = pr["cases"], pr["points"]
    if snap:
        cases, controls = snapped(cases, pr["window"]), snapped(controls, pr["window"])
    rr = hp.kde.relative_risk(cases, controls, pr["window"], method="adaptive", bandwidth=pr["h"], alpha=0.5,
                              cutoff=math.inf, progress=False, backend="cpu", threads=threads)
    m = pr["window"].mask
    p = rr.p_values("asymptotic", progress=False, threads=threads).values[m] if p_values else None
    return rr.surface(threads=threads).values[m], p, rr.bandwidths


def compare_risk_adaptive(peer, pr, pf, out, interior, args):
    """Adaptive log relative risk: bandwidths and surfaces compared, the surfaces timed (not the p-values)."""
    w, n, h = pr["window"], len(pr["points"]), pr["h"]
    n1, m = len(pr["cases"]), int(w.mask.sum())

    def ask(cf, pf_, tol):
        t = float(peer.ask(f"riskada {cf} {n1} {pf_} {n} {h!r} {out} {tol}")[1])
        a = np.fromfile(out, "<f8")
        both = a[:2 * w.mask.size].reshape(2, *w.mask.shape)
        return both[0][w.mask], both[1][w.mask], a[2 * w.mask.size:], t

    cf = peer.write("cases.bin", pr["cases"])
    srho, sp, sh, _ = ask(cf, pf, 1)
    rho, p, bws = ours_risk_adaptive(pr, args.threads, p_values=True)
    scf = peer.write("cases_snapped.bin", snapped(pr["cases"], w))
    spf = peer.write("controls_snapped.bin", snapped(pr["points"], w))
    srho_s, _, sh_s, _ = ask(scf, spf, 0)
    rho_s, _, bws_s = ours_risk_adaptive(pr, args.threads, snap=True)
    stats = risk_stats(rho, p, srho, sp, interior)
    agree = {"bandwidths_max_rel_diff": float(np.max(np.abs(bws / sh - 1))),
             "bandwidths_median_rel_diff": float(np.median(np.abs(bws / sh - 1))),
             "snapped_bandwidths_max_rel_diff": float(np.max(np.abs(bws_s / sh_s - 1))),
             **{k: v for k, v in stats.items() if k == "cells" or k.startswith("log_rr")},
             "snapped_log_rr_max_abs_diff": risk_stats(rho_s, rho_s, srho_s, srho_s, interior)["log_rr_max_abs_diff"],
             "p_values_differ_by_design": {k: v for k, v in stats.items() if k.startswith(("p_", "cells_p"))}}
    t = {"sparr": [], "hphawkes_py": []}
    for _ in range(args.repeat):
        t["sparr"].append(ask(cf, pf, 0)[3])
        t["hphawkes_py"].append(timed(lambda: ours_risk_adaptive(pr, args.threads))[1])
    r = {"data": f"Chorley-Ribble larynx cases ({n1}) against lung controls ({n}), 0.1 km mask ({m} cells)",
         "estimator": "Abramson's bandwidths h (pilot(x_i) / g)^(-1/2) from the pooled, edge-corrected fixed-h pilot "
                      "(hp = h0 = h), Diggle's edge correction with each point's own bandwidth",
         "p_values": "not compared as the same quantity: sparr's tol.asy.ada (Davies & Hazelton 2010) against "
                     "hphawkes_py's random-labelling variance with the finite-sample centring",
         "h": h, "agreement": agree, "time": {k: summary(v) for k, v in t.items()}}
    print(f"{'chorley adapt':14s} bandwidths max rel diff {agree['bandwidths_max_rel_diff']:.1e} (snapped "
          f"{agree['snapped_bandwidths_max_rel_diff']:.1e}), log rr max abs diff {agree['log_rr_max_abs_diff']:.2e} "
          f"(snapped {agree['snapped_log_rr_max_abs_diff']:.1e}) | sparr {r['time']['sparr']['best_wall_s']:.3g} s, "
          f"ours {r['time']['hphawkes_py']['best_wall_s']:.3g} s")
    return r


def ours_risk(pr, threads, snap=False, n_replicates=None):
    cases, controls = pr["cases"], pr["points"]
    if snap:
        cases, controls = snapped(cases, pr["window"]), snapped(controls, pr["window"])
    rr = hp.kde.relative_risk(cases, controls, pr["window"], method="fixed", bandwidth=pr["h"],
                              cutoff=math.inf, progress=False, backend="cpu", threads=threads)
    m = pr["window"].mask
    if n_replicates:
        return rr.surface(threads=threads).values[m], rr.p_values(
            "monte_carlo", n_replicates=n_replicates, seed=1, progress=False, threads=threads).values[m]
    return rr.surface(threads=threads).values[m], rr.p_values("asymptotic", progress=False, threads=threads).values[m]


def risk_stats(rho, p, srho, sp, interior):
    """Differences of log relative risk and p-value surfaces (ours against sparr's) over the cells."""
    ok, okp = np.isfinite(rho) & np.isfinite(srho), np.isfinite(p) & np.isfinite(sp)
    dr, dp = np.abs(rho[ok] - srho[ok]), np.abs(p[okp] - sp[okp])
    return {"cells": int(ok.sum()), "log_rr_max_abs_diff": float(dr.max()),
            "log_rr_median_abs_diff": float(np.median(dr)),
            "log_rr_interior_max_abs_diff": float(dr[interior[ok]].max()),
            "p_cells": int(okp.sum()), "p_max_abs_diff": float(dp.max()), "p_mean_abs_diff": float(dp.mean()),
            "p_interior_max_abs_diff": float(dp[interior[okp]].max()),
            "cells_p_below_0.05_ours": int(np.sum(p[okp] < 0.05)),
            "cells_p_below_0.05_sparr": int(np.sum(sp[okp] < 0.05)),
            "cells_classified_differently_at_0.05": int(np.sum((p[okp] < 0.05) != (sp[okp] < 0.05)))}


def compare_risk(peer, pr, pf, out, interior, args):
    """Log relative risk and p-value surfaces on chorley: agreement first, then alternating timings."""
    w, n, h = pr["window"], len(pr["points"]), pr["h"]
    cf = peer.write("cases.bin", pr["cases"])
    n1 = len(pr["cases"])
    base = f"{cf} {n1} {pf} {n} {h!r} {out}"
    mc = args.mc_replicates

    def ask(cmd, extra=""):
        t = float(peer.ask(f"{cmd} {base} {extra}".strip())[1])
        both = np.fromfile(out, "<f8").reshape(2, *w.mask.shape)
        return both[0][w.mask], both[1][w.mask], t

    rho, p = ours_risk(pr, args.threads)
    rho_s, p_s = ours_risk(pr, args.threads, snap=True)
    srho, sp_pool, _ = ask("riskpool")
    _, sp_ctrl, _ = ask("risk")
    agree = {"asymptotic_reference_pooled": risk_stats(rho, p, srho, sp_pool, interior),
             "asymptotic_reference_pooled_snapped": risk_stats(rho_s, p_s, srho, sp_pool, interior),
             "asymptotic_sparr_risk_default_reference_controls": risk_stats(rho, p, srho, sp_ctrl, interior)}
    _, p_mc = ours_risk(pr, args.threads, n_replicates=mc - 1)
    _, sp_mc, _ = ask("riskmc", f"{mc} 0 1")
    agree["monte_carlo"] = risk_stats(rho, p_mc, srho, sp_mc, interior)
    t = {k: [] for k in ("sparr_asymptotic", "hphawkes_py_asymptotic", "sparr_risk_default",
                         "sparr_monte_carlo_1core", f"sparr_monte_carlo_{args.threads}cores",
                         "hphawkes_py_monte_carlo")}
    for i in range(args.repeat):
        t["sparr_asymptotic"].append(ask("riskpool")[2])
        t["hphawkes_py_asymptotic"].append(timed(lambda: ours_risk(pr, args.threads))[1])
        t["sparr_risk_default"].append(ask("risk")[2])
        if i < args.mc_repeat:
            t["sparr_monte_carlo_1core"].append(ask("riskmc", f"{mc} 0 {i + 2}")[2])
            t[f"sparr_monte_carlo_{args.threads}cores"].append(ask("riskmc", f"{mc} {args.threads} {i + 2}")[2])
            t["hphawkes_py_monte_carlo"].append(timed(lambda: ours_risk(pr, args.threads, n_replicates=mc - 1))[1])
    r = {"data": f"Chorley-Ribble larynx cases ({n1}) against lung controls ({n}), 0.1 km mask",
         "n_cases": n1, "n_controls": n, "h": h, "inside_cells": w.n_inside,
         "monte_carlo": f"{mc - 1} random relabellings of the pooled points (sparr tolerance(method='MC', "
                        f"ITER={mc}); hphawkes_py p_values('monte_carlo', n_replicates={mc - 1}))",
         "agreement": agree, "time": {k: summary(v) for k, v in t.items()}}
    a, tt = agree["asymptotic_reference_pooled"], r["time"]
    print(f"{'chorley risk':14s} n1={n1} n0={n} | log rr max abs diff {a['log_rr_max_abs_diff']:.2e}, p max abs diff "
          f"{a['p_max_abs_diff']:.2e} (snapped "
          f"{agree['asymptotic_reference_pooled_snapped']['p_max_abs_diff']:.1e}) | asymptotic: sparr "
          f"{tt['sparr_asymptotic']['best_wall_s']:.3g} s, ours {tt['hphawkes_py_asymptotic']['best_wall_s']:.3g} s | "
          f"MC {mc - 1}: sparr {tt['sparr_monte_carlo_1core']['best_wall_s']:.3g} s (1 core), "
          f"{tt[f'sparr_monte_carlo_{args.threads}cores']['best_wall_s']:.3g} s ({args.threads} cores), ours "
          f"{tt['hphawkes_py_monte_carlo']['best_wall_s']:.3g} s")
    return r


def timed(f):
    t = time.perf_counter()
    out = f()
    return out, time.perf_counter() - t


def summary(ts):
    return {"best_wall_s": float(min(ts)), "median_wall_s": float(np.median(ts)), "runs": [float(t) for t in ts]}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--mc-replicates", type=int, default=100, help="sparr's ITER (ours: one fewer relabellings)")
    ap.add_argument("--mc-repeat", type=int, default=2, help="timed Monte Carlo runs per side")
    args = ap.parse_args(argv)
    if shutil.which("Rscript") is None or subprocess.run(
            ["Rscript", "-e", "suppressMessages(library(sparr))"], capture_output=True).returncode != 0:
        print("Rscript with sparr not found: apt-get install -y --no-install-recommends r-cran-sparr")
        return 0
    command = " ".join(shlex.quote(a) for a in (sys.argv[1:] if argv is None else argv))
    results = {"command": f"python benchmarks/bench_kde_sparr.py {command}".strip(),
               "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
               "machine": machine_info(args.threads), "density": {}, "relative_risk": {}}
    with tempfile.TemporaryDirectory() as tmp:
        peer = Sparr(Path(tmp))
        try:
            v = peer.ready[1:]  # after the word 'ready'
            results["peer"] = {"name": "sparr", "sparr": v[0], "spatstat": v[1], "spatstat.explore": v[2],
                               "spatstat.geom": v[3], "R": f"{v[4]}.{v[5]}", "threads": 1}
            for name, pr in problems().items():
                w = pr["window"]
                s = w.mask.shape[0]
                assert w.mask.shape == (s, s)
                mf = peer.write(f"{name}_mask.bin", w.mask.astype(np.int32), "<i4")
                peer.ask(f"window {mf} {s} {w.x0!r} {w.y0!r} {w.cell_size!r}")
                pf = peer.write(f"{name}_pts.bin", pr["points"])
                n, h = len(pr["points"]), pr["h"]
                interior = w.boundary_distance(w.cell_centres()) > 4 * h
                out = Path(tmp) / "out.bin"
                # agreement (and warm-up of Numba)
                ours = ours_density(pr, args.threads)
                agree = {}
                for edge in ("diggle", "uniform"):
                    peer.ask(f"dens {pf} {n} {edge} {h!r} {out}")
                    sp = np.fromfile(out, "<f8").reshape(w.mask.shape)[w.mask]
                    agree[f"sparr_edge_{edge}"] = rel_stats(ours, sp, interior)
                    if edge == "diggle":
                        # the same comparison with our points moved to their cells' centres: what is
                        # left is the kernel sampling and the FFT, the rest was the points' discretisation
                        agree["snapped_sparr_edge_diggle"] = rel_stats(
                            ours_density(pr, args.threads, points=snapped(pr["points"], w)), sp, interior)
                        # our default truncation at 3 bandwidths, against sparr (no truncation)
                        agree["cutoff3_sparr_edge_diggle"] = rel_stats(ours_density(pr, args.threads, 3.0), sp,
                                                                       interior)
                ts_o, ts_p, ts_3 = [], [], []
                for _ in range(args.repeat):
                    ts_p.append(float(peer.ask(f"dens {pf} {n} diggle {h!r} {out}")[1]))
                    ts_o.append(timed(lambda: ours_density(pr, args.threads))[1])
                    ts_3.append(timed(lambda: ours_density(pr, args.threads, 3.0))[1])
                results["density"][name] = {
                    "data": pr["label"], "n": n, "h": h, "inside_cells": w.n_inside, "grid": [s, s],
                    "interior": "cells more than 4 h from the window's outside",
                    "agreement": agree, "time": {"sparr": summary(ts_p), "hphawkes_py": summary(ts_o),
                                                 "hphawkes_py_cutoff3": summary(ts_3)}}
                d = results["density"][name]
                print(f"{name:14s} n={n:6d} cells={w.n_inside:6d} | rel diff vs sparr diggle: max "
                      f"{agree['sparr_edge_diggle']['max_rel_diff']:.2e}, interior max "
                      f"{agree['sparr_edge_diggle']['interior_max_rel_diff']:.2e}, snapped max "
                      f"{agree['snapped_sparr_edge_diggle']['max_rel_diff']:.2e} (vs uniform: max "
                      f"{agree['sparr_edge_uniform']['max_rel_diff']:.2e}) | sparr "
                      f"{d['time']['sparr']['best_wall_s']:.3g} s, "
                      f"ours {d['time']['hphawkes_py']['best_wall_s']:.3g} s "
                      f"(cutoff 3: {d['time']['hphawkes_py_cutoff3']['best_wall_s']:.3g} s)")
                if "cases" in pr:
                    results["relative_risk"]["chorley"] = compare_risk(peer, pr, pf, out, interior, args)
                    results["relative_risk"]["chorley_adaptive"] = compare_risk_adaptive(peer, pr, pf, out, interior,
                                                                                         args)
        finally:
            peer.close()
    results["machine"]["loadavg_end"] = list(os.getloadavg())
    results["note"] = ("fixed bandwidth, Gaussian kernel, Diggle's edge correction (the kernel mass at each data "
                       "point), no truncation (cutoff=inf) on our side; sparr's FFT moves points to pixel centres "
                       "and samples the kernel, so the differences are its discretisation. sparr/spatstat run on "
                       "one thread (the Monte Carlo also with parallelise = the threads named: forked R processes), "
                       "hphawkes_py on the threads named")
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
