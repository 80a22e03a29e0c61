"""The SCCS study design: person-level tables -> intervals between cut points -> design arrays.

:meth:`~.data.SCCSData.from_eras` reads observation periods, exposure eras and outcome days
(integer days, inclusive) and builds the design in named steps:

1. read the tables and index persons (:func:`_index_persons`);
2. apply the observation rules: study period, naive period, age limits, first outcome only
   (:class:`_ObservationRules`);
3. turn each era into its risk window(s): per-covariate offsets (``risk_windows``) or several
   :class:`RiskWindow` per exposure (``windows``, :func:`_expand_windows`);
4. add the age/season/calendar-time bins as pseudo-eras (:mod:`.spline_design`);
5. cut every person's observation at the window boundaries and merge intervals with the same
   exposure pattern (:func:`build_interval_design`, shared with the simulator); the SCRI
   design (``control_window=``, :mod:`.scri`) first keeps only risk and control time;
6. count the outcomes per interval and drop persons without any (:meth:`IntervalDesign.to_arrays`).

Nothing is dropped silently: each step that leaves something out counts it for
``SCCSData.dropped``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import pandas as pd

from .._validate import check_int, describe
from ._tables import as_days, lower_columns, refuse_missing, require, show
from .event_dependent import check_censor, check_model_choice, observation_weights
from .scri import control_eras, risk_or_control
from .spline_design import SplineRequest

__all__ = ["RiskWindow", "EraOptions", "design_from_eras", "build_interval_design", "IntervalDesign", "unique_ids"]

ANCHORS = ("start", "end")


@dataclass(frozen=True)
class RiskWindow:
    """One risk window of an exposure, for :meth:`SCCSData.from_eras` ``windows=``.

    The window of an era runs from ``anchor(start_anchor) + start`` to
    ``anchor(end_anchor) + end`` (inclusive days), where the anchor is the era's first
    (``"start"``) or last (``"end"``) day -- SelfControlledCaseSeries' ``startAnchor`` /
    ``endAnchor``. Each window is its own covariate, named ``label``.

    For instance: days 1-7 after the start ``RiskWindow("d1_7", 1, 7, "start", "start")``; the
    whole era plus 30 days ``RiskWindow("on_drug", 0, 30, "start", "end")``; a pre-exposure
    window (event-dependent exposure check) ``RiskWindow("pre", -30, -1, "start", "start")``.

    Parameters
    ----------
    label : hashable
        Covariate id of the window in the design (a string or an integer, of one type with
        the other covariate ids); not None.
    start : int
        Offset in days from the start anchor to the window's first day (negative: before it).
    end : int
        Offset in days from the end anchor to the window's last day (inclusive).
    start_anchor : {"start", "end"}
        Era day that ``start`` counts from: its first (``"start"``) or last (``"end"``) day.
    end_anchor : {"start", "end"}
        Era day that ``end`` counts from.

    Raises
    ------
    ValueError
        An anchor other than ``"start"``/``"end"`` or a missing label.

    Examples
    --------
    Two windows after a vaccination day: days 0-6 and 7-20, each its own covariate.

    >>> import pandas as pd
    >>> obs = pd.DataFrame({"person_id": [1, 2], "start": [0, 0], "end": [99, 99]})
    >>> eras = pd.DataFrame({"person_id": [1, 2], "start": [10, 40], "end": [10, 40],
    ...                      "covariate_id": ["vaccine", "vaccine"]})
    >>> outcomes = pd.DataFrame({"person_id": [1, 2], "day": [12, 80]})
    >>> windows = {"vaccine": [hp.sccs.RiskWindow("d0_6", 0, 6, "start", "start"),
    ...                        hp.sccs.RiskWindow("d7_20", 7, 20, "start", "start")]}
    >>> data = hp.sccs.SCCSData.from_eras(obs, eras, outcomes, windows=windows)
    >>> data.covariate_ids.tolist()
    ['d0_6', 'd7_20']
    >>> data.time.tolist(), data.y.tolist()
    ([79.0, 7.0, 14.0, 79.0, 7.0, 14.0], [0.0, 1.0, 0.0, 1.0, 0.0, 0.0])
    """

    label: Any
    start: int
    end: int
    start_anchor: str = "start"
    end_anchor: str = "end"

    def __post_init__(self):
        check_int(self.start, "RiskWindow.start")
        check_int(self.end, "RiskWindow.end")
        for name in ("start_anchor", "end_anchor"):
            v = getattr(self, name)
            if not isinstance(v, str) or v not in ANCHORS:
                raise ValueError(f"RiskWindow.{name} must be one of {ANCHORS}, got {v!r}")
        if self.label is None:
            raise ValueError("RiskWindow.label must name the window's covariate, got None")


@dataclass(frozen=True)
class EraOptions:
    """The keyword options of :meth:`SCCSData.from_eras`, as given (each step checks its own,
    in the order the steps run)."""

    risk_start: int = 0
    risk_end: int = 0
    risk_windows: Mapping[Any, tuple[int, int]] | None = None
    windows: Mapping[Any, Any] | None = None
    study_start: int | None = None
    study_end: int | None = None
    naive_period: int = 0
    min_age: int | None = None
    max_age: int | None = None
    first_outcome_only: bool = False
    age_knots: Any = None
    season_knots: Any = None
    calendar_knots: Any = None
    day_origin: Any = "1970-01-01"
    merge: bool = True
    control_window: Any = None
    event_dependent_observation: Any = False
    censoring_regression: bool = False


def design_from_eras(observation_periods, eras, outcomes, options: EraOptions) -> dict:
    """The design arrays of :meth:`SCCSData.from_eras` (the keyword arguments of
    ``SCCSData._assemble``); see that method for the tables, options and errors."""
    opt = options
    if not isinstance(opt.merge, (bool, np.bool_)):
        raise TypeError(f"merge must be True or False, got {describe(opt.merge)}")
    obs = lower_columns(observation_periods, "observation_periods")
    er = lower_columns(eras, "eras")
    oc = lower_columns(outcomes, "outcomes")
    require(obs, ("person_id", "start", "end"), "observation_periods")
    require(er, ("person_id", "start", "end", "covariate_id"), "eras")
    require(oc, ("person_id", "day"), "outcomes")
    if len(obs) == 0:
        raise ValueError("observation_periods has no rows")
    for table, name, cols in ((obs, "observation_periods", ("person_id",)), (er, "eras", ("person_id", "covariate_id")),
                              (oc, "outcomes", ("person_id",))):
        for col in cols:
            refuse_missing(table, col, name)
    persons, os_, oe_, porder, ep, op = _index_persons(obs, er, oc)
    cov_ids = unique_ids(er["covariate_id"].to_numpy(), "eras.covariate_id")
    rules = _ObservationRules(opt.study_start, opt.study_end, opt.naive_period, opt.min_age, opt.max_age,
                              opt.first_outcome_only)
    spl = SplineRequest(opt.age_knots, opt.season_knots, opt.calendar_knots, opt.day_origin)
    if spl.age is not None and "birth_day" not in obs.columns:
        raise ValueError("age_knots needs a birth_day column in observation_periods (day of birth, same day scale); "
                         f"got columns {list(obs.columns)}")
    edo = check_model_choice(opt.event_dependent_observation)
    if not isinstance(opt.censoring_regression, (bool, np.bool_)):
        raise TypeError(f"censoring_regression must be True or False, got {opt.censoring_regression!r}")
    if opt.censoring_regression and edo is None:
        raise ValueError("censoring_regression=True needs event_dependent_observation (it chooses the 7-parameter "
                         "censoring models)")
    if edo is not None:
        censor_all, oe_nominal = _edo_columns(obs, porder, oe_, opt)
        persons_all = persons
    need_birth = rules.needs_birth(obs) or spl.age is not None or edo is not None
    birth = as_days(obs["birth_day"], "observation_periods.birth_day")[porder] if need_birth else None
    persons, os_, oe_, er, oc, ep, op, rule_dropped, birth = rules.apply(persons, os_, oe_, birth, er, oc, ep, op)
    cov_codes = pd.Index(cov_ids).get_indexer(er["covariate_id"].to_numpy())
    rs, re_ = _risk_offsets(cov_ids, opt.risk_start, opt.risk_end, opt.risk_windows)
    era_start, era_end = _era_days(er)
    ep = ep.astype(np.int64)
    era_ids, era_codes, era_person = cov_ids, cov_codes, ep
    es = era_start + rs[cov_codes]
    ee = era_end + re_[cov_codes]
    window_labels = []
    if opt.windows is not None:
        ep, es, ee, cov_ids, cov_codes, window_labels = _expand_windows(
            opt.windows, opt.risk_windows, cov_ids, cov_codes, ep, era_start, era_end, es, ee
        )
    od = as_days(oc["day"], "outcomes.day")
    n_exposure = len(cov_ids)
    cov_codes = cov_codes.astype(np.int64)
    scri = opt.control_window is not None
    if scri:
        if spl.any:
            raise ValueError("control_window (the SCRI design) takes no age_knots, season_knots or calendar_knots: "
                             "only risk and control time is observed (SelfControlledCaseSeries' "
                             "createScriIntervalData has no age or season adjustment)")
        cp, cs, ce, cc = control_eras(opt.control_window, era_ids, era_codes, era_person, era_start, era_end,
                                      n_exposure)
        control_outside = int((np.maximum(cs, os_[cp]) > np.minimum(ce, oe_[cp])).sum())
        ep, es, ee, cov_codes = (np.concatenate([ep, cp]), np.concatenate([es, cs]), np.concatenate([ee, ce]),
                                 np.concatenate([cov_codes, cc]))
    bins = None
    if spl.any:
        inside_o = (od >= os_[op]) & (od <= oe_[op])
        bins = spl.bins(persons, os_, oe_, birth, op[inside_o], od[inside_o], n_exposure)
        ep, es, ee = (np.concatenate([ep, bins.era_person]), np.concatenate([es, bins.era_start]),
                      np.concatenate([ee, bins.era_end]))
        cov_codes = np.concatenate([cov_codes, bins.era_code])
    n_codes = n_exposure + (bins.n_codes if bins is not None else 0) + scri
    design = build_interval_design(os_, oe_, ep, es, ee, cov_codes, n_codes,
                                   merge=opt.merge and not scri and edo is None)
    censoring = None
    if edo is not None:
        # an end moved earlier by the study rules is the study's end, not the person's
        at = pd.Index(persons_all).get_indexer(persons)
        censor = np.where(oe_ < oe_nominal[at], 0, censor_all[at])
        case_person, case_day = _single_outcomes(persons, os_, oe_, op, od, birth)
        weights, censoring, n_floored = observation_weights(design, birth, oe_, censor, case_person, case_day, edo,
                                                            persons, obs_start=os_, regress=opt.censoring_regression)
        every_interval, every_nnz = np.ones(design.n_rows, dtype=bool), np.ones(design.nnz_row.shape[0], dtype=bool)
        design = design.restricted(every_interval, every_nnz, weights, n_codes, merge=opt.merge)
    if scri:
        keep_int, keep_nnz = risk_or_control(design, n_exposure)
        design = design.restricted(keep_int, keep_nnz, design.row_time, n_exposure, merge=opt.merge)
        design.eras_outside -= control_outside
    if bins is not None:
        cov_ids = bins.to_spline_columns(design, cov_ids)
    _check_windows_used(design, cov_ids, window_labels)
    # outcomes -> interval rows
    inside = (od >= os_[op]) & (od <= oe_[op])
    y_row = design.locate(op[inside], od[inside])
    dropped = {
        "eras_outside_observation": design.eras_outside,
        "outcomes_outside_observation": int((~inside).sum()),
        **rule_dropped,
    }
    if edo is not None:
        dropped["interval_weights_raised_to_minimum"] = n_floored
    if scri:
        dropped["control_intervals_outside_observation"] = control_outside
        dropped["outcomes_outside_risk_and_control"] = int((y_row < 0).sum())
        y_row = y_row[y_row >= 0]
    y = np.bincount(y_row, minlength=design.n_rows).astype(np.float64)
    return design.to_arrays(
        y=y, stratum_ids=persons, covariate_ids=cov_ids, dropped=dropped, drop_label="persons_without_outcomes",
        splines=bins.terms if bins is not None else (), censoring=censoring,
    )


def _edo_columns(obs, porder, obs_end, opt):
    """The censoring indicator of every person (sorted) and the nominal observation ends, for
    event-dependent observation; refuses what the pseudo-likelihood cannot take."""
    missing = [c for c in ("birth_day", "censor") if c not in obs.columns]
    if missing:
        raise ValueError(f"event_dependent_observation needs columns {missing} in observation_periods (birth_day: "
                         "day of birth, same day scale; censor: 1 where observation ended early, e.g. death, 0 where "
                         f"it reached its nominal end); got columns {list(obs.columns)}")
    if opt.control_window is not None:
        raise ValueError("event_dependent_observation cannot be combined with control_window (the SCRI design)")
    refuse_missing(obs, "censor", "observation_periods")
    return check_censor(obs["censor"].to_numpy(), "observation_periods.censor")[porder], obs_end.copy()


def _single_outcomes(persons, os_, oe_, op, od, birth):
    """Person index and day of each case's outcome inside the observation period, refusing
    several outcomes per person and observation starting on the day of birth."""
    inside = (od >= os_[op]) & (od <= oe_[op])
    p, d = op[inside], od[inside]
    counts = np.bincount(p, minlength=persons.shape[0])
    if np.any(counts > 1):
        i = int(np.argmax(counts > 1))
        raise ValueError(f"event_dependent_observation takes one outcome per person (the pseudo-likelihood is for a "
                         f"unique or first event): {int((counts > 1).sum())} person(s) have several in their "
                         f"observation period, first person_id={show(persons[i])}; use first_outcome_only=True")
    early = os_[p] <= birth[p]
    if early.any():
        i = int(p[np.argmax(early)])
        raise ValueError(f"event_dependent_observation needs observation to start after the day of birth (ages > 0 "
                         f"in the censoring models): person_id={show(persons[i])} starts on day {os_[i]}, born on "
                         f"day {birth[i]}")
    return p, d


def unique_ids(values, name: str, return_inverse: bool = False):
    """The sorted distinct ids of an id column; ids must be of one sortable kind (all numbers
    or all strings), since coefficient ``j`` belongs to the ``j``-th smallest id. With
    ``return_inverse`` also the position of every value among them (as :func:`numpy.unique`).

    Raises
    ------
    TypeError
        Ids that mix kinds (e.g. integers and strings), naming the column, both kinds and the
        first row of the less common kind.
    """
    values = np.asarray(values)
    try:
        return np.unique(values, return_inverse=return_inverse)
    except TypeError:
        kinds = pd.Series([type(v).__name__ for v in values])
        is_str = np.array([isinstance(v, str) for v in values])
        minority = is_str if is_str.sum() <= (~is_str).sum() else ~is_str
        i = int(np.argmax(minority))
        raise TypeError(
            f"{name} must be all integers or all strings (ids are sorted to order the coefficients), got a mix "
            f"of {sorted(set(kinds))}; first {type(values[i]).__name__} at row {i} ({show(values[i])})"
        ) from None


def _index_persons(obs, er, oc):
    """Persons sorted by id with their observation days, and the person index of every era
    and outcome: ``(persons, obs_start, obs_end, order of obs rows, era person, outcome person)``."""
    persons = obs["person_id"].to_numpy()
    dup = pd.Index(persons).duplicated()
    if dup.any():
        i = int(np.argmax(dup))
        raise ValueError(
            f"observation_periods must have one row per person_id (one period per person): {int(dup.sum())} "
            f"duplicate(s), first at row {i} (person_id={show(persons[i])})"
        )
    os_, oe_ = as_days(obs["start"], "observation_periods.start"), as_days(obs["end"], "observation_periods.end")
    _refuse_end_before_start(os_, oe_, persons, "observation_periods: end < start for {} person(s)")
    porder = np.argsort(persons, kind="stable")
    persons, os_, oe_ = persons[porder], os_[porder], oe_[porder]
    pindex = pd.Index(persons)
    ep = pindex.get_indexer(er["person_id"].to_numpy())
    if np.any(ep < 0):
        i = int(np.argmax(ep < 0))
        raise ValueError(f"eras has {int((ep < 0).sum())} row(s) of persons without an observation period, "
                         f"first at row {i} (person_id={show(er['person_id'].iloc[i])})")
    op = pindex.get_indexer(oc["person_id"].to_numpy())
    if np.any(op < 0):
        i = int(np.argmax(op < 0))
        raise ValueError(f"outcomes has {int((op < 0).sum())} row(s) of persons without an observation period, "
                         f"first at row {i} (person_id={show(oc['person_id'].iloc[i])})")
    return persons, os_, oe_, porder, ep, op


def _risk_offsets(cov_ids, risk_start, risk_end, risk_windows):
    """Per covariate the offsets (days) of its risk window from the era's start and end."""
    rs = np.full(len(cov_ids), check_int(risk_start, "risk_start"), dtype=np.int64)
    re_ = np.full(len(cov_ids), check_int(risk_end, "risk_end"), dtype=np.int64)
    if risk_windows is not None:
        if not isinstance(risk_windows, Mapping):
            raise TypeError("risk_windows must be a dict {covariate_id: (start_offset, end_offset)}")
        pos = pd.Index(cov_ids).get_indexer(list(risk_windows))
        if np.any(pos < 0):
            unknown = [k for k, i in zip(risk_windows, pos) if i < 0]
            raise ValueError(f"risk_windows has covariate id(s) not in eras: {unknown[:10]}")
        for i, (k, w) in zip(pos, risk_windows.items()):
            if not isinstance(w, (tuple, list)) or len(w) != 2:
                raise TypeError(f"risk_windows[{k!r}] must be a pair (start_offset, end_offset), got {describe(w)}")
            rs[i] = check_int(w[0], f"risk_windows[{k!r}][0]")
            re_[i] = check_int(w[1], f"risk_windows[{k!r}][1]")
    return rs, re_


