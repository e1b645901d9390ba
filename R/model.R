# The R side of the model interface. A model object (class `sgais_model`) is a list whose fields
# `family`, `data` and `hyper` are read by the C core (src/model_r.c builds its sg_model from them);
# `spec` is what turns rows of data into `data` (R/model_spec.R), hyperparameters included: `hyper`
# is `spec$hyper`. The other fields are for people: a label, sizes, parameter names and a
# description of the likelihood and prior for print().

new_sgais_model <- function(family, data, spec, n, parameter_names, label, details, ...,
                            class = character()) {
  hyper <- spec$hyper
  stopifnot(
    is.character(family), length(family) == 1L, is.list(data), is.list(spec), is.list(hyper),
    !is.null(names(hyper)), is.numeric(n), is.character(parameter_names),
    is.character(details), !is.null(names(details))
  )
  structure(
    list(
      family = family, data = data, hyper = hyper, spec = spec, n = as.integer(n),
      dim = length(parameter_names), parameter_names = parameter_names,
      label = label, details = details, ...
    ),
    class = c(class, "sgais_model")
  )
}

# What is wrong, if anything, with the random effects' hyperparameters of a model with q
# effects per group (linear_mixed and glm_mixed): known `group_sd` (q numbers), `correlated`
# (TRUE, with q > 1) and a known `group_cor` (q x q); NULL when nothing.
random_effects_hyper_problem <- function(h, q) {
  v <- h[["group_sd"]]
  if (!is.null(v) && !(is.numeric(v) && length(v) == q && all(in_hyper_range(v)))) {
    return(sprintf("its `hyper$group_sd` must be %d number%s in [%g, %g] or absent, not %s.", q,
                   if (q == 1L) "" else "s", hyper_range[1], hyper_range[2], describe(v)))
  }
  v <- h[["correlated"]]
  if (!is.null(v) && !(isTRUE(v) && q > 1L)) {
    return("its `hyper$correlated` must be TRUE (with 2 or more random effects) or absent.")
  }
  v <- h[["group_cor"]]
  if (!is.null(v) && !(isTRUE(h[["correlated"]]) && is.matrix(v) && typeof(v) == "double" &&
                       all(dim(v) == q) && all(is.finite(v)))) {
    return(sprintf("its `hyper$group_cor` must be a finite %d x %d matrix, with `correlated`, or absent.",
                   q, q))
  }
  NULL
}

# What every family's object holds, checked by validate_sgais_model(): the hyperparameters
# (`scale`: a positive number in [1e-100, 1e100]; `whole`: a whole number >= the given minimum;
# `numeric`: finite numbers), the elements of `data` and their types (the first is a matrix
# with one column per observation, the others vectors), the response's kind, and the number of
# parameters its data and hyperparameters make.

