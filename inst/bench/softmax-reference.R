# An independent reference evidence for the paper's softmax regression (the data of
# inst/bench/paper-data.R, the same as seed-methods.R's): importance sampling with a multivariate
# t proposal (5 degrees of freedom) centred at the posterior mode with the inverse Hessian there as
# scale (softmax_reference() in tests/testthat/helper-glm.R). The posterior is log-concave and, at
# these sizes, close to Gaussian, so the draws keep a large ESS; the standard error is the delta
# method's. seed-methods.R measures softmax against AIS by default; pass these with --reference.
#
# Usage, from the package's root: Rscript inst/bench/softmax-reference.R [--n=1e4,1e5] [--draws=20000]
#
# Measured (seed 1, 20,000 draws, one core):
#   n = 10,000    log Z -6884.791   se 0.008   ESS 8,197    192 s
#   n = 100,000   log Z -67664.522  se 0.008   ESS 8,498    1,852 s
suppressPackageStartupMessages(library(sgais))
args <- commandArgs(trailingOnly = TRUE)
arg <- function(name, default) {
  hit <- grep(sprintf("^--%s=", name), args, value = TRUE)
  if (length(hit)) sub(sprintf("^--%s=", name), "", hit[length(hit)]) else default
}
sizes <- as.numeric(strsplit(arg("n", "1e4,1e5"), ",")[[1]])
draws <- as.numeric(arg("draws", "20000"))
stopifnot(!anyNA(sizes), !is.na(draws))
source("tests/testthat/helper-glm.R", local = TRUE)
source("inst/bench/paper-data.R", local = TRUE)
builders <- paper_builders(max(sizes), 1)
for (n in sizes) {
  started <- proc.time()[["elapsed"]]
  r <- softmax_reference(builders$softmax(n), draws = draws)
  cat(sprintf("softmax n = %g: log Z %.3f se %.3f ESS %.0f of %g (%.0f s)\n", n,
              r[["log_evidence"]], r[["se"]], r[["ess"]], draws,
              proc.time()[["elapsed"]] - started))
}
