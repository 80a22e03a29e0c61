"""SaTScan's ordinal and multinomial case files read for :func:`~hphawkes_py.scan.run_prm`.

The records are ``<id> <#cases> [<date>] <category>``; each case becomes one observation at its
location of the coordinates file (and on its record's day), and the analysis runs through
:func:`~hphawkes_py.scan.ordinal` or :func:`~hphawkes_py.scan.multinomial` (purely spatial),
:func:`~hphawkes_py.scan.space_time_ordinal` or :func:`~hphawkes_py.scan.space_time_multinomial`
(space-time), :func:`~hphawkes_py.scan.temporal_ordinal` or :func:`~hphawkes_py.scan.temporal_multinomial`
(purely temporal).
"""
from __future__ import annotations

import numpy as np

from ._prm_space_time import _run_observations, interval_dates, temporal_rows, warn_unadjusted
from ._satscan import _day, _geo, _number, _read_rows, case_records_kept, observed_and_empty_ids
from .categorical_space_time import space_time_multinomial, space_time_ordinal, temporal_multinomial, \
    temporal_ordinal
from .multinomial_model import multinomial
from .ordinal_model import ordinal

__all__ = ["read_category_cases", "run_categorical", "run_space_time_categorical", "run_temporal_categorical"]


def read_category_cases(path, dated: bool):
    """The records of an ordinal or multinomial SaTScan case file, ``<id> <#cases> [<date>]
    <category>``: ``(ids, counts, dates or None, categories as text)``, each checked where it is read
    (file, line, field)."""
    first = 3 if dated else 2
    p, rows = _read_rows(path, "case", first + 1)
    ids, counts, dates, cats = [], [], [], []
    for lineno, parts in rows:
        if len(parts) > first + 1:
            raise ValueError(f"{p}:{lineno}: field {first + 2} on: the ordinal and multinomial models take one "
                             f"category per record (<id> <#cases> [<date>] <category>), got {len(parts)} fields")
        counts.append(int(_number(parts[1], p, lineno, 2, "#cases", count=True, whole=True)))
        if dated:
            dates.append(_day(parts[2], p, lineno))
        ids.append(parts[0])
        cats.append(parts[first])
    return (ids, np.array(counts, dtype=np.int64), np.array(dates, dtype="datetime64[D]") if dated else None,
            np.array(cats, dtype=object))


def run_categorical(spec, run):
    """The purely spatial ordinal (``spec["model"] == "ordinal"``, SaTScan's ModelType 3) and
    multinomial (``"multinomial"``, ModelType 7) analyses of :func:`~hphawkes_py.scan.run_prm`: one
    case per case of every record, at its location of the coordinates file. Ordinal categories must
    be numbers (SaTScan orders them by value); multinomial ones are labels. ``spec["kwargs"]``: the
    settings run_prm reads for every purely spatial model (direction, max_population, max_distance,
    distance, n_replicates; min_cases, which these models do not have, is dropped, and so is the
    direction of the multinomial model, whose clusters are neither high nor low)."""
    f, model = spec["files"], spec["model"]
    gp, keys, xs, ys, seen = _geo(f["geo_file"])
    ids, counts, dates, cats = read_category_cases(f["case_file"], spec["dates"]["dated"])
    keep = case_records_kept(spec, ids, dates, gp, seen)
    rows = np.repeat(np.arange(len(ids)), np.where(keep, counts, 0))
    where = {k: i for i, k in enumerate(keys)}
    xy = np.array([(xs[where[ids[r]]], ys[where[ids[r]]]) for r in rows], dtype=float).reshape(-1, 2)
    loc_ids, empty = observed_and_empty_ids(keys, ids, rows, xs, ys, where)
    kwargs = {k: v for k, v in spec["kwargs"].items() if k != "min_cases"}
    kwargs.update(empty)
    if model == "ordinal":
        return ordinal(xy, _whole(ordinal_numbers(cats, keep, f["case_file"])[rows]), location_ids=loc_ids, **kwargs,
                       **run)
    kwargs.pop("direction", None)
    return multinomial(xy, cats[rows].astype(str), location_ids=loc_ids, **kwargs, **run)


def ordinal_numbers(cats, keep, path) -> np.ndarray:
    """(records,) float64 the ordinal categories ``cats`` (text) of the records ``keep`` as numbers (0 for the
    others), each checked (SaTScan orders ordinal categories by value)."""
    out = np.zeros(len(cats))
    for r in np.flatnonzero(keep).tolist():
        try:
            out[r] = float(cats[r])
        except ValueError:
            raise ValueError(f"{path}: record {r + 1}: the ordinal category {cats[r]!r} is not a number (SaTScan "
                             f"orders ordinal categories by value)") from None
    return out


def _whole(values: np.ndarray) -> np.ndarray:
    """``values`` as whole numbers when they all are (reported as SaTScan prints them), else as they are."""
    return values.astype(np.int64) if (values == np.round(values)).all() else values


def _dated_categories(model: str):
    """``read(path)`` of a dated ordinal or multinomial case file for :func:`~._prm_space_time._run_observations`
    and :func:`~._prm_space_time.temporal_rows`: ``(ids, counts, dates, categories, None)``, ordinal categories
    as numbers, multinomial ones as text."""
    def read(path):
        ids, counts, dates, cats = read_category_cases(path, True)
        if model == "ordinal":
            return ids, counts, dates, ordinal_numbers(cats, np.ones(len(ids), dtype=bool), path), None
        return ids, counts, dates, cats.astype(str), None

    return read


def run_space_time_categorical(spec, run):
    """The space-time ordinal (``spec["model"] == "space_time_ordinal"``) and multinomial analyses of
    :func:`~hphawkes_py.scan.run_prm` (``AnalysisType`` 3 or 4): one case per case of every record
    (``<id> <#cases> <date> <category>``), at its location of the coordinates file and on its record's day (or
    time interval). Min cases, which these models do not have, are dropped, and so is the direction of the
    multinomial model."""
    ordinal_ = spec["model"] == "space_time_ordinal"
    warn_unadjusted(spec, "the ordinal and multinomial models")

    def scan(xy, values, second, days, kwargs):
        kwargs.pop("min_cases", None)
        if ordinal_:
            return space_time_ordinal(xy, _whole(values), days, **kwargs, **run)
        kwargs.pop("direction", None)
        return space_time_multinomial(xy, values, days, **kwargs, **run)

    return _run_observations(spec, "ordinal" if ordinal_ else "multinomial", scan,
                             _dated_categories("ordinal" if ordinal_ else "multinomial"))


def run_temporal_categorical(spec, run):
    """The purely temporal ordinal (``spec["model"] == "temporal_ordinal"``) and multinomial analyses of
    :func:`~hphawkes_py.scan.run_prm` (``AnalysisType`` 2 or 6): one case per case of every record of the whole
    region (:func:`~._prm_space_time.temporal_rows`)."""
    ordinal_ = spec["model"] == "temporal_ordinal"
    days, values, _, temporal, starts = temporal_rows(spec, _dated_categories("ordinal" if ordinal_ else
                                                                              "multinomial"))
    if ordinal_:
        return interval_dates(temporal_ordinal(days, _whole(values), **temporal, **run), starts)
    temporal.pop("direction")
    return interval_dates(temporal_multinomial(days, values, **temporal, **run), starts)
