#' Which compute backends can run here
#'
#' @return A data frame with one row per backend (\code{cpu}, \code{gpu}, \code{emulator}):
#'   \code{available} (logical), \code{detail} (why not, or what will run), \code{is_auto}
#'   (what \code{backend = "auto"} picks) and, for a usable GPU, \code{api} (\code{"pycuda"} or
#'   \code{"cupy"}), \code{device}, \code{compute_capability} and \code{memory_gib}. The backend
#'   that \code{backend = "auto"} resolves to is also the attribute \code{"auto"}.
#' @seealso \code{\link{hphawkes_info}}; the \code{backend} argument of every fitting function.
#' @examplesIf hphawkes_available()
#' b <- hphawkes_backends()
#' b[, c("backend", "available", "is_auto")]
#' attr(b, "auto")  # what backend = "auto" runs on
#' @export
hphawkes_backends <- function() {
  .hp_check_args()
  out <- .hp_r(.hp_call(hp$backends()))
  out$detail <- vapply(out$detail, .hp_clean_message, character(1))
  attr(out, "auto") <- out$backend[out$is_auto]
  out
}

#' Versions, threads and GPU status of the Python core
#'
#' The report of the command line \code{hphawkes info}: the versions of Python, NumPy, Numba
#' and \code{hphawkes_py}, the number of CPU threads, and the GPU status.
#'
#' @return A named list (as \code{hphawkes info} prints it).
#' @seealso \code{\link{hphawkes_backends}}.
#' @examplesIf hphawkes_available()
#' info <- hphawkes_info()
#' names(info)
#' @export
hphawkes_info <- function() {
  .hp_check_args()
  .hp_r(.hp_call(hp$info()))
}

#' Install the Python package hphawkes_py for use from R
#'
#' Creates (if needed) a Python virtual environment with \code{reticulate::virtualenv_create()}
#' and pip-installs \code{hphawkes_py} into it. After a restart of R, \code{library(hphawkes)}
#' uses this environment automatically (unless \code{RETICULATE_PYTHON} points elsewhere).
#'
#' @param package What pip installs: a path to a clone of the hphawkes_py repository
#'   (e.g. \code{"~/src/hphawkes_py"}), a wheel file, or a requirement such as
#'   \code{"hphawkes_py[r]"}.
#' @param envname Name (or path) of the virtual environment.
#' @param python Python interpreter used to create the environment (>= 3.10);
#'   \code{NULL} takes the first \code{python3} (or \code{python}) on the PATH that has
#'   \code{venv} and \code{pip}, chosen explicitly so that reticulate's project discovery (which
#'   mistakes a folder with a \code{pyproject.toml} for a Poetry project) never runs.
#' @param extra_packages More pip requirements to install (e.g. \code{"pycuda"}).
#' @param ... Passed to \code{reticulate::py_install()}.
#' @return The environment name, invisibly.
#' @seealso \code{\link{hphawkes_available}}.
#' @examples
#' # Creates a virtual environment and pip-installs into it (network access, minutes),
#' # so it is not run here:
#' \dontrun{
#' install_hphawkes("~/src/hphawkes_py")            # from a clone of the repository
#' install_hphawkes(extra_packages = "pycuda")  # with the CUDA driver bindings
#' }
#' @export
install_hphawkes <- function(package = "hphawkes_py", envname = "r-hphawkes", python = NULL,
                             extra_packages = NULL, ...) {
  .hp_check_args(dots = TRUE)
  if (!reticulate::virtualenv_exists(envname)) {
    if (is.null(python)) python <- .hp_find_python()
    reticulate::virtualenv_create(envname, python = python)
  }
  pkgs <- c(path.expand(package), extra_packages)
  pkgs[file.exists(pkgs)] <- normalizePath(pkgs[file.exists(pkgs)])
  reticulate::py_install(pkgs, envname = envname, method = "virtualenv", pip = TRUE, ...)
  message("hphawkes_py installed into virtualenv '", envname, "'. Restart R; library(hphawkes) ",
          "will use it (or set RETICULATE_PYTHON to its python).")
  invisible(envname)
}

# The first python3/python on the PATH that can create a virtual environment (venv and pip).
.hp_find_python <- function() {
  for (cand in unique(Sys.which(c("python3", "python")))) {
    if (!nzchar(cand)) next
    ok <- suppressWarnings(system2(cand, c("-c", shQuote("import venv, ensurepip, sys; assert sys.version_info >= (3, 10)")),
                                   stdout = FALSE, stderr = FALSE))
    if (identical(ok, 0L)) return(normalizePath(cand))
  }
  .hp_stop("no Python >= 3.10 with venv and pip on the PATH; install one (Debian: apt-get install ",
           "python3-venv) or pass python = \"/path/to/python3\"")
}

#' Load a data set bundled with hphawkes_py
#'
#' Calls \code{hphawkes_py.datasets.load_<name>(...)} and converts the result to R
#' (data frames stay data frames, arrays become matrices).
#'
#' @param dataset Loader name without the \code{load_} prefix, e.g. \code{"dc_gunshots"},
#'   \code{"grave"}, \code{"ny_leukemia"}, \code{"faithful"}, \code{"flow_cytometry"},
#'   \code{"zhang2017_points"}, \code{"oxford"}.
#' @param ... Arguments of the loader (e.g. \code{variant = "thinned"}).
#' @return The data set as an R object.
#' @seealso \code{\link{hphawkes_data_path}} for the files behind the loaders.
#' @examplesIf hphawkes_available()
#' grave <- hphawkes_data("grave")  # 143 medieval graves, case = affected by a dental anomaly
#' head(grave)
#' faithful2 <- hphawkes_data("faithful")
#' dim(faithful2)
#' @export
hphawkes_data <- function(dataset, ...) {
  .hp_check_args(dots = TRUE)
  ds <- .hp_mod("datasets")
  fun <- paste0("load_", dataset)
  if (!.hp_call(reticulate::py_has_attr(ds, fun)))
    .hp_stop("no bundled data loader hphawkes_py.datasets.", fun)
  .hp_r(.hp_call(do.call(ds[[fun]], list(...))))
}

#' Path of a file bundled with hphawkes_py
#'
#' @param relative Path inside the package's \code{data/} directory (forward slashes).
#' @return The absolute path of the file (a character string).
#' @seealso \code{\link{hphawkes_data}}.
#' @examplesIf hphawkes_available()
#' asc <- hphawkes_data_path("kde/zhang2017/redwood.asc.gz")
#' file.exists(asc)
#' kde_window("asc", path = asc)
#' @export
hphawkes_data_path <- function(relative) {
  .hp_check_args()
  ds <- .hp_mod("datasets")
  .hp_r(.hp_call(reticulate::import_builtins(convert = FALSE)$str(ds$path(relative))))
}
