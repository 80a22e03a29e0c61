"""Kulldorff's purely temporal and seasonal scan statistics (SaTScan's analysis types 2, 6 and 7).

The cases of the whole study region are counted in time units: the days of the study period
aggregated into units of ``time_aggregation`` days, counted back from its last day, the days left
over at the start joining the first unit (so it may be longer), as SaTScan does
(``CSaTScanData::SetIntervalStartTimes``). A *window* is a run of ``min_len`` to ``max_len``
consecutive units; the maximum is a fraction of the study period (``max_temporal_size``, SaTScan's
percentage: ``floor(floor(days x percent / 100) / aggregation)`` units) or a number of days
(``max_temporal_length``). Prospective analyses (:func:`temporal` with ``prospective=True``) keep
the windows that end on the last unit.

The seasonal scan (:func:`seasonal`, SaTScan 10's "seasonal temporal") folds the dates of all
years onto one year of 365 days (29 February counts as 28 February) and scans it as a closed loop:
a window may start in December and end in January. Its maximum size is a fraction of the year.

Engines: the Numba kernel (:mod:`.cpu_temporal`) or the CUDA kernel ``scan_temporal`` (``scan_temporal.cu``,
:mod:`.gpu_temporal`) on a GPU or the emulator; both give the same maxima, bit for bit.

Models: ``"poisson"`` (expected cases proportional to the population-time of a unit: each day's
population, constant when none is given) with the C cases redistributed multinomially over the
units in the Monte Carlo; ``"bernoulli"`` (cases and controls per unit) with the cases relabelled
among the persons. The space-time permutation model is not defined without space (its expectation
is the time margin itself) and is refused, as SaTScan refuses it.

Clusters as SaTScan 10 lists them: the most likely window and, in retrospective purely temporal
analyses, windows wholly before and after it (at least one unit apart, LLR > 1; in each range the
first such window in SaTScan's order, see :func:`_apart`), recursively, in decreasing LLR (a
secondary one whose Monte Carlo p-value is 1 is not listed, so on fine time units there are
seldom any); prospective and seasonal analyses list the most likely window only.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pandas as pd

from .._backend import get_device, is_gpu_backend, threads_context
from .._parallel import run_replicates
from .._validate import check_bool, check_int, describe
from .cpu_temporal import temporal_window_table, temporal_windows_max
from .engine import klogk_table
from .gpu_temporal import GpuTemporalEngine
from .locations import check_counts
from .monte_carlo import BATCH_SIZE, batch_children, check_run, replicate_seed_batches
from .null_draws import draw_multinomial_cases, draw_null_cases
from .space_time_scan import _abs_days, _days
from .time_trend import check_time_trend, time_trend_weights

__all__ = ["temporal", "seasonal", "TemporalResult"]

#: the seasonal year: 365 days, 29 February merged with 28 February
_YEAR = 365
#: largest window as a fraction of the study period (SaTScan's limit: 90 %)
_MAX_FRACTION = 0.9


@dataclasses.dataclass
class TemporalResult:
    """The result of :func:`temporal` or :func:`seasonal` (built by them; its fields are its parameters).

    Parameters
    ----------
    clusters : pandas.DataFrame
        The clusters in decreasing LLR (see the module notes; none when no window has more
        (fewer) cases than expected): ``cluster`` (1, 2, ...), ``start`` and ``end`` (the first day
        of its first unit and the last day of its last unit: dates when ``times`` were dates, else
        day numbers; seasonal: ``"MM/DD"``),
        ``n_units`` (time units), ``cases``, ``expected``, ``observed_over_expected``,
        ``relative_risk`` (inside over outside rate), ``log_likelihood_ratio``, ``p_value``
        (Monte Carlo) and, Bernoulli, ``population`` (cases + controls in the window).
    null_llr : numpy.ndarray
        (n_replicates,) largest window LLR of each Monte Carlo replicate.
    model : str
        ``"poisson"`` or ``"bernoulli"``.
    analysis : str
        ``"retrospective"``, ``"prospective"`` or ``"seasonal"``.
    n_cases : int
        Cases C in the study period.
    n_units : int
        Time units scanned (seasonal: 365 days).
    min_len, max_len : int
        The shortest and longest window, in units.
    unit_cases : numpy.ndarray
        (n_units,) cases per unit.
    unit_expected : numpy.ndarray
        (n_units,) expected cases per unit under the null (Bernoulli: persons x C / N).
    backend : str
        The engine that ran.
    n_population : int, optional
        Bernoulli: the persons (cases + controls) in the study period; None for Poisson.
    study_period : tuple, optional
        The first and last day of the study period (dates when ``times`` were dates, else day
        numbers), as SaTScan's report and tables show it.
    time_aggregation : int
        Days per time unit (seasonal: 1).
    time_trend : dict, optional
        The time-trend adjustment of :func:`temporal` (``time_trend=``), as
        :func:`~hphawkes_py.scan.time_trend.time_trend_weights` describes it; None without.

    Examples
    --------
    >>> res = hp.scan.temporal(np.arange(60), np.r_[np.ones(50, int), np.full(10, 4)], n_replicates=19, seed=1,
    ...                        backend="cpu", progress=False)
    >>> res.analysis, res.model, res.n_units, len(res.null_llr)
    ('retrospective', 'poisson', 60, 19)
    """

    clusters: pd.DataFrame
    null_llr: np.ndarray
    model: str
    analysis: str
    n_cases: int
    n_units: int
    min_len: int
    max_len: int
    unit_cases: np.ndarray
    unit_expected: np.ndarray
    backend: str
    n_population: int | None = None
    study_period: tuple | None = None
    time_aggregation: int = 1
    time_trend: dict | None = None

    @property
    def most_likely(self):
        """The most likely cluster as a named tuple (None when there is none)."""
        rows = list(self.clusters.itertuples(index=False))
        return rows[0] if rows else None

    def __repr__(self) -> str:
        top = self.most_likely
        head = f"TemporalResult({self.analysis} {self.model}, {self.n_cases} cases in {self.n_units} units"
        if top is None:
            return head + ", no cluster)"
        return (head + f"; most likely {top.start} to {top.end}: {top.cases} cases, expected {top.expected:.4g}, "
                f"LLR={top.log_likelihood_ratio:.4f}, p={top.p_value:.4g})")


_COLUMNS = ["cluster", "start", "end", "n_units", "cases", "expected", "observed_over_expected", "relative_risk",
            "log_likelihood_ratio", "p_value"]


@dataclasses.dataclass(frozen=True)
class _Series:
    """One analysis' time units after the checks: cases per unit, the Poisson expectation or the
    Bernoulli persons per unit, the units' first and last day (labels), window lengths."""

    cases: np.ndarray
    expected: Any
    persons: Any
    first: list
    last: list
    min_len: int
    max_len: int
    closed_loop: bool


