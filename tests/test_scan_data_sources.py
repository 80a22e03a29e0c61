"""SaTScan's data sources (CSV, dBase, shapefile through ``<File>-Source...`` settings), SaTScan's time
intervals (TimeAggregationUnits/Length), and run_prm's normal and exponential models.

References: SaTScan's own unit test of its data sources (``test/unittest_DataSource.cpp`` of
github scanstatistics/satscan @0cd87a6) on its test set (copied in
hphawkes_py/data/scan/satscan_tests/datasources); the same analysis run from SaTScan's native files;
SaTScan 10.3.2's output for the normal and exponential models (the fixtures of test_scan_normal.py and
test_scan_exponential.py, made by running SaTScan).
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import hphawkes_py as hp
from hphawkes_py.scan._prm import prm_arguments
from hphawkes_py.scan._satscan import interval_of, time_interval_starts, time_units_in_period
from hphawkes_py.scan.data_sources import DataSource, parse_linelist_map, read_source, source_from_prm

DS = Path(hp.__file__).parent / "data" / "scan" / "satscan_tests" / "datasources"
OUT = Path(hp.__file__).parent / "data" / "scan" / "satscan_outputs"
SAT = hp.datasets.satscan_sample_path

# SaTScan's unit test (unittest_DataSource.cpp): the records of location1..location10 of its test set
_IDS = [f"location{i}" for i in range(1, 11)]
_COUNTS = ["5", "1", "2", "5", "1", "5", "4", "3", "5", "2"]
_DATES = ["2014/2/23", "2014/9/26", "2014/8/17", "2014/11/8", "2014/5/7", "2014/9/9", "2014/12/2", "2014/11/9",
          "2014/1/17", "2014/12/27"]
_POP = ["2081.54", "7842", "1140.65", "107.511", "9659.11", "4990.75", "8702.27", "7099.69", "9122.87", "9964.52"]
_LAT = [76.6966, -70.1657, -44.3045, 63.8561, 15.2246, 31.9006, 22.6314, 28.0106, 48.5819, 40.4188]
_LONG = [23.9392, 67.3374, 24.1842, 96.0248, -6.18035, -72.8662, 42.6784, 92.2593, 95.8949, 57.8722]


def _fields(src):
    return [f for _, f in read_source(src)]


def test_csv_meta_rows_header_and_blank_lines_as_satscan():
    # two lines of meta data, a header, blank lines between records (SaTScan skips them)
    src = DataSource(DS / "test_cas.csv", "csv", delimiter=",", skip=2, header=True)
    assert _fields(src) == [list(r) for r in zip(_IDS, _COUNTS, _DATES)]
    # the record numbers are the file's lines
    assert [n for n, _ in read_source(src)][:3] == [4, 5, 6]


def test_white_space_file_and_field_map_of_many_columns():
    assert _fields(DataSource(DS / "test.cas", "csv")) == [list(r) for r in zip(_IDS, _COUNTS, _DATES)]
    want = [["location1", "45", "2014/2/23"], ["location2", "17", "2014/9/26"]]
    # fields 5, 6, 7 of a tab-separated file; of a CSV file with an all-empty record (",,,,") skipped
    assert _fields(DataSource(DS / "test_many_columns.cas", "csv", field_map=(5, 6, 7)))[:2] == want
    assert _fields(DataSource(DS / "test_many_columns.csv", "csv", delimiter=",", field_map=(5, 6, 7)))[:2] == want


@pytest.mark.parametrize("name, fmap", [("test_cas.dbf", ()), ("test_many_columns.dbf", (5, 6, 7))])
def test_dbase(name, fmap):
    pytest.importorskip("pyogrio")
    got = _fields(DataSource(DS / name, "dbase", field_map=fmap))
    if fmap:
        assert got[:2] == [["location1", "45", "2014/2/23"], ["location2", "17", "2014/9/26"]]
    else:
        assert got == [list(r) for r in zip(_IDS, _COUNTS, _DATES)]


def test_shapefile_generated_fields_and_points():
    pytest.importorskip("pyogrio")
    shp = DS / "test_shapefile.shp"
    assert _fields(DataSource(shp, "shapefile", field_map=("generatedId", "oneCount"))) == [[i, "1"] for i in _IDS]
    assert _fields(DataSource(shp, "shapefile", field_map=("generatedId", "unspecifiedPopDate", 1))) == [
        [i, "unspecified", p] for i, p in zip(_IDS, _POP)]
    # SaTScan's shapeX is the point's y (the latitude), shapeY its x (unittest_DataSource.cpp)
    got = _fields(DataSource(shp, "shapefile", field_map=("generatedId", "shapeX", "shapeY")))
    assert [g[0] for g in got] == _IDS
    np.testing.assert_allclose([float(g[1]) for g in got], _LAT, atol=5e-5)
    np.testing.assert_allclose([float(g[2]) for g in got], _LONG, atol=5e-5)


def test_grouper_delimiter_and_escaped_grouper(tmp_path):
    f = tmp_path / "a.txt"
    f.write_text("'x;1';2;'it''s'\n\n ; ;\n'y';3;z\n")
    src = DataSource(f, "csv", delimiter=";", grouper="'")
    assert read_source(src) == [(1, ["x;1", "2", "it's"]), (4, ["y", "3", "z"])]
    # a white-space file keeps quoted blanks inside a field and joins runs of blanks
    g = tmp_path / "b.txt"
    g.write_text('"New York"    3\t  "a ""b"""\n')
    assert read_source(DataSource(g, "csv")) == [(1, ["New York", "3", 'a "b"'])]
    # generated ids count every line read, the skipped ones included, less blank lines (SaTScan's ids)
    h = tmp_path / "c.txt"
    h.write_text("meta\nA 1\n\nB 2\n")
    assert _fields(DataSource(h, "csv", skip=1, field_map=("generatedId", 2))) == [["location2", "1"],
                                                                                  ["location3", "2"]]


