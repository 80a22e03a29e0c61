# Inputs that the R wrapper passed on silently wrong (issue 34): column names dropped before
# predict, NA sent as the category "NA", abbreviated argument names matched to another argument,
# NA flags sent as TRUE, and messages that named the wrong type.

faithful_fit <- function(X, ...) tdp_mixture(X, n_components = 4, method = "bem", n_iter = 20, seed = 1,
                                              backend = "cpu", ...)

test_that("predict() on a tdp_mixture refuses named columns in another order", {
  skip_if_no_hphawkes()
  f <- hphawkes_data("faithful")
  df <- f[, c("eruptions", "waiting")]
  m <- faithful_fit(df)
  expect_error(predict(m, df[, c("waiting", "eruptions")], type = "cluster"),
               "columns of the fit in another order", class = "hphawkes_python_error")
  expect_error(predict(m, stats::setNames(df, c("a", "b"))), "fitted on \\['eruptions', 'waiting'\\]")
  # the same columns in the order of the fit, as a data frame, a named or an unnamed matrix
  expected <- predict(m, type = "cluster")
  expect_identical(predict(m, df, type = "cluster"), expected)
  expect_identical(predict(m, as.matrix(df), type = "cluster"), expected)
  expect_identical(predict(m, unname(as.matrix(df)), type = "cluster"), expected)
  expect_identical(m$n_clusters, 2L)
  expect_identical(length(unique(expected)), 2L)
  # a fit on unnamed columns cannot check names: a warning, and the columns are used by position
  u <- faithful_fit(unname(as.matrix(df)))
  expect_warning(p <- predict(u, df[, c("waiting", "eruptions")], type = "cluster"), "used by position")
  expect_identical(p, predict(u, unname(as.matrix(df[, c("waiting", "eruptions")])), type = "cluster"))
  expect_error(faithful_fit(cbind(a = df$eruptions, a = df$waiting)), "distinct, non-empty column names")
  expect_error(faithful_fit(data.frame(df, g = factor(1))), "non-numeric: g \\(factor\\)")
})

test_that("abbreviated and unknown argument names are refused", {
  skip_if_no_hphawkes()
  X <- as.matrix(hphawkes_data("faithful")[, c("eruptions", "waiting")])
  expect_error(tdp_mixture(X, k = 8), "argument 'k' is an abbreviation of 'keep_draws'",
               class = "hphawkes_input_error")
  expect_error(scan_poisson(X, 1:272, rep(100, 272), n_rep = 9), "abbreviation of 'n_replicates'")
  expect_error(hphawkes_data(d = "faithful"), "abbreviation of 'dataset'")
  m <- faithful_fit(X)
  expect_error(predict(m, new_data = X[1:3, ]), "unknown argument 'new_data'")
  expect_error(predict(m, ty = "prob"), "abbreviation of 'type'")
  expect_error(summary(m, min_w = 0.5), "abbreviation of 'min_weight'")
  expect_identical(nrow(summary(m, min_weight = 0.5)), 0L)
})

test_that("prune with the Gibbs sampler and NA flags are refused", {
  skip_if_no_hphawkes()
  X <- as.matrix(hphawkes_data("faithful")[, c("eruptions", "waiting")])
  expect_error(tdp_mixture(X, n_components = 4, prune = 0.1), "prune=0.1 applies to method='bem' only",
               class = "hphawkes_python_error")
  expect_error(faithful_fit(X, relabel = NA), "relabel must be TRUE or FALSE, got NA",
               class = "hphawkes_input_error")
  expect_error(faithful_fit(X, keep_draws = NA), "keep_draws must be TRUE or FALSE, got NA")
  expect_error(tdp_mixture(X, n_components = 4, nu0 = 1e-300), "nu0=1e-300 is too small")
})

test_that("NA covariates, ids and times are refused in R, naming the column and row", {
  skip_if_no_hphawkes()
  ny <- hphawkes_data("ny_leukemia")
  xy <- ny[, c("latitude", "longitude")]
  cov <- rep(c("a", "b"), length.out = nrow(ny))
  cov[5] <- NA
  expect_error(scan_poisson(xy, ny$cases_floor, ny$population, covariates = cov, n_replicates = 9),
               "covariates has 1 missing value\\(s\\) \\(NA\\), the first in row 5",
               class = "hphawkes_input_error")
  expect_error(scan_poisson(xy, ny$cases_floor, ny$population, n_replicates = 9,
                            covariates = data.frame(sex = factor(cov), age = 1L)),
               "missing value\\(s\\) \\(NA\\) in column 'sex', the first in row 5")
  expect_error(scan_poisson(xy, ny$cases_floor, ny$population, n_replicates = 9,
                            covariates = data.frame(age = c(NA, rep(1, nrow(ny) - 1)))),
               "in column 'age', the first in row 1")
  # location ids as a factor are their labels; NA ids and the wrong kind are named as such
  a <- scan_poisson(xy, ny$cases_floor, ny$population, n_replicates = 9, seed = 1, backend = "cpu",
                    location_ids = factor(ny$id))
  b <- scan_poisson(xy, ny$cases_floor, ny$population, n_replicates = 9, seed = 1, backend = "cpu",
                    location_ids = as.character(ny$id))
  expect_identical(a$clusters, b$clusters)
  expect_error(scan_poisson(xy, ny$cases_floor, ny$population, n_replicates = 9,
                            location_ids = c(NA, ny$id[-1])), "location_ids has 1 missing value")
  expect_error(scan_poisson(xy, ny$cases_floor, ny$population, n_replicates = 9,
                            location_ids = as.list(ny$id)), "location_ids must be character labels or whole numbers, got list")
  expect_error(scan_poisson(xy, factor(ny$cases_floor), ny$population, n_replicates = 9),
               "cases must be whole numbers, got factor")
  expect_error(scan_poisson(xy, c(NA, ny$cases_floor[-1]), ny$population, n_replicates = 9),
               "cases has 1 missing value\\(s\\) \\(NA\\), the first in row 1")
  expect_error(scan_poisson(xy, ny$cases_floor, ny$population, max_population = NA),
               "max_population must be a single number, got NA \\(NA \\(logical\\)\\)")
  times <- rep(1:7, length.out = nrow(ny))
  times[3] <- NA
  expect_error(scan_space_time(xy, ny$cases_floor, times, n_replicates = 9),
               "times has 1 missing value\\(s\\) \\(NA\\), the first in row 3", class = "hphawkes_input_error")
})

