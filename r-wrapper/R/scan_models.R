# The scan models for categorical data (ordinal, multinomial) and the scans in time: purely
# temporal, seasonal, and spatial variation in temporal trends (SVTT).

# Days for Python: Dates as numpy datetime64[D] (whole days since 1970-01-01), whole numbers as
# int64 day numbers.
.np_days <- function(x, name) {
  .hp_no_na(x, name)
  if (inherits(x, "Date")) return(.hp_call(.np_count(as.numeric(x), name)$astype("datetime64[D]")))
  if (inherits(x, c("POSIXt", "character", "factor")))
    .hp_stop(name, " must be Dates or whole day numbers, got ", .hp_kind(x), " (use as.Date())")
  .np_count(x, name)
}

# A study period (two ends, the same kind as the times) for Python, or NULL.
.np_period <- function(study_period, times) {
  if (is.null(study_period)) return(NULL)
  if (length(study_period) != 2L)
    .hp_stop("study_period must be NULL or its two ends (first and last day), got ", length(study_period), " values")
  if (inherits(times, "Date") && !inherits(study_period, "Date"))
    .hp_stop("study_period must be Dates when times are Dates, got ", .hp_kind(study_period))
  a <- .np_days(study_period, "study_period")
  reticulate::tuple(reticulate::py_get_item(a, 0L), reticulate::py_get_item(a, 1L))
}

# Categories of the ordinal / multinomial scans: numbers as float64, labels (a factor by its
# labels) as a list of strings.
.np_categories <- function(categories, ordinal) {
  .hp_no_na(categories, "categories")
  if (is.factor(categories)) {
    if (ordinal) .hp_stop("categories must be numbers for the ordinal scan (ordered by value); a factor's ",
                          "order is its levels': pass as.integer(categories)")
    categories <- as.character(categories)
  }
  if (is.character(categories)) {
    if (ordinal) .hp_stop("categories must be numbers for the ordinal scan (ordered by value), got character")
    return(as.list(categories))
  }
  .np_double(categories, "categories")
}

#' Kulldorff's spatial scan statistic for ordinal data (ordered categories)
#'
#' Calls \code{hphawkes_py.scan.ordinal}: SaTScan's ordinal model (Jung, Kulldorff & Klassen 2007).
#' Every case has an ordered category (a stage, a severity grade) and a location; a cluster is a
#' circle whose cases lean to the higher (\code{direction = "high"}) or lower categories than
#' outside. The null permutes the categories among the cases.
#'
#' @param coords Numeric matrix or data frame (n x 2): location of each case.
#' @param categories The category of each case: numbers, ordered by value (at least 2 distinct).
#' @param location_ids Optional ids (cases of one location share its id).
#' @param max_population Maximum window size as a fraction of the cases, in (0, 0.5].
#' @param max_distance \code{NULL} or maximum circle radius (km for great-circle distances).
#' @param n_replicates Monte Carlo replicates (permutations of the categories).
#' @param direction \code{"high"}, \code{"low"} or \code{"both"}.
#' @param secondary \code{"no-overlap"}.
#' @param grid_cell \code{NULL} or grid spacing for circle centres.
#' @param distance \code{"euclidean"} or \code{"great_circle"} (coords = latitude, longitude).
#' @param seed,progress,backend,threads As in \code{\link{scan_bernoulli}}.
#' @return An object of class \code{hphawkes_scan} (as \code{scan_bernoulli}), \code{model =
#'   "ordinal"}: \code{clusters$cases} the window's cases; SaTScan's category table in list
#'   columns, one entry per group of categories (those pooled by the order restriction are one
#'   group): \code{categories}, \code{observed_by_category}, \code{expected_by_category},
#'   \code{ode_by_category}, \code{relative_risk_by_category}, \code{percent_by_category};
#'   \code{cluster_type} (\code{"high"} or \code{"low"}).
#' @seealso \code{\link{scan_multinomial}}, \code{\link{scan_write_satscan}}.
#' @examplesIf hphawkes_available()
#' set.seed(2)  # stages 1-3 of 300 cancers at 30 towns, later stages around town 1
#' xy <- cbind(runif(30, 0, 10), runif(30, 0, 10))
#' town <- sample(30, 300, replace = TRUE)
#' near <- sqrt((xy[town, 1] - xy[1, 1])^2 + (xy[town, 2] - xy[1, 2])^2) < 2
#' stage <- ifelse(near, sample(1:3, 300, TRUE, c(.2, .3, .5)), sample(1:3, 300, TRUE, c(.5, .3, .2)))
#' res <- scan_ordinal(xy[town, ], stage, location_ids = town, n_replicates = 49, seed = 1)
#' res$clusters[1, c("cases", "cluster_type", "p_value")]
#' res$clusters$observed_by_category[[1]]
#' @export
scan_ordinal <- function(coords, categories, location_ids = NULL, max_population = 0.5, max_distance = NULL,
                         n_replicates = 999L, direction = "high", secondary = "no-overlap", grid_cell = NULL,
                         distance = "euclidean", seed = NULL, progress = FALSE, backend = "auto", threads = NULL) {
  .hp_check_args()
  kw <- list(max_population = .as_num(max_population), max_distance = .as_num(max_distance),
             n_replicates = .as_int(n_replicates), direction = direction, secondary = secondary,
             grid_cell = .as_num(grid_cell), distance = distance, seed = .as_int(seed),
             progress = .as_flag(progress, "progress"), backend = backend, threads = .as_int(threads))
  if (!is.null(location_ids)) kw$location_ids <- .np_ids(location_ids, "location_ids")
  res <- .hp_call(do.call(.hp_mod("scan")$ordinal, c(list(.np_double(as.matrix(coords), "coords"),
    .np_categories(categories, TRUE)), kw)))
  .hp_scan_result(res)
}

