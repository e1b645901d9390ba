# audit_evidence(): the online estimate against the same data shuffled (paper Section 7.2).

audit_fit <- function() {
  data <- simulate_linear_regression(2000, dim = 2, seed = 5)
  quiet_sgais(linear_regression(y ~ ., data, noise_sd = 1), seed = 1)
}

test_that("on a stationary stream the audit agrees, at the default checkpoints, reproducibly", {
  fit <- audit_fit()
  a <- expect_silent(audit_evidence(fit, seed = 2, progress = FALSE))
  expect_s3_class(a, "sgais_audit")
  expect_equal(a$n, c(500, 1000, 2000))
  expect_equal(names(a), c("n", "log_evidence", "se", "shuffled", "shuffled_se", "difference",
                           "bound", "agree", "seconds"))
  expect_true(all(a$agree))
  expect_equal(a$log_evidence, fit$trajectory$log_evidence[match(a$n, fit$trajectory$n)])
  expect_equal(a$difference, a$log_evidence - a$shuffled)
  expect_equal(a$bound, pmax(3, 3 * sqrt(a$se^2 + a$shuffled_se^2)))
  # the shuffled runs are runs of the same model on the same rows: within the bound of the exact
  expect_lt(max(abs(a$shuffled - exact_log_evidence(fit$model, n = a$n))), 3)
  b <- audit_evidence(fit, seed = 2, progress = FALSE)
  expect_identical(b$shuffled, a$shuffled)
  expect_same_after_set_seed(function() {
    audit_evidence(fit, at = 1000, progress = FALSE)$shuffled
  })
  expect_output(print(a), "3 of 3 checkpoints agree")
})

test_that("a disagreement warns with both numbers", {
  fit <- audit_fit()
  # an online estimate 40 nats off from 1,000 observations on, as after a missed shift
  late <- fit$trajectory$n >= 1000
  fit$trajectory$log_evidence[late] <- fit$trajectory$log_evidence[late] - 40
  fit$log_evidence <- fit$log_evidence - 40
  expect_warning(a <- audit_evidence(fit, seed = 2, progress = FALSE),
                 "disagrees with the same data shuffled at 2 checkpoints: n = 1,000: .* in order",
                 class = "sgais_warning_audit")
  expect_equal(a$agree, c(TRUE, FALSE, FALSE))
  expect_equal(a$difference[2:3], c(-40, -40), tolerance = 0.1)
  expect_warning(audit_evidence(fit, tolerance = 100, seed = 2, progress = FALSE), NA)
})

test_that("comparisons are audited model by model, and bad arguments are classed errors", {
  data <- simulate_linear_regression(1000, dim = 2, seed = 6)
  cmp <- quietly(compare_models(list(one = y ~ x1, two = y ~ x1 + x2), data, family = "gaussian",
                                seed = 1, progress = FALSE, method = "sgais"))
  a <- audit_evidence(cmp, at = 1000, seed = 3, progress = FALSE)
  expect_equal(a$model, c("one", "two"))
  expect_true(all(a$agree))
  fit <- audit_fit()
  expect_error(audit_evidence(fit, at = 1234), "`at` must be points of the fit's trajectory",
               class = "sgais_error")
  expect_error(audit_evidence(fit, tolerance = -1), "`tolerance`", class = "sgais_error")
  expect_error(audit_evidence(fit, seed = "a"), "`seed`", class = "sgais_error")
  ns <- nested_sampling(fit$model, seed = 1, progress = FALSE)
  expect_error(audit_evidence(ns), "do not take the data in order", class = "sgais_error")
})
