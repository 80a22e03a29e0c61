# Hierarchical Dirichlet-process Gaussian mixture across samples (dpmix's HDPNormalMixture):
# wrapper over hphawkes_py.mixture.HDPGaussianMixture. Samples are numbered from 1 in R (as the
# list given), components and clusters too.

#' Hierarchical Dirichlet-process Gaussian mixture across samples
#'
#' Every sample (a flow cytometry file, say) is a mixture of the same components with its own
#' weights: shared atoms \code{N(mu_k, Sigma_k)}, per-sample weights \code{pi_j ~
#' DP(alpha0, beta)}, top-level weights \code{beta ~ GEM(alpha)}, fitted by dpmix's blocked
#' Gibbs sampler or by Bayesian EM (\code{hphawkes_py.mixture.HDPGaussianMixture}). The data
#' of all samples are standardised together; results are in original units.
#'
#' @param samples A list of numeric matrices or data frames, one per sample, with the same
#'   columns (rows = events). If the list is named, the names label the samples. Column names,
#'   if any, must be the same in every sample and are checked again by \code{predict()}.
#'   Or flow cytometry files: a folder (its \code{.fcs} files, by \code{\link{read_fcs_folder}})
#'   or a character vector / list of \code{.fcs} paths (each by \code{\link{read_fcs}}), the samples
#'   named after the files.
#' @param fcs With FCS files: a named list of \code{\link{read_fcs}} settings (\code{channels},
#'   \code{transform}, \code{cofactor}, \code{compensate}, ...; \code{pattern} for a folder).
#' @param n_components Truncation level K (whole number >= 2).
#' @param method \code{"gibbs"} or \code{"bem"}.
#' @param n_iter,burn_in,thin Whole numbers: Gibbs sweeps kept (every \code{thin}-th) after
#'   \code{burn_in}; BEM: maximum iterations.
#' @param alpha_prior,alpha0_prior \code{c(shape, rate)}: gamma priors of the top-level and
#'   sample-level concentrations.
#' @param m0,gamma0,nu0,Phi0 The atoms' Normal-inverse-Wishart prior (standardised units), as
#'   in \code{\link{tdp_mixture}}.
#' @param tune_interval Burn-in sweeps between tunings of the Metropolis-Hastings proposals.
#' @param warm_start Gibbs: start from a BEM fit of at most \code{warm_start_iter} iterations.
#' @param warm_start_iter Whole number.
#' @param relabel Gibbs: relabel draws to undo label switching.
#' @param init \code{"kmeans++"}, \code{"random"} or a K x p matrix of initial means.
#' @param chains Gibbs chains (whole number); their draws are pooled.
#' @param merge_tol,min_cluster_weight Modal merging of the components into clusters.
#' @param max_predictive_draws Draws averaged by the posterior predictive density.
#' @param tol BEM convergence tolerance.
#' @param seed Whole number or NULL.
#' @param progress Show a progress bar.
#' @param keep_draws Also convert the Gibbs draws to R (\code{draws}: group weights S x J x K,
#'   beta, means, covariances, alpha, alpha0).
#' @param backend,threads See \code{hphawkes_backends()}.
#' @return An object of class \code{hdp_mixture}: \code{group_weights} (J x K matrix, a row per
#'   sample), \code{beta}, \code{weights} (pooled), \code{means} (K x p), \code{covariances} (K
#'   x p x p), \code{alpha}, \code{alpha0}, the clusters of modal merging
#'   (\code{component_clusters}, 1-based, \code{NA} for components of weight 0;
#'   \code{n_clusters}, \code{cluster_means}, \code{group_cluster_weights} J x n_clusters),
#'   \code{labels} (list per sample, 1-based components), \code{loglik_trace},
#'   \code{n_per_sample}, \code{acceptance_rates}, \code{backend}, and the fitted Python model.
#'   \code{\link{hdp_proportions}} gives each sample's proportions with credible intervals,
#'   \code{predict()} classifies new data of a sample, \code{autoplot()} plots the proportions.
#' @seealso \code{\link{predict.hdp_mixture}}, \code{\link{hdp_proportions}},
#'   \code{\link{tdp_mixture}} (one sample).
#' @examplesIf hphawkes_available()
#' set.seed(0)  # three samples sharing two populations, the third with one of its own
#' centres <- rbind(c(0, 0), c(4, 0), c(0, 4))
#' sample_of <- function(counts) {
#'   z <- rep(1:3, counts)
#'   centres[z, ] + matrix(rnorm(2 * length(z), sd = 0.5), ncol = 2,
#'                         dimnames = list(NULL, c("CD4", "CD8")))
#' }
#' samples <- list(a = sample_of(c(150, 150, 0)), b = sample_of(c(210, 90, 0)),
#'                 c = sample_of(c(120, 90, 90)))
#' m <- hdp_mixture(samples, n_components = 6, n_iter = 100, burn_in = 100, seed = 1)
#' m
#' hdp_proportions(m)
#' predict(m, rbind(c(0.1, 3.9)), group = "c")
#' autoplot(m)
#' # FCS files: a folder of them, read with the same channels and transform
#' if (reticulate::py_module_available("flowio")) {
#'   d <- file.path(tempdir(), "hdp_fcs"); dir.create(d, showWarnings = FALSE)
#'   for (nm in names(samples)) {  # each sample as an FCS file (events written by FlowIO)
#'     csv <- tempfile(fileext = ".csv")
#'     utils::write.table(samples[[nm]], csv, sep = ",", row.names = FALSE, col.names = FALSE)
#'     reticulate::py_run_string(sprintf(paste0("import flowio, numpy as np\n",
#'       "ev = np.loadtxt(r'%s', delimiter=',', dtype=np.float32)\n",
#'       "with open(r'%s', 'wb') as fh:\n",
#'       "    flowio.create_fcs(fh, ev.ravel(), ['CD4', 'CD8'])\n"), csv, file.path(d, paste0(nm, ".fcs"))))
#'   }
#'   hdp_mixture(d, fcs = list(channels = c("CD4", "CD8")), n_components = 6, n_iter = 50,
#'               burn_in = 50, seed = 1)
#' }
#' @export
hdp_mixture <- function(samples, n_components = 256L, method = "gibbs", n_iter = 1000L, burn_in = 100L,
                        thin = 1L, alpha_prior = c(5, 0.1), alpha0_prior = c(0.1, 0.1), m0 = NULL,
                        gamma0 = 10.0, nu0 = NULL, Phi0 = NULL, tune_interval = 100L, warm_start = FALSE,
                        warm_start_iter = 100L, relabel = TRUE, init = "kmeans++", chains = 1L,
                        merge_tol = 0.05, min_cluster_weight = 0.01, max_predictive_draws = 200L,
                        tol = 1e-7, seed = NULL, progress = FALSE, keep_draws = FALSE,
                        backend = "auto", threads = NULL, fcs = list()) {
  .hp_check_args()
  samples <- .hdp_fcs_samples(samples, fcs)
  if (!is.list(samples) || is.data.frame(samples))
    .hp_stop("samples must be a list of matrices or data frames, one per sample, got ", .hp_kind(samples),
             if (is.data.frame(samples) || is.matrix(samples)) " (wrap a single sample as list(X))")
  if (!length(samples)) .hp_stop("samples must hold at least one sample, got an empty list")
  keep_draws <- .as_flag(keep_draws, "keep_draws")
  nm <- names(samples)
  if (!is.null(nm) && (anyNA(nm) || !all(nzchar(nm)) || anyDuplicated(nm)))
    .hp_stop("the names of samples must be distinct and non-empty (or absent), got ",
             paste0("'", nm, "'", collapse = ", "))
  mats <- lapply(seq_along(samples), function(j) {
    X <- samples[[j]]
    what <- paste0("samples[[", j, "]]")
    if (!(is.matrix(X) || is.data.frame(X)))
      .hp_stop(what, " must be a numeric matrix or data frame, got ", .hp_kind(X))
    X
  })
  py_samples <- lapply(seq_along(mats), function(j) .mixture_data(mats[[j]], paste0("samples[[", j, "]]")))
  pair <- function(x, name) {
    if (!is.numeric(x) || length(x) != 2L || anyNA(x))
      .hp_stop(name, " must be c(shape, rate), two positive numbers, got ", paste(format(x), collapse = ", "))
    as.list(as.double(x))
  }
  mx <- .hp_mod("mixture")
  model <- .hp_call(mx$HDPGaussianMixture(
    n_components = .as_int(n_components, "n_components", FALSE), method = method,
    n_iter = .as_int(n_iter, "n_iter", FALSE), burn_in = .as_int(burn_in, "burn_in", FALSE),
    thin = .as_int(thin, "thin", FALSE), alpha_prior = pair(alpha_prior, "alpha_prior"),
    alpha0_prior = pair(alpha0_prior, "alpha0_prior"),
    m0 = if (is.null(m0)) NULL else .np_double(as.double(m0), "m0"), gamma0 = .as_num(gamma0, "gamma0", FALSE),
    nu0 = .as_num(nu0, "nu0"), Phi0 = if (is.null(Phi0)) NULL else .np_double(as.matrix(Phi0), "Phi0"),
    tune_interval = .as_int(tune_interval, "tune_interval", FALSE),
    warm_start = .as_flag(warm_start, "warm_start"), warm_start_iter = .as_int(warm_start_iter, "warm_start_iter", FALSE),
    relabel = .as_flag(relabel, "relabel"),
    init = if (is.character(init)) init else .np_double(as.matrix(init), "init"),
    chains = .as_int(chains, "chains", FALSE), merge_tol = .as_num(merge_tol, "merge_tol", FALSE),
    min_cluster_weight = .as_num(min_cluster_weight, "min_cluster_weight", FALSE),
    max_predictive_draws = .as_int(max_predictive_draws, "max_predictive_draws", FALSE),
    tol = .as_num(tol, "tol", FALSE), seed = .as_int(seed), progress = .as_flag(progress, "progress"),
    backend = backend, threads = .as_int(threads)))
  .hp_py_warnings(.hp_call(model$fit(py_samples)))
  at <- .hp_r(.hp_call(rf$attributes(model, list("group_weights_", "beta_", "weights_", "means_",
    "covariances_", "alpha_", "alpha0_", "component_clusters_", "n_clusters_", "cluster_means_",
    "group_cluster_weights_", "labels_", "loglik_trace_", "n_per_sample_", "acceptance_rates_", "backend_",
    "n_iter_", "converged_"))))
  names(at) <- sub("_$", "", names(at))
  p <- ncol(mats[[1L]])
  cols <- colnames(mats[[1L]])
  snames <- if (is.null(nm)) paste0("sample", seq_along(mats)) else nm
  k <- length(at$beta)
  as_mat <- function(v, nr, nc) if (is.null(dim(v))) matrix(v, nr, nc) else v
  at$group_weights <- as_mat(at$group_weights, length(mats), k)
  at$means <- as_mat(at$means, k, p)
  at$cluster_means <- as_mat(at$cluster_means, at$n_clusters, p)
  at$group_cluster_weights <- as_mat(at$group_cluster_weights, length(mats), at$n_clusters)
  dimnames(at$group_weights) <- list(snames, NULL)
  dimnames(at$group_cluster_weights) <- list(snames, NULL)
  colnames(at$means) <- cols
  colnames(at$cluster_means) <- cols
  cc <- at$component_clusters
  at$component_clusters <- ifelse(cc < 0L, NA_integer_, cc + 1L)
  at$labels <- stats::setNames(lapply(at$labels, function(l) as.integer(l) + 1L), snames)
  names(at$n_per_sample) <- snames
  if (keep_draws) {
    at$draws <- .hp_r(model$draws_)
  }
  at$method <- method
  at$sample_names <- snames
  at$X <- mats
  at$python <- model
  structure(at, class = "hdp_mixture")
}

