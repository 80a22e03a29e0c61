"""Space-time permutation scan: engines against the brute-force NumPy reference, SaTScan's
NYCfever sample analysis, recovery of a planted outbreak, and bad inputs."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import hphawkes_py as hp
from hphawkes_py.scan import spacetime as st
from tests import naive_scan_stp as naive
from tests.engines import CUDA_ENGINES, ENGINES

NYC = "scan/satscan_sample_data/NYCfever"


def _random_records(seed, L=25, T=12, n=60, latlong=False):
    rng = np.random.default_rng(seed)
    if latlong:
        pts = np.column_stack([40.7 + rng.uniform(-0.05, 0.05, L), -73.9 + rng.uniform(-0.05, 0.05, L)])
    else:
        pts = rng.uniform(0, 10, size=(L, 2))
        pts[3] = pts[4]  # two locations at the same place: a tie group that enters circles together
    loc = rng.integers(0, L, n)
    day = rng.integers(0, T, n)
    return pts, loc, day


def _run(pts, loc, day, backend, **kw):
    """One record per case plus a 0-case record per location, so every location is a centre."""
    L = len(pts)
    ids = np.r_[loc, np.arange(L)]
    return st.space_time_permutation(pts[ids], np.r_[np.ones(len(loc)), np.zeros(L)], np.r_[day, np.zeros(L, int)],
                                     location_ids=ids, backend=backend, progress=False, **kw)


@pytest.mark.parametrize("backend", ENGINES)
@pytest.mark.parametrize("prospective", [False, True])
@pytest.mark.parametrize("latlong", [False, True])
def test_best_cylinder_of_every_centre_equals_brute_force(backend, prospective, latlong):
    pts, loc, day = _random_records(3 + prospective + 2 * latlong, latlong=latlong)
    L, T = len(pts), 12
    kw = dict(max_temporal_days=4, prospective=prospective, n_replicates=0, study_start=0, study_end=T - 1,
              max_spatial_fraction=0.5, max_distance=2.5 if latlong else 4.0,
              distance="great_circle" if latlong else "euclidean")
    res = _run(pts, loc, day, backend, **kw)
    # the engine's per-centre bests, straight from the design the entry point built
    design_pts = st._chord_coordinates(pts) if latlong else pts
    dmax = 2 * st.EARTH_RADIUS_KM * math.sin(2.5 / (2 * st.EARTH_RADIUS_KM)) if latlong else 4.0
    table = naive.table_from_cases(loc, day, L, T)
    wins = naive.windows(T, 1, 4, prospective)
    ref = naive.best_per_centre(design_pts, table, dmax, 0.5 * len(loc), wins, 2)
    ref_llr = np.array([r[0] for r in ref])
    # the most likely cluster and every reported one are the reference's best for their centre
    assert len(res.clusters) > 0
    top = res.clusters.iloc[0]
    np.testing.assert_allclose(top.log_likelihood_ratio, ref_llr.max(), rtol=1e-12)
    for _, row in res.clusters.iterrows():
        np.testing.assert_allclose(row.log_likelihood_ratio, ref_llr[int(row.center)], rtol=1e-12)
        members = np.asarray(row.location_ids)
        s, e = int(row.start), int(row.end)
        c = table[members, s:e + 1].sum()
        mu = table[members].sum() * table[:, s:e + 1].sum() / table.sum()
        assert c == row.cases
        np.testing.assert_allclose(row.expected, mu, rtol=1e-12)
        np.testing.assert_allclose(row.log_likelihood_ratio, naive.llr(float(c), mu, float(table.sum())), rtol=1e-12)
    # secondary clusters share no location with a more likely one
    seen: set = set()
    for ids in res.clusters.location_ids:
        assert not (seen & set(ids))
        seen |= set(ids)


@pytest.mark.parametrize("backend", ENGINES)
def test_null_maxima_equal_brute_force_on_the_same_permutations(backend):
    pts, loc, day = _random_records(11)
    T = 12
    kw = dict(max_temporal_days=5, n_replicates=0, study_start=0, study_end=T - 1, max_distance=5.0)
    res = _run(pts, loc, day, "cpu", **kw)
    assert res.n_cases == len(loc)
    # rebuild the design as the entry point does and feed explicit permutations to the engine
    rng = np.random.default_rng(0)
    perms = np.stack([rng.permutation(day) for _ in range(5)]).astype(np.int64)
    design = _design(pts, loc, day, T, max_len=5, max_distance=5.0)
    engine = st._make_engine(design, hp._backend.resolve_backend(backend))
    got = engine.null_maxima(perms)
    wins = naive.windows(T, 1, 5, False)
    for r in range(len(perms)):
        table = naive.table_from_cases(loc, perms[r], len(pts), T)
        ref = max(v[0] for v in naive.best_per_centre(pts, table, 5.0, 0.5 * len(loc), wins, 2))
        np.testing.assert_allclose(got[r], ref, rtol=1e-12)


def _design(pts, loc, day, T, *, max_len, max_distance):
    loc = np.asarray(loc, dtype=np.int64)
    day = np.asarray(day, dtype=np.int64)
    L = len(pts)
    cz = np.bincount(loc, minlength=L)
    cd_cum = np.r_[0, np.cumsum(np.bincount(day, minlength=T))]
    ws, we = st._temporal_windows(T, 1, max_len, False)
    ptr, idx, dist, ev = st._neighbours(pts, cz, max_distance, 0.5 * len(loc))
    return st._Design(L, T, loc, day, cz, (cd_cum[we + 1] - cd_cum[ws]).astype(float), ptr, idx, dist, ev,
                      ws, we, len(loc), 2)


@pytest.mark.parametrize("backend", CUDA_ENGINES)
def test_cuda_engine_gives_the_cpu_result_and_null(backend):
    pts, loc, day = _random_records(5, L=40, T=20, n=120)
    kw = dict(max_temporal_days=6, n_replicates=49, seed=7, study_start=0, study_end=19, max_distance=5.0)
    a = _run(pts, loc, day, "cpu", **kw)
    b = _run(pts, loc, day, backend, **kw)
    np.testing.assert_allclose(b.null_llr, a.null_llr, rtol=1e-12)
    cols = ["center", "n_locations", "start", "end", "cases", "p_value"]
    pd.testing.assert_frame_equal(a.clusters[cols], b.clusters[cols])
    np.testing.assert_allclose(b.clusters.log_likelihood_ratio, a.clusters.log_likelihood_ratio, rtol=1e-12)


def _nyc():
    return st.read_satscan_spacetime(hp.datasets.path(f"{NYC}.cas"), hp.datasets.path(f"{NYC}.geo"))


def test_nycfever_matches_satscan():
    """SaTScan's sample analysis NYCSpaceTimePermutation.prm (prospective, circles up to 3 km and
    50 % of the cases, 1 to 7 days ending 2001/11/24, at least 2 cases), run by SaTScan 10.3
    (built from scanstatistics/satscan @0cd87a6 on this machine): its cluster table, as printed in
    NYCfever.txt, is ``SATSCAN_NYC`` below."""
    df = _nyc()
    assert df.cases.sum() == 194 and df.location_id.nunique() == 192
    res = st.space_time_permutation(df[["a", "b"]].to_numpy(), df.cases, df.date, location_ids=df.location_id,
                                    distance="great_circle", max_distance=3, max_temporal_days=7,
                                    prospective=True, study_start="2001/11/1", study_end="2001/11/24",
                                    n_replicates=999, seed=1, backend="cpu", progress=False)
    assert len(res.clusters) == len(SATSCAN_NYC)
    for (_, row), ref in zip(res.clusters.iterrows(), SATSCAN_NYC):
        ids, start, end, cases, expected, llr, radius, p = ref
        assert row.location_ids == ids
        assert (str(row.start), str(row.end)) == (start, end)
        assert row.cases == cases
        np.testing.assert_allclose(row.expected, expected, atol=5e-3)
        np.testing.assert_allclose(row.log_likelihood_ratio, llr, atol=5e-7)
        np.testing.assert_allclose(row.radius, radius, atol=5e-3)
        # SaTScan's p-values come from its sequential Monte Carlo (stopped after 207 replicates, 50
        # exceedances): a different random draw; ours from 999 replicates. Equal within their errors.
        se = math.sqrt(p * (1 - p) / 207 + p * (1 - p) / 999)
        assert abs(row.p_value - p) < 4 * se + 2 / 1000
        np.testing.assert_allclose(row.recurrence_interval_days, 1 / row.p_value)


#: SaTScan 10.3's report (NYCfever.txt): locations, time frame, cases, expected, LLR, radius (km), p.
SATSCAN_NYC = [
    (["11418", "11415", "11419", "11435", "11416", "11421", "11451", "11375", "11417"], "2001-11-22", "2001-11-24",
     4, 0.67, 3.845418, 2.90, 0.242),
    (["11372"], "2001-11-24", "2001-11-24", 2, 0.16, 3.164201, 0.0, 0.575),
    (["10472"], "2001-11-23", "2001-11-24", 2, 0.29, 2.137259, 0.0, 0.966),
]


def test_planted_outbreak_is_found_and_significant():
    rng = np.random.default_rng(2)
    L, T = 60, 30
    pts = rng.uniform(0, 20, size=(L, 2))
    loc = rng.integers(0, L, 400)
    day = rng.integers(0, T, 400)
    # an outbreak: 14 extra cases at the 3 locations nearest location 0 in the last 4 days
    near = np.argsort(((pts - pts[0]) ** 2).sum(1))[:3]
    loc = np.r_[loc, rng.choice(near, 14)]
    day = np.r_[day, rng.integers(T - 4, T, 14)]
    res = _run(pts, loc, day, "cpu", max_temporal_days=7, prospective=True, n_replicates=199, seed=3,
               study_start=0, study_end=T - 1)
    top = res.clusters.iloc[0]
    assert top.p_value <= 0.01
    assert set(near) <= set(top.location_ids) and len(top.location_ids) <= 6
    assert top.end == T - 1 and top.days <= 5


def test_null_p_values_are_not_small_without_an_outbreak():
    rng = np.random.default_rng(4)
    pvals = []
    for rep in range(8):
        pts = rng.uniform(0, 10, size=(30, 2))
        res = _run(pts, rng.integers(0, 30, 150), rng.integers(0, 15, 150), "cpu", max_temporal_days=5,
                   n_replicates=99, seed=rep, study_start=0, study_end=14)
        pvals.append(res.clusters.iloc[0].p_value)
    # under the null the rank p-value is uniform on {1/100, ..., 1}: eight of them all below 0.2 has
    # probability 0.2^8
    assert np.mean(pvals) > 0.2


def test_same_seed_same_null_and_different_seed_different_null():
    pts, loc, day = _random_records(9)
    kw = dict(max_temporal_days=4, n_replicates=30, study_start=0, study_end=11)
    a = _run(pts, loc, day, "cpu", seed=5, **kw)
    b = _run(pts, loc, day, "cpu", seed=5, **kw)
    c = _run(pts, loc, day, "cpu", seed=6, **kw)
    np.testing.assert_array_equal(a.null_llr, b.null_llr)
    assert not np.array_equal(a.null_llr, c.null_llr)


@pytest.mark.parametrize("kwargs, err, match", [
    (dict(times=np.array(["2001-11-01T10:00", "2001-11-02", "2001-11-03"], dtype="datetime64[m]")), ValueError, "whole days"),
    (dict(times=[0.5, 1, 2]), ValueError, "whole day numbers"),
    (dict(times=[True, False, True]), TypeError, "dates or whole day numbers"),
    (dict(cases=[1, -1, 1]), ValueError, "non-negative whole counts"),
    (dict(cases=[1, 1.5, 1]), ValueError, "non-negative whole counts"),
    (dict(coords=[[0, 0], [1, np.nan], [2, 2]]), ValueError, "coords"),
    (dict(coords=[[0, 0], [1, 1]]), ValueError, "cases has 3 entries"),
    (dict(distance="manhattan"), ValueError, "distance"),
    (dict(distance="great_circle", coords=[[95, 0], [1, 1], [2, 2]]), ValueError, "latitude"),
    (dict(max_spatial_fraction=0.7), ValueError, "max_spatial_fraction"),
    (dict(prospective="yes"), TypeError, "prospective"),
    (dict(progress="no"), TypeError, "progress"),
    (dict(n_replicates=-1), ValueError, "n_replicates"),
    (dict(study_start=1), ValueError, "outside the study period"),
    (dict(study_start=3, study_end=1), ValueError, "before study_start"),
    (dict(min_temporal_days=5, max_temporal_days=2), ValueError, "min_temporal_days"),
    (dict(location_ids=["a", "a", "b"]), ValueError, "two different coordinates"),
    (dict(seed=-1), ValueError, "seed"),
])
def test_bad_inputs_are_refused_before_work(kwargs, err, match):
    args = dict(coords=[[0, 0], [1, 1], [2, 2]], cases=[1, 1, 1], times=[0, 1, 2])
    for k in ("coords", "cases", "times"):
        if k in kwargs:
            args[k] = kwargs.pop(k)
    kwargs.setdefault("n_replicates", 9)
    with pytest.raises(err, match=match):
        st.space_time_permutation(args["coords"], args["cases"], args["times"], backend="cpu", progress=False,
                                  **kwargs)


def test_reader_names_file_line_and_field(tmp_path):
    geo = tmp_path / "a.geo"
    cas = tmp_path / "a.cas"
    geo.write_text("1 40.0 -73.0\n2 40.1 -73.1\n")
    cas.write_text("1 1 2001/11/1\n3 1 2001/11/2\n")
    with pytest.raises(ValueError, match=r"a.cas:2: location '3' is not in the coordinates file"):
        st.read_satscan_spacetime(cas, geo)
    cas.write_text("1 1 2001/11/1\n2 inf 2001/11/2\n")
    with pytest.raises(ValueError, match=r"a.cas:2: case count must be a non-negative whole number"):
        st.read_satscan_spacetime(cas, geo)
    cas.write_text("1 1 2001/13/45\n")
    with pytest.raises(ValueError, match=r"a.cas:1: date '2001/13/45'"):
        st.read_satscan_spacetime(cas, geo)
    geo.write_text("1 nan -73.0\n")
    with pytest.raises(ValueError, match=r"a.geo:1: coordinates must be finite"):
        st.read_satscan_spacetime(cas, geo)
    # locations of the coordinates file without cases are kept as circle centres (0 cases)
    geo.write_text("1 40.0 -73.0\n2 40.1 -73.1\n")
    cas.write_text("1 2 2001/11/1\n")
    df = st.read_satscan_spacetime(cas, geo)
    assert df.location_id.tolist() == ["1", "2", "1"] and df.cases.tolist() == [0, 0, 2]


def test_same_null_on_a_thread_pool_and_a_process_pool():
    import concurrent.futures as cf

    pts, loc, day = _random_records(12)
    kw = dict(max_temporal_days=4, n_replicates=600, seed=8, study_start=0, study_end=11)
    serial = _run(pts, loc, day, "cpu", **kw)
    with cf.ThreadPoolExecutor(2) as ex:
        threaded = _run(pts, loc, day, "cpu", executor=ex, **kw)
    with cf.ProcessPoolExecutor(2) as ex:
        pooled = _run(pts, loc, day, "cpu", executor=ex, **kw)
    np.testing.assert_array_equal(threaded.null_llr, serial.null_llr)
    np.testing.assert_array_equal(pooled.null_llr, serial.null_llr)


def test_space_time_plot_marks_the_cluster_locations_and_days(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pts, loc, day = _random_records(14)
    res = _run(pts, loc, day, "cpu", max_temporal_days=4, n_replicates=19, seed=1, study_start=0, study_end=11)
    fig = hp.scan.plot_clusters(res, path=tmp_path / "st.png")
    ax_map, ax_t = fig.axes[:2]
    top = res.clusters.iloc[0]
    # the first cluster's scatter holds exactly its locations' coordinates
    offsets = ax_map.collections[1].get_offsets()
    want = pts[np.asarray(top.location_ids)]
    np.testing.assert_allclose(np.sort(offsets[:, 0]), np.sort(want[:, 0]))
    # the daily bars are the case counts per day, and the shaded span covers the cluster's days
    heights = [b.get_height() for b in ax_t.containers[0]]
    np.testing.assert_array_equal(heights, np.bincount(day, minlength=12))
    span = [p for p in ax_t.patches if p not in ax_t.containers[0].patches][0]
    assert np.isclose(span.get_x(), top.start - 0.45) and np.isclose(span.get_x() + span.get_width(), top.end + 0.45)
    assert (tmp_path / "st.png").stat().st_size > 0
    plt.close(fig)
