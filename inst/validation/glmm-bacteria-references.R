# Stan + bridgesampling references for the evidence (log marginal likelihood) of two logistic
# regressions on MASS::bacteria (220 visits of 50 patients; y = 1 when the bacteria are present,
# "y"), for the vignette that compares them by their Bayes factor:
#   plain:   logit P(y = 1) = A theta, A = model.matrix(~ trt + week, MASS::bacteria) (columns
#            (Intercept), trtdrug, trtdrug+, week; not centred), each theta_j ~ N(0, 2.5^2);
#   patient: the same plus a random intercept per patient, logit = A theta + u_ID,
#            u_ID ~ N(0, tau^2), tau ~ half-normal(1).
# Each model is fitted by rstan (the Stan program below, the patient effects non-centred,
# u = tau z with z_g ~ N(0, 1), every density with its normalising constant: `target += *_lpdf`
# rather than `~`, and + log(2) for the half-normal, since bridge sampling needs the normalised
# posterior; 4 chains of 4000 warmup + 4000 sampling iterations, adapt_delta 0.8, refitted at
# 0.95 if any transition diverged), then bridgesampling::bridge_sampler(method = "normal"),
# whose error is error_measures()$cv (the relative SE of the marginal likelihood, so about the
# SE of its log), with a warp3 estimate alongside as a check. Each model is also computed by an
# independent check in plain R, written apart from Stan and the package: importance sampling
# from a multivariate Student-t (5 df) at the posterior mode, scaled by the inverse Hessian
# there (Geweke 1989), 4000 draws, over theta (plain; 4 parameters, the Laplace approximation
# is printed too) or over (theta, log tau) with the patient effects integrated out by the
# adaptive Gauss-Hermite quadrature of glmm-reference-functions.R's glmm_collapsed() (patient);
# this is glmm_reference() of that file for a general design matrix. The log Bayes factor
# patient vs plain is the difference of the two Stan estimates, its error the root sum of
# squares of their errors. rstan and bridgesampling are development references, never
# dependencies (apt-get install r-cran-rstan r-cran-bridgesampling). Writes
# inst/extdata/glmm-bacteria-references.csv (with each fit's diagnostics) and prints a summary.
# Timings are wall seconds and indicative.
#   Rscript inst/validation/glmm-bacteria-references.R      (from the package root; 2-5 minutes)
source(file.path("inst", "validation", "stan-setup.R")) # rstan, bridgesampling, suite.R
source(file.path(validation_dir, "glmm-reference-functions.R"))
out_csv <- file.path("inst", "extdata", "glmm-bacteria-references.csv")

chains <- 4L
warmup <- 4000L
iter <- 8000L # per chain, warmup included
prior_sd <- 2.5
tau_scale <- 1
draws <- 4000L
q <- 15L

bacteria <- MASS::bacteria
formula_fixed <- ~ trt + week
A <- stats::model.matrix(formula_fixed, bacteria)
y <- as.integer(bacteria$y == "y")
patient <- as.integer(droplevels(bacteria$ID)) # 1..50

cases <- data.frame(
  model = c("plain", "patient"),
  formula = c("y ~ trt + week", "y ~ trt + week + (1 | ID)"),
  random = c(FALSE, TRUE),
  seed = c(101L, 102L),
  stringsAsFactors = FALSE)

# The Stan program, with or without the patient intercept; rstan 2.21's syntax (`int y[N]`).
stan_program <- function(random) {
  paste(c(
    "data {",
    "  int<lower=1> N;",
    "  int<lower=1> K;",
    "  int<lower=0, upper=1> y[N];",
    "  matrix[N, K] A;",
    if (random) c("  int<lower=1> G;", "  int<lower=1, upper=G> g[N];"),
    "  real<lower=0> prior_sd;",
    if (random) "  real<lower=0> tau_scale;",
    "}",
    "parameters {",
    "  vector[K] theta;",
    if (random) c("  real<lower=0> tau;", "  vector[G] z;"),
    "}",
    "model {",
    if (random) "  vector[N] eta = A * theta + tau * z[g];" else "  vector[N] eta = A * theta;",
    "  // every prior normalised: the half-normal is normal_lpdf + log(2) on (0, inf)",
    "  target += normal_lpdf(theta | 0, prior_sd);",
    if (random) c("  target += normal_lpdf(tau | 0, tau_scale) + log(2);",
                  "  target += normal_lpdf(z | 0, 1);"),
    "  target += bernoulli_logit_lpmf(y | eta);",
    "}"), collapse = "\n")
}

