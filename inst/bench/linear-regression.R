# SGAIS on the paper's linear regression (Cameron et al. 2019, Section 6.1 defaults):
# log Z estimate against the exact value, wall time and cost at N = 10^4, 10^5, 10^6.
# Run with: Rscript inst/bench/linear-regression.R [max_n]   (from an installed sgais)
# Targets (issue 2): relative error at 10^6 <= 0.15% (paper: about 0.1%); under 30 s at 10^6.
suppressPackageStartupMessages(library(sgais))

args <- commandArgs(trailingOnly = TRUE)
max_n <- if (length(args)) as.numeric(args[1]) else 1e6
sizes <- c(1e4, 1e5, 1e6)
sizes <- sizes[sizes <= max_n]

cat(sprintf("sgais %s, %s, single-threaded\n", utils::packageVersion("sgais"), R.version.string))
data <- simulate_linear_regression(max(sizes), seed = 2019)
rows <- lapply(sizes, function(n) {
  model <- linear_regression(y ~ ., data[seq_len(n), ])
  fit <- sgais(model, seed = 1, progress = FALSE)
  exact <- exact_log_evidence(model)
  data.frame(
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
