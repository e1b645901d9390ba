# compare_models() at its defaults on small real data: which estimator it picks, the log Bayes
# factors against exact values, whether they change with the data's units, and the time.
#   Rscript inst/validation/compare.R [--lib=DIR] [--out=file.txt]
# From the package's root, in seconds. Prints the figures and writes them (overwriting) to
# compare.txt (or --out). The references are the closed forms (exact_log_evidence()) of the same
# models.
source(file.path("inst", "validation", "suite.R"))
lib <- opt("lib", "")
if (nzchar(lib)) .libPaths(c(lib, .libPaths()))
suppressPackageStartupMessages(library(sgais))
out_file <- opt("out", file.path(validation_dir, "compare.txt"))
lines <- character()
say <- function(...) {
  text <- sprintf(...)
  cat(text, "\n", sep = "")
  lines <<- c(lines, text)
}
timed <- function(code) {
  t <- system.time(value <- code)[["elapsed"]]
  list(value = value, seconds = t)
}
final <- function(cmp) {
  last <- sgais:::comparison_final(cmp)
  stats::setNames(last$log_evidence, last$model)
}

say("compare_models() at its defaults (method = \"auto\"), %s", format(Sys.time(), "%Y-%m-%d"))

# mtcars: is qsec worth a parameter? Exact unknown-noise evidence under the default prior, and
# the same with every covariate and the response in other units
say("")
say("mtcars, mpg ~ wt + hp + qsec against mpg ~ wt + hp")
units <- list(
  original = mtcars,
  other = transform(mtcars, wt = wt * 453.6, hp = hp / 100 + 7, qsec = qsec * 60,
                    mpg = 1000 - mpg * 0.425)
)
exact <- function(d) {
  exact_log_evidence(linear_regression(mpg ~ wt + hp + qsec, d)) -
    exact_log_evidence(linear_regression(mpg ~ wt + hp, d))
}
for (u in names(units)) {
  r <- timed(compare_models(list(large = mpg ~ wt + hp + qsec, small = mpg ~ wt + hp),
                            units[[u]], family = "gaussian", seed = 1, progress = FALSE))
  z <- final(r$value)
  say("  %-9s log BF %+.4f (exact %+.4f, error %+.2e), %s, %.3f s", u,
      z[["large"]] - z[["small"]], exact(units[[u]]), z[["large"]] - z[["small"]] - exact(units[[u]]),
      paste(unique(r$value$methods$method), collapse = ", "), r$seconds)
}

# swiss: the 32 subsets of its 5 covariates
say("")
vars <- setdiff(names(swiss), "Fertility")
subsets <- unlist(lapply(0:5, function(k) utils::combn(vars, k, simplify = FALSE)),
                  recursive = FALSE)
forms <- lapply(subsets, function(v) stats::reformulate(if (length(v)) v else "1", "Fertility"))
names(forms) <- vapply(subsets, function(v) if (length(v)) paste(v, collapse = "+") else "1", "")
r <- timed(compare_models(forms, swiss, family = "gaussian", seed = 1, progress = FALSE))
ref <- vapply(forms, function(f) exact_log_evidence(linear_regression(f, swiss)), numeric(1))
err <- final(r$value)[names(ref)] - ref
say("swiss, all 32 subsets: %.2f s, largest |error| against the closed form %.2e nats, by %s",
    r$seconds, max(abs(err)), paste(unique(r$value$methods$method), collapse = ", "))

# fits of three estimators of the same data in one comparison
say("")
d <- simulate_linear_regression(2000, seed = 1)
fits <- list(all = exact_evidence(linear_regression(y ~ ., d)),
             two = importance_sampling(linear_regression(y ~ x1 + x2, d), seed = 1,
                                       progress = FALSE),
             one = sgais(linear_regression(y ~ x1, d), seed = 1, progress = FALSE))
say("a closed form, importance sampling and SGAIS of the same 2,000 rows, compared:")
for (l in utils::capture.output(print(compare_models(fits)))) say("%s", l)

# binomial counts with a random intercept (their evidence against the Bernoulli rows':
# inst/validation/binomial.R)
if (requireNamespace("lme4", quietly = TRUE)) {
  say("")
  counts <- list(period = cbind(incidence, size - incidence) ~ period + (1 | herd),
                 none = cbind(incidence, size - incidence) ~ 1 + (1 | herd))
  r <- timed(compare_models(counts, lme4::cbpp, family = "binomial", seed = 1, progress = FALSE))
  say("lme4::cbpp, binomial counts, compared in %.2f s:", r$seconds)
  for (l in utils::capture.output(print(r$value))) say("%s", l)
}

writeLines(lines, out_file)
cat("\nwritten to", out_file, "\n")
