# Bayesian self-controlled case series (Suchard et al. 2013): wrappers over hphawkes_py.sccs.

#' SCCS data in the OHDSI long format
#'
#' @param outcomes Data frame with \code{stratum_id}, \code{row_id}, \code{y} (events),
#'   \code{time} (time at risk, > 0).
#' @param covariates Data frame with \code{row_id}, \code{covariate_id} and optionally
#'   \code{value} (default 1).
#' @param strata_without_events \code{"drop"}, \code{"keep"} or \code{"raise"}.
#' @return An object of class \code{sccs_data} (holds the Python SCCSData): \code{n_strata},
#'   \code{n_rows}, \code{n_covariates}, \code{nnz} (non-zero covariate values).
#' @seealso \code{\link{sccs_fit}}; \code{\link{sccs_study}} builds the data from
#'   person-level eras.
#' @examplesIf hphawkes_available()
#' set.seed(4)  # 40 persons x 4 intervals; covariate 1 raises the rate, covariate 2 lowers it
#' outcomes <- data.frame(stratum_id = rep(1:40, each = 4), row_id = 1:160,
#'                        time = round(runif(160, 5, 60)))
#' x1 <- rbinom(160, 1, 0.4); x2 <- rbinom(160, 1, 0.3)
#' outcomes$y <- rpois(160, outcomes$time / 30 * exp(0.7 * x1 - 0.4 * x2))
#' covariates <- rbind(data.frame(row_id = outcomes$row_id[x1 == 1], covariate_id = 1L),
#'                     data.frame(row_id = outcomes$row_id[x2 == 1], covariate_id = 2L))
#' d <- sccs_data(outcomes, covariates)
#' d
#' @export
sccs_data <- function(outcomes, covariates, strata_without_events = "drop") {
  .hp_check_args()
  D <- .hp_mod("sccs")$SCCSData
  .sccs_ids_present(outcomes, "outcomes", c("stratum_id", "row_id", "y", "time"))
  .sccs_ids_present(covariates, "covariates", c("row_id", "covariate_id"))
  py <- .hp_call(D$from_long(.pd_frame(outcomes, "outcomes"), .pd_frame(covariates, "covariates"),
                             strata_without_events = strata_without_events))
  .sccs_data_r(py)
}

# An id or day column with NA would reach Python as the category "NA" or a NaN: refused, naming
# the column and R's row.
.sccs_ids_present <- function(df, name, columns) {
  if (!is.data.frame(df)) return(invisible(df))
  for (nm in intersect(columns, names(df))) .hp_no_na(df[[nm]], paste0(name, "$", nm))
  invisible(df)
}

.sccs_data_r <- function(py) {
  at <- .hp_r(.hp_call(rf$attributes(py, list("n_strata", "n_rows", "n_covariates", "nnz"))))
  structure(c(at, list(python = py)), class = "sccs_data")
}

.py_sccs_data <- function(data) {
  if (inherits(data, "sccs_data")) return(data$python)
  if (inherits(data, "python.builtin.object")) return(data)
  if (is.list(data) && all(c("outcomes", "covariates") %in% names(data)))
    return(sccs_data(data$outcomes, data$covariates)$python)
  .hp_stop("data must be an sccs_data() object (or a list with outcomes and covariates data frames)")
}

#' @export
print.sccs_data <- function(x, ...) {
  cat(sprintf("SCCS data: %d strata, %d rows, %d covariates, %d non-zeros\n",
              x$n_strata, x$n_rows, x$n_covariates, x$nnz))
  invisible(x)
}

.sccs_exclude <- function(exclude) if (length(exclude)) as.list(exclude) else list()

#' Simulate an SCCS data set with known log relative risks
#'
#' @param n_cases Number of persons (whole number).
#' @param n_drugs Number of drugs.
#' @param ... Further arguments of \code{hphawkes_py.sccs.simulate} (e.g.
#'   \code{fraction_positive}, \code{relative_risks}).
#' @param seed Whole number or NULL.
#' @return A list: \code{data} (\code{sccs_data}) and \code{true_coefficients} (named vector).
#' @seealso \code{\link{sccs_simulate_eras}} for person-level data.
#' @examplesIf hphawkes_available()
#' sim <- sccs_simulate(n_cases = 300, n_drugs = 10, fraction_positive = 0.5, seed = 1)
#' sim$data
#' sim$true_coefficients[sim$true_coefficients != 0]
#' @export
sccs_simulate <- function(n_cases, n_drugs, ..., seed = NULL) {
  .hp_check_args(dots = TRUE)
  extra <- list(...)
  for (nm in names(extra)) {
    v <- extra[[nm]]
    if (nm == "observation_days") v <- as.integer(v)
    if (is.numeric(v) && length(v) > 1L) extra[[nm]] <- as.list(v)
  }
  res <- .hp_call(do.call(.hp_mod("sccs")$simulate, c(list(
    n_cases = .as_int(n_cases, "n_cases", FALSE), n_drugs = .as_int(n_drugs, "n_drugs", FALSE),
    seed = .as_int(seed)), extra)))
  truth <- .hp_r(reticulate::py_get_item(res, 1L))
  list(data = .sccs_data_r(reticulate::py_get_item(res, 0L)), true_coefficients = truth)
}

