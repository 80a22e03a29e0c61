# Conversion between R and the Python core, and Python errors as R errors.
#
# R -> Python: numeric data travel as the raw bytes of little-endian doubles (or 32-bit
# integers) with R's dim; hphawkes_py.interop.rfriendly.array_from_r rebuilds a C-contiguous
# float64 / int64 array (undoing R's column-major layout). Scalars that Python wants as int
# (n_iter, chains, seeds, ...) are checked to be whole numbers and sent as R integers.
# Python -> R: rfriendly.encode() turns results into nested lists of plain values, numeric
# arrays as base64 buffers in Fortran order; .hp_decode() rebuilds vectors, matrices, data
# frames. Both directions are exact (bit for bit).

# ---- errors ------------------------------------------------------------------------------

.hp_clean_message <- function(msg) {
  msg <- paste(msg, collapse = "\n")
  # reticulate appends hints / tracebacks after the Python message; keep the message only.
  msg <- sub("\n*Detailed traceback:.*$", "", msg)
  msg <- sub("\n*Run `reticulate::py_last_error\\(\\)` for details\\..*$", "", msg)
  msg <- sub("^Error in py_call_impl\\(.*?\\) :\\s*", "", msg, perl = TRUE)
  trimws(msg)
}

# Evaluate a Python call; a Python exception becomes an R error of class
# c("hphawkes_python_error", "hphawkes_error", "error", "condition") whose message is the
# Python one ("ValueError: x must be finite ...") and whose python_type field names the class.
.hp_call <- function(expr, call = sys.call(-1L)) {
  tryCatch(expr, error = function(e) {
    if (inherits(e, "hphawkes_error")) stop(e)
    msg <- .hp_clean_message(conditionMessage(e))
    first <- strsplit(msg, "\n", fixed = TRUE)[[1]][1]
    type <- if (grepl("^[A-Za-z_][A-Za-z0-9_.]*: ", first)) sub(":.*$", "", first) else NA_character_
    stop(structure(
      class = c("hphawkes_python_error", "hphawkes_error", "error", "condition"),
      list(message = msg, call = call, python_type = type)
    ))
  })
}

# Evaluate a Python call with its warnings recorded, and raise them again as R warnings: a Python
# warning would only reach the R session's stderr (not warnings(), tryCatch or testthat), and a
# warning that says data were left out must not pass unseen.
.hp_py_warnings <- function(expr) {
  w <- reticulate::import("warnings", convert = FALSE)
  ctx <- w$catch_warnings(record = TRUE)
  rec <- ctx$`__enter__`()
  entered <- TRUE
  on.exit(if (entered) ctx$`__exit__`(NULL, NULL, NULL), add = TRUE)
  w$simplefilter("always")
  value <- expr
  ctx$`__exit__`(NULL, NULL, NULL)
  entered <- FALSE
  msgs <- vapply(seq_len(reticulate::py_len(rec)), function(i) {
    r <- reticulate::py_get_item(rec, i - 1L)
    paste0(reticulate::py_to_r(r$category$`__name__`), ": ", reticulate::py_str(r$message))
  }, character(1))
  for (m in unique(msgs)) warning(m, call. = FALSE)
  value
}

.hp_stop <- function(...) {
  stop(structure(
    class = c("hphawkes_input_error", "hphawkes_error", "error", "condition"),
    list(message = paste0(...), call = sys.call(-1L))
  ))
}

# ---- argument names ----------------------------------------------------------------------

# R matches an abbreviated argument name to the one formal it begins (tdp_mixture(X, k = 8) would
# set keep_draws), and a name that matches no formal vanishes into an unused `...`. The exported
# functions call this first, so that every argument name is written in full and is their own.
# dots = TRUE where `...` is passed on to Python (which refuses names it does not know); a name
# that abbreviates a formal is refused there too.
.hp_check_args <- function(dots = FALSE, call = sys.call(-1L), fun = sys.function(-1L)) {
  given <- names(as.list(call))[-1L]
  given <- unique(given[!is.na(given) & nzchar(given)])
  formal <- setdiff(names(formals(fun)), "...")
  for (nm in setdiff(given, formal)) {
    full <- formal[startsWith(formal, nm)]
    msg <- if (length(full)) {
      paste0("argument '", nm, "' is an abbreviation of ", paste0("'", full, "'", collapse = " or "),
             ": write the argument name in full")
    } else if (!dots) {
      paste0("unknown argument '", nm, "'; the arguments are: ", paste(formal, collapse = ", "))
    }
    if (!is.null(msg)) stop(structure(class = c("hphawkes_input_error", "hphawkes_error", "error", "condition"),
                                      list(message = msg, call = call)))
  }
  invisible(TRUE)
}

