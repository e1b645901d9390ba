test_that("exact_log_evidence matches a dense computation", {
  data <- simulate_linear_regression(60, dim = 3, seed = 11)
  a <- cbind(1, as.matrix(data[, 1:3]))
  for (sds in list(c(1, 1), c(0.5, 2), c(3, 0.1))) {
    model <- linear_regression(y ~ ., data, noise_sd = sds[1], prior_sd = sds[2])
    expect_equal(exact_log_evidence(model), dense_log_evidence(a, data$y, sds[1], sds[2]),
                 tolerance = 1e-10)
  }
})

test_that("exact_log_evidence gives every requested prefix, in the order asked", {
  data <- simulate_linear_regression(80, dim = 2, seed = 12)
  model <- linear_regression(y ~ ., data, noise_sd = 0.7, prior = "paper")
  a <- cbind(1, as.matrix(data[, 1:2]))
  n <- c(50, 1, 80, 7, 50)
  expected <- vapply(n, function(k) {
    dense_log_evidence(a[seq_len(k), , drop = FALSE], data$y[seq_len(k)], 0.7)
  }, numeric(1))
  expect_equal(exact_log_evidence(model, n = n), expected, tolerance = 1e-10)
  expect_error(exact_log_evidence(model, n = 81), "`n` must hold whole numbers between 1 and 80")
  expect_error(exact_log_evidence(model, n = c(2, NA)), "`n` must hold whole numbers")
  expect_error(exact_log_evidence(model, n = 2.5), "`n` must hold whole numbers")
})

test_that("the C log-likelihood, prior and gradients match R", {
  test_tags("memcheck")
  data <- simulate_linear_regression(40, dim = 3, seed = 13)
  model <- linear_regression(y ~ ., data, noise_sd = 0.8, prior_sd = 1.5)
  a <- cbind(1, as.matrix(data[, 1:3]))
  theta <- c(0.3, -1, 2, 0.5)
  ev <- sgais:::model_evaluate(model, theta, start = 5, n = 20)
  rows <- 6:25
  r <- data$y[rows] - drop(a[rows, ] %*% theta)
  expect_equal(ev$log_lik, sum(stats::dnorm(r, sd = 0.8, log = TRUE)))
  expect_equal(ev$grad_log_lik, unname(drop(crossprod(a[rows, ], r))) / 0.8^2)
  expect_equal(ev$log_prior, sum(stats::dnorm(theta, sd = 1.5, log = TRUE)))
  expect_equal(ev$grad_log_prior, -theta / 1.5^2)
})

test_that("the one-pass gradient difference of a mini-batch matches two gradients", {
  test_tags("memcheck")
  for (dim in c(3, 10)) { # 4 and 11 design columns: the loop fixed to p, and the general one
    data <- simulate_linear_regression(60, dim = dim, seed = 21)
    models <- list(linear_regression(y ~ ., data, noise_sd = 0.7),
                   linear_regression(y ~ ., data),
                   linear_regression(y ~ ., data, prior = g_prior()))
    for (model in models) {
      theta <- with_seed(3, stats::rnorm(model$dim, sd = 0.5))
      a <- theta + with_seed(4, stats::rnorm(model$dim, sd = 0.1))
      idx <- with_seed(5, sample.int(60, 45, replace = TRUE))
      grad <- function(t, i) sgais:::model_evaluate(model, t, start = i - 1L, n = 1L)$grad_log_lik
      want <- Reduce(`+`, lapply(idx, function(i) grad(theta, i) - grad(a, i)))
      got <- .Call(sgais:::C_ffi_model_grad_diff, model, theta, a, as.integer(idx))
      expect_equal(got, want, tolerance = 1e-10)
    }
  }
})

test_that("gradients pass the finite-difference check, also for large covariates", {
  data <- simulate_linear_regression(300, seed = 16)
  check <- check_gradients(linear_regression(y ~ ., data, noise_sd = 1), n = 3, seed = 1)
  expect_lt(max(check$rel_error), 1e-5)
  data[1:5] <- data[1:5] * 1e3
  check <- check_gradients(linear_regression(y ~ ., data, noise_sd = 0.1), n = 3, seed = 2)
  expect_lt(max(check$rel_error), 1e-5)
})

