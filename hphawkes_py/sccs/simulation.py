"""Case-series simulator in the spirit of OHDSI's SelfControlledCaseSeries ``simulateSccsData``.

Every simulated person is a case. For each person: an observation period of uniform length;
for each drug, the person is a user with the drug's prevalence and then has ``1 + Poisson(1)``
eras (start uniform in the observation period, length ``ceil(Exponential(mean))`` days with a
per-drug mean); the risk window is the era itself. Intervals are cut at era boundaries and
merged by exposure pattern (:func:`~.design.build_interval_design`). The person's number of
events is ``1 + Poisson(extra_events)`` and the events are allocated to the intervals with
probabilities ``time_i exp(x_i'b) / sum_k time_k exp(x_k'b)`` -- exactly the conditional
(multinomial) model that SCCS inference uses, so the baseline rate drops out and the
simulated data carry the true log relative risks ``b``.

Everything is vectorised NumPy: no Python loop over persons or drugs.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._validate import (as_float_array, check_int, check_positive, check_probability, check_random_state,
                         describe)
from .data import SCCSData
from .design import build_interval_design
from .spline_design import SplineRequest

__all__ = ["simulate"]


def simulate(
    *,
    n_cases: int,
    n_drugs: int,
    prevalence: Any = None,
    observation_days: tuple[int, int] = (365, 3650),
    mean_era_days: tuple[float, float] = (14.0, 60.0),
    fraction_positive: float = 0.1,
    relative_risks: tuple[float, ...] = (1.5, 2.0, 4.0),
    extra_events: float = 0.1,
    age_effect: Any = None,
    season_effect: Any = None,
    age_at_start: tuple[int, int] = (0, 21900),
    first_day: tuple[int, int] = (10957, 14610),
    age_knots: Any = 5,
    season_knots: Any = 4,
    output: str = "data",
    seed: Any = None,
):
    """Simulate a cases-only SCCS data set with known log relative risks.

    Parameters
    ----------
    n_cases : int
        Number of persons (all cases).
    n_drugs : int
        Number of drugs (covariates, ids 1..n_drugs).
    prevalence : float or array (n_drugs,), optional
        Probability that a person uses each drug; default log-uniform in [0.0005, 0.04]
        per drug (mean about 0.009, so about 18 eras per person for 1,000 drugs).
    observation_days : (int, int)
        Observation-period length range in days (uniform integers, inclusive).
    mean_era_days : (float, float)
        Range of the per-drug mean era length (days), drawn uniformly per drug.
    fraction_positive : float
        Share of drugs with a true effect; the others have log RR exactly 0.
    relative_risks : tuple of float
        True relative risks assigned (cyclically) to the positive drugs.
    extra_events : float
        Events per case are ``1 + Poisson(extra_events)``.
    age_effect : callable, optional
        Log rate multiplier as a function of age in days (vectorised, e.g.
        ``lambda a: 0.5 * np.sin(a / 5000)``); the rate is constant within each month of age,
        evaluated at the bin's midpoint age (the bins of :mod:`.splines`).
    season_effect : callable or array (12,), optional
        Log rate multiplier per calendar month: a function of the month of the year
        ``x`` in [0, 12) evaluated at the month's middle (``month + 0.5``), or 12 values
        (January first).
    age_at_start : (int, int)
        With age or season effects or ``output="eras"``: age (days) at the start of
        observation, uniform in this range.
    first_day : (int, int)
        Range of the first observation day (days since 1970-01-01; default 2000-2009).
    age_knots, season_knots :
        Passed to :meth:`SCCSData.from_eras` when ``output="data"`` and the effect is given.
    output : {"data", "eras"}
        ``"data"``: return the design. ``"eras"``: return the person-level tables instead
        (observation periods with ``birth_day``, exposure eras, outcome days), which
        :meth:`SCCSData.from_eras` turns into a design. With age or season effects the
        simulation is day-level (persons have birth days and calendar dates) and
        ``"data"`` is ``from_eras`` of those tables with ``age_knots``/``season_knots``.
    seed : None, int or Generator

    Returns
    -------
    data : SCCSData
        (``output="data"``), or ``observation_periods, eras, outcomes`` DataFrames
        (``output="eras"``) followed by
    true_coefficients : Series
        True log relative risks indexed by covariate_id (1..n_drugs).

    Examples
    --------
    >>> data, truth = hp.sccs.simulate(n_cases=500, n_drugs=5, prevalence=0.3, fraction_positive=0.4, seed=1)
    >>> data
    SCCSData(n_strata=500, n_rows=1208, n_covariates=5, nnz=778, events=561, binary=True, dropped: nothing)
    >>> np.exp(truth).round(2).tolist()
    [1.0, 1.0, 1.5, 2.0, 1.0]

    Person-level tables instead, for :meth:`SCCSData.from_eras`:

    >>> obs, eras, outcomes, truth = hp.sccs.simulate(n_cases=50, n_drugs=2, prevalence=0.5, output="eras", seed=1)
    >>> list(obs.columns), list(eras.columns), list(outcomes.columns)
    (['person_id', 'start', 'end', 'birth_day'], ['person_id', 'start', 'end', 'covariate_id'], ['person_id', 'day'])
    """
    n_cases = check_int(n_cases, "n_cases", minimum=1)
    n_drugs = check_int(n_drugs, "n_drugs", minimum=1)
    fraction_positive = check_probability(fraction_positive, "fraction_positive", low_open=False)
    lo, hi = _pair(observation_days, "observation_days", integer=True)
    if not 1 <= lo <= hi:
        raise ValueError(f"observation_days must be (min, max) with 1 <= min <= max, got {observation_days!r}")
    era_lo, era_hi = _pair(mean_era_days, "mean_era_days", integer=False)
    if not 0 < era_lo <= era_hi:
        raise ValueError(f"mean_era_days must be (min, max) with 0 < min <= max (days), got {mean_era_days!r}")
    rr = as_float_array(relative_risks, "relative_risks", ndim=1)
    if rr.size == 0 or np.any(rr <= 0):
        raise ValueError(f"relative_risks must be a non-empty list of relative risks > 0, got {rr.tolist()}")
    extra_events = check_positive(extra_events, "extra_events", strict=False)
    prev, prev_mean = _check_prevalence(prevalence, n_drugs)
    if not isinstance(output, str) or output not in ("data", "eras"):
        raise ValueError(f"output must be 'data' or 'eras', got {describe(output)}")
    if age_effect is not None and not callable(age_effect):
        raise TypeError(f"age_effect must be a function of age in days, got {describe(age_effect)}")
    if season_effect is not None and not callable(season_effect):
        season_effect = as_float_array(season_effect, "season_effect", ndim=1, shape=(12,))
    day_level = output == "eras" or age_effect is not None or season_effect is not None
    if day_level:
        a_lo, a_hi = _pair(age_at_start, "age_at_start", integer=True)
        f_lo, f_hi = _pair(first_day, "first_day", integer=True)
        if not 0 <= a_lo <= a_hi or f_lo > f_hi:
            raise ValueError(f"age_at_start must be (min, max) with 0 <= min <= max and first_day (min, max) with "
                             f"min <= max, got {age_at_start!r}, {first_day!r}")
    # day-level designs have about two rows per month of observation (age and calendar months)
    _check_memory(n_cases, n_drugs * prev_mean, extra_rows=(hi / 15.0 if day_level else 0.0))
    rng = check_random_state(seed)
    if prevalence is None:
        prev = np.exp(rng.uniform(np.log(0.0005), np.log(0.04), size=n_drugs))
    mean_len = rng.uniform(era_lo, era_hi, size=n_drugs)
    n_pos = int(round(fraction_positive * n_drugs))
    beta = np.zeros(n_drugs)
    pos = rng.choice(n_drugs, size=n_pos, replace=False)
    beta[np.sort(pos)] = np.log(np.resize(rr, n_pos))
    truth = pd.Series(beta, index=pd.Index(np.arange(1, n_drugs + 1), name="covariate_id"), name="log_rr")
    if day_level:
        tables = _simulate_tables(rng, n_cases, n_drugs, prev, mean_len, beta, lo, hi, extra_events, age_effect,
                                  season_effect, (a_lo, a_hi), (f_lo, f_hi))
        if output == "eras":
            return (*tables, truth)
        data = SCCSData.from_eras(*tables, age_knots=age_knots if age_effect is not None else None,
                                  season_knots=season_knots if season_effect is not None else None)
        return data, truth

    return _simulate_design(rng, n_cases, n_drugs, prev, mean_len, beta, lo, hi, extra_events), truth


_CHUNK = 100_000
#: Bytes per simulated row, non-zero and person at the peak of ``simulate`` (final arrays plus
#: the concatenation and CSC-sort temporaries), counted from the arrays built below (an estimate).
_BYTES_PER_ROW, _BYTES_PER_NNZ, _BYTES_PER_PERSON = 56, 40, 24


def _simulate_design(rng, n_cases, n_drugs, prev, mean_len, beta, lo, hi, extra_events):
    """The case-level design (no ages or dates): persons observed from day 0, eras and events
    drawn chunk by chunk, assembled into one :class:`SCCSData`."""
    # Persons are independent: simulate them in chunks, which bounds the temporaries of the
    # interval construction (the result depends only on the seed; the chunk size is fixed).
    parts = []
    row_offset = 0
    eras_outside = 0
    for c0 in range(0, n_cases, _CHUNK):
        n = min(_CHUNK, n_cases - c0)
        rt, yy, nr, nc, rpp, eo = _simulate_chunk(rng, n, n_drugs, prev, mean_len, beta, lo, hi, extra_events)
        parts.append((rt, yy, nr + row_offset, nc, rpp))
        row_offset += rt.shape[0]
        eras_outside += eo
    row_time = np.concatenate([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts])
    rows_per_person = np.concatenate([p[4] for p in parts])
    nnz_row = np.concatenate([p[2] for p in parts])
    nnz_col = np.concatenate([p[3] for p in parts])
    del parts
    # CSC order by one int64 sort of col * n_rows + row (much faster than lexsort/argsort)
    n_rows = row_time.shape[0]
    key = nnz_col.astype(np.int64) * n_rows + nnz_row
    del nnz_row, nnz_col
    key.sort()
    col_codes = key // n_rows
    row_pos = key - col_codes * n_rows
    del key
    stratum_ptr = np.zeros(n_cases + 1, dtype=np.int64)
    np.cumsum(rows_per_person, out=stratum_ptr[1:])
    data = SCCSData._assemble(
        stratum_ids=np.arange(1, n_cases + 1),
        row_ids=np.arange(n_rows, dtype=np.int64),
        covariate_ids=np.arange(1, n_drugs + 1),
        stratum_ptr=stratum_ptr,
        y=y,
        time=row_time,
        col_codes=col_codes,
        row_pos=row_pos,
        values=None,
        dropped={"eras_outside_observation": eras_outside, "persons_without_outcomes": 0},
    )
    return data


def _check_prevalence(prevalence, n_drugs):
    """``(per-drug prevalences or None for the default draw, their expected mean)``."""
    if prevalence is None:
        return None, (0.04 - 0.0005) / np.log(0.04 / 0.0005)  # mean of the default log-uniform draw
    prev = as_float_array(prevalence, "prevalence", ndim=1)  # a scalar arrives as shape (1,)
    if prev.shape not in ((1,), (n_drugs,)):
        raise ValueError(f"prevalence must be a number or {n_drugs} numbers (one per drug), got shape {prev.shape}")
    if np.any(prev < 0) or np.any(prev > 1):
        raise ValueError(f"prevalence must be in [0, 1], got {prev.tolist() if prev.size < 10 else describe(prev)}")
    prev = np.broadcast_to(prev, (n_drugs,))
    return prev, float(prev.mean())


def _pair(value, name, *, integer):
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise TypeError(f"{name} must be a pair (min, max), got {describe(value)}")
    if integer:
        return check_int(value[0], f"{name}[0]"), check_int(value[1], f"{name}[1]")
    return check_positive(value[0], f"{name}[0]"), check_positive(value[1], f"{name}[1]")


def _available_memory() -> int | None:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        import os

        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def _check_memory(n_cases, users_per_person, extra_rows=0.0):
    """Refuse, before any allocation, a simulation whose arrays would not fit in memory.

    Each user has 2 eras on average (1 + Poisson(1)); each era adds at most two cut points,
    so a person has about 1 + 4 * users rows and 3 * users non-zeros."""
    rows = 1.0 + 4.0 * users_per_person + extra_rows
    nnz = 3.0 * users_per_person
    need = n_cases * (_BYTES_PER_PERSON + rows * _BYTES_PER_ROW + nnz * _BYTES_PER_NNZ)
    avail = _available_memory()
    if avail is not None and need > avail:
        raise ValueError(
            f"n_cases={n_cases} would need about {need / 2**30:.1f} GiB of memory for the simulated design "
            f"({rows:.2f} rows and {nnz:.2f} exposure entries per case expected), but {avail / 2**30:.1f} GiB "
            "are available; simulate fewer cases"
        )


def _simulate_chunk(rng, n_cases, n_drugs, prev, mean_len, beta, lo, hi, extra_events):
    """One chunk of persons: rows (time, y), non-zeros (row, col), rows per person, clipped eras."""
    obs_len = rng.integers(lo, hi + 1, size=n_cases)
    obs_start = np.zeros(n_cases, dtype=np.int64)
    obs_end = obs_len - 1
    era_person, era_start, era_end, era_drug = _draw_eras(rng, n_cases, n_drugs, prev, mean_len, obs_start, obs_len)
    design = build_interval_design(obs_start, obs_end, era_person, era_start, era_end, era_drug, n_drugs, merge=True)
    del era_start, era_end, era_person, era_drug
    row, _, rows_per_person = _allocate_events(rng, design, beta, n_cases, extra_events, centre=False)
    y = np.bincount(row, minlength=design.n_rows).astype(np.float64)
    return design.row_time, y, design.nnz_row, design.nnz_col.astype(np.int32), rows_per_person, design.eras_outside


def _draw_eras(rng, n_cases, n_drugs, prev, mean_len, obs_start, obs_len):
    """Exposure eras: users per drug (prevalence ``prev``), then ``1 + Poisson(1)`` eras per user,
    each starting on a uniform day of the observation period and lasting
    ``ceil(Exponential(mean_len[drug]))`` days (at least 1). Returns ``(person, first day, last
    day, drug)`` per era."""
    users = rng.binomial(n_cases, prev)
    user_drug = np.repeat(np.arange(n_drugs, dtype=np.int64), users)
    user_person = rng.integers(0, n_cases, size=user_drug.shape[0])
    n_eras = 1 + rng.poisson(1.0, size=user_drug.shape[0])
    era_drug = np.repeat(user_drug, n_eras)
    era_person = np.repeat(user_person, n_eras)
    del user_drug, user_person
    era_start = obs_start[era_person] + np.floor(rng.random(era_drug.shape[0]) * obs_len[era_person]).astype(np.int64)
    era_len = np.ceil(rng.exponential(1.0, size=era_drug.shape[0]) * mean_len[era_drug]).astype(np.int64)
    era_end = era_start + np.maximum(era_len, 1) - 1
    return era_person, era_start, era_end, era_drug


def _allocate_events(rng, design, coef, n_cases, extra_events, *, centre):
    """``1 + Poisson(extra_events)`` events per person, allocated over the person's rows with
    probabilities ``p_i ~ t_i exp(x_i'coef)`` (the conditional model SCCS inference uses).

    ``centre`` subtracts the largest linear predictor before ``exp`` (the probabilities are
    invariant to it; it keeps large age/season effects finite). Returns the row of each event,
    its person and the number of rows per person.
    """
    eta = np.bincount(design.nnz_row, weights=coef[design.nnz_col], minlength=design.n_rows)
    rate = design.row_time * np.exp(eta - eta.max() if centre else eta)
    cum = np.cumsum(rate)
    rows_per_person = np.bincount(design.row_person, minlength=n_cases)
    person_end = np.cumsum(rows_per_person)
    person_start = person_end - rows_per_person
    lower = np.where(person_start > 0, cum[np.maximum(person_start - 1, 0)], 0.0)
    upper = cum[person_end - 1]
    n_ev = 1 + rng.poisson(extra_events, size=n_cases)
    ev_person = np.repeat(np.arange(n_cases), n_ev)
    target = lower[ev_person] + rng.random(ev_person.shape[0]) * (upper - lower)[ev_person]
    # the clip guards the rounding edge: each event stays inside its person's rows
    row = np.clip(np.searchsorted(cum, target, side="right"), person_start[ev_person], person_end[ev_person] - 1)
    return row, ev_person, rows_per_person


def _simulate_tables(rng, n_cases, n_drugs, prev, mean_len, beta, lo, hi, extra_events, age_effect, season_effect,
                     age_at_start, first_day):
    """Day-level simulation: persons with birth and calendar days, eras, and outcome days drawn with
    rates ``exp(x'b + age_effect(age bin) + season_effect(month))`` per interval (constant within
    months of age and calendar months, as the spline design of :meth:`SCCSData.from_eras`)."""
    obs_len = rng.integers(lo, hi + 1, size=n_cases)
    obs_start = rng.integers(first_day[0], first_day[1] + 1, size=n_cases).astype(np.int64)
    obs_end = obs_start + obs_len - 1
    birth = obs_start - rng.integers(age_at_start[0], age_at_start[1] + 1, size=n_cases)
    era_person, era_start, era_end, era_drug = _draw_eras(rng, n_cases, n_drugs, prev, mean_len, obs_start, obs_len)

    # month-of-age and calendar-month bins as pseudo-eras (explicit knots: no outcomes needed)
    a0, a1 = obs_start - birth, obs_end - birth
    req = SplineRequest(np.array([a0.min(), max(a1.max(), a0.min() + 1)]) if age_effect is not None else None,
                        3 if season_effect is not None else None, None, "1970-01-01")
    ep, es, ee, ec = era_person, era_start, era_end, era_drug
    n_codes = n_drugs
    shift = np.zeros(0)
    if req.any:
        empty = np.zeros(0, dtype=np.int64)
        bins = req.bins(np.arange(n_cases), obs_start, obs_end, birth, empty, empty, n_drugs)
        ep, es, ee = (np.concatenate([ep, bins.era_person]), np.concatenate([es, bins.era_start]),
                      np.concatenate([ee, bins.era_end]))
        ec = np.concatenate([ec, bins.era_code])
        n_codes += bins.n_codes
        # log-rate shift of each bin code (age bins, then month bins)
        shift = np.zeros(bins.n_codes)
        for term, offset, n_bins, x in bins.specs:
            if term.name == "age":
                shift[offset:offset + n_bins] = np.asarray(age_effect(x), dtype=np.float64) * np.ones(n_bins)
            elif callable(season_effect):
                shift[offset:offset + n_bins] = np.asarray(season_effect(x), dtype=np.float64) * np.ones(n_bins)
            else:
                shift[offset:offset + n_bins] = season_effect[(x - 0.5).astype(np.int64)]
        if not np.isfinite(shift).all():
            raise ValueError("age_effect and season_effect must return finite log rate multipliers")
    design = build_interval_design(obs_start, obs_end, ep, es, ee, ec, n_codes, merge=False)
    row, ev_person, _ = _allocate_events(rng, design, np.concatenate([beta, shift]), n_cases, extra_events, centre=True)
    # rows are the intervals in day order (merge=False): a uniform day inside the interval
    row_first_day = design.keys - design.row_person * design.span + design.day0
    day = row_first_day[row] + np.floor(rng.random(row.shape[0]) * design.row_time[row]).astype(np.int64)
    observation_periods = pd.DataFrame({"person_id": np.arange(1, n_cases + 1), "start": obs_start, "end": obs_end,
                                        "birth_day": birth})
    eras = pd.DataFrame({"person_id": era_person + 1, "start": era_start, "end": era_end, "covariate_id": era_drug + 1})
    outcomes = pd.DataFrame({"person_id": ev_person + 1, "day": day})
    return observation_periods, eras, outcomes
