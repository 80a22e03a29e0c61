"""The purely spatial discrete Poisson scan adjusted for known relative risks (SaTScan's
``UseAdjustmentsByRRFile``, hphawkes_py.scan.known_risks) against SaTScan 10.3.2 run on the same data
(tests/satscan_oracle.py): New York leukaemia (SaTScan's sample files, circles up to 10 % of the
population) with an adjustments file naming the most likely cluster's tracts and ``all``. Clusters'
locations, cases, expected cases and LLRs to 1e-6, p-values within the binomial error; the adjusted
expected cases against their definition; the file's rules and the refusals."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

import hphawkes_py as hp
from satscan_oracle import assert_clusters_match, edit_prm, oracle, read_clusters, run_each, store, stored
from hphawkes_py.scan.known_risks import adjusted_expected, known_relative_risks

FIXTURE = stored("known_risks")
#: analysis -> the adjustments file's lines: the tracts of the unadjusted most likely cluster at a known
#: relative risk of 2 (one of them named twice: 2 x 1.25), and every location at 1.1
_ANALYSES = {
    "adjusted": ["49 2", "48 2", "50 2", "47 2", "49 1.25", "all 1.1"],
}


def _write_inputs(folder: Path):
    for f in hp.datasets.path("scan/satscan_sample_data").iterdir():
        if f.name.startswith("ny_leukemia"):
            shutil.copy(f, folder / f.name)


def _prm(name, folder: Path) -> Path:
    (folder / "known.adj").write_text("\n".join(_ANALYSES[name]) + "\n")
    text = (folder / "ny_leukemia_poisson.prm").read_text()
    text = text.replace("ResultsFile=ny_leukemia_poisson.txt", f"ResultsFile={name}.txt\n"
                        "MostLikelyClusterEachCentroidDBase=y\nLaunchMapViewer=n")
    text = text.replace("PValueReportType=0", "PValueReportType=1")
    text = text.replace("ReportGiniClusters=y", "ReportGiniClusters=n")
    text = text.replace("[Spatial Output]", "[Space and Time Adjustments]\nUseAdjustmentsByRRFile=y\n"
                        "AdjustmentsByKnownRelativeRisksFilename=known.adj\n[Spatial Output]")
    out = folder / f"{name}.prm"
    out.write_text(text)
    return out


def run_satscan(binary) -> dict:
    """SaTScan's clusters (:func:`satscan_oracle.read_clusters`) of every analysis of _ANALYSES."""
    return run_each(binary, "hphawkes-known-risks-", _write_inputs, _ANALYSES, _prm, read_clusters)


@pytest.fixture(scope="module")
def satscan_output():
    return oracle(FIXTURE, run_satscan)


def test_known_risks_match_satscan(tmp_path, satscan_output):
    _write_inputs(tmp_path)
    res = hp.scan.run_prm(_prm("adjusted", tmp_path), seed=1, progress=False, backend="cpu")
    theirs = satscan_output["adjusted"]
    assert_clusters_match(res.clusters, theirs["rows"], theirs["ids"])
    # SaTScan's statement of the adjustment, in its summary and in ours
    assert "adjusting for known relative risks." in theirs["summary"]
    assert res.known_risks and "adjusting for known relative risks." in hp.scan.outputs.report_text(res)
    # the adjustment matters: unadjusted, the named tracts are the most likely cluster
    plain = hp.scan.run_prm(tmp_path / "ny_leukemia_poisson.prm", seed=1, progress=False, backend="cpu",
                            n_replicates=9)
    named = {line.split()[0] for line in _ANALYSES["adjusted"] if not line.startswith("all")}
    assert named <= {str(v) for v in plain.clusters.location_ids.iloc[0]}
    assert res.clusters.log_likelihood_ratio.iloc[0] < plain.clusters.log_likelihood_ratio.iloc[0]


def test_adjusted_expected_follow_their_definition():
    """E'_z = E_z r_z C / sum_w E_w r_w, E_z = P_z C / P; the risks of a location named twice multiply and
    ``all`` applies to every location."""
    ny = hp.scan.read_satscan(hp.datasets.satscan_sample_path("ny_leukemia.cas"),
                              population_file=hp.datasets.satscan_sample_path("ny_leukemia.pop"),
                              geo_file=hp.datasets.satscan_sample_path("ny_leukemia.geo"), model="poisson")
    ids = ny["location_id"].astype(str).to_numpy()
    import tempfile

    path = Path(tempfile.mkdtemp()) / "k.adj"
    path.write_text("\n".join(_ANALYSES["adjusted"]) + "\n")
    rr = known_relative_risks(path, ids)
    want = np.full(len(ids), 1.1)
    for k in ("47", "48", "49", "50"):
        want[ids == k] *= 2.0
    want[ids == "49"] *= 1.25
    np.testing.assert_allclose(rr, want, rtol=1e-15)
    c, p = ny["cases"].to_numpy(float), ny["population"].to_numpy(float)
    e = adjusted_expected(c, p, rr)
    base = p * c.sum() / p.sum()
    np.testing.assert_allclose(e, base * rr * c.sum() / (base * rr).sum(), rtol=1e-12)
    assert e.sum() == pytest.approx(c.sum(), rel=1e-12)
    with pytest.raises(ValueError, match="adjusted to zero"):
        adjusted_expected(np.array([1, 0]), np.array([10.0, 10.0]), np.array([0.0, 1.0]))


@pytest.mark.parametrize("edit, message", [
    ({"AdjustmentsByKnownRelativeRisksFilename=known.adj": "AdjustmentsByKnownRelativeRisksFilename=none.adj"},
     "none.adj, which does not exist"),
    ({"IterativeScan=n": "IterativeScan=y"}, "not supported together with IterativeScan=y"),
])
def test_run_prm_refuses_what_it_cannot_honour(tmp_path, edit, message):
    _write_inputs(tmp_path)
    prm = edit_prm(_prm("adjusted", tmp_path), edit)
    with pytest.raises(ValueError, match=message):
        hp.scan.run_prm(prm, seed=1, progress=False, backend="cpu", n_replicates=9)


def test_other_analyses_are_refused(tmp_path):
    from hphawkes_py.scan.known_risks import prm_known_risks

    def bad(key, why):
        return ValueError(f"{key} {why}")

    for model in ("bernoulli", "space_time_poisson", "temporal_poisson"):
        with pytest.raises(ValueError, match="UseAdjustmentsByRRFile is supported with the purely spatial discrete "
                                             "Poisson analysis only"):
            prm_known_risks({"UseAdjustmentsByRRFile": "y"}, model, tmp_path, bad)
    assert prm_known_risks({"UseAdjustmentsByRRFile": "n"}, "bernoulli", tmp_path, bad) is None


def test_dated_adjustments_are_refused(tmp_path):
    path = tmp_path / "d.adj"
    path.write_text("a 2 2000/1/1 2000/6/30\n")
    with pytest.raises(ValueError, match="has dates"):
        known_relative_risks(path, ["a", "b"])


def test_module_examples_run():
    import doctest

    from hphawkes_py.scan import known_risks

    result = doctest.testmod(known_risks, extraglobs={"np": np})
    assert result.attempted >= 2 and result.failed == 0


if __name__ == "__main__":  # write the stored SaTScan output (see tests/satscan_oracle.py)
    store(FIXTURE, run_satscan, "test_scan_known_risks.py")
