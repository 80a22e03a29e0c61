"""``hphawkes mixture``: fit a truncated Dirichlet-process Gaussian mixture to a CSV file."""
from __future__ import annotations

from ._common import add_engine_arguments

import argparse
import json
import sys
from pathlib import Path


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "mixture",
        help="truncated Dirichlet-process Gaussian mixture by blocked Gibbs or Bayesian EM (Suchard et al. 2010)",
        description=(
            "Fit a k-component truncated DP mixture of multivariate normals to the numeric columns of a CSV "
            "file (one row per observation, header row). The data are standardised per column for fitting; "
            "results are written in the original units: <prefix>_params.json (weights, means, covariances, "
            "alpha, priors), <prefix>_components.csv (one row per component: weight, means, sds) and "
            "<prefix>_labels.csv (row, most probable component, its probability)."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("csv", help="input CSV (gzip accepted)")
    p.add_argument("--columns", default=None,
                   help="comma-separated columns to use (default: all numeric columns)")
    p.add_argument("--drop", default="", help="comma-separated columns to leave out (e.g. Time)")
    p.add_argument("--arcsinh", default="", help="comma-separated columns to transform by arcsinh(x / cofactor)")
    p.add_argument("--cofactor", type=float, default=150.0, help="cofactor of --arcsinh")
    p.add_argument("-k", "--n-components", type=int, default=256, help="truncation level k")
    p.add_argument("--method", choices=("gibbs", "bem"), default="gibbs")
    p.add_argument("--n-iter", type=int, default=1000, help="Gibbs sweeps kept (before thinning) / BEM max iterations")
    p.add_argument("--burn-in", type=int, default=100)
    p.add_argument("--thin", type=int, default=1)
    p.add_argument("--gamma0", type=float, default=10.0, help="mu_j | Sigma_j ~ N(m0, gamma0 Sigma_j) (standardised units)")
    p.add_argument("--nu0", type=float, default=1.0, help="inverse-Wishart nu (df = nu0 + p + 1, scale nu0 I)")
    p.add_argument("--alpha-prior", type=float, nargs=2, default=(10.0, 1.0), metavar=("E0", "F0"),
                   help="Gamma(shape E0, rate F0) prior of alpha")
    p.add_argument("--no-relabel", action="store_true", help="Gibbs: do not relabel draws before averaging")
    p.add_argument("--seed", type=int, default=None)
    add_engine_arguments(p)
    p.add_argument("-o", "--output-prefix", default=None,
                   help="prefix of the output files (default: the input name without extension + '_mixture')")
    p.add_argument("--plot", default=None, help="also save a plot of the fitted mixture to this file (png/pdf)")
    p.add_argument("--quiet", action="store_true", help="no progress bar and no summary on stderr")
    p.set_defaults(func=_cmd_fit)


def _split(s):
    return [c.strip() for c in s.split(",") if c.strip()] if s else []


def _cmd_fit(args) -> int:
    import numpy as np
    import pandas as pd

    from ..mixture.model import TDPGaussianMixture

    df = pd.read_csv(args.csv)
    missing = [c for c in _split(args.columns) + _split(args.drop) + _split(args.arcsinh) if c not in df.columns]
    if missing:
        print(f"error: column(s) {missing} not in {args.csv} (columns: {list(df.columns)})", file=sys.stderr)
        return 2
    cols = _split(args.columns) or [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c])]
    cols = [c for c in cols if c not in _split(args.drop)]
    X = df[cols].astype(float)
    for c in _split(args.arcsinh):
        if c in X.columns:
            X[c] = np.arcsinh(X[c] / args.cofactor)
    model = TDPGaussianMixture(
        args.n_components, method=args.method, n_iter=args.n_iter, burn_in=args.burn_in, thin=args.thin,
        alpha_prior=tuple(args.alpha_prior), gamma0=args.gamma0, nu0=args.nu0, relabel=not args.no_relabel,
        seed=args.seed, progress=not args.quiet, backend=args.backend, threads=args.threads,
    )
    try:
        model.fit(X)
    except (ValueError, TypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    prefix = args.output_prefix or str(Path(args.csv).with_suffix("")).removesuffix(".csv") + "_mixture"
    Path(prefix).parent.mkdir(parents=True, exist_ok=True)
    params = model.to_dict()
    params["columns"] = cols
    params["arcsinh_columns"] = _split(args.arcsinh)
    params["arcsinh_cofactor"] = args.cofactor if args.arcsinh else None
    Path(prefix + "_params.json").write_text(json.dumps(params, indent=1))
    model.to_frame().to_csv(prefix + "_components.csv", index=False)
    proba_max = np.empty(len(X))
    labels = model.predict(X)
    step = 20000
    for lo in range(0, len(X), step):
        proba_max[lo:lo + step] = model.predict_proba(X.iloc[lo:lo + step]).max(axis=1)
    pd.DataFrame({"row": np.arange(len(X)), "component": labels, "probability": proba_max}).to_csv(
        prefix + "_labels.csv", index=False)
    if args.plot:
        fig = model.plot(X)
        fig.savefig(args.plot, dpi=120, bbox_inches="tight")
    if not args.quiet:
        print(model.summary(0.01), file=sys.stderr)
        print(f"wrote {prefix}_params.json, {prefix}_components.csv, {prefix}_labels.csv", file=sys.stderr)
    return 0


def register_reproduce(subparsers) -> None:
    f = subparsers.add_parser(
        "mixture-faithful",
        help="TDP mixture (k=256, dpmix defaults) on Old Faithful: the two eruption clusters",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    f.add_argument("--method", choices=("gibbs", "bem"), default="gibbs")
    f.add_argument("--n-iter", type=int, default=1000)
    f.add_argument("--burn-in", type=int, default=100)
    f.add_argument("--seed", type=int, default=1)
    add_engine_arguments(f, threads=False)
    f.add_argument("--plot", default=None, help="save the fitted mixture plot to this file")
    f.set_defaults(func=_cmd_reproduce_faithful)
    c = subparsers.add_parser(
        "mixture-flow",
        help="TDP mixture (k=256) on the 12-marker FACSDiva flow-cytometry file (drop Time, arcsinh(x/150))",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    c.add_argument("--method", choices=("gibbs", "bem"), default="bem")
    c.add_argument("--n-iter", type=int, default=200)
    c.add_argument("--burn-in", type=int, default=0)
    c.add_argument("--seed", type=int, default=3)
    add_engine_arguments(c, threads=False)
    c.add_argument("--plot", default=None, help="save a pairs plot to this file")
    c.set_defaults(func=_cmd_reproduce_flow)


def _cmd_reproduce_faithful(args) -> int:
    import numpy as np

    from .. import datasets
    from ..mixture.model import TDPGaussianMixture

    df = datasets.load_faithful()
    m = TDPGaussianMixture(256, method=args.method, n_iter=args.n_iter, burn_in=args.burn_in, seed=args.seed,
                           backend=args.backend).fit(df)
    heavy = m.weights_ > 0.01
    long_ = m.means_[:, 0] >= 3.0
    print(m.summary(0.01))
    for name, sel in (("short eruptions (< 3 min)", heavy & ~long_), ("long eruptions", heavy & long_)):
        w = m.weights_[sel]
        mean = (w[:, None] * m.means_[sel]).sum(0) / w.sum()
        print(f"{name}: weight {w.sum() / m.weights_[heavy].sum():.3f}, mean eruptions {mean[0]:.3f} min, "
              f"waiting {mean[1]:.2f} min (published two-cluster answer: 0.35/(2.04, 54.5) and 0.65/(4.29, 80.0))")
    if args.plot:
        m.plot(df).savefig(args.plot, dpi=120, bbox_inches="tight")
    return 0


def _cmd_reproduce_flow(args) -> int:
    import time

    import numpy as np

    from .. import datasets
    from ..mixture.model import TDPGaussianMixture

    df = datasets.load_flow_cytometry("facsdiva").drop(columns=["Time"])
    fluor = [c for c in df.columns if c not in ("FSC-A", "FSC-W", "SSC-A")]
    df[fluor] = np.arcsinh(df[fluor] / 150.0)
    t = time.perf_counter()
    m = TDPGaussianMixture(256, method=args.method, n_iter=args.n_iter, burn_in=args.burn_in, seed=args.seed,
                           backend=args.backend).fit(df)
    sec = time.perf_counter() - t
    print(m.summary(0.01))
    print(f"n = {m.n_}, p = {m.p_}, k = 256, {args.method} {m.n_iter_} iterations in {sec:.1f} s on {m.backend_}; "
          f"{int((m.weights_ > 0.01).sum())} components with weight > 1%")
    if args.plot:
        m.plot(df, columns=[0, 2, 3, 4, 5, 6]).savefig(args.plot, dpi=100, bbox_inches="tight")
    return 0
