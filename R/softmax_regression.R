#' Bayesian softmax regression
#'
#' The paper's second model (Cameron et al. 2019, Appendix B.2, there called logistic
#' regression): a class label \eqn{y \in \{1, \dots, K\}}{y in 1..K} with
#' \deqn{p(y = k \mid x, \theta) = \frac{\exp(b_k + x^\top w_k)}{\sum_l \exp(b_l + x^\top w_l)},}{
#' p(y = k | x, theta) = exp(b_k + x'w_k) / sum_l exp(b_l + x'w_l),}
#' and by default (`prior = "autoscale"`, see "Priors" in [linear_regression()]) covariates
#' centred at their means, each weight \eqn{N(0, (2.5 / \mathrm{sd}(x_j))^2)}{N(0, (2.5 /
#' sd(x_j))^2)} and each bias \eqn{N(0, 2.5^2)}{N(0, 2.5^2)}, in every class; the paper's prior
#' (`prior = "paper"`, or giving `prior_sd`) is independent \eqn{N(0, \tau^2)}{N(0, prior_sd^2)}
#' on every bias \eqn{b_k} and weight \eqn{w_{kj}}{w_kj} of the uncentred design. Each class has its own coefficients (none is a reference class), so the
#' model has \eqn{K p}{K p} parameters for a design with \eqn{p} columns: 44 in the paper's
#' setting of 10 covariates and 4 classes. Adding the same number to a covariate's coefficient in
#' every class changes no probability, so along those \eqn{p} directions the posterior is the
#' prior whatever the data; the robust samplers draw them exactly from the prior and move only
#' the identified part (see "Moves in units of the target's width" in [sgais_control()]). The
#' likelihood uses a stable log-softmax, so large covariates do not overflow.
#'
#' Give either `formula` and `data`, or the matrix interface `x` and `y`, as for
#' [linear_regression()]. The response is a factor, or a character, logical or whole-number vector
#' whose distinct values are the classes. Every class must occur: a factor level with no
#' observations is an error (drop it with [droplevels()]), as is a response with a single class.
#' Missing or infinite values are errors, not silently dropped.
#'
#' `prior` and `prior_intercept` set the priors of the weights and of the biases as in
#' [linear_regression()], the same in every class (a mean and sd per covariate, not per class).
#' With normal priors the directions along which no probability changes (the same number added
#' to a covariate's coefficient in every class) are drawn exactly from their prior after each
#' move; with Student-t or Cauchy priors they are sampled like the others.
#'
#' @inheritParams linear_regression
#' @param prior_sd The prior standard deviation \eqn{\tau} of every bias and weight under
#'   `prior = "paper"` (default 1); giving it selects that prior unless `prior` is given.
#' @param y The class labels: a factor, or a character, logical or whole-number vector, with one
#'   element per row of `x`.
#' @return A model of class `c("sgais_softmax_regression", "sgais_model")` for [sgais()], [ais()]
#'   and [nested_sampling()]. Its `classes` field holds the class labels in the order of the
#'   parameter blocks; the parameter `x1[2]` is the weight of covariate `x1` for the second class.
#' @seealso [simulate_softmax_regression()] for the paper's data, [check_gradients()].
#' @export
#' @examples
#' data <- simulate_softmax_regression(500, dim = 3, classes = 3, seed = 1)
#' model <- softmax_regression(y ~ ., data)
#' model
#'
#' # the same model through the matrix interface
#' softmax_regression(x = as.matrix(data[, 1:3]), y = data$y)
#'
#' # built-in data: three species, four measurements
#' softmax_regression(Species ~ Petal.Length + Petal.Width, iris)
softmax_regression <- function(formula = NULL, data = NULL, prior_sd = 1, x = NULL, y = NULL,
                               prior = NULL, prior_intercept = NULL,
                               weights = NULL, subset = NULL, na.action = NULL, family = NULL) {
  call <- sys.call()
  input <- regression_input(formula, data, substitute(weights), substitute(subset), na.action,
                            family, parent.frame(), call, prior, missing(prior_sd))
  prior_sd <- check_hyper(prior_sd, "prior_sd", call)
  design <- regression_design(formula, input$data, x, y, call)
  labels <- levels(check_classes(design$y, design$what, call))
  k <- length(labels)
  regression_model(
    "softmax_regression", with_autoscale(design, input$prior, prior_intercept, "glm", call),
    list(classes = k, prior_sd = prior_sd), call, "Bayesian softmax regression",
    function(design, call) softmax_regression_data(design, labels, call),
    c(likelihood = sprintf(
        "%s ~ Categorical(softmax(a'theta_1, ..., a'theta_%d)), a = row of the design",
        design$spec$response, k),
      classes = sprintf("%d: %s", k, paste(utils::head(labels, 10), collapse = ", "))),
    spec = list(classes = labels),
    wording = c("every coefficient ~ N(0, sd = %s), independent", "%s"),
    formula = formula, classes = labels
  )
}

