#' Bayesian linear regression with unknown or known noise
#'
#' \eqn{y_i = b + x_i^\top w + e_i}{y = b + x'w + e}, \eqn{e_i \sim N(0, \sigma^2)}{e ~ N(0,
#' sigma^2)}. By default (`noise_sd = NULL`) the noise variance is unknown, with the conjugate
#' normal-inverse-gamma prior \eqn{\sigma^2 \sim \mathrm{InvGamma}(a, b)}{sigma^2 ~ InvGamma(a,
#' b)}, \eqn{\theta_j \mid \sigma^2 \sim N(m_j, \sigma^2 s_j^2)}{theta_j | sigma^2 ~ N(m_j,
#' sigma^2 s_j^2)} for \eqn{\theta = (b, w)}{theta = (b, w)}; the samplers work on
#' \eqn{(\theta, \log \sigma^2)}{(theta, log sigma^2)} (parameter `log_sigma2`, last). A known
#' `noise_sd` is something you state (in the wrong units it decides Bayes factors by itself):
#' `noise_sd = 1` is the paper's model (Cameron et al. 2019, Appendix B.1). With normal priors
#' the evidence has a closed form ([exact_log_evidence()]).
#'
#' Give either `formula` and `data` (the design of [stats::model.matrix()]: factors become dummy
#' columns, `- 1` removes the intercept), or `x` and `y` (an intercept column is always added).
#'
#' @section Priors:
#' `"autoscale"` (the default) states the priors in the data's units, so that no Bayes factor
#' depends on the units of a covariate or of the response: covariates are centred at their means
#' in the data the model is built with, each slope has prior \eqn{N(0, (s / \mathrm{sd}(x_j))^2)}{N(0, (s / sd(x_j))^2)} and the intercept
#' \eqn{N(\bar y, s^2)}{N(mean(y), s^2)}, where \eqn{s}{s} is the noise sd: `noise_sd`, or
#' \eqn{\sigma}{sigma} itself with \eqn{\sigma^2 \sim \mathrm{InvGamma}(a,
#' \mathrm{var}(y))}{sigma^2 ~ InvGamma(a, var(y))} unless `variance_scale` is given: the
#' unit-information prior (Kass and Wasserman 1995). Without an intercept covariates stay
#' uncentred and sd(x_j) is their root mean square. The model prints each coefficient's prior.
#' It is fixed when the model is built, and continuing a fit, [sgais_stream()] and
#' [compare_models()] keep it: build the model on the data, not on a handful of rows.
#'
#' `"paper"` (or `prior_sd` given): \eqn{N(0, \tau^2)}{N(0, prior_sd^2)} on every coefficient of
#' the uncentred design (in units of \eqn{\sigma}{sigma} with unknown noise): the paper's prior
#' (`vignette("paper")`), which on ordinary data can decide a Bayes factor by its units.
#'
#' Priors of your own: `prior` for the slopes and `prior_intercept` for the intercept, each
#' [normal_prior()], [student_t_prior()] or [cauchy_prior()]; the design is then not centred.
#' With Student-t or Cauchy priors the evidence is estimated only. With `noise_sd = NULL` the
#' priors must be normal, their means and sds in units of \eqn{\sigma}{sigma} (still conjugate).
#'
#' [g_prior()] and [zellner_siow_prior()]: BayesFactor's priors and conventions, with a
#' closed-form evidence (see [g_prior()]); `noise_sd`, `prior_sd`, `prior_intercept` and the
#' variance prior do not apply.
#'
#' @section Random effects:
#' lme4's terms, per group of a column `g` of `data`: `(1 | g)` an intercept \eqn{u_g \sim N(0,
#' \tau^2)}{u_g ~ N(0, group_sd^2)}; `(1 + x | g)` a correlated slope of the numeric covariate
#' `x` too; `(1 + x || g)` independent ones; `(0 + x | g)` a slope alone. The effects are
#' integrated out, not sampled: the model adds `log_sigma` (unknown noise), `log_group_sd`
#' (`log_group_sd[x]` per effect) and for correlated effects their `atanh_group_cor` and
#' `atanh_group_pcor` (see [lkj_prior()]), however many groups there are, and each row's
#' likelihood is its predictive density given the earlier rows of its group, so the model
#' streams. With unknown noise the coefficients' prior uses sd(y) for \eqn{\sigma}{sigma}. The
#' evidence has a closed form with known sds and normal priors, and with a random intercept
#' alone also with unknown sds.
#'
#' @section Refused:
#' Errors, never silent changes: missing or infinite values (a data set with rows removed is
#' another data set); a response of several columns; an `offset()` term; a variable of the
#' formula that is not a column of `data`; hyperparameters outside \eqn{[10^{-100}, 10^{100}]}
#' and data beyond \eqn{10^{100}} in size; with random effects, several grouping factors or more
#' than 8 effects per group (class `sgais_error_random_effects`) and a bounded `reservoir_size`.
#'
#' @param formula A model formula such as `y ~ x1 + x2` or `y ~ .` whose variables are columns
#'   of `data`. It may transform them (arithmetic, `log()`, `I()`, `factor()`, `poly()`,
#'   `scale()`, `ns()`, `bs()` and the like) but call no other function, since a saved fit must
#'   not run code when continued: compute other terms as columns first.
#' @param data A data frame holding the variables in `formula`.
#' @param weights,subset,na.action As in [stats::glm()]. `weights`: frequency weights, whole
#'   numbers >= 0, a column of `data` or one per row (in [logistic_regression()] with a numeric
#'   response, numbers of trials). `na.action` `NULL` (the default): missing values are an error.
#' @param family Refused, with an error naming the constructor for that family.
#' @param noise_sd `NULL` (the default): the noise variance is unknown. Or the known noise
#'   standard deviation, in the response's units (the paper's model: `noise_sd = 1`).
#' @param prior_sd The sd \eqn{\tau} of `prior = "paper"` (in units of \eqn{\sigma}{sigma} with
#'   unknown noise); giving it selects that prior unless `prior` is given.
#' @param x A numeric matrix (or data frame of numeric columns, or vector) of covariates, one row
#'   per observation.
#' @param y A numeric response vector with one element per row of `x`.
#' @param variance_shape,variance_scale With unknown noise, the shape \eqn{a} and scale \eqn{b}
#'   of the inverse-gamma prior of its variance (default 1 and 1); an error with `noise_sd`.
#' @param prior The coefficients' prior (see "Priors" in [linear_regression()]): `"autoscale"`
#'   (the default unless `prior_sd` is given), `"paper"`, the slopes' [normal_prior()],
#'   [student_t_prior()] or [cauchy_prior()] (one value or one per slope), or [g_prior()].
#' @param prior_intercept The intercept's prior, likewise; `NULL` (the default): the rule's
#'   under `"autoscale"`, else `normal_prior(0, prior_sd)`. An error without an intercept.
#' @param group_sd With a random-effect term: the effects' sds (one, or one per effect), a prior
#'   such as [half_normal_prior()] or [half_t_prior()], or a list of one per effect; `NULL` (the
#'   default): half-normal, its scale a known noise sd, else sd(y) under `"autoscale"`, else 1,
#'   over sd(x) for a slope.
#' @param group_cor With correlated random effects: [lkj_prior()] (`NULL`, the default:
#'   `lkj_prior(1)`, uniform) or the known correlation matrix, in the term's order. An error
#'   otherwise.
#' @return A model for [sgais()] and the other estimators, of class `c("sgais_linear_regression",
#'   "sgais_model")` (known noise), with `"sgais_linear_regression_nig"` first (unknown noise)
#'   or `"sgais_linear_regression_zellner"` ([g_prior()], [zellner_siow_prior()]); with random
#'   effects, `c("sgais_linear_mixed", "sgais_model")`.
#' @seealso [simulate_linear_regression()] for the paper's data, [robust_regression()] for
#'   Student-t errors, `vignette("choosing-models")` for random effects in a comparison.
#' @export
#' @examples
#' # unknown noise variance, priors in the data's units: Bayes factors do not depend on them
#' cars <- linear_regression(mpg ~ wt + hp + qsec, mtcars)
#' exact_log_evidence(cars) - exact_log_evidence(linear_regression(mpg ~ wt + hp, mtcars))
#'
#' # the paper's model: known noise sd 1, N(0, 1) priors, on its simulated data
#' data <- simulate_linear_regression(500, seed = 1)
#' paper <- linear_regression(y ~ ., data, noise_sd = 1, prior = "paper")
#' exact_log_evidence(paper)
#'
#' # priors of your own, with a known noise sd of 3 mpg
#' own <- linear_regression(mpg ~ wt + hp, mtcars, noise_sd = 3,
#'                          prior = normal_prior(mean = c(-5, 0), sd = c(5, 0.1)),
#'                          prior_intercept = normal_prior(20, 10))
#' exact_log_evidence(own)
#'
#' # a random intercept per group, its sd known: the evidence has a closed form
#' set.seed(1)
#' g <- sample(letters[1:8], 300, TRUE)
#' grouped <- data.frame(x = rnorm(300), g = g)
#' grouped$y <- 1 + 0.5 * grouped$x + rnorm(8, sd = 0.7)[match(g, letters)] +
#'   rnorm(300, sd = 0.5)
#' exact_log_evidence(linear_regression(y ~ x + (1 | g), grouped, noise_sd = 0.5,
#'                                      group_sd = 0.7))
#' # a random slope correlated with the intercept, an LKJ(2) prior on their correlation
#' linear_regression(y ~ x + (1 + x | g), grouped, group_cor = lkj_prior(2))
linear_regression <- function(formula = NULL, data = NULL, noise_sd = NULL, prior_sd = 1,
                              x = NULL, y = NULL, variance_shape = 1, variance_scale = 1,
                              prior = NULL, prior_intercept = NULL, group_sd = NULL,
                              group_cor = NULL, weights = NULL, subset = NULL, na.action = NULL,
                              family = NULL) {
  call <- sys.call()
  input <- regression_input(formula, data, substitute(weights), substitute(subset), na.action,
                            family, parent.frame(), call, prior, missing(prior_sd))
  data <- input$data
  prior <- input$prior
  if (random_effects_call(formula, x, y, group_sd, call)) {
    if (!is.null(noise_sd) && (!missing(variance_shape) || !missing(variance_scale))) {
      abort(paste("`variance_shape` and `variance_scale` are the prior of an unknown noise",
                  "variance; give them with `noise_sd = NULL`, not with a known `noise_sd`."), call)
    }
    return(linear_mixed(formula, data, noise_sd, group_sd, prior_sd, missing(prior_sd), prior,
                        prior_intercept, variance_shape,
                        if (missing(variance_scale)) NULL else variance_scale, call, group_cor))
  }
  if (!is.null(group_cor)) {
    abort(paste("`group_cor` is the correlation of correlated random effects: give it with a",
                "term such as `(1 + x | g)` in `formula`."), call, "sgais_error_random_effects")
  }
  if (inherits(prior, "sgais_zellner_prior")) {
    given <- c(noise_sd = !missing(noise_sd) && !is.null(noise_sd), prior_sd = !missing(prior_sd),
               variance_shape = !missing(variance_shape),
               variance_scale = !missing(variance_scale),
               prior_intercept = !is.null(prior_intercept))
    return(linear_regression_zellner(formula, data, x, y, prior, given, call))
  }
  if (is.null(noise_sd)) {
    # with "autoscale", the variance's prior scale follows the response's unless given
    if (identical(prior, "autoscale") && missing(variance_scale)) variance_scale <- NULL
    return(linear_regression_nig(formula, data, prior_sd, x, y, variance_shape, variance_scale,
                                 prior, prior_intercept, call))
  }
  if (!missing(variance_shape) || !missing(variance_scale)) {
    abort(paste("`variance_shape` and `variance_scale` are the prior of an unknown noise",
                "variance; give them with `noise_sd = NULL`, not with a known `noise_sd`."), call)
  }
  noise_sd <- check_hyper(noise_sd, "noise_sd", call)
  prior_sd <- check_hyper(prior_sd, "prior_sd", call)
  design <- regression_design(formula, data, x, y, call)
  regression_model(
    "linear_regression", with_autoscale(design, prior, prior_intercept, "linear", call, noise_sd),
    list(noise_sd = noise_sd, prior_sd = prior_sd), call, "Bayesian linear regression",
    linear_regression_data,
    c(likelihood = sprintf("%s ~ N(a'theta, sd = %s), a = row of the design",
                           design$spec$response, format(noise_sd))),
    formula = formula
  )
}