def _check_model(model, population, controls):
    if model == "space_time_permutation":
        raise ValueError("model='space_time_permutation' is not defined for a purely temporal (or seasonal) scan: "
                         "its expectation is the time margin of the cases itself, so every window would be expected "
                         "exactly; use model='poisson' (with a population) or 'bernoulli' (with controls)")
    if model not in ("poisson", "bernoulli"):
        raise ValueError(f"model must be 'poisson' or 'bernoulli', got {model!r}")
    if model == "bernoulli":
        if population is not None:
            raise ValueError("model='bernoulli' takes cases and controls (give controls=, not population=)")
        if controls is None:
            raise ValueError("model='bernoulli' needs controls= (controls per row of times)")
    elif controls is not None:
        raise ValueError("model='poisson' takes a population (or none: constant), not controls= "
                         "(use model='bernoulli')")


def _check_trend(time_trend, trend_percent, model):
    if time_trend == "nonparametric":
        raise ValueError("time_trend='nonparametric' would make every time unit's expected cases its observed cases, "
                         "leaving no purely temporal cluster (SaTScan refuses it alike); use time_trend='loglinear'")
    check_time_trend(time_trend, trend_percent, model, (None, "loglinear", "logquadratic"))


def _check_size(max_temporal_size, max_temporal_length, min_temporal_length):
    if isinstance(max_temporal_size, (bool, np.bool_)) or not isinstance(max_temporal_size, (int, float, np.number)) \
            or not (0 < float(max_temporal_size) <= _MAX_FRACTION):
        raise ValueError(f"max_temporal_size must be a fraction of the study period in (0, {_MAX_FRACTION}], got "
                         f"{describe(max_temporal_size)}")
    if max_temporal_length is not None:
        max_temporal_length = check_int(max_temporal_length, "max_temporal_length", minimum=1)
    return float(max_temporal_size), max_temporal_length, check_int(min_temporal_length, "min_temporal_length",
                                                                     minimum=1)


