"""Issue 34 (round 3), the scan core: coordinates of any magnitude, dates where numbers belong, location
ids, time zones, the elliptic scan's size guard and the messages of out-of-range options and counts."""
import time

import numpy as np
import pandas as pd
import pytest

import hphawkes_py as hp

KW = dict(n_replicates=19, seed=1, backend="cpu", progress=False)
#: exact powers of two (radii scale exactly) and the decimal extremes of the issue
SCALES = [2.0 ** -990, 2.0 ** 990, 1e-300, 1e300]


def _toy(n=40, seed=1):
    rng = np.random.default_rng(seed)
    xy = rng.uniform(0, 10, (n, 2))
    days = rng.integers(0, 30, n)
    cases = rng.poisson(1.0, n)
    xy[:5] = [1.0, 1.0] + 0.1 * np.arange(5)[:, None]
    cases[:5] += 4
    days[:5] = 28
    return xy, cases, days


def _same_cluster(a, b, s):
    """Clusters of data scaled by ``s``: the same locations, LLR and counts; radius scaled by s."""
    assert len(a.clusters) == len(b.clusters) > 0
    for (_, ra), (_, rb) in zip(a.clusters.iterrows(), b.clusters.iterrows()):
        assert list(ra.location_ids) == list(rb.location_ids)
        assert ra.log_likelihood_ratio == rb.log_likelihood_ratio
        assert ra.cases == rb.cases and ra.p_value == rb.p_value
        if s in (2.0 ** -990, 2.0 ** 990):
            assert rb.radius == ra.radius * s
        else:
            assert rb.radius == pytest.approx(ra.radius * s, rel=1e-14)
    np.testing.assert_array_equal(a.null_llr, b.null_llr)


@pytest.mark.parametrize("s", SCALES)
def test_bernoulli_and_poisson_at_any_scale(s):
    g = hp.datasets.load_grave()
    xy, c = g[["x", "y"]].to_numpy(), g["case"].to_numpy()
    _same_cluster(hp.scan.bernoulli(xy, c, 1 - c, **KW), hp.scan.bernoulli(xy * s, c, 1 - c, **KW), s)
    xy, cases, _ = _toy()
    pop = np.full(len(xy), 500)
    base = hp.scan.poisson(xy, cases, pop, **KW)
    _same_cluster(base, hp.scan.poisson(xy * s, cases, pop, **KW), s)
    _same_cluster(hp.scan.poisson(xy, cases, pop, max_distance=2.0, **KW),
                  hp.scan.poisson(xy * s, cases, pop, max_distance=2.0 * s, **KW), s)
    _same_cluster(hp.scan.poisson(xy, cases, pop, grid_cell=1.0, **KW),
                  hp.scan.poisson(xy * s, cases, pop, grid_cell=1.0 * s, **KW), s)


@pytest.mark.parametrize("s", [2.0 ** -990, 1e300])
def test_elliptic_scan_at_any_scale(s):
    xy, cases, _ = _toy()
    pop = np.full(len(xy), 500)
    kw = dict(window="ellipse", ellipse_shapes=(2.0,), ellipse_angles=(4,), **KW)
    a, b = hp.scan.poisson(xy, cases, pop, **kw), hp.scan.poisson(xy * s, cases, pop, **kw)
    _same_cluster(a, b, s)
    rel = 0 if s == 2.0 ** -990 else 1e-14
    np.testing.assert_allclose(b.clusters.semimajor_axis, a.clusters.semimajor_axis * s, rtol=rel)


@pytest.mark.parametrize("s", SCALES)
def test_space_time_at_any_scale(s):
    xy, cases, days = _toy()
    _same_cluster(hp.scan.space_time_permutation(xy, cases, days, **KW),
                  hp.scan.space_time_permutation(xy * s, cases, days, **KW), s)
    pop = np.full(len(xy), 500)
    _same_cluster(hp.scan.space_time(xy, cases, days, population=pop, max_distance=3.0, **KW),
                  hp.scan.space_time(xy * s, cases, days, population=pop, max_distance=3.0 * s, **KW), s)


@pytest.mark.parametrize("s", SCALES)
def test_declustered_at_any_scale(s):
    rng = np.random.default_rng(1)
    x = np.vstack([rng.uniform(0, 4, (150, 2)), rng.normal(1.0, 0.2, (30, 2))])
    pi = np.r_[np.full(150, 0.1), np.full(30, 0.9)]
    kw = dict(n_draws=2, n_replicates=19, seed=1, backend="cpu", progress=False)
    a = hp.scan.declustered(x, pi, cell_size=1.0, **kw)
    b = hp.scan.declustered(x * s, pi, cell_size=1.0 * s, **kw)
    if s in (2.0 ** -990, 2.0 ** 990):
        _same_cluster(a.ordinary, b.ordinary, s)
        _same_cluster(a.declustered, b.declustered, s)
    else:  # decimal scaling rounds the grid's cell centres: their exact distance ties may break otherwise
        for ra, rb in ((a.ordinary, b.ordinary), (a.declustered, b.declustered)):
            assert ra.most_likely.location_ids == rb.most_likely.location_ids
            assert rb.most_likely.radius == pytest.approx(ra.most_likely.radius * s, rel=1e-14)
    assert a.comparison.verdict.tolist() == b.comparison.verdict.tolist()
    # events assigned to the nearest of given locations: the same assignment at any scale
    loc = np.array([[0.5, 0.5], [1, 1], [3, 3], [2, 0.5], [0.5, 3]])
    a = hp.scan.declustered(x, pi, locations=loc, **kw)
    b = hp.scan.declustered(x * s, pi, locations=loc * s, **kw)
    np.testing.assert_array_equal(a.event_location, b.event_location)


