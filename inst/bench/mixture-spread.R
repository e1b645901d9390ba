# How far apart SGAIS and nested sampling are on the paper's Gaussian mixture (5 components in
# 2 dimensions, Appendix B.3) from one seed to the next, and where runs with more particles or
# live points land. The posterior is multimodal and there is no closed form, so the single-seed
# comparison of inst/bench/models.R needs this spread to be read: a run whose particles (or live
# points) miss the main mode reports a log Z that is too low by far more than its usual error.
#
# Usage: Rscript inst/bench/mixture-spread.R [sizes...]   (default 1e4 1e5; about 8 minutes)
suppressPackageStartupMessages(library(sgais))
sizes <- as.numeric(commandArgs(trailingOnly = TRUE))
if (length(sizes) == 0 || anyNA(sizes)) sizes <- c(1e4, 1e5)
data <- simulate_gaussian_mixture(max(sizes), components = 5, dim = 2, seed = 1)

rows <- list()
run <- function(n, label, seed, fit) {
  rows[[length(rows) + 1L]] <<- data.frame(
    n = n, method = label, seed = seed, log_z = fit$log_evidence,
    log_z_per_obs = fit$log_evidence / n, seconds = fit$seconds
  )
  message(sprintf("n = %-7g %-22s seed %d  log Z %.1f  %.1f s", n, label, seed,
                  fit$log_evidence, fit$seconds))
}
for (n in sizes) {
  model <- gaussian_mixture(data[seq_len(n), ], components = 5)
  for (s in 1:3) {
    run(n, "SGAIS (paper)", s, sgais(model, control = sgais_control("paper"), seed = s,
                                     progress = FALSE))
    run(n, "NS (paper)", s, nested_sampling(model, control = nested_control("paper"), seed = s,
                                            progress = FALSE))
    run(n, "SGAIS (robust)", s, sgais(model, seed = s, progress = FALSE))
  }
  run(n, "NS (robust)", 1, nested_sampling(model, seed = 1, progress = FALSE))
}
table <- do.call(rbind, rows)
cat("\nSGAIS and NS on the paper's mixture over seeds (data seed 1)\n\n")
print(table, digits = 7, row.names = FALSE)