model_rules <- list(
  linear_regression = list(
    hyper = list(noise_sd = "scale", prior_sd = "scale"),
    data = c(xt = "double", y = "double"), dim = function(m) nrow(m$data$xt)
  ),
  linear_regression_nig = list(
    hyper = list(prior_sd = "scale", variance_shape = "scale", variance_scale = "scale"),
    data = c(xt = "double", y = "double"), dim = function(m) nrow(m$data$xt) + 1L
  ),
  linear_regression_zellner = list(
    hyper = list(zellner = c(whole = 1), g = "scale", gram_chol = "numeric", flat = "numeric"),
    data = c(xt = "double", y = "double"), dim = function(m) nrow(m$data$xt) + 1L
  ),
  robust_regression = list(
    hyper = list(df = "scale", prior_sd = "scale", scale_prior = "scale"),
    data = c(xt = "double", y = "double"), dim = function(m) nrow(m$data$xt) + 1L
  ),
  logistic_regression = list(
    hyper = list(prior_sd = "scale"), data = c(xt = "double", y = "double"), response = "binary",
    dim = function(m) nrow(m$data$xt), check = function(m) binomial_trials_problem(m$data)
  ),
  poisson_regression = list(
    hyper = list(prior_sd = "scale"), data = c(xt = "double", y = "double", offset = "double"),
    response = "count", dim = function(m) nrow(m$data$xt)
  ),
  negative_binomial_regression = list(
    hyper = list(prior_sd = "scale", overdispersion_prior = "scale"),
    data = c(xt = "double", y = "double", offset = "double"), response = "count",
    dim = function(m) nrow(m$data$xt) + 1L
  ),
  softmax_regression = list(
    hyper = list(classes = c(whole = 2), prior_sd = "scale"),
    data = c(xt = "double", y = "integer"), response = "class",
    dim = function(m) nrow(m$data$xt) * m$hyper$classes
  ),
  linear_mixed = list(
    hyper = list(prior_sd = "scale"),
    data = c(xt = "double", y = "double", group = "integer", zt = "double", st = "double"),
    matrices = c("zt", "st"),
    dim = function(m) {
      q <- nrow(m$data$zt)
      nrow(m$data$xt) + is.null(m$hyper[["noise_sd"]]) +
        (if (is.null(m$hyper[["group_sd"]])) q else 0L) +
        if (isTRUE(m$hyper[["correlated"]]) && is.null(m$hyper[["group_cor"]])) q * (q - 1L) / 2L else 0L
    },
    check = function(m) {
      d <- m$data
      p <- nrow(d$xt)
      q <- nrow(d$zt)
      w <- mixed_stats_width(p, q)
      G <- length(m$groups)
      sums <- m$group_sums
      if (q > 8L) return("its `data$zt` has more than 8 rows (random effects).")
      v <- m$hyper[["noise_sd"]]
      if (!is.null(v) && !(is_number(v) && in_hyper_range(v))) {
        return(sprintf("its `hyper$noise_sd` must be a number in [%g, %g] or absent, not %s.",
                       hyper_range[1], hyper_range[2], describe(v)))
      }
      problem <- random_effects_hyper_problem(m$hyper, q)
      if (!is.null(problem)) return(problem)
      if (!is.character(m$groups) || anyNA(m$groups) || anyDuplicated(m$groups)) {
        return("its `groups` must be distinct group keys (character).")
      }
      if (!is.matrix(sums) || typeof(sums) != "double" || nrow(sums) != w || ncol(sums) != G ||
          any(!is.finite(sums))) {
        return(sprintf("its `group_sums` must be a finite %d x %d numeric matrix.", w, G))
      }
      if (nrow(d$st) != w) return(sprintf("its `data$st` must have %d rows.", w))
      if (any(d$group < 1L | d$group > G)) return("its `data$group` must index its `groups`.")
      diagonal <- cumsum(seq_len(q)) # the rows of sum z_k^2 in the statistics
      if (any(d$st[diagonal, ] < 0)) {
        return("its `data$st` holds sums of squares (group counts) below 0.")
      }
      NULL
    }
  ),
  glm_mixed = list(
    hyper = list(prior_sd = "scale", glmm_family = c(whole = 1)),
    data = c(xt = "double", y = "double", offset = "double", unit_rows = "integer",
             unit_context = "integer", unit_group = "integer"),
    dim = function(m) {
      q <- length(m$hyper[["effects"]] %||% 0L)
      nrow(m$data$xt) + identical(m$hyper$glmm_family, 3L) +
        (if (is.null(m$hyper[["group_sd"]])) q else 0L) +
        if (isTRUE(m$hyper[["correlated"]]) && is.null(m$hyper[["group_cor"]])) q * (q - 1L) / 2L else 0L
    },
    check = function(m) {
      d <- m$data
      h <- m$hyper
      if (!h$glmm_family %in% glmm_family_codes) {
        return("its `hyper$glmm_family` must be 1, 2, 3 or 4.")
      }
      if ((h$glmm_family == glmm_family_codes[["binomial"]]) != !is.null(d$trials)) {
        return("its `data$trials` must be there for binomial counts (`hyper$glmm_family` 4) only.")
      }
      problem <- binomial_trials_problem(d)
      if (!is.null(problem)) return(problem)
      quad <- h$quadrature
      if (!is.matrix(quad) || typeof(quad) != "double" || nrow(quad) != 3L || ncol(quad) < 1L ||
          ncol(quad) > 256L || any(!is.finite(quad)) || quad[1L, 1L] != 0 || is.unsorted(quad[1L, ])) {
        return(paste("its `hyper$quadrature` must be a finite numeric matrix of 3 rows (rules",
                     "for integrals of at least so many rows, from 0 up) and 1 to 256 columns."))
      }
      q <- length(h[["effects"]] %||% 0L)
      v <- h[["effects"]]
      if (!is.null(v) && !(is.integer(v) && length(v) %in% 1:3 && !anyNA(v) &&
                           all(v >= 0L & v <= nrow(d$xt)))) {
        return("its `hyper$effects` must be 1 to 3 design columns (0 for an intercept) or absent.")
      }
      problem <- random_effects_hyper_problem(h, q)
      if (!is.null(problem)) return(problem)
      if (h$glmm_family == 3L && !(is_number(h$overdispersion_prior) &&
                                   in_hyper_range(h$overdispersion_prior))) {
        return("its `hyper$overdispersion_prior` must be a positive number.")
      }
      if (!is.character(m$groups) || anyNA(m$groups) || anyDuplicated(m$groups)) {
        return("its `groups` must be distinct group keys (character).")
      }
      if (any(d$unit_rows < 1L) || any(d$unit_context < 0L) || any(d$unit_context >= d$unit_rows)) {
        return("its `data$unit_rows` must be >= 1 and its `data$unit_context` in 0..unit_rows - 1.")
      }
      if (any(d$unit_group < 1L | d$unit_group > length(m$groups))) {
        return("its `data$unit_group` must index its `groups`.")
      }
      y <- d$y
      ok <- if (h$glmm_family == 1L) all(y == 0 | y == 1) else
        h$glmm_family == 4L || all(y >= 0 & y == round(y))
      if (!ok) {
        return(sprintf("its `data$y` holds values that are not %s.",
                       if (h$glmm_family == 1L) "0 or 1" else "whole numbers >= 0"))
      }
      NULL
    }
  ),
  gaussian_mixture = list(
    hyper = list(components = c(whole = 1), concentration = "scale", variance_shape = "scale",
                 variance_scale = "scale", mean_variance_ratio = "scale"),
    data = c(yt = "double"),
    dim = function(m) m$hyper$components - 1L + 2L * m$hyper$components * nrow(m$data$yt)
  ),
  custom = list(hyper = list(), data = c(xt = "double")),
  compiled = list(hyper = list(values = "numeric"), data = c(xt = "double"))
)

