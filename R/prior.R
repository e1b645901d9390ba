# Prior building blocks for custom_model(), compiled_model() and the regression models: an
# independent prior on consecutive parameters, evaluated in C (src/prior.c). A prior is a list
# of blocks (class `sgais_prior`); c() joins priors block after block. Scale parameters are
# sampled on the log scale (the model's parameter is log sigma) and their blocks include the
# Jacobian, so half_normal_prior(1) on `log_sigma` means sigma ~ N+(0, 1).

# C's codes for the kinds (src/model.h, SG_PRIOR_*).
prior_kinds <- c(normal = 1, student_t = 2, half_normal = 3, exponential = 4)

new_sgais_prior <- function(blocks) {
  structure(list(blocks = blocks), class = "sgais_prior")
}

prior_block <- function(kind, dim, location, scale, df, label, call) {
  if (!is.null(dim)) dim <- check_whole_number(dim, "dim", 1, call)
  new_sgais_prior(list(list(kind = kind, dim = dim, location = location, scale = scale,
                            df = df, label = label)))
}

check_finite_number <- function(x, arg, call) {
  if (!is_number(x) || !is.finite(x)) {
    abort(sprintf("`%s` must be a finite number, not %s.", arg, describe(x)), call)
  }
  as.double(x)
}

#' Prior building blocks
#'
#' Independent priors on consecutive parameters of a model, for [custom_model()] and
#' [compiled_model()]. Each block covers `dim` parameters (all of them when it is the only
#' block; the parameters the other blocks leave when `dim = NULL`); join blocks with `c()`, in
#' the order of the parameters. They are evaluated in C, so they cost nothing next to the
#' likelihood.
#'
#' Scale parameters (standard deviations) must be positive, but the samplers move on the whole
#' real line, so a model works with \eqn{\theta = \log\sigma}{theta = log(sigma)}:
#' `half_normal_prior()`, `exponential_prior()` and `log_normal_prior()` are priors on
#' \eqn{\sigma}{sigma} for a parameter \eqn{\theta = \log\sigma}{theta = log(sigma)}, with the
#' Jacobian \eqn{d\sigma/d\theta = \sigma}{d sigma / d theta = sigma} included, and the
#' likelihood should use `exp(theta)`.
#'
#' * `normal_prior()`: \eqn{\theta_j \sim N(\mathrm{mean}, \mathrm{sd}^2)}{theta_j ~ N(mean, sd^2)}.
#' * `student_t_prior()`: \eqn{\theta_j = \mathrm{location} + \mathrm{scale}\, t_\nu}{theta_j =
#'   location + scale * t_df}, heavier tails than the normal.
#' * `half_normal_prior()`: \eqn{\sigma_j = e^{\theta_j} \sim N^+(0, \mathrm{scale}^2)}{sigma_j =
#'   exp(theta_j) ~ N+(0, scale^2)}.
#' * `exponential_prior()`: \eqn{\sigma_j = e^{\theta_j} \sim \mathrm{Exp}(\mathrm{rate})}{sigma_j =
#'   exp(theta_j) ~ Exp(rate)}.
#' * `log_normal_prior()`: \eqn{\log\sigma_j = \theta_j \sim N(\mathrm{meanlog},
#'   \mathrm{sdlog}^2)}{log(sigma_j) = theta_j ~ N(meanlog, sdlog^2)}, the same as
#'   `normal_prior(meanlog, sdlog)` on \eqn{\theta}{theta}.
#'
#' @param mean,sd Mean and standard deviation of a normal prior.
#' @param df Degrees of freedom of the Student-t prior.
#' @param location,scale Location and scale of the Student-t; the scale of the half-normal.
#' @param rate Rate of the exponential prior on \eqn{\sigma}{sigma}.
#' @param meanlog,sdlog Mean and standard deviation of \eqn{\log\sigma}{log(sigma)}.
#' @param dim How many consecutive parameters the block covers; `NULL` (the default): all the
#'   parameters that the other blocks do not.
#' @return A prior of class `sgais_prior`.
#' @seealso [custom_model()] and [compiled_model()], which take them; [custom_prior()] for a
#'   prior written as R functions.
#' @export
#' @examples
#' # three regression coefficients, then the log of the noise standard deviation
#' prior <- c(normal_prior(sd = 10, dim = 3), half_normal_prior(scale = 2))
#' prior
normal_prior <- function(mean = 0, sd = 1, dim = NULL) {
  call <- sys.call()
  mean <- check_finite_number(mean, "mean", call)
  sd <- check_positive(sd, "sd", call)
  prior_block("normal", dim, mean, sd, NA_real_,
              sprintf("N(%s, sd = %s)", format(mean), format(sd)), call)
}

#' @rdname normal_prior
#' @export
student_t_prior <- function(df = 3, location = 0, scale = 1, dim = NULL) {
  call <- sys.call()
  df <- check_positive(df, "df", call)
  location <- check_finite_number(location, "location", call)
  scale <- check_positive(scale, "scale", call)
  prior_block("student_t", dim, location, scale, df,
              sprintf("%s + %s t(df = %s)", format(location), format(scale), format(df)), call)
}

#' @rdname normal_prior
#' @export
half_normal_prior <- function(scale = 1, dim = NULL) {
  call <- sys.call()
  scale <- check_positive(scale, "scale", call)
  prior_block("half_normal", dim, 0, scale, NA_real_,
              sprintf("exp(theta) ~ half-N(0, sd = %s)", format(scale)), call)
}

