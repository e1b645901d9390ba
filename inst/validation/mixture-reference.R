# A reference for the evidence of Gaussian mixtures of well-separated clusters (issue 42, item 1).
#
# With K components and data in K clusters separated by many cluster sds, the posterior over the
# assignments z sits on the true assignment z* and its K! relabellings, and under the conjugate
# prior of gaussian_mixture() the evidence given an assignment has a closed form: the
# Dirichlet-multinomial probability of the counts times, per component and dimension, the
# normal-inverse-gamma marginal of that component's values (nig_log_evidence(), which
# exact_log_evidence() uses for one component). So
#   log Z = log K! + log p(z*) + sum_k sum_j log p(y_kj | z*)  + log(1 + epsilon),
# where epsilon, the mass of every other assignment relative to these, is negligible: a point
# d cluster sds from its own centre and D from another's is reassigned with relative weight about
# exp(-(D^2 - d^2) / 2), and summed over n points the loss is about n Phi(-D / 2) nats per
# neighbouring cluster (1e-9 per point at D = 12). The reference needs every component to be
# used: with fewer clusters than components the assignments that split a cluster between two
# components are not negligible (an overfitted mixture), so a stream's prefixes before its last
# cluster appears have no reference here.
#
# separated_clusters() draws such data in `dim` dimensions: K centres on a grid with `spacing`
# cluster sds between neighbours, unit cluster sds, equal weights; the rows shuffled
# ("stationary"), or in `phases` (e.g. c(2, 4, 6): first the first 2 clusters, then the first 4,
# then all 6, each phase an equal share of the rows, shuffled within it) for a stream whose
# clusters appear over time. The data are then standardised (scale(); `standardise`), the scale the prior of
# gaussian_mixture() is for: its mean prior N(0, 4 sigma^2) and sigma^2 ~ InvGamma(1, 1) put
# the clusters' centres within a few units and their variances near 1 only for data of that
# scale.
#
# Checked against enumeration of every assignment of 10 points to 2 components and against
# exact_log_evidence() at K = 1 (check_mixture_reference(), run by mixture-clusters.R).

separated_clusters <- function(n, K, dim = 2, spacing = 12, phases = NULL, seed = 1,
                               standardise = TRUE) {
  side <- ceiling(K^(1 / dim))
  grid <- as.matrix(expand.grid(rep(list(seq_len(side) - 1), dim)))[seq_len(K), , drop = FALSE]
  centres <- spacing * grid
  sgais:::with_seed(seed, {
    if (is.null(phases)) {
      z <- sample(rep_len(seq_len(K), n))
    } else {
      stopifnot(max(phases) == K, all(diff(phases) > 0))
      sizes <- diff(round(seq(0, n, length.out = length(phases) + 1)))
      z <- unlist(lapply(seq_along(phases), function(i) {
        sample(rep_len(seq_len(phases[i]), sizes[i]))
      }))
    }
    y <- centres[z, , drop = FALSE] + matrix(stats::rnorm(n * dim), n, dim)
  })
  y <- if (standardise) scale(y) else y - mean(centres)
  out <- as.data.frame(unclass(y)[, seq_len(dim), drop = FALSE])
  names(out) <- paste0("y", seq_len(dim))
  attr(out, "component") <- z
  out
}

# log K! + log p(z) + sum log p(y_kj | z) for the model's data and hyperparameters, with `z` the
# true component of every row (1..K); `components` of the model may exceed the clusters in z only
# for the enumeration check (the sum is then over labellings of the used ones).
separated_mixture_log_evidence <- function(model, z) {
  h <- model$hyper
  K <- h$components
  yt <- model$data$yt
  counts <- tabulate(z, K)
  used <- which(counts > 0)
  alpha <- h$concentration
  dirichlet_multinomial <- lgamma(K * alpha) - lgamma(length(z) + K * alpha) +
    sum(lgamma(counts + alpha) - lgamma(alpha))
  marginals <- sum(vapply(used, function(k) {
    sum(vapply(seq_len(nrow(yt)), function(j) {
      yk <- yt[j, z == k]
      sgais:::nig_log_evidence(yk, length(yk), h$variance_shape, h$variance_scale,
                               1 / h$mean_variance_ratio)
    }, numeric(1)))
  }, numeric(1)))
  # the distinct labellings of the used components
  lfactorial(K) - lfactorial(K - length(used)) + dirichlet_multinomial + marginals
}

# separated_mixture_log_evidence() summed over z and every allocation that joins two of its
# clusters in one component. While a cluster holds a few dozen points the posterior may rather
# put it with a neighbour (inst/design.md, "Where the separated-cluster reference is not the
# evidence"): still a lower bound on the evidence, and a tighter one then.
merged_mixture_log_evidence <- function(model, z) {
  used <- sort(unique(z))
  pairs <- if (length(used) > 1) utils::combn(used, 2, simplify = FALSE) else list()
  terms <- c(separated_mixture_log_evidence(model, z), vapply(pairs, function(p) {
    separated_mixture_log_evidence(model, replace(z, z == p[2], p[1]))
  }, numeric(1)))
  top <- max(terms)
  top + log(sum(exp(terms - top)))
}

# The evidence of a small mixture by summing p(z) p(y | z) over every assignment: K^n terms.
enumerated_mixture_log_evidence <- function(model) {
  n <- model$n
  K <- model$hyper$components
  all_z <- as.matrix(expand.grid(rep(list(seq_len(K)), n)))
  terms <- apply(all_z, 1, function(z) {
    # each assignment once: its own term, without the relabelling factor
    separated_mixture_log_evidence(model, z) -
      (lfactorial(K) - lfactorial(K - length(unique(z))))
  })
  m <- max(terms)
  m + log(sum(exp(terms - m)))
}

check_mixture_reference <- function() {
  # unit cluster sds 8 apart about 0, within the prior's scale: with few points the prior, not
  # the separation, decides, and standardised narrow clusters are a priori one wide component
  y <- separated_clusters(12, 2, dim = 1, spacing = 8, seed = 3, standardise = FALSE)
  m2 <- gaussian_mixture(y, components = 2)
  enum <- enumerated_mixture_log_evidence(m2)
  ref <- separated_mixture_log_evidence(m2, attr(y, "component"))
  y1 <- separated_clusters(50, 1, dim = 2, seed = 4)
  m1 <- gaussian_mixture(y1, components = 1)
  data.frame(
    check = c("K = 2, 12 points, 1-D, spacing 8: reference - enumeration of all 4,096 assignments",
              "K = 1, 50 points, 2-D: reference - exact_log_evidence()"),
    difference = c(ref - enum,
                   separated_mixture_log_evidence(m1, attr(y1, "component")) - exact_log_evidence(m1))
  )
}