# Why the binomial counts of a logistic model's data list (`y` successes of `trials`) are not
# valid, or NULL (also when it has no trials: 0/1 rows).
binomial_trials_problem <- function(data) {
  m <- data$trials
  if (is.null(m)) return(NULL)
  if (!is.double(m) || !is.null(dim(m)) || length(m) != length(data$y)) {
    return(sprintf("its `data$trials` must be a double vector of %s values (one per row), not %s.",
                   format_count(length(data$y)), describe(m)))
  }
  y <- data$y
  if (anyNA(m) || any(!(y >= 0 & y <= m & m < 2^53) | y != round(y) | m != round(m))) {
    return("its `data$y` and `data$trials` must be whole numbers with 0 <= y <= trials.")
  }
  NULL
}

# The range of a scale hyperparameter: its square and reciprocal square, and their products
# with data of ordinary size, stay far inside the doubles, so closed forms and samplers keep
# their precision (noise_sd = 1e-200 would make 1 / noise_sd^2 infinite).
hyper_range <- c(1e-100, 1e100)
in_hyper_range <- function(v) !is.na(v) & v >= hyper_range[1] & v <= hyper_range[2]

# Checks what the estimators and the C core trust before they read a model: its class and
# family, `n` against the observations its data hold, the data's types, shapes and values
# (finite, and of the kind the likelihood takes), the hyperparameters, and `dim` against the
# parameter names and what the data and hyperparameters make. A damaged or hand-edited model
# gives an error of class `sgais_error_invalid_model` naming the field, never a wrong number.
# Costs a pass over the data.
validate_sgais_model <- function(model, call = NULL) {
  bad <- function(fmt, ...) {
    abort(paste("`model` is not a valid sgais model:", sprintf(fmt, ...)), call,
          "sgais_error_invalid_model")
  }
  if (!is.list(model) || !inherits(model, "sgais_model")) bad("it is not a model object")
  family <- model$family
  if (!is.character(family) || length(family) != 1L || is.na(family)) {
    bad("its `family` must be a string, not %s.", describe(family))
  }
  rules <- model_rules[[family]]
  if (is.null(rules)) bad("its `family` \"%s\" is not a known family.", family)
  data <- model$data
  if (!is.list(data) || !length(data) || is.null(names(data))) {
    bad("its `data` must be a named list, not %s.", describe(data))
  }
  for (el in names(rules$data)) {
    v <- data[[el]]
    first <- el == names(rules$data)[1]
    matrix_el <- first || el %in% rules$matrices
    if (is.null(v) || typeof(v) != rules$data[[el]] || (matrix_el && (!is.matrix(v) || nrow(v) < 1L)) ||
        (!matrix_el && !is.null(dim(v)))) {
      bad("its `data$%s` must be a%s %s %s, not %s.", el, if (rules$data[[el]] == "integer") "n" else "",
          rules$data[[el]], if (matrix_el) "matrix" else "vector", describe(v))
    }
  }
  held <- data_rows(data)
  rows <- ncol(data[[names(rules$data)[1]]]) # one per observation, or per row of units
  for (el in names(rules$data)[-1]) {
    count <- if (el %in% rules$matrices) ncol(data[[el]]) else length(data[[el]])
    if (count != if (startsWith(el, "unit_")) held else rows) {
      bad("its `data$%s` has %s values for %s %s.", el, format_count(count),
          format_count(if (startsWith(el, "unit_")) held else rows),
          if (startsWith(el, "unit_") || held == rows) "observations" else "rows")
    }
  }
  if (!is.null(data$unit_rows) && (anyNA(data$unit_rows) || sum(as.double(data$unit_rows)) != rows)) {
    bad("its `data$unit_rows` add up to %s rows, not the %s it holds.",
        format_count(sum(as.double(data$unit_rows))), format_count(rows))
  }
  dropped <- model_dropped(model)
  if (!is_number(model$n) || model$n != round(model$n) || model$n != held + dropped) {
    bad("its `n` (%s) is not the number of observations it has seen (%s in `data`%s).",
        describe(model$n), format_count(held),
        if (dropped > 0) sprintf(" after %s dropped", format_count(dropped)) else "")
  }
  for (el in names(rules$data)) {
    at <- .Call(C_ffi_first_non_finite, data[[el]])
    if (at > 0) bad("its `data$%s` holds a value that is not finite (NA, NaN or Inf), at position %s.",
                    el, format_count(at))
  }
  hyper <- model$hyper
  if (!is.list(hyper) || (length(rules$hyper) && is.null(names(hyper)))) {
    bad("its `hyper` must be a named list, not %s.", describe(hyper))
  }
  for (h in names(rules$hyper)) {
    v <- hyper[[h]]
    rule <- rules$hyper[[h]]
    ok <- switch(if (is.character(rule)) rule else "whole",
      scale = is_number(v) && in_hyper_range(v),
      numeric = is.numeric(v) && all(is.finite(v)),
      whole = is_number(v) && v == round(v) && v >= rule[["whole"]]
    )
    if (!ok) {
      what <- if (identical(rule, "scale")) {
        sprintf("a number in [%g, %g]", hyper_range[1], hyper_range[2])
      } else if (identical(rule, "numeric")) "finite numbers" else sprintf("a whole number >= %d", rule[["whole"]])
      bad("its `hyper$%s` must be %s, not %s.", h, what, describe(v))
    }
  }
  # the regressions' coefficient prior blocks (R/prior.R regression_prior()), when they have
  # them; C checks their contents (kinds, order, values) against the model's dimension
  blocks <- hyper[["prior"]] # not hyper$prior, which would match hyper$prior_sd
  if (!is.null(blocks) && family != "custom" &&
      (!is.matrix(blocks) || typeof(blocks) != "double" || nrow(blocks) != 6L ||
       ncol(blocks) < 1L || anyNA(blocks[1:5, ]))) {
    bad("its `hyper$prior` must be a numeric matrix of prior blocks (6 rows), not %s.",
        describe(blocks))
  }
  y <- data$y
  kind_ok <- switch(rules$response %||% "any",
    any = TRUE,
    binary = !is.null(data$trials) || all(y == 0 | y == 1), # counts: binomial_trials_problem()
    count = all(y >= 0 & y == round(y)),
    class = is_number(model$hyper$classes) && all(y >= 1L & y <= model$hyper$classes)
  )
  if (!kind_ok) {
    bad("its `data$y` holds values that are not %s.", c(
      binary = "0 or 1", count = "whole numbers >= 0",
      class = sprintf("class codes in 1..%s", format(model$hyper$classes)))[[rules$response]])
  }
  names <- model$parameter_names
  if (!is_number(model$dim) || model$dim < 1 || model$dim != round(model$dim)) {
    bad("its `dim` must be a whole number >= 1, not %s.", describe(model$dim))
  }
  if (!is.null(rules$dim) && rules$dim(model) != model$dim) {
    bad("its `dim` (%d) is not the number of parameters its data and hyperparameters make (%d).",
        model$dim, rules$dim(model))
  }
  if (!is.character(names) || length(names) != model$dim) {
    bad("its `parameter_names` must be %d names (one per parameter), not %s.", model$dim, describe(names))
  }
  if (!is.character(model$label) || length(model$label) != 1L) {
    bad("its `label` must be a string, not %s.", describe(model$label))
  }
  if (!is.character(model$details) || is.null(names(model$details))) {
    bad("its `details` must be a named character vector, not %s.", describe(model$details))
  }
  if (!is.null(rules$check)) {
    why <- rules$check(model)
    if (!is.null(why)) bad("%s", why)
  }
  if (family == "custom") {
    for (f in c("log_likelihood", "gradient")) {
      if (!is.function(model$functions[[f]])) bad("its `functions$%s` must be a function.", f)
    }
  }
  model
}

