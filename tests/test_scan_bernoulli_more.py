"""Elliptic windows for the Bernoulli scan and the space-time Bernoulli scan: against the brute-force
NumPy references of naive_scan.py (CPU engine and the CUDA kernels on the emulator), circle-only
ellipse sets equal the circular scan, planted clusters, .prm files, bad input."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import hphawkes_py as hp
from hphawkes_py._backend import resolve_backend
from hphawkes_py.scan import engine as se
from hphawkes_py.scan import null_draws
from hphawkes_py.scan import windows as sw
from hphawkes_py.scan.ellipses import _elliptic_windows, ellipse_set

sys.path.insert(0, str(Path(__file__).parent))
import naive_scan as ns  # noqa: E402
from engines import CUDA_ENGINES, ENGINES  # noqa: E402

SAT = hp.datasets.satscan_sample_path
ELL = ellipse_set((1.5, 3), (4, 6))  # the circle + 10 ellipses


def _spatial(seed, L=18):
    rng = np.random.default_rng(seed)
    coords = rng.uniform(0, 10, size=(L, 2))
    controls = rng.integers(1, 8, size=L)
    cases = rng.binomial(controls + 1, 0.25)
    cases[:3] += 3
    return coords, cases, controls


# --------------------------------------------------------------------------- elliptic Bernoulli
@pytest.mark.parametrize("backend", ENGINES)
@pytest.mark.parametrize("direction", ["high", "both"])
def test_elliptic_windows_match_reference(backend, direction):
    coords, cases, controls = _spatial(1)
    pop = cases + controls
    C, N = int(cases.sum()), int(pop.sum())
    windows = _elliptic_windows(coords, coords, pop, 0.5 * N, ELL)
    eng = se.make_engine(windows, se.klogk_table(N), C, N, direction, backend=resolve_backend(backend),
                         location_size=pop)
    best, _ = eng.best_per_centre(cases.astype(np.int32)[:, None], want_arg=True)
    ref = ns.scan_elliptic(coords, cases, controls, ELL, 0.5, direction)
    assert ref.max() > 1
    np.testing.assert_allclose(best[:, 0].reshape(len(ELL), -1), ref, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("backend", ENGINES)
@pytest.mark.parametrize("penalty, a", [("none", 0.0), ("medium", 0.5), ("strong", 1.0)])
def test_elliptic_bernoulli_most_likely_matches_reference(backend, penalty, a):
    coords, cases, controls = _spatial(2)
    res = hp.scan.bernoulli(coords, cases, controls, window="ellipse", ellipse_shapes=(1.5, 3), ellipse_angles=(4, 6),
                            penalty=penalty, n_replicates=19, seed=1, progress=False, backend=backend)
    ref = ns.scan_elliptic(coords, cases, controls, ELL)
    pen = np.array([(4 * s / (1 + s) ** 2) ** a for s, _ in ELL])
    stat = ref * pen[:, None]
    e, i = np.unravel_index(np.argmax(stat), stat.shape)
    top = res.clusters.iloc[0]
    assert top.test_statistic == pytest.approx(stat.max(), rel=1e-10)
    assert top.log_likelihood_ratio == pytest.approx(ref[e, i], rel=1e-10)
    assert (top["shape"], top.angle) == ELL[e]
    assert top.semimajor_axis == pytest.approx(top.radius * top["shape"])
    # the window's members are exactly the locations within the ellipse's semiminor axis (to single
    # precision: the elliptic distances use SaTScan's arithmetic, its shape weight 1 / shape in float)
    d2 = ns.ellipse_distance2(coords[top.center], coords, *ELL[e])
    inside = np.zeros(len(coords), dtype=bool)
    inside[top.location_ids] = True
    assert (d2[inside] <= top.radius ** 2 * (1 + 1e-6)).all() and (d2[~inside] > top.radius ** 2 * (1 - 1e-6)).all()
    assert top.cases == cases[top.location_ids].sum()
    # Monte Carlo statistic: the penalised maximum, never above the unpenalised one
    assert (res.null_llr > 0).all() and res.model == "bernoulli"


@pytest.mark.parametrize("direction, min_cases", [("high", 2), ("both", 0), ("low", 0)])
def test_penalised_monte_carlo_maximum_is_pruned_and_exact(direction, min_cases):
    """The CPU engine's penalised null maxima (pruned per run of equal penalties) equal the maximum of
    every centre's best LLR times its penalty, bit for bit, on 200 null replicates."""
    from hphawkes_py.scan.ellipses import _elliptic_penalties
    from hphawkes_py.scan.null_draws import draw_null_cases

    coords, cases, controls = _spatial(6, L=60)
    pop = cases + controls
    C, N = int(cases.sum()), int(pop.sum())
    windows = _elliptic_windows(coords, coords, pop, 0.5 * N, ELL)
    eng = se.make_engine(windows, se.klogk_table(N), C, N, direction, backend="cpu", location_size=pop,
                         min_cases=min_cases)
    pens = _elliptic_penalties(ELL, len(coords), 0.5)
    null = draw_null_cases(pop, C, np.random.SeedSequence(3).spawn(200))
    best, _ = eng.best_per_centre(null)
    ref = (best * pens[:, None]).max(axis=0)
    got = eng.max_llr_penalised(null, pens)
    assert ref.max() > 1
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("backend", CUDA_ENGINES)
def test_elliptic_bernoulli_cpu_and_cuda_engines_identical(backend):
    coords, cases, controls = _spatial(3, L=25)
    kw = dict(window="ellipse", penalty="medium", n_replicates=30, seed=4, progress=False, min_cases=2)
    a = hp.scan.bernoulli(coords, cases, controls, backend="cpu", **kw)
    b = hp.scan.bernoulli(coords, cases, controls, backend=backend, **kw)
    np.testing.assert_array_equal(a.null_llr, b.null_llr)
    pd.testing.assert_frame_equal(a.clusters, b.clusters)


