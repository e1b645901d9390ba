# Bayes factors on real data under the package's priors against BIC and BayesFactor::lmBF (a
# development reference, never a dependency: apt-get install r-cran-bayesfactor), for issue 41:
# mtcars (mpg ~ wt + hp, + qsec) and birthwt (bwt ~ age + smoke, + lwt, in pounds and in kg),
# unknown noise variance. "old default" is the paper's prior (linear_regression(noise_sd =
# NULL, prior = "paper"), the default before 0.x); "autoscale" is prior = "autoscale" (the
# default now), exact; then SGAIS's estimate of the autoscale
# comparison with 4 replicates and its time. Output: bayes-factors-real-2026-11-26.txt.
#   Rscript inst/validation/bayes-factors-real.R      (from the package root; seconds)
suppressMessages({library(BayesFactor); library(sgais)})
bw <- MASS::birthwt
lbf <- function(f1, f0, d) { b <- lmBF(f1, d, progress = FALSE) / lmBF(f0, d, progress = FALSE); as.vector(log(extractBF(b)$bf)) }
ex <- function(f, d, ...) exact_log_evidence(linear_regression(f, d, noise_sd = NULL, ...))
bic <- function(f, d) -BIC(lm(f, d)) / 2
t0 <- proc.time()[3]
rows <- list(
  list("mtcars", mpg ~ wt + hp + qsec, mpg ~ wt + hp, mtcars),
  list("birthwt", bwt ~ age + lwt + smoke, bwt ~ age + smoke, bw),
  list("birthwt (lwt in kg)", bwt ~ age + lwt + smoke, bwt ~ age + smoke, transform(bw, lwt = lwt * 0.4536))
)
for (r in rows) {
  f1 <- r[[2]]; f0 <- r[[3]]; d <- r[[4]]
  cat(sprintf("%-22s old default %+7.2f | autoscale exact %+6.3f | BIC %+6.3f | BayesFactor lmBF %+6.3f\n", r[[1]],
      ex(f1, d, prior = "paper") - ex(f0, d, prior = "paper"), ex(f1, d, prior = "autoscale") - ex(f0, d, prior = "autoscale"), bic(f1, d) - bic(f0, d), lbf(f1, f0, d)))
}
# the package's estimator on the autoscale models (SGAIS, 4 replicates), and time per comparison
for (r in rows[1:2]) {
  t <- system.time(cmp <- suppressWarnings(compare_models(list(big = linear_regression(r[[2]], r[[4]], noise_sd = NULL, prior = "autoscale"), small = linear_regression(r[[3]], r[[4]], noise_sd = NULL, prior = "autoscale")), r[[4]], replicates = 4, seed = 1, progress = FALSE, method = "sgais")))[["elapsed"]]
  last <- sgais:::comparison_final(cmp)
  z <- setNames(last$log_evidence, last$model); se <- setNames(last$log_evidence_se, last$model)
  cat(sprintf("%-22s SGAIS (4 replicates) log BF %+6.3f (SE %.3f), %.1f s\n", r[[1]], z[["big"]] - z[["small"]], sqrt(sum(se^2)), t))
}
