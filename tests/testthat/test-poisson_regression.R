# Poisson-regression data: covariates x1, x2 (standard normal), a factor f, an exposure t and
# counts y ~ Poisson(t exp(a'theta)).
poisson_data <- function(n, seed) {
  withr::with_seed(seed, {
    x1 <- rnorm(n)
    x2 <- rnorm(n)
    f <- factor(sample(c("a", "b", "c"), n, TRUE))
    t <- runif(n, 0.5, 2)
    y <- rpois(n, t * exp(0.3 + 0.5 * x1 - 0.4 * x2 + 0.3 * (f == "b")))
  })
  data.frame(x1 = x1, x2 = x2, f = f, t = t, y = y)
}

# An independent R version of the log-likelihood and its gradient (a the design, o the offset).
ref_poisson <- function(theta, a, y, o = 0) {
  mu <- exp(o + drop(a %*% theta))
  list(log_lik = sum(stats::dpois(y, mu, log = TRUE)), grad = unname(drop(crossprod(a, y - mu))))
}

test_that("the C log-likelihood, prior and gradients match R, with and without an offset", {
  test_tags("memcheck")
  data <- poisson_data(60, 1)
  a <- cbind(1, as.matrix(data[, c("x1", "x2")]))
  theta <- c(0.3, -0.5, 0.8)
  rows <- 11:50
  model <- poisson_regression(y ~ x1 + x2 + offset(log(t)), data, prior_sd = 1.7)
  ev <- sgais:::model_evaluate(model, theta, start = 10, n = 40)
  ref <- ref_poisson(theta, a[rows, ], data$y[rows], log(data$t[rows]))
  expect_equal(ev$log_lik, ref$log_lik)
  expect_equal(ev$grad_log_lik, ref$grad)
  expect_equal(ev$log_prior, sum(stats::dnorm(theta, sd = 1.7, log = TRUE)))
  expect_equal(ev$grad_log_prior, -theta / 1.7^2)
  ev <- sgais:::model_evaluate(poisson_regression(y ~ x1 + x2, data, prior = "paper"), theta, start = 10, n = 40)
  ref <- ref_poisson(theta, a[rows, ], data$y[rows])
  expect_equal(ev$log_lik, ref$log_lik)
  expect_equal(ev$grad_log_lik, ref$grad)
})

test_that("log(y!) is right for small and large counts (table and lgamma())", {
  y <- c(0, 1, 2, 254, 255, 256, 257, 1000, 123456)
  model <- poisson_regression(x = numeric(length(y)), y = y, prior = "paper")
  for (b0 in c(-2, 0, log(300), 10)) {
    ev <- sgais:::model_evaluate(model, c(b0, 0))
    expect_equal(ev$log_lik, sum(stats::dpois(y, exp(b0), log = TRUE)), tolerance = 1e-13)
  }
})

test_that("gradients pass the finite-difference check, also for large covariates", {
  data <- poisson_data(300, 2)
  model <- poisson_regression(y ~ x1 + x2 + f + offset(log(t)), data)
  expect_lt(max(check_gradients(model, n = 3, seed = 1)$rel_error), 1e-6)
  # the prior's draws reach linear predictors of about +/- 40 here: rates up to e^40
  data$x1 <- data$x1 * 5
  model <- poisson_regression(y ~ x1 + x2, data)
  expect_lt(max(check_gradients(model, n = 3, seed = 2)$rel_error), 1e-6)
})

test_that("prior draws follow the prior", {
  model <- poisson_regression(y ~ x1 + x2, poisson_data(50, 4), prior = "paper")
  draws <- withr::with_seed(1, sgais:::model_prior_draw(model, 4000))
  expect_equal(dim(draws), c(3L, 4000L))
  # the default prior sd 2.5; the sd of a sample sd of 4000 normals is 2.5 / sqrt(8000) = 0.028
  expect_equal(apply(draws, 1, sd), rep(2.5, 3), tolerance = 0.05)
})

test_that("formula and matrix interfaces build the same model, offsets included", {
  data <- poisson_data(40, 5)
  x <- as.matrix(data[, c("x1", "x2")])
  m1 <- poisson_regression(y ~ x1 + x2 + offset(log(t)), data)
  m2 <- poisson_regression(x = x, y = data$y, offset = log(data$t))
  expect_identical(m1$data, m2$data)
  expect_identical(m1$data$offset, log(data$t))
  expect_identical(m1$parameter_names, c("(Intercept)", "x1", "x2"))
  expect_true(m1$spec$offset)
  expect_identical(nobs(m1), 40L)
  # without an offset it is zero
  m3 <- poisson_regression(y ~ x1 + x2, data)
  expect_identical(m3$data, poisson_regression(x = x, y = data$y)$data)
  expect_identical(m3$data$offset, numeric(40))
  expect_false(m3$spec$offset)
  # several offset() terms add up; integer counts are stored as doubles
  m4 <- poisson_regression(y ~ x1 + offset(log(t)) + offset(x2), transform(data, y = as.integer(y)))
  expect_identical(m4$data$offset, log(data$t) + data$x2)
  expect_identical(m4$data$y, as.double(data$y))
})