@pytest.mark.parametrize("backend", ENGINES)
@pytest.mark.parametrize("penalty", ["none", "strong"])
def test_circle_only_ellipse_set_equals_circular_scan(backend, penalty):
    coords, cases, controls = _spatial(4, L=30)
    kw = dict(n_replicates=49, seed=7, progress=False, backend=backend, min_cases=2, max_population=0.3)
    circ = hp.scan.bernoulli(coords, cases, controls, **kw)
    ell = hp.scan.bernoulli(coords, cases, controls, window="ellipse", ellipse_shapes=(), ellipse_angles=(),
                            penalty=penalty, **kw)
    np.testing.assert_array_equal(ell.null_llr, circ.null_llr)
    assert (ell.clusters["shape"] == 1.0).all() and (ell.clusters.angle == 0.0).all()
    np.testing.assert_array_equal(ell.clusters.test_statistic, ell.clusters.log_likelihood_ratio)
    pd.testing.assert_frame_equal(ell.clusters[circ.clusters.columns], circ.clusters)
    assert ell.n_windows == circ.n_windows


def test_elliptic_bernoulli_planted_elongated_cluster():
    # a long thin band of high risk along the 45 degree diagonal: an elongated ellipse finds it
    rng = np.random.default_rng(11)
    coords = rng.uniform(0, 20, size=(300, 2))
    controls = rng.integers(5, 15, size=300)
    along = (coords[:, 0] + coords[:, 1]) / np.sqrt(2) - 20 / np.sqrt(2)
    across = (coords[:, 1] - coords[:, 0]) / np.sqrt(2)
    band = (np.abs(across) < 0.8) & (np.abs(along) < 5)
    cases = rng.binomial(controls, np.where(band, 0.45, 0.1))
    res = hp.scan.bernoulli(coords, cases, controls, window="ellipse", penalty="medium", max_population=0.2,
                            n_replicates=99, seed=2, progress=False, backend="cpu")
    top = res.clusters.iloc[0]
    assert top.p_value == 0.01 and top["shape"] >= 3 and top.angle == 45.0
    got = np.zeros(300, dtype=bool)
    got[top.location_ids] = True
    assert (got & band).sum() >= 0.7 * band.sum() and (got & ~band).sum() <= 0.3 * got.sum()


