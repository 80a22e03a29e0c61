"""``hphawkes scan``: Bernoulli or Poisson spatial scan on a CSV file, on SaTScan input files or a SaTScan
parameter file; the cluster table and map, or SaTScan's whole set of outputs into a folder.
``hphawkes scan temporal|seasonal|svtt|ordinal|multinomial CSV ...``: the other analyses of hp.scan on a
CSV file, their keyword arguments as options."""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from ._common import (CliError, _positive_int, add_engine_arguments, add_output_arguments, atomic_output_dir,
                      check_output_dir, check_output_file)

#: options of the CSV / SaTScan-file analyses that a parameter file sets itself: refused with 'run PRM'
#: rather than ignored (the .prm's values would win silently)
_PRM_SETS = ("--x", "--y", "--cases", "--controls", "--population", "--expected", "--covariate", "--id", "--covariates",
             "--model", "--max-population", "--distance", "--max-distance", "--min-cases", "--window", "--penalty",
             "--direction", "--grid-cell", "--centres", "--circle-population", "--max-circle-population")


class _Given(argparse.Action):
    """Store (or append, or set True) an option's value and note the option as given on the command
    line, so that 'run PRM' can refuse the options the parameter file sets even when a given value
    equals the default."""

    def __init__(self, option_strings, dest, mode="store", **kwargs):
        self.mode = mode
        if mode == "store_true":
            kwargs.update(nargs=0, default=False)
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        if self.mode == "store_true":
            values = True
        elif self.mode == "append":
            values = list(getattr(namespace, self.dest, None) or []) + [values]
        setattr(namespace, self.dest, values)
        given = dict(getattr(namespace, "_given_options", None) or {})
        given.setdefault(self.option_strings[-1], option_string)
        namespace._given_options = given


_DEFAULT_OUT = "scan_clusters.csv"
_DEFAULT_PNG = "scan_clusters.png"


def _out_is_folder(out) -> bool:
    """``--out`` names a folder (SaTScan's whole set) unless it is a ``.csv`` file (the cluster table)."""
    return Path(out).suffix.lower() != ".csv"


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "scan",
        help="Kulldorff's spatial scan statistic, Bernoulli or discrete Poisson (SaTScan-compatible)",
        description=(
            "Purely spatial scan with circular windows and Monte Carlo p-values (SaTScan semantics): "
            "--model bernoulli (cases and controls) or poisson (cases and population, optionally "
            "adjusted for covariate categories). Input: a CSV with one row per location (or per person: "
            "counts 0/1), or SaTScan files (--cas with --ctl or --pop, and --geo). "
            "Coordinates are planar (Euclidean distances) unless --distance great_circle (latitude, "
            "longitude in degrees; km). "
            "Writes the cluster table (--out FILE.csv) and a PNG map of the clusters, or with --out FOLDER "
            "SaTScan's whole set of outputs (report, .col/.gis/.rr/.llr tables, cluster geometry, HTML and PNG maps)."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        epilog="Other analyses, each with its own options (see their --help): "
               + "; ".join(f"hphawkes scan {k}: {v}" for k, v in ANALYSES.items()) + ".",
    )
    p.__class__ = _ScanParser  # 'hphawkes scan ANALYSIS ...' goes to that analysis's parser
    src = p.add_argument_group("input")
    src.add_argument("csv", nargs="*", metavar="CSV | run PRM",
                     help="CSV file with a header row (alternative to the SaTScan files), or 'run' and a SaTScan "
                          "parameter file (.prm): the analysis it describes, every model and data source "
                          "(CSV, dBase, shapefile) hp.scan.run_prm reads (then only --replicates, --seed, "
                          "--backend, --threads and the outputs are taken from the command line; with --out FOLDER "
                          "also SaTScan's cluster line list when the case file names line-list columns)")
    src.add_argument("--x", action=_Given, default="x", help="CSV column of the x coordinate")
    src.add_argument("--y", action=_Given, default="y", help="CSV column of the y coordinate")
    src.add_argument("--cases", action=_Given, default="cases", help="CSV column of the case counts")
    src.add_argument("--controls", action=_Given, default="controls",
                     help="CSV column of the control counts (Bernoulli; ignored when --population is given)")
    src.add_argument("--population", action=_Given, default=None,
                     help="CSV column of the population (Bernoulli: controls = population - cases; Poisson: required)")
    src.add_argument("--expected", action=_Given, default=None,
                     help="CSV column of expected cases (Poisson, instead of the population)")
    src.add_argument("--covariate", action=_Given, mode="append", default=None, metavar="COLUMN",
                     help="CSV column of a covariate category (Poisson; repeat for several); rows are location x "
                          "category, expected counts by indirect standardisation")
    src.add_argument("--id", action=_Given, default=None, help="CSV column of location ids (default: row number)")
    src.add_argument("--cas", help="SaTScan case file (.cas)")
    src.add_argument("--ctl", help="SaTScan control file (.ctl; Bernoulli)")
    src.add_argument("--pop", help="SaTScan population file (.pop); Bernoulli: controls = population - cases")
    src.add_argument("--geo", help="SaTScan coordinates file (.geo)")
    src.add_argument("--covariates", action=_Given, mode="store_true",
                     help="Poisson with SaTScan files: adjust for the covariate columns of the .cas/.pop files")
    a = p.add_argument_group("analysis")
    a.add_argument("--model", action=_Given, choices=("bernoulli", "poisson"), default="bernoulli")
    a.add_argument("--max-population", action=_Given, type=float, default=0.5,
                   help="maximum window population, fraction of the total, in (0, 0.5]")
    a.add_argument("--distance", action=_Given, choices=("euclidean", "great_circle"), default="euclidean",
                   help="great_circle: coordinates are latitude, longitude (degrees), distances in km")
    a.add_argument("--max-distance", action=_Given, type=float, default=None,
                   help="maximum circle radius (coordinate units; km with --distance great_circle)")
    a.add_argument("--min-cases", action=_Given, type=int, default=2,
                   help="Poisson: minimum cases in a high-rate cluster")
    a.add_argument("--window", action=_Given, choices=("circle", "ellipse"), default="circle",
                   help="Poisson: circular or SaTScan's elliptic windows")
    a.add_argument("--penalty", action=_Given, choices=("none", "medium", "strong"), default="medium",
                   help="Poisson, elliptic windows: non-compactness penalty")
    a.add_argument("--replicates", type=int, default=None, help="Monte Carlo replicates (default 999, or the .prm's)")
    a.add_argument("--direction", action=_Given, choices=("high", "low", "both"), default="high")
    a.add_argument("--grid-cell", action=_Given, type=float, default=None,
                   help="centre circles on a regular grid of this cell side instead of on the locations")
    a.add_argument("--centres", action=_Given, default=None, metavar="CSV",
                   help="centre circles on the points of this CSV (its --x and --y columns; SaTScan's grid file) "
                        "instead of on the locations")
    a.add_argument("--circle-population", action=_Given, default=None, metavar="COLUMN",
                   help="CSV column of each location's population in SaTScan's max circle size file: circles also "
                        "hold at most --max-circle-population of its total")
    a.add_argument("--max-circle-population", action=_Given, type=float, default=0.5,
                   help="with --circle-population: the largest circle, fraction of its total, in (0, 0.5]")
    a.add_argument("--seed", type=int, default=None)
    add_engine_arguments(a)
    o = p.add_argument_group("output")
    o.add_argument("-o", "--out", default=_DEFAULT_OUT,
                   help="a .csv file: the cluster table; anything else is a folder (written atomically) that gets "
                        "SaTScan's whole set: the report (.txt), the .col/.gis/.rr/.llr tables as CSV (and dBase with "
                        "pyogrio), the cluster polygons as GeoJSON (KML for lat/long; Shapefile and GeoPackage with "
                        "pyogrio), the HTML map (self-contained; a Leaflet one with folium) and the PNG map")
    o.add_argument("--overwrite", action="store_true",
                   help="with an --out folder: replace an existing one (refused otherwise, even when empty)")
    o.add_argument("--png", default=_DEFAULT_PNG,
                   help="map of the clusters (PNG); '' to skip; with an --out folder it is written there")
    o.add_argument("--quiet", action="store_true", help="no progress bar and no summary")
    p.set_defaults(func=_cmd_scan)


