# The prior building blocks (src/prior.c) evaluated through a model with no data to speak of.
prior_model <- function(prior, dim = 1L) {
  custom_model(function(theta, data) rep(0, nrow(data)),
               function(theta, data) numeric(length(theta)),
               data = data.frame(x = 0), dim = dim, prior = prior)
}
log_prior <- function(model, theta) sgais:::model_evaluate(model, theta)$log_prior

test_that("each block is a normalised density with the right gradient", {
  priors <- list(normal_prior(1, 2), student_t_prior(3, -1, 0.5), half_normal_prior(2),
                 exponential_prior(0.5), log_normal_prior(0.3, 0.7), half_t_prior(3, 2),
                 half_t_prior(1, 0.5), inverse_gamma_prior(2, 3))
  for (prior in priors) {
    m <- prior_model(prior)
    f <- Vectorize(function(t) exp(log_prior(m, t)))
    expect_equal(integrate(f, -Inf, Inf, rel.tol = 1e-10)$value, 1, tolerance = 1e-7)
    for (t in c(-2.3, 0.1, 1.7)) {
      h <- 1e-5
      fd <- (log_prior(m, t + h) - log_prior(m, t - h)) / (2 * h)
      expect_equal(sgais:::model_evaluate(m, t)$grad_log_prior, fd, tolerance = 1e-7)
    }
  }
})

test_that("blocks on the log scale are the named densities of sigma with the Jacobian", {
  t <- c(-0.7, 0.4)
  s <- exp(t)
  expect_equal(log_prior(prior_model(half_normal_prior(2), 2), t),
               sum(log(2) + dnorm(s, 0, 2, log = TRUE) + t))
  expect_equal(log_prior(prior_model(exponential_prior(3), 2), t),
               sum(dexp(s, 3, log = TRUE) + t))
  expect_equal(log_prior(prior_model(log_normal_prior(0.2, 1.5), 2), t),
               sum(dlnorm(s, 0.2, 1.5, log = TRUE) + t))
  expect_equal(log_prior(prior_model(student_t_prior(4, 1, 2), 2), t),
               sum(dt((t - 1) / 2, 4, log = TRUE) - log(2)))
  expect_equal(log_prior(prior_model(half_t_prior(4, 2), 2), t),
               sum(log(2) + dt(s / 2, 4, log = TRUE) - log(2) + t))
  # sigma^2 ~ InvGamma(a, b): density b^a / Gamma(a) v^(-a-1) e^(-b/v), Jacobian 2 sigma^2
  v <- s^2
  expect_equal(log_prior(prior_model(inverse_gamma_prior(2, 3), 2), t),
               sum(2 * log(3) - lgamma(2) - 3 * log(v) - 3 / v + log(2 * v)))
})

test_that("draws follow the blocks (Kolmogorov-Smirnov at fixed seeds)", {
  draws <- function(prior) drop(withr::with_seed(1, sgais:::model_prior_draw(prior_model(prior), 4000)))
  expect_gt(ks.test(draws(normal_prior(1, 2)), "pnorm", 1, 2)$p.value, 1e-3)
  expect_gt(ks.test((draws(student_t_prior(3, -1, 0.5)) + 1) / 0.5, "pt", 3)$p.value, 1e-3)
  expect_gt(ks.test(exp(draws(half_normal_prior(2))) / 2, function(q) 2 * pnorm(q) - 1)$p.value,
            1e-3)
  expect_gt(ks.test(exp(draws(exponential_prior(0.5))), "pexp", 0.5)$p.value, 1e-3)
  expect_gt(ks.test(exp(draws(half_t_prior(3, 2))) / 2, function(q) 2 * pt(q, 3) - 1)$p.value,
            1e-3)
  # 1 / sigma^2 ~ Gamma(shape 2, rate 3)
  expect_gt(ks.test(exp(-2 * draws(inverse_gamma_prior(2, 3))), "pgamma", 2, 3)$p.value, 1e-3)
})

