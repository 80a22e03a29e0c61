test_that("scan_space_time finds a planted outbreak, with Dates in and out", {
  skip_if_no_hphawkes()
  set.seed(3)
  L <- 40L; nday <- 20L
  xy <- cbind(runif(L, 0, 10), runif(L, 0, 10))
  grid <- expand.grid(loc = seq_len(L), day = seq_len(nday))
  lam <- rep(0.3, nrow(grid))
  near <- sqrt((xy[grid$loc, 1] - 3)^2 + (xy[grid$loc, 2] - 7)^2) < 2
  lam[near & grid$day >= 16 & grid$day <= 18] <- 4
  grid$cases <- rpois(nrow(grid), lam)
  g <- grid[grid$cases > 0, ]
  dates <- as.Date("2024-03-01") + g$day - 1L
  res <- scan_space_time(xy[g$loc, ], g$cases, dates, max_temporal = 7, n_replicates = 49, seed = 1,
                         backend = "cpu")
  expect_s3_class(res, "hphawkes_scan")
  expect_identical(res$model, "space_time_permutation")
  cl <- res$clusters
  expect_s3_class(cl$start, "Date")
  expect_true(cl$start[1] >= as.Date("2024-03-14") && cl$end[1] <= as.Date("2024-03-20"))
  expect_identical(cl$p_value[1], 1 / 50)
  expect_error(scan_space_time(xy[g$loc, ], g$cases, dates, max_temporal = 0, n_replicates = 9),
               "max_temporal must be >= 1", class = "hphawkes_python_error")
  # the discrete Poisson space-time model: population per location
  pop <- rep(1000, L)
  rp <- scan_space_time(xy[g$loc, ], g$cases, dates, population = pop[g$loc], n_replicates = 19, seed = 1,
                        backend = "cpu")
  expect_identical(rp$model, "space_time_poisson")
  expect_true(rp$clusters$start[1] >= as.Date("2024-03-14"))
})

test_that("scan_run_prm reruns SaTScan's NYCfever parameter file and equals Python", {
  skip_if_no_hphawkes()
  prm <- hphawkes_data_path("scan/satscan_sample_data/NYCSpaceTimePermutation.prm")
  res <- suppressWarnings(scan_run_prm(prm, n_replicates = 19L, seed = 1L, backend = "cpu"))
  expect_s3_class(res, "hphawkes_scan")
  cl <- res$clusters
  expect_identical(as.character(unlist(cl$location_ids[[1]]))[1:3], c("11418", "11415", "11419"))
  expect_equal(cl$log_likelihood_ratio[1], 3.845418, tolerance = 1e-6)
  py <- py_reference(paste(
    "import warnings, hphawkes_py as hp",
    "warnings.simplefilter('ignore')",
    sprintf("r = hp.scan.run_prm(r'%s', n_replicates=19, seed=1, progress=False, backend='cpu')", prm),
    "out = {'llr': r.clusters.log_likelihood_ratio.to_numpy(), 'null': r.null_llr}", sep = "\n"))
  expect_identical(cl$log_likelihood_ratio, py$llr)
  expect_identical(res$null_llr, py$null)
  expect_error(scan_run_prm(file.path(tempdir(), "nope.prm")), "nope.prm")
})

test_that("scan_space_time with controls is the space-time Bernoulli model; scan_bernoulli takes ellipses", {
  skip_if_no_hphawkes()
  set.seed(5)
  L <- 30L; nday <- 12L
  xy <- cbind(runif(L, 0, 10), runif(L, 0, 10))
  grid <- expand.grid(loc = seq_len(L), day = seq_len(nday))
  persons <- sample(3:8, nrow(grid), replace = TRUE)
  near <- sqrt((xy[grid$loc, 1] - 6)^2 + (xy[grid$loc, 2] - 4)^2) < 2
  p <- ifelse(near & grid$day >= 9 & grid$day <= 11, 0.6, 0.1)
  cases <- rbinom(nrow(grid), persons, p)
  res <- scan_space_time(xy[grid$loc, ], cases, grid$day, controls = persons - cases, max_temporal = 4,
                         n_replicates = 19, seed = 1, backend = "cpu")
  expect_identical(res$model, "space_time_bernoulli")
  expect_true(res$clusters$start[1] >= 8 && res$clusters$end[1] <= 11)
  expect_identical(res$n_population, sum(persons))
  expect_error(scan_space_time(xy[grid$loc, ], cases, grid$day, controls = persons - cases,
                               population = persons, n_replicates = 9), "not both")
  b <- scan_bernoulli(xy, tapply(cases, grid$loc, sum), tapply(persons - cases, grid$loc, sum),
                      window = "ellipse", penalty = "none", n_replicates = 9, seed = 1, backend = "cpu")
  expect_true(all(c("test_statistic", "shape", "angle", "semimajor_axis") %in% names(b$clusters)))
})