stan_data <- function(random) {
  x <- list(N = nrow(A), K = ncol(A), y = y, A = unname(A), prior_sd = prior_sd)
  if (random) {
    x$G <- max(patient)
    x$g <- patient
    x$tau_scale <- tau_scale
  }
  x
}

# The independent check: importance sampling from a multivariate t (5 df) at the mode of
# phi = theta (group = NULL) or phi = (theta, log tau), the patient effects integrated out by
# adaptive Gauss-Hermite quadrature (glmm_collapsed); laplace_t_importance() of
# glmm-reference-functions.R. list(log_evidence, se, draws, laplace, ess).
is_reference <- function(A, y, group = NULL, prior_sd = 2.5, tau_scale = 1, draws = 4000,
                         q = 15, seed = 1) {
  p <- ncol(A)
  random <- !is.null(group)
  rule <- gh_rule(q)
  log_target <- function(phi) {
    theta <- phi[seq_len(p)]
    eta <- drop(A %*% theta)
    lp <- sum(stats::dnorm(theta, 0, prior_sd, log = TRUE))
    if (!random) return(lp + sum(stats::dbinom(y, 1, stats::plogis(eta), log = TRUE)))
    t_tau <- phi[p + 1]
    lp + log(2) + stats::dnorm(exp(t_tau), 0, tau_scale, log = TRUE) + t_tau +
      glmm_collapsed("logistic", y, eta, group, exp(t_tau), NULL, q, rule)
  }
  laplace_t_importance(log_target, c(rep(0, p), if (random) log(0.5)), draws, seed)
}

elapsed <- function(expr) {
  t0 <- proc.time()[["elapsed"]]
  value <- force(expr)
  list(value = value, seconds = proc.time()[["elapsed"]] - t0)
}

started <- proc.time()[["elapsed"]]
say(paste0("glmm bacteria references (Stan + bridgesampling; multivariate-t IS, AGHQ for the ",
           "patient effects), rstan %s, bridgesampling %s, %s, %s"),
    utils::packageVersion("rstan"), utils::packageVersion("bridgesampling"),
    R.version.string, format(Sys.time(), "%F %H:%M"))
say("MASS::bacteria: %d rows, %d patients, %d successes; A = model.matrix(~ trt + week): %s",
    nrow(A), max(patient), sum(y), paste(colnames(A), collapse = ", "))
say("%d chains x (%d warmup + %d sampling); bridge_sampler(method = \"normal\"), warp3 as check",
    chains, warmup, iter - warmup)
say("")