def _era_days(er):
    """First and last day of every era (inclusive), checked."""
    era_start, era_end = as_days(er["start"], "eras.start"), as_days(er["end"], "eras.end")
    _refuse_end_before_start(era_start, era_end, er["person_id"], "eras: end < start in {} row(s)")
    return era_start, era_end


def _refuse_end_before_start(start, end, person_ids, what):
    """Refuse periods that end before they start; ``what`` words the count (``{}``)."""
    bad = end < start
    if np.any(bad):
        i = int(np.argmax(bad))
        raise ValueError(
            f"{what.format(int(bad.sum()))}, first at row {i} "
            f"(person_id={show(pd.Series(person_ids).iloc[i])}, start={start[i]}, end={end[i]})"
        )


def _check_windows_used(design, cov_ids, window_labels):
    """Refuse a :class:`RiskWindow` that no observation period reaches (its coefficient would
    have no data)."""
    if not window_labels:
        return
    used = np.bincount(design.nnz_col, minlength=len(cov_ids)) > 0
    pos = pd.Index(cov_ids).get_indexer(pd.Index(window_labels))
    empty = [window_labels[k] for k, i in enumerate(pos) if not used[i]]
    if empty:
        raise ValueError(f"windows: window(s) {empty[:10]} have no person-time in any observation period")


