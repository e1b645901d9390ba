# Linear regression with random intercepts, integrated out (R/linear_mixed.R, src/linear_mixed.c).

mixed_data <- function(n, groups, seed, noise = 0.5, group_sd = 0.7) {
  withr::with_seed(seed, {
    g <- sample(groups, n, TRUE)
    x <- rnorm(n)
    u <- rnorm(groups, 0, group_sd)
    data.frame(y = 1 + 0.5 * x + u[g] + rnorm(n, 0, noise), x = x, g = paste0("s", g))
  })
}

# log N(y; A theta, s2 I + g2 Z Z') by dense linear algebra
dense_log_lik <- function(model, theta, s2, g2) {
  xt <- model$data$xt
  r <- model$data$y - drop(crossprod(xt, theta))
  S <- diag(s2, length(r)) + g2 * outer(model$data$group, model$data$group, "==")
  -0.5 * (length(r) * log(2 * pi) + determinant(S)$modulus[[1]] + sum(r * solve(S, r)))
}

test_that("the rows' likelihoods sum to the marginal likelihood of the data, in any order", {
  d <- mixed_data(150, 12, seed = 1)
  m <- linear_regression(y ~ x + (1 | g), d, noise_sd = NULL)
  expect_s3_class(m, "sgais_linear_mixed")
  expect_equal(m$parameter_names, c("(Intercept)", "x", "log_sigma", "log_group_sd"))
  theta <- c(0.8, 0.4, log(0.6), log(0.9))
  ll <- sgais:::model_evaluate(m, theta)$log_lik
  expect_equal(ll, dense_log_lik(m, theta[1:2], 0.36, 0.81), tolerance = 1e-10)
  # the same rows in another order, each with the statistics of its own earlier rows
  shuffled <- linear_regression(y ~ x + (1 | g), d[withr::with_seed(2, sample(150)), ],
                                noise_sd = NULL, prior = "paper")
  m_paper <- linear_regression(y ~ x + (1 | g), d, noise_sd = NULL, prior = "paper")
  expect_equal(sgais:::model_evaluate(shuffled, theta)$log_lik,
               sgais:::model_evaluate(m_paper, theta)$log_lik, tolerance = 1e-10)
  # a row's statistics stay with it when the rows are permuted (the audit's shuffle)
  perm <- withr::with_seed(3, sample(150))
  moved <- m
  moved$data <- sgais:::data_columns(m$data, perm)
  expect_equal(sgais:::model_evaluate(moved, theta)$log_lik, ll, tolerance = 1e-10)
  # gradients, of every parameter
  check <- check_gradients(m, seed = 1)
  expect_lt(max(check$rel_error), 1e-6)
})

test_that("exact_log_evidence() with known variances matches a dense computation, prefixes too", {
  d <- mixed_data(200, 15, seed = 4)
  m <- linear_regression(y ~ x + (1 | g), d, noise_sd = 0.5, group_sd = 0.7)
  expect_equal(m$parameter_names, c("(Intercept)", "x"))
  A <- t(m$data$xt)
  prior <- m$hyper$prior
  loc <- rep(prior[4, ], prior[3, ])
  sc <- rep(prior[5, ], prior[3, ])
  dense <- function(k) {
    rows <- seq_len(k)
    a <- A[rows, , drop = FALSE]
    S <- diag(0.25, k) + 0.49 * outer(m$data$group[rows], m$data$group[rows], "==") +
      a %*% diag(sc^2) %*% t(a)
    e <- m$data$y[rows] - drop(a %*% loc)
    -0.5 * (k * log(2 * pi) + determinant(S)$modulus[[1]] + sum(e * solve(S, e)))
  }
  expect_equal(exact_log_evidence(m), dense(200), tolerance = 1e-10)
  expect_equal(exact_log_evidence(m, n = c(50, 120)), c(dense(50), dense(120)), tolerance = 1e-10)
  # one group is linear regression with the group effect added to the intercept's prior
  one <- transform(d, g = "all")
  m1 <- linear_regression(y ~ x + (1 | g), one, noise_sd = 0.5, group_sd = 0.7, prior = "paper",
                          prior_sd = 2)
  lr <- linear_regression(y ~ x, one, noise_sd = 0.5, prior = normal_prior(0, 2),
                          prior_intercept = normal_prior(0, sqrt(4 + 0.49)))
  expect_equal(exact_log_evidence(m1), exact_log_evidence(lr), tolerance = 1e-10)
})

