"""hp.sccs from_cdm: the SCCS design from an OMOP CDM database equals from_eras on the same eras
(cell for cell, and a fit's coefficients exactly), and bad CDMs or arguments are refused naming
the table, column and first offending row.

Runs on DuckDB (in memory and as a ``duckdb:///`` file) and SQLite through SQLAlchemy; with
``HPHAWKES_CDM_URL`` set (``scripts/test_cdm_postgres.sh`` sets it to a local PostgreSQL) the same
tests also run against that database, each in a schema of its own.
"""
from __future__ import annotations

import itertools
import os
import sys

import numpy as np
import pandas as pd
import pytest

duckdb = pytest.importorskip("duckdb")

import hphawkes_py as hp  # noqa: E402
from hphawkes_py.sccs import SCCSData  # noqa: E402

from_cdm = SCCSData.from_cdm

sys.path.insert(0, os.path.dirname(__file__))
import cdm_fixture as F  # noqa: E402

ENV_URL = os.environ.get("HPHAWKES_CDM_URL")
BACKENDS = ["duckdb", "sqlite"] + (["env"] if ENV_URL else [])
ARRAYS = ("stratum_ids", "row_ids", "covariate_ids", "stratum_ptr", "row_stratum", "y", "time", "n_events", "col_ptr",
          "row_idx")
DRUGS = [1001, 1002, 1003]
_schema_numbers = itertools.count()


@pytest.fixture
def make_cdm(request, tmp_path):
    """``make_cdm(tables) -> (connection, cdm_schema)`` on the backend of the test's parameter."""
    backend = request.param
    closers = []

    def make(tables):
        if backend == "duckdb":
            con = duckdb.connect()
            closers.append(con.close)
            return F.load(con, tables), None
        if backend == "duckdb_url":
            path = tmp_path / f"cdm{next(_schema_numbers)}.duckdb"
            con = duckdb.connect(str(path))
            F.load(con, tables)
            con.close()
            return f"duckdb:///{path}", None
        sa = pytest.importorskip("sqlalchemy")
        if backend == "sqlite":
            engine = sa.create_engine(f"sqlite:///{tmp_path / f'cdm{next(_schema_numbers)}.sqlite'}")
            schema = None
        else:
            engine = sa.create_engine(ENV_URL)
            schema = f"hp_cdm_{os.getpid()}_{next(_schema_numbers)}"

            def drop(engine=engine, schema=schema):
                with engine.connect() as c:
                    c.execute(sa.text(f"DROP SCHEMA IF EXISTS {schema} CASCADE"))
                    c.commit()
            closers.append(drop)
        closers.append(engine.dispose)
        with engine.connect() as c:
            F.load(c, tables, schema)
        return engine, schema

    yield make
    for close in reversed(closers):
        close()


@pytest.fixture(scope="module")
def study():
    return F.simulated_cdm()


def same_design(a, b):
    for name in ARRAYS:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert (a.values is None) == (b.values is None)


def same_fit(a, b):
    fa = hp.sccs.fit(a, prior="normal", variance=1.0, backend="cpu", progress=False)
    fb = hp.sccs.fit(b, prior="normal", variance=1.0, backend="cpu", progress=False)
    np.testing.assert_array_equal(np.asarray(fa.coefficients), np.asarray(fb.coefficients))


# --------------------------------------------------------------------------- the same study as from_eras
OPTIONS = {
    "risk_window": dict(risk_start=1, risk_end=30),
    "rules": dict(first_outcome_only=True, naive_period=60, min_age=3650, max_age=18250, risk_end=14),
    "splines": dict(age_knots=3, season_knots=3, merge=False),
}


