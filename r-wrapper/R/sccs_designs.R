# SCCS designs beyond the standard one: the event-dependent exposure pseudo-likelihood
# (the SCCS package's eventdepenexp), and the converters of sccs_study()'s design options.

# control_window of sccs_study(): c(start, end) offsets, an sccs_risk_window(), or a named list
# of those per covariate id (names are numbers when the eras' covariate ids are numbers).
.sccs_control_window <- function(cw, ids = NULL) {
  if (is.null(cw)) return(NULL)
  one <- function(w, name) {
    if (inherits(w, "python.builtin.object")) return(w)
    if (!is.numeric(w) || length(w) != 2L || anyNA(w) || any(w != round(w)))
      .hp_stop(name, " must be c(start_offset, end_offset) in whole days or an sccs_risk_window(), got ",
               paste(utils::head(format(w), 3), collapse = ", "))
    reticulate::tuple(as.integer(w[1]), as.integer(w[2]))
  }
  if (is.list(cw) && !inherits(cw, "python.builtin.object")) {
    if (is.null(names(cw)) || any(names(cw) == ""))
      .hp_stop("control_window must be c(start, end), an sccs_risk_window() or a named list of them per covariate id")
    values <- lapply(names(cw), function(nm) one(cw[[nm]], paste0("control_window$", nm)))
    keys <- names(cw)
    if (is.numeric(ids)) {
      num <- suppressWarnings(as.numeric(keys))
      if (anyNA(num) || any(num != round(num)))
        .hp_stop("control_window names covariate id '", keys[is.na(num) | num != round(num)][1L],
                 "', but the eras' covariate_id are numbers")
      keys <- as.list(as.integer(num))
    } else keys <- as.list(keys)
    return(reticulate::py_dict(keys, values))
  }
  one(cw, "control_window")
}

.sccs_edo_choice <- function(x) {
  if (is.logical(x) && length(x) == 1L && !is.na(x)) return(x)
  if (is.character(x) && length(x) == 1L && !is.na(x)) return(x)
  .hp_stop("event_dependent_observation must be TRUE, FALSE, \"auto\" or a censoring model name ",
           "(\"EWA\", \"EWI\", \"EGA\", \"EGI\"), got ", paste(utils::head(format(x), 3), collapse = ", "))
}

#' SCCS for exposures that the event delays or stops (event-dependent exposure)
#'
#' The pseudo-likelihood of Farrington, Whitaker & Hocine (2009), as the SCCS package's
#' \code{eventdepenexp}: one stacked data set per dose, later doses treated as unexposed
#' with events in their risk periods down-weighted, sandwich standard errors. Doses after
#' the event are treated as missing. Wraps \code{hphawkes_py.sccs.event_dependent_exposure}.
#'
#' @param cases Data frame, one row per case (its first event).
#' @param person,start,end,event Column names: case id, first and last observed day, event day.
#' @param doses Column names of the dose days (NA where not given), in dose order.
#' @param dose_ends Last day of each dose's risk: a number of days after the dose day, or
#'   column names (one per dose).
#' @param risk_starts Days after the dose at which the risk periods begin (\code{expogrp}).
#' @param age_groups Days on which new age groups begin (\code{agegrp}), or NULL.
#' @param same_dose_parameters One set of risk parameters for all doses (\code{sameexpopar}).
#' @param tolerance,max_iterations Stopping rule of the reweighting.
#' @return An object of class \code{sccs_event_dependent_exposure}: \code{results} (data frame:
#'   term, coef, rr, se, z, p, lower, upper), \code{coefficients}, \code{vcov} (sandwich),
#'   \code{iterations}, \code{converged}, \code{n_cases}, \code{doses_after_event};
#'   \code{coef()}, \code{vcov()} and \code{summary()} work on it.
#' @examplesIf hphawkes_available()
#' set.seed(1)
#' n <- 300
#' rv <- sample(60:99, n, TRUE); rvd2 <- rv + sample(30:59, n, TRUE)
#' intus <- sample(42:183, n, TRUE)
#' rv[intus < rv] <- NA
#' cases <- data.frame(case = 1:n, sta = 42L, end = 183L, intus = intus, rv = rv, rvd2 = rvd2)
#' fit <- sccs_event_dependent_exposure(cases, start = "sta", event = "intus",
#'                                      doses = c("rv", "rvd2"), dose_ends = 21, risk_starts = 1,
#'                                      age_groups = c(100, 140))
#' fit
#' @export
sccs_event_dependent_exposure <- function(cases, person = "case", start = "start", end = "end", event = "event",
                                          doses = "dose", dose_ends = NULL, risk_starts = 0L, age_groups = NULL,
                                          same_dose_parameters = TRUE, tolerance = 1e-8, max_iterations = 100L) {
  .hp_check_args()
  if (!is.data.frame(cases)) .hp_stop("cases must be a data frame, got ", class(cases)[1])
  if (!is.character(doses) || !length(doses)) .hp_stop("doses must be column names (character)")
  ends <- if (is.character(dose_ends)) as.list(dose_ends) else .as_int(dose_ends, "dose_ends")
  if (!is.numeric(risk_starts) || !length(risk_starts) || anyNA(risk_starts))
    .hp_stop("risk_starts must be whole days, got ", paste(utils::head(format(risk_starts), 3), collapse = ", "))
  starts <- lapply(risk_starts, function(v) .as_int(v, "risk_starts", FALSE))
  ages <- if (is.null(age_groups)) NULL else {
    if (!is.numeric(age_groups) || anyNA(age_groups)) .hp_stop("age_groups must be whole days or NULL")
    as.list(as.integer(age_groups))
  }
  py <- .hp_call(.hp_mod("sccs")$event_dependent_exposure(
    .pd_frame(cases, "cases"), person = person, start = start, end = end, event = event, doses = as.list(doses),
    dose_ends = ends, risk_starts = starts, age_groups = ages,
    same_dose_parameters = .as_flag(same_dose_parameters, "same_dose_parameters"),
    tolerance = .as_num(tolerance), max_iterations = .as_int(max_iterations, "max_iterations", FALSE)))
  res <- .hp_r(.hp_call(py$results_table()))
  res <- cbind(term = rownames(res), res, stringsAsFactors = FALSE)
  rownames(res) <- NULL
  at <- .hp_r(.hp_call(rf$attributes(py, list("iterations", "converged", "n_cases", "n_strata",
                                                "doses_after_event", "log_likelihood"))))
  v <- .hp_r(.hp_call(py$covariance$to_numpy()))
  v <- matrix(as.double(v), nrow = nrow(res), dimnames = list(res$term, res$term))
  structure(c(list(results = res, coefficients = stats::setNames(res$coef, res$term), vcov = v), at,
              list(python = py)), class = "sccs_event_dependent_exposure")
}

