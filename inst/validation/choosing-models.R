# References for vignette("choosing-models"): each comparison of the vignette by BIC, by
# BayesFactor (linear models: lmBF, the JZS prior, a development reference never a dependency:
# apt-get install r-cran-bayesfactor), by the exact evidence of the package's model where it has
# one (linear regression under its default prior, prior = "autoscale"), and by Stan + bridge
# sampling for the others (read from references.csv, made by references.R, which records how).
# Writes inst/extdata/choosing-models.csv, which the vignette reads, and then prints the
# package's own estimate of each comparison (compare_models(), default settings, 4 replicates)
# with its time.
#   Rscript inst/validation/choosing-models.R      (from the package root; about a minute)
suppressMessages({library(BayesFactor); library(sgais)})
source(file.path("inst", "validation", "suite.R"))
refs <- utils::read.csv(file.path(validation_dir, "references.csv"), stringsAsFactors = FALSE)
stan <- function(case) refs[refs$case == case, c("reference", "reference_sd")]
bw <- MASS::birthwt
quine <- MASS::quine
faithful_scaled <- as.data.frame(scale(faithful))

# one row per comparison: the log Bayes factor of `a` over `b`
rows <- list(
  list(data = "mtcars", family = "gaussian", a = "mpg ~ wt + hp + qsec", b = "mpg ~ wt + hp", d = mtcars),
  list(data = "attitude", family = "gaussian", a = "rating ~ complaints + learning", b = "rating ~ complaints", d = attitude),
  list(data = "birthwt", family = "gaussian", a = "bwt ~ age + lwt + smoke", b = "bwt ~ age + smoke", d = bw),
  list(data = "birthwt", family = "binomial", a = "low ~ age + lwt + smoke + ht", b = "low ~ age + smoke", d = bw,
       stan = c("birthwt_logit_large_autoscale", "birthwt_logit_small_autoscale")),
  list(data = "quine", family = "negative_binomial", a = "Days ~ Eth + Sex + Age + Lrn", b = "Days ~ Eth + Sex + Age + Lrn", d = quine,
       label_a = "negative binomial", label_b = "Poisson",
       stan = c("quine_negbin_autoscale", "quine_poisson_autoscale")),
  list(data = "faithful", family = "mixture", a = "2 components", b = "1 component", d = faithful_scaled,
       stan = c("faithful_mix_k2", "faithful_mix_k1")),
  list(data = "faithful", family = "mixture", a = "3 components", b = "2 components", d = faithful_scaled,
       stan = c("faithful_mix_k3", "faithful_mix_k2"))
)

bic_of <- function(r, which) {
  if (r$family == "mixture") return(NA_real_)
  f <- stats::as.formula(r[[which]])
  fit <- switch(r$family,
    gaussian = stats::lm(f, r$d),
    binomial = stats::glm(f, stats::binomial(), r$d),
    negative_binomial = if (which == "a") MASS::glm.nb(f, r$d) else stats::glm(f, stats::poisson(), r$d),
    mixture = NULL)
  if (is.null(fit)) return(NA_real_)
  -stats::BIC(fit) / 2
}
out <- do.call(rbind, lapply(rows, function(r) {
  exact <- bf <- stan_bf <- stan_sd <- NA_real_
  if (r$family == "gaussian") {
    ex <- function(f) exact_log_evidence(linear_regression(stats::as.formula(f), r$d, noise_sd = NULL))
    exact <- ex(r$a) - ex(r$b)
    lbf <- function(f) lmBF(stats::as.formula(f), r$d, progress = FALSE)
    bf <- as.vector(log(extractBF(lbf(r$a) / lbf(r$b))$bf))
  }
  if (!is.null(r$stan)) {
    s <- lapply(r$stan, stan)
    stan_bf <- s[[1]]$reference - s[[2]]$reference
    stan_sd <- sqrt(s[[1]]$reference_sd^2 + s[[2]]$reference_sd^2)
  }
  data.frame(data = r$data, family = r$family, a = if (is.null(r$label_a)) r$a else r$label_a, b = if (is.null(r$label_b)) r$b else r$label_b,
             exact = exact, stan = stan_bf, stan_sd = stan_sd,
             bic = bic_of(r, "a") - bic_of(r, "b"), bayesfactor = bf)
}))
out$how <- paste("exact: exact_log_evidence() of linear_regression(noise_sd = NULL), default prior;",
                 "stan: references.csv (Stan NUTS + bridgesampling), difference of the two cases;",
                 "bic: -BIC/2 of lm(), glm(), MASS::glm.nb();",
                 sprintf("bayesfactor: BayesFactor %s lmBF(), default JZS prior (rscaleCont = 'medium');",
                         utils::packageVersion("BayesFactor")),
                 format(Sys.Date()))
utils::write.csv(out, file.path("inst", "extdata", "choosing-models.csv"), row.names = FALSE)
print(out[setdiff(names(out), "how")], digits = 4, row.names = FALSE)

# the package's estimates, as the vignette computes them (default settings, 4 replicates)
cat("\ncompare_models(), 4 replicates, seed 1: log Bayes factor of a over b\n")
model_of <- function(r, which) {
  if (r$family == "mixture") {
    return(gaussian_mixture(r$d, components = as.integer(substr(r[[which]], 1, 1))))
  }
  f <- stats::as.formula(r[[which]])
  switch(r$family,
    gaussian = linear_regression(f, r$d, noise_sd = NULL),
    binomial = logistic_regression(f, r$d),
    negative_binomial = if (which == "a") negative_binomial_regression(f, r$d) else poisson_regression(f, r$d))
}
for (i in seq_along(rows)) {
  r <- rows[[i]]
  t <- system.time(cmp <- suppressWarnings(compare_models(
    list(a = model_of(r, "a"), b = model_of(r, "b")), replicates = 4, seed = 1, progress = FALSE, method = "sgais")))
  last <- sgais:::comparison_final(cmp)
  z <- stats::setNames(last$log_evidence, last$model)
  se <- stats::setNames(last$log_evidence_se, last$model)
  ref <- if (is.finite(out$exact[i])) out$exact[i] else out$stan[i]
  cat(sprintf("  %-9s %-34s vs %-22s %+8.3f (SE %.3f)  reference %+8.3f  error %+6.3f  %5.1f s\n",
              r$data, out$a[i], out$b[i], z[["a"]] - z[["b"]], sqrt(sum(se^2)), ref,
              z[["a"]] - z[["b"]] - ref, t[["elapsed"]]))
}