test_that("prior draws follow the prior", {
  model <- small_model(10, prior_sd = 2)
  draws <- withr::with_seed(1, sgais:::model_prior_draw(model, 4000))
  expect_equal(dim(draws), c(6L, 4000L))
  # sd of a sample sd of 4000 normals is about 2 / sqrt(8000) = 0.022
  expect_equal(apply(draws, 1, sd), rep(2, 6), tolerance = 0.05)
})

test_that("formula and matrix interfaces build the same model", {
  data <- simulate_linear_regression(30, dim = 2, seed = 14)
  m1 <- linear_regression(y ~ x1 + x2, data, noise_sd = 1)
  m2 <- linear_regression(x = as.matrix(data[, c("x1", "x2")]), y = data$y, noise_sd = 1)
  m3 <- linear_regression(x = data[, c("x1", "x2")], y = data$y, noise_sd = 1)
  expect_identical(m1$data, m2$data)
  expect_identical(m2$data, m3$data)
  expect_identical(m1$parameter_names, c("(Intercept)", "x1", "x2"))
  expect_identical(nobs(m1), 30L)
  # without column names the covariates are called x1, x2, ...
  m4 <- linear_regression(x = unname(as.matrix(data[, 1:2])), y = data$y, noise_sd = 1)
  expect_identical(m4$parameter_names, c("(Intercept)", "x1", "x2"))
  # a formula without intercept has none
  expect_identical(linear_regression(y ~ x1 - 1, data, noise_sd = 1)$parameter_names, "x1")
})

test_that("the model prints what it is", {
  model <- small_model(100, noise_sd = 0.5)
  expect_output(print(model), "Bayesian linear regression")
  expect_output(print(model), "observations: 100")
  expect_output(print(model), "parameters:   6 \\(\\(Intercept\\), x1")
  expect_output(print(model), "sd = 0.5")
  expect_output(expect_invisible(print(model)))
})

test_that("simulate_linear_regression is the paper's design and prefix-consistent", {
  big <- simulate_linear_regression(200, seed = 5)
  small <- simulate_linear_regression(50, seed = 5)
  expect_equal(names(big), c(paste0("x", 1:5), "y"))
  expect_equal(small, big[1:50, ], ignore_attr = "row.names")
  expect_equal(attr(big, "parameters"), attr(small, "parameters"))
  expect_length(attr(big, "parameters"), 6)
  # the caller's random stream is left alone
  set.seed(99); u1 <- runif(1)
  set.seed(99); simulate_linear_regression(10, seed = 1); u2 <- runif(1)
  expect_identical(u1, u2)
  expect_error(simulate_linear_regression(0), "`n` must be a whole number >= 1")
  expect_error(simulate_linear_regression(10, dim = 0), "`dim` must be a whole number >= 1")
  expect_error(simulate_linear_regression(10, seed = "a"), "`seed` must be NULL or a whole number")
})

