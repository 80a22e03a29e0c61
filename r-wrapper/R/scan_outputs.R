# Scan results for other software (SaTScan's output files, GIS geometry, an HTML map) and the
# scan models and analyses built on the discrete scans: normal, exponential, iterative, power.

# The Python ScanResult behind an R scan object (iterative scans: their cluster table over the
# full data, as hphawkes_py.scan.IterativeScanResult.to_scan_result gives it).
# time = TRUE: the purely temporal, seasonal and SVTT results too (SaTScan's tables only).
.hp_scan_python <- function(result, name = "result", time = FALSE) {
  if (inherits(result, "hphawkes_iterative_scan")) return(result$python$to_scan_result())
  if (time && inherits(result, c("hphawkes_temporal_scan", "hphawkes_svtt"))) return(result$python)
  if (inherits(result, c("hphawkes_temporal_scan", "hphawkes_svtt")))
    .hp_stop(name, " is a ", if (inherits(result, "hphawkes_svtt")) "spatial variation in temporal trends" else
             "purely temporal", " result: it has SaTScan's tables (scan_write_satscan()), not cluster geometry here")
  if (!inherits(result, "hphawkes_scan"))
    .hp_stop(name, " must be a scan result (scan_bernoulli(), scan_poisson(), scan_space_time(), ",
             "scan_normal(), scan_exponential(), scan_ordinal(), scan_temporal(), scan_svtt(), ...), got ",
             .hp_kind(result))
  result$python
}

.hp_path_arg <- function(path, name) {
  if (!is.character(path) || length(path) != 1L || is.na(path) || !nzchar(path))
    .hp_stop(name, " must be a single file path, got ", .hp_kind(path))
  dir <- dirname(path)
  if (!dir.exists(dir)) .hp_stop(name, ": the folder '", dir, "' does not exist")
  file.path(normalizePath(dir, winslash = "/"), basename(path))
}

.hp_vertices <- function(n_vertices) {
  n <- .as_int(n_vertices, "n_vertices", FALSE)
  if (n < 8L) .hp_stop("n_vertices must be a whole number >= 8, got ", n)
  n
}