def _csv_input(args):
    import pandas as pd

    df = pd.read_csv(args.csv)
    poisson = args.model == "poisson"
    need = [args.x, args.y, args.cases]
    if poisson:
        if not (args.population or args.expected):
            raise CliError("--model poisson with a CSV needs --population (or --expected)")
        need += [c for c in (args.population, args.expected) if c] + list(args.covariate or [])
    else:
        need.append(args.population or args.controls)
    if args.id:
        need.append(args.id)
    if args.circle_population:
        need.append(args.circle_population)
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise CliError(f"{args.csv}: column(s) {missing} not found; columns are {list(df.columns)}")
    for c in need:
        if c not in (args.id, *(args.covariate or [])) and not pd.api.types.is_numeric_dtype(df[c]):
            bad = pd.to_numeric(df[c], errors="coerce").isna() & df[c].notna()
            row = int(bad.to_numpy().argmax()) if bad.any() else 0
            raise CliError(f"{args.csv}: column {c!r} must be numeric; row {row + 2} holds {df[c].iloc[row]!r}")
    data = {"coords": df[[args.x, args.y]].to_numpy(dtype=float), "cases": df[args.cases].to_numpy(),
            "location_ids": df[args.id].to_numpy() if args.id else None}
    if args.circle_population:
        data["circle_population"] = df[args.circle_population].to_numpy(dtype=float)
    if poisson:
        data["population"] = df[args.population].to_numpy() if args.population else None
        if args.expected:
            data["expected"] = df[args.expected].to_numpy()
        if args.covariate:
            data["covariates"] = df[list(args.covariate)]
    elif args.population:
        data["controls"] = df[args.population].to_numpy() - data["cases"]
    else:
        data["controls"] = df[args.controls].to_numpy()
    return data


