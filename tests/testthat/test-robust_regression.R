# Robust regression: Student-t errors with fixed df and scale sigma, theta = (coefficients,
# log sigma), coefficients N(0, prior_sd^2), sigma half-normal(scale_prior).

robust_data <- function(n = 200, seed = 41) {
  data <- simulate_linear_regression(n, dim = 2, noise_sd = 0.5, seed = seed)
  data$y <- data$y + withr::with_seed(seed, 0.5 * stats::rt(n, df = 3)) # heavier tails
  data
}

# An independent R version: the t density from dt(), the priors from dnorm(), the half-normal
# as 2 dnorm(sigma) and the log-Jacobian log sigma of theta = log sigma.
ref_robust <- function(theta, a, y, df, prior_sd, scale_prior) {
  p <- ncol(a)
  sigma <- exp(theta[p + 1])
  r <- y - drop(a %*% theta[1:p])
  list(log_lik = sum(stats::dt(r / sigma, df, log = TRUE) - log(sigma)),
       log_prior = sum(stats::dnorm(theta[1:p], 0, prior_sd, log = TRUE)) + log(2) +
         stats::dnorm(sigma, 0, scale_prior, log = TRUE) + log(sigma))
}

test_that("the C log-likelihood, prior and gradients match R", {
  test_tags("memcheck")
  data <- robust_data(50)
  a <- cbind(1, as.matrix(data[, 1:2]))
  model <- robust_regression(y ~ ., data, df = 3.5, prior_sd = 2, scale_prior = 0.7)
  rows <- 6:35
  for (theta in list(c(0.3, -1, 2, log(0.8)), c(5, 0, -3, -4), c(0, 0, 0, 3))) {
    ev <- sgais:::model_evaluate(model, theta, start = 5, n = 30)
    ref <- ref_robust(theta, a[rows, ], data$y[rows], 3.5, 2, 0.7)
    expect_equal(ev$log_lik, ref$log_lik, tolerance = 1e-12)
    expect_equal(ev$log_prior, ref$log_prior, tolerance = 1e-12)
    # the score of the t: (nu + 1) r / (nu sigma^2 + r^2) a_i, and in log sigma
    # (nu + 1) r^2 / (nu sigma^2 + r^2) - 1
    r <- data$y[rows] - drop(a[rows, ] %*% theta[1:3])
    w <- 4.5 / (3.5 * exp(2 * theta[4]) + r^2)
    expect_equal(ev$grad_log_lik, unname(c(crossprod(a[rows, ], w * r), sum(w * r^2 - 1))),
                 tolerance = 1e-12)
  }
  # finite differences, at prior draws for Cauchy to nearly normal errors and at chosen points
  # (five-point differences with the check's step of 1e-3 are accurate while a step moves the
  # residuals little against sigma: not so with sigma = 0.01 or covariates of 1e3)
  for (df in c(1, 3.5, 30)) {
    model <- robust_regression(y ~ ., data, df = df, prior_sd = 2, scale_prior = 0.7)
    expect_lt(max(check_gradients(model, n = 5, seed = 1)$rel_error), 1e-6)
  }
  points <- rbind(c(5, -4, 3, 1), c(0, 0, 0, 4), c(0.1, 0.2, 0.3, -2))
  expect_lt(max(check_gradients(model, theta = points)$rel_error), 1e-6)
})

test_that("the prior is a proper density of (theta, log sigma) and its draws follow it", {
  model <- robust_regression(y ~ 1, robust_data(20), prior_sd = 1.5, scale_prior = 0.4)
  lp <- function(b, t) sgais:::model_evaluate(model, c(b, t))$log_prior
  inner <- function(t) vapply(t, function(ti) {
    stats::integrate(function(b) exp(vapply(b, lp, 0, t = ti)), -Inf, Inf)$value
  }, 0)
  expect_equal(stats::integrate(inner, -30, 5)$value, 1, tolerance = 1e-5)

  model <- robust_regression(y ~ ., robust_data(20), prior_sd = 3, scale_prior = 0.5)
  draws <- withr::with_seed(1, sgais:::model_prior_draw(model, 4000))
  expect_equal(dim(draws), c(4L, 4000L))
  expect_gt(stats::ks.test(draws[2, ] / 3, "pnorm")$p.value, 1e-3)
  # sigma / 0.5 is the absolute value of a standard normal
  expect_gt(stats::ks.test(exp(draws[4, ]) / 0.5, function(q) 2 * stats::pnorm(q) - 1)$p.value, 1e-3)
})

