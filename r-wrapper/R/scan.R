#' Kulldorff's Bernoulli spatial scan statistic
#'
#' Calls \code{hphawkes_py.scan.bernoulli}: circular windows centred on the locations (or on
#' grid points), Monte Carlo p-values from \code{n_replicates} permutations.
#'
#' @param coords Numeric matrix or data frame (n x 2) of planar coordinates.
#' @param cases,controls Non-negative whole-number counts per location (point data: 1/0).
#' @param max_population Maximum window population as a fraction of the total, in (0, 0.5].
#' @param n_replicates Monte Carlo replicates (whole number).
#' @param direction \code{"high"}, \code{"low"} or \code{"both"}.
#' @param secondary Criterion for secondary clusters (SaTScan's): \code{"no-overlap"} (default),
#'   \code{"no-centres-in-others"}, \code{"no-centres-in-more-likely"}, \code{"no-centres-in-less-likely"},
#'   \code{"no-pairs-of-centres"} or \code{"no-restrictions"}.
#' @param grid_cell \code{NULL} or grid spacing for circle centres.
#' @param window \code{"circle"} or \code{"ellipse"} (SaTScan's elliptic windows: the circle plus
#'   shapes 1.5, 2, 3, 4, 5 at 4, 6, 9, 12, 15 angles; no \code{grid_cell}).
#' @param penalty Non-compactness penalty of elliptic windows: \code{"none"}, \code{"medium"}, \code{"strong"}.
#' @param min_cases Minimum number of cases in a high-rate cluster (default 0: no restriction).
#' @param seed Whole number or \code{NULL}.
#' @param location_ids Optional ids reported in \code{location_ids} (default 0-based row numbers,
#'   as in Python).
#' @param progress Show a progress bar.
#' @param backend \code{"auto"}, \code{"cpu"}, \code{"gpu"} or \code{"emulator"}.
#' @param threads \code{NULL} or number of CPU threads.
#' @param circle_population \code{NULL} or the population of each row's location in SaTScan's max
#'   circle size file (rows of one location agree): windows also hold at most
#'   \code{max_circle_population} of its total.
#' @param max_circle_population Fraction in (0, 0.5] of the total \code{circle_population}.
#' @param centres \code{NULL} or a two-column matrix of circle centres (coordinates as \code{coords};
#'   SaTScan's grid file), instead of the locations.
#' @param neighbors \code{NULL} or a list of location-id vectors, one per centre, the centre first and then its
#'   neighbours in the order a window takes them (SaTScan's non-Euclidean neighbors file): every leading run
#'   of a vector is a window, instead of circles. Needs \code{location_ids}; \code{coords} may then be
#'   \code{NULL}. The clusters have no radius.
#' @param max_reported_population,max_reported_distance \code{NULL}, or report only clusters within these
#'   limits (a fraction up to \code{max_population}; a radius) while the Monte Carlo scans every window
#'   (SaTScan's \code{UseReportOnlySmallerClusters}).
#' @param risk_function \code{"standard"} (one risk inside a circle) or \code{"isotonic"}: SaTScan's isotonic
#'   spatial scan (\code{IsotonicScan=1}), a risk falling in steps with the distance from each centre; the
#'   clusters then have the list columns \code{step_location_ids}, \code{step_radius}, \code{step_cases},
#'   \code{step_expected} and \code{step_relative_risk} and the number of \code{steps}. Circles around the
#'   locations only.
#' @return An object of class \code{hphawkes_scan}: \code{clusters} (data frame, most likely
#'   first; \code{location_ids} is a list column), \code{null_llr}, totals and settings;
#'   \code{summary()} and \code{as.data.frame()} give the cluster table, \code{plot()} and
#'   \code{autoplot()} a map.
#' @seealso \code{\link{scan_poisson}}, \code{\link{scan_space_time}},
#'   \code{\link{autoplot.hphawkes_scan}}.
#' @examplesIf hphawkes_available()
#' g <- hphawkes_data("grave")  # 143 graves; case = 1 for an affected person
#' res <- scan_bernoulli(g[, c("x", "y")], g$case, 1 - g$case, n_replicates = 99, seed = 1)
#' res
#' summary(res)[, c("x", "y", "radius", "cases", "log_likelihood_ratio", "p_value")]
#' res$clusters$location_ids[[1]]  # 0-based rows in the most likely cluster
#' scan_bernoulli(g[, c("x", "y")], g$case, 1 - g$case, window = "ellipse", n_replicates = 19,
#'                seed = 1)
#' @export
scan_bernoulli <- function(coords, cases, controls, max_population = 0.5, n_replicates = 999L,
                           direction = "high", secondary = "no-overlap", grid_cell = NULL,
                           window = "circle", penalty = "medium", min_cases = 0L,
                           seed = NULL, location_ids = NULL, progress = FALSE,
                           backend = "auto", threads = NULL, circle_population = NULL,
                           max_circle_population = 0.5, centres = NULL, neighbors = NULL,
                           max_reported_population = NULL, max_reported_distance = NULL,
                           risk_function = "standard") {
  .hp_check_args()
  sc <- .hp_mod("scan")
  kw <- list(max_population = .as_num(max_population), n_replicates = .as_int(n_replicates),
             direction = direction, secondary = secondary, window = window, penalty = penalty,
             min_cases = .as_int(min_cases), risk_function = risk_function,
             grid_cell = .as_num(grid_cell), seed = .as_int(seed), progress = .as_flag(progress, "progress"),
             backend = backend, threads = .as_int(threads))
  if (!is.null(location_ids)) kw$location_ids <- .np_ids(location_ids, "location_ids")
  if (!is.null(circle_population)) {
    kw$circle_population <- .np_double(circle_population, "circle_population")
    kw$max_circle_population <- .as_num(max_circle_population)
  }
  if (!is.null(centres)) kw$centres <- .np_double(centres, "centres")
  if (!is.null(neighbors)) kw$neighbors <- .np_neighbors(neighbors)
  kw$max_reported_population <- .as_num(max_reported_population)
  kw$max_reported_distance <- .as_num(max_reported_distance)
  xy <- if (is.null(coords) && !is.null(neighbors)) NULL else .np_double(coords, "coords")
  res <- .hp_call(do.call(sc$bernoulli, c(list(xy, .np_count(cases, "cases"), .np_count(controls, "controls")),
    kw)))
  .hp_scan_result(res)
}

