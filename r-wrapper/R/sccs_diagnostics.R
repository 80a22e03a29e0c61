# Study diagnostics of OHDSI SelfControlledCaseSeries: wrappers over hphawkes_py.sccs.mdrr,
# time_stability, pre_exposure_gain, event_exposure_independence, event_observation_independence,
# rare_outcome and end_of_observation_eras. Each returns an sccs_diagnostic; sccs_diagnostics()
# binds several into a table.

.diag_r <- function(py) {
  at <- .hp_r(.hp_call(rf$attributes(py, list("name", "value", "threshold", "passed", "rule", "details"))))
  at$threshold <- unlist(at$threshold)
  pm <- at$details$per_month
  if (is.data.frame(pm) && is.character(pm$month_start))  # datetime64 arrives as ISO text
    at$details$per_month$month_start <- as.Date(substr(pm$month_start, 1L, 10L))
  at$python <- py
  structure(at, class = "sccs_diagnostic")
}

#' @export
print.sccs_diagnostic <- function(x, ...) {
  cat(sprintf("SCCS diagnostic %s: value %.4g, %s -> %s\n", x$name, x$value, x$rule,
              if (isTRUE(x$passed)) "PASS" else "FAIL"))
  invisible(x)
}

#' @export
as.data.frame.sccs_diagnostic <- function(x, row.names = NULL, optional = FALSE, ...) {
  data.frame(diagnostic = x$name, value = x$value,
             threshold = paste(format(x$threshold, digits = 6), collapse = ", "), pass = x$passed,
             rule = x$rule, stringsAsFactors = FALSE)
}

# The design of an sccs_data, sccs_study or hphawkes_sccs_fit (an SCCSData or an SCCSFit for Python).
.diag_data <- function(data) {
  if (inherits(data, "sccs_study")) return(data$fit$python)
  if (inherits(data, "hphawkes_sccs_fit")) return(data$python)
  .py_sccs_data(data)
}

.diag_fit <- function(fit) {
  if (inherits(fit, "sccs_study")) return(fit$fit$python)
  if (inherits(fit, "hphawkes_sccs_fit")) return(fit$python)
  if (inherits(fit, "python.builtin.object")) return(fit)
  .hp_stop("fit must be an hphawkes_sccs_fit (sccs_fit()) or an sccs_study, got ", .hp_kind(fit))
}

.diag_bounds <- function(b) {
  if (!is.numeric(b) || length(b) != 2L || anyNA(b))
    .hp_stop("null_bounds must be two rate ratios c(lower, upper), got ",
             paste(format(b), collapse = ", "), " (", .hp_kind(b), ")")
  as.list(as.double(b))
}

# The person-level tables as pandas DataFrames, with NA ids and days refused (R's row named).
.diag_tables <- function(observation_periods = NULL, eras = NULL, outcomes = NULL) {
  out <- list()
  if (!is.null(observation_periods)) {
    .sccs_ids_present(observation_periods, "observation_periods", c("person_id", "start", "end"))
    out$observation_periods <- .pd_frame(observation_periods, "observation_periods")
  }
  if (!is.null(eras)) {
    .sccs_ids_present(eras, "eras", c("person_id", "start", "end", "covariate_id"))
    out$eras <- .pd_frame(eras, "eras")
  }
  if (!is.null(outcomes)) {
    .sccs_ids_present(outcomes, "outcomes", c("person_id", "day"))
    out$outcomes <- .pd_frame(outcomes, "outcomes")
  }
  out
}

