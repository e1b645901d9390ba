# Tolerances for AIS come from the spread of replicate runs (seeds 1-10, data seed 1) with the
# settings used below (50 particles, target ESS 25, 100 SGHMC steps, otherwise the defaults):
#   N = 200:   error log Z - exact: mean -1.15, sd 1.33 (range -2.57 to 1.57), 0.16 s a run
#   N = 2,000: error mean -5.49, sd 3.91 (range -12.1 to 1.6), 1.9 s a run
# AIS underestimates log Z (Jensen: log of an unbiased estimate of Z), more so with poorer
# mixing at larger N. The accepted interval is the measured mean +/- 4 sd. (With the paper's
# defaults, 10 particles and 20 steps, the error at N = 200 is -4.8 to -14.8 over 10 runs.)
ais_test <- function(n, seed = 1, ...) {
  paper_ais(reference_model(n), particles = 50, target_ess = 25, sghmc_steps = 100, seed = seed,
            ...)
}

test_that("AIS recovers the exact evidence of linear regression at N = 200", {
  test_tags("memcheck")
  model <- reference_model(200)
  err <- log_evidence(ais_test(200)) - exact_log_evidence(model)
  expect_gt(err, -1.15 - 4 * 1.33)
  expect_lt(err, -1.15 + 4 * 1.33)
})

test_that("AIS recovers the exact evidence of linear regression at N = 2,000", {
  model <- reference_model(2000)
  err <- log_evidence(ais_test(2000)) - exact_log_evidence(model)
  expect_gt(err, -5.49 - 4 * 3.91)
  expect_lt(err, -5.49 + 4 * 3.91)
})

test_that("AIS is reproducible with a seed and differs between seeds", {
  model <- reference_model(200)
  a <- ais(model, seed = 3, progress = FALSE)
  b <- ais(model, seed = 3, progress = FALSE)
  c <- ais(model, seed = 4, progress = FALSE)
  expect_identical(without_timing(a), without_timing(b))
  expect_false(identical(a$log_evidence, c$log_evidence))
  # the caller's stream is left alone
  set.seed(10)
  x <- runif(1)
  set.seed(10)
  ais(model, seed = 3, progress = FALSE)
  expect_identical(runif(1), x)
})

test_that("AIS results do not depend on how the run is sliced", {
  test_tags("memcheck")
  model <- reference_model(200)
  whole <- ais(model, seed = 5, progress = FALSE, resample = TRUE)
  # one annealing step per call (time budget 0), continuing the state and its key
  settings <- sgais:::c_settings(whole$settings)
  pieces <- withr_seed(5, {
    state <- list(theta = sgais:::model_prior_draw(model, settings$particles),
                  logw = numeric(settings$particles), loglik = numeric(0), lambda = 0,
                  steps = 0L, log_z = 0, step_size = 0, key = sgais:::rng_key())
    out <- list()
    while (state$lambda < 1) {
      res <- sgais:::ais_slice(model, state, settings, 0)
      expect_equal(nrow(res$trace), 1L)
      state <- res$state
      out[[length(out) + 1L]] <- res$trace
    }
    list(state = state, trace = do.call(rbind, out))
  })
  expect_identical(pieces$state$logw, whole$state$log_weights)
  expect_identical(pieces$trace$log_evidence, whole$schedule$log_evidence)
  expect_identical(cumsum(pieces$trace$gradient_evaluations), whole$schedule$gradient_evaluations)
  # the genealogy is carried from call to call: the same predicted sd
  M <- settings$particles
  g <- pieces$state$genealogy
  summed <- sum((M / pieces$trace$ess - 1) / M)
  expect_identical(whole$diagnostics$predicted_sd, sqrt(max(summed, g$closed + sum(g$influence^2))))
})

