"""The isotonic spatial scan (hp.scan.poisson / bernoulli with ``risk_function="isotonic"``): every centre's isotonic
cluster against a plain reference, the Monte Carlo, bad inputs, and run_prm and the report against SaTScan 10.3.2
on data made here (risks falling in steps around one place, and lower around another)."""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

import hphawkes_py as hp
from hphawkes_py.cli import main
from hphawkes_py.scan.isotonic import IsotonicEngine, centre_steps
from hphawkes_py.scan.windows import build_windows

sys.path.insert(0, str(Path(__file__).parent))
from engines import CUDA_ENGINES  # noqa: E402
from naive_scan import isotonic_llr  # noqa: E402
from satscan_oracle import oracle, run_parameter_file, scratch_folder, store, stored, write_prm  # noqa: E402

FIXTURE = stored("isotonic")


def _data(seed=3, L=60, base=0.01):
    """``L`` locations on a 100 x 100 square with populations 500-3,000; Poisson cases at a rate of ``base``, twice
    that within 15 of location 0 and 1.4 times within 30 of it, and half of it within 20 of location 30."""
    rng = np.random.default_rng(seed)
    xy = rng.uniform(0, 100, (L, 2)).round(2)
    pop = rng.integers(500, 3000, L)
    d0, d30 = (np.hypot(*(xy - xy[c]).T) for c in (0, 30))
    rate = base * np.where(d0 < 15, 2.0, np.where(d0 < 30, 1.4, 1.0)) * np.where(d30 < 20, 0.5, 1.0)
    return xy, pop, rng.poisson(pop * rate)


def _engine(xy, pop, cases, model, direction, max_population=0.5):
    C = int(cases.sum())
    measure = pop * (C / pop.sum()) if model == "poisson" else pop.astype(float)
    size = pop if model == "bernoulli" else pop
    offsets, neighbors, _, _ = build_windows(xy.astype(float), xy.astype(float), size, max_population * size.sum())
    M = float(measure.sum())
    return IsotonicEngine(offsets, neighbors, measure, C, M, model, direction in ("high", "both"),
                          direction in ("low", "both"))


@pytest.mark.parametrize("model", ["poisson", "bernoulli"])
@pytest.mark.parametrize("direction", ["high", "low", "both"])
@pytest.mark.parametrize("base", [0.01, 0.0005])
def test_every_centres_cluster_is_the_plain_pooling_of_its_circle(model, direction, base):
    # the engine's LLR and last location of every centre's isotonic cluster, for the data and 20 replicates of
    # them, against the plain pooling (the larger of the high and low clusters, the high one of equal ones); with
    # rare cases (about one a location), steps of one case, which a high step may not be
    xy, pop, cases = _data(base=base)
    eng = _engine(xy, pop, cases, model, direction)
    rng = np.random.default_rng(4)
    cols = np.column_stack([cases] + [rng.multinomial(int(cases.sum()), eng.measure / eng.M) for _ in range(20)])
    best, entry = eng.best_per_centre(cols, want_arg=True)
    stepped = 0
    for i in range(eng.n_centres):
        members = eng.neighbors[eng.offsets[i]:eng.offsets[i + 1]]
        for r in range(cols.shape[1]):
            got = [isotonic_llr(cols[:, r], eng.measure, members, eng.C, eng.M, model == "bernoulli", high)
                   for high in (True, False) if (eng.want_high if high else eng.want_low)]
            llr, steps = max(got, key=lambda g: g[0])
            if llr <= 0 or not steps:
                assert best[i, r] == 0.0 and entry[i, r] == -1
                continue
            assert best[i, r] == pytest.approx(llr, rel=1e-12, abs=1e-9)
            assert entry[i, r] - eng.offsets[i] == sum(s[2] for s in steps) - 1
            stepped += len(steps) > 2
    assert stepped > 10  # clusters of several steps were compared
    np.testing.assert_array_equal(eng.max_llr(cols[:, 1:]), best[:, 1:].max(axis=0))


def test_the_steps_of_a_cluster_partition_its_locations_with_falling_rates():
    xy, pop, cases = _data()
    eng = _engine(xy, pop, cases, "poisson", "high")
    best, entry = eng.best_per_centre(cases[:, None], want_arg=True)
    i = int(np.argmax(best[:, 0]))
    steps = centre_steps(eng, cases, i)
    assert len(steps) >= 3
    assert [s[0] for s in steps] == [0] + [s[1] + 1 for s in steps[:-1]]
    assert steps[-1][1] == entry[i, 0] - eng.offsets[i]
    members = eng.neighbors[eng.offsets[i]:eng.offsets[i + 1]]
    for a, b, c, m in steps:
        assert c == cases[members[a:b + 1]].sum() and m == pytest.approx(eng.measure[members[a:b + 1]].sum())
    rates = [c / m for _, _, c, m in steps]
    assert all(r1 > r2 for r1, r2 in zip(rates, rates[1:]))