# The first missing value of a vector or data frame as an error naming the column and row: a
# category or an id cannot be missing (reticulate would send NA as the string "NA").
.hp_no_na <- function(x, name) {
  cols <- if (is.data.frame(x)) as.list(x) else list(x)
  for (j in seq_along(cols)) {
    miss <- is.na(cols[[j]])
    if (any(miss)) {
      where <- if (is.data.frame(x)) paste0(" in column '", names(x)[j], "'") else ""
      .hp_stop(name, " has ", sum(miss), " missing value(s) (NA)", where, ", the first in row ",
               which(miss)[1L], ": drop or recode those rows")
    }
  }
  invisible(x)
}

# R's name for the kind of a value, for error messages ("factor", "character", "logical NA").
.hp_kind <- function(x) {
  if (is.logical(x) && length(x) && all(is.na(x))) return("NA (logical)")
  if (is.matrix(x)) return(paste(typeof(x), "matrix"))
  class(x)[1L]
}

# ---- R -> Python -------------------------------------------------------------------------

.hp_dims <- function(x) {
  d <- dim(x)
  if (is.null(d)) d <- length(x)
  as.list(as.integer(d))
}

# A float64 NumPy array (C order) from an R numeric vector / matrix / numeric data frame.
.np_double <- function(x, name = deparse(substitute(x))) {
  if (inherits(x, "python.builtin.object")) return(x)
  if (is.data.frame(x)) {
    bad <- !vapply(x, function(col) is.numeric(col) || is.logical(col), logical(1))
    if (any(bad)) .hp_stop(name, " must have numeric columns only; non-numeric: ",
                           paste(names(x)[bad], collapse = ", "))
    x <- as.matrix(x)
  }
  if (!(is.numeric(x) || is.logical(x)))
    .hp_stop(name, " must be numeric, got ", .hp_kind(x))
  buf <- writeBin(as.double(x), raw(), size = 8L, endian = "little")
  .hp_call(rf$array_from_r(reticulate::r_to_py(buf), .hp_dims(x), "float64"))
}

# Counts / integer ids as int64 when every value is a whole number that fits an R integer;
# otherwise as float64 so that Python's validation reports the offending values (nothing is
# rounded or truncated on the R side).
.np_count <- function(x, name = deparse(substitute(x))) {
  if (inherits(x, "python.builtin.object")) return(x)
  if (!(is.numeric(x) || is.logical(x)))
    .hp_stop(name, " must be whole numbers, got ", .hp_kind(x))
  .hp_no_na(as.vector(x), name)
  if (is.logical(x)) x <- as.integer(x)
  whole <- is.integer(x) ||
    (all(is.finite(x)) && all(x == round(x)) && all(abs(x) <= .Machine$integer.max))
  if (whole && !anyNA(x)) {
    d <- .hp_dims(x)
    buf <- writeBin(as.integer(x), raw(), size = 4L, endian = "little")
    return(.hp_call(rf$array_from_r(reticulate::r_to_py(buf), d, "int64")))
  }
  .np_double(x, name)
}

# Ids (locations, persons): character labels (a factor by its labels) or whole numbers; never NA.
.np_ids <- function(x, name = deparse(substitute(x))) {
  if (inherits(x, "python.builtin.object")) return(x)
  .hp_no_na(x, name)
  if (is.factor(x)) x <- as.character(x)
  if (is.character(x)) return(as.list(x))
  if (!is.numeric(x)) .hp_stop(name, " must be character labels or whole numbers, got ", .hp_kind(x))
  .np_count(x, name)
}

