"""hp.sccs: the skeleton contract (engine steps mean the same on every engine, entry-point
signatures, imports) and the bad or extreme inputs of issue 18, each refused with a clear
error or turned into a correct, flagged result."""
from __future__ import annotations

import ast
import inspect
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import hphawkes_py as hp
from hphawkes_py._backend import resolve_backend
from hphawkes_py.sccs import SCCSData
from hphawkes_py.sccs.engine import make_engine

import naive_sccs as nv
from engines import ENGINES

SCCS_DIR = Path(hp.__file__).parent / "sccs"


def small_problem(seed=1, n_strata=12, J=4):
    rng = np.random.default_rng(seed)
    out, cov = [], []
    rid = 0
    for s in range(n_strata):
        k = int(rng.integers(2, 5))
        y = rng.integers(0, 3, size=k)
        y[0] = max(y[0], 1)
        for i in range(k):
            out.append((s, rid, int(y[i]), float(rng.uniform(1.0, 20.0))))
            for j in range(J):
                if rng.random() < 0.5:
                    cov.append((rid, f"c{j}", float(rng.normal(0.3, 1.0))))
            rid += 1
    return SCCSData.from_long(pd.DataFrame(out, columns=["stratum_id", "row_id", "y", "time"]),
                              pd.DataFrame(cov, columns=["row_id", "covariate_id", "value"]))


def separated_problem(seed=0, n_strata=40):
    """The 'drug' covariate is on at every event of every case: its MLE is +infinity."""
    rng = np.random.default_rng(seed)
    out, cov = [], []
    rid = 0
    for s in range(n_strata):
        for k in range(3):
            out.append((s, rid, 1 if k == 0 else 0, float(rng.uniform(5, 30))))
            if k == 0:
                cov.append((rid, "drug"))
            if rng.random() < 0.5:
                cov.append((rid, "age"))
            rid += 1
    return SCCSData.from_long(pd.DataFrame(out, columns=["stratum_id", "row_id", "y", "time"]),
                              pd.DataFrame(cov, columns=["row_id", "covariate_id"]))


# ---------------------------------------------------------------- skeleton
@pytest.mark.parametrize("backend", ENGINES)
def test_log_likelihood_at_beta_means_the_same_on_every_engine(backend):
    """log_likelihood(beta) is the log-likelihood AT beta even when the state is elsewhere
    (the CUDA engine used to ignore beta and return the state's value)."""
    data = small_problem()
    X, y, t, st = nv.dense_design(data), data.y, data.time, data.row_stratum
    rng = np.random.default_rng(5)
    b1, b2 = rng.normal(0, 0.4, data.n_covariates), rng.normal(0, 0.4, data.n_covariates)
    eng = make_engine(data, backend=resolve_backend(backend))
    eng.set_beta(b1)
    assert eng.log_likelihood(b2) == pytest.approx(nv.loglik(X, y, t, st, b2), rel=1e-12)
    np.testing.assert_array_equal(eng.beta, b2)
    # and None means the current coefficients, after sparse updates too
    eng.update(1, 0.25)
    b2[1] += 0.25
    assert eng.log_likelihood() == pytest.approx(nv.loglik(X, y, t, st, b2), rel=1e-12)
    np.testing.assert_allclose(eng.stratum_log_likelihood(b1), nv.stratum_loglik(X, y, t, st, b1), rtol=1e-12)
    # a fresh engine is at b = 0 with a consistent state (gradient usable before set_beta)
    fresh = make_engine(data, backend=resolve_backend(backend))
    g, h = fresh.gradient_hessian(0)
    gr, hr = nv.gradient_hessian(X, y, t, st, np.zeros(data.n_covariates), 0)
    assert g == pytest.approx(gr, rel=1e-12, abs=1e-12) and h == pytest.approx(hr, rel=1e-12, abs=1e-12)


