"""Tests of hp.scan (Bernoulli spatial scan statistic): kernels vs the NumPy reference on the
CPU engine and on the CUDA emulator, SaTScan's published results, statistical behaviour,
SaTScan file reading, the CLI and bad input."""
from __future__ import annotations

import concurrent.futures as cf
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import hphawkes_py as hp
from hphawkes_py.scan import engine as scan_engine
from hphawkes_py.scan import windows as scan_windows
from hphawkes_py.scan.engine import make_engine
from hphawkes_py.scan.locations import make_centres
from hphawkes_py.scan.monte_carlo import gumbel_p_values

sys.path.insert(0, str(Path(__file__).parent))
import naive_scan  # noqa: E402

from hphawkes_py import datasets  # noqa: E402

SAT = datasets.satscan_sample_path


from engines import CUDA_ENGINES, ENGINES  # noqa: E402


def _small_problem(seed, n=28, integer_coords=True):
    """Small data with distance ties (integer coordinates) and multi-person locations."""
    rng = np.random.default_rng(seed)
    if integer_coords:
        coords = np.unique(rng.integers(0, 7, size=(n, 2)), axis=0).astype(float)
    else:
        coords = rng.uniform(0, 10, size=(n, 2))
    L = len(coords)
    pop = rng.integers(1, 6, size=L)
    cases = rng.binomial(pop, 0.3)
    cases[0] = max(cases[0], 1)
    cases[1] = min(cases[1], pop[1] - 1) if pop[1] > 1 else 0
    controls = pop - cases
    if controls.sum() == 0:
        controls[0] += 1
    return coords, cases.astype(np.int64), controls.astype(np.int64)


def _engine(coords, cases, controls, centres, max_population, direction, backend):
    pop = cases + controls
    N = int(pop.sum())
    C = int(cases.sum())
    windows = scan_windows.build_windows(centres, coords, pop, max_population * N)
    klogk = scan_engine.klogk_table(N)
    return windows, make_engine(windows, klogk, C, N, direction, backend=hp._backend.resolve_backend(backend))


# ----------------------------------------------------------------- windows and LLR vs reference
@pytest.mark.parametrize("slots", [1, 40, 1 << 20])
def test_windows_do_not_depend_on_chunks_or_threads(monkeypatch, slots):
    """Centres are processed in chunks whose size grows with the thread count: every chunking (one
    centre per chunk, a few, all in one) and 1 or 2 threads give the same arrays, and they are the
    brute-force windows."""
    import numba

    coords, cases, controls = _small_problem(3, n=40)
    pop = cases + controls
    ref = set(naive_scan.all_windows(coords, coords, pop, 0.5))
    got = []
    old = numba.get_num_threads()
    monkeypatch.setattr(scan_windows, "CHUNK_SLOTS", slots)
    try:
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            got.append(scan_windows.build_windows(coords, coords, pop, 0.5 * pop.sum()))
    finally:
        numba.set_num_threads(old)
    for a, b in zip(got[0], got[1]):
        np.testing.assert_array_equal(a, b)
    offsets, neighbors, npop, boundary = got[0]
    ours = {(i, frozenset(neighbors[offsets[i]:j + 1].tolist()))
            for i in range(len(coords)) for j in range(offsets[i], offsets[i + 1]) if boundary[j]}
    assert ours == ref


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("max_population", [0.02, 0.1, 0.3, 0.5])
@pytest.mark.parametrize("pop_kind", ["persons", "expected", "equal"])
def test_windows_from_the_nearest_selected_equal_those_of_full_sorts(monkeypatch, ties, max_population, pop_kind):
    """Only the nearest locations that a window can hold are selected and sorted (rows with a possible tie
    at the cut sorted whole): the windows are those of sorting every row, on a grid (distance ties) and off
    it, persons, expected cases, and equal populations (every window as long as the largest possible one,
    so a tie group across the cut decides which of its locations enters last)."""
    rng = np.random.default_rng(7)
    L = 900
    coords = rng.integers(0, 30, size=(L, 2)).astype(float) if ties else rng.uniform(0, 30, size=(L, 2))
    pop = {"persons": rng.integers(1, 60, size=L), "expected": rng.uniform(0.5, 3.0, size=L),
           "equal": np.full(L, 5)}[pop_kind]
    limit = max_population * pop.sum()
    got = scan_windows.build_windows(coords, coords, pop, limit)
    kmax = int(np.searchsorted(np.cumsum(np.sort(pop)), limit, side="right"))
    assert 0 < kmax <= scan_windows.SELECT_FRACTION * L  # the selection is taken
    monkeypatch.setattr(scan_windows, "SELECT_FRACTION", 0.0)  # every row sorted whole
    ref = scan_windows.build_windows(coords, coords, pop, limit)
    for a, b in zip(got, ref):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("max_population", [0.5, 0.2])
def test_windows_match_bruteforce_sets(seed, max_population):
    coords, cases, controls = _small_problem(seed)
    pop = cases + controls
    windows = scan_windows.build_windows(coords, coords, pop, max_population * pop.sum())
    offsets, neighbors, npop, boundary = windows
    ours = set()
    for i in range(len(coords)):
        for j in range(offsets[i], offsets[i + 1]):
            if boundary[j]:
                members = frozenset(neighbors[offsets[i]:j + 1].tolist())
                ours.add((i, members))
                assert npop[j] == pop[list(members)].sum()
    ref = set(naive_scan.all_windows(coords, coords, pop, max_population))
    assert ours == ref
    assert len(ref) > len(coords)  # windows of more than one location exist


