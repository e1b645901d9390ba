# Prior building blocks for custom_model(), compiled_model() and the regression models: an
# independent prior on consecutive parameters, evaluated in C (src/prior.c). A prior is a list
# of blocks (class `sgais_prior`); c() joins priors block after block. Scale parameters are
# sampled on the log scale (the model's parameter is log sigma) and their blocks include the
# Jacobian, so half_normal_prior(1) on `log_sigma` means sigma ~ N+(0, 1).

# C's codes for the kinds (src/model.h, SG_PRIOR_*).
prior_kinds <- c(normal = 1, student_t = 2, half_normal = 3, exponential = 4, half_t = 5,
                 inverse_gamma = 6, lkj = 7)

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

# A location or scale of a prior block: finite numbers (positive for a scale), one, or one per
# parameter the block covers; with `dim` given, 1 or `dim` of them.
check_block_values <- function(x, arg, dim, call, positive = FALSE) {
  if (!is.numeric(x) || is.factor(x) || length(x) < 1L || anyNA(x) || any(!is.finite(x)) ||
      (positive && any(x <= 0))) {
    abort(sprintf("`%s` must be a %sfinite number, or one per parameter, not %s.", arg,
                  if (positive) "positive " else "", describe(x)), call)
  }
  if (!is.null(dim) && !length(x) %in% c(1L, dim)) {
    abort(sprintf("`%s` has %d values for `dim` = %d parameters: give one, or one per parameter.",
                  arg, length(x), dim), call)
  }
  as.double(unname(x))
}