def test_cpu_engine_float32_storage():
    """dtype=float32 on the CPU engine stores texp/D in single precision (sums in float64)."""
    data = small_problem(3)
    X = nv.dense_design(data)
    beta = np.random.default_rng(2).normal(0, 0.3, data.n_covariates)
    eng = make_engine(data, backend="cpu", dtype=np.float32)
    assert eng._texp.dtype == np.float32
    eng.set_beta(beta)
    assert eng.log_likelihood() == pytest.approx(nv.loglik(X, data.y, data.time, data.row_stratum, beta), rel=1e-5)
    f64 = hp.sccs.fit(data, prior="normal", variance=1.0, backend="cpu", progress=False)
    f32 = hp.sccs.fit(data, prior="normal", variance=1.0, backend="cpu", progress=False, dtype=np.float32)
    assert f32.dtype == "float32" and f64.dtype == "float64"
    np.testing.assert_allclose(f32.coefficients, f64.coefficients, atol=1e-4)
    with pytest.raises(ValueError, match="dtype"):
        hp.sccs.fit(data, dtype=np.int32, backend="cpu")


def _imports(path):
    """Modules a file imports anywhere (function-level imports included), as written."""
    mods = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            mods.add(("." * node.level) + (node.module or ""))
        elif isinstance(node, ast.Import):
            mods.update(a.name for a in node.names)
    return mods


def test_engines_are_siblings_and_methods_stay_off_the_edges():
    """cpu.py and gpu.py import engine.py (and lower), never each other; no module of the
    method imports the CLI or datasets."""
    files = sorted(SCCS_DIR.glob("*.py"))
    assert {"cpu.py", "gpu.py", "engine.py", "model.py", "design.py"} <= {f.name for f in files}
    for path in files:
        mods = _imports(path)
        assert not any("cli" in m or "datasets" in m for m in mods), (path.name, mods)
        if path.name == "cpu.py":
            assert ".gpu" not in mods and "..gpu.device" not in mods
        if path.name == "gpu.py":
            assert ".cpu" not in mods and not any("numba" in m for m in mods)


def test_no_import_cycle_and_no_module_named_like_a_function():
    """The method's modules import each other in one direction, lazy imports included (only
    make_engine's dispatch to the engine classes is lazy by design), and no module has the
    name of a function the method exports (hp.sccs.simulate is the function)."""
    files = {f.stem: f for f in SCCS_DIR.glob("*.py") if f.stem != "__init__"}
    graph = {name: {m[1:].split(".")[0] for m in _imports(path) if m.startswith(".") and not m.startswith("..")}
             for name, path in files.items()}
    graph["engine"] -= {"cpu", "gpu"}  # make_engine's dispatch
    state = {}

    def visit(n, trail):
        assert state.get(n) != "open", f"import cycle: {' -> '.join(trail + [n])}"
        if state.get(n) == "done":
            return
        state[n] = "open"
        for m in graph.get(n, ()):
            visit(m, trail + [n])
        state[n] = "done"

    for name in graph:
        visit(name, [])
    functions = {n for n in hp.sccs.__all__ if inspect.isfunction(getattr(hp.sccs, n))}
    assert not functions & set(files), functions & set(files)


def test_entry_point_signatures():
    for fn in (hp.sccs.fit, hp.sccs.cross_validate, hp.sccs.bootstrap):
        p = inspect.signature(fn).parameters
        assert p["backend"].default == "auto" and p["threads"].default is None
        assert p["progress"].default is True and p["dtype"].default is np.float64
        assert p["convergence"].default == "auto"
    for fn in (hp.sccs.cross_validate, hp.sccs.bootstrap):
        p = inspect.signature(fn).parameters
        assert p["seed"].default is None and p["executor"].default is None


def test_entry_points_refuse_bad_kinds():
    data = small_problem()
    bad = [
        (dict(max_iterations=True), TypeError, "max_iterations"),
        (dict(max_iterations=2.5), TypeError, "max_iterations"),
        (dict(max_iterations=0), ValueError, "max_iterations"),
        (dict(tolerance="1e-6"), TypeError, "tolerance"),
        (dict(tolerance=0.0), ValueError, "tolerance"),
        (dict(variance=True), TypeError, "variance"),
        (dict(progress="no"), TypeError, "progress"),
        (dict(threads=True), TypeError, "threads"),
        (dict(threads=0), ValueError, "threads"),
        (dict(convergence="kkt"), ValueError, "convergence"),
        (dict(start=np.zeros(3)), ValueError, "start"),
        (dict(start=pd.Series({"nope": 1.0})), ValueError, "start"),
        (dict(weights=-np.ones(data.n_strata)), ValueError, "weights"),
        (dict(prior=1), TypeError, "prior"),
    ]
    for kw, exc, word in bad:
        with pytest.raises(exc, match=word):
            hp.sccs.fit(data, backend="cpu", **kw)
    with pytest.raises(TypeError, match="folds"):
        hp.sccs.cross_validate(data, folds=2.0, backend="cpu")
    with pytest.raises(TypeError, match="replicates"):
        hp.sccs.bootstrap(data, replicates=True, backend="cpu")
    with pytest.raises(TypeError, match="seed"):
        hp.sccs.bootstrap(data, replicates=2, seed="x", backend="cpu")


