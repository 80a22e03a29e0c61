"""SCCS figures: the forest plot draws each covariate's IRR and interval from the results table."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402

import hphawkes_py as hp  # noqa: E402
from hphawkes_py.sccs.plot import plot_irr  # noqa: E402


def test_forest_plot_draws_the_results_table(tmp_path):
    data, _ = hp.sccs.simulate(n_cases=3000, n_drugs=4, prevalence=0.3, seed=2)
    f = hp.sccs.fit(data, prior="normal", variance=1.0, backend="cpu", progress=False)
    table = f.results_table(method="wald")
    fig = plot_irr(f, path=tmp_path / "irr.png")
    ax = fig.axes[0]
    x = ax.lines[0].get_xdata()
    np.testing.assert_allclose(np.sort(x), np.sort(table["irr"].to_numpy(float)), rtol=1e-12)
    assert [t.get_text() for t in ax.get_yticklabels()] == [str(i) for i in table.index]
    assert (tmp_path / "irr.png").stat().st_size > 1000


# ---------------------------------------------------------------- spline, time-to-event, pre-exposure
import pytest  # noqa: E402

from hphawkes_py.sccs import RiskWindow, SCCSData  # noqa: E402
from hphawkes_py.sccs.plot import (plot_pre_exposure, plot_spline_effects, plot_time_to_event,  # noqa: E402
                                   time_to_event)


@pytest.fixture(scope="module")
def study():
    obs, eras, oc, truth = hp.sccs.simulate(n_cases=1500, n_drugs=2, prevalence=0.5, fraction_positive=1.0,
                                            relative_risks=(3.0,), observation_days=(365, 900),
                                            age_at_start=(0, 2500), output="eras", seed=5,
                                            age_effect=lambda a: 0.5 * np.sin(np.asarray(a) / 600.0),
                                            season_effect=lambda m: 0.3 * np.cos(2 * np.pi * np.asarray(m) / 12))
    eras = eras.assign(covariate_id="drug" + eras.covariate_id.astype(str))
    windows = {"drug1": [RiskWindow("on1", 0, 0, "start", "end"), RiskWindow("pre1", -30, -1, "start", "start")]}
    d = SCCSData.from_eras(obs, eras, oc, windows=windows, age_knots=4, season_knots=4)
    f = hp.sccs.fit(d, prior="none", spline_prior="normal", spline_variance=10.0, backend="cpu", progress=False)
    return obs, eras, oc, f


def test_spline_effect_plot_draws_the_fitted_curves_and_bands(study, tmp_path):
    *_, f = study
    fig = plot_spline_effects(f, n=50, path=tmp_path / "s.png")
    e = f.spline_effects(n=50)
    assert [ax.get_title() for ax in fig.axes] == ["age", "season"]
    for ax, name in zip(fig.axes, ["age", "season"]):
        t = e[e.term == name]
        x, y = ax.lines[0].get_data()
        np.testing.assert_allclose(x, t.x / (365.25 if name == "age" else 1.0), rtol=1e-12)
        np.testing.assert_allclose(y, t.rr, rtol=1e-12)
        band = ax.collections[0].get_paths()[0].vertices
        assert band[:, 1].min() == pytest.approx(t.rr_lower.min(), rel=1e-9)
        assert band[:, 1].max() == pytest.approx(t.rr_upper.max(), rel=1e-9)
    assert (tmp_path / "s.png").stat().st_size > 1000
    fig2 = plot_spline_effects(f, "season", n=50, rate_ratio=False)
    np.testing.assert_allclose(fig2.axes[0].lines[0].get_ydata(), e[e.term == "season"].log_effect, rtol=1e-12)


def test_time_to_event_histogram_counts_pairs(study):
    obs, eras, oc, f = study
    d = time_to_event(eras, oc, "drug1", window=(-60, 120))
    # hand count: every (era of drug 1, outcome) pair of a person
    ref = []
    e1 = eras[eras.covariate_id == "drug1"]
    for _, r in e1.iterrows():
        days = oc.day[oc.person_id == r.person_id].to_numpy() - r.start
        ref.extend(days[(days >= -60) & (days <= 120)].tolist())
    np.testing.assert_array_equal(np.sort(d), np.sort(ref))
    fig = plot_time_to_event(eras, oc, "drug1", window=(-60, 120), bin_days=10)
    heights = [p.get_height() for p in fig.axes[0].patches]
    np.testing.assert_array_equal(heights, np.histogram(ref, bins=np.arange(-60, 131, 10) - 0.5)[0])
    assert sum(heights) == len(ref)
    # the relative risk 3 during exposure shows as more outcomes after day 0 than before
    assert np.mean((d >= 0) & (d <= 30)) > np.mean((d >= -31) & (d < 0))
    with pytest.raises(ValueError, match="covariate_id 7 has no eras"):
        time_to_event(eras, oc, 7)
    with pytest.raises(ValueError, match="window"):
        time_to_event(eras, oc, "drug1", window=(10, -10))
    with pytest.raises(ValueError, match="anchor"):
        time_to_event(eras, oc, "drug1", anchor="middle")


def test_pre_exposure_plot_draws_the_pre_window_apart(study):
    *_, f = study
    fig = plot_pre_exposure(f, "pre1")
    ax = fig.axes[0]
    table = f.results_table(["drug2", "on1", "pre1"])
    risk, pre = ax.containers[0].lines[0], ax.containers[1].lines[0]
    np.testing.assert_allclose(np.sort(risk.get_xdata()), np.sort(table.loc[["drug2", "on1"], "irr"]), rtol=1e-12)
    np.testing.assert_allclose(pre.get_xdata(), [table.loc["pre1", "irr"]], rtol=1e-12)
    assert "pre1" in ax.get_title() and f"{table.loc['pre1', 'p']:.2g}" in ax.get_title()
    # exposure does not depend on events in this simulation: the pre-exposure IRR is near 1
    assert table.loc["pre1", "irr_lower"] < 1 < table.loc["pre1", "irr_upper"]
    assert [t.get_text() for t in ax.get_yticklabels()] == [str(i) for i in table.index]