#' Kulldorff's spatial scan statistic for multinomial data (unordered categories)
#'
#' Calls \code{hphawkes_py.scan.multinomial}: SaTScan's multinomial model (Jung, Kulldorff &
#' Richard 2010). Every case has a category (a subtype, a serotype) and a location; a cluster is a
#' circle whose mix of categories differs from outside, in any way. The null permutes the
#' categories among the cases.
#'
#' @param categories The category of each case: labels (character or factor) or numbers, at least
#'   2 distinct; reported in SaTScan's (sorted) order.
#' @inheritParams scan_ordinal
#' @return An object of class \code{hphawkes_scan}, \code{model = "multinomial"}: as
#'   \code{\link{scan_ordinal}}, one entry per category (no \code{cluster_type}).
#' @seealso \code{\link{scan_ordinal}}, \code{\link{scan_write_satscan}}.
#' @examplesIf hphawkes_available()
#' set.seed(5)  # serotypes of 300 isolates at 30 towns, B more common around town 1
#' xy <- cbind(runif(30, 0, 10), runif(30, 0, 10))
#' town <- sample(30, 300, replace = TRUE)
#' near <- sqrt((xy[town, 1] - xy[1, 1])^2 + (xy[town, 2] - xy[1, 2])^2) < 2
#' sero <- ifelse(near, sample(c("A", "B", "C"), 300, TRUE, c(.2, .6, .2)),
#'                sample(c("A", "B", "C"), 300, TRUE, c(.4, .2, .4)))
#' res <- scan_multinomial(xy[town, ], sero, location_ids = town, n_replicates = 49, seed = 1)
#' res$clusters[1, c("cases", "p_value")]
#' res$clusters$observed_by_category[[1]]
#' @export
scan_multinomial <- function(coords, categories, location_ids = NULL, max_population = 0.5, max_distance = NULL,
                             n_replicates = 999L, secondary = "no-overlap", grid_cell = NULL, distance = "euclidean",
                             seed = NULL, progress = FALSE, backend = "auto", threads = NULL) {
  .hp_check_args()
  kw <- list(max_population = .as_num(max_population), max_distance = .as_num(max_distance),
             n_replicates = .as_int(n_replicates), secondary = secondary, grid_cell = .as_num(grid_cell),
             distance = distance, seed = .as_int(seed), progress = .as_flag(progress, "progress"),
             backend = backend, threads = .as_int(threads))
  if (!is.null(location_ids)) kw$location_ids <- .np_ids(location_ids, "location_ids")
  res <- .hp_call(do.call(.hp_mod("scan")$multinomial, c(list(.np_double(as.matrix(coords), "coords"),
    .np_categories(categories, FALSE)), kw)))
  .hp_scan_result(res)
}

# The R object of a Python TemporalResult.
.hp_temporal_result <- function(res, dates) {
  out <- .hp_r(res)
  cl <- out$clusters
  if (dates && out$analysis != "seasonal" && nrow(cl)) {
    cl$start <- as.Date(cl$start)
    cl$end <- as.Date(cl$end)
  }
  structure(list(clusters = cl, null_llr = out$null_llr, model = out$model, analysis = out$analysis,
                 n_cases = out$n_cases, n_units = out$n_units, min_len = out$min_len, max_len = out$max_len,
                 units = data.frame(unit = seq_len(out$n_units), cases = out$unit_cases,
                                    expected = out$unit_expected),
                 backend = out$backend, time_trend = out$time_trend, python = res),
            class = "hphawkes_temporal_scan")
}

.hp_temporal_kw <- function(population, controls, model, study_period, times, max_temporal_size,
                            max_temporal_length, min_temporal_length, direction, min_cases, n_replicates, seed,
                            progress, backend, threads) {
  kw <- list(model = model, study_period = .np_period(study_period, times),
             max_temporal_size = .as_num(max_temporal_size), max_temporal_length = .as_int(max_temporal_length),
             min_temporal_length = .as_int(min_temporal_length), direction = direction,
             min_cases = .as_int(min_cases), n_replicates = .as_int(n_replicates), seed = .as_int(seed),
             progress = .as_flag(progress, "progress"), backend = backend, threads = .as_int(threads))
  if (!is.null(population)) kw$population <- .np_double(population, "population")
  if (!is.null(controls)) kw$controls <- .np_count(controls, "controls")
  kw
}

