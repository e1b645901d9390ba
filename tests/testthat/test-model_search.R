test_that("a linear search scores every submodel by its closed form", {
  test_tags("memcheck")
  d <- transform(mtcars, cyl = factor(cyl))
  s <- model_search(mpg ~ wt * hp + cyl + qsec, d, progress = FALSE)
  expect_s3_class(s, "sgais_model_search")
  # marginality: wt:hp only with wt and hp; 32 subsets of 5 terms, 20 allowed
  expect_identical(s$visited, 20L)
  expect_true(all(!s$models[["wt:hp"]] | (s$models$wt & s$models$hp)))
  # each model's evidence is that of its own linear_regression()
  for (i in 1:3) {
    f <- stats::as.formula(s$models$formula[i])
    expect_equal(s$models$log_evidence[i], exact_log_evidence(linear_regression(f, d)),
                 tolerance = 1e-10)
  }
  expect_equal(sum(s$state$result$probability), 1)
  # exact evidences: the probabilities' bounds are the probabilities
  expect_equal(s$models$probability_lower, s$models$probability)
  expect_equal(s$models$probability_upper, s$models$probability)
  # inclusion probabilities add the probabilities of the models with the term
  r <- s$state$result
  members <- sgais:::members_of(r$codes, 5L)
  expect_equal(unname(inclusion_probabilities(s)), unname(drop(r$probability %*% members)))
  expect_named(inclusion_probabilities(s), c("wt", "hp", "cyl", "qsec", "wt:hp"))
  expect_identical(names(coef(s))[1:3], c("(Intercept)", "wt", "hp"))
  expect_identical(as.data.frame(s), s$models)
})

test_that("BayesFactor's priors give BAS's Bayes factors and inclusion probabilities", {
  b <- MASS::Boston
  s <- model_search(medv ~ crim + rm + lstat, b, prior = zellner_siow_prior(1), progress = FALSE)
  m <- s$state$result
  code <- function(...) sum(2^(match(c(...), s$space$terms) - 1))
  bf <- m$log_evidence[m$codes == code("crim", "rm")] - m$log_evidence[m$codes == code("rm")]
  expect_equal(bf, 26.9210, tolerance = 5e-5 / 26.921) # BAS and BayesFactor, to four decimals
  exact <- function(f) exact_log_evidence(linear_regression(f, b, prior = zellner_siow_prior(1)))
  expect_equal(bf, exact(medv ~ crim + rm) - exact(medv ~ rm), tolerance = 1e-8)
})

test_that("the model prior, `keep` and the chain over models", {
  s <- model_search(mpg ~ wt + hp + qsec + drat, mtcars, keep = "wt",
                    model_prior = "beta-binomial", progress = FALSE)
  expect_false("wt" %in% names(s$inclusion))
  expect_identical(s$visited, 8L)
  # beta-binomial(1, 1): every size of model alike a priori
  r <- s$state$result
  sizes <- rowSums(sgais:::members_of(r$codes, 3L))
  expect_equal(as.vector(tapply(exp(r$log_prior), sizes, sum)), rep(1, 4))
  fixed <- model_search(mpg ~ wt + hp + qsec + drat, mtcars, model_prior = 0.2, progress = FALSE)
  r <- fixed$state$result
  sizes <- rowSums(sgais:::members_of(r$codes, 4L))
  expect_equal(r$log_prior, sizes * log(0.2) + (4 - sizes) * log(0.8))
  # the chain: reproducible, and near the enumeration on few terms
  # (20,000 steps over 1,024 models: its visit frequencies are not yet its probabilities)
  expect_warning(a <- model_search(mpg ~ ., mtcars, method = "mcmc", iterations = 20000, seed = 3,
                                   progress = FALSE), class = "sgais_warning_unconverged")
  again <- suppressWarnings(model_search(mpg ~ ., mtcars, method = "mcmc", iterations = 20000,
                                         seed = 3, progress = FALSE),
                            classes = "sgais_warning_unconverged")
  expect_identical(a$inclusion, again$inclusion)
  e <- model_search(mpg ~ ., mtcars, progress = FALSE)
  expect_lt(max(abs(a$inclusion - e$inclusion)), 0.02)
  expect_warning(model_search(mpg ~ ., mtcars, method = "mcmc", iterations = 50, seed = 3,
                              progress = FALSE), class = "sgais_warning_unconverged")
})

