"""hp.scan.iterative_scan: SaTScan's iterative scan (IterativeScan), Bernoulli and Poisson.

Checked by construction: two planted clusters are found one after the other, and every
iteration is exactly the plain scan of the data with the earlier clusters' locations zeroed
(SaTScan's semantics: the locations stay as centres, with no data); and against SaTScan 10.3.2's
own iterative runs (Poisson, Bernoulli, Poisson with covariates): locations, cases, expected and
LLR of every iteration, p-values within their Monte Carlo error.
"""
import math

import numpy as np
import pytest

from hphawkes_py.scan import bernoulli, poisson
from hphawkes_py.scan.iterative import IterativeScanResult, iterative_scan

RUN = dict(n_replicates=99, seed=3, backend="cpu", progress=False)


def _two_clusters():
    """10 x 10 grid, 40 persons per location; a strong cluster (risk 0.5) in the lower-left 2 x 2
    corner and a weaker one (risk 0.3) in the upper-right 2 x 2 corner, 0.08 elsewhere."""
    g = np.arange(10.0)
    xy = np.array([(x, y) for x in g for y in g])
    pop = np.full(len(xy), 40)
    strong = (xy[:, 0] <= 1) & (xy[:, 1] <= 1)
    weak = (xy[:, 0] >= 8) & (xy[:, 1] >= 8)
    risk = np.where(strong, 0.5, np.where(weak, 0.3, 0.08))
    cases = np.random.default_rng(7).binomial(pop, risk)
    return xy, cases, pop, np.flatnonzero(strong), np.flatnonzero(weak)


@pytest.mark.parametrize("model", ["bernoulli", "poisson"])
def test_two_planted_clusters_found_in_turn(model):
    xy, cases, pop, strong, weak = _two_clusters()
    other = pop - cases if model == "bernoulli" else pop
    res = iterative_scan(model, xy, cases, other, max_iterations=5, **RUN)
    assert isinstance(res, IterativeScanResult)
    first, second = res.clusters.iloc[0], res.clusters.iloc[1]
    assert sorted(first.location_ids) == strong.tolist()
    assert sorted(second.location_ids) == weak.tolist()
    assert first.p_value == pytest.approx(0.01) and second.p_value == pytest.approx(0.01)
    assert res.clusters.iteration.tolist()[:2] == [1, 2]
    # later clusters are noise: the first p-value above 0.05 stops the iterations, and that
    # cluster is still reported
    assert res.stop_reason == "p_value"
    assert len(res.clusters) == res.n_iterations >= 3
    assert res.clusters.p_value.iloc[-1] > 0.05 and (res.clusters.p_value.iloc[:-1] <= 0.05).all()
    # the totals of each iteration are those left by the removals
    assert res.clusters.remaining_cases.tolist()[:2] == [int(cases.sum()), int(cases.sum() - cases[strong].sum())]


@pytest.mark.parametrize("model", ["bernoulli", "poisson"])
def test_iteration_is_the_plain_scan_of_the_zeroed_data(model):
    xy, cases, pop, strong, weak = _two_clusters()
    fn = bernoulli if model == "bernoulli" else poisson
    other = pop - cases if model == "bernoulli" else pop
    res = iterative_scan(model, xy, cases, other, max_iterations=3, max_p_value=1.0, **RUN)
    assert res.stop_reason == "max_iterations"
    plain1 = fn(xy, cases, other, **RUN)
    np.testing.assert_array_equal(res.results[0].null_llr, plain1.null_llr)
    assert res.results[0].clusters.equals(plain1.clusters)
    c2, o2 = cases.copy(), other.copy()
    c2[strong] = 0
    o2[strong] = 0
    plain2 = fn(xy, c2, o2, **RUN)
    np.testing.assert_array_equal(res.results[1].null_llr, plain2.null_llr)
    assert res.results[1].clusters.drop(columns="location_ids").equals(plain2.clusters.drop(columns="location_ids"))
    assert res.clusters.log_likelihood_ratio.iloc[1] == plain2.most_likely.log_likelihood_ratio
    assert res.clusters.p_value.iloc[1] == plain2.most_likely.p_value
    # removed locations stay circle centres (SaTScan keeps them, with no data)
    assert res.results[1].n_centres == res.results[0].n_centres == len(xy)
    # and the maximum window is a fraction of what is left
    assert res.results[1].n_population == plain2.n_population < plain1.n_population
    # a later cluster never lists a location removed before
    seen = set()
    for ids in res.clusters.location_ids:
        assert not seen & set(ids)
        seen |= set(ids)