#' Kulldorff's purely temporal scan statistic (retrospective or prospective)
#'
#' Calls \code{hphawkes_py.scan.temporal}: SaTScan's purely temporal analysis (types 2 and 6),
#' discrete Poisson or Bernoulli. The cases of the whole region are counted in time units of
#' \code{time_aggregation} days (counted back from the last day); a window is a run of units.
#'
#' @param times Day of each row: \code{Date}s or whole day numbers.
#' @param cases Non-negative whole-number case counts per row.
#' @param population \code{model = "poisson"}: \code{NULL} (constant) or the population at risk on
#'   each day of the study period (one value per day).
#' @param controls \code{model = "bernoulli"}: the controls of each row.
#' @param model \code{"poisson"} or \code{"bernoulli"}.
#' @param study_period \code{NULL} (the first and last day of \code{times}) or its two ends, the
#'   same kind as \code{times}.
#' @param time_aggregation Days per time unit (whole number).
#' @param max_temporal_size Longest window as a fraction of the study period, in (0, 0.9].
#' @param max_temporal_length \code{NULL} or the longest window in days (overrides
#'   \code{max_temporal_size}).
#' @param min_temporal_length Shortest window, days.
#' @param prospective Only windows that end on the last unit.
#' @param direction \code{"high"}, \code{"low"} or \code{"both"}.
#' @param min_cases High-rate windows need at least this many cases.
#' @param n_replicates Monte Carlo replicates.
#' @param seed,progress,backend,threads As in \code{\link{scan_bernoulli}}.
#' @param time_trend \code{model = "poisson"}: \code{NULL} (no adjustment), \code{"loglinear"} (the
#'   expected cases adjusted for a log-linear trend of the risk, \code{trend_percent} or else estimated
#'   from the units' cases) or \code{"logquadratic"} (a log-quadratic trend, estimated); SaTScan's
#'   time-trend adjustments 2, 3 and 5.
#' @param trend_percent \code{time_trend = "loglinear"}: the change of the risk per year, percent
#'   (above -100); \code{NULL} estimates it.
#' @return An object of class \code{hphawkes_temporal_scan}: \code{clusters} (data frame, most
#'   likely first: \code{cluster}, \code{start}, \code{end} (\code{Date}s when \code{times} are),
#'   \code{n_units}, \code{cases}, \code{expected}, \code{observed_over_expected},
#'   \code{relative_risk}, \code{log_likelihood_ratio}, \code{p_value}, Bernoulli
#'   \code{population}), \code{null_llr}, \code{units} (cases and expected cases per unit),
#'   \code{analysis}, \code{model}, \code{time_trend} (the adjustment made, with
#'   \code{daily_percent}, the figure SaTScan reports; \code{NULL} without); \code{summary()} and
#'   \code{as.data.frame()} give the cluster table; \code{\link{scan_write_satscan}} writes SaTScan's
#'   files.
#' @seealso \code{\link{scan_seasonal}}, \code{\link{scan_svtt}}.
#' @examplesIf hphawkes_available()
#' set.seed(5)  # 120 days, three times the rate on days 71-80
#' days <- as.Date("2024-01-01") + 0:119
#' cases <- rpois(120, ifelse(seq_len(120) %in% 71:80, 6, 2))
#' res <- scan_temporal(days, cases, n_replicates = 99, seed = 1)
#' res
#' res$clusters[, c("start", "end", "cases", "expected", "p_value")]
#' @export
scan_temporal <- function(times, cases, population = NULL, controls = NULL, model = "poisson", study_period = NULL,
                          time_aggregation = 1L, max_temporal_size = 0.5, max_temporal_length = NULL,
                          min_temporal_length = 1L, prospective = FALSE, direction = "high", min_cases = 2L,
                          n_replicates = 999L, seed = NULL, progress = FALSE, backend = "auto", threads = NULL,
                          time_trend = NULL, trend_percent = NULL) {
  .hp_check_args()
  kw <- .hp_temporal_kw(population, controls, model, study_period, times, max_temporal_size, max_temporal_length,
                        min_temporal_length, direction, min_cases, n_replicates, seed, progress, backend, threads)
  kw$time_aggregation <- .as_int(time_aggregation, "time_aggregation", FALSE)
  kw$prospective <- .as_flag(prospective, "prospective")
  if (!is.null(time_trend)) kw$time_trend <- time_trend
  if (!is.null(trend_percent)) kw$trend_percent <- .as_num(trend_percent)
  res <- .hp_call(do.call(.hp_mod("scan")$temporal, c(list(.np_days(times, "times"), .np_count(cases, "cases")), kw)))
  .hp_temporal_result(res, inherits(times, "Date"))
}

