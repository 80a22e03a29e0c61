"""Posterior draws -> ``coda::mcmc.list`` through rpy2 (for Python users who hand results to R).

rpy2 is imported inside the function, so ``import hphawkes_py`` never needs R.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

__all__ = ["draws_to_coda", "column_names"]


def _flatten_draws(draws: Mapping) -> tuple[list[str], np.ndarray]:
    """Stack a ``{name: array (chains, draws[, ...])}`` mapping into (chains, draws, columns).

    Scalar parameters give one column named after the parameter; a parameter with extra
    trailing dimensions (e.g. mixture weights ``(chains, draws, k)``) gives one column per
    element, named ``name[i]`` / ``name[i,j]`` with 1-based indices (R's convention), in
    row-major order.
    """
    if not isinstance(draws, Mapping) or len(draws) == 0:
        raise ValueError(
            f"draws must be a non-empty dict mapping parameter names to arrays of shape (chains, draws), "
            f"got {type(draws).__name__}" + (" (empty)" if isinstance(draws, Mapping) else "")
        )
    names: list[str] = []
    blocks: list[np.ndarray] = []
    shape0 = None
    for name, value in draws.items():
        if not isinstance(name, str):
            raise TypeError(f"draws keys must be parameter names (str), got {name!r}")
        arr = np.asarray(value)
        if arr.dtype.kind not in "fiub":
            raise TypeError(f"draws[{name!r}] must be numeric, got dtype {arr.dtype}")
        arr = arr.astype(np.float64, copy=False)
        if arr.ndim == 1:  # a single chain
            arr = arr[None, :]
        if arr.ndim < 2:
            raise ValueError(f"draws[{name!r}] must have shape (chains, draws[, ...]), got shape {arr.shape}")
        if shape0 is None:
            shape0 = arr.shape[:2]
        elif arr.shape[:2] != shape0:
            raise ValueError(
                f"all draws must share (chains, draws) = {shape0}, but draws[{name!r}] has shape {arr.shape}"
            )
        if arr.shape[1] < 1:
            raise ValueError(f"draws[{name!r}] holds no draws (shape {arr.shape})")
        trailing = arr.shape[2:]
        if not trailing:
            names.append(name)
            blocks.append(arr[:, :, None])
        else:
            for idx in np.ndindex(*trailing):
                names.append(f"{name}[{','.join(str(i + 1) for i in idx)}]")
            blocks.append(arr.reshape(arr.shape[0], arr.shape[1], -1))
    return names, np.concatenate(blocks, axis=2)


def column_names(draws: Mapping) -> list[str]:
    """The coda column names :func:`draws_to_coda` would use for ``draws``."""
    return _flatten_draws(draws)[0]


def draws_to_coda(draws: Mapping, *, start: int = 1, thin: int = 1):
    """Convert posterior draws to an R ``coda::mcmc.list`` (one ``mcmc`` per chain).

    Parameters
    ----------
    draws : dict of str -> ndarray
        Parameter name -> draws of shape ``(chains, draws)`` (a 1-D array is one chain).
        Arrays with extra trailing dimensions become one column per element (``name[i]``).
    start, thin : int
        Iteration number of the first kept draw and the thinning interval, stored in the
        ``mcpar`` attribute of each ``mcmc`` object (coda uses them for trace-plot axes).

    Returns
    -------
    rpy2.robjects.vectors.ListVector
        An R object of class ``mcmc.list``; columns are the parameter names. Use it from
        Python through ``rpy2.robjects.packages.importr("coda")`` (``HPDinterval``,
        ``gelman_diag``, ``effectiveSize``) or assign it into R's global environment.

    Raises
    ------
    ImportError
        rpy2 is not installed (``pip install 'hphawkes_py[r]'``) or R lacks the coda package.
    ValueError, TypeError
        ``draws`` is empty, not numeric, or the arrays disagree in (chains, draws).
    """
    names, stacked = _flatten_draws(draws)
    if int(start) != start or start < 1:
        raise ValueError(f"start must be a positive integer, got {start!r}")
    if int(thin) != thin or thin < 1:
        raise ValueError(f"thin must be a positive integer, got {thin!r}")
    try:
        import rpy2.robjects as ro
        from rpy2.robjects.packages import PackageNotInstalledError, importr
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            f"draws_to_coda needs rpy2 ({exc}); install it with `pip install 'hphawkes_py[r]'` "
            "(rpy2>=3.5,<3.6 and a working R installation)"
        ) from exc
    try:
        coda = importr("coda")
    except PackageNotInstalledError as exc:  # pragma: no cover
        raise ImportError(
            "the R package 'coda' is not installed; install it in R with install.packages('coda') "
            "or on Debian/Ubuntu with `apt-get install r-cran-coda`"
        ) from exc

    n_chains, n_draws, n_cols = stacked.shape
    colnames = ro.StrVector(names)
    chains = []
    for c in range(n_chains):
        # R matrices are column-major: ravel in Fortran order so column j is parameter j.
        flat = np.ascontiguousarray(stacked[c]).ravel(order="F")
        mat = ro.r["matrix"](ro.FloatVector(flat.tolist()), nrow=n_draws, ncol=n_cols)
        mat = ro.r["dimnames<-"](mat, ro.r["list"](ro.NULL, colnames))
        chains.append(coda.mcmc(mat, start=int(start), thin=int(thin)))
    return coda.mcmc_list(*chains)
