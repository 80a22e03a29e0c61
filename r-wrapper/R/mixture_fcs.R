# Flow cytometry files (FCS) for the mixtures, the posterior partition of a mixture fit
# (similarity matrix, point estimate under Binder / VI loss) and its cytometry summaries.

.hp_string <- function(x, name, null_ok = FALSE) {
  if (is.null(x) && null_ok) return(NULL)
  if (!is.character(x) || length(x) != 1L || is.na(x) || !nzchar(x))
    .hp_stop(name, " must be a single non-empty string, got ",
             if (is.character(x) && length(x) == 1L) paste0("'", x, "'") else .hp_kind(x))
  x
}

# The Python keyword arguments of read_fcs, checked in R.
.fcs_kwargs <- function(channels, transform, cofactor, compensate, logicle, transform_channels, column_names) {
  if (!is.null(channels)) {
    if (!is.character(channels) || anyNA(channels) || !length(channels) || any(!nzchar(channels)))
      .hp_stop("channels must be NULL or channel names ($PnN, or $PnS markers), got ",
               if (is.character(channels)) paste0("'", channels, "'", collapse = ", ") else .hp_kind(channels))
    channels <- as.list(channels)
  }
  if (!is.null(transform) && (!is.character(transform) || length(transform) != 1L || is.na(transform) ||
                              !transform %in% c("arcsinh", "logicle")))
    .hp_stop("transform must be NULL, \"arcsinh\" or \"logicle\", got ", paste(format(transform), collapse = ", "))
  if (!is.null(logicle)) {
    if (!is.list(logicle) || is.null(names(logicle)) || any(!nzchar(names(logicle))))
      .hp_stop("logicle must be NULL or a named list of parameters (T, W, M, A), got ", .hp_kind(logicle))
    logicle <- lapply(logicle, function(v) .as_num(v, "logicle", null_ok = FALSE))
  }
  if (!is.null(transform_channels)) {
    if (!is.character(transform_channels) || anyNA(transform_channels))
      .hp_stop("transform_channels must be NULL or channel names, got ", .hp_kind(transform_channels))
    transform_channels <- as.list(transform_channels)
  }
  if (!is.character(column_names) || length(column_names) != 1L || !column_names %in% c("pnn", "pns"))
    .hp_stop("column_names must be \"pnn\" or \"pns\", got ", paste(format(column_names), collapse = ", "))
  list(channels = channels, transform = transform, cofactor = .as_num(cofactor, "cofactor", FALSE),
       compensate = .as_flag(compensate, "compensate"), logicle = logicle,
       transform_channels = transform_channels, column_names = column_names)
}

# A pandas frame of read_fcs as an R data frame, its metadata in attribute "fcs".
.fcs_frame <- function(df) {
  out <- .hp_r(df)
  meta <- .hp_r(df$attrs)
  if (!is.null(meta$path)) meta$path <- reticulate::py_to_r(reticulate::import_builtins(convert = FALSE)$str(
    reticulate::py_get_item(df$attrs, "path")))
  attr(out, "fcs") <- meta
  out
}

