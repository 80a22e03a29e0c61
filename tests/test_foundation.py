"""Foundation: validation messages, backend selection, replicates, datasets, fast exp, CLI."""
from __future__ import annotations

import concurrent.futures as cf
import math
import subprocess
import sys

import numpy as np
import pytest

import hphawkes_py.gpu as hpgpu

from hphawkes_py import _backend, _parallel, _validate, datasets
from hphawkes_py._backend import BackendUnavailableError


# ----------------------------------------------------------------------------- validation
def test_as_float_array_reports_nan_position_and_name():
    with pytest.raises(ValueError, match=r"times must be finite: 1 NaN/inf value\(s\), first at index 2"):
        _validate.as_float_array([0.0, 1.0, np.nan], "times")


def test_as_float_array_shape_and_rows():
    with pytest.raises(ValueError, match=r"x must have shape \(any, 2\), got \(4, 3\)"):
        _validate.as_float_array(np.zeros((4, 3)), "x", shape=(None, 2))
    with pytest.raises(ValueError, match="x needs at least 2 rows, got 1"):
        _validate.as_float_array(np.zeros((1, 2)), "x", min_rows=2)
    with pytest.raises(ValueError, match="must be 1 or 2-dimensional"):
        _validate.as_float_array(np.zeros((1, 2, 3)), "x", ndim=(1, 2))
    with pytest.raises(TypeError, match="x must be an array of numbers"):
        _validate.as_float_array(["a", "b"], "x")


def test_as_float_array_keeps_values_and_order():
    a = np.array([[3.0, 1.0], [2.0, 5.0]], order="F")
    out = _validate.as_float_array(a, "a", dtype=np.float32)
    assert out.flags.c_contiguous and out.dtype == np.float32
    np.testing.assert_array_equal(out, a.astype(np.float32))


def test_count_array_refuses_fractions_and_negatives():
    with pytest.raises(ValueError, match=r"cases must hold whole numbers; cases\[1\] = 1.5"):
        _validate.as_count_array([1, 1.5], "cases")
    with pytest.raises(ValueError, match=r"cases must be non-negative; cases\[0\] = -1"):
        _validate.as_count_array([-1, 2], "cases")
    np.testing.assert_array_equal(_validate.as_count_array([1.0, 2.0], "c"), [1, 2])


@pytest.mark.parametrize(
    "call, exc, msg",
    [
        (lambda: _validate.check_positive(0.0, "tau_x"), ValueError, "tau_x must be > 0, got 0.0"),
        (lambda: _validate.check_positive(float("inf"), "h"), ValueError, "h must be finite"),
        (lambda: _validate.check_positive(True, "h"), TypeError, "h must be a real number"),
        (lambda: _validate.check_int(2.5, "chains"), TypeError, "chains must be an integer"),
        (lambda: _validate.check_int(0, "chains", minimum=1), ValueError, "chains must be >= 1, got 0"),
        (lambda: _validate.check_probability(0.7, "max_population", high_open=False), None, None),
        (lambda: _validate.check_probability(0.0, "p"), ValueError, r"p must be in \(0, 1\], got 0.0"),
        (lambda: _validate.check_in("x", "method", ("a", "b")), ValueError, "method must be one of"),
        (lambda: _validate.check_same_length(x=[1, 2], t=[1]), ValueError, "x has 2, t has 1"),
        (lambda: _validate.check_sorted(np.array([0.0, 2.0, 1.0]), "t"), ValueError, r"t\[1\] = 2.0 is followed by 1.0"),
        (lambda: _validate.check_dtype(np.int32), ValueError, "dtype must be numpy.float32 or numpy.float64"),
        (lambda: _validate.check_random_state("abc"), TypeError, "seed must be None"),
    ],
)
def test_scalar_checks(call, exc, msg):
    if exc is None:
        call()
    else:
        with pytest.raises(exc, match=msg):
            call()


