# Online use of SGAIS (issue 9): the figures of its closing note, in one run.
#   1. cost per chunk at n ~ 10^4, 10^5 and 10^6 on the paper's linear regression, both presets
#      (median seconds and gradient evaluations per chunk over 21 chunks around each n, and the
#      mean including the control-variate re-anchors, which come once per doubling of n);
#      target: last / first <= 1.2; and detect_shifts() on these stationary streams;
#   2. a bounded reservoir at 10^6: the accuracy cost of reservoir_size = 10^4 and 10^5 against
#      Inf (3 seeds, both presets, the same data as part 1);
#   3. streams: sgais_stream() from a data frame in memory, a CSV file and an SQLite query,
#      seconds against plain sgais() on the same rows (target: the source adds <= 20%);
#   4. the shifting mixture (simulate_shifting_mixture(), 100,000 points, changes at 1,000 and
#      10,000): the final log evidence for K = 3, 5, 7 in order and shuffled (the evidence does
#      not depend on the order: a difference is the sampler's error), and detect_shifts() on
#      each run;
#   5. a stream of 10^6 rows made block by block (never in memory at once): peak memory, size of
#      the fit and seconds with reservoir_size 10^4 vs Inf, against sgais() on the rows in memory.
# Run with: Rscript inst/bench/online.R [part ...]   (parts 1-5; all by default; from an installed
# sgais; part 3 needs DBI and RSQLite). About 30 minutes on one core.
suppressPackageStartupMessages(library(sgais))
args <- commandArgs(trailingOnly = TRUE)
parts <- if (length(args)) as.integer(args) else 1:5
cat(sprintf("sgais %s, %s, single-threaded\n", utils::packageVersion("sgais"), R.version.string))
quiet <- function(code) withCallingHandlers(code, warning = function(w) invokeRestart("muffleWarning"))

if (any(c(1, 2, 5) %in% parts)) {
  data <- simulate_linear_regression(1e6, seed = 2019)
  model <- linear_regression(y ~ ., data, prior = "paper", noise_sd = 1)
  exact <- exact_log_evidence(model)
  rm(data)
}

if (1 %in% parts) {
  cat("\n== 1. Cost per chunk on the paper's linear regression, N = 10^6 ==\n")
  for (preset in c("paper", "robust")) {
    invisible(gc(reset = TRUE))
    fit <- quiet(sgais(model, control = sgais_control(preset), seed = 1, progress = FALSE))
    tr <- fit$trajectory
    per_chunk <- data.frame(n = tr$n, seconds = diff(c(0, tr$seconds)),
                            gradients = diff(c(0, tr$gradient_evaluations)))
    at <- sapply(c(1e4, 1e5, 1e6), function(n) {
      i <- which.min(abs(tr$n - n))
      rows <- per_chunk[max(1, i - 20):i, ]
      c(n = tr$n[i], median_seconds = median(rows$seconds), median_gradients = median(rows$gradients),
        mean_gradients = mean(rows$gradients))
    })
    cat(sprintf("preset %-6s  error %.2f nats, %.1f s in all, %d chunks\n", preset,
                fit$log_evidence - exact, fit$seconds, nrow(tr)))
    for (j in seq_len(ncol(at))) {
      cat(sprintf("  n ~ %9s: %.2f ms and %.3g gradient evaluations per chunk (median; mean with re-anchors %.3g)\n",
                  format(at["n", j], big.mark = ","), 1000 * at["median_seconds", j],
                  at["median_gradients", j], at["mean_gradients", j]))
    }
    cat(sprintf("  last / first: seconds %.2f, gradients %.2f (target <= 1.2)\n",
                at["median_seconds", 3] / at["median_seconds", 1],
                at["median_gradients", 3] / at["median_gradients", 1]))
    sh <- detect_shifts(fit)
    cat(sprintf("  detect_shifts() on this stationary stream: %d flagged, largest score %.1f\n",
                nrow(as.data.frame(sh)), max(sh$scores$score, na.rm = TRUE)))
  }
}

