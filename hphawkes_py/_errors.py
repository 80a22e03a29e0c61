"""Exceptions shared by every layer (kept import-free so that any module can raise them)."""
from __future__ import annotations

__all__ = ["BackendUnavailableError"]


class BackendUnavailableError(RuntimeError):
    """A requested backend cannot run on this machine (the message says why and how to fix it)."""
