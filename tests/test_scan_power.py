"""hp.scan.power: SaTScan's power evaluation (PerformPowerEvaluation) of the Poisson scan.

Checked by construction: the null replicates are those of hp.scan.poisson with the same seed,
the critical values are SaTScan's order statistics / Gumbel quantiles of them, an alternative
of relative risk 1 everywhere has power alpha, and the alternative replicates are multinomial
draws in proportion to expected x relative risk.
"""
import doctest
import importlib
import math

import numpy as np
import pytest

import hphawkes_py as hp
from hphawkes_py.scan import poisson
from hphawkes_py.scan.power_evaluation import PowerResult, power, read_alternative_hypotheses

# the modules themselves
power_module = importlib.import_module("hphawkes_py.scan.power_evaluation")
iterative = importlib.import_module("hphawkes_py.scan.iterative")

RUN = dict(seed=11, backend="cpu", progress=False)


def _grid():
    """8 x 8 grid, population 1000 each, about 5 cases per location."""
    g = np.arange(8.0)
    xy = np.array([(x, y) for x in g for y in g])
    pop = np.full(len(xy), 1000)
    cases = np.random.default_rng(5).poisson(5, len(xy))
    corner = np.flatnonzero((xy[:, 0] <= 1) & (xy[:, 1] <= 1))
    return xy, cases, pop, corner


def test_null_replicates_and_critical_values_are_satscans():
    xy, cases, pop, corner = _grid()
    rr = np.ones(len(xy))
    rr[corner] = 2.0
    res = power(xy, cases, pop, rr, n_replicates=999, n_power_replicates=100, **RUN)
    assert isinstance(res, PowerResult)
    plain = poisson(xy, cases, pop, n_replicates=999, **RUN)
    np.testing.assert_array_equal(res.null_llr, plain.null_llr)
    desc = np.sort(plain.null_llr)[::-1]
    # SignificantRatios: the floor((R + 1) alpha)-th largest null maximum
    assert res.critical_values == {0.05: desc[49], 0.01: desc[9], 0.001: desc[0]}
    t = res.table
    assert t.alternative.tolist() == [1, 1, 1] and t.alpha.tolist() == [0.05, 0.01, 0.001]
    for a, p, se in zip(t.alpha, t.power, t.standard_error):
        c = res.critical_values[a]
        assert p == np.mean(res.alternative_llr[0] > c)
        assert se == math.sqrt(p * (1 - p) / 100)


def test_alternative_replicates_are_weighted_multinomial_draws():
    xy, cases, pop, corner = _grid()
    ones = np.ones(len(xy))
    a = power(xy, cases, pop, np.stack([ones, 2 * ones, ones]), n_replicates=999, n_power_replicates=200, **RUN)
    # alternative k (0-based) draws from child n_replicates + k of the root seed: a constant relative
    # risk (1 or 2: the weights are normalised, x2 is exact) gives the draws of a Poisson scan's null
    # seeded with that child
    child = np.random.SeedSequence(11, spawn_key=(999 + 1,))
    ref = poisson(xy, cases, pop, n_replicates=200, seed=child, backend="cpu", progress=False)
    np.testing.assert_array_equal(a.alternative_llr[1], ref.null_llr)
    child0 = np.random.SeedSequence(11, spawn_key=(999,))
    ref0 = poisson(xy, cases, pop, n_replicates=200, seed=child0, backend="cpu", progress=False)
    np.testing.assert_array_equal(a.alternative_llr[0], ref0.null_llr)
    assert not np.array_equal(a.alternative_llr[0], a.alternative_llr[2])  # each alternative its own draws
    assert len(a.table) == 9 and a.table.alternative.tolist() == [1, 1, 1, 2, 2, 2, 3, 3, 3]


