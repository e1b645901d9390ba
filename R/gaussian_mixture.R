#' Bayesian Gaussian mixture model
#'
#' The paper's third model (Cameron et al. 2019, Appendix B.3): each observation \eqn{y_i \in
#' R^d}{y_i in R^d} comes from one of \eqn{K} normal components with diagonal covariances, the
#' component summed out,
#' \deqn{p(y_i \mid \theta) = \sum_{k=1}^K \beta_k \prod_{j=1}^d N(y_{ij}; \mu_{kj}, \sigma^2_{kj}),}{
#' p(y_i | theta) = sum_k beta_k prod_j N(y_ij; mu_kj, sigma2_kj),}
#' with priors \eqn{\beta \sim \mathrm{Dirichlet}(\alpha)}{beta ~ Dirichlet(alpha)},
#' \eqn{\sigma^2_{kj} \sim \mathrm{InvGamma}(a, b)}{sigma2_kj ~ InvGamma(shape a, scale b)} and
#' \eqn{\mu_{kj} \mid \sigma^2_{kj} \sim N(0, r \sigma^2_{kj})}{mu_kj | sigma2_kj ~ N(0, r
#' sigma2_kj)}; the paper's values \eqn{\alpha = a = b = 1}{alpha = a = b = 1} and \eqn{r = 4}
#' are the defaults.
#'
#' The samplers work on an unconstrained vector: the log-ratios
#' \eqn{z_k = \log(\beta_k / \beta_K)}{z_k = log(beta_k / beta_K)}, \eqn{k < K}, the means and
#' the log-variances \eqn{\log \sigma^2_{kj}}{log sigma2_kj}, with the log-Jacobian of the
#' transform in the prior, so the model has \eqn{(K - 1) + 2Kd} free parameters (24 for the
#' paper's 5 components in 2 dimensions). The posterior is multimodal (the components can be
#' relabelled); every mode gives the same evidence.
#'
#' The prior is in the data's units: with the defaults the means lie within a few units of 0
#' and the variances near 1. Data far outside that (e.g. `faithful`, whose waiting times are
#' about 70) are a legitimate but strongly informative choice, and a hard one for the annealing
#' samplers: tempering from the prior, a component that starts empty near 0 cannot travel to a
#' cluster 50 units away, so the particles settle where one component covers several clusters.
#' Local moves alone then leave most replicates in a minor mode, far below the evidence. The
#' robust presets of [ais()] and [sgais()] therefore make jump proposals (setting `jumps`, see
#' [sgais_control()]): for up to 12 components, independence proposals of the whole parameter
#' vector, half from the particles' mean and spread, component by component, and half from the
#' conjugate posterior of each component given one cluster of the data (k-means refined by
#' classification EM, with as many clusters, at most `components`, as the model itself finds
#' most probable, so that spare components are proposed empty). The robust preset of
#' [nested_sampling()] makes the same proposals within the contour. Standardise the data
#' (`scale()`) unless the prior is meant; replicates that disagree give a warning.
#'
#' A mixture with more components than its data show clusters has spare components, whose
#' posterior rests on the few observations they could claim; mini-batch moves mostly miss
#' those. So in a run of [sgais()] (or [sir()], [sequential_sgmcmc()]) with jump proposals
#' (`jumps` above 0, the robust presets) that holds every observation, each chunk whose data
#' show fewer clusters than components moves on all the observations so far, as the first
#' `exact_until` do: by data augmentation, instead of the jumps and all but one exact step.
#' Every observation is allocated to a component drawn from its responsibilities, and the
#' parameters are drawn from their conjugate posterior given the allocations (a spare component
#' from its prior), the chunk's observations at the annealing temperature and a
#' Metropolis-Hastings test for the rest; the trace's `jump_acceptance` counts these moves with
#' the jumps. A spare component so drawn follows a cluster that appears, and SGAIS's restarts
#' on the grid wait meanwhile (see [restarts]). A bounded `reservoir_size` holds too few
#' observations for that or for restarts: [sgais()] then warns (class
#' `sgais_warning_unreliable`) before a mixture's run. Where the data show every cluster, the
#' mini-batches of those estimators are drawn within the clusters (a small cluster, such as one
#' that has just appeared in a stream, whole; equal draws from the others), and their moves are
#' repeated while the particles still correlate with where they began, as exact moves are.
#'
#' With one component the model is a normal-inverse-gamma model in each dimension, whose
#' evidence has a closed form: [exact_log_evidence()] gives it, which checks the mixture code
#' path of every estimator.
#'
#' @param y The data: a numeric matrix or a data frame of numeric columns, one row per
#'   observation (or a numeric vector for one dimension). Select the columns to model, e.g.
#'   `data[c("y1", "y2")]`; a non-numeric column is an error.
#' @param components The number of components \eqn{K}, between 1 and the number of rows.
#' @param concentration The Dirichlet parameter \eqn{\alpha} of the weights.
#' @param variance_shape,variance_scale The shape \eqn{a} and scale \eqn{b} of the inverse-gamma
#'   prior of each variance.
#' @param mean_variance_ratio The prior variance of each mean as a multiple \eqn{r} of its
#'   component's variance.
#' @return A model of class `c("sgais_gaussian_mixture", "sgais_model")` for [sgais()], [ais()]
#'   and [nested_sampling()].
#' @seealso [simulate_gaussian_mixture()] and [simulate_shifting_mixture()] for the paper's data,
#'   [check_gradients()].
#' @export
#' @examples
#' data <- simulate_gaussian_mixture(500, components = 3, seed = 1)
#' model <- gaussian_mixture(data, components = 3)
#' model
#'
#' # one component: a closed-form evidence
#' exact_log_evidence(gaussian_mixture(data, components = 1))
gaussian_mixture <- function(y, components = 5, concentration = 1, variance_shape = 1,
                             variance_scale = 1, mean_variance_ratio = 4) {
  call <- sys.call()
  y <- as_mixture_matrix(y, "`y`", call)
  components <- check_whole_number(components, "components", 1, call)
  if (components > nrow(y)) {
    abort(sprintf("`components` (%d) must not exceed the number of observations (%s).",
                  components, format_count(nrow(y))), call)
  }
  hyper <- list(
    components = components,
    concentration = check_hyper(concentration, "concentration", call),
    variance_shape = check_hyper(variance_shape, "variance_shape", call),
    variance_scale = check_hyper(variance_scale, "variance_scale", call),
    mean_variance_ratio = check_hyper(mean_variance_ratio, "mean_variance_ratio", call)
  )
  spec <- c(matrix_columns(y, "y"), list(hyper = hyper))
  k <- components
  d <- ncol(y)
  cells <- paste0("[", rep(seq_len(k), each = d), ",", rep(spec$columns, k), "]")
  new_sgais_model(
    family = "gaussian_mixture",
    data = gaussian_mixture_data(spec, y, "`y`", call),
    spec = spec,
    n = nrow(y),
    # as the C core stores theta: weight log-ratios, means, log-variances (component after component)
    parameter_names = c(
      if (k > 1) sprintf("log(w%d/w%d)", seq_len(k - 1), k),
      paste0("mu", cells), paste0("log_sigma2", cells)
    ),
    label = sprintf("Bayesian Gaussian mixture (%d component%s, %d dimension%s)",
                    k, if (k > 1) "s" else "", d, if (d > 1) "s" else ""),
    details = c(
      likelihood = "y_i ~ sum_k w_k N(mu_k, diag(sigma2_k))",
      prior = sprintf(
        "w ~ Dirichlet(%s); sigma2_kj ~ InvGamma(shape %s, scale %s); mu_kj | sigma2_kj ~ N(0, %s sigma2_kj)",
        format(hyper$concentration), format(hyper$variance_shape), format(hyper$variance_scale),
        format(hyper$mean_variance_ratio)
      ),
      sampled = "log(w_k / w_K), mu, log(sigma2); log-Jacobian in the prior"
    ),
    columns = spec$columns,
    class = "sgais_gaussian_mixture"
  )
}