#' SCCS study diagnostics (OHDSI SelfControlledCaseSeries)
#'
#' The diagnostics that decide whether an SCCS estimate can be trusted, each computed as
#' SelfControlledCaseSeries computes it, with its default decision thresholds
#' (\code{createSccsDiagnosticThresholds}):
#' \describe{
#'   \item{\code{sccs_mdrr()}}{minimum detectable relative risk of an exposure
#'     (\code{computeMdrr}, Musonda et al. 2006); passes below 10.}
#'   \item{\code{sccs_time_stability()}}{is the outcome rate stable over calendar time
#'     (\code{checkTimeStabilityAssumption}); passes when the test of an observed/expected
#'     ratio above 1.10 has p > 0.05. \code{details$per_month} is the monthly table.}
#'   \item{\code{sccs_pre_exposure_gain()}}{is the outcome rate higher in the 30 days before the
#'     first exposure than in the 30 days after (\code{computePreExposureGainP}); passes when
#'     p >= 0.05.}
#'   \item{\code{sccs_event_exposure_independence()}}{the interval of a pre-exposure window's
#'     rate ratio meets (0.8, 1.25) (\code{checkEventExposureIndependenceAssumption}).}
#'   \item{\code{sccs_event_observation_independence()}}{the interval of the rate ratio of a probe
#'     window at the end of observation (\code{sccs_end_of_observation_eras()}) meets (0.5, 2)
#'     (\code{checkEventObservationIndependenceAssumption}).}
#'   \item{\code{sccs_rare_outcome()}}{prevalence of the outcome at most 0.1 when only first
#'     outcomes are used (\code{checkRareOutcomeAssumption}).}
#' }
#' \code{sccs_diagnostics()} binds diagnostics into one table.
#'
#' @param data An \code{sccs_data}, \code{sccs_study} or \code{hphawkes_sccs_fit} (the design).
#'   For \code{sccs_rare_outcome()}: an \code{sccs_data} built from person-level tables of the
#'   whole population (\code{sccs_data_from_cdm()}), or NULL with \code{n_persons} and
#'   \code{n_cases}.
#' @param covariate One covariate id (whole number or character label): the exposure
#'   (\code{sccs_mdrr}, \code{sccs_pre_exposure_gain}: its \code{eras$covariate_id}), the
#'   pre-exposure window, or the end-of-observation probe (default 99).
#' @param alpha Level of the test (in (0, 1)).
#' @param power Power (1 - type II error) of \code{sccs_mdrr}.
#' @param two_sided Two-sided test (\code{alpha} split over both tails).
#' @param method \code{sccs_mdrr}: \code{"SRL1"} (signed-root likelihood, SelfControlledCaseSeries'
#'   default) or \code{"binomial"}; the interval checks: \code{"profile"} or \code{"wald"}.
#' @param threshold The MDRR below which the study passes (> 1).
#' @param observation_periods Data frame \code{person_id, start, end} (integer days, one
#'   period per person).
#' @param eras Data frame \code{person_id, start, end, covariate_id}.
#' @param outcomes Data frame \code{person_id, day}.
#' @param max_ratio Largest ratio of observed to expected outcomes still called stable (>= 1).
#' @param day_origin Calendar date of day 0.
#' @param days Days in the windows before and after the first exposure.
#' @param fit An \code{hphawkes_sccs_fit} or \code{sccs_study} of a design with the window as a
#'   covariate.
#' @param null_bounds Rate ratios \code{c(lower, upper)} around 1.
#' @param level Level of the interval.
#' @param n_persons,n_cases Population size and persons with the outcome (instead of
#'   \code{data}).
#' @param first_outcome_only Whether the analysis keeps first outcomes only (default: from
#'   \code{data}; needed with the counts).
#' @param max_prevalence Largest prevalence passed.
#' @param ... \code{sccs_diagnostics()}: \code{sccs_diagnostic} objects (or lists of them).
#' @return An object of class \code{sccs_diagnostic}: \code{name}, \code{value} (the MDRR, a
#'   p-value, a rate ratio or a prevalence), \code{threshold}, \code{passed}, \code{rule},
#'   \code{details} (a list: the counts, times and intervals behind the value);
#'   \code{as.data.frame()} gives one row. \code{sccs_diagnostics()}: a data frame with columns
#'   \code{diagnostic}, \code{value}, \code{threshold}, \code{pass}, \code{rule}, one row per
#'   diagnostic.
#' @references Musonda P, Farrington CP, Whitaker HJ (2006). Sample sizes for self-controlled
#'   case series studies. Statistics in Medicine 25(15):2618-2631.
#' @seealso \code{\link{sccs_end_of_observation_eras}}, \code{\link{sccs_study}}.
#' @examplesIf hphawkes_available()
#' sim <- sccs_simulate_eras(400, 1, prevalence = 0.8, seed = 4)
#' obs <- sim$observation_periods; eras <- sim$eras; outcomes <- sim$outcomes
#' pre <- sccs_risk_window("pre", -30, -1, "start", "start")
#' on <- sccs_risk_window("on", 0, 0, "start", "end")
#' st <- sccs_study(obs, eras, outcomes, windows = list(`1` = list(pre, on)))
#' d1 <- sccs_mdrr(st, "on")
#' d1
#' d2 <- sccs_time_stability(obs, outcomes)
#' d3 <- sccs_pre_exposure_gain(obs, eras, outcomes, 1)
#' d4 <- sccs_event_exposure_independence(st, "pre", method = "wald")
#' d5 <- sccs_rare_outcome(n_persons = 10000, n_cases = 400, first_outcome_only = FALSE)
#' sccs_diagnostics(d1, d2, d3, d4, d5)
#' head(d2$details$per_month)
#' @name sccs_diagnostics
NULL