#' Write a scan result as SaTScan's output files
#'
#' Calls \code{hphawkes_py.scan.write_satscan}: the text report and the \code{.col} (clusters),
#' \code{.gis} (locations in clusters), \code{.rr} (relative risk per location) and \code{.llr}
#' (null maxima) tables of SaTScan, as CSV (or dBase), with the same columns, so that scripts
#' written for SaTScan's output read them unchanged; optionally the cluster geometry too.
#'
#' @param result A scan result (\code{scan_bernoulli()}, \code{scan_poisson()},
#'   \code{scan_space_time()}, \code{scan_normal()}, \code{scan_exponential()}, \code{scan_ordinal()},
#'   \code{scan_multinomial()}, \code{scan_run_prm()}, \code{scan_iterative()}: its clusters over the
#'   full data; or \code{scan_temporal()}, \code{scan_seasonal()}, \code{scan_svtt()}: SaTScan's
#'   tables of those analyses, no geometry).
#' @param results_file The report's path (e.g. \code{"out/analysis.txt"}); the tables are written
#'   beside it as \code{analysis.col.csv} etc. Its folder must exist.
#' @param tables \code{NULL} (every table the model has) or a character vector of \code{"col"},
#'   \code{"gis"}, \code{"rr"}, \code{"llr"}.
#' @param dbase Also write the tables as dBase (\code{.dbf}; needs the Python packages pyogrio and shapely).
#' @param report Write the text report.
#' @param geometry Character vector of geometry formats written beside the tables:
#'   \code{"geojson"}, \code{"kml"} (latitude/longitude data), \code{"shp"}, \code{"gpkg"}, \code{"html"},
#'   \code{"leaflet"}.
#' @param study_period \code{NULL} or the study period's two ends as printed in the report.
#' @param gumbel Report the Gumbel p-values too.
#' @param p_values \code{"monte_carlo"}, \code{"gumbel"} or \code{"default"}: the p-value reported.
#' @param penalty \code{NULL} or the non-compactness penalty shown in the report.
#' @param title \code{NULL} or the report's title.
#' @return The paths written (character vector, in the order written), invisibly.
#' @seealso \code{\link{scan_geometry}}, \code{\link{scan_cluster_map}}.
#' @examplesIf hphawkes_available()
#' g <- hphawkes_data("grave")
#' res <- scan_bernoulli(g[, c("x", "y")], g$case, 1 - g$case, n_replicates = 99, seed = 1)
#' out <- file.path(tempdir(), "grave.txt")
#' files <- scan_write_satscan(res, out, geometry = "geojson")
#' basename(files)
#' head(utils::read.csv(files[grepl("col", files)]))
#' @export
scan_write_satscan <- function(result, results_file, tables = NULL, dbase = FALSE, report = TRUE,
                               geometry = character(), study_period = NULL, gumbel = FALSE,
                               p_values = "monte_carlo", penalty = NULL, title = NULL) {
  .hp_check_args()
  res <- .hp_scan_python(result, time = TRUE)
  path <- .hp_path_arg(results_file, "results_file")
  if (!is.null(tables) && (!is.character(tables) || anyNA(tables)))
    .hp_stop("tables must be NULL or a character vector of \"col\", \"gis\", \"rr\", \"llr\", got ", .hp_kind(tables))
  if (!is.character(geometry) || anyNA(geometry))
    .hp_stop("geometry must be a character vector of formats (\"geojson\", \"kml\", \"shp\", \"gpkg\", ",
             "\"html\", \"leaflet\"), got ", .hp_kind(geometry))
  for (nm in c("title", "penalty")) {
    v <- get(nm)
    if (!is.null(v) && (!is.character(v) || length(v) != 1L || is.na(v)))
      .hp_stop(nm, " must be NULL or a single string, got ", .hp_kind(v))
  }
  if (!is.null(study_period)) {
    .hp_no_na(study_period, "study_period")
    if (length(study_period) != 2L) .hp_stop("study_period must have two ends, got ", length(study_period), " values")
    study_period <- as.list(as.character(study_period))
  }
  sc <- .hp_mod("scan")
  files <- .hp_call(sc$write_satscan(res, path, tables = .as_seq(tables), dbase = .as_flag(dbase, "dbase"),
    report = .as_flag(report, "report"), geometry = .as_seq(geometry), study_period = study_period,
    gumbel = .as_flag(gumbel, "gumbel"), p_values = p_values, penalty = penalty, title = title))
  invisible(.hp_paths(files))
}

# A Python list of pathlib.Path as an R character vector.
.hp_paths <- function(files) {
  bi <- reticulate::import_builtins(convert = FALSE)
  as.character(unlist(reticulate::py_to_r(bi$list(bi$map(bi$str, files)))))
}