def test_prm_settings_parsed_as_satscan_writes_them(tmp_path):
    f = tmp_path / "x.cas"
    f.write_text("a b c\n")

    def bad(key, why):
        return ValueError(f"{key}: {why}")

    v = {"CaseFile-SourceType": "0", "CaseFile-SourceFieldMap": "4,,oneCount", "CaseFile-SourceDelimiter": '" "',
         "CaseFile-SourceGrouper": '"', "CaseFile-SourceSkip": "0", "CaseFile-SourceFirstRowHeader": "n",
         "CaseFile-SourceLinelistFieldMap": '6:0:"IndividualID",0:3:"Race, self-reported",2:3:"Age: group"'}
    src = source_from_prm(v, "CaseFile", f, bad)
    assert src.kind == "csv" and src.delimiter == " " and src.grouper == '"' and not src.header
    assert src.field_map == (4, None, "oneCount")
    assert src.linelist == ((6, 0, "IndividualID"), (0, 3, "Race, self-reported"), (2, 3, "Age: group"))
    assert source_from_prm({}, "CaseFile", f, bad) is None
    assert source_from_prm({"CaseFile-SourceType": "1"}, "CaseFile", f, bad).kind == "dbase"


@pytest.mark.parametrize("changes, match", [
    ({"CaseFile-SourceType": "3"}, "CaseFile-SourceType.*must be 0 \\(CSV\\), 1 \\(dBase\\) or 2"),
    ({"CaseFile-SourceType": "2"}, "CaseFile-SourceFieldMap.*required for a shapefile"),
    ({"CaseFile-SourceFieldMap": "1,shapeX"}, "shapeX/shapeY, which only a shapefile"),
    ({"CaseFile-SourceFieldMap": "1,two"}, "item 'two' is not a column number"),
    ({"CaseFile-SourceFieldMap": "0,1"}, "column 0 must be >= 1"),
    ({"CaseFile-SourceDelimiter": ";;"}, "CaseFile-SourceDelimiter.*one character"),
    ({"CaseFile-SourceGrouper": "ab"}, "CaseFile-SourceGrouper.*one character"),
    ({"CaseFile-SourceSkip": "-1"}, "CaseFile-SourceSkip.*whole number"),
    ({"CaseFile-SourceFirstRowHeader": "maybe"}, "CaseFile-SourceFirstRowHeader.*y or n"),
    ({"CaseFile-SourceLinelistFieldMap": "1:9:\"x\""}, "type one of"),
    ({"CaseFile-SourceLinelistFieldMap": "1:0"}, "column:type"),
])
def test_prm_source_refusals(tmp_path, changes, match):
    f = tmp_path / "x.cas"
    f.write_text("a b c\n")

    def bad(key, why):
        return ValueError(f"{key}={changes.get(key)!r}: {why}")

    with pytest.raises(ValueError, match=match):
        source_from_prm(changes, "CaseFile", f, bad)


