# Tolerances for nested sampling: the standard error sqrt(H / M) that each fit reports, times 3,
# plus a bias allowance measured from replicate runs (seeds 1-10, data seed 1, 20 live points):
#   N = 200,   learning_rate 1e-4, 200 steps: error mean +1.55, sd 1.01, mean sqrt(H/M) 0.86
#   N = 2,000, learning_rate 2e-5, 200 steps: error mean +2.13, sd 2.02, mean sqrt(H/M) 1.03
# The positive bias is the SGHMC discretisation near the contour (the new points undersample the
# boundary, paper Appendix A.1, so the volume shrinks faster than assumed); it grows with
# learning_rate relative to the posterior width (paper default 1e-3 at N = 200: +3.3 to +5.5).
# The measured spread exceeds sqrt(H/M) (at N = 2,000 about twice) because the copied points
# stay correlated, so the allowance is bias + 3 * (measured sd - sqrt(H/M)):
# 1.55 + 3 * 0.15 = 2 nats at N = 200 and 2.13 + 3 * 0.99 = 5.1 nats at N = 2,000. (Seed 1 at
# N = 2,000 is the largest of the 10 replicates, +7.2.)
ns_test <- function(n, learning_rate, seed = 1, ...) {
  paper_ns(reference_model(n), live_points = 20, sghmc_steps = 200,
           learning_rate = learning_rate, seed = seed, ...)
}

test_that("nested sampling recovers the exact evidence of linear regression at N = 200", {
  test_tags("memcheck")
  fit <- ns_test(200, 1e-4)
  err <- log_evidence(fit) - exact_log_evidence(reference_model(200))
  expect_true(fit$converged)
  expect_lt(abs(err), 3 * fit$log_evidence_sd + 2)
})

test_that("nested sampling recovers the exact evidence of linear regression at N = 2,000", {
  fit <- ns_test(2000, 2e-5)
  err <- log_evidence(fit) - exact_log_evidence(reference_model(2000))
  expect_lt(abs(err), 3 * fit$log_evidence_sd + 5.1)
})

test_that("AIS and nested sampling agree on linear regression (paper Appendix A.2)", {
  # Two methods that work in completely different ways; the allowance adds the measured biases
  # (AIS -1.15, NS +1.55) and 4 times the combined spread (AIS sd 1.33, NS sd 1.01).
  model <- reference_model(200)
  a <- paper_ais(model, particles = 50, target_ess = 25, sghmc_steps = 100, seed = 11)
  n <- ns_test(200, 1e-4, seed = 11)
  expect_agree(log_evidence(a), log_evidence(n), -1.15, 1.55, 1.33, 1.01)
})

# The Gaussian-mixture version of this test (the paper's own, Appendix A.2) is in
# test-gaussian_mixture.R, with SGAIS as the third method.

# sd(log Z) = sqrt(H / M): H, a Kullback-Leibler divergence, rounds below 0 where the likelihood
# is flat over the prior (a mixture's reference on separated clusters), which gave NaN
test_that("the information's standard error is 0, not NaN, when H rounds below 0", {
  expect_identical(sgais:::information_sd(c(-1e-9, 0, 4), 4), c(0, 0, 1))
})

test_that("nested sampling is reproducible with a seed and differs between seeds", {
  model <- reference_model(200)
  a <- quietly(nested_sampling(model, live_points = 3, seed = 3, progress = FALSE))
  b <- quietly(nested_sampling(model, live_points = 3, seed = 3, progress = FALSE))
  c <- quietly(nested_sampling(model, live_points = 3, seed = 4, progress = FALSE))
  expect_identical(without_timing(a), without_timing(b))
  expect_false(identical(a$log_evidence, c$log_evidence))
})

