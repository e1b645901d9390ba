comparison_data <- function(n) simulate_linear_regression(n, seed = 21)

comparison_models <- function(d) {
  list(
    all = linear_regression(y ~ ., prior = "paper", data = d, noise_sd = 1),
    two = linear_regression(y ~ x1 + x2, prior = "paper", data = d, noise_sd = 1),
    none = linear_regression(y ~ 1, prior = "paper", data = d, noise_sd = 1)
  )
}

test_that("compare_models() gives evidence, Bayes factors and probabilities along n", {
  test_tags("memcheck")
  d <- comparison_data(1600)
  cmp <- quietly(compare_models(comparison_models(d[1:20, ]), d, seed = 3, progress = FALSE))
  expect_s3_class(cmp, "sgais_comparison")
  tr <- as.data.frame(cmp)
  expect_named(tr, c("model", "n", "log_evidence", "log_evidence_se", "log_bayes_factor",
                     "probability", "method"))
  expect_identical(levels(tr$model), c("all", "two", "none"))
  expect_identical(unique(tr$n), c(500L, 1000L, 1500L, 1600L))
  # each model's trajectory is its own fit of all the data
  alone <- quietly(sgais(linear_regression(y ~ x1 + x2, prior = "paper", data = d,
                                           noise_sd = 1), seed = 3, progress = FALSE))
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
  expect_output(print(cmp), "<SGAIS comparison of 3 models on 1,600 observations>")
  expect_output(print(summary(cmp)), "Best model as the data arrived")
})

test_that("adding or removing a model does not change another model's fit", {
  d <- comparison_data(1200)
  m <- comparison_models(d[1:20, ])
  three <- quietly(compare_models(m, d, seed = 9, progress = FALSE))
  two <- quietly(compare_models(m[c("none", "two")], d, seed = 9, progress = FALSE))
  expect_identical(two$fits$two$trajectory$log_evidence, three$fits$two$trajectory$log_evidence)
  expect_identical(two$fits$none$state$particles, three$fits$none$state$particles)
})

test_that("a comparison continues on new data as if run on all of it", {
  d <- comparison_data(1500)
  m <- comparison_models(d[1:20, ])
  whole <- quietly(compare_models(m, d, seed = 4, progress = FALSE))
  part <- quietly(compare_models(m, d[1:900, ], seed = 4, progress = FALSE))
  cont <- quietly(update(part, d[901:1500, ], progress = FALSE))
  expect_identical(cont$trajectory, whole$trajectory)
})

test_that("a comparison read from a file, a function or in blocks is the comparison of all the rows", {
  d <- comparison_data(1500)
  d[] <- lapply(d, function(x) round(x * 1024) / 1024) # exact in a CSV file
  m <- comparison_models(d[1:20, ])[c("all", "none")]
  whole <- quietly(compare_models(m, d, seed = 4, progress = FALSE))
  file <- withr::local_tempfile(fileext = ".csv")
  utils::write.csv(d, file, row.names = FALSE)
  from_file <- quietly(compare_models(m, file, block_size = 400, seed = 4, progress = FALSE))
  expect_identical(from_file$trajectory, whole$trajectory)
  blocks <- quietly(compare_models(m, d, block_size = 333, seed = 4, progress = FALSE))
  expect_identical(blocks$trajectory, whole$trajectory)
  # an error of the source keeps the comparison of the blocks done, which continues
  failing <- failing_source(d, 1000, function() stop("connection lost"))
  e <- tryCatch(compare_models(m, failing, block_size = 500, seed = 4, progress = FALSE),
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
    cmp <- compare_models(m, interrupted, block_size = 500, seed = 2, progress = FALSE),
    "after the first 1,000", class = "sgais_warning_interrupted"
  )
  expect_s3_class(cmp, "sgais_comparison")
  expect_identical(cmp$fits$two$n, 1000L)
  whole <- quietly(compare_models(m, d, seed = 2, progress = FALSE))
  expect_identical(quietly(update(cmp, d[1001:1500, ], progress = FALSE))$trajectory,
                   whole$trajectory)
})

