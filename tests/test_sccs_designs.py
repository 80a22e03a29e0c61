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


# ------------------------------------------------------------------ event-dependent observation (item 2)

from scipy import integrate, stats  # noqa: E402

from hphawkes_py.sccs import event_dependent as edo  # noqa: E402


def simulate_deaths(n, irr, seed):
    """One event per person in a nominal year after starting a drug (rate ``irr`` on days 0-27);
    after the event, death (the end of observation) with probability 0.6 after a Weibull time."""
    rng = np.random.default_rng(seed)
    start = rng.integers(40 * 365, 70 * 365, size=n)
    p = np.where(np.arange(365) < 28, irr, 1.0)
    event = rng.choice(365, size=n, p=p / p.sum())
    after = np.ceil(rng.weibull(0.7, size=n) * 40).astype(int)
    dies = (rng.random(n) < 0.6) & (event + after < 364)
    end = np.where(dies, event + after, 364)
    obs = pd.DataFrame({"person_id": np.arange(n), "start": start, "end": start + end, "birth_day": 0,
                        "censor": dies.astype(int)})
    eras = pd.DataFrame({"person_id": np.arange(n), "start": start, "end": start, "covariate_id": "drug"})
    return obs, eras, pd.DataFrame({"person_id": np.arange(n), "day": start + event})


def w_by_hand(model, p, t, aend, censor):
    """The weight function from scipy.stats distributions (independent of the module's formulas)."""
    rho, mu, pi, nu = np.exp(p[0]), np.exp(p[1]), 1 / (1 + np.exp(-p[2])), np.exp(p[3])
    e = stats.expon(scale=rho)
    if model in ("EWI", "EGI"):
        other = stats.weibull_min(nu, scale=mu) if model == "EWI" else stats.gamma(nu, scale=mu / nu)
        u = aend - t
        return pi * e.pdf(u) + (1 - pi) * other.pdf(u) if censor else pi * e.sf(u) + (1 - pi) * other.sf(u)
    other = stats.weibull_min(nu, scale=mu) if model == "EWA" else stats.gamma(nu, scale=mu / nu)
    cond = (other.pdf(aend) if censor else other.sf(aend)) / other.sf(t)
    return pi * (e.pdf(aend - t) if censor else e.sf(aend - t)) + (1 - pi) * cond


@pytest.mark.parametrize("model", edo.CENSORING_MODELS)
def test_censoring_loglik_and_weights_match_scipy_distributions(model):
    rng = np.random.default_rng(5)
    n = 15
    aevent = rng.uniform(40, 60, n)
    aend = aevent + rng.exponential(0.5, n) + 1e-3
    censor = (rng.random(n) < 0.4).astype(int)
    p = np.array([-0.5, np.log(60.0) if model.endswith("A") else -0.3, 0.2, np.log(3.0 if model.endswith("A") else 0.8)])
    by_hand = sum(np.log(w_by_hand(model, p, aevent[i], aend[i], censor[i])) for i in range(n))
    assert edo.censoring_loglik(model, p, aevent, aend, censor) == pytest.approx(by_hand, rel=1e-10)
    fit = edo.CensoringFit(model=model, params={model: p}, loglik={model: 0.0}, aic={model: 8.0},
                           converged={model: True})
    lo = aevent - rng.uniform(0.01, 2.0, n)
    hi = np.minimum(lo + rng.uniform(0.002, 1.5, n), aend)
    got = edo.interval_weights(fit, lo, hi, aend, censor)
    want = [integrate.quad(lambda t, i=i: w_by_hand(model, p, t, aend[i], censor[i]), lo[i], hi[i],
                           epsabs=0, epsrel=1e-11, limit=200)[0] for i in range(n)]
    np.testing.assert_allclose(got, want, rtol=1e-7)


def test_censoring_models_fit_maximises_the_likelihood_and_picks_the_smallest_aic():
    obs, eras, outcomes = simulate_deaths(300, 2.0, seed=2)
    aevent = (outcomes.day.to_numpy()) / 365.25
    end = obs.end.to_numpy()
    aend = np.where(end == outcomes.day.to_numpy(), end + 1, end) / 365.25
    fit = edo.fit_censoring_models(aevent, aend, obs.censor)
    for m in edo.CENSORING_MODELS:
        ll = edo.censoring_loglik(m, fit.params[m], aevent, aend, obs.censor.to_numpy())
        assert ll == pytest.approx(fit.loglik[m], abs=1e-9)
        for k in range(4):
            for h in (1e-4, -1e-4):
                q = fit.params[m].copy()
                q[k] += h
                assert edo.censoring_loglik(m, q, aevent, aend, obs.censor.to_numpy()) <= ll + 1e-8, (m, k, h)
    assert fit.model == min(edo.CENSORING_MODELS, key=lambda m: fit.aic[m])
    assert fit.table().loc[fit.model, "used"] and fit.table()["used"].sum() == 1


