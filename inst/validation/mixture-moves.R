# SGAIS and AIS on the Gaussian mixture with 3 components on scale(faithful) (case
# faithful_mix_k3 of cases.R), 10 replicates each, seeds 3 to 6 (seeds 1 and 2 are the
# validation suite's), with the moves of the robust preset and two alternatives:
#   one move     one move of up to 20 SGHMC steps per annealing step (`max_rounds = 1`, the
#                robust preset before moves were repeated until the particles decorrelate)
#   repeated     the robust preset: moves repeated, up to 4, while the largest correlation of the
#                particles' whitened coordinates with where they began is above 0.5
#   80 steps     one move of up to 80 steps (`sghmc_steps = 80, max_rounds = 1`), SGAIS only
# With one move both suite seeds had SGAIS 1.5 nats low at 5 to 6 SE; see ?sgais_control.
#
#   Rscript inst/validation/mixture-moves.R        # about 20 minutes on one core
#
# Output of 2026-11-24 in mixture-moves-2026-11-24.txt.
suppressMessages(library(sgais))
here <- if (file.exists("inst/validation/cases.R")) "inst/validation" else "."
source(file.path(here, "cases.R"))
cases <- validation_cases(utils::read.csv(file.path(here, "references.csv")))
case <- Filter(function(k) k$id == "faithful_mix_k3", cases)[[1]]
model <- case$model()
variants <- list(
  list(method = "sgais", name = "one move", args = list(max_rounds = 1)),
  list(method = "sgais", name = "repeated", args = list()),
  list(method = "sgais", name = "80 steps", args = list(sghmc_steps = 80, max_rounds = 1)),
  list(method = "ais", name = "one move", args = list(max_rounds = 1)),
  list(method = "ais", name = "repeated", args = list())
)
rows <- list()
for (v in variants) for (seed in 3:6) {
  t0 <- proc.time()[[3]]
  fit <- suppressWarnings(do.call(v$method, c(list(model, replicates = 10, seed = seed,
                                                   progress = FALSE), v$args)))
  rows[[length(rows) + 1L]] <- data.frame(
    method = v$method, moves = v$name, seed = seed,
    error = fit$log_evidence - case$reference, se = fit$log_evidence_se,
    sd = fit$replicate_sd, seconds = proc.time()[[3]] - t0,
    gradients = fit$gradient_evaluations)
  r <- rows[[length(rows)]]
  cat(sprintf("%-5s %-9s seed %d  err %6.3f  se %.3f  sd %.3f  %4.0f s  %.2e grads\n", r$method,
              r$moves, seed, r$error, r$se, r$sd, r$seconds, r$gradients))
}
rows <- do.call(rbind, rows)
cat("\nmean error and gradients by method and moves (seeds 3-6):\n")
print(stats::aggregate(cbind(error, se, gradients) ~ method + moves, rows, mean), digits = 3)