# ----------------------------------------------------------------------------- backends
def test_resolve_backend_rules(monkeypatch):
    monkeypatch.setenv("HPHAWKES_DISABLE_GPU", "1")
    hpgpu.gpu_status.cache_clear()
    try:
        assert _backend.resolve_backend("auto") == "cpu"
        assert _backend.resolve_backend("cpu") == "cpu"
        assert _backend.resolve_backend("emulator") == "emulator"
        with pytest.raises(BackendUnavailableError, match="backend='gpu' cannot run: disabled"):
            _backend.resolve_backend("gpu")
        with pytest.raises(ValueError, match="backend must be one of"):
            _backend.resolve_backend("tpu")
    finally:
        hpgpu.gpu_status.cache_clear()


def test_gpu_status_explains_missing_pycuda():
    """Without PyCUDA, asking for it by name says how to install it; gpu_status lists it among
    the reasons when no other API (CuPy) reaches a GPU either."""
    try:
        import pycuda  # noqa: F401
    except ImportError:
        with pytest.raises(BackendUnavailableError, match=r"pip install 'hphawkes_py\[gpu\]'"):
            hpgpu.get_device("pycuda")
        ok, why = _backend.gpu_status()
        if not ok:
            assert "pip install 'hphawkes_py[gpu]'" in why


def test_threads_context_sets_and_restores():
    import numba

    before = numba.get_num_threads()
    with _backend.threads_context(1):
        assert numba.get_num_threads() == 1
    assert numba.get_num_threads() == before
    with pytest.raises(ValueError, match="threads="):
        with _backend.threads_context(numba.config.NUMBA_NUM_THREADS + 1):
            pass
    with pytest.raises(ValueError, match="threads must be a positive integer"):
        with _backend.threads_context(0):
            pass


# ----------------------------------------------------------------------------- replicates
def _draw(item, seed_seq, scale):
    rng = np.random.default_rng(seed_seq)
    return item, scale * rng.standard_normal(3)


def test_replicates_identical_across_executors():
    serial = _parallel.run_replicates(_draw, range(6), seed=42, args=(2.0,))
    with cf.ThreadPoolExecutor(3) as ex:
        threaded = _parallel.run_replicates(_draw, range(6), seed=42, executor=ex, args=(2.0,))
    assert [i for i, _ in serial] == list(range(6))
    for (i, a), (j, b) in zip(serial, threaded):
        assert i == j
        np.testing.assert_array_equal(a, b)
    # different replicates get different streams; a different seed changes them
    assert not np.array_equal(serial[0][1], serial[1][1])
    other = _parallel.run_replicates(_draw, range(6), seed=43, args=(2.0,))
    assert not np.array_equal(serial[0][1], other[0][1])


def test_replicates_propagate_errors():
    def boom(item, s):
        if item == 2:
            raise RuntimeError("replicate 2 failed")
        return item

    with cf.ThreadPoolExecutor(2) as ex, pytest.raises(RuntimeError, match="replicate 2 failed"):
        _parallel.run_replicates(boom, range(4), executor=ex)


def test_split_evenly():
    assert _parallel.split_evenly(10, 3) == [4, 3, 3]
    assert _parallel.split_evenly(2, 5) == [1, 1]
    assert sum(_parallel.split_evenly(999, 8)) == 999


@pytest.mark.dask
def test_replicates_on_dask_local_cluster():
    distributed = pytest.importorskip("distributed")
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    serial = _parallel.run_replicates(_draw, range(4), seed=7, args=(1.0,))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            remote = _parallel.run_replicates(_draw, range(4), seed=7, executor=client, args=(1.0,))
    for (i, a), (j, b) in zip(serial, remote):
        assert i == j
        np.testing.assert_array_equal(a, b)


