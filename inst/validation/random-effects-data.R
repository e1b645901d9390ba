# Simulated grouped data for linear regression with random effects (R/linear_mixed.R), shared by
# the validation (random-effects.R) and its Stan + bridgesampling references
# (random-effects-cor-references.R), so that each computes on the same rows:
#   y = 1 + (0.5 + v_g) x1 - 0.3 x2 + u_g + e,  (u_g, v_g) ~ N(0, sds (0.7, 0.3), correlation rho),
#   e ~ N(0, 0.5^2), x1, x2 ~ N(0, 1),
# each row's group drawn uniformly from `groups`. With rho = 0 the draws are those the
# validation used before correlated effects existed (u, then v, from the same stream).
random_effects_data <- function(seed, n = 4000, groups = 40, rho = 0) {
  withr::with_seed(seed, {
    g <- sample.int(groups, n, replace = TRUE)
    x1 <- stats::rnorm(n)
    x2 <- stats::rnorm(n)
    u <- stats::rnorm(groups, 0, 0.7)
    v <- stats::rnorm(groups, 0, 0.3)
    if (rho != 0) v <- 0.3 * (rho * u / 0.7 + sqrt(1 - rho^2) * v / 0.3)
    data.frame(y = 1 + (0.5 + v[g]) * x1 - 0.3 * x2 + u[g] + stats::rnorm(n, 0, 0.5), x1 = x1,
               x2 = x2, g = sprintf("g%02d", g))
  })
}

# The correlated model whose evidence has no closed form, with priors stated in full (no
# autoscale, so that a Stan program can state them too): coefficients N(0, 2^2) (the intercept
# N(0, 5^2)), sigma^2 ~ InvGamma(2, 0.5), group sds half-normal(1), their correlation LKJ(2).
random_effects_cor_model <- function(d) {
  sgais::linear_regression(y ~ x1 + x2 + (1 + x1 | g), d, noise_sd = NULL, variance_shape = 2,
                           variance_scale = 0.5, prior = sgais::normal_prior(0, 2),
                           prior_intercept = sgais::normal_prior(0, 5),
                           group_sd = sgais::half_normal_prior(1),
                           group_cor = sgais::lkj_prior(2))
}
random_effects_cor_rho <- 0.5