# linear_regression(noise_sd = NULL): the unknown-variance model, family "linear_regression_nig"
# (src/linear_regression.c), theta = (coefficients, log sigma^2).
linear_regression_nig <- function(formula, data, prior_sd, x, y, variance_shape, variance_scale,
                                  prior, prior_intercept, call) {
  prior_sd <- check_hyper(prior_sd, "prior_sd", call)
  design <- regression_design(formula, data, x, y, call)
  auto <- with_autoscale(design, prior, prior_intercept, "nig", call)
  hyper <- list(
    prior_sd = prior_sd,
    variance_shape = check_hyper(variance_shape, "variance_shape", call),
    # NULL: prior = "autoscale"'s, the response's variance
    variance_scale = check_hyper(variance_scale %||% auto$sd_y^2, "variance_scale", call)
  )
  regression_model(
    "linear_regression_nig", auto, hyper, call,
    "Bayesian linear regression (unknown noise variance)", linear_regression_data,
    c(likelihood = sprintf("%s ~ N(a'theta, sigma^2), a = row of the design",
                           design$spec$response)),
    prior = sprintf("; sigma^2 ~ InvGamma(shape %s, scale %s)", format(hyper$variance_shape),
                    format(hyper$variance_scale)),
    sampled = "theta, log(sigma^2); log-Jacobian in the prior",
    parameters = "log_sigma2", normal_only = TRUE,
    wording = c("theta_j | sigma^2 ~ N(0, sd = %s sigma), independent",
                "theta | sigma^2: %s (sds in units of sigma)"),
    formula = formula, parent = "sgais_linear_regression"
  )
}

