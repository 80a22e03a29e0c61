"""``hphawkes scan``: Bernoulli spatial scan on a CSV file or on SaTScan input files."""
from __future__ import annotations

import argparse
import sys


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "scan",
        help="Kulldorff's Bernoulli spatial scan statistic (SaTScan-compatible)",
        description=(
            "Purely spatial Bernoulli scan with circular windows and Monte Carlo p-values "
            "(SaTScan semantics). Input: a CSV with one row per location (or per person: "
            "counts 0/1), or SaTScan files (--cas with --ctl or --pop, and --geo). "
            "Coordinates are planar (Euclidean distances); latitude/longitude is used as is. "
            "Writes the cluster table (CSV) and a PNG map of the clusters."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    src = p.add_argument_group("input")
    src.add_argument("csv", nargs="?", help="CSV file with a header row (alternative to the SaTScan files)")
    src.add_argument("--x", default="x", help="CSV column of the x coordinate")
    src.add_argument("--y", default="y", help="CSV column of the y coordinate")
    src.add_argument("--cases", default="cases", help="CSV column of the case counts")
    src.add_argument("--controls", default="controls",
                     help="CSV column of the control counts (ignored when --population is given)")
    src.add_argument("--population", default=None,
                     help="CSV column of the population; controls = population - cases")
    src.add_argument("--id", default=None, help="CSV column of location ids (default: row number)")
    src.add_argument("--cas", help="SaTScan case file (.cas)")
    src.add_argument("--ctl", help="SaTScan control file (.ctl)")
    src.add_argument("--pop", help="SaTScan population file (.pop); controls = population - cases")
    src.add_argument("--geo", help="SaTScan coordinates file (.geo)")
    a = p.add_argument_group("analysis")
    a.add_argument("--max-population", type=float, default=0.5,
                   help="maximum window population, fraction of the total, in (0, 0.5]")
    a.add_argument("--replicates", type=int, default=999, help="Monte Carlo replicates")
    a.add_argument("--direction", choices=("high", "low", "both"), default="high")
    a.add_argument("--grid-cell", type=float, default=None,
                   help="centre circles on a regular grid of this cell side instead of on the locations")
    a.add_argument("--seed", type=int, default=None)
    a.add_argument("--backend", choices=("auto", "cpu", "gpu", "emulator"), default="auto")
    a.add_argument("--threads", type=int, default=None)
    o = p.add_argument_group("output")
    o.add_argument("-o", "--out", default="scan_clusters.csv", help="cluster table (CSV)")
    o.add_argument("--png", default="scan_clusters.png", help="map of the clusters (PNG); '' to skip")
    o.add_argument("--quiet", action="store_true", help="no progress bar and no summary")
    p.set_defaults(func=_cmd_scan)


def _cmd_scan(args) -> int:
    import numpy as np
    import pandas as pd

    from . import bernoulli, read_satscan

    if args.csv and args.cas:
        raise ValueError("give either a CSV file or SaTScan files (--cas ...), not both")
    if args.csv:
        df = pd.read_csv(args.csv)
        need = [args.x, args.y, args.cases] + ([args.population] if args.population else [args.controls])
        if args.id:
            need.append(args.id)
        missing = [c for c in need if c not in df.columns]
        if missing:
            raise ValueError(f"{args.csv}: column(s) {missing} not found; columns are {list(df.columns)}")
        cases = df[args.cases].to_numpy()
        if args.population:
            controls = df[args.population].to_numpy() - cases
        else:
            controls = df[args.controls].to_numpy()
        ids = df[args.id].to_numpy() if args.id else None
        coords = df[[args.x, args.y]].to_numpy(dtype=float)
    elif args.cas:
        if not args.geo:
            raise ValueError("--geo is required with --cas")
        df = read_satscan(args.cas, control_file=args.ctl, population_file=args.pop, geo_file=args.geo)
        coords = df[["x", "y"]].to_numpy(dtype=float)
        cases, controls, ids = df["cases"].to_numpy(), df["controls"].to_numpy(), df["location_id"].to_numpy()
    else:
        raise ValueError("no input: give a CSV file or SaTScan files (--cas, --ctl/--pop, --geo)")
    res = bernoulli(coords, cases, controls, max_population=args.max_population, n_replicates=args.replicates,
                    direction=args.direction, grid_cell=args.grid_cell, seed=args.seed, backend=args.backend,
                    threads=args.threads, location_ids=ids, progress=not args.quiet)
    res.to_csv(args.out)
    if args.png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        ax = res.plot()
        ax.figure.savefig(args.png, dpi=120, bbox_inches="tight")
        plt.close(ax.figure)
    if not args.quiet:
        print(res.summary())
        print(f"wrote {args.out}" + (f" and {args.png}" if args.png else ""), file=sys.stderr)
    return 0
