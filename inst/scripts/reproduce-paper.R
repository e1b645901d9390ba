# Reproduce the experiments of Cameron, Eggers and Kroon (2019), "Stochastic gradient annealed
# importance sampling for efficient online marginal likelihood estimation", Entropy 21, 1109:
#
#   accuracy     Figures 2-4 (Section 7.1): SGAIS, AIS and nested sampling on the paper's three
#                models (linear regression, softmax regression with 4 classes and 10 covariates,
#                2-D Gaussian mixture with 5 components; Appendix B), N up to 10^6. SGAIS runs
#                once per seed on the largest N and gives every smaller N from its trajectory;
#                AIS and NS run on the first N observations for N on a log grid, like the paper.
#   shift        Figure 5 (Section 7.2): SGAIS with mixtures of K = 3, 5, 7 components on data
#                whose clusters change at 1,000 and 10,000 observations, in order and shuffled.
#   a1           Figure A1 (Appendix A.2): AIS against NS on a 1-D mixture with 3 components
#                (9 parameters), N = 20, 40, ..., 1000, 5 runs each.
#   sensitivity  Figures 6-8 and A2-A4 (Section 7.3, Appendix C): SGAIS with the paper's
#                settings on the 5-component mixture, one setting varied at a time (particles,
#                target ESS, SGHMC steps, learning rate, learning rate x steps constant, batch
#                size), against the package's default SGAIS on the same data.
#
# Every experiment runs with the paper's settings (sgais_control("paper"), ais_control("paper"),
# nested_control("paper")) and, except the sensitivity study, with the package's defaults
# ("robust") side by side. Each (experiment, model, method, preset, N, seed) cell is cached in
# its own .rds file under --cache and skipped when it is there, so the script can be run in
# pieces and on several machines; --collect gathers the cells into the CSV files of --out that
# the vignette "Reproducing the paper" reads (vignette("paper", package = "sgais")).
#
# Like the paper, AIS runs are capped at --ais-cap seconds (4000 by default): a run is skipped
# when the run at the previous N, scaled by the ratio of the N, would take longer, and stopped
# (recorded as "capped") when it does. --ns-cap does the same for nested sampling (no cap by
# default). Capped and skipped cells are recorded with their status, never silently dropped.
#
# Usage (from the package's source directory, with the package installed):
#   Rscript inst/scripts/reproduce-paper.R                  # everything, N up to 10^6
#   Rscript inst/scripts/reproduce-paper.R --experiments=accuracy --max-n=1e5 --seeds=1,2
#   Rscript inst/scripts/reproduce-paper.R --collect        # only gather the cached cells
# Options:
#   --experiments=accuracy,shift,a1,sensitivity   which experiments (default: all)
#   --models=linear,softmax,mixture               accuracy models (default: all three)
#   --presets=paper,robust                        presets (default: both)
#   --max-n=1e6                                   largest N of the accuracy experiment
#   --grid=1e3,1e4,1e5,1e6                        the N at which AIS and NS run (<= max-n)
#   --seeds=1                                     run seeds (the data are always seed 2019)
#   --sensitivity-n=2e4  --sensitivity-seeds=1,2,3
#   --ais-cap=4000  --ns-cap=Inf                  seconds
#   --cache=paper-cache  --out=inst/extdata       where cells and collected CSVs go
#   --collect                                     no runs: collect the cache into --out
#   --commit=auto                                 the sgais commit the cells were run with,
#                                                 recorded in paper-info.csv (auto: git HEAD)
suppressPackageStartupMessages(library(sgais))
options(warn = 1)