def test_removed_locations_are_not_listed_when_a_window_reaches_over_them():
    # a line of 9 locations, 100 persons in the middle one and 50 in each other: windows of at most
    # 28 % of the 500 persons (140) hold the middle location alone (with a neighbour: 150), so it is the
    # first cluster; then the circle centred on it (no data now) takes both neighbours, 100 of the 400
    # left (at most 112), and is the second cluster: SaTScan lists only the locations with data
    xy = np.column_stack([np.arange(9.0), np.zeros(9)])
    pop = np.array([50, 50, 50, 50, 100, 50, 50, 50, 50])
    cases = np.array([2, 2, 2, 25, 60, 25, 2, 2, 2])
    res = iterative_scan("poisson", xy, cases, pop, max_iterations=2, max_p_value=1.0, max_population=0.28, **RUN)
    assert res.clusters.location_ids.iloc[0] == [4]
    second = res.clusters.iloc[1]
    full = res.results[1].most_likely
    assert full.center == 4 and sorted(full.location_ids) == [3, 4, 5]
    assert sorted(second.location_ids) == [3, 5] and second.n_locations == 2
    assert second.cases == 50


def test_stops_on_p_value_and_reports_that_cluster():
    xy, cases, pop, strong, weak = _two_clusters()
    res = iterative_scan("bernoulli", xy, cases, pop - cases, max_p_value=0.0, **RUN)
    assert res.stop_reason == "p_value" and len(res.clusters) == 1
    assert sorted(res.clusters.location_ids.iloc[0]) == strong.tolist()


def test_stops_when_too_few_cases_are_left():
    xy = np.column_stack([np.arange(6.0), np.zeros(6)])
    cases = np.array([0, 0, 5, 0, 0, 1])
    res = iterative_scan("poisson", xy, cases, np.full(6, 100), max_p_value=1.0, min_cases=1, **RUN)
    # after the 5 cases go, 1 case is left: SaTScan needs 2 to scan again
    assert res.stop_reason == "cases" and len(res.clusters) == 1


def test_summary_and_repr():
    xy, cases, pop, strong, weak = _two_clusters()
    res = iterative_scan(bernoulli, xy, cases, pop - cases, max_iterations=2, **RUN)
    assert "2 iteration(s)" in res.summary() and "stopped: max_iterations" in res.summary()
    assert repr(res) == "IterativeScanResult(model='bernoulli', iterations=2, stop_reason='max_iterations')"


@pytest.mark.parametrize("kwargs, exc, words", [
    (dict(model="normal"), ValueError, ["model", "'normal'", "bernoulli", "poisson"]),
    (dict(max_iterations=0), ValueError, ["max_iterations", "0"]),
    (dict(max_iterations=32001), ValueError, ["max_iterations", "32001"]),
    (dict(max_p_value=1.5), ValueError, ["max_p_value", "1.5"]),
    (dict(n_replicates=19), ValueError, ["n_replicates=19", "99"]),
    (dict(expected=np.ones(100)), TypeError, ["expected=", "Bernoulli"]),
])
def test_refuses_before_any_work(kwargs, exc, words):
    xy, cases, pop, strong, weak = _two_clusters()
    kw = dict(RUN, **kwargs)
    model = kw.pop("model", "bernoulli")
    with pytest.raises(exc) as e:
        iterative_scan(model, xy, cases, pop - cases, **kw)
    for w in words:
        assert w in str(e.value)


