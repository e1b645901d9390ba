# GLMs with a random intercept per group, integrated out by adaptive Gauss-Hermite quadrature
# (R/glm_mixed.R, src/glm_mixed.c).

glmm_test_data <- function(family, n, groups, seed, tau = 0.8) {
  withr::with_seed(seed, {
    g <- sample(groups, n, TRUE)
    x <- rnorm(n)
    u <- rnorm(groups, 0, tau)
    eta <- -0.2 + 0.7 * x + u[g]
    y <- switch(family,
      logistic = rbinom(n, 1, plogis(eta)),
      poisson = rpois(n, exp(eta)),
      negative_binomial = rnbinom(n, size = 4, mu = exp(eta)))
    data.frame(y = y, x = x, g = paste0("s", g))
  })
}

glmm_constructor <- function(family) {
  switch(family, logistic = logistic_regression, poisson = poisson_regression,
         negative_binomial = negative_binomial_regression)
}

# log of the integral over each group's effect, by stats::integrate() on the effect's own
# scale (independent of the model's quadrature), summed over the groups
integrated_log_lik <- function(family, d, beta, tau, size = NULL) {
  eta <- beta[1] + beta[2] * d$x
  sum(vapply(split(seq_len(nrow(d)), d$g), function(rows) {
    f <- function(u) {
      vapply(u, function(v) {
        mu <- eta[rows] + v
        lp <- switch(family,
          logistic = dbinom(d$y[rows], 1, plogis(mu), log = TRUE),
          poisson = dpois(d$y[rows], exp(mu), log = TRUE),
          negative_binomial = dnbinom(d$y[rows], size = size, mu = exp(mu), log = TRUE))
        exp(sum(lp) + dnorm(v, 0, tau, log = TRUE) - shift)
      }, numeric(1))
    }
    # the integrand's peak, so that integrate() sees values near 1
    shift <- 0
    grid <- seq(-6 * tau, 6 * tau, length.out = 401)
    shift <- max(log(f(grid)))
    log(integrate(f, -10 * tau, 10 * tau, rel.tol = 1e-12, subdivisions = 1000L)$value) + shift
  }, numeric(1)))
}

test_that("each family's collapsed likelihood matches integrate() over every group's effect", {
  for (family in c("logistic", "poisson", "negative_binomial")) {
    d <- glmm_test_data(family, 120, 7, seed = 1)
    m <- glmm_constructor(family)(y ~ x + (1 | g), d, prior = "paper")
    expect_s3_class(m, "sgais_glm_mixed")
    expect_equal(m$n, 7L)
    expect_equal(m$parameter_names, c("(Intercept)", "x",
                                      if (family == "negative_binomial") "log_overdispersion",
                                      "log_group_sd"))
    theta <- c(-0.1, 0.6, if (family == "negative_binomial") log(0.4), log(0.9))
    ll <- sgais:::model_evaluate(m, theta)$log_lik
    # 21 nodes (groups of fewer than 200 rows): within 1e-7 nats over 7 groups
    expect_lt(abs(ll - integrated_log_lik(family, d, theta[1:2], 0.9, 0.4^-2)), 1e-7)
    # the gradient is the nodes' estimate of the integral's, not the derivative of their sum:
    # it agrees to the quadrature's error
    check <- check_gradients(m, seed = 1)
    expect_lt(max(check$rel_error), 1e-4)
  }
})

test_that("the mode is found however far the data put it (Newton's overshoot is bisected)", {
  # counts near 3,000 where the linear predictor without the effect is near 2: the first Newton
  # step from u = 0 lands near u = 170, on the exponential side
  d <- withr::with_seed(6, data.frame(x = rnorm(40), g = rep(c("a", "b"), 20)))
  d$y <- withr::with_seed(7, rpois(40, 3000))
  m <- poisson_regression(y ~ x + (1 | g), d, prior = "paper")
  theta <- c(2, 0.5, log(2.5))
  ll <- sgais:::model_evaluate(m, theta)$log_lik
  direct <- sum(vapply(split(seq_len(40), d$g), function(rows) {
    h <- function(u) vapply(u, function(v) sum(dpois(d$y[rows], exp(2 + 0.5 * d$x[rows] + v),
                                                     log = TRUE)) + dnorm(v, 0, 2.5, log = TRUE),
                            numeric(1))
    top <- optimize(h, c(-20, 20), maximum = TRUE)
    log(integrate(function(u) exp(h(u) - top$objective), top$maximum - 1, top$maximum + 1,
                  rel.tol = 1e-12)$value) + top$objective
  }, numeric(1)))
  expect_equal(ll, direct, tolerance = 1e-9)
})