#' @rdname sccs_diagnostics
#' @export
sccs_mdrr <- function(data, covariate, alpha = 0.05, power = 0.8, two_sided = TRUE, method = "SRL1",
                      threshold = 10) {
  .hp_check_args()
  .diag_r(.hp_call(.hp_mod("sccs")$mdrr(.diag_data(data), .calib_id(covariate, "covariate"),
    alpha = .as_num(alpha, "alpha", FALSE), power = .as_num(power, "power", FALSE),
    two_sided = .as_flag(two_sided, "two_sided"), method = method,
    threshold = .as_num(threshold, "threshold", FALSE))))
}

#' @rdname sccs_diagnostics
#' @export
sccs_time_stability <- function(observation_periods, outcomes, max_ratio = 1.10, alpha = 0.05,
                                day_origin = "1970-01-01") {
  .hp_check_args()
  t <- .diag_tables(observation_periods = observation_periods, outcomes = outcomes)
  .diag_r(.hp_call(.hp_mod("sccs")$time_stability(t$observation_periods, t$outcomes,
    max_ratio = .as_num(max_ratio, "max_ratio", FALSE), alpha = .as_num(alpha, "alpha", FALSE),
    day_origin = .diag_date(day_origin, "day_origin"))))
}

#' @rdname sccs_diagnostics
#' @export
sccs_pre_exposure_gain <- function(observation_periods, eras, outcomes, covariate, alpha = 0.05, days = 30L) {
  .hp_check_args()
  t <- .diag_tables(observation_periods, eras, outcomes)
  .diag_r(.hp_call(.hp_mod("sccs")$pre_exposure_gain(t$observation_periods, t$eras, t$outcomes,
    .calib_id(covariate, "covariate"), alpha = .as_num(alpha, "alpha", FALSE),
    days = .as_int(days, "days", FALSE))))
}

#' @rdname sccs_diagnostics
#' @export
sccs_event_exposure_independence <- function(fit, covariate, null_bounds = c(0.8, 1.25), level = 0.95,
                                             method = "profile") {
  .hp_check_args()
  .diag_r(.hp_call(.hp_mod("sccs")$event_exposure_independence(.diag_fit(fit),
    .calib_id(covariate, "covariate"), null_bounds = .diag_bounds(null_bounds),
    level = .as_num(level, "level", FALSE), method = method)))
}

#' @rdname sccs_diagnostics
#' @export
sccs_event_observation_independence <- function(fit, covariate = 99L, null_bounds = c(0.5, 2), level = 0.95,
                                                method = "profile") {
  .hp_check_args()
  .diag_r(.hp_call(.hp_mod("sccs")$event_observation_independence(.diag_fit(fit),
    .calib_id(covariate, "covariate"), null_bounds = .diag_bounds(null_bounds),
    level = .as_num(level, "level", FALSE), method = method)))
}

