# Stan + bridgesampling references for the evidence of linear regression with a random
# intercept and slope per group, correlated, every variance unknown (R/linear_mixed.R), on the
# data and priors of random-effects-data.R (random_effects_cor_model(): coefficients normal,
# sigma^2 ~ InvGamma(2, 0.5), group sds half-normal(1), correlation LKJ(2); the seeds of the
# validation, random-effects.R). Written apart from the package's C code: the Stan program below
# integrates the group effects out per group by Woodbury's identity on each group's sums
# (Z'Z, Z'X, Z'y), where the package takes the rows one at a time, and states the LKJ prior
# with Stan's lkj_corr_cholesky, where the package has its own; every density with its
# normalising constant (`target += *_lpdf`, + log(2) for each half-normal, the Jacobian of
# sigma -> sigma^2), since bridge sampling needs the normalised posterior. 4 chains of 2000
# warmup + 4000 sampling iterations, then bridgesampling::bridge_sampler(method = "normal"),
# whose error is error_measures()$cv (about the SE of the log), with warp3 alongside as a check.
# rstan and bridgesampling are development references, never dependencies (apt-get install
# r-cran-rstan r-cran-bridgesampling). Writes random-effects-cor-references.csv beside this
# script (with each fit's diagnostics) and prints a summary.
#   Rscript inst/validation/random-effects-cor-references.R [--seeds=101,102]   (a few minutes)
source(file.path("inst", "validation", "stan-setup.R")) # rstan, bridgesampling, suite.R
source(file.path(validation_dir, "random-effects-data.R"))
seeds <- as.integer(strsplit(opt("seeds", "101,102"), ",")[[1]])
out_csv <- file.path(validation_dir, "random-effects-cor-references.csv")
chains <- 4L
warmup <- 2000L
iter <- 6000L # per chain, warmup included

# rstan 2.21's syntax. Rows sorted by group; group k is rows start[k]..start[k] + len[k] - 1.
# log N(r_g; 0, s2 I + Z T Z') = -(n log 2 pi + (n - q) log s2 + log det T + log det M
#   + (r'r - (Z'r)' M^-1 (Z'r)) / s2) / 2,  M = s2 T^-1 + Z'Z.
program <- "
data {
  int<lower=1> N;
  int<lower=1> G;
  int<lower=1> P;
  int<lower=1> Q;
  matrix[N, P] X;
  matrix[N, Q] Z;
  vector[N] y;
  int<lower=1> start[G];
  int<lower=1> len[G];
  vector[P] beta_sd;
  real<lower=0> shape;
  real<lower=0> scale;
  real<lower=0> tau_scale;
  real<lower=0> eta;
}
transformed data {
  matrix[Q, Q] ZZ[G];
  matrix[Q, P] ZX[G];
  vector[Q] Zy[G];
  matrix[P, P] XX = crossprod(X);
  vector[P] Xy = X' * y;
  real yy = dot_self(y);
  for (k in 1:G) {
    matrix[len[k], Q] Zk = block(Z, start[k], 1, len[k], Q);
    ZZ[k] = crossprod(Zk);
    ZX[k] = Zk' * block(X, start[k], 1, len[k], P);
    Zy[k] = Zk' * segment(y, start[k], len[k]);
  }
}
parameters {
  vector[P] beta;
  real<lower=0> sigma;
  vector<lower=0>[Q] tau;
  cholesky_factor_corr[Q] L;
}
model {
  real s2 = square(sigma);
  matrix[Q, Q] LT = diag_pre_multiply(tau, L);
  matrix[Q, Q] Tinv = inverse_spd(multiply_lower_tri_self_transpose(LT));
  real log_det_T = 2 * sum(log(diagonal(LT)));
  real rr = yy - 2 * dot_product(beta, Xy) + quad_form(XX, beta);
  real ll = -0.5 * (N * log(2 * pi()) + (N - G * Q) * log(s2) + G * log_det_T);
  for (k in 1:G) {
    vector[Q] zr = Zy[k] - ZX[k] * beta;
    matrix[Q, Q] M = s2 * Tinv + ZZ[k];
    ll += -0.5 * log_determinant(M);
    rr -= quad_form(inverse_spd(M), zr);
  }
  target += ll - 0.5 * rr / s2;
  target += normal_lpdf(beta | 0, beta_sd);
  target += inv_gamma_lpdf(s2 | shape, scale) + log(2 * sigma);
  target += normal_lpdf(tau | 0, tau_scale) + Q * log(2);
  target += lkj_corr_cholesky_lpdf(L | eta);
}
"