def _cut_order(d, keys, shift, rank):
    """Each row's locations in the order the window cut enters them, every location fitting."""
    n = d.shape[1]
    nb = np.empty(d.shape, dtype=np.int32)
    counts = np.zeros(d.shape[0], dtype=np.int64)
    scan_windows._cut_rows(d, keys, shift, np.ones(n, np.int64), np.int64(n), np.float64(np.inf), rank, counts, nb,
                           np.zeros(0), np.float64(np.inf))
    assert (counts == n).all()
    return nb


def test_window_order_of_distances_equal_in_their_high_bits():
    """The windows' distance order (packed keys: a distance's bits with the column index in the low
    ones, sorted as integers) puts distances that differ only in those low bits, which the keys order
    by index, back in distance order, and exact ties in rank order (SaTScan's tie break)."""

    rng = np.random.default_rng(5)
    n = 700
    shift = (n - 1).bit_length()
    # a few distinct distances a few ulps apart (same high bits), exact ties among them, and others
    base = np.nextafter(2.0, 3.0) + np.arange(6)[:, None] * 1.5
    ulps = rng.integers(0, 40, size=(6, n // 6 + 1))
    d = (base.view(np.int64) + ulps).view(np.float64).ravel()[:n]
    d = np.vstack([rng.permutation(d), rng.permutation(d), rng.uniform(0, 5, n)])
    assert len(np.unique(d[0])) < n and len(np.unique(d[0] // 1e-6)) < len(np.unique(d[0]))
    keys = np.empty(d.shape, dtype=np.uint64)
    scan_windows._pack_keys(d, shift, keys)
    keys.sort(axis=1)
    rank = rng.permutation(n).astype(np.int64)
    nb = _cut_order(d, keys, shift, rank)
    for i in range(d.shape[0]):
        np.testing.assert_array_equal(nb[i], np.lexsort((rank, d[i])))


def test_window_order_of_32_bit_keys():
    """The 32-bit keys (each row's distances scaled to its largest and cut to the bits the column index
    leaves) give the distance order too: runs of equal scaled distances, long here, put back in order,
    exact ties (a row of zeros) in rank order."""
    rng = np.random.default_rng(9)
    n = 3000
    shift = (n - 1).bit_length()
    d = np.vstack([rng.uniform(0, 5, n), rng.uniform(0, 5, n) ** 8, np.round(rng.uniform(0, 3, n), 2),
                   np.zeros(n)])
    keys = np.empty(d.shape, dtype=np.uint32)
    scan_windows._pack_keys32(d, shift, keys)
    keys.sort(axis=1)
    # the skewed row's small distances share their scaled bits: long runs
    assert (np.diff(keys[1].astype(np.int64) >> shift) == 0).sum() > 100
    rank = rng.permutation(n).astype(np.int64)
    nb = _cut_order(d, keys, shift, rank)
    for i in range(d.shape[0]):
        np.testing.assert_array_equal(nb[i], np.lexsort((rank, d[i])))


@pytest.mark.parametrize("ties", [False, True])
def test_windows_with_32_bit_keys_equal_those_with_64_bit_keys(monkeypatch, ties):
    rng = np.random.default_rng(12)
    L = 1500
    coords = rng.integers(0, 40, size=(L, 2)).astype(float) if ties else rng.uniform(0, 40, size=(L, 2)) ** 3
    pop = rng.integers(1, 60, size=L)
    narrow = scan_windows.build_windows(coords, coords, pop, 0.3 * pop.sum())
    monkeypatch.setattr(scan_windows, "SHIFT32_MAX", 0)
    wide = scan_windows.build_windows(coords, coords, pop, 0.3 * pop.sum())
    for a, b in zip(narrow, wide):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("backend", ENGINES)
@pytest.mark.parametrize("direction", ["high", "low", "both"])
def test_best_llr_per_centre_matches_reference(backend, direction):
    coords, cases, controls = _small_problem(3)
    windows, eng = _engine(coords, cases, controls, coords, 0.5, direction, backend)
    best, entry = eng.best_per_centre(cases.astype(np.int32)[:, None], want_arg=True)
    ref_best, ref_sets, ref_max = naive_scan.scan(coords, coords, cases, controls, 0.5, direction)
    np.testing.assert_allclose(best[:, 0], ref_best, rtol=1e-10, atol=1e-12)
    assert ref_max > 0
    offsets, neighbors = windows[0], windows[1]
    for i in range(len(coords)):
        if ref_best[i] > 0:
            assert frozenset(neighbors[offsets[i]:entry[i, 0] + 1].tolist()) == ref_sets[i]
        else:
            assert entry[i, 0] == -1


@pytest.mark.parametrize("backend", ENGINES)
@pytest.mark.parametrize("direction", ["high", "low", "both"])
def test_replicate_maxima_match_reference(backend, direction):
    """Many case vectors at once (columns = replicates) against the reference, one by one
    (the CPU engine's max_llr prunes windows: it must equal the exhaustive maxima exactly)."""
    coords, cases, controls = _small_problem(5, integer_coords=False)
    pop = cases + controls
    _, eng = _engine(coords, cases, controls, coords, 0.3, direction, backend)
    rng = np.random.default_rng(7)
    R = 37  # not a multiple of the block size / vector width
    mat = np.stack([rng.multivariate_hypergeometric(pop, int(cases.sum())) for _ in range(R)], axis=1)
    got = eng.max_llr(mat.astype(np.int32))
    ref = [naive_scan.scan(coords, coords, mat[:, r], pop - mat[:, r], 0.3, direction)[2] for r in range(R)]
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12)
    if backend == "cpu":
        np.testing.assert_array_equal(got, eng.max_llr_exhaustive(mat.astype(np.int32)))


def test_pruned_maxima_equal_exhaustive_on_ny():
    """Pruning is exact on large populations too (NY: N = 1,057,673, table of 1e6 entries)."""
    ny = datasets.load_ny_leukemia()
    cases = np.floor(ny.cases.to_numpy()).astype(np.int64)
    pop = ny.population.to_numpy().astype(np.int64)
    xy = ny[["x", "y"]].to_numpy()
    rng = np.random.default_rng(1)
    mat = np.stack([rng.multivariate_hypergeometric(pop, int(cases.sum()), method="marginals")
                    for _ in range(64)], axis=1).astype(np.int32)
    for direction in ("high", "both"):
        _, eng = _engine(xy, cases, pop - cases, xy, 0.5, direction, "cpu")
        np.testing.assert_array_equal(eng.max_llr(mat), eng.max_llr_exhaustive(mat))


@pytest.mark.parametrize("min_cases", [2, 5])
@pytest.mark.parametrize("direction", ["high", "both"])
def test_pruned_maxima_with_min_cases_equal_exhaustive(min_cases, direction):
    """SaTScan's minimum number of cases in high-rate clusters keeps the pruned kernel exact
    (high-rate count thresholds raised to min_cases), on sparse data where one-case windows win."""
    rng = np.random.default_rng(3)
    L = 300
    xy = rng.uniform(0, 10, size=(L, 2))
    pop = rng.integers(1, 4, size=L)
    cases = rng.binomial(pop, 0.05)
    mat = np.stack([rng.multivariate_hypergeometric(pop, int(cases.sum())) for _ in range(40)], axis=1)
    mat = mat.astype(np.int32)
    N, C = int(pop.sum()), int(cases.sum())
    windows = scan_windows.build_windows(xy, xy, pop, 0.5 * N)
    eng = make_engine(windows, scan_engine.klogk_table(N), C, N, direction, backend="cpu", min_cases=min_cases)
    got = eng.max_llr(mat)
    np.testing.assert_array_equal(got, eng.max_llr_exhaustive(mat))
    free = make_engine(windows, scan_engine.klogk_table(N), C, N, direction, backend="cpu").max_llr(mat)
    assert (got <= free).all()
    if direction == "high":
        assert (got < free).any()  # the restriction bites on this data


@pytest.mark.parametrize("proportion,max_pop,ties", [(0.1, 19, False), (0.6, 19, True), (0.01, 40, False),
                                                      (0.5, 300, True)])
@pytest.mark.parametrize("direction", ["high", "low", "both"])
def test_pruned_rounds_equal_exhaustive(proportion, max_pop, ties, direction):
    """The pruned maxima (pilot, rounds of centres with rising thresholds, column sub-batches, 8-bit rows
    of cases when every location's count fits, 16-bit otherwise) equal the exhaustive ones bit for bit:
    high and low case proportions, distance ties (integer coordinates), more replicates than a
    sub-batch and not a multiple of the group size, with and without a minimum of cases."""
    rng = np.random.default_rng(int(proportion * 100) + max_pop)
    L = 400
    xy = rng.integers(0, 15, size=(L, 2)).astype(float) if ties else rng.uniform(0, 20, size=(L, 2))
    pop = rng.integers(1, max_pop + 1, size=L)
    C = max(2, int(rng.binomial(pop, proportion).sum()))
    N = int(pop.sum())
    R = 301
    mat = np.stack([rng.multivariate_hypergeometric(pop, C) for _ in range(R)], axis=1).astype(np.int32)
    windows = scan_windows.build_windows(xy, xy, pop, 0.5 * N)
    for min_cases in (0, 2):
        eng = make_engine(windows, scan_engine.klogk_table(N), C, N, direction, backend="cpu", min_cases=min_cases)
        np.testing.assert_array_equal(eng.max_llr(mat), eng.max_llr_exhaustive(mat))


@pytest.mark.parametrize("threads", [1, 2, 16])
@pytest.mark.parametrize("per_thread", [None, 2])
@pytest.mark.parametrize("R", [1, 31, 301, 999])
def test_pruned_work_items_cover_every_column_and_centre_once(monkeypatch, R, per_thread, threads):
    """The work items of a pruned round (column sub-batches x parts of the centres) cover every replicate
    and every centre exactly once, whatever the threads, with and without the per-thread limit."""
    from hphawkes_py.scan import cpu_pruning

    monkeypatch.setattr(cpu_pruning.numba, "get_num_threads", lambda: threads)
    nc = 97
    for sub_batch in (32, 96, 1024):
        step, n_sub, n_parts = cpu_pruning._work_items(R, sub_batch, per_thread)
        assert step % cpu_pruning.GROUP == 0 and step <= max(sub_batch, cpu_pruning.GROUP)
        seen = np.zeros((R, nc), dtype=int)
        for item in range(n_sub * n_parts):
            part, s0, W, first, last = cpu_pruning._work_item.py_func(item, n_parts, step, R, nc)
            seen[s0:s0 + W, first:last] += 1
        assert (seen == 1).all()


@pytest.mark.parametrize("sub_batch", [32, 96, 128, 1024])
@pytest.mark.parametrize("direction", ["high", "both"])
@pytest.mark.parametrize("max_count", [15, 16])
def test_pruned_maxima_whatever_the_column_sub_batches(monkeypatch, sub_batch, direction, max_count):
    """Items of 32, 96, 128 and 1,024 columns (several sub-batches, the last one partial, and one) give the
    exhaustive maxima bit for bit, with rows of counts packed two to a byte (every count at most 15, items
    of a multiple of 64 columns) and unpacked (a count of 16, or items of 32 or 96 columns)."""
    from hphawkes_py.scan import cpu

    rng = np.random.default_rng(12)
    L = 300
    xy = rng.uniform(0, 20, size=(L, 2))
    pop = rng.integers(1, 20, size=L)
    pop[7] = 40
    C, N = int(rng.binomial(pop, 0.2).sum()), int(pop.sum())
    mat = np.stack([rng.multivariate_hypergeometric(pop, C) for _ in range(301)], axis=1).astype(np.int32)
    mat = np.minimum(mat, 15)
    mat[7, 5] = max_count  # the largest count: packed up to 15
    windows = scan_windows.build_windows(xy, xy, pop, 0.5 * N)
    eng = make_engine(windows, scan_engine.klogk_table(N), C, N, direction, backend="cpu", min_cases=2)
    monkeypatch.setattr(cpu, "SUB_BATCH", sub_batch)
    packs = []
    pack = cpu._pack_nibbles
    monkeypatch.setattr(cpu, "_pack_nibbles", lambda *a: packs.append(1) or pack(*a))
    np.testing.assert_array_equal(eng.max_llr(mat), eng.max_llr_exhaustive(mat))
    assert bool(packs) == (max_count <= 15 and sub_batch % 64 == 0)


@pytest.mark.parametrize("head_rate", [0, 1, 8, 10**6])
@pytest.mark.parametrize("direction", ["high", "low", "both"])
@pytest.mark.parametrize("model", ["bernoulli", "poisson"])
@pytest.mark.parametrize("block", [3, 8])
def test_pruned_maxima_whatever_the_entry_by_entry_head(monkeypatch, head_rate, direction, model, block):
    """The smallest windows tested entry by entry before the blocks (``HEAD_RATE``: none, while one group in 1
    or 8 reaches its thresholds, or while any does) give the exhaustive maxima bit for bit, in sub-batches of
    64 columns (groups other than a sub-batch's first), Bernoulli and Poisson (the shared kernel), in spans of
    8 entries and of 3 (a walk's last span partial)."""
    from hphawkes_py.scan import cpu

    rng = np.random.default_rng(21)
    L = 300
    xy = rng.uniform(0, 20, size=(L, 2))
    pop = rng.integers(150, 251, size=L)
    C, N = int(rng.binomial(pop, 0.1).sum()), int(pop.sum())
    mat = np.stack([rng.multivariate_hypergeometric(pop, C) for _ in range(301)], axis=1).astype(np.int32)
    monkeypatch.setattr(cpu, "SUB_BATCH", 64)
    monkeypatch.setattr(cpu, "HEAD_RATE", head_rate)
    monkeypatch.setattr(cpu, "BLOCK", block)
    monkeypatch.setattr(cpu, "POISSON_SHARED_ENTRIES", 0)
    if model == "bernoulli":
        windows = scan_windows.build_windows(xy, xy, pop, 0.5 * N)
        eng = make_engine(windows, scan_engine.klogk_table(N), C, N, direction, backend="cpu", min_cases=2)
    else:
        expected = pop * (C / N)
        windows = scan_windows.build_windows(xy, xy, expected, 0.5 * C)
        wexp = scan_windows.cumulative_expected(windows, expected)
        eng = make_engine((windows[0], windows[1], wexp, windows[3]), scan_engine.klogk_table(C), C, C, direction,
                          backend="cpu", model="poisson", min_cases=2)
    np.testing.assert_array_equal(eng.max_llr(mat), eng.max_llr_exhaustive(mat))


@pytest.mark.parametrize("backend", CUDA_ENGINES)
def test_cpu_and_cuda_engine_identical_null_distribution(backend):
    coords, cases, controls = _small_problem(11, n=40, integer_coords=False)
    kw = dict(max_population=0.5, n_replicates=300, seed=42, progress=False, direction="both")
    a = hp.scan.bernoulli(coords, cases, controls, backend="cpu", **kw)
    b = hp.scan.bernoulli(coords, cases, controls, backend=backend, **kw)
    assert b.backend == backend
    np.testing.assert_array_equal(a.null_llr, b.null_llr)
    pd.testing.assert_frame_equal(a.clusters, b.clusters)


@pytest.mark.parametrize("backend", CUDA_ENGINES)
def test_grid_centres_cpu_cuda_reference(backend):
    coords, cases, controls = _small_problem(2, integer_coords=False)
    centres, centre_loc = make_centres(coords, 2.5)
    assert (centre_loc == -1).all() and len(centres) == 16
    ref_best, _, _ = naive_scan.scan(centres, coords, cases, controls, 0.5, "high")
    for b in ("cpu", backend):
        _, eng = _engine(coords, cases, controls, centres, 0.5, "high", b)
        best, _ = eng.best_per_centre(cases.astype(np.int32)[:, None], want_arg=True)
        np.testing.assert_allclose(best[:, 0], ref_best, rtol=1e-10, atol=1e-12)
    res = hp.scan.bernoulli(coords, cases, controls, grid_cell=2.5, n_replicates=19, seed=0, progress=False,
                            backend="cpu")
    assert res.n_centres == 16
    assert res.clusters.log_likelihood_ratio.iloc[0] == pytest.approx(ref_best.max(), rel=1e-10)
    assert res.clusters.center.iloc[0] == -1


# ----------------------------------------------------------------- statistical behaviour
def test_invariant_to_location_order():
    coords, cases, controls = _small_problem(8, n=60, integer_coords=False)
    ids = np.arange(len(coords)) + 100
    a = hp.scan.bernoulli(coords, cases, controls, n_replicates=9, seed=1, location_ids=ids, progress=False,
                          backend="cpu")
    perm = np.random.default_rng(0).permutation(len(coords))
    b = hp.scan.bernoulli(coords[perm], cases[perm], controls[perm], n_replicates=9, seed=1,
                          location_ids=ids[perm], progress=False, backend="cpu")
    np.testing.assert_allclose(a.clusters.log_likelihood_ratio, b.clusters.log_likelihood_ratio, rtol=1e-12)
    assert a.clusters.log_likelihood_ratio.iloc[0] > a.clusters.log_likelihood_ratio.iloc[1]
    assert set(a.clusters.location_ids.iloc[0]) == set(b.clusters.location_ids.iloc[0])
    # equal LLRs are listed in input order (as SaTScan): compare the clusters as sets
    def key(res):
        return sorted((round(r.log_likelihood_ratio, 9), tuple(sorted(r.location_ids))) for r in res.clusters.itertuples())
    assert key(a) == key(b)


def test_planted_cluster_is_found():
    rng = np.random.default_rng(3)
    coords = rng.uniform(0, 100, size=(400, 2))
    inside = np.hypot(coords[:, 0] - 30, coords[:, 1] - 60) < 12
    assert inside.sum() > 10
    cases = rng.binomial(1, np.where(inside, 0.7, 0.1))
    res = hp.scan.bernoulli(coords, cases, 1 - cases, n_replicates=199, seed=4, progress=False, backend="cpu")
    top = res.clusters.iloc[0]
    found = np.zeros(len(coords), bool)
    found[top.location_ids] = True
    precision = (found & inside).sum() / found.sum()
    recall_cases = (found & inside & (cases == 1)).sum() / (inside & (cases == 1)).sum()
    assert precision > 0.8 and recall_cases > 0.6, (precision, recall_cases)
    assert top.p_value == pytest.approx(1 / 200)
    assert top.gumbel_p_value < 1e-3


def test_p_values_roughly_uniform_under_null():
    """Under the null the Monte Carlo test is exact: p-values are uniform (up to the
    discreteness of the LLR, made negligible here by multi-person locations)."""
    from scipy import stats

    rng = np.random.default_rng(12)
    ps = []
    for k in range(50):
        coords = rng.uniform(0, 1, size=(30, 2))
        pop = rng.integers(5, 40, size=30)
        cases = rng.binomial(pop, 0.2)
        res = hp.scan.bernoulli(coords, cases, pop - cases, max_population=0.5, n_replicates=99, seed=k,
                                progress=False, backend="cpu")
        ps.append(res.clusters.p_value.iloc[0])
    ps = np.array(ps)
    assert stats.kstest(ps, "uniform").pvalue > 0.001
    assert 0.3 < ps.mean() < 0.7


@pytest.mark.parametrize("n_cases", [20, 60])  # 60 > N/2: the complement is drawn
def test_null_draws_are_multivariate_hypergeometric(n_cases):
    from hphawkes_py._parallel import spawn_seeds
    from hphawkes_py.scan.null_draws import draw_null_cases

    pop = np.array([3, 10, 1, 50, 7, 0])
    N = pop.sum()
    M = draw_null_cases(pop, n_cases, spawn_seeds(0, 20000))
    assert M.dtype == np.int32 and M.shape == (6, 20000)
    assert (M.sum(axis=0) == n_cases).all() and (M <= pop[:, None]).all() and (M >= 0).all()
    p = pop / N
    mean = n_cases * p
    var = n_cases * p * (1 - p) * (N - n_cases) / (N - 1)
    se = np.sqrt(var / 20000)
    assert np.all(np.abs(M.mean(axis=1) - mean) <= 5 * se + 1e-12)
    np.testing.assert_allclose(M.var(axis=1), var, rtol=0.05, atol=1e-12)
    # per-replicate seeds: the same replicate whatever the batch
    np.testing.assert_array_equal(M[:, :100], draw_null_cases(pop, n_cases, spawn_seeds(0, 20000)[:100]))


@pytest.mark.parametrize("sizes", [(0, 3), (1, 70), (60, 200), (0, 1000)])
def test_null_draws_bit_map_and_sorted_positions_agree(sizes):
    """The bit-map draw (counts as each location's set bits, ranges within a word, across words and
    empty) and the sort-and-merge draw keep the same subset of persons, replicate by replicate."""
    from hphawkes_py.scan.null_draws import draw_cases

    rng = np.random.default_rng(sizes[1])
    seeds = rng.integers(0, 2**32, 200, dtype=np.uint64).astype(np.uint32)
    pop = rng.integers(*sizes, size=97)
    N = int(pop.sum())
    for C in (1, N // 10, N // 2, N // 2 + 1, N - 1):
        bits = draw_cases(pop, C, seeds, method="bits")
        np.testing.assert_array_equal(bits, draw_cases(pop, C, seeds, method="sort"))
        assert (bits.sum(axis=0) == C).all() and (bits <= pop[:, None]).all() and (bits >= 0).all()
        assert not (bits == bits[:, :1]).all()  # replicates differ
    with pytest.raises(ValueError, match="method"):
        draw_cases(pop, 3, seeds, method="heap")


def test_gumbel_p_value_matches_true_tail():
    rng = np.random.default_rng(0)
    mu, beta = 5.0, 1.5
    null = rng.gumbel(mu, beta, size=20000)
    x = np.array([6.0, 9.0, 12.0])
    true = -np.expm1(-np.exp(-(x - mu) / beta))
    np.testing.assert_allclose(gumbel_p_values(x, null), true, rtol=0.05)


def test_results_independent_of_executor_and_seeded():
    coords, cases, controls = _small_problem(4, n=40, integer_coords=False)
    # here one batch of 600 replicates, on the executor 3 batches of 256 (see model._replicate_batch)
    kw = dict(n_replicates=600, seed=123, progress=False, backend="cpu")
    a = hp.scan.bernoulli(coords, cases, controls, **kw)
    with cf.ThreadPoolExecutor(2) as ex:
        b = hp.scan.bernoulli(coords, cases, controls, executor=ex, **kw)
    np.testing.assert_array_equal(a.null_llr, b.null_llr)
    c = hp.scan.bernoulli(coords, cases, controls, **{**kw, "seed": 124})
    assert not np.array_equal(a.null_llr, c.null_llr)
    # replicate r does not depend on how many replicates were asked for (per-replicate seeds)
    d = hp.scan.bernoulli(coords, cases, controls, **{**kw, "n_replicates": 300})
    np.testing.assert_array_equal(a.null_llr[:300], d.null_llr)
    assert a.null_llr.shape == (600,)


def test_duplicate_coordinates_are_merged_and_reported():
    coords, cases, controls = _small_problem(6, n=30, integer_coords=False)
    dup = np.vstack([coords, coords[:3]])
    ca = np.concatenate([cases, [1, 0, 2]])
    co = np.concatenate([controls, [0, 1, 1]])
    with pytest.warns(UserWarning, match="3 input row"):
        a = hp.scan.bernoulli(dup, ca, co, n_replicates=9, seed=0, progress=False, backend="cpu")
    merged_ca = cases.copy()
    merged_co = controls.copy()
    merged_ca[:3] += [1, 0, 2]
    merged_co[:3] += [0, 1, 1]
    b = hp.scan.bernoulli(coords, merged_ca, merged_co, n_replicates=9, seed=0, progress=False, backend="cpu")
    assert a.n_merged == 3 and a.n_locations == len(coords)
    np.testing.assert_allclose(a.clusters.log_likelihood_ratio, b.clusters.log_likelihood_ratio, rtol=1e-12)
    np.testing.assert_array_equal(a.null_llr, b.null_llr)
    # merged input rows are all listed
    for ids_a, ids_b in zip(a.clusters.location_ids, b.clusters.location_ids):
        extra = {len(coords) + k for k in range(3) if k in ids_b}
        assert set(ids_a) == set(ids_b) | extra


# ----------------------------------------------------------------- published SaTScan results
def _grave():
    g = datasets.load_grave()
    return g[["x", "y"]].to_numpy(float), g["case"].to_numpy(), 1 - g["case"].to_numpy(), g["id"].to_numpy()


def test_grave_matches_satscan():
    """SaTScan v9.3.1, purely spatial Bernoulli, high rates, 50% maximum, 999 replications,
    on the grave data (smacpod, github jfrench/smacpod tests/satscangraveout.txt @0aad9ad):
    1. ids 126,124,125,132,120,113,140,141,112,41,136,30,133,108,31,143,110,139,75;
       (10324,4389) / 1359.71; population 19; cases 11; expected 3.99; O/E 2.76; RR 3.78;
       LLR 7.419340; p 0.050
    2. ids 66,89,71; (6934,6918) / 362.46; 3; 3; 0.63; 4.77; 5.19; LLR 4.808517; p 0.665
    3. ids 77,78; (5305,6065) / 1.00; 2; 2; 0.42; 4.77; 5.04; LLR 3.177442; p 0.997"""
    coords, cases, controls, ids = _grave()
    res = hp.scan.bernoulli(coords, cases, controls, max_population=0.5, n_replicates=999, seed=2015,
                            location_ids=ids, progress=False, backend="cpu")
    cl = res.clusters
    published = [
        ([126, 124, 125, 132, 120, 113, 140, 141, 112, 41, 136, 30, 133, 108, 31, 143, 110, 139, 75],
         (10324, 4389), 1359.71, 19, 11, 3.99, 2.76, 3.78, 7.419340),
        ([66, 89, 71], (6934, 6918), 362.46, 3, 3, 0.63, 4.77, 5.19, 4.808517),
        ([77, 78], (5305, 6065), 1.00, 2, 2, 0.42, 4.77, 5.04, 3.177442),
    ]
    for k, (loc_ids, xy, radius, popn, c, exp, oe, rr, llr) in enumerate(published):
        row = cl.iloc[k]
        assert list(row.location_ids) == loc_ids  # same order as SaTScan (nearest first)
        assert (row.x, row.y) == xy
        assert round(row.radius, 2) == radius
        assert (row.population, row.cases) == (popn, c)
        assert round(row.expected, 2) == exp
        assert round(row.observed_over_expected, 2) == oe
        assert round(row.relative_risk, 2) == rr
        assert round(row.log_likelihood_ratio, 6) == llr
    # Monte Carlo p-values: SaTScan's 0.050 and ours both estimate the same tail probability
    # (binomial sd ~0.007 at 999 replicates): allow +-4 sd around the published value
    assert len(cl) == 3  # SaTScan lists exactly these 3 (the others have p = 1)
    assert abs(cl.p_value.iloc[0] - 0.050) < 0.03
    assert abs(cl.p_value.iloc[1] - 0.665) < 0.06
    assert cl.p_value.iloc[2] > 0.97


def test_ny_leukemia_windows_match_satscan():
    """smerc tests/satscan_ny_out.txt (github jfrench/smerc @a4e1844): SaTScan v9.6, purely
    spatial, circular, 10% maximum, coordinates = latitude/longitude read as Cartesian,
    cases = floor(cases). That run used the discrete Poisson model, whose LLR differs from the
    Bernoulli one by O(C/N) = 5e-4 relative; the windows searched (same centres, same
    population limit) and therefore the reported clusters are the same. Published clusters:
    locations, radius, population, cases, LLR (Poisson)."""
    ny = datasets.load_ny_leukemia()
    cases = np.floor(ny.cases.to_numpy()).astype(int)
    res = hp.scan.bernoulli(ny[["latitude", "longitude"]].to_numpy(), cases, ny.population.to_numpy() - cases,
                            max_population=0.1, n_replicates=999, seed=9, location_ids=ny.id.to_numpy(),
                            progress=False, backend="cpu")
    published = [
        ([49, 48, 50, 47, 1, 15, 51, 2, 13, 14, 3, 35, 16, 52, 36, 37, 12, 11, 5, 17, 10, 4, 6, 38, 18, 9],
         0.070, 95249, 85, 11.577255),
        ([89, 88, 87, 84, 90, 86, 92, 85], 0.13, 34083, 38, 9.019716),
        ([112, 113, 115, 111, 116, 219, 117, 123, 218, 114, 122, 110, 124, 220, 118, 133, 121, 125, 216, 120,
          134, 217, 126, 139, 215, 132, 141, 140, 127, 142, 138, 131, 119], 0.040, 78280, 64, 6.114140),
        ([62, 64, 67, 65], 0.061, 24571, 25, 4.651839),
        ([46, 45, 41, 54, 44, 43, 53], 0.043, 29782, 28, 4.169203),
        ([266, 281, 267, 265], 0.026, 9840, 12, 3.363518),
        ([166, 159, 167], 0.012, 8839, 11, 3.209485),
    ]
    cl = res.clusters
    for k, (loc_ids, radius, popn, c, llr_poisson) in enumerate(published):
        row = cl.iloc[k]
        assert set(row.location_ids) == set(loc_ids)
        assert row.location_ids[0] == loc_ids[0]  # same centre
        assert round(row.radius, 3 if radius < 0.1 else 2) == radius
        assert (row.population, row.cases) == (popn, c)
        assert row.log_likelihood_ratio == pytest.approx(llr_poisson, rel=2e-3)
    # SaTScan lists 7; the next non-overlapping window (tract 171, LLR 2.62) is listed only
    # when some replicate's maximum falls below it (p < 1), which is a matter of chance
    assert (cl.p_value.iloc[7:] > 0.99).all()
    # SaTScan: p = 0.001 and 0.013 for the first two clusters (999 replications)
    assert cl.p_value.iloc[0] <= 0.01
    assert cl.p_value.iloc[1] < 0.06


# ----------------------------------------------------------------- SaTScan files
def test_read_satscan_grave_matches_csv():
    df = hp.scan.read_satscan(SAT("grave.cas"), SAT("grave.ctl"), geo_file=SAT("grave.geo"))
    g = datasets.load_grave().sort_values("id")
    df = df.sort_values("location_id")
    assert list(df.columns) == ["location_id", "x", "y", "cases", "controls"]
    np.testing.assert_array_equal(df.location_id, g.id)
    np.testing.assert_array_equal(df[["x", "y"]].to_numpy(), g[["x", "y"]].to_numpy())
    np.testing.assert_array_equal(df.cases, g.case)
    np.testing.assert_array_equal(df.controls, 1 - g.case)


def test_read_satscan_nhumberside_and_ny_population():
    df = hp.scan.read_satscan(SAT("NHumberside.cas"), SAT("NHumberside.ctl"),
                              geo_file=SAT("NHumberside.geo"))
    ref = datasets.load_nhumberside()
    m = df.merge(ref, on="location_id", suffixes=("", "_ref"))
    assert len(m) == len(ref) == len(df) == 191
    for col in ("x", "y", "cases", "controls"):
        np.testing.assert_allclose(m[col], m[col + "_ref"])
    ny = hp.scan.read_satscan(SAT("ny_leukemia.cas"), population_file=SAT("ny_leukemia.pop"),
                              geo_file=SAT("ny_leukemia.geo"))
    assert list(ny.columns) == ["location_id", "x", "y", "cases", "controls", "population"]
    assert ny.cases.sum() == 552 and ny.population.sum() == 1057673
    np.testing.assert_array_equal(ny.controls, ny.population - ny.cases)


def test_read_satscan_sums_rows_and_handles_crlf(tmp_path):
    (tmp_path / "a.cas").write_bytes(b"1 2 2000\r\n2 1 2000\r\n1 3 2001\r\n")
    (tmp_path / "a.pop").write_bytes(b"1 2000 10\r\n1 2000 5\r\n2 2000 8\r\n3 2000 4\r\n1 2001 25\r\n")
    (tmp_path / "a.geo").write_bytes(b"1 0 0\r\n2 1.5 0\r\n3 0 2\r\n")
    df = hp.scan.read_satscan(tmp_path / "a.cas", population_file=tmp_path / "a.pop", geo_file=tmp_path / "a.geo")
    assert df.cases.tolist() == [5, 1, 0]
    # id 1: 15 persons in 2000, 25 in 2001 -> averaged over years = 20
    assert df.population.tolist() == [20, 8, 4]
    assert df.controls.tolist() == [15, 7, 4]
    assert df.x.tolist() == [0, 1.5, 0]
    (tmp_path / "b.cas").write_text("9 1\n")
    with pytest.raises(ValueError, match=r"b.cas:1: field 1 \(location id\) .9. is not in the coordinates file"):
        hp.scan.read_satscan(tmp_path / "b.cas", population_file=tmp_path / "a.pop", geo_file=tmp_path / "a.geo")
    with pytest.raises(ValueError, match="control_file"):
        hp.scan.read_satscan(tmp_path / "a.cas", geo_file=tmp_path / "a.geo")


# ----------------------------------------------------------------- CLI and outputs
def test_cli_on_satscan_files_and_csv(tmp_path):
    from hphawkes_py.cli import main

    out = tmp_path / "c.csv"
    png = tmp_path / "c.png"
    rc = main(["scan", "--cas", str(SAT("grave.cas")), "--ctl", str(SAT("grave.ctl")),
               "--geo", str(SAT("grave.geo")), "--replicates", "99", "--seed", "1", "--backend", "cpu",
               "-o", str(out), "--png", str(png), "--quiet"])
    assert rc == 0 and png.stat().st_size > 1000
    t = pd.read_csv(out)
    assert t.log_likelihood_ratio.iloc[0] == pytest.approx(7.419340, abs=1e-6)
    assert t.location_ids.iloc[0].split()[:3] == ["126", "124", "125"]
    out2 = tmp_path / "d.csv"
    g = datasets.load_grave()
    g["controls"] = 1 - g["case"]
    src = tmp_path / "g.csv"
    g.to_csv(src, index=False)
    rc = main(["scan", str(src), "--cases", "case", "--id", "id", "--replicates", "9", "--seed", "1",
               "--backend", "cpu", "-o", str(out2), "--png", "", "--quiet"])
    assert rc == 0
    t2 = pd.read_csv(out2)
    assert t2.location_ids.iloc[0] == t.location_ids.iloc[0]


def test_cli_reproduce_grave(capsys):
    from hphawkes_py.cli import main

    rc = main(["reproduce", "scan-grave", "--replicates", "99", "--backend", "cpu"])
    out = capsys.readouterr().out
    assert rc == 0 and "clusters match" in out and "7.419340   7.419340" in out


def test_result_outputs(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    coords, cases, controls, ids = _grave()
    res = hp.scan.bernoulli(coords, cases, controls, n_replicates=19, seed=0, location_ids=ids, progress=False,
                            backend="cpu")
    assert res.null_llr.shape == (19,) and res.backend == "cpu"
    assert "LLR 7.419340" in res.summary() and "ScanResult" in repr(res)
    ax = res.plot()
    assert len(ax.patches) == len(res.clusters)
    res.to_csv(tmp_path / "x.csv")
    back = pd.read_csv(tmp_path / "x.csv")
    np.testing.assert_allclose(back.log_likelihood_ratio, res.clusters.log_likelihood_ratio)
    assert res.to_frame() is not res.clusters
    assert res.to_dict()["n_cases"] == 30


# ----------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(cases=[1, -1, 0]), ValueError, "non-negative"),
        (dict(cases=[1, 0.5, 0]), ValueError, "whole numbers"),
        (dict(cases=[0, 0, 0]), ValueError, "at least one case"),
        (dict(controls=[0, 0, 0]), ValueError, "controls"),
        (dict(cases=[1, 0]), ValueError, "same length"),
        (dict(coords=[[0, 0], [1, np.nan], [2, 2]]), ValueError, "finite"),
        (dict(coords=[[0, 0], [1, np.inf], [2, 2]]), ValueError, "finite"),
        (dict(coords=[0, 1, 2]), ValueError, "coords"),
        (dict(max_population=0.0), ValueError, "max_population"),
        (dict(max_population=0.6), ValueError, "max_population"),
        (dict(max_population=float("nan")), ValueError, "max_population"),
        (dict(n_replicates=0), ValueError, "n_replicates"),
        (dict(n_replicates=9.5), TypeError, "n_replicates"),
        (dict(direction="up"), ValueError, "direction"),
        (dict(secondary="gini"), ValueError, "secondary"),
        (dict(grid_cell=-1.0), ValueError, "grid_cell"),
        (dict(backend="tpu"), ValueError, "backend"),
        (dict(location_ids=[1, 2]), ValueError, "location_ids"),
    ],
)
def test_bad_input(kwargs, exc, match):
    base = dict(coords=[[0, 0], [1, 1], [2, 2]], cases=[1, 0, 1], controls=[1, 2, 0], n_replicates=9, progress=False)
    base.update(kwargs)
    with pytest.raises(exc, match=match):
        hp.scan.bernoulli(**base)


def test_cli_reproduce_grave_writes_out_dir_atomically(tmp_path, capsys):
    from hphawkes_py.cli import main

    out = tmp_path / "grave"
    rc = main(["reproduce", "scan-grave", "--replicates", "99", "--backend", "cpu", "--out", str(out)])
    assert rc == 0
    assert sorted(p.name for p in out.iterdir()) == ["clusters.csv", "clusters.png", "comparison.csv", "locations.csv", "summary.txt"]
    comp = pd.read_csv(out / "comparison.csv")
    assert comp.same_locations.all() and np.allclose(comp.llr, comp.llr_published, atol=1e-6)
    # a non-empty folder is refused before any work, and left as it was
    (out / "mine.txt").write_text("keep")
    capsys.readouterr()
    rc = main(["reproduce", "scan-grave", "--replicates", "99", "--backend", "cpu", "--out", str(out)])
    assert rc == 2 and "--overwrite" in capsys.readouterr().err
    assert (out / "mine.txt").read_text() == "keep"
    rc = main(["reproduce", "scan-grave", "--replicates", "99", "--backend", "cpu", "--out", str(out),
               "--overwrite"])
    assert rc == 0 and not (out / "mine.txt").exists() and (out / "clusters.csv").is_file()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary folder left


def test_cli_scan_failing_png_leaves_no_table(tmp_path, capsys, monkeypatch):
    from hphawkes_py.cli import main
    from hphawkes_py.scan import plot as scan_plot

    def broken(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(scan_plot, "plot_clusters", broken)
    out = tmp_path / "c.csv"
    rc = main(["scan", "--cas", str(SAT("grave.cas")), "--ctl", str(SAT("grave.ctl")), "--geo", str(SAT("grave.geo")),
               "--replicates", "9", "--backend", "cpu", "-o", str(out), "--png", str(tmp_path / "c.png"), "--quiet"])
    assert rc == 2 and "disk full" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
