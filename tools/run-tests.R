# Runs the test suite against the installed sgais and ends with one line
# "testthat: N passed, N failed, N skipped" (counts of expectations); exits 1 on any failure.
# Before it, the slowest tests with their times, and the tests slower than --budget seconds (the
# suite is for mechanics: statistical checks that need many fits belong in inst/validation/ and
# inst/bench/). A test's time is reported, never a failure: on a busy machine any test can take
# longer, and the code is no less right. Options (all optional):
#   --files=a,b    run only these test files (names without "test-" and ".R"); default: all
#   --tags=t1,t2   run only the tests tagged with one of these tags, i.e. whose body begins with
#                  test_tags("t1", ...) (tests/testthat/helper-tags.R); the other tests are not
#                  run and not counted. Default: every test but those --skip-tags names.
#   --skip-tags=t  leave out the tests tagged with one of these (default "slow": the statistical
#                  checks that need many fits, which `make validate-quick` runs with --tags=slow;
#                  a tag given to --tags is never skipped; --skip-tags= runs them too)
#   --budget=S     list the tests that take longer than S seconds (default 10; 0: none, for the
#                  sanitizer and valgrind builds, which run 3 to 50 times slower)
#   --slowest=K    how many of the slowest tests to list (default 10)
# The log is plain text unless R is interactive (then testthat's progress reporter).
Sys.setenv(NOT_CRAN = "true")
# cli's clock, read when cli loads: the progress-bar tests need a tick in a fraction of a second
# (tests/testthat/helper-reference.R, wait_for_cli_tick())
if (!nzchar(Sys.getenv("CLI_TICK_TIME"))) Sys.setenv(CLI_TICK_TIME = "100")
library(testthat)

args <- commandArgs(TRUE)
opt <- function(name, default) {
  hit <- grep(paste0("^--", name, "="), args, value = TRUE)
  if (length(hit)) sub(paste0("^--", name, "="), "", hit[length(hit)]) else default
}
split <- function(x) if (nzchar(x)) strsplit(x, ",", fixed = TRUE)[[1]] else character(0)
files <- split(opt("files", ""))
tags <- split(opt("tags", ""))
skip_tags <- setdiff(split(opt("skip-tags", "slow")), tags)
max_seconds <- as.numeric(opt("budget", "10"))
slowest <- as.integer(opt("slowest", "10"))
unknown <- grep("^--(files|tags|skip-tags|budget|slowest)=", args, value = TRUE,
                invert = TRUE)
if (length(unknown)) stop("run-tests.R: unknown argument(s) ", paste(unknown, collapse = " "))

env <- NULL
left_out <- 0L # tests left out for a tag in skip_tags
if (length(tags)) {
  # Only the files that hold a tagged test are run: the others' top-level fixtures (fitted
  # models) would cost minutes under valgrind for nothing.
  paths <- list.files("tests/testthat", "^test-.*\\.R$", full.names = TRUE)
  holds <- vapply(paths, function(path) {
    text <- readLines(path)
    calls <- regmatches(text, regexpr("test_tags\\([^)]*\\)", text))
    any(vapply(tags, function(t) any(grepl(sprintf('"%s"', t), calls, fixed = TRUE)), logical(1)))
  }, logical(1))
  tagged_files <- sub("^test-(.*)\\.R$", "\\1", basename(paths[holds]))
  files <- if (length(files)) intersect(files, tagged_files) else tagged_files
  if (!length(files)) stop("run-tests.R: no test file holds a test tagged ", paste(tags, collapse = ", "))
}
if (length(tags) || length(skip_tags)) {
  # The tests' own test_that() is found in `env` (the test files run in its children): a test
  # runs when its body's first call is test_tags() with one of `tags` (any test if none are
  # given) and none of `skip_tags`, and is left out otherwise.
  env <- test_env("sgais")
  env$test_that <- function(desc, code) {
    body <- substitute(code)
    first <- if (is.call(body) && identical(body[[1]], as.name("{")) && length(body) > 1) body[[2]]
    has <- if (is.call(first) && identical(first[[1]], as.name("test_tags"))) {
      unlist(Filter(is.character, as.list(first)[-1]))
    }
    if (length(tags) && !any(has %in% tags)) return(invisible(TRUE))
    if (any(has %in% skip_tags)) {
      left_out <<- left_out + 1L
      return(invisible(TRUE))
    }
    eval.parent(substitute(testthat::test_that(desc, code)))
  }
}
filter <- if (length(files)) sprintf("^(%s)$", paste(files, collapse = "|"))

reporter <- if (interactive()) {
  ProgressReporter$new(show_praise = FALSE)
} else {
  SummaryReporter$new(show_praise = FALSE, max_reports = 50)
}
res <- test_dir("tests/testthat", filter = filter, env = env, package = "sgais",
                load_package = "installed", reporter = reporter, stop_on_failure = FALSE)

times <- as.data.frame(res)
times <- times[order(-times$real), c("file", "test", "real")]
if (nrow(times) && slowest > 0) {
  cat(sprintf("\nThe %d slowest tests (of %d; %.0f s in all):\n", min(slowest, nrow(times)),
              nrow(times), sum(times$real)))
  top <- utils::head(times, slowest)
  cat(sprintf("%6.1f s  %s: %s\n", top$real, sub("^test-(.*)\\.R$", "\\1", top$file),
              substr(top$test, 1, 90)), sep = "")
}
too_slow <- if (max_seconds > 0) times[times$real > max_seconds, ] else times[0, ]
if (nrow(too_slow)) {
  cat(sprintf(paste("\nOver the budget: %d test(s) took longer than %g s (if not for a busy",
                    "machine, make them leaner or move them to inst/validation/):\n"),
              nrow(too_slow), max_seconds))
  cat(sprintf("%6.1f s  %s: %s\n", too_slow$real, too_slow$file, too_slow$test), sep = "")
}

kinds <- vapply(unlist(lapply(res, `[[`, "results"), recursive = FALSE),
                function(e) class(e)[1], character(1))
passed <- sum(kinds == "expectation_success")
failed <- sum(kinds %in% c("expectation_failure", "expectation_error"))
skipped <- sum(kinds == "expectation_skip")
if (left_out) {
  cat(sprintf("\n%d test(s) tagged %s left out (tools/run-tests.R --tags=%s runs them)\n",
              left_out, paste(skip_tags, collapse = ", "), paste(skip_tags, collapse = ",")))
}
cat(sprintf("\ntestthat: %d passed, %d failed, %d skipped\n", passed, failed, skipped))
quit(status = if (failed > 0 || passed == 0) 1 else 0)