# ---------------------------------------------------------------- issue 18
@pytest.mark.parametrize("backend", ENGINES)
def test_overflowing_start_is_refused_not_nan(backend):
    sim, _ = hp.sccs.simulate(n_cases=300, n_drugs=5, seed=1)
    with pytest.raises(ValueError, match="start: the log-likelihood is not finite"):
        hp.sccs.fit(sim, start=np.full(5, 1e3), backend=backend, progress=False)
    # a large but finite start converges to the same optimum as zeros
    f = hp.sccs.fit(sim, start=np.full(5, 3.0), tolerance=1e-10, backend=backend, progress=False)
    f0 = hp.sccs.fit(sim, tolerance=1e-10, backend=backend, progress=False)
    assert np.all(np.isfinite(f.coefficients)) and f.converged
    np.testing.assert_allclose(f.coefficients, f0.coefficients, atol=1e-7)


def test_non_finite_cycle_is_undone_with_smaller_steps(monkeypatch):
    """A cycle that overflows (here a first step of +800 forced on coordinate 0) is undone and
    retried from the previous coefficients with smaller steps instead of returning NaN."""
    from hphawkes_py.sccs import ccd
    from hphawkes_py.sccs.priors import prior_spec

    data = small_problem(4)
    eng = make_engine(data, backend="cpu")
    real_step = ccd.newton_step
    calls = []

    def wild_step(*a):
        calls.append(1)
        return 800.0 if len(calls) == 1 else real_step(*a)

    monkeypatch.setattr(ccd, "INITIAL_BOUND", 1e4)
    monkeypatch.setattr(ccd, "newton_step", wild_step)
    with np.errstate(all="ignore"):
        r = ccd.coordinate_descent(eng, spec=prior_spec(data, "normal", 10.0, (), None), tolerance=1e-10,
                                   max_iterations=500, convergence="gradient")
    monkeypatch.undo()
    ref = hp.sccs.fit(data, prior="normal", variance=10.0, tolerance=1e-10, backend="cpu", progress=False)
    assert r.step_halvings == 1 and r.converged and math.isfinite(r.log_likelihood)
    np.testing.assert_allclose(r.beta, ref.coefficients.to_numpy(), atol=1e-6)


@pytest.mark.parametrize("backend", ENGINES)
def test_separation_is_detected_and_flagged(backend):
    data = separated_problem()
    with pytest.warns(hp.sccs.MLEWarning, match=r"does not exist for covariate\(s\) \['drug'\]"):
        f = hp.sccs.fit(data, prior="none", backend=backend, progress=False)
    assert f.infinite == ("drug",) and not f.converged
    assert "infinite=['drug']" in repr(f)
    # the penalised fit has a finite mode: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = hp.sccs.fit(data, prior="normal", variance=1.0, backend=backend, progress=False)
    assert g.infinite == () and g.converged
    # excluded from the prior, the drug's MLE is infinite again
    with pytest.warns(hp.sccs.MLEWarning):
        h = hp.sccs.fit(data, prior="normal", variance=1.0, exclude=["drug"], backend=backend, progress=False)
    assert h.infinite == ("drug",)


