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
    out = tmp_path / "out"
    rc = main(["mixture", str(src), "-k", "6", "--method", "bem", "--n-iter", "100", "--seed", "1",
               "--backend", "cpu", "--out", str(out), "--quiet"])
    assert rc == 0
    params = json.loads((out / "params.json").read_text())
    assert params["columns"] == ["eruptions", "waiting"] and params["n"] == 272
    w = np.array(params["weights"])
    assert w.sum() == pytest.approx(1.0)
    # the heaviest cluster (modal merging) is the long-eruption one, in original units
    clusters = pd.read_csv(out / "clusters.csv")
    assert len(clusters) == 2
    assert 4.0 < clusters["mean_eruptions"][0] < 4.6 and 75 < clusters["mean_waiting"][0] < 85
    labels = pd.read_csv(out / "labels.csv")
    assert len(labels) == 272 and labels["probability"].between(0, 1).all()
    assert labels["cluster"].value_counts().to_dict() == clusters.set_index("cluster")["n_rows"].to_dict()
    comps = pd.read_csv(out / "components.csv")
    assert list(comps.columns[:5]) == ["component", "weight", "cluster", "mean_eruptions", "mean_waiting"]
    # a second run into the same non-empty folder is refused without --overwrite, before any fit
    rc = main(["mixture", str(src), "-k", "6", "--method", "bem", "--n-iter", "5", "--out", str(out), "--quiet"])
    assert rc == 2


def test_cli_column_errors(tmp_path, capsys):
    src = hp.datasets.path("mixture/faithful.csv")
    rc = main(["mixture", str(src), "--columns", "nope", "--quiet", "--out", str(tmp_path / "o")])
    assert rc == 2
    assert "nope" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("cell, what", [("abc", "'abc', not a finite number"), ("", "an empty cell"),
                                        ("inf", "not a finite number")])
def test_cli_refuses_a_bad_cell_naming_file_row_and_column(tmp_path, capsys, cell, what):
    df = hp.datasets.load_faithful().head(40).astype(str)
    df.loc[16, "waiting"] = cell
    src = tmp_path / "bad.csv"
    df.to_csv(src, index=False)
    rc = main(["mixture", str(src), "-k", "3", "--n-iter", "2", "--quiet", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("hphawkes: error:") and "Traceback" not in err
    assert str(src) in err and "row 17 (line 18)" in err and "'waiting'" in err and what in err
    assert not (tmp_path / "o").exists()
    # the text column can be left out explicitly
    rc = main(["mixture", str(src), "-k", "3", "--method", "bem", "--n-iter", "3", "--quiet",
               "--drop", "waiting", "--backend", "cpu", "--out", str(tmp_path / "o")])
    assert rc == 0
    assert json.loads((tmp_path / "o" / "params.json").read_text())["columns"] == ["eruptions"]


def test_reproduce_faithful_finds_the_two_eruption_clusters(tmp_path, capsys):
    rc = main(["reproduce", "mixture-faithful", "--quick", "--backend", "cpu", "--out", str(tmp_path / "f")])
    assert rc == 0
    table = pd.read_csv(tmp_path / "f" / "clusters.csv")
    assert len(table) == 2
    short, long_ = table.sort_values("mean_eruptions").to_dict("records")
    assert short["weight"] == pytest.approx(0.35, abs=0.04) and long_["weight"] == pytest.approx(0.65, abs=0.04)
    assert abs(short["mean_eruptions"] - 2.04) < 0.15 and abs(long_["mean_eruptions"] - 4.29) < 0.15
    assert abs(short["n_rows"] - 97) <= 5
    assert (tmp_path / "f" / "plot.png").stat().st_size > 1000


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
