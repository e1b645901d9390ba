# An independent R version of the mixture: theta = (log(w_k / w_K), mu, log sigma2) as documented,
# the prior evaluated in the original parameters (dirichlet, inverse gamma, normal densities) plus
# the log-Jacobian of the transform, sum_k log w_k + sum_kj log sigma2_kj.
ref_mixture <- function(theta, y, k, alpha = 1, a = 1, b = 1, r = 4) {
  y <- as.matrix(y)
  d <- ncol(y)
  z <- c(theta[seq_len(k - 1)], 0)
  w <- exp(z - max(z))
  w <- w / sum(w)
  mu <- matrix(theta[k - 1 + seq_len(k * d)], k, d, byrow = TRUE)
  s2 <- exp(matrix(theta[k - 1 + k * d + seq_len(k * d)], k, d, byrow = TRUE))
  dens <- vapply(seq_len(k), function(c) {
    w[c] * apply(matrix(dnorm(t(y), mu[c, ], sqrt(s2[c, ])), nrow = d), 2, prod)
  }, numeric(nrow(y)))
  log_dirichlet <- lgamma(k * alpha) - k * lgamma(alpha) + (alpha - 1) * sum(log(w))
  log_invgamma <- sum(a * log(b) - lgamma(a) - (a + 1) * log(s2) - b / s2)
  log_normal <- sum(dnorm(mu, 0, sqrt(r * s2), log = TRUE))
  jacobian <- (if (k > 1) sum(log(w)) else 0) + sum(log(s2))
  list(log_lik = sum(log(rowSums(matrix(dens, nrow = nrow(y))))),
       log_prior = log_dirichlet + log_invgamma + log_normal + jacobian)
}

mixture_data <- function(n = 500, seed = 1) {
  simulate_gaussian_mixture(n, components = 3, dim = 1, seed = seed)
}

test_that("the C log-likelihood and log prior match R, with the paper's and other priors", {
  test_tags("memcheck")
  y <- simulate_gaussian_mixture(50, components = 3, dim = 2, seed = 2)
  theta <- withr::with_seed(3, rnorm(2 + 12))
  model <- gaussian_mixture(y, components = 3)
  ev <- sgais:::model_evaluate(model, theta, start = 5, n = 30)
  ref <- ref_mixture(theta, y[6:35, ], 3)
  expect_equal(ev$log_lik, ref$log_lik)
  expect_equal(ev$log_prior, ref$log_prior)
  model <- gaussian_mixture(y, components = 3, concentration = 0.7, variance_shape = 2,
                            variance_scale = 0.5, mean_variance_ratio = 3)
  ev <- sgais:::model_evaluate(model, theta)
  ref <- ref_mixture(theta, y, 3, alpha = 0.7, a = 2, b = 0.5, r = 3)
  expect_equal(ev$log_lik, ref$log_lik)
  expect_equal(ev$log_prior, ref$log_prior)
  # one component: no weights
  model <- gaussian_mixture(y, components = 1)
  ev <- sgais:::model_evaluate(model, theta[3:6])
  ref <- ref_mixture(theta[3:6], y, 1)
  expect_equal(ev$log_lik, ref$log_lik)
  expect_equal(ev$log_prior, ref$log_prior)
})

test_that("the log-likelihood matches R in any dimension, and is -Inf when every density underflows", {
  # d = 2 takes its own (unrolled) loop, the others the general one
  for (d in 1:3) {
    y <- simulate_gaussian_mixture(40, components = 2, dim = d, seed = d)
    theta <- withr::with_seed(d, rnorm(1 + 4 * d))
    ev <- sgais:::model_evaluate(gaussian_mixture(y, components = 2), theta)
    expect_equal(ev$log_lik, ref_mixture(theta, y, 2)$log_lik, tolerance = 1e-12)
  }
  # means so far away that every squared distance overflows: zero likelihood, not NaN
  theta <- c(0, rep(1e200, 4), rep(0, 4))
  expect_identical(sgais:::model_evaluate(gaussian_mixture(y[, 1:2], components = 2), theta)$log_lik,
                   -Inf)
})

test_that("the prior is a proper density on the unconstrained space (Jacobians are right)", {
  y <- mixture_data(20)
  # (the log prior at each row of theta, in one call)
  lp <- function(model, theta) .Call(sgais:::C_ffi_model_log_density, model, t(rbind(theta)))[1, ]
  # one component in one dimension: theta = (mu, log sigma2) integrates to one
  m1 <- gaussian_mixture(y, 1, variance_shape = 1.5, variance_scale = 2, mean_variance_ratio = 3)
  inner <- function(s) vapply(s, function(si) {
    integrate(function(mu) exp(lp(m1, cbind(mu, si))), -Inf, Inf)$value
  }, 0)
  expect_equal(integrate(inner, -15, 25)$value, 1, tolerance = 1e-5)
  # the weights: the prior of two and three components minus that of their (mu, s) pairs
  for (k in 2:3) {
    mk <- gaussian_mixture(y, k, concentration = 0.8)
    m1 <- gaussian_mixture(y, 1)
    ms <- withr::with_seed(k, rnorm(2 * k))
    pairs <- sum(vapply(seq_len(k), function(c) lp(m1, ms[c(c, k + c)]), 0))
    # at the rows of z (k - 1 columns)
    weights <- function(z) exp(lp(mk, cbind(z, matrix(ms, nrow(z), 2 * k, byrow = TRUE))) - pairs)
    total <- if (k == 2) {
      integrate(function(z) weights(cbind(z)), -Inf, Inf)$value
    } else {
      integrate(Vectorize(function(z1) {
        integrate(function(z2) weights(cbind(z1, z2)), -Inf, Inf)$value
      }), -Inf, Inf)$value
    }
    expect_equal(total, 1, tolerance = 1e-4)
  }
})

test_that("gradients pass the finite-difference check, also far from every component", {
  test_tags("memcheck")
  y <- simulate_gaussian_mixture(300, components = 5, dim = 2, seed = 4)
  check <- check_gradients(gaussian_mixture(y, 5), n = 3, seed = 1)
  expect_lt(max(check$rel_error), 1e-5)
  # points a thousand prior widths away: one component takes all the responsibility, the
  # log-likelihood is about -1e6 per point
  far <- y[1:40, ] + 1e3 * rep(c(1, -1), 20)
  check <- check_gradients(gaussian_mixture(far, 5), n = 3, seed = 2)
  expect_lt(max(check$rel_error), 1e-5)
  # one component, one dimension
  check <- check_gradients(gaussian_mixture(mixture_data(100), 1), n = 3, seed = 3)
  expect_lt(max(check$rel_error), 1e-5)
})

test_that("prior draws follow the prior", {
  model <- gaussian_mixture(mixture_data(20), components = 3, concentration = 1,
                            variance_shape = 2, variance_scale = 0.5, mean_variance_ratio = 3)
  draws <- withr::with_seed(1, sgais:::model_prior_draw(model, 4000))
  expect_equal(dim(draws), c(8L, 4000L))
  z <- rbind(draws[1:2, ], 0)
  w <- exp(z) / rep(colSums(exp(z)), each = 3)
  # Dirichlet(1, 1, 1): each weight has mean 1/3, sd 0.24; the sample mean has sd 0.004
  expect_equal(rowMeans(w), rep(1 / 3, 3), tolerance = 0.05)
  s <- draws[6:8, ]
  mu <- draws[3:5, ]
  # 1 / sigma2 ~ Gamma(shape 2, rate 0.5); mu / sqrt(3 sigma2) ~ N(0, 1)
  expect_gt(suppressWarnings(ks.test(exp(-s[1, ]), "pgamma", shape = 2, rate = 0.5))$p.value, 1e-3)
  expect_gt(ks.test(mu[2, ] / sqrt(3 * exp(s[2, ])), "pnorm")$p.value, 1e-3)
})

