"""SaTScan's output tables and report for the purely temporal, seasonal and SVTT analyses.

SaTScan 10.3 writes, for a purely temporal or seasonal analysis (``AnalysisType=2, 6, 7``), a
cluster table (``.col``) without coordinates (``LOC_ID`` "All", ``NUMBER_LOC`` 1, the window's
``START_DATE`` / ``END_DATE``; a seasonal window as ``M/D``), a location table (``.gis``) with its
header only (no location is in a purely temporal cluster) and the simulated LLRs (``.llr``); it
refuses the risk estimates (``.rr``) for these analyses, and so does :func:`write_time_results`.

For spatial variation in temporal trends (``AnalysisType=5``) its tables add the trends
(``CalcSVTTLogLikelihood`` and ``LinearTimeTrend``): the ``.col`` has the cluster's circle, the
study period as ``START_DATE`` / ``END_DATE``, ``IN_TREND`` / ``OUT_TREND`` (percent per year, per
unit for generic times) and the log-linear fits ``E c_t = m_t exp(alpha + beta t)`` inside and outside
(``IN_ITRCPT`` = alpha, ``IN_LINEAR`` = beta per unit, ``IN_QUAD`` blank: the trend is linear); the
``.gis`` adds ``CLU_TT_IN``, ``CLU_TT_OUT`` and each location's own trend ``LOC_TREND``; the ``.rr``
gives each location's trend against the trend of all other locations.

Prospective analyses add SaTScan's recurrence interval (``RECURR_INT``, days: one time unit over the
p-value, rounded). What the results do not hold is not made up: the Gumbel p-values and the report's
"Annual cases / 100000" (it needs the population in persons per year).
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from ._output_common import _check_flag, _check_p_values, _date, _location_relative_risk, _span_of, _write_dbf
from ._report_format import _SUMMARY_LABEL, _block_line, _population_text, _significant
from .cpu_temporal import TREND_CONVERGED, fit_trend
from .svtt_model import SVTTResult, _percent
from .temporal_model import TemporalResult
from .time_trend import time_trend_text

__all__ = ["time_cluster_table", "time_location_table", "time_risk_table", "time_llr_table", "time_report_text",
           "write_time_results", "is_time_result"]

#: the tables SaTScan writes for each analysis, by its file extension
_TEMPORAL_TABLES = ("col", "gis", "llr")
_SVTT_TABLES = ("col", "gis", "rr", "llr")


def is_time_result(result) -> bool:
    """Whether ``result`` is a purely temporal / seasonal or an SVTT result (the writers here)."""
    return isinstance(result, (TemporalResult, SVTTResult))


def _check(result):
    if not is_time_result(result):
        raise TypeError(f"result must be a hp.scan TemporalResult (hp.scan.temporal, seasonal) or SVTTResult "
                        f"(hp.scan.svtt), got {type(result).__name__}")
    if result.study_period is None or (isinstance(result, SVTTResult) and result.loc_cases is None):
        raise ValueError("result carries no study period or location data (built by an older version); rerun the scan")


def _day_text(value) -> str:
    """A day as SaTScan writes it: ``YYYY/M/D`` for dates, the number for generic times."""
    if isinstance(value, (np.datetime64, pd.Timestamp)):
        return _date(value)
    return str(int(value))


def _season_text(label: str) -> str:
    """A seasonal ``MM/DD`` as SaTScan writes it (``M/D``)."""
    m, d = label.split("/")
    return f"{int(m)}/{int(d)}"


def _window_text(result, value) -> str:
    return _season_text(value) if result.analysis == "seasonal" else _day_text(value)


def _latlong(result) -> bool:
    return isinstance(result, SVTTResult) and result.distance == "great_circle"


def _trend_fit(c, m):
    """(status, alpha, beta) of one series, alpha and beta NaN where the trend is not finite."""
    st, a, b = fit_trend(np.asarray(c, dtype=float), np.asarray(m, dtype=float))
    return (st, a, b) if st == TREND_CONVERGED else (st, math.nan, math.nan)


def _per(result) -> float:
    """The factor from beta per unit to SaTScan's reported trend (per year for dates, else per unit)."""
    dates = isinstance(result.study_period[0], (np.datetime64, pd.Timestamp))
    return 365.25 / result.time_aggregation if dates else 1.0 / result.time_aggregation