#' @rdname sccs_diagnostics
#' @export
sccs_rare_outcome <- function(data = NULL, n_persons = NULL, n_cases = NULL, first_outcome_only = NULL,
                              max_prevalence = 0.1) {
  .hp_check_args()
  if (!is.null(data)) {
    if (inherits(data, "sccs_study")) data <- data$data
    data <- .py_sccs_data(data)
  }
  .diag_r(.hp_call(.hp_mod("sccs")$rare_outcome(data, n_persons = .as_int(n_persons, "n_persons"),
    n_cases = .as_int(n_cases, "n_cases"),
    first_outcome_only = if (is.null(first_outcome_only)) NULL else .as_flag(first_outcome_only, "first_outcome_only"),
    max_prevalence = .as_num(max_prevalence, "max_prevalence", FALSE))))
}

#' @rdname sccs_diagnostics
#' @export
sccs_diagnostics <- function(...) {
  ds <- list(...)
  if (!is.null(names(ds)) && any(nzchar(names(ds))))
    .hp_stop("sccs_diagnostics() takes sccs_diagnostic objects, not named arguments; got ",
             paste0("'", names(ds)[nzchar(names(ds))], "'", collapse = ", "))
  ds <- unlist(lapply(ds, function(d) if (inherits(d, "sccs_diagnostic")) list(d) else d), recursive = FALSE)
  if (!length(ds)) .hp_stop("sccs_diagnostics() needs at least one sccs_diagnostic")
  ok <- vapply(ds, inherits, logical(1), what = "sccs_diagnostic")
  if (!all(ok)) .hp_stop("sccs_diagnostics() takes sccs_diagnostic objects (sccs_mdrr(), ...); argument ",
                         which(!ok)[1L], " is ", .hp_kind(ds[[which(!ok)[1L]]]))
  out <- do.call(rbind, lapply(ds, as.data.frame.sccs_diagnostic))
  rownames(out) <- NULL
  out
}

#' Probe eras over the end of each observation period
#'
#' One era per person over the last \code{length} days of the observation period
#' (SelfControlledCaseSeries' \code{endOfObservationEraLength}), to add to the exposure eras
#' for \code{\link{sccs_event_observation_independence}}
#' (\code{hphawkes_py.sccs.end_of_observation_eras}).
#'
#' @param observation_periods Data frame \code{person_id, start, end} (inclusive days).
#' @param length Days of the probe window (>= 1; shorter where the period is shorter).
#' @param covariate_id Covariate id of the probe (SelfControlledCaseSeries uses 99), of the type
#'   of the exposures' ids.
#' @return A data frame \code{person_id, start, end, covariate_id}, one row per person.
#' @examplesIf hphawkes_available()
#' sim <- sccs_simulate_eras(400, 1, seed = 5)
#' probe <- sccs_end_of_observation_eras(sim$observation_periods)
#' head(probe, 3)
#' st <- sccs_study(sim$observation_periods, rbind(sim$eras, probe), sim$outcomes)
#' sccs_event_observation_independence(st, 99, method = "wald")
#' @export
sccs_end_of_observation_eras <- function(observation_periods, length = 30L, covariate_id = 99L) {
  .hp_check_args()
  t <- .diag_tables(observation_periods = observation_periods)
  .hp_r(.hp_call(.hp_mod("sccs")$end_of_observation_eras(t$observation_periods,
    length = .as_int(length, "length", FALSE), covariate_id = .calib_id(covariate_id, "covariate_id"))))
}

# A calendar date for Python: a Date (or POSIXct) as its ISO string; a string as given.
.diag_date <- function(x, name) {
  if (is.null(x)) return(NULL)
  if (inherits(x, c("Date", "POSIXt"))) {
    if (length(x) != 1L || is.na(x)) .hp_stop(name, " must be one date, got ", length(x), " value(s)")
    return(format(as.Date(x), "%Y-%m-%d"))
  }
  if (!is.character(x) || length(x) != 1L || is.na(x))
    .hp_stop(name, " must be a date (\"2005-01-01\" or a Date), got ", paste(format(x), collapse = ", "),
             " (", .hp_kind(x), ")")
  x
}