@pytest.mark.parametrize("make_cdm", BACKENDS + ["duckdb_url"], indirect=True)
@pytest.mark.parametrize("variant", list(OPTIONS))
def test_same_study_as_from_eras(make_cdm, study, variant):
    tables, hand, _ = study
    con, schema = make_cdm(tables)
    opts = dict(OPTIONS[variant])
    hand_opts = dict(opts)
    if variant == "rules":
        lo, hi = int(hand[0].start.quantile(0.2)), int(hand[0].end.quantile(0.8))
        hand_opts.update(study_start=lo, study_end=hi)
        opts.update(study_start=F.hand_dates(lo), study_end=str(F.date_of([hi])[0]))
    got = from_cdm(con, [F.OUTCOME], DRUGS, cdm_schema=schema, **opts)
    want = hp.sccs.SCCSData.from_eras(*hand, **hand_opts)
    same_design(got, want)
    assert [t.name for t in got.splines] == [t.name for t in want.splines]
    for key in ("outcomes_outside_observation", "later_outcomes"):
        assert got.dropped.get(key) == want.dropped.get(key), key
    assert got.dropped["same_day_outcome_records"] == 1
    if variant == "risk_window":
        assert got.dropped["eras_outside_observation"] == want.dropped["eras_outside_observation"]
    same_fit(got, want)


@pytest.mark.parametrize("make_cdm", BACKENDS, indirect=True)
def test_observation_period_strata_are_observation_period_ids(make_cdm, study):
    tables, (obs, eras, outcomes), _ = study
    con, schema = make_cdm(tables)
    got = from_cdm(con, F.OUTCOME, DRUGS, cdm_schema=schema, strata="observation_period", risk_end=7)
    op = lambda t: t.assign(person_id=t.person_id * 10 + 1)  # noqa: E731  (the fixture's period ids)
    want = hp.sccs.SCCSData.from_eras(op(obs), op(eras), op(outcomes), risk_end=7)
    same_design(got, want)
    assert got.stratum_ids[:3].tolist() == [11, 21, 31]


@pytest.mark.parametrize("make_cdm", BACKENDS, indirect=True)
def test_descendants_roll_up_and_can_be_left_out(make_cdm, study):
    tables, (obs, eras, outcomes), _ = study
    con, schema = make_cdm(tables)
    # a class concept takes the eras of drugs 1 and 2 (ingredients and their descendants)
    got = from_cdm(con, F.OUTCOME, [F.DRUG_CLASS, 1003], cdm_schema=schema)
    cls = eras.assign(covariate_id=np.where(eras.covariate_id < 1003, F.DRUG_CLASS, eras.covariate_id))
    same_design(got, hp.sccs.SCCSData.from_eras(obs, cls, outcomes))
    assert got.covariate_ids.tolist() == [1003, F.DRUG_CLASS]
    # without descendants: only the records coded with the concepts themselves
    got = from_cdm(con, F.OUTCOME, DRUGS, cdm_schema=schema, include_descendants=False)
    co, de = tables["condition_occurrence"], tables["drug_era"]
    own_o = co[co.condition_concept_id == F.OUTCOME]
    own_o = pd.DataFrame({"person_id": own_o.person_id,
                          "day": (own_o.condition_start_date.to_numpy().astype("datetime64[D]") - F.ORIGIN).astype(int)})
    own_e = de[de.drug_concept_id.isin(DRUGS) & de.person_id.isin(obs.person_id)]
    own_e = pd.DataFrame({"person_id": own_e.person_id, "covariate_id": own_e.drug_concept_id.astype(np.int64),
                          "start": (own_e.drug_era_start_date.to_numpy().astype("datetime64[D]") - F.ORIGIN).astype(int),
                          "end": (own_e.drug_era_end_date.to_numpy().astype("datetime64[D]") - F.ORIGIN).astype(int)})
    want = hp.sccs.SCCSData.from_eras(obs, own_e, own_o.drop_duplicates())
    same_design(got, want)
    assert got.n_strata < len(obs)


@pytest.mark.parametrize("make_cdm", BACKENDS, indirect=True)
def test_drug_exposure_and_condition_era_tables_give_the_same_study(make_cdm, study):
    tables, hand, _ = study
    con, schema = make_cdm(tables)
    a = from_cdm(con, F.OUTCOME, DRUGS, cdm_schema=schema, risk_end=10)
    b = from_cdm(con, F.OUTCOME, DRUGS, cdm_schema=schema, risk_end=10, exposure_table="drug_exposure",
                 outcome_table="condition_era")
    same_design(a, b)


