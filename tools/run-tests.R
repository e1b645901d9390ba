# Runs the test suite against the installed sgais and ends with one line
# "testthat: N passed, N failed, N skipped" (counts of expectations); exits 1 on any failure.
# Slow statistical checks live in inst/validation/ and inst/bench/, not here.
# Two optional arguments narrow the run (used by `make sanitize` and `make valgrind`):
#   1. a testthat filter: a regular expression on the file names without "test-" and ".R"
#      (e.g. "^(ais|sgais)$"); empty runs every file;
#   2. a regular expression on test descriptions: the tests it matches are reported as skipped
#      instead of run (for tests too slow under valgrind); empty skips none.
Sys.setenv(NOT_CRAN = "true")
library(testthat)
args <- c(commandArgs(TRUE), "", "")
filter <- if (nzchar(args[1])) args[1]
env <- NULL
if (nzchar(args[2])) {
  exclude <- args[2]
  # Found before testthat's own test_that() by the test files, which run in children of `env`.
  env <- test_env("sgais")
  env$test_that <- function(desc, code) {
    if (grepl(exclude, desc, perl = TRUE)) {
      return(testthat::test_that(desc, {
        testthat::skip("left out by tools/run-tests.R")
      }))
    }
    eval.parent(substitute(testthat::test_that(desc, code)))
  }
}
res <- test_dir("tests/testthat", filter = filter, env = env, package = "sgais",
                load_package = "installed", reporter = ProgressReporter$new(show_praise = FALSE),
                stop_on_failure = FALSE)
kinds <- vapply(unlist(lapply(res, `[[`, "results"), recursive = FALSE),
                function(e) class(e)[1], character(1))
passed <- sum(kinds == "expectation_success")
failed <- sum(kinds %in% c("expectation_failure", "expectation_error"))
skipped <- sum(kinds == "expectation_skip")
cat(sprintf("\ntestthat: %d passed, %d failed, %d skipped\n", passed, failed, skipped))
quit(status = if (failed > 0 || passed == 0) 1 else 0)
