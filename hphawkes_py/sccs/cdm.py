"""Self-controlled case series data straight from an OMOP CDM database.

:meth:`SCCSData.from_cdm <hphawkes_py.sccs.SCCSData.from_cdm>` (through :func:`cdm_study`) selects the
cases of a study in the database and builds the design with
:meth:`~hphawkes_py.sccs.SCCSData.from_eras`. The study follows OHDSI SelfControlledCaseSeries'
``getDbSccsData`` (``inst/sql/SelectOutcomes.sql``, ``CreateCases.sql``, ``CreateEras.sql``):

1. **Outcome.** The records of ``condition_occurrence`` (or ``condition_era``) whose concept is
   one of ``outcome_concept_ids`` or, with ``include_descendants``, one of their descendants in
   ``concept_ancestor``. All these concepts together are *one* outcome, and the records of one
   person on one day are one event (SelfControlledCaseSeries keeps distinct
   (case, outcome, day) triples).
2. **Cases.** The observation periods (``observation_period``) with at least one outcome event
   inside them, with the person's date of birth from ``person.year_of_birth``,
   ``month_of_birth`` and ``day_of_birth`` (a missing month or day is 1, as ``CreateCases.sql``)
   and, if asked, only persons of some ``person.gender_concept_id``.
3. **Exposures.** The eras in ``drug_era`` (SelfControlledCaseSeries' default exposure table;
   ``drug_exposure`` on request) of the cases' persons whose concept is one of
   ``exposure_concept_ids`` or a descendant; each era carries the exposure concept id that was
   asked for, so a class concept rolls up its ingredients into one covariate.

Every join and filter runs in the database with bound parameters; only the cases' rows come
back. Dates become integer days since ``day_origin`` and the design is ``from_eras`` of those
tables, so ``from_cdm`` and ``from_eras`` on the same eras give the same study.
"""
from __future__ import annotations

import datetime as _dt
import os
import re
import sys
from dataclasses import dataclass, replace
from typing import Any, Mapping

import numpy as np
import pandas as pd

from .._validate import check_bool, check_in, check_int, describe
from ._tables import show

__all__ = ["cdm_study", "CDMStudy"]


@dataclass(frozen=True)
class _EventTable:
    """Where a CDM table keeps the columns the study reads."""

    table: str
    id_column: str
    concept_column: str
    start_column: str
    end_column: str | None

    @property
    def columns(self) -> tuple:
        cols = (self.id_column, "person_id", self.concept_column, self.start_column)
        return cols + ((self.end_column,) if self.end_column else ())


OUTCOME_TABLES = {
    "condition_occurrence": _EventTable("condition_occurrence", "condition_occurrence_id", "condition_concept_id",
                                        "condition_start_date", None),
    "condition_era": _EventTable("condition_era", "condition_era_id", "condition_concept_id",
                                 "condition_era_start_date", None),
}
EXPOSURE_TABLES = {
    "drug_era": _EventTable("drug_era", "drug_era_id", "drug_concept_id", "drug_era_start_date", "drug_era_end_date"),
    "drug_exposure": _EventTable("drug_exposure", "drug_exposure_id", "drug_concept_id", "drug_exposure_start_date",
                                 "drug_exposure_end_date"),
}
_PERSON = ("person_id", "gender_concept_id", "year_of_birth", "month_of_birth", "day_of_birth")
_PERIOD = ("observation_period_id", "person_id", "observation_period_start_date", "observation_period_end_date")
_SCHEMA = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]*(\.[A-Za-z_][A-Za-z0-9_$]*)?$")