test_that("rows added later for groups already seen give the same likelihood as all at once", {
  d <- glmm_test_data("poisson", 200, 9, seed = 2)
  theta <- c(0.1, 0.5, log(0.7))
  whole <- poisson_regression(y ~ x + (1 | g), d, prior = "paper")
  first <- poisson_regression(y ~ x + (1 | g), d[1:120, ], prior = "paper")
  grown <- sgais:::model_add_rows(first, d[121:200, ])
  # a unit for each group of the new rows, its earlier rows as context
  expect_equal(grown$n, first$n + length(unique(d$g[121:200])))
  expect_true(all(grown$data$unit_context[-seq_len(first$n)] >= 0))
  expect_gt(sum(grown$data$unit_context), 0)
  expect_equal(sgais:::model_evaluate(grown, theta)$log_lik,
               sgais:::model_evaluate(whole, theta)$log_lik, tolerance = 1e-10)
  # a model holding only the new rows starts every group from its prior
  alone <- sgais:::model_with_data(first, d[121:200, ])
  expect_equal(sum(alone$data$unit_context), 0)
  # units survive shuffling and subsetting as wholes (the audit's shuffle)
  perm <- withr::with_seed(3, sample(grown$n))
  moved <- grown
  moved$data <- sgais:::data_columns(grown$data, perm)
  expect_equal(sgais:::model_evaluate(moved, theta)$log_lik,
               sgais:::model_evaluate(grown, theta)$log_lik, tolerance = 1e-10)
  expect_equal(sgais:::model_keep_first(grown, first$n)$data, first$data)
})

test_that("a fit streams, continues and predicts rows of known and new groups", {
  d <- glmm_test_data("logistic", 90, 4, seed = 3)
  m <- logistic_regression(y ~ x + (1 | g), d[1:60, ], group_sd = 0.8, prior = "paper")
  expect_equal(m$parameter_names, c("(Intercept)", "x"))
  fit <- sgais(m, seed = 1, progress = FALSE, particles = 20, sghmc_steps = 5,
               min_sghmc_steps = 2, max_rounds = 1)
  expect_true(is.finite(log_evidence(fit)))
  more <- sgais(fit, d[61:90, ], progress = FALSE)
  expect_equal(more$n, fit$n + length(unique(d$g[61:90])))
  # each row to predict is a unit of its own, conditioned on its group's rows in the fit
  new <- data.frame(y = c(1, 0), x = c(0.2, -0.4), g = c(d$g[1], "unseen"))
  pred <- sgais:::model_for_prediction(m, new)
  expect_equal(pred$n, 2L)
  expect_gt(pred$data$unit_context[1], 0)
  expect_equal(pred$data$unit_context[2], 0L)
  theta <- c(-0.1, 0.5)
  lp <- .Call(sgais:::C_ffi_model_pointwise_log_lik, pred, matrix(theta))
  with_row <- logistic_regression(y ~ x + (1 | g), rbind(d[1:60, ], new[1, ]), group_sd = 0.8,
                                  prior = "paper")
  expect_equal(lp[1], sgais:::model_evaluate(with_row, theta)$log_lik -
                 sgais:::model_evaluate(m, theta)$log_lik, tolerance = 1e-9)
  dens <- predictive_density(fit, new)
  expect_length(dens, 2L)
  expect_true(all(is.finite(dens) & dens < 0))
})

