"""Adjustment for known relative risks (SaTScan's ``UseAdjustmentsByRRFile``), purely spatial discrete Poisson.

When part of the variation in risk is known in advance (a location with a known excess, an area whose
cases are under-reported by a known factor), SaTScan multiplies the expected cases of the locations
named in an adjustments file by their relative risks and rescales all expected cases to sum to the
observed total C again (``RelativeRiskAdjustmentHandler::apply``), so that the scan looks for risk beyond
the known one: ``E'_z = E_z r_z C / sum_w E_w r_w``. The file has one ``<location id> <relative risk>``
per line (``all`` for every location); the relative risks of a location named several times multiply
(SaTScan consolidates the file's lines). Lines with a date range (a risk for part of the study period)
are refused: the purely spatial scan has one period.

:func:`~hphawkes_py.scan.run_prm` applies it through the ``expected=`` argument of
:func:`~hphawkes_py.scan.poisson` (the circles then cut by the adjusted expected cases, as SaTScan cuts
them by its adjusted measure).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd

from ._prm_outputs import _OFF
from .model import indirect_expected, poisson
from .power_evaluation import read_alternative_hypotheses

__all__ = ["known_relative_risks", "adjusted_expected"]


def known_relative_risks(path, location_ids) -> np.ndarray:
    """(n,) the relative risk of each row from a SaTScan adjustments file: the product of the risks of every
    line naming its location (or ``all``), 1 where none does.

    Examples
    --------
    >>> import os, tempfile
    >>> from hphawkes_py.scan.known_risks import known_relative_risks
    >>> f = os.path.join(tempfile.mkdtemp(), "known.adj")
    >>> _ = open(f, "w").write("a 2\\nall 1.5\\n\\nb 0.5\\n")
    >>> known_relative_risks(f, ["a", "b", "c", "a"]).tolist()
    [3.0, 0.75, 1.5, 3.0]
    """
    return np.prod(read_alternative_hypotheses(path, location_ids, what="adjustments"), axis=0)


def adjusted_expected(cases, population, relative_risks, codes=None) -> np.ndarray:
    """(n,) expected cases per row adjusted for known relative risks: the indirectly standardised expected
    cases (:func:`~hphawkes_py.scan.model.indirect_expected`, covariate categories ``codes``) times
    ``relative_risks``, rescaled to sum to the cases. A row with cases whose adjusted expectation is 0 is
    refused, as SaTScan refuses it.

    Examples
    --------
    >>> from hphawkes_py.scan.known_risks import adjusted_expected
    >>> e = adjusted_expected(np.array([3, 1, 2]), np.array([100.0, 100.0, 200.0]), np.array([2.0, 1.0, 1.0]))
    >>> np.round(e, 6).tolist()
    [2.4, 1.2, 2.4]
    """
    e = indirect_expected(np.asarray(cases, dtype=np.float64), np.asarray(population, dtype=np.float64), codes)
    e = e * np.asarray(relative_risks, dtype=np.float64)
    bad = (e == 0) & (np.asarray(cases) > 0)
    if bad.any():
        raise ValueError(f"row {int(np.argmax(bad))} has cases but its expected cases are adjusted to zero (a known "
                         f"relative risk of 0): if the expected is zero, the cases must be zero too (SaTScan refuses "
                         f"it alike)")
    return e * (float(np.sum(cases)) / e.sum())


def poisson_with_known_risks(rows: pd.DataFrame, path, **kwargs):
    """:func:`~hphawkes_py.scan.poisson` on SaTScan's records ``rows`` (one per location and covariate category:
    ``location_id``, ``x``, ``y``, ``category``, ``cases``, ``population``) with the expected cases adjusted
    for the known relative risks of the file ``path``: indirectly standardised over the categories, times the
    risks (:func:`adjusted_expected`), summed per location. ``kwargs``: the scan's other arguments. The
    result's ``known_risks`` is True."""
    codes = pd.factorize(rows["category"])[0]
    rr = known_relative_risks(path, rows["location_id"].to_numpy())
    e = adjusted_expected(rows["cases"].to_numpy(), rows["population"].to_numpy(), rr, codes)
    loc = rows.assign(expected=e).groupby("location_id", sort=False).agg(
        x=("x", "first"), y=("y", "first"), cases=("cases", "sum"), population=("population", "sum"),
        expected=("expected", "sum")).reset_index()
    res = poisson(loc[["x", "y"]].to_numpy(float), loc["cases"].to_numpy(), loc["population"].to_numpy(),
                  expected=loc["expected"].to_numpy(), location_ids=loc["location_id"].to_numpy(), **kwargs)
    return dataclasses.replace(res, known_risks=True)


def prm_known_risks(values: dict, model: str, base: Path, bad):
    """The adjustments file a SaTScan parameter file asks for (``UseAdjustmentsByRRFile=y``,
    ``AdjustmentsByKnownRelativeRisksFilename`` relative to the file's folder ``base``), or None when off;
    refused by name (``bad(key, why)``) for other analyses than the purely spatial discrete Poisson one and
    with the iterative scan or the power evaluation."""
    if (values.get("UseAdjustmentsByRRFile", "n") or "n").lower() in _OFF:
        return None
    if model != "poisson":
        raise bad("UseAdjustmentsByRRFile", "is supported with the purely spatial discrete Poisson analysis only")
    for key in ("IterativeScan", "PerformPowerEvaluation"):
        if (values.get(key, "n") or "n").lower() not in _OFF:
            raise bad("UseAdjustmentsByRRFile", f"is not supported together with {key}=y")
    name = (values.get("AdjustmentsByKnownRelativeRisksFilename") or "").strip()
    if not name:
        raise bad("AdjustmentsByKnownRelativeRisksFilename", "is empty: UseAdjustmentsByRRFile=y needs the file")
    path = Path(name) if Path(name).is_absolute() else Path(base) / name
    if not path.is_file():
        raise bad("AdjustmentsByKnownRelativeRisksFilename", f"names {path}, which does not exist")
    return path
