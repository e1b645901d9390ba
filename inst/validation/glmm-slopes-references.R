# Stan + bridgesampling references for the evidence of GLMs with a random intercept and a random
# slope per group, correlated (R/glm_mixed.R), on the data and priors of glmm-data.R
# (glmm_slopes_data(), glmm_slopes_model(): coefficients N(0, 2.5^2), both group sds
# half-normal(1), their correlation LKJ(2); 2,000 rows in 40 groups). Written apart from the
# package: Stan samples the group effects (non-centred, b_g = diag(tau) L z_g with z_g ~ N(0, I)
# and L ~ lkj_corr_cholesky), where the package integrates them out on a grid; every density
# with its normalising constant (`target += *_lpdf`, + log(2) for each half-normal), since
# bridge sampling needs the normalised posterior. 4 chains of 4000 warmup + 4000 sampling
# iterations (adapt_delta 0.9), then bridgesampling::bridge_sampler(method = "normal"), whose
# error is error_measures()$cv, with warp3 alongside as a check. Writes
# glmm-slopes-references.csv beside this script (with each fit's diagnostics) and prints a
# summary.
#   Rscript inst/validation/glmm-slopes-references.R      (from the package root; 5-10 minutes)
source(file.path("inst", "validation", "stan-setup.R")) # rstan, bridgesampling, suite.R
source(file.path(validation_dir, "glmm-data.R"))
out_csv <- file.path(validation_dir, "glmm-slopes-references.csv")
chains <- 4L
warmup <- 4000L
iter <- 8000L
cases <- data.frame(family = c("logistic", "logistic", "poisson"), n = 2000L, groups = 40L,
                    seed = c(201L, 202L, 201L), stringsAsFactors = FALSE)

# rstan 2.21's syntax.
program <- function(family) {
  paste(c(
    "data {",
    "  int<lower=1> N;",
    "  int<lower=1> G;",
    if (family == "logistic") "  int<lower=0, upper=1> y[N];" else "  int<lower=0> y[N];",
    "  vector[N] x1;",
    "  vector[N] x2;",
    "  int<lower=1, upper=G> g[N];",
    "  real<lower=0> prior_sd;",
    "  real<lower=0> eta;",
    "}",
    "parameters {",
    "  vector[3] beta;",
    "  vector<lower=0>[2] tau;",
    "  cholesky_factor_corr[2] L;",
    "  matrix[2, G] z;",
    "}",
    "model {",
    "  matrix[2, G] b = diag_pre_multiply(tau, L) * z;",
    "  vector[N] lin = beta[1] + beta[2] * x1 + beta[3] * x2 + to_vector(b[1, g]) +",
    "                  to_vector(b[2, g]) .* x1;",
    "  target += normal_lpdf(beta | 0, prior_sd);",
    "  target += normal_lpdf(tau | 0, 1) + 2 * log(2);",
    "  target += lkj_corr_cholesky_lpdf(L | eta);",
    "  target += normal_lpdf(to_vector(z) | 0, 1);",
    if (family == "logistic") "  target += bernoulli_logit_lpmf(y | lin);" else
      "  target += poisson_log_lpmf(y | lin);",
    "}"), collapse = "\n")
}

say("glmm slopes references (Stan + bridgesampling), %s", stan_versions())
models <- list()
rows <- list()
for (i in seq_len(nrow(cases))) {
  cs <- cases[i, ]
  if (is.null(models[[cs$family]])) {
    t0 <- proc.time()[["elapsed"]]
    models[[cs$family]] <- rstan::stan_model(model_code = program(cs$family),
                                             model_name = paste0("glmm_slopes_", cs$family))
    say("compiled %s in %.0f s", cs$family, proc.time()[["elapsed"]] - t0)
  }
  d <- glmm_slopes_data(cs$family, cs$n, cs$groups, cs$seed)
  sdata <- list(N = nrow(d), G = cs$groups, y = as.integer(d$y), x1 = d$x1, x2 = d$x2,
                g = match(d$g, sort(unique(d$g))), prior_sd = glmm_prior_sd, eta = 2)
  stopifnot(length(unique(d$g)) == cs$groups)
  t0 <- proc.time()[["elapsed"]]
  fit <- suppressWarnings(rstan::sampling(models[[cs$family]], data = sdata, chains = chains,
                                          iter = iter, warmup = warmup, seed = cs$seed,
                                          cores = 2, refresh = 0,
                                          control = list(adapt_delta = 0.9)))
  stan_seconds <- proc.time()[["elapsed"]] - t0
  divergences <- sum(vapply(rstan::get_sampler_params(fit, inc_warmup = FALSE),
                            function(s) sum(s[, "divergent__"]), numeric(1)))
  max_rhat <- max(rstan::summary(fit)$summary[, "Rhat"], na.rm = TRUE)
  set.seed(cs$seed)
  t0 <- proc.time()[["elapsed"]]
  bs <- bridgesampling::bridge_sampler(fit, method = "normal", cores = 2, silent = TRUE)
  bridge_seconds <- proc.time()[["elapsed"]] - t0
  set.seed(cs$seed)
  warp <- bridgesampling::bridge_sampler(fit, method = "warp3", cores = 2, silent = TRUE)
  rows[[i]] <- data.frame(
    family = cs$family, n = cs$n, groups = cs$groups, seed = cs$seed,
    stan_log_evidence = bs$logml, stan_error = bridgesampling::error_measures(bs)$cv,
    stan_warp3_log_evidence = warp$logml, stan_seconds = stan_seconds,
    bridge_seconds = bridge_seconds, divergences = divergences, max_rhat = max_rhat,
    how = sprintf(paste0("rstan %s (Stan program in glmm-slopes-references.R, effects sampled, ",
                         "all constants kept), %d chains x (%d warmup + %d sampling), seed %d, ",
                         "adapt_delta 0.9; bridgesampling %s bridge_sampler(method = \"normal\"), ",
                         "error = error_measures()$cv; %s"),
                  utils::packageVersion("rstan"), chains, warmup, iter - warmup, cs$seed,
                  utils::packageVersion("bridgesampling"), format(Sys.Date())),
    stringsAsFactors = FALSE)
  r <- rows[[i]]
  say("%-8s n=%d G=%d seed %d: log Z %.3f (error %.3f, warp3 %.3f) | stan %.0f s, bridge %.0f s | div %d, max Rhat %.4f",
      r$family, r$n, r$groups, r$seed, r$stan_log_evidence, r$stan_error,
      r$stan_warp3_log_evidence, r$stan_seconds, r$bridge_seconds, r$divergences, r$max_rhat)
}
tab <- do.call(rbind, rows)
utils::write.csv(tab, out_csv, row.names = FALSE)
say("written to %s", normalizePath(out_csv))