def test_the_scan_recovers_the_falling_risk_and_its_p_value_does_not_depend_on_threads():
    xy, pop, cases = _data()
    kw = dict(risk_function="isotonic", n_replicates=99, seed=2, progress=False)
    res = hp.scan.poisson(xy, cases, pop, threads=1, **kw)
    top = res.most_likely
    assert top.p_value == 0.01 and 0 in top.location_ids and top.steps >= 3
    assert top.step_relative_risk == sorted(top.step_relative_risk, reverse=True)
    assert sum(top.step_cases) == top.cases and sum(map(len, top.step_location_ids)) == top.n_locations
    again = hp.scan.poisson(xy, cases, pop, threads=2, **kw)
    np.testing.assert_array_equal(res.null_llr, again.null_llr)
    # the standard scan's one-level circle fits worse than the steps around the same place
    standard = hp.scan.poisson(xy, cases, pop, n_replicates=99, seed=2, progress=False)
    assert top.log_likelihood_ratio > standard.most_likely.log_likelihood_ratio
    low = hp.scan.bernoulli(xy, cases, pop - cases, direction="low", **kw).most_likely
    assert 30 in low.location_ids and low.relative_risk < 1


@pytest.mark.parametrize("kw, match", [
    (dict(risk_function="monotone"), "risk_function"),
    (dict(window="ellipse"), "ellipse"),
    (dict(grid_cell=5.0), "grid_cell"),
    (dict(max_reported_population=0.1), "max_reported"),
    (dict(min_cases=3), "min_cases"),
])
def test_what_the_isotonic_scan_does_not_do_is_refused(kw, match):
    xy, pop, cases = _data()
    kw = {"risk_function": "isotonic", **kw}
    with pytest.raises(ValueError, match=match):
        hp.scan.poisson(xy, cases, pop, n_replicates=9, progress=False, **kw)


@pytest.mark.parametrize("backend", CUDA_ENGINES)
@pytest.mark.parametrize("model, direction", [("poisson", "high"), ("bernoulli", "both")])
def test_the_cuda_kernel_gives_the_cpu_engines_clusters(model, direction, backend):
    # every centre's LLR (the logarithms are the device's: to rounding) and last location (exactly), with rare
    # cases too, and the same p-values through the scan
    from hphawkes_py._backend import get_device
    from hphawkes_py.scan.gpu import GpuIsotonicEngine

    for base in (0.01, 0.0005):
        xy, pop, cases = _data(base=base)
        eng = _engine(xy, pop, cases, model, direction)
        gpu = GpuIsotonicEngine(eng, device=get_device(backend), backend=backend)
        rng = np.random.default_rng(5)
        cols = np.column_stack([cases] + [rng.multinomial(int(cases.sum()), eng.measure / eng.M) for _ in range(40)])
        (a, ja), (b, jb) = eng.best_per_centre(cols, want_arg=True), gpu.best_per_centre(cols, want_arg=True)
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(jb, ja)
        assert (ja >= 0).sum() > 100
    xy, pop, cases = _data()
    fn, args = (hp.scan.poisson, (xy, cases, pop)) if model == "poisson" else (hp.scan.bernoulli, (xy, cases, pop - cases))
    kw = dict(risk_function="isotonic", direction=direction, n_replicates=49, seed=3, progress=False)
    on_cpu, on_device = fn(*args, backend="cpu", **kw), fn(*args, backend=backend, **kw)
    np.testing.assert_allclose(on_device.null_llr, on_cpu.null_llr, rtol=1e-12)
    np.testing.assert_array_equal(on_device.clusters.p_value, on_cpu.clusters.p_value)
    assert on_device.clusters.step_cases.tolist() == on_cpu.clusters.step_cases.tolist()


# ---------------------------------------------------------------------------- SaTScan 10.3.2
#: name -> (ModelType, ScanAreas, MaxSpatialSizeInPopulationAtRisk)
ANALYSES = {"poisson high": ("0", "1", "50"), "bernoulli high": ("1", "1", "50"), "poisson low": ("0", "2", "50"),
            "bernoulli both 20": ("1", "3", "20")}