@pytest.mark.parametrize("kwargs, match", [
    (dict(kind="excel"), "kind must be"),
    (dict(field_map=(0,)), r"field_map\[0\] = 0"),
    (dict(field_map=("shapeX",)), "shapefile sources only"),
    (dict(kind="shapefile"), "needs a field_map"),
    (dict(delimiter=",,"), "delimiter must be one character"),
    (dict(skip=-2), "skip must be"),
    (dict(linelist=((1, 7, "x"),)), r"linelist\[0\]"),
])
def test_data_source_refusals(tmp_path, kwargs, match):
    with pytest.raises(ValueError, match=match):
        DataSource(tmp_path / "a.csv", **kwargs)
    with pytest.raises(TypeError, match="path must be"):
        DataSource(3)
    with pytest.raises(TypeError, match="src must be a DataSource"):
        read_source(tmp_path / "a.csv")


def _nhumberside_sources(tmp_path) -> Path:
    """SaTScan's North Humberside Bernoulli sample with its three files as the GUI's import wizard
    would describe them: cases in a ';' CSV with meta rows, a header and swapped columns; controls in
    a dBase table; coordinates in a point shapefile."""
    pyogrio = pytest.importorskip("pyogrio")
    shapely = pytest.importorskip("shapely")
    src = SAT("NHumbersideSpatialBernoulli.prm")
    cas = [ln.split() for ln in src.with_name("NHumberside.cas").read_text().splitlines() if ln.strip()]
    ctl = [ln.split() for ln in src.with_name("NHumberside.ctl").read_text().splitlines() if ln.strip()]
    geo = [ln.split() for ln in src.with_name("NHumberside.geo").read_text().splitlines() if ln.strip()]
    (tmp_path / "cases.csv").write_text("exported 2024\nby hand\ncount;postcode\n" +
                                        "".join(f"{n};'{i}'\n" for i, n in cas))
    pyogrio.raw.write(tmp_path / "controls.dbf", None, [np.array([i for i, _ in ctl], dtype=object),
                                                        np.array([int(n) for _, n in ctl])],
                      fields=["PCODE", "N"], driver="ESRI Shapefile", geometry_type=None)
    # shapeX gives the point's y: the .geo's x goes in y, its y in x
    pts = shapely.to_wkb(shapely.points([[float(y), float(x)] for _, x, y in geo]))
    pyogrio.raw.write(tmp_path / "geo.shp", pts, [np.array([i for i, _, _ in geo], dtype=object)], fields=["PCODE"],
                      driver="ESRI Shapefile", geometry_type="Point", crs="EPSG:27700")
    text = src.read_text().replace("CaseFile=NHumberside.cas", "\n".join([
        "CaseFile=cases.csv", "CaseFile-SourceType=0", "CaseFile-SourceFieldMap=2,1", "CaseFile-SourceDelimiter=;",
        "CaseFile-SourceGrouper='", "CaseFile-SourceSkip=2", "CaseFile-SourceFirstRowHeader=y"]))
    text = text.replace("ControlFile=NHumberside.ctl", "ControlFile=controls.dbf\nControlFile-SourceType=1\n"
                                                       "ControlFile-SourceFieldMap=1,2")
    text = text.replace("CoordinatesFile=NHumberside.geo", "CoordinatesFile=geo.shp\nCoordinatesFile-SourceType=2\n"
                                                           "CoordinatesFile-SourceFieldMap=1,shapeX,shapeY")
    p = tmp_path / "sources.prm"
    p.write_text(text)
    return p


