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

from .._validate import check_in, check_int, describe

__all__ = ["SCCSData", "RiskWindow"]

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

_OUTCOME_COLUMNS = ("stratum_id", "row_id", "y", "time")
_COVARIATE_ALIASES = {"covariate_value": "value"}


def _show(v: Any) -> str:
    """repr of a value from a user's table, NumPy scalars shown as plain Python values."""
    return repr(v.item() if isinstance(v, np.generic) else v)


def _lower_columns(df: Any, name: str) -> pd.DataFrame:
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"{name} must be a pandas DataFrame, got {type(df).__name__}")
    out = df.rename(columns={c: str(c).lower() for c in df.columns})
    out = out.rename(columns={k: v for k, v in _COVARIATE_ALIASES.items() if k in out.columns})
    if len(set(out.columns)) != len(out.columns):
        raise ValueError(f"{name} has duplicate column names after lower-casing: {list(df.columns)}")
    return out


def _require(df: pd.DataFrame, cols, name: str) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ValueError(f"{name} must have columns {list(cols)} (case-insensitive); missing {missing}, got {list(df.columns)}")


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
        """
        check_in(strata_without_events, "strata_without_events", ("drop", "keep", "raise"))
        out = _lower_columns(outcomes, "outcomes")
        cov = _lower_columns(covariates, "covariates")
        _require(out, _OUTCOME_COLUMNS, "outcomes")
        _require(cov, ("row_id", "covariate_id"), "covariates")
        if len(out) == 0:
            raise ValueError("outcomes has no rows")
        if out["stratum_id"].isna().any():
            raise ValueError(f"outcomes.stratum_id has {int(out['stratum_id'].isna().sum())} missing value(s)")
        if out["row_id"].isna().any() or cov["row_id"].isna().any() or cov["covariate_id"].isna().any():
            raise ValueError("row_id and covariate_id must not contain missing values")
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
                f"first at row_id={_show(out['row_id'].iloc[i])} (y={y[i].item()!r})"
            )
        bad = ~np.isfinite(time) | (time <= 0)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"outcomes.time must be finite and > 0 (the offset is log(time)): {int(bad.sum())} bad value(s), "
                f"first at row_id={_show(out['row_id'].iloc[i])} (time={time[i].item()!r})"
            )
        row_ids_in = out["row_id"].to_numpy()
        if pd.Index(row_ids_in).has_duplicates:
            dup = pd.Index(row_ids_in)[pd.Index(row_ids_in).duplicated()][0]
            raise ValueError(f"outcomes.row_id must be unique; {_show(dup)} appears more than once")

        # Strata sorted by id; rows keep their given order inside a stratum (stable sort).
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
                    f"{int(no_events.sum())} strata have no events (first: {_show(stratum_ids[no_events][0])}); "
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
                n_s = n_s[~no_events]
        if y.shape[0] == 0:
            raise ValueError("no rows left: every stratum has zero events")
        n_strata = len(stratum_ids)
        stratum_ptr = np.zeros(n_strata + 1, dtype=np.int64)
        np.cumsum(np.bincount(strata_codes, minlength=n_strata), out=stratum_ptr[1:])

        # Covariates -> CSC.
        covariate_ids_all, cov_codes = np.unique(cov["covariate_id"].to_numpy(), return_inverse=True)
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
                    f"covariates.row_id {_show(bad_id)} is not in outcomes.row_id "
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
                    f"row_id={_show(row_ids[row_pos[k]])}, covariate_id={_show(covariate_ids_all[cov_codes[k]])}"
                )
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
                  splines=()):
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
            spline names.
        """
        if not isinstance(merge, (bool, np.bool_)):
            raise TypeError(f"merge must be True or False, got {describe(merge)}")
        obs = _lower_columns(observation_periods, "observation_periods")
        er = _lower_columns(eras, "eras")
        oc = _lower_columns(outcomes, "outcomes")
        _require(obs, ("person_id", "start", "end"), "observation_periods")
        _require(er, ("person_id", "start", "end", "covariate_id"), "eras")
        _require(oc, ("person_id", "day"), "outcomes")
        if len(obs) == 0:
            raise ValueError("observation_periods has no rows")

        def days(s, name):
            a = np.asarray(s)
            if a.size and (not np.issubdtype(a.dtype, np.number) or a.dtype.kind == "b"):
                raise ValueError(f"{name} must be integer days, got dtype {a.dtype}")
            bad = ~np.isfinite(a) | (a != np.round(a)) if a.size else np.zeros(0, bool)
            if bad.any():
                i = int(np.argmax(bad))
                raise ValueError(f"{name} must be integer days: {int(bad.sum())} bad value(s), first at row {i} "
                                 f"({a[i].item()!r})")
            return a.astype(np.int64)

        persons = obs["person_id"].to_numpy()
        dup = pd.Index(persons).duplicated()
        if dup.any():
            i = int(np.argmax(dup))
            raise ValueError(
                f"observation_periods must have one row per person_id (one period per person): {int(dup.sum())} "
                f"duplicate(s), first at row {i} (person_id={_show(persons[i])})"
            )
        os_, oe_ = days(obs["start"], "observation_periods.start"), days(obs["end"], "observation_periods.end")
        if np.any(oe_ < os_):
            i = int(np.argmax(oe_ < os_))
            raise ValueError(
                f"observation_periods: end < start for {int((oe_ < os_).sum())} person(s), first at row {i} "
                f"(person_id={_show(persons[i])}, start={os_[i]}, end={oe_[i]})"
            )
        porder = np.argsort(persons, kind="stable")
        persons, os_, oe_ = persons[porder], os_[porder], oe_[porder]
        pindex = pd.Index(persons)
        ep = pindex.get_indexer(er["person_id"].to_numpy())
        if np.any(ep < 0):
            i = int(np.argmax(ep < 0))
            raise ValueError(f"eras has {int((ep < 0).sum())} row(s) of persons without an observation period, "
                             f"first at row {i} (person_id={_show(er['person_id'].iloc[i])})")
        op = pindex.get_indexer(oc["person_id"].to_numpy())
        if np.any(op < 0):
            i = int(np.argmax(op < 0))
            raise ValueError(f"outcomes has {int((op < 0).sum())} row(s) of persons without an observation period, "
                             f"first at row {i} (person_id={_show(oc['person_id'].iloc[i])})")
        cov_ids = np.unique(er["covariate_id"].to_numpy())
        rules = _ObservationRules(study_start, study_end, naive_period, min_age, max_age, first_outcome_only)
        spl = _SplineRequest(age_knots, season_knots, calendar_knots, day_origin)
        if spl.age is not None and "birth_day" not in obs.columns:
            raise ValueError("age_knots needs a birth_day column in observation_periods (day of birth, same day scale); "
                             f"got columns {list(obs.columns)}")
        need_birth = rules.needs_birth(obs) or spl.age is not None
        birth = days(obs["birth_day"], "observation_periods.birth_day")[porder] if need_birth else None
        persons, os_, oe_, er, oc, ep, op, rule_dropped, birth = rules.apply(
            persons, os_, oe_, birth, er, oc, ep, op, days)
        cov_codes = pd.Index(cov_ids).get_indexer(er["covariate_id"].to_numpy())
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
        era_start, era_end = days(er["start"], "eras.start"), days(er["end"], "eras.end")
        if np.any(era_end < era_start):
            i = int(np.argmax(era_end < era_start))
            raise ValueError(
                f"eras: end < start in {int((era_end < era_start).sum())} row(s), first at row {i} "
                f"(person_id={_show(er['person_id'].iloc[i])}, start={era_start[i]}, end={era_end[i]})"
            )
        ep = ep.astype(np.int64)
        es = era_start + rs[cov_codes]
        ee = era_end + re_[cov_codes]
        window_labels = []
        if windows is not None:
            ep, es, ee, cov_ids, cov_codes, window_labels = _expand_windows(
                windows, risk_windows, cov_ids, cov_codes, ep, era_start, era_end, es, ee
            )
        od = days(oc["day"], "outcomes.day")
        n_exposure = len(cov_ids)
        cov_codes = cov_codes.astype(np.int64)
        bins = None
        if spl.any:
            inside_o = (od >= os_[op]) & (od <= oe_[op])
            bins = spl.bins(persons, os_, oe_, birth, op[inside_o], od[inside_o], n_exposure)
            ep, es, ee = (np.concatenate([ep, bins.era_person]), np.concatenate([es, bins.era_start]),
                          np.concatenate([ee, bins.era_end]))
            cov_codes = np.concatenate([cov_codes, bins.era_code])
        design = build_interval_design(
            os_, oe_, ep, es, ee, cov_codes, n_exposure + (bins.n_codes if bins is not None else 0), merge=merge
        )
        if bins is not None:
            cov_ids = bins.to_spline_columns(design, cov_ids)
        if window_labels:
            used = np.bincount(design.nnz_col, minlength=len(cov_ids)) > 0
            pos = pd.Index(cov_ids).get_indexer(pd.Index(window_labels))
            empty = [window_labels[k] for k, i in enumerate(pos) if not used[i]]
            if empty:
                raise ValueError(f"windows: window(s) {empty[:10]} have no person-time in any observation period")
        # outcomes -> interval rows
        inside = (od >= os_[op]) & (od <= oe_[op])
        y_row = design.locate(op[inside], od[inside])
        y = np.bincount(y_row, minlength=design.n_rows).astype(np.float64)
        dropped = {
            "eras_outside_observation": design.eras_outside,
            "outcomes_outside_observation": int((~inside).sum()),
            **rule_dropped,
        }
        return design.to_data(
            y=y, stratum_ids=persons, covariate_ids=cov_ids, dropped=dropped, drop_label="persons_without_outcomes",
            splines=bins.terms if bins is not None else (),
        )


