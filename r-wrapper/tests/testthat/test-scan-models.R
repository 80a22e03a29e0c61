# The ordinal, multinomial, purely temporal, seasonal and SVTT scans, and SaTScan's files of the
# temporal and SVTT results, against the Python package's own results (data sent through CSV files).

towns <- function(seed) {
  set.seed(seed)
  xy <- round(cbind(runif(30, 0, 10), runif(30, 0, 10)), 3)
  town <- sample(30, 300, replace = TRUE)
  near <- sqrt((xy[town, 1] - xy[1, 1])^2 + (xy[town, 2] - xy[1, 2])^2) < 2.5
  list(xy = xy, town = town, near = near)
}

test_that("scan_ordinal gives Python's ordinal scan", {
  skip_if_no_hphawkes()
  d <- towns(2)
  stage <- ifelse(d$near, sample(1:3, 300, TRUE, c(.1, .3, .6)), sample(1:3, 300, TRUE, c(.5, .3, .2)))
  res <- scan_ordinal(d$xy[d$town, ], stage, location_ids = d$town, n_replicates = 99, seed = 1, backend = "cpu")
  expect_s3_class(res, "hphawkes_scan")
  expect_identical(res$model, "ordinal")
  f <- tmp_csv(cbind(d$xy[d$town, ], stage, d$town))
  py <- py_reference(paste("import numpy as np, hphawkes_py as hp",
    sprintf("d = np.loadtxt(r'%s', delimiter=',')", f),
    "r = hp.scan.ordinal(d[:, :2], d[:, 2], location_ids=d[:, 3].astype(np.int64), n_replicates=99, seed=1,",
    "                    backend='cpu', progress=False)",
    "out = {'clusters': r.clusters, 'null': r.null_llr}", sep = "\n"))
  expect_identical(res$null_llr, py$null)
  expect_identical(res$clusters, py$clusters)
  top <- res$clusters[1, ]
  expect_identical(top$cluster_type, "high")
  expect_lte(top$p_value, 0.05)
  expect_identical(sum(top$observed_by_category[[1]]), as.integer(top$cases))
  expect_identical(summary(res)$location_ids, NULL)
  expect_output(print(res), "rdinal")
  expect_match(ggplot2::autoplot(res)$labels$title, "^Ordinal scan: most likely cluster p = ")
  low <- scan_ordinal(d$xy[d$town, ], stage, direction = "low", n_replicates = 9, seed = 1)
  expect_true(all(low$clusters$cluster_type == "low"))
  expect_error(scan_ordinal(d$xy[d$town, ], letters[(stage)], n_replicates = 9), "must be numbers for the ordinal",
               class = "hphawkes_input_error")
  expect_error(scan_ordinal(d$xy[d$town, ], factor(stage), n_replicates = 9), "pass as.integer",
               class = "hphawkes_input_error")
  expect_error(scan_ordinal(d$xy[d$town, ], c(stage[-1], NA), n_replicates = 9), "categories has 1 missing")
  expect_error(scan_ordinal(d$xy[d$town, ], stage, n_replicate = 9), "abbreviation of 'n_replicates'")
})

test_that("scan_multinomial gives Python's multinomial scan (labels or a factor)", {
  skip_if_no_hphawkes()
  d <- towns(5)
  sero <- ifelse(d$near, sample(c("A", "B", "C"), 300, TRUE, c(.1, .8, .1)),
                 sample(c("A", "B", "C"), 300, TRUE, c(.4, .2, .4)))
  res <- scan_multinomial(d$xy[d$town, ], sero, location_ids = d$town, n_replicates = 99, seed = 1)
  expect_identical(res$model, "multinomial")
  f <- tmp_csv(cbind(d$xy[d$town, ], d$town))
  g <- tmp_csv(sero)
  py <- py_reference(paste("import numpy as np, hphawkes_py as hp",
    sprintf("d = np.loadtxt(r'%s', delimiter=',')", f),
    sprintf("s = np.loadtxt(r'%s', dtype=str)", g),
    "r = hp.scan.multinomial(d[:, :2], s, location_ids=d[:, 2].astype(np.int64), n_replicates=99, seed=1,",
    "                        backend='cpu', progress=False)",
    "out = {'clusters': r.clusters, 'null': r.null_llr}", sep = "\n"))
  expect_identical(res$null_llr, py$null)
  expect_identical(res$clusters, py$clusters)
  expect_identical(unlist(res$clusters$categories[[1]]), c("A", "B", "C"))
  expect_lte(res$clusters$p_value[1], 0.05)
  fac <- scan_multinomial(d$xy[d$town, ], factor(sero), location_ids = d$town, n_replicates = 99, seed = 1)
  expect_identical(fac$clusters, res$clusters)
  # the categorical tables: no .rr (SaTScan refuses it), the others as Python writes them
  dir <- tempfile("multinomial"); dir.create(dir)
  files <- scan_write_satscan(res, file.path(dir, "m.txt"))
  expect_identical(basename(files), c("m.txt", "m.col.csv", "m.gis.csv", "m.llr.csv"))
  expect_error(scan_multinomial(d$xy[d$town, ], sero, direction = "high"), "unused argument")
})

