# Adaptive kernel density estimation (Zhang, Zhu & Huang 2017): wrappers over hphawkes_py.kde.

#' Study-area windows for kernel density estimation
#'
#' @param type \code{"rectangle"} (arguments \code{xmin, xmax, ymin, ymax, cell_size}),
#'   \code{"asc"} (\code{path} of an ESRI ASCII grid, NODATA = outside; \code{.asc.gz} works),
#'   \code{"mask"} (\code{mask}: logical matrix, row 1 = top; \code{x0, y0} lower-left corner;
#'   \code{cell_size}), \code{"polygon"} (\code{vertices}: 2-column matrix; \code{cell_size}),
#'   \code{"geotiff"} (\code{path} of a north-up GeoTIFF, nodata/zero cells outside, optional
#'   \code{band}; CRS kept) or \code{"vector"} (\code{path} of a GeoJSON file, or a Shapefile when
#'   pyogrio/fiona is installed; \code{cell_size}; optional \code{layer}). The last two need
#'   \code{pip install 'hphawkes_py[gis]'} and take an optional \code{crs} (e.g. \code{"EPSG:32633"}):
#'   explicit reprojection of the window to that CRS (GeoTIFF: nearest neighbour, optional
#'   \code{cell_size} in the target units; vector: the polygons, then rasterised at \code{cell_size}
#'   target units), and \code{source_crs} for files that declare no CRS. Nothing is reprojected
#'   unless \code{crs} is given.
#' @param ... The arguments of the chosen type, named as in Python.
#' @return An object of class \code{kde_window} (holds the Python Window): \code{x0},
#'   \code{y0} (lower-left corner), \code{cell_size}, \code{shape} (rows, columns),
#'   \code{area}, \code{n_inside} (cells inside) and \code{crs} (\code{NULL} when none).
#' @seealso \code{\link{kde_fit}}, \code{\link{kde_relative_risk}}, \code{\link{kde_spacetime}}.
#' @examplesIf hphawkes_available()
#' kde_window("rectangle", xmin = 0, xmax = 10, ymin = 0, ymax = 5, cell_size = 0.5)
#' kde_window("polygon", vertices = cbind(c(0, 4, 0), c(0, 0, 3)), cell_size = 0.1)
#' m <- matrix(TRUE, 4, 6); m[1, 1:2] <- FALSE  # row 1 is the top row
#' kde_window("mask", mask = m, x0 = 0, y0 = 0, cell_size = 1)
#' kde_window("asc", path = hphawkes_data_path("kde/zhang2017/redwood.asc.gz"))
#' @export
kde_window <- function(type = c("rectangle", "asc", "mask", "polygon", "geotiff", "vector"), ...) {
  .hp_check_args(dots = TRUE)
  type <- match.arg(type)
  W <- .hp_mod("kde")$Window
  a <- list(...)
  # each kind of window takes its own arguments; any other would be ignored without a word
  allowed <- switch(type, rectangle = c("xmin", "xmax", "ymin", "ymax", "cell_size"), asc = "path",
                    mask = c("mask", "x0", "y0", "cell_size"), polygon = c("vertices", "cell_size"),
                    geotiff = c("path", "band", "crs", "cell_size", "source_crs"),
                    vector = c("path", "cell_size", "layer", "crs", "source_crs"))
  given <- if (length(a)) names(a) else character()
  if (is.null(given)) given <- rep("", length(a))
  bad <- given[!(given %in% allowed)]
  if (length(bad))
    .hp_stop("kde_window(\"", type, "\") takes the named arguments ", paste(allowed, collapse = ", "), "; got ",
             paste0("'", ifelse(nzchar(bad), bad, "<unnamed>"), "'", collapse = ", "))
  py <- switch(type,
    rectangle = .hp_call(W$rectangle(.as_num(a$xmin, "xmin", FALSE), .as_num(a$xmax, "xmax", FALSE),
                                     .as_num(a$ymin, "ymin", FALSE), .as_num(a$ymax, "ymax", FALSE),
                                     .as_num(a$cell_size, "cell_size", FALSE))),
    asc = .hp_call(W$from_asc(path.expand(as.character(a$path)))),
    mask = {
      m <- a$mask
      if (!is.logical(m) || is.null(dim(m))) .hp_stop("mask must be a logical matrix (TRUE inside), got ", .hp_kind(m))
      .hp_no_na(as.vector(m), "mask")  # as.integer(NA) is nonzero: an NA cell would be inside
      buf <- writeBin(as.integer(m), raw(), size = 4L, endian = "little")
      arr <- .hp_call(rf$array_from_r(reticulate::r_to_py(buf), .hp_dims(m), "bool"))
      .hp_call(W$from_mask(arr, .as_num(a$x0, "x0", FALSE), .as_num(a$y0, "y0", FALSE),
                           .as_num(a$cell_size, "cell_size", FALSE)))
    },
    polygon = .hp_call(W$from_polygon(.np_double(as.matrix(a$vertices), "vertices"),
                                      .as_num(a$cell_size, "cell_size", FALSE))),
    geotiff = .hp_call(W$from_geotiff(path.expand(as.character(a$path)),
                                      band = if (is.null(a$band)) 1L else as.integer(a$band),
                                      crs = .as_crs(a$crs, "crs"), cell_size = .as_num(a$cell_size, "cell_size"),
                                      source_crs = .as_crs(a$source_crs, "source_crs"))),
    vector = .hp_call(W$from_vector(path.expand(as.character(a$path)), .as_num(a$cell_size, "cell_size", FALSE),
                                    layer = a$layer, crs = .as_crs(a$crs, "crs"),
                                    source_crs = .as_crs(a$source_crs, "source_crs")))
  )
  .kde_window_r(py)
}

