"""The ``hphawkes`` command line.

Sub-commands: ``info`` (versions, threads, GPU status), one per method
(``hawkes``, ``kde``, ``sccs``, ``scan``, ``mixture``) and ``reproduce``
(the papers' analyses on the bundled data). Each method registers its own
sub-commands from ``hphawkes_py/cli/<method>.py`` (a ``register(subparsers)``
function, and optionally ``register_reproduce(subparsers)``), so this file
stays small and methods stay independent.
"""
from __future__ import annotations

import argparse
import importlib
import sys

__all__ = ["main", "build_parser"]

METHODS = ("hawkes", "kde", "sccs", "scan", "mixture")

DESCRIPTION = """\
hphawkes: massively parallel statistics on CPU (Numba) and GPU (CUDA).

Units and file formats
  * CSV files have a header row; column names are chosen with --x/--y/--t style options.
  * Hawkes: locations in km (any planar unit works; bandwidths are in the same unit),
    times in hours (rates are per hour).  KDE: planar coordinates in the units of the
    window raster (.asc ESRI ASCII grid; NODATA cells are outside).  Scan: planar
    coordinates; SaTScan .cas/.ctl/.pop/.geo files are accepted.  SCCS: OHDSI long
    format (outcomes: stratum_id,row_id,y,time; covariates: row_id,covariate_id[,value]).
    Mixture: one row per observation, numeric columns.
  * --backend auto|cpu|gpu|emulator selects the engine (auto = GPU when usable).
"""


def _add_info(sub) -> None:
    p = sub.add_parser("info", help="versions, CPU threads, Numba threading layer, GPU/PyCUDA and nvcc status")
    p.set_defaults(func=_cmd_info)


def _cmd_info(args: argparse.Namespace) -> int:
    from .._info import info_text

    print(info_text())
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hphawkes", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    from .. import __version__

    parser.add_argument("--version", action="version", version=f"hphawkes_py {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add_info(sub)
    reproduce = sub.add_parser("reproduce", help="reproduce a paper's analysis on the bundled data")
    reproduce_sub = reproduce.add_subparsers(dest="analysis", metavar="ANALYSIS")
    for method in METHODS:
        try:
            mod = importlib.import_module(f"hphawkes_py.cli.{method}")
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.startswith(f"hphawkes_py.cli.{method}"):
                continue  # method not built yet
            raise
        mod.register(sub)
        if hasattr(mod, "register_reproduce"):
            mod.register_reproduce(reproduce_sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0 if args.command is None else 2
    try:
        return int(args.func(args) or 0)
    except (ValueError, TypeError, FileNotFoundError) as exc:
        print(f"hphawkes {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
