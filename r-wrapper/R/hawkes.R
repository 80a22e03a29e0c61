# Spatiotemporal Hawkes process (Holbrook et al. 2021): thin wrappers over hphawkes_py.hawkes.

.hawkes_names <- c("mu0", "tau_x", "tau_t", "theta", "omega", "h")
.hawkes_kernel_names <- c("omega2", "w")  # parameters of kernel = "exp2" only

#' Parameters of the spatiotemporal Hawkes model
#'
#' The six parameters of the model of Holbrook et al. (2021) (eight with the two-exponential
#' kernel), checked to be single numbers. The intensity at location \eqn{x}, time \eqn{t} is a
#' background \eqn{\mu_0} times a space-time Gaussian smoother of the events (bandwidths
#' \code{tau_x}, \code{tau_t}) plus \eqn{\theta} times the triggering kernel of the earlier
#' events: exponential in time (rate \eqn{\omega}), Gaussian in space (sd \eqn{h}).
#'
#' @param mu0 Background weight (events).
#' @param tau_x Background spatial bandwidth (units of x).
#' @param tau_t Background temporal bandwidth (units of t).
#' @param theta Expected number of
#'   children per event.
#' @param omega Rate of the exponential triggering kernel (1 / units of t).
#' @param h Spatial bandwidth of the triggering kernel (units of x).
#' @param omega2,w \code{kernel = "exp2"} only (the sum of two exponentials
#'   \eqn{w \omega e^{-\omega t} + (1 - w) \omega_2 e^{-\omega_2 t}}): the second rate
#'   (1 / units of t) and the weight of the \code{omega} component (in [0, 1]).
#' @return A named list of class \code{hawkes_params}, accepted as \code{params} by
#'   \code{\link{hawkes_loglik}}, \code{\link{hawkes_probabilities}} and as \code{fit} by
#'   \code{\link{hawkes_residuals}}, \code{\link{hawkes_forecast}},
#'   \code{\link{hawkes_forecast_score}}.
#' @examples
#' p <- hawkes_params(mu0 = 50, tau_x = 0.2, tau_t = 10, theta = 0.5, omega = 0.2, h = 0.05)
#' p
#' # kernel = "exp2" takes the second rate and the weight of the first exponential
#' hawkes_params(50, 0.2, 10, 0.5, omega = 0.2, h = 0.05, omega2 = 2, w = 0.7)
#' @export
hawkes_params <- function(mu0, tau_x, tau_t, theta, omega, h, omega2 = NULL, w = NULL) {
  .hp_check_args()
  p <- list(mu0 = mu0, tau_x = tau_x, tau_t = tau_t, theta = theta, omega = omega, h = h)
  for (nm in names(p)) p[[nm]] <- .as_num(p[[nm]], nm, null_ok = FALSE)
  if (!is.null(omega2)) p$omega2 <- .as_num(omega2, "omega2", null_ok = FALSE)
  if (!is.null(w)) p$w <- .as_num(w, "w", null_ok = FALSE)
  structure(p, class = "hawkes_params")
}

#' @export
print.hawkes_params <- function(x, ...) {
  cat("Hawkes parameters:", paste(sprintf("%s=%g", names(x), unlist(x)), collapse = ", "), "\n")
  invisible(x)
}

.py_hawkes_params <- function(params) {
  if (inherits(params, "python.builtin.object")) return(params)
  p <- as.list(params)
  miss <- setdiff(.hawkes_names, names(p))
  if (length(miss)) .hp_stop("params must name all of ", paste(.hawkes_names, collapse = ", "),
                             "; missing: ", paste(miss, collapse = ", "))
  extra <- setdiff(names(p), c(.hawkes_names, .hawkes_kernel_names))
  if (length(extra)) .hp_stop("params has unknown name(s): ", paste(extra, collapse = ", "))
  nms <- c(.hawkes_names, intersect(.hawkes_kernel_names, names(p)))
  p <- lapply(nms, function(nm) .as_num(p[[nm]], paste0("params$", nm), null_ok = FALSE))
  names(p) <- nms
  .hp_call(do.call(.hp_mod("hawkes")$HawkesParams, p))
}

.hawkes_window <- function(window) if (is.null(window)) NULL else as.list(as.double(window))

.hawkes_x <- function(x) {
  if (is.data.frame(x)) x <- as.matrix(x)
  .np_double(x, "x")
}

