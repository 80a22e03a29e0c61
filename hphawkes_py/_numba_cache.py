"""Keep Numba's on-disk kernel cache consistent with the helpers the kernels inline.

Numba keys a cached kernel on the timestamp and size of the kernel's *own* source file.  A
helper compiled into it from another file -- ``_fastmath.exp_fast`` and friends in every
exp-bearing loop of the Hawkes, KDE and mixture engines -- can change (an edit, or an upgrade of
this package in place, which leaves ``__pycache__`` behind) without invalidating the kernels that
inline it, and they then keep running the old helper silently.  (Seen during development: an
edited ``exp_fast`` was timed through stale kernels.)

:func:`refresh` stamps the shared helper files (size and modification time, what Numba uses for
its own files) next to the package's in-tree caches; when the stamp differs, or is missing, the
package's ``*.nbi``/``*.nbc`` files are removed so every kernel is compiled against the current
helpers.  It runs once per process at ``import hphawkes_py`` and costs a few ``stat`` calls.
Caches Numba keeps elsewhere (``NUMBA_CACHE_DIR``, or a user-wide folder when the package folder
is read-only) are not touched: clear those by hand after changing a helper.
"""
from __future__ import annotations

import os
from pathlib import Path

#: files whose njit functions are compiled into kernels defined in other files
SHARED_HELPERS = ("_fastmath.py",)
STAMP_NAME = "hphawkes-numba-helpers.stamp"


def helpers_stamp(package_dir: Path) -> str:
    """Size and mtime (ns) of each shared helper file, one line each."""
    lines = []
    for name in SHARED_HELPERS:
        st = (package_dir / name).stat()
        lines.append(f"{name} {st.st_size} {st.st_mtime_ns}")
    return "\n".join(lines) + "\n"


def refresh(package_dir: Path | None = None) -> bool:
    """Remove the package's in-tree Numba cache files if the shared helpers changed since they
    were stamped; returns True when caches were removed.  Never raises (a read-only install, a
    missing helper, a concurrent process removing the same files: nothing is done)."""
    try:
        package_dir = Path(package_dir or Path(__file__).resolve().parent)
        stamp = helpers_stamp(package_dir)
        cache = package_dir / "__pycache__"
        path = cache / STAMP_NAME
        if path.is_file() and path.read_text() == stamp:
            return False
        if not os.access(package_dir, os.W_OK):
            return False
        for pattern in ("*.nbi", "*.nbc"):
            for f in package_dir.rglob(pattern):
                try:
                    f.unlink()
                except OSError:
                    pass
        cache.mkdir(exist_ok=True)
        tmp = cache / f"{STAMP_NAME}.{os.getpid()}"
        tmp.write_text(stamp)
        os.replace(tmp, path)
        return True
    except OSError:
        return False