#' Cluster polygons of a scan result, as an sf object or a data frame
#'
#' Calls \code{hphawkes_py.scan.geometry.cluster_polygons}: each reported cluster (most likely
#' first) as a closed polygon of \code{n_vertices} vertices, the circle (or ellipse) in the data's
#' coordinates ((longitude, latitude) for great-circle data), with SaTScan's \code{.col} attributes
#' (\code{CLUSTER}, \code{LOC_ID}, \code{OBSERVED}, \code{EXPECTED}, \code{REL_RISK}, \code{LLR},
#' \code{P_VALUE}, \code{RADIUS}, ...).
#'
#' @param result A scan result (as in \code{\link{scan_write_satscan}}).
#' @param n_vertices Vertices of each polygon (whole number >= 8).
#' @param sf \code{NULL} (an \code{sf} object when the R package sf is installed, else a data
#'   frame), \code{TRUE} (sf, an error without it) or \code{FALSE} (a data frame).
#' @return With sf: an \code{sf} data frame, one row per cluster, POLYGON geometry (CRS EPSG:4326
#'   for great-circle data, none otherwise). Without: a data frame of the attributes with a list
#'   column \code{geometry} of two-column matrices (\code{x}, \code{y}: the closed ring).
#' @seealso \code{\link{scan_write_geometry}} for GeoJSON, KML, shapefile and GeoPackage files.
#' @examplesIf hphawkes_available()
#' g <- hphawkes_data("grave")
#' res <- scan_bernoulli(g[, c("x", "y")], g$case, 1 - g$case, n_replicates = 99, seed = 1)
#' poly <- scan_geometry(res, n_vertices = 16, sf = FALSE)
#' poly[, c("CLUSTER", "OBSERVED", "LLR", "P_VALUE")]
#' head(poly$geometry[[1]], 3)
#' if (requireNamespace("sf", quietly = TRUE)) plot(sf::st_geometry(scan_geometry(res)))
#' @export
scan_geometry <- function(result, n_vertices = 64L, sf = NULL) {
  .hp_check_args()
  res <- .hp_scan_python(result)
  n <- .hp_vertices(n_vertices)
  if (!is.null(sf)) sf <- .as_flag(sf, "sf")
  have_sf <- requireNamespace("sf", quietly = TRUE)
  if (isTRUE(sf) && !have_sf) .hp_stop("sf = TRUE needs the R package sf (install.packages(\"sf\"))")
  use_sf <- if (is.null(sf)) have_sf else sf
  geo <- .hp_mod("scan.geometry")
  polys <- .hp_r(.hp_call(geo$cluster_polygons(res, n_vertices = n)))
  props <- lapply(polys, function(p) p[[1]])
  rings <- lapply(polys, function(p) {
    r <- p[[2]]
    m <- if (is.matrix(r)) matrix(as.numeric(r), ncol = 2L) else do.call(rbind, lapply(r, as.numeric))
    colnames(m) <- c("x", "y")
    m
  })
  cols <- unique(unlist(lapply(props, names)))
  df <- as.data.frame(lapply(stats::setNames(cols, cols), function(nm) {
    v <- lapply(props, function(p) if (is.null(p[[nm]])) NA else p[[nm]])
    unlist(v)
  }), stringsAsFactors = FALSE)
  if (!length(props)) df <- data.frame(CLUSTER = integer())
  latlong <- identical(reticulate::py_to_r(res$distance), "great_circle")
  if (use_sf) {
    geom <- sf::st_sfc(lapply(rings, function(m) sf::st_polygon(list(unname(m)))),
                       crs = if (latlong) 4326L else NA_integer_)
    return(sf::st_sf(df, geometry = geom))
  }
  df$geometry <- I(rings)
  df
}

#' Write the cluster polygons of a scan result as GeoJSON, KML or a vector file
#'
#' Calls \code{hphawkes_py.scan.write_geojson}, \code{write_kml} (latitude/longitude data only;
#' \code{.kmz} zipped) or \code{write_vector} (shapefile, GeoPackage ...; needs the Python
#' packages pyogrio and shapely), chosen by \code{format} or the file's suffix.
#'
#' @param result A scan result (as in \code{\link{scan_write_satscan}}).
#' @param path The file to write (its folder must exist).
#' @param format \code{NULL} (from the suffix: \code{.geojson}/\code{.json}, \code{.kml}/\code{.kmz},
#'   anything else a vector file) or \code{"geojson"}, \code{"kml"}, \code{"vector"}.
#' @param n_vertices Vertices of each polygon (whole number >= 8).
#' @param locations KML: also the locations in the clusters as placemarks.
#' @param driver Vector files: \code{NULL} (from the suffix) or a GDAL driver name.
#' @return \code{path}, invisibly.
#' @seealso \code{\link{scan_geometry}}.
#' @examplesIf hphawkes_available()
#' g <- hphawkes_data("grave")
#' res <- scan_bernoulli(g[, c("x", "y")], g$case, 1 - g$case, n_replicates = 99, seed = 1)
#' f <- scan_write_geometry(res, file.path(tempdir(), "grave_clusters.geojson"))
#' substr(paste(readLines(f, warn = FALSE), collapse = ""), 1, 60)
#' @export
scan_write_geometry <- function(result, path, format = NULL, n_vertices = 64L, locations = TRUE,
                                driver = NULL) {
  .hp_check_args()
  res <- .hp_scan_python(result)
  p <- .hp_path_arg(path, "path")
  n <- .hp_vertices(n_vertices)
  if (is.null(format)) {
    ext <- tolower(sub("^.*\\.", "", basename(p)))
    format <- if (ext %in% c("geojson", "json")) "geojson" else if (ext %in% c("kml", "kmz")) "kml" else "vector"
  }
  if (!is.character(format) || length(format) != 1L || is.na(format) || !format %in% c("geojson", "kml", "vector"))
    .hp_stop("format must be NULL, \"geojson\", \"kml\" or \"vector\", got ", paste(format(format), collapse = ", "))
  if (!is.null(driver) && (!is.character(driver) || length(driver) != 1L || is.na(driver)))
    .hp_stop("driver must be NULL or a single GDAL driver name, got ", .hp_kind(driver))
  sc <- .hp_mod("scan")
  .hp_call(switch(format,
    geojson = sc$write_geojson(res, p, n_vertices = n),
    kml = sc$write_kml(res, p, n_vertices = n, locations = .as_flag(locations, "locations")),
    vector = sc$write_vector(res, p, n_vertices = n, driver = driver)))
  invisible(p)
}

