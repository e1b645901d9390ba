comparison_data <- function(n) simulate_linear_regression(n, seed = 21)

comparison_models <- function(d) {
  list(
    all = linear_regression(y ~ ., prior = "paper", data = d, noise_sd = 1),
    two = linear_regression(y ~ x1 + x2, prior = "paper", data = d, noise_sd = 1),
    none = linear_regression(y ~ 1, prior = "paper", data = d, noise_sd = 1)
  )
}

# The comparisons and fits of the tests of mechanics (identities between runs, continuation,
# sources, arguments): 20 particles, one move a step, as none of them depends on either
lean_compare <- function(...) {
  compare_models(..., particles = 20, early_particles = 20, max_rounds = 1)
}
lean_sgais <- function(...) sgais(..., particles = 20, early_particles = 20, max_rounds = 1)

test_that("compare_models() gives evidence, Bayes factors and probabilities along n", {
  test_tags("memcheck")
  d <- comparison_data(1600)
  # (20 particles: none of this depends on their number)
  cmp <- quietly(compare_models(comparison_models(d[1:20, ]), d, seed = 3, progress = FALSE,
                                method = "sgais", particles = 20, early_particles = 20))
  expect_s3_class(cmp, "sgais_comparison")
  tr <- as.data.frame(cmp)
  expect_named(tr, c("model", "n", "log_evidence", "log_evidence_se", "log_bayes_factor",
                     "probability", "method", "reason"))
  expect_identical(levels(tr$model), c("all", "two", "none"))
  expect_identical(unique(tr$n), c(500L, 1000L, 1500L, 1600L))
  # each model's trajectory is its own fit of all the data
  alone <- quietly(sgais(linear_regression(y ~ x1 + x2, prior = "paper", data = d,
                                           noise_sd = 1), particles = 20, early_particles = 20,
                         seed = 3, progress = FALSE))
  expect_identical(tr$log_evidence[tr$model == "two"], alone$trajectory$log_evidence)
  # probabilities sum to one at every n; the best model's log Bayes factor is 0
  expect_equal(as.vector(tapply(tr$probability, tr$n, sum)), rep(1, 4))
  expect_equal(as.vector(tapply(tr$log_bayes_factor, tr$n, max)), rep(0, 4))
  # the data come from the model with all covariates: it wins, by a wide margin
  final <- tr[tr$n == 1600, ]
  expect_identical(as.character(final$model[which.max(final$probability)]), "all")
  expect_gt(final$probability[final$model == "all"], 0.999)
  # the estimates agree with the exact evidence
  exact <- vapply(comparison_models(d), exact_log_evidence, numeric(1))
  expect_lt(max(abs(final$log_evidence - exact)), 3)
  expect_output(print(cmp), "<comparison of 3 models on 1,600 observations>")
  expect_output(print(summary(cmp)), "Best model as the data arrived")
})

test_that("adding or removing a model does not change another model's fit", {
  d <- comparison_data(1200)
  m <- comparison_models(d[1:20, ])
  three <- quietly(lean_compare(m, d, seed = 9, progress = FALSE, method = "sgais"))
  two <- quietly(lean_compare(m[c("none", "two")], d, seed = 9, progress = FALSE, method = "sgais"))
  expect_identical(two$fits$two$trajectory$log_evidence, three$fits$two$trajectory$log_evidence)
  expect_identical(two$fits$none$state$particles, three$fits$none$state$particles)
})

test_that("a comparison continues on new data as if run on all of it", {
  d <- comparison_data(1500)
  m <- comparison_models(d[1:20, ])
  whole <- quietly(lean_compare(m, d, seed = 4, progress = FALSE, method = "sgais"))
  part <- quietly(lean_compare(m, d[1:900, ], seed = 4, progress = FALSE, method = "sgais"))
  cont <- quietly(update(part, d[901:1500, ], progress = FALSE))
  expect_identical(cont$trajectory, whole$trajectory)
})