# The R object of a Python ScanResult (Bernoulli or Poisson).
.hp_scan_result <- function(res) {
  out <- .hp_r(res)  # a record of the dataclass fields
  xy <- out[["_loc_coords"]]
  obj <- list(
    clusters = out$clusters, null_llr = out$null_llr, backend = out$backend, model = out$model,
    n_cases = out$n_cases, n_population = out$n_population, n_locations = out$n_locations,
    n_merged = out$n_merged, n_centres = out$n_centres, n_windows = out$n_windows,
    max_population = out$max_population, max_distance = out$max_distance, min_cases = out$min_cases,
    direction = out$direction, n_replicates = out$n_replicates, grid_cell = out$grid_cell,
    # continuous Poisson: points, no population
    locations = data.frame(x = xy[, 1], y = xy[, 2], cases = out[["_loc_cases"]],
                           population = if (is.null(out[["_loc_population"]])) NA_real_ else
                             out[["_loc_population"]]),
    python = res
  )
  if (!is.null(out[["_loc_controls"]])) obj$locations$controls <- out[["_loc_controls"]]
  if (!is.null(out$time_trend)) obj$time_trend <- out$time_trend
  if (isTRUE(out$day_of_week)) obj$day_of_week <- TRUE
  if (isTRUE(out$purely_temporal)) obj$purely_temporal <- TRUE
  if (isTRUE(out$purely_spatial)) obj$purely_spatial <- TRUE
  structure(obj, class = "hphawkes_scan")
}

