# hdp_mixture(): the hierarchical DP mixture across samples gives Python's fit bit for bit; samples,
# components and clusters are numbered from 1 in R; predict(group=) takes R's position or a name.

hdp_reference_code <- paste(
  "import numpy as np, pandas as pd, hphawkes_py as hp",
  "rng = np.random.default_rng(0)",
  "centres = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]])",
  "X, frames = [], []",  # loops, not functions: py_run_string(local = TRUE) keeps the imports local
  "for counts in ([60, 60, 0], [80, 40, 0], [50, 40, 40]):",
  "    z = np.repeat(np.arange(3), counts)",
  "    X.append(centres[z] + rng.normal(scale=0.5, size=(z.size, 2)))",
  "    frames.append(pd.DataFrame(X[-1], columns=['CD4', 'CD8']))", sep = "\n")

test_that("hdp_mixture (Gibbs) gives Python's HDPGaussianMixture, with 1-based samples and labels", {
  skip_if_no_hphawkes()
  py <- py_reference(paste(hdp_reference_code,
    "m = hp.mixture.HDPGaussianMixture(5, n_iter=40, burn_in=40, seed=1, progress=False, backend='cpu').fit(frames)",
    "lo, hi = m.group_weight_intervals(0.9, by='cluster')",
    "new = np.array([[0.1, 3.9], [4.2, 0.1]])",
    "out = {'X': X, 'gw': m.group_weights_, 'beta': m.beta_, 'mu': m.means_, 'S': m.covariances_,",
    "       'alpha': m.alpha_, 'alpha0': m.alpha0_, 'cc': m.component_clusters_, 'gcw': m.group_cluster_weights_,",
    "       'lo': lo, 'hi': hi, 'labels': m.labels_, 'frame': m.to_frame(level=0.9),",
    "       'pred2': m.predict(new, group=2), 'prob0': m.predict_proba(new, group=0),",
    "       'dens1': m.score_samples(new, group=1), 'clus2': m.predict_cluster(new, group=2),",
    "       'plug': m.score_samples(new, group=1, estimate='plugin'), 'ag': m.draws_['alpha0']}", sep = "\n"))
  samples <- lapply(py$X, function(x) `colnames<-`(x, c("CD4", "CD8")))
  names(samples) <- c("s1", "s2", "s3")
  m <- hdp_mixture(samples, n_components = 5, n_iter = 40, burn_in = 40, seed = 1, backend = "cpu",
                   keep_draws = TRUE)
  expect_s3_class(m, "hdp_mixture")
  expect_identical(unname(m$group_weights), py$gw)
  expect_identical(rownames(m$group_weights), c("s1", "s2", "s3"))
  expect_identical(m$beta, py$beta)
  expect_identical(unname(m$means), py$mu)
  expect_identical(colnames(m$means), c("CD4", "CD8"))
  expect_identical(m$covariances, py$S)
  expect_identical(c(m$alpha, m$alpha0), c(py$alpha, py$alpha0))
  expect_identical(m$component_clusters, ifelse(py$cc < 0L, NA_integer_, py$cc + 1L))
  expect_identical(unname(m$group_cluster_weights), py$gcw)
  expect_identical(unname(m$labels), lapply(py$labels, function(l) l + 1L))
  expect_identical(m$n_per_sample, c(s1 = 120L, s2 = 120L, s3 = 130L))
  expect_identical(m$draws$alpha0, py$ag)
  # the third sample alone has the population at (0, 4)
  third <- which.min(abs(m$cluster_means[, "CD4"]) + abs(m$cluster_means[, "CD8"] - 4))
  expect_lt(max(m$group_cluster_weights[1:2, third]), 0.05)
  expect_gt(m$group_cluster_weights[3, third], 0.2)
  # proportions with intervals: samples by name, clusters from 1
  pr <- hdp_proportions(m, level = 0.9)
  expect_identical(pr$sample, rep(c("s1", "s2", "s3"), each = m$n_clusters))
  expect_identical(pr$cluster, rep(seq_len(m$n_clusters), 3))
  expect_identical(pr$proportion, py$frame$proportion)
  expect_identical(pr$lower, as.vector(t(py$lo)))
  expect_identical(pr$upper, as.vector(t(py$hi)))
  expect_named(pr, c("sample", "cluster", "proportion", "lower", "upper", "mean_CD4", "mean_CD8"))
  expect_identical(summary(m, level = 0.9), pr)
  expect_identical(hdp_proportions(m, by = "component")$component, rep(1:5, 3))
  # prediction: group by R position (1-based) or by name
  new <- rbind(c(0.1, 3.9), c(4.2, 0.1))
  expect_identical(predict(m, new, group = 3), py$pred2 + 1L)
  expect_identical(predict(m, new, group = "s3"), py$pred2 + 1L)
  expect_identical(predict(m, new, group = 1, type = "prob"), py$prob0)
  expect_identical(predict(m, new, group = "s2", type = "density"), py$dens1)
  expect_identical(predict(m, new, group = 3, type = "cluster"), py$clus2 + 1L)
  expect_identical(predict(m, new, group = 2, type = "density", estimate = "plugin"), py$plug)
  expect_length(predict(m, group = 1), 120L)  # default: the training data of the sample
  expect_s3_class(autoplot(m), "ggplot")
  expect_output(print(m), "3 samples \\(120/120/130 events\\), 5 components")
  grDevices::pdf(NULL); on.exit(grDevices::dev.off(), add = TRUE)
  expect_invisible(plot(m))
})

