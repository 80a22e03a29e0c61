# Skip (locally) or fail (CI: HPHAWKES_R_NO_SKIP=1, set by run_tests.sh) when Python or the
# hphawkes_py module is missing.
skip_if_no_hphawkes <- function() {
  if (hphawkes::hphawkes_available()) return(invisible(TRUE))
  why <- sprintf("Python (RETICULATE_PYTHON=%s) or the Python module hphawkes_py is not available",
                 Sys.getenv("RETICULATE_PYTHON", "<unset>"))
  if (nzchar(Sys.getenv("HPHAWKES_R_NO_SKIP"))) stop(why, "; HPHAWKES_R_NO_SKIP is set, so this is a failure")
  testthat::skip(why)
}

# Run Python code (a string) in a fresh namespace and return the variable `out`, converted
# with the package's exact encoder. Used to compute the reference result directly in Python.
py_reference <- function(code) {
  main <- reticulate::py_run_string(code, local = TRUE, convert = FALSE)
  hphawkes:::.hp_r(main["out"])
}

# Write an R matrix / vector to a CSV that the Python side reads back, so the reference
# computation does not go through the package's own R -> Python conversion.
tmp_csv <- function(x) {
  f <- tempfile(fileext = ".csv")
  utils::write.table(format(as.matrix(x), digits = 17), f, sep = ",", row.names = FALSE,
                     col.names = FALSE, quote = FALSE)
  normalizePath(f, winslash = "/")
}
