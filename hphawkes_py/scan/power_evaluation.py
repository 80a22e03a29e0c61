"""SaTScan's power evaluation of the purely spatial discrete Poisson scan.

How often would the scan detect a cluster of a given shape and strength? SaTScan's answer
(``PerformPowerEvaluation``; Kulldorff, "SaTScan user guide", section "Power evaluation";
``AnalysisExecution::executePowerEvaluations``) takes two Monte Carlo steps:

1. the null: ``n_replicates`` data sets with the C cases redistributed multinomially in
   proportion to the expected counts (exactly the replicates of :func:`~hphawkes_py.scan.poisson`
   with the same seed); the critical value at level alpha is the ``floor((R + 1) alpha)``-th
   largest of their maximum LLRs (``"monte_carlo"``), or the alpha upper quantile of the Gumbel
   distribution fitted to them by moments (``"gumbel"``), or given;
2. the alternative: ``n_power_replicates`` data sets with the C cases redistributed in
   proportion to expected x relative risk (an alternative hypothesis: one relative risk per
   location, SaTScan's ``.ha`` file); the power at level alpha is the fraction whose maximum
   LLR exceeds the critical value (``"monte_carlo"``; standard error ``sqrt(p (1 - p) / n)``),
   or the upper tail of the Gumbel distribution fitted to those maxima (``"gumbel"``).

SaTScan offers the power evaluation for the Poisson model only; the Bernoulli model is
refused here too.
"""
from __future__ import annotations

import dataclasses
import math
import numbers
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._backend import threads_context
from .._validate import as_float_array, check_in, check_int
from .ellipses import _elliptic_penalties, _elliptic_windows
from .engine import klogk_table, make_engine
from .locations import _check_xy, make_centres, merge_rows
from .model import _check_poisson_rows, _check_windows, _expected_cases, poisson
from .monte_carlo import EULER_GAMMA, _monte_carlo, check_run
from .windows import build_windows, cumulative_expected

__all__ = ["power", "PowerResult", "read_alternative_hypotheses"]

#: SaTScan's significance levels of the power evaluation
ALPHAS = (0.05, 0.01, 0.001)
#: SaTScan's tolerance when an LLR is compared with a critical value (``DBL_CMP_TOLERANCE``)
CMP_TOLERANCE = 1e-9


