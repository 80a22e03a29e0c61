"""``hphawkes mixture``: fit a truncated Dirichlet-process Gaussian mixture to a CSV or FCS file, or a
hierarchical DP mixture across the samples of a folder of FCS files; the ``reproduce mixture-faithful`` /
``mixture-flow`` analyses.

The command reads and checks everything (options, output folder, channels of every file) before the
fit, then writes its tables and figures into one folder atomically.
"""
from __future__ import annotations

import argparse
import fnmatch
import json
import re
import sys
from pathlib import Path

from ._common import CliError, add_engine_arguments, add_output_arguments, atomic_output_dir, check_output_dir

#: ``--partition`` choices and the loss names of :func:`hphawkes_py.mixture.point_partition`
PARTITION_LOSSES = {"vi": "VI", "binder": "binder"}
#: stored draws used for ``--partition`` when ``--partition-draws`` is not given (or all, if fewer)
DEFAULT_PARTITION_DRAWS = 100
#: point_partition keeps S x max_clusters x L counts and refuses more than this many; the CLI
#: checks the largest case (L = max_clusters = k) before the fit so that no run fails after it
SEARCH_COUNTS_LIMIT = 25_000_000
#: file names read from a folder (case-insensitive), as hp.mixture.read_fcs_folder reads them
FCS_PATTERN = "*.fcs"
_FCS_HEADER = re.compile(rb"^FCS\d\.\d")
#: the cofactor of --arcsinh / --transform arcsinh when --cofactor is not given
DEFAULT_COFACTOR = 150.0


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows ``(default: ...)`` only for options with a value to show; their help texts say what
    an unset option means."""

    def _get_help_string(self, action):
        if action.default is None or action.default is False or action.default == "" \
                or "(default" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


def _model_arguments(p, *, method="gibbs", n_iter=1000, burn_in=100, k=256) -> None:
    p.add_argument("-k", "--n-components", type=int, default=k, help="truncation level k")
    p.add_argument("--method", choices=("gibbs", "bem"), default=method,
                   help="blocked Gibbs sampler (posterior draws) or Bayesian EM (point estimates)")
    p.add_argument("--n-iter", type=int, default=n_iter,
                   help="Gibbs sweeps kept (before thinning) / BEM max iterations")
    p.add_argument("--burn-in", type=int, default=burn_in, help="Gibbs sweeps discarded first")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "mixture",
        help="truncated DP Gaussian mixture (Suchard et al. 2010) of a CSV or FCS file, or hierarchical DP "
             "mixture across a folder of FCS files (blocked Gibbs or Bayesian EM)",
        description=(
            "INPUT is a CSV file, an FCS file (2.0/3.0/3.1) or a folder of FCS files. A CSV file has one row "
            "per observation and a header row; every used cell must be a number (leave other columns out with "
            "--drop or choose with --columns). An FCS file is read compensated by its spillover matrix "
            "($SPILLOVER or SPILL; --no-compensate for raw values) and transformed as --transform says; a "
            "folder's *.fcs files are one sample each (sorted by name; the sample is the file name without "
            "its extension) and must have the same channels. A CSV or a single FCS file is fitted by the "
            "truncated DP mixture (--model tdp); a folder by the hierarchical DP mixture across samples "
            "(--model hdp: shared components, per-sample weights; --model tdp pools the samples' events "
            "into one mixture). The data are standardised per column for fitting; results are written in "
            "the units fitted (after the transform) into the folder --out (default: INPUT without its "
            "extension, then _mixture): params.json (weights, means, "
            "covariances, concentrations, priors, clusters, the input's channels and transform), "
            "components.csv (one row per component: weight, cluster, means, sds), clusters.csv (clusters "
            "by modal merging), labels.csv (each event's most probable component, its probability and its "
            "modal cluster) and cluster_summary.csv (events, share and per-column medians of each cluster "
            "of the reported partition: the --partition point estimate when given, else the modal "
            "clusters). A folder adds sample_proportions.csv (each sample's share of events in each "
            "cluster of the reported partition) and, for --model hdp, group_weights.csv and "
            "group_component_weights.csv (each sample's posterior mean weight of each cluster / component, "
            "with --level credible intervals after Gibbs). --partition adds partition.csv."
        ),
        formatter_class=_HelpFormatter,
    )
    p.add_argument("input", metavar="INPUT",
                   help="a CSV file (gzip accepted), an FCS file, or a folder of FCS files (one sample each)")
    c = p.add_argument_group("CSV input")
    c.add_argument("--columns", default=None, help="comma-separated columns to use (default: all but --drop)")
    c.add_argument("--drop", default="", help="comma-separated columns to leave out (e.g. Time)")
    c.add_argument("--arcsinh", default="", help="comma-separated columns to transform by arcsinh(x / cofactor)")
    f = p.add_argument_group("FCS input (a file or a folder)")
    f.add_argument("--channels", default=None,
                   help="comma-separated channels to fit, in this order, each by its name ($PnN, e.g. FL1-A) or "
                        "marker ($PnS, e.g. CD4) (default: every channel of the file, Time included)")
    f.add_argument("--transform", choices=("arcsinh", "logicle", "none"), default=None,
                   help="applied after compensation to the fitted channels except scatter (FSC*, SSC*) and Time: "
                        "arcsinh(x / cofactor), or logicle (Moore & Parks 2012; top of scale from each channel's "
                        "$PnR) (default: none)")
    f.add_argument("--no-compensate", action="store_true",
                   help="read raw values: do not apply the files' spillover matrices")
    p.add_argument("--cofactor", type=float, default=None,
                   help="cofactor of --arcsinh (CSV) or --transform arcsinh (FCS), in the data's units "
                        "(default 150, usual for fluorescence; about 5 for mass cytometry)")
    m = p.add_argument_group("model")
    which = m.add_mutually_exclusive_group()
    which.add_argument("--model", choices=("tdp", "hdp"), default=None,
                       help="tdp: one truncated DP mixture; hdp: hierarchical DP across the samples of a folder "
                            "(default: hdp for a folder, tdp otherwise)")
    which.add_argument("--hdp", dest="model", action="store_const", const="hdp", help="the same as --model hdp")
    _model_arguments(m)
    m.add_argument("--thin", type=int, default=1, help="Gibbs: store every THIN-th sweep")
    m.add_argument("--chains", type=int, default=1, help="Gibbs chains (TDP: R-hat/ESS in the summary)")
    m.add_argument("--init", choices=("kmeans++", "random"), default="kmeans++", help="initial component means")
    m.add_argument("--prune", type=float, default=0.0,
                   help="TDP with --method bem only: remove components whose weight falls below this")
    m.add_argument("--gamma0", type=float, default=10.0,
                   help="mu_j | Sigma_j ~ N(m0, gamma0 Sigma_j) (standardised units)")
    m.add_argument("--nu0", type=float, default=1.0, help="inverse-Wishart nu (df = nu0 + p + 1, scale nu0 I)")
    m.add_argument("--alpha-prior", type=float, nargs=2, default=None, metavar=("E0", "F0"),
                   help="Gamma(shape E0, rate F0) prior of the (top-level) concentration alpha "
                        "(default: 10 1 for tdp, 5 0.1 for hdp, as dpmix)")
    m.add_argument("--alpha0-prior", type=float, nargs=2, default=None, metavar=("G0", "H0"),
                   help="hdp only: Gamma(shape G0, rate H0) prior of the per-sample concentration alpha0 "
                        "(default: 0.1 0.1, as dpmix)")
    m.add_argument("--warm-start", action="store_true",
                   help="hdp with --method gibbs only: start the chain(s) from a Bayesian EM fit")
    m.add_argument("--no-relabel", action="store_true", help="Gibbs: do not relabel draws before averaging")
    m.add_argument("--seed", type=int, default=None,
                   help="random state of the fit; the --partition label draws and search use the two children "
                        "numpy.random.SeedSequence(seed).spawn(2)")
    o = p.add_argument_group("reported partition and intervals")
    o.add_argument("--partition", choices=tuple(PARTITION_LOSSES), default=None,
                   help="Gibbs only: write partition.csv, the point partition minimising the posterior expected "
                        "VI or Binder loss (SALSO search) over label draws from the stored draws "
                        "(hp.mixture.sample_label_draws, point_partition); it is then the reported partition")
    o.add_argument("--partition-draws", type=int, default=None,
                   help=f"stored draws (evenly spaced) that give the label draws of --partition (default: "
                        f"{DEFAULT_PARTITION_DRAWS}, or all if fewer are stored)")
    o.add_argument("--level", type=float, default=None,
                   help="hdp with --method gibbs: probability of the credible intervals of the per-sample "
                        "weights (default 0.95)")
    add_engine_arguments(p)
    add_output_arguments(p, None)
    p.add_argument("--png", action="store_true",
                   help="also write figures into --out: biaxial.png (events of the first two fitted columns, "
                        "coloured by the reported partition; with two or more columns), plot.png (tdp: the "
                        "fitted mixture) and, for a folder, proportions.png (each sample's share of each cluster)")
    p.add_argument("--quiet", action="store_true", help="no progress bar and no summary on stderr")
    p.set_defaults(func=_cmd_fit)


def _split(s):
    return [c.strip() for c in s.split(",") if c.strip()] if s else []


def read_numeric_csv(path, columns=None, drop=()):
    """Read the columns to fit from a CSV; every cell must be a finite number.

    Raises
    ------
    CliError
        A named column is missing, or a cell is empty, not a number, or infinite (the message names
        the file, the data row (1-based; the header is line 1) and the column).
    """
    import numpy as np
    import pandas as pd

    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False)
    except pd.errors.EmptyDataError:
        raise CliError(f"{path}: empty file (expected a header row and one row per observation)") from None
    except pd.errors.ParserError as exc:
        raise CliError(f"{path}: not a readable CSV file ({' '.join(str(exc).split())})") from None
    missing = [c for c in list(columns or []) + list(drop) if c not in df.columns]
    if missing:
        raise CliError(f"{path}: column(s) {missing} not found (columns: {list(df.columns)})")
    cols = list(columns) if columns else [c for c in df.columns if c not in drop]
    cols = [c for c in cols if c not in drop]
    if not cols:
        raise CliError(f"{path}: no column left to fit")
    out = {}
    for c in cols:
        text = df[c].str.strip()
        vals = pd.to_numeric(text, errors="coerce")
        bad = vals.isna().to_numpy() | ~np.isfinite(vals.to_numpy(dtype=float, na_value=np.nan))
        if bad.any():
            i = int(np.argmax(bad))
            cell = df[c].iloc[i]
            what = "an empty cell" if cell.strip() == "" else f"{cell!r}, not a finite number"
            raise CliError(
                f"{path}: row {i + 1} (line {i + 2}), column {c!r}: {what} ({int(bad.sum())} such cell(s) in "
                f"this column); fix the file, or leave the column out with --drop {c}"
            )
        out[c] = vals.to_numpy(dtype=float)
    return pd.DataFrame(out, columns=cols)


def _model(args, **over):
    from ..mixture import TDPGaussianMixture

    kw = dict(
        method=args.method, n_iter=args.n_iter, burn_in=args.burn_in, seed=args.seed, backend=args.backend,
        threads=getattr(args, "threads", None), progress=not getattr(args, "quiet", False),
    )
    kw.update(over)
    return TDPGaussianMixture(args.n_components, **kw)


def _write_fit(out: Path, model, X, extra: dict, png: bool, events=None) -> None:
    """The TDP mixture's params.json, components.csv, clusters.csv, labels.csv (and plot.png).

    ``events``: for events pooled from several samples, a DataFrame (sample, event) inserted after
    the ``row`` column of labels.csv.
    """
    import numpy as np
    import pandas as pd

    params = model.to_dict()
    params.update(extra)
    (out / "params.json").write_text(json.dumps(params, indent=1))
    model.to_frame().to_csv(out / "components.csv", index=False)
    names = model.feature_names_ or [f"x{a}" for a in range(model.p_)]
    clusters = pd.DataFrame({"cluster": np.arange(model.n_clusters_), "weight": model.cluster_weights_})
    for a, nm in enumerate(names):
        clusters[f"mean_{nm}"] = model.cluster_means_[:, a]
    for a, nm in enumerate(names):
        clusters[f"mode_{nm}"] = model.cluster_modes_[:, a]
    clusters["n_rows"] = np.bincount(model.cluster_labels_, minlength=model.n_clusters_)
    clusters.to_csv(out / "clusters.csv", index=False)
    P = model.predict_proba(X)
    labels = pd.DataFrame({"row": np.arange(len(X)), "component": P.argmax(1), "probability": P.max(1),
                           "cluster": model.cluster_labels_})
    if events is not None:
        labels.insert(1, "sample", events["sample"].to_numpy())
        labels.insert(2, "event", events["event"].to_numpy())
    labels.to_csv(out / "labels.csv", index=False)
    if png:
        import matplotlib

        matplotlib.use("Agg")
        fig = model.plot(X)
        fig.savefig(out / "plot.png", dpi=120, bbox_inches="tight")


# ---------------------------------------------------------------------------- input
def _input_kind(path) -> str:
    """``"folder"``, ``"fcs"`` (an .fcs name, or a file that starts as an FCS file does) or ``"csv"``."""
    p = Path(path).expanduser()
    if p.is_dir():
        return "folder"
    if not p.exists():
        raise CliError(f"{path}: no such file or folder (INPUT is a CSV file, an FCS file or a folder of FCS files)")
    if p.suffix.lower() == ".fcs":
        return "fcs"
    try:
        with open(p, "rb") as fh:
            head = fh.read(6)
    except OSError as exc:
        raise CliError(f"{path}: cannot be read ({exc.strerror})") from None
    return "fcs" if _FCS_HEADER.match(head) else "csv"


def _fcs_files(folder: Path) -> list:
    """The folder's FCS files in read_fcs_folder's order (file names sorted; not recursive)."""
    rx = re.compile(fnmatch.translate(FCS_PATTERN), re.IGNORECASE)
    files = sorted(f for f in folder.iterdir() if f.is_file() and rx.fullmatch(f.name))
    if not files:
        others = sum(1 for f in folder.iterdir())
        raise CliError(f"{folder}: no FCS file (*.fcs) in this folder ({others} other "
                       f"entr{'y' if others == 1 else 'ies'}); a folder INPUT holds one FCS file per sample")
    stems = [f.stem for f in files]
    dup = sorted({s for s in stems if stems.count(s) > 1})
    if dup:
        raise CliError(f"{folder}: several files share the sample names {dup} (names differ only in case of the "
                       f"extension); keep one file per sample")
    return files


def _read_fcs_file(path: Path, args):
    from ..mixture import read_fcs

    channels = _split(args.channels) if args.channels is not None else None
    transform = None if args.transform in (None, "none") else args.transform
    kw = dict(channels=channels, transform=transform, compensate=not args.no_compensate)
    if transform == "arcsinh":
        kw["cofactor"] = _cofactor(args)
    try:
        return read_fcs(path, **kw)
    except ImportError as exc:
        raise CliError(str(exc)) from None
    except ValueError as exc:
        msg = " ".join(str(exc).split())
        # read_fcs names the file first, then the argument: say the command line's option instead
        msg = re.sub(r"^('[^']*': )?channels:", r"\1--channels:", msg)
        if "compensate=False" in msg:
            msg += " (on the command line: --no-compensate)"
        raise CliError(msg if str(path) in msg else f"{path}: {msg}") from None


def _cofactor(args) -> float:
    return DEFAULT_COFACTOR if args.cofactor is None else args.cofactor


def _read_folder(folder: Path, args):
    """Every FCS file of the folder, read alike; refuses files whose channels, markers or
    compensation differ (a fit across samples must compare the same quantities)."""
    files = _fcs_files(folder)
    frames = [_read_fcs_file(f, args) for f in files]
    first, cols = files[0], list(frames[0].columns)
    for f, df in zip(files[1:], frames[1:]):
        if list(df.columns) != cols:
            hint = ("--channels picks channels named differently ($PnN) in these files; every sample must have "
                    "the same channels" if args.channels is not None else
                    "every sample must have the same channels; choose them with --channels A,B,...")
            raise CliError(f"{f.name} has the channels {list(df.columns)}, but {first.name} has {cols}: {hint}")
        for name, a, b in zip(cols, frames[0].attrs["markers"], df.attrs["markers"]):
            if a and b and a != b:
                raise CliError(f"channel {name} is the marker {b!r} in {f.name} but {a!r} in {first.name}: the "
                               f"samples measure different markers in the same channel and cannot be fitted together")
        if df.attrs["compensated"] != frames[0].attrs["compensated"]:
            done, raw = (f, first) if df.attrs["compensated"] else (first, f)
            raise CliError(f"{done.name} is compensated by its spillover matrix but {raw.name} has none: the "
                           f"samples would mix compensated and raw values; pass --no-compensate to fit raw "
                           f"values from every file")
    return frames, [f.stem for f in files]


def _read_input(args, kind: str):
    """The data to fit: (list of DataFrames, one per sample; sample names; params.json entries)."""
    import numpy as np

    path = Path(args.input).expanduser()
    if kind == "csv":
        X = read_numeric_csv(args.input, _split(args.columns), _split(args.drop))
        for c in _split(args.arcsinh):
            if c not in X.columns:
                raise CliError(f"--arcsinh: column {c!r} is not among the fitted columns {list(X.columns)}")
            X[c] = np.arcsinh(X[c] / _cofactor(args))
        meta = {"columns": list(X.columns), "arcsinh_columns": _split(args.arcsinh),
                "arcsinh_cofactor": _cofactor(args) if args.arcsinh else None}
        return [X], [path.name], meta
    if kind == "fcs":
        frames, names = [_read_fcs_file(path, args)], [path.stem]
    else:
        frames, names = _read_folder(path, args)
    a = frames[0].attrs
    meta = {"columns": list(frames[0].columns), "markers": a["markers"], "transform": a["transform"],
            "transformed_channels": a["transformed_channels"],
            "arcsinh_cofactor": _cofactor(args) if a["transform"] == "arcsinh" else None,
            "compensated": [bool(df.attrs["compensated"]) for df in frames],
            "fcs_versions": [df.attrs["version"] for df in frames]}
    return frames, names, meta


# ---------------------------------------------------------------------------- options
def _check_options(args, kind: str, model: str) -> None:
    """Refuse, before any work, options that do not apply to this input or model (never ignored)."""
    import numpy as np

    given = lambda opt, value: [opt] if value else []  # noqa: E731
    if kind == "csv":
        fcs_only = (given("--channels", args.channels is not None) + given("--transform", args.transform)
                    + given("--no-compensate", args.no_compensate))
        if fcs_only:
            raise CliError(f"{' '.join(fcs_only)} appl{'ies' if len(fcs_only) == 1 else 'y'} to FCS input; "
                           f"{args.input} is read as a CSV file (choose its columns with --columns/--drop, "
                           f"transform them with --arcsinh)")
    else:
        csv_only = (given("--columns", args.columns is not None) + given("--drop", args.drop)
                    + given("--arcsinh", args.arcsinh))
        if csv_only:
            raise CliError(f"{' '.join(csv_only)} appl{'ies' if len(csv_only) == 1 else 'y'} to CSV input; for "
                           f"FCS input choose channels with --channels and transform them with --transform")
        if args.channels is not None and not _split(args.channels):
            raise CliError(f"--channels must name at least one channel, got {args.channels!r}")
    if args.cofactor is not None:
        if not np.isfinite(args.cofactor) or args.cofactor <= 0:
            raise CliError(f"--cofactor must be a positive number, got {args.cofactor:g}")
        if not (args.arcsinh or args.transform == "arcsinh"):
            raise CliError(f"--cofactor {args.cofactor:g} is the cofactor of the arcsinh transform: give "
                           f"{'--arcsinh COLUMNS' if kind == 'csv' else '--transform arcsinh'}, or leave it out")
    if model == "hdp" and kind != "folder":
        raise CliError(f"--model hdp fits across samples: give a folder of FCS files (one per sample); "
                       f"{args.input} is one {'CSV' if kind == 'csv' else 'FCS'} file (fit it with --model tdp)")
    if model == "tdp":
        hdp_only = (given("--alpha0-prior", args.alpha0_prior) + given("--warm-start", args.warm_start)
                    + given("--level", args.level is not None))
        if hdp_only:
            raise CliError(f"{' '.join(hdp_only)} appl{'ies' if len(hdp_only) == 1 else 'y'} to --model hdp "
                           f"(a folder of FCS files); this run fits --model tdp")
    elif args.prune != 0:
        raise CliError(f"--prune {args.prune:g} applies to --model tdp with --method bem; --model hdp keeps all "
                       f"{args.n_components} components")
    if args.prune != 0 and args.method != "bem":
        raise CliError(f"--prune {args.prune:g} applies to --method bem only (--method {args.method} keeps all "
                       f"{args.n_components} components): leave --prune out or use --method bem")
    if args.warm_start and args.method != "gibbs":
        raise CliError("--warm-start starts the Gibbs sampler from Bayesian EM: it needs --method gibbs")
    if args.level is not None:
        if not 0.0 < args.level < 1.0:
            raise CliError(f"--level must be a probability in (0, 1), got {args.level:g}")
        if args.method != "gibbs":
            raise CliError("--level is the probability of credible intervals from the Gibbs draws; --method bem "
                           "gives point estimates only")
    if args.partition is None:
        if args.partition_draws is not None:
            raise CliError(f"--partition-draws {args.partition_draws} applies with --partition vi|binder")
    elif args.method != "gibbs":
        raise CliError(f"--partition {args.partition} needs the posterior draws of --method gibbs; --method bem "
                       f"has none (its modal clusters are in clusters.csv and labels.csv)")


def _partition_draws(args, n_events: int) -> int | None:
    """Stored draws used by --partition, checked against what the fit stores and the search's limit."""
    if args.partition is None:
        return None
    stored = args.chains * (args.n_iter // args.thin)
    S = min(DEFAULT_PARTITION_DRAWS, stored) if args.partition_draws is None else args.partition_draws
    if args.partition_draws is not None and not 1 <= S <= stored:
        raise CliError(f"--partition-draws must be between 1 and the {stored} stored draws (--chains {args.chains} x "
                       f"--n-iter {args.n_iter} // --thin {args.thin}), got {S}")
    # the draws' labels are components (L <= k) and the search keeps at most min(L, events) clusters
    k = args.n_components
    kmax = min(k, n_events)
    if S * kmax * k > SEARCH_COUNTS_LIMIT:
        most = SEARCH_COUNTS_LIMIT // (kmax * k)
        raise CliError(f"--partition with -k {k} and {S} draws: the search may keep up to draws x k x "
                       f"{'k' if kmax == k else 'events'} = {S * kmax * k} counts (at most {SEARCH_COUNTS_LIMIT}); "
                       + (f"give --partition-draws {most} or fewer" if most >= 1 else "give a smaller -k"))
    return S


def _make_model(args, model: str):
    common = dict(method=args.method, n_iter=args.n_iter, burn_in=args.burn_in, thin=args.thin, chains=args.chains,
                  init=args.init, gamma0=args.gamma0, nu0=args.nu0, relabel=not args.no_relabel, seed=args.seed,
                  backend=args.backend, threads=args.threads, progress=not args.quiet)
    if args.alpha_prior is not None:
        common["alpha_prior"] = tuple(args.alpha_prior)
    if model == "tdp":
        from ..mixture import TDPGaussianMixture

        return TDPGaussianMixture(args.n_components, prune=args.prune, **common)
    from ..mixture import HDPGaussianMixture

    if args.alpha0_prior is not None:
        common["alpha0_prior"] = tuple(args.alpha0_prior)
    return HDPGaussianMixture(args.n_components, warm_start=args.warm_start, **common)


def _default_out(path, kind: str) -> str:
    p = Path(path)
    if kind == "folder":
        return str(p) + "_mixture"
    return str(p.with_suffix("")).removesuffix(".csv") + "_mixture"


# ---------------------------------------------------------------------------- fit
def _cmd_fit(args) -> int:
    import numpy as np
    import pandas as pd

    kind = _input_kind(args.input)
    model_name = args.model or ("hdp" if kind == "folder" else "tdp")
    _check_options(args, kind, model_name)
    out = args.out or _default_out(args.input, kind)
    check_output_dir(out, args.overwrite)
    model = _make_model(args, model_name)
    frames, names, meta = _read_input(args, kind)
    sizes = [len(df) for df in frames]
    n_draws = _partition_draws(args, sum(sizes))
    X = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    events = None
    if kind == "folder":
        events = pd.DataFrame({"sample": np.repeat(names, sizes),
                               "event": np.concatenate([np.arange(m) for m in sizes])})
    model.fit(frames if model_name == "hdp" else X)

    part = None
    if args.partition:
        from .._parallel import spawn_seeds
        from ..mixture import point_partition, sample_label_draws

        draw_seed, search_seed = (np.random.default_rng(s) for s in spawn_seeds(args.seed, 2))
        Z = sample_label_draws(model, frames if model_name == "hdp" else X, n_draws, seed=draw_seed)
        part = point_partition(Z, loss=PARTITION_LOSSES[args.partition], seed=search_seed, threads=args.threads)

    extra = dict(meta, model=model_name, input=str(args.input), input_kind=kind, samples=names,
                 n_per_sample=sizes)
    extra["partition"] = ({"reported": "modal clusters (the cluster column of labels.csv)"} if part is None else
                          {"reported": "point partition (partition.csv)", "loss": part.loss, "draws": n_draws,
                           "n_clusters": part.n_clusters, "expected_loss": part.expected_loss})
    with atomic_output_dir(out, args.overwrite) as tmp:
        if model_name == "tdp":
            _write_fit(tmp, model, X, extra, args.png, events)
            modal = model.cluster_labels_
        else:
            modal = _write_hdp(tmp, model, frames, names, extra, args.level or 0.95)
        written = _write_partition_outputs(tmp, X, events, modal, part, args)
    if not args.quiet:
        print(model.summary(0.01) if model_name == "tdp" else _hdp_summary(model, names), file=sys.stderr)
        if part is not None:
            print(f"point partition ({part.loss} loss, {n_draws} draws): {part.n_clusters} clusters, posterior "
                  f"expected loss {part.expected_loss:.4g}", file=sys.stderr)
        print(f"wrote {', '.join(written)} into {out}", file=sys.stderr)
    return 0


def _write_partition_outputs(tmp: Path, X, events, modal, part, args) -> list:
    """partition.csv, cluster_summary.csv, sample_proportions.csv and the figures; returns the
    names of every file in ``tmp``."""
    import numpy as np
    import pandas as pd

    from ..mixture import cluster_summary, plot_biaxial, plot_sample_proportions, sample_proportions

    labels = modal if part is None else part.labels
    if part is not None:
        table = pd.DataFrame({"row": np.arange(len(X))})
        if events is not None:
            table["sample"], table["event"] = events["sample"].to_numpy(), events["event"].to_numpy()
        table["cluster"] = part.labels
        table.to_csv(tmp / "partition.csv", index=False)
    cluster_summary(X, labels).to_csv(tmp / "cluster_summary.csv")
    props = None
    if events is not None:
        props = sample_proportions(labels, events["sample"].to_numpy())
        props.to_csv(tmp / "sample_proportions.csv")
    if args.png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        if X.shape[1] >= 2:
            ax = plot_biaxial(X, labels, X.columns[0], X.columns[1], seed=args.seed)
            ax.figure.savefig(tmp / "biaxial.png", dpi=120, bbox_inches="tight")
            plt.close(ax.figure)
        if props is not None:
            ax = plot_sample_proportions(props)
            ax.figure.savefig(tmp / "proportions.png", dpi=120, bbox_inches="tight")
            plt.close(ax.figure)
    return sorted(f.name for f in tmp.iterdir())


def _write_hdp(out: Path, model, frames, names, extra: dict, level: float):
    """The HDP mixture's params.json, components.csv, clusters.csv, labels.csv, group_weights.csv and
    group_component_weights.csv; returns the modal cluster of every event (samples stacked)."""
    import numpy as np
    import pandas as pd

    cols = model.feature_names_ or [f"x{a}" for a in range(model.p_)]
    cc, nc = model.component_clusters_, model.n_clusters_
    live = cc >= 0
    # the model's own cluster indicator: P @ ind is predict_cluster's sum of component probabilities
    ind = np.zeros((model.n_components, nc))
    ind[live, cc[live]] = 1.0
    comp, prob, clus, sample, event = [], [], [], [], []
    for j, df in enumerate(frames):
        P = model.predict_proba(df, group=j)
        comp.append(P.argmax(1))
        prob.append(P.max(1))
        clus.append((P @ ind).argmax(1))
        sample.append(np.full(len(df), names[j], dtype=object))
        event.append(np.arange(len(df)))
    modal = np.concatenate(clus)
    pd.DataFrame({"row": np.arange(modal.size), "sample": np.concatenate(sample), "event": np.concatenate(event),
                  "component": np.concatenate(comp), "probability": np.concatenate(prob),
                  "cluster": modal}).to_csv(out / "labels.csv", index=False)

    order = np.argsort(-model.weights_, kind="stable")
    comps = {"component": order, "weight": model.weights_[order], "beta": model.beta_[order], "cluster": cc[order]}
    for a, nm in enumerate(cols):
        comps[f"mean_{nm}"] = model.means_[order, a]
    for a, nm in enumerate(cols):
        comps[f"sd_{nm}"] = np.sqrt(model.covariances_[order, a, a])
    pd.DataFrame(comps).to_csv(out / "components.csv", index=False)

    clusters = pd.DataFrame({"cluster": np.arange(nc), "weight": model.weights_ @ ind,
                             "weight_sample_average": model.group_cluster_weights_.mean(0)})
    for a, nm in enumerate(cols):
        clusters[f"mean_{nm}"] = model.cluster_means_[:, a]
    clusters["n_rows"] = np.bincount(modal, minlength=nc)
    clusters.to_csv(out / "clusters.csv", index=False)

    for by, fname in (("cluster", "group_weights.csv"), ("component", "group_component_weights.csv")):
        table = model.to_frame(level, by=by)
        table.insert(0, "sample_index", table["sample"])
        table["sample"] = np.asarray(names, dtype=object)[table["sample_index"].to_numpy()]
        table.to_csv(out / fname, index=False)

    params = {
        "method": model.method, "n_components": model.n_components, "n": model.n_, "p": model.p_,
        "n_samples": model.n_samples_, "backend": model.backend_, "feature_names": model.feature_names_,
        "alpha": model.alpha_, "alpha0": model.alpha0_, "beta": model.beta_.tolist(),
        "weights": model.weights_.tolist(), "group_weights": model.group_weights_.tolist(),
        "means": model.means_.tolist(), "covariances": model.covariances_.tolist(),
        "center": model.center_.tolist(), "scale": model.scale_.tolist(), "n_iter": model.n_iter_,
        "converged": model.converged_, "chains": model.chains, "level": level if model.draws_ is not None else None,
        "acceptance_rates": None if model.acceptance_rates_ is None else model.acceptance_rates_.tolist(),
        "clusters": {"n_clusters": nc, "component_cluster": cc.tolist(),
                     "group_weights": model.group_cluster_weights_.tolist(),
                     "means": model.cluster_means_.tolist()},
        "priors": {"alpha_prior": list(model.alpha_prior), "alpha0_prior": list(model.alpha0_prior),
                   "gamma0": model.gamma0, "nu0": model.nu0},
    }
    params.update(extra)
    (out / "params.json").write_text(json.dumps(params, indent=1))
    return modal


def _hdp_summary(model, names) -> str:
    import pandas as pd

    head = (f"HDP Gaussian mixture ({model.method}, k={model.n_components}, {model.n_samples_} samples, "
            f"n={model.n_}, p={model.p_}, backend={model.backend_}); alpha = {model.alpha_:.4g}, "
            f"alpha0 = {model.alpha0_:.4g}")
    W = pd.DataFrame(model.group_cluster_weights_, index=pd.Index(names, name="sample"),
                     columns=pd.Index(range(model.n_clusters_), name="cluster"))
    return (head + f"\n{model.n_clusters_} cluster(s) by modal merging; each sample's proportions:\n"
            + W.to_string(float_format=lambda v: f"{v:.3f}"))


# ---------------------------------------------------------------------------- reproduce
def register_reproduce(subparsers) -> None:
    f = subparsers.add_parser(
        "mixture-faithful",
        help="TDP mixture (k=256, dpmix defaults) on Old Faithful: the two eruption clusters from the fit alone",
        description="Fits the Old Faithful data (272 eruptions, duration and waiting time) and merges the "
                    "components into clusters by the modes of the fitted density (Chan et al. 2008); prints "
                    "the clusters beside the published two-cluster answer.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    _model_arguments(f)
    f.add_argument("--seed", type=int, default=1)
    _quick_full(f)
    add_engine_arguments(f)
    add_output_arguments(f, None)
    f.set_defaults(func=_cmd_reproduce_faithful)
    c = subparsers.add_parser(
        "mixture-flow",
        help="TDP mixture (k=256) on the 12-marker FACSDiva flow-cytometry file (drop Time, arcsinh(x/150))",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    _model_arguments(c, method="bem", n_iter=200, burn_in=0)
    c.add_argument("--seed", type=int, default=3)
    _quick_full(c)
    add_engine_arguments(c)
    add_output_arguments(c, None)
    c.set_defaults(func=_cmd_reproduce_flow)


def _quick_full(p) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("--quick", dest="quick", action="store_true", help="fewer iterations (a smoke run)")
    g.add_argument("--full", dest="quick", action="store_false", help="the full analysis (default)")
    p.set_defaults(quick=False)


#: the well-known two-cluster answer for Old Faithful (weights and means of eruptions, waiting)
FAITHFUL_PUBLISHED = ((0.35, 2.04, 54.5), (0.65, 4.29, 80.0))


def _cmd_reproduce_faithful(args) -> int:
    import pandas as pd

    from .. import datasets

    if args.out:
        check_output_dir(args.out, args.overwrite)
    df = datasets.load_faithful()
    n_iter, burn_in = (100, 50) if args.quick else (args.n_iter, args.burn_in)
    m = _model(args, n_iter=n_iter, burn_in=burn_in, progress=False).fit(df)
    print(m.summary(0.01))
    rows = []
    order = sorted(range(m.n_clusters_), key=lambda c: m.cluster_means_[c, 0])
    for c in order:
        r = {"cluster": c, "weight": m.cluster_weights_[c], "mean_eruptions": m.cluster_means_[c, 0],
             "mean_waiting": m.cluster_means_[c, 1], "n_rows": int((m.cluster_labels_ == c).sum())}
        rows.append(r)
    table = pd.DataFrame(rows)
    if m.n_clusters_ == 2:
        table["published_weight"] = [w for w, _, _ in FAITHFUL_PUBLISHED]
        table["published_eruptions"] = [e for _, e, _ in FAITHFUL_PUBLISHED]
        table["published_waiting"] = [wt for _, _, wt in FAITHFUL_PUBLISHED]
    print(f"{m.n_clusters_} clusters found by modal merging of the fitted density "
          f"(published: 2, weights 0.35/0.65, means (2.04, 54.5) and (4.29, 80.0)):")
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    if args.out:
        with atomic_output_dir(args.out, args.overwrite) as tmp:
            table.to_csv(tmp / "clusters.csv", index=False)
            _write_fit(tmp, m, df, {"columns": list(df.columns)}, png=True)
        print(f"wrote clusters.csv, params.json, components.csv, labels.csv, plot.png into {args.out}")
    return 0


def _cmd_reproduce_flow(args) -> int:
    import time

    import numpy as np

    from .. import datasets

    if args.out:
        check_output_dir(args.out, args.overwrite)
    df = datasets.load_flow_cytometry("facsdiva").drop(columns=["Time"])
    fluor = [c for c in df.columns if c not in ("FSC-A", "FSC-W", "SSC-A")]
    df[fluor] = np.arcsinh(df[fluor] / 150.0)
    n_iter = 20 if args.quick else args.n_iter
    t = time.perf_counter()
    m = _model(args, n_iter=n_iter, progress=False).fit(df)
    sec = time.perf_counter() - t
    print(m.summary(0.01))
    print(f"n = {m.n_}, p = {m.p_}, k = {m.n_components}, {args.method} {m.n_iter_} iterations in {sec:.1f} s on "
          f"{m.backend_}; {int((m.weights_ > 0.01).sum())} components with weight > 1%, {m.n_clusters_} clusters")
    if args.out:
        with atomic_output_dir(args.out, args.overwrite) as tmp:
            _write_fit(tmp, m, df, {"columns": list(df.columns), "arcsinh_columns": fluor,
                                    "arcsinh_cofactor": 150.0}, png=False)
            import matplotlib

            matplotlib.use("Agg")
            m.plot(df, columns=[0, 2, 3, 4, 5, 6]).savefig(tmp / "plot.png", dpi=100, bbox_inches="tight")
    return 0
