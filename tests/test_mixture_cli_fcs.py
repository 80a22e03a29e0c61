"""``hphawkes mixture`` on FCS files and folders of them (issue 32): the hierarchical DP mixture across
samples, point partitions and cytometry summaries from the command line, each output equal to the
Python API's on the same seed; every refusal is one line, a non-zero exit and no output folder.

The FCS 3.1 files are written with FlowIO's writer, as in tests/test_mixture_fcs.py.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

flowio = pytest.importorskip("flowio")

from hphawkes_py._parallel import spawn_seeds  # noqa: E402
from hphawkes_py.cli import main  # noqa: E402
from hphawkes_py.mixture import (  # noqa: E402
    HDPGaussianMixture,
    TDPGaussianMixture,
    cluster_summary,
    point_partition,
    read_fcs,
    read_fcs_folder,
    sample_label_draws,
    sample_proportions,
)

NAMES = ["FSC-A", "FL1-A", "FL2-A"]
MARKERS = ["", "CD4", "CD8"]
# rows = fluorochromes (FL1, FL2), columns = detectors: 10% of FL1's light reaches FL2's detector
SPILL = "2,FL1-A,FL2-A,1,0.1,0,1"
# two populations shared by every sample (CD4+ and CD8+), a third (double positive) in sample c only
CENTRES = np.array([[3000.0, 200.0], [200.0, 3000.0], [3000.0, 3000.0]])
COUNTS = {"a": (50, 30, 0), "b": (30, 50, 0), "c": (30, 30, 20)}


def write_fcs(path, data, names=NAMES, markers=MARKERS, spill=SPILL):
    """An FCS 3.1 file written by FlowIO (float32 values), with a $SPILLOVER keyword unless spill is None."""
    with open(path, "wb") as fh:
        flowio.create_fcs(fh, np.asarray(data, dtype=np.float64).ravel().tolist(), list(names),
                          opt_channel_names=list(markers),
                          metadata_dict=None if spill is None else {"spillover": spill})
    return Path(path)


def sample_events(counts, seed):
    """Observed events: FSC, then FL1/FL2 with spillover (x_obs = x_true @ S)."""
    rng = np.random.default_rng(seed)
    z = np.repeat(np.arange(3), counts)
    true = CENTRES[z] * np.exp(rng.normal(scale=0.15, size=(z.size, 2)))
    observed = true @ np.array([[1.0, 0.1], [0.0, 1.0]])
    fsc = rng.uniform(2e4, 6e4, size=z.size)
    return np.column_stack([fsc, observed])


@pytest.fixture
def folder(tmp_path):
    d = tmp_path / "samples"
    d.mkdir()
    for j, (name, counts) in enumerate(COUNTS.items()):
        write_fcs(d / f"{name}.fcs", sample_events(counts, j))
    return d


def run(argv, capsys):
    rc = main(["mixture", *map(str, argv)])
    return rc, capsys.readouterr().err


def read(path):
    return pd.read_csv(path)


HDP_ARGS = ["-k", "4", "--n-iter", "20", "--burn-in", "10", "--seed", "7", "--backend", "cpu", "--quiet"]


def test_folder_fits_the_hdp_across_samples_as_the_python_api(folder, tmp_path, capsys):
    out = tmp_path / "out"
    rc, err = run([folder, "--channels", "CD4,CD8", "--transform", "arcsinh", "--cofactor", "150",
                   "--partition", "vi", "--partition-draws", "10", "--png", "--out", out, *HDP_ARGS], capsys)
    assert rc == 0, err
    frames, names = read_fcs_folder(folder, channels=["CD4", "CD8"], transform="arcsinh", cofactor=150.0)
    model = HDPGaussianMixture(4, n_iter=20, burn_in=10, seed=7, backend="cpu", progress=False).fit(frames)
    assert names == ["a", "b", "c"]

    params = json.loads((out / "params.json").read_text())
    assert params["model"] == "hdp" and params["samples"] == names and params["n_per_sample"] == [80, 80, 80]
    assert params["columns"] == ["FL1-A", "FL2-A"] and params["markers"] == ["CD4", "CD8"]
    assert params["compensated"] == [True, True, True] and params["transform"] == "arcsinh"
    np.testing.assert_array_equal(params["group_weights"], model.group_weights_)
    np.testing.assert_array_equal(params["means"], model.means_)

    # per-sample weights with 95% intervals, sample names instead of indices
    for by, fname in (("cluster", "group_weights.csv"), ("component", "group_component_weights.csv")):
        got, want = read(out / fname), model.to_frame(0.95, by=by)
        assert got["sample"].tolist() == [names[j] for j in want["sample"]]
        for col in ("proportion", "lower", "upper"):
            np.testing.assert_array_equal(got[col], want[col])

    # labels: each sample's own weights with the shared components
    labels = read(out / "labels.csv")
    X = pd.concat(frames, ignore_index=True)
    assert labels["sample"].tolist() == list(np.repeat(names, 80))
    want_cluster = np.concatenate([model.predict_cluster(df, group=j) for j, df in enumerate(frames)])
    np.testing.assert_array_equal(labels["cluster"], want_cluster)
    np.testing.assert_array_equal(labels["component"],
                                  np.concatenate([model.predict(df, group=j) for j, df in enumerate(frames)]))

    # the point partition from label draws, seeded by the children of --seed
    draw_seed, search_seed = (np.random.default_rng(s) for s in spawn_seeds(7, 2))
    Z = sample_label_draws(model, frames, 10, seed=draw_seed)
    est = point_partition(Z, loss="VI", seed=search_seed)
    part = read(out / "partition.csv")
    np.testing.assert_array_equal(part["cluster"], est.labels)
    assert part["event"].tolist() == list(range(80)) * 3
    assert params["partition"]["n_clusters"] == est.n_clusters == part["cluster"].nunique()
    assert params["partition"]["expected_loss"] == est.expected_loss

    # summaries of the reported partition (the point partition)
    summary = pd.read_csv(out / "cluster_summary.csv", index_col="cluster")
    pd.testing.assert_frame_equal(summary, cluster_summary(X, est.labels))
    props = pd.read_csv(out / "sample_proportions.csv", index_col="sample")
    want_props = sample_proportions(est.labels, np.repeat(names, 80))
    np.testing.assert_array_equal(props.to_numpy(), want_props.to_numpy())
    assert props.index.tolist() == names
    # the double-positive population is sample c's alone
    dp = int(np.argmin(np.abs(summary[["FL1-A", "FL2-A"]].to_numpy() - np.arcsinh(3000.0 / 150.0)).sum(1)))
    assert props.loc["c", str(dp)] == pytest.approx(0.25) and props.loc["a", str(dp)] == 0.0
    for png in ("biaxial.png", "proportions.png"):
        assert (out / png).stat().st_size > 1000


def test_single_fcs_file_fits_the_tdp_mixture_as_the_python_api(folder, tmp_path, capsys):
    out = tmp_path / "one"
    src = folder / "c.fcs"
    rc, err = run([src, "--channels", "FL1-A,CD8", "--transform", "logicle", "-k", "4", "--method", "bem",
                   "--n-iter", "50", "--seed", "3", "--backend", "cpu", "--quiet", "--out", out], capsys)
    assert rc == 0, err
    X = read_fcs(src, channels=["FL1-A", "CD8"], transform="logicle")
    model = TDPGaussianMixture(4, method="bem", n_iter=50, seed=3, backend="cpu", progress=False).fit(X)
    params = json.loads((out / "params.json").read_text())
    assert params["model"] == "tdp" and params["input_kind"] == "fcs" and params["transform"] == "logicle"
    np.testing.assert_array_equal(params["weights"], model.weights_)
    np.testing.assert_array_equal(params["means"], model.means_)
    np.testing.assert_array_equal(read(out / "labels.csv")["cluster"], model.cluster_labels_)
    summary = pd.read_csv(out / "cluster_summary.csv", index_col="cluster")
    pd.testing.assert_frame_equal(summary, cluster_summary(X, model.cluster_labels_))
    assert not (out / "sample_proportions.csv").exists() and not (out / "partition.csv").exists()


def test_folder_with_model_tdp_pools_the_samples(folder, tmp_path, capsys):
    out = tmp_path / "pooled"
    rc, err = run([folder, "--model", "tdp", "--channels", "CD4,CD8", "--transform", "arcsinh", "-k", "4",
                   "--method", "bem", "--n-iter", "50", "--seed", "3", "--backend", "cpu", "--quiet",
                   "--out", out], capsys)
    assert rc == 0, err
    frames, names = read_fcs_folder(folder, channels=["CD4", "CD8"], transform="arcsinh", cofactor=150.0)
    X = pd.concat(frames, ignore_index=True)
    model = TDPGaussianMixture(4, method="bem", n_iter=50, seed=3, backend="cpu", progress=False).fit(X)
    labels = read(out / "labels.csv")
    np.testing.assert_array_equal(labels["cluster"], model.cluster_labels_)
    assert labels["sample"].tolist() == list(np.repeat(names, 80))
    props = pd.read_csv(out / "sample_proportions.csv", index_col="sample")
    np.testing.assert_array_equal(props.to_numpy(),
                                  sample_proportions(model.cluster_labels_, np.repeat(names, 80)).to_numpy())
    assert not (out / "group_weights.csv").exists()


def test_hdp_shortcut_and_bem_point_estimates(folder, tmp_path, capsys):
    out = tmp_path / "bem"
    rc, err = run([folder, "--hdp", "--channels", "CD4,CD8", "--no-compensate", "-k", "4", "--method", "bem",
                   "--n-iter", "30", "--seed", "2", "--backend", "cpu", "--quiet", "--out", out], capsys)
    assert rc == 0, err
    frames, _ = read_fcs_folder(folder, channels=["CD4", "CD8"], compensate=False)
    model = HDPGaussianMixture(4, method="bem", n_iter=30, seed=2, backend="cpu", progress=False).fit(frames)
    got = read(out / "group_weights.csv")
    np.testing.assert_array_equal(got["proportion"], model.to_frame(by="cluster")["proportion"])
    assert "lower" not in got.columns  # BEM has no intervals
    assert json.loads((out / "params.json").read_text())["compensated"] == [False, False, False]


# --------------------------------------------------------------------------- refusals
def refused(argv, capsys, tmp_path, *needles):
    out = tmp_path / "never"
    rc, err = run([*argv, "--out", out, "--quiet"], capsys)
    assert rc == 2, err
    assert err.startswith("hphawkes: error: mixture:") and err.count("\n") == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, (needle, err)
    assert not out.exists()
    return err


def test_unknown_channel_lists_the_available_ones_and_names_the_file(folder, tmp_path, capsys):
    refused([folder, "--channels", "CD4,CD3"], capsys, tmp_path,
            "--channels: 'CD3'", "a.fcs", "available: FSC-A, FL1-A (CD4), FL2-A (CD8)")
    refused([folder / "b.fcs", "--channels", "FL9-A"], capsys, tmp_path, "'FL9-A'", "b.fcs", "FL2-A (CD8)")
    refused([folder, "--channels", " , "], capsys, tmp_path, "--channels must name at least one channel")


def test_empty_folder_and_a_folder_without_fcs_files(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    refused([empty], capsys, tmp_path, "no FCS file (*.fcs)", "0 other entries")
    (empty / "notes.csv").write_text("a\n1\n")
    refused([empty], capsys, tmp_path, "no FCS file", "1 other entry")


def test_mixed_channels_markers_or_compensation_across_files(folder, tmp_path, capsys):
    odd = tmp_path / "odd"
    odd.mkdir()
    data = sample_events((10, 10, 0), 5)
    write_fcs(odd / "a.fcs", data)
    write_fcs(odd / "b.fcs", data, names=["FSC-A", "FL1-A", "FL3-A"], spill="2,FL1-A,FL3-A,1,0.1,0,1")
    refused([odd], capsys, tmp_path, "b.fcs has the channels ['FSC-A', 'FL1-A', 'FL3-A']", "a.fcs has",
            "--channels")
    # the markers asked for sit in channels of other names
    refused([odd, "--channels", "CD4,FL3-A"], capsys, tmp_path, "'FL3-A' is neither", "a.fcs")
    write_fcs(odd / "b.fcs", data, names=["FSC-A", "FL1-A", "FL3-A"], markers=["", "CD4", "CD8"],
              spill="2,FL1-A,FL3-A,1,0.1,0,1")
    refused([odd, "--channels", "CD4,CD8"], capsys, tmp_path, "b.fcs has the channels ['FL1-A', 'FL3-A']",
            "--channels picks channels named differently ($PnN)")
    # the same detector measuring another marker
    write_fcs(odd / "b.fcs", data, markers=["", "CD4", "CD19"])
    refused([odd, "--channels", "FL1-A,FL2-A"], capsys, tmp_path, "FL2-A is the marker 'CD19' in b.fcs but 'CD8'")
    # one file compensated, the other raw: refused, and --no-compensate reads both raw
    write_fcs(odd / "b.fcs", data, spill=None)
    refused([odd], capsys, tmp_path, "a.fcs is compensated", "b.fcs has none", "--no-compensate")
    rc, err = run([odd, "--no-compensate", "--channels", "CD4,CD8", "-k", "3", "--method", "bem", "--n-iter", "5",
                   "--backend", "cpu", "--quiet", "--out", tmp_path / "raw"], capsys)
    assert rc == 0, err


def test_options_that_do_not_apply_are_refused_before_any_work(folder, tmp_path, capsys):
    csv = tmp_path / "x.csv"
    pd.DataFrame(sample_events((20, 20, 0), 1), columns=["FSC", "FL1", "FL2"]).to_csv(csv, index=False)
    one = folder / "a.fcs"
    refused([csv, "--channels", "FL1"], capsys, tmp_path, "--channels applies to FCS input", "--columns")
    refused([csv, "--transform", "arcsinh", "--no-compensate"], capsys, tmp_path,
            "--transform --no-compensate apply to FCS input")
    refused([one, "--drop", "FSC-A"], capsys, tmp_path, "--drop applies to CSV input", "--channels")
    refused([csv, "--cofactor", "5"], capsys, tmp_path, "--cofactor 5 is the cofactor of the arcsinh", "--arcsinh")
    refused([one, "--cofactor", "5", "--transform", "logicle"], capsys, tmp_path, "--transform arcsinh")
    refused([one, "--transform", "arcsinh", "--cofactor", "0"], capsys, tmp_path, "--cofactor must be a positive")
    refused([one, "--model", "hdp"], capsys, tmp_path, "--model hdp fits across samples", "one FCS file")
    refused([csv, "--hdp"], capsys, tmp_path, "one CSV file")
    refused([folder, "--prune", "0.1", "--method", "bem"], capsys, tmp_path, "--prune 0.1 applies to --model tdp")
    refused([one, "--level", "0.9"], capsys, tmp_path, "--level applies to --model hdp")
    refused([folder, "--level", "1.5"], capsys, tmp_path, "--level must be a probability in (0, 1), got 1.5")
    refused([folder, "--warm-start", "--method", "bem"], capsys, tmp_path, "--warm-start", "--method gibbs")
    refused([folder, "--partition", "vi", "--method", "bem"], capsys, tmp_path,
            "--partition vi needs the posterior draws of --method gibbs")
    refused([folder, "--partition-draws", "5"], capsys, tmp_path, "--partition-draws 5 applies with --partition")
    refused([folder, "--partition", "binder", "--n-iter", "10", "--thin", "2", "--partition-draws", "6"], capsys,
            tmp_path, "between 1 and the 5 stored draws", "got 6")
    refused([folder, "--partition", "vi", "-k", "2048", "--n-iter", "200"], capsys, tmp_path,
            "give --partition-draws 50 or fewer")


def test_unreadable_inputs_are_one_line(tmp_path, capsys):
    fake = tmp_path / "fake.fcs"
    fake.write_text("a,b\n1,2\n")
    refused([fake], capsys, tmp_path, "is not an FCS file")
    refused([tmp_path / "missing.fcs"], capsys, tmp_path, "no such file or folder")