class _ObservationRules:
    """Study period, naive period, age limits and first-outcome-only for :meth:`SCCSData.from_eras`."""

    def __init__(self, study_start, study_end, naive_period, min_age, max_age, first_outcome_only):
        self.study_start = None if study_start is None else check_int(study_start, "study_start")
        self.study_end = None if study_end is None else check_int(study_end, "study_end")
        if self.study_start is not None and self.study_end is not None and self.study_end < self.study_start:
            raise ValueError(f"study_end ({self.study_end}) must be >= study_start ({self.study_start})")
        self.naive_period = check_int(naive_period, "naive_period", minimum=0)
        self.min_age = None if min_age is None else check_int(min_age, "min_age", minimum=0)
        self.max_age = None if max_age is None else check_int(max_age, "max_age", minimum=0)
        if self.min_age is not None and self.max_age is not None and self.max_age < self.min_age:
            raise ValueError(f"max_age ({self.max_age}) must be >= min_age ({self.min_age})")
        if not isinstance(first_outcome_only, (bool, np.bool_)):
            raise TypeError(f"first_outcome_only must be True or False, got {describe(first_outcome_only)}")
        self.first_outcome_only = bool(first_outcome_only)

    def needs_birth(self, obs) -> bool:
        """Whether the rules need the persons' birth days (age limits); refuses tables without them."""
        if self.min_age is None and self.max_age is None:
            return False
        if "birth_day" not in obs.columns:
            raise ValueError("min_age/max_age need a birth_day column in observation_periods (day of birth, "
                             f"same day scale); got columns {list(obs.columns)}")
        return True

    def apply(self, persons, os_, oe_, birth, er, oc, ep, op):
        """The persons, eras and outcomes left by the rules, with the observation clipped."""
        dropped = {}
        if self.first_outcome_only and len(oc):
            od = as_days(oc["day"], "outcomes.day")
            # per person the earliest day (the first such row on ties)
            order = np.lexsort((np.arange(od.shape[0]), od, op))
            head = np.ones(order.shape[0], dtype=bool)
            head[1:] = op[order][1:] != op[order][:-1]
            keep = np.zeros(od.shape[0], dtype=bool)
            keep[order[head]] = True
            dropped["later_outcomes"] = int((~keep).sum())
            oc, op = oc[keep], op[keep]
        start, end = os_ + self.naive_period, oe_.copy()
        if self.study_start is not None:
            start = np.maximum(start, self.study_start)
        if self.study_end is not None:
            end = np.minimum(end, self.study_end)
        if birth is not None:
            if self.min_age is not None:
                start = np.maximum(start, birth + self.min_age)
            if self.max_age is not None:
                end = np.minimum(end, birth + self.max_age)
        inside = end >= start
        if self.naive_period or self.study_start is not None or self.study_end is not None or birth is not None:
            dropped["persons_outside_study"] = int((~inside).sum())
        if not inside.all():
            if not inside.any():
                raise ValueError("no person has observation time left after study_start/study_end, "
                                 "naive_period and the age limits")
            keep_e, keep_o = inside[ep], inside[op]
            dropped["outcomes_of_persons_outside_study"] = int((~keep_o).sum())
            er, oc = er[keep_e], oc[keep_o]
            newidx = np.cumsum(inside) - 1
            ep, op = newidx[ep[keep_e]], newidx[op[keep_o]]
            persons, start, end = persons[inside], start[inside], end[inside]
            if birth is not None:
                birth = birth[inside]
        return persons, start, end, er, oc, ep, op, dropped, birth


