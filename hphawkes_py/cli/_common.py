"""Command-line pieces shared by every method's sub-commands: engine options, output folders
written atomically, and the one error line."""
from __future__ import annotations

import contextlib
import errno
import os
import shutil
import signal
import tempfile
import threading
import time
from pathlib import Path

try:  # POSIX; elsewhere output folders are written without the cross-process lock
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None

from .._backend import BACKENDS

__all__ = ["add_engine_arguments", "add_output_arguments", "check_output_dir", "check_output_file",
           "atomic_output_dir", "CliError", "Terminated"]


class CliError(RuntimeError):
    """An expected failure of a command (bad option, unusable path): printed as one line."""


class Terminated(SystemExit):
    """Raised by the SIGTERM handler of :func:`atomic_output_dir`, so that its clean-up runs; the
    process still ends with the status a SIGTERM gives (128 + 15)."""

    def __init__(self, what: str = "the output folder was left as it was"):
        super().__init__(128 + signal.SIGTERM)
        self.what = what


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
                                                       "the whole run succeeded; refused while another run writes "
                                                       "it)" + (f"; default {default}" if default else ""))
    parser.add_argument("--overwrite", action="store_true",
                        help="replace an existing non-empty output folder (refused otherwise)")


def check_output_dir(path, overwrite: bool = False, option: str = "--out") -> Path:
    """Refuse, before any work, an output folder that cannot be written or would be overwritten.

    Parameters
    ----------
    path : path
        The output folder.
    overwrite : bool
        Allow replacing an existing non-empty folder.
    option : str
        The option that gave ``path``, named in the messages.

    Returns
    -------
    pathlib.Path
        ``path`` with ``~`` expanded.

    Raises
    ------
    CliError
        ``path`` is an existing file, a non-empty folder without ``overwrite``, its parent
        folder is missing or not writable, or another run is writing it (:func:`atomic_output_dir`).

    Examples
    --------
    >>> check_output_dir("/nonexistent-parent/out")
    Traceback (most recent call last):
    ...
    hphawkes_py.cli._common.CliError: --out /nonexistent-parent/out: parent folder /nonexistent-parent does not exist
    """
    p = _check_dir(path, overwrite, option)
    _refuse_if_locked(p.resolve(), path, option)
    return p


