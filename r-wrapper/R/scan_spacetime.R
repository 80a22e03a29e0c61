#' Space-time permutation scan statistic (SaTScan's space-time permutation model)
#'
#' Calls \code{hphawkes_py.scan.space_time_permutation}: cylinders (circles of locations x
#' day intervals), expected counts from the location and day margins, Monte Carlo p-values
#' from permutations of the case dates.
#'
#' @param coords Numeric matrix or data frame (records x 2): planar x, y, or latitude and
#'   longitude in degrees for \code{distance = "great_circle"}.
#' @param cases Non-negative whole-number case counts per record.
#' @param times \code{Date} vector or whole day numbers, one per record.
#' @param location_ids Optional location id per record (default: records grouped by coordinates).
#' @param distance \code{"euclidean"} or \code{"great_circle"} (km, SaTScan's 6367 km sphere).
#' @param max_distance \code{NULL} or the largest circle radius.
#' @param max_spatial_fraction Largest circle as a fraction of all cases, in (0, 0.5].
#' @param max_temporal_days,max_temporal_fraction Longest cylinder in days, or as a fraction of
#'   the study period when \code{max_temporal_days} is \code{NULL}.
#' @param min_temporal_days Shortest cylinder in days.
#' @param prospective Only cylinders ending on the last day of the study period.
#' @param study_start,study_end \code{NULL}, \code{Date}s or day numbers.
#' @param min_cases Fewest observed cases in a reported cluster.
#' @param n_replicates Monte Carlo permutations.
#' @param seed,progress,backend,threads As everywhere in hphawkes.
#' @return An object of class \code{hphawkes_scan_st}: \code{clusters} (data frame, most likely
#'   first; \code{start}/\code{end} as \code{Date}s when the times were dates), \code{null_llr},
#'   \code{settings} and the Python result.
#' @export
scan_space_time_permutation <- function(coords, cases, times, location_ids = NULL, distance = "euclidean",
                                        max_distance = NULL, max_spatial_fraction = 0.5,
                                        max_temporal_days = NULL, max_temporal_fraction = 0.5,
                                        min_temporal_days = 1L, prospective = FALSE, study_start = NULL,
                                        study_end = NULL, min_cases = 2L, n_replicates = 999L, seed = NULL,
                                        progress = FALSE, backend = "auto", threads = NULL) {
  sc <- .hp_mod("scan")
  is_date <- inherits(times, "Date")
  day <- function(v) if (is.null(v)) NULL else if (inherits(v, "Date")) format(v, "%Y-%m-%d") else .as_int(v)
  py_times <- if (is_date) as.list(format(times, "%Y-%m-%d")) else .np_double(times, "times")
  kw <- list(distance = distance, max_distance = .as_num(max_distance),
             max_spatial_fraction = .as_num(max_spatial_fraction),
             max_temporal_days = .as_int(max_temporal_days), max_temporal_fraction = .as_num(max_temporal_fraction),
             min_temporal_days = .as_int(min_temporal_days), prospective = prospective,
             study_start = day(study_start), study_end = day(study_end), min_cases = .as_int(min_cases),
             n_replicates = .as_int(n_replicates), seed = .as_int(seed), progress = progress,
             backend = backend, threads = .as_int(threads))
  if (!is.null(location_ids)) kw$location_ids <- as.list(as.character(location_ids))
  res <- .hp_call(do.call(sc$space_time_permutation, c(list(.np_double(coords, "coords"),
    .np_count(cases, "cases"), py_times), kw)))
  .scan_st_result(res, is_date)
}

#' Run a SaTScan parameter file (.prm) unchanged
#'
#' Calls \code{hphawkes_py.scan.run_prm}: the analysis the file describes (Bernoulli, discrete
#' Poisson or space-time permutation), relative file names resolved from the file's folder;
#' settings that cannot be honoured are refused by name.
#'
#' @param path The \code{.prm} file.
#' @param n_replicates \code{NULL} (the file's \code{MonteCarloReps}) or a number of replicates.
#' @param seed,progress,backend,threads As everywhere in hphawkes.
#' @return A list with \code{clusters} (data frame), \code{null_llr} and the Python result.
#' @export
scan_run_prm <- function(path, n_replicates = NULL, seed = NULL, progress = FALSE, backend = "auto",
                         threads = NULL) {
  sc <- .hp_mod("scan")
  res <- .hp_call(sc$run_prm(normalizePath(path, mustWork = TRUE), n_replicates = .as_int(n_replicates),
                             seed = .as_int(seed), progress = progress, backend = backend,
                             threads = .as_int(threads)))
  if (inherits(res, "hphawkes_py.scan.spacetime.SpaceTimeScanResult")) return(.scan_st_result(res, TRUE))
  out <- .hp_r(res)
  structure(list(clusters = out$clusters, null_llr = out$null_llr, backend = out$backend, python = res),
            class = "hphawkes_scan_st")
}

.scan_st_result <- function(res, dates) {
  clusters <- .hp_r(res$to_frame(iso_dates = TRUE))
  if (nrow(clusters)) clusters$location_ids <- lapply(clusters$location_ids, unlist)
  if (dates && nrow(clusters)) {
    clusters$start <- as.Date(clusters$start)
    clusters$end <- as.Date(clusters$end)
  }
  structure(list(clusters = clusters, null_llr = .hp_r(res$null_llr), backend = .hp_r(res$backend),
                 settings = .hp_r(res$settings), python = res), class = "hphawkes_scan_st")
}

#' @export
print.hphawkes_scan_st <- function(x, ...) {
  cat(reticulate::py_to_r(x$python$summary()), "\n", sep = "")
  invisible(x)
}

#' @export
as.data.frame.hphawkes_scan_st <- function(x, ...) x$clusters
