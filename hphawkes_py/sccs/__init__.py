"""Bayesian self-controlled case series by cyclic coordinate descent (Suchard et al. 2013).

Conditional Poisson regression over strata (persons) with exposure-era rows and offsets
log(time), Normal or Laplace priors, fitted by cyclic coordinate descent on a sparse,
column-compressed design; profile-likelihood and Wald intervals, per-exposure results
tables, cross-validation of the prior variance, stratum bootstrap and a case-series
simulator. See :mod:`hphawkes_py.sccs.model` for the exact likelihood, priors and
convergence rules.

>>> import hphawkes_py as hp
>>> data, truth = hp.sccs.simulate(n_cases=2000, n_drugs=20, seed=1)
>>> fit = hp.sccs.fit(data, prior="laplace", variance=1.0)
>>> fit.confint([1, 2], method="wald")  # doctest: +SKIP
"""
from .calibration import EmpiricalNull, SystematicErrorModel, fit_negative_controls
from .data import SCCSData
from .diagnostics import (Diagnostic, end_of_observation_eras, event_exposure_independence,
                          event_observation_independence, mdrr, pre_exposure_gain, rare_outcome, time_stability)
from .design import RiskWindow
from .event_dependent import CENSORING_MODELS, CensoringFit, fit_censoring_models, interval_weights
from .dependent_exposure import EventDependentExposureFit, event_dependent_exposure
from .model import fit
from .priors import log_prior
from .resampling import bootstrap, cross_validate
from .results import BootstrapResult, CVResult, MLEWarning, SCCSFit
from .simulation import simulate
from .splines import SplineTerm
from .diagnostics_report import StudyDiagnostics, study_diagnostics

__all__ = ["SCCSData", "RiskWindow", "SCCSFit", "CVResult", "BootstrapResult", "MLEWarning", "fit", "cross_validate", "bootstrap",
           "simulate", "log_prior", "SplineTerm", "EmpiricalNull", "SystematicErrorModel", "fit_negative_controls",
           "Diagnostic", "mdrr", "time_stability", "pre_exposure_gain", "event_exposure_independence",
           "event_observation_independence", "end_of_observation_eras", "rare_outcome", "CensoringFit",
           "fit_censoring_models", "interval_weights", "CENSORING_MODELS",
           "EventDependentExposureFit", "event_dependent_exposure", "StudyDiagnostics", "study_diagnostics"]