def test_poisson_expected_is_zeroed_and_rescaled():
    xy, cases, pop, strong, weak = _two_clusters()
    ex = pop * (cases.sum() / pop.sum()) * np.linspace(0.9, 1.1, len(pop))
    res = iterative_scan("poisson", xy, cases, pop, expected=ex, max_iterations=2, max_p_value=1.0, **RUN)
    c2, p2, e2 = cases.copy(), pop.copy(), ex.copy()
    gone = np.isin(np.arange(len(xy)), res.clusters.location_ids.iloc[0])
    c2[gone], p2[gone], e2[gone] = 0, 0, 0
    plain2 = poisson(xy, c2, p2, expected=e2, **RUN)
    assert res.clusters.expected.iloc[1] == plain2.most_likely.expected
    np.testing.assert_array_equal(res.results[1].null_llr, plain2.null_llr)


def test_p_value_choice_decides_the_stop():
    # with 99 replicates no Monte Carlo p-value is below 0.01, the Gumbel one of a strong cluster is
    xy, cases, pop, strong, weak = _two_clusters()
    kw = dict(max_iterations=3, max_p_value=0.005, **RUN)
    mc = iterative_scan("bernoulli", xy, cases, pop - cases, **kw)
    assert mc.stop_reason == "p_value" and mc.n_iterations == 1
    for how in ("gumbel", "default"):  # default: Gumbel below rank 10 with high rates
        g = iterative_scan("bernoulli", xy, cases, pop - cases, p_value=how, **kw)
        assert g.n_iterations >= 2 and g.p_value == how
        assert g.clusters.gumbel_p_value.iloc[0] <= 0.005
    both = iterative_scan("bernoulli", xy, cases, pop - cases, p_value="default", direction="both", **kw)
    assert both.n_iterations == 1  # SaTScan's default uses Gumbel for high rates only
    with pytest.raises(ValueError, match="p_value"):
        iterative_scan("bernoulli", xy, cases, pop - cases, p_value="exact", **RUN)


def _bad(key, why):
    return ValueError(f"{key} {why}")


def test_prm_iterative_settings():
    from hphawkes_py.scan.iterative import prm_iterative

    assert prm_iterative({"IterativeScan": "n"}, "poisson", _bad) is None
    on = {"IterativeScan": "y", "IterativeScanMaxIterations": "10", "IterativeScanMaxPValue": "0.05"}
    assert prm_iterative(on, "poisson", _bad) == {"max_iterations": 10, "max_p_value": 0.05, "p_value": "default"}
    assert prm_iterative({**on, "PValueReportType": "1"}, "bernoulli", _bad)["p_value"] == "monte_carlo"
    assert prm_iterative({**on, "PValueReportType": "3"}, "bernoulli", _bad)["p_value"] == "gumbel"
    # SaTScan's 0 (its default) runs one scan
    assert prm_iterative({"IterativeScan": "y"}, "poisson", _bad)["max_iterations"] == 1
    for values, model, words in [
        ({**on, "IterativeScanMaxIterations": "x"}, "poisson", ["IterativeScanMaxIterations", "whole"]),
        ({**on, "IterativeScanMaxIterations": "32001"}, "poisson", ["IterativeScanMaxIterations", "32000"]),
        ({**on, "IterativeScanMaxPValue": "2"}, "poisson", ["IterativeScanMaxPValue", "[0, 1]"]),
        ({**on, "PValueReportType": "2"}, "poisson", ["PValueReportType"]),
        ({**on, "PerformPowerEvaluation": "y"}, "poisson", ["IterativeScan", "PerformPowerEvaluation"]),
        (on, "space_time_permutation", ["IterativeScan", "purely spatial"]),
    ]:
        with pytest.raises(ValueError) as e:
            prm_iterative(values, model, _bad)
        for w in words:
            assert w in str(e.value)


