# Scan outputs (SaTScan tables, cluster geometry, HTML map) and the normal, exponential,
# iterative and power analyses, against the Python package's own results.

grave_scan <- function() {
  g <- hphawkes_data("grave")
  scan_bernoulli(g[, c("x", "y")], g$case, 1 - g$case, n_replicates = 99, seed = 1, backend = "cpu")
}

grave_py <- paste(
  "import hphawkes_py as hp",
  "g = hp.datasets.load_grave()",
  "res = hp.scan.bernoulli(g[['x', 'y']].to_numpy(), g['case'], 1 - g['case'], n_replicates=99, seed=1,",
  "                        backend='cpu', progress=False)", sep = "\n")

test_that("scan_write_satscan writes SaTScan's tables, equal to Python's files", {
  skip_if_no_hphawkes()
  res <- grave_scan()
  dir_r <- file.path(tempfile("satscan_r")); dir.create(dir_r)
  files <- scan_write_satscan(res, file.path(dir_r, "grave.txt"), geometry = "geojson")
  expect_identical(basename(files), c("grave.txt", "grave.col.csv", "grave.gis.csv", "grave.rr.csv",
                                      "grave.llr.csv", "grave.clusters.geojson"))
  expect_true(all(file.exists(files)))
  dir_py <- file.path(tempfile("satscan_py")); dir.create(dir_py)
  py_reference(paste(grave_py, sprintf("hp.scan.write_satscan(res, r'%s/grave.txt', geometry=['geojson'])", dir_py),
                     "out = 0", sep = "\n"))
  for (f in basename(files)[-1])  # the report holds the run time; the tables are the same bytes
    expect_identical(readLines(file.path(dir_r, f), warn = FALSE), readLines(file.path(dir_py, f), warn = FALSE),
                     info = f)
  col <- utils::read.csv(files[2])
  expect_identical(col$OBSERVED, as.integer(res$clusters$cases))
  expect_equal(col$LLR, res$clusters$log_likelihood_ratio, tolerance = 1e-12)
  rep <- readLines(files[1])
  expect_true(any(grepl("CLUSTERS DETECTED", rep, fixed = TRUE)))
  expect_true(any(grepl("Log likelihood ratio..: 7.419340", rep, fixed = TRUE)))
  only_col <- scan_write_satscan(res, file.path(dir_r, "only.txt"), tables = "col", report = FALSE)
  expect_identical(basename(only_col), "only.col.csv")
  # refusals, before anything is written
  expect_error(scan_write_satscan(res$clusters, file.path(dir_r, "x.txt")), "result must be a scan result",
               class = "hphawkes_input_error")
  expect_error(scan_write_satscan(res, file.path(dir_r, "no_such_dir", "x.txt")), "does not exist",
               class = "hphawkes_input_error")
  expect_error(scan_write_satscan(res, file.path(dir_r, "x.txt"), tables = "colx"), "colx",
               class = "hphawkes_python_error")
  expect_error(scan_write_satscan(res, file.path(dir_r, "x.txt"), geometry = NA), "geometry must be",
               class = "hphawkes_input_error")
  expect_error(scan_write_satscan(res, file.path(dir_r, "x.txt"), report = NA), "report must be TRUE or FALSE")
  expect_error(scan_write_satscan(res, file.path(dir_r, "x.txt"), titl = "a"), "abbreviation of 'title'")
})

