"""Purely spatial clusters in the space-time scans (hp.scan.space_time(purely_spatial=True), SaTScan's
IncludePurelySpatial) against SaTScan 10.3.2 run on the same data (tests/satscan_oracle.py): the discrete
Poisson model retrospective, prospective and with purely temporal clusters too, and the Bernoulli model,
through run_prm. The data have a rate raised over the whole study period in a few neighbouring locations
(a purely spatial cluster) beside a short outbreak elsewhere; the clusters' locations, days, cases, expected
cases and LLRs agree with SaTScan's to 1e-6 and their p-values within the binomial error. The scan itself
is checked against a plain enumeration: with ``purely_spatial`` every replicate's maximum is the largest
LLR over the cylinders of at most ``max_temporal`` days and the circles over the whole period."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hphawkes_py as hp
from hphawkes_py.scan import space_time_scan
from naive_scan import space_time_bernoulli, space_time_dated
from satscan_oracle import assert_clusters_match, edit_prm, oracle, read_clusters, run_each, store, stored
from test_scan_time_trend import START, T, space_time_prm

FIXTURE = stored("purely_spatial")
#: analysis -> (ModelType, AnalysisType, whether IncludePurelyTemporal too); SaTScan 10 reads
#: IncludePurelySpatial in [Temporal Window] (and IncludePurelyTemporal in [Spatial Window]) and ignores it
#: elsewhere
_ANALYSES = {
    "poisson retrospective": ("0", "3", False),
    "poisson prospective": ("0", "4", False),
    "poisson with purely temporal": ("0", "3", True),
    "bernoulli retrospective": ("1", "3", False),
}


def _data():
    """36 locations near the nodes of a 6 x 6 grid (as in test_scan_time_trend: no distance ties), 2,000-6,000
    persons each, 60 days of Poisson cases at 3e-4 a person and day, raised 1.8-fold over every day at three
    neighbouring locations and 4-fold on days 40-44 at two others; controls 40-80 per location and day.
    Returns (xy, pop, cases (L, T), controls (L, T))."""
    rng = np.random.default_rng(29)
    gx, gy = np.meshgrid(np.arange(6.0), np.arange(6.0))
    xy = np.round(np.c_[gx.ravel(), gy.ravel()] + rng.uniform(-0.2, 0.2, size=(36, 2)), 4)
    pop = rng.integers(2000, 6001, size=36)
    lam = 3e-4 * pop[:, None] * np.ones(T)
    lam[[14, 15, 20]] *= 1.8
    lam[[3, 4], 40:45] *= 4.0
    return xy, pop, rng.poisson(lam), rng.integers(40, 81, size=(36, T))


def _ids():
    return [f"L{i:02d}" for i in range(36)]


def _write_inputs(folder: Path):
    xy, pop, c, ctl = _data()
    ids = _ids()
    day = [str(START + d).replace("-", "/") for d in range(T)]
    (folder / "t.geo").write_text("".join(f"{k} {x:.4f} {y:.4f}\n" for k, (x, y) in zip(ids, xy)))
    (folder / "t.pop").write_text("".join(f"{k} 2024 {p}\n" for k, p in zip(ids, pop)))
    (folder / "t.cas").write_text("".join(f"{ids[l]} {c[l, t]} {day[t]}\n" for l in range(36) for t in range(T)
                                          if c[l, t]))
    (folder / "t.ctl").write_text("".join(f"{ids[l]} {ctl[l, t]} {day[t]}\n" for l in range(36) for t in range(T)))


def _prm(name, folder: Path) -> Path:
    model, atype, temporal = _ANALYSES[name]
    data = ["PopulationFile=t.pop"] if model == "0" else ["ControlFile=t.ctl"]
    prm = space_time_prm(folder, name.replace(" ", "_"), model, atype, data, [], max_days=7)
    edits = {"[Temporal Window]": "[Temporal Window]\nIncludePurelySpatial=y"}
    if temporal:
        edits["[Spatial Window]"] = "[Spatial Window]\nIncludePurelyTemporal=y"
    return edit_prm(prm, edits)


def run_satscan(binary) -> dict:
    """SaTScan's clusters (:func:`satscan_oracle.read_clusters`) of every analysis of _ANALYSES."""
    return run_each(binary, "hphawkes-purely-spatial-", _write_inputs, _ANALYSES, _prm, read_clusters)