def _expand_windows(windows, risk_windows, cov_ids, cov_codes, ep, era_start, era_end, es, ee):
    """Eras -> one pseudo-era per (era, window) for the covariates in ``windows``; the others
    keep their (risk_start, risk_end) window. Returns the new era arrays and covariate ids."""
    if not isinstance(windows, Mapping):
        raise TypeError(f"windows must be a dict {{covariate_id: [RiskWindow, ...]}}, got {describe(windows)}")
    pos = pd.Index(cov_ids).get_indexer(list(windows))
    if np.any(pos < 0):
        unknown = [k for k, i in zip(windows, pos) if i < 0]
        raise ValueError(f"windows has covariate id(s) not in eras: {unknown[:10]}")
    if risk_windows is not None:
        both = [k for k in windows if k in risk_windows]
        if both:
            raise ValueError(f"covariate id(s) {both[:10]} are in both risk_windows and windows; give one")
    windowed = np.zeros(len(cov_ids), dtype=bool)
    windowed[pos] = True
    keep = ~windowed[cov_codes]
    parts_p, parts_s, parts_e, parts_l = [ep[keep]], [es[keep]], [ee[keep]], [np.asarray(cov_ids, dtype=object)[cov_codes[keep]]]
    labels = []
    for i, (k, wins) in zip(pos, windows.items()):
        if isinstance(wins, RiskWindow):
            wins = [wins]
        if not isinstance(wins, (list, tuple)) or not wins or not all(isinstance(w, RiskWindow) for w in wins):
            raise TypeError(f"windows[{k!r}] must be a non-empty list of RiskWindow, got {describe(wins)}")
        m = cov_codes == i
        for w in wins:
            a = (era_start if w.start_anchor == "start" else era_end)[m] + w.start
            b = (era_start if w.end_anchor == "start" else era_end)[m] + w.end
            parts_p.append(ep[m])
            parts_s.append(a)
            parts_e.append(b)
            parts_l.append(np.full(int(m.sum()), w.label, dtype=object))
            labels.append(w.label)
    other = set(np.asarray(cov_ids, dtype=object)[~windowed].tolist())
    clash = [lab for lab in labels if lab in other]
    if len(set(labels)) != len(labels) or clash:
        dup = clash or [lab for lab in labels if labels.count(lab) > 1]
        raise ValueError(f"windows: labels must be unique and differ from the other covariate ids; {dup[:10]!r} repeat")
    all_labels = np.concatenate(parts_l)
    try:
        new_ids, new_codes = np.unique(all_labels, return_inverse=True)
    except TypeError:
        raise TypeError("windows: labels and covariate ids must be of one sortable type (all strings or all "
                        f"integers), got {sorted({type(v).__name__ for v in all_labels})}") from None
    if all(isinstance(v, (int, np.integer)) for v in new_ids):
        new_ids = new_ids.astype(np.int64)
    elif all(isinstance(v, str) for v in new_ids):
        new_ids = new_ids.astype(str)
    return (np.concatenate(parts_p), np.concatenate(parts_s), np.concatenate(parts_e), new_ids,
            new_codes.astype(np.int64), labels)


