#' Evidence by importance sampling from the Laplace approximation or a reference distribution
#'
#' Estimates the log evidence \eqn{\log p(y)} of a model whose posterior has one mode and few
#' parameters by importance sampling (Geweke 1989): the posterior mode \eqn{\hat\theta} and the
#' Hessian \eqn{H} of the log posterior there are found (BFGS, then Newton steps on the
#' model's gradients), and `draws` points are drawn from a multivariate Student-t with `df`
#' degrees of freedom centred at \eqn{\hat\theta}{theta-hat} with scale matrix `inflation`
#' \eqn{\times H^{-1}}{x H^-1}, the Laplace approximation made heavier-tailed and a little
#' wider so that it covers the posterior. Then
#' \deqn{\hat Z = \frac1M \sum_i \frac{p(y \mid \theta_i) p(\theta_i)}{q(\theta_i)},}{Z-hat =
#' mean_i p(y | theta_i) p(theta_i) / q(theta_i),}
#' unbiased for \eqn{Z}, with the standard error of its log from the weights' spread (the delta
#' method).
#'
#' Each draw costs one pass over the data and the mode a few dozen, against the thousands of
#' gradient passes that annealing spends on its moves: for a model of few parameters and many
#' observations, whose posterior is close to a Gaussian, it is the fastest accurate estimator in
#' the package, e.g. a GLM with a random intercept per group ([logistic_regression()], "Random
#' intercepts"; see `vignette("validation")`). It is not an online estimator (no trajectory: the evidence of all
#' the observations only), and it is wrong, not just slow, when the posterior is far from
#' Gaussian in its parameters; the Pareto \eqn{\hat k}{k-hat} of the largest weights (a
#' generalised Pareto fitted to their tail, Zhang and Stephens 2009, as in Pareto-smoothed
#' importance sampling, Vehtari et al. 2024) measures this: above 0.7 the estimate cannot be
#' trusted and a warning of class `sgais_warning_unreliable` says so, with the weights'
#' effective sample size. Use [sgais()] or [ais()] there.
#'
#' A posterior with several modes defeats a proposal about one of them (a mixture's \eqn{K!}
#' relabellings: the estimate would be \eqn{\log K!}{log K!} low, and no diagnostic of the
#' weights could tell). For a mixture the proposal is therefore the reference distribution built
#' on its data, the one [ais()] anneals from (see `reference` in [sgais_control()]): each
#' component's conjugate posterior given one cluster of the data, summed over the relabellings,
#' so it covers every mode (`df` and `inflation` do not apply). On well-separated clusters it is
#' close to the posterior; where the clusters overlap the Pareto \eqn{\hat k}{k-hat} says how
#' far it is. A mixture whose data have no such reference (more clusters than components, or
#' fewer, with no room for the rest) is refused, with an error of class
#' `sgais_error_multimodal`.
#'
#' @inheritParams ais
#' @param draws The number of draws from the proposal (at least 10).
#' @param df The proposal's degrees of freedom (a positive number; `Inf` is a normal).
#' @param inflation The factor (at least 1) on the proposal's scale matrix, the inverse Hessian.
#'   Defaults 10 and 1.1; a normal proposal (`df = Inf`) has tails too light for most posteriors.
#' @param seed `NULL`, or an integer seed for the draws (R's generator; the session's stream is
#'   left as it was). The mode and Hessian do not depend on it.
#' @return An object of class `c("sgais_is_fit", "sgais_evidence")`, a list with
#'   `log_evidence`, `log_evidence_se`, `ess` (the weights' effective sample size), `pareto_k`
#'   (`NA` with fewer than 25 draws, too few for a tail; `-Inf` when the largest weights are
#'   equal to rounding, as from a proposal that is the posterior),
#'   `mode` and `hessian` (of the log posterior at the mode), `state` (the draws as `particles`,
#'   and their `log_weights`: weighted posterior draws), and the fields every fit has ([sgais()]:
#'   `method`, `n`, `model`, `settings`, `call`, `seed`, `seconds`, `gradient_evaluations`,
#'   `likelihood_evaluations`). Use [log_evidence()], [posterior_samples()],
#'   [predictive_density()], [as.data.frame()] (one row per draw), `print()` and `summary()`.
#' @references Geweke, J. (1989). Bayesian inference in econometric models using Monte Carlo
#'   integration. *Econometrica* 57(6), 1317-1339.
#'
#'   Zhang, J. and Stephens, M. A. (2009). A new and efficient estimation method for the
#'   generalized Pareto distribution. *Technometrics* 51(3), 316-325.
#'
#'   Vehtari, A., Simpson, D., Gelman, A., Yao, Y. and Gabry, J. (2024). Pareto smoothed
#'   importance sampling. *Journal of Machine Learning Research* 25(72), 1-58.
#' @seealso [sgais()], [ais()], [nested_sampling()]
#' @export
#' @examples
#' model <- linear_regression(y ~ ., simulate_linear_regression(2000, seed = 1))
#' fit <- importance_sampling(model, seed = 1)
#' fit
#' # against the closed form
#' log_evidence(fit) - exact_log_evidence(model)
importance_sampling <- function(model, draws = 500, df = 10, inflation = 1.1, seed = NULL,
                                progress = default_progress()) {
  call <- sys.call()
  check_all_rows(model, call)
  draws <- check_whole_number(draws, "draws", 10, call)
  if (!is_number(df) || is.na(df) || df <= 0) {
    abort(sprintf("`df` must be a positive number (`Inf`: a normal proposal), not %s.",
                  describe(df)), call)
  }
  if (!is_number(inflation) || !is.finite(inflation) || inflation < 1) {
    abort(sprintf("`inflation` must be a number of at least 1, not %s.", describe(inflation)),
          call)
  }
  progress <- check_flag(progress, "progress", call)
  seed <- check_seed(seed, call)
  check_request_size(8 * draws * (model$dim + 2), sprintf("%s draws of %d parameters",
                                                         format_count(draws), model$dim), call,
                     evaluations = draws * as.double(model$n))
  t0 <- proc.time()[["elapsed"]]
  caps <- model_capabilities(model)
  laplace <- NULL
  if (isTRUE(caps[["jumps"]])) {
    # a proposal about one mode would miss the others (for a mixture, its K! relabellings: the
    # estimate would be low by log K! and no diagnostic of the weights could tell); models
    # whose posteriors may have such modes are those with jump proposals between them
    proposal <- reference_proposal(model, draws, seed, call)
    theta <- proposal$theta
    log_q <- proposal$log_q
  } else {
    laplace <- laplace_mode(model, call)
    k <- model$dim
    scale <- tryCatch(chol(solve(laplace$hessian) * inflation), error = function(e) NULL)
    if (is.null(scale)) {
      abort(paste("The log posterior's Hessian at the mode found is not negative definite, so",
                  "the Laplace approximation has no proposal to offer: use `sgais()` or `ais()`."),
            call, "sgais_error_no_mode")
    }
    theta <- with_seed(seed, {
      z <- matrix(stats::rnorm(draws * k), draws, k)
      w <- if (is.finite(df)) sqrt(df / stats::rchisq(draws, df)) else rep(1, draws)
      sweep(z %*% scale * w, 2L, laplace$mode, `+`)
    })
    log_q <- t_log_density(theta, laplace$mode, scale, df)
  }
  colnames(theta) <- model$parameter_names
  density <- evaluate_draws(model, theta, progress)
  log_w <- density[1L, ] + density[2L, ] - log_q
  log_w[is.na(log_w)] <- -Inf
  if (!any(is.finite(log_w))) {
    abort("No draw has a finite posterior density: the proposal misses the posterior.", call,
          "sgais_error_no_mode")
  }
  log_z <- log_sum_exp(log_w) - log(draws)
  w <- exp(log_w - max(log_w))
  se <- stats::sd(w) / mean(w) / sqrt(draws)
  ess <- weight_ess(log_w)
  pareto_k <- pareto_shape(log_w)
  seconds <- proc.time()[["elapsed"]] - t0
  run <- list(seconds = seconds, trace = data.frame(
    gradient_evaluations = (laplace$gradients %||% 0) * as.double(model$n),
    likelihood_evaluations = draws * as.double(model$n)))
  settings <- if (is.null(laplace)) list(preset = "reference", draws = draws) else
    list(preset = "laplace", draws = draws, df = df, inflation = inflation)
  fit <- new_sgais_evidence(
    "importance sampling", model, run, settings, call, seed,
    list(log_evidence = log_z, log_evidence_se = se, ess = ess, pareto_k = pareto_k,
         mode = laplace$mode, hessian = laplace$hessian,
         state = list(particles = theta, log_weights = log_w)), "sgais_is_fit"
  )
  if (!is.na(pareto_k) && pareto_k > 0.7) {
    warn(sprintf(paste(
      "The importance weights' Pareto k is %.2f (above 0.7; effective sample size %.1f of %s):",
      "the %s proposal misses part of the posterior, and the estimate cannot be trusted.",
      "Use `sgais()` or `ais()`."), pareto_k, ess, format_count(draws),
      if (is.null(laplace)) "reference" else "Laplace"), call,
      "sgais_warning_unreliable")
  }
  fit
}