#' Kulldorff's discrete Poisson spatial scan statistic
#'
#' Calls \code{hphawkes_py.scan.poisson}: SaTScan's purely spatial discrete Poisson model with
#' circular windows, expected counts from the population (optionally by indirect
#' standardisation over covariate categories), Monte Carlo p-values from \code{n_replicates}
#' multinomial redistributions of the cases.
#'
#' @param coords Numeric matrix or data frame (n x 2) of planar coordinates.
#' @param cases Non-negative whole-number case counts per row.
#' @param population Non-negative population per row (\code{NULL} when \code{expected} is given).
#' @param expected Optional expected cases per row (rescaled to sum to the cases).
#' @param covariates Optional covariate category per row (vector, or data frame of columns):
#'   rows are location x category, expected counts by indirect standardisation.
#' @param max_population Maximum window size as a fraction of the population at risk, in (0, 0.5].
#' @param max_distance \code{NULL} or maximum circle radius (coordinate units; km for great-circle).
#' @param distance \code{"euclidean"} or \code{"great_circle"} (coords = latitude, longitude in degrees).
#' @param window \code{"circle"} or \code{"ellipse"} (SaTScan's elliptic windows).
#' @param penalty Non-compactness penalty of elliptic windows: \code{"none"}, \code{"medium"}, \code{"strong"}.
#' @param min_cases Minimum number of cases in a high-rate cluster (SaTScan's default 2).
#' @param n_replicates Monte Carlo replicates (whole number).
#' @param direction \code{"high"}, \code{"low"} or \code{"both"}.
#' @param secondary Criterion for secondary clusters (SaTScan's): \code{"no-overlap"} (default),
#'   \code{"no-centres-in-others"}, \code{"no-centres-in-more-likely"}, \code{"no-centres-in-less-likely"},
#'   \code{"no-pairs-of-centres"} or \code{"no-restrictions"}.
#' @param grid_cell \code{NULL} or grid spacing for circle centres.
#' @param seed Whole number or \code{NULL}.
#' @param location_ids Optional unique ids reported in \code{location_ids} (default 0-based rows).
#' @param progress Show a progress bar.
#' @param backend \code{"auto"}, \code{"cpu"}, \code{"gpu"} or \code{"emulator"}.
#' @param threads \code{NULL} or number of CPU threads.
#' @param circle_population \code{NULL} or the population of each row's location in SaTScan's max
#'   circle size file (rows of one location agree): windows also hold at most
#'   \code{max_circle_population} of its total.
#' @param max_circle_population Fraction in (0, 0.5] of the total \code{circle_population}.
#' @param centres \code{NULL} or a two-column matrix of circle centres (coordinates as \code{coords};
#'   SaTScan's grid file), instead of the locations.
#' @param neighbors \code{NULL} or lists of neighbours instead of circles, as in \code{\link{scan_bernoulli}}.
#' @param max_reported_population,max_reported_distance As in \code{\link{scan_bernoulli}}.
#' @param risk_function As in \code{\link{scan_bernoulli}}.
#' @return An object of class \code{hphawkes_scan} (as \code{scan_bernoulli}), \code{model = "poisson"}.
#' @examplesIf hphawkes_available()
#' ny <- hphawkes_data("ny_leukemia")  # 281 census tracts of upstate New York
#' res <- scan_poisson(ny[, c("latitude", "longitude")], ny$cases_floor, ny$population,
#'                     max_population = 0.1, n_replicates = 49, seed = 1, location_ids = ny$id)
#' res
#' head(res$clusters[, c("cases", "expected", "log_likelihood_ratio", "p_value")], 3)
#' @export
scan_poisson <- function(coords, cases, population, expected = NULL, covariates = NULL,
                         max_population = 0.5, max_distance = NULL, distance = "euclidean",
                         window = "circle", penalty = "medium", min_cases = 2L,
                         n_replicates = 999L, direction = "high", secondary = "no-overlap",
                         grid_cell = NULL, seed = NULL, location_ids = NULL, progress = FALSE,
                         backend = "auto", threads = NULL, circle_population = NULL,
                         max_circle_population = 0.5, centres = NULL, neighbors = NULL,
                         max_reported_population = NULL, max_reported_distance = NULL,
                         risk_function = "standard") {
  .hp_check_args()
  sc <- .hp_mod("scan")
  kw <- list(max_population = .as_num(max_population), max_distance = .as_num(max_distance),
             distance = distance, window = window, penalty = penalty, risk_function = risk_function,
             min_cases = .as_int(min_cases), n_replicates = .as_int(n_replicates),
             direction = direction, secondary = secondary, grid_cell = .as_num(grid_cell),
             seed = .as_int(seed), progress = .as_flag(progress, "progress"), backend = backend, threads = .as_int(threads))
  if (!is.null(expected)) kw$expected <- .np_double(expected, "expected")
  if (!is.null(covariates)) {
    .hp_no_na(covariates, "covariates")  # NA is no category (reticulate would send the string "NA")
    kw$covariates <- if (is.data.frame(covariates))
      .pd_frame(covariates, "covariates") else as.list(as.character(covariates))
  }
  if (!is.null(location_ids)) kw$location_ids <- .np_ids(location_ids, "location_ids")
  if (!is.null(circle_population)) {
    kw$circle_population <- .np_double(circle_population, "circle_population")
    kw$max_circle_population <- .as_num(max_circle_population)
  }
  if (!is.null(centres)) kw$centres <- .np_double(centres, "centres")
  if (!is.null(neighbors)) kw$neighbors <- .np_neighbors(neighbors)
  kw$max_reported_population <- .as_num(max_reported_population)
  kw$max_reported_distance <- .as_num(max_reported_distance)
  xy <- if (is.null(coords) && !is.null(neighbors)) NULL else .np_double(coords, "coords")
  pop <- if (is.null(population)) NULL else .np_double(population, "population")
  res <- .hp_call(do.call(sc$poisson, c(list(xy, .np_count(cases, "cases"), pop), kw)))
  .hp_scan_result(res)
}