def _check_knots(value, name, *, minimum):
    """None, a knot count (int >= minimum) or an increasing array of finite knots."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a number of knots or an array of knots, got {describe(value)}")
    if isinstance(value, (int, np.integer)):
        return check_int(value, name, minimum=minimum)
    try:
        k = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number of knots or an array of knots, got {describe(value)}") from None
    if k.ndim != 1 or k.shape[0] < minimum or not np.isfinite(k).all() or np.any(np.diff(k) <= 0):
        raise ValueError(f"{name} must be at least {minimum} finite, strictly increasing knots, got "
                         f"{k.tolist() if k.size < 20 else describe(value)}")
    return k


def _quantile_knots(values, n, lo, hi, name):
    """n knots at the 0..1 quantiles of ``values``, the ends moved out to ``lo``/``hi``."""
    if values.size == 0:
        raise ValueError(f"{name}: no outcome inside the observation periods to place the knots at")
    k = np.quantile(values.astype(np.float64), np.linspace(0.0, 1.0, n))
    k[0], k[-1] = min(k[0], lo), max(k[-1], hi)
    k = np.unique(k)
    if k.shape[0] < 2:
        raise ValueError(f"{name}: the person-time spans a single day ({lo}); give explicit knots")
    return k


class _SplineBins:
    """Pseudo-eras of the month-of-age and calendar-month bins, and their basis values."""

    def __init__(self):
        self.n_codes = 0
        self.terms = ()
        self.age_x = self.month = None

    def to_spline_columns(self, design, cov_ids):
        """Replace the bin indicators of the design's non-zeros by the spline basis values."""
        n_exp = self.n_exposure
        col = design.nnz_col
        is_bin = col >= n_exp
        rows, codes = design.nnz_row[is_bin], col[is_bin] - n_exp
        keep_row, keep_col = design.nnz_row[~is_bin], col[~is_bin]
        new_rows, new_cols, new_vals = [keep_row], [keep_col], [np.ones(keep_row.shape[0])]
        ids = list(np.asarray(cov_ids).tolist())
        next_col = n_exp
        for term, offset, n_bins, x in self.specs:
            sel = (codes >= offset) & (codes < offset + n_bins)
            r, b = rows[sel], codes[sel] - offset
            B = term.basis(x)  # (n_bins, n_coef)
            vals = B[b]  # (n_nnz_rows, n_coef)
            rr, cc = np.nonzero(vals)
            new_rows.append(r[rr])
            new_cols.append(next_col + cc)
            new_vals.append(vals[rr, cc])
            next_col += B.shape[1]
            ids.extend(term.covariate_ids)
        design.nnz_row = np.concatenate(new_rows)
        design.nnz_col = np.concatenate(new_cols).astype(np.int64)
        design.nnz_val = np.concatenate(new_vals)
        clash = set(np.asarray(cov_ids).tolist()) & set(self.spline_ids)
        if clash:
            raise ValueError(f"eras: covariate id(s) {sorted(map(str, clash))[:10]} clash with the spline covariate names; "
                             "rename them")
        if all(isinstance(v, str) for v in ids):
            return np.asarray(ids, dtype=str)
        return np.asarray(ids, dtype=object)