# --- options -------------------------------------------------------------------------------
defaults <- list(
  experiments = "accuracy,shift,a1,sensitivity", models = "linear,softmax,mixture",
  presets = "paper,robust", `max-n` = "1e6", grid = "1e3,1e4,1e5,1e6", seeds = "1",
  `sensitivity-n` = "2e4", `sensitivity-seeds` = "1,2,3", `ais-cap` = "4000", `ns-cap` = "Inf",
  cache = "paper-cache", out = "inst/extdata", collect = "false", commit = "auto"
)
parse_args <- function(args, defaults) {
  opts <- defaults
  for (a in args) {
    if (a == "--collect") a <- "--collect=true"
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
num_opt <- function(x) as.numeric(split_opt(x))
experiments <- split_opt(opts$experiments)
models_run <- split_opt(opts$models)
presets <- split_opt(opts$presets)
max_n <- num_opt(opts$`max-n`)
grid <- sort(num_opt(opts$grid))
grid <- grid[grid <= max_n]
seeds <- as.integer(num_opt(opts$seeds))
sens_n <- num_opt(opts$`sensitivity-n`)
sens_seeds <- as.integer(num_opt(opts$`sensitivity-seeds`))
caps <- c(AIS = num_opt(opts$`ais-cap`), NS = num_opt(opts$`ns-cap`))
cache <- opts$cache
collect_only <- identical(opts$collect, "true")
stopifnot(all(experiments %in% c("accuracy", "shift", "a1", "sensitivity")),
          all(models_run %in% c("linear", "softmax", "mixture")),
          all(presets %in% c("paper", "robust")), length(max_n) == 1L, !anyNA(c(grid, seeds)))
data_seed <- 2019

`%||%` <- function(x, y) if (is.null(x)) y else x

# --- cells ---------------------------------------------------------------------------------
# A cell is one run; its file holds a one-row summary (`cell`) and, for SGAIS, the trajectory.
cell_file <- function(...) {
  file.path(cache, paste0(paste(..., sep = "-"), ".rds"))
}
# Run `fun` unless its cell is cached; save atomically, so an interrupted run leaves no cell.
run_cell <- function(file, fun) {
  if (file.exists(file)) return(readRDS(file))
  dir.create(dirname(file), showWarnings = FALSE, recursive = TRUE)
  message(format(Sys.time(), "%H:%M:%S "), "running ", basename(file))
  value <- fun()
  value$cell$finished <- format(Sys.time(), "%Y-%m-%d %H:%M:%S")
  tmp <- paste0(file, ".tmp")
  saveRDS(value, tmp)
  file.rename(tmp, file)
  message(sprintf("  %s  log Z %.2f  %.1f s", value$cell$status, value$cell$log_evidence,
                  value$cell$seconds))
  value
}

cell_row <- function(fit, status = "done", seconds = fit$seconds) {
  data.frame(status = status, n = fit$n, log_evidence = fit$log_evidence,
             log_evidence_se = fit$log_evidence_se %||% NA_real_, seconds = seconds,
             gradient_evaluations = fit$gradient_evaluations,
             likelihood_evaluations = fit$likelihood_evaluations)
}
failed_row <- function(status, n, seconds = NA_real_) {
  data.frame(status = status, n = n, log_evidence = NA_real_, log_evidence_se = NA_real_,
             seconds = seconds, gradient_evaluations = NA_real_, likelihood_evaluations = NA_real_)
}

control_for <- function(method, preset) {
  switch(method, SGAIS = sgais_control(preset), AIS = ais_control(preset),
         NS = nested_control(preset))
}
run_method <- function(method, model, preset, seed, ...) {
  control <- control_for(method, preset)
  switch(method,
    SGAIS = sgais(model, control = control, ..., seed = seed, progress = FALSE),
    AIS = ais(model, control = control, ..., seed = seed, progress = FALSE),
    NS = nested_sampling(model, control = control, ..., seed = seed, progress = FALSE)
  )
}

# A reference method at one N, capped: skipped when the run at the previous N, scaled by N,
# would exceed the cap; stopped by R's elapsed-time limit (which the C code sees at its
# interrupt checks) when it does.
run_capped <- function(method, model, preset, seed, cap, previous) {
  if (is.finite(cap) && !is.null(previous)) {
    if (previous$status != "done") {
      return(list(cell = failed_row(sprintf("skipped: %s at a smaller N", previous$status),
                                    model$n)))
    }
    predicted <- previous$seconds * model$n / previous$n
    if (predicted > cap) {
      return(list(cell = failed_row(sprintf("skipped: predicted %.3g s > cap %g s", predicted,
                                            cap), model$n)))
    }
  }
  start <- proc.time()[["elapsed"]]
  fit <- tryCatch({
    if (is.finite(cap)) setTimeLimit(elapsed = cap, transient = TRUE)
    run_method(method, model, preset, seed)
  }, error = function(e) {
    setTimeLimit()
    if (grepl("time limit", conditionMessage(e))) return(NULL)
    stop(e)
  })
  setTimeLimit()
  if (is.null(fit)) {
    return(list(cell = failed_row(sprintf("capped at %g s", cap), model$n,
                                  proc.time()[["elapsed"]] - start)))
  }
  list(cell = cell_row(fit))
}

# Keep ~60 points per decade of a long trajectory, and every grid N.
thin <- function(tr, keep_n = numeric()) {
  if (nrow(tr) <= 300L) return(tr)
  idx <- unique(round(exp(seq(0, log(nrow(tr)), length.out = 300L))))
  tr[sort(unique(c(idx, which(tr$n %in% keep_n), nrow(tr)))), , drop = FALSE]
}
trajectory_of <- function(fit, keep_n = numeric()) {
  tr <- as.data.frame(fit)
  thin(tr[, c("n", "log_evidence", "log_evidence_se", "seconds", "annealing_steps",
              "gradient_evaluations")], keep_n)
}

# --- the paper's models on simulated data (Appendix B) ---------------------------------------
data_for <- local({
  memo <- list()
  function(model, n) {
    key <- paste(model, n)
    if (is.null(memo[[key]])) {
      memo[[key]] <<- switch(model,
        linear = simulate_linear_regression(n, seed = data_seed),
        softmax = simulate_softmax_regression(n, seed = data_seed),
        mixture = simulate_gaussian_mixture(n, components = 5, seed = data_seed)
      )
    }
    memo[[key]]
  }
})
build_model <- function(model, data) {
  switch(model,
    linear = linear_regression(y ~ ., data, prior = "paper", noise_sd = 1),
    softmax = softmax_regression(y ~ ., data, prior = "paper"),
    mixture = gaussian_mixture(data, components = 5)
  )
}

# --- experiments ---------------------------------------------------------------------------
run_accuracy <- function() {
  full <- list()
  for (model in models_run) {
    data <- data_for(model, max_n)
    for (preset in presets) for (seed in seeds) {
      run_cell(cell_file("accuracy", model, "SGAIS", preset, sprintf("n%g", max_n), seed), function() {
        fit <- run_method("SGAIS", build_model(model, data), preset, seed)
        list(cell = cell_row(fit), trajectory = trajectory_of(fit, grid))
      })
    }
  }
  # Reference methods: small N first, so a partial run covers every model at the small sizes.
  for (n in grid) for (model in models_run) {
    m <- build_model(model, data_for(model, max_n)[seq_len(n), , drop = FALSE])
    for (preset in presets) for (seed in seeds) for (method in c("NS", "AIS")) {
      previous <- previous_cell(model, method, preset, seed, n)
      run_cell(cell_file("accuracy", model, method, preset, sprintf("n%g", n), seed),
               function() run_capped(method, m, preset, seed, caps[[method]], previous))
    }
  }
}

# The cached run of a method at the largest N below `n` (from this or an earlier invocation),
# which predicts the cost at `n`.
previous_cell <- function(model, method, preset, seed, n) {
  files <- list.files(cache, full.names = TRUE, pattern = sprintf(
    "^accuracy-%s-%s-%s-n[0-9.e+]+-%d\\.rds$", model, method, preset, seed))
  if (!length(files)) return(NULL)
  cells <- lapply(files, function(f) readRDS(f)$cell)
  ns <- vapply(cells, function(x) x$n, numeric(1))
  if (!any(ns < n)) return(NULL)
  cells[[which.max(ifelse(ns < n, ns, -Inf))]]
}

run_shift <- function() {
  data <- simulate_shifting_mixture(seed = 1)[, c("y1", "y2")]
  shuffled <- data[with_seed(1, sample.int(nrow(data))), ]
  for (preset in presets) for (k in c(3, 5, 7)) for (order in c("in order", "shuffled")) {
    d <- if (order == "in order") data else shuffled
    run_cell(cell_file("shift", preset, paste0("k", k), sub(" ", "_", order)), function() {
      fit <- run_method("SGAIS", gaussian_mixture(d, components = k), preset, 1)
      list(cell = cell_row(fit), trajectory = trajectory_of(fit))
    })
  }
}
# A permutation from a seed, without touching the session's random stream.
with_seed <- function(seed, expr) {
  old <- if (exists(".Random.seed", globalenv())) get(".Random.seed", globalenv())
  on.exit(if (is.null(old)) rm(".Random.seed", envir = globalenv()) else
    assign(".Random.seed", old, globalenv()))
  set.seed(seed)
  expr
}

run_a1 <- function() {
  data <- simulate_gaussian_mixture(1000, components = 3, dim = 1, seed = data_seed)
  for (preset in presets) for (n in seq(20, 1000, by = 20)) {
    m <- gaussian_mixture(data[seq_len(n), , drop = FALSE], components = 3)
    for (method in c("NS", "AIS")) for (seed in 1:5) {
      run_cell(cell_file("a1", method, preset, sprintf("n%g", n), seed),
               function() list(cell = cell_row(run_method(method, m, preset, seed))))
    }
  }
}

# One setting varied at a time around the paper's (M = 10, ESS 5, 20 steps, lr 0.1, batch 500).
# The paper's smallest target ESS, 1 (no annealing), is outside what sgais_control() accepts
# (target_ess > 1); 1.1 anneals only when the weights nearly collapse.
sensitivity_grid <- rbind(
  data.frame(parameter = "particles", particles = c(5, 10, 20, 40), target_ess = c(2.5, 5, 10, 20),
             sghmc_steps = 20, learning_rate = 0.1, batch_size = 500),
  data.frame(parameter = "target_ess", particles = 10, target_ess = c(1.1, 2, 5, 8),
             sghmc_steps = 20, learning_rate = 0.1, batch_size = 500),
  data.frame(parameter = "sghmc_steps", particles = 10, target_ess = 5,
             sghmc_steps = c(5, 10, 20, 40), learning_rate = 0.1, batch_size = 500),
  data.frame(parameter = "learning_rate", particles = 10, target_ess = 5, sghmc_steps = 20,
             learning_rate = c(0.01, 0.03, 0.1, 0.3), batch_size = 500),
  data.frame(parameter = "learning_rate_x_steps", particles = 10, target_ess = 5,
             sghmc_steps = c(40, 20, 10, 4, 2), learning_rate = c(0.05, 0.1, 0.2, 0.5, 1),
             batch_size = 500),
  data.frame(parameter = "batch_size", particles = 10, target_ess = 5, sghmc_steps = 20,
             learning_rate = 0.1, batch_size = c(100, 250, 500, 1000))
)

run_sensitivity <- function() {
  m <- build_model("mixture", data_for("mixture", sens_n))
  # The reference: the package's default SGAIS (within 0.6 nats of Stan + bridge sampling on
  # every mixture of inst/validation; robust AIS agrees with it to 0.6 nats at N = 2,000 here).
  # Robust nested sampling would be the independent check, but costs over 10 minutes a run here.
  for (seed in sens_seeds) {
    run_cell(cell_file("sensitivity", "reference-robust", sprintf("n%g", sens_n), seed),
             function() list(cell = cell_row(run_method("SGAIS", m, "robust", seed))))
  }
  for (i in seq_len(nrow(sensitivity_grid))) for (seed in sens_seeds) {
    g <- sensitivity_grid[i, ]
    key <- sprintf("M%g-ess%g-K%g-lr%g-b%g", g$particles, g$target_ess, g$sghmc_steps,
                   g$learning_rate, g$batch_size)
    run_cell(cell_file("sensitivity", key, sprintf("n%g", sens_n), seed), function() {
      fit <- sgais(m, control = sgais_control("paper", particles = g$particles,
                                              target_ess = g$target_ess,
                                              sghmc_steps = g$sghmc_steps,
                                              learning_rate = g$learning_rate,
                                              batch_size = g$batch_size),
                   seed = seed, progress = FALSE)
      list(cell = cell_row(fit), trajectory = trajectory_of(fit))
    })
  }
}

# --- collect -------------------------------------------------------------------------------
read_cells <- function(experiment) {
  files <- list.files(cache, pattern = paste0("^", experiment, "-.*\\.rds$"), full.names = TRUE)
  lapply(stats::setNames(files, sub("\\.rds$", "", basename(files))), readRDS)
}
keys <- function(name, fields) {
  parts <- strsplit(name, "-", fixed = TRUE)[[1]][-1]
  stats::setNames(as.list(parts[seq_along(fields)]), fields)
}
bind <- function(x) do.call(rbind, x)

collect <- function(out) {
  dir.create(out, showWarnings = FALSE, recursive = TRUE)
  written <- character()
  write <- function(df, name) {
    if (is.null(df) || !nrow(df)) return()
    rownames(df) <- NULL
    f <- file.path(out, name)
    utils::write.csv(df, f, row.names = FALSE)
    written <<- c(written, f)
  }

  cells <- read_cells("accuracy")
  acc <- bind(Map(function(name, v) {
    k <- keys(name, c("model", "method", "preset", "n", "seed"))
    rows <- if (k$method == "SGAIS") {
      tr <- v$trajectory
      data.frame(n = tr$n, log_evidence = tr$log_evidence, log_evidence_se = tr$log_evidence_se,
                 seconds = tr$seconds, gradient_evaluations = tr$gradient_evaluations,
                 status = v$cell$status)
    } else {
      v$cell[, c("n", "log_evidence", "log_evidence_se", "seconds", "gradient_evaluations",
                 "status")]
    }
    cbind(model = k$model, method = k$method, preset = k$preset, seed = as.integer(k$seed),
          run_n = v$cell$n, rows, finished = v$cell$finished)
  }, names(cells), cells))
  if (!is.null(acc)) {
    # The exact evidence of linear regression along every N (the same data as every run).
    acc$exact <- NA_real_
    lin <- acc$model == "linear"
    if (any(lin)) {
      nmax <- max(acc$n[lin])
      z <- exact_log_evidence(linear_regression(y ~ ., data_for("linear", nmax), prior = "paper", noise_sd = 1),
                              n = sort(unique(acc$n[lin])))
      acc$exact[lin] <- z[match(acc$n[lin], sort(unique(acc$n[lin])))]
    }
  }
  write(acc, "paper-accuracy.csv")

  cells <- read_cells("shift")
  write(bind(Map(function(name, v) {
    k <- keys(name, c("preset", "k", "order"))
    cbind(preset = k$preset, components = as.integer(sub("k", "", k$k)),
          order = sub("_", " ", k$order), v$trajectory[, c("n", "log_evidence",
                                                           "annealing_steps", "seconds")])
  }, names(cells), cells)), "paper-shift.csv")

  cells <- read_cells("a1")
  write(bind(Map(function(name, v) {
    k <- keys(name, c("method", "preset", "n", "seed"))
    cbind(method = k$method, preset = k$preset, seed = as.integer(k$seed),
          v$cell[, c("n", "log_evidence", "seconds")])
  }, names(cells), cells)), "paper-a1.csv")

  cells <- read_cells("sensitivity")
  sens <- bind(Map(function(name, v) {
    if (grepl("reference-robust", name)) {
      seed <- as.integer(sub(".*-", "", name))
      return(cbind(parameter = "reference (robust SGAIS)", particles = NA, target_ess = NA,
                   sghmc_steps = NA, learning_rate = NA, batch_size = NA, seed = seed,
                   v$cell[, c("n", "log_evidence", "seconds")], annealing_steps = NA))
    }
    p <- regmatches(name, regexec(
      "M([0-9.e+]+)-ess([0-9.e+]+)-K([0-9.e+]+)-lr([0-9.e+-]+)-b([0-9.e+]+)-n[0-9.e+]+-([0-9]+)$",
      name))[[1]]
    g <- sensitivity_grid[sensitivity_grid$particles == as.numeric(p[2]) &
                            sensitivity_grid$target_ess == as.numeric(p[3]) &
                            sensitivity_grid$sghmc_steps == as.numeric(p[4]) &
                            sensitivity_grid$learning_rate == as.numeric(p[5]) &
                            sensitivity_grid$batch_size == as.numeric(p[6]), ]
    tr <- v$trajectory
    # The paper's setting appears under every parameter it belongs to.
    bind(lapply(seq_len(nrow(g)), function(j) {
      data.frame(g[rep(j, nrow(tr)), ], seed = as.integer(p[7]),
                 tr[, c("n", "log_evidence", "seconds", "annealing_steps")], row.names = NULL)
    }))
  }, names(cells), cells))
  write(sens, "paper-sensitivity.csv")

  cpu <- tryCatch(sub(".*: ", "", grep("^model name", readLines("/proc/cpuinfo"), value = TRUE)[1]),
                  error = function(e) NA_character_)
  commit <- if (opts$commit != "auto") opts$commit else
    tryCatch(system("git rev-parse --short HEAD", intern = TRUE, ignore.stderr = TRUE),
             error = function(e) NA_character_, warning = function(w) NA_character_)
  write(data.frame(
    # The caps differ between invocations; each capped or skipped run's status names its own.
    key = c("collected", "machine", "cores", "r_version", "sgais_version", "sgais_commit",
            "data_seed"),
    value = c(format(Sys.time(), "%Y-%m-%d %H:%M %Z"), cpu %||% NA, parallel::detectCores(),
              R.version.string, as.character(utils::packageVersion("sgais")),
              if (length(commit)) commit else NA, data_seed)
  ), "paper-info.csv")
  message("Wrote ", paste(written, collapse = ", "))
}

# --- main ----------------------------------------------------------------------------------
if (!collect_only) {
  message(sprintf("Caching cells in %s; experiments: %s", normalizePath(cache, mustWork = FALSE),
                  paste(experiments, collapse = ", ")))
  if ("a1" %in% experiments) run_a1()
  if ("shift" %in% experiments) run_shift()
  if ("sensitivity" %in% experiments) run_sensitivity()
  if ("accuracy" %in% experiments) run_accuracy()
}
collect(opts$out)