#' @export
format.sgais_model <- function(x, ...) {
  names <- x$parameter_names
  shown <- if (length(names) > 8) c(names[1:7], "...") else names
  c(
    sprintf("<sgais model: %s>", x$label),
    sprintf("  observations: %s%s%s", format_count(x$n),
            if (model_dropped(x) > 0) sprintf(" (holds the last %s: from a fit with a bounded reservoir)",
                                              format_count(x$n - model_dropped(x))) else "",
            if (!is.null(x$data$unit_rows)) {
              sprintf(" (each the rows of a group of `%s`: %s rows in all)", x$spec$group,
                      format_count(model_rows(x)))
            } else ""),
    sprintf("  parameters:   %d (%s)", x$dim, paste(shown, collapse = ", ")),
    sprintf("  %-13s %s", paste0(names(x$details), ":"), centred_labels(x, x$details))
  )
}

# `text` naming the intercept as what it is in a model whose covariates are centred (the
# intercept at their means; posterior_samples() gives the intercept at x = 0).
centred_labels <- function(model, text) {
  if (is.null(model$spec$center) || all(model$spec$center == 0)) return(text)
  gsub("(Intercept)", "(Intercept, centred)", text, fixed = TRUE)
}

#' @export
print.sgais_model <- function(x, ...) {
  cat_lines(format(x, ...))
  invisible(x)
}

