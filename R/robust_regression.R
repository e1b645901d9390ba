#' Bayesian robust regression with Student-t errors
#'
#' A linear regression whose errors have heavy tails, so that a few outlying responses do not
#' dominate the fit: \eqn{y_i = b + x_i^\top w + \sigma e_i}{y = b + x'w + sigma e} with
#' \eqn{e_i \sim t_\nu}{e ~ t_df}, Student-t with fixed degrees of freedom \eqn{\nu}{df} (`df`),
#' and an unknown scale \eqn{\sigma}{sigma}. By default (`prior = "autoscale"`, see "Priors" in
#' [linear_regression()]) the covariates are centred at their means, each weight has prior
#' \eqn{N(0, (\mathrm{sd}(y) / \mathrm{sd}(x_j))^2)}{N(0, (sd(y) / sd(x_j))^2)}, the intercept
#' \eqn{N(\bar y, \mathrm{sd}(y)^2)}{N(mean(y), sd(y)^2)} and the scale a half-normal
#' \eqn{\sigma \sim N^+(0, s^2)}{sigma ~ N+(0, s^2)} with \eqn{s}{s} = sd(y) unless
#' `scale_prior` is given. With `prior = "paper"` (or `prior_sd`) the priors are independent
#' \eqn{N(0, \tau^2)}{N(0, prior_sd^2)} on the intercept \eqn{b} and every weight in \eqn{w},
#' and \eqn{s}{s} = `scale_prior`. As `df` grows the errors become normal; `df = 1` is Cauchy.
#'
#' The samplers work on \eqn{(b, w, \log\sigma)}{(b, w, log sigma)}, the log-scale last (parameter
#' `log_sigma`), with the log-Jacobian of the transform in the prior. The scale prior is
#' half-normal rather than half-t because the package's C core has that prior of a scale
#' already; its tail is lighter, so a \eqn{\sigma}{sigma} many times
#' `scale_prior` is penalised more than under a half-t: set `scale_prior` to the order of
#' magnitude of the noise. The paper-style values (`prior_sd = 1`, `scale_prior = 1`) are in the
#' data's units: they suit standardised data.
#'
#' There is no closed-form evidence: estimate it with [sgais()], [ais()] or [nested_sampling()].
#' The data are given as for [linear_regression()].
#'
#' @inheritParams linear_regression
#' @param df The degrees of freedom \eqn{\nu}{df} of the Student-t errors, fixed (default 4).
#' @param prior_sd The prior standard deviation \eqn{\tau} of the intercept and each weight
#'   under `prior = "paper"` (default 1); giving it selects that prior unless `prior` is given.
#' @param scale_prior The scale \eqn{s} of the half-normal prior of the error scale
#'   \eqn{\sigma}{sigma} (default sd(y) under `prior = "autoscale"`, else 1): \eqn{\sigma}{sigma} has prior median 0.67 `scale_prior`.
#' @return A model of class `c("sgais_robust_regression", "sgais_model")` for [sgais()], [ais()]
#'   and [nested_sampling()].
#' @seealso [linear_regression()] for normal errors, [check_gradients()].
#' @export
#' @examples
#' data <- simulate_linear_regression(300, dim = 2, seed = 1)
#' data$y[1:5] <- data$y[1:5] + 20 # five outliers
#' model <- robust_regression(y ~ ., data, df = 4)
#' model
#' fit <- sgais(model, seed = 1, progress = FALSE)
#' log_evidence(fit)
#'
#' # against normal errors with unknown variance: a log Bayes factor in favour of the t errors
#' log_evidence(fit) - exact_log_evidence(linear_regression(y ~ ., data, noise_sd = NULL))
robust_regression <- function(formula = NULL, data = NULL, df = 4, prior_sd = 1, scale_prior = 1,
                              x = NULL, y = NULL, prior = NULL, prior_intercept = NULL,
                              weights = NULL, subset = NULL, na.action = NULL, family = NULL) {
  call <- sys.call()
  input <- regression_input(formula, data, substitute(weights), substitute(subset), na.action,
                            family, parent.frame(), call, prior, missing(prior_sd))
  design <- regression_design(formula, input$data, x, y, call)
  auto <- with_autoscale(design, input$prior, prior_intercept, "robust", call)
  # with "autoscale", sigma's prior scale follows the response's unless given
  if (!is.null(auto$rule) && missing(scale_prior)) scale_prior <- auto$sd_y
  hyper <- list(
    df = check_hyper(df, "df", call),
    prior_sd = check_hyper(prior_sd, "prior_sd", call),
    scale_prior = check_hyper(scale_prior, "scale_prior", call)
  )
  regression_model(
    "robust_regression", auto, hyper, call, "Bayesian robust regression (Student-t errors)",
    linear_regression_data,
    c(likelihood = sprintf("%s = a'theta + sigma e, e ~ t(df = %s), a = row of the design",
                           design$spec$response, format(hyper$df))),
    prior = sprintf("; sigma ~ half-normal(sd = %s)", format(hyper$scale_prior)),
    sampled = "theta, log(sigma); log-Jacobian in the prior",
    parameters = "log_sigma", formula = formula
  )
}

# New rows are turned into data as for linear regression (the same design and response).
#' @exportS3Method
model_data.sgais_robust_regression <- function(model, new_data, call = NULL) {
  model_data.sgais_linear_regression(model, new_data, call)
}
