#' Bayesian negative binomial regression
#'
#' Overdispersed counts with a log link: a Poisson regression ([poisson_regression()]) whose
#' mean is multiplied by gamma noise of mean 1 and coefficient of variation \eqn{\omega}{omega},
#' \deqn{y_i \sim \mathrm{NB}(\mu_i, \phi = \omega^{-2}), \quad \log \mu_i = o_i + b + x_i^\top w,
#' \quad \mathrm{Var}(y_i) = \mu_i + \omega^2 \mu_i^2,}{y ~ NB(mean mu, size phi = omega^-2),
#' log mu = o + b + x'w, Var(y) = mu + omega^2 mu^2,}
#' where \eqn{o_i}{o} is a known offset (the log of an exposure; zero without one). The
#' overdispersion \eqn{\omega = 1/\sqrt{\phi}}{omega = 1 / sqrt(size)} (`theta` of
#' [MASS::glm.nb()] is \eqn{\phi}{phi}) has a half-normal prior of scale
#' `overdispersion_prior`, whose mode is the Poisson model (\eqn{\omega = 0}{omega = 0}): the
#' evidence then weighs the extra variance against the Poisson's, and compares with that of
#' [poisson_regression()] on the same counts (both include \eqn{-\log y_i!}{-log(y!)}). The
#' intercept and weights have the priors of [poisson_regression()]: by default
#' `prior = "autoscale"`'s, or `prior = "paper"` (`prior_sd`), or `prior` and `prior_intercept`.
#'
#' The samplers work on \eqn{(b, w, \log\omega)}{(b, w, log omega)}, the last parameter
#' `log_overdispersion`, with the log-Jacobian in the prior. Data, offsets and new rows are
#' given as for [poisson_regression()].
#'
#' @inheritSection logistic_regression Random effects
#' @inheritParams poisson_regression
#' @param overdispersion_prior The scale of the half-normal prior of the overdispersion
#'   \eqn{\omega}{omega} (default 1: \eqn{\omega}{omega} has prior median 0.67, a gamma noise
#'   of up to about 70% coefficient of variation).
#' @return A model of class `c("sgais_negative_binomial_regression", "sgais_model")` for
#'   [sgais()], [ais()] and [nested_sampling()].
#' @seealso [poisson_regression()] for equidispersed counts, [check_gradients()].
#' @export
#' @examples
#' # days absent from school (MASS::quine): far more variable than a Poisson's
#' if (requireNamespace("MASS", quietly = TRUE)) {
#'   quine <- MASS::quine
#'   nb <- negative_binomial_regression(Days ~ Eth + Sex + Age + Lrn, quine)
#'   nb
#'   pois <- poisson_regression(Days ~ Eth + Sex + Age + Lrn, quine)
#'   # the log Bayes factor of the negative binomial over the Poisson, far above 0
#'   log_evidence(importance_sampling(nb, seed = 1)) -
#'     log_evidence(importance_sampling(pois, seed = 1))
#' }
negative_binomial_regression <- function(formula = NULL, data = NULL, prior_sd = 2.5,
                                         overdispersion_prior = 1, x = NULL, y = NULL,
                                         offset = NULL, prior = NULL, prior_intercept = NULL,
                                         group_sd = NULL, group_cor = NULL, weights = NULL,
                                         subset = NULL, na.action = NULL, family = NULL) {
  call <- sys.call()
  input <- regression_input(formula, data, substitute(weights), substitute(subset), na.action,
                            family, parent.frame(), call, prior, missing(prior_sd),
                            substitute(offset))
  if (!is.null(formula)) offset <- NULL # now in the formula
  prior_sd <- check_hyper(prior_sd, "prior_sd", call)
  overdispersion_prior <- check_hyper(overdispersion_prior, "overdispersion_prior", call)
  if (random_effects_call(input$formula, x, y, group_sd, call, offset, group_cor)) {
    return(glm_mixed("negative_binomial", input$formula, input$data,
                     list(prior_sd = prior_sd, overdispersion_prior = overdispersion_prior,
                          prior = input$prior, prior_intercept = prior_intercept), group_sd, call,
                     group_cor))
  }
  design <- count_design(input$formula, input$data, x, y, offset, call)
  regression_model(
    "negative_binomial_regression",
    with_autoscale(design, input$prior, prior_intercept, "glm", call),
    # the coefficients' prior before the overdispersion's
    list(prior_sd = prior_sd, prior = NULL, overdispersion_prior = overdispersion_prior), call,
    "Bayesian negative binomial regression", poisson_regression_data,
    count_details(design$spec, paste("%s ~ NB(mean mu, size omega^-2), mu = exp(%sa'theta),",
                                     "a = row of the design")),
    prior = sprintf("; omega ~ half-normal(sd = %s)", format(overdispersion_prior)),
    sampled = "theta, log(omega); log-Jacobian in the prior",
    parameters = "log_overdispersion", formula = input$formula
  )
}

# New rows are turned into data as for Poisson regression (the same design, counts and offset).
#' @exportS3Method
model_data.sgais_negative_binomial_regression <- function(model, new_data, call = NULL) {
  model_data.sgais_poisson_regression(model, new_data, call)
}