daily <- function() {
  set.seed(7)
  days <- as.Date("2024-01-01") + 0:149
  cases <- rpois(150, ifelse(seq_len(150) %in% 91:105, 6, 2))
  controls <- rpois(150, 8)
  list(days = days, cases = cases, controls = controls)
}

test_that("scan_temporal gives Python's purely temporal scan (Dates or day numbers)", {
  skip_if_no_hphawkes()
  d <- daily()
  res <- scan_temporal(d$days, d$cases, n_replicates = 99, seed = 1, backend = "cpu")
  expect_s3_class(res, "hphawkes_temporal_scan")
  expect_s3_class(res$clusters$start, "Date")
  f <- tmp_csv(cbind(as.numeric(d$days), d$cases, d$controls))
  py <- py_reference(paste("import numpy as np, hphawkes_py as hp",
    sprintf("d = np.loadtxt(r'%s', delimiter=',').astype(np.int64)", f),
    "days = d[:, 0].astype('datetime64[D]')",
    "r = hp.scan.temporal(days, d[:, 1], n_replicates=99, seed=1, backend='cpu', progress=False)",
    "b = hp.scan.temporal(days, d[:, 1], controls=d[:, 2], model='bernoulli', time_aggregation=3, prospective=True,",
    "                     n_replicates=99, seed=2, backend='cpu', progress=False)",
    "out = {'clusters': r.clusters, 'null': r.null_llr, 'units': r.unit_expected, 'b': b.clusters}", sep = "\n"))
  expect_identical(res$null_llr, py$null)
  expect_identical(res$units$expected, py$units)
  expect_identical(res$clusters$start, as.Date(py$clusters$start))
  expect_identical(res$clusters$end, as.Date(py$clusters$end))
  for (col in c("n_units", "cases", "expected", "relative_risk", "log_likelihood_ratio", "p_value"))
    expect_identical(res$clusters[[col]], py$clusters[[col]], info = col)
  expect_true(res$clusters$start[1] >= as.Date("2024-03-28") && res$clusters$end[1] <= as.Date("2024-04-17"))
  b <- scan_temporal(d$days, d$cases, controls = d$controls, model = "bernoulli", time_aggregation = 3,
                     prospective = TRUE, n_replicates = 99, seed = 2)
  expect_identical(b$analysis, "prospective")
  expect_identical(b$clusters$population, py$b$population)
  expect_identical(b$clusters$log_likelihood_ratio, py$b$log_likelihood_ratio)
  expect_identical(b$clusters$end, max(d$days))
  # day numbers: the same windows as numbers
  n <- scan_temporal(as.numeric(d$days - d$days[1]), d$cases, n_replicates = 99, seed = 1)
  expect_identical(n$clusters$start, as.integer(res$clusters$start - d$days[1]))
  expect_identical(n$clusters$log_likelihood_ratio, res$clusters$log_likelihood_ratio)
  expect_identical(summary(res), res$clusters)
  expect_identical(as.data.frame(res), res$clusters)
  expect_output(print(res), "TemporalResult\\(retrospective poisson, 372 cases in 150 units")
  sp <- scan_temporal(d$days, d$cases, study_period = as.Date(c("2023-12-01", "2024-05-29")), n_replicates = 9,
                      seed = 1)
  expect_identical(sp$n_units, 181L)
  expect_error(scan_temporal(d$days, d$cases, study_period = c(0, 10), n_replicates = 9),
               "study_period must be Dates when times are Dates", class = "hphawkes_input_error")
  expect_error(scan_temporal(d$days, d$cases, study_period = as.Date("2024-01-01"), n_replicates = 9),
               "its two ends", class = "hphawkes_input_error")
  expect_error(scan_temporal(format(d$days), d$cases, n_replicates = 9), "times must be Dates or whole day numbers")
  expect_error(scan_temporal(d$days, d$cases, model = "bernoulli", n_replicates = 9), "controls",
               class = "hphawkes_python_error")
  expect_error(scan_temporal(d$days, d$cases, prospective = NA), "prospective must be TRUE or FALSE")
})

