"""Spatial relative risk (issue 15): surfaces against a NumPy reference and spatstat, shared
bandwidths, asymptotic and Monte Carlo p-values, tolerance contours, bandwidth selectors."""
from __future__ import annotations

import concurrent.futures as cf
import math
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import naive_kde as nk  # noqa: E402

import hphawkes_py as hp  # noqa: E402
from hphawkes_py import datasets  # noqa: E402
from hphawkes_py.kde import Window  # noqa: E402

from engines import CUDA_ENGINES  # noqa: E402


@pytest.fixture(scope="module")
def chorley():
    df = datasets.load_point_pattern("chorley")
    w = Window.from_asc(datasets.path("kde/chorley_mask_0.1km.asc.gz"))
    cases = df[df["mark"] == "larynx"][["x", "y"]].to_numpy()
    controls = df[df["mark"] == "lung"][["x", "y"]].to_numpy()
    return cases, controls, w


def _cluster_data(seed=0, n1=150, n0=300):
    """Controls uniform on the unit square; cases half uniform, half around (0.3, 0.3)."""
    rng = np.random.default_rng(seed)
    controls = rng.uniform(0, 1, size=(n0, 2))
    hot = np.clip(rng.normal([0.3, 0.3], 0.05, size=(n1 // 2, 2)), 0.01, 0.99)
    cases = np.vstack([hot, rng.uniform(0, 1, size=(n1 - n1 // 2, 2))])
    return cases, controls, Window.rectangle(0, 1, 0, 1, 1 / 40)


def _reference_log_risk(cases, controls, w, bws, cutoff, edge, targets):
    pooled = np.vstack([cases, controls])
    e = 1.0 / nk.edge_masses(pooled, bws, w.mask, w.x0, w.y0, w.cell_size) if edge else np.ones(len(pooled))
    n1 = len(cases)
    l1 = nk.intensity(targets, cases, bws[:n1], e[:n1], cutoff)
    l0 = nk.intensity(targets, controls, bws[n1:], e[n1:], cutoff)
    return np.log(l1 / n1) - np.log(l0 / len(controls))


@pytest.mark.parametrize("cutoff", [3.0, math.inf])
@pytest.mark.parametrize("edge", [True, False])
def test_fixed_surface_matches_numpy_reference(chorley, cutoff, edge):
    cases, controls, w = chorley
    rr = hp.kde.relative_risk(cases, controls, w, bandwidth=1.2, cutoff=cutoff, edge_correction=edge, backend="cpu")
    cells = np.flatnonzero(w.mask.ravel())
    keep = np.arange(0, len(cells), 53)
    got = rr.surface().values[w.mask][keep]
    ref = _reference_log_risk(cases, controls, w, np.full(len(cases) + len(controls), 1.2), cutoff, edge,
                              w.cell_centres()[keep])
    ok = np.isfinite(ref)
    assert ok.sum() > 400 and np.array_equal(np.isfinite(got), ok)
    assert np.max(np.abs(got[ok] - ref[ok])) < 1e-8


def _spatstat_available() -> bool:
    if shutil.which("Rscript") is None:
        return False
    r = subprocess.run(["Rscript", "-e", "suppressMessages(library(spatstat)); cat('ok')"], capture_output=True,
                       text=True)
    return r.stdout.strip().endswith("ok")


def test_fixed_intensities_match_spatstat_or_direct_sums(chorley, tmp_path):
    """spatstat's densityfun (Gaussian sums cut at 8 sigma, spatstat's default; no edge correction)
    on chorley; when R or spatstat is missing, the same quantities by direct float64 sums."""
    cases, controls, w = chorley
    h = 0.8
    rr = hp.kde.relative_risk(cases, controls, w, bandwidth=h, cutoff=8.0, edge_correction=False, backend="cpu")
    targets = np.vstack([cases, controls[::7], w.cell_centres()[::211]])
    l1, l0 = rr.intensities_at(targets)
    if _spatstat_available():
        for name, a in (("cases", cases), ("controls", controls), ("targets", targets)):
            np.savetxt(tmp_path / f"{name}.csv", a, delimiter=",")
        script = tmp_path / "ref.R"
        script.write_text(
            "suppressMessages(library(spatstat))\n"
            f"d <- '{tmp_path}'\n"
            "rd <- function(n) as.matrix(read.csv(file.path(d, n), header = FALSE))\n"
            "ca <- rd('cases.csv'); co <- rd('controls.csv'); tg <- rd('targets.csv')\n"
            "W <- owin(range(c(ca[,1], co[,1], tg[,1])) + c(-1, 1), range(c(ca[,2], co[,2], tg[,2])) + c(-1, 1))\n"
            f"f1 <- densityfun(ppp(ca[,1], ca[,2], window = W), sigma = {h!r}, edge = FALSE)\n"
            f"f0 <- densityfun(ppp(co[,1], co[,2], window = W), sigma = {h!r}, edge = FALSE)\n"
            "write.csv(cbind(f1(tg[,1], tg[,2]), f0(tg[,1], tg[,2])), file.path(d, 'out.csv'), row.names = FALSE)\n"
        )
        subprocess.run(["Rscript", str(script)], check=True, capture_output=True)
        ref = np.loadtxt(tmp_path / "out.csv", delimiter=",", skiprows=1)
        r1, r0 = ref[:, 0], ref[:, 1]
    else:  # pragma: no cover - depends on the machine
        r1 = nk.intensity(targets, cases, np.full(len(cases), h), np.ones(len(cases)), 8.0)
        r0 = nk.intensity(targets, controls, np.full(len(controls), h), np.ones(len(controls)), 8.0)
    assert np.max(np.abs(l1 / r1 - 1)) < 1e-8 and np.max(np.abs(l0 / r0 - 1)) < 1e-8
    rho = rr.log_risk_at(targets)
    assert np.max(np.abs(rho - (np.log(r1 / len(cases)) - np.log(r0 / len(controls))))) < 1e-8


def test_adaptive_bandwidths_are_shared_from_the_pooled_brunsdon_fit(chorley):
    cases, controls, w = chorley
    pooled = np.vstack([cases, controls])
    with pytest.warns(UserWarning, match="duplicated"):
        rr = hp.kde.relative_risk(cases, controls, w, method="adaptive", bandwidth="brunsdon", backend="cpu",
                                  progress=False)
        f = hp.kde.fit(pooled, w, method="adaptive", backend="cpu", progress=False)
    assert rr.h == f.h and rr.alpha == f.alpha and rr.selector == "brunsdon"
    assert np.allclose(rr.bandwidths, f.bandwidths, rtol=1e-12) and np.allclose(rr.edge_factors, f.edge_factors)
    # fixed h with Abramson's alpha = 0.5: b_i = h (pilot_i / g)^(-1/2), the pilot at the same h
    rr2 = hp.kde.relative_risk(cases, controls, w, method="adaptive", bandwidth=1.0, backend="cpu")
    g = hp.kde.fit(pooled, w, method="fixed", bandwidth=1.0, backend="cpu", progress=False)
    pilot = g.density_at(pooled)
    lp = np.log(pilot)
    assert rr2.alpha == 0.5 and np.allclose(rr2.bandwidths, np.exp(-0.5 * (lp - lp.mean())), rtol=1e-10)
    assert np.std(rr2.bandwidths) > 0.1


def test_monte_carlo_p_values_find_the_cluster_and_are_reproducible():
    cases, controls, w = _cluster_data()
    rr = hp.kde.relative_risk(cases, controls, w, bandwidth=0.08, backend="cpu")
    p = rr.p_values("monte_carlo", n_replicates=199, seed=5, progress=False)
    assert set(np.unique(p.values[w.mask])) <= {k / 200 for k in range(1, 201)}
    row, col = w.cell_index(np.array([[0.3, 0.3], [0.8, 0.8]]))
    assert p.values[row[0], col[0]] < 0.01 and p.values[row[1], col[1]] > 0.1
    with cf.ThreadPoolExecutor(2) as ex:
        q = rr.p_values("monte_carlo", n_replicates=199, seed=5, executor=ex, progress=False)
    assert np.array_equal(p.values, q.values, equal_nan=True)
    r = rr.p_values("monte_carlo", n_replicates=199, seed=6, progress=False)
    assert not np.array_equal(p.values, r.values, equal_nan=True)
    a = rr.p_values("asymptotic")
    assert a.values[row[0], col[0]] < 0.01 and a.values[row[1], col[1]] > 0.1


def test_asymptotic_sd_matches_the_relabelling_distribution():
    """Under random relabelling (H0), the spread of rho(x) at interior and edge locations agrees with
    Hazelton & Davies' asymptotic standard deviation (edge term included)."""
    rng = np.random.default_rng(11)
    pooled = rng.uniform(0, 1, size=(900, 2))
    w = Window.rectangle(0, 1, 0, 1, 1 / 20)
    n1, h = 300, 0.1
    targets = np.array([[0.5, 0.5], [0.3, 0.7], [0.025, 0.5], [0.025, 0.025]])
    rr = hp.kde.relative_risk(pooled[:n1], pooled[n1:], w, bandwidth=h, backend="cpu")
    sims = []
    for _ in range(300):
        perm = rng.permutation(len(pooled))
        x = hp.kde.relative_risk(pooled[perm[:n1]], pooled[perm[n1:]], w, bandwidth=h, backend="cpu")
        sims.append(x.log_risk_at(targets))
    sd_mc = np.std(sims, axis=0)
    l1, l0 = rr.intensities_at(targets)
    f_pool = (l1 + l0) / len(pooled)
    from scipy.special import ndtr

    m = lambda s: (ndtr((1 - targets[:, 0]) / s) - ndtr(-targets[:, 0] / s)) * (ndtr((1 - targets[:, 1]) / s) - ndtr(-targets[:, 1] / s))  # noqa: E731
    q = m(h / math.sqrt(2)) / m(h) ** 2
    sd_asy = np.sqrt(1 / (4 * math.pi) * (1 / n1 + 1 / (len(pooled) - n1)) * q / (h * h * f_pool))
    assert np.all(np.abs(sd_mc / sd_asy - 1) < 0.2), (sd_mc, sd_asy)
    assert sd_asy[3] > 1.5 * sd_asy[0]  # the edge term matters in the corner
    # and the p-value surface uses exactly this sd at the cell centres
    pa = rr.p_values("asymptotic")
    row, col = w.cell_index(targets)
    centres = np.column_stack([w.x0 + (col + 0.5) * w.cell_size, w.y0 + (w.shape[0] - 1 - row + 0.5) * w.cell_size])
    l1c, l0c = rr.intensities_at(centres)
    mc = lambda s: (ndtr((1 - centres[:, 0]) / s) - ndtr(-centres[:, 0] / s)) * (ndtr((1 - centres[:, 1]) / s) - ndtr(-centres[:, 1] / s))  # noqa: E731
    sd_cells = np.sqrt(1 / (4 * math.pi) * (1 / n1 + 1 / 600) * mc(h / math.sqrt(2)) / mc(h) ** 2
                       / (h * h * (l1c + l0c) / 900))
    rho = rr.surface().values[row, col]
    assert np.allclose(pa.values[row, col], ndtr(-rho / sd_cells), rtol=1e-9, atol=1e-12)


def test_tolerance_contours_enclose_the_cluster(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.path import Path as MPath

    cases, controls, w = _cluster_data(seed=1)
    rr = hp.kde.relative_risk(cases, controls, w, bandwidth=0.08, backend="cpu")
    ax = rr.tolerance_contours([0.05, 0.01])
    cset = ax.tolerance_contours
    assert cset is not None and list(cset.levels) == [0.01, 0.05]
    polys = [MPath(seg) for seg in cset.allsegs[1] if len(seg) > 2]  # the 0.05 contour
    assert any(pp.contains_point((0.3, 0.3)) for pp in polys)
    assert not any(pp.contains_point((0.8, 0.8)) for pp in polys)
    ax.figure.savefig(tmp_path / "tol.png")
    plt.close(ax.figure)
    # no significant cell: drawn without contours
    rng = np.random.default_rng(2)
    flat = hp.kde.relative_risk(rng.uniform(0, 1, (100, 2)), rng.uniform(0, 1, (100, 2)), w, bandwidth=0.3,
                                backend="cpu")
    ax2 = flat.tolerance_contours([1e-9])
    assert ax2.tolerance_contours is None
    plt.close("all")


def test_oversmoothing_bandwidth_formula_and_principle():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(5000, 2)) * [2.0, 2.0]
    h = hp.kde.oversmoothing_bandwidth(x)
    V = 16 * 24 * 2 * 4 / (10**4 * math.pi)  # Terrell's constant for d = 2
    s = np.mean(np.std(x, axis=0, ddof=1))
    assert h == pytest.approx(s * (2 / (4 * math.pi) / (5000 * V)) ** (1 / 6), rel=1e-12)
    # maximal smoothing: above the normal-reference AMISE bandwidth s n^(-1/6), by a few per cent
    assert 1.0 < h / (s * 5000 ** (-1 / 6)) < 1.15
    assert hp.kde.oversmoothing_bandwidth(x, n=100) > h


def test_lscv_bandwidth_minimises_the_brute_force_criterion():
    rng = np.random.default_rng(4)
    x = np.vstack([rng.normal(0, 1, (40, 2)), rng.normal(4, 0.5, (40, 2))])
    n = len(x)
    d2 = ((x[:, None] - x[None]) ** 2).sum(-1)

    def lscv(h):
        k2 = np.exp(-d2 / (4 * h * h)) / (4 * math.pi * h * h)
        k = np.exp(-d2 / (2 * h * h)) / (2 * math.pi * h * h)
        np.fill_diagonal(k, 0)
        return k2.sum() / n**2 - 2 * k.sum() / (n * (n - 1))

    grid = np.linspace(0.05, 2.0, 3901)
    best = grid[np.argmin([lscv(h) for h in grid])]
    got = hp.kde.lscv_bandwidth(x, backend="cpu")
    assert abs(got - best) < 1e-3
    assert lscv(got) <= lscv(best) + 1e-12


@pytest.mark.parametrize("backend", CUDA_ENGINES)
def test_cuda_engine_gives_the_same_p_values(backend):
    cases, controls, w = _cluster_data(n1=60, n0=120)
    w = Window.rectangle(0, 1, 0, 1, 1 / 16)
    a = hp.kde.relative_risk(cases, controls, w, bandwidth=0.1, backend="cpu")
    b = hp.kde.relative_risk(cases, controls, w, bandwidth=0.1, backend=backend)
    assert b.backend == backend
    sa, sb = a.surface().values, b.surface().values
    assert np.nanmax(np.abs(sa - sb)) < 1e-10
    pa = a.p_values("monte_carlo", n_replicates=20, seed=3, progress=False)
    pb = b.p_values("monte_carlo", n_replicates=20, seed=3, progress=False)
    assert np.nanmax(np.abs(pa.values - pb.values)) <= 1 / 21 + 1e-12  # ties at rounding level only
    assert np.nanmean(pa.values == pb.values) > 0.99


def test_monte_carlo_on_a_process_pool_after_an_engine_ran_in_the_parent():
    """Linux forks by default; a pool forked after the Numba engine ran would abort its workers.
    The relabelling batches run on it (through a spawn-based pool) and give the serial p-values."""
    cases, controls, w = _cluster_data(n1=40, n0=80)
    w = Window.rectangle(0, 1, 0, 1, 1 / 16)
    rr = hp.kde.relative_risk(cases, controls, w, bandwidth=0.1, backend="cpu")
    serial = rr.p_values("monte_carlo", n_replicates=60, seed=9, progress=False)
    with cf.ProcessPoolExecutor(2) as ex:
        pooled = rr.p_values("monte_carlo", n_replicates=60, seed=9, executor=ex, progress=False)
    assert np.array_equal(serial.values, pooled.values, equal_nan=True)


@pytest.mark.parametrize("cutoff", [3.0, math.inf])
def test_direct_sum_of_a_few_sources_equals_the_indexed_gather(chorley, cutoff):
    from hphawkes_py.kde.cpu import DIRECT_MAX_SOURCES
    from hphawkes_py.kde.engine import Engine, make_engine

    cases, controls, w = chorley
    pooled = np.vstack([cases, controls])
    eng = make_engine(pooled, w, cutoff, backend="cpu")
    rng = np.random.default_rng(5)
    targets = w.cell_centres()[::17]
    for k in (1, 58, DIRECT_MAX_SOURCES, DIRECT_MAX_SOURCES + 1):
        src = np.sort(rng.choice(len(pooled), k, replace=False))
        bws, wts = rng.uniform(0.3, 2.0, k), rng.uniform(1.0, 1.5, k)
        got = eng.intensity_at(targets, bws, wts, sources=src)
        ref = nk.intensity(targets, pooled[src], bws, wts, cutoff)
        idx = Engine.intensity_at(eng, targets, bws, wts, sources=src)
        pos = ref > 0
        assert np.all(got[~pos] == 0) and np.max(np.abs(got[pos] / ref[pos] - 1)) < 1e-12
        assert np.max(np.abs(got[pos] / idx[pos] - 1)) < 1e-13


def test_monte_carlo_in_memory_bounded_groups_gives_the_same_p_values(monkeypatch):
    from hphawkes_py.kde import relrisk

    cases, controls, w = _cluster_data(n1=30, n0=60)
    w = Window.rectangle(0, 1, 0, 1, 1 / 16)
    rr = hp.kde.relative_risk(cases, controls, w, bandwidth=0.1, backend="cpu")
    a = rr.p_values("monte_carlo", n_replicates=120, seed=4, progress=False)
    monkeypatch.setattr(relrisk, "_MC_MAX_PICKS", 30 * 7)  # a new engine call every few batches
    b = rr.p_values("monte_carlo", n_replicates=120, seed=4, progress=False)
    assert np.array_equal(a.values, b.values, equal_nan=True)


# spatstat 3.0-3 (Debian r-cran-spatstat), bw.diggle(X, correction = "translate"), printed with %.17g
SPATSTAT_BW_DIGGLE = {"japanesepines": 0.061154598825831699, "redwood": 0.022504892367906065,
                      "cells": 0.06188845401174168, "chorley": 0.073219178082191763}


def _bw_diggle_from_r(names):
    code = "suppressMessages(library(spatstat))\n" + "".join(
        f"cat(sprintf('%.17g\\n', bw.diggle(unmark({nm}), correction = 'translate')))\n" for nm in names)
    out = subprocess.run(["Rscript", "-e", code], capture_output=True, text=True, check=True).stdout.split()
    return dict(zip(names, map(float, out)))


def test_diggle_bandwidth_equals_spatstat_bw_diggle():
    ref = dict(SPATSTAT_BW_DIGGLE)
    if _spatstat_available():  # recompute with the installed spatstat when there is one
        ref = _bw_diggle_from_r(list(ref))
    windows = {"japanesepines": Window.rectangle(0, 1, 0, 1, 1 / 128), "cells": Window.rectangle(0, 1, 0, 1, 1 / 128),
               "redwood": Window.rectangle(0, 1, -1, 0, 1 / 128)}
    for name, w in windows.items():
        pts = datasets.load_point_pattern(name)[["x", "y"]].to_numpy()
        assert hp.kde.diggle_bandwidth(pts, w) == pytest.approx(ref[name], rel=1e-12), name
    # chorley: spatstat uses the exact polygon, we its 0.1 km raster (set covariogram of the cells)
    pts = datasets.load_point_pattern("chorley")[["x", "y"]].to_numpy()
    w = Window.from_asc(datasets.path("kde/chorley_mask_0.1km.asc.gz"))
    step = 0.5 * min(23.0, 21.4) / 4 / 511  # the sigma grid step (rmax = short side / 4, 512 values)
    assert abs(hp.kde.diggle_bandwidth(pts, w) - ref["chorley"]) <= 2.5 * step
    rr = hp.kde.relative_risk(pts[:58], pts[58:], w, bandwidth="diggle", backend="cpu")
    assert rr.selector == "diggle" and rr.h == hp.kde.diggle_bandwidth(pts, w)


# ---------------------------------------------------------------------------- adaptive asymptotic p-values
def _null_draw(rng, n):
    """Half uniform on the unit square, half a bump at (0.3, 0.35): one density for cases and controls."""
    k = rng.random(n) < 0.5
    hot = np.clip(rng.normal([0.3, 0.35], 0.08, size=(n, 2)), 0.001, 0.999)
    return np.where(k[:, None], hot, rng.uniform(0, 1, (n, 2)))


def _adaptive_var_reference(rr, x):
    """NumPy: a_i = e_i K_{b_i}(x - x_i) (no cutoff), Var rho = N^3/((N-1) n1 n0) (S2 - T^2/N) / T^2,
    and the same without the centring (the leading term alone)."""
    pooled = np.vstack([rr.cases, rr.controls])
    b, e = rr.bandwidths, rr.edge_factors
    d2 = ((x[:, None, :] - pooled[None, :, :]) ** 2).sum(-1)
    a = e / (2 * math.pi * b**2) * np.exp(-0.5 * d2 / b**2)
    T, S2 = a.sum(1), (a * a).sum(1)
    n1, n0 = rr.n_cases, rr.n_controls
    N = n1 + n0
    return N**3 / ((N - 1) * n1 * n0) * (S2 - T * T / N) / T**2, (1 / n1 + 1 / n0) * N * S2 / T**2


def test_adaptive_asymptotic_p_values_are_uniform_under_the_null():
    """Cases and controls from the same inhomogeneous density, adaptive bandwidths (Abramson, shared
    pooled pilot): at fixed interior, peak and edge locations the z-scores behind the asymptotic
    p-values have mean ~0 and sd ~1, the p-values pass a KS test for uniformity, and the variance
    without the finite-sample centring (sd 0.78 at the peak) would fail."""
    from scipy import stats
    from scipy.special import ndtr, ndtri

    w = Window.rectangle(0, 1, 0, 1, 1 / 20)
    locs = np.array([[0.3, 0.35], [0.45, 0.3], [0.75, 0.75], [0.525, 0.525], [0.025, 0.975], [0.975, 0.025],
                     [0.3, 0.025]])
    row, col = w.cell_index(locs)
    centres = np.column_stack([w.x0 + (col + 0.5) * w.cell_size, w.y0 + (w.shape[0] - 1 - row + 0.5) * w.cell_size])
    rng = np.random.default_rng(3)
    Z, Zlead = [], []
    for r in range(250):
        rr = hp.kde.relative_risk(_null_draw(rng, 150), _null_draw(rng, 300), w, method="adaptive", bandwidth=0.12,
                                  cutoff=np.inf, backend="cpu", progress=False)
        p = rr.p_values("asymptotic").values[row, col]
        rho = rr.surface().values[row, col]
        var, lead = _adaptive_var_reference(rr, centres)
        if r < 3:  # the surface uses exactly the reference variance
            np.testing.assert_allclose(p, ndtr(-rho / np.sqrt(var)), rtol=1e-9, atol=1e-12)
        Z.append(ndtri(1 - p))
        Zlead.append(rho / np.sqrt(lead))
    Z, Zlead = np.array(Z), np.array(Zlead)
    assert np.all(np.abs(Z.std(axis=0) - 1) < 0.15), Z.std(axis=0)
    assert np.all(np.abs(Z.mean(axis=0)) < 0.3), Z.mean(axis=0)
    assert stats.kstest(ndtr(-Z).ravel(), "uniform").pvalue > 1e-3
    assert Zlead.std(axis=0)[0] < 0.88  # the uncentred variance is too large at the peak: a wrong variance fails
    assert rr.bandwidths.max() / rr.bandwidths.min() > 2.5  # the bandwidths do adapt


def test_adaptive_asymptotic_p_values_agree_with_monte_carlo():
    cases, controls, w = _cluster_data(seed=2)
    rr = hp.kde.relative_risk(cases, controls, w, method="adaptive", bandwidth=0.1, backend="cpu", progress=False)
    pa = rr.p_values("asymptotic").values[w.mask]
    pm = rr.p_values("monte_carlo", n_replicates=999, seed=1, progress=False).values[w.mask]
    ok = np.isfinite(pa) & np.isfinite(pm)
    assert ok.mean() > 0.99
    from scipy import stats

    r = np.corrcoef(pa[ok], pm[ok])[0, 1]
    rs = stats.spearmanr(pa[ok], pm[ok]).statistic
    assert r > 0.95 and rs > 0.95, (r, rs)
    assert np.median(np.abs(pa[ok] - pm[ok])) < 0.03
    row, col = w.cell_index(np.array([[0.3, 0.3], [0.8, 0.8]]))
    pa_s = rr.p_values("asymptotic").values
    assert pa_s[row[0], col[0]] < 0.01 and pa_s[row[1], col[1]] > 0.1
