"""hp.scan against SaTScan 10.3.2 itself: elliptic-window Bernoulli, retrospective and prospective
space-time Bernoulli and Poisson, retrospective space-time permutation, high-and-low-rate Bernoulli and
Poisson scans, and the circular Bernoulli sample analysis.

The oracles are SaTScan's cluster tables (hphawkes_py/data/scan/satscan_outputs/satscan10_*.txt, their
header says how they were made); the parameter files SaTScan ran are rebuilt here (_prm) from SaTScan's
own sample file, so hp.scan.run_prm runs exactly what SaTScan ran. Locations (in SaTScan's order),
cases, population and time frames compare exactly, expected cases, LLRs and test statistics to 1e-6,
Monte Carlo p-values (999 replications on both sides) within their binomial error.
"""
from __future__ import annotations

import math
import shutil
import warnings

import numpy as np
import pandas as pd
import pytest

import hphawkes_py as hp

SAT = hp.datasets.satscan_sample_path
OUT = hp.datasets.path("scan/satscan_outputs")

#: what every analysis changes in SaTScan's sample file (all replications, one process, text and dBase tables)
_DEFAULTS = dict(PValueReportType="1", MonteCarloReps="999", LaunchMapViewer="n", NumberParallelProcesses="1",
                 MostLikelyClusterEachCentroidASCII="y", MostLikelyClusterEachCentroidDBase="y",
                 CensusAreasReportedClustersASCII="y", PrintAsciiColumnHeaders="y", ControlFile="", PopulationFile="")
_NHB = dict(CaseFile="NHumberside.cas", ControlFile="NHumberside.ctl", CoordinatesFile="NHumberside.geo")
_NM = dict(PrecisionCaseTimes="3", StartDate="2000/1/1", EndDate="2000/1/19", CoordinatesType="1",
           CoordinatesFile="nm.geo", MaxTemporalSizeInterpretation="0", MaxTemporalSize="50", CaseFile="nm_all.cas")
ANALYSES = {  # section of the stored tables -> (folder, parameter values)
    "circle": ("nhb", dict(_NHB, ResultsFile="circle.txt")),
    "circle both": ("nhb", dict(_NHB, ScanAreas="3", ResultsFile="circle_both.txt")),
    "ellipse none": ("nhb", dict(_NHB, SpatialWindowShapeType="1", NonCompactnessPenalty="0",
                                 ResultsFile="ell_none.txt")),
    "ellipse medium": ("nhb", dict(_NHB, SpatialWindowShapeType="1", NonCompactnessPenalty="1",
                                   ResultsFile="ell_medium.txt")),
    "bernoulli retrospective": ("nm", dict(_NM, ControlFile="nm_pop1000.ctl", AnalysisType="3", ModelType="1",
                                           ResultsFile="stb_retro.txt")),
    "bernoulli prospective": ("nm", dict(_NM, ControlFile="nm_pop1000.ctl", AnalysisType="4", ModelType="1",
                                         ProspectiveStartDate="2000/1/19", ResultsFile="stb_prosp.txt")),
    "poisson retrospective": ("nm", dict(_NM, PopulationFile="nm_1982.pop", AnalysisType="3", ModelType="0",
                                         ResultsFile="stp_retro.txt")),
    "poisson prospective": ("nm", dict(_NM, PopulationFile="nm_1982.pop", AnalysisType="4", ModelType="0",
                                       ProspectiveStartDate="2000/1/19", ResultsFile="stp_prosp.txt")),
    "permutation retrospective": ("nyc", dict(CaseFile="NYCfever.cas", CoordinatesFile="NYCfever.geo",
                                              CoordinatesType="1", PrecisionCaseTimes="3", StartDate="2001/11/1",
                                              EndDate="2001/11/24", AnalysisType="3", ModelType="2",
                                              UseDistanceFromCenterOption="y", MaxSpatialSizeInDistanceFromCenter="3",
                                              MaxTemporalSizeInterpretation="1", MaxTemporalSize="7",
                                              ResultsFile="stperm_retro.txt")),
    "poisson both": ("ny", dict(CaseFile="ny_leukemia.cas", PopulationFile="ny_leukemia.pop",
                                CoordinatesFile="ny_leukemia.geo", ModelType="0", ScanAreas="3",
                                MaxSpatialSizeInPopulationAtRisk="10", PrecisionCaseTimes="1", StartDate="2000/1/1",
                                EndDate="2000/12/31", ResultsFile="pois_both.txt")),
    "poisson covariates": ("nmps", dict(CaseFile="nm.cas", PopulationFile="nm.pop", CoordinatesFile="nm.geo",
                                        CoordinatesType="1", ModelType="0", PrecisionCaseTimes="1",
                                        StartDate="1973/1/1", EndDate="1991/12/31", ResultsFile="pois_cov.txt")),
}
#: the stored table of each folder's analyses
FILES = {"nhb": "satscan10_nhumberside_bernoulli.txt", "nm": "satscan10_nm_space_time.txt",
         "nyc": "satscan10_nycfever_ny_leukemia.txt", "ny": "satscan10_nycfever_ny_leukemia.txt",
         "nmps": "satscan10_nm_poisson_covariates.txt"}