@dataclasses.dataclass(frozen=True, repr=False)
class PowerResult:
    """Result of :func:`power`: the critical values and the estimated power of each alternative.

    Parameters
    ----------
    table : pandas.DataFrame
        One row per alternative and level: ``alternative`` (1, 2, ... in the order given),
        ``alpha``, ``critical_value`` (LLR), ``power`` (the estimated probability that the scan's
        maximum LLR exceeds the critical value under the alternative) and ``standard_error`` (its
        Monte Carlo standard error ``sqrt(power (1 - power) / n_power_replicates)``; NaN with
        ``estimation="gumbel"``).
    critical_values : dict
        alpha -> critical LLR.
    null_llr : numpy.ndarray
        (n_replicates,) maximum LLR of each null replicate.
    alternative_llr : numpy.ndarray
        (n_alternatives, n_power_replicates) maximum LLR of each alternative replicate.
    n_cases : int
        Cases C in every replicate.
    critical_value_type, estimation : str
        The settings used.
    analysis : ScanResult, optional
        The scan of the data run together with the power evaluation (SaTScan's
        ``PowerEvaluationsMethod=0``; its null replicates are the ones behind the critical values).

    Examples
    --------
    >>> ny = hp.datasets.load_ny_leukemia()
    >>> rr = np.where(np.arange(len(ny)) < 10, 3.0, 1.0)
    >>> res = hp.scan.power(ny[["x", "y"]].to_numpy(), ny["cases_floor"], ny["population"], rr,
    ...                     n_replicates=999, n_power_replicates=100, seed=1, backend="cpu", progress=False)
    >>> res.table.columns.tolist()
    ['alternative', 'alpha', 'critical_value', 'power', 'standard_error']
    """

    table: pd.DataFrame
    critical_values: dict
    null_llr: np.ndarray
    alternative_llr: np.ndarray
    n_cases: int
    critical_value_type: str
    estimation: str
    analysis: Any = None

    def power_at(self, alpha: float = 0.05) -> np.ndarray:
        """The estimated power of each alternative at level ``alpha`` (one of :attr:`critical_values`)."""
        if alpha not in self.critical_values:
            raise ValueError(f"alpha must be one of {sorted(self.critical_values)}, got {alpha!r}")
        return self.table.loc[self.table.alpha == alpha, "power"].to_numpy()

    def to_csv(self, path, **kwargs) -> None:
        """Write :attr:`table` (one row per alternative and level)."""
        self.table.to_csv(path, index=False, **kwargs)

    def summary(self) -> str:
        """SaTScan's "ESTIMATED POWER" table: one line per alternative, one column per level."""
        alphas = sorted(self.critical_values, reverse=True)
        head = "Alpha".ljust(24) + "".join(f"{a:<20g}" for a in alphas)
        crit = "Critical value".ljust(24) + "".join(f"{self.critical_values[a]:<20.6f}" for a in alphas)
        lines = [f"Estimated power ({self.estimation}; critical values: {self.critical_value_type}), "
                 f"{self.alternative_llr.shape[1]} replicates per alternative, {self.n_cases} cases", head, crit]
        for k in range(self.alternative_llr.shape[0]):
            rows = self.table[self.table.alternative == k + 1].set_index("alpha")
            lines.append(f"Alternative #{k + 1}".ljust(24) + "".join(f"{rows.power[a]:<20.3f}" for a in alphas))
        return "\n".join(lines)

    def __repr__(self) -> str:
        p = ", ".join(f"{v:.3g}" for v in self.power_at(0.05)) if 0.05 in self.critical_values else "-"
        return (f"PowerResult(alternatives={self.alternative_llr.shape[0]}, n_power_replicates="
                f"{self.alternative_llr.shape[1]}, power at 0.05: [{p}])")


def gumbel_moments(llr: np.ndarray) -> tuple[float, float]:
    """SaTScan's method-of-moments Gumbel fit to maximum LLRs: ``(mu, beta)`` with
    ``beta = sd sqrt(6) / pi`` (sd with divisor n, as ``SimulationVariables``) and
    ``mu = mean - gamma beta``."""
    llr = np.asarray(llr, dtype=np.float64)
    beta = float(np.std(llr)) * math.sqrt(6.0) / math.pi
    return float(np.mean(llr)) - EULER_GAMMA * beta, beta


def _critical_values(null_llr, how, alphas) -> dict:
    """alpha -> critical LLR from the null maxima (SaTScan's ``SignificantRatios`` and
    ``calculateGumbelCriticalValue``) or as given."""
    R = len(null_llr)
    if isinstance(how, str):
        if how == "monte_carlo":
            desc = np.sort(null_llr)[::-1]
            out = {}
            for a in alphas:
                k = math.floor((R + 1) * a)
                if k < 1:
                    raise ValueError(f"n_replicates={R} is too few for a Monte Carlo critical value at alpha={a}: "
                                     f"it is the floor((n_replicates + 1) alpha)-th largest null maximum; use at "
                                     f"least {math.ceil(1 / a) - 1} replicates (SaTScan requires 999)")
                out[a] = float(desc[k - 1])
            return out
        mu, beta = gumbel_moments(null_llr)
        if not beta > 0:
            raise ValueError("the null maxima are all equal: a Gumbel distribution cannot be fitted to them; use "
                             "critical_values='monte_carlo'")
        return {a: mu - beta * math.log(math.log(1.0 / (1.0 - a))) for a in alphas}
    return dict(zip(alphas, how))


