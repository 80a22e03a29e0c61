test_that("kde_fit on redwood matches Python and the surface has the right coordinates", {
  skip_if_no_hphawkes()
  rw <- hphawkes_data("redwood")
  pts <- rw[[1]]
  expect_identical(dim(pts), c(62L, 2L))
  win <- kde_window("asc", path = hphawkes_data_path("kde/zhang2017/redwood.asc.gz"))
  expect_s3_class(win, "kde_window")
  fit <- kde_fit(pts, win, method = "adaptive", backend = "cpu")
  expect_s3_class(fit, "hphawkes_kde")
  expect_length(fit$bandwidths, 62L)
  py <- py_reference(paste(
    "import hphawkes_py as hp",
    "pts, mask = hp.datasets.load_redwood()",
    "win = hp.kde.Window.from_asc(mask)",
    "f = hp.kde.fit(pts, win, method='adaptive', backend='cpu')",
    "r = f.density_surface()",
    "out = {'h': f.h, 'alpha': f.alpha, 'bw': f.bandwidths, 'll': f.log_likelihood, 'values': r.values}",
    sep = "\n"))
  expect_identical(fit$h, py$h)
  expect_identical(fit$alpha, py$alpha)
  expect_identical(fit$bandwidths, py$bw)
  expect_identical(fit$log_likelihood, py$ll)
  s <- kde_surface(fit)
  expect_s3_class(s, "kde_surface")
  expect_identical(s$z, py$values)
  # coordinates: density_at the centre of cell (row i, col j) equals z[i, j]
  inside <- which(!is.na(s$z), arr.ind = TRUE)
  pick <- inside[round(seq(1, nrow(inside), length.out = 25)), , drop = FALSE]
  centres <- cbind(s$x[pick[, 2]], s$y[pick[, 1]])
  expect_equal(kde_density_at(fit, centres), s$z[pick], tolerance = 1e-10)
  df <- as.data.frame(s)
  expect_identical(nrow(df), length(s$z))
  expect_s3_class(autoplot(s), "ggplot")
  grDevices::pdf(NULL); on.exit(grDevices::dev.off(), add = TRUE)
  expect_invisible(plot(s))
  expect_output(print(fit))
  expect_s3_class(summary(fit), "data.frame")
})

test_that("kde with a fixed bandwidth equals a Gaussian kernel sum (no edge correction)", {
  skip_if_no_hphawkes()
  set.seed(3)
  pts <- cbind(runif(40, 0.2, 0.8), runif(40, 0.2, 0.8))
  win <- kde_window("rectangle", xmin = 0, xmax = 1, ymin = 0, ymax = 1, cell_size = 0.02)
  fit <- kde_fit(pts, win, method = "fixed", bandwidth = 0.05, edge_correction = FALSE,
                 cutoff = 10, backend = "cpu")
  q <- cbind(c(0.3, 0.5, 0.71), c(0.4, 0.5, 0.33))
  d2 <- outer(q[, 1], pts[, 1], "-")^2 + outer(q[, 2], pts[, 2], "-")^2
  direct <- rowSums(exp(-d2 / (2 * 0.05^2)) / (2 * pi * 0.05^2))
  expect_equal(kde_density_at(fit, q), direct, tolerance = 1e-9)
  expect_equal(fit$h, 0.05)
  expect_equal(kde_bandwidth(pts),
               (2 / (3 * 40))^(1 / 4) * sqrt(sum(apply(pts, 2, function(v) mean((v - mean(v))^2)))),
               tolerance = 1e-12)
  expect_error(kde_fit(pts, win, method = "nonsense"), "method", class = "hphawkes_python_error")
})

test_that("kde_relative_risk on chorley matches Python, with p-values and tolerance contours", {
  skip_if_no_hphawkes()
  ch <- hphawkes_data("point_pattern", name = "chorley")
  win <- kde_window("asc", path = hphawkes_data_path("kde/chorley_mask_0.1km.asc.gz"))
  cases <- as.matrix(ch[ch$mark == "larynx", c("x", "y")])
  controls <- as.matrix(ch[ch$mark == "lung", c("x", "y")])
  rr <- kde_relative_risk(cases, controls, win, bandwidth = 1.5, backend = "cpu")
  expect_s3_class(rr, "hphawkes_relrisk")
  expect_identical(rr$h, 1.5)
  py <- py_reference(paste(
    "import hphawkes_py as hp",
    "df = hp.datasets.load_point_pattern('chorley')",
    "w = hp.kde.Window.from_asc(hp.datasets.path('kde/chorley_mask_0.1km.asc.gz'))",
    "c = df[df.mark == 'larynx'][['x', 'y']].to_numpy(); k = df[df.mark == 'lung'][['x', 'y']].to_numpy()",
    "rr = hp.kde.relative_risk(c, k, w, bandwidth=1.5, backend='cpu')",
    "out = {'z': rr.surface().values, 'p': rr.p_values('asymptotic').values,",
    "       'mc': rr.p_values('monte_carlo', n_replicates=19, seed=3, progress=False).values}",
    sep = "\n"))
  expect_identical(rr$surface$z, py$z)
  expect_identical(kde_risk_pvalues(rr)$z, py$p)
  expect_identical(kde_risk_pvalues(rr, "monte_carlo", n_replicates = 19, seed = 3)$z, py$mc)
  expect_s3_class(autoplot(rr), "ggplot")
  expect_output(print(rr), "58 cases, 978 controls")
  expect_error(kde_relative_risk(cases, controls, NULL), "window")
  expect_error(kde_relative_risk(cases, controls, win, bandwidth = "silverman"), "bandwidth")
})
