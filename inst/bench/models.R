# SGAIS, nested sampling and AIS on the paper's softmax regression and Gaussian mixture
# (Cameron et al. 2019, Section 7.1.2-7.1.3, Appendix B.2-B.3), each with the paper's default
# settings (Section 6.1), side by side in one run: log Z / N, wall seconds, per-observation
# gradient evaluations, and the relative difference of SGAIS from NS (the paper at N = 10^6:
# 0.6% for softmax regression, 0.1% for the mixture) and from AIS.
#
# Usage (from the installed package):
#   Rscript -e 'source(system.file("bench", "models.R", package = "sgais"))'
#   Rscript inst/bench/models.R 1e4 1e5     # sizes on the command line (default 1e4 and 1e5)
# Set SGAIS_BENCH_MODELS=softmax or =mixture to run one model only, and SGAIS_BENCH_METHODS to a
# comma-separated subset of SGAIS,NS,AIS,reference to run only those methods (AIS at N = 10^5
# takes the longest: about ten minutes per model).
#
# For softmax regression the posterior is close to normal at these sizes, so an independent
# reference is cheap: importance sampling from a multivariate t (20 df) centred at the posterior
# mode with the inverse Hessian as scale (a Laplace-t proposal). Its ESS is printed; with most
# draws effective its log Z is accurate to well under a nat, and it measures each method's error.
# The mixture's posterior is multimodal, so it has no such reference here.
suppressPackageStartupMessages(library(sgais))
options(width = 200)

sizes <- as.numeric(commandArgs(trailingOnly = TRUE))
if (length(sizes) == 0 || anyNA(sizes)) sizes <- c(1e4, 1e5)
seed <- 1
which_models <- Sys.getenv("SGAIS_BENCH_MODELS", "softmax,mixture")
which_methods <- strsplit(Sys.getenv("SGAIS_BENCH_METHODS", "SGAIS,NS,AIS,reference"), ",")[[1]]

# The paper's data (inst/bench/paper-data.R): the largest set is simulated once, the smaller
# ones are its prefixes.
largest <- max(sizes)
script_dir <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
source(file.path(if (length(script_dir)) dirname(script_dir[1]) else
  system.file("bench", package = "sgais"), "paper-data.R"))
builders <- paper_builders(largest, seed)[c("softmax", "mixture")]
builders <- builders[intersect(names(builders), strsplit(which_models, ",")[[1]])]

methods <- list(
  SGAIS = function(model) sgais(model, seed = seed, progress = FALSE),
  NS = function(model) nested_sampling(model, seed = seed, progress = FALSE),
  AIS = function(model) ais(model, seed = seed, progress = FALSE),
  SGAIS_paper = function(model) sgais(model, control = sgais_control("paper"), seed = seed, progress = FALSE),
  NS_paper = function(model) nested_sampling(model, control = nested_control("paper"), seed = seed, progress = FALSE)
)
methods <- methods[intersect(names(methods), which_methods)]

# log Z by importance sampling from the Laplace-t proposal described above.
laplace_t_reference <- function(model, draws = 2000, df = 20) {
  started <- proc.time()[["elapsed"]]
  neg <- function(theta) {
    e <- sgais:::model_evaluate(model, theta)
    -(e$log_prior + e$log_lik)
  }
  neg_grad <- function(theta) {
    e <- sgais:::model_evaluate(model, theta)
    -(e$grad_log_prior + e$grad_log_lik)
  }
  mode <- stats::optim(numeric(model$dim), neg, neg_grad, method = "BFGS",
                       control = list(maxit = 10000, reltol = 1e-15))
  hessian <- stats::optimHess(mode$par, neg, neg_grad)
  r <- chol(solve(hessian)) # proposal scale = r'r
  d <- model$dim
  set.seed(seed)
  z <- matrix(stats::rnorm(draws * d), draws) * sqrt(df / stats::rchisq(draws, df))
  theta <- sweep(z %*% r, 2, mode$par, "+")
  log_t <- function(x) {
    q <- sum(backsolve(r, x - mode$par, transpose = TRUE)^2)
    lgamma((df + d) / 2) - lgamma(df / 2) - d / 2 * log(df * pi) - sum(log(diag(r))) -
      (df + d) / 2 * log1p(q / df)
  }
  logw <- apply(theta, 1, function(x) -neg(x) - log_t(x))
  m <- max(logw)
  list(log_evidence = m + log(mean(exp(logw - m))),
       ess = sum(exp(logw - m))^2 / sum(exp(2 * (logw - m))),
       seconds = proc.time()[["elapsed"]] - started)
}

rows <- list()
for (name in names(builders)) {
  for (n in sizes) {
    model <- builders[[name]](n)
    for (m in names(methods)) {
      fit <- methods[[m]](model)
      r <- data.frame(
        model = name, n = n, method = m, log_z = fit$log_evidence,
        log_z_per_obs = fit$log_evidence / n, seconds = fit$seconds,
        gradient_evals = fit$gradient_evaluations, likelihood_evals = fit$likelihood_evaluations
      )
      message(sprintf("%-8s n = %-7g %-6s log Z %.2f  (%.5f per obs)  %.1f s", name, n, m,
                      r$log_z, r$log_z_per_obs, r$seconds))
      rows[[length(rows) + 1L]] <- r
    }
    if (name == "softmax" && "reference" %in% which_methods) {
      ref <- laplace_t_reference(model)
      message(sprintf("%-8s n = %-7g IS-Laplace-t log Z %.2f  (ESS %.0f of 2000)  %.1f s", name, n,
                      ref$log_evidence, ref$ess, ref$seconds))
      rows[[length(rows) + 1L]] <- data.frame(
        model = name, n = n, method = "reference", log_z = ref$log_evidence,
        log_z_per_obs = ref$log_evidence / n, seconds = ref$seconds, gradient_evals = NA,
        likelihood_evals = NA
      )
    }
  }
}
table <- do.call(rbind, rows)

cat("\nSGAIS, nested sampling and AIS with the paper's settings (seed", seed, ")\n\n")
print(table, digits = 6, row.names = FALSE)

cat("\nSGAIS against the reference methods:\n")
cat("rel_diff_X = (log Z_SGAIS - log Z_X) / |log Z_X|; X_over_SGAIS = time ratio;\n")
cat("err_X = (log Z_X - log Z_reference) / |log Z_reference| (softmax only)\n\n")
cmp <- do.call(rbind, lapply(split(table, list(table$model, table$n), drop = TRUE), function(t) {
  get <- function(m, col) if (any(t$method == m)) t[[col]][t$method == m] else NA_real_
  s <- get("SGAIS", "log_z")
  ref <- if (any(t$method == "reference")) get("reference", "log_z") else NA_real_
  err <- function(m) (get(m, "log_z") - ref) / abs(ref)
  data.frame(
    model = t$model[1], n = t$n[1],
    rel_diff_NS = (s - get("NS", "log_z")) / abs(get("NS", "log_z")),
    rel_diff_AIS = (s - get("AIS", "log_z")) / abs(get("AIS", "log_z")),
    NS_over_SGAIS = get("NS", "seconds") / get("SGAIS", "seconds"),
    AIS_over_SGAIS = get("AIS", "seconds") / get("SGAIS", "seconds"),
    err_SGAIS = err("SGAIS"), err_NS = err("NS"), err_AIS = err("AIS")
  )
}))
print(cmp, digits = 4, row.names = FALSE)