#' @importFrom stats nobs
#' @export
nobs.sgais_model <- function(object, ...) object$n

#' Exact log evidence of a model
#'
#' The closed-form log marginal likelihood \eqn{\log p(y_1, \dots, y_n)}, for models that have
#' one: Bayesian linear regression with known noise or with the conjugate prior of an unknown
#' noise variance, linear regression with random effects, and a Gaussian mixture with one
#' component. Use it to check an estimate, or an
#' estimate's whole trajectory. Other models (softmax and robust regression, mixtures of several
#' components) give an error that says so.
#'
#' For [linear_regression()] the evidence is that of \eqn{y \sim N(0, \sigma^2 I + \tau^2 A
#' A^\top)}{y ~ N(0, s^2 I + t^2 A A')} with design matrix \eqn{A}. It is computed through the
#' posterior precision \eqn{P = A^\top A / \sigma^2 + I / \tau^2}{P = A'A / s^2 + I / t^2} and its
#' Cholesky factor (no explicit inverse), accumulating \eqn{A^\top A} over the data in order, so
#' all prefix lengths cost one pass over the data.
#'
#' For [linear_regression()] with `noise_sd = NULL` (\eqn{\sigma^2 \sim \mathrm{InvGamma}(a,
#' b)}{sigma^2 ~ InvGamma(a, b)}, \eqn{\theta \mid \sigma^2 \sim N(0, \sigma^2 \tau^2 I)}{theta
#' | sigma^2 ~ N(0, sigma^2 t^2 I)}) the data are multivariate Student-t, \eqn{y \sim t_{2a}(0,
#' (b/a)(I + \tau^2 A A^\top))}{y ~ t_{2a}(0, (b/a)(I + t^2 A A'))}, computed in the same way
#' through \eqn{P = A^\top A + I / \tau^2}{P = A'A + I / t^2}:
#' \deqn{\log Z = \log\Gamma(a + \tfrac n2) - \log\Gamma(a) + a \log b - (a + \tfrac n2) \log(b +
#' \tfrac Q2) - \tfrac n2 \log 2\pi - \tfrac12 \log\det(I + \tau^2 A^\top A)}{log Z = lgamma(a +
#' n/2) - lgamma(a) + a log b - (a + n/2) log(b + Q/2) - n log(2 pi) / 2 - log det(I + t^2 A'A) / 2}
#' with \eqn{Q = y^\top y - y^\top A P^{-1} A^\top y}{Q = y'y - y'A P^-1 A'y}.
#'
#' For [linear_regression()] with a random intercept `(1 | g)` and known `noise_sd` and
#' `group_sd`, \eqn{y \sim N(A m, S + A T A^\top)}{y ~ N(A m, S + A T A')} with \eqn{S}{S}
#' block-diagonal, \eqn{\sigma^2 I + \tau^2 1 1^\top}{sigma^2 I + group_sd^2 1 1'} for each
#' group, computed from per-group sums by the Woodbury identity (one pass over the data, then
#' O(groups) per value); with random slopes (known sds) \eqn{\sigma^2 I + Z_g D Z_g^\top}{sigma^2
#' I + Z_g D Z_g'} for each group likewise. With a random intercept alone and either sd unknown
#' it is that value integrated over the unknown sds' prior, by the trapezoid rule on a grid in
#' their logs that reaches out until the integrand is \eqn{e^{-40}}{e^-40} of its peak: exact
#' to far below the estimators' errors, though no longer a closed form.
#'
#' For [gaussian_mixture()] with `components = 1` each dimension is a normal-inverse-gamma model,
#' \eqn{y_i \sim N(\mu, \sigma^2)}{y_i ~ N(mu, sigma2)}, \eqn{\mu \mid \sigma^2 \sim N(0, r
#' \sigma^2)}{mu | sigma2 ~ N(0, r sigma2)}, \eqn{\sigma^2 \sim \mathrm{InvGamma}(a, b)}{sigma2 ~
#' InvGamma(a, b)}, whose evidence is
#' \deqn{\log Z = \log\Gamma(a_n) - \log\Gamma(a) + a \log b - a_n \log b_n + \tfrac12 \log(\kappa /
#' \kappa_n) - \tfrac n2 \log 2\pi}{log Z = lgamma(a_n) - lgamma(a) + a log b - a_n log b_n +
#' log(kappa / kappa_n) / 2 - n log(2 pi) / 2}
#' with \eqn{\kappa = 1/r}{kappa = 1/r}, \eqn{\kappa_n = \kappa + n}{kappa_n = kappa + n},
#' \eqn{a_n = a + n/2} and \eqn{b_n = b + \frac12 \sum_i (y_i - \bar y)^2 + \frac{\kappa n \bar
#' y^2}{2 \kappa_n}}{b_n = b + sum (y_i - ybar)^2 / 2 + kappa n ybar^2 / (2 kappa_n)}; the
#' dimensions add.
#'
#' @param model A model, e.g. from [linear_regression()] or a one-component [gaussian_mixture()].
#' @param n Optional prefix lengths: whole numbers in `1:nobs(model)`. `NULL` (the default) means
#'   all observations.
#' @return A numeric vector, one log evidence for each element of `n`.
#' @export
#' @examples
#' data <- simulate_linear_regression(1000, seed = 1)
#' model <- linear_regression(y ~ ., data)
#' exact_log_evidence(model)
#' exact_log_evidence(model, n = c(10, 100, 1000))
exact_log_evidence <- function(model, n = NULL) {
  UseMethod("exact_log_evidence")
}