def _location_index(result) -> dict:
    """``{reported id: location}``: the first id of each location, as the clusters report them."""
    return {ids[0]: g for g, ids in enumerate(result.loc_ids)}


def _relative_risk(o, e, total):
    """(O / E) / ((C - O) / (C - E)); NaN where SaTScan leaves it blank (E = 0, C = E, O = C)."""
    if e == 0 or total - e == 0 or total - o == 0:
        return math.nan
    return (o / e) / ((total - o) / (total - e))


def _span(result, locs) -> float:

    return _span_of(np.asarray(result.loc_coords, dtype=float)[np.asarray(sorted(set(locs)), dtype=np.int64)],
                    _latlong(result))


def _recurrence_days(result, p_value) -> float:
    """SaTScan's recurrence interval of a prospective cluster (``RECURR_INT``), in days: one time unit
    over the p-value (the expected time between clusters this unusual under the null), rounded."""
    return float(math.floor(result.time_aggregation / float(p_value) + 0.5))


def _recurrence_text(days: float) -> str:
    """The report's recurrence interval: days below a year, else years to one decimal."""
    years = days / 365.25
    return f"{years:.1f} years" if years >= 1 else f"{days:.0f} days"


def _check_monte_carlo(p_values, gumbel):
    if p_values != "monte_carlo" or gumbel:
        raise ValueError("temporal and SVTT results carry Monte Carlo p-values only: use p_values='monte_carlo' and "
                         "gumbel=False")


def time_cluster_table(result) -> pd.DataFrame:
    """SaTScan's cluster information (``.col``) of a purely temporal, seasonal or SVTT result.

    Parameters
    ----------
    result : TemporalResult or SVTTResult
        The result of :func:`~hphawkes_py.scan.temporal`, :func:`~hphawkes_py.scan.seasonal` or
        :func:`~hphawkes_py.scan.svtt`.

    Returns
    -------
    pandas.DataFrame
        Temporal: ``CLUSTER, LOC_ID`` ("All"), ``START_DATE, END_DATE`` (the window), ``NUMBER_LOC``
        (1), ``LLR, P_VALUE``, ``RECURR_INT`` (prospective), ``OBSERVED, EXPECTED, ODE, REL_RISK``, ``POPULATION`` (Bernoulli),
        ``GINI_CLUST``. SVTT: ``CLUSTER, LOC_ID`` (the centre), ``X, Y`` (or ``LATITUDE,
        LONGITUDE``), ``RADIUS, SPAN, START_DATE, END_DATE`` (the study period), ``NUMBER_LOC,
        LLR, P_VALUE, OBSERVED, EXPECTED, ODE, REL_RISK, POPULATION, IN_TREND, OUT_TREND,
        IN_ITRCPT, IN_LINEAR, IN_QUAD, OUT_ITRCPT, OUT_LINEAR, OUT_QUAD, GINI_CLUST``.

    Examples
    --------
    >>> from hphawkes_py.scan import outputs_temporal
    >>> res = hp.scan.temporal(np.arange(60), np.r_[np.ones(50, int), np.full(10, 4)], n_replicates=19, seed=1,
    ...                        backend="cpu", progress=False)
    >>> col = outputs_temporal.time_cluster_table(res)
    >>> print(list(col.columns[:5]), col.loc[0, "START_DATE"], col.loc[0, "OBSERVED"])
    ['CLUSTER', 'LOC_ID', 'START_DATE', 'END_DATE', 'NUMBER_LOC'] 50 40
    """
    _check(result)
    if isinstance(result, SVTTResult):
        return _svtt_cluster_table(result)
    bern = result.model == "bernoulli"
    recurr = result.analysis == "prospective"
    cols = (["CLUSTER", "LOC_ID", "START_DATE", "END_DATE", "NUMBER_LOC", "LLR", "P_VALUE"]
            + (["RECURR_INT"] if recurr else []) + ["OBSERVED", "EXPECTED", "ODE", "REL_RISK"]
            + (["POPULATION"] if bern else []) + ["GINI_CLUST"])
    rows = []
    for k, cl in enumerate(result.clusters.itertuples(index=False)):
        rr = float(cl.relative_risk)
        r = {"CLUSTER": k + 1, "LOC_ID": "All", "START_DATE": _window_text(result, cl.start),
             "END_DATE": _window_text(result, cl.end), "NUMBER_LOC": 1, "LLR": float(cl.log_likelihood_ratio),
             "P_VALUE": float(cl.p_value), "OBSERVED": int(cl.cases), "EXPECTED": float(cl.expected),
             "ODE": float(cl.observed_over_expected), "REL_RISK": rr if math.isfinite(rr) else math.nan,
             "GINI_CLUST": "F"}
        if bern:
            r["POPULATION"] = float(cl.population)
        if recurr:
            r["RECURR_INT"] = _recurrence_days(result, cl.p_value)
        rows.append(r)
    return pd.DataFrame(rows, columns=cols)