#' The seasonal temporal scan statistic: the days of the year as a closed loop
#'
#' Calls \code{hphawkes_py.scan.seasonal} (SaTScan 10's analysis type 7): every date is folded onto
#' its day of a 365-day year (29 February counts as 28 February) and a window is a run of days of
#' that year, which may wrap from December into January.
#'
#' @param times \code{Date} of each row (the study period must cover at least a year).
#' @param population \code{model = "poisson"}: \code{NULL} (constant) or the population on each day
#'   of the study period.
#' @param max_temporal_size Longest window as a fraction of the year, in (0, 0.9].
#' @param min_temporal_length Shortest window, days (at most 90).
#' @inheritParams scan_temporal
#' @return An object of class \code{hphawkes_temporal_scan} (as \code{\link{scan_temporal}},
#'   \code{analysis = "seasonal"}); \code{start} and \code{end} are days of the year,
#'   \code{"MM/DD"}.
#' @examplesIf hphawkes_available()
#' set.seed(2)  # three years, twice the rate from 20 December to 10 January
#' days <- seq(as.Date("2020-01-01"), as.Date("2022-12-31"), by = "day")
#' md <- as.integer(format(days, "%m%d"))
#' cases <- rpois(length(days), ifelse(md >= 1220 | md <= 110, 2, 1))
#' res <- scan_seasonal(days, cases, max_temporal_size = 0.1, n_replicates = 49, seed = 1)
#' res$clusters[, c("start", "end", "cases", "p_value")]
#' @export
scan_seasonal <- function(times, cases, population = NULL, controls = NULL, model = "poisson", study_period = NULL,
                          max_temporal_size = 0.5, max_temporal_length = NULL, min_temporal_length = 1L,
                          direction = "high", min_cases = 2L, n_replicates = 999L, seed = NULL, progress = FALSE,
                          backend = "auto", threads = NULL) {
  .hp_check_args()
  if (!inherits(times, "Date"))
    .hp_stop("times must be Dates for the seasonal scan (the seasonal year needs a calendar), got ", .hp_kind(times))
  kw <- .hp_temporal_kw(population, controls, model, study_period, times, max_temporal_size, max_temporal_length,
                        min_temporal_length, direction, min_cases, n_replicates, seed, progress, backend, threads)
  res <- .hp_call(do.call(.hp_mod("scan")$seasonal, c(list(.np_days(times, "times"), .np_count(cases, "cases")), kw)))
  .hp_temporal_result(res, TRUE)
}

#' @export
print.hphawkes_temporal_scan <- function(x, ...) {
  cat(reticulate::py_str(x$python), "\n", sep = "")
  invisible(x)
}

#' @export
summary.hphawkes_temporal_scan <- function(object, ...) object$clusters

#' @export
as.data.frame.hphawkes_temporal_scan <- function(x, ...) x$clusters

#' Spatial variation in temporal trends (SVTT) scan statistic
#'
#' Calls \code{hphawkes_py.scan.svtt}: SaTScan's analysis type 5 (Poisson). Under the null the
#' whole region follows one log-linear time trend; a window (a circle of locations) has its own
#' trend inside and another outside. \code{direction = "high"} keeps windows whose trend inside
#' is steeper than the global one. The Monte Carlo redistributes each time unit's cases over the
#' locations in proportion to their population.
#'
#' @param coords Numeric matrix or data frame (n x 2): location of each row.
#' @param times Day of each row: \code{Date}s or whole day numbers.
#' @param cases Non-negative whole-number case counts per row.
#' @param population Population of each row's location (the same on every row of a location).
#' @param time_aggregation Days per time unit (e.g. 365 for yearly units of dates).
#' @param study_period \code{NULL} or its two ends, the same kind as \code{times}.
#' @param max_population Largest circle as a fraction of the total population, in (0, 0.5].
#' @param direction \code{"high"}, \code{"low"} or \code{"both"}.
#' @param distance \code{"euclidean"} or \code{"great_circle"} (coords = latitude, longitude).
#' @param location_ids Optional ids (rows of one location share its id).
#' @param n_replicates Monte Carlo replicates.
#' @param seed,progress,backend,threads As in \code{\link{scan_bernoulli}}.
#' @return An object of class \code{hphawkes_svtt}: \code{clusters} (data frame, most likely
#'   first: \code{center}, \code{radius}, \code{location_ids} (list column), \code{n_locations},
#'   \code{population}, \code{cases}, \code{expected}, \code{observed_over_expected},
#'   \code{relative_risk}, \code{inside_trend}, \code{outside_trend} (percent per year for Dates,
#'   per unit otherwise), \code{log_likelihood_ratio}, \code{p_value}), \code{global_trend},
#'   \code{null_llr}; \code{summary()} and \code{as.data.frame()} give the cluster table;
#'   \code{\link{scan_write_satscan}} writes SaTScan's files.
#' @seealso \code{\link{scan_temporal}}, \code{\link{scan_space_time}}.
#' @examplesIf hphawkes_available()
#' set.seed(3)  # 20 locations over 8 units; cases rise 30 % a unit at the 4 near (1, 1)
#' xy <- cbind(runif(20, 0, 10), runif(20, 0, 10))
#' xy[1:4, ] <- cbind(1 + 0.2 * 0:3, 1 + 0.2 * 0:3)
#' grid <- expand.grid(loc = 1:20, t = 0:7)
#' cases <- rpois(nrow(grid), 8 * ifelse(grid$loc <= 4, 1.3^grid$t, 1))
#' res <- scan_svtt(xy[grid$loc, ], grid$t, cases, rep(1000, nrow(grid)), n_replicates = 49, seed = 1)
#' res
#' res$clusters[1, c("n_locations", "inside_trend", "outside_trend", "p_value")]
#' @export
scan_svtt <- function(coords, times, cases, population, time_aggregation = 1L, study_period = NULL,
                      max_population = 0.5, direction = "high", distance = "euclidean", location_ids = NULL,
                      n_replicates = 999L, seed = NULL, progress = FALSE, backend = "auto", threads = NULL) {
  .hp_check_args()
  kw <- list(time_aggregation = .as_int(time_aggregation, "time_aggregation", FALSE),
             study_period = .np_period(study_period, times), max_population = .as_num(max_population),
             direction = direction, distance = distance, n_replicates = .as_int(n_replicates), seed = .as_int(seed),
             progress = .as_flag(progress, "progress"), backend = backend, threads = .as_int(threads))
  if (!is.null(location_ids)) kw$location_ids <- .np_ids(location_ids, "location_ids")
  res <- .hp_call(do.call(.hp_mod("scan")$svtt, c(list(.np_double(as.matrix(coords), "coords"),
    .np_days(times, "times"), .np_count(cases, "cases"), .np_double(population, "population")), kw)))
  out <- .hp_r(res)
  structure(list(clusters = out$clusters, global_trend = out$global_trend, null_llr = out$null_llr,
                 n_cases = out$n_cases, n_units = out$n_units, backend = out$backend, python = res),
            class = "hphawkes_svtt")
}

