"""FCS files (issue 32): read_fcs / read_fcs_folder, compensation, transforms, refusals.

FCS 2.0 and 3.0 files are written byte by byte by ``write_fcs_by_hand`` below (header, TEXT and
DATA segments as the standards lay them out), FCS 3.1 files by FlowIO's writer.  The small files
in ``tests/data/fcs/`` were made by ``make_test_files`` (a test checks they still are) so a change
of reader is also checked on fixed bytes.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

flowio = pytest.importorskip("flowio")

from hphawkes_py.mixture.fcs import (  # noqa: E402
    arcsinh_transform,
    compensate,
    logicle_transform,
    parse_spillover,
    read_fcs,
    read_fcs_folder,
)

DATA = Path(__file__).resolve().parent / "data" / "fcs"


# --------------------------------------------------------------------------- writers
def write_fcs_by_hand(path, version, data, names, *, markers=None, keywords=None, datatype="I", bits=16,
                      byteord="4,3,2,1", ranges=None, pne=None, png=None):
    """An FCS 2.0/3.0/3.1 list-mode file: 58-byte HEADER, '/'-delimited TEXT, then DATA."""
    data = np.asarray(data)
    n, p = data.shape
    big = byteord in ("4,3,2,1", "2,1")
    code = {"I": {8: "u1", 16: "u2", 32: "u4"}[bits] if datatype == "I" else None, "F": "f4", "D": "f8"}[datatype]
    body = np.ascontiguousarray(data, dtype=(">" if big else "<") + code).tobytes()
    kw = {"$BYTEORD": byteord, "$DATATYPE": datatype, "$MODE": "L", "$NEXTDATA": "0", "$PAR": str(p),
          "$TOT": str(n)}
    for j in range(p):
        kw[f"$P{j + 1}B"] = str(bits if datatype == "I" else 8 * int(code[1]))
        kw[f"$P{j + 1}E"] = pne[j] if pne else "0,0"
        kw[f"$P{j + 1}N"] = names[j]
        kw[f"$P{j + 1}R"] = str(ranges[j] if ranges else 1024)
        if markers and markers[j]:
            kw[f"$P{j + 1}S"] = markers[j]
        if png and png[j] is not None:
            kw[f"$P{j + 1}G"] = str(png[j])
    kw.update(keywords or {})
    offsets = ("$BEGINANALYSIS", "$ENDANALYSIS", "$BEGINSTEXT", "$ENDSTEXT", "$BEGINDATA", "$ENDDATA")
    if version != "2.0":
        for k in offsets:
            kw[k] = "0" * 10  # fixed width: the TEXT length does not depend on the offsets

    def text_of(kw):
        return ("/" + "".join(f"{k}/{v}/" for k, v in kw.items())).encode("ascii")

    text_start = 58
    text_end = text_start + len(text_of(kw)) - 1
    data_start, data_end = text_end + 1, text_end + len(body)
    if version != "2.0":
        kw["$BEGINDATA"], kw["$ENDDATA"] = f"{data_start:010d}", f"{data_end:010d}"
        for k in offsets[:4]:
            kw[k] = f"{0:010d}"
    text = text_of(kw)
    header = f"FCS{version}    ".encode() + b"".join(
        f"{v:>8d}".encode() for v in (text_start, text_end, data_start, data_end, 0, 0))
    assert len(header) == 58
    Path(path).write_bytes(header + text + body)
    return Path(path)


def write_fcs_31(path, data, names, markers=None, metadata=None):
    with open(path, "wb") as fh:
        flowio.create_fcs(fh, np.asarray(data, dtype=np.float64).ravel().tolist(), names,
                          opt_channel_names=markers, metadata_dict=metadata)
    return Path(path)


# spillover with rows = fluorochromes (FL1, FL2, FL3), columns = detectors
S3 = np.array([[1.0, 0.25, 0.0625], [0.125, 1.0, 0.5], [0.0, 0.03125, 1.0]])
TRUE3 = np.array([[1000.0, 0.0, 0.0], [0.0, 2000.0, 0.0], [0.0, 0.0, 4000.0], [800.0, 400.0, 200.0]])


def spill_text(names, S):
    return ",".join([str(len(names))] + list(names) + [repr(float(v)) for v in np.asarray(S).ravel()])


def make_test_files(folder):
    """The committed test files, written again (tests compare bytes)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    # FCS 2.0, 16-bit big-endian integers; FL1 log-amplified over 4 decades, FSC with gain 2
    write_fcs_by_hand(folder / "v20_int16_log.fcs", "2.0", [[100, 0], [200, 256], [300, 512], [1023, 1023]],
                      ["FSC-H", "FL1-H"], markers=["", "CD3"], pne=["0,0", "4,1"], png=[2.0, None])
    # FCS 3.0, 32-bit little-endian integers, BD's SPILL keyword naming the channels in another order
    observed = TRUE3 @ S3
    order = [2, 0, 1]  # SPILL lists FL3, FL1, FL2
    names = ["FL1-A", "FL2-A", "FL3-A"]
    spill = spill_text([names[i] for i in order], S3[np.ix_(order, order)])
    write_fcs_by_hand(folder / "v30_int32_spill.fcs", "3.0",
                      np.column_stack([np.arange(4) * 10 + 5, np.round(observed)]).astype(int),
                      ["SSC-A"] + names, markers=["", "CD4", "CD8", "CD19"], datatype="I", bits=32,
                      byteord="1,2,3,4", ranges=[2**20] * 4, keywords={"SPILL": spill})
    return folder


