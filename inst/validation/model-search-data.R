# The data of model_search()'s validation, shared by model-search-references.R (the stored
# references) and model-search.R (the measurements); vignette("variable-selection") repeats the
# first two in its own code and checks them against the fingerprints stored with the references.
# Sourcing it also sets up what both scripts need: sgais and BAS loaded, the suite's shared code
# (suite.R) and one thread, so that times compare with BAS's.
suppressPackageStartupMessages({
  library(sgais)
  library(BAS)
})
source(file.path("inst", "validation", "suite.R"))
sgais_threads(1)

# MASS::Boston with 20 columns of pure noise, noise1 to noise20 (33 candidate terms).
boston_noise <- function(seed = 66) {
  boston <- MASS::Boston
  set.seed(seed)
  noise <- matrix(stats::rnorm(nrow(boston) * 20), ncol = 20,
                  dimnames = list(NULL, paste0("noise", 1:20)))
  cbind(boston, noise)
}

# A logistic regression of `n` rows and 10 correlated covariates (correlation 0.5^|j - k|): two
# strong effects (x1, x2), three weak ones (x5, x7, x10) and five zero, intercept -1.
simulate_logistic_search <- function(n = 2e4, seed = 66) {
  set.seed(seed)
  p <- 10
  x <- matrix(stats::rnorm(n * p), n, p) %*% chol(0.5^abs(outer(1:p, 1:p, "-")))
  colnames(x) <- paste0("x", 1:p)
  beta <- c(0.5, -0.3, 0, 0, 0.06, 0, 0.04, 0, 0, 0.03)
  data.frame(y = stats::rbinom(n, 1, stats::plogis(-1 + drop(x %*% beta))), x)
}

# A fingerprint of a data set: the sums of its columns, to check that code elsewhere made the
# same rows.
data_fingerprint <- function(d) sprintf("%.6f", sum(vapply(d, function(v) sum(as.numeric(v)),
                                                           numeric(1))))

# A linear stream of `n` rows in blocks of `block` rows: 15 independent standard normal
# covariates, y = x1 - 0.5 x2 + 0.5 x3 + 0.25 x4 + 0.1 x5 + noise (sd 1), and x7's coefficient 0
# up to row `change` and `after` from the next row on. A list of data frames, one per block.
simulate_shift_stream <- function(n = 1e6, change = 5e5, after = 0.05, block = 1e4, seed = 7) {
  p <- 15
  beta <- c(1, -0.5, 0.5, 0.25, 0.1, rep(0, p - 5))
  lapply(seq_len(ceiling(n / block)), function(b) {
    set.seed(seed * 100000 + b)
    rows <- seq.int((b - 1) * block + 1, min(n, b * block))
    x <- matrix(stats::rnorm(length(rows) * p), length(rows), p,
                dimnames = list(NULL, paste0("x", 1:p)))
    y <- drop(x %*% beta) + after * x[, 7] * (rows > change) + stats::rnorm(length(rows))
    data.frame(y, x)
  })
}

# A stream source (a function of the number of rows, as sgais_stream() takes) over a list of
# blocks, given back one block a call.
block_source <- function(blocks) {
  i <- 0L
  function(n) {
    i <<- i + 1L
    if (i > length(blocks)) NULL else blocks[[i]]
  }
}
