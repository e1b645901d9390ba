test_that("a model written in R equals the built-in C model: values, gradients, prior", {
  test_tags("memcheck")
  d <- simulate_linear_regression(300, seed = 2)
  builtin <- linear_regression(y ~ ., prior = "paper", data = d, noise_sd = 1)
  custom <- r_linear_regression(d)
  expect_s3_class(custom, c("sgais_custom_model", "sgais_model"))
  expect_equal(custom$parameter_names, builtin$parameter_names)
  expect_equal(nobs(custom), 300L)
  for (seed in 1:3) {
    theta <- withr::with_seed(seed, rnorm(6))
    for (rows in list(c(0L, 300L), c(17L, 50L), c(299L, 1L))) {
      expect_equal(sgais:::model_evaluate(custom, theta, rows[1], rows[2]),
                   sgais:::model_evaluate(builtin, theta, rows[1], rows[2]), tolerance = 1e-12)
    }
  }
  # pointwise log-likelihoods (predictive densities) come in blocks, not row by row
  theta <- matrix(rnorm(12), 6)
  expect_equal(.Call(sgais:::C_ffi_model_pointwise_log_lik, custom, theta),
               .Call(sgais:::C_ffi_model_pointwise_log_lik, builtin, theta), tolerance = 1e-12)
  # prior draws use R's RNG the same way
  expect_identical(withr::with_seed(4, sgais:::model_prior_draw(custom, 5)),
                   withr::with_seed(4, sgais:::model_prior_draw(builtin, 5)))
})

test_that("every estimator gives the built-in model's fit, up to rounding, with the same seed", {
  d <- simulate_linear_regression(500, seed = 3)
  builtin <- linear_regression(y ~ ., prior = "paper", data = d, noise_sd = 1)
  custom <- r_linear_regression(d)
  # the same RNG use; only the order of floating-point sums differs (BLAS in R, a loop in C),
  # so the fits agree to rounding amplified by the run, not bit for bit
  pairs <- list(
    list(paper_sgais(builtin, seed = 1), paper_sgais(custom, seed = 1)),
    list(sgais(builtin, seed = 1, progress = FALSE), sgais(custom, seed = 1, progress = FALSE)),
    list(paper_ais(builtin, seed = 1), paper_ais(custom, seed = 1)),
    list(paper_ns(builtin, seed = 1), paper_ns(custom, seed = 1))
  )
  for (p in pairs) expect_equal(log_evidence(p[[2]]), log_evidence(p[[1]]), tolerance = 1e-6)
  # and is right: the exact value (the default estimate on these data, seeds 1-4: -0.11 to
  # +0.50 nats, SE 0.23 to 0.27)
  expect_lt(abs(log_evidence(pairs[[2]][[2]]) - exact_log_evidence(builtin)), 2)
})

test_that("continuation, streams, comparison, plots and saveRDS work with a model in R", {
  d <- simulate_linear_regression(300, seed = 5)
  custom <- r_linear_regression(d[1:200, ])
  # (20 particles, one move a step: a model in R is slow, and none of this depends on them)
  fit <- quietly(sgais(custom, particles = 20, early_particles = 20, max_rounds = 1, seed = 1,
                       progress = FALSE))
  rows <- cbind(`(Intercept)` = 1, as.matrix(d[201:300, 1:5]), y = d$y[201:300])
  more <- quietly(sgais(fit, new_data = rows, progress = FALSE))
  whole <- quietly(sgais(r_linear_regression(d), particles = 20, early_particles = 20,
                         max_rounds = 1, seed = 1, progress = FALSE))
  expect_identical(log_evidence(more), log_evidence(whole))
  expect_equal(nobs(more$model), 300L)
  # new rows are matched by column name, whatever their order
  expect_identical(log_evidence(quietly(sgais(fit, new_data = rows[, 7:1], progress = FALSE))),
                   log_evidence(more))
  expect_error(sgais(fit, new_data = rows[, -3], progress = FALSE),
               class = "sgais_error_missing_column")
  # comparison along n with another model in R on the same data
  all_rows <- cbind(`(Intercept)` = 1, as.matrix(d[, 1:5]), y = d$y)
  mean_only <- custom_model(
    function(theta, data) dnorm(data[, "y"], theta[1], 1, log = TRUE),
    function(theta, data) sum(data[, "y"] - theta[1]),
    data = all_rows[1:20, ], parameter_names = "mean", label = "mean only"
  )
  cmp <- quietly(compare_models(list(regression = r_linear_regression(d[1:20, ]),
                                     mean = mean_only), all_rows, seed = 1, progress = FALSE,
                                method = "sgais", particles = 20, early_particles = 20,
                                max_rounds = 1))
  expect_s3_class(cmp, "sgais_comparison")
  expect_gt(as.data.frame(cmp)$log_evidence[1], -Inf)
  expect_s3_class(autoplot(whole), "ggplot")
  path <- withr::local_tempfile(fileext = ".rds")
  saveRDS(more, path)
  back <- readRDS(path)
  expect_error(sgais(back, new_data = rows[1:10, ], progress = FALSE),
               class = "sgais_error_untrusted_functions")
  back <- reattach_functions(back, r_linear_regression(d[1:5, ]))
  expect_identical(log_evidence(quietly(sgais(back, new_data = rows[1:10, ], progress = FALSE))),
                   log_evidence(quietly(sgais(more, new_data = rows[1:10, ], progress = FALSE))))
})