# linear_regression(prior = g_prior() or zellner_siow_prior()): family
# "linear_regression_zellner" (src/linear_regression.c), theta = (intercept, slopes, log sigma^2),
# with BayesFactor's conventions (?g_prior): the covariates centred at their means in these rows,
# M = X_c'X_c / n and its Cholesky factor for C, and the flat-top priors of the intercept and log
# sigma^2 (`flat`: lo, hi and tail sd of each) that make the literature's improper prior proper.
# `given`: which of the other prior arguments the call gave, none of which applies.
linear_regression_zellner <- function(formula, data, x, y, prior, given, call) {
  name <- if (prior$kind == "g") "g_prior()" else "zellner_siow_prior()"
  if (any(given)) {
    abort(sprintf(paste("%s has no part in a model with `prior = %s`, which has BayesFactor's",
                        "conventions: an unknown noise variance with p(intercept, sigma^2)",
                        "proportional to 1 / sigma^2 (see ?g_prior)."),
                  backticked(names(given)[given]), name), call, "sgais_error_prior")
  }
  design <- regression_design(formula, data, x, y, call)
  check_response(design$y, design$what, call)
  a <- design$a
  n <- nrow(a)
  k <- ncol(a) - 1L
  if (!identical(colnames(a)[1], "(Intercept)")) {
    abort(sprintf(paste("`prior = %s` needs an intercept, whose prior is flat (BayesFactor's",
                        "convention); remove `- 1` or `+ 0` from the formula."), name),
          call, "sgais_error_prior")
  }
  if (n < k + 2L) {
    abort(sprintf(paste("`prior = %s` needs more rows than design columns (BayesFactor's p < n -",
                        "1); the design has %d columns and %d row%s."), name, k + 1L, n,
                  if (n == 1) "" else "s"), call, "sgais_error_prior")
  }
  design <- centred_design(design, c(0, colMeans(a[, -1, drop = FALSE])))
  a <- design$a
  xc <- a[, -1, drop = FALSE]
  if (k > 0L && qr(xc)$rank < k) {
    abort(sprintf(paste("`prior = %s` scales the coefficients' prior by (X'X)^-1 of the centred",
                        "covariates, but they are linearly dependent (or constant) in these rows;",
                        "drop the redundant ones."), name), call, "sgais_error_prior")
  }
  sy <- stats::sd(design$y)
  if (!is.finite(sy) || sy == 0) {
    abort(sprintf("`prior = %s` is stated in the response's spread, but the response has none.",
                  name), call, "sgais_error_prior")
  }
  my <- mean(design$y)
  # g: Liang et al.'s, in units of sigma^2 (X_c'X_c)^-1; C's in units of sigma^2 M^-1 is g / n
  g <- if (prior$kind == "g") (prior$g %||% n) / n else prior$scale^2
  hyper <- list(
    zellner = if (prior$kind == "g") 1 else 2, g = g,
    gram_chol = if (k > 0L) chol(crossprod(xc) / n) else matrix(0, 0, 0),
    flat = c(my - 10 * sy, my + 10 * sy, sy, 2 * log(sy) - 20, 2 * log(sy) + 10, 1)
  )
  if (!is_number(g) || g < hyper_range[1] || g > hyper_range[2]) {
    abort(sprintf("`g` / n must be in [%g, %g], not %s.", hyper_range[1], hyper_range[2],
                  format(g)), call, "sgais_error_prior")
  }
  spec <- c(design$spec, list(hyper = hyper))
  f <- hyper$flat
  new_sgais_model(
    family = "linear_regression_zellner",
    data = linear_regression_data(design, call),
    spec = spec,
    n = n,
    parameter_names = c(colnames(a), "log_sigma2"),
    label = "Bayesian linear regression (unknown noise variance)",
    details = c(
      likelihood = sprintf("%s ~ N(a'theta, sigma^2), a = row of the centred design",
                           spec$response),
      prior = if (k == 0L) {
        "no coefficients but the intercept"
      } else if (prior$kind == "g") {
        sprintf("slopes | sigma^2 ~ N(0, g sigma^2 (X_c'X_c)^-1), g = %s (%s)",
                format(g * n, digits = 4), prior$label)
      } else {
        sprintf(paste("slopes | sigma^2 ~ multivariate Cauchy(0, r^2 sigma^2 n (X_c'X_c)^-1),",
                      "r = %s: %s"), format(prior$scale, digits = 4), prior$label)
      },
      intercept = sprintf(paste("flat on [%s, %s] and log(sigma^2) flat on [%s, %s], normal",
                                "tails beyond: BayesFactor's p(intercept, sigma^2) proportional",
                                "to 1 / sigma^2, made proper"),
                          format(f[1], digits = 4), format(f[2], digits = 4),
                          format(f[4], digits = 4), format(f[5], digits = 4)),
      scaling = "covariates centred at their means in the rows the model was built with",
      sampled = "theta, log(sigma^2); log-Jacobian in the prior"
    ),
    formula = formula,
    class = c("sgais_linear_regression_zellner", "sgais_linear_regression")
  )
}