.as_crs <- function(x, name) {
  if (is.null(x)) return(NULL)
  if (is.numeric(x) && length(x) == 1L && !is.na(x) && x == round(x)) return(as.integer(x))
  if (!is.character(x) || length(x) != 1L || is.na(x)) .hp_stop(sprintf("%s must be one CRS string (e.g. \"EPSG:32633\") or EPSG code", name))
  x
}

#' Reproject point coordinates between coordinate reference systems
#'
#' Explicit reprojection (nothing is reprojected silently) through
#' \code{hphawkes_py.kde.reproject_points} (\code{rasterio.warp.transform}); needs
#' \code{pip install 'hphawkes_py[gis]'}.
#' @param points Numeric matrix or data frame (n x 2): x, y (longitude, latitude in degrees for a
#'   geographic CRS).
#' @param src_crs,dst_crs Source and target CRS: a string such as \code{"EPSG:4326"} or an EPSG code.
#' @return Numeric matrix (n x 2) of the coordinates in \code{dst_crs} (metres for a metric CRS).
#' @examplesIf hphawkes_available() && reticulate::py_module_available("rasterio")
#' lonlat <- rbind(c(-77.04, 38.90), c(-77.00, 38.95))  # Washington, DC
#' kde_reproject_points(lonlat, "EPSG:4326", "EPSG:32618")  # UTM zone 18N, metres
#' @export
kde_reproject_points <- function(points, src_crs, dst_crs) {
  .hp_check_args()
  pts <- as.matrix(points)
  .hp_r(.hp_call(.hp_mod("kde")$reproject_points(.np_double(pts, "points"), .as_crs(src_crs, "src_crs"),
                                                 .as_crs(dst_crs, "dst_crs"))))
}

.kde_window_r <- function(py) {
  at <- .hp_r(.hp_call(rf$attributes(py, list("x0", "y0", "cell_size", "shape", "area", "n_inside"))))
  crs <- reticulate::py_get_attr(py, "crs")
  at$crs <- if (reticulate::py_is_null_xptr(crs) || inherits(crs, "python.builtin.NoneType")) NULL
            else reticulate::py_str(crs)
  structure(c(at, list(python = py)), class = "kde_window")
}

