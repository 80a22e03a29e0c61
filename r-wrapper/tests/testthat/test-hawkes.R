# Small data: 60 events in the unit square over 100 hours, in shuffled (non-time) order.
hawkes_small <- function() {
  set.seed(2)
  n <- 60L
  list(x = cbind(x = runif(n), y = runif(n)), t = runif(n, 0, 100))
}
p_small <- list(mu0 = 0.3, tau_x = 0.2, tau_t = 10, theta = 0.5, omega = 0.2, h = 0.05)

# Direct transcription of the model in API.md (O(N^2), plain R).
naive_hawkes <- function(x, t, p) {
  n <- length(t); D <- ncol(x)
  d2 <- as.matrix(stats::dist(x))^2
  phiD <- function(s) (2 * pi * s^2)^(-D / 2) * exp(-d2 / (2 * s^2))
  dt <- outer(t, t, "-")  # t_n - t_m
  bg <- p$mu0 * rowSums(phiD(p$tau_x) * stats::dnorm(dt, sd = p$tau_t))
  trig <- ifelse(dt > 0, exp(-p$omega * dt), 0) * phiD(p$h)
  se <- p$theta * p$omega * rowSums(trig)
  T0 <- min(t); T1 <- max(t)
  Lambda <- sum(p$mu0 * (stats::pnorm((T1 - t) / p$tau_t) - stats::pnorm((T0 - t) / p$tau_t)) +
                  p$theta * (1 - exp(-p$omega * (T1 - t))))
  list(loglik = sum(log(bg + se)) - Lambda, pi = unname(se / (bg + se)))
}

test_that("hawkes_loglik and hawkes_probabilities agree with the model formula and with Python", {
  skip_if_no_hphawkes()
  d <- hawkes_small()
  p <- do.call(hawkes_params, p_small)
  ll <- hawkes_loglik(d$x, d$t, p, backend = "cpu")
  pr <- hawkes_probabilities(d$x, d$t, p, backend = "cpu")
  ref <- naive_hawkes(d$x, d$t, p_small)
  expect_equal(ll, ref$loglik, tolerance = 1e-10)
  expect_s3_class(pr, "hawkes_probabilities")
  expect_equal(pr$pi, ref$pi, tolerance = 1e-10)
  expect_identical(pr$x, d$x[, 1])
  expect_identical(pr$t, d$t)
  # identical numbers from the same call made directly in Python (data read from CSV)
  py <- py_reference(sprintf(paste(
    "import numpy as np, hphawkes_py as hp",
    "x = np.loadtxt(r'%s', delimiter=','); t = np.loadtxt(r'%s', delimiter=',')",
    "p = hp.hawkes.HawkesParams(mu0=0.3, tau_x=0.2, tau_t=10.0, theta=0.5, omega=0.2, h=0.05)",
    "out = {'ll': hp.hawkes.log_likelihood(x, t, p, backend='cpu'),",
    "       'pi': hp.hawkes.self_excitation_probabilities(x, t, p, backend='cpu')}", sep = "\n"),
    tmp_csv(d$x), tmp_csv(d$t)))
  expect_identical(ll, py$ll)
  expect_identical(pr$pi, py$pi)
  # a named numeric vector works as params too; 1-D locations are accepted
  expect_identical(hawkes_loglik(d$x, d$t, unlist(p_small), backend = "cpu"), ll)
  ll1 <- hawkes_loglik(d$x[, 1], d$t, p, backend = "cpu")
  expect_equal(ll1, naive_hawkes(d$x[, 1, drop = FALSE], d$t, p_small)$loglik, tolerance = 1e-10)
  expect_s3_class(autoplot(pr), "ggplot")
  expect_s3_class(autoplot(pr, type = "time"), "ggplot")
})

