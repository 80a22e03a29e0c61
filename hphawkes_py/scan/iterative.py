"""SaTScan's iterative scan: report the most likely cluster, remove its data, scan again.

A secondary cluster of an ordinary scan is judged against the maximum LLR of the null
replicates, a null in which the most likely cluster does not exist; a strong first cluster
thereby hides the significance of the others. The iterative scan (Kulldorff 2009, "SaTScan
user guide", section "Iterative scan statistic"; SaTScan's ``IterativeScan``) tests each
cluster on data where the clusters found before it are gone:

1. scan the data (purely spatial Bernoulli or discrete Poisson) with Monte Carlo inference and
   report its most likely cluster;
2. stop when ``max_iterations`` clusters have been reported, when that cluster's p-value exceeds
   ``max_p_value``, or when fewer than 2 cases or 2 locations with data would remain;
3. else remove the data of the cluster's locations -- their cases, and their controls
   (Bernoulli) or population and expected cases (Poisson) become 0 -- and go back to 1.

As in SaTScan (``CSaTScanData::RemoveClusterSignificance``), a removed location stays a circle
centre and a member of the windows (with no data); it is no longer listed among a cluster's
locations. The totals, the expected counts (Poisson: the remaining expected counts rescaled to
the remaining cases, SaTScan's recalibration of the measure; with covariates, the full data's
standardised counts, not standardised again), the maximum window size (a
fraction of the remaining population) and the null replicates are those of the reduced data,
so iteration k is exactly the scan of the data with the first k - 1 clusters' locations
zeroed.
"""
from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pandas as pd

from .._validate import check_in, check_int, check_probability
from .locations import _check_xy, check_location_ids, merge_rows
from .model import _check_poisson_rows, _expected_cases, bernoulli, poisson
from .result import ScanResult

__all__ = ["iterative_scan", "IterativeScanResult"]

#: settings that leave a SaTScan option off
_OFF = {"", "n", "0", "no", "false"}
#: SaTScan's PValueReportType -> the p-value :func:`iterative_scan` compares with the cutoff
_PRM_P_VALUES = {"0": "default", "1": "monte_carlo", "3": "gumbel"}

#: SaTScan's limit on the number of iterations (``CParameters::MAXIMUM_ITERATIVE_ANALYSES``)
MAX_ITERATIONS = 32000
#: SaTScan reports p-values (and so iterates) only with at least this many replicates
MIN_REPLICATES = 99
#: an iteration needs at least this many cases left (SaTScan's ``repeatAnalysis``, Bernoulli and Poisson)
MIN_CASES_LEFT = 2

#: SaTScan's default p-value is Gumbel's below this rank (``CCluster::MIN_RANK_RPT_GUMBEL``)
GUMBEL_RANK = 10

_MODELS = {"bernoulli": bernoulli, "poisson": poisson}


