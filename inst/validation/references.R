# Reference log evidences for sgais's models on real data sets shipped with R or its recommended
# packages (iris, faithful, quakes; MASS::fgl, MASS::Pima.tr, MASS::quine, MASS::birthwt), for
# the validation suite.
#
# What it does. For every case below it estimates log Z = log p(y) of the package's model with
# Stan (NUTS) and bridge sampling, from independent runs, checks the runs (divergences, Rhat,
# agreement of the replicates), and writes
#   references.csv       one row per case: case, model (R code building the sgais model), n, dim,
#                        reference, reference_sd, method, closed_form, date;
#   references-runs.csv  every single estimate behind those rows, with its sampler diagnostics.
# The Gaussian mixtures are checked twice more: with one component against the closed form, and
# for every K against an independent estimator (a sequential Monte Carlo over the component
# allocations with the parameters integrated out, see smc_mixture() below).
# The generalised linear models (logistic, Poisson, negative binomial regression) are checked
# against an independent estimator too: importance sampling from a multivariate t around the
# posterior mode (see glm_importance() below), with the Laplace approximation recorded beside it.
#
# Usage, from the repository root:
#   Rscript inst/validation/references.R                       # all cases (about 1.5 h on 2 cores;
#                                                               # the 4 GLM cases take 3 min)
#   Rscript inst/validation/references.R iris_softmax faithful_mix_k1   # some cases; their rows
#                                                               # in the two csv files are replaced
#   Rscript inst/validation/references.R --smc-only faithful_raw_mix_k3  # mixtures: SMC only
# With the sgais package installed, every model is also built from its `model` code and the Stan
# program's log density is compared with the package's at posterior draws (same likelihood, same
# prior, to rounding), and n and dim are checked; without it those checks are skipped.
#
# rstan, bridgesampling (and Rcpp, which rstan brings) are development tools used only here: they
# are not dependencies of sgais. On Debian: apt-get install r-cran-rstan r-cran-bridgesampling.

suppressPackageStartupMessages({
  library(rstan)
  library(bridgesampling)
})

# Debian's BH package is a stub: the Boost headers are the system's.
if (!file.exists(rstan_options("boost_lib")) && dir.exists("/usr/include/boost")) {
  rstan_options(boost_lib = "/usr/include")
}
options(mc.cores = min(4L, parallel::detectCores()), width = 160)

source(file.path("inst", "validation", "suite.R"))
out_file <- file.path(validation_dir, "references.csv")
runs_file <- file.path(validation_dir, "references-runs.csv")

# ---- settings -------------------------------------------------------------------------------

chains <- 4L
iter <- 4000L          # per chain, warmup included
warmup <- 1000L        # so 4 x 3000 = 12000 posterior draws per run
runs <- 2L             # independent Stan runs (seeds; for mixtures also the ordered coordinate)
tolerance <- 0.05      # replicate estimates must agree to this (nats)
max_rhat <- 1.01
pilot_chains <- 8L     # mixtures: short runs from scattered starts to find the dominant mode
pilot_iter <- 600L
smc_particles <- 5e5   # the mixture cross-check: particles per run ...
smc_runs <- 4L         # ... and runs (each with its own random order of the observations)
method_stan <- sprintf("Stan NUTS %dx%d + bridgesampling (warp3) x%d", chains, iter - warmup, runs)

# ---- Stan programs --------------------------------------------------------------------------
# Every density term is written as `target += *_lpdf(...)`, never `~`, so that the constants are
# kept: bridge sampling then estimates the normalising constant of likelihood x prior itself.

# Softmax regression exactly as softmax_regression() and src/softmax_regression.c: each of the K
# classes has its own coefficient vector theta[, k] over the p design columns (intercept
# included; no reference class), every coefficient N(0, prior_sd^2) a priori, and
# p(y = k | a) = softmax(a' theta)[k]. theta[, k] is the package's k-th block, so the package's
# parameter vector is as.vector(theta).
stan_softmax <- "
data {
  int<lower=1> N;
  int<lower=1> P;
  int<lower=2> K;
  matrix[N, P] X;
  int<lower=1, upper=K> y[N];
  real<lower=0> prior_sd;
}
parameters {
  matrix[P, K] theta;
}
model {
  matrix[N, K] eta = X * theta;
  target += normal_lpdf(to_vector(theta) | 0, prior_sd);
  for (i in 1:N) target += eta[i, y[i]] - log_sum_exp(eta[i]);
}
"

# Gaussian mixture exactly as gaussian_mixture() and src/gaussian_mixture.c, in its natural
# parameters (beta, mu, sigma2) rather than the package's (log weight ratios, mu, log sigma2): the
# evidence does not depend on the parametrisation, and Stan's transforms come with their
# log-Jacobians, so the density it integrates is the same measure.
#   beta ~ Dirichlet(alpha), sigma2_kj ~ InvGamma(shape a, scale b), mu_kj | sigma2_kj ~ N(0, r sigma2_kj),
#   p(y_i | theta) = sum_k beta_k prod_j N(y_ij; mu_kj, sigma2_kj).
# Label switching. Likelihood and prior are invariant under the K! relabellings of the
# components, so the posterior has K! copies of every mode. The program restricts the first
# coordinate of the means to increasing order (`ordered[K] mu1`) and does NOT renormalise the prior
# on that region: its target is likelihood x (exchangeable prior density) on the set
# O = {mu_11 < mu_21 < ... < mu_K1}. The K! images of O under relabelling are disjoint (up to
# ties, a null set) and cover the whole space, and the integrand takes the same values on each, so
#   Z = integral over everything = K! * integral over O = K! * Z_O,
# i.e. log Z = (bridge estimate of log Z_O) + lgamma(K + 1). (Equivalently: the exchangeable prior
# gives O mass 1/K!, and the posterior gives it mass 1/K! too.) Which data column is the
# "first coordinate" is chosen by permuting the columns of y before they are passed to Stan:
# the model treats the dimensions alike, so this changes nothing but the constraint; the two runs
# of a case order different columns, which checks that the constraint does not cut a mode.
stan_mixture <- "
data {
  int<lower=1> N;
  int<lower=1> D;
  int<lower=1> K;
  matrix[N, D] y;
  real<lower=0> alpha;
  real<lower=0> a;
  real<lower=0> b;
  real<lower=0> r;
}
parameters {
  simplex[K] beta;
  ordered[K] mu1;               // means of the first column of y, increasing
  matrix[K, D - 1] mu_rest;     // means of the other columns
  matrix<lower=0>[K, D] sigma2;
}
model {
  matrix[K, D] mu = append_col(mu1, mu_rest);
  matrix[N, K] lp;
  target += dirichlet_lpdf(beta | rep_vector(alpha, K));
  target += inv_gamma_lpdf(to_vector(sigma2) | a, b);
  target += normal_lpdf(to_vector(mu) | 0, sqrt(r * to_vector(sigma2)));
  for (k in 1:K) {
    vector[N] c = rep_vector(log(beta[k]) - 0.5 * D * log(2 * pi()) - 0.5 * sum(log(sigma2[k])), N);
    for (j in 1:D) c -= 0.5 * square(col(y, j) - mu[k, j]) / sigma2[k, j];
    lp[, k] = c;
  }
  for (i in 1:N) target += log_sum_exp(lp[i]);
}
"