#' Write a KDE surface as a GeoTIFF
#'
#' Writes \code{surface$z} (NA cells as \code{nodata}) with the window's transform and CRS through
#' \code{hphawkes_py.kde.Raster.to_geotiff}; values round-trip exactly. Needs
#' \code{pip install 'hphawkes_py[gis]'}.
#' @param surface A \code{kde_surface} (from \code{kde_surface()} or \code{kde_relative_risk()}).
#' @param path File to write (\code{.tif}).
#' @param nodata Value written for cells outside the window.
#' @return \code{path}, invisibly.
#' @examplesIf hphawkes_available() && reticulate::py_module_available("rasterio")
#' rw <- hphawkes_data("redwood")  # 62 redwood saplings and their study-area mask
#' win <- kde_window("asc", path = hphawkes_data_path("kde/zhang2017/redwood.asc.gz"))
#' fit <- kde_fit(rw[[1]], win)
#' tif <- tempfile(fileext = ".tif")
#' kde_write_geotiff(kde_surface(fit), tif)
#' file.exists(tif)
#' @export
kde_write_geotiff <- function(surface, path, nodata = -9999) {
  .hp_check_args()
  if (!inherits(surface, "kde_surface")) .hp_stop("surface must be a kde_surface object")
  .hp_call(surface$python$to_geotiff(path.expand(as.character(path)), nodata = .as_num(nodata, "nodata", FALSE)))
  invisible(path)
}

.py_window <- function(window) {
  if (is.null(window)) return(NULL)
  if (inherits(window, "kde_window")) return(window$python)
  if (inherits(window, "python.builtin.object")) return(window)
  if (is.character(window)) {
    if (grepl("\\.tiff?$", window, ignore.case = TRUE)) return(kde_window("geotiff", path = window)$python)
    return(kde_window("asc", path = window)$python)
  }
  .hp_stop("window must be NULL, a kde_window() object or the path of an .asc or GeoTIFF file")
}

#' @export
print.kde_window <- function(x, ...) {
  cat(sprintf("KDE window: %d x %d cells of %g, lower-left (%g, %g), %d inside, area %g\n",
              x$shape[[1]], x$shape[[2]], x$cell_size, x$x0, x$y0, x$n_inside, x$area))
  invisible(x)
}

#' Rule-of-thumb bandwidth (2 / (3 n))^(1/4) x standard distance
#'
#' The starting bandwidth of \code{kde_fit(method = "rule-of-thumb")}: \eqn{(2 / (3 n))^{1/4}}
#' times the standard distance of the points (the root mean squared distance to their centroid).
#'
#' @param points Numeric matrix (n x 2).
#' @return The bandwidth (a number, units of the coordinates).
#' @examplesIf hphawkes_available()
#' set.seed(1)
#' pts <- cbind(rnorm(100), rnorm(100))
#' kde_bandwidth(pts)
#' (2 / (3 * 100))^(1 / 4) * sqrt(mean(rowSums(sweep(pts, 2, colMeans(pts))^2)))
#' @export
kde_bandwidth <- function(points) {
  .hp_check_args()
  .hp_r(.hp_call(.hp_mod("kde")$rule_of_thumb_bandwidth(.np_double(as.matrix(points), "points"))))
}