@dataclasses.dataclass(frozen=True, repr=False)
class IterativeScanResult:
    """Result of :func:`iterative_scan`: one cluster per iteration and each iteration's scan.

    Parameters
    ----------
    clusters : pandas.DataFrame
        One row per iteration, in order: ``iteration`` (1, 2, ...), then the columns of
        :attr:`ScanResult.clusters <hphawkes_py.scan.ScanResult>` for the most likely cluster of that
        iteration, with ``location_ids`` and ``n_locations`` restricted to the locations that still
        had data (a window may reach over removed locations), ``p_value`` and ``gumbel_p_value``
        against that iteration's null replicates, and ``remaining_cases`` / ``remaining_population``,
        the totals the iteration scanned (Bernoulli: persons; Poisson: the population).
    results : tuple of ScanResult
        The full scan of each iteration (its secondary clusters and null maxima included).
    stop_reason : str
        Why no further iteration ran: ``"max_iterations"``, ``"p_value"`` (the last cluster's
        p-value exceeded ``max_p_value``), ``"no_cluster"`` (no window with LLR > 0),
        ``"cases"`` (fewer than 2 cases would remain), ``"locations"`` (fewer than 2 locations
        with data would remain) or ``"controls"`` (Bernoulli: no control would remain).
    model : str
        ``"bernoulli"`` or ``"poisson"``.
    max_iterations : int
    max_p_value : float
    p_value : str
        The settings used.

    Examples
    --------
    >>> g = hp.datasets.load_grave()
    >>> res = hp.scan.iterative_scan("bernoulli", g[["x", "y"]].to_numpy(), g["case"], 1 - g["case"],
    ...                              max_iterations=3, max_p_value=0.5, n_replicates=99, seed=1,
    ...                              backend="cpu", progress=False)
    >>> res.clusters[["iteration", "n_locations", "cases"]].iloc[0].tolist()
    [1, 19, 11]
    """

    clusters: pd.DataFrame
    results: tuple
    stop_reason: str
    model: str
    max_iterations: int
    max_p_value: float
    p_value: str = "monte_carlo"

    @property
    def n_iterations(self) -> int:
        """Number of scans run (one cluster reported by each)."""
        return len(self.results)

    def to_frame(self) -> pd.DataFrame:
        """The cluster table (a copy)."""
        return self.clusters.copy()

    def to_csv(self, path, **kwargs) -> None:
        """Write the cluster table; ``location_ids`` as space-separated ids."""
        df = self.clusters.copy()
        df["location_ids"] = [" ".join(str(v) for v in ids) for ids in df["location_ids"]]
        df.to_csv(path, index=False, **kwargs)

    def to_scan_result(self) -> ScanResult:
        """The first iteration's :class:`~hphawkes_py.scan.ScanResult` (the full data) with this
        cluster table, one row per iteration, as its clusters: for maps and location tables. Each
        row keeps its own iteration's p-values; ``null_llr`` is the first iteration's."""
        table = self.clusters.drop(columns=["iteration", "remaining_cases", "remaining_population"])
        return dataclasses.replace(self.results[0], clusters=table.reset_index(drop=True))

    def plot(self, ax=None, *, alpha: float = 0.05, path=None):
        """The clusters of all iterations over the full data: :func:`~hphawkes_py.scan.plot_clusters`
        of :meth:`to_scan_result` (label k = iteration k)."""
        from .plot import plot_clusters

        return plot_clusters(self.to_scan_result(), ax, alpha=alpha, path=path)

    def summary(self) -> str:
        """The clusters, one line per iteration, and why the iterations stopped."""
        lines = [f"Iterative {self.model} scan: {self.n_iterations} iteration(s), stopped: {self.stop_reason} "
                 f"(at most {self.max_iterations}, p <= {self.max_p_value:g} to go on)"]
        for row in self.clusters.itertuples():
            ids = ", ".join(str(v) for v in row.location_ids[:12]) + (" ..." if row.n_locations > 12 else "")
            lines.append(f"{row.iteration}. locations {ids}; cases {row.cases} (expected {row.expected:.2f}) of "
                         f"{row.remaining_cases} left; LLR {row.log_likelihood_ratio:.6f}; p {row.p_value:.4g}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"IterativeScanResult(model={self.model!r}, iterations={self.n_iterations}, "
                f"stop_reason={self.stop_reason!r})")


def _check_model(model):
    """``model`` as the name of a purely spatial scan: "bernoulli"/"poisson" or the function itself."""
    for name, fn in _MODELS.items():
        if model is fn:
            return name
    if isinstance(model, str) and model in _MODELS:
        return model
    raise ValueError(f"model must be 'bernoulli' or 'poisson' (or hp.scan.bernoulli / hp.scan.poisson): the "
                     f"iterative scan is implemented for the purely spatial Bernoulli and discrete Poisson scans; "
                     f"got {model!r}")


def iterative_scan(model, coords, cases, controls_or_population=None, *, max_iterations=10, max_p_value=0.05,
                   p_value="monte_carlo", **kwargs) -> IterativeScanResult:
    """SaTScan's iterative scan: most likely cluster, removed, rescan, up to ``max_iterations`` times.

    Each iteration runs :func:`~hphawkes_py.scan.bernoulli` or :func:`~hphawkes_py.scan.poisson`
    with ``kwargs`` on the data left by the previous ones, reports its most likely cluster, and
    removes the data of that cluster's locations (see the module notes for SaTScan's exact
    semantics). The first iteration is the ordinary scan; later p-values are computed on the
    reduced data, so a cluster hidden by a stronger one can become significant.

    Parameters
    ----------
    model : {"bernoulli", "poisson"} or hp.scan.bernoulli / hp.scan.poisson
        The purely spatial scan to iterate.
    coords : array_like (n, 2)
        As in the scan.
    cases : array_like (n,)
        Non-negative integer case counts.
    controls_or_population : array_like (n,)
        Bernoulli: the controls; Poisson: the population (or None with ``expected=``).
    max_iterations : int in [1, 32000]
        At most this many clusters (scans); SaTScan's ``IterativeScanMaxIterations`` (default 10).
    max_p_value : float in [0, 1]
        Go on only while the reported cluster's p-value is at most this
        (``IterativeScanMaxPValue``, default 0.05). The cluster that exceeds it is still
        reported, as in SaTScan's report.
    p_value : {"monte_carlo", "gumbel", "default"}
        The p-value compared with ``max_p_value`` (SaTScan's ``PValueReportType``): the Monte Carlo
        ``p_value`` (1, standard), the ``gumbel_p_value`` (3), or SaTScan's default combination
        (0): the Gumbel p-value when fewer than 9 null maxima reach the cluster's LLR and only
        high rates are scanned, the Monte Carlo one otherwise.
    **kwargs
        The scan's other arguments (``max_population``, ``n_replicates``, ``seed``, ``window``,
        ``location_ids``, ``expected`` ...). ``n_replicates`` must be at least 99 (SaTScan gives
        no p-value, and so never iterates, with fewer). An int ``seed`` is the root of every
        iteration's replicates (None: one root is drawn for all), so iteration k is the plain scan
        of its data with that seed; a SeedSequence or Generator advances from one iteration to the
        next. With Poisson ``covariates`` the first iteration standardises over the categories
        and later ones, as SaTScan does, keep those expected counts and rescale what is left to
        the remaining cases (they do not standardise again); they then scan one row per location.

    Returns
    -------
    IterativeScanResult
        ``clusters``: one row per iteration with an ``iteration`` column; ``results``: each
        iteration's :class:`~hphawkes_py.scan.ScanResult`; ``stop_reason``.

    Raises
    ------
    ValueError
        An unknown ``model`` or ``p_value``, ``max_iterations`` outside [1, 32000], ``max_p_value``
        outside [0, 1], fewer than 99 ``n_replicates``, or whatever the scan refuses (checked by
        the first iteration, before any removal).

    Examples
    --------
    Leukaemia in upstate New York: the clusters found one after the other.

    >>> ny = hp.datasets.load_ny_leukemia()
    >>> res = hp.scan.iterative_scan("poisson", ny[["x", "y"]].to_numpy(), ny["cases_floor"], ny["population"],
    ...                              max_iterations=3, n_replicates=99, seed=1, backend="cpu", progress=False)
    >>> res.clusters[["iteration", "n_locations", "cases"]].iloc[0].tolist()
    [1, 37, 117]
    >>> res.stop_reason in ("p_value", "max_iterations")
    True
    """
    name = _check_model(model)
    max_iterations = check_int(max_iterations, "max_iterations", minimum=1, maximum=MAX_ITERATIONS)
    max_p_value = check_probability(max_p_value, "max_p_value", low_open=False)
    p_value = check_in(p_value, "p_value", ("monte_carlo", "gumbel", "default"))
    n_replicates = kwargs.get("n_replicates", 999)
    if isinstance(n_replicates, (int, np.integer)) and not isinstance(n_replicates, bool) \
            and 1 <= n_replicates < MIN_REPLICATES:
        raise ValueError(f"n_replicates={int(n_replicates)} is too few for the iterative scan: SaTScan reports no "
                         f"p-value, and so never goes past the first iteration, below {MIN_REPLICATES} replicates; "
                         f"use at least {MIN_REPLICATES} (999 recommended)")
    if name == "bernoulli" and "expected" in kwargs:
        raise TypeError("expected= is an argument of the Poisson scan, not of the Bernoulli one")
    if kwargs.get("seed") is None:
        # one root for every iteration, so that each is the plain scan of its data with that seed
        kwargs["seed"] = int(np.random.SeedSequence().entropy)
    fn = _MODELS[name]
    covariates = kwargs.pop("covariates", None)
    location_ids = kwargs.pop("location_ids", None)
    expected = kwargs.pop("expected", None)
    first = dict(kwargs, location_ids=location_ids)
    if expected is not None:
        first["expected"] = expected
    if covariates is not None:
        first["covariates"] = covariates
    res = fn(coords, cases, controls_or_population, **first)  # the plain scan: every argument checked here

    xy = _check_xy(coords)
    n = xy.shape[0]
    loc_coords, gid, _ = merge_rows(xy)
    ids = check_location_ids(location_ids, n, repeats=covariates is not None).tolist()
    loc_of_id = dict(zip(ids, gid.tolist()))
    gone = np.zeros(len(loc_coords), dtype=bool)  # locations whose data were removed
    if covariates is None:
        # the input rows, zeroed where their location is removed
        data = {"cases": np.array(cases, copy=True), "other": None if controls_or_population is None
                else np.array(controls_or_population, copy=True),
                "expected": None if expected is None else np.array(expected, dtype=np.float64, copy=True)}
        row_loc, where = gid, dict(coords=coords, location_ids=location_ids)
    else:
        # SaTScan keeps the full data's covariate-adjusted expected counts and rescales what is left
        # to the remaining cases; one row per location, reported by its first row's id as before
        ca, po, _, codes, cats = _check_poisson_rows(n, cases, controls_or_population, None, covariates)
        first_row = np.unique(gid, return_index=True)[1]
        data = {"cases": np.bincount(gid, weights=ca, minlength=len(loc_coords)).astype(np.int64),
                "other": np.bincount(gid, weights=po, minlength=len(loc_coords)),
                "expected": np.bincount(gid, weights=_expected_cases(ca, po, None, codes, cats),
                                        minlength=len(loc_coords))}
        row_loc = np.arange(len(loc_coords))
        where = dict(coords=loc_coords, location_ids=np.asarray(location_ids if location_ids is not None
                                                                else np.arange(n), dtype=object)[first_row])

    results, rows = [], []
    stop = "max_iterations"
    for it in range(1, max_iterations + 1):
        if it > 1:
            extra = {} if data["expected"] is None else {"expected": data["expected"]}
            with warnings.catch_warnings():  # the merge of rows sharing coordinates was reported by the first scan
                warnings.filterwarnings("ignore", message=r".*share coordinates.*", category=UserWarning)
                res = fn(where["coords"], data["cases"], data["other"], location_ids=where["location_ids"], **extra,
                         **kwargs)
        results.append(res)
        top = res.most_likely
        if top is None:
            stop = "no_cluster"
            break
        removed = {i for i in ids if gone[loc_of_id[i]]}
        rows.append(_reported(top, res, removed, it))
        if it == max_iterations:
            break
        if _reporting_p_value(top, res, p_value) > max_p_value:
            stop = "p_value"
            break
        for i in top.location_ids:
            gone[loc_of_id[i]] = True
        for v in data.values():
            if v is not None:
                v[gone[row_loc]] = 0
        reason = _cannot_go_on(name, data, gone)
        if reason is not None:
            stop = reason
            break
    table = pd.DataFrame(rows)
    if not rows:
        table = pd.DataFrame(columns=["iteration", *results[0].clusters.columns, "remaining_cases",
                                      "remaining_population"])
    return IterativeScanResult(table, tuple(results), stop, name, max_iterations, max_p_value, p_value)


def _reported(top: pd.Series, res: ScanResult, removed: set, iteration: int) -> dict:
    """The most likely cluster of one iteration as a row of the iterative table: its locations
    without the ``removed`` ones (ids; a window may reach over them, SaTScan lists only the
    locations with data)."""
    kept = [i for i in top.location_ids if i not in removed]
    row = {"iteration": iteration, **top.to_dict()}
    row["location_ids"] = kept
    row["n_locations"] = len(kept)
    row["remaining_cases"] = res.n_cases
    row["remaining_population"] = res.n_population
    return row


def _reporting_p_value(top: pd.Series, res: ScanResult, how: str) -> float:
    """The p-value SaTScan compares with the iterative cutoff (``CCluster::getReportingPValue``):
    in its default combination, Gumbel's when the cluster's rank ``1 + #{null maxima >= LLR}`` is
    below 10 and only high rates are scanned."""
    if how == "monte_carlo":
        return float(top.p_value)
    if how == "gumbel":
        return float(top.gumbel_p_value)
    rank = round(float(top.p_value) * (res.n_replicates + 1))
    use_gumbel = rank < GUMBEL_RANK and res.direction == "high"
    return float(top.gumbel_p_value if use_gumbel else top.p_value)


def _cannot_go_on(name: str, data: dict, gone: np.ndarray) -> str | None:
    """Why the data left after a removal cannot be scanned again (SaTScan's ``repeatAnalysis``:
    at least 2 cases and 2 locations), or None."""
    if int(data["cases"].sum()) < MIN_CASES_LEFT:
        return "cases"
    if int((~gone).sum()) < 2:
        return "locations"
    if name == "bernoulli" and int(data["other"].sum()) == 0:
        return "controls"
    return None


def prm_iterative(values: dict, model: str, bad) -> dict | None:
    """The iterative scan a SaTScan parameter file asks for, as :func:`iterative_scan` keywords
    (``max_iterations``, ``max_p_value``, ``p_value``), or None when ``IterativeScan`` is off.

    ``values``: the file's settings by key (``hp.scan._prm.read_prm(path)["values"]``); ``model``:
    the analysis ``prm_arguments`` found; ``bad(key, why)``: the ValueError naming the setting.
    SaTScan's ``IterativeScanMaxIterations=0`` (its default when the key is absent) runs one scan:
    ``max_iterations=1``.
    """
    if (values.get("IterativeScan", "n") or "n").lower() in _OFF:
        return None
    if model not in _MODELS:
        raise bad("IterativeScan", "is supported with the purely spatial Bernoulli and discrete Poisson analyses only "
                                   "(SaTScan also iterates space-time permutation analyses; hp.scan does not yet)")
    if (values.get("PerformPowerEvaluation", "n") or "n").lower() not in _OFF:
        raise bad("IterativeScan", "cannot be combined with PerformPowerEvaluation=y (SaTScan refuses it too)")
    try:
        n = int(values.get("IterativeScanMaxIterations", "0"))
    except ValueError:
        raise bad("IterativeScanMaxIterations", "is not a whole number") from None
    if not 0 <= n <= MAX_ITERATIONS:
        raise bad("IterativeScanMaxIterations", f"must be in [0, {MAX_ITERATIONS}]")
    try:
        cut = float(values.get("IterativeScanMaxPValue", "0.05"))
    except ValueError:
        raise bad("IterativeScanMaxPValue", "is not a number") from None
    if not 0 <= cut <= 1:
        raise bad("IterativeScanMaxPValue", "must be in [0, 1] (a retrospective analysis' p-value cutoff)")
    how = _PRM_P_VALUES.get(values.get("PValueReportType", "0"))
    if how is None:
        raise bad("PValueReportType", "must be 0 (default), 1 (standard Monte Carlo) or 3 (Gumbel) with the iterative "
                                      "scan")
    return {"max_iterations": max(n, 1), "max_p_value": cut, "p_value": how}
