# The space-time and purely temporal ordinal and multinomial scans (hphawkes_py.scan.categorical_space_time).

# The keyword arguments the space-time ordinal and multinomial wrappers share.
.space_time_categorical_kw <- function(location_ids, max_population, max_distance, max_temporal, prospective,
                                       max_temporal_percent, n_replicates, secondary, distance, seed, progress,
                                       backend, threads, purely_temporal, surveillance_start, day_of_week,
                                       purely_spatial) {
  kw <- list(max_population = .as_num(max_population), max_distance = .as_num(max_distance),
             max_temporal = .as_int(max_temporal), prospective = .as_flag(prospective, "prospective"),
             n_replicates = .as_int(n_replicates), secondary = secondary, distance = distance,
             seed = .as_int(seed), progress = .as_flag(progress, "progress"), backend = backend,
             threads = .as_int(threads), purely_temporal = .as_flag(purely_temporal, "purely_temporal"),
             day_of_week = .as_flag(day_of_week, "day_of_week"),
             purely_spatial = .as_flag(purely_spatial, "purely_spatial"))
  if (!is.null(location_ids)) kw$location_ids <- .np_ids(location_ids, "location_ids")
  if (!is.null(max_temporal_percent)) kw$max_temporal_percent <- .as_num(max_temporal_percent)
  if (!is.null(surveillance_start))
    kw$surveillance_start <- .as_int(if (inherits(surveillance_start, "Date")) as.numeric(surveillance_start)
                                     else surveillance_start, "surveillance_start")
  kw
}

# Day numbers of `times` (Dates or whole numbers) for the Python side.
.np_times <- function(times) {
  .hp_no_na(times, "times")
  .np_count(if (inherits(times, "Date")) as.numeric(times) else times, "times")
}

#' Kulldorff's space-time scan statistic for ordinal data (ordered categories)
#'
#' Calls \code{hphawkes_py.scan.space_time_ordinal}: SaTScan's space-time ordinal analysis
#' (\code{ModelType=3}, retrospective or prospective). Every case has an ordered category (a stage, a
#' severity grade), a location and a date; a cylinder (a circle over an interval of days) whose cases lean to
#' the higher (lower) categories than outside is a cluster. The null permutes the categories among the cases,
#' which keep their locations and days.
#'
#' @param coords Numeric matrix or data frame (n x 2): location of each case.
#' @param categories The category of each case: numbers, ordered by value (at least 2 distinct).
#' @param times The date of each case: \code{Date}s or whole day numbers.
#' @param max_temporal Longest interval of a cylinder (days).
#' @param prospective Only intervals that end on the last day.
#' @param max_temporal_percent \code{NULL}, or the longest interval as a percentage of the study period.
#' @param purely_temporal Also the purely temporal clusters (every location; SaTScan's
#'   \code{IncludePurelyTemporal}).
#' @param surveillance_start \code{NULL}, or with \code{prospective} the first day (a \code{Date} or day number) of
#'   a surveillance whose earlier analyses the p-values are adjusted for (SaTScan's \code{AdjustForEarlierAnalyses}).
#' @param day_of_week Adjust for the day of the week (SaTScan's \code{AdjustForWeeklyTrends}): the null permutes
#'   the categories among each weekday's cases only.
#' @param purely_spatial Also the purely spatial clusters (every circle over the whole study period; SaTScan's
#'   \code{IncludePurelySpatial}); not with \code{surveillance_start}.
#' @inheritParams scan_ordinal
#' @return An object of class \code{hphawkes_scan}, \code{model = "space_time_ordinal"}: \code{clusters} has
#'   \code{start} and \code{end} (days since 1970-01-01 for \code{Date}s), \code{cases} (the cylinder's cases)
#'   and \code{\link{scan_ordinal}}'s category table.
#' @seealso \code{\link{scan_ordinal}}, \code{\link{scan_space_time_multinomial}}.
#' @examplesIf hphawkes_available()
#' set.seed(3)  # severer cases around town 1 on days 20-29
#' xy <- cbind(runif(30, 0, 10), runif(30, 0, 10))
#' town <- sample(30, 1500, replace = TRUE)
#' day <- sample(0:59, 1500, replace = TRUE)
#' hot <- sqrt((xy[town, 1] - xy[1, 1])^2 + (xy[town, 2] - xy[1, 2])^2) < 3 & day >= 20 & day < 30
#' grade <- ifelse(hot, sample(1:3, 1500, TRUE, c(.1, .2, .7)), sample(1:3, 1500, TRUE, c(.5, .3, .2)))
#' res <- scan_space_time_ordinal(xy[town, ], grade, day, location_ids = town, max_temporal = 14,
#'                                n_replicates = 99, seed = 1)
#' res$clusters[1, c("start", "end", "cases", "cluster_type", "p_value")]
#' @export
scan_space_time_ordinal <- function(coords, categories, times, location_ids = NULL, max_population = 0.5,
                                    max_distance = NULL, max_temporal = 7L, prospective = FALSE,
                                    max_temporal_percent = NULL, n_replicates = 999L, direction = "high",
                                    secondary = "no-overlap", distance = "euclidean", seed = NULL, progress = FALSE,
                                    backend = "auto", threads = NULL, purely_temporal = FALSE,
                                    surveillance_start = NULL, day_of_week = FALSE, purely_spatial = FALSE) {
  .hp_check_args()
  kw <- .space_time_categorical_kw(location_ids, max_population, max_distance, max_temporal, prospective,
                                   max_temporal_percent, n_replicates, secondary, distance, seed, progress,
                                   backend, threads, purely_temporal, surveillance_start, day_of_week,
                                   purely_spatial)
  kw$direction <- direction
  res <- .hp_call(do.call(.hp_mod("scan")$space_time_ordinal, c(list(
    .np_double(as.matrix(coords), "coords"), .np_categories(categories, TRUE), .np_times(times)), kw)))
  .hp_scan_result(res)
}