test_that("bad data give errors that name the argument", {
  data <- simulate_linear_regression(20, dim = 2, seed = 15)
  x <- as.matrix(data[, 1:2])
  bad <- data; bad$y[3] <- NA
  expect_error(linear_regression(y ~ ., bad,
                                 noise_sd = 1), "response `y` contains a non-finite value.*observation 3")
  bad <- data; bad$x2[4] <- Inf
  expect_error(linear_regression(y ~ ., bad,
                                 noise_sd = 1), "`data` contains non-finite.*`x2` at row 4")
  bad <- data; bad$x1[2] <- NaN
  expect_error(linear_regression(y ~ ., bad,
                                 noise_sd = 1), "`data` contains non-finite.*`x1` at row 2")
  expect_error(linear_regression(x = x, y = c(data$y[-1], NA),
                                 noise_sd = 1), "`y` contains a non-finite")
  x_bad <- x; x_bad[5, 1] <- NA
  expect_error(linear_regression(x = x_bad, y = data$y,
                                 noise_sd = 1), "`x` contains non-finite.*row 5")
  expect_error(linear_regression(x = x, y = as.character(data$y),
                                 noise_sd = 1), "`y` must be numeric")
  expect_error(linear_regression(x = x, y = factor(data$y),
                                 noise_sd = 1), "`y` must be numeric, not a factor")
  bad <- data; bad$y <- as.character(bad$y)
  expect_error(linear_regression(y ~ ., bad, noise_sd = 1), "response `y` must be numeric")
  expect_error(linear_regression(y ~ ., data[0, ],
                                 noise_sd = 1), "`data` must have at least one row")
  expect_error(linear_regression(x = x[0, ], y = numeric(),
                                 noise_sd = 1), "`x` must have at least one row")
  expect_error(linear_regression(x = x, y = data$y[-1],
                                 noise_sd = 1), "`x` has 20 rows but `y` has 19 elements")
  expect_error(linear_regression(x = data.frame(a = letters[1:20]), y = data$y,
                                 noise_sd = 1), "`x` must have numeric columns only; `a`")
  expect_error(linear_regression(y ~ ., data, noise_sd = 0), "`noise_sd` must be a positive finite number, not 0")
  expect_error(linear_regression(y ~ ., data, noise_sd = -1), "`noise_sd` must be a positive")
  expect_error(linear_regression(y ~ ., data, prior_sd = NA,
                                 noise_sd = 1), "`prior_sd` must be a positive")
  expect_error(linear_regression(y ~ ., data, prior_sd = Inf,
                                 noise_sd = 1), "`prior_sd` must be a positive")
  expect_error(linear_regression(y ~ ., as.matrix(data),
                                 noise_sd = 1), "`data` must be a data frame")
  expect_error(linear_regression("y ~ x1", data, noise_sd = 1), "`formula` must be a formula")
  expect_error(linear_regression(~ x1, data, noise_sd = 1), "`formula` must have a response")
  expect_error(linear_regression(y ~ nothere, data,
                                 noise_sd = 1), "`formula` uses `nothere`, not a column of `data`",
               class = "sgais_error_missing_column")
  expect_error(linear_regression(noise_sd = 1), "Give either `formula` and `data` or `x` and `y`")
  expect_error(linear_regression(y ~ ., data, x = x, y = data$y, noise_sd = 1), "not both")
  expect_error(linear_regression(x = x, noise_sd = 1), "`y` is missing")
  expect_error(exact_log_evidence(list()), "`model` must be an sgais model")
})

test_that("valid but badly scaled covariates are fitted, not refused by a pre-check", {
  d <- simulate_linear_regression(200, seed = 1)
  for (x in list(transform(d, x1 = as.POSIXct("2020-01-01", tz = "UTC") + x1 * 86400),
                 transform(d, x1 = replace(x1, 1, 1e100)))) {
    m <- linear_regression(y ~ x1 + x2, x, noise_sd = 1)
    fit <- quietly(sgais(m, seed = 1, progress = FALSE))
    expect_lt(abs(fit$log_evidence - exact_log_evidence(m)), 3)
  }
})

test_that("under a fixed prior, badly scaled covariates are fitted if doubles can resolve them, else refused", {
  d <- simulate_linear_regression(200, seed = 1)
  # a time in seconds since 1970 under N(0, 1): log-likelihoods near -1e20 at prior draws
  posix <- linear_regression(y ~ x1 + x2, prior = "paper",
                             transform(d, x1 = as.POSIXct("2020-01-01", tz = "UTC") + x1 * 86400),
                               noise_sd = 1)
  fit <- quietly(sgais(posix, seed = 1, progress = FALSE))
  expect_lt(abs(fit$log_evidence - exact_log_evidence(posix)), 3)
  # values near 2^53, or one of 1e100: the posterior is narrower than doubles resolve
  d$b <- as.integer(d$y > 0)
  for (x in list(transform(d, x1 = 2^52 + round(x1 * 1000)), transform(d, x1 = replace(x1, 1, 1e100)))) {
    for (m in list(linear_regression(y ~ x1 + x2, x, prior = "paper", noise_sd = 1),
                   linear_regression(y ~ x1 + x2, x, noise_sd = NULL, prior = "paper"),
                   logistic_regression(b ~ x1 + x2, x, prior = "paper"))) {
      for (estimator in list(sgais, ais, nested_sampling)) {
        expect_error(estimator(m, seed = 1, progress = FALSE), "too badly scaled for this prior",
                     class = "sgais_error_ill_conditioned")
      }
    }
  }
  err <- expect_error(sgais(linear_regression(y ~ x1 + x2, prior = "paper",
                                              transform(d, x1 = 2^52 + round(x1 * 1000)),
                                                noise_sd = 1)),
                      class = "sgais_error_ill_conditioned")
  expect_match(conditionMessage(err), "`exact_log_evidence\\(\\)` gives this model's evidence")
  expect_gt(err$condition_number, 1e26)
})