test_that("scan_temporal adjusts the Poisson model for a log-linear time trend, as Python", {
  skip_if_no_hphawkes()
  set.seed(4)
  days <- as.Date("2024-01-01") + 0:199
  cases <- rpois(200, 2 * exp(0.01 * 0:199) * ifelse(81:280 %in% 161:170, 2.5, 1))
  f <- tmp_csv(cbind(as.numeric(days), cases))
  for (tt in list(list(NULL, 7L), list(300, 1L))) {
    res <- scan_temporal(days, cases, time_aggregation = tt[[2]], n_replicates = 19, seed = 1, backend = "cpu",
                         time_trend = "loglinear", trend_percent = tt[[1]])
    py <- py_reference(paste("import numpy as np, hphawkes_py as hp",
      sprintf("d = np.loadtxt(r'%s', delimiter=',').astype(np.int64)", f),
      sprintf("r = hp.scan.temporal(d[:, 0].astype('datetime64[D]'), d[:, 1], time_aggregation=%d, n_replicates=19,",
              tt[[2]]),
      sprintf("    seed=1, backend='cpu', progress=False, time_trend='loglinear', trend_percent=%s)",
              if (is.null(tt[[1]])) "None" else tt[[1]]),
      "out = {'units': r.unit_expected, 'null': r.null_llr, 'tt': r.time_trend}", sep = "\n"))
    expect_identical(res$units$expected, py$units)
    expect_identical(res$null_llr, py$null)
    expect_identical(res$time_trend$adjustment, "loglinear")
    expect_identical(res$time_trend$estimated, is.null(tt[[1]]))
    expect_equal(res$time_trend$daily_percent, py$tt$daily_percent)
  }
  # the estimated trend is the simulated 1 % a day, within its error
  est <- scan_temporal(days, cases, n_replicates = 9, seed = 1, backend = "cpu", time_trend = "loglinear")
  expect_true(abs(est$time_trend$daily_percent - 100 * (exp(0.01) - 1)) < 0.3)
  expect_error(scan_temporal(days, cases, n_replicates = 9, time_trend = "nonparametric"),
               "no purely temporal cluster", class = "hphawkes_python_error")
})

test_that("scan_seasonal gives Python's seasonal scan", {
  skip_if_no_hphawkes()
  set.seed(2)
  days <- seq(as.Date("2020-01-01"), as.Date("2022-12-31"), by = "day")
  md <- as.integer(format(days, "%m%d"))
  cases <- rpois(length(days), ifelse(md >= 1220 | md <= 110, 2.5, 1))
  res <- scan_seasonal(days, cases, max_temporal_size = 0.1, n_replicates = 49, seed = 1)
  f <- tmp_csv(cbind(as.numeric(days), cases))
  py <- py_reference(paste("import numpy as np, hphawkes_py as hp",
    sprintf("d = np.loadtxt(r'%s', delimiter=',').astype(np.int64)", f),
    "r = hp.scan.seasonal(d[:, 0].astype('datetime64[D]'), d[:, 1], max_temporal_size=0.1, n_replicates=49, seed=1,",
    "                     backend='cpu', progress=False)",
    "out = {'clusters': r.clusters, 'null': r.null_llr}", sep = "\n"))
  expect_identical(res$analysis, "seasonal")
  expect_identical(res$clusters, py$clusters)
  expect_identical(res$null_llr, py$null)
  expect_identical(res$clusters$start[1] > "12/01" || res$clusters$start[1] < "01/10", TRUE)
  expect_error(scan_seasonal(seq_along(days), cases, n_replicates = 9), "times must be Dates for the seasonal scan",
               class = "hphawkes_input_error")
})

svtt_data <- function() {
  set.seed(3)
  xy <- round(cbind(runif(20, 0, 10), runif(20, 0, 10)), 3)
  xy[1:4, ] <- cbind(1 + 0.2 * 0:3, 1 + 0.2 * 0:3)
  grid <- expand.grid(loc = 1:20, t = 0:7)
  cases <- rpois(nrow(grid), 8 * ifelse(grid$loc <= 4, 1.3^grid$t, 1))
  list(xy = xy, grid = grid, cases = cases)
}

test_that("scan_svtt gives Python's SVTT scan", {
  skip_if_no_hphawkes()
  d <- svtt_data()
  ids <- paste0("L", d$grid$loc)
  res <- scan_svtt(d$xy[d$grid$loc, ], d$grid$t, d$cases, rep(1000, nrow(d$grid)), location_ids = ids,
                   n_replicates = 49, seed = 1, backend = "cpu")
  expect_s3_class(res, "hphawkes_svtt")
  f <- tmp_csv(cbind(d$xy[d$grid$loc, ], d$grid$t, d$cases, d$grid$loc))
  py <- py_reference(paste("import numpy as np, hphawkes_py as hp",
    sprintf("d = np.loadtxt(r'%s', delimiter=',')", f),
    "ids = ['L%d' % v for v in d[:, 4].astype(int)]",
    "r = hp.scan.svtt(d[:, :2], d[:, 2].astype(np.int64), d[:, 3].astype(np.int64), np.full(len(d), 1000.0),",
    "                 location_ids=ids, n_replicates=49, seed=1, backend='cpu', progress=False)",
    "out = {'clusters': r.clusters, 'null': r.null_llr, 'trend': r.global_trend}", sep = "\n"))
  expect_identical(res$clusters, py$clusters)
  expect_identical(res$null_llr, py$null)
  expect_identical(res$global_trend, py$trend)
  expect_identical(sort(unlist(res$clusters$location_ids[[1]])), paste0("L", 1:4))
  expect_gt(res$clusters$inside_trend[1], 20)
  expect_identical(summary(res)$location_ids, NULL)
  expect_output(print(res), "SVTTResult\\(")
  expect_error(scan_svtt(d$xy[d$grid$loc, ], d$grid$t, d$cases, rep(1000, nrow(d$grid)), time_aggregation = NULL),
               "time_aggregation must be a whole number", class = "hphawkes_input_error")
  expect_error(scan_svtt(d$xy[d$grid$loc, ], d$grid$t, d$cases, -rep(1000, nrow(d$grid)), n_replicates = 9),
               "population must be non-negative", class = "hphawkes_python_error")
})