#' Adaptive kernel density estimation with edge correction
#'
#' Calls \code{hphawkes_py.kde.fit}. Densities are intensities (expected events per unit area).
#'
#' @param points Numeric matrix or data frame (n x 2).
#' @param window \code{NULL} (a rectangle around the points), a \code{kde_window()} or the path
#'   of an ESRI ASCII grid.
#' @param method \code{"adaptive"}, \code{"cv"}, \code{"rule-of-thumb"} or \code{"fixed"}.
#' @param bandwidth Fixed bandwidth (with \code{method = "fixed"}).
#' @param edge_correction Apply the edge correction.
#' @param cutoff Kernel cut-off in bandwidths.
#' @param weights Optional positive point weights (frequencies), one per point.
#' @param backend,threads See \code{hphawkes_backends()}.
#' @param progress Show a progress bar (stderr) over the bandwidth search.
#' @return An object of class \code{hphawkes_kde}: \code{h}, \code{alpha}, \code{bandwidths},
#'   \code{edge_factors}, \code{log_likelihood}, \code{n_iter}, \code{method}, \code{backend},
#'   \code{points}, \code{window} and the Python fit; \code{summary()} gives a one-row data
#'   frame, \code{plot()} and \code{autoplot()} draw the surface.
#' @seealso \code{\link{kde_surface}}, \code{\link{kde_density_at}}.
#' @examplesIf hphawkes_available()
#' rw <- hphawkes_data("redwood")  # 62 redwood saplings and their study-area mask
#' win <- kde_window("asc", path = hphawkes_data_path("kde/zhang2017/redwood.asc.gz"))
#' fit <- kde_fit(rw[[1]], win)
#' fit
#' summary(fit)
#' range(fit$bandwidths)  # adaptive: small where the points are dense
#' kde_fit(rw[[1]], win, method = "fixed", bandwidth = 0.1)$h
#' @export
kde_fit <- function(points, window = NULL, method = "adaptive", bandwidth = NULL,
                    edge_correction = TRUE, cutoff = 3.0, backend = "auto", threads = NULL, weights = NULL,
                    progress = FALSE) {
  .hp_check_args()
  kd <- .hp_mod("kde")
  pts <- as.matrix(points)
  fit <- .hp_call(kd$fit(.np_double(pts, "points"), .py_window(window), method = method,
                         bandwidth = .as_num(bandwidth), edge_correction = edge_correction,
                         cutoff = .as_num(cutoff), progress = .as_flag(progress, "progress"), backend = backend,
                         threads = .as_int(threads), weights = if (is.null(weights)) NULL else .np_double(as.double(weights), "weights")))
  at <- .hp_r(.hp_call(rf$attributes(fit, list("h", "alpha", "bandwidths", "edge_factors",
    "log_likelihood", "n_iter", "method", "backend", "cutoff", "edge_correction", "points"))))
  at$window <- .kde_window_r(fit$window)
  at$python <- fit
  structure(at, class = "hphawkes_kde")
}

#' @export
print.hphawkes_kde <- function(x, ...) {
  cat(reticulate::py_to_r(x$python$summary()), "\n", sep = "")
  invisible(x)
}

#' @export
summary.hphawkes_kde <- function(object, ...) {
  data.frame(method = object$method, n = nrow(object$points), h = object$h,
             alpha = if (is.null(object$alpha)) NA_real_ else object$alpha,
             log_likelihood = object$log_likelihood, n_iter = object$n_iter,
             min_bandwidth = min(object$bandwidths), max_bandwidth = max(object$bandwidths),
             backend = object$backend)
}

#' Density at given points
#'
#' @param fit An \code{hphawkes_kde} fit.
#' @param points Numeric matrix (m x 2).
#' @return Intensities at the points (expected events per unit area), a numeric vector.
#' @examplesIf hphawkes_available()
#' rw <- hphawkes_data("redwood")  # 62 redwood saplings and their study-area mask
#' win <- kde_window("asc", path = hphawkes_data_path("kde/zhang2017/redwood.asc.gz"))
#' fit <- kde_fit(rw[[1]], win)
#' kde_density_at(fit, rbind(c(0.5, 0.5), c(0.2, 0.8)))
#' @export
kde_density_at <- function(fit, points) {
  .hp_check_args()
  .hp_r(.hp_call(fit$python$density_at(.np_double(as.matrix(points), "points"))))
}