#' Read a flow cytometry (FCS) file
#'
#' Calls \code{hphawkes_py.mixture.read_fcs}: the events of an FCS 2.0/3.0/3.1 file (through the
#' Python package FlowIO), optionally compensated by the file's spillover matrix and transformed
#' (arcsinh with a cofactor, or logicle), ready for \code{\link{tdp_mixture}} and
#' \code{\link{hdp_mixture}}.
#'
#' @param path The \code{.fcs} file.
#' @param channels \code{NULL} (all) or the names of the channels kept (\code{$PnN}, or the
#'   \code{$PnS} marker names), in the order wanted.
#' @param transform \code{NULL}, \code{"arcsinh"} (\eqn{\mathrm{asinh}(x / cofactor)}) or
#'   \code{"logicle"}.
#' @param cofactor The arcsinh cofactor (5 for mass cytometry, about 150 for fluorescence).
#' @param compensate Apply the file's spillover matrix (when it has one) before transforming.
#' @param logicle \code{NULL} or a named list of logicle parameters (\code{T}, \code{W}, \code{M}, \code{A}).
#' @param transform_channels \code{NULL} (the fluorescence channels: not scatter or time) or the
#'   channels transformed.
#' @param column_names \code{"pnn"} (channel names) or \code{"pns"} (marker names where given).
#' @return A data frame, one row per event (file order), one numeric column per channel; attribute
#'   \code{"fcs"} holds the file's metadata (\code{path}, \code{version}, \code{keywords},
#'   \code{channels}, \code{markers}, \code{spillover}, \code{compensated}, \code{transform}, ...).
#' @seealso \code{\link{read_fcs_folder}}, \code{\link{hdp_mixture}}.
#' @examplesIf hphawkes_available() && reticulate::py_module_available("flowio")
#' f <- file.path(tempdir(), "tiny.fcs")
#' reticulate::py_run_string(sprintf(paste0(
#'   "import flowio, numpy as np\n",
#'   "ev = np.random.default_rng(1).gamma(2.0, 50.0, size=(200, 3)).astype(np.float32)\n",
#'   "with open(r'%s', 'wb') as fh:\n",
#'   "    flowio.create_fcs(fh, ev.ravel(), ['FSC-A', 'CD4', 'CD8'])\n"), f))
#' x <- read_fcs(f, transform = "arcsinh", cofactor = 150)
#' head(x)
#' attr(x, "fcs")$channels
#' @export
read_fcs <- function(path, channels = NULL, transform = NULL, cofactor = 5, compensate = TRUE,
                     logicle = NULL, transform_channels = NULL, column_names = "pnn") {
  .hp_check_args()
  path <- .hp_string(path, "path")
  if (!file.exists(path)) .hp_stop("path: the file '", path, "' does not exist")
  kw <- .fcs_kwargs(channels, transform, cofactor, compensate, logicle, transform_channels, column_names)
  df <- .hp_call(do.call(.hp_mod("mixture")$read_fcs, c(list(normalizePath(path, winslash = "/")), kw)))
  .fcs_frame(df)
}

#' Read every FCS file of a folder
#'
#' Calls \code{hphawkes_py.mixture.read_fcs_folder}: the files matching \code{pattern}, sorted
#' by name, each read by \code{\link{read_fcs}} with the same settings; the result is a named list,
#' the \code{samples} of \code{\link{hdp_mixture}}.
#'
#' @param folder The folder.
#' @param pattern Glob pattern of the file names.
#' @inheritParams read_fcs
#' @return A named list of data frames (names: the file names without extension, sorted).
#' @examplesIf hphawkes_available() && reticulate::py_module_available("flowio")
#' d <- file.path(tempdir(), "fcs_folder"); dir.create(d, showWarnings = FALSE)
#' reticulate::py_run_string(sprintf(paste0(
#'   "import flowio, numpy as np\n",
#'   "for i, name in enumerate(['donor_b', 'donor_a']):\n",
#'   "    ev = np.random.default_rng(i).normal(100 + 50 * i, 10, size=(100, 2)).astype(np.float32)\n",
#'   "    with open(r'%s/' + name + '.fcs', 'wb') as fh:\n",
#'   "        flowio.create_fcs(fh, ev.ravel(), ['CD4', 'CD8'])\n"), d))
#' s <- read_fcs_folder(d)
#' names(s)
#' sapply(s, nrow)
#' @export
read_fcs_folder <- function(folder, pattern = "*.fcs", channels = NULL, transform = NULL, cofactor = 5,
                            compensate = TRUE, logicle = NULL, transform_channels = NULL, column_names = "pnn") {
  .hp_check_args()
  folder <- .hp_string(folder, "folder")
  if (!dir.exists(folder)) .hp_stop("folder: '", folder, "' is not an existing folder")
  pattern <- .hp_string(pattern, "pattern")
  kw <- .fcs_kwargs(channels, transform, cofactor, compensate, logicle, transform_channels, column_names)
  res <- .hp_call(do.call(.hp_mod("mixture")$read_fcs_folder,
                          c(list(normalizePath(folder, winslash = "/"), pattern = pattern), kw)))
  frames <- reticulate::py_get_item(res, 0L)
  nms <- as.character(unlist(reticulate::py_to_r(reticulate::py_get_item(res, 1L))))
  out <- lapply(seq_along(nms) - 1L, function(i) .fcs_frame(reticulate::py_get_item(frames, i)))
  stats::setNames(out, nms)
}

