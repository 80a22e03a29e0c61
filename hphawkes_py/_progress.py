"""Progress bars on stderr (tqdm), switched off with ``progress=False``."""
from __future__ import annotations

import sys

from tqdm.auto import tqdm

__all__ = ["progress_bar"]


def progress_bar(total: int | None = None, desc: str | None = None, enabled: bool = True, **kwargs):
    """A tqdm bar on stderr; a silent one when ``enabled`` is False. Use as a context manager."""
    return tqdm(total=total, desc=desc, disable=not enabled, file=sys.stderr, dynamic_ncols=True,
                leave=False, **kwargs)
