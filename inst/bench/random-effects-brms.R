# The random-intercept comparison of inst/bench/random-effects.R (y ~ x1 + x2 + (1 | g), the
# same simulated data: seed 45, 10^4 rows, 50 groups) timed with brms + bridgesampling, the
# tool a statistician would otherwise use, on the same model and priors as
# linear_regression(y ~ x1 + x2 + (1 | g), noise_sd = NULL) at its defaults: the intercept of
# the centred design N(mean(y), sd(y)^2) (brms's `Intercept` is that of the centred design too),
# each slope N(0, (sd(y) / sd(x_j))^2), sigma^2 ~ InvGamma(1, var(y)) (written as a `target +=`
# statement on sigma with its Jacobian 2 sigma) and the group sd half-normal(sd(y)). Prints
# brms's seconds (compiling, sampling: 4 chains of 2,000 iterations, and bridge sampling) and
# log Z, SGAIS's (one thread, 4 replicates) and the exact value (exact_log_evidence(): the
# coefficients in closed form, the sds by quadrature), and the ratio of the times (stored:
# inst/validation/random-effects-brms-2026-11-27.txt; SGAIS's times at 10^5 and 10^6 rows are in
# random-effects-scale-2026-11-27.txt there). brms, rstan and bridgesampling are development
# references, never dependencies (apt-get install r-cran-brms r-cran-bridgesampling).
#   Rscript inst/bench/random-effects-brms.R [rows] [groups]     (a few minutes)
suppressPackageStartupMessages({
  library(sgais)
  library(brms)
  library(bridgesampling)
})
args <- commandArgs(trailingOnly = TRUE)
n <- if (length(args) >= 1) as.numeric(args[1]) else 1e4
G <- if (length(args) >= 2) as.integer(args[2]) else 50L
sgais_threads(1)
options(mc.cores = 1)
# Debian's rstan finds Boost's headers here
if (dir.exists("/usr/include/boost")) rstan::rstan_options(boost_lib = "/usr/include")
cat(sprintf("sgais %s, brms %s, rstan %s, bridgesampling %s, %s\n\n", utils::packageVersion("sgais"),
            utils::packageVersion("brms"), utils::packageVersion("rstan"),
            utils::packageVersion("bridgesampling"), format(Sys.time(), "%F %H:%M")))

# the data of inst/bench/random-effects.R
data <- withr::with_seed(45, {
  g <- sample.int(G, 1e6, replace = TRUE)
  x1 <- stats::rnorm(1e6)
  x2 <- stats::rnorm(1e6)
  u <- stats::rnorm(G, 0, 0.5)
  data.frame(y = 1 + 0.5 * x1 - 0.3 * x2 + u[g] + stats::rnorm(1e6), x1 = x1, x2 = x2,
             g = sprintf("g%04d", g))
})
d <- data[seq_len(n), ]

model <- linear_regression(y ~ x1 + x2 + (1 | g), d, noise_sd = NULL)
exact <- exact_log_evidence(model)
t0 <- proc.time()[["elapsed"]]
fit <- sgais(model, replicates = 4, seed = 1, progress = FALSE)
sgais_seconds <- proc.time()[["elapsed"]] - t0

my <- mean(d$y)
sy <- stats::sd(d$y)
priors <- c(
  set_prior(sprintf("normal(%.17g, %.17g)", my, sy), class = "Intercept"),
  set_prior(sprintf("normal(0, %.17g)", sy / stats::sd(d$x1)), class = "b", coef = "x1"),
  set_prior(sprintf("normal(0, %.17g)", sy / stats::sd(d$x2)), class = "b", coef = "x2"),
  set_prior(sprintf("normal(0, %.17g)", sy), class = "sd"),
  set_prior("", class = "sigma"),
  set_prior(sprintf("target += inv_gamma_lpdf(square(sigma) | 1, %.17g) + log(2) + log(sigma)",
                    sy^2), check = FALSE)
)
t0 <- proc.time()[["elapsed"]]
bfit <- brm(y ~ x1 + x2 + (1 | g), data = d, prior = priors, chains = 4, iter = 2000,
            save_pars = save_pars(all = TRUE), refresh = 0, seed = 1, silent = 2)
brms_fit_seconds <- proc.time()[["elapsed"]] - t0
t0 <- proc.time()[["elapsed"]]
bridge <- bridge_sampler(bfit, silent = TRUE, repetitions = 4)
bridge_seconds <- proc.time()[["elapsed"]] - t0
brms_log_z <- mean(bridge$logml)

cat(sprintf("%s rows, %d groups; exact log Z %.3f\n", format(n, big.mark = ","), G, exact))
cat(sprintf("  SGAIS (4 replicates, one thread): %.3f (SE %.3f), error %+.3f, %.1f s\n",
            fit$log_evidence, fit$log_evidence_se, fit$log_evidence - exact, sgais_seconds))
cat(sprintf("  brms + bridgesampling:            %.3f (sd over 4 bridge repetitions %.3f), error %+.3f, %.1f s (brm %.1f s of it, compiling included; bridge sampling %.1f s)\n",
            brms_log_z, stats::sd(bridge$logml), brms_log_z - exact, brms_fit_seconds + bridge_seconds,
            brms_fit_seconds, bridge_seconds))
cat(sprintf("  brms + bridgesampling / SGAIS: %.0f times the time\n",
            (brms_fit_seconds + bridge_seconds) / sgais_seconds))