if (2 %in% parts) {
  cat("\n== 2. A bounded reservoir, the paper's linear regression, N = 10^6 ==\n")
  cat(sprintf("exact log Z %.2f; error = estimate - exact, seeds 1-3\n", exact))
  for (preset in c("robust", "paper")) {
    for (size in c(Inf, 1e5, 1e4)) {
      runs <- lapply(1:3, function(seed) {
        quiet(sgais(model, control = sgais_control(preset, reservoir_size = size), seed = seed,
                    progress = FALSE))
      })
      err <- vapply(runs, function(f) f$log_evidence - exact, 0)
      cat(sprintf("  %-6s reservoir %-7s error %s (mean %+.2f, sd %.2f); %.1f s and %.3g gradient evaluations per run\n",
                  preset, format(size, scientific = FALSE, big.mark = ","),
                  paste(sprintf("%+.2f", err), collapse = " "), mean(err), sd(err),
                  mean(vapply(runs, `[[`, 0, "seconds")),
                  mean(vapply(runs, `[[`, 0, "gradient_evaluations"))))
    }
  }
  rm(model)
}

if (3 %in% parts) {
  cat("\n== 3. Streams: seconds for 200,000 rows in blocks of 20,000 ==\n")
  data <- simulate_linear_regression(2e5, seed = 7)
  model <- linear_regression(y ~ ., head(data), prior = "paper", noise_sd = 1)
  file <- tempfile(fileext = ".csv")
  utils::write.csv(data, file, row.names = FALSE)
  from_file <- utils::read.csv(file)  # the values as the file holds them
  db <- tempfile(fileext = ".sqlite")
  con <- DBI::dbConnect(RSQLite::SQLite(), db)
  DBI::dbWriteTable(con, "obs", from_file)
  # the faster of two runs of each (the first warms caches); `run` makes a fresh source
  time <- function(run) {
    best <- Inf
    for (i in 1:2) {
      t0 <- proc.time()[["elapsed"]]
      fit <- quiet(run())
      best <- min(best, proc.time()[["elapsed"]] - t0)
    }
    list(fit = fit, seconds = best)
  }
  query <- function() DBI::dbSendQuery(con, "SELECT * FROM obs")
  runs <- list(
    "sgais(), all rows" = time(function() sgais(linear_regression(y ~ ., from_file, prior = "paper", noise_sd = 1), seed = 1, progress = FALSE)),
    "data frame" = time(function() sgais_stream(model, from_file, block_size = 2e4, seed = 1, progress = FALSE)),
    "CSV file" = time(function() sgais_stream(model, file, block_size = 2e4, seed = 1, progress = FALSE)),
    # sgais_stream() clears the query's result when it has read it all
    "SQLite query" = time(function() sgais_stream(model, query(), block_size = 2e4, seed = 1, progress = FALSE))
  )
  DBI::dbDisconnect(con)
  unlink(c(file, db))
  base <- runs[["sgais(), all rows"]]
  for (name in names(runs)) {
    r <- runs[[name]]
    cat(sprintf("  %-18s %6.2f s (%.2fx sgais()), log Z %.4f%s\n", name, r$seconds,
                r$seconds / base$seconds, r$fit$log_evidence,
                if (identical(r$fit$log_evidence, base$fit$log_evidence)) ", identical" else ", DIFFERS"))
  }
  cat(sprintf("  overhead of the source over the in-memory stream: CSV %+.0f%%, SQLite %+.0f%% (target <= 20%%)\n",
              100 * (runs[["CSV file"]]$seconds / runs[["data frame"]]$seconds - 1),
              100 * (runs[["SQLite query"]]$seconds / runs[["data frame"]]$seconds - 1)))
}