# The data the C core reads from the design of some rows (see model_data()).
linear_regression_data <- function(design, call) {
  check_response(design$y, design$what, call)
  list(xt = by_observation(design$a), y = as.double(design$y))
}

#' @exportS3Method
model_data.sgais_linear_regression <- function(model, new_data, call = NULL) {
  linear_regression_data(regression_rows(spec_of(model, call), new_data, call), call)
}

# The response of a linear regression: numeric and finite.
check_response <- function(y, what, call) {
  if (!is.numeric(y) || is.factor(y)) {
    abort(sprintf("%s must be numeric, not %s.", what, describe(y)), call)
  }
  if (length(y) < 1L) abort(sprintf("%s must have at least one observation.", what), call)
  bad <- which(!is.finite(y))
  if (length(bad)) abort_bad_observations(what, bad, "non-finite", call)
  bad <- which(abs(y) > data_max)
  if (length(bad)) {
    abort(sprintf(paste("%s has values larger than %g in size, first at observation %d: their",
                        "squares overflow. Rescale it."), what, data_max, bad[1]),
          call, "sgais_error_extreme_values", row = bad[1])
  }
}

# How far the data put the posterior from the prior, in prior standard deviations: the length
# of the exact posterior mean of theta divided by prior_sd (known noise; with an unknown
# variance the prior's scale follows the data's). Annealing (SGAIS, AIS) moves the particles
# about a quarter of the current target's width per step, so it needs about 4 steps per prior
# sd the target's mean travels (inst/design.md, "Scale and annealing far from the prior");
# nested sampling needs an iteration count
# proportional to the information, which grows as d^2.
lr_prior_distance <- function(model) {
  xt <- model$data$xt
  s2 <- model$hyper$noise_sd^2
  prior <- coef_prior_moments(model, nrow(xt))
  t2 <- prior$scale^2
  precision <- tcrossprod(xt) / s2 + diag(1 / t2, nrow(xt))
  # by its Cholesky factor, as exact_log_evidence() does: solve() refuses a precision whose
  # condition number passes 1e16 (one covariate value of 1e100 among values near 1, a time in
  # seconds), which the factor handles as the evidence does
  r <- tryCatch(chol(precision), error = function(e) NULL)
  if (is.null(r)) return(NA_real_)
  rhs <- drop(xt %*% model$data$y) / s2 + prior$location / t2
  mean <- backsolve(r, backsolve(r, rhs, transpose = TRUE))
  sqrt(sum((mean - prior$location)^2 / t2))
}