test_that("Hawkes input errors carry the Python message", {
  skip_if_no_hphawkes()
  d <- hawkes_small()
  t_bad <- d$t; t_bad[3] <- NA
  expect_error(hawkes_loglik(d$x, t_bad, p_small, backend = "cpu"), "finite",
               class = "hphawkes_python_error")
  expect_error(hawkes_loglik(d$x, d$t[-1], p_small, backend = "cpu"), class = "hphawkes_python_error")
  expect_error(hawkes_loglik(d$x, d$t, p_small[-1]), "missing: mu0", class = "hphawkes_input_error")
  expect_error(hawkes_mcmc(d$x, d$t, n_iter = 10.5), "n_iter must be a single whole number")
})

test_that("hawkes_mcmc returns a coda mcmc.list identical to Python's draws", {
  skip_if_no_hphawkes()
  d <- hawkes_small()
  fit <- hawkes_mcmc(d$x, d$t, n_iter = 120, burn_in = 20, chains = 2, seed = 11,
                     fixed = list(tau_x = 0.2, tau_t = 10), backend = "cpu")
  expect_s3_class(fit, "hawkes_mcmc")
  expect_true(coda::is.mcmc.list(fit))
  expect_identical(coda::nchain(fit), 2L)
  expect_identical(coda::niter(fit), 100L)
  expect_identical(coda::varnames(fit), c("h", "omega", "theta", "mu0"))
  hpd <- coda::HPDinterval(fit)
  expect_length(hpd, 2L)
  expect_true(all(hpd[[1]][, "lower"] <= hpd[[1]][, "upper"]))
  expect_true(all(is.finite(coda::effectiveSize(fit))))
  gd <- coda::gelman.diag(fit, autoburnin = FALSE, multivariate = FALSE)
  expect_identical(rownames(gd$psrf), c("h", "omega", "theta", "mu0"))
  s <- summary(fit)
  expect_true(all(c("mean", "sd", "ess_bulk", "r_hat") %in% names(s)))
  expect_identical(rownames(s)[1:4], c("h", "omega", "theta", "mu0"))
  expect_equal(s["theta", "mean"], mean(unlist(lapply(fit, function(ch) ch[, "theta"]))),
               tolerance = 1e-12)
  expect_identical(attr(fit, "hphawkes")$fixed, c(tau_x = 0.2, tau_t = 10))
  py <- py_reference(sprintf(paste(
    "import numpy as np, hphawkes_py as hp",
    "x = np.loadtxt(r'%s', delimiter=','); t = np.loadtxt(r'%s', delimiter=',')",
    "post = hp.hawkes.mcmc(x, t, n_iter=120, burn_in=20, chains=2, seed=11, progress=False,",
    "                      fixed={'tau_x': 0.2, 'tau_t': 10.0}, backend='cpu')",
    "se = hp.hawkes.self_excitation(post, n_draws=30, seed=5, progress=False)",
    "out = {'draws': post.draws, 'se_mean': se['mean'].to_numpy(), 'se_hi': se['q97.5'].to_numpy()}",
    sep = "\n"), tmp_csv(d$x), tmp_csv(d$t)))
  for (nm in coda::varnames(fit))
    for (c in 1:2) expect_identical(as.numeric(fit[[c]][, nm]), py$draws[[nm]][c, ])
  se <- hawkes_self_excitation(fit, d$x, d$t, n_draws = 30, seed = 5)
  expect_identical(se$mean, py$se_mean)
  expect_identical(se$q97.5, py$se_hi)
  expect_true(all(se$mean >= 0 & se$mean <= 1))
  expect_s3_class(autoplot(fit), "ggplot")
  expect_s3_class(autoplot(fit, type = "trace"), "ggplot")
  expect_s3_class(autoplot(se), "ggplot")
  expect_output(print(fit), "Hawkes posterior")
  grDevices::pdf(NULL); on.exit(grDevices::dev.off(), add = TRUE)
  expect_invisible(plot(fit))
  expect_invisible(plot(se, type = "time"))
})