def _check_critical(critical_values):
    """``"monte_carlo"``, ``"gumbel"`` or three positive critical LLRs (alpha 0.05, 0.01, 0.001)."""
    if isinstance(critical_values, str):
        return check_in(critical_values, "critical_values", ("monte_carlo", "gumbel"))
    try:
        vals = [float(v) for v in critical_values]
    except (TypeError, ValueError):
        raise TypeError(f"critical_values must be 'monte_carlo', 'gumbel' or three critical LLRs (alpha 0.05, 0.01, "
                        f"0.001), got {critical_values!r}") from None
    if len(vals) != len(ALPHAS) or not all(math.isfinite(v) and v > 0 for v in vals):
        raise ValueError(f"critical_values given as numbers must be three positive finite LLRs (alpha 0.05, 0.01, "
                         f"0.001, SaTScan's CriticalValue05/01/001), got {critical_values!r}")
    return tuple(vals)


def _check_relative_risks(relative_risks, n):
    """(k, n) relative risks, one row per alternative: finite, non-negative, not all zero."""
    rr = as_float_array(relative_risks, "relative_risks", copy=True)
    if rr.ndim == 1:
        rr = rr[None, :]
    if rr.ndim != 2 or rr.shape[1] != n or rr.shape[0] < 1:
        raise ValueError(f"relative_risks must be (n,) for one alternative or (k, n) for k alternatives, with n = "
                         f"{n} rows as coords; got shape {np.shape(relative_risks)}")
    bad = ~np.isfinite(rr) | (rr < 0)
    if bad.any():
        k, i = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(f"relative_risks must be finite and non-negative; alternative {k + 1}, row {i} is {rr[k, i]!r}")
    return rr


