"""The space-time Poisson cylinders with expectations per location and time (populations that change
over time, covariates): the kernels against a float64 NumPy enumeration, on the CPU engine (pruned and
day-by-day) and the CUDA engine; the observed intervals' best cylinders; the public API."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import hphawkes_py as hp
from hphawkes_py.scan import cpu_space_time as cst
from hphawkes_py.scan import engine as se
from hphawkes_py.scan import windows as sw

sys.path.insert(0, str(Path(__file__).parent))
from engines import ENGINES  # noqa: E402
from naive_scan import space_time_dated  # noqa: E402


def _problem(seed, L=13, T=8, R=6):
    """Locations on a small grid, expectations that are not separable (each location's population grows
    at its own rate), and replicates drawn from them with one planted cylinder."""
    rng = np.random.default_rng(seed)
    coords = np.unique(rng.integers(0, 6, size=(L, 2)), axis=0).astype(float)
    L = len(coords)
    growth = rng.uniform(-0.08, 0.15, size=L)
    pop = rng.uniform(50, 400, size=L)[:, None] * (1 + growth[:, None]) ** np.arange(T)[None, :]
    C = 60
    E = C * pop / pop.sum()
    M = np.stack([rng.multinomial(C, E.ravel() / C).reshape(L, T) for _ in range(R)], axis=2)
    M[0, -3:, 0] += 4  # a cluster in replicate 0 (its total changes: E is rescaled per replicate below)
    return coords, E, M


def _windows(coords, E):
    return sw.build_windows(coords, coords, E.sum(axis=1), 0.5 * E.sum())


@pytest.mark.parametrize("backend", ENGINES)
@pytest.mark.parametrize("prospective", [False, True])
@pytest.mark.parametrize("direction", ["high", "both"])
def test_dated_cylinders_match_enumeration(backend, prospective, direction):
    coords, E, M = _problem(3)
    M = M[:, :, 1:]  # every replicate with the same total C
    C = int(M[:, :, 0].sum())
    L, T, R = M.shape
    w = _windows(coords, E)
    ref = space_time_dated(w, M, E, max_t=4, min_cases=2, prospective=prospective, direction=direction)
    assert ref.max() > 1
    eng = se.make_space_time_engine(w, np.zeros(T + 1), se.klogk_table(C), C, 4, T - 1 if prospective else 0, 2,
                                    direction, backend=hp._backend.resolve_backend(backend), expected=E)
    best, arg = eng.batch(M.astype(np.int32), want_arg=True)
    np.testing.assert_allclose(best, ref, rtol=1e-11, atol=1e-11)
    assert ((arg >= 0) == (ref > 0)).all()
    if backend == "cpu":
        # the pruned loop, the day-by-day loop and the pilot-floored maxima agree bit for bit
        exact, exact_arg = cst.cylinder_batch(w, M, None, None, se.klogk_table(C), C, C, 4,
                                              T - 1 if prospective else 0, 2, direction, want_arg=True, pruned=False,
                                              expected=E)
        np.testing.assert_array_equal(best, exact)
        np.testing.assert_array_equal(arg, exact_arg)
        np.testing.assert_array_equal(eng.max_llr(M.astype(np.int32)), best.max(axis=0))


def test_dated_cylinders_differ_from_separable_ones():
    """The same data with the expectations made separable (each location's total spread as the days'
    totals) gives other maxima: the per-day expectations are really read."""
    coords, E, M = _problem(5)
    M = M[:, :, 1:]
    C = int(M[:, :, 0].sum())
    T = E.shape[1]
    w = _windows(coords, E)
    sep = np.outer(E.sum(axis=1), E.sum(axis=0)) / E.sum()
    a = cst.cylinder_batch(w, M, None, None, se.klogk_table(C), C, C, 4, 0, 2, "high", expected=E)[0]
    b = cst.cylinder_batch(w, M, None, None, se.klogk_table(C), C, C, 4, 0, 2, "high", expected=sep)[0]
    np.testing.assert_allclose(b, space_time_dated(w, M, sep, max_t=4), rtol=1e-11, atol=1e-11)
    assert np.abs(a - b).max() > 1e-3
    with pytest.raises(ValueError, match=r"expected must be \(locations, days\)"):
        cst.cylinder_batch(w, M, None, None, se.klogk_table(C), C, C, 4, 0, 2, "high", expected=E[:, :T - 1])


@pytest.mark.parametrize("direction", ["high", "both"])
def test_dated_interval_best_matches_enumeration(direction):
    """The observed data's best cylinder of every interval (the retrospective candidates' input)."""
    coords, E, M = _problem(7)
    c_lt = M[:, :, 0]
    C = int(c_lt.sum())
    E = E * C / E.sum()
    L, T = c_lt.shape
    w = _windows(coords, E)
    val, code = cst.space_time_interval_best(w, c_lt, None, None, se.klogk_table(C), C, C, 4, 2, direction, 0,
                                             len(w[0]) - 1, expected=E)
    offsets, neighbors, _, boundary = w
    for i in range(len(offsets) - 1):
        for t2 in range(T):
            for d in range(min(4, t2 + 1)):
                t1 = t2 - d
                ref = 0.0
                for j in range(offsets[i], offsets[i + 1]):
                    if not boundary[j]:
                        continue
                    members = neighbors[offsets[i]:j + 1]
                    c = float(c_lt[members, t1:t2 + 1].sum())
                    mu = float(E[members, t1:t2 + 1].sum())
                    if not 0 < mu < C:
                        continue
                    high, low = c > mu and c >= 2, c < mu
                    if not (high if direction == "high" else high or low):
                        continue
                    llr = (c * np.log(c / mu) if c else 0.0) + ((C - c) * np.log((C - c) / (C - mu)) if C > c else 0.0)
                    ref = max(ref, llr)
                assert val[i, t2, d] == pytest.approx(ref, rel=1e-11, abs=1e-11)


def _rows(seed=2, L=15, T=10):
    rng = np.random.default_rng(seed)
    coords = rng.uniform(0, 10, size=(L, 2))
    c_lt = rng.poisson(0.6, size=(L, T))
    c_lt[:3, -3:] += 2
    loc, day = np.divmod(np.arange(L * T), T)
    return coords, c_lt, loc, day


def test_space_time_expected_constant_in_time_is_the_population_scan():
    """Expectations proportional to a constant population give the population scan's clusters."""
    coords, c_lt, loc, day = _rows()
    P = np.random.default_rng(0).integers(100, 900, size=len(coords)).astype(float)
    kw = dict(max_temporal=4, n_replicates=49, seed=5, progress=False, backend="cpu")
    a = hp.scan.space_time(coords[loc], c_lt[loc, day], day, population=P[loc], **kw)
    b = hp.scan.space_time(coords[loc], c_lt[loc, day], day, population=P[loc], expected=3.7 * P[loc], **kw)
    ca, cb = a.clusters, b.clusters
    assert len(ca) == len(cb) > 0
    for col in ("n_locations", "cases", "start", "end", "population"):
        assert list(ca[col]) == list(cb[col])
    np.testing.assert_allclose(cb.log_likelihood_ratio, ca.log_likelihood_ratio, rtol=1e-10)
    np.testing.assert_allclose(cb.expected, ca.expected, rtol=1e-10)
    np.testing.assert_allclose(b.null_llr, a.null_llr, rtol=1e-9)