def cdm_study(
    connection: Any,
    outcome_concept_ids: Any,
    exposure_concept_ids: Any,
    *,
    negative_control_concept_ids: Any = None,
    cdm_schema: str | None = None,
    include_descendants: bool = True,
    outcome_table: str = "condition_occurrence",
    exposure_table: str = "drug_era",
    strata: str = "person",
    gender_concept_ids: Any = None,
    first_outcome_only: bool = False,
    study_start: Any = None,
    study_end: Any = None,
    naive_period: int = 0,
    min_age: int | None = None,
    max_age: int | None = None,
    risk_start: int = 0,
    risk_end: int = 0,
    risk_windows: Mapping[Any, tuple[int, int]] | None = None,
    windows: Mapping[Any, Any] | None = None,
    age_knots: Any = None,
    season_knots: Any = None,
    calendar_knots: Any = None,
    day_origin: Any = "1970-01-01",
    merge: bool = True,
) -> "CDMStudy":
    """Select the cases of an outcome and their exposures in an OMOP CDM database.

    The person-level tables this returns are what :meth:`SCCSData.from_cdm
    <hphawkes_py.sccs.SCCSData.from_cdm>` passes to :meth:`~hphawkes_py.sccs.SCCSData.from_eras`
    (``SCCSData.from_cdm(connection, ...)`` takes the same arguments and is the usual entry point).

    Parameters
    ----------
    connection : duckdb.DuckDBPyConnection, sqlalchemy Engine or Connection, or str
        The database. A string is a URL: ``"duckdb:///path/to/cdm.duckdb"`` opens that DuckDB
        file read-only with the ``duckdb`` package (no SQLAlchemy dialect needed), any other
        URL (``"postgresql+psycopg://user@host/db"``) goes to ``sqlalchemy.create_engine``.
        An engine or URL is connected for this call only; a given connection is used as is.
    outcome_concept_ids : int or list of int
        Condition concepts that define the one outcome (with their descendants, see
        ``include_descendants``).
    exposure_concept_ids : int or list of int
        Exposure concepts; each is one covariate of the design, whose id is this concept id
        (descendant concepts roll up into the id asked for; an era of a concept that descends
        from two ids asked for counts for both).
    negative_control_concept_ids : int or list of int, optional
        Negative-control exposures (believed not to cause the outcome, for
        :class:`~hphawkes_py.sccs.EmpiricalNull`): more covariates of the same design, read
        like the exposures. A list that shares a concept with ``exposure_concept_ids``
        (directly or, with ``include_descendants``, through a common descendant) is an error.
    cdm_schema : str, optional
        Schema of the CDM tables (``"cdm"`` or ``"catalog.schema"``); default the connection's
        current schema.
    include_descendants : bool
        Also take the descendants of every concept id through ``concept_ancestor``
        (``ancestor_concept_id -> descendant_concept_id``); default True.
    outcome_table : {"condition_occurrence", "condition_era"}
        Table of the outcome records (start dates are the event days).
    exposure_table : {"drug_era", "drug_exposure"}
        Table of the exposure eras; ``drug_era`` is SelfControlledCaseSeries' default.
    strata : {"person", "observation_period"}
        Strata of the design and their ``stratum_ids``: persons (``person_id``; a person with
        outcomes in two observation periods is then an error) or, as SelfControlledCaseSeries'
        cases, observation periods (``observation_period_id``).
    gender_concept_ids : int or list of int, optional
        Only persons with one of these ``person.gender_concept_id`` (8507 male, 8532 female);
        the case periods left out are counted in ``dropped["cases_of_other_genders"]``.
    first_outcome_only : bool
        Keep each person's first outcome day only (over all the person's records, in or out
        of observation, as SelfControlledCaseSeries' ``firstOutcomeOnly``); the later days are
        counted in ``dropped["later_outcomes"]``.
    study_start, study_end : str, datetime.date or numpy.datetime64, optional
        First and last calendar day of the study period.
    naive_period, min_age, max_age : int, optional
        Days, as :meth:`SCCSData.from_eras`: the first ``naive_period`` days of each
        observation period are left out; observation is clipped to ages ``min_age..max_age``
        (days since the date of birth).
    risk_start, risk_end, risk_windows, windows, age_knots, season_knots, calendar_knots, merge
        As :meth:`SCCSData.from_eras` (``windows`` and ``risk_windows`` are keyed by exposure
        concept id).
    day_origin : str or numpy.datetime64
        Calendar date of day 0 of the design (default 1970-01-01).

    Returns
    -------
    SCCSData
        ``SCCSData.from_eras`` of the cases' observation periods, exposure eras and outcome
        days. Besides its ``dropped`` counts: ``same_day_outcome_records`` (records merged into
        one event per person and day) and ``outcomes_outside_observation`` includes outcome
        days outside every observation period of their person (those persons are not cases).

    Raises
    ------
    TypeError
        A connection of another type, non-integer concept ids, dates given as numbers.
    ValueError
        Concept ids that are not concepts or match no record of the outcome/exposure table;
        an outcome with no event inside an observation period, an exposure with no
        person-time at risk among the cases; ids in both concept lists; a CDM without a
        table or column the study reads (naming both); missing dates, eras or observation
        periods that end before they start, invalid dates of birth, case persons absent from
        ``person`` (naming the table, column and first offending row id).
    ImportError
        ``duckdb`` or ``sqlalchemy`` absent for a connection string that needs it.

    Examples
    --------
    A CDM of two persons in DuckDB (``tests/cdm_fixture.py`` builds larger ones): the outcome is
    condition 4000, the exposure drug 1001 with its risk window of the era plus 30 days.

    >>> import duckdb
    >>> con = duckdb.connect()
    >>> _ = con.execute('''
    ...   CREATE TABLE person AS SELECT * FROM (VALUES (1, 8507, 1960, 5, 17), (2, 8532, 1971, NULL, NULL))
    ...     t(person_id, gender_concept_id, year_of_birth, month_of_birth, day_of_birth);
    ...   CREATE TABLE observation_period AS SELECT * FROM (VALUES
    ...     (11, 1, DATE '2005-01-01', DATE '2005-12-31'), (21, 2, DATE '2005-01-01', DATE '2005-12-31'))
    ...     t(observation_period_id, person_id, observation_period_start_date, observation_period_end_date);
    ...   CREATE TABLE concept AS SELECT * FROM (VALUES (1001), (4000)) t(concept_id);
    ...   CREATE TABLE concept_ancestor AS SELECT * FROM (VALUES (1001, 1001), (4000, 4000))
    ...     t(ancestor_concept_id, descendant_concept_id);
    ...   CREATE TABLE drug_era AS SELECT * FROM (VALUES (1, 1, 1001, DATE '2005-03-01', DATE '2005-03-30'))
    ...     t(drug_era_id, person_id, drug_concept_id, drug_era_start_date, drug_era_end_date);
    ...   CREATE TABLE condition_occurrence AS SELECT * FROM (VALUES
    ...     (1, 1, 4000, DATE '2005-04-10'), (2, 2, 4000, DATE '2005-08-01'), (3, 2, 4000, DATE '2005-08-01'))
    ...     t(condition_occurrence_id, person_id, condition_concept_id, condition_start_date);
    ... ''')
    >>> data = hp.sccs.SCCSData.from_cdm(con, outcome_concept_ids=4000, exposure_concept_ids=[1001], risk_end=30)
    >>> data
    SCCSData(n_strata=2, n_rows=3, n_covariates=1, nnz=1, events=2, binary=True, dropped: same_day_outcome_records=1)
    >>> data.stratum_ids.tolist(), data.time.tolist(), data.y.tolist()
    ([1, 2], [305.0, 60.0, 365.0], [0.0, 1.0, 1.0])

    A concept id without records is named:

    >>> hp.sccs.SCCSData.from_cdm(con, 4000, [1001, 4001])
    Traceback (most recent call last):
    ...
    ValueError: exposure_concept_ids: concept id 4001 is not in the concept table ...
    """
    out_ids = _concept_ids(outcome_concept_ids, "outcome_concept_ids")
    exp_ids = _concept_ids(exposure_concept_ids, "exposure_concept_ids")
    nc_ids = ([] if negative_control_concept_ids is None
              else _concept_ids(negative_control_concept_ids, "negative_control_concept_ids"))
    for ids, name in ((exp_ids, "exposure_concept_ids"), (nc_ids, "negative_control_concept_ids")):
        both = sorted(set(out_ids) & set(ids))
        if both:
            raise ValueError(f"concept id(s) {both[:10]} are in both outcome_concept_ids and {name}; "
                             "an exposure cannot be its own outcome")
    both = sorted(set(exp_ids) & set(nc_ids))
    if both:
        raise ValueError(f"concept id(s) {both[:10]} are in both exposure_concept_ids and "
                         "negative_control_concept_ids; a negative control is an exposure believed not to cause "
                         "the outcome, not one of interest")
    genders = None if gender_concept_ids is None else _concept_ids(gender_concept_ids, "gender_concept_ids")
    include_descendants = check_bool(include_descendants, "include_descendants")
    first_outcome_only = check_bool(first_outcome_only, "first_outcome_only")
    check_bool(merge, "merge")
    check_in(outcome_table, "outcome_table", tuple(OUTCOME_TABLES))
    check_in(exposure_table, "exposure_table", tuple(EXPOSURE_TABLES))
    check_in(strata, "strata", ("person", "observation_period"))
    if cdm_schema is not None and (not isinstance(cdm_schema, str) or not _SCHEMA.match(cdm_schema)):
        raise ValueError(f"cdm_schema must be a schema name such as 'cdm' or 'catalog.schema' (letters, digits, "
                         f"underscores), got {describe(cdm_schema)}")
    origin = _origin(day_origin)
    start_day = None if study_start is None else _day_of(study_start, "study_start", origin)
    end_day = None if study_end is None else _day_of(study_end, "study_end", origin)
    for name, value in (("risk_start", risk_start), ("risk_end", risk_end)):
        check_int(value, name)
    check_int(naive_period, "naive_period", minimum=0)
    for name, value in (("min_age", min_age), ("max_age", max_age)):
        if value is not None:
            check_int(value, name, minimum=0)
    if start_day is not None and end_day is not None and end_day < start_day:
        raise ValueError(f"study_end ({study_end}) must not be before study_start ({study_start})")
    if min_age is not None and max_age is not None and max_age < min_age:
        raise ValueError(f"max_age ({max_age}) must be >= min_age ({min_age})")
    needs_age = min_age is not None or max_age is not None or age_knots is not None
    study = _Study(out_ids, exp_ids, nc_ids, genders, cdm_schema, include_descendants, OUTCOME_TABLES[outcome_table],
                   EXPOSURE_TABLES[exposure_table], first_outcome_only)
    with _Database(connection) as db:
        study.check_schema(db)
        study.check_concepts(db)
        study.check_controls(db)
        counts = study.counts(db)
        cases = study.cases(db)
        outcomes = study.outcomes(db)
        eras = study.eras(db)
    obs, era_table, outcome_table_ = _person_tables(cases, outcomes, eras, strata, origin, needs_age)
    _refuse_unexposed(study, era_table)
    options = dict(risk_start=risk_start, risk_end=risk_end, risk_windows=risk_windows, windows=windows,
                   study_start=start_day, study_end=end_day, naive_period=naive_period, min_age=min_age,
                   max_age=max_age, first_outcome_only=False, age_knots=age_knots, season_knots=season_knots,
                   calendar_knots=calendar_knots, day_origin=day_origin, merge=merge)
    return CDMStudy(obs, era_table, outcome_table_, options, study, counts, first_outcome_only, genders, windows)