test_that("what the model cannot take is a classed error naming it", {
  d <- glmm_test_data("logistic", 60, 5, seed = 4)
  d$z <- rnorm(60)
  d$z2 <- rnorm(60)
  d$z3 <- rnorm(60)
  expect_error(logistic_regression(y ~ x + z + z2 + z3 + (1 + x + z + z2 | g), d), "at most 3",
               class = "sgais_error_random_effects")
  expect_error(logistic_regression(y ~ x + (1 + z | g), d), "`z`",
               class = "sgais_error_random_effects")
  expect_error(logistic_regression(y ~ x + (1 + x || g), d, group_cor = lkj_prior()),
               "`group_cor`", class = "sgais_error_random_effects")
  expect_error(poisson_regression(y ~ x, d, group_cor = lkj_prior()), "`group_cor`",
               class = "sgais_error_random_effects")
  expect_error(logistic_regression(y ~ x + (1 | h), d), "`h`", class = "sgais_error_missing_column")
  expect_error(logistic_regression(y ~ x, d, group_sd = 1), class = "sgais_error_random_effects")
  expect_error(poisson_regression(y ~ x + (1 | g), d, group_sd = c(1, 2)), class = "sgais_error_prior")
  expect_error(logistic_regression(y ~ x + (1 | g), d, x = d$x), "not both")
  m <- logistic_regression(y ~ x + (1 | g), d)
  expect_error(sgais(m, reservoir_size = 5000, progress = FALSE), class = "sgais_error_reservoir")
  bad <- m
  bad$data$unit_rows[1] <- bad$data$unit_rows[1] + 1L
  expect_error(sgais(bad, progress = FALSE), "unit_rows", class = "sgais_error_invalid_model")
  bad <- m
  bad$data$unit_context[1] <- bad$data$unit_rows[1]
  expect_error(sgais(bad, progress = FALSE), class = "sgais_error_invalid_model")
  bad <- m
  bad$hyper$quadrature[1, 1] <- NaN
  expect_error(sgais(bad, progress = FALSE), class = "sgais_error_invalid_model")
})

# log p(y | beta, T) with q = 2 effects (intercept and slope of x) per group, each group's
# integral by the trapezoid rule on a fine grid in standardised effects v (b = chol(T)' v), in
# R, independent of the model's Gauss-Hermite grids
grid_log_lik_2d <- function(family, d, beta, T, size = NULL) {
  axis <- seq(-8, 8, length.out = 161) # spacing 0.1: exact to rounding for these smooth integrands
  v <- as.matrix(expand.grid(axis, axis))
  b <- v %*% chol(T)
  log_prior <- dnorm(v[, 1], log = TRUE) + dnorm(v[, 2], log = TRUE) + 2 * log(axis[2] - axis[1])
  sum(vapply(split(seq_len(nrow(d)), d$g), function(rows) {
    lp <- log_prior
    for (i in rows) {
      eta <- beta[1] + beta[2] * d$x[i] + b[, 1] + b[, 2] * d$x[i]
      lp <- lp + switch(family,
        logistic = plogis(if (d$y[i] == 1) eta else -eta, log.p = TRUE),
        poisson = dpois(d$y[i], exp(eta), log = TRUE),
        negative_binomial = dnbinom(d$y[i], size = size, mu = exp(eta), log = TRUE))
    }
    top <- max(lp)
    top + log(sum(exp(lp - top)))
  }, numeric(1)))
}

