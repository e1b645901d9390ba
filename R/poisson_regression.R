#' Bayesian Poisson regression
#'
#' Counts with a log link, \deqn{y_i \sim \mathrm{Poisson}(\mu_i), \quad \log \mu_i = o_i + b +
#' x_i^\top w,}{y ~ Poisson(mu), log mu = o + b + x'w,} where \eqn{o_i}{o} is a known offset
#' (the log of an exposure: time at risk, area, population; zero without one). The priors are
#' those of [logistic_regression()]: by default (`prior = "autoscale"`) covariates centred at their
#' means, weights \eqn{N(0, (2.5 / \mathrm{sd}(x_j))^2)}{N(0, (2.5 / sd(x_j))^2)} and the
#' intercept \eqn{N(0, 2.5^2)}{N(0, 2.5^2)}; with `prior = "paper"` (or `prior_sd`) independent
#' \eqn{N(0, \tau^2)}{N(0, prior_sd^2)} on the intercept \eqn{b} and every weight in \eqn{w},
#' \eqn{\tau}{prior_sd} = 2.5 by default. The likelihood includes the
#' \eqn{-\log y_i!}{-log(y!)} term, so the evidence is that of the counts themselves and compares
#' with that of other count models.
#'
#' Give either `formula` and `data`, or the matrix interface `x`, `y` and optionally `offset`, as
#' for [linear_regression()] (with `x` and `y` an intercept column is always added). With a
#' formula, the offset is an `offset()` term, as in [stats::glm()]: `y ~ x + offset(log(t))`;
#' several add up. (`y ~ . + offset(log(t))` also uses `t` as a covariate, as `glm()` does; write
#' `y ~ . - t + offset(log(t))` to avoid it.) With `x` and `y` it is the argument `offset`, and
#' new rows (see [sgais()], `new_data`) then need one too, as the element `offset` of the list
#' `list(x = , y = , offset = )`; with a formula, new rows carry the columns the offset is
#' computed from. The response must be whole numbers \eqn{\ge 0}{>= 0}; missing or infinite
#' values, in the response, the covariates or the offset, are errors, not silently dropped.
#'
#' The likelihood falls like \eqn{\exp(-e^\eta)}{exp(-exp(eta))} in the linear predictor, and
#' with several covariates draws from the prior (the default, or `prior = "paper"` on covariates
#' of unit scale) reach \eqn{\eta}{eta} of 30 and more.
#' Particles left there have zero weight and cannot move back, and then the annealing of [ais()]
#' (and of the exact early phase of [sgais()]) can stall, \eqn{\lambda}{lambda} rising by
#' tiny steps; `resample = TRUE` (resampling at every step, see [sgais_control()]) avoids it.
#' Whether a run stalls depends on its prior draws. Use `resample = TRUE` when
#' a fit seems stuck near \eqn{\lambda = 0}{lambda = 0}, or give a narrower prior (the default's
#' slopes have sd 2.5 / sd(x_j); `prior = normal_prior(0, s / apply(x, 2, sd))` with a smaller s).
#'
#' @inheritSection logistic_regression Random effects
#' @inheritParams logistic_regression
#' @param prior_sd The prior standard deviation \eqn{\tau} of the intercept and each weight
#'   under `prior = "paper"` (default 2.5); giving it selects that prior unless `prior` is given.
#' @param y The counts: whole numbers \eqn{\ge 0}{>= 0}, with one element per row of `x`.
#' @param offset An offset added to the linear predictor (the log exposure). With `x` and `y`: a
#'   numeric vector with one element per row of `x`. With a formula, as in [stats::glm()]: an
#'   expression in the columns of `data` (`offset = log(years)`), the same as the term
#'   `offset(log(years))` in the formula, so that new rows bring their own.
#' @return A model of class `c("sgais_poisson_regression", "sgais_model")` for [sgais()], [ais()]
#'   and [nested_sampling()].
#' @seealso [logistic_regression()], [check_gradients()].
#' @export
#' @examples
#' # counts of insects after six sprays
#' model <- poisson_regression(count ~ spray, InsectSprays)
#' model
#' fit <- sgais(model, seed = 1)
#' fit
#'
#' # an exposure: events over observation times of different lengths
#' set.seed(1)
#' visits <- data.frame(age = rnorm(200), years = runif(200, 0.5, 3))
#' visits$events <- rpois(200, visits$years * exp(0.5 + 0.3 * visits$age))
#' poisson_regression(events ~ age + offset(log(years)), visits)
#'
#' # the same model through the matrix interface
#' poisson_regression(x = visits$age, y = visits$events, offset = log(visits$years))
poisson_regression <- function(formula = NULL, data = NULL, prior_sd = 2.5, x = NULL, y = NULL,
                               offset = NULL, prior = NULL, prior_intercept = NULL,
                               group_sd = NULL, group_cor = NULL, weights = NULL, subset = NULL,
                               na.action = NULL, family = NULL) {
  call <- sys.call()
  input <- regression_input(formula, data, substitute(weights), substitute(subset), na.action,
                            family, parent.frame(), call, prior, missing(prior_sd),
                            substitute(offset))
  if (!is.null(formula)) offset <- NULL # now in the formula
  if (random_effects_call(input$formula, x, y, group_sd, call, offset, group_cor)) {
    return(glm_mixed("poisson", input$formula, input$data,
                     list(prior_sd = prior_sd, prior = input$prior,
                          prior_intercept = prior_intercept), group_sd, call, group_cor))
  }
  prior_sd <- check_hyper(prior_sd, "prior_sd", call)
  design <- count_design(input$formula, input$data, x, y, offset, call)
  regression_model(
    "poisson_regression", with_autoscale(design, input$prior, prior_intercept, "glm", call),
    list(prior_sd = prior_sd), call, "Bayesian Poisson regression", poisson_regression_data,
    count_details(design$spec, "%s ~ Poisson(exp(%sa'theta)), a = row of the design"),
    formula = input$formula
  )
}