def power(coords, cases, population, relative_risks, *, expected=None, n_replicates=999, n_power_replicates=None,
          critical_values="monte_carlo", estimation="monte_carlo", max_population=0.5, max_distance=None, min_cases=2,
          direction="high", grid_cell=None, distance="euclidean", window="circle", ellipse_shapes=(1.5, 2, 3, 4, 5),
          ellipse_angles=(4, 6, 9, 12, 15), penalty="medium", seed=None, executor=None, backend="auto", threads=None,
          progress=True) -> PowerResult:
    """Power of the purely spatial discrete Poisson scan against alternative relative risks (SaTScan).

    Parameters
    ----------
    coords : array_like (n, 2)
        As in :func:`~hphawkes_py.scan.poisson`.
    cases : array_like (n,) or int
        The case counts (their total C is the number of cases of every replicate; SaTScan's
        ``PowerEvaluationsMethod`` 0 or 1), or the total C itself (method 2,
        ``PowerEvaluationTotalCases``).
    population : array_like (n,)
        Population per row (or None with ``expected``).
    relative_risks : array_like (n,) or (k, n)
        The alternative hypotheses: the relative risk of each row (1 = the null's rate), one row
        of the array per alternative (SaTScan's ``.ha`` file; see :func:`read_alternative_hypotheses`).
        Under an alternative the C cases fall on the rows in proportion to expected x relative risk.
    expected : array_like (n,), optional
        Expected cases per row under the null instead of the population-proportional ones.
    n_replicates : int >= 1
        Null replicates for the critical values (SaTScan requires 999; ``"monte_carlo"`` critical
        values need ``floor((n_replicates + 1) alpha) >= 1``, i.e. 999 for alpha = 0.001).
    n_power_replicates : int >= 1, optional
        Replicates per alternative (SaTScan's ``NumberPowerReplications``; default n_replicates + 1).
    critical_values : {"monte_carlo", "gumbel"} or (float, float, float)
        SaTScan's ``CriticalValueType``: from the sorted null maxima, from the Gumbel fit to them,
        or given for alpha = 0.05, 0.01, 0.001 (``CriticalValue05/01/001``; the null replicates
        then run only to be reported).
    estimation : {"monte_carlo", "gumbel"}
        SaTScan's ``PowerEstimationType``: the fraction of alternative maxima above the critical
        value (by more than 1e-9, SaTScan's tolerance), or the Gumbel tail fitted to them.
    max_population, max_distance, min_cases, direction, grid_cell, distance, window, ellipse_shapes, ellipse_angles, penalty
        The scan's settings, as in :func:`~hphawkes_py.scan.poisson`.
    seed : None, int, SeedSequence or Generator
        Root seed: the null replicates are those of :func:`~hphawkes_py.scan.poisson` with the
        same int seed; alternative ``a`` (0-based) uses the children of the root's child
        ``n_replicates + a``.
    executor, backend, threads, progress
        As in :func:`~hphawkes_py.scan.poisson`.

    Returns
    -------
    PowerResult
        ``table``: power and standard error per alternative and level; ``critical_values``.

    Raises
    ------
    ValueError, TypeError
        Naming the argument: relative risks of the wrong shape, negative or not finite; a total
        of cases below 1; too few null replicates for a Monte Carlo critical value; the scan's
        own checks. All before any replicate runs.

    Examples
    --------
    Leukaemia in upstate New York: power to detect a relative risk of 3 in the first 10 tracts.

    >>> ny = hp.datasets.load_ny_leukemia()
    >>> rr = np.where(np.arange(len(ny)) < 10, 3.0, 1.0)
    >>> res = hp.scan.power(ny[["x", "y"]].to_numpy(), ny["cases_floor"], ny["population"], rr,
    ...                     n_replicates=999, n_power_replicates=100, seed=1, backend="cpu", progress=False)
    >>> sorted(res.critical_values)
    [0.001, 0.01, 0.05]
    >>> bool(res.power_at(0.05)[0] > 0.5)
    True
    """
    xy = _check_xy(coords)
    n = xy.shape[0]
    total_only = isinstance(cases, numbers.Integral) and not isinstance(cases, (bool, np.bool_))
    if not total_only and np.ndim(cases) == 0:
        raise TypeError(f"cases must be the case counts per row (n,) or the total number of cases (an int), got "
                        f"{type(cases).__name__} {cases!r}")
    if total_only:
        C = check_int(cases, "cases", minimum=1)
        if C >= 2**31 - 1:
            raise ValueError(f"cases={C} is too many (must be < 2**31 - 1)")
        # the row checks (lengths, population or expected) need case counts: the total stands on
        # the first row; only C is used, the replicates place every case
        ca = np.zeros(n, dtype=np.int64)
        ca[:1] = C
    else:
        ca = cases
    ca, po, ex, _, _ = _check_poisson_rows(n, ca, population, expected, None)
    C = int(ca.sum())
    rr = _check_relative_risks(relative_risks, n)
    ws = _check_windows(xy, max_population, max_distance, grid_cell, distance, window, ellipse_shapes, ellipse_angles,
                        penalty)
    run = check_run(min_cases, n_replicates, direction, "no-overlap", progress, threads, seed, backend, executor)
    n_power = run.n_replicates + 1 if n_power_replicates is None else check_int(n_power_replicates,
                                                                                "n_power_replicates", minimum=1)
    how = _check_critical(critical_values)
    estimation = check_in(estimation, "estimation", ("monte_carlo", "gumbel"))
    if how == "monte_carlo":
        _critical_values(np.zeros(run.n_replicates), how, ALPHAS)  # too few replicates refused before the work

    if total_only:
        ex = _null_expected(C, po, ex)
    else:
        ex = _expected_cases(ca, po, ex, None, None)
    loc_coords, gid, members = merge_rows(xy)
    L = len(members)
    l_exp = np.bincount(gid, weights=ex, minlength=L)
    l_pop = np.bincount(gid, weights=po, minlength=L) if po is not None else l_exp.copy()
    if po is not None and np.all(l_pop == np.round(l_pop)) and l_pop.sum() < 2**53:
        l_pop = l_pop.astype(np.int64)
    size = l_pop if expected is None else l_exp
    alt = np.stack([np.bincount(gid, weights=ex * r, minlength=L) for r in rr])
    for k in range(len(alt)):
        if not alt[k].sum() > 0:
            raise ValueError(f"relative_risks of alternative {k + 1} are 0 wherever cases are expected: no case "
                             f"could fall anywhere")

    root = _root_seed(seed)
    alt_seeds = [np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, run.n_replicates + a),
                                        pool_size=root.pool_size) for a in range(len(alt))]
    centres, _ = make_centres(loc_coords, ws.grid_cell)
    pens = None
    with threads_context(run.threads):
        points = ws.geo.points(loc_coords)
        cpoints = ws.geo.points(centres)
        limit = ws.max_population * size.sum()
        if ws.ellipses is None:
            windows = build_windows(cpoints, points, size, limit, ws.geo.to_working(ws.max_distance))
        else:
            windows = _elliptic_windows(cpoints, points, size, limit, ws.ellipses)
            pens = _elliptic_penalties(ws.ellipses, len(centres), ws.pen_a)
        pens = pens if (pens is not None and ws.pen_a > 0) else None
        offsets, neighbors, _, boundary = windows
        wexp = cumulative_expected(windows, l_exp)
        engine = make_engine((offsets, neighbors, wexp, boundary), klogk_table(C), C, C, run.direction,
                             backend=run.backend, model="poisson", min_cases=run.min_cases)
        null_llr = _monte_carlo(engine, l_exp, C, run.n_replicates, root, run.executor, run.progress, penalties=pens)
        alt_llr = np.stack([_monte_carlo(engine, w, C, n_power, s, run.executor, run.progress, penalties=pens)
                            for w, s in zip(alt, alt_seeds)])
    crit = _critical_values(null_llr, how, ALPHAS)
    rows = []
    for k, llr in enumerate(alt_llr):
        if estimation == "gumbel":
            mu, beta = gumbel_moments(llr)
        for a in ALPHAS:
            c = crit[a]
            if estimation == "monte_carlo":
                p = float(np.count_nonzero((llr > c) & (np.abs(llr - c) >= CMP_TOLERANCE))) / n_power
                se = math.sqrt(p * (1.0 - p) / n_power)
            else:
                p = -math.expm1(-math.exp(-(c - mu) / beta)) if beta > 0 else float(np.all(llr > c))
                se = math.nan
            rows.append({"alternative": k + 1, "alpha": a, "critical_value": c, "power": p, "standard_error": se})
    return PowerResult(pd.DataFrame(rows), crit, null_llr, alt_llr, C,
                       how if isinstance(how, str) else "given", estimation)


