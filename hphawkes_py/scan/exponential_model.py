"""Kulldorff's spatial scan statistic for survival times with censoring: the exponential model.

Huang, Kulldorff & Gregorio (2007, "The spatial scan statistic for survival data", Biometrics 63:109)
and SaTScan's exponential model (``ExponentialRandomizer``, scored by its ``PoissonLikelihoodCalculator``):

1. every patient has a survival (follow-up) time ``t > 0`` and is censored or not, at a location;
2. the times are calibrated so that they total the number C of uncensored patients (``t C / sum t``);
   a window's calibrated time is then its expected number of deaths under the null of one hazard
   everywhere;
3. circular windows are grown through the nearest locations until the number of patients
   (censored or not) inside would exceed ``max_population`` x the total, and a window with ``c``
   deaths where ``mu`` are expected has the log likelihood ratio
   ``c log(c/mu) + (C-c) log((C-c)/(C-mu)) - C log(C/C_mu)`` (``C_mu``: the calibrated total, C up to
   rounding) when its rate ``c / mu`` is higher (lower, either) than outside: a higher rate is shorter
   survival;
4. Monte Carlo inference: the (time, censoring) pairs permuted among the patients, who keep their
   locations.

The engine, windows and Monte Carlo are those of the normal model (:mod:`.normal`); SaTScan's rules are
kept: a window whose calibrated time is exactly 0 is never a cluster, high-rate windows need
``min_cases`` deaths.
"""
from __future__ import annotations

import math

import numpy as np

from .._validate import as_float_array
from .locations import _check_xy, check_empty_locations, check_location_ids
from .model import _check_windows
from .monte_carlo import check_run
from .normal_model import EXPONENTIAL, scan_observations
from .result import ScanResult

__all__ = ["exponential"]


def _check_patients(times, censored, n, name="times"):
    """Survival times and censoring of :func:`exponential`, checked: ``(t float64, censored bool)``."""
    t = as_float_array(times, name, ndim=1, copy=True)
    if len(t) != n:
        raise ValueError(f"coords and {name} must have the same length (one row per patient); got coords {n}, "
                         f"{name} {len(t)}")
    if (t <= 0).any():
        i = int(np.argmax(t <= 0))
        raise ValueError(f"{name} must be positive (survival or follow-up times); {name}[{i}] = {float(t[i])!r}")
    with np.errstate(over="ignore"):
        big = not np.isfinite(float(t.max()) * n)
    if big:
        raise ValueError(f"{name} up to {float(t.max())!r} are too large: their sum would leave the floating-point "
                         f"range; rescale them (e.g. another unit)")
    if censored is None:
        cen = np.zeros(n, dtype=bool)
    else:
        c = np.asarray(censored)
        if c.ndim != 1 or len(c) != n:
            raise ValueError(f"censored must have one entry per patient ({n}), got shape {c.shape}")
        if c.dtype.kind == "b":
            cen = c.copy()
        else:
            if c.dtype.kind not in "iuf" or not np.isin(c, (0, 1)).all():
                bad = [i for i, v in enumerate(c.tolist()) if v not in (0, 1)] if c.dtype.kind in "iuf" else [0]
                raise ValueError(f"censored must be 0/1 or True/False (1: censored); censored[{bad[0]}] = "
                                 f"{c.tolist()[bad[0]]!r}")
            cen = c.astype(bool)
    C = int((~cen).sum())
    if C < 1:
        raise ValueError("every patient is censored: the exponential model needs at least one uncensored time")
    return t, cen


def _calibrated(t, C):
    """SaTScan's calibration: every time times ``C / sum t`` (sums in patient order), and their total."""
    factor = float(C) / float(np.add.accumulate(t)[-1])
    mu = t * factor
    return mu, float(np.add.accumulate(mu)[-1])


