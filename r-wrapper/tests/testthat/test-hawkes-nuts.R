# hawkes_mcmc(sampler = "nuts") and hawkes_loglik_gradient against finite differences and Python.

hawkes_sim <- function() hawkes_simulate(mu = 0.5, theta = 0.5, omega = 0.2, h = 0.05, region = 1,
                                         duration = 100, seed = 1)

test_that("hawkes_loglik_gradient equals central differences of hawkes_loglik and Python", {
  skip_if_no_hphawkes()
  sim <- hawkes_sim()
  p <- hawkes_params(mu0 = 50, tau_x = 0.2, tau_t = 10, theta = 0.5, omega = 0.2, h = 0.05)
  g <- hawkes_loglik_gradient(sim$x, sim$t, p, exact = TRUE, backend = "cpu")
  expect_identical(names(g), c("mu0", "tau_x", "tau_t", "theta", "omega", "h"))
  for (nm in names(g)) {
    d <- 1e-6 * p[[nm]]
    up <- p; up[[nm]] <- p[[nm]] + d
    dn <- p; dn[[nm]] <- p[[nm]] - d
    fd <- (hawkes_loglik(sim$x, sim$t, up, exact = TRUE, backend = "cpu") -
           hawkes_loglik(sim$x, sim$t, dn, exact = TRUE, backend = "cpu")) / (2 * d)
    expect_equal(g[[nm]], fd, tolerance = 1e-5, info = nm)
  }
  py <- py_reference(paste("import hphawkes_py as hp",
    "x, t = hp.hawkes.simulate(mu=0.5, theta=0.5, omega=0.2, h=0.05, region=1, duration=100, seed=1)",
    "out = hp.hawkes.log_likelihood_gradient(x, t, dict(mu0=50.0, tau_x=0.2, tau_t=10.0, theta=0.5,",
    "    omega=0.2, h=0.05), exact=True, backend='cpu')", sep = "\n"))
  expect_identical(g, unlist(py))
  g2 <- hawkes_loglik_gradient(sim$x, sim$t, c(p, omega2 = 2, w = 0.7), kernel = "exp2", backend = "cpu")
  expect_identical(names(g2), c("mu0", "tau_x", "tau_t", "theta", "omega", "h", "omega2", "w"))
  expect_error(hawkes_loglik_gradient(sim$x, sim$t, p[-1]), "mu0")
  expect_error(hawkes_loglik_gradient(sim$x, sim$t, p, exact = NA), "exact must be TRUE or FALSE")
  expect_error(hawkes_loglik_gradient(sim$x, sim$t[-1], p), "t", class = "hphawkes_python_error")
  expect_error(hawkes_loglik_gradient(sim$x, sim$t, p, thread = 1), "abbreviation of 'threads'")
})

test_that("hawkes_mcmc(sampler = 'nuts') returns Python's draws and NUTS diagnostics", {
  skip_if_no_hphawkes()
  if (!reticulate::py_module_available("mici")) skip("the Python package mici is not installed")
  sim <- hawkes_sim()
  fit <- hawkes_mcmc(sim$x, sim$t, n_iter = 40, burn_in = 20, chains = 2, seed = 1, sampler = "nuts",
                     fixed = list(tau_x = 0.2, tau_t = 10), backend = "cpu")
  expect_s3_class(fit, c("hawkes_mcmc", "mcmc.list"))
  expect_identical(coda::niter(fit), 20L)
  expect_identical(coda::nchain(fit), 2L)
  info <- attr(fit, "hphawkes")
  expect_identical(names(info$nuts_stats), c("divergences", "mean_tree_depth", "step_size", "n_step", "evaluations"))
  expect_length(info$nuts_stats$step_size, 2L)
  expect_true(all(info$nuts_stats$step_size > 0))
  py <- py_reference(paste("import hphawkes_py as hp",
    "x, t = hp.hawkes.simulate(mu=0.5, theta=0.5, omega=0.2, h=0.05, region=1, duration=100, seed=1)",
    "p = hp.hawkes.mcmc(x, t, n_iter=40, burn_in=20, chains=2, seed=1, sampler='nuts',",
    "    fixed=dict(tau_x=0.2, tau_t=10.0), backend='cpu', progress=False)",
    "out = p.draws", sep = "\n"))
  for (nm in colnames(fit[[1]])) expect_identical(as.numeric(fit[[2]][, nm]), py[[nm]][2, ], info = nm)
  # the posterior of theta covers the simulated value
  expect_gt(mean(unlist(lapply(fit, function(m) m[, "theta"]))), 0.2)
  expect_output(print(fit), "NUTS: [0-9]+ divergent")
  mh <- hawkes_mcmc(sim$x, sim$t, n_iter = 40, burn_in = 20, chains = 2, seed = 1,
                    fixed = list(tau_x = 0.2, tau_t = 10))
  expect_null(attr(mh, "hphawkes")$nuts_stats)
  tuned <- hawkes_mcmc(sim$x, sim$t, n_iter = 20, burn_in = 10, chains = 2, seed = 1, sampler = "nuts",
                       target_accept = 0.95, max_tree_depth = 3, fixed = list(tau_x = 0.2, tau_t = 10))
  expect_lte(max(attr(tuned, "hphawkes")$nuts_stats$mean_tree_depth), 3)
  expect_error(hawkes_mcmc(sim$x, sim$t, sampler = "hmc"), "sampler must be \"mh\" or \"nuts\"",
               class = "hphawkes_input_error")
  expect_error(hawkes_mcmc(sim$x, sim$t, sampler = c("mh", "nuts")), "sampler must be")
  expect_error(hawkes_mcmc(sim$x, sim$t, sampler = "nuts", max_tree_depth = 2.5, fixed = list(tau_x = 0.2, tau_t = 10)),
               "max_tree_depth must be a single whole number")
  expect_error(hawkes_mcmc(sim$x, sim$t, sampler = "nuts", target_accept = 1.5, n_iter = 10, burn_in = 5,
                           fixed = list(tau_x = 0.2, tau_t = 10)), "target_accept", class = "hphawkes_python_error")
  expect_error(hawkes_mcmc(sim$x, sim$t, sampler = "nuts", target = 0.9), "abbreviation of 'target_accept'")
})
