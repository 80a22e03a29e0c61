# Runs the SCCS package's eventdepenobs (Farrington, Whitaker & Ghebremichael; CRAN SCCS 1.7)
# with regress = TRUE (the 7-parameter censoring models) on its bundled nicotine replacement
# therapy data (nrtdat.txt.gz, copied here), and writes each censoring model's fitted
# parameters, log-likelihood and AIC to eventdepenobs_regress.json, which
# tests/test_sccs_event_dependent_exposure.py compares with hphawkes_py.sccs.fit_censoring_models.
#
#   SCCS_SRC=<unpacked SCCS source> Rscript tests/data/sccs_eventdepenobs_regress/make_fixture.R
#
# Needs the R package survival; the SCCS sources are sourced, not installed.
library(survival)
src <- Sys.getenv("SCCS_SRC", "/work/scratch/K_sccs")
for (f in c("formatdata.R", "Yproduct.R", "dummyvar.R", "adrug_matrix.R", "max_expo.R", "summary_sccs.R",
            "eventdepenobs.R")) source(file.path(src, "R", f))
# the package does not return the fitted censoring parameters: the only change made to its code
# is that its return value also carries them
code <- paste(deparse(eventdepenobs), collapse = "\n")
code <- sub('return(list(modelfit = modelfit,',
            'return(list(p = list(EWA = p_ewad2, EWI = p_ewid2, EGA = p_egad2, EGI = p_egid2), modelfit = modelfit,',
            code, fixed = TRUE)
stopifnot(grepl("p = list(EWA = p_ewad2", code, fixed = TRUE))
eventdepenobs <- eval(parse(text = code))
here <- dirname(sub("--file=", "", grep("--file=", commandArgs(FALSE), value = TRUE)))
nrtdat <- read.table(gzfile(file.path(here, "nrtdat.txt.gz")), header = TRUE)
m <- eventdepenobs(event ~ nrt, indiv = case, astart = nrt, aend = act, aevent = mi, adrug = nrt,
                   aedrug = nrt + 28, censor = cen, expogrp = c(0, 8, 15, 22), agegrp = NULL, regress = TRUE,
                   data = nrtdat)
num <- function(x) sprintf("%.12g", x)
out <- c()
for (model in c("EWA", "EWI", "EGA", "EGI")) {
  out <- c(out, sprintf('  "%s": {"loglik": %s, "aic": %s, "params": [%s]}', model,
                        num(m$modelfit["Loglik", model]), num(m$modelfit["AIC", model]),
                        paste(num(m$p[[model]]), collapse = ", ")))
}
writeLines(c("{", paste(out, collapse = ",\n"), "}"), file.path(here, "eventdepenobs_regress.json"))