test_that("with unknown sds the evidence is integrated over them, checked by integrate()", {
  d <- mixed_data(300, 12, seed = 10)
  known <- function(tau) {
    exact_log_evidence(linear_regression(y ~ x + (1 | g), d, noise_sd = 0.5, group_sd = tau))
  }
  # a group sd with a half-normal(1) prior: Z = integral of p(tau) Z(tau) dtau
  m <- linear_regression(y ~ x + (1 | g), d, noise_sd = 0.5, group_sd = half_normal_prior(1))
  peak <- known(0.7)
  f <- Vectorize(function(tau) 2 * dnorm(tau) * exp(known(tau) - peak))
  want <- log(integrate(f, 0, Inf, rel.tol = 1e-10)$value) + peak
  expect_equal(exact_log_evidence(m), want, tolerance = 1e-7)
  # a prior that pins both sds gives the known-sds value (the same coefficients' prior: the
  # default's scales differ between known and unknown noise)
  coef <- list(prior = normal_prior(0, 1), prior_intercept = normal_prior(0, 2))
  pinned <- do.call(linear_regression, c(list(y ~ x + (1 | g), d, noise_sd = NULL,
                                              variance_shape = 1e8, variance_scale = 0.25 * 1e8,
                                              group_sd = log_normal_prior(log(0.7), 1e-5)), coef))
  fixed <- do.call(linear_regression, c(list(y ~ x + (1 | g), d, noise_sd = 0.5, group_sd = 0.7),
                                        coef))
  expect_equal(exact_log_evidence(pinned), exact_log_evidence(fixed), tolerance = 1e-5)
})

test_that("SGAIS, AIS and nested sampling recover the exact evidence", {
  test_tags("slow")
  d <- mixed_data(1000, 30, seed = 5)
  m <- linear_regression(y ~ x + (1 | g), d, noise_sd = 0.5, group_sd = 0.7)
  exact <- exact_log_evidence(m)
  # tolerance: max(3 nats, 3 SE) as in the validation suite; these runs' SEs are 0.1-0.3
  for (fit in list(sgais(m, seed = 1, progress = FALSE), ais(m, seed = 1, progress = FALSE),
                   nested_sampling(m, seed = 1, progress = FALSE))) {
    expect_lt(abs(fit$log_evidence - exact), 3)
  }
  # both sds unknown (the evidence by quadrature over them)
  m <- linear_regression(y ~ x + (1 | g), d[1:500, ], noise_sd = NULL)
  exact <- exact_log_evidence(m)
  for (fit in list(sgais(m, seed = 1, progress = FALSE), ais(m, seed = 1, progress = FALSE),
                   nested_sampling(m, seed = 1, progress = FALSE))) {
    expect_lt(abs(fit$log_evidence - exact), 3)
  }
})

test_that("a fit continued on new rows is the fit of all of them, bit for bit", {
  d <- mixed_data(1500, 25, seed = 6)
  priors <- list(prior = normal_prior(0, 1), prior_intercept = normal_prior(0, 2),
                 group_sd = half_t_prior(3, 1))
  build <- function(rows) {
    do.call(linear_regression, c(list(y ~ x + (1 | g), d[rows, ], noise_sd = NULL,
                                      variance_scale = 1), priors))
  }
  # (20 particles, one move a step: continuation depends on neither)
  lean <- function(model) {
    quietly(sgais(model, particles = 20, early_particles = 20, max_rounds = 1, seed = 2,
                  progress = FALSE))
  }
  whole <- lean(build(1:1500))
  part <- quietly(sgais(lean(build(1:600)), d[601:1500, ]))
  expect_identical(part$log_evidence, whole$log_evidence)
  expect_identical(part$model$data, whole$model$data)
  expect_identical(part$model$group_sums, whole$model$group_sums)
  # groups first seen in the new rows start from their prior
  expect_setequal(whole$model$groups, unique(d$g))
  # the first rows of a model are those of a model built on them
  first <- sgais:::model_keep_first(build(1:1500), 600)
  expect_identical(first$group_sums, build(1:600)$group_sums)
})

