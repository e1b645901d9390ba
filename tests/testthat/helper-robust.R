# The reference for the estimators: a location-scale t model (intercept and log sigma, the
# 2-parameter case) on 500 observations with three outliers, whose evidence is the double
# integral over the intercept b and sigma of likelihood x prior, by nested integrate(),
# written with dt() and dnorm() independently of the package (scaled by its maximum, found by
# optim(), so that it does not underflow).
location_scale <- function() {
  y <- withr::with_seed(5, 0.8 + 0.7 * stats::rt(500, df = 4))
  y[c(3, 17, 250)] <- y[c(3, 17, 250)] + c(6, -5, 8)
  data.frame(y = y)
}

quadrature_log_evidence <- function(y, df, prior_sd, scale_prior) {
  log_joint <- function(b, sigma) { # b a vector, sigma a number
    colSums(stats::dt(outer(y, b, "-") / sigma, df, log = TRUE)) - length(y) * log(sigma) +
      stats::dnorm(b, 0, prior_sd, log = TRUE) + log(2) +
      stats::dnorm(sigma, 0, scale_prior, log = TRUE)
  }
  top <- -stats::optim(c(stats::median(y), log(stats::mad(y))),
                       function(p) -log_joint(p[1], exp(p[2])))$value
  inner <- function(sigma) vapply(sigma, function(s) {
    stats::integrate(function(b) exp(log_joint(b, s) - top), -Inf, Inf, rel.tol = 1e-10)$value
  }, 0)
  log(stats::integrate(inner, 0, Inf, rel.tol = 1e-10)$value) + top
}
