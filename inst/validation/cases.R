# The validation cases: models with a trusted reference log evidence.
#
# Each case is a list with `id`, `what` (one line), `model` (a function building the sgais
# model) and `reference` (a number) with `reference_how`. Linear regression has an exact
# evidence, so its cases vary what the paper held fixed: the number of covariates (1 to 50),
# the noise level (0.1 to 10), the prior scale, correlated and badly scaled covariates, a
# far intercept and n from 300 to 10^6. Real data sets shipped with R or its recommended
# packages supply real-data regressions (exact evidence), and softmax regressions and mixtures
# whose references come from Stan + bridge sampling, computed once by references.R and stored
# in references.csv with how they were obtained. A one-component mixture has a closed form. The
# paper's softmax regression at n = 10^4 and 10^5 has references from importance sampling
# (inst/bench/softmax-reference.R): its posterior is log-concave and close to Gaussian there,
# so a t proposal at the mode keeps an ESS above 8,000 of 20,000 draws (standard error 0.008).
#
# Data are simulated with fixed seeds, so a case is the same data on every run.

simulate_regression <- function(n, p, noise_sd, seed, rho = 0, intercept = 0.5, x_mean = 0,
                                x_sd = 1) {
  set.seed(seed)
  x <- matrix(stats::rnorm(n * p), n, p)
  if (rho > 0) x <- sqrt(1 - rho) * x + sqrt(rho) * stats::rnorm(n)
  x <- x_mean + x_sd * x
  beta <- stats::rnorm(p)
  y <- intercept + drop(x %*% beta) + noise_sd * stats::rnorm(n)
  list(x = x, y = y)
}

# The paper's softmax regression (10 covariates, 4 classes: 44 parameters) on the first n rows
# of the benchmarks' data (inst/bench/paper-data.R, seed 1). Its evidence comes from importance
# sampling with a multivariate t proposal at the posterior mode (inst/bench/softmax-reference.R,
# 20,000 draws, ESS above 8,000), independent of the annealers. At these sizes its posterior's
# identified directions are narrow while the free ones keep the prior's width: SGAIS's default
# stalled at n = 16,000 until the free directions were kept out of its metric.
softmax_paper_case <- function(id, n, reference, reference_sd) {
  force(n)
  list(
    id = id,
    what = sprintf("paper's softmax regression, n = %s", format(n, big.mark = ",")),
    model = function() {
      data <- simulate_softmax_regression(1e5, dim = 10, classes = 4, seed = 1)
      softmax_regression(y ~ ., data[seq_len(n), ], prior = "paper")
    },
    reference = reference, reference_sd = reference_sd,
    reference_how = "importance sampling, t(5) proposal at the mode, 20,000 draws (inst/bench/softmax-reference.R)"
  )
}

linear_case <- function(id, what, n, p, noise_sd = 1, prior_sd = 1, seed, ...) {
  force(n)
  list(
    id = id, what = what,
    model = function() {
      d <- simulate_regression(n, p, noise_sd, seed, ...)
      linear_regression(x = d$x, y = d$y, noise_sd = noise_sd, prior_sd = prior_sd)
    },
    reference = "exact"
  )
}

# A regression on real data with the noise sd fixed at the least-squares residual sd (the
# package's model has a known noise level).
real_linear_case <- function(id, what, formula, data) {
  list(
    id = id, what = what,
    model = function() {
      sd <- summary(stats::lm(formula, data))$sigma
      linear_regression(formula, data, noise_sd = sd, prior = "paper")
    },
    reference = "exact"
  )
}

# A linear regression on real data with unknown noise variance and the default prior
# (prior = "autoscale"): exact.
nig_real_case <- function(id, what, formula, data) {
  list(id = id, what = paste(what, "(real; unknown noise, default prior; exact)"),
       model = function() linear_regression(formula, data, noise_sd = NULL), reference = "exact")
}

# The reference log evidence of `case` for its `model` (case$model()): the exact one when the
# case says "exact", otherwise the stored value.
case_reference <- function(case, model) {
  if (identical(case$reference, "exact")) exact_log_evidence(model) else case$reference
}

