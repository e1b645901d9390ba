# SGAIS's log Z along the paper's softmax regression stream (44 parameters, n = 100,000, the data
# of softmax-reference.R), with and without the score control variate (`score_control_variate`,
# see ?sgais_control), side by side on the same seeds: the error of the trajectory at n = 10^3 to
# 10^5 against independent references, the gradient evaluations and the seconds of each run.
# Without it log Z-hat drifts low as n grows (its variance grows as p log(n) / M and it is low by
# half of it); with it the drift is mostly gone at the same cost.
#
# References: importance sampling from a Laplace fit (softmax_reference() in
# tests/testthat/helper-glm.R, 20,000 draws, seed 1) at n <= 10,000, where the Laplace
# approximation is 0.02-0.2 nats off; the Laplace approximation itself above, where it agreed with
# importance sampling to 0.02 nats at 10^4 and 0.000 at 10^5 (softmax-reference.R: -6884.791 and
# -67664.522). The references are recomputed here (about 4 minutes).
#
# Usage, from the package's root: Rscript inst/bench/score-cv.R [--seeds=1:7]
#
# Measured (seeds 1-7, all runs without it first, then with it, one at a time on a 2-core
# machine whose other core was busy):
#   n               1,000  2,000  5,000  10,000  20,000  50,000  100,000
#   without (mean)  -0.19  -0.24  -0.73   -0.94   -1.28   -2.31    -3.27  (sd 2.01 at 10^5)
#   with (mean)     -0.19  -0.24  -0.41   -0.28   -0.26   -0.65    -1.01  (sd 0.66 at 10^5)
#   gradient evaluations 487 million per run either way; 34.6 s and 42.0 s a run here, but
#   interleaved on an idle machine 16 and 16-20 s (seeds 1 and 2).
suppressPackageStartupMessages(library(sgais))
args <- commandArgs(trailingOnly = TRUE)
arg <- function(name, default) {
  hit <- grep(sprintf("^--%s=", name), args, value = TRUE)
  if (length(hit)) sub(sprintf("^--%s=", name), "", hit[length(hit)]) else default
}
seeds <- eval(parse(text = arg("seeds", "1:7")))
source("tests/testthat/helper-glm.R", local = TRUE)
source("inst/bench/paper-data.R", local = TRUE)
builders <- paper_builders(1e5, 1)
sizes <- c(1000, 2000, 5000, 1e4, 2e4, 5e4, 1e5)

reference <- vapply(sizes, function(n) {
  m <- builders$softmax(n)
  if (n <= 1e4) softmax_reference(m, draws = 20000)[["log_evidence"]] else
    softmax_laplace_fit(m)$laplace
}, numeric(1))
cat("references:", sprintf("%.3f", reference), "\n")

model <- builders$softmax(1e5)
for (cv in c(FALSE, TRUE)) {
  rows <- lapply(seeds, function(s) {
    t0 <- proc.time()[["elapsed"]]
    fit <- suppressWarnings(sgais(model, score_control_variate = cv, seed = s, progress = FALSE))
    tr <- as.data.frame(fit)
    c(tr$log_evidence[match(sizes, tr$n)] - reference,
      grads = tail(tr$gradient_evaluations, 1) / 1e6, s = proc.time()[["elapsed"]] - t0)
  })
  err <- do.call(rbind, rows)
  cat(sprintf("\nscore_control_variate = %s\n", cv))
  cat(sprintf("%6s %s %8s %6s\n", "seed", paste(sprintf("%8s", format(sizes, big.mark = ",",
                                                                         scientific = FALSE)),
                                                  collapse = ""), "Mgrads", "s"))
  for (i in seq_along(seeds)) {
    cat(sprintf("%6d %s %8.0f %6.1f\n", seeds[i],
                paste(sprintf("%+8.2f", err[i, seq_along(sizes)]), collapse = ""),
                err[i, "grads"], err[i, "s"]))
  }
  cat(sprintf("%6s %s %8.0f %6.1f\n", "mean",
              paste(sprintf("%+8.2f", colMeans(err[, seq_along(sizes), drop = FALSE])),
                    collapse = ""), mean(err[, "grads"]), mean(err[, "s"])))
  cat(sprintf("%6s %s\n", "sd", paste(sprintf("%8.2f", apply(err[, seq_along(sizes),
                                                                  drop = FALSE], 2, stats::sd)),
                                       collapse = "")))
}
