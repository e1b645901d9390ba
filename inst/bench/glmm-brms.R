# The random-intercept logistic regression of inst/bench/glmm.R at 10^4 rows in 50 groups
# (inst/validation/glmm-data.R, seed 45) timed with brms + bridgesampling, the tool a
# statistician would otherwise use, on the same model and priors as
# logistic_regression(y ~ x1 + x2 + (1 | g), prior = "paper"): every coefficient N(0, 2.5^2) on
# the uncentred design (`0 + Intercept` in brms, so that its intercept is not that of the centred
# design) and the group sd half-normal(1) (brms adds the truncation's normalising constant).
# Prints brms's seconds (compiling; sampling, 4 chains of 4,000 iterations on one core; bridge
# sampling) and log Z, and those of importance_sampling() (500 and 2,000 draws) and SGAIS (one
# run, and 4 replicates), all on one thread, with the ratios of the times (stored:
# inst/validation/glmm-brms-2026-11-27.txt). brms, rstan and bridgesampling
# are development references, never dependencies (apt-get install r-cran-brms).
#   Rscript inst/bench/glmm-brms.R        (about ten minutes)
suppressPackageStartupMessages({
  library(sgais)
  library(brms)
  library(bridgesampling)
})
here <- local({
  file <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(file) == 1L) dirname(normalizePath(file)) else file.path("inst", "bench")
})
source(file.path(here, "..", "validation", "glmm-data.R"))
sgais_threads(1)
options(mc.cores = 1)
if (dir.exists("/usr/include/boost")) rstan::rstan_options(boost_lib = "/usr/include")
cat(sprintf("sgais %s, brms %s, rstan %s, bridgesampling %s, %s\n\n", utils::packageVersion("sgais"),
            utils::packageVersion("brms"), utils::packageVersion("rstan"),
            utils::packageVersion("bridgesampling"), format(Sys.time(), "%F %H:%M")))
d <- glmm_data("logistic", 1e4, 50, seed = 45)

model <- logistic_regression(y ~ x1 + x2 + (1 | g), d, prior = "paper", prior_sd = 2.5)
t_is <- system.time(is <- importance_sampling(model, seed = 1, progress = FALSE))[["elapsed"]]
t_is4 <- system.time(is4 <- importance_sampling(model, draws = 2000, seed = 1,
                                                progress = FALSE))[["elapsed"]]
t_one <- system.time(one <- sgais(model, seed = 1, progress = FALSE))[["elapsed"]]
t_four <- system.time(four <- sgais(model, replicates = 4, seed = 1, progress = FALSE))[["elapsed"]]

priors <- c(prior(normal(0, 2.5), class = "b"), prior(normal(0, 1), class = "sd"))
t0 <- proc.time()[["elapsed"]]
compiled <- brm(y ~ 0 + Intercept + x1 + x2 + (1 | g), data = d, family = bernoulli(),
                prior = priors, chains = 0, save_pars = save_pars(all = TRUE), silent = 2,
                refresh = 0)
t_compile <- proc.time()[["elapsed"]] - t0
t0 <- proc.time()[["elapsed"]]
fit <- update(compiled, recompile = FALSE, chains = 4, iter = 4000, warmup = 2000, cores = 1,
              seed = 45, refresh = 0, silent = 2)
t_sample <- proc.time()[["elapsed"]] - t0
t0 <- proc.time()[["elapsed"]]
bridge <- bridge_sampler(fit, silent = TRUE)
t_bridge <- proc.time()[["elapsed"]] - t0
brms_total <- t_compile + t_sample + t_bridge
err <- error_measures(bridge)

cat(sprintf("brms + bridgesampling: log Z %.3f (relative error %s), %.1f s in all: compile %.1f s, sample %.1f s, bridge %.1f s\n",
            bridge$logml, err$cv, brms_total, t_compile, t_sample, t_bridge))
cat(sprintf("importance sampling, 500 draws:   log Z %.3f (SE %.3f), %.1f s: %.0fx faster (%.0fx without brms's compiling)\n",
            log_evidence(is), is$log_evidence_se, t_is, brms_total / t_is, (t_sample + t_bridge) / t_is))
cat(sprintf("importance sampling, 2,000 draws: log Z %.3f (SE %.3f), %.1f s: %.0fx faster (%.0fx without brms's compiling)\n",
            log_evidence(is4), is4$log_evidence_se, t_is4, brms_total / t_is4,
            (t_sample + t_bridge) / t_is4))
cat(sprintf("SGAIS, one run:        log Z %.3f (SE %.2f), %.1f s: %.0fx faster (%.0fx without brms's compiling)\n",
            log_evidence(one), one$log_evidence_se, t_one, brms_total / t_one,
            (t_sample + t_bridge) / t_one))
cat(sprintf("SGAIS, 4 replicates:   log Z %.3f (SE %.2f), %.1f s: %.0fx faster (%.0fx without brms's compiling)\n",
            log_evidence(four), four$log_evidence_se, t_four, brms_total / t_four,
            (t_sample + t_bridge) / t_four))