#' Density surface on a raster
#'
#' @param fit An \code{hphawkes_kde} fit.
#' @param window \code{NULL} (the fit's window) or another window.
#' @return An object of class \code{kde_surface}: \code{z} (matrix rows x cols, row 1 = top,
#'   NA outside the window), \code{x} (column centres), \code{y} (row centres, decreasing),
#'   \code{x0}, \code{y0} (lower-left corner), \code{cell_size}; \code{as.data.frame()} gives
#'   one row per cell (\code{x}, \code{y}, \code{density}).
#' @examplesIf hphawkes_available()
#' rw <- hphawkes_data("redwood")  # 62 redwood saplings and their study-area mask
#' win <- kde_window("asc", path = hphawkes_data_path("kde/zhang2017/redwood.asc.gz"))
#' fit <- kde_fit(rw[[1]], win)
#' s <- kde_surface(fit)
#' s
#' sum(s$z, na.rm = TRUE) * s$cell_size^2  # about the number of points
#' plot(s)
#' autoplot(s)
#' @export
kde_surface <- function(fit, window = NULL) {
  .hp_check_args()
  if (!inherits(fit, "hphawkes_kde")) .hp_stop("fit must come from kde_fit()")
  r <- .hp_call(fit$python$density_surface(.py_window(window)))
  at <- .hp_r(.hp_call(rf$attributes(r, list("values", "x0", "y0", "cell_size"))))
  z <- at$values
  if (is.null(dim(z))) z <- matrix(z, nrow = 1L)
  nr <- nrow(z); nc <- ncol(z)
  structure(list(z = z, x = at$x0 + (seq_len(nc) - 0.5) * at$cell_size,
                 y = at$y0 + (nr - seq_len(nr) + 0.5) * at$cell_size,
                 x0 = at$x0, y0 = at$y0, cell_size = at$cell_size, points = fit$points,
                 python = r), class = "kde_surface")
}

#' @export
print.kde_surface <- function(x, ...) {
  cat(sprintf("KDE surface: %d x %d cells of %g; intensity range [%.4g, %.4g]; integral %.4g\n",
              nrow(x$z), ncol(x$z), x$cell_size, min(x$z, na.rm = TRUE), max(x$z, na.rm = TRUE),
              sum(x$z, na.rm = TRUE) * x$cell_size^2))
  invisible(x)
}

#' @export
summary.kde_surface <- function(object, ...) summary(as.vector(object$z))

#' @export
as.data.frame.kde_surface <- function(x, ...) {
  data.frame(x = rep(x$x, each = length(x$y)), y = rep(x$y, times = length(x$x)),
             density = as.vector(x$z))
}

#' @method autoplot kde_surface
#' @export
autoplot.kde_surface <- function(object, points = TRUE, ...) {
  .hp_check_args()
  df <- as.data.frame.kde_surface(object)
  df <- df[!is.na(df$density), ]
  p <- ggplot2::ggplot(df, ggplot2::aes(.data$x, .data$y, fill = .data$density)) +
    ggplot2::geom_raster() + ggplot2::scale_fill_viridis_c(name = "intensity") +
    ggplot2::coord_equal() + ggplot2::labs(title = "Kernel density (intensity)")
  if (points && !is.null(object$points)) {
    pts <- data.frame(x = object$points[, 1], y = object$points[, 2])
    p <- p + ggplot2::geom_point(data = pts, ggplot2::aes(.data$x, .data$y), inherit.aes = FALSE,
                                 size = 0.4, colour = "white", alpha = 0.7)
  }
  p
}

#' @export
plot.kde_surface <- function(x, ...) {
  graphics::image(x$x, rev(x$y), t(x$z[nrow(x$z):1, , drop = FALSE]), asp = 1,
                  xlab = "x", ylab = "y", col = grDevices::hcl.colors(64, "viridis"), ...)
  if (!is.null(x$points)) graphics::points(x$points, pch = 20, cex = 0.3)
  invisible(x)
}

#' @method autoplot hphawkes_kde
#' @export
autoplot.hphawkes_kde <- function(object, ...) autoplot.kde_surface(kde_surface(object), ...)

#' @export
plot.hphawkes_kde <- function(x, ...) {
  plot.kde_surface(kde_surface(x), ...)
  invisible(x)
}