def _centres(args):
    """The circle centres of ``--centres`` (a CSV with the ``--x`` and ``--y`` columns; with SaTScan input files,
    columns ``x`` and ``y``)."""
    import pandas as pd

    try:
        df = pd.read_csv(args.centres)
    except (OSError, ValueError) as exc:
        raise CliError(f"--centres {args.centres}: cannot be read ({exc})") from None
    cols = [args.x, args.y] if args.csv else ["x", "y"]
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise CliError(f"--centres {args.centres}: column(s) {missing} not found; columns are {list(df.columns)}")
    bad = df[cols].apply(pd.to_numeric, errors="coerce").isna().any(axis=1)
    if bad.any():
        row = int(bad.to_numpy().argmax())
        raise CliError(f"--centres {args.centres}: row {row + 2} is not a pair of numbers: {df[cols].iloc[row].tolist()}")
    return df[cols].to_numpy(dtype=float)


def _satscan_input(args):
    from ..scan import read_satscan

    if not args.geo:
        raise CliError("--geo is required with --cas")
    poisson = args.model == "poisson"
    if poisson and args.ctl:
        raise CliError("--model poisson takes --pop, not --ctl (the Poisson model has no control file)")
    if args.covariates and not poisson:
        raise CliError("--covariates needs --model poisson")
    df = read_satscan(args.cas, control_file=args.ctl, population_file=args.pop, geo_file=args.geo,
                      model=args.model, covariates=bool(args.covariates))
    data = {"coords": df[["x", "y"]].to_numpy(dtype=float), "cases": df["cases"].to_numpy()}
    if poisson:
        data["population"] = df["population"].to_numpy()
        if args.covariates:
            data["covariates"] = df["category"].to_numpy()  # rows are location x category: ids repeat
        data["location_ids"] = df["location_id"].to_numpy()
    else:
        data["controls"] = df["controls"].to_numpy()
        data["location_ids"] = df["location_id"].to_numpy()
    return data


def _cmd_scan(args) -> int:
    from ..scan import bernoulli, poisson, run_prm

    prm = None
    if args.csv and args.csv[0] == "run":
        if len(args.csv) != 2:
            raise CliError("usage: hphawkes scan run PARAMETER_FILE.prm [options]")
        prm = args.csv[1]
        args.csv = None
    elif len(args.csv) > 1:
        raise CliError(f"one CSV file at most, got {len(args.csv)}: {' '.join(args.csv)}")
    else:
        args.csv = args.csv[0] if args.csv else None
    if prm and (args.cas or args.ctl or args.pop or args.geo):
        raise CliError("with 'run PRM' the input files come from the parameter file: drop --cas/--ctl/--pop/--geo")
    given = [opt for opt in _PRM_SETS if opt in (getattr(args, "_given_options", None) or {})]
    if prm and given:
        raise CliError(f"{given[0]} is not taken with 'run PRM': the parameter file sets the analysis (input columns, "
                       f"model, window, limits); drop {', '.join(given)} or edit {prm} (with 'run', the command line "
                       f"sets only --replicates, --seed, --backend, --threads, --out, --png and --quiet)")
    if args.csv and args.cas:
        raise CliError("give either a CSV file or SaTScan files (--cas ...), not both")
    # before any work
    folder = _out_is_folder(args.out)
    if Path(args.out).suffix.lower() in (".txt", ".tsv", ".json", ".xlsx", ".parquet", ".dbf"):
        raise CliError(f"--out {args.out}: give a .csv file (the cluster table) or a folder name (SaTScan's whole "
                       f"set of outputs); {Path(args.out).suffix} files are not written")
    if folder:
        if Path(args.out).expanduser().is_dir() and not args.overwrite:
            # an existing folder, even an empty one, is written only when asked: a mistyped table name
            # must not turn into a folder of results replacing one
            raise CliError(f"--out {args.out}: is a folder that exists; pass --overwrite to replace it, give a new "
                           f"folder name for SaTScan's set of outputs, or a .csv file for the cluster table alone")
        check_output_dir(args.out, args.overwrite, "--out")
        if args.png not in ("", _DEFAULT_PNG):
            raise CliError(f"--png {args.png}: with an --out folder the PNG map is written into the folder; give "
                           f"--png '' to skip it, or a .csv --out to write the table and --png separately")
        outputs = None
    elif args.overwrite:
        raise CliError(f"--overwrite applies to an --out folder; --out {args.out} is a .csv file (replaced as it is)")
    else:
        outputs = [("--out", check_output_file(args.out, "--out"))]
    if outputs and args.png:
        outputs.append(("--png", check_output_file(args.png, "--png")))
        _check_figure_format(args.png)
        if outputs[1][1].resolve() == outputs[0][1].resolve():
            raise CliError(f"--png {args.png} is the --out file too: give the map and the table different names")
    if prm:
        res = run_prm(prm, n_replicates=args.replicates, seed=args.seed, backend=args.backend, threads=args.threads,
                      progress=not args.quiet)
        if not hasattr(res, "location_table"):  # a purely temporal, seasonal or SVTT analysis: no map
            text = _write_time_outputs(res, args, folder, Path(prm).stem, None if folder else outputs[0][1])
            if not args.quiet:
                print(text)
            return 0
        if folder:
            from ..scan._prm import prm_arguments

            from ..scan.data_sources import DataSource

            spec = prm_arguments(prm)
            case = spec["files"]["case_file"]
            extra = None
            if isinstance(case, DataSource) and case.linelist:  # SaTScan's cluster line list beside the report
                from ..scan.linelist import prm_linelist

                def extra(tmp, stem):
                    prm_linelist(res, spec, case, tmp / f"{stem}.txt")
            _write_folder(res, args, spec["kwargs"].get("study_period", spec["dates"]["study_period"]),
                          spec["kwargs"].get("penalty"), Path(prm).stem, spec["outputs"]["p_values"], extra=extra)
        else:
            _write_outputs(res, outputs)
        if not args.quiet:
            print(res.summary())
        return 0
    if args.replicates is None:
        args.replicates = 999
    if args.csv:
        data = _csv_input(args)
    elif args.cas:
        data = _satscan_input(args)
    else:
        raise CliError("no input: give a CSV file or SaTScan files (--cas, --ctl/--pop, --geo)")
    if args.circle_population and not args.csv:
        raise CliError("--circle-population names a column of the CSV input (SaTScan files: use 'run PRM' with "
                       "UseMaxCirclePopulationFileOption=y)")
    if args.circle_population:
        data["max_circle_population"] = args.max_circle_population
    if args.centres:
        data["centres"] = _centres(args)
    kw = dict(max_population=args.max_population, max_distance=args.max_distance, distance=args.distance,
              n_replicates=args.replicates,
              direction=args.direction, grid_cell=args.grid_cell, seed=args.seed, backend=args.backend,
              threads=args.threads, progress=not args.quiet)
    if args.model == "poisson":
        extra = {"window": "ellipse", "penalty": args.penalty} if args.window == "ellipse" else {}
        res = poisson(data.pop("coords"), data.pop("cases"), data.pop("population"), min_cases=args.min_cases,
                      **extra, **data, **kw)
    else:
        if args.window != "circle":
            raise CliError("--window ellipse needs --model poisson")
        more = {k: data[k] for k in ("circle_population", "max_circle_population", "centres") if k in data}
        res = bernoulli(data["coords"], data["cases"], data["controls"], location_ids=data["location_ids"], **more,
                        **kw)
    if folder:
        _write_folder(res, args, None, args.penalty if args.window == "ellipse" else None, "scan")
    else:
        _write_outputs(res, outputs)
    if not args.quiet:
        print(res.summary())
        print(f"wrote {args.out}" + (f" and {args.png}" if args.png and not folder else ""), file=sys.stderr)
    return 0