@pytest.mark.parametrize("backend", ENGINES)
def test_space_time_expected_finds_the_enumerated_cylinder(backend):
    """Growing populations in some places: the most likely cluster's LLR is the enumeration's largest,
    and its expected cases are its cells' (rescaled to C)."""
    coords, c_lt, loc, day = _rows(4)
    L, T = c_lt.shape
    rng = np.random.default_rng(9)
    grow = 1 + rng.uniform(0, 0.3, size=L)[:, None] * np.arange(T)[None, :]
    e_lt = rng.uniform(20, 80, size=L)[:, None] * grow
    res = hp.scan.space_time(coords[loc], c_lt[loc, day], day, expected=e_lt[loc, day], max_temporal=4, location_ids=loc,
                             n_replicates=19, seed=1, progress=False, backend=backend)
    C = c_lt.sum()
    E = e_lt * C / e_lt.sum()
    w = sw.build_windows(coords, coords, E.sum(axis=1), 0.5 * C)
    ref = space_time_dated(w, c_lt[:, :, None], E, max_t=4, min_cases=2)
    top = res.most_likely
    assert top.log_likelihood_ratio == pytest.approx(ref.max(), rel=1e-11)
    members = [int(m) for m in top.location_ids]
    t1, t2 = int(top.start), int(top.end)
    assert top.expected == pytest.approx(E[members, t1:t2 + 1].sum(), rel=1e-12)
    assert top.cases == c_lt[members, t1:t2 + 1].sum()
    assert res.n_population == pytest.approx(C)