test_that("a comparison read from a file, a function or in blocks is the comparison of all the rows", {
  d <- comparison_data(1500)
  d[] <- lapply(d, function(x) round(x * 1024) / 1024) # exact in a CSV file
  m <- comparison_models(d[1:20, ])[c("all", "none")]
  whole <- quietly(lean_compare(m, d, seed = 4, progress = FALSE, method = "sgais"))
  file <- withr::local_tempfile(fileext = ".csv")
  utils::write.csv(d, file, row.names = FALSE)
  from_file <- quietly(lean_compare(m, file, block_size = 400, seed = 4, progress = FALSE, method = "sgais"))
  expect_identical(from_file$trajectory, whole$trajectory)
  blocks <- quietly(lean_compare(m, d, block_size = 333, seed = 4, progress = FALSE, method = "sgais"))
  expect_identical(blocks$trajectory, whole$trajectory)
  # an error of the source keeps the comparison of the blocks done, which continues
  failing <- failing_source(d, 1000, function() stop("connection lost"))
  e <- tryCatch(lean_compare(m, failing, block_size = 500, seed = 4, progress = FALSE, method = "sgais"),
                sgais_error_stream = identity)
  expect_s3_class(e, "sgais_error_stream")
  expect_match(conditionMessage(e), "connection lost")
  expect_identical(e$comparison$fits$all$n, 1000L)
  cont <- quietly(update(e$comparison, d[1001:1500, ], progress = FALSE))
  expect_identical(cont$trajectory, whole$trajectory)
})

test_that("an interrupt keeps the comparison of the blocks done", {
  d <- comparison_data(1500)
  m <- comparison_models(d[1:20, ])[c("all", "two")]
  interrupted <- failing_source(d, 1000, interrupt_now)
  expect_warning(
    cmp <- lean_compare(m, interrupted, block_size = 500, seed = 2, progress = FALSE, method = "sgais"),
    "after the first 1,000", class = "sgais_warning_interrupted"
  )
  expect_s3_class(cmp, "sgais_comparison")
  expect_identical(cmp$fits$two$n, 1000L)
  whole <- quietly(lean_compare(m, d, seed = 2, progress = FALSE, method = "sgais"))
  expect_identical(quietly(update(cmp, d[1001:1500, ], progress = FALSE))$trajectory,
                   whole$trajectory)
})

test_that("fits made separately compare when they are fits of the same observations", {
  d <- comparison_data(1200)
  m <- comparison_models(d[1:20, ])
  cmp <- quietly(lean_compare(m, d, seed = 6, progress = FALSE, method = "sgais"))
  fits <- lapply(comparison_models(d), function(model) quietly(lean_sgais(model, seed = 6, progress = FALSE)))
  same <- c("model", "n", "log_evidence", "log_evidence_se", "probability", "method")
  expect_identical(quietly(compare_models(fits))$trajectory[same], cmp$trajectory[same])
  # the digest identifies the responses, whatever pieces they came in
  piece <- quietly(lean_sgais(linear_regression(y ~ ., prior = "paper", data = d[1:777, ],
                                           noise_sd = 1), seed = 6, progress = FALSE))
  piece <- quietly(sgais(piece, d[778:1200, ], progress = FALSE))
  expect_identical(piece$data_digest, fits$all$data_digest)
  expect_match(fits$all$data_digest, "^[0-9a-f]{16}$")
  # given data, the fits are continued
  more <- comparison_data(1500)[1201:1500, ]
  expect_identical(quietly(compare_models(fits, more, progress = FALSE))$trajectory[same],
                   quietly(update(cmp, more, progress = FALSE))$trajectory[same])
  # same number of observations, other responses: refused
  other <- d
  other$y[5] <- other$y[5] + 1
  fits$none <- quietly(lean_sgais(linear_regression(y ~ 1, prior = "paper", data = other,
                                               noise_sd = 1), seed = 6, progress = FALSE))
  expect_error(compare_models(fits), "not of the same observations",
               class = "sgais_error_data_mismatch")
  expect_error(compare_models(list(a = fits$all, b = m$two)), "all models or all fits",
               class = "sgais_error")
  expect_error(compare_models(fits[1:2], seed = 1), "own estimators, settings", class = "sgais_error")
})

test_that("the prior shifts the posterior model probabilities", {
  d <- comparison_data(600)
  m <- comparison_models(d[1:20, ])[c("all", "two")]
  flat <- quietly(lean_compare(m, d, seed = 1, progress = FALSE, method = "sgais"))
  tilted <- quietly(lean_compare(m, d, seed = 1, prior = c(two = 3, all = 1), progress = FALSE, method = "sgais"))
  lp <- function(x) {
    p <- x$trajectory$probability[x$trajectory$model == "two"]
    log(p / (1 - p))
  }
  expect_equal(lp(tilted), lp(flat) + log(3))
  expect_equal(unname(tilted$prior), c(0.25, 0.75))
})