test_that("the one-component evidence matches quadrature and is per-dimension", {
  y <- mixture_data(12)$y1
  model <- gaussian_mixture(y, 1)
  # log p(y) = log of the double integral of likelihood x prior over (mu, sigma2)
  f <- function(mu, s2) {
    exp(sum(dnorm(y, mu, sqrt(s2), log = TRUE)) + dnorm(mu, 0, sqrt(4 * s2), log = TRUE) -
          2 * log(s2) - 1 / s2 + 40)
  }
  inner <- function(s2) vapply(s2, function(v) integrate(Vectorize(function(m) f(m, v)), -Inf, Inf)$value, 0)
  expect_equal(exact_log_evidence(model), log(integrate(inner, 0, Inf)$value) - 40, tolerance = 1e-6)
  # prefixes, in the order asked, and the sum over independent dimensions
  data <- simulate_gaussian_mixture(200, components = 2, dim = 2, seed = 5)
  m2 <- gaussian_mixture(data, 1)
  n <- c(200, 3, 50)
  expect_equal(exact_log_evidence(m2, n),
               exact_log_evidence(gaussian_mixture(data$y1, 1), n) +
                 exact_log_evidence(gaussian_mixture(data$y2, 1), n))
  expect_equal(exact_log_evidence(m2, 50), exact_log_evidence(gaussian_mixture(data[1:50, ], 1)))
  # no cancellation for data far from zero
  shifted <- gaussian_mixture(data$y1 + 1e7, 1)
  expect_true(is.finite(exact_log_evidence(shifted)))
  expect_error(exact_log_evidence(gaussian_mixture(data, 2)), "has 2 components.*only with one")
  expect_error(exact_log_evidence(m2, n = 201), "`n` must hold whole numbers between 1 and 200")
})

test_that("data and arguments are checked, naming what is wrong", {
  y <- simulate_gaussian_mixture(30, components = 2, dim = 2, seed = 6)
  bad <- y; bad$y2[7] <- NA
  expect_error(gaussian_mixture(bad), "`y` contains non-finite.*`y2` at row 7")
  bad <- as.matrix(y); bad[3, 1] <- -Inf
  expect_error(gaussian_mixture(bad), "non-finite.*`y1` at row 3")
  bad <- y; bad$label <- letters[1:30]
  expect_error(gaussian_mixture(bad), "numeric columns only; `label` is")
  expect_error(gaussian_mixture(matrix(letters[1:4], 2)), "`y` must be a numeric matrix or data frame")
  expect_error(gaussian_mixture(y[0, ]), "`y` must have at least one row")
  expect_error(gaussian_mixture(numeric()), "`y` must have at least one row")
  expect_error(gaussian_mixture(y, components = 0), "`components` must be a whole number >= 1")
  expect_error(gaussian_mixture(y, components = 2.5), "`components` must be a whole number")
  expect_error(gaussian_mixture(y, components = 31), "`components` \\(31\\) must not exceed the number of observations \\(30\\)")
  expect_error(gaussian_mixture(y, concentration = 0), "`concentration` must be a positive")
  expect_error(gaussian_mixture(y, variance_shape = NA), "`variance_shape` must be a positive")
  expect_error(gaussian_mixture(y, variance_scale = Inf), "`variance_scale` must be a positive")
  expect_error(gaussian_mixture(y, mean_variance_ratio = -1), "`mean_variance_ratio` must be a positive")
  shift <- simulate_shifting_mixture(seed = 1)
  expect_error(gaussian_mixture(shift), "`phase` is a factor")
})

test_that("the model has the paper's 24 free parameters and prints what it is", {
  model <- gaussian_mixture(simulate_gaussian_mixture(100, seed = 7))
  expect_identical(model$dim, 24L)
  expect_identical(model$parameter_names[c(1, 5, 6, 15, 24)],
                   c("log(w1/w5)", "mu[1,y1]", "mu[1,y2]", "log_sigma2[1,y1]", "log_sigma2[5,y2]"))
  expect_output(print(model), "Gaussian mixture \\(5 components, 2 dimensions\\)")
  expect_output(print(model), "observations: 100")
  expect_output(print(model), "parameters:   24")
  expect_match(format(model), "Dirichlet\\(1\\); sigma2_kj ~ InvGamma\\(shape 1, scale 1\\); mu_kj \\| sigma2_kj ~ N\\(0, 4 sigma2_kj\\)", all = FALSE)
  expect_identical(gaussian_mixture(1:3, 1)$label, "Bayesian Gaussian mixture (1 component, 1 dimension)")
})

test_that("simulate_gaussian_mixture draws from the prior and is prefix-consistent", {
  big <- simulate_gaussian_mixture(400, seed = 8)
  small <- simulate_gaussian_mixture(60, seed = 8)
  expect_equal(names(big), c("y1", "y2"))
  expect_equal(small, big[1:60, ], ignore_attr = TRUE)
  expect_identical(attr(small, "component"), attr(big, "component")[1:60])
  par <- attr(big, "parameters")
  expect_equal(sum(par$weights), 1)
  expect_equal(dim(par$means), c(5L, 2L))
  # the values come from their components: standardised residuals are standard normal
  k <- attr(big, "component")
  z <- (as.matrix(big) - par$means[k, ]) / sqrt(par$variances[k, ])
  expect_gt(ks.test(as.vector(z), "pnorm")$p.value, 1e-3)
  set.seed(99); u1 <- runif(1)
  set.seed(99); simulate_gaussian_mixture(10, seed = 1); u2 <- runif(1)
  expect_identical(u1, u2)
  expect_error(simulate_gaussian_mixture(10, components = 0), "`components` must be a whole number >= 1")
  expect_error(simulate_gaussian_mixture(10, dim = 0), "`dim` must be a whole number >= 1")
})

test_that("simulate_shifting_mixture has the paper's three phases, in order", {
  data <- simulate_shifting_mixture(seed = 2)
  expect_identical(dim(data), c(100000L, 4L))
  expect_identical(names(data), c("y1", "y2", "phase", "cluster"))
  expect_identical(as.vector(table(data$phase)), c(1000L, 9000L, 90000L))
  expect_identical(levels(data$phase), c("3 clusters", "5 clusters", "7 clusters"))
  expect_true(all(diff(as.integer(data$phase)) >= 0))
  used <- lapply(split(as.integer(data$cluster), data$phase), function(k) sort(unique(k)))
  expect_identical(unname(used), list(1:3, 1:5, 1:7))
  expect_identical(simulate_shifting_mixture(seed = 2), data)
  expect_false(identical(simulate_shifting_mixture(seed = 3)$y1, data$y1))
  expect_identical(nobs(gaussian_mixture(data[c("y1", "y2")], 7)), 100000L)
})

