"""hp.sccs design: several risk windows per exposure (anchored at era start or end), the
pre-exposure window, against the same design built by hand from shifted eras."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import hphawkes_py as hp
from hphawkes_py import datasets
from hphawkes_py.sccs import RiskWindow, SCCSData

OX_COEF = {"exgr1": 2.48797465298, "agegr2": -1.49057569650}


def oxford_raw():
    raw = pd.read_csv(datasets.path("sccs/oxford_raw.tsv"), sep="\t")
    obs = pd.DataFrame({"person_id": raw.indiv, "start": raw.start + 1, "end": raw.end})
    outc = pd.DataFrame({"person_id": raw.indiv, "day": raw.eventday})
    age = pd.DataFrame({"person_id": raw.indiv, "start": 548, "end": 730, "covariate_id": "agegr2"})
    return raw, obs, outc, age


def same_design(a, b):
    for name in ("stratum_ids", "covariate_ids", "stratum_ptr", "y", "time", "col_ptr", "row_idx"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


def test_one_window_reproduces_the_oxford_mle():
    raw, obs, outc, age = oxford_raw()
    vacc = pd.DataFrame({"person_id": raw.indiv, "start": raw.exday, "end": raw.exday, "covariate_id": "mmr"})
    d = SCCSData.from_eras(obs, pd.concat([vacc, age]), outc,
                           windows={"mmr": [RiskWindow("exgr1", 15, 35, "start", "start")]})
    assert list(d.covariate_ids) == ["agegr2", "exgr1"]
    f = hp.sccs.fit(d, prior="none", tolerance=1e-12, backend="cpu", progress=False)
    for k, v in OX_COEF.items():
        assert abs(f.coefficients[k] - v) < 1e-6


@pytest.mark.parametrize("merge", [True, False])
def test_several_windows_and_pre_exposure_equal_hand_built_eras(merge):
    raw, obs, outc, age = oxford_raw()
    # a 3-day "era" so that start and end anchors differ
    vacc = pd.DataFrame({"person_id": raw.indiv, "start": raw.exday, "end": raw.exday + 2, "covariate_id": "mmr"})
    wins = [RiskWindow("pre", -14, -1, "start", "start"), RiskWindow("d1_7", 1, 7, "start", "start"),
            RiskWindow("d8_21", 8, 21, "start", "start"), RiskWindow("post_end", 1, 20, "end", "end"),
            RiskWindow("on", 0, 0, "start", "end")]
    d = SCCSData.from_eras(obs, pd.concat([vacc, age]), outc, windows={"mmr": wins}, merge=merge)
    # the obvious reference: each window written out as its own era table
    hand = [age]
    for lab, a, b in [("pre", raw.exday - 14, raw.exday - 1), ("d1_7", raw.exday + 1, raw.exday + 7),
                      ("d8_21", raw.exday + 8, raw.exday + 21), ("post_end", raw.exday + 3, raw.exday + 22),
                      ("on", raw.exday, raw.exday + 2)]:
        hand.append(pd.DataFrame({"person_id": raw.indiv, "start": a, "end": b, "covariate_id": lab}))
    ref = SCCSData.from_eras(obs, pd.concat(hand), outc, merge=merge)
    same_design(d, ref)
    assert set(d.covariate_ids) == {"agegr2", "pre", "d1_7", "d8_21", "post_end", "on"}
    # the pre-exposure window shows in the results table with its person-time
    t = hp.sccs.fit(d, prior="normal", variance=10.0, backend="cpu", progress=False).results_table()
    j = list(ref.covariate_ids).index("pre")
    rows = ref.row_idx[ref.col_ptr[j]:ref.col_ptr[j + 1]]
    assert t.loc["pre", "exposed_time"] == ref.time[rows].sum() > 0


def test_windows_bad_input():
    raw, obs, outc, age = oxford_raw()
    vacc = pd.DataFrame({"person_id": raw.indiv, "start": raw.exday, "end": raw.exday, "covariate_id": "mmr"})
    eras = pd.concat([vacc, age])
    with pytest.raises(ValueError, match="windows has covariate id"):
        SCCSData.from_eras(obs, eras, outc, windows={"nope": [RiskWindow("a", 1, 2)]})
    with pytest.raises(TypeError, match=r"windows\['mmr'\] must be a non-empty list of RiskWindow"):
        SCCSData.from_eras(obs, eras, outc, windows={"mmr": [(1, 2)]})
    with pytest.raises(ValueError, match="labels must be unique"):
        SCCSData.from_eras(obs, eras, outc, windows={"mmr": [RiskWindow("a", 1, 2), RiskWindow("a", 3, 4)]})
    with pytest.raises(ValueError, match="labels must be unique"):
        SCCSData.from_eras(obs, eras, outc, windows={"mmr": [RiskWindow("agegr2", 1, 2)]})
    with pytest.raises(ValueError, match="no person-time"):
        SCCSData.from_eras(obs, eras, outc, windows={"mmr": [RiskWindow("far", 5000, 5010, "start", "start")]})
    with pytest.raises(ValueError, match="both risk_windows and windows"):
        SCCSData.from_eras(obs, eras, outc, windows={"mmr": [RiskWindow("a", 1, 2)]}, risk_windows={"mmr": (1, 2)})
    with pytest.raises(TypeError, match="RiskWindow.start"):
        RiskWindow("a", 1.5, 2)
    with pytest.raises(ValueError, match="start_anchor"):
        RiskWindow("a", 1, 2, start_anchor="middle")
    with pytest.raises(ValueError, match=r"eras: end < start in 1 row\(s\), first at row 0"):
        SCCSData.from_eras(obs, vacc.assign(end=vacc.start - np.r_[1, np.zeros(len(vacc) - 1, int)]), outc)


# ---------------------------------------------------------------- per-covariate priors
def test_group_priors_meet_kkt_with_per_coefficient_priors():
    import math

    import naive_sccs as nv
    from test_sccs import random_problem

    data = random_problem(41, J=6)
    X, y, t, st = nv.dense_design(data), data.y, data.time, data.row_stratum
    groups = [(["c0", "c1"], "laplace", 0.1), (["c2"], "normal", 2.0), (["c3"], "none", None)]
    f = hp.sccs.fit(data, prior="laplace", variance=1.0, priors=groups, tolerance=1e-12, backend="cpu",
                    progress=False)
    assert f.priors == ((("c0", "c1"), "laplace", 0.1), (("c2",), "normal", 2.0), (("c3",), "none", None))
    b = f.coefficients
    setting = {"c0": ("laplace", 0.1), "c1": ("laplace", 0.1), "c2": ("normal", 2.0), "c3": ("none", None),
               "c4": ("laplace", 1.0), "c5": ("laplace", 1.0)}
    lp = 0.0
    for j, cid in enumerate(data.covariate_ids):
        kind, v = setting[cid]
        g = nv.gradient_hessian(X, y, t, st, b.to_numpy(), j)[0]
        if kind == "none":
            assert abs(g) < 1e-7
        elif kind == "normal":
            assert abs(g - b[cid] / v) < 1e-7
            lp += nv.log_prior([b[cid]], "normal", v)
        else:
            lam = math.sqrt(2 / v)
            assert (abs(g) <= lam + 1e-7) if b[cid] == 0 else abs(g - lam * np.sign(b[cid])) < 1e-7
            lp += nv.log_prior([b[cid]], "laplace", v)
    assert f.log_prior == pytest.approx(lp, rel=1e-12)
    assert (b[["c0", "c1"]] == 0).any()  # the strong group prior zeroes something the default keeps
    # a group with prior "none" is exactly exclude
    e1 = hp.sccs.fit(data, prior="normal", variance=0.3, exclude=["c3"], tolerance=1e-12, backend="cpu", progress=False)
    e2 = hp.sccs.fit(data, prior="normal", variance=0.3, priors=[(["c3"], "none", None)], tolerance=1e-12,
                     backend="cpu", progress=False)
    pd.testing.assert_series_equal(e1.coefficients, e2.coefficients)
    # the covariance uses each coefficient's own prior curvature
    H = np.linalg.inv(e2.covariance().to_numpy())
    ref = nv.information(X, y, t, st, e2.coefficients.to_numpy())
    ref[np.diag_indices(6)] += [1 / 0.3 if c != "c3" else 0.0 for c in data.covariate_ids]
    np.testing.assert_allclose(H, ref, rtol=1e-8)


def test_group_priors_in_cv_and_bootstrap_and_bad_input():
    from test_sccs import random_problem

    data = random_problem(42, J=4, binary=True)
    groups = [(["c0"], "normal", 5.0)]
    cv = hp.sccs.cross_validate(data, folds=3, grid=[0.01, 1.0], priors=groups, seed=1, backend="cpu", progress=False)
    assert cv.fit.priors == ((("c0",), "normal", 5.0),)
    bs = hp.sccs.bootstrap(data, replicates=3, priors=groups, seed=1, backend="cpu", progress=False)
    assert bs.fit.priors == cv.fit.priors and bs.samples.shape == (3, 4)
    for bad, exc, msg in [
        ([(["zz"], "normal", 1.0)], ValueError, r"priors\[0\] has covariate id\(s\) not in the data: \['zz'\]"),
        ([(["c0"], "normal", 1.0), (["c0"], "laplace", 1.0)], ValueError, r"priors\[1\].*already have a prior"),
        ([(["c0"], "cauchy", 1.0)], ValueError, r"priors\[0\] prior"),
        ([(["c0"], "normal", -1.0)], ValueError, r"priors\[0\] variance"),
        ([(["c0"], "normal")], TypeError, r"priors\[0\] must be a triple"),
        ({"c0": ("normal", 1.0)}, TypeError, "priors must be a list"),
    ]:
        with pytest.raises(exc, match=msg):
            hp.sccs.fit(data, priors=bad, backend="cpu", progress=False)
    with pytest.raises(ValueError, match="already have a prior"):
        hp.sccs.fit(data, exclude=["c0"], priors=groups, backend="cpu", progress=False)


def test_from_eras_errors_name_the_first_offending_row():
    obs = pd.DataFrame({"person_id": [1, 2, 3], "start": [0, 0, 0], "end": [99, 49, 9]})
    eras = pd.DataFrame({"person_id": [1, 2], "start": [10, 5], "end": [19, 8], "covariate_id": ["a", "a"]})
    outc = pd.DataFrame({"person_id": [1, 2], "day": [12, 6]})
    with pytest.raises(ValueError, match=r"one period per person\): 1 duplicate\(s\), first at row 3 \(person_id=2\)"):
        SCCSData.from_eras(pd.concat([obs, obs.iloc[[1]]], ignore_index=True), eras, outc)
    with pytest.raises(ValueError, match=r"end < start for 1 person\(s\), first at row 2 \(person_id=3, start=0, end=-1\)"):
        SCCSData.from_eras(obs.assign(end=[99, 49, -1]), eras, outc)
    with pytest.raises(ValueError, match=r"eras has 1 row\(s\) of persons without an observation period, first at row 1 \(person_id=7\)"):
        SCCSData.from_eras(obs, eras.assign(person_id=[1, 7]), outc)
    with pytest.raises(ValueError, match=r"outcomes.day must be integer days: 1 bad value\(s\), first at row 1 \(6.5\)"):
        SCCSData.from_eras(obs, eras, outc.assign(day=[12, 6.5]))
    with pytest.raises(ValueError, match="eras.start must be integer days, got dtype bool"):
        SCCSData.from_eras(obs, eras.assign(start=[True, False]), outc)


# ---------------------------------------------------------------- observation-period rules
def _toy():
    obs = pd.DataFrame({"person_id": [1, 2, 3, 4], "start": [0, 0, 50, 0], "end": [99, 79, 120, 30],
                        "birth_day": [-100, -400, -2000, -50]})
    eras = pd.DataFrame({"person_id": [1, 1, 2, 3, 4], "start": [10, 60, 30, 70, 5], "end": [19, 69, 45, 80, 9],
                         "covariate_id": ["a", "a", "a", "b", "b"]})
    outc = pd.DataFrame({"person_id": [1, 1, 2, 3, 3, 4], "day": [65, 12, 40, 75, 100, 25]})
    return obs, eras, outc


def test_observation_rules_equal_hand_clipped_periods():
    obs, eras, outc = _toy()
    d = SCCSData.from_eras(obs, eras, outc, study_start=20, study_end=90, naive_period=5, min_age=60, max_age=420)
    # by hand: start = max(start + 5, 20, birth + 60); end = min(end, 90, birth + 420)
    hand = obs.assign(start=np.maximum.reduce([obs.start + 5, np.full(4, 20), obs.birth_day + 60]),
                      end=np.minimum.reduce([obs.end, np.full(4, 90), obs.birth_day + 420]))
    inside = hand.end >= hand.start  # person 3 (born day -2000) is past max_age throughout
    assert list(inside) == [True, True, False, True]
    ref = SCCSData.from_eras(hand[inside].drop(columns="birth_day"), eras[eras.person_id.isin(hand.person_id[inside])],
                             outc[outc.person_id.isin(hand.person_id[inside])])
    same_design(d, ref)
    assert d.dropped["persons_outside_study"] == int((~inside).sum())
    assert d.dropped["outcomes_of_persons_outside_study"] == 2 and list(d.stratum_ids) == [1, 4]
    d2 = SCCSData.from_eras(obs, eras, outc, max_age=300)
    assert d2.dropped["persons_outside_study"] == 2 and list(d2.stratum_ids) == [1, 4]


def test_first_outcome_only_equals_passing_first_outcomes():
    obs, eras, outc = _toy()
    d = SCCSData.from_eras(obs, eras, outc, first_outcome_only=True)
    first = outc.sort_values(["person_id", "day"], kind="stable").groupby("person_id").head(1)
    same_design(d, SCCSData.from_eras(obs, eras, first))
    assert d.dropped["later_outcomes"] == 2 and d.n_events.sum() == 4


def test_observation_rules_bad_input():
    obs, eras, outc = _toy()
    with pytest.raises(ValueError, match="birth_day"):
        SCCSData.from_eras(obs.drop(columns="birth_day"), eras, outc, min_age=10)
    with pytest.raises(ValueError, match="study_end"):
        SCCSData.from_eras(obs, eras, outc, study_start=50, study_end=10)
    with pytest.raises(TypeError, match="naive_period"):
        SCCSData.from_eras(obs, eras, outc, naive_period=1.5)
    with pytest.raises(ValueError, match="naive_period"):
        SCCSData.from_eras(obs, eras, outc, naive_period=-1)
    with pytest.raises(TypeError, match="first_outcome_only"):
        SCCSData.from_eras(obs, eras, outc, first_outcome_only="yes")
    with pytest.raises(ValueError, match="no person has observation time left"):
        SCCSData.from_eras(obs, eras, outc, study_start=500)
