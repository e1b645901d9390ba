# Mixtures with a closed-form evidence, shared by test-gaussian_mixture.R and test-sequential.R.

# The evidence of data in well-separated clusters z under a mixture of `components` (one
# component for each cluster, the others spare; Dirichlet(alpha) weights): the K! / (K - k)!
# labellings + the Dirichlet-multinomial of the allocation + each cluster's one-component
# evidence, up to a negligible error (inst/validation/mixture-reference.R).
separated_log_evidence <- function(y, z, alpha = 1, components = length(unique(z))) {
  K <- components
  lfactorial(K) - lfactorial(K - length(unique(z))) + lgamma(K * alpha) -
    lgamma(K * alpha + length(z)) + sum(lgamma(alpha + table(z)) - lgamma(alpha)) +
    sum(vapply(sort(unique(z)), function(k) {
      exact_log_evidence(gaussian_mixture(y[z == k, , drop = FALSE], components = 1))
    }, 0))
}

# Two clusters, then a third that appears mid-stream (300 points of each kind; sd 0.1 around
# centres 2 apart), and its assignments z: a run in chunks must restart to follow it.
appearing_clusters <- function(seed = 11) {
  set.seed(seed)
  centres <- rbind(c(0, 0), c(2, 0), c(1, 2))
  z <- c(rep(1:2, 150), rep(1:3, 100))
  y <- centres[z, ] + matrix(rnorm(2 * length(z), sd = 0.1), ncol = 2)
  list(y = y, z = z)
}
