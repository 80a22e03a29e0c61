# Empirical calibration (sccs_fit_null, calibrate_p, calibrate_ci, sccs_fit_systematic_error_model,
# sccs_fit_negative_controls) and the SCCS study diagnostics: the R results are the Python ones,
# bit for bit, and bad input is an error naming the argument (or an R warning naming what was dropped).

test_that("sccs_fit_null, calibrate_p and calibrate_ci give Python's EmpiricalNull results", {
  skip_if_no_hphawkes()
  py <- py_reference(paste(
    "import numpy as np, hphawkes_py as hp",
    "rng = np.random.default_rng(1)",
    "se = rng.uniform(0.05, 0.3, 40)",
    "x = rng.normal(0.2, np.sqrt(0.15**2 + se**2))",
    "null = hp.sccs.EmpiricalNull.fit(x, se)",
    "q = np.log([1.5, 0.7, 3.0]); qs = np.array([0.1, 0.2, 0.3])",
    "out = {'x': x, 'se': se, 'mean': null.mean, 'sd': null.sd, 'll': null.log_likelihood,",
    "       'ease': null.ease, 'p': null.calibrate_p(q, qs), 'pg': null.calibrate_p(q, qs, alternative='greater'),",
    "       'ci': null.calibrate_ci(q, qs, level=0.9), 'q': q, 'qs': qs}", sep = "\n"))
  null <- sccs_fit_null(py$x, py$se)
  expect_s3_class(null, "sccs_empirical_null")
  expect_identical(null$mean, py$mean)
  expect_identical(null$sd, py$sd)
  expect_gt(null$sd, 0)
  expect_identical(null$log_likelihood, py$ll)
  expect_identical(null$ease, py$ease)
  expect_identical(null$n_controls, 40L)
  expect_identical(calibrate_p(null, py$q, py$qs), py$p)
  expect_identical(calibrate_p(null, py$q, py$qs, alternative = "greater"), py$pg)
  # the formula, from R's copy of the null
  z <- (py$q - null$mean) / sqrt(null$sd^2 + py$qs^2)
  expect_equal(calibrate_p(null, py$q, py$qs), 2 * pnorm(-abs(z)), tolerance = 1e-14)
  ci <- calibrate_ci(null, py$q, py$qs, level = 0.9)
  expect_identical(ci, py$ci)
  expect_named(ci, c("log_rr", "log_lower", "log_upper", "se_log_rr", "rr", "lower", "upper"))
  expect_output(print(null), "mean .* from 40 negative controls; EASE")
  expect_s3_class(autoplot(null), "ggplot")
  expect_s3_class(autoplot(null, log_rr = py$q, se_log_rr = py$qs), "ggplot")
})

