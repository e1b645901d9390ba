# The parent class of every estimator's result (sgais_fit, ais_fit and nested_fit).
# Fields common to all: method, log_evidence, n (observations used), model, settings, call, seed,
# initial_seed, final_seed and the cost (seconds, gradient_evaluations, likelihood_evaluations).

# `run` is what run_in_slices() returned, with the RNG states added: its seeds, time and the
# evaluation counts in its trace become the fit's.
new_evidence_fit <- function(method, log_evidence, model, run, settings, call, seed, ...,
                             n = model$n, class = character()) {
  stopifnot(
    is.character(method), is.numeric(log_evidence), length(log_evidence) == 1L,
    inherits(model, "sgais_model"), is.list(settings), is.numeric(run$seconds),
    is.data.frame(run$trace)
  )
  structure(
    list(
      method = method, log_evidence = log_evidence, n = as.integer(n), model = model,
      settings = settings, call = call, seed = seed, initial_seed = run$initial_seed,
      final_seed = run$final_seed, seconds = run$seconds,
      gradient_evaluations = sum(run$trace$gradient_evaluations),
      likelihood_evaluations = sum(run$trace$likelihood_evaluations), ...
    ),
    class = c(class, "evidence_fit")
  )
}

# The particles of an annealing run as a particles x parameters matrix.
particle_matrix <- function(run, model) {
  particles <- t(run$state$theta)
  colnames(particles) <- model$parameter_names
  particles
}

#' Log evidence of a fit
#'
#' The estimated log marginal likelihood \eqn{\log p(y)} of the data a fit has seen.
#'
#' @param x A fit from [sgais()], [ais()] or [nested_sampling()].
#' @param ... Unused.
#' @return A number.
#' @export
#' @examples
#' model <- linear_regression(y ~ ., simulate_linear_regression(2000, seed = 1))
#' fit <- sgais(model, seed = 1)
#' log_evidence(fit)
log_evidence <- function(x, ...) {
  UseMethod("log_evidence")
}

#' @rdname log_evidence
#' @export
log_evidence.evidence_fit <- function(x, ...) {
  x$log_evidence
}

#' @export
format.evidence_fit <- function(x, ...) {
  m <- x$model
  c(
    sprintf("<%s evidence estimate>", x$method),
    sprintf("  model:     %s, %s observations, %d parameters", m$label, format_count(x$n), m$dim),
    sprintf("  log Z:     %.4f%s (%.6f per observation)", x$log_evidence, format_se(x),
            x$log_evidence / x$n),
    sprintf("  cost:      %.2f s; %s gradient and %s likelihood evaluations", x$seconds,
            format_big(x$gradient_evaluations), format_big(x$likelihood_evaluations)),
    format_reliability(x)
  )
}

# The diagnostics' verdict in one line: the predicted sd of log Z (largest over replicates).
format_reliability <- function(x) {
  sd <- x$diagnostics$predicted_sd
  if (is.null(sd)) return(character())
  sprintf("  check:     predicted sd of log Z %.2f nats%s", max(sd),
          if (max(sd) > 1) " (over 1: unreliable, see ?sgais)" else "")
}

#' @export
print.evidence_fit <- function(x, ...) {
  cat(format(x, ...), sep = "\n")
  invisible(x)
}

#' @export
summary.evidence_fit <- function(object, ...) {
  exact <- tryCatch(exact_log_evidence(object$model, n = object$n), sgais_error = function(e) NULL)
  structure(
    list(
      method = object$method, label = object$model$label, n = object$n, dim = object$model$dim,
      log_evidence = object$log_evidence, log_evidence_se = object$log_evidence_se,
      replicate_log_evidence = object$replicate_log_evidence, exact_log_evidence = exact,
      seconds = object$seconds, gradient_evaluations = object$gradient_evaluations,
      likelihood_evaluations = object$likelihood_evaluations, settings = object$settings,
      diagnostics = object$diagnostics,
      call = object$call
    ),
    class = "summary.evidence_fit"
  )
}

#' @export
format.summary.evidence_fit <- function(x, ...) {
  out <- c(
    sprintf("%s estimate of the evidence of a %s", x$method, x$label),
    sprintf("(%s observations, %d parameters)", format_count(x$n), x$dim),
    "",
    sprintf("Call: %s", paste(deparse(x$call, width.cutoff = 500L), collapse = " ")),
    "",
    sprintf("log Z:       %.4f%s (%.6f per observation)", x$log_evidence, format_se(x),
            x$log_evidence / x$n)
  )
  if (!is.null(x$exact_log_evidence)) {
    err <- x$log_evidence - x$exact_log_evidence
    out <- c(out,
      sprintf("exact log Z: %.4f (error %+.4f, relative %+.2e)", x$exact_log_evidence, err,
              err / abs(x$exact_log_evidence)))
  }
  c(out,
    sprintf("Cost:        %.2f s; %s gradient and %s likelihood evaluations", x$seconds,
            format_big(x$gradient_evaluations), format_big(x$likelihood_evaluations)),
    if (!is.null(x$diagnostics)) {
      c("", "Diagnostics (one row per replicate):",
        utils::capture.output(print(x$diagnostics, digits = 8, row.names = FALSE)))
    })
}

#' @export
print.summary.evidence_fit <- function(x, ...) {
  cat(format(x, ...), sep = "\n")
  invisible(x)
}
