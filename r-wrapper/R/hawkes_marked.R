#' Multitype Hawkes processes: K event types and a K x K excitation matrix
#'
#' \code{hawkes_types_simulate()}, \code{hawkes_types_loglik()} and \code{hawkes_types_mcmc()} call
#' \code{hphawkes_py.hawkes.simulate}, \code{log_likelihood} and \code{mcmc} with \code{types=}: each
#' event has a type \eqn{k \in \{0, \dots, K-1\}} (crime categories, say), type \eqn{l} has its own
#' background weight \code{mu0[l]}, and \code{theta[k, l]} is the expected number of type-\eqn{l}
#' events a type-\eqn{k} event triggers (parent types in rows), with the Gaussian spatial and
#' exponential temporal trigger of the single-type model (\code{omega}, \code{h}) and the same
#' background smoother (\code{tau_x}, \code{tau_t}).
#'
#' @param x Event coordinates: a matrix or data frame with one column per dimension (km in the
#'   examples).
#' @param t Event times (hours in the examples).
#' @param types Event types: a factor (its levels are the types, in order) or integers
#'   \code{0, ..., K-1}.
#' @param params A list: \code{mu0} (numeric, length K), \code{theta} (K x K matrix), \code{omega}
#'   (1/time), \code{h} (units of \code{x}), \code{tau_x}, \code{tau_t}.
#' @param tau_x,tau_t The background smoother's bandwidths, fixed (units of \code{x} and \code{t}).
#' @param mu Background rates per type (length K; events per unit area per unit time).
#' @param theta K x K matrix of expected offspring (parent type in rows).
#' @param omega,h Trigger rate (1/time) and spatial scale (units of \code{x}).
#' @param region,duration,dim,seed As in \code{\link{hawkes_simulate}}.
#' @param n_iter,burn_in,chains Sweeps per chain, discarded leading sweeps, chains.
#' @param backend,threads Engine (\code{"auto"}, \code{"cpu"}, \code{"gpu"}, \code{"emulator"}) and
#'   CPU threads.
#' @return \code{hawkes_types_simulate()}: a list with \code{x} (matrix), \code{t} and \code{types}
#'   (integers from 0). \code{hawkes_types_loglik()}: the log-likelihood (a number).
#'   \code{hawkes_types_mcmc()}: a \code{coda::mcmc.list} of class \code{hawkes_marked_mcmc} (columns
#'   \code{mu0[k]}, \code{theta[k,l]}, \code{omega}, \code{h}); attribute \code{"hphawkes"} holds the
#'   posterior summary table, the acceptance rates, the posterior mean excitation matrix
#'   (\code{matrix}) and the per-event type-pair probabilities (\code{pi}: N x (K + 1), column 1
#'   background, column 1 + k triggered by a type-k event).
#' @seealso \code{\link{hawkes_etas_mcmc}} for marks (magnitudes), \code{\link{hawkes_mcmc}}.
#' @examplesIf hphawkes_available()
#' sim <- hawkes_types_simulate(mu = c(0.3, 0.2), theta = matrix(c(0.3, 0.1, 0.0, 0.4), 2, byrow = TRUE),
#'                              omega = 0.5, h = 0.05, region = 1, duration = 200, seed = 1)
#' table(sim$types)
#' p <- list(mu0 = c(30, 20), theta = matrix(c(0.3, 0.1, 0.0, 0.4), 2, byrow = TRUE), omega = 0.5,
#'           h = 0.05, tau_x = 0.2, tau_t = 10)
#' hawkes_types_loglik(sim$x, sim$t, sim$types, p)
#' fit <- hawkes_types_mcmc(sim$x, sim$t, sim$types, tau_x = 0.2, tau_t = 10, n_iter = 60,
#'                          burn_in = 20, chains = 2, seed = 1)
#' fit
#' attr(fit, "hphawkes")$matrix
#' @name hawkes_types
NULL

.hawkes_types <- function(types) {
  if (is.factor(types)) return(.np_count(as.integer(types) - 1L, "types"))
  if (!is.numeric(types) || anyNA(types) || any(types != round(types)))
    .hp_stop("types must be a factor or integers 0, ..., K-1, got ", paste(utils::head(format(types), 3), collapse = ", "))
  .np_count(as.integer(types), "types")
}

.hawkes_types_params <- function(params) {
  p <- as.list(params)
  need <- c("mu0", "theta", "omega", "h", "tau_x", "tau_t")
  miss <- setdiff(need, names(p))
  if (length(miss)) .hp_stop("params must name all of ", paste(need, collapse = ", "), "; missing: ",
                             paste(miss, collapse = ", "))
  extra <- setdiff(names(p), need)
  if (length(extra)) .hp_stop("params has unknown name(s): ", paste(extra, collapse = ", "))
  if (!is.matrix(p$theta)) .hp_stop("params$theta must be a K x K matrix")
  list(mu0 = .np_double(as.double(p$mu0), "params$mu0"), theta = .np_double(p$theta, "params$theta"),
       omega = .as_num(p$omega, "params$omega", FALSE), h = .as_num(p$h, "params$h", FALSE),
       tau_x = .as_num(p$tau_x, "params$tau_x", FALSE), tau_t = .as_num(p$tau_t, "params$tau_t", FALSE))
}

