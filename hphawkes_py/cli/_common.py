"""Command-line pieces shared by every method's sub-commands."""
from __future__ import annotations

from .._backend import BACKENDS

__all__ = ["add_engine_arguments"]


def add_engine_arguments(parser, *, threads: bool = True) -> None:
    """Add ``--backend`` (and ``--threads``) to a sub-command, the same way for every method."""
    parser.add_argument(
        "--backend", choices=BACKENDS, default="auto",
        help="engine: auto (GPU when PyCUDA and a device are usable, else CPU), cpu, gpu, "
             "or emulator (the CUDA kernels run on the CPU, for validation)",
    )
    if threads:
        parser.add_argument("--threads", type=int, default=None,
                            help="CPU threads for the Numba engine (default: all)")
