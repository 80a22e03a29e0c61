"""A small synthetic OMOP CDM for the tests of ``SCCSData.from_cdm``.

:func:`simulated_cdm` turns a study simulated by ``hp.sccs.simulate(output="eras")`` into CDM
tables (person, observation_period, drug_era, drug_exposure, condition_occurrence,
condition_era, concept, concept_ancestor) plus the ``from_eras`` tables a user would build by
hand for the same study; :func:`load` writes the tables into DuckDB (a connection) or any
SQLAlchemy connection (SQLite, PostgreSQL), with the OMOP column types.

Concepts: the outcome is concept 4000 with descendants 4001 and 4002 (the records use all
three); drug ``k`` of the simulation is ingredient ``1000 + k`` with a descendant ``2000 + k``
(half of its eras are recorded under the descendant); class 5000 has drugs 1 and 2 below it.
Unrelated concepts: condition 4500, drug 3000. Around the cases: persons without the outcome,
a case with a second observation period before the one holding its outcomes, an outcome
record before observation, a repeated same-day record, observation_period_id != person_id.
"""
from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd

import hphawkes_py as hp

OUTCOME = 4000
OUTCOME_CHILDREN = (4001, 4002)
OTHER_CONDITION = 4500
OTHER_DRUG = 3000
DRUG_CLASS = 5000
ORIGIN = np.datetime64("1970-01-01", "D")

COLUMNS = {
    "person": [("person_id", "BIGINT"), ("gender_concept_id", "INTEGER"), ("year_of_birth", "INTEGER"),
               ("month_of_birth", "INTEGER"), ("day_of_birth", "INTEGER"), ("race_concept_id", "INTEGER"),
               ("ethnicity_concept_id", "INTEGER")],
    "observation_period": [("observation_period_id", "BIGINT"), ("person_id", "BIGINT"),
                           ("observation_period_start_date", "DATE"), ("observation_period_end_date", "DATE"),
                           ("period_type_concept_id", "INTEGER")],
    "drug_era": [("drug_era_id", "BIGINT"), ("person_id", "BIGINT"), ("drug_concept_id", "INTEGER"),
                 ("drug_era_start_date", "DATE"), ("drug_era_end_date", "DATE"), ("drug_exposure_count", "INTEGER"),
                 ("gap_days", "INTEGER")],
    "drug_exposure": [("drug_exposure_id", "BIGINT"), ("person_id", "BIGINT"), ("drug_concept_id", "INTEGER"),
                      ("drug_exposure_start_date", "DATE"), ("drug_exposure_end_date", "DATE"),
                      ("drug_type_concept_id", "INTEGER")],
    "condition_occurrence": [("condition_occurrence_id", "BIGINT"), ("person_id", "BIGINT"),
                             ("condition_concept_id", "INTEGER"), ("condition_start_date", "DATE"),
                             ("condition_end_date", "DATE"), ("condition_type_concept_id", "INTEGER")],
    "condition_era": [("condition_era_id", "BIGINT"), ("person_id", "BIGINT"), ("condition_concept_id", "INTEGER"),
                      ("condition_era_start_date", "DATE"), ("condition_era_end_date", "DATE"),
                      ("condition_occurrence_count", "INTEGER")],
    "concept": [("concept_id", "INTEGER"), ("concept_name", "VARCHAR(255)"), ("domain_id", "VARCHAR(20)"),
                ("vocabulary_id", "VARCHAR(20)"), ("concept_class_id", "VARCHAR(20)"),
                ("standard_concept", "VARCHAR(1)"), ("concept_code", "VARCHAR(50)")],
    "concept_ancestor": [("ancestor_concept_id", "INTEGER"), ("descendant_concept_id", "INTEGER"),
                         ("min_levels_of_separation", "INTEGER"), ("max_levels_of_separation", "INTEGER")],
}
DATE_COLUMNS = {c for cols in COLUMNS.values() for c, t in cols if t == "DATE"}


def date_of(days) -> np.ndarray:
    """Days since 1970-01-01 as datetime64[D]."""
    return ORIGIN + np.asarray(days, dtype=np.int64)