#' @rdname hawkes_types
#' @export
hawkes_types_simulate <- function(mu, theta, omega, h, region, duration, dim = 2L, seed = NULL) {
  .hp_check_args()
  if (!is.matrix(theta)) .hp_stop("theta must be a K x K matrix")
  reg <- if (length(region) == 1L) .as_num(region) else .np_double(as.matrix(region), "region")
  res <- .hp_r(.hp_call(.hp_mod("hawkes")$simulate(mu = .np_double(as.double(mu), "mu"),
    theta = .np_double(theta, "theta"), omega = .as_num(omega, "omega", FALSE), h = .as_num(h, "h", FALSE),
    region = reg, duration = .as_num(duration, "duration", FALSE), dim = .as_int(dim), seed = .as_int(seed))))
  x <- res[[1]]
  if (is.null(dim(x))) x <- matrix(x, ncol = 1L)
  list(x = x, t = res[[2]], types = as.integer(res[[3]]))
}

#' @rdname hawkes_types
#' @export
hawkes_types_loglik <- function(x, t, types, params, backend = "auto", threads = NULL) {
  .hp_check_args()
  .hp_r(.hp_call(.hp_mod("hawkes")$log_likelihood(.hawkes_x(x), .np_double(t, "t"),
    .hawkes_types_params(params), types = .hawkes_types(types), backend = backend, threads = .as_int(threads))))
}

#' @rdname hawkes_types
#' @export
hawkes_types_mcmc <- function(x, t, types, tau_x, tau_t, n_iter = 2000L, burn_in = 500L, chains = 2L,
                              seed = NULL, backend = "auto", threads = NULL) {
  .hp_check_args()
  post <- .hp_call(.hp_mod("hawkes")$mcmc(.hawkes_x(x), .np_double(t, "t"), types = .hawkes_types(types),
    fixed = list(tau_x = .as_num(tau_x, "tau_x", FALSE), tau_t = .as_num(tau_t, "tau_t", FALSE)),
    n_iter = .as_int(n_iter, "n_iter", FALSE), burn_in = .as_int(burn_in, "burn_in", FALSE),
    chains = .as_int(chains, "chains", FALSE), seed = .as_int(seed), progress = FALSE, backend = backend,
    threads = .as_int(threads)))
  .hawkes_marked_to_r(post, "multitype")
}

#' Space-time ETAS: Hawkes processes with magnitudes (marks)
#'
#' \code{hawkes_etas_simulate()}, \code{hawkes_etas_loglik()} and \code{hawkes_etas_mcmc()} call
#' \code{hphawkes_py.hawkes.simulate(etas=)}, \code{log_likelihood(marks=)} and \code{mcmc(marks=)}:
#' the space-time ETAS model of Ogata (1998) and Zhuang et al. (2002). An event of magnitude
#' \eqn{m} has \eqn{A e^{\alpha (m - m_0)}} expected direct aftershocks, Omori-Utsu delays
#' \eqn{(p - 1) c^{p-1} (t + c)^{-p}}, a Gaussian spatial spread of variance
#' \eqn{d e^{\gamma (m - m_0)}}, and magnitudes follow Gutenberg-Richter with b-value \code{b}; the
#' background rate \code{mu} is uniform over \code{region}.
#'
#' @inheritParams hawkes_types
#' @param x Epicentres, an N x 2 matrix (km in the examples).
#' @param t Occurrence times (days in the examples).
#' @param marks Magnitudes, all \eqn{\ge} \code{m0}.
#' @param params A list of \code{mu}, \code{A}, \code{alpha}, \code{c}, \code{p}, \code{d},
#'   \code{gamma} and \code{b}.
#' @param m0 Magnitude of completeness (default: the smallest magnitude).
#' @param region The study region: a side length (square from 0) or a 2 x 2 matrix of ranges.
#' @param mu,A,alpha,c,p,d,gamma,b The ETAS parameters, for \code{hawkes_etas_simulate()}.
#' @param duration Length of the simulated period (units of \code{t}), from 0.
#' @param seed Random seed (a whole number) or \code{NULL}.
#' @return \code{hawkes_etas_simulate()}: a list with \code{x}, \code{t} and \code{m}.
#'   \code{hawkes_etas_loglik()}: the log-likelihood. \code{hawkes_etas_mcmc()}: a
#'   \code{coda::mcmc.list} of class \code{hawkes_marked_mcmc} with one column per sampled
#'   parameter, the summary table and acceptance rates in attribute \code{"hphawkes"}.
#' @seealso \code{\link{hawkes_types}}, \code{\link{hawkes_mcmc}}.
#' @examplesIf hphawkes_available()
#' sim <- hawkes_etas_simulate(mu = 0.5, A = 0.3, alpha = 1, c = 0.01, p = 1.2, d = 0.02, gamma = 0.5,
#'                             b = 1, m0 = 3, region = 10, duration = 100, seed = 1)
#' length(sim$t)
#' hawkes_etas_loglik(sim$x, sim$t, sim$m, list(mu = 0.5, A = 0.3, alpha = 1, c = 0.01, p = 1.2,
#'                    d = 0.02, gamma = 0.5, b = 1), m0 = 3, region = 10)
#' fit <- hawkes_etas_mcmc(sim$x, sim$t, sim$m, m0 = 3, region = 10, n_iter = 40, burn_in = 20,
#'                         chains = 2, seed = 1)
#' summary(fit)
#' @name hawkes_etas
NULL