@pytest.mark.parametrize("make_cdm", BACKENDS, indirect=True)
def test_gender_restricts_the_cases_and_counts_the_others(make_cdm, study):
    tables, (obs, eras, outcomes), _ = study
    con, schema = make_cdm(tables)
    got = from_cdm(con, F.OUTCOME, DRUGS, cdm_schema=schema, gender_concept_ids=[8507])
    odd = lambda t: t[t.person_id % 2 == 1]  # noqa: E731  (the fixture's males)
    same_design(got, hp.sccs.SCCSData.from_eras(odd(obs), odd(eras), odd(outcomes)))
    assert got.dropped["cases_of_other_genders"] == int((obs.person_id % 2 == 0).sum())


# --------------------------------------------------------------------------- a tiny CDM, pinned numbers
@pytest.mark.parametrize("make_cdm", BACKENDS, indirect=True)
def test_tiny_cdm_days_are_inclusive_calendar_days(make_cdm):
    con, schema = make_cdm(F.tiny_cdm())
    data = from_cdm(con, 4000, [1001, 1002], cdm_schema=schema)
    # 2005-01-01..2006-12-31 is 730 days; person 1 exposed to 1001 2005-03-01..03-30 (30 days, event inside)
    assert data.stratum_ids.tolist() == [1, 2, 3]
    assert data.covariate_ids.tolist() == [1001, 1002]
    rows = data.stratum_ptr
    assert data.time[rows[0]:rows[1]].tolist() == [700.0, 30.0]
    assert data.y[rows[0]:rows[1]].tolist() == [0.0, 1.0]
    assert data.time.sum() == 3 * 730


# --------------------------------------------------------------------------- bad CDMs
def _tiny(**edit):
    tables = F.tiny_cdm()
    for name, fn in edit.items():
        tables[name] = fn(tables[name])
    return tables


@pytest.mark.parametrize("make_cdm", BACKENDS, indirect=True)
def test_concept_ids_that_match_nothing_are_named(make_cdm):
    con, schema = make_cdm(F.tiny_cdm())
    with pytest.raises(ValueError, match=r"outcome_concept_ids: concept id 9999 is not in the concept table"):
        from_cdm(con, [4000, 9999], [1001], cdm_schema=schema)
    with pytest.raises(ValueError, match=r"outcome_concept_ids: concept id 4500 matches no record of "
                                         r"condition_occurrence.condition_concept_id"):
        from_cdm(con, 4500, [1001], cdm_schema=schema)
    with pytest.raises(ValueError, match=r"exposure_concept_ids: concept id 1003 matches no record of "
                                         r"drug_era.drug_concept_id"):
        from_cdm(con, 4000, [1001, 1003], cdm_schema=schema)


@pytest.mark.parametrize("make_cdm", BACKENDS, indirect=True)
def test_cohorts_without_person_time_are_refused(make_cdm):
    d = np.datetime64
    add_era = lambda t: pd.concat([t, pd.DataFrame({  # noqa: E731
        "drug_era_id": [9, 10], "person_id": [1, 4], "drug_concept_id": [1003, 1002],
        "drug_era_start_date": [d("1990-01-01", "D"), d("2005-05-01", "D")],
        "drug_era_end_date": [d("1990-02-01", "D"), d("2005-06-01", "D")], "drug_exposure_count": 1, "gap_days": 0})],
        ignore_index=True)
    add_cond = lambda t: pd.concat([t, pd.DataFrame({  # noqa: E731
        "condition_occurrence_id": [7], "person_id": [2], "condition_concept_id": [4500],
        "condition_start_date": [d("1999-01-01", "D")], "condition_end_date": [d("1999-01-01", "D")],
        "condition_type_concept_id": 0})], ignore_index=True)
    con, schema = make_cdm(_tiny(drug_era=add_era, condition_occurrence=add_cond))
    with pytest.raises(ValueError, match=r"concept id 1003 has no person-time at risk: none of its drug_era eras"):
        from_cdm(con, 4000, [1001, 1003], cdm_schema=schema)
    with pytest.raises(ValueError, match=r"no person has an outcome \(outcome_concept_ids \[4500\].*1 of them outside"):
        from_cdm(con, 4500, [1001], cdm_schema=schema)
    with pytest.raises(ValueError, match=r"no person of gender_concept_ids \[8551\] has an outcome"):
        from_cdm(con, 4000, [1001], cdm_schema=schema, gender_concept_ids=8551)
    # the study period leaves 1002 (person 3, 2006) without person-time
    with pytest.raises(ValueError, match=r"concept id 1002 has no person-time at risk"):
        from_cdm(con, 4000, [1001, 1002], cdm_schema=schema, study_end="2005-12-31")


