"""hp.scan.poisson (discrete Poisson purely spatial scan): the window kernel against a float64
NumPy reference on the CPU engine and the CUDA emulator, SaTScan v9.6's published NY leukaemia
clusters, multinomial null draws, indirect standardisation, options, CLI."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import hphawkes_py as hp
from hphawkes_py import datasets
from hphawkes_py.scan import engine as scan_engine
from hphawkes_py.scan import null_draws
from hphawkes_py.scan import windows as scan_windows

sys.path.insert(0, str(Path(__file__).parent))
from engines import CUDA_ENGINES, ENGINES  # noqa: E402
from naive_scan import circle_prefixes  # noqa: E402

SAT = datasets.satscan_sample_path


# ----------------------------------------------------------------- float64 NumPy reference
def ref_poisson_llr(c, e, C, direction="high", min_cases=0):
    """Kulldorff's Poisson LLR with np.log, 0 log 0 = 0."""
    c = float(c)
    high, low = c > e, c < e
    ok = {"high": high and c >= min_cases, "low": low, "both": (high and c >= min_cases) or low}[direction]
    if not ok:
        return 0.0
    a = c * np.log(c / e) if c > 0 else 0.0
    b = (C - c) * np.log((C - c) / (C - e)) if C - c > 0 else 0.0
    return a + b


def ref_scan(centres, coords, cases, expected, size, max_fraction, direction="high", min_cases=0,
             max_distance=None):
    """Per-centre best LLR and window by brute force: SaTScan's windows (:func:`circle_prefixes`), kept while its size <= max_fraction x total (and radius <= max_distance)."""
    C = int(cases.sum())
    limit = max_fraction * size.sum()
    best = np.zeros(len(centres))
    sets = [frozenset()] * len(centres)
    for i, ctr in enumerate(centres):
        d2 = ((coords - ctr) ** 2).sum(axis=1)
        max_d2 = np.inf if max_distance is None else max_distance ** 2
        for members in circle_prefixes(d2, coords, size, limit, max_d2):
            llr = ref_poisson_llr(cases[members].sum(), expected[members].sum(), C, direction, min_cases)
            if llr > best[i] + 1e-12 * max(1.0, best[i]):
                best[i] = llr
                sets[i] = frozenset(members.tolist())
    return best, sets


def _problem(seed, n=30):
    rng = np.random.default_rng(seed)
    coords = np.unique(rng.integers(0, 8, size=(n, 2)), axis=0).astype(float)  # distance ties
    L = len(coords)
    pop = rng.integers(50, 500, size=L).astype(float)
    cases = rng.poisson(pop * 0.02)
    cases[0] += 3
    return coords, cases.astype(np.int64), pop


def _engine(coords, cases, pop, max_fraction, direction, backend, min_cases=0, max_distance=None):
    C = int(cases.sum())
    expected = pop * C / pop.sum()
    windows = scan_windows.build_windows(coords, coords, pop, max_fraction * pop.sum(), max_distance)
    wexp = scan_windows.cumulative_expected(windows, expected)
    eng = scan_engine.make_engine((windows[0], windows[1], wexp, windows[3]), scan_engine.klogk_table(C), C, C,
                                  direction, backend=hp._backend.resolve_backend(backend), model="poisson",
                                  min_cases=min_cases)
    return windows, expected, eng


@pytest.mark.parametrize("backend", ENGINES)
@pytest.mark.parametrize("direction", ["high", "low", "both"])
def test_poisson_best_llr_per_centre_matches_reference(backend, direction):
    coords, cases, pop = _problem(1)
    windows, expected, eng = _engine(coords, cases, pop, 0.5, direction, backend, min_cases=2)
    best, entry = eng.best_per_centre(cases.astype(np.int32)[:, None], want_arg=True)
    ref, sets = ref_scan(coords, coords, cases, expected, pop, 0.5, direction, min_cases=2)
    assert ref.max() > 1
    np.testing.assert_allclose(best[:, 0], ref, rtol=1e-10, atol=1e-10)
    offsets, neighbors = windows[0], windows[1]
    for i in range(len(coords)):
        if ref[i] > 0:
            assert frozenset(neighbors[offsets[i]:entry[i, 0] + 1].tolist()) == sets[i]