def test_power_under_the_null_is_alpha_and_grows_with_the_risk():
    xy, cases, pop, corner = _grid()
    rr = np.ones((3, len(xy)))
    rr[1, corner] = 1.5
    rr[2, corner] = 3.0
    res = power(xy, cases, pop, rr, n_replicates=999, n_power_replicates=2000, **RUN)
    p05 = res.power_at(0.05)
    se = math.sqrt(0.05 * 0.95 / 2000)
    assert abs(p05[0] - 0.05) < 4 * se
    assert p05[0] < p05[1] < p05[2] and p05[2] > 0.95


def test_total_cases_instead_of_case_counts():
    xy, cases, pop, corner = _grid()
    rr = np.ones(len(xy))
    rr[corner] = 2.0
    a = power(xy, cases, pop, rr, n_replicates=999, n_power_replicates=100, **RUN)
    b = power(xy, int(cases.sum()), pop, rr, n_replicates=999, n_power_replicates=100, **RUN)
    assert a.n_cases == b.n_cases == int(cases.sum())
    assert a.table.equals(b.table)


def test_gumbel_critical_values_and_estimation():
    xy, cases, pop, corner = _grid()
    rr = np.ones(len(xy))
    rr[corner] = 2.0
    res = power(xy, cases, pop, rr, n_replicates=999, n_power_replicates=100, critical_values="gumbel",
                estimation="gumbel", **RUN)
    x = res.null_llr
    beta = np.sqrt(np.mean(x**2) - np.mean(x)**2) * math.sqrt(6) / math.pi  # SaTScan: variance with divisor n
    mu = np.mean(x) - 0.5772156649015329 * beta
    for a in (0.05, 0.01, 0.001):
        assert res.critical_values[a] == pytest.approx(mu - beta * math.log(math.log(1 / (1 - a))), rel=1e-12)
    y = res.alternative_llr[0]
    by = np.std(y) * math.sqrt(6) / math.pi
    my = np.mean(y) - 0.5772156649015329 * by
    for a, p in zip(res.table.alpha, res.table.power):
        assert p == pytest.approx(1 - math.exp(-math.exp((my - res.critical_values[a]) / by)), rel=1e-12)
    assert res.table.standard_error.isna().all()


def test_given_critical_values():
    xy, cases, pop, corner = _grid()
    rr = np.ones(len(xy))
    rr[corner] = 2.0
    res = power(xy, cases, pop, rr, n_replicates=99, n_power_replicates=100, critical_values=(5.0, 7.0, 9.0), **RUN)
    assert res.critical_values == {0.05: 5.0, 0.01: 7.0, 0.001: 9.0} and res.critical_value_type == "given"
    assert res.power_at(0.01)[0] == np.mean(res.alternative_llr[0] > 7.0)
    assert "Alternative #1" in res.summary()


@pytest.mark.parametrize("kwargs, exc, words", [
    (dict(relative_risks=np.ones(5)), ValueError, ["relative_risks", "(5,)", "64"]),
    (dict(relative_risks=np.r_[-1.0, np.ones(63)]), ValueError, ["relative_risks", "row 0", "-1.0"]),
    (dict(relative_risks=np.r_[np.nan, np.ones(63)]), ValueError, ["relative_risks", "nan"]),
    (dict(relative_risks=np.zeros(64)), ValueError, ["alternative 1", "0"]),
    (dict(n_replicates=99), ValueError, ["n_replicates=99", "alpha=0.001", "999"]),
    (dict(critical_values="exact"), ValueError, ["critical_values", "exact"]),
    (dict(critical_values=(5.0, -1.0, 9.0)), ValueError, ["critical_values", "-1.0"]),
    (dict(critical_values=(5.0, 7.0)), ValueError, ["critical_values", "three"]),
    (dict(estimation="exact"), ValueError, ["estimation", "exact"]),
    (dict(n_power_replicates=0), ValueError, ["n_power_replicates", "0"]),
    (dict(cases=0), ValueError, ["cases", "0"]),
    (dict(cases=600.0), TypeError, ["cases", "600.0", "an int"]),
    (dict(cases=True), TypeError, ["cases", "True"]),
])
def test_refuses_before_any_work(kwargs, exc, words):
    xy, cases, pop, corner = _grid()
    kw = dict(cases=cases, relative_risks=np.ones(len(xy)), n_replicates=999, n_power_replicates=100, **RUN)
    kw.update(kwargs)
    with pytest.raises(exc) as e:
        power(xy, kw.pop("cases"), pop, kw.pop("relative_risks"), **kw)
    for w in words:
        assert w in str(e.value)


