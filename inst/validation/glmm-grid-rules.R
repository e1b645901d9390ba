# The accuracy of the Gauss-Hermite grids that integrate two and three random effects per group
# out of a GLM (R/glm_mixed.R, glmm_quadrature(); src/glm_mixed.c, gmx_log_integral_q()): for
# simulated groups, the model's log-likelihood at the true parameters with the rule of n nodes
# per axis, less that with 31 (two effects) or 13 (three) nodes per axis, per group. Logistic and
# Poisson regression, 20 groups (10 with three effects) of 5 to 400 rows each, intercept -3 and 0
# (two effects; -1 with three), an intercept sd of 0.3 to 2, the slopes' sds 0.7 and 0.5 of it,
# correlations 0.5 (two) and (0.5, 0.2, -0.3) (three). The model's rules: 9 nodes per axis below
# 200 rows and 7 from 200 with two effects, 7 and 5 with three.
#   Rscript inst/validation/glmm-grid-rules.R      (from the package root; a few minutes)
suppressMessages(library(sgais))
options(width = 150)
cat(sprintf("sgais %s, GLM random-effect grids, %s\n\n", utils::packageVersion("sgais"),
            format(Sys.time(), "%F %H:%M")))
per_group_error <- function(family, q, rows, sd, b0, nodes, reference, groups, seed = 1) {
  withr::with_seed(seed, {
    n <- rows * groups
    d <- data.frame(x = stats::rnorm(n), x2 = stats::rnorm(n), g = sample.int(groups, n, TRUE))
    R <- if (q == 2) matrix(c(1, 0.5, 0.5, 1), 2) else
      matrix(c(1, 0.5, 0.2, 0.5, 1, -0.3, 0.2, -0.3, 1), 3)
    sds <- sd * c(1, 0.7, 0.5)[seq_len(q)]
    b <- matrix(stats::rnorm(q * groups), groups) %*% chol(R) %*% diag(sds)
    z <- cbind(1, d$x, d$x2)[, seq_len(q)]
    eta <- b0 + 0.5 * d$x - 0.3 * d$x2 + rowSums(z * b[d$g, , drop = FALSE])
    d$y <- if (family == "logistic") stats::rbinom(n, 1, stats::plogis(eta)) else
      stats::rpois(n, exp(eta))
  })
  ctor <- if (family == "logistic") logistic_regression else poisson_regression
  formula <- if (q == 2) y ~ x + x2 + (1 + x | g) else y ~ x + x2 + (1 + x + x2 | g)
  m <- ctor(formula, d, prior = "paper")
  theta <- c(b0, 0.5, -0.3, log(sds), atanh(if (q == 2) 0.5 else c(0.5, 0.2, -0.3)))
  ll <- function(k) {
    m$hyper$quadrature <- rbind(0, sgais:::gauss_hermite(k))
    sgais:::model_evaluate(m, theta)$log_lik
  }
  ref <- ll(reference)
  vapply(nodes, function(k) (ll(k) - ref) / groups, numeric(1))
}
rows_out <- list()
for (q in 2:3) {
  nodes <- if (q == 2) c(5, 7, 9, 11) else c(5, 7, 9)
  for (family in c("logistic", "poisson")) {
    for (rows in if (q == 2) c(5, 20, 100, 400) else c(10, 50, 300)) {
      for (sd in if (q == 2) c(0.3, 1, 2) else c(0.5, 1, 2)) {
        for (b0 in if (q == 2) c(-3, 0) else -1) {
          e <- per_group_error(family, q, rows, sd, b0, nodes, if (q == 2) 31 else 13,
                               if (q == 2) 20 else 10)
          used <- if (q == 2) (if (rows < 200) 9 else 7) else (if (rows < 200) 7 else 5)
          rows_out[[length(rows_out) + 1L]] <- data.frame(
            effects = q, family = family, rows = rows, sd = sd, intercept = b0,
            nodes_5 = e[1], nodes_7 = e[2], nodes_9 = e[3], nodes_11 = if (q == 2) e[4] else NA,
            model_rule = used, model_rule_error = e[nodes == used])
        }
      }
    }
  }
}
res <- do.call(rbind, rows_out)
print(format(res, digits = 2), row.names = FALSE)
cat("\nLargest |error per group| of the model's rules:\n")
for (q in 2:3) for (cap in c(1, 2)) {
  pick <- res$effects == q & res$sd <= cap
  cat(sprintf("  %d effects, intercept sd <= %g: %.2g nats\n", q, cap,
              max(abs(res$model_rule_error[pick]))))
}