_FOLDER_FILES = {"nhb": ("NHumberside.cas", "NHumberside.ctl", "NHumberside.geo"),
                 "nyc": ("NYCfever.cas", "NYCfever.geo"),
                 "ny": ("ny_leukemia.cas", "ny_leukemia.pop", "ny_leukemia.geo"),
                 "nmps": ("nm.cas", "nm.pop", "nm.geo")}


def _prm(path, **changes):
    """SaTScan 10's sample parameter file NHumbersideSpatialBernoulli.prm with values replaced."""
    ch = {**_DEFAULTS, **changes}
    lines = []
    for line in SAT("NHumbersideSpatialBernoulli.prm").read_text().splitlines():
        key = line.split("=", 1)[0]
        if "=" in line and not line.startswith(";") and key in ch:
            line = f"{key}={ch.pop(key)}"
        lines.append(line)
    assert not ch, f"not in the sample file: {sorted(ch)}"
    path.write_text("\n".join(lines) + "\n")
    return path


def _nm_tables():
    """New Mexico brain cancer by county and year, the years 1973..1991 as the days 2000/1/1..19:
    cases (all), 1982 population per county, controls round(population / 1000) per county and day."""
    cas = pd.read_csv(SAT("nm.cas"), sep=r"\s+", header=None, names=["county", "n", "year", "age", "sex"])
    cas["date"] = [f"2000/1/{y - 1972}" for y in cas.year]
    cases = cas.groupby(["county", "date"], sort=False).n.sum()
    pop = pd.read_csv(SAT("nm.pop"), sep=r"\s+", header=None, names=["county", "year", "pop", "age", "sex"])
    p82 = pop[pop.year == 82].groupby("county", sort=False)["pop"].sum()
    return cases, p82


def _write_inputs(folder, which):
    folder.mkdir(exist_ok=True)
    if which in _FOLDER_FILES:
        for f in _FOLDER_FILES[which]:
            shutil.copy(SAT(f), folder / f)
        return
    cases, p82 = _nm_tables()
    (folder / "nm_all.cas").write_text("".join(f"{c} {n} {t}\n" for (c, t), n in cases.items()))
    (folder / "nm_1982.pop").write_text("".join(f"{c} 2000 {int(p)}\n" for c, p in p82.items()))
    (folder / "nm_pop1000.ctl").write_text("".join(f"{c} {int(round(p / 1000))} 2000/1/{k}\n"
                                                   for c, p in p82.items() for k in range(1, 20)))
    shutil.copy(SAT("nm.geo"), folder / "nm.geo")


def _table(file, section):
    """SaTScan's rows of one [section]: a list of dicts."""
    rows, on = [], False
    for line in (OUT / file).read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        if line.startswith("["):
            on = line == f"[{section}]"
            continue
        if on:
            f = [x.strip() for x in line.split("|")]
            r = {"ids": f[1].split()}
            rest = f[2:]
            if "/" in rest[0]:  # space-time: start | end | ...
                r["start"], r["end"], rest = rest[0], rest[1], rest[2:]
            if section.startswith("ellipse"):
                r["semiminor"], r["semimajor"], r["angle"], r["shape"] = map(float, rest[:4])
                rest = rest[4:]
                r["stat"] = float(rest[4])
            r["population"] = None if rest[0] == "-" else float(rest[0])
            r["cases"], r["expected"], r["llr"] = int(rest[1]), float(rest[2]), float(rest[3])
            r["p"] = float(rest[-1])
            rows.append(r)
    assert rows, section
    return rows