# Tolerances for the estimators on the mixture come from replicate runs (seeds 1-10) with the
# settings of three_estimators(), on mixture_data() (N = 500 in one dimension, drawn from a
# 3-component mixture):
#   one component (exact evidence known), error mean / sd:
#     SGAIS -0.68 / 0.97, AIS -0.55 / 1.59, NS +0.33 / 0.86
#   three components (the paper's Appendix A.2 model: 8 free parameters), log Z mean / sd:
#     SGAIS -1127.89 / 1.57, AIS -1127.05 / 1.10, NS -1126.62 / 1.29
# Each estimate must lie within its mean +/- 4 sd, and each pair within the difference of their
# means + 4 combined sd. The tests use seed 11, outside the replicates.
test_that("SGAIS, AIS and NS recover the closed-form evidence of a one-component mixture", {
  test_tags("slow")
  model <- gaussian_mixture(mixture_data(), components = 1)
  err <- vapply(three_estimators(model, seed = 11), log_evidence, 0) - exact_log_evidence(model)
  expect_lt(abs(err[["sgais"]] - -0.68), 4 * 0.97)
  expect_lt(abs(err[["ais"]] - -0.55), 4 * 1.59)
  expect_lt(abs(err[["ns"]] - 0.33), 4 * 0.86)
})

test_that("SGAIS, AIS and NS agree on a three-component mixture (paper Appendix A.2)", {
  test_tags("slow")
  model <- gaussian_mixture(mixture_data(), components = 3)
  z <- vapply(three_estimators(model, seed = 11), log_evidence, 0)
  expect_agree(z[["sgais"]], z[["ais"]], -1127.89, -1127.05, 1.57, 1.10)
  expect_agree(z[["sgais"]], z[["ns"]], -1127.89, -1126.62, 1.57, 1.29)
  expect_agree(z[["ais"]], z[["ns"]], -1127.05, -1126.62, 1.10, 1.29)
})

# The evidence of gaussian_mixture() by summing over all K^n allocations of the observations to
# the components, each a Dirichlet-multinomial times a normal-inverse-gamma marginal per
# component and dimension: exact for small n.
mixture_evidence_by_enumeration <- function(y, K, alpha = 1, a0 = 1, b0 = 1, r = 4) {
  y <- as.matrix(y)
  n <- nrow(y)
  alloc <- as.matrix(expand.grid(rep(list(seq_len(K)), n)))
  k0 <- 1 / r
  lp <- lgamma(K * alpha) - lgamma(K * alpha + n) + numeric(nrow(alloc))
  for (k in seq_len(K)) {
    ind <- (alloc == k) + 0
    nk <- rowSums(ind)
    lp <- lp + lgamma(alpha + nk) - lgamma(alpha)
    for (j in seq_len(ncol(y))) {
      s1 <- drop(ind %*% y[, j])
      ybar <- ifelse(nk > 0, s1 / pmax(nk, 1), 0)
      ss <- drop(ind %*% y[, j]^2) - nk * ybar^2
      kn <- k0 + nk
      an <- a0 + nk / 2
      bn <- b0 + ss / 2 + k0 * nk * ybar^2 / (2 * kn)
      lp <- lp + lgamma(an) - lgamma(a0) + a0 * log(b0) - an * log(bn) + 0.5 * log(k0 / kn) -
        nk / 2 * log(2 * pi)
    }
  }
  max(lp) + log(sum(exp(lp - max(lp))))
}

test_that("the enumeration gives the closed-form evidence with one component", {
  test_tags("memcheck")
  y <- scale(faithful)[1:6, ]
  expect_equal(mixture_evidence_by_enumeration(y, 1),
               exact_log_evidence(gaussian_mixture(y, components = 1)), tolerance = 1e-10)
})

# Jump proposals (?sgais_control) must leave each tempered target invariant. On 11 observations
# of scale(faithful) with 3 components, AIS at its defaults (10 jumps per move) was measured
# +0.028 nats off the enumerated evidence, sd 0.141 (seeds 1-12; without jumps +0.32, sd 0.33).
# The test: the mean of seeds 21-26 within 4 of its sds (0.141 / sqrt(6)) of that.
test_that("AIS with jump proposals matches the enumerated evidence of a small mixture", {
  test_tags("slow")
  y <- scale(faithful)[seq(1, 272, length.out = 11), ]
  exact <- mixture_evidence_by_enumeration(y, 3)
  model <- gaussian_mixture(y, components = 3)
  err <- vapply(21:26, function(s) ais(model, seed = s, progress = FALSE)$log_evidence, 0) - exact
  expect_lt(abs(mean(err) - 0.028), 4 * 0.141 / sqrt(6))
})

# Data augmentation (?gaussian_mixture) replaces the jumps and all but one exact step in the
# chunks after the first of a mixture whose data show fewer clusters than components, and must
# leave each tempered target invariant. On the 11 points above sorted by eruption (so that a
# chunk's clusters differ from the earlier ones'), 3 components in chunks of 3, SGAIS at its
# defaults was measured -0.048 nats off the enumerated evidence, sd 0.244 (seeds 1-40; the
# restart grid waits throughout). The test: the mean of seeds 41-46 within 4 of its sds of
# that, and one step per annealing step where the moves augment, not in the first chunk, which
# has no earlier observations to hold at full weight (nor has a restart's run).
test_that("SGAIS's data-augmentation moves match the enumerated evidence of a small mixture", {
  test_tags("slow")
  y <- scale(faithful)[seq(1, 272, length.out = 11), ]
  y <- y[order(y[, 1]), ]
  exact <- mixture_evidence_by_enumeration(y, 3)
  model <- gaussian_mixture(y, components = 3)
  fits <- lapply(41:46, function(s) sgais(model, seed = s, chunk_size = 3, progress = FALSE))
  err <- vapply(fits, `[[`, 0, "log_evidence") - exact
  expect_lt(abs(mean(err) + 0.048), 4 * 0.244 / sqrt(6))
  tr <- fits[[1]]$trajectory
  expect_equal(tr$restarts, c(0, 0, 0, 0))
  expect_equal(tr$sghmc_steps[2:4], tr$annealing_steps[2:4])
  expect_gt(tr$sghmc_steps[1], tr$annealing_steps[1])
})

# faithful in its raw units with 2 components: tempering from the prior leaves one component
# over both clusters and the other empty near 0, 306 nats below the evidence (-1235.878, Stan
# + bridge sampling, inst/validation/references.csv; an independent SMC over the allocations
# gave -1235.845); nested sampling's live points follow the same mode (-307). With jump
# proposals, single runs at the defaults measured on seeds 1-8: AIS -0.45 (sd 1.14), SGAIS
# -0.43 (sd 1.05), nested sampling -1.52 (sd 1.80); without them AIS was -306 in 5 of 6 seeds.
# That check (seeds 11 and 12 within 4 sd; nested sampling, which takes 20 s a run, seed 11) is
# a statistical check of inst/validation/checks.R, too slow for this suite.