class _SplineRequest:
    """The age/season/calendar spline options of :meth:`SCCSData.from_eras`, checked."""

    def __init__(self, age_knots, season_knots, calendar_knots, day_origin):
        self.age = _check_knots(age_knots, "age_knots", minimum=2)
        self.season = _check_knots(season_knots, "season_knots", minimum=3)
        self.calendar = _check_knots(calendar_knots, "calendar_knots", minimum=2)
        if isinstance(self.season, np.ndarray) and (self.season[0] < 0 or self.season[-1] >= 12):
            raise ValueError(f"season_knots must be months of the year in [0, 12), got {self.season.tolist()}")
        try:
            origin = np.datetime64(day_origin, "D")
        except (TypeError, ValueError):
            raise ValueError(f"day_origin must be a calendar date such as '1970-01-01', got {describe(day_origin)}") from None
        if np.isnat(origin):
            raise ValueError(f"day_origin must be a calendar date such as '1970-01-01', got {describe(day_origin)}")
        self.origin = int(origin.astype(np.int64))  # days since 1970-01-01

    @property
    def any(self):
        return self.age is not None or self.season is not None or self.calendar is not None

    def _month_of(self, day):
        return (day + self.origin).astype("datetime64[D]").astype("datetime64[M]").astype(np.int64)

    def _month_start(self, month):
        return month.astype("datetime64[M]").astype("datetime64[D]").astype(np.int64) - self.origin

    def bins(self, persons, os_, oe_, birth, out_person, out_day, n_exposure):
        from .splines import SplineTerm, age_bin_of, age_bin_start

        res = _SplineBins()
        res.n_exposure = n_exposure
        eras = []  # (person, start, end, local code)
        specs = []
        terms = []
        offset = 0
        P = np.arange(persons.shape[0], dtype=np.int64)
        if self.age is not None:
            a0, a1 = os_ - birth, oe_ - birth
            if isinstance(self.age, np.ndarray):
                bad = (a0 < self.age[0]) | (a1 > self.age[-1])
                if bad.any():
                    i = int(np.argmax(bad))
                    raise ValueError(
                        f"age_knots: ages under observation must lie within the knots [{self.age[0]:g}, "
                        f"{self.age[-1]:g}] days; {int(bad.sum())} person(s) outside, first person_id="
                        f"{_show(persons[i])} (ages {a0[i]}..{a1[i]} days)")
                knots = self.age
            else:
                knots = _quantile_knots(out_day - birth[out_person], self.age, int(a0.min()), int(a1.max()), "age_knots")
            k0, k1 = age_bin_of(a0), age_bin_of(a1)
            kmin = int(k0.min())
            n = k1 - k0 + 1
            person = np.repeat(P, n)
            k = np.repeat(k0, n) + (np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n))
            eras.append((person, birth[person] + age_bin_start(k), birth[person] + age_bin_start(k + 1) - 1, k - kmin))
            kk = np.arange(kmin, int(k1.max()) + 1)
            x = np.clip((age_bin_start(kk) + age_bin_start(kk + 1) - 1) / 2.0, knots[0], knots[-1])
            term = SplineTerm("age", tuple(f"age_{i + 1}" for i in range(knots.shape[0] + 1)), "bspline", knots,
                              "days of age")
            specs.append((term, offset, kk.shape[0], x))
            terms.append(term)
            offset += kk.shape[0]
        if self.season is not None or self.calendar is not None:
            m0, m1 = self._month_of(os_), self._month_of(oe_)
            mmin = int(m0.min())
            n = m1 - m0 + 1
            person = np.repeat(P, n)
            m = np.repeat(m0, n) + (np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n))
            eras.append((person, self._month_start(m), self._month_start(m + 1) - 1, m - mmin))
            mm = np.arange(mmin, int(m1.max()) + 1)
            n_months = mm.shape[0]
            if self.season is not None:
                if isinstance(self.season, np.ndarray):
                    knots = np.concatenate([self.season, [self.season[0] + 12.0]])
                else:
                    knots = np.linspace(0.0, 12.0, self.season + 1)
                term = SplineTerm("season", tuple(f"season_{i + 1}" for i in range(knots.shape[0] - 2)), "cyclic",
                                  knots, "month of the year")
                specs.append((term, offset, n_months, np.mod(mm, 12) + 0.5))
                terms.append(term)
            if self.calendar is not None:
                d0, d1 = self._month_start(mm), self._month_start(mm + 1) - 1
                if isinstance(self.calendar, np.ndarray):
                    bad = (os_ < self.calendar[0]) | (oe_ > self.calendar[-1])
                    if bad.any():
                        i = int(np.argmax(bad))
                        raise ValueError(
                            f"calendar_knots: observation days must lie within the knots [{self.calendar[0]:g}, "
                            f"{self.calendar[-1]:g}]; {int(bad.sum())} person(s) outside, first person_id="
                            f"{_show(persons[i])} (days {os_[i]}..{oe_[i]})")
                    knots = self.calendar
                else:
                    knots = _quantile_knots(out_day, self.calendar, int(os_.min()), int(oe_.max()), "calendar_knots")
                term = SplineTerm("calendar", tuple(f"calendar_{i + 1}" for i in range(knots.shape[0] + 1)), "bspline",
                                  knots, "day")
                specs.append((term, offset, n_months, np.clip((d0 + d1) / 2.0, knots[0], knots[-1])))
                terms.append(term)
            offset += n_months  # season and calendar time share the month bins
        res.specs = specs
        res.terms = tuple(terms)
        res.spline_ids = [c for t in terms for c in t.covariate_ids]
        res.n_codes = offset
        # local codes -> global codes after the exposures
        base = 0
        ps, ss, es_, cs = [], [], [], []
        for (person, s, e, local), width in zip(eras, _bin_widths(specs)):
            ps.append(person)
            ss.append(s)
            es_.append(e)
            cs.append(n_exposure + base + local)
            base += width
        res.era_person = np.concatenate(ps)
        res.era_start = np.concatenate(ss)
        res.era_end = np.concatenate(es_)
        res.era_code = np.concatenate(cs).astype(np.int64)
        return res