# Generalised linear models exactly as logistic_regression(), poisson_regression() and
# negative_binomial_regression() with prior = "autoscale" (R/prior.R, autoscale_prior()) and
# src/logistic_regression.c, src/poisson_regression.c, src/negative_binomial_regression.c: X is
# the design with every covariate column centred at its mean (the package's spec$center; the
# intercept column stays 1), and each coefficient beta_j ~ N(prior_location_j, prior_scale_j^2)
# independently, the locations and scales passed as data (the autoscale rule: the intercept
# N(0, 2.5^2), the slope of column j N(0, (2.5 / sd(x_j))^2)). Linear predictor eta = offset +
# X beta (offset 0 without one).
#   logistic:  y_i ~ Bernoulli(plogis(eta_i));
#   Poisson:   y_i ~ Poisson(exp(eta_i)), -log(y_i!) included;
#   negative binomial: y_i ~ NB(mean exp(eta_i), size phi = omega^-2), -log(y_i!) included,
#              omega ~ half-normal(omega_sd) (the package's overdispersion_prior), i.e.
#              log 2 + normal_lpdf(omega | 0, omega_sd).
# The package samples t = log omega with the log-Jacobian t in its prior; Stan's <lower=0>
# transform is the same log with the same Jacobian, so both integrate the same measure. The
# package's parameter vector is c(beta, log(omega)).
stan_logistic <- "
data {
  int<lower=1> N;
  int<lower=1> P;
  matrix[N, P] X;
  int<lower=0, upper=1> y[N];
  vector[P] prior_location;
  vector<lower=0>[P] prior_scale;
}
parameters {
  vector[P] beta;
}
model {
  target += normal_lpdf(beta | prior_location, prior_scale);
  target += bernoulli_logit_lpmf(y | X * beta);
}
"
stan_poisson <- "
data {
  int<lower=1> N;
  int<lower=1> P;
  matrix[N, P] X;
  int<lower=0> y[N];
  vector[N] offset;
  vector[P] prior_location;
  vector<lower=0>[P] prior_scale;
}
parameters {
  vector[P] beta;
}
model {
  target += normal_lpdf(beta | prior_location, prior_scale);
  target += poisson_log_lpmf(y | offset + X * beta);
}
"
stan_negbin <- "
data {
  int<lower=1> N;
  int<lower=1> P;
  matrix[N, P] X;
  int<lower=0> y[N];
  vector[N] offset;
  vector[P] prior_location;
  vector<lower=0>[P] prior_scale;
  real<lower=0> omega_sd;
}
parameters {
  vector[P] beta;
  real<lower=0> omega;
}
model {
  target += normal_lpdf(beta | prior_location, prior_scale);
  target += log2() + normal_lpdf(omega | 0, omega_sd);
  target += neg_binomial_2_log_lpmf(y | offset + X * beta, inv_square(omega));
}
"

# ---- cases ----------------------------------------------------------------------------------
# `data` is R code for the data set, shipped with R or its recommended packages; the `model`
# column of the output is built from it, so it is exactly what the validation suite evaluates.
# The package does not standardise covariates: where a case says scale(), the model is given the
# standardised data.

softmax_case <- function(case, formula, data, prior_sd = 1, metric = "diag_e") {
  list(case = case, family = "softmax", formula = formula, data = data, prior_sd = prior_sd,
       metric = metric,
       model = sprintf("softmax_regression(%s, %s, %s)", formula, data,
                       if (prior_sd == 1) "prior = \"paper\"" else sprintf("prior_sd = %s", format(prior_sd))))
}
# `family`: "logistic", "poisson" or "negbin"; always prior = "autoscale", written out (the
# package's default prior since 0.1.0, but the reference must not change with a default).
glm_case <- function(case, family, formula, data) {
  constructor <- c(logistic = "logistic_regression", poisson = "poisson_regression",
                   negbin = "negative_binomial_regression")[[family]]
  list(case = case, family = family, formula = formula, data = data, metric = "diag_e",
       omega_sd = if (family == "negbin") 1,    # the package's default overdispersion_prior
       model = sprintf('%s(%s, %s, prior = "autoscale")', constructor, formula, data))
}
mixture_case <- function(case, data, components) {
  list(case = case, family = "mixture", data = data, components = components,
       # the package's defaults (the paper's values)
       alpha = 1, a = 1, b = 1, r = 4,
       model = sprintf("gaussian_mixture(%s, components = %d)", data, components))
}

