#' Which compute backends can run here
#'
#' @return A data frame with one row per backend (\code{cpu}, \code{gpu}, \code{emulator}):
#'   \code{available} (logical) and \code{detail} (why not, or what will run), plus the
#'   backend that \code{backend = "auto"} resolves to as attribute \code{"auto"}.
#' @examples
#' \dontrun{hphawkes_backends()}
#' @export
hphawkes_backends <- function() {
  be <- .hp_call(reticulate::import("hphawkes_py._backend", convert = FALSE))
  status <- .hp_r(be$gpu_status())
  rows <- lapply(c("cpu", "gpu", "emulator"), function(b) {
    res <- tryCatch({ .hp_r(be$resolve_backend(b)); NULL }, error = function(e) e)
    ok <- is.null(res)
    detail <- if (!ok) .hp_clean_message(conditionMessage(res)) else switch(b,
      cpu = "Numba multi-core CPU engine",
      gpu = unlist(status)[2],
      emulator = "CUDA sources compiled for the host and run on the CPU (validation, slow)")
    data.frame(backend = b, available = ok, detail = as.character(detail), stringsAsFactors = FALSE)
  })
  out <- do.call(rbind, rows)
  attr(out, "auto") <- .hp_r(be$resolve_backend("auto"))
  out
}

#' Versions, threads and GPU status of the Python core
#'
#' @return A named list (as \code{hphawkes info} prints it).
#' @export
hphawkes_info <- function() {
  info <- .hp_call(reticulate::import("hphawkes_py._info", convert = FALSE))
  .hp_r(info$info_dict())
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
#'   \code{NULL} lets reticulate choose.
#' @param extra_packages More pip requirements to install (e.g. \code{"pycuda"}).
#' @param ... Passed to \code{reticulate::py_install()}.
#' @return The environment name, invisibly.
#' @export
install_hphawkes <- function(package = "hphawkes_py", envname = "r-hphawkes", python = NULL,
                             extra_packages = NULL, ...) {
  if (!reticulate::virtualenv_exists(envname)) {
    if (is.null(python)) reticulate::virtualenv_create(envname)
    else reticulate::virtualenv_create(envname, python = python)
  }
  pkgs <- c(path.expand(package), extra_packages)
  pkgs[file.exists(pkgs)] <- normalizePath(pkgs[file.exists(pkgs)])
  reticulate::py_install(pkgs, envname = envname, method = "virtualenv", pip = TRUE, ...)
  message("hphawkes_py installed into virtualenv '", envname, "'. Restart R; library(hphawkes) ",
          "will use it (or set RETICULATE_PYTHON to its python).")
  invisible(envname)
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
#' @examples
#' \dontrun{dc <- hphawkes_data("dc_gunshots", variant = "no_holidays")}
#' @export
hphawkes_data <- function(dataset, ...) {
  ds <- .hp_mod("datasets")
  fun <- paste0("load_", dataset)
  if (!.hp_call(reticulate::py_has_attr(ds, fun)))
    .hp_stop("no bundled data loader hphawkes_py.datasets.", fun)
  .hp_r(.hp_call(do.call(ds[[fun]], list(...))))
}

#' Path of a file bundled with hphawkes_py
#' @param relative Path inside the package's \code{data/} directory.
#' @export
hphawkes_data_path <- function(relative) {
  ds <- .hp_mod("datasets")
  .hp_r(.hp_call(reticulate::import_builtins(convert = FALSE)$str(ds$path(relative))))
}