test_that("without resampling the genealogy's variance is that of the final weights", {
  # every particle its own ancestor: each one's influences add up to its final normalised weight
  # less 1 / M, so the estimate is sum(W^2) - 1 / M, the delta method's relative variance of the
  # mean weight; the predicted sd is the larger of it and the summed chi-square divergences
  model <- reference_model(200)
  fit <- ais(model, particles = 20, resample = FALSE, seed = 2, progress = FALSE)
  W <- exp(fit$state$log_weights - max(fit$state$log_weights))
  W <- W / sum(W)
  summed <- sum((20 / fit$schedule$ess - 1) / 20)
  expect_equal(fit$diagnostics$predicted_sd^2, max(summed, sum(W^2) - 1 / 20), tolerance = 1e-10)
  expect_gt(sum(W^2) - 1 / 20, summed) # weights that accumulate: more than the steps' sum
})

test_that("AIS follows a given schedule step by step, and its own schedule gives the same run", {
  model <- reference_model(200)
  adaptive <- ais(model, seed = 6, progress = FALSE)
  expect_identical(adaptive$annealing, "adaptive")
  expect_null(adaptive$pilot)
  # the adaptive steps are what the schedule prescribes: the same run, up to rounding (a step
  # is the difference of two lambdas, lambda_j - lambda_{j-1}, and not the Delta that made them)
  again <- ais(model, schedule = adaptive$schedule$lambda, seed = 6, progress = FALSE)
  expect_identical(again$annealing, "fixed")
  expect_identical(again$schedule$lambda, adaptive$schedule$lambda)
  expect_equal(again$log_evidence, adaptive$log_evidence, tolerance = 1e-12)
  expect_equal(again$state, adaptive$state, tolerance = 1e-10)
  # any increasing schedule is taken as given, whatever ESS its steps leave
  # (and a schedule too coarse for its particles is flagged as such)
  expect_warning(coarse <- ais(model, schedule = c(1e-4, 1e-2, 0.2, 1), seed = 6, progress = FALSE),
                 class = "sgais_warning_unreliable")
  expect_identical(coarse$schedule$lambda, c(1e-4, 1e-2, 0.2, 1))
  expect_lt(min(coarse$schedule$ess), adaptive$settings$target_ess / 2)
  expect_output(print(coarse), "4 steps on a given schedule")
  # sliced into one step per call, continuing at the schedule's position
  settings <- sgais:::c_settings(coarse$settings)
  state <- withr_seed(6, sgais:::ais_start_state(model, settings$particles))
  while (state$lambda < 1) {
    state <- sgais:::ais_slice(model, state, settings, 0, c(1e-4, 1e-2, 0.2, 1))$state
  }
  expect_identical(state$logw, coarse$state$log_weights)
})

test_that("AIS replicates follow one pilot run's schedule, whose cost is counted", {
  model <- reference_model(200)
  # (20 particles, one move a step: the schedules' sharing and the counting depend on neither)
  lean <- function(...) ais(model, particles = 20, max_rounds = 1, progress = FALSE, ...)
  fit <- lean(replicates = 3, seed = 2)
  expect_identical(fit$annealing, "pilot")
  expect_named(fit$pilot, c("log_evidence", "steps", "seconds", "gradient_evaluations",
                            "likelihood_evaluations"))
  lambdas <- split(fit$schedule$lambda, fit$schedule$replicate)
  expect_length(lambdas[[1]], fit$pilot$steps)
  expect_identical(lambdas[[2]], lambdas[[1]])
  expect_identical(lambdas[[3]], lambdas[[1]])
  # the pilot is not a replicate: its estimate is left out, its cost counted
  expect_false(fit$pilot$log_evidence %in% fit$replicate_log_evidence)
  last <- fit$schedule[!duplicated(fit$schedule$replicate, fromLast = TRUE), ]
  expect_equal(fit$gradient_evaluations,
               sum(last$gradient_evaluations) + fit$pilot$gradient_evaluations)
  expect_output(print(fit), "on a pilot run's schedule")
  # the pilot is the plain run with this seed, its schedule the one the replicates take
  plain <- lean(seed = 2)
  expect_identical(plain$log_evidence, fit$pilot$log_evidence)
  expect_identical(plain$schedule$lambda, lambdas[[1]])
  # each replicate adapting its own steps
  own <- lean(replicates = 2, schedule = "adaptive", seed = 2)
  expect_identical(own$annealing, "adaptive")
  expect_null(own$pilot)
  expect_false(identical(own$schedule$lambda[own$schedule$replicate == 1],
                         own$schedule$lambda[own$schedule$replicate == 2]))
})