# For a model whose posterior has separated modes (a mixture's K! relabellings): draws from
# the reference distribution built on its data (the q0 AIS anneals from; `reference` in
# ?sgais_control), which sums over the relabellings and so covers every mode, and their log
# densities (src/model_r.c, ffi_reference_draws). An error where the model has none for these
# data (more clusters than components, or a component with no cluster inside the prior's scale).
reference_proposal <- function(model, draws, seed, call) {
  key <- with_seed(seed, rng_key())
  out <- if (model_has_reference(model)) {
    with_model_errors(.Call(C_ffi_reference_draws, model, as.integer(draws), key))
  }
  if (is.null(out)) {
    abort(sprintf(paste(
      "`model` (%s) has a posterior with several modes, and no reference distribution for",
      "these data to propose from (its data show more clusters than it has components, or",
      "fewer, with no room for the rest): importance sampling from one mode would miss the",
      "others. Use `sgais()` or `ais()`."), model$label), call, "sgais_error_multimodal")
  }
  list(theta = t(out$theta), log_q = out$log_q)
}

# The posterior mode of `model` and the Hessian of its log posterior there (finite differences
# of the model's gradients), by BFGS from the median of prior draws, then Newton steps until a
# step is below 1e-6 of the posterior's sd along every coordinate. `gradients`: how many
# gradient passes over the data it took.
laplace_mode <- function(model, call) {
  passes <- 0
  f <- function(theta) {
    passes <<- passes + 1
    e <- model_evaluate(model, theta)
    list(value = e$log_prior + e$log_lik, grad = e$grad_log_prior + e$grad_log_lik)
  }
  value <- function(theta) {
    v <- f(theta)$value
    if (is.finite(v)) -v else 1e300
  }
  gradient <- function(theta) {
    g <- f(theta)$grad
    if (all(is.finite(g))) -g else rep(0, length(g))
  }
  start <- apply(with_seed(1L, model_prior_draw(model, 64L)), 1L, stats::median)
  opt <- stats::optim(start, value, gradient, method = "BFGS",
                      control = list(maxit = 1000L, reltol = 1e-12))
  mode <- opt$par
  for (step in 1:10) {
    hessian <- -stats::optimHess(mode, value, gradient)
    g <- f(mode)$grad
    move <- tryCatch(solve(-hessian, g), error = function(e) NULL)
    if (is.null(move) || any(!is.finite(move))) break
    sds <- sqrt(pmax(diag(tryCatch(solve(-hessian), error = function(e) diag(Inf, length(g)))), 0))
    mode <- mode + move
    if (all(abs(move) <= 1e-6 * sds)) break
  }
  hessian <- -stats::optimHess(mode, value, gradient)
  hessian <- (hessian + t(hessian)) / 2
  if (!is.finite(value(mode)) || value(mode) >= 1e300) {
    abort("No point of finite posterior density was found from the prior's draws.", call,
          "sgais_error_no_mode")
  }
  list(mode = stats::setNames(mode, model$parameter_names), hessian = -hessian,
       gradients = passes)
}

