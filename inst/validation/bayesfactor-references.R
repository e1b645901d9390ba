# References for the priors of the Bayes-factor literature (?g_prior): BayesFactor's own log Bayes
# factors against the intercept-only model, under its JZS prior, on its documented example
# (regressionBF(rating ~ ., attitude): all 63 models) and on mtcars (regressionBF of mpg on four
# covariates: 15 models, and the medium, wide and ultrawide scales; lmBF of the models of
# vignette("choosing-models")). BayesFactor is a development reference, never a dependency
# (apt-get install r-cran-bayesfactor). Writes inst/extdata/bayesfactor-references.csv, which
# the tests (test-linear_regression_zellner.R), the agreement run (bayesfactor-agreement.R) and
# vignette("choosing-models") read.
#   Rscript inst/validation/bayesfactor-references.R      (from the package root; seconds)
suppressMessages(library(BayesFactor))
source(file.path("inst", "validation", "suite.R"))
out <- file.path("inst", "extdata", "bayesfactor-references.csv")

# "a + b" in BayesFactor's names, as the right-hand side of a formula
rows <- function(bf, data, response, scale, fun) {
  x <- extractBF(bf)
  data.frame(data = data, formula = paste(response, "~", rownames(x)), scale = scale,
             log_bf = log(x$bf), bf_error = x$error, bayesfactor = fun,
             stringsAsFactors = FALSE)
}
mt <- mtcars[c("mpg", "wt", "hp", "qsec", "disp")]
tab <- rbind(
  rows(regressionBF(rating ~ ., attitude, progress = FALSE), "attitude", "rating", "medium",
       "regressionBF"),
  do.call(rbind, lapply(c("medium", "wide", "ultrawide"), function(s) {
    rows(regressionBF(mpg ~ ., mt, rscaleCont = s, progress = FALSE), "mtcars", "mpg", s,
         "regressionBF")
  })),
  rows(lmBF(mpg ~ wt + hp, mtcars, progress = FALSE), "mtcars", "mpg", "medium", "lmBF"),
  rows(lmBF(mpg ~ wt + hp + qsec, mtcars, progress = FALSE), "mtcars", "mpg", "medium", "lmBF"),
  rows(lmBF(rating ~ complaints, attitude, progress = FALSE), "attitude", "rating", "medium", "lmBF"),
  rows(lmBF(rating ~ complaints + learning, attitude, progress = FALSE), "attitude", "rating",
       "medium", "lmBF")
)
tab$bayesfactor_version <- as.character(utils::packageVersion("BayesFactor"))
utils::write.csv(tab, out, row.names = FALSE)
cat(sprintf("%d Bayes factors written to %s\n", nrow(tab), normalizePath(out)))
