"""``hphawkes mixture``: fit a truncated Dirichlet-process Gaussian mixture to a CSV file, and the
``reproduce mixture-faithful`` / ``mixture-flow`` analyses."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ._common import CliError, add_engine_arguments, add_output_arguments, atomic_output_dir, check_output_dir


def _model_arguments(p, *, method="gibbs", n_iter=1000, burn_in=100, k=256) -> None:
    p.add_argument("-k", "--n-components", type=int, default=k, help="truncation level k")
    p.add_argument("--method", choices=("gibbs", "bem"), default=method)
    p.add_argument("--n-iter", type=int, default=n_iter,
                   help="Gibbs sweeps kept (before thinning) / BEM max iterations")
    p.add_argument("--burn-in", type=int, default=burn_in)


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "mixture",
        help="truncated Dirichlet-process Gaussian mixture by blocked Gibbs or Bayesian EM (Suchard et al. 2010)",
        description=(
            "Fit a k-component truncated DP mixture of multivariate normals to the columns of a CSV file (one "
            "row per observation, header row; every used cell must be a number: leave other columns out with "
            "--drop or choose with --columns). The data are standardised per column for fitting; results are "
            "written in the original units into the folder --out: params.json (weights, means, covariances, "
            "alpha, priors, clusters), components.csv (one row per component: weight, cluster, means, sds), "
            "clusters.csv (clusters by modal merging) and labels.csv (row, most probable component, its "
            "probability, cluster)."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("csv", help="input CSV (gzip accepted)")
    p.add_argument("--columns", default=None, help="comma-separated columns to use (default: all but --drop)")
    p.add_argument("--drop", default="", help="comma-separated columns to leave out (e.g. Time)")
    p.add_argument("--arcsinh", default="", help="comma-separated columns to transform by arcsinh(x / cofactor)")
    p.add_argument("--cofactor", type=float, default=150.0, help="cofactor of --arcsinh")
    _model_arguments(p)
    p.add_argument("--thin", type=int, default=1)
    p.add_argument("--chains", type=int, default=1, help="Gibbs chains (R-hat/ESS in the summary)")
    p.add_argument("--init", choices=("kmeans++", "random"), default="kmeans++", help="initial component means")
    p.add_argument("--prune", type=float, default=0.0, help="BEM only: remove components whose weight falls below this")
    p.add_argument("--gamma0", type=float, default=10.0, help="mu_j | Sigma_j ~ N(m0, gamma0 Sigma_j) (standardised units)")
    p.add_argument("--nu0", type=float, default=1.0, help="inverse-Wishart nu (df = nu0 + p + 1, scale nu0 I)")
    p.add_argument("--alpha-prior", type=float, nargs=2, default=(10.0, 1.0), metavar=("E0", "F0"),
                   help="Gamma(shape E0, rate F0) prior of alpha")
    p.add_argument("--no-relabel", action="store_true", help="Gibbs: do not relabel draws before averaging")
    p.add_argument("--seed", type=int, default=None)
    add_engine_arguments(p)
    add_output_arguments(p, None)
    p.add_argument("--png", action="store_true", help="also write plot.png (the fitted mixture) into --out")
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


def _write_fit(out: Path, model, X, extra: dict, png: bool) -> None:
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
    pd.DataFrame({"row": np.arange(len(X)), "component": P.argmax(1), "probability": P.max(1),
                  "cluster": model.cluster_labels_}).to_csv(out / "labels.csv", index=False)
    if png:
        import matplotlib

        matplotlib.use("Agg")
        fig = model.plot(X)
        fig.savefig(out / "plot.png", dpi=120, bbox_inches="tight")


def _cmd_fit(args) -> int:
    import numpy as np

    out = args.out or str(Path(args.csv).with_suffix("")).removesuffix(".csv") + "_mixture"
    check_output_dir(out, args.overwrite)
    if args.cofactor <= 0 or not np.isfinite(args.cofactor):
        raise CliError(f"--cofactor must be a positive number, got {args.cofactor}")
    if args.prune != 0 and args.method != "bem":
        raise CliError(f"--prune {args.prune:g} applies to --method bem only (--method {args.method} keeps all "
                       f"{args.n_components} components): leave --prune out or use --method bem")
    model = _model(args, thin=args.thin, chains=args.chains, init=args.init, prune=args.prune,
                   alpha_prior=tuple(args.alpha_prior), gamma0=args.gamma0, nu0=args.nu0,
                   relabel=not args.no_relabel)
    X = read_numeric_csv(args.csv, _split(args.columns), _split(args.drop))
    for c in _split(args.arcsinh):
        if c not in X.columns:
            raise CliError(f"--arcsinh: column {c!r} is not among the fitted columns {list(X.columns)}")
        X[c] = np.arcsinh(X[c] / args.cofactor)
    model.fit(X)
    extra = {"columns": list(X.columns), "arcsinh_columns": _split(args.arcsinh),
             "arcsinh_cofactor": args.cofactor if args.arcsinh else None, "input": str(args.csv)}
    with atomic_output_dir(out, args.overwrite) as tmp:
        _write_fit(tmp, model, X, extra, args.png)
    if not args.quiet:
        print(model.summary(0.01), file=sys.stderr)
        print(f"wrote params.json, components.csv, clusters.csv, labels.csv{', plot.png' if args.png else ''} "
              f"into {out}", file=sys.stderr)
    return 0


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
