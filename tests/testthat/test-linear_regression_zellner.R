# Linear regression with Zellner's g-prior and the Zellner-Siow (JZS) prior, BayesFactor's
# conventions (?g_prior): theta = (intercept, slopes, log sigma^2), flat-top priors on the
# intercept and log sigma^2 in place of the improper p(mu, sigma^2) = 1 / sigma^2.

# BayesFactor's own log Bayes factors against the intercept-only model (regressionBF and lmBF,
# JZS prior), stored by inst/validation/bayesfactor-references.R: 112 models of attitude and
# mtcars, three prior scales.
bf_references <- function() {
  utils::read.csv(system.file("extdata", "bayesfactor-references.csv", package = "sgais"),
                  stringsAsFactors = FALSE)
}

zs_model <- function(formula, data, scale = "medium") {
  linear_regression(formula, data, prior = zellner_siow_prior(scale))
}

# The flat-top densities' log-normalisers of a model of response y (?g_prior).
flat_top_offset <- function(y) {
  -log(20 * sd(y) + sqrt(2 * pi) * sd(y)) - log(30 + sqrt(2 * pi))
}

# An independent reference for the g-prior: for each sigma^2 the dense n x n normal density of y,
# N(mu 1, sigma^2 (I + g X_c (X_c'X_c)^-1 X_c')), integrated over the flat mu in closed form
# (a Gaussian integral in one variable) and then over s = log sigma^2 by integrate() about the
# mode (the improper prior is flat in s).
dense_g_log_evidence <- function(x, y, g) {
  n <- length(y)
  xc <- scale(x, scale = FALSE)
  h <- diag(n) + g * xc %*% solve(crossprod(xc), t(xc))
  one <- rep(1, n)
  f <- function(s) {
    si <- solve(exp(s) * h)
    ld <- as.numeric(determinant(exp(s) * h, logarithm = TRUE)$modulus)
    a <- sum(si)
    b <- sum(si %*% y)
    -n / 2 * log(2 * pi) - ld / 2 - 0.5 * (drop(crossprod(y, si %*% y)) - b^2 / a) +
      0.5 * log(2 * pi / a)
  }
  mode <- stats::optimize(f, log(var(y)) + c(-15, 5), maximum = TRUE)
  g_int <- function(w) vapply(w, function(wi) exp(f(mode$maximum + wi) - mode$objective), 0)
  log(stats::integrate(g_int, -5, 5, rel.tol = 1e-12)$value) + mode$objective
}

# exact_log_evidence()'s log Bayes factors of the references' rows `i` against the intercept-only
# model of their data, response and scale
bf_of <- function(refs, i) {
  null <- list() # the intercept-only model's evidence, once per data set, response and scale
  vapply(i, function(i) {
    r <- refs[i, ]
    data <- get(r$data, envir = asNamespace("datasets"))
    response <- sub(" ~.*", "", r$formula)
    key <- paste(r$data, response, r$scale)
    null[[key]] <<- null[[key]] %||%
      exact_log_evidence(zs_model(stats::reformulate("1", response), data, r$scale))
    exact_log_evidence(zs_model(stats::as.formula(r$formula), data, r$scale)) - null[[key]]
  }, numeric(1))
}

test_that("exact_log_evidence gives BayesFactor's Bayes factors on its examples", {
  # every third of them (every data set and scale); all of them are a slow test below
  refs <- bf_references()
  expect_equal(nrow(refs), 112L)
  i <- seq(1, nrow(refs), by = 3)
  expect_setequal(paste(refs$data[i], refs$scale[i]), paste(refs$data, refs$scale))
  # BayesFactor's quadrature errors are at most 1e-4 (relative, in the Bayes factor)
  expect_lt(max(abs(bf_of(refs, i) - refs$log_bf[i])), 1e-4)
})

test_that("exact_log_evidence gives all of BayesFactor's Bayes factors on its examples", {
  test_tags("slow")
  refs <- bf_references()
  expect_lt(max(abs(bf_of(refs, seq_len(nrow(refs))) - refs$log_bf)), 1e-4)
})

