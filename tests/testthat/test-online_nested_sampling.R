# Online nested sampling (thesis Section 4.3): the trajectory against the exact evidence of
# linear regression, against nested_sampling() on a logistic regression, reproducibility, slicing
# and errors. Every run here is small (under 0.2 s).

online_model <- function() linear_regression(y ~ ., simulate_linear_regression(400, seed = 3),
                                             noise_sd = 1)

quiet_online <- function(model, ...) {
  quietly(online_nested_sampling(model, progress = FALSE, ...))
}

test_that("online nested sampling follows the exact evidence at every chunk end", {
  # Calibration (seeds 1-5, not used below): 400 observations in 4 chunks of 100, 50 live
  # points. The errors at the chunk ends were -0.55 to +1.99 nats (final: 0.12, 1.99, 1.28,
  # -0.40, -0.87; sd 1.14 against the predicted sqrt(H / M) = 0.56-0.58; mean +0.43). The
  # tolerance is 3 sd of the measured final error: 3.5 nats per run at every chunk end, and
  # 2.0 (3 sd / sqrt(3)) for the mean of the three runs' final errors.
  model <- online_model()
  exact <- exact_log_evidence(model, n = c(100, 200, 300, 400))
  final <- numeric(0)
  for (seed in 11:13) {
    fit <- quiet_online(model, chunk_size = 100, live_points = 50, seed = seed)
    tr <- fit$trajectory
    expect_identical(tr$n, c(100, 200, 300, 400))
    expect_lt(max(abs(tr$log_evidence - exact)), 3.5)
    expect_equal(tr$log_evidence, cumsum(tr$log_predictive))
    final <- c(final, fit$log_evidence - exact[4])
  }
  expect_lt(abs(mean(final)), 2.0)
})

test_that("one chunk of every observation is nested_sampling() exactly", {
  test_tags("memcheck")
  model <- reference_model(200)
  a <- quiet_online(model, chunk_size = 200, live_points = 20, seed = 5)
  b <- quietly(nested_sampling(model, live_points = 20, seed = 5, progress = FALSE))
  expect_identical(a$log_evidence, b$log_evidence)
  expect_identical(a$information, b$information)
  expect_identical(a$likelihood_evaluations, b$likelihood_evaluations)
  expect_identical(unname(a$dead), unname(b$dead))
})

test_that("online nested sampling agrees with nested_sampling() on a logistic regression", {
  # Calibration (seeds 1-5): 300 observations, 50 live points; online (chunks of 100) mean
  # -171.58, sd 0.20; nested_sampling() mean -171.62, sd 0.54. The tolerance 2 nats is 3 sd of
  # the difference of one run of each.
  d <- withr_seed(1, {
    d <- data.frame(x1 = stats::rnorm(300), x2 = stats::rnorm(300))
    d$b <- stats::rbinom(300, 1, stats::plogis(0.5 + d$x1 - d$x2))
    d
  })
  model <- logistic_regression(b ~ x1 + x2, d)
  online <- quiet_online(model, chunk_size = 100, live_points = 50, seed = 21)
  plain <- quietly(nested_sampling(model, live_points = 50, seed = 21, progress = FALSE))
  expect_lt(abs(online$log_evidence - plain$log_evidence), 2)
})