test_that("fits made separately compare when they are fits of the same observations", {
  d <- comparison_data(1200)
  m <- comparison_models(d[1:20, ])
  cmp <- quietly(compare_models(m, d, seed = 6, progress = FALSE))
  fits <- lapply(comparison_models(d), function(model) quietly(sgais(model, seed = 6, progress = FALSE)))
  expect_identical(quietly(compare_models(fits))$trajectory, cmp$trajectory)
  # the digest identifies the responses, whatever pieces they came in
  piece <- quietly(sgais(linear_regression(y ~ ., prior = "paper", data = d[1:777, ],
                                           noise_sd = 1), seed = 6, progress = FALSE))
  piece <- quietly(sgais(piece, d[778:1200, ], progress = FALSE))
  expect_identical(piece$data_digest, fits$all$data_digest)
  expect_match(fits$all$data_digest, "^[0-9a-f]{16}$")
  # given data, the fits are continued
  more <- comparison_data(1500)[1201:1500, ]
  expect_identical(quietly(compare_models(fits, more, progress = FALSE))$trajectory,
                   quietly(update(cmp, more, progress = FALSE))$trajectory)
  # same number of observations, other responses: refused
  other <- d
  other$y[5] <- other$y[5] + 1
  fits$none <- quietly(sgais(linear_regression(y ~ 1, prior = "paper", data = other,
                                               noise_sd = 1), seed = 6, progress = FALSE))
  expect_error(compare_models(fits), "not of the same observations",
               class = "sgais_error_data_mismatch")
  expect_error(compare_models(list(a = fits$all, b = m$two)), "all models or all fits",
               class = "sgais_error")
  expect_error(compare_models(fits[1:2], seed = 1), "own settings", class = "sgais_error")
})

test_that("the prior shifts the posterior model probabilities", {
  d <- comparison_data(600)
  m <- comparison_models(d[1:20, ])[c("all", "two")]
  flat <- quietly(compare_models(m, d, seed = 1, progress = FALSE))
  tilted <- quietly(compare_models(m, d, seed = 1, prior = c(two = 3, all = 1), progress = FALSE))
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
  expect_error(compare_models(m$all, d), "list of at least two models or fits", class = "sgais_error")
  expect_error(compare_models(unname(m), d), "must be named", class = "sgais_error")
  expect_error(compare_models(list(a = m$all, b = 1), d), "`models\\$b` must be an sgais model or a fit",
               class = "sgais_error")
  # without data, the models must hold the same observations
  expect_error(compare_models(list(a = m$all, b = linear_regression(y ~ ., prior = "paper", data = d[1:100, ],
                                                                    noise_sd = 1))),
               "`data` is missing, and the models do not hold the same observations",
               class = "sgais_error_data_mismatch")
  expect_error(compare_models(m, block_size = 10), "`block_size` is for `data`", class = "sgais_error")
  expect_error(compare_models(list(a = y ~ x1, b = y ~ x2)), "`data` is missing", class = "sgais_error")
  expect_error(compare_models(list(a = y ~ x1, b = y ~ x2), d), "`family` is missing",
               class = "sgais_error_family")
  expect_error(compare_models(list(a = y ~ x1, b = y ~ x2), d, family = "gamma"),
               "`family` must be one of", class = "sgais_error_family")
  expect_error(compare_models(list(a = y ~ x1, b = y ~ x2), d, family = stats::binomial("probit")),
               "binomial\\(link = \"probit\"\\) has no sgais model", class = "sgais_error_family")
  expect_error(compare_models(list(a = y ~ x1, b = y ~ x2), d, family = function(f, d) 1),
               "`family` must build an sgais model", class = "sgais_error")
  expect_error(compare_models(m, d, family = "gaussian"), "`family` is for formulas",
               class = "sgais_error")
  expect_error(compare_models(m, d, prior = c(1, -1, 1)), "`prior` must be 3 non-negative",
               class = "sgais_error")
  expect_error(compare_models(m, d, prior = c(a = 1, b = 1, c = 1)), "names of `prior`",
               class = "sgais_error")
  expect_error(compare_models(m, d[, -2]), class = "sgais_error_missing_column")
  cmp <- quietly(compare_models(m[1:2], d, seed = 1, progress = FALSE))
  cmp$fits$two <- quietly(sgais(cmp$fits$two, d[1:10, ], progress = FALSE))
  expect_error(sgais:::validate_sgais_comparison(cmp), "different numbers of observations",
               class = "sgais_error")
})