#' Declustered spatial scan: hotspots of background risk versus clusters of contagion
#'
#' Calls \code{hphawkes_py.scan.declustered}: the events are aggregated onto the cells of a square
#' grid (\code{cell_size}) or their nearest \code{locations}; the discrete Poisson scan of all events
#' (the "ordinary" scan) is made beside the same scan of the background events of a Hawkes fit,
#' each event weighted by 1 - pi_n (posterior mean; real counts) and, for each posterior draw,
#' with background labels drawn as Bernoulli(1 - pi_n) (integer counts, an ordinary Poisson scan
#' per draw). Every cluster of the ordinary scan is then re-tested as the same window on the
#' background events: \code{comparison$verdict} says whether it is a hotspot of background risk
#' or a cluster only because of contagion.
#'
#' @param coords Numeric matrix or data frame (N x 2) of event coordinates (km in the DC data).
#' @param pi Self-excitation probabilities: a vector of N posterior means, a draws x N matrix
#'   (\code{hawkes_self_excitation_draws()}), or the result of \code{hawkes_self_excitation()}
#'   or \code{hawkes_probabilities()} (its \code{mean} or \code{pi} column is used).
#' @param cell_size Side of the square grid cells (coordinate units); the null is uniform over
#'   the cells. Give this or \code{locations}.
#' @param locations Numeric matrix (L x 2): each event goes to its nearest location.
#' @param population,expected With \code{locations}: population (area) or expected counts per
#'   location; neither gives equal expected counts.
#' @param empty_cells \code{"drop"} (cells without events are outside the study area) or \code{"keep"}.
#' @param n_draws Label draws (\code{NULL}: all rows of a matrix \code{pi}, else 100; 0: none).
#' @param max_population Maximum window size as a fraction of the population at risk, in (0, 0.5].
#' @param max_distance \code{NULL} or maximum circle radius (coordinate units).
#' @param min_cases Minimum (background) events in a high-rate cluster.
#' @param n_replicates Monte Carlo replicates of every scan (the same replicates for all).
#' @param alpha Significance level of the verdicts.
#' @param seed Whole number or \code{NULL}.
#' @param progress Show a progress bar over the label draws.
#' @param backend \code{"auto"}, \code{"cpu"}, \code{"gpu"} or \code{"emulator"}.
#' @param threads \code{NULL} or number of CPU threads.
#' @return An object of class \code{hphawkes_declustered}: \code{comparison} (data frame, one row per
#'   ordinary cluster: events, p-value, the window's background events, \code{background_p_value},
#'   \code{draw_support}, \code{verdict}), \code{ordinary} and \code{declustered}
#'   (\code{hphawkes_scan} objects), \code{draws} and \code{locations} (data frames),
#'   \code{event_location} (the 0-based \code{location_id} of every event), totals and settings.
#' @seealso \code{\link{hawkes_self_excitation}}, \code{\link{hawkes_self_excitation_draws}},
#'   \code{\link{autoplot.hphawkes_declustered}}.
#' @examplesIf hphawkes_available()
#' set.seed(4)  # a background hotspot near (2.5, 2.5) and a burst of contagion near (7.5, 7.5)
#' x <- rbind(cbind(runif(400, 0, 10), runif(400, 0, 10)),
#'            cbind(rnorm(80, 2.5, 0.25), rnorm(80, 2.5, 0.25)),
#'            cbind(rnorm(80, 7.5, 0.25), rnorm(80, 7.5, 0.25)))
#' x <- pmin(pmax(x, 0), 10)
#' pi_n <- c(rep(0.05, 480), rep(0.97, 80))  # probability that each event was triggered
#' dec <- scan_declustered(x, pi_n, cell_size = 1, n_draws = 10, n_replicates = 49, seed = 1)
#' dec
#' dec$comparison[, c("events", "p_value", "background_p_value", "verdict")]
#' @export
scan_declustered <- function(coords, pi, cell_size = NULL, locations = NULL, population = NULL,
                             expected = NULL, empty_cells = "drop", n_draws = NULL,
                             max_population = 0.5, max_distance = NULL, min_cases = 2L,
                             n_replicates = 999L, alpha = 0.05, seed = NULL, progress = FALSE,
                             backend = "auto", threads = NULL) {
  .hp_check_args()
  sc <- .hp_mod("scan")
  if (inherits(pi, "hawkes_probabilities")) pi <- if ("pi" %in% names(pi)) pi$pi else pi$mean
  kw <- list(cell_size = .as_num(cell_size), empty_cells = empty_cells, n_draws = .as_int(n_draws),
             max_population = .as_num(max_population), max_distance = .as_num(max_distance),
             min_cases = .as_int(min_cases), n_replicates = .as_int(n_replicates),
             alpha = .as_num(alpha), seed = .as_int(seed), progress = .as_flag(progress, "progress"), backend = backend,
             threads = .as_int(threads))
  if (!is.null(locations)) kw$locations <- .np_double(as.matrix(locations), "locations")
  if (!is.null(population)) kw$population <- .np_double(population, "population")
  if (!is.null(expected)) kw$expected <- .np_double(expected, "expected")
  res <- .hp_call(do.call(sc$declustered, c(list(.np_double(coords, "coords"), .np_double(pi, "pi")), kw)))
  structure(list(
    comparison = .hp_r(res$comparison), ordinary = .hp_scan_result(res$ordinary),
    declustered = .hp_scan_result(res$declustered), draws = .hp_r(res$draws),
    locations = .hp_r(res$locations), event_location = .hp_r(res$event_location),
    n_events = .hp_r(res$n_events), background_total = .hp_r(res$background_total),
    pi_source = .hp_r(res$pi_source), alpha = .hp_r(res$alpha), n_draws = .hp_r(res$n_draws),
    cell_size = .hp_r(res$cell_size), n_empty_dropped = .hp_r(res$n_empty_dropped),
    backend = .hp_r(res$backend), python = res
  ), class = "hphawkes_declustered")
}

#' @export
print.hphawkes_declustered <- function(x, ...) {
  cat(reticulate::py_to_r(x$python$summary()), "\n", sep = "")
  invisible(x)
}

#' @export
summary.hphawkes_declustered <- function(object, ...) object$comparison

#' @export
as.data.frame.hphawkes_declustered <- function(x, ...) x$comparison