test_that("sccs_study and sccs_data refuse NA covariate ids", {
  skip_if_no_hphawkes()
  sim <- sccs_simulate_eras(200, 2, prevalence = 0.3, seed = 3)
  eras <- sim$eras
  eras$covariate_id[4] <- NA
  expect_error(sccs_study(sim$observation_periods, eras, sim$outcomes),
               "eras\\$covariate_id has 1 missing value\\(s\\) \\(NA\\), the first in row 4",
               class = "hphawkes_input_error")
  eras$covariate_id <- as.character(sim$eras$covariate_id)
  eras$covariate_id[2] <- NA
  expect_error(sccs_study(sim$observation_periods, eras, sim$outcomes), "the first in row 2")
  outcomes <- data.frame(stratum = c(1L, 1L, 2L), row_id = 1:3, y = c(1L, 0L, 1L), time = c(10, 20, 30))
  covariates <- data.frame(row_id = 1:3, covariate_id = c("a", NA, "a"))
  expect_error(sccs_data(outcomes, covariates), "covariates\\$covariate_id has 1 missing value")
})

test_that("hawkes_forecast_score refuses an NA origin in R", {
  skip_if_no_hphawkes()
  p <- hawkes_params(mu0 = 1, tau_x = 1, tau_t = 1, theta = 1, omega = 1, h = 1)
  x <- matrix(c(0, 1, 2, 0, 1, 2), 3)
  expect_error(hawkes_forecast_score(p, x, c(1, 2, 3), origin = NA, horizon = 1),
               "origin must be a single number, got NA \\(NA \\(logical\\)\\)", class = "hphawkes_input_error")
})

test_that("kde_window refuses arguments its kind of window does not take, and NA mask cells", {
  skip_if_no_hphawkes()
  expect_error(kde_window("rectangle", xmin = 0, xmax = 1, ymin = 0, ymax = 1, cell_size = 0.1, crs = "EPSG:3857"),
               "kde_window\\(\"rectangle\"\\) takes the named arguments xmin, xmax, ymin, ymax, cell_size; got 'crs'",
               class = "hphawkes_input_error")
  expect_error(kde_window("rectangle", xmin = 0, xmax = 1, ymin = 0, ymax = 1, cell = 0.1), "got 'cell'")
  m <- matrix(TRUE, 4, 5)
  m[2, 3] <- NA
  expect_error(kde_window("mask", mask = m, x0 = 0, y0 = 0, cell_size = 1),
               "mask has 1 missing value\\(s\\) \\(NA\\), the first in row 10")
  m[2, 3] <- FALSE
  w <- kde_window("mask", mask = m, x0 = 0, y0 = 0, cell_size = 1)
  expect_s3_class(w, "kde_window")
})

test_that("plot methods refuse abbreviated and unknown arguments", {
  skip_if_no_hphawkes()
  X <- as.matrix(hphawkes_data("faithful")[, c("eruptions", "waiting")])
  m <- faithful_fit(X)
  expect_error(autoplot(m, dim = c(2L, 1L)), "abbreviation of 'dims'")
  expect_error(autoplot(m, colour = "red"), "unknown argument 'colour'")
  expect_s3_class(autoplot(m, dims = c(2L, 1L)), "ggplot")
})

test_that("sccs_study and sccs_data refuse NA days and outcomes with R's row number", {
  skip_if_no_hphawkes()
  sim <- sccs_simulate_eras(100, 2, prevalence = 0.3, seed = 3)
  o <- sim$outcomes
  o$day[2] <- NA
  expect_error(sccs_study(sim$observation_periods, sim$eras, o),
               "outcomes\\$day has 1 missing value\\(s\\) \\(NA\\), the first in row 2", class = "hphawkes_input_error")
  op <- sim$observation_periods
  op$end[3] <- NA
  expect_error(sccs_study(op, sim$eras, sim$outcomes), "observation_periods\\$end has 1 missing .* row 3")
  outcomes <- data.frame(stratum_id = c(1L, 1L, 2L, 2L), row_id = 1:4, y = c(1L, NA, 1L, 0L), time = 1)
  covariates <- data.frame(row_id = 1:4, covariate_id = c("a", "a", "a", "b"))
  expect_error(sccs_data(outcomes, covariates), "outcomes\\$y has 1 missing value\\(s\\) \\(NA\\), the first in row 2")
})