def _write_folder(res, args, study_period, penalty, stem, p_values="monte_carlo", extra=None) -> None:
    """SaTScan's whole set into the ``--out`` folder (atomically: the folder appears only when
    every file was written; ``extra(folder, stem)`` writes further files, e.g. the line list). What an
    optional package missing leaves out is said on stderr."""
    import importlib.util

    import numpy as np

    from ..scan.outputs import write_satscan

    have_gis = all(importlib.util.find_spec(m) is not None for m in ("pyogrio", "shapely"))
    have_folium = importlib.util.find_spec("folium") is not None
    geometry = ["geojson"] + (["kml"] if res.distance == "great_circle" else []) + \
        (["shp", "gpkg"] if have_gis else []) + ["html"] + (["leaflet"] if have_folium else [])
    missing = ([] if have_gis else ["dBase tables, Shapefile and GeoPackage (pip install pyogrio shapely)"]) + \
        ([] if have_folium else ["the Leaflet map (pip install folium)"])
    if getattr(res, "non_euclidean", False):
        geometry = []
        missing = ["the cluster geometry and maps (windows from a neighbors file have no circles)"] + missing[:1]
    if res.model == "space_time_permutation":
        missing.append("the .rr table (the space-time permutation model's counts the most likely cluster's window)")
    with atomic_output_dir(args.out, args.overwrite, "--out") as tmp:
        try:
            write_satscan(res, tmp / f"{stem}.txt", dbase=have_gis, geometry=geometry, study_period=study_period,
                          penalty=penalty, p_values=p_values)
            if extra is not None:
                extra(tmp, stem)
        except OSError as exc:
            raise CliError(f"--out {args.out}: cannot be written ({exc.strerror or exc})") from None
        if args.png and getattr(res, "non_euclidean", False) and np.isnan(np.asarray(res._loc_coords, float)).all():
            missing.append("the PNG (the locations have no coordinates)")
        elif args.png:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt

            from ..scan.plot import plot_clusters

            ax = plot_clusters(res, path=tmp / f"{stem}.png")
            plt.close(ax.figure)
    if missing:  # said even with --quiet: files a user may expect are not there
        print(f"--out {args.out}: not written: {'; '.join(missing)}", file=sys.stderr)


def _check_figure_format(path) -> None:
    """Refuse, before any work, a ``--png`` file whose suffix matplotlib cannot write."""
    from matplotlib.backend_bases import FigureCanvasBase

    suffix = Path(path).suffix.lower().lstrip(".")
    formats = FigureCanvasBase.get_supported_filetypes()
    if suffix and suffix not in formats:
        raise CliError(f"--png {path}: matplotlib cannot write .{suffix} files; use one of "
                       f"{', '.join('.' + f for f in sorted(formats))}")


