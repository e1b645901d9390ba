#' Bayesian logistic regression
#'
#' A binary response, or binomial counts (see "Binomial counts"), with \deqn{P(y_i = 1 \mid x_i,
#' \theta) = \mathrm{logit}^{-1}(b + x_i^\top w),}{P(y = 1 | x, theta) = plogis(b + x'w),} and
#' by default (`prior = "autoscale"`, see "Priors" in [linear_regression()]) covariates centred
#' at their means, each weight with prior \eqn{N(0, (2.5 / \mathrm{sd}(x_j))^2)}{N(0, (2.5 /
#' sd(x_j))^2)} and the intercept \eqn{N(0, 2.5^2)}{N(0, 2.5^2)}, the scale of Gelman et al.
#' (2008) for standardised inputs. `prior = "paper"` (or giving `prior_sd`) is independent
#' \eqn{N(0, \tau^2)}{N(0, prior_sd^2)} priors on every coefficient of the uncentred design. The
#' log-likelihood neither overflows nor loses the tail probabilities of huge linear predictors.
#'
#' Give either `formula` and `data`, or `x` and `y` (an intercept column added), as for
#' [linear_regression()]. The response is 0/1 numbers, logical (`TRUE` is 1), or a two-level
#' factor whose second level is the success, as in [stats::glm()]; new rows (see [sgais()],
#' `new_data`) are coded by a factor's labels, in any form that prints as them (a label the model
#' was not built with is an error of class `sgais_error_unseen_class`). Missing or infinite
#' values are errors, not silently dropped.
#'
#' @section Binomial counts:
#' As in [stats::glm()], the response may be `cbind(successes, failures)`, two columns of whole
#' numbers \eqn{\ge 0}{>= 0}, or a proportion of successes with `weights` the number of trials
#' (their product whole; an error of class `sgais_error_response` names a row that is not). A
#' row is one observation and one evaluation however many trials it has, \eqn{\log p(s \mid m)
#' = s \log \mathrm{logit}^{-1}(\eta) + (m - s) \log \mathrm{logit}^{-1}(-\eta) + \log{m
#' \choose s}}{log p(s | m) = s log plogis(eta) + (m - s) log plogis(-eta) + lchoose(m, s)}: the
#' evidence is that of the counts, binomial coefficients included as in glm()'s and lme4's
#' log-likelihoods, which is the evidence of their Bernoulli rows (\eqn{s} ones and \eqn{m - s}
#' zeros each) plus \eqn{\sum_i \log{m_i \choose s_i}}{sum_i lchoose(m_i, s_i)}; the default
#' prior takes its means and sds over the trials, as on those rows. A row of no trials adds
#' nothing. `weights` are trials only for a numeric response: for a logical or factor response,
#' or `cbind()`, they repeat rows as elsewhere (for 0/1 values both give the same likelihood).
#'
#' @section Random effects:
#' A term `(1 | g)` in `formula` gives each group of the column `g` (a factor, character or
#' numbers) its own intercept, \eqn{\eta_i = a_i^\top\theta + u_{g(i)}}{eta_i = a_i'theta +
#' u_g(i)} with \eqn{u_g \sim N(0, \sigma_g^2)}{u_g ~ N(0, group_sd^2)}, and the group sd
#' \eqn{\sigma_g}{group_sd} half-normal(1) by default, or as `group_sd` gives. Each
#' group's effect is integrated out by adaptive Gauss-Hermite quadrature (21 nodes about the
#' integrand's mode for fewer than 200 rows, 15 from 200), so the model has the parameters of
#' the regression plus `log_group_sd` (and `log_overdispersion`) however many groups there are.
#'
#' Random slopes, up to three effects per group, are lme4's terms as in [linear_regression()]
#' (with its parameter names): `(1 + x | g)` a random intercept and slope of `x` (a numeric
#' column of the design), correlated (`group_cor`); `(1 + x || g)` independent; `(0 + x | g)` a
#' slope alone; a slope's sd by default half-normal(1 / sd(x)). The effects are integrated out
#' together on a product grid (two effects: 9 nodes per axis below 200 rows, 7 from 200; three: 7
#' and 5), a pass over the rows per node.
#'
#' The model's observations are then the groups (`n` counts them, in the order they first
#' appear). Rows added later ([sgais()] with `new_data`, [sgais_stream()], [compare_models()]
#' with blocks) for a group already seen form a new observation, their predictive density given
#' the group's earlier rows (all integrated again: a stream whose groups recur costs more as it
#' grows); [predictive_density()] predicts each new row so. The SGAIS methods take mini-batches of
#' about 500 rows' worth of groups unless `batch_size` is given (give it for a continued fit to be
#' the run on all the groups bit for bit); a bounded `reservoir_size` is refused.
#' [importance_sampling()] is the fast estimator of the evidence of all the data. More than three
#' effects per group and several grouping factors are errors of class
#' `sgais_error_random_effects`. The model has class `sgais_glm_mixed`.
#'
#' @inheritParams linear_regression
#' @param group_sd With a random-effect term such as `(1 | g)` in `formula`: the sds of the group
#'   effects, known (one, or one per effect), a prior for each, such as [half_normal_prior()] or
#'   [half_t_prior()], or a list of one prior per effect; `NULL` (the default): see "Random
#'   effects". An error without such a term.
#' @param prior_sd The prior standard deviation \eqn{\tau} of the intercept and each weight
#'   under `prior = "paper"` (default 2.5); giving it selects that prior unless `prior` is given.
#' @param y The binary response: 0/1 numbers, logical, or a two-level factor, with one element
#'   per row of `x`.
#' @return A model of class `c("sgais_logistic_regression", "sgais_model")` for [sgais()],
#'   [ais()] and [nested_sampling()]; with a random intercept, of class
#'   `c("sgais_glm_mixed", "sgais_model")`.
#' @references Gelman, A., Jakulin, A., Pittau, M. G. and Su, Y.-S. (2008). A weakly informative
#'   default prior distribution for logistic and other regression models. *Annals of Applied
#'   Statistics* 2(4), 1360-1383. \doi{10.1214/08-AOAS191}
#' @seealso [softmax_regression()] for more than two classes, [check_gradients()].
#' @export
#' @examples
#' # transmission (0 = automatic, 1 = manual) against weight
#' sgais(logistic_regression(am ~ wt, mtcars), seed = 1)
#'
#' # a two-level factor: the second level ("virginica") is the success
#' flowers <- droplevels(subset(iris, Species != "setosa"))
#' logistic_regression(Species ~ Petal.Width, flowers)
#'
#' # a random intercept per patient: bacteria present at each visit (MASS::bacteria)
#' if (requireNamespace("MASS", quietly = TRUE)) {
#'   bacteria <- MASS::bacteria
#'   importance_sampling(logistic_regression(y ~ trt + week + (1 | ID), bacteria), seed = 1)
#'   # and a random slope of week per patient, correlated with its intercept
#'   logistic_regression(y ~ trt + week + (1 + week | ID), bacteria)
#' }
#'
#' # binomial counts: cases and controls by tobacco use, a random intercept per age group
#' counts <- logistic_regression(cbind(ncases, ncontrols) ~ tobgp + (1 | agegp), esoph)
#' importance_sampling(counts, seed = 1)
#' # the same model from the proportions of cases and their numbers of trials
#' esoph$all <- esoph$ncases + esoph$ncontrols
#' logistic_regression(ncases / all ~ tobgp + (1 | agegp), esoph, weights = all)
logistic_regression <- function(formula = NULL, data = NULL, prior_sd = 2.5, x = NULL, y = NULL,
                                prior = NULL, prior_intercept = NULL, group_sd = NULL,
                                group_cor = NULL, weights = NULL, subset = NULL, na.action = NULL,
                                family = NULL) {
  call <- sys.call()
  input <- regression_input(formula, data, substitute(weights), substitute(subset), na.action,
                            family, parent.frame(), call, prior, missing(prior_sd),
                            trials = function(rows) proportion_response(formula, rows, call))
  if (random_effects_call(formula, x, y, group_sd, call, group_cor = group_cor)) {
    return(glm_mixed("logistic", formula, input$data,
                     list(prior_sd = prior_sd, prior = input$prior,
                          prior_intercept = prior_intercept), group_sd, call, group_cor))
  }
  prior_sd <- check_hyper(prior_sd, "prior_sd", call)
  design <- regression_design(formula, input$data, x, y, call, counts = TRUE)
  levels <- binary_levels(design$y, design$what, call)
  # binomial counts: the default prior takes its scales over the trials (binomial_data()), so
  # that the model is that of the count's Bernoulli trials, one row each
  counts <- binomial_data(design, call)
  design$weights <- counts$trials
  spec <- design$spec
  regression_model(
    "logistic_regression", with_autoscale(design, input$prior, prior_intercept, "glm", call),
    list(prior_sd = prior_sd), call, "Bayesian logistic regression",
    function(design, call) logistic_regression_data(design, levels, call),
    c(likelihood = if (is.null(counts)) {
        sprintf("%s ~ Bernoulli(plogis(a'theta)), a = row of the design", spec$response)
      } else if (is.null(spec$trials)) {
        sprintf(paste("%s = (successes, failures), successes ~ Binomial(successes + failures,",
                      "plogis(a'theta)), a = row of the design"), spec$response)
      } else {
        sprintf("%s x `%s` ~ Binomial(`%2$s`, plogis(a'theta)), a = row of the design",
                spec$response, spec$trials)
      },
      success = if (!is.null(levels)) {
        sprintf("\"%s\" (\"%s\" is failure)", levels[2], levels[1])
      },
      counts = if (!is.null(counts)) {
        "log p(successes) includes log choose(trials, successes), as in glm()"
      }),
    spec = list(response_levels = levels), formula = formula
  )
}