#' Kulldorff's space-time scan statistic for multinomial data (unordered categories)
#'
#' Calls \code{hphawkes_py.scan.space_time_multinomial}: SaTScan's space-time multinomial analysis
#' (\code{ModelType=7}, retrospective or prospective): cylinders whose mix of categories differs from outside,
#' in any way. The null permutes the categories among the cases.
#'
#' @param categories The category of each case: labels (character or factor) or numbers, at least 2 distinct;
#'   reported in SaTScan's (sorted) order.
#' @inheritParams scan_space_time_ordinal
#' @return An object of class \code{hphawkes_scan}, \code{model = "space_time_multinomial"}: as
#'   \code{\link{scan_space_time_ordinal}}, one entry per category (no \code{cluster_type}).
#' @seealso \code{\link{scan_multinomial}}, \code{\link{scan_space_time_ordinal}}.
#' @examplesIf hphawkes_available()
#' set.seed(5)  # serotype B more common around town 1 on days 20-29
#' xy <- cbind(runif(30, 0, 10), runif(30, 0, 10))
#' town <- sample(30, 1500, replace = TRUE)
#' day <- sample(0:59, 1500, replace = TRUE)
#' hot <- sqrt((xy[town, 1] - xy[1, 1])^2 + (xy[town, 2] - xy[1, 2])^2) < 3 & day >= 20 & day < 30
#' sero <- ifelse(hot, sample(c("A", "B", "C"), 1500, TRUE, c(.1, .8, .1)), sample(c("A", "B", "C"), 1500, TRUE))
#' res <- scan_space_time_multinomial(xy[town, ], sero, day, location_ids = town, max_temporal = 14,
#'                                    n_replicates = 99, seed = 1)
#' res$clusters[1, c("start", "end", "cases", "p_value")]
#' @export
scan_space_time_multinomial <- function(coords, categories, times, location_ids = NULL, max_population = 0.5,
                                        max_distance = NULL, max_temporal = 7L, prospective = FALSE,
                                        max_temporal_percent = NULL, n_replicates = 999L, secondary = "no-overlap",
                                        distance = "euclidean", seed = NULL, progress = FALSE, backend = "auto",
                                        threads = NULL, purely_temporal = FALSE, surveillance_start = NULL,
                                        day_of_week = FALSE, purely_spatial = FALSE) {
  .hp_check_args()
  kw <- .space_time_categorical_kw(location_ids, max_population, max_distance, max_temporal, prospective,
                                   max_temporal_percent, n_replicates, secondary, distance, seed, progress,
                                   backend, threads, purely_temporal, surveillance_start, day_of_week,
                                   purely_spatial)
  res <- .hp_call(do.call(.hp_mod("scan")$space_time_multinomial, c(list(
    .np_double(as.matrix(coords), "coords"), .np_categories(categories, FALSE), .np_times(times)), kw)))
  .hp_scan_result(res)
}