def _row_counts(times, cases, controls):
    """cases (and controls) per row, checked against the length of ``times``."""
    ca = check_counts(cases, "cases")
    n = len(ca)
    co = None
    if controls is not None:
        co = check_counts(controls, "controls")
        if len(co) != n:
            raise ValueError(f"cases and controls must have the same length; got {n} and {len(co)}")
    return ca, co, n


def _day_population(population, n_days: int, what: str):
    """Population at risk of each day of the study period (None: constant 1)."""
    if population is None:
        return np.ones(n_days)
    po = np.asarray(population, dtype=np.float64) if not isinstance(population, (str, bytes)) else None
    if po is None or po.ndim != 1 or len(po) != n_days:
        raise ValueError(f"population must hold one value per day of the {what} ({n_days} days), got "
                         f"{describe(population)}")
    bad = ~np.isfinite(po) | (po < 0)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"population must be finite and non-negative; population[{i}] = {po[i]!r}")
    if not po.sum() > 0:
        raise ValueError("population sums to 0: the Poisson scan needs a positive population")
    return po


def _totals(ca, co, units_of_row, n_units, day_pop, unit_of_day):
    """cases per unit, and the Poisson expectation or Bernoulli persons per unit."""
    c_u = np.bincount(units_of_row, weights=ca, minlength=n_units).astype(np.int64)
    C = int(c_u.sum())
    if C < 2:
        raise ValueError(f"cases sum to {C}: the temporal scan needs at least 2 cases")
    if C >= 2**31 - 1:
        raise ValueError(f"{C} cases are too many (must be < 2**31 - 1)")
    if co is None:
        w = np.bincount(unit_of_day, weights=day_pop, minlength=n_units)
        bad = (w <= 0) & (c_u > 0)
        if bad.any():
            raise ValueError(f"time unit {int(np.argmax(bad))} has cases but zero population")
        return c_u, C * w / w.sum(), None
    p_u = c_u + np.bincount(units_of_row, weights=co, minlength=n_units).astype(np.int64)
    N = int(p_u.sum())
    if N == C:
        raise ValueError("all persons are cases (controls sum to 0): the Bernoulli scan needs controls too")
    if N >= 2**31 - 1:
        raise ValueError(f"total population {N} (cases + controls) is too large (must be < 2**31 - 1)")
    return c_u, None, p_u