fgl_scaled <- "data.frame(scale(MASS::fgl[1:9]), type = MASS::fgl$type)"
pima_scaled <- "data.frame(scale(MASS::Pima.tr[1:7]), type = MASS::Pima.tr$type)"
quakes_scaled <- 'scale(quakes[, c("lat", "long")])'
cases <- list(
  softmax_case("iris_softmax", "Species ~ .", "iris"),                  # 3 classes x 5 = 15
  # Raw, the glass composition columns (Si about 72, Na about 13, ...) make the weights strongly
  # correlated with the biases: NUTS needs a dense mass matrix (with a diagonal one it takes 5x
  # longer and hits the tree depth limit, for the same answer).
  softmax_case("fgl_softmax", "type ~ .", "MASS::fgl", metric = "dense_e"),  # 6 classes x 10 = 60
  softmax_case("fgl_scaled_softmax", "type ~ .", fgl_scaled),           # the same, standardised
  softmax_case("pima_scaled_softmax", "type ~ .", pima_scaled),         # 2 classes x 8 = 16
  mixture_case("faithful_mix_k1", "scale(faithful)", 1),
  mixture_case("faithful_mix_k2", "scale(faithful)", 2),
  mixture_case("faithful_mix_k3", "scale(faithful)", 3),
  mixture_case("faithful_mix_k4", "scale(faithful)", 4),
  mixture_case("faithful_raw_mix_k1", "faithful", 1),
  mixture_case("faithful_raw_mix_k2", "faithful", 2),
  mixture_case("quakes_mix_k1", quakes_scaled, 1),
  mixture_case("quakes_mix_k2", quakes_scaled, 2),
  mixture_case("quakes_mix_k3", quakes_scaled, 3),
  # (new cases go last: a case's position fixes its seeds)
  glm_case("quine_poisson_autoscale", "poisson", "Days ~ Eth + Sex + Age + Lrn", "MASS::quine"),
  glm_case("quine_negbin_autoscale", "negbin", "Days ~ Eth + Sex + Age + Lrn", "MASS::quine"),
  glm_case("birthwt_logit_small_autoscale", "logistic", "low ~ age + smoke", "MASS::birthwt"),
  glm_case("birthwt_logit_large_autoscale", "logistic", "low ~ age + lwt + smoke + ht", "MASS::birthwt"),
  # raw faithful with more components than clusters (issue 42: model selection in raw units);
  # appended, so that the cases before keep their seeds
  mixture_case("faithful_raw_mix_k3", "faithful", 3),
  mixture_case("faithful_raw_mix_k4", "faithful", 4)
)
names(cases) <- vapply(cases, `[[`, "", "case")

case_index <- setNames(seq_along(cases), names(cases))   # fixes each case's seeds
only <- commandArgs(trailingOnly = TRUE)
# --smc-only: for mixtures, no Stan runs; the reference is the SMC over allocations, if its runs
# agree (for posteriors Stan cannot sample: an empty component at a heavy-tailed prior gave
# raw faithful with 3 components 718 divergences and Rhat 1.09 in a run of 963 s)
smc_only <- "--smc-only" %in% only
only <- setdiff(only, "--smc-only")
if (length(only)) {
  unknown <- setdiff(only, names(cases))
  if (length(unknown)) stop("unknown case(s): ", paste(unknown, collapse = ", "))
  cases <- cases[only]
}

# ---- data -----------------------------------------------------------------------------------

eval_code <- function(code) eval(str2lang(code), envir = new.env(parent = globalenv()))

# The design exactly as R/design.R builds it (model.frame with na.pass, then model.matrix of its
# terms; the package refuses missing values, and none of these data sets has any).
softmax_data <- function(cs) {
  data <- eval_code(cs$data)
  mf <- stats::model.frame(stats::as.formula(cs$formula), data, na.action = stats::na.pass)
  a <- stats::model.matrix(attr(mf, "terms"), mf)
  y <- stats::model.response(mf)
  y <- if (is.factor(y)) droplevels(y) else factor(y)
  stopifnot(!anyNA(a), !anyNA(y))
  list(N = nrow(a), P = ncol(a), K = nlevels(y), X = unname(a), y = as.integer(y),
       prior_sd = cs$prior_sd)
}

# The design, response and autoscale prior of a generalised linear model, as R/design.R and
# with_autoscale() in R/prior.R build them: the design of softmax_data(), its covariate columns
# centred at their means; the intercept's prior N(0, 2.5^2) and the slope of column j
# N(0, (2.5 / sd(x_j))^2). The response of a logistic regression: 0/1, or a factor's second
# level as 1. Exactly the data of the Stan program.
glm_data <- function(cs) {
  data <- eval_code(cs$data)
  mf <- stats::model.frame(stats::as.formula(cs$formula), data, na.action = stats::na.pass)
  a <- stats::model.matrix(attr(mf, "terms"), mf)
  y <- stats::model.response(mf)
  offset <- stats::model.offset(mf)
  stopifnot(!anyNA(a), !anyNA(y), is.null(offset) || !anyNA(offset))
  intercept <- colnames(a) == "(Intercept)"
  stopifnot(sum(intercept) == 1L)
  x <- a[, !intercept, drop = FALSE]
  center <- numeric(ncol(a))
  center[!intercept] <- colMeans(x)
  scale <- numeric(ncol(a))
  scale[intercept] <- 2.5
  scale[!intercept] <- 2.5 / apply(x, 2, stats::sd)
  if (cs$family == "logistic") {
    y <- if (is.factor(y)) as.integer(y == levels(y)[2]) else as.integer(y)
    stopifnot(all(y %in% 0:1))
  } else {
    stopifnot(is.numeric(y), all(y >= 0), all(y == round(y)))
    y <- as.integer(y)
  }
  out <- list(N = nrow(a), P = ncol(a), X = unname(sweep(a, 2, center)), y = y)
  if (cs$family != "logistic") out$offset <- if (is.null(offset)) numeric(nrow(a)) else as.double(offset)
  out$prior_location <- numeric(ncol(a))
  out$prior_scale <- scale
  if (cs$family == "negbin") out$omega_sd <- cs$omega_sd
  out
}

# The data as gaussian_mixture() takes them (a numeric matrix), with the column `first` moved to
# the front, where the Stan program's ordering constraint applies.
mixture_data <- function(cs, first = 1L) {
  y <- eval_code(cs$data)
  y <- if (is.data.frame(y)) as.matrix(y) else y
  y <- matrix(as.double(y), nrow = nrow(y))
  perm <- c(first, setdiff(seq_len(ncol(y)), first))
  list(N = nrow(y), D = ncol(y), K = cs$components, y = y[, perm, drop = FALSE],
       alpha = cs$alpha, a = cs$a, b = cs$b, r = cs$r, perm = perm)
}

# ---- closed form and an independent estimator for the mixtures ------------------------------

