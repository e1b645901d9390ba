# Does the replicate SE of a fit on a pilot run's schedule see all of its error?
#
#   Rscript inst/validation/pilot-spread.R [--fits=quakes_mix_k2:sgais,...] [--seeds=1:20]
#
# With `replicates` > 1, sgais() and ais() run every replicate on the annealing steps of one
# adaptive pilot run (schedule = "pilot", the default; see ?ais, "Schedule"). The replicate SE
# measures the spread of the replicates given that schedule; if the estimate's mean given the
# schedule moved with the schedule, the replicates would share that error and the SE would not
# show it. For each case (of cases.R) and method this fits `replicates = 10` once per seed with
# schedule = "pilot" and once with "adaptive" (each replicate choosing its own steps: no shared
# schedule, but the O(1/M) bias of adaptive steps; schedule-bias.R) and prints every fit, then
# per case, method and schedule:
#   mean_err  the mean over seeds of the error (estimate - reference);
#   sd_err    the sd of the errors over seeds: the estimate's actual spread;
#   rms_se    the root mean square of the fits' reported SEs;
#   ratio     sd_err / rms_se: about 1 when the SE is honest (a 90% range of about 0.7 to 1.3
#             for 20 seeds), above when the replicates share an error;
#   cover     the fraction of fits with the reference inside estimate +/- 2 SE.
# Run from the package's root with sgais installed; about 25 minutes for the default fits on one
# core. Output of 2026-11-24 in pilot-spread-2026-11-24.txt.

suppressMessages(library(sgais))
args <- commandArgs(TRUE)
opt <- function(name, default) {
  hit <- grep(paste0("^--", name, "="), args, value = TRUE)
  if (length(hit)) sub(paste0("^--", name, "="), "", hit[1]) else default
}
fits <- strsplit(strsplit(opt("fits", paste0("quakes_mix_k2:sgais,faithful_mix_k2:sgais,",
                                              "lin_far_intercept:sgais,quakes_mix_k1:ais")),
                          ",")[[1]], ":")
seeds <- eval(parse(text = opt("seeds", "1:20")))
here <- if (file.exists("inst/validation/cases.R")) "inst/validation" else "."
source(file.path(here, "cases.R"))
cases <- validation_cases(utils::read.csv(file.path(here, "references.csv"), stringsAsFactors = FALSE))

rows <- list()
for (f in fits) {
  case <- Filter(function(k) k$id == f[1], cases)[[1]]
  model <- case$model()
  reference <- case_reference(case, model)
  for (schedule in c("pilot", "adaptive")) for (seed in seeds) {
    t0 <- proc.time()[["elapsed"]]
    fit <- suppressWarnings(do.call(f[2], list(model, replicates = 10, seed = seed,
                                              progress = FALSE, schedule = schedule)))
    r <- data.frame(case = f[1], method = f[2], schedule = schedule, seed = seed,
                    error = fit$log_evidence - reference, se = fit$log_evidence_se,
                    sd = fit$replicate_sd, seconds = proc.time()[["elapsed"]] - t0)
    rows[[length(rows) + 1L]] <- r
    cat(sprintf("%-18s %-5s %-8s seed %2d  error %7.3f  se %.3f  replicate sd %.3f  %4.0f s\n",
                r$case, r$method, r$schedule, r$seed, r$error, r$se, r$sd, r$seconds))
  }
}
d <- do.call(rbind, rows)
summary <- do.call(rbind, lapply(split(d, list(d$case, d$method, d$schedule), drop = TRUE),
  function(x) data.frame(case = x$case[1], method = x$method[1], schedule = x$schedule[1],
                         seeds = nrow(x), mean_err = mean(x$error), sd_err = stats::sd(x$error),
                         rms_se = sqrt(mean(x$se^2)),
                         ratio = stats::sd(x$error) / sqrt(mean(x$se^2)),
                         cover = mean(abs(x$error) <= 2 * x$se))))
cat("\n")
print(summary[order(summary$case, summary$method, summary$schedule), ], digits = 3,
      row.names = FALSE)