def _fits(result, mem):
    """The log-linear fits inside and outside the locations ``mem``: ((alpha, beta), (alpha, beta))."""
    c, m = result.loc_cases, result.loc_expected
    inside = np.zeros(len(c), dtype=bool)
    inside[list(mem)] = True
    return _trend_fit(c[inside].sum(axis=0), m[inside].sum(axis=0)), \
        _trend_fit(c[~inside].sum(axis=0), m[~inside].sum(axis=0))


def _svtt_cluster_table(result) -> pd.DataFrame:
    loc = _location_index(result)
    a, b = ("LATITUDE", "LONGITUDE") if _latlong(result) else ("X", "Y")
    cols = ["CLUSTER", "LOC_ID", a, b, "RADIUS", "SPAN", "START_DATE", "END_DATE", "NUMBER_LOC", "LLR", "P_VALUE",
            "OBSERVED", "EXPECTED", "ODE", "REL_RISK", "POPULATION", "IN_TREND", "OUT_TREND", "IN_ITRCPT",
            "IN_LINEAR", "IN_QUAD", "OUT_ITRCPT", "OUT_LINEAR", "OUT_QUAD", "GINI_CLUST"]
    start, end = (_day_text(d) for d in result.study_period)
    rows = []
    for k, cl in enumerate(result.clusters.itertuples(index=False)):
        mem = [loc[i] for i in cl.location_ids]
        centre = result.loc_coords[loc[cl.center]]
        (_, ai, bi), (_, ao, bo) = _fits(result, mem)
        rr = float(cl.relative_risk)
        rows.append({"CLUSTER": k + 1, "LOC_ID": str(cl.center), a: float(centre[0]), b: float(centre[1]),
                     "RADIUS": float(cl.radius), "SPAN": _span(result, mem), "START_DATE": start, "END_DATE": end,
                     "NUMBER_LOC": int(cl.n_locations), "LLR": float(cl.log_likelihood_ratio),
                     "P_VALUE": float(cl.p_value), "OBSERVED": int(cl.cases), "EXPECTED": float(cl.expected),
                     "ODE": float(cl.observed_over_expected), "REL_RISK": rr if math.isfinite(rr) else math.nan,
                     "POPULATION": float(cl.population), "IN_TREND": float(cl.inside_trend),
                     "OUT_TREND": float(cl.outside_trend), "IN_ITRCPT": ai, "IN_LINEAR": bi, "IN_QUAD": math.nan,
                     "OUT_ITRCPT": ao, "OUT_LINEAR": bo, "OUT_QUAD": math.nan, "GINI_CLUST": "F"})
    return pd.DataFrame(rows, columns=cols)