test_that("AIS fits print, summarise and convert like the other fits", {
  fit <- paper_ais(reference_model(200), seed = 1)
  expect_s3_class(fit, c("sgais_ais_fit", "sgais_evidence"))
  expect_output(print(fit), "<AIS evidence estimate>")
  expect_output(print(fit), "annealing: \\d+ steps")
  expect_output(print(summary(fit)), "exact log Z")
  df <- as.data.frame(fit)
  expect_named(df, c("method", "n", "log_evidence", "log_evidence_se", "ess", "seconds",
                     "gradient_evaluations", "likelihood_evaluations", "step", "lambda",
                     "resampled", "sghmc_steps", "acceptance", "step_size", "divergent",
                     "step_halvings", "data_fraction", "jump_acceptance"))
  expect_equal(df$lambda[nrow(df)], 1)
  expect_true(all(diff(df$lambda) > 0))
  expect_equal(log_evidence(fit), df$log_evidence[nrow(df)])
  expect_equal(fit$gradient_evaluations, df$gradient_evaluations[nrow(df)])
  # every SGHMC step is one full-data gradient per particle
  expect_equal(fit$gradient_evaluations, nrow(df) * 10 * 20 * 200)
  draws <- withCallingHandlers(posterior_samples(fit, 7),
                               sgais_warning_low_ess = function(w) invokeRestart("muffleWarning"))
  expect_equal(dim(draws), c(7L, 6L))
})

test_that("AIS rejects bad input with errors naming the argument", {
  model <- reference_model(200)
  expect_error(ais("x"), "`model` must be an sgais model")
  expect_error(ais(model, particles = 1), "`particles` must be a whole number >= 2")
  expect_error(ais(model, target_ess = 101), "`target_ess` must be a number in \\(1, particles\\)")
  # at the number of particles no annealing step keeps the ESS there: refused, not run forever
  expect_error(ais(model, target_ess = 100), "`target_ess` must be a number in \\(1, particles\\) = \\(1, 100\\), not 100")
  expect_error(ais(model, target_ess = 1), "`target_ess`")
  expect_error(ais(model, sghmc_steps = -1), "`sghmc_steps` must be a whole number")
  expect_error(ais(model, learning_rate = 0), "`learning_rate` must be a positive finite number")
  expect_error(ais(model, momentum_decay = 0), "`momentum_decay` must be a number in \\(0, 1\\]")
  expect_error(ais(model, momentum_decay = 1.5), "`momentum_decay`")
  expect_error(ais(model, resample = NA), "`resample` must be TRUE, FALSE or a number")
  expect_error(ais(model, batch_size = 10), "Unknown setting `batch_size` for ais\\(\\)")
  expect_error(ais(model, control = sgais_control()), "`control` must come from `ais_control\\(\\)`")
  expect_error(ais(model, seed = 1.5), "`seed` must be NULL or a whole number")
  expect_error(ais(model, progress = "yes"), "`progress` must be TRUE or FALSE")
  expect_error(ais(model, schedule = "fixed"), "`schedule` must be NULL, \"adaptive\", \"pilot\"")
  expect_error(ais(model, schedule = list(1)), "`schedule` must be NULL")
  expect_error(ais(model, schedule = c(0.5, 0.2, 1)), "`schedule` must be increasing values of lambda in \\(0, 1\\] ending at 1")
  expect_error(ais(model, schedule = c(0.1, 0.5)), "ending at 1")
  expect_error(ais(model, schedule = c(0, 1)), "`schedule` must be increasing")
  expect_error(ais(model, schedule = c(0.5, NA, 1)), "`schedule` must be increasing")
  # the core checks again, and that a continued run is where its schedule says
  state <- sgais:::ais_start_state(model, 100)
  settings <- sgais:::c_settings(sgais:::control_settings(ais_control(), list(), "ais", NULL))
  expect_error(sgais:::ais_slice(model, state, settings, 0, c(0.5, 0.2, 1)), "`schedule` must increase")
  state$steps <- 1L
  state$lambda <- 0.3
  expect_error(sgais:::ais_slice(model, state, settings, 0, c(0.5, 1)), "after step 1")
})