def test_run_prm_bernoulli_elliptic(tmp_path):
    prm = SAT("NHumbersideSpatialBernoulli.prm")
    for f in ("NHumberside.cas", "NHumberside.ctl", "NHumberside.geo"):
        (tmp_path / f).write_bytes(SAT(f).read_bytes())
    text = prm.read_text().replace("SpatialWindowShapeType=0", "SpatialWindowShapeType=1")
    if "SpatialWindowShapeType=1" not in text:
        text += "\n[Extra]\nSpatialWindowShapeType=1\n"
    p = tmp_path / "e.prm"
    p.write_text(text)
    spec = hp.scan._prm.prm_arguments(p)
    assert spec["model"] == "bernoulli" and spec["kwargs"]["window"] == "ellipse"
    res = hp.scan.run_prm(p, n_replicates=9, seed=1, progress=False, backend="cpu")
    df = hp.scan.read_satscan(SAT("NHumberside.cas"), control_file=SAT("NHumberside.ctl"),
                              geo_file=SAT("NHumberside.geo"))
    direct = hp.scan.bernoulli(df[["x", "y"]].to_numpy(float), df.cases, df.controls, location_ids=df.location_id,
                               **{**spec["kwargs"], "n_replicates": 9}, seed=1, progress=False, backend="cpu")
    pd.testing.assert_frame_equal(res.clusters, direct.clusters)
    assert "test_statistic" in res.clusters.columns


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(window="square"), ValueError, "window must be one of"),
        (dict(window="ellipse", penalty="mild"), ValueError, "penalty must be one of"),
        (dict(window="ellipse", max_distance=1.0), ValueError, "Euclidean coordinates"),
        (dict(window="ellipse", grid_cell=1.0), ValueError, "Euclidean coordinates"),
        (dict(window="ellipse", ellipse_shapes=(2, 3), ellipse_angles=(4,)), ValueError, "same length"),
        (dict(window="ellipse", ellipse_shapes=(0.5,), ellipse_angles=(4,)), ValueError, "each > 1"),
        (dict(window="ellipse", ellipse_shapes=(2,), ellipse_angles=(0,)), ValueError, "ellipse_angles"),
        (dict(window="ellipse", cases=[1, -1, 1]), ValueError, "cases"),
        (dict(window="ellipse", controls=[0, 0, 0]), ValueError, "controls sum to 0"),
    ],
)
def test_elliptic_bernoulli_bad_input(kwargs, exc, match):
    base = dict(coords=[[0, 0], [1, 1], [2, 3]], cases=[1, 0, 1], controls=[3, 4, 2], n_replicates=9, progress=False,
                backend="cpu")
    base.update(kwargs)
    with pytest.raises(exc, match=match):
        hp.scan.bernoulli(**base)


# --------------------------------------------------------------------------- space-time Bernoulli
def _st(seed, L=11, T=7):
    rng = np.random.default_rng(seed)
    coords = np.unique(rng.integers(0, 6, size=(L, 2)), axis=0).astype(float)  # ties in distance
    ctl = rng.integers(0, 5, size=(len(coords), T))
    cas = rng.binomial(ctl + 1, 0.2)
    cas[0, -2:] += 3
    return coords, cas, ctl