def time_location_table(result) -> pd.DataFrame:
    """SaTScan's location information (``.gis``) of a purely temporal, seasonal or SVTT result.

    A purely temporal cluster holds no location: SaTScan writes the header only (``LOC_ID,
    CLUSTER, P_VALUE, CLU_OBS, CLU_EXP, CLU_ODE, CLU_RR``, [``CLU_POP``], ``LOC_OBS, LOC_EXP,
    LOC_ODE, LOC_RR``, [``LOC_POP``], ``GINI_CLUST``; the populations for Bernoulli), and so does
    this (with ``RECURR_INT`` after ``P_VALUE`` for prospective analyses). SVTT: each location of each cluster, ``LOC_ID, CLUSTER, P_VALUE, CLU_OBS, CLU_EXP,
    CLU_ODE, CLU_RR, CLU_POP, CLU_TT_IN, CLU_TT_OUT, LOC_OBS, LOC_EXP, LOC_ODE, LOC_RR, LOC_POP,
    LOC_TREND`` (the location's own trend), ``LOC_X, LOC_Y`` (or ``LOC_LAT, LOC_LONG``), ``GINI_CLUST``.

    Parameters
    ----------
    result : TemporalResult or SVTTResult

    Returns
    -------
    pandas.DataFrame

    Examples
    --------
    >>> from hphawkes_py.scan import outputs_temporal
    >>> res = hp.scan.temporal(np.arange(60), np.r_[np.ones(50, int), np.full(10, 4)], n_replicates=19, seed=1,
    ...                        backend="cpu", progress=False)
    >>> gis = outputs_temporal.time_location_table(res)
    >>> len(gis), list(gis.columns[:3])
    (0, ['LOC_ID', 'CLUSTER', 'P_VALUE'])
    """
    _check(result)
    if isinstance(result, TemporalResult):
        pop = result.model == "bernoulli"
        recurr = ["RECURR_INT"] if result.analysis == "prospective" else []
        cols = (["LOC_ID", "CLUSTER", "P_VALUE"] + recurr + ["CLU_OBS", "CLU_EXP", "CLU_ODE", "CLU_RR"] + (["CLU_POP"] if pop else [])
                + ["LOC_OBS", "LOC_EXP", "LOC_ODE", "LOC_RR"] + (["LOC_POP"] if pop else []) + ["GINI_CLUST"])
        return pd.DataFrame(columns=cols)

    loc = _location_index(result)
    a, b = ("LOC_LAT", "LOC_LONG") if _latlong(result) else ("LOC_X", "LOC_Y")
    per = _per(result)
    C = float(result.n_cases)
    rows = []
    for k, cl in enumerate(result.clusters.itertuples(index=False)):
        rr = float(cl.relative_risk)
        for lid in cl.location_ids:
            g = loc[lid]
            o, e = int(result.loc_cases[g].sum()), float(result.loc_expected[g].sum())
            st, _, beta = fit_trend(result.loc_cases[g].astype(float), result.loc_expected[g])
            rows.append({"LOC_ID": str(lid), "CLUSTER": k + 1, "P_VALUE": float(cl.p_value), "CLU_OBS": int(cl.cases),
                         "CLU_EXP": float(cl.expected), "CLU_ODE": float(cl.observed_over_expected),
                         "CLU_RR": rr if math.isfinite(rr) else math.nan, "CLU_POP": float(cl.population),
                         "CLU_TT_IN": float(cl.inside_trend), "CLU_TT_OUT": float(cl.outside_trend),
                         "LOC_OBS": o, "LOC_EXP": e, "LOC_ODE": o / e if e > 0 else math.nan,
                         "LOC_RR": _location_relative_risk(o, e, C), "LOC_POP": float(result.loc_population[g]),
                         "LOC_TREND": _percent(st, beta, per), a: float(result.loc_coords[g, 0]),
                         b: float(result.loc_coords[g, 1]), "GINI_CLUST": "F"})
    cols = ["LOC_ID", "CLUSTER", "P_VALUE", "CLU_OBS", "CLU_EXP", "CLU_ODE", "CLU_RR", "CLU_POP", "CLU_TT_IN",
            "CLU_TT_OUT", "LOC_OBS", "LOC_EXP", "LOC_ODE", "LOC_RR", "LOC_POP", "LOC_TREND", a, b, "GINI_CLUST"]
    return pd.DataFrame(rows, columns=cols)


