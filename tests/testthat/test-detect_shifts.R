# A trajectory with the columns shift_scores() reads: chunks of 500, log predictive per
# observation x (with noise) and annealing steps.
fake_trajectory <- function(x, steps = rep(2, length(x))) {
  data.frame(n = 500 * seq_along(x), log_predictive_per_obs = x, annealing_steps = steps,
             partial = FALSE)
}

test_that("the scores follow the documented rule", {
  set.seed(1)
  x <- c(-6, -4 + rnorm(29, sd = 0.03))
  x[16] <- x[16] - 1  # a chunk predicted 1 nat per observation worse
  s <- sgais:::shift_scores(fake_trajectory(x), threshold = 5)
  expect_identical(s$chunk, 1:30)
  expect_identical(s$at, 500 * (0:29))
  expect_true(all(is.na(s$score[1:2])))  # the first is from the prior; the second has no baseline
  noise <- mad(diff(x[-1])) / sqrt(2)
  base <- 2:15
  expect_equal(s$baseline_log_predictive_per_obs[16], median(x[base]))
  expect_equal(s$surprise[16], (median(x[base]) - x[16]) / max(mad(x[base]), noise))
  expect_identical(which(s$flagged), 16L)
  expect_identical(s$signal[16], "surprise")
  # after the flag, the baseline restarts at the flagged chunk
  expect_equal(s$baseline_log_predictive_per_obs[17], x[16])
  expect_equal(s$baseline_log_predictive_per_obs[18], median(x[16:17]))
  # one-sided: a chunk predicted better is no shift
  y <- x
  y[16] <- x[16] + 2
  expect_false(any(sgais:::shift_scores(fake_trajectory(y), 5)$flagged))
  # the threshold is the knob
  expect_false(any(sgais:::shift_scores(fake_trajectory(x), 1000)$flagged))
})

test_that("annealing effort alone can flag a chunk, but a step or two more cannot", {
  set.seed(2)
  x <- -4 + rnorm(30, sd = 0.03)
  steps <- c(30, rep(2, 29))
  steps[c(10, 20)] <- c(4, 60)
  s <- sgais:::shift_scores(fake_trajectory(x, steps), threshold = 5)
  expect_identical(which(s$flagged), 20L)
  expect_identical(s$signal[20], "effort")
  expect_equal(s$effort[20], (sqrt(60) - sqrt(2)) / 0.5)
  expect_lt(s$effort[10], 5)
})

test_that("a partial last chunk and short trajectories are not scored", {
  tr <- fake_trajectory(c(-6, -4, -4.01, -3.99, -9))
  tr$partial[5] <- TRUE
  s <- sgais:::shift_scores(tr, 5)
  expect_identical(nrow(s), 4L)
  expect_false(any(s$flagged))
  expect_identical(nrow(sgais:::shift_scores(fake_trajectory(c(-6, -4)), 5)), 2L)
  # no whole chunk at all (fewer observations than a chunk): no scores, no shifts
  tr <- fake_trajectory(-6)
  tr$partial <- TRUE
  expect_identical(nrow(sgais:::shift_scores(tr, 5)), 0L)
})

# detect_shifts() on the paper's shifting mixture (14,000 observations, in order and shuffled)
# is a statistical check of inst/validation/checks.R.

test_that("detect_shifts() scores each model of a comparison and checks its arguments", {
  data <- simulate_linear_regression(3000, seed = 4)
  cmp <- compare_models(list(all = linear_regression(y ~ ., data, noise_sd = 1),
                             one = linear_regression(y ~ x1, data, noise_sd = 1)),
                        data, seed = 1, progress = FALSE, chunk_size = 250, method = "sgais")
  s <- detect_shifts(cmp)
  expect_identical(unique(s$scores$model), c("all", "one"))
  expect_identical(nrow(s$shifts), 0L)
  fit <- cmp$fits$all
  expect_error(detect_shifts(fit, threshold = -1), "`threshold` must be a positive", class = "sgais_error")
  # (an AIS fit of 20 particles moving once a step: the error is for any AIS fit)
  expect_error(detect_shifts(ais(cmp$fits$all$model, particles = 20, max_rounds = 1, seed = 1,
                                 progress = FALSE)),
               "only SGAIS makes", class = "sgais_error_argument")
  expect_error(detect_shifts(1), "a comparison from compare_models", class = "sgais_error")
  bad <- detect_shifts(fit)
  bad$shifts <- NULL
  expect_error(print(bad), "not a valid sgais_shifts", class = "sgais_error_corrupt")
})

test_that("a restart's steps are not scored as a chunk's effort", {
  n <- seq(500, 15000, by = 500)
  tr <- data.frame(n = n, log_predictive_per_obs = rep(c(-1.00, -1.02, -0.98), 10),
                   annealing_steps = 2L, restarts = 0L, partial = FALSE)
  # a periodic restart: the whole shuffled run's 300 steps in one row, the chunk predicted as
  # well as the others
  tr$annealing_steps[10] <- 300L
  tr$restarts[10] <- 1L
  s <- sgais:::shift_scores(tr, 5)
  expect_false(any(s$flagged))
  expect_true(is.na(s$effort[10]))
  # the same steps without the restart mark are a shift of effort
  tr$restarts[10] <- 0L
  s <- sgais:::shift_scores(tr, 5)
  expect_identical(which(s$flagged), 10L)
  expect_identical(s$signal[10], "effort")
})

test_that("a restart's correction of the estimate is scored as surprise only after a shift", {
  n <- seq(500, 15000, by = 500)
  x <- -1 + 0.02 * sin(2.3 * seq_along(n)) # chunk-to-chunk noise of about 0.02
  tr <- data.frame(n = n, log_predictive_per_obs = x, annealing_steps = 2L, restarts = 0L,
                   shift_restarts = 0L, partial = FALSE)
  # a periodic restart that lowers the estimate by 340 nats (0.68 a point of its chunk): the
  # sampler's correction (measured on the paper's shifting stream shuffled, 3 components, at
  # 16,000 points), not the data's surprise
  tr$log_predictive_per_obs[10] <- -1.68
  tr$annealing_steps[10] <- 300L
  tr$restarts[10] <- 1L
  s <- sgais:::shift_scores(tr, 5)
  expect_false(any(s$flagged))
  expect_true(is.na(s$surprise[10]) && is.na(s$score[10]))
  expect_identical(s$log_predictive_per_obs[10], -1.68)
  # the chunks after it are scored against a baseline without it
  expect_equal(s$baseline_log_predictive_per_obs[11], stats::median(x[2:9]))
  # a restart whose chunk the particles predicted far worse than the one before is a shift
  tr$shift_restarts[10] <- 1L
  s <- sgais:::shift_scores(tr, 5)
  expect_identical(which(s$flagged), 10L)
  expect_identical(s$signal[10], "surprise")
  # a periodic restart at the second chunk is the third's baseline: there is no other
  tr$restarts[2] <- 1L
  tr$log_predictive_per_obs[3] <- -1.68
  expect_identical(which(sgais:::shift_scores(tr, 5)$flagged), c(3L, 10L))
})