def test_poisson_covariates_keep_the_first_standardisation():
    # two age groups per location, in shares that vary over the map; the strong cluster is mostly in
    # the old group, so standardising again after its removal would change the groups' rates;
    # SaTScan keeps the first expected counts and rescales them to the cases left
    xy, cases, pop, strong, weak = _two_clusters()
    rng = np.random.default_rng(1)
    old = rng.binomial(cases, np.where(np.isin(np.arange(len(xy)), strong), 0.9, 0.3))
    xy2 = np.repeat(xy, 2, axis=0)
    c2 = np.column_stack([cases - old, old]).ravel()
    share = np.linspace(0.1, 0.6, len(xy))
    p2 = np.column_stack([pop * (1 - share), pop * share]).ravel()
    group = np.tile(["young", "old"], len(xy))
    ids = np.repeat(np.arange(len(xy)), 2)
    kw = dict(covariates=group, location_ids=ids, max_iterations=2, max_p_value=1.0, **RUN)
    res = iterative_scan("poisson", xy2, c2, p2, **kw)
    plain = poisson(xy2, c2, p2, covariates=group, location_ids=ids, **RUN)
    assert res.results[0].clusters.equals(plain.clusters)
    assert sorted(res.clusters.location_ids.iloc[0]) == strong.tolist()
    # the second cluster's expected count: the full data's, rescaled to what is left
    from hphawkes_py.scan.model import indirect_expected
    codes = (group == "old").astype(np.int64)
    ex = indirect_expected(c2.astype(float), p2, codes, ["young", "old"])
    left = ~np.isin(ids, strong)
    scale = c2[left].sum() / ex[left].sum()
    second = res.clusters.iloc[1]
    assert second.expected == pytest.approx(ex[np.isin(ids, second.location_ids)].sum() * scale, rel=1e-12)
    again = indirect_expected(np.where(left, c2, 0).astype(float), np.where(left, p2, 0), codes, ["young", "old"])
    assert abs(second.expected - again[np.isin(ids, second.location_ids)].sum()) > 1e-3
    assert second.n_locations == len(second.location_ids)


def test_elliptic_windows_iterate_as_the_plain_scan():
    xy, cases, pop, strong, weak = _two_clusters()
    kw = dict(window="ellipse", ellipse_shapes=(2,), ellipse_angles=(4,), **RUN)
    res = iterative_scan("bernoulli", xy, cases, pop - cases, max_iterations=2, max_p_value=1.0, **kw)
    c2, k2 = cases.copy(), pop - cases
    gone = np.isin(np.arange(len(xy)), res.clusters.location_ids.iloc[0])
    c2[gone], k2[gone] = 0, 0
    plain2 = bernoulli(xy, c2, k2, **kw)
    np.testing.assert_array_equal(res.results[1].null_llr, plain2.null_llr)
    assert res.clusters.test_statistic.iloc[1] == plain2.most_likely.test_statistic
    assert res.clusters["shape"].iloc[1] == plain2.most_likely["shape"]


def test_no_cluster_and_no_controls_left():
    xy = np.column_stack([np.arange(6.0), np.zeros(6)])
    # every location has the same proportion: no window has LLR > 0
    flat = iterative_scan("bernoulli", xy, np.full(6, 2), np.full(6, 8), **RUN)
    assert flat.stop_reason == "no_cluster" and len(flat.clusters) == 0 and flat.n_iterations == 1
    assert "iteration" in flat.clusters.columns
    # the only controls make the first (low-rate) cluster: the Bernoulli scan of what is left is impossible
    res = iterative_scan("bernoulli", xy, np.array([1, 1, 1, 1, 1, 0]), np.array([0, 0, 0, 0, 0, 5]),
                         max_p_value=1.0, direction="low", **RUN)
    assert res.clusters.location_ids.iloc[0] == [5]
    assert res.stop_reason == "controls" and res.n_iterations == 1