#' @rdname normal_prior
#' @export
exponential_prior <- function(rate = 1, dim = NULL) {
  call <- sys.call()
  rate <- check_positive(rate, "rate", call)
  prior_block("exponential", dim, 0, 1 / rate, NA_real_,
              sprintf("exp(theta) ~ Exp(rate = %s)", format(rate)), call)
}

#' @rdname normal_prior
#' @export
log_normal_prior <- function(meanlog = 0, sdlog = 1, dim = NULL) {
  call <- sys.call()
  meanlog <- check_finite_number(meanlog, "meanlog", call)
  sdlog <- check_positive(sdlog, "sdlog", call)
  prior_block("normal", dim, meanlog, sdlog, NA_real_,
              sprintf("exp(theta) ~ log-N(%s, sdlog = %s)", format(meanlog), format(sdlog)), call)
}

#' @export
c.sgais_prior <- function(...) {
  parts <- list(...)
  if (!all(vapply(parts, inherits, logical(1), "sgais_prior"))) {
    abort("Only priors (e.g. from `normal_prior()`) can be combined with a prior.", sys.call())
  }
  new_sgais_prior(do.call(c, lapply(parts, `[[`, "blocks")))
}

#' @export
format.sgais_prior <- function(x, ...) {
  vapply(x$blocks, function(b) {
    sprintf("%s: %s", if (is.null(b$dim)) "rest" else sprintf("%d", b$dim), b$label)
  }, character(1))
}

#' @export
print.sgais_prior <- function(x, ...) {
  cat("<sgais prior>\n")
  cat(paste0("  ", format(x)), sep = "\n")
  invisible(x)
}

#' A prior written as R functions
#'
#' For [custom_model()], when the prior is not a product of the [normal_prior()] building
#' blocks (e.g. correlated parameters). The functions are called from C once per particle and
#' step, which is slower than building blocks.
#'
#' @param log_density `function(theta)`: \eqn{\log p(\theta)}{log p(theta)}, normalised (the
#'   evidence is only right with a normalised prior), including any Jacobian of a transform.
#' @param gradient `function(theta)`: its gradient, a numeric vector as long as `theta`.
#' @param draw `function()`: one draw from the prior, using R's random number generators (so
#'   that `set.seed()` and the estimators' `seed` make it reproducible).
#' @return A prior of class `sgais_custom_prior`.
#' @export
#' @examples
#' # a bivariate normal prior with correlation 0.5
#' s <- matrix(c(1, 0.5, 0.5, 1), 2)
#' prec <- solve(s)
#' prior <- custom_prior(
#'   log_density = function(theta) {
#'     -log(2 * pi) - 0.5 * log(det(s)) - 0.5 * sum(theta * (prec %*% theta))
#'   },
#'   gradient = function(theta) -drop(prec %*% theta),
#'   draw = function() drop(t(chol(s)) %*% stats::rnorm(2))
#' )
custom_prior <- function(log_density, gradient, draw) {
  call <- sys.call()
  check_function(log_density, "log_density", 1L, call)
  check_function(gradient, "gradient", 1L, call)
  check_function(draw, "draw", 0L, call)
  structure(list(log_density = log_density, gradient = gradient, draw = draw),
            class = "sgais_custom_prior")
}

#' @export
format.sgais_custom_prior <- function(x, ...) "given by R functions"

# The blocks of `prior` for a model of `dim` parameters, as the 6 x blocks matrix C reads
# (src/prior.c, sg_prior_from_r()): kind, start (0-based), n, location, scale, df.
prior_matrix <- function(prior, dim, call, arg = "prior") {
  if (!inherits(prior, "sgais_prior")) {
    abort(sprintf("`%s` must be a prior such as `normal_prior()`, not %s.", arg, describe(prior)),
          call)
  }
  blocks <- prior$blocks
  sizes <- vapply(blocks, function(b) if (is.null(b$dim)) NA_real_ else b$dim, numeric(1))
  if (sum(is.na(sizes)) > 1) {
    abort(sprintf("At most one block of `%s` can leave `dim` unset.", arg), call)
  }
  if (anyNA(sizes)) sizes[is.na(sizes)] <- dim - sum(sizes, na.rm = TRUE)
  if (any(sizes < 1) || sum(sizes) != dim) {
    abort(sprintf("`%s` covers %s parameters, but the model has %d.", arg,
                  if (any(sizes < 1)) "more than its" else format(sum(sizes)), dim), call)
  }
  start <- cumsum(c(0, sizes))[seq_along(sizes)]
  out <- vapply(seq_along(blocks), function(i) {
    b <- blocks[[i]]
    c(prior_kinds[[b$kind]], start[i], sizes[i], b$location, b$scale, b$df)
  }, numeric(6))
  dim(out) <- c(6L, length(blocks))
  out
}

# A description of a prior for print(): one line per block, naming the parameters it covers.
describe_prior <- function(prior, parameter_names) {
  if (inherits(prior, "sgais_custom_prior")) return("given by R functions")
  m <- prior_matrix(prior, length(parameter_names), NULL)
  lines <- vapply(seq_len(ncol(m)), function(i) {
    names <- parameter_names[m[2, i] + seq_len(m[3, i])]
    shown <- if (length(names) > 3) paste(names[1], "...", names[length(names)]) else
      paste(names, collapse = ", ")
    sprintf("%s: %s", shown, prior$blocks[[i]]$label)
  }, character(1))
  paste(lines, collapse = "; ")
}
