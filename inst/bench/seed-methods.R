# Every estimator and kernel of the package side by side on the paper's three models (linear
# regression, softmax regression and the Gaussian mixture; Cameron et al. 2019, Appendix B), as
# in thesis Chapter 5: log Z, its error against the exact evidence (linear regression) or against
# AIS (the others: with nested sampling, the reference methods of the paper, Section 6.1), seconds, gradient
# and likelihood evaluations, and the fraction of the data each Metropolis-Hastings test read.
# (Nested sampling's cost on the 44-parameter softmax regression is hours at N = 10^4, so the
# reference there is AIS with the robust SGHMC kernel, 100 particles; --methods can leave NS out.
# FlyMC serves softmax regression (Bohning's bound) among these models; inst/bench/flymc.R also
# runs it on logistic regression, against an independent reference.)
# The streaming estimators (SGAIS, SIR, the sequential estimator) also run on linear regression at
# a larger N. One run, one seed, all methods on the same data, so the ratios compare.
#
# Usage:
#   Rscript inst/bench/seed-methods.R [--n=1e4,1e5] [--models=linear,softmax,mixture]
#     [--methods=PATTERN] [--streaming-n=1e6] [--seed=1] [--out=FILE.csv]
#     [--reference=MODEL@N=LOGZ,...]
# --methods keeps the methods whose label matches the regular expression PATTERN (e.g.
# "^SGAIS|^AIS"); --streaming-n=0 skips the large streaming run. At N = 10^5 AIS and nested
# sampling take minutes per model and kernel. --reference gives the reference log Z of a model and
# size from an earlier run of this script (AIS / sghmc with the same seed), e.g.
# --reference=softmax@1e5=-67664.73, so later runs can leave out the hour AIS takes at N = 10^5.
suppressPackageStartupMessages(library(sgais))
options(width = 220)

args <- commandArgs(trailingOnly = TRUE)
arg <- function(name, default) {
  hit <- grep(sprintf("^--%s=", name), args, value = TRUE)
  if (length(hit)) sub(sprintf("^--%s=", name), "", hit[length(hit)]) else default
}
sizes <- as.numeric(strsplit(arg("n", "1e4,1e5"), ",")[[1]])
which_models <- strsplit(arg("models", "linear,softmax,mixture"), ",")[[1]]
pattern <- arg("methods", ".")
streaming_n <- as.numeric(arg("streaming-n", "1e6"))
seed <- as.integer(arg("seed", "1"))
out_file <- arg("out", "")
stopifnot(!anyNA(sizes), !is.na(streaming_n), !is.na(seed))
given <- strsplit(strsplit(arg("reference", ""), ",")[[1]], "=")
given_reference <- stats::setNames(as.numeric(vapply(given, `[`, "", 2)),
                                   vapply(given, function(g) {
                                     mn <- strsplit(g[1], "@")[[1]]
                                     paste(mn[1], as.numeric(mn[2]))
                                   }, ""))
stopifnot(!anyNA(given_reference))

# The paper's data (inst/bench/paper-data.R), simulated once at the largest size.
largest <- max(sizes)
script_dir <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
source(file.path(if (length(script_dir)) dirname(script_dir[1]) else
  system.file("bench", package = "sgais"), "paper-data.R"))
builders <- paper_builders(largest, seed) # the linear data grow to streaming_n on demand
builders <- builders[intersect(names(builders), which_models)]

# label = function(model); each returns a fit. Kernels go through the one `kernel` setting.
quiet <- function(expr) suppressWarnings(expr)
kernel_runs <- function(estimator, label) {
  kernels <- c("sghmc", "sgld", "austerity", "confidence", "flymc")
  runs <- lapply(kernels, function(k) {
    force(k)
    function(model) {
      if (k == "confidence" && !model$family %in% c("linear_regression", "softmax_regression",
                                                    "logistic_regression")) return(NULL)
      if (k == "flymc" && !model$family %in% c("softmax_regression", "logistic_regression")) {
        return(NULL)
      }
      quiet(estimator(model, kernel = k, seed = seed, progress = FALSE))
    }
  })
  stats::setNames(runs, paste0(label, " / ", kernels))
}
methods <- c(
  kernel_runs(ais, "AIS"),
  list("NS" = function(model) quiet(nested_sampling(model, seed = seed, progress = FALSE))),
  kernel_runs(sgais, "SGAIS"),
  list(
    "SIR / sghmc" = function(model) quiet(sir(model, seed = seed, progress = FALSE)),
    "sequential / sghmc" = function(model) quiet(sequential_sgmcmc(model, hybrid = FALSE, seed = seed, progress = FALSE)),
    "sequential + NS / sghmc" = function(model) quiet(sequential_sgmcmc(model, seed = seed, progress = FALSE)),
    "sequential (paper)" = function(model) quiet(sequential_sgmcmc(model, hybrid = FALSE, control = sequential_control("paper"), seed = seed, progress = FALSE)),
    "online NS / walk" = function(model) quiet(online_nested_sampling(model, seed = seed, progress = FALSE))
  )
)
methods <- methods[grepl(pattern, names(methods))]
streaming <- c("SGAIS / sghmc", "SIR / sghmc", "sequential + NS / sghmc", "sequential / sghmc")

fraction <- function(fit) {
  f <- c(fit$trajectory$data_fraction, fit$schedule$data_fraction)
  if (length(f) == 0 || all(is.na(f))) NA_real_ else mean(f, na.rm = TRUE)
}

row_of <- function(model_name, n, label, fit, reference) {
  data.frame(model = model_name, N = n, method = label,
             log_z = fit$log_evidence, reference = reference,
             error = fit$log_evidence - reference, seconds = fit$seconds,
             gradient_evals = fit$gradient_evaluations,
             likelihood_evals = fit$likelihood_evaluations,
             data_fraction = fraction(fit))
}

run_case <- function(model_name, n, labels) {
  model <- builders[[model_name]](n)
  exact <- if (model_name == "linear") exact_log_evidence(model) else NA_real_
  rows <- list()
  reference <- exact
  if (is.na(reference) && paste(model_name, n) %in% names(given_reference)) {
    reference <- given_reference[[paste(model_name, n)]]
  }
  for (label in labels) {
    fit <- tryCatch(methods[[label]](model), error = function(e) {
      message(sprintf("  %s, N = %g, %s: %s", model_name, n, label, conditionMessage(e)))
      NULL
    })
    if (is.null(fit)) next
    if (is.na(reference) && label == "AIS / sghmc") reference <- fit$log_evidence
    rows[[length(rows) + 1]] <- row_of(model_name, n, label, fit, reference)
    message(sprintf("  %s, N = %g, %-24s log Z %.2f (%.1f s)", model_name, n, label,
                    fit$log_evidence, fit$seconds))
  }
  do.call(rbind, rows)
}

results <- list()
for (model_name in names(builders)) {
  for (n in sizes) results[[length(results) + 1]] <- run_case(model_name, n, names(methods))
}
if ("linear" %in% names(builders) && streaming_n > 0) {
  results[[length(results) + 1]] <- run_case("linear", streaming_n, intersect(streaming, names(methods)))
}
table <- do.call(rbind, results)
cat(sprintf("\nSeed-methods benchmark, seed %d (%s)\n", seed, format(Sys.time(), "%Y-%m-%d")))
cat("error: against the exact log Z (linear) or that of AIS / sghmc (softmax, mixture)\n")
print(table, digits = 4, row.names = FALSE)
if (nzchar(out_file)) utils::write.csv(table, out_file, row.names = FALSE)