#' Log-likelihood of the spatiotemporal Hawkes model
#'
#' @param x Event locations: numeric vector (D = 1) or matrix / data frame with D = 1, 2, 3
#'   columns (e.g. km). Any order.
#' @param t Event times (e.g. hours), same length as the rows of \code{x}.
#' @param params A \code{hawkes_params()} object or named list/vector of the six parameters
#'   (eight with \code{kernel = "exp2"}: also \code{omega2} and \code{w}).
#' @param exact Use exact \code{exp} instead of the fast vectorised one.
#' @param window \code{NULL} or \code{c(T0, T1)}, the observation window of the times.
#' @param dtype \code{"float64"} or \code{"float32"} (GPU engine).
#' @param backend,threads See \code{hphawkes_backends()}.
#' @param kernel Temporal triggering kernel: \code{"exponential"} (the paper's),
#'   \code{"power-law"} or \code{list("power-law", p)} (Omori-Utsu), or \code{"exp2"}, the sum of
#'   two exponentials (parameters \code{omega2} and \code{w} in \code{params}).
#' @param spatial_kernel Spatial triggering kernel, with scale \code{h}: \code{"gaussian"} (the
#'   paper's, the default) or the isotropic power law \code{"power-law"} (q = 2) /
#'   \code{list("power-law", q)}, density \eqn{\Gamma(q) / (\Gamma(q - D/2) \pi^{D/2} h^D) (1 + r^2/h^2)^{-q}},
#'   q > D/2.
#' @param background \code{"smoother"} (the model's space-time Gaussian smoother with
#'   \code{tau_x}, \code{tau_t}) or a \code{kde_fit()} result: its adaptive, edge-corrected surface,
#'   normalised over its window, as a fixed spatial background with a constant rate in time
#'   (\code{tau_x}, \code{tau_t} are then unused).
#' @return The log-likelihood (a number).
#' @seealso \code{\link{hawkes_params}}, \code{\link{hawkes_mcmc}}.
#' @examplesIf hphawkes_available()
#' sim <- hawkes_simulate(mu = 0.5, theta = 0.5, omega = 0.2, h = 0.05, region = 1,
#'                        duration = 100, seed = 1)
#' p <- hawkes_params(mu0 = 50, tau_x = 0.2, tau_t = 10, theta = 0.5, omega = 0.2, h = 0.05)
#' hawkes_loglik(sim$x, sim$t, p)
#' hawkes_loglik(sim$x, sim$t, p, exact = TRUE)  # exact exp: equal to about 1e-12
#' hawkes_loglik(sim$x, sim$t, p, kernel = "power-law")
#' @export
hawkes_loglik <- function(x, t, params, exact = FALSE, window = NULL, dtype = "float64",
                          backend = "auto", threads = NULL, kernel = "exponential", background = "smoother",
                          spatial_kernel = "gaussian") {
  .hp_check_args()
  hk <- .hp_mod("hawkes")
  res <- .hp_call(hk$log_likelihood(.hawkes_x(x), .np_double(t, "t"), .py_hawkes_params(params),
                                    exact = .as_flag(exact, "exact"), window = .hawkes_window(window), dtype = dtype,
                                    backend = backend, threads = .as_int(threads),
                                    kernel = .hawkes_kernel(kernel),
                                    background = .hawkes_background(background),
                                    spatial_kernel = .hawkes_spatial_kernel(spatial_kernel)))
  .hp_r(res)
}

#' Gradient of the Hawkes log-likelihood
#'
#' Calls \code{hphawkes_py.hawkes.log_likelihood_gradient}: the analytic derivatives of the
#' log-likelihood of \code{\link{hawkes_loglik}} with respect to each parameter (the gradient the
#' No-U-Turn sampler of \code{hawkes_mcmc(sampler = "nuts")} follows).
#'
#' @inheritParams hawkes_loglik
#' @return A named numeric vector: \eqn{\partial \log L / \partial p} for \code{mu0},
#'   \code{tau_x}, \code{tau_t}, \code{theta}, \code{omega}, \code{h} (and \code{omega2},
#'   \code{w} with \code{kernel = "exp2"}), in 1 / the parameter's unit (per km for \code{h}, hours
#'   for \code{omega} in 1/hour).
#' @seealso \code{\link{hawkes_loglik}}, \code{\link{hawkes_mcmc}}.
#' @examplesIf hphawkes_available()
#' sim <- hawkes_simulate(mu = 0.5, theta = 0.5, omega = 0.2, h = 0.05, region = 1,
#'                        duration = 100, seed = 1)
#' p <- hawkes_params(mu0 = 50, tau_x = 0.2, tau_t = 10, theta = 0.5, omega = 0.2, h = 0.05)
#' g <- hawkes_loglik_gradient(sim$x, sim$t, p)
#' g
#' # against a central difference in theta
#' d <- 1e-6
#' up <- p; up$theta <- p$theta + d
#' dn <- p; dn$theta <- p$theta - d
#' (hawkes_loglik(sim$x, sim$t, up, exact = TRUE) - hawkes_loglik(sim$x, sim$t, dn, exact = TRUE)) / (2 * d)
#' @export
hawkes_loglik_gradient <- function(x, t, params, exact = FALSE, window = NULL, dtype = "float64",
                                   backend = "auto", threads = NULL, kernel = "exponential",
                                   background = "smoother", spatial_kernel = "gaussian") {
  .hp_check_args()
  hk <- .hp_mod("hawkes")
  res <- .hp_call(hk$log_likelihood_gradient(.hawkes_x(x), .np_double(t, "t"), .py_hawkes_params(params),
    exact = .as_flag(exact, "exact"), window = .hawkes_window(window), dtype = dtype,
    backend = backend, threads = .as_int(threads), kernel = .hawkes_kernel(kernel),
    background = .hawkes_background(background), spatial_kernel = .hawkes_spatial_kernel(spatial_kernel)))
  unlist(.hp_r(res))
}

#' Self-excitation probabilities pi_n
#'
#' The probability that event n was triggered by an earlier event, at fixed parameters.
#'
#' @inheritParams hawkes_loglik
#' @return A data frame of class \code{hawkes_probabilities}: the coordinates of \code{x}
#'   (columns \code{x}, \code{y}, \code{z} or the column names of \code{x}), \code{t} and
#'   \code{pi}, in the input order.
#' @seealso \code{\link{hawkes_self_excitation}} for the posterior of \eqn{\pi_n}.
#' @examplesIf hphawkes_available()
#' sim <- hawkes_simulate(mu = 0.5, theta = 0.5, omega = 0.2, h = 0.05, region = 1,
#'                        duration = 100, seed = 1)
#' p <- hawkes_params(mu0 = 50, tau_x = 0.2, tau_t = 10, theta = 0.5, omega = 0.2, h = 0.05)
#' pr <- hawkes_probabilities(sim$x, sim$t, p)
#' pr
#' summary(pr)
#' @export
hawkes_probabilities <- function(x, t, params, exact = FALSE, window = NULL, dtype = "float64",
                                 backend = "auto", threads = NULL, kernel = "exponential",
                                 background = "smoother", spatial_kernel = "gaussian") {
  .hp_check_args()
  hk <- .hp_mod("hawkes")
  res <- .hp_call(hk$self_excitation_probabilities(
    .hawkes_x(x), .np_double(t, "t"), .py_hawkes_params(params), exact = .as_flag(exact, "exact"),
    window = .hawkes_window(window), dtype = dtype, backend = backend, threads = .as_int(threads),
    kernel = .hawkes_kernel(kernel), background = .hawkes_background(background),
    spatial_kernel = .hawkes_spatial_kernel(spatial_kernel)))
  pi <- .hp_r(res)
  .hawkes_prob_frame(x, t, data.frame(pi = pi), "hawkes_probabilities")
}

