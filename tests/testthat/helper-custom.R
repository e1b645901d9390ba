# The paper's linear regression (known noise sd 1) written as a model in R, on the same data as
# the built-in `linear_regression(y ~ ., data)`: the reference for models written in R.
r_linear_regression <- function(data, prior = normal_prior(sd = 1), gradient = TRUE, ...) {
  x <- cbind(`(Intercept)` = 1, as.matrix(data[, setdiff(names(data), "y")]), y = data$y)
  p <- ncol(x) - 1L
  ll <- function(theta, data) {
    r <- data[, p + 1L] - data %*% c(theta, 0)
    drop(-0.5 * log(2 * pi) - 0.5 * r^2)
  }
  gr <- function(theta, data) {
    r <- data[, p + 1L] - data %*% c(theta, 0)
    crossprod(data, r)[seq_len(p)]
  }
  custom_model(ll, if (gradient) gr, data = x, parameter_names = colnames(x)[seq_len(p)],
               prior = prior, ...)
}