# log p(y) under y_i ~ N(mu, s2), mu | s2 ~ N(0, r s2), s2 ~ InvGamma(a, b) (one mixture
# component, one dimension): with kappa = 1/r, kappa_n = kappa + n, a_n = a + n/2 and
# b_n = b + (sum (y - ybar)^2 + kappa n ybar^2 / kappa_n) / 2,
# log Z = lgamma(a_n) - lgamma(a) + a log b - a_n log b_n + log(kappa / kappa_n) / 2 - n log(2 pi) / 2.
# With K = 1 the mixture's dimensions are independent such models.
nig_log_evidence <- function(y, a, b, r) {
  n <- length(y)
  kappa <- 1 / r
  kn <- kappa + n
  bn <- b + 0.5 * (sum((y - mean(y))^2) + kappa * n * mean(y)^2 / kn)
  lgamma(a + n / 2) - lgamma(a) + a * log(b) - (a + n / 2) * log(bn) + 0.5 * log(kappa / kn) -
    0.5 * n * log(2 * pi)
}
mixture_closed_form <- function(cs) {
  if (cs$components != 1L) return(NA_real_)
  y <- mixture_data(cs)$y
  sum(apply(y, 2, nig_log_evidence, a = cs$a, b = cs$b, r = cs$r))
}

