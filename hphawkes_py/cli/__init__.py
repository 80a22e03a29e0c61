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
    parser.add_argument("--debug", action="store_true", help="show Python tracebacks instead of one-line errors")
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


def _expected_errors() -> tuple:
    import gzip
    import zipfile

    from .._errors import BackendUnavailableError
    from ._common import CliError

    # ValueError covers pandas' parser errors and UnicodeDecodeError; OSError covers unreadable,
    # missing or directory paths and broken gzip files.
    return (ValueError, TypeError, OSError, EOFError, gzip.BadGzipFile, zipfile.BadZipFile,
            BackendUnavailableError, CliError)


def main(argv: list[str] | None = None) -> int:
    """Run ``hphawkes``; every failure is one line ``hphawkes: error: ...`` and a non-zero exit
    status (2 for expected failures, 1 for anything else); ``--debug`` shows the traceback."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0 if args.command is None else 2
    from ._common import Terminated

    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("hphawkes: interrupted", file=sys.stderr)
        return 130
    except Terminated as exc:  # SIGTERM while an output folder was being written: it was cleaned up
        print(f"hphawkes: terminated (SIGTERM): {args.command}: {exc.what}", file=sys.stderr)
        return int(exc.code)
    except Exception as exc:  # noqa: BLE001 - the command line shows one line, not a traceback
        if args.debug:
            raise
        expected = isinstance(exc, _expected_errors())
        what = "error" if expected else f"internal error ({type(exc).__name__})"
        msg = " ".join(str(exc).split()) or type(exc).__name__
        hint = "" if expected else " (run with --debug for the traceback, and please report it)"
        print(f"hphawkes: {what}: {args.command}: {msg}{hint}", file=sys.stderr)
        return 2 if expected else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
