"""Population bins of the pruned Bernoulli Monte Carlo (hphawkes_py.scan.sizes): the bins cover every
window population within their stated width, and pruning with bin thresholds (the high-rate one of a
bin's smallest population, the low-rate one of its largest) keeps every replicate's maximum bit for
bit equal to the exhaustive one, even with bins far coarser than the default."""
from __future__ import annotations

import numpy as np
import pytest

from hphawkes_py.scan import cpu
from hphawkes_py.scan import engine as scan_engine
from hphawkes_py.scan import windows as scan_windows
from hphawkes_py.scan.engine import make_engine
from hphawkes_py.scan.sizes import size_bins


def test_bins_cover_populations_within_width():
    rng = np.random.default_rng(0)
    npop = np.concatenate([rng.integers(0, 3000, 20000), rng.integers(10**5, 10**6, 20000)])
    low, high, index = size_bins(npop, exact_below=1024, per_octave=512)
    assert np.all(low[index] <= npop) and np.all(npop <= high[index])
    assert np.all(np.diff(low) > 0) and np.all(high >= low) and np.all(low[1:] > high[:-1])
    # below exact_below a bin is one population; above, at most 1/per_octave of it (rounded to a power of 2)
    small = npop < 1024
    assert np.array_equal(low[index[small]], npop[small]) and np.array_equal(high[index[small]], npop[small])
    width = high[index] - low[index]
    assert np.all(width[~small] <= np.maximum(low[index[~small]] // 512, 1))
    # every bin up to the largest population's: 1,024 of their own, then 512 per octave (2**10 .. 2**19)
    assert len(low) == 1024 + 512 * (int(npop.max()).bit_length() - 11) + (int(npop.max()) >> 10) - 511
    assert low[0] == 0 and high[-1] == npop.max()
    # bins as the sorted nominal ranges would give them, entry by entry (an obvious reference)
    e = np.floor(np.log2(np.maximum(npop, 1))).astype(np.int64)
    ref_low = np.where(small, npop, (npop >> (e - 9)) << (e - 9))
    assert np.array_equal(low[index], ref_low)
    # populations all below exact_below: each its own bin, whatever the values present
    few = npop[:500] % 700
    lo, hi, j = size_bins(few)
    assert np.array_equal(lo, np.arange(few.max() + 1)) and np.array_equal(hi, lo) and np.array_equal(lo[j], few)


@pytest.mark.parametrize("exact_below,per_octave", [(1000, 512), (1024, 500), (8, 16)])
def test_bins_refuse_widths_that_are_not_powers_of_2(exact_below, per_octave):
    with pytest.raises(ValueError, match="powers of 2"):
        size_bins(np.arange(10), exact_below=exact_below, per_octave=per_octave)


def _many_persons_problem(seed, proportion, L=300):
    """Locations with 150-250 persons each and a case proportion ``proportion``: windows hold up to
    tens of thousands of persons, so thresholds are tabulated per bin."""
    rng = np.random.default_rng(seed)
    xy = rng.uniform(0, 20, size=(L, 2))
    pop = rng.integers(150, 251, size=L)
    N = int(pop.sum())
    C = int(rng.binomial(pop, proportion).sum())
    mat = np.stack([rng.multivariate_hypergeometric(pop, C) for _ in range(70)], axis=1).astype(np.int32)
    return xy, pop, N, C, mat


@pytest.mark.parametrize("proportion", [0.01, 0.1, 0.5])
@pytest.mark.parametrize("direction", ["high", "low", "both"])
@pytest.mark.parametrize("coarse", [False, True])
def test_pruning_with_bins_equals_exhaustive(proportion, direction, coarse):
    """Every replicate's maximum is bit for bit the exhaustive one, with the default bins and with
    bins 1/2 of their population wide above 8 persons (thresholds far below the exact ones: the
    bound must hold, not just the default's small slack)."""
    xy, pop, N, C, mat = _many_persons_problem(int(proportion * 100), proportion)
    windows = scan_windows.build_windows(xy, xy, pop, 0.5 * N)
    eng = make_engine(windows, scan_engine.klogk_table(N), C, N, direction, backend="cpu", min_cases=2)
    npop = windows[2]
    uniq = size_bins(npop, exact_below=8, per_octave=2) if coarse else size_bins(npop)
    assert len(uniq[0]) < len(np.unique(npop))  # binned, not exact
    stats = {}
    got = cpu.max_llr_pruned(windows, mat, eng.klogk, C, N, direction, uniq, min_cases=2, stats=stats)
    np.testing.assert_array_equal(got, eng.max_llr_exhaustive(mat))
    tested, walked = np.sum([r[1:] for r in stats["rounds"]], axis=0)
    if direction == "high" and proportion < 0.5 and not coarse:
        # (low-rate windows here, half the persons cases or bins half their size wide: a block adds more
        # than any margin, so every block is walked window by window)
        assert walked < tested


@pytest.mark.parametrize("proportion", [0.1, 0.3])
def test_entry_bound_rules_out_blocks_and_keeps_maxima(monkeypatch, proportion):
    """Many persons a location and common cases (a block's count grows by more than the margin): a group
    whose block test fails is tested entry by entry against each window end's threshold with the
    group's largest count per location (``rowmax``). The maxima stay the exhaustive ones, fewer blocks
    are walked than without that test, and a ``rowmax`` that understates the counts (all zero) changes
    the maxima: the bound is what keeps them."""
    xy, pop, N, C, mat = _many_persons_problem(7, proportion)
    windows = scan_windows.build_windows(xy, xy, pop, 0.5 * N)
    eng = make_engine(windows, scan_engine.klogk_table(N), C, N, "high", backend="cpu", min_cases=2)
    ref = eng.max_llr_exhaustive(mat)
    bins = size_bins(windows[2])

    def walked():
        st = {}
        got = cpu.max_llr_pruned(windows, mat, eng.klogk, C, N, "high", bins, min_cases=2, stats=st)
        return got, np.sum([r[2] for r in st["rounds"]])

    got, with_bound = walked()
    np.testing.assert_array_equal(got, ref)
    orig = cpu._group_row_max
    huge = np.iinfo(np.int8).max
    # rowmax at its type's largest: the entry test never rules a block out (every block walks, as before it)
    monkeypatch.setattr(cpu, "_group_row_max", lambda cs, R, group, out: out.fill(huge))
    got, without = walked()
    np.testing.assert_array_equal(got, ref)
    assert with_bound < without
    monkeypatch.setattr(cpu, "_group_row_max", lambda cs, R, group, out: out.fill(0))
    assert not np.array_equal(walked()[0], ref)
    monkeypatch.setattr(cpu, "_group_row_max", orig)
