"""Rolling-origin forecast evaluation of the Hawkes model on the DC gunshot data (issue 14 §2).

Usage::

    .venv/bin/python benchmarks/bench_hawkes_forecast.py [--quick] [--fit refit|once] [--origins 26]
        [--spacing-weeks 4] [--horizon-hours 168] [--n-draws 200] [--threads 1] [--out PATH]

On the bundled no-holiday DC data (54,582 events 2006-01-27 .. 2019-06-30, km and hours;
tau_x = 1.6 km and tau_t = 336 h fixed as in the paper), forecast origins start 4 years after
the first event and follow every ``--spacing-weeks`` weeks, each shifted forward a day at a
time while its window would meet a removed holiday period (Jul 1-6 and Dec 29-Jan 2 are not in
the data: a window there would be scored as seeing no events; a day's margin each side, since
t = 0 is known only to the day). Each origin scores the events of the next ``--horizon-hours``
with :func:`hphawkes_py.hawkes.forecast_score` (one-step-ahead point-process log score given
the history; window events self-excite; posterior draws combined by log-mean-exp), against

* the background-only model (theta = 0, the same kernel background, its mu0 refitted on the
  history), and
* a homogeneous Poisson process (the last 4 weeks' event rate spread uniformly over the data's
  bounding box, 12.7 x 18.8 km: the study extent, known in advance),

for both background choices: ``origin`` (frozen at the origin, edge-corrected; the default) and
``model`` (the model's background of past events through the window, which decays).

Fitting (``--fit``): ``refit`` (default) fits every origin's past: the posterior mode for the
first origin, then one adaptive-MH chain of 1,000 sweeps (300 burn-in) per origin, started at the
previous origin's posterior mean (an expanding window). ``once`` fits the first 4 years only
(mode + one chain) and scores every origin with that posterior (history still up to each
origin). ``--quick``: ``once`` with 300 sweeps, 6 origins, 50 draws (under a minute; it writes
the same JSON file unless ``--out`` is given).

Writes ``benchmarks/results/hawkes_forecast.json``: settings, per-origin scores and posterior
means, the information gain per event of Hawkes over background-only (pooled: sum of score
differences / sum of events, with a ratio-estimator standard error over origins; and the
unweighted mean of per-origin gains with its standard error), the same against Poisson, and
wall times. Standard errors treat origins as independent (windows do not overlap; the history
and, with ``refit``, the fits do, so they are optimistic).
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import sys
import platform
import time
from pathlib import Path

import numpy as np

import hphawkes_py.hawkes as hk
from hphawkes_py.datasets import load_dc_gunshots

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _machine import machine_info  # noqa: E402

TAU_X, TAU_T = 1.6, 336.0
FIXED = {"tau_x": TAU_X, "tau_t": TAU_T}
SAMPLED = ("h", "omega", "theta", "mu0")
FIRST_EVENT = datetime.datetime(2006, 1, 27)  # t = 0 (the day of the first event; data/dc_gunshots/README.md)
YEAR_H = 365.25 * 24.0


def _holidays(t_max: float) -> list[tuple[float, float]]:
    """Hours (since t = 0) of the removed holiday periods, a day's margin each side:
    Jun 30 .. Jul 7 and Dec 28 .. Jan 3 (approximate dates of t, see FIRST_EVENT)."""
    out = []
    for y in range(FIRST_EVENT.year, FIRST_EVENT.year + int(t_max / YEAR_H) + 2):
        for a, b in ((datetime.datetime(y, 6, 30), datetime.datetime(y, 7, 8)),
                     (datetime.datetime(y, 12, 28), datetime.datetime(y + 1, 1, 4))):
            out.append(((a - FIRST_EVENT).total_seconds() / 3600.0, (b - FIRST_EVENT).total_seconds() / 3600.0))
    return out


def _clear_origin(origin: float, horizon: float, holidays) -> float:
    """The first origin from ``origin`` on, in steps of a day, whose window misses every holiday period."""
    while any(origin < b and origin + horizon > a for a, b in holidays):
        origin += 24.0
    return origin


def _f(v) -> float:
    """A JSON value (None for a non-finite one) as a float for printing."""
    return math.nan if v is None else float(v)


def _gain(diff: np.ndarray, n: np.ndarray) -> dict:
    """Pooled gain sum(diff)/sum(n) with a ratio-estimator SE over origins, and the mean of per-origin gains."""
    ok = n > 0
    diff, n = diff[ok], n[ok]
    k = diff.size
    pooled = float(diff.sum() / n.sum())
    se_pooled = float(np.sqrt(np.sum((diff - pooled * n) ** 2) / (k * (k - 1))) / n.mean()) if k > 1 else math.nan
    per = diff / n
    return {"pooled_nats_per_event": pooled, "pooled_se": se_pooled,
            "mean_of_origins": float(per.mean()), "mean_of_origins_se": float(per.std(ddof=1) / math.sqrt(k))
            if k > 1 else math.nan, "origins": int(k), "events": int(n.sum()),
            "origins_with_positive_gain": int(np.sum(per > 0))}


def _fit(x, t, init, n_iter, burn_in, seed, threads):
    post = hk.mcmc(x, t, n_iter=n_iter, burn_in=burn_in, chains=1, sample=SAMPLED, fixed=FIXED, init=init,
                   seed=seed, progress=False, backend="cpu", threads=threads)
    return post, {k: float(post.draws[k].mean()) for k in SAMPLED}


def run(args) -> dict:
    df = load_dc_gunshots("no_holidays")
    x = df[["x_km", "y_km"]].to_numpy()
    t = df["t_hours"].to_numpy()
    start = 4.0 * YEAR_H
    spacing = args.spacing_weeks * 168.0
    holidays = _holidays(float(t.max()))
    origins = [_clear_origin(start + k * spacing, args.horizon_hours, holidays) for k in range(args.origins)]
    if np.any(np.diff(origins) < args.horizon_hours):
        raise SystemExit("forecast windows overlap after the holiday shifts; use a larger --spacing-weeks")
    if origins[-1] + args.horizon_hours > t.max():
        raise SystemExit(f"the last origin's window ends after the data ({t.max():.0f} h); use fewer origins")
    thr = args.threads
    region = float(np.prod(np.ptp(x, axis=0)))  # the data's bounding box (every event inside)
    t_all = time.perf_counter()
    m0 = t <= start
    t0 = time.perf_counter()
    mode = hk.posterior_mode(x[m0], t[m0], fixed=FIXED, backend="cpu", threads=thr)
    init = {k: mode[k] for k in SAMPLED}
    fit_seconds = time.perf_counter() - t0
    print(f"posterior mode on the first 4 years ({int(m0.sum()):,} events) in {fit_seconds:.1f} s: "
          + ", ".join(f"{k} = {v:.4g}" for k, v in init.items()), flush=True)
    post = None
    if args.fit == "once":
        t0 = time.perf_counter()
        post, init = _fit(x[m0], t[m0], init, args.n_iter, args.burn_in, args.seed, thr)
        fit_seconds += time.perf_counter() - t0
    rows = []
    score_seconds = 0.0
    hdr = (f"{'origin':>10} {'date':>10} {'events':>6} {'hist':>6} {'ES hawkes':>9} {'ES bg':>7} "
           f"{'gain/ev':>8} {'gain/ev model-bg':>16} {'gain vs Poisson':>15} {'theta':>6} {'omega':>6} {'h km':>6}")
    print(hdr, flush=True)
    for k, origin in enumerate(origins):
        if args.fit == "refit":
            m = t <= origin
            t0 = time.perf_counter()
            post, init = _fit(x[m], t[m], init, args.n_iter, args.burn_in, args.seed + k, thr)
            fit_seconds += time.perf_counter() - t0
        row = {"origin_hours": origin,
               "origin_date_approx": (FIRST_EVENT + datetime.timedelta(hours=origin)).date().isoformat(),
               "posterior_mean": dict(init)}
        t0 = time.perf_counter()
        for bg in ("origin", "model"):
            r = hk.forecast_score(post, x, t, origin=origin, horizon=args.horizon_hours, n_draws=args.n_draws,
                                  seed=args.seed + k, background=bg, poisson_lookback=4 * 168.0, region=region,
                                  backend="cpu", threads=thr)
            d = r.to_dict()
            for drop in ("origin", "horizon", "background", "reference_mu0", "backend", "n_draws"):
                d.pop(drop)
            d["background_mu0"] = float(r.background_mu0[0])
            lr = r.log_intensity - r.background_log_intensity  # per event, mean over draws
            d["events_log_ratio_above_1"] = int(np.sum(lr > 1.0))
            d["sum_log_ratio_above_1"] = float(lr[lr > 1.0].sum())
            d["sum_log_ratio_rest"] = float(lr[lr <= 1.0].sum())
            row[bg] = d
        score_seconds += time.perf_counter() - t0
        rows.append(row)
        o, mo = row["origin"], row["model"]
        print(f"{origin:>10.0f} {row['origin_date_approx']:>10} {o['n_events']:>6} {o['n_history']:>6} "
              f"{o['expected_count']:>9.1f} {o['background_expected_count']:>7.1f} {_f(o['information_gain']):>8.3f} "
              f"{_f(mo['information_gain']):>16.3f} {_f(o['information_gain_vs_poisson']):>15.3f} "
              f"{init['theta']:>6.3f} {init['omega']:>6.2f} {init['h']:>6.3f}", flush=True)
    summary = {}
    for bg in ("origin", "model"):
        n = np.array([r[bg]["n_events"] for r in rows], dtype=float)
        lh = np.array([r[bg]["log_score"] for r in rows])
        lb = np.array([r[bg]["background_log_score"] for r in rows])
        lp = np.array([-np.inf if r[bg]["poisson_log_score"] is None else r[bg]["poisson_log_score"] for r in rows])
        fin = np.isfinite(lp)
        summary[bg] = {
            "hawkes_vs_background_only": _gain(lh - lb, n),
            "hawkes_vs_poisson": _gain((lh - lp)[fin], n[fin]),
            "background_only_vs_poisson": _gain((lb - lp)[fin], n[fin]),
            "origins_with_event_outside_poisson_region": int(np.sum(~fin)),
            "events": int(n.sum()),
            "expected_events_hawkes": float(sum(r[bg]["expected_count"] for r in rows)),
            "expected_events_background_only": float(sum(r[bg]["background_expected_count"] for r in rows)),
            "min_draw_weight_ess": float(min(r[bg]["draw_weight_ess"] for r in rows)),
            "where_the_gain_comes_from": {
                "note": "per event, mean over draws of log lambda_hawkes - log lambda_background; the gain is "
                        "(sum over events - (expected_events_hawkes - expected_events_background_only)) / events "
                        "for plug-in parameters (the log-mean-exp over draws differs slightly)",
                "fraction_of_events_above_1_nat": float(sum(r[bg]["events_log_ratio_above_1"] for r in rows) / n.sum()),
                "sum_above_1_nat": float(sum(r[bg]["sum_log_ratio_above_1"] for r in rows)),
                "sum_other_events": float(sum(r[bg]["sum_log_ratio_rest"] for r in rows)),
            },
        }
    wall = time.perf_counter() - t_all
    return {
        "benchmark": "rolling-origin forecast evaluation, Hawkes vs background-only, DC gunshots (no holidays)",
        "command": "benchmarks/bench_hawkes_forecast.py " + " ".join(args.argv),
        "settings": {"quick": args.quick, "fit": args.fit, "origins": args.origins, "first_origin_hours": start,
                     "spacing_weeks": args.spacing_weeks, "horizon_hours": args.horizon_hours,
                     "n_draws": args.n_draws, "n_iter": args.n_iter, "burn_in": args.burn_in, "chains": 1,
                     "fixed": FIXED, "poisson_lookback_hours": 4 * 168.0, "poisson_region_km2": region,
                     "reference_mu0": "refit", "seed": args.seed, "threads": thr, "backend": "cpu"},
        "summary": summary,
        "seconds": {"total": wall, "fitting": fit_seconds, "scoring": score_seconds},
        "machine": {**machine_info(), "loadavg_end": os.getloadavg()},
        "per_origin": rows,
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fit once, 300 sweeps, 6 origins, 50 draws (< 1 min)")
    ap.add_argument("--fit", choices=("refit", "once"), default=None)
    ap.add_argument("--origins", type=int, default=None)
    ap.add_argument("--spacing-weeks", type=float, default=4.0)
    ap.add_argument("--horizon-hours", type=float, default=168.0)
    ap.add_argument("--n-draws", type=int, default=None)
    ap.add_argument("--n-iter", type=int, default=None)
    ap.add_argument("--burn-in", type=int, default=None)
    ap.add_argument("--seed", type=int, default=2021)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "hawkes_forecast.json"))
    args = ap.parse_args(argv)
    args.argv = list(argv) if argv is not None else __import__("sys").argv[1:]
    defaults = ({"fit": "once", "origins": 6, "n_draws": 50, "n_iter": 300, "burn_in": 100} if args.quick else
                {"fit": "refit", "origins": 26, "n_draws": 200, "n_iter": 1000, "burn_in": 300})
    for k, v in defaults.items():
        if getattr(args, k) is None:
            setattr(args, k, v)
    la0 = os.getloadavg()
    res = run(args)
    res["machine"]["loadavg_start"] = la0
    for bg, s in res["summary"].items():
        g = s["hawkes_vs_background_only"]
        p = s["hawkes_vs_poisson"]
        print(f"background={bg!r}: Hawkes vs background-only {g['pooled_nats_per_event']:.3f} +- {g['pooled_se']:.3f} "
              f"nats/event (pooled; mean of origins {g['mean_of_origins']:.3f} +- {g['mean_of_origins_se']:.3f}, "
              f"{g['origins_with_positive_gain']}/{g['origins']} origins positive); vs Poisson "
              f"{p['pooled_nats_per_event']:.3f} +- {p['pooled_se']:.3f}; {s['events']} events, expected "
              f"{s['expected_events_hawkes']:.0f} (Hawkes) / {s['expected_events_background_only']:.0f} (background)")
    print(f"wall {res['seconds']['total']:.1f} s (fitting {res['seconds']['fitting']:.1f} s, scoring "
          f"{res['seconds']['scoring']:.1f} s); load average {la0} -> {res['machine']['loadavg_end']}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
