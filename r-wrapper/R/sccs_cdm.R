# SCCS data straight from an OMOP CDM database: wrapper over hphawkes_py.sccs.SCCSData.from_cdm. An
# R DBI connection cannot be handed to Python, so the database is named by a URL that the Python
# side opens: "duckdb:///path/cdm.duckdb" or an SQLAlchemy URL.

# Concept ids: whole numbers, sent as Python ints (Python refuses floats); NULL stays NULL.
.cdm_concepts <- function(x, name, null_ok = FALSE) {
  if (is.null(x)) {
    if (null_ok) return(NULL)
    .hp_stop(name, " must name at least one concept id, got NULL")
  }
  if (!is.numeric(x) || length(x) == 0L)
    .hp_stop(name, " must be whole-number concept ids, got ", .hp_kind(x), " of length ", length(x))
  .hp_no_na(x, name)
  bad <- x != round(x) | abs(x) > .Machine$integer.max
  if (any(bad)) .hp_stop(name, " must be whole-number concept ids; value ", which(bad)[1L], " is ",
                         format(x[bad][1L], digits = 15))
  as.list(as.integer(x))
}

# Named list concept id -> c(start, end) offsets, as a dict with int keys.
.cdm_risk_windows <- function(rw) {
  if (is.null(rw)) return(NULL)
  if (!is.list(rw) || is.null(names(rw)) || any(names(rw) == ""))
    .hp_stop("risk_windows must be a named list: exposure concept id -> c(start, end) offsets in days")
  keys <- suppressWarnings(as.numeric(names(rw)))
  if (anyNA(keys) || any(keys != round(keys)))
    .hp_stop("risk_windows must be named by exposure concept ids (numbers), got '",
             names(rw)[is.na(keys) | keys != round(keys)][1L], "'")
  vals <- lapply(seq_along(rw), function(i) {
    w <- rw[[i]]
    nm <- paste0("risk_windows[['", names(rw)[i], "']]")
    if (!is.numeric(w) || length(w) != 2L) .hp_stop(nm, " must be two day offsets c(start, end)")
    reticulate::tuple(.as_int(w[1], paste0(nm, "[1]"), FALSE), .as_int(w[2], paste0(nm, "[2]"), FALSE))
  })
  reticulate::py_dict(as.list(as.integer(keys)), vals)
}