#' @export
print.hphawkes_svtt <- function(x, ...) {
  cat(reticulate::py_str(x$python), "\n", sep = "")
  invisible(x)
}

#' @export
summary.hphawkes_svtt <- function(object, ...) {
  cl <- object$clusters
  cl$location_ids <- NULL
  cl
}

#' @export
as.data.frame.hphawkes_svtt <- function(x, ...) x$clusters

#' Kulldorff's space-time scan statistic for survival times (exponential model)
#'
#' Calls \code{hphawkes_py.scan.space_time_exponential}: SaTScan's space-time exponential model
#' (\code{ModelType=4}, retrospective or prospective). Every patient has a location, a date, a
#' survival time and a censoring flag; a cylinder (a circle over an interval of days) whose
#' patients die sooner than expected is a high-rate cluster. The null permutes the (time,
#' censoring) pairs among the patients.
#'
#' @param coords Numeric matrix or data frame (n x 2): location of each patient.
#' @param survival_times Positive survival (or censoring) time of each patient.
#' @param times The date of each patient: \code{Date}s or whole day numbers.
#' @param censored \code{NULL} (none censored) or \code{TRUE}/\code{FALSE} (or 1/0) per patient.
#' @param max_temporal Longest interval of a cylinder (days).
#' @param prospective Only intervals that end on the last day.
#' @param max_temporal_percent \code{NULL}, or the longest interval as a percentage of the study period.
#' @param min_cases Minimum uncensored patients in a high-rate cluster (at least 2).
#' @param day_of_week Adjust for the day of the week (SaTScan's \code{AdjustForWeeklyTrends}): the
#'   null permutes the pairs among each weekday's patients only.
#' @param purely_temporal Also the purely temporal clusters (every location; SaTScan's
#'   \code{IncludePurelyTemporal}).
#' @param purely_spatial Also the purely spatial clusters (each circle over the whole study period;
#'   SaTScan's \code{IncludePurelySpatial}).
#' @inheritParams scan_ordinal
#' @return An object of class \code{hphawkes_scan}, \code{model = "space_time_exponential"}:
#'   \code{clusters} has \code{start} and \code{end} (days since 1970-01-01 for \code{Date}s),
#'   \code{cases} (uncensored patients in the cylinder), \code{population} (its patients),
#'   \code{expected} (expected deaths) and \code{observed_over_expected}.
#' @seealso \code{\link{scan_exponential}}, \code{\link{scan_space_time}}.
#' @examplesIf hphawkes_available()
#' set.seed(3)  # shorter survival around town 1 on days 40-49
#' xy <- cbind(runif(30, 0, 10), runif(30, 0, 10))
#' town <- sample(30, 600, replace = TRUE)
#' day <- sample(0:99, 600, replace = TRUE)
#' hot <- sqrt((xy[town, 1] - xy[1, 1])^2 + (xy[town, 2] - xy[1, 2])^2) < 2.5 & day >= 40 & day < 50
#' tm <- rexp(600, ifelse(hot, 1, 1 / 6)) + 0.001
#' res <- scan_space_time_exponential(xy[town, ], pmin(tm, 8), day, tm > 8, location_ids = town,
#'                                    max_temporal = 20, n_replicates = 99, seed = 1)
#' res$clusters[1, c("start", "end", "cases", "expected", "p_value")]
#' @export
scan_space_time_exponential <- function(coords, survival_times, times, censored = NULL, location_ids = NULL,
                                        max_population = 0.5, max_distance = NULL, max_temporal = 7L,
                                        prospective = FALSE, max_temporal_percent = NULL, min_cases = 2L,
                                        n_replicates = 999L, direction = "high", secondary = "no-overlap",
                                        distance = "euclidean", seed = NULL, progress = FALSE, backend = "auto",
                                        threads = NULL, day_of_week = FALSE, purely_temporal = FALSE,
                                        purely_spatial = FALSE) {
  .hp_check_args()
  .hp_no_na(survival_times, "survival_times")
  .hp_no_na(times, "times")
  t <- if (inherits(times, "Date")) as.numeric(times) else times
  kw <- list(max_population = .as_num(max_population), max_distance = .as_num(max_distance),
             max_temporal = .as_int(max_temporal), prospective = .as_flag(prospective, "prospective"),
             min_cases = .as_int(min_cases), n_replicates = .as_int(n_replicates), direction = direction,
             secondary = secondary, distance = distance, seed = .as_int(seed),
             progress = .as_flag(progress, "progress"), backend = backend, threads = .as_int(threads))
  if (!is.null(location_ids)) kw$location_ids <- .np_ids(location_ids, "location_ids")
  if (!is.null(max_temporal_percent)) kw$max_temporal_percent <- .as_num(max_temporal_percent)
  if (.as_flag(day_of_week, "day_of_week")) kw$day_of_week <- TRUE
  if (.as_flag(purely_temporal, "purely_temporal")) kw$purely_temporal <- TRUE
  if (.as_flag(purely_spatial, "purely_spatial")) kw$purely_spatial <- TRUE
  cens <- .np_censored(censored)
  res <- .hp_call(do.call(.hp_mod("scan")$space_time_exponential, c(list(
    .np_double(as.matrix(coords), "coords"), .np_double(survival_times, "survival_times"),
    .np_count(t, "times"), cens), kw)))
  .hp_scan_result(res)
}