test_that("unusable controls are dropped with an R warning naming R's position, or refused", {
  skip_if_no_hphawkes()
  set.seed(2)
  se <- runif(30, 0.05, 0.3)
  x <- rnorm(30, 0.1, sqrt(0.1^2 + se^2))
  clean <- sccs_fit_null(x, se)
  x2 <- c(x[1:4], NA, x[5:10], 6, x[11:30])
  se2 <- c(se[1:4], 0.2, se[5:10], 0.2, se[11:30])
  expect_warning(null <- sccs_fit_null(x2, se2), "1 NA/NaN/infinite and 1 extreme .* first at position 5 .* left out")
  expect_identical(null$dropped, c(non_finite = 1L, extreme = 1L))
  expect_identical(null$n_controls, 30L)
  expect_identical(null$mean, clean$mean)
  expect_identical(null$sd, clean$sd)
  expect_output(print(null), "left out: non_finite = 1, extreme = 1")
  expect_identical(null$log_rr, x)  # the controls used, for the plot
  expect_s3_class(autoplot(null), "ggplot")
  expect_error(sccs_fit_null(x2, se2, invalid = "raise"), "first at position 5", class = "hphawkes_input_error")
  expect_error(sccs_fit_null(x2, se2, invalid = "keep"), "invalid must be \"drop\" or \"raise\"")
  expect_error(sccs_fit_null(x, se[-1]), "same length, got 30 and 29", class = "hphawkes_input_error")
  expect_error(sccs_fit_null(x, -se), "se_log_rr must be > 0", class = "hphawkes_python_error")
  expect_error(sccs_fit_null(x[1:2], se[1:2]), "at least 3 negative controls", class = "hphawkes_python_error")
  expect_error(sccs_fit_null(as.character(x), se), "log_rr must be a numeric vector")
  expect_error(sccs_fit_null(x, se, invalud = "drop"), "unused argument")
  expect_error(sccs_fit_null(x, se, inv = "drop"), "abbreviation of 'invalid'", class = "hphawkes_input_error")
  # a data frame of estimates (as sccs_fit_negative_controls returns)
  expect_identical(sccs_fit_null(data.frame(log_rr = x, se_log_rr = se))$mean, clean$mean)
  expect_error(sccs_fit_null(data.frame(log_rr = x)), "no column\\(s\\) se_log_rr")
  # calibration keeps the order and gives NA where the input is missing
  p <- calibrate_p(clean, c(0.5, NA, 0.2), c(0.1, 0.1, NA))
  expect_identical(is.na(p), c(FALSE, TRUE, TRUE))
  expect_identical(p[1], calibrate_p(clean, 0.5, 0.1))
  ci <- calibrate_ci(clean, c(NA, 0.5), c(0.1, 0.1))
  expect_true(all(is.na(ci[1, ])))
  expect_identical(ci[2, , drop = FALSE], `rownames<-`(calibrate_ci(clean, 0.5, 0.1), 2L))
  expect_error(calibrate_ci(clean, 0.5, 0.1, level = 1.5), "level", class = "hphawkes_python_error")
  expect_error(calibrate_ci(clean, 0.5, 0.1, levle = 0.9), "unknown argument 'levle'")
  expect_error(calibrate_p(list(mean = 0, sd = 1), 0.5, 0.1), "null must be an sccs_empirical_null")
  expect_error(calibrate_p(clean, 0.5, 0.1, alternative = "up"), "alternative", class = "hphawkes_python_error")
  expect_error(autoplot(clean, log_rr = c(0.1, Inf), se_log_rr = c(0.1, 0.1)), "finite estimates: 1 .* position 2")
})

test_that("sccs_fit_systematic_error_model gives Python's SystematicErrorModel", {
  skip_if_no_hphawkes()
  py <- py_reference(paste(
    "import numpy as np, hphawkes_py as hp",
    "rng = np.random.default_rng(5)",
    "t = np.repeat(np.log([1.0, 2.0, 4.0]), 20)",
    "se = rng.uniform(0.05, 0.2, t.size)",
    "x = rng.normal(0.2 + 0.9 * t, np.sqrt(0.1**2 + se**2))",
    "m = hp.sccs.SystematicErrorModel.fit(x, se, t)",
    "null = hp.sccs.EmpiricalNull.fit(x[:20], se[:20])",
    "m0 = hp.sccs.SystematicErrorModel.from_null(null, mean_slope=0.9)",
    "out = {'x': x, 'se': se, 't': t, 'theta': [m.mean_intercept, m.mean_slope, m.sd_intercept, m.sd_slope],",
    "       'll': m.log_likelihood, 'ci': m.calibrate_ci(np.log([3.0, 1.2]), [0.1, 0.3]),",
    "       'ci0': m0.calibrate_ci(np.log([3.0]), [0.1])}", sep = "\n"))
  m <- sccs_fit_systematic_error_model(py$x, py$se, py$t)
  expect_s3_class(m, "sccs_error_model")
  expect_identical(c(m$mean_intercept, m$mean_slope, m$sd_intercept, m$sd_slope), py$theta)
  expect_identical(m$log_likelihood, py$ll)
  expect_identical(calibrate_ci(m, log(c(3, 1.2)), c(0.1, 0.3)), py$ci)
  null <- sccs_fit_null(py$x[1:20], py$se[1:20])
  m0 <- sccs_fit_systematic_error_model(null = null, mean_slope = 0.9)
  expect_identical(calibrate_ci(m0, log(3), 0.1), py$ci0)
  expect_output(print(m0), "from an empirical null")
  expect_error(sccs_fit_systematic_error_model(py$x, py$se, py$t[-1]), "true_log_rr must have the length of log_rr")
  expect_error(sccs_fit_systematic_error_model(py$x, py$se, replace(py$t, 3, NA)), "true_log_rr has 1 missing value.*row 3")
  expect_error(sccs_fit_systematic_error_model(py$x, py$se, rep(0, 60)), "two different true effect sizes",
               class = "hphawkes_python_error")
  expect_error(sccs_fit_systematic_error_model(py$x, py$se, py$t, null = null), "not both")
  expect_warning(sccs_fit_systematic_error_model(c(NA, py$x), c(0.1, py$se), c(0, py$t)),
                 "controls: 1 NA/NaN/infinite estimate\\(s\\), the first at position 1")
})

