"""Scan input/output (issue 34, round 3): read_satscan's study period, run_prm's parameter files
(keys or sections given twice, the low-rate minimum, records dated outside the study period, byte-order
marks) and `hphawkes scan run` with options the parameter file sets."""
from __future__ import annotations

import datetime
import re
import shutil

import numpy as np
import pandas as pd
import pytest

import hphawkes_py as hp
from hphawkes_py.cli import main
from hphawkes_py.scan._prm import prm_arguments, read_prm

SAT = hp.datasets.satscan_sample_path
NY = dict(population_file=SAT("ny_leukemia.pop"), geo_file=SAT("ny_leukemia.geo"), model="poisson")
BOM = "\ufeff"


def _ny(tmp_path, cas_text=None, **changes):
    """The NY leukaemia parameter file and data in tmp_path, values replaced or added (in [Extra]),
    the case file replaced by cas_text."""
    for f in ("ny_leukemia.cas", "ny_leukemia.pop", "ny_leukemia.geo"):
        shutil.copy(SAT(f), tmp_path / f)
    if cas_text is not None:
        (tmp_path / "ny_leukemia.cas").write_text(cas_text)
    lines = []
    for line in SAT("ny_leukemia_poisson.prm").read_text().splitlines():
        key = line.split("=", 1)[0]
        if "=" in line and not line.startswith(";") and key in changes:
            line = f"{key}={changes.pop(key)}"
        lines.append(line)
    extra = [f"{k}={v}" for k, v in changes.items()]
    p = tmp_path / "a.prm"
    p.write_text("\n".join(lines + (["[Extra]"] + extra if extra else [])) + "\n")
    return p


def _cas_with_2001_record():
    """ny_leukemia.cas with its first record (location 1, 3 cases) dated 2001 instead of 2000."""
    rows = SAT("ny_leukemia.cas").read_text().splitlines()
    assert rows[0].split() == ["1", "3", "2000"]
    return "\n".join(["1 3 2001"] + rows[1:]) + "\n"


# read_satscan(study_period=)

@pytest.mark.parametrize("period, error, match", [
    ((2000, 2000), TypeError, r"study_period first day .* the number 2000 \(a year is not a day: write '2000-01-01'"),
    (("2000/1/1", 2000), TypeError, r"study_period last day .* the number 2000"),
    ((np.int64(2000), "2000-12-31"), TypeError, "the number 2000"),
    (("2000-12-31", "2000-01-01"), ValueError, r"study_period ends \(2000-01-01\) before it starts \(2000-12-31\)"),
    (("2000", "2000"), ValueError, r"study_period first day must be a date: 'YYYY-MM-DD' or 'YYYY/MM/DD'"),
    ((np.datetime64("2000"), "2000-12-31"), ValueError, "Y-unit datetime64, not a day"),
    ((pd.Timestamp("2000-01-01", tz="UTC"), "2000-12-31"), ValueError, "has a time zone"),
    ((datetime.date(2000, 1, 1), datetime.datetime(2000, 12, 31, 6)), ValueError, "not a whole day"),
    ((pd.NaT, "2000-12-31"), ValueError, "first day is NaT"),
    ("2000-01-01", TypeError, r"study_period must be \(first day, last day\)"),
])
def test_read_satscan_refuses_years_reversed_and_non_day_study_periods(period, error, match):
    with pytest.raises(error, match=match):
        hp.scan.read_satscan(SAT("ny_leukemia.cas"), study_period=period, **NY)


def test_read_satscan_study_period_forms_agree():
    """Strings with / or -, datetime64, date and Timestamp: the same days, the same population."""
    forms = [("2000/1/1", "2000/12/31"), ("2000-01-01", "2000-12-31"),
             (np.datetime64("2000-01-01"), np.datetime64("2000-12-31")),
             (datetime.date(2000, 1, 1), pd.Timestamp("2000-12-31"))]
    pops = [hp.scan.read_satscan(SAT("ny_leukemia.cas"), study_period=f, **NY).population.to_numpy() for f in forms]
    for p in pops[1:]:
        np.testing.assert_array_equal(p, pops[0])