test_that("functions stored in a saved fit are not run until the model is given again", {
  marker <- withr::local_tempfile()
  d <- data.frame(y = rnorm(60))
  honest <- function(data) {
    custom_model(function(theta, data) dnorm(data[, "y"], theta, 1, log = TRUE),
                 function(theta, data) sum(data[, "y"] - theta),
                 data = data, parameter_names = "mu", prior = normal_prior(sd = 5))
  }
  # (20 particles, one move a step: which functions run depends on neither)
  fit <- sgais(honest(d[1:40, , drop = FALSE]), seed = 1, particles = 20, early_particles = 20,
               max_rounds = 1, progress = FALSE)
  # the stored likelihood is replaced by one that writes a file, as a crafted .rds could
  crafted <- fit
  crafted$model$functions$log_likelihood <- function(theta, data) {
    file.create(marker)
    dnorm(data[, "y"], theta, 1, log = TRUE)
  }
  path <- withr::local_tempfile(fileext = ".rds")
  saveRDS(crafted, path)
  back <- readRDS(path)
  expect_s3_class(back, "sgais_evidence")
  expect_output(print(back), "custom model")
  new <- d[41:60, , drop = FALSE]
  for (attempt in list(
    function() sgais(back, new, progress = FALSE),
    function() update(back, new, progress = FALSE),
    function() sgais_stream(back, new, progress = FALSE),
    function() predictive_density(back, new),
    function() audit_evidence(back, progress = FALSE),
    function() prior_sensitivity(back)
  )) {
    expect_error(attempt(), class = "sgais_error_untrusted_functions")
  }
  expect_false(file.exists(marker))
  # the model built again in this session takes the stored functions' place
  again <- reattach_functions(back, honest(d[1:2, , drop = FALSE]))
  expect_identical(log_evidence(sgais(again, new, progress = FALSE)),
                   log_evidence(sgais(fit, new, progress = FALSE)))
  expect_false(file.exists(marker))
  other <- suppressWarnings(custom_model(function(theta, data) dnorm(data[, "y"], theta, 1, log = TRUE),
                                         data = d, parameter_names = "m", prior = normal_prior(sd = 5)))
  expect_error(reattach_functions(back, other), class = "sgais_error_data_mismatch")
  expect_error(reattach_functions(back, readRDS(path)$model), "this session")
  expect_error(reattach_functions(sgais(linear_regression(y ~ 1, d, noise_sd = 1), particles = 20,
                                        early_particles = 20, max_rounds = 1, seed = 1,
                                        progress = FALSE),
                                  honest(d)), "holds no R functions")
})

test_that("a likelihood that uses random numbers is refused when the model is built", {
  d <- data.frame(y = rnorm(30))
  expect_error(
    custom_model(function(theta, data) dnorm(data[, "y"], theta + runif(1), 1, log = TRUE),
                 function(theta, data) sum(data[, "y"] - theta), data = d, dim = 1),
    class = "sgais_error_model_random"
  )
  seed <- .Random.seed
  m <- custom_model(function(theta, data) dnorm(data[, "y"], theta, 1, log = TRUE),
                    function(theta, data) sum(data[, "y"] - theta), data = d, dim = 1)
  expect_identical(.Random.seed, seed)
})