def _bin_widths(specs):
    """Number of bin codes per pseudo-era family: age bins, then (shared) month bins."""
    widths, seen = [], set()
    for term, offset, n_bins, _ in specs:
        if offset not in seen:
            seen.add(offset)
            widths.append(n_bins)
    return widths


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
        if self.min_age is None and self.max_age is None:
            return False
        if "birth_day" not in obs.columns:
            raise ValueError("min_age/max_age need a birth_day column in observation_periods (day of birth, "
                             f"same day scale); got columns {list(obs.columns)}")
        return True

    def apply(self, persons, os_, oe_, birth, er, oc, ep, op, days):
        dropped = {}
        if self.first_outcome_only and len(oc):
            od = days(oc["day"], "outcomes.day")
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


class _IntervalDesign:
    """Intermediate result of :func:`build_interval_design` (rows before outcomes are known)."""

    def __init__(self, row_person, row_time, nnz_row, nnz_col, keys, key_group, span, n_persons, eras_outside):
        self.row_person = row_person  # int64, rows sorted by person
        self.row_time = row_time
        self.nnz_row = nnz_row
        self.nnz_col = nnz_col  # sorted by (row, col)
        self.keys = keys  # sorted interval-start keys (person * span + day)
        self.key_group = key_group  # row of each raw interval
        self.span = span
        self.n_persons = n_persons
        self.eras_outside = eras_outside

    @property
    def n_rows(self):
        return int(self.row_person.shape[0])

    def locate(self, person, day):
        """Row of each (person index, day) that lies inside the person's observation period."""
        k = np.searchsorted(self.keys, person * self.span + (day - self._day0), side="right") - 1
        return self.key_group[k]

    nnz_val = None  # values of the non-zeros (None: all 1)

    def to_data(self, *, y, stratum_ids, covariate_ids, dropped, drop_label, splines=()):
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
        return SCCSData._assemble(
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
    the intervals of a person with the same set become one row (times summed).

    Pattern identity for merging uses two independent random 64-bit sums over the set
    (wrap-around arithmetic); two different sets collide with probability about 2**-128.
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
    else:
        group = np.arange(n_int, dtype=np.int64)
        row_time = int_len.astype(np.float64)
        row_person = int_person
        nnz_row, nnz_col = nnz_int, nnz_cov
    d = _IntervalDesign(row_person, row_time, nnz_row, nnz_col, interval_start_keys, group, span, P, eras_outside)
    d._day0 = day0
    return d