.hawkes_region <- function(region) {
  if (is.null(region)) return(NULL)
  if (length(region) == 1L) .as_num(region, "region", FALSE) else .np_double(as.matrix(region), "region")
}

.hawkes_etas_settings <- function(m0, region) {
  s <- list()
  if (!is.null(m0)) s$m0 <- .as_num(m0, "m0", FALSE)
  if (!is.null(region)) s$region <- .hawkes_region(region)
  s
}

#' @rdname hawkes_etas
#' @export
hawkes_etas_simulate <- function(mu, A, alpha, c, p, d, gamma, b, m0, region, duration, seed = NULL) {
  .hp_check_args()
  e <- list(mu = mu, A = A, alpha = alpha, c = c, p = p, d = d, gamma = gamma, b = b, m0 = m0)
  for (nm in names(e)) e[[nm]] <- .as_num(e[[nm]], nm, FALSE)
  res <- .hp_r(.hp_call(.hp_mod("hawkes")$simulate(etas = e, region = .hawkes_region(region),
    duration = .as_num(duration, "duration", FALSE), seed = .as_int(seed))))
  list(x = res[[1]], t = res[[2]], m = res[[3]])
}

#' @rdname hawkes_etas
#' @export
hawkes_etas_loglik <- function(x, t, marks, params, m0 = NULL, region = NULL, backend = "auto", threads = NULL) {
  .hp_check_args()
  p <- as.list(params)
  if (is.null(names(p)) || any(!nzchar(names(p)))) .hp_stop("params must be a named list")
  p <- lapply(stats::setNames(names(p), names(p)), function(nm) .as_num(p[[nm]], paste0("params$", nm), FALSE))
  .hp_r(.hp_call(.hp_mod("hawkes")$log_likelihood(.hawkes_x(x), .np_double(t, "t"), p,
    marks = .np_double(marks, "marks"), etas = .hawkes_etas_settings(m0, region), backend = backend,
    threads = .as_int(threads))))
}

#' @rdname hawkes_etas
#' @export
hawkes_etas_mcmc <- function(x, t, marks, m0 = NULL, region = NULL, n_iter = 2000L, burn_in = 500L,
                             chains = 2L, seed = NULL, backend = "auto", threads = NULL) {
  .hp_check_args()
  post <- .hp_call(.hp_mod("hawkes")$mcmc(.hawkes_x(x), .np_double(t, "t"), marks = .np_double(marks, "marks"),
    etas = .hawkes_etas_settings(m0, region), n_iter = .as_int(n_iter, "n_iter", FALSE),
    burn_in = .as_int(burn_in, "burn_in", FALSE), chains = .as_int(chains, "chains", FALSE),
    seed = .as_int(seed), progress = FALSE, backend = backend, threads = .as_int(threads)))
  .hawkes_marked_to_r(post, "etas")
}

.hawkes_marked_to_r <- function(post, model) {
  draws <- .hp_r(post$draws)
  nms <- names(draws)
  n_chains <- nrow(draws[[nms[1]]])
  burn_in <- .hp_r(post$burn_in)
  chains <- lapply(seq_len(n_chains), function(c) {
    m <- do.call(cbind, lapply(nms, function(nm) draws[[nm]][c, ]))
    colnames(m) <- nms
    coda::mcmc(m, start = burn_in + 1L, thin = 1L)
  })
  extra <- .hp_r(post$extra)
  table <- .hp_r(post$summary())
  out <- coda::mcmc.list(chains)
  attr(out, "hphawkes") <- list(model = model, summary = table,
                                acceptance_rates = lapply(.hp_r(post$acceptance_rates), as.numeric),
                                fixed = .hp_r(post$fixed), matrix = extra$matrix, pi = extra$pi,
                                background = extra$background, python = post)
  class(out) <- c("hawkes_marked_mcmc", class(out))
  out
}

#' @export
print.hawkes_marked_mcmc <- function(x, digits = 4, ...) {
  a <- attr(x, "hphawkes")
  cat(sprintf("%s Hawkes posterior: %d chains x %d draws\n",
              if (identical(a$model, "etas")) "Space-time ETAS" else "Multitype", length(x), nrow(x[[1]])))
  print(signif(as.data.frame(a$summary), digits))
  invisible(x)
}

#' @export
summary.hawkes_marked_mcmc <- function(object, ...) as.data.frame(attr(object, "hphawkes")$summary)
