"""Diagnostics in the results (hp.sccs.study_diagnostics, SCCSFit.with_diagnostics, the plots),
and several exposures of interest in one model against a day-by-day conditional Poisson
reference written here."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest
from scipy import optimize

import hphawkes_py as hp
from hphawkes_py.sccs import RiskWindow, SCCSData, study_diagnostics
from hphawkes_py.sccs.plot import plot_diagnostics, plot_time_stability


@pytest.fixture(scope="module")
def study():
    obs, eras, outcomes, _ = hp.sccs.simulate(n_cases=400, n_drugs=2, prevalence=0.5, output="eras", seed=1)
    data = SCCSData.from_eras(obs, eras, outcomes, risk_start=0, risk_end=30)
    fit = hp.sccs.fit(data, prior="none")
    return obs, eras, outcomes, data, fit


def test_report_holds_the_diagnostics_each_function_gives(study):
    obs, eras, outcomes, data, fit = study
    report = study_diagnostics(fit, obs, eras, outcomes, n_persons=4000)
    table = report.table()
    assert table["diagnostic"].tolist() == ["mdrr", "pre_exposure_gain", "mdrr", "pre_exposure_gain",
                                            "time_stability", "rare_outcome"]
    assert table["covariate_id"].tolist()[:4] == [1, 1, 2, 2] and table["covariate_id"].iloc[4:].isna().all()
    for c in (1, 2):
        want = [hp.sccs.mdrr(data, c), hp.sccs.pre_exposure_gain(obs, eras, outcomes, c)]
        got = table[table.covariate_id == c]
        assert got["value"].tolist() == [d.value for d in want]
        assert got["pass"].tolist() == [d.passed for d in want]
    assert table["value"].iloc[4] == hp.sccs.time_stability(obs, outcomes).value
    assert table["value"].iloc[5] == pytest.approx(400 / 4000)


def test_results_table_has_each_value_its_pass_column_and_the_verdict(study):
    obs, eras, outcomes, data, fit = study
    plain = fit.results_table()
    report = study_diagnostics(fit, obs, eras, outcomes)
    withd = fit.with_diagnostics(report)
    table = withd.results_table()
    # the estimates are untouched; the diagnostics come after them
    pd.testing.assert_frame_equal(table[plain.columns], plain)
    assert table.columns[len(plain.columns):].tolist() == [
        "mdrr", "mdrr_pass", "pre_exposure_gain_p", "pre_exposure_gain_pass", "time_stability_p",
        "time_stability_pass", "diagnostics_pass"]
    for c in (1, 2):
        m = hp.sccs.mdrr(data, c)
        assert table.loc[c, "mdrr"] == m.value and bool(table.loc[c, "mdrr_pass"]) == (m.value < 10)
        p = table.loc[c, "pre_exposure_gain_p"]
        assert bool(table.loc[c, "pre_exposure_gain_pass"]) == (p >= 0.05)
        assert bool(table.loc[c, "time_stability_pass"]) == (table.loc[c, "time_stability_p"] > 0.05)
        assert bool(table.loc[c, "diagnostics_pass"]) == bool(
            table.loc[c, ["mdrr_pass", "pre_exposure_gain_pass", "time_stability_pass"]].all())
    assert table.attrs == plain.attrs
    # summary and print carry them too
    summary = withd.summary()
    assert summary["diagnostics_pass"].tolist() == table["diagnostics_pass"].tolist()
    assert "StudyDiagnostics(5 diagnostics" in repr(withd) and "StudyDiagnostics" not in repr(fit)
    assert fit.diagnostics is None  # with_diagnostics returns a new fit


def test_a_failing_diagnostic_fails_the_verdict():
    # few exposed cases: the MDRR is far above 10
    obs, eras, outcomes, _ = hp.sccs.simulate(n_cases=60, n_drugs=2, prevalence=0.05, output="eras", seed=4)
    fit = hp.sccs.fit(SCCSData.from_eras(obs, eras, outcomes, risk_start=0, risk_end=30), prior="none")
    report = study_diagnostics(fit)
    table = fit.with_diagnostics(report).results_table()
    assert (table["mdrr"] > 10).all() and not table["mdrr_pass"].any() and not table["diagnostics_pass"].any()
    assert not report.passed() and "FAIL: mdrr[1], mdrr[2]" in repr(report)
    # a study-level failure fails every exposure: first outcomes only, in a small population
    first = hp.sccs.fit(SCCSData.from_eras(obs, eras, outcomes, risk_start=0, risk_end=30, first_outcome_only=True),
                        prior="normal", variance=1.0)
    report = study_diagnostics(first, n_persons=100)
    rare = hp.sccs.rare_outcome(n_persons=100, n_cases=60, first_outcome_only=True)
    assert report.table()["diagnostic"].iloc[-1] == "rare_outcome" and report.table()["value"].iloc[-1] == rare.value
    assert not rare.passed and not report.table()["pass"].iloc[-1]
    # with all outcomes used the same prevalence passes
    assert (fit.context.data.n_events > 1).any() and study_diagnostics(fit, n_persons=100).table()["pass"].iloc[-1]


def test_probe_windows_are_checked_and_get_no_verdict_of_their_own():
    obs, eras, outcomes, _ = hp.sccs.simulate(n_cases=500, n_drugs=1, prevalence=0.6, output="eras", seed=2)
    eras = eras.assign(covariate_id="drug")
    probe = hp.sccs.end_of_observation_eras(obs, length=30, covariate_id="end_probe")
    windows = {"drug": [RiskWindow("risk", 0, 30, "start", "end"), RiskWindow("pre", -30, -1, "start", "start")]}
    data = SCCSData.from_eras(obs, pd.concat([eras, probe]), outcomes, windows=windows)
    fit = hp.sccs.fit(data, prior="none")
    report = study_diagnostics(fit, exposures=["risk"], pre_exposure_windows={"risk": "pre"},
                               end_of_observation="end_probe")
    names = report.table()["diagnostic"].tolist()
    assert names == ["mdrr", "event_exposure_independence", "event_observation_independence"]
    eei = hp.sccs.event_exposure_independence(fit, "pre")
    assert report.table()["value"].iloc[1] == eei.value
    table = fit.with_diagnostics(report).results_table()
    assert table.loc["risk", "event_exposure_irr"] == eei.value
    assert pd.isna(table.loc["pre", "diagnostics_pass"]) and pd.isna(table.loc["end_probe", "diagnostics_pass"])
    assert bool(table.loc["risk", "diagnostics_pass"]) == report.passed("risk")


def test_plots_colour_pass_and_fail(study):
    obs, eras, outcomes, data, fit = study
    report = study_diagnostics(fit, obs, eras, outcomes, n_persons=500)  # prevalence 0.8: fails
    fig = plot_diagnostics(report)
    titles = [ax.get_title().split(" (")[0] for ax in fig.axes]
    assert titles == ["mdrr", "pre_exposure_gain", "time_stability", "rare_outcome"]
    for ax, name in zip(fig.axes, titles):
        rows = [d for _, d in report.items if d.name == name]
        colors = ax.collections[0].get_facecolors()
        green, red = matplotlib.colors.to_rgba("seagreen"), matplotlib.colors.to_rgba("firebrick")
        assert [tuple(c) for c in colors] == [green if d.passed else red for d in rows]
        np.testing.assert_array_equal(ax.collections[0].get_offsets()[:, 0], [d.value for d in rows])
    fig2 = plot_time_stability(report)
    per_month = hp.sccs.time_stability(obs, outcomes).details["per_month"]
    np.testing.assert_array_equal(fig2.axes[0].lines[0].get_ydata(), per_month["observed"])
    np.testing.assert_array_equal(fig2.axes[0].lines[1].get_ydata(), per_month["expected"])


def test_refusals(study):
    obs, eras, outcomes, data, fit = study
    with pytest.raises(TypeError, match="fit must be an SCCSFit"):
        study_diagnostics(data)
    with pytest.raises(ValueError, match="exposures must be covariates of the fit"):
        study_diagnostics(fit, exposures=[7])
    with pytest.raises(TypeError, match="pre_exposure_windows must be a dict"):
        study_diagnostics(fit, pre_exposure_windows=[1])
    with pytest.raises(ValueError, match="'pre' is not a covariate of the fit"):
        study_diagnostics(fit, pre_exposure_windows={1: "pre"})
    with pytest.raises(ValueError, match="eras needs observation_periods and outcomes"):
        study_diagnostics(fit, eras=eras)
    with pytest.raises(TypeError, match="diagnostics must be a StudyDiagnostics"):
        fit.with_diagnostics({"mdrr": 3})
    with pytest.raises(TypeError, match="diagnostics must be a StudyDiagnostics"):
        plot_diagnostics([1, 2])
    with pytest.raises(ValueError, match="holds no diagnostics"):
        plot_diagnostics(hp.sccs.StudyDiagnostics(()))
    with pytest.raises(TypeError, match="items must be"):
        hp.sccs.StudyDiagnostics(((1, 2),))
    with pytest.raises(TypeError, match="result of hp.sccs.time_stability"):
        plot_time_stability(hp.sccs.mdrr(data, 1))
    with pytest.raises(ValueError, match="no time_stability diagnostic"):
        plot_time_stability(study_diagnostics(fit))


# ------------------------------------------------------------------ several exposures in one model
def day_level(obs, eras, outcomes, windows):
    """Every observed day of every case with its exposure indicators (day within
    ``start + w0 .. end + w1`` of an era of that covariate) and its outcome count."""
    covs = list(windows)
    X, y, person = [], [], []
    for _, o in obs.iterrows():
        days = np.arange(o.start, o.end + 1)
        ev = outcomes.day[outcomes.person_id == o.person_id].to_numpy()
        counts = np.array([(ev == d).sum() for d in days], dtype=float)
        if counts.sum() == 0:
            continue
        x = np.zeros((days.size, len(covs)))
        for j, c in enumerate(covs):
            w0, w1 = windows[c]
            for _, e in eras[(eras.person_id == o.person_id) & (eras.covariate_id == c)].iterrows():
                x[:, j] = np.maximum(x[:, j], (days >= e.start + w0) & (days <= e.end + w1))
        X.append(x)
        y.append(counts)
        person.append(np.full(days.size, o.person_id))
    return np.vstack(X), np.concatenate(y), np.concatenate(person)


def conditional_poisson_reference(X, y, person):
    """Maximum of sum_s [sum_d y_d x_d'b - n_s log sum_d exp(x_d'b)] by BFGS (float64)."""
    _, s = np.unique(person, return_inverse=True)
    n_s = np.bincount(s, weights=y)

    def negll(b):
        eta = X @ b
        tot = np.bincount(s, weights=np.exp(eta))
        p = np.exp(eta) / tot[s]
        return -(y @ eta - n_s @ np.log(tot)), -(X.T @ (y - n_s[s] * p))

    res = optimize.minimize(negll, np.zeros(X.shape[1]), jac=True, method="BFGS", options={"gtol": 1e-10})
    return res.x


def several_exposures(seed):
    rng = np.random.default_rng(seed)
    n = 150
    obs = pd.DataFrame({"person_id": np.arange(n), "start": 0, "end": rng.integers(200, 365, n)})
    rows = []
    for p in range(n):
        for c, k in (("a", 2), ("b", 1), ("c", 2)):
            for _ in range(rng.integers(0, k + 1)):
                s = int(rng.integers(0, 300))
                rows.append((p, s, s + int(rng.integers(0, 20)), c))
    eras = pd.DataFrame(rows, columns=["person_id", "start", "end", "covariate_id"])
    # outcomes raised in exposed time: one to three per person, the rate doubled under a
    days, exposed = np.arange(365), np.zeros((n, 365))
    for e in eras[eras.covariate_id == "a"].itertuples():
        exposed[e.person_id, e.start:e.end + 8] = 1
    out = []
    for p in range(n):
        w = (1 + exposed[p]) * (days <= obs.end[p])
        for _ in range(rng.integers(1, 4)):
            out.append((p, int(rng.choice(days, p=w / w.sum()))))
    return obs, eras, pd.DataFrame(out, columns=["person_id", "day"])


@pytest.mark.parametrize("seed", [1, 2])
def test_several_exposures_match_a_day_level_conditional_poisson(seed):
    obs, eras, outcomes = several_exposures(seed)
    windows = {"a": (0, 7), "b": (1, 14), "c": (0, 0)}
    data = SCCSData.from_eras(obs, eras, outcomes, risk_windows=windows)
    fit = hp.sccs.fit(data, prior="none", tolerance=1e-12)
    ref = conditional_poisson_reference(*day_level(obs, eras, outcomes, windows))
    np.testing.assert_allclose(fit.coefficients[["a", "b", "c"]].to_numpy(), ref, rtol=1e-6, atol=1e-7)
    # each exposure's effect is adjusted for the others: fitting one alone differs where they overlap
    alone = hp.sccs.fit(SCCSData.from_eras(obs, eras[eras.covariate_id == "a"], outcomes,
                                           risk_windows={"a": (0, 7)}), prior="none")
    assert alone.coefficients["a"] != pytest.approx(fit.coefficients["a"], abs=1e-6)
