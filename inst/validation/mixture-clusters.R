# Issue 42: the estimators on mixtures of well-separated 2-D clusters, against the reference of
# mixture-reference.R (checked here first against enumeration and exact_log_evidence()):
#   - stationary: K = 2, 4, 6, 8, 10 components and clusters, `n` rows in random order;
#   - an overfitted mixture: 4 clusters for K = 6 components, 3 x `n` rows in random order, so
#     that SGAIS's chunks past `exact_until` move while the data show fewer clusters than
#     components, and its restarts start from a reference of 4 clusters;
#   - a stream whose clusters appear over time: 2, then 4, then 6 clusters (K = 6), in order and
#     shuffled (the same rows), so that the paper's trust check (Section 7.2: the estimate on the
#     data in order agrees with the estimate on the data shuffled) can be read off too.
# Each estimator at its defaults, one run, seed 1, with a limit of `limit` seconds (a run stopped
# by it is reported as such): sgais(), ais(), nested_sampling() (ns), sir(), sequential_sgmcmc()
# (sequential) and importance_sampling() (is, from the reference distribution); online_ns
# (online_nested_sampling(), which takes 30 s to 1.6 h a case) on request. Prints one row per
# case and estimator: the reference, the estimate, its error, the run's predicted sd, the bound
# max(3, 3 x predicted sd) and the seconds; for SGAIS also audit_evidence() at the last
# observation (the same data shuffled): whether it warned, and the shuffled estimate.
#   Rscript inst/validation/mixture-clusters.R [--n=2000] [--limit=1800]
#     [--estimators=sgais,ais,ns,sir,sequential,is] [--cases=stat_k2,...] [--out=file.txt]
# At the defaults it overwrites mixture-clusters.txt with what it prints (about 2 hours: 40
# minutes for the 2,000-point cases, most of it the sequential estimator's, and the rest for the
# overfitted case, where nested sampling and the sequential estimator may reach the limit); a
# run of some cases or estimators writes only to --out.
suppressMessages(library(sgais))
source(file.path("inst", "validation", "suite.R"))
source(file.path(validation_dir, "mixture-reference.R"))
n <- as.integer(opt("n", "2000"))
limit <- as.numeric(opt("limit", "1800"))
which_estimators <- strsplit(opt("estimators", "sgais,ais,ns,sir,sequential,is"), ",")[[1]]
only <- opt("cases", "")
part <- any(grepl("^--(estimators|cases|n)=", commandArgs(TRUE)))
record_output(opt("out", if (part) "" else file.path(validation_dir, "mixture-clusters.txt")))

cat(sprintf("sgais %s, separated-cluster mixtures, %s\n\n", utils::packageVersion("sgais"),
            format(Sys.time(), "%F %H:%M")))
print(check_mixture_reference(), digits = 3, row.names = FALSE)

cases <- c(
  lapply(c(2, 4, 6, 8, 10), function(K) {
    list(id = sprintf("stat_k%d", K), K = K, data = separated_clusters(n, K, seed = K))
  }),
  list(list(id = "stat_k6_of4", K = 6, data = separated_clusters(3 * n, 4, seed = 60))),
  local({
    d <- separated_clusters(n, 6, phases = c(2, 4, 6), seed = 60)
    shuffled <- sgais:::with_seed(61, sample(nrow(d)))
    s <- d[shuffled, ]
    attr(s, "component") <- attr(d, "component")[shuffled]
    list(list(id = "appear_2_4_6_in_order", K = 6, data = d),
         list(id = "appear_2_4_6_shuffled", K = 6, data = s))
  })
)
if (nzchar(only)) cases <- Filter(function(k) k$id %in% strsplit(only, ",")[[1]], cases)

estimators <- list(sgais = sgais, ais = ais, ns = nested_sampling, sir = sir,
                   sequential = sequential_sgmcmc,
                   online_ns = online_nested_sampling, is = importance_sampling)[which_estimators]