test_that("sccs_fit_negative_controls gives Python's estimates, in the order asked", {
  skip_if_no_hphawkes()
  sim <- sccs_simulate(n_cases = 600, n_drugs = 6, prevalence = 0.3, fraction_positive = 0, seed = 4)
  est <- sccs_fit_negative_controls(sim$data, controls = c(5, 2, 3, 1), adjust = 6, backend = "cpu")
  py <- py_reference(paste(
    "import hphawkes_py as hp",
    "data, _ = hp.sccs.simulate(n_cases=600, n_drugs=6, prevalence=0.3, fraction_positive=0.0, seed=4)",
    "out = hp.sccs.fit_negative_controls(data, [5, 2, 3, 1], adjust=[6], progress=False, backend='cpu')",
    sep = "\n"))
  expect_identical(est$covariate_id, c(5L, 2L, 3L, 1L))
  expect_identical(est$log_rr, py$log_rr)
  expect_identical(est$se_log_rr, py$se_log_rr)
  expect_identical(est$converged, py$converged)
  null <- sccs_fit_null(est)
  expect_identical(null$n_controls, 4L)
  expect_error(sccs_fit_negative_controls(sim$data, controls = c(1, 1.5)), "controls must be covariate ids",
               class = "hphawkes_input_error")
  expect_error(sccs_fit_negative_controls(sim$data, controls = c(1, NA)), "controls has 1 missing value")
  expect_error(sccs_fit_negative_controls(sim$data, controls = c(1, 99)), "not in the data: \\[99\\]",
               class = "hphawkes_python_error")
  expect_error(sccs_fit_negative_controls(sim$data, controls = 1:2, adjust = 2),
               "both negative controls and adjusted for", class = "hphawkes_python_error")
})

