# Importance sampling from the Laplace approximation (R/importance_sampling.R).

test_that("importance sampling recovers exact evidences within its standard error", {
  d <- simulate_linear_regression(3000, seed = 11)
  for (model in list(linear_regression(y ~ ., d,
                                       noise_sd = 1), linear_regression(y ~ ., d, noise_sd = NULL))) {
    fit <- importance_sampling(model, seed = 1, progress = FALSE)
    expect_s3_class(fit, c("sgais_is_fit", "sgais_evidence"))
    expect_lt(abs(log_evidence(fit) - exact_log_evidence(model)), 3 * fit$log_evidence_se)
    expect_gt(fit$ess, 200)
    expect_lt(fit$pareto_k, 0.5)
    expect_lt(fit$log_evidence_se, 0.1)
  }
  # a GLM with a random intercept, one parameter (the sd known): against integrate() over it of
  # the model's own collapsed likelihood
  g <- withr::with_seed(2, data.frame(x = rnorm(300), g = sample(letters[1:12], 300, TRUE)))
  g$y <- withr::with_seed(3, rbinom(300, 1, plogis(0.4 + rnorm(12)[match(g$g, letters)])))
  m <- logistic_regression(y ~ 1 + (1 | g), g, prior = "paper", group_sd = 0.8)
  ll <- function(b) vapply(b, function(v) sgais:::model_evaluate(m, v)$log_lik, numeric(1))
  peak <- ll(0.4)
  z <- integrate(function(b) exp(ll(b) - peak) * dnorm(b, 0, 2.5), -3, 4, rel.tol = 1e-10)$value
  fit <- importance_sampling(m, seed = 2, progress = FALSE)
  expect_lt(abs(log_evidence(fit) - (log(z) + peak)), max(3 * fit$log_evidence_se, 0.02))
})

test_that("a seed reproduces a fit, the fit prints, and its draws are posterior draws", {
  model <- linear_regression(y ~ ., simulate_linear_regression(500, seed = 12), noise_sd = 1)
  a <- importance_sampling(model, draws = 200, seed = 5, progress = FALSE)
  b <- importance_sampling(model, draws = 200, seed = 5, progress = FALSE)
  expect_identical(a$log_evidence, b$log_evidence)
  expect_same_after_set_seed(function() {
    importance_sampling(model, draws = 200, progress = FALSE)$state
  })
  out <- format(a)
  expect_match(out[1], "importance sampling")
  expect_true(any(grepl("Pareto k", out)))
  expect_true(any(grepl("SE from the importance weights", out)))
  df <- as.data.frame(a)
  expect_equal(nrow(df), 200L)
  expect_true(all(c("method", "draw", "log_weight", model$parameter_names) %in% names(df)))
  draws <- posterior_samples(a, 400, seed = 1)
  expect_equal(dim(draws), c(400L, model$dim))
  # the draws give the intercept at x = 0, the model samples it at the covariates' means
  expect_lt(max(abs(colMeans(draws) - sgais:::uncentred_draws(model, t(a$mode)))), 0.05)
  p <- ggplot2::ggplot_build(ggplot2::autoplot(a))
  expect_s3_class(p, "ggplot_built")
  expect_equal(nrow(plot_data(a)), 200L)
  expect_error(update(a, simulate_linear_regression(10, seed = 1)),
               class = "sgais_error_not_continuable")
})

