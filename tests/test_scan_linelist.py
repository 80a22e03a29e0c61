"""The cluster line list (results.linelist.csv) and run_prm on SaTScan's own line-list test set.

Reference: SaTScan 10.3.2 run on test/test-sets/linelist/test.prm of its sources (github
scanstatistics/satscan @0cd87a6): its line list (satscan10_results.linelist.csv) and its clusters
(satscan10_clusters.txt), stored in hphawkes_py/data/scan/satscan_tests/linelist.
"""
from __future__ import annotations

import dataclasses
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

import hphawkes_py as hp
from hphawkes_py.scan._prm import prm_arguments
from hphawkes_py.scan.data_sources import DataSource
from hphawkes_py.scan.linelist import cluster_linelist, individual_ids, write_linelist

LL = Path(hp.__file__).parent / "data" / "scan" / "satscan_tests" / "linelist"


def _satscan_clusters() -> list:
    """(locations, start, end, population, cases, expected, LLR) of SaTScan's report."""
    text = (LL / "satscan10_clusters.txt").read_text()
    out = []
    for block in re.split(r"\n(?=\d+\.Location IDs)", text.split("CLUSTERS DETECTED", 1)[1].strip()):
        ids = re.search(r"included\.:(.*?)\n\s+Coordinates", block, re.S).group(1)
        frame = re.search(r"Time frame\.+: (\S+) to (\S+)", block)
        num = {k: float(re.search(rf"{k}\.+: ([\d.]+)", block).group(1))
               for k in ("Population", "Number of cases", "Expected cases", "Log likelihood ratio")}
        out.append(([i.strip() for i in ids.replace("\n", " ").split(",")], *(np.datetime64(d.replace("/", "-")
                    if len(d) == 10 else "-".join(f"{int(x):02d}" for x in d.split("/")), "D") for d in frame.groups()),
                    num["Population"], num["Number of cases"], num["Expected cases"], num["Log likelihood ratio"]))
    return out


@pytest.fixture(scope="module")
def linelist_run(tmp_path_factory):
    """run_prm on a copy of SaTScan's line-list test set (the report and line list written there)."""
    d = tmp_path_factory.mktemp("linelist")
    for f in ("test.prm", "test-run1.cas", "test.ctl", "test.geo"):
        shutil.copy(LL / f, d / f)
    with pytest.warns(UserWarning, match="OutputTemporalGraphHTML"):
        res = hp.scan.run_prm(d / "test.prm", n_replicates=9, seed=1, progress=False, backend="cpu",
                              write_results=True)
    return d, res


def test_linelist_prm_is_read_as_satscan_writes_it():
    spec = prm_arguments(LL / "test.prm")
    case = spec["files"]["case_file"]
    assert spec["model"] == "space_time_bernoulli" and case.kind == "csv" and case.field_map == (4, 5, 6)
    assert case.delimiter == " " and case.grouper == '"' and case.linelist[0] == (6, 0, "IndividualID")
    # 6-month intervals counted back from 2022/12/31; 50 % of 96 months = 8 intervals
    assert len(spec["intervals"]) == 17 and spec["kwargs"]["max_temporal"] == 8 and spec["kwargs"]["prospective"]


def test_run_prm_matches_satscan_clusters(linelist_run):
    _, res = linelist_run
    sat = _satscan_clusters()
    assert len(res.clusters) == len(sat) == 2
    for ours, (ids, start, end, pop, cases, expected, llr) in zip(res.clusters.itertuples(), sat):
        assert sorted(str(i) for i in ours.location_ids) == sorted(ids)
        assert (ours.start, ours.end) == (start, end)
        assert (ours.population, ours.cases) == (pop, cases)
        assert ours.expected == pytest.approx(expected, abs=0.005)
        assert ours.log_likelihood_ratio == pytest.approx(llr, abs=1e-6)


