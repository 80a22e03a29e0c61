"""Self-controlled case series data: strata of rows with a sparse, column-compressed design.

Internal layout (what the engines read):

* rows are grouped by stratum (person); the rows of stratum ``s`` are
  ``stratum_ptr[s]:stratum_ptr[s+1]`` and ``row_stratum[i]`` is the stratum of row ``i``;
* ``y`` (event counts, float64), ``time`` (exposure time, > 0) per row and
  ``n_events`` (``n_s = sum_{i in s} y_i``) per stratum;
* covariates in compressed sparse column form (CSC): the non-zeros of covariate ``j`` are
  ``col_ptr[j]:col_ptr[j+1]`` of ``row_idx`` (int32, sorted, hence grouped by stratum)
  and ``values`` (``None`` when every non-zero is 1, the usual exposure indicators, which
  lets the engines skip the multiplications).

So one coordinate step touches only the coordinate's non-zeros and the strata they fall in.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np
import pandas as pd

from .._validate import check_in
from ._tables import lower_columns, refuse_missing, require, show
from .design import EraOptions, design_from_eras, unique_ids

__all__ = ["SCCSData"]

_OUTCOME_COLUMNS = ("stratum_id", "row_id", "y", "time")


@dataclass(frozen=True, eq=False)
class SCCSData:
    """A self-controlled case series design (strata = persons, rows = intervals).

    Build it with :meth:`from_long` (OHDSI long format) or :meth:`from_eras`
    (observation periods, exposure eras and outcome days), or get one from
    :func:`hphawkes_py.sccs.simulate`; the constructor takes the finished arrays
    (every field below) and checks nothing.

    Parameters
    ----------
    stratum_ids : ndarray (n_strata,)
        Original stratum (person) identifiers, in internal order (sorted).
    row_ids : ndarray (n_rows,)
        Original row identifiers, in internal order.
    covariate_ids : ndarray (n_covariates,)
        Covariate identifiers (sorted); coefficient ``j`` belongs to ``covariate_ids[j]``.
    stratum_ptr : ndarray int64 (n_strata + 1,)
        Rows of stratum ``s`` are ``stratum_ptr[s]:stratum_ptr[s+1]``.
    row_stratum : ndarray int32 (n_rows,)
        Stratum index of each row.
    y : ndarray float64 (n_rows,)
        Event counts (non-negative integers).
    time : ndarray float64 (n_rows,)
        Time at risk of each row (> 0; days for :meth:`from_eras`); the offset is ``log(time)``.
    n_events : ndarray float64 (n_strata,)
        ``n_s``, events per stratum (all > 0 unless ``strata_without_events="keep"``).
    col_ptr : ndarray int64 (n_covariates + 1,)
        CSC column pointers.
    row_idx : ndarray int32 (nnz,)
        CSC row indices, sorted within each column (hence grouped by stratum).
    values : ndarray float64 (nnz,) or None
        CSC values; ``None`` means every stored non-zero equals 1.
    dropped : dict
        What was left out while building, and why (counts), e.g.
        ``{"strata_without_events": 12, "rows_without_events_strata": 40}``.
        Nothing is dropped silently: every such count is here and in ``repr``.
    splines : tuple of :class:`~.splines.SplineTerm`
        Age, season and calendar-time spline terms (from :meth:`from_eras`); their
        coefficients are covariates named ``"age_1"``, ``"season_1"``, ... after the
        exposures. Empty for designs without them.
    censoring : CensoringFit or None
        The censoring models of an event-dependent observation design
        (:meth:`from_eras` ``event_dependent_observation=``); None otherwise.

    See Also
    --------
    hphawkes_py.sccs.fit : fit the model to a design.

    Examples
    --------
    Two persons with events and one without (left out, and counted):

    >>> import pandas as pd
    >>> outcomes = pd.DataFrame({"stratum_id": [1, 1, 2, 2, 3, 3], "row_id": [1, 2, 3, 4, 5, 6],
    ...                          "y": [1, 0, 0, 2, 0, 0], "time": [10.0, 20.0, 15.0, 15.0, 5.0, 5.0]})
    >>> covariates = pd.DataFrame({"row_id": [1, 4], "covariate_id": ["drugA", "drugA"]})
    >>> data = hp.sccs.SCCSData.from_long(outcomes, covariates)
    >>> data.n_strata, data.n_rows, data.nnz
    (2, 4, 2)
    >>> data.stratum_ptr.tolist(), data.n_events.tolist()
    ([0, 2, 4], [1.0, 2.0])
    >>> data.dropped
    {'strata_without_events': 1, 'rows_in_strata_without_events': 2}
    """

    stratum_ids: np.ndarray
    row_ids: np.ndarray
    covariate_ids: np.ndarray
    stratum_ptr: np.ndarray
    row_stratum: np.ndarray
    y: np.ndarray
    time: np.ndarray
    n_events: np.ndarray
    col_ptr: np.ndarray
    row_idx: np.ndarray
    values: np.ndarray | None
    dropped: Mapping[str, int] = field(default_factory=dict)
    splines: tuple = ()
    censoring: Any = None

    # ------------------------------------------------------------------ sizes
    @property
    def n_strata(self) -> int:
        return int(self.stratum_ptr.shape[0] - 1)

    @property
    def n_rows(self) -> int:
        return int(self.y.shape[0])

    @property
    def n_covariates(self) -> int:
        return int(self.col_ptr.shape[0] - 1)

    @property
    def nnz(self) -> int:
        return int(self.row_idx.shape[0])

    @property
    def nbytes(self) -> int:
        """Bytes held by the numeric arrays (ids excluded)."""
        arrs = [self.stratum_ptr, self.row_stratum, self.y, self.time, self.n_events, self.col_ptr, self.row_idx]
        if self.values is not None:
            arrs.append(self.values)
        return int(sum(a.nbytes for a in arrs))

    def __repr__(self) -> str:
        drop = ", ".join(f"{k}={v}" for k, v in self.dropped.items() if v) or "nothing"
        return (
            f"SCCSData(n_strata={self.n_strata}, n_rows={self.n_rows}, n_covariates={self.n_covariates}, "
            f"nnz={self.nnz}, events={int(self.n_events.sum())}, binary={self.values is None}, dropped: {drop})"
        )

    @functools.cached_property
    def event_nnz(self) -> np.ndarray:
        """Positions of the stored non-zeros whose row has events (``y > 0``), ascending
        (computed once; the constant part of the gradient needs only these)."""
        return np.flatnonzero(self.y[self.row_idx] != 0)

    @functools.cached_property
    def nnz_stratum(self) -> np.ndarray:
        """Stratum of every stored non-zero (int32, nnz; computed once, shared by the engines)."""
        return self.row_stratum[self.row_idx]

    @functools.cached_property
    def nnz_run_end(self) -> np.ndarray:
        """1 where a stored non-zero is the last of its column's run in one stratum (uint8, nnz)."""
        s = self.nnz_stratum
        end = np.ones(self.nnz, dtype=np.uint8)
        if self.nnz:
            end[:-1] = s[1:] != s[:-1]
            last = self.col_ptr[1:][np.diff(self.col_ptr) > 0] - 1
            end[last] = 1
        return end

    @functools.cached_property
    def log_time(self) -> np.ndarray:
        """log(time) per row (the offset; computed once)."""
        return np.log(self.time)

    def column_of_nnz(self) -> np.ndarray:
        """Covariate index of every stored non-zero (int32, nnz)."""
        return np.repeat(np.arange(self.n_covariates, dtype=np.int32), np.diff(self.col_ptr))

    def to_long(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """Back to the long format: (outcomes, covariates) DataFrames.

        ``SCCSData.from_long(*data.to_long())`` rebuilds the same design (covariates without
        any non-zero value appear once with an explicit ``value`` 0)."""
        outcomes = pd.DataFrame(
            {
                "stratum_id": self.stratum_ids[self.row_stratum],
                "row_id": self.row_ids,
                "y": self.y,
                "time": self.time,
            }
        )
        cols = self.column_of_nnz()
        # a covariate without non-zeros still has a coefficient: one explicit zero (on the
        # first row) keeps it, so that from_long(*to_long()) rebuilds the same design
        empty = np.flatnonzero(np.diff(self.col_ptr) == 0)
        covariates = pd.DataFrame(
            {
                "row_id": np.concatenate([self.row_ids[self.row_idx], np.repeat(self.row_ids[:1], empty.size)]),
                "covariate_id": np.concatenate([self.covariate_ids[cols], self.covariate_ids[empty]]),
                "value": np.concatenate([np.ones(self.nnz) if self.values is None else self.values,
                                         np.zeros(empty.size)]),
            }
        )
        return outcomes, covariates

    # ------------------------------------------------------------ constructors
    @classmethod
    def from_long(
        cls,
        outcomes: pd.DataFrame,
        covariates: pd.DataFrame,
        *,
        strata_without_events: str = "drop",
    ) -> "SCCSData":
        """Build from the OHDSI long format.

        Parameters
        ----------
        outcomes : DataFrame
            One row per interval: ``stratum_id``, ``row_id`` (unique), ``y`` (events,
            non-negative integers), ``time`` (time at risk, > 0). Column names are
            case-insensitive (``STRATUM_ID`` etc. as written by Cyclops/OHDSI work).
        covariates : DataFrame
            ``row_id``, ``covariate_id`` and optionally ``value`` (or ``covariate_value``;
            default 1). Each (row_id, covariate_id) pair at most once. Explicit zeros are
            not stored (they do not change the likelihood) but their covariate is kept.
        strata_without_events : {"drop", "keep", "raise"}
            Strata with ``n_s = 0`` contribute nothing to the conditional likelihood.
            ``"drop"`` (default) leaves them out and records how many strata and rows in
            ``dropped``; ``"keep"`` stores them (zero contribution); ``"raise"`` refuses them.

        Raises
        ------
        ValueError
            Missing columns, negative/non-integer/non-finite ``y``, non-positive or
            non-finite ``time``, duplicate ``row_id``, covariate rows absent from
            ``outcomes``, duplicate (row, covariate) pairs, non-finite values,
            missing stratum ids, no rows left.

        Examples
        --------
        >>> import pandas as pd
        >>> outcomes = pd.DataFrame({"STRATUM_ID": [7, 7, 9, 9], "ROW_ID": [1, 2, 3, 4], "Y": [1, 0, 1, 1],
        ...                          "TIME": [30.0, 335.0, 10.0, 355.0]})
        >>> covariates = pd.DataFrame({"ROW_ID": [1, 3], "COVARIATE_ID": [101, 101]})
        >>> data = hp.sccs.SCCSData.from_long(outcomes, covariates)
        >>> data.covariate_ids.tolist(), data.n_events.tolist()
        ([101], [1.0, 2.0])
        """
        check_in(strata_without_events, "strata_without_events", ("drop", "keep", "raise"))
        out = lower_columns(outcomes, "outcomes")
        cov = lower_columns(covariates, "covariates")
        require(out, _OUTCOME_COLUMNS, "outcomes")
        require(cov, ("row_id", "covariate_id"), "covariates")
        if len(out) == 0:
            raise ValueError("outcomes has no rows")
        for table, name, cols in ((out, "outcomes", ("stratum_id", "row_id")),
                                  (cov, "covariates", ("row_id", "covariate_id"))):
            for col in cols:
                refuse_missing(table, col, name)
        y, time, row_ids_in = _outcome_columns(out)
        stratum_ids, stratum_ptr, y, time, row_ids, dropped = _order_strata(out, y, time, row_ids_in,
                                                                            strata_without_events)
        covariate_ids_all, cov_codes, row_pos, values = _covariate_entries(cov, row_ids, row_ids_in, dropped)
        return cls._assemble(
            stratum_ids=stratum_ids,
            row_ids=np.asarray(row_ids),
            covariate_ids=np.asarray(covariate_ids_all),
            stratum_ptr=stratum_ptr,
            y=y,
            time=time,
            col_codes=cov_codes,
            row_pos=row_pos,
            values=values,
            dropped=dropped,
        )

    @classmethod
    def _assemble(cls, *, stratum_ids, row_ids, covariate_ids, stratum_ptr, y, time, col_codes, row_pos, values, dropped,
                  splines=(), censoring=None):
        """Final arrays from sorted-by-(column, row) non-zeros."""
        n_cov = len(covariate_ids)
        n_rows = len(y)
        n_strata = len(stratum_ptr) - 1
        col_ptr = np.zeros(n_cov + 1, dtype=np.int64)
        np.cumsum(np.bincount(col_codes, minlength=n_cov), out=col_ptr[1:])
        row_stratum = np.repeat(np.arange(n_strata, dtype=np.int32), np.diff(stratum_ptr))
        n_events = np.bincount(row_stratum, weights=y, minlength=n_strata).astype(np.float64)
        vals = None if (values is None or np.all(values == 1.0)) else np.ascontiguousarray(values, dtype=np.float64)
        if n_rows >= 2**31:
            raise ValueError(f"too many rows for int32 row indices: {n_rows}")
        return cls(
            stratum_ids=stratum_ids,
            row_ids=row_ids,
            covariate_ids=covariate_ids,
            stratum_ptr=stratum_ptr,
            row_stratum=row_stratum,
            y=np.ascontiguousarray(y, dtype=np.float64),
            time=np.ascontiguousarray(time, dtype=np.float64),
            n_events=n_events,
            col_ptr=col_ptr,
            row_idx=np.ascontiguousarray(row_pos, dtype=np.int32),
            values=vals,
            dropped=dict(dropped),
            splines=tuple(splines),
            censoring=censoring,
        )

    @property
    def spline_ids(self) -> list:
        """Covariate ids of all spline coefficients (age, season, calendar time)."""
        return [c for term in self.splines for c in term.covariate_ids]

    def spline_term(self, name: str):
        """The :class:`~.splines.SplineTerm` called ``name`` (``"age"``, ``"season"``, ``"calendar"``)."""
        for term in self.splines:
            if term.name == name:
                return term
        raise ValueError(f"this design has no {name!r} spline term; it has {[t.name for t in self.splines]}")

    @classmethod
    def from_eras(
        cls,
        observation_periods: pd.DataFrame,
        eras: pd.DataFrame,
        outcomes: pd.DataFrame,
        *,
        risk_start: int = 0,
        risk_end: int = 0,
        risk_windows: Mapping[Any, tuple[int, int]] | None = None,
        windows: Mapping[Any, Any] | None = None,
        study_start: int | None = None,
        study_end: int | None = None,
        naive_period: int = 0,
        min_age: int | None = None,
        max_age: int | None = None,
        first_outcome_only: bool = False,
        age_knots: Any = None,
        season_knots: Any = None,
        calendar_knots: Any = None,
        day_origin: Any = "1970-01-01",
        merge: bool = True,
        control_window: Any = None,
        event_dependent_observation: Any = False,
        censoring_regression: bool = False,
    ) -> "SCCSData":
        """Build the SCCS design from person-level data (days are integers, inclusive).

        Parameters
        ----------
        observation_periods : DataFrame
            ``person_id, start, end``: one observation period per person, days
            ``start..end`` inclusive.
        eras : DataFrame
            ``person_id, start, end, covariate_id``: exposure eras (e.g. drug eras),
            inclusive days. The risk window of an era is
            ``start + risk_start .. end + risk_end`` (OHDSI ``createEraCovariates`` with
            both ends anchored as given), clipped to the observation period. Eras of the
            same covariate that overlap count once (indicator covariates).
        outcomes : DataFrame
            ``person_id, day``: one row per outcome event.
        risk_start, risk_end : int
            Risk-window offsets in days (all covariates).
        risk_windows : dict, optional
            Per-covariate offsets ``{covariate_id: (risk_start, risk_end)}`` overriding the
            scalars (e.g. a vaccine's days 15..35 after the vaccination day next to an
            age-band covariate with (0, 0)).
        windows : dict, optional
            Several risk windows per exposure: ``{covariate_id: [RiskWindow, ...]}``. Each
            window becomes its own covariate named by its label (e.g. days 1-7, 8-21 and
            22-42 after the era start, and a pre-exposure window); the era's own covariate is
            then not in the design. Windows of one exposure may overlap (each is an indicator).
            A window that has no person-time in any observation period is an error.
        study_start, study_end : int, optional
            Study period (days): observation is clipped to ``study_start..study_end``.
        naive_period : int
            Days at the start of each observation period left out (SelfControlledCaseSeries'
            ``naivePeriod``: the history needed to see earlier exposures and outcomes).
        min_age, max_age : int, optional
            Ages in days: observation is clipped to ``birth_day + min_age .. birth_day +
            max_age``; ``observation_periods`` must then have a ``birth_day`` column.
        first_outcome_only : bool
            Keep each person's first outcome only (the earliest ``day``, before any
            clipping), as SelfControlledCaseSeries' ``firstOutcomeOnly``; the others are
            counted in ``dropped["later_outcomes"]``.

            Persons left with no observation time by these rules are counted in
            ``dropped["persons_outside_study"]`` (their eras and outcomes with them).
        age_knots : int or array, optional
            Age adjustment (needs ``birth_day``): a cubic spline of age (days) with these knots,
            piecewise constant per month of age (see :mod:`.splines`). An integer ``n`` (>= 2;
            SelfControlledCaseSeries uses 5) puts the knots at the ``0, 1/(n-1), ..., 1``
            quantiles of the age at the outcomes, with the first and last moved out to the
            youngest and oldest age under observation (so that all person-time is covered).
            An array gives the knots (days, increasing); an age under observation outside
            them is an error. ``n`` knots give ``n + 1`` coefficients ``"age_1"...``.
        season_knots : int or array, optional
            Season adjustment: a cyclic cubic spline over the month of the year (constant
            within calendar months). An integer ``n`` (>= 3) puts ``n`` knots evenly on the
            year; an array gives knot positions in months in ``[0, 12)`` (0 = 1 January).
            ``n`` knots give ``n - 1`` coefficients ``"season_1"...``.
        calendar_knots : int or array, optional
            Calendar-time adjustment: a cubic spline of the calendar day (constant within
            calendar months); knots as for ``age_knots`` but over the outcome days. Age and
            calendar time are collinear within a person up to the linear trend; fit both only
            with a spline prior.
        day_origin : str or numpy.datetime64
            The calendar date of day 0 (for months and seasons); default 1970-01-01, so days
            are days since the Unix epoch.
        merge : bool
            Merge the intervals of a person that have the same exposure pattern (the
            likelihood depends only on their summed time and events). ``False`` keeps
            one row per interval between consecutive cut points.
        control_window : pair, RiskWindow or dict, optional
            The self-controlled risk interval (SCRI) design (SelfControlledCaseSeries'
            ``createScriIntervalData``, see :mod:`.scri`): a control interval per era instead
            of all unexposed time as the reference. ``(start_offset, end_offset)`` places it at
            days ``era start + start_offset .. era end + end_offset`` (inclusive, anchored like
            ``risk_start``/``risk_end``); a :class:`~.design.RiskWindow` sets other anchors
            (e.g. a pre-exposure control ``RiskWindow("pre", -28, -1, "start", "start")``;
            its label is not used); ``{covariate_id: pair or RiskWindow}`` gives control
            intervals to the eras of the listed covariates only. Only days in a risk window or
            a control interval are observed: the other days and their outcomes leave the
            design (``dropped["outcomes_outside_risk_and_control"]``); a day in both counts as
            risk time. Control intervals that miss the observation period are counted in
            ``dropped["control_intervals_outside_observation"]``. Not with the spline knots.
        event_dependent_observation : bool or str
            For outcomes that end observation (death): the pseudo-likelihood of Farrington,
            Whitaker & Ghebremichael (2011), the SCCS package's ``eventdepenobs`` (see
            :mod:`.event_dependent`). ``True`` or ``"auto"`` fits the four censoring models
            (``"EWA"``, ``"EWI"``, ``"EGA"``, ``"EGI"``) to the cases and uses the smallest AIC;
            a model name uses that one. Each row's ``time`` is then the integral of the weight
            function over its days (ages in years), not its length; the fitted models are in
            ``data.censoring`` (:class:`~.event_dependent.CensoringFit`). Needs the columns
            ``birth_day`` and ``censor`` (1 where the observation period ended early, e.g. at
            death; 0 where it reached its nominal end; an end moved earlier by ``study_end`` or
            ``max_age`` counts as 0) in ``observation_periods``, one outcome per person (or
            ``first_outcome_only=True``) and observation starting after the day of birth.
            Weights below 1e-15 are raised to it (the package's floor) and counted in
            ``dropped["interval_weights_raised_to_minimum"]``. Not with ``control_window``.
        censoring_regression : bool
            With ``event_dependent_observation``: the 7-parameter censoring models (the SCCS
            package's ``regress=TRUE``), whose scale, mixing and shape parameters depend on the
            age at the start of observation (age models) or the event age (interval models);
            see :func:`~hphawkes_py.sccs.fit_censoring_models`.

        Returns
        -------
        SCCSData
            Rows are intervals between cut points at observation and risk-window
            boundaries (``time`` = length in days, ``y`` = outcome events in it). Persons
            without outcomes in their observation period are dropped and counted in
            ``dropped["persons_without_outcomes"]``; outcomes outside the observation
            period in ``dropped["outcomes_outside_observation"]``; eras whose risk window
            misses the observation period in ``dropped["eras_outside_observation"]``.

        Raises
        ------
        ValueError
            Missing columns, non-integer days, ``end < start`` in an observation period,
            a person with two observation periods, eras or outcomes of persons without
            an observation period, ages under observation outside explicit ``age_knots``
            (calendar days outside ``calendar_knots``), covariate ids that clash with the
            spline names, a ``control_window`` that no observation period reaches or that is
            given with spline knots; for ``event_dependent_observation``: missing ``birth_day``
            or ``censor`` columns, a ``censor`` other than 0/1, several outcomes of a person,
            observation from the day of birth, a weight that is not finite.
        TypeError
            Covariate ids that mix integers and strings; a ``control_window`` that is not a
            pair of integers, a RiskWindow or a dict of them.

        Examples
        --------
        Person-level tables (days since 1970-01-01), a risk window of days 1-30 after each
        era's start to 30 days after its end:

        >>> obs, eras, outcomes, _ = hp.sccs.simulate(n_cases=300, n_drugs=2, prevalence=0.5, output="eras", seed=1)
        >>> list(eras.columns)
        ['person_id', 'start', 'end', 'covariate_id']
        >>> hp.sccs.SCCSData.from_eras(obs, eras, outcomes, risk_start=1, risk_end=30)
        SCCSData(n_strata=300, n_rows=557, n_covariates=2, nnz=275, events=327, binary=True, dropped: nothing)

        With age and season adjustment (spline coefficients after the exposures):

        >>> data = hp.sccs.SCCSData.from_eras(obs, eras, outcomes, age_knots=5, season_knots=4)
        >>> data.covariate_ids.tolist()
        [1, 2, 'age_1', 'age_2', 'age_3', 'age_4', 'age_5', 'age_6', 'season_1', 'season_2', 'season_3']

        Self-controlled risk interval design: risk days 1-28 after a vaccination, control days
        29-56; the outcome on day 70 is in neither and leaves the design:

        >>> import pandas as pd
        >>> obs = pd.DataFrame({"person_id": [1, 2], "start": [0, 0], "end": [365, 365]})
        >>> vacc = pd.DataFrame({"person_id": [1, 2], "start": [100, 200], "end": [100, 200],
        ...                      "covariate_id": ["vaccine", "vaccine"]})
        >>> events = pd.DataFrame({"person_id": [1, 2, 2], "day": [110, 240, 270]})
        >>> scri = hp.sccs.SCCSData.from_eras(obs, vacc, events, risk_start=1, risk_end=28,
        ...                                   control_window=(29, 56))
        >>> scri.time.tolist(), scri.y.tolist(), scri.dropped["outcomes_outside_risk_and_control"]
        ([28.0, 28.0, 28.0, 28.0], [0.0, 1.0, 1.0, 0.0], 1)
        """
        options = EraOptions(risk_start=risk_start, risk_end=risk_end, risk_windows=risk_windows, windows=windows,
                             study_start=study_start, study_end=study_end, naive_period=naive_period, min_age=min_age,
                             max_age=max_age, first_outcome_only=first_outcome_only, age_knots=age_knots,
                             season_knots=season_knots, calendar_knots=calendar_knots, day_origin=day_origin,
                             merge=merge, control_window=control_window,
                             event_dependent_observation=event_dependent_observation,
                             censoring_regression=censoring_regression)
        return cls._assemble(**design_from_eras(observation_periods, eras, outcomes, options))

    @classmethod
    def from_cdm(cls, connection: Any, outcome_concept_ids: Any, exposure_concept_ids: Any,
                 **options: Any) -> "SCCSData":
        """Build the design from the tables of an OMOP CDM database (DuckDB, PostgreSQL, ...).

        The cases (observation periods with an outcome) are selected in the database and the
        design is :meth:`from_eras` of their observation periods, exposure eras and outcome
        days; see :func:`hphawkes_py.sccs.cdm.cdm_study` for the study, the options and the errors.

        Parameters
        ----------
        connection : duckdb.DuckDBPyConnection, sqlalchemy Engine or Connection, or str
            The database, or its URL (``"duckdb:///cdm.duckdb"``, ``"postgresql+psycopg://..."``).
        outcome_concept_ids, exposure_concept_ids : int or list of int
            Concepts of the outcome and of the exposures (one covariate each).
        **options
            The keyword options of :func:`hphawkes_py.sccs.cdm.cdm_study`.

        Returns
        -------
        SCCSData

        Examples
        --------
        A database without the CDM tables is refused before any work, naming the table:

        >>> import duckdb
        >>> hp.sccs.SCCSData.from_cdm(duckdb.connect(), 4000, [1001])
        Traceback (most recent call last):
        ...
        ValueError: the CDM has no table 'person' in the connection's current schema ...
        """
        from .cdm import cdm_study

        study = cdm_study(connection, outcome_concept_ids, exposure_concept_ids, **options)
        return study.finish(cls.from_eras(study.observation_periods, study.eras, study.outcomes,
                                          **study.from_eras_options))


def _outcome_columns(out):
    """Event counts, times and row ids of the outcomes table, checked."""
    try:
        y = np.asarray(out["y"], dtype=np.float64)
        time = np.asarray(out["time"], dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"outcomes.y and outcomes.time must be numeric ({exc})") from exc
    bad = ~np.isfinite(y) | (y < 0) | (y != np.round(y))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"outcomes.y must be non-negative integer event counts: {int(bad.sum())} bad value(s), "
            f"first at row_id={show(out['row_id'].iloc[i])} (y={y[i].item()!r})"
        )
    bad = ~np.isfinite(time) | (time <= 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"outcomes.time must be finite and > 0 (the offset is log(time)): {int(bad.sum())} bad value(s), "
            f"first at row_id={show(out['row_id'].iloc[i])} (time={time[i].item()!r})"
        )
    row_ids_in = out["row_id"].to_numpy()
    if pd.Index(row_ids_in).has_duplicates:
        dup = pd.Index(row_ids_in)[pd.Index(row_ids_in).duplicated()][0]
        raise ValueError(f"outcomes.row_id must be unique; {show(dup)} appears more than once")
    return y, time, row_ids_in