test_that("scan_write_satscan writes SaTScan's tables of temporal and SVTT results, as Python's", {
  skip_if_no_hphawkes()
  d <- daily()
  tr <- scan_temporal(d$days, d$cases, prospective = TRUE, n_replicates = 99, seed = 1)
  dir_r <- tempfile("time_r"); dir.create(dir_r)
  files <- scan_write_satscan(tr, file.path(dir_r, "t.txt"))
  expect_identical(basename(files), c("t.txt", "t.col.csv", "t.gis.csv", "t.llr.csv"))
  col <- utils::read.csv(files[2])
  expect_identical(names(col), c("CLUSTER", "LOC_ID", "START_DATE", "END_DATE", "NUMBER_LOC", "LLR", "P_VALUE",
                                 "RECURR_INT", "OBSERVED", "EXPECTED", "ODE", "REL_RISK", "GINI_CLUST"))
  expect_identical(col$OBSERVED, tr$clusters$cases)
  expect_identical(col$END_DATE, format(max(d$days), "%Y/%-m/%-d"))
  sv <- svtt_data()
  s <- scan_svtt(sv$xy[sv$grid$loc, ], sv$grid$t, sv$cases, rep(1000, nrow(sv$grid)), n_replicates = 49, seed = 1)
  sfiles <- scan_write_satscan(s, file.path(dir_r, "s.txt"))
  expect_identical(basename(sfiles), c("s.txt", "s.col.csv", "s.gis.csv", "s.rr.csv", "s.llr.csv"))
  dir_py <- tempfile("time_py"); dir.create(dir_py)
  f <- tmp_csv(cbind(as.numeric(d$days), d$cases))
  g <- tmp_csv(cbind(sv$xy[sv$grid$loc, ], sv$grid$t, sv$cases))
  py_reference(paste("import numpy as np, hphawkes_py as hp",
    sprintf("d = np.loadtxt(r'%s', delimiter=',').astype(np.int64)", f),
    "r = hp.scan.temporal(d[:, 0].astype('datetime64[D]'), d[:, 1], prospective=True, n_replicates=99, seed=1,",
    "                     backend='cpu', progress=False)",
    sprintf("hp.scan.write_satscan(r, r'%s/t.txt')", dir_py),
    sprintf("e = np.loadtxt(r'%s', delimiter=',')", g),
    "s = hp.scan.svtt(e[:, :2], e[:, 2].astype(np.int64), e[:, 3].astype(np.int64), np.full(len(e), 1000.0),",
    "                 n_replicates=49, seed=1, backend='cpu', progress=False)",
    sprintf("hp.scan.write_satscan(s, r'%s/s.txt')", dir_py), "out = 0", sep = "\n"))
  for (fn in c(basename(files), basename(sfiles)))
    expect_identical(readLines(file.path(dir_r, fn), warn = FALSE), readLines(file.path(dir_py, fn), warn = FALSE),
                     info = fn)
  expect_error(scan_write_satscan(tr, file.path(dir_r, "x.txt"), tables = c("col", "rr")),
               "not defined for a prospective", class = "hphawkes_python_error")
  expect_error(scan_write_satscan(s, file.path(dir_r, "x.txt"), gumbel = TRUE), "Monte Carlo p-values only",
               class = "hphawkes_python_error")
  expect_error(scan_geometry(tr), "purely temporal result: it has SaTScan's tables", class = "hphawkes_input_error")
  expect_error(scan_cluster_map(s), "spatial variation in temporal trends result", class = "hphawkes_input_error")
})