.sccs_fit_r <- function(py) {
  at <- .hp_r(.hp_call(rf$attributes(py, list("coefficients", "log_likelihood", "log_prior",
    "iterations", "converged", "prior", "variance", "backend"))))
  at$python <- py
  structure(at, class = "hphawkes_sccs_fit")
}

#' Fit the Bayesian SCCS model by cyclic coordinate descent
#'
#' @param data An \code{sccs_data()} object.
#' @param prior \code{"laplace"}, \code{"normal"} or \code{"none"}.
#' @param variance Prior variance.
#' @param exclude Covariate ids without a prior.
#' @param tolerance Convergence tolerance.
#' @param max_iterations Whole number.
#' @param progress Show progress.
#' @param backend,threads See \code{hphawkes_backends()}.
#' @return An object of class \code{hphawkes_sccs_fit}: \code{coefficients} (named by
#'   covariate id), \code{log_likelihood}, \code{log_prior}, \code{iterations},
#'   \code{converged}, \code{prior}, \code{variance}, \code{backend}; \code{coef()},
#'   \code{logLik()}, \code{vcov()}, \code{confint()} and \code{summary()} work on it.
#' @seealso \code{\link{sccs_cv}} (the prior variance by cross-validation),
#'   \code{\link{sccs_results}}, \code{\link{confint.hphawkes_sccs_fit}}.
#' @examplesIf hphawkes_available()
#' set.seed(4)  # 40 persons x 4 intervals; covariate 1 raises the rate, covariate 2 lowers it
#' outcomes <- data.frame(stratum_id = rep(1:40, each = 4), row_id = 1:160,
#'                        time = round(runif(160, 5, 60)))
#' x1 <- rbinom(160, 1, 0.4); x2 <- rbinom(160, 1, 0.3)
#' outcomes$y <- rpois(160, outcomes$time / 30 * exp(0.7 * x1 - 0.4 * x2))
#' covariates <- rbind(data.frame(row_id = outcomes$row_id[x1 == 1], covariate_id = 1L),
#'                     data.frame(row_id = outcomes$row_id[x2 == 1], covariate_id = 2L))
#' d <- sccs_data(outcomes, covariates)
#' fit <- sccs_fit(d, prior = "none")  # conditional Poisson maximum likelihood
#' fit
#' coef(fit)
#' sccs_fit(d, prior = "laplace", variance = 0.1)  # shrunk towards 0
#' @export
sccs_fit <- function(data, prior = "laplace", variance = 1.0, exclude = NULL, tolerance = 1e-6,
                     max_iterations = 1000L, progress = FALSE, backend = "auto", threads = NULL) {
  .hp_check_args()
  py <- .hp_call(.hp_mod("sccs")$fit(.py_sccs_data(data), prior = prior,
    variance = .as_num(variance), exclude = .sccs_exclude(exclude), tolerance = .as_num(tolerance),
    max_iterations = .as_int(max_iterations, "max_iterations", FALSE), progress = .as_flag(progress, "progress"),
    backend = backend, threads = .as_int(threads)))
  .sccs_fit_r(py)
}

#' @export
print.hphawkes_sccs_fit <- function(x, ...) {
  cat(sprintf("Bayesian SCCS (%s prior, variance %g): %d coefficients, %d non-zero; log-likelihood %.6f; %s after %d iterations; backend %s\n",
              x$prior, x$variance, length(x$coefficients), sum(x$coefficients != 0), x$log_likelihood,
              if (isTRUE(x$converged)) "converged" else "NOT converged", x$iterations, x$backend))
  nz <- x$coefficients[x$coefficients != 0]
  if (length(nz)) print(utils::head(nz[order(-abs(nz))], 20))
  invisible(x)
}

#' @export
summary.hphawkes_sccs_fit <- function(object, ...) .hp_r(.hp_call(object$python$summary()))

#' @export
coef.hphawkes_sccs_fit <- function(object, ...) object$coefficients

#' @export
logLik.hphawkes_sccs_fit <- function(object, ...) {
  structure(object$log_likelihood, df = sum(object$coefficients != 0), class = "logLik")
}

.coef_plot <- function(df, title) {
  df$covariate <- factor(df$covariate, levels = df$covariate[order(df$estimate)])
  p <- ggplot2::ggplot(df, ggplot2::aes(.data$estimate, .data$covariate)) +
    ggplot2::geom_vline(xintercept = 0, colour = "grey60") + ggplot2::geom_point()
  if (all(c("lower", "upper") %in% names(df)))
    p <- p + ggplot2::geom_errorbarh(ggplot2::aes(xmin = .data$lower, xmax = .data$upper), height = 0.2)
  p + ggplot2::labs(x = "log relative risk", y = "covariate", title = title)
}

