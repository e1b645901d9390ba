threads_max <- function() .Call(C_ffi_threads_max)

# Restores the number of threads when the calling test ends.
local_threads <- function(frame = parent.frame()) {
  old <- sgais_threads()
  withr::defer(sgais_threads(old), envir = frame)
}

# Sets the number of threads without the warning of a build without OpenMP.
set_threads <- function(n) {
  suppressWarnings(sgais_threads(n), classes = "sgais_warning_no_openmp")
}

test_that("sgais_threads() reports the number of threads, within the available processors", {
  n <- sgais_threads()
  expect_type(n, "integer")
  expect_length(n, 1L)
  expect_gte(n, 1L)
  expect_lte(n, threads_max())
  if (!threads_openmp()) expect_identical(n, 1L)
})

test_that("setting the number returns the previous one invisibly, and it can be restored", {
  local_threads()
  old <- sgais_threads()
  expect_invisible(sgais_threads(1))
  expect_identical(sgais_threads(), 1L)
  expect_identical(sgais_threads(old), 1L)
  expect_identical(sgais_threads(), old)
  sgais_threads(1L)
  expect_identical(sgais_threads(), 1L)
})

test_that("0 means all available processors, and a larger number is reduced to that many", {
  local_threads()
  withr::local_envvar(c(OMP_THREAD_LIMIT = NA, `_R_CHECK_LIMIT_CORES_` = NA))
  sgais_threads(0)
  expect_identical(sgais_threads(), threads_max())
  sgais_threads(1)
  set_threads(1e6)
  expect_identical(sgais_threads(), threads_max())
})

test_that("OMP_THREAD_LIMIT and R CMD check's core limit cap the number", {
  local_threads()
  withr::local_envvar(c(OMP_THREAD_LIMIT = "1"))
  sgais_threads(0)
  expect_identical(sgais_threads(), 1L)
  withr::local_envvar(c(OMP_THREAD_LIMIT = NA, `_R_CHECK_LIMIT_CORES_` = "TRUE"))
  set_threads(64)
  expect_identical(sgais_threads(), min(2L, threads_max()))
  expect_identical(check_limit_cores(0L), 2L)
  expect_identical(check_limit_cores(1L), 1L)
  withr::local_envvar(c(`_R_CHECK_LIMIT_CORES_` = "false"))
  expect_identical(check_limit_cores(64L), 64L)
})

test_that("an invalid number of threads is a classed error naming `threads`", {
  local_threads()
  before <- sgais_threads()
  for (bad in list(NA, NA_integer_, -1, 1.5, Inf, "2", TRUE, c(1, 2), integer(), list(2))) {
    expect_error(sgais_threads(bad), "`threads` must be a whole number >= 0", class = "sgais_error")
  }
  expect_identical(sgais_threads(), before)
})

test_that("the default comes from the option, else SGAIS_NUM_THREADS, else all processors", {
  withr::local_options(sgais.threads = NULL)
  withr::local_envvar(c(SGAIS_NUM_THREADS = NA))
  expect_identical(threads_default(), 0L)
  withr::local_envvar(c(SGAIS_NUM_THREADS = " 3 "))
  expect_identical(threads_default(), 3L)
  withr::local_options(sgais.threads = 1)
  expect_identical(threads_default(), 1L)

  # an unusable value is ignored with a warning, so that the package still loads
  withr::local_options(sgais.threads = "two")
  expect_warning(expect_identical(threads_default(), 0L),
                 "`options\\(sgais.threads\\)` must be a whole number", class = "sgais_warning_threads")
  withr::local_options(sgais.threads = NULL)
  withr::local_envvar(c(SGAIS_NUM_THREADS = "2.5"))
  expect_warning(expect_identical(threads_default(), 0L),
                 "`SGAIS_NUM_THREADS` must be a whole number >= 0, not 2.5",
                 class = "sgais_warning_threads")
})

test_that("the default is set when the package is loaded", {
  # a new R session: the option is set before sgais is loaded, SGAIS_NUM_THREADS is overridden
  script <- sprintf(paste(
    ".libPaths(%s); Sys.setenv(SGAIS_NUM_THREADS = '2');",
    "options(sgais.threads = 1); cat(sgais::sgais_threads())"
  ), deparse1(.libPaths()))
  out <- system2(file.path(R.home("bin"), "Rscript"), c("--vanilla", "-e", shQuote(script)),
                 stdout = TRUE)
  expect_identical(out, "1")
})

test_that("a forked process uses one thread", {
  test_tags("memcheck")
  skip_on_os("windows")
  skip_if_not(threads_openmp(), "sgais was built without OpenMP")
  local_threads()
  withr::local_envvar(c(OMP_THREAD_LIMIT = NA, `_R_CHECK_LIMIT_CORES_` = NA))
  sgais_threads(0)
  child <- parallel::mccollect(parallel::mcparallel(sgais_threads()))[[1]]
  expect_identical(child, 1L)
  expect_identical(sgais_threads(), threads_max())
})