@dataclass(frozen=True)
class CDMStudy:
    """The cases of a CDM study as person-level tables (:func:`cdm_study`).

    Parameters
    ----------
    observation_periods, eras, outcomes : DataFrame
        The tables of :meth:`~hphawkes_py.sccs.SCCSData.from_eras` (days since ``day_origin``).
    from_eras_options : dict
        The keyword arguments of ``from_eras`` that give the study asked for.
    study, counts, first_outcome_only, genders, windows :
        What :meth:`finish` needs to check the design and complete its ``dropped`` counts.

    Examples
    --------
    See :meth:`SCCSData.from_cdm <hphawkes_py.sccs.SCCSData.from_cdm>`.
    """

    observation_periods: pd.DataFrame
    eras: pd.DataFrame
    outcomes: pd.DataFrame
    from_eras_options: dict
    study: Any
    counts: dict
    first_outcome_only: bool
    genders: Any
    windows: Any

    def finish(self, data):
        """The design ``data`` built by ``from_eras`` from these tables, checked (every exposure
        has person-time at risk) and with the records the database query left out added to
        its ``dropped`` counts.

        Parameters
        ----------
        data : SCCSData
            ``SCCSData.from_eras(self.observation_periods, self.eras, self.outcomes,
            **self.from_eras_options)``.

        Returns
        -------
        SCCSData

        Examples
        --------
        See :meth:`SCCSData.from_cdm <hphawkes_py.sccs.SCCSData.from_cdm>`.
        """
        _refuse_no_person_time(data, self.study, self.windows)
        counts = self.counts
        dropped = dict(data.dropped)
        dropped["outcomes_outside_observation"] = dropped.get("outcomes_outside_observation", 0) + counts["outside"]
        dropped["same_day_outcome_records"] = counts["records"] - counts["days"]
        if self.first_outcome_only:
            dropped["later_outcomes"] = counts["days"] - counts["kept"]
        if self.genders is not None:
            dropped["cases_of_other_genders"] = counts["case_periods"] - counts["cases"]
        return replace(data, dropped=dropped)