def _write_outputs(res, outputs) -> None:
    """The table (and the PNG) written to temporary files beside their targets and moved into
    place only when all were written: a failing figure never leaves a new table behind. ``outputs``:
    ``[("--out", path), ("--png", path)]``; a failure names the option of the file it concerns."""
    tmps = []
    try:
        for flag, path in outputs:
            try:
                fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.tmp-", suffix=path.suffix, dir=path.resolve().parent)
            except OSError as exc:
                raise CliError(f"{flag} {path}: cannot be written ({exc.strerror or exc})") from None
            os.close(fd)
            tmps.append(Path(tmp))
        res.to_csv(tmps[0])
        if len(outputs) > 1:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt

            from ..scan.plot import plot_clusters

            try:
                ax = plot_clusters(res, path=tmps[1])
            except (ValueError, OSError) as exc:  # e.g. a suffix matplotlib has no format for
                raise CliError(f"--png {outputs[1][1]}: the map could not be written "
                               f"({' '.join(str(exc).split())})") from None
            plt.close(ax.figure)
        for tmp, (flag, path) in zip(tmps, outputs):
            try:
                os.replace(tmp, path)
            except OSError as exc:
                raise CliError(f"{flag} {path}: cannot be written ({exc.strerror or exc})") from None
    finally:
        for tmp in tmps:
            tmp.unlink(missing_ok=True)


# published SaTScan results reproduced by `hphawkes reproduce scan-grave` / `scan-ny`
_PUBLISHED = {
    "scan-grave": (
        "grave data (smacpod), SaTScan v9.3.1 Bernoulli, high rates, 50% maximum, 999 replications "
        "(github jfrench/smacpod tests/satscangraveout.txt)",
        [("126 124 125 132 120 113 140 141 112 41 136 30 133 108 31 143 110 139 75", 19, 11, 7.419340, 0.050),
         ("66 89 71", 3, 3, 4.808517, 0.665),
         ("77 78", 2, 2, 3.177442, 0.997)],
    ),
    "scan-ny": (
        "NY leukaemia (smerc), SaTScan v9.6, discrete Poisson, 10% maximum, lat/long as Cartesian, 999 "
        "replications (github jfrench/smerc tests/satscan_ny_out.txt)",
        [("49 48 50 47 1 15 51 2 13 14 3 35 16 52 36 37 12 11 5 17 10 4 6 38 18 9", 95249, 85, 11.577255, 0.001),
         ("89 88 87 84 90 86 92 85", 34083, 38, 9.019716, 0.013),
         ("112 113 115 111 116 219 117 123 218 114 122 110 124 220 118 133 121 125 216 120 134 217 126 139 215 "
          "132 141 140 127 142 138 131 119", 78280, 64, 6.114140, 0.216),
         ("62 64 67 65", 24571, 25, 4.651839, 0.609),
         ("46 45 41 54 44 43 53", 29782, 28, 4.169203, 0.755),
         ("266 281 267 265", 9840, 12, 3.363518, 0.961),
         ("166 159 167", 8839, 11, 3.209485, 0.976)],
    ),
    "scan-nycfever": (
        "NYC emergency-room fever visits, SaTScan's sample NYCSpaceTimePermutation.prm run unchanged: "
        "space-time permutation, prospective, circles up to 3 km, 1-7 days ending 2001/11/24; SaTScan 10.3 "
        "(scanstatistics/satscan @0cd87a6) run on that file, its p-values by sequential Monte Carlo",
        [("11418 11415 11419 11435 11416 11421 11451 11375 11417", None, 4, 3.845418, 0.242),
         ("11372", None, 2, 3.164201, 0.575),
         ("10472", None, 2, 2.137259, 0.966)],
    ),
}


def register_reproduce(subparsers) -> None:
    for name, (desc, _) in _PUBLISHED.items():
        p = subparsers.add_parser(name, help=f"spatial scan: {desc.split(',')[0]} vs SaTScan's published clusters")
        p.add_argument("--replicates", type=_positive_int, default=999)
        p.add_argument("--seed", type=int, default=2010)
        add_engine_arguments(p)
        add_output_arguments(p, None)
        p.set_defaults(func=_cmd_reproduce, analysis_name=name)


def _cmd_reproduce(args) -> int:
    """Run the analysis, print the comparison with SaTScan's published clusters and, with
    ``--out DIR``, write ``clusters.csv``, ``locations.csv``, ``comparison.csv``, ``summary.txt`` and
    ``clusters.png`` into DIR (atomically: DIR appears only when everything was written)."""
    import contextlib

    if args.seed is not None and args.seed < 0:
        raise CliError(f"--seed must be a non-negative integer, got {args.seed}")
    if args.out is not None:
        check_output_dir(args.out, args.overwrite)  # before any work
    with (atomic_output_dir(args.out, args.overwrite) if args.out is not None
          else contextlib.nullcontext(None)) as tmp:
        ok, res, table, text = _reproduce(args)
        print(text)
        if tmp is not None:
            res.to_csv(tmp / "clusters.csv")
            res.location_table().to_csv(tmp / "locations.csv", index=False)
            table.to_csv(tmp / "comparison.csv", index=False)
            (tmp / "summary.txt").write_text(res.summary() + "\n\n" + text + "\n")
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt

            from ..scan.plot import plot_clusters

            ax = plot_clusters(res, path=tmp / "clusters.png")
            plt.close(ax.figure)
    if args.out is not None:
        print(f"wrote {args.out}/ (clusters.csv, locations.csv, comparison.csv, summary.txt, clusters.png)",
              file=sys.stderr)
    return 0 if ok else 1