stan_data <- function(d) {
  d <- d[order(d$g), ]
  code <- match(d$g, unique(d$g))
  list(N = nrow(d), G = max(code), P = 3L, Q = 2L, X = cbind(1, d$x1, d$x2), Z = cbind(1, d$x1),
       y = d$y, start = as.array(match(seq_len(max(code)), code)),
       len = as.array(tabulate(code)), beta_sd = c(5, 2, 2), shape = 2, scale = 0.5,
       tau_scale = 1, eta = 2)
}

say("random-effects-cor references (Stan + bridgesampling), %s", stan_versions())
t0 <- proc.time()[["elapsed"]]
model <- rstan::stan_model(model_code = program, model_name = "random_effects_cor")
say("compiled in %.0f s", proc.time()[["elapsed"]] - t0)
rows <- list()
for (seed in seeds) {
  d <- random_effects_data(seed, rho = random_effects_cor_rho)
  t0 <- proc.time()[["elapsed"]]
  fit <- suppressWarnings(rstan::sampling(model, data = stan_data(d), chains = chains, iter = iter,
                                          warmup = warmup, seed = seed, cores = 2, refresh = 0))
  stan_seconds <- proc.time()[["elapsed"]] - t0
  divergences <- sum(vapply(rstan::get_sampler_params(fit, inc_warmup = FALSE),
                            function(s) sum(s[, "divergent__"]), numeric(1)))
  max_rhat <- max(rstan::summary(fit)$summary[, "Rhat"], na.rm = TRUE)
  set.seed(seed)
  t0 <- proc.time()[["elapsed"]]
  bs <- bridgesampling::bridge_sampler(fit, method = "normal", cores = 2, silent = TRUE)
  bridge_seconds <- proc.time()[["elapsed"]] - t0
  set.seed(seed)
  warp <- bridgesampling::bridge_sampler(fit, method = "warp3", cores = 2, silent = TRUE)
  rows[[length(rows) + 1L]] <- data.frame(
    case = "slopes_cor", seed = seed, n = nrow(d), rho = random_effects_cor_rho,
    log_evidence = bs$logml, error = bridgesampling::error_measures(bs)$cv,
    warp3_log_evidence = warp$logml, stan_seconds = stan_seconds,
    bridge_seconds = bridge_seconds, divergences = divergences, max_rhat = max_rhat,
    how = sprintf(paste0("rstan %s (Stan program in random-effects-cor-references.R, group ",
                         "effects integrated out by Woodbury, all constants kept), %d chains x ",
                         "(%d warmup + %d sampling), seed %d; bridgesampling %s ",
                         "bridge_sampler(method = \"normal\"), error = error_measures()$cv; %s"),
                  utils::packageVersion("rstan"), chains, warmup, iter - warmup, seed,
                  utils::packageVersion("bridgesampling"), format(Sys.Date())),
    stringsAsFactors = FALSE)
  r <- rows[[length(rows)]]
  say("seed %d: log Z %.3f (error %.3f, warp3 %.3f) | stan %.0f s, bridge %.0f s | div %d, max Rhat %.4f",
      seed, r$log_evidence, r$error, r$warp3_log_evidence, r$stan_seconds, r$bridge_seconds,
      r$divergences, r$max_rhat)
}
tab <- do.call(rbind, rows)
utils::write.csv(tab, out_csv, row.names = FALSE)
say("written to %s", normalizePath(out_csv))
