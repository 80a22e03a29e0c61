"""The cluster line list: the case records of each reported cluster with the columns the case file's
``CaseFile-SourceLinelistFieldMap`` names, as SaTScan 10.3 writes ``<results>.linelist.csv``
(``DataDemographicsProcessor`` in SaTScan's ``calculation/satscan_data/DataDemographics.cpp``).

* The columns: ``Cluster``; then the line-list columns, the individual id, descriptive latitude and
  descriptive longitude first (in that order, SaTScan's types 0, 1, 2), the others in the order of the
  map; ahead of the individual id, ``Hierarchy`` (``Primary`` when the record's first cluster is this
  one, else ``Secondary``) and ``New Individual`` (``New`` unless the id is in the individuals cache
  of earlier runs, SaTScan's ``LineListIndividualCache``).
* The rows: the clusters in their order, each with the records of the case file that fall in it
  (location in the cluster and, space-time, date within its time frame), in the file's order, a
  record of ``k`` cases written ``k`` times. Records SaTScan does not read (an unknown location,
  a date outside the study period) are left out.
* Which clusters: those whose reporting p-value is at most ``CutoffClusterLinelistCSV`` (SaTScan's
  default 1: every reported cluster); prospective analyses compare a recurrence interval with it,
  which hp.scan does not compute, so there only the default is accepted.
* A value is written in double quotes when it holds a comma (as SaTScan's ``typelist_to_csv_string``).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .data_sources import DataSource, raw_records, read_source
from .result import ScanResult

__all__ = ["cluster_linelist", "individual_ids", "write_linelist"]


def _ordered(linelist) -> list:
    """SaTScan's column order (``getOrderedLinelistFieldsMap``): types 0-2 sorted by type, then the
    others as given."""
    special = sorted((f for f in linelist if f[1] <= 2), key=lambda f: f[1])
    return special + [f for f in linelist if f[1] > 2]


def _date(s: str):
    try:
        y, m, d = (int(x) for x in s.split("/"))
        return np.datetime64(f"{y:04d}-{m:02d}-{d:02d}", "D")
    except ValueError:
        return None


def _check(result, source, cutoff, prospective, individuals):
    if not isinstance(result, ScanResult):
        raise TypeError(f"result must be a ScanResult, got {type(result).__name__}")
    if not isinstance(source, DataSource):
        raise TypeError(f"source must be a DataSource (the case file with its line-list map), got "
                        f"{type(source).__name__}")
    if not source.linelist:
        raise ValueError(f"source {source.path} has no line-list columns (CaseFile-SourceLinelistFieldMap)")
    if isinstance(cutoff, bool) or not isinstance(cutoff, (int, float)) or not cutoff > 0:
        raise ValueError(f"cutoff must be a number > 0 (SaTScan's CutoffClusterLinelistCSV), got {cutoff!r}")
    if not isinstance(prospective, bool):
        raise TypeError(f"prospective must be True or False, got {prospective!r}")
    if prospective and cutoff != 1 and result.n_replicates >= 99:
        raise ValueError(f"cutoff={cutoff!r} in a prospective analysis is a recurrence interval (days), which hp.scan "
                         f"does not compute; use the default 1 (every reported cluster)")
    if individuals is not None and not isinstance(individuals, (set, frozenset, list, tuple)):
        raise TypeError(f"individuals must be a set of individual ids seen before, got {type(individuals).__name__}")


def cluster_linelist(result, source, *, cutoff=1.0, prospective=False, study_period=None, p_values="monte_carlo",
                     individuals=None) -> pd.DataFrame:
    """The cluster line list of ``result``: SaTScan 10.3's ``results.linelist.csv`` as a table.

    Parameters
    ----------
    result : ScanResult
        The analysis of the case file ``source`` describes (``clusters.location_ids``; space-time:
        ``start`` and ``end``).
    source : DataSource
        The case file, its field map giving ``<location id> <#cases> [<date>]`` and its
        ``linelist`` the columns to carry (:class:`~hphawkes_py.scan.data_sources.DataSource`).
    cutoff : float > 0
        SaTScan's ``CutoffClusterLinelistCSV``: clusters with a reported p-value at most this.
    prospective : bool
        Whether the analysis was prospective (then only ``cutoff=1`` is accepted, see above).
    study_period : (datetime64, datetime64), optional
        Records dated outside are left out, as SaTScan does not read them.
    p_values : {"monte_carlo", "gumbel", "default"}
        Which p-value the cutoff is compared with (as :func:`~hphawkes_py.scan.outputs.cluster_table`).
    individuals : set of str, optional
        Individual ids of earlier runs (SaTScan's individuals cache): their rows are not ``New``.

    Returns
    -------
    pandas.DataFrame
        One row per case (a record of k cases: k rows), all columns text, in SaTScan's order.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from hphawkes_py.scan import DataSource, cluster_linelist, write_linelist
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "c.csv").write_text("A,1,p1,f\\nA,1,p2,m\\nB,1,p3,f\\n")
    >>> src = DataSource(d / "c.csv", "csv", field_map=(1, 2), delimiter=",",
    ...                  linelist=((2, 0, "Person"), (3, 3, "Sex")))
    >>> xy, cases, controls = [[0, 0], [5, 5]], [2, 1], [1, 3]
    >>> res = hp.scan.bernoulli(xy, cases, controls, location_ids=["A", "B"], n_replicates=9, seed=1,
    ...                         min_cases=1, backend="cpu", progress=False)
    >>> cluster_linelist(res, src)
      Cluster Hierarchy New Individual Person Sex
    0       1   Primary            New     p1   f
    1       1   Primary            New     p2   m
    """
    from .outputs import _check_p_values, _reported_p

    _check(result, source, cutoff, prospective, individuals)
    p_values = _check_p_values(p_values)
    seen = set(individuals or ())
    cols = _ordered(source.linelist)
    timed = "start" in result.clusters.columns
    clusters = []
    for k, cl in enumerate(result.clusters.itertuples(index=False)):
        if prospective or _reported_p(result, cl, p_values) <= cutoff + 1e-12:
            span = (np.datetime64(cl.start, "D"), np.datetime64(cl.end, "D")) if timed else None
            clusters.append((k + 1, {str(i) for i in cl.location_ids}, span))
    header = ["Cluster"]
    for _, typ, label in cols:
        if typ == 0:
            header += ["Hierarchy", "New Individual"]
        header.append(label)
    mapped = {rec: f for rec, f in read_source(source, "case", 2)}
    rows = {c[0]: [] for c in clusters}
    for rec, _, raw in raw_records(source):
        f = mapped.get(rec)
        if f is None:
            continue
        loc, date = f[0], (_date(f[2]) if timed and len(f) > 2 else None)
        if timed and date is None:
            continue
        if study_period is not None and date is not None and not study_period[0] <= date <= study_period[1]:
            continue
        try:
            n = int(float(f[1]))
        except ValueError:
            continue
        hits = [c for c in clusters if loc in c[1] and (c[2] is None or c[2][0] <= date <= c[2][1])]
        if not hits:
            continue
        values = []
        for col, typ, _ in cols:
            j = col + (2 if source.kind == "shapefile" else 0)  # a shapefile's x, y come first
            v = raw[j].strip() if j < len(raw) else ""
            if typ == 0:
                values.append("New" if v not in seen else "")
            values.append(v)
        for c in hits:
            line = [str(c[0])]
            out = []
            it = iter(values)
            for _, typ, _ in cols:
                if typ == 0:
                    out += ["Primary" if c is hits[0] else "Secondary", next(it)]
                out.append(next(it))
            rows[c[0]].extend([line + out] * n)
    table = [r for c in clusters for r in rows[c[0]]]
    return pd.DataFrame(table, columns=header, dtype=object)


def _csv_value(v: str) -> str:
    return f'"{v}"' if "," in v else v


def write_linelist(result, source, path, **kwargs) -> Path:
    """Write :func:`cluster_linelist` to ``path`` as SaTScan writes ``<results>.linelist.csv``.

    Parameters
    ----------
    result, source
        As in :func:`cluster_linelist`.
    path : str or Path
        The file to write (its folder must exist).
    **kwargs
        ``cutoff``, ``prospective``, ``study_period``, ``p_values``, ``individuals`` of
        :func:`cluster_linelist`.

    Returns
    -------
    Path
        ``path``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from hphawkes_py.scan import DataSource, cluster_linelist, write_linelist
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "c.csv").write_text("A,1,p1\\nA,1,p2\\nB,1,p3\\n")
    >>> src = DataSource(d / "c.csv", "csv", field_map=(1, 2), delimiter=",", linelist=((2, 0, "Person"),))
    >>> res = hp.scan.bernoulli([[0, 0], [5, 5]], [2, 1], [1, 3], location_ids=["A", "B"], n_replicates=9,
    ...                         seed=1, min_cases=1, backend="cpu", progress=False)
    >>> print(write_linelist(res, src, d / "r.linelist.csv").read_text(), end="")
    Cluster,Hierarchy,New Individual,Person
    1,Primary,New,p1
    1,Primary,New,p2
    """
    if not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str or Path, got {type(path).__name__}")
    path = Path(path)
    if path.is_dir() or not path.parent.is_dir():
        raise ValueError(f"path {path} is a folder or its folder does not exist")
    table = cluster_linelist(result, source, **kwargs)
    lines = [",".join(_csv_value(str(h)) for h in table.columns)]
    lines += [",".join(_csv_value(v) for v in row) for row in table.itertuples(index=False)]
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write("\n".join(lines) + "\n")
    return path


def individual_ids(source) -> list:
    """The individual ids of a case file (its line-list column of type 0), in the file's order.

    Parameters
    ----------
    source : DataSource
        The case file with its line-list map.

    Returns
    -------
    list of str
        The ids (empty when no column is the individual id).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from hphawkes_py.scan import DataSource, cluster_linelist, write_linelist
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "c.csv").write_text("A,1,p1\\nB,2,p2\\n")
    >>> individual_ids(DataSource(d / "c.csv", "csv", field_map=(1, 2), delimiter=",", linelist=((2, 0, "Who"),)))
    ['p1', 'p2']
    """
    if not isinstance(source, DataSource):
        raise TypeError(f"source must be a DataSource, got {type(source).__name__}")
    cols = [c for c, typ, _ in source.linelist if typ == 0]
    if not cols:
        return []
    j = cols[0] + (2 if source.kind == "shapefile" else 0)
    return [raw[j].strip() for _, _, raw in raw_records(source) if j < len(raw)]


def prm_linelist(res, spec, case, target):
    """:func:`~hphawkes_py.scan.run_prm`'s line list: SaTScan's cluster line list beside the report (``results.txt`` -> ``results.linelist.csv``),
    the individuals cache (``LineListIndividualCache``) read and updated as SaTScan does: it keeps
    the individuals of this run's line list and those of the cache still in the case file."""
    out = spec["outputs"]
    cache = out["linelist_cache"]
    seen = set()
    if cache is not None and cache.is_file():
        seen = {ln.strip() for ln in cache.read_text(encoding="utf-8").splitlines() if ln.strip()}
    path = write_linelist(res, case, target.with_suffix(".linelist.csv"), cutoff=out["linelist_cutoff"],
                          prospective=bool(spec["kwargs"].get("prospective", False)),
                          study_period=spec["kwargs"].get("study_period", spec["dates"]["study_period"]),
                          p_values=out["p_values"], individuals=seen)
    if cache is not None:
        listed = individual_ids(case)
        table = cluster_linelist(res, case, cutoff=out["linelist_cutoff"],
                                 prospective=bool(spec["kwargs"].get("prospective", False)),
                                 study_period=spec["kwargs"].get("study_period", spec["dates"]["study_period"]),
                                 p_values=out["p_values"], individuals=seen)
        id_col = next(label for _, typ, label in case.linelist if typ == 0)
        keep = [i for i in listed if i in seen] + [i for i in table[id_col] if i not in seen]
        cache.write_text("".join(f"{i}\n" for i in dict.fromkeys(keep)), encoding="utf-8")
    return path