def test_table_map_and_csv(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    xy, cases, pop, strong, weak = _two_clusters()
    res = iterative_scan("bernoulli", xy, cases, pop - cases, max_iterations=2, **RUN)
    sr = res.to_scan_result()
    assert sr.clusters.location_ids.tolist() == res.clusters.location_ids.tolist()
    assert sr.n_cases == int(cases.sum()) and "iteration" not in sr.clusters.columns
    loc = sr.location_table()
    assert sorted(loc[loc.cluster == 2].location_id) == weak.tolist()
    ax = res.plot(path=tmp_path / "map.png")
    assert (tmp_path / "map.png").stat().st_size > 0 and len(ax.patches) == 2
    res.to_csv(tmp_path / "c.csv")
    back = __import__("pandas").read_csv(tmp_path / "c.csv")
    assert back.iteration.tolist() == [1, 2]
    assert back.location_ids[1] == " ".join(str(i) for i in res.clusters.location_ids.iloc[1])


def _sample_prm(path, **changes):
    """SaTScan's sample parameter file NHumbersideSpatialBernoulli.prm with values replaced."""
    from hphawkes_py.datasets import satscan_sample_path

    lines = []
    for line in satscan_sample_path("NHumbersideSpatialBernoulli.prm").read_text().splitlines():
        key = line.split("=", 1)[0]
        if "=" in line and not line.startswith(";") and key in changes:
            line = f"{key}={changes.pop(key)}"
        lines.append(line)
    assert not changes, sorted(changes)
    path.write_text("\n".join(lines) + "\n")
    return path


def test_run_prm_iterative_scan(tmp_path):
    # runs once run_prm honours IterativeScan (the hook prm_iterative); skipped while it refuses it
    import shutil

    import hphawkes_py as hp

    sat = hp.datasets.satscan_sample_path
    for f in ("ny_leukemia.cas", "ny_leukemia.pop", "ny_leukemia.geo"):
        shutil.copy(sat(f), tmp_path / f)
    prm = _sample_prm(tmp_path / "a.prm", CaseFile="ny_leukemia.cas", ControlFile="", PopulationFile="ny_leukemia.pop",
                      CoordinatesFile="ny_leukemia.geo", ModelType="0", MaxSpatialSizeInPopulationAtRisk="10",
                      PrecisionCaseTimes="1", StartDate="2000/1/1", EndDate="2000/12/31", MonteCarloReps="99",
                      PValueReportType="1", IterativeScan="y", IterativeScanMaxIterations="3",
                      IterativeScanMaxPValue="1")
    try:
        res = hp.scan.run_prm(prm, seed=4, backend="cpu", progress=False)
    except ValueError as e:
        if "IterativeScan" in str(e) and "not supported" in str(e):
            pytest.skip("run_prm does not honour IterativeScan yet")
        raise
    df = hp.scan.read_satscan(sat("ny_leukemia.cas"), population_file=sat("ny_leukemia.pop"),
                              geo_file=sat("ny_leukemia.geo"), model="poisson")
    ref = iterative_scan("poisson", df[["x", "y"]].to_numpy(float), df.cases.to_numpy(), df.population.to_numpy(),
                         location_ids=df.location_id.to_numpy(), max_iterations=3, max_p_value=1.0,
                         max_population=0.1, min_cases=2, n_replicates=99, seed=4, backend="cpu", progress=False)
    assert isinstance(res, IterativeScanResult) and res.p_value == "monte_carlo"
    assert res.clusters.drop(columns="location_ids").equals(ref.clusters.drop(columns="location_ids"))
    assert [list(map(str, i)) for i in res.clusters.location_ids] == [list(map(str, i)) for i in ref.clusters.location_ids]


#: SaTScan 10.3.2's iterative scans (batch binary built from github scanstatistics/satscan @0cd87a6 by
#: benchmarks/peers/build_satscan.sh), read from its cluster (.col.txt) and location (.gis.txt) tables:
#: per iteration the locations (SaTScan's order), cases, expected (2 decimals), LLR (6 decimals) and
#: Monte Carlo p (999 replications). Parameter files: SaTScan's NHumbersideSpatialBernoulli.prm with
#: PValueReportType=1, MonteCarloReps=999, IterativeScan=y, IterativeScanMaxPValue=1 and
#: [ny] ny_leukemia.cas/.pop/.geo, ModelType=0, MaxSpatialSizeInPopulationAtRisk=10, PrecisionCaseTimes=1,
#:      2000/1/1-2000/12/31, IterativeScanMaxIterations=6;
#: [nhb] NHumberside.cas/.ctl/.geo (the sample analysis), IterativeScanMaxIterations=5;
#: [nm] nm.cas/.pop/.geo (covariates age group and sex), ModelType=0, CoordinatesType=1, PrecisionCaseTimes=1,
#:      1973/1/1-1991/12/31, IterativeScanMaxIterations=4.
SATSCAN_ITERATIVE = {
    "ny": [
        ('49 48 50 47 1 15 51 2 13 14 3 35 16 52 36 37 12 11 5 17 10 4 6 38 18 9', 85, 49.71, 11.577255, 0.001),
        ('89 88 87 84 90 86 92 85', 38, 16.54, 10.670487, 0.003),
        ('112 113 115 111 116 219 117 123 218 114 122 110 124 220 118 133 121 125 216 120 134 217 126 139 215 132 '
         '141 140 127 142 138 131 119', 64, 36.17, 9.698099, 0.008),
        ('62 64 67 65', 25, 10.55, 7.416929, 0.047),
        ('46 45 41 54 44 43 53', 28, 12.27, 7.759652, 0.028),
        ('266 281 267 265', 12, 3.86, 5.58298, 0.242),
    ],
    "nhb": [
        ('170 173 172 169', 4, 1.22, 4.836516, 0.674),
        ('18 19 14 26', 4, 1.17, 5.03219, 0.624),
        ('132 131 127 133 121 129 117 128 122 114 124 123 140 137 118 142 139 144 109 130 134 145 112 110 135 141 '
         '115 148 147 113 107 143 102 125 138 126 152 153 154 89 155 146 158 136 149 87 84 119 111 85 108 150 86 '
         '105 116 82 98', 26, 16.89, 4.754754, 0.595),
        ('3 4 5', 3, 0.63, 4.829853, 0.588),
        ('44 39 42 51 53 46 52 62 55 60', 6, 2.1, 3.847812, 0.693),
    ],
    "nm": [
        ('Torrance Bernalillo Valencia SantaFe Guadelupe Socorro', 576, 512.66, 6.890841, 0.012),
        ('Roosevelt Curry DeBaca Quay Chaves', 132, 106.73, 3.441294, 0.255),
        ('RioArriba LosAlamos', 49, 35.43, 2.534281, 0.422),
        ('Sierra', 17, 11.07, 1.403594, 0.817),
    ],
}


@pytest.mark.parametrize("which", ["ny", "nhb", "nm"])
def test_matches_satscan_iterative_scan(which):
    import hphawkes_py as hp

    sat = hp.datasets.satscan_sample_path
    kw = dict(n_replicates=999, seed=1, backend="cpu", progress=False, max_p_value=1.0)
    if which == "ny":
        df = hp.scan.read_satscan(sat("ny_leukemia.cas"), population_file=sat("ny_leukemia.pop"),
                                  geo_file=sat("ny_leukemia.geo"), model="poisson")
        res = iterative_scan("poisson", df[["x", "y"]].to_numpy(float), df.cases.to_numpy(), df.population.to_numpy(),
                             location_ids=df.location_id.to_numpy(), max_iterations=6, max_population=0.1,
                             min_cases=2, **kw)
    elif which == "nhb":
        df = hp.scan.read_satscan(sat("NHumberside.cas"), sat("NHumberside.ctl"), geo_file=sat("NHumberside.geo"),
                                  model="bernoulli")
        res = iterative_scan("bernoulli", df[["x", "y"]].to_numpy(float), df.cases.to_numpy(), df.controls.to_numpy(),
                             location_ids=df.location_id.to_numpy(), max_iterations=5, **kw)
    else:
        long = hp.scan.read_satscan(sat("nm.cas"), population_file=sat("nm.pop"), geo_file=sat("nm.geo"),
                                    model="poisson", covariates=True, study_period=("1973/1/1", "1991/12/31"))
        res = iterative_scan("poisson", long[["x", "y"]].to_numpy(float), long.cases.to_numpy(),
                             long.population.to_numpy(), covariates=long.category.to_numpy(),
                             location_ids=long.location_id.to_numpy(), max_iterations=4, distance="great_circle",
                             min_cases=2, **kw)
    expect = SATSCAN_ITERATIVE[which]
    assert len(res.clusters) == len(expect)
    for k, (ids, cases, expected, llr, p) in enumerate(expect):
        row = res.clusters.iloc[k]
        assert " ".join(str(i) for i in row.location_ids) == ids, k
        assert row.cases == cases, k
        assert abs(row.expected - expected) <= 0.005 + 1e-9, k
        assert abs(row.log_likelihood_ratio - llr) < 5e-7 + 1e-9, k
        se = math.sqrt(2 * max(p, 0.001) * (1 - p) / 999)
        assert abs(row.p_value - p) < 4 * se + 2 / 1000, (k, row.p_value, p)