#' @method autoplot hphawkes_sccs_fit
#' @export
autoplot.hphawkes_sccs_fit <- function(object, max_covariates = 30L, ...) {
  .hp_check_args()
  b <- object$coefficients
  b <- b[b != 0]
  b <- utils::head(b[order(-abs(b))], max_covariates)
  .coef_plot(data.frame(covariate = names(b), estimate = unname(b)),
             sprintf("SCCS MAP estimates (%s, variance %g)", object$prior, object$variance))
}

#' @export
plot.hphawkes_sccs_fit <- function(x, ...) { print(autoplot.hphawkes_sccs_fit(x, ...)); invisible(x) }

#' Cross-validated prior variance for Bayesian SCCS
#'
#' @inheritParams sccs_fit
#' @param folds Number of folds (whole number).
#' @param grid Prior variances to try (NULL: the Python default grid), or \code{"auto"}
#'   for Cyclops' unimodal search of the variance.
#' @param seed Whole number or NULL.
#' @return An object of class \code{sccs_cv}: \code{variance}, \code{grid}, \code{scores}
#'   (data frame), \code{fold_scores} (matrix), \code{fit} (an \code{hphawkes_sccs_fit}).
#' @examplesIf hphawkes_available()
#' sim <- sccs_simulate(n_cases = 300, n_drugs = 10, fraction_positive = 0.5, seed = 1)
#' cv <- sccs_cv(sim$data, folds = 5, grid = c(0.01, 0.1, 1), seed = 1)
#' cv
#' autoplot(cv)
#' @export
sccs_cv <- function(data, prior = "laplace", folds = 10L, grid = NULL, seed = NULL, exclude = NULL,
                    tolerance = 1e-6, max_iterations = 1000L, progress = FALSE,
                    backend = "auto", threads = NULL) {
  .hp_check_args()
  py <- .hp_call(.hp_mod("sccs")$cross_validate(.py_sccs_data(data), prior = prior,
    folds = .as_int(folds, "folds", FALSE),
    grid = if (is.null(grid)) NULL else if (identical(grid, "auto")) "auto" else as.list(as.double(grid)),
    seed = .as_int(seed), exclude = .sccs_exclude(exclude), tolerance = .as_num(tolerance),
    max_iterations = .as_int(max_iterations, "max_iterations", FALSE), progress = .as_flag(progress, "progress"),
    backend = backend, threads = .as_int(threads)))
  at <- .hp_r(.hp_call(rf$attributes(py, list("variance", "grid", "scores", "folds", "fold_scores"))))
  at$fit <- .sccs_fit_r(py$fit)
  at$python <- py
  structure(at, class = "sccs_cv")
}

#' @export
print.sccs_cv <- function(x, ...) {
  cat(sprintf("SCCS %d-fold cross-validation over %d prior variances: chosen variance %g\n",
              x$folds, length(x$grid), x$variance))
  print(x$scores, ...)
  invisible(x)
}

#' @export
summary.sccs_cv <- function(object, ...) object$scores

#' @method autoplot sccs_cv
#' @export
autoplot.sccs_cv <- function(object, ...) {
  s <- object$scores
  ggplot2::ggplot(s, ggplot2::aes(.data$variance, .data$mean)) +
    ggplot2::geom_line() + ggplot2::geom_point() +
    ggplot2::geom_errorbar(ggplot2::aes(ymin = .data$mean - .data$se, ymax = .data$mean + .data$se), width = 0.05) +
    ggplot2::geom_vline(xintercept = object$variance, linetype = "dashed", colour = "firebrick") +
    ggplot2::scale_x_log10() +
    ggplot2::labs(x = "prior variance", y = "mean held-out log-likelihood",
                  title = "SCCS cross-validation")
}

#' @export
plot.sccs_cv <- function(x, ...) { print(autoplot.sccs_cv(x, ...)); invisible(x) }

