# The bias of adaptive annealing steps, against steps fixed in advance by a pilot run.
#
#   Rscript inst/validation/schedule-bias.R [--runs=160] [--methods=ais,sgais]
#                                           [--cases=lin_far_intercept] [--workers=2]
#                                           [--out=file.csv]
#
# An adaptive step Delta-lambda is chosen from the particles it then reweights, which biases
# Z-hat by O(1/M); on a schedule fixed in advance Z-hat is unbiased (Neal 2001). For each case
# (of cases.R) and method this runs `runs` replicates with schedule = "adaptive" (each run adapts
# its own steps) and `runs` with schedule = "pilot" (all on the steps of one adaptive pilot run),
# and prints, as error = estimate - reference:
#   mean        the mean of the runs' log Z-hat, +/- its standard error: below 0 by about half
#               the runs' variance (sd^2 / 2) for an unbiased Z-hat, further below when biased;
#   lme         the log-mean-exp of all runs, the estimate of log Z they make together: near 0
#               for an unbiased Z-hat (low by about sd^2 / (2 runs), and noisy when sd is large);
#   sd          the runs' sd of log Z-hat.
# The exact cases (linear regression) need no reference run. Run from the package's root with
# sgais installed; 100 runs of each method and schedule on lin_far_intercept took 6 minutes on
# 2 cores (schedule-bias-2026-11-24.csv; the same runs of AIS on mixture_k1_sim,
# faithful_raw_mix_k1 and quakes_mix_k1 in schedule-bias-2026-11-24-mixtures.csv).

suppressMessages(library(sgais))
args <- commandArgs(TRUE)
opt <- function(name, default) {
  hit <- grep(paste0("^--", name, "="), args, value = TRUE)
  if (length(hit)) sub(paste0("^--", name, "="), "", hit[1]) else default
}
runs <- as.integer(opt("runs", "160"))
methods <- strsplit(opt("methods", "ais,sgais"), ",")[[1]]
ids <- strsplit(opt("cases", "lin_far_intercept"), ",")[[1]]
workers <- as.integer(opt("workers", "2"))
out_file <- opt("out", "")
here <- if (file.exists("inst/validation/cases.R")) "inst/validation" else "."

source(file.path(here, "cases.R"))
ref_file <- file.path(here, "references.csv")
references <- if (file.exists(ref_file)) utils::read.csv(ref_file, stringsAsFactors = FALSE)
cases <- Filter(function(k) k$id %in% ids, validation_cases(references))
if (workers > 1) future::plan(future::multisession, workers = workers)

lme <- function(x) max(x) + log(mean(exp(x - max(x))))
rows <- list()
for (case in cases) {
  model <- case$model()
  reference <- case_reference(case, model)
  for (method in methods) {
    for (schedule in c("adaptive", "pilot")) {
      t0 <- proc.time()[["elapsed"]]
      fit <- suppressWarnings(switch(method,
        ais = ais(model, replicates = runs, schedule = schedule, seed = 1, progress = FALSE),
        sgais = sgais(model, replicates = runs, schedule = schedule, seed = 1, progress = FALSE)
      ))
      err <- fit$replicate_log_evidence - reference
      rows[[length(rows) + 1L]] <- data.frame(
        case = case$id, method = method, schedule = schedule, runs = runs,
        mean = mean(err), mean_se = stats::sd(err) / sqrt(runs), lme = lme(err),
        sd = stats::sd(err), seconds = proc.time()[["elapsed"]] - t0
      )
      print(rows[[length(rows)]], digits = 3, row.names = FALSE)
    }
  }
}
out <- do.call(rbind, rows)
cat("\nError of log Z-hat (estimate - reference), adaptive steps vs a pilot run's fixed steps:\n")
print(out, digits = 3, row.names = FALSE)
if (nzchar(out_file)) utils::write.csv(out, out_file, row.names = FALSE)