def simulated_cdm(n_cases=200, n_drugs=3, seed=7):
    """``(tables, hand, truth)``: CDM tables (dict of DataFrames) of a simulated study, and the
    ``from_eras`` tables ``hand = (observation_periods, eras, outcomes)`` of the same study,
    with exposure ids ``1000 + k`` and one outcome event per person and day."""
    obs, eras, outcomes, truth = hp.sccs.simulate(n_cases=n_cases, n_drugs=n_drugs, prevalence=0.5,
                                                  relative_risks=(2.0,), fraction_positive=0.7, output="eras",
                                                  seed=seed)
    rng = np.random.default_rng(seed)
    n = len(obs)
    # persons without the outcome (same kind of observation and exposure)
    extra = np.arange(n + 1, n + 31)
    start_x = rng.integers(11000, 14000, size=extra.size)
    obs_x = pd.DataFrame({"person_id": extra, "start": start_x, "end": start_x + rng.integers(400, 2000, extra.size),
                          "birth_day": start_x - rng.integers(0, 20000, extra.size)})
    eras_x = pd.DataFrame({"person_id": extra, "start": obs_x.start + 50, "end": obs_x.start + 80,
                           "covariate_id": rng.integers(1, n_drugs + 1, extra.size)})
    all_obs = pd.concat([obs, obs_x], ignore_index=True)
    all_eras = pd.concat([eras, eras_x], ignore_index=True)

    birth = date_of(all_obs.birth_day)
    years = birth.astype("datetime64[Y]").astype(int) + 1970
    months = birth.astype("datetime64[M]").astype(int) % 12 + 1
    days = (birth - birth.astype("datetime64[M]").astype("datetime64[D]")).astype(int) + 1
    person = pd.DataFrame({"person_id": all_obs.person_id, "gender_concept_id": np.where(all_obs.person_id % 2, 8507, 8532),
                           "year_of_birth": years, "month_of_birth": months, "day_of_birth": days,
                           "race_concept_id": 0, "ethnicity_concept_id": 0})
    # person 1 also has an earlier observation period (without outcomes; not part of the study)
    p1 = obs.iloc[0]
    period = pd.DataFrame({"observation_period_id": all_obs.person_id * 10 + 1, "person_id": all_obs.person_id,
                           "observation_period_start_date": date_of(all_obs.start),
                           "observation_period_end_date": date_of(all_obs.end), "period_type_concept_id": 44814724})
    early = pd.DataFrame({"observation_period_id": [int(p1.person_id) * 10], "person_id": [int(p1.person_id)],
                          "observation_period_start_date": date_of([p1.start - 900]),
                          "observation_period_end_date": date_of([p1.start - 400]),
                          "period_type_concept_id": [44814724]})
    period = pd.concat([period, early], ignore_index=True)

    # eras: half under the ingredient, half under its descendant; plus an unrelated drug
    concept_of = np.where(np.arange(len(all_eras)) % 2 == 0, 1000 + all_eras.covariate_id, 2000 + all_eras.covariate_id)
    drug_era = pd.DataFrame({"drug_era_id": np.arange(1, len(all_eras) + 1), "person_id": all_eras.person_id,
                             "drug_concept_id": concept_of, "drug_era_start_date": date_of(all_eras.start),
                             "drug_era_end_date": date_of(all_eras.end), "drug_exposure_count": 1, "gap_days": 0})
    other = pd.DataFrame({"drug_era_id": len(all_eras) + np.arange(1, 11), "person_id": obs.person_id[:10],
                          "drug_concept_id": OTHER_DRUG, "drug_era_start_date": date_of(obs.start[:10] + 5),
                          "drug_era_end_date": date_of(obs.start[:10] + 40), "drug_exposure_count": 1, "gap_days": 0})
    drug_era = pd.concat([drug_era, other], ignore_index=True)
    drug_exposure = pd.DataFrame({"drug_exposure_id": drug_era.drug_era_id, "person_id": drug_era.person_id,
                                  "drug_concept_id": drug_era.drug_concept_id,
                                  "drug_exposure_start_date": drug_era.drug_era_start_date,
                                  "drug_exposure_end_date": drug_era.drug_era_end_date, "drug_type_concept_id": 38000177})

    # outcomes: the simulated days under the outcome concept or its children; one repeated
    # same-day record; one record before observation; unrelated conditions of other persons
    oc = outcomes.reset_index(drop=True)
    concept_o = np.array([OUTCOME, *OUTCOME_CHILDREN])[np.arange(len(oc)) % 3]
    before = pd.DataFrame({"person_id": [int(obs.person_id.iloc[2])], "day": [int(obs.start.iloc[2]) - 10]})
    records = pd.concat([oc, oc.iloc[:1], before], ignore_index=True)
    rec_concept = np.concatenate([concept_o, [OUTCOME_CHILDREN[0], OUTCOME]])
    cond = pd.DataFrame({"condition_occurrence_id": np.arange(1, len(records) + 1), "person_id": records.person_id,
                         "condition_concept_id": rec_concept, "condition_start_date": date_of(records.day),
                         "condition_end_date": date_of(records.day), "condition_type_concept_id": 32817})
    noise = pd.DataFrame({"condition_occurrence_id": len(records) + np.arange(1, 11), "person_id": extra[:10],
                          "condition_concept_id": OTHER_CONDITION, "condition_start_date": date_of(obs_x.start[:10] + 3),
                          "condition_end_date": date_of(obs_x.start[:10] + 3), "condition_type_concept_id": 32817})
    cond = pd.concat([cond, noise], ignore_index=True)
    days_o = records.drop_duplicates(["person_id", "day"]).reset_index(drop=True)
    condition_era = pd.DataFrame({"condition_era_id": np.arange(1, len(days_o) + 1), "person_id": days_o.person_id,
                                  "condition_concept_id": OUTCOME, "condition_era_start_date": date_of(days_o.day),
                                  "condition_era_end_date": date_of(days_o.day), "condition_occurrence_count": 1})

    drugs = np.arange(1, n_drugs + 1)
    concept_ids = [*(1000 + drugs), *(2000 + drugs), OTHER_DRUG, DRUG_CLASS, OUTCOME, *OUTCOME_CHILDREN, OTHER_CONDITION]
    concept = pd.DataFrame({"concept_id": concept_ids, "concept_name": [f"concept {c}" for c in concept_ids],
                            "domain_id": ["Drug" if c < 4000 or c == DRUG_CLASS else "Condition" for c in concept_ids],
                            "vocabulary_id": "Synthetic", "concept_class_id": "Ingredient", "standard_concept": "S",
                            "concept_code": [str(c) for c in concept_ids]})
    pairs = [(c, c, 0) for c in concept_ids] + [(1000 + k, 2000 + k, 1) for k in drugs]
    pairs += [(OUTCOME, c, 1) for c in OUTCOME_CHILDREN]
    pairs += [(DRUG_CLASS, c, lvl) for k in (1, 2) for c, lvl in ((1000 + k, 1), (2000 + k, 2))]
    ancestor = pd.DataFrame(pairs, columns=["ancestor_concept_id", "descendant_concept_id", "min_levels_of_separation"])
    ancestor["max_levels_of_separation"] = ancestor.min_levels_of_separation

    tables = {"person": person, "observation_period": period, "drug_era": drug_era, "drug_exposure": drug_exposure,
              "condition_occurrence": cond, "condition_era": condition_era, "concept": concept,
              "concept_ancestor": ancestor}
    hand_eras = pd.DataFrame({"person_id": eras.person_id, "start": eras.start, "end": eras.end,
                              "covariate_id": (1000 + eras.covariate_id).astype(np.int64)})
    hand = (obs.copy(), hand_eras, days_o.copy())
    return tables, hand, truth


