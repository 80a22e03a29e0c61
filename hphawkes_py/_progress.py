"""Progress bars on stderr (tqdm), switched off with ``progress=False``."""
from __future__ import annotations

import sys

__all__ = ["progress_bar"]


class _Silent:
    """What a switched-off bar is: no tqdm object at all. A disabled tqdm still creates tqdm's
    multiprocessing write lock, and in a spawned worker that lock starts a resource tracker
    (CPython 3.11.7 can fail there: '_thread.RLock' object has no attribute '_recursion_count')."""

    n = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, n=1):
        self.n += n

    def set_postfix(self, *args, **kwargs):
        pass

    def set_description(self, *args, **kwargs):
        pass

    def close(self):
        pass


def progress_bar(total: int | None = None, desc: str | None = None, enabled: bool = True, **kwargs):
    """A tqdm bar on stderr; a silent stand-in when ``enabled`` is False. Use as a context manager."""
    if not enabled:
        return _Silent()
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, file=sys.stderr, dynamic_ncols=True, leave=False, **kwargs)