test_that("compare_models() checks its arguments", {
  d <- comparison_data(300)
  m <- comparison_models(d)
  expect_error(compare_models(m$all, d, method = "sgais"), "list of at least two models or fits", class = "sgais_error")
  expect_error(compare_models(unname(m), d, method = "sgais"), "must be named", class = "sgais_error")
  expect_error(compare_models(list(a = m$all, b = 1), d, method = "sgais"), "`models\\$b` must be an sgais model, a formula or a fit",
               class = "sgais_error")
  # without data, the models must hold the same observations
  expect_error(compare_models(list(a = m$all, b = linear_regression(y ~ ., prior = "paper", data = d[1:100, ],
                                                                    noise_sd = 1))),
               "`data` is missing, and the models do not hold the same observations",
               class = "sgais_error_data_mismatch")
  expect_error(compare_models(m, block_size = 10, method = "sgais"), "`block_size` is for `data`", class = "sgais_error")
  expect_error(compare_models(list(a = y ~ x1, b = y ~ x2)), "`data` is missing", class = "sgais_error")
  expect_error(compare_models(list(a = y ~ x1, b = y ~ x2), d, method = "sgais"), "`family` is missing",
               class = "sgais_error_family")
  expect_error(compare_models(list(a = y ~ x1, b = y ~ x2), d, family = "gamma", method = "sgais"),
               "`family` must be one of", class = "sgais_error_family")
  expect_error(compare_models(list(a = y ~ x1, b = y ~ x2), d, family = stats::binomial("probit"), method = "sgais"),
               "binomial\\(link = \"probit\"\\) has no sgais model", class = "sgais_error_family")
  expect_error(compare_models(list(a = y ~ x1, b = y ~ x2), d, family = function(f, d) 1, method = "sgais"),
               "`family` must build an sgais model", class = "sgais_error")
  expect_error(compare_models(m, d, family = "gaussian", method = "sgais"), "`family` is for formulas",
               class = "sgais_error")
  expect_error(compare_models(m, d, prior = c(1, -1, 1), method = "sgais"), "`prior` must be 3 non-negative",
               class = "sgais_error")
  expect_error(compare_models(m, d, prior = c(a = 1, b = 1, c = 1), method = "sgais"), "names of `prior`",
               class = "sgais_error")
  expect_error(compare_models(m, d[, -2], method = "sgais"), class = "sgais_error_missing_column")
  cmp <- quietly(lean_compare(m[1:2], d, seed = 1, progress = FALSE, method = "sgais"))
  cmp$fits$two <- quietly(sgais(cmp$fits$two, d[1:10, ], progress = FALSE))
  expect_error(sgais:::validate_sgais_comparison(cmp), "different numbers of observations",
               class = "sgais_error")
})

test_that("formulas with a family are built on the data and compared", {
  d <- comparison_data(600)
  cmp <- quietly(lean_compare(list(two = y ~ x1 + x2, all = y ~ .), d, family = "gaussian",
                                seed = 2, progress = FALSE, method = "sgais"))
  built <- list(two = linear_regression(y ~ x1 + x2, d, noise_sd = NULL),
                all = linear_regression(y ~ ., d, noise_sd = NULL))
  expect_identical(cmp$trajectory,
                   quietly(lean_compare(built, d, seed = 2, progress = FALSE, method = "sgais"))$trajectory)
  # a stats family object and a function give the same models
  glm_family <- quietly(lean_compare(list(two = y ~ x1 + x2, all = y ~ .), d,
                                       family = stats::gaussian(), seed = 2, progress = FALSE, method = "sgais"))
  expect_identical(glm_family$trajectory, cmp$trajectory)
  own <- quietly(lean_compare(list(two = y ~ x1 + x2, all = y ~ .), d, seed = 2, progress = FALSE,
                                family = function(formula, data) linear_regression(formula, data,
                                                                                   noise_sd = 1), method = "sgais"))
  expect_identical(own$fits$all$model$family, "linear_regression")
  # formulas and models mix
  mixed <- quietly(lean_compare(list(two = y ~ x1 + x2, all = built$all), d, family = "gaussian",
                                  seed = 2, progress = FALSE, method = "sgais"))
  expect_identical(mixed$trajectory, cmp$trajectory)
})