.hawkes_prob_frame <- function(x, t, values, cls) {
  xm <- as.matrix(x)
  if (is.null(dim(x))) xm <- matrix(as.double(x), ncol = 1L)
  nm <- colnames(xm)
  if (is.null(nm)) nm <- c("x", "y", "z")[seq_len(ncol(xm))]
  coords <- as.data.frame(xm)
  names(coords) <- nm
  out <- cbind(coords, t = as.double(t), values)
  attr(out, "coord_names") <- nm
  class(out) <- c(cls, "data.frame")
  out
}

#' @export
print.hawkes_probabilities <- function(x, ...) {
  p <- if ("pi" %in% names(x)) x$pi else x$mean
  cat(sprintf("Self-excitation probabilities of %d events: mean pi = %.4f, range [%.4g, %.4g]\n",
              nrow(x), mean(p), min(p), max(p)))
  print(utils::head(as.data.frame(unclass(x)[names(x)], stringsAsFactors = FALSE)), ...)
  invisible(x)
}

#' @export
summary.hawkes_probabilities <- function(object, ...) summary(if ("pi" %in% names(object)) object$pi else object$mean)

#' ggplot2 figures of self-excitation probabilities
#'
#' @param object Result of \code{hawkes_probabilities()} or \code{hawkes_self_excitation()}.
#' @param type \code{"map"} (events coloured by pi, needs D >= 2) or \code{"time"} (pi over time).
#' @param ... Unused.
#' @return A \code{ggplot} object.
#' @examplesIf hphawkes_available()
#' sim <- hawkes_simulate(mu = 0.5, theta = 0.5, omega = 0.2, h = 0.05, region = 1,
#'                        duration = 100, seed = 1)
#' p <- hawkes_params(mu0 = 50, tau_x = 0.2, tau_t = 10, theta = 0.5, omega = 0.2, h = 0.05)
#' pr <- hawkes_probabilities(sim$x, sim$t, p)
#' autoplot(pr)
#' autoplot(pr, type = "time")
#' @method autoplot hawkes_probabilities
#' @export
autoplot.hawkes_probabilities <- function(object, type = c("map", "time"), ...) {
  .hp_check_args()
  type <- match.arg(type)
  df <- as.data.frame(unclass(object)[names(object)])
  pi_col <- if ("pi" %in% names(df)) "pi" else "mean"
  df$.pi <- df[[pi_col]]
  nm <- attr(object, "coord_names")
  if (type == "map" && length(nm) >= 2L) {
    df$.x <- df[[nm[1]]]; df$.y <- df[[nm[2]]]
    df <- df[order(df$.pi), ]
    ggplot2::ggplot(df, ggplot2::aes(.data$.x, .data$.y, colour = .data$.pi)) +
      ggplot2::geom_point(size = 0.8) +
      ggplot2::scale_colour_viridis_c(name = expression(pi[n]), limits = c(0, 1)) +
      ggplot2::coord_equal() + ggplot2::labs(x = nm[1], y = nm[2],
        title = "Probability that each event was self-excited")
  } else {
    ggplot2::ggplot(df, ggplot2::aes(.data$t, .data$.pi)) +
      ggplot2::geom_point(size = 0.6, alpha = 0.5) +
      ggplot2::geom_smooth(method = "loess", formula = y ~ x, se = FALSE, colour = "firebrick") +
      ggplot2::labs(x = "t", y = expression(pi[n]), title = "Self-excitation probability over time")
  }
}

#' @export
plot.hawkes_probabilities <- function(x, ...) {
  print(autoplot.hawkes_probabilities(x, ...))
  invisible(x)
}

