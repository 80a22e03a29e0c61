"""The pruned Poisson Monte Carlo (CpuEngine.max_llr, model="poisson") against the exhaustive kernel, bit
for bit; the guide-table multinomial draw against the sort-and-merge one; the draw kernels' own MT19937
stream against numba's np.random; the replicate seed words against NumPy's SeedSequence."""
from __future__ import annotations

import numba
import numpy as np
import pytest

import hphawkes_py as hp
from hphawkes_py.scan import _rng, cpu, cpu_poisson, null_draws
from hphawkes_py.scan import engine as se
from hphawkes_py.scan import windows as sw
from hphawkes_py.scan.monte_carlo import replicate_seed_batches


def _poisson_engine(xy, expected, C, direction, min_cases=0, max_pop=0.5, pop=None):
    size = expected if pop is None else pop
    windows = sw.build_windows(xy, xy, size, max_pop * size.sum())
    wexp = sw.cumulative_expected(windows, expected)
    return se.make_engine((windows[0], windows[1], wexp, windows[3]), se.klogk_table(C), C, C, direction,
                          backend="cpu", model="poisson", min_cases=min_cases)


def _null(expected, C, R, seed):
    return null_draws.draw_multinomial_cases(expected, C, np.random.SeedSequence(seed).spawn(R))


@pytest.fixture(scope="module")
def ny():
    S = hp.datasets.satscan_sample_path
    d = hp.scan.read_satscan(S("ny_leukemia.cas"), None, S("ny_leukemia.pop"), S("ny_leukemia.geo"), model="poisson")
    xy = d[["x", "y"]].to_numpy()
    pop = d.population.to_numpy().astype(np.int64)
    C = int(round(d.cases.sum()))
    return xy, pop, pop * (C / pop.sum()), C


@pytest.mark.parametrize("direction", ["high", "low", "both"])
@pytest.mark.parametrize("min_cases", [0, 2])
def test_pruned_poisson_maxima_equal_exhaustive_on_ny(ny, direction, min_cases):
    xy, pop, ex, C = ny
    eng = _poisson_engine(xy, ex, C, direction, min_cases, pop=pop)
    mat = _null(ex, C, 300, 11)
    got = eng.max_llr(mat)
    np.testing.assert_array_equal(got, eng.max_llr_exhaustive(mat))
    assert got.min() > 0


def test_pruned_poisson_skips_most_windows_on_ny(ny):
    xy, pop, ex, C = ny
    eng = _poisson_engine(xy, ex, C, "high", pop=pop)
    st = {}
    mat = _null(ex, C, 256, 5)
    got = cpu.max_llr_pruned(eng.windows, mat, eng.klogk, C, C, "high", stats=st, model="poisson")
    np.testing.assert_array_equal(got, eng.max_llr_exhaustive(mat))
    tests, _, evals, _ = np.array(st["rounds"])[:, 1:].sum(axis=0)
    assert evals < 0.1 * tests


@pytest.mark.parametrize("direction", ["high", "low", "both"])
@pytest.mark.parametrize("C, ties, zeros", [(3, False, False), (40, True, False), (300, False, True),
                                            (2500, True, True), (40000, False, False)])
def test_pruned_poisson_maxima_equal_exhaustive_random(direction, C, ties, zeros):
    """Few and many cases (16- and 32-bit counts, 8-bit rows or not), distance ties (integer coordinates),
    tied expected counts, locations with zero expected, replicates not a multiple of the group size."""
    rng = np.random.default_rng(C)
    L = 250
    xy = rng.integers(0, 12, size=(L, 2)).astype(float) if ties else rng.uniform(0, 20, size=(L, 2))
    ex = rng.integers(1, 4, size=L).astype(float) if ties else rng.gamma(1.0, 1.0, size=L)
    if zeros:
        ex[rng.random(L) < 0.1] = 0.0
    ex *= C / ex.sum()
    mat = _null(ex, C, 203, C + 1)
    for min_cases in (0, 2):
        eng = _poisson_engine(xy, ex, C, direction, min_cases)
        np.testing.assert_array_equal(eng.max_llr(mat), eng.max_llr_exhaustive(mat))


