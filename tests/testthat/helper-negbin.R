# The negative binomial tests' model and reference (test-negative_binomial_regression.R,
# inst/validation/quick.R): counts with an intercept only, so that the posterior is over two
# parameters, b and t = log omega (omega the overdispersion, size = omega^-2).

# n counts with mean exp(0.7) and size 2 (omega 0.71), simulated with `seed`.
negbin_counts <- function(n = 300, seed = 6) {
  withr::with_seed(seed, data.frame(y = stats::rnbinom(n, mu = exp(0.7), size = 2)))
}

# The evidence of negative_binomial_regression(y ~ 1, prior_sd, overdispersion_prior) by the
# midpoint rule on a `points` x `points` grid over the posterior mode +/- `width` of its
# standard deviations (from the Hessian at the mode), summed in the log; written with dnbinom(),
# dnorm() and the half-normal's log-Jacobian, independently of the package. The posterior is
# smooth and light-tailed, so the rule converges fast once the grid resolves it: 81 points over
# +/- 10 sd agree with 161 over +/- 12 to 1e-9 on the tests' data.
negbin_quadrature_log_evidence <- function(y, prior_sd = 2.5, omega_sd = 1, points = 81,
                                           width = 10) {
  log_joint <- function(b, t) {
    sum(stats::dnbinom(y, mu = exp(b), size = exp(-2 * t), log = TRUE)) +
      stats::dnorm(b, 0, prior_sd, log = TRUE) + log(2) + stats::dnorm(exp(t), 0, omega_sd, log = TRUE) + t
  }
  fit <- stats::optim(c(log(mean(y)), -0.5), function(p) -log_joint(p[1], p[2]), hessian = TRUE,
                      method = "BFGS")
  sd <- sqrt(diag(solve(fit$hessian)))
  b <- seq(fit$par[1] - width * sd[1], fit$par[1] + width * sd[1], length.out = points)
  t <- seq(fit$par[2] - width * sd[2], fit$par[2] + width * sd[2], length.out = points)
  lp <- outer(b, t, Vectorize(log_joint))
  m <- max(lp)
  m + log(sum(exp(lp - m))) + log(b[2] - b[1]) + log(t[2] - t[1])
}