test_that("models compare on the observations they hold, those written in R too", {
  d <- comparison_data(600)
  m <- comparison_models(d)[1:2]
  held <- quietly(lean_compare(m, seed = 5, progress = FALSE, method = "sgais"))
  expect_identical(held$trajectory, quietly(lean_compare(m, d, seed = 5, progress = FALSE, method = "sgais"))$trajectory)
  # two models written in R on the data they hold, the paper's regression with two priors: the
  # comparison of the same models built in, to rounding (test-custom_model.R; 20 particles, one
  # move a step and 300 rows, as a model in R is slow and none of this depends on them)
  lean <- function(models) {
    quietly(lean_compare(models, seed = 11, progress = FALSE, method = "sgais"))
  }
  d <- d[1:300, ]
  cmp <- lean(list(wide = r_linear_regression(d, prior = normal_prior(sd = 10)),
                   narrow = r_linear_regression(d)))
  expect_s3_class(cmp, "sgais_comparison")
  builtin <- lean(list(
    wide = linear_regression(y ~ ., prior = "paper", data = d, prior_sd = 10, noise_sd = 1),
    narrow = linear_regression(y ~ ., prior = "paper", data = d, noise_sd = 1)
  ))
  expect_equal(vapply(cmp$fits, log_evidence, 0), vapply(builtin$fits, log_evidence, 0),
               tolerance = 1e-6)
})

test_that("with standard errors, a comparison prints intervals and warns of a close call", {
  d <- comparison_data(300)
  m <- comparison_models(d)
  # (20 particles, one move a step: none of this depends on either)
  lean <- list(particles = 20, early_particles = 20, max_rounds = 1, seed = 1, progress = FALSE,
               method = "sgais")
  cmp <- quietly(do.call(compare_models, c(list(m, d, replicates = 3), lean)))
  expect_output(print(cmp), "interval")
  last <- sgais:::comparison_final(cmp)
  bounds <- sgais:::comparison_intervals(last, cmp$prior, "probability")
  expect_true(all(bounds$lower <= last$probability & last$probability <= bounds$upper))
  # two models alike: the same fit twice, 0 nats apart, well within 2 SE
  expect_warning(do.call(compare_models, c(list(list(a = m$all, b = m$all), d, replicates = 2),
                                            lean)),
                 "within 2 standard errors: `a` leads `b` by 0.00 nats",
                 class = "sgais_warning_close_call")
  # one run each: the SEs the runs predict for themselves, with intervals and the warning too
  expect_warning(single <- do.call(compare_models, c(list(list(a = m$all, b = m$all), d), lean)),
                 class = "sgais_warning_close_call")
  expect_true(any(grepl("interval", format(single))))
  # the paper preset's single runs have no SE: no interval, no warning
  paper <- quietly(compare_models(list(a = m$all, b = m$all), d, control = sgais_control("paper"),
                                  seed = 1, progress = FALSE, method = "sgais"))
  expect_false(any(grepl("interval", format(paper))))
})

test_that("method = \"auto\" takes the closed form where there is one, whatever the units", {
  bf <- function(d) {
    cmp <- compare_models(list(large = mpg ~ wt + hp + qsec, small = mpg ~ wt + hp), d,
                          family = "gaussian", seed = 1, progress = FALSE)
    expect_identical(cmp$methods$method, c("exact", "exact"))
    last <- sgais:::comparison_final(cmp)
    last$log_evidence[last$model == "large"] - last$log_evidence[last$model == "small"]
  }
  exact <- exact_log_evidence(linear_regression(mpg ~ wt + hp + qsec, mtcars)) -
    exact_log_evidence(linear_regression(mpg ~ wt + hp, mtcars))
  expect_identical(bf(mtcars), exact)
  expect_lt(exact, 0)
  other <- transform(mtcars, wt = wt * 453.6, hp = hp / 100 + 7, qsec = qsec * 60,
                     mpg = 1000 - mpg * 0.425)
  expect_lt(abs(bf(other) - exact), 1e-6)
  # the print says which estimator made each estimate, within 100 columns
  cmp <- compare_models(list(large = mpg ~ wt + hp + qsec, small = mpg ~ wt + hp), mtcars,
                        family = "gaussian", seed = 1, progress = FALSE)
  out <- utils::capture.output(print(cmp), print(summary(cmp)))
  expect_true(any(grepl("closed form", out)))
  expect_true(any(grepl("closed form: the model has one", out)))
  expect_lte(max(nchar(out)), 100L)
  expect_identical(as.data.frame(cmp)$method, c("exact", "exact"))
})