#' @export
exact_log_evidence.default <- function(model, n = NULL) {
  check_model(model, sys.call())
  abort(sprintf(
    "`model` (%s) has no closed-form evidence; estimate it with `sgais()`.", model$label
  ), sys.call(), "sgais_error_no_closed_form")
}

# Prefix lengths for exact evidence: whole numbers in 1..N.
check_prefix_lengths <- function(n, total, call) {
  if (is.null(n)) return(total)
  if (!is.numeric(n) || length(n) == 0L || anyNA(n) || any(!is.finite(n)) ||
      any(n != round(n)) || any(n < 1) || any(n > total)) {
    abort(sprintf("`n` must hold whole numbers between 1 and %s (the number of observations).",
                  format_count(total)), call)
  }
  as.integer(n)
}

# Data as the C models read them: one column per observation (the transpose of the usual one row
# per observation), so an observation's values are contiguous and a mini-batch touches one cache
# line per observation. Names are dropped: C reads positions.
by_observation <- function(a) {
  out <- t(a)
  dimnames(out) <- NULL
  out
}

# The exact log evidence of `model` at prefix lengths n, or NULL when the model has none.
exact_or_null <- function(model, n) {
  tryCatch(exact_log_evidence(model, n = n), sgais_error = function(e) NULL)
}

