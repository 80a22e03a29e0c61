# A 10 x 10 km square: 400 uniform background events, a hotspot of background risk (80 more
# background events around (2.5, 2.5)) and a burst of contagion (80 triggered events around
# (7.5, 7.5)); pi, the probability of being triggered, constructed directly.
declustered_data <- function() {
  set.seed(4)
  bg <- cbind(runif(400, 0, 10), runif(400, 0, 10))
  hot <- cbind(rnorm(80, 2.5, 0.25), rnorm(80, 2.5, 0.25))
  burst <- cbind(rnorm(80, 7.5, 0.25), rnorm(80, 7.5, 0.25))
  x <- pmin(pmax(rbind(bg, hot, burst), 0), 10)
  colnames(x) <- c("x", "y")
  list(x = x, pi = c(rep(0.05, 480), rep(0.97, 80)))
}

test_that("scan_declustered keeps the background hotspot, drops the contagion cluster, equals Python", {
  skip_if_no_hphawkes()
  d <- declustered_data()
  res <- scan_declustered(d$x, d$pi, cell_size = 1, n_draws = 10, n_replicates = 49, seed = 1,
                          backend = "cpu")
  expect_s3_class(res, "hphawkes_declustered")
  expect_s3_class(res$ordinary, "hphawkes_scan")
  expect_identical(res$declustered$model, "declustered")
  cmp <- res$comparison
  loc <- res$locations
  cell_of <- function(ix, iy) loc$location_id[loc$cell_ix == ix & loc$cell_iy == iy]
  cluster_of <- function(id) which(vapply(res$ordinary$clusters$location_ids, function(v) id %in% v, logical(1)))
  expect_identical(cmp$verdict[cluster_of(cell_of(2, 2))], "background hotspot")
  expect_identical(cmp$verdict[cluster_of(cell_of(7, 7))], "contagion only")
  expect_identical(loc$p_in_cluster[loc$location_id == cell_of(7, 7)], 0)
  expect_identical(sum(loc$events), 560L)
  expect_identical(length(res$event_location), 560L)
  expect_equal(res$background_total, sum(1 - d$pi), tolerance = 1e-12)
  expect_identical(nrow(res$draws), 10L)
  py <- py_reference(sprintf(paste(
    "import numpy as np, hphawkes_py as hp",
    "x = np.loadtxt(r'%s', delimiter=','); pi = np.loadtxt(r'%s', delimiter=',')",
    "r = hp.scan.declustered(x, pi, cell_size=1.0, n_draws=10, n_replicates=49, seed=1, progress=False,",
    "                        backend='cpu')",
    "out = {'comparison': r.comparison, 'locations': r.locations, 'null': r.declustered.null_llr}",
    sep = "\n"), tmp_csv(d$x), tmp_csv(d$pi)))
  expect_identical(cmp, py$comparison)
  expect_identical(loc, py$locations)
  expect_identical(res$declustered$null_llr, py$null)
  # a draws x N matrix and a hawkes_probabilities-like frame are accepted as pi
  m <- rbind(d$pi, d$pi, d$pi)
  by_draws <- scan_declustered(d$x, m, cell_size = 1, n_replicates = 49, seed = 1, backend = "cpu")
  expect_identical(by_draws$pi_source, "posterior draws")
  expect_identical(nrow(by_draws$draws), 3L)
  expect_identical(as.data.frame(res), cmp)
  expect_s3_class(autoplot(res), "ggplot")
  expect_s3_class(autoplot(res, fill = "p_in_cluster"), "ggplot")
  expect_output(print(res), "Declustered Poisson spatial scan")
  grDevices::pdf(NULL); on.exit(grDevices::dev.off(), add = TRUE)
  expect_invisible(plot(res))
  expect_error(scan_declustered(d$x, d$pi + 1, cell_size = 1, n_replicates = 9), "pi must hold probabilities",
               class = "hphawkes_python_error")
  expect_error(scan_declustered(d$x, d$pi, n_replicates = 9), "exactly one of cell_size",
               class = "hphawkes_python_error")
  expect_error(scan_declustered(d$x, d$pi, cell_size = 1, n_draws = 1.5), "n_draws must be a single whole number")
})

test_that("hawkes_self_excitation_draws gives the draws hawkes_self_excitation summarises", {
  skip_if_no_hphawkes()
  set.seed(2)
  x <- cbind(x = runif(60), y = runif(60))
  t <- runif(60, 0, 100)
  fit <- hawkes_mcmc(x, t, n_iter = 60, burn_in = 20, chains = 2, seed = 11,
                     fixed = list(tau_x = 0.2, tau_t = 10), backend = "cpu")
  pd <- hawkes_self_excitation_draws(fit, n_draws = 9, seed = 5)
  expect_identical(dim(pd), c(9L, 60L))
  se <- hawkes_self_excitation(fit, x, t, n_draws = 9, seed = 5)
  expect_equal(colMeans(pd), se$mean, tolerance = 1e-10)
  res <- scan_declustered(x, pd, cell_size = 0.25, n_replicates = 9, seed = 1, backend = "cpu")
  expect_identical(nrow(res$draws), 9L)
  expect_error(hawkes_self_excitation_draws(list()), "fit must come from hawkes_mcmc")
})