test_that("predictive densities use the group's rows for a known group and the prior for a new one", {
  d <- mixed_data(400, 10, seed = 7)
  m <- linear_regression(y ~ x + (1 | g), d, noise_sd = 0.5, group_sd = 0.7)
  new <- data.frame(y = c(1.2, 0.3, 2), x = c(0, 1, -1), g = c("s1", "s1", "elsewhere"))
  pm <- sgais:::model_for_prediction(m, new)
  theta <- c(0.9, 0.45)
  got <- drop(.Call(sgais:::C_ffi_model_pointwise_log_lik, pm, cbind(theta)))
  a <- t(pm$data$xt)
  r_old <- d$y[d$g == "s1"] - drop(t(m$data$xt[, d$g == "s1"]) %*% theta)
  k <- length(r_old)
  v <- 1 / (1 / 0.49 + k / 0.25)
  mean_u <- v * sum(r_old) / 0.25
  mu <- drop(a %*% theta)
  want <- c(dnorm(new$y[1:2], mu[1:2] + mean_u, sqrt(0.25 + v), log = TRUE),
            dnorm(new$y[3], mu[3], sqrt(0.25 + 0.49), log = TRUE))
  expect_equal(got, want, tolerance = 1e-10)
  fit <- sgais(m, seed = 1, progress = FALSE)
  lp <- predictive_density(fit, new)
  expect_length(lp, 3)
  expect_true(all(is.finite(lp)))
})

test_that("compare_models() weighs a random intercept against none", {
  d <- mixed_data(1000, 20, seed = 8)
  # (20 particles: the models are 376 nats apart, known to 0.5)
  cmp <- compare_models(list(random = linear_regression(y ~ x + (1 | g), d, noise_sd = NULL),
                             fixed = linear_regression(y ~ x, d, noise_sd = NULL)),
                        seed = 1, progress = FALSE, method = "sgais", particles = 20,
                        early_particles = 20)
  final <- as.data.frame(cmp)
  final <- final[final$n == max(final$n), ]
  expect_gt(final$log_evidence[final$model == "random"],
            final$log_evidence[final$model == "fixed"] + 50)
})

test_that("the model prints its groups and priors, and validates its fields", {
  d <- mixed_data(100, 5, seed = 9)
  m <- linear_regression(y ~ x + (1 | g), d, noise_sd = 1)
  out <- paste(format(m), collapse = "\n")
  expect_match(out, "5 groups of `g`")
  expect_match(out, "group sd ~ half-N")
  bad <- m
  bad$data$group[1] <- 99L
  expect_error(sgais(bad, progress = FALSE), "groups", class = "sgais_error_invalid_model")
  bad <- m
  bad$data$st[1, 2] <- -1
  expect_error(sgais(bad, progress = FALSE), "group counts", class = "sgais_error_invalid_model")
})

slopes_data <- function(n, groups, seed) {
  withr::with_seed(seed, {
    g <- sample(groups, n, TRUE)
    x <- rnorm(n)
    u <- rnorm(groups, 0, 0.7)
    v <- rnorm(groups, 0, 0.4)
    data.frame(y = 1 + (0.5 + v[g]) * x + u[g] + rnorm(n, 0, 0.5), x = x, g = paste0("s", g))
  })
}

