# SIR on random-intercept GLMs beyond the validation's 2,000 rows (?sir, R/sgais.R,
# sir_of_groups()): 10^4 rows in 50 groups (200 rows a group) and in 5,000 (2 rows a group),
# logistic and Poisson (glmm-data.R's data and priors, seed 1), SIR at its defaults (restarts on
# groups) and as published (`restart_every = Inf`), against importance_sampling() with 2,000
# draws (within 0.02 nats of Stan at 2,000 rows, glmm-2026-11-27.txt). One thread; minutes.
#   Rscript inst/validation/glmm-sir-scale.R
suppressMessages(library(sgais))
here <- local({
  file <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(file) == 1L) dirname(normalizePath(file)) else file.path("inst", "validation")
})
source(file.path(here, "glmm-data.R"))
cat(sprintf("sgais %s, SIR on random-intercept GLMs at 10^4 rows, %s\n\n",
            utils::packageVersion("sgais"), format(Sys.time(), "%F %H:%M")))
for (cfg in list(c(1e4, 50), c(1e4, 5000))) for (fam in c("logistic", "poisson")) {
  d <- glmm_data(fam, cfg[1], cfg[2], 1)
  ctor <- if (fam == "logistic") logistic_regression else poisson_regression
  m <- ctor(y ~ x1 + x2 + (1 | g), d, prior = "paper", prior_sd = glmm_prior_sd,
            group_sd = half_normal_prior(glmm_group_sd_scale))
  is <- importance_sampling(m, draws = 2000, seed = 1, progress = FALSE)
  for (every in list(NULL, Inf)) {
    t0 <- proc.time()[["elapsed"]]
    fit <- suppressWarnings(sir(m, seed = 1, progress = FALSE, restart_every = every))
    tr <- as.data.frame(fit)
    cat(sprintf("%-8s %5d rows %4d groups restarts %-8s: error %+7.2f (SE %.2f)  %.0f s  restarts at %s\n",
                fam, cfg[1], cfg[2], if (is.null(every)) "default" else "Inf",
                log_evidence(fit) - log_evidence(is), fit$log_evidence_se,
                proc.time()[["elapsed"]] - t0, paste(tr$n[tr$restarts > 0], collapse = ",")))
  }
}
