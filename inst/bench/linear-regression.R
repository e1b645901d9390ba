# SGAIS on the paper's linear regression with the paper's preset (Cameron et al. 2019, Section
# 6.1) and the robust default, side by side: log Z estimate against the exact value, wall time
# and cost at N = 10^4, 10^5, 10^6, and the ratio of their gradient evaluations.
# Run with: Rscript inst/bench/linear-regression.R [max_n]   (from an installed sgais)
# Targets: paper preset, relative error at 10^6 about 0.1% (issue 2); robust preset within 10
# nats at 10^6 with at most 2x the paper preset's gradient evaluations (issue 8).
suppressPackageStartupMessages(library(sgais))

args <- commandArgs(trailingOnly = TRUE)
max_n <- if (length(args)) as.numeric(args[1]) else 1e6
sizes <- c(1e4, 1e5, 1e6)
sizes <- sizes[sizes <= max_n]

cat(sprintf("sgais %s, %s, single-threaded\n", utils::packageVersion("sgais"), R.version.string))
data <- simulate_linear_regression(max(sizes), seed = 2019)
grid <- expand.grid(preset = c("paper", "robust"), n = sizes, stringsAsFactors = FALSE)
rows <- lapply(seq_len(nrow(grid)), function(i) {
  n <- grid$n[i]
  model <- linear_regression(y ~ ., data[seq_len(n), ], prior = "paper", noise_sd = 1)
  fit <- suppressWarnings(sgais(model, control = sgais_control(grid$preset[i]), seed = 1,
                                progress = FALSE))
  exact <- exact_log_evidence(model)
  data.frame(
    preset = grid$preset[i],
    n = n,
    log_z = log_evidence(fit),
    exact = exact,
    error = log_evidence(fit) - exact,
    relative_error = (log_evidence(fit) - exact) / abs(exact),
    seconds = fit$seconds,
    gradient_evaluations = fit$gradient_evaluations,
    annealing_steps = sum(fit$trajectory$annealing_steps)
  )
})
res <- do.call(rbind, rows)
print(format(res, digits = 6, big.mark = ","), row.names = FALSE)
g <- stats::setNames(res$gradient_evaluations, paste(res$preset, res$n))
for (n in sizes) {
  cat(sprintf("N = %g: robust / paper gradient evaluations %.2f, seconds %.2f\n", n,
              g[[paste("robust", n)]] / g[[paste("paper", n)]],
              res$seconds[res$preset == "robust" & res$n == n] / res$seconds[res$preset == "paper" & res$n == n]))
}