test_that("offsets survive model_data() for new rows", {
  data <- poisson_data(60, 6)
  at <- c(2L, 18L, 19L, 41L) # pieces of 1, 16, 1, 22 and 20 rows
  model <- poisson_regression(y ~ x1 + f + offset(log(t)), data)
  expect_identical(bind_model_data(model, cut_rows(data, at)), model$data)
  expect_identical(model_data(model, data[7, ])$offset, log(data$t[7]))
  # matrix interface: the offset is an element of new_data
  x <- as.matrix(data[, c("x1", "x2")])
  model <- poisson_regression(x = x, y = data$y, offset = log(data$t))
  pieces <- cut_rows(list(x = x, y = data$y, offset = log(data$t)), at)
  expect_identical(bind_model_data(model, pieces), model$data)
  err <- expect_error(model_data(model, list(x = x, y = data$y)),
                      "`new_data` has no `offset`, but the model was built with one",
                      class = "sgais_error_missing_column")
  expect_s3_class(err, "sgais_error_data_mismatch")
  expect_error(model_data(model, list(x = x, y = data$y, offset = log(data$t)[-1])),
               "`new_data\\$offset` has 59 elements, but there are 60 observations", class = "sgais_error")
  expect_error(model_data(poisson_regression(x = x, y = data$y), list(x = x, y = data$y, offset = numeric(60))),
               "`new_data` has an `offset`, but the model was built without one",
               class = "sgais_error_extra_column")
  # a formula offset computed from all the rows at once cannot be given to new rows
  model <- poisson_regression(y ~ x1 + offset(log(t / mean(t))), data)
  expect_match(model$spec$row_by_row, "offset depends on all the rows")
  expect_error(model_data(model, data[1:5, ]), "offset depends on all the rows",
               class = "sgais_error_not_row_by_row")
  # a fit continued on new rows has the data of all of them, offsets included
  model <- poisson_regression(y ~ x1 + f + offset(log(t)), data[1:40, ], prior = "paper")
  fit <- sgais(model, seed = 1, progress = FALSE)
  more <- sgais(fit, data[41:60, ], progress = FALSE)
  expect_identical(more$model$data, poisson_regression(y ~ x1 + f + offset(log(t)), data, prior = "paper")$data)
})

test_that("the model prints what it is", {
  data <- poisson_data(30, 7)
  model <- poisson_regression(y ~ x1 + offset(log(t)), data, prior_sd = 1.5)
  expect_output(print(model), "Bayesian Poisson regression")
  expect_output(print(model), "observations: 30")
  expect_output(print(model), "parameters:   2 \\(\\(Intercept\\), x1\\)")
  expect_output(print(model), "y ~ Poisson\\(exp\\(offset \\+ a'theta\\)\\)")
  expect_output(print(model), "offset:       offset\\(log\\(t\\)\\)")
  expect_output(print(model), "N\\(0, sd = 1.5\\)")
  expect_output(print(poisson_regression(y ~ x1, data)), "y ~ Poisson\\(exp\\(a'theta\\)\\)")
  expect_output(expect_invisible(print(model)), "Bayesian Poisson regression")
})

