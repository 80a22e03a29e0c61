"""Shared input checks (issue 34): numbers that NumPy would silently cast are refused by name."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hphawkes_py._validate import as_count_array, as_float_array


@pytest.mark.parametrize("bad", [
    np.array(["2020-01-01", "2020-01-02"], dtype="datetime64[D]"),
    np.array([1, 2], dtype="timedelta64[D]"),
    np.array([1 + 2j, 3 + 0j]),
    np.array(["1.5", "2.5"]),
    pd.DataFrame({"a": [1.0, 2.0], "when": pd.to_datetime(["2020-01-01", "2020-01-02"])}),
    np.array([1.0, "x"], dtype=object),
])
def test_as_float_array_refuses_what_numpy_would_cast(bad):
    with pytest.raises(TypeError, match="arg must be an array of numbers"):
        as_float_array(bad, "arg")


def test_as_float_array_keeps_real_numbers():
    got = as_float_array(pd.DataFrame({"a": [1, 2], "b": [True, False], "c": [0.5, 1.5]}), "arg")
    assert np.array_equal(got, [[1, 1, 0.5], [2, 0, 1.5]])


@pytest.mark.parametrize("bad", [np.array([1, 2**63 + 5], dtype=np.uint64), np.array([1.0, 2.0**63])])
def test_counts_beyond_int64_are_refused_not_wrapped(bad):
    with pytest.raises(ValueError, match=r"below 2\*\*63"):
        as_count_array(bad, "cases")


def test_uint64_counts_that_fit_are_taken():
    assert as_count_array(np.array([0, 7, 2**40], dtype=np.uint64), "cases").tolist() == [0, 7, 2**40]


def test_missing_time_in_a_space_time_scan_is_refused_without_a_numpy_warning():
    # np.round(NaN) warned "invalid value encountered in rint", which leaked to R's stderr
    import warnings

    import hphawkes_py as hp
    coords = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="whole days.*nan"):
            hp.scan.space_time_permutation(coords, np.array([1, 2, 1]), np.array([1.0, np.nan, 3.0]), n_replicates=9,
                                          progress=False)
