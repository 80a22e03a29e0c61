"""Command-line pieces shared by every method's sub-commands: engine options, output folders
written atomically, and the one error line."""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

from .._backend import BACKENDS

__all__ = ["add_engine_arguments", "add_output_arguments", "check_output_dir", "atomic_output_dir",
           "CliError"]


class CliError(RuntimeError):
    """An expected failure of a command (bad option, unusable path): printed as one line."""


def add_engine_arguments(parser, *, threads: bool = True) -> None:
    """Add ``--backend`` (and ``--threads``) to a sub-command, the same way for every method."""
    parser.add_argument(
        "--backend", choices=BACKENDS, default="auto",
        help="engine: auto (GPU when PyCUDA or CuPy and a device are usable, else CPU), cpu, gpu, "
             "or emulator (the CUDA kernels run on the CPU, for validation)",
    )
    if threads:
        parser.add_argument("--threads", type=_positive_int, default=None,
                            help="CPU threads for the Numba engine (default: all)")


def _positive_int(text: str) -> int:
    import argparse

    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {v}")
    return v


def add_output_arguments(parser, default: str | None) -> None:
    """``--out DIR`` and ``--overwrite`` for commands that write a folder of tables and figures."""
    parser.add_argument("--out", default=default, help="output folder (written atomically: created only when "
                                                       "the whole run succeeded)" + (f"; default {default}" if default else ""))
    parser.add_argument("--overwrite", action="store_true",
                        help="replace an existing non-empty output folder (refused otherwise)")


def check_output_dir(path, overwrite: bool = False) -> Path:
    """Refuse, before any work, an output folder that cannot be written or would be overwritten.

    Raises
    ------
    CliError
        ``path`` is an existing file, a non-empty folder without ``overwrite``, or its parent
        folder is missing or not writable.
    """
    p = Path(path).expanduser()
    if p.exists() and not p.is_dir():
        raise CliError(f"--out {path}: exists and is not a folder")
    if p.is_dir() and any(p.iterdir()) and not overwrite:
        raise CliError(f"--out {path}: folder exists and is not empty; pass --overwrite to replace it")
    parent = p.resolve().parent
    if not parent.is_dir():
        raise CliError(f"--out {path}: parent folder {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise CliError(f"--out {path}: parent folder {parent} is not writable")
    return p


@contextlib.contextmanager
def atomic_output_dir(path, overwrite: bool = False):
    """Yield a temporary folder beside ``path``; move it into place only if the block succeeds.

    A run that fails or is killed midway leaves the previous contents of ``path`` untouched (and
    at most a hidden ``.name.tmp-*`` folder), never a mix of new and old files.
    """
    target = check_output_dir(path, overwrite).resolve()
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if target.exists():
        old = target.with_name(f".{target.name}.old-{os.getpid()}")
        os.replace(target, old)
        os.replace(tmp, target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, target)