# The data the C core reads from the design of some rows (see model_data()): the response as
# 0/1, through `levels` (failure, success) when the model was built from a factor; or binomial
# counts, `y` successes of `trials` (binomial_data()).
logistic_regression_data <- function(design, levels, call) {
  counts <- binomial_data(design, call)
  if (!is.null(counts)) return(c(list(xt = by_observation(design$a)), counts))
  list(xt = by_observation(design$a), y = binary_codes(design$y, levels, design$what, call))
}

# Whether the response of `formula` in `rows` is a proportion, whose weights are the number of
# trials (glm()'s rule for the binomial family): a numeric vector. The weights of a 0/1 response
# that is logical or a factor (one trial a row) repeat rows, as in the other constructors (the
# same likelihood: a row of w trials that all succeeded, or all failed, is w Bernoulli rows);
# those of `cbind(successes, failures)` repeat its rows.
proportion_response <- function(formula, rows, call) {
  if (!inherits(formula, "formula") || length(formula) != 3L) return(FALSE)
  lhs <- formula
  lhs[[3L]] <- 1
  frame <- formula_frame(sandbox_formula(lhs, call), plain_columns(rows, "`data`", call),
                         "`data`", call)
  y <- stats::model.response(frame)
  is.numeric(y) && is.null(dim(y))
}

