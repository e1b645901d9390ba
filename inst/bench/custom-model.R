# The cost of a model written in R (custom_model(), src/custom_model.c) against the built-in C
# linear regression on the same data: the same SGAIS run (mini-batches of 500, both presets),
# timed side by side, with the number of R calls and the time spent inside the R functions
# themselves, so that the callback path's own overhead per call is visible.
#
#   Rscript inst/bench/custom-model.R [--n=1e5] [--seeds=1]
library(sgais)

args <- commandArgs(trailingOnly = TRUE)
arg <- function(name, default) {
  hit <- grep(sprintf("^--%s=", name), args, value = TRUE)
  if (length(hit)) as.numeric(sub("^[^=]*=", "", hit[1])) else default
}
n <- arg("n", 1e5)
seeds <- seq_len(arg("seeds", 1))

d <- simulate_linear_regression(n, seed = 1)
x <- cbind(`(Intercept)` = 1, as.matrix(d[, 1:5]), y = d$y)
p <- 6L
builtin <- linear_regression(y ~ ., d, prior = "paper", noise_sd = 1)

calls <- c(log_likelihood = 0, gradient = 0)
inside <- c(log_likelihood = 0, gradient = 0)
# The R functions, written as a user would write them fast: one matrix product over the block
# (the response column gets coefficient 0), no copies of column subsets.
ll <- function(theta, data) {
  r <- data[, p + 1L] - data %*% c(theta, 0)
  -0.5 * log(2 * pi) - 0.5 * r^2
}
gr <- function(theta, data) {
  r <- data[, p + 1L] - data %*% c(theta, 0)
  crossprod(data, r)[seq_len(p)]
}
counted <- function(f, name) {
  function(theta, data) {
    start <- proc.time()[["elapsed"]]
    out <- f(theta, data)
    calls[[name]] <<- calls[[name]] + 1
    inside[[name]] <<- inside[[name]] + proc.time()[["elapsed"]] - start
    out
  }
}
custom <- custom_model(ll, gr, data = x, parameter_names = colnames(x)[1:p],
                       prior = normal_prior(sd = 1), label = "linear regression in R")
counting <- custom_model(counted(ll, "log_likelihood"), counted(gr, "gradient"), data = x,
                         parameter_names = colnames(x)[1:p], prior = normal_prior(sd = 1))

rows <- list()
for (preset in c("paper", "robust")) {
  control <- sgais_control(preset, batch_size = 500)
  for (seed in seeds) {
    time <- function(model) {
      gc()
      t <- system.time(fit <- suppressWarnings(sgais(model, control = control, seed = seed,
                                                     progress = FALSE)))
      list(seconds = t[["elapsed"]], log_z = log_evidence(fit))
    }
    c_run <- time(builtin)
    r_run <- time(custom)
    # the call counts and the time inside the R functions, from a separate (slower) run
    calls[] <- 0
    inside[] <- 0
    invisible(time(counting))
    # the same number of calls to the R functions alone, in an R loop, on blocks of 500 rows
    blocks <- replicate(50, x[sample.int(n, 500), , drop = FALSE], simplify = FALSE)
    theta <- stats::rnorm(p)
    loop <- system.time(for (k in seq_len(calls[["gradient"]])) gr(theta, blocks[[k %% 50 + 1]]))
    rows[[length(rows) + 1]] <- data.frame(
      preset = preset, seed = seed, n = n,
      c_seconds = c_run$seconds, r_seconds = r_run$seconds,
      ratio = r_run$seconds / c_run$seconds,
      gradient_calls = calls[["gradient"]], likelihood_calls = calls[["log_likelihood"]],
      user_gradient_seconds = loop[["elapsed"]],
      overhead_us_per_call = 1e6 * (r_run$seconds - c_run$seconds - loop[["elapsed"]]) /
        sum(calls),
      log_z_c = c_run$log_z, log_z_r = r_run$log_z
    )
  }
}
out <- do.call(rbind, rows)
cat(sprintf("SGAIS on linear regression, N = %s, mini-batches of 500: model in R vs built-in C\n",
            formatC(n, format = "d", big.mark = ",")))
print(format(out, digits = 4), row.names = FALSE)
cat("\nratio: seconds with the model in R / seconds with the built-in C model.\n",
    "user_gradient_seconds: the R gradient alone, called as often in an R loop.\n",
    "overhead_us_per_call: what is left per R call (block copy, call, checks).\n", sep = "")
