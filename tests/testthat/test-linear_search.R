# The engine of variable selection (R/linear_search.R, src/linear_search.c): exact log evidences of
# a regression's submodels from its sufficient statistics, against the closed forms of
# R/linear_regression.R on the submatrices and exact_log_evidence() of the submodels' own models.

# A design with a factor of 4 levels and an interaction: columns of the centred model matrix
# (the intercept first), each column's term (0 for the intercept) and the terms' parents.
search_design <- function(n, p = 6, seed = 1, collinear = FALSE) {
  set.seed(seed)
  d <- as.data.frame(matrix(stats::rnorm(n * p), n, p))
  if (collinear) d$V2 <- d$V1 + 0.05 * d$V2
  d$f <- factor(sample(letters[1:4], n, TRUE))
  d$y <- 1 + d$V1 - 0.5 * d$V2 + 0.3 * d$V1 * d$V2 + 0.2 * as.numeric(d$f) + stats::rnorm(n)
  f <- stats::reformulate(c(paste0("V", seq_len(p)), "f", "V1:V2"), "y")
  a <- stats::model.matrix(f, d)
  x <- sweep(a[, -1, drop = FALSE], 2, colMeans(a[, -1, drop = FALSE]))
  a <- cbind(`(Intercept)` = 1, x)
  K <- p + 2L
  list(a = a, y = d$y, data = d, group = attr(stats::model.matrix(f, d), "assign"),
       parents = c(rep(list(integer(0)), K - 1L), list(c(1L, 2L))), K = K,
       gram = crossprod(x) / n, n = n)
}

# The four priors on a design: autoscale's per-column scales, the g-priors' M.
search_priors <- function(s) {
  q <- ncol(s$a)
  sds <- c(1, apply(s$a[, -1], 2, stats::sd))
  list(normal = list(kind = "normal", s2 = 1.3, mean = c(mean(s$y), rep(0.1, q - 1)),
                     var = 2 / sds^2),
       nig = list(kind = "nig", shape = 1.5, scale = stats::var(s$y),
                  mean = c(mean(s$y), rep(0, q - 1)), var = 1 / sds^2),
       g = list(kind = "g", g = 1, gram = s$gram),
       zs = list(kind = "zs", r2 = 1 / 8, gram = s$gram))
}

# The closed forms of R/linear_regression.R on submodel `code`'s columns.
closed_form <- function(s, prior, code) {
  cols <- which(s$group == 0 | s$group %in% which(linear_search_members(code, s$K)))
  st <- linear_search_stats(s$a[, cols, drop = FALSE], s$y)
  n <- nrow(s$a)
  switch(prior$kind,
    normal = lr_log_evidence(st$xtx, st$xty, st$yy, n, prior$s2, prior$var[cols],
                             prior$mean[cols]),
    nig = nig_lr_log_evidence(st$xtx, st$xty, st$yy, n, prior$shape, prior$scale,
                              prior$var[cols], prior$mean[cols]),
    {
      gram <- s$gram[cols[-1] - 1, cols[-1] - 1, drop = FALSE]
      ld <- if (length(cols) > 1) determinant(gram)$modulus[[1]] else 0
      jeffreys <- function(g) zellner_log_evidence(st$xtx, st$xty, st$yy, n, g, gram, ld)
      if (prior$kind == "g") jeffreys(prior$g) else zellner_siow_integral(jeffreys, prior$r2)
    })
}

test_that("each C path on a small problem: enumeration, fresh evaluation, moments", {
  test_tags("memcheck")
  s <- search_design(20, p = 2)
  st <- linear_search_stats(s$a, s$y)
  priors <- search_priors(s)
  # Zellner-Siow in general form: M from 12 of the 20 rows
  x <- s$a[1:12, -1]
  priors$zs_general <- list(kind = "zs", r2 = 1, gram = crossprod(sweep(x, 2, colMeans(x))) / 12)
  for (prior in priors) {
    e <- linear_search_enumerate(st, s$group, s$parents, prior)
    m <- linear_search_models(st, s$group, prior, e$code[1:3], moments = TRUE)
    expect_equal(m$log_evidence, e$log_evidence[1:3], tolerance = 1e-12)
    expect_true(all(vapply(m$moments, function(x) all(is.finite(x$cov)), logical(1))))
  }
  expect_true(is.finite(.Call(C_ffi_linear_search_zs_integral, c(20, 5), c(0.3, 0.1), c(1, 2),
                              0.6, 20, 1)))
})