#' HTML map of the clusters of a scan result
#'
#' Calls \code{hphawkes_py.scan.cluster_map}: a self-contained page (inline SVG: the locations,
#' the cluster polygons and a table of the clusters), or with \code{engine = "folium"} a Leaflet
#' map on web tiles (needs the Python package folium).
#'
#' @param result A scan result (as in \code{\link{scan_write_satscan}}).
#' @param path \code{NULL} (return the page as a string) or the \code{.html} file to write.
#' @param engine \code{"svg"} or \code{"folium"} (\code{path} then required).
#' @param max_clusters \code{NULL} (all) or the number of clusters drawn.
#' @param n_vertices Vertices of each polygon (whole number >= 8).
#' @param tiles \code{engine = "folium"}: draw web tiles under the map.
#' @param width,height Size of the SVG map in pixels.
#' @return The page (a string) or \code{path}, invisibly.
#' @examplesIf hphawkes_available()
#' g <- hphawkes_data("grave")
#' res <- scan_bernoulli(g[, c("x", "y")], g$case, 1 - g$case, n_replicates = 99, seed = 1)
#' page <- scan_cluster_map(res, max_clusters = 2)
#' substr(page, 1, 15)
#' f <- scan_cluster_map(res, file.path(tempdir(), "grave_map.html"))
#' if (interactive()) utils::browseURL(f)
#' @export
scan_cluster_map <- function(result, path = NULL, engine = "svg", max_clusters = NULL, n_vertices = 64L,
                             tiles = TRUE, width = 900L, height = 650L) {
  .hp_check_args()
  res <- .hp_scan_python(result)
  p <- if (is.null(path)) NULL else .hp_path_arg(path, "path")
  if (!is.character(engine) || length(engine) != 1L || is.na(engine) || !engine %in% c("svg", "folium"))
    .hp_stop("engine must be \"svg\" or \"folium\", got ", paste(format(engine), collapse = ", "))
  if (engine == "folium" && is.null(p)) .hp_stop("engine = \"folium\" needs a path to write the map to")
  mc <- .as_int(max_clusters, "max_clusters")
  if (!is.null(mc) && mc < 0L) .hp_stop("max_clusters must be NULL or a whole number >= 0, got ", mc)
  for (nm in c("width", "height")) if (.as_int(get(nm), nm, FALSE) < 1L) .hp_stop(nm, " must be a whole number >= 1, got ", get(nm))
  out <- .hp_call(.hp_mod("scan")$cluster_map(res, p, engine = engine, max_clusters = mc,
    n_vertices = .hp_vertices(n_vertices), tiles = .as_flag(tiles, "tiles"),
    width = .as_int(width, "width", FALSE), height = .as_int(height, "height", FALSE)))
  if (is.null(p)) return(reticulate::py_to_r(out))
  invisible(p)
}