test_that("scan_geometry gives Python's cluster polygons (data frame without sf, sf with it)", {
  skip_if_no_hphawkes()
  res <- grave_scan()
  poly <- scan_geometry(res, n_vertices = 16, sf = FALSE)
  expect_s3_class(poly, "data.frame")
  expect_false(inherits(poly, "sf"))
  py <- py_reference(paste(grave_py, "from hphawkes_py.scan import geometry",
    "import numpy as np",
    "out = {'rings': [], 'llr': [], 'obs': [], 'ids': []}",
    "for p, r in geometry.cluster_polygons(res, n_vertices=16):",
    "    out['rings'].append(np.asarray(r, dtype=float)); out['llr'].append(p['LLR'])",
    "    out['obs'].append(p['OBSERVED']); out['ids'].append(p['LOC_ID'])", sep = "\n"))
  expect_identical(nrow(poly), nrow(res$clusters))
  expect_identical(poly$LLR, as.numeric(py$llr))
  expect_identical(poly$OBSERVED, as.integer(py$obs))
  expect_identical(poly$LOC_ID, as.character(py$ids))
  for (k in seq_len(nrow(poly))) expect_identical(unname(poly$geometry[[k]]), unname(py$rings[[k]]))
  # the ring is the cluster's circle: 17 vertices (closed) at the cluster's radius from its centre
  ring <- poly$geometry[[1]]
  expect_identical(dim(ring), c(17L, 2L))
  expect_identical(ring[1, ], ring[17, ])
  r <- sqrt((ring[, 1] - res$clusters$x[1])^2 + (ring[, 2] - res$clusters$y[1])^2)
  expect_lt(max(abs(r - res$clusters$radius[1])), 1e-6 * res$clusters$radius[1])
  if (requireNamespace("sf", quietly = TRUE)) {
    s <- scan_geometry(res, n_vertices = 16)
    expect_s3_class(s, "sf")
    expect_identical(unname(sf::st_coordinates(s)[sf::st_coordinates(s)[, "L2"] == 1, 1:2]),
                     unname(poly$geometry[[1]]))
    expect_true(is.na(sf::st_crs(s)))
    expect_equal(as.numeric(sf::st_area(s)[1]), 16 / 2 * res$clusters$radius[1]^2 * sin(2 * pi / 16),
                 tolerance = 1e-9)
  } else {
    expect_identical(scan_geometry(res, n_vertices = 16), poly)  # the default without sf
    expect_error(scan_geometry(res, sf = TRUE), "needs the R package sf", class = "hphawkes_input_error")
  }
  expect_error(scan_geometry(res, n_vertices = 4), "n_vertices must be a whole number >= 8")
  expect_error(scan_geometry(res, n_vertices = 8.5), "n_vertices must be a single whole number")
  expect_error(scan_geometry(res, sf = NA), "sf must be TRUE or FALSE")
  expect_error(scan_geometry(list()), "result must be a scan result")
})

test_that("scan_write_geometry and scan_cluster_map write GeoJSON, KML and HTML", {
  skip_if_no_hphawkes()
  res <- grave_scan()
  f <- scan_write_geometry(res, tempfile(fileext = ".geojson"), n_vertices = 8)
  gj <- jsonlite::fromJSON(f, simplifyVector = FALSE)
  expect_identical(gj$type, "FeatureCollection")
  expect_length(gj$features, nrow(res$clusters))
  expect_identical(gj$features[[1]]$properties$OBSERVED, as.integer(res$clusters$cases[1]))
  expect_length(gj$features[[1]]$geometry$coordinates[[1]], 9L)
  # KML needs latitude/longitude data
  expect_error(scan_write_geometry(res, tempfile(fileext = ".kml")), "great_circle|Cartesian|latitude",
               class = "hphawkes_python_error")
  prm <- hphawkes_data_path("scan/satscan_sample_data/NYCfever.prm")
  ll <- suppressWarnings(scan_run_prm(prm, n_replicates = 9, seed = 1, backend = "cpu"))
  k <- scan_write_geometry(ll, tempfile(fileext = ".kml"))
  kml <- paste(readLines(k, warn = FALSE), collapse = "\n")
  expect_identical(lengths(regmatches(kml, gregexpr("<Polygon>", kml))), nrow(ll$clusters))
  s <- scan_geometry(ll, sf = FALSE)
  expect_true(all(abs(s$geometry[[1]][, 2]) <= 90))  # (longitude, latitude)
  page <- scan_cluster_map(res, max_clusters = 1)
  expect_type(page, "character")
  expect_match(page, "^<!DOCTYPE html>")
  expect_match(page, "<svg")
  h <- scan_cluster_map(res, tempfile(fileext = ".html"))
  expect_identical(paste(readLines(h, warn = FALSE), collapse = "\n"),
                   sub("\n$", "", scan_cluster_map(res)))
  expect_error(scan_write_geometry(res, tempfile(), format = "svg"), "format must be NULL")
  expect_error(scan_cluster_map(res, engine = "leaflet"), "engine must be \"svg\" or \"folium\"")
  expect_error(scan_cluster_map(res, engine = "folium"), "needs a path")
  expect_error(scan_cluster_map(res, max_clusters = -1), "max_clusters must be NULL or a whole number >= 0")
  expect_error(scan_cluster_map(res, width = 0), "width must be a whole number >= 1")
})

