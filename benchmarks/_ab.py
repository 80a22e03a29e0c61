"""Another version of the package imported beside this one, for A/B runs alternated in one process."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path


def import_other(tree: Path, into: Path):
    """The ``hphawkes_py`` of the checkout ``tree`` copied into the folder ``into`` as ``hphawkes_old``
    (its absolute imports renamed) and imported, so that both versions run side by side."""
    src = Path(tree) / "hphawkes_py"
    if not (src / "__init__.py").is_file():
        raise SystemExit(f"no hphawkes_py package in {tree}")
    dst = Path(into) / "hphawkes_old"
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "data"))
    for f in dst.rglob("*.py"):
        f.write_text(f.read_text().replace("hphawkes_py", "hphawkes_old"))
    sys.path.insert(0, str(into))
    import hphawkes_old

    return hphawkes_old