# ----------------------------------------------------------------------------- fast exp
def test_exp_fast_accuracy_and_fastmath_safety():
    from numba import njit

    from hphawkes_py._fastmath import exp_fast, exp_fast32

    @njit(fastmath=True)
    def apply_fast(x, out):  # caller compiled with fastmath: exp_fast must stay exact
        for i in range(x.size):
            out[i] = exp_fast(x[i])

    @njit
    def apply32(x, out):
        for i in range(x.size):
            out[i] = exp_fast32(x[i])

    x = np.random.default_rng(0).uniform(-708.0, 709.4, 200_000)
    x[:5] = [0.0, -1e-300, 1e-300, -708.3, 709.0]
    out = np.empty_like(x)
    apply_fast(x, out)
    assert np.max(np.abs(out / np.exp(x) - 1.0)) < 5e-16
    edge = np.array([-800.0, -709.0, 710.0])
    oe = np.empty_like(edge)
    apply_fast(edge, oe)
    assert oe[0] == 0.0 and oe[1] == 0.0 and math.isinf(oe[2])
    x32 = np.random.default_rng(1).uniform(-80, 80, 100_000).astype(np.float32)
    o32 = np.empty_like(x32)
    apply32(x32, o32)
    assert np.max(np.abs(o32 / np.exp(x32.astype(np.float64)) - 1.0)) < 2.5 * np.finfo(np.float32).eps


# ----------------------------------------------------------------------------- datasets
def test_datasets_rows_and_columns():
    dc = datasets.load_dc_gunshots("no_holidays")
    assert dc.shape == (54_582, 3) and np.all(np.diff(dc["t_hours"].to_numpy()) >= 0)
    assert datasets.load_dc_gunshots("2010").shape == (5_022, 3)
    g = datasets.load_grave()
    assert int(g["case"].sum()) == 30 and len(g) == 143
    ny = datasets.load_ny_leukemia()
    assert int(ny["cases_floor"].sum()) == 552 and int(ny["population"].sum()) == 1_057_673
    assert datasets.load_oxford().shape == (38, 6)
    assert datasets.load_faithful().shape == (272, 2)
    assert datasets.load_flow_cytometry("facsdiva").shape == (83_411, 12)
    assert datasets.load_zhang2017_points("sim50000").shape == (50_000, 2)
    outcomes, cov = datasets.load_cpr_test()
    assert outcomes.shape[0] == 209 and cov.shape[0] == 33_760
    with pytest.raises(ValueError, match="variant must be one of"):
        datasets.load_dc_gunshots("2011")
    with pytest.raises(FileNotFoundError, match="no bundled data file"):
        datasets.path("kde/nothing.csv")


# ----------------------------------------------------------------------------- CLI
def test_cli_info_runs():
    out = subprocess.run([sys.executable, "-m", "hphawkes_py", "info"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "numba_threading_layer" in out.stdout and "gpu_usable" in out.stdout and "nvcc" in out.stdout


def test_cli_help_mentions_units():
    out = subprocess.run([sys.executable, "-m", "hphawkes_py", "--help"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and "Units and file formats" in out.stdout


# ----------------------------------------------------------------------------- Numba cache
def test_numba_caches_are_dropped_when_a_shared_helper_changes(tmp_path):
    """A kernel cached against an old _fastmath must not survive a change of _fastmath (Numba only
    watches the kernel's own file): the package's cache files go, other files stay."""
    import os

    from hphawkes_py._numba_cache import STAMP_NAME, refresh

    pkg = tmp_path / "pkg"
    (pkg / "sub" / "__pycache__").mkdir(parents=True)
    (pkg / "_fastmath.py").write_text("x = 1\n")
    stale = [pkg / "sub" / "__pycache__" / "cpu.k-10.py311.nbi", pkg / "sub" / "__pycache__" / "cpu.k-10.py311.1.nbc"]
    keep = pkg / "sub" / "__pycache__" / "cpu.cpython-311.pyc"
    for f in (*stale, keep):
        f.write_bytes(b"0")
    assert refresh(pkg) is True  # no stamp yet: caches of unknown provenance are dropped
    assert not any(f.exists() for f in stale) and keep.exists()
    assert (pkg / "__pycache__" / STAMP_NAME).is_file()
    for f in stale:
        f.write_bytes(b"0")
    assert refresh(pkg) is False  # helper unchanged: caches kept
    assert all(f.exists() for f in stale)
    (pkg / "_fastmath.py").write_text("x = 22\n")  # the helper changes (size and mtime)
    os.utime(pkg / "_fastmath.py", ns=(1, 1))
    assert refresh(pkg) is True
    assert not any(f.exists() for f in stale) and keep.exists()