def test_run_prm_writes_satscans_line_list_byte_for_byte(linelist_run):
    d, _ = linelist_run
    assert (d / "results.linelist.csv").read_bytes() == (LL / "satscan10_results.linelist.csv").read_bytes()
    assert (d / "results.txt").is_file() and (d / "results.kmz").is_file()


def _toy(tmp_path, rows, linelist, kind="csv"):
    f = tmp_path / "c.csv"
    f.write_text("".join(",".join(r) + "\n" for r in rows))
    return DataSource(f, kind, field_map=(1, 2), delimiter=",", linelist=linelist)


def _two_clusters():
    """Two overlapping clusters by hand: a ScanResult whose clusters hold A,B and B,C."""
    res = hp.scan.bernoulli([[0, 0], [1, 0], [2, 0], [9, 9]], [3, 2, 2, 0], [0, 1, 1, 6],
                            location_ids=["A", "B", "C", "D"], n_replicates=9, seed=1, min_cases=1, backend="cpu",
                            progress=False)
    cl = res.clusters.iloc[:1].copy()
    cl = cl.loc[cl.index.repeat(2)].reset_index(drop=True)
    cl["location_ids"] = [np.array(["A", "B"], dtype=object), np.array(["B", "C"], dtype=object)]
    cl["p_value"] = [0.01, 0.5]
    return dataclasses.replace(res, clusters=cl)


def test_hierarchy_new_individuals_quoting_and_order(tmp_path):
    src = _toy(tmp_path, [["B", "1", "p1", '"a, b"'], ["D", "1", "p2", "x"], ["A", "2", "p3", "y"],
                          ["C", "1", "p4", "z"]],
               ((3, 3, "Note"), (2, 0, "Person")))
    table = cluster_linelist(_two_clusters(), src, individuals={"p3"})
    # special columns first (individual id), then the others; Hierarchy/New Individual ahead of the id
    assert list(table.columns) == ["Cluster", "Hierarchy", "New Individual", "Person", "Note"]
    assert table.values.tolist() == [
        ["1", "Primary", "New", "p1", "a, b"], ["1", "Primary", "", "p3", "y"], ["1", "Primary", "", "p3", "y"],
        ["2", "Secondary", "New", "p1", "a, b"], ["2", "Primary", "New", "p4", "z"]]
    out = write_linelist(_two_clusters(), src, tmp_path / "r.linelist.csv", individuals={"p3"})
    assert out.read_text().splitlines()[1] == '1,Primary,New,p1,"a, b"'
    # the cutoff on the reported p-value leaves cluster 2 out
    assert set(cluster_linelist(_two_clusters(), src, cutoff=0.05)["Cluster"]) == {"1"}
    assert individual_ids(src) == ["p1", "p2", "p3", "p4"]


def test_no_individual_id_no_hierarchy(tmp_path):
    src = _toy(tmp_path, [["A", "1", "p1", "f"], ["C", "1", "p2", "m"]], ((3, 3, "Sex"),))
    table = cluster_linelist(_two_clusters(), src)
    assert list(table.columns) == ["Cluster", "Sex"] and table.values.tolist() == [["1", "f"], ["2", "m"]]


