# The variable-selection engine (R/linear_search.R) against BAS: exact enumeration of the 8,192
# submodels of MASS::Boston's medv ~ . under the Zellner-Siow prior (r = 1, BAS's "JZS") and the
# g-prior (g = n), the same with 20 pure-noise covariates by MCMC, and 2^15 submodels under the
# normal-inverse-gamma prior at 100 checkpoints of 10^6 simulated rows.
# Run with: Rscript inst/bench/linear-search.R   (from an installed sgais, with BAS and MASS)
# Writes what it prints to inst/bench/linear-search.txt when run from the package root.
# Targets (issue 66): the log Bayes factor of medv ~ crim + rm against medv ~ rm under JZS is
# 26.9210 (BAS and BayesFactor agree on it); inclusion probabilities within 0.005 of BAS's
# probne0; enumeration no slower than bas.lm(); the 2^15 x 100 enumeration well under 10 s.
suppressPackageStartupMessages({
  library(sgais)
  library(BAS)
})
ns <- asNamespace("sgais")
stats_of <- ns$linear_search_stats
enumerate <- ns$linear_search_enumerate
mcmc <- ns$linear_search_mcmc
members <- ns$linear_search_members
out <- character(0)
say <- function(...) {
  line <- sprintf(...)
  cat(line, "\n", sep = "")
  out <<- c(out, line)
}
# median elapsed seconds of `reps` calls of f()
timed <- function(f, reps = 5) {
  median(vapply(seq_len(reps), function(i) system.time(f())[["elapsed"]], numeric(1)))
}

say("sgais %s, BAS %s, %s; one thread", utils::packageVersion("sgais"),
    utils::packageVersion("BAS"), R.version.string)

# ---- the problem of a data set: centred design, statistics, group, M, flat-part offset -------
search_problem <- function(formula, data) {
  a <- stats::model.matrix(formula, data)
  y <- stats::model.response(stats::model.frame(formula, data))
  x <- sweep(a[, -1, drop = FALSE], 2, colMeans(a[, -1, drop = FALSE]))
  n <- nrow(a)
  sy <- stats::sd(y)
  flat <- c(mean(y) - 10 * sy, mean(y) + 10 * sy, sy, 2 * log(sy) - 20, 2 * log(sy) + 10, 1)
  list(stats = stats_of(cbind(1, x), y), group = attr(a, "assign"), gram = crossprod(x) / n,
       offset = ns$flat_top_offset(flat), terms = colnames(a)[-1], n = n)
}
inclusion <- function(code, log_evidence, log_prior, K) {
  w <- exp(log_evidence + log_prior - max(log_evidence + log_prior))
  colSums(members(code, K) * w) / sum(w)
}

# ---- Boston, 13 terms, 8,192 submodels -------------------------------------------------------
Boston <- MASS::Boston
run_ours <- function(kind) {
  p <- search_problem(medv ~ ., Boston)
  prior <- if (kind == "zs") {
    list(kind = "zs", r2 = 1, gram = p$gram, offset = p$offset)
  } else {
    list(kind = "g", g = 1, gram = p$gram, offset = p$offset) # g = n in Liang et al.'s units
  }
  e <- enumerate(p$stats, p$group, NULL, prior)
  list(e = e, pip = inclusion(e$code, e$log_evidence, 0, 13), terms = p$terms)
}
run_bas <- function(kind) {
  if (kind == "zs") {
    bas.lm(medv ~ ., Boston, prior = "JZS", method = "deterministic", modelprior = uniform())
  } else {
    bas.lm(medv ~ ., Boston, prior = "g-prior", alpha = nrow(Boston), method = "deterministic",
           modelprior = uniform())
  }
}
say("")
say("MASS::Boston, medv ~ . (13 terms, 8,192 submodels), uniform prior over submodels; median of 5")
for (kind in c("zs", "g")) {
  ours <- run_ours(kind)
  bas <- run_bas(kind)
  t_ours <- timed(function() run_ours(kind))
  t_bas <- timed(function() run_bas(kind))
  diff <- max(abs(ours$pip - bas$probne0[-1]))
  say("  %-24s enumeration %.3f s (BAS %.3f s); largest |PIP - BAS probne0| %.1e (%s)",
      if (kind == "zs") "Zellner-Siow r = 1 (JZS)" else "g-prior, g = n", t_ours, t_bas, diff,
      ours$terms[which.max(abs(ours$pip - bas$probne0[-1]))])
  if (kind == "zs") {
    lz <- stats::setNames(ours$e$log_evidence, ours$e$code)
    code <- function(v) as.character(sum(2^(match(v, ours$terms) - 1)))
    say("  log BF(crim + rm : rm) under JZS: %.4f (target 26.9210)",
        lz[[code(c("crim", "rm"))]] - lz[[code("rm")]])
    say("  PIPs: %s", paste(sprintf("%s %.3f", ours$terms, ours$pip), collapse = ", "))
  }
}

