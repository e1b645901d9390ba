# Binomial counts against their Bernoulli rows (?logistic_regression, "Binomial counts"): the
# evidence of counts is that of their Bernoulli rows (one row per trial, the successes 1 and the
# failures 0) plus sum(lchoose(trials, successes)). On lme4::cbpp (56 counts of 2 to 34 trials,
# 842 trials in 15 herds), with and without a random intercept per herd, at the defaults:
# sgais() and importance_sampling() on the counts and on the Bernoulli rows, seeds 1-5, each
# against a reference, importance_sampling() with 20,000 draws on the Bernoulli rows plus the
# constant. Prints one table and writes it to binomial.txt beside this script. One thread; about
# a minute.
#   Rscript inst/validation/binomial.R      (from the package's root)
suppressMessages(library(sgais))
source(file.path("inst", "validation", "suite.R"))
# the tests' copy of the data and their Bernoulli rows (bernoulli_rows())
source(file.path("tests", "testthat", "helper-glm.R"))
cbpp <- if (requireNamespace("lme4", quietly = TRUE)) lme4::cbpp else cbpp_data()
sgais_threads(1)
rows <- bernoulli_rows(cbpp, cbpp$incidence, cbpp$size)
constant <- sum(lchoose(cbpp$size, cbpp$incidence))
seeds <- 1:5
timed <- function(expr) {
  t0 <- proc.time()[["elapsed"]]
  value <- suppressWarnings(expr)
  list(value = value, seconds = proc.time()[["elapsed"]] - t0)
}
out <- list()
refs <- character(0)
for (effects in c(FALSE, TRUE)) {
  rhs <- if (effects) "period + (1 | herd)" else "period"
  counts <- logistic_regression(
    stats::as.formula(paste("cbind(incidence, size - incidence) ~", rhs)), cbpp)
  bernoulli <- logistic_regression(stats::as.formula(paste("y ~", rhs)), rows)
  reference <- importance_sampling(bernoulli, draws = 20000, seed = 99, progress = FALSE)
  ref <- log_evidence(reference) + constant
  for (estimator in c("sgais", "importance_sampling")) {
    run <- switch(estimator, sgais = sgais, importance_sampling = importance_sampling)
    for (seed in seeds) {
      a <- timed(run(counts, seed = seed, progress = FALSE))
      b <- timed(run(bernoulli, seed = seed, progress = FALSE))
      se <- sqrt(a$value$log_evidence_se^2 + b$value$log_evidence_se^2)
      out[[length(out) + 1L]] <- data.frame(
        model = if (effects) "(1 | herd)" else "fixed", estimator = estimator, seed = seed,
        counts = log_evidence(a$value), counts_se = a$value$log_evidence_se,
        rows_plus_const = log_evidence(b$value) + constant, rows_se = b$value$log_evidence_se,
        difference = log_evidence(a$value) - log_evidence(b$value) - constant,
        in_se = (log_evidence(a$value) - log_evidence(b$value) - constant) / se,
        counts_vs_ref = log_evidence(a$value) - ref,
        counts_s = a$seconds, rows_s = b$seconds
      )
    }
  }
  refs <- c(refs, sprintf("%-10s reference %.4f (SE %.4f): log Z of the Bernoulli rows %.4f + %.4f",
                          if (effects) "(1 | herd)" else "fixed", ref, reference$log_evidence_se,
                          log_evidence(reference), constant))
}
table <- do.call(rbind, out)
header <- c(
  sprintf("sgais %s, binomial counts of cbpp against their Bernoulli rows + sum(lchoose) = %.4f",
          utils::packageVersion("sgais"), constant),
  "(counts: log Z of the 56 counts; rows_plus_const: of the 842 Bernoulli rows plus the constant;",
  " in_se: their difference in SE of both; counts_vs_ref: against importance sampling with 20,000",
  " draws on the Bernoulli rows plus the constant; seconds on one thread. importance_sampling()",
  " draws the same points for both, whose posterior is the same: they differ by the constant.)",
  "", refs, "")
shown <- c(
  sprintf("%-10s %-19s %4s %10s %6s %15s %6s %10s %6s %13s %8s %6s", "model", "estimator", "seed",
          "counts", "se", "rows_plus_const", "se", "difference", "in_se", "counts_vs_ref",
          "counts_s", "rows_s"),
  with(table, sprintf(paste("%-10s %-19s %4d %10.4f %6.4f %15.4f %6.4f %+10.4f %+6.2f %+13.4f",
                            "%8.3f %6.3f"), model, estimator, seed, counts, counts_se,
                      rows_plus_const, rows_se, difference, in_se, counts_vs_ref, counts_s,
                      rows_s)))
worst <- sprintf("largest |difference| %.3f nats, %.2f SE; all within 3 SE: %s",
                 max(abs(table$difference)), max(abs(table$in_se)), all(abs(table$in_se) <= 3))
cat("", header, shown, "", worst, sep = "\n")
writeLines(c(header, shown, "", worst), file.path(validation_dir, "binomial.txt"))
