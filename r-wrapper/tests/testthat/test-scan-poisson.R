test_that("scan_poisson on the NY leukaemia data reproduces SaTScan's clusters and Python", {
  skip_if_no_hphawkes()
  ny <- hphawkes_data("ny_leukemia")
  expect_identical(nrow(ny), 281L)
  res <- scan_poisson(ny[, c("latitude", "longitude")], ny$cases_floor, ny$population,
                      max_population = 0.1, n_replicates = 49, seed = 1, location_ids = ny$id,
                      backend = "cpu")
  expect_s3_class(res, "hphawkes_scan")
  expect_identical(res$model, "poisson")
  cl <- res$clusters
  # SaTScan v9.6 (discrete Poisson, 10% of the population, lat/long as Cartesian)
  expect_lt(max(abs(cl$log_likelihood_ratio[1:3] - c(11.577255, 9.019716, 6.114140))), 1e-6)
  expect_equal(round(cl$expected[1:3], 2), c(49.71, 17.79, 40.85))
  expect_identical(as.numeric(cl$cases[1:3]), c(85, 38, 64))
  expect_identical(sort(as.integer(cl$location_ids[[2]])), sort(c(89L, 88L, 87L, 84L, 90L, 86L, 92L, 85L)))
  py <- py_reference(paste(
    "import hphawkes_py as hp",
    "ny = hp.datasets.load_ny_leukemia()",
    "r = hp.scan.poisson(ny[['latitude', 'longitude']].to_numpy(), ny['cases_floor'].to_numpy(),",
    "                    ny['population'].to_numpy(), max_population=0.1, n_replicates=49, seed=1,",
    "                    location_ids=ny['id'].to_numpy(), backend='cpu', progress=False)",
    "out = {'clusters': r.clusters, 'null': r.null_llr}", sep = "\n"))
  expect_identical(cl, py$clusters)
  expect_identical(res$null_llr, py$null)
  expect_s3_class(autoplot(res), "ggplot")
  expect_output(print(res), "Discrete Poisson spatial scan")
  expect_error(scan_poisson(ny[, c("latitude", "longitude")], ny$cases_floor, -ny$population,
                            n_replicates = 9), "population must be non-negative",
               class = "hphawkes_python_error")
  expect_error(scan_poisson(ny[, c("latitude", "longitude")], ny$cases_floor, ny$population,
                            min_cases = 1.5), "min_cases must be a single whole number")
})