#' ggplot2 map of a declustered scan
#'
#' The locations (squares, shaded by their number of events) and the circles of the ordinary
#' clusters drawn by verdict (background hotspot, contagion only, not significant).
#'
#' @param object An \code{hphawkes_declustered} result.
#' @param fill \code{"events"}, \code{"background"} (expected background events) or
#'   \code{"p_in_cluster"} (fraction of label draws with the location in a significant
#'   background cluster).
#' @param ... Unused.
#' @return A \code{ggplot} object.
#' @examplesIf hphawkes_available()
#' set.seed(4)  # a background hotspot near (2.5, 2.5) and a burst of contagion near (7.5, 7.5)
#' x <- rbind(cbind(runif(400, 0, 10), runif(400, 0, 10)),
#'            cbind(rnorm(80, 2.5, 0.25), rnorm(80, 2.5, 0.25)),
#'            cbind(rnorm(80, 7.5, 0.25), rnorm(80, 7.5, 0.25)))
#' x <- pmin(pmax(x, 0), 10)
#' pi_n <- c(rep(0.05, 480), rep(0.97, 80))  # probability that each event was triggered
#' dec <- scan_declustered(x, pi_n, cell_size = 1, n_draws = 10, n_replicates = 49, seed = 1)
#' autoplot(dec)
#' autoplot(dec, fill = "background")
#' @method autoplot hphawkes_declustered
#' @export
autoplot.hphawkes_declustered <- function(object, fill = c("events", "background", "p_in_cluster"), ...) {
  .hp_check_args()
  fill <- match.arg(fill)
  loc <- object$locations
  loc$.fill <- loc[[fill]]
  cl <- object$ordinary$clusters
  if (nrow(cl)) {
    r_min <- if (!is.null(object$cell_size)) object$cell_size / 2 else
      0.02 * max(diff(range(loc$x)), diff(range(loc$y)), 1e-12)
    cl$radius <- pmax(cl$radius, r_min)
  }
  circ <- .circle_df(cl)
  circ$verdict <- factor(object$comparison$verdict[circ$cluster],
                         levels = c("background hotspot", "contagion only", "not significant"))
  ggplot2::ggplot(loc, ggplot2::aes(.data$x, .data$y)) +
    ggplot2::geom_point(ggplot2::aes(colour = .data$.fill), shape = 15, size = 1.6) +
    ggplot2::scale_colour_gradient(low = "grey92", high = "black", name = fill,
                                   trans = if (fill == "p_in_cluster") "identity" else "sqrt") +
    ggplot2::geom_path(data = circ, ggplot2::aes(group = .data$cluster, linetype = .data$verdict,
                                                 linewidth = .data$verdict), colour = "steelblue") +
    ggplot2::scale_linetype_manual(values = c(`background hotspot` = "solid", `contagion only` = "dotted",
                                              `not significant` = "dashed"), drop = FALSE, name = "ordinary cluster") +
    ggplot2::scale_linewidth_manual(values = c(`background hotspot` = 1.1, `contagion only` = 1.1,
                                               `not significant` = 0.4), drop = FALSE, name = "ordinary cluster") +
    ggplot2::coord_equal() +
    ggplot2::labs(title = sprintf("Declustered scan: %d of %d significant clusters are contagion only",
                                  sum(object$comparison$verdict == "contagion only"),
                                  sum(object$comparison$verdict != "not significant")))
}

#' @export
plot.hphawkes_declustered <- function(x, ...) {
  print(autoplot.hphawkes_declustered(x, ...))
  invisible(x)
}

#' @export
print.hphawkes_scan <- function(x, ...) {
  cat(reticulate::py_to_r(x$python$summary()), "\n", sep = "")
  invisible(x)
}

#' @export
summary.hphawkes_scan <- function(object, ...) {
  cl <- object$clusters
  cl$location_ids <- NULL
  cl
}

#' @export
as.data.frame.hphawkes_scan <- function(x, ...) x$clusters

.circle_df <- function(clusters, n = 90L) {
  if (!nrow(clusters)) return(data.frame(x = numeric(), y = numeric(), cluster = integer()))
  a <- seq(0, 2 * pi, length.out = n)
  do.call(rbind, lapply(seq_len(nrow(clusters)), function(k) {
    r <- max(clusters$radius[k], 1e-12)
    data.frame(x = clusters$x[k] + r * cos(a), y = clusters$y[k] + r * sin(a), cluster = k)
  }))
}

#' ggplot2 map of a scan result
#'
#' The locations (size = population, colour = has cases) and the cluster circles (the most
#' likely one solid, secondary ones dashed).
#'
#' @param object An \code{hphawkes_scan} result.
#' @param max_clusters Number of clusters drawn.
#' @param ... Unused.
#' @return A \code{ggplot} object.
#' @examplesIf hphawkes_available()
#' g <- hphawkes_data("grave")  # 143 graves; case = 1 for an affected person
#' res <- scan_bernoulli(g[, c("x", "y")], g$case, 1 - g$case, n_replicates = 99, seed = 1)
#' autoplot(res, max_clusters = 2)
#' @method autoplot hphawkes_scan
#' @export
autoplot.hphawkes_scan <- function(object, max_clusters = 5L, ...) {
  .hp_check_args()
  loc <- object$locations
  loc$with_cases <- loc$cases > 0
  cl <- utils::head(object$clusters, max_clusters)
  circ <- .circle_df(cl)
  circ$most_likely <- circ$cluster == 1L
  ggplot2::ggplot(loc, ggplot2::aes(.data$x, .data$y)) +
    ggplot2::geom_point(ggplot2::aes(size = .data$population, colour = .data$with_cases), alpha = 0.7) +
    ggplot2::geom_path(data = circ, ggplot2::aes(group = .data$cluster, linetype = .data$most_likely),
                       colour = "steelblue", linewidth = 0.8) +
    ggplot2::scale_colour_manual(values = c(`FALSE` = "grey60", `TRUE` = "firebrick"), name = "cases > 0") +
    ggplot2::scale_linetype_manual(values = c(`TRUE` = "solid", `FALSE` = "dashed"), name = "most likely") +
    ggplot2::coord_equal() +
    ggplot2::labs(title = sprintf("%s scan: most likely cluster p = %s",
                                  switch(object$model, poisson = "Poisson", declustered = "Declustered Poisson",
                                         space_time_permutation = "Space-time permutation", normal = "Normal",
                                         weighted_normal = "Weighted normal", exponential = "Exponential",
                                         ordinal = "Ordinal", multinomial = "Multinomial",
                                         space_time_poisson = "Space-time Poisson",
                                         space_time_bernoulli = "Space-time Bernoulli", "Bernoulli"),
                                  if (nrow(cl)) format(cl$p_value[1], digits = 3) else "NA"))
}