def exponential(coords, times, censored=None, *, location_ids=None, max_population=0.5, max_distance=None, min_cases=2,
                n_replicates=999, direction="high", secondary="no-overlap", grid_cell=None, distance="euclidean",
                seed=None, executor=None, backend="auto", threads=None, progress=True, empty_locations=None,
                empty_location_ids=None) -> ScanResult:
    """Kulldorff's spatial scan statistic for survival data (exponential model) with Monte Carlo inference.

    Semantics follow SaTScan's purely spatial exponential analysis (Huang, Kulldorff & Gregorio 2007):
    circular windows up to ``max_population`` of the patients, scored by the likelihood ratio of a
    different hazard inside than outside (see the module notes), the (time, censoring) pairs
    permuted among the patients for the null.

    Parameters
    ----------
    coords : array_like (n, 2)
        Coordinates of each patient's location (one row per patient; rows with identical coordinates
        are one location). Planar, Euclidean distances, unless ``distance="great_circle"``.
    times : array_like (n,)
        Survival (follow-up) time of each patient, > 0, in any unit.
    censored : array_like (n,) of bool or 0/1, optional
        1 (True) where the patient's time is censored (alive at the end of follow-up); default none.
    location_ids : array_like (n,), optional
        Location id of each patient (rows of one location share it), reported once per location.
    max_population : float in (0, 0.5]
        Maximum number of patients in a window, as a fraction of all patients (SaTScan counts censored
        and uncensored patients).
    max_distance : float, optional
        Maximum circle radius (coordinate units; km with ``distance="great_circle"``).
    min_cases : int >= 0
        Uncensored patients a high-rate window needs (SaTScan's minimum cases for high rates,
        default 2; must be >= 2 when high rates are scanned, as SaTScan requires); low-rate windows
        have no minimum.
    n_replicates : int >= 1
        Monte Carlo replicates.
    direction : {"high", "low", "both"}
        Scan for windows with a higher death rate (shorter survival; lower, either) than outside.
    secondary : {"no-overlap"}
        As in :func:`~hphawkes_py.scan.bernoulli`.
    grid_cell : float, optional
        Circles centred on the cells of a regular grid of this side instead of on the locations.
    distance : {"euclidean", "great_circle"}
        As in :func:`~hphawkes_py.scan.bernoulli`.
    seed : None, int, SeedSequence or Generator
        Root of the per-replicate seeds.
    executor : None, concurrent.futures.Executor or dask Client
        Where the Monte Carlo batches run.
    backend : {"auto", "cpu", "gpu", "emulator"}
        The engine (the CUDA kernel on a GPU, or on the CPU emulator; its logarithms are the device's,
        within an ulp of the CPU engine's).
    threads : int, optional
        Numba threads.
    progress : bool
        Show a progress bar over Monte Carlo batches.
    empty_locations : array_like (k, 2), optional
        Locations without observations (a SaTScan coordinates file's locations that no record names): circle
        centres, and members of the circles that reach them, as SaTScan scans them.
    empty_location_ids : array_like (k,), optional
        Their ids (needed with ``location_ids``).

    Returns
    -------
    ScanResult
        ``model="exponential"``: ``clusters.cases`` the uncensored patients in the window,
        ``population`` its patients, ``expected`` its expected deaths (calibrated time),
        ``observed_over_expected``; ``relative_risk`` is NaN (SaTScan reports none for this model);
        ``mean_time_inside`` and ``mean_time_outside`` (the patients' mean time, in the unit of
        ``times``) and ``censored`` (censored patients inside). ``n_cases``: uncensored patients,
        ``n_population``: patients.

    Examples
    --------
    Survival of 300 patients at 50 locations, shorter near one of them:

    >>> rng = np.random.default_rng(4)
    >>> xy = rng.uniform(0, 10, (50, 2)).round(3)
    >>> where = rng.integers(0, 50, 300)
    >>> near = np.hypot(*(xy[where] - xy[0]).T) < 2.5
    >>> t = rng.exponential(np.where(near, 2.0, 6.0)).round(3) + 0.001
    >>> cen = t > 8
    >>> res = hp.scan.exponential(xy[where], np.minimum(t, 8), cen, location_ids=where,
    ...                           n_replicates=99, seed=1, backend="cpu", progress=False)
    >>> top = res.most_likely
    >>> print(top.cases, round(top.expected, 1), top.p_value)
    66 27.5 0.01
    """
    xy = _check_xy(coords)
    n = xy.shape[0]
    t, cen = _check_patients(times, censored, n)
    ids = check_location_ids(location_ids, n, repeats=True)
    ws = _check_windows(xy, max_population, max_distance, grid_cell, distance, "circle", (), (), "none")
    run = check_run(min_cases, n_replicates, direction, secondary, progress, threads, seed, backend, executor)
    if run.direction in ("high", "both") and run.min_cases < 2:
        raise ValueError(f"min_cases={run.min_cases}: SaTScan needs at least 2 cases in a high-rate cluster; give "
                         f"min_cases >= 2")
    dead = (~cen).astype(np.int64)
    C = int(dead.sum())
    mu, U = _calibrated(t, C)

    def stats(inside, c):
        e = float(np.add.accumulate(mu[inside])[-1]) if inside.any() else 0.0
        out = ~inside
        extra = {"mean_time_inside": float(t[inside].mean()) if inside.any() else math.nan,
                 "mean_time_outside": float(t[out].mean()) if out.any() else math.nan,
                 "censored": int(cen[inside].sum())}
        return int(inside.sum()), e, math.nan, extra

    empty = check_empty_locations(empty_locations, empty_location_ids, location_ids is not None)
    fields = scan_observations(EXPONENTIAL, xy, ids, location_ids is not None, ws, run, dead.astype(np.float64), mu,
                               dead, (C, U, 0.0, 0.0, 0.0), (run.min_cases, 0), stats, empty)
    l_exp = np.bincount(fields["_row_loc"][:n], weights=mu, minlength=fields["n_locations"])
    return ScanResult(**fields, n_cases=C, n_population=n, min_cases=run.min_cases, model="exponential",
                      _loc_expected=l_exp)