def test_space_time_expected_bad_input():
    coords, c_lt, loc, day = _rows()
    base = dict(coords=coords[loc], cases=c_lt[loc, day], times=day, n_replicates=9, progress=False, backend="cpu")
    ex = np.ones(len(loc))
    with pytest.raises(ValueError, match="expected must have one value per row"):
        hp.scan.space_time(**base, expected=ex[:-1])
    bad = ex.copy()
    bad[3] = -1
    with pytest.raises(ValueError, match=r"expected must be non-negative; expected\[3\]"):
        hp.scan.space_time(**base, expected=bad)
    r = int(np.flatnonzero(c_lt[loc, day] > 0)[0])
    bad = ex.copy()
    bad[r] = 0
    with pytest.raises(ValueError, match=f"the cell of row {r} .* has cases but no expected cases"):
        hp.scan.space_time(**base, expected=bad)
    with pytest.raises(ValueError, match="time_trend and spatial_adjustment must be None"):
        hp.scan.space_time(**base, expected=ex, time_trend="loglinear")
    with pytest.raises(ValueError, match="needs population= .* or expected="):
        hp.scan.space_time(**base)


def test_surveillance_with_a_percentage_against_enumeration(monkeypatch):
    """Adjusted for earlier analyses with the longest cylinder a percentage of each analysis's own period
    (SaTScan's gvProspectiveIntervalCuts): every replicate's maximum is the enumeration's over the cylinders
    ending on a surveillance day t with at most floor((t + 1) percent / 100) days; the observed clusters end on
    the last day with at most floor(T percent / 100)."""
    from hphawkes_py.scan import space_time_scan
    from naive_scan import xlogy_ratio

    assert space_time_scan._surveillance_cuts(9, 24, 40.0) == ((9, 4), (12, 5), (14, 6), (17, 7), (19, 8), (22, 9))
    rng = np.random.default_rng(21)
    L, T, start, pct = 9, 12, 4, 45.0
    xy = rng.uniform(0, 10, (L, 2))
    pop = rng.integers(20, 80, L)
    c = rng.poisson(0.6, (L, T))
    c[2, 9:12] += 3
    drawn = []
    draw = space_time_scan.draw_multinomial_cases

    def recording(*a):
        M = draw(*a)
        drawn.append(M.copy())
        return M

    monkeypatch.setattr(space_time_scan, "draw_multinomial_cases", recording)
    rl, rd = np.indices((L, T)).reshape(2, -1)
    res = hp.scan.space_time(xy[rl], c.ravel(), rd, population=pop[rl], prospective=True, max_population=None,
                             max_distance=4.0, surveillance_start=start, max_temporal_percent=pct, n_replicates=19,
                             seed=2, progress=False, backend="cpu", threads=1)
    M = np.concatenate(drawn, axis=1).reshape(L, T, -1)
    C = int(c.sum())
    E = C * pop / pop.sum() / T  # expected cases of a location on a day
    d2 = ((xy[:, None, :] - xy[None, :, :]) ** 2).sum(axis=2)

    def best(x, ends):
        out = 0.0
        for i in range(L):
            order = np.argsort(d2[i], kind="stable")
            for k in range(1, L + 1):
                z = order[:k]
                if d2[i, z[-1]] > 16.0:
                    break
                for t2 in ends:
                    for t1 in range(t2 - int(np.floor((t2 + 1) * pct / 100.0)) + 1, t2 + 1):
                        cc, mu = float(x[z, t1:t2 + 1].sum()), float(E[z].sum() * (t2 - t1 + 1))
                        if cc > mu and cc >= 2:
                            out = max(out, float(xlogy_ratio(cc, mu) + xlogy_ratio(C - cc, C - mu)))
        return out

    ref = np.array([best(M[:, :, r], range(start, T)) for r in range(M.shape[2])])
    np.testing.assert_allclose(res.null_llr, ref, rtol=1e-9)
    assert res.clusters.log_likelihood_ratio.iloc[0] == pytest.approx(best(c, [T - 1]), rel=1e-9)
    top = res.clusters.iloc[0]
    assert top.end == T - 1 and top.end - top.start + 1 <= np.floor(T * pct / 100.0)