def test_read_alternative_hypotheses(tmp_path):
    f = tmp_path / "alt.ha"
    f.write_text("a 2\nb 3\nb 2\n\n\nall 1.5\nc 2\n")
    rr = read_alternative_hypotheses(f, ["a", "b", "c", "b"])
    np.testing.assert_array_equal(rr, [[2, 6, 1, 6], [1.5, 1.5, 3, 1.5]])
    for text, words in [("z 2\n", ["line 1", "'z'"]), ("a x\n", ["line 1", "'x'"]), ("a -2\n", ["line 1", "'-2'"]),
                        ("a 2 2000/1/1 2000/6/30\n", ["line 1", "dates"]), ("\n\n", ["no relative risks"])]:
        f.write_text(text)
        with pytest.raises(ValueError) as e:
            read_alternative_hypotheses(f, ["a", "b", "c"])
        for w in words:
            assert w in str(e.value)
    with pytest.raises(ValueError, match="does not exist"):
        read_alternative_hypotheses(tmp_path / "none.ha", ["a"])


@pytest.mark.parametrize("module", [power_module, iterative])
def test_docstring_examples_run(module, monkeypatch):
    # hp.scan exports these names once the package's __init__ lists them; the examples use them
    for name in module.__all__:
        monkeypatch.setattr(hp.scan, name, getattr(module, name), raising=False)
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    n = 0
    for t in finder.find(module, globs={"hp": hp, "np": np}):
        if t.examples:
            n += 1
            runner.run(t)
    assert n >= 2 and runner.failures == 0


def _bad(key, why):
    return ValueError(f"{key} {why}")


def _ny():
    path = hp.datasets.satscan_sample_path
    df = hp.scan.read_satscan(path("ny_leukemia.cas"), population_file=path("ny_leukemia.pop"),
                              geo_file=path("ny_leukemia.geo"), model="poisson")
    return df


def test_prm_power_settings(tmp_path):
    from hphawkes_py.scan.power_evaluation import prm_power

    (tmp_path / "alt.ha").write_text("1 2\n")
    on = {"PerformPowerEvaluation": "y", "PowerEvaluationsMethod": "0", "CriticalValueType": "0",
          "PowerEstimationType": "0", "AlternativeHypothesisFilename": "alt.ha", "NumberPowerReplications": "1000",
          "MonteCarloReps": "999"}
    assert prm_power({"PerformPowerEvaluation": "n"}, "poisson", tmp_path, _bad) is None
    s = prm_power(on, "poisson", tmp_path, _bad)
    assert s == {"method": 0, "total_cases": None, "alternatives_file": tmp_path / "alt.ha",
                 "kwargs": {"critical_values": "monte_carlo", "estimation": "monte_carlo", "n_power_replicates": 1000}}
    s = prm_power({**on, "PowerEvaluationsMethod": "2", "PowerEvaluationTotalCases": "600", "CriticalValueType": "2",
                   "CriticalValue05": "8.1", "CriticalValue01": "10", "CriticalValue001": "13.5",
                   "PowerEstimationType": "1"}, "poisson", tmp_path, _bad)
    assert s["total_cases"] == 600 and s["kwargs"]["critical_values"] == (8.1, 10.0, 13.5)
    assert s["kwargs"]["estimation"] == "gumbel"
    for values, model, words in [
        (on, "bernoulli", ["PerformPowerEvaluation", "Poisson"]),
        ({**on, "MonteCarloReps": "99"}, "poisson", ["MonteCarloReps", "999"]),
        ({**on, "NumberPowerReplications": "150"}, "poisson", ["NumberPowerReplications", "multiple of 100"]),
        ({**on, "NumberPowerReplications": "2000"}, "poisson", ["NumberPowerReplications", "1000"]),
        ({**on, "AlternativeHypothesisFilename": "none.ha"}, "poisson", ["AlternativeHypothesisFilename", "none.ha"]),
        ({**on, "AlternativeHypothesisFilename": ""}, "poisson", ["AlternativeHypothesisFilename", "required"]),
        ({**on, "CriticalValueType": "2", "CriticalValue05": "x"}, "poisson", ["CriticalValue05", "number"]),
        ({**on, "CriticalValueType": "5"}, "poisson", ["CriticalValueType"]),
        ({**on, "PowerEstimationType": "3"}, "poisson", ["PowerEstimationType"]),
        ({**on, "PowerEvaluationsMethod": "4"}, "poisson", ["PowerEvaluationsMethod"]),
        ({**on, "PowerEvaluationsSimulationMethod": "2"}, "poisson", ["PowerEvaluationsSimulationMethod"]),
        ({**on, "ReportPowerEvaluationSimulationData": "y"}, "poisson", ["ReportPowerEvaluationSimulationData"]),
        ({**on, "IterativeScan": "y"}, "poisson", ["IterativeScan"]),
    ]:
        with pytest.raises(ValueError) as e:
            prm_power(values, model, tmp_path, _bad)
        for w in words:
            assert w in str(e.value)


