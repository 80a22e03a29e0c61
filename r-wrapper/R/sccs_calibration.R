# Empirical calibration with negative controls (Schuemie et al. 2014, 2018): wrappers over
# hphawkes_py.sccs.EmpiricalNull, SystematicErrorModel and fit_negative_controls. The R names follow
# EmpiricalCalibration (fitNull -> sccs_fit_null, fitSystematicErrorModel ->
# sccs_fit_systematic_error_model, calibrateP -> calibrate_p, calibrateConfidenceInterval ->
# calibrate_ci, plotCalibrationEffect -> autoplot).

# Log relative risks and their standard errors as two float64 arrays of one length. NA/NaN/Inf
# travel as NaN/Inf: the Python side decides (fit: dropped with a warning or refused; calibrate:
# NA results). Lengths are checked here so that the message names the R arguments.
.calib_pair <- function(log_rr, se_log_rr) {
  for (nm in c("log_rr", "se_log_rr")) {
    v <- get(nm, inherits = FALSE)
    if (!(is.numeric(v) || (is.logical(v) && all(is.na(v)))) || !is.null(dim(v)) && length(dim(v)) > 1L &&
        min(dim(v)) > 1L)
      .hp_stop(nm, " must be a numeric vector, got ", .hp_kind(v))
  }
  if (length(log_rr) != length(se_log_rr))
    .hp_stop("log_rr and se_log_rr must have the same length, got ", length(log_rr), " and ",
             length(se_log_rr))
  # R's NA is a signalling NaN, on which NumPy arithmetic warns "invalid value": send a quiet NaN
  quiet <- function(v) { v <- as.double(v); v[is.na(v)] <- NaN; v }
  list(x = .np_double(quiet(log_rr), "log_rr"), s = .np_double(quiet(se_log_rr), "se_log_rr"))
}

# The estimates a fit cannot use (NA/NaN/Inf; with extreme = TRUE also |log_rr| > log(100), as
# fitNull), reported with R's 1-based positions: an R warning when they are dropped
# (invalid = "drop", Python then leaves them out and counts them), an error for "raise".
.calib_unusable <- function(log_rr, se_log_rr, invalid, extreme, what) {
  if (!identical(invalid, "drop") && !identical(invalid, "raise"))
    .hp_stop("invalid must be \"drop\" or \"raise\", got ", paste(format(invalid), collapse = ", "))
  non_finite <- !(is.finite(log_rr) & is.finite(se_log_rr))
  ext <- if (extreme) !non_finite & abs(ifelse(non_finite, 0, log_rr)) > log(100) else rep(FALSE, length(log_rr))
  bad <- non_finite | ext
  if (!any(bad)) return(invisible(FALSE))
  i <- which(bad)[1L]
  msg <- paste0(what, ": ", sum(non_finite), " NA/NaN/infinite",
                if (extreme) paste0(" and ", sum(ext), " extreme (|log_rr| > log(100))"),
                " estimate(s), the first at position ", i, " (log_rr = ", log_rr[i], ", se_log_rr = ",
                se_log_rr[i], ")")
  if (identical(invalid, "raise")) .hp_stop(msg, "; use invalid = \"drop\" to leave them out")
  warning(msg, " left out of the fit", call. = FALSE)
  invisible(TRUE)
}