def test_large_finite_effect_is_not_flagged():
    """A true log RR of 6 (RR 400) is large but finite: no warning."""
    data, truth = hp.sccs.simulate(n_cases=3000, n_drugs=2, prevalence=0.5, fraction_positive=0.5,
                                   relative_risks=(400.0,), seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f = hp.sccs.fit(data, prior="none", tolerance=1e-10, backend="cpu", progress=False)
    assert f.coefficients.max() > 5 and f.infinite == () and f.converged


def test_from_eras_refuses_non_integer_offsets():
    obs = pd.DataFrame({"person_id": [1], "start": [0], "end": [99]})
    eras = pd.DataFrame({"person_id": [1], "start": [10], "end": [19], "covariate_id": ["a"]})
    outc = pd.DataFrame({"person_id": [1], "day": [12]})
    with pytest.raises(TypeError, match="risk_start must be an integer, got 1.7"):
        SCCSData.from_eras(obs, eras, outc, risk_start=1.7)
    with pytest.raises(TypeError, match="risk_end"):
        SCCSData.from_eras(obs, eras, outc, risk_end=2.0)
    with pytest.raises(TypeError, match="risk_start"):
        SCCSData.from_eras(obs, eras, outc, risk_start=True)
    with pytest.raises(TypeError, match=r"risk_windows\['a'\]\[1\]"):
        SCCSData.from_eras(obs, eras, outc, risk_windows={"a": (1, 3.5)})
    with pytest.raises(TypeError, match="merge"):
        SCCSData.from_eras(obs, eras, outc, merge="no")
    with pytest.raises(ValueError, match="strata_without_events"):
        SCCSData.from_long(*SCCSData.from_eras(obs, eras, outc).to_long(), strata_without_events="dropit")


def test_simulate_refuses_bad_parameters():
    for kw, exc, word in [
        (dict(relative_risks=(2.0, 0.0)), ValueError, "relative_risks"),
        (dict(relative_risks=(-1.5,)), ValueError, "relative_risks"),
        (dict(relative_risks=()), ValueError, "relative_risks"),
        (dict(mean_era_days=(-10.0, 5.0)), ValueError, "mean_era_days"),
        (dict(mean_era_days=(20.0, 5.0)), ValueError, "mean_era_days"),
        (dict(observation_days=(10.5, 20)), TypeError, "observation_days"),
        (dict(fraction_positive="0.1"), TypeError, "fraction_positive"),
        (dict(extra_events=-0.5), ValueError, "extra_events"),
        (dict(prevalence=[0.1, 0.2]), ValueError, "prevalence"),
        (dict(prevalence=1.5), ValueError, "prevalence"),
    ]:
        with pytest.raises(exc, match=word):
            hp.sccs.simulate(n_cases=10, n_drugs=3, **kw)


def test_simulate_refuses_impossible_sizes_before_allocating():
    import tracemalloc

    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"n_cases=1000000000 would need about [0-9.]+ GiB"):
            hp.sccs.simulate(n_cases=10**9, n_drugs=5, seed=1)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 10 * 2**20


@pytest.mark.parametrize("values", [False, True])
def test_long_round_trip_is_exact(values):
    """from_long(*to_long()) keeps covariates without non-zeros (simulate(300, 5, seed=1) has
    drugs nobody used) and every array of the design."""
    if values:
        data = small_problem(7)
        o, c = data.to_long()
        c = pd.concat([c, pd.DataFrame({"row_id": [o.row_id[0]], "covariate_id": ["zz"], "value": [0.0]})])
        data = SCCSData.from_long(o, c)
        assert "zz" in data.covariate_ids
    else:
        data, _ = hp.sccs.simulate(n_cases=300, n_drugs=5, seed=1)
        assert (np.diff(data.col_ptr) == 0).sum() >= 1
    back = SCCSData.from_long(*data.to_long())
    for name in ("stratum_ids", "row_ids", "covariate_ids", "stratum_ptr", "row_stratum", "y", "time", "n_events",
                 "col_ptr", "row_idx"):
        np.testing.assert_array_equal(getattr(back, name), getattr(data, name), err_msg=name)
    assert (back.values is None) == (data.values is None)
    if data.values is not None:
        np.testing.assert_array_equal(back.values, data.values)
    f1 = hp.sccs.fit(data, backend="cpu", progress=False)
    f2 = hp.sccs.fit(back, backend="cpu", progress=False)
    pd.testing.assert_series_equal(f1.coefficients, f2.coefficients)