test_that("the LKJ block is LKJ's density of R through its canonical partial correlations", {
  # q = 2: (rho + 1) / 2 ~ Beta(eta, eta), rho = tanh(theta)
  m <- prior_model(lkj_prior(2.5))
  for (t in c(-1.2, 0.3, 2)) {
    expect_equal(log_prior(m, t), dbeta((tanh(t) + 1) / 2, 2.5, 2.5, log = TRUE) - log(2) +
                   log(1 - tanh(t)^2))
  }
  expect_equal(integrate(Vectorize(function(t) exp(log_prior(m, t))), -Inf, Inf)$value, 1,
               tolerance = 1e-7)
  # q = 3: the density of (r21, r31, r32) is c det(R)^(eta - 1) (c = 2 / pi^2 at eta = 1, the
  # volume of the 3 x 3 correlation matrices being pi^2 / 2), times the Jacobian of theta -> r
  corr <- function(t) {
    z <- tanh(t)
    L <- rbind(c(1, 0, 0), c(z[1], sqrt(1 - z[1]^2), 0),
               c(z[2], z[3] * sqrt(1 - z[2]^2), sqrt((1 - z[2]^2) * (1 - z[3]^2))))
    R <- tcrossprod(L)
    c(R[2, 1], R[3, 1], R[3, 2])
  }
  log_jacobian <- function(t) {
    J <- vapply(1:3, function(k) {
      h <- replace(numeric(3), k, 1e-6)
      (corr(t + h) - corr(t - h)) / 2e-6
    }, numeric(3))
    log(abs(det(J)))
  }
  det_r <- function(r) 1 + 2 * r[1] * r[2] * r[3] - sum(r^2)
  m1 <- prior_model(lkj_prior(1), 3)
  m3 <- prior_model(lkj_prior(3), 3)
  points <- list(c(0.2, -0.5, 0.7), c(-1.1, 0.4, 0.1), c(0.9, 1.3, -0.6))
  for (t in points) {
    expect_equal(log_prior(m1, t), log(2 / pi^2) + log_jacobian(t), tolerance = 1e-7)
    h <- 1e-5
    fd <- vapply(1:3, function(k) {
      e <- replace(numeric(3), k, h)
      (log_prior(m3, t + e) - log_prior(m3, t - e)) / (2 * h)
    }, numeric(1))
    expect_equal(sgais:::model_evaluate(m3, t)$grad_log_prior, fd, tolerance = 1e-7)
  }
  # at eta = 3, the ratio of densities between two points is that of det(R)^2 and the Jacobians
  ratio <- log_prior(m3, points[[1]]) - log_prior(m3, points[[2]])
  expect_equal(ratio, 2 * (log(det_r(corr(points[[1]]))) - log(det_r(corr(points[[2]])))) +
                 log_jacobian(points[[1]]) - log_jacobian(points[[2]]), tolerance = 1e-7)
  # draws: every correlation of a 3 x 3 LKJ(eta) matrix has (r + 1) / 2 ~ Beta(eta + 1/2, eta + 1/2)
  draws <- withr::with_seed(1, sgais:::model_prior_draw(prior_model(lkj_prior(2), 3), 4000))
  r <- apply(draws, 2, corr)
  for (k in 1:3) expect_gt(ks.test((r[k, ] + 1) / 2, "pbeta", 2.5, 2.5)$p.value, 1e-3)
  # its arguments
  expect_error(lkj_prior(0), "`eta`")
  expect_error(lkj_prior(1, dim = 2), "q \\(q - 1\\) / 2")
  expect_error(prior_model(lkj_prior(1), 2), "LKJ block")
  expect_equal(format(lkj_prior(2)), "rest: correlation ~ LKJ(eta = 2)")
})

test_that("blocks join with c() in the order of the parameters", {
  prior <- c(normal_prior(sd = 10, dim = 2), half_normal_prior(1))
  expect_s3_class(prior, "sgais_prior")
  expect_output(print(prior), "2: N\\(0, sd = 10\\)")
  expect_output(print(prior), "rest: exp\\(theta\\) ~ half-N")
  m <- prior_model(prior, 4)
  t <- c(1, -2, 0.5, -0.1)
  expect_equal(log_prior(m, t), sum(dnorm(t[1:2], 0, 10, log = TRUE)) +
                 sum(log(2) + dnorm(exp(t[3:4]), 0, 1, log = TRUE) + t[3:4]))
  expect_match(m$details[["prior"]], "theta1, theta2: N\\(0, sd = 10\\); theta3, theta4: exp")
})