class IntervalDesign:
    """Intermediate result of :func:`build_interval_design` (rows before outcomes are known)."""

    def __init__(self, row_person, row_time, nnz_row, nnz_col, keys, key_group, span, n_persons, eras_outside, day0):
        self.row_person = row_person  # int64, rows sorted by person
        self.row_time = row_time
        self.nnz_row = nnz_row
        self.nnz_col = nnz_col  # sorted by (row, col)
        self.keys = keys  # sorted interval-start keys (person * span + day)
        self.key_group = key_group  # row of each raw interval
        self.span = span
        self.n_persons = n_persons
        self.eras_outside = eras_outside
        self.day0 = day0  # the first day of the cut-point keys

    @property
    def n_rows(self):
        return int(self.row_person.shape[0])

    def locate(self, person, day):
        """Row of each (person index, day) that lies inside the person's observation period."""
        k = np.searchsorted(self.keys, person * self.span + (day - self.day0), side="right") - 1
        return self.key_group[k]

    nnz_val = None  # values of the non-zeros (None: all 1)

    def restricted(self, keep_interval, keep_nnz, interval_time, n_cov, *, merge):
        """A design of unmerged intervals (``merge=False``) restricted to the intervals
        ``keep_interval`` and the non-zeros ``keep_nnz`` (covariate codes below ``n_cov``), with
        the times ``interval_time`` (per interval); with ``merge`` the kept intervals of a person
        with the same covariates become one row. Days in intervals left out locate to -1."""
        if not keep_interval.any():
            raise ValueError("no interval is left in any observation period")
        new_index = np.cumsum(keep_interval) - 1
        nnz_int = new_index[self.nnz_row[keep_nnz]]
        nnz_cov = self.nnz_col[keep_nnz]
        int_person = self.row_person[keep_interval]
        int_time = interval_time[keep_interval]
        if merge:
            group, row_time, row_person, nnz_row, nnz_col = _merge_by_pattern(int_person, int_time, nnz_int, nnz_cov,
                                                                              n_cov, self.n_persons)
        else:
            group = np.arange(int(keep_interval.sum()), dtype=np.int64)
            row_time, row_person, nnz_row, nnz_col = int_time.astype(np.float64), int_person, nnz_int, nnz_cov
        interval_row = np.where(keep_interval, group[np.maximum(new_index, 0)], -1)
        return IntervalDesign(row_person, row_time, nnz_row, nnz_col, self.keys, interval_row[self.key_group],
                              self.span, self.n_persons, self.eras_outside, self.day0)

    def to_arrays(self, *, y, stratum_ids, covariate_ids, dropped, drop_label, splines=(), censoring=None):
        """The keyword arguments of ``SCCSData._assemble`` for outcome counts ``y`` per row;
        persons without outcomes are dropped and counted as ``dropped[drop_label]``."""
        n_s = np.bincount(self.row_person, weights=y, minlength=self.n_persons)
        has = n_s > 0
        keep_row = has[self.row_person]
        dropped = dict(dropped)
        dropped[drop_label] = int((~has).sum())
        newrow = np.cumsum(keep_row) - 1
        keep_nnz = keep_row[self.nnz_row]
        row_pos = newrow[self.nnz_row[keep_nnz]]
        col = self.nnz_col[keep_nnz]
        order = np.lexsort((row_pos, col))
        person_new = np.cumsum(has) - 1
        rp = person_new[self.row_person[keep_row]]
        n_strata = int(has.sum())
        if n_strata == 0:
            raise ValueError("no person has an outcome inside the observation period")
        stratum_ptr = np.zeros(n_strata + 1, dtype=np.int64)
        np.cumsum(np.bincount(rp, minlength=n_strata), out=stratum_ptr[1:])
        return dict(
            stratum_ids=np.asarray(stratum_ids)[has],
            row_ids=np.arange(int(keep_row.sum()), dtype=np.int64),
            covariate_ids=np.asarray(covariate_ids),
            stratum_ptr=stratum_ptr,
            y=y[keep_row],
            time=self.row_time[keep_row],
            col_codes=col[order],
            row_pos=row_pos[order],
            values=None if self.nnz_val is None else self.nnz_val[keep_nnz][order],
            dropped=dropped,
            splines=splines,
            censoring=censoring,
        )