# More components than clusters: scale(faithful) has 2, and with 4 components a proposal that
# fitted one component to each of 4 k-means clusters split real clusters and pulled particles
# into that split (one AIS run -23.7 nats, seed 1, replicate 2). The proposals now take the
# number of clusters whose allocation the model finds most probable, refined by classification
# EM: faithful's two clusters (short eruptions after about 54 minutes, long ones after 80) for
# 2, 3 or 4 components, in either units.
test_that("jump proposals use as many clusters as the data hold", {
  test_tags("memcheck")
  clusters <- function(y, K) {
    .Call(sgais:::C_ffi_gaussian_mixture_jump_clusters, gaussian_mixture(y, components = K))
  }
  for (K in 2:4) {
    cl <- clusters(scale(faithful), K)
    expect_length(cl$share, 2)
    expect_equal(sum(cl$share), 1)
    expect_equal(sort(cl$share), c(0.36, 0.64), tolerance = 0.03)
  }
  raw <- clusters(faithful, 2)
  expect_equal(raw$mean[order(raw$mean[, 2]), ], rbind(c(2.04, 54.5), c(4.29, 80)),
               tolerance = 0.02, ignore_attr = TRUE)
  # quakes (scaled latitude and longitude) holds 3 clusters
  expect_length(clusters(scale(quakes[, c("lat", "long")]), 3)$share, 3)
  # one Gaussian cluster: the other components are proposed empty
  one <- clusters(withr_seed(1, matrix(stats::rnorm(200), 100, 2)), 3)
  expect_length(one$share, 1)
  # too few points for two clusters of 2
  expect_length(clusters(faithful[1:3, ], 3)$share, 1)
  expect_error(clusters(scale(faithful), 1), "2 to 12 components")
})

# Two small clusters that have just appeared in a stream (2 per cent of the points each and less,
# far from the others): k-means++ alone often put the sixth centre in a large cluster in every
# start and merged the two, so that a restart annealed from a reference of 5 clusters and came
# out far low (inst/design.md, Mixtures). The start from the 5 clusters' means and the point
# farthest from them finds both; with a few dozen points each, splitting a large cluster has the
# smaller sum of squares, and the model's own score picks the start that keeps them apart.
test_that("the clusters behind the reference include small far ones", {
  centres <- cbind(rep(c(0, 12, 24), 2), rep(c(0, 12), each = 3))
  for (sizes in list(c(1700, 1700, 700, 700, 90, 90), c(1550, 1550, 545, 545, 30, 30))) {
    z <- rep(1:6, sizes)
    found <- vapply(1:20, function(s) withr_seed(s, {
      y <- centres[z, ] + matrix(stats::rnorm(2 * length(z)), ncol = 2)
      m <- gaussian_mixture(y[sample(nrow(y)), ], components = 6)
      length(.Call(sgais:::C_ffi_gaussian_mixture_jump_clusters, m)$share)
    }), 0)
    expect_identical(found, rep(6, 20))
  }
})

# theta with its components relabelled: component k of the result is component ord[k] of theta
relabel_mixture <- function(theta, K, D, ord) {
  z <- c(theta[seq_len(K - 1)], 0)
  mu <- matrix(theta[K - 1 + seq_len(K * D)], K, D, byrow = TRUE)
  s <- matrix(theta[K - 1 + K * D + seq_len(K * D)], K, D, byrow = TRUE)
  c(z[ord[-K]] - z[ord[K]], t(mu[ord, , drop = FALSE]), t(s[ord, , drop = FALSE]))
}

grid_clusters <- function(K, n = 200, seed = 1) {
  withr_seed(seed, {
    centres <- as.matrix(expand.grid(0:2, 0:3))[seq_len(K), ] * 12
    z <- rep_len(seq_len(K), n)
    scale(centres[z, ] + matrix(stats::rnorm(2 * n), n, 2))
  })
}

# The jump proposal is q = (P + Q) / 2 summed over the K! relabellings of its argument (the
# particles are kept in one labelling, gm_canonicalize), P the particles' Gaussian factored by
# component and Q the clusters' conjugate posteriors; both sums are permanents, computed by a sum
# over subsets, so that jumps serve up to 12 components (summing the Gaussian over K!
# relabellings one by one stopped them at 6).
test_that("jump proposal densities are sums over relabellings, checked by brute force", {
  test_tags("memcheck")
  parts <- function(model, theta, mean, L, n = 100) {
    .Call(sgais:::C_ffi_gaussian_mixture_jump_parts, model, theta, mean, L, n)
  }
  K <- 4
  D <- 2
  model <- gaussian_mixture(grid_clusters(K), components = K)
  dim <- model$dim
  withr_seed(2, {
    theta <- stats::rnorm(dim)
    mean <- stats::rnorm(dim)
    L <- diag(stats::runif(dim, 0.2, 1), dim)
    L[lower.tri(L)] <- stats::rnorm(dim * (dim - 1) / 2, sd = 0.1)
  })
  perms <- as.matrix(expand.grid(rep(list(seq_len(K)), K)))
  perms <- perms[apply(perms, 1, function(p) length(unique(p)) == K), ]
  all <- vapply(seq_len(nrow(perms)), function(i) relabel_mixture(theta, K, D, perms[i, ]),
                numeric(dim))
  q <- parts(model, all, mean, L)
  # the same density at every relabelling
  expect_equal(q$clusters, rep(q$clusters[1], nrow(perms)), tolerance = 1e-10)
  expect_equal(q$pop, rep(q$pop[1], nrow(perms)), tolerance = 1e-10)
  # P by brute force from its factors: independent normals and a Dirichlet in z
  a <- q$factors[seq_len(K)]
  fm <- matrix(q$factors[K + seq_len(2 * K * D)], ncol = 1)
  fsd <- q$factors[K + 2 * K * D + seq_len(2 * K * D)]
  expect_equal(fsd, sqrt(diag(L %*% t(L)))[-seq_len(K - 1)])
  expect_equal(fm[, 1], mean[-seq_len(K - 1)])
  expect_equal(a / sum(a), exp(c(mean[1:3], 0)) / sum(exp(c(mean[1:3], 0))))
  lb <- c(theta[1:3], 0) - log(sum(exp(c(theta[1:3], 0))))
  terms <- apply(perms, 1, function(p) {
    x <- relabel_mixture(theta, K, D, p)
    lbx <- c(x[1:3], 0) - log(sum(exp(c(x[1:3], 0))))
    sum(a * lbx) + lgamma(sum(a)) - sum(lgamma(a)) +
      sum(dnorm(x[-(1:3)], fm, fsd, log = TRUE))
  })
  expect_equal(q$pop[1], max(terms) + log(sum(exp(terms - max(terms)))), tolerance = 1e-10)
  # draws from P follow its factors
  d <- parts(model, matrix(theta, dim, 4000), mean, L)$draws
  d <- matrix(d, dim)
  expect_equal(rowMeans(d[-(1:3), ]), fm[, 1], tolerance = 4 * max(fsd) / sqrt(4000) / mean(abs(fm)))
  expect_equal(apply(d[-(1:3), ], 1, sd), fsd, tolerance = 0.1)
  w <- exp(rbind(d[1:3, ], 0))
  expect_equal(rowMeans(sweep(w, 2, colSums(w), "/")), a / sum(a), tolerance = 0.05)
  # beyond 6 components: every relabelling still has the same density
  for (K in c(8, 12)) {
    model <- gaussian_mixture(grid_clusters(K, 240), components = K)
    dim <- model$dim
    theta <- withr_seed(K, stats::rnorm(dim))
    all <- cbind(theta, relabel_mixture(theta, K, D, rev(seq_len(K))),
                 relabel_mixture(theta, K, D, withr_seed(K, sample(K))))
    q <- parts(model, all, withr_seed(K + 1, stats::rnorm(dim)), diag(0.5, dim))
    expect_true(all(is.finite(q$clusters)) && all(is.finite(q$pop)))
    expect_equal(q$clusters, rep(q$clusters[1], 3), tolerance = 1e-10)
    expect_equal(q$pop, rep(q$pop[1], 3), tolerance = 1e-10)
  }
})

