"""Interoperability with R.

* :func:`draws_to_coda` (``coda.py``) turns posterior draws into a ``coda::mcmc.list``
  through rpy2 (imported lazily: rpy2 is only needed when you call it). It backs
  ``HawkesPosterior.to_coda()``.
* ``rfriendly.py`` turns results into plain Python values (dicts, lists, strings,
  base64-encoded little-endian buffers) that the R package ``hphawkes`` decodes without
  asking reticulate to touch NumPy objects. This matters because reticulate 1.28 (Debian
  bookworm) cannot use the NumPy 2 C API: converting an ``ndarray`` there fails with
  "Required version of NumPy not available".
"""
from __future__ import annotations

__all__ = ["draws_to_coda", "encode", "array_from_r", "frame_from_r"]


def __getattr__(name):
    if name == "draws_to_coda":
        from .coda import draws_to_coda

        return draws_to_coda
    if name in {"encode", "array_from_r", "frame_from_r"}:
        from . import rfriendly

        return getattr(rfriendly, name)
    raise AttributeError(f"module 'hphawkes_py.interop' has no attribute {name!r}")
