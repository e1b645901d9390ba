# Logistic-regression data: covariates x1, x2 (standard normal), a factor f and y ~ Bernoulli.
logistic_data <- function(n, seed) {
  withr::with_seed(seed, {
    x1 <- rnorm(n)
    x2 <- rnorm(n)
    f <- factor(sample(c("a", "b", "c"), n, TRUE))
    y <- rbinom(n, 1, plogis(-0.5 + 1.2 * x1 - 0.7 * x2 + 0.4 * (f == "b")))
  })
  data.frame(x1 = x1, x2 = x2, f = f, y = y)
}

# An independent R version of the log-likelihood and its gradient (a the design, y 0/1).
ref_logistic <- function(theta, a, y) {
  eta <- drop(a %*% theta)
  list(log_lik = sum(stats::dbinom(y, 1, stats::plogis(eta), log = TRUE)),
       grad = unname(drop(crossprod(a, y - stats::plogis(eta)))))
}

test_that("the C log-likelihood, prior and gradients match R", {
  test_tags("memcheck")
  data <- logistic_data(60, 1)
  model <- logistic_regression(y ~ x1 + x2, data, prior_sd = 1.7)
  a <- cbind(1, as.matrix(data[, c("x1", "x2")]))
  theta <- c(0.3, -1, 2)
  ev <- sgais:::model_evaluate(model, theta, start = 10, n = 40)
  ref <- ref_logistic(theta, a[11:50, ], data$y[11:50])
  expect_equal(ev$log_lik, ref$log_lik)
  expect_equal(ev$grad_log_lik, ref$grad)
  expect_equal(ev$log_prior, sum(stats::dnorm(theta, sd = 1.7, log = TRUE)))
  expect_equal(ev$grad_log_prior, -theta / 1.7^2)
})

test_that("the log-likelihood is stable and exact for linear predictors up to 1e4", {
  # eta = theta * x with x = +/- 1e4 and +/- 1: every sign of eta against every response
  x <- c(-1e4, -1e4, 1e4, 1e4, -1, 1, 0)
  y <- c(0, 1, 0, 1, 1, 0, 1)
  model <- logistic_regression(x = x, y = y)
  ev <- sgais:::model_evaluate(model, c(0, 1))
  # log p = -1e4 where the response has the improbable sign, 0 (to double precision) where not
  expect_equal(ev$log_lik, -2e4 + 2 * log(stats::plogis(-1)) + log(0.5), tolerance = 1e-15)
  expect_equal(ev$log_lik, sum(stats::plogis(ifelse(y == 1, x, -x), log.p = TRUE)))
  # d/d eta = y - plogis(eta): -1 or +1 at the improbable sign, 0 where certain
  expect_equal(ev$grad_log_lik, c(sum(y - stats::plogis(x)), sum(x * (y - stats::plogis(x)))))
  expect_true(all(is.finite(unlist(sgais:::model_evaluate(model, c(3, -2))))))
})

test_that("gradients pass the finite-difference check, also for large covariates", {
  data <- logistic_data(300, 2)
  check <- check_gradients(logistic_regression(y ~ x1 + x2 + f, data), n = 3, seed = 1)
  expect_lt(max(check$rel_error), 1e-6)
  data$x1 <- data$x1 * 100 # predictors in the hundreds: saturated probabilities
  check <- check_gradients(logistic_regression(y ~ x1 + x2, data, prior = "paper"), n = 3, seed = 2)
  expect_lt(max(check$rel_error), 1e-6)
})

test_that("it is a two-class softmax regression with the first class's coefficients at zero", {
  # an independent C implementation of the same likelihood (src/softmax_regression.c)
  data <- logistic_data(80, 3)
  data$label <- factor(c("no", "yes")[data$y + 1])
  logistic <- logistic_regression(label ~ x1 + x2, data)
  softmax <- softmax_regression(label ~ x1 + x2, data)
  theta <- c(0.2, -0.4, 1, -0.3, 0.9, 0.1) # class "no" then class "yes"
  lg <- sgais:::model_evaluate(logistic, theta[4:6] - theta[1:3])
  sm <- sgais:::model_evaluate(softmax, theta)
  expect_equal(lg$log_lik, sm$log_lik)
  expect_equal(lg$grad_log_lik, sm$grad_log_lik[4:6])
})

test_that("prior draws follow the prior", {
  model <- logistic_regression(y ~ x1 + x2, logistic_data(50, 4), prior = "paper")
  draws <- withr::with_seed(1, sgais:::model_prior_draw(model, 4000))
  expect_equal(dim(draws), c(3L, 4000L))
  # the default prior sd 2.5; the sd of a sample sd of 4000 normals is 2.5 / sqrt(8000) = 0.028
  expect_equal(apply(draws, 1, sd), rep(2.5, 3), tolerance = 0.05)
})