def _order_strata(out, y, time, row_ids_in, strata_without_events):
    """Rows grouped by stratum: strata sorted by id, rows in their given order inside a stratum
    (stable sort); strata without events dropped, kept or refused. Returns ``(stratum_ids,
    stratum_ptr, y, time, row_ids, dropped)``."""
    strata_codes, stratum_ids = pd.factorize(out["stratum_id"], sort=True)
    stratum_ids = np.asarray(stratum_ids)
    order = np.argsort(strata_codes, kind="stable")
    strata_codes = strata_codes[order]
    y, time, row_ids = y[order], time[order], row_ids_in[order]
    n_s = np.bincount(strata_codes, weights=y, minlength=len(stratum_ids))
    dropped = {"strata_without_events": 0, "rows_in_strata_without_events": 0}
    no_events = n_s == 0
    if no_events.any():
        if strata_without_events == "raise":
            raise ValueError(
                f"{int(no_events.sum())} strata have no events (first: {show(stratum_ids[no_events][0])}); "
                "they do not contribute to the conditional likelihood: use strata_without_events='drop' or 'keep'"
            )
        if strata_without_events == "drop":
            keep_row = ~no_events[strata_codes]
            dropped["strata_without_events"] = int(no_events.sum())
            dropped["rows_in_strata_without_events"] = int((~keep_row).sum())
            newcode = np.cumsum(~no_events) - 1
            strata_codes = newcode[strata_codes[keep_row]]
            stratum_ids = stratum_ids[~no_events]
            y, time, row_ids = y[keep_row], time[keep_row], row_ids[keep_row]
    if y.shape[0] == 0:
        raise ValueError("no rows left: every stratum has zero events")
    n_strata = len(stratum_ids)
    stratum_ptr = np.zeros(n_strata + 1, dtype=np.int64)
    np.cumsum(np.bincount(strata_codes, minlength=n_strata), out=stratum_ptr[1:])
    return stratum_ids, stratum_ptr, y, time, row_ids, dropped