@pytest.mark.parametrize("backend", ENGINES)
@pytest.mark.parametrize("prospective", [False, True])
@pytest.mark.parametrize("direction, min_cases", [("high", 2), ("both", 0), ("low", 0)])
def test_space_time_bernoulli_kernel_matches_reference(backend, prospective, direction, min_cases):
    coords, cas, ctl = _st(1)
    L, T = cas.shape
    p_lt = cas + ctl
    C, N = int(cas.sum()), int(p_lt.sum())
    windows = sw.build_windows(coords, coords, p_lt.sum(axis=1), 0.5 * N)
    eng = se.make_space_time_engine(windows, np.zeros(T + 1), se.klogk_table(N), C, 3, T - 1 if prospective else 0,
                                    min_cases, direction, backend=resolve_backend(backend), persons=p_lt)
    # the observed data and a few relabelled replicates (the pruning bar differs between columns)
    from hphawkes_py._parallel import spawn_seeds

    M = np.concatenate([cas[:, :, None], null_draws.draw_null_cases(p_lt.ravel(), C, spawn_seeds(3, 5)).reshape(L, T, 5)],
                       axis=2).astype(np.int32)
    best, arg = eng.batch(M, want_arg=True)
    for r in range(M.shape[2]):
        ref, _ = ns.space_time_bernoulli(coords, M[:, :, r], p_lt - M[:, :, r], 0.5, 3, prospective, min_cases,
                                         direction)
        np.testing.assert_allclose(best[:, r], ref, rtol=1e-10, atol=1e-10)
        assert ((arg[:, r] >= 0) == (ref > 0)).all()
    assert best[:, 0].max() > 1
    mx, _ = eng.batch(M)
    np.testing.assert_allclose(mx.max(axis=0), best.max(axis=0), rtol=1e-12)


@pytest.mark.parametrize("backend", ENGINES)
def test_space_time_bernoulli_clusters_match_reference(backend):
    coords, cas, ctl = _st(2, L=14, T=8)
    rows = np.argwhere(np.ones_like(cas, dtype=bool))
    dates = np.datetime64("2024-01-01") + rows[:, 1].astype("timedelta64[D]")
    res = hp.scan.space_time(coords[rows[:, 0]], cas[rows[:, 0], rows[:, 1]], dates, model="bernoulli",
                             controls=ctl[rows[:, 0], rows[:, 1]], max_temporal=3, n_replicates=19, seed=2,
                             progress=False, backend=backend)
    ref, arg = ns.space_time_bernoulli(coords, cas, ctl, 0.5, 3, False, 2, "high")
    i = int(np.argmax(ref))
    Z, t1, t2 = arg[i]
    top = res.clusters.iloc[0]
    assert res.model == "space_time_bernoulli" and res.backend == backend
    assert top.log_likelihood_ratio == pytest.approx(ref.max(), rel=1e-10)
    C, N = int(cas.sum()), int((cas + ctl).sum())
    c, n = int(cas[list(Z), t1:t2 + 1].sum()), int((cas + ctl)[list(Z), t1:t2 + 1].sum())
    assert (top.cases, top.population, top.n_locations) == (c, n, len(Z))
    assert top.expected == pytest.approx(n * C / N) and top.relative_risk == pytest.approx((c / n) / ((C - c) / (N - n)))
    assert (top.start, top.end) == (np.datetime64("2024-01-01") + t1, np.datetime64("2024-01-01") + t2)
    assert res.n_cases == C and res.n_population == N and len(res.null_llr) == 19
    assert list(res.clusters.columns[:6]) == ["center", "x", "y", "radius", "start", "end"]
    lt = res.location_table()
    assert (lt.cluster == 1).sum() == top.n_locations


@pytest.mark.parametrize("backend", CUDA_ENGINES)
def test_space_time_bernoulli_cpu_and_cuda_engines_agree(backend):
    coords, cas, ctl = _st(4, L=20, T=10)
    rows = np.argwhere(np.ones_like(cas, dtype=bool))
    kw = dict(model="bernoulli", controls=ctl[rows[:, 0], rows[:, 1]], max_temporal=4, n_replicates=40, seed=3,
              progress=False, direction="both")
    a = hp.scan.space_time(coords[rows[:, 0]], cas[rows[:, 0], rows[:, 1]], rows[:, 1], backend="cpu", **kw)
    b = hp.scan.space_time(coords[rows[:, 0]], cas[rows[:, 0], rows[:, 1]], rows[:, 1], backend=backend, **kw)
    np.testing.assert_allclose(b.null_llr, a.null_llr, rtol=1e-12)
    pd.testing.assert_frame_equal(a.clusters, b.clusters, rtol=1e-12)


