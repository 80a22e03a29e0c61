#' hphawkes: massively parallel Hawkes processes, adaptive KDE, Bayesian SCCS, scan statistics
#' and DP mixtures
#'
#' A thin R interface to the Python package \code{hphawkes_py} through \pkg{reticulate}. Every
#' function converts its arguments, calls the Python function of the same name and returns R
#' objects (data frames, matrices, \code{coda} \code{mcmc.list}s) with \code{print},
#' \code{summary}, \code{plot} and \pkg{ggplot2} \code{autoplot} methods.
#'
#' @section Methods:
#' \describe{
#'   \item{Spatiotemporal Hawkes process (Holbrook et al. 2021)}{\code{\link{hawkes_params}},
#'     \code{\link{hawkes_loglik}}, \code{\link{hawkes_probabilities}}, \code{\link{hawkes_mcmc}},
#'     \code{\link{hawkes_self_excitation}}, \code{\link{hawkes_simulate}},
#'     \code{\link{hawkes_residuals}}, \code{\link{hawkes_forecast}},
#'     \code{\link{hawkes_forecast_score}}.}
#'   \item{Adaptive kernel density estimation (Zhang, Zhu and Huang 2017)}{\code{\link{kde_window}},
#'     \code{\link{kde_fit}}, \code{\link{kde_surface}}, \code{\link{kde_relative_risk}},
#'     \code{\link{kde_spacetime}}.}
#'   \item{Bayesian self-controlled case series (Suchard et al. 2013)}{\code{\link{sccs_data}},
#'     \code{\link{sccs_fit}}, \code{\link{sccs_cv}}, \code{\link{sccs_bootstrap}},
#'     \code{\link{sccs_study}}, \code{\link{sccs_data_from_cdm}} (an OMOP CDM database); the
#'     study diagnostics \code{\link{sccs_diagnostics}}; empirical calibration with negative
#'     controls \code{\link{sccs_fit_negative_controls}}, \code{\link{sccs_fit_null}},
#'     \code{\link{calibrate_p}}, \code{\link{calibrate_ci}}.}
#'   \item{Spatial and space-time scan statistics (Kulldorff)}{\code{\link{scan_bernoulli}},
#'     \code{\link{scan_poisson}}, \code{\link{scan_space_time}}, \code{\link{scan_declustered}},
#'     \code{\link{scan_run_prm}}.}
#'   \item{Truncated Dirichlet-process Gaussian mixtures (Suchard et al. 2010)}{\code{\link{tdp_mixture}};
#'     across samples, the hierarchical DP mixture \code{\link{hdp_mixture}}.}
#' }
#'
#' @section Python:
#' The Python interpreter is \code{RETICULATE_PYTHON} when set, else \code{HPHAWKES_PYTHON},
#' else the virtual environment that \code{\link{install_hphawkes}} creates. Nothing touches
#' Python before the first call, so \code{library(hphawkes)} works without it;
#' \code{\link{hphawkes_available}} says whether the Python core can be used, and
#' \code{\link{hphawkes_backends}} which compute backends (CPU, GPU) can run.
#'
#' @importFrom ggplot2 autoplot .data
#' @importFrom stats predict coef logLik confint vcov
"_PACKAGE"
