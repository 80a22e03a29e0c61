"""All the study diagnostics of a fit in one report, for the results table and the plots.

OHDSI SelfControlledCaseSeries decides whether an estimate may be used ("unblinded") from its
diagnostics: an estimate passes when every diagnostic that applies to it passes, with the
thresholds of ``createSccsDiagnosticThresholds`` (see :mod:`.diagnostics`). This module runs
the diagnostics that a study's data allow, keeps which exposure each belongs to (MDRR and
pre-exposure gain are per exposure; time stability, the end-of-observation probe and the rare
outcome check are per study and apply to every exposure), and lays them out as a long table,
as columns of :meth:`SCCSFit.results_table`, and as a pass/fail summary.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .diagnostics import (Diagnostic, event_exposure_independence, event_observation_independence, mdrr,
                          pre_exposure_gain, rare_outcome, time_stability)
from .results import SCCSFit

__all__ = ["StudyDiagnostics", "study_diagnostics"]

#: The value column of each diagnostic in the wide layout (the name of what ``value`` holds).
VALUE_COLUMNS = {"mdrr": "mdrr", "time_stability": "time_stability_p", "pre_exposure_gain": "pre_exposure_gain_p",
                 "event_exposure_independence": "event_exposure_irr",
                 "event_observation_independence": "event_observation_irr", "rare_outcome": "outcome_prevalence"}


@dataclass(frozen=True)
class StudyDiagnostics:
    """Diagnostics of a study, each for one exposure or for the whole study.

    Parameters
    ----------
    items : tuple of (covariate id or None, Diagnostic)
        ``None`` marks a study-level diagnostic, which applies to every exposure.
    exposures : tuple
        The exposures (covariate ids) the report is about.

    Examples
    --------
    >>> d = hp.sccs.StudyDiagnostics(((None, hp.sccs.rare_outcome(n_persons=100, n_cases=5,
    ...                                                           first_outcome_only=True)),), exposures=(1,))
    >>> d.passed(1), d.table()["pass"].tolist()
    (True, [True])
    """

    items: tuple
    exposures: tuple = ()

    def __post_init__(self):
        for item in self.items:
            if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], Diagnostic)):
                raise TypeError(f"items must be (covariate id or None, Diagnostic) pairs, got {item!r}")

    def for_exposure(self, covariate) -> list:
        """The diagnostics that apply to ``covariate``: its own and the study-level ones."""
        return [d for c, d in self.items if c is None or c == covariate]

    def passed(self, covariate=None) -> bool:
        """Whether every diagnostic that applies to ``covariate`` passes (SelfControlledCaseSeries'
        ``unblind``); without a covariate, whether every diagnostic of the study passes."""
        ds = [d for _, d in self.items] if covariate is None else self.for_exposure(covariate)
        return bool(all(d.passed for d in ds))

    def table(self) -> pd.DataFrame:
        """Long format: one row per (exposure, diagnostic) with ``covariate_id`` (None for a
        study-level one), ``diagnostic``, ``value``, ``threshold``, ``rule`` and ``pass``."""
        rows = [{"covariate_id": c, "diagnostic": d.name, "value": d.value, "threshold": d.threshold, "rule": d.rule,
                 "pass": d.passed} for c, d in self.items]
        out = pd.DataFrame(rows, columns=["covariate_id", "diagnostic", "value", "threshold", "rule", "pass"])
        # ids keep their type next to the study-level None (not floats with NaN)
        out["covariate_id"] = pd.Series([c for c, _ in self.items], dtype=object)
        return out

    def wide(self, covariates=None) -> pd.DataFrame:
        """One row per exposure: each applicable diagnostic's value (``mdrr``, ``time_stability_p``,
        ``pre_exposure_gain_p``, ``event_exposure_irr``, ``event_observation_irr``,
        ``outcome_prevalence``) and its ``<name>_pass``, then ``diagnostics_pass`` (all that apply
        pass; NA for a covariate that is not one of ``exposures``)."""
        covariates = list(self.exposures) if covariates is None else list(covariates)
        names = list(dict.fromkeys(d.name for _, d in self.items))
        out = pd.DataFrame(index=pd.Index(covariates, dtype=object))
        for name in names:
            value, ok = [], []
            for c in covariates:
                hit = [d for d in self.for_exposure(c) if d.name == name]
                value.append(hit[0].value if hit else np.nan)
                ok.append(hit[0].passed if hit else pd.NA)
            out[VALUE_COLUMNS.get(name, name)] = value
            out[f"{name}_pass"] = pd.array(ok, dtype="boolean")
        # rows the report is not about (a pre-exposure window, the probe) get no verdict
        out["diagnostics_pass"] = pd.array([self.passed(c) if c in self.exposures else pd.NA for c in covariates],
                                           dtype="boolean")
        return out

    def __repr__(self) -> str:
        failed = [f"{d.name}" + ("" if c is None else f"[{c}]") for c, d in self.items if not d.passed]
        verdict = "all pass" if not failed else "FAIL: " + ", ".join(failed)
        return f"StudyDiagnostics({len(self.items)} diagnostics, {verdict})"


def study_diagnostics(fit, observation_periods=None, eras=None, outcomes=None, *, exposures=None,
                      pre_exposure_windows=None, end_of_observation=None, n_persons=None,
                      day_origin="1970-01-01") -> StudyDiagnostics:
    """Run the OHDSI SelfControlledCaseSeries diagnostics that the study's data allow.

    Parameters
    ----------
    fit : SCCSFit
        The fitted study (from :meth:`SCCSData.from_eras` data for the rare-outcome check).
    observation_periods, eras, outcomes : DataFrame, optional
        The person-level tables the design was built from (as for :meth:`SCCSData.from_eras`).
        With ``observation_periods`` and ``outcomes``: the time-stability test; with ``eras``
        too: the pre-exposure gain of every exposure that has eras.
    exposures : list, optional
        The exposures of interest (covariate ids of the fit); default every non-spline
        covariate that is not a pre-exposure window or the end-of-observation probe.
    pre_exposure_windows : dict, optional
        ``{exposure id: covariate id of its pre-exposure window}``: the event-exposure
        independence check for that exposure.
    end_of_observation : hashable, optional
        Covariate id of the end-of-observation probe (:func:`end_of_observation_eras`): the
        event-observation independence check, for every exposure.
    n_persons : int, optional
        Size of the population the cases come from, for the rare-outcome check when the design
        does not know it (a design of cases only).
    day_origin : str or numpy.datetime64
        Calendar date of day 0 (time stability).

    Returns
    -------
    StudyDiagnostics
        Attach it with :meth:`SCCSFit.with_diagnostics` to get the diagnostics in
        ``results_table()``, ``summary()`` and the printed fit.

    Raises
    ------
    TypeError
        ``fit`` is not a fitted SCCSFit, ``pre_exposure_windows`` is not a dict.
    ValueError
        Exposures, pre-exposure windows or the probe that are not covariates of the fit;
        ``eras`` without ``observation_periods`` and ``outcomes``.

    Examples
    --------
    >>> obs, eras, outcomes, _ = hp.sccs.simulate(n_cases=400, n_drugs=2, prevalence=0.5, output="eras", seed=1)
    >>> data = hp.sccs.SCCSData.from_eras(obs, eras, outcomes, risk_start=0, risk_end=30)
    >>> fit = hp.sccs.fit(data, prior="none")
    >>> report = hp.sccs.study_diagnostics(fit, obs, eras, outcomes)
    >>> report.table()["diagnostic"].tolist()
    ['mdrr', 'pre_exposure_gain', 'mdrr', 'pre_exposure_gain', 'time_stability']
    >>> fit.with_diagnostics(report).results_table().columns[-3:].tolist()
    ['time_stability_p', 'time_stability_pass', 'diagnostics_pass']
    """
    if not isinstance(fit, SCCSFit) or fit.context is None:
        raise TypeError(f"fit must be an SCCSFit made by hp.sccs.fit, got {type(fit).__name__}")
    data = fit.context.data
    known = list(fit.coefficients.index)
    pre = {} if pre_exposure_windows is None else pre_exposure_windows
    if not isinstance(pre, dict):
        raise TypeError(f"pre_exposure_windows must be a dict {{exposure id: pre-window covariate id}}, got {pre!r}")
    probes = set(pre.values()) | ({end_of_observation} if end_of_observation is not None else set())
    for c in list(pre) + list(pre.values()) + ([end_of_observation] if end_of_observation is not None else []):
        if c not in known:
            raise ValueError(f"{c!r} is not a covariate of the fit (covariates: {known})")
    if exposures is None:
        spline = set(data.spline_ids)
        exposures = [c for c in known if c not in spline and c not in probes]
    else:
        exposures = [exposures] if np.isscalar(exposures) else list(exposures)
        bad = [c for c in exposures if c not in known]
        if bad or not exposures:
            raise ValueError(f"exposures must be covariates of the fit ({known}), got {exposures!r}")
    if eras is not None and (observation_periods is None or outcomes is None):
        raise ValueError("eras needs observation_periods and outcomes too (the pre-exposure gain uses all three)")
    era_ids = set() if eras is None else set(pd.unique(eras["covariate_id"] if "covariate_id" in eras
                                                            else eras.rename(columns=str.lower)["covariate_id"]))
    items = []
    for c in exposures:
        items.append((c, mdrr(data, c)))
        if c in era_ids:
            items.append((c, pre_exposure_gain(observation_periods, eras, outcomes, c)))
        if c in pre:
            items.append((c, event_exposure_independence(fit, pre[c])))
    if observation_periods is not None and outcomes is not None:
        items.append((None, time_stability(observation_periods, outcomes, day_origin=day_origin)))
    if end_of_observation is not None:
        items.append((None, event_observation_independence(fit, end_of_observation)))
    if n_persons is not None:
        items.append((None, rare_outcome(n_persons=n_persons, n_cases=data.n_strata,
                                         first_outcome_only=bool(np.all(data.n_events == 1))
                                         or "later_outcomes" in data.dropped)))
    elif data.dropped.get("persons_without_outcomes", 0) > 0:
        items.append((None, rare_outcome(data)))
    return StudyDiagnostics(tuple(items), tuple(exposures))