# hdp_mixture's samples given as FCS files (a folder, or paths) read into a named list of data frames.
.hdp_fcs_samples <- function(samples, fcs) {
  paths <- if (is.character(samples)) samples else if (is.list(samples) && !is.data.frame(samples) &&
    length(samples) && all(vapply(samples, function(s) is.character(s) && length(s) == 1L, logical(1))))
    unlist(samples, use.names = FALSE) else return(samples)
  if (!is.list(fcs) || (length(fcs) && (is.null(names(fcs)) || any(!nzchar(names(fcs))))))
    .hp_stop("fcs must be a named list of read_fcs() settings, got ", .hp_kind(fcs))
  if (anyNA(paths) || !length(paths)) .hp_stop("samples: the FCS paths must not be missing (NA) or empty")
  folder <- length(paths) == 1L && dir.exists(paths)
  allowed <- setdiff(names(formals(if (folder) read_fcs_folder else read_fcs)), c("path", "folder"))
  bad <- setdiff(names(fcs), allowed)
  if (length(bad)) .hp_stop("fcs: unknown read_fcs setting '", bad[1], "'; the settings are: ",
                            paste(allowed, collapse = ", "))
  if (folder) {
    out <- do.call(read_fcs_folder, c(list(paths), fcs))
    if (!length(out)) .hp_stop("samples: the folder '", paths, "' has no file matching ",
                               if (is.null(fcs$pattern)) "*.fcs" else fcs$pattern)
    return(out)
  }
  missing <- paths[!file.exists(paths) | dir.exists(paths)]
  if (length(missing)) .hp_stop("samples: '", missing[1], "' is neither an FCS file nor a folder")
  nms <- if (!is.null(names(samples)) && all(nzchar(names(samples)))) names(samples) else
    sub("\\.[^.]*$", "", basename(paths))
  stats::setNames(lapply(paths, function(f) do.call(read_fcs, c(list(f), fcs))), nms)
}

