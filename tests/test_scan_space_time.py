"""hp.scan.space_time_permutation: the cylinder kernel against a float64 NumPy brute force,
the permutation null (margins kept), a planted outbreak, NYCfever, bad input."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import hphawkes_py as hp
from hphawkes_py.scan import engine as se
from hphawkes_py.scan import null_draws
from hphawkes_py.scan import windows as sw

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from engines import CUDA_ENGINES, ENGINES  # noqa: E402
from naive_scan import circle_prefixes  # noqa: E402


def ref_best(coords, c_lt, max_fraction, max_t, prospective, min_cases, direction="high"):
    """Per-centre best cylinder LLR by brute force (explicit sets, np.log)."""
    L, T = c_lt.shape
    C = c_lt.sum()
    Cz, Cd = c_lt.sum(axis=1), c_lt.sum(axis=0)
    best = np.zeros(L)
    for i in range(L):
        d2 = ((coords - coords[i]) ** 2).sum(axis=1)
        for Z in circle_prefixes(d2, coords, Cz, max_fraction * C):
            for t2 in (range(T - 1, T) if prospective else range(T)):
                for t1 in range(max(0, t2 - max_t + 1), t2 + 1):
                    c = c_lt[np.ix_(Z, np.arange(t1, t2 + 1))].sum()
                    mu = Cz[Z].sum() * Cd[t1:t2 + 1].sum() / C
                    if not 0 < mu < C:
                        continue
                    hi, lo = c > mu and c >= min_cases, c < mu
                    if not {"high": hi, "low": lo, "both": hi or lo}[direction]:
                        continue
                    llr = (c * np.log(c / mu) if c else 0.0) + ((C - c) * np.log((C - c) / (C - mu)) if C - c else 0.0)
                    best[i] = max(best[i], llr)
    return best


def _problem(seed, L=12, T=9):
    rng = np.random.default_rng(seed)
    coords = np.unique(rng.integers(0, 6, size=(L, 2)), axis=0).astype(float)
    c_lt = rng.poisson(0.8, size=(len(coords), T))
    c_lt[0, -2:] += 3
    return coords, c_lt


@pytest.mark.parametrize("backend", ENGINES)
@pytest.mark.parametrize("prospective", [False, True])
@pytest.mark.parametrize("direction", ["high", "both"])
def test_cylinder_kernel_matches_bruteforce(backend, prospective, direction):
    coords, c_lt = _problem(1)
    L, T = c_lt.shape
    C = int(c_lt.sum())
    Cz = c_lt.sum(axis=1)
    windows = sw.build_windows(coords, coords, Cz, 0.5 * C)
    dcum = np.concatenate([[0.0], np.cumsum(c_lt.sum(axis=0)).astype(float)])
    eng = se.make_space_time_engine(windows, dcum, se.klogk_table(C), C, 4, T - 1 if prospective else 0, 2, direction,
                                    backend=hp._backend.resolve_backend(backend))
    best, arg = eng.batch(c_lt[:, :, None].astype(np.int32), want_arg=True)
    ref = ref_best(coords, c_lt, 0.5, 4, prospective, 2, direction)
    assert ref.max() > 1
    np.testing.assert_allclose(best[:, 0], ref, rtol=1e-10, atol=1e-10)
    assert ((arg[:, 0] >= 0) == (ref > 0)).all()


def test_permutation_keeps_margins_and_is_uniform():
    coords, c_lt = _problem(2)
    L, T = c_lt.shape
    loc = np.repeat(np.repeat(np.arange(L), T), c_lt.ravel())
    day = np.repeat(np.tile(np.arange(T), L), c_lt.ravel())
    from hphawkes_py._parallel import spawn_seeds

    M = null_draws.permute_days_cases(loc, day, L, T, spawn_seeds(0, 4000))
    assert M.shape == (L, T, 4000)
    np.testing.assert_array_equal(M.sum(axis=1), np.repeat(c_lt.sum(axis=1)[:, None], 4000, axis=1))
    np.testing.assert_array_equal(M.sum(axis=0), np.repeat(c_lt.sum(axis=0)[:, None], 4000, axis=1))
    # E[c_zd] = C_z C_d / C under the permutation
    mu = np.outer(c_lt.sum(axis=1), c_lt.sum(axis=0)) / c_lt.sum()
    assert np.abs(M.mean(axis=2) - mu).max() < 0.1


def test_planted_outbreak_found_and_dates():
    rng = np.random.default_rng(5)
    L, T = 60, 30
    coords = rng.uniform(0, 10, size=(L, 2))
    c_lt = rng.poisson(0.3, size=(L, T))
    near = np.hypot(coords[:, 0] - 3, coords[:, 1] - 7) < 1.5
    c_lt[np.ix_(near, np.arange(25, 28))] += 4
    rows = np.argwhere(c_lt > 0)
    dates = np.datetime64("2024-03-01") + rows[:, 1].astype("timedelta64[D]")
    res = hp.scan.space_time_permutation(coords[rows[:, 0]], c_lt[rows[:, 0], rows[:, 1]], dates, max_temporal=7,
                                         n_replicates=99, seed=1, progress=False, backend="cpu")
    top = res.clusters.iloc[0]
    assert res.model == "space_time_permutation" and top.p_value == 0.01
    assert top.start >= np.datetime64("2024-03-24") and top.end <= np.datetime64("2024-03-29")
    assert set(top.location_ids) & set(np.flatnonzero(near[rows[:, 0]]))  # rows of the outbreak locations
    lt = res.location_table()
    assert (lt.cluster == 1).sum() == top.n_locations and lt.expected.isna().all()
    pro = hp.scan.space_time_permutation(coords[rows[:, 0]], c_lt[rows[:, 0], rows[:, 1]], rows[:, 1],
                                         prospective=True, n_replicates=19, seed=1, progress=False, backend="cpu")
    assert (pro.clusters.end == T - 1).all()


def test_nycfever_prospective_runs():
    S = hp.datasets.satscan_sample_path
    rows = [line.split() for line in S("NYCfever.cas").read_text().splitlines() if line.strip()]
    geo = {p[0]: (float(p[1]), float(p[2])) for p in (ln.split() for ln in S("NYCfever.geo").read_text().splitlines())
           if p}
    ids = [r[0] for r in rows]
    res = hp.scan.space_time_permutation(np.array([geo[i] for i in ids]), [int(r[1]) for r in rows],
                                         pd.Series(pd.to_datetime([r[2] for r in rows], format="%Y/%m/%d")),
                                         distance="great_circle", max_distance=3.0, max_temporal=7, prospective=True,
                                         n_replicates=19, seed=1, location_ids=ids, progress=False, backend="cpu")
    assert res.n_cases == 194 and (res.clusters.radius <= 3.0).all()
    assert (res.clusters.end == pd.Timestamp("2001-11-24")).all()


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(times=[0.5, 1, 2]), ValueError, "times must be whole days"),
        (dict(times=[True, False, True]), TypeError, "times must be whole days"),
        (dict(times=["a", "b", "c"]), TypeError, "times"),
        (dict(times=[1, 2]), ValueError, "one time per row"),
        (dict(max_temporal=0), ValueError, "max_temporal must be >= 1"),
        (dict(prospective="yes"), TypeError, "prospective must be True or False"),
        (dict(backend="tpu"), ValueError, "backend"),
        (dict(cases=[1, 0, 0]), ValueError, "at least 2 cases"),
        (dict(n_replicates=10**12), ValueError, "too many"),
    ],
)
def test_space_time_bad_input(kwargs, exc, match):
    base = dict(coords=[[0, 0], [1, 1], [2, 2]], cases=[1, 2, 1], times=[0, 1, 2], n_replicates=9, progress=False,
                backend="cpu")
    base.update(kwargs)
    with pytest.raises(exc, match=match):
        hp.scan.space_time_permutation(**base)


@pytest.mark.parametrize("backend", CUDA_ENGINES)
def test_space_time_cpu_and_cuda_engines_agree(backend):
    coords, c_lt = _problem(4, L=20, T=12)
    rows = np.argwhere(c_lt > 0)
    kw = dict(max_temporal=5, n_replicates=40, seed=3, progress=False, direction="both")
    a = hp.scan.space_time_permutation(coords[rows[:, 0]], c_lt[rows[:, 0], rows[:, 1]], rows[:, 1], backend="cpu", **kw)
    b = hp.scan.space_time_permutation(coords[rows[:, 0]], c_lt[rows[:, 0], rows[:, 1]], rows[:, 1], backend=backend,
                                       **kw)
    assert b.backend == backend
    np.testing.assert_allclose(b.null_llr, a.null_llr, rtol=1e-12)
    pd.testing.assert_frame_equal(a.clusters, b.clusters, rtol=1e-12)


def ref_best_poisson(coords, c_lt, P, max_fraction, max_t, min_cases):
    """Space-time Poisson brute force: mu = E_Z (t2 - t1 + 1) / T, E_z = C P_z / sum P."""
    L, T = c_lt.shape
    C = c_lt.sum()
    E = C * P / P.sum()
    best = np.zeros(L)
    for i in range(L):
        d2 = ((coords - coords[i]) ** 2).sum(axis=1)
        for Z in circle_prefixes(d2, coords, P, max_fraction * P.sum()):
            for t2 in range(T):
                for t1 in range(max(0, t2 - max_t + 1), t2 + 1):
                    c = c_lt[np.ix_(Z, np.arange(t1, t2 + 1))].sum()
                    mu = E[Z].sum() * (t2 - t1 + 1) / T
                    if c > mu and c >= min_cases:
                        llr = c * np.log(c / mu) + ((C - c) * np.log((C - c) / (C - mu)) if C > c else 0.0)
                        best[i] = max(best[i], llr)
    return best


@pytest.mark.parametrize("backend", ENGINES)
def test_space_time_poisson_matches_bruteforce(backend):
    coords, c_lt = _problem(6, L=14, T=8)
    rng = np.random.default_rng(1)
    P = rng.integers(50, 500, size=len(coords)).astype(float)
    rows = np.argwhere(np.ones_like(c_lt, dtype=bool))  # every location x day, zeros included
    res = hp.scan.space_time(coords[rows[:, 0]], c_lt[rows[:, 0], rows[:, 1]], rows[:, 1], population=P[rows[:, 0]],
                             max_temporal=3, max_population=0.5, n_replicates=19, seed=2, progress=False,
                             backend=backend)
    ref = ref_best_poisson(coords, c_lt, P, 0.5, 3, 2)
    assert res.model == "space_time_poisson"
    assert res.clusters.log_likelihood_ratio.iloc[0] == pytest.approx(ref.max(), rel=1e-10)
    assert res.n_population == P.sum()
    # the multinomial null keeps C and puts the cases where the population is
    assert (res.null_llr > 0).all()


def test_space_time_poisson_bad_population():
    kw = dict(coords=[[0, 0], [0, 0], [1, 1]], cases=[1, 2, 1], times=[0, 1, 2], n_replicates=9, progress=False,
              backend="cpu")
    with pytest.raises(ValueError, match="same on every row of a location"):
        hp.scan.space_time(**kw, population=[10, 20, 5])
    with pytest.raises(ValueError, match="population must be non-negative"):
        hp.scan.space_time(**kw, population=[10, 10, -5])
    with pytest.raises(ValueError, match="zero population"):
        hp.scan.space_time(**kw, population=[10, 10, 0])


def test_cli_reproduce_scan_nycfever_matches_satscan(tmp_path, capsys):
    from hphawkes_py.cli import main

    out = tmp_path / "nyc"
    rc = main(["reproduce", "scan-nycfever", "--replicates", "99", "--backend", "cpu", "--out", str(out)])
    text = capsys.readouterr().out
    assert rc == 0 and "clusters match" in text
    assert "3.845418   3.845418" in text and "2.137259   2.137259" in text
    assert {p.name for p in out.iterdir()} >= {"clusters.csv", "comparison.csv", "summary.txt", "clusters.png"}


@pytest.mark.parametrize("model", ["permutation", "bernoulli"])
@pytest.mark.parametrize("direction, min_cases", [("high", 0), ("high", 2), ("both", 0)])
def test_pilot_floor_and_group_pruning_keep_the_replicate_maxima(model, direction, min_cases, monkeypatch):
    """The CPU engine's Monte Carlo maxima (a pilot over every 2nd centre here, itself floored by one over
    every 4th, its maxima as the floor of the full pass, the high-rate test per group of replicates)
    against brute force (explicit cylinders, np.log) for 40 replicates (one partial group), and bit for
    bit against the plain per-centre pass; a floor above every LLR comes back unchanged (it is the start
    of every maximum, not a cut-off)."""
    import naive_scan as ns

    from hphawkes_py.scan import cpu_space_time

    monkeypatch.setattr(cpu_space_time.CpuSpaceTimeEngine, "PILOT_STRIDE", 2)
    monkeypatch.setattr(cpu_space_time.CpuSpaceTimeEngine, "PILOT_COARSEN", 2)
    rng = np.random.default_rng(7)
    L, T, R = 20, 6, 40  # 20 centres: both pilots run (at least 4 centres each)
    coords = rng.uniform(0, 10, size=(L, 2))
    if model == "permutation":
        c_lt = rng.poisson(1.5, size=(L, T))
        C = int(c_lt.sum())
        windows = sw.build_windows(coords, coords, c_lt.sum(axis=1), 0.3 * C)
        dcum = np.concatenate([[0.0], np.cumsum(c_lt.sum(axis=0)).astype(float)])
        eng = cpu_space_time.CpuSpaceTimeEngine(windows, dcum, se.klogk_table(C), C, 4, 0, min_cases, direction)
        loc, day = np.repeat(np.arange(L), c_lt.sum(axis=1)), np.concatenate([np.repeat(np.arange(T), r) for r in c_lt])
        M = null_draws.permute_days_cases(loc, day, L, T, np.random.SeedSequence(1).spawn(R))
        check = list(range(R))
        ref = [ref_best(coords, M[:, :, r], 0.3, 4, False, min_cases, direction).max() for r in check]
    else:
        persons = rng.integers(1, 6, size=(L, T))
        c_lt = rng.binomial(persons, 0.15)
        C, N = int(c_lt.sum()), int(persons.sum())
        windows = sw.build_windows(coords, coords, persons.sum(axis=1), 0.3 * N)
        eng = cpu_space_time.CpuSpaceTimeEngine(windows, None, se.klogk_table(N), C, 4, 0, min_cases, direction, persons=persons)
        M = null_draws.draw_null_cases(persons.ravel(), C, np.random.SeedSequence(1).spawn(R)).reshape(L, T, R)
        # brute force for some replicates (it is slow); all 40 bit for bit below
        check = [0, 1, 2, 3, 4, 5, 30, 31, 32, 39]
        ref = [ns.space_time_bernoulli(coords, M[:, :, r], persons - M[:, :, r], 0.3, 4, False, min_cases,
                                       direction)[0].max() for r in check]
    M = np.ascontiguousarray(M, dtype=np.int32)
    got = eng.max_llr(M)
    np.testing.assert_allclose(got[check], ref, rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(got, eng.batch(M)[0].max(axis=0))
    if model == "permutation":
        # per centre with a floor just below the maxima: max(floor, the centre's own best), so the
        # skipping test must keep every cylinder that beats the floor by any margin (one replicate
        # per call: a group's largest count is then that replicate's own)
        floor = 0.9 * got
        for r in range(0, R, 3):
            per_centre = eng.batch(np.ascontiguousarray(M[:, :, r:r + 1]), floor=floor[r:r + 1])[0][:, 0]
            want = np.maximum(floor[r], ref_best(coords, M[:, :, r], 0.3, 4, False, min_cases, direction))
            np.testing.assert_allclose(per_centre, want, rtol=1e-10, atol=1e-10)
    # the pilot alone bounds the maxima from below, and a floor is the start of every maximum
    pilot = eng.batch(M, centre_ids=np.arange(0, L, 4))[0].max(axis=0)
    assert (pilot <= got).all() and (pilot < got).any()
    high = np.full(R, got.max() + 1.0)
    np.testing.assert_array_equal(eng.batch(M, floor=high)[0].max(axis=0), high)


@pytest.mark.parametrize("T, max_t", [(1, 1), (2, 5), (9, 3), (30, 7), (40, 40)])
def test_overlap_candidates_against_recursion(T, max_t):
    """The retrospective candidates (each centre's best cylinder, then the best wholly before and after it,
    recursively) against plain recursion over the interval tables, with many equal LLRs (so that the
    order among ties, the latest end day and then the latest start day, decides) and LLRs at the
    threshold of 1."""
    import naive_scan as ns

    from hphawkes_py.scan.cpu_space_time import overlap_candidates

    rng = np.random.default_rng(T * 100 + max_t)
    K, mt = 25, min(max_t, T)
    val = rng.choice([0.0, 0.5, 1.0, 1.5, 2.0, 3.0], size=(K, T, mt))
    code = rng.integers(0, 1000, size=(K, T, mt))
    t2_of = rng.integers(0, T, K)
    t1_of = np.maximum(0, t2_of - rng.integers(0, mt, K))
    best = rng.choice([0.0, 4.0], size=K, p=[0.2, 0.8])
    j_of = rng.integers(0, 1000, K)
    ref = ns.overlap_candidates(val, code, best, j_of, t1_of, t2_of)
    for lo in (0, 7):  # a chunk of centres starting at lo
        got = overlap_candidates(val[lo:], code[lo:], best, j_of, t1_of, t2_of, lo, 1.0)
        want = [r for r in ref if r[0] >= lo]
        assert [tuple(x) for x in zip(*(g.tolist() for g in got))] == want
    assert T < 9 or sum(r[0] == ref[1][0] for r in ref) > 2  # the recursion went deeper than one level


def test_surveillance_start_adjusts_the_null_only():
    """surveillance_start (adjusting for earlier analyses): the same observed clusters, larger replicate
    maxima (cylinders ending on every day of the surveillance), and the settings it needs."""
    coords, c_lt = _problem(8, L=16, T=14)
    rows = np.argwhere(c_lt >= 0)
    xy, cases, days = coords[rows[:, 0]], c_lt[rows[:, 0], rows[:, 1]], rows[:, 1]
    kw = dict(max_temporal=4, n_replicates=99, seed=2, progress=False, backend="cpu", prospective=True,
              max_population=None, max_distance=2.5)
    once = hp.scan.space_time_permutation(xy, cases, days, **kw)
    adjusted = hp.scan.space_time_permutation(xy, cases, days, surveillance_start=7, **kw)
    # the listed clusters (fewer may pass SaTScan's p < 1 rule) are the unadjusted analysis's first ones
    k = len(adjusted.clusters)
    assert k >= 1
    pd.testing.assert_frame_equal(once.clusters.drop(columns=["p_value", "gumbel_p_value"]).iloc[:k],
                                  adjusted.clusters.drop(columns=["p_value", "gumbel_p_value"]))
    assert (adjusted.null_llr >= once.null_llr - 1e-12).all() and (adjusted.null_llr > once.null_llr).any()
    assert (adjusted.clusters.p_value.to_numpy() >= once.clusters.p_value.to_numpy()[:k]).all()
    with pytest.raises(ValueError, match="surveillance_start .* is for prospective analyses"):
        hp.scan.space_time_permutation(xy, cases, days, surveillance_start=7, **{**kw, "prospective": False})
    with pytest.raises(ValueError, match="outside the study period"):
        hp.scan.space_time_permutation(xy, cases, days, surveillance_start=20, **kw)
    with pytest.raises(ValueError, match="max_population=None .* needs max_distance"):
        hp.scan.space_time_permutation(xy, cases, days, **{**kw, "max_distance": None})