test_that("random slopes: each family's likelihood matches a fine grid over both effects", {
  T <- function(s, r) diag(s) %*% matrix(c(1, r, r, 1), 2) %*% diag(s)
  for (family in c("logistic", "poisson", "negative_binomial")) {
    d <- glmm_test_data(family, 90, 6, seed = 6)
    nb <- family == "negative_binomial"
    m <- glmm_constructor(family)(y ~ x + (1 + x | g), d, prior = "paper")
    expect_equal(m$parameter_names, c("(Intercept)", "x", if (nb) "log_overdispersion",
                                      "log_group_sd[(Intercept)]", "log_group_sd[x]",
                                      "atanh_group_cor[x,(Intercept)]"))
    theta <- c(-0.1, 0.6, if (nb) log(0.4), log(0.8), log(0.5), atanh(0.4))
    reference <- grid_log_lik_2d(family, d, theta[1:2], T(c(0.8, 0.5), 0.4), 0.4^-2)
    # 9 nodes per axis (groups of fewer than 200 rows): within 5e-5 nats over 6 groups (the
    # rule's error, measured up to 3.2e-5 a group at these sds); 31 nodes: to 1e-8
    expect_lt(abs(sgais:::model_evaluate(m, theta)$log_lik - reference), 5e-5)
    fine <- m
    fine$hyper$quadrature <- rbind(0, sgais:::gauss_hermite(31))
    expect_lt(abs(sgais:::model_evaluate(fine, theta)$log_lik - reference), 1e-8)
    # the gradient is the nodes' estimate of the integral's: it agrees to the quadrature's error,
    # and on the fine rule (checked for one family: 31^2 nodes a row) to finite differences' own
    expect_lt(max(check_gradients(m, seed = 1)$rel_error), 5e-3)
    if (family == "logistic") expect_lt(max(check_gradients(fine, seed = 1)$rel_error), 1e-5)
  }
  # Poisson's fast path (a product of per-axis exponentials) is the exp()-per-term path that the
  # negative binomial takes, whose terms are Poisson's when the overdispersion is negligible
  d <- glmm_test_data("poisson", 90, 6, seed = 6)
  pois <- poisson_regression(y ~ x + (1 + x | g), d, prior = "paper")
  nb <- negative_binomial_regression(y ~ x + (1 + x | g), d, prior = "paper")
  theta <- c(-0.1, 0.6, log(0.8), log(0.5), atanh(0.4))
  expect_equal(sgais:::model_evaluate(nb, append(theta, -40, 2))$log_lik,
               sgais:::model_evaluate(pois, theta)$log_lik, tolerance = 1e-12)
  # independent effects, and a slope alone
  d <- glmm_test_data("poisson", 90, 6, seed = 7)
  m <- poisson_regression(y ~ x + (1 + x || g), d, prior = "paper", group_sd = c(0.8, 0.5))
  expect_equal(m$parameter_names, c("(Intercept)", "x"))
  expect_lt(abs(sgais:::model_evaluate(m, c(0.2, 0.4))$log_lik -
                  grid_log_lik_2d("poisson", d, c(0.2, 0.4), T(c(0.8, 0.5), 0))), 5e-5)
  slope <- poisson_regression(y ~ x + (0 + x | g), d, prior = "paper", group_sd = 0.5)
  both <- poisson_regression(y ~ x + (1 + x || g), d, prior = "paper", group_sd = c(1e-6, 0.5))
  expect_equal(sgais:::model_evaluate(slope, c(0.2, 0.4))$log_lik,
               sgais:::model_evaluate(both, c(0.2, 0.4))$log_lik, tolerance = 1e-6)
})

test_that("random slopes: SGAIS agrees with importance sampling", {
  test_tags("slow")
  d <- glmm_test_data("poisson", 200, 10, seed = 8)
  m <- poisson_regression(y ~ x + (1 + x | g), d, prior = "paper")
  is <- importance_sampling(m, draws = 1000, seed = 1, progress = FALSE)
  fit <- sgais(m, seed = 1, progress = FALSE)
  expect_lt(abs(log_evidence(fit) - log_evidence(is)),
            3 * sqrt(fit$log_evidence_se^2 + is$log_evidence_se^2))
})

test_that("random slopes: rows added later for groups already seen give the likelihood of all at once", {
  d <- glmm_test_data("poisson", 200, 10, seed = 8)
  m <- poisson_regression(y ~ x + (1 + x | g), d, prior = "paper")
  grown <- sgais:::model_add_rows(poisson_regression(y ~ x + (1 + x | g), d[1:120, ],
                                                     prior = "paper"), d[121:200, ])
  theta <- c(-0.1, 0.6, log(0.8), log(0.5), atanh(0.4))
  expect_equal(sgais:::model_evaluate(grown, theta)$log_lik,
               sgais:::model_evaluate(m, theta)$log_lik, tolerance = 1e-6)
})