# The estimators' cap on annealing steps (src/sgais.c, src/estimators.h).
max_annealing_steps <- 1e5

# An error, before any sampling, when the data are so far outside what the prior allows that
# the estimators would need more annealing steps than they take (there are minutes of work
# before they give up); only linear regression with known noise has the exact posterior to
# tell this cheaply. Other models report it at run time, when annealing does not finish.
check_prior_conflict <- function(model, call) {
  check_resolvable(model, call)
  if (!identical(model$family, "linear_regression")) return(invisible(model))
  d <- lr_prior_distance(model)
  if (is.na(d)) {
    abort(paste(
      "The covariates are too badly scaled for the posterior to be computed in double",
      "precision (its precision matrix is not numerically positive definite): rescale the",
      "covariates to about unit scale (e.g. `scale()` them, or measure times from a nearby",
      "origin in suitable units)."), call, "sgais_error_ill_conditioned")
  }
  if (4 * d > max_annealing_steps) {
    blocks <- !is.null(model$hyper[["prior"]])
    evidence <- if (coef_prior_moments(model, nrow(model$data$xt))$normal) {
      sprintf("This model's evidence is tiny (`exact_log_evidence()` gives it: %.6g). ",
              exact_log_evidence(model))
    } else ""
    abort(sprintf(paste(
      "The data lie far outside what the prior allows: the posterior mean is %s prior standard",
      "deviations (%s) from the prior mean. Annealing would need about %s steps,",
      "more than the %s the estimators take, and nested sampling longer still. %sIf that is not",
      "what you meant, rescale the response and covariates to about unit scale, or widen %s."),
      format_big(d), if (blocks) "of `prior` and `prior_intercept`" else
        sprintf("`prior_sd` = %g", model$hyper$prior_sd),
      format_big(4 * d), format_count(max_annealing_steps), evidence,
      if (blocks) "the prior" else "`prior_sd`"), call, "sgais_error_prior_conflict", distance = d)
  }
  invisible(model)
}

# The regressions whose coefficients the check below can judge from the design and the prior
# scales (Zellner's prior scales with the design itself).
resolvable_families <- c("linear_regression", "linear_regression_nig", "robust_regression",
                         "logistic_regression", "poisson_regression",
                         "negative_binomial_regression", "softmax_regression")

# The samplers start from the prior and keep the parameters as doubles. In the prior's units
# the posterior's narrowest width is about kappa^(-1/2) of the prior's, kappa the condition
# number of P = T A A' T / s^2 + I (A the design, at most 20,000 of its rows; T the prior sds;
# s the noise sd for known noise, else 1: the information of a logistic or count observation
# is at most about that of a linear one). Below about 1e-13 of the coordinates' size (kappa >
# 1e26) no double can hold a point of the posterior and its neighbour apart, and the estimates
# came out absurd with only a warning; a time in seconds since 1970 (kappa 5e20) is still
# resolved (inst/design.md, "Measurements behind the defaults").
check_resolvable <- function(model, call) {
  if (!model$family %in% resolvable_families) return(invisible(model))
  xt <- model$data$xt
  # scaling shows in any few thousand rows: at most 20,000 of them, evenly spread
  if (ncol(xt) > 20000L) xt <- xt[, round(seq(1, ncol(xt), length.out = 20000L)), drop = FALSE]
  t <- coef_prior_moments(model, nrow(xt))$scale
  s2 <- if (identical(model$family, "linear_regression")) model$hyper[["noise_sd"]]^2 else 1
  P <- tcrossprod(xt * t) / s2
  diag(P) <- diag(P) + 1
  kappa <- if (all(is.finite(P))) 1 / rcond(P) else Inf
  if (is.finite(kappa) && kappa <= max_condition) return(invisible(model))
  exact <- if (identical(model$family, "linear_regression") &&
               coef_prior_moments(model, nrow(xt))$normal) {
    tryCatch(sprintf(" `exact_log_evidence()` gives this model's evidence: %.6g.",
                     exact_log_evidence(model)), error = function(e) "")
  } else ""
  abort(sprintf(paste(
    "The covariates are too badly scaled for this prior: in the prior's units the posterior is",
    "narrower than doubles can resolve (its precision matrix has condition number %s; the",
    "samplers need at most %s), so no estimator can move within it. Rescale the covariates",
    "(e.g. `scale()` them, or measure times from a nearby origin in suitable units), or use",
    "`prior = \"autoscale\"` (the default), which scales each coefficient's prior with its",
    "covariate.%s"), format(signif(kappa, 2)), format(max_condition), exact), call,
    "sgais_error_ill_conditioned", condition_number = kappa)
}