# The C model functions as R sees them: log prior, log likelihood of observations
# start + 1, ..., start + n, and their gradients at theta. Used by tests and gradient checks.
model_evaluate <- function(model, theta, start = 0L, n = model$n - start) {
  with_model_errors(
    .Call(C_ffi_model_evaluate, model, as.double(theta), as.integer(start), as.integer(n))
  )
}

# What the model supplies, from the C core (src/model_r.c): a named logical vector with `jumps`
# (jump proposals: its posterior may have separated modes), `log_lik_range` (the confidence
# sampler's bound), `lik_bound` (FlyMC's), `canonicalize` (a canonical labelling) and
# `reference` (a reference distribution the annealing path can start from, setting `reference`).
model_capabilities <- function(model) {
  with_model_errors(.Call(C_ffi_model_capabilities, model))
}
model_has_jumps <- function(model) model_capabilities(model)[["jumps"]]
model_has_reference <- function(model) model_capabilities(model)[["reference"]]
# What the model's reference built on all its observations is worth (src/anneal.h,
# sg_reference_level): "none"; "usable", which a run may start from (a mixture whose data show
# fewer clusters than components), and from which a restart run anneals all its observations
# as one chunk (sgais_restart()); or "complete" (the data show as many clusters as the
# mixture has components), which a stream's restarts also wait for.
model_reference_level <- function(model) {
  c("none", "usable", "complete")[with_model_errors(.Call(C_ffi_model_reference_level, model)) + 1L]
}

# n draws from the prior as a dim x n matrix.
model_prior_draw <- function(model, n) {
  with_model_errors(.Call(C_ffi_model_prior_draw, model, as.integer(n)))
}