test_that("compare_models() sets models with and without the random intercept side by side", {
  d <- glmm_test_data("logistic", 160, 8, seed = 5)
  models <- list(plain = logistic_regression(y ~ x, d, prior = "paper"),
                 patient = logistic_regression(y ~ x + (1 | g), d, prior = "paper"))
  cmp <- compare_models(models, d[1:100, ], seed = 1, progress = FALSE, particles = 20,
                        sghmc_steps = 5, min_sghmc_steps = 2, max_rounds = 1, method = "sgais")
  expect_equal(cmp$fits$patient$n, 8L)
  expect_equal(max(cmp$trajectory$n), 100)
  more <- update(cmp, d[101:130, ], progress = FALSE)
  # the fits meet where both have a point (the end of the data), counted in rows
  expect_equal(max(more$trajectory$n), 130)
  expect_equal(nrow(more$trajectory), 2 * length(unique(more$trajectory$n)))
  expect_equal(more$fits$patient$n, 8L + length(unique(d$g[101:130])))
  # a model of groups takes mini-batches of about 500 rows' worth of groups
  expect_equal(cmp$fits$patient$settings$batch_size, 40L) # 100 rows in 8 groups
  expect_equal(cmp$fits$plain$settings$batch_size, 500L)
})

test_that("SIR restarts on a model of groups from its first chunk, and warns without restarts", {
  # 600 Poisson rows in 12 groups of about 50 (counts about 7): an importance step of a whole
  # group from the prior or near it leaves few particles. Seeds 1-10 of such data: without
  # restarts -8.4 to +3.5 nats off importance sampling (here -6.5, SE 0.64), with them within
  # 0.9 of their SE (here -0.61, SE 0.68)
  d <- withr::with_seed(6, {
    g <- sample(12, 600, TRUE)
    x <- rnorm(600)
    u <- rnorm(12, 0, 0.5)
    data.frame(y = rpois(600, exp(2 + 0.3 * x + u[g])), x = x, g = paste0("s", g))
  })
  m <- poisson_regression(y ~ x + (1 | g), d, prior = "paper")
  is <- importance_sampling(m, draws = 2000, seed = 1, progress = FALSE)
  # the batch as the first piece below would set it (about 500 rows' worth of groups)
  fit <- expect_silent(sir(m, seed = 6, progress = FALSE, batch_size = 10))
  tr <- as.data.frame(fit)
  # on the grid 2, 4, 8, ... from the first chunk: at the chunk ends 3 and 10 of 1, 3, 6, 10, 12
  expect_equal(tr$n[tr$restarts > 0], c(3, 10))
  expect_output(print(fit), "restarts:  2, annealed at n = 3, 10", fixed = TRUE)
  expect_lt(abs(log_evidence(fit) - log_evidence(is)),
            3 * sqrt(fit$log_evidence_se^2 + is$log_evidence_se^2))
  # continued on other groups, it restarts where the single run did, identically (the first
  # six groups: a restart at 3, in the continuation of a run of the first; the single run's
  # estimates at 1, 3 and 6 groups are those of a run of the six)
  first <- unique(d$g)[1:6]
  part <- sir(poisson_regression(y ~ x + (1 | g), d[d$g == first[1], ], prior = "paper"),
              seed = 6, progress = FALSE, batch_size = 10)
  more <- as.data.frame(sgais(part, d[d$g %in% first[-1], ], progress = FALSE))
  expect_equal(more$restarts, c(0, 1, 0))
  expect_identical(more$log_evidence, tr$log_evidence[tr$n <= 6])
  # without restarts: the estimator as published, which warns (before the run: two groups)
  two <- poisson_regression(y ~ x + (1 | g), d[d$g %in% first[1:2], ], prior = "paper")
  expect_warning(none <- sir(two, restart_every = Inf, seed = 6, progress = FALSE),
                 "without restarts takes each observation", class = "sgais_warning_unreliable")
  expect_equal(sum(as.data.frame(none)$restarts), 0)
})

# Binomial counts in 6 groups of 5 rows: x standard normal, 0 to 12 trials, a group effect of sd
# 0.8.
glmm_counts_data <- function(seed) {
  withr::with_seed(seed, {
    g <- rep(1:6, each = 5)
    x <- rnorm(30)
    m <- sample(0:12, 30, TRUE)
    u <- rnorm(6, 0, 0.8)
    data.frame(g = paste0("h", g), x = x, m = m, s = rbinom(30, m, plogis(-0.3 + 0.6 * x + u[g])))
  })
}

