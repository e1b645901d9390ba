# The paper's three simulated models (Cameron et al. 2019, Appendix B) for the benchmark scripts,
# which source this file: `paper_builders(largest, seed)` simulates each data set once at the
# largest size and returns, per model, a function of n giving the model on the first n rows
# (smaller sets are prefixes of larger ones, as in the paper).
paper_builders <- function(largest, seed) {
  linear <- NULL
  list(
    linear = function(n) {
      if (is.null(linear) || nrow(linear) < n) {
        linear <<- simulate_linear_regression(max(n, largest), seed = seed)
      }
      linear_regression(y ~ ., linear[seq_len(n), ], prior = "paper", noise_sd = 1)
    },
    softmax = local({
      data <- simulate_softmax_regression(largest, dim = 10, classes = 4, seed = seed)
      function(n) softmax_regression(y ~ ., data[seq_len(n), ], prior = "paper")
    }),
    mixture = local({
      data <- simulate_gaussian_mixture(largest, components = 5, dim = 2, seed = seed)
      function(n) gaussian_mixture(data[seq_len(n), ], components = 5)
    })
  )
}