#' Bootstrap intervals for Bayesian SCCS
#'
#' @inheritParams sccs_fit
#' @param replicates Bootstrap replicates (whole number).
#' @param seed Whole number or NULL.
#' @param level Interval level used by \code{summary}.
#' @return An object of class \code{sccs_bootstrap}: \code{samples} (data frame, replicates x
#'   covariates), \code{summary} (estimate, lower, upper, p_nonzero per covariate at
#'   \code{level}), \code{fit}.
#' @examplesIf hphawkes_available()
#' set.seed(4)  # 40 persons x 4 intervals; covariate 1 raises the rate, covariate 2 lowers it
#' outcomes <- data.frame(stratum_id = rep(1:40, each = 4), row_id = 1:160,
#'                        time = round(runif(160, 5, 60)))
#' x1 <- rbinom(160, 1, 0.4); x2 <- rbinom(160, 1, 0.3)
#' outcomes$y <- rpois(160, outcomes$time / 30 * exp(0.7 * x1 - 0.4 * x2))
#' covariates <- rbind(data.frame(row_id = outcomes$row_id[x1 == 1], covariate_id = 1L),
#'                     data.frame(row_id = outcomes$row_id[x2 == 1], covariate_id = 2L))
#' d <- sccs_data(outcomes, covariates)
#' bs <- sccs_bootstrap(d, prior = "normal", variance = 1, replicates = 50, seed = 1)
#' bs
#' @export
sccs_bootstrap <- function(data, prior = "laplace", variance = 1.0, replicates = 200L, seed = NULL,
                           level = 0.95, exclude = NULL, tolerance = 1e-6, max_iterations = 1000L,
                           progress = FALSE, backend = "auto", threads = NULL) {
  .hp_check_args()
  py <- .hp_call(.hp_mod("sccs")$bootstrap(.py_sccs_data(data), prior = prior,
    variance = .as_num(variance), replicates = .as_int(replicates, "replicates", FALSE),
    seed = .as_int(seed), exclude = .sccs_exclude(exclude), tolerance = .as_num(tolerance),
    max_iterations = .as_int(max_iterations, "max_iterations", FALSE), progress = .as_flag(progress, "progress"),
    backend = backend, threads = .as_int(threads)))
  at <- .hp_r(.hp_call(rf$attributes(py, list("samples", "replicates", "prior", "variance"))))
  at$summary <- .hp_r(.hp_call(py$summary(level = .as_num(level))))
  at$level <- level
  at$fit <- .sccs_fit_r(py$fit)
  at$python <- py
  structure(at, class = "sccs_bootstrap")
}

#' @export
print.sccs_bootstrap <- function(x, ...) {
  cat(sprintf("SCCS bootstrap: %d replicates, %s prior, variance %g; %g%% percentile intervals\n",
              x$replicates, x$prior, x$variance, 100 * x$level))
  print(x$summary, ...)
  invisible(x)
}

#' @export
summary.sccs_bootstrap <- function(object, ...) object$summary

#' @method autoplot sccs_bootstrap
#' @export
autoplot.sccs_bootstrap <- function(object, max_covariates = 30L, ...) {
  .hp_check_args()
  s <- object$summary
  s$covariate <- row.names(s)
  s <- s[s$estimate != 0 | s$lower != 0 | s$upper != 0, , drop = FALSE]
  s <- utils::head(s[order(-abs(s$estimate)), , drop = FALSE], max_covariates)
  .coef_plot(s, sprintf("SCCS estimates with %g%% bootstrap intervals", 100 * object$level))
}

#' @export
plot.sccs_bootstrap <- function(x, ...) { print(autoplot.sccs_bootstrap(x, ...)); invisible(x) }

#' Confidence intervals for SCCS coefficients
#'
#' Profile-likelihood intervals of the log posterior (as Cyclops' \code{confint}: the other
#' coefficients are refitted at every point of the profile) or Wald intervals from the
#' Hessian at the mode.
#'
#' @param object An \code{hphawkes_sccs_fit} from \code{sccs_fit()}.
#' @param parm Covariate ids (default all).
#' @param level Confidence level.
#' @param method \code{"profile"} or \code{"wald"}.
#' @param ... Unused.
#' @return A data frame with columns \code{covariate_id}, \code{lower}, \code{upper}.
#' @examplesIf hphawkes_available()
#' set.seed(4)  # 40 persons x 4 intervals; covariate 1 raises the rate, covariate 2 lowers it
#' outcomes <- data.frame(stratum_id = rep(1:40, each = 4), row_id = 1:160,
#'                        time = round(runif(160, 5, 60)))
#' x1 <- rbinom(160, 1, 0.4); x2 <- rbinom(160, 1, 0.3)
#' outcomes$y <- rpois(160, outcomes$time / 30 * exp(0.7 * x1 - 0.4 * x2))
#' covariates <- rbind(data.frame(row_id = outcomes$row_id[x1 == 1], covariate_id = 1L),
#'                     data.frame(row_id = outcomes$row_id[x2 == 1], covariate_id = 2L))
#' d <- sccs_data(outcomes, covariates)
#' fit <- sccs_fit(d, prior = "none")
#' confint(fit)
#' confint(fit, method = "wald", level = 0.9)
#' @export
confint.hphawkes_sccs_fit <- function(object, parm = NULL, level = 0.95, method = "profile", ...) {
  .hp_check_args()
  cov <- if (is.null(parm)) NULL else as.list(parm)
  df <- .hp_r(.hp_call(object$python$confint(cov, level = .as_num(level), method = method)))
  .sccs_index_column(df)
}