def test_run_prm_with_csv_dbase_shapefile_sources_equals_native_files(tmp_path):
    p = _nhumberside_sources(tmp_path)
    spec = prm_arguments(p)
    assert isinstance(spec["files"]["case_file"], DataSource) and spec["files"]["geo_file"].kind == "shapefile"
    kw = dict(n_replicates=19, seed=3, progress=False, backend="cpu")
    ours = hp.scan.run_prm(p, **kw)
    native = hp.scan.run_prm(SAT("NHumbersideSpatialBernoulli.prm"), **kw)
    pd.testing.assert_frame_equal(ours.clusters, native.clusters)
    np.testing.assert_array_equal(ours.null_llr, native.null_llr)
    assert ours.most_likely.cases == 4  # SaTScan's sample report


def test_run_prm_source_keys_of_other_files(tmp_path):
    for f in ("NHumberside.cas", "NHumberside.ctl", "NHumberside.geo", "NHumbersideSpatialBernoulli.prm"):
        shutil.copy(SAT(f), tmp_path / f)
    base = (tmp_path / "NHumbersideSpatialBernoulli.prm").read_text()
    # the source settings of a file that is not given (GridFile empty) change nothing
    (tmp_path / "a.prm").write_text(base.replace("GridFile=\n", "GridFile=\nGridFile-SourceType=0\n"
                                                                 "GridFile-SourceFieldMap=1,2\n"))
    assert prm_arguments(tmp_path / "a.prm")["ignored"]["GridFile-SourceFieldMap"] == "1,2"
    assert "MaxCirclePopulationFile=\n" in base
    (tmp_path / "b.prm").write_text(base.replace("MaxCirclePopulationFile=\n", "MaxCirclePopulationFile=x.txt\n"
                                                                                "MaxCirclePopulationFile-SourceType=0\n"))
    with pytest.raises(ValueError, match="MaxCirclePopulationFile-SourceType.*hp.scan does not read"):
        prm_arguments(tmp_path / "b.prm")
    (tmp_path / "c.prm").write_text(base.replace("CaseFile=NHumberside.cas",
                                                 "CaseFile=NHumberside.cas\nCaseFile-SourceDelimiter=;;"))
    with pytest.raises(ValueError, match=r"c.prm: CaseFile-SourceDelimiter=';;' \(\[Input\]\) must be one character"):
        prm_arguments(tmp_path / "c.prm")


# --------------------------------------------------------------------------- SaTScan's time intervals

def _d(s):
    return np.datetime64(s, "D")


def test_time_intervals_counted_back_from_the_end():
    starts = time_interval_starts(_d("2015-01-01"), _d("2022-12-31"), "month", 6)
    assert len(starts) == 17 and starts[0] == _d("2015-01-01") and starts[-2] == _d("2022-07-01")
    assert starts[-1] == _d("2023-01-01")
    # a short first interval is merged into the next (SaTScan's SetIntervalStartTimes)
    s = time_interval_starts(_d("2020-01-15"), _d("2020-12-31"), "month", 3)
    assert list(s) == [_d("2020-01-15"), _d("2020-07-01"), _d("2020-10-01"), _d("2021-01-01")]
    d = time_interval_starts(_d("2020-01-01"), _d("2020-01-10"), "day", 3)
    assert list(d) == [_d("2020-01-01"), _d("2020-01-05"), _d("2020-01-08"), _d("2020-01-11")]
    assert list(interval_of(np.array(["2020-01-01", "2020-01-04", "2020-01-05", "2020-01-10"], "datetime64[D]"),
                            d)) == [0, 0, 1, 2]
    y = time_interval_starts(_d("2010-01-01"), _d("2014-12-31"), "year", 2)
    assert list(y) == [_d("2010-01-01"), _d("2013-01-01"), _d("2015-01-01")]  # the first interval: 3 years
    # the study period in units, with the fraction of the first month (CalculateNumberOfTimeIntervals)
    assert time_units_in_period(_d("2015-01-01"), _d("2022-12-31"), "month") == 96
    assert time_units_in_period(_d("2020-01-16"), _d("2020-12-31"), "month") == pytest.approx(11 + 16 / 31)
    assert time_units_in_period(_d("2020-01-01"), _d("2020-01-10"), "day") == 10
    with pytest.raises(ValueError, match="day of the month is at most 28"):
        time_interval_starts(_d("2020-01-01"), _d("2020-03-29"), "month", 1)