def test_locations_too_close_for_their_magnitude_are_refused():
    xy = np.array([[0.0, 0.0], [1e-200, 0.0], [1.0, 1.0], [2.0, 0.5]])
    with pytest.raises(ValueError, match=r"coords\[0\].*coords\[1\].*squared distance underflows"):
        hp.scan.poisson(xy, [1, 1, 0, 3], [10, 10, 10, 10], **KW)


def test_huge_max_distance_is_no_limit():
    xy, cases, days = _toy()
    pop = np.full(len(xy), 500)
    _same_cluster(hp.scan.poisson(xy, cases, pop, **KW), hp.scan.poisson(xy, cases, pop, max_distance=1e200, **KW),
                  1.0)
    _same_cluster(hp.scan.space_time_permutation(xy, cases, days, **KW),
                  hp.scan.space_time_permutation(xy, cases, days, max_distance=1e300, **KW), 1.0)


def test_tiny_grid_cells_are_refused_readably():
    xy, cases, _ = _toy()
    with pytest.raises(ValueError, match=r"grid_cell=1e-300 gives a 9\.\d+e\+300 x 9\.\d+e\+300 grid .* limit") as e:
        hp.scan.poisson(xy, cases, np.full(len(xy), 500), grid_cell=1e-300, **KW)
    assert len(str(e.value)) < 300
    with pytest.raises(ValueError, match=r"cell_size=1e-300 gives a .* the limit is"):
        hp.scan.declustered(xy, np.full(len(xy), 0.1), cell_size=1e-300, n_draws=0, **KW)
    with pytest.raises(ValueError, match=r"cell_size=1e-300 gives a .* the limit is"):
        hp.scan.declustered(xy * 1e307, np.full(len(xy), 0.1), cell_size=1e-300, n_draws=0, **KW)


def test_dates_are_not_coordinates():
    xy, cases, _ = _toy()
    pop = np.full(len(xy), 500)
    dates = np.datetime64("2020-01-01") + np.round(xy * 10).astype("timedelta64[D]")
    with pytest.raises(TypeError, match=r"coords must hold real numbers .*dates"):
        hp.scan.poisson(dates, cases, pop, **KW)
    with pytest.raises(TypeError, match=r"coords must hold real numbers .*dates"):
        hp.scan.poisson(pd.DataFrame({"x": dates[:, 0], "y": dates[:, 1]}), cases, pop, **KW)
    with pytest.raises(TypeError, match=r"coords must hold real numbers .*durations"):
        hp.scan.bernoulli(dates - dates.min(), cases, pop, **KW)
    with pytest.raises(TypeError, match=r"coords must hold real numbers .*Timestamp"):
        hp.scan.space_time_permutation(pd.DataFrame({"x": dates[:, 0], "y": xy[:, 1]}), cases,
                                       np.arange(len(xy)), **KW)
    with pytest.raises(TypeError, match=r"locations must hold real numbers .*dates"):
        hp.scan.declustered(xy, np.full(len(xy), 0.1), locations=dates[:5], n_draws=0, **KW)


def test_one_location_id_for_many_coordinates_is_refused():
    xy, cases, days = _toy()
    ids = np.zeros(len(xy), dtype=int)
    with pytest.raises(ValueError, match=r"location_ids: 0 is given for rows at different coordinates \(rows 0 and 1"):
        hp.scan.space_time_permutation(xy, cases, days, location_ids=ids, **KW)
    with pytest.raises(ValueError, match=r"location_ids: .* rows at different coordinates"):
        hp.scan.space_time(xy, cases, days, population=np.full(len(xy), 500), location_ids=ids, **KW)
    # the rows of one location (its days) share its id: still accepted, the location reported by it
    rows = np.r_[np.arange(len(xy)), np.arange(5)]
    times = np.r_[days, days[:5] - 1]
    res = hp.scan.space_time_permutation(xy[rows], cases[rows], times, location_ids=[f"L{r}" for r in rows], **KW)
    plain = hp.scan.space_time_permutation(xy[rows], cases[rows], times, **KW)
    assert len(res.clusters) == len(plain.clusters) > 0
    for a, b in zip(res.clusters.location_ids, plain.clusters.location_ids):
        assert list(a) == [f"L{r}" for r in b]