test_that("priors check their arguments and their fit to the model", {
  expect_error(normal_prior(sd = -1), "`sd` must be", class = "sgais_error")
  expect_error(normal_prior(mean = Inf), "`mean` must be a finite number", class = "sgais_error")
  expect_error(student_t_prior(df = 0), "`df`", class = "sgais_error")
  expect_error(half_normal_prior(dim = 0), "`dim`", class = "sgais_error")
  expect_error(c(normal_prior(), 1), "Only priors", class = "sgais_error")
  expect_error(prior_model(c(normal_prior(), normal_prior()), 2), "At most one block",
               class = "sgais_error")
  expect_error(prior_model(normal_prior(dim = 2), 3), "covers 2 parameters, but the model has 3",
               class = "sgais_error")
  expect_error(prior_model(c(normal_prior(dim = 3), normal_prior()), 3), "covers more",
               class = "sgais_error")
  # C re-checks a corrupted description (sg_prior_check)
  m <- prior_model(normal_prior())
  m$hyper$prior[5, 1] <- -1
  expect_error(sgais:::model_evaluate(m, 0), "invalid location, scale or df",
               class = "sgais_error_input")
  m$hyper$prior <- "nonsense"
  expect_error(sgais:::model_evaluate(m, 0), "not a prior description")
})

# ---- the regressions' `prior` and `prior_intercept` (regression_prior() in R/prior.R)

test_that("the paper's prior given through `prior` is the paper's model, bit for bit", {
  data <- simulate_linear_regression(300, seed = 2)
  plain <- linear_regression(y ~ ., data, prior_sd = 2, noise_sd = 1)
  same <- linear_regression(y ~ ., data, prior = normal_prior(0, 2),
                            prior_intercept = normal_prior(sd = 2), noise_sd = 1)
  expect_identical(same$hyper, plain$hyper)
  expect_null(same$hyper[["prior"]])
  expect_identical(log_evidence(quiet_sgais(same, seed = 1)),
                   log_evidence(quiet_sgais(plain, seed = 1)))
  # what is not given keeps N(0, prior_sd^2)
  part <- linear_regression(y ~ ., data, prior_sd = 2, prior_intercept = normal_prior(1, 2),
                            noise_sd = 1)
  expect_equal(part$hyper[["prior"]][4:5, ], cbind(c(1, 2), c(0, 2)))
})

test_that("exact_log_evidence with a mean and sd per coefficient matches a dense computation", {
  data <- simulate_linear_regression(60, dim = 3, noise_sd = 0.7, seed = 8)
  a <- cbind(1, as.matrix(data[, 1:3]))
  mean <- c(2, 0.5, -0.5, 0)
  sd <- c(3, 2, 0.5, 1)
  prior <- normal_prior(mean = mean[-1], sd = sd[-1])
  intercept <- normal_prior(mean[1], sd[1])
  known <- linear_regression(y ~ ., data, noise_sd = 0.7, prior = prior, prior_intercept = intercept)
  expect_equal(exact_log_evidence(known), dense_log_evidence(a, data$y, 0.7, sd, mean),
               tolerance = 1e-10)
  expect_equal(exact_log_evidence(known, n = c(10, 40)),
               c(dense_log_evidence(a[1:10, ], data$y[1:10], 0.7, sd, mean),
                 dense_log_evidence(a[1:40, ], data$y[1:40], 0.7, sd, mean)), tolerance = 1e-10)
  # unknown variance: y ~ t_{2a}(A m, (b / a)(I + A diag(s^2) A')), a multivariate t
  nig <- linear_regression(y ~ ., data, noise_sd = NULL, prior = prior, prior_intercept = intercept,
                           variance_shape = 2, variance_scale = 0.5)
  n <- nrow(a)
  s <- (0.5 / 2) * (diag(n) + tcrossprod(sweep(a, 2, sd, `*`)))
  r <- data$y - drop(a %*% mean)
  ld <- as.numeric(determinant(s, logarithm = TRUE)$modulus)
  dense_t <- lgamma((4 + n) / 2) - lgamma(2) - n / 2 * log(4 * pi) - ld / 2 -
    (4 + n) / 2 * log1p(drop(crossprod(r, solve(s, r))) / 4)
  expect_equal(exact_log_evidence(nig), dense_t, tolerance = 1e-10)
  # a Student-t or Cauchy prior has no closed form
  expect_error(exact_log_evidence(linear_regression(y ~ ., data, prior = cauchy_prior(),
                                                    noise_sd = 1)),
               "no closed form", class = "sgais_error_no_closed_form")
})