#' Posterior sampling for the spatiotemporal Hawkes model
#'
#' Adaptive Metropolis-Hastings (the paper's Algorithm 1), or the No-U-Turn sampler
#' (\code{sampler = "nuts"}), by \code{hphawkes_py.hawkes.mcmc}.
#'
#' @inheritParams hawkes_loglik
#' @param n_iter Sweeps per chain, burn-in included (whole number).
#' @param burn_in Leading sweeps discarded (whole number, < n_iter).
#' @param chains Number of independent chains (whole number).
#' @param sample Parameters to sample (character vector); \code{NULL}: \code{h}, \code{omega},
#'   \code{theta}, \code{mu0} and, with \code{kernel = "exp2"}, \code{omega2} and \code{w} unless
#'   \code{fixed} gives them.
#' @param fixed Named list of the values of every parameter not sampled (natural units); the
#'   default model needs \code{list(tau_x = ..., tau_t = ...)}.
#' @param init,priors Optional named lists (initial values; half-normal prior scales);
#'   \code{init = "mode"} starts every chain at the posterior mode.
#' @param seed Whole number or \code{NULL}.
#' @param progress Show progress bars (stderr).
#' @param sampler \code{"mh"} (adaptive Metropolis-Hastings, \code{n_iter} sweeps) or \code{"nuts"}
#'   (the No-U-Turn sampler of the Python package \code{mici}, on the gradient of
#'   \code{\link{hawkes_loglik_gradient}}: \code{n_iter} transitions, a few hundred to a few
#'   thousand, with \code{burn_in} >= 1 adapting the step size and metric).
#' @param target_accept \code{NULL} (0.8) or, with \code{sampler = "nuts"}, the target of the
#'   step-size adaptation, in (0, 1); raise it (0.9, 0.95) when there are divergences.
#' @param max_tree_depth \code{NULL} (10) or, with \code{sampler = "nuts"}, the largest trajectory
#'   doubling depth (at most \code{2^max_tree_depth} leapfrog steps per transition).
#' @return An object of class \code{c("hawkes_mcmc", "mcmc.list")}: the post-burn-in draws
#'   of the sampled parameters, one \code{coda::mcmc} per chain, so \code{coda::HPDinterval},
#'   \code{coda::gelman.diag}, \code{coda::effectiveSize} work on it directly. Attribute
#'   \code{"hphawkes"} holds the Python summary table, acceptance rates, fixed values, backend
#'   and the Python posterior (used by \code{hawkes_self_excitation()}).
#'   \code{summary()} gives the table of the sampled parameters; the fixed ones are listed
#'   apart, as fixed (see \code{\link{summary.hawkes_mcmc}}). With \code{sampler = "nuts"} the
#'   acceptance rates are each chain's mean NUTS acceptance statistic, and the attribute also holds
#'   \code{nuts_stats}: a list of per-chain vectors \code{divergences}, \code{mean_tree_depth},
#'   \code{step_size}, \code{n_step} (leapfrog steps) and \code{evaluations} (gradients).
#' @seealso \code{\link{summary.hawkes_mcmc}}, \code{\link{autoplot.hawkes_mcmc}},
#'   \code{\link{hawkes_self_excitation}}, \code{\link{hawkes_residuals}}.
#' @examplesIf hphawkes_available()
#' sim <- hawkes_simulate(mu = 0.5, theta = 0.5, omega = 0.2, h = 0.05, region = 1,
#'                        duration = 100, seed = 1)
#' fit <- hawkes_mcmc(sim$x, sim$t, n_iter = 300, burn_in = 100, chains = 2, seed = 1,
#'                    fixed = list(tau_x = 0.2, tau_t = 10))
#' fit
#' summary(fit)
#' coda::effectiveSize(fit)
#' coda::HPDinterval(fit)[[1]]
#' # the No-U-Turn sampler: far fewer, dearer transitions (needs the Python package mici)
#' if (reticulate::py_module_available("mici")) {
#'   nuts <- hawkes_mcmc(sim$x, sim$t, n_iter = 60, burn_in = 30, chains = 2, seed = 1,
#'                       fixed = list(tau_x = 0.2, tau_t = 10), sampler = "nuts")
#'   attr(nuts, "hphawkes")$nuts_stats$divergences
#' }
#' @export
hawkes_mcmc <- function(x, t, n_iter = 10000L, burn_in = 1000L, chains = 4L,
                        sample = NULL, fixed = NULL, init = NULL,
                        priors = NULL, seed = NULL, progress = FALSE, exact = FALSE,
                        window = NULL, dtype = "float64", backend = "auto", threads = NULL,
                        kernel = "exponential", background = "smoother", spatial_kernel = "gaussian",
                        sampler = "mh", target_accept = NULL, max_tree_depth = NULL) {
  .hp_check_args()
  if (!is.character(sampler) || length(sampler) != 1L || is.na(sampler) || !sampler %in% c("mh", "nuts"))
    .hp_stop("sampler must be \"mh\" or \"nuts\", got ", paste(utils::head(format(sampler), 3), collapse = ", "))
  hk <- .hp_mod("hawkes")
  named_nums <- function(v, nm) {
    if (is.null(v)) return(NULL)
    v <- as.list(v)
    if (is.null(names(v)) || any(!nzchar(names(v)))) .hp_stop(nm, " must be a named list")
    lapply(v, function(e) .as_num(e, nm, null_ok = FALSE))
  }
  post <- .hp_call(hk$mcmc(.hawkes_x(x), .np_double(t, "t"),
    n_iter = .as_int(n_iter, "n_iter", FALSE), burn_in = .as_int(burn_in, "burn_in", FALSE),
    chains = .as_int(chains, "chains", FALSE), sample = .as_seq(sample),
    fixed = named_nums(fixed, "fixed"),
    init = if (identical(init, "mode")) "mode" else named_nums(init, "init"),
    priors = named_nums(priors, "priors"), seed = .as_int(seed), progress = .as_flag(progress, "progress"),
    exact = .as_flag(exact, "exact"), window = .hawkes_window(window), dtype = dtype, backend = backend,
    threads = .as_int(threads), kernel = .hawkes_kernel(kernel), background = .hawkes_background(background),
    spatial_kernel = .hawkes_spatial_kernel(spatial_kernel), sampler = sampler,
    target_accept = .as_num(target_accept), max_tree_depth = .as_int(max_tree_depth)))
  .hawkes_posterior_to_r(post)
}

.hawkes_posterior_to_r <- function(post) {
  draws <- .hp_r(post$draws)
  sampled <- as.character(unlist(.hp_r(post$sampled)))
  n_chains <- nrow(draws[[sampled[1]]])
  n_iter <- .hp_r(post$n_iter)
  burn_in <- .hp_r(post$burn_in)
  chains <- lapply(seq_len(n_chains), function(c) {
    m <- do.call(cbind, lapply(sampled, function(nm) draws[[nm]][c, ]))
    colnames(m) <- sampled
    coda::mcmc(m, start = burn_in + 1L, thin = 1L)
  })
  out <- coda::mcmc.list(chains)
  fixed_names <- setdiff(names(draws), sampled)
  # A fixed parameter has no posterior (sd 0, ESS and R-hat undefined): the table keeps the
  # sampled ones, and the fixed values are reported apart.
  table <- .hp_r(post$summary())
  table <- table[intersect(sampled, rownames(table)), , drop = FALSE]
  info <- list(
    summary = table,
    acceptance_rates = lapply(.hp_r(post$acceptance_rates), as.numeric),
    fixed = vapply(fixed_names, function(nm) draws[[nm]][1, 1], numeric(1)),
    sampled = sampled, n_iter = n_iter, burn_in = burn_in,
    backend = .hp_r(post$backend), elapsed_seconds = .hp_r(post$elapsed_seconds),
    python = post
  )
  # NUTS posteriors carry the sampler's diagnostics (divergences, tree depth, step size).
  if (reticulate::py_has_attr(post, "nuts_stats"))
    info$nuts_stats <- lapply(.hp_r(post$nuts_stats), as.numeric)
  attr(out, "hphawkes") <- info
  class(out) <- c("hawkes_mcmc", "mcmc.list")
  out
}

