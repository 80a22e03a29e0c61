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

test_that("scan_space_time adjusts the discrete Poisson model for a time trend, as Python", {
  skip_if_no_hphawkes()
  set.seed(8)
  L <- 25L; nday <- 30L
  xy <- cbind(runif(L, 0, 10), runif(L, 0, 10))
  grid <- expand.grid(loc = seq_len(L), day = seq_len(nday))
  grid$cases <- rpois(nrow(grid), 0.2 * exp(0.05 * grid$day))
  g <- grid[grid$cases > 0, ]
  pop <- rep(1000, nrow(g))
  for (tt in list(list("nonparametric", NULL), list("loglinear", NULL), list("loglinear", 250),
                 list("logquadratic", NULL))) {
    res <- scan_space_time(xy[g$loc, ], g$cases, g$day, population = pop, n_replicates = 19, seed = 1,
                           backend = "cpu", time_trend = tt[[1]], trend_percent = tt[[2]])
    f <- tmp_csv(cbind(xy[g$loc, ], g$cases, g$day))
    py <- py_reference(paste("import numpy as np, hphawkes_py as hp",
      sprintf("d = np.loadtxt(r'%s', delimiter=',')", f),
      sprintf("r = hp.scan.space_time(d[:, :2], d[:, 2].astype(int), d[:, 3].astype(int), population=np.full(len(d), 1000.0),"),
      sprintf("    n_replicates=19, seed=1, backend='cpu', progress=False, time_trend='%s', trend_percent=%s)",
              tt[[1]], if (is.null(tt[[2]])) "None" else tt[[2]]),
      "out = {'expected': r.clusters.expected.to_numpy(), 'null': r.null_llr, 'tt': r.time_trend}", sep = "\n"))
    expect_identical(res$clusters$expected, py$expected)
    expect_identical(res$null_llr, py$null)
    expect_identical(res$time_trend$adjustment, tt[[1]])
    if (tt[[1]] == "loglinear") expect_equal(res$time_trend$daily_percent, py$tt$daily_percent)
    if (tt[[1]] == "logquadratic") expect_equal(res$time_trend$beta2, py$tt$beta2)
  }
  # the estimated trend is the simulated 5 % a day, within its error
  est <- scan_space_time(xy[g$loc, ], g$cases, g$day, population = pop, n_replicates = 9, seed = 1,
                         backend = "cpu", time_trend = "loglinear")
  expect_true(abs(est$time_trend$daily_percent - 100 * (exp(0.05) - 1)) < 1.5)
  expect_error(scan_space_time(xy[g$loc, ], g$cases, g$day, time_trend = "loglinear", n_replicates = 9),
               "give population")
})

test_that("scan_run_prm reruns SaTScan's New Mexico sample (census years, covariates) as SaTScan does", {
  skip_if_no_hphawkes()
  prm <- hphawkes_data_path("scan/satscan_sample_data/NewMexicoSpaceTimePoisson.prm")
  res <- scan_run_prm(prm, n_replicates = 19L, seed = 1L, backend = "cpu")
  cl <- res$clusters
  # SaTScan 10.3.2 on the same file: LLR 10.979758, 236 cases, 176.22 expected, 1985-1989
  expect_equal(cl$log_likelihood_ratio[1], 10.979758, tolerance = 1e-6)
  expect_identical(as.integer(cl$cases[1]), 236L)
  expect_equal(cl$expected[1], 176.22, tolerance = 5e-3 / 176.22)
  expect_identical(format(as.Date(cl$start[1])), "1985-01-01")
})

test_that("scan_space_time takes expected cases per location and day", {
  skip_if_no_hphawkes()
  set.seed(5)
  L <- 12L; nday <- 8L
  xy <- cbind(runif(L, 0, 10), runif(L, 0, 10))
  grid <- expand.grid(loc = seq_len(L), day = seq_len(nday))
  e <- 50 * (1 + 0.2 * (grid$loc <= 4) * (grid$day - 1))
  grid$cases <- rpois(nrow(grid), e / 50)
  res <- scan_space_time(xy[grid$loc, ], grid$cases, grid$day, expected = e, max_temporal = 3L,
                         n_replicates = 19, seed = 1, backend = "cpu")
  expect_identical(res$model, "space_time_poisson")
  data <- tmp_csv(cbind(xy[grid$loc, ], grid$cases, grid$day, e))
  py <- py_reference(paste(
    "import numpy as np, hphawkes_py as hp",
    sprintf("a = np.loadtxt(r'%s', delimiter=',', ndmin=2)", data),
    "xy, c, d, e = a[:, :2], a[:, 2].astype(int), a[:, 3].astype(int), a[:, 4]",
    "r = hp.scan.space_time(xy, c, d, expected=e, max_temporal=3, n_replicates=19, seed=1, progress=False,",
    "                       backend='cpu')",
    "out = {'llr': r.clusters.log_likelihood_ratio.to_numpy()}", sep = "\n"))
  expect_identical(res$clusters$log_likelihood_ratio, py$llr)
  expect_error(scan_space_time(xy[grid$loc, ], grid$cases, grid$day, expected = e, controls = grid$cases),
               "expected is for the discrete Poisson model")
})