def _date(s):
    y, m, d = (int(x) for x in s.split("/"))
    return np.datetime64(f"{y:04d}-{m:02d}-{d:02d}", "D")


def _compare(res, sat, R=999):
    """Our clusters against SaTScan's rows. A secondary cluster is listed only while some replicate's
    maximum is below it (p < 1), on both sides: SaTScan's last rows with p near 1 may be absent here
    (and ours beyond SaTScan's near 1 too); every cluster with p < 0.99 is on both lists."""
    cl = res.clusters
    assert all(r["p"] >= 0.99 for r in sat[len(cl):]), (len(cl), sat)
    assert (cl.p_value.iloc[len(sat):] >= 0.99).all()
    for k, r in enumerate(sat[:len(cl)]):
        row = cl.iloc[k]
        assert [str(v) for v in row.location_ids] == r["ids"], k
        assert row.cases == r["cases"], k
        # (populations averaged over time are printed by SaTScan with 2 decimals)
        assert r["population"] is None or abs(row.population - r["population"]) <= 0.005 + 1e-9, k
        assert abs(row.expected - r["expected"]) < 1e-6, k
        assert abs(row.log_likelihood_ratio - r["llr"]) < 1e-6, k
        if "stat" in r:
            assert abs(row.test_statistic - r["stat"]) < 1e-6, k
            assert (row["shape"], row.angle) == (r["shape"], r["angle"]), k
            assert abs(row.radius - r["semiminor"]) < 1e-6 and abs(row.semimajor_axis - r["semimajor"]) < 1e-6, k
        if "start" in r:
            assert (pd.Timestamp(row.start), pd.Timestamp(row.end)) == (pd.Timestamp(_date(r["start"])),
                                                                        pd.Timestamp(_date(r["end"]))), k
        p = r["p"]
        se = math.sqrt(2 * p * (1 - p) / R)
        assert abs(row.p_value - p) < 4 * se + 2 / (R + 1), (k, row.p_value, p)


@pytest.mark.parametrize("section", ["circle", "circle both", "ellipse none", "ellipse medium",
                                     "bernoulli retrospective", "bernoulli prospective", "permutation retrospective",
                                     "poisson retrospective", "poisson prospective", "poisson both"])
def test_run_prm_matches_satscan10(tmp_path, section):
    folder, values = ANALYSES[section]
    _write_inputs(tmp_path / folder, folder)
    prm = _prm(tmp_path / folder / "a.prm", **values)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = hp.scan.run_prm(prm, seed=1, progress=False, backend="cpu")
    _compare(res, _table(FILES[folder], section))


def test_run_prm_poisson_covariates_matches_satscan10(tmp_path):
    """SaTScan's New Mexico sample data as it is: purely spatial Poisson adjusted for age and sex,
    populations at three census years averaged over the study period as SaTScan does (before: over
    the census span, population and expected 0.06% off)."""
    test_run_prm_matches_satscan10(tmp_path, "poisson covariates")


@pytest.mark.parametrize("prospective", [False, True])
def test_space_time_poisson_matches_satscan10(prospective):
    """Space-time Poisson through the Python API (run_prm's rows above run the same .prm files), the
    rows in the coordinates file's order (SaTScan's order of equal clusters' centres)."""
    cases, p82 = _nm_tables()
    geo = pd.read_csv(SAT("nm.geo"), sep=r"\s+", header=None, names=["id", "lat", "long"])
    rows = pd.DataFrame({"id": [c for c, _ in cases.index], "date": [_date(t) for _, t in cases.index],
                         "cases": cases.to_numpy()})
    absent = [k for k in geo.id if k not in set(rows.id)]  # every location is a centre
    rows = pd.concat([rows, pd.DataFrame({"id": absent, "date": np.datetime64("2000-01-01"), "cases": 0})])
    rows["order"] = rows.id.map({k: i for i, k in enumerate(geo.id)})
    rows = rows.sort_values("order", kind="stable")
    xy = geo.set_index("id").loc[rows.id, ["lat", "long"]].to_numpy()
    res = hp.scan.space_time(xy, rows.cases.to_numpy(), rows.date.to_numpy().astype("datetime64[D]"),
                             population=p82.loc[rows.id].to_numpy(), model="poisson", max_population=0.5,
                             max_temporal=9, prospective=prospective, min_cases=2, n_replicates=999,
                             study_period=(np.datetime64("2000-01-01"), np.datetime64("2000-01-19")),
                             distance="great_circle", location_ids=rows.id.to_numpy(), seed=1, progress=False,
                             backend="cpu")
    _compare(res, _table("satscan10_nm_space_time.txt",
                         "poisson prospective" if prospective else "poisson retrospective"))


