"""Event-dependent exposure (hp.sccs.event_dependent_exposure): the SCCS package's eventdepenexp.

Checked against the peer's own estimates and sandwich standard errors on its bundled rotavirus
data (tests/data/sccs_eventdepenexp: the fixture is written by make_fixture.R, which runs the
peer), against a NumPy reference of the stacked pseudo-likelihood written from the paper's
description here, and by simulation: doses that the event cancels bias the ordinary SCCS
estimate and not this one.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import optimize

import hphawkes_py as hp
from hphawkes_py.sccs import event_dependent_exposure

HERE = Path(__file__).parent / "data" / "sccs_eventdepenexp"
ROT = pd.read_csv(HERE / "rotdat.txt.gz", sep="\t")
PEER = json.loads((HERE / "eventdepenexp.json").read_text())
AGES = np.arange(56, 169, 14)
# the arguments of make_fixture.R's runs
RUNS = {"mod1": dict(risk_starts=1, age_groups=AGES),
        "mod2": dict(risk_starts=[1, 8], age_groups=AGES),
        "mod3": dict(risk_starts=[1, 8], same_dose_parameters=False, age_groups=AGES),
        "mod4": dict(risk_starts=[0, 8]),
        "mod5": dict(risk_starts=0, same_dose_parameters=False, age_groups=[90, 120])}


def rot_fit(**kw):
    return event_dependent_exposure(ROT, start="sta", event="intus", doses=["rv", "rvd2"], dose_ends=21, **kw)


@pytest.mark.parametrize("run", sorted(RUNS))
def test_matches_the_sccs_package_on_its_rotavirus_data(run):
    fit = rot_fit(**RUNS[run])
    want = PEER[run]
    assert fit.converged and fit.coefficients.index.tolist() == want["names"]
    # the peer's gnm stops its inner fits at a looser tolerance: agreement to ~1e-6
    np.testing.assert_allclose(fit.coefficients.to_numpy(), want["coef"], rtol=0, atol=1e-5)
    np.testing.assert_allclose(fit.se.to_numpy(), want["se"], rtol=1e-5, atol=0)
    table = fit.results_table()
    np.testing.assert_allclose(table["rr"], np.exp(want["coef"]), rtol=1e-5)
    np.testing.assert_allclose(table["z"], np.array(want["coef"]) / np.array(want["se"]), rtol=1e-4)


def test_doses_after_the_event_are_counted_and_ignored():
    fit = rot_fit(**RUNS["mod1"])
    assert fit.doses_after_event == 0  # the bundled data hold none
    # second doses given after the event: missing in this model, so nothing changes
    late = ROT.rvd2.isna() & ROT.rv.notna()
    with_late = ROT.assign(rvd2=ROT.rvd2.where(~late, ROT.intus + 10))
    again = event_dependent_exposure(with_late, start="sta", event="intus", doses=["rv", "rvd2"], dose_ends=21,
                                     **RUNS["mod1"])
    assert again.doses_after_event == int(late.sum()) > 0
    np.testing.assert_array_equal(again.coefficients.to_numpy(), fit.coefficients.to_numpy())
    np.testing.assert_array_equal(again.se.to_numpy(), fit.se.to_numpy())
    # so does the row order and the case ids' labels
    shuffled = ROT.sample(frac=1.0, random_state=3).assign(case=lambda d: d.case * 10)
    np.testing.assert_allclose(
        event_dependent_exposure(shuffled, start="sta", event="intus", doses=["rv", "rvd2"], dose_ends=21,
                                 **RUNS["mod1"]).coefficients, fit.coefficients, rtol=1e-12)


# ----------------------------------------------------------------------------- NumPy reference
def reference(cases, doses, dose_end, risk_len, age_start):
    """The pseudo-likelihood for one dose-specific risk window [d, d + risk_len - 1] per dose
    (risk_starts=0, same_dose_parameters=True), a single age cut at ``age_start``, written day
    by day: level 0 (cases unexposed at the start) and one level per dose from the dose day;
    inside a level only that dose is exposed, an event in a later dose's window counts
    exp(-beta). The estimate is the fixed point beta = argmax l(beta; weights(beta)), solved
    with scipy; the sandwich is built from per-day scores."""
    strata = []  # (case, X rows (days, 2), event day index or None, event weighted?)
    for _, c in cases.iterrows():
        days = np.arange(c.start, c.end + 1)
        ds = [c[d] for d in doses if np.isfinite(c[d]) and c[d] <= c.event]
        risk = np.zeros((len(ds), days.size), dtype=bool)
        for k, d in enumerate(ds):
            nxt = ds[k + 1] if k + 1 < len(ds) else np.inf
            risk[k] = (days >= d) & (days <= min(d + dose_end, nxt - 1)) & (days < d + risk_len)
        ev = int(np.flatnonzero(days == c.event)[0])
        age = (days >= age_start).astype(float)
        levels = [(0, days >= c.start)] if not any(d <= c.start for d in ds) else []
        levels += [(k + 1, days >= ds[k]) for k in range(len(ds))]
        for lev, inside in levels:
            x = np.zeros(days.size) if lev == 0 else risk[lev - 1].astype(float)
            later = any(risk[k][ev] for k in range(lev, len(ds)))
            sel = np.flatnonzero(inside)
            strata.append((c.case, np.column_stack([x[sel], age[sel]]), int(np.flatnonzero(sel == ev)[0]), later))

    def score(b, w_beta):
        out, per_case, A = np.zeros(2), {}, np.zeros((2, 2))
        for case, X, ev, later in strata:
            w = np.exp(-w_beta) if later else 1.0
            p = np.exp(X @ b)
            p /= p.sum()
            y = np.zeros(len(p))
            y[ev] = w
            s = X.T @ (y - w * p)
            out += s
            per_case[case] = per_case.get(case, 0) + s
            if later:
                A[:, 0] += -(X.T @ (y - w * p))
        return out, per_case, A

    b = optimize.fsolve(lambda b: score(b, b[0])[0], np.zeros(2), xtol=1e-13)
    _, per_case, A = score(b, b[0])
    H = np.zeros((2, 2))
    for _, X, ev, later in strata:
        w = np.exp(-b[0]) if later else 1.0
        p = np.exp(X @ b)
        p /= p.sum()
        H -= w * (X.T @ (X * p[:, None]) - np.outer(X.T @ p, X.T @ p))
    M = np.array(list(per_case.values()))
    bread = np.linalg.inv(A + H)
    return b, np.sqrt(np.diag(bread @ (M.T @ M) @ bread.T))


def simulate(n, rr, cancel, seed):
    """Two doses 60 days apart; risk days 0-20 after a dose with relative incidence ``rr``; one
    event per case from the intensity of the planned schedule; a case's later doses are
    cancelled after its event with probability ``cancel`` (and never given after it in the
    data: the event precedes them)."""
    rng = np.random.default_rng(seed)
    start, end = 30, 330
    d1 = rng.integers(60, 150, n).astype(float)
    d2 = d1 + 60
    days = np.arange(start, end + 1)
    rate = 1.0 + (rr - 1) * ((((days >= d1[:, None]) & (days <= d1[:, None] + 20))
                              | ((days >= d2[:, None]) & (days <= d2[:, None] + 20))))
    u = rng.random(n)[:, None] * rate.sum(axis=1, keepdims=True)
    event = days[np.argmax(np.cumsum(rate, axis=1) >= u, axis=1)]
    cancelled = rng.random(n) < cancel
    d2 = np.where(cancelled & (event < d2), np.nan, d2)
    d1 = np.where(cancelled & (event < d1), np.nan, d1)
    return pd.DataFrame({"case": np.arange(n), "start": start, "end": end, "event": event, "d1": d1, "d2": d2})


def test_matches_a_day_by_day_numpy_reference():
    cases = simulate(120, 2.5, 1.0, seed=7)
    fit = event_dependent_exposure(cases, doses=["d1", "d2"], dose_ends=20, risk_starts=0, age_groups=[180],
                                   tolerance=1e-12)
    b, se = reference(cases, ["d1", "d2"], 20, 21, 180)
    np.testing.assert_allclose(fit.coefficients.to_numpy(), b, rtol=1e-7)
    np.testing.assert_allclose(fit.se.to_numpy(), se, rtol=1e-6)


def test_recovers_the_relative_incidence_when_the_event_cancels_later_doses():
    cases = simulate(4000, 3.0, 1.0, seed=11)
    fit = event_dependent_exposure(cases, doses=["d1", "d2"], dose_ends=20, risk_starts=0)
    est, se = fit.coefficients["d11"], fit.se["d11"]
    assert abs(est - np.log(3.0)) < 3 * se
    # the ordinary SCCS on the same data sees less exposed time after events: biased upwards
    obs = cases[["case", "start", "end"]].rename(columns={"case": "person_id"})
    eras = pd.concat([pd.DataFrame({"person_id": cases.case, "start": cases[d], "end": cases[d],
                                    "covariate_id": "vaccine"}) for d in ("d1", "d2")]).dropna()
    eras = eras.astype({"start": int, "end": int})
    outcomes = pd.DataFrame({"person_id": cases.case, "day": cases.event})
    plain = hp.sccs.fit(hp.sccs.SCCSData.from_eras(obs, eras, outcomes, risk_start=0, risk_end=20), prior="none")
    assert plain.coefficients["vaccine"] - np.log(3.0) > 4 * se


def test_no_cancellation_agrees_with_the_ordinary_sccs_in_expectation():
    cases = simulate(4000, 2.0, 0.0, seed=12)
    cases = cases.assign(d1=cases.d1.where(cases.d1 <= cases.event), d2=cases.d2.where(cases.d2 <= cases.event))
    fit = event_dependent_exposure(cases, doses=["d1", "d2"], dose_ends=20)
    assert abs(fit.coefficients["d11"] - np.log(2.0)) < 3 * fit.se["d11"]


# ----------------------------------------------------------------------------- refusals
@pytest.mark.parametrize("change, kw, exc, match", [
    (None, dict(doses=["rv", "nope"]), ValueError, "doses='nope' is not a column"),
    (None, dict(doses=[]), TypeError, "doses must be a non-empty list"),
    (None, dict(doses=["rv"], dose_ends=None), ValueError, "dose_ends must be given"),
    (None, dict(dose_ends=-1), ValueError, "dose_ends"),
    (None, dict(dose_ends=["rv"]), ValueError, "one column per dose"),
    (None, dict(risk_starts=-1), ValueError, "pre-exposure"),
    (None, dict(risk_starts=[8, 1]), ValueError, "strictly increasing"),
    (None, dict(risk_starts=[1.5]), TypeError, "risk_starts"),
    (None, dict(age_groups=[100, 60]), ValueError, "age_groups must be strictly increasing"),
    (None, dict(age_groups=[60.5]), TypeError, "age_groups must be whole days"),
    (None, dict(same_dose_parameters="yes"), TypeError, "same_dose_parameters"),
    (None, dict(tolerance=0), ValueError, "tolerance"),
    (None, dict(max_iterations=0), ValueError, "max_iterations"),
    (None, dict(age_groups=[500]), ValueError, "no person-time in \\['age2'\\]"),
    (None, dict(person="id"), ValueError, "person='id' is not a column"),
    (lambda d: d.assign(case=1), {}, ValueError, "identify each case once"),
    (lambda d: d.assign(sta=d.sta + 0.5), {}, ValueError, "whole days"),
    (lambda d: d.assign(sta="a"), {}, TypeError, "must be numeric days"),
    (lambda d: d.assign(end=d.sta - 1), {}, ValueError, "start <= end"),
    (lambda d: d.assign(intus=d.end + 1), {}, ValueError, "event must be inside observation"),
    (lambda d: d.iloc[:0], {}, ValueError, "cases has no rows"),
])
def test_refusals_name_the_argument(change, kw, exc, match):
    data = ROT if change is None else change(ROT.copy())
    args = dict(start="sta", event="intus", doses=["rv", "rvd2"], dose_ends=21)
    args.update(kw)
    with pytest.raises(exc, match=match):
        event_dependent_exposure(data, **args)


def test_refuses_a_non_dataframe_and_dose_ends_before_the_dose():
    with pytest.raises(TypeError, match="cases must be a pandas DataFrame"):
        event_dependent_exposure(ROT.to_numpy(), doses=["rv"], dose_ends=21)
    bad = ROT.assign(rv_end=ROT.rv - 1)
    with pytest.raises(ValueError, match="risk end must be on or after its dose day"):
        event_dependent_exposure(bad, start="sta", event="intus", doses=["rv"], dose_ends=["rv_end"])
    fit = rot_fit(**RUNS["mod1"])
    with pytest.raises(ValueError, match="level"):
        fit.results_table(level=1.5)


def test_command_line_writes_the_table(tmp_path, capsys):
    from hphawkes_py.cli import main

    ROT.to_csv(tmp_path / "rot.csv", index=False)
    rc = main(["sccs", "event-dependent-exposure", str(tmp_path / "rot.csv"), "--doses", "rv,rvd2", "--dose-ends", "21",
               "--risk-starts", "1,8", "--age-groups", ",".join(str(a) for a in AGES), "--start", "sta",
               "--event", "intus", "--quiet", "-o", str(tmp_path / "out.csv")])
    assert rc == 0
    out = pd.read_csv(tmp_path / "out.csv")
    assert out["term"].tolist() == PEER["mod2"]["names"]
    np.testing.assert_allclose(out["coef"], PEER["mod2"]["coef"], atol=1e-5)
    np.testing.assert_allclose(out["se"], PEER["mod2"]["se"], rtol=1e-5)
    rc = main(["sccs", "event-dependent-exposure", str(tmp_path / "rot.csv"), "--doses", "rv", "--dose-ends", "21",
               "--risk-starts", "a", "--quiet"])
    assert rc == 2 and "--risk-starts must be comma-separated whole days" in capsys.readouterr().err


# ----------------------------------------------------------------------------- 7-parameter censoring models
# (event-dependent observation, the SCCS package's eventdepenobs(regress = TRUE))
from scipy import integrate, special  # noqa: E402

from hphawkes_py.sccs import SCCSData  # noqa: E402
from hphawkes_py.sccs import event_dependent as edo  # noqa: E402

EDO_DIR = Path(__file__).parent / "data" / "sccs_eventdepenobs_regress"
NRT = pd.read_csv(EDO_DIR / "nrtdat.txt.gz", sep="\t")
EDO_PEER = json.loads((EDO_DIR / "eventdepenobs_regress.json").read_text())


def nrt_ages():
    aend = np.where(NRT.act == NRT.mi, NRT.act + 1, NRT.act)  # the package's move of an event on the last day
    return NRT.mi.to_numpy() / 365.25, aend / 365.25, NRT.cen.to_numpy(), NRT.nrt.to_numpy() / 365.25


@pytest.mark.parametrize("model", edo.CENSORING_MODELS)
def test_regress_loglik_equals_the_package_at_its_estimate_and_the_fit_reaches_it(model):
    aevent, aend, censor, astart = nrt_ages()
    peer = EDO_PEER[model]
    assert edo.censoring_loglik(model, peer["params"], aevent, aend, censor, astart) == pytest.approx(
        peer["loglik"], rel=1e-9)
    fit = edo.fit_censoring_models(aevent, aend, censor, models=[model], regress=True, astart=astart)
    assert fit.regress and fit.params[model].shape == (7,)
    # the package's optimiser stops in local optima; this fit starts from its start and from the
    # nested 4-parameter optimum, and is never worse
    assert fit.loglik[model] >= peer["loglik"] - 1e-7
    assert fit.aic[model] == pytest.approx(14 - 2 * fit.loglik[model])


def w_regress_by_hand(model, p, t, aend, censor, astart):
    """The 7-parameter weight function written out from the package's wsmall_* functions."""
    x = np.log(astart) if model in ("EWA", "EGA") else np.log(t)
    lamA, lamB = np.exp(-p[0]), np.exp(-(p[1] + p[2] * x))
    pi, nu = special.expit(p[3] + p[4] * t), np.exp(p[5] + p[6] * x)
    u = aend - t
    if model == "EWA":
        h = np.exp(-((aend * lamB) ** nu - (t * lamB) ** nu))
        other = nu * lamB * (aend * lamB) ** (nu - 1) * h if censor else h
    elif model == "EWI":
        h = np.exp(-((u * lamB) ** nu))
        other = nu * lamB * (u * lamB) ** (nu - 1) * h if censor else h
    else:
        from scipy import stats
        g = stats.gamma(nu, scale=1 / (nu * lamB))
        if model == "EGA":
            other = (g.pdf(aend) if censor else g.sf(aend)) / g.sf(t)
        else:
            other = g.pdf(u) if censor else g.sf(u)
    return pi * (lamA * np.exp(-lamA * u) if censor else np.exp(-lamA * u)) + (1 - pi) * other