def _null_expected(C: int, po, ex) -> np.ndarray:
    """Expected cases per row when only the total C is given: proportional to the population
    (or the given expected counts), summing to C."""
    w = po if ex is None else ex
    total = float(w.sum())
    if not total > 0:
        raise ValueError(f"{'population' if ex is None else 'expected'} sums to 0: the cases have nowhere to fall")
    return w * (C / total)


def _root_seed(seed) -> np.random.SeedSequence:
    """The root SeedSequence of :func:`power` (an int seed as :func:`~hphawkes_py.scan.poisson` reads it)."""
    if seed is None:
        return np.random.SeedSequence()
    if isinstance(seed, np.random.SeedSequence):
        return np.random.SeedSequence(seed.entropy, spawn_key=seed.spawn_key, pool_size=seed.pool_size)
    if isinstance(seed, np.random.Generator):
        return np.random.SeedSequence(seed.integers(0, 2**63 - 1, size=4).tolist())
    return np.random.SeedSequence(int(seed))


def read_alternative_hypotheses(path, location_ids, what="alternative hypothesis") -> np.ndarray:
    """Relative risks from a SaTScan alternative hypothesis (``.ha``) file, for :func:`power`.

    Each line is ``<location id> <relative risk>`` (``all`` for every location); a blank line
    starts the next alternative; a location given twice in one alternative gets the product of
    its relative risks, and a location not given gets 1 (SaTScan's ``RelativeRiskAdjustmentHandler``).
    Lines with dates (a relative risk for part of the study period) are refused: the purely
    spatial scan has one period.

    Parameters
    ----------
    path : str or Path
        The ``.ha`` file (whitespace-separated fields).
    location_ids : array_like (n,)
        The id of each row of the data (rows sharing an id get the same relative risks); ids are
        compared as text, as SaTScan reads them.
    what : str
        The kind of file, for the messages (``"adjustments"``: the known relative risks of
        :mod:`~hphawkes_py.scan.known_risks`, same format).

    Returns
    -------
    numpy.ndarray
        (k, n) relative risks, one row per alternative.

    Raises
    ------
    ValueError
        Naming the file and line: an id that is not in ``location_ids``, a relative risk that is
        not a non-negative number, dates, or no alternative at all.

    Examples
    --------
    >>> import tempfile, os
    >>> f = os.path.join(tempfile.mkdtemp(), "alt.ha")
    >>> _ = open(f, "w").write("a 2\\nb 3\\n\\nall 1.5\\nc 2\\n")
    >>> hp.scan.read_alternative_hypotheses(f, ["a", "b", "c"]).tolist()
    [[2.0, 3.0, 1.0], [1.5, 1.5, 3.0]]
    """
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"{what} file {p} does not exist")
    ids = [str(v) for v in np.asarray(location_ids, dtype=object).tolist()]
    rows_of = {}
    for r, i in enumerate(ids):
        rows_of.setdefault(i, []).append(r)
    sets, cur = [], None
    for lineno, line in enumerate(p.read_text().splitlines(), start=1):
        fields = line.split()
        if not fields:
            cur = None  # a blank line ends the current alternative
            continue
        if len(fields) != 2:
            what = "has dates (a relative risk for part of the study period), which the purely spatial scan " \
                   "cannot apply" if len(fields) >= 3 else "needs a location id and a relative risk"
            raise ValueError(f"{p}, line {lineno}: {line.strip()!r} {what}")
        key, value = fields
        try:
            v = float(value)
        except ValueError:
            raise ValueError(f"{p}, line {lineno}: relative risk {value!r} is not a number") from None
        if not (math.isfinite(v) and v >= 0):
            raise ValueError(f"{p}, line {lineno}: relative risk {value!r} must be finite and non-negative")
        if key.lower() == "all":
            rows = list(range(len(ids)))
        elif key in rows_of:
            rows = rows_of[key]
        else:
            raise ValueError(f"{p}, line {lineno}: location id {key!r} is not among location_ids")
        if cur is None:
            cur = np.ones(len(ids))
            sets.append(cur)
        cur[rows] *= v
    if not sets:
        raise ValueError(f"{p}: no relative risks found (no {what})")
    return np.stack(sets)