@pytest.fixture(scope="module")
def satscan_output():
    return oracle(FIXTURE, run_satscan)


@pytest.mark.parametrize("name", list(_ANALYSES))
def test_run_prm_with_purely_spatial_clusters_matches_satscan(name, satscan_output, tmp_path):
    _write_inputs(tmp_path)
    res = hp.scan.run_prm(_prm(name, tmp_path), seed=1, progress=False, backend="cpu")
    theirs = satscan_output[name]
    assert res.purely_spatial
    whole = [k for k, r in enumerate(theirs["rows"]) if (r["START_DATE"], r["END_DATE"]) == ("2024/1/1", "2024/2/29")]
    assert whole, "the analysis must list a purely spatial cluster"
    cl = res.clusters
    ids = theirs["ids"]
    if name.endswith("purely temporal"):
        for k in range(min(len(cl), len(ids))):
            if ids[k] == ["All"]:
                ids[k] = [str(v) for v in cl.location_ids.iloc[k]]
    assert_clusters_match(cl, theirs["rows"], ids)
    head = hp.scan.outputs.report_text(res).split("\n_____")[0].splitlines()[1:]
    assert head[0].startswith("including purely spatial") and theirs["summary"].endswith(" ".join(head))


def _recording(monkeypatch):
    """The windows of every space-time engine made, the cases (L, T, R) of every Monte Carlo batch it scans
    and the purely spatial engine's maxima of every batch, recorded while the CPU engines run as usual."""
    seen = {"windows": [], "M": [], "spatial": []}
    make = space_time_scan.make_space_time_engine
    make_spatial = space_time_scan._purely_spatial_engine

    def spatial_recording(*a, **kw):
        engine = make_spatial(*a, **kw)
        max_llr = engine.max_llr

        def recorded(cases):
            out = max_llr(cases)
            seen["spatial"].append(out)
            return out

        engine.max_llr = recorded
        return engine

    def make_recording(windows, *a, **kw):
        engine = make(windows, *a, **kw)
        seen["windows"].append(windows)
        max_llr = engine.max_llr

        def recorded(M):
            seen["M"].append(np.array(M))
            return max_llr(M)

        engine.max_llr = recorded
        return engine

    monkeypatch.setattr(space_time_scan, "make_space_time_engine", make_recording)
    monkeypatch.setattr(space_time_scan, "_purely_spatial_engine", spatial_recording)
    return seen