def temporal(times, cases, *, population=None, controls=None, model="poisson", study_period=None,
             time_aggregation=1, max_temporal_size=0.5, max_temporal_length=None, min_temporal_length=1,
             prospective=False, direction="high", min_cases=2, n_replicates=999, seed=None, executor=None,
             backend="auto", threads=None, progress=True, time_trend=None, trend_percent=None) -> TemporalResult:
    """Kulldorff's purely temporal scan (retrospective or prospective): discrete Poisson or Bernoulli.

    Parameters
    ----------
    times : array_like (n,)
        Day of each row: whole numbers (days) or datetime64 / pandas dates (tz-naive).
    cases : array_like (n,)
        Non-negative whole case counts of each row.
    population : array_like, optional
        ``model="poisson"``: population at risk on each day of the study period (one value per day,
        persons); default constant, so the expected cases of a unit are proportional to its days.
    controls : array_like (n,), optional
        ``model="bernoulli"`` (required): non-negative whole numbers of controls of each row.
    model : {"poisson", "bernoulli"}
        The probability model (``"space_time_permutation"`` is refused: not defined without space).
    study_period : (start, end), optional
        First and last day (same kind as ``times``); default the first and last day of ``times``.
    time_aggregation : int >= 1
        Length of a time unit, days (units counted back from the last day; the days left over at the
        start join the first unit, as in SaTScan).
    max_temporal_size : float in (0, 0.9]
        Longest window as a fraction of the study period (SaTScan's percentage / 100).
    max_temporal_length : int >= 1, optional
        Longest window in days instead (SaTScan's "time units" interpretation); overrides
        ``max_temporal_size``.
    min_temporal_length : int >= 1
        Shortest window, days (rounded up to whole units).
    prospective : bool
        Only windows that end on the last unit (SaTScan's prospective purely temporal analysis).
    direction : {"high", "low", "both"}
        Windows with more, fewer, or either, cases than expected.
    min_cases : int >= 0
        High-rate windows need at least this many cases (SaTScan's default 2).
    n_replicates : int >= 1
        Monte Carlo replicates.
    seed : None, int or SeedSequence
        Root of the per-replicate seeds (results independent of threads and batching).
    executor : Executor, optional
        Where the Monte Carlo batches run (None: here).
    backend : {"auto", "cpu", "gpu", "emulator"}
        The engine: Numba on the CPU, or the CUDA kernel (``scan_temporal.cu``) on a GPU or the
        CPU emulator, with the same maxima bit for bit; "auto": the GPU when one is usable.
    threads : int, optional
        Numba threads (None: all).
    progress : bool
        Progress bar for the Monte Carlo.
    time_trend : {None, "loglinear", "logquadratic"}
        ``model="poisson"``: adjust the expected cases for a log-linear trend of the risk over the
        study period (SaTScan's ``TimeTrendAdjustmentType`` 2 and 3, :mod:`.time_trend`): unit u's
        expected cases become proportional to its population-time x ``exp(beta u)``, and the Monte
        Carlo draws by them; or for a log-quadratic trend (5), ``exp(beta u + beta2 u^2)``, estimated.
        A trend shared by the whole period is then no cluster; a burst on top of it still is. (SaTScan
        refuses the nonparametric adjustment here: it would expect every unit's cases exactly.)
    trend_percent : float, optional
        ``time_trend="loglinear"``: the change of the risk per year, percent (> -100); None estimates
        the trend from the units' cases against their population-time (maximum likelihood).

    Returns
    -------
    TemporalResult
        The clusters (``clusters``, the most likely first), the null maxima and the unit series;
        ``time_trend`` describes the adjustment (None without).

    Examples
    --------
    120 days with about 2 cases a day and three times as many on days 70-79:

    >>> rng = np.random.default_rng(5)
    >>> lam = np.full(120, 2.0)
    >>> lam[70:80] *= 3
    >>> res = hp.scan.temporal(np.arange(120), rng.poisson(lam), n_replicates=99, seed=1, backend="cpu",
    ...                        progress=False)
    >>> top = res.most_likely
    >>> print(top.start, top.end, top.cases, round(top.expected, 2), round(top.log_likelihood_ratio, 4), top.p_value)
    70 79 54 21.33 19.871 0.01
    """
    _check_model(model, population, controls)
    _check_trend(time_trend, trend_percent, model)
    max_frac, max_days, min_days = _check_size(max_temporal_size, max_temporal_length, min_temporal_length)
    agg = check_int(time_aggregation, "time_aggregation", minimum=1)
    prospective = check_bool(prospective, "prospective")
    run = check_run(min_cases, n_replicates, direction, "no-overlap", progress, threads, seed, backend, executor)
    ca, co, n = _row_counts(times, cases, controls)
    day, origin, n_days = _days(times, n, study_period)
    if n_days < 2:
        raise ValueError("the study period is one day: a temporal scan needs at least two days")
    n_units = n_days // agg
    if n_units < 2:
        raise ValueError(f"time_aggregation={agg} leaves {n_units} time unit in a study period of {n_days} days; "
                         f"a temporal scan needs at least two")
    unit_of_day = np.maximum(0, n_units - 1 - (n_days - 1 - np.arange(n_days)) // agg)
    max_len = (math.floor(n_days * (max_frac * 100.0) / 100.0) if max_days is None else max_days) // agg
    if max_len < 1:
        raise ValueError(f"the longest window ({max_days if max_days is not None else max_frac}) is shorter than one "
                         f"time unit of {agg} days")
    max_len = min(max_len, n_units)
    min_len = -(-min_days // agg)
    if min_len > max_len:
        raise ValueError(f"min_temporal_length={min_days} days is longer than the longest window ({max_len} units of "
                         f"{agg} days)")
    day_pop = _day_population(population, n_days, "study period") if model == "poisson" else None
    c_u, e_u, p_u = _totals(ca, co, unit_of_day[day], n_units, day_pop, unit_of_day)
    info = None
    if time_trend is not None:
        # SaTScan's AdjustForTrend: the units' measure times exp(beta u), scaled back to C in all
        w, info = time_trend_weights(c_u, time_trend, trend_percent, measure=e_u, unit_days=agg,
                                     origin=origin)
        e_u = e_u * w
        e_u *= c_u.sum() / e_u.sum()
    last = np.array([n_days - 1 - (n_units - 1 - u) * agg for u in range(n_units)])
    first = np.r_[0, last[:-1] + 1]

    def when(d):
        return origin + np.timedelta64(int(d), "D") if isinstance(origin, np.datetime64) else origin + int(d)

    series = _Series(c_u, e_u, p_u, [when(d) for d in first], [when(d) for d in last], min_len, max_len, False)
    res = _scan(series, model, "prospective" if prospective else "retrospective", prospective, run)
    return dataclasses.replace(res, study_period=(when(0), when(n_days - 1)), time_aggregation=agg, time_trend=info)


def seasonal(times, cases, *, population=None, controls=None, model="poisson", study_period=None,
             max_temporal_size=0.5, max_temporal_length=None, min_temporal_length=1, direction="high", min_cases=2,
             n_replicates=999, seed=None, executor=None, backend="auto", threads=None, progress=True) -> TemporalResult:
    """The seasonal temporal scan (SaTScan 10's analysis type 7): the days of the year as a closed loop.

    Every date is folded onto its day of a 365-day year (29 February counts as 28 February); a
    window is a run of consecutive days of that year, which may wrap from December into January.
    The Poisson expectation of a day of the year is proportional to its population-time over the
    study period (with a constant population: how often that day occurs in it); Bernoulli counts
    the cases and controls of each day of the year over all years.

    Parameters
    ----------
    times : array_like (n,)
        Dates (datetime64 / pandas dates, tz-naive) of the rows; whole day numbers are refused
        (the seasonal year needs a calendar).
    cases, controls, model, direction, min_cases, n_replicates, seed, executor, backend, threads, progress
        As in :func:`temporal`.
    population : array_like, optional
        ``model="poisson"``: population at risk on each day of the study period (one value per
        day), persons; default constant.
    study_period : (start, end), optional
        First and last date; it must cover at least one year (365 days), as SaTScan requires.
    max_temporal_size : float in (0, 0.9]
        Longest window as a fraction of the 365-day year.
    max_temporal_length : int >= 1, optional
        Longest window in days instead.
    min_temporal_length : int >= 1
        Shortest window, days (at most 90, SaTScan's limit).

    Returns
    -------
    TemporalResult
        As :func:`temporal` (``analysis="seasonal"``, 365 units); ``start`` and ``end`` are days of
        the year written ``"MM/DD"``.

    Examples
    --------
    Three years of daily counts with twice the rate from 20 December to 10 January:

    >>> rng = np.random.default_rng(2)
    >>> days = np.arange(np.datetime64("2020-01-01"), np.datetime64("2022-12-31") + 1)
    >>> import pandas as pd
    >>> md = pd.DatetimeIndex(days).strftime("%m%d").astype(int)
    >>> lam = np.where((md >= 1220) | (md <= 110), 2.0, 1.0)
    >>> res = hp.scan.seasonal(days, rng.poisson(lam), max_temporal_size=0.1, n_replicates=99, seed=1,
    ...                        backend="cpu", progress=False)
    >>> top = res.most_likely
    >>> print(top.start, top.end, top.n_units, top.p_value)
    12/20 01/10 22 0.02
    """
    _check_model(model, population, controls)
    max_frac, max_days, min_days = _check_size(max_temporal_size, max_temporal_length, min_temporal_length)
    if min_days > 90:
        raise ValueError(f"min_temporal_length must be at most 90 days for the seasonal scan (SaTScan's limit), got "
                         f"{min_days}")
    run = check_run(min_cases, n_replicates, direction, "no-overlap", progress, threads, seed, backend, executor)
    ca, co, n = _row_counts(times, cases, controls)
    _, dates = _abs_days(times, "times", n)
    if not dates:
        raise TypeError("times must be dates (datetime64 or pandas dates) for the seasonal scan: the seasonal year "
                        "needs a calendar; whole day numbers are not dates")
    day, origin, n_days = _days(times, n, study_period)
    if n_days < _YEAR:
        raise ValueError(f"the study period must cover at least one year for the seasonal scan (SaTScan's rule); it "
                         f"has {n_days} days")
    all_days = origin + np.arange(n_days).astype("timedelta64[D]")
    unit_of_day = _day_of_year(all_days)
    max_len = math.floor(_YEAR * (max_frac * 100.0) / 100.0) if max_days is None else max_days
    if max_len < 1:
        raise ValueError(f"max_temporal_size={max_frac} leaves no day of the year")
    max_len = min(max_len, _YEAR)
    if min_days > max_len:
        raise ValueError(f"min_temporal_length={min_days} days is longer than the longest window ({max_len} days)")
    day_pop = _day_population(population, n_days, "study period") if model == "poisson" else None
    c_u, e_u, p_u = _totals(ca, co, unit_of_day[day], _YEAR, day_pop, unit_of_day)
    labels = pd.DatetimeIndex(np.datetime64("2001-01-01") + np.arange(_YEAR).astype("timedelta64[D]")).strftime(
        "%m/%d").tolist()
    series = _Series(c_u, e_u, p_u, labels, labels, min_days, max_len, True)
    res = _scan(series, model, "seasonal", False, run)
    return dataclasses.replace(res, study_period=(all_days[0], all_days[-1]))


def _day_of_year(dates) -> np.ndarray:
    """Index 0..364 of each date's day in a 365-day year (29 February -> 28 February)."""
    idx = pd.DatetimeIndex(dates)
    month, dom = idx.month.to_numpy(), idx.day.to_numpy()
    dom = np.where((month == 2) & (dom == 29), 28, dom)
    start = np.array([0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334])
    return (start[month - 1] + dom - 1).astype(np.int64)


def _scan(s: _Series, model: str, analysis: str, prospective: bool, run) -> TemporalResult:
    """The observed windows, the Monte Carlo and the cluster table."""
    T = len(s.cases)
    C = int(s.cases.sum())
    bern = s.persons is not None
    N = int(s.persons.sum()) if bern else C
    klogk = klogk_table(N)
    args = (s.expected, s.persons, klogk, C, s.min_len, s.max_len, prospective, s.closed_loop, run.min_cases,
            run.direction)
    engine = None
    if is_gpu_backend(run.backend):
        engine = GpuTemporalEngine(T, *args[:2], klogk, C, *args[4:], device=get_device(run.backend),
                                   backend=run.backend)
    with threads_context(run.threads):
        best, arg = engine.max_llr(s.cases[:, None]) if engine else temporal_windows_max(s.cases[:, None], *args)
        sizes = [min(BATCH_SIZE, run.n_replicates - k) for k in range(0, run.n_replicates, BATCH_SIZE)]
        parts = run_replicates(_null_batch, sizes, seeds=replicate_seed_batches(run.seed, run.n_replicates),
                               executor=run.executor, progress=run.progress, desc="temporal Monte Carlo",
                               args=(args, engine))
    null_llr = np.concatenate(parts).astype(np.float64)
    unit_expected = s.persons * (C / N) if bern else np.asarray(s.expected, dtype=float)
    rows = []
    windows = []
    if arg[0] >= 0:
        Text = T + (s.max_len - 1 if s.closed_loop else 0)
        apart = not s.closed_loop and not prospective and T > 2
        val = temporal_window_table(s.cases, s.expected, s.persons, klogk, C, s.min_len, s.max_len,
                                    run.min_cases, run.direction) if apart else None
        windows = listed_windows((float(best[0]),) + divmod(int(arg[0]), Text), val, T, apart)
    for llr, t1, t2, p in with_p_values(windows, null_llr):
        units = np.arange(t1, t2 + 1) % T
        c = int(s.cases[units].sum())
        if bern:
            n = int(s.persons[units].sum())
            expected = n * C / N
            rr = (c / n) / ((C - c) / (N - n)) if C > c else math.inf
        else:
            expected = float(s.expected[units].sum())
            rr = (c / expected) / ((C - c) / (C - expected)) if C > c else math.inf
        row = {"cluster": len(rows) + 1, "start": s.first[t1 % T], "end": s.last[t2 % T], "n_units": int(t2 - t1 + 1),
               "cases": c, "expected": expected, "observed_over_expected": c / expected, "relative_risk": rr,
               "log_likelihood_ratio": llr, "p_value": p}
        if bern:
            row["population"] = n
        rows.append(row)
    cols = _COLUMNS + (["population"] if bern else [])
    clusters = pd.DataFrame(rows, columns=cols)
    return TemporalResult(clusters=clusters, null_llr=null_llr, model=model, analysis=analysis, n_cases=C, n_units=T,
                          min_len=s.min_len, max_len=s.max_len, unit_cases=s.cases, unit_expected=unit_expected,
                          backend=run.backend, n_population=N if bern else None)


#: SaTScan keeps further windows only above this LLR (MIN_CLUSTER_LLR_RETAINED)
_MIN_LLR_RETAINED = 1.0


def listed_windows(top, val, T: int, apart: bool) -> list:
    """The windows a purely temporal analysis lists, before their p-values: the most likely ``top`` ``(LLR, t1,
    t2)`` and, with ``apart`` (retrospective), those :func:`_apart` finds wholly before and after it among the
    windows' LLRs ``val[t2, t2 - t1]`` of the T units, in decreasing LLR."""
    windows = [top]
    if apart:
        _apart(val, 0, top[1] - 1, windows)
        _apart(val, top[2] + 2, T - 1, windows)
        windows = [windows[0]] + sorted(windows[1:], key=lambda w: -w[0])
    return windows


def with_p_values(windows, null_llr) -> list:
    """``(LLR, t1, t2, p)`` of the listed ``windows`` with their Monte Carlo p-values against the replicates' maxima
    ``null_llr``; as in SaTScan's output, the list stops at the first secondary window below every replicate's
    maximum (p = 1)."""
    null_sorted = np.sort(null_llr)
    R = len(null_llr)
    out = []
    for llr, t1, t2 in windows:
        exceed = R - int(np.searchsorted(null_sorted, llr, side="left"))
        if out and exceed == R:
            break
        out.append((llr, t1, t2, (1 + exceed) / (1 + R)))
    return out


def _apart(val, a, b, out):
    """SaTScan 10's secondary purely temporal clusters (``CClusterSetTemporalOverlap::findBestInRange``,
    as in the retrospective space-time scan): in the range of windows with ``t1 >= a`` and
    ``t2 <= b - 1``, the first window with LLR > 1 in SaTScan's order (the end from the last down,
    then the start from the end down: the shortest first; SaTScan keeps that first one, a later
    window of larger LLR does not replace it in the temporal analyses), then recursively the same
    wholly before it (ending at least two units before its start) and wholly after it (starting at
    least two units after its end). ``val[t2, t2 - t1]``: the LLR of every window. Appends
    (LLR, t1, t2) to ``out``."""
    for t2 in range(b - 1, a - 1, -1):
        for t1 in range(t2, max(a, t2 - val.shape[1] + 1) - 1, -1):
            if val[t2, t2 - t1] > _MIN_LLR_RETAINED:
                out.append((float(val[t2, t2 - t1]), t1, t2))
                _apart(val, a, t1 - 1, out)
                _apart(val, t2 + 2, b, out)
                return


def _null_batch(size, batch_seed, args, engine=None):
    """One Monte Carlo batch: the C cases redistributed over the units (Poisson: multinomially in
    proportion to the expectations; Bernoulli: relabelled among the persons), each replicate's
    largest window LLR."""
    expected, persons, _, C = args[:4]
    seeds = batch_children(batch_seed, size)
    if persons is None:
        M = draw_multinomial_cases(expected, C, seeds)
    else:
        M = draw_null_cases(persons, C, seeds)
    return engine.max_llr(M)[0] if engine is not None else temporal_windows_max(M, *args)[0]
