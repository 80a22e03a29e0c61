test_that("R reaches the Python core through reticulate", {
  skip_if_no_hphawkes()
  be <- hphawkes_backends()
  expect_s3_class(be, "data.frame")
  expect_setequal(be$backend, c("cpu", "gpu", "emulator"))
  expect_true(be$available[be$backend == "cpu"])
  expect_true(attr(be, "auto") %in% c("cpu", "gpu"))
  expect_true(all(c("api", "device", "compute_capability", "is_auto") %in% names(be)))
  expect_equal(sum(be$is_auto), 1)
  info <- hphawkes_info()
  expect_true(is.list(info))
  py_ver <- reticulate::import("hphawkes_py")$`__version__`
  expect_identical(as.character(utils::packageVersion("hphawkes")), py_ver)
})

test_that("numbers cross the boundary exactly in both directions", {
  skip_if_no_hphawkes()
  set.seed(1)
  m <- matrix(rnorm(12) * 1e10^(sample(-3:3, 12, TRUE)), 4, 3)
  m[2, 3] <- .Machine$double.xmin
  arr <- hphawkes:::.np_double(m)
  expect_true(reticulate::py_to_r(arr$flags$c_contiguous))
  expect_identical(reticulate::py_to_r(arr$dtype$name), "float64")
  expect_identical(unlist(reticulate::py_to_r(arr$shape)), c(4L, 3L))
  # Python sees element [i, j] = m[i + 1, j + 1]
  expect_identical(reticulate::py_to_r(arr$item(1L, 2L)), m[2, 3])
  expect_identical(reticulate::py_to_r(arr$item(3L, 0L)), m[4, 1])
  expect_identical(hphawkes:::.hp_r(arr), m)
  ints <- hphawkes:::.np_count(c(0, 3, 7))
  expect_identical(reticulate::py_to_r(ints$dtype$name), "int64")
  expect_identical(hphawkes:::.hp_r(ints), c(0L, 3L, 7L))
  # non-whole counts are not rounded: they go to Python as doubles
  expect_identical(reticulate::py_to_r(hphawkes:::.np_count(c(1, 2.5))$dtype$name), "float64")
  df <- py_reference("import pandas as pd, numpy as np\nout = pd.DataFrame({'a': np.arange(3.0), 'b': ['x', 'y', 'z'], 'c': [True, False, True]}, index=['r1', 'r2', 'r3'])")
  expect_identical(df, data.frame(a = c(0, 1, 2), b = c("x", "y", "z"), c = c(TRUE, FALSE, TRUE),
                                  row.names = c("r1", "r2", "r3")))
})

test_that("integer arguments are checked, not silently rounded", {
  expect_error(hphawkes:::.as_int(2.5, "n_iter"), "n_iter must be a single whole number")
  expect_identical(hphawkes:::.as_int(1000, "n_iter"), 1000L)
  expect_null(hphawkes:::.as_int(NULL, "seed"))
})

test_that("Python exceptions arrive as R errors with the Python message", {
  skip_if_no_hphawkes()
  err <- tryCatch(hphawkes:::.hp_call(reticulate::py_eval("int('not a number')")), error = function(e) e)
  expect_s3_class(err, "hphawkes_python_error")
  expect_identical(err$python_type, "ValueError")
  expect_identical(conditionMessage(err), "ValueError: invalid literal for int() with base 10: 'not a number'")
  expect_error(hphawkes_data("no_such_data"), "no bundled data loader")
  expect_error(scan_bernoulli(matrix(0, 3, 2), c(1, 0, 1), c(0, 1, 0), max_population = 0.9,
                              n_replicates = 9),
               "max_population must be in \\(0, 0.5\\]", class = "hphawkes_python_error")
})
