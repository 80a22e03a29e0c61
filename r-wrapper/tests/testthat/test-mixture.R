mvn_logdens <- function(X, w, mu, S) {
  k <- length(w)
  dens <- sapply(seq_len(k), function(j) {
    Sj <- S[j, , ]
    R <- chol(Sj)
    z <- backsolve(R, t(X) - mu[j, ], transpose = TRUE)
    exp(-0.5 * colSums(z^2) - sum(log(diag(R))) - ncol(X) / 2 * log(2 * pi))
  })
  log(drop(dens %*% w))
}

test_that("tdp_mixture (Bayesian EM) on faithful matches Python and its own density", {
  skip_if_no_hphawkes()
  f <- hphawkes_data("faithful")
  X <- as.matrix(f[, c("eruptions", "waiting")])
  m <- tdp_mixture(X, n_components = 6, method = "bem", n_iter = 40, seed = 1, backend = "cpu")
  expect_s3_class(m, "tdp_mixture")
  expect_identical(dim(m$means), c(6L, 2L))
  expect_identical(dim(m$covariances), c(6L, 2L, 2L))
  expect_equal(sum(m$weights), 1, tolerance = 1e-10)
  py <- py_reference(paste(
    "import hphawkes_py as hp",
    "X = hp.datasets.load_faithful()[['eruptions', 'waiting']].to_numpy(dtype=float)",
    "m = hp.mixture.TDPGaussianMixture(6, method='bem', n_iter=40, seed=1, progress=False, backend='cpu').fit(X)",
    "out = {'w': m.weights_, 'mu': m.means_, 'S': m.covariances_, 'lab': m.predict(X),",
    "       'ld': m.score_samples(X), 'pp': m.predict_proba(X)}", sep = "\n"))
  expect_identical(m$weights, py$w)
  expect_identical(unname(m$means), py$mu)
  expect_identical(m$covariances, py$S)
  expect_identical(predict(m), py$lab + 1L)
  expect_identical(predict(m, type = "density"), py$ld)
  pp <- predict(m, type = "prob")
  expect_identical(pp, py$pp)
  expect_equal(rowSums(pp), rep(1, nrow(X)), tolerance = 1e-10)
  # the covariance array orientation: mixture density from R's copy of the parameters
  expect_equal(predict(m, type = "density"), mvn_logdens(X, m$weights, m$means, m$covariances),
               tolerance = 1e-8)
  expect_s3_class(autoplot(m), "ggplot")
  expect_s3_class(summary(m), "data.frame")
  grDevices::pdf(NULL); on.exit(grDevices::dev.off(), add = TRUE)
  expect_invisible(plot(m))
  expect_output(print(m))
})

test_that("tdp_mixture (blocked Gibbs) gives Python's draws", {
  skip_if_no_hphawkes()
  f <- hphawkes_data("faithful")
  X <- as.matrix(f[, c("eruptions", "waiting")])
  m <- tdp_mixture(X, n_components = 8, method = "gibbs", n_iter = 30, burn_in = 10, seed = 2,
                   keep_draws = TRUE, backend = "cpu")
  py <- py_reference(paste(
    "import hphawkes_py as hp",
    "X = hp.datasets.load_faithful()[['eruptions', 'waiting']].to_numpy(dtype=float)",
    "m = hp.mixture.TDPGaussianMixture(8, method='gibbs', n_iter=30, burn_in=10, seed=2, progress=False, backend='cpu').fit(X)",
    "out = {'w': m.weights_, 'alpha': m.draws_['alpha'], 'dw': m.draws_['weights']}", sep = "\n"))
  expect_identical(m$weights, py$w)
  expect_identical(m$draws$alpha, py$alpha)
  expect_identical(m$draws$weights, py$dw)
  expect_error(tdp_mixture(X, n_components = 0, backend = "cpu"), "n_components",
               class = "hphawkes_python_error")
  expect_error(tdp_mixture(X, n_components = 2.5), "n_components must be a single whole number")
})

test_that("tdp_mixture reports the clusters of modal merging and Gibbs diagnostics", {
  skip_if_no_hphawkes()
  f <- hphawkes_data("faithful")
  X <- as.matrix(f[, c("eruptions", "waiting")])
  m <- tdp_mixture(X, n_components = 8, method = "gibbs", n_iter = 60, burn_in = 40, seed = 1,
                   chains = 2L, backend = "cpu")
  expect_identical(m$n_clusters, 2L)
  expect_identical(sort(unique(m$cluster_labels)), 1:2)
  expect_identical(predict(m, type = "cluster"), m$cluster_labels)
  expect_equal(sum(m$cluster_weights), 1, tolerance = 1e-10)
  expect_identical(colnames(m$cluster_means), c("eruptions", "waiting"))
  expect_true(all(c("r_hat", "ess_bulk") %in% names(m$diagnostics)))
  expect_error(tdp_mixture(X, chains = 0L, backend = "cpu"), "chains", class = "hphawkes_python_error")
})
