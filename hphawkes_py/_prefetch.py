"""A software prefetch for Numba kernels that gather from tables too large for the core's caches.

A kernel that reads ``table[i]`` at indices it can compute some iterations ahead of the read (the
scan's ``k log k`` lookups at a window's population, which jump by a cache line or more from one
window to the next) can ask for those lines early, so that the loads overlap instead of each waiting
on memory. :func:`prefetch` is LLVM's ``llvm.prefetch``: a hint with no architectural effect, so a
kernel's results are the same with or without it, and an index outside the array never faults (it
is still the caller's job to pass indices it would read).
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["prefetch"]


@intrinsic
def prefetch(typingctx, arr, idx):
    """Ask for the cache line holding ``arr[idx]`` (1-d array, integer index) to be loaded for reading
    (temporal locality 3: keep it in all cache levels). Returns nothing.

    Examples
    --------
    >>> import numpy as np
    >>> from numba import njit
    >>> @njit
    ... def total(table, idx):
    ...     s = 0.0
    ...     for k in range(idx.shape[0]):
    ...         if k + 8 < idx.shape[0]:
    ...             prefetch(table, idx[k + 8])
    ...         s += table[idx[k]]
    ...     return s
    >>> float(total(np.arange(100.0), np.arange(0, 100, 7)))
    735.0
    """
    if not (isinstance(arr, types.Array) and arr.ndim == 1 and isinstance(idx, types.Integer)):
        return None
    sig = types.void(arr, idx)

    def codegen(context, builder, signature, args):
        aryty, idxty = signature.args
        ary = context.make_array(aryty)(context, builder, args[0])
        index = context.cast(builder, args[1], idxty, types.intp)
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [index], wraparound=False)
        i32 = ir.IntType(32)
        if getattr(ptr.type, "is_opaque", False):
            name = "llvm.prefetch.p0"
        else:  # LLVM with typed pointers (older llvmlite): the intrinsic takes an i8*
            ptr = builder.bitcast(ptr, ir.IntType(8).as_pointer())
            name = "llvm.prefetch.p0i8"
        fnty = ir.FunctionType(ir.VoidType(), [ptr.type, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, name)
        # (address, read, locality 3, data cache)
        builder.call(fn, [ptr, i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return sig, codegen