# --------------------------------------------------------------------------- files on disk
def test_committed_files_are_the_ones_the_writer_makes(tmp_path):
    made = make_test_files(tmp_path)
    for name in ("v20_int16_log.fcs", "v30_int32_spill.fcs"):
        assert (DATA / name).read_bytes() == (made / name).read_bytes(), name
    assert sum(f.stat().st_size for f in DATA.iterdir()) < 200_000


def test_fcs_20_integers_log_amplification_and_gain():
    df = read_fcs(DATA / "v20_int16_log.fcs")
    assert df.attrs["version"] == "2.0"
    assert list(df.columns) == ["FSC-H", "FL1-H"] and df.attrs["markers"] == ["", "CD3"]
    # linear channel divided by its gain; log channel 10^(decades * value / range) * f2
    np.testing.assert_allclose(df["FSC-H"], [50.0, 100.0, 150.0, 511.5], rtol=1e-15)
    np.testing.assert_allclose(df["FL1-H"], [1.0, 10.0, 100.0, 10 ** (4 * 1023 / 1024)], rtol=1e-12)
    assert not df.attrs["compensated"] and df.attrs["spillover"] is None


def test_fcs_30_spill_keyword_compensates_in_the_names_order():
    df = read_fcs(DATA / "v30_int32_spill.fcs")
    assert df.attrs["version"] == "3.0" and df.attrs["spillover_keyword"] == "SPILL"
    names = ["FL1-A", "FL2-A", "FL3-A"]
    observed = np.round(TRUE3 @ S3)
    np.testing.assert_allclose(df[names].to_numpy(), observed @ np.linalg.inv(S3), rtol=1e-12, atol=1e-9)
    np.testing.assert_array_equal(df["SSC-A"], [5.0, 15.0, 25.0, 35.0])  # scatter untouched
    raw = read_fcs(DATA / "v30_int32_spill.fcs", compensate=False)
    np.testing.assert_array_equal(raw[names].to_numpy(), observed)
    assert not raw.attrs["compensated"]