# M particles near the mode that puts one component on each of the K grid clusters of n points
# (noise sd 0.02), each in a random labelling, with random log-weights.
scattered_population <- function(K, n, M, seed) {
  D <- 2
  y <- grid_clusters(K, n)
  centres <- stats::aggregate(as.data.frame(y), list(rep_len(1:K, n)), mean)[, -1]
  base <- c(rep(0, K - 1), t(as.matrix(centres)), rep(log(0.01), K * D))
  pop <- withr_seed(seed, vapply(seq_len(M), function(i) {
    relabel_mixture(base + stats::rnorm(length(base), sd = 0.02), K, D, sample(K))
  }, numeric(length(base))))
  list(y = y, model = gaussian_mixture(y, components = K), pop = pop,
       logw = withr_seed(seed + 1, stats::rnorm(M)))
}

# 6 clusters on a 3 x 2 grid, standardised: cluster centres at y1 = -1.2, 0, 1.2 and y2 = -1, 1,
# so that y1 + 0.618 y2 (the key order of gm_key_order) nearly ties between two pairs, and the
# first coordinate ties in three. The population alignment must still put every particle in one
# labelling, leave each particle's densities unchanged and not depend on the particles' order.
test_that("the particles of a mixture are put in one labelling, whatever ties a fixed order has", {
  test_tags("memcheck")
  K <- 6
  D <- 2
  M <- 40
  p <- scattered_population(K, 300, M, seed = 3)
  y <- p$y
  model <- p$model
  pop <- p$pop
  logw <- p$logw
  out <- .Call(sgais:::C_ffi_gaussian_mixture_canonicalize, model, pop, logw)
  mu <- function(th) matrix(th[K - 1 + seq_len(K * D)], K, D, byrow = TRUE)
  for (i in seq_len(M)) expect_lt(max(abs(mu(out[, i]) - mu(out[, 1]))), 0.2)
  # relabelling leaves the density alone (checked in R on a few of the particles it moved, as R
  # is slow under valgrind)
  moved <- which(colSums(out != pop) > 0)
  expect_gt(length(moved), 0)
  for (i in head(moved, 4)) {
    before <- ref_mixture(pop[, i], y, K)
    after <- ref_mixture(out[, i], y, K)
    expect_equal(after$log_lik, before$log_lik, tolerance = 1e-10)
    expect_equal(after$log_prior, before$log_prior, tolerance = 1e-10)
  }
  # the particles in another order get the same points
  o <- withr_seed(5, sample(M))
  again <- .Call(sgais:::C_ffi_gaussian_mixture_canonicalize, model, pop[, o], logw[o])
  expect_equal(again, out[, o])
})

# The region C the particles are relabelled into holds one point of every class: a particle of
# the population relabelled at random maps back to itself, a particle already there is not
# moved, and a point C cuts through (a component's mean moved to another's cluster) is mapped
# to one relabelling only, whatever labelling it came in. The exact kernels reject moves out of
# C (model.h, to_region), which keeps them invariant for the target restricted to C.
test_that("a mixture's particles have one region, and every relabelling maps into it once", {
  K <- 4
  D <- 2
  M <- 30
  p <- scattered_population(K, 200, M, seed = 6)
  model <- p$model
  pop <- p$pop
  logw <- p$logw
  canon <- .Call(sgais:::C_ffi_gaussian_mixture_canonicalize, model, pop, logw)
  shuffled <- withr_seed(8, vapply(seq_len(M), function(i) {
    relabel_mixture(canon[, i], K, D, sample(K))
  }, numeric(nrow(pop))))
  back <- .Call(sgais:::C_ffi_gaussian_mixture_to_region, model, pop, logw, shuffled)
  expect_equal(back$x, canon, tolerance = 1e-12)
  stay <- .Call(sgais:::C_ffi_gaussian_mixture_to_region, model, pop, logw, canon)
  expect_false(any(stay$moved))
  expect_identical(stay$x, canon)
  # a point between labellings: component 1's mean halfway to component 2's
  odd <- canon[, 1]
  mu1 <- K - 1 + 1:D
  odd[mu1] <- (odd[mu1] + canon[K - 1 + D + 1:D, 1]) / 2
  perms <- list(1:K, c(2, 1, 3, 4), rev(1:K), c(3, 4, 1, 2))
  all <- vapply(perms, function(p) relabel_mixture(odd, K, D, p), numeric(nrow(pop)))
  mapped <- .Call(sgais:::C_ffi_gaussian_mixture_to_region, model, pop, logw, all)$x
  for (j in 2:4) expect_equal(mapped[, j], mapped[, 1], tolerance = 1e-12)
  expect_error(.Call(sgais:::C_ffi_gaussian_mixture_to_region, model, pop, logw, 1:3),
               class = "sgais_error_input")
})

# The reference distribution (setting `reference`; src/gaussian_mixture_reference.c,
# gm_ref_log_density): the clusters' conjugate posteriors summed over the relabellings,
# normalised; with more components than clusters, the equal mixture of such sums for 3 and for 4
# k-means clusters. Its draws and its density must agree (E_q0[prior / q0] = 1, checked where q0
# is broad enough for the ratio to have a small variance: a target of half an observation), it
# must be symmetric, and its gradient (through the permanents' marginals, weighted by each set's
# share) must match finite differences.
test_that("a mixture's reference distribution is a normalised, symmetric density with the right gradient", {
  D <- 2
  y <- grid_clusters(3, 150)
  for (K in 3:4) {
    model <- gaussian_mixture(y, components = K)
    dim <- K - 1 + 2 * K * D
    reference <- function(theta, n) {
      .Call(sgais:::C_ffi_gaussian_mixture_reference, model, as.matrix(theta), n, 7L)
    }
    draws <- matrix(reference(matrix(0, dim, 20000), 0.5)$draws, dim)
    lq <- reference(draws, 0.5)$value
    lp <- .Call(sgais:::C_ffi_model_log_density, model, draws)[1, ]
    w <- exp(lp - lq)
    expect_lt(abs(mean(w) - 1), 4 * stats::sd(w) / sqrt(length(w)))
    expect_lt(stats::sd(w) / sqrt(length(w)), 0.015)
    # at the data's size: symmetric, and the gradient of its log
    at <- matrix(reference(matrix(0, dim, 4), 150)$draws, dim)
    r <- reference(at, 150)
    g <- matrix(r$gradient, dim)
    for (i in 1:4) {
      swapped <- relabel_mixture(at[, i], K, D, c(2:K, 1))
      expect_equal(reference(swapped, 150)$value, r$value[i], tolerance = 1e-10)
      num <- vapply(seq_len(dim), function(j) {
        e <- replace(numeric(dim), j, 1e-5)
        diff(reference(cbind(at[, i] - e, at[, i] + e), 150)$value) / 2e-5
      }, 0)
      expect_equal(g[, i], num, tolerance = 1e-6)
    }
  }
})