#' @export
print.hdp_mixture <- function(x, ...) {
  cat(sprintf("HDP Gaussian mixture (%s, backend %s): %d samples (%s events), %d components, %d clusters; alpha %.3g, alpha0 %.3g\n",
              x$method, x$backend, length(x$sample_names), paste(x$n_per_sample, collapse = "/"),
              length(x$beta), x$n_clusters, x$alpha, x$alpha0))
  cat("Cluster proportions per sample:\n")
  w <- x$group_cluster_weights
  colnames(w) <- paste0("cluster", seq_len(ncol(w)))
  print(round(w, 3))
  invisible(x)
}

# A sample of the fit, by its 1-based position or its name, as Python's 0-based index.
.hdp_group <- function(object, group) {
  if (length(group) != 1L || is.na(group))
    .hp_stop("group must be one sample: its position 1..", length(object$sample_names), " or its name")
  if (is.character(group)) {
    j <- match(group, object$sample_names)
    if (is.na(j)) .hp_stop("group '", group, "' is not a sample of the fit; the samples are ",
                           paste(object$sample_names, collapse = ", "))
    return(j - 1L)
  }
  if (!is.numeric(group) || group != round(group) || group < 1 || group > length(object$sample_names))
    .hp_stop("group must be a sample of the fit: a position 1..", length(object$sample_names),
             " (R counts from 1) or a name, got ", format(group))
  as.integer(group) - 1L
}

