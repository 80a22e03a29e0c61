"""``hphawkes hawkes loglik|probabilities|residuals|mcmc|simulate`` and ``hphawkes reproduce dc-gunshots``.

Module-level imports stay light (argparse only) so ``hphawkes --help`` is fast;
the numerical modules are imported inside the handlers.
"""
from __future__ import annotations

import argparse
import sys

from ._common import CliError, add_engine_arguments, add_output_arguments

PARAMS_HELP = "model parameters in the units of the data (e.g. km and hours)"


def _add_data_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("csv", help="CSV file with a header row, one event per row")
    p.add_argument("--x", default="x_km,y_km", help="comma-separated location column(s), 1 to 3 (default: x_km,y_km)")
    p.add_argument("--t", default="t_hours", help="time column (default: t_hours)")
    p.add_argument("--window", nargs=2, type=float, metavar=("T0", "T1"),
                   help="observation window (default: min and max time)")
    add_engine_arguments(p)


def _power_law_option(text: str, plain: tuple, forms: str):
    """A kernel option: one of the ``plain`` names, or ``power-law:X`` as ``("power-law", X)``."""
    if text in plain:
        return text
    name, _, v = text.partition(":")
    try:
        value = float(v)
    except ValueError:
        value = None
    if name != "power-law" or value is None:
        raise argparse.ArgumentTypeError(f"expected {forms}, got {text!r}")
    return ("power-law", value)


def _kernel(text: str):
    """``--kernel exponential | power-law | power-law:P | exp2`` as the ``kernel=`` of the Python API."""
    return _power_law_option(text, ("exponential", "power-law", "exp2"),
                             "exponential, power-law, power-law:P (P > 1) or exp2")


def _spatial_kernel(text: str):
    """``--spatial-kernel gaussian | power-law | power-law:Q`` as the ``spatial_kernel=`` of the Python API."""
    return _power_law_option(text, ("gaussian", "power-law"), "gaussian, power-law or power-law:Q (Q > D/2)")


def _add_kernel_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kernel", type=_kernel, default="exponential",
                   help="temporal trigger: exponential (default), power-law (Omori-Utsu, exponent 1.5), "
                        "power-law:P, or exp2 (sum of two exponentials w omega e^(-omega dt) + (1 - w) omega2 "
                        "e^(-omega2 dt)); --omega is its rate (1/c)")
    p.add_argument("--omega2", type=float, default=None,
                   help="--kernel exp2: rate of the second exponential (per unit of t, e.g. 1/hour)")
    p.add_argument("--weight", dest="w", type=float, default=None,
                   help="--kernel exp2: w, the weight of the omega component, in [0, 1]")
    p.add_argument("--spatial-kernel", type=_spatial_kernel, default="gaussian",
                   help="spatial trigger: gaussian (default, s.d. --h), power-law (isotropic "
                        "(1 + r^2/h^2)^(-q), q = 2) or power-law:Q (Q > D/2); --h is its scale")


def _rate_args(args) -> dict:
    """``--omega2``/``--weight`` when given (``--kernel exp2``), as the keywords omega2/w of the Python API."""
    return {n: getattr(args, n) for n in ("omega2", "w") if getattr(args, n, None) is not None}


def _add_precision_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dtype", default="float64", choices=("float64", "float32"))
    p.add_argument("--exact", action="store_true", help="evaluate every pair (default: windowed, exact to 1e-13)")


def _add_param_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("parameters", PARAMS_HELP)
    for name, flag in (("mu0", "--mu0"), ("tau_x", "--tau-x"), ("tau_t", "--tau-t"), ("theta", "--theta"),
                       ("omega", "--omega"), ("h", "--h")):
        g.add_argument(flag, dest=name, type=float, required=True)