# A cluster that appears mid-stream (2 clusters, then 3): a run in chunks cannot move a
# component onto it through the earlier data's likelihood, nor split the component that covered
# both (importance weights cannot cross the change of mode). Once the data show as many
# clusters as components the run restarts from the reference built on all of them (sgais.c,
# restart_due), with periodic and surprise restarts off here, and ends at the closed form.
test_that("SGAIS restarts from the reference once a mixture's data show all its clusters", {
  d <- appearing_clusters()
  y <- d$y
  z <- d$z
  run <- function(rows, particles = 20, ...) {
    sgais(gaussian_mixture(y[rows, ], components = 3), chunk_size = 100, restart_every = Inf,
          restart_threshold = Inf, particles = particles, early_particles = particles, seed = 1,
          progress = FALSE, ...)
  }
  fit <- run(seq_len(nrow(y)))
  tr <- fit$trajectory
  expect_equal(sum(tr$restarts), 1)
  expect_identical(tr$n[tr$restarts > 0], 400L) # not before the third cluster appears (at 301)
  expect_lt(abs(fit$log_evidence - separated_log_evidence(y, z)), max(1, 3 * fit$log_evidence_se))
  # without the reference, no restart where it came (few particles and moves: only that is
  # checked; with the reference these settings restart at 400 too)
  off <- quietly(run(1:400, particles = 10, sghmc_steps = 2, min_sghmc_steps = 1,
                     reference = FALSE))
  expect_equal(sum(off$trajectory$restarts), 0)
})

# Annealing from the reference distribution (the default, setting `reference`): the evidence of
# two well-separated clusters is log 2! + the Dirichlet-multinomial of the allocation + each
# cluster's one-component evidence (exact_log_evidence()), up to a negligible error; SGAIS, AIS
# and nested sampling (its prior repartitioned) must give it from the reference, reproducibly
# and on any number of threads.
test_that("every estimator from the reference distribution recovers the evidence of separated clusters", {
  test_tags("slow")
  set.seed(3)
  y <- rbind(matrix(rnorm(120, sd = 0.1), 60), matrix(rnorm(120, mean = 2, sd = 0.1), 60))
  z <- rep(1:2, each = 60)
  closed <- separated_log_evidence(y, z)
  model <- gaussian_mixture(y[sample(120), ], components = 2)
  for (method in list(sgais, ais, nested_sampling)) {
    fit <- method(model, seed = 1, progress = FALSE)
    expect_lt(abs(fit$log_evidence - closed), max(1, 3 * fit$log_evidence_se))
    expect_identical(method(model, seed = 1, progress = FALSE)$log_evidence, fit$log_evidence)
    old <- sgais_threads(1)
    expect_identical(method(model, seed = 1, progress = FALSE)$log_evidence, fit$log_evidence)
    sgais_threads(old)
  }
  # from the prior the estimates differ (nested sampling then takes 9 s: not run here)
  for (method in list(sgais, ais)) {
    off <- method(model, reference = FALSE, seed = 1, progress = FALSE)
    expect_false(identical(off$log_evidence, method(model, seed = 1, progress = FALSE)$log_evidence))
  }
  # on in the robust presets, off in the paper's, and a no-op for models without a reference
  # (one component: no jumps)
  expect_true(sgais_control()$settings$reference)
  expect_true(ais_control()$settings$reference)
  expect_true(nested_control()$settings$reference)
  expect_false(sgais_control("paper")$settings$reference)
  one <- gaussian_mixture(y, components = 1)
  expect_identical(sgais(one, seed = 1, progress = FALSE)$log_evidence,
                   sgais(one, reference = FALSE, seed = 1, progress = FALSE)$log_evidence)
  # with fewer clusters than components, from the chosen clusters alone (EM finds no bridge
  # here): as from the prior, which AIS crosses at several times the cost
  expect_identical(sgais:::model_reference_level(model), "complete")
  three <- gaussian_mixture(y, components = 3)
  expect_identical(sgais:::model_reference_level(three), "usable")
  fit <- sgais(three, seed = 1, progress = FALSE)
  prior <- ais(three, reference = FALSE, seed = 1, progress = FALSE)
  expect_lt(abs(fit$log_evidence - prior$log_evidence),
            max(1, 3 * sqrt(fit$log_evidence_se^2 + prior$log_evidence_se^2)))
})

# Beyond the SG_JUMP_POINTS observations a mixture's clusters are found on, the reference is
# refitted on all of them (model.h, ref_refit; gaussian_mixture_reference.c): centred on their
# posterior and as narrow, AIS goes from it to the posterior in a step or two.
test_that("a mixture's reference is refitted on all the observations its clusters were not found on", {
  set.seed(8)
  z <- rep(1:3, length.out = 6000)
  y <- cbind(c(0, 12, 0)[z], c(0, 0, 12)[z]) + matrix(rnorm(12000), ncol = 2)
  fit <- ais(gaussian_mixture(y, components = 3), seed = 1, progress = FALSE)
  expect_lt(abs(fit$log_evidence - separated_log_evidence(y, z)),
            max(0.5, 3 * fit$log_evidence_se))
  expect_lte(nrow(fit$schedule), 2)
})

# With fewer clusters than components, spare components that would claim next to no
# observations, or that EM empties, stay at their prior in the posterior, and the reference is
# the chosen clusters alone with them there (gaussian_mixture_reference.c, gm_ref_sets): AIS
# goes from it in one step, to within a tenth of a nat or so of the separated clusters' closed
# form (which leaves out the allocations that give a spare component a few points). It used to
# mix in partitions that split clusters among the spare components, where the posterior has
# next to no mass: 4 or 5 steps whose local moves were nearly all refused. The jumps move the
# particles, so the run does not warn that they barely moved.
test_that("an overfitted mixture whose spare components stay at the prior starts from its clusters", {
  set.seed(2)
  z <- rep(1:4, length.out = 1000)
  y <- scale(cbind(c(0, 12, 0, 12)[z], c(0, 0, 12, 12)[z]) + matrix(rnorm(2000), ncol = 2))
  model <- gaussian_mixture(y, components = 6)
  expect_identical(sgais:::model_reference_level(model), "usable")
  expect_silent(fit <- ais(model, seed = 1, progress = FALSE))
  expect_identical(nrow(fit$schedule), 1L)
  expect_lt(abs(fit$log_evidence - separated_log_evidence(y, z, components = 6)),
            max(0.5, 3 * fit$log_evidence_se))
})

# With more clusters than components the posterior chooses which clusters to merge, and a
# reference on k-means' merge held the particles in a worse one (the paper's shifting stream,
# 3 components: 87 nats low at 2,000 points): such a mixture anneals from the prior.
test_that("a mixture with fewer components than clusters does not start from the reference", {
  set.seed(5)
  centres <- rbind(c(0, 0), c(12, 0), c(0, 12), c(12, 12))
  y <- centres[rep(1:4, 20), ] + matrix(rnorm(160), ncol = 2)
  # (few particles and moves: only where the runs start is checked)
  lean <- function(model, ...) {
    ais(model, particles = 20, sghmc_steps = 2, min_sghmc_steps = 1, seed = 1, progress = FALSE,
        ...)$log_evidence
  }
  two <- gaussian_mixture(y, components = 2)
  expect_identical(sgais:::model_reference_level(two), "none")
  expect_identical(lean(two), lean(two, reference = FALSE))
  four <- gaussian_mixture(y, components = 4)
  expect_identical(sgais:::model_reference_level(four), "complete")
  expect_false(identical(lean(four), lean(four, reference = FALSE)))
})