.as_plain_mcmc_list <- function(x) {
  attr(x, "hphawkes") <- NULL
  class(x) <- "mcmc.list"
  x
}

#' @export
print.hawkes_mcmc <- function(x, digits = 4, ...) {
  info <- attr(x, "hphawkes")
  cat(sprintf("Hawkes posterior (hphawkes): %d chains x %d draws after %d burn-in sweeps, backend %s, %.1f s\n",
              length(x), coda::niter(x), info$burn_in, info$backend, info$elapsed_seconds))
  if (length(info$fixed))
    cat("Fixed (not sampled):", paste(sprintf("%s = %g", names(info$fixed), info$fixed), collapse = ", "), "\n")
  acc <- vapply(info$acceptance_rates, mean, numeric(1))
  cat("Mean acceptance:", paste(sprintf("%s=%.2f", names(acc), acc), collapse = ", "), "\n")
  if (!is.null(info$nuts_stats))
    cat(sprintf("NUTS: %d divergent transition(s), mean tree depth %s\n", as.integer(sum(info$nuts_stats$divergences)),
                paste(sprintf("%.2f", info$nuts_stats$mean_tree_depth), collapse = "/")))
  print(info$summary, digits = digits)
  invisible(x)
}

#' Posterior summary of a Hawkes fit
#'
#' The posterior table of the sampled parameters. Parameters held fixed (by \code{fixed} in
#' \code{\link{hawkes_mcmc}}, e.g. \code{tau_x} and \code{tau_t}) have no posterior: they are
#' not rows of the table but listed apart, with their values, when the summary is printed.
#'
#' @param object A \code{hawkes_mcmc} object.
#' @param x A \code{summary.hawkes_mcmc} object.
#' @param digits Significant digits printed.
#' @param ... Unused by \code{summary}; passed to \code{print.data.frame} by \code{print}.
#' @return A data frame of class \code{c("summary.hawkes_mcmc", "data.frame")}, one row per
#'   sampled parameter (row names): \code{mean}, \code{sd}, the 95\% highest-density interval,
#'   \code{ess_bulk} and \code{r_hat} (from the Python \code{HawkesPosterior.summary()}), with
#'   the fixed values as attribute \code{"fixed"} (a named numeric vector).
#' @examplesIf hphawkes_available()
#' sim <- hawkes_simulate(mu = 0.5, theta = 0.5, omega = 0.2, h = 0.05, region = 1,
#'                        duration = 100, seed = 1)
#' fit <- hawkes_mcmc(sim$x, sim$t, n_iter = 300, burn_in = 100, chains = 2, seed = 1,
#'                    fixed = list(tau_x = 0.2, tau_t = 10))
#' s <- summary(fit)
#' s
#' attr(s, "fixed")
#' @export
summary.hawkes_mcmc <- function(object, ...) {
  info <- attr(object, "hphawkes")
  structure(info$summary, class = c("summary.hawkes_mcmc", "data.frame"), fixed = info$fixed)
}

#' @rdname summary.hawkes_mcmc
#' @export
print.summary.hawkes_mcmc <- function(x, digits = 4, ...) {
  fixed <- attr(x, "fixed")
  cat("Sampled parameters:\n")
  print(.hawkes_table(x), digits = digits, ...)
  if (length(fixed))
    cat("Fixed (not sampled):", paste(sprintf("%s = %g", names(fixed), fixed), collapse = ", "), "\n")
  invisible(x)
}

.hawkes_table <- function(x) {
  attr(x, "fixed") <- NULL
  class(x) <- "data.frame"
  x
}

#' @export
plot.hawkes_mcmc <- function(x, ...) {
  graphics::plot(.as_plain_mcmc_list(x), ...)
  invisible(x)
}

#' ggplot2 figures of the posterior
#'
#' @param object A \code{hawkes_mcmc} object.
#' @param type \code{"density"} (posterior densities, one panel per parameter, a line per
#'   chain) or \code{"trace"}.
#' @param ... Unused.
#' @return A \code{ggplot} object (sampled parameters only).
#' @examplesIf hphawkes_available()
#' sim <- hawkes_simulate(mu = 0.5, theta = 0.5, omega = 0.2, h = 0.05, region = 1,
#'                        duration = 100, seed = 1)
#' fit <- hawkes_mcmc(sim$x, sim$t, n_iter = 300, burn_in = 100, chains = 2, seed = 1,
#'                    fixed = list(tau_x = 0.2, tau_t = 10))
#' autoplot(fit)
#' autoplot(fit, type = "trace")
#' @method autoplot hawkes_mcmc
#' @export
autoplot.hawkes_mcmc <- function(object, type = c("density", "trace"), ...) {
  .hp_check_args()
  type <- match.arg(type)
  df <- do.call(rbind, lapply(seq_along(object), function(c) {
    m <- as.matrix(object[[c]])
    it <- stats::time(object[[c]])
    do.call(rbind, lapply(colnames(m), function(p)
      data.frame(chain = factor(c), iteration = as.numeric(it), parameter = p, value = m[, p])))
  }))
  if (type == "density") {
    ggplot2::ggplot(df, ggplot2::aes(.data$value, colour = .data$chain)) +
      ggplot2::geom_density() +
      ggplot2::facet_wrap(~parameter, scales = "free") +
      ggplot2::labs(x = NULL, y = "posterior density", title = "Hawkes posterior")
  } else {
    ggplot2::ggplot(df, ggplot2::aes(.data$iteration, .data$value, colour = .data$chain)) +
      ggplot2::geom_line(linewidth = 0.3) +
      ggplot2::facet_wrap(~parameter, scales = "free_y") +
      ggplot2::labs(y = NULL, title = "Hawkes MCMC traces")
  }
}

