# Runs the SCCS package's eventdepenexp (Farrington, Whitaker & Ghebremichael; CRAN SCCS 1.7)
# on its bundled rotavirus data (rotdat.txt.gz, copied here) and writes the estimates and the
# sandwich standard errors to eventdepenexp.json, which tests/test_sccs_event_dependent_exposure.py
# compares with hphawkes_py.sccs.event_dependent_exposure.
#
#   SCCS_SRC=<unpacked SCCS source> Rscript tests/data/sccs_eventdepenexp/make_fixture.R
#
# Needs R packages survival and gnm; the SCCS sources are sourced, not installed (its other
# imports, fda and corpcor, are not used by eventdepenexp).
library(survival)
library(gnm)
src <- Sys.getenv("SCCS_SRC", "/work/scratch/K_sccs")
for (f in c("formatdata.R", "adrug_matrix.R", "summary_sccs.R", "eventdepenexp.R")) source(file.path(src, "R", f))
here <- dirname(sub("--file=", "", grep("--file=", commandArgs(FALSE), value = TRUE)))
rotdat <- read.table(gzfile(file.path(here, "rotdat.txt.gz")), header = TRUE)
# the package's own tests of the option: two doses, one or two risk periods, common or
# dose-specific parameters, with and without age groups
runs <- list(
  mod1 = function() eventdepenexp(indiv = case, astart = sta, aend = end, aevent = intus, adrug = cbind(rv, rvd2),
                                  expogrp = 1, aedrug = cbind(rv + 21, rvd2 + 21), agegrp = seq(56, 168, 14),
                                  dataformat = "multi", data = rotdat),
  mod2 = function() eventdepenexp(indiv = case, astart = sta, aend = end, aevent = intus, adrug = cbind(rv, rvd2),
                                  aedrug = cbind(rv + 21, rvd2 + 21), expogrp = c(1, 8), agegrp = seq(56, 168, 14),
                                  dataformat = "multi", data = rotdat),
  mod3 = function() eventdepenexp(indiv = case, astart = sta, aend = end, aevent = intus, adrug = cbind(rv, rvd2),
                                  aedrug = cbind(rv + 21, rvd2 + 21), expogrp = c(1, 8), sameexpopar = FALSE,
                                  agegrp = seq(56, 168, 14), dataformat = "multi", data = rotdat),
  mod4 = function() eventdepenexp(indiv = case, astart = sta, aend = end, aevent = intus, adrug = cbind(rv, rvd2),
                                  aedrug = cbind(rv + 21, rvd2 + 21), expogrp = c(0, 8), agegrp = NULL,
                                  dataformat = "multi", data = rotdat),
  mod5 = function() eventdepenexp(indiv = case, astart = sta, aend = end, aevent = intus, adrug = cbind(rv, rvd2),
                                  aedrug = cbind(rv + 21, rvd2 + 21), expogrp = 0, sameexpopar = FALSE,
                                  agegrp = c(90, 120), dataformat = "multi", data = rotdat)
)
num <- function(x) sprintf("%.12g", x)
out <- c()
for (name in names(runs)) {
  m <- runs[[name]]()
  co <- m$coefficients
  out <- c(out, sprintf('  "%s": {"names": [%s], "coef": [%s], "se": [%s]}', name,
                        paste0('"', rownames(co), '"', collapse = ", "),
                        paste(num(co[, "coef"]), collapse = ", "), paste(num(co[, "se(coef)"]), collapse = ", ")))
}
writeLines(c("{", paste(out, collapse = ",\n"), "}"), file.path(here, "eventdepenexp.json"))
