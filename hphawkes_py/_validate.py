"""Input checks shared by every method.

Each check runs before any work begins and raises ``ValueError`` (wrong value)
or ``TypeError`` (wrong kind) with a message that names the argument, what was
expected and what was received -- in the spirit of scikit-learn's
``sklearn/utils/validation.py``. Nothing here drops, clips or reorders data.
"""
from __future__ import annotations

import numbers
from typing import Any, Iterable, Sequence

import numpy as np

__all__ = [
    "as_float_array",
    "as_count_array",
    "check_dtype",
    "check_positive",
    "check_int",
    "check_in",
    "check_bool",
    "check_threads",
    "check_probability",
    "check_same_length",
    "check_sorted",
    "check_random_state",
    "describe",
]


def describe(x: Any) -> str:
    """A short description of a received value for error messages."""
    if isinstance(x, np.ndarray):
        return f"array of shape {x.shape} and dtype {x.dtype}"
    if isinstance(x, (list, tuple)):
        return f"{type(x).__name__} of length {len(x)}"
    r = repr(x)
    return r if len(r) <= 60 else r[:57] + "..."


def check_dtype(dtype: Any, name: str = "dtype") -> np.dtype:
    """Accept only float32 or float64 (the precisions every engine implements)."""
    try:
        dt = np.dtype(dtype)
    except TypeError as exc:
        raise TypeError(f"{name} must be numpy.float32 or numpy.float64, got {dtype!r}") from exc
    if dt not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(f"{name} must be numpy.float32 or numpy.float64, got {dt}")
    return dt


def as_float_array(
    x: Any,
    name: str,
    *,
    ndim: int | Sequence[int] | None = None,
    shape: Sequence[int | None] | None = None,
    dtype: Any = np.float64,
    finite: bool = True,
    min_rows: int | None = None,
    copy: bool = False,
) -> np.ndarray:
    """Convert to a C-contiguous floating array and check it.

    Parameters
    ----------
    x : array_like
        The user's input.
    name : str
        Argument name used in error messages.
    ndim : int or sequence of int, optional
        Allowed numbers of dimensions.
    shape : sequence of (int or None), optional
        Required shape; ``None`` entries are free.
    dtype : float32 or float64
        Target precision.
    finite : bool
        Refuse NaN and +-inf.
    min_rows : int, optional
        Minimum length of the first axis.
    copy : bool
        Always return a new array (otherwise the input is reused when possible).
    """
    dt = check_dtype(dtype)
    if x is None:
        raise TypeError(f"{name} must be an array of numbers, got None")
    check_real(x, name)
    try:
        arr = np.array(x, dtype=dt, copy=True, order="C") if copy else np.ascontiguousarray(x, dtype=dt)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be an array of numbers, got {describe(x)} ({exc})") from exc
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, numbers.Integral) else tuple(ndim)
        if arr.ndim not in allowed:
            exp = " or ".join(str(a) for a in allowed)
            raise ValueError(f"{name} must be {exp}-dimensional, got an array of shape {arr.shape}")
    if shape is not None:
        if arr.ndim != len(shape) or any(s is not None and s != a for s, a in zip(shape, arr.shape)):
            exp = "(" + ", ".join("any" if s is None else str(s) for s in shape) + ")"
            raise ValueError(f"{name} must have shape {exp}, got {arr.shape}")
    if min_rows is not None and (arr.ndim == 0 or arr.shape[0] < min_rows):
        got = 0 if arr.ndim == 0 else arr.shape[0]
        raise ValueError(f"{name} needs at least {min_rows} rows, got {got}")
    if finite and arr.size and not np.isfinite(arr).all():
        bad = ~np.isfinite(arr)
        idx = np.argwhere(bad)[0]
        where = tuple(int(i) for i in idx)
        raise ValueError(
            f"{name} must be finite: {int(bad.sum())} NaN/inf value(s), first at index "
            f"{where[0] if len(where) == 1 else where} ({arr[tuple(idx)].item()!r})"
        )
    return arr


def check_real(X: Any, name: str) -> np.ndarray:
    """X as an ndarray of real numbers (bool, integer or float), before any conversion.

    NumPy casts dates, durations, complex numbers and numeric strings to float without a word
    (a datetime64 becomes days since 1970, a complex number loses its imaginary part); here
    they are refused, naming the column of a DataFrame.
    """
    dtypes = getattr(X, "dtypes", None)
    if dtypes is not None and hasattr(dtypes, "items"):
        for col, dt in dtypes.items():
            kind = getattr(dt, "kind", "O")
            if kind not in "biuf":
                raise TypeError(
                    f"{name} must be an array of numbers (bool, integer or float columns), but column {col!r} has "
                    f"dtype {dt}: convert it to numbers explicitly (dates, e.g., to days since an origin)"
                )
    arr = X if isinstance(X, np.ndarray) else np.asarray(X)
    kind = arr.dtype.kind
    if kind == "O":
        flat = arr.ravel()
        bad = [i for i, v in enumerate(flat) if not isinstance(v, (numbers.Real, np.bool_))]
        if bad:
            v = flat[bad[0]]
            where = np.unravel_index(bad[0], arr.shape) if arr.ndim > 1 else (bad[0],)
            raise TypeError(
                f"{name} must be an array of numbers (bool, integer or float), got {type(v).__name__} {v!r} at index "
                f"{tuple(int(i) for i in where)} ({len(bad)} such value(s))"
            )
    elif kind not in "biuf":
        hint = ": convert dates and durations to numbers explicitly (e.g. days since an origin)" if kind in "Mm" else ""
        raise TypeError(f"{name} must be an array of numbers (bool, integer or float), got an array of dtype {arr.dtype}{hint}")
    return arr


