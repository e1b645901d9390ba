# Issue 42: online_nested_sampling() at its defaults on the separated-cluster cases of
# mixture-clusters.R (the same data: 2,000 points, the reference of mixture-reference.R), one
# run per seed, with the trajectory: the final error against the reference, the predicted sd,
# the bound max(3, 3 sd), the seconds, where the run restarted, and each chunk's log Z, log
# predictive, iterations and seconds.
#   Rscript inst/validation/online-ns-clusters.R <case> <seed> [restart_every]
# with <case> one of stat_k2, stat_k4, stat_k6, stat_k8, stat_k10, appear_2_4_6_in_order,
# appear_2_4_6_shuffled; restart_every "NULL" (the default) or a number (Inf: no restarts).
suppressMessages(library(sgais))
here <- local({
  file <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(file) == 1L) dirname(normalizePath(file)) else file.path("inst", "validation")
})
source(file.path(here, "mixture-reference.R"))
args <- commandArgs(TRUE)
case <- args[1]
s <- as.integer(args[2])
every <- if (length(args) >= 3 && args[3] != "NULL") as.numeric(args[3]) else NULL
n <- 2000
d <- switch(case,
  stat_k2 = separated_clusters(n, 2, seed = 2),
  stat_k4 = separated_clusters(n, 4, seed = 4),
  stat_k6 = separated_clusters(n, 6, seed = 6),
  stat_k8 = separated_clusters(n, 8, seed = 8),
  stat_k10 = separated_clusters(n, 10, seed = 10),
  local({
    d <- separated_clusters(n, 6, phases = c(2, 4, 6), seed = 60)
    if (case == "appear_2_4_6_shuffled") {
      shuffled <- sgais:::with_seed(61, sample(nrow(d)))
      s2 <- d[shuffled, ]
      attr(s2, "component") <- attr(d, "component")[shuffled]
      d <- s2
    }
    d
  }))
K <- length(unique(attr(d, "component")))
model <- gaussian_mixture(d, components = K)
ref <- separated_mixture_log_evidence(model, attr(d, "component"))
t0 <- proc.time()[["elapsed"]]
fit <- suppressWarnings(online_nested_sampling(model, seed = s, progress = FALSE,
                                               restart_every = every))
secs <- proc.time()[["elapsed"]] - t0
sd <- fit$log_evidence_se
bound <- max(3, 3 * sd)
cat(sprintf(paste("%s online_ns seed %d: reference %.2f estimate %.2f error %+.2f pred.sd %.2f",
                  "bound %.1f seconds %.1f restarts at %s %s\n"),
            case, s, ref, fit$log_evidence, fit$log_evidence - ref, sd, bound, secs,
            paste(fit$trajectory$n[fit$trajectory$restarts > 0], collapse = ","),
            if (abs(fit$log_evidence - ref) <= bound) "pass" else "FAIL"))
tr <- fit$trajectory
tr$chunk_seconds <- diff(c(0, tr$seconds))
print(tr[c("n", "log_evidence", "log_predictive", "iterations", "restarts", "log_evidence_sd",
           "chunk_seconds")], digits = 6, row.names = FALSE)