# A mixture's posterior has K! relabelled modes, which a proposal about one of them misses: the
# proposal is then the reference distribution of the data's clusters over their relabellings
# (src/model_r.c, ffi_reference_draws). On separated clusters the evidence has a closed form; on
# 2,000 points with 2 to 10 components the estimates were within 0.011 nats of it
# (inst/validation/mixture-clusters.R). One component has one mode: the Laplace proposal.
test_that("importance sampling proposes a mixture's reference distribution, over its modes", {
  d <- appearing_clusters()
  model <- gaussian_mixture(d$y, components = 3)
  fit <- importance_sampling(model, seed = 1, progress = FALSE)
  expect_lt(abs(log_evidence(fit) - separated_log_evidence(d$y, d$z)), 0.05)
  expect_gt(fit$ess, 400)
  expect_identical(fit$settings$preset, "reference")
  expect_null(fit$mode)
  expect_output(print(fit), "proposal:  the reference distribution")
  expect_identical(importance_sampling(model, seed = 1, progress = FALSE)$log_evidence,
                   fit$log_evidence)
  expect_false(identical(importance_sampling(model, seed = 2, progress = FALSE)$log_evidence,
                         fit$log_evidence))
  one <- gaussian_mixture(scale(faithful), components = 1)
  laplace <- importance_sampling(one, seed = 1, progress = FALSE)
  expect_identical(laplace$settings$preset, "laplace")
  expect_lt(abs(log_evidence(laplace) - exact_log_evidence(one)), 0.05)
})

test_that("a posterior the proposal misses is refused or warned about", {
  # more clusters (4, separated) than components (2): no reference to propose from
  set.seed(5)
  y <- cbind(rep(c(0, 12, 0, 12), 20), rep(c(0, 0, 12, 12), 20)) + matrix(rnorm(160), ncol = 2)
  expect_error(importance_sampling(gaussian_mixture(y, components = 2), progress = FALSE),
               "several modes", class = "sgais_error_multimodal")
  # more observations than the clusters are found on (SG_JUMP_POINTS, src/model.h): q0 is
  # refitted on all of them (model.h, ref_refit), so that it is centred on their posterior
  z <- rep(1:4, length.out = 5000)
  big <- cbind(c(0, 12, 0, 12)[z], c(0, 0, 12, 12)[z]) +
    withr::with_seed(6, matrix(rnorm(10000), ncol = 2))
  fit <- importance_sampling(gaussian_mixture(big, components = 4), seed = 1, progress = FALSE)
  expect_lt(abs(log_evidence(fit) - separated_log_evidence(big, z)), 0.05)
  expect_lt(fit$pareto_k, 0.7)
  # one zero count, a wide prior: the posterior's left tail is the prior's, far heavier than
  # the Laplace approximation's normal
  m <- poisson_regression(y ~ 1, data.frame(y = 0), prior = "paper", prior_sd = 100)
  expect_warning(importance_sampling(m, df = Inf, inflation = 1, seed = 1, progress = FALSE),
                 "Pareto k", class = "sgais_warning_unreliable")
  # the tail-shape estimate itself: Pareto tails of shape 1 and 2, and a light tail
  u <- withr::with_seed(1, runif(4000))
  expect_equal(sgais:::pareto_shape(-log(u)), 1, tolerance = 0.15)
  expect_gt(sgais:::pareto_shape(-2 * log(u)), 1.6)
  expect_lt(sgais:::pareto_shape(withr::with_seed(2, rnorm(4000, 0, 0.3))), 0.2)
  # weights equal to rounding: no tail (not NaN, which no check would catch)
  expect_identical(sgais:::pareto_shape(rep(-5, 400)), -Inf)
  expect_identical(sgais:::pareto_shape(-5 + withr::with_seed(3, runif(400, 0, 1e-12))), -Inf)
  model <- linear_regression(y ~ ., simulate_linear_regression(100, seed = 13), noise_sd = 1)
  # too few draws for a tail: no Pareto k, and no error
  few <- importance_sampling(model, draws = 20, seed = 1, progress = FALSE)
  expect_true(is.na(few$pareto_k))
  expect_true(any(grepl("too few draws", format(few))))
  expect_error(importance_sampling(model, draws = 5), "`draws`")
  expect_error(importance_sampling(model, df = 0), "`df`")
  expect_error(importance_sampling(model, inflation = 0.5), "`inflation`")
  expect_error(importance_sampling(model, seed = "a"), "seed")
})