test_that("independent random slopes: the rows' likelihoods sum to the marginal likelihood", {
  d <- slopes_data(160, 10, seed = 11)
  m <- linear_regression(y ~ x + (1 + x || g), d, noise_sd = NULL)
  expect_equal(m$parameter_names, c("(Intercept)", "x", "log_sigma", "log_group_sd[(Intercept)]",
                                    "log_group_sd[x]"))
  expect_match(paste(format(m), collapse = "\n"), "independent normal effects of \\(Intercept, centred\\), x")
  theta <- c(0.8, 0.4, log(0.6), log(0.9), log(0.3))
  z <- t(m$data$zt)
  S <- diag(0.36, 160)
  same <- outer(m$data$group, m$data$group, "==")
  S <- S + same * (0.81 * tcrossprod(z[, 1]) + 0.09 * tcrossprod(z[, 2]))
  r <- m$data$y - drop(crossprod(m$data$xt, theta[1:2]))
  dense <- -0.5 * (160 * log(2 * pi) + determinant(S)$modulus[[1]] + sum(r * solve(S, r)))
  expect_equal(sgais:::model_evaluate(m, theta)$log_lik, dense, tolerance = 1e-10)
  expect_lt(max(check_gradients(m, seed = 1)$rel_error), 1e-6)
  # a slope alone, `(0 + x | g)`
  m1 <- linear_regression(y ~ x + (0 + x | g), d, noise_sd = 0.5, group_sd = 0.4)
  expect_equal(nrow(m1$data$zt), 1L)
  S1 <- diag(0.25, 160) + same * 0.16 * tcrossprod(t(m1$data$zt)[, 1])
  A <- t(m1$data$xt)
  prior <- m1$hyper$prior
  S1 <- S1 + A %*% diag(rep(prior[5, ], prior[3, ])^2) %*% t(A)
  e <- m1$data$y - drop(A %*% rep(prior[4, ], prior[3, ]))
  expect_equal(exact_log_evidence(m1),
               -0.5 * (160 * log(2 * pi) + determinant(S1)$modulus[[1]] + sum(e * solve(S1, e))),
               tolerance = 1e-10)
})

test_that("random slopes: exact evidence with known sds, continuation", {
  d <- slopes_data(800, 20, seed = 12)
  m <- linear_regression(y ~ x + (1 + x || g), d, noise_sd = 0.5, group_sd = c(0.7, 0.4))
  A <- t(m$data$xt[, 1:300])
  z <- t(m$data$zt[, 1:300])
  same <- outer(m$data$group[1:300], m$data$group[1:300], "==")
  prior <- m$hyper$prior
  S <- diag(0.25, 300) + same * (0.49 * tcrossprod(z[, 1]) + 0.16 * tcrossprod(z[, 2])) +
    A %*% diag(rep(prior[5, ], prior[3, ])^2) %*% t(A)
  e <- m$data$y[1:300] - drop(A %*% rep(prior[4, ], prior[3, ]))
  expect_equal(exact_log_evidence(m, n = 300),
               -0.5 * (300 * log(2 * pi) + determinant(S)$modulus[[1]] + sum(e * solve(S, e))),
               tolerance = 1e-10)
  # unknown sds: no closed form
  mu <- linear_regression(y ~ x + (1 + x || g), d, noise_sd = NULL)
  expect_error(exact_log_evidence(mu), class = "sgais_error_no_closed_form")
  # a continued fit is the fit of all the rows (20 particles, one move a step: continuation
  # depends on neither)
  priors <- list(prior = normal_prior(0, 1), prior_intercept = normal_prior(0, 2),
                 group_sd = half_normal_prior(1))
  build <- function(rows) {
    do.call(linear_regression, c(list(y ~ x + (1 + x || g), d[rows, ], noise_sd = NULL,
                                      variance_scale = 1), priors))
  }
  lean <- function(model) {
    quietly(sgais(model, particles = 20, early_particles = 20, max_rounds = 1, seed = 2,
                  progress = FALSE))
  }
  whole <- lean(build(1:800))
  part <- quietly(sgais(lean(build(1:300)), d[301:800, ]))
  expect_identical(part$log_evidence, whole$log_evidence)
  expect_identical(sgais:::model_keep_first(build(1:800), 300)$group_sums, build(1:300)$group_sums)
})

test_that("random slopes: the estimators find the exact evidence with known sds, and agree without", {
  test_tags("slow")
  d <- slopes_data(800, 20, seed = 12)
  m <- linear_regression(y ~ x + (1 + x || g), d, noise_sd = 0.5, group_sd = c(0.7, 0.4))
  exact <- exact_log_evidence(m)
  for (fit in list(sgais(m, seed = 1, progress = FALSE), ais(m, seed = 1, progress = FALSE),
                   nested_sampling(m, seed = 1, progress = FALSE))) {
    expect_lt(abs(fit$log_evidence - exact), 3)
  }
  mu <- linear_regression(y ~ x + (1 + x || g), d, noise_sd = NULL)
  expect_lt(abs(sgais(mu, seed = 1, progress = FALSE)$log_evidence -
                  ais(mu, seed = 1, progress = FALSE)$log_evidence), 3)
})