rows <- list()
fits <- list()
for (i in seq_len(nrow(cases))) {
  cs <- cases[i, ]
  comp <- elapsed(rstan::stan_model(model_code = stan_program(cs$random),
                                    model_name = paste0("bacteria_", cs$model)))
  say("compiled %s in %.1f s", cs$model, comp$seconds)
  sdata <- stan_data(cs$random)
  adapt_delta <- 0.8
  repeat {
    fit <- elapsed(suppressWarnings(rstan::sampling(
      comp$value, data = sdata, chains = chains, iter = iter, warmup = warmup,
      seed = cs$seed, cores = 2, refresh = 0, control = list(adapt_delta = adapt_delta))))
    divergences <- sum(vapply(rstan::get_sampler_params(fit$value, inc_warmup = FALSE),
                              function(s) sum(s[, "divergent__"]), numeric(1)))
    if (divergences == 0 || adapt_delta >= 0.95) break
    say("%s seed %d: %d divergences at adapt_delta %.2f, refitting at 0.95", cs$model,
        cs$seed, divergences, adapt_delta)
    adapt_delta <- 0.95
  }
  fits[[cs$model]] <- fit$value
  max_rhat <- max(rstan::summary(fit$value)$summary[, "Rhat"], na.rm = TRUE)
  set.seed(cs$seed)
  bs <- elapsed(bridgesampling::bridge_sampler(fit$value, method = "normal", cores = 2,
                                               silent = TRUE))
  stan_error <- bridgesampling::error_measures(bs$value)$cv
  set.seed(cs$seed)
  warp <- elapsed(bridgesampling::bridge_sampler(fit$value, method = "warp3", cores = 2,
                                                 silent = TRUE))
  ref <- elapsed(is_reference(A, y, if (cs$random) patient else NULL, prior_sd, tau_scale,
                              draws = draws, q = q, seed = cs$seed))
  check_how <- if (cs$random) {
    sprintf("multivariate-t (5 df) IS over (theta, log tau), %d draws, AGHQ q = %d", draws, q)
  } else {
    sprintf("multivariate-t (5 df) IS over theta, %d draws", draws)
  }
  rows[[i]] <- data.frame(
    model = cs$model, formula = cs$formula,
    stan_log_evidence = bs$value$logml, stan_error = stan_error,
    stan_warp3_log_evidence = warp$value$logml,
    check_log_evidence = ref$value$log_evidence, check_se = ref$value$se,
    difference = bs$value$logml - ref$value$log_evidence,
    divergences = divergences, max_rhat = max_rhat,
    seconds = fit$seconds + bs$seconds,
    how = sprintf(paste0(
      "rstan %s (Stan program in glmm-bacteria-references.R, all constants kept), %d chains x ",
      "(%d warmup + %d sampling), seed %d, adapt_delta %.2f; bridgesampling %s ",
      "bridge_sampler(method = \"normal\"), error = error_measures()$cv; seconds = sampling + ",
      "bridge; check: %s, seed %d; %s"),
      utils::packageVersion("rstan"), chains, warmup, iter - warmup, cs$seed, adapt_delta,
      utils::packageVersion("bridgesampling"), check_how, cs$seed, format(Sys.Date())),
    stringsAsFactors = FALSE)
  r <- rows[[i]]
  say(paste0("%-7s %-26s: stan %.3f (err %.4f, warp3 %.3f)  check %.3f (se %.4f, ess %.0f, ",
             "laplace %.3f)  diff %+.3f | stan %.0f s (+%.0f s compile), bridge %.0f s, warp3 ",
             "%.0f s, check %.0f s | div %d, max Rhat %.4f, adapt_delta %.2f"),
      r$model, r$formula, r$stan_log_evidence, r$stan_error, r$stan_warp3_log_evidence,
      r$check_log_evidence, r$check_se, ref$value$ess, ref$value$laplace, r$difference,
      fit$seconds, comp$seconds, bs$seconds, warp$seconds, ref$seconds, r$divergences,
      r$max_rhat, adapt_delta)
  est <- rstan::summary(fit$value, pars = c("theta", if (cs$random) "tau"))$summary
  say("        posterior means: %s", paste(sprintf("%s %.3f", c(colnames(A),
      if (cs$random) "tau"), est[, "mean"]), collapse = ", "))
}
tab <- do.call(rbind, rows)
utils::write.csv(tab, out_csv, row.names = FALSE)
say("")
log_bf <- tab$stan_log_evidence[2] - tab$stan_log_evidence[1]
log_bf_error <- sqrt(sum(tab$stan_error^2))
log_bf_check <- tab$check_log_evidence[2] - tab$check_log_evidence[1]
log_bf_check_se <- sqrt(sum(tab$check_se^2))
say("log Bayes factor patient vs plain: stan %.3f (error %.3f); warp3 %.3f; check %.3f (se %.3f)",
    log_bf, log_bf_error, tab$stan_warp3_log_evidence[2] - tab$stan_warp3_log_evidence[1],
    log_bf_check, log_bf_check_se)
say("largest |stan - check|: %.3f nats; total %.1f min", max(abs(tab$difference)),
    (proc.time()[["elapsed"]] - started) / 60)
say("written to %s", normalizePath(out_csv))