# Sequential Monte Carlo over the allocations (Liu's sequential imputation; Fearnhead 2004,
# Statistics and Computing 14:11-21). The prior is conjugate, so given which component each
# observation came from, weights, means and variances integrate out: the observations are taken
# one at a time, and each particle holds an allocation of those seen so far as per-component
# counts, sums and sums of squares. A particle's weight is multiplied by
#   p(y_t | its past) = sum_k (alpha + n_k) / (K alpha + t - 1) * prod_j t-predictive_kj(y_tj),
# the new allocation is drawn from the terms of that sum, and the particles are resampled
# (systematically) when the effective sample size falls below half. The product of the average
# weight increments estimates Z = p(y_1, ..., y_n) without bias, for any K and any data order,
# with no label switching to handle (allocations, not labelled parameters, are sampled) and no
# mode to find. Its log is slightly biased low when the spread is large; the spread of runs with
# different data orders measures it. With K = 1 it is exact. Written in C++ for speed.
Rcpp::cppFunction(includes = "#include <algorithm>\n#include <cmath>\n#include <vector>", code = '
double smc_mixture_cpp(Rcpp::NumericMatrix y, int K, int P, double alpha, double a, double b, double r) {
  const int n = y.nrow(), D = y.ncol();
  const double k0 = 1.0 / r, half_log_2pi = 0.5 * std::log(2.0 * M_PI);
  const std::size_t cells = (std::size_t) K * D;
  // per particle: counts n_k, and per component and dimension the sum, sum of squares and
  // b_n = b + (sum of squares - sum^2 / (k0 + n_k)) / 2 of its observations
  std::vector<int> cnt((std::size_t) P * K, 0), cnt_new;
  std::vector<double> S((std::size_t) P * cells, 0.0), Q((std::size_t) P * cells, 0.0),
    B((std::size_t) P * cells, b), S_new, Q_new, B_new;
  std::vector<double> logw(P, 0.0), lp(K), t_count(n + 1);
  // the count-only part of the log t-predictive density of one more point given m points:
  // log[Gamma(a_m + 1/2) / Gamma(a_m)] + log[(k0 + m) / (k0 + m + 1)] / 2 - log(2 pi) / 2
  for (int m = 0; m <= n; m++)
    t_count[m] = std::lgamma(a + (m + 1) / 2.0) - std::lgamma(a + m / 2.0) +
                 0.5 * std::log((k0 + m) / (k0 + m + 1)) - half_log_2pi;
  double log_z = 0.0;
  for (int t = 0; t < n; t++) {
    double mo = *std::max_element(logw.begin(), logw.end()), so = 0.0;
    for (int p = 0; p < P; p++) so += std::exp(logw[p] - mo);
    for (int p = 0; p < P; p++) {
      int *c = &cnt[(std::size_t) p * K];
      double *s = &S[(std::size_t) p * cells], *q = &Q[(std::size_t) p * cells], *bb = &B[(std::size_t) p * cells];
      double mx = R_NegInf;
      for (int k = 0; k < K; k++) {
        int m = c[k];
        double an = a + m / 2.0, l = std::log(alpha + m) - std::log(K * alpha + t) + D * t_count[m];
        for (int j = 0; j < D; j++) {
          std::size_t cj = (std::size_t) k * D + j;
          double yj = y(t, j), s1 = s[cj] + yj;
          double bn1 = b + 0.5 * (q[cj] + yj * yj - s1 * s1 / (k0 + m + 1));
          l += an * std::log(bb[cj]) - (an + 0.5) * std::log(bn1);  // b_n^a_n / b_n1^(a_n + 1/2)
        }
        lp[k] = l;
        if (l > mx) mx = l;
      }
      double se = 0.0;
      for (int k = 0; k < K; k++) { lp[k] = std::exp(lp[k] - mx); se += lp[k]; }
      logw[p] += mx + std::log(se);
      double u = R::unif_rand() * se, acc = 0.0;
      int z = K - 1;
      for (int k = 0; k < K - 1; k++) { acc += lp[k]; if (u <= acc) { z = k; break; } }
      c[z] += 1;
      for (int j = 0; j < D; j++) {
        std::size_t cj = (std::size_t) z * D + j;
        double yj = y(t, j);
        s[cj] += yj;
        q[cj] += yj * yj;
        bb[cj] = b + 0.5 * (q[cj] - s[cj] * s[cj] / (k0 + c[z]));
      }
    }
    double mn = *std::max_element(logw.begin(), logw.end()), sn = 0.0, sn2 = 0.0;
    for (int p = 0; p < P; p++) { double w = std::exp(logw[p] - mn); sn += w; sn2 += w * w; }
    log_z += (mn + std::log(sn)) - (mo + std::log(so));
    if (sn * sn / sn2 < P / 2.0 && t < n - 1) {
      cnt_new.resize(cnt.size()); S_new.resize(S.size()); Q_new.resize(Q.size()); B_new.resize(B.size());
      double u = R::unif_rand() / P, cum = std::exp(logw[0] - mn) / sn;
      int src = 0;
      for (int p = 0; p < P; p++) {
        double pos = u + (double) p / P;
        while (pos > cum && src < P - 1) { src++; cum += std::exp(logw[src] - mn) / sn; }
        std::copy_n(&cnt[(std::size_t) src * K], K, &cnt_new[(std::size_t) p * K]);
        std::copy_n(&S[(std::size_t) src * cells], cells, &S_new[(std::size_t) p * cells]);
        std::copy_n(&Q[(std::size_t) src * cells], cells, &Q_new[(std::size_t) p * cells]);
        std::copy_n(&B[(std::size_t) src * cells], cells, &B_new[(std::size_t) p * cells]);
      }
      cnt.swap(cnt_new); S.swap(S_new); Q.swap(Q_new); B.swap(B_new);
      std::fill(logw.begin(), logw.end(), 0.0);
    }
  }
  return log_z;
}')

smc_mixture <- function(cs, seed) {
  dat <- mixture_data(cs)
  set.seed(seed)
  y <- dat$y[sample.int(dat$N), , drop = FALSE]
  t0 <- proc.time()[["elapsed"]]
  log_z <- smc_mixture_cpp(y, dat$K, as.integer(smc_particles), dat$alpha, dat$a, dat$b, dat$r)
  list(log_z = log_z, seconds = proc.time()[["elapsed"]] - t0)
}

# ---- an independent estimator for the generalised linear models -----------------------------

# The log posterior density (unnormalised: log prior + log likelihood, with all constants) and
# its gradient at the rows of `theta`, in the package's parametrisation: beta, and for the
# negative binomial t = log omega with its log-Jacobian t. Written from the model's definition
# with R's densities, independently of the Stan programs and of the package.
glm_log_post <- function(family, dat, theta, gradient = FALSE) {
  theta <- matrix(theta, ncol = dat$P + (family == "negbin"))
  beta <- theta[, seq_len(dat$P), drop = FALSE]
  eta <- beta %*% t(dat$X)                                  # draws x observations
  if (family != "logistic") eta <- sweep(eta, 2, dat$offset, "+")
  y <- matrix(dat$y, nrow(eta), ncol(eta), byrow = TRUE)
  z <- sweep(beta, 2, dat$prior_location) / rep(dat$prior_scale, each = nrow(beta))
  lp <- rowSums(stats::dnorm(z, log = TRUE)) - sum(log(dat$prior_scale))
  g <- -z / rep(dat$prior_scale, each = nrow(beta))
  if (family == "logistic") {
    lp <- lp + rowSums(stats::plogis(ifelse(y == 1, eta, -eta), log.p = TRUE))
    r <- y - stats::plogis(eta)
  } else if (family == "poisson") {
    lp <- lp + rowSums(stats::dpois(y, exp(eta), log = TRUE))
    r <- y - exp(eta)
  } else {
    t <- theta[, dat$P + 1L]
    omega <- exp(t)
    phi <- omega^-2
    mu <- exp(eta)
    lp <- lp + log(2) + stats::dnorm(omega, 0, dat$omega_sd, log = TRUE) + t +
      rowSums(stats::dnbinom(y, size = phi, mu = mu, log = TRUE))
    r <- phi * (y - mu) / (phi + mu)
    dphi <- rowSums(digamma(y + phi) - digamma(phi) - log1p(mu / phi) + (mu - y) / (phi + mu))
    g <- cbind(g, dphi * (-2 * phi) + 1 - (omega / dat$omega_sd)^2)
  }
  if (!gradient) return(lp)
  g[, seq_len(dat$P)] <- g[, seq_len(dat$P)] + r %*% dat$X
  g
}

# The posterior mode, the Laplace approximation of log Z there, and importance sampling from a
# multivariate t (5 degrees of freedom) centred at the mode with the inverse Hessian as its scale
# matrix: log Z = log mean(w), w = posterior density / proposal density, unbiased in Z, with
# the delta-method standard error of its log. These posteriors have a few parameters and are
# close to normal, so the weights are well behaved (their effective sample size is recorded).
glm_importance <- function(cs, dat, seed, draws = 2e5, df = 5) {
  t0 <- proc.time()[["elapsed"]]
  family <- cs$family
  d <- dat$P + (family == "negbin")
  start <- numeric(d)
  if (family != "logistic") start[1] <- log(mean(dat$y))
  f <- function(th) -glm_log_post(family, dat, th)
  gr <- function(th) -drop(glm_log_post(family, dat, th, gradient = TRUE))
  opt <- stats::optim(start, f, gr, method = "BFGS", control = list(maxit = 1000, reltol = 1e-14))
  for (i in 1:5) {                                           # Newton steps to polish the mode
    h <- stats::optimHess(opt$par, f, gr)
    opt$par <- opt$par - solve(h, gr(opt$par))
  }
  h <- stats::optimHess(opt$par, f, gr)
  stopifnot(opt$convergence == 0, max(abs(gr(opt$par))) < 1e-6)
  lp_mode <- -f(opt$par)
  laplace <- lp_mode + 0.5 * d * log(2 * pi) - 0.5 * as.numeric(determinant(h)$modulus)
  set.seed(seed)
  L <- t(chol(solve(h)))
  chunk <- 2e4
  lw <- unlist(lapply(seq_len(ceiling(draws / chunk)), function(k) {
    zz <- matrix(stats::rnorm(chunk * d), chunk, d)
    u <- stats::rchisq(chunk, df) / df
    th <- sweep(zz %*% t(L) / sqrt(u), 2, opt$par, "+")
    q <- rowSums((zz / sqrt(u))^2)                           # Mahalanobis distance^2
    log_q <- lgamma((df + d) / 2) - lgamma(df / 2) - d / 2 * log(df * pi) -
      sum(log(diag(L))) - (df + d) / 2 * log1p(q / df)
    glm_log_post(family, dat, th) - log_q
  }))
  m <- max(lw)
  w <- exp(lw - m)
  list(laplace = laplace, log_z = m + log(mean(w)), se = stats::sd(w) / sqrt(length(w)) / mean(w),
       ess = sum(w)^2 / sum(w^2), draws = length(w), seconds = proc.time()[["elapsed"]] - t0)
}

# ---- Stan runs ------------------------------------------------------------------------------

compiled <- list()
stan_program <- function(family) {
  if (is.null(compiled[[family]])) {
    message(format(Sys.time(), "%H:%M:%S "), "compiling the ", family, " program")
    code <- switch(family, softmax = stan_softmax, mixture = stan_mixture, logistic = stan_logistic,
                   poisson = stan_poisson, negbin = stan_negbin)
    compiled[[family]] <<- stan_model(model_code = code, model_name = family)
  }
  compiled[[family]]
}

# Mixture starting points: the posterior can have minor modes where chains started at random
# stay (a component stretched over two clusters, say, hundreds of nats below the best). Short
# pilot chains start from scattered data-driven points (the means at K distinct observations,
# equal weights, each variance the column's variance / K); the main chains start at draws of the
# pilot chain with the highest mean log density. The main chains must then agree (Rhat), and
# the SMC estimate, which does not depend on finding modes, checks that no mode of appreciable
# mass was missed.
mixture_inits <- function(dat, seed) {
  set.seed(seed)
  K <- dat$K
  D <- dat$D
  starts <- lapply(seq_len(pilot_chains), function(i) {
    repeat {
      mu <- dat$y[sample.int(dat$N, K), , drop = FALSE]
      if (!anyDuplicated(mu[, 1])) break
    }
    mu <- mu[order(mu[, 1]), , drop = FALSE]
    list(beta = rep(1 / K, K), mu1 = mu[, 1], mu_rest = mu[, -1, drop = FALSE],
         sigma2 = matrix(apply(dat$y, 2, var) / K, K, D, byrow = TRUE))
  })
  # (Stan warns that the pilot chains disagree: they are meant to, when there are minor modes.)
  pilot <- suppressWarnings(sampling(
    stan_program("mixture"), data = dat[c("N", "D", "K", "y", "alpha", "a", "b", "r")],
    chains = pilot_chains, iter = pilot_iter, warmup = pilot_iter - 100L, init = starts,
    seed = seed, refresh = 0
  ))
  draws <- as.array(pilot)
  mode_lp <- apply(draws[, , "lp__"], 2, mean)
  best <- which.max(mode_lp)
  par <- function(it, name) draws[it, best, grep(paste0("^", name, "\\["), dimnames(draws)[[3]])]
  inits <- lapply(round(seq(100, 1, length.out = chains)), function(it) {
    list(beta = par(it, "beta"), mu1 = par(it, "mu1"),
         mu_rest = matrix(par(it, "mu_rest"), K, D - 1),   # Stan names matrices column-major
         sigma2 = matrix(par(it, "sigma2"), K, D))
  })
  list(inits = inits, note = sprintf("pilot chains' mean lp__: %s",
                                     paste(sprintf("%.1f", sort(mode_lp, decreasing = TRUE)), collapse = " ")))
}

# One Stan run and its bridge-sampling estimates (warp3, the reference, and the normal method,
# which has an error estimate).
stan_run <- function(family, dat, seed, init = "random", metric = "diag_e") {
  t0 <- proc.time()[["elapsed"]]
  fit <- sampling(stan_program(family), data = dat[setdiff(names(dat), "perm")],
                  chains = chains, iter = iter, warmup = warmup, init = init, seed = seed,
                  refresh = 0, control = list(adapt_delta = 0.9, metric = metric))
  draws <- as.array(fit)
  rhat <- suppressWarnings(apply(draws, 3, rstan::Rhat))       # NA for constants (beta with K = 1)
  ess <- suppressWarnings(apply(draws, 3, rstan::ess_bulk))
  set.seed(seed)
  warp3 <- bridge_sampler(fit, method = "warp3", silent = TRUE)
  normal <- bridge_sampler(fit, method = "normal", silent = TRUE)
  list(fit = fit, warp3 = warp3$logml, normal = normal$logml, normal_error = error_measures(normal)$cv,
       divergences = get_num_divergent(fit), treedepth = get_num_max_treedepth(fit),
       low_bfmi = length(get_low_bfmi_chains(fit)), max_rhat = max(rhat, na.rm = TRUE),
       min_ess = min(ess, na.rm = TRUE), seconds = proc.time()[["elapsed"]] - t0)
}

# ---- check against the package --------------------------------------------------------------

# With sgais installed: build the model from its code and compare n, dim and the log density
# (prior + likelihood) with the Stan program's at a few posterior draws. Stan's density is taken
# without its transforms' Jacobians (adjust_transform = FALSE), i.e. over (beta_1..K-1, mu,
# sigma2), theta, beta or (beta, omega); the package's is over its unconstrained vector, so for
# the mixture its log-Jacobian sum_k log beta_k + sum_kj log sigma2_kj, and for the negative
# binomial log omega, is taken off first. For the generalised linear models the package's
# centred design, response and coefficient priors are also compared with the Stan data.
package_check <- function(cs, dat, fit) {
  if (!requireNamespace("sgais", quietly = TRUE)) return("sgais not installed: not checked")
  model <- eval(str2lang(cs$model), envir = new.env(parent = asNamespace("sgais")))
  evaluate <- get("model_evaluate", envir = asNamespace("sgais"))
  dim <- get_num_upars(fit)
  if (model$n != dat$N || model$dim != dim) {
    stop(sprintf("%s: the package's model has n = %d, dim = %d; the Stan program n = %d, dim = %d",
                 cs$case, model$n, model$dim, dat$N, dim))
  }
  glm <- cs$family %in% c("logistic", "poisson", "negbin")
  if (glm) {
    moments <- get("coef_prior_moments", envir = asNamespace("sgais"))(model, dat$P)
    same <- c(
      design = max(abs(model$data$xt - t(dat$X))) < 1e-10,
      response = identical(as.double(model$data$y), as.double(dat$y)),
      offset = cs$family == "logistic" || identical(as.double(model$data$offset), dat$offset),
      prior = moments$normal && max(abs(moments$location - dat$prior_location)) < 1e-12 &&
        max(abs(moments$scale / dat$prior_scale - 1)) < 1e-12,
      overdispersion = cs$family != "negbin" ||
        identical(as.double(model$hyper$overdispersion_prior), as.double(dat$omega_sd))
    )
    if (!all(same)) {
      stop(sprintf("%s: the package's model has another %s than the Stan data", cs$case,
                   paste(names(same)[!same], collapse = ", ")))
    }
  }
  ex <- rstan::extract(fit)
  at <- round(seq(1, length(ex$lp__), length.out = 5))
  diff <- vapply(at, function(s) {
    if (cs$family == "softmax") {
      pars <- list(theta = matrix(ex$theta[s, , ], dat$P, dat$K))
      theta <- as.vector(pars$theta)
      jacobian <- 0
    } else if (glm) {
      pars <- list(beta = array(ex$beta[s, ], dat$P))
      theta <- pars$beta
      jacobian <- 0
      if (cs$family == "negbin") {
        pars$omega <- ex$omega[s]
        theta <- c(theta, log(pars$omega))
        jacobian <- log(pars$omega)
      }
    } else {
      K <- dat$K
      D <- dat$D
      pars <- list(beta = array(ex$beta[s, ], K), mu1 = array(ex$mu1[s, ], K),
                   mu_rest = matrix(ex$mu_rest[s, , ], K, D - 1), sigma2 = matrix(ex$sigma2[s, , ], K, D))
      mu <- sigma2 <- matrix(0, K, D)
      mu[, dat$perm] <- cbind(pars$mu1, pars$mu_rest)      # back to the data's column order
      sigma2[, dat$perm] <- pars$sigma2
      z <- if (K > 1) log(pars$beta[-K] / pars$beta[K])
      theta <- c(z, as.vector(t(mu)), as.vector(t(log(sigma2))))  # component after component
      jacobian <- sum(log(pars$beta)) + sum(log(sigma2))
    }
    e <- evaluate(model, theta)
    stan <- log_prob(fit, unconstrain_pars(fit, pars), adjust_transform = FALSE)
    (e$log_prior + e$log_lik - jacobian) - stan
  }, numeric(1))
  if (any(abs(diff) > 1e-6 * pmax(1, abs(ex$lp__[at])))) {
    stop(sprintf("%s: the Stan and package log densities differ (by up to %.3g)", cs$case, max(abs(diff))))
  }
  if (cs$family == "mixture" && cs$components == 1L) {
    exact <- sgais::exact_log_evidence(model)
    if (abs(exact - mixture_closed_form(cs)) > 1e-8) {
      stop(sprintf("%s: closed form %.6f here, %.6f from sgais::exact_log_evidence()", cs$case,
                   mixture_closed_form(cs), exact))
    }
  }
  sprintf("package density matches (max |diff| %.1e)", max(abs(diff)))
}

# ---- one case -------------------------------------------------------------------------------

run_case <- function(cs, index) {
  message(format(Sys.time(), "%H:%M:%S "), cs$case, ": ", cs$model)
  t0 <- proc.time()[["elapsed"]]
  rows <- list()
  add <- function(...) rows[[length(rows) + 1L]] <<- data.frame(case = cs$case, ..., stringsAsFactors = FALSE)
  mixture <- cs$family == "mixture"
  glm <- cs$family %in% c("logistic", "poisson", "negbin")
  offset <- if (mixture) lgamma(cs$components + 1) else 0   # log K! (see stan_mixture)
  estimates <- numeric(0)
  errors <- numeric(0)
  checked <- NULL
  dat <- if (mixture) mixture_data(cs) else if (glm) glm_data(cs) else softmax_data(cs)
  n <- dat$N
  dim <- if (mixture) (dat$K - 1) + 2 * dat$K * dat$D else if (glm) dat$P + (cs$family == "negbin")
         else dat$P * dat$K   # the package's count
  for (run in seq_len(if (mixture && smc_only) 0L else runs)) {
    seed <- 1000L * index + run
    if (mixture) {
      first <- (run - 1L) %% ncol(as.matrix(eval_code(cs$data))) + 1L
      dat <- mixture_data(cs, first)
      start <- if (cs$components > 1L) mixture_inits(dat, seed) else list(inits = "random", note = "")
      r <- stan_run("mixture", dat, seed, start$inits)
      note <- paste0("means ordered on column ", first, if (nzchar(start$note)) "; ", start$note)
    } else if (glm) {
      r <- stan_run(cs$family, dat, seed, metric = cs$metric)
      note <- ""
    } else {
      dat <- softmax_data(cs)
      r <- stan_run("softmax", dat, seed, metric = cs$metric)
      note <- ""
    }
    stopifnot(get_num_upars(r$fit) == dim)
    if (is.null(checked)) checked <- package_check(cs, dat, r$fit)
    estimates[run] <- r$warp3 + offset
    errors[run] <- r$normal_error
    for (m in c("warp3", "normal")) {
      add(estimator = paste0("stan_bridge_", m), run = run, seed = seed,
          log_evidence = r[[m]] + offset, error = if (m == "normal") r$normal_error else NA,
          divergences = r$divergences, max_treedepth_hits = r$treedepth, low_bfmi_chains = r$low_bfmi,
          max_rhat = r$max_rhat, min_ess_bulk = r$min_ess, seconds = r$seconds, note = note)
    }
    message(sprintf("  run %d: log Z = %.4f (warp3), %.4f (normal, error %.4f); %d divergences, max Rhat %.4f, %.0f s",
                    run, r$warp3 + offset, r$normal + offset, r$normal_error, r$divergences, r$max_rhat, r$seconds))
    rm(r)
  }
  # (tree depth hits cost time, not accuracy: recorded, not a failure)
  stan_run <- length(estimates) > 0
  stan_ok_runs <- all(vapply(rows, function(x) x$divergences == 0 && x$max_rhat < max_rhat, logical(1)))
  stan_sd <- if (stan_run) max(sd(estimates), sqrt(mean(errors^2))) else NA_real_
  stan_agree <- stan_run && diff(range(estimates)) < tolerance
  if (!stan_run) checked <- "package density not checked (no Stan run)"
  closed <- if (mixture) mixture_closed_form(cs) else NA_real_

  smc <- NULL
  if (mixture) {
    smc_est <- vapply(seq_len(if (cs$components == 1L) 1L else smc_runs), function(run) {
      s <- smc_mixture(cs, 1000L * index + 100L + run)
      add(estimator = "smc_allocations", run = run, seed = 1000L * index + 100L + run,
          log_evidence = s$log_z, error = NA, divergences = NA, max_treedepth_hits = NA,
          low_bfmi_chains = NA, max_rhat = NA, min_ess_bulk = NA, seconds = s$seconds,
          note = sprintf("%g particles", smc_particles))
      s$log_z
    }, numeric(1))
    # the runs' Z estimates are unbiased, so their mean is too
    smc <- list(log_z = max(smc_est) + log(mean(exp(smc_est - max(smc_est)))),
                sd = if (length(smc_est) > 1) sd(smc_est) else 0, runs = length(smc_est))
    message(sprintf("  SMC: log Z = %.4f, sd of runs %.4f", smc$log_z, smc$sd))
  }

  imp <- NULL
  if (glm) {
    imp <- glm_importance(cs, dat, 1000L * index + 100L)
    add(estimator = "laplace", run = 1L, seed = NA, log_evidence = imp$laplace, error = NA,
        divergences = NA, max_treedepth_hits = NA, low_bfmi_chains = NA, max_rhat = NA,
        min_ess_bulk = NA, seconds = NA,
        note = if (cs$family == "negbin") "at the posterior mode of (beta, log omega)" else "at the posterior mode")
    add(estimator = "importance_t", run = 1L, seed = 1000L * index + 100L, log_evidence = imp$log_z,
        error = imp$se, divergences = NA, max_treedepth_hits = NA, low_bfmi_chains = NA,
        max_rhat = NA, min_ess_bulk = NA, seconds = imp$seconds,
        note = sprintf("%g draws from a t(5) at the mode, scale the inverse Hessian; ESS %.0f",
                       imp$draws, imp$ess))
    message(sprintf("  importance sampling: log Z = %.4f (se %.4f, ESS %.0f); Laplace %.4f",
                    imp$log_z, imp$se, imp$ess, imp$laplace))
  }

  # The reference: the mean of the Stan runs, if they pass their diagnostics, agree with each
  # other, (mixtures) with the SMC estimate, (generalised linear models) with the importance
  # sampling estimate, and (K = 1) with the closed form. Otherwise, for
  # a mixture whose SMC runs agree to the tolerance, the SMC estimate; otherwise no reference.
  reference <- mean(estimates)
  method <- method_stan
  sd_out <- stan_sd
  verdict <- "ok"
  if (!stan_run) verdict <- "not run, --smc-only"
  else if (!stan_ok_runs) verdict <- "Stan diagnostics failed"
  else if (!stan_agree) verdict <- sprintf("Stan runs differ by %.3f", diff(range(estimates)))
  else if (!is.na(closed) && abs(reference - closed) > tolerance) {
    verdict <- sprintf("off the closed form by %.3f", reference - closed)
  } else if (!is.null(smc) && abs(reference - smc$log_z) > max(tolerance, 3 * sqrt(stan_sd^2 / runs + smc$sd^2 / smc$runs))) {
    verdict <- sprintf("Stan %.3f vs SMC %.3f", reference, smc$log_z)
  } else if (!is.null(imp) && abs(reference - imp$log_z) > max(tolerance, 3 * sqrt(stan_sd^2 / runs + imp$se^2))) {
    verdict <- sprintf("Stan %.3f vs importance sampling %.3f", reference, imp$log_z)
  }
  if (mixture) {
    method <- sprintf("%s; means ordered, + log(K!); SMC check: %s", method,
                      if (verdict == "ok") sprintf("%.3f", smc$log_z) else "failed")
  }
  if (glm) method <- sprintf("%s; importance sampling check: %.3f", method, imp$log_z)
  if (verdict != "ok") {
    if (!is.null(smc) && smc$sd < tolerance) {
      reference <- smc$log_z
      sd_out <- smc$sd
      method <- sprintf("collapsed SMC over allocations, %dx%g particles (Stan + bridgesampling rejected: %s)",
                        smc$runs, smc_particles, verdict)
    } else {
      message("  no reference: ", verdict)
      reference <- NA_real_
      method <- paste("no reference:", verdict)
    }
  }
  message(sprintf("  reference %.4f (sd %.4f), %s; %s; %.0f s", reference, sd_out, verdict, checked,
                  proc.time()[["elapsed"]] - t0))
  list(
    reference = data.frame(case = cs$case, model = cs$model, n = n, dim = dim,
                           reference = round(reference, 4), reference_sd = signif(sd_out, 2),
                           method = method, closed_form = round(closed, 4),
                           date = format(Sys.Date()), stringsAsFactors = FALSE),
    runs = do.call(rbind, rows)
  )
}

# ---- all cases ------------------------------------------------------------------------------

started <- proc.time()[["elapsed"]]
results <- lapply(cases, function(cs) run_case(cs, case_index[[cs$case]]))
refs <- do.call(rbind, lapply(results, `[[`, "reference"))
all_runs <- do.call(rbind, lapply(results, `[[`, "runs"))
all_runs <- transform(all_runs, log_evidence = round(log_evidence, 4), error = signif(error, 3),
                      max_rhat = round(max_rhat, 4), min_ess_bulk = round(min_ess_bulk),
                      seconds = round(seconds, 1))

# with some cases only, replace their rows in the existing files
merge_rows <- function(new, file) {
  if (!length(only) || !file.exists(file)) return(new)
  old <- utils::read.csv(file, stringsAsFactors = FALSE)
  rbind(old[!old$case %in% new$case, names(new)], new)
}
refs <- merge_rows(refs[!is.na(refs$reference), ], out_file)
all_runs <- merge_rows(all_runs, runs_file)
utils::write.csv(refs, out_file, row.names = FALSE)
utils::write.csv(all_runs, runs_file, row.names = FALSE)
message(sprintf("%s: wrote %s and %s (%.0f min)", format(Sys.time(), "%H:%M:%S"), out_file, runs_file,
                (proc.time()[["elapsed"]] - started) / 60))
print(refs[c("case", "n", "dim", "reference", "reference_sd", "closed_form")], row.names = FALSE)