# The binomial counts of a design's rows, list(y = successes, trials), or NULL for a 0/1 response:
# from a response `cbind(successes, failures)`, two columns of whole numbers >= 0; or from a
# proportion in [0, 1] and its trials (`design$trials`, the weights: glm_rows()), whose product
# is a whole number of successes (to rounding). A row of no trials adds nothing to the
# likelihood (as glm() drops it); its proportion, often 0/0, is not read.
binomial_data <- function(design, call) {
  y <- design$y
  what <- design$what
  if (is.matrix(y)) {
    if (!is.numeric(y)) {
      abort(sprintf("%s must be two columns of counts, `cbind(successes, failures)`, not %s.",
                    what, describe(y)), call, "sgais_error_response")
    }
    missing <- unname(which(!is.finite(y[, 1L]) | !is.finite(y[, 2L])))
    if (length(missing)) abort_bad_observations(what, missing, "missing or infinite", call)
    bad <- unname(which(y[, 1L] < 0 | y[, 2L] < 0 | y[, 1L] != round(y[, 1L]) |
                          y[, 2L] != round(y[, 2L]) | y[, 1L] + y[, 2L] >= 2^53))
    if (length(bad)) {
      abort(sprintf("%s must be whole numbers >= 0 (successes, failures); row %d has %s and %s.",
                    what, bad[1L], format(y[bad[1L], 1L]), format(y[bad[1L], 2L])), call,
            "sgais_error_response", row = bad[1L])
    }
    return(list(y = as.double(y[, 1L]), trials = as.double(y[, 1L] + y[, 2L])))
  }
  m <- design$trials
  if (is.null(m)) return(NULL)
  if (!(is.numeric(y) || is.logical(y)) || !is.null(dim(y))) {
    abort(sprintf(paste("%s must be proportions of successes (numbers in [0, 1], with `weights`",
                        "the number of trials), not %s."), what, describe(y)),
          call, "sgais_error_response")
  }
  y <- as.double(y)
  y[m == 0] <- 0
  missing <- which(!is.finite(y))
  if (length(missing)) abort_bad_observations(what, missing, "missing or infinite", call)
  s <- y * m
  bad <- which(y < 0 | y > 1 | abs(s - round(s)) > sqrt(.Machine$double.eps) * pmax(1, m))
  if (length(bad)) {
    i <- bad[1L]
    abort(sprintf(paste("%s must be proportions of successes: numbers in [0, 1] whose product",
                        "with the trials (`weights`) is a whole number; row %d has %s of %s %s."),
                  what, i, format(y[i]), format(m[i]), plural(m[i], "trial")), call,
          "sgais_error_response", row = i)
  }
  list(y = round(s), trials = m)
}

