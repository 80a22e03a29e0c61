# sccs_data_from_cdm(): a DuckDB file built by the repository's tests/cdm_fixture.py (through
# reticulate), read by URL; the design is Python's SCCSData.from_cdm of the same file, bit for bit.

# The path of a DuckDB CDM of a simulated study (skips when duckdb or the fixture is absent).
cdm_file <- function(n_cases = 150, seed = 7) {
  if (!reticulate::py_module_available("duckdb")) testthat::skip("the Python module duckdb is not installed")
  root <- py_reference(paste(
    "import os, hphawkes_py",
    "out = os.path.dirname(os.path.dirname(os.path.abspath(hphawkes_py.__file__)))", sep = "\n"))
  fixture <- file.path(root, "tests", "cdm_fixture.py")
  if (!file.exists(fixture)) testthat::skip("tests/cdm_fixture.py is not next to the hphawkes_py package")
  path <- tempfile(fileext = ".duckdb")
  reticulate::py_run_string(paste(
    "import sys, duckdb",
    sprintf("sys.path.insert(0, %s)", shQuote(dirname(fixture))),
    "import cdm_fixture",
    sprintf("tables, hand, truth = cdm_fixture.simulated_cdm(n_cases=%d, n_drugs=3, seed=%d)", n_cases, seed),
    sprintf("con = duckdb.connect(%s)", shQuote(path)),
    "cdm_fixture.load(con, tables)", "con.close()", sep = "\n"))
  path
}

test_that("sccs_data_from_cdm reads a DuckDB CDM by URL and gives Python's from_cdm design", {
  skip_if_no_hphawkes()
  path <- cdm_file()
  url <- paste0("duckdb:///", path)
  d <- sccs_data_from_cdm(url, outcome_concept_ids = 4000, exposure_concept_ids = c(1001, 1002),
                          negative_control_concept_ids = 1003, risk_end = 30,
                          study_start = as.Date("2001-01-01"), gender_concept_ids = c(8507, 8532))
  expect_s3_class(d, "sccs_data")
  py <- py_reference(paste(
    "import hphawkes_py as hp; from_cdm = hp.sccs.SCCSData.from_cdm",
    sprintf("d = from_cdm(%s, 4000, [1001, 1002], negative_control_concept_ids=[1003],", shQuote(url)),
    "              risk_end=30, study_start='2001-01-01', gender_concept_ids=[8507, 8532])",
    "out = {'n': [d.n_strata, d.n_rows, d.n_covariates, d.nnz], 'ids': d.covariate_ids, 'y': d.y, 'time': d.time,",
    "       'strata': d.stratum_ids, 'dropped': dict(d.dropped)}", sep = "\n"))
  expect_identical(c(d$n_strata, d$n_rows, d$n_covariates, d$nnz), py$n)
  expect_identical(d$covariate_ids, c(1001L, 1002L, 1003L))
  expect_identical(d$covariate_ids, py$ids)
  expect_identical(as.list(d$dropped), py$dropped)
  expect_identical(d$dropped[["same_day_outcome_records"]], 1L)
  # the same design, fitted from R and from Python
  fit <- sccs_fit(d, prior = "none", backend = "cpu")
  ref <- py_reference(paste(
    "import hphawkes_py as hp; from_cdm = hp.sccs.SCCSData.from_cdm",
    sprintf("d = from_cdm(%s, 4000, [1001, 1002], negative_control_concept_ids=[1003],", shQuote(url)),
    "              risk_end=30, study_start='2001-01-01', gender_concept_ids=[8507, 8532])",
    "out = hp.sccs.fit(d, prior='none', progress=False, backend='cpu').coefficients.to_numpy()", sep = "\n"))
  expect_identical(unname(coef(fit)), ref)
  # the negative control of the design, in its own model
  nc <- sccs_fit_negative_controls(d, controls = 1003, adjust = c(1001, 1002), backend = "cpu")
  expect_identical(nc$covariate_id, 1003L)
  expect_true(is.finite(nc$log_rr))
  expect_output(print(d), sprintf("SCCS data: %d strata", py$n[1]))
  # risk_windows keyed by concept id, and windows of sccs_risk_window()
  d2 <- sccs_data_from_cdm(url, 4000, c(1001, 1002), risk_windows = list(`1001` = c(0, 10)))
  n2 <- py_reference(paste(
    "import hphawkes_py as hp; from_cdm = hp.sccs.SCCSData.from_cdm",
    sprintf("d = from_cdm(%s, 4000, [1001, 1002], risk_windows={1001: (0, 10)})", shQuote(url)),
    "out = [d.n_rows, d.nnz, float(d.time.sum())]", sep = "\n"))
  expect_identical(c(d2$n_rows, d2$nnz, reticulate::py_to_r(d2$python$time$sum()$item())), n2)
  d3 <- sccs_data_from_cdm(url, 4000, 1001,
                           windows = list(`1001` = list(sccs_risk_window("pre", -30, -1, "start", "start"))))
  expect_identical(d3$covariate_ids, "pre")
})

test_that("sccs_data_from_cdm refuses bad arguments with errors naming them", {
  skip_if_no_hphawkes()
  path <- cdm_file(n_cases = 60, seed = 3)
  url <- paste0("duckdb:///", path)
  expect_error(sccs_data_from_cdm(url, 4000, c(1001, 9999)), "concept id 9999 is not in the concept table",
               class = "hphawkes_python_error")
  expect_error(sccs_data_from_cdm(url, 4000, 1001.5), "exposure_concept_ids must be whole-number concept ids; value 1 is 1001.5",
               class = "hphawkes_input_error")
  expect_error(sccs_data_from_cdm(url, 4000, c(1001, NA)), "exposure_concept_ids has 1 missing value")
  expect_error(sccs_data_from_cdm(url, "4000", 1001), "outcome_concept_ids must be whole-number concept ids, got character")
  expect_error(sccs_data_from_cdm(url, 4000, 1001, negative_control_concept_ids = 1001),
               "both exposure_concept_ids and negative_control_concept_ids", class = "hphawkes_python_error")
  expect_error(sccs_data_from_cdm(list(url), 4000, 1001), "connection must be a database URL")
  expect_error(sccs_data_from_cdm(c(url, url), 4000, 1001), "connection must be a database URL")
  expect_error(sccs_data_from_cdm(url, 4000, 1001, study_start = 20050101), "study_start must be a date")
  expect_error(sccs_data_from_cdm(url, 4000, 1001, risk_windows = list(a = c(0, 1))),
               "risk_windows must be named by exposure concept ids")
  expect_error(sccs_data_from_cdm(url, 4000, 1001, risk_windows = list(`1001` = 5)), "two day offsets")
  expect_error(sccs_data_from_cdm(url, 4000, 1001, windows = list(pre = list(sccs_risk_window("p", -3, -1)))),
               "windows names covariate id 'pre'")
  expect_error(sccs_data_from_cdm(url, 4000, 1001, include_descendants = NA), "include_descendants must be TRUE or FALSE")
  expect_error(sccs_data_from_cdm(url, 4000, 1001, outcome_table = "death"), "outcome_table",
               class = "hphawkes_python_error")
  expect_error(sccs_data_from_cdm(url, 4000, 1001, cdm_schema = "no_such_schema"), "no_such_schema",
               class = "hphawkes_python_error")
  expect_error(sccs_data_from_cdm(url, 4000, 1001, first = TRUE), "abbreviation of 'first_outcome_only'",
               class = "hphawkes_input_error")
  expect_error(sccs_data_from_cdm(paste0("duckdb:///", tempfile()), 4000, 1001), class = "hphawkes_python_error")
})
