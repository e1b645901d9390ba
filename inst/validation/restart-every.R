# Issue 42: restarts every 4-fold growth of the data instead of the default doubling
# (sgais_control(restart_every = 4)) on the paper's shifting stream (100,000 points,
# simulate_shifting_mixture(seed = 1), the shuffle of inst/scripts/reproduce-paper.R), robust
# preset, seed 1. The default's figures are in inst/extdata/paper-shift.csv (restart_every = 2).
# Output: restart-every-2026-11-26.txt.
#   Rscript inst/validation/restart-every.R
suppressMessages(library(sgais))
data <- simulate_shifting_mixture(seed = 1)[, c("y1", "y2")]
shuffled <- data[sgais:::with_seed(1, sample.int(nrow(data))), ]
for (k in c(3, 5, 7)) for (o in c("in order", "shuffled")) {
  t0 <- proc.time()[[3]]
  f <- suppressWarnings(sgais(gaussian_mixture(if (o == "in order") data else shuffled, components = k), seed = 1, progress = FALSE, restart_every = 4))
  cat(sprintf("K=%d %-9s logZ %.2f se %.2f sec %.1f restarts at %s\n", k, o, f$log_evidence, f$log_evidence_se, proc.time()[[3]] - t0, paste(f$trajectory$n[f$trajectory$restarts > 0], collapse = ",")))
}