@pytest.mark.parametrize("model", ["poisson", "bernoulli"])
@pytest.mark.parametrize("max_temporal", [3, 8])
def test_purely_spatial_maxima_against_enumeration(monkeypatch, model, max_temporal):
    """Every replicate's maximum (and the observed data's) is the enumeration's over the cylinders of at most
    max_temporal days and the whole period (T = 8: max_temporal 8 scans cylinders of at most 7 days, as SaTScan,
    and the whole period once, as the purely spatial window)."""
    rng = np.random.default_rng(len(model) + max_temporal)
    L, Tn = 10, 8
    xy = rng.uniform(0, 10, (L, 2))
    pop = rng.integers(30, 90, L)
    c = rng.poisson(0.4, (L, Tn))
    c[[2, 5]] += rng.poisson(1.5, (2, Tn))  # raised over the whole period
    ctl = rng.integers(5, 15, (L, Tn))
    rl, rd = np.indices((L, Tn)).reshape(2, -1)
    data = dict(population=pop[rl]) if model == "poisson" else dict(controls=ctl.ravel(), model="bernoulli")
    seen = _recording(monkeypatch)
    res = hp.scan.space_time(xy[rl], c.ravel(), rd, max_population=0.5, max_temporal=max_temporal, n_replicates=19,
                             seed=3, progress=False, backend="cpu", threads=1, purely_spatial=True, **data)
    windows = seen["windows"][0]
    M = np.concatenate([m for m in seen["M"]], axis=2)
    assert M.shape == (L, Tn, 19)
    obs = c[:, :, None]
    if model == "poisson":
        C = int(c.sum())
        E = np.repeat((C * pop / pop.sum())[:, None] / Tn, Tn, axis=1)
        cyl = [space_time_dated(windows, x, E, max_t=min(max_temporal, Tn - 1)).max(axis=0) for x in (obs, M)]
        whole = [space_time_dated(windows, x.sum(axis=1, keepdims=True), E.sum(axis=1, keepdims=True), max_t=1)
                 .max(axis=0) for x in (obs, M)]
    else:
        def enum(x, max_t, days):
            ctl_x = (c + ctl)[:, :, None] - x if days else (c + ctl).sum(axis=1)[:, None, None] - x
            return np.array([space_time_bernoulli(xy, x[:, :, r], ctl_x[:, :, r], 0.5, max_t, min_cases=2)[0].max()
                             for r in range(x.shape[2])])

        cyl = [enum(x, min(max_temporal, Tn - 1), True) for x in (obs, M)]
        whole = [enum(x.sum(axis=1, keepdims=True), 1, False) for x in (obs, M)]
    np.testing.assert_allclose(np.concatenate(seen["spatial"]), whole[1], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(res.null_llr, np.maximum(cyl[1], whole[1]), rtol=1e-9, atol=1e-9)
    top = res.clusters.iloc[0]
    np.testing.assert_allclose(top.log_likelihood_ratio, max(cyl[0][0], whole[0][0]), rtol=1e-9)
    # with cylinders of at most 3 days the raised rate makes a purely spatial window the most likely cluster
    assert whole[0][0] > cyl[0][0] or max_temporal == 8
    assert ((top.start, top.end) == (0, Tn - 1)) == (whole[0][0] > cyl[0][0])


@pytest.mark.parametrize("model", ["poisson", "bernoulli"])
def test_purely_spatial_gpu_engine_on_the_emulator_matches_cpu(model):
    """The GPU engines (the space-time one and the purely spatial one) through the emulator: the same
    clusters and replicate maxima as the CPU engines."""
    rng = np.random.default_rng(5)
    L, Tn = 9, 6
    xy = rng.uniform(0, 10, (L, 2))
    c = rng.poisson(0.5, (L, Tn))
    c[[1, 4]] += rng.poisson(3.0, (2, Tn))
    rl, rd = np.indices((L, Tn)).reshape(2, -1)
    data = dict(population=rng.integers(30, 90, L)[rl]) if model == "poisson" else \
        dict(controls=rng.integers(5, 15, L * Tn), model="bernoulli")
    runs = [hp.scan.space_time(xy[rl], c.ravel(), rd, max_temporal=3, n_replicates=9, seed=2, progress=False,
                               backend=b, purely_spatial=True, **data) for b in ("cpu", "emulator")]
    np.testing.assert_allclose(runs[1].null_llr, runs[0].null_llr, rtol=1e-9, atol=1e-9)
    for col in ("cases", "start", "end"):
        assert list(runs[1].clusters[col]) == list(runs[0].clusters[col])
    np.testing.assert_allclose(runs[1].clusters.log_likelihood_ratio, runs[0].clusters.log_likelihood_ratio, rtol=1e-9)
    cl = runs[0].clusters
    assert ((cl.start == 0) & (cl.end == Tn - 1)).any()  # a purely spatial cluster is listed


def test_purely_spatial_refusals(tmp_path):
    kw = dict(coords=[[0, 0], [1, 1], [2, 2]], cases=[1, 2, 1], times=[0, 1, 2], population=[5, 5, 5],
              n_replicates=9, progress=False, backend="cpu")
    with pytest.raises(ValueError, match="purely_spatial clusters are not scanned"):
        hp.scan.space_time(**kw, purely_spatial=True, spatial_adjustment="nonparametric")
    with pytest.raises(TypeError, match="purely_spatial must be True or False"):
        hp.scan.space_time(**kw, purely_spatial=1)
    with pytest.raises(ValueError, match="at least 2 days"):
        hp.scan.space_time(**{**kw, "times": [0, 0, 0]}, purely_spatial=True)
    _write_inputs(tmp_path)
    prm = edit_prm(_prm("poisson retrospective", tmp_path), {"ModelType=0": "ModelType=2", "PopulationFile=t.pop": ""})
    with pytest.raises(ValueError, match="IncludePurelySpatial=.*space-time permutation"):
        hp.scan.run_prm(prm, n_replicates=9, progress=False, backend="cpu")


if __name__ == "__main__":  # write the stored SaTScan output (see tests/satscan_oracle.py)
    store(FIXTURE, run_satscan, "test_scan_purely_spatial.py")