if (4 %in% parts) {
  cat("\n== 4. The shifting mixture, 100,000 points: in order and shuffled ==\n")
  data <- simulate_shifting_mixture(seed = 1)[c("y1", "y2")]
  set.seed(99)
  shuffled <- data[sample(nrow(data)), ]
  for (k in c(3, 5, 7)) {
    ordered_fit <- quiet(sgais(gaussian_mixture(data, components = k), seed = 1, progress = FALSE))
    shuffled_fit <- quiet(sgais(gaussian_mixture(shuffled, components = k), seed = 1, progress = FALSE))
    cat(sprintf("K = %d: log Z in order %.1f (%.0f s), shuffled %.1f (%.0f s), difference %.1f nats\n",
                k, ordered_fit$log_evidence, ordered_fit$seconds, shuffled_fit$log_evidence,
                shuffled_fit$seconds, ordered_fit$log_evidence - shuffled_fit$log_evidence))
    for (which in c("in order", "shuffled")) {
      s <- detect_shifts(if (which == "in order") ordered_fit else shuffled_fit)
      sh <- as.data.frame(s)
      sc <- as.data.frame(s, which = "scores")
      cat(sprintf("  %-9s shifts at %s (scores %s); largest other score %.1f\n", which,
                  if (nrow(sh)) paste(format(sh$at, big.mark = ","), collapse = ", ") else "none",
                  if (nrow(sh)) paste(sprintf("%.1f", sh$score), collapse = ", ") else "-",
                  max(sc$score[!sc$flagged], na.rm = TRUE)))
    }
  }
}

if (5 %in% parts) {
  cat("\n== 5. A stream of 10^6 rows made block by block: memory and time ==\n")
  # the same 10^6 rows as simulate_linear_regression(1e6, seed = 2019), drawn block by block
  # from their own random stream, so the stream is never in memory at once
  rows_of <- function(total) {
    stream <- NULL
    theta <- NULL
    done <- 0
    function(n) {
      if (done >= total) return(NULL)
      n <- min(n, total - done)
      old <- get0(".Random.seed", globalenv(), inherits = FALSE)
      on.exit(if (is.null(old)) rm(".Random.seed", envir = globalenv())
              else assign(".Random.seed", old, globalenv()))
      if (is.null(stream)) {
        set.seed(2019)
        theta <<- stats::rnorm(6)
      } else {
        assign(".Random.seed", stream, globalenv())
      }
      draws <- matrix(stats::rnorm(n * 6), nrow = n, byrow = TRUE)
      stream <<- .Random.seed
      done <<- done + n
      x <- draws[, 1:5, drop = FALSE]
      colnames(x) <- paste0("x", 1:5)
      data.frame(x, y = theta[1] + drop(x %*% theta[-1]) + draws[, 6])
    }
  }
  spec <- linear_regression(y ~ ., simulate_linear_regression(10, seed = 1), prior = "paper", noise_sd = 1)
  for (size in c(Inf, 1e4)) {
    before <- sum(gc(reset = TRUE)[, 2L]) # in use before, Mb
    t0 <- proc.time()[["elapsed"]]
    fit <- quiet(sgais_stream(spec, rows_of(1e6), block_size = 1e4, reservoir_size = size,
                              seed = 1, progress = FALSE))
    seconds <- proc.time()[["elapsed"]] - t0
    peak <- sum(gc()[, 6L]) - before # "max used" (Mb) above what was in use before
    cat(sprintf("  stream of 10^6 rows in blocks of 10^4, robust, reservoir %-7s peak R heap %4.0f Mb above the start, fit %5.1f Mb, %.0f s, error %+.2f nats\n",
                format(size, scientific = FALSE, big.mark = ","), peak,
                as.numeric(utils::object.size(fit)) / 2^20, seconds, fit$log_evidence - exact))
  }
  # against sgais() on the same rows in memory
  data <- rows_of(1e6)(1e6)
  t0 <- proc.time()[["elapsed"]]
  fit <- quiet(sgais(linear_regression(y ~ ., data, prior = "paper", noise_sd = 1), seed = 1, progress = FALSE))
  cat(sprintf("  sgais() on the same 10^6 rows in memory: %.0f s, error %+.2f nats\n",
              proc.time()[["elapsed"]] - t0, fit$log_evidence - exact))
}
