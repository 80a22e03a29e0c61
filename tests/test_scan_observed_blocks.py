"""The observed data's best window per centre with blocks of windows skipped by a bound
(hphawkes_py.scan.cpu_observed): each centre's best LLR and the entry where its best window first
ends equal those of the exhaustive kernel bit for bit, for both models, every direction and block
sizes from 1 to longer than any walk, with and without prefetching; and the bound does skip (the comparison would pass with no
pruning at all otherwise)."""
from __future__ import annotations

import numpy as np
import pytest

from hphawkes_py.scan import cpu, cpu_observed
from hphawkes_py.scan import engine as scan_engine
from hphawkes_py.scan import windows as scan_windows
from hphawkes_py.scan.engine import null_loglik, poisson_logs

from naive_scan import bernoulli_llr


def _problem(kind, seed, L=400):
    """Locations with ``few`` (1-19) or ``many`` (150-250) persons, cases at 1 %, 10 % or 60 % (the
    low-rate bound's point can leave the valid range) and a planted high-rate cluster."""
    persons, proportion = kind
    rng = np.random.default_rng(seed)
    xy = rng.uniform(0, 20, size=(L, 2))
    pop = rng.integers(1, 20, size=L) if persons == "few" else rng.integers(150, 251, size=L)
    risk = np.full(L, proportion)
    risk[np.hypot(xy[:, 0] - 5, xy[:, 1] - 5) < 2.5] = min(0.95, 3 * proportion)
    return xy, pop, rng.binomial(pop, risk)


def _both(windows, cases, klogk, C, N, direction, min_cases, poisson, block, lookahead=0):
    offsets, neighbors, size, boundary = windows
    hi, lo = direction in ("high", "both"), direction in ("low", "both")
    if poisson:
        npop, l0 = cpu._NO_POP, 0.0
        mexp, loge, logce = poisson_logs(size, C)
    else:
        npop, l0 = size, null_loglik(klogk, C, N)
        mexp = loge = logce = cpu._NO_EXPECTED
    m = offsets.shape[0] - 1
    best, entry = np.empty((m, 1)), np.empty((m, 1), dtype=np.int64)
    col = np.ascontiguousarray(cases[:, None], dtype=np.int32)
    cpu._scan_batch(offsets, neighbors, npop, mexp, loge, logce, boundary, col, klogk, np.int64(C), np.int64(N), l0,
                    hi, lo, np.int64(min_cases), poisson, best, entry, True)
    got = cpu_observed.best_per_centre_blocks(offsets, neighbors, npop, mexp, loge, logce, boundary, col[:, 0],
                                              klogk, C, N, l0, hi, lo, min_cases, poisson,
                                              cpu.PRUNE_MARGIN + 1e-12 * float(klogk[-1]), block, lookahead)
    return (best[:, 0], entry[:, 0]), got


@pytest.mark.parametrize("kind", [("few", 0.1), ("many", 0.01), ("many", 0.1), ("few", 0.6)])
@pytest.mark.parametrize("direction", ["high", "low", "both"])
@pytest.mark.parametrize("model", ["bernoulli", "poisson"])
def test_blocks_equal_exhaustive(kind, direction, model):
    xy, pop, cases = _problem(kind, 3)
    N, C = int(pop.sum()), int(cases.sum())
    size = pop if model == "bernoulli" else pop * (C / N)
    windows = scan_windows.build_windows(xy, xy, size, 0.5 * size.sum())
    klogk = scan_engine.klogk_table(N if model == "bernoulli" else C)
    # prefetching the table lines (Bernoulli) a few or many window ends ahead changes nothing
    for block, lookahead in ((1, 0), (3, 5), (8, 0), (8, 16), (10**6, 3)):
        for min_cases in (0, 2):
            (b0, e0), (b1, e1) = _both(windows, cases, klogk, C, N, direction, min_cases, model == "poisson", block,
                                       lookahead)
            np.testing.assert_array_equal(b1, b0)
            np.testing.assert_array_equal(e1, e0)
    assert b0.max() > 1 and (e0 >= 0).sum() > len(pop) // 2


def test_bound_skips_blocks_and_planted_cluster_is_found():
    """The block bound lets the kernel skip blocks on a many-persons problem (checked by the
    number of blocks walked, through a counting copy of the walk below), and the best window
    of the centre of the planted cluster matches the naive LLR."""
    xy, pop, cases = _problem(("many", 0.1), 5)
    N, C = int(pop.sum()), int(cases.sum())
    windows = scan_windows.build_windows(xy, xy, pop, 0.5 * N)
    klogk = scan_engine.klogk_table(N)
    (b0, e0), (b1, e1) = _both(windows, cases, klogk, C, N, "high", 2, False, 8)
    np.testing.assert_array_equal(b1, b0)
    offsets, neighbors, npop, boundary = windows
    l0 = null_loglik(klogk, C, N)
    walked = total = 0
    for i in range(len(offsets) - 1):
        c, m = 0, 0.0
        for j in range(offsets[i], offsets[i + 1], 8):
            jb = min(j + 8, offsets[i + 1])
            c_lo = c + cases[neighbors[j]]
            c_hi = c + cases[neighbors[j:jb]].sum()
            bound = cpu_observed._block_bound(c_lo, c_hi, j, jb - 1, npop, cpu._NO_EXPECTED, cpu._NO_EXPECTED,
                                              cpu._NO_EXPECTED, klogk, C, N, l0, True, False, 2, False)
            total += 1
            if bound >= m - 1e-6:
                walked += 1
                for k in range(j, jb):
                    c += cases[neighbors[k]]
                    if boundary[k] and c * N > C * npop[k] and c >= 2:
                        m = max(m, bernoulli_llr(c, npop[k], C, N))
            else:
                c = c_hi
        assert abs(m - b1[i]) < 1e-6
    assert walked < 0.8 * total
    i = int(np.argmin(np.hypot(xy[:, 0] - 5, xy[:, 1] - 5)))
    n, c = npop[e1[i]], cases[neighbors[offsets[i]:e1[i] + 1]].sum()
    assert b1[i] == pytest.approx(bernoulli_llr(c, n, C, N), rel=1e-9) and b1.max() > 10
