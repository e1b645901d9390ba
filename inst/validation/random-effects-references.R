# References for random intercepts in vignette("choosing-models"): BayesFactor's log Bayes
# factors against the intercept-only model of the growth data nlme::Orthodont (distance of 27
# children at ages 8 to 14), with and without a random intercept per child (lmBF(whichRandom =
# "Subject"), its JZS prior on the fixed effects and its g-prior on the random ones, sampled by
# Monte Carlo: set.seed(45), 10^6 iterations). BayesFactor is a development reference, never a
# dependency (apt-get install r-cran-bayesfactor). Writes
# inst/extdata/random-effects-references.csv.
#   Rscript inst/validation/random-effects-references.R      (from the package root; a minute)
suppressMessages(library(BayesFactor))
source(file.path("inst", "validation", "suite.R"))
out <- file.path("inst", "extdata", "random-effects-references.csv")
d <- as.data.frame(nlme::Orthodont)
d$Subject <- factor(as.character(d$Subject))
d$Sex <- factor(as.character(d$Sex))
set.seed(45)
one <- function(formula, random) {
  bf <- if (nzchar(random)) {
    lmBF(formula, d, whichRandom = random, iterations = 1e6, progress = FALSE)
  } else {
    lmBF(formula, d, progress = FALSE)
  }
  x <- extractBF(bf)
  data.frame(data = "Orthodont", formula = deparse(formula), which_random = random,
             log_bf = log(x$bf), bf_error = x$error, stringsAsFactors = FALSE)
}
tab <- rbind(
  one(distance ~ age + Sex + Subject, "Subject"),
  one(distance ~ age + Subject, "Subject"),
  one(distance ~ age + Sex, ""),
  one(distance ~ age, "")
)
tab$bayesfactor_version <- as.character(utils::packageVersion("BayesFactor"))
tab$how <- sprintf("BayesFactor::lmBF, set.seed(45), 1e6 iterations, %s", format(Sys.Date()))
utils::write.csv(tab, out, row.names = FALSE)
print(tab[, c("formula", "which_random", "log_bf", "bf_error")], row.names = FALSE)
cat(sprintf("written to %s\n", normalizePath(out)))