def test_time_zone_aware_dates_are_refused():
    xy, cases, days = _toy()
    local = pd.Series(pd.Timestamp("2020-01-01 23:00") + pd.to_timedelta(days, "D")).dt.tz_localize("America/New_York")
    for times in (local, pd.DatetimeIndex(local), local.to_numpy(), list(local)):
        with pytest.raises(ValueError, match=r"times holds time-zone-aware dates \(America/New_York\).*tz_localize"):
            hp.scan.space_time_permutation(xy, cases, times, **KW)
    naive = local.dt.tz_localize(None)
    period = (pd.Timestamp("2019-12-01", tz="UTC"), pd.Timestamp("2020-03-01", tz="UTC"))
    with pytest.raises(ValueError, match=r"study_period holds time-zone-aware dates"):
        hp.scan.space_time_permutation(xy, cases, naive, study_period=period, **KW)
    # the local calendar days: the burst of day 28 stays on 2020-01-29
    top = hp.scan.space_time_permutation(xy, cases, naive, **KW).most_likely
    assert top.start == np.datetime64("2020-01-29") and top.end == np.datetime64("2020-01-29")


def test_ellipse_angles_bounded_before_work():
    xy, cases, _ = _toy()
    pop = np.full(len(xy), 500)
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"ellipse_angles gives the number of orientations of each shape, at most 360"):
        hp.scan.poisson(xy, cases, pop, window="ellipse", ellipse_shapes=(2.0,), ellipse_angles=(361,), **KW)
    with pytest.raises(ValueError, match=r"ellipse_angles gives the number of orientations .*, got 1000000"):
        hp.scan.poisson(xy, cases, pop, window="ellipse", ellipse_shapes=(2.0,), ellipse_angles=(10**6,), **KW)
    with pytest.raises(ValueError, match=r"ellipse_angles: 1800 ellipses in all .* more than the 1000"):
        hp.scan.bernoulli(xy, cases, pop, window="ellipse", ellipse_shapes=(2.0,) * 5, ellipse_angles=(360,) * 5, **KW)
    assert time.perf_counter() - t0 < 5.0


def test_ellipse_shape_not_above_one_is_named():
    xy, cases, _ = _toy()
    pop = np.full(len(xy), 500)
    with pytest.raises(ValueError, match=r"ellipse_shapes must be each > 1 .* got 1\.0$"):
        hp.scan.poisson(xy, cases, pop, window="ellipse", ellipse_shapes=(1.0,), ellipse_angles=(4,), **KW)
    with pytest.raises(ValueError, match=r"same length .* got 2 shapes and 1 angle counts"):
        hp.scan.poisson(xy, cases, pop, window="ellipse", ellipse_shapes=(2.0, 3.0), ellipse_angles=(4,), **KW)


def test_unsigned_counts_that_fit_work_and_others_are_refused():
    xy, cases, days = _toy()
    pop = np.full(len(xy), 500)
    u = np.uint64
    _same_cluster(hp.scan.poisson(xy, cases, pop, **KW), hp.scan.poisson(xy, cases.astype(u), pop.astype(u), **KW),
                  1.0)
    _same_cluster(hp.scan.bernoulli(xy, cases, pop, **KW), hp.scan.bernoulli(xy, cases.astype(u), pop.astype(u), **KW),
                  1.0)
    _same_cluster(hp.scan.space_time_permutation(xy, cases, days, **KW),
                  hp.scan.space_time_permutation(xy, cases.astype(u), days.astype(u), **KW), 1.0)
    huge = np.full(len(xy), 2**63 + 5, dtype=u)
    msg = r"must be at most 2147483646 .*\[0\] = 9223372036854775813"
    with pytest.raises(ValueError, match="cases " + msg):
        hp.scan.poisson(xy, huge, pop, **KW)
    with pytest.raises(ValueError, match="cases " + msg):
        hp.scan.bernoulli(xy, huge, pop, **KW)
    with pytest.raises(ValueError, match="controls " + msg):
        hp.scan.bernoulli(xy, cases, huge, **KW)
    with pytest.raises(ValueError, match="cases " + msg):
        hp.scan.space_time_permutation(xy, huge, days, **KW)
    with pytest.raises(ValueError, match="controls " + msg):
        hp.scan.space_time(xy, cases, days, controls=huge, model="bernoulli", **KW)
    with pytest.raises(ValueError, match=r"cases must be at most 2147483646 .*= 1e\+20"):
        hp.scan.poisson(xy, np.full(len(xy), 1e20), pop, **KW)
    with pytest.raises(ValueError, match=r"times must be whole days within \+-2\*\*53; times\[0\] = 9223372036854775"):
        hp.scan.space_time_permutation(xy, cases, days.astype(u) + huge, **KW)
    # cases whose sum leaves the engines' 32-bit range
    with pytest.raises(ValueError, match=r"cases are too many"):
        hp.scan.space_time_permutation(xy, np.full(len(xy), 2**30), days, **KW)