def as_count_array(x: Any, name: str, *, ndim: int = 1) -> np.ndarray:
    """Non-negative integer counts as int64; refuses fractions, negatives, NaN."""
    arr = np.asarray(x)
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    if arr.dtype.kind == "b":
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold integer counts, got dtype {arr.dtype}")
    if arr.dtype.kind == "f":
        if not np.isfinite(arr).all():
            raise ValueError(f"{name} must be finite counts; found NaN/inf")
        frac = arr != np.round(arr)
        if frac.any():
            i = int(np.argmax(frac))
            raise ValueError(f"{name} must hold whole numbers; {name}[{i}] = {arr[i].item()!r}")
    if (arr < 0).any():
        i = int(np.argmax(arr < 0))
        raise ValueError(f"{name} must be non-negative; {name}[{i}] = {arr[i].item()!r}")
    # uint64 beyond int64 and floats at or above 2**63 would wrap or cast to garbage in int64
    too_big = arr > np.iinfo(np.int64).max if arr.dtype.kind == "u" else arr >= 2.0**63 if arr.dtype.kind == "f" else None
    if too_big is not None and too_big.any():
        i = int(np.argmax(too_big))
        raise ValueError(f"{name} must be below 2**63 (int64); {name}[{i}] = {arr[i].item()!r}")
    return np.ascontiguousarray(arr, dtype=np.int64)


def check_positive(value: Any, name: str, *, strict: bool = True, finite: bool = True) -> float:
    """A real scalar > 0 (or >= 0 with ``strict=False``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {describe(value)}")
    v = float(value)
    if finite and not np.isfinite(v):
        raise ValueError(f"{name} must be finite, got {v}")
    if (strict and not v > 0) or (not strict and not v >= 0):
        raise ValueError(f"{name} must be {'> 0' if strict else '>= 0'}, got {v}")
    return v


def check_int(value: Any, name: str, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """An integer (not bool) within optional bounds."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {describe(value)}")
    v = int(value)
    if minimum is not None and v < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {v}")
    if maximum is not None and v > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {v}")
    return v


def check_probability(value: Any, name: str, *, low_open: bool = True, high_open: bool = False) -> float:
    """A real number in (0, 1] by default (bounds open/closed as asked)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {describe(value)}")
    v = float(value)
    lo_ok = v > 0 if low_open else v >= 0
    hi_ok = v < 1 if high_open else v <= 1
    if not (np.isfinite(v) and lo_ok and hi_ok):
        interval = ("(" if low_open else "[") + "0, 1" + (")" if high_open else "]")
        raise ValueError(f"{name} must be in {interval}, got {v}")
    return v


def check_bool(value: Any, name: str) -> bool:
    """True or False only: ``"no"``, ``0``, ``None`` where a flag is meant are refused, not coerced."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {describe(value)}")
    return bool(value)


def check_threads(threads: Any) -> int | None:
    """``threads`` at an entry point: None (all cores) or a positive integer."""
    if threads is not None:
        check_int(threads, "threads", minimum=1)
    return threads


def check_in(value: Any, name: str, options: Iterable[Any]) -> Any:
    """``value`` must be one of ``options``."""
    opts = tuple(options)
    if value not in opts:
        raise ValueError(f"{name} must be one of {opts}, got {value!r}")
    return value


def check_same_length(**arrays: Any) -> int:
    """All arrays share their first-axis length; returns it."""
    lengths = {k: len(v) for k, v in arrays.items()}
    if len(set(lengths.values())) > 1:
        detail = ", ".join(f"{k} has {n}" for k, n in lengths.items())
        raise ValueError(f"{' and '.join(lengths)} must have the same length: {detail}")
    return next(iter(lengths.values())) if lengths else 0


def check_sorted(x: np.ndarray, name: str, *, strict: bool = False) -> None:
    """``x`` (1-D) must be non-decreasing (increasing with ``strict=True``)."""
    d = np.diff(x)
    bad = d <= 0 if strict else d < 0
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(
            f"{name} must be {'strictly increasing' if strict else 'sorted (non-decreasing)'}; "
            f"{name}[{i}] = {x[i].item()!r} is followed by {x[i + 1].item()!r}"
        )


def check_seed(seed: Any, name: str = "seed"):
    """Validate a seed argument: ``None``, a non-negative int, a ``SeedSequence`` or a ``Generator``.

    Returns it unchanged (bools, negative ints and other types are refused naming ``name``). The one
    seed check behind :func:`check_random_state` and :func:`hphawkes_py._parallel.spawn_seeds`.
    """
    if isinstance(seed, (np.random.Generator, np.random.SeedSequence)) or seed is None:
        return seed
    if isinstance(seed, numbers.Integral) and not isinstance(seed, (bool, np.bool_)):
        if seed < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {seed}")
        return int(seed)
    raise TypeError(f"{name} must be None, an int, a numpy SeedSequence or a numpy Generator, got {describe(seed)}")


def check_random_state(seed: Any, name: str = "seed") -> np.random.Generator:
    """``None``, an int, a ``SeedSequence`` or a ``Generator`` -> ``numpy.random.Generator``."""
    seed = check_seed(seed, name)
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