#' Fit the empirical null distribution of systematic error to negative controls
#'
#' Maximum-likelihood fit of the systematic error \code{N(mean, sd^2)} (log relative-risk
#' scale) to the estimates of negative controls, exposure-outcome pairs believed to have no
#' effect: each \code{log_rr[i] ~ N(mean, sd^2 + se_log_rr[i]^2)}. As EmpiricalCalibration's
#' \code{fitNull} (Schuemie et al. 2014); \code{hphawkes_py.sccs.EmpiricalNull.fit}.
#'
#' @param log_rr Numeric vector: log relative-risk estimates of the negative controls (a
#'   data frame from \code{sccs_fit_negative_controls()} may be given here instead, with
#'   \code{se_log_rr} left out).
#' @param se_log_rr Numeric vector of the same length: their standard errors (> 0).
#' @param invalid \code{"drop"} (default, as \code{fitNull}): estimates with \code{NA}, NaN
#'   or infinite \code{log_rr} or \code{se_log_rr}, and extreme ones (\code{|log_rr| >
#'   log(100)}), are left out with an R warning and counted in \code{dropped};
#'   \code{"raise"}: they are an error.
#' @return An object of class \code{sccs_empirical_null}: \code{mean}, \code{sd},
#'   \code{n_controls} (controls used), \code{log_likelihood}, \code{dropped} (named counts),
#'   \code{ease} (expected absolute systematic error, EmpiricalCalibration's
#'   \code{computeExpectedAbsoluteSystematicError}; a study passes below 0.25), and the
#'   controls the fit used (\code{log_rr}, \code{se_log_rr}) for \code{autoplot()}. Use it with
#'   \code{\link{calibrate_p}} and \code{\link{calibrate_ci}}.
#' @references Schuemie MJ, Ryan PB, DuMouchel W, Suchard MA, Madigan D (2014). Interpreting
#'   observational studies: why empirical calibration is needed to correct p-values.
#'   Statistics in Medicine 33(2):209-218.
#' @seealso \code{\link{sccs_fit_negative_controls}} (estimates of the controls from a study),
#'   \code{\link{sccs_fit_systematic_error_model}} (with positive controls).
#' @examplesIf hphawkes_available()
#' set.seed(1)  # 40 negative controls with a bias of mean 0.2 and sd 0.1
#' se <- runif(40, 0.05, 0.3)
#' log_rr <- rnorm(40, 0.2, sqrt(0.1^2 + se^2))
#' null <- sccs_fit_null(log_rr, se)
#' null
#' # a drug with an observed relative risk of 1.5 (se 0.1 on the log scale)
#' calibrate_p(null, log(1.5), 0.1)
#' calibrate_ci(null, log(1.5), 0.1)
#' autoplot(null)
#' @export
sccs_fit_null <- function(log_rr, se_log_rr = NULL, invalid = "drop") {
  .hp_check_args()
  if (is.data.frame(log_rr)) {
    if (!is.null(se_log_rr)) .hp_stop("give log_rr as a data frame (with its se_log_rr column) or two vectors, not both")
    miss <- setdiff(c("log_rr", "se_log_rr"), names(log_rr))
    if (length(miss)) .hp_stop("the data frame log_rr has no column(s) ", paste(miss, collapse = ", "),
                               "; its columns are ", paste(names(log_rr), collapse = ", "))
    se_log_rr <- log_rr$se_log_rr
    log_rr <- log_rr$log_rr
  }
  if (is.null(se_log_rr)) .hp_stop("se_log_rr is missing: give the standard errors of log_rr")
  p <- .calib_pair(log_rr, se_log_rr)
  .calib_unusable(log_rr, se_log_rr, invalid, extreme = TRUE, what = "negative controls")
  py <- suppressWarnings(.hp_py_warnings(.hp_call(.hp_mod("sccs")$EmpiricalNull$fit(p$x, p$s, invalid = invalid))))
  .calib_null_r(py, as.double(log_rr), as.double(se_log_rr))
}

.calib_null_r <- function(py, log_rr, se_log_rr) {
  at <- .hp_r(.hp_call(rf$attributes(py, list("mean", "sd", "n_controls", "log_likelihood", "dropped", "ease"))))
  at$dropped <- unlist(at$dropped)
  # the controls the fit used (those left out were named in the fit's warning), for autoplot()
  used <- is.finite(log_rr) & is.finite(se_log_rr) & abs(log_rr) <= log(100)
  at$log_rr <- log_rr[used]
  at$se_log_rr <- se_log_rr[used]
  at$python <- py
  structure(at, class = "sccs_empirical_null")
}

#' @export
print.sccs_empirical_null <- function(x, ...) {
  drop <- x$dropped[x$dropped > 0]
  cat(sprintf("Empirical null (systematic error, log scale): mean %.4f, sd %.4f from %d negative controls; EASE %.4f\n",
              x$mean, x$sd, x$n_controls, x$ease))
  if (length(drop)) cat("left out:", paste(names(drop), drop, sep = " = ", collapse = ", "), "\n")
  invisible(x)
}