test_that("enumerated log evidences are the closed forms on the submatrices, for each prior", {
  s <- search_design(40, p = 2)
  st <- linear_search_stats(s$a, s$y)
  for (prior in search_priors(s)) {
    e <- linear_search_enumerate(st, s$group, s$parents, prior)
    # 2^4 subsets less the 6 with V1:V2 but not both V1 and V2
    expect_equal(length(e$code), 10L)
    expect_equal(e$size, rowSums(linear_search_members(e$code, s$K)))
    ref <- vapply(e$code, function(code) closed_form(s, prior, code), numeric(1))
    expect_equal(e$log_evidence, ref, tolerance = 1e-9, label = prior$kind)
  }
})

test_that("the Gray-code updates agree with fresh factorisations over 12 terms", {
  s <- search_design(200, p = 10, collinear = TRUE)
  st <- linear_search_stats(s$a, s$y)
  for (prior in search_priors(s)) {
    e <- linear_search_enumerate(st, s$group, s$parents, prior)
    # V1, V2 and V1:V2 in 5 allowed ways, the 9 other terms in any
    expect_equal(length(e$code), 5L * 2^9)
    fresh <- linear_search_models(st, s$group, prior, e$code)$log_evidence
    expect_lt(max(abs(e$log_evidence - fresh)), 1e-8, label = prior$kind)
  }
})

test_that("marginality: the allowed submodels and no other", {
  s <- search_design(30, p = 3)
  st <- linear_search_stats(s$a, s$y)
  # a chain of requirements too: V3 needs V2
  parents <- s$parents
  parents[[3]] <- 2L
  e <- linear_search_enumerate(st, s$group, parents, search_priors(s)$nig)
  all_codes <- 0:(2^s$K - 1)
  allowed <- vapply(all_codes, function(code) {
    linear_search_allowed(linear_search_members(code, s$K)[1, ], parents)
  }, logical(1))
  expect_setequal(e$code, all_codes[allowed])
  expect_equal(anyDuplicated(e$code), 0L)
  # no parents: every subset
  e0 <- linear_search_enumerate(st, s$group, NULL, search_priors(s)$nig)
  expect_setequal(e0$code, all_codes)
})

test_that("submodels' log evidences are exact_log_evidence() of their own models on mtcars", {
  f_full <- mpg ~ wt + hp + qsec + factor(cyl) + wt:hp
  subs <- list(mpg ~ wt, mpg ~ wt + factor(cyl), mpg ~ wt + hp + wt:hp, f_full, mpg ~ 1)
  a <- stats::model.matrix(f_full, mtcars)
  group <- attr(a, "assign")
  y <- mtcars$mpg
  n <- nrow(a)
  x <- sweep(a[, -1], 2, colMeans(a[, -1]))
  centred <- cbind(1, x)
  sds <- c(1, apply(x, 2, stats::sd))
  labels <- attr(stats::terms(f_full), "term.labels")
  code <- function(f) {
    sum(2^(match(attr(stats::terms(f), "term.labels"), labels) - 1))
  }
  codes <- vapply(subs, code, numeric(1))
  zell <- linear_regression(f_full, mtcars, prior = g_prior())
  offset <- flat_top_offset(zell$hyper$flat)
  cases <- list(
    list(prior = list(kind = "nig", shape = 1, scale = stats::var(y), mean = c(mean(y), rep(0, 6)),
                      var = 1 / sds^2), a = centred,
         build = function(f) linear_regression(f, mtcars)),
    list(prior = list(kind = "normal", s2 = 9, mean = c(mean(y), rep(0, 6)), var = 9 / sds^2),
         a = centred, build = function(f) linear_regression(f, mtcars, noise_sd = 3)),
    list(prior = list(kind = "nig", shape = 2, scale = 1, mean = 0, var = 4), a = a,
         build = function(f) linear_regression(f, mtcars, prior_sd = 2, variance_shape = 2)),
    list(prior = list(kind = "g", g = 1, gram = crossprod(x) / n, offset = offset), a = centred,
         build = function(f) linear_regression(f, mtcars, prior = g_prior())),
    list(prior = list(kind = "zs", r2 = 1, gram = crossprod(x) / n, offset = offset), a = centred,
         build = function(f) linear_regression(f, mtcars, prior = zellner_siow_prior(1))))
  for (case in cases) {
    st <- linear_search_stats(case$a, y)
    mine <- linear_search_models(st, group, case$prior, codes)$log_evidence
    ref <- vapply(subs, function(f) exact_log_evidence(case$build(f)), numeric(1))
    expect_equal(mine, ref, tolerance = 1e-10, label = case$prior$kind)
  }
})