# a random intercept and slope with correlation rho, sds 0.7 and 0.4
correlated_data <- function(n, groups, seed, rho = 0.6) {
  withr::with_seed(seed, {
    g <- sample(groups, n, TRUE)
    x <- rnorm(n)
    b <- matrix(rnorm(2 * groups), groups) %*% chol(matrix(c(1, rho, rho, 1), 2)) %*%
      diag(c(0.7, 0.4))
    data.frame(y = 1 + (0.5 + b[g, 2]) * x + b[g, 1] + rnorm(n, 0, 0.5), x = x, g = paste0("s", g))
  })
}

# log N(y; A beta, s2 I + Z_g T Z_g' per group) by dense linear algebra
dense_correlated <- function(model, beta, s2, T, rows = seq_len(model$n)) {
  z <- t(model$data$zt[, rows, drop = FALSE])
  g <- model$data$group[rows]
  S <- diag(s2, length(rows)) + outer(g, g, "==") * (z %*% T %*% t(z))
  r <- model$data$y[rows] - drop(crossprod(model$data$xt[, rows, drop = FALSE], beta))
  -0.5 * (length(r) * log(2 * pi) + determinant(S)$modulus[[1]] + sum(r * solve(S, r)))
}

test_that("correlated random effects: the rows' likelihoods sum to the marginal likelihood", {
  d <- correlated_data(150, 10, seed = 14)
  d$x2 <- withr::with_seed(15, rnorm(150))
  m <- linear_regression(y ~ x + x2 + (1 + x + x2 | g), d, noise_sd = NULL, prior_sd = 2)
  expect_equal(m$parameter_names[8:10], c("atanh_group_cor[x,(Intercept)]",
                                          "atanh_group_cor[x2,(Intercept)]",
                                          "atanh_group_pcor[x2,x]"))
  expect_match(paste(format(m), collapse = "\n"), "correlated normal effects")
  expect_match(paste(format(m), collapse = "\n"), "LKJ\\(eta = 1\\)")
  # the CPCs (0.5, -0.3; 0.4) make R = L L' with L's rows (1), (z1, s1), (z2, z3 s2, s2 s3)
  z <- c(0.5, -0.3, 0.4)
  L <- rbind(c(1, 0, 0), c(z[1], sqrt(1 - z[1]^2), 0),
             c(z[2], z[3] * sqrt(1 - z[2]^2), sqrt((1 - z[2]^2) * (1 - z[3]^2))))
  tau <- c(0.8, 0.5, 0.3)
  theta <- c(0.9, 0.4, -0.2, log(0.6), log(tau), atanh(z))
  expect_equal(sgais:::model_evaluate(m, theta)$log_lik,
               dense_correlated(m, theta[1:3], 0.36, diag(tau) %*% tcrossprod(L) %*% diag(tau)),
               tolerance = 1e-10)
  expect_lt(max(check_gradients(m, seed = 1)$rel_error), 1e-6)
  # in another order, the same sum
  shuffled <- linear_regression(y ~ x + x2 + (1 + x + x2 | g), d[withr::with_seed(2, sample(150)), ],
                                noise_sd = NULL, prior_sd = 2)
  expect_equal(sgais:::model_evaluate(shuffled, theta)$log_lik,
               sgais:::model_evaluate(m, theta)$log_lik, tolerance = 1e-10)
})