def test_read_satscan_records_outside_the_study_period(tmp_path):
    cas = tmp_path / "ny.cas"
    cas.write_text(_cas_with_2001_record())
    period = ("2000/1/1", "2000/12/31")
    with pytest.raises(ValueError, match=r"ny.cas:1: field 3 \(date\) '2001' is outside the study period "
                                         r"2000-01-01 to 2000-12-31"):
        hp.scan.read_satscan(cas, study_period=period, **NY)
    with pytest.warns(UserWarning, match=r"ny.cas: 1 case record\(s\) \(3 cases\) dated outside the study period "
                                         r"2000-01-01 to 2000-12-31 were left out \(first on line 1"):
        df = hp.scan.read_satscan(cas, study_period=period, out_of_period="ignore", **NY)
    full = hp.scan.read_satscan(SAT("ny_leukemia.cas"), study_period=period, **NY)
    assert int(full.cases.sum()) - int(df.cases.sum()) == 3
    assert df.cases.iloc[0] == 0 and full.cases.iloc[0] == 3
    with pytest.raises(ValueError, match="out_of_period='ignore' needs study_period"):
        hp.scan.read_satscan(cas, out_of_period="ignore", **NY)
    with pytest.raises(ValueError, match="out_of_period"):
        hp.scan.read_satscan(cas, study_period=period, out_of_period="drop", **NY)


def test_read_satscan_reads_satscan_date_forms(tmp_path):
    """YYYY, YYYY/MM, YYYY/MM/DD, MM/DD/YYYY and two-digit years (SaTScan's DateStringParser)."""
    geo = tmp_path / "a.geo"
    geo.write_text("a 0 0\nb 1 0\nc 2 0\n")
    (tmp_path / "a.pop").write_text("a 2000 100\nb 2000 100\nc 2000 100\n")
    (tmp_path / "a.cas").write_text("a 1 2000\na 1 2000/12\nb 1 2000/12/31\nb 1 12/31/2000\nc 1 00/06/01\n")
    df = hp.scan.read_satscan(tmp_path / "a.cas", population_file=tmp_path / "a.pop", geo_file=geo, model="poisson",
                              study_period=("2000/1/1", "2000/12/31"))
    assert df.cases.tolist() == [2, 2, 1]
    (tmp_path / "b.cas").write_text("a 1 2000/13/01\n")
    with pytest.raises(ValueError, match=r"b.cas:1: field 3 \(date\) '2000/13/01' is not a date"):
        hp.scan.read_satscan(tmp_path / "b.cas", population_file=tmp_path / "a.pop", geo_file=geo, model="poisson",
                             study_period=("2000/1/1", "2000/12/31"))
    (tmp_path / "c.cas").write_text("a 1\n")
    with pytest.raises(ValueError, match=r"c.cas:1: the case record has no date \(field 3\)"):
        hp.scan.read_satscan(tmp_path / "c.cas", population_file=tmp_path / "a.pop", geo_file=geo, model="poisson",
                             study_period=("2000/1/1", "2000/12/31"))


# byte-order marks

def test_byte_order_mark_in_geo_cas_pop_ctl_and_prm(tmp_path):
    """Files saved by Windows editors start with a UTF-8 byte-order mark: SaTScan reads them."""
    for f in ("ny_leukemia.cas", "ny_leukemia.pop", "ny_leukemia.geo"):
        (tmp_path / f).write_text(BOM + SAT(f).read_text())
    bom = hp.scan.read_satscan(tmp_path / "ny_leukemia.cas", population_file=tmp_path / "ny_leukemia.pop",
                               geo_file=tmp_path / "ny_leukemia.geo", model="poisson")
    plain = hp.scan.read_satscan(SAT("ny_leukemia.cas"), **NY)
    pd.testing.assert_frame_equal(bom, plain)
    for f in ("grave.cas", "grave.ctl", "grave.geo"):
        (tmp_path / f).write_text(BOM + SAT(f).read_text())
    g = hp.scan.read_satscan(tmp_path / "grave.cas", control_file=tmp_path / "grave.ctl",
                             geo_file=tmp_path / "grave.geo")
    pd.testing.assert_frame_equal(g, hp.scan.read_satscan(SAT("grave.cas"), control_file=SAT("grave.ctl"),
                                                          geo_file=SAT("grave.geo")))
    prm = tmp_path / "b.prm"
    prm.write_text(BOM + SAT("ny_leukemia_poisson.prm").read_text())
    assert read_prm(prm)["section_of"]["CaseFile"] == "Input"
    assert prm_arguments(prm)["kwargs"] == prm_arguments(SAT("ny_leukemia_poisson.prm"))["kwargs"]