# Lists of location ids (one vector per centre, the centre first) for a scan's neighbors= argument: a Python list
# of lists of str (character ids) or int (whole-number ids).
.np_neighbors <- function(x, name = "neighbors") {
  if (!is.list(x) || is.data.frame(x))
    .hp_stop(name, " must be a list of location-id vectors (one per centre, the centre first), got ", .hp_kind(x))
  lapply(x, function(v) {
    .hp_no_na(v, name)
    if (is.factor(v)) v <- as.character(v)
    if (is.character(v)) return(as.list(v))
    if (!is.numeric(v) || any(v != round(v)))
      .hp_stop(name, " must hold character labels or whole numbers, got ", .hp_kind(v))
    as.list(as.integer(v))
  })
}

# The censoring flags of a survival model: NULL (none censored), or TRUE/FALSE (1/0) per patient as 0/1 counts.
.np_censored <- function(censored) {
  if (is.null(censored)) return(NULL)
  .hp_no_na(censored, "censored")
  if (!(is.logical(censored) || (is.numeric(censored) && all(censored %in% c(0, 1)))))
    .hp_stop("censored must be NULL or TRUE/FALSE (1/0) per patient, got ", .hp_kind(censored))
  .np_count(as.integer(censored), "censored")
}

# A whole number for a Python int argument (n_iter, chains, seed, ...). NULL stays NULL.
.as_int <- function(x, name = deparse(substitute(x)), null_ok = TRUE) {
  if (is.null(x)) {
    if (null_ok) return(NULL)
    .hp_stop(name, " must be a whole number, got NULL")
  }
  if (inherits(x, "python.builtin.object")) return(x)
  if (length(x) != 1L || !is.numeric(x) || is.na(x) || x != round(x) ||
      abs(x) > .Machine$integer.max)
    .hp_stop(name, " must be a single whole number (|x| < 2^31), got ",
             paste(utils::head(format(x), 3), collapse = ", "))
  as.integer(x)
}

# TRUE or FALSE for a Python bool argument: reticulate would send NA as True.
.as_flag <- function(x, name = deparse(substitute(x))) {
  if (inherits(x, "python.builtin.object")) return(x)
  if (!is.logical(x) || length(x) != 1L || is.na(x))
    .hp_stop(name, " must be TRUE or FALSE, got ", if (length(x) == 1L) format(x) else
             paste0(.hp_kind(x), " of length ", length(x)))
  x
}

.as_num <- function(x, name = deparse(substitute(x)), null_ok = TRUE) {
  if (is.null(x)) {
    if (null_ok) return(NULL)
    .hp_stop(name, " must be a single number, got NULL")
  }
  if (length(x) != 1L || !is.numeric(x))
    .hp_stop(name, " must be a single number, got ", paste(utils::head(format(x), 3), collapse = ", "),
             " (", .hp_kind(x), if (length(x) != 1L) paste0(" of length ", length(x)), ")")
  as.double(x)
}

# Character vectors that Python treats as sequences: always a list (a length-1 R character
# vector would otherwise arrive as a str, which Python iterates letter by letter).
.as_seq <- function(x) if (is.null(x)) NULL else as.list(x)

# A pandas DataFrame from an R data frame (numeric -> float64 or int64, character/factor ->
# str, logical -> bool).
.pd_frame <- function(df, name = deparse(substitute(df))) {
  if (inherits(df, "python.builtin.object")) return(df)
  if (!is.data.frame(df)) .hp_stop(name, " must be a data frame, got ", class(df)[1])
  cols <- lapply(names(df), function(nm) {
    v <- df[[nm]]
    if (is.factor(v)) v <- as.character(v)
    if (is.character(v)) .hp_no_na(stats::setNames(data.frame(v, stringsAsFactors = FALSE), nm), name)
    if (is.logical(v) && !anyNA(v)) {
      buf <- writeBin(as.integer(v), raw(), size = 4L, endian = "little")
      return(.hp_call(rf$array_from_r(reticulate::r_to_py(buf), list(length(v)), "bool")))
    }
    if (is.integer(v) && !anyNA(v)) return(.np_count(v, paste0(name, "$", nm)))
    if (is.numeric(v) || is.logical(v)) return(.np_double(v, paste0(name, "$", nm)))
    if (is.character(v)) return(reticulate::r_to_py(as.list(v)))
    .hp_stop(name, "$", nm, " has unsupported type ", class(v)[1])
  })
  names(cols) <- names(df)
  .hp_call(rf$frame_from_r(reticulate::r_to_py(cols), as.list(names(df))))
}

