# SGAIS, AIS and nested sampling on simulated logistic and Poisson regressions (5 covariates and
# an intercept: 6 parameters) at N = 10^4 and 10^5, each with the package's default settings
# and one seed, in one table: model, N, method, log Z, log Z / N, seconds, and a status that
# says when a run was skipped or stopped by the cap.
#
# Usage (from the installed package):
#   Rscript -e 'source(system.file("bench", "glm.R", package = "sgais"))'
#   Rscript inst/bench/glm.R --sizes=1e4,1e5 --max-seconds=600
# Options, with their defaults:
#   --sizes=1e4,1e5            data sizes; the smaller sets are prefixes of the largest
#   --max-seconds=Inf          cap per run: a run whose prediction (its time at the previous
#                              size, scaled by N log N) exceeds it is skipped, and a run that
#                              reaches it is stopped by R's elapsed-time limit; both are reported
#   --models=logistic,poisson  --methods=SGAIS,AIS,NS  --seed=1
#   (--methods may also name SGAIS_resample and AIS_resample: the defaults with resample = TRUE)
#
# On the Poisson regression the default resampling rule of SGAIS and AIS (resample when the
# weight ESS falls below half the particles) stalls the annealing: prior draws reach linear
# predictors of 30 and more, where the likelihood is exp(-e^30); particles left there have zero
# weight, too few to trigger resampling, the moves cannot bring them back (their gradients are
# of order e^30), and since the annealing step is chosen by the ESS of the incremental weights
# of all particles (paper Algorithm 1), dead ones included, lambda then grows by a constant
# ~1e-8 per step instead of geometrically. On these data at N = 10^4 both sgais() and ais()
# were stopped at a 300 s cap (nested sampling: 59 s, log Z -16850.45); with resample = TRUE
# they took 3 s and 19 s (log Z -16849.50 and -16849.32), and at 10^5 8 s and 211 s
# (-168024.40 and -168024.62). On an earlier draw of data like these sgais() finished in 3.5 s
# and ais() was stopped at 120 s: whether a run stalls depends on its prior draws. Hence the
# *_resample variants.
#
# The data: covariates x1..x5 standard normal, rows drawn one after another (the data at 10^4
# are the first rows of those at 10^5). Logistic regression: coefficients (-0.5, 1,
# -0.5, 0.25, 0.75, -1). Poisson regression: an exposure t ~ U(0.5, 2) entered as the offset
# log(t), and coefficients (0.5, 0.3, -0.2, 0.1, 0.25, -0.3), so that counts stay small
# (mean about 2.5). Both models with the default prior N(0, 2.5^2) on every coefficient.
suppressPackageStartupMessages(library(sgais))
options(width = 200, warn = 1)

defaults <- list(sizes = "1e4,1e5", `max-seconds` = "Inf", models = "logistic,poisson",
                 methods = "SGAIS,AIS,NS", seed = "1")
parse_args <- function(args, defaults) {
  opts <- defaults
  for (a in args) {
    m <- regmatches(a, regexec("^--([a-z-]+)=(.*)$", a))[[1]]
    if (length(m) != 3L || !m[2] %in% names(defaults)) {
      stop(sprintf("Unknown option %s; see the header of this script.", a), call. = FALSE)
    }
    opts[[m[2]]] <- m[3]
  }
  opts
}
opts <- parse_args(commandArgs(trailingOnly = TRUE), defaults)
split_opt <- function(x) strsplit(x, ",", fixed = TRUE)[[1]]
sizes <- sort(as.numeric(split_opt(opts$sizes)))
cap <- as.numeric(opts$`max-seconds`)
which_models <- split_opt(opts$models)
which_methods <- split_opt(opts$methods)
seed <- as.integer(opts$seed)
stopifnot(!anyNA(sizes), !is.na(cap), cap > 0, !is.na(seed),
          all(which_models %in% c("logistic", "poisson")),
          all(which_methods %in% c("SGAIS", "AIS", "NS", "SGAIS_resample", "AIS_resample")))

