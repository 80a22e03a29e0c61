# Truncated Dirichlet-process Gaussian mixtures (Suchard et al. 2010): wrapper over
# hphawkes_py.mixture.TDPGaussianMixture.

#' Truncated Dirichlet-process Gaussian mixture (blocked Gibbs or Bayesian EM)
#'
#' @param X Numeric matrix or data frame (n x p). Its column names, if any, are kept:
#'   \code{predict()} then refuses new data whose columns have other names or come in
#'   another order.
#' @param n_components Truncation level k (whole number).
#' @param method \code{"gibbs"} or \code{"bem"}.
#' @param n_iter,burn_in,thin Whole numbers (see the Python docs).
#' @param alpha_prior \code{c(e0, f0)}: gamma prior on the DP concentration.
#' @param m0 Prior mean (length p) or NULL.
#' @param gamma0 Prior scale of the means.
#' @param nu0 Prior degrees of freedom or NULL.
#' @param Phi0 Prior scale matrix (p x p) or NULL.
#' @param relabel Relabel draws to undo label switching.
#' @param init \code{"kmeans++"} (default), \code{"random"}, or a k x p matrix of initial means.
#' @param chains Number of Gibbs chains (whole number); R-hat and ESS of label-invariant
#'   quantities are in \code{diagnostics}.
#' @param prune BEM: remove components whose weight falls below this (0 keeps all).
#' @param seed Whole number or NULL.
#' @param progress Show a progress bar.
#' @param keep_draws Also convert the Gibbs draws to R (can be large: S x k x p x p).
#' @param backend,threads See \code{hphawkes_backends()}.
#' @return An object of class \code{tdp_mixture}: \code{weights} (k), \code{means} (k x p),
#'   \code{covariances} (k x p x p array), \code{alpha}, \code{labels} (1-based component of
#'   each row of \code{X}), \code{loglik_trace}, \code{backend}, the clusters found by modal
#'   merging (\code{n_clusters}, \code{cluster_labels} and \code{component_clusters}, 1-based,
#'   \code{cluster_weights}, \code{cluster_means}), \code{n_components_kept}, Gibbs
#'   \code{diagnostics} (R-hat, ESS), optionally \code{draws}, and the fitted Python model;
#'   \code{summary()} gives the components with weight of at least \code{min_weight} (default
#'   0.01), \code{predict()} classifies new data.
#' @seealso \code{\link{predict.tdp_mixture}}.
#' @examplesIf hphawkes_available()
#' f <- hphawkes_data("faithful")  # Old Faithful: eruption length and waiting time
#' X <- as.matrix(f[, c("eruptions", "waiting")])
#' m <- tdp_mixture(X, n_components = 6, method = "bem", n_iter = 40, seed = 1)
#' m
#' summary(m)
#' m$n_clusters
#' autoplot(m)
#' # blocked Gibbs sampling, two chains
#' g <- tdp_mixture(X, n_components = 8, method = "gibbs", n_iter = 60, burn_in = 20,
#'                  chains = 2, seed = 1)
#' g$diagnostics
#' @export
tdp_mixture <- function(X, n_components = 256L, method = "gibbs", n_iter = 1000L, burn_in = 100L,
                        thin = 1L, alpha_prior = c(10, 1), m0 = NULL, gamma0 = 10.0, nu0 = NULL,
                        Phi0 = NULL, relabel = TRUE, init = "kmeans++", chains = 1L, prune = 0,
                        seed = NULL, progress = FALSE,
                        keep_draws = FALSE, backend = "auto", threads = NULL) {
  .hp_check_args()
  mx <- .hp_mod("mixture")
  keep_draws <- .as_flag(keep_draws, "keep_draws")
  Xpy <- .mixture_data(X, "X")
  Xm <- as.matrix(X)
  model <- .hp_call(mx$TDPGaussianMixture(
    n_components = .as_int(n_components, "n_components", FALSE), method = method,
    n_iter = .as_int(n_iter, "n_iter", FALSE), burn_in = .as_int(burn_in, "burn_in", FALSE),
    thin = .as_int(thin, "thin", FALSE), alpha_prior = as.list(as.double(alpha_prior)),
    m0 = if (is.null(m0)) NULL else .np_double(as.double(m0), "m0"), gamma0 = .as_num(gamma0),
    nu0 = .as_num(nu0), Phi0 = if (is.null(Phi0)) NULL else .np_double(as.matrix(Phi0), "Phi0"),
    relabel = .as_flag(relabel, "relabel"), init = if (is.character(init)) init else .np_double(as.matrix(init), "init"),
    chains = .as_int(chains, "chains", FALSE), prune = .as_num(prune),
    seed = .as_int(seed), progress = .as_flag(progress, "progress"), backend = backend,
    threads = .as_int(threads)))
  .hp_call(model$fit(Xpy))
  at <- .hp_r(.hp_call(rf$attributes(model, list("weights_", "means_", "covariances_", "alpha_",
    "labels_", "loglik_trace_", "backend_", "n_iter_", "converged_", "n_clusters_", "cluster_labels_",
    "component_clusters_", "cluster_weights_", "cluster_means_", "n_components_kept_"))))
  names(at) <- sub("_$", "", names(at))
  if (!is.null(at$labels)) at$labels <- at$labels + 1L
  at$cluster_labels <- at$cluster_labels + 1L
  cc <- at$component_clusters
  at$component_clusters <- ifelse(cc < 0L, NA_integer_, cc + 1L)
  if (is.null(dim(at$cluster_means))) at$cluster_means <- matrix(at$cluster_means, ncol = ncol(Xm))
  colnames(at$cluster_means) <- colnames(Xm)
  diag <- model$diagnostics()
  at$diagnostics <- if (is.null(diag)) NULL else reticulate::py_to_r(diag)
  if (is.null(dim(at$means))) at$means <- matrix(at$means, ncol = ncol(Xm))
  colnames(at$means) <- colnames(Xm)
  at$method <- method
  at$n <- nrow(Xm)
  at$X <- Xm
  if (keep_draws) at$draws <- .hp_r(model$draws_)
  at$python <- model
  structure(at, class = "tdp_mixture")
}

