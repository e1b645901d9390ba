# Shared fixtures for the logistic- and Poisson-regression tests.

# An independent reference evidence for a model with an intercept `b0` and one slope `b1`, each
# N(0, prior_sd^2) a priori: the midpoint rule on a `points` x `points` grid over
# centre +/- halfwidth, summed in the log (log-sum-exp). `log_lik(b0, b1)` is written in R by the
# test (dbinom, dpois), for one b0 and a vector of b1. The posterior is smooth and decays like a
# Gaussian, so the rule converges spectrally once the grid resolves it: centred at the maximum
# likelihood estimate with a half-width of 10 standard errors, 61 points per axis already agree
# with 241 to 1e-10 on the tests' data.
grid_log_evidence <- function(log_lik, centre, halfwidth, points, prior_sd) {
  b0 <- seq(centre[1] - halfwidth[1], centre[1] + halfwidth[1], length.out = points)
  b1 <- seq(centre[2] - halfwidth[2], centre[2] + halfwidth[2], length.out = points)
  lp <- vapply(b0, function(a) log_lik(a, b1), numeric(points)) # b1 along rows, b0 along columns
  lp <- lp + outer(stats::dnorm(b1, sd = prior_sd, log = TRUE),
                   stats::dnorm(b0, sd = prior_sd, log = TRUE), "+")
  m <- max(lp)
  m + log(sum(exp(lp - m))) + log(b0[2] - b0[1]) + log(b1[2] - b1[1])
}

# An estimate agrees with the reference when its error, less the mean error measured over
# replicate seeds (`bias`), is within 4 of their sds (`sd`).
expect_near_reference <- function(estimate, reference, bias, sd) {
  expect_lt(abs(estimate - reference - bias), 4 * sd)
}

# model_data() of each piece of new rows, bound back together into one data list, as
# model_add_rows() binds them.
bind_model_data <- function(model, pieces) {
  Reduce(sgais:::data_bind, lapply(pieces, function(rows) model_data(model, rows)))
}

# The rows of a data frame (or the elements of a list of equally long vectors and matrices)
# cut before the rows `at`.
cut_rows <- function(data, at) {
  n <- if (is.data.frame(data)) nrow(data) else NROW(data[[1]])
  ends <- c(at - 1L, n)
  starts <- c(1L, at)
  lapply(seq_along(starts), function(i) {
    rows <- seq.int(starts[i], ends[i])
    if (is.data.frame(data)) return(data[rows, , drop = FALSE])
    lapply(data, function(x) if (is.null(dim(x))) x[rows] else x[rows, , drop = FALSE])
  })
}

# The FlyMC tests' model (test-kernels.R and its calibration in inst/design.md): logistic
# regression on an intercept and one standard normal covariate, n observations with
# P(y = 1) = plogis(-0.5 + 1.2 x1), simulated with `seed`; and its evidence by the grid rule.
flymc_model <- function(n = 1000, seed = 4) {
  data <- withr::with_seed(seed, {
    x1 <- stats::rnorm(n)
    data.frame(x1 = x1, y = stats::rbinom(n, 1, stats::plogis(-0.5 + 1.2 * x1)))
  })
  logistic_regression(y ~ x1, prior = "paper", data = data)
}
flymc_reference <- function(model) {
  x1 <- model$data$xt[2, ]
  y <- model$data$y
  fit <- stats::glm(y ~ x1, family = stats::binomial())
  log_lik <- function(b0, b1) {
    vapply(b1, function(b) sum(stats::plogis(ifelse(y == 1, 1, -1) * (b0 + b * x1),
                                             log.p = TRUE)), 0)
  }
  grid_log_evidence(log_lik, stats::coef(fit), 10 * sqrt(diag(stats::vcov(fit))), 61,
                    model$hyper$prior_sd)
}

# The softmax FlyMC tests' model (test-kernels.R and its calibration in inst/design.md): softmax
# regression with 3 classes on an intercept and 2 covariates (9 parameters), n observations of
# simulate_softmax_regression() with `seed`.
flymc_softmax_model <- function(n = 1000, seed = 4) {
  softmax_regression(y ~ ., prior = "paper", data = simulate_softmax_regression(n, dim = 2, classes = 3, seed = seed))
}

# The posterior mode of a softmax regression, the Hessian H of -log posterior there, the
# unnormalised log posterior of each column of a d x B matrix of parameters (`log_post`), and the
# Laplace approximation of log Z (`laplace`), for softmax_reference() and the benchmarks.
softmax_laplace_fit <- function(model) {
  a <- t(model$data$xt)
  y <- model$data$y
  p <- ncol(a)
  K <- length(model$classes)
  d <- K * p
  sd <- model$hyper$prior_sd
  onehot <- outer(y, seq_len(K), "==")
  rows <- function(k) (k - 1) * p + seq_len(p) # class k's block of theta
  log_post <- function(theta) {
    eta <- lapply(seq_len(K), function(k) a %*% theta[rows(k), , drop = FALSE])
    m <- Reduce(pmax, eta)
    lse <- m + log(Reduce(`+`, lapply(eta, function(e) exp(e - m))))
    fit <- Reduce(`+`, lapply(seq_len(K), function(k) colSums(onehot[, k] * eta[[k]])))
    fit - colSums(lse) + colSums(stats::dnorm(theta, sd = sd, log = TRUE))
  }
  probs <- function(theta) {
    eta <- a %*% matrix(theta, p, K)
    e <- exp(eta - apply(eta, 1, max))
    e / rowSums(e)
  }
  grad <- function(theta) c(crossprod(a, onehot - probs(theta))) - theta / sd^2
  mode <- stats::optim(rep(0, d), function(th) -log_post(matrix(th)), function(th) -grad(th),
                       method = "BFGS", control = list(reltol = 1e-14, maxit = 1000))$par
  # the Hessian of -log posterior: sum_i (diag(pi_i) - pi_i pi_i') (x) a_i a_i' + I / sd^2
  pr <- probs(mode)
  H <- diag(1 / sd^2, d)
  for (k in seq_len(K)) {
    for (l in seq_len(K)) H[rows(k), rows(l)] <- H[rows(k), rows(l)] +
        crossprod(a, a * (pr[, k] * ((k == l) - pr[, l])))
  }
  laplace <- log_post(matrix(mode)) + d / 2 * log(2 * pi) - sum(log(diag(chol(H))))
  list(log_post = log_post, mode = mode, H = H, laplace = laplace)
}