test_that("glm's weights, subset and na.action: exact frequency weights, selected rows, NA rules", {
  d <- simulate_linear_regression(60, seed = 4)
  d$n <- rep(c(1L, 2L, 0L, 3L), 15)
  expanded <- d[rep(seq_len(nrow(d)), d$n), ]
  w <- linear_regression(y ~ x1 + x2, d, prior = "paper", weights = n, noise_sd = 1)
  plain <- linear_regression(y ~ x1 + x2, expanded, prior = "paper", noise_sd = 1)
  expect_identical(w$n, sum(d$n))
  expect_equal(exact_log_evidence(w), exact_log_evidence(plain), tolerance = 1e-12)
  expect_equal(exact_log_evidence(linear_regression(y ~ x1 + x2, d, prior = "paper",
                                                    weights = "n",
                                                      noise_sd = 1)), exact_log_evidence(plain))
  # the same for a model without a closed form, through the estimators' likelihood
  lw <- logistic_regression(I(y > 0) ~ x1, d, weights = n, prior = "paper")
  lp <- logistic_regression(I(y > 0) ~ x1, expanded, prior = "paper")
  expect_identical(lw$data, lp$data)
  # new rows bring their weights; a continuation applies them
  fit <- quietly(sgais(linear_regression(y ~ x1 + x2, d[1:40, ], prior = "paper", weights = n,
                                         noise_sd = 1),
                       seed = 1, progress = FALSE))
  more <- quietly(sgais(fit, d[41:60, ], progress = FALSE))
  expect_identical(more$n, sum(d$n))
  expect_error(sgais(fit, d[41:60, c("y", "x1", "x2")], progress = FALSE), "weights",
               class = "sgais_error")
  bad <- d
  bad$n[3] <- 1.5
  expect_error(linear_regression(y ~ x1, bad, weights = n, noise_sd = 1), "row 3 has 1.5",
               class = "sgais_error_weights")
  # or a vector, one weight per row (new rows then need a column `(weights)`)
  expect_identical(linear_regression(y ~ x1, d, weights = d$n, noise_sd = 1)$data,
                   linear_regression(y ~ x1, d, weights = n, noise_sd = 1)$data)
  expect_error(linear_regression(y ~ x1, d, weights = d$n[-1], noise_sd = 1), "must name a column",
               class = "sgais_error_argument")
  # subset: an expression in the columns, or a vector
  s1 <- linear_regression(y ~ x1, d, prior = "paper", subset = x2 > 0, noise_sd = 1)
  expect_equal(exact_log_evidence(s1),
               exact_log_evidence(linear_regression(y ~ x1, d[d$x2 > 0, ], prior = "paper",
                                                    noise_sd = 1)))
  expect_identical(linear_regression(y ~ x1, d, subset = 1:10, noise_sd = 1)$n, 10L)
  expect_error(linear_regression(y ~ x1, d, subset = x2 > 100, noise_sd = 1), "selects no rows",
               class = "sgais_error_argument")
  # na.action: omit (also for new rows) or fail; without one missing values stay an error
  na <- d
  na$x1[c(5, 50)] <- NA
  om <- linear_regression(y ~ x1, na[1:40, ], prior = "paper", na.action = na.omit, noise_sd = 1)
  expect_identical(om$n, 39L)
  fit <- quietly(sgais(om, seed = 1, progress = FALSE))
  expect_identical(quietly(sgais(fit, na[41:60, ], progress = FALSE))$n, 58L)
  expect_error(linear_regression(y ~ x1, na, na.action = "na.fail", noise_sd = 1), "first at row 5",
               class = "sgais_error_non_finite")
  expect_error(linear_regression(y ~ x1, na, noise_sd = 1), class = "sgais_error_non_finite")
  expect_error(linear_regression(y ~ x1, d, na.action = function(x) x,
                                 noise_sd = 1), "`na.action` must be",
               class = "sgais_error_argument")
  # family: each family is its own constructor
  expect_error(linear_regression(y ~ x1, d, family = stats::binomial(), noise_sd = 1),
               "for the binomial family use logistic_regression\\(\\)", class = "sgais_error_family")
  expect_error(poisson_regression(y ~ x1, d, family = "gaussian"), "use linear_regression\\(\\)",
               class = "sgais_error_family")
  expect_error(linear_regression(x = as.matrix(d[, "x1"]), y = d$y, weights = n, noise_sd = 1),
               "give `formula` and `data`", class = "sgais_error_argument")
})
