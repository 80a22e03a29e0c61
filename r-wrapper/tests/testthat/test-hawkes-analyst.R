# hawkes_residuals() and hawkes_forecast(): the Python tools through R, checked against plain R.

test_that("hawkes_residuals equals the time-rescaling formula and reports the KS test", {
  skip_if_no_hphawkes()
  set.seed(4)
  n <- 80L
  x <- cbind(x = runif(n), y = runif(n)); t <- runif(n, 0, 50)
  p <- list(mu0 = 0.4, tau_x = 0.3, tau_t = 5, theta = 0.5, omega = 0.5, h = 0.1)
  r <- hawkes_residuals(p, x, t)
  expect_s3_class(r, "hawkes_residuals")
  o <- order(t); ts <- t[o]; T0 <- min(t)
  d <- outer(ts, ts, "-")
  lam <- p$mu0 * rowSums(stats::pnorm(d / p$tau_t) - stats::pnorm(outer(rep(1, n), (T0 - ts) / p$tau_t))) +
    p$theta * rowSums(ifelse(d > 0, 1 - exp(-p$omega * pmax(d, 0)), 0))
  expect_equal(r$table$rescaled_time, lam, tolerance = 1e-10)
  expect_identical(r$table$event, o)
  u <- 1 - exp(-diff(c(0, lam)))
  expect_equal(r$ks_statistic, unname(suppressWarnings(stats::ks.test(u, "punif"))$statistic), tolerance = 1e-12)
  expect_output(print(r), "KS D")
  expect_error(hawkes_residuals(p, x, t, kernel = 3), "kernel must be")
})

test_that("hawkes_forecast equals the conditional intensity in plain R", {
  skip_if_no_hphawkes()
  set.seed(5)
  n <- 50L
  x <- cbind(x = runif(n), y = runif(n)); t <- sort(runif(n, 0, 20))
  p <- list(mu0 = 0.4, tau_x = 0.3, tau_t = 5, theta = 0.5, omega = 0.5, h = 0.1)
  grid <- as.matrix(expand.grid(x = c(0.2, 0.5, 0.8), y = c(0.3, 0.7)))
  u <- max(t) + 1
  f <- hawkes_forecast(p, x, t, u, grid, backend = "cpu", exact = TRUE)
  d2 <- outer(grid[, 1], x[, 1], "-")^2 + outer(grid[, 2], x[, 2], "-")^2
  phi2 <- function(s) exp(-d2 / (2 * s^2)) / (2 * pi * s^2)
  ref <- p$mu0 * (phi2(p$tau_x) %*% stats::dnorm(u - t, sd = p$tau_t)) +
    p$theta * p$omega * (phi2(p$h) %*% exp(-p$omega * (u - t)))
  expect_equal(f$mean, as.vector(ref), tolerance = 1e-10)
  expect_equal(nrow(f), 6L)
  expect_error(hawkes_forecast(p, x, t, min(t), grid, backend = "cpu"), "times must be at or after")
})

test_that("hawkes_forecast_score: the gain is the log-score difference per event, 0 without excitation", {
  skip_if_no_hphawkes()
  set.seed(6)
  n <- 120L
  x <- cbind(x = runif(n), y = runif(n)); t <- sort(runif(n, 0, 60))
  p <- list(mu0 = 0.5, tau_x = 0.3, tau_t = 5, theta = 0.4, omega = 0.5, h = 0.1)
  s <- hawkes_forecast_score(p, x, t, origin = 40, horizon = 10, backend = "cpu")
  expect_s3_class(s, "hawkes_forecast_score")
  expect_equal(s$n_events, sum(t > 40 & t <= 50))
  expect_equal(s$information_gain, (s$log_score - s$background_log_score) / s$n_events, tolerance = 1e-12)
  expect_equal(nrow(s$table), 3L)
  expect_equal(s$table$log_score[s$table$model == "hawkes"], s$log_score, tolerance = 1e-12)
  p0 <- modifyList(p, list(theta = 1e-13))  # theta must be > 0: the limit theta -> 0
  s0 <- hawkes_forecast_score(p0, x, t, origin = 40, horizon = 10, reference_mu0 = "same", backend = "cpu")
  expect_equal(s0$log_score, s0$background_log_score, tolerance = 1e-9)
  expect_output(print(s), "gain over background-only")
  expect_error(hawkes_forecast_score(p, x, t, origin = 40, horizon = -1, backend = "cpu"), "horizon")
})