#' Fit a systematic error model to negative and positive controls
#'
#' The error of an estimate of a true log relative risk \code{t} is \code{N(mean_intercept +
#' mean_slope t, (sd_intercept + sd_slope |t|)^2 + se^2)}, fitted by maximum likelihood to
#' negative controls (\code{t = 0}) and positive controls (known \code{t}), as
#' EmpiricalCalibration's \code{fitSystematicErrorModel} (Schuemie et al. 2018);
#' \code{hphawkes_py.sccs.SystematicErrorModel.fit}. With \code{null}, the model of an
#' empirical null alone (\code{convertNullToErrorModel}).
#'
#' @param log_rr,se_log_rr Estimates of the controls and their standard errors (> 0).
#' @param true_log_rr The controls' true log relative risks (0 for negative controls); finite,
#'   at least two distinct values.
#' @param invalid \code{"drop"} (with an R warning) or \code{"raise"}: NA, NaN or infinite
#'   estimates.
#' @param null Instead of the controls: an \code{sccs_empirical_null}, whose mean and sd become
#'   the intercepts, with slopes \code{mean_slope} and \code{sd_slope}.
#' @param mean_slope,sd_slope Slopes assumed with \code{null} (default: the same error at
#'   every effect size).
#' @return An object of class \code{sccs_error_model}: \code{mean_intercept},
#'   \code{mean_slope}, \code{sd_intercept}, \code{sd_slope}, \code{n_controls},
#'   \code{log_likelihood}, \code{dropped}; use it with \code{\link{calibrate_ci}}.
#' @references Schuemie MJ, Hripcsak G, Ryan PB, Madigan D, Suchard MA (2018). Empirical
#'   confidence interval calibration for population-level effect estimation studies in
#'   observational healthcare data. PNAS 115(11):2571-2577.
#' @examplesIf hphawkes_available()
#' set.seed(5)  # 20 controls at each of the true relative risks 1, 2 and 4
#' t <- rep(log(c(1, 2, 4)), each = 20)
#' se <- runif(60, 0.05, 0.2)
#' x <- rnorm(60, 0.2 + 0.9 * t, sqrt(0.1^2 + se^2))
#' model <- sccs_fit_systematic_error_model(x, se, t)
#' model
#' calibrate_ci(model, log(3), 0.1)
#' @export
sccs_fit_systematic_error_model <- function(log_rr = NULL, se_log_rr = NULL, true_log_rr = NULL,
                                            invalid = "drop", null = NULL, mean_slope = 1, sd_slope = 0) {
  .hp_check_args()
  M <- .hp_mod("sccs")$SystematicErrorModel
  if (!is.null(null)) {
    if (!inherits(null, "sccs_empirical_null"))
      .hp_stop("null must be an sccs_empirical_null from sccs_fit_null(), got ", .hp_kind(null))
    if (!is.null(log_rr) || !is.null(se_log_rr) || !is.null(true_log_rr))
      .hp_stop("give either the controls (log_rr, se_log_rr, true_log_rr) or null, not both")
    py <- .hp_call(M$from_null(null$python, mean_slope = .as_num(mean_slope, "mean_slope", FALSE),
                               sd_slope = .as_num(sd_slope, "sd_slope", FALSE)))
  } else {
    if (is.null(log_rr) || is.null(se_log_rr) || is.null(true_log_rr))
      .hp_stop("give the controls' log_rr, se_log_rr and true_log_rr (or an empirical null as null)")
    p <- .calib_pair(log_rr, se_log_rr)
    if (!is.numeric(true_log_rr)) .hp_stop("true_log_rr must be numeric, got ", .hp_kind(true_log_rr))
    if (length(true_log_rr) != length(log_rr))
      .hp_stop("true_log_rr must have the length of log_rr (", length(log_rr), "), got ", length(true_log_rr))
    .hp_no_na(true_log_rr, "true_log_rr")
    .calib_unusable(log_rr, se_log_rr, invalid, extreme = FALSE, what = "controls")
    py <- suppressWarnings(.hp_py_warnings(.hp_call(M$fit(p$x, p$s, .np_double(as.double(true_log_rr), "true_log_rr"),
                                          invalid = invalid))))
  }
  at <- .hp_r(.hp_call(rf$attributes(py, list("mean_intercept", "mean_slope", "sd_intercept", "sd_slope",
                                              "n_controls", "log_likelihood", "dropped"))))
  at$dropped <- unlist(at$dropped)
  at$python <- py
  structure(at, class = "sccs_error_model")
}