def tiny_cdm():
    """Three persons, two drugs (1001, 1002), outcome 4000: small tables for the error tests."""
    d = lambda s: np.datetime64(s, "D")  # noqa: E731
    person = pd.DataFrame({"person_id": [1, 2, 3], "gender_concept_id": [8507, 8532, 8507],
                           "year_of_birth": [1960, 1970, 1980], "month_of_birth": [5, None, 1],
                           "day_of_birth": [17, None, 1], "race_concept_id": 0, "ethnicity_concept_id": 0})
    person["month_of_birth"] = person["month_of_birth"].astype("Int64")
    person["day_of_birth"] = person["day_of_birth"].astype("Int64")
    period = pd.DataFrame({"observation_period_id": [11, 21, 31], "person_id": [1, 2, 3],
                           "observation_period_start_date": [d("2005-01-01")] * 3,
                           "observation_period_end_date": [d("2006-12-31")] * 3, "period_type_concept_id": 0})
    drug_era = pd.DataFrame({"drug_era_id": [1, 2, 3, 4], "person_id": [1, 2, 3, 3], "drug_concept_id": [1001, 1001, 1002, 1001],
                             "drug_era_start_date": [d("2005-03-01"), d("2005-06-01"), d("2006-01-01"), d("2006-02-01")],
                             "drug_era_end_date": [d("2005-03-30"), d("2005-07-15"), d("2006-02-01"), d("2006-03-01")],
                             "drug_exposure_count": 1, "gap_days": 0})
    drug_exposure = pd.DataFrame({"drug_exposure_id": drug_era.drug_era_id, "person_id": drug_era.person_id,
                                  "drug_concept_id": drug_era.drug_concept_id,
                                  "drug_exposure_start_date": drug_era.drug_era_start_date,
                                  "drug_exposure_end_date": drug_era.drug_era_end_date, "drug_type_concept_id": 0})
    cond = pd.DataFrame({"condition_occurrence_id": [1, 2, 3], "person_id": [1, 2, 3], "condition_concept_id": 4000,
                         "condition_start_date": [d("2005-03-10"), d("2005-09-01"), d("2006-01-20")],
                         "condition_end_date": [d("2005-03-10"), d("2005-09-01"), d("2006-01-20")],
                         "condition_type_concept_id": 0})
    condition_era = pd.DataFrame({"condition_era_id": cond.condition_occurrence_id, "person_id": cond.person_id,
                                  "condition_concept_id": 4000, "condition_era_start_date": cond.condition_start_date,
                                  "condition_era_end_date": cond.condition_end_date, "condition_occurrence_count": 1})
    ids = [1001, 1002, 1003, 4000, 4500]
    concept = pd.DataFrame({"concept_id": ids, "concept_name": [f"c{c}" for c in ids], "domain_id": "x",
                            "vocabulary_id": "x", "concept_class_id": "x", "standard_concept": "S",
                            "concept_code": [str(c) for c in ids]})
    ancestor = pd.DataFrame({"ancestor_concept_id": ids, "descendant_concept_id": ids, "min_levels_of_separation": 0,
                             "max_levels_of_separation": 0})
    return {"person": person, "observation_period": period, "drug_era": drug_era, "drug_exposure": drug_exposure,
            "condition_occurrence": cond, "condition_era": condition_era, "concept": concept,
            "concept_ancestor": ancestor}