def time_risk_table(result) -> pd.DataFrame:
    """SaTScan's risk estimates for each location (``.rr``) of an SVTT result: ``LOC_ID, OBSERVED,
    EXPECTED, ODE, REL_RISK``, the location's trend ``IN_TREND`` against the trend of all other
    locations ``OUT_TREND``, and their fits ``IN_ITRCPT, IN_LINEAR, IN_QUAD, OUT_ITRCPT,
    OUT_LINEAR, OUT_QUAD`` (quadratic terms blank), locations in the order of their ids as text.

    Parameters
    ----------
    result : SVTTResult

    Returns
    -------
    pandas.DataFrame
        One row per location (identical coordinates merged, named ``"<first id> et al"``).

    Raises
    ------
    ValueError
        For a purely temporal or seasonal result: SaTScan does not permit the risk estimates for
        those analyses (there are no locations).

    Examples
    --------
    >>> from hphawkes_py.scan import outputs_temporal
    >>> xy = np.repeat([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [5.0, 5.0]], 6, axis=0)
    >>> t = np.tile(np.arange(6), 4)
    >>> res = hp.scan.svtt(xy, t, np.where(np.arange(24) < 6, 2 ** t, 4), np.full(24, 1000), max_population=0.3,
    ...                    n_replicates=19, seed=1, backend="cpu", progress=False)
    >>> rr = outputs_temporal.time_risk_table(res)
    >>> print(len(rr), round(rr.loc[0, "IN_TREND"], 3))
    4 100.0
    """
    _check(result)
    if isinstance(result, TemporalResult):
        raise ValueError(f"the risk table (.rr) is not defined for a {result.analysis} purely temporal analysis "
                         f"(SaTScan does not permit it: there are no locations); write tables=('col', 'gis', 'llr')")
    per = _per(result)
    C = float(result.n_cases)
    rows = []
    for g, ids in enumerate(result.loc_ids):
        o, e = int(result.loc_cases[g].sum()), float(result.loc_expected[g].sum())
        (si, ai, bi), (so, ao, bo) = _fits(result, [g])
        rows.append({"LOC_ID": str(ids[0]) + (" et al" if len(ids) > 1 else ""), "OBSERVED": o, "EXPECTED": e,
                     "ODE": o / e if e > 0 else math.nan, "REL_RISK": _relative_risk(o, e, C),
                     "IN_TREND": _percent(si, bi, per), "OUT_TREND": _percent(so, bo, per), "IN_ITRCPT": ai,
                     "IN_LINEAR": bi, "IN_QUAD": math.nan, "OUT_ITRCPT": ao, "OUT_LINEAR": bo, "OUT_QUAD": math.nan})
    rows.sort(key=lambda r: r["LOC_ID"])
    return pd.DataFrame(rows, columns=["LOC_ID", "OBSERVED", "EXPECTED", "ODE", "REL_RISK", "IN_TREND", "OUT_TREND",
                                       "IN_ITRCPT", "IN_LINEAR", "IN_QUAD", "OUT_ITRCPT", "OUT_LINEAR", "OUT_QUAD"])


def time_llr_table(result) -> pd.DataFrame:
    """SaTScan's simulated log likelihood ratios (``.llr``): column ``LLR``, one row per replicate.

    Parameters
    ----------
    result : TemporalResult or SVTTResult

    Returns
    -------
    pandas.DataFrame

    Examples
    --------
    >>> from hphawkes_py.scan import outputs_temporal
    >>> res = hp.scan.temporal(np.arange(60), np.r_[np.ones(50, int), np.full(10, 4)], n_replicates=19, seed=1,
    ...                        backend="cpu", progress=False)
    >>> outputs_temporal.time_llr_table(res).shape
    (19, 1)
    """
    _check(result)
    return pd.DataFrame({"LLR": np.asarray(result.null_llr, dtype=float)})


def _trend_text(v: float) -> str:
    """A trend as SaTScan's report shows it (``3.123% annual increase``)."""
    return f"{abs(v):.3f}% annual {'increase' if v >= 0 else 'decrease'}"