# ---- Boston with 20 pure-noise covariates: 33 terms by MCMC ----------------------------------
set.seed(66)
noisy <- cbind(Boston, matrix(stats::rnorm(nrow(Boston) * 20), ncol = 20,
                              dimnames = list(NULL, paste0("noise", 1:20))))
K <- 33L
bb <- -lchoose(K, 0:K) - log(K + 1) # beta-binomial(1, 1), BAS's default
run_chain <- function(iterations, seed) {
  p <- search_problem(medv ~ ., noisy)
  prior <- list(kind = "zs", r2 = 1, gram = p$gram, offset = p$offset)
  set.seed(seed)
  run <- mcmc(p$stats, p$group, NULL, prior, bb, iterations)
  lw <- run$log_evidence + bb[rowSums(run$models) + 1]
  w <- exp(lw - max(lw))
  list(run = run, freq = colSums(run$models * run$visits) / sum(run$visits),
       renorm = colSums(run$models * w) / sum(w), terms = p$terms)
}
run_bas_mcmc <- function() {
  set.seed(1)
  bas.lm(medv ~ ., noisy, prior = "JZS", method = "MCMC", MCMC.iterations = 1e5,
         modelprior = beta.binomial(1, 1))
}
say("")
say("Boston with 20 noise covariates (33 terms), JZS, beta-binomial(1, 1) prior over submodels")
t_ref <- system.time(ref <- run_chain(2e6, 2))[["elapsed"]]
ref2 <- run_chain(2e6, 3)
t_chain <- system.time(chain <- run_chain(1e5, 1))[["elapsed"]]
t_bas <- system.time(bas <- run_bas_mcmc())[["elapsed"]]
say(paste("  reference: a chain of 2e6 iterations (%.1f s), %d submodels evaluated, renormalised;",
          "another chain's differs by at most %.4f"),
    t_ref, nrow(ref$run$models), max(abs(ref$renorm - ref2$renorm)))
say("  MCMC, 1e5 iterations: %.3f s (BAS %.3f s); %d submodels evaluated, %.0f%% accepted",
    t_chain, t_bas, nrow(chain$run$models), 100 * chain$run$accepted / 1e5)
say("  largest |PIP - reference|: visit frequencies %.4f, renormalised evidences %.4f",
    max(abs(chain$freq - ref$renorm)), max(abs(chain$renorm - ref$renorm)))
bas_mcmc <- if (!is.null(bas$probne0.MCMC)) bas$probne0.MCMC[-1] else bas$probne0[-1]
say("  BAS 1e5 iterations: largest |PIP - reference|: frequencies %.4f, renormalised %.4f",
    max(abs(bas_mcmc - ref$renorm)),
    max(abs((if (!is.null(bas$probne0.RN)) bas$probne0.RN else bas$probne0)[-1] - ref$renorm)))
say("  reference PIPs of the noise: largest %.3f", max(ref$renorm[14:33]))

# ---- 15 terms under the normal-inverse-gamma prior at 100 checkpoints ------------------------
say("")
say("Normal-inverse-gamma, 15 terms (32,768 submodels) at 100 checkpoints of 10^6 simulated rows")
p15 <- 15L
block <- 1e4
beta <- c(2, 1, -0.5, 0.25, rep(0, p15 - 3))
simulate_block <- function(i) {
  set.seed(1000 + i)
  x <- matrix(stats::rnorm(block * p15), block, p15)
  list(x = x, y = drop(cbind(1, x) %*% beta) + stats::rnorm(block))
}
blocks <- lapply(1:100, simulate_block)
# the prior of prior = "autoscale" with unknown noise, from the first block (a model built on it)
first <- blocks[[1]]
centre <- colMeans(first$x)
prior <- list(kind = "nig", shape = 1, scale = stats::var(first$y),
              mean = c(mean(first$y), rep(0, p15)), var = c(1, 1 / apply(first$x, 2, stats::var)))
group <- 0:p15
stats <- list(xtx = matrix(0, p15 + 1, p15 + 1), xty = numeric(p15 + 1), yy = 0, n = 0)
accumulate <- 0
search <- 0
best <- integer(0)
for (b in blocks) {
  accumulate <- accumulate + system.time({
    a <- cbind(1, sweep(b$x, 2, centre))
    stats$xtx <- stats$xtx + crossprod(a)
    stats$xty <- stats$xty + drop(crossprod(a, b$y))
    stats$yy <- stats$yy + sum(b$y^2)
    stats$n <- stats$n + nrow(a)
  })[["elapsed"]]
  search <- search + system.time({
    e <- enumerate(stats, group, NULL, prior)
  })[["elapsed"]]
  best <- c(best, e$code[which.max(e$log_evidence)])
}
say("  %.2f s in all: %.2f s accumulating the statistics, %.2f s in 100 enumerations",
    accumulate + search, accumulate, search)
say("  the best submodel at the last checkpoint: %s",
    paste0("x", which(members(best[100], p15)), collapse = " + "))

if (dir.exists("inst/bench")) writeLines(out, "inst/bench/linear-search.txt")
