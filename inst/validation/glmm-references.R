# Stan + bridgesampling references for the evidence (log marginal likelihood) of GLMs with a
# random intercept per group (logistic, Poisson, negative binomial; R/glm_mixed.R), on the
# simulated data of glmm-data.R with its priors: coefficients (intercept, x1, x2) each
# N(0, 2.5^2), group sd tau ~ half-normal(1), u_g ~ N(0, tau^2) and (negative binomial) size
# 1 / omega^2 with omega ~ half-normal(1). Each case is fitted by rstan (the Stan program below,
# group effects non-centred, u = tau z with z_g ~ N(0, 1), every density with its normalising
# constant: `target += *_lpdf` rather than `~`, and + log(2) for each half-normal, since bridge
# sampling needs the normalised posterior; 4 chains of 4000 warmup + 4000 sampling iterations,
# adapt_delta 0.8, refitted at 0.95 if any transition diverged), then
# bridgesampling::bridge_sampler(method = "normal"), whose error is error_measures()$cv (the
# relative SE of the marginal likelihood, so about the SE of its log), with a warp3 estimate
# alongside as a check. Each case is also computed by the independent importance-sampling
# reference of glmm-reference-functions.R (adaptive Gauss-Hermite quadrature per group, then a
# multivariate-t over (beta, [log omega], log tau), 4000 draws), and the two are compared.
# rstan and bridgesampling are development references, never dependencies (apt-get install
# r-cran-rstan r-cran-bridgesampling). Writes glmm-references.csv beside this script (each
# fit's diagnostics in its columns) and prints a summary. Timings are wall seconds, indicative.
#   Rscript inst/validation/glmm-references.R      (from the package root; 10-30 minutes)
source(file.path("inst", "validation", "stan-setup.R")) # rstan, bridgesampling, suite.R
source(file.path(validation_dir, "glmm-data.R"))
source(file.path(validation_dir, "glmm-reference-functions.R"))
out_csv <- file.path(validation_dir, "glmm-references.csv")

chains <- 4L
warmup <- 4000L
iter <- 8000L # per chain, warmup included

cases <- data.frame(
  family = c("logistic", "logistic", "logistic", "poisson", "poisson", "negative_binomial"),
  n = c(2000L, 2000L, 10000L, 2000L, 2000L, 2000L),
  groups = c(40L, 40L, 50L, 40L, 40L, 40L),
  seed = c(201L, 202L, 203L, 201L, 202L, 201L),
  stringsAsFactors = FALSE)

# The Stan program for one family; rstan 2.21's syntax (arrays as `int y[N]`).
stan_program <- function(family) {
  nb <- family == "negative_binomial"
  y_decl <- if (family == "logistic") "int<lower=0, upper=1> y[N];" else "int<lower=0> y[N];"
  likelihood <- switch(family,
    logistic = "target += bernoulli_logit_lpmf(y | eta);",
    poisson = "target += poisson_log_lpmf(y | eta);",
    negative_binomial = "target += neg_binomial_2_log_lpmf(y | eta, 1 / square(omega));")
  paste(c(
    "data {",
    "  int<lower=1> N;",
    "  int<lower=1> G;",
    paste0("  ", y_decl),
    "  vector[N] x1;",
    "  vector[N] x2;",
    "  int<lower=1, upper=G> g[N];",
    "  real<lower=0> prior_sd;",
    "  real<lower=0> tau_scale;",
    if (nb) "  real<lower=0> omega_scale;",
    "}",
    "parameters {",
    "  vector[3] beta;",
    "  real<lower=0> tau;",
    if (nb) "  real<lower=0> omega;",
    "  vector[G] z;",
    "}",
    "model {",
    "  vector[N] eta = beta[1] + beta[2] * x1 + beta[3] * x2 + tau * z[g];",
    "  // every prior normalised: half-normals are normal_lpdf + log(2) on (0, inf)",
    "  target += normal_lpdf(beta | 0, prior_sd);",
    "  target += normal_lpdf(tau | 0, tau_scale) + log(2);",
    if (nb) "  target += normal_lpdf(omega | 0, omega_scale) + log(2);",
    "  target += normal_lpdf(z | 0, 1);",
    paste0("  ", likelihood),
    "}"), collapse = "\n")
}

stan_data <- function(family, d) {
  x <- list(N = nrow(d), G = length(unique(d$g)), y = as.integer(d$y), x1 = d$x1, x2 = d$x2,
            g = match(d$g, sort(unique(d$g))), prior_sd = glmm_prior_sd,
            tau_scale = glmm_group_sd_scale)
  if (family == "negative_binomial") x$omega_scale <- 1
  x
}

elapsed <- function(expr) {
  t0 <- proc.time()[["elapsed"]]
  value <- force(expr)
  list(value = value, seconds = proc.time()[["elapsed"]] - t0)
}

