#!/usr/bin/env bash
# Render the R package's help pages (r-wrapper/man/*.Rd) to static HTML in OUTDIR, one page per
# Rd file, with OUTDIR/index.html listing the pages by method with their titles. Links between
# the package's pages point at the neighbouring files; links into other R packages point at
# their reference pages on search.r-project.org. Needs only R (r-base-core): the package itself
# does not have to be installed, and Python is not started.
#   bash scripts/r_reference.sh OUTDIR
set -euo pipefail
if [ $# -ne 1 ]; then echo "usage: bash scripts/r_reference.sh OUTDIR" >&2; exit 2; fi
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
man="$repo/r-wrapper/man"
mkdir -p "$1"
out="$(cd "$1" && pwd)"
if ! command -v Rscript >/dev/null; then
  echo "[r-reference] Rscript not found: install r-base-core (scripts/install_r.sh)" >&2; exit 1
fi
code="$(mktemp "${TMPDIR:-/tmp}/r_reference.XXXXXX.R")"
trap 'rm -f "$code"' EXIT
cat >"$code" <<'RCODE'
args <- commandArgs(TRUE)
man <- args[1]; out <- args[2]
pkg <- "hphawkes"
files <- sort(list.files(man, pattern = "\\.Rd$", full.names = TRUE))
if (!length(files)) stop("no .Rd files in ", man)
rds <- lapply(files, tools::parse_Rd)
stems <- sub("\\.Rd$", "", basename(files))
tags <- function(rd, name) Filter(function(x) identical(attr(x, "Rd_tag"), name), rd)
text_of <- function(x) trimws(gsub("\\s+", " ", paste(unlist(x), collapse = "")))
aliases <- lapply(rds, function(rd) vapply(tags(rd, "\\alias"), text_of, ""))
titles <- vapply(rds, function(rd) text_of(tags(rd, "\\title")), "")
internal <- vapply(rds, function(rd) "internal" %in% vapply(tags(rd, "\\keyword"), text_of, ""), NA)

# Topic -> page: this package's aliases (as "../../hphawkes/html/<file>.html", which Rd2HTML
# expects and which is rewritten below) over those of the installed packages.
links <- tools::findHTMLlinks()
own <- stats::setNames(rep(sprintf("../../%s/html/%s.html", pkg, stems), lengths(aliases)),
                       unlist(aliases))
links[names(own)] <- own
base_pkgs <- rownames(utils::installed.packages(priority = "base"))
external <- function(p, f) {
  where <- if (p %in% base_pkgs) "R" else "CRAN"
  sprintf("https://search.r-project.org/%s/refmans/%s/html/%s", where, p, f)
}
rewrite <- function(html) {
  html <- gsub(sprintf("../../%s/(html|help)/", pkg), "", html)
  m <- gregexpr('href="\\.\\./\\.\\./[^/"]+/(html|help)/[^"]+"', html)
  regmatches(html, m) <- lapply(regmatches(html, m), function(h) {
    parts <- regmatches(h, regexec('href="\\.\\./\\.\\./([^/"]+)/(html|help)/([^"]+)"', h))
    vapply(parts, function(p) sprintf('href="%s"', external(p[2], p[4])), "")
  })
  html
}
for (i in seq_along(rds)) {
  target <- file.path(out, paste0(stems[i], ".html"))
  suppressWarnings(tools::Rd2HTML(rds[[i]], out = target, package = pkg, Links = links,
                                  stylesheet = "R.css"))
  html <- readLines(target, encoding = "UTF-8", warn = FALSE)
  html <- rewrite(html)
  html <- sub("<table style=\"width: 100%;\"><tr><td>",
              "<p><a href=\"index.html\">hphawkes R reference</a></p>\n<table style=\"width: 100%;\"><tr><td>",
              html, fixed = TRUE)
  writeLines(html, target, useBytes = TRUE)
}
invisible(file.copy(file.path(R.home("doc"), "html", "R.css"), file.path(out, "R.css"), overwrite = TRUE))

# The index, by method (read from the page names).
# The first pattern that matches a page's name wins (hphawkes_scan before hawkes_).
groups <- c(
  "Package, Python and data" = "^(hphawkes-package|hphawkes_(available|backends|info|data|data_path)|install_hphawkes)$",
  "Scan statistics" = "(^scan_|declustered|hphawkes_scan)",
  "Self-controlled case series" = "sccs",
  "Kernel density estimation" = "(^kde_|\\.kde_|hphawkes_kde|relrisk|spacetime)",
  "Dirichlet-process mixtures" = "tdp_mixture",
  "Spatiotemporal Hawkes process" = "(^|\\.)hawkes_"
)
shown <- c("Package, Python and data", "Spatiotemporal Hawkes process", "Kernel density estimation",
           "Self-controlled case series", "Scan statistics", "Dirichlet-process mixtures", "Other")
group_of <- vapply(stems, function(s) {
  hit <- names(groups)[vapply(groups, function(g) grepl(g, s), NA)]
  if (length(hit)) hit[1] else "Other"
}, "")
esc <- function(s) gsub(">", "&gt;", gsub("<", "&lt;", gsub("&", "&amp;", s, fixed = TRUE), fixed = TRUE), fixed = TRUE)
ver <- tryCatch(read.dcf(file.path(dirname(man), "DESCRIPTION"), "Version")[1, 1], error = function(e) "")
html <- c("<!DOCTYPE html>", "<html><head><meta charset=\"utf-8\" />",
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1.0\" />",
          "<title>hphawkes: R reference</title>",
          "<link rel=\"stylesheet\" type=\"text/css\" href=\"R.css\" />", "</head><body><div class=\"container\">",
          sprintf("<h1>hphawkes %s: R reference</h1>", esc(ver)),
          "<p>Help pages of the R package <code>hphawkes</code>, the R interface to <code>hphawkes_py</code>,",
          "as <code>?topic</code> shows them in R.</p>")
for (g in shown) {
  k <- which(group_of == g & !internal)
  k <- k[order(stems[k] != "hphawkes-package")]  # the package overview first
  if (!length(k)) next
  html <- c(html, sprintf("<h2>%s</h2>", esc(g)), "<table>")
  html <- c(html, sprintf("<tr><td style=\"padding-right: 1em;\"><a href=\"%s.html\"><code>%s</code></a></td><td>%s</td></tr>",
                          stems[k], esc(vapply(aliases[k], `[`, "", 1)), esc(titles[k])))
  html <- c(html, "</table>")
}
html <- c(html, "</div></body></html>")
writeLines(html, file.path(out, "index.html"), useBytes = TRUE)
cat(sprintf("[r-reference] %d pages and index.html in %s\n", length(files), out))
RCODE
Rscript --vanilla "$code" "$man" "$out"