def test_fcs_31_spillover_keyword_and_float_values(tmp_path):
    names = ["FL1-A", "FL2-A", "FL3-A"]
    observed = (TRUE3 @ S3).astype(np.float32).astype(np.float64)
    path = write_fcs_31(tmp_path / "a.fcs", np.column_stack([[1.0, 2, 3, 4], observed]), ["Time"] + names,
                        markers=["", "CD4", "CD8", "CD19"], metadata={"spillover": spill_text(names, S3)})
    df = read_fcs(path)
    assert df.attrs["version"] == "3.1" and df.attrs["spillover_keyword"] == "$SPILLOVER"
    np.testing.assert_allclose(df[names].to_numpy(), observed @ np.linalg.inv(S3), rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(df[names].to_numpy(), TRUE3, rtol=1e-6, atol=1e-3)
    assert df.attrs["spillover"]["channels"] == names
    np.testing.assert_array_equal(df.attrs["spillover"]["matrix"], S3)


def test_channels_by_name_or_marker_in_the_order_asked(tmp_path):
    df = read_fcs(DATA / "v30_int32_spill.fcs", channels=["CD19", "FL1-A"])
    full = read_fcs(DATA / "v30_int32_spill.fcs")
    assert list(df.columns) == ["FL3-A", "FL1-A"] and df.attrs["markers"] == ["CD19", "CD4"]
    np.testing.assert_array_equal(df.to_numpy(), full[["FL3-A", "FL1-A"]].to_numpy())
    named = read_fcs(DATA / "v30_int32_spill.fcs", channels=["CD19", "SSC-A"], column_names="pns")
    assert list(named.columns) == ["CD19", "SSC-A"]  # a channel without marker keeps its $PnN


def test_arcsinh_and_logicle_on_fluorescence_only():
    raw = read_fcs(DATA / "v30_int32_spill.fcs")
    a = read_fcs(DATA / "v30_int32_spill.fcs", transform="arcsinh", cofactor=150.0)
    fl = ["FL1-A", "FL2-A", "FL3-A"]
    np.testing.assert_allclose(a[fl].to_numpy(), np.arcsinh(raw[fl].to_numpy() / 150.0), rtol=1e-15)
    np.testing.assert_array_equal(a["SSC-A"], raw["SSC-A"])
    assert a.attrs["transformed_channels"] == fl
    lg = read_fcs(DATA / "v30_int32_spill.fcs", transform="logicle", logicle={"W": 0.5})
    T = 2.0 ** 20  # the channels' $PnR
    for c in fl:
        np.testing.assert_allclose(lg[c], [logicle_reference(x, T, 0.5, 4.5, 0.0) for x in raw[c]], atol=1e-12)
    only = read_fcs(DATA / "v30_int32_spill.fcs", transform="arcsinh", transform_channels=["CD8"])
    np.testing.assert_array_equal(only["FL1-A"], raw["FL1-A"])
    assert only.attrs["transformed_channels"] == ["FL2-A"]


def logicle_reference(x, T, W, M, A):
    """Moore & Parks (2012) by root finding: B(y) = a (h(y) - h(x1)), h(y) = e^{by} - c_a e^{-dy},
    B(1) = T, reflected about x1 for negative x."""
    from scipy.optimize import brentq

    w = W / (M + A)
    x2 = A / (M + A)
    x1, x0 = x2 + w, x2 + 2 * w
    b = (M + A) * math.log(10)
    d = brentq(lambda d: 2 * (math.log(d) - math.log(b)) + w * (b + d), 1e-300, b) if w > 0 else 0.0
    ca = math.exp(x0 * (b + d))

    def h(y):
        return math.exp(b * y) - ca * math.exp(-d * y)

    a = T / (h(1.0) - h(x1))
    if x == 0:
        return x1
    r = brentq(lambda y: a * (h(y) - h(x1)) - abs(x), x1, 3.0, xtol=1e-15, rtol=4 * np.finfo(float).eps)
    return r if x > 0 else 2 * x1 - r


@pytest.mark.parametrize("T, W, M, A", [(262144, 0.5, 4.5, 0.0), (1000, 1.0, 4.5, 0.0), (10000, 0.3, 4.0, 1.0)])
def test_logicle_matches_its_definition(T, W, M, A):
    pytest.importorskip("flowutils")
    xs = np.array([-500.0, -10.0, -1.0, 0.0, 0.3, 1.0, 10.0, 100.0, 999.0, T])
    want = [logicle_reference(x, T, W, M, A) for x in xs]
    np.testing.assert_allclose(logicle_transform(xs, T=T, W=W, M=M, A=A), want, atol=1e-12)
    assert logicle_transform(0.0, T=T, W=W, M=M, A=A) == pytest.approx((W + A) / (M + A), abs=1e-12)


def test_logicle_top_of_scale_follows_the_decoded_units():
    # FL1-H is log-amplified over 4 decades (f2 = 1): its values reach 10^4, not $PnR = 1024
    raw = read_fcs(DATA / "v20_int16_log.fcs")
    lg = read_fcs(DATA / "v20_int16_log.fcs", transform="logicle")
    want = [logicle_reference(x, 1.0e4, 0.5, 4.5, 0.0) for x in raw["FL1-H"]]
    np.testing.assert_allclose(lg["FL1-H"], want, atol=1e-12)
    assert lg["FL1-H"].max() < 1.0
    given = read_fcs(DATA / "v20_int16_log.fcs", transform="logicle", logicle={"T": 2.0e4})
    np.testing.assert_allclose(given["FL1-H"], [logicle_reference(x, 2.0e4, 0.5, 4.5, 0.0) for x in raw["FL1-H"]],
                               atol=1e-12)


def test_logicle_parameters_are_checked():
    with pytest.raises(TypeError, match="A must be a finite real number, got 'x'"):
        logicle_transform([1.0], A="x")
    with pytest.raises(ValueError, match=r"-W <= A <= M - 2 W = 3.5, got A = 4.0"):
        logicle_transform([1.0], A=4.0)
    with pytest.raises(ValueError, match="T must be > 0"):
        logicle_transform([1.0], T=0.0)


def test_arcsinh_values():
    np.testing.assert_allclose(arcsinh_transform([-5.0, 0.0, 5.0], 5.0), [-math.asinh(1), 0.0, math.asinh(1)])
    with pytest.raises(ValueError, match="cofactor must be > 0"):
        arcsinh_transform([1.0], 0.0)


def test_compensate_and_parse_spillover_directly():
    S = parse_spillover(spill_text(["B", "A"], [[1.0, 0.5], [0.0, 1.0]]))
    ev = pd.DataFrame({"A": [10.0], "B": [4.0], "C": [7.0]})
    out = compensate(ev, S)
    # x_obs = x_true @ S over (B, A): B_obs = B, A_obs = 0.5 B + A
    np.testing.assert_allclose(out[["A", "B", "C"]].to_numpy(), [[8.0, 4.0, 7.0]])
    with pytest.raises(ValueError, match=r"1 \+ n \+ n\^2 = 7"):
        parse_spillover("2,A,B,1,0,0")
    with pytest.raises(ValueError, match="not a number"):
        parse_spillover("2,A,B,1,0,x,1")
    with pytest.raises(ValueError, match="names a channel twice"):
        parse_spillover("2,A,A,1,0,0,1")
    with pytest.raises(ValueError, match="not in the file"):
        parse_spillover("2,A,Q,1,0,0,1", names=["A", "B"])
    with pytest.raises(ValueError, match="singular"):
        compensate(ev, pd.DataFrame([[1.0, 1.0], [1.0, 1.0]], index=["A", "B"], columns=["A", "B"]))


def test_a_spillover_matrix_given_as_argument(tmp_path):
    path = write_fcs_31(tmp_path / "b.fcs", [[10.0, 4.0]], ["FL1-A", "FL2-A"])
    S = pd.DataFrame([[1.0, 0.5], [0.0, 1.0]], index=["FL1-A", "FL2-A"], columns=["FL1-A", "FL2-A"])
    df = read_fcs(path, compensate=S)
    np.testing.assert_allclose(df.to_numpy(), [[10.0, -1.0]])
    assert df.attrs["spillover_keyword"] == "argument"
    assert not read_fcs(path).attrs["compensated"]  # no matrix in the file: nothing to apply


# --------------------------------------------------------------------------- folders
def test_folder_of_samples_sorted_by_name(tmp_path):
    write_fcs_31(tmp_path / "donor_b.fcs", [[2.0, 20.0]], ["FL1-A", "FL2-A"])
    write_fcs_31(tmp_path / "donor_a.FCS", [[1.0, 10.0], [3.0, 30.0]], ["FL1-A", "FL2-A"])
    (tmp_path / "notes.txt").write_text("not a sample")
    frames, names = read_fcs_folder(tmp_path, transform="arcsinh", cofactor=1.0)
    assert names == ["donor_a", "donor_b"]
    np.testing.assert_allclose(frames[0]["FL1-A"], np.arcsinh([1.0, 3.0]))
    np.testing.assert_allclose(frames[1]["FL2-A"], np.arcsinh([20.0]))


def test_folder_refusals(tmp_path):
    with pytest.raises(ValueError, match="no file matching"):
        read_fcs_folder(tmp_path)
    with pytest.raises(FileNotFoundError):
        read_fcs_folder(tmp_path / "missing")
    write_fcs_31(tmp_path / "a.fcs", [[1.0, 2.0]], ["FL1-A", "FL2-A"])
    write_fcs_31(tmp_path / "b.fcs", [[1.0, 2.0]], ["FL1-A", "FL3-A"])
    with pytest.raises(ValueError, match=r"'b.fcs' has the channels \['FL1-A', 'FL3-A'\]"):
        read_fcs_folder(tmp_path)
    frames, _ = read_fcs_folder(tmp_path, channels=["FL1-A"])
    assert [list(f.columns) for f in frames] == [["FL1-A"], ["FL1-A"]]


# --------------------------------------------------------------------------- refusals
def test_missing_file_and_not_an_fcs_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such FCS file"):
        read_fcs(tmp_path / "nope.fcs")
    bad = tmp_path / "bad.fcs"
    bad.write_bytes(b"PK\x03\x04 this is a zip file, not FCS" + b"\0" * 100)
    with pytest.raises(ValueError, match="is not an FCS file"):
        read_fcs(bad)
    v32 = tmp_path / "v32.fcs"
    v32.write_bytes(b"FCS3.2" + b" " * 200)
    with pytest.raises(ValueError, match=r"FCS 3.2 file; the reader handles FCS 2.0, 3.0, 3.1"):
        read_fcs(v32)
    with pytest.raises(ValueError, match="must name a file"):
        read_fcs(tmp_path)
    with pytest.raises(TypeError, match="path must be a str"):
        read_fcs(3)


def test_corrupt_header_and_truncated_data(tmp_path):
    good = (DATA / "v20_int16_log.fcs").read_bytes()
    bad_offsets = tmp_path / "offsets.fcs"
    bad_offsets.write_bytes(good[:10] + b"  abcdef" + good[18:])
    with pytest.raises(ValueError, match="could not be parsed as an FCS file"):
        read_fcs(bad_offsets)
    truncated = tmp_path / "truncated.fcs"
    truncated.write_bytes(good[:-4])
    with pytest.raises(ValueError, match="could not be parsed as an FCS file"):
        read_fcs(truncated)
    short = tmp_path / "short.fcs"
    short.write_bytes(good[:30])
    with pytest.raises(ValueError, match="header has 30 bytes"):
        read_fcs(short)


def test_unknown_channel_lists_the_available_ones():
    with pytest.raises(ValueError, match=r"'CD3' is neither .* available: SSC-A, FL1-A \(CD4\), FL2-A \(CD8\), "
                                         r"FL3-A \(CD19\)"):
        read_fcs(DATA / "v30_int32_spill.fcs", channels=["CD4", "CD3"])
    with pytest.raises(TypeError, match="write \\['CD4'\\] for one channel"):
        read_fcs(DATA / "v30_int32_spill.fcs", channels="CD4")
    with pytest.raises(ValueError, match="more than once"):
        read_fcs(DATA / "v30_int32_spill.fcs", channels=["CD4", "FL1-A"])
    with pytest.raises(ValueError, match="empty list"):
        read_fcs(DATA / "v30_int32_spill.fcs", channels=[])
    with pytest.raises(ValueError, match=r"transform_channels: 'CD8' is neither .* among the channels kept; "
                                         r"available: FL1-A \(CD4\)$"):
        read_fcs(DATA / "v30_int32_spill.fcs", channels=["CD4"], transform="arcsinh", transform_channels=["CD8"])
    with pytest.raises(TypeError, match="channels must be a list"):
        read_fcs(DATA / "v30_int32_spill.fcs", channels={"CD4"})


def test_argument_refusals():
    p = DATA / "v30_int32_spill.fcs"
    with pytest.raises(ValueError, match="transform must be one of"):
        read_fcs(p, transform="log")
    with pytest.raises(ValueError, match="cofactor must be > 0"):
        read_fcs(p, transform="arcsinh", cofactor=-1.0)
    with pytest.raises(TypeError, match="compensate must be True or False"):
        read_fcs(p, compensate="yes")
    with pytest.raises(ValueError, match="logicle parameters were given but transform is 'arcsinh'"):
        read_fcs(p, transform="arcsinh", logicle={"W": 1.0})
    with pytest.raises(ValueError, match="logicle takes the keys T, W, M, A"):
        read_fcs(p, transform="logicle", logicle={"width": 1.0})
    with pytest.raises(ValueError, match="2 W <= M"):
        read_fcs(p, transform="logicle", logicle={"W": 3.0})
    with pytest.raises(ValueError, match="transform_channels was given but transform is None"):
        read_fcs(p, transform_channels=["CD4"])


def test_comp_keyword_alone_is_refused_unless_told(tmp_path):
    path = write_fcs_by_hand(tmp_path / "comp.fcs", "3.0", [[10, 4]], ["FL1-A", "FL2-A"],
                             keywords={"$COMP": "2,1,0.5,0,1"})
    with pytest.raises(ValueError, match=r"only FCS 3.0's \$COMP keyword"):
        read_fcs(path)
    np.testing.assert_array_equal(read_fcs(path, compensate=False).to_numpy(), [[10.0, 4.0]])


def test_malformed_spillover_in_a_file_names_the_keyword(tmp_path):
    path = write_fcs_by_hand(tmp_path / "spill.fcs", "3.0", [[10, 4]], ["FL1-A", "FL2-A"],
                             keywords={"SPILL": "2,FL1-A,FL9-A,1,0,0,1"})
    with pytest.raises(ValueError, match=r"keyword SPILL: spillover matrix names channels \['FL9-A'\]"):
        read_fcs(path)


def test_unknown_byte_order_is_refused_not_read_as_native(tmp_path):
    path = write_fcs_by_hand(tmp_path / "pdp.fcs", "3.0", [[10, 4]], ["FL1-A", "FL2-A"], bits=32,
                             byteord="3,4,1,2")
    with pytest.raises(ValueError, match="byte order"):
        read_fcs(path)


def test_several_data_sets_are_refused(tmp_path):
    path = write_fcs_by_hand(tmp_path / "two.fcs", "3.0", [[10, 4]], ["FL1-A", "FL2-A"])
    raw = path.read_bytes().replace(b"$NEXTDATA/0/", b"$NEXTDATA/9/")
    path.write_bytes(raw)
    with pytest.raises(ValueError, match="several data sets"):
        read_fcs(path)


@pytest.mark.parametrize("version, datatype, byteord", [("3.0", "F", "4,3,2,1"), ("3.0", "D", "1,2,3,4"),
                                                        ("2.0", "F", "1,2,3,4"), ("3.1", "D", "4,3,2,1")])
def test_float_and_double_data_in_both_byte_orders(tmp_path, version, datatype, byteord):
    values = np.array([[0.5, -1.25, 3.0e5], [1.0 / 3.0, 2.0, -7.0]])
    path = write_fcs_by_hand(tmp_path / "f.fcs", version, values, ["FSC-A", "FL1-A", "FL2-A"], datatype=datatype,
                             byteord=byteord)
    want = values.astype(np.float32) if datatype == "F" else values
    np.testing.assert_array_equal(read_fcs(path).to_numpy(), want.astype(np.float64))


def test_missing_optional_readers_are_clear_import_errors(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "flowio", None)
    with pytest.raises(ImportError, match=r"needs the optional package flowio: pip install flowio"):
        read_fcs(DATA / "v20_int16_log.fcs")
    monkeypatch.setitem(sys.modules, "flowutils.transforms", None)
    with pytest.raises(ImportError, match=r"transform='logicle' needs the optional package flowutils"):
        logicle_transform([1.0])