#' Predictions from a hierarchical DP mixture for one sample
#'
#' Sample \code{group}'s weights with the shared components: the posterior predictive over
#' the stored draws after Gibbs (default), or the point estimates (\code{estimate = "plugin"}).
#'
#' @param object An \code{hdp_mixture}.
#' @param newdata Numeric matrix or data frame (m x p), original units; default the training
#'   data of \code{group}. Named columns must carry the names of the fit, in the same order.
#' @param group The sample whose weights are used: its position in the list given to
#'   \code{hdp_mixture()} (1-based) or its name.
#' @param type \code{"class"} (1-based component), \code{"prob"} (m x K probabilities),
#'   \code{"density"} (log density, original units) or \code{"cluster"} (1-based cluster).
#' @param estimate \code{NULL} (Gibbs: \code{"predictive"}; BEM: \code{"plugin"}),
#'   \code{"predictive"} or \code{"plugin"}.
#' @param ... Unused; a named argument here is an error.
#' @return \code{"class"}, \code{"cluster"}: integer vector (m); \code{"prob"}: matrix (m x K);
#'   \code{"density"}: numeric vector (m).
#' @examplesIf hphawkes_available()
#' set.seed(0)
#' s <- list(matrix(rnorm(200), ncol = 2), matrix(rnorm(200, 3), ncol = 2))
#' m <- hdp_mixture(s, n_components = 4, method = "bem", n_iter = 50, seed = 1)
#' predict(m, rbind(c(0, 0), c(3, 3)), group = 2)
#' predict(m, rbind(c(0, 0), c(3, 3)), group = 1, type = "density")
#' @export
predict.hdp_mixture <- function(object, newdata = NULL, group, type = c("class", "prob", "density", "cluster"),
                                estimate = NULL, ...) {
  .hp_check_args()
  if (missing(group)) .hp_stop("group is missing: name the sample whose weights to use (1..",
                               length(object$sample_names), " or a name)")
  type <- match.arg(type)
  g <- .hdp_group(object, group)
  if (is.null(newdata)) newdata <- object$X[[g + 1L]]
  if (is.null(colnames(object$X[[1L]])) && !is.null(colnames(newdata))) {
    warning("newdata has column names (", paste(colnames(newdata), collapse = ", "), ") but the model was ",
            "fitted on unnamed columns: they are used by position", call. = FALSE)
    newdata <- unname(as.matrix(newdata))
  }
  X <- .mixture_data(newdata, "newdata")
  py <- object$python
  switch(type,
    class = .hp_r(.hp_call(py$predict(X, g, estimate = estimate))) + 1L,
    prob = .hp_r(.hp_call(py$predict_proba(X, g, estimate = estimate))),
    density = .hp_r(.hp_call(py$score_samples(X, g, estimate = estimate))),
    cluster = .hp_r(.hp_call(py$predict_cluster(X, g, estimate = estimate))) + 1L)
}

