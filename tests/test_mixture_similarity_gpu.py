"""Posterior similarity on a CUDA device (emulator; a real GPU when usable) against the CPU engine
and a NumPy reference: integer counts, so equal bit for bit, in whole and in row blocks."""
from __future__ import annotations

import numpy as np
import pytest

from hphawkes_py.mixture import posterior_similarity, posterior_similarity_blocks, sample_label_draws
from hphawkes_py.mixture.similarity import GpuSimilarity, _cpu_counts
from tests.engines import CUDA_ENGINES


def numpy_psm(Z):
    Z = np.asarray(Z)
    return (Z[:, :, None] == Z[:, None, :]).sum(0) / Z.shape[0]


def draws(S=17, n=131, L=6, seed=0):
    rng = np.random.default_rng(seed)
    # labels that are not 0..L-1 and clusters of unequal sizes, as a sampler gives them
    return rng.choice(np.array([3, 7, 11, 40, 41, 99])[:L], size=(S, n), p=np.linspace(1, 3, L) / np.linspace(1, 3, L).sum())


@pytest.mark.parametrize("backend", CUDA_ENGINES)
@pytest.mark.parametrize("block_rows", [1, 40, 131, 500])
def test_device_matrix_equals_cpu_and_numpy(backend, block_rows):
    Z = draws()
    ref = numpy_psm(Z)
    cpu = posterior_similarity(Z, backend="cpu")
    dev = posterior_similarity(Z, backend=backend, block_rows=block_rows)
    np.testing.assert_array_equal(cpu, ref)
    np.testing.assert_array_equal(dev, cpu)
    assert dev.dtype == np.float64 and dev.shape == (131, 131)


@pytest.mark.parametrize("backend", ["cpu", *CUDA_ENGINES])
def test_blocks_stitch_to_the_matrix_and_subsample(backend):
    Z = draws(S=9, n=200, seed=3)
    rng = np.random.default_rng(4)
    idx = rng.choice(200, 73, replace=False)
    ref = numpy_psm(Z[:, idx])
    starts, rows = [], []
    for start, block in posterior_similarity_blocks(Z, block_rows=30, index=idx, backend=backend):
        starts.append(start)
        rows.append(block)
    assert starts == [0, 30, 60] and [b.shape for b in rows] == [(30, 73), (30, 73), (13, 73)]
    np.testing.assert_array_equal(np.concatenate(rows), ref)
    np.testing.assert_array_equal(posterior_similarity(Z, index=idx, backend=backend), ref)


@pytest.mark.parametrize("backend", CUDA_ENGINES)
def test_kernel_counts_directly(backend):
    from hphawkes_py._backend import get_device

    Z = draws(S=5, n=64, seed=7).astype(np.int32)
    g = GpuSimilarity(get_device(backend), Z)
    for r0, R in [(0, 64), (10, 3), (63, 1)]:
        c = g.counts(r0, R)
        assert c.dtype == np.int32
        np.testing.assert_array_equal(c, _cpu_counts(Z, r0, R))
        np.testing.assert_array_equal(c, (Z[:, r0:r0 + R, None] == Z[:, None, :]).sum(0))


@pytest.mark.parametrize("backend", CUDA_ENGINES)
def test_label_draws_of_a_fitted_mixture(backend):
    import hphawkes_py as hp

    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(size=(60, 2)), rng.normal(size=(60, 2)) + 5.0])
    model = hp.mixture.TDPGaussianMixture(4, n_iter=20, burn_in=20, seed=0, progress=False).fit(X)
    Z = sample_label_draws(model, X, seed=1)
    psm = posterior_similarity(Z, backend=backend, block_rows=50)
    np.testing.assert_array_equal(psm, posterior_similarity(Z, backend="cpu"))
    # two well-separated groups: pairs across them rarely share a cluster, pairs within nearly always
    assert psm[:60, 60:].mean() < 0.02
    assert psm[:60, :60].mean() > 0.9


def test_refusals():
    Z = draws(S=3, n=10)
    with pytest.raises(ValueError, match="block_rows must be >= 1"):
        posterior_similarity_blocks(Z, block_rows=-3)  # refused at the call, before any block
    for fn in (posterior_similarity, lambda *a, **k: list(posterior_similarity_blocks(*a, **k))):
        with pytest.raises(ValueError, match=r"backend must be one of .*got 'tpu'"):
            fn(Z, backend="tpu")
        with pytest.raises(ValueError, match="backend must be one of"):
            fn(Z, backend=3)
        with pytest.raises(ValueError, match="block_rows must be >= 1"):
            fn(Z, block_rows=0)
        with pytest.raises(TypeError, match="block_rows must be an integer"):
            fn(Z, block_rows=2.5)
        with pytest.raises(TypeError, match="index must be a non-empty 1-D array"):
            fn(Z, index=[0.5, 1.5])
        with pytest.raises(ValueError, match=r"index must lie in \[0, 10\)"):
            fn(Z, index=[0, 10])
        with pytest.raises(ValueError, match="index must not repeat"):
            fn(Z, index=[1, 1])
        with pytest.raises(ValueError, match="must be 2-dimensional"):
            fn(Z[0])
        with pytest.raises(TypeError, match="integer cluster labels"):
            fn(Z.astype(str))
