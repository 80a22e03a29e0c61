"""``hphawkes kde``: kernel density (intensity) estimation of a point pattern in a study area,
and ``hphawkes reproduce kde-redwood``."""
from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from ._common import CliError, add_engine_arguments, add_output_arguments, atomic_output_dir, check_output_dir

METHODS = ("adaptive", "abramson", "cv", "rule-of-thumb", "fixed")


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
            "(an ESRI ASCII grid .asc/.asc.gz/.zip whose NODATA cells are outside, a GeoTIFF whose nodata/zero "
            "cells are outside, polygons in GeoJSON/Shapefile, or a rectangle), "
            "select the bandwidth (Brunsdon's adaptive search, likelihood cross-validation, the rule of "
            "thumb, or a fixed value) and write into the --out folder the intensity surface "
            "(surface.asc and surface.png, events per unit area; it integrates to about n) and fit.json "
            "with the selected parameters (and surface.tif, with the window's CRS, for a GeoTIFF or polygon "
            "window when rasterio is installed). The folder appears only when everything was written."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    src = p.add_argument_group("input")
    src.add_argument("points", help="CSV file with a header row (.csv or .csv.gz)")
    src.add_argument("--x", default=None, help="column of the x coordinate (default: the first column)")
    src.add_argument("--y", default=None, help="column of the y coordinate (default: the second column)")
    win = src.add_mutually_exclusive_group(required=True)
    win.add_argument("--window", help="study-area raster (.asc, .asc.gz or .zip of one .asc; NODATA = outside), "
                     "GeoTIFF (.tif; nodata/zero = outside) or polygons (.geojson/.json/.shp/.gpkg, needs "
                     "--cell-size); GIS files need pip install 'hphawkes_py[gis]'")
    win.add_argument("--rectangle", nargs=4, type=_finite_float, metavar=("XMIN", "XMAX", "YMIN", "YMAX"),
                     help="rectangular study area (needs --cell-size)")
    src.add_argument("--cell-size", type=_positive_float, default=None, help="cell size of the --rectangle raster or of a polygon --window")
    crs = p.add_argument_group("coordinate reference systems (need the gis extra; nothing is reprojected silently)")
    crs.add_argument("--points-crs", default=None, metavar="CRS",
                     help="CRS of the points (e.g. EPSG:4326); refused when it is not the window's, unless "
                          "--reproject-points")
    crs.add_argument("--reproject-points", action="store_true",
                     help="reproject the points from --points-crs into the window's CRS")
    crs.add_argument("--window-crs", default=None, metavar="CRS",
                     help="reproject a GeoTIFF or polygon --window to this CRS (nearest neighbour for rasters; "
                          "--cell-size in its units)")
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


_GEOTIFF = (".tif", ".tiff")
_VECTOR = (".geojson", ".json", ".shp", ".gpkg")


def _window_from_args(args):
    from ..kde import Window

    if args.window:
        name = str(args.window).lower()
        is_vector = name.endswith(_VECTOR)
        is_tif = name.endswith(_GEOTIFF)
        if args.cell_size is not None and not (is_vector or (is_tif and args.window_crs)):
            raise CliError("--cell-size is only used with --rectangle, a polygon --window (.geojson/.json/.shp/.gpkg) "
                           "or a GeoTIFF --window reprojected by --window-crs")
        if args.window_crs and not (is_tif or is_vector):
            raise CliError("--window-crs reprojects a GeoTIFF or polygon --window (an ASCII grid carries no CRS)")
        try:
            if is_tif:
                return Window.from_geotiff(args.window, crs=args.window_crs, cell_size=args.cell_size)
            if is_vector:
                if args.cell_size is None:
                    raise CliError(f"--window {args.window}: a polygon window needs --cell-size")
                return Window.from_vector(args.window, args.cell_size, crs=args.window_crs)
        except ImportError as e:  # the gis extra is missing: one line naming the pip command
            raise CliError(str(e)) from None
        return Window.from_asc(args.window)
    if args.window_crs:
        raise CliError("--window-crs reprojects a GeoTIFF or polygon --window, not a --rectangle")
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
    check_output_dir(args.out, args.overwrite)
    pts = _read_points(args.points, args.x, args.y)
    window = _window_from_args(args)
    points_crs = args.points_crs
    if args.reproject_points:
        if points_crs is None or window.crs is None:
            raise CliError("--reproject-points needs --points-crs and a window with a CRS (a GeoTIFF or polygon file)")
        from ..kde import reproject_points

        try:
            pts = reproject_points(pts, points_crs, window.crs)
        except ImportError as e:
            raise CliError(str(e)) from None
        points_crs = window.crs
    res = fit(pts, window, method=args.method, bandwidth=args.bandwidth,
              edge_correction=not args.no_edge_correction, cutoff=args.cutoff, progress=not args.quiet,
              backend=args.backend, threads=args.threads, dtype=np.dtype(args.dtype), points_crs=points_crs)
    surface = res.density_surface()
    with atomic_output_dir(args.out, args.overwrite) as tmp:
        surface.to_asc(tmp / "surface.asc")
        tif = _write_geotiff_if_gis(args, surface, tmp / "surface.tif")
        if not args.no_png:
            title = f"KDE ({res.method}): h = {res.h:.4g}" + (f", alpha = {res.alpha:.3g}" if res.alpha is not None else "")
            _save_surface_png(surface, tmp / "surface.png", title)
        d = res.to_dict()
        d.update({"points_file": str(args.points), "surface_file": "surface.asc", "geotiff_file": tif,
                  "crs": None if window.crs is None else str(window.crs),
                  "surface_integral": surface.integral(), "window_area": window.area})
        (tmp / "fit.json").write_text(json.dumps(d, indent=2))
    if not args.quiet:
        print(res.summary())
        print(f"surface.asc{'' if args.no_png else ', surface.png'} and fit.json -> {args.out}")
    return 0