# run_prm: keys and sections given twice

def test_run_prm_refuses_a_key_repeated_in_a_later_section(tmp_path):
    p = _ny(tmp_path, MaxSpatialSizeInPopulationAtRisk="10")
    p.write_text(p.read_text() + "[Late]\nMaxSpatialSizeInPopulationAtRisk=50\n")
    with pytest.raises(ValueError, match=r"MaxSpatialSizeInPopulationAtRisk is given in section \[Spatial Window\] "
                                         r"\(MaxSpatialSizeInPopulationAtRisk='10'\) and again in section \[Late\] "
                                         r"\(MaxSpatialSizeInPopulationAtRisk='50'\)"):
        hp.scan.run_prm(p, n_replicates=9, progress=False, backend="cpu")


def test_run_prm_refuses_a_duplicated_section_or_key(tmp_path):
    p = _ny(tmp_path)
    text = p.read_text()
    p.write_text(text + "[Analysis]\nScanAreas=2\n")
    with pytest.raises(ValueError, match=r"a.prm:\d+: duplicated section \[Analysis\]"):
        hp.scan.run_prm(p, n_replicates=9, progress=False, backend="cpu")
    p.write_text(text.replace("ScanAreas=1\n", "ScanAreas=1\nScanAreas=2\n"))
    with pytest.raises(ValueError, match=r"a.prm:\d+: ScanAreas is given twice in section \[Analysis\]"):
        hp.scan.run_prm(p, n_replicates=9, progress=False, backend="cpu")
    p.write_text("[DEFAULT]\nScanAreas=2\n" + text)
    with pytest.raises(ValueError, match=r"\[DEFAULT\] is not a SaTScan section"):
        hp.scan.run_prm(p, n_replicates=9, progress=False, backend="cpu")


# run_prm: the minimum number of cases in low-rate clusters

@pytest.mark.parametrize("areas", ["2", "3"])
def test_run_prm_refuses_a_low_rate_minimum_it_cannot_honour(tmp_path, areas):
    p = _ny(tmp_path, ScanAreas=areas, MinimumCasesInLowRateClusters="100")
    with pytest.raises(ValueError, match=rf"MinimumCasesInLowRateClusters='100' .* not supported with "
                                         rf"ScanAreas='{areas}' .* fewer than 100 cases"):
        hp.scan.run_prm(p, n_replicates=9, progress=False, backend="cpu")
    p = _ny(tmp_path, ScanAreas=areas, MinimumCasesInLowRateClusters="x")
    with pytest.raises(ValueError, match="MinimumCasesInLowRateClusters='x' .* is not a whole number"):
        prm_arguments(p)


def test_run_prm_low_rate_minimum_zero_or_high_rates_only(tmp_path):
    # 0 is no restriction (what hp.scan does); with high rates only SaTScan does not use it either
    spec = prm_arguments(_ny(tmp_path, ScanAreas="2", MinimumCasesInLowRateClusters="0"))
    assert spec["kwargs"]["direction"] == "low" and "MinimumCasesInLowRateClusters" not in spec["ignored"]
    spec = prm_arguments(_ny(tmp_path, ScanAreas="1", MinimumCasesInLowRateClusters="100"))
    assert spec["ignored"]["MinimumCasesInLowRateClusters"] == "100" and spec["kwargs"]["direction"] == "high"


# run_prm: records dated outside the study period (SaTScan 10: StudyPeriodCheckType)

def test_run_prm_refuses_case_records_outside_the_study_period(tmp_path):
    p = _ny(tmp_path, _cas_with_2001_record(), MonteCarloReps="9")
    with pytest.raises(ValueError, match=r"ny_leukemia.cas:1: field 3 \(date\) '2001' is outside the study period "
                                         r"2000-01-01 to 2000-12-31; SaTScan refuses"):
        hp.scan.run_prm(p, progress=False, backend="cpu")
    # SaTScan's defaults when the file gives no study period: 2000/1/1 to 2000/12/31
    text = p.read_text()
    p.write_text(text.replace("StartDate=2000/1/1\n", "").replace("EndDate=2000/12/31\n", ""))
    with pytest.raises(ValueError, match="'2001' is outside the study period 2000-01-01 to 2000-12-31"):
        hp.scan.run_prm(p, progress=False, backend="cpu")
    p.write_text(text.replace("EndDate=2000/12/31", "EndDate=1999/12/31"))
    with pytest.raises(ValueError, match=r"EndDate='1999/12/31' .* is before StartDate"):
        hp.scan.run_prm(p, progress=False, backend="cpu")