test_that("correlated random effects: exact evidence with a known correlation, and over an LKJ prior", {
  d <- correlated_data(300, 15, seed = 16)
  build <- function(cor) {
    linear_regression(y ~ x + (1 + x | g), d, noise_sd = 0.5, group_sd = c(0.7, 0.4),
                      group_cor = cor)
  }
  known <- build(matrix(c(1, 0.6, 0.6, 1), 2))
  prior <- known$hyper$prior
  A <- t(known$data$xt)
  T <- diag(c(0.7, 0.4)) %*% matrix(c(1, 0.6, 0.6, 1), 2) %*% diag(c(0.7, 0.4))
  z <- t(known$data$zt)
  S <- diag(0.25, 300) + outer(known$data$group, known$data$group, "==") * (z %*% T %*% t(z)) +
    A %*% diag(rep(prior[5, ], prior[3, ])^2) %*% t(A)
  e <- known$data$y - drop(A %*% rep(prior[4, ], prior[3, ]))
  expect_equal(exact_log_evidence(known),
               -0.5 * (300 * log(2 * pi) + determinant(S)$modulus[[1]] + sum(e * solve(S, e))),
               tolerance = 1e-10)
  # the correlation unknown, LKJ(2): (rho + 1) / 2 ~ Beta(2, 2); the evidence is the integral of
  # the exact evidence given rho over that prior (integrate()), which every estimator recovers
  lkj <- build(lkj_prior(2))
  expect_error(exact_log_evidence(lkj), class = "sgais_error_no_closed_form")
  given <- function(r) exact_log_evidence(build(matrix(c(1, r, r, 1), 2)))
  peak <- given(0.6)
  f <- Vectorize(function(r) exp(given(r) - peak) * dbeta((r + 1) / 2, 2, 2) / 2)
  reference <- peak + log(integrate(f, -1, 1, rel.tol = 1e-10)$value)
  expect_lt(abs(importance_sampling(lkj, seed = 1, progress = FALSE)$log_evidence - reference),
            0.1)
})

test_that("correlated random effects: the annealing estimators integrate over an LKJ prior", {
  test_tags("slow")
  d <- correlated_data(300, 15, seed = 16)
  build <- function(cor) {
    linear_regression(y ~ x + (1 + x | g), d, noise_sd = 0.5, group_sd = c(0.7, 0.4),
                      group_cor = cor)
  }
  lkj <- build(lkj_prior(2))
  given <- function(r) exact_log_evidence(build(matrix(c(1, r, r, 1), 2)))
  peak <- given(0.6)
  f <- Vectorize(function(r) exp(given(r) - peak) * dbeta((r + 1) / 2, 2, 2) / 2)
  reference <- peak + log(integrate(f, -1, 1, rel.tol = 1e-10)$value)
  fits <- list(sgais(lkj, seed = 1, progress = FALSE), ais(lkj, seed = 1, progress = FALSE),
               nested_sampling(lkj, seed = 1, progress = FALSE))
  for (fit in fits) expect_lt(abs(fit$log_evidence - reference), max(1, 3 * fit$log_evidence_se))
})

test_that("correlated random effects continue on new rows as one run, and predict", {
  d <- correlated_data(400, 12, seed = 17)
  build <- function(rows) {
    linear_regression(y ~ x + (1 + x | g), d[rows, ], noise_sd = NULL, variance_scale = 1,
                      prior = normal_prior(0, 1), prior_intercept = normal_prior(0, 2),
                      group_sd = half_normal_prior(1), group_cor = lkj_prior(1.5))
  }
  lean <- function(model) {
    quietly(sgais(model, particles = 20, early_particles = 20, max_rounds = 1, seed = 2,
                  progress = FALSE))
  }
  whole <- lean(build(1:400))
  part <- quietly(sgais(lean(build(1:150)), d[151:400, ]))
  expect_identical(part$log_evidence, whole$log_evidence)
  # a known group's row is predicted from its rows (the normal conditional on them), a new
  # group's from the prior of the effects
  m <- build(1:400)
  new <- data.frame(x = c(0.5, -1), g = c("s1", "new"), y = c(1.5, 0.2))
  pm <- sgais:::model_for_prediction(m, new)
  tau <- c(0.7, 0.4)
  theta <- c(0.9, 0.45, log(0.5), log(tau), atanh(0.6))
  got <- drop(.Call(sgais:::C_ffi_model_pointwise_log_lik, pm, cbind(theta)))
  T <- diag(tau) %*% matrix(c(1, 0.6, 0.6, 1), 2) %*% diag(tau)
  old <- which(m$data$group == match("s1", m$groups))
  z <- rbind(t(m$data$zt[, old]), t(pm$data$zt[, 1]))
  a <- rbind(t(m$data$xt[, old]), t(pm$data$xt[, 1]))
  S <- diag(0.25, nrow(z)) + z %*% T %*% t(z)
  r <- c(m$data$y[old], new$y[1]) - drop(a %*% theta[1:2])
  k <- nrow(z)
  mean1 <- drop(S[k, -k] %*% solve(S[-k, -k], r[-k]))
  var1 <- S[k, k] - drop(S[k, -k] %*% solve(S[-k, -k], S[-k, k]))
  z2 <- pm$data$zt[, 2]
  want <- c(dnorm(r[k], mean1, sqrt(var1), log = TRUE),
            dnorm(new$y[2], sum(pm$data$xt[, 2] * theta[1:2]),
                  sqrt(0.25 + drop(z2 %*% T %*% z2)), log = TRUE))
  expect_equal(got, want, tolerance = 1e-10)
  lp <- predictive_density(whole, new)
  expect_length(lp, 2)
  expect_true(all(is.finite(lp)))
})