test_that("binomial counts with random effects: integrate() per group, Bernoulli rows + lchoose", {
  test_tags("memcheck")
  d <- glmm_counts_data(5)
  const <- sum(lchoose(d$m, d$s))
  counts <- logistic_regression(cbind(s, m - s) ~ x + (1 | g), d, prior = "paper")
  rows <- bernoulli_rows(d, d$s, d$m)
  expanded <- logistic_regression(y ~ x + (1 | g), rows, prior = "paper")
  expect_identical(counts$hyper$glmm_family, 4L)
  theta <- c(-0.2, 0.5, log(0.9))
  ll <- sgais:::model_evaluate(counts, theta)$log_lik
  # each group's integral by integrate(), of dbinom()'s likelihood (lchoose included)
  reference <- sum(vapply(split(seq_len(nrow(d)), d$g), function(i) {
    h <- function(u) vapply(u, function(v) {
      sum(dbinom(d$s[i], d$m[i], plogis(theta[1] + theta[2] * d$x[i] + v), log = TRUE)) +
        dnorm(v, 0, 0.9, log = TRUE)
    }, numeric(1))
    top <- optimize(h, c(-10, 10), maximum = TRUE)
    log(integrate(function(u) exp(h(u) - top$objective), -10, 10, rel.tol = 1e-12)$value) +
      top$objective
  }, numeric(1)))
  expect_lt(abs(ll - reference), 1e-7)
  expect_lt(abs(ll - sgais:::model_evaluate(expanded, theta)$log_lik - const), 1e-7)
  expect_lt(max(check_gradients(counts, seed = 1)$rel_error), 1e-4)
  # the proportions with their trials; the Bernoulli rows as frequency weights, their rule
  # applied once with the group keys
  props <- logistic_regression(s / m ~ x + (1 | g), d, weights = m, prior = "paper")
  expect_identical(props$data, counts$data)
  agg <- aggregate(list(w = rep(1, nrow(rows))), rows[c("g", "x", "y")], sum)
  freq <- logistic_regression(y == 1 ~ x + (1 | g), agg, weights = w, prior = "paper")
  expect_identical(ncol(freq$data$xt), nrow(rows))
  expect_equal(sgais:::model_evaluate(freq, theta)$log_lik, ll - const, tolerance = 1e-9)
  # random slopes: the same identity on the product grid; rows added later for known groups
  slopes <- logistic_regression(cbind(s, m - s) ~ x + (1 + x | g), d, prior = "paper")
  theta <- c(-0.2, 0.5, log(0.9), log(0.4), atanh(0.3))
  ll <- sgais:::model_evaluate(slopes, theta)$log_lik
  expect_lt(abs(ll - const - sgais:::model_evaluate(
    logistic_regression(y ~ x + (1 + x | g), rows, prior = "paper"), theta)$log_lik), 1e-7)
  grown <- sgais:::model_add_rows(
    logistic_regression(cbind(s, m - s) ~ x + (1 + x | g), d[1:18, ], prior = "paper"), d[19:30, ])
  expect_equal(sgais:::model_evaluate(grown, theta)$log_lik, ll, tolerance = 1e-8)
  expect_lt(max(check_gradients(slopes, seed = 1)$rel_error), 5e-3)
})

test_that("cbpp: counts and a random intercept at the defaults, Bernoulli rows + lchoose", {
  cbpp <- cbpp_data()
  counts <- logistic_regression(cbind(incidence, size - incidence) ~ period + (1 | herd), cbpp)
  expanded <- logistic_regression(y ~ period + (1 | herd),
                                  bernoulli_rows(cbpp, cbpp$incidence, cbpp$size))
  const <- sum(lchoose(cbpp$size, cbpp$incidence))
  expect_identical(counts$n, 15L)
  rows <- importance_sampling(expanded, seed = 1)
  is <- importance_sampling(counts, seed = 1)
  fit <- sgais(counts, seed = 1, progress = FALSE)
  for (estimate in list(is, fit)) {
    expect_lt(abs(log_evidence(estimate) - log_evidence(rows) - const),
              3 * sqrt(estimate$log_evidence_se^2 + rows$log_evidence_se^2))
  }
})