def _check_dir(path, overwrite: bool, option: str) -> Path:
    p = Path(path).expanduser()
    if p.exists() and not p.is_dir():
        raise CliError(f"{option} {path}: exists and is not a folder")
    if p.is_dir() and any(p.iterdir()) and not overwrite:
        raise CliError(f"{option} {path}: folder exists and is not empty; pass --overwrite to replace it")
    parent = p.resolve().parent
    if not parent.is_dir():
        raise CliError(f"{option} {path}: parent folder {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise CliError(f"{option} {path}: parent folder {parent} is not writable")
    return p


def check_output_file(path, option: str = "--out") -> Path:
    """Refuse, before any work, an output file that cannot be written.

    Parameters
    ----------
    path : path
        The output file.
    option : str
        The option that gave ``path`` (``"--out"``, ``"--png"``, ...), named in the messages.

    Returns
    -------
    pathlib.Path
        ``path`` with ``~`` expanded.

    Raises
    ------
    CliError
        ``path`` is a folder, or its folder is missing or not writable.

    Examples
    --------
    >>> check_output_file("/nonexistent-parent/map.png", option="--png")
    Traceback (most recent call last):
    ...
    hphawkes_py.cli._common.CliError: --png /nonexistent-parent/map.png: folder /nonexistent-parent does not exist
    """
    p = Path(path).expanduser()
    if p.is_dir():
        raise CliError(f"{option} {path}: is a folder; give a file name")
    parent = p.resolve().parent
    if not parent.is_dir():
        raise CliError(f"{option} {path}: folder {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise CliError(f"{option} {path}: folder {parent} is not writable")
    return p


@contextlib.contextmanager
def atomic_output_dir(path, overwrite: bool = False, option: str = "--out"):
    """Yield a temporary folder beside ``path``; move it into place only if the block succeeds.

    A run that fails, is interrupted or is terminated (SIGTERM) midway leaves the previous
    contents of ``path`` untouched and removes its temporary folder. While the block runs, the
    run holds an exclusive lock on ``.NAME.lock`` beside ``path`` (released by the system
    even when the process is killed), so a second run into the same folder is refused at once
    instead of replacing the first one's results. A run that gets the lock removes what killed
    runs left (``.NAME.tmp-*`` folders; a ``.NAME.old-*`` folder is moved back to ``path`` if
    ``path`` itself is missing, since it is then the only copy of the previous results).

    Parameters
    ----------
    path : path
        The output folder; an existing non-empty folder is refused unless ``overwrite``.
    overwrite : bool
        Replace an existing non-empty folder.
    option : str
        The option that gave ``path``, named in the messages.

    Yields
    ------
    pathlib.Path
        The temporary folder to write into.

    Raises
    ------
    CliError
        ``path`` fails :func:`check_output_dir`, another run is writing it, or something else
        created it while this run was working (then nothing is replaced).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "results"
    >>> with atomic_output_dir(out) as tmp:
    ...     _ = (tmp / "table.csv").write_text("a,b\\n1,2\\n")
    >>> sorted(p.name for p in out.iterdir())
    ['table.csv']
    """
    target = _check_dir(path, overwrite, option).resolve()
    with _terminate_cleanly(), _folder_lock(target, path, option):
        _remove_leftovers(target)
        _check_dir(path, overwrite, option)  # again, under the lock
        replace = target.is_dir() and any(target.iterdir())
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-{os.getpid()}-", dir=target.parent))
        try:
            yield tmp
            with _sigterm_deferred():
                _move_into_place(tmp, target, replace, path, option)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise


def _move_into_place(tmp: Path, target: Path, replace: bool, path, option: str) -> None:
    """Rename ``tmp`` to ``target``; an existing ``target`` is replaced only if it was there (and
    allowed to be replaced) when the run began."""
    if replace and target.exists():
        old = target.with_name(f".{target.name}.old-{os.getpid()}")
        os.replace(target, old)
        os.replace(tmp, target)
        shutil.rmtree(old, ignore_errors=True)
        return
    try:
        # rename(2) replaces an empty folder but fails on a non-empty one or a file: what another
        # program put there while this run was working is never overwritten.
        os.rename(tmp, target)
    except OSError as exc:
        if exc.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR, errno.EISDIR):
            raise CliError(f"{option} {path}: was created by something else while this run was working; "
                           f"left it as it is (run again with another {option}, or --overwrite)") from None
        raise


def _remove_leftovers(target: Path) -> None:
    """Remove the temporary folders of runs that were killed (SIGKILL, power loss) into ``target``.

    Called under the folder's lock: no live run owns them. An ``.old-*`` folder with ``target``
    missing holds the previous results of a run killed between its two renames: it is put back.
    """
    for old in sorted(target.parent.glob(f".{target.name}.old-*")):
        if old.is_dir() and not target.exists():
            os.rename(old, target)
        elif old.is_dir():
            shutil.rmtree(old, ignore_errors=True)
    for tmp in target.parent.glob(f".{target.name}.tmp-*"):
        if tmp.is_dir() and not tmp.is_symlink():
            shutil.rmtree(tmp, ignore_errors=True)


def _busy(option: str, path, holder: bytes) -> CliError:
    pid = holder.decode(errors="replace").strip()
    return CliError(f"{option} {path}: another run{f' (pid {pid})' if pid.isdigit() else ''} is writing this "
                    f"folder; wait for it to finish or choose another {option}")


def _refuse_if_locked(target: Path, path, option: str) -> None:
    """Refuse before any work an output folder that another run is writing (see :func:`_folder_lock`)."""
    if fcntl is None:  # pragma: no cover
        return
    try:
        fd = os.open(target.with_name(f".{target.name}.lock"), os.O_RDONLY)
    except OSError:
        return  # no lock file (or none readable): nobody holds it
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        raise _busy(option, path, os.read(fd, 64)) from None
    finally:
        os.close(fd)  # also releases the shared lock taken to look


@contextlib.contextmanager
def _folder_lock(target: Path, path, option: str):
    """Hold an exclusive ``flock`` on ``.NAME.lock`` beside ``target``; refuse at once if another
    process holds it. The lock file is removed on release."""
    if fcntl is None:  # pragma: no cover
        yield
        return
    lock = target.with_name(f".{target.name}.lock")
    tries = 0
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 64)
            os.close(fd)
            tries += 1
            if tries < 20:  # perhaps only a check_output_dir look (a moment's shared lock): try again
                time.sleep(0.01)
                continue
            raise _busy(option, path, holder) from None
        except BaseException:
            os.close(fd)
            raise
        # the holder before us may have removed the file after we opened it: lock the file that is there
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(lock))
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(lock)
        os.close(fd)


def _raise_terminated(signum, frame):
    raise Terminated()


@contextlib.contextmanager
def _terminate_cleanly():
    """Turn SIGTERM into :class:`Terminated` for the block, so that ``except``/``finally`` clean-up
    runs; only in the main thread and only where SIGTERM still has its default action (a handler
    the caller installed is left alone)."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return
    signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextlib.contextmanager
def _sigterm_deferred():
    """Hold a SIGTERM back while the results are renamed into place, so that it cannot leave the
    folder half swapped; it takes effect when the block ends."""
    if signal.getsignal(signal.SIGTERM) is not _raise_terminated:
        yield
        return
    pending = []
    signal.signal(signal.SIGTERM, lambda signum, frame: pending.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, _raise_terminated)
    if pending:
        raise Terminated("after the outputs were written")
