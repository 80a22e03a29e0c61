"""The Bernoulli space-time scan adjusted for the day of the week (hp.scan.space_time(model="bernoulli",
day_of_week=True), SaTScan's AdjustForWeeklyTrends with ModelType=1): the Monte Carlo relabels each weekday's
cases among that weekday's persons (:func:`hphawkes_py.scan.null_draws.draw_cases_by_weekday`), the LLRs
are the unadjusted ones.

Against SaTScan 10.3.2 run on the same data (tests/satscan_oracle.py; cases three times as often on Mondays):
the clusters' locations, days, cases, expected cases and LLRs agree to 1e-6, but not the p-values. SaTScan's
randomizer for this analysis (``AbstractOrdinalDenominatorDataRandomizer::RandomizeOrdinalDataForDayOfWeek``)
takes the persons of the last day of each weekday from its cumulative-in-time measure array without
subtracting the next day's, so that cell holds the persons of every later day too and draws most of its
weekday's cases: its simulated LLRs (median about 700 here, against an observed maximum of 35) make every
p-value 1. :func:`_satscan_weekday_draw` replicates that randomizer: with the slip it reproduces SaTScan's
simulated LLRs, without it ours. The draw itself: every replicate keeps each weekday's cases, never more in a
cell than its persons, and a cell's mean count over many replicates is its persons times its weekday's rate."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hphawkes_py as hp
from hphawkes_py.scan.null_draws import draw_cases_by_weekday
from satscan_oracle import edit_prm, oracle, read_clusters, run_each, store, stored
from test_scan_time_trend import START, T, space_time_prm

FIXTURE = stored("bernoulli_weekly")
_ANALYSES = ["bernoulli weekly"]


def _data():
    """36 locations near the nodes of a 6 x 6 grid (no distance ties), 60 days from Monday 2024/1/1, 40-80
    persons per location and day with cases Binomial(persons, 2 %), 6 % on Mondays, and 8 % at three
    neighbouring locations on days 30-33. Returns (xy, cases (L, T), controls (L, T))."""
    rng = np.random.default_rng(52)
    gx, gy = np.meshgrid(np.arange(6.0), np.arange(6.0))
    xy = np.round(np.c_[gx.ravel(), gy.ravel()] + rng.uniform(-0.2, 0.2, size=(36, 2)), 4)
    persons = rng.integers(40, 81, size=(36, T))
    rate = np.full((36, T), 0.02)
    rate[:, 0::7] = 0.06
    rate[[20, 21, 26], 30:34] = 0.08
    cases = rng.binomial(persons, rate)
    return xy, cases, persons - cases


def _ids():
    return [f"L{i:02d}" for i in range(36)]


def _write_inputs(folder: Path):
    xy, c, ctl = _data()
    ids = _ids()
    day = [str(START + d).replace("-", "/") for d in range(T)]
    (folder / "t.geo").write_text("".join(f"{k} {x:.4f} {y:.4f}\n" for k, (x, y) in zip(ids, xy)))
    (folder / "t.cas").write_text("".join(f"{ids[l]} {c[l, t]} {day[t]}\n" for l in range(36) for t in range(T)
                                          if c[l, t]))
    (folder / "t.ctl").write_text("".join(f"{ids[l]} {ctl[l, t]} {day[t]}\n" for l in range(36) for t in range(T)
                                          if ctl[l, t]))


def _prm(name, folder: Path, weekly=True) -> Path:
    prm = space_time_prm(folder, name.replace(" ", "_") + ("" if weekly else "_plain"), "1", "3",
                         ["ControlFile=t.ctl"], [f"AdjustForWeeklyTrends={'y' if weekly else 'n'}"], max_days=7)
    return edit_prm(prm, {"[Output]": "[Output]\nSaveSimLLRsASCII=y"})


def _read(prm) -> dict:
    out = read_clusters(prm)
    out["llr"] = [float(x) for x in Path(prm).with_suffix(".llr.txt").read_text().split()]
    return out


def run_satscan(binary) -> dict:
    """SaTScan's clusters (:func:`satscan_oracle.read_clusters`) and simulated LLRs of the analysis."""
    return run_each(binary, "hphawkes-bernoulli-weekly-", _write_inputs, _ANALYSES, _prm, _read)


@pytest.fixture(scope="module")
def satscan_output():
    return oracle(FIXTURE, run_satscan)


def _satscan_weekday_draw(c, persons, rng, slip):
    """One replicate of SaTScan's Bernoulli day-of-week randomizer, written from its source: for each weekday
    (from the study's last day back) the weekday's cases as sorted distinct positions among its persons,
    handed out walking the locations and that weekday's days backwards through the persons' running total.
    SaTScan's measure is cumulative in time (persons of day i to the end); ``slip``: as SaTScan 10.3.2, the
    last day of each weekday takes that cumulative value itself (only right for the study's last day)."""
    L, Tn = c.shape
    cum = np.cumsum(persons[:, ::-1], axis=1)[:, ::-1]
    sim = np.zeros((L, Tn), dtype=np.int64)
    for k in range(7):
        days = list(range(Tn - 1 - k, -1, -7))
        cw, pw = int(c[:, days].sum()), int(persons[:, days].sum())
        n = min(cw, pw - cw)
        rand = np.sort(rng.choice(pw, n, replace=False))
        left, count = pw - 1, n
        for z in range(L - 1, -1, -1):
            for i in days:
                whole = slip and i == days[0]
                left -= cum[z, i] if whole or i == Tn - 1 else cum[z, i] - cum[z, i + 1]
                while count > 0 and rand[count - 1] > left:
                    sim[z, i] += 1
                    count -= 1
    return sim if cw <= pw - cw else persons - sim


