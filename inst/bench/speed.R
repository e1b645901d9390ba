# Speed of the C core, before and after a change, side by side in one run (issue 12): each
# measurement runs in a fresh R process, alternating between the two builds, and the table
# reports medians over the repetitions and the after/before ratios.
#
#   git worktree add /tmp/before <revision> && R CMD INSTALL -l /tmp/before-lib /tmp/before
#   R CMD INSTALL -l /tmp/after-lib .
#   Rscript inst/bench/speed.R --before=/tmp/before-lib --after=/tmp/after-lib [--reps=3]
#       [--parts=paper,robust,chunks,models,glms,threads,interrupts,accuracy]
#
# Parts (CPU seconds of the sampler call alone, user + system, one thread unless said):
#   paper     SGAIS, sgais_control("paper"), linear regression, N = 10^6: CPU and ns per
#             per-observation gradient evaluation;
#   robust    the same with the default (robust) preset, and its ratio to the paper preset;
#   chunks    the cost per chunk at n ~ 10^6 over that at n ~ 10^4: seconds per gradient
#             evaluation of the chunks with n in [5,000; 20,000] and in [900,000; 10^6], from the
#             paper run's trace;
#   models    softmax regression (10 covariates, 4 classes: 44 parameters) and a K = 5 mixture in
#             2-D at N = 10^5, paper preset;
#   glms      SGAIS (default preset) on logistic, Poisson (resampling at every step) and robust
#             regression with 5 covariates at N = 10^5;
#   threads   the after build only: wall seconds with 1 and 2 threads of AIS (paper preset,
#             N = 10^5) and nested sampling (25 live points, N = 2 x 10^5) (full-data passes
#             split over observations) and SGAIS (both presets, N = 10^6; particles on threads),
#             and whether the estimates are bit-identical;
#   interrupts  the after build, 1 and 2 threads: seconds from a SIGINT to the interrupt
#             reaching R in sgais(sghmc_steps = 1e6) and ais(particles = 1000) (Unix only);
#   accuracy  SGAIS paper preset, linear regression N = 10^5, seeds 1-5: log Z - exact, before
#             and after.
# Say how busy the machine was when you quote the figures (the load average is printed).
args <- commandArgs(trailingOnly = TRUE)
opt <- function(name, default) {
  hit <- grep(sprintf("^--%s=", name), args, value = TRUE)
  if (length(hit)) sub("^[^=]*=", "", hit[1]) else default
}