test_that("the Zellner-Siow quadrature agrees with integrate() from n = 20 to 10^5", {
  # Liang et al.'s g-prior Bayes factor against the intercept alone, g in units of M^-1; R^2
  # near 0 and near 1
  cases <- expand.grid(n = c(20, 1e5), k = c(1, 3, 12), rsq = c(1e-6, 0.0025, 0.3, 0.999,
                                                                  1 - 1e-7),
                       r2 = c(1 / 8, 1))
  err <- vapply(seq_len(nrow(cases)), function(i) {
    n <- cases$n[i]
    k <- cases$k[i]
    rsq <- cases$rsq[i]
    jeffreys <- function(g) {
      0.5 * (n - 1 - k) * log1p(n * g) - 0.5 * (n - 1) * log1p(n * g * (1 - rsq))
    }
    ref <- zellner_siow_integral(jeffreys, cases$r2[i])
    mine <- .Call(C_ffi_linear_search_zs_integral, n, rsq, as.double(k), 1 - rsq, n,
                  cases$r2[i])
    mine - ref
  }, numeric(1))
  expect_lt(max(abs(err)), 1e-7)
})

test_that("ZS with statistics of more rows than M (the general form) is zellner_siow_integral()", {
  s <- search_design(60, p = 2, seed = 3)
  # M from the first 30 rows, the statistics of all 60
  x <- s$a[1:30, -1]
  gram <- crossprod(sweep(x, 2, colMeans(x))) / 30
  s$gram <- gram
  prior <- list(kind = "zs", r2 = 0.5, gram = gram)
  st <- linear_search_stats(s$a, s$y)
  e <- linear_search_enumerate(st, s$group, s$parents, prior)
  ref <- vapply(e$code, function(code) closed_form(s, prior, code), numeric(1))
  expect_lt(max(abs(e$log_evidence - ref)), 1e-7)
  # and with M from these rows: the one-eigenvalue form, the same integral
  s2 <- search_design(60, p = 2, seed = 3)
  prior2 <- list(kind = "zs", r2 = 0.5, gram = s2$gram)
  e2 <- linear_search_enumerate(st, s2$group, s2$parents, prior2)
  ref2 <- vapply(e2$code, function(code) closed_form(s2, prior2, code), numeric(1))
  expect_lt(max(abs(e2$log_evidence - ref2)), 1e-7)
})