.kde_raster_r <- function(r, points = NULL) {
  at <- .hp_r(.hp_call(rf$attributes(r, list("values", "x0", "y0", "cell_size"))))
  z <- at$values
  if (is.null(dim(z))) z <- matrix(z, nrow = 1L)
  nr <- nrow(z); nc <- ncol(z)
  structure(list(z = z, x = at$x0 + (seq_len(nc) - 0.5) * at$cell_size,
                 y = at$y0 + (nr - seq_len(nr) + 0.5) * at$cell_size,
                 x0 = at$x0, y0 = at$y0, cell_size = at$cell_size, points = points, python = r),
            class = "kde_surface")
}

#' Spatial relative risk of cases against controls
#'
#' Calls \code{hphawkes_py.kde.relative_risk}: case and control intensities with bandwidths shared
#' from the pooled pattern, edge-corrected, and the log relative risk \code{log(f/g)} (f, g the
#' case and control densities), as sparr's \code{risk(log = TRUE)}.
#'
#' @param cases,controls Numeric matrices or data frames (n x 2).
#' @param window A \code{kde_window()} or the path of an ESRI ASCII grid (both patterns lie in it).
#' @param method \code{"fixed"} or \code{"adaptive"}.
#' @param bandwidth A bandwidth, or a selector on the pooled pattern: \code{"oversmoothing"},
#'   \code{"lscv"}, \code{"cv"}, \code{"rule-of-thumb"}; with \code{method = "adaptive"} also
#'   \code{"brunsdon"} (h and alpha by Brunsdon's search).
#' @param alpha Adaptive sensitivity (default 0.5, Abramson).
#' @param edge_correction,cutoff,backend,threads As in \code{kde_fit()}.
#' @return An object of class \code{hphawkes_relrisk}: \code{h}, \code{alpha}, \code{method},
#'   \code{selector}, \code{surface} (a \code{kde_surface} of the log relative risk), the patterns
#'   and the Python object.
#' @seealso \code{\link{kde_risk_pvalues}}.
#' @examplesIf hphawkes_available()
#' ch <- hphawkes_data("point_pattern", name = "chorley")  # larynx (cases) and lung cancers
#' win <- kde_window("asc", path = hphawkes_data_path("kde/chorley_mask_0.1km.asc.gz"))
#' cases <- as.matrix(ch[ch$mark == "larynx", c("x", "y")])
#' controls <- as.matrix(ch[ch$mark == "lung", c("x", "y")])
#' rr <- kde_relative_risk(cases, controls, win, bandwidth = 1.5)
#' rr
#' range(rr$surface$z, na.rm = TRUE)  # log relative risk
#' @export
kde_relative_risk <- function(cases, controls, window, method = "fixed", bandwidth = "oversmoothing",
                              alpha = NULL, edge_correction = TRUE, cutoff = 3.0, backend = "auto",
                              threads = NULL) {
  .hp_check_args()
  kd <- .hp_mod("kde")
  if (is.null(window)) .hp_stop("window must be a kde_window() object or the path of an .asc file")
  bw <- if (is.character(bandwidth)) bandwidth else .as_num(bandwidth)
  ca <- as.matrix(cases); co <- as.matrix(controls)
  rr <- .hp_call(kd$relative_risk(.np_double(ca, "cases"), .np_double(co, "controls"), .py_window(window),
                                  method = method, bandwidth = bw, alpha = .as_num(alpha),
                                  edge_correction = edge_correction, cutoff = .as_num(cutoff), progress = FALSE,
                                  backend = backend, threads = .as_int(threads)))
  at <- .hp_r(.hp_call(rf$attributes(rr, list("method", "h", "alpha", "selector", "backend"))))
  at$surface <- .kde_raster_r(.hp_call(rr$surface()), points = rbind(ca, co))
  at$cases <- ca
  at$controls <- co
  at$python <- rr
  structure(at, class = "hphawkes_relrisk")
}

