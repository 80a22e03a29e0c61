# Multitype and ETAS Hawkes models from R: the same numbers as the Python calls they wrap, and a
# plain-R transcription of the multitype log-likelihood.

types_data <- function() {
  hawkes_types_simulate(mu = c(0.3, 0.2), theta = matrix(c(0.3, 0.1, 0.0, 0.4), 2, byrow = TRUE),
                        omega = 0.5, h = 0.05, region = 1, duration = 150, seed = 3)
}
p_types <- list(mu0 = c(30, 20), theta = matrix(c(0.3, 0.1, 0.05, 0.4), 2, byrow = TRUE), omega = 0.5,
                h = 0.05, tau_x = 0.2, tau_t = 10)

# The model of hphawkes_py.hawkes.multitype: lambda_n = mu0[k_n] S_n + omega sum_{m: t_m < t_n} theta[k_m, k_n]
# exp(-omega dt) phi_2(r; h), S_n the background smoother over the events of n's type;
# Lambda = sum_m mu0[k_m] B_m + sum_m (sum_l theta[k_m, l]) (1 - exp(-omega (T1 - t_m))), B_m the smoother's
# mass on the data's time range.
naive_types <- function(x, t, k, p) {
  d2 <- as.matrix(stats::dist(x))^2
  phi2 <- function(s) exp(-d2 / (2 * s^2)) / (2 * pi * s^2)
  dt <- outer(t, t, "-")
  same <- outer(k, k, "==")
  S <- rowSums(same * phi2(p$tau_x) * stats::dnorm(dt, sd = p$tau_t))
  th <- p$theta[k + 1L, k + 1L]  # [m, n] -> theta[k_m, k_n]
  G <- rowSums(t(th) * ifelse(dt > 0, p$omega * exp(-p$omega * dt), 0) * phi2(p$h))
  T0 <- min(t); T1 <- max(t)
  B <- stats::pnorm((T1 - t) / p$tau_t) - stats::pnorm((T0 - t) / p$tau_t)
  trI <- sum(rowSums(p$theta)[k + 1L] * (1 - exp(-p$omega * (T1 - t))))
  sum(log(p$mu0[k + 1L] * S + G)) - (sum(p$mu0[k + 1L] * B) + trI)
}

test_that("hawkes_types_loglik equals Python's and the plain-R formula", {
  skip_if_no_hphawkes()
  d <- types_data()
  expect_true(all(d$types %in% c(0L, 1L)) && length(unique(d$types)) == 2L)
  ll <- hawkes_types_loglik(d$x, d$t, d$types, p_types, backend = "cpu")
  hk <- reticulate::import("hphawkes_py.hawkes")
  py <- as.numeric(hk$log_likelihood(hphawkes:::.hawkes_x(d$x), hphawkes:::.np_double(d$t, "t"),
                                      hphawkes:::.hawkes_types_params(p_types),
                                      types = hphawkes:::.np_count(d$types, "types"), backend = "cpu"))
  expect_equal(ll, py, tolerance = 1e-12)
  expect_equal(ll, naive_types(d$x, d$t, d$types, p_types), tolerance = 1e-8)
  # a factor: its levels in order are the types
  f <- factor(c("burglary", "robbery")[d$types + 1L], levels = c("burglary", "robbery"))
  expect_identical(hawkes_types_loglik(d$x, d$t, f, p_types, backend = "cpu"), ll)
})

