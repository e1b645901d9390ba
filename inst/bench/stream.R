# Cost against the length of the data and of a stream, side by side in one run: SGAIS on the
# paper's linear regression (5 covariates, known noise, prior "paper"), one thread, each fit in
# a fresh R process (so that its peak memory is its own).
#
#   Rscript inst/bench/stream.R [--quick] [--out=inst/bench/stream.txt]
#
# Prints, and writes to --out (overwritten):
#   chunks   seconds per chunk, and per gradient evaluation, of the chunks with n in
#            [10^4, 2 x 10^4] and of the last tenth of the chunks, from the in-memory fit of the
#            largest N at the default preset, and their ratio (flat cost: 1);
#   presets  the default (robust) preset against the paper preset at the smaller N: CPU seconds,
#            their ratio, and each log Z minus the exact one;
#   stream   sgais_stream() from a CSV file against sgais() on the same rows in memory (read by
#            data.table::fread() beforehand, not timed), default preset, at both N: CPU seconds
#            of the fit, their ratio, the estimates (the same to the last bit when the file is
#            parsed as in memory) and each process's peak resident memory.
# N is 10^6 and 10^7, or 10^5 and 4 x 10^5 with --quick (a few minutes). The machine is shared:
# read the ratios, not the seconds. The load average is printed.
args <- commandArgs(trailingOnly = TRUE)
source(file.path("inst", "validation", "suite.R")) # opt()

# ---------------------------------------------------------------- one fit (a worker process)
if (nzchar(opt("worker", ""))) {
  suppressPackageStartupMessages(library(sgais))
  sgais_threads(1)
  file <- opt("csv", "")
  preset <- opt("preset", "robust")
  control <- sgais_control(preset)
  quiet <- function(expr) suppressWarnings(expr)
  cpu <- function(expr) {
    t <- system.time(value <- expr)
    list(value = value, cpu = t[["user.self"]] + t[["sys.self"]], wall = t[["elapsed"]])
  }
  if (opt("worker", "") == "memory") {
    d <- as.data.frame(data.table::fread(file))
    model <- linear_regression(y ~ ., d, prior = "paper", noise_sd = 1)
    r <- cpu(quiet(sgais(model, control = control, seed = 1, progress = FALSE)))
  } else {
    spec <- linear_regression(y ~ ., utils::read.csv(file, nrows = 1000), prior = "paper",
                              noise_sd = 1)
    r <- cpu(quiet(sgais_stream(spec, file, control = control, seed = 1, progress = FALSE)))
  }
  fit <- r$value
  status <- readLines("/proc/self/status")
  peak <- as.numeric(gsub("\\D", "", grep("^VmHWM", status, value = TRUE))) / 1024
  tr <- as.data.frame(fit$trajectory)
  per_chunk <- function(k) c(mean(tr$chunk_seconds[k]),
                             sum(tr$chunk_seconds[k]) / sum(tr$chunk_gradient_evaluations[k]))
  early <- per_chunk(tr$n >= 1e4 & tr$n <= 2e4)
  late <- per_chunk(seq_len(nrow(tr)) > 0.9 * nrow(tr))
  exact <- exact_log_evidence(fit$model)
  saveRDS(list(cpu = r$cpu, wall = r$wall, log_z = fit$log_evidence, error = fit$log_evidence - exact,
               peak_mb = peak, early = early, late = late), opt("result", ""))
  quit(save = "no")
}

# ---------------------------------------------------------------- the driver
quick <- "--quick" %in% args
out <- opt("out", file.path("inst", "bench", "stream.txt"))
sizes <- if (quick) c(1e5, 4e5) else c(1e6, 1e7)
dir <- tempfile("stream-bench")
dir.create(dir)
on.exit(unlink(dir, recursive = TRUE))
rscript <- file.path(R.home("bin"), "Rscript")
this <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1])
run <- function(worker, file, preset = "robust") {
  result <- tempfile(tmpdir = dir, fileext = ".rds")
  status <- system2(rscript, c(this, sprintf("--worker=%s", worker), sprintf("--csv=%s", file),
                               sprintf("--preset=%s", preset), sprintf("--result=%s", result)))
  if (status != 0) stop(sprintf("the %s worker (%s) failed", worker, file))
  readRDS(result)
}
lines <- c(sprintf("sgais %s, data.table %s; %s; load average before: %s",
                   utils::packageVersion("sgais"), utils::packageVersion("data.table"),
                   if (quick) "--quick" else "full",
                   paste(readLines("/proc/loadavg"), collapse = "")))
say <- function(...) {
  line <- sprintf(...)
  cat(line, "\n", sep = "")
  lines <<- c(lines, line)
}
files <- vapply(sizes, function(n) {
  suppressPackageStartupMessages(library(sgais))
  file <- file.path(dir, sprintf("d%g.csv", n))
  data.table::fwrite(simulate_linear_regression(n, seed = 1), file)
  file
}, "")

small <- files[1]
paper <- run("memory", small, "paper")
robust <- run("memory", small)
streamed <- list(run("stream", small))
large <- run("memory", files[2])
streamed[[2]] <- run("stream", files[2])
memory <- list(robust, large)

say("")
say("chunks (default preset, in memory, N = %g): per chunk, s  per gradient evaluation, ns", sizes[2])
say("  n in [1e4, 2e4]     %8.4f  %6.2f", large$early[1], 1e9 * large$early[2])
say("  last tenth          %8.4f  %6.2f", large$late[1], 1e9 * large$late[2])
say("  ratio late/early    %8.2f  %6.2f", large$late[1] / large$early[1], large$late[2] / large$early[2])
say("")
say("presets (in memory, N = %g): CPU s, log Z - exact", sizes[1])
say("  paper               %8.1f  %+.3f", paper$cpu, paper$error)
say("  robust (default)    %8.1f  %+.3f", robust$cpu, robust$error)
say("  ratio robust/paper  %8.2f", robust$cpu / paper$cpu)
say("")
say("stream (default preset): CPU s streamed, in memory, ratio; log Z streamed - in memory; peak MB streamed, in memory")
for (i in seq_along(sizes)) {
  s <- streamed[[i]]
  m <- memory[[i]]
  say("  N = %-8g  %8.1f %8.1f  %5.2f   %+.3g   %7.0f %7.0f", sizes[i], s$cpu, m$cpu,
      s$cpu / m$cpu, s$log_z - m$log_z, s$peak_mb, m$peak_mb)
}
writeLines(lines, out)