def test_event_dependent_design_rows_carry_the_integrated_weights():
    obs, eras, outcomes = simulate_deaths(200, 2.0, seed=3)
    d = SCCSData.from_eras(obs, eras, outcomes, risk_start=0, risk_end=27, event_dependent_observation="EWI",
                           merge=False)
    assert d.censoring.model == "EWI" and list(d.censoring.params) == ["EWI"]
    p = d.censoring.params["EWI"]
    for person in (0, 1, 7):
        o = obs.iloc[person]
        ev = int(outcomes.day.iloc[person])
        aend = o.end + (1 if o.end == ev else 0)
        rows = slice(d.stratum_ptr[list(d.stratum_ids).index(person)],
                     d.stratum_ptr[list(d.stratum_ids).index(person) + 1])
        # merge=False: rows in day order; risk days start..start+27 (clipped to the end), then the rest
        cuts = [o.start, min(o.start + 27, o.end) + 1] + ([o.end + 1] if o.end > o.start + 27 else [])
        want = [integrate.quad(lambda t: w_by_hand("EWI", p, t, aend / 365.25, o.censor),
                               (a - 1) / 365.25, (b - 1) / 365.25, epsabs=0, epsrel=1e-11, limit=200)[0]
                for a, b in zip(cuts[:-1], cuts[1:])]
        np.testing.assert_allclose(d.time[rows], want, rtol=1e-7)
        assert d.y[rows].sum() == 1


def test_event_dependent_observation_recovers_the_irr_that_the_plain_design_misses():
    obs, eras, outcomes = simulate_deaths(2000, 2.0, seed=1)
    # the deaths follow a Weibull time after the event: the interval model (AIC choice: tested above)
    d = SCCSData.from_eras(obs, eras, outcomes, risk_start=0, risk_end=27, event_dependent_observation="EWI")
    f = fit_mle(d)
    se = float(np.sqrt(f.covariance().loc["drug", "drug"]))
    assert abs(f.coefficients["drug"] - np.log(2.0)) < 3 * se
    plain = fit_mle(SCCSData.from_eras(obs, eras, outcomes, risk_start=0, risk_end=27))
    assert abs(plain.coefficients["drug"] - np.log(2.0)) > 6 * se
    # merging rows of one pattern sums their weights: the same likelihood
    unmerged = fit_mle(SCCSData.from_eras(obs, eras, outcomes, risk_start=0, risk_end=27,
                                          event_dependent_observation=d.censoring.model, merge=False))
    assert unmerged.coefficients["drug"] == pytest.approx(f.coefficients["drug"], abs=1e-6)


def test_event_dependent_observation_refuses_what_it_cannot_use():
    obs, eras, outcomes = simulate_deaths(50, 2.0, seed=4)
    kw = dict(risk_start=0, risk_end=27)
    with pytest.raises(ValueError, match=r"needs columns \['censor'\] in observation_periods"):
        SCCSData.from_eras(obs.drop(columns="censor"), eras, outcomes, event_dependent_observation=True, **kw)
    with pytest.raises(ValueError, match=r"needs columns \['birth_day'\]"):
        SCCSData.from_eras(obs.drop(columns="birth_day"), eras, outcomes, event_dependent_observation=True, **kw)
    with pytest.raises(ValueError, match=r"observation_periods\.censor must be 0 .* first at row 3 \(2\)"):
        SCCSData.from_eras(obs.assign(censor=[0, 1, 0, 2] + [0] * 46), eras, outcomes,
                           event_dependent_observation=True, **kw)
    with pytest.raises(ValueError, match=r"event_dependent_observation must be False, True/'auto' .* got 'EWX'"):
        SCCSData.from_eras(obs, eras, outcomes, event_dependent_observation="EWX", **kw)
    two = pd.concat([outcomes, pd.DataFrame({"person_id": [5], "day": [int(obs.end[5])]})])
    with pytest.raises(ValueError, match=r"one outcome per person .* first person_id=5; use first_outcome_only=True"):
        SCCSData.from_eras(obs, eras, two, event_dependent_observation=True, **kw)
    d = SCCSData.from_eras(obs, eras, two, event_dependent_observation="EWI", first_outcome_only=True, **kw)
    assert d.dropped["later_outcomes"] == 1
    with pytest.raises(ValueError, match=r"after the day of birth .* person_id=0"):
        SCCSData.from_eras(obs.assign(birth_day=obs.start), eras, outcomes, event_dependent_observation=True, **kw)
    with pytest.raises(ValueError, match="cannot be combined with control_window"):
        SCCSData.from_eras(obs, eras, outcomes, event_dependent_observation=True, control_window=(29, 56), **kw)


def test_scri_with_several_windows_per_exposure():
    obs, eras, outcomes = scri_case()
    windows = {"vaccine": [RiskWindow("d1_14", 1, 14, "start", "start"), RiskWindow("d15_28", 15, 28, "start", "start")]}
    d = SCCSData.from_eras(obs, eras, outcomes, windows=windows, control_window=(29, 56))
    assert list(d.covariate_ids) == ["d15_28", "d1_14"]
    got = person_time(d)
    # person 2: d1_14 = 51..64 (event 60), d15_28 = 65..78, control 79..106 (event 90)
    assert got[(2, ("d1_14",))] == (14.0, 1.0) and got[(2, ("d15_28",))] == (14.0, 0.0)
    assert got[(2, ())] == (28.0, 1.0)