#' Posterior of the self-excitation probabilities
#'
#' @param fit A \code{hawkes_mcmc} object.
#' @param x,t The data the model was fitted to (used for the coordinates in the result).
#' @param n_draws Posterior draws used (whole number).
#' @param seed Whole number or NULL.
#' @return A data frame of class \code{hawkes_probabilities} with columns for the coordinates,
#'   \code{t}, and \code{mean}, \code{sd}, \code{q2.5}, \code{q97.5} of pi_n (input order).
#' @seealso \code{\link{hawkes_probabilities}} (at fixed parameters),
#'   \code{\link{hawkes_self_excitation_draws}}.
#' @examplesIf hphawkes_available()
#' sim <- hawkes_simulate(mu = 0.5, theta = 0.5, omega = 0.2, h = 0.05, region = 1,
#'                        duration = 100, seed = 1)
#' fit <- hawkes_mcmc(sim$x, sim$t, n_iter = 300, burn_in = 100, chains = 2, seed = 1,
#'                    fixed = list(tau_x = 0.2, tau_t = 10))
#' se <- hawkes_self_excitation(fit, sim$x, sim$t, n_draws = 50, seed = 1)
#' head(se)
#' @export
hawkes_self_excitation <- function(fit, x, t, n_draws = 1000L, seed = NULL) {
  .hp_check_args()
  post <- attr(fit, "hphawkes")$python
  if (is.null(post)) .hp_stop("fit must come from hawkes_mcmc() in this R session")
  res <- .hp_r(.hp_call(.hp_mod("hawkes")$self_excitation(post, n_draws = .as_int(n_draws, "n_draws", FALSE),
                                                          seed = .as_int(seed), progress = FALSE)))
  .hawkes_prob_frame(x, t, res, "hawkes_probabilities")
}

#' Self-excitation probabilities per posterior draw
#'
#' Calls \code{hphawkes_py.hawkes.self_excitation_draws}: pi_n of every event for each of
#' \code{n_draws} posterior draws (the draws \code{hawkes_self_excitation()} summarises with the
#' same \code{seed}), e.g. for \code{scan_declustered()}.
#'
#' @param fit A \code{hawkes_mcmc} object.
#' @param n_draws Posterior draws used (whole number; all of them when fewer are stored).
#' @param seed Whole number or NULL.
#' @return A numeric matrix, one row per draw and one column per event (input order), of
#'   probabilities in [0, 1].
#' @seealso \code{\link{scan_declustered}}.
#' @examplesIf hphawkes_available()
#' sim <- hawkes_simulate(mu = 0.5, theta = 0.5, omega = 0.2, h = 0.05, region = 1,
#'                        duration = 100, seed = 1)
#' fit <- hawkes_mcmc(sim$x, sim$t, n_iter = 300, burn_in = 100, chains = 2, seed = 1,
#'                    fixed = list(tau_x = 0.2, tau_t = 10))
#' d <- hawkes_self_excitation_draws(fit, n_draws = 20, seed = 1)
#' dim(d)  # 20 draws x events
#' @export
hawkes_self_excitation_draws <- function(fit, n_draws = 100L, seed = NULL) {
  .hp_check_args()
  post <- attr(fit, "hphawkes")$python
  if (is.null(post)) .hp_stop("fit must come from hawkes_mcmc() in this R session")
  out <- .hp_r(.hp_call(.hp_mod("hawkes")$self_excitation_draws(
    post, n_draws = .as_int(n_draws, "n_draws", FALSE), seed = .as_int(seed), progress = FALSE)))
  if (is.null(dim(out))) out <- matrix(out, nrow = 1L)
  out
}

#' Simulate a spatiotemporal Hawkes process (branching construction)
#'
#' Background events are a homogeneous Poisson process on the region and \code{[0, duration]};
#' every event has Poisson(\code{theta}) children, delayed by the temporal kernel and displaced
#' by the spatial one (\code{hphawkes_py.hawkes.simulate}).
#'
#' @param mu Background rate per unit area per unit time (not the \code{mu0} of the fitting
#'   model: about \code{mu * area * duration} background events).
#' @param theta Expected children per
#' event (< 1).
#' @param omega Rate of the exponential delay.
#' @param h Displacement sd.
#' @param region Side length or a (dim x 2) matrix of bounds.
#' @param duration Time span.
#' @param dim Spatial dimension.
#' @param seed Whole number or NULL.
#' @param kernel Delay distribution: \code{"exponential"}, \code{"power-law"},
#'   \code{list("power-law", p)} or \code{"exp2"} (Exp(omega) with probability \code{w},
#'   Exp(omega2) otherwise).
#' @param omega2,w \code{kernel = "exp2"} only: the second rate and the weight of \code{omega}.
#' @param spatial_kernel Displacement distribution of a child: \code{"gaussian"} (N(0, h^2 I)) or
#'   the isotropic power law \code{"power-law"} / \code{list("power-law", q)} with scale \code{h}
#'   (q > dim/2), drawn exactly.
#' @return A list with \code{x} (matrix) and \code{t} (vector), in time order as Python returns them.
#' @examplesIf hphawkes_available()
#' sim <- hawkes_simulate(mu = 0.5, theta = 0.5, omega = 0.2, h = 0.05, region = 1,
#'                        duration = 100, seed = 1)
#' nrow(sim$x)  # about 0.5 * 1 * 100 / (1 - 0.5) events
#' plot(sim$x, pch = 20, cex = 0.5)
#' # a 3-D process on a box, with the sum of two exponentials as the delay
#' sim3 <- hawkes_simulate(mu = 0.2, theta = 0.3, omega = 0.2, h = 0.05,
#'                         region = cbind(c(0, 0, 0), c(1, 2, 1)), duration = 50, dim = 3,
#'                         kernel = "exp2", omega2 = 2, w = 0.5, seed = 2)
#' dim(sim3$x)
#' @export
hawkes_simulate <- function(mu, theta, omega, h, region, duration, dim = 2L, seed = NULL,
                            kernel = "exponential", omega2 = NULL, w = NULL, spatial_kernel = "gaussian") {
  .hp_check_args()
  hk <- .hp_mod("hawkes")
  reg <- if (length(region) == 1L) .as_num(region) else .np_double(as.matrix(region), "region")
  res <- .hp_r(.hp_call(hk$simulate(mu = .as_num(mu), theta = .as_num(theta), omega = .as_num(omega),
    h = .as_num(h), region = reg, duration = .as_num(duration), dim = .as_int(dim), seed = .as_int(seed),
    kernel = .hawkes_kernel(kernel), omega2 = .as_num(omega2), w = .as_num(w),
    spatial_kernel = .hawkes_spatial_kernel(spatial_kernel))))
  x <- res[[1]]
  if (is.null(dim(x))) x <- matrix(x, ncol = 1L)
  list(x = x, t = res[[2]])
}