#' Kulldorff's space-time scan statistic for continuous measurements (normal model)
#'
#' Calls \code{hphawkes_py.scan.space_time_normal}: SaTScan's space-time normal model
#' (\code{ModelType=5}, retrospective or prospective), and its weighted normal model with
#' \code{weights}. Every observation has a location, a date and a measurement; a cylinder (a circle
#' over an interval of days) whose mean is higher (lower) than outside, with a common variance, is a
#' cluster. The null permutes the measurements (with their weights) among the observations.
#'
#' @param coords Numeric matrix or data frame (n x 2): location of each observation.
#' @param values Numeric measurement of each observation.
#' @param times The date of each observation: \code{Date}s or whole day numbers.
#' @param weights \code{NULL} or positive weight of each observation (weighted normal model).
#' @param max_temporal Longest interval of a cylinder (days).
#' @param prospective Only intervals that end on the last day.
#' @param max_temporal_percent \code{NULL}, or the longest interval as a percentage of the study period.
#' @param min_cases \code{NULL} (SaTScan's default) or minimum observations in a cluster.
#' @param day_of_week Adjust for the day of the week (SaTScan's \code{AdjustForWeeklyTrends}): the null permutes
#'   the measurements among each weekday's observations only.
#' @param surveillance_start \code{NULL}, or with \code{prospective} the first day (a \code{Date} or day number) of
#'   a surveillance whose earlier analyses the p-values are adjusted for (SaTScan's \code{AdjustForEarlierAnalyses}).
#' @param purely_temporal Also the purely temporal clusters (every location; SaTScan's
#'   \code{IncludePurelyTemporal}).
#' @param purely_spatial Also the purely spatial clusters (every circle over the whole study period; SaTScan's
#'   \code{IncludePurelySpatial}); not with \code{surveillance_start}.
#' @inheritParams scan_ordinal
#' @return An object of class \code{hphawkes_scan}, \code{model = "space_time_normal"} (or
#'   \code{"space_time_weighted_normal"}): \code{clusters} has \code{start} and \code{end} (days since
#'   1970-01-01 for \code{Date}s), \code{cases} (the cylinder's observations), \code{mean_inside},
#'   \code{mean_outside}, \code{variance} and \code{std} (SaTScan's).
#' @seealso \code{\link{scan_normal}}, \code{\link{scan_space_time}}.
#' @examplesIf hphawkes_available()
#' set.seed(3)  # higher measurements around town 1 on days 20-29
#' xy <- cbind(runif(30, 0, 10), runif(30, 0, 10))
#' town <- sample(30, 900, replace = TRUE)
#' day <- sample(0:59, 900, replace = TRUE)
#' hot <- sqrt((xy[town, 1] - xy[1, 1])^2 + (xy[town, 2] - xy[1, 2])^2) < 2.5 & day >= 20 & day < 30
#' v <- rnorm(900, ifelse(hot, 13, 10), 2)
#' res <- scan_space_time_normal(xy[town, ], v, day, location_ids = town, max_temporal = 14,
#'                               n_replicates = 99, seed = 1)
#' res$clusters[1, c("start", "end", "cases", "mean_inside", "p_value")]
#' @export
scan_space_time_normal <- function(coords, values, times, weights = NULL, location_ids = NULL,
                                   max_population = 0.5, max_distance = NULL, max_temporal = 7L,
                                   prospective = FALSE, max_temporal_percent = NULL, min_cases = NULL,
                                   n_replicates = 999L, direction = "high", secondary = "no-overlap",
                                   distance = "euclidean", seed = NULL, progress = FALSE, backend = "auto",
                                   threads = NULL, day_of_week = FALSE, surveillance_start = NULL,
                                   purely_temporal = FALSE, purely_spatial = FALSE) {
  .hp_check_args()
  .hp_no_na(values, "values")
  .hp_no_na(times, "times")
  t <- if (inherits(times, "Date")) as.numeric(times) else times
  kw <- list(max_population = .as_num(max_population), max_distance = .as_num(max_distance),
             max_temporal = .as_int(max_temporal), prospective = .as_flag(prospective, "prospective"),
             min_cases = .as_int(min_cases), n_replicates = .as_int(n_replicates), direction = direction,
             secondary = secondary, distance = distance, seed = .as_int(seed),
             progress = .as_flag(progress, "progress"), backend = backend, threads = .as_int(threads))
  if (!is.null(weights)) kw$weights <- .np_double(weights, "weights")
  if (!is.null(location_ids)) kw$location_ids <- .np_ids(location_ids, "location_ids")
  if (!is.null(max_temporal_percent)) kw$max_temporal_percent <- .as_num(max_temporal_percent)
  if (.as_flag(day_of_week, "day_of_week")) kw$day_of_week <- TRUE
  if (.as_flag(purely_temporal, "purely_temporal")) kw$purely_temporal <- TRUE
  if (.as_flag(purely_spatial, "purely_spatial")) kw$purely_spatial <- TRUE
  if (!is.null(surveillance_start))
    kw$surveillance_start <- .as_int(if (inherits(surveillance_start, "Date")) as.numeric(surveillance_start)
                                     else surveillance_start, "surveillance_start")
  res <- .hp_call(do.call(.hp_mod("scan")$space_time_normal, c(list(
    .np_double(as.matrix(coords), "coords"), .np_double(values, "values"), .np_count(t, "times")), kw)))
  .hp_scan_result(res)
}

