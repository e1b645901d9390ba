# Issue 42: the online trajectory of a mixture between restarts. The paper's shifting stream
# (simulate_shifting_mixture(seed = 1): 3 clusters, then 5 from 1,000 points, then 7 from
# 10,000) in order, 7 components, its first `n` points, sgais() at its defaults, seed 1.
# A restart (sgais_control(), restart_every) re-estimates log Z of all the data so far from
# scratch, so its jump over the running trajectory (beyond the usual increment of a chunk, the
# median of the 4 before it) shows how far the trajectory had drifted since the last one; AIS on
# the same prefixes at `ais` points is an independent check of the trajectory itself.
# Prints the trajectory (each chunk's increment, annealing steps, moves, whether its mini-batch
# moves fell back to exact ones, step halvings, restarts, seconds), the restarts' jumps and
# the AIS checks.
#   Rscript inst/validation/restart-chunks.R [--n=24000] [--ais=6000,12000] [--save=fit.rds]
#                                            [--from=fit.rds]  (report a saved run)
suppressMessages(library(sgais))
options(width = 120)
opt <- function(name, default) {
  hit <- grep(sprintf("^--%s=", name), commandArgs(TRUE), value = TRUE)
  if (length(hit)) sub(sprintf("^--%s=", name), "", hit[1]) else default
}
n <- as.integer(opt("n", "24000"))
ais_at <- as.integer(strsplit(opt("ais", "6000,12000"), ",")[[1]])
from <- opt("from", "")
data <- simulate_shifting_mixture(seed = 1)[, c("y1", "y2")]

cat(sprintf("sgais %s, the paper's shifting stream in order, 7 components, %s\n\n",
            utils::packageVersion("sgais"), format(Sys.time(), "%F %H:%M")))
if (nzchar(from)) {
  run <- readRDS(from)
  cat(sprintf("(a saved run: %s, sgais %s)\n\n", from, run$version))
} else {
  seconds <- system.time(fit <- sgais(gaussian_mixture(data[seq_len(n), ], components = 7),
                                      seed = 1, progress = FALSE))[["elapsed"]]
  run <- list(trajectory = fit$trajectory, log_evidence = fit$log_evidence, seconds = seconds,
              version = as.character(utils::packageVersion("sgais")))
  if (nzchar(opt("save", ""))) saveRDS(run, opt("save", ""))
}
tr <- run$trajectory
if (is.null(tr$exact_fallback)) tr$exact_fallback <- 0
tr$increment <- c(tr$log_evidence[1], diff(tr$log_evidence))
print(data.frame(n = tr$n, log_evidence = round(tr$log_evidence, 1),
                 increment = round(tr$increment, 1), steps = tr$annealing_steps,
                 moves = tr$sghmc_steps, exact_fallback = tr$exact_fallback,
                 halvings = tr$step_halvings, restart = tr$restarts,
                 seconds = round(tr$chunk_seconds, 1)), row.names = FALSE)

cat("\nRestarts: the jump of log Z over the trajectory, beyond a usual chunk's increment\n")
jumps <- do.call(rbind, lapply(which(tr$restarts > 0 & seq_len(nrow(tr)) > 5), function(i) {
  usual <- stats::median(tr$increment[(i - 4):(i - 1)])
  data.frame(n = tr$n[i], increment = round(tr$increment[i], 1), usual = round(usual, 1),
             jump = round(tr$increment[i] - usual * (tr$n[i] - tr$n[i - 1]) /
                            (tr$n[i - 1] - tr$n[i - 2]), 1))
}))
print(jumps, row.names = FALSE)
cat(sprintf(paste("\n%d of %d chunks fell back to exact moves; %d step halvings; log Z at %s:",
                  "%.2f; %.0f s\n"), sum(tr$exact_fallback > 0), nrow(tr),
            sum(tr$step_halvings), format(max(tr$n), big.mark = ","), run$log_evidence,
            run$seconds))

ais_at <- ais_at[ais_at %in% tr$n]
if (length(ais_at)) {
  cat("\nThe trajectory against AIS (defaults, seed 1) on the same prefixes\n")
  print(do.call(rbind, lapply(ais_at, function(k) {
    a <- ais(gaussian_mixture(data[seq_len(k), ], components = 7), seed = 1, progress = FALSE)
    z <- tr$log_evidence[tr$n == k]
    data.frame(n = k, trajectory = round(z, 2), ais = round(a$log_evidence, 2),
               difference = round(z - a$log_evidence, 2))
  })), row.names = FALSE)
}
