"""HDP reports (summary, to_dict, diagnostics), the shared prior checks, and FCS refusals that
name the file (and the channel)."""
import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest

from hphawkes_py.mixture import HDPGaussianMixture, TDPGaussianMixture, read_fcs, read_fcs_folder
from hphawkes_py.mixture._checks import check_init, check_prior_scale, check_priors

flowio = pytest.importorskip("flowio")


def three_samples(seed=0):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]])

    def sample(counts):
        z = np.repeat(np.arange(3), counts)
        return centres[z] + rng.normal(scale=0.5, size=(z.size, 2))

    return [sample([150, 150, 0]), sample([210, 90, 0]), sample([120, 90, 90])]


@pytest.fixture(scope="module")
def gibbs_fit():
    return HDPGaussianMixture(6, n_iter=60, burn_in=60, seed=1, progress=False).fit(three_samples())


@pytest.fixture(scope="module")
def bem_fit():
    return HDPGaussianMixture(6, method="bem", n_iter=100, seed=1, progress=False).fit(three_samples())


# ----------------------------------------------------------------------------- to_dict / summary
def test_to_dict_proportions_are_the_draws_quantiles(gibbs_fit):
    m = gibbs_fit
    d = m.to_dict(level=0.9)
    json.dumps(d)  # plain Python only
    pi = m.draws_["group_weights"]
    ind = np.zeros((m.n_components, m.n_clusters_))
    cc = m.component_clusters_
    ind[cc >= 0, cc[cc >= 0]] = 1.0
    # NumPy reference: per draw, each sample's cluster proportion, then the 5% and 95% quantiles
    ref = np.quantile(pi @ ind, [0.05, 0.95], axis=0)
    np.testing.assert_allclose(d["proportions"]["cluster_lower"], ref[0], rtol=0, atol=1e-15)
    np.testing.assert_allclose(d["proportions"]["cluster_upper"], ref[1], rtol=0, atol=1e-15)
    np.testing.assert_allclose(d["proportions"]["cluster"], pi.mean(0) @ ind, rtol=1e-12, atol=1e-15)
    refc = np.quantile(pi, [0.05, 0.95], axis=0)
    np.testing.assert_allclose(d["proportions"]["component_lower"], refc[0], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(d["proportions"]["component_upper"], refc[1], rtol=1e-12, atol=1e-15)
    assert d["n_samples"] == 3 and d["n_per_sample"] == [300, 300, 300]
    assert d["alpha0"] == pytest.approx(m.draws_["alpha0"].mean())
    assert set(d["diagnostics"]) == {"loglik", "occupied", "alpha", "alpha0"}
    # the third sample alone holds the population at (0, 4): its interval excludes 0, the others' is near 0
    third = int(np.argmin(np.abs(m.cluster_means_ - [0.0, 4.0]).sum(1)))
    lo = np.array(d["proportions"]["cluster_lower"])[:, third]
    hi = np.array(d["proportions"]["cluster_upper"])[:, third]
    assert lo[2] > 0.2 and hi[2] < 0.4
    assert hi[0] < 0.02 and hi[1] < 0.02


def test_summary_lists_each_samples_proportions_with_intervals(gibbs_fit):
    m = gibbs_fit
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a short chain's R-hat may exceed 1.01
        text = m.summary(level=0.9)
    assert text.startswith("HDP Gaussian mixture (gibbs, k=6, 3 samples, n=900, p=2, backend=cpu)")
    lo, hi = m.group_weight_intervals(0.9, by="cluster")
    W = m.group_cluster_weights_
    for j in range(3):
        for c in range(m.n_clusters_):
            assert f"{W[j, c]:.3f} [{lo[j, c]:.3f}, {hi[j, c]:.3f}]" in text
    assert "label-invariant convergence diagnostics" in text
    assert f"{m.n_clusters_} cluster(s) by modal merging" in text


def test_bem_summary_and_dict_have_no_intervals(bem_fit):
    m = bem_fit
    d = m.to_dict()
    json.dumps(d)
    assert "cluster_lower" not in d["proportions"] and d["diagnostics"] is None
    np.testing.assert_array_equal(d["group_weights"], m.group_weights_)
    assert d["alpha0"] == 1.0
    text = m.summary()
    assert "(BEM estimate)" in text and "[" not in text.split("per-sample cluster proportions")[1].split("\n")[2]
    assert m.diagnostics() is None


def test_report_refusals(gibbs_fit):
    with pytest.raises(RuntimeError, match="not fitted yet"):
        HDPGaussianMixture(4).summary()
    with pytest.raises(RuntimeError, match="not fitted yet"):
        HDPGaussianMixture(4).to_dict()
    with pytest.raises(RuntimeError, match="not fitted yet"):
        HDPGaussianMixture(4).diagnostics()
    for bad in (1.5, 0.0, -0.1):
        with pytest.raises(ValueError, match="level"):
            gibbs_fit.to_dict(level=bad)
        with pytest.raises(ValueError, match="level"):
            gibbs_fit.summary(level=bad)
    with pytest.raises((TypeError, ValueError), match="level"):
        gibbs_fit.summary(level="high")
    with pytest.raises(ValueError, match="min_weight"):
        gibbs_fit.summary(min_weight=-0.5)


# ----------------------------------------------------------------------------- shared prior checks
def test_both_mixtures_refuse_the_same_priors_with_the_same_message():
    X = three_samples()
    bad = [dict(Phi0=np.array([[1.0, 2.0], [0.0, 1.0]])), dict(Phi0=-np.eye(2)), dict(m0=[0.0, np.nan]),
           dict(Phi0=np.eye(3)), dict(nu0=1e-300), dict(init=np.zeros((5, 2)))]
    for kw in bad:
        with pytest.raises(ValueError) as e_dp:
            TDPGaussianMixture(6, method="bem", n_iter=2, progress=False, **kw).fit(np.concatenate(X))
        with pytest.raises(ValueError) as e_hdp:
            HDPGaussianMixture(6, method="bem", n_iter=2, progress=False, **kw).fit(X)
        assert str(e_dp.value).split("(")[0] == str(e_hdp.value).split("(")[0], kw


def test_check_functions_directly():
    m0, Phi = check_priors(None, None, 2.0, 3, 4)
    np.testing.assert_array_equal(m0, np.zeros(3))
    np.testing.assert_array_equal(Phi, 2.0 * np.eye(3))
    m0, _ = check_priors(1.5, None, 1.0, 2, 4)
    np.testing.assert_array_equal(m0, [1.5, 1.5])
    with pytest.raises(ValueError, match="Phi0 must have shape"):
        check_priors(None, np.eye(2), 1.0, 3, 4)
    with pytest.raises(ValueError, match="nu0=1e-300 is too small"):
        check_prior_scale(1e-300 * np.eye(2), np.ones((5, 2)), np.zeros(2), 1e-300, True)
    with pytest.raises(ValueError, match="Phi0 has smallest eigenvalue"):
        check_prior_scale(1e-300 * np.eye(2), np.ones((5, 2)), np.zeros(2), 1.0, False)
    assert check_init("random", 0, 1, 4, 2) == "random"
    np.testing.assert_array_equal(check_init(np.full((2, 1), 3.0), np.array([1.0]), np.array([2.0]), 2, 1),
                                  [[1.0], [1.0]])
    with pytest.raises(ValueError, match="init"):
        check_init(np.zeros((3, 1)), 0.0, 1.0, 2, 1)


# ----------------------------------------------------------------------------- FCS refusals name the file
def write(path, data, names, markers=None, metadata=None):
    with open(path, "wb") as fh:
        flowio.create_fcs(fh, np.asarray(data, dtype=np.float64).ravel().tolist(), names,
                          opt_channel_names=markers, metadata_dict=metadata)
    return path


def test_read_fcs_refusals_name_the_file_and_channel(tmp_path):
    f = write(tmp_path / "donor.fcs", [[10.0, 4.0], [20.0, 1.0]], ["FL1-A", "FL2-A"], ["CD4", "CD8"])
    name = re.escape(str(f))
    with pytest.raises(ValueError, match=rf"^'{name}': channels: 'CD3' is neither"):
        read_fcs(f, channels=["CD3"])
    with pytest.raises(ValueError, match=rf"^'{name}': transform_channels: 'CD8' is neither"):
        read_fcs(f, channels=["CD4"], transform="arcsinh", transform_channels=["CD8"])
    with pytest.raises(ValueError, match=rf"^'{name}', channel 'FL1-A' \(logicle transform\): T must be > 0"):
        read_fcs(f, transform="logicle", logicle={"T": -1.0})
    singular = pd.DataFrame([[1.0, 1.0], [1.0, 1.0]], index=["FL1-A", "FL2-A"], columns=["FL1-A", "FL2-A"])
    with pytest.raises(ValueError, match=rf"^'{name}' \(spillover matrix from the compensate argument\): "
                                         r"spillover matrix is singular"):
        read_fcs(f, compensate=singular)
    g = write(tmp_path / "spilled.fcs", [[10.0, 4.0]], ["FL1-A", "FL2-A"],
              metadata={"spillover": "2,FL1-A,FL2-A,1,1,1,1"})
    with pytest.raises(ValueError, match=rf"^'{re.escape(str(g))}' \(spillover matrix from keyword \$SPILLOVER\): "
                                         r"spillover matrix is singular"):
        read_fcs(g)


def test_read_fcs_folder_says_which_file_failed(tmp_path):
    write(tmp_path / "a.fcs", [[1.0, 2.0]], ["FL1-A", "FL2-A"])
    write(tmp_path / "b.fcs", [[1.0, 2.0]], ["FL1-A", "FL3-A"])
    with pytest.raises(ValueError, match=r"b.fcs'.*: channels: 'FL2-A' is neither"):
        read_fcs_folder(tmp_path, channels=["FL1-A", "FL2-A"])
    (tmp_path / "b.fcs").unlink()
    (tmp_path / "notes.fcs").write_text("not a cytometry file at all, just some notes about the run\n")
    with pytest.raises(ValueError, match=r"notes.fcs' is not an FCS file"):
        read_fcs_folder(tmp_path)
    good = (tmp_path / "a.fcs").read_bytes()
    (tmp_path / "notes.fcs").write_bytes(good[:10] + b"  abcdef" + good[18:])
    with pytest.raises(ValueError, match=r"notes.fcs' could not be parsed as an FCS file"):
        read_fcs_folder(tmp_path)
    (tmp_path / "notes.fcs").unlink()
    assert read_fcs_folder(tmp_path)[1] == ["a"]