test_that("the g-prior's closed form matches the dense normal integral and Liang et al.'s", {
  for (case in list(list(f = mpg ~ wt + hp + qsec, d = mtcars, g = NULL),
                    list(f = rating ~ complaints + learning, d = attitude, g = 5),
                    list(f = rating ~ complaints, d = attitude, g = 300))) {
    model <- linear_regression(case$f, case$d, prior = g_prior(case$g))
    mf <- stats::model.frame(case$f, case$d)
    x <- stats::model.matrix(case$f, mf)[, -1, drop = FALSE]
    y <- stats::model.response(mf)
    n <- length(y)
    g <- if (is.null(case$g)) n else case$g
    expect_equal(exact_log_evidence(model) - flat_top_offset(y),
                 dense_g_log_evidence(x, y, g), tolerance = 1e-9)
    # against the intercept-only model: (1 + g)^((n-k-1)/2) (1 + g (1 - R^2))^(-(n-1)/2)
    r2 <- summary(stats::lm(case$f, case$d))$r.squared
    k <- ncol(x)
    null <- linear_regression(stats::reformulate("1", all.vars(case$f)[1]), case$d,
                              prior = g_prior(g))
    expect_equal(exact_log_evidence(model) - exact_log_evidence(null),
                 (n - k - 1) / 2 * log1p(g) - (n - 1) / 2 * log1p(g * (1 - r2)), tolerance = 1e-9)
  }
})

test_that("the C prior is the normalised density and its gradient is right", {
  test_tags("memcheck")
  model <- zs_model(rating ~ complaints + learning, attitude)
  h <- model$hyper
  f <- h$flat
  m <- crossprod(h$gram_chol)
  flat_top <- function(x, lo, hi, t) {
    d <- if (x < lo) x - lo else if (x > hi) x - hi else 0
    -d^2 / (2 * t^2) - log(hi - lo + sqrt(2 * pi) * t)
  }
  for (theta in list(c(60, 0.5, -0.2, 4), c(-50, 3, 1, f[5] + 2), c(200, -1, 0, f[4] - 1))) {
    s <- theta[4]
    beta <- theta[2:3]
    r2 <- h$g
    cauchy <- lgamma(1.5) - lgamma(0.5) - log(pi) - 2 * log(sqrt(r2)) - s +
      0.5 * log(det(m)) - 1.5 * log1p(sum(beta * (m %*% beta)) / (r2 * exp(s)))
    expect_equal(sgais:::model_evaluate(model, theta)$log_prior,
                 flat_top(theta[1], f[1], f[2], f[3]) + flat_top(s, f[4], f[5], f[6]) + cauchy)
  }
  for (points in list(NULL, rbind(c(0, 0, 0, -18), c(150, 5, -5, 12)))) {
    check <- check_gradients(model, n = 4, theta = points, seed = 1)
    expect_lt(max(check$rel_error), 1e-6)
  }
})

test_that("the C prior's slopes integrate to one", {
  model <- zs_model(rating ~ complaints + learning, attitude)
  f <- model$hyper$flat
  flat_top <- function(x, lo, hi, t) {
    d <- if (x < lo) x - lo else if (x > hi) x - hi else 0
    -d^2 / (2 * t^2) - log(hi - lo + sqrt(2 * pi) * t)
  }
  # the slopes' conditional prior integrates to one (two slopes: a double integral), at an
  # intercept and log sigma^2 inside the flat parts, where their densities are the constants
  for (model in list(model, linear_regression(rating ~ complaints + learning, attitude,
                                               prior = g_prior(10)))) {
    flat <- flat_top(65, f[1], f[2], f[3]) + flat_top(4, f[4], f[5], f[6])
    density <- function(b1, b2) { # (at the points b1, in one call)
      theta <- rbind(65, b1, b2, 4)
      exp(.Call(sgais:::C_ffi_model_log_density, model, theta)[1, ] - flat)
    }
    inner <- function(b2) vapply(b2, function(v) {
      stats::integrate(density, -Inf, Inf, b2 = v, rel.tol = 1e-9)$value
    }, 0)
    expect_equal(stats::integrate(inner, -Inf, Inf, rel.tol = 1e-9)$value, 1, tolerance = 1e-5)
  }
})

