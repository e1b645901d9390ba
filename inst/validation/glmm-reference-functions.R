# An independent reference for the evidence of GLMs with a random intercept per group (logistic,
# Poisson, negative binomial; R/glm_mixed.R), written apart from the package's C code and
# samplers: each group's effect is integrated out by adaptive Gauss-Hermite quadrature (the
# integrand's mode and curvature by Newton's method, then Q nodes about it; Pinheiro & Bates
# 1995, "Approximations to the log-likelihood function in the nonlinear mixed-effects model"),
# which leaves the few parameters phi = (beta, [log omega], log tau); their integral is by
# importance sampling from a multivariate Student-t (5 df) at the posterior mode, scaled by the
# inverse Hessian there (Geweke 1989). Returns the log evidence and its Monte Carlo SE.
# Sourced by glmm-references.R and glmm-bacteria-references.R; the data and priors are
# glmm-data.R's.

# Gauss-Hermite nodes and weights for the weight e^-x^2 (Golub-Welsch: the eigen-decomposition
# of the Jacobi matrix).
gh_rule <- function(q) {
  jacobi <- matrix(0, q, q)
  jacobi[cbind(seq_len(q - 1), 2:q)] <- sqrt(seq_len(q - 1) / 2)
  e <- eigen(jacobi + t(jacobi), symmetric = TRUE)
  list(x = e$values, w = sqrt(pi) * e$vectors[1, ]^2)
}

# log p(y | eta) and its first two derivatives in eta, for each family; NB with size phi.
glmm_family_terms <- function(family, y, eta, phi = NULL) {
  switch(family,
    logistic = {
      p <- stats::plogis(eta)
      list(value = stats::dbinom(y, 1, p, log = TRUE), d1 = y - p, d2 = -p * (1 - p))
    },
    poisson = {
      mu <- exp(eta)
      list(value = stats::dpois(y, mu, log = TRUE), d1 = y - mu, d2 = -mu)
    },
    negative_binomial = {
      mu <- exp(eta)
      list(value = stats::dnbinom(y, size = phi, mu = mu, log = TRUE),
           d1 = phi * (y - mu) / (phi + mu), d2 = -phi * mu * (phi + y) / (phi + mu)^2)
    })
}

# sum over groups of log integral prod_i p(y_i | eta_i + tau z) N(z; 0, 1) dz, by adaptive
# Gauss-Hermite quadrature with q nodes. eta: each row's linear predictor without the group
# effect; group: 1..G.
glmm_collapsed <- function(family, y, eta, group, tau, phi = NULL, q = 15, rule = gh_rule(q)) {
  G <- max(group)
  z <- numeric(G)
  for (it in 1:50) {
    t <- glmm_family_terms(family, y, eta + tau * z[group], phi)
    g1 <- drop(rowsum(t$d1, group, reorder = TRUE)) * tau - z
    g2 <- drop(rowsum(t$d2, group, reorder = TRUE)) * tau^2 - 1
    step <- pmax(pmin(g1 / g2, 1), -1) # damped: at most one prior sd per step
    if (anyNA(step)) return(-Inf)
    z <- z - step
    if (max(abs(step)) < 1e-10) break
  }
  t <- glmm_family_terms(family, y, eta + tau * z[group], phi)
  h2 <- -(drop(rowsum(t$d2, group, reorder = TRUE)) * tau^2 - 1) # the curvature at the mode
  s <- sqrt(2 / h2)
  terms <- vapply(seq_len(q), function(k) {
    zk <- z + s * rule$x[k]
    v <- drop(rowsum(glmm_family_terms(family, y, eta + tau * zk[group], phi)$value, group,
                     reorder = TRUE))
    v + stats::dnorm(zk, log = TRUE) + rule$x[k]^2 + log(rule$w[k])
  }, numeric(G))
  mx <- apply(terms, 1L, max)
  sum(mx + log(rowSums(exp(terms - mx))) + log(s))
}

# The reference for the model of glmm-data.R: `data` (y, x1, x2, g), coefficients N(0,
# prior_sd^2) on (1, x1, x2), tau ~ half-normal(tau_scale) and (negative binomial) omega ~
# half-normal(omega_scale), size 1 / omega^2. list(log_evidence, se, draws, laplace, ess).
glmm_reference <- function(family, data, prior_sd = 2.5, tau_scale = 1, omega_scale = 1,
                           draws = 4000, q = 15, seed = 1) {
  xt <- rbind(1, data$x1, data$x2)
  p <- nrow(xt)
  y <- data$y
  group <- match(data$g, unique(data$g))
  nb <- family == "negative_binomial"
  rule <- gh_rule(q)
  half_normal <- function(t, s) log(2) + stats::dnorm(exp(t), 0, s, log = TRUE) + t
  log_target <- function(phi) {
    beta <- phi[seq_len(p)]
    t_omega <- if (nb) phi[p + 1] else NULL
    t_tau <- phi[p + 1 + nb]
    lp <- sum(stats::dnorm(beta, 0, prior_sd, log = TRUE)) + half_normal(t_tau, tau_scale) +
      if (nb) half_normal(t_omega, omega_scale) else 0
    eta <- drop(crossprod(xt, beta))
    size <- if (nb) exp(-2 * t_omega) else NULL
    lp + glmm_collapsed(family, y, eta, group, exp(t_tau), size, q, rule)
  }
  laplace_t_importance(log_target, c(rep(0, p), if (nb) log(0.5), log(0.5)), draws, seed)
}

# log of the integral of exp(log_target) over R^k by importance sampling from a multivariate
# Student-t (5 df) at the mode of log_target (BFGS from `start`), scaled by 1.2 times the inverse
# Hessian there: list(log_evidence, se (delta method), draws, laplace (the Laplace
# approximation), ess).
laplace_t_importance <- function(log_target, start, draws = 4000, seed = 1) {
  safe <- function(phi) {
    v <- suppressWarnings(log_target(phi))
    if (is.finite(v)) -v else 1e300
  }
  opt <- stats::optim(start, safe, method = "BFGS", control = list(maxit = 1000, reltol = 1e-12))
  hess <- stats::optimHess(opt$par, safe)
  cov <- solve(hess) * 1.2
  k <- length(opt$par)
  laplace <- -opt$value + 0.5 * k * log(2 * pi) - 0.5 * determinant(hess)$modulus[[1]]
  df <- 5
  chol_cov <- chol(cov)
  x <- withr::with_seed(seed, {
    zz <- matrix(stats::rnorm(draws * k), draws, k)
    w <- sqrt(df / stats::rchisq(draws, df))
    sweep(zz %*% chol_cov * w, 2, opt$par, `+`)
  })
  log_q <- apply(x, 1L, function(v) {
    d <- backsolve(chol_cov, v - opt$par, transpose = TRUE)
    lgamma((df + k) / 2) - lgamma(df / 2) - 0.5 * k * log(df * pi) - sum(log(diag(chol_cov))) -
      0.5 * (df + k) * log1p(sum(d^2) / df)
  })
  log_w <- apply(x, 1L, function(v) -safe(v)) - log_q
  mx <- max(log_w)
  w <- exp(log_w - mx)
  list(log_evidence = mx + log(mean(w)), se = stats::sd(w) / sqrt(draws) / mean(w),
       draws = draws, laplace = laplace, ess = sum(w)^2 / sum(w^2))
}
