# Nested sampling on the Gaussian mixture with 2 components on faithful in its raw units (case
# faithful_raw_mix_k2 of cases.R), with 20 and 80 jump proposals per new live point, single runs
# at seeds 3 to 14 (seeds 1 and 2 are the validation suite's, where 20 jumps erred by -1.58 and
# -1.59 nats at 2.2 to 2.5 SE). Its runs are bimodal: those whose live points reach the second
# cluster late end low.
#
#   Rscript inst/validation/ns-jumps.R        # about 10 minutes on one core
#
# Output of 2026-11-24 in ns-jumps-2026-11-24.txt.
suppressMessages(library(sgais))
here <- if (file.exists("inst/validation/cases.R")) "inst/validation" else "."
source(file.path(here, "cases.R"))
cases <- validation_cases(utils::read.csv(file.path(here, "references.csv")))
case <- Filter(function(k) k$id == "faithful_raw_mix_k2", cases)[[1]]
model <- case$model()
rows <- list()
for (jumps in c(20, 80)) for (seed in 3:14) {
  t0 <- proc.time()[[3]]
  fit <- suppressWarnings(nested_sampling(model, jumps = jumps, seed = seed, progress = FALSE))
  rows[[length(rows) + 1L]] <- data.frame(jumps = jumps, seed = seed,
                                          error = fit$log_evidence - case$reference,
                                          seconds = proc.time()[[3]] - t0)
  cat(sprintf("jumps %2d seed %2d  err %7.3f  %5.1f s\n", jumps, seed,
              fit$log_evidence - case$reference, proc.time()[[3]] - t0))
}
rows <- do.call(rbind, rows)
cat("\nby jumps: mean error, sd, share below -1 nat, mean seconds\n")
print(do.call(rbind, lapply(split(rows, rows$jumps), function(r) data.frame(
  jumps = r$jumps[1], mean = mean(r$error), sd = stats::sd(r$error),
  below_1 = mean(r$error < -1), seconds = mean(r$seconds)))), digits = 3)