def _reproduce(args):
    import pandas as pd

    from .. import datasets
    from ..scan import bernoulli, poisson

    desc, published = _PUBLISHED[args.analysis_name]
    kw = dict(n_replicates=args.replicates, seed=args.seed, backend=args.backend, threads=args.threads,
              progress=False)
    if args.analysis_name == "scan-nycfever":
        import warnings

        from ..scan import run_prm

        with warnings.catch_warnings():  # the file asks for SaTScan's own map outputs
            warnings.simplefilter("ignore")
            res = run_prm(datasets.satscan_sample_path("NYCSpaceTimePermutation.prm"), **kw)
    elif args.analysis_name == "scan-grave":
        g = datasets.load_grave()
        res = bernoulli(g[["x", "y"]].to_numpy(float), g["case"].to_numpy(), 1 - g["case"].to_numpy(),
                        max_population=0.5, location_ids=g["id"].to_numpy(), **kw)
    else:
        ny = datasets.load_ny_leukemia()
        res = poisson(ny[["latitude", "longitude"]].to_numpy(float), ny["cases_floor"].to_numpy(),
                      ny["population"].to_numpy(), max_population=0.1, location_ids=ny["id"].to_numpy(), **kw)
    lines = [f"Published: {desc}",
             f"{'#':>2} {'same locations':>14} {'pop ours/pub':>17} {'cases':>9} {'LLR ours':>10} {'LLR pub':>10} "
             f"{'p ours':>7} {'p pub':>6}"]
    rows = []
    ok = True
    for k, (ids, popn, cases, llr, p) in enumerate(published):
        if k >= len(res.clusters):
            lines.append(f"{k + 1:>2} missing")
            rows.append({"cluster": k + 1, "same_locations": False, "population_published": popn,
                         "cases_published": cases, "llr_published": llr, "p_published": p})
            ok = False
            continue
        row = res.clusters.iloc[k]
        same = {str(v) for v in row.location_ids} == set(ids.split())
        # the published LLRs have 6 decimals: ours must round to them
        ok &= same and abs(row.log_likelihood_ratio - llr) <= 5e-7 + 1e-12
        lines.append(f"{k + 1:>2} {str(same):>14} {row.population:>8}/{'-' if popn is None else popn:<8} "
                     f"{row.cases:>4}/{cases:<4} "
                     f"{row.log_likelihood_ratio:>10.6f} {llr:>10.6f} {row.p_value:>7.3f} {p:>6.3f}")
        rows.append({"cluster": k + 1, "same_locations": same, "population": row.population,
                     "population_published": popn, "cases": row.cases, "cases_published": cases,
                     "llr": row.log_likelihood_ratio, "llr_published": llr, "p_value": row.p_value,
                     "p_published": p})
    lines.append("clusters match" if ok else "MISMATCH")
    return ok, res, pd.DataFrame(rows), "\n".join(lines)


# ---------------------------------------------------------------------------- the other analyses
#: ``hphawkes scan ANALYSIS``: the analyses with a parser of their own (their arguments differ from
#: the spatial scan's; the spatial scan's positional CSV argument rules out argparse sub-commands)
ANALYSES = {
    "temporal": "Kulldorff's purely temporal scan (retrospective or --prospective), Poisson or Bernoulli",
    "seasonal": "the seasonal temporal scan: the days of the year as a closed loop",
    "svtt": "spatial variation in temporal trends (Poisson): circles whose trend differs from the rest",
    "ordinal": "the spatial scan for ordered categories (e.g. severity grades), one row per case",
    "multinomial": "the spatial scan for unordered categories (e.g. subtypes), one row per case",
}


class _ScanParser(argparse.ArgumentParser):
    """``hphawkes scan``'s parser: ``hphawkes scan temporal|seasonal|svtt|ordinal|multinomial ...``
    hands the arguments after the analysis's name to that analysis's parser."""

    def parse_known_args(self, args=None, namespace=None):
        args = list(sys.argv[1:] if args is None else args)
        if args and args[0] in ANALYSES:
            return analysis_parser(args[0], self.prog).parse_known_args(args[1:], namespace)
        return super().parse_known_args(args, namespace)