#' @export
print.sccs_error_model <- function(x, ...) {
  cat(sprintf("Systematic error model (log scale): mean %.4f + %.4f t, sd %.4f + %.4f |t|%s\n",
              x$mean_intercept, x$mean_slope, x$sd_intercept, x$sd_slope,
              if (x$n_controls > 0) sprintf("; %d controls", x$n_controls) else " (from an empirical null)"))
  invisible(x)
}

#' Calibrated p-values
#'
#' Each estimate judged against the empirical null plus its own sampling error (Schuemie et
#' al. 2014; EmpiricalCalibration's \code{calibrateP}): with \code{z = (log_rr - mean) /
#' sqrt(sd^2 + se^2)}, the two-sided p-value is \code{2 pnorm(-|z|)}.
#'
#' @param null An \code{sccs_empirical_null} from \code{\link{sccs_fit_null}}.
#' @param log_rr,se_log_rr Numeric vectors of one length: the estimates to calibrate and their
#'   standard errors (> 0).
#' @param alternative \code{"two-sided"}, \code{"greater"} (evidence of a raised risk,
#'   \code{calibrateP(upper = TRUE)}) or \code{"less"}.
#' @param ... Unused; a named argument here is an error.
#' @return Numeric vector of calibrated p-values, in the order given; \code{NA} where
#'   \code{log_rr} or \code{se_log_rr} is NA, NaN or infinite.
#' @seealso \code{\link{calibrate_ci}}.
#' @examplesIf hphawkes_available()
#' set.seed(1)
#' se <- runif(40, 0.05, 0.3)
#' null <- sccs_fit_null(rnorm(40, 0.2, sqrt(0.1^2 + se^2)), se)
#' calibrate_p(null, log(c(1.5, 3)), c(0.1, 0.2))
#' 2 * pnorm(-abs(log(c(1.5, 3)) / c(0.1, 0.2)))   # uncalibrated
#' @export
calibrate_p <- function(null, log_rr, se_log_rr, alternative = "two-sided", ...) {
  .hp_check_args()
  if (!inherits(null, "sccs_empirical_null"))
    .hp_stop("null must be an sccs_empirical_null from sccs_fit_null(), got ", .hp_kind(null))
  p <- .calib_pair(log_rr, se_log_rr)
  out <- .hp_r(.hp_call(null$python$calibrate_p(p$x, p$s, alternative = alternative)))
  out[is.nan(out)] <- NA_real_
  out
}

#' Calibrated confidence intervals
#'
#' Estimates and intervals corrected for systematic error (Schuemie et al. 2018;
#' EmpiricalCalibration's \code{calibrateConfidenceInterval}). With an empirical null the
#' error is the same at every effect size: \code{log_rr - mean} with bounds \code{-+ z sqrt(sd^2
#' + se^2)}; with a systematic error model the bounds solve the model's equation by root
#' finding.
#'
#' @param model An \code{sccs_empirical_null} (\code{\link{sccs_fit_null}}) or an
#'   \code{sccs_error_model} (\code{\link{sccs_fit_systematic_error_model}}).
#' @param log_rr,se_log_rr Numeric vectors of one length: estimates and standard errors (> 0).
#' @param level Confidence level in (0, 1).
#' @param ... Unused; a named argument here is an error.
#' @return A data frame, one row per estimate in the order given: \code{log_rr},
#'   \code{log_lower}, \code{log_upper}, \code{se_log_rr} (calibrated, log scale) and
#'   \code{rr}, \code{lower}, \code{upper}; \code{NA} rows where the input is NA, NaN or
#'   infinite.
#' @seealso \code{\link{calibrate_p}}.
#' @examplesIf hphawkes_available()
#' set.seed(1)
#' se <- runif(40, 0.05, 0.3)
#' null <- sccs_fit_null(rnorm(40, 0.2, sqrt(0.1^2 + se^2)), se)
#' calibrate_ci(null, log(c(1.5, 3)), c(0.1, 0.2), level = 0.9)
#' @export
calibrate_ci <- function(model, log_rr, se_log_rr, level = 0.95, ...) {
  .hp_check_args()
  if (!inherits(model, c("sccs_empirical_null", "sccs_error_model")))
    .hp_stop("model must be an sccs_empirical_null (sccs_fit_null()) or an sccs_error_model ",
             "(sccs_fit_systematic_error_model()), got ", .hp_kind(model))
  p <- .calib_pair(log_rr, se_log_rr)
  df <- .hp_r(.hp_py_warnings(.hp_call(model$python$calibrate_ci(p$x, p$s, level = .as_num(level, "level", FALSE)))))
  df[] <- lapply(df, function(v) { v[is.nan(v)] <- NA_real_; v })
  df
}

