"""``hphawkes kde``: kernel density (intensity) estimation of a point pattern in a study area,
and ``hphawkes reproduce kde-redwood``."""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from ._common import CliError, add_engine_arguments, add_output_arguments, atomic_output_dir, check_output_dir

METHODS = ("adaptive", "cv", "rule-of-thumb", "fixed")


def _positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not v > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return v


def _finite_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return v


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "kde",
        help="adaptive / cross-validated / fixed Gaussian KDE with edge correction (Zhang et al. 2017)",
        description=(
            "Fit a Gaussian kernel intensity estimate to the points of a CSV file inside a study area "
            "(an ESRI ASCII grid .asc/.asc.gz/.zip whose NODATA cells are outside, or a rectangle), "
            "select the bandwidth (Brunsdon's adaptive search, likelihood cross-validation, the rule of "
            "thumb, or a fixed value) and write into the --out folder the intensity surface "
            "(surface.asc and surface.png, events per unit area; it integrates to about n) and fit.json "
            "with the selected parameters. The folder appears only when everything was written."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    src = p.add_argument_group("input")
    src.add_argument("points", help="CSV file with a header row (.csv or .csv.gz)")
    src.add_argument("--x", default=None, help="column of the x coordinate (default: the first column)")
    src.add_argument("--y", default=None, help="column of the y coordinate (default: the second column)")
    win = src.add_mutually_exclusive_group(required=True)
    win.add_argument("--window", help="study-area raster (.asc, .asc.gz or .zip of one .asc); NODATA = outside")
    win.add_argument("--rectangle", nargs=4, type=_finite_float, metavar=("XMIN", "XMAX", "YMIN", "YMAX"),
                     help="rectangular study area (needs --cell-size)")
    src.add_argument("--cell-size", type=_positive_float, default=None, help="cell size of the --rectangle raster")
    a = p.add_argument_group("estimation")
    a.add_argument("--method", choices=METHODS, default="adaptive")
    a.add_argument("--bandwidth", type=_positive_float, default=None,
                   help="bandwidth for --method fixed (coordinate units)")
    a.add_argument("--no-edge-correction", action="store_true", help="do not renormalise kernels to the window")
    a.add_argument("--cutoff", type=_positive_float, default=3.0, help="kernel truncation, in bandwidths (inf = none)")
    a.add_argument("--dtype", choices=("float64", "float32"), default="float64", help="precision of the kernel sums")
    add_engine_arguments(a)
    o = p.add_argument_group("output")
    add_output_arguments(o, "kde_out")
    o.add_argument("--no-png", action="store_true", help="do not draw surface.png")
    o.add_argument("--quiet", action="store_true", help="no progress bar and no summary on stdout")
    p.set_defaults(func=_cmd_kde)


def _read_points(path, xcol, ycol):
    import numpy as np
    import pandas as pd

    path = Path(path)
    if not path.exists():
        raise CliError(f"{path}: file not found")
    if path.is_dir():
        raise CliError(f"{path}: is a folder, expected a CSV file")
    try:
        df = pd.read_csv(path, skipinitialspace=True)
    except (ValueError, OSError, EOFError) as exc:  # pandas parser errors, broken gzip, ...
        raise CliError(f"{path}: cannot be read as CSV ({' '.join(str(exc).split())})") from None
    if df.shape[1] < 2:
        raise CliError(f"{path}: need at least two columns (x, y), found {list(df.columns)}")
    xcol = df.columns[0] if xcol is None else xcol
    ycol = df.columns[1] if ycol is None else ycol
    cols = []
    for opt, c in (("--x", xcol), ("--y", ycol)):
        if c not in df.columns:
            raise CliError(f"{path}: no column {c!r} ({opt}); columns are {list(df.columns)}")
        v = pd.to_numeric(df[c], errors="coerce")
        bad = v.isna() | ~np.isfinite(v.to_numpy(dtype=float, na_value=np.nan))
        if bad.any():
            i = int(np.argmax(bad.to_numpy()))
            raise CliError(f"{path}: column {c!r} row {i + 2} (counting the header as row 1) is "
                           f"{df[c].iloc[i]!r}, not a finite number")
        cols.append(v.to_numpy(dtype=float))
    return np.column_stack(cols)


def _window_from_args(args):
    from ..kde import Window

    if args.window:
        return Window.from_asc(args.window)
    if args.cell_size is None:
        raise CliError("--rectangle needs --cell-size")
    return Window.rectangle(*args.rectangle, args.cell_size)


def _cmd_kde(args) -> int:
    import numpy as np

    from ..kde import fit

    # everything checkable before the search: options, output folder, inputs
    if args.method == "fixed" and args.bandwidth is None:
        raise CliError("--method fixed needs --bandwidth")
    if args.method != "fixed" and args.bandwidth is not None:
        raise CliError(f"--bandwidth is only used with --method fixed (got --method {args.method})")
    if args.rectangle is None and args.cell_size is not None:
        raise CliError("--cell-size is only used with --rectangle")
    check_output_dir(args.out, args.overwrite)
    pts = _read_points(args.points, args.x, args.y)
    window = _window_from_args(args)
    res = fit(pts, window, method=args.method, bandwidth=args.bandwidth,
              edge_correction=not args.no_edge_correction, cutoff=args.cutoff, progress=not args.quiet,
              backend=args.backend, threads=args.threads, dtype=np.dtype(args.dtype))
    surface = res.density_surface()
    with atomic_output_dir(args.out, args.overwrite) as tmp:
        surface.to_asc(tmp / "surface.asc")
        if not args.no_png:
            title = f"KDE ({res.method}): h = {res.h:.4g}" + (f", alpha = {res.alpha:.3g}" if res.alpha is not None else "")
            _save_surface_png(surface, tmp / "surface.png", title)
        d = res.to_dict()
        d.update({"points_file": str(args.points), "surface_file": "surface.asc",
                  "surface_integral": surface.integral(), "window_area": window.area})
        (tmp / "fit.json").write_text(json.dumps(d, indent=2))
    if not args.quiet:
        print(res.summary())
        print(f"surface.asc{'' if args.no_png else ', surface.png'} and fit.json -> {args.out}")
    return 0


def _save_surface_png(surface, path, title, **kwargs):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..kde.plot import plot_surface

    fig, ax = plt.subplots(figsize=(7, 6))
    try:
        plot_surface(surface, ax, **kwargs)
        ax.set_title(title)
        fig.savefig(path, dpi=120, bbox_inches="tight")
    finally:
        plt.close(fig)