def time_report_text(result, *, title: str | None = None) -> str:
    """The main results report (``.txt``) of a purely temporal, seasonal or SVTT result: the
    summary of the data and the cluster blocks as SaTScan 10 formats them (see
    :func:`~hphawkes_py.scan.outputs.report_text`).

    Parameters
    ----------
    result : TemporalResult or SVTTResult
    title : str, optional
        A title line (SaTScan's ``ResultsTitle``).

    Returns
    -------
    str

    Examples
    --------
    >>> from hphawkes_py.scan import outputs_temporal
    >>> res = hp.scan.temporal(np.arange(60), np.r_[np.ones(50, int), np.full(10, 4)], n_replicates=19, seed=1,
    ...                        backend="cpu", progress=False)
    >>> txt = outputs_temporal.time_report_text(res)
    >>> print(txt[txt.index("1.Location"):].splitlines()[1])
      Time frame............: 50 to 59
    """
    _check(result)

    rule = "_" * 95
    svtt = isinstance(result, SVTTResult)
    what = ("spatial variation in temporal trends, Poisson" if svtt else
            f"{result.analysis} {'seasonal' if result.analysis == 'seasonal' else 'purely temporal'}, {result.model}")
    lines = ([title, ""] if title else []) + [f"{what} (hphawkes_py; cluster blocks as SaTScan 10 writes them)"]
    if getattr(result, "time_trend", None) is not None:
        lines.append(time_trend_text(result.time_trend) + ".")
    lines += [rule, "", "SUMMARY OF DATA", ""]

    def summary(label, value):
        lines.append(label.ljust(_SUMMARY_LABEL, ".") + ": " + value)

    summary("Study period", " to ".join(_day_text(d) for d in result.study_period))
    if svtt:
        summary("Number of locations", str(len(result.loc_ids)))
        summary("Population, averaged over time", _population_text(float(result.loc_population.sum())))
    elif result.model == "bernoulli":
        summary("Total population", _population_text(float(result.n_population)))
    summary("Total number of cases", str(int(result.n_cases)))
    if svtt:
        summary("Time trend", _trend_text(result.global_trend))
    elif result.model == "bernoulli":
        summary("Percent cases", _significant(100.0 * result.n_cases / result.n_population, 1))
    lines += [rule, "", "CLUSTERS DETECTED", ""]
    if not len(result.clusters):
        lines.append("No clusters were found.")
    digits = len(str(len(result.null_llr)))
    loc = _location_index(result) if svtt else None
    for k, cl in enumerate(result.clusters.itertuples(index=False)):
        rank = k + 1

        def add(label, value, first=False):
            lines.append(_block_line(label, value, rank if first else None, rank))

        if svtt:
            mem = [loc[i] for i in cl.location_ids]
            add("Location IDs included", ", ".join(str(v) for v in cl.location_ids), first=True)
            x, y = (float(v) for v in result.loc_coords[loc[cl.center]])
            if _latlong(result):
                add("Coordinates / radius", f"({abs(x):.6f} {'N' if x >= 0 else 'S'}, {abs(y):.6f} "
                                            f"{'E' if y >= 0 else 'W'}) / {_significant(float(cl.radius))} km")
                add("Span", f"{_significant(_span(result, mem))} km")
            else:
                add("Coordinates / radius", f"({x:g},{y:g}) / {_significant(float(cl.radius))}")
                add("Span", _significant(_span(result, mem)))
            add("Population", _population_text(float(cl.population)))
        else:
            add("Location IDs included", "All", first=True)
            add("Time frame", f"{_window_text(result, cl.start)} to {_window_text(result, cl.end)}")
            if result.model == "bernoulli":
                add("Population", _population_text(float(cl.population)))
        add("Number of cases", str(int(cl.cases)))
        add("Expected cases", _significant(float(cl.expected)))
        add("Observed / expected", _significant(float(cl.observed_over_expected)))
        add("Relative risk", _significant(float(cl.relative_risk)))
        if not svtt and result.model == "bernoulli":
            add("Percent cases in area", _significant(100.0 * cl.cases / cl.population if cl.population else 0.0, 1))
        if svtt:
            add("Inside time trend", _trend_text(float(cl.inside_trend)))
            add("Outside time trend", _trend_text(float(cl.outside_trend)))
        add("Log likelihood ratio", f"{float(cl.log_likelihood_ratio):f}")
        add("P-value", f"{float(cl.p_value):.{digits}f}")
        if not svtt and result.analysis == "prospective":
            add("Recurrence interval", _recurrence_text(_recurrence_days(result, cl.p_value)))
        lines.append("")
    return "\n".join(lines) + "\n"