.hawkes_fit_or_params <- function(fit) {
  if (inherits(fit, "hawkes_mcmc")) {
    post <- attr(fit, "hphawkes")$python
    if (is.null(post)) .hp_stop("fit must come from hawkes_mcmc() in this R session")
    return(post)
  }
  .py_hawkes_params(fit)
}

.hawkes_kernel <- function(kernel) {
  if (is.null(kernel)) return(NULL)
  if (is.list(kernel) && length(kernel) == 2L)
    return(reticulate::tuple(as.character(kernel[[1]]), .as_num(kernel[[2]], "kernel exponent", FALSE)))
  if (is.character(kernel) && length(kernel) == 1L) return(kernel)
  .hp_stop("kernel must be \"exponential\", \"power-law\", list(\"power-law\", p) or \"exp2\"")
}

# spatial_kernel = "gaussian" | "power-law" | list("power-law", q) -> the Python spatial_kernel= value
.hawkes_spatial_kernel <- function(spatial_kernel) {
  if (is.null(spatial_kernel)) return(NULL)
  if (is.list(spatial_kernel) && length(spatial_kernel) == 2L)
    return(reticulate::tuple(as.character(spatial_kernel[[1]]),
                             .as_num(spatial_kernel[[2]], "spatial_kernel exponent", FALSE)))
  if (is.character(spatial_kernel) && length(spatial_kernel) == 1L) return(spatial_kernel)
  .hp_stop("spatial_kernel must be \"gaussian\", \"power-law\" or list(\"power-law\", q)")
}

#' Time-rescaled residuals of a Hawkes fit (Ogata) with a KS uniformity test
#'
#' @param fit A \code{hawkes_mcmc} object (residuals at the posterior mean) or parameters
#'   (\code{hawkes_params()} or a named list).
#' @param x,t The data (locations and times, any order).
#' @param window \code{NULL} or \code{c(T0, T1)}.
#' @param n_draws With a \code{hawkes_mcmc} fit: also test this many posterior draws.
#' @param seed Whole number or NULL (chooses the draws).
#' @param kernel \code{NULL} (the fit's), \code{"exponential"}, \code{"power-law"},
#'   \code{list("power-law", p)} or \code{"exp2"} (then \code{fit}'s parameters include
#'   \code{omega2} and \code{w}).
#' @param spatial_kernel \code{NULL} (the fit's), \code{"gaussian"}, \code{"power-law"} or
#'   \code{list("power-law", q)}: checked, but the time-rescaled residuals do not depend on it
#'   (every spatial kernel integrates to 1).
#' @return A list of class \code{hawkes_residuals}: \code{table} (per event in time order:
#'   \code{event} (row of the input, 1-based), \code{rescaled_time}, \code{interval},
#'   \code{uniform}), \code{ks_statistic}, \code{ks_pvalue}, \code{expected} (Lambda(T1)),
#'   \code{n_events}, and \code{draws} (per-draw KS tests) when \code{n_draws} is given.
#' @examplesIf hphawkes_available()
#' sim <- hawkes_simulate(mu = 0.5, theta = 0.5, omega = 0.2, h = 0.05, region = 1,
#'                        duration = 100, seed = 1)
#' p <- hawkes_params(mu0 = 50, tau_x = 0.2, tau_t = 10, theta = 0.5, omega = 0.2, h = 0.05)
#' res <- hawkes_residuals(p, sim$x, sim$t)
#' res
#' head(res$table)
#' @export
hawkes_residuals <- function(fit, x, t, window = NULL, n_draws = NULL, seed = NULL, kernel = NULL,
                             spatial_kernel = NULL) {
  .hp_check_args()
  res <- .hp_call(.hp_mod("hawkes")$residuals(
    .hawkes_fit_or_params(fit), .hawkes_x(x), .np_double(t, "t"), window = .hawkes_window(window),
    n_draws = .as_int(n_draws), seed = .as_int(seed), progress = FALSE, kernel = .hawkes_kernel(kernel),
    spatial_kernel = .hawkes_spatial_kernel(spatial_kernel)))
  table <- .hp_r(.hp_call(res$to_frame()))
  table$event <- as.integer(table$event) + 1L
  draws <- if (is.null(n_draws)) NULL else .hp_r(res$draws)
  num <- function(v) as.double(reticulate::py_to_r(v))
  structure(list(table = table, ks_statistic = num(res$ks_statistic), ks_pvalue = num(res$ks_pvalue),
                 expected = num(res$total), n_events = as.integer(num(res$n_events)), draws = draws),
            class = "hawkes_residuals")
}

#' @export
print.hawkes_residuals <- function(x, ...) {
  cat(sprintf("Hawkes time-rescaling residuals: %d events (expected %.1f); KS D = %.4f, p = %.3g\n",
              x$n_events, x$expected, x$ks_statistic, x$ks_pvalue))
  invisible(x)
}