#' Calibration plot of an empirical null
#'
#' EmpiricalCalibration's \code{plotCalibrationEffect}: estimates as points (relative risk on
#' a log axis against the standard error); the dashed lines bound the region where the
#' uncalibrated p-value is above \code{1 - level}, the shaded region the same for the
#' calibrated p-value. Negative controls belong inside it.
#'
#' @param object An \code{sccs_empirical_null}.
#' @param log_rr,se_log_rr Estimates to show (default: the negative controls the fit used);
#'   NA, NaN or infinite ones cannot be drawn and are an error.
#' @param level \code{1 - level} is the significance level of the boundaries.
#' @param ... Unused.
#' @return A ggplot.
#' @examplesIf hphawkes_available()
#' set.seed(1)
#' se <- runif(40, 0.05, 0.3)
#' null <- sccs_fit_null(rnorm(40, 0.2, sqrt(0.1^2 + se^2)), se)
#' autoplot(null)
#' @method autoplot sccs_empirical_null
#' @export
autoplot.sccs_empirical_null <- function(object, log_rr = NULL, se_log_rr = NULL, level = 0.95, ...) {
  .hp_check_args()
  if (is.null(log_rr) != is.null(se_log_rr)) .hp_stop("give both log_rr and se_log_rr, or neither")
  if (is.null(log_rr)) { log_rr <- object$log_rr; se_log_rr <- object$se_log_rr }
  .calib_pair(log_rr, se_log_rr)
  level <- .as_num(level, "level", FALSE)
  if (!(level > 0 && level < 1)) .hp_stop("level must be in (0, 1), got ", level)
  bad <- !(is.finite(log_rr) & is.finite(se_log_rr))
  if (any(bad)) .hp_stop("the plot needs finite estimates: ", sum(bad), " NA/NaN/infinite, first at position ",
                         which(bad)[1L], " (log_rr = ", log_rr[bad][1L], ", se_log_rr = ", se_log_rr[bad][1L], ")")
  if (any(se_log_rr <= 0)) .hp_stop("se_log_rr must be > 0, first offending position ", which(se_log_rr <= 0)[1L])
  z <- stats::qnorm(0.5 + level / 2)
  top <- max(1.5 * max(se_log_rr), 0.25)
  grid <- seq(0, top, length.out = 200)
  half <- z * sqrt(object$sd^2 + grid^2)
  band <- data.frame(se = grid, lo = exp(object$mean - half), hi = exp(object$mean + half),
                     ulo = exp(-z * grid), uhi = exp(z * grid))
  pts <- data.frame(rr = exp(log_rr), se = se_log_rr)
  ggplot2::ggplot() +
    ggplot2::geom_ribbon(data = band, ggplot2::aes(y = .data$se, xmin = .data$lo, xmax = .data$hi),
                         orientation = "y", fill = "#fdd49e", alpha = 0.7) +
    ggplot2::geom_path(data = band, ggplot2::aes(.data$ulo, .data$se), linetype = "dashed") +
    ggplot2::geom_path(data = band, ggplot2::aes(.data$uhi, .data$se), linetype = "dashed") +
    ggplot2::geom_vline(xintercept = 1, colour = "grey50") +
    ggplot2::geom_point(data = pts, ggplot2::aes(.data$rr, .data$se), colour = "#1f4e79") +
    ggplot2::scale_x_log10() + ggplot2::scale_y_reverse() +
    ggplot2::labs(x = "relative risk", y = "standard error of log relative risk",
                  title = sprintf("Empirical null: mean %.3f, sd %.3f (shaded: calibrated p > %.2g)",
                                  object$mean, object$sd, 1 - level))
}

