# Shared fixtures for the linear-regression tests.

# The independent dense reference: log N(y; A m, noise_sd^2 I + A diag(prior_sd^2) A') with
# determinant() and solve(), A the design matrix with its intercept column, m the prior means
# (prior_sd and prior_mean: one, or one per column).
dense_log_evidence <- function(a, y, noise_sd = 1, prior_sd = 1, prior_mean = 0) {
  s <- diag(noise_sd^2, length(y)) + tcrossprod(sweep(a, 2, rep_len(prior_sd, ncol(a)), `*`))
  ld <- as.numeric(determinant(s, logarithm = TRUE)$modulus)
  r <- y - drop(a %*% rep_len(prior_mean, ncol(a)))
  -0.5 * (length(y) * log(2 * pi) + ld + drop(crossprod(r, solve(s, r))))
}

# The paper's model (known noise sd 1 unless given, N(0, 1) priors) on its simulated data.
small_model <- function(n = 1000, seed = 3, noise_sd = 1, ...) {
  linear_regression(y ~ ., prior = "paper", data = simulate_linear_regression(n, seed = seed),
                    noise_sd = noise_sd, ...)
}

quiet_sgais <- function(model, ...) quietly(sgais(model, progress = FALSE, ...))

# The estimators with the paper's preset (the tests calibrated on the paper's settings). With
# its 10 particles (2 live points) the paper's setting often warns that the estimate is
# unreliable, and that a state continued from sits on one or two particles; test-replicates.R
# tests those warnings, here they are muffled.
quietly <- function(code) {
  muffle <- function(w) invokeRestart("muffleWarning")
  withCallingHandlers(code, sgais_warning_unreliable = muffle,
                      sgais_warning_degenerate_state = muffle)
}
# The value of `code` and the warnings of `class` it gave, muffled: their messages and classes
# (others pass on).
collect_warnings <- function(code, class = "warning") {
  messages <- classes <- character(0)
  value <- withCallingHandlers(code, warning = function(w) {
    if (!inherits(w, class)) return()
    messages <<- c(messages, conditionMessage(w))
    classes <<- c(classes, class(w))
    invokeRestart("muffleWarning")
  })
  list(value = value, warnings = messages, classes = classes)
}
paper_sgais <- function(model, ...) {
  quietly(sgais(model, ..., control = sgais_control("paper"), progress = FALSE))
}
paper_ais <- function(model, ...) {
  quietly(ais(model, ..., control = ais_control("paper"), progress = FALSE))
}
paper_ns <- function(model, ...) {
  quietly(nested_sampling(model, ..., control = nested_control("paper"), progress = FALSE))
}

# An SGAIS state at the start of a run, as sgais() makes it (sgais_initial_state()), with the
# buffer fields sgais_buffer() adds when every observation is held.
initial_sgais_state <- function(model, particles) {
  state <- sgais:::sgais_initial_state(sgais:::model_prior_draw(model, particles), c(1, 2))
  state$slots <- integer(0)
  state$buffer_start <- 0
  state
}

# An SGAIS state without the timings in its traces (which no two runs share).
state_without_time <- function(state) {
  state$traces <- lapply(state$traces, function(tr) tr[names(tr) != "seconds"])
  if (!is.null(state$pilot)) state$pilot$trace$seconds <- NULL
  state
}