test_that("hdp_mixture (BEM) matches Python and refuses bad samples and groups by name", {
  skip_if_no_hphawkes()
  py <- py_reference(paste(hdp_reference_code,
    "m = hp.mixture.HDPGaussianMixture(4, method='bem', n_iter=30, seed=2, progress=False, backend='cpu').fit(X)",
    "out = {'X': X, 'gw': m.group_weights_, 'mu': m.means_, 'frame': m.to_frame()}", sep = "\n"))
  m <- hdp_mixture(py$X, n_components = 4, method = "bem", n_iter = 30, seed = 2, backend = "cpu")
  expect_identical(unname(m$group_weights), py$gw)
  expect_identical(rownames(m$group_weights), c("sample1", "sample2", "sample3"))
  expect_identical(m$means, py$mu)
  pr <- hdp_proportions(m)
  expect_false("lower" %in% names(pr))  # BEM has no intervals
  expect_identical(pr$proportion, py$frame$proportion)
  expect_named(pr, c("sample", "cluster", "proportion", "mean_x0", "mean_x1"))
  expect_s3_class(autoplot(m), "ggplot")
  X <- py$X
  expect_error(predict(m, X[[1]]), "group is missing")
  expect_error(predict(m, X[[1]], group = 0), "a position 1..3 \\(R counts from 1\\)")
  expect_error(predict(m, X[[1]], group = 4), "a position 1..3")
  expect_error(predict(m, X[[1]], group = "b"), "group 'b' is not a sample of the fit; the samples are sample1")
  expect_error(predict(m, X[[1]], group = 1, estimate = "predictive"), "needs stored posterior draws",
               class = "hphawkes_python_error")
  expect_error(predict(m, X[[1]][, 1, drop = FALSE], group = 1), "must have 2 columns", class = "hphawkes_python_error")
  expect_warning(predict(m, `colnames<-`(X[[1]], c("a", "b")), group = 1), "fitted on unnamed columns")
  expect_error(hdp_mixture(X[[1]], n_components = 4), "samples must be a list .*wrap a single sample as list\\(X\\)")
  expect_error(hdp_mixture(as.data.frame(X[[1]]), n_components = 4), "wrap a single sample as list\\(X\\)")
  expect_error(hdp_mixture(list(), n_components = 4), "at least one sample")
  expect_error(hdp_mixture(list(X[[1]], 1:3), n_components = 4), "samples\\[\\[2\\]\\] must be a numeric matrix")
  expect_error(hdp_mixture(list(X[[1]], X[[2]][, 1, drop = FALSE]), n_components = 4, method = "bem"),
               "samples\\[1\\] has 1 columns but samples\\[0\\] has 2", class = "hphawkes_python_error")
  named <- lapply(X, function(x) `colnames<-`(x, c("CD4", "CD8")))
  named[[2]] <- named[[2]][, 2:1]
  expect_error(hdp_mixture(named, n_components = 4, method = "bem"), "the same names in another order",
               class = "hphawkes_python_error")
  expect_error(hdp_mixture(list(a = X[[1]], a = X[[2]]), n_components = 4), "names of samples must be distinct")
  expect_error(hdp_mixture(X, n_components = 4, alpha_prior = 5), "alpha_prior must be c\\(shape, rate\\)")
  expect_error(hdp_mixture(X, n_components = 4.5), "n_components must be a single whole number")
  expect_error(hdp_mixture(X, n_components = 4, warm_start = NA), "warm_start must be TRUE or FALSE")
  expect_error(hdp_mixture(X, n_comp = 4), "abbreviation of 'n_components'", class = "hphawkes_input_error")
  expect_error(hdp_proportions(m, by = "sample"), "by must be \"cluster\" or \"component\"")
  expect_error(hdp_proportions(m, level = 1), "level must be a probability in \\(0, 1\\), got 1",
               class = "hphawkes_input_error")
})