def test_exposure_of_non_cases_only_is_refused():
    d = np.datetime64
    add = lambda t: pd.concat([t, pd.DataFrame({  # noqa: E731
        "person_id": [4], "gender_concept_id": [8507], "year_of_birth": [1990], "month_of_birth": [1],
        "day_of_birth": [1], "race_concept_id": 0, "ethnicity_concept_id": 0})], ignore_index=True)
    era = lambda t: pd.concat([t, pd.DataFrame({  # noqa: E731
        "drug_era_id": [9], "person_id": [4], "drug_concept_id": [1003], "drug_era_start_date": [d("2005-05-01", "D")],
        "drug_era_end_date": [d("2005-06-01", "D")], "drug_exposure_count": 1, "gap_days": 0})], ignore_index=True)
    con = F.load(duckdb.connect(), _tiny(person=add, drug_era=era))
    with pytest.raises(ValueError, match=r"concept id 1003 has no era of any case"):
        from_cdm(con, 4000, [1001, 1003])


@pytest.mark.parametrize("make_cdm", BACKENDS, indirect=True)
def test_missing_table_or_column_is_named(make_cdm):
    tables = F.tiny_cdm()
    del tables["concept_ancestor"]
    tables["drug_era"] = tables["drug_era"].drop(columns="drug_era_end_date")
    con, schema = make_cdm(tables)
    with pytest.raises(ValueError, match=r"the CDM has no table 'concept_ancestor'"):
        from_cdm(con, 4000, [1001], cdm_schema=schema)
    with pytest.raises(ValueError, match=r"CDM table 'drug_era'.* has no column 'drug_era_end_date'"):
        from_cdm(con, 4000, [1001], cdm_schema=schema, include_descendants=False)
    with pytest.raises(ValueError, match=r"no table 'person' in schema 'no_such_schema'"):
        from_cdm(con, 4000, [1001], cdm_schema="no_such_schema", include_descendants=False,
                 exposure_table="drug_exposure")


@pytest.mark.parametrize("make_cdm", BACKENDS, indirect=True)
def test_bad_rows_are_named_by_table_column_and_id(make_cdm):
    d = np.datetime64("2004-01-01", "D")

    def backwards(t):
        t = t.copy()
        t.loc[1, "drug_era_end_date"] = d
        return t

    def no_end(t):
        t = t.copy()
        t["observation_period_end_date"] = t["observation_period_end_date"].astype("datetime64[s]")
        t.loc[1, "observation_period_end_date"] = pd.NaT
        return t

    con, schema = make_cdm(_tiny(drug_era=backwards))
    with pytest.raises(ValueError, match=r"drug_era.drug_era_end_date is before drug_era.drug_era_start_date at "
                                         r"drug_era_id=2 \(person_id=2\)"):
        from_cdm(con, 4000, [1001], cdm_schema=schema)
    con, schema = make_cdm(_tiny(observation_period=no_end))
    with pytest.raises(ValueError, match=r"observation_period_end_date is missing at observation_period_id=21"):
        from_cdm(con, 4000, [1001], cdm_schema=schema)
    con, schema = make_cdm(_tiny(person=lambda t: t[t.person_id != 2]))
    with pytest.raises(ValueError, match=r"observation_period.person_id 2 \(observation_period_id=21\) is not in "
                                         r"person.person_id"):
        from_cdm(con, 4000, [1001], cdm_schema=schema)


@pytest.mark.parametrize("make_cdm", BACKENDS, indirect=True)
def test_dates_of_birth_are_checked_when_ages_are_used(make_cdm):
    def bad_month(t):
        t = t.copy()
        t.loc[0, "month_of_birth"] = 13
        return t

    con, schema = make_cdm(_tiny(person=bad_month))
    with pytest.raises(ValueError, match=r"invalid date of birth for person_id=1: year_of_birth=1960"):
        from_cdm(con, 4000, [1001], cdm_schema=schema, min_age=0)
    # no age rule: the design does not need the dates of birth
    assert from_cdm(con, 4000, [1001], cdm_schema=schema).n_strata == 3