@pytest.mark.parametrize("model", edo.CENSORING_MODELS)
def test_regress_interval_weights_match_quadrature_of_the_weight_function(model):
    aevent, aend, censor, astart = nrt_ages()
    p = np.array(EDO_PEER[model]["params"])
    fit = edo.CensoringFit(model=model, params={model: p}, loglik={model: 0.0}, aic={model: 14.0},
                           converged={model: True}, regress=True)
    rows = np.arange(0, len(NRT), 17)
    lo = np.maximum(astart[rows], aevent[rows] - 0.05)
    hi = np.minimum(lo + 0.04, aend[rows])
    got = edo.interval_weights(fit, lo, hi, aend[rows], censor[rows], astart=astart[rows])
    want = [integrate.quad(lambda t, i=i: w_regress_by_hand(model, p, t, aend[i], censor[i], astart[i]),
                           lo[k], hi[k], epsabs=0, epsrel=1e-11, limit=200)[0] for k, i in enumerate(rows)]
    np.testing.assert_allclose(got, want, rtol=1e-7)


def test_from_eras_takes_the_7_parameter_models():
    obs = pd.DataFrame({"person_id": NRT.case, "start": NRT.nrt, "end": NRT.act, "birth_day": 0, "censor": NRT.cen})
    eras = pd.DataFrame({"person_id": NRT.case, "start": NRT.nrt, "end": NRT.nrt, "covariate_id": "nrt"})
    outcomes = pd.DataFrame({"person_id": NRT.case, "day": NRT.mi})
    kw = dict(risk_start=0, risk_end=28, event_dependent_observation="EGI")
    d7 = SCCSData.from_eras(obs, eras, outcomes, censoring_regression=True, **kw)
    d4 = SCCSData.from_eras(obs, eras, outcomes, **kw)
    aevent, aend, censor, astart = nrt_ages()
    # the censoring data the design fitted are the package's: its likelihood at the fitted point is
    # recomputed here from the nrtdat ages, and is at least the package's maximum
    p = d7.censoring.params["EGI"]
    assert d7.censoring.regress and p.shape == (7,)
    assert edo.censoring_loglik("EGI", p, aevent, aend, censor, astart) == pytest.approx(d7.censoring.loglik["EGI"],
                                                                                          abs=1e-9)
    assert d7.censoring.loglik["EGI"] >= EDO_PEER["EGI"]["loglik"] - 1e-7
    assert d7.censoring.loglik["EGI"] > d4.censoring.loglik["EGI"]
    assert np.all(np.isfinite(d7.time)) and not np.allclose(d7.time, d4.time)
    with pytest.raises(ValueError, match="censoring_regression=True needs event_dependent_observation"):
        SCCSData.from_eras(obs, eras, outcomes, censoring_regression=True)
    with pytest.raises(TypeError, match="censoring_regression must be True or False"):
        SCCSData.from_eras(obs, eras, outcomes, censoring_regression="yes", **kw)
    with pytest.raises(ValueError, match="needs astart"):
        edo.fit_censoring_models(aevent, aend, censor, models=["EWA"], regress=True)
    with pytest.raises(ValueError, match="start must be 7 finite numbers"):
        edo.fit_censoring_models(aevent, aend, censor, models=["EWI"], regress=True, start=[0.1] * 4)