# The design of a count regression's rows (poisson_regression(), negative_binomial_regression()),
# with the offset: of the formula's offset() terms, or `offset` with `x` and `y`. The spec says
# whether there is one and, when it depends on all the rows at once, that new rows cannot be
# taken row by row.
count_design <- function(formula, data, x, y, offset, call) {
  design <- regression_design(formula, data, x, y, call, offset = TRUE)
  if (design$spec$interface == "matrix") {
    design$spec$offset <- !is.null(offset)
    design[["offset"]] <- offset
    design$what_offset <- "`offset`"
  } else {
    design$spec$offset <- !is.null(design[["offset"]])
    design$what_offset <- "The offset of `data`"
    design$spec$row_by_row <- design$spec$row_by_row %||%
      offset_row_by_row(design$spec, data, design[["offset"]], call)
  }
  design
}

# The lines of print() on a count regression's likelihood (`likelihood`, of the response and
# "offset + " or "") and offset.
count_details <- function(spec, likelihood) {
  c(likelihood = sprintf(likelihood, spec$response, if (spec$offset) "offset + " else ""),
    if (spec$offset) c(offset = offset_label(spec)))
}

# The data the C core reads from the design of some rows (see model_data()): the counts and the
# offset, zero when the model has none (so every model's data have the same elements).
poisson_regression_data <- function(design, call) {
  y <- check_counts(design$y, design$what, call)
  n <- nrow(design$a)
  offset <- if (is.null(design[["offset"]])) numeric(n) else {
    check_offset(design[["offset"]], n, design$what_offset, call)
  }
  list(xt = by_observation(design$a), y = y, offset = offset)
}

#' @exportS3Method
model_data.sgais_poisson_regression <- function(model, new_data, call = NULL) {
  spec <- spec_of(model, call)
  rows <- regression_rows(spec, new_data, call)
  if (spec$interface == "matrix") {
    offset <- if (is.list(new_data)) new_data[["offset"]]
    if (spec$offset && is.null(offset)) {
      abort_mismatch("`new_data` has no `offset`, but the model was built with one: give `list(x = , y = , offset = )`.",
                     call, "sgais_error_missing_column", column = "offset")
    }
    if (!spec$offset && !is.null(offset)) {
      abort_mismatch("`new_data` has an `offset`, but the model was built without one.",
                     call, "sgais_error_extra_column", column = "offset")
    }
    rows[["offset"]] <- offset
    rows$what_offset <- "`new_data$offset`"
  } else {
    rows$what_offset <- "The offset of `new_data`"
  }
  poisson_regression_data(rows, call)
}

# Counts: numbers (not factors or logicals), finite, whole and >= 0, as doubles.
check_counts <- function(y, what, call) {
  if (!is.numeric(y) || is.factor(y)) {
    abort(sprintf("%s must be counts (whole numbers >= 0), not %s.", what, describe(y)), call)
  }
  bad <- which(!is.finite(y))
  if (length(bad)) abort_bad_observations(what, bad, "missing or infinite", call)
  off <- which(y < 0 | y != round(y))
  if (length(off)) {
    abort(sprintf("%s must be counts (whole numbers >= 0); it has %s at observation %d.", what,
                  format(y[off[1]]), off[1]), call)
  }
  as.double(y)
}

check_offset <- function(offset, n, what, call) {
  if (!is.numeric(offset) || is.factor(offset) || !is.null(dim(offset)) && NCOL(offset) != 1L) {
    abort(sprintf("%s must be a numeric vector, not %s.", what, describe(offset)), call)
  }
  if (length(offset) != n) {
    abort(sprintf("%s has %d elements, but there are %d observations; they must match.", what,
                  length(offset), n), call)
  }
  bad <- which(!is.finite(offset))
  if (length(bad)) {
    abort(sprintf("%s contains %s (NA, NaN and Inf are not allowed; log(0) is -Inf), first at observation %d.",
                  what, if (length(bad) == 1L) "a non-finite value" else paste(length(bad), "non-finite values"),
                  bad[1]), call, "sgais_error_non_finite", row = bad[1])
  }
  as.double(offset)
}

# NULL when the offset of a row depends on that row alone, as new rows need; else why not
# (row_by_row() in R/design.R checks the design columns only).
offset_row_by_row <- function(spec, data, offset, call) {
  if (is.null(offset) || nrow(data) < 2L) return(NULL)
  first <- tryCatch(formula_matrix(spec, data[1L, , drop = FALSE], "`data`", call)$offset,
                    error = function(e) NULL)
  if (identical(unname(first), unname(offset[1L]))) return(NULL)
  "the offset depends on all the rows at once (as with `mean()` or `sd()`)"
}

# How print() shows the offset: the formula's offset() terms, or the argument.
offset_label <- function(spec) {
  if (spec$interface == "matrix") return("`offset`, given with `x` and `y`")
  terms <- spec$terms
  vars <- attr(terms, "variables")
  paste(vapply(attr(terms, "offset"), function(i) deparse(vars[[i + 1L]]), ""), collapse = " + ")
}