#' Kulldorff's normal (and weighted normal) spatial scan statistic
#'
#' Calls \code{hphawkes_py.scan.normal}: SaTScan's normal model for a continuous value per
#' observation (Kulldorff, Huang & Konty 2009): a window with a higher (lower) mean than outside,
#' a common variance; with \code{weights}, the weighted normal model.
#'
#' @param coords Numeric matrix or data frame (n x 2): location of each observation.
#' @param values Numeric value of each observation.
#' @param weights \code{NULL} or positive weight of each observation (weighted normal model).
#' @param location_ids Optional ids (observations of one location share its id).
#' @param max_population Maximum window size as a fraction of the observations, in (0, 0.5].
#' @param max_distance \code{NULL} or maximum circle radius.
#' @param min_cases \code{NULL} or minimum observations in a cluster.
#' @param n_replicates Monte Carlo replicates (permutations of the values).
#' @param direction \code{"high"}, \code{"low"} or \code{"both"}.
#' @param secondary \code{"no-overlap"}.
#' @param grid_cell \code{NULL} or grid spacing for circle centres.
#' @param distance \code{"euclidean"} or \code{"great_circle"}.
#' @param seed,progress,backend,threads As in \code{\link{scan_bernoulli}}.
#' @return An object of class \code{hphawkes_scan}, \code{model = "normal"} (or
#'   \code{"weighted_normal"}): \code{clusters} has \code{mean_inside}, \code{mean_outside},
#'   \code{variance} and \code{std} (SaTScan's), \code{cases} the window's observations.
#' @examplesIf hphawkes_available()
#' set.seed(2)  # 30 locations x 5 observations; higher values near (2, 2)
#' xy <- cbind(runif(30, 0, 10), runif(30, 0, 10))
#' loc <- rep(1:30, each = 5)
#' v <- rnorm(150, ifelse(sqrt((xy[loc, 1] - 2)^2 + (xy[loc, 2] - 2)^2) < 2.5, 3, 0))
#' res <- scan_normal(xy[loc, ], v, location_ids = loc, n_replicates = 99, seed = 1)
#' res$clusters[1, c("cases", "mean_inside", "mean_outside", "p_value")]
#' @export
scan_normal <- function(coords, values, weights = NULL, location_ids = NULL, max_population = 0.5,
                        max_distance = NULL, min_cases = NULL, n_replicates = 999L, direction = "high",
                        secondary = "no-overlap", grid_cell = NULL, distance = "euclidean", seed = NULL,
                        progress = FALSE, backend = "auto", threads = NULL) {
  .hp_check_args()
  .hp_no_na(values, "values")
  kw <- list(max_population = .as_num(max_population), max_distance = .as_num(max_distance),
             min_cases = .as_int(min_cases), n_replicates = .as_int(n_replicates), direction = direction,
             secondary = secondary, grid_cell = .as_num(grid_cell), distance = distance, seed = .as_int(seed),
             progress = .as_flag(progress, "progress"), backend = backend, threads = .as_int(threads))
  if (!is.null(weights)) kw$weights <- .np_double(weights, "weights")
  if (!is.null(location_ids)) kw$location_ids <- .np_ids(location_ids, "location_ids")
  res <- .hp_call(do.call(.hp_mod("scan")$normal, c(list(.np_double(as.matrix(coords), "coords"),
    .np_double(values, "values")), kw)))
  .hp_scan_result(res)
}