def _read(args):
    import numpy as np
    import pandas as pd

    import zipfile

    try:
        df = pd.read_csv(args.csv)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise CliError(f"{args.csv}: cannot be read as a CSV file ({' '.join(str(exc).split())})") from exc
    xcols = [c.strip() for c in args.x.split(",") if c.strip()]
    missing = [c for c in xcols + [args.t] if c not in df.columns]
    if missing:
        raise CliError(f"--x/--t: column(s) {missing} not in {args.csv} (columns: {list(df.columns)})")
    out = []
    for c in xcols + [args.t]:
        col = pd.to_numeric(df[c], errors="coerce")
        bad = col.isna() & df[c].notna()
        if bad.any():
            i = int(bad.to_numpy().argmax())
            raise CliError(f"{args.csv}: column {c!r} row {i + 2} holds {df[c].iloc[i]!r}, not a number")
        out.append(col.to_numpy(dtype=float))
    return df, np.column_stack(out[:-1]), out[-1]


def _check_out_file(path, option: str = "--out") -> None:
    """An output file whose folder exists and takes a new file, and that is not a folder (before any
    work); errors name ``option`` and ``path``. A file is created in the folder and removed: permission
    bits do not tell (root passes them, yet cannot write in /proc or on a read-only mount)."""
    import os
    import tempfile

    from ._common import check_output_file

    parent = check_output_file(path, option).resolve().parent
    try:
        fd, probe = tempfile.mkstemp(prefix=".hphawkes-probe-", dir=parent)
    except OSError as exc:
        raise CliError(f"{option} {path}: cannot write in folder {parent} ({exc.strerror or exc})") from None
    os.close(fd)
    os.unlink(probe)


def _enter_output_dir(stack, path, overwrite: bool):
    """The temporary folder of :func:`~._common.atomic_output_dir` for ``--out path``, entered on ``stack``
    before any work: a folder that cannot be written fails here, not after the run, and the run holds
    the folder's lock throughout."""
    from ._common import atomic_output_dir

    try:
        return stack.enter_context(atomic_output_dir(path, overwrite))
    except OSError as exc:
        raise CliError(f"--out {path}: cannot write the output folder there ({exc.strerror or exc})") from None


def _emit_csv(df, out, what: str) -> int:
    """Write ``df`` to the file ``out`` atomically (a note on stderr), or to stdout when ``out`` is None."""
    if out:
        _write_csv_atomic(df, out, index=False)
        print(f"wrote {len(df)} {what} to {out}", file=sys.stderr)
    else:
        df.to_csv(sys.stdout, index=False)
    return 0


def _write_csv_atomic(df, path, **kw) -> None:
    """Write a CSV into a temporary file beside ``path`` and rename it into place (no half-written file)."""
    import os
    import tempfile
    from pathlib import Path

    p = Path(path).resolve()
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.tmp-", dir=p.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            df.to_csv(fh, **kw)
        os.replace(tmp, p)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _params(args):
    from ..hawkes.model import HawkesParams

    return HawkesParams(mu0=args.mu0, tau_x=args.tau_x, tau_t=args.tau_t, theta=args.theta, omega=args.omega,
                        h=args.h, **_rate_args(args))


def _cmd_loglik(args) -> int:
    import numpy as np

    from ..hawkes.model import log_likelihood

    _, x, t = _read(args)
    ll = log_likelihood(x, t, _params(args), exact=args.exact, window=args.window, dtype=np.dtype(args.dtype),
                        backend=args.backend, threads=args.threads, kernel=args.kernel,
                        spatial_kernel=args.spatial_kernel)
    print(repr(ll))
    return 0


def _cmd_probabilities(args) -> int:
    import numpy as np

    from ..hawkes.model import self_excitation_probabilities

    if args.out:
        _check_out_file(args.out)
    df, x, t = _read(args)
    pi = self_excitation_probabilities(x, t, _params(args), exact=args.exact, window=args.window,
                                       dtype=np.dtype(args.dtype), backend=args.backend, threads=args.threads,
                                       kernel=args.kernel, spatial_kernel=args.spatial_kernel)
    df = df.copy()
    df["self_excitation_probability"] = pi
    return _emit_csv(df, args.out, "rows")