test_that("every regression's C log prior is its blocks': normal, Student-t and Cauchy", {
  test_tags("memcheck")
  data <- simulate_linear_regression(40, dim = 2, seed = 3)
  data$k <- rpois(40, 2)
  data$b <- as.numeric(data$y > 0)
  data$cl <- factor(rep(c("a", "b", "c"), length.out = 40))
  prior <- cauchy_prior(location = c(1, -1), scale = c(2, 0.5))
  intercept <- normal_prior(3, 4)
  # R's densities of (intercept, x1, x2) and their gradient
  ref <- function(t) {
    list(lp = dnorm(t[1], 3, 4, log = TRUE) + sum(dt((t[2:3] - c(1, -1)) / c(2, 0.5), 1, log = TRUE) -
                                                  log(c(2, 0.5))),
         grad = c(-(t[1] - 3) / 16, -2 * (t[2:3] - c(1, -1)) / (c(2, 0.5)^2 + (t[2:3] - c(1, -1))^2)))
  }
  t <- c(0.4, 2.5, -0.2)
  models <- list(
    linear_regression(y ~ x1 + x2, data, prior = prior, prior_intercept = intercept, noise_sd = 1),
    logistic_regression(b ~ x1 + x2, data, prior = prior, prior_intercept = intercept),
    poisson_regression(k ~ x1 + x2, data, prior = prior, prior_intercept = intercept)
  )
  for (m in models) {
    ev <- sgais:::model_evaluate(m, t)
    expect_equal(ev$log_prior, ref(t)$lp)
    expect_equal(ev$grad_log_prior, ref(t)$grad)
  }
  # robust regression: then the half-normal on sigma = exp(theta[4])
  r <- robust_regression(y ~ x1 + x2, data, prior = prior, prior_intercept = intercept,
                         scale_prior = 2)
  ev <- sgais:::model_evaluate(r, c(t, -0.3))
  expect_equal(ev$log_prior, ref(t)$lp + log(2) + dnorm(exp(-0.3), 0, 2, log = TRUE) - 0.3)
  # softmax regression: the same prior in every class
  s <- softmax_regression(cl ~ x1 + x2, data, prior = prior, prior_intercept = intercept)
  u <- c(t, t + 0.3, t - 1)
  ev <- sgais:::model_evaluate(s, u)
  expect_equal(ev$log_prior, ref(t)$lp + ref(t + 0.3)$lp + ref(t - 1)$lp)
  expect_equal(ev$grad_log_prior, c(ref(t)$grad, ref(t + 0.3)$grad, ref(t - 1)$grad))
  # unknown variance: theta | sigma^2 ~ N(m, sigma^2 s^2), sigma^2 ~ InvGamma(1, 1), with the
  # Jacobian of log sigma^2
  nig <- linear_regression(y ~ x1 + x2, data, noise_sd = NULL, prior = normal_prior(c(1, -1), c(2, 0.5)),
                           prior_intercept = intercept)
  u <- c(t, 0.7)
  sigma <- exp(0.35)
  expect_equal(sgais:::model_evaluate(nig, u)$log_prior,
               sum(dnorm(t, c(3, 1, -1), c(4, 2, 0.5) * sigma, log = TRUE)) +
                 (-2 * 0.7 - exp(-0.7)) + 0.7)
})

test_that("a regression's prior draws follow its blocks", {
  data <- simulate_linear_regression(20, dim = 2, seed = 3)
  m <- linear_regression(y ~ ., data, prior = cauchy_prior(location = c(1, -1), scale = c(2, 0.5)),
                         prior_intercept = normal_prior(3, 4), noise_sd = 1)
  draws <- withr::with_seed(2, sgais:::model_prior_draw(m, 4000))
  expect_gt(ks.test(draws[1, ], "pnorm", 3, 4)$p.value, 1e-3)
  expect_gt(ks.test((draws[2, ] - 1) / 2, "pcauchy")$p.value, 1e-3)
  expect_gt(ks.test((draws[3, ] + 1) / 0.5, "pcauchy")$p.value, 1e-3)
})