#' Forecast of the conditional intensity on a grid (posterior mean and quantiles)
#'
#' @param fit A \code{hawkes_mcmc} object or parameters.
#' @param x,t The events observed so far.
#' @param times Forecast times (at or after the last event).
#' @param grid Matrix of grid points with the columns of \code{x}.
#' @param n_draws Posterior draws used.
#' @param seed Whole number or NULL.
#' @param backend,threads,exact As in \code{hawkes_loglik()}.
#' @return A data frame: \code{time}, the grid coordinates (\code{x0}, \code{x1}, ...),
#'   \code{mean}, \code{background} and the 2.5\% and 97.5\% quantiles of the intensity
#'   (events per unit area per unit time).
#' @examplesIf hphawkes_available()
#' sim <- hawkes_simulate(mu = 0.5, theta = 0.5, omega = 0.2, h = 0.05, region = 1,
#'                        duration = 100, seed = 1)
#' p <- hawkes_params(mu0 = 50, tau_x = 0.2, tau_t = 10, theta = 0.5, omega = 0.2, h = 0.05)
#' grid <- as.matrix(expand.grid(x = c(0.25, 0.75), y = c(0.25, 0.75)))
#' hawkes_forecast(p, sim$x, sim$t, times = max(sim$t) + c(1, 10), grid = grid)
#' @export
hawkes_forecast <- function(fit, x, t, times, grid, n_draws = 200L, seed = NULL, backend = "auto",
                            threads = NULL, exact = FALSE) {
  .hp_check_args()
  res <- .hp_call(.hp_mod("hawkes")$forecast_intensity(
    .hawkes_fit_or_params(fit), .hawkes_x(x), .np_double(t, "t"), .np_double(times, "times"),
    .hawkes_x(grid), n_draws = .as_int(n_draws, "n_draws", FALSE), seed = .as_int(seed), progress = FALSE,
    backend = backend, threads = .as_int(threads), exact = .as_flag(exact, "exact")))
  .hp_r(.hp_call(res$to_frame()))
}

#' Log score of a forecast window against a background-only model
#'
#' The one-step-ahead point-process log score (nats) of the events in
#' \code{(origin, origin + horizon]} given the history up to \code{origin}, under the Hawkes
#' model, the background-only model (theta = 0) and a homogeneous Poisson process; see the
#' Python \code{hphawkes_py.hawkes.forecast_score} for the definitions.
#'
#' @param fit A \code{hawkes_mcmc} object (fitted to data up to \code{origin}) or parameters.
#' @param x,t All events (history and window; later ones are ignored).
#' @param origin Forecast origin (units of \code{t}).
#' @param horizon Window length (> 0, units of \code{t}).
#' @param end End of the observation period (default: the last event time).
#' @param n_draws Posterior draws used.
#' @param background \code{"origin"} (frozen at the origin, edge-corrected) or \code{"model"}.
#' @param reference_mu0 \code{"refit"} or \code{"same"}: the background-only model's weight.
#' @param seed Whole number or NULL.
#' @param backend,threads,exact As in \code{hawkes_loglik()}.
#' @return A list of class \code{hawkes_forecast_score}: the scalars (\code{log_score},
#'   \code{background_log_score}, \code{poisson_log_score}, \code{information_gain} in nats per
#'   event, expected counts, \code{n_events}, ...) and \code{table}, one row per model.
#' @examplesIf hphawkes_available()
#' sim <- hawkes_simulate(mu = 0.5, theta = 0.5, omega = 0.2, h = 0.05, region = 1,
#'                        duration = 100, seed = 1)
#' p <- hawkes_params(mu0 = 50, tau_x = 0.2, tau_t = 10, theta = 0.5, omega = 0.2, h = 0.05)
#' hawkes_forecast_score(p, sim$x, sim$t, origin = 80, horizon = 15)
#' @export
hawkes_forecast_score <- function(fit, x, t, origin, horizon, end = NULL, n_draws = 200L,
                                  background = "origin", reference_mu0 = "refit", seed = NULL,
                                  backend = "auto", threads = NULL, exact = FALSE) {
  .hp_check_args()
  res <- .hp_call(.hp_mod("hawkes")$forecast_score(
    .hawkes_fit_or_params(fit), .hawkes_x(x), .np_double(t, "t"), origin = .as_num(origin, "origin", FALSE),
    horizon = .as_num(horizon, "horizon", FALSE), end = .as_num(end, "end"), n_draws = .as_int(n_draws, "n_draws", FALSE), background = background,
    reference_mu0 = reference_mu0, seed = .as_int(seed), backend = backend, threads = .as_int(threads),
    exact = .as_flag(exact, "exact")))
  out <- reticulate::py_to_r(.hp_call(res$to_dict()))
  out <- lapply(out, function(v) if (is.null(v)) NA_real_ else v)
  tab <- .hp_r(.hp_call(res$summary()$reset_index()))
  out$table <- tab
  structure(out, class = "hawkes_forecast_score")
}

#' @export
print.hawkes_forecast_score <- function(x, ...) {
  cat(sprintf("Hawkes forecast score over (%g, %g]: %d events; gain over background-only %.4g nats/event, over Poisson %.4g\n",
              x$origin, x$origin + x$horizon, as.integer(x$n_events), x$information_gain,
              x$information_gain_vs_poisson))
  print(x$table)
  invisible(x)
}

# background = "smoother" (the model's space-time smoother) or a fitted kde_fit() (hphawkes_kde): its
# adaptive, edge-corrected surface as the fixed spatial background (hphawkes_py.hawkes.kde_background)
.hawkes_background <- function(background) {
  if (inherits(background, "hphawkes_kde")) return(background$python)
  if (is.character(background) && length(background) == 1L) return(background)
  .hp_stop("background must be \"smoother\" or a kde_fit() result, got ", class(background)[1])
}