# The reference for the estimators, location_scale() and quadrature_log_evidence(), is in
# helper-robust.R (shared with inst/validation/quick.R).

test_that("the quadrature reference is itself right", {
  # with df = 1e8 the errors are normal to about 1e-8 and the intercept integrates out: y | sigma
  # ~ N(0, sigma^2 I + prior_sd^2 11'), whose density Sherman-Morrison gives; against a 1-D
  # integral over sigma of that density times the half-normal prior
  y <- location_scale()$y[1:30]
  n <- length(y)
  log_marginal <- function(s) {
    q <- (sum(y^2) - 4 * sum(y)^2 / (s^2 + 4 * n)) / s^2
    -0.5 * (n * log(2 * pi) + n * log(s^2) + log1p(4 * n / s^2) + q) + log(2) +
      stats::dnorm(s, 0, 1.5, log = TRUE)
  }
  top <- stats::optimize(log_marginal, c(0.01, 10), maximum = TRUE)$objective
  one_d <- log(stats::integrate(function(s) exp(log_marginal(s) - top), 0, Inf,
                                rel.tol = 1e-10)$value) + top
  expect_equal(quadrature_log_evidence(y, 1e8, 2, 1.5), one_d, tolerance = 1e-7)
})

# Tolerances from replicate runs, seeds 1-10, on location_scale() with df 4, prior_sd 2,
# scale_prior 1.5 (reference log Z = -677.240): error log Z - reference, mean / sd in nats,
#   sgais(batch_size = 50)  -0.067 / 0.245  (mini-batches after 200 observations, 0.04 s a run)
#   ais()                   +0.050 / 0.137  (0.08 s)
#   nested_sampling()       -0.095 / 0.251  (0.13 s; its own sqrt(H / M) is 0.25)
# Each estimate must lie within its mean +/- 4 sd of the reference (about +/- 1 nat, which a
# wrong Jacobian or normalising constant exceeds), and each pair within the difference of their
# means + 4 combined sd (expect_agree(), helper-reference.R). The tests use seed 11, outside the
# replicates. (SGAIS is given mini-batches of 50: with the default 500, every observation of so
# small a data set is in its exact phase and it is AIS with 100 particles.)
test_that("SGAIS, AIS and nested sampling recover the evidence of a location-scale t model", {
  test_tags("slow")
  model <- robust_regression(y ~ 1, location_scale(), df = 4, prior_sd = 2, scale_prior = 1.5)
  reference <- quadrature_log_evidence(location_scale()$y, 4, 2, 1.5)
  expect_equal(reference, -677.23998, tolerance = 1e-5 / 677)
  z <- c(
    sgais = log_evidence(quiet_sgais(model, seed = 11, batch_size = 50)),
    ais = log_evidence(quietly(ais(model, seed = 11, progress = FALSE))),
    ns = log_evidence(quietly(nested_sampling(model, seed = 11, progress = FALSE)))
  )
  expect_lt(abs(z[["sgais"]] - reference - -0.067), 4 * 0.245)
  expect_lt(abs(z[["ais"]] - reference - 0.050), 4 * 0.137)
  expect_lt(abs(z[["ns"]] - reference - -0.095), 4 * 0.251)
  expect_agree(z[["sgais"]], z[["ais"]], -0.067, 0.050, 0.245, 0.137)
  expect_agree(z[["sgais"]], z[["ns"]], -0.067, -0.095, 0.245, 0.251)
  expect_agree(z[["ais"]], z[["ns"]], 0.050, -0.095, 0.137, 0.251)
})