test_that("SGAIS, AIS and nested sampling recover the evidence under a prior per coefficient", {
  # Single default-preset runs, seeds 1-8 (calibration: inst/design.md), error against
  # the exact evidence, mean / sd: known noise SGAIS -0.02 / 0.32, AIS -0.14 / 0.25, NS
  # +0.01 / 0.50; unknown variance SGAIS -0.03 / 0.30, AIS -0.12 / 0.27, NS -0.05 / 0.24.
  # Seed 11 must lie within the mean +/- 4 sd.
  calibrated <- list(known = rbind(sgais = c(-0.016, 0.318), ais = c(-0.136, 0.252),
                                   ns = c(0.006, 0.503)),
                     nig = rbind(sgais = c(-0.027, 0.295), ais = c(-0.115, 0.265),
                                 ns = c(-0.047, 0.238)))
  models <- list(known = prior_test_model(), nig = prior_test_model(noise_sd = NULL))
  for (name in names(models)) {
    model <- models[[name]]
    exact <- exact_log_evidence(model)
    fits <- list(sgais = quiet_sgais(model, seed = 11),
                 ais = quietly(ais(model, seed = 11, progress = FALSE)),
                 ns = quietly(nested_sampling(model, seed = 11, progress = FALSE)))
    for (method in names(fits)) {
      bias_sd <- calibrated[[name]][method, ]
      expect_lt(abs(log_evidence(fits[[method]]) - exact - bias_sd[1]), 4 * bias_sd[2])
    }
  }
})

test_that("regression priors are printed and checked, naming the argument", {
  data <- simulate_linear_regression(30, dim = 2, seed = 1)
  m <- linear_regression(y ~ ., data, prior = student_t_prior(5, scale = c(1, 2)),
                         prior_intercept = normal_prior(10, 5), noise_sd = 1)
  expect_output(print(m), "\\(Intercept\\): N\\(10, sd = 5\\); x1: 0 \\+ 1 t\\(df = 5\\); x2: 0 \\+ 2 t")
  expect_output(print(softmax_regression(Species ~ Petal.Width, iris, prior = normal_prior(0, 3))),
                "Petal.Width: N\\(0, sd = 3\\); the same in every class")
  expect_error(linear_regression(y ~ ., data, prior = normal_prior(sd = 1:3), noise_sd = 1),
               "`prior` gives 3 sds for 2 coefficients", class = "sgais_error_prior")
  expect_error(linear_regression(y ~ ., data, prior_intercept = normal_prior(c(0, 1)),
                                 noise_sd = 1),
               "`prior_intercept` gives 2 means for 1 coefficient", class = "sgais_error_prior")
  expect_error(linear_regression(y ~ . - 1, data, prior_intercept = normal_prior(), noise_sd = 1),
               "no intercept", class = "sgais_error_prior")
  expect_error(linear_regression(y ~ ., data, prior = half_normal_prior(), noise_sd = 1),
               "`prior` must be `normal_prior\\(\\)`, `student_t_prior\\(\\)` or `cauchy_prior\\(\\)`",
               class = "sgais_error_prior")
  expect_error(linear_regression(y ~ ., data, prior = 2, noise_sd = 1), "`prior` must be",
               class = "sgais_error_prior")
  expect_error(linear_regression(y ~ ., data, prior = normal_prior(dim = 3),
                                 noise_sd = 1), "leave `dim` unset",
               class = "sgais_error_prior")
  expect_error(linear_regression(y ~ ., data, noise_sd = NULL, prior = cauchy_prior()),
               "conjugate", class = "sgais_error_prior")
  expect_error(normal_prior(sd = c(1, -1)), "`sd` must be a positive finite number",
               class = "sgais_error")
  expect_error(normal_prior(mean = 1:3, dim = 2), "3 values for `dim` = 2", class = "sgais_error")
  # a corrupted block matrix is refused before the C core trusts it
  bad <- linear_regression(y ~ ., data, prior_intercept = normal_prior(1), noise_sd = 1)
  bad$hyper$prior <- bad$hyper[["prior"]][1:5, ]
  expect_error(sgais(bad, progress = FALSE), "hyper\\$prior", class = "sgais_error_invalid_model")
})