def _write_geotiff_if_gis(args, surface, path):
    """surface.tif beside surface.asc when the window came from a GIS file (and rasterio is there)."""
    name = str(args.window or "").lower()
    if not name.endswith(_GEOTIFF + _VECTOR):
        return None
    try:
        import rasterio  # noqa: F401
    except ImportError:
        return None
    surface.to_geotiff(path)
    return path.name


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


# ---------------------------------------------------------------------------- reproduce
#: Zhang, Zhu & Huang (2017), Fig. 7 (redwood, 3 decimals / 2 for alpha) and Table 1 (sim50000 times, s)
PAPER_REDWOOD = {"rule-of-thumb": {"h": 0.123}, "cv": {"h": 0.045}, "adaptive": {"h": 0.035, "alpha": 1.47}}
PAPER_SIM50000_SECONDS = {"1 core": 1459.6, "32 cores": 63.6, "GPU (GTX 480)": 2.1}


def register_reproduce(subparsers) -> None:
    """Add ``hphawkes reproduce kde-redwood`` and ``kde-sim50000``."""
    r = subparsers.add_parser(
        "kde-redwood",
        help="Zhang et al. (2017) Fig. 7: redwood bandwidths (rule of thumb, likelihood CV, adaptive h and alpha)",
        description="Fit the 62 redwood seedlings on the authors' 128 x 128 raster by the rule of thumb, "
                    "likelihood cross-validation and Brunsdon's adaptive search; compare h and alpha with the "
                    "paper's Fig. 7 (0.123; 0.045; 0.035 and 1.47); with --out DIR, write table.csv, summary.json "
                    "and surfaces.png into DIR (atomically).")
    add_engine_arguments(r)
    add_output_arguments(r, None)
    r.set_defaults(func=_cmd_reproduce_redwood)
    s = subparsers.add_parser(
        "kde-sim50000",
        help="Zhang et al. (2017) Table 1: adaptive KDE of 50,000 simulated points on a 160,000-cell raster",
        description="Brunsdon's adaptive search and the intensity surface for the paper's pntsSim50000 on "
                    "maskSim160000 (--full), or a 5,000-point subsample (--quick, default), with the paper's times "
                    "beside ours; with --out DIR, write table.csv, summary.json and surface.png into DIR "
                    "(atomically).")
    mode = s.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="5,000 of the 50,000 points (default)")
    mode.add_argument("--full", action="store_true", help="all 50,000 points, as in the paper")
    add_engine_arguments(s)
    add_output_arguments(s, None)
    s.set_defaults(func=_cmd_reproduce_sim)


