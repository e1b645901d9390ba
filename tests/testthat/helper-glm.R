# Shared fixtures for the logistic- and Poisson-regression tests.

# An independent reference evidence for a model with an intercept `b0` and one slope `b1`, each
# N(0, prior_sd^2) a priori: the midpoint rule on a `points` x `points` grid over
# centre +/- halfwidth, summed in the log (log-sum-exp). `log_lik(b0, b1)` is written in R by the
# test (dbinom, dpois), for one b0 and a vector of b1. The posterior is smooth and decays like a
# Gaussian, so the rule converges spectrally once the grid resolves it: centred at the maximum
# likelihood estimate with a half-width of 10 standard errors, 61 points per axis already agree
# with 241 to 1e-10 on the tests' data.
grid_log_evidence <- function(log_lik, centre, halfwidth, points, prior_sd) {
  b0 <- seq(centre[1] - halfwidth[1], centre[1] + halfwidth[1], length.out = points)
  b1 <- seq(centre[2] - halfwidth[2], centre[2] + halfwidth[2], length.out = points)
  lp <- vapply(b0, function(a) log_lik(a, b1), numeric(points)) # b1 along rows, b0 along columns
  lp <- lp + outer(stats::dnorm(b1, sd = prior_sd, log = TRUE),
                   stats::dnorm(b0, sd = prior_sd, log = TRUE), "+")
  m <- max(lp)
  m + log(sum(exp(lp - m))) + log(b0[2] - b0[1]) + log(b1[2] - b1[1])
}

# An estimate agrees with the reference when its error, less the mean error measured over
# replicate seeds (`bias`), is within 4 of their sds (`sd`).
expect_near_reference <- function(estimate, reference, bias, sd) {
  expect_lt(abs(estimate - reference - bias), 4 * sd)
}

# model_data() of each piece of new rows, bound back together into one data list, as
# model_add_rows() binds them.
bind_model_data <- function(model, pieces) {
  Reduce(sgais:::data_bind, lapply(pieces, function(rows) model_data(model, rows)))
}

# The rows of a data frame (or the elements of a list of equally long vectors and matrices)
# cut before the rows `at`.
cut_rows <- function(data, at) {
  n <- if (is.data.frame(data)) nrow(data) else NROW(data[[1]])
  ends <- c(at - 1L, n)
  starts <- c(1L, at)
  lapply(seq_along(starts), function(i) {
    rows <- seq.int(starts[i], ends[i])
    if (is.data.frame(data)) return(data[rows, , drop = FALSE])
    lapply(data, function(x) if (is.null(dim(x))) x[rows] else x[rows, , drop = FALSE])
  })
}

# The FlyMC tests' model (test-kernels.R, inst/validation/calibrate-kernels.R): logistic
# regression on an intercept and one standard normal covariate, n observations with
# P(y = 1) = plogis(-0.5 + 1.2 x1), simulated with `seed`; and its evidence by the grid rule.
flymc_model <- function(n = 1000, seed = 4) {
  data <- withr::with_seed(seed, {
    x1 <- stats::rnorm(n)
    data.frame(x1 = x1, y = stats::rbinom(n, 1, stats::plogis(-0.5 + 1.2 * x1)))
  })
  logistic_regression(y ~ x1, data)
}
flymc_reference <- function(model) {
  x1 <- model$data$xt[2, ]
  y <- model$data$y
  fit <- stats::glm(y ~ x1, family = stats::binomial())
  log_lik <- function(b0, b1) {
    vapply(b1, function(b) sum(stats::plogis(ifelse(y == 1, 1, -1) * (b0 + b * x1),
                                             log.p = TRUE)), 0)
  }
  grid_log_evidence(log_lik, stats::coef(fit), 10 * sqrt(diag(stats::vcov(fit))), 61,
                    model$hyper$prior_sd)
}