# The log density of a multivariate Student-t (df; Inf: normal) with location `mode` and scale
# matrix R'R (R upper triangular) at the rows of x.
t_log_density <- function(x, mode, R, df) {
  k <- length(mode)
  d <- backsolve(R, t(x) - mode, transpose = TRUE)
  q <- colSums(d^2)
  if (is.infinite(df)) return(-0.5 * (k * log(2 * pi) + q) - sum(log(diag(R))))
  lgamma((df + k) / 2) - lgamma(df / 2) - 0.5 * k * log(df * pi) - sum(log(diag(R))) -
    0.5 * (df + k) * log1p(q / df)
}

# The log prior and log-likelihood (2 x M) at the rows of theta, in C, a slice at a time
# between progress updates.
evaluate_draws <- function(model, theta, progress) {
  M <- nrow(theta)
  slices <- split(seq_len(M), ceiling(seq_len(M) / max(1L, ceiling(M / 50))))
  if (progress) {
    bar <- cli::cli_progress_bar(format = "Importance sampling {cli::pb_bar} {cli::pb_current}/{cli::pb_total} draws | ETA {cli::pb_eta}",
                                 total = M, .auto_close = FALSE)
    on.exit(cli::cli_progress_done(id = bar), add = TRUE)
  }
  out <- matrix(NA_real_, 2L, M)
  for (s in slices) {
    out[, s] <- with_model_errors(.Call(C_ffi_model_log_density, model,
                                        t(theta[s, , drop = FALSE])))
    if (progress) cli::cli_progress_update(set = max(s), id = bar)
  }
  out
}

