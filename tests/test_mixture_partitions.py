"""Partitions you can report (issue 32): similarity matrix, Binder / VI point partitions, summaries.

The losses are checked against formulas written out pair by pair and entropy by entropy here; the
SALSO search against brute force over every partition of n <= 6 events.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from hphawkes_py.mixture.cytometry import cluster_summary, plot_biaxial, plot_sample_proportions, sample_proportions
from hphawkes_py.mixture.partitions import (
    binder_distance,
    binder_loss,
    point_partition,
    posterior_similarity,
    sample_label_draws,
    variation_of_information,
    vi_loss,
)


# --------------------------------------------------------------------------- reference formulas
def set_partitions(n):
    """Every partition of range(n) as a label vector (restricted growth strings)."""
    def grow(prefix, k):
        if len(prefix) == n:
            yield list(prefix)
            return
        for c in range(k + 1):
            yield from grow(prefix + [c], max(k, c + 1))
    yield from grow([0], 1)


def entropy_bits(labels):
    _, counts = np.unique(labels, return_counts=True)
    p = counts / counts.sum()
    return -float((p * np.log2(p)).sum())


def vi_by_hand(a, b):
    joint = [f"{x}|{y}" for x, y in zip(a, b)]
    return 2 * entropy_bits(joint) - entropy_bits(a) - entropy_bits(b)


def binder_by_hand(a, b):
    n = len(a)
    return sum((a[i] == a[j]) != (b[i] == b[j]) for i in range(n) for j in range(i + 1, n))


def psm_by_hand(Z):
    Z = np.asarray(Z)
    S, n = Z.shape
    return np.array([[np.mean(Z[:, i] == Z[:, j]) for j in range(n)] for i in range(n)])


def random_draws(rng, S, n, kmax):
    return rng.integers(0, kmax, size=(S, n))


# --------------------------------------------------------------------------- losses
def test_bell_numbers_of_the_enumeration():
    assert [sum(1 for _ in set_partitions(n)) for n in range(1, 7)] == [1, 2, 5, 15, 52, 203]


@pytest.mark.parametrize("seed", range(5))
def test_pairwise_losses_match_the_formulas(seed):
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, 4, 12), rng.integers(-2, 3, 12) * 7
    assert variation_of_information(a, b) == pytest.approx(vi_by_hand(a, b), abs=1e-12)
    assert binder_distance(a, b) == binder_by_hand(a, b)
    assert variation_of_information(a, a + 5) == 0.0
    assert variation_of_information(a, b) == pytest.approx(variation_of_information(b, a), abs=1e-12)


def test_vi_of_one_cluster_against_singletons_is_log2_n():
    assert variation_of_information(np.zeros(8, int), np.arange(8)) == pytest.approx(3.0)
    assert binder_distance(np.zeros(8, int), np.arange(8)) == 28


@pytest.mark.parametrize("seed", range(4))
def test_expected_losses_average_the_pairwise_losses(seed):
    rng = np.random.default_rng(seed)
    Z = random_draws(rng, 7, 9, 3)
    c = rng.integers(0, 3, 9)
    assert vi_loss(c, Z) == pytest.approx(np.mean([vi_by_hand(c, z) for z in Z]), abs=1e-12)
    assert binder_loss(c, Z) == pytest.approx(np.mean([binder_by_hand(c, z) for z in Z]), abs=1e-12)
    # Binder through the similarity matrix: sum_{i<j} |1(c_i = c_j) - p_ij|
    P = psm_by_hand(Z)
    by_pairs = sum(abs((c[i] == c[j]) - P[i, j]) for i in range(9) for j in range(i + 1, 9))
    assert binder_loss(c, psm=P) == pytest.approx(by_pairs, abs=1e-12)
    assert binder_loss(c, psm=P) == pytest.approx(binder_loss(c, Z), abs=1e-12)


def test_similarity_matrix_matches_the_definition_and_subsamples():
    rng = np.random.default_rng(3)
    Z = random_draws(rng, 11, 15, 4)
    np.testing.assert_allclose(posterior_similarity(Z), psm_by_hand(Z), rtol=0, atol=1e-15)
    idx = np.array([14, 2, 7, 0])
    np.testing.assert_allclose(posterior_similarity(Z, index=idx), psm_by_hand(Z)[np.ix_(idx, idx)], atol=1e-15)


def test_similarity_matrix_refuses_bad_index_and_labels():
    Z = [[0, 1, 1], [0, 0, 1]]
    with pytest.raises(ValueError, match=r"index must lie in \[0, 3\)"):
        posterior_similarity(Z, index=[0, 3])
    with pytest.raises(ValueError, match=r"index must lie in \[0, 3\)"):
        posterior_similarity(Z, index=[-1, 0])
    with pytest.raises(ValueError, match="must not repeat"):
        posterior_similarity(Z, index=[1, 1])
    with pytest.raises(TypeError, match="integer event indices"):
        posterior_similarity(Z, index=[0.5, 1.0])
    with pytest.raises(ValueError, match="whole numbers"):
        posterior_similarity([[0, 1.5, 1]])
    with pytest.raises(ValueError, match="NaN"):
        posterior_similarity([[0, np.nan, 1]])
    with pytest.raises(TypeError, match="integer cluster labels"):
        posterior_similarity([["a", "b", "c"]])
    with pytest.raises(ValueError, match="2-dimensional"):
        posterior_similarity(np.zeros((2, 2, 2), int))


def test_one_partition_is_not_taken_for_a_posterior_sample():
    for f in (posterior_similarity, point_partition):
        with pytest.raises(ValueError, match=r"got a 1-D array of 3 labels; for a single partition write labels\[None, :\]"):
            f([0, 1, 1])
    with pytest.raises(ValueError, match="2-dimensional"):
        vi_loss([0, 1, 1], [0, 1, 1])


def test_losses_refuse_mismatched_lengths_and_bad_psm():
    with pytest.raises(ValueError, match="partition has 2 labels but the draws have n = 3"):
        vi_loss([0, 1], [[0, 1, 1]])
    with pytest.raises(ValueError, match="exactly one of labels"):
        binder_loss([0, 1], [[0, 1]], psm=np.eye(2))
    with pytest.raises(ValueError, match=r"probabilities in \[0, 1\]"):
        binder_loss([0, 1], psm=[[1.0, 1.5], [1.5, 1.0]])


# --------------------------------------------------------------------------- the search
def brute_force(Z, loss):
    n = Z.shape[1]
    f = vi_loss if loss == "VI" else binder_loss
    return min(f(np.array(c), Z) for c in set_partitions(n))


@pytest.mark.parametrize("loss", ["VI", "binder"])
@pytest.mark.parametrize("n, seed", [(4, 0), (5, 1), (6, 2), (6, 3), (6, 4), (6, 5)])
def test_point_partition_finds_the_brute_force_minimum(loss, n, seed):
    rng = np.random.default_rng(seed)
    # draws concentrated near a random truth, so the optimum is neither one cluster nor singletons
    truth = rng.integers(0, 3, n)
    Z = np.array([np.where(rng.random(n) < 0.25, rng.integers(0, 4, n), truth) for _ in range(25)])
    est = point_partition(Z, loss=loss, seed=seed, max_clusters=n)
    best = brute_force(Z, loss)
    assert est.expected_loss == pytest.approx(best, abs=1e-10)
    f = vi_loss if loss == "VI" else binder_loss
    assert est.expected_loss == pytest.approx(f(est.labels, Z), abs=1e-12)
    assert est.n_clusters == len(np.unique(est.labels))


def test_point_partition_recovers_clear_structure_and_numbers_by_size():
    draws = [[1, 1, 2, 2, 2, 2, 9]] * 8 + [[1, 1, 1, 2, 2, 2, 2]] * 2
    for loss in ("VI", "binder"):
        est = point_partition(draws, loss=loss, seed=0)
        assert est.labels.tolist() == [1, 1, 0, 0, 0, 0, 2]
        assert est.loss == loss


def test_a_split_seen_in_most_draws_is_reported_and_a_rare_one_is_not():
    # 8 events split 4 + 4 in a fraction of the draws, one cluster in the others
    together, split = [0] * 8, [0] * 4 + [1] * 4
    for frac, expect in ((0.3, 1), (0.7, 2)):
        k = int(round(frac * 10))
        Z = [split] * k + [together] * (10 - k)
        assert point_partition(Z, loss="VI", seed=0).n_clusters == expect
        assert point_partition(Z, loss="binder", seed=0).n_clusters == expect


def test_point_partition_is_reproducible_and_refuses_bad_arguments():
    rng = np.random.default_rng(0)
    Z = random_draws(rng, 10, 30, 3)
    a = point_partition(Z, seed=5, threads=1)
    b = point_partition(Z, seed=5, threads=2)
    assert a.labels.tolist() == b.labels.tolist() and a.expected_loss == b.expected_loss
    with pytest.raises(ValueError, match="threads must be >= 1"):
        point_partition(Z, threads=0)
    with pytest.raises(ValueError, match="loss must be one of"):
        point_partition(Z, loss="binders")
    with pytest.raises(ValueError, match="n_runs must be >= 1"):
        point_partition(Z, n_runs=0)
    with pytest.raises(ValueError, match="max_clusters must be >= 1"):
        point_partition(Z, max_clusters=0)


def test_max_clusters_bounds_the_estimate():
    Z = [[0, 1, 2, 3, 4, 5]] * 5
    assert point_partition(Z, seed=0).n_clusters == 6
    assert point_partition(Z, seed=0, max_clusters=3).n_clusters <= 3


# --------------------------------------------------------------------------- draws of a fit
def test_label_draws_of_a_gibbs_fit_feed_the_point_partition():
    from hphawkes_py.mixture import TDPGaussianMixture

    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0, 1, (60, 2)), rng.normal(8, 1, (40, 2))])
    fit = TDPGaussianMixture(6, n_iter=30, burn_in=30, seed=1, progress=False, backend="cpu").fit(X)
    Z = sample_label_draws(fit, X, n_draws=15, seed=0)
    assert Z.shape == (15, 100) and Z.min() >= 0 and Z.max() < 6
    est = point_partition(Z, seed=0)
    assert est.n_clusters == 2
    assert est.labels[:60].tolist() == [0] * 60 and est.labels[60:].tolist() == [1] * 40
    P = posterior_similarity(Z, index=np.array([0, 1, 99]))
    assert P[0, 1] > 0.9 and P[0, 2] < 0.1
    # the same seed, the same draws; another seed, other draws
    np.testing.assert_array_equal(Z, sample_label_draws(fit, X, n_draws=15, seed=0))
    with pytest.raises(ValueError, match="2 columns"):
        sample_label_draws(fit, X[:, :1])
    with pytest.raises(ValueError, match="n_draws must be <= 30"):
        sample_label_draws(fit, X, n_draws=31)
    with pytest.raises(ValueError, match="group applies to a mixture fitted across samples"):
        sample_label_draws(fit, X, group=0)
    bem = TDPGaussianMixture(6, method="bem", n_iter=20, seed=1, progress=False, backend="cpu").fit(X)
    with pytest.raises(ValueError, match="posterior draws of a Gibbs fit"):
        sample_label_draws(bem, X)


# --------------------------------------------------------------------------- summaries and plots
def test_cluster_summary_medians_and_proportions():
    data = pd.DataFrame({"CD4": [1.0, 3.0, 10.0, 2.0], "CD8": [5.0, 7.0, 0.0, 9.0]})
    out = cluster_summary(data, [2, 2, 0, 2])
    assert out.index.tolist() == [0, 2]
    assert out["events"].tolist() == [1, 3]
    np.testing.assert_allclose(out["proportion"], [0.25, 0.75])
    np.testing.assert_allclose(out["CD4"], [10.0, 2.0])
    np.testing.assert_allclose(out["CD8"], [0.0, 7.0])
    np.testing.assert_allclose(cluster_summary(data, [2, 2, 0, 2], statistic="mean")["CD8"], [0.0, 7.0])
    with pytest.raises(ValueError, match="labels has 3 entries but the data have 4"):
        cluster_summary(data, [0, 1, 2])
    with pytest.raises(ValueError, match="statistic must be one of"):
        cluster_summary(data, [0, 0, 1, 1], statistic="mode")
    with pytest.raises(ValueError, match="data must be finite"):
        cluster_summary(data.assign(CD4=[1.0, np.nan, 2.0, 3.0]), [0, 0, 1, 1])
    with pytest.raises(TypeError, match=r"\['name'\] are not numeric"):
        cluster_summary(data.assign(name=list("abcd")), [0, 0, 1, 1])
    arr = cluster_summary(data.to_numpy(), [0, 0, 1, 1])
    assert list(arr.columns) == ["events", "proportion", "x0", "x1"]


def test_sample_proportions_rows_sum_to_one():
    out = sample_proportions([0, 1, 1, 2, 2, 2], ["b", "b", "a", "a", "a", "a"])
    assert out.index.tolist() == ["a", "b"]
    np.testing.assert_allclose(out.loc["a"].to_numpy(), [0.0, 0.25, 0.75])
    np.testing.assert_allclose(out.loc["b"].to_numpy(), [0.5, 0.5, 0.0])
    with pytest.raises(ValueError, match="missing values"):
        sample_proportions([0, 1], ["a", None])
    with pytest.raises(ValueError, match="labels has 3 entries but the data have 2"):
        sample_proportions([0, 1, 1], ["a", "b"])


def test_plots_draw_every_cluster_and_refuse_unknown_markers():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = pd.DataFrame({"CD4": np.arange(30.0), "CD8": np.arange(30.0)[::-1]})
    labels = np.repeat([0, 1, 2], 10)
    ax = plot_biaxial(data, labels, "CD4", "CD8", max_points=12, seed=0)
    drawn = sum(len(c.get_offsets()) for c in ax.collections)
    assert drawn == 12 and len(ax.collections) == 3
    with pytest.raises(ValueError, match="'CD3' is not a column of data"):
        plot_biaxial(data, labels, "CD3", "CD8")
    props = sample_proportions(labels, np.tile(["s1", "s2"], 15))
    ax = plot_sample_proportions(props)
    heights = np.array([p.get_height() for p in ax.patches]).reshape(3, 2)
    np.testing.assert_allclose(heights.sum(0), [1.0, 1.0])
    plt.close("all")


def test_label_draws_of_an_hdp_fit_use_each_samples_weights():
    from hphawkes_py.mixture import HDPGaussianMixture

    rng = np.random.default_rng(2)
    # sample 0: events near 0 and 8; sample 1: only near 8
    s0 = np.vstack([rng.normal(0, 1, (40, 2)), rng.normal(8, 1, (20, 2))])
    s1 = rng.normal(8, 1, (50, 2))
    fit = HDPGaussianMixture(5, n_iter=20, burn_in=20, seed=1, progress=False, backend="cpu").fit([s0, s1])
    Z = sample_label_draws(fit, [s0, s1], n_draws=10, seed=0)
    assert Z.shape == (10, 110)
    est = point_partition(Z, seed=0)
    assert est.n_clusters == 2
    assert len(set(est.labels[:40])) == 1 and len(set(est.labels[40:])) == 1
    assert est.labels[0] != est.labels[40]
    # one sample with group=: its events labelled with that sample's weights
    one = sample_label_draws(fit, s1, n_draws=10, group=1, seed=0)
    assert one.shape == (10, 50)
    assert binder_loss(est.labels[60:], one) < 0.05 * 50 * 49 / 2
    with pytest.raises(ValueError, match="needs group="):
        sample_label_draws(fit, s1)
    with pytest.raises(ValueError, match="group must be <= 1"):
        sample_label_draws(fit, s1, group=2)
    with pytest.raises(ValueError, match=r"one array per sample of the fit \(2\), got 1"):
        sample_label_draws(fit, [s0])