@pytest.mark.parametrize("backend", ENGINES)
def test_poisson_replicate_maxima_match_reference(backend):
    coords, cases, pop = _problem(2)
    _, expected, eng = _engine(coords, cases, pop, 0.3, "both", backend, min_cases=3, max_distance=3.0)
    rng = np.random.default_rng(0)
    C = int(cases.sum())
    mat = rng.multinomial(C, expected / expected.sum(), size=37).T.astype(np.int32)
    got = eng.max_llr(mat)
    ref = [ref_scan(coords, coords, mat[:, r], expected, pop, 0.3, "both", 3, 3.0)[0].max() for r in range(37)]
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("backend", CUDA_ENGINES)
def test_poisson_cpu_and_cuda_engines_identical(backend):
    coords, cases, pop = _problem(3, n=40)
    kw = dict(n_replicates=300, seed=5, progress=False, direction="both", max_population=0.4)
    a = hp.scan.poisson(coords, cases, pop, backend="cpu", **kw)
    b = hp.scan.poisson(coords, cases, pop, backend=backend, **kw)
    assert b.backend == backend and a.model == "poisson"
    np.testing.assert_array_equal(a.null_llr, b.null_llr)
    pd.testing.assert_frame_equal(a.clusters, b.clusters)


# ----------------------------------------------------------------- SaTScan's published NY clusters
# SaTScan v9.6 (hphawkes_py/data/scan/satscan_outputs/ny_poisson_circular_cartesian_10pct.txt):
# locations (centre first), population, cases, expected, O/E, RR, LLR, p (999 replications)
NY_SATSCAN = [
    ("49 48 50 47 1 15 51 2 13 14 3 35 16 52 36 37 12 11 5 17 10 4 6 38 18 9", 0.070,
     95249, 85, 49.71, 1.71, 1.84, 11.577255, 0.001),
    ("89 88 87 84 90 86 92 85", 0.13, 34083, 38, 17.79, 2.14, 2.22, 9.019716, 0.013),
    ("112 113 115 111 116 219 117 123 218 114 122 110 124 220 118 133 121 125 216 120 134 217 126 139 215 132 "
     "141 140 127 142 138 131 119", 0.040, 78280, 64, 40.85, 1.57, 1.64, 6.114140, 0.216),
    ("62 64 67 65", 0.061, 24571, 25, 12.82, 1.95, 1.99, 4.651839, 0.609),
    ("46 45 41 54 44 43 53", 0.043, 29782, 28, 15.54, 1.80, 1.84, 4.169203, 0.755),
    ("266 281 267 265", 0.026, 9840, 12, 5.14, 2.34, 2.37, 3.363518, 0.961),
    ("166 159 167", 0.012, 8839, 11, 4.61, 2.38, 2.41, 3.209485, 0.976),
]


def _ny():
    return hp.scan.read_satscan(SAT("ny_leukemia.cas"), population_file=SAT("ny_leukemia.pop"),
                                geo_file=SAT("ny_leukemia.geo"), model="poisson")


def test_poisson_ny_matches_satscan():
    ny = _ny()
    assert list(ny.columns) == ["location_id", "x", "y", "cases", "population"]
    res = hp.scan.poisson(ny[["x", "y"]].to_numpy(), ny.cases, ny.population, max_population=0.1,
                          n_replicates=999, seed=3, location_ids=ny.location_id, progress=False, backend="cpu")
    assert (res.n_cases, res.n_population, res.n_locations) == (552, 1057673, 281)
    cl = res.clusters
    for k, (ids, radius, popn, c, exp, oe, rr, llr, p) in enumerate(NY_SATSCAN):
        row = cl.iloc[k]
        assert [str(v) for v in row.location_ids] == ids.split()  # same order: nearest first
        assert round(row.radius, 3 if radius < 0.1 else 2) == radius
        assert (row.population, row.cases) == (popn, c)
        assert round(row.expected, 2) == exp
        assert round(row.observed_over_expected, 2) == oe
        assert round(row.relative_risk, 2) == rr
        assert abs(row.log_likelihood_ratio - llr) < 1e-6
        # Monte Carlo p-values estimate the same tail probabilities: within 4 binomial sd (+ 1/1000)
        sd = np.sqrt(max(p, 0.002) * (1 - p) / 999)
        assert abs(row.p_value - p) < 4 * sd + 0.002, (k, row.p_value, p)
    assert (cl.p_value.iloc[7:] > 0.99).all()  # any further cluster is below (almost) every replicate