# The shape k of a generalised Pareto fitted to the largest importance weights (the tail of
# min(M / 5, 3 sqrt(M)) of the M log-weights beyond the next one), by the method of Zhang and
# Stephens (2009): with b the parameter of the GPD's reparameterisation, the shape given b is
# k(b) = mean(log(1 - b x)) (x the exceedances), b's posterior over a grid of m points is
# proportional to exp(n (log(-b / k(b)) - k(b) - 1)), and k is k at b's posterior mean; then
# shrunk towards 0.5 with a prior worth 10 observations (Vehtari et al. 2024, Appendix). NA when
# the tail is too short; -Inf when its weights are equal to rounding (no tail: a proposal that is
# the posterior, such as a mixture's reference on separated clusters).
pareto_shape <- function(log_w) {
  log_w <- sort(log_w[is.finite(log_w)])
  M <- length(log_w)
  tail <- ceiling(min(M / 5, 3 * sqrt(M)))
  if (tail < 5L || M <= tail) return(NA_real_)
  top <- max(log_w)
  cut <- exp(log_w[M - tail] - top)
  x <- exp(log_w[(M - tail + 1L):M] - top) - cut
  n <- length(x)
  if (!(x[n] > 1e-8)) return(-Inf)
  m <- 30L + floor(sqrt(n))
  quartile <- x[max(1L, floor(n / 4 + 0.5))]
  b <- 1 / x[n] + (1 - sqrt(m / (seq_len(m) - 0.5))) / (3 * quartile)
  k_of <- function(bb) mean(log1p(-bb * x))
  kb <- vapply(b, k_of, numeric(1))
  log_post <- n * (log(-b / kb) - kb - 1)
  weight <- exp(log_post - log_sum_exp(log_post))
  k <- k_of(sum(b * weight))
  (n * k + 10 * 0.5) / (n + 10)
}

fit_fields.sgais_is_fit <- function(x) {
  s <- x$settings
  c(
    proposal = if (identical(s$preset, "reference"))
      "the reference distribution of the data's clusters, over their relabellings"
    else
      sprintf(paste("Student-t (%s df) at the posterior mode, scale %s x the",
                    "inverse Hessian"), format(s$df), format(s$inflation)),
    weights = sprintf("%s draws, effective sample size %.1f, Pareto k %s%s",
                      format_count(s$draws), x$ess,
                      if (is.na(x$pareto_k)) "NA (too few draws: 25 or more give one)" else
                        sprintf("%.2f", x$pareto_k),
                      if (!is.na(x$pareto_k) && x$pareto_k > 0.7) " (over 0.7: unreliable)" else "")
  )
}

fit_rows.sgais_is_fit <- function(x) {
  lw <- x$state$log_weights
  data.frame(
    n = rep(x$n, length(lw)), draw = seq_along(lw), x$state$particles, log_weight = lw,
    check.names = FALSE
  )
}