def _write_inputs(folder: Path) -> None:
    xy, pop, cases = _data()
    (folder / "t.geo").write_text("".join(f"L{i} {a} {b}\n" for i, (a, b) in enumerate(xy)))
    (folder / "t.cas").write_text("".join(f"L{i} {c}\n" for i, c in enumerate(cases)))
    (folder / "t.pop").write_text("".join(f"L{i} 2000 {p}\n" for i, p in enumerate(pop)))
    (folder / "t.ctl").write_text("".join(f"L{i} {p - c}\n" for i, (p, c) in enumerate(zip(pop, cases))))


def _prm(name: str, folder: Path) -> Path:
    model, areas, size = ANALYSES[name]
    stem = name.replace(" ", "_")
    return write_prm(folder / f"{stem}.prm", [
        "[Input]", "CaseFile=t.cas", "PopulationFile=t.pop" if model == "0" else "ControlFile=t.ctl",
        "CoordinatesFile=t.geo", "CoordinatesType=0", "PrecisionCaseTimes=0", "StartDate=2000/1/1",
        "EndDate=2000/12/31",
        "[Analysis]", "AnalysisType=1", f"ModelType={model}", f"ScanAreas={areas}",
        "[Output]", f"ResultsFile={stem}.txt", "OutputGoogleEarthKML=n", "OutputShapefiles=n", "LaunchMapViewer=n",
        "[Spatial Window]", f"MaxSpatialSizeInPopulationAtRisk={size}", "SpatialWindowShapeType=0", "IsotonicScan=1",
        "[Inference]", "MonteCarloReps=999", "PValueReportType=1",
        "[Run Options]", "NumberParallelProcesses=1"])


def _clusters_section(report: str) -> list:
    """The lines of a report's cluster blocks."""
    return report.split("CLUSTERS DETECTED", 1)[1].split("_____", 1)[0].strip().splitlines()


def _blocks(lines: list) -> list:
    """The cluster blocks (lists of lines) of a cluster section."""
    out = [[]]
    for line in lines:
        if line.strip():
            out[-1].append(line)
        elif out[-1]:
            out.append([])
    return [b for b in out if b]


def _p_value(block: list) -> float:
    return float(next(line for line in block if "P-value" in line).split(":")[1])


def run_satscan(binary) -> dict:
    """SaTScan's cluster blocks of every analysis."""
    out = {}
    with scratch_folder("hphawkes-isotonic-") as folder:
        _write_inputs(folder)
        for name in ANALYSES:
            prm = _prm(name, folder)
            run_parameter_file(binary, prm, folder)
            out[name] = _clusters_section(prm.with_suffix(".txt").read_text())
    return out


@pytest.fixture(scope="module")
def satscan_output():
    return oracle(FIXTURE, run_satscan)


@pytest.mark.parametrize("name", list(ANALYSES))
def test_the_cli_writes_satscans_cluster_blocks(name, satscan_output, tmp_path):
    # every line of SaTScan's cluster blocks (steps and their locations, radii, cases, expected cases, relative
    # risks, the LLR) but the p-values, which agree within Monte Carlo error
    _write_inputs(tmp_path)
    prm = _prm(name, tmp_path)
    out = tmp_path / "out"
    assert main(["scan", "run", str(prm), "--out", str(out), "--seed", "1", "--quiet"]) == 0
    ours = _blocks(_clusters_section((out / prm.with_suffix(".txt").name).read_text()))
    theirs = _blocks(satscan_output[name])
    assert any("Step 3" in line for line in theirs[0])
    # SaTScan lists a secondary cluster while its p-value is below 1: the last ones, near 1, may differ
    k = min(len(ours), len(theirs))
    assert all(_p_value(block) >= 0.99 for block in ours[k:] + theirs[k:])
    for a, b in zip(sum(ours[:k], []), sum(theirs[:k], [])):
        if "P-value" in a:
            p, q = (float(s.split(":")[1]) for s in (a, b))
            assert abs(p - q) <= 4 * math.sqrt(max(q * (1 - q), 1e-3) / 1000) + 2e-3, (a, b)
        else:
            assert a.rstrip() == b.rstrip()


def test_run_prm_refuses_the_isotonic_scan_where_satscan_has_none(tmp_path):
    _write_inputs(tmp_path)
    prm = _prm("poisson high", tmp_path)
    prm.write_text(prm.read_text().replace("SpatialWindowShapeType=0", "SpatialWindowShapeType=1"))
    with pytest.raises(ValueError, match="IsotonicScan"):
        hp.scan.run_prm(prm, progress=False)


if __name__ == "__main__":  # write the stored SaTScan output (see tests/satscan_oracle.py)
    store(FIXTURE, run_satscan, "test_scan_isotonic.py")