def test_space_time_bernoulli_null_relabels_cases_among_persons():
    coords, cas, ctl = _st(5)
    p = (cas + ctl).ravel()
    from hphawkes_py._parallel import spawn_seeds

    M = null_draws.draw_null_cases(p, int(cas.sum()), spawn_seeds(0, 3000))
    assert (M.sum(axis=0) == cas.sum()).all() and (M <= p[:, None]).all()
    # E[c_zt] = C p_zt / N under the relabelling
    assert np.abs(M.mean(axis=1) - cas.sum() * p / p.sum()).max() < 0.12


def test_space_time_bernoulli_planted_cluster():
    rng = np.random.default_rng(8)
    L, T = 50, 20
    coords = rng.uniform(0, 10, size=(L, 2))
    persons = rng.integers(3, 9, size=(L, T))
    near = np.hypot(coords[:, 0] - 6, coords[:, 1] - 4) < 1.8
    risk = np.full((L, T), 0.1)
    risk[np.ix_(near, np.arange(14, 17))] = 0.6
    cas = rng.binomial(persons, risk)
    ctl = persons - cas
    rows = np.argwhere(persons > 0)
    res = hp.scan.space_time(coords[rows[:, 0]], cas[rows[:, 0], rows[:, 1]], rows[:, 1], model="bernoulli",
                             controls=ctl[rows[:, 0], rows[:, 1]], max_temporal=5, max_population=0.25,
                             n_replicates=99, seed=1, progress=False, backend="cpu")
    top = res.clusters.iloc[0]
    assert top.p_value == 0.01 and 13 <= top.start <= 15 and 15 <= top.end <= 17
    loc = set(rows[top.location_ids, 0].tolist())
    assert len(loc & set(np.flatnonzero(near).tolist())) >= 0.7 * near.sum()
    pro = hp.scan.space_time(coords[rows[:, 0]], cas[rows[:, 0], rows[:, 1]], rows[:, 1], model="bernoulli",
                             controls=ctl[rows[:, 0], rows[:, 1]], prospective=True, n_replicates=19, seed=1,
                             progress=False, backend="cpu")
    assert (pro.clusters.end == T - 1).all()


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(cases=[1, -2, 1]), ValueError, "cases"),
        (dict(controls=[1, -2, 1]), ValueError, "controls"),
        (dict(controls=[1, 2]), ValueError, "same length"),
        (dict(controls=[0, 0, 0]), ValueError, "controls sum to 0"),
        (dict(controls=None), ValueError, "needs controls="),
        (dict(population=[5, 5, 5]), ValueError, "not population="),
        (dict(model="normal"), ValueError, "model must be one of"),
        (dict(cases=[1, 0, 0]), ValueError, "at least 2 cases"),
        (dict(max_temporal=0), ValueError, "max_temporal must be >= 1"),
        (dict(controls=[0.5, 1, 1]), ValueError, "controls"),
    ],
)
def test_space_time_bernoulli_bad_input(kwargs, exc, match):
    base = dict(coords=[[0, 0], [1, 1], [2, 2]], cases=[1, 2, 1], times=[0, 1, 2], controls=[2, 3, 1],
                model="bernoulli", n_replicates=9, progress=False, backend="cpu")
    base.update(kwargs)
    with pytest.raises(exc, match=match):
        hp.scan.space_time(**base)


def test_space_time_poisson_refuses_controls():
    with pytest.raises(ValueError, match="controls= is for model='bernoulli'"):
        hp.scan.space_time([[0, 0], [1, 1]], [1, 2], [0, 1], population=[5, 5], controls=[1, 1], n_replicates=9,
                           progress=False, backend="cpu")
    with pytest.raises(ValueError, match="needs population="):
        hp.scan.space_time([[0, 0], [1, 1]], [1, 2], [0, 1], n_replicates=9, progress=False, backend="cpu")