test_that("formula and matrix interfaces build the same model from any kind of response", {
  data <- logistic_data(40, 5)
  m1 <- logistic_regression(y ~ x1 + x2, data)
  m2 <- logistic_regression(x = as.matrix(data[, c("x1", "x2")]), y = data$y)
  expect_identical(m1$data, m2$data)
  expect_identical(m1$parameter_names, c("(Intercept)", "x1", "x2"))
  expect_identical(m1$data$y, as.double(data$y))
  expect_identical(nobs(m1), 40L)
  # logical, integer and factor responses give the same 0/1 data
  x <- as.matrix(data[, c("x1", "x2")])
  expect_identical(logistic_regression(x = x, y = data$y == 1)$data, m1$data)
  expect_identical(logistic_regression(x = x, y = as.integer(data$y))$data, m1$data)
  labels <- factor(c("no", "yes")[data$y + 1])
  m3 <- logistic_regression(x = x, y = labels)
  expect_identical(m3$data, m1$data)
  expect_identical(m3$spec$response_levels, c("no", "yes"))
  # the second level is the success, as in glm(), whatever the labels
  m4 <- logistic_regression(x = x, y = factor(labels, levels = c("yes", "no")))
  expect_identical(m4$data$y, 1 - m1$data$y)
  # a response with one class only has an evidence too
  expect_identical(logistic_regression(x = x, y = numeric(40))$data$y, numeric(40))
  # a formula without intercept has none; factors become dummy columns
  expect_identical(logistic_regression(y ~ x1 - 1, data)$parameter_names, "x1")
  expect_identical(logistic_regression(y ~ f, data)$parameter_names, c("(Intercept)", "fb", "fc"))
})

test_that("new rows are coded as the rows the model was built from", {
  data <- logistic_data(60, 6)
  data$label <- factor(c("no", "yes")[data$y + 1])
  at <- c(2L, 18L, 19L, 41L) # pieces of 1, 16, 1, 22 and 20 rows
  model <- logistic_regression(label ~ x1 + f, data)
  expect_identical(bind_model_data(model, cut_rows(data, at)), model$data)
  # the labels as characters, or a factor with the levels in another order
  rows <- data[5:30, ]
  expected <- model_data(model, rows)
  expect_identical(expected$y, as.double(rows$label == "yes"))
  rows$label <- as.character(rows$label)
  expect_identical(model_data(model, rows), expected)
  rows$label <- factor(rows$label, levels = c("yes", "no"))
  expect_identical(model_data(model, rows), expected)
  rows$label <- as.character(rows$label)
  rows$label[3] <- "maybe"
  err <- expect_error(model_data(model, rows), "the label \"maybe\" that the model was not built with \\(it knows \"no\", \"yes\"\\)",
                      class = "sgais_error_unseen_class")
  expect_s3_class(err, "sgais_error_data_mismatch")
  expect_identical(err$class_label, "maybe")
  # a 0/1 model does not take labels
  model <- logistic_regression(y ~ x1, data)
  rows <- data[1:5, ]
  rows$y <- factor(rows$y)
  expect_error(model_data(model, rows), "is a factor, but the model was built with a 0/1",
               class = "sgais_error_data_mismatch")
  # matrix interface
  x <- as.matrix(data[, c("x1", "x2")])
  model <- logistic_regression(x = x, y = data$y == 1)
  expect_identical(bind_model_data(model, cut_rows(list(x = x, y = data$y == 1), at)), model$data)
  # a fit continued on new rows has the data of all of them
  model <- logistic_regression(label ~ x1 + f, data[1:40, ], prior = "paper")
  fit <- sgais(model, seed = 1, progress = FALSE)
  more <- sgais(fit, data[41:60, ], progress = FALSE)
  expect_identical(more$model$data, logistic_regression(label ~ x1 + f, data, prior = "paper")$data)
})

test_that("the model prints what it is", {
  data <- logistic_data(30, 7)
  expect_output(print(logistic_regression(y ~ x1, data)), "Bayesian logistic regression")
  data$label <- factor(c("no", "yes")[data$y + 1])
  model <- logistic_regression(label ~ x1, data, prior_sd = 1.5)
  expect_output(print(model), "observations: 30")
  expect_output(print(model), "parameters:   2 \\(\\(Intercept\\), x1\\)")
  expect_output(print(model), "label ~ Bernoulli\\(plogis\\(a'theta\\)\\)")
  expect_output(print(model), "success:      \"yes\" \\(\"no\" is failure\\)")
  expect_output(print(model), "N\\(0, sd = 1.5\\)")
  expect_output(expect_invisible(print(model)), "Bayesian logistic regression")
})

