test_that("exact_evidence() is the closed form as a fit, with its trajectory", {
  test_tags("memcheck")
  d <- simulate_linear_regression(1200, seed = 3)
  model <- linear_regression(y ~ ., d)
  fit <- exact_evidence(model, n = c(500, 1000), seed = 1)
  expect_s3_class(fit, c("sgais_exact_fit", "sgais_evidence"), exact = TRUE)
  expect_identical(fit$method, "closed form")
  # summed by prefix: the closed form of all the rows to rounding
  expect_equal(fit$log_evidence, exact_log_evidence(model), tolerance = 1e-14)
  expect_identical(fit$log_evidence_se, 0)
  tr <- as.data.frame(fit)
  expect_identical(names(tr)[1:8], sgais:::contract_columns)
  expect_identical(tr$n, c(500L, 1000L, 1200L))
  expect_identical(tr$log_evidence, exact_log_evidence(model, n = c(500, 1000, 1200)))
  expect_equal(sum(tr$log_predictive), fit$log_evidence)
  expect_identical(log_evidence(fit), fit$log_evidence)
  expect_output(print(fit), "<closed-form evidence>")
  expect_output(print(fit), "exact")
  # posterior draws by importance sampling, the same every time; intercept at x = 0
  a <- posterior_samples(fit, 200, seed = 2)
  expect_identical(a, posterior_samples(fit, 200, seed = 2))
  ols <- stats::coef(stats::lm(y ~ ., d))
  expect_lt(max(abs(colMeans(a)[names(ols)] - ols)), 0.02)
  expect_length(predictive_density(fit, d[1:3, ]), 3L)
  p <- plot_data(fit)
  expect_identical(p$n, tr$n)
  expect_s3_class(ggplot2::autoplot(fit), "ggplot")
})

test_that("a model without a closed form is refused with a classed error", {
  d <- simulate_linear_regression(100, seed = 1)
  expect_error(exact_evidence(robust_regression(y ~ x1, d)), "no closed-form evidence",
               class = "sgais_error_no_closed_form")
  expect_error(exact_evidence(linear_regression(y ~ x1, d), n = 0), "`n` must hold",
               class = "sgais_error")
  expect_error(exact_evidence(1), "`model` must be an sgais model", class = "sgais_error")
  expect_error(exact_evidence(linear_regression(y ~ x1, d), seed = "a"), "`seed`",
               class = "sgais_error")
})

test_that("posterior draws give the intercept at x = 0 where the model centres its covariates", {
  d <- simulate_linear_regression(300, dim = 2, seed = 8)
  d$x1 <- d$x1 + 10
  fit <- importance_sampling(linear_regression(y ~ x1 + x2, d), seed = 1)
  draws <- posterior_samples(fit, 50, seed = 1)
  p <- sgais:::weighted_particles(fit)
  rows <- withr::with_seed(1, sample.int(nrow(p$theta), 50, TRUE, exp(p$logw - max(p$logw))))
  centred <- p$theta[rows, ]
  center <- fit$model$spec$center
  expect_equal(unname(draws[, "(Intercept)"]),
               unname(centred[, "(Intercept)"] - centred[, 1:3] %*% center)[, 1])
  expect_identical(unname(draws[, -1]), unname(centred[, -1]))
  expect_lt(abs(mean(draws[, "(Intercept)"]) - stats::coef(stats::lm(y ~ x1 + x2, d))[[1]]), 0.2)
  expect_output(print(fit$model), "\\(Intercept, centred\\): N\\(")
})