def test_poisson_expected_equals_population_share_and_cutoff_by_expected():
    """expected= proportional to the population gives the same analysis (windows cut by the
    expected counts instead of the population: same windows here)."""
    ny = _ny()
    kw = dict(max_population=0.1, n_replicates=49, seed=1, progress=False, backend="cpu")
    a = hp.scan.poisson(ny[["x", "y"]].to_numpy(), ny.cases, ny.population, **kw)
    b = hp.scan.poisson(ny[["x", "y"]].to_numpy(), ny.cases, None, expected=ny.population * 3.0, **kw)
    np.testing.assert_allclose(a.clusters.log_likelihood_ratio, b.clusters.log_likelihood_ratio, rtol=1e-12)
    np.testing.assert_allclose(a.null_llr, b.null_llr, rtol=1e-9)


# ----------------------------------------------------------------- null draws, standardisation, options
def test_multinomial_null_draws():
    from hphawkes_py._parallel import spawn_seeds

    e = np.array([0.5, 3.0, 0.0, 10.0, 6.5])
    M = null_draws.draw_multinomial_cases(e, 40, spawn_seeds(0, 20000))
    assert M.dtype == np.int32 and M.shape == (5, 20000)
    assert (M.sum(axis=0) == 40).all() and (M[2] == 0).all()
    p = e / e.sum()
    se = np.sqrt(40 * p * (1 - p) / 20000)
    assert np.all(np.abs(M.mean(axis=1) - 40 * p) <= 5 * se + 1e-12)
    np.testing.assert_allclose(M.var(axis=1), 40 * p * (1 - p), rtol=0.05, atol=1e-12)