# The largest condition number check_resolvable() accepts.
max_condition <- 1e26

#' @rdname exact_log_evidence
#' @export
exact_log_evidence.sgais_linear_regression <- function(model, n = NULL) {
  check_all_rows(model, sys.call())
  n <- check_prefix_lengths(n, model$n, sys.call())
  s2 <- model$hyper[["noise_sd"]]^2
  prior <- normal_coef_prior(model, sys.call())
  lr_prefix_evidence(model, n, function(xtx, xty, yy, m) {
    lr_log_evidence(xtx, xty, yy, m, s2, prior$scale^2, prior$location)
  })
}

#' @rdname exact_log_evidence
#' @export
exact_log_evidence.sgais_linear_regression_nig <- function(model, n = NULL) {
  check_all_rows(model, sys.call())
  n <- check_prefix_lengths(n, model$n, sys.call())
  h <- model$hyper
  prior <- normal_coef_prior(model, sys.call())
  lr_prefix_evidence(model, n, function(xtx, xty, yy, m) {
    nig_lr_log_evidence(xtx, xty, yy, m, h$variance_shape, h$variance_scale, prior$scale^2,
                        prior$location)
  })
}

#' @rdname exact_log_evidence
#' @export
exact_log_evidence.sgais_linear_regression_zellner <- function(model, n = NULL) {
  call <- sys.call()
  check_all_rows(model, call)
  n <- check_prefix_lengths(n, model$n, call)
  h <- model$hyper
  f <- h$flat
  offset <- flat_top_offset(f)
  gram <- crossprod(h$gram_chol)
  log_det_gram <- 2 * sum(log(diag(h$gram_chol)))
  lr_prefix_evidence(model, n, function(xtx, xty, yy, m) {
    zellner_check_flat(xtx, xty, yy, m, f, call)
    jeffreys <- function(g) zellner_log_evidence(xtx, xty, yy, m, g, gram, log_det_gram)
    offset + if (h$zellner == 1) jeffreys(h$g) else zellner_siow_integral(jeffreys, h$g)
  })
}

# The log-normalisers of the flat-top densities of the intercept and log sigma^2 (?g_prior) with
# flat parts `f` (hyper$flat of linear_regression_zellner()): the offset of every log evidence.
flat_top_offset <- function(f) {
  -log((f[2] - f[1]) + sqrt(2 * pi) * f[3]) - log((f[5] - f[4]) + sqrt(2 * pi) * f[6])
}

# log p(y) of a linear regression with the improper p(mu, s) = 1 (flat in the intercept mu and
# s = log sigma^2, i.e. 1 / sigma^2 in sigma^2) and beta | sigma^2 ~ N(0, sigma^2 V), V = g M^-1,
# from the sufficient statistics of the design A = (1, X) of n rows (the intercept first). With
# P = A'A + diag(0, V^-1) = R'R and z = R^-T A'y, Q = y'y - z'z: integrating theta = (mu, beta)
# gives (2 pi sigma^2)^-(n-1)/2 det(P)^-1/2 det(V)^-1/2 exp(-Q / (2 sigma^2)), and then s
# gives Gamma((n-1)/2) (Q/2)^-(n-1)/2. On the data the model was built with (X centred, M =
# X'X / n) this is Liang et al.'s (2008, eq. 5) g-prior Bayes factor (1 + gn)^((n-k-1)/2)
# (1 + gn(1-R^2))^(-(n-1)/2) against the intercept-only model, times that model's evidence.
zellner_log_evidence <- function(xtx, xty, yy, n, g, gram, log_det_gram) {
  k <- nrow(gram)
  p <- xtx
  if (k > 0L) p[-1, -1] <- p[-1, -1] + gram / g
  r <- chol(p)
  z <- backsolve(r, xty, transpose = TRUE)
  q <- max(yy - sum(z^2), 0)
  -0.5 * (n - 1) * log(2 * pi) - sum(log(diag(r))) - 0.5 * (k * log(g) - log_det_gram) +
    lgamma(0.5 * (n - 1)) - 0.5 * (n - 1) * log(q / 2)
}