test_that("method = \"auto\" takes importance sampling where its Pareto k passes, else SGAIS", {
  d <- withr::with_seed(5, data.frame(x1 = rnorm(200), x2 = rnorm(200)))
  d$y <- withr::with_seed(6, rbinom(200, 1, plogis(-0.5 + 1.2 * d$x1)))
  cmp <- compare_models(list(one = y ~ x1, two = y ~ x1 + x2), d, family = "binomial", seed = 2,
                        progress = FALSE)
  expect_identical(cmp$methods$method, c("importance_sampling", "importance_sampling"))
  expect_match(cmp$methods$reason, "^Pareto k -?[0-9.]+ <= 0.7$")
  alone <- importance_sampling(logistic_regression(y ~ x1, d), seed = 2, progress = FALSE)
  expect_identical(cmp$fits$one$log_evidence, alone$log_evidence)
  # a stream is always SGAIS's
  rows <- 0
  source <- function(n) {
    if (rows >= nrow(d)) return(NULL)
    out <- d[rows + seq_len(min(n, nrow(d) - rows)), ]
    rows <<- rows + nrow(out)
    out
  }
  streamed <- quietly(compare_models(list(one = logistic_regression(y ~ x1, d),
                                          two = logistic_regression(y ~ x1 + x2, d)), source,
                                     seed = 2, progress = FALSE))
  expect_identical(streamed$methods$method, c("sgais", "sgais"))
  expect_identical(streamed$methods$reason, c("a stream", "a stream"))
  # a mixture whose reference cannot propose (more clusters than components): SGAIS
  mix <- simulate_gaussian_mixture(300, components = 3, seed = 1)
  chosen <- sgais:::auto_method(gaussian_mixture(mix, components = 1), 300, list(seed = 1),
                                NULL)
  expect_identical(chosen$method, "exact")
})

test_that("a forced method fits every model by it; its settings go through `...` and `control`", {
  d <- comparison_data(400)
  m <- comparison_models(d)[c("all", "two")]
  cmp <- quietly(compare_models(m, d, method = "ais", particles = 20, seed = 3, progress = FALSE))
  expect_identical(cmp$methods$method, c("ais", "ais"))
  expect_identical(cmp$methods$reason, c("chosen", "chosen"))
  alone <- quietly(ais(m$two, particles = 20, seed = 3, progress = FALSE))
  expect_identical(cmp$fits$two$log_evidence, alone$log_evidence)
  expect_identical(cmp$fits$two$call, quote(ais(model, particles = 20, seed = 3,
                                                progress = FALSE, replicates = 1L)))
  expect_error(compare_models(m, d, method = "exact", particles = 20), "no settings",
               class = "sgais_error_argument")
  expect_error(compare_models(m, d, method = "ais", block_size = 100), "in blocks",
               class = "sgais_error_argument")
  expect_error(compare_models(m, d, method = "magic"), "`method` must be one of",
               class = "sgais_error_argument")
  # fits of AIS cannot take rows; shifts and audits need SGAIS's trajectories
  expect_error(update(cmp, d[1:10, ]), "`all`, `two` cannot take new rows",
               class = "sgais_error_not_continuable")
  expect_error(detect_shifts(cmp), "by another estimator", class = "sgais_error_not_sgais")
  expect_error(audit_evidence(cmp), "by another estimator", class = "sgais_error_not_sgais")
})