test_that("online nested sampling is reproducible and does not depend on slicing", {
  model <- online_model()
  for (move in c("walk", "sghmc")) {
    a <- quiet_online(model, chunk_size = 150, live_points = 10, seed = 3, move = move,
                      batch_size = 60)
    b <- quiet_online(model, chunk_size = 150, live_points = 10, seed = 3, move = move,
                      batch_size = 60)
    c <- quiet_online(model, chunk_size = 150, live_points = 10, seed = 4, move = move,
                      batch_size = 60)
    expect_identical(without_timing(a), without_timing(b))
    expect_false(identical(a$log_evidence, c$log_evidence))
    # the same run one iteration per call (a time budget of 0)
    settings <- a$settings
    ends <- sgais:::chunk_ends(model$n, settings$chunk_size)
    expect_identical(ends, c(150, 300, 400))
    pieces <- withr_seed(3, {
      state <- sgais:::ons_chunk_state(model, settings, ends, 0L,
                                       sgais:::model_prior_draw(model, 10), sgais:::rng_key())
      rows <- list()
      calls <- 0
      while (!is.null(state$ns)) {
        res <- sgais:::online_slice(model, state, sgais:::c_settings(settings), settings,
                                    ends, 0)
        state <- res$state
        rows <- c(rows, list(res$trace))
        calls <- calls + 1
      }
      list(rows = do.call(rbind, rows), calls = calls)
    })
    expect_identical(pieces$calls, a$iterations)
    expect_identical(pieces$rows$log_predictive, a$trajectory$log_predictive)
    expect_identical(pieces$rows$likelihood_evaluations,
                     diff(c(0, a$trajectory$likelihood_evaluations)))
  }
  # with restarts (their draws come from the run's key: the same in pieces)
  a <- quiet_online(model, chunk_size = 100, live_points = 10, seed = 3, restart_every = 2)
  expect_identical(without_timing(a),
                   without_timing(quiet_online(model, chunk_size = 100, live_points = 10,
                                               seed = 3, restart_every = 2)))
  settings <- a$settings
  ends <- sgais:::chunk_ends(model$n, settings$chunk_size)
  rows <- withr_seed(3, {
    state <- sgais:::ons_chunk_state(model, settings, ends, 0L,
                                     sgais:::model_prior_draw(model, 10), sgais:::rng_key())
    rows <- list()
    while (!is.null(state$ns)) {
      res <- sgais:::online_slice(model, state, sgais:::c_settings(settings), settings, ends, 0)
      state <- res$state
      rows <- c(rows, list(res$trace))
    }
    do.call(rbind, rows)
  })
  expect_identical(rows$restarts, c(0L, 1L, 0L, 1L))
  expect_identical(rows$log_evidence, a$trajectory$log_evidence)
})

test_that("restarts re-estimate the evidence of all the data so far on the grid", {
  # A regression has no restarts by default (restart_every NULL: only for models with jump
  # proposals); with restart_every = 2 and chunks of 100, the grid is 200, 400, 800, ...
  model <- online_model()
  plain <- quiet_online(model, chunk_size = 100, live_points = 30, seed = 7)
  expect_identical(plain$settings$restart_every, Inf)
  expect_identical(plain$trajectory$restarts, rep(0L, 4))
  fit <- quiet_online(model, chunk_size = 100, live_points = 30, seed = 7, restart_every = 2)
  tr <- fit$trajectory
  expect_identical(tr$restarts, c(0L, 1L, 0L, 1L))
  # before the first restart the run is the same; a restart's log Z is its own estimate of
  # all the observations so far, with its own sqrt(H / M), and its row's log predictive the
  # difference from the trajectory before it
  expect_identical(tr$log_evidence[1], plain$trajectory$log_evidence[1])
  expect_equal(tr$log_evidence_sd[c(2, 4)], sqrt(tr$information[c(2, 4)] / 30))
  expect_equal(tr$log_evidence_sd[3], sqrt((tr$information[2] + tr$information[3]) / 30))
  expect_equal(tr$log_evidence, cumsum(tr$log_predictive))
  # the restarts estimate the prefix's evidence from the prior (as many iterations as a run on
  # 200 and 400 observations, more than a chunk's), within the tolerance of the first test for
  # 30 live points rather than 50: 3.5 x sqrt(50 / 30) = 4.5 nats
  expect_gt(tr$iterations[2], 1.5 * plain$trajectory$iterations[2])
  expect_lt(max(abs(tr$log_evidence - exact_log_evidence(model, n = tr$n))), 4.5)
  expect_identical(fit$log_evidence_sd, tr$log_evidence_sd[4])
  # a non-integer ratio: the grid 130, 169, 219.7, 285.6, 371.3, 482.6 (periodic_restart_due()):
  # restarts at the chunk ends 200 (due 130) and 300 (due from 1.3 x 200 = 260: 285.6), not at
  # 400 (due from 390: 482.6)
  odd <- quiet_online(model, chunk_size = 100, live_points = 10, seed = 7, restart_every = 1.3)
  expect_identical(odd$trajectory$restarts, c(0L, 1L, 1L, 0L))
  expect_error(online_nested_sampling(model, restart_every = 1, progress = FALSE),
               class = "sgais_error", regexp = "`restart_every`")
  # a mixture restarts by default with the robust preset, not with the paper's (the thesis's
  # method); the grid from 20: 40, 80
  mix <- gaussian_mixture(scale(datasets::faithful)[1:60, ], components = 2)
  robust <- quiet_online(mix, chunk_size = 20, live_points = 10, seed = 1)
  expect_identical(robust$settings$restart_every, 2)
  expect_identical(robust$trajectory$restarts, c(0L, 1L, 0L))
  expect_output(print(robust), "restarts:  1, on a grid of ratio 2 from 20 observations")
  paper <- quiet_online(mix, chunk_size = 20, live_points = 10, seed = 1,
                        control = online_nested_control("paper"))
  expect_identical(paper$settings$restart_every, Inf)
  expect_identical(paper$trajectory$restarts, rep(0L, 3))
})