def test_indirect_standardisation_on_new_mexico():
    """nm.cas/.pop (brain cancer by county, age group and sex): E per county = sum over the
    categories of population x category rate, computed here with pandas."""
    long = hp.scan.read_satscan(SAT("nm.cas"), population_file=SAT("nm.pop"), geo_file=SAT("nm.geo"),
                                model="poisson", covariates=True)
    assert long.cases.sum() == 1175 and long.category.nunique() == 36
    rate = long.groupby("category").cases.sum() / long.groupby("category").population.sum()
    ref = (long.population * long.category.map(rate)).groupby(long.location_id, sort=False).sum()
    res = hp.scan.poisson(long[["x", "y"]].to_numpy(), long.cases, long.population, covariates=long.category,
                          n_replicates=19, seed=0, progress=False, backend="cpu", max_population=0.5)
    assert res.n_locations == 32 and res.n_merged == len(long) - 32
    e = res.clusters.expected.iloc[0]
    members = res.clusters.location_ids.iloc[0]
    assert e == pytest.approx(ref.iloc[sorted({m // 36 for m in members})].sum(), rel=1e-12)
    # two covariate columns (age group, sex) define the same categories
    cols = long.category.str.split(" ", expand=True)
    res2 = hp.scan.poisson(long[["x", "y"]].to_numpy(), long.cases, long.population, covariates=cols,
                           n_replicates=19, seed=0, progress=False, backend="cpu", max_population=0.5)
    np.testing.assert_allclose(res2.null_llr, res.null_llr, rtol=1e-12)
    # adjustment matters: without covariates the expected counts differ
    with pytest.warns(UserWarning, match="1120 input row"):  # location x category rows, no covariates
        res3 = hp.scan.poisson(long[["x", "y"]].to_numpy(), long.cases, long.population, n_replicates=19, seed=0,
                               progress=False, backend="cpu", max_population=0.5)
    assert not np.allclose(res3.null_llr, res.null_llr)


def test_min_cases_and_max_distance():
    coords, cases, pop = _problem(4, n=40)
    kw = dict(n_replicates=19, seed=0, progress=False, backend="cpu")
    far = hp.scan.poisson(coords, cases, pop, max_distance=1.5, min_cases=0, **kw)
    assert (far.clusters.radius <= 1.5).all() and far.max_distance == 1.5
    C = int(cases.sum())
    ref, _ = ref_scan(coords, coords, cases, pop * C / pop.sum(), pop, 0.5, "high", 0, 1.5)
    assert far.clusters.log_likelihood_ratio.iloc[0] == pytest.approx(ref.max(), rel=1e-10)
    many = hp.scan.poisson(coords, cases, pop, min_cases=int(cases.max()) + 1, **kw)
    assert (many.clusters.n_locations >= 2).all() and (many.clusters.cases > cases.max()).all()


def test_poisson_planted_cluster_and_low_rates():
    rng = np.random.default_rng(7)
    coords = rng.uniform(0, 100, size=(300, 2))
    pop = rng.integers(100, 1000, size=300).astype(float)
    inside = np.hypot(coords[:, 0] - 70, coords[:, 1] - 30) < 12
    cases = rng.poisson(pop * np.where(inside, 0.03, 0.01))
    res = hp.scan.poisson(coords, cases, pop, n_replicates=99, seed=1, progress=False, backend="cpu")
    top = set(res.clusters.location_ids.iloc[0])
    assert len(top & set(np.flatnonzero(inside))) / len(top) > 0.8 and res.clusters.p_value.iloc[0] == 0.01
    low = hp.scan.poisson(coords, rng.poisson(pop * np.where(inside, 0.001, 0.01)), pop, direction="low",
                          n_replicates=99, seed=1, progress=False, backend="cpu")
    assert low.clusters.relative_risk.iloc[0] < 0.5 and low.clusters.p_value.iloc[0] <= 0.05


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(population=[10, -1, 5]), ValueError, r"population must be non-negative; population\[1\]"),
        (dict(population=[10, np.nan, 5]), ValueError, "population must be finite"),
        (dict(population=[10, 0, 5], cases=[1, 2, 0]), ValueError, "row 1 has 2 case.*zero population"),
        (dict(cases=[1, -2, 0]), ValueError, "cases must be non-negative"),
        (dict(cases=[0, 0, 0]), ValueError, "at least one case"),
        (dict(population=[10, 5]), ValueError, "same length"),
        (dict(expected=[1, 2, 3], covariates=[0, 0, 1]), ValueError, "not both"),
        (dict(expected=[1, -2, 3]), ValueError, "expected must be non-negative"),
        (dict(covariates=["a", "b"]), ValueError, "covariates must have one row per location row"),
        (dict(covariates=["a", "a", "b"], population=[10, 10, 0], cases=[0, 0, 1]), ValueError,
         "covariate category 'b' has 1 case.*zero population"),
        (dict(min_cases=-1), ValueError, "min_cases must be >= 0"),
        (dict(min_cases=2.5), TypeError, "min_cases"),
        (dict(max_distance=0), ValueError, "max_distance must be > 0"),
        (dict(max_distance="far"), TypeError, "max_distance"),
        (dict(max_population=0.7), ValueError, "max_population"),
        (dict(n_replicates=10**12), ValueError, "too many"),
        (dict(direction="up"), ValueError, "direction"),
        (dict(location_ids=["a", "a", "b"]), ValueError, "location_ids must be unique"),
        (dict(seed=-3), ValueError, "seed"),
        (dict(progress=1), TypeError, "progress"),
        (dict(coords=[[0, 0], [1, 1j], [2, 2]]), TypeError, "coords"),
    ],
)
def test_poisson_bad_input(kwargs, exc, match):
    base = dict(coords=[[0, 0], [1, 1], [2, 2]], cases=[1, 0, 1], population=[10, 20, 5], n_replicates=9,
                progress=False, backend="cpu")
    base.update(kwargs)
    with pytest.raises(exc, match=match):
        hp.scan.poisson(**base)


def test_cli_scan_poisson(tmp_path, capsys):
    from hphawkes_py.cli import main

    out = tmp_path / "ny.csv"
    rc = main(["scan", "--model", "poisson", "--cas", str(SAT("ny_leukemia.cas")), "--pop", str(SAT("ny_leukemia.pop")),
               "--geo", str(SAT("ny_leukemia.geo")), "--max-population", "0.1", "--replicates", "19", "--seed", "1",
               "--backend", "cpu", "-o", str(out), "--png", "", "--quiet"])
    assert rc == 0
    t = pd.read_csv(out)
    assert t.log_likelihood_ratio.iloc[0] == pytest.approx(11.577255, abs=1e-6)
    assert t.expected.iloc[0] == pytest.approx(49.71, abs=5e-3)
    # covariates from the .cas/.pop columns
    out2 = tmp_path / "nm.csv"
    rc = main(["scan", "--model", "poisson", "--cas", str(SAT("nm.cas")), "--pop", str(SAT("nm.pop")),
               "--geo", str(SAT("nm.geo")), "--covariates", "--replicates", "9", "--backend", "cpu",
               "-o", str(out2), "--png", "", "--quiet"])
    assert rc == 0 and len(pd.read_csv(out2)) >= 1
    capsys.readouterr()
    rc = main(["scan", "--model", "poisson", "--cas", str(SAT("grave.cas")), "--ctl", str(SAT("grave.ctl")),
               "--geo", str(SAT("grave.geo")), "-o", str(tmp_path / "x.csv"), "--png", "", "--quiet"])
    assert rc == 2 and "control" in capsys.readouterr().err


def test_cli_reproduce_scan_ny_is_the_poisson_model(capsys):
    from hphawkes_py.cli import main

    rc = main(["reproduce", "scan-ny", "--replicates", "99", "--backend", "cpu"])
    out = capsys.readouterr().out
    assert rc == 0 and "clusters match" in out
    assert "11.577255  11.577255" in out and "3.209485   3.209485" in out


# SaTScan v9.3.1, Latitude/Longitude coordinates, 50% maximum
# (hphawkes_py/data/scan/satscan_outputs/ny_poisson_circular_latlong_50pct.txt)
NY_LATLONG = [
    ("52 50 53 38 49 48 15 39 37 1 16 44 47 40 14 2 51 13 43 45 17 55 11 3 12 46 36 35 54 10 5",
     (42.083800, -75.989827), 7.70, 119050, 106, 62.13, 1.87, 14.780276),
    ("88 87 92 86 89 91 93 85 90", (42.599055, -76.172807), 13.01, 40696, 42, 21.24, 2.06, 8.287056),
    ("113 117 116 112 220 118 115 123 124 111 114 125 219 122 126 119", (43.076454, -76.137613), 2.35,
     45667, 44, 23.83, 1.92, 7.199672),
    ("62 64 67 65", (42.963728, -76.528029), 5.82, 24571, 25, 12.82, 1.99, 4.651839),
    ("132 138 121 131 139 120", (43.052425, -76.164414), 1.16, 6985, 10, 3.65, 2.78, 3.773422),
    ("166 159 167", (43.015231, -76.162912), 1.01, 8839, 11, 4.61, 2.41, 3.209485),
]


@pytest.mark.parametrize("backend", ENGINES)
def test_poisson_ny_great_circle_matches_satscan(backend):
    ny = _ny()
    res = hp.scan.poisson(ny[["x", "y"]].to_numpy(), ny.cases, ny.population, max_population=0.5,
                          distance="great_circle", min_cases=0, n_replicates=19, seed=1,
                          location_ids=ny.location_id, progress=False, backend=backend)
    assert res.distance == "great_circle"
    for k, (ids, xy, radius_km, popn, c, exp, rr, llr) in enumerate(NY_LATLONG):
        row = res.clusters.iloc[k]
        assert [str(v) for v in row.location_ids] == ids.split()
        assert (round(row.x, 6), round(row.y, 6)) == xy
        assert round(row.radius, 2) == radius_km
        assert (row.population, row.cases, round(row.expected, 2), round(row.relative_risk, 2)) == (popn, c, exp, rr)
        assert abs(row.log_likelihood_ratio - llr) < 1e-6


def test_great_circle_options():
    ny = _ny()
    xy = ny[["x", "y"]].to_numpy()
    kw = dict(n_replicates=9, seed=0, progress=False, backend="cpu")
    r = hp.scan.poisson(xy, ny.cases, ny.population, distance="great_circle", max_distance=3.0, **kw)
    assert (r.clusters.radius <= 3.0).all() and r.clusters.radius.max() > 1.0
    with pytest.raises(ValueError, match="not a latitude"):
        hp.scan.poisson(xy + [60.0, 0.0], ny.cases, ny.population, distance="great_circle", **kw)
    with pytest.raises(ValueError, match="grid_cell is not available"):
        hp.scan.poisson(xy, ny.cases, ny.population, distance="great_circle", grid_cell=0.1, **kw)
    with pytest.raises(ValueError, match="distance must be one of"):
        hp.scan.bernoulli(xy, ny.cases, ny.population - ny.cases, distance="manhattan", **kw)
    b = hp.scan.bernoulli(xy, ny.cases, ny.population - ny.cases, distance="great_circle", max_population=0.5, **kw)
    assert b.clusters.location_ids.iloc[0][:3] == [51, 49, 52]  # 0-based rows of tracts 52, 50, 53


def test_cli_scan_great_circle(tmp_path):
    from hphawkes_py.cli import main

    out = tmp_path / "ll.csv"
    rc = main(["scan", "--model", "poisson", "--cas", str(SAT("ny_leukemia.cas")), "--pop", str(SAT("ny_leukemia.pop")),
               "--geo", str(SAT("ny_leukemia.geo")), "--distance", "great_circle", "--min-cases", "0",
               "--replicates", "9", "--backend", "cpu", "-o", str(out), "--png", "", "--quiet"])
    assert rc == 0
    t = pd.read_csv(out)
    assert abs(t.log_likelihood_ratio.iloc[0] - 14.780276) < 1e-6 and round(t.radius.iloc[0], 2) == 7.70


def test_location_table():
    ny = _ny()
    res = hp.scan.poisson(ny[["x", "y"]].to_numpy(), ny.cases, ny.population, max_population=0.1, n_replicates=19,
                          seed=1, location_ids=ny.location_id, progress=False, backend="cpu")
    t = res.location_table()
    assert len(t) == res.clusters.n_locations.sum() and list(t.cluster.unique()) == list(range(1, len(res.clusters) + 1))
    one = t[t.cluster == 1]
    assert one.cases.sum() == res.clusters.cases.iloc[0]
    assert one.expected.sum() == pytest.approx(res.clusters.expected.iloc[0], rel=1e-12)
    row = ny.set_index("location_id").loc[49]
    got = one.set_index("location_id").loc[49]
    assert got.cases == row.cases and got.expected == pytest.approx(row.population * 552 / 1057673, rel=1e-12)
    g = hp.datasets.load_grave()
    b = hp.scan.bernoulli(g[["x", "y"]].to_numpy(), g.case, 1 - g.case, n_replicates=19, seed=1,
                          location_ids=g.id, progress=False, backend="cpu")
    tb = b.location_table()
    assert tb[tb.cluster == 1].cases.sum() == 11 and tb.expected.iloc[0] == pytest.approx(30 / 143)


# SaTScan v9.6 elliptic scans (hphawkes_py/data/scan/satscan_outputs/ny_poisson_elliptic_10pct.txt):
# ids (in order), semiminor, semimajor, angle, shape, population, cases, expected, LLR, test statistic
ELLIPSE_NONE = [
    ("46 53 45 41 44 38 52 43 54 39 50 15 40 49 16 14 1 48 37 13 17 11 2 12 47", 0.046, 0.18, 90, 4, 102678, 96,
     53.59, 15.416469, 15.416469),
    ("84 86 87 251 92 85 259 88 89 103 261 281 266 280 265 102", 0.093, 0.46, 60, 5, 53236, 55, 27.78, 11.061167,
     11.061167),
    ("117 123 116 118 122 114 115 124 121 113 120 119 133 125 131 132 111 220 127 126 130 135", 0.014, 0.057, 75, 4,
     56173, 55, 29.32, 9.562963, 9.562963),
    ("170 171 166 167", 0.0072, 0.029, -60, 4, 12214, 17, 6.37, 6.154083, 6.154083),
    ("64 65 67 62 68", 0.046, 0.18, 30, 4, 27490, 28, 14.35, 5.244377, 5.244377),
]
ELLIPSE_MEDIUM = [
    ("52 50 53 38 49 15 48 39 1 37 16 44 14 47 40 2 13 43 51 45 17 11 12 3 46", 0.058, 0.087, 90, 1.5, 99685, 93,
     52.03, 14.772705, 14.474236),
    ("87 88 86 89 92 85 90", 0.086, 0.17, -60, 2, 31491, 37, 16.44, 9.860447, 9.296518),
    ("115 116 114 111 117 113 123 120 110 122 112 118 121 124 220 133 131 119 130 125 132 219 126 127 135", 0.019,
     0.057, 80, 3, 59460, 57, 31.03, 9.347892, 8.095512),
    ("170 171 166 167", 0.0072, 0.029, -60, 4, 12214, 17, 6.37, 6.154083, 4.923266),
    ("62 64 67 65", 0.061, 0.061, 0, 1, 24571, 25, 12.82, 4.651839, 4.651839),
    ("106 103 102 77 230", 0.087, 0.35, -45, 4, 15576, 19, 8.13, 5.369233, 4.295386),
    ("266 281 265", 0.017, 0.026, 90, 1.5, 8063, 11, 4.21, 3.820132, 3.742950),
]


@pytest.mark.parametrize("backend", ENGINES)
@pytest.mark.parametrize("penalty, table", [("none", ELLIPSE_NONE), ("medium", ELLIPSE_MEDIUM)])
def test_poisson_elliptic_matches_satscan(backend, penalty, table):
    ny = _ny()
    # 999 replicates: the last secondary clusters (SaTScan p ~0.99) are listed only below some replicate's maximum
    res = hp.scan.poisson(ny[["x", "y"]].to_numpy(), ny.cases, ny.population, max_population=0.1, window="ellipse",
                          penalty=penalty, n_replicates=999 if backend == "cpu" else 99, seed=1,
                          location_ids=ny.location_id, progress=False, backend=backend)
    if backend != "cpu":
        table = table[:5]
    for k, (ids, a, b, angle, shape, popn, c, exp, llr, stat) in enumerate(table):
        row = res.clusters.iloc[k]
        assert [str(v) for v in row.location_ids] == ids.split()
        assert (row["shape"], row.angle) == (shape, angle)
        assert float(f"{row.radius:.2g}") == a and float(f"{row.semimajor_axis:.2g}") == b
        assert (row.population, row.cases, round(row.expected, 2)) == (popn, c, exp)
        assert abs(row.log_likelihood_ratio - llr) < 1e-6 and abs(row.test_statistic - stat) < 1e-6
    # (secondary clusters come from each centre's best window over all ellipses, as in SaTScan: the
    # ellipse at tract 72, shape 4, angle -15, statistic 4.7325, is not that centre's best window)


def test_ellipse_set_and_bad_options():
    from hphawkes_py.scan.ellipses import ellipse_set

    e = ellipse_set((1.5, 4), (4, 12))
    assert e[0] == (1.0, 0.0) and [a for s, a in e if s == 1.5] == [-45.0, 0.0, 45.0, 90.0]
    assert len(e) == 17 and max(a for s, a in e if s == 4) == 90.0 and min(a for s, a in e if s == 4) == -75.0
    kw = dict(coords=[[0, 0], [1, 1], [2, 2]], cases=[1, 0, 1], population=[10, 20, 5], n_replicates=9,
              progress=False, backend="cpu", window="ellipse")
    with pytest.raises(ValueError, match="window must be one of"):
        hp.scan.poisson(**{**kw, "window": "square"})
    with pytest.raises(ValueError, match="penalty must be one of"):
        hp.scan.poisson(**kw, penalty="mild")
    with pytest.raises(ValueError, match="Euclidean coordinates"):
        hp.scan.poisson(**kw, max_distance=1.0)
    with pytest.raises(ValueError, match="same length"):
        hp.scan.poisson(**kw, ellipse_shapes=(2, 3), ellipse_angles=(4,))


def test_cli_scan_ellipse(tmp_path):
    from hphawkes_py.cli import main

    out = tmp_path / "e.csv"
    rc = main(["scan", "--model", "poisson", "--cas", str(SAT("ny_leukemia.cas")), "--pop", str(SAT("ny_leukemia.pop")),
               "--geo", str(SAT("ny_leukemia.geo")), "--max-population", "0.1", "--window", "ellipse", "--penalty",
               "none", "--replicates", "9", "--backend", "cpu", "-o", str(out), "--png", "", "--quiet"])
    assert rc == 0 and abs(pd.read_csv(out).log_likelihood_ratio.iloc[0] - 15.416469) < 1e-6


def test_cumulative_expected_equals_numpy_cumsum_per_centre():
    """Each centre's running sums of expected cases, in entry order, are np.cumsum's bits (values of
    very different sizes, so that the order of the additions shows), centres with one entry included."""
    rng = np.random.default_rng(17)
    L = 400
    coords = rng.uniform(0, 50, size=(L, 2))
    pop = rng.integers(1, 30, size=L)
    expected = rng.random(L) * 10.0 ** rng.integers(-6, 6, size=L)
    for frac in (0.002, 0.3):
        windows = scan_windows.build_windows(coords, coords, pop, frac * pop.sum())
        got = scan_windows.cumulative_expected(windows, expected)
        offsets, nb = windows[0], windows[1]
        ref = np.concatenate([np.cumsum(expected[nb[a:b]]) for a, b in zip(offsets[:-1], offsets[1:])])
        np.testing.assert_array_equal(got, ref)
        assert (np.diff(offsets) == 1).any() or frac > 0.01