# ---------------------------------------------------------------- one measurement (a worker)
if (nzchar(opt("worker", ""))) {
  suppressPackageStartupMessages(library(sgais))
  task <- opt("worker", "")
  seed <- as.integer(opt("seed", "1"))
  threads <- as.integer(opt("threads", "1"))
  if (exists("sgais_threads", asNamespace("sgais"))) sgais::sgais_threads(threads)
  cpu <- function(expr) {
    t <- system.time(value <- expr)
    list(value = value, cpu = t[["user.self"]] + t[["sys.self"]], wall = t[["elapsed"]])
  }
  quiet <- function(expr) suppressWarnings(expr)
  out <- switch(task,
    paper = , robust = {
      m <- linear_regression(y ~ ., simulate_linear_regression(1e6, seed = 1), prior = "paper", noise_sd = 1)
      control <- if (task == "paper") sgais_control("paper") else sgais_control()
      r <- cpu(quiet(sgais(m, control = control, seed = seed, progress = FALSE)))
      tr <- r$value$trajectory
      per_grad <- function(lo, hi) {
        k <- tr$n >= lo & tr$n <= hi
        sum(tr$chunk_seconds[k]) / sum(tr$chunk_gradient_evaluations[k])
      }
      list(cpu = r$cpu, wall = r$wall, log_z = log_evidence(r$value),
           gradients = r$value$gradient_evaluations,
           chunk_small = per_grad(5e3, 2e4), chunk_large = per_grad(9e5, 1e6))
    },
    softmax = {
      m <- softmax_regression(y ~ ., simulate_softmax_regression(1e5, dim = 10, classes = 4, seed = 1), prior = "paper")
      r <- cpu(quiet(sgais(m, control = sgais_control("paper"), seed = seed, progress = FALSE)))
      list(cpu = r$cpu, wall = r$wall, log_z = log_evidence(r$value),
           gradients = r$value$gradient_evaluations)
    },
    mixture = {
      m <- gaussian_mixture(simulate_gaussian_mixture(1e5, components = 5, dim = 2, seed = 1),
                            components = 5)
      r <- cpu(quiet(sgais(m, control = sgais_control("paper"), seed = seed, progress = FALSE)))
      list(cpu = r$cpu, wall = r$wall, log_z = log_evidence(r$value),
           gradients = r$value$gradient_evaluations)
    },
    ais = , ns = , sgais_threads = , sgais_threads_paper = {
      n <- switch(task, ais = 1e5, ns = 2e5, 1e6)
      m <- linear_regression(y ~ ., simulate_linear_regression(n, seed = 1), prior = "paper", noise_sd = 1)
      r <- cpu(quiet(switch(task,
        ais = ais(m, control = ais_control("paper"), seed = seed, progress = FALSE),
        ns = nested_sampling(m, live_points = 25, seed = seed, progress = FALSE),
        sgais_threads = sgais(m, seed = seed, progress = FALSE),
        sgais_threads_paper = sgais(m, control = sgais_control("paper"), seed = seed,
                                    progress = FALSE))))
      list(cpu = r$cpu, wall = r$wall, log_z = log_evidence(r$value))
    },
    logistic = , poisson = , robust_regression = {
      # 5 standard normal covariates and an intercept, N = 10^5 (as inst/bench/glm.R)
      set.seed(1)
      n <- 1e5
      x <- matrix(stats::rnorm(5 * n), n, 5, dimnames = list(NULL, paste0("x", 1:5)))
      eta <- drop(0.3 + x %*% c(0.5, -0.4, 0.3, -0.2, 0.1))
      d <- data.frame(x, y = switch(task,
        logistic = stats::rbinom(n, 1, stats::plogis(eta)),
        poisson = stats::rpois(n, exp(eta)),
        robust_regression = eta + stats::rt(n, df = 4)))
      m <- switch(task, logistic = logistic_regression(y ~ ., d, prior = "paper"),
                  poisson = poisson_regression(y ~ ., d, prior = "paper"), robust_regression = robust_regression(y ~ ., d, prior = "paper"))
      # Poisson with resampling at every step: the default rule can stall (?poisson_regression)
      r <- cpu(quiet(if (task == "poisson") sgais(m, resample = TRUE, seed = seed, progress = FALSE)
                     else sgais(m, seed = seed, progress = FALSE)))
      list(cpu = r$cpu, wall = r$wall, log_z = log_evidence(r$value),
           gradients = r$value$gradient_evaluations)
    },
    interrupt_sgais = , interrupt_ais = {
      # a run far longer than the wait before the driver's SIGINT: when did the interrupt arrive?
      m <- linear_regression(y ~ ., simulate_linear_regression(if (task == "interrupt_ais") 1e5 else 2e4,
                                                                seed = 1), prior = "paper", noise_sd = 1)
      writeLines("ready", paste0(opt("out", ""), ".ready"))
      caught <- tryCatch({
        if (task == "interrupt_ais") ais(m, particles = 1000, seed = seed, progress = FALSE)
        else sgais(m, sghmc_steps = 1e6, min_sghmc_steps = 1e6, seed = seed, progress = FALSE)
        NA_real_
      }, interrupt = function(e) as.numeric(Sys.time()))
      list(caught = caught)
    },
    accuracy = {
      m <- linear_regression(y ~ ., simulate_linear_regression(1e5, seed = 1), prior = "paper", noise_sd = 1)
      r <- quiet(sgais(m, control = sgais_control("paper"), seed = seed, progress = FALSE))
      list(error = log_evidence(r) - exact_log_evidence(m))
    },
    stop("unknown task ", task)
  )
  saveRDS(out, opt("out", ""))
  quit(save = "no")
}