test_that("nested sampling results do not depend on how the run is sliced", {
  test_tags("memcheck")
  model <- reference_model(200)
  whole <- quietly(nested_sampling(model, live_points = 4, seed = 5, progress = FALSE))
  settings <- sgais:::c_settings(whole$settings)
  pieces <- withr_seed(5, {
    state <- list(theta = sgais:::model_prior_draw(model, 4), loglik = numeric(0),
                  iteration = 0, log_z = -Inf, information = 0, status = 0L, walk_scale = 0,
                  walk_jump = 0, key = sgais:::rng_key())
    calls <- 0
    while (state$status == 0L) {
      res <- sgais:::nested_slice(model, state, settings, 0) # one iteration per call
      state <- res$state
      calls <- calls + 1
    }
    list(state = state, calls = calls)
  })
  expect_equal(pieces$calls, whole$iterations)
  expect_identical(pieces$state$log_z, whole$log_evidence)
  expect_identical(pieces$state$information, whole$information)
})

test_that("nested sampling fits have the documented parts", {
  model <- reference_model(200)
  fit <- paper_ns(model, live_points = 5, seed = 1)
  expect_s3_class(fit, c("sgais_ns_fit", "sgais_evidence"))
  expect_output(print(fit), "<Nested sampling evidence estimate>")
  expect_output(print(fit), "sd\\(log Z\\)")
  expect_output(print(summary(fit)), "exact log Z")
  df <- as.data.frame(fit)
  expect_named(df, c("method", "n", "log_evidence", "log_evidence_se", "ess", "seconds",
                     "gradient_evaluations", "likelihood_evaluations", "iteration",
                     "log_likelihood", "log_volume", "steps", "rejected_steps", "jumps_accepted"))
  expect_equal(df$iteration, seq_len(fit$iterations))
  expect_true(all(df$steps == 20))
  expect_equal(df$log_volume, -df$iteration / 5)
  expect_true(all(diff(df$log_likelihood) >= 0))
  expect_equal(fit$log_evidence_sd, sqrt(fit$information / 5))
  # the dead points and the final live points carry all of the evidence
  expect_equal(nrow(fit$dead), fit$iterations + 5)
  lw <- fit$dead[, "log_weight"]
  expect_equal(max(lw) + log(sum(exp(lw - max(lw)))), fit$log_evidence)
  expect_equal(log_evidence(fit), fit$log_evidence)
  # the constraint is checked with exact full-data likelihoods, 20 steps per iteration
  expect_gte(fit$likelihood_evaluations, (fit$iterations * 20 + 5) * 200)
})

test_that("the random walk's length adapts to the distance it travels, within its bounds", {
  model <- reference_model(200)
  fit <- quietly(nested_sampling(model, live_points = 30, seed = 3, progress = FALSE))
  steps <- as.data.frame(fit)$steps
  expect_true(all(steps >= 25 & steps <= 600))
  expect_gt(length(unique(steps)), 1)
  expect_match(format(fit), "random walk in the live points' metric, [0-9]+-[0-9]+ proposals", all = FALSE)
  # a far intercept makes the constrained region a thin shell: shorter accepted steps, so
  # longer walks than on the same data near the prior's centre
  d <- simulate_linear_regression(200, seed = 1)
  far <- linear_regression(y ~ ., transform(d, y = y + 20), prior = "paper", noise_sd = 1)
  fit_far <- quietly(nested_sampling(far, live_points = 30, seed = 3, progress = FALSE))
  late <- function(f) stats::median(utils::tail(as.data.frame(f)$steps, 500))
  expect_gt(late(fit_far), 1.3 * late(fit))
  # a fixed length and the bounds are honoured
  fixed <- quietly(nested_sampling(model, live_points = 10, walk_steps = 7, seed = 3, progress = FALSE))
  expect_true(all(as.data.frame(fixed)$steps == 7))
  expect_output(print(fixed), "7 proposals")
  capped <- quietly(nested_sampling(far, live_points = 10, max_walk_steps = 30, seed = 3,
                                    progress = FALSE))
  expect_true(all(as.data.frame(capped)$steps %in% 25:30))
  expect_error(nested_control(max_walk_steps = 10), "`max_walk_steps` must be a whole number >= 25")
})

