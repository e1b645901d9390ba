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
  test_tags("slow")
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

test_that("binomial counts: a row's log-likelihood is dbinom's, its Bernoulli rows' + lchoose", {
  test_tags("memcheck")
  d <- counts_data(25, 1)
  counts <- logistic_regression(cbind(s, m - s) ~ x, d)
  expanded <- logistic_regression(y ~ x, bernoulli_rows(d, d$s, d$m))
  expect_identical(counts$n, 25L)
  expect_identical(counts$data$trials, as.double(d$m))
  # the default prior is that of the Bernoulli rows: means and sds over the trials
  expect_equal(counts$hyper, expanded$hyper, tolerance = 1e-12)
  expect_equal(counts$spec$center, expanded$spec$center, tolerance = 1e-12)
  a <- cbind(1, d$x - counts$spec$center[2])
  for (theta in list(c(0, 0), c(-0.4, 1.1), c(3, -25))) {
    ev <- sgais:::model_evaluate(counts, theta)
    ex <- sgais:::model_evaluate(expanded, theta)
    eta <- drop(a %*% theta)
    expect_equal(ev$log_lik, ex$log_lik + sum(lchoose(d$m, d$s)), tolerance = 1e-12)
    expect_equal(ev$grad_log_lik, ex$grad_log_lik, tolerance = 1e-10)
    # (dbinom() from plogis(eta), which rounds to 1 for the largest eta; the log form does not)
    expect_equal(ev$log_lik, sum(d$s * stats::plogis(eta, log.p = TRUE) +
                                   (d$m - d$s) * stats::plogis(-eta, log.p = TRUE) +
                                   lchoose(d$m, d$s)), tolerance = 1e-12)
    if (max(abs(eta)) < 30) {
      expect_equal(ev$log_lik, sum(stats::dbinom(d$s, d$m, stats::plogis(eta), log = TRUE)),
                   tolerance = 1e-12)
    }
    expect_equal(ev$grad_log_lik, unname(drop(crossprod(a, d$s - d$m * stats::plogis(eta)))),
                 tolerance = 1e-10)
  }
  # FlyMC's bound, per trial the Bernoulli one: below the likelihood, tight at the anchor
  anchor <- c(-0.3, 0.7)
  for (theta in list(c(0.5, -1), c(-2, 3))) {
    b <- .Call(sgais:::C_ffi_flymc_bound, counts, anchor, theta)
    eta <- drop(a %*% theta)
    expect_true(all(b$gap >= -1e-9))
    expect_equal(b$collapsed, sum(stats::dbinom(d$s, d$m, stats::plogis(eta), log = TRUE) - b$gap),
                 tolerance = 1e-10)
  }
  expect_lt(max(abs(.Call(sgais:::C_ffi_flymc_bound, counts, anchor, anchor)$gap)), 1e-9)
})

test_that("binomial counts: proportions with weights as trials; 0/1 ones' weights repeat rows", {
  d <- counts_data(25, 1)
  counts <- logistic_regression(cbind(s, m - s) ~ x, d)
  # (s / m is NaN where m is 0: a row of no trials is not read)
  expect_identical(logistic_regression(s / m ~ x, d, weights = m)$data, counts$data)
  expect_identical(logistic_regression(s / m ~ x, d, weights = "m")$data, counts$data)
  vector <- logistic_regression(s / m ~ x, d, weights = d$m)
  expect_identical(vector$data, counts$data)
  expect_match(vector$details[["likelihood"]], "Binomial")
  # a row of no trials adds nothing (and is an observation)
  theta <- c(-0.2, 0.9)
  none <- logistic_regression(cbind(s, m - s) ~ x, rbind(d, data.frame(x = 5, m = 0, s = 0)),
                              prior = "paper")
  expect_identical(none$n, 26L)
  expect_equal(sgais:::model_evaluate(none, theta)$log_lik,
               sgais:::model_evaluate(logistic_regression(cbind(s, m - s) ~ x, d, prior = "paper"),
                                      theta)$log_lik)
  # a logical (or factor) 0/1 response with weights: frequency weights, rows repeated, as
  # before; a numeric one: trials, one row each, the same likelihood
  d$w <- rep(1:3, length.out = 25)
  d$b <- d$s > 5
  freq <- logistic_regression(b ~ x, d, weights = w, prior = "paper")
  expect_identical(freq$n, sum(d$w))
  expect_null(freq$data$trials)
  trials <- logistic_regression(as.numeric(b) ~ x, d, weights = w, prior = "paper")
  expect_identical(trials$n, 25L)
  expect_equal(sgais:::model_evaluate(trials, theta)$log_lik,
               sgais:::model_evaluate(freq, theta)$log_lik, tolerance = 1e-12)
  # weights of cbind() repeat its rows
  expect_identical(logistic_regression(cbind(s, m - s) ~ x, d, weights = w)$n, sum(d$w))
})

