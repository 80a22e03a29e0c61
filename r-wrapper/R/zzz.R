# Delayed import of the Python core. Nothing touches Python until the first call, so
# library(hphawkes) is instant and works even before Python is configured.
#
# Every module is imported with convert = FALSE: results are turned into R objects by the
# package itself (through hphawkes_py.interop.rfriendly, see convert.R), never by
# reticulate's NumPy conversion, which in reticulate 1.28 (Debian bookworm) cannot use the
# NumPy 2 C API.

hp <- NULL
rf <- NULL

.onLoad <- function(libname, pkgname) {
  .hp_choose_python()
  hp <<- reticulate::import("hphawkes_py", delay_load = TRUE, convert = FALSE)
  rf <<- reticulate::import("hphawkes_py.interop.rfriendly", delay_load = TRUE, convert = FALSE)
}

# Which Python: RETICULATE_PYTHON if set; else HPHAWKES_PYTHON; else the virtualenv that
# install_hphawkes() creates ("r-hphawkes") when it exists; else reticulate's default search.
.hp_choose_python <- function() {
  if (nzchar(Sys.getenv("RETICULATE_PYTHON"))) return(invisible(NULL))
  py <- Sys.getenv("HPHAWKES_PYTHON")
  if (nzchar(py)) {
    Sys.setenv(RETICULATE_PYTHON = py)
    return(invisible(NULL))
  }
  # Name the interpreter through RETICULATE_PYTHON rather than use_virtualenv(): reticulate's own
  # discovery would otherwise look at the working directory first and, in a folder with a
  # pyproject.toml (such as a clone of hphawkes_py), announce that it "appears to use Poetry".
  ok <- tryCatch(reticulate::virtualenv_exists("r-hphawkes"), error = function(e) FALSE)
  if (isTRUE(ok)) {
    py <- tryCatch(reticulate::virtualenv_python("r-hphawkes"), error = function(e) "")
    if (nzchar(py) && file.exists(py)) Sys.setenv(RETICULATE_PYTHON = py)
  }
  invisible(NULL)
}

# A submodule of hphawkes_py (hawkes, kde, sccs, scan, mixture, datasets, ...), unconverted.
.hp_mod <- function(name) {
  .hp_call(reticulate::import(paste0("hphawkes_py.", name), convert = FALSE))
}

#' Is the Python core available?
#'
#' Starts Python (the interpreter chosen as described in \code{\link{hphawkes-package}}) if it
#' is not running yet and checks that the module \code{hphawkes_py} can be imported. Use it to
#' skip code that needs the Python core, as the examples of this package do.
#'
#' @return \code{TRUE} when Python can be started and \code{hphawkes_py} imports, else
#'   \code{FALSE} (never an error).
#' @seealso \code{\link{install_hphawkes}}, \code{\link{hphawkes_backends}}.
#' @examples
#' hphawkes_available()
#' @export
hphawkes_available <- function() {
  .hp_check_args()
  ok <- tryCatch(reticulate::py_available(initialize = TRUE), error = function(e) FALSE)
  ok && tryCatch(reticulate::py_module_available("hphawkes_py"), error = function(e) FALSE)
}

#' @importFrom ggplot2 autoplot
#' @export
ggplot2::autoplot