def _cmd_reproduce_redwood(args) -> int:
    import time

    import pandas as pd

    from .. import datasets
    from ..kde import Window, fit

    if args.out is not None:
        check_output_dir(args.out, args.overwrite)  # before any work
    pts, mask_path = datasets.load_redwood()
    window = Window.from_asc(mask_path)
    rows, fits = [], {}
    for method in ("rule-of-thumb", "cv", "adaptive"):
        t0 = time.perf_counter()
        f = fit(pts, window, method=method, progress=False, backend=args.backend, threads=args.threads)
        secs = time.perf_counter() - t0
        fits[method] = f
        paper = PAPER_REDWOOD[method]
        rows.append({"method": method, "h": f.h, "alpha": f.alpha, "paper_h": paper["h"],
                     "paper_alpha": paper.get("alpha"), "h_3_decimals_match": round(f.h, 3) == paper["h"],
                     # the search's final alpha step is 0.1/32 and the paper rounds to 2 decimals
                     "alpha_within_0.01": (None if f.alpha is None else abs(f.alpha - paper["alpha"]) <= 0.01),
                     "log_likelihood": f.log_likelihood, "n_iter": f.n_iter, "seconds": secs, "backend": f.backend})
    table = pd.DataFrame(rows)
    ok = bool(table["h_3_decimals_match"].all()) and bool(table["alpha_within_0.01"].dropna().all())
    with pd.option_context("display.width", 160):
        print(table.drop(columns=["backend"]).to_string(index=False))
    print("matches the paper's Fig. 7" if ok else "DIFFERS from the paper's Fig. 7")
    if args.out is None:
        return 0 if ok else 1
    with atomic_output_dir(args.out, args.overwrite) as tmp:
        table.to_csv(tmp / "table.csv", index=False)
        (tmp / "summary.json").write_text(json.dumps(
            {"analysis": "kde-redwood", "paper": "Zhang, Zhu & Huang (2017), Fig. 7", "matches_paper": ok,
             "n": int(len(pts)), "window": repr(window), "fits": {m: f.to_dict() for m, f in fits.items()}},
            indent=2, default=str))
        _save_panels([(f"{m}: h = {f.h:.3f}" + (f", alpha = {f.alpha:.2f}" if f.alpha is not None else ""),
                       f.density_surface()) for m, f in fits.items()], tmp / "surfaces.png")
    print(f"table.csv, summary.json, surfaces.png -> {args.out}")
    return 0 if ok else 1


def _cmd_reproduce_sim(args) -> int:
    import time

    import numpy as np
    import pandas as pd

    from .. import datasets
    from ..kde import Window, fit

    if args.out is not None:
        check_output_dir(args.out, args.overwrite)
    pts = datasets.load_zhang2017_points("sim50000")
    if not args.full:
        pts = pts[np.random.default_rng(2017).choice(len(pts), 5000, replace=False)]
    window = Window.from_asc(datasets.zhang2017_mask_path("sim160000"))
    t0 = time.perf_counter()
    f = fit(pts, window, method="adaptive", progress=True, backend=args.backend, threads=args.threads)
    t_search = time.perf_counter() - t0
    t0 = time.perf_counter()
    surface = f.density_surface()
    t_surface = time.perf_counter() - t0
    row = {"n": len(pts), "cells": window.n_inside, "h": f.h, "alpha": f.alpha, "log_likelihood": f.log_likelihood,
           "n_iter": f.n_iter, "search_seconds": t_search, "surface_seconds": t_surface,
           "total_seconds": t_search + t_surface, "backend": f.backend, "threads": args.threads,
           "mode": "full" if args.full else "quick"}
    row.update({f"paper_seconds_{k}": v for k, v in PAPER_SIM50000_SECONDS.items()})
    table = pd.DataFrame([row])
    print(table.T.to_string(header=False))
    if args.out is None:
        return 0
    with atomic_output_dir(args.out, args.overwrite) as tmp:
        table.to_csv(tmp / "table.csv", index=False)
        (tmp / "summary.json").write_text(json.dumps({"analysis": "kde-sim50000", **row, "fit": f.to_dict()},
                                                     indent=2, default=str))
        _save_panels([(f"sim50000 ({len(pts)} points): h = {f.h:.4f}, alpha = {f.alpha:.3f}", surface)],
                     tmp / "surface.png", points=False)
    print(f"table.csv, summary.json, surface.png -> {args.out}")
    return 0


def _save_panels(panels, path, points=True):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..kde.plot import plot_surface

    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.6), squeeze=False)
    try:
        for ax, (title, surface) in zip(axes[0], panels):
            plot_surface(surface, ax, points=points)
            ax.set_title(title, fontsize=9)
        fig.savefig(path, dpi=110, bbox_inches="tight")
    finally:
        plt.close(fig)