# log of the integral of exp(jeffreys(g)) over g ~ InvGamma(1/2, r2 / 2) (the Zellner-Siow prior
# as a mixture of g-priors; Liang et al. 2008, Section 3.1), by quadrature over t = log g in
# three pieces about the integrand's peak, so that a narrow peak is not stepped over.
zellner_siow_integral <- function(jeffreys, r2) {
  h <- function(t) {
    vapply(t, function(ti) {
      jeffreys(exp(ti)) + 0.5 * log(r2 / 2) - lgamma(0.5) - 0.5 * ti - r2 / (2 * exp(ti))
    }, numeric(1))
  }
  grid <- seq(-40, 40, by = 0.5)
  start <- grid[which.max(h(grid))]
  peak <- stats::optimize(h, start + c(-1, 1), maximum = TRUE)
  top <- peak$objective
  at <- peak$maximum + c(-60, -5, 5, 60)
  pieces <- vapply(1:3, function(i) {
    stats::integrate(function(t) exp(h(t) - top), at[i], at[i + 1], subdivisions = 1000L,
                     rel.tol = 1e-10)$value
  }, numeric(1))
  top + log(sum(pieces))
}

# An error when the posterior of n rows reaches beyond the flat parts `f` of the intercept's and
# log sigma^2's priors (?g_prior), where the closed form, which takes them as flat everywhere, is
# no longer the model's evidence (to 1e-8): log sigma^2's 1e-9 and 1 - 1e-9 posterior quantiles
# under the two extreme g (0: the residuals about the mean; infinity: the least-squares
# residuals), and the intercept's, Student-t about its estimates under the same two.
zellner_check_flat <- function(xtx, xty, yy, n, f, call) {
  k <- ncol(xtx) - 1L
  fail <- function(what) {
    abort(sprintf(paste(
      "The posterior of these %d rows reaches beyond the flat part of the prior of %s, which the",
      "model sets from the rows it was built with (?g_prior): the closed form is then not its",
      "evidence. Estimate it with `sgais()`, or build the model on these rows."), n, what),
      call, "sgais_error_no_closed_form")
  }
  if (n < k + 2L) fail("log(sigma^2) (too few rows)")
  q_mean <- yy - xty[1]^2 / n
  inv <- tryCatch(solve(xtx), error = function(e) NULL)
  if (is.null(inv)) fail("log(sigma^2) (the covariates are linearly dependent in these rows)")
  ols <- drop(inv %*% xty)
  q_ols <- max(yy - sum(ols * xty), 0)
  shape <- 0.5 * (n - 1)
  s_lo <- log(q_ols / 2) - log(stats::qgamma(1e-9, shape, lower.tail = FALSE))
  s_hi <- log(q_mean / 2) - log(stats::qgamma(1e-9, shape))
  if (!(s_lo >= f[4] && s_hi <= f[5])) fail("log(sigma^2)")
  se <- max(sqrt(q_mean / ((n - 1) * n)), sqrt(q_ols / (n - 1) * inv[1, 1]))
  sd <- stats::qt(1e-9, n - 1, lower.tail = FALSE) * se
  mu <- c(xty[1] / n, ols[1])
  if (!(all(mu - sd >= f[1]) && all(mu + sd <= f[2]))) fail("the intercept")
}

# The coefficients' prior means and sds of a linear regression, for the closed forms: an error
# when a prior is Student-t or Cauchy, whose evidence has none.
normal_coef_prior <- function(model, call) {
  prior <- coef_prior_moments(model, nrow(model$data$xt))
  if (!prior$normal) {
    abort(paste("`model` has a Student-t or Cauchy prior on its coefficients: its evidence has no",
                "closed form. Estimate it with `sgais()`."), call, "sgais_error_no_closed_form")
  }
  prior
}

# evidence(A'A, A'y, y'y, m) of the first m observations of a regression, for every m in n (in
# the order asked), the sufficient statistics accumulated over the data in one pass.
lr_prefix_evidence <- function(model, n, evidence) {
  xt <- model$data$xt
  y <- model$data$y
  p <- nrow(xt)
  ends <- sort(unique(n))
  xtx <- matrix(0, p, p)
  xty <- numeric(p)
  yy <- 0
  out <- numeric(length(ends))
  begin <- 1L
  for (k in seq_along(ends)) {
    rows <- seq.int(begin, ends[k])
    xtx <- xtx + tcrossprod(xt[, rows, drop = FALSE])
    xty <- xty + drop(xt[, rows, drop = FALSE] %*% y[rows])
    yy <- yy + sum(y[rows]^2)
    out[k] <- evidence(xtx, xty, yy, ends[k])
    begin <- ends[k] + 1L
  }
  out[match(n, ends)]
}

# The sufficient statistics of y - A m, the response less the prior mean's prediction:
# A'(y - A m) and |y - A m|^2, so that a prior N(m, V) is the zero-mean one on the shifted
# response.
shift_statistics <- function(xtx, xty, yy, m) {
  if (all(m == 0)) return(list(xty = xty, yy = yy))
  am <- drop(xtx %*% m)
  list(xty = xty - am, yy = yy - 2 * sum(m * xty) + sum(m * am))
}

