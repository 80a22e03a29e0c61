"""Bad and extreme inputs to every public entry point of hp.scan (issue 18): each must fail
before any work with an error naming the argument (or the file, line and field), never give a
silently wrong result. A new entry point without cases here fails test_every_entry_point_is_walked."""
from __future__ import annotations

import numpy as np
import pytest

import hphawkes_py as hp

S = hp.datasets.satscan_sample_path

COORDS = [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 0.5]]
BASE = dict(coords=COORDS, cases=[1, 0, 1, 0], controls=[1, 2, 0, 3], n_replicates=9, progress=False,
            backend="cpu")

BERNOULLI = [
    (dict(coords=[[0, 0], [1, np.nan], [2, 2], [3, 3]]), ValueError, "coords must be finite"),
    (dict(coords=np.array([[True, False], [False, True], [True, True], [False, False]])), TypeError,
     "coords must hold real numbers.*booleans"),
    (dict(coords=np.array(COORDS) + 1j), TypeError, "coords.*complex"),
    (dict(coords=[[0, 0], [1, True], [2, 2], [3, 3]]), TypeError, "coords.*True"),
    (dict(cases=[1, -1, 0, 0]), ValueError, "cases must be non-negative"),
    (dict(cases=[1, np.inf, 0, 0]), ValueError, "cases must be finite"),
    (dict(controls=[0, 0, 0, 0]), ValueError, "controls"),
    (dict(max_population=True), TypeError, "max_population"),
    (dict(max_population="0.5"), TypeError, "max_population"),
    (dict(max_population=0.51), ValueError, r"max_population must be in \(0, 0.5\]"),
    (dict(n_replicates=True), TypeError, "n_replicates"),
    (dict(n_replicates=10**12), ValueError, r"n_replicates=1000000000000 is too many.*7.45e\+03 GiB"),
    (dict(direction=True), ValueError, "direction"),
    (dict(secondary=None), ValueError, "secondary"),
    (dict(grid_cell=0), ValueError, "grid_cell must be > 0"),
    (dict(grid_cell="1"), TypeError, "grid_cell"),
    (dict(grid_cell=1e-9), ValueError, "grid_cell=1e-09 gives"),
    (dict(location_ids=[1, 2, 2, 3]), ValueError, "location_ids must be unique: 2 is given for rows 1 and 2"),
    (dict(location_ids=[1, 2, 3]), ValueError, "location_ids"),
    (dict(seed=-1), ValueError, "seed must be a non-negative integer"),
    (dict(seed=1.5), TypeError, "seed"),
    (dict(seed=True), TypeError, "seed"),
    (dict(progress="no"), TypeError, "progress must be True or False"),
    (dict(threads=0), ValueError, "threads must be >= 1"),
    (dict(threads=True), TypeError, "threads"),
    (dict(backend="tpu"), ValueError, "backend"),
    (dict(executor="pool"), TypeError, "executor"),
]


def _refuse_work(monkeypatch, *modules):
    """Every step that does the scan's work (windows, engine, Monte Carlo) raises if reached: a bad
    input must be refused before any of it (10**12 replicates included)."""
    def began(*args, **kwargs):
        raise AssertionError("the scan's work began before the bad input was refused")

    for mod in modules:
        for name in ("build_windows", "_elliptic_windows", "make_engine", "_monte_carlo"):
            if hasattr(mod, name):
                monkeypatch.setattr(mod, name, began)


@pytest.mark.parametrize("kwargs, exc, match", BERNOULLI)
def test_bernoulli_bad_input(kwargs, exc, match, monkeypatch):
    from hphawkes_py.scan import model

    _refuse_work(monkeypatch, model)
    with pytest.raises(exc, match=match):
        hp.scan.bernoulli(**{**BASE, **kwargs})


def test_bernoulli_leaves_caller_arrays_alone():
    coords = np.array(COORDS)
    cases = np.array([1, 0, 1, 0])
    controls = np.array([1, 2, 0, 3])
    before = (coords.copy(), cases.copy(), controls.copy())
    res = hp.scan.bernoulli(coords, cases, controls, n_replicates=9, seed=0, progress=False, backend="cpu")
    for a, b in zip((coords, cases, controls), before):
        np.testing.assert_array_equal(a, b)
        assert a.flags.writeable
    assert not np.shares_memory(res._loc_coords, coords)


# ------------------------------------------------------------------------ SaTScan files
def _write(tmp_path, **files):
    for name, text in files.items():
        (tmp_path / name.replace("_", ".")).write_text(text)
    return lambda name: tmp_path / name


GEO = "1 0 0\n2 1 0\n3 0 1\n"


