"""``hphawkes kde``: kernel density (intensity) estimation of a point pattern in a study area."""
from __future__ import annotations

from ._common import add_engine_arguments

import argparse


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "kde",
        help="adaptive / cross-validated / fixed Gaussian KDE with edge correction (Zhang et al. 2017)",
        description=(
            "Fit a Gaussian kernel intensity estimate to the points of a CSV file inside a study area "
            "(an ESRI ASCII grid .asc/.asc.gz/.zip whose NODATA cells are outside, or a rectangle), "
            "select the bandwidth (Brunsdon's adaptive search, likelihood cross-validation, the rule of "
            "thumb, or a fixed value) and write the intensity surface (.asc + .png, events per unit area; "
            "it integrates to about n) and a JSON of the selected parameters."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    src = p.add_argument_group("input")
    src.add_argument("points", help="CSV file with a header row (.csv or .csv.gz)")
    src.add_argument("--x", default=None, help="column of the x coordinate (default: the first column)")
    src.add_argument("--y", default=None, help="column of the y coordinate (default: the second column)")
    win = src.add_mutually_exclusive_group(required=True)
    win.add_argument("--window", help="study-area raster (.asc, .asc.gz or .zip of one .asc); NODATA = outside")
    win.add_argument("--rectangle", nargs=4, type=float, metavar=("XMIN", "XMAX", "YMIN", "YMAX"),
                     help="rectangular study area (needs --cell-size)")
    src.add_argument("--cell-size", type=float, default=None, help="cell size of the --rectangle raster")
    a = p.add_argument_group("estimation")
    a.add_argument("--method", choices=("adaptive", "cv", "rule-of-thumb", "fixed"), default="adaptive")
    a.add_argument("--bandwidth", type=float, default=None, help="bandwidth for --method fixed (coordinate units)")
    a.add_argument("--no-edge-correction", action="store_true", help="do not renormalise kernels to the window")
    a.add_argument("--cutoff", type=float, default=3.0, help="kernel truncation, in bandwidths")
    add_engine_arguments(a)
    o = p.add_argument_group("output")
    o.add_argument("-o", "--out", default="kde_surface.asc", help="intensity surface (ESRI ASCII grid)")
    o.add_argument("--png", default="kde_surface.png", help="map of the surface with the points; '' to skip")
    o.add_argument("--json", default="kde_fit.json", help="selected parameters; '' to skip")
    o.add_argument("--quiet", action="store_true", help="no summary on stdout")
    p.set_defaults(func=_cmd_kde)


def _read_points(path, xcol, ycol):
    import numpy as np
    import pandas as pd

    df = pd.read_csv(path, skipinitialspace=True)
    if df.shape[1] < 2:
        raise ValueError(f"{path}: need at least two columns (x, y), found {list(df.columns)}")
    xcol = df.columns[0] if xcol is None else xcol
    ycol = df.columns[1] if ycol is None else ycol
    for c in (xcol, ycol):
        if c not in df.columns:
            raise ValueError(f"{path}: no column {c!r}; columns are {list(df.columns)}")
    return np.column_stack([pd.to_numeric(df[xcol], errors="raise"), pd.to_numeric(df[ycol], errors="raise")]).astype(float)


def _cmd_kde(args) -> int:
    import json

    from ..kde import Window, fit

    pts = _read_points(args.points, args.x, args.y)
    if args.window:
        window = Window.from_asc(args.window)
    else:
        if args.cell_size is None:
            raise ValueError("--rectangle needs --cell-size")
        window = Window.rectangle(*args.rectangle, args.cell_size)
    res = fit(pts, window, method=args.method, bandwidth=args.bandwidth,
              edge_correction=not args.no_edge_correction, cutoff=args.cutoff,
              backend=args.backend, threads=args.threads)
    surface = res.density_surface()
    surface.to_asc(args.out)
    if args.png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7, 6))
        surface.plot(ax=ax)
        title = f"KDE ({res.method}): h = {res.h:.4g}" + (f", alpha = {res.alpha:.3g}" if res.alpha is not None else "")
        ax.set_title(title)
        fig.savefig(args.png, dpi=120, bbox_inches="tight")
        plt.close(fig)
    if args.json:
        d = res.to_dict()
        d.update({"points_file": str(args.points), "surface_file": str(args.out),
                  "surface_integral": surface.integral(), "window_area": window.area})
        with open(args.json, "w") as fh:
            json.dump(d, fh, indent=2)
    if not args.quiet:
        print(res.summary())
        print(f"surface -> {args.out}" + (f", {args.png}" if args.png else "") + (f"; parameters -> {args.json}" if args.json else ""))
    return 0