# The data the C core reads from rows `y` (called `what` in errors): their columns are matched to
# the spec's by name when both have names, else by position (see match_columns()).
gaussian_mixture_data <- function(spec, y, what, call) {
  y <- match_columns(as_mixture_matrix(y, what, call), spec, what, call)
  check_finite_cells(y, what, call)
  storage.mode(y) <- "double"
  list(yt = by_observation(y))
}

#' @exportS3Method
model_data.sgais_gaussian_mixture <- function(model, new_data, call = NULL) {
  gaussian_mixture_data(spec_of(model, call), new_data, "`new_data`", call)
}

# The data of a mixture as a numeric matrix with at least one row and one column.
as_mixture_matrix <- function(y, what, call) {
  y <- as_numeric_matrix(y, what, call,
                         " Select the columns to model, e.g. `y[c(\"y1\", \"y2\")]`.")
  if (ncol(y) < 1L) abort(sprintf("%s must have at least one column.", what), call)
  y
}

#' @rdname exact_log_evidence
#' @export
exact_log_evidence.sgais_gaussian_mixture <- function(model, n = NULL) {
  call <- sys.call()
  check_all_rows(model, call)
  if (model$hyper$components != 1L) {
    abort(sprintf(
      "`model` has %d components; the evidence of a Gaussian mixture has a closed form only with one. Estimate it with `sgais()`.",
      model$hyper$components
    ), call, "sgais_error_no_closed_form")
  }
  n <- check_prefix_lengths(n, model$n, call)
  h <- model$hyper
  yt <- model$data$yt
  # each dimension is an independent normal-inverse-gamma model
  per_dim <- vapply(seq_len(nrow(yt)), function(j) {
    nig_log_evidence(yt[j, ], n, h$variance_shape, h$variance_scale, 1 / h$mean_variance_ratio)
  }, numeric(length(n)))
  rowSums(matrix(per_dim, nrow = length(n)))
}