@pytest.mark.parametrize(
    "files, kwargs, match",
    [
        (dict(a_cas="1 1\n", a_ctl="1 2\n", a_geo="1 0 0\n2 nan 0\n"), {},
         r"a.geo:2: field 2 \(x / latitude\): 'nan' is not a finite number"),
        (dict(a_cas="1 1\n", a_ctl="1 2\n", a_geo="1 0 0\n2 0 inf\n"), {},
         r"a.geo:2: field 3 \(y / longitude\): 'inf' is not a finite number"),
        (dict(a_cas="1 1\n2 inf\n", a_ctl="1 2\n", a_geo=GEO), {},
         r"a.cas:2: field 2 \(#cases\): 'inf' is not a finite number"),
        (dict(a_cas="1 1\n2 -3\n", a_ctl="1 2\n", a_geo=GEO), {}, r"a.cas:2: field 2 \(#cases\): '-3' is negative"),
        (dict(a_cas="1 1.5\n", a_ctl="1 2\n", a_geo=GEO), {}, r"a.cas:1: field 2 \(#cases\): '1.5' is not a whole"),
        (dict(a_cas="1 1\n", a_ctl="1 2\n3 -1\n", a_geo=GEO), {}, r"a.ctl:2: field 2 \(#controls\): '-1' is negative"),
        (dict(a_cas="1 1\n", a_ctl="1 2\n", a_geo=GEO, a_pop="1 2000 5\n"), {"both": True},
         r"control_file \(.ctl\) or population_file \(.pop\), not both"),
        (dict(a_cas="1 6\n", a_pop="1 2000 5\n2 2000 -1\n", a_geo=GEO), {"pop": True},
         r"a.pop:2: field 3 \(population\): '-1' is negative"),
        (dict(a_cas="1 6\n", a_pop="1 2000 5\n2 2000 nan\n", a_geo=GEO), {"pop": True},
         r"a.pop:2: field 3 \(population\): 'nan' is not a finite"),
        (dict(a_cas="2 1\n1 6\n", a_pop="1 2000 5\n", a_geo=GEO), {"pop": True},
         r"a.cas:2: field 2 \(#cases\): location '1' has 6 cases .* population of 5 \(.*a.pop:1, field 3\)"),
        (dict(a_cas="1 1\n", a_ctl="1 2\n", a_geo="1 0 0\n2 1 1\n1 2 2\n"), {},
         r"a.geo:3: field 1 \(location id\) '1' is duplicated \(first on line 1\)"),
        (dict(a_cas="1 1\n7 1\n", a_ctl="1 2\n", a_geo=GEO), {},
         r"a.cas:2: field 1 \(location id\) '7' is not in the coordinates file"),
        (dict(a_cas="1 1\n", a_ctl="1 2\n", a_geo=GEO, a_pop="1 2000 5\n9 2000 5\n"), {"pop": True, "poisson": True},
         r"a.pop:2: field 1 \(location id\) '9' is not in the coordinates file"),
        (dict(a_cas="1 x\n", a_ctl="1 2\n", a_geo=GEO), {}, r"a.cas:1: field 2 \(#cases\): 'x' is not a number"),
        (dict(a_cas="1\n", a_ctl="1 2\n", a_geo=GEO), {}, r"a.cas:1: the case file needs at least 2 fields"),
        (dict(a_cas="", a_ctl="1 2\n", a_geo=GEO), {}, r"holds no records"),
        (dict(a_cas="1 1\n", a_ctl="1 2\n", a_geo=GEO, a_pop="1 y2k 5\n"), {"pop": True, "poisson": True},
         r"a.pop:1: field 2 \(census year\) 'y2k' is not a year"),
    ],
)
def test_read_satscan_bad_files(tmp_path, files, kwargs, match):
    f = _write(tmp_path, **files)
    args = dict(case_file=f("a.cas"), geo_file=f("a.geo"))
    if kwargs.get("poisson"):
        args.update(population_file=f("a.pop"), model="poisson")
    elif kwargs.get("both"):
        args.update(control_file=f("a.ctl"), population_file=f("a.pop"))
    elif kwargs.get("pop"):
        args.update(population_file=f("a.pop"))
    else:
        args.update(control_file=f("a.ctl"))
    with pytest.raises(ValueError, match=match):
        hp.scan.read_satscan(**args)