test_that("errors in the user's functions are classed, name the function and leave R usable", {
  test_tags("memcheck")
  d <- simulate_linear_regression(200, seed = 1)
  good <- r_linear_regression(d)
  ll <- good$functions$log_likelihood
  gr <- good$functions$gradient
  x <- cbind(`(Intercept)` = 1, as.matrix(d[, 1:5]), y = d$y)
  build <- function(ll, gr) {
    custom_model(ll, gr, data = x, parameter_names = good$parameter_names,
                 prior = normal_prior(sd = 1))
  }
  # caught when the model is built (evaluated once on its first rows)
  expect_error(build(function(theta, data) stop("no such thing"), gr),
               "`log_likelihood` failed: no such thing", class = "sgais_error_model")
  expect_error(build(function(theta, data) ll(theta, data)[-1], gr),
               "`log_likelihood` must return one log-likelihood per row \\(10\\)",
               class = "sgais_error_model")
  expect_error(build(function(theta, data) rep(NA_real_, nrow(data)), gr),
               "`log_likelihood` returned NA or NaN", class = "sgais_error_model")
  expect_error(build(function(theta, data) as.character(ll(theta, data)), gr),
               "returned a character", class = "sgais_error_model")
  expect_error(build(ll, function(theta, data) gr(theta, data)[1:3]),
               "`gradient` must return a gradient of length 6", class = "sgais_error_model")
  expect_error(build(ll, function(theta, data) stop("bad gradient")),
               "`gradient` failed: bad gradient", class = "sgais_error_model")
  # failing only in the middle of a run: the estimators stop with the model's error
  late <- function(theta, data) if (nrow(data) == 500L) stop("late failure") else gr(theta, data)
  big <- r_linear_regression(simulate_linear_regression(3000, seed = 1))
  big$functions$gradient <- function(theta, data) {
    if (nrow(data) == 500L) stop("late failure")
    crossprod(data, data[, 7] - data %*% c(theta, 0))[1:6]
  }
  # (20 particles, one move a step and mini-batches from 500 observations on: where the run
  # fails does not depend on them)
  expect_error(sgais(big, particles = 20, early_particles = 20, exact_until = 500, max_rounds = 1,
                     seed = 1, progress = FALSE),
               "`gradient` failed: late failure", class = "sgais_error_model")
  nan_later <- big
  nan_later$functions$gradient <- function(theta, data) {
    if (nrow(data) == 500L) rep(NaN, 6) else crossprod(data, data[, 7] - data %*% c(theta, 0))[1:6]
  }
  expect_error(sgais(nan_later, particles = 20, early_particles = 20, exact_until = 500,
                     max_rounds = 1, seed = 1, progress = FALSE),
               "`gradient` returned NA or NaN", class = "sgais_error_model")
  # R is usable afterwards, and the next error that is not the user's is not blamed on them
  expect_equal(1 + 1, 2)
  expect_error(sgais:::model_evaluate(good, numeric(3)), "`theta` must be a numeric vector")
  expect_no_error(quietly(sgais(good, particles = 20, early_particles = 20, max_rounds = 1,
                                seed = 1, progress = FALSE)))
})

test_that("without a gradient, numerical gradients are used, with a warning", {
  d <- simulate_linear_regression(200, seed = 1)
  expect_warning(model <- r_linear_regression(d, gradient = FALSE),
                 class = "sgais_warning_numerical_gradient")
  check <- check_gradients(model, seed = 1)
  # central differences with h = 1e-5: truncation ~ h^2 f''' and rounding ~ 1e-16 |f| / h
  expect_lt(max(check$rel_error), 1e-5)
  exact <- sgais:::model_evaluate(linear_regression(y ~ ., prior = "paper", data = d,
                                                    noise_sd = 1), rep(0.3, 6))
  expect_equal(sgais:::model_evaluate(model, rep(0.3, 6))$grad_log_lik, exact$grad_log_lik,
               tolerance = 1e-7)
})

test_that("check_gradients() finds a wrong gradient of a model in R", {
  d <- simulate_linear_regression(200, seed = 1)
  good <- r_linear_regression(d)
  expect_lt(max(check_gradients(good, seed = 1)$rel_error), 1e-8)
  wrong <- good
  wrong$functions$gradient <- function(theta, data) 2 * crossprod(data, data[, 7] - data %*% c(theta, 0))[1:6]
  expect_gt(max(check_gradients(wrong, seed = 1)$rel_error), 0.1)
})