def _cmd_residuals(args) -> int:
    from ..hawkes.residual_analysis import residuals

    if args.out:
        _check_out_file(args.out)
    if args.png:
        _check_out_file(args.png, "--png")
    df, x, t = _read(args)
    res = residuals(_params(args), x, t, window=args.window, kernel=args.kernel, spatial_kernel=args.spatial_kernel)
    print(f"{res.n_events} events, expected {res.total:.1f} (z = {res.count_z:.2f}); Kolmogorov-Smirnov test of the "
          f"time-rescaled residuals against Uniform(0, 1): D = {res.ks_statistic:.4f}, p = {res.ks_pvalue:.4g}"
          + (f"; {res.n_ties} tied times" if res.n_ties else ""), file=sys.stderr if not args.out else sys.stdout)
    if args.png:  # the figure first: a failed figure leaves no table written as if all was well
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig = res.plot()
        try:  # --png names the format, whatever the file's suffix
            fig.savefig(args.png, dpi=120, format="png")
        except (OSError, ValueError) as exc:
            raise CliError(f"--png {args.png}: the figure cannot be written ({' '.join(str(exc).split())})") from None
        finally:
            plt.close(fig)
    table = res.to_frame()
    table["event"] = table["event"] + 1  # 1-based row of the input file's data
    return _emit_csv(table, args.out, "rows")


def _cmd_mcmc(args) -> int:
    import contextlib

    # everything checkable before the (long) MCMC: counts, the output folder, the data
    for flag, v, lo in (("--n-iter", args.n_iter, 1), ("--chains", args.chains, 1), ("--burn-in", args.burn_in, 0),
                        ("--n-draws", args.n_draws, 1)):
        if v < lo:
            raise CliError(f"{flag} must be >= {lo}, got {v}")
    if args.burn_in >= args.n_iter:
        raise CliError(f"--burn-in ({args.burn_in}) must be smaller than --n-iter ({args.n_iter})")
    if args.probabilities and not args.out:
        raise CliError("--probabilities needs --out (the folder self_excitation.csv is written to)")
    with contextlib.ExitStack() as stack:
        # the output folder's temporary copy exists before the MCMC starts (moved into place at the end)
        out = _enter_output_dir(stack, args.out, args.overwrite) if args.out else None
        post, table = _run_mcmc(args)
        if out is not None:
            from ..hawkes.excitation import self_excitation

            table.to_csv(out / "posterior_summary.csv")
            post.to_csv(out / "draws.csv")
            post.to_json(out / "summary.json")
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt

            plt.close(post.plot_trace(path=out / "trace.png"))
            plt.close(post.plot_density(path=out / "density.png"))
            if args.probabilities:
                pi = self_excitation(post, n_draws=args.n_draws, seed=args.seed, progress=not args.no_progress)
                pi.to_csv(out / "self_excitation.csv", index_label="event")
    if args.out:
        from pathlib import Path

        print(f"outputs written to {Path(args.out).resolve()}")
    return 0


def _run_mcmc(args):
    """Read the data, run the chains and print the summary: ``(posterior, summary table)``."""
    from ..hawkes.sampler import mcmc

    _, x, t = _read(args)
    sample = None if args.sample is None else tuple(s.strip() for s in args.sample.split(",") if s.strip())
    fixed = _rate_args(args)
    for name in ("mu0", "tau_x", "tau_t", "theta", "omega", "h"):
        v = getattr(args, f"fixed_{name}")
        if v is not None:
            fixed[name] = v
    post = mcmc(x, t, n_iter=args.n_iter, burn_in=args.burn_in, chains=args.chains, sample=sample, fixed=fixed,
                seed=args.seed, progress=not args.no_progress, backend=args.backend, threads=args.threads,
                window=args.window, kernel=args.kernel, spatial_kernel=args.spatial_kernel)
    table = post.summary()
    print(table.to_string())
    print("acceptance rates:", {n: [round(float(a), 3) for a in v] for n, v in post.acceptance_rates.items()})
    return post, table