# The label of a block of `kind` with these values (vectors: the first few shown).
prior_label <- function(kind, location, scale, df) {
  shown <- function(x) {
    if (length(x) == 1L) return(format(x, digits = 4))
    paste0("(", paste(format(utils::head(x, 4), digits = 4), collapse = ", "),
           if (length(x) > 4) ", ..." else "", ")")
  }
  switch(kind,
    normal = sprintf("N(%s, sd = %s)", shown(location), shown(scale)),
    student_t = if (isTRUE(df == 1)) sprintf("Cauchy(%s, scale = %s)", shown(location), shown(scale))
                else sprintf("%s + %s t(df = %s)", shown(location), shown(scale), format(df)),
    half_normal = sprintf("exp(theta) ~ half-N(0, sd = %s)", format(scale)),
    exponential = sprintf("exp(theta) ~ Exp(rate = %s)", format(1 / scale)),
    half_t = sprintf("exp(theta) ~ half-t(df = %s, scale = %s)", format(df), format(scale)),
    inverse_gamma = sprintf("exp(2 theta) ~ InvGamma(shape = %s, scale = %s)", format(df),
                            format(scale)),
    lkj = sprintf("correlation ~ LKJ(eta = %s)", format(df))
  )
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
#' * `normal_prior()`: \eqn{\theta_j \sim N(\mathrm{mean}_j, \mathrm{sd}_j^2)}{theta_j ~ N(mean_j, sd_j^2)}.
#' * `student_t_prior()`: \eqn{\theta_j = \mathrm{location}_j + \mathrm{scale}_j\, t_\nu}{theta_j =
#'   location_j + scale_j * t_df}, heavier tails than the normal.
#' * `cauchy_prior()`: the Student-t with one degree of freedom, the heaviest tails of the three.
#' * `half_normal_prior()`: \eqn{\sigma_j = e^{\theta_j} \sim N^+(0, \mathrm{scale}^2)}{sigma_j =
#'   exp(theta_j) ~ N+(0, scale^2)}.
#' * `exponential_prior()`: \eqn{\sigma_j = e^{\theta_j} \sim \mathrm{Exp}(\mathrm{rate})}{sigma_j =
#'   exp(theta_j) ~ Exp(rate)}.
#' * `half_t_prior()`: \eqn{\sigma_j = e^{\theta_j} \sim \mathrm{scale}\,|t_\nu|}{sigma_j =
#'   exp(theta_j) ~ scale * |t_df|}, the half-t (Gelman 2006's prior of a group-level sd; `df =
#'   1` is the half-Cauchy).
#' * `inverse_gamma_prior()`: \eqn{\sigma_j^2 = e^{2\theta_j} \sim \mathrm{InvGamma}(\mathrm{shape},
#'   \mathrm{scale})}{sigma_j^2 = exp(2 theta_j) ~ InvGamma(shape, scale)}, the conjugate prior of
#'   a variance, stated on the variance (its density in \eqn{\theta}{theta} includes the
#'   Jacobian \eqn{2\sigma^2}{2 sigma^2}).
#' * `log_normal_prior()`: \eqn{\log\sigma_j = \theta_j \sim N(\mathrm{meanlog},
#'   \mathrm{sdlog}^2)}{log(sigma_j) = theta_j ~ N(meanlog, sdlog^2)}, the same as
#'   `normal_prior(meanlog, sdlog)` on \eqn{\theta}{theta}.
#'
#' The means, standard deviations, locations and scales of `normal_prior()`,
#' `student_t_prior()` and `cauchy_prior()` may be vectors with one value per parameter of the
#' block (or one value, recycled): `normal_prior(mean = c(0, 1), sd = c(10, 2.5))` on two
#' parameters. They are also the `prior` and `prior_intercept` of the regression models
#' ([linear_regression()], [logistic_regression()], [poisson_regression()],
#' [robust_regression()], [softmax_regression()]), which decide the blocks' sizes (leave `dim`
#' unset there).
#'
#' @param mean,sd Means and standard deviations of a normal prior: one, or one per parameter.
#' @param df Degrees of freedom of the Student-t prior.
#' @param location,scale Locations and scales of the Student-t and Cauchy priors (one, or one per
#'   parameter); the scale of the half-normal.
#' @param rate Rate of the exponential prior on \eqn{\sigma}{sigma}.
#' @param shape Shape of the inverse-gamma prior on \eqn{\sigma^2}{sigma^2} (its `scale` is the
#'   inverse-gamma's scale, in units of \eqn{\sigma^2}{sigma^2}).
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
#'
#' # a mean and sd per parameter
#' normal_prior(mean = c(0, 1, 0), sd = c(10, 2.5, 2.5))
#'
#' # the coefficients of a regression: Cauchy, and a wide normal on the intercept
#' linear_regression(mpg ~ wt + hp, mtcars, noise_sd = 3,
#'                   prior = cauchy_prior(scale = c(5, 0.1)),
#'                   prior_intercept = normal_prior(20, 10))
normal_prior <- function(mean = 0, sd = 1, dim = NULL) {
  call <- sys.call()
  if (!is.null(dim)) dim <- check_whole_number(dim, "dim", 1, call)
  mean <- check_block_values(mean, "mean", dim, call)
  sd <- check_block_values(sd, "sd", dim, call, positive = TRUE)
  prior_block("normal", dim, mean, sd, NA_real_, prior_label("normal", mean, sd, NA_real_), call)
}

#' @rdname normal_prior
#' @export
student_t_prior <- function(df = 3, location = 0, scale = 1, dim = NULL) {
  call <- sys.call()
  if (!is.null(dim)) dim <- check_whole_number(dim, "dim", 1, call)
  df <- check_positive(df, "df", call)
  location <- check_block_values(location, "location", dim, call)
  scale <- check_block_values(scale, "scale", dim, call, positive = TRUE)
  prior_block("student_t", dim, location, scale, df,
              prior_label("student_t", location, scale, df), call)
}

#' @rdname normal_prior
#' @export
cauchy_prior <- function(location = 0, scale = 1, dim = NULL) {
  call <- sys.call()
  if (!is.null(dim)) dim <- check_whole_number(dim, "dim", 1, call)
  location <- check_block_values(location, "location", dim, call)
  scale <- check_block_values(scale, "scale", dim, call, positive = TRUE)
  prior_block("student_t", dim, location, scale, 1, prior_label("student_t", location, scale, 1),
              call)
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
half_t_prior <- function(df = 3, scale = 1, dim = NULL) {
  call <- sys.call()
  df <- check_positive(df, "df", call)
  scale <- check_positive(scale, "scale", call)
  prior_block("half_t", dim, 0, scale, df, prior_label("half_t", 0, scale, df), call)
}

#' @rdname normal_prior
#' @export
inverse_gamma_prior <- function(shape = 1, scale = 1, dim = NULL) {
  call <- sys.call()
  shape <- check_positive(shape, "shape", call)
  scale <- check_positive(scale, "scale", call)
  prior_block("inverse_gamma", dim, 0, scale, shape, prior_label("inverse_gamma", 0, scale, shape),
              call)
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

#' LKJ prior of a correlation matrix
#'
#' The prior of Lewandowski, Kurowicka and Joe (2009) on a \eqn{q \times q}{q x q} correlation
#' matrix \eqn{R}: density proportional to \eqn{\det(R)^{\eta - 1}}{det(R)^(eta - 1)}. `eta = 1`
#' is uniform over correlation matrices; larger `eta` favours weaker correlations (with
#' \eqn{q = 2}, \eqn{(\rho + 1)/2 \sim \mathrm{Beta}(\eta, \eta)}{(rho + 1) / 2 ~ Beta(eta,
#' eta)}), smaller `eta` stronger ones. It is the default prior of correlated random effects,
#' `(1 + x | g)` in [linear_regression()] (its `group_cor` argument).
#'
#' The samplers move on the whole real line, so the model's parameters are the
#' \eqn{q(q-1)/2}{q (q - 1) / 2} values \eqn{\theta = \mathrm{atanh}(z)}{theta = atanh(z)} of
#' \eqn{R}'s canonical partial correlations \eqn{z_{ij}}{z_ij} (\eqn{i > j}, in the order
#' (2,1), (3,1), (3,2), (4,1), ...): \eqn{z_{i1}}{z_i1} is the correlation of effects
#' \eqn{i} and 1, and \eqn{z_{ij}}{z_ij} the partial correlation of effects \eqn{i} and \eqn{j}
#' given effects \eqn{1, \ldots, j-1}{1..j-1}. Under the LKJ prior they are independent, with
#' \eqn{(z_{ij} + 1)/2 \sim \mathrm{Beta}(b_j, b_j)}{(z_ij + 1) / 2 ~ Beta(b_j, b_j)},
#' \eqn{b_j = \eta + (q - 1 - j)/2}{b_j = eta + (q - 1 - j) / 2} (the Jacobian of the
#' \eqn{\mathrm{atanh}}{atanh} included); \eqn{R = LL^\top}{R = L L'} with
#' \eqn{L_{ij} = z_{ij}\prod_{k<j}\sqrt{1 - z_{ik}^2}}{L_ij = z_ij prod_{k < j} sqrt(1 - z_ik^2)}
#' (\eqn{j < i}) and \eqn{L_{ii} = \prod_{k<i}\sqrt{1 - z_{ik}^2}}{L_ii = prod_{k < i} sqrt(1 -
#' z_ik^2)}, as Stan builds it. In [custom_model()] and [compiled_model()] the block covers
#' `dim` = \eqn{q(q-1)/2}{q (q - 1) / 2} parameters, \eqn{q} from 2 to 64.
#'
#' @param eta The LKJ shape, a positive number.
#' @param dim How many parameters the block covers, \eqn{q(q-1)/2}{q (q - 1) / 2} (1, 3, 6, 10,
#'   ...); `NULL` (the default): set by the model (as in [linear_regression()]) or all the
#'   parameters the other blocks leave.
#' @return A prior of class `sgais_prior`.
#' @references Lewandowski, D., Kurowicka, D. and Joe, H. (2009). Generating random correlation
#'   matrices based on vines and extended onion method. *Journal of Multivariate Analysis* 100,
#'   1989-2001.
#' @seealso [normal_prior()] for the other blocks.
#' @export
#' @examples
#' lkj_prior(2)
#'
#' # a random intercept and slope per group, correlated, with an LKJ(2) prior on the correlation
#' set.seed(1)
#' d <- data.frame(x = rnorm(200), g = rep(1:10, each = 20))
#' b <- matrix(rnorm(20), 10) %*% chol(matrix(c(1, 0.5, 0.5, 1), 2))
#' d$y <- 1 + d$x + b[d$g, 1] + b[d$g, 2] * d$x + rnorm(200, sd = 0.5)
#' linear_regression(y ~ x + (1 + x | g), d, noise_sd = NULL, group_cor = lkj_prior(2))
lkj_prior <- function(eta = 1, dim = NULL) {
  call <- sys.call()
  eta <- check_positive(eta, "eta", call)
  if (!is.null(dim)) {
    dim <- check_whole_number(dim, "dim", 1, call)
    if (!dim %in% choose(2:64, 2)) {
      abort(sprintf(paste("`dim` must be q (q - 1) / 2, the number of correlations of a q x q",
                          "matrix (1, 3, 6, 10, ...; q up to 64), not %d."), dim), call)
    }
  }
  prior_block("lkj", dim, 0, 1, eta, prior_label("lkj", 0, 1, eta), call)
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

#' Zellner's g-prior and the Zellner-Siow prior for linear regression
#'
#' The coefficient priors of the Bayes-factor literature, for [linear_regression()] with an
#' unknown noise variance, with the conventions of `BayesFactor::regressionBF()` and
#' `BayesFactor::lmBF()` (Liang et al. 2008; Rouder and Morey 2012), so that [compare_models()]
#' gives their Bayes factors. With \eqn{n} rows, the covariates \eqn{X_c} centred at their means
#' in the data the model is built with, \eqn{y_i = \mu + x_{c,i}^\top \beta + e_i}{y = mu + x_c'beta
#' + e}, \eqn{e_i \sim N(0, \sigma^2)}{e ~ N(0, sigma^2)}, and
#'
#' * `g_prior(g)`: \eqn{\beta \mid \sigma^2 \sim N(0, g \sigma^2 (X_c^\top X_c)^{-1})}{beta |
#'   sigma^2 ~ N(0, g sigma^2 (X_c'X_c)^-1)}, Zellner's g-prior; the default \eqn{g = n} is the
#'   unit-information prior, whose Bayes factors are those of BIC to first order. Its evidence has
#'   a closed form.
#' * `zellner_siow_prior(scale)`: the g-prior with \eqn{g \sim \mathrm{InvGamma}(1/2, r^2 n /
#'   2)}{g ~ InvGamma(1/2, r^2 n / 2)}, that is a multivariate Cauchy prior on \eqn{\beta}{beta}
#'   with scale matrix \eqn{r^2 \sigma^2 n (X_c^\top X_c)^{-1}}{r^2 sigma^2 n (X_c'X_c)^-1}: the
#'   "JZS" prior of `regressionBF()` and of `lmBF()` on continuous covariates, `scale` its
#'   `rscaleCont`. Its evidence is a one-dimensional integral over \eqn{g}.
#'
#' The literature puts the improper prior \eqn{p(\mu, \sigma^2) \propto 1/\sigma^2}{p(mu,
#' sigma^2) propto 1 / sigma^2} on the intercept and the noise variance; it cancels in Bayes factors
#' between models of the same response, which are therefore well defined. The estimators need a
#' proper prior, so the model makes it proper without changing it where the posterior lies: the
#' intercept's prior is flat on \eqn{\bar y \pm 10\, \mathrm{sd}(y)}{mean(y) +- 10 sd(y)} and
#' \eqn{\log \sigma^2}{log sigma^2}'s flat on \eqn{[\log \mathrm{var}(y) - 20, \log
#' \mathrm{var}(y) + 10]}{[log var(y) - 20, log var(y) + 10]} (that is \eqn{1/\sigma^2}{1 /
#' sigma^2} in \eqn{\sigma^2}{sigma^2}), each falling off as a normal (sd \eqn{\mathrm{sd}(y)}{sd(y)}
#' and 1) beyond, with \eqn{\bar y}{mean(y)} and \eqn{\mathrm{sd}(y)}{sd(y)} of the data the model
#' is built with. On those data the posterior has no measurable mass outside the flat parts, so
#' the log evidence is the literature's less the log-normalisers of the two flat-top densities,
#' the same for every model of the response, and Bayes factors are the literature's.
#' [exact_log_evidence()] gives it, and says when the flat parts do not hold the posterior (too
#' few rows, or data far from those the model was built with).
#'
#' Only continuous covariates match BayesFactor's priors: `lmBF()` gives factors their own
#' prior, where these priors treat a factor's dummy columns as covariates. The design must have
#' an intercept, linearly independent columns, and more rows than columns.
#'
#' @param g The g of the g-prior, a positive number; `NULL` (the default): the number of rows
#'   the model is built with (unit information).
#' @param scale The Zellner-Siow prior's scale \eqn{r}: `"medium"` (\eqn{\sqrt 2 / 4}{sqrt(2) /
#'   4}, the default, as in BayesFactor), `"wide"` (1/2), `"ultrawide"` (\eqn{\sqrt 2 / 2}{sqrt(2)
#'   / 2}) or a positive number.
#' @return A prior of class `sgais_zellner_prior`, for the `prior` of [linear_regression()].
#' @references Liang, F., Paulo, R., Molina, G., Clyde, M. A. and Berger, J. O. (2008). Mixtures
#'   of g priors for Bayesian variable selection. *Journal of the American Statistical
#'   Association*, 103, 410-423.
#'
#'   Rouder, J. N. and Morey, R. D. (2012). Default Bayes factors for model selection in
#'   regression. *Multivariate Behavioral Research*, 47, 877-903.
#' @seealso `vignette("choosing-models")`, which compares models on `attitude` and `mtcars` with
#'   these priors against BayesFactor.
#' @export
#' @examples
#' # BayesFactor's default prior on attitude: complaints alone, and with learning
#' small <- linear_regression(rating ~ complaints, attitude, prior = zellner_siow_prior())
#' large <- linear_regression(rating ~ complaints + learning, attitude,
#'                            prior = zellner_siow_prior())
#' large
#' exact_log_evidence(large) - exact_log_evidence(small)
#' \donttest{
#' compare_models(list(small = small, large = large), replicates = 4, seed = 1)
#' }
#'
#' # the unit-information g-prior
#' exact_log_evidence(linear_regression(mpg ~ wt + hp, mtcars, prior = g_prior()))
g_prior <- function(g = NULL) {
  call <- sys.call()
  if (!is.null(g)) {
    g <- check_positive(g, "g", call)
    if (g < hyper_range[1] || g > hyper_range[2]) {
      abort(sprintf("`g` must be in [%g, %g], not %s.", hyper_range[1], hyper_range[2],
                    format(g)), call, "sgais_error_prior")
    }
  }
  structure(list(kind = "g", g = g, scale = NULL,
                 label = sprintf("Zellner's g-prior, g = %s",
                                 if (is.null(g)) "n (unit information)" else format(g, digits = 4))),
            class = "sgais_zellner_prior")
}

#' @rdname g_prior
#' @export
zellner_siow_prior <- function(scale = "medium") {
  call <- sys.call()
  named <- c(medium = sqrt(2) / 4, wide = 1 / 2, ultrawide = sqrt(2) / 2)
  if (is.character(scale) && length(scale) == 1L && scale %in% names(named)) {
    label <- sprintf("%s (%s)", format(named[[scale]], digits = 4), scale)
    scale <- named[[scale]]
  } else if (is.numeric(scale) && !is.factor(scale)) {
    scale <- check_positive(scale, "scale", call)
    if (scale < 1e-50 || scale > 1e50) {
      abort(sprintf("`scale` must be in [1e-50, 1e50], not %s.", format(scale)), call,
            "sgais_error_prior")
    }
    label <- format(scale, digits = 4)
  } else {
    abort(sprintf(paste("`scale` must be \"medium\", \"wide\", \"ultrawide\" or a positive",
                        "number, not %s."), describe(scale)), call, "sgais_error_prior")
  }
  structure(list(kind = "zellner_siow", g = NULL, scale = scale,
                 label = sprintf("Zellner-Siow (JZS) prior, scale r = %s", label)),
            class = "sgais_zellner_prior")
}

#' @export
format.sgais_zellner_prior <- function(x, ...) x$label

#' @export
print.sgais_zellner_prior <- function(x, ...) {
  cat("<sgais prior>\n")
  cat(paste0("  ", format(x), "; for linear_regression(noise_sd = NULL)"), sep = "\n")
  invisible(x)
}

# The blocks of `prior` for a model of `dim` parameters, as the 6 x blocks matrix C reads
# (src/prior.c, sg_prior_from_r()): kind, start (0-based), n, location, scale, df. A block whose
# location or scale is a vector becomes one column per parameter. Attribute `block`: the block
# each column comes from.
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
  columns <- lapply(seq_along(blocks), function(i) {
    b <- blocks[[i]]
    n <- sizes[i]
    for (v in c("location", "scale")) {
      if (!length(b[[v]]) %in% c(1L, n)) {
        abort(sprintf("`%s` gives %d %ss for %d parameters: give one, or one per parameter.", arg,
                      length(b[[v]]), v, n), call)
      }
    }
    if (b$kind == "lkj" && !n %in% (choose(2:64, 2))) {
      abort(sprintf(paste("`%s`: an LKJ block covers the q (q - 1) / 2 correlation parameters of",
                          "a q x q matrix (1, 3, 6, 10, ...), not %d."), arg, n), call)
    }
    if (length(b$location) == 1L && length(b$scale) == 1L) {
      return(cbind(c(prior_kinds[[b$kind]], start[i], n, b$location, b$scale, b$df)))
    }
    rbind(prior_kinds[[b$kind]], start[i] + seq_len(n) - 1, 1, rep_len(b$location, n),
          rep_len(b$scale, n), b$df)
  })
  out <- do.call(cbind, columns)
  dimnames(out) <- NULL
  attr(out, "block") <- rep(seq_along(blocks), vapply(columns, ncol, integer(1)))
  out
}

# A description of a prior for print(): the parameters each block (or each value of a block
# with a value per parameter) covers and its distribution, "; " between them.
describe_prior <- function(prior, parameter_names) {
  if (inherits(prior, "sgais_custom_prior")) return("given by R functions")
  m <- prior_matrix(prior, length(parameter_names), NULL)
  block <- attr(m, "block")
  labels <- vapply(seq_len(ncol(m)), function(i) {
    b <- prior$blocks[[block[i]]]
    if (sum(block == block[i]) == 1L) return(b$label)
    prior_label(b$kind, m[4, i], m[5, i], m[6, i])
  }, character(1))
  describe_blocks(m, labels, parameter_names)
}

# "names: label" for runs of columns of a prior matrix with the same label, "; " between them.
describe_blocks <- function(m, labels, parameter_names) {
  run <- cumsum(c(TRUE, labels[-1] != labels[-length(labels)]))
  lines <- vapply(unique(run), function(r) {
    cols <- which(run == r)
    names <- parameter_names[unlist(lapply(cols, function(i) m[2, i] + seq_len(m[3, i])))]
    shown <- if (length(names) > 3) paste(names[1], "...", names[length(names)]) else
      paste(names, collapse = ", ")
    sprintf("%s: %s", shown, labels[cols[1]])
  }, character(1))
  paste(lines, collapse = "; ")
}

# ---- the coefficients' prior of the regression models -------------------------------------

# One coefficient prior argument of a regression (`prior` or `prior_intercept`): a single
# normal, Student-t or Cauchy block for `n` coefficients, its values recycled from one. Returns
# per-coefficient vectors: kind (C's code), location, scale, df.
coef_prior_values <- function(prior, arg, n, call, normal_only) {
  kinds <- if (normal_only) "normal" else c("normal", "student_t")
  wanted <- if (normal_only) "`normal_prior()`" else
    "`normal_prior()`, `student_t_prior()` or `cauchy_prior()`"
  if (inherits(prior, "sgais_zellner_prior")) {
    abort(sprintf(paste("`%s` is %s, a prior of linear regression with an unknown noise",
                        "variance only: `linear_regression(prior = %s)`."), arg,
                  if (prior$kind == "g") "Zellner's g-prior" else "the Zellner-Siow prior",
                  if (prior$kind == "g") "g_prior()" else "zellner_siow_prior()"),
          call, "sgais_error_prior")
  }
  if (!inherits(prior, "sgais_prior") || length(prior$blocks) != 1L ||
      !prior$blocks[[1]]$kind %in% kinds) {
    abort(sprintf("`%s` must be %s, not %s.%s", arg, wanted,
                  if (inherits(prior, "sgais_prior")) format_prior_kinds(prior) else describe(prior),
                  if (normal_only) paste(" With an unknown noise variance the coefficients' prior",
                                         "is normal in units of sigma, the conjugate",
                                         "normal-inverse-gamma prior.") else ""),
          call, "sgais_error_prior")
  }
  b <- prior$blocks[[1]]
  if (!is.null(b$dim) && b$dim != n) {
    abort(sprintf("`%s` has `dim` = %d, but it is the prior of %d coefficient%s; leave `dim` unset.",
                  arg, b$dim, n, if (n == 1) "" else "s"), call, "sgais_error_prior")
  }
  for (v in c("location", "scale")) {
    if (!length(b[[v]]) %in% c(1L, n)) {
      abort(sprintf("`%s` gives %d %ss for %d coefficient%s: give one, or one per coefficient%s.",
                    arg, length(b[[v]]), if (b$kind == "normal" && v == "location") "mean" else
                      if (b$kind == "normal") "sd" else v, n, if (n == 1) "" else "s",
                    if (arg == "prior") " other than the intercept" else ""),
            call, "sgais_error_prior")
    }
  }
  list(kind = rep(prior_kinds[[b$kind]], n), location = rep_len(b$location, n),
       scale = rep_len(b$scale, n), df = rep(b$df, n))
}

# "a Cauchy prior", "a prior of 2 blocks (normal, half-normal)": what a prior argument was.
format_prior_kinds <- function(prior) {
  kinds <- vapply(prior$blocks, function(b) {
    if (b$kind == "student_t" && isTRUE(b$df == 1)) return("Cauchy")
    c(normal = "normal", student_t = "Student-t", half_normal = "half-normal",
      exponential = "exponential", half_t = "half-t", inverse_gamma = "inverse-gamma",
      lkj = "LKJ")[[b$kind]]
  }, character(1))
  if (length(kinds) == 1L) return(sprintf("a %s prior", kinds))
  sprintf("a prior of %d blocks (%s)", length(kinds), paste(kinds, collapse = ", "))
}

# The prior of a regression's coefficients, the design's `columns` in order (the intercept named
# "(Intercept)"): `prior_intercept` on the intercept and `prior` on the other coefficients,
# each `normal_prior(0, prior_sd)` when NULL (the paper's prior). `classes`: softmax regression
# has a coefficient per column in each class, class after class, with the same prior in every
# class. `normal_only`: only normal priors (the conjugate prior of unknown-variance linear
# regression). Returns list(prior_sd, prior = the 6 x blocks matrix of the coefficients for C,
# or NULL when the prior is N(0, s^2) on every coefficient: the model then keeps prior_sd = s
# and the paper's code, bit for bit; description = the blocks for print(), NULL for that
# default, which each model describes in its own words).
regression_prior <- function(columns, prior, prior_intercept, prior_sd, call, classes = 1L,
                             normal_only = FALSE) {
  intercept <- columns == "(Intercept)"
  if (!is.null(prior_intercept) && !any(intercept)) {
    abort(paste("`prior_intercept` is given, but the model has no intercept (the formula",
                "removes it with `- 1` or `+ 0`)."), call, "sgais_error_prior")
  }
  values <- list(kind = numeric(0), location = numeric(0), scale = numeric(0), df = numeric(0))
  coef <- coef_prior_values(prior %||% normal_prior(0, prior_sd), "prior", sum(!intercept), call,
                            normal_only)
  int <- coef_prior_values(prior_intercept %||% normal_prior(0, prior_sd), "prior_intercept",
                           sum(intercept), call, normal_only)
  for (v in names(values)) {
    x <- numeric(length(columns))
    x[!intercept] <- coef[[v]]
    x[intercept] <- int[[v]]
    values[[v]] <- rep(x, classes)
  }
  names <- if (classes > 1L) paste0(rep(columns, classes), "[", rep(seq_len(classes), each = length(columns)), "]") else columns
  if (all(values$kind == prior_kinds[["normal"]]) && all(values$location == 0) &&
      length(unique(values$scale)) == 1L) {
    return(list(prior_sd = values$scale[1], prior = NULL, description = NULL))
  }
  # one block per run of coefficients with the same prior
  key <- paste(values$kind, values$location, values$scale, values$df)
  run <- cumsum(c(TRUE, key[-1] != key[-length(key)]))
  starts <- which(!duplicated(run))
  m <- rbind(values$kind[starts], starts - 1, tabulate(run), values$location[starts],
             values$scale[starts], values$df[starts])
  kind_names <- names(prior_kinds)[match(values$kind[starts], prior_kinds)]
  labels <- vapply(seq_along(starts), function(i) {
    prior_label(kind_names[i], m[4, i], m[5, i], m[6, i])
  }, character(1))
  shown <- if (classes > 1L) {
    # the same in every class: described once, on the first class's coefficients
    first <- m[2, ] < length(columns)
    describe_blocks(m[, first, drop = FALSE], labels[first], columns)
  } else {
    describe_blocks(m, labels, names)
  }
  list(prior_sd = prior_sd, prior = m,
       description = paste0(shown, if (classes > 1L) "; the same in every class" else "",
                            ", independent"))
}

# `hyper` with the coefficients' prior from regression_prior(): `prior_sd`, and `prior` (the
# blocks) only when there are blocks, so that a model with the paper's prior is what it was.
with_coef_prior <- function(hyper, coef) {
  hyper$prior_sd <- coef$prior_sd
  hyper$prior <- coef$prior
  hyper
}

# Each coefficient's prior location and scale and whether it is normal, from a regression
# model's hyperparameters (hyper$prior when it has blocks, else N(0, prior_sd^2)); the first
# `p` coefficients.
coef_prior_moments <- function(model, p) {
  m <- model$hyper[["prior"]] # not $prior, which would match $prior_sd
  if (is.null(m)) {
    return(list(location = rep(0, p), scale = rep(model$hyper$prior_sd, p), normal = TRUE))
  }
  n <- m[3, ]
  list(location = rep(m[4, ], n)[seq_len(p)], scale = rep(m[5, ], n)[seq_len(p)],
       normal = all(m[1, ] == prior_kinds[["normal"]]))
}

# ---- prior = "autoscale": Bayes factors that do not depend on the data's units -------------

# The rule of `prior = "autoscale"` (?linear_regression, "Priors") for a design `a` (its intercept
# column named "(Intercept)") and response `y`, the data the model is built with. `kind`:
# "linear" (known noise sd `noise_sd`), "nig" (unknown variance: sds in units of sigma),
# "robust" (the response's sd) or "glm" (a logit or log link: unit scale). Every covariate is
# centred at its mean, so the intercept is the linear predictor at the covariates' means, and
# each slope's prior sd is s / sd(x_j): rescaling a covariate rescales its slope's prior with
# it, and shifting it moves only the intercept, whose prior is on the centred design. s is the
# noise sd (linear: unit information, the information of one observation, whose Bayes factors
# are those of BIC to first order; Kass and Wasserman 1995), sigma itself (nig), sd(y) (robust)
# or 2.5 (glm: Gelman et al. 2008's scale for standardised inputs). The intercept's prior is
# centred at mean(y) with sd s for the linear kinds (so shifting or rescaling the response
# shifts and rescales the prior with it) and N(0, 2.5^2) for the glm kind. Returns the centres
# (0 for the intercept), `prior`, `prior_intercept` and the response's sd (for the priors of
# the noise scale), and a line for print(). `weights` (binomial counts: the trials of each row):
# the means and sds are over the trials, those of the rows each repeated that many times.
autoscale_prior <- function(a, y, kind, call, noise_sd = NULL, weights = NULL) {
  intercept <- colnames(a) == "(Intercept)"
  x <- a[, !intercept, drop = FALSE]
  # a model through the origin keeps its covariates as they are: each slope's scale is then the
  # covariate's root mean square, its spread about 0
  spread <- function(v) {
    if (any(intercept)) weighted_sd(v, weights) else sqrt(weighted_mean(v^2, weights))
  }
  sx <- if (ncol(x)) apply(x, 2, spread) else numeric(0)
  flat <- which(!is.finite(sx) | sx == 0)
  if (length(flat)) {
    abort(sprintf(paste("`prior = \"autoscale\"` (the default) scales each slope's prior by its",
                        "covariate's spread in the data, but %s has none there; give `prior`",
                        "(a prior, or \"paper\") instead."),
                  backticked(colnames(x)[flat])), call, "sgais_error_prior")
  }
  center <- numeric(ncol(a))
  if (any(intercept)) {
    center[!intercept] <- if (is.null(weights)) colMeans(x) else colSums(x * weights) / sum(weights)
  }
  sy <- NA_real_
  if (kind != "glm") {
    sy <- stats::sd(y)
    if (!is.finite(sy) || sy == 0) {
      abort(paste("`prior = \"autoscale\"` (the default) scales the prior by the response's sd,",
                  "but the response has no spread; give `prior` (a prior, or \"paper\") instead."),
          call, "sgais_error_prior")
    }
  }
  s <- switch(kind, linear = noise_sd, nig = 1, robust = sy, glm = 2.5)
  rule <- switch(kind,
    linear = "noise_sd / sd(x_j); intercept N(mean(y), noise_sd^2)",
    nig = "sigma / sd(x_j); intercept N(mean(y), sigma^2); sigma^2 ~ InvGamma(shape, var(y) scale)",
    robust = "sd(y) / sd(x_j); intercept N(mean(y), sd(y)^2); sigma ~ half-normal(sd(y))",
    glm = "2.5 / sd(x_j); intercept N(0, 2.5^2)"
  )
  if (!is.null(weights)) rule <- paste0(rule, "; means and sds over the trials")
  list(
    center = center, sd_y = sy,
    prior = if (ncol(x)) normal_prior(0, s / sx) else NULL,
    prior_intercept = if (!any(intercept)) NULL else if (kind == "glm") normal_prior(0, 2.5) else normal_prior(mean(y), s),
    rule = if (any(intercept)) {
      sprintf("prior = \"autoscale\": covariates centred at their means; slope sds %s", rule)
    } else {
      sprintf("prior = \"autoscale\", no intercept: slope sds %s, sd(x_j) the root mean square",
              sub(";.*", "", rule))
    }
  )
}

# The mean and sd of `v` over rows repeated `w` times (w NULL: once each), without repeating them.
weighted_mean <- function(v, w) if (is.null(w)) mean(v) else sum(w * v) / sum(w)
weighted_sd <- function(v, w) {
  if (is.null(w)) return(stats::sd(v))
  sqrt(sum(w * (v - weighted_mean(v, w))^2) / (sum(w) - 1))
}

# The default of a regression's `prior`: "autoscale", unless the call gives `prior_sd` (the
# scale of the paper's prior, N(0, prior_sd^2) on every coefficient), which asks for the paper's
# prior with that scale.
default_prior <- function(prior, prior_sd_missing) {
  if (is.null(prior)) return(if (prior_sd_missing) "autoscale" else "paper")
  prior
}

# The design and the coefficients' prior arguments of a regression given `prior` (after
# default_prior()): "paper" is the paper's prior, N(0, prior_sd^2) on the uncentred design (prior
# NULL for regression_prior()); a prior object is used as given; "autoscale" centres the design
# (its spec keeps the centres for new rows, regression_rows()) and gives the rule's `prior`, and
# `prior_intercept` unless the call gives one (a prior on the intercept of the centred design).
with_autoscale <- function(design, prior, prior_intercept, kind, call, noise_sd = NULL) {
  if (identical(prior, "paper")) prior <- NULL
  if (is.null(prior) || !is.character(prior)) {
    return(list(design = design, prior = prior, prior_intercept = prior_intercept))
  }
  if (!identical(prior, "autoscale")) {
    abort(sprintf(paste("`prior` must be a prior such as `normal_prior()`, \"autoscale\" or",
                        "\"paper\", not %s."), describe(prior)), call, "sgais_error_prior")
  }
  if (kind != "glm") check_response(design$y, design$what, call)
  auto <- autoscale_prior(design$a, design$y, kind, call, noise_sd, design$weights)
  if (!is.null(prior_intercept)) {
    # (without an intercept, regression_prior() says `prior_intercept` has nothing to set)
    auto$prior_intercept <- prior_intercept
    auto$rule <- sub("; intercept [^;]*", "; intercept: `prior_intercept`", auto$rule)
  }
  design <- centred_design(design, auto$center)
  list(design = design, prior = auto$prior %||% normal_prior(), prior_intercept = auto$prior_intercept,
       rule = auto$rule, sd_y = auto$sd_y)
}

# `design` with its columns less `center`, which its spec keeps so that new rows are centred
# the same way (regression_rows()).
centred_design <- function(design, center) {
  design$a <- sweep(design$a, 2, center)
  design$spec$center <- center
  design
}

# A warning when a model with prior = "autoscale" was built on too few rows for its scales to
# mean much (under 100) and is given more rows than that to fit (`rows`: the first block of
# sgais_stream(), the data of compare_models()): its prior keeps the scales of those few rows, as
# for a model built on head(data). A model built on a small data set and fitted to it is fine.
warn_autoscale_template <- function(model, rows, call, arg = "model") {
  held <- model_rows(model)
  if (is.null(model$spec$center) || held >= 100L || rows <= held) return(invisible())
  zellner <- !is.null(model$hyper[["zellner"]])
  warn(sprintf(paste("%s was built on %d rows, and its prior (%s) takes its scales from them, for",
                     "every row it is given. Build it on a representative first block of the data",
                     "(hundreds of rows or more)%s."),
               arg, held, if (zellner) "`g_prior()` or `zellner_siow_prior()`" else
                 "prior = \"autoscale\", the default",
               if (zellner) ", or on all of it" else
                 ", or give its priors (`prior = \"paper\"` or prior objects)"),
       call, "sgais_warning_autoscale_rows")
}