def test_run_prm_power_on_satscan_files(tmp_path):
    from hphawkes_py.scan.power_evaluation import prm_power, run_prm_power

    df = _ny()
    (tmp_path / "ny.ha").write_text("1 4\n2 4\n3 4\n4 4\n5 4\n\nall 1\n")
    on = {"PerformPowerEvaluation": "y", "AlternativeHypothesisFilename": "ny.ha", "NumberPowerReplications": "100",
          "MonteCarloReps": "999"}
    s = prm_power(on, "poisson", tmp_path, _bad)
    xy = df[["x", "y"]].to_numpy()
    kw = dict(n_replicates=999, max_population=0.1, seed=2, backend="cpu", progress=False)
    res = run_prm_power(s, xy, df.cases.to_numpy(), df.population.to_numpy(), df.location_id.to_numpy(), **kw)
    assert res.analysis is not None  # method 0: the analysis runs too, on the same null replicates
    np.testing.assert_array_equal(res.analysis.null_llr, res.null_llr)
    assert res.analysis.most_likely.p_value == (1 + np.sum(res.null_llr >= res.analysis.most_likely.log_likelihood_ratio)) / 1000
    p = res.power_at(0.05)
    assert p[0] > 0.5 and abs(p[1] - 0.05) < 4 * math.sqrt(0.05 * 0.95 / 100)
    only = run_prm_power({**s, "method": 1}, xy, df.cases.to_numpy(), df.population.to_numpy(),
                         df.location_id.to_numpy(), **kw)
    assert only.analysis is None and only.table.equals(res.table)


@pytest.mark.parametrize("window", [dict(window="ellipse", ellipse_shapes=(2,), ellipse_angles=(4,)),
                                    dict(grid_cell=1.5), dict(direction="both", max_population=0.2)])
def test_null_replicates_follow_the_scan_settings(window):
    xy, cases, pop, corner = _grid()
    rr = np.ones(len(xy))
    rr[corner] = 2.0
    res = power(xy, cases, pop, rr, n_replicates=999, n_power_replicates=100, **window, **RUN)
    plain = poisson(xy, cases, pop, n_replicates=999, **window, **RUN)
    np.testing.assert_array_equal(res.null_llr, plain.null_llr)


def test_power_table_to_csv(tmp_path):
    import pandas as pd

    xy, cases, pop, corner = _grid()
    res = power(xy, cases, pop, np.ones(len(xy)), n_replicates=99, n_power_replicates=50,
                critical_values=(5.0, 7.0, 9.0), **RUN)
    res.to_csv(tmp_path / "p.csv")
    back = pd.read_csv(tmp_path / "p.csv")
    assert back.alpha.tolist() == [0.05, 0.01, 0.001] and back.power.tolist() == res.table.power.tolist()
    assert repr(res).startswith("PowerResult(alternatives=1, n_power_replicates=50")


