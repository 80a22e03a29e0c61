# R CMD check runs the testthat suite through this file. The tests skip when Python or the
# module hphawkes_py is missing (they fail instead when HPHAWKES_R_NO_SKIP is set, as
# r-wrapper/run_tests.sh does).
library(testthat)
library(hphawkes)

test_check("hphawkes")