test_that("scan_space_time adjusts the space-time permutation model for the day of the week", {
  skip_if_no_hphawkes()
  set.seed(2)
  xy <- cbind(runif(20, 0, 10), runif(20, 0, 10))
  grid <- expand.grid(loc = 1:20, day = 0:20)
  lam <- 0.4 + 3 * (grid$loc == 1 & grid$day %% 7 == 0)
  grid$cases <- rpois(nrow(grid), lam)
  g <- grid[grid$cases > 0, ]
  res <- scan_space_time(xy[g$loc, ], g$cases, g$day, day_of_week = TRUE, n_replicates = 19, seed = 1,
                         backend = "cpu")
  expect_true(res$day_of_week)
  py <- py_reference(paste(
    "import numpy as np, hphawkes_py as hp",
    sprintf("a = np.loadtxt(r'%s', delimiter=',', ndmin=2)", tmp_csv(cbind(xy[g$loc, ], g$cases, g$day))),
    "r = hp.scan.space_time_permutation(a[:, :2], a[:, 2].astype(int), a[:, 3].astype(int), day_of_week=True,",
    "                                   n_replicates=19, seed=1, progress=False, backend='cpu')",
    "out = {'llr': r.clusters.log_likelihood_ratio.to_numpy()}", sep = "\n"))
  expect_identical(res$clusters$log_likelihood_ratio, py$llr)
  wb <- scan_space_time(xy[g$loc, ], g$cases, g$day, controls = rep(20, nrow(g)), day_of_week = TRUE,
                        n_replicates = 9, seed = 1, backend = "cpu")
  expect_identical(wb$model, "space_time_bernoulli")
  expect_true(wb$day_of_week)
  wp <- scan_space_time(xy[g$loc, ], g$cases, g$day, population = rep(100, nrow(g)), day_of_week = TRUE,
                        n_replicates = 9, seed = 1, backend = "cpu")
  expect_identical(wp$model, "space_time_poisson")
  expect_true(wp$day_of_week)
  pt <- scan_space_time(xy[g$loc, ], g$cases, g$day, population = rep(100, nrow(g)), purely_temporal = TRUE,
                        n_replicates = 9, seed = 1, backend = "cpu")
  expect_true(pt$purely_temporal)
  expect_true("purely_temporal" %in% names(pt$clusters))
  expect_error(scan_space_time(xy[g$loc, ], g$cases, g$day, purely_temporal = TRUE),
               "purely_temporal is for the discrete Poisson and Bernoulli models")
  ps <- scan_space_time(xy[g$loc, ], g$cases, g$day, population = rep(100, nrow(g)), purely_spatial = TRUE,
                        max_temporal = 3L, n_replicates = 9, seed = 1, backend = "cpu")
  expect_true(ps$purely_spatial)
  plain <- scan_space_time(xy[g$loc, ], g$cases, g$day, population = rep(100, nrow(g)), max_temporal = 3L,
                           n_replicates = 9, seed = 1, backend = "cpu")
  # the same replicates, each maximum now over the whole-period circles too
  expect_true(all(ps$null_llr >= plain$null_llr))
  expect_error(scan_space_time(xy[g$loc, ], g$cases, g$day, purely_spatial = TRUE),
               "purely_spatial is for the discrete Poisson and Bernoulli models")
  circ <- scan_space_time(xy[g$loc, ], g$cases, g$day, circle_population = 10 * g$loc,
                          max_circle_population = 0.1, n_replicates = 9, seed = 1, backend = "cpu")
  free <- scan_space_time(xy[g$loc, ], g$cases, g$day, n_replicates = 9, seed = 1, backend = "cpu")
  expect_lt(circ$n_windows, free$n_windows)
  py <- py_reference(paste(
    "import numpy as np, hphawkes_py as hp",
    sprintf("a = np.loadtxt(r'%s', delimiter=',', ndmin=2)", tmp_csv(cbind(xy[g$loc, ], g$cases, g$day, g$loc))),
    "r = hp.scan.space_time_permutation(a[:, :2], a[:, 2].astype(int), a[:, 3].astype(int),",
    "    circle_population=10.0 * a[:, 4], max_circle_population=0.1, n_replicates=9, seed=1,",
    "    progress=False, backend='cpu')",
    "out = {'n': r.n_windows, 'llr': r.clusters.log_likelihood_ratio.to_numpy()}", sep = "\n"))
  expect_identical(circ$n_windows, py$n)
  grid <- rbind(c(2, 2), c(7, 7), c(5, 5))
  gc <- scan_space_time(xy[g$loc, ], g$cases, g$day, centres = grid, n_replicates = 9, seed = 1, backend = "cpu")
  expect_identical(gc$n_centres, 3L)
  expect_true(all(gc$clusters$x %in% grid[, 1]))
  expect_identical(circ$clusters$log_likelihood_ratio, py$llr)
})

test_that("scan_space_time adjusts a prospective analysis for earlier analyses", {
  skip_if_no_hphawkes()
  set.seed(7)
  xy <- cbind(runif(15, 0, 10), runif(15, 0, 10))
  grid <- expand.grid(loc = 1:15, day = 0:13)
  grid$cases <- rpois(nrow(grid), 0.5)
  dates <- as.Date("2024-05-01") + grid$day
  kw <- list(xy[grid$loc, ], grid$cases, dates, prospective = TRUE, max_population = NULL, max_distance = 4,
             max_temporal = 3L, n_replicates = 49, seed = 1, backend = "cpu")
  once <- do.call(scan_space_time, kw)
  adj <- do.call(scan_space_time, c(kw, list(surveillance_start = as.Date("2024-05-08"))))
  expect_true(all(adj$null_llr >= once$null_llr - 1e-12))
  expect_true(any(adj$null_llr > once$null_llr))
  # the longest cylinder 25 % of each earlier analysis's period (2 days on May 8, 3 on May 14)
  kw$max_temporal <- NULL
  pct <- do.call(scan_space_time, c(kw, list(surveillance_start = as.Date("2024-05-08"), max_temporal_percent = 25)))
  expect_true(all(pct$null_llr <= adj$null_llr + 1e-12))
  expect_true(all(as.numeric(pct$clusters$end - pct$clusters$start) + 1 <= 3))
})