# log N(y; A m, s2 I + A diag(t2) A') from the sufficient statistics A'A, A'y, y'y by the matrix
# determinant lemma and Woodbury identity: with y' = y - A m, P = A'A / s2 + diag(1 / t2) = R'R
# and z = R^-T A'y' / s2,
# log Z = -n/2 log(2 pi s2) - sum(log t2) / 2 - sum(log diag R) - (y''y' / s2 - z'z) / 2.
# t2: one prior variance, or one per coefficient; m: the prior means (0 by default).
lr_log_evidence <- function(xtx, xty, yy, n, s2, t2, m = 0) {
  p <- length(xty)
  t2 <- rep_len(t2, p)
  shifted <- shift_statistics(xtx, xty, yy, rep_len(m, p))
  r <- chol(xtx / s2 + diag(1 / t2, p))
  z <- backsolve(r, shifted$xty / s2, transpose = TRUE)
  -0.5 * n * log(2 * pi * s2) - 0.5 * log_det_diag(t2) - sum(log(diag(r))) -
    0.5 * (shifted$yy / s2 - sum(z^2))
}

# sum(log(t2)), as p log(t2) when the variances are all one (the paper's prior: its value as
# before per-coefficient variances, to the last bit).
log_det_diag <- function(t2) {
  if (all(t2 == t2[1])) length(t2) * log(t2[1]) else sum(log(t2))
}

# log p(y) under sigma^2 ~ InvGamma(a, b), theta | sigma^2 ~ N(m, sigma^2 T), T = diag(t2):
# y ~ t_{2a}(A m, (b / a) (I + A T A')), multivariate Student-t (Murphy, Machine Learning: A
# Probabilistic Perspective, 2012, Section 7.6.3). From the sufficient statistics of y' = y - A m,
# with P = A'A + T^-1 = R'R (the posterior precision, in units of 1 / sigma^2) and
# z = R^-T A'y': Woodbury gives Q = y''(I + A T A')^-1 y' = y''y' - z'z and the determinant lemma
# log det(I + A T A') = sum(log t2) + 2 sum(log diag R), so
# log Z = lgamma(a + n/2) - lgamma(a) + a log b - (a + n/2) log(b + Q/2) - n/2 log(2 pi)
#         - sum(log t2) / 2 - sum(log diag R).
# Q >= 0, but y''y' - z'z can round below it when the fit is near exact.
nig_lr_log_evidence <- function(xtx, xty, yy, n, a, b, t2, m = 0) {
  p <- length(xty)
  t2 <- rep_len(t2, p)
  shifted <- shift_statistics(xtx, xty, yy, rep_len(m, p))
  r <- chol(xtx + diag(1 / t2, p))
  z <- backsolve(r, shifted$xty, transpose = TRUE)
  q <- max(shifted$yy - sum(z^2), 0)
  lgamma(a + n / 2) - lgamma(a) + a * log(b) - (a + n / 2) * log(b + q / 2) -
    0.5 * n * log(2 * pi) - 0.5 * log_det_diag(t2) - sum(log(diag(r)))
}

#' Simulate the paper's linear-regression data
#'
#' Draws the intercept and `dim` weights from the standard normal prior, covariates from the
#' standard normal and the response with noise of standard deviation `noise_sd`, as in
#' Cameron et al. (2019), Section 6.1 and Appendix B.1. Rows are drawn one after another, so
#' with the same seed a smaller data set is the first rows of a larger one (the paper takes
#' its data sets as prefixes of the largest).
#'
#' @param n Number of observations.
#' @param dim Number of covariates.
#' @param noise_sd Standard deviation of the noise.
#' @param seed Optional seed; the caller's random stream is left as it was.
#' @return A data frame with columns `x1`, ..., `x<dim>` and `y`, with attributes `parameters`
#'   (the true intercept and weights) and `noise_sd`.
#' @export
#' @examples
#' data <- simulate_linear_regression(1000, seed = 42)
#' head(data)
#' attr(data, "parameters")
simulate_linear_regression <- function(n, dim = 5, noise_sd = 1, seed = NULL) {
  call <- sys.call()
  n <- check_whole_number(n, "n", 1, call)
  dim <- check_whole_number(dim, "dim", 1, call)
  noise_sd <- check_positive(noise_sd, "noise_sd", call)
  seed <- check_seed(seed, call)
  with_seed(seed, {
    theta <- stats::rnorm(dim + 1L)
    # one row of covariates and its noise per observation, drawn row after row
    draws <- matrix(stats::rnorm(n * (dim + 1)), nrow = n, byrow = TRUE)
  })
  x <- draws[, seq_len(dim), drop = FALSE]
  colnames(x) <- paste0("x", seq_len(dim))
  y <- theta[1] + drop(x %*% theta[-1]) + noise_sd * draws[, dim + 1L]
  out <- data.frame(x, y = y)
  attr(out, "parameters") <- stats::setNames(theta, c("(Intercept)", colnames(x)))
  attr(out, "noise_sd") <- noise_sd
  out
}