#' @export
plot.hphawkes_scan <- function(x, ...) {
  print(autoplot.hphawkes_scan(x, ...))
  invisible(x)
}

#' Kulldorff's space-time scan statistics (space-time permutation, or discrete Poisson)
#'
#' Without \code{population}, calls \code{hphawkes_py.scan.space_time_permutation}: cylinders
#' (circles x intervals of days), expected counts from the location and day totals of the cases,
#' Monte Carlo p-values from permutations of the cases' days (retrospective, or prospective with
#' \code{prospective = TRUE}). With \code{population}, calls \code{hphawkes_py.scan.space_time}:
#' the discrete Poisson model, expected counts from the population.
#'
#' @param coords Numeric matrix or data frame (n x 2): location of each row.
#' @param cases Non-negative whole-number case counts per row.
#' @param times Day of each row: whole numbers (days) or \code{Date}s.
#' @param population \code{NULL} (space-time permutation) or the population of each row's location
#'   (discrete Poisson model).
#' @param controls \code{NULL} or the controls of each row (location and day): the space-time
#'   Bernoulli model (\code{hphawkes_py.scan.space_time(model = "bernoulli")}; Monte Carlo relabels
#'   the cases among all persons; \code{clusters$population} is the cylinder's cases + controls).
#' @param max_population Maximum circle size as a fraction of all cases (of the population), in (0, 0.5].
#' @param max_distance \code{NULL} or maximum circle radius (km for great-circle distances).
#' @param max_temporal Maximum interval length in days.
#' @param secondary Criterion for secondary clusters, as in \code{scan_bernoulli}; in retrospective analyses
#'   clusters apart in time never conflict.
#' @param max_temporal_percent \code{NULL} or the longest interval as a percentage of the study period
#'   (instead of \code{max_temporal}); with \code{surveillance_start}, of each earlier analysis's own period,
#'   as SaTScan's percentage with \code{AdjustForEarlierAnalyses}.
#' @param prospective Only intervals ending on the last day.
#' @param min_cases Minimum cases in a high-rate cluster.
#' @param n_replicates Monte Carlo replicates.
#' @param direction \code{"high"}, \code{"low"} or \code{"both"}.
#' @param distance \code{"euclidean"} or \code{"great_circle"} (coords = latitude, longitude).
#' @param seed Whole number or \code{NULL}.
#' @param location_ids Optional ids (rows of one location share its id).
#' @param progress Show a progress bar.
#' @param backend \code{"auto"}, \code{"cpu"}, \code{"gpu"} or \code{"emulator"}.
#' @param threads \code{NULL} or number of CPU threads.
#' @param circle_population \code{NULL} or the population of each row's location in SaTScan's max
#'   circle size file (rows of one location agree): windows also hold at most
#'   \code{max_circle_population} of its total.
#' @param max_circle_population Fraction in (0, 0.5] of the total \code{circle_population}.
#' @param centres \code{NULL} or a two-column matrix of circle centres (coordinates as \code{coords};
#'   SaTScan's grid file), instead of the locations.
#' @param time_trend Discrete Poisson model: \code{NULL} (no adjustment), \code{"nonparametric"} (every
#'   day's expected cases are its observed cases), \code{"loglinear"} (a log-linear trend of the
#'   risk, \code{trend_percent} or else estimated from the daily totals) or \code{"logquadratic"} (a
#'   log-quadratic trend estimated from them), SaTScan's time-trend adjustments 1, 2, 3 and 5; Poisson
#'   or Bernoulli: \code{"stratified"} (SaTScan's 4, time-stratified randomization: each cylinder is
#'   scored against its own days' cases, and every day keeps its cases in the Monte Carlo; the
#'   \code{log_likelihood_ratio} column then holds SaTScan's test statistic).
#' @param trend_percent \code{time_trend = "loglinear"}: the change of the risk per year, percent
#'   (above -100); \code{NULL} estimates it.
#' @param spatial_adjustment Discrete Poisson model: \code{NULL} (none), \code{"stratified"} (SaTScan's
#'   spatial adjustment 1, stratified randomization: every location's expected cases are its observed
#'   cases, kept there in the Monte Carlo; circles are then cut by cases) or \code{"nonparametric"}
#'   (SaTScan's 2: the same expectations, the usual Monte Carlo; no time trend or \code{"stratified"}).
#' @param day_of_week Adjust for the day of the week (SaTScan's \code{AdjustForWeeklyTrends}). Space-time
#'   permutation model: each location's cases on a weekday are expected on that weekday, and the Monte
#'   Carlo permutes the days within weekdays; discrete Poisson model: the expected cases are computed
#'   again with the weekday as a covariate, as SaTScan does; Bernoulli model: the Monte Carlo relabels
#'   each weekday's cases among that weekday's persons.
#' @param covariates Space-time permutation model: \code{NULL} or the covariate category of each row's
#'   cases (a vector, or a data frame of columns such as age group and sex): the expectations and the
#'   permutation are stratified by them.
#' @param surveillance_start With \code{prospective = TRUE}: adjust for the earlier analyses of a
#'   surveillance that began on this day (a whole day or a \code{Date}, as \code{times}; SaTScan's
#'   \code{AdjustForEarlierAnalyses}): every replicate's maximum is over the cylinders ending on any day
#'   from it on. \code{max_population = NULL} limits the circles by \code{max_distance} alone, as SaTScan
#'   then does.
#' @param purely_temporal Discrete Poisson or Bernoulli model: also scan the purely temporal clusters
#'   (every location over an interval; SaTScan's \code{IncludePurelyTemporal}); the one listed has
#'   \code{purely_temporal = TRUE} and \code{center = "All"}.
#' @param purely_spatial Discrete Poisson or Bernoulli model: also scan the purely spatial clusters (the
#'   circles over the whole study period; SaTScan's \code{IncludePurelySpatial}); such a cluster's
#'   \code{start} and \code{end} are the study period's.
#' @param expected \code{NULL} or, for the discrete Poisson model, the expected cases of each row's
#'   location and day (one row per location and day at risk, 0 cases where none; rescaled to the
#'   cases' total): populations that change over time or covariates, as SaTScan's census years give
#'   them. A cylinder's expectation is then the sum of its cells'; \code{population} is optional and
#'   only reported.
#' @return An object of class \code{hphawkes_scan}; \code{clusters} has \code{start} and \code{end}
#'   (\code{Date}s when \code{times} are); \code{time_trend} the adjustment made (with
#'   \code{daily_percent}, the figure SaTScan reports), or \code{NULL}.
#' @examplesIf hphawkes_available()
#' set.seed(3)  # 40 locations x 20 days, an outbreak near (3, 7) on days 16-18
#' xy <- cbind(runif(40, 0, 10), runif(40, 0, 10))
#' grid <- expand.grid(loc = 1:40, day = 1:20)
#' near <- sqrt((xy[grid$loc, 1] - 3)^2 + (xy[grid$loc, 2] - 7)^2) < 2
#' grid$cases <- rpois(nrow(grid), ifelse(near & grid$day >= 16 & grid$day <= 18, 4, 0.3))
#' g <- grid[grid$cases > 0, ]
#' dates <- as.Date("2024-03-01") + g$day - 1
#' res <- scan_space_time(xy[g$loc, ], g$cases, dates, max_temporal = 7, n_replicates = 49,
#'                        seed = 1)
#' res$clusters[1, c("start", "end", "cases", "expected", "p_value")]
#' # the discrete Poisson space-time model: a population of 1000 per location
#' scan_space_time(xy[g$loc, ], g$cases, dates, population = rep(1000, nrow(g)),
#'                 n_replicates = 19, seed = 1)
#' # the same, the expected cases adjusted for a trend estimated from the daily totals
#' adj <- scan_space_time(xy[g$loc, ], g$cases, dates, population = rep(1000, nrow(g)),
#'                        n_replicates = 19, seed = 1, time_trend = "loglinear")
#' adj$time_trend$daily_percent
#' # time-stratified: each cylinder against its own days' cases
#' st <- scan_space_time(xy[g$loc, ], g$cases, dates, population = rep(1000, nrow(g)),
#'                       n_replicates = 19, seed = 1, time_trend = "stratified")
#' st$clusters[1, c("start", "end", "cases", "log_likelihood_ratio")]
#' # expected cases per location and day: the population doubles over the period in 10 locations
#' e <- 1000 * ifelse(grid$loc <= 10, 1 + (grid$day - 1) / 19, 1)
#' ex <- scan_space_time(xy[grid$loc, ], grid$cases, as.Date("2024-03-01") + grid$day - 1, expected = e,
#'                       n_replicates = 19, seed = 1)
#' ex$clusters[1, c("start", "end", "cases", "expected")]
#' @export
scan_space_time <- function(coords, cases, times, population = NULL, controls = NULL, max_population = 0.5,
                            max_distance = NULL,
                            max_temporal = 7L, prospective = FALSE, min_cases = 2L,
                            n_replicates = 999L, direction = "high", distance = "euclidean",
                            seed = NULL, location_ids = NULL, progress = FALSE, backend = "auto",
                            threads = NULL, time_trend = NULL, trend_percent = NULL,
                            spatial_adjustment = NULL, expected = NULL, day_of_week = FALSE,
                            covariates = NULL, purely_temporal = FALSE, surveillance_start = NULL,
                            purely_spatial = FALSE, circle_population = NULL, max_circle_population = 0.5,
                            centres = NULL, max_temporal_percent = NULL, secondary = "no-overlap") {
  .hp_check_args()
  sc <- .hp_mod("scan")
  .hp_no_na(times, "times")
  # Dates travel as whole days since 1970-01-01 (the start and end columns come back in days)
  t <- if (inherits(times, "Date")) as.numeric(times) else times
  kw <- list(max_population = .as_num(max_population), max_distance = .as_num(max_distance),
             max_temporal = .as_int(max_temporal), prospective = .as_flag(prospective, "prospective"),
             min_cases = .as_int(min_cases), n_replicates = .as_int(n_replicates),
             direction = direction, distance = distance, seed = .as_int(seed), progress = .as_flag(progress, "progress"),
             backend = backend, threads = .as_int(threads))
  if (!is.null(location_ids)) kw$location_ids <- .np_ids(location_ids, "location_ids")
  if (!is.null(circle_population)) {
    kw$circle_population <- .np_double(circle_population, "circle_population")
    kw$max_circle_population <- .as_num(max_circle_population)
  }
  if (!is.null(centres)) kw$centres <- .np_double(centres, "centres")
  if (!is.null(max_temporal_percent)) kw$max_temporal_percent <- .as_num(max_temporal_percent)
  kw$secondary <- secondary
  if (!is.null(population) && !is.null(controls))
    stop("give population (Poisson) or controls (Bernoulli), not both", call. = FALSE)
  if (!is.null(expected) && !is.null(controls))
    stop("expected is for the discrete Poisson model, not with controls", call. = FALSE)
  fun <- if (is.null(population) && is.null(controls) && is.null(expected)) sc$space_time_permutation else
    sc$space_time
  if (!is.null(population)) kw$population <- .np_double(population, "population")
  if (!is.null(expected)) kw$expected <- .np_double(expected, "expected")
  dow <- .as_flag(day_of_week, "day_of_week")
  if (!is.null(covariates) && !(is.null(population) && is.null(controls) && is.null(expected)))
    stop("covariates are for the space-time permutation model (no population, controls or expected)",
         call. = FALSE)
  if (dow) kw$day_of_week <- TRUE
  if (!is.null(surveillance_start)) {
    .hp_no_na(surveillance_start, "surveillance_start")
    kw$surveillance_start <- .as_int(if (inherits(surveillance_start, "Date")) as.numeric(surveillance_start)
                                     else surveillance_start)
  }
  if (.as_flag(purely_temporal, "purely_temporal")) {
    if (is.null(population) && is.null(controls) && is.null(expected))
      stop("purely_temporal is for the discrete Poisson and Bernoulli models (give population, expected or ",
           "controls)", call. = FALSE)
    kw$purely_temporal <- TRUE
  }
  if (.as_flag(purely_spatial, "purely_spatial")) {
    if (is.null(population) && is.null(controls) && is.null(expected))
      stop("purely_spatial is for the discrete Poisson and Bernoulli models (give population, expected or ",
           "controls)", call. = FALSE)
    kw$purely_spatial <- TRUE
  }
  if (!is.null(covariates)) kw$covariates <- reticulate::r_to_py(as.data.frame(covariates))
  if (!is.null(controls)) {
    kw$controls <- .np_count(controls, "controls")
    kw$model <- "bernoulli"
  }
  if (!is.null(time_trend) || !is.null(trend_percent)) {
    if (is.null(population) && !(identical(time_trend, "stratified") && !is.null(controls)))
      stop("time_trend adjusts the discrete Poisson model (give population), or with \"stratified\" the ",
           "Bernoulli model too (give controls)", call. = FALSE)
    kw$time_trend <- time_trend
    kw$trend_percent <- .as_num(trend_percent)
  }
  if (!is.null(spatial_adjustment)) {
    if (is.null(population))
      stop("spatial_adjustment adjusts the discrete Poisson model: give population", call. = FALSE)
    kw$spatial_adjustment <- spatial_adjustment
  }
  res <- .hp_call(do.call(fun, c(list(.np_double(coords, "coords"),
    .np_count(cases, "cases"), .np_count(t, "times")), kw)))
  out <- .hp_scan_result(res)
  if (inherits(times, "Date")) {
    out$clusters$start <- as.Date(out$clusters$start, origin = "1970-01-01")
    out$clusters$end <- as.Date(out$clusters$end, origin = "1970-01-01")
  }
  out
}

