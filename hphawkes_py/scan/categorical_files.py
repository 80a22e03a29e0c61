"""SaTScan's ordinal and multinomial case files read for :func:`~hphawkes_py.scan.run_prm`.

The records are ``<id> <#cases> [<date>] <category>``; each case becomes one observation at its
location of the coordinates file, and the analysis runs through :func:`~hphawkes_py.scan.ordinal` or
:func:`~hphawkes_py.scan.multinomial`.
"""
from __future__ import annotations

import numpy as np

from ._satscan import _day, _geo, _number, _read_rows, case_records_kept, observed_and_empty_ids
from .multinomial_model import multinomial
from .ordinal_model import ordinal

__all__ = ["read_category_cases", "run_categorical"]


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
        values = []
        for r in np.flatnonzero(keep).tolist():
            try:
                values.append(float(cats[r]))
            except ValueError:
                raise ValueError(f"{f['case_file']}: record {r + 1}: the ordinal category {cats[r]!r} is not a "
                                 f"number (SaTScan orders ordinal categories by value)") from None
        by_record = np.zeros(len(ids))
        by_record[keep] = values
        vals = by_record[rows]
        if (vals == np.round(vals)).all():
            vals = vals.astype(np.int64)
        return ordinal(xy, vals, location_ids=loc_ids, **kwargs, **run)
    kwargs.pop("direction", None)
    return multinomial(xy, cats[rows].astype(str), location_ids=loc_ids, **kwargs, **run)