test_that("scan_space_time_normal gives Python's space-time normal scan", {
  skip_if_no_hphawkes()
  d <- towns(4)
  day <- sample(0:59, 300, replace = TRUE)
  v <- round(rnorm(300, ifelse(d$near & day >= 20 & day < 30, 14, 10), 2), 3)
  w <- round(runif(300, 0.5, 2), 3)
  res <- scan_space_time_normal(d$xy[d$town, ], v, as.Date("2024-01-01") + day, weights = w,
                                location_ids = d$town, max_temporal = 15L, n_replicates = 99, seed = 1,
                                backend = "cpu", direction = "both")
  expect_identical(res$model, "space_time_weighted_normal")
  f <- tmp_csv(cbind(d$xy[d$town, ], v, day + as.numeric(as.Date("2024-01-01")), w, d$town))
  py <- py_reference(paste("import numpy as np, hphawkes_py as hp",
    sprintf("d = np.loadtxt(r'%s', delimiter=',')", f),
    "r = hp.scan.space_time_normal(d[:, :2], d[:, 2], d[:, 3].astype(np.int64), weights=d[:, 4],",
    "    location_ids=d[:, 5].astype(np.int64), max_temporal=15, n_replicates=99, seed=1, backend='cpu',",
    "    progress=False, direction='both')",
    "out = {'clusters': r.clusters, 'null': r.null_llr}", sep = "\n"))
  expect_identical(res$null_llr, py$null)
  expect_identical(res$clusters$log_likelihood_ratio, py$clusters$log_likelihood_ratio)
  top <- res$clusters[1, ]
  expect_true(1 %in% top$location_ids[[1]])
  expect_true(top$start >= as.numeric(as.Date("2024-01-15")) && top$end <= as.numeric(as.Date("2024-02-05")))
  expect_gt(top$mean_inside, top$mean_outside)
  expect_lte(top$p_value, 0.05)
  wk <- scan_space_time_normal(d$xy[d$town, ], v, as.Date("2024-01-01") + day, location_ids = d$town,
                               max_temporal = 15L, n_replicates = 19, seed = 1, backend = "cpu", day_of_week = TRUE)
  expect_identical(wk$day_of_week, TRUE)
  pt <- scan_space_time_normal(d$xy[d$town, ], v, day, location_ids = d$town, max_temporal = 15L, n_replicates = 9,
                               seed = 1, backend = "cpu", purely_temporal = TRUE)
  expect_identical(pt$purely_temporal, TRUE)
  ps <- scan_space_time_normal(d$xy[d$town, ], v, day, location_ids = d$town, max_temporal = 15L, n_replicates = 9,
                               seed = 1, backend = "cpu", purely_spatial = TRUE)
  expect_identical(ps$purely_spatial, TRUE)
  sv <- scan_space_time_normal(d$xy[d$town, ], v, as.Date("2024-01-01") + day, location_ids = d$town,
                               max_temporal = 7L, n_replicates = 19, seed = 1, backend = "cpu", prospective = TRUE,
                               max_population = NULL, max_distance = 3, surveillance_start = as.Date("2024-02-20"))
  expect_true(all(sv$clusters$end == max(as.numeric(as.Date("2024-01-01") + day))))
  expect_error(scan_space_time_normal(d$xy[d$town, ], rep(1, 300), day, n_replicates = 9), "all equal")
})

test_that("scan_space_time_exponential gives Python's space-time exponential scan", {
  skip_if_no_hphawkes()
  d <- towns(3)
  day <- sample(0:59, 300, replace = TRUE)
  hot <- d$near & day >= 20 & day < 30
  tm <- round(rexp(300, ifelse(hot, 2, 0.2)) + 0.001, 3)
  cens <- tm > 9
  res <- scan_space_time_exponential(d$xy[d$town, ], pmin(tm, 9), as.Date("2024-01-01") + day, cens,
                                     location_ids = d$town, max_temporal = 15L, n_replicates = 99, seed = 1,
                                     backend = "cpu")
  expect_identical(res$model, "space_time_exponential")
  f <- tmp_csv(cbind(d$xy[d$town, ], pmin(tm, 9), day + as.numeric(as.Date("2024-01-01")), as.numeric(cens),
                     d$town))
  py <- py_reference(paste("import numpy as np, hphawkes_py as hp",
    sprintf("d = np.loadtxt(r'%s', delimiter=',')", f),
    "r = hp.scan.space_time_exponential(d[:, :2], d[:, 2], d[:, 3].astype(np.int64), d[:, 4].astype(bool),",
    "    location_ids=d[:, 5].astype(np.int64), max_temporal=15, n_replicates=99, seed=1, backend='cpu',",
    "    progress=False)",
    "out = {'clusters': r.clusters, 'null': r.null_llr}", sep = "\n"))
  expect_identical(res$null_llr, py$null)
  expect_identical(res$clusters$log_likelihood_ratio, py$clusters$log_likelihood_ratio)
  top <- res$clusters[1, ]
  expect_true(1 %in% top$location_ids[[1]])
  expect_true(top$start >= as.numeric(as.Date("2024-01-15")) && top$end <= as.numeric(as.Date("2024-02-05")))
  expect_lte(top$p_value, 0.05)
  wk <- scan_space_time_exponential(d$xy[d$town, ], pmin(tm, 9), as.Date("2024-01-01") + day, cens,
                                    location_ids = d$town, max_temporal = 15L, n_replicates = 19, seed = 1,
                                    backend = "cpu", day_of_week = TRUE)
  expect_identical(wk$day_of_week, TRUE)
  pt <- scan_space_time_exponential(d$xy[d$town, ], pmin(tm, 9), day, cens, location_ids = d$town,
                                    max_temporal = 15L, n_replicates = 9, seed = 1, purely_temporal = TRUE)
  expect_identical(pt$purely_temporal, TRUE)
  ps <- scan_space_time_exponential(d$xy[d$town, ], pmin(tm, 9), day, cens, location_ids = d$town,
                                    max_temporal = 15L, n_replicates = 9, seed = 1, purely_spatial = TRUE)
  expect_identical(ps$purely_spatial, TRUE)
  expect_identical(wk$clusters$log_likelihood_ratio[1:2], res$clusters$log_likelihood_ratio[1:2])
  expect_error(scan_space_time_exponential(d$xy[d$town, ], -tm, day, n_replicates = 9), "positive")
  expect_error(scan_space_time_exponential(d$xy[d$town, ], tm, day, rep(2, 300), n_replicates = 9),
               "censored must be NULL or TRUE/FALSE", class = "hphawkes_input_error")
})

