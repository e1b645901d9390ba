# Reference log evidences by quadrature, for the models without a closed form whose posterior
# has two dimensions: logistic and Poisson regression on an intercept and one covariate. Written
# in R with dbinom() and dpois(), independently of the package's C code, on the test suite's grid
# rule grid_log_evidence() (tests/testthat/helper-glm.R, sourced by quick.R; the robust
# regression's quadrature_log_evidence() is in tests/testthat/helper-robust.R).

# The grid rule for a GLM `fit` (stats::glm) with `log_lik` as above, on the grid the tests use
# (10 standard errors, 61 points), checked against a grid twice as fine and one 20% wider: the
# reference with the larger of the two differences as its error.
glm_grid_reference <- function(fit, log_lik, prior_sd) {
  centre <- stats::coef(fit)
  se <- sqrt(diag(stats::vcov(fit)))
  reference <- grid_log_evidence(log_lik, centre, 10 * se, 61, prior_sd)
  check <- c(grid_log_evidence(log_lik, centre, 10 * se, 121, prior_sd),
             grid_log_evidence(log_lik, centre, 12 * se, 73, prior_sd))
  c(reference = reference, error = max(abs(check - reference)))
}

# Logistic regression y ~ x (intercept and one slope, N(0, prior_sd^2) priors).
logistic_grid_reference <- function(x, y, prior_sd) {
  log_lik <- function(b0, b1) {
    colSums(stats::dbinom(y, 1, stats::plogis(outer(x, b1) + b0), log = TRUE))
  }
  glm_grid_reference(stats::glm(y ~ x, stats::binomial), log_lik, prior_sd)
}

# Poisson regression y ~ x + offset(log(t)) (intercept and one slope); the -log(y!) terms are
# in dpois(), so this is the evidence of the counts.
poisson_grid_reference <- function(x, y, t, prior_sd) {
  log_lik <- function(b0, b1) colSums(stats::dpois(y, t * exp(outer(x, b1) + b0), log = TRUE))
  glm_grid_reference(stats::glm(y ~ x + offset(log(t)), stats::poisson), log_lik, prior_sd)
}