# The data as Python takes them: a pandas DataFrame when the columns are named (so that the
# model records them at fit and checks them at predict, refusing reordered columns), else an array.
.mixture_data <- function(x, name) {
  if (inherits(x, "python.builtin.object")) return(x)
  nm <- if (is.data.frame(x) || is.matrix(x)) colnames(x) else NULL
  if (is.null(nm)) return(.np_double(as.matrix(x), name))
  if (anyNA(nm) || !all(nzchar(nm)) || anyDuplicated(nm))
    .hp_stop(name, " must have distinct, non-empty column names (or none), got ",
             paste0("'", nm, "'", collapse = ", "))
  df <- as.data.frame(x, stringsAsFactors = FALSE)
  bad <- !vapply(df, function(col) is.numeric(col) || is.logical(col), logical(1))
  if (any(bad)) .hp_stop(name, " must have numeric columns only; non-numeric: ",
                         paste0(names(df)[bad], " (", vapply(df[bad], .hp_kind, character(1)), ")",
                                collapse = ", "))
  .pd_frame(df, name)
}

#' @export
print.tdp_mixture <- function(x, ...) {
  cat(reticulate::py_to_r(x$python$summary()), "\n", sep = "")
  invisible(x)
}

#' @export
summary.tdp_mixture <- function(object, min_weight = 0.01, ...) {
  .hp_check_args()
  keep <- which(object$weights >= min_weight)
  data.frame(component = keep, weight = object$weights[keep], object$means[keep, , drop = FALSE],
             n_assigned = if (is.null(object$labels)) NA_integer_ else
               vapply(keep, function(k) sum(object$labels == k), integer(1)),
             check.names = FALSE, row.names = NULL)
}

#' Predictions from a truncated DP mixture
#'
#' @param object A \code{tdp_mixture} fit.
#' @param newdata Numeric matrix or data frame (m x p); default the training data. Named
#'   columns must carry the names of the fit, in the same order (an error otherwise); a
#'   matrix without column names is taken by position.
#' @param type \code{"class"} (1-based component), \code{"prob"} (m x k
#'   membership probabilities), \code{"density"} (log density) or \code{"cluster"} (1-based
#'   cluster by modal merging).
#' @param ... Unused; a named argument here is an error (not silently ignored).
#' @return \code{"class"}, \code{"cluster"}: integer vector (m); \code{"prob"}: numeric
#'   matrix (m x k); \code{"density"}: numeric vector (m) of log densities.
#' @examplesIf hphawkes_available()
#' f <- hphawkes_data("faithful")  # Old Faithful: eruption length and waiting time
#' X <- as.matrix(f[, c("eruptions", "waiting")])
#' m <- tdp_mixture(X, n_components = 6, method = "bem", n_iter = 40, seed = 1)
#' new <- rbind(c(2, 55), c(4.5, 80))
#' predict(m, new)
#' round(predict(m, new, type = "prob"), 3)
#' predict(m, new, type = "density")
#' predict(m, new, type = "cluster")
#' @export
predict.tdp_mixture <- function(object, newdata = NULL, type = c("class", "prob", "density", "cluster"), ...) {
  .hp_check_args()
  type <- match.arg(type)
  if (is.null(newdata)) newdata <- object$X
  if (is.null(colnames(object$X)) && !is.null(colnames(newdata))) {
    # the fit's columns had no names to check these against (as scikit-learn, a warning)
    warning("newdata has column names (", paste(colnames(newdata), collapse = ", "), ") but the model was ",
            "fitted on unnamed columns: they are used by position", call. = FALSE)
    newdata <- unname(as.matrix(newdata))
  }
  X <- .mixture_data(newdata, "newdata")
  switch(type,
    class = .hp_r(.hp_call(object$python$predict(X))) + 1L,
    prob = .hp_r(.hp_call(object$python$predict_proba(X))),
    density = .hp_r(.hp_call(object$python$score_samples(X))),
    cluster = .hp_r(.hp_call(object$python$predict_cluster(X))) + 1L)
}

#' @method autoplot tdp_mixture
#' @export
autoplot.tdp_mixture <- function(object, dims = c(1L, 2L), ...) {
  .hp_check_args()
  X <- object$X
  if (ncol(X) < 2L) {
    return(ggplot2::ggplot(data.frame(x = X[, 1]), ggplot2::aes(.data$x)) +
             ggplot2::geom_histogram(bins = 50))
  }
  nm <- colnames(X)
  if (is.null(nm)) nm <- paste0("X", seq_len(ncol(X)))
  lab <- if (is.null(object$labels)) predict.tdp_mixture(object) else object$labels
  df <- data.frame(a = X[, dims[1]], b = X[, dims[2]], component = factor(lab))
  ggplot2::ggplot(df, ggplot2::aes(.data$a, .data$b, colour = .data$component)) +
    ggplot2::geom_point(size = 0.4, alpha = 0.6) +
    ggplot2::guides(colour = "none") +
    ggplot2::labs(x = nm[dims[1]], y = nm[dims[2]],
                  title = sprintf("Truncated DP mixture (%s): %d occupied components",
                                  object$method, length(unique(lab))))
}

#' @export
plot.tdp_mixture <- function(x, ...) { print(autoplot.tdp_mixture(x, ...)); invisible(x) }