def test_run_prm_power_evaluation(tmp_path):
    # runs once run_prm honours PerformPowerEvaluation (the hook prm_power); skipped while it refuses it
    import shutil

    from test_scan_iterative import _sample_prm

    sat = hp.datasets.satscan_sample_path
    for f in ("ny_leukemia.cas", "ny_leukemia.pop", "ny_leukemia.geo"):
        shutil.copy(sat(f), tmp_path / f)
    (tmp_path / "ny.ha").write_text("1 3\n2 3\n3 3\n4 3\n5 3\n")
    prm = _sample_prm(tmp_path / "a.prm", CaseFile="ny_leukemia.cas", ControlFile="", PopulationFile="ny_leukemia.pop",
                      CoordinatesFile="ny_leukemia.geo", ModelType="0", MaxSpatialSizeInPopulationAtRisk="10",
                      PrecisionCaseTimes="1", StartDate="2000/1/1", EndDate="2000/12/31", MonteCarloReps="999",
                      PerformPowerEvaluation="y", PowerEvaluationsMethod="1", AlternativeHypothesisFilename="ny.ha",
                      NumberPowerReplications="100")
    try:
        res = hp.scan.run_prm(prm, seed=4, backend="cpu", progress=False)
    except ValueError as e:
        if "PerformPowerEvaluation" in str(e) and "not supported" in str(e):
            pytest.skip("run_prm does not honour PerformPowerEvaluation yet")
        raise
    df = _ny()
    rr = read_alternative_hypotheses(tmp_path / "ny.ha", df.location_id.to_numpy())
    ref = power(df[["x", "y"]].to_numpy(float), df.cases.to_numpy(), df.population.to_numpy(), rr,
                n_replicates=999, n_power_replicates=100, max_population=0.1, min_cases=2, seed=4, backend="cpu",
                progress=False)
    assert isinstance(res, PowerResult) and res.analysis is None
    assert res.table.equals(ref.table)


#: SaTScan 10.3.2's estimated power (batch binary built from github scanstatistics/satscan @0cd87a6 by
#: benchmarks/peers/build_satscan.sh): SaTScan's NHumbersideSpatialBernoulli.prm with ny_leukemia.cas/.pop/.geo,
#: ModelType=0, MaxSpatialSizeInPopulationAtRisk=10, PrecisionCaseTimes=1, 2000/1/1-2000/12/31, MonteCarloReps=9999,
#: PerformPowerEvaluation=y, PowerEvaluationsMethod=1, CriticalValueType=2 (8, 10, 13), PowerEstimationType=0,
#: NumberPowerReplications=10000 and the alternative hypothesis file below; alpha 0.05, 0.01, 0.001.
SATSCAN_HA = "".join(f"{i} 3\n" for i in range(1, 11)) + "\n" + "".join(f"{i} 2\n" for i in range(100, 112))
SATSCAN_POWER = [[0.900, 0.780, 0.531], [0.488, 0.285, 0.110]]


def test_matches_satscan_power_evaluation(tmp_path):
    df = _ny()
    (tmp_path / "ny.ha").write_text(SATSCAN_HA)
    rr = read_alternative_hypotheses(tmp_path / "ny.ha", df.location_id.to_numpy())
    n = 2000
    res = power(df[["x", "y"]].to_numpy(float), df.cases.to_numpy(), df.population.to_numpy(), rr, n_replicates=99,
                n_power_replicates=n, critical_values=(8.0, 10.0, 13.0), max_population=0.1, min_cases=2, **RUN)
    for k, expect in enumerate(SATSCAN_POWER):
        for a, p in zip((0.05, 0.01, 0.001), expect):
            ours = res.power_at(a)[k]
            se = math.sqrt(p * (1 - p) / n + p * (1 - p) / 10000)
            assert abs(ours - p) < 4 * se, (k, a, ours, p)