test_that("formulas with a family are built on the data and compared", {
  d <- comparison_data(600)
  cmp <- quietly(compare_models(list(two = y ~ x1 + x2, all = y ~ .), d, family = "gaussian",
                                seed = 2, progress = FALSE))
  built <- list(two = linear_regression(y ~ x1 + x2, d, noise_sd = NULL),
                all = linear_regression(y ~ ., d, noise_sd = NULL))
  expect_identical(cmp$trajectory,
                   quietly(compare_models(built, d, seed = 2, progress = FALSE))$trajectory)
  # a stats family object and a function give the same models
  glm_family <- quietly(compare_models(list(two = y ~ x1 + x2, all = y ~ .), d,
                                       family = stats::gaussian(), seed = 2, progress = FALSE))
  expect_identical(glm_family$trajectory, cmp$trajectory)
  own <- quietly(compare_models(list(two = y ~ x1 + x2, all = y ~ .), d, seed = 2, progress = FALSE,
                                family = function(formula, data) linear_regression(formula, data)))
  expect_identical(own$fits$all$model$family, "linear_regression")
  # formulas and models mix
  mixed <- quietly(compare_models(list(two = y ~ x1 + x2, all = built$all), d, family = "gaussian",
                                  seed = 2, progress = FALSE))
  expect_identical(mixed$trajectory, cmp$trajectory)
})

test_that("models compare on the observations they hold, those written in R too", {
  d <- comparison_data(600)
  m <- comparison_models(d)[1:2]
  held <- quietly(compare_models(m, seed = 5, progress = FALSE))
  expect_identical(held$trajectory, quietly(compare_models(m, d, seed = 5, progress = FALSE))$trajectory)
  # two models written in R on the data they hold, the paper's regression with two priors
  wide <- r_linear_regression(d, prior = normal_prior(sd = 10))
  narrow <- r_linear_regression(d)
  cmp <- quietly(compare_models(list(wide = wide, narrow = narrow), seed = 11, progress = FALSE))
  expect_s3_class(cmp, "sgais_comparison")
  exact <- c(wide = exact_log_evidence(linear_regression(y ~ ., prior = "paper", data = d, prior_sd = 10,
                                                         noise_sd = 1)),
             narrow = exact_log_evidence(linear_regression(y ~ ., prior = "paper", data = d,
                                                           noise_sd = 1)))
  error <- vapply(cmp$fits, log_evidence, 0) - exact[names(cmp$fits)]
  # single runs, seeds 1-8: error mean +0.32 (sd 0.21) with the wide prior, +0.11 (sd 0.25)
  # with the narrow one; seed 11 within the mean +/- 4 sd
  expect_lt(abs(error[["wide"]] - 0.32), 4 * 0.21)
  expect_lt(abs(error[["narrow"]] - 0.11), 4 * 0.25)
})

test_that("with standard errors, a comparison prints intervals and warns of a close call", {
  d <- comparison_data(300)
  m <- comparison_models(d)
  cmp <- quietly(compare_models(m, d, replicates = 3, seed = 1, progress = FALSE))
  expect_output(print(cmp), "bf_se")
  expect_output(print(cmp), "interval")
  last <- sgais:::comparison_final(cmp)
  bounds <- sgais:::comparison_intervals(last, cmp$prior, "probability")
  expect_true(all(bounds$lower <= last$probability & last$probability <= bounds$upper))
  # two models alike: the same fit twice, 0 nats apart, well within 2 SE
  expect_warning(compare_models(list(a = m$all, b = m$all), d, replicates = 2, seed = 1,
                                progress = FALSE),
                 "within 2 standard errors: `a` leads `b` by 0.00 nats",
                 class = "sgais_warning_close_call")
  # one run each: the SEs the runs predict for themselves, with intervals and the warning too
  expect_warning(single <- compare_models(list(a = m$all, b = m$all), d, seed = 1, progress = FALSE),
                 class = "sgais_warning_close_call")
  expect_true(any(grepl("interval", format(single))))
  # the paper preset's single runs have no SE: no interval, no warning
  paper <- quietly(compare_models(list(a = m$all, b = m$all), d, control = sgais_control("paper"),
                                  seed = 1, progress = FALSE))
  expect_false(any(grepl("interval", format(paper))))
})