def _cmd_simulate(args) -> int:
    import pandas as pd

    from ..hawkes.simulation import simulate

    if args.out:
        _check_out_file(args.out)
    if len(args.region) == 1:
        region = args.region[0]
    elif len(args.region) == 2 * args.dim:
        region = [args.region[i:i + 2] for i in range(0, len(args.region), 2)]
    else:
        raise CliError(f"--region must be one side length or {2 * args.dim} numbers (low high per coordinate), "
                         f"got {len(args.region)} numbers")
    x, t = simulate(mu=args.mu, theta=args.theta, omega=args.omega, h=args.h, region=region, duration=args.duration,
                    dim=args.dim, seed=args.seed, kernel=args.kernel, spatial_kernel=args.spatial_kernel,
                    **_rate_args(args))
    names = ["x_km", "y_km", "z_km"][: args.dim]
    df = pd.DataFrame({**{n: x[:, i] for i, n in enumerate(names)}, "t_hours": t})
    return _emit_csv(df, args.out, "events")


def register(subparsers) -> None:
    """Add ``hphawkes hawkes ...``."""
    hp = subparsers.add_parser("hawkes", help="spatiotemporal Hawkes process (Holbrook et al. 2021)",
                               description="Spatiotemporal Hawkes process: log-likelihood, self-excitation "
                                           "probabilities, adaptive MCMC, simulation. Locations in km and times in "
                                           "hours in the examples (any units; parameters follow them).")
    sub = hp.add_subparsers(dest="hawkes_command", metavar="SUBCOMMAND")

    p = sub.add_parser("loglik", help="log-likelihood at given parameters")
    _add_data_args(p)
    _add_precision_args(p)
    _add_param_args(p)
    _add_kernel_arg(p)
    p.set_defaults(func=_cmd_loglik)

    p = sub.add_parser("probabilities", help="self-excitation probability of every event at given parameters")
    _add_data_args(p)
    _add_precision_args(p)
    _add_param_args(p)
    p.add_argument("--out", help="output CSV (input columns + self_excitation_probability); default stdout")
    _add_kernel_arg(p)
    p.set_defaults(func=_cmd_probabilities)

    p = sub.add_parser("residuals", help="time-rescaled residuals (Ogata) and a KS uniformity test at given "
                                         "parameters")
    _add_data_args(p)
    _add_param_args(p)
    _add_kernel_arg(p)
    p.add_argument("--out", help="output CSV: event (1-based data row), rescaled_time, interval, uniform; "
                                 "default stdout")
    p.add_argument("--png", help="also write the QQ plot and the rescaled times (PNG)")
    p.set_defaults(func=_cmd_residuals)

    p = sub.add_parser("mcmc", help="adaptive Metropolis-Hastings posterior sampling")
    _add_data_args(p)
    p.add_argument("--n-iter", type=int, default=10_000, help="iterations (sweeps) per chain (default 10000)")
    p.add_argument("--burn-in", type=int, default=1_000)
    p.add_argument("--chains", type=int, default=4)
    p.add_argument("--sample", default=None,
                   help="comma-separated sampled parameters (default h,omega,theta,mu0, plus omega2,w with "
                        "--kernel exp2 unless --omega2/--weight fix them)")
    for name, flag in (("mu0", "--mu0"), ("tau_x", "--tau-x"), ("tau_t", "--tau-t"), ("theta", "--theta"),
                       ("omega", "--omega"), ("h", "--h")):
        p.add_argument(flag, dest=f"fixed_{name}", type=float, default=None,
                       help=f"fixed value of {name} (required when not sampled)")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--out", help="output folder: posterior_summary.csv, draws.csv, summary.json, trace/density PNG "
                                 "(written atomically: created only when the whole run succeeded)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing non-empty --out folder")
    p.add_argument("--probabilities", action="store_true", help="also write self_excitation.csv (needs --out)")
    p.add_argument("--n-draws", type=int, default=1000, help="posterior draws for --probabilities")
    p.add_argument("--no-progress", action="store_true")
    _add_kernel_arg(p)
    p.set_defaults(func=_cmd_mcmc)

    p = sub.add_parser("simulate", help="simulate events by the branching construction")
    p.add_argument("--mu", type=float, required=True, help="background rate per unit area per unit time")
    p.add_argument("--theta", type=float, required=True, help="expected children per event (< 1)")
    p.add_argument("--omega", type=float, required=True, help="rate of the exponential child delay")
    p.add_argument("--h", type=float, required=True, help="sd of the Gaussian child displacement")
    p.add_argument("--region", type=float, nargs="+", required=True,
                   help="side length L (region [0, L]^dim) or low high per coordinate")
    p.add_argument("--duration", type=float, required=True)
    p.add_argument("--dim", type=int, default=2)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--out", help="output CSV (default stdout)")
    _add_kernel_arg(p)
    p.set_defaults(func=_cmd_simulate)

    hp.set_defaults(func=lambda args: (hp.print_help(), 0)[1])


