# The move kernels behind `kernel =` (src/kernel.c, sgld.c, subsample_mh.c) in SGAIS and AIS.
# Tolerances: inst/validation/calibrate-kernels.R measured the error of log Z on this model over
# seeds 1-5 (mean, sd): SGAIS sghmc +0.33, 0.30; sgld -0.13, 0.35; austerity -0.23, 0.36;
# confidence -0.02, 0.44; AIS sgld -0.53, 0.41; austerity -1.25, 0.33 (the t-test's tolerance
# 0.05 lets some decisions go wrong, and the random walk mixes slowly); confidence -0.04, 0.13.
# Each bound is about |mean| + 4 sd; the tests run seeds 11 and 12.
kernel_model <- function() linear_regression(y ~ ., simulate_linear_regression(1000, seed = 3))

test_that("every kernel gives SGAIS and AIS the exact evidence within the calibrated spread", {
  model <- kernel_model()
  exact <- exact_log_evidence(model)
  bounds <- list(
    sgais = c(sghmc = 2.5, sgld = 2.5, austerity = 2.5, confidence = 2.5),
    ais = c(sgld = 2.5, austerity = 3, confidence = 1)
  )
  for (est in names(bounds)) {
    for (kernel in names(bounds[[est]])) {
      for (seed in 11:12) {
        f <- quietly(get(est)(model, kernel = kernel, seed = seed, progress = FALSE))
        expect_lt(abs(f$log_evidence - exact), bounds[[est]][[kernel]],
                  label = sprintf("%s, kernel %s, seed %d: error %+.2f", est, kernel, seed,
                                  f$log_evidence - exact))
      }
    }
  }
})

test_that("the MH kernels report the fraction of the data their tests read", {
  model <- kernel_model()
  f <- quietly(ais(model, kernel = "austerity", seed = 1, progress = FALSE))
  frac <- f$schedule$data_fraction
  expect_true(all(is.na(frac) | (frac > 0 & frac <= 1)))
  expect_true(any(frac < 1, na.rm = TRUE)) # the t-test settles most decisions early
  s <- quietly(sgais(model, kernel = "confidence", seed = 1, progress = FALSE))
  expect_true(all(is.na(s$trajectory$data_fraction[-1]) == FALSE))
  expect_true(is.na(s$trajectory$data_fraction[1])) # no earlier data: the test is exact
  g <- quietly(sgais(model, seed = 1, progress = FALSE))
  expect_true(all(is.na(g$trajectory$data_fraction)))
  expect_output(print(f), "t-test MH test with tolerance 0.05")
  expect_output(print(quietly(ais(model, kernel = "sgld", seed = 1, progress = FALSE))), "SGLD steps")
})

test_that("kernels keep runs reproducible: same seed, slices and threads", {
  model <- kernel_model()
  for (kernel in c("sgld", "austerity", "confidence")) {
    a <- quietly(sgais(model, kernel = kernel, seed = 5, progress = FALSE))
    b <- quietly(sgais(model, kernel = kernel, seed = 5, progress = FALSE))
    expect_identical(a$log_evidence, b$log_evidence)
    settings <- sgais:::control_settings(sgais_control(kernel = kernel, exact_until = 200), list(),
                                         "sgais", NULL)
    run <- function(budget) {
      withr::with_seed(9, {
        state <- initial_sgais_state(model, settings$early_particles)
        sgais:::sgais_advance(model, state, model$n, settings, progress = FALSE, budget = budget)
      })
    }
    expect_identical(run(Inf)$state, run(0)$state)
  }
  old <- sgais_threads()
  on.exit(suppressWarnings(sgais_threads(old)))
  big <- linear_regression(y ~ ., simulate_linear_regression(3000, seed = 2))
  one <- suppressWarnings({sgais_threads(1); quietly(sgais(big, kernel = "austerity", seed = 2, progress = FALSE))})
  two <- suppressWarnings({sgais_threads(2); quietly(sgais(big, kernel = "austerity", seed = 2, progress = FALSE))})
  expect_identical(one$log_evidence, two$log_evidence)
  expect_identical(one$trajectory$data_fraction, two$trajectory$data_fraction)
})

test_that("kernels that cannot serve a model or a preset are refused before sampling", {
  d <- simulate_linear_regression(100, seed = 1)
  d$k <- stats::rpois(100, 2)
  expect_error(sgais(poisson_regression(k ~ x1, d), kernel = "confidence", progress = FALSE),
               "needs a bound", class = "sgais_error_kernel")
  expect_error(ais(kernel_model(), kernel = "austerity", control = ais_control("paper")),
               "step_scale", class = "sgais_error")
  expect_error(sgais_control(mh_tolerance = 1), "mh_tolerance")
})