#' @export
plot.sccs_empirical_null <- function(x, ...) { print(autoplot.sccs_empirical_null(x, ...)); invisible(x) }

#' Estimate every negative control of a study in its own model
#'
#' For each control the design keeps its covariate (no prior), the covariates in
#' \code{adjust} (with \code{prior}) and the age/season/calendar-time splines of the data, and
#' is fitted as \code{\link{sccs_fit}} would; the standard error is the Wald one, the input
#' \code{\link{sccs_fit_null}} expects (\code{hphawkes_py.sccs.fit_negative_controls}).
#'
#' @param data The design holding the negative-control exposures as covariates: an
#'   \code{sccs_data} (e.g. \code{\link{sccs_data_from_cdm}} with
#'   \code{negative_control_concept_ids}, or \code{sccs_simulate()}) or an
#'   \code{sccs_study} (its design is used).
#' @param controls Covariate ids of the negative controls (whole numbers or character labels;
#'   unique; not spline coefficients).
#' @param adjust Covariate ids kept in every control's model (e.g. co-medications).
#' @param prior,variance Prior of the \code{adjust} covariates.
#' @param spline_prior,spline_variance Prior of the spline coefficients.
#' @param tolerance,max_iterations,progress,backend,threads As in \code{\link{sccs_fit}}.
#' @return A data frame, one row per control in the order given: \code{covariate_id},
#'   \code{log_rr}, \code{se_log_rr}, \code{exposed_events}, \code{converged}. A control
#'   without a finite maximum-likelihood estimate (no event, or every event, in its exposed
#'   time) has \code{log_rr} \code{-Inf} or \code{Inf} and \code{se_log_rr} \code{Inf}.
#' @examplesIf hphawkes_available()
#' sim <- sccs_simulate(n_cases = 1500, n_drugs = 10, prevalence = 0.3, fraction_positive = 0,
#'                      seed = 4)  # ten drugs without effect
#' est <- sccs_fit_negative_controls(sim$data, controls = 1:10)
#' est
#' sccs_fit_null(est)
#' @export
sccs_fit_negative_controls <- function(data, controls, adjust = NULL, prior = "normal", variance = 1.0,
                                       spline_prior = "normal", spline_variance = 1.0, tolerance = 1e-8,
                                       max_iterations = 1000L, progress = FALSE, backend = "auto",
                                       threads = NULL) {
  .hp_check_args()
  if (inherits(data, "sccs_study")) data <- data$data
  df <- .hp_r(.hp_call(.hp_mod("sccs")$fit_negative_controls(.py_sccs_data(data),
    .calib_ids(controls, "controls"), adjust = .calib_ids(adjust, "adjust", empty_ok = TRUE), prior = prior,
    variance = .as_num(variance, "variance", FALSE), spline_prior = spline_prior,
    spline_variance = .as_num(spline_variance), tolerance = .as_num(tolerance, "tolerance", FALSE),
    max_iterations = .as_int(max_iterations, "max_iterations", FALSE),
    progress = .as_flag(progress, "progress"), backend = backend, threads = .as_int(threads))))
  .sccs_index_column(df)
}

# Covariate ids for Python: whole numbers as integers (ids of simulated or CDM data are ints, and
# a float 1.0 would be printed back as "1.0"), character labels as strings; never NA. Always a list.
.calib_ids <- function(ids, name, empty_ok = FALSE) {
  if (is.null(ids) || length(ids) == 0L) {
    if (empty_ok) return(list())
    .hp_stop(name, " must name at least one covariate id")
  }
  .hp_no_na(ids, name)
  if (is.factor(ids)) ids <- as.character(ids)
  if (is.character(ids)) return(as.list(ids))
  if (!is.numeric(ids) || any(ids != round(ids)) || any(abs(ids) > .Machine$integer.max))
    .hp_stop(name, " must be covariate ids (whole numbers or character labels), got ",
             paste(utils::head(format(ids), 3), collapse = ", "), " (", .hp_kind(ids), ")")
  as.list(as.integer(ids))
}

# One covariate id (see .calib_ids), as a scalar.
.calib_id <- function(id, name) {
  if (length(id) != 1L) .hp_stop(name, " must be one covariate id, got ", length(id), " values")
  .calib_ids(id, name)[[1L]]
}