@pytest.mark.parametrize("later, expect", [(12, (12, 14)), (6, (6, 8)), (5, (6, 7))])
def test_retrospective_secondary_clusters_apart_in_time(later, expect):
    """SaTScan 10's retrospective space-time clusters: a centre's cylinders apart in time from its most
    likely one are candidates too, and clusters sharing locations are both listed when they are apart
    in time, "apart" leaving at least one day between them (an outbreak on the day after the first
    one is listed from its second day on). Before, one cylinder per centre: the later outbreak at
    location 0 was never listed."""
    T = 20
    xy = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [10.0, 0.0]])
    c = np.zeros((4, T), dtype=int)
    c[0, 2:5] = 6
    c[0, later:later + 3] = 4
    c[3, :] = 1
    loc, day = np.indices(c.shape).reshape(2, -1)
    kw = dict(population=np.full(len(loc), 1000), model="poisson", max_population=0.5, max_temporal=3,
              n_replicates=99, seed=3, progress=False, backend="cpu")
    cl = hp.scan.space_time(xy[loc], c[loc, day], day, **kw).clusters
    assert [(r.start, r.end, list(r.location_ids)) for r in cl.itertuples()] == [(2, 4, [0]), (*expect, [0])]
    # prospective analyses: every cylinder ends on the last day, one per centre as before
    pro = hp.scan.space_time(xy[loc], c[loc, day], day, prospective=True, **kw).clusters
    assert (pro.end == T - 1).all()


def test_study_period_population_weights():
    """SaTScan's time weights of census years: July 1 of the year, linear between census dates,
    constant outside them, averaged over the study period's days."""
    from hphawkes_py.scan._satscan import _study_period_weights

    w = _study_period_weights([73.0, 82.0, 91.0], ("1973-01-01", "1991-12-31"))
    assert sum(w.values()) == pytest.approx(1.0, abs=1e-12)
    assert _study_period_weights([2000.0], ("1990-01-01", "1990-12-31")) == {2000.0: 1.0}
    # the study period from one census date to the next: the trapezoid, equal weights
    assert _study_period_weights([2000.0, 2002.0], ("2000-07-01", "2002-06-30")) == {2000.0: 0.5, 2002.0: 0.5}
    # a study period after the last census date: that census only
    assert _study_period_weights([90.0, 2000.0], ("2001-01-01", "2001-12-31")) == {90.0: 0.0, 2000.0: 1.0}


@pytest.mark.parametrize("change, pop_text, message", [
    (dict(TimeTrendAdjustmentType="6"), None, r"TimeTrendAdjustmentType='6'.*must be 0 \(none\)"),
    (dict(SpatialAdjustmentType="3"), None, r"SpatialAdjustmentType='3'.*supported: \['0', '1', '2'\]"),
    (dict(ControlFile="nm_pop1000.ctl"), None, "ControlFile.*not used by the discrete Poisson model"),
    ({}, "census", r"nm_1982.pop:\d+: location '.*' has no population for census year 1990"),
    ({}, "covariates", r"nm_1982.pop: the case and population records must have the same number of covariates"),
    ({}, "missing", r"nm_1982.pop: no population for location id"),
])
def test_run_prm_space_time_poisson_refuses_what_it_cannot_honour(tmp_path, change, pop_text, message):
    folder, values = ANALYSES["poisson retrospective"]
    _write_inputs(tmp_path / folder, folder)
    pop = tmp_path / folder / "nm_1982.pop"
    lines = pop.read_text().splitlines()
    if pop_text == "census":  # a second census year for the first location
        lid, _, n = lines[0].split()
        lines.insert(1, f"{lid} 1990 {n}")
    elif pop_text == "covariates":
        lines[0] += " 1"
    elif pop_text == "missing":
        lines = lines[1:]
    pop.write_text("\n".join(lines) + "\n")
    prm = _prm(tmp_path / folder / "a.prm", **{**values, **change})
    with pytest.raises(ValueError, match=message):
        hp.scan.run_prm(prm, seed=1, progress=False, backend="cpu", n_replicates=9)