test_that("posterior moments are those of each prior's conjugate posterior", {
  s <- search_design(50, p = 2, seed = 4)
  st <- linear_search_stats(s$a, s$y)
  priors <- search_priors(s)
  code <- 5L # V1 and f
  cols <- which(s$group == 0 | s$group %in% c(1, 3))
  a <- s$a[, cols]
  xtx <- crossprod(a)
  xty <- drop(crossprod(a, s$y))
  n <- nrow(a)
  spread <- function(v) {
    out <- numeric(ncol(s$a))
    out[cols] <- v
    out
  }
  # normal and nig
  for (prior in priors[c("normal", "nig")]) {
    m <- linear_search_models(st, s$group, prior, code, moments = TRUE)$moments[[1]]
    s2 <- if (prior$kind == "normal") prior$s2 else 1
    p <- xtx / s2 + diag(1 / prior$var[cols])
    mu <- solve(p, xty / s2 + prior$mean[cols] / prior$var[cols])
    expect_equal(m$mean, spread(unname(mu)), tolerance = 1e-10)
    if (prior$kind == "normal") {
      expect_identical(m$kind, "normal")
      expect_equal(m$cov[cols, cols], unname(solve(p)), tolerance = 1e-10)
    } else {
      quad <- sum(s$y^2) + sum(prior$mean[cols]^2 / prior$var[cols]) - sum(mu * (p %*% mu))
      df <- 2 * prior$shape + n
      scale <- (prior$scale + quad / 2) / (prior$shape + n / 2) * solve(p)
      expect_identical(m$kind, "t")
      expect_equal(m$df, df)
      expect_equal(m$scale[cols, cols], unname(scale), tolerance = 1e-9)
      expect_equal(m$cov, m$scale * df / (df - 2))
    }
    expect_true(all(m$cov[-cols, ] == 0))
  }
  # the g-prior, and Zellner-Siow's mixture over g against a fine grid in log g
  gram <- s$gram[cols[-1] - 1, cols[-1] - 1]
  at_g <- function(g) {
    p <- xtx
    p[-1, -1] <- p[-1, -1] + gram / g
    mu <- solve(p, xty)
    list(mu = mu, quad = sum(s$y^2) - sum(mu * xty), p = p)
  }
  m <- linear_search_models(st, s$group, priors$g, code, moments = TRUE)$moments[[1]]
  ref <- at_g(priors$g$g)
  expect_equal(m$mean, spread(unname(ref$mu)), tolerance = 1e-10)
  expect_equal(m$scale[cols, cols], unname(ref$quad / (n - 1) * solve(ref$p)), tolerance = 1e-9)
  m <- linear_search_models(st, s$group, priors$zs, code, moments = TRUE)$moments[[1]]
  expect_identical(m$kind, "t_mixture")
  expect_equal(sum(m$weight), 1)
  expect_equal(dim(m$node_scale), c(ncol(s$a), ncol(s$a), length(m$g)))
  ld <- determinant(gram)$modulus[[1]]
  t <- seq(-15, 10, by = 0.01)
  logw <- vapply(t, function(ti) {
    zellner_log_evidence(xtx, xty, sum(s$y^2), n, exp(ti), gram, ld) - 0.5 * ti -
      priors$zs$r2 / (2 * exp(ti))
  }, numeric(1))
  w <- exp(logw - max(logw))
  w <- w / sum(w)
  mus <- vapply(t, function(ti) at_g(exp(ti))$mu, numeric(length(cols)))
  expect_equal(m$mean[cols], unname(drop(mus %*% w)), tolerance = 1e-7)
  expect_equal(drop(m$node_mean %*% m$weight), m$mean)
})

test_that("the chain is reproducible, and a chain continued in pieces is one chain", {
  test_tags("memcheck")
  s <- search_design(40, p = 3)
  st <- linear_search_stats(s$a, s$y)
  prior <- search_priors(s)$nig
  lps <- -lchoose(s$K, 0:s$K) # beta-binomial(1, 1)
  set.seed(5)
  one <- linear_search_mcmc(st, s$group, s$parents, prior, lps, 600)
  set.seed(5)
  a <- linear_search_mcmc(st, s$group, s$parents, prior, lps, 250)
  b <- linear_search_mcmc(st, s$group, s$parents, prior, lps, 350, state = a)
  for (field in c("model", "iteration", "key", "models", "log_evidence", "visits")) {
    expect_identical(b[[field]], one[[field]], label = field)
  }
  expect_identical(c(a$trace_size, b$trace_size), one$trace_size)
  expect_identical(a$accepted + b$accepted, one$accepted)
  expect_equal(sum(one$visits), 600)
  expect_equal(one$iteration, 600)
  # every submodel evaluated is allowed, its evidence the enumeration's
  expect_true(all(apply(one$models, 1, linear_search_allowed, parents = s$parents)))
  e <- linear_search_enumerate(st, s$group, s$parents, prior)
  codes <- linear_search_codes(one$models)
  expect_equal(one$log_evidence, e$log_evidence[match(codes, e$code)], tolerance = 1e-12)
})

