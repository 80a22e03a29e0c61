# FCS files, FCS folders in hdp_mixture, label draws, posterior similarity, point partition and
# the cytometry summaries, against the Python package and NumPy-style references in R.

skip_if_no_flowio <- function() {
  skip_if_no_hphawkes()
  if (!reticulate::py_module_available("flowio")) testthat::skip("the Python package flowio is not installed")
}

# Write an events matrix as an FCS file with FlowIO (float32 values, channel names).
write_fcs <- function(path, X, channels) {
  csv <- tmp_csv(X)
  reticulate::py_run_string(sprintf(paste0("import flowio, numpy as np\n",
    "ev = np.loadtxt(r'%s', delimiter=',', dtype=np.float64, ndmin=2).astype(np.float32)\n",
    "with open(r'%s', 'wb') as fh:\n",
    "    flowio.create_fcs(fh, ev.ravel(), [%s])\n"), csv, path,
    paste0("'", channels, "'", collapse = ", ")))
  invisible(path)
}

test_that("read_fcs returns the file's events, transformed as asked", {
  skip_if_no_flowio()
  set.seed(1)
  X <- cbind(runif(50, 100, 1000), rgamma(50, 2, 0.01), rnorm(50, 500, 50))
  f <- write_fcs(tempfile(fileext = ".fcs"), X, c("FSC-A", "CD4", "CD8"))
  raw <- read_fcs(f)
  expect_s3_class(raw, "data.frame")
  expect_identical(names(raw), c("FSC-A", "CD4", "CD8"))
  expect_equal(unname(as.matrix(raw)), X, tolerance = 1e-6)  # float32 in the file
  meta <- attr(raw, "fcs")
  expect_identical(meta$channels, c("FSC-A", "CD4", "CD8"))
  expect_identical(meta$path, normalizePath(f))
  expect_false(meta$compensated)
  tr <- read_fcs(f, transform = "arcsinh", cofactor = 150)
  # the fluorescence channels are transformed, scatter is not
  expect_identical(tr[["FSC-A"]], raw[["FSC-A"]])
  expect_equal(tr$CD4, asinh(raw$CD4 / 150), tolerance = 1e-15)
  expect_equal(tr$CD8, asinh(raw$CD8 / 150), tolerance = 1e-15)
  expect_identical(attr(tr, "fcs")$transformed_channels, c("CD4", "CD8"))
  only <- read_fcs(f, channels = c("CD8", "CD4"))
  expect_identical(names(only), c("CD8", "CD4"))
  expect_identical(only$CD4, raw$CD4)
  py <- py_reference(paste("import hphawkes_py as hp",
    sprintf("out = hp.mixture.read_fcs(r'%s', transform='arcsinh', cofactor=150.0)", f), sep = "\n"))
  expect_identical(unname(as.matrix(tr)), unname(as.matrix(py)))
  # refusals
  expect_error(read_fcs(file.path(tempdir(), "no_such.fcs")), "does not exist", class = "hphawkes_input_error")
  expect_error(read_fcs(c(f, f)), "path must be a single non-empty string")
  expect_error(read_fcs(f, channels = 2:3), "channels must be NULL or channel names")
  expect_error(read_fcs(f, channels = "CD3"), "CD3", class = "hphawkes_python_error")
  expect_error(read_fcs(f, transform = "log"), "transform must be NULL, \"arcsinh\" or \"logicle\"")
  expect_error(read_fcs(f, cofactor = "5"), "cofactor must be a single number")
  expect_error(read_fcs(f, compensate = NA), "compensate must be TRUE or FALSE")
  expect_error(read_fcs(f, column_names = "names"), "column_names must be \"pnn\" or \"pns\"")
  expect_error(read_fcs(f, cofac = 5), "abbreviation of 'cofactor'", class = "hphawkes_input_error")
})