test_that("bad counts, offsets and data give errors that name the argument", {
  data <- poisson_data(30, 8)
  x <- as.matrix(data[, c("x1", "x2")])
  expect_error(poisson_regression(x = x, y = c(-1, data$y[-1])),
               "`y` must be counts \\(whole numbers >= 0\\); it has -1 at observation 1", class = "sgais_error")
  expect_error(poisson_regression(x = x, y = c(data$y[-30], 2.5)),
               "`y` must be counts \\(whole numbers >= 0\\); it has 2.5 at observation 30", class = "sgais_error")
  bad <- data; bad$y[4] <- NA
  expect_error(poisson_regression(y ~ x1, bad), "response `y` contains a missing or infinite value.*observation 4",
               class = "sgais_error_non_finite")
  expect_error(poisson_regression(x = x, y = c(data$y[-1], Inf)), "`y` contains a missing or infinite value",
               class = "sgais_error")
  expect_error(poisson_regression(x = x, y = factor(data$y)), "`y` must be counts \\(whole numbers >= 0\\), not a factor",
               class = "sgais_error")
  expect_error(poisson_regression(x = x, y = data$y > 1), "`y` must be counts.*not a logical vector",
               class = "sgais_error")
  expect_error(poisson_regression(y ~ x1, transform(data, y = -y)), "response `y` must be counts",
               class = "sgais_error")
  # offsets
  # with a formula, glm's `offset` is an expression in the columns: an offset() term
  expect_identical(poisson_regression(y ~ x1, data, offset = log(t))$data,
                   poisson_regression(y ~ x1 + offset(log(t)), data)$data)
  expect_error(poisson_regression(y ~ x1, data, offset = log(data$t)),
               "an expression in the columns of `data`", class = "sgais_error_offset")
  expect_error(poisson_regression(x = x, y = data$y, offset = log(data$t)[-1]),
               "`offset` has 29 elements, but there are 30 observations", class = "sgais_error")
  expect_error(poisson_regression(x = x, y = data$y, offset = c(NA, log(data$t)[-1])),
               "`offset` contains a non-finite value.*observation 1", class = "sgais_error_non_finite")
  expect_error(poisson_regression(x = x, y = data$y, offset = as.character(data$t)),
               "`offset` must be a numeric vector", class = "sgais_error")
  bad <- data; bad$t[5] <- 0
  expect_error(poisson_regression(y ~ x1 + offset(log(t)), bad),
               "The offset of `data` contains a non-finite value.*log\\(0\\) is -Inf.*observation 5",
               class = "sgais_error_non_finite")
  bad <- data; bad$x1[2] <- NaN
  expect_error(poisson_regression(y ~ x1, bad), "`data` contains non-finite.*`x1` at row 2",
               class = "sgais_error_non_finite")
  expect_error(poisson_regression(x = x, y = data$y[-1]), "`x` has 30 rows but `y` has 29", class = "sgais_error")
  expect_error(poisson_regression(y ~ x1, data, prior_sd = -1), "`prior_sd` must be a positive finite number",
               class = "sgais_error")
  expect_error(poisson_regression(), "Give either `formula` and `data` or `x` and `y`", class = "sgais_error")
  expect_error(exact_log_evidence(poisson_regression(y ~ x1, data)), "no closed-form evidence",
               class = "sgais_error")
  # a corrupt object is caught by the C constructor
  model <- poisson_regression(y ~ x1, data)
  model$data$y[3] <- 1.5
  expect_error(sgais:::model_evaluate(model, c(0, 0)), "count is not a whole number >= 0 at observation 3",
               class = "sgais_error_input")
  model <- poisson_regression(y ~ x1, data)
  model$data$offset[2] <- -Inf
  expect_error(sgais:::model_evaluate(model, c(0, 0)), "offset is not finite at observation 2",
               class = "sgais_error_input")
})

# The reference: the evidence of a 2-parameter model (intercept, slope; prior sd 2.5) with an
# exposure offset on 150 observations by quadrature in R (helper-glm.R), checked against itself
# on a grid twice as fine and a range 20% wider. The -log(y!) terms are in dpois(), so this is the
# evidence of the counts.
#
# Tolerances, from replicate runs with seeds 1-20 on this data (error = estimate - reference,
# mean / sd over the 20 seeds):
#   ais() (default settings)                               -0.006 / 0.175
#   nested_sampling() (default settings)                   +0.057 / 0.254
#   sgais(batch_size = 25, exact_until = 50): mini-batches -0.184 / 0.257
# (sgais() with its default settings runs AIS's exact phase on 150 observations, so it equals
# ais(); the mini-batch setting exercises the mini-batch path.) Each estimate, from seed 21
# outside the replicates, must be within 4 sds of the reference plus the mean error: 0.70 to
# 1.03 nats, where a lost offset or log(y!) term moves the evidence by tens of nats.
test_that("SGAIS, AIS and nested sampling agree with a quadrature of the evidence", {
  test_tags("slow")
  data <- withr::with_seed(2, {
    x <- rnorm(150)
    t <- runif(150, 0.5, 2)
    data.frame(x = x, t = t, y = rpois(150, t * exp(0.3 + 0.5 * x)))
  })
  log_lik <- function(b0, b1) {
    mu <- data$t * exp(outer(data$x, b1) + b0)
    colSums(stats::dpois(data$y, mu, log = TRUE))
  }
  mle <- stats::glm(y ~ x + offset(log(t)), stats::poisson, data)
  centre <- stats::coef(mle)
  se <- sqrt(diag(stats::vcov(mle)))
  reference <- grid_log_evidence(log_lik, centre, 10 * se, 61, 2.5)
  expect_equal(grid_log_evidence(log_lik, centre, 10 * se, 121, 2.5), reference, tolerance = 1e-10)
  expect_equal(grid_log_evidence(log_lik, centre, 12 * se, 73, 2.5), reference, tolerance = 1e-10)

  model <- poisson_regression(y ~ x + offset(log(t)), data)
  expect_near_reference(log_evidence(ais(model, seed = 21, progress = FALSE)), reference, -0.006, 0.175)
  expect_near_reference(log_evidence(nested_sampling(model, seed = 21, progress = FALSE)),
                        reference, 0.057, 0.254)
  fit <- sgais(model, batch_size = 25, exact_until = 50, seed = 21, progress = FALSE)
  expect_gt(nrow(as.data.frame(fit)), 2) # chunks of 25 after the exact phase
  expect_near_reference(log_evidence(fit), reference, -0.184, 0.257)
})