#' Kulldorff's purely temporal scan statistic for continuous measurements (normal model)
#'
#' Calls \code{hphawkes_py.scan.temporal_normal}: SaTScan's purely temporal normal analysis
#' (\code{ModelType=5}, \code{AnalysisType} 2 or 6), weighted with \code{weights}: intervals of days whose
#' mean is higher (lower) than outside, a common variance; the null permutes the measurements among the
#' observations.
#'
#' @param times The date of each observation: \code{Date}s or whole day numbers.
#' @param values Numeric measurement of each observation.
#' @param weights \code{NULL} or positive weight of each observation (weighted normal model).
#' @param max_temporal \code{NULL} or the longest interval (days); else \code{max_temporal_percent}.
#' @param max_temporal_percent The longest interval as a percentage of the study period (default 50).
#' @param prospective Only intervals that end on the last day.
#' @param min_cases \code{NULL} (SaTScan's default) or minimum observations in a cluster.
#' @param day_of_week Adjust for the day of the week (the null permutes within weekdays).
#' @inheritParams scan_ordinal
#' @return An object of class \code{hphawkes_scan}, \code{model = "temporal_normal"} (or
#'   \code{"temporal_weighted_normal"}): \code{clusters} has \code{start}, \code{end}, \code{cases} (the
#'   interval's observations), \code{mean_inside}, \code{mean_outside}, \code{variance} and \code{std}.
#' @seealso \code{\link{scan_space_time_normal}}, \code{\link{scan_temporal}}.
#' @examplesIf hphawkes_available()
#' set.seed(4)  # measurements that rise on days 40-49
#' day <- sample(0:99, 800, replace = TRUE)
#' v <- rnorm(800, ifelse(day >= 40 & day < 50, 22.5, 20), 3)
#' res <- scan_temporal_normal(day, v, max_temporal = 20, n_replicates = 99, seed = 1)
#' res$clusters[1, c("start", "end", "cases", "mean_inside", "p_value")]
#' @export
scan_temporal_normal <- function(times, values, weights = NULL, max_temporal = NULL, max_temporal_percent = 50,
                                 prospective = FALSE, min_cases = NULL, n_replicates = 999L, direction = "high",
                                 seed = NULL, progress = FALSE, backend = "auto", threads = NULL,
                                 day_of_week = FALSE) {
  .hp_check_args()
  .hp_no_na(values, "values")
  .hp_no_na(times, "times")
  t <- if (inherits(times, "Date")) as.numeric(times) else times
  kw <- list(max_temporal = .as_int(max_temporal), max_temporal_percent = .as_num(max_temporal_percent),
             prospective = .as_flag(prospective, "prospective"), min_cases = .as_int(min_cases),
             n_replicates = .as_int(n_replicates), direction = direction, seed = .as_int(seed),
             progress = .as_flag(progress, "progress"), backend = backend, threads = .as_int(threads),
             day_of_week = .as_flag(day_of_week, "day_of_week"))
  if (!is.null(weights)) kw$weights <- .np_double(weights, "weights")
  res <- .hp_call(do.call(.hp_mod("scan")$temporal_normal, c(list(.np_count(t, "times"),
    .np_double(values, "values")), kw)))
  .hp_scan_result(res)
}