test_that("scan_continuous_poisson gives Python's continuous Poisson scan", {
  skip_if_no_hphawkes()
  set.seed(4)
  pts <- round(rbind(cbind(runif(300), runif(300)), cbind(rnorm(40, 0.3, 0.03), rnorm(40, 0.7, 0.03))), 6)
  square <- "X >= 0,X <= 1,Y >= 0,Y <= 1"
  res <- scan_continuous_poisson(pts, square, n_replicates = 99, seed = 1, backend = "cpu")
  expect_identical(res$model, "continuous_poisson")
  f <- tmp_csv(pts)
  py <- py_reference(paste("import numpy as np, hphawkes_py as hp",
    sprintf("d = np.loadtxt(r'%s', delimiter=',')", f),
    sprintf("r = hp.scan.continuous_poisson(d, ['%s'], n_replicates=99, seed=1, backend='cpu', progress=False)",
            square),
    "out = {'clusters': r.clusters, 'null': r.null_llr}", sep = "\n"))
  expect_identical(res$null_llr, py$null)
  expect_identical(res$clusters$log_likelihood_ratio, py$clusters$log_likelihood_ratio)
  top <- res$clusters[1, ]
  expect_lt(sqrt((top$x - 0.3)^2 + (top$y - 0.7)^2), 0.1)
  expect_lte(top$p_value, 0.05)
  expect_error(scan_continuous_poisson(pts, 3, n_replicates = 9), "polygons must be a character vector",
               class = "hphawkes_input_error")
})

test_that("scan_bernoulli and scan_poisson take lists of neighbours instead of circles", {
  skip_if_no_hphawkes()
  set.seed(8)  # villages along a river: the neighbours are the nearest along it
  pos <- cumsum(runif(40, 0.5, 1.5))
  ids <- sprintf("V%d", 0:39)
  persons <- sample(20:59, 40, replace = TRUE)
  cases <- rbinom(40, persons, ifelse(seq_len(40) %in% 11:16, 0.3, 0.1))
  nb <- lapply(seq_len(40), function(i) ids[order(abs(pos - pos[i]), seq_len(40))])
  res <- scan_bernoulli(NULL, cases, persons - cases, location_ids = ids, neighbors = nb, n_replicates = 99,
                        seed = 1, backend = "cpu")
  f <- tmp_csv(data.frame(cases = cases, persons = persons, pos = pos))
  py <- py_reference(paste("import numpy as np, hphawkes_py as hp",
    sprintf("d = np.loadtxt(r'%s', delimiter=',')", f),
    "ids = ['V%d' % i for i in range(40)]",
    "nb = []",
    "for i in range(40):",
    "    nb.append(list(map(ids.__getitem__, np.lexsort((np.arange(40), np.abs(d[:, 2] - d[i, 2]))))))",
    "r = hp.scan.bernoulli(None, d[:, 0].astype(int), (d[:, 1] - d[:, 0]).astype(int), location_ids=ids,",
    "    neighbors=nb, n_replicates=99, seed=1, backend='cpu', progress=False)",
    "out = {'clusters': r.clusters, 'null': r.null_llr}", sep = "\n"))
  expect_identical(res$null_llr, py$null)
  expect_identical(res$clusters$log_likelihood_ratio, py$clusters$log_likelihood_ratio)
  expect_true(all(is.na(res$clusters$radius)))
  po <- scan_poisson(NULL, cases, persons, location_ids = ids, neighbors = nb, n_replicates = 19, seed = 1,
                     backend = "cpu")
  expect_true(all(c("V12", "V13") %in% po$clusters$location_ids[[1]]))
  expect_error(scan_bernoulli(NULL, cases, persons - cases, location_ids = ids, neighbors = "V1"),
               "list of location-id vectors", class = "hphawkes_input_error")
})