test_that("read_fcs_folder and hdp_mixture read a folder or a list of FCS files", {
  skip_if_no_flowio()
  set.seed(0)
  centres <- rbind(c(0, 0), c(4, 0), c(0, 4))
  sample_of <- function(counts) {
    z <- rep(1:3, counts)
    centres[z, ] + matrix(rnorm(2 * length(z), sd = 0.5), ncol = 2, dimnames = list(NULL, c("CD4", "CD8")))
  }
  samples <- list(b = sample_of(c(100, 100, 0)), a = sample_of(c(140, 60, 0)), c = sample_of(c(80, 60, 60)))
  d <- tempfile("fcs_folder"); dir.create(d)
  for (nm in names(samples)) write_fcs(file.path(d, paste0(nm, ".fcs")), samples[[nm]], c("CD4", "CD8"))
  s <- read_fcs_folder(d)
  expect_identical(names(s), c("a", "b", "c"))  # sorted by file name
  expect_equal(unname(as.matrix(s$b)), unname(samples$b), tolerance = 1e-6)
  expect_identical(vapply(s, nrow, integer(1)), c(a = 200L, b = 200L, c = 200L))
  expect_length(read_fcs_folder(d, pattern = "a*.fcs"), 1L)
  m_dir <- hdp_mixture(d, n_components = 6, n_iter = 30, burn_in = 30, seed = 1)
  m_files <- hdp_mixture(as.list(file.path(d, c("a.fcs", "b.fcs", "c.fcs"))), n_components = 6, n_iter = 30,
                         burn_in = 30, seed = 1)
  m_frames <- hdp_mixture(s, n_components = 6, n_iter = 30, burn_in = 30, seed = 1)
  expect_identical(m_dir$sample_names, c("a", "b", "c"))
  expect_identical(m_dir$group_weights, m_frames$group_weights)
  expect_identical(m_files$group_weights, m_frames$group_weights)
  # the third sample alone has the population at (0, 4)
  expect_gt(m_dir$group_cluster_weights[3, which.min(abs(m_dir$cluster_means[, 2] - 4))], 0.2)
  m_ch <- hdp_mixture(d, fcs = list(channels = "CD8"), n_components = 4, n_iter = 10, burn_in = 10, seed = 1)
  expect_identical(ncol(m_ch$means), 1L)
  expect_error(read_fcs_folder(file.path(d, "a.fcs")), "is not an existing folder")
  expect_error(hdp_mixture(d, fcs = list(chanels = "CD4")), "unknown read_fcs setting 'chanels'")
  expect_error(hdp_mixture(d, fcs = "CD4"), "fcs must be a named list")
  expect_error(hdp_mixture(file.path(d, "nope.fcs")), "neither an FCS file nor a folder")
  expect_error(hdp_mixture(d, fcs = list(pattern = "*.none")), "has no file matching")
})

test_that("posterior_similarity and point_partition match R references and Python", {
  skip_if_no_hphawkes()
  set.seed(3)
  truth <- rep(1:3, c(12, 8, 5))
  z <- t(replicate(30, { v <- truth; flip <- sample(25, 3); v[flip] <- sample(1:4, 3, TRUE); v }))
  ps <- posterior_similarity(z)
  ref <- matrix(0, 25, 25)
  for (s in seq_len(nrow(z))) ref <- ref + outer(z[s, ], z[s, ], "==")
  expect_identical(ps, ref / nrow(z))
  expect_identical(posterior_similarity(z + 10L), ps)  # any coding of the labels
  expect_identical(posterior_similarity(z, index = c(2, 20)), ps[c(2, 20), c(2, 20)])
  expect_identical(posterior_similarity(z[1, ]), 1 * outer(z[1, ], z[1, ], "=="))
  expect_identical(posterior_similarity(z, backend = "emulator"), ps)
  pp <- point_partition(z, seed = 1)
  expect_s3_class(pp, "hphawkes_partition")
  expect_identical(pp$labels, truth)  # numbered by decreasing size, 1-based
  expect_identical(pp$n_clusters, 3L)
  py <- py_reference(paste("import numpy as np, hphawkes_py as hp",
    sprintf("z = np.loadtxt(r'%s', delimiter=',').astype(np.int64)", tmp_csv(z)),
    "p = hp.mixture.point_partition(z, seed=1)",
    "out = {'labels': p.labels, 'loss': p.expected_loss}", sep = "\n"))
  expect_identical(pp$labels, as.integer(py$labels) + 1L)
  expect_identical(pp$expected_loss, py$loss)
  expect_identical(point_partition(z, loss = "binder", seed = 1)$labels, truth)
  expect_output(print(pp), "3 clusters")
  expect_error(posterior_similarity(z + 0.5), "labels must be whole numbers")
  expect_error(posterior_similarity(matrix("a", 2, 2)), "labels must be whole-number labels")
  expect_error(posterior_similarity(replace(z, 5, NA)), "labels has 1 missing value")
  expect_error(posterior_similarity(z, index = 26), "index must be NULL or 1-based event numbers in 1..25")
  expect_error(point_partition(z, loss = "VIx"), "VIx", class = "hphawkes_python_error")
  expect_error(point_partition(z, loss = 1), "loss must be \"VI\" or \"binder\"")
  expect_error(point_partition(z, n_runs = 1.5), "n_runs must be a single whole number")
})