validation_cases <- function(references = NULL) {
  cases <- list(
    linear_case("lin_paper_1e4", "paper's model: 5 covariates, noise sd 1", 1e4, 5, seed = 1),
    linear_case("lin_paper_1e5", "paper's model at 10^5", 1e5, 5, seed = 2),
    linear_case("lin_paper_1e6", "paper's model at 10^6", 1e6, 5, seed = 3),
    linear_case("lin_n300", "paper's model, n = 300", 300, 5, seed = 4),
    linear_case("lin_p1", "1 covariate", 1e4, 1, seed = 5),
    linear_case("lin_p20_sd05", "20 covariates, noise sd 0.5, prior sd 2", 5e4, 20,
                noise_sd = 0.5, prior_sd = 2, seed = 6),
    linear_case("lin_p50", "50 covariates", 5000, 50, seed = 7),
    linear_case("lin_sd01", "noise sd 0.1", 1e4, 5, noise_sd = 0.1, seed = 8),
    linear_case("lin_sd10", "noise sd 10", 1e4, 5, noise_sd = 10, seed = 9),
    linear_case("lin_prior10", "prior sd 10", 1e4, 5, prior_sd = 10, seed = 10),
    linear_case("lin_corr", "3 covariates correlated at 0.95", 5e4, 3, rho = 0.95, seed = 11),
    linear_case("lin_scaled", "covariates with mean 5 and sd 10", 1e4, 5, x_mean = 5,
                x_sd = 10, seed = 12),
    linear_case("lin_far_intercept", "intercept 20 under a N(0, 1) prior", 1e4, 5,
                intercept = 20, seed = 13),
    real_linear_case("boston_log_medv", "MASS::Boston, log(medv) ~ . (real)",
                     log(medv) ~ ., MASS::Boston),
    real_linear_case("quakes_mag", "quakes, mag ~ depth + stations (real)",
                     mag ~ depth + stations, datasets::quakes),
    list(
      id = "faithful_mix_k1", what = "scale(faithful), 1-component mixture (closed form)",
      model = function() gaussian_mixture(scale(datasets::faithful), components = 1),
      reference = "exact"
    ),
    softmax_paper_case("softmax_paper_1e4", 1e4, -6884.791, 0.008),
    softmax_paper_case("softmax_paper_1e5", 1e5, -67664.522, 0.008),
    list(
      id = "mixture_k1_sim", what = "paper's mixture data, 1 component (closed form), n = 10^4",
      model = function() {
        gaussian_mixture(simulate_gaussian_mixture(1e4, components = 5, seed = 14), components = 1)
      },
      reference = "exact"
    ),
    # issue 41: linear models on real data with unknown noise under the default prior
    # (prior = "autoscale"), whose evidence is exact (Student-t); vignette("choosing-models")
    nig_real_case("mtcars_nig", "mtcars, mpg ~ wt + hp + qsec", mpg ~ wt + hp + qsec, datasets::mtcars),
    nig_real_case("attitude_nig", "attitude, rating ~ complaints + learning",
                  rating ~ complaints + learning, datasets::attitude),
    nig_real_case("birthwt_nig", "MASS::birthwt, bwt ~ age + lwt + smoke", bwt ~ age + lwt + smoke,
                  MASS::birthwt),
    # issue 41, item 3: BayesFactor's priors (?g_prior), whose evidence is exact (closed form
    # for the g-prior, a one-dimensional integral for Zellner-Siow)
    list(id = "attitude_jzs", what = "attitude, rating ~ . (real; Zellner-Siow prior; exact)",
         model = function() linear_regression(rating ~ ., datasets::attitude,
                                              prior = zellner_siow_prior()),
         reference = "exact"),
    list(id = "mtcars_g", what = "mtcars, mpg ~ wt + hp + qsec (real; g-prior, g = n; exact)",
         model = function() linear_regression(mpg ~ wt + hp + qsec, datasets::mtcars,
                                              prior = g_prior()),
         reference = "exact")
  )
  # Stan + bridge sampling references (references.R)
  if (!is.null(references)) {
    for (i in seq_len(nrow(references))) {
      r <- references[i, ]
      if (r$case %in% vapply(cases, `[[`, "", "id")) next
      code <- r$model
      # one-component mixtures have a closed form (which references.R checked Stan against):
      # their reference is the exact evidence
      exact <- !is.na(r$closed_form)
      cases[[length(cases) + 1L]] <- list(
        id = r$case,
        what = paste0(code, if (exact) " (real; closed form)" else " (real; Stan + bridge sampling)"),
        model = local({
          code <- code
          function() eval(parse(text = code))
        }),
        reference = if (exact) "exact" else r$reference,
        reference_sd = if (exact) NULL else r$reference_sd,
        reference_how = if (exact) NULL else r$method
      )
    }
  }
  cases
}