test_that("scan_normal and scan_exponential equal Python's and find the planted cluster", {
  skip_if_no_hphawkes()
  set.seed(2)
  xy <- cbind(runif(30, 0, 10), runif(30, 0, 10))
  loc <- rep(1:30, each = 5)
  near <- sqrt((xy[, 1] - 2)^2 + (xy[, 2] - 2)^2) < 2.5
  v <- rnorm(150, ifelse(near[loc], 3, 0))
  res <- scan_normal(xy[loc, ], v, location_ids = loc, n_replicates = 99, seed = 1, backend = "cpu")
  expect_identical(res$model, "normal")
  cl <- res$clusters
  inside <- loc %in% cl$location_ids[[1]]
  expect_equal(cl$mean_inside[1], mean(v[inside]), tolerance = 1e-12)
  expect_equal(cl$mean_outside[1], mean(v[!inside]), tolerance = 1e-12)
  expect_identical(as.numeric(cl$cases[1]), as.numeric(sum(inside)))
  expect_setequal(cl$location_ids[[1]], which(near))
  expect_lte(cl$p_value[1], 0.05)
  f <- tmp_csv(cbind(xy[loc, ], v, loc))
  py <- py_reference(paste("import numpy as np, hphawkes_py as hp",
    sprintf("d = np.loadtxt(r'%s', delimiter=',')", f),
    "r = hp.scan.normal(d[:, :2], d[:, 2], location_ids=d[:, 3].astype(np.int64), n_replicates=99, seed=1,",
    "                   backend='cpu', progress=False)",
    "out = {'clusters': r.clusters, 'null': r.null_llr}", sep = "\n"))
  expect_identical(res$null_llr, py$null)
  expect_identical(cl$log_likelihood_ratio, py$clusters$log_likelihood_ratio)
  w <- scan_normal(xy[loc, ], v, weights = rep(2, 150), location_ids = loc, n_replicates = 19, seed = 1)
  expect_identical(w$model, "weighted_normal")
  expect_equal(w$clusters$log_likelihood_ratio[1], cl$log_likelihood_ratio[1], tolerance = 1e-9)
  expect_error(scan_normal(xy[loc, ], c(v[-1], NA), n_replicates = 9), "values has 1 missing value")
  expect_error(scan_normal(xy[loc, ], as.character(v), n_replicates = 9), "values must be numeric")

  set.seed(5)
  xy <- cbind(runif(200, 0, 10), runif(200, 0, 10))
  near <- sqrt((xy[, 1] - 8)^2 + (xy[, 2] - 8)^2) < 2
  tm <- rexp(200, ifelse(near, 3, 1))
  cens <- runif(200) < 0.2
  ex <- scan_exponential(xy, tm, cens, n_replicates = 99, seed = 1, backend = "cpu")
  expect_identical(ex$model, "exponential")
  ec <- ex$clusters
  ins <- seq_len(200) %in% (ec$location_ids[[1]] + 1)
  expect_identical(as.numeric(ec$cases[1]), as.numeric(sum(ins & !cens)))
  expect_equal(ec$mean_time_inside[1], mean(tm[ins]), tolerance = 1e-12)
  expect_gt(mean(near[ins]), 0.5)
  expect_lte(ec$p_value[1], 0.05)
  f <- tmp_csv(cbind(xy, tm, as.numeric(cens)))
  py <- py_reference(paste("import numpy as np, hphawkes_py as hp",
    sprintf("d = np.loadtxt(r'%s', delimiter=',')", f),
    "r = hp.scan.exponential(d[:, :2], d[:, 2], d[:, 3].astype(bool), n_replicates=99, seed=1,",
    "                        backend='cpu', progress=False)",
    "out = r.null_llr", sep = "\n"))
  expect_identical(ex$null_llr, py)
  expect_error(scan_exponential(xy, tm, rep(2, 200), n_replicates = 9), "censored must be NULL or TRUE/FALSE")
  expect_error(scan_exponential(xy, -tm, n_replicates = 9), "times", class = "hphawkes_python_error")
})