#' p-value surface of a relative risk (upper tail: risk raised)
#'
#' @param rr A \code{kde_relative_risk()} result.
#' @param method \code{"asymptotic"} (Hazelton & Davies; adaptive bandwidths: Davies & Hazelton) or \code{"monte_carlo"}
#'   (random relabelling of the pooled points).
#' @param n_replicates,seed Monte Carlo relabellings and their seed.
#' @return A \code{kde_surface} of p-values (NA outside the window).
#' @examplesIf hphawkes_available()
#' ch <- hphawkes_data("point_pattern", name = "chorley")
#' win <- kde_window("asc", path = hphawkes_data_path("kde/chorley_mask_0.1km.asc.gz"))
#' rr <- kde_relative_risk(as.matrix(ch[ch$mark == "larynx", c("x", "y")]),
#'                         as.matrix(ch[ch$mark == "lung", c("x", "y")]), win, bandwidth = 1.5)
#' p <- kde_risk_pvalues(rr)
#' mean(p$z < 0.05, na.rm = TRUE)  # share of the window with raised risk at the 5% level
#' p_mc <- kde_risk_pvalues(rr, "monte_carlo", n_replicates = 19, seed = 1)
#' autoplot(rr, p_values = p)
#' @export
kde_risk_pvalues <- function(rr, method = "asymptotic", n_replicates = 999L, seed = NULL) {
  .hp_check_args()
  if (!inherits(rr, "hphawkes_relrisk")) .hp_stop("rr must come from kde_relative_risk()")
  p <- if (method == "monte_carlo") {
    .hp_call(rr$python$p_values(method, n_replicates = .as_int(n_replicates), seed = .as_int(seed),
                                progress = FALSE))
  } else {
    .hp_call(rr$python$p_values(method))
  }
  .kde_raster_r(p)
}

#' @export
print.hphawkes_relrisk <- function(x, ...) {
  cat(reticulate::py_to_r(x$python$summary()), "\n", sep = "")
  invisible(x)
}

#' @method autoplot hphawkes_relrisk
#' @export
autoplot.hphawkes_relrisk <- function(object, levels = c(0.05, 0.01), p_values = NULL, ...) {
  .hp_check_args(dots = TRUE)
  if (is.null(p_values)) p_values <- kde_risk_pvalues(object, ...)
  df <- as.data.frame.kde_surface(object$surface)
  names(df)[names(df) == "density"] <- "log_risk"
  pv <- as.data.frame.kde_surface(p_values)
  df$p <- pv$density
  lim <- max(abs(df$log_risk), na.rm = TRUE)
  p <- ggplot2::ggplot(df, ggplot2::aes(.data$x, .data$y)) +
    ggplot2::geom_raster(ggplot2::aes(fill = .data$log_risk)) +
    ggplot2::scale_fill_distiller(palette = "RdBu", limits = c(-lim, lim), name = "log relative risk") +
    ggplot2::coord_equal() + ggplot2::labs(title = "Log relative risk with tolerance contours")
  pc <- df
  pc$p[is.na(pc$p)] <- 1
  if (any(pc$p < max(levels))) {
    p <- p + ggplot2::geom_contour(data = pc, ggplot2::aes(z = .data$p), breaks = sort(levels), colour = "black")
  }
  p + ggplot2::geom_point(data = data.frame(x = object$cases[, 1], y = object$cases[, 2]),
                          ggplot2::aes(.data$x, .data$y), inherit.aes = FALSE, size = 0.6, colour = "red")
}