#' Per-exposure SCCS results table
#'
#' @inheritParams confint.hphawkes_sccs_fit
#' @param fit An \code{hphawkes_sccs_fit}.
#' @param covariates Covariate ids (default all).
#' @return A data frame, one row per covariate: coefficient, se, IRR with its interval, p,
#'   cases, exposed cases, exposed person-time and events.
#' @examplesIf hphawkes_available()
#' set.seed(4)  # 40 persons x 4 intervals; covariate 1 raises the rate, covariate 2 lowers it
#' outcomes <- data.frame(stratum_id = rep(1:40, each = 4), row_id = 1:160,
#'                        time = round(runif(160, 5, 60)))
#' x1 <- rbinom(160, 1, 0.4); x2 <- rbinom(160, 1, 0.3)
#' outcomes$y <- rpois(160, outcomes$time / 30 * exp(0.7 * x1 - 0.4 * x2))
#' covariates <- rbind(data.frame(row_id = outcomes$row_id[x1 == 1], covariate_id = 1L),
#'                     data.frame(row_id = outcomes$row_id[x2 == 1], covariate_id = 2L))
#' d <- sccs_data(outcomes, covariates)
#' fit <- sccs_fit(d, prior = "none")
#' sccs_results(fit)
#' @export
sccs_results <- function(fit, covariates = NULL, level = 0.95, method = "wald") {
  .hp_check_args()
  cov <- if (is.null(covariates)) NULL else as.list(covariates)
  .sccs_index_column(.hp_r(.hp_call(fit$python$results_table(cov, level = .as_num(level), method = method))))
}

#' @export
vcov.hphawkes_sccs_fit <- function(object, ...) {
  v <- .hp_r(.hp_call(object$python$covariance()))
  if (is.data.frame(v)) { rn <- v[[1]]; v <- as.matrix(v[, -1, drop = FALSE]); rownames(v) <- rn }
  v
}

.sccs_index_column <- function(df) {
  if (!"covariate_id" %in% names(df)) df <- cbind(covariate_id = rownames(df), df, stringsAsFactors = FALSE)
  rownames(df) <- NULL
  df
}

# ---- the study: person-level data -> design with age/season splines -> fit -> tables ------------

#' A risk window of an exposure for \code{sccs_study(windows = )}
#'
#' The window of an era runs from its anchor day plus \code{start} to its anchor day plus
#' \code{end} (inclusive days); anchors are the era's first (\code{"start"}) or last
#' (\code{"end"}) day, as SelfControlledCaseSeries' \code{startAnchor}/\code{endAnchor}.
#'
#' @param label Name of the window's covariate (character).
#' @param start,end Offsets in days (whole numbers).
#' @param start_anchor,end_anchor \code{"start"} or \code{"end"}.
#' @return A Python \code{RiskWindow}.
#' @seealso \code{\link{sccs_study}}.
#' @examplesIf hphawkes_available()
#' # days 0 to 30 after the start of an era, and the 30 days before it
#' on <- sccs_risk_window("on", 0, 30, "start", "start")
#' pre <- sccs_risk_window("pre", -30, -1, "start", "start")
#' on
#' windows <- list(drug1 = list(on, pre))  # for sccs_study(windows = windows)
#' @export
sccs_risk_window <- function(label, start, end, start_anchor = "start", end_anchor = "end") {
  .hp_check_args()
  if (!is.character(label) || length(label) != 1L) .hp_stop("label must be a single character string")
  .hp_call(.hp_mod("sccs")$RiskWindow(label, .as_int(start, "start", FALSE), .as_int(end, "end", FALSE),
                                      start_anchor, end_anchor))
}

# R list names are strings; when the covariate ids of the eras are numbers (as from
# sccs_simulate_eras() or a CDM) the names are those numbers, and Python must get them as ints,
# else no window would find its exposure.
.sccs_windows <- function(windows, ids = NULL) {
  if (is.null(windows)) return(NULL)
  if (!is.list(windows) || is.null(names(windows)) || any(names(windows) == ""))
    .hp_stop("windows must be a named list: covariate id -> list of sccs_risk_window()")
  values <- lapply(windows, function(w) if (inherits(w, "python.builtin.object")) list(w) else as.list(w))
  keys <- names(windows)
  if (is.numeric(ids)) {
    num <- suppressWarnings(as.numeric(keys))
    bad <- is.na(num) | num != round(num) | abs(num) > .Machine$integer.max
    if (any(bad))
      .hp_stop("windows names covariate id '", keys[bad][1L], "', but the eras' covariate_id are numbers: ",
               "name the windows by those numbers (list(`1` = ...))")
    return(reticulate::py_dict(as.list(as.integer(num)), unname(values)))
  }
  reticulate::dict(values)
}

.sccs_knots <- function(k, name) {
  if (is.null(k)) return(NULL)
  if (!is.numeric(k)) .hp_stop(name, " must be a number of knots or a numeric vector of knots")
  if (length(k) == 1L) return(.as_int(k, name, FALSE))
  as.list(as.double(k))
}