test_that("without OpenMP, asking for more than one thread warns once per session", {
  local_threads()
  warned <- isTRUE(threads_state$warned_no_openmp)
  withr::defer(threads_state$warned_no_openmp <- warned)
  threads_state$warned_no_openmp <- FALSE
  expect_warning(warn_no_openmp(4L, NULL), "without OpenMP.*not 4",
                 class = "sgais_warning_no_openmp")
  expect_no_warning(warn_no_openmp(4L, NULL))
  threads_state$warned_no_openmp <- FALSE
  if (!threads_openmp()) {
    expect_warning(sgais_threads(2), class = "sgais_warning_no_openmp")
    expect_identical(sgais_threads(), 1L)
    expect_no_warning(sgais_threads(0))
    expect_no_warning(sgais_threads(3))
  }
})

test_that("every estimator gives the same result, bit for bit, on any number of threads", {
  local_threads()
  withr::local_envvar(c(OMP_THREAD_LIMIT = NA, `_R_CHECK_LIMIT_CORES_` = NA))
  # large enough for the parallel paths: full-data passes of 16 blocks and more, and moves of
  # many particles; the fixed blocks and keyed streams make the thread count irrelevant
  m <- linear_regression(y ~ ., prior = "paper", data = simulate_linear_regression(20000, seed = 1),
                         noise_sd = 1)
  run <- function(threads) {
    sgais_threads(threads)
    list(
      sgais = sgais(m, seed = 1, progress = FALSE),
      paper = suppressWarnings(sgais(m, control = sgais_control("paper"), seed = 2, progress = FALSE)),
      # (4 particles: the paper's 10 cost 2.5 times as much, through the same code)
      ais = suppressWarnings(ais(m, control = ais_control("paper"), particles = 4, target_ess = 2,
                                 seed = 3, progress = FALSE)),
      ns = suppressWarnings(nested_sampling(m, control = nested_control("paper"), live_points = 2,
                                            max_iterations = 30, seed = 4, progress = FALSE)),
      is = importance_sampling(m, draws = 20, seed = 5, progress = FALSE)
    )
  }
  one <- run(1)
  two <- run(2)
  for (method in names(one)) {
    expect_identical(one[[method]]$log_evidence, two[[method]]$log_evidence, label = method)
    expect_identical(one[[method]]$gradient_evaluations, two[[method]]$gradient_evaluations,
                     label = method)
  }
  expect_identical(one$sgais$state$particles, two$sgais$state$particles)
  expect_identical(one$sgais$trajectory$log_evidence, two$sgais$trajectory$log_evidence)
  expect_equal(one$sgais$log_evidence, exact_log_evidence(m), tolerance = 10 / 20000)
})

test_that("setTimeLimit() stops long runs within a fraction of a second, as R's own error", {
  skip_on_cran()
  old <- sgais_threads(2)
  on.exit(sgais_threads(old), add = TRUE)
  d <- simulate_linear_regression(20000, seed = 1)
  m <- linear_regression(y ~ ., d, noise_sd = 1)
  mix <- gaussian_mixture(simulate_gaussian_mixture(3000, components = 4, dim = 2, seed = 1),
                          components = 4)
  slow_r <- custom_model(function(theta, data) {
    Sys.sleep(0.001)
    stats::dnorm(data[, "y"], theta, 1, log = TRUE)
  }, function(theta, data) sum(data[, "y"] - theta), data = d[1:2000, "y", drop = FALSE],
  parameter_names = "mu")
  limited <- function(expr) {
    setTimeLimit(elapsed = 0.4, transient = TRUE)
    on.exit(setTimeLimit(elapsed = Inf))
    started <- proc.time()[["elapsed"]]
    err <- tryCatch({
      expr
      NULL
    }, error = function(e) e)
    list(error = err, seconds = proc.time()[["elapsed"]] - started)
  }
  runs <- list(
    sgais_mixture = limited(sgais(mix, seed = 1, progress = FALSE)), # parallel regions
    ais = limited(ais(m, seed = 1, progress = FALSE)),
    nested_sampling = limited(nested_sampling(m, live_points = 2000, seed = 1, progress = FALSE)),
    custom = limited(sgais(slow_r, seed = 1, progress = FALSE)),
    comparison = limited(compare_models(list(a = slow_r, b = slow_r), d[, "y", drop = FALSE],
                                        block_size = 500, seed = 1, progress = FALSE, method = "sgais"))
  )
  for (r in names(runs)) {
    err <- runs[[r]]$error
    expect_true(inherits(err, "error"), label = r)
    # R's error itself, not an interrupt, nor a failure of the user's function
    expect_false(inherits(err, "sgais_error_model"), label = r)
    expect_match(conditionMessage(err), "time limit", label = r)
    expect_lt(runs[[r]]$seconds, 2)
  }
  expect_equal(sum(1:10), 55) # R is usable after
})
