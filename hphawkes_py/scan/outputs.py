"""SaTScan's output tables and main report for a :class:`~hphawkes_py.scan.ScanResult`.

SaTScan 10 writes, beside its main text report ``<name>.txt``, the cluster information
(``<name>.col``), the location information of the reported clusters (``<name>.gis``), the
risk estimate of every location (``<name>.rr``) and the simulated log likelihood ratios
(``<name>.llr``), each as fixed-width text and as dBase (``.dbf``, which rsatscan reads with
``foreign::read.dbf``). The functions here build the same tables with SaTScan's column names
(``calculation/Output/*Writer.cpp`` of SaTScan 10.3: ``CLUSTER``, ``LOC_ID``, ``LLR``, ``P_VALUE``,
...) from the result, write them as CSV and, through pyogrio (optional extra ``gis``), as dBase,
and format the main report's cluster blocks as SaTScan does (labels dotted to 22 characters,
numbers to SaTScan's significant digits). ``P_VALUE`` is the Monte Carlo or the Gumbel p-value
as SaTScan's ``PValueReportType`` chooses, written for any number of replicates (SaTScan leaves it
blank below 99).

What the result does not hold is not made up: the recurrence interval of prospective analyses
(``RECURR_INT``) is not written; the ``.gis`` location-level counts of a space-time cluster
(``LOC_OBS`` ... , SaTScan's counts inside the cluster's time window) are left out; the ``.rr``
table of the space-time permutation model (counts in the most likely cluster's window) is refused.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from ._output_common import (CATEGORICAL, NORMAL_MODELS, _check_flag, _check_p_values, _check_result, _date,
                             _location_of_ids, _location_relative_risk, _span_of, _write_dbf, normal_columns)
from ._report_format import _LABEL, _SUMMARY_LABEL, _block_line, _population_text, _significant, category_report_lines
from .outputs_temporal import is_time_result, write_time_results
from .result import purely_temporal_row

__all__ = ["cluster_table", "location_table", "risk_table", "llr_table", "report_text", "write_satscan",
           "SATSCAN_TABLES"]

#: the tables :func:`write_satscan` writes, by SaTScan's file extension
SATSCAN_TABLES = ("col", "gis", "rr", "llr")

_BERNOULLI = ("bernoulli", "space_time_bernoulli")
_POISSON = ("poisson", "space_time_poisson", "declustered")
_SPACE_TIME = ("space_time_permutation", "space_time_poisson", "space_time_bernoulli")


def _latlong(result) -> bool:
    return result.distance == "great_circle"


def _elliptic(result) -> bool:
    return "semimajor_axis" in result.clusters.columns


def _stat_only(result) -> bool:
    """Whether a result's ``log_likelihood_ratio`` is a test statistic SaTScan writes alone, as
    ``TEST_STAT``: the space-time permutation model's, and the time-stratified space-time analyses'
    (each cylinder scored against its own days' totals)."""
    return result.model == "space_time_permutation" or \
        (result.time_trend or {}).get("adjustment") == "stratified"


def _is_test_statistic(result, penalty=None) -> bool:
    """SaTScan's ``CParameters::IsTestStatistic``: the space-time permutation model, the time-stratified
    analyses, and the elliptic scan with a non-compactness penalty, report a test statistic, not an LLR.
    The result does not record the penalty: it is ``penalty`` when given, else read from a reported
    non-circular cluster (penalised: its test statistic differs from its LLR)."""
    if _stat_only(result):
        return True
    if not _elliptic(result):
        return False
    if penalty is not None:
        if penalty not in ("none", "medium", "strong"):
            raise ValueError(f"penalty must be 'none', 'medium' or 'strong' (the elliptic scan's non-compactness "
                             f"penalty), got {penalty!r}")
        return penalty != "none"
    c = result.clusters
    ell = c[c["shape"] != 1]
    if not len(ell):
        raise ValueError("the result of an elliptic scan does not say whether its statistic was penalised (no "
                         "non-circular cluster shows it): pass penalty='none', 'medium' or 'strong' as in the scan")
    return not np.array_equal(ell["test_statistic"].to_numpy(), ell["log_likelihood_ratio"].to_numpy())


def _has_population(result) -> bool:
    """SaTScan writes POPULATION for the Bernoulli model and for Poisson with a population file."""
    if result.model in _BERNOULLI:
        return True
    if result.model in ("poisson", "space_time_poisson"):
        pop = result.clusters["population"] if len(result.clusters) else pd.Series([], dtype=float)
        return bool(np.all(np.isfinite(pd.to_numeric(pop, errors="coerce"))))
    return False


#: the start of SaTScan's statement of a log-linear time trend (:func:`~.time_trend.time_trend_text`)
_LOGLINEAR_TEXT = "adjusting for time trend with"
#: SaTScan's days per year in its annual rates (``CSaTScanData::GetAnnualRate``)
_DAYS_PER_YEAR = 365.2425


def _annual_cases(result, study_period):
    """The study's cases per year per 100,000 persons (SaTScan's "Annual cases / 100000": the discrete
    Poisson model with a population, over the study period's years), or None where SaTScan writes none
    or the period is not known. A cluster's is this times its observed / expected (not written for
    time-stratified analyses)."""
    if study_period is None or result.model not in ("poisson", "space_time_poisson") or not _has_population(result):
        return None
    from ._satscan import _check_study_period

    a, b = _check_study_period(study_period)
    years = float((b - a).astype(int) + 1) / _DAYS_PER_YEAR
    return 100000.0 * float(result.n_cases) / (float(result.n_population) * years)


def _relative_risk(observed, expected, total):
    """The ``.rr`` table's REL_RISK (``LocationRiskEstimateWriter::writeGeneric``):
    (O / E) / ((C - O) / (C - E)); NaN where SaTScan leaves the field blank (E = 0, C = E, O = C)."""
    if expected == 0 or total - expected == 0:
        return math.nan
    outside = (total - observed) / (total - expected)
    return (observed / expected) / outside if outside != 0 else math.nan


def _span(result, locs) -> float:
    """Largest distance between two locations of the cluster (SaTScan's SPAN; km for lat/long)."""
    xy = np.asarray(result._loc_coords, dtype=float)[np.asarray(sorted(set(locs)), dtype=np.int64)]
    return _span_of(xy, _latlong(result))


def _period(result, study_period):
    """``study_period`` as SaTScan's two date strings (None: not given); a bare number (a year is
    not a day) or a reversed period is refused (:func:`~._satscan._check_study_period`)."""
    if study_period is None:
        return None
    from ._satscan import _check_study_period

    a, b = _check_study_period(study_period)
    return _date(a), _date(b)


#: SaTScan's smallest Gumbel p-value (``calculateGumbelPValue``: 0.1 / 10^(digits10 + 1))
_GUMBEL_FLOOR = 0.1 / 10.0 ** 16
def _uses_gumbel(result, cl, p_values) -> bool:
    """Whether SaTScan reports cluster ``cl``'s Gumbel p-value (``CCluster::getReportingPValue``):
    always with ``"gumbel"``; with ``"default"`` for high-rate scans of the models SaTScan allows
    (``getCanReportGumbelInDefaultCombination``) when the cluster's Monte Carlo rank is below 10."""
    if p_values == "gumbel":
        return True
    if p_values == "monte_carlo" or result.direction != "high" or result.model == "declustered":
        return False
    rank = int(round(float(cl.p_value) * (result.n_replicates + 1)))
    return rank < 10


def _reported_p(result, cl, p_values) -> float:
    """The P_VALUE SaTScan writes: the Monte Carlo p, or the Gumbel p floored at SaTScan's minimum."""
    if _uses_gumbel(result, cl, p_values):
        return max(float(cl.gumbel_p_value), _GUMBEL_FLOOR)
    return float(cl.p_value)


def cluster_table(result, *, study_period=None, gumbel: bool = False, p_values: str = "monte_carlo") -> pd.DataFrame:
    """SaTScan's cluster information table (``<name>.col``), one row per reported cluster.

    Parameters
    ----------
    result : ScanResult
        A scan's result.
    study_period : (first day, last day), optional
        Written as START_DATE / END_DATE of purely spatial clusters (SaTScan writes the study
        period there); left blank when not given. Space-time clusters write their own window.
    gumbel : bool
        Add SaTScan's ``GBL_PVALUE`` column (``ReportGumbel=y``).
    p_values : {"monte_carlo", "gumbel", "default"}
        The ``P_VALUE`` written, as SaTScan's ``PValueReportType``: the Monte Carlo p (1), the
        Gumbel p (3), or SaTScan's default combination (0: the Gumbel p for clusters whose Monte
        Carlo rank is below 10 in high-rate scans, else the Monte Carlo p). Gumbel p-values are
        floored at SaTScan's 1e-17.

    Returns
    -------
    pandas.DataFrame
        SaTScan's columns in its order: ``CLUSTER, LOC_ID`` (the most central location),
        ``X, Y`` (Cartesian) or ``LATITUDE, LONGITUDE``, ``RADIUS`` (coordinate units; km for
        lat/long) or ``E_MINOR, E_MAJOR, E_ANGLE, E_SHAPE`` (elliptic), ``SPAN`` (largest
        distance between two of its locations), ``START_DATE, END_DATE`` (``YYYY/M/D``),
        ``NUMBER_LOC``, ``LLR`` (and ``TEST_STAT`` for elliptic windows; ``TEST_STAT`` alone for the
        space-time permutation model), ``P_VALUE``, [``GBL_PVALUE``], ``OBSERVED, EXPECTED, ODE``
        (not for the ordinal and multinomial models, whose counts are per category, as in SaTScan),
        ``REL_RISK`` (Poisson, Bernoulli), ``POPULATION`` (Bernoulli; Poisson with a population),
        ``GINI_CLUST`` (``"F"``: no Gini clusters here).

    Examples
    --------
    >>> from hphawkes_py.scan import outputs
    >>> g = hp.datasets.load_grave()
    >>> res = hp.scan.bernoulli(g[["x", "y"]].to_numpy(), g["case"], 1 - g["case"], n_replicates=99,
    ...                         seed=1, backend="cpu", progress=False)
    >>> col = outputs.cluster_table(res)
    >>> list(col.columns[:6])
    ['CLUSTER', 'LOC_ID', 'X', 'Y', 'RADIUS', 'SPAN']
    >>> print(col.loc[0, "OBSERVED"], round(col.loc[0, "LLR"], 4))
    11 7.4193
    """
    _check_result(result)
    gumbel = _check_flag(gumbel, "gumbel")
    p_values = _check_p_values(p_values)
    loc_of, _ = _location_of_ids(result)
    period = _period(result, study_period)
    stat_only = _stat_only(result)
    rows = []
    for k, cl in enumerate(result.clusters.itertuples(index=False)):
        temporal = purely_temporal_row(cl)  # SaTScan: LOC_ID "All", no coordinates, radius, span or population
        r = {"CLUSTER": k + 1, "LOC_ID": "All" if temporal else str(cl.location_ids[0])}
        if not result.non_euclidean:  # SaTScan: no coordinates, radius or span with a neighbors file
            a, b = ("LATITUDE", "LONGITUDE") if _latlong(result) else ("X", "Y")
            r[a], r[b] = float(cl.x), float(cl.y)
            if _elliptic(result):
                r.update(E_MINOR=float(cl.radius), E_MAJOR=float(cl.semimajor_axis), E_ANGLE=float(cl.angle),
                         E_SHAPE=float(cl.shape))
            else:
                r["RADIUS"] = float(cl.radius)
            r["SPAN"] = math.nan if temporal else _span(result, [loc_of[i] for i in cl.location_ids])
        if hasattr(cl, "start"):
            # SaTScan: a purely temporal cluster's dates in the precision of the case times, others' in days
            prec = result.time_precision if temporal else "day"
            r["START_DATE"], r["END_DATE"] = _date(cl.start, prec), _date(cl.end, prec)
        else:
            r["START_DATE"], r["END_DATE"] = period if period else ("", "")
        r["NUMBER_LOC"] = int(cl.n_locations)
        if stat_only:
            r["TEST_STAT"] = float(cl.log_likelihood_ratio)
        else:
            r["LLR"] = float(cl.log_likelihood_ratio)
            if _elliptic(result):
                r["TEST_STAT"] = float(cl.test_statistic)
        r["P_VALUE"] = _reported_p(result, cl, p_values)
        if gumbel:
            r["GBL_PVALUE"] = max(float(cl.gumbel_p_value), _GUMBEL_FLOOR)
        if result.model in NORMAL_MODELS:
            r["OBSERVED"] = cl.cases
            r.update({key: float(getattr(cl, col)) for key, _, col in normal_columns(result)})
        elif result.model not in CATEGORICAL:  # SaTScan writes their category tables elsewhere (the .sci)
            r["OBSERVED"] = cl.cases
            r["EXPECTED"] = float(cl.expected)
            r["ODE"] = float(cl.observed_over_expected)
        if result.model in _BERNOULLI + _POISSON:
            rr = float(cl.relative_risk)
            r["REL_RISK"] = rr if math.isfinite(rr) else math.nan
        if _has_population(result):
            r["POPULATION"] = math.nan if temporal else float(cl.population)
        r["GINI_CLUST"] = "F"
        rows.append(r)
    return pd.DataFrame(rows, columns=_col_columns(result, gumbel))


def _col_columns(result, gumbel) -> list:
    cols = ["CLUSTER", "LOC_ID"]
    if not result.non_euclidean:
        cols += ["LATITUDE", "LONGITUDE"] if _latlong(result) else ["X", "Y"]
        cols += (["E_MINOR", "E_MAJOR", "E_ANGLE", "E_SHAPE"] if _elliptic(result) else ["RADIUS"]) + ["SPAN"]
    cols += ["START_DATE", "END_DATE", "NUMBER_LOC"]
    if _stat_only(result):
        cols += ["TEST_STAT"]
    else:
        cols += ["LLR"] + (["TEST_STAT"] if _elliptic(result) else [])
    cols += ["P_VALUE"] + (["GBL_PVALUE"] if gumbel else [])
    cols += [] if result.model in CATEGORICAL else ["OBSERVED"] + [c[0] for c in normal_columns(result)] \
        if result.model in NORMAL_MODELS else ["OBSERVED", "EXPECTED", "ODE"]
    cols += ["REL_RISK"] if result.model in _BERNOULLI + _POISSON else []
    cols += ["POPULATION"] if _has_population(result) else []
    return cols + ["GINI_CLUST"]


def _location_counts(result, g):
    """(observed, expected, population) of merged location ``g`` over the study period."""
    c = result._loc_cases[g]
    c = int(c) if np.asarray(result._loc_cases).dtype.kind in "iub" else float(c)
    e = float(result._loc_expected[g]) if result._loc_expected is not None else math.nan
    p = float(result._loc_population[g]) if result._loc_population is not None else math.nan
    return c, e, p


def location_table(result, *, gumbel: bool = False, p_values: str = "monte_carlo") -> pd.DataFrame:
    """SaTScan's location information table (``<name>.gis``): each location of each reported cluster.

    Columns in SaTScan's order: ``LOC_ID, CLUSTER, P_VALUE``, [``GBL_PVALUE``], the cluster's
    ``CLU_OBS, CLU_EXP, CLU_ODE``, ``CLU_RR``, ``CLU_POP``, the location's ``LOC_OBS, LOC_EXP,
    LOC_ODE, LOC_RR, LOC_POP`` (purely spatial analyses only: for a space-time cluster SaTScan
    counts inside the cluster's time window, which the result does not hold, so these are left
    out), ``LOC_X, LOC_Y`` or ``LOC_LAT, LOC_LONG`` and ``GINI_CLUST``. The ordinal and multinomial
    models have no ``CLU_*`` or ``LOC_*`` counts (per category; SaTScan leaves them out too). Locations with identical
    coordinates (merged by the scan) are one row, named by their first id. ``LOC_RR`` is
    SaTScan's (O / E) / ((C - O) / (C - E)) of the location: blank (NaN) where infinite (all cases
    there), 0 where SaTScan's formula divides by zero (no expected cases).

    Parameters
    ----------
    result : ScanResult
        A scan's result.
    gumbel : bool
        Add SaTScan's ``GBL_PVALUE`` column (``ReportGumbel=y``).
    p_values : {"monte_carlo", "gumbel", "default"}
        The ``P_VALUE`` written, as in :func:`cluster_table`.

    Returns
    -------
    pandas.DataFrame
        One row per location of each reported cluster, clusters in rank order, locations nearest
        to the centre first.

    Examples
    --------
    >>> from hphawkes_py.scan import outputs
    >>> g = hp.datasets.load_grave()
    >>> res = hp.scan.bernoulli(g[["x", "y"]].to_numpy(), g["case"], 1 - g["case"], n_replicates=99,
    ...                         seed=1, backend="cpu", progress=False)
    >>> gis = outputs.location_table(res)
    >>> print(len(gis[gis.CLUSTER == 1]), int(gis[gis.CLUSTER == 1].LOC_OBS.sum()))
    19 11
    """
    _check_result(result)
    gumbel = _check_flag(gumbel, "gumbel")
    p_values = _check_p_values(p_values)
    loc_of, _ = _location_of_ids(result)
    spatial = result.model not in _SPACE_TIME
    # SaTScan's ordinal and multinomial .gis has no counts: they are per category (ClusterLocationsWriter)
    counted = result.model not in CATEGORICAL
    rr_model = result.model in _BERNOULLI + _POISSON
    pop = _has_population(result)
    a, b = ("LOC_LAT", "LOC_LONG") if _latlong(result) else ("LOC_X", "LOC_Y")
    cols = ["LOC_ID", "CLUSTER", "P_VALUE"] + (["GBL_PVALUE"] if gumbel else [])
    if counted:
        cols += ["CLU_OBS", "CLU_EXP", "CLU_ODE"] + (["CLU_RR"] if rr_model else []) + (["CLU_POP"] if pop else [])
    if spatial and counted:
        cols += ["LOC_OBS", "LOC_EXP", "LOC_ODE"] + (["LOC_RR"] if rr_model else []) + (["LOC_POP"] if pop else [])
    cols += ([] if result.non_euclidean else [a, b]) + ["GINI_CLUST"]
    C = float(result.n_cases)
    coords = np.asarray(result._loc_coords, dtype=float)
    rows = []
    for k, cl in enumerate(result.clusters.itertuples(index=False)):
        if purely_temporal_row(cl):
            continue  # SaTScan lists no location of a purely temporal cluster
        seen = set()
        for lid in cl.location_ids:
            g = loc_of[lid]
            if g in seen:
                continue
            seen.add(g)
            r = {"LOC_ID": str(lid), "CLUSTER": k + 1, "P_VALUE": _reported_p(result, cl, p_values)}
            if gumbel:
                r["GBL_PVALUE"] = max(float(cl.gumbel_p_value), _GUMBEL_FLOOR)
            if counted:
                r.update(CLU_OBS=cl.cases, CLU_EXP=float(cl.expected), CLU_ODE=float(cl.observed_over_expected))
            if counted and rr_model:
                rr = float(cl.relative_risk)
                r["CLU_RR"] = rr if math.isfinite(rr) else math.nan
            if counted and pop:
                r["CLU_POP"] = float(cl.population)
            if spatial and counted:
                o, e, p = _location_counts(result, g)
                r.update(LOC_OBS=o, LOC_EXP=e, LOC_ODE=o / e if e > 0 else math.nan)
                if rr_model:
                    r["LOC_RR"] = _location_relative_risk(o, e, C)
                if pop:
                    r["LOC_POP"] = p
            r[a], r[b] = float(coords[g, 0]), float(coords[g, 1])
            r["GINI_CLUST"] = "F"
            rows.append(r)
    return pd.DataFrame(rows, columns=cols)


def risk_table(result) -> pd.DataFrame:
    """SaTScan's risk estimates for each location (``<name>.rr``): ``LOC_ID, OBSERVED, EXPECTED,
    ODE, REL_RISK`` over the study period, one row per location (identical coordinates merged,
    named ``"<first id> et al"`` as SaTScan names combined locations), in SaTScan's order: the
    location ids sorted as text. ``REL_RISK`` is
    (O / E) / ((C - O) / (C - E)), blank (NaN) where SaTScan leaves it blank.

    Parameters
    ----------
    result : ScanResult
        A scan's result.

    Returns
    -------
    pandas.DataFrame
        One row per location, ids sorted as text (``"1", "10", "100", "11", ...``).

    Raises
    ------
    ValueError
        For the space-time permutation model, whose SaTScan table counts inside the most likely
        cluster's time window (not held by the result), and for the ordinal and multinomial
        models (risks per category: SaTScan refuses the table too).

    Examples
    --------
    >>> from hphawkes_py.scan import outputs
    >>> g = hp.datasets.load_grave()
    >>> res = hp.scan.bernoulli(g[["x", "y"]].to_numpy(), g["case"], 1 - g["case"], n_replicates=9,
    ...                         seed=1, backend="cpu", progress=False)
    >>> rr = outputs.risk_table(res)
    >>> print(len(rr), int(rr.OBSERVED.sum()), list(rr.columns))
    143 30 ['LOC_ID', 'OBSERVED', 'EXPECTED', 'ODE', 'REL_RISK']
    """
    _check_result(result)
    if result.model == "space_time_permutation":
        raise ValueError("the risk table (.rr) of the space-time permutation model counts each location inside the "
                         "most likely cluster's time window, which the result does not hold; write the other tables "
                         "(tables=('col', 'gis', 'llr'))")
    if result.model in CATEGORICAL:
        raise ValueError(f"the risk table (.rr) is not defined for the {result.model} model (SaTScan refuses it too: "
                         f"a location's risk is one per category); write the other tables (tables=('col', 'gis', "
                         f"'llr')); the clusters' category tables are in result.clusters (observed_by_category, ...)")
    _, locations = _location_of_ids(result)
    C = float(result.n_cases)
    rows = []
    for g, ids in locations:
        o, e, _ = _location_counts(result, g)
        rows.append({"LOC_ID": str(ids[0]) + (" et al" if len(ids) > 1 else ""), "OBSERVED": o, "EXPECTED": e,
                     "ODE": o / e if e > 0 else math.nan, "REL_RISK": _relative_risk(o, e, C)})
    # SaTScan keeps its identifiers sorted as text and writes the locations in that order
    rows.sort(key=lambda r: r["LOC_ID"])
    return pd.DataFrame(rows, columns=["LOC_ID", "OBSERVED", "EXPECTED", "ODE", "REL_RISK"])


def llr_table(result, *, penalty=None) -> pd.DataFrame:
    """SaTScan's simulated log likelihood ratios (``<name>.llr``): the maximum of each Monte
    Carlo replicate in replicate order, column ``LLR`` (``TST_STAT`` where SaTScan reports a test
    statistic: the space-time permutation model and penalised elliptic scans; ``penalty``: the
    elliptic scan's penalty, needed when no reported cluster shows it).

    Parameters
    ----------
    result : ScanResult
        A scan's result.
    penalty : {"none", "medium", "strong"}, optional
        The elliptic scan's non-compactness penalty (the result does not record it).

    Returns
    -------
    pandas.DataFrame
        One column, one row per replicate.

    Raises
    ------
    ValueError
        An elliptic result whose clusters do not show whether it was penalised, and no ``penalty``.

    Examples
    --------
    >>> from hphawkes_py.scan import outputs
    >>> g = hp.datasets.load_grave()
    >>> res = hp.scan.bernoulli(g[["x", "y"]].to_numpy(), g["case"], 1 - g["case"], n_replicates=9,
    ...                         seed=1, backend="cpu", progress=False)
    >>> outputs.llr_table(res).shape
    (9, 1)
    """
    _check_result(result)
    name = "TST_STAT" if _is_test_statistic(result, penalty) else "LLR"
    return pd.DataFrame({name: np.asarray(result.null_llr, dtype=float)})


# ---- the main text report ----------------------------------------------------------------------
def _gumbel_text(p: float) -> str:
    """A Gumbel p-value as SaTScan's report shows it (``DisplayMonteCarloInformation``)."""
    return "< " + _significant(_GUMBEL_FLOOR, 1) if p == 0.0 else _significant(p)


def report_text(result, *, study_period=None, title: str | None = None, p_values: str = "monte_carlo",
                gumbel: bool = False) -> str:
    """The main results report (``<name>.txt``): a summary of the data and the cluster blocks as
    SaTScan 10 formats them (``CCluster::Display``: labels dotted to 22 characters, values
    wrapped at column 95, numbers with SaTScan's significant digits, p-values with as many
    decimals as the number of replicates has digits). The clusters of the ordinal and multinomial
    models show SaTScan's category table (``DisplayClusterDataOrdinal``: ``Total cases``,
    ``Category``, then per group of categories ``Number of cases``, ``Expected cases``,
    ``Observed / expected``, ``Relative risk``, ``Percent cases in area``).

    Parameters
    ----------
    result : ScanResult
    study_period : (first day, last day), optional
        Shown as the study period and as the time frame of purely spatial clusters.
    title : str, optional
        A title line (SaTScan's ``ResultsTitle``).
    p_values : {"monte_carlo", "gumbel", "default"}
        The p-value shown, as in :func:`cluster_table` (a Gumbel p-value with SaTScan's
        significant digits, ``< 0.00000000000000001`` below its floor).
    gumbel : bool
        Add the ``Gumbel P-value`` line (SaTScan's ``ReportGumbel=y``).

    Returns
    -------
    str

    Examples
    --------
    >>> from hphawkes_py.scan import outputs
    >>> g = hp.datasets.load_grave()
    >>> res = hp.scan.bernoulli(g[["x", "y"]].to_numpy(), g["case"], 1 - g["case"], n_replicates=99,
    ...                         seed=1, backend="cpu", progress=False)
    >>> txt = outputs.report_text(res)
    >>> print(txt[txt.index("1.Location"):].splitlines()[5])
      Number of cases.......: 11
    """
    _check_result(result)
    from .result import _TITLES, adjustment_texts

    p_values = _check_p_values(p_values)
    gumbel = _check_flag(gumbel, "gumbel")
    period = _period(result, study_period)
    rule = "_" * 29
    lines = []
    if title:
        lines += [title, ""]
    lines.append(f"{_TITLES.get(result.model, result.model)}, {result.direction} rates (hphawkes_py; cluster blocks "
                 f"as SaTScan 10 writes them)")
    # one per line, a full stop after the last, as SaTScan's summary; its log-linear trend's statement
    # carries a full stop of its own (getCalculatedTimeTrendAsString), so that it ends in two when last
    statements = [a + "." if a.startswith(_LOGLINEAR_TEXT) else a for a in adjustment_texts(result)]
    if statements:
        lines += statements[:-1] + [statements[-1] + "."]
    lines += [rule, "", "SUMMARY OF DATA", ""]

    def summary(label, value):
        lines.append(label.ljust(_SUMMARY_LABEL, ".") + ": " + value)

    if period:
        summary("Study period", f"{period[0]} to {period[1]}")
    summary("Number of locations", str(result.n_locations))
    if result.model in _BERNOULLI:
        summary("Total population", _population_text(float(result.n_population)))
    elif result.model in ("poisson", "space_time_poisson") and _has_population(result):
        summary("Population, averaged over time", _population_text(float(result.n_population)))
    summary("Total number of cases", f"{result.n_cases:.10g}")
    annual = _annual_cases(result, study_period)
    if annual is not None:
        summary("Annual cases / 100000", _significant(annual, 1))
        if (getattr(result, "time_trend", None) or {}).get("adjustment") == "stratified":
            annual = None  # SaTScan writes no cluster's
    lines += [rule, "", "CLUSTERS DETECTED", ""]
    if not len(result.clusters):
        lines.append("No clusters were found.")
    loc_of, _ = _location_of_ids(result)
    digits = len(str(result.n_replicates))
    isotonic = "steps" in result.clusters.columns
    for k, cl in enumerate(result.clusters.itertuples(index=False)):
        rank = k + 1

        def add(label, value, first=False):
            # the isotonic scan's blocks: SaTScan's labels padded to its longest, "Isotonic step-wise information"
            lines.append(_block_line(label, value, rank if first else None, rank, 30 if isotonic else _LABEL))

        if purely_temporal_row(cl):  # SaTScan: "All", the time frame, no coordinates or population
            add("Location IDs included", "All", first=True)
            add("Time frame", f"{_date(cl.start, result.time_precision)} to {_date(cl.end, result.time_precision)}")
            _count_lines(add, result, cl, annual)
            _statistic_lines(add, result, cl, p_values, gumbel, digits)
            lines.append("")
            continue
        steps = getattr(cl, "steps", None)
        if steps is None:
            add("Location IDs included", ", ".join(str(v) for v in cl.location_ids), first=True)
        else:  # the isotonic scan: its steps' locations
            add("Steps in risk function", str(steps), first=True)
            for s, ids in enumerate(cl.step_location_ids):
                add(f"Step {s + 1}", ", ".join(str(v) for v in ids))
        span = _span(result, [loc_of[i] for i in cl.location_ids])
        if result.non_euclidean:  # SaTScan: no coordinates, radius or span with a neighbors file
            pass
        elif _latlong(result):
            lat, lon = float(cl.x), float(cl.y)
            add("Coordinates / radius", f"({abs(lat):.6f} {'N' if lat >= 0 else 'S'}, {abs(lon):.6f} "
                                        f"{'E' if lon >= 0 else 'W'}) / {_significant(float(cl.radius))} km")
            add("Span", f"{_significant(span)} km")
        elif _elliptic(result):
            add("Coordinates", f"({float(cl.x):g},{float(cl.y):g})")
            add("Semiminor axis", _significant(float(cl.radius)))
            add("Semimajor axis", _significant(float(cl.semimajor_axis)))
            add("Angle (degrees)", _significant(float(cl.angle)))
            add("Shape", _significant(float(cl.shape)))
            add("Span", _significant(span))
        else:
            sep = ", " if isotonic else ","
            add("Coordinates / radius", f"({float(cl.x):g}{sep}{float(cl.y):g}) / {_significant(float(cl.radius))}")
            add("Span", _significant(span))
        if hasattr(cl, "start"):
            add("Time frame", f"{_date(cl.start)} to {_date(cl.end)}")
        elif period and not isotonic:
            add("Time frame", f"{period[0]} to {period[1]}")
        if _has_population(result):
            add("Population", _population_text(float(cl.population)))
        _count_lines(add, result, cl, annual)
        _statistic_lines(add, result, cl, p_values, gumbel, digits)
        if steps is not None and steps > 1:
            add("Isotonic step-wise information", "")
            rr = [float(v) for v in cl.step_relative_risk]
            for label, values in (("Radius for each step", cl.step_radius), ("Number of cases by step", cl.step_cases),
                                  ("Expected cases by step", cl.step_expected),
                                  ("Observed/expected by step", [c / e if e else 0.0 for c, e in
                                                                 zip(cl.step_cases, cl.step_expected)]),
                                  ("Relative risk by step", rr)):
                add(label, ", ".join(str(v) if label.startswith("Number") else _significant(float(v)) for v in values))
        lines.append("")
    return "\n".join(lines) + "\n"


def _count_lines(add, result, cl, annual):
    """A cluster block's counts, in SaTScan's order (the categories of the categorical models)."""
    if result.model in CATEGORICAL:
        for label, value in category_report_lines(cl):
            add(label, value)
    elif result.model in NORMAL_MODELS:
        add("Number of cases", str(int(cl.cases)))
        for _, label, col in normal_columns(result):
            add(label, _significant(float(getattr(cl, col))))
    else:
        add("Number of cases", f"{cl.cases:.10g}" if isinstance(cl.cases, float) else str(int(cl.cases)))
        add("Expected cases", _significant(float(cl.expected)))
        if annual is not None:
            add("Annual cases / 100000", _significant(annual * float(cl.observed_over_expected), 1))
        add("Observed / expected", _significant(float(cl.observed_over_expected)))
    if result.model in _BERNOULLI + _POISSON:
        add("Relative risk", _significant(float(cl.relative_risk)))
    if result.model in _BERNOULLI:
        n = float(cl.population)
        add("Percent cases in area", _significant(100.0 * cl.cases / n if n else 0.0, 1))


def _statistic_lines(add, result, cl, p_values, gumbel, digits):
    """A cluster block's statistic (LLR or test statistic) and p-values."""
    if _stat_only(result):
        add("Test statistic", f"{float(cl.log_likelihood_ratio):f}")
    else:
        add("Log likelihood ratio", f"{float(cl.log_likelihood_ratio):f}")
        if _elliptic(result):
            add("Test statistic", f"{float(cl.test_statistic):f}")
    if _uses_gumbel(result, cl, p_values):
        add("P-value", _gumbel_text(float(cl.gumbel_p_value)))
    else:
        add("P-value", f"{float(cl.p_value):.{digits}f}")
    if gumbel:
        add("Gumbel P-value", _gumbel_text(float(cl.gumbel_p_value)))


# ---- writing the set ---------------------------------------------------------------------------
_GEOMETRY_FORMATS = ("geojson", "kml", "kmz", "shp", "gpkg", "html", "leaflet")


def write_satscan(result, results_file, *, tables=None, dbase: bool = False, report: bool = True, geometry=(),
                  study_period=None, gumbel: bool = False, p_values: str = "monte_carlo", penalty=None,
                  title=None) -> list:
    """Write SaTScan's set of output files for ``result`` beside ``results_file``.

    Parameters
    ----------
    result : ScanResult, TemporalResult or SVTTResult
        A scan's result. Purely temporal, seasonal and SVTT results write the tables SaTScan writes
        for those analyses (:mod:`hphawkes_py.scan.outputs_temporal`: no ``rr`` for the temporal
        ones, no geometry, Monte Carlo p-values only).
    results_file : path
        The main report (SaTScan's ``ResultsFile``, e.g. ``out/analysis.txt``); the other files
        take its name without ``.txt``: ``analysis.col.csv``, ``analysis.gis.csv``,
        ``analysis.rr.csv``, ``analysis.llr.csv`` (and ``.dbf``), ``analysis.clusters.geojson``,
        ``analysis.kml``, ``analysis.col.shp``, ``analysis.gpkg``, ``analysis.html``,
        ``analysis.leaflet.html``. Its folder must exist.
    tables : sequence of {"col", "gis", "rr", "llr"}, optional
        The tables to write; default: all that the model has (the space-time permutation,
        ordinal and multinomial models have no ``rr`` here: see :func:`risk_table`).
    dbase : bool or sequence of table names
        Also write each table (or those named) as dBase (``.dbf``, as rsatscan reads them); needs
        pyogrio. A table named here but not in ``tables`` is written too.
    report : bool
        Write the main report (:func:`report_text`).
    geometry : sequence of {"geojson", "kml", "kmz", "shp", "gpkg", "html", "leaflet"}
        Cluster geometry files (:mod:`hphawkes_py.scan.geometry`) and the HTML maps
        (:func:`hphawkes_py.scan.cluster_map`: ``"html"`` self-contained, ``"leaflet"``
        through folium).
    study_period, gumbel, p_values, penalty, title
        As in :func:`cluster_table`, :func:`llr_table` and :func:`report_text`.

    Returns
    -------
    list of pathlib.Path
        The files written, in the order written. Every table is built (and every option checked)
        before the first file is written.

    Raises
    ------
    ValueError
        An unknown table or geometry format, ``rr`` asked of a model without it, a
        ``results_file`` whose folder does not exist.
    ImportError
        ``dbase``, ``"shp"`` or ``"gpkg"`` without pyogrio and shapely, ``"leaflet"`` without folium.

    Examples
    --------
    >>> from hphawkes_py.scan import outputs
    >>> import tempfile, pathlib
    >>> g = hp.datasets.load_grave()
    >>> res = hp.scan.bernoulli(g[["x", "y"]].to_numpy(), g["case"], 1 - g["case"], n_replicates=9,
    ...                         seed=1, backend="cpu", progress=False)
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "grave.txt"
    >>> [p.name for p in outputs.write_satscan(res, out, geometry=("geojson",))]
    ['grave.txt', 'grave.col.csv', 'grave.gis.csv', 'grave.rr.csv', 'grave.llr.csv', 'grave.clusters.geojson']
    """
    if is_time_result(result):
        return write_time_results(result, results_file, tables=tables, dbase=dbase, report=report, geometry=geometry,
                                  study_period=study_period, gumbel=gumbel, p_values=p_values, penalty=penalty,
                                  title=title)
    _check_result(result)
    report = _check_flag(report, "report")
    _check_flag(gumbel, "gumbel")
    _check_p_values(p_values)
    _period(result, study_period)
    target = Path(results_file).expanduser()
    if target.is_dir():
        raise ValueError(f"results_file {results_file} is a folder; give the report's file name (e.g. "
                         f"{Path(results_file) / 'results.txt'})")
    if not target.parent.is_dir():
        raise ValueError(f"results_file {results_file}: folder {target.parent} does not exist")
    stem = target.name[:-4] if target.name.lower().endswith(".txt") else target.name
    base = target.parent
    if tables is None:
        tables = tuple(t for t in SATSCAN_TABLES
                       if not (t == "rr" and result.model in ("space_time_permutation",) + CATEGORICAL))
    if isinstance(tables, str):
        raise TypeError(f"tables must be a sequence of names from {SATSCAN_TABLES}, got the string {tables!r}")
    if isinstance(geometry, str):
        raise TypeError(f"geometry must be a sequence of names from {_GEOMETRY_FORMATS}, got the string {geometry!r}")
    for t in tables:
        if t not in SATSCAN_TABLES:
            raise ValueError(f"tables: {t!r} is not a SaTScan table; choose from {SATSCAN_TABLES}")
    if isinstance(dbase, (bool, np.bool_)):
        dbase = tuple(tables) if dbase else ()
    elif isinstance(dbase, str):
        raise TypeError(f"dbase must be True/False or a sequence of names from {SATSCAN_TABLES}, got {dbase!r}")
    for t in dbase:
        if t not in SATSCAN_TABLES:
            raise ValueError(f"dbase: {t!r} is not a SaTScan table; choose from {SATSCAN_TABLES}")
    csv_tables = tuple(tables)
    tables = tuple(t for t in SATSCAN_TABLES if t in csv_tables or t in dbase)
    for f in geometry:
        if f not in _GEOMETRY_FORMATS:
            raise ValueError(f"geometry: {f!r} is not a format written here; choose from {_GEOMETRY_FORMATS}")
    if {"kml", "kmz"} & set(geometry) and result.distance != "great_circle":
        raise ValueError("geometry: KML is longitude/latitude and this result has Cartesian coordinates; write "
                         "'geojson' or 'html' instead")
    if dbase or {"shp", "gpkg"} & set(geometry):
        from .geometry import _need_pyogrio

        _need_pyogrio("dBase tables and shapefiles/GeoPackages")
    if "leaflet" in geometry:
        from .maps import _need_folium

        _need_folium()
    builders = {"col": lambda: cluster_table(result, study_period=study_period, gumbel=gumbel, p_values=p_values),
                "gis": lambda: location_table(result, gumbel=gumbel, p_values=p_values),
                "rr": lambda: risk_table(result),
                "llr": lambda: llr_table(result, penalty=penalty)}
    built = {t: builders[t]() for t in tables}
    text = report_text(result, study_period=study_period, title=title, p_values=p_values,
                       gumbel=gumbel) if report else None
    written = []
    if text is not None:
        target.with_name(stem + ".txt").write_text(text)
        written.append(target.with_name(stem + ".txt"))
    shapefile = "shp" in geometry
    for t, df in built.items():
        if t in csv_tables:
            p = base / f"{stem}.{t}.csv"
            df.to_csv(p, index=False)
            written.append(p)
        if t in dbase and not (t == "col" and shapefile):  # the shapefile's .col.dbf is the cluster table
            p = base / f"{stem}.{t}.dbf"
            _write_dbf(df, p)
            written.append(p)
    if geometry:
        from . import geometry as geo

        for f in geometry:
            if f == "geojson":
                written.append(geo.write_geojson(result, base / f"{stem}.clusters.geojson"))
            elif f in ("kml", "kmz"):
                written.append(geo.write_kml(result, base / f"{stem}.{f}"))
            elif f == "shp":
                # as SaTScan: <name>.col.shp with the cluster table as its attribute table <name>.col.dbf
                col = built["col"] if "col" in built else cluster_table(result, study_period=study_period,
                                                                         gumbel=gumbel, p_values=p_values)
                written.append(geo.write_vector(result, base / f"{stem}.col.shp", attributes=col))
                written.append(base / f"{stem}.col.dbf")
            elif f == "gpkg":
                written.append(geo.write_vector(result, base / f"{stem}.gpkg"))
            else:
                from .maps import cluster_map

                html_path = base / (f"{stem}.html" if f == "html" else f"{stem}.leaflet.html")
                written.append(cluster_map(result, html_path, engine="svg" if f == "html" else "folium"))
    return written