#' Kulldorff's exponential spatial scan statistic for survival times
#'
#' Calls \code{hphawkes_py.scan.exponential}: SaTScan's exponential model (Huang, Kulldorff &
#' Gregorio 2007) for survival times with censoring: a window whose patients die sooner (later)
#' than expected.
#'
#' @param coords Numeric matrix or data frame (n x 2): location of each patient.
#' @param times Positive survival (or censoring) time of each patient.
#' @param censored \code{NULL} (none censored) or \code{TRUE}/\code{FALSE} (or 1/0) per patient.
#' @param min_cases Minimum uncensored patients in a cluster.
#' @inheritParams scan_normal
#' @return An object of class \code{hphawkes_scan}, \code{model = "exponential"}: \code{clusters}
#'   has \code{cases} (uncensored patients), \code{population} (patients), \code{expected}
#'   (expected deaths), \code{observed_over_expected}, \code{mean_time_inside},
#'   \code{mean_time_outside} and \code{censored}.
#' @examplesIf hphawkes_available()
#' set.seed(5)  # shorter survival near (8, 8)
#' xy <- cbind(runif(200, 0, 10), runif(200, 0, 10))
#' near <- sqrt((xy[, 1] - 8)^2 + (xy[, 2] - 8)^2) < 2
#' tm <- rexp(200, ifelse(near, 3, 1))
#' cens <- runif(200) < 0.2
#' res <- scan_exponential(xy, tm, cens, n_replicates = 99, seed = 1)
#' res$clusters[1, c("cases", "expected", "mean_time_inside", "mean_time_outside", "p_value")]
#' @export
scan_exponential <- function(coords, times, censored = NULL, location_ids = NULL, max_population = 0.5,
                             max_distance = NULL, min_cases = 2L, n_replicates = 999L, direction = "high",
                             secondary = "no-overlap", grid_cell = NULL, distance = "euclidean", seed = NULL,
                             progress = FALSE, backend = "auto", threads = NULL) {
  .hp_check_args()
  .hp_no_na(times, "times")
  kw <- list(max_population = .as_num(max_population), max_distance = .as_num(max_distance),
             min_cases = .as_int(min_cases), n_replicates = .as_int(n_replicates), direction = direction,
             secondary = secondary, grid_cell = .as_num(grid_cell), distance = distance, seed = .as_int(seed),
             progress = .as_flag(progress, "progress"), backend = backend, threads = .as_int(threads))
  if (!is.null(location_ids)) kw$location_ids <- .np_ids(location_ids, "location_ids")
  cens <- .np_censored(censored)
  res <- .hp_call(do.call(.hp_mod("scan")$exponential, c(list(.np_double(as.matrix(coords), "coords"),
    .np_double(times, "times"), cens), kw)))
  .hp_scan_result(res)
}