test_that("the SGHMC move uses mini-batches of the earlier data at a cost that does not grow", {
  test_tags("memcheck")
  model <- online_model()
  fit <- quiet_online(model, chunk_size = 100, live_points = 10, seed = 1, move = "sghmc",
                      batch_size = 50)
  tr <- fit$trajectory
  expect_true(all(is.finite(tr$log_evidence)))
  # gradient evaluations per SGHMC step: the prior's mini-batch of 50 (exact while the earlier
  # data are at most one batch: none in the first chunk) and the chunk's gradient at each
  # reflection, not the earlier data (200 and 300 in the last two chunks)
  per_step <- diff(c(0, tr$gradient_evaluations)) / tr$steps
  expect_lt(per_step[4], 150)
  expect_lt(per_step[4] / per_step[2], 1.5)
})

test_that("online nested sampling fits have the documented parts and methods", {
  model <- online_model()
  fit <- quiet_online(model, chunk_size = 100, live_points = 20, seed = 2)
  expect_s3_class(fit, c("sgais_online_ns_fit", "sgais_evidence"))
  expect_identical(fit$method, "Online NS")
  tr <- fit$trajectory
  expect_true(all(c("n", "log_evidence", "log_evidence_se", "log_evidence_per_obs",
                    "log_predictive", "log_predictive_per_obs", "seconds",
                    "gradient_evaluations", "likelihood_evaluations", "iterations",
                    "information", "live_points") %in% names(tr)))
  expect_identical(tr$log_evidence_se, tr$log_evidence_sd) # one run: its sqrt(H / M)
  expect_identical(tr$live_points, rep(20L, 4))
  expect_equal(fit$log_evidence, tr$log_evidence[4])
  expect_equal(fit$likelihood_evaluations, tr$likelihood_evaluations[4])
  df <- as.data.frame(fit)
  expect_identical(names(df)[1:8], sgais:::contract_columns)
  expect_output(print(fit), "Online NS evidence estimate")
  expect_output(print(summary(fit)), "4 chunks of 100 observations")
  expect_identical(nrow(plot_data(fit)), 4L)
  expect_equal(plot_data(fit)$exact_per_obs, exact_log_evidence(model, n = tr$n) / tr$n)
  expect_s3_class(ggplot2::autoplot(fit, which = "iterations"), "ggplot")
  expect_identical(dim(posterior_samples(fit, 7, seed = 1)), c(7L, model$dim))
  expect_identical(ncol(fit$dead), model$dim + 2L)
  with_reps <- quiet_online(model, chunk_size = 200, live_points = 10, seed = 2, replicates = 2)
  tr <- with_reps$trajectory
  expect_true(all(tr$log_evidence_se > 0))
  expect_equal(with_reps$log_evidence, mean(with_reps$replicate_log_evidence))
  # the replicates' SE, or sqrt(H / M) of their mean where that is larger, at every n
  expect_true(all(tr$log_evidence_se >= tr$log_evidence_sd))
  expect_equal(with_reps$log_evidence_se,
               max(sd(with_reps$replicate_log_evidence) / sqrt(2), tr$log_evidence_sd[nrow(tr)]))
  expect_equal(tr$log_evidence_se[nrow(tr)], with_reps$log_evidence_se)
})

test_that("online nested sampling names the argument it refuses", {
  model <- online_model()
  expect_error(online_nested_sampling(model, chunk_size = 2.5, progress = FALSE),
               "`chunk_size`", class = "sgais_error")
  expect_error(online_nested_sampling(model, chunk_size = 0, progress = FALSE),
               "`chunk_size`", class = "sgais_error")
  expect_error(online_nested_sampling(model, batch_size = "a", progress = FALSE),
               "`batch_size`", class = "sgais_error")
  expect_error(online_nested_sampling(model, particles = 5, progress = FALSE),
               "particles", class = "sgais_error")
  expect_error(online_nested_sampling(model, control = sgais_control(), progress = FALSE),
               "`control`", class = "sgais_error")
  fit <- quiet_online(model, chunk_size = 200, live_points = 10, seed = 1)
  bad <- fit
  bad$trajectory$n[2] <- 10
  expect_error(format(bad), "`trajectory`", class = "sgais_error_invalid_fit")
})