def test_run_prm_individuals_cache(tmp_path):
    """LineListIndividualCache: the first run's line-list individuals are not New in the next."""
    pts = [("A", 0, 0), ("B", 1, 0), ("C", 8, 8), ("D", 9, 9)]
    (tmp_path / "g.geo").write_text("".join(f"{i} {x} {y}\n" for i, x, y in pts))
    (tmp_path / "c.csv").write_text("id;n;person\nA;1;p1\nA;1;p2\nB;1;p3\nC;1;p4\n")
    (tmp_path / "k.ctl").write_text("A 0\nB 1\nC 5\nD 6\n")
    (tmp_path / "a.prm").write_text("\n".join([
        "[Input]", "CaseFile=c.csv", "CaseFile-SourceType=0", "CaseFile-SourceFieldMap=1,2",
        "CaseFile-SourceDelimiter=;", "CaseFile-SourceFirstRowHeader=y", 'CaseFile-SourceLinelistFieldMap=2:0:"Who"',
        "ControlFile=k.ctl", "CoordinatesFile=g.geo", "CoordinatesType=0", "PrecisionCaseTimes=0",
        "[Analysis]", "AnalysisType=1", "ModelType=1", "ScanAreas=1",
        "[Output]", "ResultsFile=r.txt", "[Cluster Restrictions]", "MinimumCasesInHighRateClusters=1",
        "[Line List]", "LineListIndividualCache=seen.txt", "[Inference]", "MonteCarloReps=9"]) + "\n")
    kw = dict(seed=1, progress=False, backend="cpu", write_results=True)
    hp.scan.run_prm(tmp_path / "a.prm", **kw)
    first = (tmp_path / "r.linelist.csv").read_text().splitlines()
    assert first[0] == "Cluster,Hierarchy,New Individual,Who"
    listed = [ln.split(",")[3] for ln in first[1:]]
    assert listed and all(",New," in ln for ln in first[1:])
    assert (tmp_path / "seen.txt").read_text().split() == listed
    hp.scan.run_prm(tmp_path / "a.prm", **kw)
    second = (tmp_path / "r.linelist.csv").read_text().splitlines()
    assert [ln.split(",")[2] for ln in second[1:]] == [""] * len(listed)


@pytest.mark.parametrize("kwargs, err, match", [
    (dict(cutoff=0), ValueError, "cutoff must be a number > 0"),
    (dict(cutoff=True), ValueError, "cutoff must be"),
    (dict(prospective="yes"), TypeError, "prospective must be True or False"),
    (dict(prospective=True, cutoff=365), ValueError, "recurrence interval"),
    (dict(individuals="p1"), TypeError, "individuals must be a set"),
    (dict(p_values="exact"), ValueError, "p_values must be"),
])
def test_refusals(tmp_path, kwargs, err, match):
    src = _toy(tmp_path, [["A", "1", "p1"]], ((2, 0, "Person"),))
    res = dataclasses.replace(_two_clusters(), n_replicates=999)
    with pytest.raises(err, match=match):
        cluster_linelist(res, src, **kwargs)


def test_refusals_of_inputs(tmp_path):
    src = _toy(tmp_path, [["A", "1", "p1"]], ((2, 0, "Person"),))
    with pytest.raises(TypeError, match="result must be a ScanResult"):
        cluster_linelist("res", src)
    with pytest.raises(TypeError, match="source must be a DataSource"):
        cluster_linelist(_two_clusters(), tmp_path / "c.csv")
    with pytest.raises(ValueError, match="no line-list columns"):
        cluster_linelist(_two_clusters(), DataSource(tmp_path / "c.csv", "csv", delimiter=","))
    with pytest.raises(ValueError, match="its folder does not exist"):
        write_linelist(_two_clusters(), src, tmp_path / "nope" / "r.csv")
    with pytest.raises(TypeError, match="path must be a str or Path"):
        write_linelist(_two_clusters(), src, 3)
    with pytest.raises(TypeError, match="source must be a DataSource"):
        individual_ids("c.csv")


def test_cli_scan_run_out_folder_writes_the_line_list(tmp_path, capsys):
    from hphawkes_py.cli import main

    for f in ("test.prm", "test-run1.cas", "test.ctl", "test.geo"):
        shutil.copy(LL / f, tmp_path / f)
    out = tmp_path / "out"
    rc = main(["scan", "run", str(tmp_path / "test.prm"), "--replicates", "9", "--seed", "1", "--backend", "cpu",
               "-o", str(out), "--png", "", "--quiet"])
    assert rc == 0, capsys.readouterr().err
    assert (out / "test.linelist.csv").read_bytes() == (LL / "satscan10_results.linelist.csv").read_bytes()
    assert (out / "test.txt").is_file()