def write_time_results(result, results_file, *, tables=None, dbase=False, report=True, geometry=(),
                       study_period=None, gumbel=False, p_values="monte_carlo", penalty=None, title=None) -> list:
    """:func:`~hphawkes_py.scan.write_satscan` for a purely temporal, seasonal or SVTT result.

    Parameters
    ----------
    result : TemporalResult or SVTTResult
    results_file, tables, dbase, report, title
        As in :func:`~hphawkes_py.scan.write_satscan`; the default tables are those SaTScan
        writes for the analysis (``col``, ``gis``, ``llr``; SVTT also ``rr``).
    geometry, study_period, gumbel, p_values, penalty
        Refused unless left at their defaults: these results have no cluster geometry here, carry
        their own study period and Monte Carlo p-values only, and no elliptic windows.

    Returns
    -------
    list of pathlib.Path
        The files written, in the order written (every table built before the first is written).

    Examples
    --------
    >>> from hphawkes_py.scan import outputs_temporal
    >>> import tempfile, pathlib
    >>> res = hp.scan.temporal(np.arange(60), np.r_[np.ones(50, int), np.full(10, 4)], n_replicates=19, seed=1,
    ...                        backend="cpu", progress=False)
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "t.txt"
    >>> [p.name for p in outputs_temporal.write_time_results(res, out)]
    ['t.txt', 't.col.csv', 't.gis.csv', 't.llr.csv']
    """

    _check(result)
    report = _check_flag(report, "report")
    _check_monte_carlo(_check_p_values(p_values), _check_flag(gumbel, "gumbel"))
    kind = "an SVTT" if isinstance(result, SVTTResult) else f"a {result.analysis} temporal"
    if isinstance(geometry, str) or len(tuple(geometry)):
        raise ValueError(f"geometry: {kind} result has no cluster geometry here; write its tables (geometry=())")
    if study_period is not None:
        raise ValueError(f"study_period: {kind} result carries its own study period "
                         f"({' to '.join(_day_text(d) for d in result.study_period)}); leave study_period=None")
    if penalty is not None:
        raise ValueError(f"penalty: {kind} result has no elliptic windows; leave penalty=None")
    if title is not None and not isinstance(title, str):
        raise TypeError(f"title must be None or a string, got {type(title).__name__}")
    allowed = _SVTT_TABLES if isinstance(result, SVTTResult) else _TEMPORAL_TABLES
    target = Path(results_file).expanduser()
    if target.is_dir():
        raise ValueError(f"results_file {results_file} is a folder; give the report's file name (e.g. "
                         f"{Path(results_file) / 'results.txt'})")
    if not target.parent.is_dir():
        raise ValueError(f"results_file {results_file}: folder {target.parent} does not exist")
    if tables is None:
        tables = allowed
    if isinstance(tables, str):
        raise TypeError(f"tables must be a sequence of names from {allowed}, got the string {tables!r}")
    if isinstance(dbase, (bool, np.bool_)):
        dbase = tuple(tables) if dbase else ()
    elif isinstance(dbase, str):
        raise TypeError(f"dbase must be True/False or a sequence of names from {allowed}, got {dbase!r}")
    for what, names in (("tables", tables), ("dbase", dbase)):
        for t in names:
            if t == "rr" and t not in allowed:
                time_risk_table(result)  # raises SaTScan's refusal
            if t not in allowed:
                raise ValueError(f"{what}: {t!r} is not a SaTScan table of this analysis; choose from {allowed}")
    if dbase:
        from .geometry import _need_pyogrio

        _need_pyogrio("dBase tables")
    csv_tables = tuple(tables)
    builders = {"col": time_cluster_table, "gis": time_location_table, "rr": time_risk_table, "llr": time_llr_table}
    built = {t: builders[t](result) for t in allowed if t in csv_tables or t in dbase}
    stem = target.name[:-4] if target.name.lower().endswith(".txt") else target.name
    written = []
    if report:
        p = target.with_name(stem + ".txt")
        p.write_text(time_report_text(result, title=title))
        written.append(p)
    for t, df in built.items():
        if t in csv_tables:
            p = target.parent / f"{stem}.{t}.csv"
            df.to_csv(p, index=False)
            written.append(p)
        if t in dbase:
            p = target.parent / f"{stem}.{t}.dbf"
            _write_dbf(df, p)
            written.append(p)
    return written
