"""Coordinates-file locations that no record names (no observation, case or patient there): SaTScan centres
circles on them and lists them in the clusters that reach them, and so does hp.scan for the observation models
(``empty_locations`` of normal, exponential, ordinal, multinomial and space_time_exponential; run_prm passes them).
Against SaTScan 10.3.2 (tests/satscan_oracle.py) on its own normal and exponential samples and on the
categorical test data of tests/test_scan_ordinal.py, each with locations added between the others: every
cluster's location ids (the empty ones included, in SaTScan's order) and LLR."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

import hphawkes_py as hp
from satscan_oracle import edit_prm, oracle, report_locations, run_parameter_file, scratch_folder, store, stored
from test_scan_ordinal import _prm as categorical_prm
from test_scan_ordinal import read_report, satscan_data, write_satscan_files

FIXTURE = stored("empty_locations")
DATA = Path(hp.__file__).parent / "data" / "scan"
#: analysis -> (the files it reads, the parameter file)
SAMPLES = {
    "normal": (DATA / "satscan_tests" / "normal", ("FakeSpatialNormal.prm", "NormalFake.cas", "NormalFake.geo")),
    "exponential": (DATA / "satscan_sample_data", ("FakeSpaceTimeExponential.prm", "SurvivalFake.cas",
                                                   "SurvivalFake.geo")),
}
#: locations without observations added to each coordinates file: between locations, where circles about them
#: hold sets of locations that no other location's circles hold
EMPTY = {
    "normal": "E1 60 60\nE2 20 40\nE3 85 60\n",
    "exponential": "LocationF 5 6.5\nLocationG 3.2 2.6\n",
    "categorical": "E1 {a} {b}\nE2 {c} {d}\nE3 50 50\n",
}


def _categorical_empty():
    xy = satscan_data()[0]
    mid0, mid1 = (xy[0] + xy[2]) / 2, (xy[1] + xy[3]) / 2
    return EMPTY["categorical"].format(a=round(mid0[0], 2), b=round(mid0[1], 2), c=round(mid1[0], 2),
                                       d=round(mid1[1], 2))


def _write(folder: Path, name: str) -> Path:
    """The analysis ``name``'s files in ``folder``, its coordinates file with the empty locations added; returns
    its parameter file."""
    if name in SAMPLES:
        src, files = SAMPLES[name]
        for f in files:
            shutil.copy(src / f, folder / f)
        with open(folder / files[2], "a") as fh:
            fh.write(EMPTY[name])
        prm = folder / files[0]
        if name == "exponential":  # the sample is space-time: its purely spatial analysis
            edit_prm(prm, {"AnalysisType=3": "AnalysisType=1"})
        return prm
    write_satscan_files(folder)
    with open(folder / "categorical.geo", "a") as fh:
        fh.write(_categorical_empty())
    return categorical_prm(name, folder)


ANALYSES = ["normal", "exponential", "ordinal high", "multinomial"]


def run_satscan(binary) -> dict:
    """SaTScan's clusters (location ids, LLR) of every analysis of ANALYSES."""
    out = {}
    for name in ANALYSES:
        with scratch_folder("hphawkes-empty-") as folder:
            prm = _write(folder, name)
            run_parameter_file(binary, prm, folder)
            stem = prm.read_text().split("ResultsFile=", 1)[1].split()[0]
            report = (folder / stem).read_text()
            out[name] = {"ids": report_locations(report),
                         "llr": [float(c.get("Log likelihood ratio", c.get("Test statistic")))
                                 for c in read_report(report)]}
    return out


@pytest.fixture(scope="module")
def satscan_output():
    return oracle(FIXTURE, run_satscan)


@pytest.mark.parametrize("name", ANALYSES)
def test_empty_locations_are_centres_and_members_as_in_satscan(name, satscan_output, tmp_path):
    prm = _write(tmp_path, name)
    res = hp.scan.run_prm(prm, n_replicates=99, seed=1, progress=False, backend="cpu")
    theirs = satscan_output[name]
    n = min(len(res.clusters), len(theirs["llr"]))
    assert n >= 1
    for k in range(n):
        assert [str(v) for v in res.clusters.location_ids.iloc[k]] == theirs["ids"][k], k
        assert res.clusters.log_likelihood_ratio.iloc[k] == pytest.approx(theirs["llr"][k], abs=1e-6), k
    geo = next(tmp_path.glob("*.geo")).read_text().split("\n")
    assert res.n_centres == res.n_locations == sum(1 for line in geo if line.strip())  # every location a centre
    listed = {str(v) for ids in res.clusters.location_ids for v in ids}
    table = res.location_table()  # the empty locations have rows of their own
    assert set(table.location_id.astype(str)) == listed


def test_empty_locations_change_only_the_circles():
    rng = np.random.default_rng(3)
    xy = rng.uniform(0, 10, (40, 2)).round(3)
    where = rng.integers(0, 40, 400)
    x = rng.normal(np.where(np.hypot(*(xy[where] - 3).T) < 2, 1.0, 0.0))
    kw = dict(location_ids=where, max_distance=3.0, n_replicates=19, seed=2, progress=False, backend="cpu")
    plain = hp.scan.normal(xy[where], x, **kw)
    far = hp.scan.normal(xy[where], x, empty_locations=[[50.0, 50.0]], empty_location_ids=["far"], **kw)
    # a location farther than max_distance from every other one centres only a circle of itself (no observation)
    assert (far.n_locations, far.n_centres) == (plain.n_locations + 1, plain.n_centres + 1)
    np.testing.assert_array_equal(far.null_llr, plain.null_llr)
    assert far.clusters.log_likelihood_ratio.tolist() == plain.clusters.log_likelihood_ratio.tolist()
    with pytest.raises(ValueError, match="empty_location_ids must give the 1 empty locations' ids"):
        hp.scan.normal(xy[where], x, empty_locations=[[5.0, 5.0]], **kw)
    with pytest.raises(ValueError, match="empty_locations must be 2-dimensional"):
        hp.scan.ordinal(xy[where], where % 3, empty_locations=[1.0, 2.0, 3.0], n_replicates=9, progress=False)
    with pytest.raises(ValueError, match="empty_location_ids needs empty_locations"):
        hp.scan.multinomial(xy[where], where % 3, empty_location_ids=["a"], n_replicates=9, progress=False)


if __name__ == "__main__":  # write the stored SaTScan output (see tests/satscan_oracle.py)
    store(FIXTURE, run_satscan, "test_scan_empty_locations.py")
