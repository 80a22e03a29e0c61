"""SCCS study diagnostics (hp.sccs.mdrr, time_stability, ...) against hand computations and the
R code of OHDSI SelfControlledCaseSeries.

The R reference numbers come from SelfControlledCaseSeries' own code run in R 4.2: ``computeMdrr``'s
power functions and bisection (R/Power.R) given ``r`` and ``n``, and the core of
``checkTimeStabilityAssumption`` (R/Diagnostics.R, v6) given observed and expected counts.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats

import hphawkes_py as hp
from hphawkes_py.sccs.diagnostics import _log_lik_ratio, _rate_per_month, _stability_test


def _two_row_design(r, n, extra=()):
    """n strata with one event each, every stratum 100 days of which 100 r exposed (covariate 1)."""
    rows, covs = [], []
    for s in range(n):
        rows += [(s, 2 * s, 1.0, 100.0 * r), (s, 2 * s + 1, 0.0, 100.0 * (1 - r))]
        covs.append((2 * s, 1))
    rows += list(extra)
    out = pd.DataFrame(rows, columns=["stratum_id", "row_id", "y", "time"])
    cov = pd.DataFrame(covs, columns=["row_id", "covariate_id"])
    return hp.sccs.SCCSData.from_long(out, cov)


# --------------------------------------------------------------------------------------------- MDRR
# computeMdrr (SelfControlledCaseSeries R/Power.R) in R: (r, n, method) -> MDRR before its rounding
R_MDRR = [
    (0.1, 50, "SRL1", 2.8702428110135512), (0.1, 50, "binomial", 2.9484251241217065),
    (0.05, 200, "SRL1", 2.1175260128327853), (0.05, 200, "binomial", 2.1509357845262587),
    (0.3, 10, "SRL1", 6.0375047090797933), (0.3, 10, "binomial", 6.2581058751781473),
    (0.02, 1000, "SRL1", 1.7232763984887867), (0.02, 1000, "binomial", 1.7387900818000737),
    (0.5, 3, "SRL1", 6655.73454964145),
]


@pytest.mark.parametrize("r, n, method, expected", R_MDRR)
def test_mdrr_matches_selfcontrolledcaseseries(r, n, method, expected):
    d = hp.sccs.mdrr(_two_row_design(r, n), 1, method=method)
    assert d.value == pytest.approx(expected, rel=1e-9)
    assert d.details["prop_time_exposed"] == pytest.approx(r, rel=1e-12)
    assert d.details["events"] == n
    assert d.passed == (expected < 10)
    assert d.threshold == 10.0


def test_mdrr_one_sided_and_other_power_match_r():
    d = hp.sccs.mdrr(_two_row_design(0.1, 50), 1, alpha=0.01, power=0.9, two_sided=False)
    assert d.value == pytest.approx(3.6842734194848243, rel=1e-9)


def test_mdrr_beyond_the_search_range_is_infinite():
    # computeMdrr reports exp(10) = 22026.47 here: the power never reaches 0.8 on its range
    d = hp.sccs.mdrr(_two_row_design(0.5, 3), 1, method="binomial")
    assert d.value == math.inf and not d.passed


def test_mdrr_counts_by_hand():
    # stratum 0: 30 of 100 days exposed, 2 events; stratum 1: 20 of 50 days, 1 event;
    # stratum 2: unexposed (not counted); stratum 3: one row, exposed throughout (not informative)
    out = pd.DataFrame({"stratum_id": [0, 0, 1, 1, 2, 2, 3], "row_id": range(7),
                        "y": [1, 1, 0, 1, 1, 0, 4], "time": [30.0, 70.0, 20.0, 30.0, 10.0, 10.0, 40.0]})
    cov = pd.DataFrame({"row_id": [0, 2, 6], "covariate_id": ["drug"] * 3})
    data = hp.sccs.SCCSData.from_long(out, cov)
    d = hp.sccs.mdrr(data, "drug")
    assert d.details["time_exposed"] == 50.0
    assert d.details["time_total"] == 150.0
    assert d.details["events"] == 3.0
    assert d.details["exposed_cases"] == 2
    # the SRL1 power at the reported MDRR is 0.8 (to the bisection's precision)
    r, n, z, b = 50.0 / 150.0, 3.0, stats.norm.ppf(0.975), math.log(d.value)
    eb = math.exp(b)
    A = 2 * ((eb * r / (eb * r + 1 - r)) * b - math.log(eb * r + 1 - r))
    B = b ** 2 / A * eb * r * (1 - r) / (eb * r + 1 - r) ** 2
    assert stats.norm.cdf((math.sqrt(n * A) - z) / math.sqrt(B)) == pytest.approx(0.8, abs=1e-6)
    # a fit gives the same as its data
    res = hp.sccs.fit(data, prior="none", progress=False)
    assert hp.sccs.mdrr(res, "drug").value == d.value


def test_mdrr_exposed_throughout_or_never_is_infinite():
    out = pd.DataFrame({"stratum_id": [0, 0, 1, 1], "row_id": range(4), "y": [1, 0, 1, 0],
                        "time": [10.0, 10.0, 5.0, 5.0]})
    both = pd.DataFrame({"row_id": [0, 1, 2, 3], "covariate_id": [1, 1, 1, 1]})
    d = hp.sccs.mdrr(hp.sccs.SCCSData.from_long(out, both), 1)
    assert d.details["prop_time_exposed"] == 1.0 and d.value == math.inf and not d.passed


def test_mdrr_refuses_bad_input():
    data = _two_row_design(0.1, 20)
    with pytest.raises(ValueError, match=r"covariate 'x' is not in the data"):
        hp.sccs.mdrr(data, "x")
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\)"):
        hp.sccs.mdrr(data, 1, alpha=1.0)
    with pytest.raises(ValueError, match=r"power must be in \(0, 1\)"):
        hp.sccs.mdrr(data, 1, power=0.0)
    with pytest.raises(ValueError, match=r"power must exceed the test's level \(0.25\)"):
        hp.sccs.mdrr(data, 1, alpha=0.5, power=0.2)
    with pytest.raises(ValueError, match=r"method must be one of \('SRL1', 'binomial'\)"):
        hp.sccs.mdrr(data, 1, method="SRL2")
    with pytest.raises(ValueError, match=r"threshold must be > 1"):
        hp.sccs.mdrr(data, 1, threshold=0.5)
    with pytest.raises(TypeError, match=r"two_sided must be True or False"):
        hp.sccs.mdrr(data, 1, two_sided="yes")
    with pytest.raises(TypeError, match=r"data must be an SCCSData or an SCCSFit, got DataFrame"):
        hp.sccs.mdrr(pd.DataFrame(), 1)
    out = pd.DataFrame({"stratum_id": [0, 0], "row_id": [0, 1], "y": [1, 0], "time": [1.0, 1.0]})
    dose = pd.DataFrame({"row_id": [0], "covariate_id": [1], "value": [2.5]})
    with pytest.raises(ValueError, match=r"exposure indicator .* covariate 1 has other values"):
        hp.sccs.mdrr(hp.sccs.SCCSData.from_long(out, dose), 1)


# ----------------------------------------------------------------------------------- time stability
def test_time_stability_statistic_matches_r():
    o = np.array([3, 5, 2, 8, 4, 6], float)
    e = np.array([4.2, 4.8, 3.9, 5.1, 4.4, 4.6])
    # the log-likelihood of checkTimeStabilityAssumption (R: minus this)
    assert -_log_lik_ratio(1.1, o, e) == pytest.approx(7.5409483096474572, rel=1e-13)
    assert -_log_lik_ratio(1.5, o, e) == pytest.approx(8.6250011604197816, rel=1e-13)
    assert _stability_test(o, e, 1.10) == (1.0, 1.0)
    o2 = np.array([0, 12, 1, 15, 2, 11, 0, 14], float)
    e2 = np.array([5, 6, 5.5, 6.5, 6, 5.8, 5.2, 6.1])
    assert -_log_lik_ratio(1.1, o2, e2) == pytest.approx(31.300441739802768, rel=1e-13)
    x_hat, p = _stability_test(o2, e2, 1.10)
    # R's L-BFGS-B stops within its tolerance of the optimum
    assert x_hat == pytest.approx(2.3812787357639191, abs=1e-5)
    assert p == pytest.approx(5.0669877807672895e-08, rel=1e-4)
    h = 1e-5
    assert abs(_log_lik_ratio(x_hat + h, o2, e2) - _log_lik_ratio(x_hat - h, o2, e2)) / (2 * h) < 1e-4


def test_time_stability_month_table_by_hand():
    day = lambda s: int((np.datetime64(s) - np.datetime64("1970-01-01")).astype(int))  # noqa: E731
    obs = pd.DataFrame({"person_id": [1, 2, 3], "start": [day("2020-01-15"), day("2020-02-01"), day("2020-01-01")],
                        "end": [day("2020-03-10"), day("2020-02-20"), day("2020-01-31")]})
    outcomes = pd.DataFrame({"person_id": [1, 1, 2, 1], "day": [day("2020-01-20"), day("2020-03-01"),
                                                                day("2020-02-05"), day("2021-01-01")]})
    table, outside = _rate_per_month(obs, outcomes, "1970-01-01")
    assert outside == 1  # the 2021 outcome of person 1, outside observation
    # person 1: 17/31 of January, February, 10/31 of March; 2 outcomes
    r1 = 2 / (2 + 17 / 31 + 10 / 31)
    # person 2: February only, from day 1 to day 20: start fraction 31/31 (as SelfControlledCaseSeries)
    r2 = 1 / (0 + 31 / 31 + 20 / 31)
    # person 3 has no outcome: not a case
    assert table["month"].tolist() == [2020 * 12, 2020 * 12 + 1, 2020 * 12 + 2]
    assert table["month_start"].astype(str).tolist() == ["2020-01-01", "2020-02-01", "2020-03-01"]
    np.testing.assert_allclose(table["expected"], [17 / 31 * r1, r1 + r2, 10 / 31 * r1], rtol=1e-14)
    assert table["observed"].tolist() == [1.0, 1.0, 1.0]


def test_time_stability_detects_a_trend_and_passes_a_flat_rate():
    rng = np.random.default_rng(3)
    n = 600
    start = rng.integers(18000, 18500, n)
    obs = pd.DataFrame({"person_id": np.arange(n), "start": start, "end": start + 1000})
    flat = pd.DataFrame({"person_id": np.arange(n), "day": start + rng.integers(0, 1001, n)})
    d = hp.sccs.time_stability(obs, flat)
    assert d.passed and d.value > 0.05 and d.name == "time_stability"
    # outcomes crowded into the first months of 2020: far from the even spread
    crowd = pd.DataFrame({"person_id": np.arange(n), "day": np.maximum(start, 18262) + rng.integers(0, 60, n)})
    d = hp.sccs.time_stability(obs, crowd)
    assert not d.passed and d.value < 1e-6 and d.details["ratio"] > 1.5


def test_time_stability_refuses_bad_input():
    obs = pd.DataFrame({"person_id": [1, 2], "start": [0, 0], "end": [100, 100]})
    oc = pd.DataFrame({"person_id": [1], "day": [5]})
    with pytest.raises(ValueError, match=r"max_ratio must be >= 1, got 0.9"):
        hp.sccs.time_stability(obs, oc, max_ratio=0.9)
    with pytest.raises(ValueError, match=r"outcomes has 1 row\(s\) of persons without an observation period"):
        hp.sccs.time_stability(obs, pd.DataFrame({"person_id": [7], "day": [5]}))
    with pytest.raises(ValueError, match=r"no person has an outcome inside the observation period"):
        hp.sccs.time_stability(obs, pd.DataFrame({"person_id": [1], "day": [500]}))
    with pytest.raises(ValueError, match=r"one row per person_id; 1 appears more than once"):
        hp.sccs.time_stability(pd.concat([obs, obs.iloc[:1]]), oc)
    with pytest.raises(ValueError, match=r"end < start for 1 person\(s\), first at row 0"):
        hp.sccs.time_stability(pd.DataFrame({"person_id": [1], "start": [10], "end": [5]}), oc)
    with pytest.raises(ValueError, match=r"day_origin must be a calendar date"):
        hp.sccs.time_stability(obs, oc, day_origin="soon")
    with pytest.raises(ValueError, match=r"outcomes must have columns"):
        hp.sccs.time_stability(obs, pd.DataFrame({"person_id": [1]}))


# -------------------------------------------------------------------------------- pre-exposure gain
def _gain_tables():
    # person 1: observed 0..200, first era at 100 (another at 150): 30 days before, 30 after;
    #   outcomes at 80 (delta -20, before), 110 (after), 140 (delta 40, outside the windows)
    # person 2: observed 0..200, first era at 10: 10 days before, 30 after; outcomes at 5 (before), 12 (after)
    # person 3: observed 0..100, era at 90: 30 before, 10 after; outcome at 95 (after) and 50 (delta -40)
    # person 4: era starts at its last day (not < end): no first exposure
    obs = pd.DataFrame({"person_id": [1, 2, 3, 4], "start": [0, 0, 0, 0], "end": [200, 200, 100, 50]})
    eras = pd.DataFrame({"person_id": [1, 1, 2, 3, 4], "start": [150, 100, 10, 90, 50], "end": [160, 120, 20, 95, 50],
                         "covariate_id": [7, 7, 7, 7, 7]})
    outcomes = pd.DataFrame({"person_id": [1, 1, 1, 2, 2, 3, 3, 4], "day": [80, 110, 140, 5, 12, 95, 50, 20]})
    return obs, eras, outcomes


def test_pre_exposure_gain_by_hand():
    d = hp.sccs.pre_exposure_gain(*_gain_tables(), 7)
    # strata: (t_before, y_before, t_after, y_after)
    strata = [(30, 1, 30, 1), (10, 1, 30, 1), (30, 0, 10, 1)]

    def ll(b):
        return sum(yb * (b + math.log(tb)) + ya * math.log(ta) - (yb + ya) * math.log(tb * math.exp(b) + ta)
                   for tb, yb, ta, ya in strata)

    res = optimize.minimize_scalar(lambda b: -ll(b), bounds=(-10, 10), method="bounded", options={"xatol": 1e-12})
    llr = ll(res.x) - ll(0.0)
    p = stats.chi2.sf(2 * llr, 1) / 2
    p = 1 - p if res.x < 0 else p
    assert d.details["cases"] == 3
    assert (d.details["events_before"], d.details["events_after"]) == (2.0, 3.0)
    assert d.details["log_rr"] == pytest.approx(res.x, abs=1e-6)
    assert d.details["llr"] == pytest.approx(llr, rel=1e-8)
    assert d.value == pytest.approx(p, rel=1e-7)
    assert d.passed == (p >= 0.05)


def test_pre_exposure_gain_all_events_before_exposure():
    obs = pd.DataFrame({"person_id": [1, 2, 3], "start": [0, 0, 0], "end": [200, 200, 200]})
    eras = pd.DataFrame({"person_id": [1, 2, 3], "start": [100, 100, 100], "end": [110, 110, 110],
                         "covariate_id": ["d"] * 3})
    outcomes = pd.DataFrame({"person_id": [1, 2, 3, 3], "day": [90, 95, 80, 85]})
    d = hp.sccs.pre_exposure_gain(obs, eras, outcomes, "d")
    # every event before: the likelihood's supremum is 1, so llr = -log L(0) = 4 log 2
    assert d.details["log_rr"] == math.inf
    assert d.details["llr"] == pytest.approx(4 * math.log(2.0), rel=1e-12)
    assert d.value == pytest.approx(stats.chi2.sf(8 * math.log(2.0), 1) / 2, rel=1e-12)
    assert not d.passed


def test_pre_exposure_gain_refuses_bad_input():
    obs, eras, outcomes = _gain_tables()
    with pytest.raises(ValueError, match=r"covariate 8 has no eras; eras.covariate_id has \[7\]"):
        hp.sccs.pre_exposure_gain(obs, eras, outcomes, 8)
    with pytest.raises(ValueError, match=r"no outcome within 1 days of a first exposure to 7"):
        hp.sccs.pre_exposure_gain(obs, eras, outcomes, 7, days=1)
    with pytest.raises(ValueError, match=r"days must be >= 1"):
        hp.sccs.pre_exposure_gain(obs, eras, outcomes, 7, days=0)
    late = eras.assign(start=1000, end=1000)
    with pytest.raises(ValueError, match=r"no case has an era of 7 starting inside its observation"):
        hp.sccs.pre_exposure_gain(obs, late, outcomes, 7)


# ------------------------------------------------------------------ interval checks against null bounds
@pytest.fixture(scope="module")
def probe_fit():
    obs, eras, outcomes, _ = hp.sccs.simulate(n_cases=300, n_drugs=1, prevalence=0.8, output="eras", seed=4)
    probe = hp.sccs.end_of_observation_eras(obs)
    windows = {1: [hp.sccs.RiskWindow(11, -30, -1, "start", "start"), hp.sccs.RiskWindow(12, 0, 0, "start", "end")]}
    data = hp.sccs.SCCSData.from_eras(obs, pd.concat([eras, probe]), outcomes, windows=windows)
    return hp.sccs.fit(data, prior="none", progress=False)


def test_interval_checks_read_the_fit(probe_fit):
    table = probe_fit.results_table([11, 99], method="profile")
    d = hp.sccs.event_exposure_independence(probe_fit, 11)
    assert d.value == pytest.approx(table.loc[11, "irr"])
    assert (d.details["lower"], d.details["upper"]) == (table.loc[11, "irr_lower"], table.loc[11, "irr_upper"])
    assert d.threshold == (0.8, 1.25)
    assert d.passed == (d.details["lower"] <= 1.25 and d.details["upper"] >= 0.8)
    e = hp.sccs.event_observation_independence(probe_fit)
    assert e.value == pytest.approx(table.loc[99, "irr"]) and e.threshold == (0.5, 2.0)
    # bounds (1, 1): passes exactly when the interval contains 1
    lo, hi = d.details["lower"], d.details["upper"]
    assert hp.sccs.event_exposure_independence(probe_fit, 11, null_bounds=(1.0, 1.0)).passed == (lo <= 1 <= hi)
    assert hp.sccs.event_exposure_independence(probe_fit, 11, null_bounds=(min(lo, 1.0), max(hi, 1.0))).passed


def test_interval_check_fails_when_the_interval_misses_the_bounds():
    # every event in the first 10 days after exposure: the pre-exposure window is fine, the rate ratio of
    # the exposure window itself is far above 1.25
    obs, eras, outcomes, _ = hp.sccs.simulate(n_cases=300, n_drugs=1, prevalence=1.0, output="eras", seed=8)
    first = eras.groupby("person_id")["start"].min()
    obs = obs[obs["person_id"].isin(first.index)]
    o = obs.set_index("person_id")
    day = np.minimum(first + 3, o.loc[first.index, "end"]).clip(lower=o.loc[first.index, "start"])
    outcomes = pd.DataFrame({"person_id": first.index, "day": day.to_numpy()})
    windows = {1: [hp.sccs.RiskWindow("d0_9", 0, 9, "start", "start")]}
    data = hp.sccs.SCCSData.from_eras(obs, eras, outcomes, windows=windows)
    res = hp.sccs.fit(data, prior="normal", variance=100.0, progress=False)
    d = hp.sccs.event_exposure_independence(res, "d0_9", method="wald")
    assert d.details["lower"] > 1.25 and not d.passed
    assert "95% interval meets (0.8, 1.25)" in repr(d) and "FAIL" in repr(d)


def test_interval_checks_refuse_bad_input(probe_fit):
    with pytest.raises(TypeError, match=r"fit must be an SCCSFit"):
        hp.sccs.event_exposure_independence("fit", 11)
    with pytest.raises(ValueError, match=r"covariate 'pre' is not in the data"):
        hp.sccs.event_exposure_independence(probe_fit, "pre")
    with pytest.raises(ValueError, match=r"null_bounds must surround 1 .* got \(1.1, 2.0\)"):
        hp.sccs.event_exposure_independence(probe_fit, 11, null_bounds=(1.1, 2.0))
    with pytest.raises(TypeError, match=r"null_bounds must be a pair"):
        hp.sccs.event_observation_independence(probe_fit, null_bounds=0.5)
    with pytest.raises(ValueError, match=r"null_bounds\[0\] must be > 0"):
        hp.sccs.event_observation_independence(probe_fit, null_bounds=(0.0, 2.0))
    with pytest.raises(ValueError, match=r"level must be in \(0, 1\)"):
        hp.sccs.event_observation_independence(probe_fit, level=1.0)


def test_end_of_observation_eras_by_hand():
    obs = pd.DataFrame({"PERSON_ID": [5, 6], "START": [0, 100], "END": [364, 110]})
    eras = hp.sccs.end_of_observation_eras(obs, length=10, covariate_id="eoo")
    assert eras.to_dict("list") == {"person_id": [5, 6], "start": [355, 101], "end": [364, 110],
                                    "covariate_id": ["eoo", "eoo"]}
    assert hp.sccs.end_of_observation_eras(obs, length=30)["start"].tolist() == [335, 100]
    with pytest.raises(ValueError, match=r"length must be >= 1"):
        hp.sccs.end_of_observation_eras(obs, length=0)
    with pytest.raises(ValueError, match=r"covariate_id must name the probe"):
        hp.sccs.end_of_observation_eras(obs, covariate_id=None)


# ------------------------------------------------------------------------------------- rare outcome
def test_rare_outcome_from_counts():
    d = hp.sccs.rare_outcome(n_persons=1000, n_cases=150, first_outcome_only=True)
    assert d.value == 0.15 and not d.passed and d.threshold == 0.1
    assert hp.sccs.rare_outcome(n_persons=1000, n_cases=150, first_outcome_only=False).passed
    assert hp.sccs.rare_outcome(n_persons=1000, n_cases=100, first_outcome_only=True).passed  # <= 0.1
    assert not hp.sccs.rare_outcome(n_persons=1000, n_cases=50, first_outcome_only=True, max_prevalence=0.01).passed


def test_rare_outcome_from_a_design():
    # 10 persons observed, 3 with an outcome inside observation
    obs = pd.DataFrame({"person_id": range(10), "start": [0] * 10, "end": [99] * 10})
    eras = pd.DataFrame({"person_id": [0, 1], "start": [10, 20], "end": [30, 40], "covariate_id": [1, 1]})
    outcomes = pd.DataFrame({"person_id": [0, 1, 2, 2], "day": [15, 50, 60, 70]})
    data = hp.sccs.SCCSData.from_eras(obs, eras, outcomes)
    d = hp.sccs.rare_outcome(data)
    assert d.value == pytest.approx(0.3)
    # person 2 has two events: not first-outcome-only, so the check passes whatever the prevalence
    assert d.details["first_outcome_only"] is False and d.passed
    first = hp.sccs.SCCSData.from_eras(obs, eras, outcomes, first_outcome_only=True)
    d = hp.sccs.rare_outcome(first)
    assert d.details["first_outcome_only"] is True and not d.passed


def test_rare_outcome_refuses_bad_input():
    out = pd.DataFrame({"stratum_id": [0, 0], "row_id": [0, 1], "y": [1, 0], "time": [1.0, 1.0]})
    cov = pd.DataFrame({"row_id": [0], "covariate_id": [1]})
    long = hp.sccs.SCCSData.from_long(out, cov)
    with pytest.raises(ValueError, match=r"not built by SCCSData.from_eras\); give n_persons and n_cases"):
        hp.sccs.rare_outcome(long)
    with pytest.raises(TypeError, match=r"either data or n_persons and n_cases, not both"):
        hp.sccs.rare_outcome(long, n_persons=10, n_cases=1)
    with pytest.raises(TypeError, match=r"needs data, or n_persons and n_cases"):
        hp.sccs.rare_outcome(n_persons=10)
    with pytest.raises(TypeError, match=r"first_outcome_only must be True or False"):
        hp.sccs.rare_outcome(n_persons=10, n_cases=1)
    with pytest.raises(ValueError, match=r"n_cases \(11\) must be <= n_persons \(10\)"):
        hp.sccs.rare_outcome(n_persons=10, n_cases=11, first_outcome_only=True)
    with pytest.raises(ValueError, match=r"max_prevalence must be in \[0, 1\]"):
        hp.sccs.rare_outcome(n_persons=10, n_cases=1, first_outcome_only=True, max_prevalence=1.5)


def test_diagnostic_result():
    d = hp.sccs.rare_outcome(n_persons=100, n_cases=5, first_outcome_only=True)
    row = d.to_dict()
    assert row["diagnostic"] == "rare_outcome" and row["pass"] is True and row["n_cases"] == 5
    assert repr(d) == "Diagnostic(rare_outcome: value=0.05, prevalence <= 0.1 or all outcomes used -> PASS)"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in ("Diagnostic", "mdrr", "time_stability", "pre_exposure_gain", "event_exposure_independence",
                     "event_observation_independence", "end_of_observation_eras", "rare_outcome"):
            assert name in hp.sccs.__all__
