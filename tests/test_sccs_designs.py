"""hp.sccs designs (issue 30): the self-controlled risk interval (SCRI) design, several exposures
with their own risk windows in one model, event-dependent observation periods, and covariate
ids that mix kinds (a clear error)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize_scalar

import hphawkes_py as hp
from hphawkes_py.sccs import RiskWindow, SCCSData


def fit_mle(data, **kw):
    return hp.sccs.fit(data, prior="none", tolerance=1e-12, backend="cpu", progress=False, **kw)


def person_time(data):
    """{(person, covariate pattern): (time, events)} of a design, for comparisons by hand."""
    out, cov = data.to_long()
    pattern = cov[cov.value != 0].groupby("row_id").covariate_id.apply(lambda s: tuple(sorted(s)))
    out["pattern"] = out.row_id.map(pattern).apply(lambda p: p if isinstance(p, tuple) else ())
    g = out.groupby(["stratum_id", "pattern"])[["time", "y"]].sum()
    return {k: (float(v.time), float(v.y)) for k, v in g.iterrows()}


# ------------------------------------------------------------------ mixed covariate ids (item 5)

def test_eras_with_integer_and_string_covariate_ids_are_refused_by_name():
    obs = pd.DataFrame({"person_id": [1, 2], "start": [0, 0], "end": [99, 99]})
    eras = pd.DataFrame({"person_id": [1, 2], "start": [10, 40], "end": [10, 40], "covariate_id": [1, "b"]})
    outcomes = pd.DataFrame({"person_id": [1, 2], "day": [12, 80]})
    with pytest.raises(TypeError, match=r"eras\.covariate_id must be all integers or all strings.*"
                                        r"\['int', 'str'\].*first str at row 1 \('b'\)"):
        SCCSData.from_eras(obs, eras, outcomes)


def test_long_covariates_with_integer_and_string_ids_are_refused_by_name():
    outcomes = pd.DataFrame({"stratum_id": [1, 1], "row_id": [1, 2], "y": [1, 0], "time": [10.0, 20.0]})
    covariates = pd.DataFrame({"row_id": [1, 2, 2], "covariate_id": ["a", 7, "c"]})
    with pytest.raises(TypeError, match=r"covariates\.covariate_id must be all integers or all strings.*"
                                        r"first int at row 1 \(7\)"):
        SCCSData.from_long(outcomes, covariates)


# ------------------------------------------------------------------ SCRI (item 1)

def scri_case():
    """Four persons, vaccine eras of one day, risk days 1-28 after, control days 29-56 after.

    * 1: observation ends on day 120: risk 101..120 (20 days), control outside; event day 110.
    * 2: vaccinated day 50: risk 51..78, control 79..106; events days 60 and 90, and day 300
      (outside both: leaves the design).
    * 3: observation 0..60, vaccinated day 10: risk 11..38, control 39..60 (22 days); event 45.
    * 4: vaccinated days 100 and 120: risk 101..148 (48 days, the second risk window covers
      the first control interval's 129..148), control 149..176 (28 days); events 130 (risk)
      and 170 (control).
    """
    obs = pd.DataFrame({"person_id": [1, 2, 3, 4], "start": [0, 0, 0, 0], "end": [120, 365, 60, 365]})
    eras = pd.DataFrame({"person_id": [1, 2, 3, 4, 4], "start": [100, 50, 10, 100, 120],
                         "end": [100, 50, 10, 100, 120], "covariate_id": "vaccine"})
    outcomes = pd.DataFrame({"person_id": [1, 2, 2, 2, 3, 4, 4], "day": [110, 60, 90, 300, 45, 130, 170]})
    return obs, eras, outcomes


# (risk time, risk events, control time, control events) per person, counted by hand
SCRI_BY_HAND = {1: (20, 1, 0, 0), 2: (28, 1, 28, 1), 3: (28, 0, 22, 1), 4: (48, 1, 28, 1)}


def scri_loglik(b):
    ll = 0.0
    for r, nr, c, nc in SCRI_BY_HAND.values():
        denom = r * np.exp(b) + c
        ll += nr * (np.log(r) + b - np.log(denom)) + (nc * (np.log(c) - np.log(denom)) if nc else 0.0)
    return ll


@pytest.mark.parametrize("merge", [True, False])
def test_scri_design_keeps_risk_and_control_time_only(merge):
    obs, eras, outcomes = scri_case()
    d = SCCSData.from_eras(obs, eras, outcomes, risk_start=1, risk_end=28, control_window=(29, 56), merge=merge)
    got = person_time(d)
    want = {}
    for p, (r, nr, c, nc) in SCRI_BY_HAND.items():
        want[(p, ("vaccine",))] = (float(r), float(nr))
        if c:
            want[(p, ())] = (float(c), float(nc))
    assert got == want
    assert d.dropped["outcomes_outside_risk_and_control"] == 1
    assert d.dropped["control_intervals_outside_observation"] == 1
    assert d.dropped["eras_outside_observation"] == 0
    assert list(d.covariate_ids) == ["vaccine"]


def test_scri_estimate_is_the_conditional_poisson_mle_by_hand():
    obs, eras, outcomes = scri_case()
    d = SCCSData.from_eras(obs, eras, outcomes, risk_start=1, risk_end=28, control_window=(29, 56))
    f = fit_mle(d)
    best = minimize_scalar(lambda b: -scri_loglik(b), bounds=(-5, 5), method="bounded", options={"xatol": 1e-10})
    assert f.coefficients["vaccine"] == pytest.approx(best.x, abs=1e-6)
    assert f.log_likelihood == pytest.approx(scri_loglik(best.x), abs=1e-9)


def test_scri_differs_from_the_sccs_design_on_the_same_eras():
    # the full SCCS design uses all unexposed time: different reference, different estimate
    obs, eras, outcomes = scri_case()
    scri = fit_mle(SCCSData.from_eras(obs, eras, outcomes, risk_start=1, risk_end=28, control_window=(29, 56)))
    sccs = fit_mle(SCCSData.from_eras(obs, eras, outcomes, risk_start=1, risk_end=28))
    assert abs(scri.coefficients["vaccine"] - sccs.coefficients["vaccine"]) > 0.1


def test_scri_pre_exposure_control_window_with_anchors():
    obs, eras, outcomes = scri_case()
    pre = RiskWindow("ignored", -28, -1, "start", "start")
    d = SCCSData.from_eras(obs, eras, outcomes, risk_start=1, risk_end=28, control_window=pre)
    got = person_time(d)
    # person 2: control 22..49 (event none), risk 51..78 (event 60); person 4: control 72..99
    # and 92..119, less the risk days 101..119 -> 72..100 (29 days), risk 101..148
    assert got[(2, ())] == (28.0, 0.0) and got[(2, ("vaccine",))] == (28.0, 1.0)
    assert got[(4, ())] == (29.0, 0.0) and got[(4, ("vaccine",))] == (48.0, 1.0)


def test_scri_control_window_per_covariate_and_other_exposures_keep_their_windows():
    obs, eras, outcomes = scri_case()
    other = pd.DataFrame({"person_id": [2], "start": [80], "end": [85], "covariate_id": "antibiotic"})
    d = SCCSData.from_eras(obs, pd.concat([eras, other]), outcomes, risk_start=1, risk_end=28,
                           risk_windows={"antibiotic": (0, 0)}, control_window={"vaccine": (29, 56)})
    got = person_time(d)
    # the antibiotic days 80..85 fall in person 2's control interval 79..106
    assert got[(2, ("antibiotic",))] == (6.0, 0.0)
    assert got[(2, ())] == (22.0, 1.0)


def simulate_scri(n, irr, seed, *, rate=0.002, risk=(1, 28), control=(29, 56)):
    """Persons with one vaccination; outcomes Poisson per day, rate times ``irr`` in the risk window
    and a person-specific baseline (frailty), which the self-controlled design conditions out."""
    rng = np.random.default_rng(seed)
    vday = rng.integers(30, 300, size=n)
    frailty = rng.gamma(2.0, 0.5, size=n)
    days = np.arange(0, 366)
    rel = days[None, :] - vday[:, None]
    in_risk = (rel >= risk[0]) & (rel <= risk[1])
    lam = rate * frailty[:, None] * np.where(in_risk, irr, 1.0)
    counts = rng.poisson(lam)
    person, day = np.nonzero(counts)
    person, day = np.repeat(person, counts[person, day]), np.repeat(day, counts[person, day])
    obs = pd.DataFrame({"person_id": np.arange(n), "start": 0, "end": 365})
    eras = pd.DataFrame({"person_id": np.arange(n), "start": vday, "end": vday, "covariate_id": "vaccine"})
    return obs, eras, pd.DataFrame({"person_id": person, "day": day})


def test_scri_recovers_the_true_irr_in_simulation():
    obs, eras, outcomes = simulate_scri(40_000, 2.5, seed=3)
    d = SCCSData.from_eras(obs, eras, outcomes, risk_start=1, risk_end=28, control_window=(29, 56))
    f = fit_mle(d)
    est = f.coefficients["vaccine"]
    se = float(np.sqrt(f.covariance().loc["vaccine", "vaccine"]))
    assert 0.02 < se < 0.15
    assert abs(est - np.log(2.5)) < 3 * se
    null = fit_mle(SCCSData.from_eras(*simulate_scri(40_000, 1.0, seed=4), risk_start=1, risk_end=28,
                                      control_window=(29, 56)))
    assert abs(null.coefficients["vaccine"]) < 0.15


def test_scri_bad_control_windows_are_refused():
    obs, eras, outcomes = scri_case()
    kw = dict(risk_start=1, risk_end=28)
    with pytest.raises(TypeError, match=r"control_window must be a pair \(start_offset, end_offset\) or a RiskWindow"):
        SCCSData.from_eras(obs, eras, outcomes, control_window=29, **kw)
    with pytest.raises(TypeError, match=r"control_window\[1\]"):
        SCCSData.from_eras(obs, eras, outcomes, control_window=(29, 56.5), **kw)
    with pytest.raises(ValueError, match=r"control_window has covariate id\(s\) not in eras: \['vacine'\]"):
        SCCSData.from_eras(obs, eras, outcomes, control_window={"vacine": (29, 56)}, **kw)
    with pytest.raises(ValueError, match="control_window is an empty dict"):
        SCCSData.from_eras(obs, eras, outcomes, control_window={}, **kw)
    with pytest.raises(ValueError, match="no control interval overlaps any observation period"):
        SCCSData.from_eras(obs, eras, outcomes, control_window=(1000, 1010), **kw)
    obs_b = obs.assign(birth_day=-1000)
    with pytest.raises(ValueError, match="control_window .* takes no age_knots"):
        SCCSData.from_eras(obs_b, eras, outcomes, control_window=(29, 56), age_knots=3, **kw)


# ------------------------------------------------------------------ several exposures (item 4)

def two_exposures(n, irr_a, irr_b, seed):
    """Drug A (eras of 5-30 days, risk = the era) and vaccine B (one day, risk days 1-14 after)."""
    rng = np.random.default_rng(seed)
    a_start = rng.integers(0, 330, size=n)
    a_end = a_start + rng.integers(4, 30, size=n)
    b_day = rng.integers(0, 350, size=n)
    days = np.arange(0, 366)
    in_a = (days[None, :] >= a_start[:, None]) & (days[None, :] <= a_end[:, None])
    in_b = (days[None, :] >= b_day[:, None] + 1) & (days[None, :] <= b_day[:, None] + 14)
    lam = 0.003 * np.where(in_a, irr_a, 1.0) * np.where(in_b, irr_b, 1.0)
    counts = rng.poisson(lam)
    person, day = np.nonzero(counts)
    person, day = np.repeat(person, counts[person, day]), np.repeat(day, counts[person, day])
    obs = pd.DataFrame({"person_id": np.arange(n), "start": 0, "end": 365})
    eras = pd.concat([
        pd.DataFrame({"person_id": np.arange(n), "start": a_start, "end": a_end, "covariate_id": "drugA"}),
        pd.DataFrame({"person_id": np.arange(n), "start": b_day, "end": b_day, "covariate_id": "vaccineB"}),
    ])
    return obs, eras, pd.DataFrame({"person_id": person, "day": day})


def test_several_exposures_with_their_own_risk_windows_in_one_model():
    obs, eras, outcomes = two_exposures(30_000, 2.0, 0.5, seed=7)
    d = SCCSData.from_eras(obs, eras, outcomes, risk_windows={"drugA": (0, 0), "vaccineB": (1, 14)})
    assert list(d.covariate_ids) == ["drugA", "vaccineB"]
    f = fit_mle(d)
    cov = f.covariance()
    for k, truth in (("drugA", 2.0), ("vaccineB", 0.5)):
        se = float(np.sqrt(cov.loc[k, k]))
        assert abs(f.coefficients[k] - np.log(truth)) < 3 * se, k
    # one window for both (vaccineB's risk then starts on the vaccination day): a different design
    d_same = SCCSData.from_eras(obs, eras, outcomes, risk_start=0, risk_end=0)
    assert not np.array_equal(d.time, d_same.time) or not np.array_equal(d.row_idx, d_same.row_idx)


def test_several_exposures_design_by_hand():
    obs = pd.DataFrame({"person_id": [1], "start": [0], "end": [99]})
    eras = pd.DataFrame({"person_id": [1, 1], "start": [10, 20], "end": [29, 20], "covariate_id": ["a", "b"]})
    outcomes = pd.DataFrame({"person_id": [1, 1], "day": [15, 25]})
    d = SCCSData.from_eras(obs, eras, outcomes, risk_windows={"a": (0, 0), "b": (1, 14)})
    # a: 10..29; b: 21..34 -> a only 10..20 (11 days, event 15), a and b 21..29 (9, event 25),
    # b only 30..34 (5), neither 0..9 and 35..99 (75)
    assert person_time(d) == {(1, ()): (75.0, 0.0), (1, ("a",)): (11.0, 1.0), (1, ("a", "b")): (9.0, 1.0),
                              (1, ("b",)): (5.0, 0.0)}