# Named R list -> keyword arguments with integer-valued entries for known integer names.
.py_kwargs <- function(args, int_names = character()) {
  args <- args[!vapply(args, is.null, logical(1))]
  for (nm in intersect(names(args), int_names)) args[[nm]] <- .as_int(args[[nm]], nm)
  args
}

# ---- Python -> R -------------------------------------------------------------------------

.hp_r <- function(pyobj) {
  enc <- .hp_call(rf$encode(pyobj))
  .hp_decode(reticulate::py_to_r(enc))
}

.hp_decode_array <- function(x) {
  dim <- as.integer(unlist(x$dim))
  n <- if (length(dim)) prod(dim) else 1L
  v <- switch(x$type,
    double = readBin(jsonlite::base64_dec(x$b64), "double", n = n, size = 8L, endian = "little"),
    integer = readBin(jsonlite::base64_dec(x$b64), "integer", n = n, size = 4L, endian = "little"),
    logical = as.logical(readBin(jsonlite::base64_dec(x$b64), "integer", n = n, size = 4L,
                                 endian = "little")),
    character = as.character(unlist(x$values)),
    stop("unknown array type from Python: ", x$type)
  )
  if (length(dim) > 1L) dim(v) <- dim
  v
}

.hp_index <- function(idx, n) {
  if (is.null(idx)) return(NULL)
  v <- .hp_decode(idx)
  if (is.numeric(v) && length(v) == n && all(v == seq_len(n) - 1L)) return(NULL)
  v
}

.hp_decode <- function(x) {
  if (inherits(x, "python.builtin.object")) x <- reticulate::py_to_r(x)
  if (!is.list(x)) return(x)
  tag <- x[["__hp__"]]
  if (is.null(tag)) return(lapply(x, .hp_decode))
  switch(tag,
    array = .hp_decode_array(x),
    dict = {
      items <- lapply(x$items, .hp_decode)
      names(items) <- as.character(unlist(x$names))
      items
    },
    list = {
      items <- lapply(x$items, .hp_decode)
      d <- as.integer(unlist(x$dim))
      # a Python list of plain scalars of one type becomes an atomic vector
      if (length(items) && all(vapply(items, function(v) is.atomic(v) && length(v) == 1L &&
                                        is.null(attributes(v)), logical(1)))) {
        types <- unique(vapply(items, typeof, character(1)))
        if (length(types) == 1L || all(types %in% c("integer", "double"))) items <- unlist(items)
      }
      if (length(d) > 1L) dim(items) <- d
      items
    },
    record = structure(lapply(x$fields, .hp_decode), py_class = x$class),
    series = {
      v <- .hp_decode(x$values)
      idx <- .hp_index(x$index, length(v))
      if (!is.null(idx)) names(v) <- as.character(idx)
      v
    },
    data.frame = {
      nr <- as.integer(x$nrow)
      cols <- lapply(x$columns, .hp_decode)
      cols <- lapply(cols, function(v) if (is.list(v)) I(v) else v)
      names(cols) <- as.character(unlist(x$names))
      df <- structure(cols, class = "data.frame", row.names = .set_row_names(nr))
      idx <- .hp_index(x$index, nr)
      if (!is.null(idx)) {
        if (is.character(idx) && !anyDuplicated(idx)) {
          row.names(df) <- idx
        } else {
          nm <- if (is.null(x$index_name)) "index" else x$index_name
          df <- cbind(stats::setNames(data.frame(idx), nm), df)
        }
      }
      df
    },
    object = structure(list(repr = x$repr), class = "hphawkes_pyobject", py_class = x$class),
    stop("unknown tag from Python: ", tag)
  )
}

.set_row_names <- function(n) if (n > 0L) c(NA_integer_, -n) else integer()

#' @export
print.hphawkes_pyobject <- function(x, ...) {
  cat("<Python ", attr(x, "py_class"), "> ", x$repr, "\n", sep = "")
  invisible(x)
}