test_that("custom_model() checks its arguments", {
  d <- simulate_linear_regression(50, seed = 1)
  ll <- function(theta, data) rep(0, nrow(data))
  gr <- function(theta, data) numeric(length(theta))
  expect_error(custom_model("f", gr, data = d, dim = 2), "`log_likelihood` must be a function",
               class = "sgais_error")
  expect_error(custom_model(function(theta) 0, gr, data = d, dim = 2),
               "`log_likelihood` must take 2 arguments", class = "sgais_error")
  expect_error(custom_model(ll, gr, dim = 2), "`data` must be given", class = "sgais_error")
  expect_error(custom_model(ll, gr, data = d), "`parameter_names`.*`dim`", class = "sgais_error")
  expect_error(custom_model(ll, gr, data = d, dim = 2, parameter_names = c("a", "b", "c")),
               "differs from the number", class = "sgais_error")
  expect_error(custom_model(ll, gr, data = d, parameter_names = c("a", "a")),
               "distinct", class = "sgais_error")
  expect_error(custom_model(ll, gr, data = data.frame(g = factor(c("a", "b")), y = 1:2), dim = 1),
               "column `g` is a factor", class = "sgais_error")
  expect_error(custom_model(ll, gr, data = data.frame(y = c(1, NA)), dim = 1),
               "non-finite|missing", class = "sgais_error")
  expect_error(custom_model(ll, gr, data = d, dim = 2, prior = "normal"),
               "`prior` must be a prior", class = "sgais_error")
  expect_error(custom_model(ll, gr, data = d, dim = 2, prior = normal_prior(dim = 3)),
               "covers", class = "sgais_error")
  m <- custom_model(ll, gr, data = d, dim = 2, label = "flat")
  expect_equal(m$parameter_names, c("theta1", "theta2"))
  expect_output(print(m), "<sgais model: flat>")
  expect_output(print(m), "theta1, theta2: N\\(0, sd = 1\\)")
  # a vector of data is one column
  expect_equal(nobs(custom_model(ll, gr, data = d$y, dim = 1)), 50L)
  expect_error(custom_model(ll, gr, data = stats::setNames(d[1:2], c("y", "y")), dim = 1),
               "`y` is given more than once", class = "sgais_error_argument")
})

test_that("a likelihood must return numbers: logicals are refused, integers read as doubles", {
  d <- data.frame(y = c(-1, 0.5, 2))
  gr <- function(theta, data) 0
  expect_error(custom_model(function(theta, data) data[, "y"] > 0, gr, data = d, dim = 1),
               "`log_likelihood` must return .* it returned a logical", class = "sgais_error_model")
  integer_ll <- custom_model(function(theta, data) rep(-1L, nrow(data)), gr, data = d, dim = 1)
  expect_equal(log_evidence(quietly(sgais(integer_ll, particles = 10, seed = 1,
                                          progress = FALSE))), -3)
})

test_that("a prior given as R functions equals the same prior from building blocks", {
  d <- simulate_linear_regression(100, seed = 1)
  blocks <- r_linear_regression(d, prior = normal_prior(sd = 2))
  functions <- r_linear_regression(d, prior = custom_prior(
    log_density = function(theta) sum(dnorm(theta, sd = 2, log = TRUE)),
    gradient = function(theta) -theta / 4,
    draw = function() rnorm(6, sd = 2)
  ))
  expect_output(print(functions), "prior: +given by R functions")
  theta <- rnorm(6)
  expect_equal(sgais:::model_evaluate(functions, theta), sgais:::model_evaluate(blocks, theta))
  expect_identical(withr::with_seed(1, sgais:::model_prior_draw(functions, 3)),
                   withr::with_seed(1, sgais:::model_prior_draw(blocks, 3)))
  expect_equal(log_evidence(paper_sgais(functions, seed = 2)),
               log_evidence(paper_sgais(blocks, seed = 2)), tolerance = 1e-6)
  expect_error(r_linear_regression(d, prior = custom_prior(function(theta) stop("no prior"),
                                                         function(theta) -theta,
                                                         function() rnorm(6))),
               "`prior\\$log_density` failed: no prior", class = "sgais_error_model")
  expect_error(r_linear_regression(d, prior = custom_prior(function(theta) 0,
                                                         function(theta) -theta,
                                                         function() rnorm(2))),
               "`prior\\$draw` must return a numeric vector of length 6",
               class = "sgais_error_model")
  expect_error(custom_prior(function(theta) 0, function(theta) 0, function(x) 0)$draw(), NA)
  expect_error(custom_prior(1, function(theta) 0, function() 0), "`log_density` must be a function",
               class = "sgais_error")
})