test_that("a regression with priors of its own continues on new rows as one run", {
  data <- simulate_linear_regression(900, dim = 2, seed = 4)
  build <- function(rows) {
    logistic_regression(I(y > 0) ~ x1 + x2, data[rows, ], prior = cauchy_prior(scale = c(1, 3)),
                        prior_intercept = normal_prior(-1, 2))
  }
  # (20 particles: continuation does not depend on their number)
  whole <- quiet_sgais(build(1:900), particles = 20, early_particles = 20, seed = 2)
  first <- quiet_sgais(build(1:600), particles = 20, early_particles = 20, seed = 2)
  expect_identical(log_evidence(quietly(sgais(first, data[601:900, ], progress = FALSE))),
                   log_evidence(whole))
})

# ---- prior = "autoscale"

test_that("with prior = \"autoscale\" no Bayes factor depends on the data's units", {
  bf <- function(d, bigger, smaller, ...) {
    ev <- function(f) exact_log_evidence(linear_regression(f, d, prior = "autoscale", ...))
    ev(bigger) - ev(smaller)
  }
  # unknown variance: weight in kg and pounds, power in kW, qsec shifted, mpg in km/l
  other <- transform(mtcars, mpg = 0.425 * mpg + 3, wt = 453.6 * wt, hp = 0.7457 * hp,
                     qsec = 60 * qsec - 100)
  for (f in list(mpg ~ wt + hp + qsec, mpg ~ wt, mpg ~ hp + qsec)) {
    expect_equal(bf(other, f, mpg ~ wt + hp, noise_sd = NULL),
                 bf(mtcars, f, mpg ~ wt + hp, noise_sd = NULL), tolerance = 1e-8)
  }
  # known noise, stated in the response's units
  expect_equal(bf(other, mpg ~ wt + hp + qsec, mpg ~ wt, noise_sd = 0.425 * 2.5),
               bf(mtcars, mpg ~ wt + hp + qsec, mpg ~ wt, noise_sd = 2.5), tolerance = 1e-8)
  # logistic regression: a covariate in other units is a reparameterisation (slope / 453.6):
  # the same likelihood, and a prior density differing by its constant Jacobian, so the same
  # evidence
  lg <- logistic_regression(am ~ wt + hp, mtcars, prior = "autoscale")
  kg <- logistic_regression(am ~ wt + hp, transform(mtcars, wt = 453.6 * wt), prior = "autoscale")
  at <- function(m, theta) sgais:::model_evaluate(m, theta)
  for (theta in list(c(0.3, -2, 0.01), c(-1, 1, -0.02))) {
    a <- at(lg, theta)
    b <- at(kg, theta / c(1, 453.6, 1))
    expect_equal(b$log_lik, a$log_lik, tolerance = 1e-12)
    expect_equal(b$log_prior - a$log_prior, log(453.6), tolerance = 1e-10)
  }
})

test_that("prior = \"autoscale\" gives BIC's Bayes factors where the paper's prior did not", {
  # mtcars, mpg ~ wt + hp against + qsec: BIC says -0.98, BayesFactor::lmBF -1.3 (issue 41);
  # the paper's prior (`prior = "paper"`, the default before autoscale) said +21.7, the intercept's N(0, sigma^2)
  # prior being far from mpg's 10-34. birthwt, lwt (mother's weight, pounds): BIC +0.12.
  ev <- function(f, d, ...) exact_log_evidence(linear_regression(f, d, noise_sd = NULL, ...))
  bic <- function(f, d) -stats::BIC(stats::lm(f, d)) / 2
  auto <- ev(mpg ~ wt + hp + qsec, mtcars, prior = "autoscale") -
    ev(mpg ~ wt + hp, mtcars, prior = "autoscale")
  paper <- ev(mpg ~ wt + hp + qsec, mtcars, prior = "paper") -
    ev(mpg ~ wt + hp, mtcars, prior = "paper")
  # the default is autoscale
  expect_identical(ev(mpg ~ wt + hp + qsec, mtcars) - ev(mpg ~ wt + hp, mtcars), auto)
  by_bic <- bic(mpg ~ wt + hp + qsec, mtcars) - bic(mpg ~ wt + hp, mtcars)
  expect_lt(abs(auto - by_bic), 0.5)
  expect_gt(paper, 20)
  skip_if_not_installed("MASS")
  bw <- MASS::birthwt
  auto <- ev(bwt ~ age + lwt + smoke, bw, prior = "autoscale") -
    ev(bwt ~ age + smoke, bw, prior = "autoscale")
  expect_lt(abs(auto - (bic(bwt ~ age + lwt + smoke, bw) - bic(bwt ~ age + smoke, bw))), 0.5)
})

