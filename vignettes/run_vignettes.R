# Execute the R Markdown vignettes. Usage:
#   Rscript vignettes/run_vignettes.R [--quick] [--outdir DIR] [name ...]
# Renders to HTML with rmarkdown when pandoc is available; otherwise runs the code chunks
# (knitr::purl + source). Exits non-zero if any vignette fails.
args <- commandArgs(trailingOnly = TRUE)
quick <- "--quick" %in% args
outdir <- if ("--outdir" %in% args) args[which(args == "--outdir") + 1L] else tempfile("hphawkes-vignettes-")
names_wanted <- setdiff(args, c("--quick", "--outdir", outdir))
here <- local({
  f <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(f)) dirname(normalizePath(f)) else "vignettes"
})
if (!requireNamespace("hphawkes", quietly = TRUE)) {
  message("[vignettes] the R package hphawkes is not installed: run `R CMD INSTALL r-wrapper` ",
          "(or bash r-wrapper/run_tests.sh, which installs it into a temporary library)")
  quit(status = 1L)
}
dir.create(outdir, showWarnings = FALSE, recursive = TRUE)
files <- sort(list.files(here, pattern = "\\.Rmd$", full.names = TRUE))
if (length(names_wanted)) files <- files[sub("\\.Rmd$", "", basename(files)) %in% names_wanted]
use_render <- requireNamespace("rmarkdown", quietly = TRUE) && rmarkdown::pandoc_available() &&
  !nzchar(Sys.getenv("HPHAWKES_NO_PANDOC"))  # set to force the purl + source path
status <- c()
for (f in files) {
  name <- sub("\\.Rmd$", "", basename(f))
  t0 <- proc.time()[["elapsed"]]
  ok <- tryCatch({
    if (use_render) {
      rmarkdown::render(f, output_dir = outdir, intermediates_dir = outdir, quiet = TRUE,
                        params = list(quick = quick), envir = new.env(parent = globalenv()))
    } else {
      r <- file.path(outdir, paste0(name, ".R"))
      knitr::purl(f, output = r, quiet = TRUE)
      env <- new.env(parent = globalenv())
      assign("params", list(quick = quick, variant = "2010"), envir = env)
      grDevices::pdf(file.path(outdir, paste0(name, ".pdf")))
      res <- try(source(r, local = env, echo = FALSE, print.eval = TRUE), silent = TRUE)
      grDevices::dev.off()
      if (inherits(res, "try-error")) stop(attr(res, "condition"))
    }
    TRUE
  }, error = function(e) {
    message(sprintf("[vignettes] %s FAILED: %s", name, conditionMessage(e)))
    FALSE
  })
  status[name] <- ok
  message(sprintf("[vignettes] %-10s %s in %.1f s (%s)", name, if (ok) "ok" else "FAILED",
                  proc.time()[["elapsed"]] - t0, if (use_render) "rmarkdown -> HTML" else "purl + source"))
}
message(sprintf("[vignettes] R: %d of %d ran; output in %s", sum(status), length(status), outdir))
quit(status = if (all(status)) 0L else 1L)