test_that("posterior samples from nested sampling are near the posterior", {
  model <- reference_model(200)
  fit <- paper_ns(model, live_points = 20, learning_rate = 1e-4, sghmc_steps = 100, seed = 2)
  draws <- posterior_samples(fit, 2000)
  expect_equal(dim(draws), c(2000L, 6L))
  expect_identical(colnames(draws), model$parameter_names)
  # the posterior mean is near least squares at N = 200 (sd of each coefficient about 0.07)
  ls <- stats::coef(stats::lm(y ~ ., simulate_linear_regression(200, seed = 1)))
  expect_lt(max(abs(colMeans(draws) - ls)), 0.15)
})

test_that("one live point and many live points work", {
  test_tags("memcheck")
  model <- reference_model(200)
  one <- paper_ns(model, live_points = 1, seed = 1)
  expect_true(is.finite(one$log_evidence))
  many <- nested_sampling(model, live_points = 50, sghmc_steps = 5, seed = 1, progress = FALSE)
  expect_equal(nrow(many$dead), many$iterations + 50)
})

test_that("stopping at max_iterations warns", {
  model <- reference_model(200)
  expect_warning(
    fit <- paper_ns(model, max_iterations = 5, seed = 1),
    "reached `max_iterations` = 5"
  )
  expect_false(fit$converged)
  expect_equal(fit$iterations, 5)
  expect_equal(nrow(fit$dead), 5 + 2)
})

test_that("nested sampling rejects bad input with errors naming the argument", {
  model <- reference_model(200)
  expect_error(nested_sampling(1), "`model` must be an sgais model")
  expect_error(nested_sampling(model, live_points = 0), "`live_points` must be a whole number >= 1")
  expect_error(nested_sampling(model, live_points = 2.5), "`live_points`")
  expect_error(nested_sampling(model, tolerance = 0), "`tolerance` must be a positive finite number")
  expect_error(nested_sampling(model, tolerance = -1), "`tolerance`")
  expect_error(nested_sampling(model, learning_rate = -1e-3), "`learning_rate` must be a positive")
  expect_error(nested_sampling(model, momentum_decay = 0), "`momentum_decay` must be a number in \\(0, 1\\]")
  expect_error(nested_sampling(model, sghmc_steps = NA), "`sghmc_steps`")
  expect_error(nested_sampling(model, max_iterations = 0), "`max_iterations` must be a whole number >= 1")
  expect_error(nested_sampling(model, seed = "a"), "`seed`")
  fit <- paper_ns(model, max_iterations = 50, seed = 1)
  expect_error(posterior_samples(fit, n = -1), "`n` must be a whole number >= 0")
})

test_that("robust AIS and nested sampling agree on a real data set (iris, softmax regression)", {
  test_tags("slow")
  # Two methods that work differently: annealing with Metropolis-adjusted HMC, and nested
  # sampling with a random walk inside the contour. Over seeds 1-10 (calibration) AIS gave
  # -45.86 (sd 0.33) and NS -46.15 (sd 0.54); AIS with 400 particles -46.5 and NS with 400 live
  # points -45.8. The test (seed 11) allows the difference of the means plus 4 times the
  # combined sd.
  model <- softmax_regression(Species ~ ., iris)
  a <- quietly(ais(model, seed = 11, progress = FALSE))
  n <- quietly(nested_sampling(model, seed = 11, progress = FALSE))
  expect_agree(log_evidence(a), log_evidence(n), -45.86, -46.15, 0.33, 0.54)
  expect_lt(n$log_evidence_sd, 0.6)
})