#' SaTScan's iterative scan
#'
#' Calls \code{hphawkes_py.scan.iterative_scan}: the most likely cluster of a Bernoulli or
#' Poisson scan is reported, its locations removed, and the rest scanned again, up to
#' \code{max_iterations} times or until a cluster's p-value exceeds \code{max_p_value}: a cluster
#' hidden by a stronger one can become significant.
#'
#' @param model \code{"bernoulli"} or \code{"poisson"}.
#' @param coords Numeric matrix or data frame (n x 2).
#' @param cases Non-negative whole-number case counts.
#' @param controls_or_population Bernoulli: the controls; Poisson: the population (\code{NULL}
#'   with \code{expected} in \code{...}).
#' @param max_iterations At most this many scans (1 to 32000).
#' @param max_p_value Go on while the reported cluster's p-value is at most this.
#' @param p_value \code{"monte_carlo"}, \code{"gumbel"} or \code{"default"}: the p-value compared.
#' @param ... The scan's other arguments, by their full names (\code{n_replicates} >= 99,
#'   \code{seed}, \code{max_population}, \code{location_ids}, \code{expected}, \code{window}, ...),
#'   as in \code{\link{scan_bernoulli}} and \code{\link{scan_poisson}}.
#' @return An object of class \code{hphawkes_iterative_scan}: \code{clusters} (one row per
#'   iteration: \code{iteration}, the cluster's columns, \code{remaining_cases},
#'   \code{remaining_population}), \code{results} (each iteration's \code{hphawkes_scan}),
#'   \code{stop_reason}; \code{summary()} and \code{as.data.frame()} give the cluster table,
#'   and it can be passed to \code{\link{scan_write_satscan}}, \code{\link{scan_geometry}} and
#'   \code{\link{scan_cluster_map}}.
#' @examplesIf hphawkes_available()
#' ny <- hphawkes_data("ny_leukemia")
#' it <- scan_iterative("poisson", ny[, c("x", "y")], ny$cases_floor, ny$population,
#'                      max_iterations = 3, max_p_value = 0.5, n_replicates = 99, seed = 1)
#' it
#' it$clusters[, c("iteration", "cases", "expected", "p_value", "remaining_cases")]
#' @export
scan_iterative <- function(model, coords, cases, controls_or_population = NULL, max_iterations = 10L,
                           max_p_value = 0.05, p_value = "monte_carlo", ...) {
  .hp_check_args(dots = TRUE)
  if (!is.character(model) || length(model) != 1L || is.na(model) || !model %in% c("bernoulli", "poisson"))
    .hp_stop("model must be \"bernoulli\" or \"poisson\", got ", paste(format(model), collapse = ", "))
  dots <- list(...)
  if (length(dots) && (is.null(names(dots)) || any(!nzchar(names(dots)))))
    .hp_stop("the scan's other arguments (...) must be named")
  known <- setdiff(names(formals(if (model == "bernoulli") scan_bernoulli else scan_poisson)),
                   c("coords", "cases", "controls", "population"))
  bad <- setdiff(names(dots), known)
  if (length(bad)) .hp_stop("unknown argument '", bad[1], "' for the ", model, " scan; its arguments are: ",
                            paste(known, collapse = ", "))
  ints <- c("n_replicates", "min_cases", "seed", "threads")
  nums <- c("max_population", "max_distance", "grid_cell")
  for (nm in names(dots)) {
    v <- dots[[nm]]
    dots[[nm]] <- if (nm %in% ints) .as_int(v, nm) else if (nm %in% nums) .as_num(v, nm) else
      if (nm == "progress") .as_flag(v, nm) else if (nm == "location_ids") .np_ids(v, nm) else
      if (nm == "expected") .np_double(v, nm) else if (nm == "covariates") {
        .hp_no_na(v, nm)
        if (is.data.frame(v)) .pd_frame(v, nm) else as.list(as.character(v))
      } else v
  }
  if (is.null(dots$progress)) dots$progress <- FALSE
  cp <- if (is.null(controls_or_population)) NULL else if (model == "bernoulli")
    .np_count(controls_or_population, "controls_or_population") else
    .np_double(controls_or_population, "controls_or_population")
  res <- .hp_call(do.call(.hp_mod("scan")$iterative_scan, c(list(model, .np_double(as.matrix(coords), "coords"),
    .np_count(cases, "cases"), cp, max_iterations = .as_int(max_iterations, "max_iterations", FALSE),
    max_p_value = .as_num(max_p_value, "max_p_value", FALSE), p_value = p_value), dots)))
  results <- lapply(seq_len(reticulate::py_len(res$results)) - 1L,
                    function(i) .hp_scan_result(reticulate::py_get_item(res$results, i)))
  structure(list(clusters = .hp_r(res$clusters), results = results, stop_reason = .hp_r(res$stop_reason),
                 model = model, max_iterations = .hp_r(res$max_iterations),
                 max_p_value = .hp_r(res$max_p_value), p_value = p_value, python = res),
            class = "hphawkes_iterative_scan")
}

#' @export
print.hphawkes_iterative_scan <- function(x, ...) {
  cat(reticulate::py_to_r(x$python$summary()), "\n", sep = "")
  invisible(x)
}

#' @export
summary.hphawkes_iterative_scan <- function(object, ...) {
  cl <- object$clusters
  cl$location_ids <- NULL
  cl
}

#' @export
as.data.frame.hphawkes_iterative_scan <- function(x, ...) x$clusters

