# A small long-format SCCS data set built in R: 40 persons x 4 intervals, two covariates.
sccs_small <- function() {
  set.seed(4)
  n_p <- 40L; k <- 4L
  outcomes <- data.frame(stratum_id = rep(seq_len(n_p), each = k), row_id = seq_len(n_p * k),
                         time = round(runif(n_p * k, 5, 60)))
  x1 <- rbinom(n_p * k, 1, 0.4); x2 <- rbinom(n_p * k, 1, 0.3)
  outcomes$y <- rpois(n_p * k, outcomes$time / 30 * exp(0.7 * x1 - 0.4 * x2))
  covariates <- rbind(data.frame(row_id = outcomes$row_id[x1 == 1], covariate_id = 1L),
                      data.frame(row_id = outcomes$row_id[x2 == 1], covariate_id = 2L))
  list(outcomes = outcomes, covariates = covariates, x1 = x1, x2 = x2)
}

test_that("sccs_fit without a prior equals the conditional Poisson MLE (glm with stratum effects)", {
  skip_if_no_hphawkes()
  d <- sccs_small()
  dat <- sccs_data(d$outcomes, d$covariates)
  expect_s3_class(dat, "sccs_data")
  fit <- sccs_fit(dat, prior = "none", tolerance = 1e-10, backend = "cpu")
  g <- stats::glm(y ~ factor(stratum_id) + x1 + x2 + offset(log(time)), family = stats::poisson(),
                  data = cbind(d$outcomes, x1 = d$x1, x2 = d$x2),
                  control = stats::glm.control(epsilon = 1e-12, maxit = 100))
  expect_equal(unname(coef(fit)[c("1", "2")]), unname(stats::coef(g)[c("x1", "x2")]), tolerance = 1e-6)
  expect_true(fit$converged)
})

test_that("sccs_fit, sccs_cv and sccs_bootstrap give Python's numbers", {
  skip_if_no_hphawkes()
  sim <- sccs_simulate(n_cases = 300, n_drugs = 8, seed = 7)
  expect_s3_class(sim$data, "sccs_data")
  fit <- sccs_fit(sim$data, prior = "laplace", variance = 0.5, backend = "cpu")
  cv <- sccs_cv(sim$data, prior = "laplace", folds = 3, grid = c(0.01, 0.1, 1), seed = 2, backend = "cpu")
  bs <- sccs_bootstrap(sim$data, prior = "laplace", variance = 0.5, replicates = 12, seed = 3,
                       backend = "cpu")
  py <- py_reference(paste(
    "import hphawkes_py as hp",
    "data, truth = hp.sccs.simulate(n_cases=300, n_drugs=8, seed=7)",
    "f = hp.sccs.fit(data, prior='laplace', variance=0.5, backend='cpu')",
    "cv = hp.sccs.cross_validate(data, prior='laplace', folds=3, grid=[0.01, 0.1, 1.0], seed=2, backend='cpu')",
    "bs = hp.sccs.bootstrap(data, prior='laplace', variance=0.5, replicates=12, seed=3, backend='cpu')",
    "out = {'coef': f.coefficients, 'll': f.log_likelihood, 'truth': truth, 'cv_var': cv.variance,",
    "       'cv_scores': cv.scores, 'bs_samples': bs.samples, 'bs_summary': bs.summary()}",
    sep = "\n"))
  expect_identical(coef(fit), py$coef)
  expect_identical(fit$log_likelihood, py$ll)
  expect_identical(sim$true_coefficients, py$truth)
  expect_identical(cv$variance, py$cv_var)
  expect_identical(cv$scores, py$cv_scores)
  expect_identical(cv$grid, c(0.01, 0.1, 1))
  expect_s3_class(cv$fit, "hphawkes_sccs_fit")
  expect_identical(bs$samples, py$bs_samples)
  expect_identical(bs$summary, py$bs_summary)
  expect_identical(dim(bs$samples), c(12L, 8L))
  expect_true(all(bs$summary$lower <= bs$summary$upper))
  expect_s3_class(autoplot(cv), "ggplot")
  expect_s3_class(autoplot(bs), "ggplot")
  expect_s3_class(autoplot(fit), "ggplot")
  grDevices::pdf(NULL); on.exit(grDevices::dev.off(), add = TRUE)
  expect_invisible(plot(cv)); expect_invisible(plot(bs))
  expect_output(print(fit), "Bayesian SCCS"); expect_output(print(bs), "bootstrap"); expect_output(print(cv), "cross-validation")
  expect_error(sccs_fit(sim$data, prior = "cauchy"), "prior", class = "hphawkes_python_error")
  expect_error(sccs_bootstrap(sim$data, replicates = 2.5), "replicates must be a single whole number")
})

test_that("profile and Wald intervals and the results table come from Python, and Wald equals glm's", {
  skip_if_no_hphawkes()
  d <- sccs_small()
  fit <- sccs_fit(sccs_data(d$outcomes, d$covariates), prior = "none", tolerance = 1e-12, backend = "cpu")
  g <- stats::glm(y ~ factor(stratum_id) + x1 + x2 + offset(log(time)), family = stats::poisson(),
                  data = cbind(d$outcomes, x1 = d$x1, x2 = d$x2),
                  control = stats::glm.control(epsilon = 1e-14, maxit = 100))
  w <- confint(fit, method = "wald")
  ref <- stats::confint.default(g)[c("x1", "x2"), ]
  expect_equal(w$lower, unname(ref[, 1]), tolerance = 1e-6)
  expect_equal(w$upper, unname(ref[, 2]), tolerance = 1e-6)
  p <- confint(fit, parm = 1L, method = "profile")
  expect_true(p$lower < coef(fit)[["1"]] && coef(fit)[["1"]] < p$upper)
  expect_equal(unname(sqrt(diag(vcov(fit)))), unname(sqrt(diag(stats::vcov(g))[c("x1", "x2")])), tolerance = 1e-5)
  tab <- sccs_results(fit)
  expect_equal(tab$irr, unname(exp(coef(fit))), tolerance = 1e-12)
})