# Overlapping clusters: the reference, each cluster's conjugate posterior as if its allocation
# were certain, sat away from the posterior's mass (AIS and SGAIS from it 14 nats low on 1,000
# of these points), and nested sampling, whose likelihood became L prior / q0, climbed out of
# q0's tails over thousands of iterations of capped walks (here: 4,174 iterations, 46 nats
# high). Such a mixture runs from the prior. The evidence: AIS from the prior, -484.68 (SE 0.21),
# and nested sampling with 20 live points, -484.48.
test_that("a mixture of overlapping clusters does not start from the reference", {
  model <- gaussian_mixture(simulate_gaussian_mixture(100, seed = 4), components = 3)
  expect_identical(sgais:::model_reference_level(model), "none")
  fit <- quietly(nested_sampling(model, live_points = 10, max_walk_steps = 300, jumps = 10,
                                 seed = 1, progress = FALSE))
  expect_lt(fit$iterations, 1000)
  expect_lt(abs(fit$log_evidence - -484.6), max(3, 3 * fit$log_evidence_se))
})

# Data far outside the prior's scale of a component (raw units: faithful's waiting times) with
# more components than clusters: a component without a cluster stays empty, its posterior is its
# prior, and the reference that leaves it there is used (gm_ref_ok: usable, not complete). The
# evidence is then the separated clusters' with the empty component's labellings,
# log K! / (K - C)! + the Dirichlet-multinomial of K components + each cluster's evidence.
test_that("an overfitted mixture of data outside the prior's scale starts from the reference", {
  set.seed(4)
  z <- rep(1:2, each = 80)
  y <- cbind(c(2, 4)[z], c(55, 80)[z]) + matrix(rnorm(320, sd = c(0.3, 6)), ncol = 2, byrow = TRUE)
  model <- gaussian_mixture(y, components = 3)
  alpha <- model$hyper$concentration
  closed <- lfactorial(3) + lgamma(3 * alpha) - lgamma(3 * alpha + 160) +
    sum(lgamma(alpha + table(z)) - lgamma(alpha)) +
    sum(vapply(1:2, function(k) {
      exact_log_evidence(gaussian_mixture(y[z == k, ], components = 1))
    }, 0))
  # usable, not complete: a stream's restarts still wait for a third cluster
  expect_identical(sgais:::model_reference_level(model), "usable")
  fit <- sgais(model, seed = 1, progress = FALSE)
  expect_lt(abs(fit$log_evidence - closed), max(1, 3 * fit$log_evidence_se))
  # and cheaper than the path from the prior (20 particles: the path from the prior is slow)
  lean <- function(...) {
    quietly(sgais(model, particles = 20, early_particles = 20, seed = 1, progress = FALSE, ...))
  }
  from_reference <- lean()
  off <- lean(reference = FALSE)
  expect_false(identical(from_reference$log_evidence, off$log_evidence))
  expect_lt(from_reference$gradient_evaluations, off$gradient_evaluations / 2)
})

# While a mixture's data show fewer clusters than components (its reference usable, not
# complete), SGAIS and AIS move it once per annealing step whatever `max_rounds` (src/anneal.c,
# sg_moves_decorrelate): the spare component keeps the particles correlated with their start
# along directions that more local rounds do not decorrelate. With as many clusters as
# components the moves repeat as told.
test_that("SGAIS and AIS move a spare-component mixture once per step, with max_rounds times the jumps", {
  set.seed(4)
  z <- rep(1:2, each = 80)
  y <- cbind(c(2, 4)[z], c(55, 80)[z]) + matrix(rnorm(320, sd = c(0.3, 6)), ncol = 2, byrow = TRUE)
  for (method in c("sgais", "ais")) {
    run <- function(components, rounds, jumps = 10) {
      quietly(do.call(method, c(
        list(gaussian_mixture(y, components = components), particles = 20, max_rounds = rounds,
             max_correlation = 1e-9, jumps = jumps, seed = 1, progress = FALSE),
        if (method == "sgais") list(early_particles = 20))))
    }
    spare <- run(3, 3)
    once <- run(3, 1, jumps = 30)
    expect_identical(spare$gradient_evaluations, once$gradient_evaluations)
    expect_identical(spare$log_evidence, once$log_evidence)
    expect_gt(run(2, 3)$gradient_evaluations, 1.5 * run(2, 1)$gradient_evaluations)
  }
})

# Four separated clusters for six components, shuffled: past exact_until the mini-batch moves
# left the spare components where no posterior puts them, and a chunk came out tens of nats low
# with nothing in the trace to say so. While the data show fewer clusters than components every
# chunk moves exactly (with jumps, which only exact moves make), whatever restarts the run may
# make (none here: its grid waits meanwhile).
test_that("an overfitted mixture moves exactly in every chunk and its trajectory stays right", {
  set.seed(24)
  n <- 1200
  centres <- rbind(c(0, 0), c(12, 0), c(0, 12), c(12, 12))
  z <- sample(rep(1:4, length.out = n))
  y <- scale(centres[z, ] + matrix(rnorm(2 * n), ncol = 2))
  run <- function(M = 40, ...) {
    quietly(sgais(gaussian_mixture(y, components = 6), exact_until = 300, chunk_size = 300,
                  first_chunk_size = 300, particles = M, early_particles = M, seed = 4,
                  progress = FALSE, ...))
  }
  fit <- run()
  tr <- fit$trajectory
  expect_equal(tr$n, c(300, 600, 900, 1200))
  expect_false(anyNA(tr$jump_acceptance))
  expect_equal(tr$restarts, c(0, 0, 0, 0))
  # (30 particles: the fewest with which the mini-batch moves were seen to fail here)
  never <- run(30, restart_every = Inf, restart_threshold = Inf, reference = FALSE)
  expect_false(anyNA(never$trajectory$jump_acceptance))
  closed <- vapply(tr$n, function(k) {
    separated_log_evidence(y[seq_len(k), ], z[seq_len(k)], components = 6)
  }, 0)
  expect_lt(max(abs(tr$log_evidence - closed) - pmax(1, 3 * tr$log_evidence_se)), 0)
})