test_that("the chain's visits estimate the posterior over submodels", {
  s <- search_design(40, p = 3, seed = 6)
  st <- linear_search_stats(s$a, s$y)
  prior <- search_priors(s)$g
  lps <- -lchoose(s$K, 0:s$K)
  e <- linear_search_enumerate(st, s$group, s$parents, prior)
  post <- exp(e$log_evidence + lps[e$size + 1] - max(e$log_evidence + lps[e$size + 1]))
  post <- post / sum(post)
  exact <- colSums(linear_search_members(e$code, s$K) * post)
  set.seed(7)
  run <- linear_search_mcmc(st, s$group, s$parents, prior, lps, 40000)
  freq <- colSums(run$models * run$visits) / sum(run$visits)
  expect_lt(max(abs(freq - exact)), 0.03)
  # the chain met every allowed submodel here: renormalised evidences are exact
  lw <- run$log_evidence + lps[rowSums(run$models) + 1]
  w <- exp(lw - max(lw))
  expect_equal(colSums(run$models * w) / sum(w), exact, tolerance = 1e-10)
  # a start away from the null model, and the uniform prior over submodels
  run2 <- linear_search_mcmc(st, s$group, s$parents, prior, rep(0, s$K + 1), 10,
                             model = c(TRUE, TRUE, FALSE, FALSE, TRUE))
  expect_equal(run2$iteration, 10)
})

test_that("at 10^7 rows the evidences stay finite and exact; a shifted response changes none", {
  # 10^7 rows: each of 500 rows 20,000 times
  s <- search_design(500, p = 2, seed = 8)
  st <- linear_search_stats(s$a, s$y)
  reps <- 2e4
  big <- list(xtx = st$xtx * reps, xty = st$xty * reps, yy = st$yy * reps, n = st$n * reps)
  s$a <- s$a[rep(seq_len(500), each = 2), ] # closed_form()'s rows: only n matters below
  for (prior in search_priors(s)) {
    e <- linear_search_enumerate(big, s$group, s$parents, prior)
    expect_true(all(is.finite(e$log_evidence)))
    fresh <- linear_search_models(big, s$group, prior, e$code)$log_evidence
    expect_lt(max(abs(e$log_evidence - fresh) / abs(fresh)), 1e-12)
  }
  # a shifted response with the intercept's prior mean shifted with it: the same evidence (a
  # response far from 0 would lose digits in y'y, hence R/linear_search.R's advice to take the
  # statistics about a y0 near its mean)
  s <- search_design(50, p = 2, seed = 9)
  nig <- search_priors(s)$nig
  moved <- nig
  moved$mean[1] <- nig$mean[1] + 100
  expect_equal(
    linear_search_enumerate(linear_search_stats(s$a, s$y + 100), s$group, s$parents,
                            moved)$log_evidence,
    linear_search_enumerate(linear_search_stats(s$a, s$y), s$group, s$parents,
                            nig)$log_evidence, tolerance = 1e-10)
})

test_that("inputs the engine cannot use are classed errors", {
  s <- search_design(30, p = 2)
  st <- linear_search_stats(s$a, s$y)
  prior <- search_priors(s)$nig
  expect_error(linear_search_enumerate(st, s$group[-1], NULL, prior), class = "sgais_error_input")
  expect_error(linear_search_enumerate(st, s$group, list(1L), prior), class = "sgais_error_input")
  expect_error(linear_search_enumerate(st, s$group, NULL, list(kind = "t")),
               class = "sgais_error_input")
  wide <- linear_search_stats(matrix(stats::rnorm(32 * 40), 40), stats::rnorm(40))
  expect_error(linear_search_enumerate(wide, 0:31, NULL,
                                       list(kind = "nig", shape = 1, scale = 1, mean = 0,
                                            var = 1)),
               "more than an enumeration", class = "sgais_error_input")
  expect_error(linear_search_mcmc(st, s$group, s$parents, prior, rep(0, s$K + 1), 5,
                                  model = c(FALSE, FALSE, FALSE, TRUE)),
               "parents", class = "sgais_error_input")
  # the C side's own checks
  expect_error(.Call(C_ffi_linear_search_enumerate, st, as.double(s$group), NULL, prior),
               class = "sgais_error_input")
  dependent <- linear_search_stats(cbind(s$a, s$a[, 2]), s$y)
  expect_error(linear_search_enumerate(dependent, c(s$group, 5L), NULL,
                                       list(kind = "zs", r2 = 1, gram = crossprod(cbind(
                                         s$a[, -1], s$a[, 2])) / 30)),
               class = "sgais_error_input")
})