#: settings that leave a SaTScan option off
_OFF = {"", "n", "0", "no", "false"}


def prm_power(values: dict, model: str, base: Path, bad) -> dict | None:
    """The power evaluation a SaTScan parameter file asks for, or None when
    ``PerformPowerEvaluation`` is off: ``{"method", "total_cases", "alternatives_file", "kwargs"}``
    (``kwargs``: ``critical_values``, ``estimation``, ``n_power_replicates`` of :func:`power`).

    ``values``: the file's settings by key; ``model``: the analysis ``prm_arguments`` found;
    ``base``: the parameter file's folder (file names are relative to it); ``bad(key, why)``: the
    ValueError naming the setting. SaTScan's own checks (``ValidatePowerEvaluationsParameters``)
    are applied: discrete Poisson only, at least 999 replicates, power replicates a multiple of
    100, at least 100 and at most ``MonteCarloReps + 1``, no iterative scan.
    """
    if (values.get("PerformPowerEvaluation", "n") or "n").lower() in _OFF:
        return None
    if model != "poisson":
        raise bad("PerformPowerEvaluation", "is available for the purely spatial discrete Poisson analysis only "
                                            "(SaTScan offers it for the Poisson model only)")

    def whole(key, default):
        try:
            return int(values.get(key, default))
        except ValueError:
            raise bad(key, "is not a whole number") from None

    method = values.get("PowerEvaluationsMethod", "0")
    if method not in ("0", "1", "2"):
        raise bad("PowerEvaluationsMethod", "must be 0 (analysis and power evaluation), 1 (power evaluation with the "
                                            "case file) or 2 (power evaluation with PowerEvaluationTotalCases)")
    total = None
    if method == "2":
        total = whole("PowerEvaluationTotalCases", "600")
        if total < 1:
            raise bad("PowerEvaluationTotalCases", "must be >= 1")
    kind = values.get("CriticalValueType", "0")
    if kind == "0":
        critical = "monte_carlo"
    elif kind == "1":
        critical = "gumbel"
    elif kind == "2":
        vals = []
        for key in ("CriticalValue05", "CriticalValue01", "CriticalValue001"):
            try:
                vals.append(float(values.get(key, "")))
            except ValueError:
                raise bad(key, "is not a number (CriticalValueType=2 needs the three critical values)") from None
            if not (math.isfinite(vals[-1]) and vals[-1] > 0):
                raise bad(key, "must be a positive LLR")
        critical = tuple(vals)
    else:
        raise bad("CriticalValueType", "must be 0 (Monte Carlo), 1 (Gumbel) or 2 (given values)")
    estimation = {"0": "monte_carlo", "1": "gumbel"}.get(values.get("PowerEstimationType", "0"))
    if estimation is None:
        raise bad("PowerEstimationType", "must be 0 (Monte Carlo) or 1 (Gumbel)")
    if values.get("PowerEvaluationsSimulationMethod", "0") != "0":
        raise bad("PowerEvaluationsSimulationMethod", "must be 0 (alternative hypothesis file); the power step's data "
                                                      "are not read from a file here")
    if (values.get("ReportPowerEvaluationSimulationData", "n") or "n").lower() not in _OFF:
        raise bad("ReportPowerEvaluationSimulationData", "asks for the power step's simulated data, which hp.scan does "
                                                         "not write; set it to n")
    if (values.get("IterativeScan", "n") or "n").lower() not in _OFF:
        raise bad("PerformPowerEvaluation", "cannot be combined with IterativeScan=y (SaTScan refuses it too)")
    if values.get("PValueReportType", "0") == "2":
        raise bad("PValueReportType", "(sequential Monte Carlo) cannot be combined with the power evaluation")
    reps = whole("MonteCarloReps", "999")
    if reps < 999:
        raise bad("MonteCarloReps", "must be at least 999 for the power evaluation (SaTScan's minimum)")
    n_power = whole("NumberPowerReplications", str(reps + 1))
    if n_power < 100 or n_power % 100 or n_power > reps + 1:
        raise bad("NumberPowerReplications", f"must be a multiple of 100, at least 100 and at most MonteCarloReps + 1 "
                                             f"= {reps + 1} (SaTScan's rules)")
    name = values.get("AlternativeHypothesisFilename", "")
    if not name:
        raise bad("AlternativeHypothesisFilename", "is required for the power evaluation")
    f = Path(name)
    f = f if f.is_absolute() else Path(base) / f
    if not f.is_file():
        raise bad("AlternativeHypothesisFilename", f"names a file that does not exist ({f})")
    return {"method": int(method), "total_cases": total, "alternatives_file": f,
            "kwargs": {"critical_values": critical, "estimation": estimation, "n_power_replicates": n_power}}


def run_prm_power(settings: dict, coords, cases, population, location_ids, **kwargs) -> PowerResult:
    """The power evaluation of :func:`prm_power`'s ``settings`` on the data a parameter file
    names (``kwargs``: the scan's settings and run options, as :func:`power` takes them). With
    ``PowerEvaluationsMethod=0`` the analysis runs too, with the same seed (so its null replicates
    are those behind the critical values), and is returned as ``analysis``."""
    rr = read_alternative_hypotheses(settings["alternatives_file"], location_ids)
    if kwargs.get("seed") is None:
        kwargs["seed"] = int(np.random.SeedSequence().entropy)  # one root for the analysis and the power
    total = settings["total_cases"]
    res = power(coords, cases if total is None else total, population, rr, **settings["kwargs"], **kwargs)
    if settings["method"] != 0:
        return res
    scan = poisson(coords, cases, population, location_ids=location_ids, **kwargs)
    return dataclasses.replace(res, analysis=scan)