#' Spatiotemporal kernel density (sparr's spattemp.density)
#'
#' Calls \code{hphawkes_py.kde.spacetime}: separate spatial (\code{h}) and temporal (\code{lam})
#' Gaussian bandwidths, edge correction in space (the window) and time (\code{time_window}).
#'
#' @param points Numeric matrix (n x 2).
#' @param times Numeric vector (n), any time unit.
#' @param window A \code{kde_window()} or the path of an ESRI ASCII grid.
#' @param h,lam Bandwidths (numbers) or \code{"oversmoothing"} (Terrell).
#' @param time_window \code{c(T0, T1)} (default the range of \code{times}).
#' @param edge_correction,cutoff,backend,threads As in \code{kde_fit()}.
#' @return An object of class \code{hphawkes_spacetime}: \code{h}, \code{lam}, \code{time_window}
#'   and the Python object; see \code{kde_spacetime_slices()}.
#' @examplesIf hphawkes_available()
#' set.seed(1)
#' pts <- matrix(runif(200), ncol = 2)
#' times <- seq(0, 10, length.out = 100)
#' win <- kde_window("rectangle", xmin = 0, xmax = 1, ymin = 0, ymax = 1, cell_size = 0.05)
#' st <- kde_spacetime(pts, times, win, h = 0.1, lam = 1)
#' st
#' kde_spacetime(pts, times, win)  # Terrell's oversmoothing bandwidths
#' @export
kde_spacetime <- function(points, times, window, h = "oversmoothing", lam = "oversmoothing",
                          time_window = NULL, edge_correction = TRUE, cutoff = 3.0, backend = "auto",
                          threads = NULL) {
  .hp_check_args()
  kd <- .hp_mod("kde")
  if (is.null(window)) .hp_stop("window must be a kde_window() object or the path of an .asc file")
  if (!is.numeric(times)) .hp_stop("times must be numeric (convert dates to a time unit first)")
  num_or_name <- function(v) if (is.character(v)) v else .as_num(v)
  st <- .hp_call(kd$spacetime(.np_double(as.matrix(points), "points"), .np_double(as.double(times), "times"),
                              .py_window(window), h = num_or_name(h), lam = num_or_name(lam),
                              time_window = if (is.null(time_window)) NULL else as.list(as.double(time_window)),
                              edge_correction = edge_correction, cutoff = .as_num(cutoff), backend = backend,
                              threads = .as_int(threads)))
  at <- .hp_r(.hp_call(rf$attributes(st, list("h", "lam", "time_window", "backend"))))
  at$time_window <- unlist(at$time_window)
  at$python <- st
  structure(at, class = "hphawkes_spacetime")
}

#' Slices of a spatiotemporal density
#'
#' @param st A \code{kde_spacetime()} result.
#' @param times Times at which to slice (inside the time window).
#' @param conditional \code{TRUE}: the conditional density f(x | t) (integrates to 1 over the
#'   window); \code{FALSE}: the intensity (events per unit area per unit time).
#' @return A list of \code{kde_surface} objects, one per time.
#' @examplesIf hphawkes_available()
#' set.seed(1)
#' pts <- matrix(runif(200), ncol = 2)
#' win <- kde_window("rectangle", xmin = 0, xmax = 1, ymin = 0, ymax = 1, cell_size = 0.05)
#' st <- kde_spacetime(pts, seq(0, 10, length.out = 100), win, h = 0.1, lam = 1)
#' sl <- kde_spacetime_slices(st, c(2, 8))
#' sum(sl[[2]]$z, na.rm = TRUE) * 0.05^2  # a conditional density: about 1
#' plot(sl[[1]])
#' @export
kde_spacetime_slices <- function(st, times, conditional = TRUE) {
  .hp_check_args()
  if (!inherits(st, "hphawkes_spacetime")) .hp_stop("st must come from kde_spacetime()")
  sl <- .hp_call(st$python$slices(.np_double(as.double(times), "times"), conditional = .as_flag(conditional, "conditional")))
  lapply(seq_along(times), function(i) .kde_raster_r(sl[i - 1L]))
}

#' @export
print.hphawkes_spacetime <- function(x, ...) {
  cat(sprintf("Spatiotemporal KDE: h = %g, lam = %g, time window [%g, %g] (backend %s)\n",
              x$h, x$lam, x$time_window[1], x$time_window[2], x$backend))
  invisible(x)
}
