"""hp.scan.multinomial: the multinomial-model scan against a naive NumPy formula, a planted cluster,
its input checks, the CUDA kernel on the emulator, and SaTScan 10.3.2 itself (the oracle and its
stored output are those of test_scan_ordinal.py, which runs both models on one data set).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import hphawkes_py as hp
from hphawkes_py.scan._categorical import category_table, permute_categories
from hphawkes_py.scan.multinomial_model import multinomial

sys.path.insert(0, str(Path(__file__).parent))
from engines import CUDA_ENGINES  # noqa: E402
from test_scan_ordinal import (ANALYSES, _engine, check_against_satscan, naive_best, naive_llr, oracle,  # noqa: E402
                               satscan_data)


def _data(seed=4, n_loc=30, n_cases=300, labels=("A", "B", "C"), p_near=(0.15, 0.7, 0.15)):
    """Cases at random locations (one row each) with labels drawn evenly, except within radius 2.5 of
    location 0, where they follow ``p_near``."""
    rng = np.random.default_rng(seed)
    xy = rng.uniform(0, 10, (n_loc, 2)).round(3)
    loc = np.concatenate([np.arange(n_loc), rng.integers(0, n_loc, n_cases - n_loc)])
    lab = np.asarray(labels)
    cat = np.where(np.hypot(*(xy[loc] - xy[0]).T) < 2.5, rng.choice(lab, n_cases, p=p_near), rng.choice(lab, n_cases))
    return xy, loc, cat


@pytest.mark.parametrize("labels", [("A", "B", "C"), ("x", "y", "z", "w", "v")])
def test_llr_of_every_centre_matches_the_naive_formula(labels):
    p = np.linspace(1, 4, len(labels))
    xy, loc, cat = _data(labels=labels, p_near=p / p.sum())
    eng, counts = _engine(xy, loc, cat, False, "high")
    got, arg = eng.best_per_centre(counts[:, :, None])
    want = naive_best(eng, counts, [None])
    assert (want > 0.5).sum() >= 10
    np.testing.assert_allclose(got[:, 0], want, rtol=1e-12, atol=1e-12)
    for i in np.flatnonzero(want > 0)[:8]:
        c = counts[eng.neighbors[eng.offsets[i]:arg[i, 0] + 1]].sum(axis=0)
        assert naive_llr(c, eng.tot, None) == pytest.approx(got[i, 0], rel=1e-12, abs=1e-12)


def test_category_order_does_not_change_the_scan():
    # relabelling the categories permutes them; the windows' LLRs are the same up to rounding
    xy, loc, cat = _data()
    a = multinomial(xy[loc], cat, location_ids=loc, n_replicates=19, seed=3, progress=False, backend="cpu")
    b = multinomial(xy[loc], np.char.add("z", cat), location_ids=loc, n_replicates=19, seed=3, progress=False,
                    backend="cpu")
    assert a.most_likely.location_ids == b.most_likely.location_ids
    assert a.most_likely.log_likelihood_ratio == pytest.approx(b.most_likely.log_likelihood_ratio, rel=1e-12)
    assert [g[0] for g in b.most_likely.categories] == ["zA", "zB", "zC"]


def test_numeric_and_text_labels():
    xy, loc, cat = _data()
    codes = np.searchsorted(np.array(["A", "B", "C"]), cat) + 7
    a = multinomial(xy[loc], cat, location_ids=loc, n_replicates=9, seed=3, progress=False, backend="cpu")
    b = multinomial(xy[loc], codes, location_ids=loc, n_replicates=9, seed=3, progress=False, backend="cpu")
    c = multinomial(xy[loc], cat.astype(object), location_ids=loc, n_replicates=9, seed=3, progress=False,
                    backend="cpu")
    np.testing.assert_array_equal(a.null_llr, b.null_llr)
    np.testing.assert_array_equal(a.null_llr, c.null_llr)
    assert b.most_likely.categories == [(7,), (8,), (9,)]


@pytest.mark.parametrize("backend", CUDA_ENGINES)
def test_multinomial_cpu_and_cuda_engines_agree(backend):
    xy, loc, cat = _data(labels=("A", "B", "C", "D"), p_near=(0.1, 0.2, 0.6, 0.1))
    kw = dict(location_ids=loc, n_replicates=40, seed=5, progress=False, max_population=0.4)
    a = multinomial(xy[loc], cat, backend="cpu", **kw)
    b = multinomial(xy[loc], cat, backend=backend, **kw)
    assert b.backend == backend
    np.testing.assert_array_equal(b.null_llr, a.null_llr)
    assert b.clusters.location_ids.tolist() == a.clusters.location_ids.tolist()
    pd.testing.assert_frame_equal(a.clusters, b.clusters)
    from hphawkes_py._backend import get_device
    from hphawkes_py.scan._categorical import GpuCategoricalEngine

    eng, counts = _engine(xy, loc, cat, False, "high", 0.4)
    g = GpuCategoricalEngine(eng, device=get_device(backend), backend=backend)
    null = permute_categories(loc, np.unique(cat, return_inverse=True)[1], 4, len(xy),
                              np.random.SeedSequence(1).spawn(33))
    mv_c, arg_c = eng.best_mv(null)
    mv_g, arg_g = g.best_mv(null)
    np.testing.assert_array_equal(mv_g, mv_c)
    np.testing.assert_array_equal(arg_g, arg_c)


def test_planted_cluster_of_one_category_is_recovered():
    xy, loc, cat = _data(seed=11, n_loc=50, n_cases=600)
    truth = set(np.flatnonzero(np.hypot(*(xy - xy[0]).T) < 2.5).tolist())
    res = multinomial(xy[loc], cat, location_ids=loc, n_replicates=99, seed=2, progress=False, backend="cpu")
    top = res.most_likely
    found = set(top.location_ids)
    assert len(found & truth) >= 0.8 * len(truth) and len(found - truth) <= 0.5 * len(truth)
    assert top.p_value == 0.01 and res.model == "multinomial"
    inside = np.isin(loc, list(found))
    assert top.observed_by_category == [int((cat[inside] == v).sum()) for v in "ABC"]
    assert top.ode_by_category[1] > 1.5 and top.relative_risk_by_category[1] > 2
    assert sum(top.percent_by_category) == pytest.approx(100.0, rel=1e-12)
    tab = category_table(res)
    assert tab[tab.cluster == 1].categories.tolist() == [("A",), ("B",), ("C",)]
    assert "cluster_type" not in res.clusters.columns  # no high or low cluster in this model


@pytest.mark.parametrize("kw, exc, match", [
    (dict(categories=["a", None, "b"]), ValueError, r"categories\[1\] = None"),
    (dict(categories=[1.0, np.nan, 2.0]), ValueError, r"categories\[1\] = nan"),
    (dict(categories=["a", "b"]), ValueError, r"one entry per case \(3\)"),
    (dict(categories=["a", "a", "a"]), ValueError, "at least 2 categories"),
    (dict(n_replicates=0), ValueError, "n_replicates"),
    (dict(backend="quantum"), ValueError, "backend"),
    (dict(max_population=0.0), ValueError, "max_population"),
    (dict(coords=[[0.0, 0.0], [1.0, np.inf], [2.0, 0.0]]), ValueError, "coords"),
])
def test_bad_inputs_are_refused(kw, exc, match):
    args = dict(coords=[[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]], categories=["a", "b", "c"])
    args.update(kw)
    with pytest.raises(exc, match=match):
        multinomial(args.pop("coords"), args.pop("categories"), n_replicates=args.pop("n_replicates", 9),
                    progress=False, **args)


def test_direction_is_not_an_argument():
    # SaTScan's multinomial clusters are neither high nor low
    with pytest.raises(TypeError, match="direction"):
        multinomial([[0.0, 0.0], [1.0, 0.0]], ["a", "b"], direction="low")


@pytest.fixture(scope="module")
def satscan_output():
    return oracle([n for n in ANALYSES if n.startswith("multinomial")])


@pytest.mark.parametrize("name", [n for n in ANALYSES if n.startswith("multinomial")])
def test_multinomial_matches_satscan(name, satscan_output):
    size = ANALYSES[name][2]
    xy, loc, cat = satscan_data()
    res = multinomial(xy[loc], np.char.add("grade", cat.astype(str)), location_ids=np.array([f"L{g}" for g in loc]),
                      max_population=int(size) / 100, n_replicates=999, seed=1, progress=False, backend="cpu")
    check_against_satscan(res, satscan_output[name])



def test_run_categorical_reads_satscan_files_as_satscan_does(tmp_path, satscan_output):
    from hphawkes_py.scan.categorical_files import run_categorical
    from test_scan_ordinal import run_spec, write_satscan_files

    write_satscan_files(tmp_path)
    res = run_categorical(run_spec(tmp_path, "multinomial 20"), dict(seed=1, backend="cpu", progress=False))
    assert res.model == "multinomial"
    check_against_satscan(res, satscan_output["multinomial 20"])
