#' Bayesian linear regression with known noise, in C
#'
#' y = a'theta + e, e ~ N(0, noise_sd^2), where a is a row of `x` (include a column of ones for
#' an intercept); the prior on theta is given in R, e.g. sgais::normal_prior(sd = 1).
#' @param x A numeric matrix of covariates, one row per observation.
#' @param y The response.
#' @param noise_sd The known noise standard deviation.
#' @param prior A prior from sgais's building blocks.
example_linear_regression <- function(x, y, noise_sd = 1, prior = sgais::normal_prior()) {
  x <- as.matrix(x)
  # one row per observation: the covariates, then the response (the C code reads it last)
  data <- cbind(x, y = y)
  sgais::compiled_model("sgaisexample_linear_regression", data = data,
                        hyper = c(noise_sd = noise_sd), parameter_names = colnames(x),
                        prior = prior, package = "sgaisexample",
                        label = "linear regression (C example)")
}