test_that("random effects the model cannot represent are refused, naming what to write", {
  d <- slopes_data(100, 5, seed = 13)
  d$w <- rnorm(100)
  expect_error(linear_regression(y ~ x + (1 + w || g), d, noise_sd = 1), "`w`",
               class = "sgais_error_random_effects")
  expect_error(linear_regression(y ~ x + (1 + x || g), d, group_sd = c(1, 2, 3),
                                 noise_sd = 1), "`group_sd`",
               class = "sgais_error_prior")
  # group_cor: only with correlated effects; a correlation matrix or lkj_prior()
  expect_error(linear_regression(y ~ x + (1 + x || g), d, group_cor = lkj_prior(),
                                 noise_sd = 1), "`group_cor`",
               class = "sgais_error_random_effects")
  expect_error(linear_regression(y ~ x, d, group_cor = lkj_prior(), noise_sd = 1), "`group_cor`",
               class = "sgais_error_random_effects")
  expect_error(linear_regression(y ~ x + (1 + x | g), d, group_cor = half_normal_prior(),
                                 noise_sd = 1),
               "`group_cor`.*half-normal", class = "sgais_error_prior")
  expect_error(linear_regression(y ~ x + (1 + x | g), d, group_cor = matrix(c(1, 2, 2, 1), 2),
                                 noise_sd = 1),
               "correlation matrix", class = "sgais_error_prior")
  expect_error(linear_regression(y ~ x + (1 + x | g), d, group_cor = diag(3), noise_sd = 1),
               "2 x 2", class = "sgais_error_prior")
  expect_s3_class(linear_regression(y ~ x + (1 + x | g), d, group_cor = diag(2), noise_sd = 1),
                  "sgais_linear_mixed")
})

test_that("a random-intercept model streams in blocks as one fit, and passes its audit", {
  d <- mixed_data(800, 25, seed = 14)
  priors <- list(prior = normal_prior(0, 1), prior_intercept = normal_prior(0, 2),
                 group_sd = half_normal_prior(1))
  build <- function(rows) {
    do.call(linear_regression, c(list(y ~ x + (1 | g), d[rows, ], noise_sd = NULL,
                                      variance_scale = 1), priors))
  }
  # (20 particles: the identity does not depend on their number, and the audit's bound is its
  # tolerance, 3 nats, at 50 particles too)
  whole <- sgais(build(1:800), particles = 20, early_particles = 20, seed = 3, progress = FALSE)
  # the template's rows are not the stream's: the stream's own groups and sums are used
  streamed <- sgais_stream(build(1:50), d, block_size = 350, particles = 20,
                           early_particles = 20, seed = 3, progress = FALSE)
  expect_identical(streamed$log_evidence, whole$log_evidence)
  expect_identical(streamed$model$group_sums, whole$model$group_sums)
  # the audit re-estimates on shuffled copies, each row keeping its group's earlier sums
  audit <- expect_silent(audit_evidence(whole, at = 800, seed = 2, progress = FALSE))
  expect_s3_class(audit, "sgais_audit")
})