test_that("ns_outlook() measures the run against its stopping rule and predicts its length", {
  settings <- list(live_points = 10, tolerance = 0.01, max_iterations = 1e6)
  # log(L_max X / Z-hat) = 5 - 10 / 10 - 0 = 4 nats, above d / 2 = 1 for d = 2 parameters: the
  # log volume still to shrink is 1 * log(4 / 1) + 1 - log(0.01), times 10 live points
  state <- list(status = 0L, iteration = 10, loglik = c(1, 5, 3), log_z = 0)
  out <- sgais:::ns_outlook(state, settings, 2)
  expect_equal(out$dlogz, log1p(exp(4)))
  expect_equal(out$target, log1p(0.01))
  expect_equal(out$total, 10 + 10 * (log(4) + 1 - log(0.01)))
  expect_equal(sgais:::ns_progress(state, settings, 2), 10 / out$total)
  expect_identical(sgais:::ns_status(state, settings, 2),
                   "iteration 10/~80, dlogz 4.02 > 0.00995, log Z 0")
  # below d / 2 the remaining log volume is what log(L_max X / Z-hat) still has to fall
  state$loglik <- 1.5
  expect_equal(sgais:::ns_outlook(state, settings, 2)$total, 10 + 10 * (0.5 - log(0.01)))
  # the run also stops at max_iterations
  settings$max_iterations <- 40
  expect_equal(sgais:::ns_progress(state, settings, 2), 10 / 40)
  # before the first iteration, and once stopped
  expect_identical(sgais:::ns_progress(list(status = 0L, iteration = 0, loglik = numeric(0),
                                            log_z = -Inf), settings, 2), 0)
  expect_identical(sgais:::ns_progress(list(status = 2L, iteration = 40, loglik = 1,
                                            log_z = 0), settings, 2), 1)
})

test_that("the nested-sampling progress bar follows the iterations to the stopping rule", {
  model <- reference_model(200)
  whole <- quietly(nested_sampling(model, live_points = 20, seed = 5, progress = FALSE))
  settings <- whole$settings
  cs <- sgais:::c_settings(settings)
  run <- withr_seed(5, {
    state <- sgais:::ns_start_state(model, 20)
    expect_identical(sgais:::ns_progress(state, settings, model$dim), 0)
    at <- dlogz <- numeric(0)
    while (state$status == 0L) {
      state <- sgais:::nested_slice(model, state, cs, 0)$state # one iteration per call
      at <- c(at, sgais:::ns_progress(state, settings, model$dim))
      dlogz <- c(dlogz, sgais:::ns_outlook(state, settings, model$dim)$dlogz)
    }
    list(state = state, at = at, dlogz = dlogz)
  })
  expect_identical(run$state$log_z, whole$log_evidence)
  at <- run$at
  n <- length(at)
  expect_identical(n, as.integer(whole$iterations))
  expect_identical(at[n], 1)
  expect_true(all(at >= 0 & at <= 1))
  # close to the fraction of iterations done (measured: within 0.04); revisions of the predicted
  # total move it back only a little (measured: 0.02 at most)
  expect_lt(max(abs(at - seq_len(n) / n)), 0.15)
  expect_gt(min(diff(at)), -0.05)
  # dlogz is the C core's stopping rule: above its target while the run goes on, below at the end
  target <- log1p(settings$tolerance)
  expect_true(all(run$dlogz[-n] > target))
  expect_lt(run$dlogz[n], target)
})

test_that("nested_sampling() draws its progress bar, with the iteration, dlogz and log Z", {
  skip_on_cran()
  withr::local_options(cli.progress_show_after = 0, cli.dynamic = FALSE, width = 200,
                       cli.width = 200)
  model <- reference_model(2000)
  wait_for_cli_tick()
  bar <- drawn_bar(quietly(nested_sampling(model, seed = 3, progress = TRUE)))
  expect_match(bar$lines, paste0("^Nested sampling .* \\d+% \\| ETA [^|]+\\| ",
                                 "iteration [0-9,]+/~[0-9,]+, dlogz [0-9.e+]+ > 0.00995, ",
                                 "log Z -?\\d"), all = FALSE)
  expect_match(bar$lines, paste0("^Nested sampling .* 100% \\| ETA [^|]+\\| iteration [0-9,]+, ",
                                 "dlogz [0-9.e-]+ <= 0.00995, log Z -\\d"), all = FALSE)
  percent <- as.numeric(sub("%", "", regmatches(bar$lines, regexpr("\\d+%", bar$lines))))
  expect_lt(min(percent), 100)
})

test_that("the progress bar does not change a nested-sampling run", {
  model <- reference_model(200)
  expect_identical(
    without_timing(suppressMessages(quietly(nested_sampling(model, live_points = 20, seed = 3,
                                                            progress = TRUE)))),
    without_timing(quietly(nested_sampling(model, live_points = 20, seed = 3, progress = FALSE)))
  )
})