#' Per-sample proportions of an HDP mixture, with credible intervals
#'
#' Each sample's proportion of each cluster (modal merging of the components) or component,
#' the posterior mean with an equal-tailed credible interval over the Gibbs draws (BEM: no
#' interval); \code{HDPGaussianMixture.to_frame}.
#'
#' @param object An \code{hdp_mixture}.
#' @param level Posterior probability of the intervals, in (0, 1).
#' @param by \code{"cluster"} or \code{"component"}.
#' @return A data frame, one row per sample and cluster (or component): \code{sample} (name),
#'   \code{cluster} or \code{component} (1-based), \code{proportion}, after Gibbs \code{lower}
#'   and \code{upper}, and the cluster's or component's mean per column (\code{mean_<name>}).
#' @examplesIf hphawkes_available()
#' set.seed(0)
#' s <- list(ctrl = matrix(rnorm(200), ncol = 2),
#'           case = rbind(matrix(rnorm(100), ncol = 2), matrix(rnorm(100, 4), ncol = 2)))
#' m <- hdp_mixture(s, n_components = 4, n_iter = 60, burn_in = 60, seed = 1)
#' hdp_proportions(m, level = 0.9)
#' @export
hdp_proportions <- function(object, level = 0.95, by = "cluster") {
  .hp_check_args()
  if (!inherits(object, "hdp_mixture")) .hp_stop("object must be an hdp_mixture, got ", .hp_kind(object))
  if (!is.character(by) || length(by) != 1L || !by %in% c("cluster", "component"))
    .hp_stop("by must be \"cluster\" or \"component\", got ", paste(format(by), collapse = ", "))
  level <- .as_num(level, "level", FALSE)
  # checked here too: a BEM fit has no intervals, and Python does not look at level then
  if (is.na(level) || level <= 0 || level >= 1) .hp_stop("level must be a probability in (0, 1), got ", level)
  df <- .hp_r(.hp_call(object$python$to_frame(level = level, by = by)))
  df$sample <- object$sample_names[df$sample + 1L]
  df[[by]] <- df[[by]] + 1L
  df
}

#' @export
summary.hdp_mixture <- function(object, level = 0.95, by = "cluster", ...) {
  .hp_check_args()
  hdp_proportions(object, level = level, by = by)
}

#' @method autoplot hdp_mixture
#' @export
autoplot.hdp_mixture <- function(object, level = 0.95, by = "cluster", ...) {
  .hp_check_args()
  df <- hdp_proportions(object, level = level, by = by)
  df$what <- factor(df[[by]])
  p <- ggplot2::ggplot(df, ggplot2::aes(.data$what, .data$proportion, fill = .data$sample)) +
    ggplot2::geom_col(position = ggplot2::position_dodge(width = 0.8), width = 0.75)
  if ("lower" %in% names(df))
    p <- p + ggplot2::geom_errorbar(ggplot2::aes(ymin = .data$lower, ymax = .data$upper),
                                    position = ggplot2::position_dodge(width = 0.8), width = 0.3)
  p + ggplot2::labs(x = by, y = "proportion", fill = "sample",
                    title = sprintf("HDP mixture: per-sample %s proportions%s", by,
                                    if ("lower" %in% names(df)) sprintf(" (%g%% intervals)", 100 * level) else ""))
}

#' @export
plot.hdp_mixture <- function(x, ...) { print(autoplot.hdp_mixture(x, ...)); invisible(x) }