# --------------------------------------------------------------------------- arguments
def _concept_ids(value, name) -> list:
    """A non-empty list of distinct integer concept ids (one integer is a list of one)."""
    items = [value] if isinstance(value, (int, np.integer)) else value
    if isinstance(items, (str, bytes, Mapping)) or not hasattr(items, "__iter__"):
        raise TypeError(f"{name} must be an integer concept id or a list of them, got {describe(value)}")
    items = list(items)
    if not items:
        raise ValueError(f"{name} must name at least one concept id, got an empty list")
    for i, v in enumerate(items):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"{name} must hold integer concept ids; item {i} is {describe(v)}")
    ids = [int(v) for v in items]
    seen = set()
    for v in ids:
        if v in seen:
            raise ValueError(f"{name} has concept id {v} more than once")
        seen.add(v)
    return ids


def _origin(day_origin) -> np.datetime64:
    try:
        return np.datetime64(day_origin, "D")
    except (TypeError, ValueError) as exc:
        raise ValueError(f"day_origin must be a date such as '1970-01-01', got {describe(day_origin)}") from exc


def _day_of(value, name, origin) -> int:
    """A calendar date (string, date, datetime64, Timestamp) as days since ``origin``."""
    if isinstance(value, (bool, np.bool_, int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a calendar date ('2005-01-01', datetime.date), not a number: "
                        f"got {describe(value)}")
    try:
        day = np.datetime64(pd.Timestamp(value).date(), "D")
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a calendar date such as '2005-01-01', got {describe(value)}") from exc
    return int((day - origin).astype(np.int64))


# --------------------------------------------------------------------------- database access
def _imported(module: str):
    """The module if the caller already imported it (an object of its types can exist only then)."""
    return sys.modules.get(module)


def _need(module: str, why: str):
    try:
        return __import__(module)
    except ImportError as exc:
        raise ImportError(f"{why} needs the {module!r} package: pip install 'hphawkes_py[cdm]'") from exc


class _Database:
    """One open connection for the queries of :func:`from_cdm`: ``rows(sql, params)`` with
    ``:name`` parameters and ``columns(schema, tables)`` from the catalogue."""

    def __init__(self, connection):
        self._owned = []
        duckdb, sa = _imported("duckdb"), _imported("sqlalchemy")
        if isinstance(connection, str):
            if connection.startswith("duckdb:"):
                duckdb = _need("duckdb", "a duckdb:/// connection string")
                path = _duckdb_path(connection)
                self._duck = duckdb.connect(path, read_only=True)
                self._owned.append(self._duck.close)
                self._sa = None
            else:
                sa = _need("sqlalchemy", "a database URL")
                try:
                    engine = sa.create_engine(connection)
                except sa.exc.ArgumentError as exc:
                    raise ValueError(f"connection {connection!r} is not a database URL such as "
                                     f"'postgresql+psycopg://user@host/db' or 'duckdb:///cdm.duckdb' ({exc})") from exc
                self._open_engine(engine, dispose=True)
            return
        if duckdb is not None and isinstance(connection, duckdb.DuckDBPyConnection):
            self._duck, self._sa = connection, None
        elif sa is not None and isinstance(connection, sa.engine.Engine):
            self._open_engine(connection, dispose=False)
        elif sa is not None and isinstance(connection, sa.engine.Connection):
            self._duck, self._sa = None, connection
        else:
            raise TypeError("connection must be a duckdb connection, a SQLAlchemy Engine or Connection, or a URL "
                            f"string ('duckdb:///cdm.duckdb', 'postgresql+psycopg://...'), got {describe(connection)}")

    def _open_engine(self, engine, *, dispose):
        self._duck, self._sa = None, engine.connect()
        self._owned.append(self._sa.close)
        if dispose:
            self._owned.append(engine.dispose)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for close in self._owned:
            close()
        return False

    def rows(self, sql: str, params: Mapping[str, Any]) -> list:
        if self._duck is not None:
            # DuckDB names its parameters $name
            return self._duck.execute(re.sub(r":([a-z_][a-z0-9_]*)", r"$\1", sql), dict(params)).fetchall()
        import sqlalchemy as sa

        return list(self._sa.execute(sa.text(sql), dict(params)).fetchall())

    def columns(self, schema: str | None, tables) -> dict:
        """Lower-case column names of each of ``tables`` that exists (absent tables are absent keys)."""
        found: dict = {}
        if self._duck is not None:
            params = {f"t{i}": t for i, t in enumerate(tables)}
            where = "table_schema = current_schema() AND table_catalog = current_database()"
            if schema is not None:
                parts = schema.split(".")
                params["schema"] = parts[-1]
                where = "table_schema = :schema"
                if len(parts) == 2:
                    params["catalog"] = parts[0]
                    where += " AND table_catalog = :catalog"
            sql = ("SELECT LOWER(table_name), LOWER(column_name) FROM information_schema.columns WHERE "
                   f"{where} AND LOWER(table_name) IN ({', '.join(':' + k for k in params if k.startswith('t'))})")
            for table, column in self.rows(sql, params):
                found.setdefault(table, set()).add(column)
            return found
        import sqlalchemy as sa

        inspector = sa.inspect(self._sa)
        if schema is not None and schema.lower() not in {n.lower() for n in inspector.get_schema_names()}:
            return found
        names = {n.lower(): n for n in inspector.get_table_names(schema=schema)}
        for t in tables:
            if t in names:
                found[t] = {c["name"].lower() for c in inspector.get_columns(names[t], schema=schema)}
        return found


def _duckdb_path(url: str) -> str:
    """The file of a ``duckdb:///relative`` or ``duckdb:////absolute`` URL (SQLAlchemy's form)."""
    if not url.startswith("duckdb:///") or len(url) == len("duckdb:///"):
        raise ValueError(f"a DuckDB connection string must name the database file, 'duckdb:///path/to/cdm.duckdb', "
                         f"got {url!r}")
    path = url[len("duckdb:///"):]
    if not os.path.exists(path):
        raise ValueError(f"connection {url!r}: there is no DuckDB database file at {path!r}")
    return path


# --------------------------------------------------------------------------- the study's queries
class _Study:
    """The SQL of one study (concept sets, outcome days, case periods, eras) and its checks."""

    def __init__(self, out_ids, exp_ids, nc_ids, genders, schema, descendants, outcome, exposure, first_only):
        self.out_ids, self.genders = out_ids, genders
        # negative controls are more exposures of the same design; errors name their argument
        self.exp_ids = exp_ids + nc_ids
        self.n_interest = len(exp_ids)
        self.schema, self.descendants, self.first_only = schema, descendants, first_only
        self.outcome, self.exposure = outcome, exposure
        self.params = {f"o{i}": v for i, v in enumerate(out_ids)}
        self.params.update({f"e{i}": v for i, v in enumerate(self.exp_ids)})
        self.params.update({f"g{i}": v for i, v in enumerate(genders or ())})

    def t(self, table: str) -> str:
        return f"{self.schema}.{table}" if self.schema else table

    def _list(self, prefix: str, n: int) -> str:
        return ", ".join(f":{prefix}{i}" for i in range(n))

    def _concept_set(self, prefix: str, n: int) -> str:
        ids = self._list(prefix, n)
        sql = (f"SELECT concept_id AS requested_id, concept_id AS member_id FROM {self.t('concept')} "
               f"WHERE concept_id IN ({ids})")
        if self.descendants:
            sql += (f" UNION SELECT ancestor_concept_id, descendant_concept_id FROM {self.t('concept_ancestor')} "
                    f"WHERE ancestor_concept_id IN ({ids})")
        return sql

    def cte(self) -> str:
        """The common table expressions every query of the study starts with."""
        o = self.outcome
        if self.first_only:
            days = "SELECT person_id, MIN(outcome_date) AS outcome_date FROM outcome_records GROUP BY person_id"
        else:
            days = "SELECT DISTINCT person_id, outcome_date FROM outcome_records"
        gender = ""
        if self.genders is not None:
            gender = (f" WHERE op.person_id IN (SELECT person_id FROM {self.t('person')} "
                      f"WHERE gender_concept_id IN ({self._list('g', len(self.genders))}))")
        return (
            f"WITH outcome_set AS ({self._concept_set('o', len(self.out_ids))}), "
            f"exposure_set AS ({self._concept_set('e', len(self.exp_ids))}), "
            f"outcome_records AS (SELECT r.{o.id_column} AS record_id, r.person_id, r.{o.start_column} AS outcome_date "
            f"FROM {self.t(o.table)} r WHERE r.{o.concept_column} IN (SELECT member_id FROM outcome_set)), "
            f"outcome_days AS ({days}), "
            "case_periods AS (SELECT DISTINCT op.observation_period_id, op.person_id, "
            "op.observation_period_start_date AS obs_start, op.observation_period_end_date AS obs_end "
            f"FROM {self.t('observation_period')} op INNER JOIN outcome_days o ON o.person_id = op.person_id "
            "AND o.outcome_date >= op.observation_period_start_date "
            "AND o.outcome_date <= op.observation_period_end_date), "
            f"cases AS (SELECT * FROM case_periods op{gender}) "
        )

    def check_schema(self, db: _Database) -> None:
        """Refuse a CDM without a table or column the study reads, naming them."""
        need = {"person": _PERSON, "observation_period": _PERIOD, "concept": ("concept_id",),
                self.outcome.table: self.outcome.columns, self.exposure.table: self.exposure.columns}
        if self.descendants:
            need["concept_ancestor"] = ("ancestor_concept_id", "descendant_concept_id")
        found = db.columns(self.schema, list(need))
        where = f" in schema {self.schema!r}" if self.schema else " in the connection's current schema"
        absent = [t for t in need if t not in found]
        if absent:
            raise ValueError(f"the CDM has no table {absent[0]!r}{where} (missing {absent}); from_cdm reads "
                             f"{list(need)} (columns {list(need[absent[0]])} of {absent[0]})")
        for table, cols in need.items():
            missing = [c for c in cols if c not in found[table]]
            if missing:
                raise ValueError(f"CDM table {table!r}{where} has no column {missing[0]!r} (missing {missing}); "
                                 f"from_cdm reads {list(cols)} of it, the table has {sorted(found[table])}")

    def check_concepts(self, db: _Database) -> None:
        """Refuse concept ids that are no concept or match no record of their table."""
        for prefix, ids, src in (("o", self.out_ids, self.outcome), ("e", self.exp_ids, self.exposure)):
            sql = (f"WITH s AS ({self._concept_set(prefix, len(ids))}) SELECT s.requested_id, COUNT(r.person_id) "
                   f"FROM s LEFT JOIN {self.t(src.table)} r ON r.{src.concept_column} = s.member_id "
                   "GROUP BY s.requested_id")
            params = {k: v for k, v in self.params.items() if k.startswith(prefix)}
            n = {int(k): int(c) for k, c in db.rows(sql, params)}
            unknown = [i for i in ids if i not in n]
            if unknown:
                raise ValueError(f"{self.argument(unknown[0])}: concept id {unknown[0]} is not in the concept table"
                                 f"{' (nor an ancestor in concept_ancestor)' if self.descendants else ''}; "
                                 f"unknown ids: {unknown[:10]}")
            empty = [i for i in ids if n[i] == 0]
            if empty:
                scope = " or its descendants" if self.descendants else ""
                raise ValueError(f"{self.argument(empty[0])}: concept id {empty[0]} matches no record of "
                                 f"{src.table}.{src.concept_column} "
                                 f"(the concept{scope}); ids without records: {empty[:10]}")

    def argument(self, concept_id) -> str:
        """The argument that asked for ``concept_id``."""
        if concept_id in self.out_ids:
            return "outcome_concept_ids"
        if concept_id in self.exp_ids[:self.n_interest]:
            return "exposure_concept_ids"
        return "negative_control_concept_ids"

    def check_controls(self, db: _Database) -> None:
        """Refuse a negative control whose concept set shares a concept with an exposure's."""
        if self.n_interest == len(self.exp_ids):
            return
        interest = self._list("e", self.n_interest)
        controls = ", ".join(f":e{i}" for i in range(self.n_interest, len(self.exp_ids)))
        sql = (f"WITH s AS ({self._concept_set('e', len(self.exp_ids))}) SELECT a.requested_id, b.requested_id, "
               f"a.member_id FROM s a INNER JOIN s b ON a.member_id = b.member_id WHERE a.requested_id IN ({interest}) "
               f"AND b.requested_id IN ({controls}) ORDER BY a.requested_id, b.requested_id, a.member_id LIMIT 1")
        rows = db.rows(sql, {k: v for k, v in self.params.items() if k.startswith("e")})
        if rows:
            exposure, control, member = (int(v) for v in rows[0])
            raise ValueError(f"negative_control_concept_ids: concept id {control} overlaps exposure concept {exposure} "
                             f"(both take concept {member} through concept_ancestor); a negative control must not "
                             "share records with an exposure of interest")

    def counts(self, db: _Database) -> dict:
        """Record, day and case counts (for ``dropped`` and the no-case error)."""
        sql = self.cte() + (
            "SELECT (SELECT COUNT(*) FROM outcome_records), "
            "(SELECT COUNT(*) FROM (SELECT DISTINCT person_id, outcome_date FROM outcome_records) d), "
            "(SELECT COUNT(*) FROM outcome_days), "
            "(SELECT COUNT(*) FROM outcome_days o WHERE NOT EXISTS (SELECT 1 FROM "
            f"{self.t('observation_period')} op WHERE op.person_id = o.person_id "
            "AND o.outcome_date >= op.observation_period_start_date "
            "AND o.outcome_date <= op.observation_period_end_date)), "
            "(SELECT COUNT(*) FROM case_periods), (SELECT COUNT(*) FROM cases)")
        self._refuse_bad_rows(db)
        row = db.rows(sql, self.params)[0]
        counts = dict(zip(("records", "days", "kept", "outside", "case_periods", "cases"), (int(v) for v in row)))
        if counts["cases"] == 0:
            who = "" if self.genders is None else f" of gender_concept_ids {self.genders}"
            raise ValueError(
                f"no person{who} has an outcome (outcome_concept_ids {self.out_ids}"
                f"{' and descendants' if self.descendants else ''}) inside an observation period: "
                f"{counts['days']} outcome day(s) in {self.outcome.table}, {counts['outside']} of them outside "
                f"every observation period{' (first outcomes only)' if self.first_only else ''}; the outcome "
                "cohort has no person-time")
        return counts

    def _refuse_bad_rows(self, db: _Database) -> None:
        """Missing dates, periods ending before they start: the first such row of the rows read."""
        o, e = self.outcome, self.exposure
        checks = [
            (f"SELECT record_id, person_id FROM outcome_records WHERE outcome_date IS NULL OR person_id IS NULL "
             "ORDER BY record_id", f"{o.table}.{o.start_column} or {o.table}.person_id is missing",
             o.id_column),
            (f"SELECT observation_period_id, person_id FROM {self.t('observation_period')} WHERE person_id IN "
             "(SELECT person_id FROM outcome_records) AND (observation_period_start_date IS NULL OR "
             "observation_period_end_date IS NULL) ORDER BY observation_period_id",
             "observation_period.observation_period_start_date or observation_period_end_date is missing",
             "observation_period_id"),
            (f"SELECT observation_period_id, person_id FROM {self.t('observation_period')} WHERE person_id IN "
             "(SELECT person_id FROM outcome_records) AND observation_period_end_date < observation_period_start_date "
             "ORDER BY observation_period_id",
             "observation_period.observation_period_end_date is before observation_period_start_date",
             "observation_period_id"),
            (f"SELECT x.{e.id_column}, x.person_id FROM {self.t(e.table)} x WHERE x.{e.concept_column} IN "
             "(SELECT member_id FROM exposure_set) AND x.person_id IN (SELECT person_id FROM cases) AND "
             f"(x.{e.start_column} IS NULL OR x.{e.end_column} IS NULL) ORDER BY x.{e.id_column}",
             f"{e.table}.{e.start_column} or {e.table}.{e.end_column} is missing", e.id_column),
            (f"SELECT x.{e.id_column}, x.person_id FROM {self.t(e.table)} x WHERE x.{e.concept_column} IN "
             f"(SELECT member_id FROM exposure_set) AND x.person_id IN (SELECT person_id FROM cases) AND "
             f"x.{e.end_column} < x.{e.start_column} ORDER BY x.{e.id_column}",
             f"{e.table}.{e.end_column} is before {e.table}.{e.start_column}", e.id_column),
        ]
        for sql, what, id_column in checks:
            rows = db.rows(self.cte() + sql + " LIMIT 1", self.params)
            if rows:
                rid, pid = rows[0]
                raise ValueError(f"{what} at {id_column}={show(rid)} (person_id={show(pid)}); every row the "
                                 "study reads needs dates with end >= start")

    def cases(self, db: _Database) -> pd.DataFrame:
        sql = self.cte() + (
            "SELECT c.observation_period_id, c.person_id, c.obs_start, c.obs_end, p.person_id AS person_row, "
            f"p.year_of_birth, p.month_of_birth, p.day_of_birth FROM cases c LEFT JOIN {self.t('person')} p "
            "ON p.person_id = c.person_id ORDER BY c.person_id, c.observation_period_id")
        cols = ["observation_period_id", "person_id", "start", "end", "person_row", "year", "month", "day"]
        return pd.DataFrame(db.rows(sql, self.params), columns=cols)

    def outcomes(self, db: _Database) -> pd.DataFrame:
        sql = self.cte() + (
            "SELECT c.observation_period_id, c.person_id, o.outcome_date FROM outcome_days o INNER JOIN cases c "
            "ON c.person_id = o.person_id AND o.outcome_date >= c.obs_start AND o.outcome_date <= c.obs_end "
            "ORDER BY c.observation_period_id, o.outcome_date")
        return pd.DataFrame(db.rows(sql, self.params), columns=["observation_period_id", "person_id", "date"])

    def eras(self, db: _Database) -> pd.DataFrame:
        """The exposure eras of the cases' persons (all of them: a risk window may reach into the
        observation period from an era outside it), labelled with the concept id asked for."""
        e = self.exposure
        sql = self.cte() + (
            f"SELECT c.observation_period_id, c.person_id, s.requested_id, x.{e.start_column}, x.{e.end_column} "
            f"FROM {self.t(e.table)} x INNER JOIN exposure_set s ON x.{e.concept_column} = s.member_id "
            "INNER JOIN cases c ON c.person_id = x.person_id "
            f"ORDER BY c.observation_period_id, s.requested_id, x.{e.start_column}, x.{e.end_column}")
        return pd.DataFrame(db.rows(sql, self.params),
                            columns=["observation_period_id", "person_id", "covariate_id", "start", "end"])


# --------------------------------------------------------------------------- rows -> from_eras tables
def _days(values, origin) -> np.ndarray:
    """Dates (date, datetime or ISO text, as the database returns them) as days since ``origin``."""
    if len(values) == 0:
        return np.zeros(0, dtype=np.int64)
    dates = np.array([v.date() if isinstance(v, _dt.datetime) else v for v in values], dtype="datetime64[D]")
    return (dates - origin).astype(np.int64)


def _person_tables(cases, outcomes, eras, strata, origin, needs_age):
    """``(observation_periods, eras, outcomes)`` for :meth:`SCCSData.from_eras`, one stratum per
    person or per observation period."""
    orphan = cases["person_row"].isna().to_numpy()
    if orphan.any():
        i = int(np.argmax(orphan))
        raise ValueError(f"observation_period.person_id {show(cases['person_id'].iloc[i])} (observation_period_id="
                         f"{show(cases['observation_period_id'].iloc[i])}) is not in person.person_id: "
                         f"{int(orphan.sum())} case period(s) without a person row")
    dup = cases["observation_period_id"].duplicated().to_numpy()
    if dup.any():
        i = int(np.argmax(dup))
        raise ValueError(f"person.person_id {show(cases['person_id'].iloc[i])} appears more than once in person "
                         f"(or observation_period_id {show(cases['observation_period_id'].iloc[i])} more than once in "
                         "observation_period); each must be unique")
    if strata == "person":
        two = cases["person_id"].duplicated().to_numpy()
        if two.any():
            pid = cases["person_id"].iloc[int(np.argmax(two))]
            periods = cases.loc[cases["person_id"] == pid, "observation_period_id"].tolist()
            raise ValueError(f"person_id {show(pid)} has outcomes in {len(periods)} observation periods "
                             f"(observation_period_id {periods[:5]}); strata='person' needs one per person: use "
                             "strata='observation_period' (SelfControlledCaseSeries' cases)")
    key = "person_id" if strata == "person" else "observation_period_id"
    obs = pd.DataFrame({"person_id": cases[key].to_numpy(), "start": _days(cases["start"].tolist(), origin),
                        "end": _days(cases["end"].tolist(), origin)})
    birth = _birth_days(cases, origin, needs_age)
    if birth is not None:
        obs["birth_day"] = birth
    era_table = pd.DataFrame({"person_id": eras[key].to_numpy(), "start": _days(eras["start"].tolist(), origin),
                              "end": _days(eras["end"].tolist(), origin),
                              "covariate_id": eras["covariate_id"].to_numpy(dtype=np.int64)})
    outcome_table = pd.DataFrame({"person_id": outcomes[key].to_numpy(),
                                  "day": _days(outcomes["date"].tolist(), origin)})
    return obs, era_table, outcome_table


def _birth_days(cases, origin, needs_age):
    """Days of birth (a missing month or day of birth is 1, as SelfControlledCaseSeries), or None
    when some date of birth is missing or invalid and no age is needed (errors when one is)."""
    year = pd.to_numeric(cases["year"], errors="coerce")
    if year.isna().any():
        if not needs_age:
            return None
        i = int(np.argmax(year.isna().to_numpy()))
        raise ValueError(f"person.year_of_birth is missing for person_id={show(cases['person_id'].iloc[i])}; "
                         "min_age, max_age and age_knots need every case's year of birth")
    month = pd.to_numeric(cases["month"], errors="coerce").fillna(1)
    day = pd.to_numeric(cases["day"], errors="coerce").fillna(1)
    when = pd.to_datetime(pd.DataFrame({"year": year, "month": month, "day": day}), errors="coerce")
    bad = when.isna().to_numpy()
    if bad.any():
        if not needs_age:
            return None
        i = int(np.argmax(bad))
        raise ValueError(f"person has an invalid date of birth for person_id={show(cases['person_id'].iloc[i])}: "
                         f"year_of_birth={show(cases['year'].iloc[i])}, month_of_birth={show(cases['month'].iloc[i])}, "
                         f"day_of_birth={show(cases['day'].iloc[i])}")
    return (when.to_numpy().astype("datetime64[D]") - origin).astype(np.int64)


def _refuse_unexposed(study, eras):
    """An exposure without any era among the cases' persons would vanish from the design."""
    present = set(eras["covariate_id"].tolist())
    absent = [i for i in study.exp_ids if i not in present]
    if absent:
        raise ValueError(f"{study.argument(absent[0])}: concept id {absent[0]} has no era of any case (person with an "
                         f"outcome in observation); its exposure cohort has no person-time among the cases "
                         f"(ids without: {absent[:10]})")


def _refuse_no_person_time(data, study, windows):
    """Each exposure asked for (other than those split into ``windows``) must have person-time
    at risk in the design, or its coefficient has no data."""
    windowed = set(windows) if isinstance(windows, Mapping) else set()
    index = pd.Index(data.covariate_ids)
    nnz = np.diff(data.col_ptr)
    empty = []
    for i in study.exp_ids:
        if i in windowed:
            continue
        k = index.get_indexer([i])[0]
        if k < 0 or nnz[k] == 0:
            empty.append(i)
    if empty:
        raise ValueError(f"{study.argument(empty[0])}: concept id {empty[0]} has no person-time at risk: none of its "
                         f"{study.exposure.table} eras (risk windows) falls inside the cases' observation "
                         f"(after the study period, naive period and age limits); ids without: {empty[:10]}")