def _ddl(name, df, schema):
    """CREATE TABLE with the OMOP types of the columns present in ``df``."""
    types = dict(COLUMNS.get(name, []))
    cols = ", ".join(f"{c} {types.get(c, 'BIGINT')}" for c in df.columns)
    table = f"{schema}.{name}" if schema else name
    return table, f"CREATE TABLE {table} ({cols})"


def _python_rows(df, as_text):
    """Rows as lists of Python values (dates as datetime.date, or ISO text for SQLite)."""
    out = []
    for col in df.columns:
        s = df[col]
        if col in DATE_COLUMNS:
            vals = [None if pd.isna(v) else pd.Timestamp(v).date() for v in s]
            if as_text:
                vals = [None if v is None else v.isoformat() for v in vals]
        else:
            vals = [None if pd.isna(v) else (v.item() if isinstance(v, np.generic) else v) for v in s]
        out.append(vals)
    return [dict(zip(df.columns, r)) for r in zip(*out)]


def load(connection, tables, schema=None):
    """Create ``tables`` (dict name -> DataFrame) in a DuckDB connection or a SQLAlchemy Connection
    (committed), in ``schema`` if given (created if absent). Returns the connection."""
    import importlib

    duckdb = importlib.import_module("duckdb") if _is_duckdb(connection) else None
    if duckdb is not None:
        if schema:
            connection.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        for name, df in tables.items():
            table, ddl = _ddl(name, df, schema)
            connection.execute(ddl)
            if len(df):
                connection.register("cdm_fixture_rows", df)
                connection.execute(f"INSERT INTO {table} SELECT * FROM cdm_fixture_rows")
                connection.unregister("cdm_fixture_rows")
        return connection
    import sqlalchemy as sa

    text_dates = connection.dialect.name == "sqlite"
    if schema:
        connection.execute(sa.text(f"CREATE SCHEMA IF NOT EXISTS {schema}"))
    for name, df in tables.items():
        table, ddl = _ddl(name, df, schema)
        connection.execute(sa.text(ddl))
        rows = _python_rows(df, as_text=text_dates)
        if rows:
            connection.execute(sa.text(f"INSERT INTO {table} VALUES ({', '.join(':' + c for c in df.columns)})"), rows)
    connection.commit()
    return connection


def _is_duckdb(connection) -> bool:
    return type(connection).__module__.split(".")[0] in ("duckdb", "_duckdb")


def hand_dates(day) -> dt.date:
    """Day number -> datetime.date (for study_start/study_end in the tests)."""
    return pd.Timestamp(date_of([day])[0]).date()