#' SCCS data from an OMOP CDM database
#'
#' Selects the cases of a study in an OMOP Common Data Model database and builds the SCCS
#' design, as OHDSI SelfControlledCaseSeries' \code{getDbSccsData}: the outcome records of
#' \code{condition_occurrence} (or \code{condition_era}) whose concept is one of
#' \code{outcome_concept_ids} or a descendant (\code{concept_ancestor}), the observation
#' periods holding them, the date of birth from \code{person}, and the eras of \code{drug_era}
#' (or \code{drug_exposure}) of the exposure concepts. Every join and filter runs in the
#' database; only the cases' rows come back. Then \code{SCCSData.from_eras}
#' (\code{hphawkes_py.sccs.SCCSData.from_cdm}; the options are
#' those of \code{hphawkes_py.sccs.cdm.cdm_study}).
#'
#' @param connection The database, as a URL string: \code{"duckdb:///path/to/cdm.duckdb"} (a
#'   DuckDB file, opened read-only with the Python \code{duckdb} package) or an SQLAlchemy URL
#'   such as \code{"postgresql+psycopg://user@host/db"}. (An R DBI connection cannot be passed
#'   to Python.)
#' @param outcome_concept_ids Condition concept ids (whole numbers) that together define the
#'   one outcome.
#' @param exposure_concept_ids Exposure concept ids; each is one covariate, whose id is the
#'   concept id (descendants roll up into it).
#' @param negative_control_concept_ids Negative-control exposure concept ids (for
#'   \code{\link{sccs_fit_negative_controls}}), or NULL. Overlap with the exposures is an error.
#' @param cdm_schema Schema of the CDM tables (\code{"cdm"} or \code{"catalog.schema"}), or
#'   NULL for the connection's current schema.
#' @param include_descendants Also take descendant concepts (TRUE/FALSE).
#' @param outcome_table \code{"condition_occurrence"} or \code{"condition_era"}.
#' @param exposure_table \code{"drug_era"} or \code{"drug_exposure"}.
#' @param strata \code{"person"} or \code{"observation_period"}.
#' @param gender_concept_ids Only persons of these \code{gender_concept_id} (8507 male, 8532
#'   female), or NULL.
#' @param first_outcome_only Keep each person's first outcome day only (TRUE/FALSE).
#' @param study_start,study_end First and last calendar day of the study (\code{"2005-01-01"}
#'   or a \code{Date}), or NULL.
#' @param naive_period,min_age,max_age Days, as in \code{\link{sccs_study}}.
#' @param risk_start,risk_end Risk window offsets in days for every exposure.
#' @param risk_windows Named list: exposure concept id -> \code{c(start, end)} offsets.
#' @param windows Named list: exposure concept id -> list of \code{\link{sccs_risk_window}}.
#' @param age_knots,season_knots,calendar_knots Number of knots or knot vectors (NULL: no
#'   adjustment), as in \code{\link{sccs_study}}.
#' @param day_origin Calendar date of day 0 of the design.
#' @param merge Merge rows of one person with the same exposure pattern (TRUE/FALSE).
#' @return An \code{sccs_data} (for \code{\link{sccs_fit}}, \code{\link{sccs_mdrr}},
#'   \code{\link{sccs_fit_negative_controls}}) with, besides the counts, \code{covariate_ids}
#'   and \code{dropped} (named counts: records merged, outcomes outside observation, ...).
#' @seealso \code{\link{sccs_study}} for person-level tables already in R.
#' @examplesIf hphawkes_available() && reticulate::py_module_available("duckdb")
#' # a CDM of three persons in a DuckDB file, written through Python's duckdb
#' path <- tempfile(fileext = ".duckdb")
#' con <- reticulate::import("duckdb")$connect(path)
#' invisible(con$execute(paste(
#'   "CREATE TABLE person AS SELECT * FROM (VALUES (1, 8507, 1960, 5, 17), (2, 8532, 1971, NULL, NULL),",
#'   "  (3, 8507, 1980, 1, 1)) t(person_id, gender_concept_id, year_of_birth, month_of_birth, day_of_birth);",
#'   "CREATE TABLE observation_period AS SELECT * FROM (VALUES (11, 1, DATE '2005-01-01', DATE '2005-12-31'),",
#'   "  (21, 2, DATE '2005-01-01', DATE '2005-12-31'), (31, 3, DATE '2005-01-01', DATE '2005-12-31'))",
#'   "  t(observation_period_id, person_id, observation_period_start_date, observation_period_end_date);",
#'   "CREATE TABLE concept AS SELECT * FROM (VALUES (1001), (4000)) t(concept_id);",
#'   "CREATE TABLE concept_ancestor AS SELECT * FROM (VALUES (1001, 1001), (4000, 4000))",
#'   "  t(ancestor_concept_id, descendant_concept_id);",
#'   "CREATE TABLE drug_era AS SELECT * FROM (VALUES (1, 1, 1001, DATE '2005-03-01', DATE '2005-03-30'),",
#'   "  (2, 3, 1001, DATE '2005-06-01', DATE '2005-06-20'))",
#'   "  t(drug_era_id, person_id, drug_concept_id, drug_era_start_date, drug_era_end_date);",
#'   "CREATE TABLE condition_occurrence AS SELECT * FROM (VALUES (1, 1, 4000, DATE '2005-04-10'),",
#'   "  (2, 2, 4000, DATE '2005-08-01'), (3, 3, 4000, DATE '2005-06-05'))",
#'   "  t(condition_occurrence_id, person_id, condition_concept_id, condition_start_date);")))
#' con$close()
#' d <- sccs_data_from_cdm(paste0("duckdb:///", path), outcome_concept_ids = 4000,
#'                         exposure_concept_ids = 1001, risk_end = 30)
#' d
#' d$dropped
#' @export
sccs_data_from_cdm <- function(connection, outcome_concept_ids, exposure_concept_ids,
                               negative_control_concept_ids = NULL, cdm_schema = NULL,
                               include_descendants = TRUE, outcome_table = "condition_occurrence",
                               exposure_table = "drug_era", strata = "person", gender_concept_ids = NULL,
                               first_outcome_only = FALSE, study_start = NULL, study_end = NULL,
                               naive_period = 0L, min_age = NULL, max_age = NULL, risk_start = 0L,
                               risk_end = 0L, risk_windows = NULL, windows = NULL, age_knots = NULL,
                               season_knots = NULL, calendar_knots = NULL, day_origin = "1970-01-01",
                               merge = TRUE) {
  .hp_check_args()
  if (!inherits(connection, "python.builtin.object") &&
      (!is.character(connection) || length(connection) != 1L || is.na(connection) || !nzchar(connection)))
    .hp_stop("connection must be a database URL such as \"duckdb:///path/cdm.duckdb\" or ",
             "\"postgresql+psycopg://user@host/db\" (an R DBI connection cannot be passed to Python), got ",
             .hp_kind(connection))
  if (!is.null(cdm_schema) && (!is.character(cdm_schema) || length(cdm_schema) != 1L || is.na(cdm_schema)))
    .hp_stop("cdm_schema must be one schema name, got ", .hp_kind(cdm_schema))
  exp_ids <- .cdm_concepts(exposure_concept_ids, "exposure_concept_ids")
  py <- .hp_call(.hp_mod("sccs")$SCCSData$from_cdm(connection,
    .cdm_concepts(outcome_concept_ids, "outcome_concept_ids"), exp_ids,
    negative_control_concept_ids = .cdm_concepts(negative_control_concept_ids, "negative_control_concept_ids", TRUE),
    cdm_schema = cdm_schema, include_descendants = .as_flag(include_descendants, "include_descendants"),
    outcome_table = outcome_table, exposure_table = exposure_table, strata = strata,
    gender_concept_ids = .cdm_concepts(gender_concept_ids, "gender_concept_ids", TRUE),
    first_outcome_only = .as_flag(first_outcome_only, "first_outcome_only"),
    study_start = .diag_date(study_start, "study_start"), study_end = .diag_date(study_end, "study_end"),
    naive_period = .as_int(naive_period, "naive_period", FALSE), min_age = .as_int(min_age, "min_age"),
    max_age = .as_int(max_age, "max_age"), risk_start = .as_int(risk_start, "risk_start", FALSE),
    risk_end = .as_int(risk_end, "risk_end", FALSE), risk_windows = .cdm_risk_windows(risk_windows),
    windows = .sccs_windows(windows, 0), age_knots = .sccs_knots(age_knots, "age_knots"),
    season_knots = .sccs_knots(season_knots, "season_knots"),
    calendar_knots = .sccs_knots(calendar_knots, "calendar_knots"),
    day_origin = .diag_date(day_origin, "day_origin"), merge = .as_flag(merge, "merge")))
  d <- .sccs_data_r(py)
  d$covariate_ids <- .hp_r(py$covariate_ids)
  d$dropped <- unlist(.hp_r(.hp_call(reticulate::import_builtins(convert = FALSE)$dict(py$dropped))))
  d
}