# f(model) in a forked child, stopped after `limit` seconds (the C loops honour interrupts, but
# an elapsed-time limit set from R outlives the call it was set for)
run_limited <- function(f, model) {
  t0 <- proc.time()[["elapsed"]]
  job <- parallel::mcparallel(suppressWarnings(f(model, seed = 1, progress = FALSE)))
  res <- parallel::mccollect(job, wait = FALSE, timeout = limit)
  if (is.null(res)) {
    tools::pskill(job$pid)
    parallel::mccollect(job, wait = TRUE)
    fit <- simpleError(sprintf("stopped after %g s", limit))
  } else {
    fit <- res[[1]]
    if (inherits(fit, "try-error")) fit <- simpleError(as.character(fit))
  }
  list(fit = fit, seconds = proc.time()[["elapsed"]] - t0)
}

cat(sprintf("\n%-24s %5s %3s %-6s %12s %12s %10s %7s %6s %8s\n", "case", "n", "K", "method",
            "reference", "estimate", "error", "pred.sd", "bound", "seconds"))
rows <- list()
for (case in cases) {
  model <- gaussian_mixture(case$data, components = case$K)
  ref <- separated_mixture_log_evidence(model, attr(case$data, "component"))
  for (name in names(estimators)) {
    r <- run_limited(estimators[[name]], model)
    ok <- !inherits(r$fit, "error")
    est <- if (ok) r$fit[["log_evidence"]] else NA_real_
    sd <- if (ok) r$fit[["log_evidence_se"]] else NA_real_
    bound <- max(3, 3 * sd, na.rm = TRUE)
    cat(sprintf("%-24s %5d %3d %-6s %12.2f %12s %10s %7s %6.1f %8.1f %s\n", case$id, nrow(case$data),
                case$K, name, ref, if (ok) sprintf("%.2f", est) else "-",
                if (ok) sprintf("%+.2f", est - ref) else "-",
                if (ok) sprintf("%.2f", sd) else "-", bound, r$seconds,
                if (!ok) paste("stopped:", conditionMessage(r$fit)) else
                  if (abs(est - ref) <= bound) "pass" else "FAIL"))
    audit <- NA
    if (ok && name == "sgais") {
      a <- run_limited(function(model, seed, progress) {
        warned <- FALSE
        out <- withCallingHandlers(audit_evidence(r$fit, at = nrow(case$data), seed = seed,
                                                  progress = progress),
                                   sgais_warning_audit = function(w) warned <<- TRUE)
        out$warned <- warned
        out
      }, model)
      if (!inherits(a$fit, "error")) {
        audit <- a$fit$warned
        cat(sprintf("%-24s %5s %3s %-6s %12s %12.2f %10s %7.2f %6.1f %8.1f audit %s\n", "", "", "",
                    "audit", "", a$fit$shuffled, sprintf("%+.2f", a$fit$shuffled - ref),
                    a$fit$shuffled_se, a$fit$bound, a$seconds,
                    if (audit) "WARNED" else "agreed"))
      } else {
        cat(sprintf("%-24s audit stopped: %s\n", "", conditionMessage(a$fit)))
      }
    }
    rows[[length(rows) + 1L]] <- data.frame(case = case$id, n = nrow(case$data), K = case$K,
                                            method = name, reference = ref, estimate = est,
                                            predicted_sd = sd, seconds = r$seconds,
                                            audit_warned = audit)
  }
}
out <- do.call(rbind, rows)
off <- abs(out$estimate - out$reference) > 10 & out$method == "sgais"
cat(sprintf("audit: warned on %d of %d SGAIS runs more than 10 nats off, and on %d of %d within 10\n",
            sum(out$audit_warned[off], na.rm = TRUE), sum(off, na.rm = TRUE),
            sum(out$audit_warned[!off & out$method == "sgais"], na.rm = TRUE),
            sum(!off & out$method == "sgais", na.rm = TRUE)))
cat(sprintf("\n%d of %d runs within max(3, 3 predicted sd)\n",
            sum(abs(out$estimate - out$reference) <= pmax(3, 3 * out$predicted_sd, na.rm = TRUE),
                na.rm = TRUE), nrow(out)))
