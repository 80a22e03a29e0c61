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