#' Kulldorff's purely temporal scan statistic for survival times (exponential model)
#'
#' Calls \code{hphawkes_py.scan.temporal_exponential}: SaTScan's purely temporal exponential analysis
#' (\code{ModelType=4}, \code{AnalysisType} 2 or 6): intervals of days whose patients die sooner (later) than
#' expected; the null permutes the (time, censoring) pairs among the patients.
#'
#' @param times The date of each patient: \code{Date}s or whole day numbers.
#' @param survival_times Positive survival (or censoring) time of each patient.
#' @param censored \code{NULL} (none censored) or \code{TRUE}/\code{FALSE} (or 1/0) per patient.
#' @param max_temporal \code{NULL} or the longest interval (days); else \code{max_temporal_percent}.
#' @param max_temporal_percent The longest interval as a percentage of the study period (default 50).
#' @param prospective Only intervals that end on the last day.
#' @param min_cases Minimum uncensored patients in a high-rate cluster (at least 2).
#' @param day_of_week Adjust for the day of the week (the null permutes within weekdays).
#' @inheritParams scan_ordinal
#' @return An object of class \code{hphawkes_scan}, \code{model = "temporal_exponential"}: \code{clusters} has
#'   \code{start}, \code{end}, \code{cases} (uncensored patients), \code{population} (patients) and
#'   \code{expected} (expected deaths).
#' @seealso \code{\link{scan_space_time_exponential}}.
#' @examplesIf hphawkes_available()
#' set.seed(2)  # shorter survival among the patients of days 40-49
#' day <- sample(0:99, 600, replace = TRUE)
#' tm <- rexp(600, ifelse(day >= 40 & day < 50, 1, 1 / 6)) + 0.001
#' res <- scan_temporal_exponential(day, pmin(tm, 8), tm > 8, max_temporal = 20, n_replicates = 99, seed = 1)
#' res$clusters[1, c("start", "end", "cases", "expected", "p_value")]
#' @export
scan_temporal_exponential <- function(times, survival_times, censored = NULL, max_temporal = NULL,
                                      max_temporal_percent = 50, prospective = FALSE, min_cases = 2L,
                                      n_replicates = 999L, direction = "high", seed = NULL, progress = FALSE,
                                      backend = "auto", threads = NULL, day_of_week = FALSE) {
  .hp_check_args()
  .hp_no_na(survival_times, "survival_times")
  .hp_no_na(times, "times")
  t <- if (inherits(times, "Date")) as.numeric(times) else times
  kw <- list(max_temporal = .as_int(max_temporal), max_temporal_percent = .as_num(max_temporal_percent),
             prospective = .as_flag(prospective, "prospective"), min_cases = .as_int(min_cases),
             n_replicates = .as_int(n_replicates), direction = direction, seed = .as_int(seed),
             progress = .as_flag(progress, "progress"), backend = backend, threads = .as_int(threads),
             day_of_week = .as_flag(day_of_week, "day_of_week"))
  cens <- .np_censored(censored)
  res <- .hp_call(do.call(.hp_mod("scan")$temporal_exponential, c(list(.np_count(t, "times"),
    .np_double(survival_times, "survival_times"), cens), kw)))
  .hp_scan_result(res)
}

#' Kulldorff's scan statistic for points in a region (continuous Poisson model)
#'
#' Calls \code{hphawkes_py.scan.continuous_poisson}: SaTScan's continuous Poisson model
#' (\code{ModelType=6}). The cases are points in an observable region made of convex polygons; a
#' circle expects \eqn{\pi d^2 N / A} of the N points (A: the region's area) and a circle with more
#' is a high-rate cluster. The null spreads N uniform points over the region.
#'
#' @param points Numeric matrix or data frame (N x 2): the cases' planar coordinates, distinct.
#' @param polygons Character vector, one convex polygon each in SaTScan's form
#'   (\code{"Y <= 10000,X >= 0,Y >= X"}).
#' @param centres \code{NULL} (the points) or a matrix (m x 2) of circle centres (SaTScan's grid file).
#' @param max_radius_share Largest radius as a share of \eqn{\sqrt{A/\pi}} (SaTScan's
#'   \code{MaxSpatialSizeInPopulationAtRisk} / 100).
#' @param min_cases Minimum points in a high-rate cluster (at least 2).
#' @param point_ids \code{NULL} or distinct ids of the points.
#' @inheritParams scan_ordinal
#' @return An object of class \code{hphawkes_scan}, \code{model = "continuous_poisson"}:
#'   \code{clusters} has \code{cases} (points in the circle), \code{expected},
#'   \code{observed_over_expected}, \code{radius}, \code{log_likelihood_ratio} and \code{p_value}.
#' @seealso \code{\link{scan_poisson}}.
#' @examplesIf hphawkes_available()
#' set.seed(2)  # 300 uniform points and 40 around (0.3, 0.7) in the unit square
#' pts <- rbind(cbind(runif(300), runif(300)), cbind(rnorm(40, 0.3, 0.03), rnorm(40, 0.7, 0.03)))
#' res <- scan_continuous_poisson(pts, "X >= 0,X <= 1,Y >= 0,Y <= 1", n_replicates = 99, seed = 1)
#' res$clusters[1, c("cases", "expected", "radius", "p_value")]
#' @export
scan_continuous_poisson <- function(points, polygons, centres = NULL, max_radius_share = 0.5, max_distance = NULL,
                                    min_cases = 2L, point_ids = NULL, n_replicates = 999L, direction = "high",
                                    seed = NULL, progress = FALSE, backend = "auto", threads = NULL) {
  .hp_check_args()
  if (!is.character(polygons) || !length(polygons) || anyNA(polygons))
    .hp_stop("polygons must be a character vector of SaTScan's polygons (\"Y <= 10000,X >= 0,Y >= X\"), got ",
             .hp_kind(polygons))
  kw <- list(max_radius_share = .as_num(max_radius_share), max_distance = .as_num(max_distance),
             min_cases = .as_int(min_cases), n_replicates = .as_int(n_replicates), direction = direction,
             seed = .as_int(seed), progress = .as_flag(progress, "progress"), backend = backend,
             threads = .as_int(threads))
  if (!is.null(centres)) kw$centres <- .np_double(as.matrix(centres), "centres")
  if (!is.null(point_ids)) kw$point_ids <- .np_ids(point_ids, "point_ids")
  res <- .hp_call(do.call(.hp_mod("scan")$continuous_poisson, c(list(
    .np_double(as.matrix(points), "points"), as.list(polygons)), kw)))
  .hp_scan_result(res)
}
