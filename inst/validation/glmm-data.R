# Simulated grouped data for GLMs with a random intercept per group (R/glm_mixed.R), shared by
# the validation (glmm.R), its Stan + bridgesampling references (glmm-references.R) and the
# bench (inst/bench/glmm.R), so that each computes on the same rows:
#   eta = b0 + b1 x1 + b2 x2 + u_g,  u_g ~ N(0, tau^2),  x1, x2 ~ N(0, 1),
# each row's group drawn uniformly from `groups` (so groups have about n / groups rows each).
# logistic: y ~ Bernoulli(plogis(eta)), b = (-0.3, 0.8, -0.5), tau = 0.6;
# poisson: y ~ Poisson(exp(eta)), b = (0.5, 0.3, -0.2), tau = 0.4;
# negative_binomial: y ~ NB(mean exp(eta), size 1 / omega^2), b as Poisson's, omega = 0.5.
glmm_data <- function(family, n, groups, seed) {
  family <- match.arg(family, c("logistic", "poisson", "negative_binomial"))
  withr::with_seed(seed, {
    x1 <- stats::rnorm(n)
    x2 <- stats::rnorm(n)
    g <- sample.int(groups, n, replace = TRUE)
    b <- if (family == "logistic") c(-0.3, 0.8, -0.5) else c(0.5, 0.3, -0.2)
    tau <- if (family == "logistic") 0.6 else 0.4
    u <- stats::rnorm(groups, 0, tau)
    eta <- b[1] + b[2] * x1 + b[3] * x2 + u[g]
    y <- switch(family,
      logistic = stats::rbinom(n, 1, stats::plogis(eta)),
      poisson = stats::rpois(n, exp(eta)),
      negative_binomial = stats::rnbinom(n, size = 1 / 0.5^2, mu = exp(eta)))
  })
  data.frame(y = y, x1 = x1, x2 = x2, g = sprintf("g%04d", g))
}

# The priors the validation and its references share: every coefficient N(0, 2.5^2) on the
# design as given (prior = "paper", no centring), the group sd half-normal(1), and (negative
# binomial) the overdispersion omega half-normal(1), the package's default for it.
glmm_prior_sd <- 2.5
glmm_group_sd_scale <- 1

# Random slopes: the same designs with a random intercept and a random slope of x1 per group,
# correlated 0.5, eta = b0 + b1 x1 + b2 x2 + u_g + v_g x1, sds (0.6, 0.4) (logistic) or (0.4,
# 0.3) (Poisson), b as above; and the priors the validation and its references share: every
# coefficient N(0, 2.5^2) (prior = "paper"), both group sds half-normal(1), their correlation
# LKJ(2).
glmm_slopes_data <- function(family, n, groups, seed) {
  family <- match.arg(family, c("logistic", "poisson"))
  withr::with_seed(seed, {
    x1 <- stats::rnorm(n)
    x2 <- stats::rnorm(n)
    g <- sample.int(groups, n, replace = TRUE)
    b <- if (family == "logistic") c(-0.3, 0.8, -0.5) else c(0.5, 0.3, -0.2)
    sds <- if (family == "logistic") c(0.6, 0.4) else c(0.4, 0.3)
    e <- matrix(stats::rnorm(2 * groups), groups) %*% chol(matrix(c(1, 0.5, 0.5, 1), 2))
    eta <- b[1] + b[2] * x1 + b[3] * x2 + sds[1] * e[g, 1] + sds[2] * e[g, 2] * x1
    y <- if (family == "logistic") stats::rbinom(n, 1, stats::plogis(eta)) else
      stats::rpois(n, exp(eta))
  })
  data.frame(y = y, x1 = x1, x2 = x2, g = sprintf("g%04d", g))
}
glmm_slopes_model <- function(family, d) {
  ctor <- if (family == "logistic") sgais::logistic_regression else sgais::poisson_regression
  ctor(y ~ x1 + x2 + (1 + x1 | g), d, prior = "paper", prior_sd = glmm_prior_sd,
       group_sd = sgais::half_normal_prior(1), group_cor = sgais::lkj_prior(2))
}
