"""hp.scan.declustered: the Poisson scan of the background events of a Hawkes process (weights
1 - pi_n) beside the scan of all events. Aggregation and the real-count LLR against a brute-force
NumPy reference; pi = 0 gives the ordinary scan exactly; a simulated Hawkes data set with a
hotspot of background risk and a burst of contagion; label draws from a (draws, N) matrix;
hp.hawkes.self_excitation_draws; bad input."""
from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import hphawkes_py as hp
import hphawkes_py.hawkes as hk
from hphawkes_py.scan.declustering import weighted_poisson_llr

sys.path.insert(0, str(Path(__file__).parent))
from engines import CUDA_ENGINES  # noqa: E402
from naive_scan import circle_prefixes  # noqa: E402

KW = dict(n_replicates=49, progress=False, backend="cpu")


# ----------------------------------------------------------------- float64 NumPy reference
def ref_llr(c, e, B):
    """c log(c/E) + (B - c) log((B - c)/(B - E)) with np.log, 0 log 0 = 0, for real c."""
    a = c * np.log(c / e) if c > 0 else 0.0
    b = (B - c) * np.log((B - c) / (B - e)) if B - c > 0 else 0.0
    return a + b


def ref_grid(x, pi, g):
    """Occupied cells of side g anchored at the minimum (row-major cell order), events and
    sum(1 - pi) per cell."""
    ij = np.floor((x - x.min(0)) / g).astype(int)
    nx = ij[:, 0].max() + 1
    flat = ij[:, 1] * nx + ij[:, 0]
    cells = sorted(set(flat.tolist()))
    pos = {c: k for k, c in enumerate(cells)}
    loc = np.array([pos[f] for f in flat])
    centres = np.array([[x[:, 0].min() + g * (c % nx + 0.5), x[:, 1].min() + g * (c // nx + 0.5)] for c in cells])
    events = np.array([(loc == k).sum() for k in range(len(cells))])
    background = np.array([(1 - pi[loc == k]).sum() for k in range(len(cells))])
    return centres, loc, events, background


def ref_scan(centres, counts, size, max_fraction, min_cases):
    """Every circle centred on a location (SaTScan's windows, :func:`circle_prefixes`) while its size <= max_fraction
    x total; expected counts proportional to size, scaled to sum(counts). Returns {frozenset of
    members: LLR} of the high-rate windows."""
    B = counts.sum()
    e = size * (B / size.sum())
    D = ((centres[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2)
    out = {}
    for i in range(len(centres)):
        for m in circle_prefixes(D[i], centres, size, max_fraction * size.sum()):
            c, E = counts[m].sum(), e[m].sum()
            out[frozenset(m.tolist())] = ref_llr(c, E, B) if (c > E and c >= min_cases) else 0.0
    return out


def test_aggregation_and_real_count_llr_match_numpy_reference():
    rng = np.random.default_rng(11)
    x = np.vstack([rng.uniform(0, 6, (150, 2)), rng.normal([1.5, 4.5], 0.3, (30, 2))])
    pi = rng.uniform(0, 1, len(x))
    res = hp.scan.declustered(x, pi, cell_size=1.0, max_population=0.3, n_draws=0, seed=1, **KW)
    centres, loc, events, background = ref_grid(x, pi, 1.0)
    L = len(centres)
    t = res.locations
    np.testing.assert_allclose(t[["x", "y"]].to_numpy(), centres, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(res.event_location, loc)
    np.testing.assert_array_equal(t.events, events)
    np.testing.assert_allclose(t.background, background, rtol=1e-12)
    B = background.sum()
    assert res.background_total == pytest.approx(B, rel=1e-12) and res.n_events == len(x) == events.sum()
    np.testing.assert_allclose(t.expected_background, np.full(L, B / L), rtol=1e-12)
    np.testing.assert_allclose(t.expected, np.full(L, len(x) / L), rtol=1e-12)
    # the real-count LLR of every window, and the reported windows, against brute force
    ref = ref_scan(centres, background, np.ones(L), 0.3, 2)
    cl = res.declustered.clusters
    assert len(cl) >= 1
    top = max(ref.values())
    assert cl.log_likelihood_ratio.iloc[0] == pytest.approx(top, rel=1e-10)
    for row in cl.itertuples():
        m = frozenset(row.location_ids)
        assert row.log_likelihood_ratio == pytest.approx(ref[m], rel=1e-10)
        assert row.cases == pytest.approx(background[list(m)].sum(), rel=1e-12)
        assert row.expected == pytest.approx(B / L * len(m), rel=1e-12)
    # the ordinary clusters' windows re-scored on the background counts
    for row, o in zip(res.comparison.itertuples(), res.ordinary.clusters.itertuples()):
        m = list(o.location_ids)
        c, e = background[m].sum(), B / L * len(m)
        assert row.events == events[m].sum() and row.background == pytest.approx(c, rel=1e-12)
        assert row.background_log_likelihood_ratio == pytest.approx(ref_llr(c, e, B) if c > e else 0.0, rel=1e-10,
                                                                    abs=1e-12)
    # the LLR helper: integer counts give the engine's value bit for bit, real ones the reference
    assert weighted_poisson_llr(3.25, 1.5, 20.0) == pytest.approx(ref_llr(3.25, 1.5, 20.0), rel=1e-13)
    assert weighted_poisson_llr(0.0, 1.5, 20.0) == pytest.approx(ref_llr(0.0, 1.5, 20.0), rel=1e-13)


def _assert_same_scan(a, b):
    """Two ScanResults with the same clusters (cases compared as numbers) and the same null."""
    ca, cb = a.clusters, b.clusters
    assert len(ca) == len(cb) >= 1
    np.testing.assert_array_equal(ca.log_likelihood_ratio.to_numpy(), cb.log_likelihood_ratio.to_numpy())
    np.testing.assert_array_equal(ca.p_value.to_numpy(), cb.p_value.to_numpy())
    np.testing.assert_array_equal(ca.cases.to_numpy(dtype=float), cb.cases.to_numpy(dtype=float))
    np.testing.assert_array_equal(ca.expected.to_numpy(), cb.expected.to_numpy())
    assert [list(v) for v in ca.location_ids] == [list(v) for v in cb.location_ids]
    np.testing.assert_array_equal(a.null_llr, b.null_llr)


@pytest.mark.parametrize("two_d", [False, True])
def test_pi_zero_equals_the_ordinary_scan_exactly(two_d):
    rng = np.random.default_rng(5)
    x = np.vstack([rng.uniform(0, 8, (200, 2)), rng.normal([6, 2], 0.4, (40, 2))])
    pi = np.zeros((4, len(x))) if two_d else np.zeros(len(x))
    res = hp.scan.declustered(x, pi, cell_size=1.0, n_draws=None if two_d else 3, seed=9, **KW)
    # the ordinary scan is hp.scan.poisson of the cell counts with the same seed
    cells = res.locations
    direct = hp.scan.poisson(cells[["x", "y"]].to_numpy(), cells.events.to_numpy(), np.ones(len(cells), dtype=int),
                             seed=9, **KW)
    _assert_same_scan(res.ordinary, direct)
    # every background weight is 1: the declustered scans are the ordinary one
    _assert_same_scan(res.declustered, res.ordinary)
    assert res.background_total == len(x)
    assert len(res.draws) == (4 if two_d else 3)
    top = res.ordinary.clusters.iloc[0]
    assert (res.draws.n_background == len(x)).all()
    np.testing.assert_array_equal(res.draws.log_likelihood_ratio.to_numpy(dtype=float),
                                  np.full(len(res.draws), top.log_likelihood_ratio))
    sig = (cells.ordinary_cluster > 0).to_numpy()
    assert sig.any()
    np.testing.assert_array_equal(cells.p_in_cluster.to_numpy(), sig * 1.0)
    np.testing.assert_array_equal(cells.declustered_cluster, cells.ordinary_cluster)
    # each ordinary window re-tested on the background events: the same LLR, the same p-value
    comp = res.comparison
    np.testing.assert_allclose(comp.background_share, 1.0)
    np.testing.assert_allclose(comp.background_log_likelihood_ratio, comp.log_likelihood_ratio, rtol=1e-12)
    np.testing.assert_array_equal(comp.background_p_value, comp.p_value)
    np.testing.assert_array_equal(comp.draw_support, (comp.p_value <= 0.05) * 1.0)
    assert set(comp.verdict[comp.p_value <= 0.05]) == {"background hotspot"}
    assert set(comp.verdict[comp.p_value > 0.05]) <= {"not significant"}


def _hawkes_two_hotspots():
    """10 x 10 km over 2000 h: 300 uniform background events; a hotspot of background risk (80
    more background events, uniform in time, in a 0.5 km disc at (2.5, 2.5)); a burst of contagion
    (80 events within about 20 hours, 0.1 km around (7.5, 7.5))."""
    rng = np.random.default_rng(7)
    T = 2000.0
    bg = np.column_stack([rng.uniform(0, 10, (300, 2)), rng.uniform(0, T, 300)])
    r, a = 0.5 * np.sqrt(rng.uniform(size=80)), rng.uniform(0, 2 * np.pi, 80)
    hot = np.column_stack([2.5 + r * np.cos(a), 2.5 + r * np.sin(a), rng.uniform(0, T, 80)])
    burst = np.column_stack([rng.normal(7.5, 0.1, (80, 2)), 1000 + np.cumsum(rng.exponential(0.25, 80))])
    ev = np.vstack([bg, hot, burst])
    return ev[:, :2], ev[:, 2]


def test_background_hotspot_kept_and_contagion_cluster_dropped():
    x, t = _hawkes_two_hotspots()
    params = hk.HawkesParams(mu0=0.8, tau_x=1.6, tau_t=336.0, theta=0.2, omega=1.0, h=0.1)
    pi = hk.self_excitation_probabilities(x, t, params, backend="cpu")
    assert np.median(pi[380:]) > 0.95 and np.median(pi[300:380]) < 0.05  # the model sees the burst as contagion
    res = hp.scan.declustered(x, pi, cell_size=1.0, n_draws=20, seed=3, **KW)
    cells = res.locations
    hot = int(np.flatnonzero((cells.cell_ix == 2) & (cells.cell_iy == 2))[0])
    burst = int(np.flatnonzero((cells.cell_ix == 7) & (cells.cell_iy == 7))[0])
    # all events: both places are significant clusters
    assert cells.ordinary_cluster[hot] > 0 and cells.ordinary_cluster[burst] > 0
    # background events: the hotspot stays (in every draw), the burst is gone (in every draw)
    assert cells.declustered_cluster[hot] > 0 and cells.declustered_cluster[burst] == 0
    assert cells.p_in_cluster[hot] == 1.0 and cells.p_in_cluster[burst] == 0.0
    assert hot in res.declustered.clusters.location_ids.iloc[0]
    assert all(hot in ids for ids in res.draws.location_ids)
    comp = res.comparison.set_index("cluster")
    v_hot = comp.verdict[cells.ordinary_cluster[hot]]
    v_burst = comp.verdict[cells.ordinary_cluster[burst]]
    assert (v_hot, v_burst) == ("background hotspot", "contagion only")
    k_hot, k_burst = cells.ordinary_cluster[hot], cells.ordinary_cluster[burst]
    assert comp.background_share[k_burst] < 0.1
    assert comp.background_p_value[k_hot] <= 0.05 < comp.background_p_value[k_burst]
    assert comp.draw_support[k_hot] == 1.0 and comp.draw_support[k_burst] == 0.0
    # without label draws the verdicts come from the posterior-mean scan: the same here
    mean_only = hp.scan.declustered(x, pi, cell_size=1.0, n_draws=0, seed=3, **KW)
    pd.testing.assert_series_equal(mean_only.comparison.verdict, res.comparison.verdict)
    assert mean_only.comparison.draw_support.isna().all() and len(mean_only.draws) == 0
    assert "contagion only" in res.summary() and "1 contagion only" in repr(res)


def test_label_draws_come_from_the_rows_of_a_draws_matrix():
    rng = np.random.default_rng(2)
    x = rng.uniform(0, 5, (120, 2))
    pi = np.zeros((6, len(x)))
    pi[:, :30] = 1.0                      # always triggered
    pi[3, 30:60] = 1.0                    # triggered in draw 3 only
    res = hp.scan.declustered(x, pi, cell_size=1.0, seed=4, **KW)
    np.testing.assert_array_equal(res.draws.n_background, [90, 90, 90, 60, 90, 90])
    assert res.pi_source == "posterior draws" and res.n_draws == 6
    # the posterior-mean scan uses the mean over the rows
    np.testing.assert_allclose(res.locations.background.sum(), 120 - 30 - 30 / 6, rtol=1e-12)
    assert len(hp.scan.declustered(x, pi, cell_size=1.0, n_draws=2, seed=4, **KW).draws) == 2
    # reproducible
    again = hp.scan.declustered(x, pi, cell_size=1.0, seed=4, **KW)
    pd.testing.assert_frame_equal(res.draws, again.draws)
    pd.testing.assert_frame_equal(res.comparison, again.comparison)


def test_locations_population_and_nearest_assignment():
    rng = np.random.default_rng(8)
    gx, gy = np.meshgrid(np.arange(4.0), np.arange(4.0))
    loc = np.column_stack([gx.ravel(), gy.ravel()]) + 0.5
    pop = rng.integers(50, 200, len(loc))
    x = rng.uniform(0, 4, (160, 2))
    pi = rng.uniform(0, 0.5, len(x))
    res = hp.scan.declustered(x, pi, locations=loc, population=pop, n_draws=4, seed=6, **KW)
    near = np.argmin(((x[:, None, :] - loc[None]) ** 2).sum(axis=2), axis=1)
    np.testing.assert_array_equal(res.event_location, near)
    counts = np.bincount(near, minlength=len(loc))
    _assert_same_scan(res.ordinary, hp.scan.poisson(loc, counts, pop, seed=6, **KW))
    np.testing.assert_allclose(res.locations.expected_background, pop * (res.background_total / pop.sum()),
                               rtol=1e-12)
    # expected counts given instead of a population: same null shape, same scan
    by_exp = hp.scan.declustered(x, pi, locations=loc, expected=pop * 3.0, n_draws=0, seed=6, **KW)
    np.testing.assert_allclose(by_exp.declustered.clusters.log_likelihood_ratio.iloc[0],
                               res.declustered.clusters.log_likelihood_ratio.iloc[0], rtol=1e-10)


def test_keep_empty_cells_and_outputs(tmp_path):
    rng = np.random.default_rng(3)
    x = np.vstack([rng.uniform(0, 3, (60, 2)), rng.uniform(5, 8, (60, 2))])  # an empty band between
    pi = rng.uniform(0, 0.3, len(x))
    drop = hp.scan.declustered(x, pi, cell_size=1.0, n_draws=2, seed=1, **KW)
    keep = hp.scan.declustered(x, pi, cell_size=1.0, empty_cells="keep", n_draws=2, seed=1, **KW)
    n_cells = int(np.prod(np.floor((x.max(0) - x.min(0)) / 1.0) + 1))
    assert len(keep.locations) == n_cells and keep.n_empty_dropped == 0
    assert len(drop.locations) + drop.n_empty_dropped == n_cells
    assert keep.locations.events.sum() == drop.locations.events.sum() == len(x)
    d = drop.to_dict()
    assert d["n_events"] == len(x) and len(d["comparison"]) == len(drop.comparison)
    assert "Declustered Poisson spatial scan" in drop.summary()
    assert "Declustered Poisson spatial scan" in drop.declustered.summary()
    drop.declustered.location_table()
    import matplotlib

    matplotlib.use("Agg")
    fig = drop.plot(path=tmp_path / "d.png")
    assert (tmp_path / "d.png").exists() and len(fig.axes) >= 3


@pytest.mark.parametrize("backend", CUDA_ENGINES)
def test_cuda_engine_gives_the_cpu_result(backend):
    """The Monte Carlo nulls of every scan (ordinary, posterior-mean, per draw) on the CUDA engine
    (emulator, or a GPU when there is one): the same result as the CPU engine."""
    rng = np.random.default_rng(1)
    x = np.vstack([rng.uniform(0, 6, (150, 2)), rng.normal([1.5, 4.5], 0.3, (30, 2))])
    pi = rng.uniform(0, 1, len(x))
    kw = dict(cell_size=1.0, n_draws=3, n_replicates=19, seed=2, progress=False)
    a = hp.scan.declustered(x, pi, backend="cpu", **kw)
    b = hp.scan.declustered(x, pi, backend=backend, **kw)
    assert b.backend == backend
    pd.testing.assert_frame_equal(a.comparison, b.comparison)
    pd.testing.assert_frame_equal(a.draws, b.draws)
    np.testing.assert_array_equal(a.declustered.null_llr, b.declustered.null_llr)


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(pi=np.full(10, 1.5)), ValueError, r"pi must hold probabilities in \[0, 1\]; pi\[0\] = 1.5"),
    (dict(pi=np.full(9, 0.5)), ValueError, "pi must have one value per event"),
    (dict(pi=np.full((2, 10), np.nan)), ValueError, "pi must be finite"),
    (dict(pi=np.ones(10)), ValueError, "no background events"),
    (dict(pi=pd.DataFrame({"mean": np.zeros(10)})), TypeError, r"pi\['mean'\]"),
    (dict(coords=np.full((10, 2), np.inf)), ValueError, "coords must be finite"),
    (dict(cell_size=None), ValueError, "exactly one of cell_size"),
    (dict(locations=[[0, 0]]), ValueError, "exactly one of cell_size"),
    (dict(cell_size=-1.0), ValueError, "cell_size must be > 0"),
    (dict(population=np.ones(3)), ValueError, "population= and expected= go with locations="),
    (dict(empty_cells="none"), ValueError, "empty_cells must be one of"),
    (dict(n_draws=-1), ValueError, "n_draws must be >= 0"),
    (dict(pi=np.zeros((2, 10)), n_draws=3), ValueError, "n_draws must be <= 2"),
    (dict(alpha=1.0), ValueError, r"alpha must be in \(0, 1\)"),
    (dict(max_population=0.8), ValueError, "max_population"),
    (dict(cell_size=None, locations=[[0, 0], [0, 0]]), ValueError, "locations must be distinct"),
    (dict(cell_size=None, locations=[[0, 0], [5, 5]], population=[1.0]), ValueError,
     "population must have one value per location"),
    (dict(cell_size=None, locations=[[0, 0], [5, 5]], population=[1.0, 0.0]), ValueError,
     r"locations\[1\] receives \d+ event\(s\) but has zero population"),
    (dict(cell_size=None, locations=[[0, 0], [5, 5]], expected=[1.0, -1.0]), ValueError,
     "expected must be non-negative"),
])
def test_bad_input(kwargs, exc, match, monkeypatch):
    from hphawkes_py.scan import declustering, model

    def began(*a, **k):
        raise AssertionError("the scans began before the bad input was refused")

    # every scan (the ordinary one, the weighted ones) starts with these: none may run
    for mod, name in ((declustering, "poisson"), (declustering, "build_windows"), (declustering, "make_engine"),
                      (declustering, "_monte_carlo"), (model, "build_windows"), (model, "make_engine")):
        monkeypatch.setattr(mod, name, began)
    x = np.column_stack([np.arange(10.0), np.arange(10.0)])
    args = dict(coords=x, pi=np.zeros(10), cell_size=1.0)
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        hp.scan.declustered(args.pop("coords"), args.pop("pi"), **args, **KW)


# ----------------------------------------------------------------- hawkes.self_excitation_draws
def test_self_excitation_draws_and_a_declustered_scan_of_a_posterior():
    x, t = hk.simulate(mu=0.5, theta=0.4, omega=2.0, h=0.3, region=4.0, duration=12.0, seed=3)
    perm = np.random.default_rng(0).permutation(len(t))
    x, t = x[perm], t[perm]  # any order: columns come back in the caller's order
    post = hk.mcmc(x, t, n_iter=40, burn_in=20, chains=2, fixed={"tau_x": 1.5, "tau_t": 8.0}, seed=5,
                   progress=False, backend="cpu", threads=1)
    draws = post.self_excitation_draws(n_draws=7, seed=3, progress=False)
    assert draws.shape == (7, len(t)) and ((draws >= 0) & (draws <= 1)).all()
    summary = post.self_excitation(n_draws=7, seed=3, progress=False)
    np.testing.assert_allclose(draws.mean(0), summary["mean"], rtol=1e-10, atol=1e-14)
    flat = {n: post.draws[n].reshape(-1)[summary.attrs["draw_indices"]] for n in hk.PARAM_NAMES}
    for k in (0, 6):
        direct = hk.self_excitation_probabilities(x, t, hk.HawkesParams(**{n: flat[n][k] for n in hk.PARAM_NAMES}),
                                                  backend="cpu")
        np.testing.assert_allclose(draws[k], direct, rtol=1e-10, atol=1e-14)
    with ThreadPoolExecutor(2) as ex:
        pooled = hk.self_excitation_draws(post, n_draws=7, seed=3, progress=False, executor=ex, max_values=3 * len(t))
    np.testing.assert_array_equal(pooled, draws)
    with pytest.raises(TypeError, match="posterior must be a HawkesPosterior"):
        hk.self_excitation_draws(object())
    with pytest.raises(ValueError, match="n_draws must be >= 1"):
        post.self_excitation_draws(n_draws=0)
    res = hp.scan.declustered(x, draws, cell_size=1.0, seed=1, **KW)
    assert res.pi_source == "posterior draws" and len(res.draws) == 7
    assert res.background_total == pytest.approx((1 - draws.mean(0)).sum(), rel=1e-12)
