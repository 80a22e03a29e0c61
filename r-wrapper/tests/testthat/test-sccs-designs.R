# SCCS designs from R: event-dependent exposure (the SCCS package's eventdepenexp), the SCRI
# control window and event-dependent observation passed through sccs_study(), and the OHDSI
# diagnostics in the study's results.

peer_dir <- function() {
  root <- dirname(dirname(reticulate::import("hphawkes_py")$`__file__`))
  file.path(root, "tests", "data", "sccs_eventdepenexp")
}

test_that("sccs_event_dependent_exposure matches the SCCS package's eventdepenexp on rotdat", {
  skip_if_no_hphawkes()
  dir <- peer_dir()
  skip_if_not(file.exists(file.path(dir, "eventdepenexp.json")), "peer fixture not in this checkout")
  rot <- utils::read.table(gzfile(file.path(dir, "rotdat.txt.gz")), header = TRUE)
  peer <- jsonlite::fromJSON(file.path(dir, "eventdepenexp.json"))
  fit <- sccs_event_dependent_exposure(rot, start = "sta", event = "intus", doses = c("rv", "rvd2"),
                                       dose_ends = 21, risk_starts = c(1, 8), age_groups = seq(56, 168, 14))
  expect_s3_class(fit, "sccs_event_dependent_exposure")
  expect_equal(names(coef(fit)), peer$mod2$names)
  expect_equal(unname(coef(fit)), peer$mod2$coef, tolerance = 1e-5)
  expect_equal(unname(sqrt(diag(vcov(fit)))), peer$mod2$se, tolerance = 1e-5)
  expect_true(fit$converged)
  fit3 <- sccs_event_dependent_exposure(rot, start = "sta", event = "intus", doses = c("rv", "rvd2"),
                                        dose_ends = 21, risk_starts = c(1, 8), same_dose_parameters = FALSE,
                                        age_groups = seq(56, 168, 14))
  expect_equal(unname(coef(fit3)), peer$mod3$coef, tolerance = 1e-5)
  expect_equal(summary(fit3)$se, peer$mod3$se, tolerance = 1e-5)
  expect_output(print(fit), "event-dependent exposure")
  expect_error(sccs_event_dependent_exposure(rot, start = "sta", event = "intus", doses = c("rv", "rvd2"),
                                             dose_ends = 21, risk_starts = -1), "pre-exposure")
  expect_error(sccs_event_dependent_exposure(rot, start = "sta", event = "intus", doses = c("rv", "nope"),
                                             dose_ends = 21), "'nope' is not a column")
  expect_error(sccs_event_dependent_exposure(as.matrix(rot), doses = "rv", dose_ends = 21),
               "cases must be a data frame")
  expect_error(sccs_event_dependent_exposure(rot, start = "sta", event = "intus", doses = "rv",
                                             dose_ends = 21, risk_starts = "a"), "risk_starts must be whole days")
})

scri_data <- function() {
  set.seed(5)
  n <- 300
  obs <- data.frame(person_id = 1:n, start = 0L, end = 365L)
  vacc <- sample(50:250, n, TRUE)
  eras <- data.frame(person_id = 1:n, start = vacc, end = vacc, covariate_id = "vaccine")
  risk <- stats::runif(n) < 0.5
  day <- ifelse(risk, vacc + sample(1:28, n, TRUE), vacc + sample(29:56, n, TRUE))
  list(obs = obs, eras = eras, outcomes = data.frame(person_id = 1:n, day = as.integer(day)))
}

test_that("sccs_study passes control_window (SCRI) through and equals the Python design", {
  skip_if_no_hphawkes()
  s <- scri_data()
  st <- sccs_study(s$obs, s$eras, s$outcomes, risk_start = 1L, risk_end = 28L, control_window = c(29, 56),
                   backend = "cpu")
  d <- st$data$python
  expect_equal(sum(hphawkes:::.hp_r(d$time)), 2 * 28 * 300)
  ref <- reticulate::import("hphawkes_py")$sccs$SCCSData$from_eras(
    hphawkes:::.pd_frame(s$obs), hphawkes:::.pd_frame(s$eras), hphawkes:::.pd_frame(s$outcomes),
    risk_start = 1L, risk_end = 28L, control_window = reticulate::tuple(29L, 56L))
  f <- reticulate::import("hphawkes_py")$sccs$fit(ref, prior = "none", tolerance = 1e-8, backend = "cpu", progress = FALSE)
  expect_equal(unname(coef(st$fit)), as.double(hphawkes:::.hp_r(f$coefficients$to_numpy())), tolerance = 1e-12)
  # per covariate, and a window object, give the same design here
  st2 <- sccs_study(s$obs, s$eras, s$outcomes, risk_start = 1L, risk_end = 28L,
                    control_window = list(vaccine = sccs_risk_window("c", 29, 56, "start", "end")), backend = "cpu")
  expect_equal(coef(st2$fit), coef(st$fit), tolerance = 1e-12)
  expect_error(sccs_study(s$obs, s$eras, s$outcomes, control_window = c(29, 56.5)),
               "control_window must be c\\(start_offset, end_offset\\)")
  expect_error(sccs_study(s$obs, s$eras, s$outcomes, control_window = list(c(29, 56))),
               "named list")
})

