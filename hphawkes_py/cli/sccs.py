"""``hphawkes sccs fit|cv|bootstrap``: Bayesian SCCS on OHDSI long-format CSV files."""
from __future__ import annotations

from ._common import CliError, add_engine_arguments, add_output_arguments, atomic_output_dir, check_output_dir

import argparse
import sys


def _common(p, *, variance=True, prior_default="laplace") -> None:
    p.add_argument("outcomes", help="outcomes CSV: stratum_id,row_id,y,time (case-insensitive names)")
    p.add_argument("covariates", help="covariates CSV: row_id,covariate_id[,value] (value defaults to 1)")
    p.add_argument("--prior", choices=("laplace", "normal", "none") if variance else ("laplace", "normal"),
                   default=prior_default)
    if variance:
        p.add_argument("--variance", type=float, default=1.0,
                       help="prior variance (Laplace rate sqrt(2/variance), Cyclops convention)")
    p.add_argument("--exclude", default="", help="comma-separated covariate ids fitted without prior")
    p.add_argument("--tolerance", type=float, default=1e-6,
                   help="convergence tolerance of the rule chosen by --convergence")
    p.add_argument("--convergence", choices=("auto", "relative", "gradient"), default="auto",
                   help="relative: |lp_new - lp_old| / (|lp_new| + 1) < tolerance (lp = log posterior); gradient: "
                        "largest KKT residual < tolerance * (|lp| + 1); auto: gradient when tolerance <= 1e-8")
    p.add_argument("--max-iterations", type=int, default=1000, help="maximum CCD cycles")
    p.add_argument("--strata-without-events", choices=("drop", "keep", "raise"), default="drop",
                   help="strata with no events contribute nothing; dropped ones are counted and reported")
    add_engine_arguments(p)
    p.add_argument("-o", "--output", default=None, help="output CSV (default: print to stdout)")
    p.add_argument("--quiet", action="store_true", help="no progress bar and no summary on stderr")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "sccs",
        help="Bayesian self-controlled case series by cyclic coordinate descent (Suchard et al. 2013)",
        description=(
            "Conditional Poisson regression over strata with offset log(time), Normal or Laplace priors, "
            "fitted by cyclic coordinate descent. Input: OHDSI long format. Output: a coefficient table "
            "(covariate_id, coefficient = log relative risk, relative_risk, ...)."
        ),
    )
    sub = p.add_subparsers(dest="sccs_command", metavar="{fit,cv,bootstrap,event-dependent-exposure}")
    f = sub.add_parser("fit", help="MAP (or MLE with --prior none) fit", formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    _common(f, variance=True)
    f.add_argument("--results", choices=("wald", "profile"), default=None,
                   help="write the per-exposure results table (IRR, interval by this method, p, cases, exposed "
                        "cases, exposed time and events) instead of the coefficient table")
    f.add_argument("--level", type=float, default=0.95, help="interval level for --results")
    f.set_defaults(func=_cmd_fit)
    c = sub.add_parser("cv", help="cross-validate the prior variance, then refit",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    _common(c, variance=False)
    c.add_argument("--folds", type=int, default=10)
    c.add_argument("--grid", default=None, help="comma-separated variances (default: 10 log-spaced, 0.01..20), or 'auto' (Cyclops' unimodal search)")
    c.add_argument("--seed", type=int, default=None)
    c.add_argument("--scores", default=None, help="also write the CV score table to this CSV")
    c.set_defaults(func=_cmd_cv)
    b = sub.add_parser("bootstrap", help="stratum bootstrap at a fixed prior variance",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    _common(b, variance=True)
    b.add_argument("--replicates", type=int, default=200)
    b.add_argument("--seed", type=int, default=None)
    b.add_argument("--level", type=float, default=0.95, help="percentile interval level")
    b.add_argument("--samples", default=None, help="also write the replicate x covariate samples to this CSV")
    b.set_defaults(func=_cmd_bootstrap)
    e = sub.add_parser("event-dependent-exposure",
                       help="exposures that the event delays or stops: the SCCS package's eventdepenexp",
                       description="The pseudo-likelihood of Farrington, Whitaker & Hocine (2009) on one row per "
                                   "case (integer days); writes the table coef, rr, se, z, p, lower, upper.",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    e.add_argument("cases", help="cases CSV: one row per case with the columns named below")
    e.add_argument("--doses", required=True, help="comma-separated columns of the dose days, in dose order")
    e.add_argument("--dose-ends", required=True,
                   help="days after the dose day at which its risk ends, or comma-separated columns (one per dose)")
    e.add_argument("--risk-starts", default="0", help="comma-separated days after the dose at which risk periods begin")
    e.add_argument("--age-groups", default=None, help="comma-separated days on which new age groups begin")
    e.add_argument("--dose-specific", action="store_true", help="one set of risk parameters per dose")
    for name, default in (("person", "case"), ("start", "start"), ("end", "end"), ("event", "event")):
        e.add_argument(f"--{name}", default=default, help=f"column of the {name if name != 'person' else 'case id'}")
    e.add_argument("--level", type=float, default=0.95, help="interval level")
    e.add_argument("-o", "--output", default=None, help="output CSV (default: print to stdout)")
    e.add_argument("--quiet", action="store_true", help="no summary on stderr")
    e.set_defaults(func=_cmd_event_dependent_exposure)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _int_list(text, flag):
    try:
        return [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ValueError(f"{flag} must be comma-separated whole days, got {text!r}") from None


def _cmd_event_dependent_exposure(args) -> int:
    import pandas as pd

    from ..sccs.dependent_exposure import event_dependent_exposure

    _check_level(args.level)
    risk_starts = _int_list(args.risk_starts, "--risk-starts")
    ages = None if args.age_groups is None else _int_list(args.age_groups, "--age-groups")
    ends = args.dose_ends.strip()
    dose_ends = int(ends) if ends.lstrip("-").isdigit() else [v.strip() for v in ends.split(",")]
    doses = [v.strip() for v in args.doses.split(",") if v.strip()]
    fit = event_dependent_exposure(pd.read_csv(args.cases), person=args.person, start=args.start, end=args.end,
                                   event=args.event, doses=doses, dose_ends=dose_ends, risk_starts=risk_starts,
                                   age_groups=ages, same_dose_parameters=not args.dose_specific)
    if not args.quiet:
        print(repr(fit), file=sys.stderr)
    table = fit.results_table(level=args.level)
    table.index.name = "term"
    _write(table.reset_index(), args.output)
    return 0


def _load(args):
    import pandas as pd

    from ..sccs.data import SCCSData

    data = SCCSData.from_long(pd.read_csv(args.outcomes), pd.read_csv(args.covariates),
                              strata_without_events=args.strata_without_events)
    if not args.quiet:
        print(repr(data), file=sys.stderr)
    return data


def _exclude(args, data):
    if not args.exclude:
        return ()
    ids = [s.strip() for s in args.exclude.split(",") if s.strip()]
    # covariate ids read from CSV may be integers: match their type
    if data.covariate_ids.dtype.kind in "iu":
        try:
            return tuple(int(s) for s in ids)
        except ValueError:
            raise ValueError(f"--exclude: covariate ids are integers in this file, got {args.exclude!r}") from None
    return tuple(ids)


def _check_level(level) -> float:
    from .._validate import check_probability

    return check_probability(level, "--level", low_open=True, high_open=True)


def _write(df, path):
    if path:
        df.to_csv(path, index=False)
    else:
        df.to_csv(sys.stdout, index=False)


def _cmd_fit(args) -> int:
    from ..sccs.model import fit

    _check_level(args.level)  # before any work
    data = _load(args)
    res = fit(data, prior=args.prior, variance=args.variance, exclude=_exclude(args, data), tolerance=args.tolerance,
              max_iterations=args.max_iterations, convergence=args.convergence, progress=not args.quiet,
              backend=args.backend, threads=args.threads)
    if not args.quiet:
        print(repr(res), file=sys.stderr)
    if args.results:
        table = res.results_table(level=args.level, method=args.results)
        table.index.name = "covariate_id"
        _write(table.reset_index(), args.output)
    else:
        _write(res.to_frame(), args.output)
    return 0


def _cmd_cv(args) -> int:
    from ..sccs.resampling import cross_validate

    data = _load(args)
    if args.grid is None or args.grid.strip() == "auto":
        grid = None if args.grid is None else "auto"
    else:
        try:
            grid = [float(v) for v in args.grid.split(",") if v.strip()]
        except ValueError:
            raise ValueError(f"--grid must be 'auto' or comma-separated variances, got {args.grid!r}") from None
    res = cross_validate(data, prior=args.prior, folds=args.folds, grid=grid, seed=args.seed,
                         exclude=_exclude(args, data), tolerance=args.tolerance, max_iterations=args.max_iterations,
                         convergence=args.convergence,
                         progress=not args.quiet, backend=args.backend, threads=args.threads)
    if not args.quiet:
        print(res.scores.to_string(index=False), file=sys.stderr)
        print(repr(res), file=sys.stderr)
    if args.scores:
        res.scores.to_csv(args.scores, index=False)
    out = res.fit.to_frame()
    out["variance"] = res.variance
    _write(out, args.output)
    return 0


def _cmd_bootstrap(args) -> int:
    from ..sccs.resampling import bootstrap

    _check_level(args.level)  # before the replicates
    data = _load(args)
    res = bootstrap(data, prior=args.prior, variance=args.variance, replicates=args.replicates, seed=args.seed,
                    exclude=_exclude(args, data), tolerance=args.tolerance, max_iterations=args.max_iterations,
                    convergence=args.convergence, progress=not args.quiet, backend=args.backend, threads=args.threads)
    if args.samples:
        res.samples.to_csv(args.samples)
    s = res.summary(level=args.level)
    s.index.name = "covariate_id"
    _write(s.reset_index(), args.output)
    return 0


# ---------------------------------------------------------------------------- reproduce
#: Conditional MLE of the Oxford MMR/meningitis example (survival::clogit, R 4.2.2; see data/sccs/README.md).
OXFORD_REFERENCE = {"exgr1": 2.48797465298, "agegr2": -1.49057569650, "log_likelihood": -10.0882772097}


def oxford_long():
    """The bundled oxford.csv in long format: stratum = indiv, y = event, time = interval,
    covariates exgr1 (risk window) and agegr2 (age group 2)."""
    import numpy as np
    import pandas as pd

    from .. import datasets

    ox = datasets.load_oxford()
    outcomes = pd.DataFrame({"stratum_id": ox["indiv"], "row_id": np.arange(len(ox)), "y": ox["event"],
                             "time": ox["interval"]})
    rows = np.arange(len(ox))
    covariates = pd.concat([
        pd.DataFrame({"row_id": rows[ox["exgr"].to_numpy() == 1], "covariate_id": "exgr1"}),
        pd.DataFrame({"row_id": rows[ox["agegr"].to_numpy() == 2], "covariate_id": "agegr2"}),
    ], ignore_index=True)
    return outcomes, covariates


def register_reproduce(subparsers) -> None:
    """Add ``hphawkes reproduce sccs-oxford``."""
    p = subparsers.add_parser(
        "sccs-oxford",
        help="SCCS conditional MLE on the Oxford MMR / meningitis example (vs survival::clogit)",
        description="Fits the bundled Oxford example (Farrington & Whitaker; OHDSI Cyclops 'oxford') with "
                    "prior='none' and compares with the clogit reference values; then Normal and Laplace MAP "
                    "fits and a 200-replicate stratum bootstrap. With --out DIR, write comparison.csv, "
                    "results.csv, fits.csv, bootstrap.csv, summary.json and irr.png into DIR (atomically).",
    )
    add_engine_arguments(p)
    p.add_argument("--seed", type=int, default=2013)
    add_output_arguments(p, None)
    p.set_defaults(func=_cmd_reproduce_oxford)


def _cmd_reproduce_oxford(args) -> int:
    import json

    import pandas as pd

    from ..sccs.data import SCCSData
    from ..sccs.model import fit
    from ..sccs.resampling import bootstrap

    if args.seed < 0:
        raise CliError(f"--seed must be a non-negative integer, got {args.seed}")
    if args.out is not None:
        check_output_dir(args.out, args.overwrite)  # before any work
    run = dict(backend=args.backend, threads=args.threads, progress=False)
    data = SCCSData.from_long(*oxford_long())
    mle = fit(data, prior="none", tolerance=1e-14, **run)
    ours = {"exgr1": float(mle.coefficients["exgr1"]), "agegr2": float(mle.coefficients["agegr2"]),
            "log_likelihood": mle.log_likelihood}
    comparison = pd.DataFrame({"quantity": list(ours), "hphawkes": list(ours.values()),
                               "clogit": [OXFORD_REFERENCE[k] for k in ours]})
    comparison["difference"] = comparison["hphawkes"] - comparison["clogit"]
    print(f"{'':>16} {'hphawkes':>16} {'clogit':>16} {'difference':>12}")
    for r in comparison.itertuples():
        digits = 10 if r.quantity == "log_likelihood" else 11
        print(f"{r.quantity:>16} {r.hphawkes:>16.{digits}f} {r.clogit:>16.{digits}f} {r.difference:>12.2e}")
    print(repr(mle))
    maps = {prior: fit(data, prior=prior, variance=1.0, **run) for prior in ("normal", "laplace")}
    for m in maps.values():
        print(repr(m))
    results = mle.results_table(method="profile")
    print("results, conditional MLE, 95% profile-likelihood intervals:")
    print(results.to_string())
    boot = bootstrap(data, prior="normal", variance=10.0, replicates=200, seed=args.seed, **run)
    boot_summary = boot.summary()
    print("bootstrap, Normal(0, 10) prior, 200 replicates, 95% percentile intervals:")
    print(boot_summary.to_string())
    ok = all(abs(mle.coefficients[k] - OXFORD_REFERENCE[k]) < 1e-6 for k in ("exgr1", "agegr2"))
    if args.out is None:
        return 0 if ok else 1
    fits = pd.DataFrame({"mle": mle.coefficients, **{f"{p}_variance_1": m.coefficients for p, m in maps.items()}})
    with atomic_output_dir(args.out, args.overwrite) as tmp:
        comparison.to_csv(tmp / "comparison.csv", index=False)
        results.rename_axis("covariate_id").reset_index().to_csv(tmp / "results.csv", index=False)
        fits.rename_axis("covariate_id").reset_index().to_csv(tmp / "fits.csv", index=False)
        boot_summary.rename_axis("covariate_id").reset_index().to_csv(tmp / "bootstrap.csv", index=False)
        (tmp / "summary.json").write_text(json.dumps(
            {"analysis": "sccs-oxford", "reference": "survival::clogit (data/sccs/README.md)", "matches_reference": ok,
             "data": repr(data), "mle": mle.to_dict(), **{p: m.to_dict() for p, m in maps.items()},
             "bootstrap": {"prior": "normal", "variance": 10.0, "replicates": 200, "seed": args.seed}},
            indent=2, default=str))
        _save_irr(mle, tmp / "irr.png")
    print(f"comparison.csv, results.csv, fits.csv, bootstrap.csv, summary.json, irr.png -> {args.out}")
    return 0 if ok else 1


def _save_irr(mle, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..sccs.plot import plot_irr

    fig = plot_irr(mle, method="profile", path=path)
    plt.close(fig)