#' @export
print.sccs_event_dependent_exposure <- function(x, ...) {
  cat(sprintf("SCCS with event-dependent exposure (pseudo-likelihood): %d cases, %d strata; %s after %d rounds; %d dose(s) after the event treated as missing\n",
              x$n_cases, x$n_strata, if (isTRUE(x$converged)) "converged" else "NOT converged", x$iterations,
              x$doses_after_event))
  print(x$results, ...)
  invisible(x)
}

#' @export
summary.sccs_event_dependent_exposure <- function(object, ...) object$results

#' @export
coef.sccs_event_dependent_exposure <- function(object, ...) object$coefficients

#' @export
vcov.sccs_event_dependent_exposure <- function(object, ...) object$vcov

#' The study diagnostics of an SCCS study as a table
#'
#' @param study An \code{sccs_study()} built with \code{diagnostics = TRUE}.
#' @return A data frame, one row per (exposure, diagnostic): \code{covariate_id} (NA for a
#'   study-level diagnostic), \code{diagnostic}, \code{value}, \code{threshold} (text),
#'   \code{rule}, \code{pass}.
#' @seealso \code{\link{sccs_study}}.
#' @examplesIf hphawkes_available()
#' sim <- sccs_simulate_eras(400, 2, prevalence = 0.5, seed = 1)
#' st <- sccs_study(sim$observation_periods, sim$eras, sim$outcomes, risk_end = 30L,
#'                  diagnostics = TRUE)
#' sccs_study_diagnostics(st)
#' @export
sccs_study_diagnostics <- function(study) {
  .hp_check_args()
  if (!inherits(study, "sccs_study") || is.null(study$diagnostics))
    .hp_stop("study must be an sccs_study() built with diagnostics = TRUE")
  study$diagnostics
}

.sccs_diagnostics_table <- function(report) {
  # thresholds are numbers or (lower, upper) bounds, covariate ids numbers, text or None (a
  # study-level row): both go to R as text
  tab <- report$table()
  as_text <- reticulate::py_eval("lambda v: None if v is None else str(v)")
  tab <- tab$assign(threshold = tab["threshold"]$map(as_text), covariate_id = tab["covariate_id"]$map(as_text),
                    study_level = tab["covariate_id"]$isna())
  out <- .hp_r(.hp_call(tab))
  out$covariate_id <- ifelse(out$study_level, NA_character_, as.character(out$covariate_id))
  out$study_level <- NULL
  out
}