def test_run_prm_leaves_out_records_outside_the_study_period_loudly(tmp_path):
    p = _ny(tmp_path, _cas_with_2001_record(), MonteCarloReps="9", StudyPeriodCheckType="1")
    with pytest.warns(UserWarning, match=r"1 case record\(s\) \(3 cases\) dated outside the study period"):
        res = hp.scan.run_prm(p, seed=1, progress=False, backend="cpu")
    (tmp_path / "all").mkdir()
    full = hp.scan.run_prm(_ny(tmp_path / "all", None, MonteCarloReps="9"), seed=1, progress=False, backend="cpu")
    assert full.n_cases - res.n_cases == 3
    assert prm_arguments(p)["dates"]["out_of_period"] == "ignore"
    with pytest.raises(ValueError, match="StudyPeriodCheckType='2'"):
        prm_arguments(_ny(tmp_path, StudyPeriodCheckType="2"))


def test_run_prm_space_time_leaves_out_records_outside_the_study_period(tmp_path):
    for f in ("NYCfever.cas", "NYCfever.geo"):
        shutil.copy(SAT(f), tmp_path / f)
    text = SAT("NYCfever.prm").read_text()
    (tmp_path / "a.prm").write_text(text)
    base = prm_arguments(tmp_path / "a.prm")["kwargs"]["study_period"]
    rows = (tmp_path / "NYCfever.cas").read_text().splitlines()
    (tmp_path / "NYCfever.cas").write_text("\n".join(rows + [rows[0].rsplit(None, 1)[0] + " 2001/12/01"]) + "\n")
    with pytest.raises(ValueError, match=r"NYCfever.cas: the case dated 2001-12-01 .* outside the study period"):
        hp.scan.run_prm(tmp_path / "a.prm", n_replicates=9, progress=False, backend="cpu")
    (tmp_path / "a.prm").write_text(text.replace("StudyPeriodCheckType=0", "StudyPeriodCheckType=1"))
    assert "StudyPeriodCheckType=1" in (tmp_path / "a.prm").read_text()
    with pytest.warns(UserWarning, match=r"1 case record\(s\) \(1 cases\) dated outside the study period "
                                         rf"{base[0]} to {base[1]} were left out"):
        res = hp.scan.run_prm(tmp_path / "a.prm", n_replicates=9, seed=1, progress=False, backend="cpu")
    assert res.n_cases == sum(int(r.split()[1]) for r in rows if r.strip())


def test_run_prm_undated_records_have_covariates_from_field_3(tmp_path):
    """PrecisionCaseTimes=0: case records have no date, covariates start at field 3 (SaTScan's
    guCountCategoryIndexNone); the analysis equals the dated one."""
    for f in ("nm.pop", "nm.geo"):
        shutil.copy(SAT(f), tmp_path / f)
    dated = SAT("nm.cas").read_text().splitlines()
    (tmp_path / "nm.cas").write_text("\n".join(dated) + "\n")
    undated = [" ".join(r.split()[:2] + r.split()[3:]) for r in dated if r.strip()]
    (tmp_path / "nm0.cas").write_text("\n".join(undated) + "\n")
    text = SAT("ny_leukemia_poisson.prm").read_text().replace("ny_leukemia", "nm").replace(
        "\nCoordinatesType=0", "\nCoordinatesType=1").replace("MonteCarloReps=999", "MonteCarloReps=9").replace(
        "StartDate=2000/1/1", "StartDate=1973/1/1").replace("EndDate=2000/12/31", "EndDate=1991/12/31")
    (tmp_path / "d.prm").write_text(text)
    (tmp_path / "u.prm").write_text(text.replace("CaseFile=nm.cas", "CaseFile=nm0.cas").replace(
        "PrecisionCaseTimes=1", "PrecisionCaseTimes=0"))
    a = hp.scan.run_prm(tmp_path / "d.prm", seed=1, progress=False, backend="cpu")
    b = hp.scan.run_prm(tmp_path / "u.prm", seed=1, progress=False, backend="cpu")
    assert a.n_cases == b.n_cases == 1175
    np.testing.assert_array_equal(a.clusters.log_likelihood_ratio.to_numpy(),
                                  b.clusters.log_likelihood_ratio.to_numpy())