def analysis_parser(name: str, prog: str = "hphawkes scan") -> argparse.ArgumentParser:
    """The parser of ``hphawkes scan NAME`` (NAME one of :data:`ANALYSES`): a CSV file and the
    keyword arguments of ``hp.scan.NAME`` as options."""
    p = argparse.ArgumentParser(
        prog=f"{prog} {name}", formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        description=f"{ANALYSES[name]} (hp.scan.{name}; SaTScan semantics). Input: a CSV file with a header row. "
                    f"Writes the cluster table (--out FILE.csv) or, with --out FOLDER, "
                    + ("SaTScan's whole set of outputs." if name in ("ordinal", "multinomial") else
                       "the cluster table (<name>.col.csv), the simulated maxima (<name>.llr.csv) and a text "
                       "summary (<name>.txt)."))
    p.add_argument("csv", help="CSV file with a header row")
    timed = name in ("temporal", "seasonal", "svtt")
    spatial = name in ("svtt", "ordinal", "multinomial")
    if spatial:
        p.add_argument("--x", default="x", help="column of the x coordinate (latitude with great_circle)")
        p.add_argument("--y", default="y", help="column of the y coordinate (longitude with great_circle)")
        p.add_argument("--id", default=None, help="column of location ids (default: row number)")
    if timed:
        p.add_argument("--time", default="time", help="column of the day (dates, or whole numbers)")
        p.add_argument("--cases", default="cases", help="column of the case counts")
        p.add_argument("--study-period", nargs=2, default=None, metavar=("START", "END"),
                       help="first and last day (dates, or whole numbers as --time); default the data's")
    if name in ("temporal", "seasonal"):
        p.add_argument("--model", choices=("poisson", "bernoulli"), default="poisson")
        p.add_argument("--controls", default="controls", help="column of the control counts (--model bernoulli)")
        p.add_argument("--max-temporal-size", type=float, default=0.5,
                       help="longest window, fraction of the study period, in (0, 0.9]")
        p.add_argument("--max-temporal-length", type=int, default=None,
                       help="longest window in days instead (overrides --max-temporal-size)")
        p.add_argument("--min-temporal-length", type=int, default=1, help="shortest window, days")
        p.add_argument("--min-cases", type=int, default=2, help="minimum cases in a high-rate window")
    if name in ("temporal", "svtt"):
        p.add_argument("--time-aggregation", type=int, default=1, help="days (or time units) per time unit")
    if name == "temporal":
        p.add_argument("--prospective", action="store_true", help="only windows ending on the last unit")
    if name == "svtt":
        p.add_argument("--population", default="population", help="column of the location's population")
    if name in ("ordinal", "multinomial"):
        p.add_argument("--category", default="category",
                       help="column of each case's category" + (" (numbers, ordered by value)"
                                                                 if name == "ordinal" else " (labels)"))
        p.add_argument("--count", default=None, help="column of the cases of each row (default: one per row)")
        p.add_argument("--max-distance", type=float, default=None, help="maximum circle radius")
        p.add_argument("--grid-cell", type=float, default=None,
                       help="centre circles on a regular grid of this cell side instead of on the locations")
    if spatial:
        p.add_argument("--max-population", type=float, default=0.5,
                       help="largest window, fraction of the total " + ("population" if name == "svtt" else "cases")
                            + ", in (0, 0.5]")
        p.add_argument("--distance", choices=("euclidean", "great_circle"), default="euclidean")
    if name != "multinomial":
        p.add_argument("--direction", choices=("high", "low", "both"), default="high")
    p.add_argument("--replicates", type=_positive_int, default=999, help="Monte Carlo replicates")
    p.add_argument("--seed", type=int, default=None)
    add_engine_arguments(p)
    p.add_argument("-o", "--out", default=f"scan_{name}_clusters.csv",
                   help="a .csv file: the cluster table; anything else is a folder (written atomically)")
    p.add_argument("--overwrite", action="store_true", help="with an --out folder: replace an existing one")
    p.add_argument("--quiet", action="store_true", help="no progress bar and no summary")
    p.set_defaults(func=_cmd_analysis, analysis=name, png="")
    return p


def _column(df, col, path, numeric=True):
    if col not in df.columns:
        raise CliError(f"{path}: column {col!r} not found; columns are {list(df.columns)}")
    if numeric:
        import pandas as pd

        if not pd.api.types.is_numeric_dtype(df[col]):
            bad = pd.to_numeric(df[col], errors="coerce").isna()
            row = int(bad.to_numpy().argmax())
            raise CliError(f"{path}: column {col!r} must be numeric; row {row + 2} holds {df[col].iloc[row]!r}")
    return df[col].to_numpy()


def _days(values, what):
    """Whole numbers (kept) or dates (as datetime64[D]) of a --time column or --study-period."""
    import warnings

    import pandas as pd

    s = pd.Series(values)
    if pd.api.types.is_numeric_dtype(s):
        return s.to_numpy()
    num = pd.to_numeric(s, errors="coerce")
    if num.notna().all():
        return num.to_numpy()
    try:
        with warnings.catch_warnings():  # pandas' note that it guessed the format: the dates are checked below
            warnings.simplefilter("ignore", UserWarning)
            return pd.to_datetime(s).to_numpy().astype("datetime64[D]")
    except (ValueError, TypeError) as exc:
        raise CliError(f"{what}: neither whole numbers nor dates ({' '.join(str(exc).split())})") from None