test_that("sccs_study passes event_dependent_observation through and reports the censoring models", {
  skip_if_no_hphawkes()
  set.seed(2)
  n <- 300
  birth <- -sample(20000:25000, n, TRUE)
  day <- sample(100:600, n, TRUE)
  death <- stats::runif(n) < 0.4
  end <- ifelse(death, pmin(day + round(stats::rexp(n, 1 / 60)), 730L), 730L)
  obs <- data.frame(person_id = 1:n, start = 0L, end = as.integer(end), birth_day = as.integer(birth),
                    censor = as.integer(death & end < 730))
  eras <- data.frame(person_id = 1:n, start = sample(0:500, n, TRUE), end = 0L, covariate_id = 1L)
  eras$end <- eras$start + 27L
  out <- data.frame(person_id = 1:n, day = as.integer(day))
  st <- sccs_study(obs, eras, out, event_dependent_observation = "EWI", backend = "cpu")
  expect_equal(st$censoring$model, "EWI")
  expect_true(st$censoring$used)
  ref <- reticulate::import("hphawkes_py")$sccs$SCCSData$from_eras(
    hphawkes:::.pd_frame(obs), hphawkes:::.pd_frame(eras), hphawkes:::.pd_frame(out),
    event_dependent_observation = "EWI")
  expect_equal(hphawkes:::.hp_r(st$data$python$time), hphawkes:::.hp_r(ref$time), tolerance = 1e-12)
  st7 <- sccs_study(obs, eras, out, event_dependent_observation = "EWI", censoring_regression = TRUE, backend = "cpu")
  # the 7-parameter model holds the 4-parameter one: its maximum is at least as high
  expect_gte(st7$censoring$loglik, st$censoring$loglik - 1e-8)
  expect_false(isTRUE(all.equal(coef(st7$fit), coef(st$fit))))
  expect_error(sccs_study(obs, eras, out, censoring_regression = TRUE), "needs event_dependent_observation")
  expect_error(sccs_study(obs, eras, out, event_dependent_observation = NA), "event_dependent_observation must be")
  expect_error(sccs_study(obs, eras, out, event_dependent_observation = "EWX"), "event_dependent_observation")
})

test_that("sccs_study(diagnostics = TRUE) carries the OHDSI diagnostics into its results", {
  skip_if_no_hphawkes()
  sim <- sccs_simulate_eras(400, 2, prevalence = 0.5, seed = 1)
  st <- sccs_study(sim$observation_periods, sim$eras, sim$outcomes, risk_end = 30L, diagnostics = TRUE,
                   n_persons = 4000L, backend = "cpu")
  tab <- sccs_study_diagnostics(st)
  expect_equal(tab$diagnostic, c("mdrr", "pre_exposure_gain", "mdrr", "pre_exposure_gain", "time_stability",
                                 "rare_outcome"))
  expect_equal(tab$covariate_id, c("1", "1", "2", "2", NA, NA))
  py <- py_reference(paste(
    "import hphawkes_py as hp",
    "obs, eras, oc, _ = hp.sccs.simulate(n_cases=400, n_drugs=2, prevalence=0.5, seed=1, output='eras')",
    "f = hp.sccs.fit(hp.sccs.SCCSData.from_eras(obs, eras, oc, risk_end=30), prior='none', tolerance=1e-8, backend='cpu', progress=False)",
    "r = hp.sccs.study_diagnostics(f, obs, eras, oc, n_persons=4000)",
    "out = {'value': r.table()['value'].to_numpy(dtype=float), 'pass': r.table()['pass'].to_numpy(dtype=bool)}",
    sep = "\n"))
  expect_equal(tab$value, py$value, tolerance = 1e-10)
  expect_equal(tab$pass, py$pass)
  res <- st$results
  expect_true(all(c("mdrr", "mdrr_pass", "pre_exposure_gain_p", "time_stability_pass", "outcome_prevalence",
                    "rare_outcome_pass", "diagnostics_pass") %in% names(res)))
  expect_equal(res$diagnostics_pass, res$mdrr_pass & res$pre_exposure_gain_pass & res$time_stability_pass &
                 res$rare_outcome_pass)
  expect_output(print(st), "diagnostics: \\d+ of 6 pass")
  expect_s3_class(autoplot.sccs_study(st, which = "diagnostics"), "ggplot")
  plain <- sccs_study(sim$observation_periods, sim$eras, sim$outcomes, risk_end = 30L, backend = "cpu")
  expect_null(plain$diagnostics)
  expect_error(sccs_study_diagnostics(plain), "diagnostics = TRUE")
  expect_error(autoplot.sccs_study(plain, which = "diagnostics"), "no diagnostics")
  expect_error(sccs_study(sim$observation_periods, sim$eras, sim$outcomes, diagnostics = "yes"),
               "diagnostics must be TRUE or FALSE")
})