@pytest.mark.parametrize("make_cdm", BACKENDS, indirect=True)
def test_outcomes_in_two_periods_need_period_strata(make_cdm):
    d = lambda s: np.datetime64(s, "D")  # noqa: E731
    period = lambda t: pd.concat([t, pd.DataFrame({  # noqa: E731
        "observation_period_id": [12], "person_id": [1], "observation_period_start_date": [d("2008-01-01")],
        "observation_period_end_date": [d("2008-12-31")], "period_type_concept_id": 0})], ignore_index=True)
    cond = lambda t: pd.concat([t, pd.DataFrame({  # noqa: E731
        "condition_occurrence_id": [4], "person_id": [1], "condition_concept_id": [4000],
        "condition_start_date": [d("2008-06-01")], "condition_end_date": [d("2008-06-01")],
        "condition_type_concept_id": 0})], ignore_index=True)
    con, schema = make_cdm(_tiny(observation_period=period, condition_occurrence=cond))
    with pytest.raises(ValueError, match=r"person_id 1 has outcomes in 2 observation periods \(observation_period_id "
                                         r"\[11, 12\]\); .*strata='observation_period'"):
        from_cdm(con, 4000, [1001], cdm_schema=schema)
    data = from_cdm(con, 4000, [1001], cdm_schema=schema, strata="observation_period")
    assert data.stratum_ids.tolist() == [11, 12, 21, 31]
    assert data.time.sum() == 3 * 730 + 366


# --------------------------------------------------------------------------- bad arguments
@pytest.fixture(scope="module")
def tiny_con():
    con = F.load(duckdb.connect(), F.tiny_cdm())
    yield con
    con.close()


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(outcome_concept_ids=[]), ValueError, r"outcome_concept_ids must name at least one concept id"),
    (dict(outcome_concept_ids=[4000.0]), TypeError, r"outcome_concept_ids must hold integer concept ids; item 0"),
    (dict(outcome_concept_ids=True), TypeError, r"outcome_concept_ids must hold integer concept ids"),
    (dict(outcome_concept_ids="4000"), TypeError, r"outcome_concept_ids must be an integer concept id or a list"),
    (dict(exposure_concept_ids=[1001, 1001]), ValueError, r"exposure_concept_ids has concept id 1001 more than once"),
    (dict(exposure_concept_ids=[1001, 4000]), ValueError, r"\[4000\] are in both outcome_concept_ids and "
                                                          r"exposure_concept_ids"),
    (dict(cdm_schema="main; DROP TABLE person"), ValueError, r"cdm_schema must be a schema name"),
    (dict(study_start=12000), TypeError, r"study_start must be a calendar date .* not a number"),
    (dict(study_end="the end"), ValueError, r"study_end must be a calendar date such as '2005-01-01'"),
    (dict(study_start="2006-01-01", study_end="2005-12-31"), ValueError, r"study_end \(2005-12-31\) must not be "
                                                                        r"before study_start \(2006-01-01\)"),
    (dict(min_age=100, max_age=50), ValueError, r"max_age \(50\) must be >= min_age \(100\)"),
    (dict(strata="case"), ValueError, r"strata must be one of \('person', 'observation_period'\)"),
    (dict(outcome_table="cohort"), ValueError, r"outcome_table must be one of"),
    (dict(include_descendants="yes"), TypeError, r"include_descendants must be True or False"),
    (dict(naive_period=-1), ValueError, r"naive_period must be >= 0"),
    (dict(risk_end=1.5), TypeError, r"risk_end must be an integer"),
    (dict(gender_concept_ids=[]), ValueError, r"gender_concept_ids must name at least one concept id"),
])
def test_bad_arguments_are_refused_before_any_query(tiny_con, kwargs, error, match):
    args = dict(outcome_concept_ids=4000, exposure_concept_ids=[1001])
    args.update(kwargs)
    with pytest.raises(error, match=match):
        from_cdm(tiny_con, **args)


def test_bad_connections_are_refused(tmp_path):
    with pytest.raises(TypeError, match=r"connection must be a duckdb connection, a SQLAlchemy Engine"):
        from_cdm(42, 4000, [1001])
    missing = tmp_path / "absent.duckdb"
    with pytest.raises(ValueError, match=r"there is no DuckDB database file at"):
        from_cdm(f"duckdb:///{missing}", 4000, [1001])
    assert not missing.exists()
    with pytest.raises(ValueError, match=r"must name the database file"):
        from_cdm("duckdb://", 4000, [1001])
    pytest.importorskip("sqlalchemy")
    with pytest.raises(ValueError, match=r"connection 'not a url' is not a database URL"):
        from_cdm("not a url", 4000, [1001])