test_that("prior draws follow the prior", {
  model <- zs_model(rating ~ complaints + learning + privileges, attitude)
  draws <- withr::with_seed(1, sgais:::model_prior_draw(model, 4000))
  expect_equal(dim(draws), c(5L, 4000L))
  m <- crossprod(model$hyper$gram_chol)
  # beta' M beta / (r^2 sigma^2) = chi^2_3 / chi^2_1 = 3 F(3, 1)
  u <- colSums(draws[2:4, ] * (m %*% draws[2:4, ])) / (model$hyper$g * exp(draws[5, ]))
  expect_gt(stats::ks.test(u / 3, "pf", 3, 1)$p.value, 1e-3)
  # the intercept: flat on [lo, hi] with probability (hi - lo) / (hi - lo + sqrt(2 pi) t)
  f <- model$hyper$flat
  inside <- mean(draws[1, ] >= f[1] & draws[1, ] <= f[2])
  expect_equal(inside, 20 / (20 + sqrt(2 * pi)), tolerance = 0.02)
  expect_gt(stats::ks.test(draws[1, draws[1, ] >= f[1] & draws[1, ] <= f[2]], "punif",
                           f[1], f[2])$p.value, 1e-3)
  g <- linear_regression(mpg ~ wt + hp, mtcars, prior = g_prior())
  draws <- withr::with_seed(2, sgais:::model_prior_draw(g, 4000))
  m <- crossprod(g$hyper$gram_chol)
  u <- colSums(draws[2:3, ] * (m %*% draws[2:3, ])) / (g$hyper$g * exp(draws[4, ]))
  expect_gt(stats::ks.test(u, "pchisq", 2)$p.value, 1e-3)
})

# Tolerances from single runs at the default settings, seeds 1-10 (errors log Z - exact):
# attitude, rating ~ complaints + learning, JZS: SGAIS mean -0.20, sd 0.25; nested sampling
# -0.22, 0.29; mtcars, mpg ~ wt + hp + qsec, g-prior: AIS -0.42, 0.50. Accepted: mean +/- 4 sd;
# the tests use seed 11.
test_that("the estimators recover the exact evidence", {
  zs <- zs_model(rating ~ complaints + learning, attitude)
  exact <- exact_log_evidence(zs)
  expect_lt(abs(log_evidence(quiet_sgais(zs, seed = 11)) - exact + 0.20), 4 * 0.25)
  ns <- nested_sampling(zs, seed = 11, progress = FALSE)
  expect_lt(abs(log_evidence(ns) - exact + 0.22), 4 * 0.29)
  g <- linear_regression(mpg ~ wt + hp + qsec, mtcars, prior = g_prior())
  fit <- ais(g, seed = 11, progress = FALSE)
  expect_lt(abs(log_evidence(fit) - exact_log_evidence(g) + 0.42), 4 * 0.50)
})

test_that("Bayes factors do not depend on the units of the covariates or the response", {
  bf <- function(d, prior) {
    exact_log_evidence(linear_regression(mpg ~ wt + hp + qsec, d, prior = prior)) -
      exact_log_evidence(linear_regression(mpg ~ wt + hp, d, prior = prior))
  }
  other <- transform(mtcars, wt = wt * 453.6, hp = hp / 100 + 7, qsec = qsec * 60,
                     mpg = 1000 - mpg * 0.425)
  for (prior in list(zellner_siow_prior(), g_prior(), zellner_siow_prior("wide"))) {
    expect_equal(bf(other, prior), bf(mtcars, prior), tolerance = 1e-8)
  }
})

test_that("comparisons of formulas use the prior, and prior_sensitivity varies its scale", {
  family <- function(formula, data) linear_regression(formula, data, prior = zellner_siow_prior())
  # the two are within a nat (BayesFactor: 0.70 for the smaller), a close call at these settings
  expect_warning(
    cmp <- compare_models(list(small = rating ~ complaints, large = rating ~ complaints + learning),
                          attitude, family = family, seed = 1, progress = FALSE, method = "sgais"),
    class = "sgais_warning_close_call")
  refs <- bf_references()
  refs <- refs[refs$bayesfactor == "lmBF" & refs$data == "attitude", ]
  exact <- diff(refs$log_bf)
  d <- cmp$fits$large[["log_evidence"]] - cmp$fits$small[["log_evidence"]]
  expect_lt(abs(d - exact), 4 * sqrt(2) * 0.25)
  fit <- quiet_sgais(zs_model(rating ~ complaints + learning, attitude),
                     particles = 400, early_particles = 400, seed = 3)
  sens <- suppressWarnings(prior_sensitivity(fit, scales = c(sqrt(2), 2)))
  # "medium" times sqrt(2) and 2 are "wide" and "ultrawide"
  want <- vapply(c("wide", "ultrawide"), function(s) {
    exact_log_evidence(zs_model(rating ~ complaints + learning, attitude, s))
  }, 0) - exact_log_evidence(zs_model(rating ~ complaints + learning, attitude))
  got <- sens$change[match(c(sqrt(2), 2), sens$scale)]
  expect_lt(max(abs(got - want)), 0.1)
})