# CLI: options the parameter file sets, and the output options' messages

@pytest.mark.parametrize("flags", [["--model", "poisson"], ["--model", "bernoulli"], ["--max-population", "0.5"],
                                   ["--max-pop", "0.1"], ["--window", "ellipse"], ["--direction", "both"],
                                   ["--min-cases", "2"], ["--covariates"], ["--covariate", "age"], ["--x", "lon"],
                                   ["--distance", "great_circle"], ["--grid-cell", "1"], ["--centres", "g.csv"],
                                   ["--circle-population", "p"]])
def test_cli_scan_run_refuses_options_the_prm_sets(tmp_path, capsys, flags):
    out = tmp_path / "c.csv"
    rc = main(["scan", "run", str(SAT("NHumbersideSpatialBernoulli.prm")), *flags, "--replicates", "9",
               "--backend", "cpu", "-o", str(out), "--png", "", "--quiet"])
    err = capsys.readouterr().err
    name = {"--max-pop": "--max-population"}.get(flags[0], flags[0])
    assert rc == 2 and f"{name} is not taken with 'run PRM'" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_cli_scan_run_still_takes_engine_and_output_options(tmp_path, capsys):
    out, png = tmp_path / "c.csv", tmp_path / "m.png"
    rc = main(["scan", "run", str(SAT("NHumbersideSpatialBernoulli.prm")), "--replicates", "9", "--seed", "1",
               "--backend", "cpu", "--threads", "1", "-o", str(out), "--png", str(png), "--quiet"])
    assert rc == 0 and out.exists() and png.exists()


@pytest.mark.parametrize("png, match", [
    ("missing/m.png", r"--png \S*missing/m.png: folder .* does not exist"),
    ("m.txt", r"--png \S*m.txt: matplotlib cannot write .txt files"),
    ("c.csv", r"matplotlib cannot write .csv files"),
])
def test_cli_scan_png_failures_name_png_before_any_work(tmp_path, capsys, png, match):
    out = tmp_path / "c.csv"
    rc = main(["scan", "run", str(SAT("NHumbersideSpatialBernoulli.prm")), "--replicates", "9", "--backend", "cpu",
               "-o", str(out), "--png", str(tmp_path / png), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and re.search(match, err) and "--out" not in err, err
    assert not out.exists()


def test_cli_scan_out_failures_name_out(tmp_path, capsys):
    rc = main(["scan", "run", str(SAT("NHumbersideSpatialBernoulli.prm")), "--replicates", "9", "--backend", "cpu",
               "-o", str(tmp_path), "--png", "", "--quiet"])
    assert rc == 2 and f"--out {tmp_path}: is a folder" in capsys.readouterr().err


def test_cli_scan_csv_options_still_work(tmp_path):
    """The options noted as given still set the CSV analysis (values, appended columns, flags)."""
    from hphawkes_py.cli import build_parser

    args = build_parser().parse_args(["scan", "x.csv", "--covariate", "age", "--covariate", "sex", "--covariates",
                                      "--model", "poisson", "--max-pop", "0.1"])
    assert args.covariate == ["age", "sex"] and args.covariates is True
    assert args.model == "poisson" and args.max_population == 0.1 and args.x == "x" and args.min_cases == 2
    args = build_parser().parse_args(["scan", "x.csv"])
    assert args.covariate is None and args.covariates is False and args.model == "bernoulli"
    g = hp.datasets.load_grave()
    f = tmp_path / "g.csv"
    pd.DataFrame({"lon": g.x, "lat": g.y, "case": g.case, "ctl": 1 - g.case}).to_csv(f, index=False)
    out = tmp_path / "c.csv"
    rc = main(["scan", str(f), "--x", "lon", "--y", "lat", "--cases", "case", "--controls", "ctl", "--model",
               "bernoulli", "--max-population", "0.5", "--replicates", "9", "--seed", "1", "--backend", "cpu",
               "-o", str(out), "--png", "", "--quiet"])
    assert rc == 0
    assert abs(pd.read_csv(out).log_likelihood_ratio.iloc[0] - 7.419340) < 1e-6