# Label draws (S x n) as int64 for Python: whole numbers, no NA; a vector is one draw.
.hp_label_draws <- function(labels, name = "labels", matrix_ok = TRUE) {
  if (inherits(labels, "python.builtin.object")) return(labels)
  if (is.factor(labels)) labels <- as.integer(labels)
  if (!(is.numeric(labels) || is.logical(labels)) || (!matrix_ok && is.matrix(labels) && nrow(labels) > 1L))
    .hp_stop(name, " must be whole-number labels (", if (matrix_ok) "a draws x events matrix or a vector" else
             "one per event", "), got ", .hp_kind(labels))
  .hp_no_na(as.vector(labels), name)
  if (any(labels != round(labels)) || any(!is.finite(labels)))
    .hp_stop(name, " must be whole numbers, got ", format(labels[labels != round(labels) | !is.finite(labels)][1]))
  if (!length(labels)) .hp_stop(name, " must hold at least one label, got none")
  .np_count(if (matrix_ok && !is.matrix(labels)) matrix(labels, nrow = 1L) else labels, name)
}

#' Posterior draws of the labels of a mixture fit
#'
#' Calls \code{hphawkes_py.mixture.sample_label_draws}: for each stored Gibbs draw of the weights,
#' means and covariances, a draw of every event's component, so that (parameters, labels) is a
#' draw of the joint posterior; the input of \code{\link{posterior_similarity}} and
#' \code{\link{point_partition}}.
#'
#' @param object A \code{tdp_mixture} or \code{hdp_mixture} fitted by Gibbs sampling.
#' @param newdata Events in the units of the fit: a matrix or data frame (\code{tdp_mixture}, or
#'   one sample of an \code{hdp_mixture} with \code{group}), or for \code{hdp_mixture} a list with
#'   one per sample, in the order of the fit.
#' @param n_draws \code{NULL} (all stored draws) or this many, evenly spaced.
#' @param group \code{hdp_mixture} with one matrix: the sample (1-based position or name).
#' @param seed Whole number or \code{NULL}.
#' @return An integer matrix, draws x events, of 1-based components.
#' @examplesIf hphawkes_available()
#' X <- as.matrix(hphawkes_data("faithful")[, c("eruptions", "waiting")])
#' m <- tdp_mixture(X, n_components = 8, n_iter = 40, burn_in = 20, seed = 1)
#' z <- mixture_label_draws(m, X, n_draws = 10, seed = 1)
#' dim(z)
#' @export
mixture_label_draws <- function(object, newdata, n_draws = NULL, group = NULL, seed = NULL) {
  .hp_check_args()
  if (!inherits(object, c("tdp_mixture", "hdp_mixture")))
    .hp_stop("object must be a tdp_mixture or hdp_mixture fit, got ", .hp_kind(object))
  X <- if (is.list(newdata) && !is.data.frame(newdata)) {
    if (!inherits(object, "hdp_mixture")) .hp_stop("newdata must be a matrix or data frame for a tdp_mixture, got a list")
    lapply(seq_along(newdata), function(j) .mixture_data(newdata[[j]], paste0("newdata[[", j, "]]")))
  } else {
    if (!(is.matrix(newdata) || is.data.frame(newdata)))
      .hp_stop("newdata must be a numeric matrix or data frame, got ", .hp_kind(newdata))
    .mixture_data(newdata, "newdata")
  }
  g <- if (is.null(group)) NULL else {
    if (!inherits(object, "hdp_mixture")) .hp_stop("group is for an hdp_mixture fit only")
    .hdp_group(object, group)
  }
  z <- .hp_r(.hp_call(.hp_mod("mixture")$sample_label_draws(object$python, X, n_draws = .as_int(n_draws),
                                                            group = g, seed = .as_int(seed))))
  if (!is.matrix(z)) z <- matrix(z, nrow = 1L)
  storage.mode(z) <- "integer"
  z + 1L
}

