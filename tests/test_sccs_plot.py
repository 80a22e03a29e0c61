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