# log p(y_1..y_m) for every m in `n` under y_i ~ N(mu, s2), mu | s2 ~ N(0, s2 / kappa),
# s2 ~ InvGamma(a, b): with kappa_m = kappa + m and b_m = b + (sum (y - ybar)^2 +
# kappa m ybar^2 / kappa_m) / 2,
# log Z = lgamma(a + m/2) - lgamma(a) + a log b - (a + m/2) log b_m + log(kappa / kappa_m) / 2
#         - m log(2 pi) / 2.
# Prefix sums are taken about the overall mean, so the sum of squares does not cancel.
nig_log_evidence <- function(y, n, a, b, kappa) {
  shift <- mean(y)
  s1 <- cumsum(y - shift)[n]
  s2 <- cumsum((y - shift)^2)[n]
  ybar <- shift + s1 / n
  ss <- pmax(s2 - s1^2 / n, 0)
  kn <- kappa + n
  bn <- b + 0.5 * (ss + kappa * n * ybar^2 / kn)
  lgamma(a + n / 2) - lgamma(a) + a * log(b) - (a + n / 2) * log(bn) + 0.5 * log(kappa / kn) -
    0.5 * n * log(2 * pi)
}

#' Simulate the paper's Gaussian-mixture data
#'
#' Draws the mixture's weights, means and variances from the prior of [gaussian_mixture()]
#' (Dirichlet(1) weights, InvGamma(1, 1) variances, means \eqn{N(0, 4\sigma^2)}{N(0, 4 sigma2)}),
#' then each observation's component and value, as in Cameron et al. (2019), Section 6.1 and
#' Appendix B.3. Rows are drawn one after another, so with the same seed a smaller data set is the
#' first rows of a larger one.
#'
#' @param n Number of observations.
#' @param components Number of mixture components.
#' @param dim Dimension of each observation.
#' @param seed Optional seed; the caller's random stream is left as it was.
#' @return A data frame with columns `y1`, ..., `y<dim>`, and attributes `component` (the
#'   component of each row) and `parameters`, a list of the true `weights`, `means` and
#'   `variances` (matrices with a row per component).
#' @export
#' @examples
#' data <- simulate_gaussian_mixture(1000, seed = 42)
#' head(data)
#' attr(data, "parameters")$weights
#' plot(data, col = attr(data, "component"))
simulate_gaussian_mixture <- function(n, components = 5, dim = 2, seed = NULL) {
  call <- sys.call()
  n <- check_whole_number(n, "n", 1, call)
  components <- check_whole_number(components, "components", 1, call)
  dim <- check_whole_number(dim, "dim", 1, call)
  seed <- check_seed(seed, call)
  k <- components
  with_seed(seed, {
    g <- stats::rexp(k)
    variances <- matrix(1 / stats::rexp(k * dim), k, dim)
    means <- matrix(stats::rnorm(k * dim, sd = sqrt(4 * variances)), k, dim)
    # per observation: one normal for the component, `dim` for the value, row after row
    draws <- matrix(stats::rnorm(n * (dim + 1)), nrow = n, byrow = TRUE)
  })
  weights <- g / sum(g)
  component <- 1L + rowSums(outer(stats::pnorm(draws[, 1L]), cumsum(weights)[-k], ">"))
  y <- means[component, , drop = FALSE] +
    sqrt(variances[component, , drop = FALSE]) * draws[, -1L, drop = FALSE]
  colnames(y) <- paste0("y", seq_len(dim))
  out <- as.data.frame(y)
  cols <- colnames(y)
  attr(out, "component") <- as.integer(component)
  attr(out, "parameters") <- list(
    weights = weights,
    means = `dimnames<-`(means, list(NULL, cols)),
    variances = `dimnames<-`(variances, list(NULL, cols))
  )
  out
}

