bernoulli_llr <- function(c, n, C, N) {
  xlogy <- function(a, b) ifelse(a > 0, a * log(a / b), 0)
  xlogy(c, n) + xlogy(n - c, n) + xlogy(C - c, N - n) + xlogy((N - n) - (C - c), N - n) -
    (xlogy(C, N) + xlogy(N - C, N))
}

test_that("scan_bernoulli on the grave data matches Python and the Bernoulli LLR", {
  skip_if_no_hphawkes()
  g <- hphawkes_data("grave")
  expect_identical(nrow(g), 143L)
  res <- scan_bernoulli(g[, c("x", "y")], g$case, 1 - g$case, n_replicates = 99, seed = 1,
                        backend = "cpu")
  expect_s3_class(res, "hphawkes_scan")
  cl <- res$clusters
  expect_true(is.list(cl$location_ids))
  py <- py_reference(paste(
    "import hphawkes_py as hp",
    "g = hp.datasets.load_grave()",
    "r = hp.scan.bernoulli(g[['x', 'y']].to_numpy(), g['case'].to_numpy(), 1 - g['case'].to_numpy(),",
    "                      n_replicates=99, seed=1, backend='cpu', progress=False)",
    "out = {'clusters': r.clusters, 'null': r.null_llr}", sep = "\n"))
  expect_identical(cl, py$clusters)
  expect_identical(res$null_llr, py$null)
  # the reported LLR and counts follow from the window's locations (ids are 0-based rows)
  C <- sum(g$case); N <- nrow(g)
  for (k in seq_len(min(3L, nrow(cl)))) {
    ids <- cl$location_ids[[k]] + 1L
    expect_identical(as.numeric(cl$cases[k]), as.numeric(sum(g$case[ids])))
    expect_equal(cl$log_likelihood_ratio[k], bernoulli_llr(sum(g$case[ids]), length(ids), C, N),
                 tolerance = 1e-10)
  }
  expect_identical(cl$p_value[1], (1 + sum(res$null_llr >= cl$log_likelihood_ratio[1])) / 100)
  expect_s3_class(autoplot(res), "ggplot")
  grDevices::pdf(NULL); on.exit(grDevices::dev.off(), add = TRUE)
  expect_invisible(plot(res))
  expect_output(print(res), "Bernoulli spatial scan")
  expect_error(scan_bernoulli(g[, c("x", "y")], g$case, 1 - g$case, n_replicates = 9,
                              direction = "sideways"), "direction", class = "hphawkes_python_error")
  expect_error(scan_bernoulli(g[, c("x", "y")], g$case, 1 - g$case, n_replicates = 9.5),
               "n_replicates must be a single whole number")
})