#' @exportS3Method
model_data.sgais_logistic_regression <- function(model, new_data, call = NULL) {
  spec <- spec_of(model, call)
  logistic_regression_data(regression_rows(spec, new_data, call), spec$response_levels, call)
}

# The levels (failure, success) of a factor response, or NULL for 0/1 numbers or logicals (which
# binary_codes() checks). A factor must have exactly two levels.
binary_levels <- function(y, what, call) {
  if (!is.factor(y)) return(NULL)
  if (nlevels(y) != 2L) {
    abort(sprintf(paste(
      "%s is a factor with %d %s (%s); logistic regression needs two.",
      "Drop unused levels with `droplevels()`, or use `softmax_regression()` for more classes."),
      what, nlevels(y), plural(nlevels(y), "level"), quoted(levels(y))), call)
  }
  levels(y)
}

# The response as 0/1 doubles. Without `levels`: 0/1 numbers or logicals. With `levels` (the
# model was built from a factor): labels, matched to the levels by what they print as, as
# softmax_regression() does, so a factor with its levels in another order, characters, or
# codes that print as the labels all give the same coding.
binary_codes <- function(y, levels, what, call) {
  if (!is.atomic(y) || is.null(y)) {
    abort(sprintf("%s must be a vector, not %s.", what, describe(y)), call)
  }
  bad <- which(is.na(y) | (is.numeric(y) & !is.finite(y)))
  if (length(bad)) abort_bad_observations(what, bad, "missing or infinite", call)
  if (!is.null(levels)) {
    labels <- as.character(y)
    codes <- match(labels, levels)
    unseen <- unique(labels[is.na(codes)])
    if (length(unseen)) {
      abort_mismatch(sprintf(
        "%s has %s %s that the model was not built with (it knows %s).", what,
        plural(length(unseen), "the label", "the labels"), quoted(unseen), quoted(levels)
      ), call, "sgais_error_unseen_class", class_label = unseen)
    }
    return(as.double(codes == 2L))
  }
  if (is.logical(y)) return(as.double(y))
  if (is.factor(y)) { # only new rows: a model built from a factor has levels
    abort_mismatch(sprintf("%s is a factor, but the model was built with a 0/1 or logical response.",
                           what), call, "sgais_error_column_type")
  }
  if (!is.numeric(y)) {
    abort(sprintf("%s must be 0/1 numbers, logical, or a factor with two levels, not %s%s.",
                  what, describe(y),
                  if (is.character(y)) "; convert labels with `factor()`" else ""), call)
  }
  off <- which(y != 0 & y != 1)
  if (length(off)) {
    abort(sprintf(paste("%s must be 0 or 1 (or logical, or a two-level factor); it has %s at",
                        "observation %d%s."),
                  what, format(y[off[1]]), off[1],
                  if (y[off[1]] > 0 && y[off[1]] < 1) {
                    paste("; binomial proportions take the number of trials as `weights`",
                          "(formula interface), or give the counts as `cbind(successes, failures)`")
                  } else ""), call)
  }
  as.double(y)
}