test_that("summary() and print() of a Hawkes fit show the fixed parameters as fixed, not as sampled", {
  skip_if_no_hphawkes()
  d <- hawkes_small()
  fit <- hawkes_mcmc(d$x, d$t, n_iter = 60, burn_in = 10, chains = 2, seed = 11,
                     fixed = list(tau_x = 0.2, tau_t = 10), backend = "cpu")
  s <- summary(fit)
  expect_s3_class(s, "summary.hawkes_mcmc")
  expect_s3_class(s, "data.frame")
  # the table is the posterior of the sampled parameters only: no sd-0, R-hat-NaN rows
  expect_identical(rownames(s), c("h", "omega", "theta", "mu0"))
  expect_true(all(s$sd > 0))
  expect_false(anyNA(s$r_hat))
  expect_identical(attr(s, "fixed"), c(tau_x = 0.2, tau_t = 10))
  out <- capture.output(print(s))
  expect_true("Fixed (not sampled): tau_x = 0.2, tau_t = 10 " %in% out)
  expect_false(any(grepl("^tau_", out)))
  out <- capture.output(print(fit))
  expect_true("Fixed (not sampled): tau_x = 0.2, tau_t = 10 " %in% out)
  expect_false(any(grepl("^tau_", out)))
  # sampling tau_t as well moves it from the fixed values into the table
  fit2 <- hawkes_mcmc(d$x, d$t, n_iter = 30, burn_in = 10, chains = 2, seed = 11,
                      sample = c("h", "omega", "theta", "mu0", "tau_t"), fixed = list(tau_x = 0.2),
                      backend = "cpu")
  s2 <- summary(fit2)
  expect_identical(rownames(s2), c("h", "omega", "theta", "mu0", "tau_t"))
  expect_identical(attr(s2, "fixed"), c(tau_x = 0.2))
})

test_that("hawkes_mcmc(init = \"mode\") starts at Python's posterior_mode", {
  skip_if_no_hphawkes()
  d <- hawkes_small()
  fit <- hawkes_mcmc(d$x, d$t, n_iter = 5, burn_in = 1, chains = 1, seed = 3, init = "mode",
                     fixed = list(tau_x = 0.2, tau_t = 10), backend = "cpu")
  py <- py_reference(sprintf(paste(
    "import numpy as np, hphawkes_py as hp",
    "x = np.loadtxt(r'%s', delimiter=','); t = np.loadtxt(r'%s', delimiter=',')",
    "m = hp.hawkes.posterior_mode(x, t, fixed={'tau_x': 0.2, 'tau_t': 10.0}, backend='cpu')",
    "post = hp.hawkes.mcmc(x, t, n_iter=5, burn_in=1, chains=1, seed=3, progress=False, init='mode',",
    "                      fixed={'tau_x': 0.2, 'tau_t': 10.0}, backend='cpu')",
    "out = {'h': np.array([m['h']]), 'draws_h': post.draws['h']}",
    sep = "\n"), tmp_csv(d$x), tmp_csv(d$t)))
  expect_identical(as.numeric(fit[[1]][, "h"]), py$draws_h[1, ])
  expect_gt(py$h, 0)
})

test_that("to_coda() on the Python side builds the same coda object (rpy2)", {
  skip_if_no_hphawkes()
  has_rpy2 <- reticulate::py_module_available("rpy2")
  skip_if_not(has_rpy2, "rpy2 not installed in the Python environment")
  # rpy2 inside an R session started by reticulate is not supported; tested in tests/test_interop.py
  succeed()
})

