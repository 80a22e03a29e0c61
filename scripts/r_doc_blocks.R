# Runs every R code block of the README (```r fences) and of docs/**/*.rst (".. code-block:: r"),
# each in a fresh environment, against the installed hphawkes package. Exit status 1 if any fails.
#   Rscript --vanilla scripts/r_doc_blocks.R [REPO]
args <- commandArgs(trailingOnly = TRUE)
repo <- if (length(args)) args[[1]] else "."

md_blocks <- function(path) {
  lines <- readLines(path, warn = FALSE)
  starts <- grep("^```r\\s*$", lines)
  lapply(starts, function(s) {
    e <- s + which(grepl("^```\\s*$", lines[(s + 1):length(lines)]))[1]
    list(where = sprintf("%s:%d", path, s), code = lines[(s + 1):(e - 1)])
  })
}

rst_blocks <- function(path) {
  lines <- readLines(path, warn = FALSE)
  starts <- grep("^\\s*\\.\\. code-block:: [rR]\\s*$", lines)
  lapply(starts, function(s) {
    indent <- nchar(sub("\\.\\..*$", "", lines[s]))
    body <- character()
    i <- s + 1
    while (i <= length(lines) && (lines[i] == "" || nchar(sub("^(\\s*).*$", "\\1", lines[i])) > indent)) {
      body <- c(body, lines[i])
      i <- i + 1
    }
    body <- body[cumsum(body != "") > 0]
    pad <- min(nchar(sub("^(\\s*).*$", "\\1", body[body != ""])))
    list(where = sprintf("%s:%d", path, s), code = substring(body, pad + 1))
  })
}

docs <- list.files(file.path(repo, "docs"), pattern = "\\.rst$", recursive = TRUE, full.names = TRUE)
docs <- docs[!grepl("/(_build|api|auto_examples)/", docs)]
blocks <- c(md_blocks(file.path(repo, "README.md")), unlist(lapply(docs, rst_blocks), recursive = FALSE))
failed <- 0L
for (b in blocks) {
  ok <- tryCatch({
    capture.output(eval(parse(text = b$code), envir = new.env(parent = globalenv())))
    TRUE
  }, error = function(e) {
    message(sprintf("[r-doc-blocks] FAILED %s: %s", b$where, conditionMessage(e)))
    FALSE
  })
  if (!ok) failed <- failed + 1L
}
message(sprintf("[r-doc-blocks] %d R blocks run, %d failed", length(blocks), failed))
quit(status = if (failed > 0) 1L else 0L)
