"""``hphawkes mixture`` command line and the mixture plots."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import hphawkes_py as hp
from hphawkes_py.cli import main
from hphawkes_py.mixture import TDPGaussianMixture


def test_cli_fits_faithful_and_writes_outputs(tmp_path):
    src = hp.datasets.path("mixture/faithful.csv")
    prefix = tmp_path / "out" / "faithful"
    rc = main(["mixture", str(src), "-k", "6", "--method", "bem", "--n-iter", "100", "--seed", "1",
               "--backend", "cpu", "-o", str(prefix), "--quiet"])
    assert rc == 0
    params = json.loads((tmp_path / "out" / "faithful_params.json").read_text())
    assert params["columns"] == ["eruptions", "waiting"] and params["n"] == 272
    w = np.array(params["weights"])
    means = np.array(params["means"])
    assert w.sum() == pytest.approx(1.0)
    # the heaviest component is the long-eruption cluster, in original units
    assert 4.0 < means[w.argmax(), 0] < 4.6 and 75 < means[w.argmax(), 1] < 85
    labels = pd.read_csv(tmp_path / "out" / "faithful_labels.csv")
    assert len(labels) == 272 and labels["probability"].between(0, 1).all()
    comps = pd.read_csv(tmp_path / "out" / "faithful_components.csv")
    assert list(comps.columns[:4]) == ["component", "weight", "mean_eruptions", "mean_waiting"]


def test_cli_column_errors(tmp_path, capsys):
    src = hp.datasets.path("mixture/faithful.csv")
    rc = main(["mixture", str(src), "--columns", "nope", "--quiet"])
    assert rc == 2
    assert "nope" in capsys.readouterr().err


def test_plots_draw_one_ellipse_per_component():
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.patches import Ellipse

    df = hp.datasets.load_faithful()
    m = TDPGaussianMixture(5, method="bem", n_iter=50, seed=1, progress=False, backend="cpu").fit(df)
    fig = m.plot(df, min_weight=0.0)
    ells = [p for p in fig.axes[0].patches if isinstance(p, Ellipse)]
    assert len(ells) == 5
    X = np.random.default_rng(0).normal(size=(100, 3))
    m3 = TDPGaussianMixture(2, method="bem", n_iter=20, seed=1, progress=False, backend="cpu").fit(X)
    fig3 = m3.plot(X, min_weight=0.0)
    assert len(fig3.axes) == 9
    assert sum(isinstance(p, Ellipse) for ax in fig3.axes for p in ax.patches) == 3 * 2