#' Simulate person-level SCCS data (observation periods, eras, outcomes)
#'
#' Day-level simulation with birth days and calendar dates, optionally with a known age
#' effect and season effect on the outcome rate (see \code{hphawkes_py.sccs.simulate}).
#'
#' @inheritParams sccs_simulate
#' @param age_effect An R function of age in days returning the log rate multiplier
#'   (vectorised), or NULL.
#' @param season_effect An R function of the month of the year (0..12, evaluated at
#'   mid-month) or 12 monthly log rate multipliers, or NULL.
#' @param ... Further arguments of \code{hphawkes_py.sccs.simulate} (\code{prevalence},
#'   \code{relative_risks}, \code{observation_days}, \code{age_at_start}, ...).
#' @return A list of data frames \code{observation_periods} (\code{person_id, start, end,
#'   birth_day}), \code{eras}, \code{outcomes}, and \code{true_coefficients} (named vector).
#' @examplesIf hphawkes_available()
#' sim <- sccs_simulate_eras(500, 2, prevalence = 0.3, fraction_positive = 1,
#'                           relative_risks = 2, observation_days = c(365, 1000), seed = 3)
#' lapply(sim[1:3], head, 3)
#' sim$true_coefficients
#' # with a known season effect on the outcome rate
#' s2 <- sccs_simulate_eras(200, 1, season_effect = function(m) 0.5 * cos(2 * pi * m / 12),
#'                          seed = 1)
#' nrow(s2$outcomes)
#' @export
sccs_simulate_eras <- function(n_cases, n_drugs, age_effect = NULL, season_effect = NULL, ..., seed = NULL) {
  .hp_check_args(dots = TRUE)
  extra <- list(...)
  for (nm in names(extra)) {
    v <- extra[[nm]]
    if (nm %in% c("observation_days", "age_at_start", "first_day")) v <- as.integer(v)
    if (is.numeric(v) && length(v) > 1L) v <- as.list(v)
    extra[[nm]] <- v
  }
  # R functions are evaluated here on the points the simulation uses (no R callbacks from Python):
  # the season at mid-month (12 values), the age on a half-day grid (bin midpoints are half days)
  if (!is.null(season_effect)) {
    if (is.function(season_effect)) season_effect <- season_effect(seq(0.5, 11.5, by = 1))
    season_effect <- as.list(as.double(season_effect))
  }
  if (!is.null(age_effect)) {
    if (!is.function(age_effect)) .hp_stop("age_effect must be an R function of age in days")
    a <- if (is.null(extra$age_at_start)) 21900L else max(unlist(extra$age_at_start))
    o <- if (is.null(extra$observation_days)) 3650L else max(unlist(extra$observation_days))
    grid <- seq(0, a + o + 62, by = 0.5)
    vals <- as.double(age_effect(grid))
    np <- reticulate::import("numpy", convert = FALSE)
    age_effect <- reticulate::import("functools")$partial(np$interp, xp = np$array(grid), fp = np$array(vals))
  }
  res <- .hp_call(do.call(.hp_mod("sccs")$simulate, c(list(
    n_cases = .as_int(n_cases, "n_cases", FALSE), n_drugs = .as_int(n_drugs, "n_drugs", FALSE),
    age_effect = age_effect, season_effect = season_effect, output = "eras",
    seed = .as_int(seed)), extra)))
  out <- lapply(0:3, function(i) .hp_r(reticulate::py_get_item(res, i)))
  names(out) <- c("observation_periods", "eras", "outcomes", "true_coefficients")
  out
}