#' Simulate the paper's data with a distribution shift
#'
#' The non-stationary data set of Cameron et al. (2019), Section 6.2 and Figure 1: 100,000
#' two-dimensional points in three phases, in this order: 1,000 points from 3 Gaussian clusters,
#' then 9,000 from 5 clusters (the first 3 and two more), then 90,000 from 7 (the previous 5 and
#' two more), with equal weights within a phase. The clusters are fixed (see the `parameters`
#' attribute); cluster 4 overlaps cluster 1 and cluster 6 overlaps cluster 3, so histograms do not
#' show how many there are. An online evidence trajectory has cusps where the phases change.
#'
#' @param seed Optional seed; the caller's random stream is left as it was.
#' @return A data frame of 100,000 rows with columns `y1`, `y2`, `phase` (a factor: `3 clusters`,
#'   `5 clusters`, `7 clusters`) and `cluster` (a factor, 1 to 7), and the attribute `parameters`:
#'   a data frame of the clusters' means and standard deviations. Model the numeric columns, e.g.
#'   `gaussian_mixture(data[c("y1", "y2")], components = 5)`.
#' @export
#' @examples
#' data <- simulate_shifting_mixture(seed = 1)
#' table(data$phase, data$cluster)
#' attr(data, "parameters")
simulate_shifting_mixture <- function(seed = NULL) {
  call <- sys.call()
  seed <- check_seed(seed, call)
  clusters <- data.frame(
    cluster = 1:7,
    mean1 = c(-4.0, 3.0, 0.0, -2.6, 4.0, 1.0, -4.0),
    mean2 = c(-3.0, -3.0, 3.5, -1.7, 1.0, 4.6, 2.5),
    sd1 = c(0.8, 1.0, 0.9, 1.0, 0.7, 0.8, 1.2),
    sd2 = c(0.8, 0.7, 1.1, 1.0, 1.2, 0.6, 0.9)
  )
  sizes <- c(1000L, 9000L, 90000L)
  active <- c(3L, 5L, 7L)
  with_seed(seed, {
    cluster <- unlist(lapply(1:3, function(p) sample.int(active[p], sizes[p], replace = TRUE)))
    z <- matrix(stats::rnorm(2 * sum(sizes)), ncol = 2)
  })
  y1 <- clusters$mean1[cluster] + clusters$sd1[cluster] * z[, 1]
  y2 <- clusters$mean2[cluster] + clusters$sd2[cluster] * z[, 2]
  phase <- factor(rep(paste(active, "clusters"), sizes), levels = paste(active, "clusters"))
  out <- data.frame(y1 = y1, y2 = y2, phase = phase, cluster = factor(cluster, levels = 1:7))
  attr(out, "parameters") <- clusters
  out
}