# The data the C core reads from the design of some rows (see model_data()): the labels as
# positions in `classes`, the labels of the data the model was built from.
softmax_regression_data <- function(design, classes, call) {
  y <- check_labels(design$y, design$what, call)
  codes <- match(as.character(y), classes)
  unseen <- unique(as.character(y)[is.na(codes)])
  if (length(unseen)) {
    abort_mismatch(sprintf(
      "%s has %s %s that the model was not built with (it knows %s).", design$what,
      plural(length(unseen), "the class", "the classes"), quoted(unseen), quoted(classes)
    ), call, "sgais_error_unseen_class", class_label = unseen)
  }
  list(xt = by_observation(design$a), y = codes)
}

#' @exportS3Method
model_data.sgais_softmax_regression <- function(model, new_data, call = NULL) {
  spec <- spec_of(model, call)
  softmax_regression_data(regression_rows(spec, new_data, call), spec$classes, call)
}

# The response of a softmax regression as a factor whose levels are the classes: no missing
# values, at least two classes, every class observed.
check_classes <- function(y, what, call) {
  y <- check_labels(y, what, call)
  y <- if (is.factor(y)) y else factor(y)
  counts <- table(y)
  empty <- names(counts)[counts == 0L]
  if (length(empty)) {
    abort(sprintf(
      "%s has no observations of class%s %s; every class needs data (drop unused levels with `droplevels()`).",
      what, if (length(empty) > 1L) "es" else "", paste0("\"", empty, "\"", collapse = ", ")
    ), call)
  }
  if (nlevels(y) < 2L) {
    abort(sprintf("%s has only one class (\"%s\"); softmax regression needs at least two.",
                  what, levels(y)[1]), call)
  }
  y
}

# Class labels: a factor, or character, logical or whole-number labels, none missing.
check_labels <- function(y, what, call) {
  bad <- which(is.na(y) | (is.numeric(y) & !is.finite(y)))
  if (length(bad)) abort_bad_observations(what, bad, "missing or infinite", call)
  if (is.numeric(y) && !is.factor(y) && any(y != round(y))) {
    abort(sprintf("%s must be a factor or whole-number class codes; it has fractional values such as %s.",
                  what, format(y[y != round(y)][1])), call)
  }
  if (!is.factor(y) && !is.numeric(y) && !is.character(y) && !is.logical(y)) {
    abort(sprintf("%s must be a factor, or character, logical or whole-number labels, not %s.",
                  what, describe(y)), call)
  }
  y
}

#' Simulate the paper's softmax-regression data
#'
#' Draws the biases and weights of every class from the standard normal prior, covariates from
#' the standard normal and each label from the model's class probabilities, as in Cameron et al.
#' (2019), Section 6.1 and Appendix B.2 (10 covariates, 4 classes). Rows are drawn one after
#' another, so with the same seed a smaller data set is the first rows of a larger one.
#'
#' @param n Number of observations.
#' @param dim Number of covariates.
#' @param classes Number of classes (at least 2).
#' @param seed Optional seed; the caller's random stream is left as it was.
#' @return A data frame with columns `x1`, ..., `x<dim>` and the factor `y` with levels `1`, ...,
#'   `<classes>`, and the attribute `parameters`: the true coefficients as a matrix with a row per
#'   class and columns `(Intercept)`, `x1`, ... . (With few observations a class may not occur;
#'   [softmax_regression()] then reports it.)
#' @export
#' @examples
#' data <- simulate_softmax_regression(1000, seed = 42)
#' head(data)
#' table(data$y)
#' attr(data, "parameters")
simulate_softmax_regression <- function(n, dim = 10, classes = 4, seed = NULL) {
  call <- sys.call()
  n <- check_whole_number(n, "n", 1, call)
  dim <- check_whole_number(dim, "dim", 1, call)
  classes <- check_whole_number(classes, "classes", 2, call)
  seed <- check_seed(seed, call)
  with_seed(seed, {
    theta <- matrix(stats::rnorm(classes * (dim + 1L)), nrow = classes, byrow = TRUE)
    # one row of covariates and one normal for the label per observation, row after row
    draws <- matrix(stats::rnorm(n * (dim + 1)), nrow = n, byrow = TRUE)
  })
  x <- draws[, seq_len(dim), drop = FALSE]
  colnames(x) <- paste0("x", seq_len(dim))
  eta <- cbind(1, x) %*% t(theta)
  p <- exp(eta - apply(eta, 1, max))
  cum <- t(apply(p / rowSums(p), 1, cumsum))
  u <- stats::pnorm(draws[, dim + 1L])
  label <- 1L + rowSums(u > cum[, -classes, drop = FALSE])
  out <- data.frame(x, y = factor(label, levels = seq_len(classes)))
  dimnames(theta) <- list(seq_len(classes), c("(Intercept)", colnames(x)))
  attr(out, "parameters") <- theta
  out
}