def test_read_satscan_bad_arguments(tmp_path):
    with pytest.raises(FileNotFoundError, match="case file not found"):
        hp.scan.read_satscan(tmp_path / "none.cas", S("grave.ctl"), geo_file=S("grave.geo"))
    with pytest.raises(IsADirectoryError, match="is a folder"):
        hp.scan.read_satscan(tmp_path, S("grave.ctl"), geo_file=S("grave.geo"))
    (tmp_path / "bin.cas").write_bytes(b"\x1f\x8b\x08\x00\xff\xfe\x00")
    with pytest.raises(ValueError, match="not a text file"):
        hp.scan.read_satscan(tmp_path / "bin.cas", S("grave.ctl"), geo_file=S("grave.geo"))
    with pytest.raises(ValueError, match="geo_file is required"):
        hp.scan.read_satscan(S("grave.cas"), S("grave.ctl"))
    with pytest.raises(ValueError, match="model must be one of"):
        hp.scan.read_satscan(S("grave.cas"), S("grave.ctl"), geo_file=S("grave.geo"), model="normal")
    with pytest.raises(TypeError, match="covariates must be True or False"):
        hp.scan.read_satscan(S("nm.cas"), population_file=S("nm.pop"), geo_file=S("nm.geo"), model="poisson",
                             covariates="yes")
    with pytest.raises(ValueError, match="needs model='poisson'"):
        hp.scan.read_satscan(S("grave.cas"), S("grave.ctl"), geo_file=S("grave.geo"), covariates=True)
    with pytest.raises(ValueError, match="Poisson model has no control file"):
        hp.scan.read_satscan(S("grave.cas"), S("grave.ctl"), geo_file=S("grave.geo"), model="poisson")


def test_plot_clusters_refuses_non_results():
    with pytest.raises(TypeError, match="plot_clusters needs a ScanResult"):
        hp.scan.plot_clusters({"clusters": []})


# the cases above, by entry point; ScanResult is a container built by the entry points
WALKED = {"bernoulli", "read_satscan", "plot_clusters", "ScanResult"}


def test_every_entry_point_is_walked():
    assert set(hp.scan.__all__) <= WALKED | set(EXTRA_WALKED), set(hp.scan.__all__) - WALKED


# walked in tests/test_scan_poisson.py::test_poisson_bad_input
EXTRA_WALKED: list = ["poisson", "run_prm", "space_time_permutation", "space_time"]  # run_prm: tests/test_scan_prm.py::test_run_prm_refuses_by_name
# declustered (and its result container): tests/test_scan_declustered.py::test_bad_input
EXTRA_WALKED += ["declustered", "DeclusteredScanResult"]
# normal/exponential: tests/test_scan_normal.py and test_scan_exponential.py (input checks); iterative_scan and
# power (and their results): test_scan_iterative.py, test_scan_power.py; the writers and the map:
# tests/test_scan_outputs.py
EXTRA_WALKED += ["normal", "exponential", "iterative_scan", "IterativeScanResult", "power", "PowerResult",
                 "read_alternative_hypotheses", "write_satscan", "to_geojson", "write_geojson", "to_kml", "write_kml",
                 "write_vector", "cluster_map"]
# temporal/seasonal and svtt (and their result containers): tests/test_scan_temporal.py::test_refusals,
# test_scan_svtt.py::test_refusals; ordinal/multinomial: test_scan_ordinal.py / test_scan_multinomial.py
# ::test_bad_inputs_are_refused; DataSource/read_source: test_scan_data_sources.py::test_data_source_refusals;
# cluster_linelist/write_linelist: test_scan_linelist.py::test_refusals and test_refusals_of_inputs
# space_time_exponential and continuous_poisson: tests/test_scan_exponential_space_time.py::test_bad_input,
# tests/test_scan_continuous_poisson.py::test_bad_input_errors
EXTRA_WALKED += ["space_time_exponential", "continuous_poisson"]
EXTRA_WALKED += ["temporal", "seasonal", "TemporalResult", "svtt", "SVTTResult", "ordinal", "multinomial",
                 "DataSource", "read_source", "cluster_linelist", "write_linelist"]
# space_time_normal: tests/test_scan_normal_space_time.py::test_bad_input_is_refused_before_work
EXTRA_WALKED += ["space_time_normal"]
# temporal_normal: tests/test_scan_normal_temporal.py::test_bad_input_is_refused
EXTRA_WALKED += ["temporal_normal"]
# temporal_exponential: tests/test_scan_exponential_temporal.py::test_bad_input_is_refused
EXTRA_WALKED += ["temporal_exponential"]
# the space-time and purely temporal ordinal and multinomial scans: tests/test_scan_categorical_space_time.py
# ::test_bad_inputs_are_refused_before_any_work and ::test_the_other_entry_points_refuse_bad_inputs
EXTRA_WALKED += ["space_time_ordinal", "space_time_multinomial", "temporal_ordinal", "temporal_multinomial"]