test_that("ais_progress() is the fraction of log lambda travelled from the first step to 1", {
  progress <- sgais:::ais_progress
  start <- withr_seed(1, sgais:::ais_start_state(reference_model(200), 5))
  expect_identical(progress(start), 0)
  # lambda growing by a constant factor per step, as adaptive steps make it once the likelihood
  # dominates: 31 steps from 1e-6 to 1, step s at (s - 1) / 30 of the way
  lambda <- 1e-6^(1 - (0:30) / 30)
  at <- vapply(seq_along(lambda), function(s) {
    progress(list(lambda = lambda[s], first_lambda = lambda[1], steps = s))
  }, numeric(1))
  expect_equal(at, (0:30) / 30)
  expect_identical(at[31], 1)
  # the label predicts the number of steps from the position
  expect_identical(
    sgais:::ais_status(list(lambda = lambda[11], first_lambda = lambda[1], steps = 11L,
                            log_z = -12.5)),
    "step 11/~31, lambda 0.0001, log Z -12.5"
  )
  expect_identical(
    sgais:::ais_status(list(lambda = 1, first_lambda = lambda[1], steps = 31L, log_z = -12.5)),
    "step 31, lambda 1, log Z -12.5"
  )
})

test_that("the AIS progress bar moves steadily over a real run, where lambda does not", {
  model <- reference_model(200)
  whole <- ais(model, seed = 5, progress = FALSE)
  settings <- sgais:::c_settings(whole$settings)
  run <- withr_seed(5, {
    state <- sgais:::ais_start_state(model, settings$particles)
    at <- lambda <- numeric(0)
    while (state$lambda < 1) {
      res <- sgais:::ais_slice(model, state, settings, 0) # one annealing step per call
      state <- res$state
      at <- c(at, sgais:::ais_progress(state))
      lambda <- c(lambda, state$lambda)
    }
    list(state = state, at = at, lambda = lambda)
  })
  # the same run as ais(), and the first step's lambda is kept for the bar
  expect_identical(run$state$logw, whole$state$log_weights)
  expect_identical(run$state$first_lambda, whole$schedule$lambda[1])
  at <- run$at
  steps <- length(at)
  expect_identical(at[1], 0)
  expect_identical(at[steps], 1)
  expect_true(all(diff(at) > 0))
  # close to the fraction of steps done (measured: within 0.12), while lambda, which the bar
  # used to show, is still below 0.1 halfway through the run
  expect_lt(max(abs(at - (seq_len(steps) - 1) / (steps - 1))), 0.25)
  half <- ceiling(steps / 2)
  expect_lt(run$lambda[half], 0.1)
  expect_gt(at[half], 0.3)
})

