test_that("every fit's data frame begins with the shared columns", {
  model <- reference_model(300)
  # (20 particles, one move a step: the columns and their order depend on neither)
  lean_sgais <- function(...) {
    quietly(sgais(model, particles = 20, early_particles = 20, max_rounds = 1, seed = 1,
                  progress = FALSE, ...))
  }
  lean_ais <- function(...) {
    quietly(ais(model, particles = 20, max_rounds = 1, seed = 1, progress = FALSE, ...))
  }
  fits <- list(
    lean_sgais(),
    lean_sgais(replicates = 2),
    lean_ais(),
    lean_ais(replicates = 2),
    quietly(nested_sampling(model, live_points = 20, seed = 1, progress = FALSE))
  )
  shared <- c("method", "n", "log_evidence", "log_evidence_se", "ess", "seconds",
              "gradient_evaluations", "likelihood_evaluations")
  for (fit in fits) {
    df <- as.data.frame(fit)
    expect_identical(names(df)[1:8], shared)
    expect_true(all(df$method == fit$method))
    expect_type(df$n, "integer")
    # cumulative costs (for each replicate, where AIS stacks the replicates' schedules)
    for (rows in split(df, if (is.null(df$replicate)) 1 else df$replicate)) {
      expect_true(all(diff(rows$seconds) >= 0))
      expect_true(all(diff(rows$gradient_evaluations) >= 0))
      expect_true(all(diff(rows$likelihood_evaluations) >= 0))
    }
    expect_true(all(df$ess > 0))
  }
  expect_identical(unique(vapply(fits, function(f) as.data.frame(f)$method[1], "")),
                   c("SGAIS", "AIS", "Nested sampling"))
  # SGAIS: the prefix grows, with an SE from replicates; the others: all observations, no SE
  sg <- as.data.frame(fits[[2]])
  expect_identical(sg$n, c(300L))
  expect_true(all(is.finite(sg$log_evidence_se)))
  ns <- as.data.frame(fits[[5]])
  expect_true(all(ns$n == 300L) && all(is.na(ns$log_evidence_se)))
  expect_equal(tail(ns$ess, 1), {
    lw <- fits[[5]]$dead[seq_len(nrow(ns)), "log_weight"]
    w <- exp(lw - max(lw))
    sum(w)^2 / sum(w^2)
  })
  expect_equal(tail(ns$seconds, 1), fits[[5]]$seconds, tolerance = 0.5)
})

test_that("a damaged fit gives a classed error, not a wrong number", {
  test_tags("memcheck")
  fit <- quietly(sgais(reference_model(300), seed = 1, progress = FALSE))
  broken <- fit
  broken$log_evidence <- NULL
  expect_error(log_evidence(broken), "`log_evidence` is not a finite number",
               class = "sgais_error_invalid_fit")
  broken <- fit
  broken$n <- 100L
  expect_error(as.data.frame(broken), "`n` is not the number", class = "sgais_error_invalid_fit")
  # every field a method reads, refused by name before it is read
  damage <- list(
    list(quote(x$log_evidence <- Inf), "`log_evidence`"),
    list(quote(x$log_evidence_se <- -1), "`log_evidence_se`"),
    list(quote(x$replicate_log_evidence <- NaN), "`replicate_log_evidence`"),
    list(quote(x$trajectory$ess <- NaN), "`trajectory`"),
    list(quote(x$trajectory$seconds <- -1), "`trajectory`"),
    list(quote(x$diagnostics$predicted_sd <- "a"), "`diagnostics`"),
    list(quote(x$state$log_weights[] <- Inf), "`state`"),
    list(quote(x$settings$particles <- NULL), "`settings`.*`particles`"),
    list(quote(x$settings$batch_size <- c(1, 2)), "`settings`.*`batch_size`"),
    list(quote(x$settings$preset <- "fast"), "`settings\\$preset`")
  )
  for (d in damage) {
    x <- fit
    eval(d[[1]])
    for (f in list(log_evidence, format, as.data.frame, confint, summary, plot_data,
                   function(x) posterior_samples(x, 5), function(x) evidence_data(a = x))) {
      expect_error(f(x), d[[2]], class = "sgais_error_invalid_fit")
    }
  }
  # a figure a chunk may lack is NA, and an NA from C can read as NaN (under valgrind)
  x <- fit
  x$trajectory$data_fraction <- NaN
  expect_identical(log_evidence(x), fit$log_evidence)
})

test_that("the methods give a classed answer for the wrong object, saying what to call", {
  model <- reference_model(300)
  expect_error(posterior_samples(model, 5), "fit it first, e.g. `fit <- sgais\\(model\\)`",
               class = "sgais_error_argument")
  expect_error(predictive_density(model, data.frame()), "`x` must be a fit",
               class = "sgais_error_argument")
  expect_error(plot_data(stats::lm(dist ~ speed, cars)), "not an object of class lm",
               class = "sgais_error_argument")
  expect_error(log_evidence(1), "`x` must be a fit", class = "sgais_error_argument")
  cmp <- structure(list(fits = list(a = 1, b = 2)), class = "sgais_comparison")
  expect_error(posterior_samples(cmp), "`x\\$fits\\$a`", class = "sgais_error_argument")
})

test_that("the accessors refuse arguments they do not take", {
  fit <- quietly(sgais(reference_model(300), seed = 1, progress = FALSE))
  for (f in list(log_evidence, format, summary, as.data.frame, print, plot_data)) {
    expect_error(f(fit, foo = 1), "Unknown argument: `foo`", class = "sgais_error_argument")
  }
  expect_error(log_evidence(fit, 2), "an unnamed argument", class = "sgais_error_argument")
  expect_identical(as.data.frame(fit, optional = TRUE), as.data.frame(fit))
})

test_that("the running effective sample size is exact and never 0 / 0", {
  lw <- c(-Inf, -1000, -2, -1, -3, -Inf)
  ess <- sgais:::running_ess(lw)
  direct <- vapply(seq_along(lw), function(k) {
    w <- exp(lw[1:k] - max(lw[1:k]))
    if (!is.finite(max(lw[1:k]))) return(0)
    sum(w)^2 / sum(w^2)
  }, numeric(1))
  expect_equal(ess, direct)
})

test_that("the estimators' results print at the top level", {
  model <- reference_model(300)
  expect_visible(quietly(sgais(model, seed = 1, progress = FALSE)))
  expect_visible(quietly(ais(model, seed = 1, progress = FALSE)))
  expect_visible(quietly(nested_sampling(model, live_points = 10, seed = 1, progress = FALSE)))
})

test_that("update() of a fit that cannot be continued is a classed error, not its stored call", {
  marker <- tempfile()
  model <- linear_regression(y ~ ., prior = "paper", data = simulate_linear_regression(200, seed = 2),
                             noise_sd = 1)
  fits <- list(quietly(ais(model, particles = 20, seed = 1, progress = FALSE)),
               quietly(nested_sampling(model, live_points = 20, seed = 1, progress = FALSE)))
  for (fit in fits) {
    fit$call <- call("file.create", marker)
    path <- tempfile(fileext = ".rds")
    saveRDS(fit, path)
    expect_error(update(readRDS(path), simulate_linear_regression(10, seed = 3)),
                 "cannot be continued", class = "sgais_error_not_continuable")
    expect_false(file.exists(marker))
  }
})
