# Linear-regression models with a closed-form evidence, shared by the reference-method tests
# (built once per size and seed).
reference_models <- new.env(parent = emptyenv())

reference_model <- function(n, seed = 1) {
  key <- paste(n, seed)
  if (is.null(reference_models[[key]])) {
    data <- simulate_linear_regression(n, seed = seed)
    reference_models[[key]] <- linear_regression(y ~ ., prior = "paper", data = data, noise_sd = 1)
  }
  reference_models[[key]]
}

# A fit without its timings (which differ between otherwise identical runs).
without_timing <- function(fit) {
  fit$seconds <- NULL
  fit$call <- NULL
  for (part in c("schedule", "trace", "trajectory")) {
    if (!is.null(fit[[part]])) fit[[part]]$seconds <- fit[[part]]$chunk_seconds <- NULL
  }
  # a pilot run's time (ais(), sgais() with replicates)
  if (!is.null(fit$pilot)) fit$pilot$seconds <- NULL
  if (!is.null(fit$state$pilot)) fit$state$pilot$trace$seconds <- NULL
  fit
}

# Evaluate `code` with R's RNG seeded (as the estimators' `seed` argument does).
withr_seed <- function(seed, code) {
  sgais:::with_seed(seed, code)
}

# The three estimators with the paper's preset and the settings whose replicate spreads the
# model tests quote:
# SGAIS with 50 particles, target ESS 40, 50 steps at learning rate 0.05; AIS with 50 particles,
# target ESS 25, 100 steps; nested sampling with 20 live points, 200 steps at learning rate 1e-4.
three_estimators <- function(model, seed) {
  list(
    sgais = paper_sgais(model, particles = 50, target_ess = 40, sghmc_steps = 50,
                        learning_rate = 0.05, seed = seed),
    ais = paper_ais(model, particles = 50, target_ess = 25, sghmc_steps = 100, seed = seed),
    ns = paper_ns(model, live_points = 20, sghmc_steps = 200, learning_rate = 1e-4, seed = seed)
  )
}

# Two single runs of methods with measured means and sds (over replicate runs) agree when they
# differ by at most the difference of their means plus 4 times their combined sd.
expect_agree <- function(x, y, mean_x, mean_y, sd_x, sd_y) {
  expect_lt(abs(x - y), abs(mean_x - mean_y) + 4 * sqrt(sd_x^2 + sd_y^2))
}

# The progress bar lines that evaluating `code` draws (cli draws them through messages), with
# the elapsed time at which each was drawn and at which `code` returned.
# cli draws an update of a bar in a terminal that cannot redraw a line only if its clock has
# ticked since the last update it drew. The clock's period is CLI_TICK_TIME (ms) when cli is
# loaded, 3 s outside interactive sessions unless set (tools/run-tests.R sets 100 ms). On a slow
# clock a bar test is skipped; otherwise this waits for a tick, so that the first update is drawn.
wait_for_cli_tick <- function() {
  tick <- as.numeric(Sys.getenv("CLI_TICK_TIME", if (interactive()) "200" else "3000")) / 1000
  testthat::skip_if(tick > 0.5, "cli's clock ticks slowly here (CLI_TICK_TIME, see tools/run-tests.R)")
  Sys.sleep(tick + 0.05)
}

drawn_bar <- function(code) {
  lines <- character(0)
  at <- numeric(0)
  withCallingHandlers(code, message = function(m) {
    lines <<- c(lines, sub("\\n$", "", conditionMessage(m)))
    at <<- c(at, proc.time()[["elapsed"]])
    invokeRestart("muffleMessage")
  })
  list(lines = lines, at = at, end = proc.time()[["elapsed"]])
}

# Two calls of `f()`, each after set.seed(9), give the same result: a run without `seed` takes
# its seed from R's generator.
expect_same_after_set_seed <- function(f) {
  set.seed(9)
  first <- f()
  set.seed(9)
  testthat::expect_identical(f(), first)
}