def test_space_time_in_intervals_equals_the_scan_of_aggregated_data(tmp_path):
    """Bernoulli space-time in 3-day intervals (TimeAggregationLength=3): the same clusters as the
    daily scan of the data with every date moved to its interval's first day and the study period in
    intervals (a NumPy aggregation the prm path does not use)."""
    rng = np.random.default_rng(4)
    n_loc, start = 12, _d("2021-03-01")
    xy = rng.uniform(0, 10, (n_loc, 2)).round(3)
    days = rng.integers(0, 30, 200)
    loc = rng.integers(0, n_loc, 200)
    case = (rng.uniform(size=200) < np.where((loc < 3) & (days >= 24), 0.8, 0.3)).astype(int)
    (tmp_path / "a.geo").write_text("".join(f"L{i} {a} {b}\n" for i, (a, b) in enumerate(xy)))
    for name, flag in (("a.cas", 1), ("a.ctl", 0)):
        (tmp_path / name).write_text("".join(f"L{g} 1 {start + int(t)}\n".replace("-", "/")
                                             for g, t, c in zip(loc, days, case) if c == flag))
    (tmp_path / "a.prm").write_text("\n".join([
        "[Input]", "CaseFile=a.cas", "ControlFile=a.ctl", "CoordinatesFile=a.geo", "CoordinatesType=0",
        "PrecisionCaseTimes=3", "StartDate=2021/3/1", "EndDate=2021/3/30", "[Analysis]", "AnalysisType=3",
        "ModelType=1", "ScanAreas=1", "TimeAggregationUnits=3", "TimeAggregationLength=3", "[Temporal Window]",
        "MaxTemporalSizeInterpretation=0", "MaxTemporalSize=50", "[Inference]", "MonteCarloReps=19"]) + "\n")
    spec = prm_arguments(tmp_path / "a.prm")
    assert spec["kwargs"]["max_temporal"] == 5 and len(spec["intervals"]) == 11  # 10 intervals of 3 days
    res = hp.scan.run_prm(tmp_path / "a.prm", seed=2, progress=False, backend="cpu")
    ids = np.array([f"L{g}" for g in loc] + [f"L{i}" for i in range(n_loc)], dtype=object)
    times = np.concatenate([days // 3, np.zeros(n_loc, dtype=np.int64)])
    cases = np.concatenate([case, np.zeros(n_loc, dtype=np.int64)])
    order = np.argsort([int(i[1:]) for i in ids], kind="stable")
    ref = hp.scan.space_time(np.concatenate([xy[loc], xy])[order], cases[order], times[order],
                             controls=(1 - np.concatenate([case, np.ones(n_loc, dtype=np.int64)]))[order],
                             model="bernoulli", location_ids=ids[order], study_period=(0, 9), max_temporal=5,
                             min_cases=0, n_replicates=19, seed=2, progress=False, backend="cpu")
    assert len(res.clusters) == len(ref.clusters) > 0
    np.testing.assert_array_equal(res.clusters.log_likelihood_ratio, ref.clusters.log_likelihood_ratio)
    np.testing.assert_array_equal(res.clusters.cases, ref.clusters.cases)
    assert list(res.clusters.start) == [start + np.timedelta64(3 * int(t), "D") for t in ref.clusters.start]
    assert list(res.clusters.end) == [start + np.timedelta64(3 * int(t) + 2, "D") for t in ref.clusters.end]


def test_time_interval_refusals(tmp_path):
    for f in ("NYCfever.cas", "NYCfever.geo"):
        shutil.copy(SAT(f), tmp_path / f)
    base = SAT("NYCfever.prm").read_text()
    for old, new, match in [("TimeAggregationUnits=3", "TimeAggregationUnits=4", "TimeAggregationUnits.*must be 1"),
                            ("TimeAggregationLength=1", "TimeAggregationLength=0", "TimeAggregationLength.*>= 1"),
                            ("TimeAggregationLength=1", "TimeAggregationLength=x", "not a whole number"),
                            ("TimeAggregationLength=1", "TimeAggregationLength=24", "leaves 1 time interval"),
                            ("MaxTemporalSize=7", "MaxTemporalSize=7\nTimeAggregationLength=8", "given in section")]:
        (tmp_path / "a.prm").write_text(base.replace(old, new))
        with pytest.raises(ValueError, match=match):
            prm_arguments(tmp_path / "a.prm")



def test_poisson_space_time_in_intervals(tmp_path):
    """The discrete Poisson space-time scan in 2-day intervals (the first, of 24 days' odd remainder,
    merged into the next): an interval's expected cases follow its days (SaTScan's population-time)."""
    for f in ("NYCfever.cas", "NYCfever.geo"):
        shutil.copy(SAT(f), tmp_path / f)
    text = SAT("NYCfever.prm").read_text()
    text = text.replace("ModelType=2", "ModelType=0").replace("TimeAggregationLength=1", "TimeAggregationLength=2")
    geo = [ln.split()[0] for ln in (tmp_path / "NYCfever.geo").read_text().splitlines() if ln.strip()]
    pop = {k: 100 + 7 * i for i, k in enumerate(geo)}
    (tmp_path / "p.pop").write_text("".join(f"{k} 2001 {v}\n" for k, v in pop.items()))
    (tmp_path / "b.prm").write_text(text.replace("PopulationFile=", "PopulationFile=p.pop")
                                    .replace("MonteCarloReps=999", "MonteCarloReps=19"))
    res = hp.scan.run_prm(tmp_path / "b.prm", seed=1, progress=False, backend="cpu")
    start, end = np.datetime64("2001-11-01"), np.datetime64("2001-11-24")
    D = int((end - start).astype(int)) + 1
    assert len(res.clusters)
    total = sum(pop.values())
    for row in res.clusters.itertuples():
        days = int((np.datetime64(row.end, "D") - np.datetime64(row.start, "D")).astype(int)) + 1
        assert days % 2 == 0 or np.datetime64(row.start, "D") == start
        share = sum(pop[str(i)] for i in row.location_ids) / total
        assert row.expected == pytest.approx(res.n_cases * share * days / D, rel=1e-12)


# --------------------------------------------------------------------------- normal and exponential models

def _continuous_prm(folder: Path, model: str, areas: str, size: str, weighted=False) -> Path:
    cas = {"normal": "normal_w.cas" if weighted else "normal.cas", "exponential": "exp.cas"}[model]
    lines = ["[Input]", f"CaseFile={cas}", "PrecisionCaseTimes=0", "StartDate=2000/1/1", "EndDate=2000/12/31",
             f"CoordinatesFile={'exp' if model == 'exponential' else 'normal'}.geo", "CoordinatesType=0",
             "[Analysis]", "AnalysisType=1", f"ModelType={'4' if model == 'exponential' else '5'}",
             f"ScanAreas={areas}", "[Spatial Window]", f"MaxSpatialSizeInPopulationAtRisk={size}",
             "[Inference]", "MonteCarloReps=99"]
    p = folder / f"{model}{areas}{size}{int(weighted)}.prm"
    p.write_text("\n".join(lines) + "\n")
    return p


@pytest.mark.parametrize("name", ["unweighted high", "weighted both 20"])
def test_run_prm_normal_matches_satscan(tmp_path, name):
    """The data of test_scan_normal.py, written as SaTScan's files: run_prm gives SaTScan 10.3.2's
    clusters (its stored .col numbers)."""
    from test_scan_normal import _ANALYSES, _satscan_data

    fixture = json.loads((OUT / "satscan10_normal.json").read_text())["analyses"]
    if name not in fixture or name not in _ANALYSES:
        pytest.skip(f"{name} is not among the stored SaTScan normal analyses")
    weighted, areas, size = _ANALYSES[name]
    xy, loc, x, w = _satscan_data()
    (tmp_path / "normal.geo").write_text("".join(f"L{i} {a} {b}\n" for i, (a, b) in enumerate(xy)))
    (tmp_path / "normal.cas").write_text("".join(f"L{g} 1 {v}\n" for g, v in zip(loc, x)))
    (tmp_path / "normal_w.cas").write_text("".join(f"L{g} 1 {v} {u}\n" for g, v, u in zip(loc, x, w)))
    res = hp.scan.run_prm(_continuous_prm(tmp_path, "normal", areas, size, weighted), seed=1, progress=False,
                          backend="cpu")
    assert res.model == ("weighted_normal" if weighted else "normal")
    sat = fixture[name]
    assert len(res.clusters) == len(sat["rows"])
    for k, (ours, theirs) in enumerate(zip(res.clusters.itertuples(), sat["rows"])):
        assert [str(i) for i in ours.location_ids] == sat["locations"][k]
        assert ours.log_likelihood_ratio == pytest.approx(theirs["LLR"], abs=1e-9)
        assert ours.mean_inside == pytest.approx(theirs["MEAN_IN"], abs=1e-9)


def test_run_prm_exponential_matches_satscan(tmp_path):
    from test_scan_exponential import _ANALYSES, _satscan_data

    fixture = json.loads((OUT / "satscan10_exponential.json").read_text())["analyses"]
    areas, size = _ANALYSES["high"]
    xy, loc, t, cen = _satscan_data()
    (tmp_path / "exp.geo").write_text("".join(f"L{i} {a} {b}\n" for i, (a, b) in enumerate(xy)))
    (tmp_path / "exp.cas").write_text("".join(f"L{g} 1 {v} {c}\n" for g, v, c in zip(loc, t, cen)))
    res = hp.scan.run_prm(_continuous_prm(tmp_path, "exponential", areas, size), seed=1, progress=False,
                          backend="cpu")
    direct = hp.scan.exponential(xy[loc], t, cen.astype(bool), location_ids=np.array([f"L{g}" for g in loc]),
                                 max_population=int(size) / 100, n_replicates=99, seed=1, progress=False,
                                 backend="cpu")
    pd.testing.assert_frame_equal(res.clusters, direct.clusters)
    top = fixture["high"]["rows"][0]
    assert res.most_likely.log_likelihood_ratio == pytest.approx(float(top["LLR"]), abs=1e-6)


def test_run_prm_continuous_refusals(tmp_path):
    (tmp_path / "normal.geo").write_text("A 0 0\nB 1 1\nC 5 5\n")
    (tmp_path / "normal.cas").write_text("A 1 2.5\nB 1 3.0 0.5\nC 1 1.0\n")
    p = _continuous_prm(tmp_path, "normal", "1", "50")
    with pytest.raises(ValueError, match="weight.*given on some records and not on others"):
        hp.scan.run_prm(p, progress=False, backend="cpu")
    (tmp_path / "normal.cas").write_text("A 1 2.5\nB 1 x\n")
    with pytest.raises(ValueError, match=r"normal.cas:2: field 3 \(measurement\): 'x' is not a number"):
        hp.scan.run_prm(p, progress=False, backend="cpu")
    (tmp_path / "normal.cas").write_text("A 1 2.5\nZ 1 3\n")
    with pytest.raises(ValueError, match="location id 'Z' is not in the coordinates file"):
        hp.scan.run_prm(p, progress=False, backend="cpu")
    (tmp_path / "exp.geo").write_text("A 0 0\n")
    (tmp_path / "exp.cas").write_text("A 1 2.5 2\n")
    with pytest.raises(ValueError, match=r"field 4 \(censored\) '2' must be 0 or 1"):
        hp.scan.run_prm(_continuous_prm(tmp_path, "exponential", "1", "50"), progress=False, backend="cpu")
    text = p.read_text()
    for old, new, match in [("AnalysisType=1", "AnalysisType=5", r"AnalysisType='5' .* Normal model: must be 1 .* or 6 "),
                            ("ModelType=5", "ModelType=8", r"ModelType='8' .* \(Rank\) is not supported"),
                            ("[Input]", "[Input]\nControlFile=normal.geo", "ControlFile.*not used by the normal model")]:
        (tmp_path / "r.prm").write_text(text.replace(old, new))
        with pytest.raises(ValueError, match=match):
            prm_arguments(tmp_path / "r.prm")


def test_population_from_a_shapefile_with_unspecified_dates(tmp_path):
    """A population file as SaTScan's wizard maps a shapefile (generated ids, unspecifiedPopDate and
    the POP attribute): one population per location for the whole period; mixed with census years
    for one location it is refused."""
    pytest.importorskip("pyogrio")
    from hphawkes_py.scan._satscan import _population

    src = DataSource(DS / "test_shapefile.shp", "shapefile", field_map=("generatedId", "unspecifiedPopDate", 1))
    _, total, _, _, years = _population(src)
    assert total == {i: float(p) for i, p in zip(_IDS, _POP)} and years["location1"] == {-1.0}
    (tmp_path / "mixed.pop").write_text("A unspecified 10\nA 2000 12\n")
    with pytest.raises(ValueError, match="unspecified population date and census years"):
        _population(tmp_path / "mixed.pop")


def test_run_prm_satscans_normal_sample_analysis():
    """SaTScan's own sample FakeSpatialNormal.prm, unchanged: SaTScan 10.3.2's report gives the
    cluster N, J, S, B, V, M, Q, A with 46 cases, means 5.15 inside and 1.89 outside, variance 44.79,
    LLR 3.330109 and p 0.362 (its sequential Monte Carlo stopped after 138 replicates)."""
    prm = Path(hp.__file__).parent / "data" / "scan" / "satscan_tests" / "normal" / "FakeSpatialNormal.prm"
    res = hp.scan.run_prm(prm, n_replicates=99, seed=1, progress=False, backend="cpu")
    top = res.clusters.iloc[0]
    assert list(top.location_ids) == ["N", "J", "S", "B", "V", "M", "Q", "A"] and top.cases == 46
    assert (round(top.mean_inside, 2), round(top.mean_outside, 2), round(top.variance, 2)) == (5.15, 1.89, 44.79)
    assert top.log_likelihood_ratio == pytest.approx(3.330109, abs=5e-7)
    assert abs(top.p_value - 0.362) < 0.2  # 99 replicates here against SaTScan's 138


def test_errors_in_a_source_name_its_file_and_line(tmp_path):
    (tmp_path / "g.geo").write_text("A 0 0\nB 1 1\n")
    (tmp_path / "c.csv").write_text("id,n\nA,2\nB,two\n")
    (tmp_path / "k.ctl").write_text("A 1\nB 1\n")
    (tmp_path / "a.prm").write_text("\n".join([
        "[Input]", "CaseFile=c.csv", "CaseFile-SourceType=0", "CaseFile-SourceDelimiter=,",
        "CaseFile-SourceFirstRowHeader=y", "ControlFile=k.ctl", "CoordinatesFile=g.geo", "PrecisionCaseTimes=0",
        "[Analysis]", "AnalysisType=1", "ModelType=1"]) + "\n")
    with pytest.raises(ValueError, match=r"c\.csv:3: field 2 \(#cases\).*'two'") as e:
        hp.scan.run_prm(tmp_path / "a.prm", progress=False, backend="cpu")
    assert "DataSource(" not in str(e.value)


def test_native_files_group_quoted_fields_as_satscan(tmp_path):
    """SaTScan reads its native files as a white-space source with the " grouper: a quoted id with a
    blank is one field."""
    from hphawkes_py.scan._satscan import _read_rows

    (tmp_path / "a.cas").write_text('"New York" 3\nBoston 2\n"it ""x""" 1\n')
    assert [f for _, f in _read_rows(tmp_path / "a.cas", "case", 2)[1]] == [["New York", "3"], ["Boston", "2"],
                                                                           ['it "x"', "1"]]
    (tmp_path / "b.cas").write_text('"New York 3\n')
    with pytest.raises(ValueError, match=r"b\.cas:1: unterminated"):
        _read_rows(tmp_path / "b.cas", "case", 2)