test_that("kernel = \"exp2\" (sum of two exponentials) through hawkes_loglik, hawkes_simulate, hawkes_mcmc", {
  skip_if_no_hphawkes()
  d <- hawkes_small()
  p2 <- c(p_small, list(omega2 = 0.02, w = 0.7))
  # the model with g(dt) = w omega e^(-omega dt) + (1 - w) omega2 e^(-omega2 dt), in plain R
  n <- length(d$t)
  d2 <- as.matrix(stats::dist(d$x))^2
  phi2 <- function(s) (2 * pi * s^2)^(-1) * exp(-d2 / (2 * s^2))
  dt <- outer(d$t, d$t, "-")
  g <- ifelse(dt > 0, p2$w * p2$omega * exp(-p2$omega * dt) + (1 - p2$w) * p2$omega2 * exp(-p2$omega2 * dt), 0)
  lam <- p2$mu0 * rowSums(phi2(p2$tau_x) * stats::dnorm(dt, sd = p2$tau_t)) + p2$theta * rowSums(g * phi2(p2$h))
  T0 <- min(d$t); T1 <- max(d$t)
  cdf <- p2$w * (1 - exp(-p2$omega * (T1 - d$t))) + (1 - p2$w) * (1 - exp(-p2$omega2 * (T1 - d$t)))
  ref <- sum(log(lam)) - sum(p2$mu0 * (stats::pnorm((T1 - d$t) / p2$tau_t) - stats::pnorm((T0 - d$t) / p2$tau_t)) +
                               p2$theta * cdf)
  expect_equal(hawkes_loglik(d$x, d$t, do.call(hawkes_params, p2), backend = "cpu", kernel = "exp2"), ref,
               tolerance = 1e-10)
  expect_equal(hawkes_probabilities(d$x, d$t, p2, backend = "cpu", kernel = "exp2")$pi,
               unname(p2$theta * rowSums(g * phi2(p2$h)) / lam), tolerance = 1e-10)
  expect_error(hawkes_loglik(d$x, d$t, utils::modifyList(p2, list(w = 1.5)), backend = "cpu", kernel = "exp2"),
               "w must be in \\[0, 1\\]", class = "hphawkes_python_error")
  expect_error(hawkes_loglik(d$x, d$t, p_small, backend = "cpu", kernel = "exp2"), "omega2",
               class = "hphawkes_python_error")
  s <- hawkes_simulate(mu = 0.5, theta = 0.5, omega = 3, h = 0.1, region = 2, duration = 20, seed = 1,
                       kernel = "exp2", omega2 = 0.2, w = 0.6)
  py <- py_reference(paste(
    "import hphawkes_py as hp",
    "x, t = hp.hawkes.simulate(mu=0.5, theta=0.5, omega=3.0, h=0.1, region=2.0, duration=20.0, seed=1,",
    "                          kernel='exp2', omega2=0.2, w=0.6)",
    "out = {'t': t}", sep = "\n"))
  expect_identical(s$t, py$t)
  fit <- hawkes_mcmc(s$x, s$t, n_iter = 6L, burn_in = 2L, chains = 1L, fixed = list(tau_x = 1, tau_t = 10),
                     seed = 1L, backend = "cpu", kernel = "exp2")
  expect_true(all(c("omega2", "w") %in% coda::varnames(fit)))
  expect_true(all(as.matrix(fit)[, "w"] >= 0 & as.matrix(fit)[, "w"] <= 1))
})