def _cmd_reproduce_dc(args) -> int:
    from .hawkes_reproduce import format_table, run_dc_gunshots

    mode = "full" if args.full else "quick"
    result = run_dc_gunshots(args.out, mode=mode, backend=args.backend, threads=args.threads, seed=args.seed,
                             chains=args.chains, n_iter=args.n_iter, burn_in=args.burn_in, n_draws=args.n_draws,
                             start=args.start, progress=not args.no_progress, overwrite=args.overwrite)
    print()
    print(format_table(result))
    se = result["self_excitation"]
    print(f"\nexpected fraction of self-excited events (mean of posterior mean pi_n): {se['mean_probability']:.4f}; "
          f"events with posterior mean pi_n > 0.5: {se['events_with_mean_above_0.5']:,}")
    print(f"total time {result['seconds']['total']:.0f} s (MCMC {result['seconds']['mcmc']:.0f} s)")
    from pathlib import Path

    print(f"outputs written to {Path(args.out).resolve()}:")
    for name, path in result["files"].items():
        print(f"  {Path(path).name}")
    return 0


def register_reproduce(subparsers) -> None:
    """Add ``hphawkes reproduce dc-gunshots``."""
    p = subparsers.add_parser(
        "dc-gunshots",
        help="Holbrook et al. (2021): Hawkes analysis of 54,582 Washington DC gunshots (the main job)",
        description="Bayesian spatiotemporal Hawkes analysis of the bundled Washington DC ShotSpotter data "
                    "(2006-2019, holidays removed), tau_x = 1.6 km and tau_t = 14 days fixed. --quick (default): "
                    "2 chains x 1,000 iterations; --full: the paper's 4 chains x 10,000 iterations, 1,000 burn-in.")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="short run (default)")
    mode.add_argument("--full", action="store_true", help="the paper's run: 4 chains x 10,000 iterations")
    add_output_arguments(p, default="hphawkes-dc-gunshots")
    add_engine_arguments(p)
    p.add_argument("--seed", type=int, default=2021)
    p.add_argument("--chains", type=int, default=None, help="override the mode's number of chains")
    p.add_argument("--n-iter", type=int, default=None, help="override the mode's iterations per chain")
    p.add_argument("--burn-in", type=int, default=None, help="override the mode's burn-in")
    p.add_argument("--n-draws", type=int, default=None, help="posterior draws for the self-excitation probabilities")
    p.add_argument("--start", choices=("mode", "hpHawkes"), default=None,
                   help="chain starting values: the posterior mode (default) or hpHawkes' h = omega = theta = mu0 = 1")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=_cmd_reproduce_dc)