# Without jumps (so without the moves that augment) the grid's restart at 120 anneals twice the
# particles from the reference of 3 clusters for 4 components, and the next chunk resamples them
# down (src/sgais.c, chunk_begin): a run that ends at the restart continues as the run at once.
# With them the grid waits while the data show fewer clusters than components (src/restart.c).
test_that("a run that ends at a restart from an incomplete reference continues exactly", {
  set.seed(3)
  z <- sample(rep(1:3, 80))
  y <- rbind(c(0, 0), c(12, 0), c(0, 12))[z, ] + matrix(rnorm(480), ncol = 2)
  run <- function(y, jumps = 0) {
    quietly(sgais(gaussian_mixture(y, components = 4), exact_until = 60, chunk_size = 60,
                  first_chunk_size = 60, particles = 10, early_particles = 10, jumps = jumps,
                  seed = 2, progress = FALSE))
  }
  expect_equal(run(y, jumps = 10)$trajectory$restarts, c(0, 0, 0, 0))
  fit <- run(y)
  half <- run(y[1:120, ])
  expect_equal(half$trajectory$restarts, c(0, 1))
  expect_identical(ncol(half$state$resume[[1]]$theta), 20L)
  whole <- quietly(sgais(half, y[121:240, ], progress = FALSE))
  expect_equal(whole$trajectory$restarts, c(0, 1, 0, 1))
  expect_identical(state_without_time(whole$state), state_without_time(fit$state))
  expect_identical(whole$log_evidence, fit$log_evidence)
})

# A restart (sgais_restart()) anneals all the observations so far as one chunk from a usable
# reference, not only a complete one: on the paper's shifting stream in order (7 components, 5
# clusters by 6,000 points) the restart run in chunks from the prior went 6,600 nats low, and
# the trajectory stayed low until the next restart; in one chunk from the reference its
# estimate was 2 nats from AIS (inst/design.md, "Experiments behind decisions"). From a reference
# of fewer clusters than components it anneals twice the particles.
test_that("a restart anneals in one chunk from a usable reference, in chunks without one", {
  set.seed(4)
  z <- rep(1:2, each = 80)
  y <- cbind(c(2, 4)[z], c(55, 80)[z]) + matrix(rnorm(320, sd = c(0.3, 6)), ncol = 2, byrow = TRUE)
  cs <- list(early_particles = 10L, chunk_size = 40L, first_chunk_size = 40L,
             restart_threshold = 5, trigger_due = 160, trigger_on_reference = TRUE)
  # the restart run's chunk and particles, and the particles it is given
  run_of <- function(model, whole = TRUE) {
    seen <- NULL
    run <- function(model, state, n_end, cs, schedule, budget) {
      seen <<- c(list(drawn = ncol(state$theta)), cs)
      stop("the restart's run")
    }
    state <- list(key = c(1L, 2L), lambdas = numeric(0))
    expect_error(sgais:::sgais_restart(model, state, 120, cs, run, whole), "the restart's run")
    # a restart run does not restart itself
    expect_identical(c(seen$restart_threshold, seen$trigger_due), c(Inf, Inf))
    c(chunk = seen$chunk_size, particles = seen$early_particles, drawn = seen$drawn)
  }
  # fewer clusters than components: one chunk, twice the particles
  usable <- gaussian_mixture(y, components = 3)
  expect_identical(sgais:::model_reference_level(usable), "usable")
  expect_identical(run_of(usable), c(chunk = 120L, particles = 20L, drawn = 20L))
  complete <- gaussian_mixture(y, components = 2)
  expect_identical(sgais:::model_reference_level(complete), "complete")
  expect_identical(run_of(complete), c(chunk = 120L, particles = 10L, drawn = 10L))
  # reference off (restart_policy()), or none for the data: chunks
  expect_identical(run_of(usable, whole = FALSE), c(chunk = 40L, particles = 10L, drawn = 10L))
  set.seed(5)
  centres <- rbind(c(0, 0), c(12, 0), c(0, 12), c(12, 12))
  four <- centres[rep(1:4, 30), ] + matrix(rnorm(240), ncol = 2)
  none <- gaussian_mixture(four, components = 2)
  expect_identical(sgais:::model_reference_level(none), "none")
  expect_identical(run_of(none), c(chunk = 40L, particles = 10L, drawn = 10L))
})

# A prior on the data's scale with fewer clusters than components (scale(faithful), 3
# components): a component without a cluster would claim observations, so the reference is the
# bridge sets (gm_bridge: the two clusters and a third component fitted by EM, which settles
# between them with about 5% of the weight). From the prior the same AIS was 1.4 to 2.1 nats low
# on 3 of seeds 1-4 (a transition the particles crossed late); the reference is
# inst/validation/references.csv's (Stan + bridge sampling, -450.1903, checked by an SMC over
# the allocations). The first chunk of a longer run starts from the k-means sets instead, which
# leave the spare components free for clusters that later data may show.
test_that("an overfitted mixture with a prior on the data's scale starts from a bridge reference", {
  model <- gaussian_mixture(scale(datasets::faithful), components = 3)
  expect_identical(sgais:::model_reference_level(model), "usable")
  # (few particles and moves: only where the runs start is checked)
  lean <- list(particles = 20, sghmc_steps = 2, min_sghmc_steps = 1, seed = 1, progress = FALSE)
  expect_false(identical(do.call(ais, c(list(model), lean))$log_evidence,
                         do.call(ais, c(list(model, reference = FALSE), lean))$log_evidence))
  chunks <- c(lean, list(early_particles = 20, chunk_size = 100, restart_every = Inf))
  first <- function(...) {
    quietly(do.call(sgais, c(list(model), chunks, ...)))$trajectory$log_evidence[1]
  }
  expect_false(identical(first(), first(list(reference = FALSE))))
})

test_that("from the bridge reference an overfitted mixture's evidence is right", {
  test_tags("slow")
  for (K in 3:4) {
    model <- gaussian_mixture(scale(datasets::faithful), components = K)
    # references.csv: Stan + bridge sampling (K = 3), an SMC over the allocations (K = 4)
    exact <- c(-450.1903, -453.0105)[K - 2]
    # the whole data from the bridge sets; in chunks of 100, the first from the k-means sets
    fits <- list(ais(model, seed = 1, progress = FALSE), sgais(model, seed = 1, progress = FALSE),
                 sgais(model, chunk_size = 100, seed = 1, progress = FALSE))
    for (fit in fits) {
      expect_lt(abs(fit$log_evidence - exact), max(0.6, 3 * fit$log_evidence_se))
    }
  }
})

# A bounded reservoir holds too few observations for restarts or for the exact moves of the
# chunks whose data show fewer clusters than components (warn_unrestarted()): SGAIS warns before
# a mixture's run, in memory and streamed, and not without the reservoir.
test_that("SGAIS warns before a mixture's run with a bounded reservoir", {
  y <- simulate_gaussian_mixture(400, components = 2, seed = 1)
  model <- gaussian_mixture(y, components = 2)
  unreliable <- function(code) {
    said <- character(0)
    withCallingHandlers(code, sgais_warning_unreliable = function(w) {
      said <<- c(said, conditionMessage(w))
      invokeRestart("muffleWarning")
    })
    any(grepl("bounded `reservoir_size`", said))
  }
  run <- function(...) {
    sgais(model, chunk_size = 100, exact_until = 100, particles = 10, early_particles = 10,
          max_rounds = 1, progress = FALSE, seed = 1, ...)
  }
  expect_true(unreliable(run(reservoir_size = 200)))
  expect_false(unreliable(run()))
  expect_true(unreliable(sgais_stream(gaussian_mixture(y[1:10, ], components = 2), y,
                                      block_size = 200, chunk_size = 100, exact_until = 100,
                                      reservoir_size = 200, particles = 10, early_particles = 10,
                                      max_rounds = 1, progress = FALSE, seed = 1)))
})