test_that("hawkes_types_mcmc gives Python's draws for the same seed", {
  skip_if_no_hphawkes()
  d <- types_data()
  fit <- hawkes_types_mcmc(d$x, d$t, d$types, tau_x = 0.2, tau_t = 10, n_iter = 40, burn_in = 10,
                           chains = 2, seed = 5, backend = "cpu")
  expect_s3_class(fit, "hawkes_marked_mcmc")
  hk <- reticulate::import("hphawkes_py.hawkes")
  post <- hk$mcmc(hphawkes:::.hawkes_x(d$x), hphawkes:::.np_double(d$t, "t"),
                  types = hphawkes:::.np_count(d$types, "types"), fixed = list(tau_x = 0.2, tau_t = 10),
                  n_iter = 40L, burn_in = 10L, chains = 2L, seed = 5L, progress = FALSE, backend = "cpu")
  draws <- hphawkes:::.hp_r(post$draws)
  expect_equal(as.numeric(fit[[2]][, "theta[0,1]"]), as.numeric(draws[["theta[0,1]"]][2, ]), tolerance = 0)
  expect_equal(as.numeric(fit[[1]][, "h"]), as.numeric(draws[["h"]][1, ]), tolerance = 0)
  m <- attr(fit, "hphawkes")$matrix
  expect_equal(dim(m), c(2L, 2L))
  expect_equal(m[1, 2], mean(unlist(lapply(fit, function(ch) ch[, "theta[0,1]"]))), tolerance = 1e-12)
  expect_equal(dim(attr(fit, "hphawkes")$pi), c(length(d$t), 3L))
  expect_output(print(fit), "Multitype Hawkes posterior: 2 chains x 30 draws")
})

test_that("hawkes_etas_* equal Python's ETAS calls", {
  skip_if_no_hphawkes()
  sim <- hawkes_etas_simulate(mu = 0.5, A = 0.3, alpha = 1, c = 0.01, p = 1.2, d = 0.02, gamma = 0.5,
                              b = 1, m0 = 3, region = 10, duration = 100, seed = 1)
  expect_true(all(sim$m >= 3) && length(sim$m) == length(sim$t) && nrow(sim$x) == length(sim$t))
  par <- list(mu = 0.5, A = 0.3, alpha = 1, c = 0.01, p = 1.2, d = 0.02, gamma = 0.5, b = 1)
  ll <- hawkes_etas_loglik(sim$x, sim$t, sim$m, par, m0 = 3, region = 10, backend = "cpu")
  etas <- reticulate::import("hphawkes_py.hawkes.etas")
  X <- hphawkes:::.hawkes_x(sim$x)
  tt <- hphawkes:::.np_double(sim$t, "t")
  mm <- hphawkes:::.np_double(sim$m, "m")
  expect_equal(ll, as.numeric(etas$log_likelihood(X, tt, mm, par, m0 = 3, region = 10)), tolerance = 1e-12)
  fit <- hawkes_etas_mcmc(sim$x, sim$t, sim$m, m0 = 3, region = 10, n_iter = 30, burn_in = 10, chains = 2,
                          seed = 2, backend = "cpu")
  post <- etas$mcmc(X, tt, mm, m0 = 3, region = 10, n_iter = 30L, burn_in = 10L, chains = 2L, seed = 2L)
  draws <- hphawkes:::.hp_r(post$draws)
  expect_equal(as.numeric(fit[[1]][, "b"]), as.numeric(draws[["b"]][1, ]), tolerance = 0)
  expect_equal(rownames(summary(fit)), names(draws))
})

test_that("bad inputs to the multitype and ETAS wrappers are refused with a message", {
  skip_if_no_hphawkes()
  d <- types_data()
  expect_error(hawkes_types_loglik(d$x, d$t, d$types + 0.5, p_types), "types must be a factor or integers")
  expect_error(hawkes_types_loglik(d$x, d$t, d$types, p_types[-1]), "missing: mu0")
  bad <- p_types; bad$theta <- c(0.3, 0.1, 0.05, 0.4)
  expect_error(hawkes_types_loglik(d$x, d$t, d$types, bad), "K x K matrix")
  expect_error(hawkes_types_simulate(mu = c(1, 1), theta = 0.5, omega = 1, h = 1, region = 1, duration = 1),
               "K x K matrix")
  expect_error(hawkes_etas_loglik(d$x, d$t, rep(3, length(d$t)), list(1, 2)), "named list")
})
