"""SaTScan's own sample analyses and variants of them against SaTScan 10.3.2 run on the same files
(tests/satscan_oracle.py; output stored in data/scan/satscan_outputs/satscan10_samples.json):

* NewMexicoSpaceTimePoisson.prm unchanged (brain cancer by county and year, three census years, age and
  sex covariates: SaTScan's expectations per location and year) and with IncludePurelyTemporal=y;
* NYCfever.prm (space-time permutation) made retrospective, adjusted for the day of the week, with case
  covariates drawn here, and with both;
* NYCfever.prm as a discrete Poisson analysis (a population file made here) adjusted for the day of the
  week, alone and after an estimated log-linear trend; with two census years (by day); prospective and
  adjusted for earlier analyses.

Every cluster's locations, days, cases, expected cases and LLR (test statistic) agree with SaTScan's to
1e-6, its p-value within the binomial error (tests/satscan_oracle.assert_clusters_match)."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

import hphawkes_py as hp
from satscan_oracle import assert_clusters_match, oracle, read_clusters, run_each, store, stored

FIXTURE = stored("samples")
SAMPLE = hp.datasets.path("scan/satscan_sample_data")

#: analysis -> (sample parameter file, the texts replaced in it)
_ANALYSES = {
    "nm": ("NewMexicoSpaceTimePoisson.prm", {}),
    "nm purely temporal": ("NewMexicoSpaceTimePoisson.prm", {"IncludePurelyTemporal=n": "IncludePurelyTemporal=y"}),
    "nyc weekly": ("NYCfever.prm", {"AdjustForWeeklyTrends=n": "AdjustForWeeklyTrends=y"}),
    "nyc covariates": ("NYCfever.prm", {"CaseFile=NYCfever.cas": "CaseFile=cov.cas"}),
    "nyc covariates weekly": ("NYCfever.prm", {"CaseFile=NYCfever.cas": "CaseFile=cov.cas",
                                               "AdjustForWeeklyTrends=n": "AdjustForWeeklyTrends=y"}),
    "nyc poisson weekly": ("NYCfever.prm", {"ModelType=2": "ModelType=0", "AdjustForWeeklyTrends=n":
                                            "AdjustForWeeklyTrends=y", "\nPopulationFile=\n": "\nPopulationFile=p.pop\n"}),
    "nyc poisson weekly trend": ("NYCfever.prm", {"ModelType=2": "ModelType=0", "AdjustForWeeklyTrends=n":
                                                  "AdjustForWeeklyTrends=y", "\nPopulationFile=\n":
                                                  "\nPopulationFile=p.pop\n", "TimeTrendAdjustmentType=0":
                                                  "TimeTrendAdjustmentType=3"}),
    # two census years (a population that changes day by day) in a daily analysis
    "nyc poisson census years": ("NYCfever.prm", {"ModelType=2": "ModelType=0", "\nPopulationFile=\n":
                                                  "\nPopulationFile=p2.pop\n"}),
    # prospective, adjusted for the earlier analyses since 2001/11/10: circles up to 4 km (SaTScan limits them
    # by distance alone then); SaTScan's simulated LLRs are kept to compare the null distributions
    "nyc poisson prospective adjusted": ("NYCfever.prm", {
        "ModelType=2": "ModelType=0", "\nPopulationFile=\n": "\nPopulationFile=p.pop\n",
        "MaxSpatialSizeInDistanceFromCenter=3": "MaxSpatialSizeInDistanceFromCenter=4",
        "AdjustForEarlierAnalyses=n": "AdjustForEarlierAnalyses=y",
        "ProspectiveStartDate=2001/11/24": "ProspectiveStartDate=2001/11/10",
        "SaveSimLLRsASCII=n": "SaveSimLLRsASCII=y"}),
    # NYCfever as shipped (prospective, a parameter file of SaTScan 9.4 without MinimumCasesInHighRateClusters,
    # which SaTScan 10 runs with its default 2): the null distribution too
    "nyc prospective": ("NYCfever.prm", {"SaveSimLLRsASCII=n": "SaveSimLLRsASCII=y"}),
    # the same with the longest cylinder 40 % of each earlier analysis's own period (4 days on 11/10, 9 on 11/24)
    "nyc poisson prospective adjusted percent": ("NYCfever.prm", {
        "ModelType=2": "ModelType=0", "\nPopulationFile=\n": "\nPopulationFile=p.pop\n",
        "MaxSpatialSizeInDistanceFromCenter=3": "MaxSpatialSizeInDistanceFromCenter=4",
        "AdjustForEarlierAnalyses=n": "AdjustForEarlierAnalyses=y",
        "ProspectiveStartDate=2001/11/24": "ProspectiveStartDate=2001/11/10",
        "MaxTemporalSizeInterpretation=1": "MaxTemporalSizeInterpretation=0", "MaxTemporalSize=7": "MaxTemporalSize=40",
        "SaveSimLLRsASCII=n": "SaveSimLLRsASCII=y"}),
}


def _write_inputs(folder: Path):
    """The samples' data files, NYCfever's case records with two covariates drawn here (cov.cas) and a
    population for its locations (p.pop: 1000 + 37 i persons at the i-th location, census year 2001)."""
    for f in ("nm.cas", "nm.geo", "nm.pop", "NYCfever.cas", "NYCfever.geo"):
        shutil.copy(SAMPLE / f, folder / f)
    rng = np.random.default_rng(3)
    lines = [ln.rstrip() + f" {rng.integers(1, 3)} {'ab'[rng.integers(0, 2)]}"
             for ln in (SAMPLE / "NYCfever.cas").read_text().split("\n") if ln.strip()]
    (folder / "cov.cas").write_text("\n".join(lines) + "\n")
    geo = [ln.split()[0] for ln in (SAMPLE / "NYCfever.geo").read_text().splitlines() if ln.strip()]
    (folder / "p.pop").write_text("".join(f"{k} 2001 {1000 + 37 * i}\n" for i, k in enumerate(geo)))
    # p2.pop: 2001 and 2002 censuses, each location growing at its own rate (from 0.5 to 3 times)
    (folder / "p2.pop").write_text("".join(f"{k} 2001 {1000 + 37 * i}\n{k} 2002 {(1000 + 37 * i) * (0.5 + (i % 11) / 4)}\n"
                                           for i, k in enumerate(geo)))


def _prm(name, folder: Path) -> Path:
    """The analysis' parameter file: the sample's with its replacements (NYCfever's made retrospective), all
    999 replicates, its cluster table as dBase, its outputs named after it."""
    sample, edits = _ANALYSES[name]
    text = (SAMPLE / sample).read_text()
    stem = name.replace(" ", "_")
    # every replicate run (PValueReportType=1): SaTScan's default may stop early (sequential Monte Carlo)
    edits = {"MostLikelyClusterEachCentroidDBase=n": "MostLikelyClusterEachCentroidDBase=y",
             "PValueReportType=0": "PValueReportType=1", **edits}
    if sample == "NYCfever.prm" and "prospective" not in name:
        edits["AnalysisType=4"] = "AnalysisType=3"
    for old, new in edits.items():
        assert old in text, (name, old)
        text = text.replace(old, new)
    text = re.sub(r"(?m)^ResultsFile=.*$", f"ResultsFile={stem}.txt", text)
    path = folder / f"{stem}.prm"
    path.write_text(text)
    return path


def _read(prm) -> dict:
    """SaTScan's clusters (:func:`satscan_oracle.read_clusters`) and, where it wrote them, its simulated LLRs."""
    out = read_clusters(prm)
    llr = Path(prm).with_suffix(".llr.txt")
    if llr.exists():
        out["llr"] = [float(x) for x in llr.read_text().split()]
    return out


def run_satscan(binary) -> dict:
    """SaTScan's output (:func:`_read`) of every analysis of _ANALYSES."""
    return run_each(binary, "hphawkes-samples-", _write_inputs, _ANALYSES, _prm, _read)


@pytest.fixture(scope="module")
def satscan_output():
    return oracle(FIXTURE, run_satscan)


def _day(text: str, last: bool) -> str:
    """A date of SaTScan's tables as a day: a purely temporal cluster's are in the aggregation's units
    ("1985": its first day as a start, its last as an end)."""
    parts = [int(x) for x in text.split("/")]
    if len(parts) == 3:
        return text
    y, m = parts[0], (parts[1] if len(parts) > 1 else (12 if last else 1))
    d = int((np.datetime64(f"{y + (m == 12):04d}-{m % 12 + 1:02d}-01") - np.timedelta64(1, "D")).astype(object).day) \
        if last else 1
    return f"{y}/{m}/{d}"


@pytest.mark.parametrize("name", list(_ANALYSES))
def test_sample_analyses_match_satscan(name, satscan_output, tmp_path):
    _write_inputs(tmp_path)
    res = hp.scan.run_prm(_prm(name, tmp_path), seed=1, progress=False, backend="cpu")
    theirs = satscan_output[name]
    ids = [list(i) for i in theirs["ids"]]
    cl = res.clusters
    for k, i in enumerate(ids[:len(cl)]):
        if i == ["All"]:  # the purely temporal cluster: every location
            assert bool(cl.purely_temporal.iloc[k]) and cl.center.iloc[k] == "All"
            ids[k] = [str(v) for v in cl.location_ids.iloc[k]]
            # its time frame in the precision of the case times, in the tables and the report, as SaTScan's
            row = theirs["rows"][k]
            frame = f"{row['START_DATE']} to {row['END_DATE']}"
            col = hp.scan.outputs.cluster_table(res).iloc[k]
            assert f"{col.START_DATE} to {col.END_DATE}" == frame
            assert f"{k + 1}.Location IDs included.: All\n  Time frame............: {frame}\n" in \
                hp.scan.outputs.report_text(res)
    rows = [dict(r, START_DATE=_day(r["START_DATE"], False), END_DATE=_day(r["END_DATE"], True))
            for r in theirs["rows"]]
    assert_clusters_match(cl, rows, ids, n_replicates=999)
    assert res.day_of_week == ("weekly" in name)
    # the report's statements of what the analysis included and was adjusted for are SaTScan's, stops too
    head = hp.scan.outputs.report_text(res).split("\n_____")[0].splitlines()[1:]
    assert theirs["summary"].endswith(" ".join(head)) if head else "adjusting" not in theirs["summary"]
    assert ("adjusting for weekly trends nonparametrically." in head) == ("weekly" in name)
    if "llr" in theirs:  # the null distributions agree (ours at the 6 decimals SaTScan writes: its LLRs have atoms)
        from scipy.stats import ks_2samp

        assert len(theirs["llr"]) == 999 and ks_2samp(np.round(res.null_llr, 6), theirs["llr"]).pvalue > 1e-3
    if "llr" in theirs and "adjusted" in name:  # and the adjustment for earlier analyses matters
        once = hp.scan.run_prm(_prm(name, tmp_path), seed=1, progress=False, backend="cpu", n_replicates=199)
        assert res.max_population is None and res.clusters.end.iloc[0] == np.datetime64("2001-11-24")
        plain = _prm(name, tmp_path)
        plain.write_text(plain.read_text().replace("AdjustForEarlierAnalyses=y", "AdjustForEarlierAnalyses=n"))
        unadjusted = hp.scan.run_prm(plain, seed=1, progress=False, backend="cpu", n_replicates=199)
        assert np.median(once.null_llr) > 1.2 * np.median(unadjusted.null_llr)
    if name == "nm":  # the population (averaged over the study period) of SaTScan's most likely cluster
        assert cl.population.iloc[0] == pytest.approx(float(theirs["rows"][0]["POPULATION"]), abs=5e-3)


if __name__ == "__main__":  # write the stored SaTScan output (see tests/satscan_oracle.py)
    store(FIXTURE, run_satscan, "test_scan_satscan_samples.py")