def _sorted_unique(a):
    """np.unique for int64 by an in-place sort (NumPy 2's hash-based unique is much slower here)."""
    a = np.sort(a)
    if a.shape[0] < 2:
        return a
    keep = np.empty(a.shape[0], dtype=bool)
    keep[0] = True
    np.not_equal(a[1:], a[:-1], out=keep[1:])
    return a[keep]


def build_interval_design(obs_start, obs_end, era_person, era_start, era_end, era_cov, n_cov, *, merge=True):
    """Vectorised interval construction shared by :meth:`SCCSData.from_eras` and ``simulate``.

    Persons are ``0..P-1`` with inclusive observation days ``obs_start..obs_end``; eras
    are inclusive ``era_start..era_end`` with covariate codes ``0..n_cov-1``. Cut points
    are the observation boundaries and the clipped era boundaries; each interval between
    consecutive cut points gets the set of covariates whose eras cover it; with ``merge``
    the intervals of a person with the same set become one row (times summed,
    :func:`_merge_by_pattern`).
    """
    P = obs_start.shape[0]
    day0 = int(min(obs_start.min(), era_start.min() if era_start.size else obs_start.min()))
    span = int(obs_end.max()) - day0 + 2
    # clip eras to the observation period (half-open [s, e))
    s = np.maximum(era_start, obs_start[era_person])
    e = np.minimum(era_end + 1, obs_end[era_person] + 1)
    ok = s < e
    eras_outside = int((~ok).sum())
    ep, s, e, ec = era_person[ok], s[ok], e[ok], era_cov[ok]
    # searchsorted below is much faster with sorted needles
    eorder = np.argsort(ep * span + s)
    ep, s, e, ec = ep[eorder], s[eorder], e[eorder], ec[eorder]
    base = np.arange(P, dtype=np.int64) * span - day0
    keys = np.concatenate([base + obs_start, base + obs_end + 1, ep * span + s - day0, ep * span + e - day0])
    keys = _sorted_unique(keys)
    kperson = keys // span
    is_start = np.empty(keys.shape[0], dtype=bool)
    is_start[:-1] = kperson[:-1] == kperson[1:]
    is_start[-1] = False
    # every person owns exactly one non-start key (its obs_end + 1), so the interval of key k is k - person
    interval_start_keys = keys[is_start]
    n_int = interval_start_keys.shape[0]
    int_len = (keys[1:] - keys[:-1])[is_start[:-1]]
    int_person = kperson[is_start]
    a = np.searchsorted(keys, ep * span + s - day0) - ep
    b = np.searchsorted(keys, ep * span + e - day0) - ep
    lengths = b - a
    total = int(lengths.sum())
    first = np.repeat(a - np.cumsum(lengths) + lengths, lengths)
    nnz_int = first + np.arange(total, dtype=np.int64)
    nnz_cov = np.repeat(ec, lengths)
    # overlapping eras of the same covariate count once
    pair = _sorted_unique(nnz_int * n_cov + nnz_cov) if total else np.zeros(0, dtype=np.int64)
    nnz_int, nnz_cov = pair // n_cov, pair % n_cov
    if merge:
        group, row_time, row_person, nnz_row, nnz_col = _merge_by_pattern(int_person, int_len, nnz_int, nnz_cov,
                                                                          n_cov, P)
    else:
        group = np.arange(n_int, dtype=np.int64)
        row_time = int_len.astype(np.float64)
        row_person = int_person
        nnz_row, nnz_col = nnz_int, nnz_cov
    return IntervalDesign(row_person, row_time, nnz_row, nnz_col, interval_start_keys, group, span, P, eras_outside,
                          day0)