#' Kulldorff's purely temporal scan statistic for ordinal or multinomial data
#'
#' Calls \code{hphawkes_py.scan.temporal_ordinal} (\code{ordinal = TRUE}: ordered categories, SaTScan's
#' \code{ModelType=3}) or \code{temporal_multinomial} (unordered, \code{ModelType=7}), \code{AnalysisType} 2 or
#' 6: intervals of days of the whole region whose cases' categories differ from outside (ordinal: lean to the
#' higher or lower ones). The null permutes the categories among the cases, which keep their days.
#'
#' @param times The date of each case: \code{Date}s or whole day numbers.
#' @param categories The category of each case (numbers for the ordinal model; labels or numbers otherwise).
#' @param ordinal \code{TRUE}: the ordinal model; \code{FALSE}: the multinomial one.
#' @param max_temporal \code{NULL} or the longest interval (days); else \code{max_temporal_percent}.
#' @param max_temporal_percent The longest interval as a percentage of the study period (default 50).
#' @param prospective Only intervals that end on the last day.
#' @param direction The ordinal model's \code{"high"}, \code{"low"} or \code{"both"} (not used otherwise).
#' @param day_of_week Adjust for the day of the week (the null permutes within weekdays).
#' @inheritParams scan_ordinal
#' @return An object of class \code{hphawkes_scan}, \code{model = "temporal_ordinal"} or
#'   \code{"temporal_multinomial"}: \code{clusters} has \code{start}, \code{end}, \code{cases} and the
#'   category table of \code{\link{scan_ordinal}}.
#' @seealso \code{\link{scan_space_time_ordinal}}, \code{\link{scan_temporal}}.
#' @examplesIf hphawkes_available()
#' set.seed(4)  # severer cases on days 40-49
#' day <- sample(0:99, 800, replace = TRUE)
#' late <- day >= 40 & day < 50
#' grade <- ifelse(late, sample(1:3, 800, TRUE, c(.2, .3, .5)), sample(1:3, 800, TRUE, c(.5, .3, .2)))
#' res <- scan_temporal_categorical(day, grade, max_temporal = 20, n_replicates = 99, seed = 1)
#' res$clusters[1, c("start", "end", "cases", "p_value")]
#' @export
scan_temporal_categorical <- function(times, categories, ordinal = TRUE, max_temporal = NULL,
                                      max_temporal_percent = 50, prospective = FALSE, n_replicates = 999L,
                                      direction = "high", seed = NULL, progress = FALSE, backend = "auto",
                                      threads = NULL, day_of_week = FALSE) {
  .hp_check_args()
  ordinal <- .as_flag(ordinal, "ordinal")
  kw <- list(max_temporal = .as_int(max_temporal), max_temporal_percent = .as_num(max_temporal_percent),
             prospective = .as_flag(prospective, "prospective"), n_replicates = .as_int(n_replicates),
             seed = .as_int(seed), progress = .as_flag(progress, "progress"), backend = backend,
             threads = .as_int(threads), day_of_week = .as_flag(day_of_week, "day_of_week"))
  if (ordinal) kw$direction <- direction
  fun <- .hp_mod("scan")[[if (ordinal) "temporal_ordinal" else "temporal_multinomial"]]
  res <- .hp_call(do.call(fun, c(list(.np_times(times), .np_categories(categories, ordinal)), kw)))
  .hp_scan_result(res)
}