test_that("prior = \"autoscale\" centres new rows as its own and prints its rule", {
  data <- simulate_linear_regression(300, dim = 2, seed = 7)
  data$x1 <- 100 + 50 * data$x1
  m <- linear_regression(y ~ ., data[1:200, ], prior = "autoscale", noise_sd = 1)
  expect_output(print(m), "scaling: +prior = \"autoscale\": covariates centred at their means")
  expect_equal(unname(colMeans(t(m$data$xt))[2:3]), c(0, 0), tolerance = 1e-12)
  # the rows 201-300 as new rows: centred at the first 200's means
  more <- sgais:::model_with_data(m, data)
  expect_equal(more$data$xt[, 1:200], m$data$xt)
  # a fit continued on them is the fit of all the rows on that model
  whole <- quiet_sgais(more, seed = 3)
  first <- quiet_sgais(m, seed = 3)
  expect_identical(log_evidence(quietly(sgais(first, data[201:300, ], progress = FALSE))),
                   log_evidence(whole))
  # every regression takes it
  d <- transform(data, k = rpois(300, 2), b = as.numeric(y > 0),
                 cl = factor(rep(c("a", "b", "c"), 100)))
  for (model in list(robust_regression(y ~ x1 + x2, d, prior = "autoscale"),
                     poisson_regression(k ~ x1 + x2, d, prior = "autoscale"),
                     negative_binomial_regression(k ~ x1 + x2, d, prior = "autoscale"),
                     softmax_regression(cl ~ x1 + x2, d, prior = "autoscale"))) {
    expect_match(model$details[["scaling"]], "autoscale")
    expect_equal(rowMeans(model$data$xt)[-1], c(0, 0), tolerance = 1e-12, ignore_attr = TRUE)
  }
})

test_that("prior = \"autoscale\" says what it cannot do", {
  d <- simulate_linear_regression(50, dim = 2, seed = 1)
  expect_error(linear_regression(y ~ ., transform(d, x2 = 1), prior = "autoscale", noise_sd = 1),
               "`x2` has none there", class = "sgais_error_prior")
  expect_error(linear_regression(y ~ ., transform(d, x2 = 1), noise_sd = 1), "\\(the default\\)",
               class = "sgais_error_prior")
  expect_error(linear_regression(y ~ ., d, prior = "auto",
                                 noise_sd = 1), "\"autoscale\" or \"paper\"",
               class = "sgais_error_prior")
  expect_error(linear_regression(y ~ ., transform(d, y = 1), prior = "autoscale", noise_sd = 1),
               "response has no spread", class = "sgais_error_prior")
})