#' Posterior similarity matrix of a partition
#'
#' Calls \code{hphawkes_py.mixture.posterior_similarity}: \eqn{p_{ij}}, the fraction of the label
#' draws in which events i and j are in the same cluster (exact integer counts; on a CUDA device
#' with \code{backend = "gpu"}).
#'
#' @param labels Label draws: a whole-number matrix, draws x events (e.g.
#'   \code{\link{mixture_label_draws}}), or a vector (one draw). Any coding of the labels.
#' @param index \code{NULL} (all events) or the 1-based events whose similarities are computed.
#' @param backend \code{"auto"}, \code{"cpu"}, \code{"gpu"} or \code{"emulator"}.
#' @param block_rows Rows of the matrix per GPU pass (whole number).
#' @return A symmetric numeric matrix (m x m), 1 on the diagonal.
#' @examplesIf hphawkes_available()
#' z <- rbind(c(1, 1, 2), c(1, 2, 2))
#' posterior_similarity(z)
#' @export
posterior_similarity <- function(labels, index = NULL, backend = "auto", block_rows = 4096L) {
  .hp_check_args()
  lab <- .hp_label_draws(labels)
  n <- if (is.matrix(labels)) ncol(labels) else length(labels)
  idx <- if (is.null(index)) NULL else {
    if (!is.numeric(index) || anyNA(index) || any(index != round(index)) || any(index < 1 | index > n))
      .hp_stop("index must be NULL or 1-based event numbers in 1..", n, ", got ",
               paste(utils::head(format(index), 3), collapse = ", "))
    .np_count(as.integer(index) - 1L, "index")
  }
  .hp_r(.hp_call(.hp_mod("mixture")$posterior_similarity(lab, idx, backend = backend,
                                                         block_rows = .as_int(block_rows, "block_rows", FALSE))))
}

#' Point estimate of a partition from its posterior draws (SALSO)
#'
#' Calls \code{hphawkes_py.mixture.point_partition}: the partition minimising the posterior
#' expected Binder or variation-of-information loss over the label draws (the SALSO search of
#' Dahl, Johnson & Mueller 2022), as the R package salso's \code{salso()}.
#'
#' @param labels Label draws: a whole-number matrix, draws x events.
#' @param loss \code{"VI"} or \code{"binder"}.
#' @param n_runs Random restarts of the search.
#' @param max_clusters \code{NULL} or the largest number of clusters considered.
#' @param n_zealous Zealous updates per run.
#' @param max_sweeps Most sweeps of a run.
#' @param seed Whole number or \code{NULL}.
#' @param threads \code{NULL} or number of CPU threads.
#' @return An object of class \code{hphawkes_partition}: \code{labels} (1-based clusters numbered by
#'   decreasing size), \code{expected_loss}, \code{n_clusters}, \code{loss}.
#' @examplesIf hphawkes_available()
#' z <- rbind(c(1, 1, 2, 2, 3), c(1, 1, 2, 2, 2), c(2, 2, 1, 1, 1))
#' pp <- point_partition(z, seed = 1)
#' pp
#' pp$labels
#' @export
point_partition <- function(labels, loss = "VI", n_runs = 16L, max_clusters = NULL, n_zealous = 10L,
                            max_sweeps = 100L, seed = NULL, threads = NULL) {
  .hp_check_args()
  lab <- .hp_label_draws(labels)
  if (!is.character(loss) || length(loss) != 1L || is.na(loss))
    .hp_stop("loss must be \"VI\" or \"binder\", got ", .hp_kind(loss))
  pp <- .hp_call(.hp_mod("mixture")$point_partition(lab, loss, n_runs = .as_int(n_runs, "n_runs", FALSE),
    max_clusters = .as_int(max_clusters), n_zealous = .as_int(n_zealous, "n_zealous", FALSE),
    max_sweeps = .as_int(max_sweeps, "max_sweeps", FALSE), seed = .as_int(seed), threads = .as_int(threads)))
  structure(list(labels = as.integer(.hp_r(pp$labels)) + 1L, expected_loss = .hp_r(pp$expected_loss),
                 n_clusters = .hp_r(pp$n_clusters), loss = .hp_r(pp$loss)), class = "hphawkes_partition")
}