# ---------------------------------------------------------------- the driver
before <- opt("before", "")
after <- opt("after", "")
if (!nzchar(after)) stop("give --after=<library with the build to measure>")
reps <- as.integer(opt("reps", "3"))
parts <- strsplit(opt("parts", "paper,robust,chunks,models,glms,threads,interrupts,accuracy"), ",")[[1]]
script <- normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE)[1]))
rscript <- file.path(R.home("bin"), "Rscript")

run <- function(lib, task, seed = 1, threads = 1) {
  out <- tempfile(fileext = ".rds")
  env <- c(sprintf("R_LIBS=%s", lib), sprintf("SGAIS_NUM_THREADS=%d", threads))
  status <- system2(rscript, c(shQuote(script), sprintf("--worker=%s", task),
                               sprintf("--seed=%d", seed), sprintf("--threads=%d", threads),
                               sprintf("--out=%s", out)), env = env, stdout = FALSE)
  if (status != 0) stop(sprintf("worker %s failed (library %s)", task, lib))
  readRDS(out)
}
# reps runs of each build, alternating, so that both see the same background load
side_by_side <- function(task) {
  res <- list(before = list(), after = list())
  for (r in seq_len(reps)) {
    if (nzchar(before)) res$before[[r]] <- run(before, task)
    res$after[[r]] <- run(after, task)
  }
  res
}
med <- function(runs, field) stats::median(vapply(runs, `[[`, numeric(1), field))
row <- function(what, b, a, unit = "s") {
  cat(sprintf("%-52s %12s %12s %8s\n", what,
              if (is.na(b)) "" else formatC(b, digits = 4, format = "g"),
              formatC(a, digits = 4, format = "g"),
              if (is.na(b)) "" else sprintf("%.2fx", b / a)))
}

cat(sprintf("load average before the run: %s\n",
            paste(readLines("/proc/loadavg", warn = FALSE), collapse = " ")))