def _block_runs(C, block):
    """The pruned Poisson maxima of every direction and min_cases on one problem (300 locations, 160
    replicates, C cases), each asserted equal to the exhaustive ones bit for bit: ``(engine, stats)`` per
    run."""
    rng = np.random.default_rng(C + block % 97)
    L = 300
    xy = rng.uniform(0, 20, size=(L, 2))
    ex = rng.gamma(1.5, 1.0, size=L)
    ex *= C / ex.sum()
    mat = _null(ex, C, 160, C + 3)
    for direction in ("high", "low", "both"):
        for min_cases in (0, 2):
            eng = _poisson_engine(xy, ex, C, direction, min_cases)
            st = {}
            got = cpu.max_llr_pruned(eng.windows, mat, eng.klogk, C, C, direction, min_cases=min_cases, stats=st,
                                     model="poisson")
            np.testing.assert_array_equal(got, eng.max_llr_exhaustive(mat))
            yield eng, st


@pytest.mark.parametrize("block", [1, 3, 8, 10**9])
@pytest.mark.parametrize("C", [300, 40000])
def test_pruned_poisson_blocks_of_window_ends(monkeypatch, block, C):
    """Window ends ruled out a block at a time (the largest count after a block at its least E, the
    least count before it at its largest E) give the exhaustive maxima bit for bit, for 16- and 32-bit
    counts, both directions and min_cases, with blocks of one entry, of three (partial blocks at every
    walk's end), of eight, and of a whole walk; and blocks do rule out entries."""
    monkeypatch.setattr(cpu_poisson, "POISSON_BLOCK", block)
    for eng, st in _block_runs(C, block):
        tested, _, _, blocks = np.array(st["rounds"])[:, 1:].sum(axis=0)
        G = -(-160 // cpu.GROUP)
        if block == 1:
            assert blocks == 0 and tested == G * (eng.windows[3] != 0).sum()
        else:
            # entries are tested one by one only inside the blocks a bound did not rule out (a whole
            # walk's bound, from its first E to its last count, rules out nothing)
            assert blocks > 0
            assert tested < G * (eng.windows[3] != 0).sum() or block > len(eng.windows[0]) - 1


def test_pruned_poisson_is_sensitive_to_a_broken_bound(ny, monkeypatch):
    """Thresholds raised above the running maxima (a negative margin) must change the maxima: the
    comparison above would catch a bound that prunes windows that matter."""
    xy, pop, ex, C = ny
    eng = _poisson_engine(xy, ex, C, "high", pop=pop)
    mat = _null(ex, C, 128, 2)
    ref = eng.max_llr_exhaustive(mat)
    monkeypatch.setattr(cpu_poisson, "PRUNE_MARGIN", -1.0)
    assert not np.array_equal(eng.max_llr(mat), ref)


@pytest.mark.parametrize("direction", ["high", "both"])
def test_pruned_poisson_penalised_maxima(direction, kernel):
    """Elliptic Poisson scans: the penalised null maxima, pruned per run of equal penalties, equal the
    maximum of every centre's best LLR times its penalty."""
    from hphawkes_py.scan.ellipses import _elliptic_penalties, _elliptic_windows, ellipse_set

    rng = np.random.default_rng(4)
    L = 80
    xy = rng.uniform(0, 10, size=(L, 2))
    ex = rng.gamma(2.0, 1.0, size=L)
    C = 150
    ex *= C / ex.sum()
    ell = ellipse_set([1.5, 3.0], [4, 6])
    windows = _elliptic_windows(xy, xy, ex, 0.5 * ex.sum(), ell)
    wexp = sw.cumulative_expected(windows, ex)
    eng = se.make_engine((windows[0], windows[1], wexp, windows[3]), se.klogk_table(C), C, C, direction,
                         backend="cpu", model="poisson")
    pens = _elliptic_penalties(ell, L, 0.5)
    mat = _null(ex, C, 150, 9)
    best, _ = eng.best_per_centre(mat)
    np.testing.assert_array_equal(eng.max_llr_penalised(mat, pens), (best * pens[:, None]).max(axis=0))


def test_multinomial_guide_table_draw_equals_sorted_merge():
    rng = np.random.default_rng(8)
    for trial in range(40):
        L = int(rng.integers(1, 60))
        e = rng.random(L) * (rng.random(L) < 0.7)
        e[rng.integers(L)] += 0.1
        if trial % 3 == 0:
            e = np.round(e * 4) / 4 + 0.25
        if trial % 5 == 0:
            e[-1] = 0.0
        C = int(rng.integers(0, 400))
        seeds = rng.integers(0, 2**32, 40, dtype=np.uint32)
        np.testing.assert_array_equal(null_draws.draw_multinomial(e, C, seeds),
                                      null_draws.draw_multinomial(e, C, seeds, sorted_merge=True))
    # location boundaries exactly at the guide's bucket starts (equal and dyadic weights), many uniforms
    for e in (np.ones(1000), np.full(997, 3.0), 2.0 ** -rng.integers(0, 12, 800), np.r_[0.0, np.ones(63), 0.0]):
        seeds = rng.integers(0, 2**32, 8, dtype=np.uint32)
        np.testing.assert_array_equal(null_draws.draw_multinomial(e, 50_000, seeds),
                                      null_draws.draw_multinomial(e, 50_000, seeds, sorted_merge=True))
    # more locations than a block of WRITE_BLOCK replicates' counts may take (fewer replicates a block, the last
    # one partial), and a replicate's counts depend on its seed only, not on the block it falls in
    e = rng.random(300_000)
    seeds = rng.integers(0, 2**32, 7, dtype=np.uint32)
    assert null_draws.WRITE_BLOCK_BYTES // (4 * e.size) < min(null_draws.WRITE_BLOCK, seeds.size)
    full = null_draws.draw_multinomial(e, 3000, seeds)
    np.testing.assert_array_equal(full, null_draws.draw_multinomial(e, 3000, seeds, sorted_merge=True))
    np.testing.assert_array_equal(full[:, 2:5], null_draws.draw_multinomial(e, 3000, seeds[2:5]))


def test_multinomial_locate_is_exact_at_boundaries_and_bucket_starts():
    """The guide table's lookup against ``min(L - 1, #{l: cum[l] <= u})`` for the values where it could
    go wrong: every location boundary and guide bucket start, and their float neighbours."""
    locate = null_draws._locate.py_func
    rng = np.random.default_rng(3)
    # boundaries exactly at the bucket starts b / scale, with a scale that is not a power of 2
    L, total = 120, 300.3
    on_starts = np.r_[np.arange(16, 16 * L, 16) / (16 * L / total), total]
    for w in (np.diff(on_starts, prepend=0.0), np.ones(300), np.full(97, 3.0), 2.0 ** -rng.integers(0, 12, 200), rng.random(250),
              np.r_[0.0, np.ones(40), 0.0, 0.0, rng.random(30)], np.array([5.0])):
        cum = np.cumsum(w)
        guide, scale = null_draws._guide_table(cum)
        starts = np.arange(guide.shape[0]) / scale
        u = np.concatenate([cum, starts, np.arange(guide.shape[0]) * (cum[-1] / guide.shape[0])])
        u = np.concatenate([u, np.nextafter(u, -np.inf), np.nextafter(u, np.inf)])
        u = u[(u >= 0) & (u <= cum[-1])]
        want = np.minimum(len(cum) - 1, np.searchsorted(cum, u, side="right"))
        got = np.array([locate(x, cum, guide, scale) for x in u])
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("seed", [0, 1, 12345, 2**40 + 7, 2**100 + 3, None])
def test_replicate_seed_words_equal_numpy(seed):
    for b in replicate_seed_batches(seed, 700, 256):
        copy = np.random.SeedSequence(b.entropy, spawn_key=b.spawn_key, pool_size=b.pool_size,
                                      n_children_spawned=b.n_children_spawned)
        ref = np.array([c.generate_state(1, np.uint32)[0] for c in copy.spawn(256)], dtype=np.uint32)
        np.testing.assert_array_equal(_rng.replicate_seed_words((b, 256)), ref)
        # a list of SeedSequences: NumPy's own words
        again = np.random.SeedSequence(b.entropy, spawn_key=b.spawn_key, pool_size=b.pool_size,
                                       n_children_spawned=b.n_children_spawned)
        np.testing.assert_array_equal(_rng.replicate_seed_words(again.spawn(3)), ref[:3])


@numba.njit
def _numba_stream(seed, n, count):
    """numba's own np.random after np.random.seed: ``count`` randint(0, n), then ``count`` random()."""
    np.random.seed(seed)
    ints = np.empty(count, dtype=np.int64)
    for t in range(count):
        ints[t] = np.random.randint(0, n)
    dbl = np.empty(count)
    for t in range(count):
        dbl[t] = np.random.random()
    return ints, dbl


@numba.njit
def _our_stream(seed, n, count):
    mt = np.empty(_rng._MT_N, dtype=np.uint32)
    words = np.empty(_rng._MT_N, dtype=np.uint32)
    idx = _rng._mt_seed(mt, seed)
    mask, wide = _rng._randint_mask(n)
    ints = np.empty(count, dtype=np.int64)
    for t in range(count):
        ints[t], idx = _rng._mt_randint(mt, words, idx, n, mask, wide)
    dbl = np.empty(count)
    for t in range(count):
        dbl[t], idx = _rng._mt_random(mt, words, idx)
    return ints, dbl


@pytest.mark.parametrize("n", [2, 3, 1000, 2**31 - 1, 2**31, 2**32, 2**32 + 1, 3 * 2**40 + 5, 2**62 + 1])
def test_null_draw_stream_equals_numba_np_random(n):
    """The draw kernels' own MT19937 (seed, twist, randint's rejection by bit mask, random's 53 bits)
    gives numba's np.random stream word for word, over several twists; odd counts of words before the
    doubles (rejections, two-word integers) included."""
    for seed in (0, 1, 5489, 2**32 - 1, 123456789):
        ref = _numba_stream(np.uint32(seed), np.int64(n), 1501)
        got = _our_stream(np.uint32(seed), np.int64(n), 1501)
        np.testing.assert_array_equal(got[0], ref[0])
        np.testing.assert_array_equal(got[1], ref[1])


def _many_cases_problem():
    """``(engine, replicates, exhaustive maxima)``: 300 locations, 60,000 cases (32-bit counts), 96 replicates,
    high rates, at least 2 cases."""
    rng = np.random.default_rng(21)
    L, C = 300, 60000
    xy = rng.uniform(0, 20, size=(L, 2))
    ex = rng.gamma(4.0, 1.0, size=L)
    ex *= C / ex.sum()
    mat = _null(ex, C, 96, 4)
    eng = _poisson_engine(xy, ex, C, "high", 2)
    ref = eng.max_llr_exhaustive(mat)
    return eng, mat, ref


def test_pruned_poisson_window_end_bound_is_what_keeps_the_maxima(monkeypatch):
    """32-bit counts (many cases): a block whose bound fails is bounded again window end by window end with
    the item's largest count per location (``rowmax``). The maxima are the exhaustive ones with it and
    without it, and a ``rowmax`` that understates the counts (all zero) changes them."""
    eng, mat, ref = _many_cases_problem()
    for refine in (True, False):
        monkeypatch.setattr(cpu_poisson, "POISSON_REFINE", refine)
        np.testing.assert_array_equal(eng.max_llr(mat), ref)
    monkeypatch.setattr(cpu_poisson, "POISSON_REFINE", True)
    monkeypatch.setattr(cpu_poisson, "_group_row_max", lambda cs, R, group, out: out.fill(0))
    assert not np.array_equal(eng.max_llr(mat), ref)


@pytest.fixture(params=["poisson kernel", "shared kernel"])
def kernel(request, monkeypatch):
    """Both Poisson paths of the pruned Monte Carlo on the same small problems: the Poisson kernel
    (fewer window entries than ``POISSON_SHARED_ENTRIES``) and the shared one (threshold lowered to 0)."""
    if request.param == "shared kernel":
        monkeypatch.setattr(cpu, "POISSON_SHARED_ENTRIES", 0)
    return request.param


@pytest.mark.parametrize("direction", ["high", "low", "both"])
def test_both_poisson_kernels_equal_exhaustive_on_ny(ny, kernel, direction):
    xy, pop, ex, C = ny
    mat = _null(ex, C, 300, 11)
    for min_cases in (0, 2):
        eng = _poisson_engine(xy, ex, C, direction, min_cases, pop=pop)
        np.testing.assert_array_equal(eng.max_llr(mat), eng.max_llr_exhaustive(mat))


@pytest.mark.parametrize("direction", ["high", "low", "both"])
@pytest.mark.parametrize("C, ties, zeros", [(3, False, False), (40, True, False), (300, False, True),
                                            (2500, True, True), (40000, False, False)])
def test_shared_kernel_poisson_maxima_equal_exhaustive_random(monkeypatch, direction, C, ties, zeros):
    """The shared kernel with Poisson thresholds: few and many cases (16- and 32-bit counts, rows packed
    two to a byte or not), distance ties, tied expected counts, locations with zero expected (bin 0 of
    the expected cases), replicates not a multiple of the group size."""
    monkeypatch.setattr(cpu, "POISSON_SHARED_ENTRIES", 0)
    test_pruned_poisson_maxima_equal_exhaustive_random(direction, C, ties, zeros)


@pytest.mark.parametrize("block", [1, 3, 8, 10**9])
@pytest.mark.parametrize("C", [300, 40000])
def test_shared_kernel_poisson_blocks(monkeypatch, block, C):
    """The shared kernel's block tests with Poisson thresholds (each group's largest count after a block
    against its threshold at the block's least E, its least count before it against the one at its
    largest E) give the exhaustive maxima bit for bit, for 16- and 32-bit counts, both directions and
    min_cases, with blocks of one entry, of three (partial blocks at every walk's end), of eight and of
    a whole walk; every group's block is tested once (no window tested entry by entry before the blocks:
    ``HEAD_RATE`` 0), and blocks do rule out walks."""
    monkeypatch.setattr(cpu, "POISSON_SHARED_ENTRIES", 0)
    monkeypatch.setattr(cpu, "BLOCK", block)
    monkeypatch.setattr(cpu, "HEAD_RATE", 0)
    for eng, st in _block_runs(C, block):
        tested, walked = np.array(st["rounds"])[:, 1:].sum(axis=0)
        G = -(-160 // cpu.GROUP)
        lengths = np.diff(eng.windows[0])
        assert tested == G * (-(-lengths // min(block, lengths.max()))).sum()
        if block < 10**9:
            assert walked < tested


def test_shared_kernel_poisson_bound_breaks_visibly(monkeypatch):
    """Thresholds above the running maxima (a negative margin), or a ``rowmax`` that understates the counts
    (all zero) in the window-end bound of a block that fails its test (32-bit counts), change the shared
    kernel's Poisson maxima: the comparisons above would catch a bound that prunes windows that matter."""
    monkeypatch.setattr(cpu, "POISSON_SHARED_ENTRIES", 0)
    eng, mat, ref = _many_cases_problem()
    np.testing.assert_array_equal(eng.max_llr(mat), ref)
    with monkeypatch.context() as m:
        m.setattr(cpu, "_group_row_max", lambda cs, R, group, out: out.fill(0))
        assert not np.array_equal(eng.max_llr(mat), ref)
    with monkeypatch.context() as m:
        m.setattr(cpu, "PRUNE_MARGIN", -1.0)
        assert not np.array_equal(eng.max_llr(mat), ref)


def test_poisson_kernel_by_window_entries(monkeypatch):
    """Windows with fewer entries than ``POISSON_SHARED_ENTRIES`` take the Poisson kernel, the others the
    shared one (both give the exhaustive maxima, tests above)."""
    from hphawkes_py.scan import cpu_poisson

    rng = np.random.default_rng(5)
    L, C = 120, 400
    xy = rng.uniform(0, 20, size=(L, 2))
    ex = rng.gamma(1.5, 1.0, size=L)
    ex *= C / ex.sum()
    eng = _poisson_engine(xy, ex, C, "high", 2)
    mat = _null(ex, C, 64, 1)
    calls = []
    item = cpu.max_llr_pruned_poisson
    monkeypatch.setattr(cpu, "max_llr_pruned_poisson", lambda *a: calls.append(1) or item(*a))
    n_entries = len(eng.windows[1])
    for limit, item_kernel in ((n_entries + 1, True), (n_entries, False)):
        calls.clear()
        monkeypatch.setattr(cpu, "POISSON_SHARED_ENTRIES", limit)
        np.testing.assert_array_equal(eng.max_llr(mat), eng.max_llr_exhaustive(mat))
        assert bool(calls) == item_kernel
    assert cpu_poisson.max_llr_pruned_poisson is item
