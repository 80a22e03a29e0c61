test_that("scan_space_time_permutation with R Dates equals Python, and scan_run_prm runs SaTScan's NYC file", {
  skip_if_no_hphawkes()
  set.seed(1)
  n <- 120L
  pts <- matrix(runif(40), ncol = 2)
  loc <- sample.int(20L, n, replace = TRUE)
  day <- as.Date("2021-03-01") + sample.int(15L, n, replace = TRUE) - 1L
  res <- scan_space_time_permutation(pts[loc, ], rep(1L, n), day, location_ids = loc, max_temporal_days = 5L,
                                     n_replicates = 49L, seed = 3L, backend = "cpu")
  expect_s3_class(res, "hphawkes_scan_st")
  cl <- res$clusters
  expect_s3_class(cl$start, "Date")
  expect_true(all(cl$end - cl$start + 1 == cl$days))
  # same analysis straight from Python on the same records (day numbers since 1970-01-01)
  f <- tmp_csv(cbind(pts[loc, ], loc, as.numeric(day)))
  py <- py_reference(paste(
    "import numpy as np, hphawkes_py as hp",
    sprintf("a = np.loadtxt('%s', delimiter=',')", f),
    "t = np.datetime64('1970-01-01') + a[:, 3].astype('int64').astype('timedelta64[D]')",
    "r = hp.scan.space_time_permutation(a[:, :2], np.ones(len(a)), t, location_ids=[str(int(v)) for v in a[:, 2]],",
    "    max_temporal_days=5, n_replicates=49, seed=3, backend='cpu', progress=False)",
    "out = {'llr': r.clusters.log_likelihood_ratio.to_numpy(), 'cases': r.clusters.cases.to_numpy(),",
    "       'null': r.null_llr}", sep = "\n"))
  expect_identical(cl$log_likelihood_ratio, py$llr)
  expect_identical(as.numeric(cl$cases), as.numeric(py$cases))
  expect_identical(res$null_llr, py$null)
  # observed count of the most likely cylinder recomputed in R
  top <- cl[1, ]
  ids <- as.integer(top$location_ids[[1]])
  expect_identical(as.numeric(sum(loc %in% ids & day >= top$start & day <= top$end)), as.numeric(top$cases))
  expect_output(print(res), "Space-time permutation scan")

  prm <- hphawkes_data_path("scan/satscan_sample_data/NYCSpaceTimePermutation.prm")
  nyc <- suppressWarnings(scan_run_prm(prm, n_replicates = 19L, seed = 1L, backend = "cpu"))
  expect_identical(nyc$clusters$location_ids[[1]][1:3], c("11418", "11415", "11419"))
  expect_identical(nyc$clusters$end[1], as.Date("2001-11-24"))
  expect_error(scan_space_time_permutation(pts[loc, ], rep(1L, n), day, prospective = "yes"), "prospective",
               class = "hphawkes_python_error")
})