test_that("a linear search along the data continues on new rows as one search", {
  d <- simulate_linear_regression(3000, dim = 4, seed = 5)
  whole <- model_search(y ~ ., d, block_size = 1000, progress = FALSE)
  tr <- inclusion_probabilities(whole, along = TRUE)
  expect_identical(tr$n, c(1000, 2000, 3000))
  expect_named(tr, c("n", "x1", "x2", "x3", "x4"))
  part <- model_search(y ~ ., d[1:1700, ], block_size = 1000, progress = FALSE)
  more <- update(part, d[1701:3000, ])
  expect_identical(more$state$result$log_evidence, whole$state$result$log_evidence)
  expect_identical(more$inclusion, whole$inclusion)
  # from a function returning blocks: the same statistics
  at <- 0
  source <- function(k) {
    if (at >= 3000) return(NULL)
    r <- d[(at + 1):min(at + k, 3000), ]
    at <<- at + nrow(r)
    r
  }
  streamed <- model_search(y ~ ., source, block_size = 1000, progress = FALSE)
  expect_identical(streamed$state$result$log_evidence, whole$state$result$log_evidence)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  for (w in c("inclusion", "models", "along")) expect_s3_class(plot(whole, which = w), "ggplot")
  # x1's inclusion probability sums to just over 1 here: its bar and line must stay in the plot
  for (w in c("inclusion", "along")) expect_lte(max(plot_data(whole, which = w)$probability), 1)
})

test_that("other families are screened, then estimated where the probability is", {
  d <- withr::with_seed(1, data.frame(x1 = rnorm(300), x2 = rnorm(300), x3 = rnorm(300)))
  d$y <- withr::with_seed(2, rbinom(300, 1, plogis(-0.2 + 1.1 * d$x1)))
  s <- model_search(y ~ x1 + x2 + x3, d, family = "binomial", seed = 1, progress = FALSE)
  expect_identical(s$visited, 8L)
  r <- s$state$result
  accurate <- r$estimator != "screen"
  expect_lte(s$mass_outside, 0.001)
  expect_true(all(r$estimator[accurate] == "importance_sampling"))
  # an estimated model's evidence is its own importance sampling's, with the model's seed
  best <- s$models[1, ]
  expect_true(best$x1)
  m <- logistic_regression(stats::as.formula(best$formula), d)
  code <- sum(2^(which(unlist(best[c("x1", "x2", "x3")])) - 1))
  is <- importance_sampling(m, seed = sgais:::model_seed(1, code), progress = FALSE)
  expect_identical(best$log_evidence, is$log_evidence)
  expect_gt(s$inclusion[["x1"]], 0.99)
  # estimated evidences give the probabilities bounds (plot.R's probability_bounds()); a model
  # of the screen alone has none
  m <- s$models
  est <- m$method != "screen"
  expect_true(all(m$probability_lower[est] < m$probability[est]))
  expect_true(all(m$probability_upper[est] > m$probability[est]))
  expect_true(all(is.na(m$probability_lower[!est])))
  expect_output(print(s), "interval")
  # the same on any future plan
  future::plan(future::multicore, workers = 2)
  on.exit(future::plan(future::sequential), add = TRUE)
  expect_identical(model_search(y ~ x1 + x2 + x3, d, family = "binomial", seed = 1,
                                progress = FALSE)$inclusion, s$inclusion)
})

test_that("model_search() checks its arguments", {
  expect_error(model_search(~ x, mtcars), "`formula` must be a formula with a response",
               class = "sgais_error")
  expect_error(model_search(mpg ~ wt), "`data` is missing", class = "sgais_error")
  expect_error(model_search(mpg ~ wt + hp, mtcars, keep = "qsec"), "`keep` must be term labels",
               class = "sgais_error_argument")
  expect_error(model_search(mpg ~ wt * hp, mtcars, keep = "wt:hp"), "`keep` has `wt:hp`",
               class = "sgais_error_argument")
  expect_error(model_search(mpg ~ wt, mtcars, keep = "wt"), "no term to search",
               class = "sgais_error_argument")
  expect_error(model_search(mpg ~ wt + hp, mtcars, model_prior = 2), "`model_prior`",
               class = "sgais_error_argument")
  expect_error(model_search(mpg ~ wt + hp, mtcars, method = "all"), "`method` must be one of",
               class = "sgais_error_argument")
  expect_error(model_search(mpg ~ wt + hp, mtcars, family = "gamma"), "`family`",
               class = "sgais_error_family")
  expect_error(model_search(am ~ wt + hp, mtcars, family = "binomial", block_size = 10),
               "Only a linear search reads its data in blocks", class = "sgais_error_argument")
  s <- model_search(am ~ wt + hp, mtcars, family = "binomial", seed = 1, progress = FALSE)
  expect_error(update(s, mtcars), "Only a linear search", class = "sgais_error_not_continuable")
  expect_error(inclusion_probabilities(1), "not a valid model search", class = "sgais_error")
})