test_that("the model says what it is, keeps its centring for new rows, and checks its flat parts", {
  model <- zs_model(rating ~ complaints + learning, attitude)
  expect_s3_class(model, "sgais_linear_regression_zellner")
  expect_equal(model$parameter_names, c("(Intercept)", "complaints", "learning", "log_sigma2"))
  expect_match(model$details[["prior"]], "Zellner-Siow \\(JZS\\) prior, scale r = 0.3536 \\(medium\\)")
  expect_match(format(g_prior()), "unit information")
  expect_output(print(zellner_siow_prior("wide")), "scale r = 0.5 \\(wide\\)")
  new <- sgais:::model_data(model, attitude[1:3, ])
  expect_equal(new$xt[2, ], attitude$complaints[1:3] - mean(attitude$complaints))
  # built on fewer rows than it is given: its prior keeps their scales, and it says so
  classes <- collect_warnings(
    compare_models(list(a = zs_model(rating ~ complaints, attitude[1:20, ]),
                        b = zs_model(rating ~ learning, attitude[1:20, ])),
                   attitude, seed = 1, progress = FALSE, method = "sgais"))$classes
  expect_true("sgais_warning_autoscale_rows" %in% classes)
  # a few rows of the data the model was built with: the posterior is wider than the flat parts
  expect_error(exact_log_evidence(model, n = 5), class = "sgais_error_no_closed_form")
  expect_true(is.finite(exact_log_evidence(model, n = 15)))
})

test_that("bad arguments give classed errors that name them", {
  err <- function(expr, pattern) {
    expect_error(expr, pattern, class = "sgais_error_prior")
  }
  err(linear_regression(mpg ~ wt, mtcars, noise_sd = 2, prior = g_prior()), "`noise_sd`")
  err(linear_regression(mpg ~ wt, mtcars, prior_sd = 2, prior = zellner_siow_prior()),
      "`prior_sd` has no part")
  err(linear_regression(mpg ~ wt, mtcars, variance_shape = 2, prior = g_prior()),
      "`variance_shape`")
  err(linear_regression(mpg ~ wt, mtcars, prior = g_prior(),
                        prior_intercept = normal_prior(20, 5)), "`prior_intercept`")
  err(linear_regression(mpg ~ wt - 1, mtcars, prior = g_prior()), "needs an intercept")
  err(linear_regression(mpg ~ wt + I(2 * wt), mtcars, prior = g_prior()), "linearly dependent")
  err(linear_regression(mpg ~ wt + hp, mtcars[1:3, ], prior = g_prior()), "more rows")
  err(logistic_regression(am ~ wt, mtcars, prior = zellner_siow_prior()),
      "linear regression with an unknown noise variance only")
  err(zellner_siow_prior("huge"), "\"medium\", \"wide\"")
  expect_error(zellner_siow_prior(-1), "`scale`")
  expect_error(g_prior(0), "`g`")
  expect_error(g_prior("a"), "`g`")
  # a damaged model is refused before C reads it
  model <- zs_model(rating ~ complaints, attitude)
  model$hyper$gram_chol <- matrix(NA_real_, 1, 1)
  expect_error(sgais(model, progress = FALSE), class = "sgais_error_invalid_model")
  model <- zs_model(rating ~ complaints, attitude)
  model$hyper$gram_chol <- matrix(0, 2, 2)
  expect_error(sgais:::model_evaluate(model, numeric(3)), "gram_chol")
})