test_that("scan_iterative removes each cluster and rescans, as Python's iterative_scan", {
  skip_if_no_hphawkes()
  ny <- hphawkes_data("ny_leukemia")
  it <- scan_iterative("poisson", ny[, c("x", "y")], ny$cases_floor, ny$population, max_iterations = 3,
                       max_p_value = 0.5, n_replicates = 99, seed = 1, backend = "cpu")
  expect_s3_class(it, "hphawkes_iterative_scan")
  expect_identical(it$clusters$iteration, 1:3)
  expect_length(it$results, 3L)
  expect_identical(it$stop_reason, "max_iterations")
  # each iteration scans what the earlier ones left
  expect_identical(it$clusters$remaining_cases[1], sum(ny$cases_floor))
  expect_identical(it$clusters$remaining_cases[2], sum(ny$cases_floor) - as.integer(it$clusters$cases[1]))
  expect_identical(it$clusters$log_likelihood_ratio[1], it$results[[1]]$clusters$log_likelihood_ratio[1])
  py <- py_reference(paste("import hphawkes_py as hp", "ny = hp.datasets.load_ny_leukemia()",
    "r = hp.scan.iterative_scan('poisson', ny[['x', 'y']].to_numpy(), ny['cases_floor'], ny['population'],",
    "    max_iterations=3, max_p_value=0.5, n_replicates=99, seed=1, backend='cpu', progress=False)",
    "out = r.clusters", sep = "\n"))
  expect_identical(it$clusters, py)
  expect_output(print(it), "Iterative poisson scan: 3 iteration")
  expect_identical(summary(it)$location_ids, NULL)
  expect_identical(nrow(scan_geometry(it, sf = FALSE)), 3L)  # the outputs take the iterations' clusters
  g <- hphawkes_data("grave")
  ib <- scan_iterative("bernoulli", g[, c("x", "y")], g$case, 1 - g$case, max_iterations = 2,
                       max_p_value = 1, n_replicates = 99, seed = 1)
  expect_identical(ib$clusters$iteration, 1:2)
  expect_error(scan_iterative("normal", g[, c("x", "y")], g$case), "model must be \"bernoulli\" or \"poisson\"")
  expect_error(scan_iterative("poisson", ny[, c("x", "y")], ny$cases_floor, ny$population, window = "circle",
                              grid = 1), "unknown argument 'grid'")
  expect_error(scan_iterative("poisson", ny[, c("x", "y")], ny$cases_floor, ny$population, n_replicates = 9),
               "n_replicates", class = "hphawkes_python_error")
  expect_error(scan_iterative("poisson", ny[, c("x", "y")], ny$cases_floor, ny$population, max_iterations = 0),
               "max_iterations", class = "hphawkes_python_error")
})

test_that("scan_power equals Python's power evaluation and grows with the relative risk", {
  skip_if_no_hphawkes()
  ny <- hphawkes_data("ny_leukemia")
  rr <- rbind(ifelse(seq_len(nrow(ny)) <= 10, 1.5, 1), ifelse(seq_len(nrow(ny)) <= 10, 4, 1))
  pw <- scan_power(ny[, c("x", "y")], ny$cases_floor, ny$population, rr, n_replicates = 99,
                   n_power_replicates = 40, critical_values = "gumbel", seed = 1, backend = "cpu")
  expect_s3_class(pw, "hphawkes_scan_power")
  expect_identical(dim(pw$alternative_llr), c(2L, 40L))
  expect_identical(names(pw$critical_values), c("0.05", "0.01", "0.001"))
  p05 <- pw$table$power[pw$table$alpha == 0.05]
  expect_identical(p05, c(mean(pw$alternative_llr[1, ] > pw$critical_values[["0.05"]] + 1e-9),
                          mean(pw$alternative_llr[2, ] > pw$critical_values[["0.05"]] + 1e-9)))
  expect_lt(p05[1], p05[2])
  expect_gt(p05[2], 0.9)
  f <- tmp_csv(rr)
  py <- py_reference(paste("import numpy as np, hphawkes_py as hp", "ny = hp.datasets.load_ny_leukemia()",
    sprintf("rr = np.loadtxt(r'%s', delimiter=',')", f),
    "r = hp.scan.power(ny[['x', 'y']].to_numpy(), ny['cases_floor'], ny['population'], rr, n_replicates=99,",
    "    n_power_replicates=40, critical_values='gumbel', seed=1, backend='cpu', progress=False)",
    "out = {'table': r.table, 'alt': r.alternative_llr}", sep = "\n"))
  expect_identical(pw$table, py$table)
  expect_identical(pw$alternative_llr, py$alt)
  expect_output(print(pw), "Estimated power")
  fixed <- scan_power(ny[, c("x", "y")], ny$cases_floor, ny$population, rr[2, ], n_replicates = 9,
                      n_power_replicates = 20, critical_values = c(8, 10, 13), seed = 1)
  expect_identical(unname(fixed$critical_values), c(8, 10, 13))
  expect_error(scan_power(ny[, c("x", "y")], ny$cases_floor, ny$population, rr, critical_values = c(8, 10)),
               "critical_values must be")
  expect_error(scan_power(ny[, c("x", "y")], ny$cases_floor, ny$population, "2"), "relative_risks must be numeric")
  expect_error(scan_power(ny[, c("x", "y")], ny$cases_floor, ny$population, -rr, n_replicates = 9),
               "relative", class = "hphawkes_python_error")
})
