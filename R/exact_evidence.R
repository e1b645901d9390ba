#' @rdname exact_log_evidence
#' @param seed For `exact_evidence()`: `NULL`, or an integer seed for the posterior draws that
#'   [posterior_samples()], [predictive_density()] and [prior_sensitivity()] take from the fit
#'   (by [importance_sampling()] from the model, whose evidence the fit does not need); with
#'   `NULL` one is drawn from the session's random stream.
#' @details `exact_evidence()` returns the closed form as a fit, of class
#'   `c("sgais_exact_fit", "sgais_evidence")`, so that it prints, plots and compares
#'   ([compare_models()]) like the estimators' fits: `method` `"closed form"`, `log_evidence`
#'   of all the observations, `log_evidence_se` 0, and `trajectory`, a data frame with a row per
#'   prefix length in `n` (and all the observations): `n`, `log_evidence`, `log_evidence_se`,
#'   `log_evidence_per_obs`, `log_predictive` (the change in log evidence since the previous
#'   row) and `log_predictive_per_obs`. A model without a closed form is an error of class
#'   `sgais_error_no_closed_form`.
#' @export
exact_evidence <- function(model, n = NULL, seed = NULL) {
  call <- sys.call()
  check_model(model, call)
  seed <- check_seed(seed, call)
  t0 <- proc.time()[["elapsed"]]
  n <- sort(unique(c(check_prefix_lengths(n, model$n, call), model$n)))
  z <- exact_log_evidence(model, n = n)
  # the seed of the posterior draws (weighted_particles()), fixed now so that they repeat
  if (is.null(seed)) seed <- sample.int(.Machine$integer.max, 1L)
  lp <- diff(c(0, z))
  trajectory <- data.frame(n = as_count(n), log_evidence = z, log_evidence_se = 0,
                           log_evidence_per_obs = z / n, log_predictive = lp,
                           log_predictive_per_obs = lp / diff(c(0, n)))
  run <- list(seconds = proc.time()[["elapsed"]] - t0,
              trace = data.frame(gradient_evaluations = 0, likelihood_evaluations = 0))
  new_sgais_evidence(
    "closed form", model, run, list(preset = "exact"), call, seed,
    list(log_evidence = z[length(z)], log_evidence_se = 0, trajectory = trajectory),
    "sgais_exact_fit"
  )
}

#' @export
format.sgais_exact_fit <- function(x, ...) {
  x <- validate_sgais_evidence(x, sys.call())
  m <- x$model
  c(
    "<closed-form evidence>",
    sprintf("  model:  %s, %s observations, %d parameter%s", m$label, format_count(x$n), m$dim,
            if (m$dim == 1L) "" else "s"),
    sprintf("  log Z:  %.4f, exact (%.6f per observation)", x$log_evidence,
            x$log_evidence / x$n),
    sprintf("  cost:   %.2f s", x$seconds)
  )
}

#' @export
summary.sgais_exact_fit <- function(object, ...) {
  out <- NextMethod()
  out$exact_log_evidence <- NULL
  out
}

fit_rows.sgais_exact_fit <- function(x) x$trajectory

# The posterior of a closed-form fit as weighted points: importance sampling's draws from the
# model with the fit's seed (its evidence is not used), the same every time.
#' @export
weighted_particles.sgais_exact_fit <- function(x) {
  x <- validate_sgais_evidence(x, sys.call())
  is <- withCallingHandlers(
    importance_sampling(x$model, seed = x$seed, progress = FALSE),
    sgais_warning_unreliable = function(w) {
      warn(paste("The posterior draws of a closed-form fit come from importance sampling, whose",
                 "weights' Pareto k is above 0.7: they may not represent the posterior. Draw",
                 "from a fit of `sgais()` instead."), NULL, "sgais_warning_unreliable")
      invokeRestart("muffleWarning")
    })
  list(theta = is$state$particles, logw = is$state$log_weights)
}