#' Rerun a SaTScan parameter file (.prm)
#'
#' Calls \code{hphawkes_py.scan.run_prm}: the purely spatial Bernoulli or discrete Poisson analysis,
#' or the space-time permutation, Bernoulli or discrete Poisson analysis (retrospective or
#' prospective), that the file describes (file names relative to the
#' file's folder, as in SaTScan). Settings that would change the analysis and are not implemented
#' are refused by name.
#'
#' @param path The \code{.prm} file.
#' @param n_replicates \code{NULL} (the file's \code{MonteCarloReps}) or a number of replicates.
#' @param seed,progress,backend,threads As in \code{\link{scan_bernoulli}}.
#' @return An object of class \code{hphawkes_scan} (as \code{scan_bernoulli}).
#' @examplesIf hphawkes_available()
#' # SaTScan's sample space-time permutation analysis (New York City fever, 2001)
#' prm <- hphawkes_data_path("scan/satscan_sample_data/NYCSpaceTimePermutation.prm")
#' res <- suppressWarnings(scan_run_prm(prm, n_replicates = 19, seed = 1))
#' res
#' @export
scan_run_prm <- function(path, n_replicates = NULL, seed = NULL, progress = FALSE, backend = "auto",
                         threads = NULL) {
  .hp_check_args()
  sc <- .hp_mod("scan")
  res <- .hp_call(sc$run_prm(normalizePath(path, mustWork = TRUE), n_replicates = .as_int(n_replicates),
                             seed = .as_int(seed), progress = .as_flag(progress, "progress"), backend = backend,
                             threads = .as_int(threads)))
  .hp_scan_result(res)
}