test_that("autoscale is the default; prior_sd or prior = \"paper\" give the paper's prior", {
  d <- simulate_linear_regression(120, dim = 2, seed = 8)
  d$x1 <- 40 + 10 * d$x1
  default <- linear_regression(y ~ ., d, noise_sd = 0.5)
  expect_identical(default, linear_regression(y ~ ., d, noise_sd = 0.5, prior = "autoscale"))
  expect_match(default$details[["scaling"]], "autoscale")
  # the paper's prior: N(0, prior_sd^2) on the uncentred design, its model as before autoscale
  paper <- linear_regression(y ~ ., d, noise_sd = 0.5, prior = "paper")
  expect_null(paper$hyper[["prior"]])
  expect_null(paper$spec$center)
  expect_identical(paper$data$xt[2, ], d$x1)
  expect_identical(linear_regression(y ~ ., d, noise_sd = 0.5, prior_sd = 1)$data, paper$data)
  expect_identical(exact_log_evidence(linear_regression(y ~ ., d, noise_sd = 0.5, prior_sd = 2)),
                   exact_log_evidence(linear_regression(y ~ ., d, noise_sd = 0.5, prior_sd = 2,
                                                        prior = "paper")))
  # every regression's default
  d$k <- stats::rpois(120, 3)
  for (model in list(linear_regression(y ~ x1, d, noise_sd = NULL), robust_regression(y ~ x1, d),
                     logistic_regression(I(y > 0) ~ x1, d), poisson_regression(k ~ x1, d),
                     negative_binomial_regression(k ~ x1, d))) {
    expect_match(model$details[["scaling"]], "autoscale", info = model$family)
  }
})

test_that("autoscale through the origin, and with a prior_intercept of the user's", {
  d <- simulate_linear_regression(200, dim = 2, seed = 9)
  d$x2 <- d$x2 + 3
  origin <- linear_regression(y ~ x1 + x2 - 1, d, noise_sd = 1)
  # no centring; each slope's sd is noise_sd over the covariate's root mean square
  expect_identical(origin$data$xt[2, ], d$x2)
  rms <- sqrt(colMeans(as.matrix(d[c("x1", "x2")])^2))
  expect_equal(sgais:::coef_prior_moments(origin, 2)$scale, unname(1 / rms))
  expect_match(origin$details[["scaling"]], "no intercept")
  # still unit-free: a covariate in other units gives the same evidence
  expect_equal(exact_log_evidence(linear_regression(y ~ x1 + x2 - 1, transform(d, x2 = x2 * 1000),
                                                    noise_sd = 1)),
               exact_log_evidence(origin), tolerance = 1e-10)
  # the user's intercept prior, on the centred design's intercept
  own <- linear_regression(y ~ ., d, prior_intercept = normal_prior(5, 2), noise_sd = 1)
  expect_equal(sgais:::coef_prior_moments(own, 3)$location[1], 5)
  expect_equal(sgais:::coef_prior_moments(own, 3)$scale[1], 2)
  expect_equal(rowMeans(own$data$xt)[-1], c(0, 0), tolerance = 1e-12, ignore_attr = TRUE)
  expect_match(own$details[["scaling"]], "intercept: `prior_intercept`")
})

test_that("a default-prior model built on a few rows warns when given more rows to fit", {
  d <- simulate_linear_regression(300, dim = 2, seed = 10)
  expect_warning(sgais_stream(linear_regression(y ~ ., head(d),
                                                noise_sd = 1), d, seed = 1, progress = FALSE),
                 "built on 6 rows", class = "sgais_warning_autoscale_rows")
  # one warning for each model
  said <- collect_warnings(
    compare_models(list(a = linear_regression(y ~ x1, d[1:20, ], noise_sd = 1),
                        b = linear_regression(y ~ ., d[1:20, ],
                                              noise_sd = 1)), d, seed = 1, progress = FALSE, method = "sgais"),
    "sgais_warning_autoscale_rows")$warnings
  expect_length(said, 2)
  expect_match(said[1], "Model `a` was built on 20 rows")
  expect_match(said[2], "Model `b` was built on 20 rows")
  # a small data set compared on itself, a model of the paper's prior, or one built on enough rows
  small <- d[1:30, ]
  expect_no_warning(compare_models(list(a = y ~ x1, b = y ~ .), small, family = "gaussian",
                                   seed = 1, progress = FALSE, method = "sgais"),
                    class = "sgais_warning_autoscale_rows")
  expect_no_warning(sgais_stream(linear_regression(y ~ ., head(d), prior = "paper",
                                                   noise_sd = 1), d, seed = 1,
                                 progress = FALSE), class = "sgais_warning_autoscale_rows")
  expect_no_warning(sgais_stream(linear_regression(y ~ ., d[1:150, ], noise_sd = 1), d, seed = 1,
                                 progress = FALSE), class = "sgais_warning_autoscale_rows")
})