test_that("spatial_kernel = list(\"power-law\", q) through hawkes_loglik, hawkes_probabilities, hawkes_simulate, hawkes_mcmc", {
  skip_if_no_hphawkes()
  d <- hawkes_small()
  q <- 1.5
  # the model with the 2-D spatial power law (q - 1) / (pi h^2) (1 + r^2/h^2)^(-q), in plain R
  d2 <- as.matrix(stats::dist(d$x))^2
  dt <- outer(d$t, d$t, "-")
  f <- (q - 1) / (pi * p_small$h^2) * (1 + d2 / p_small$h^2)^(-q)
  se <- p_small$theta * p_small$omega * rowSums(ifelse(dt > 0, exp(-p_small$omega * dt), 0) * f)
  bg <- p_small$mu0 * rowSums((2 * pi * p_small$tau_x^2)^(-1) * exp(-d2 / (2 * p_small$tau_x^2)) *
                                stats::dnorm(dt, sd = p_small$tau_t))
  T0 <- min(d$t); T1 <- max(d$t)
  ref <- sum(log(bg + se)) - sum(p_small$mu0 * (stats::pnorm((T1 - d$t) / p_small$tau_t) -
                                                  stats::pnorm((T0 - d$t) / p_small$tau_t)) +
                                   p_small$theta * (1 - exp(-p_small$omega * (T1 - d$t))))
  sk <- list("power-law", q)
  expect_equal(hawkes_loglik(d$x, d$t, p_small, backend = "cpu", spatial_kernel = sk), ref, tolerance = 1e-10)
  expect_equal(hawkes_probabilities(d$x, d$t, p_small, backend = "cpu", spatial_kernel = sk)$pi,
               unname(se / (bg + se)), tolerance = 1e-10)
  # the default is the Gaussian, unchanged
  expect_identical(hawkes_loglik(d$x, d$t, p_small, backend = "cpu", spatial_kernel = "gaussian"),
                   hawkes_loglik(d$x, d$t, p_small, backend = "cpu"))
  expect_error(hawkes_loglik(d$x, d$t, p_small, backend = "cpu", spatial_kernel = list("power-law", 0.9)),
               "spatial_kernel exponent q must be > D/2", class = "hphawkes_python_error")
  expect_error(hawkes_loglik(d$x, d$t, p_small, backend = "cpu", spatial_kernel = 2), "spatial_kernel must be")
  s <- hawkes_simulate(mu = 0.5, theta = 0.5, omega = 3, h = 0.1, region = 2, duration = 20, seed = 1,
                       spatial_kernel = sk)
  py <- py_reference(paste(
    "import hphawkes_py as hp",
    "x, t = hp.hawkes.simulate(mu=0.5, theta=0.5, omega=3.0, h=0.1, region=2.0, duration=20.0, seed=1,",
    "                          spatial_kernel=('power-law', 1.5))",
    "out = {'x': x, 't': t}", sep = "\n"))
  expect_identical(s$t, py$t)
  expect_identical(unname(s$x), unname(py$x))
  fit <- hawkes_mcmc(s$x, s$t, n_iter = 6L, burn_in = 2L, chains = 1L, fixed = list(tau_x = 1, tau_t = 10),
                     seed = 1L, backend = "cpu", spatial_kernel = sk)
  expect_identical(reticulate::py_to_r(attr(fit, "hphawkes")$python$spatial_kernel), list("power-law", 1.5))
})

test_that("a kde_fit() surface as the Hawkes background: the R call equals the Python one", {
  skip_if_no_hphawkes()
  set.seed(11)
  n <- 150L
  x <- cbind(x = runif(n, 0, 10), y = runif(n, 0, 5)); t <- sort(runif(n, 0, 100))
  w <- kde_window("rectangle", xmin = 0, xmax = 10, ymin = 0, ymax = 5, cell_size = 0.1)
  kf <- kde_fit(x, w, method = "fixed", bandwidth = 1.5, backend = "cpu")
  p <- list(mu0 = 0.6, tau_x = 1, tau_t = 10, theta = 0.4, omega = 0.5, h = 0.3)
  ll <- hawkes_loglik(x, t, p, background = kf, backend = "cpu")
  hk <- reticulate::import("hphawkes_py.hawkes")
  ref <- as.numeric(hk$log_likelihood(hphawkes:::.hawkes_x(x), hphawkes:::.np_double(t, "t"),
                                       hphawkes:::.py_hawkes_params(p), background = kf$python, backend = "cpu"))
  expect_equal(ll, ref, tolerance = 1e-12)
  expect_false(isTRUE(all.equal(ll, hawkes_loglik(x, t, p, backend = "cpu"))))  # not the smoother's
  pi <- hawkes_probabilities(x, t, p, background = kf, backend = "cpu")
  expect_true(all(pi$pi >= 0 & pi$pi <= 1))
  expect_error(hawkes_loglik(x, t, p, background = 3), "background must be")
})
