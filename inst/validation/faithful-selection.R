# Issue 42's model-selection target: the number of components of a Gaussian mixture on
# `faithful`, raw and standardised, K = 1..4 with 4 replicates each (sgais(..., replicates = 4)
# at the defaults, seed 1), as a new user would run it. Prints, per data set and K, the log
# evidence, its SE, the reference of references.csv where there is one (Stan + bridge sampling,
# or an SMC over allocations), the error and the CPU seconds (user + system, all threads); then
# each data set's chosen K and total CPU time. CPU time is what the target counts (30 s per data
# set): run it on an otherwise idle machine.
#   Rscript inst/validation/faithful-selection.R [--components=1,2,3,4] [--replicates=4]
#     [--seeds=1] [--data=raw,standardised]
# With several seeds, each seed's fits choose a K on their own (one line per data set and seed).
suppressMessages(library(sgais))
here <- local({
  file <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(file) == 1L) dirname(normalizePath(file)) else file.path("inst", "validation")
})
opt <- function(name, default) {
  hit <- grep(sprintf("^--%s=", name), commandArgs(TRUE), value = TRUE)
  if (length(hit)) sub(sprintf("^--%s=", name), "", hit[1]) else default
}
components <- as.integer(strsplit(opt("components", "1,2,3,4"), ",")[[1]])
replicates <- as.integer(opt("replicates", "4"))
seeds <- as.integer(strsplit(opt("seeds", "1"), ",")[[1]])
which_data <- strsplit(opt("data", "raw,standardised"), ",")[[1]]
refs <- utils::read.csv(file.path(here, "references.csv"), stringsAsFactors = FALSE)
reference <- function(case) {
  r <- refs$reference[refs$case == case]
  if (length(r) == 1L) r else NA_real_
}

cat(sprintf("sgais %s, mixture selection on faithful, %s\n\n", utils::packageVersion("sgais"),
            format(Sys.time(), "%F %H:%M")))
data_sets <- list(
  raw = list(y = as.matrix(datasets::faithful), case = "faithful_raw_mix_k%d"),
  standardised = list(y = scale(datasets::faithful), case = "faithful_mix_k%d")
)
data_sets <- data_sets[which_data]
rows <- list()
for (name in names(data_sets)) for (seed in seeds) {
  ds <- data_sets[[name]]
  for (K in components) {
    t0 <- proc.time()
    warned <- character(0)
    fit <- withCallingHandlers(
      sgais(gaussian_mixture(ds$y, components = K), replicates = replicates, seed = seed,
            progress = FALSE),
      warning = function(w) {
        warned <<- c(warned, class(w)[1])
        invokeRestart("muffleWarning")
      })
    t1 <- proc.time() - t0
    ref <- reference(sprintf(ds$case, K))
    rows[[length(rows) + 1L]] <- data.frame(
      data = name, seed = seed, K = K, log_evidence = fit$log_evidence, se = fit$log_evidence_se,
      reference = ref, error = fit$log_evidence - ref,
      cpu = t1[["user.self"]] + t1[["sys.self"]] + t1[["user.child"]] + t1[["sys.child"]],
      warnings = paste(unique(warned), collapse = " "))
  }
}
out <- do.call(rbind, rows)
print(format(out, digits = 6), row.names = FALSE)
cat("\n")
for (name in names(data_sets)) for (seed in seeds) {
  d <- out[out$data == name & out$seed == seed, ]
  by_ref <- if (all(!is.na(d$reference))) d$K[which.max(d$reference)] else NA
  cat(sprintf("%-12s seed %d: chosen K = %d (by the references: %s), margin over the next %.2f nats; CPU %.1f s\n",
              name, seed, d$K[which.max(d$log_evidence)], if (is.na(by_ref)) "n/a" else by_ref,
              diff(sort(d$log_evidence, decreasing = TRUE)[2:1]), sum(d$cpu)))
}