def _covariate_entries(cov, row_ids, row_ids_in, dropped):
    """The covariates table as non-zeros sorted by (column, row): ``(covariate ids, column
    codes, row positions, values)``; explicit zeros are not stored, entries of dropped strata
    are counted in ``dropped``."""
    covariate_ids_all, cov_codes = unique_ids(cov["covariate_id"].to_numpy(), "covariates.covariate_id",
                                              return_inverse=True)
    row_pos = pd.Index(row_ids).get_indexer(cov["row_id"].to_numpy())
    if "value" in cov.columns:
        try:
            values = np.asarray(cov["value"], dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"covariates.value must be numeric ({exc})") from exc
        if not np.isfinite(values).all():
            raise ValueError(f"covariates.value must be finite: {int((~np.isfinite(values)).sum())} bad value(s)")
    else:
        values = np.ones(len(cov))
    unknown = row_pos < 0
    if unknown.any():
        known_all = pd.Index(row_ids_in).get_indexer(cov["row_id"].to_numpy()[unknown]) >= 0
        if not known_all.all():
            bad_id = cov["row_id"].to_numpy()[unknown][~known_all][0]
            raise ValueError(
                f"covariates.row_id {show(bad_id)} is not in outcomes.row_id "
                f"({int((~known_all).sum())} covariate row(s) refer to unknown rows)"
            )
        # rows of dropped no-event strata: their covariates go with them (counted above)
        dropped["covariate_entries_in_dropped_strata"] = int(unknown.sum())
    keep = (~unknown) & (values != 0)
    cov_codes, row_pos, values = cov_codes[keep].astype(np.int64), row_pos[keep].astype(np.int64), values[keep]
    order = np.lexsort((row_pos, cov_codes))
    cov_codes, row_pos, values = cov_codes[order], row_pos[order], values[order]
    if cov_codes.shape[0] > 1:
        dup = (cov_codes[1:] == cov_codes[:-1]) & (row_pos[1:] == row_pos[:-1])
        if dup.any():
            k = int(np.flatnonzero(dup)[0])
            raise ValueError(
                f"covariates has duplicate (row_id, covariate_id) pairs: {int(dup.sum())} duplicate(s), first "
                f"row_id={show(row_ids[row_pos[k]])}, covariate_id={show(covariate_ids_all[cov_codes[k]])}"
            )
    return covariate_ids_all, cov_codes, row_pos, values