test_that("scan_poisson reports clusters within a smaller size, the Monte Carlo unchanged", {
  skip_if_no_hphawkes()
  ny <- hphawkes_data("ny_leukemia")
  xy <- ny[, c("x", "y")]
  full <- scan_poisson(xy, ny$cases_floor, ny$population, n_replicates = 19, seed = 1, backend = "cpu")
  res <- scan_poisson(xy, ny$cases_floor, ny$population, n_replicates = 19, seed = 1, backend = "cpu",
                      max_reported_population = 0.1)
  expect_identical(res$null_llr, full$null_llr)
  expect_true(all(res$clusters$population <= 0.1 * sum(ny$population)))
  expect_lt(res$clusters$log_likelihood_ratio[1], full$clusters$log_likelihood_ratio[1])
})

test_that("scan_poisson and scan_bernoulli give Python's isotonic scan", {
  skip_if_no_hphawkes()
  ny <- hphawkes_data("ny_leukemia")
  xy <- ny[, c("x", "y")]
  res <- scan_poisson(xy, ny$cases_floor, ny$population, n_replicates = 19, seed = 1, backend = "cpu",
                      risk_function = "isotonic")
  f <- tmp_csv(cbind(ny$x, ny$y, ny$cases_floor, ny$population))
  py <- py_reference(paste("import numpy as np, hphawkes_py as hp",
    sprintf("d = np.loadtxt(r'%s', delimiter=',')", f),
    "r = hp.scan.poisson(d[:, :2], d[:, 2].astype(np.int64), d[:, 3], n_replicates=19, seed=1, backend='cpu',",
    "    progress=False, risk_function='isotonic')",
    "out = {'clusters': r.clusters, 'null': r.null_llr}", sep = "\n"))
  expect_identical(res$null_llr, py$null)
  top <- res$clusters[1, ]
  expect_identical(top$log_likelihood_ratio, py$clusters$log_likelihood_ratio[1])
  expect_equal(sum(unlist(top$step_cases)), top$cases)
  expect_equal(length(top$step_location_ids[[1]]), top$steps)
  expect_error(scan_bernoulli(xy, ny$cases_floor, ny$population - ny$cases_floor, n_replicates = 9,
                              risk_function = "isotonic", window = "ellipse"), "ellipse")
})

test_that("scan_temporal_normal gives Python's purely temporal normal scan", {
  skip_if_no_hphawkes()
  set.seed(4)
  day <- sample(0:79, 600, replace = TRUE)
  v <- round(rnorm(600, ifelse(day >= 30 & day < 40, 23, 20), 3), 4)
  res <- scan_temporal_normal(as.Date("2024-03-01") + day, v, max_temporal = 15L, n_replicates = 49, seed = 1,
                              backend = "cpu")
  expect_identical(res$model, "temporal_normal")
  f <- tmp_csv(cbind(day + as.numeric(as.Date("2024-03-01")), v))
  py <- py_reference(paste("import numpy as np, hphawkes_py as hp",
    sprintf("d = np.loadtxt(r'%s', delimiter=',')", f),
    "r = hp.scan.temporal_normal(d[:, 0].astype(np.int64), d[:, 1], max_temporal=15, n_replicates=49, seed=1,",
    "    backend='cpu', progress=False)",
    "out = {'clusters': r.clusters, 'null': r.null_llr}", sep = "\n"))
  expect_identical(res$null_llr, py$null)
  expect_identical(res$clusters$log_likelihood_ratio, py$clusters$log_likelihood_ratio)
  expect_true(res$clusters$start[1] >= as.numeric(as.Date("2024-03-28")))
  expect_lte(res$clusters$p_value[1], 0.05)
})

test_that("scan_temporal_exponential finds shorter survival in time", {
  skip_if_no_hphawkes()
  set.seed(2)
  day <- sample(0:99, 600, replace = TRUE)
  tm <- round(rexp(600, ifelse(day >= 40 & day < 50, 1, 1 / 6)) + 0.001, 3)
  res <- scan_temporal_exponential(day, pmin(tm, 8), tm > 8, max_temporal = 20L, n_replicates = 49, seed = 1,
                                   backend = "cpu")
  expect_identical(res$model, "temporal_exponential")
  expect_true(res$clusters$start[1] >= 35 && res$clusters$end[1] <= 54)
  expect_lte(res$clusters$p_value[1], 0.05)
  expect_error(scan_temporal_exponential(day, -tm, n_replicates = 9), "positive")
})