#' Power of the discrete Poisson scan against given alternatives
#'
#' Calls \code{hphawkes_py.scan.power}: SaTScan's power evaluation. Critical values of the
#' maximum LLR come from null replicates; under each alternative (a relative risk per row) the
#' same number of cases is redistributed and the scan's maximum LLR compared with them.
#'
#' @param coords Numeric matrix or data frame (n x 2).
#' @param cases Case counts per row (their total is every replicate's) or the total itself.
#' @param population Population per row (\code{NULL} with \code{expected}).
#' @param relative_risks The alternatives: a vector (one alternative) or a matrix with one row per
#'   alternative and one column per row of \code{coords} (1 = the null's rate).
#' @param expected \code{NULL} or expected cases per row under the null.
#' @param n_replicates Null replicates for the critical values.
#' @param n_power_replicates \code{NULL} (\code{n_replicates + 1}) or replicates per alternative.
#' @param critical_values \code{"monte_carlo"}, \code{"gumbel"}, or three numbers: the critical
#'   LLR for alpha = 0.05, 0.01, 0.001.
#' @param estimation \code{"monte_carlo"} or \code{"gumbel"}.
#' @param max_population,max_distance,min_cases,direction,grid_cell,distance,window,penalty As in
#'   \code{\link{scan_poisson}}.
#' @param seed,progress,backend,threads As in \code{\link{scan_bernoulli}}.
#' @return An object of class \code{hphawkes_scan_power}: \code{table} (data frame:
#'   \code{alternative}, \code{alpha}, \code{critical_value}, \code{power},
#'   \code{standard_error}), \code{critical_values} (named by alpha), \code{null_llr},
#'   \code{alternative_llr} (matrix, one row per alternative), \code{n_cases}.
#' @examplesIf hphawkes_available()
#' ny <- hphawkes_data("ny_leukemia")
#' rr <- ifelse(seq_len(nrow(ny)) <= 10, 3, 1)  # relative risk 3 in the first 10 tracts
#' pw <- scan_power(ny[, c("x", "y")], ny$cases_floor, ny$population, rr,
#'                  n_replicates = 99, n_power_replicates = 50, critical_values = "gumbel", seed = 1)
#' pw
#' @export
scan_power <- function(coords, cases, population, relative_risks, expected = NULL, n_replicates = 999L,
                       n_power_replicates = NULL, critical_values = "monte_carlo", estimation = "monte_carlo",
                       max_population = 0.5, max_distance = NULL, min_cases = 2L, direction = "high",
                       grid_cell = NULL, distance = "euclidean", window = "circle", penalty = "medium",
                       seed = NULL, progress = FALSE, backend = "auto", threads = NULL) {
  .hp_check_args()
  cv <- critical_values
  if (is.numeric(cv)) {
    if (length(cv) != 3L || anyNA(cv))
      .hp_stop("critical_values must be \"monte_carlo\", \"gumbel\" or three numbers (alpha = 0.05, 0.01, 0.001), got ",
               length(cv), " number(s)")
    cv <- as.list(as.double(cv))
  } else if (!is.character(cv) || length(cv) != 1L || is.na(cv)) {
    .hp_stop("critical_values must be \"monte_carlo\", \"gumbel\" or three numbers, got ", .hp_kind(cv))
  }
  if (!is.numeric(relative_risks)) .hp_stop("relative_risks must be numeric, got ", .hp_kind(relative_risks))
  pop <- if (is.null(population)) NULL else .np_double(population, "population")
  kw <- list(n_replicates = .as_int(n_replicates), n_power_replicates = .as_int(n_power_replicates),
             critical_values = cv, estimation = estimation, max_population = .as_num(max_population),
             max_distance = .as_num(max_distance), min_cases = .as_int(min_cases), direction = direction,
             grid_cell = .as_num(grid_cell), distance = distance, window = window, penalty = penalty,
             seed = .as_int(seed), progress = .as_flag(progress, "progress"), backend = backend,
             threads = .as_int(threads))
  if (!is.null(expected)) kw$expected <- .np_double(expected, "expected")
  res <- .hp_call(do.call(.hp_mod("scan")$power, c(list(.np_double(as.matrix(coords), "coords"),
    .np_count(cases, "cases"), pop, .np_double(relative_risks, "relative_risks")), kw)))
  cvs <- .hp_r(res$critical_values)
  structure(list(table = .hp_r(res$table), critical_values = unlist(cvs), null_llr = .hp_r(res$null_llr),
                 alternative_llr = .hp_r(res$alternative_llr), n_cases = .hp_r(res$n_cases),
                 critical_value_type = .hp_r(res$critical_value_type), estimation = .hp_r(res$estimation),
                 python = res), class = "hphawkes_scan_power")
}

#' @export
print.hphawkes_scan_power <- function(x, ...) {
  cat(reticulate::py_to_r(x$python$summary()), "\n", sep = "")
  invisible(x)
}

#' @export
summary.hphawkes_scan_power <- function(object, ...) object$table

#' @export
as.data.frame.hphawkes_scan_power <- function(x, ...) x$table
