"""Purely temporal clusters in the space-time scans (hp.scan.space_time(purely_temporal=True), SaTScan's
IncludePurelyTemporal) against SaTScan 10.3.2 run on the same data (tests/satscan_oracle.py): the
discrete Poisson model retrospective, prospective and adjusted for the day of the week, and the
Bernoulli model, through run_prm. The purely temporal cluster is listed in the order of its LLR with
every location ("All" in SaTScan's tables), never keeping a space-time cluster out; the clusters'
locations, days, cases, expected cases and LLRs agree with SaTScan's to 1e-6 and their p-values within
the binomial error. The purely temporal scan is also checked against a plain enumeration."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import hphawkes_py as hp
from hphawkes_py.scan.space_time_scan import _temporal_best
from satscan_oracle import assert_clusters_match, edit_prm, oracle, read_clusters, run_each, store, stored
from test_scan_stratified import _write_inputs
from test_scan_time_trend import space_time_prm

FIXTURE = stored("purely_temporal")
#: analysis -> (ModelType, AnalysisType, the [Space and Time Adjustments] lines)
_ANALYSES = {
    "poisson retrospective": ("0", "3", []),
    "poisson prospective": ("0", "4", []),
    "poisson weekly": ("0", "3", ["AdjustForWeeklyTrends=y"]),
    "bernoulli retrospective": ("1", "3", []),
}


def _prm(name, folder: Path) -> Path:
    model, atype, adjustments = _ANALYSES[name]
    data = ["PopulationFile=t.pop"] if model == "0" else ["ControlFile=t.ctl"]
    prm = space_time_prm(folder, name.replace(" ", "_"), model, atype, data, adjustments)
    return edit_prm(prm, {"[Spatial Window]": "[Spatial Window]\nIncludePurelyTemporal=y"})


def run_satscan(binary) -> dict:
    """SaTScan's clusters (:func:`satscan_oracle.read_clusters`) of every analysis of _ANALYSES."""
    return run_each(binary, "hphawkes-purely-temporal-", _write_inputs, _ANALYSES, _prm, read_clusters)


@pytest.fixture(scope="module")
def satscan_output():
    return oracle(FIXTURE, run_satscan)


@pytest.mark.parametrize("name", list(_ANALYSES))
def test_run_prm_with_purely_temporal_clusters_matches_satscan(name, satscan_output, tmp_path):
    _write_inputs(tmp_path)
    res = hp.scan.run_prm(_prm(name, tmp_path), seed=1, progress=False, backend="cpu")
    theirs = satscan_output[name]
    cl = res.clusters
    assert res.purely_temporal
    ids = theirs["ids"]
    temporal = [k for k, i in enumerate(ids) if i == ["All"]]
    assert temporal, "the analysis must list a purely temporal cluster"
    assert [k for k in range(len(cl)) if cl.purely_temporal.iloc[k]] == [k for k in temporal if k < len(cl)]
    for k in temporal:
        if k < len(cl):
            assert cl.center.iloc[k] == "All" and cl.n_locations.iloc[k] == 36 and math.isnan(cl.radius.iloc[k])
            ids[k] = [str(v) for v in cl.location_ids.iloc[k]]
    assert_clusters_match(cl, theirs["rows"], ids)
    col = hp.scan.outputs.cluster_table(res)
    assert list(col.LOC_ID[cl.purely_temporal.to_numpy(bool)]) == ["All"] * len(temporal)
    gis = hp.scan.outputs.location_table(res)
    assert not set(gis.CLUSTER) & {k + 1 for k in temporal}
    text = hp.scan.outputs.report_text(res)
    assert f"{temporal[0] + 1}.Location IDs included.: All" in text
    head = text.split("\n_____")[0].splitlines()[1:]
    assert head[0].startswith("including purely temporal clusters") and theirs["summary"].endswith(" ".join(head))


def _enumerate(c_tr, bern, totals, C, N, max_t, t_end_min, min_cases, direction):
    """Every interval of every replicate, one at a time, with the LLRs written out."""
    T, R = c_tr.shape
    out = np.zeros(R)
    for r in range(R):
        for t2 in range(t_end_min, T):
            for t1 in range(max(0, t2 - max_t + 1), t2 + 1):
                c = float(c_tr[t1:t2 + 1, r].sum())
                e = float(totals[t1:t2 + 1].sum())

                def xl(a, b):
                    return a * math.log(b) if a > 0 else 0.0

                if bern:
                    n = e
                    if not 0 < n < N:
                        continue
                    llr = (xl(c, c / n) + xl(n - c, (n - c) / n) + xl(C - c, (C - c) / (N - n))
                           + xl(N - n - C + c, (N - n - C + c) / (N - n)) - xl(C, C / N) - xl(N - C, (N - C) / N))
                    high, low = c / n > (C - c) / (N - n), c / n < (C - c) / (N - n)
                else:
                    if not 0 < e < C:
                        continue
                    llr = xl(c, c / e) + xl(C - c, (C - c) / (C - e))
                    high, low = c > e, c < e
                if (direction in ("high", "both") and high and c >= min_cases) or (direction in ("low", "both") and low):
                    out[r] = max(out[r], llr)
    return out


@pytest.mark.parametrize("bern", [False, True])
@pytest.mark.parametrize("direction", ["high", "both"])
@pytest.mark.parametrize("t_end_min", [0, 11])
def test_temporal_best_against_enumeration(bern, direction, t_end_min):
    rng = np.random.default_rng(int(bern) * 7 + len(direction) + t_end_min)
    T, R = 12, 9
    c_tr = rng.poisson(3.0, size=(T, R))
    c_tr[8:10, 0] += 9
    C = int(c_tr[:, 0].sum())
    c_tr[:, 1:] = np.stack([rng.multinomial(C, np.full(T, 1 / T)) for _ in range(R - 1)], axis=1)
    if bern:
        totals = rng.integers(40, 90, T).astype(float)
        N = int(totals.sum())
    else:
        totals = rng.uniform(0.5, 1.5, T)
        totals *= C / totals.sum()
        N = C
    pt = (bern, totals, C, N, 5, t_end_min, 2, direction)
    best, t1, t2 = _temporal_best(c_tr, pt, want_arg=True)
    ref = _enumerate(c_tr, bern, totals, C, N, 5, t_end_min, 2, direction)
    np.testing.assert_allclose(best, ref, rtol=1e-12, atol=1e-12)
    assert ref[0] > 1
    for r in np.flatnonzero(best > 0):  # the interval given attains the maximum
        n = t2[r] - t1[r] + 1
        one = _enumerate(c_tr[t1[r]:t2[r] + 1, [r]], bern, totals[t1[r]:t2[r] + 1], C, N, n, n - 1, 2, direction)
        assert one[0] == pytest.approx(best[r], rel=1e-12) and n <= 5 and t2[r] >= t_end_min


def test_purely_temporal_refusals():
    kw = dict(coords=[[0, 0], [1, 1], [2, 2]], cases=[1, 2, 1], times=[0, 1, 2], population=[5, 5, 5],
              n_replicates=9, progress=False, backend="cpu")
    with pytest.raises(ValueError, match="purely_temporal clusters are not scanned"):
        hp.scan.space_time(**kw, purely_temporal=True, time_trend="nonparametric")
    with pytest.raises(TypeError, match="purely_temporal must be True or False"):
        hp.scan.space_time(**kw, purely_temporal="y")


if __name__ == "__main__":  # write the stored SaTScan output (see tests/satscan_oracle.py)
    store(FIXTURE, run_satscan, "test_scan_purely_temporal.py")