test_that("scan_space_time_ordinal, _multinomial and scan_temporal_categorical give Python's scans", {
  skip_if_no_hphawkes()
  d <- towns(6)
  day <- sample(0:59, 300, replace = TRUE)
  grade <- ifelse(d$near & day >= 20 & day < 30, sample(1:3, 300, TRUE, c(.1, .2, .7)),
                  sample(1:3, 300, TRUE, c(.5, .3, .2)))
  res <- scan_space_time_ordinal(d$xy[d$town, ], grade, as.Date("2024-01-01") + day, location_ids = d$town,
                                 max_temporal = 15L, n_replicates = 99, seed = 1, backend = "cpu", direction = "both")
  expect_identical(res$model, "space_time_ordinal")
  f <- tmp_csv(cbind(d$xy[d$town, ], grade, day + as.numeric(as.Date("2024-01-01")), d$town))
  py <- py_reference(paste("import numpy as np, hphawkes_py as hp",
    sprintf("d = np.loadtxt(r'%s', delimiter=',')", f),
    "r = hp.scan.space_time_ordinal(d[:, :2], d[:, 2], d[:, 3].astype(np.int64),",
    "    location_ids=d[:, 4].astype(np.int64), max_temporal=15, n_replicates=99, seed=1, backend='cpu',",
    "    progress=False, direction='both')",
    "out = {'clusters': r.clusters, 'null': r.null_llr}", sep = "\n"))
  expect_identical(res$null_llr, py$null)
  expect_identical(res$clusters$log_likelihood_ratio, py$clusters$log_likelihood_ratio)
  expect_identical(res$clusters$cluster_type, py$clusters$cluster_type)
  expect_equal(as.numeric(res$clusters$start), as.numeric(py$clusters$start))
  top <- res$clusters[1, ]
  expect_equal(sum(unlist(top$observed_by_category)), top$cases)
  sero <- c("A", "B", "C")[grade]
  mn <- scan_space_time_multinomial(d$xy[d$town, ], factor(sero), day, location_ids = d$town, max_temporal = 15L,
                                    n_replicates = 19, seed = 1, backend = "cpu", purely_temporal = TRUE)
  expect_identical(mn$model, "space_time_multinomial")
  expect_identical(mn$purely_temporal, TRUE)
  expect_identical(unlist(mn$clusters$categories[[1]]), c("A", "B", "C"))
  ps <- scan_space_time_multinomial(d$xy[d$town, ], factor(sero), day, location_ids = d$town, max_temporal = 15L,
                                    n_replicates = 19, seed = 1, backend = "cpu", purely_spatial = TRUE)
  expect_identical(ps$purely_spatial, TRUE)
  # every replicate's maximum is over the purely spatial clusters too
  no_ps <- scan_space_time_multinomial(d$xy[d$town, ], factor(sero), day, location_ids = d$town,
                                       max_temporal = 15L, n_replicates = 19, seed = 1, backend = "cpu")
  expect_true(all(ps$null_llr >= no_ps$null_llr))
  sv <- scan_space_time_ordinal(d$xy[d$town, ], grade, as.Date("2024-01-01") + day, location_ids = d$town,
                                max_temporal = 7L, n_replicates = 19, seed = 1, backend = "cpu", prospective = TRUE,
                                max_population = NULL, max_distance = 3, surveillance_start = as.Date("2024-02-20"))
  expect_true(all(sv$clusters$end == max(as.numeric(as.Date("2024-01-01") + day))))
  tp <- scan_temporal_categorical(day, grade, max_temporal = 15L, n_replicates = 19, seed = 1, backend = "cpu")
  expect_identical(tp$model, "temporal_ordinal")
  wk <- scan_temporal_categorical(as.Date("2024-01-01") + day, grade, max_temporal = 15L, n_replicates = 19, seed = 1,
                                  backend = "cpu", day_of_week = TRUE)
  expect_identical(wk$day_of_week, TRUE)
  expect_false(identical(wk$null_llr, tp$null_llr))
  tm <- scan_temporal_categorical(day, sero, ordinal = FALSE, max_temporal = 15L, n_replicates = 19, seed = 1,
                                  backend = "cpu")
  expect_identical(tm$model, "temporal_multinomial")
  # every interval's free (multinomial) likelihood ratio is at least its order-restricted one
  expect_gte(tm$clusters$log_likelihood_ratio[1], tp$clusters$log_likelihood_ratio[1] - 1e-9)
  expect_error(scan_space_time_ordinal(d$xy[d$town, ], sero, day, n_replicates = 9), "must be numbers")
  expect_error(scan_temporal_categorical(day, grade[-1], n_replicates = 9), "one entry per case")
})
