# sccs_study(): person-level data -> design with age/season splines and risk windows -> fit -> tables.

test_that("sccs_study recovers a known age effect, season effect and IRR from simulated eras", {
  skip_if_no_hphawkes()
  age <- function(a) 0.8 * sin(a / 600)
  season <- function(m) 0.5 * cos(2 * pi * m / 12)
  sim <- sccs_simulate_eras(4000, 2, age_effect = age, season_effect = season, prevalence = 0.3,
                            fraction_positive = 1, relative_risks = 2, observation_days = c(365, 1000),
                            age_at_start = c(0, 2500), seed = 3)
  expect_named(sim, c("observation_periods", "eras", "outcomes", "true_coefficients"))
  expect_true(all(c("person_id", "start", "end", "birth_day") %in% names(sim$observation_periods)))
  sim$eras$covariate_id <- paste0("drug", sim$eras$covariate_id)
  windows <- list(drug1 = list(sccs_risk_window("on1", 0, 0, "start", "end"),
                               sccs_risk_window("pre1", -30, -1, "start", "start")))
  st <- sccs_study(sim$observation_periods, sim$eras, sim$outcomes, windows = windows, age_knots = 5,
                   season_knots = 4, spline_prior = "none", backend = "cpu")
  expect_s3_class(st, "sccs_study")
  res <- st$results
  expect_setequal(res$covariate_id, c("drug2", "on1", "pre1"))
  expect_equal(res$irr, unname(exp(coef(st$fit)[res$covariate_id])), tolerance = 1e-12)
  # the true IRR 2 of both drugs is inside the 95% intervals; the pre-exposure window is null
  for (id in c("drug2", "on1")) {
    r <- res[res$covariate_id == id, ]
    expect_true(r$irr_lower < 2 && 2 < r$irr_upper, info = id)
  }
  r <- res[res$covariate_id == "pre1", ]
  expect_true(r$irr_lower < 1 && 1 < r$irr_upper)
  # spline effects: differences to a reference point match the truth within 3.5 standard errors
  e <- st$spline_effects
  expect_setequal(unique(e$term), c("age", "season"))
  expect_named(st$knots, c("age", "season"))
  ea <- e[e$term == "age" & e$x > 200 & e$x < 3200, ]
  ref <- which.min(abs(ea$x - 1700))
  d_est <- ea$log_effect - ea$log_effect[ref]
  d_true <- age(ea$x) - age(ea$x[ref])
  expect_lt(max(abs(d_est - d_true)), 0.5)
  expect_gt(stats::cor(d_est, d_true), 0.95)
  es <- e[e$term == "season", ]
  expect_lt(max(abs((es$log_effect - mean(es$log_effect)) - (season(es$x) - mean(season(es$x))))), 0.15)
  expect_true(all(e$rr_lower <= e$rr + 1e-12 & e$rr <= e$rr_upper + 1e-12))
  expect_output(print.sccs_study(st), "adjusted for age, season")
  expect_s3_class(autoplot.sccs_study(st), "ggplot")
  expect_error(sccs_study(sim$observation_periods, sim$eras, sim$outcomes, age_knots = c(5000, 6000),
                          backend = "cpu"), "age_knots: ages under observation")
  expect_error(sccs_risk_window(3, 0, 1), "label must be a single character string")
})

test_that("sccs_study's fit equals the Python fit of the same design", {
  skip_if_no_hphawkes()
  sim <- sccs_simulate_eras(400, 3, season_effect = rep(c(0.3, -0.3), 6), prevalence = 0.4, seed = 9)
  st <- sccs_study(sim$observation_periods, sim$eras, sim$outcomes, season_knots = 4,
                   prior = "normal", variance = 2, spline_variance = 3, backend = "cpu")
  py <- py_reference(paste(
    "import numpy as np, hphawkes_py as hp",
    "obs, eras, oc, truth = hp.sccs.simulate(n_cases=400, n_drugs=3, season_effect=np.tile([0.3, -0.3], 6),",
    "                                        prevalence=0.4, seed=9, output='eras')",
    "d = hp.sccs.SCCSData.from_eras(obs, eras, oc, season_knots=4)",
    "f = hp.sccs.fit(d, prior='normal', variance=2.0, spline_variance=3.0, tolerance=1e-8, backend='cpu', progress=False)",
    "out = {'coef': f.coefficients.to_numpy(), 'ids': [str(i) for i in f.coefficients.index],",
    "       'effects': f.spline_effects()}",
    sep = "\n"))
  expect_equal(unname(coef(st$fit)), py$coef, tolerance = 1e-12)
  expect_equal(names(coef(st$fit)), py$ids)
  expect_equal(st$spline_effects$log_effect, py$effects$log_effect, tolerance = 1e-12)
})

test_that("sccs_cv(grid = 'auto') searches the variance as Python does", {
  skip_if_no_hphawkes()
  sim <- sccs_simulate(n_cases = 1500, n_drugs = 10, seed = 2)
  cv <- sccs_cv(sim$data, folds = 3, grid = "auto", seed = 1, backend = "cpu")
  py <- py_reference(paste(
    "import hphawkes_py as hp",
    "data, _ = hp.sccs.simulate(n_cases=1500, n_drugs=10, seed=2)",
    "cv = hp.sccs.cross_validate(data, folds=3, grid='auto', seed=1, backend='cpu', progress=False)",
    "out = {'variance': cv.variance, 'grid': cv.grid}",
    sep = "\n"))
  expect_identical(cv$variance, py$variance)
  expect_identical(cv$grid, py$grid)
})