# A reference evidence for a softmax regression by importance sampling: the posterior is
# log-concave (a log-concave likelihood times a normal prior) and near-Gaussian, so a
# multivariate t proposal (`df` degrees of freedom; heavier tails than the posterior's) centred
# at the mode with the inverse Hessian there as scale keeps most of its draws (ESS about 70% of
# `draws` on the tests' model): t_importance_evidence().
softmax_reference <- function(model, draws = 10000, seed = 1, df = 5) {
  fit <- softmax_laplace_fit(model)
  t_importance_evidence(fit$log_post, fit$mode, fit$H, draws, seed, df, block = 500)
}

# log Z = log mean(p(y | theta) p(theta) / q(theta)) over `draws` draws from q, a multivariate
# t(`df`) at `mode` with scale H^{-1} (H the Hessian of -log posterior there), summed in the log;
# `log_post` takes a d x B matrix of parameters, evaluated `block` columns at a time. Returns
# the log evidence with its delta-method standard error and the ESS. The draws use `seed` and
# leave the caller's stream alone.
t_importance_evidence <- function(log_post, mode, H, draws, seed, df, block) {
  d <- length(mode)
  R <- chol(H) # theta = mode + R^{-1} z / sqrt(w) has scale H^{-1}
  draw <- withr::with_seed(seed, list(z = matrix(stats::rnorm(d * draws), d, draws),
                                      w = stats::rchisq(draws, df) / df))
  theta <- mode + backsolve(R, draw$z) / rep(sqrt(draw$w), each = d)
  u <- R %*% (theta - mode)
  log_q <- lgamma((df + d) / 2) - lgamma(df / 2) - d / 2 * log(df * pi) + sum(log(diag(R))) -
    (df + d) / 2 * log1p(colSums(u^2) / df)
  blocks <- split(seq_len(draws), ceiling(seq_len(draws) / block))
  lw <- unlist(lapply(blocks, function(j) log_post(theta[, j, drop = FALSE]))) - log_q
  r <- exp(lw - max(lw))
  c(log_evidence = max(lw) + log(mean(r)), se = stats::sd(r) / mean(r) / sqrt(draws),
    ess = sum(r)^2 / sum(r^2))
}

# Binomial counts for the logistic tests: n rows of a standard normal covariate x, m trials
# (0 to 20, one row of 300: beyond the log-factorial table) and s ~ Binomial(m, plogis(-0.3 +
# 0.8 x)) successes, simulated with `seed`.
counts_data <- function(n, seed) {
  withr::with_seed(seed, {
    x <- stats::rnorm(n)
    m <- sample(0:20, n, TRUE)
    m[2] <- 300
    data.frame(x = x, m = m, s = stats::rbinom(n, m, stats::plogis(-0.3 + 0.8 * x)))
  })
}

# The Bernoulli rows of binomial counts: each row of `data` repeated `trials` times, its
# `successes` first copies with y = 1 and the others y = 0.
bernoulli_rows <- function(data, successes, trials) {
  rows <- data[rep(seq_len(nrow(data)), trials), , drop = FALSE]
  rows$y <- unlist(Map(function(s, m) rep(c(1, 0), c(s, m - s)), successes, trials),
                   use.names = FALSE)
  rownames(rows) <- NULL
  rows
}

# lme4::cbpp (Lesnoff et al. 2004; lme4 is not a dependency): contagious bovine pleuropneumonia,
# new cases (`incidence`) among the `size` cattle of each of 15 herds in up to 4 periods.
cbpp_data <- function() {
  data.frame(
    herd = factor(c(1, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7,
                    7, 8, 9, 9, 9, 9, 10, 10, 10, 10, 11, 11, 11, 11, 12, 12, 12, 12, 13, 13, 13,
                    13, 14, 14, 14, 14, 15, 15, 15, 15)),
    incidence = c(2, 3, 4, 0, 3, 1, 1, 8, 2, 0, 2, 2, 0, 2, 0, 5, 0, 0, 1, 3, 0, 0, 1, 8, 1, 3, 0,
                  12, 2, 0, 0, 0, 1, 1, 0, 2, 0, 5, 3, 1, 2, 1, 0, 0, 1, 2, 0, 0, 11, 0, 0, 0, 1,
                  1, 1, 0),
    size = c(14, 12, 9, 5, 22, 18, 21, 22, 16, 16, 20, 10, 10, 9, 6, 18, 25, 24, 4, 17, 17, 18, 20,
             16, 10, 9, 5, 34, 9, 6, 8, 6, 22, 22, 18, 22, 25, 27, 22, 22, 10, 8, 6, 5, 21, 24,
             19, 23, 19, 2, 3, 2, 19, 15, 15, 15),
    period = factor(c(1, 2, 3, 4, 1, 2, 3, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3,
                      4, 1, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4,
                      1, 2, 3, 4))
  )
}