test_that("ais() draws its progress bar as it runs, with the step, lambda and log Z", {
  skip_on_cran()
  withr::local_options(cli.progress_show_after = 0, cli.dynamic = FALSE, width = 200,
                       cli.width = 200)
  model <- reference_model(5000) # long enough for the package to draw bars at all
  wait_for_cli_tick()
  # (adaptive: a pilot run's bar would come first and take the clock's tick)
  bar <- drawn_bar(ais(model, seed = 3, replicates = 2, schedule = "adaptive", progress = TRUE))
  first <- grepl("^AIS 1/2 ", bar$lines)
  expect_match(bar$lines[first], paste0("^AIS 1/2 .* \\d+% \\| ETA [^|]+\\| step \\d+(/~\\d+)?, ",
                                        "lambda [0-9.e-]+, log Z -?\\d"), all = FALSE)
  expect_match(bar$lines[first],
               "^AIS 1/2 .* 100% \\| ETA [^|]+\\| step \\d+, lambda 1, log Z -\\d", all = FALSE)
  # drawn while the run went on (the first replicate's bar used to be relayed by future only
  # once both replicates had finished)
  expect_lt(min(bar$at[first]), bar$end - 0.2)
  percent <- as.numeric(sub("%", "", regmatches(bar$lines, regexpr("\\d+%", bar$lines))))
  expect_lt(min(percent), 100)
})

test_that("the progress bar does not change an AIS run", {
  model <- reference_model(200)
  expect_identical(without_timing(suppressMessages(ais(model, seed = 3, progress = TRUE))),
                   without_timing(ais(model, seed = 3, progress = FALSE)))
})

test_that("the annealing step is found however widely the log-likelihoods spread", {
  step <- function(loglik, target, logw = NULL) {
    .Call(sgais:::C_ffi_annealing_step, loglik, logw, 1, target)
  }
  # an ordinary spread: the ESS of the incremental weights is the target
  set.seed(1)
  ll <- -abs(rnorm(100, sd = 50))
  expect_equal(step(ll, 80)[2], 80, tolerance = 1e-6)
  # log-likelihoods 1e22 apart (Poisson regression under a wide prior): the step is far below
  # the 1e-15 the linear search resolves, and still keeps the target (it collapsed to ESS 1)
  wide <- -10^runif(100, 5, 22)
  res <- step(wide, 80)
  expect_lt(res[1], 1e-15)
  expect_gt(res[1], 0)
  expect_equal(res[2], 80, tolerance = 1e-6)
  # 30 particles of zero likelihood: no step keeps 80, so the target is scaled to the other 70
  zero <- c(rep(-Inf, 30), -abs(rnorm(70, sd = 50)))
  res <- step(zero, 80)
  expect_gt(res[1], 0)
  expect_equal(res[2], 80 * 70 / 100, tolerance = 1e-6)
  expect_error(step(ll, 100), "`target` must be in", class = "sgais_error_input")
  # the conditional ESS: equal to the incremental one for equal weights ...
  expect_equal(step(ll, 80, logw = rep(-3, 100)), step(ll, 80), tolerance = 1e-12)
  # ... and not held back by particles the weights have already dropped: 20 particles stuck
  # where the likelihood is 1e12 times smaller keep the incremental step below 1e-10 (killing
  # them leaves an ESS of at most 80 < 90), while given their (vanished) weights the
  # conditional ESS is 100 / 80 times the other 80 particles' ESS, whose step it takes
  stuck <- c(rep(-1e12, 20), ll[1:80])
  logw <- c(rep(-1e6, 20), rep(0, 80))
  expect_lt(step(stuck, 90)[1], 1e-10)
  cess <- step(stuck, 90, logw = logw)
  expect_equal(cess[1], step(ll[1:80], 90 * 80 / 100)[1], tolerance = 1e-6)
  expect_equal(cess[2], 90, tolerance = 1e-6)
  # log-likelihoods near -1e20 (a covariate in seconds since 1970 under a unit prior): the ESS
  # does not depend on where they sit, and it is never more than the particles (the unshifted
  # sums lost it to rounding: "ESS" 8.9e6 of 100, and annealing took lambda = 1 at once)
  u <- runif(100)
  far <- -1e20 * (1 + 1e-3 * u)
  near <- -1e17 * u
  for (w in list(NULL, rep(-3, 100))) {
    res <- step(far, 80, logw = w)
    expect_equal(res, step(near, 80, logw = w), tolerance = 1e-6)
    expect_lt(res[1], 1e-15)
    expect_equal(res[2], 80, tolerance = 1e-6)
  }
})