#' A complete self-controlled case series study
#'
#' Builds the design from person-level data (observation periods, exposure eras, outcome
#' days; \code{SCCSData.from_eras}) with risk windows, observation-period rules and
#' age / season / calendar-time splines, fits it, and returns the tables analysts report.
#'
#' @param observation_periods Data frame \code{person_id, start, end} (and \code{birth_day}
#'   for age adjustment or age limits); integer days.
#' @param eras Data frame \code{person_id, start, end, covariate_id}.
#' @param outcomes Data frame \code{person_id, day}.
#' @param risk_start,risk_end Risk window offsets in days for every exposure.
#' @param windows Named list: covariate id -> list of \code{sccs_risk_window()} (several
#'   windows per exposure, e.g. a pre-exposure window).
#' @param age_knots,season_knots,calendar_knots Number of knots or knot vectors (NULL: no
#'   adjustment); see \code{SCCSData.from_eras}.
#' @param study_start,study_end,naive_period,min_age,max_age,first_outcome_only Observation
#'   rules (days).
#' @param day_origin Calendar date of day 0 (default \code{"1970-01-01"}).
#' @param prior,variance Prior of the exposure coefficients (default none: maximum likelihood).
#' @param exclude Covariate ids without prior.
#' @param spline_prior,spline_variance Prior of the spline coefficients.
#' @param level,method Interval level and \code{"wald"} or \code{"profile"}.
#' @param tolerance,max_iterations,progress,backend,threads As in \code{sccs_fit()}.
#' @param control_window The self-controlled risk interval (SCRI) design: a control interval
#'   per era instead of all unexposed time, as \code{c(start_offset, end_offset)} (days from
#'   the era start / to the era end), an \code{sccs_risk_window()}, or a named list of those
#'   per covariate id; see \code{SCCSData.from_eras}.
#' @param event_dependent_observation For outcomes that end observation (death): \code{TRUE}
#'   or \code{"auto"} (the censoring model with the smallest AIC) or a model name
#'   (\code{"EWA"}, \code{"EWI"}, \code{"EGA"}, \code{"EGI"}): the pseudo-likelihood of
#'   Farrington et al. (2011); \code{observation_periods} then needs \code{birth_day} and
#'   \code{censor}.
#' @param censoring_regression With \code{event_dependent_observation}: the 7-parameter
#'   censoring models (the SCCS package's \code{regress = TRUE}).
#' @param diagnostics Run the OHDSI study diagnostics (MDRR, pre-exposure gain, time stability,
#'   rare outcome where \code{n_persons} is given) and add their values and pass/fail columns
#'   to \code{results}.
#' @param n_persons Population size, for the rare-outcome diagnostic.
#' @return An object of class \code{sccs_study}: \code{results} (data frame: per exposure
#'   IRR, interval, p, cases, exposed cases, exposed time and events; with
#'   \code{diagnostics = TRUE} each diagnostic's value, \code{<diagnostic>_pass} and
#'   \code{diagnostics_pass}), \code{diagnostics} (the long table, see
#'   \code{sccs_study_diagnostics()}), \code{censoring} (the censoring models' table of an
#'   event-dependent observation design), \code{spline_effects}
#'   (data frame: term, x, log effect, se, band, rate ratio), \code{knots} (list),
#'   \code{fit} (\code{hphawkes_sccs_fit}), \code{data} (\code{sccs_data}), \code{dropped};
#'   \code{summary()} gives \code{results}, \code{autoplot()} the spline effects.
#' @seealso \code{\link{sccs_risk_window}}, \code{\link{sccs_simulate_eras}}.
#' @examplesIf hphawkes_available()
#' sim <- sccs_simulate_eras(500, 2, prevalence = 0.3, fraction_positive = 1,
#'                           relative_risks = 2, observation_days = c(365, 1000), seed = 3)
#' st <- sccs_study(sim$observation_periods, sim$eras, sim$outcomes, risk_start = 0,
#'                  risk_end = 0, season_knots = 3)
#' st
#' st$results[, c("covariate_id", "irr", "irr_lower", "irr_upper")]  # true IRR 2
#' autoplot(st)
#' @export
sccs_study <- function(observation_periods, eras, outcomes, risk_start = 0L, risk_end = 0L,
                       windows = NULL, age_knots = NULL, season_knots = NULL, calendar_knots = NULL,
                       study_start = NULL, study_end = NULL, naive_period = 0L, min_age = NULL,
                       max_age = NULL, first_outcome_only = FALSE, day_origin = "1970-01-01",
                       prior = "none", variance = 1.0, exclude = NULL, spline_prior = "normal",
                       spline_variance = 1.0, level = 0.95, method = "wald", tolerance = 1e-8,
                       max_iterations = 1000L, progress = FALSE, backend = "auto", threads = NULL,
                       control_window = NULL, event_dependent_observation = FALSE, censoring_regression = FALSE,
                       diagnostics = FALSE, n_persons = NULL) {
  .hp_check_args()
  sccs <- .hp_mod("sccs")
  diagnostics <- .as_flag(diagnostics, "diagnostics")
  # NA ids and days: refused here, with R's 1-based row (Python would read NaN, or the id "NA")
  .sccs_ids_present(observation_periods, "observation_periods", c("person_id", "start", "end"))
  .sccs_ids_present(eras, "eras", c("person_id", "start", "end", "covariate_id"))
  .sccs_ids_present(outcomes, "outcomes", c("person_id", "day"))
  d <- .hp_call(sccs$SCCSData$from_eras(
    .pd_frame(observation_periods, "observation_periods"), .pd_frame(eras, "eras"),
    .pd_frame(outcomes, "outcomes"),
    risk_start = .as_int(risk_start, "risk_start", FALSE), risk_end = .as_int(risk_end, "risk_end", FALSE),
    windows = .sccs_windows(windows, if (is.data.frame(eras)) eras$covariate_id), age_knots = .sccs_knots(age_knots, "age_knots"),
    season_knots = .sccs_knots(season_knots, "season_knots"),
    calendar_knots = .sccs_knots(calendar_knots, "calendar_knots"),
    study_start = .as_int(study_start), study_end = .as_int(study_end),
    naive_period = .as_int(naive_period, "naive_period", FALSE), min_age = .as_int(min_age),
    max_age = .as_int(max_age), first_outcome_only = .as_flag(first_outcome_only, "first_outcome_only"), day_origin = day_origin,
    control_window = .sccs_control_window(control_window, if (is.data.frame(eras)) eras$covariate_id),
    event_dependent_observation = .sccs_edo_choice(event_dependent_observation),
    censoring_regression = .as_flag(censoring_regression, "censoring_regression")))
  py <- .hp_call(sccs$fit(d, prior = prior, variance = .as_num(variance), exclude = .sccs_exclude(exclude),
    spline_prior = spline_prior, spline_variance = .as_num(spline_variance),
    tolerance = .as_num(tolerance), max_iterations = .as_int(max_iterations, "max_iterations", FALSE),
    progress = .as_flag(progress, "progress"), backend = backend, threads = .as_int(threads)))
  diag_table <- NULL
  if (diagnostics) {
    report <- .hp_call(sccs$study_diagnostics(py, .pd_frame(observation_periods, "observation_periods"),
      .pd_frame(eras, "eras"), .pd_frame(outcomes, "outcomes"), n_persons = .as_int(n_persons), day_origin = day_origin))
    py <- .hp_call(py$with_diagnostics(report))
    diag_table <- .sccs_diagnostics_table(report)
  }
  censoring <- NULL
  if (!identical(event_dependent_observation, FALSE)) {
    ct <- .hp_call(d$censoring$table())
    censoring <- .sccs_index_column(.hp_r(ct))
    names(censoring)[1] <- "model"
  }
  fit <- .sccs_fit_r(py)
  results <- .sccs_index_column(.hp_r(.hp_call(py$results_table(level = .as_num(level), method = method))))
  n_terms <- reticulate::py_len(d$splines)
  effects <- if (n_terms > 0L) .hp_r(.hp_call(py$spline_effects(level = .as_num(level)))) else NULL
  knots <- list()
  for (i in seq_len(n_terms)) {
    term <- reticulate::py_get_item(d$splines, i - 1L)
    knots[[.hp_r(term$name)]] <- .hp_r(term$knots)
  }
  structure(list(results = results, diagnostics = diag_table, censoring = censoring,
                 spline_effects = effects, knots = knots, fit = fit,
                 data = .sccs_data_r(d), dropped = .hp_r(.hp_call(reticulate::import_builtins()$dict(d$dropped))),
                 level = level, method = method),
            class = "sccs_study")
}