started <- proc.time()[["elapsed"]]
say("glmm references (Stan + bridgesampling, AGHQ-IS), %s", stan_versions())
say("%d chains x (%d warmup + %d sampling); bridge_sampler(method = \"normal\"), warp3 as check",
    chains, warmup, iter - warmup)
say("")

models <- list()
compile_seconds <- list()
rows <- list()
for (i in seq_len(nrow(cases))) {
  cs <- cases[i, ]
  family <- cs$family
  if (is.null(models[[family]])) {
    comp <- elapsed(rstan::stan_model(model_code = stan_program(family),
                                      model_name = paste0("glmm_", family)))
    models[[family]] <- comp$value
    compile_seconds[[family]] <- comp$seconds
    say("compiled %s in %.1f s", family, comp$seconds)
  }
  d <- glmm_data(family, cs$n, cs$groups, cs$seed)
  sdata <- stan_data(family, d)
  adapt_delta <- 0.8
  repeat {
    fit <- elapsed(suppressWarnings(rstan::sampling(
      models[[family]], data = sdata, chains = chains, iter = iter, warmup = warmup,
      seed = cs$seed, cores = 2, refresh = 0, control = list(adapt_delta = adapt_delta))))
    divergences <- sum(vapply(rstan::get_sampler_params(fit$value, inc_warmup = FALSE),
                              function(s) sum(s[, "divergent__"]), numeric(1)))
    if (divergences == 0 || adapt_delta >= 0.95) break
    say("%s n=%d seed %d: %d divergences at adapt_delta %.2f, refitting at 0.95", family,
        cs$n, cs$seed, divergences, adapt_delta)
    adapt_delta <- 0.95
  }
  max_rhat <- max(rstan::summary(fit$value)$summary[, "Rhat"], na.rm = TRUE)
  set.seed(cs$seed)
  bs <- elapsed(bridgesampling::bridge_sampler(fit$value, method = "normal", cores = 2,
                                               silent = TRUE))
  stan_error <- bridgesampling::error_measures(bs$value)$cv
  set.seed(cs$seed)
  warp <- elapsed(bridgesampling::bridge_sampler(fit$value, method = "warp3", cores = 2,
                                                 silent = TRUE))
  ref <- elapsed(glmm_reference(family, d, draws = 4000))
  rows[[i]] <- data.frame(
    family = family, n = cs$n, groups = cs$groups, seed = cs$seed,
    stan_log_evidence = bs$value$logml, stan_error = stan_error,
    aghq_is_log_evidence = ref$value$log_evidence, aghq_is_se = ref$value$se,
    difference = bs$value$logml - ref$value$log_evidence,
    stan_seconds = fit$seconds, bridge_seconds = bs$seconds,
    divergences = divergences, max_rhat = max_rhat,
    stan_compile_seconds = compile_seconds[[family]],
    stan_warp3_log_evidence = warp$value$logml, warp3_seconds = warp$seconds,
    aghq_is_seconds = ref$seconds, aghq_is_ess = ref$value$ess, adapt_delta = adapt_delta,
    how = sprintf(paste0(
      "rstan %s (Stan program in glmm-references.R, all constants kept), %d chains x (%d ",
      "warmup + %d sampling), seed %d, adapt_delta %.2f; bridgesampling %s ",
      "bridge_sampler(method = \"normal\"), error = error_measures()$cv; AGHQ-IS: ",
      "glmm_reference(draws = 4000, q = 15); %s"),
      utils::packageVersion("rstan"), chains, warmup, iter - warmup, cs$seed, adapt_delta,
      utils::packageVersion("bridgesampling"), format(Sys.Date())),
    stringsAsFactors = FALSE)
  r <- rows[[i]]
  say(paste0("%-17s n=%5d G=%2d seed %d: stan %.3f (err %.3f, warp3 %.3f)  aghq-is %.3f ",
             "(se %.3f)  diff %+.3f | stan %.0f s (+%.0f s compile), bridge %.0f s, warp3 %.0f ",
             "s, aghq-is %.0f s | div %d, max Rhat %.4f"),
      family, r$n, r$groups, r$seed, r$stan_log_evidence, r$stan_error,
      r$stan_warp3_log_evidence, r$aghq_is_log_evidence, r$aghq_is_se, r$difference,
      r$stan_seconds, r$stan_compile_seconds, r$bridge_seconds, r$warp3_seconds,
      r$aghq_is_seconds, r$divergences, r$max_rhat)
}
tab <- do.call(rbind, rows)
utils::write.csv(tab, out_csv, row.names = FALSE)
say("")
say("largest |stan - aghq_is|: %.3f nats; total %.1f min", max(abs(tab$difference)),
    (proc.time()[["elapsed"]] - started) / 60)
say("written to %s", normalizePath(out_csv))