cat(sprintf("before: %s\nafter:  %s\nrepetitions: %d (medians)\n\n", before, after, reps))
cat(sprintf("%-52s %12s %12s %8s\n", "", "before", "after", "speed-up"))
if (any(c("paper", "chunks", "robust") %in% parts)) {
  paper <- side_by_side("paper")
  b <- if (nzchar(before)) paper$before else NULL
  cpu_b <- if (length(b)) med(b, "cpu") else NA
  row("SGAIS paper, linear N = 1e6: CPU seconds", cpu_b, med(paper$after, "cpu"))
  row("  ns per gradient evaluation",
      if (length(b)) 1e9 * cpu_b / med(b, "gradients") else NA,
      1e9 * med(paper$after, "cpu") / med(paper$after, "gradients"))
  if ("chunks" %in% parts) {
    ratio <- function(runs) med(runs, "chunk_large") / med(runs, "chunk_small")
    cat(sprintf("%-52s %12s %12s\n", "  cost per gradient, chunks at 1e6 / at 1e4",
                if (length(b)) sprintf("%.3f", ratio(b)) else "", sprintf("%.3f", ratio(paper$after))))
  }
  if ("robust" %in% parts) {
    robust <- side_by_side("robust")
    rb <- if (nzchar(before)) med(robust$before, "cpu") else NA
    row("SGAIS robust (default), linear N = 1e6: CPU seconds", rb, med(robust$after, "cpu"))
    cat(sprintf("%-52s %12s %12s\n", "  robust / paper CPU",
                if (length(b)) sprintf("%.2f", rb / cpu_b) else "",
                sprintf("%.2f", med(robust$after, "cpu") / med(paper$after, "cpu"))))
  }
}
if ("models" %in% parts) {
  for (task in c("softmax", "mixture")) {
    res <- side_by_side(task)
    row(sprintf("SGAIS paper, %s N = 1e5: CPU seconds", task),
        if (nzchar(before)) med(res$before, "cpu") else NA, med(res$after, "cpu"))
  }
}
if ("glms" %in% parts) {
  for (task in c("logistic", "poisson", "robust_regression")) {
    res <- side_by_side(task)
    row(sprintf("SGAIS robust, %s N = 1e5: CPU seconds", task),
        if (nzchar(before)) med(res$before, "cpu") else NA, med(res$after, "cpu"))
  }
}
if ("threads" %in% parts) {
  cat(sprintf("\n%-52s %12s %12s %8s %s\n", "after build, wall seconds", "1 thread", "2 threads",
              "speed-up", "identical"))
  for (task in c("ais", "ns", "sgais_threads", "sgais_threads_paper")) {
    one <- two <- list()
    for (r in seq_len(reps)) {
      one[[r]] <- run(after, task, threads = 1)
      two[[r]] <- run(after, task, threads = 2)
    }
    same <- all(vapply(seq_len(reps), function(r) identical(one[[r]]$log_z, two[[r]]$log_z), NA))
    label <- c(ais = "AIS paper, linear N = 1e5",
               ns = "nested sampling (25 live points), linear N = 2e5",
               sgais_threads = "SGAIS robust, linear N = 1e6",
               sgais_threads_paper = "SGAIS paper, linear N = 1e6")[[task]]
    cat(sprintf("%-52s %12.3g %12.3g %7.2fx %s\n", label, med(one, "wall"), med(two, "wall"),
                med(one, "wall") / med(two, "wall"), same))
  }
}
if ("interrupts" %in% parts) {
  # the after build, 1 and 2 threads: seconds from SIGINT to the interrupt reaching R code, in
  # sgais(sghmc_steps = 1e6) (one particle's move lasts minutes) and ais(particles = 1000)
  cat(sprintf("\n%-52s %12s %12s\n", "after build, seconds from SIGINT to the interrupt",
              "1 thread", "2 threads"))
  for (task in c("interrupt_sgais", "interrupt_ais")) {
    lag <- vapply(1:2, function(threads) {
      out <- tempfile(fileext = ".rds")
      cmd <- sprintf("R_LIBS=%s SGAIS_NUM_THREADS=%d %s %s --worker=%s --out=%s >/dev/null 2>&1 & echo $!",
                     shQuote(after), threads, shQuote(rscript), shQuote(script), task, shQuote(out))
      pid <- as.integer(system(cmd, intern = TRUE))
      while (!file.exists(paste0(out, ".ready"))) Sys.sleep(0.05)
      Sys.sleep(3) # well into the run
      sent <- as.numeric(Sys.time())
      tools::pskill(pid, tools::SIGINT)
      while (!file.exists(out)) Sys.sleep(0.05)
      readRDS(out)$caught - sent
    }, numeric(1))
    cat(sprintf("%-52s %12.3f %12.3f\n", c(interrupt_sgais = "sgais(sghmc_steps = 1e6), linear N = 2e4",
                                            interrupt_ais = "ais(particles = 1000), linear N = 1e5")[[task]],
                lag[1], lag[2]))
  }
}
if ("accuracy" %in% parts) {
  cat("\nSGAIS paper, linear N = 1e5: log Z - exact, seeds 1-5\n")
  for (lib in c(before = before, after = after)) {
    if (!nzchar(lib)) next
    err <- vapply(1:5, function(s) run(lib, "accuracy", seed = s)$error, numeric(1))
    cat(sprintf("  %-8s %s   mean %.2f sd %.2f\n", if (identical(lib, before)) "before" else "after",
                paste(sprintf("%.2f", err), collapse = " "), mean(err), stats::sd(err)))
  }
}
cat(sprintf("\nload average after the run: %s\n",
            paste(readLines("/proc/loadavg", warn = FALSE), collapse = " ")))