#' @export
print.sccs_study <- function(x, ...) {
  cat(sprintf("SCCS study: %d cases, %d exposures; %s\n", x$data$n_strata, nrow(x$results),
              if (length(x$knots)) paste("adjusted for", paste(names(x$knots), collapse = ", ")) else "no age/season adjustment"))
  print(x$results[, intersect(c("covariate_id", "irr", "irr_lower", "irr_upper", "p", "exposed_cases",
                                "diagnostics_pass"), names(x$results))], ...)
  if (!is.null(x$diagnostics)) {
    failed <- x$diagnostics[!x$diagnostics$pass, , drop = FALSE]
    cat(sprintf("diagnostics: %d of %d pass%s\n", sum(x$diagnostics$pass), nrow(x$diagnostics),
                if (nrow(failed)) paste0("; FAIL: ", paste0(failed$diagnostic, ifelse(is.na(failed$covariate_id), "",
                  paste0("[", failed$covariate_id, "]")), collapse = ", ")) else ""))
  }
  invisible(x)
}

#' @export
summary.sccs_study <- function(object, ...) object$results

#' @method autoplot sccs_study
#' @export
autoplot.sccs_study <- function(object, which = "splines", ...) {
  if (identical(which, "diagnostics")) return(.sccs_diagnostics_plot(object))
  if (!identical(which, "splines")) .hp_stop("which must be \"splines\" or \"diagnostics\", got ", format(which))
  e <- object$spline_effects
  if (is.null(e)) .hp_stop("this study has no age/season/calendar adjustment to plot")
  e$x_plot <- ifelse(e$term == "age", e$x / 365.25, e$x)
  ggplot2::ggplot(e, ggplot2::aes(.data$x_plot, .data$rr)) +
    ggplot2::geom_ribbon(ggplot2::aes(ymin = .data$rr_lower, ymax = .data$rr_upper), fill = "grey80") +
    ggplot2::geom_line() + ggplot2::geom_hline(yintercept = 1, linetype = "dashed", colour = "grey50") +
    ggplot2::scale_y_log10() + ggplot2::facet_wrap(~term, scales = "free_x") +
    ggplot2::labs(x = "age (years) / month of the year / day", y = "rate ratio",
                  title = sprintf("SCCS spline effects (%g%% bands)", 100 * object$level))
}

#' @export
plot.sccs_study <- function(x, ...) { print(autoplot.sccs_study(x, ...)); invisible(x) }

# The diagnostics as a figure: each exposure's value against the OHDSI threshold, one panel per
# diagnostic, green where it passes and red where it fails.
.sccs_diagnostics_plot <- function(object) {
  t <- object$diagnostics
  if (is.null(t)) .hp_stop("this study has no diagnostics: build it with diagnostics = TRUE")
  t$label <- ifelse(is.na(t$covariate_id), "study", t$covariate_id)
  t$verdict <- ifelse(t$pass, "pass", "fail")
  ggplot2::ggplot(t, ggplot2::aes(.data$value, .data$label, colour = .data$verdict)) +
    ggplot2::geom_point(size = 2.5) +
    ggplot2::scale_colour_manual(values = c(pass = "seagreen", fail = "firebrick")) +
    ggplot2::facet_wrap(~diagnostic, scales = "free_x", ncol = 1) +
    ggplot2::labs(x = "value (see the rule of each diagnostic)", y = NULL, colour = NULL,
                  title = "SCCS study diagnostics")
}