test_that("mixture_label_draws feeds the partition functions from a Gibbs fit", {
  skip_if_no_hphawkes()
  X <- as.matrix(hphawkes_data("faithful")[, c("eruptions", "waiting")])
  m <- tdp_mixture(X, n_components = 8, n_iter = 40, burn_in = 20, seed = 1)
  z <- mixture_label_draws(m, X, n_draws = 10, seed = 1)
  expect_identical(dim(z), c(10L, nrow(X)))
  expect_true(all(z >= 1L & z <= 8L))
  pp <- point_partition(z, seed = 1)
  # short and long eruptions: two clusters hold nearly all events
  expect_gte(sum(sort(table(pp$labels), decreasing = TRUE)[1:2]), 0.95 * nrow(X))
  cs <- cluster_summary(X, pp$labels)
  expect_lt(min(cs$eruptions[1:2]), 3)  # one cluster of short (< 3 min) eruptions, one of long
  expect_gt(max(cs$eruptions[1:2]), 3)
  expect_equal(cs$eruptions[order(cs$eruptions)], sort(tapply(X[, "eruptions"], pp$labels, stats::median)),
               ignore_attr = TRUE)
  expect_error(mixture_label_draws(X, X), "object must be a tdp_mixture or hdp_mixture")
  expect_error(mixture_label_draws(m, list(X)), "newdata must be a matrix or data frame for a tdp_mixture")
  expect_error(mixture_label_draws(m, X, group = 1), "group is for an hdp_mixture fit only")
})

test_that("cluster_summary and sample_proportions tabulate clusters as R does", {
  skip_if_no_hphawkes()
  set.seed(4)
  d <- data.frame(CD4 = rnorm(60), CD8 = rexp(60))
  lab <- sample(c(3, 1, 7), 60, TRUE)
  cs <- cluster_summary(d, lab)
  expect_identical(cs$cluster, c(1L, 3L, 7L))
  expect_identical(cs$events, as.integer(table(lab)))
  expect_equal(cs$proportion, as.numeric(table(lab)) / 60, tolerance = 1e-15)
  expect_equal(cs$CD4, as.numeric(tapply(d$CD4, lab, stats::median)), tolerance = 1e-15)
  expect_equal(cluster_summary(d, lab, statistic = "mean")$CD8, as.numeric(tapply(d$CD8, lab, mean)),
               tolerance = 1e-14)
  smp <- sample(c("s1", "s2", "s3"), 60, TRUE)
  sp <- sample_proportions(lab, smp)
  ref <- prop.table(table(sample = smp, cluster = lab), 1)
  expect_identical(dimnames(sp), list(sample = c("s1", "s2", "s3"), cluster = c("1", "3", "7")))
  expect_equal(unclass(sp), matrix(ref, 3, 3, dimnames = dimnames(sp)), tolerance = 1e-15)
  expect_equal(rowSums(sp), c(s1 = 1, s2 = 1, s3 = 1), tolerance = 1e-15)
  expect_error(cluster_summary(d, lab[-1]), "labels must have one value per row of data \\(60\\)")
  expect_error(cluster_summary(d, lab, statistic = "mode"), "statistic must be \"median\" or \"mean\"")
  expect_error(cluster_summary(1:3, 1:3), "data must be a numeric matrix or data frame")
  expect_error(sample_proportions(lab, smp[-1]), "samples must have one value per label")
  expect_error(sample_proportions(replace(lab, 2, NA), smp), "labels has 1 missing value")
})