# --------------------------------------------------------------------------- negative controls
@pytest.mark.parametrize("make_cdm", BACKENDS, indirect=True)
def test_negative_controls_are_covariates_of_the_same_design(make_cdm, study):
    tables, hand, _ = study
    con, schema = make_cdm(tables)
    got = from_cdm(con, F.OUTCOME, [1001], negative_control_concept_ids=[1002, 1003], cdm_schema=schema, risk_end=5)
    same_design(got, hp.sccs.SCCSData.from_eras(*hand, risk_end=5))
    with pytest.raises(ValueError, match=r"negative_control_concept_ids: concept id 5000 overlaps exposure concept "
                                         r"1001 \(both take concept 1001 through concept_ancestor\)"):
        from_cdm(con, F.OUTCOME, [1001, 1003], negative_control_concept_ids=[F.DRUG_CLASS], cdm_schema=schema)
    # without descendants the class and the ingredient share no record
    with pytest.raises(ValueError, match=r"negative_control_concept_ids: concept id 5000 matches no record of "
                                         r"drug_era.drug_concept_id \(the concept\)"):
        from_cdm(con, F.OUTCOME, [1001], negative_control_concept_ids=[F.DRUG_CLASS], cdm_schema=schema,
                 include_descendants=False)


def test_negative_controls_overlapping_the_exposures_are_refused(tiny_con):
    with pytest.raises(ValueError, match=r"concept id\(s\) \[1001\] are in both exposure_concept_ids and "
                                         r"negative_control_concept_ids"):
        from_cdm(tiny_con, 4000, [1001, 1002], negative_control_concept_ids=[1001])
    with pytest.raises(ValueError, match=r"\[4000\] are in both outcome_concept_ids and negative_control_concept_ids"):
        from_cdm(tiny_con, 4000, [1001], negative_control_concept_ids=[4000])
    with pytest.raises(ValueError, match=r"negative_control_concept_ids: concept id 1003 matches no record"):
        from_cdm(tiny_con, 4000, [1001], negative_control_concept_ids=[1002, 1003])


def test_sqlalchemy_connection_and_url_give_the_same_study(tmp_path):
    sa = pytest.importorskip("sqlalchemy")
    tables = F.tiny_cdm()
    want = from_cdm(F.load(duckdb.connect(), tables), 4000, [1001, 1002], risk_end=10)
    url = f"sqlite:///{tmp_path / 'cdm.sqlite'}"
    engine = sa.create_engine(url)
    with engine.connect() as c:
        F.load(c, tables)
        same_design(from_cdm(c, 4000, [1001, 1002], risk_end=10), want)   # a Connection, used as is
        assert not c.closed
    same_design(from_cdm(url, 4000, [1001, 1002], risk_end=10), want)     # a URL, connected for the call
    engine.dispose()


def test_only_the_cases_rows_leave_the_database(study, monkeypatch):
    from hphawkes_py.sccs import cdm

    tables, (obs, eras, outcomes), _ = study
    con = F.load(duckdb.connect(), tables)
    fetched = []
    rows = cdm._Database.rows

    def counting(self, sql, params):
        out = rows(self, sql, params)
        fetched.append(len(out))
        return out

    monkeypatch.setattr(cdm._Database, "rows", counting)
    from_cdm(con, F.OUTCOME, DRUGS)
    # the cases (one period each), their outcome days and their persons' eras of the three drugs;
    # the persons without the outcome and the other drug's eras stay in the database
    de = tables["drug_era"]
    case_eras = int((de.person_id.isin(obs.person_id) & (de.drug_concept_id != F.OTHER_DRUG)).sum())
    assert len(tables["person"]) > len(obs) and len(de) > case_eras
    inside = len(outcomes) - 1   # the hand outcomes hold one record before observation
    assert fetched[-3:] == [len(obs), inside, case_eras], fetched
    assert sum(fetched) <= len(obs) + case_eras + len(outcomes) + 40   # plus the catalogue and the counts