test_that("bad responses and data give errors that name the argument", {
  data <- logistic_data(30, 8)
  x <- as.matrix(data[, c("x1", "x2")])
  expect_error(logistic_regression(x = x, y = c(2, data$y[-1])),
               "`y` must be 0 or 1 \\(or logical, or a two-level factor\\); it has 2 at observation 1",
               class = "sgais_error")
  expect_error(logistic_regression(x = x, y = data$y - 0.5), "`y` must be 0 or 1.*-0.5 at observation 1",
               class = "sgais_error")
  bad <- data; bad$y[4] <- NA
  expect_error(logistic_regression(y ~ x1, bad),
               "response `y` contains a missing or infinite value.*observation 4",
               class = "sgais_error_non_finite")
  expect_error(logistic_regression(x = x, y = c(data$y[-1], Inf)), "`y` contains a missing or infinite value",
               class = "sgais_error")
  expect_error(logistic_regression(x = x, y = data$f),
               "`y` is a factor with 3 levels \\(\"a\", \"b\", \"c\"\\); logistic regression needs two.*droplevels.*softmax_regression",
               class = "sgais_error")
  expect_error(logistic_regression(y ~ x1, transform(data, y = factor(y, levels = 0:2))),
               "response `y` is a factor with 3 levels", class = "sgais_error")
  expect_error(logistic_regression(x = x, y = factor(rep("a", 30))), "factor with 1 level \\(\"a\"\\)",
               class = "sgais_error")
  expect_error(logistic_regression(x = x, y = rep(c("a", "b"), 15)),
               "`y` must be 0/1 numbers, logical, or a factor with two levels, not a character vector.*factor\\(\\)",
               class = "sgais_error")
  expect_error(logistic_regression(x = x, y = as.list(data$y)), "`y` must be a vector", class = "sgais_error")
  bad <- data; bad$x1[2] <- NaN
  expect_error(logistic_regression(y ~ x1, bad), "`data` contains non-finite.*`x1` at row 2",
               class = "sgais_error_non_finite")
  expect_error(logistic_regression(x = x, y = data$y[-1]), "`x` has 30 rows but `y` has 29",
               class = "sgais_error")
  expect_error(logistic_regression(y ~ x1, data, prior_sd = 0), "`prior_sd` must be a positive finite number",
               class = "sgais_error")
  expect_error(logistic_regression(), "Give either `formula` and `data` or `x` and `y`", class = "sgais_error")
  expect_error(exact_log_evidence(logistic_regression(y ~ x1, data)), "no closed-form evidence",
               class = "sgais_error")
  # a corrupt object is caught by the C constructor
  model <- logistic_regression(y ~ x1, data)
  model$data$y[3] <- 0.5
  expect_error(sgais:::model_evaluate(model, c(0, 0)), "response is not 0 or 1 at observation 3",
               class = "sgais_error_input")
})

# The reference: the evidence of a 2-parameter model (intercept, slope; prior sd 2.5) on 150
# observations by quadrature in R (helper-glm.R), checked against itself on a grid twice as fine
# and a range 20% wider.
#
# Tolerances, from replicate runs with seeds 1-20 on this data (error = estimate - reference,
# mean / sd over the 20 seeds):
#   ais() (default settings)                               -0.052 / 0.166
#   nested_sampling() (default settings)                   -0.029 / 0.206
#   sgais(batch_size = 25, exact_until = 50): mini-batches -0.114 / 0.190
# (sgais() with its default settings runs AIS's exact phase on 150 observations, so it equals
# ais(); the mini-batch setting exercises the mini-batch path.) Each estimate, from seed 21
# outside the replicates, must be within 4 sds of the reference plus the mean error: 0.66 to
# 0.82 nats, where a prior sd of 6.25 (the variance) instead of 2.5 moves the evidence by -1.75
# nats and one of sqrt(2) 2.5 by -0.64 (computed with the same quadrature).
test_that("SGAIS, AIS and nested sampling agree with a quadrature of the evidence", {
  data <- withr::with_seed(1, {
    x <- rnorm(150)
    data.frame(x = x, y = rbinom(150, 1, plogis(-0.5 + 1.2 * x)))
  })
  log_lik <- function(b0, b1) {
    eta <- outer(data$x, b1) + b0
    colSums(stats::dbinom(data$y, 1, stats::plogis(eta), log = TRUE))
  }
  mle <- stats::glm(y ~ x, stats::binomial, data)
  centre <- stats::coef(mle)
  se <- sqrt(diag(stats::vcov(mle)))
  reference <- grid_log_evidence(log_lik, centre, 10 * se, 61, 2.5)
  expect_equal(grid_log_evidence(log_lik, centre, 10 * se, 121, 2.5), reference, tolerance = 1e-10)
  expect_equal(grid_log_evidence(log_lik, centre, 12 * se, 73, 2.5), reference, tolerance = 1e-10)

  model <- logistic_regression(y ~ x, data)
  expect_near_reference(log_evidence(ais(model, seed = 21, progress = FALSE)), reference, -0.052, 0.166)
  expect_near_reference(log_evidence(nested_sampling(model, seed = 21, progress = FALSE)),
                        reference, -0.029, 0.206)
  fit <- sgais(model, batch_size = 25, exact_until = 50, seed = 21, progress = FALSE)
  expect_gt(nrow(as.data.frame(fit)), 2) # chunks of 25 after the exact phase
  expect_near_reference(log_evidence(fit), reference, -0.114, 0.190)
})