test_that("fits of several estimators compare, and a comparison of closed forms and importance sampling continues", {
  d <- comparison_data(1300)
  m <- list(all = linear_regression(y ~ ., d[1:1000, ]),
            two = linear_regression(y ~ x1 + x2, d[1:1000, ], noise_sd = 1,
                                    prior = student_t_prior(3, 0, 2)))
  fits <- list(all = exact_evidence(m$all, seed = 1),
               two = importance_sampling(m$two, seed = 1, progress = FALSE),
               sg = quietly(sgais(m$all, seed = 1, progress = FALSE)))
  # (the two best are near: whether they are within 2 SE depends on SGAIS's SE)
  cmp <- suppressWarnings(compare_models(fits), classes = "sgais_warning_close_call")
  expect_identical(cmp$methods$method, c("exact", "importance_sampling", "sgais"))
  expect_identical(cmp$methods$reason, rep("given", 3))
  expect_identical(unique(as.data.frame(cmp)$n), 1000L)
  expect_output(print(cmp), "importance sampling")
  # continued: SGAIS on the new rows, the others done again on all of them
  more <- suppressWarnings(update(cmp, d[1001:1300, ], progress = FALSE),
                           classes = c("sgais_warning_unreliable", "sgais_warning_close_call"))
  expect_equal(more$fits$all$log_evidence,
               exact_log_evidence(sgais:::model_add_rows(m$all, d[1001:1300, ])), tolerance = 1e-14)
  expect_identical(more$fits$two$log_evidence,
                   importance_sampling(sgais:::model_add_rows(m$two, d[1001:1300, ]), seed = 1,
                                       progress = FALSE)$log_evidence)
  expect_identical(more$fits$sg$trajectory$log_evidence,
                   quietly(sgais(fits$sg, d[1001:1300, ], progress = FALSE))$trajectory$log_evidence)
  expect_identical(more$methods, cmp$methods)
})

test_that("glm's row arguments apply to every formula of a comparison", {
  d <- mtcars
  d$mpg[3] <- NA
  f <- list(large = mpg ~ wt + hp + qsec, small = mpg ~ wt + hp)
  cmp <- compare_models(f, d, family = "gaussian", subset = cyl != 6, na.action = na.omit,
                        seed = 1, progress = FALSE)
  keep <- d[d$cyl != 6 & !is.na(d$mpg), ]
  expect_identical(cmp$fits$large$log_evidence,
                   exact_log_evidence(linear_regression(mpg ~ wt + hp + qsec, keep)))
  expect_error(compare_models(f, d, family = "gaussian", subset = cyl != 6, progress = FALSE),
               class = "sgais_error_non_finite")
  w <- transform(mtcars, k = rep(1:2, 16))
  weighted <- compare_models(f, w, family = "gaussian", weights = k, seed = 1, progress = FALSE)
  expect_identical(weighted$fits$small$log_evidence,
                   exact_log_evidence(linear_regression(mpg ~ wt + hp, w, weights = k)))
  # an offset is an expression in the columns, as an offset() term
  counts <- data.frame(x = rnorm(60), t = rep(1:3, 20))
  counts$y <- withr::with_seed(1, rpois(60, counts$t * exp(0.3 * counts$x)))
  pois <- compare_models(list(a = y ~ x, b = y ~ 1), counts, family = "poisson",
                         offset = log(t), seed = 1, progress = FALSE)
  expect_identical(pois$fits$a$model$formula, y ~ x + offset(log(t)))
  expect_identical(poisson_regression(y ~ x, counts, offset = log(t))$formula,
                   y ~ x + offset(log(t)))
  years <- counts$t
  expect_error(poisson_regression(y ~ x, counts, offset = log(years)), "columns of `data`",
               class = "sgais_error_offset")
  expect_error(compare_models(comparison_models(comparison_data(50)), comparison_data(50),
                              subset = 1:10), "for formulas", class = "sgais_error_argument")
})

test_that("plots take colours and return the ggplot", {
  cmp <- compare_models(list(large = mpg ~ wt + hp + qsec, small = mpg ~ wt + hp), mtcars,
                        family = "gaussian", seed = 1, progress = FALSE)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  p <- plot(cmp, col = c("red", "black"))
  expect_s3_class(p, "ggplot")
  built <- ggplot2::ggplot_build(p)
  expect_true("red" %in% built$data[[1]]$colour)
  expect_s3_class(plot(cmp$fits$large, colours = "darkgreen"), "ggplot")
  expect_error(plot(cmp, col = "nocolour"), "`colours` \\(or `col`\\)",
               class = "sgais_error_argument")
})