test_that("new rows get the data of the same rows in the model, and fits continue exactly", {
  data <- robust_data(600)
  model <- robust_regression(y ~ ., data, prior = "paper")
  pieces <- list(data[1:1, ], data[2:300, ], data[301:600, ])
  bound <- Reduce(function(a, b) Map(function(x, y) if (is.matrix(x)) cbind(x, y) else c(x, y), a, b),
                  lapply(pieces, function(rows) model_data(model, rows)))
  expect_identical(bound, model$data)
  x <- as.matrix(data[1:2])
  mx <- robust_regression(x = x, y = data$y, prior = "paper")
  expect_identical(mx$data, model$data)
  expect_identical(model_data(mx, list(x = x[5:9, ], y = data$y[5:9])),
                   model_data(model, data[5:9, ]))
  whole <- quiet_sgais(model, seed = 4, chunk_size = 100)
  part <- quiet_sgais(robust_regression(y ~ ., data[1:250, ], prior = "paper"), seed = 4, chunk_size = 100)
  more <- quietly(sgais(part, data[251:600, ], progress = FALSE))
  expect_identical(more$model$data, whole$model$data)
  expect_identical(more$log_evidence, whole$log_evidence)
  expect_identical(more$state$particles, whole$state$particles)
})

test_that("the model says what it is and has no closed-form evidence", {
  model <- robust_regression(y ~ ., robust_data(30), df = 5, prior_sd = 2, scale_prior = 0.5)
  expect_s3_class(model, c("sgais_robust_regression", "sgais_model"), exact = TRUE)
  expect_identical(model$parameter_names, c("(Intercept)", "x1", "x2", "log_sigma"))
  expect_identical(model$hyper, list(df = 5, prior_sd = 2, scale_prior = 0.5))
  expect_identical(robust_regression(y ~ ., robust_data(30), prior = "paper")$hyper,
                   list(df = 4, prior_sd = 1, scale_prior = 1))
  expect_output(print(model), "Student-t errors")
  expect_output(print(model), "t\\(df = 5\\)")
  expect_output(print(model), "sigma ~ half-normal\\(sd = 0.5\\)")
  expect_error(exact_log_evidence(model), "has no closed-form evidence", class = "sgais_error")
})

test_that("bad arguments give classed errors that name them", {
  data <- robust_data(20)
  expect_error(robust_regression(y ~ ., data, df = 0), "`df` must be a positive finite number, not 0",
               class = "sgais_error")
  expect_error(robust_regression(y ~ ., data, df = Inf), "`df` must be a positive", class = "sgais_error")
  expect_error(robust_regression(y ~ ., data, df = "4"), "`df` must be a positive", class = "sgais_error")
  expect_error(robust_regression(y ~ ., data, prior_sd = -1), "`prior_sd` must be a positive",
               class = "sgais_error")
  expect_error(robust_regression(y ~ ., data, scale_prior = NA), "`scale_prior` must be a positive",
               class = "sgais_error")
  expect_error(robust_regression(y ~ ., data, scale_prior = c(1, 2)), "`scale_prior` must be a positive",
               class = "sgais_error")
  bad <- data; bad$y[4] <- NA
  expect_error(robust_regression(y ~ ., bad), "response `y` contains a non-finite value.*observation 4",
               class = "sgais_error_non_finite")
  expect_error(robust_regression(x = data[1:2], y = as.character(data$y)), "`y` must be numeric",
               class = "sgais_error")
  expect_error(robust_regression(), "Give either `formula` and `data` or `x` and `y`",
               class = "sgais_error")
  # the C constructor re-checks what it is given
  model <- robust_regression(y ~ ., data)
  model$hyper$df <- -1
  expect_error(sgais:::model_evaluate(model, numeric(4)), "`df` must be positive",
               class = "sgais_error_input")
  model <- robust_regression(y ~ ., data)
  model$hyper$scale_prior <- 0
  expect_error(sgais:::model_evaluate(model, numeric(4)), "`scale_prior` must be positive",
               class = "sgais_error_input")
})