def _top_llr(xy, cases, persons):
    """The most likely cylinder's LLR of one data set (days 0..T-1, cylinders of at most 7 days)."""
    L, Tn = cases.shape
    rl, rd = np.indices((L, Tn)).reshape(2, -1)
    res = hp.scan.space_time(xy[rl], cases.ravel(), rd, controls=(persons - cases).ravel(), model="bernoulli",
                             max_temporal=7, n_replicates=1, progress=False, backend="cpu")
    return float(res.clusters.log_likelihood_ratio.iloc[0])


def test_run_prm_bernoulli_weekly_against_satscan(satscan_output, tmp_path):
    _write_inputs(tmp_path)
    theirs = satscan_output["bernoulli weekly"]
    res = hp.scan.run_prm(_prm("bernoulli weekly", tmp_path), seed=1, progress=False, backend="cpu")
    assert res.day_of_week and res.model == "space_time_bernoulli"
    top, row = res.clusters.iloc[0], theirs["rows"][0]
    assert [str(v) for v in top.location_ids] == theirs["ids"][0]
    assert (np.datetime64(top.start, "D"), np.datetime64(top.end, "D")) == (START, START)
    assert top.cases == int(row["OBSERVED"]) and top.expected == pytest.approx(float(row["EXPECTED"]), abs=1e-6)
    assert top.log_likelihood_ratio == pytest.approx(float(row["LLR"]), abs=1e-6)
    head = hp.scan.outputs.report_text(res).split("\n_____")[0].splitlines()[1:]
    assert head == ["adjusting for weekly trends nonparametrically."] and theirs["summary"].endswith(head[0])
    # SaTScan's simulated maxima, and its randomizer replicated with and without its slip
    xy, c, ctl = _data()
    rng = np.random.default_rng(8)
    slipped = [_top_llr(xy, _satscan_weekday_draw(c, c + ctl, rng, True), c + ctl) for _ in range(8)]
    fixed = [_top_llr(xy, _satscan_weekday_draw(c, c + ctl, rng, False), c + ctl) for _ in range(8)]
    assert len(theirs["llr"]) == 999
    assert np.median(slipped) == pytest.approx(np.median(theirs["llr"]), rel=0.1)
    assert np.median(fixed) == pytest.approx(np.median(res.null_llr), rel=0.2)
    assert np.median(theirs["llr"]) > 10 * np.median(res.null_llr)
    # the Mondays' excess is kept in every replicate: larger maxima than without the adjustment
    plain = hp.scan.run_prm(_prm("bernoulli weekly", tmp_path, weekly=False), seed=1, progress=False, backend="cpu",
                            n_replicates=199)
    assert np.median(res.null_llr) > 1.5 * np.median(plain.null_llr)


def test_draw_cases_by_weekday_keeps_each_weekdays_cases():
    rng = np.random.default_rng(4)
    L, Tn = 5, 17
    persons = rng.integers(0, 6, size=(L, Tn))
    cases = rng.binomial(persons, 0.3)
    weekday = 3 + np.arange(Tn)  # day 0 a Thursday of 1970: any labelling mod 7
    R = 4000
    seeds = np.random.SeedSequence(6).spawn(R)
    M = draw_cases_by_weekday(persons, cases, weekday, seeds)
    assert M.shape == (L, Tn, R) and M.dtype == np.int32
    assert (M >= 0).all() and (M <= persons[:, :, None]).all()
    rate = np.zeros(7)
    for k in range(7):
        days = np.flatnonzero(weekday % 7 == k)
        np.testing.assert_array_equal(M[:, days].sum(axis=(0, 1)), cases[:, days].sum())
        rate[k] = cases[:, days].sum() / max(persons[:, days].sum(), 1)
    # a cell's mean count is its persons times its weekday's rate (hypergeometric: the mean is exact), to
    # within 5 standard errors of the mean of R draws
    mean = persons * rate[weekday % 7][None, :]
    se = np.sqrt(np.maximum(M.var(axis=2), 1e-12) / R)
    assert np.all(np.abs(M.mean(axis=2) - mean) <= 5 * se + 1e-12)
    # a replicate's counts depend on its seed alone
    again = draw_cases_by_weekday(persons, cases, weekday, seeds[7:9])
    np.testing.assert_array_equal(again, M[:, :, 7:9])


def test_bernoulli_weekly_refusals():
    kw = dict(coords=[[0, 0], [1, 1], [2, 2]], cases=[1, 2, 1], times=[0, 1, 2], controls=[5, 5, 5],
              model="bernoulli", n_replicates=9, progress=False, backend="cpu")
    with pytest.raises(ValueError, match="day_of_week adjusts"):
        hp.scan.space_time(**kw, day_of_week=True, time_trend="stratified")


if __name__ == "__main__":  # write the stored SaTScan output (see tests/satscan_oracle.py)
    store(FIXTURE, run_satscan, "test_scan_bernoulli_weekly.py")