def _cmd_analysis(args) -> int:
    import numpy as np
    import pandas as pd

    from .. import scan

    name = args.analysis
    folder = _out_is_folder(args.out)
    if Path(args.out).suffix.lower() in (".txt", ".tsv", ".json", ".xlsx", ".parquet", ".dbf"):
        raise CliError(f"--out {args.out}: give a .csv file (the cluster table) or a folder name")
    if folder:  # before any work
        if Path(args.out).expanduser().is_dir() and not args.overwrite:
            raise CliError(f"--out {args.out}: is a folder that exists; pass --overwrite to replace it, or give a "
                           f"new folder name or a .csv file")
        check_output_dir(args.out, args.overwrite, "--out")
    elif args.overwrite:
        raise CliError(f"--overwrite applies to an --out folder; --out {args.out} is a .csv file (replaced as it is)")
    else:
        out_file = check_output_file(args.out, "--out")
    try:
        df = pd.read_csv(args.csv)
    except FileNotFoundError:
        raise CliError(f"{args.csv}: no such file") from None
    run = dict(n_replicates=args.replicates, seed=args.seed, backend=args.backend, threads=args.threads,
               progress=not args.quiet)
    kw = {}
    if name in ("temporal", "seasonal", "svtt"):
        if args.time not in df.columns:
            raise CliError(f"{args.csv}: column {args.time!r} not found; columns are {list(df.columns)}")
        times = _days(df[args.time], f"{args.csv}: column {args.time!r}")
        cases = _column(df, args.cases, args.csv)
        if args.study_period is not None:
            kw["study_period"] = tuple(_days(args.study_period, "--study-period"))
    if name in ("svtt", "ordinal", "multinomial"):
        coords = np.column_stack([_column(df, args.x, args.csv), _column(df, args.y, args.csv)]).astype(float)
        ids = _column(df, args.id, args.csv, numeric=False) if args.id else None
        kw.update(max_population=args.max_population, distance=args.distance, location_ids=ids)
    if name in ("temporal", "seasonal"):
        kw.update(model=args.model, max_temporal_size=args.max_temporal_size,
                  max_temporal_length=args.max_temporal_length, min_temporal_length=args.min_temporal_length,
                  min_cases=args.min_cases, direction=args.direction)
        if args.model == "bernoulli":
            kw["controls"] = _column(df, args.controls, args.csv)
        if name == "temporal":
            res = scan.temporal(times, cases, time_aggregation=args.time_aggregation, prospective=args.prospective,
                                **kw, **run)
        else:
            res = scan.seasonal(times, cases, **kw, **run)
    elif name == "svtt":
        res = scan.svtt(coords, times, cases, _column(df, args.population, args.csv),
                        time_aggregation=args.time_aggregation, direction=args.direction, **kw, **run)
    else:
        cat = _column(df, args.category, args.csv, numeric=name == "ordinal")
        if args.count is not None:  # one row per case
            n = _column(df, args.count, args.csv)
            if (n < 0).any() or (n != np.round(n)).any():
                row = int(np.argmax((n < 0) | (n != np.round(n))))
                raise CliError(f"{args.csv}: column {args.count!r} must hold whole numbers >= 0; row {row + 2} "
                               f"holds {n[row]!r}")
            rep = np.repeat(np.arange(len(df)), n.astype(np.int64))
            coords, cat = coords[rep], cat[rep]
            kw["location_ids"] = None if ids is None else ids[rep]
        kw.update(max_distance=args.max_distance, grid_cell=args.grid_cell)
        if name == "ordinal":
            res = scan.ordinal(coords, cat, direction=args.direction, **kw, **run)
        else:
            res = scan.multinomial(coords, cat, **kw, **run)
    if name in ("ordinal", "multinomial"):
        if folder:
            _write_folder(res, args, None, None, name)
        else:
            _write_outputs(res, [("--out", out_file)])
        text = res.summary()
    else:
        text = _write_time_outputs(res, args, folder, name, None if folder else out_file)
    if not args.quiet:
        print(text)
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


def _time_table(res):
    """The cluster table of a temporal or SVTT result as written (location ids space-separated)."""
    df = res.clusters.copy()
    if "location_ids" in df:
        df["location_ids"] = [" ".join(str(v) for v in ids) for ids in df["location_ids"]]
    return df


def _write_time_outputs(res, args, folder, stem, out_file) -> str:
    """The cluster table of a temporal, seasonal or SVTT result to ``out_file`` (hp.scan's columns), or
    into the ``--out`` folder the files SaTScan writes for that analysis, with its columns
    (:func:`~hphawkes_py.scan.outputs.write_satscan`: ``<stem>.txt``, ``.col``, ``.gis``, ``.rr`` where
    SaTScan has one, ``.llr``; dBase beside the CSV where pyogrio is installed); returns the summary."""
    import importlib.util

    import pandas as pd

    from ..scan.outputs import write_satscan

    table = _time_table(res)
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        text = repr(res) + "\n\n" + (table.to_string(index=False) if len(table) else "no cluster")
    if not folder:
        tmp = out_file.with_name(f".{out_file.name}.tmp")
        try:
            table.to_csv(tmp, index=False)
            os.replace(tmp, out_file)
        except OSError as exc:
            raise CliError(f"--out {out_file}: cannot be written ({exc.strerror or exc})") from None
        finally:
            tmp.unlink(missing_ok=True)
        return text
    have_gis = all(importlib.util.find_spec(m) is not None for m in ("pyogrio", "shapely"))
    with atomic_output_dir(args.out, args.overwrite, "--out") as tmp:
        try:
            write_satscan(res, tmp / f"{stem}.txt", dbase=have_gis)
        except OSError as exc:
            raise CliError(f"--out {args.out}: cannot be written ({exc.strerror or exc})") from None
    if not have_gis:  # said even with --quiet: files a user may expect are not there
        print(f"--out {args.out}: not written: dBase tables (pip install pyogrio shapely)", file=sys.stderr)
    return text