def _merge_by_pattern(int_person, int_len, nnz_int, nnz_cov, n_cov, P):
    """One row per person and exposure pattern: the intervals of a person with the same set of
    covariates become one row (times summed). Returns ``(row of each interval, row time, row
    person, non-zero rows, non-zero columns)``; the rows of a person are contiguous.

    Pattern identity uses two independent random 64-bit sums over the set (wrap-around
    arithmetic); two different sets collide with probability about 2**-128.
    """
    n_int = int_person.shape[0]
    rng = np.random.default_rng(0x5CC5)
    h1 = rng.integers(0, 2**63, size=n_cov, dtype=np.int64).astype(np.uint64) * np.uint64(2) + np.uint64(1)
    h2 = rng.integers(0, 2**63, size=n_cov, dtype=np.int64).astype(np.uint64) * np.uint64(2) + np.uint64(1)
    # per-interval sums of the random codes of its covariates, as differences of a running
    # (wrap-around) sum over the non-zeros, which are sorted by interval
    cnt = np.bincount(nnz_int, minlength=n_int)
    ptr = np.zeros(n_int + 1, dtype=np.int64)
    np.cumsum(cnt, out=ptr[1:])
    hh = []
    for h in (h1, h2):
        run = np.zeros(nnz_cov.shape[0] + 1, dtype=np.uint64)
        np.cumsum(h[nnz_cov], out=run[1:])
        hh.append(run[ptr[1:]] - run[ptr[:-1]])
        del run
    hh1, hh2 = hh
    # one int64 sort key: person in the high bits, the top bits of hash 1 below (int_person is
    # already sorted, so this keeps persons contiguous); a truncated-hash tie between different
    # patterns can only split a group in two rows with the same pattern, never merge two patterns
    pbits = max(1, int(P).bit_length())
    key = (int_person << np.int64(63 - pbits)) | (hh1 >> np.uint64(pbits + 1)).astype(np.int64)
    so = np.argsort(key)
    del key
    newgrp = np.zeros(n_int, dtype=bool)
    newgrp[0] = True
    for arr in (int_person, cnt, hh1, hh2):
        sa = arr[so]
        newgrp[1:] |= sa[1:] != sa[:-1]
        del sa
    gid_sorted = np.cumsum(newgrp) - 1
    group = np.empty(n_int, dtype=np.int64)
    group[so] = gid_sorted
    n_rows = int(gid_sorted[-1]) + 1
    row_time = np.bincount(group, weights=int_len, minlength=n_rows).astype(np.float64)
    row_person = int_person[so[newgrp]]
    rep = np.zeros(n_int, dtype=bool)
    rep[so[newgrp]] = True  # one representative interval per group
    keepz = rep[nnz_int]
    nnz_row, nnz_col = group[nnz_int[keepz]], nnz_cov[keepz]
    return group, row_time, row_person, nnz_row, nnz_col