#' @export
print.hphawkes_partition <- function(x, ...) {
  cat(sprintf("Point partition (SALSO, %s loss): %d events in %d clusters, expected loss %.4g\n",
              x$loss, length(x$labels), x$n_clusters, x$expected_loss))
  print(table(cluster = x$labels))
  invisible(x)
}

#' Per-cluster marker summary of cytometry events
#'
#' Calls \code{hphawkes_py.mixture.cluster_summary}: for each cluster, its number and proportion
#' of events and the median (or mean) of every marker, the table behind a cluster heat map.
#'
#' @param data Numeric data frame or matrix of events (one column per marker).
#' @param labels The cluster of each event (whole numbers or labels).
#' @param statistic \code{"median"} or \code{"mean"}.
#' @return A data frame, one row per cluster (sorted): \code{cluster}, \code{events},
#'   \code{proportion}, then one column per marker.
#' @examplesIf hphawkes_available()
#' d <- data.frame(CD4 = c(1, 3, 10), CD8 = c(5, 7, 0))
#' cluster_summary(d, c(1, 1, 2))
#' @export
cluster_summary <- function(data, labels, statistic = "median") {
  .hp_check_args()
  if (!(is.matrix(data) || is.data.frame(data)))
    .hp_stop("data must be a numeric matrix or data frame, got ", .hp_kind(data))
  if (length(labels) != nrow(data))
    .hp_stop("labels must have one value per row of data (", nrow(data), "), got ", length(labels))
  if (!is.character(statistic) || length(statistic) != 1L || !statistic %in% c("median", "mean"))
    .hp_stop("statistic must be \"median\" or \"mean\", got ", paste(format(statistic), collapse = ", "))
  X <- .mixture_data(if (is.null(colnames(data))) {
    data <- as.matrix(data); colnames(data) <- paste0("V", seq_len(ncol(data))); data
  } else data, "data")
  out <- .hp_r(.hp_call(.hp_mod("mixture")$cluster_summary(X, .hp_group_labels(labels, "labels"),
                                                          statistic = statistic)))
  if (!"cluster" %in% names(out)) out <- cbind(cluster = as.integer(rownames(out)), out, row.names = NULL)
  out
}

# Labels or sample names for Python: whole numbers as int64, text as str; never NA.
.hp_group_labels <- function(x, name) {
  .hp_no_na(x, name)
  if (is.factor(x)) x <- as.character(x)
  if (is.character(x)) return(as.list(x))
  if (!is.numeric(x) || any(x != round(x))) .hp_stop(name, " must be whole numbers or text labels, got ", .hp_kind(x))
  .np_count(x, name)
}

#' Cluster proportions per sample
#'
#' Calls \code{hphawkes_py.mixture.sample_proportions}: the fraction of each sample's events in
#' each cluster (the abundances compared between samples or conditions).
#'
#' @param labels The cluster of each event (whole numbers or labels).
#' @param samples The sample of each event (names or numbers), same length.
#' @return A numeric matrix, samples (rows, sorted) x clusters (columns, sorted); rows sum to 1.
#' @examplesIf hphawkes_available()
#' sample_proportions(c(1, 1, 2, 2, 2), c("a", "a", "a", "b", "b"))
#' @export
sample_proportions <- function(labels, samples) {
  .hp_check_args()
  if (length(labels) != length(samples))
    .hp_stop("samples must have one value per label (", length(labels), "), got ", length(samples))
  out <- .hp_r(.hp_call(.hp_mod("mixture")$sample_proportions(.hp_group_labels(labels, "labels"),
                                                             .hp_group_labels(samples, "samples"))))
  m <- as.matrix(out[, setdiff(names(out), "sample"), drop = FALSE])
  rownames(m) <- if ("sample" %in% names(out)) as.character(out$sample) else rownames(out)
  names(dimnames(m)) <- c("sample", "cluster")
  m
}