test_that("binomial counts: importance sampling and SGAIS agree with a quadrature", {
  d <- counts_data(40, 2)
  d <- d[d$m < 300, ]
  log_lik <- function(b0, b1) {
    colSums(stats::dbinom(d$s, d$m, stats::plogis(outer(d$x, b1) + b0), log = TRUE))
  }
  mle <- stats::glm(cbind(s, m - s) ~ x, stats::binomial, d)
  reference <- grid_log_evidence(log_lik, stats::coef(mle), 10 * sqrt(diag(stats::vcov(mle))),
                                 61, 2.5)
  model <- logistic_regression(cbind(s, m - s) ~ x, d, prior = "paper")
  is <- importance_sampling(model, seed = 3)
  expect_lt(abs(log_evidence(is) - reference), 3 * is$log_evidence_se)
  fit <- sgais(model, seed = 3, batch_size = 10, exact_until = 10, progress = FALSE)
  expect_lt(abs(log_evidence(fit) - reference), 3 * fit$log_evidence_se)
})

test_that("binomial counts: bad counts, proportions and trials are classed errors naming the row", {
  d <- counts_data(20, 3)
  over <- d
  over$s[5] <- over$m[5] + 1
  expect_error(logistic_regression(cbind(s, m - s) ~ x, over),
               "whole numbers >= 0 \\(successes, failures\\); row 5 has",
               class = "sgais_error_response")
  half <- d
  half$s[4] <- 1.5
  err <- expect_error(logistic_regression(cbind(s, m - s) ~ x, half), "row 4 has 1.5",
                      class = "sgais_error_response")
  expect_identical(err$row, 4L)
  half$s[4] <- NA
  expect_error(logistic_regression(cbind(s, m - s) ~ x, half), "observation 4",
               class = "sgais_error_non_finite")
  expect_error(logistic_regression(cbind(s, m, m) ~ x, d), "has 3 columns",
               class = "sgais_error_response")
  expect_error(poisson_regression(cbind(s, m) ~ x, d), "logistic_regression\\(\\)'s",
               class = "sgais_error_response")
  # proportions: in [0, 1], times the trials a whole number
  expect_error(logistic_regression(I(s / m + 0.01) ~ x, d, weights = m), "row 1 has",
               class = "sgais_error_response")
  expect_error(logistic_regression(I(2 * s / m) ~ x, d[d$s > d$m / 2, ], weights = m),
               "numbers in \\[0, 1\\]", class = "sgais_error_response")
  expect_error(logistic_regression(s / m ~ x, transform(d, m = m + 0.5), weights = m),
               "whole numbers >= 0 \\(the number of trials\\); row 1 has",
               class = "sgais_error_weights")
  expect_error(logistic_regression(s / m ~ x, d[d$m > 0, ]),
               "must be 0 or 1.*take the number of trials as `weights`", class = "sgais_error")
  # corrupt counts are caught by the checks before C, and by the C constructor
  model <- logistic_regression(cbind(s, m - s) ~ x, d)
  model$data$y[3] <- model$data$trials[3] + 1
  expect_error(sgais(model), "0 <= y <= trials", class = "sgais_error_invalid_model")
  expect_error(sgais:::model_evaluate(model, c(0, 0)), "0 <= successes <= trials at observation 3",
               class = "sgais_error_input")
})

test_that("binomial counts continue, stream and compare as 0/1 rows do", {
  d <- counts_data(60, 4)
  d$f <- factor(rep(c("a", "b"), 30))
  all <- logistic_regression(cbind(s, m - s) ~ x + f, d)
  expect_identical(bind_model_data(all, cut_rows(d, c(11L, 40L))), all$data)
  fit <- sgais(all, batch_size = 10, exact_until = 20, seed = 1, progress = FALSE)
  stream <- sgais_stream(all, d, block_size = 25, batch_size = 10, exact_until = 20, seed = 1,
                         progress = FALSE)
  expect_identical(log_evidence(stream), log_evidence(fit))
  first <- sgais(logistic_regression(cbind(s, m - s) ~ x + f, d[1:30, ]), batch_size = 10,
                 exact_until = 20, seed = 1, progress = FALSE)
  more <- sgais(first, d[31:60, ], progress = FALSE)
  expect_identical(more$model$data$trials, as.double(d$m))
  expect_s3_class(update(first, d[31:60, ], progress = FALSE), "sgais_fit")
  # proportions: new rows bring their trials, in the column the weights named, or `(weights)`
  props <- sgais(logistic_regression(s / m ~ x + f, d[1:30, ], weights = m), seed = 1,
                 progress = FALSE)
  expect_identical(sgais(props, d[31:60, ], progress = FALSE)$model$data, more$model$data)
  vector <- sgais(logistic_regression(s / m ~ x + f, d[1:30, ], weights = d$m[1:30]), seed = 1,
                  progress = FALSE)
  err <- expect_error(sgais(vector, d[31:60, ], progress = FALSE), "column `\\(weights\\)`",
                      class = "sgais_error_missing_column")
  new <- d[31:60, ]
  new[["(weights)"]] <- new$m
  expect_identical(sgais(vector, new, progress = FALSE)$model$data, more$model$data)
  # compare_models() builds counts from formulas with the binomial family
  cmp <- compare_models(list(with_f = cbind(s, m - s) ~ x + f, without = cbind(s, m - s) ~ x), d,
                        family = stats::binomial(), seed = 1, progress = FALSE)
  expect_identical(nrow(as.data.frame(cmp)), 2L)
})