# The largest data set, drawn row after row (seven uniforms per row: the covariates by the
# normal quantile, the response by inversion, the exposure), so the smaller ones are its first
# rows whatever the largest size.
simulate <- function(model, n, seed) {
  set.seed(seed)
  draws <- matrix(stats::runif(n * 7), n, 7, byrow = TRUE)
  x <- stats::qnorm(draws[, 1:5])
  colnames(x) <- paste0("x", 1:5)
  u <- draws[, 6]
  t <- 0.5 + 1.5 * draws[, 7]
  a <- cbind(1, x)
  if (model == "logistic") {
    y <- as.integer(u < stats::plogis(drop(a %*% c(-0.5, 1, -0.5, 0.25, 0.75, -1))))
    data.frame(x, y = y)
  } else {
    y <- stats::qpois(u, t * exp(drop(a %*% c(0.5, 0.3, -0.2, 0.1, 0.25, -0.3))))
    data.frame(x, t = t, y = y)
  }
}
build <- function(model, data) {
  if (model == "logistic") logistic_regression(y ~ x1 + x2 + x3 + x4 + x5, data, prior = "paper")
  else poisson_regression(y ~ x1 + x2 + x3 + x4 + x5 + offset(log(t)), data, prior = "paper")
}

methods <- list(
  SGAIS = function(model) sgais(model, seed = seed, progress = FALSE),
  AIS = function(model) ais(model, seed = seed, progress = FALSE),
  NS = function(model) nested_sampling(model, seed = seed, progress = FALSE),
  SGAIS_resample = function(model) sgais(model, resample = TRUE, seed = seed, progress = FALSE),
  AIS_resample = function(model) ais(model, resample = TRUE, seed = seed, progress = FALSE)
)[which_methods]

row_of <- function(name, n, method, log_z, seconds, status) {
  data.frame(model = name, N = n, method = method, log_Z = log_z, log_Z_per_N = log_z / n,
             seconds = seconds, status = status)
}

# One run, capped: skipped when the run at the previous size predicts more than the cap, stopped
# by R's elapsed-time limit (which the estimators see between their slices of work) when it
# reaches the cap. The prediction scales the previous time by N log N: AIS and nested sampling
# evaluate all N observations per step, and their number of steps grows with the information,
# about (parameters / 2) log N (linear scaling predicted 196 s for AIS at 10^5 from 19.6 s at
# 10^4, and it took more than 220 s); for SGAIS, whose cost is about linear, it is a bound.
run_capped <- function(name, model, method, previous) {
  n <- model$n
  if (!is.null(previous)) {
    if (previous$status != "done") {
      return(row_of(name, n, method, NA, NA, sprintf("skipped: %s at N = %g", previous$status,
                                                      previous$N)))
    }
    predicted <- previous$seconds * (n * log(n)) / (previous$N * log(previous$N))
    if (predicted > cap) {
      return(row_of(name, n, method, NA, NA,
                    sprintf("skipped: predicted %.0f s > cap %g s", predicted, cap)))
    }
  }
  start <- proc.time()[["elapsed"]]
  fit <- tryCatch({
    if (is.finite(cap)) setTimeLimit(elapsed = cap, transient = TRUE)
    methods[[method]](model)
  }, error = function(e) {
    setTimeLimit()
    if (grepl("time limit", conditionMessage(e))) return(NULL)
    stop(e)
  })
  setTimeLimit()
  if (is.null(fit)) {
    return(row_of(name, n, method, NA, proc.time()[["elapsed"]] - start,
                  sprintf("stopped at the cap of %g s", cap)))
  }
  row_of(name, n, method, fit$log_evidence, fit$seconds, "done")
}

rows <- list()
for (name in which_models) {
  data <- simulate(name, max(sizes), seed = 2026)
  previous <- list()
  for (n in sizes) {
    model <- build(name, data[seq_len(n), ])
    for (method in names(methods)) {
      r <- run_capped(name, model, method, previous[[method]])
      message(sprintf("%s  %-8s N = %-7g %-5s log Z %10.2f  %8.1f s  %s", format(Sys.time(), "%H:%M:%S"),
                      name, n, method, r$log_Z, r$seconds, r$status))
      previous[[method]] <- r
      rows[[length(rows) + 1L]] <- r
    }
  }
}
table <- do.call(rbind, rows)

cat(sprintf("\nLogistic and Poisson regression, 6 parameters, default settings, seed %d%s\n\n", seed,
            if (is.finite(cap)) sprintf(", cap %g s per run", cap) else ""))
print(table, digits = 7, row.names = FALSE)