test_that("the SCCS diagnostics are Python's, and sccs_diagnostics() binds them", {
  skip_if_no_hphawkes()
  sim <- sccs_simulate_eras(400, 1, prevalence = 0.8, seed = 4)
  obs <- sim$observation_periods; eras <- sim$eras; outcomes <- sim$outcomes
  windows <- list(`1` = list(sccs_risk_window("pre", -30, -1, "start", "start"),
                             sccs_risk_window("on", 0, 0, "start", "end")))
  st <- sccs_study(obs, eras, outcomes, windows = windows, backend = "cpu")
  probe <- sccs_end_of_observation_eras(obs, length = 20)
  st2 <- sccs_study(obs, rbind(eras, probe), outcomes, backend = "cpu")
  py <- py_reference(paste(
    "import pandas as pd, hphawkes_py as hp",
    "obs, eras, oc, _ = hp.sccs.simulate(n_cases=400, n_drugs=1, prevalence=0.8, output='eras', seed=4)",
    "w = {1: [hp.sccs.RiskWindow('pre', -30, -1, 'start', 'start'), hp.sccs.RiskWindow('on', 0, 0, 'start', 'end')]}",
    "f = hp.sccs.fit(hp.sccs.SCCSData.from_eras(obs, eras, oc, windows=w), prior='none', tolerance=1e-8,",
    "                progress=False, backend='cpu')",
    "probe = hp.sccs.end_of_observation_eras(obs, length=20)",
    "f2 = hp.sccs.fit(hp.sccs.SCCSData.from_eras(obs, pd.concat([eras, probe]), oc), prior='none', tolerance=1e-8,",
    "                 progress=False, backend='cpu')",
    "d = [hp.sccs.mdrr(f, 'on', power=0.9), hp.sccs.time_stability(obs, oc, max_ratio=1.2),",
    "     hp.sccs.pre_exposure_gain(obs, eras, oc, 1, days=20),",
    "     hp.sccs.event_exposure_independence(f, 'pre', method='wald'),",
    "     hp.sccs.event_observation_independence(f2, method='wald', null_bounds=(0.6, 1.8)),",
    "     hp.sccs.rare_outcome(n_persons=5000, n_cases=600, first_outcome_only=True)]",
    "out = {'value': [x.value for x in d], 'pass': [x.passed for x in d], 'probe': probe,",
    "       'per_month': d[1].details['per_month']}", sep = "\n"))
  expect_identical(probe, py$probe)
  ds <- list(sccs_mdrr(st, "on", power = 0.9), sccs_time_stability(obs, outcomes, max_ratio = 1.2),
             sccs_pre_exposure_gain(obs, eras, outcomes, 1, days = 20),
             sccs_event_exposure_independence(st, "pre", method = "wald"),
             sccs_event_observation_independence(st2, method = "wald", null_bounds = c(0.6, 1.8)),
             sccs_rare_outcome(n_persons = 5000, n_cases = 600, first_outcome_only = TRUE))
  for (d in ds) expect_s3_class(d, "sccs_diagnostic")
  expect_identical(vapply(ds, `[[`, numeric(1), "value"), py$value)
  expect_identical(vapply(ds, `[[`, logical(1), "passed"), py$pass)
  expect_false(ds[[6]]$passed)  # prevalence 0.12 with first outcomes only
  tab <- sccs_diagnostics(ds)
  expect_identical(tab$diagnostic, c("mdrr", "time_stability", "pre_exposure_gain", "event_exposure_independence",
                                     "event_observation_independence", "rare_outcome"))
  expect_identical(tab$value, py$value)
  expect_identical(tab$threshold[c(1, 5)], c("10", "0.6, 1.8"))
  expect_identical(sccs_diagnostics(ds[[1]], ds[[2]]), tab[1:2, ])
  pm <- ds[[2]]$details$per_month
  expect_s3_class(pm$month_start, "Date")
  expect_identical(pm$observed, py$per_month$observed)
  expect_identical(format(pm$month_start), substr(py$per_month$month_start, 1, 10))
  expect_output(print(ds[[6]]), "rare_outcome: value 0.12, .* -> FAIL")
  # the design's mdrr is the fit's
  expect_identical(sccs_mdrr(st$data, "on")$value, sccs_mdrr(st, "on")$value)
  # bad input
  expect_error(sccs_mdrr(st, c("on", "pre")), "covariate must be one covariate id, got 2 values")
  expect_error(sccs_mdrr(st, "off"), "covariate 'off' is not in the data", class = "hphawkes_python_error")
  expect_error(sccs_mdrr(st, "on", two_sided = NA), "two_sided must be TRUE or FALSE")
  expect_error(sccs_mdrr(st, "on", pwr = 0.9), "unused argument")
  expect_error(sccs_event_exposure_independence(st$data, "pre"), "fit must be an hphawkes_sccs_fit")
  expect_error(sccs_event_exposure_independence(st, "pre", null_bounds = 0.8), "null_bounds must be two rate ratios")
  expect_error(sccs_event_exposure_independence(st, "pre", null_bounds = c(1.1, 2)), "must surround 1",
               class = "hphawkes_python_error")
  bad <- outcomes; bad$day[3] <- NA
  expect_error(sccs_time_stability(obs, bad), "outcomes\\$day has 1 missing value.*the first in row 3")
  expect_error(sccs_time_stability(obs, outcomes, day_origin = 0), "day_origin must be a date")
  expect_error(sccs_pre_exposure_gain(obs, eras, outcomes, 2), "covariate 2 has no eras", class = "hphawkes_python_error")
  expect_error(sccs_rare_outcome(n_persons = 10, n_cases = 20, first_outcome_only = TRUE), "n_cases \\(20\\) must be <=",
               class = "hphawkes_python_error")
  expect_error(sccs_diagnostics(ds[[1]], "mdrr"), "argument 2 is character")
  expect_error(sccs_diagnostics(a = ds[[1]]), "not named arguments")
  expect_error(sccs_end_of_observation_eras(obs, length = 0), "length", class = "hphawkes_python_error")
  expect_error(sccs_end_of_observation_eras(obs, length = 2.5), "length must be a single whole number")
})
