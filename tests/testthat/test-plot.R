# Every plot: the data frame behind it (columns, rows, values), and that it builds and renders
# to a file without a warning.

renders <- function(p) {
  expect_s3_class(p, "ggplot")
  file <- withr::local_tempfile(fileext = ".pdf")
  expect_no_message(expect_no_warning(ggplot2::ggsave(file, p, width = 5, height = 4)))
  expect_gt(file.size(file), 1000)
}

plot_fixtures <- local({
  cache <- NULL
  function() {
    if (is.null(cache)) {
      data <- simulate_linear_regression(1500, seed = 4)
      model <- linear_regression(y ~ ., data, noise_sd = 1)
      cache <<- list(
        data = data, model = model,
        # (20 particles, one move a step: the plots show the fits' tables, whatever their values)
        sgais = quiet_sgais(model, replicates = 2, particles = 20, early_particles = 20,
                            max_rounds = 1, seed = 1),
        ais = quietly(ais(model, particles = 20, max_rounds = 1, seed = 1, progress = FALSE)),
        ns = quietly(nested_sampling(model, live_points = 20, seed = 1, progress = FALSE))
      )
    }
    cache
  }
})

test_that("SGAIS fits plot their trajectory against the exact evidence, and their costs", {
  f <- plot_fixtures()
  fit <- f$sgais
  tr <- as.data.frame(fit)
  d <- plot_data(fit)
  expect_named(d, c("n", "log_evidence_per_obs", "lower", "upper", "exact_per_obs"))
  expect_equal(d$n, tr$n)
  expect_equal(d$log_evidence_per_obs, tr$log_evidence / tr$n)
  expect_equal(d$upper - d$lower, 4 * tr$log_evidence_se / tr$n)
  expect_equal(d$exact_per_obs, exact_log_evidence(f$model, n = tr$n) / tr$n)
  expect_true(all(is.na(plot_data(fit, exact = FALSE)$exact_per_obs)))
  expect_equal(plot_data(fit, which = "steps")$annealing_steps, tr$annealing_steps)
  expect_equal(plot_data(fit, which = "time")$seconds, tr$seconds)
  e <- plot_data(fit, which = "ess")
  expect_equal(nrow(e), 2 * nrow(tr))
  expect_equal(e$ess, c(tr$ess, tr$min_ess))
  for (w in c("evidence", "steps", "time", "ess")) renders(autoplot(fit, which = w))
  p <- autoplot(fit)
  expect_equal(p$labels$y, "log evidence per observation")
  expect_equal(p$labels$x, "observations (log scale)")
})

test_that("AIS and nested-sampling fits plot their traces", {
  f <- plot_fixtures()
  tr <- as.data.frame(f$ais)
  expect_equal(plot_data(f$ais)$lambda, tr$lambda)
  expect_equal(tail(plot_data(f$ais)$lambda, 1), 1)
  expect_equal(plot_data(f$ais, which = "ess")$ess, tr$ess)
  for (w in c("schedule", "ess")) renders(autoplot(f$ais, which = w))

  tr <- as.data.frame(f$ns)
  l <- plot_data(f$ns)
  expect_equal(l$minus_log_volume, -tr$log_volume)
  expect_equal(l$log_likelihood, tr$log_likelihood)
  c <- plot_data(f$ns, which = "contributions")
  expect_equal(sum(c$share), 1)
  # the shares are L_i (X_{i-1} - X_i) normalised: X_i = exp(-i / M) with M = 20
  x <- exp(-tr$iteration / 20)
  w <- c(1, x[-length(x)]) - x
  l <- exp(tr$log_likelihood - max(tr$log_likelihood))
  expect_equal(c$share, l * w / sum(l * w))
  for (w in c("likelihood", "contributions")) renders(autoplot(f$ns, which = w))
})

test_that("plot_evidence() overlays fits of the same data with the exact curve", {
  f <- plot_fixtures()
  d <- evidence_data(sgais = f$sgais, ais = f$ais, f$ns)
  expect_equal(levels(d$label), c("sgais", "ais", "Nested sampling", "exact"))
  expect_equal(nrow(d[d$label == "sgais", ]), nrow(as.data.frame(f$sgais)))
  a <- d[d$label == "ais", ]
  expect_equal(a$n, 1500)
  expect_equal(a$log_evidence_per_obs, log_evidence(f$ais) / 1500)
  # one AIS run: the SE it predicts for itself
  expect_equal(a$upper - a$lower, 4 * f$ais$log_evidence_se / 1500)
  ns <- d[d$label == "Nested sampling", ]
  expect_equal(ns$upper - ns$lower, 4 * f$ns$log_evidence_sd / 1500)
  ex <- d[d$label == "exact", ]
  expect_equal(ex$n, sort(unique(d$n[d$label != "exact"])))
  expect_equal(ex$log_evidence_per_obs, exact_log_evidence(f$model, n = ex$n) / ex$n)
  # a list works as well as arguments
  expect_equal(evidence_data(list(sgais = f$sgais, ais = f$ais, f$ns)), d)
  renders(plot_evidence(sgais = f$sgais, ais = f$ais, ns = f$ns))
  renders(plot_evidence(f$ais, exact = FALSE))
  expect_false("exact" %in% evidence_data(f$ais, exact = FALSE)$label)
})

test_that("plot_evidence() refuses fits of other data and things that are not fits", {
  f <- plot_fixtures()
  other <- linear_regression(y ~ ., simulate_linear_regression(1500, seed = 5), noise_sd = 1)
  g <- quietly(ais(other, particles = 20, seed = 1, progress = FALSE))
  expect_error(plot_evidence(f$ais, g), "not of the same observations", class = "sgais_error_argument")
  expect_error(plot_evidence(f$ais, 3), "Fit 2 is", class = "sgais_error_argument")
  expect_error(plot_evidence(), "at least one fit", class = "sgais_error_argument")
  expect_error(evidence_data(a = f$ais, a = f$ais), "`a` is given more than once",
               class = "sgais_error_argument")
})

test_that("comparisons and shifts plot over the observations", {
  f <- plot_fixtures()
  small <- linear_regression(y ~ x1, f$data, noise_sd = 1)
  cmp <- quietly(compare_models(list(full = f$model, small = small), f$data, particles = 20,
                                early_particles = 20, seed = 1, progress = FALSE, method = "sgais"))
  tr <- as.data.frame(cmp)
  p <- plot_data(cmp)
  expect_equal(p$value, tr$probability)
  expect_equal(levels(p$model), c("full", "small"))
  expect_equal(plot_data(cmp, which = "bayes_factor")$value, tr$log_bayes_factor)
  for (w in c("probability", "bayes_factor")) renders(autoplot(cmp, which = w))

  s <- detect_shifts(f$sgais, threshold = 0.5)
  sc <- as.data.frame(s, which = "scores")
  t <- plot_data(s)
  expect_equal(t$log_predictive_per_obs, sc$log_predictive_per_obs)
  expect_equal(t$flagged, sc$flagged)
  expect_equal(plot_data(s, which = "scores")$score, sc$score[!is.na(sc$score)])
  for (w in c("trajectory", "scores")) renders(autoplot(s, which = w))
  renders(autoplot(detect_shifts(cmp)))
})

test_that("plot() prints the autoplot and `which` is checked", {
  f <- plot_fixtures()
  file <- withr::local_tempfile(fileext = ".pdf")
  grDevices::pdf(file)
  expect_invisible(out <- plot(f$sgais, which = "time"))
  grDevices::dev.off()
  expect_s3_class(out, "ggplot")
  expect_identical(out$data, autoplot(f$sgais, which = "time")$data)
  expect_error(autoplot(f$sgais, which = "lambda"),
               "`which` must be one of \"evidence\", \"steps\", \"time\", \"ess\"",
               class = "sgais_error_argument")
  expect_error(autoplot(f$ais, which = 1), "`which` must be one of", class = "sgais_error_argument")
  expect_error(plot_data(f$ns, which = "evidence"), "\"likelihood\", \"contributions\"",
               class = "sgais_error_argument")
  expect_error(autoplot(f$sgais, colour = "red"), "Unknown argument: `colour`",
               class = "sgais_error_argument")
  expect_error(autoplot(f$sgais, exact = NA), "exact")
})

test_that("one chunk, one step or one n make points, not lines through one point", {
  model <- small_model(300)
  fit <- quiet_sgais(model, particles = 20, early_particles = 20, seed = 1)
  expect_equal(nrow(plot_data(fit)), 1)
  for (w in c("evidence", "steps", "time", "ess")) renders(autoplot(fit, which = w))
  a <- quietly(ais(model, particles = 20, seed = 1, progress = FALSE))
  d <- evidence_data(a)
  expect_equal(as.character(d$label), c("AIS", "exact"))
  renders(plot_evidence(a))
  renders(plot_evidence(fit, a))
})

test_that("a trajectory marks its chunks with points while they can be told apart", {
  geoms <- function(p) vapply(p$layers, function(l) class(l$geom)[1], "")
  short <- plot_fixtures()$sgais                       # 3 chunks
  expect_true("GeomPoint" %in% geoms(autoplot(short)))
  model <- small_model(31000)
  long <- quiet_sgais(model, particles = 10, early_particles = 10, chunk_size = 500,
                      batch_size = 100, seed = 1)      # 62 chunks: a line only
  expect_gt(nrow(plot_data(long)), 60)
  expect_false("GeomPoint" %in% geoms(autoplot(long)))
  expect_true("GeomLine" %in% geoms(autoplot(long)))
  renders(autoplot(long))
})

test_that("comparisons with standard errors draw bands; one n draws a dot and interval each", {
  geoms <- function(p) vapply(p$layers, function(l) class(l$geom)[1], "")
  d <- simulate_linear_regression(1200, seed = 3)
  m <- list(all = linear_regression(y ~ ., d,
                                    noise_sd = 1), two = linear_regression(y ~ x1 + x2, d, noise_sd = 1))
  # (20 particles, one move a step: the bands are drawn from the comparison's SEs, whatever
  # their size)
  cmp <- quietly(compare_models(m, d, replicates = 2, particles = 20, early_particles = 20,
                                max_rounds = 1, seed = 1, progress = FALSE, method = "sgais"))
  p <- plot_data(cmp, which = "bayes_factor")
  expect_true(all(p$lower <= p$value & p$value <= p$upper))
  expect_equal(p$upper[p$model == "all"], p$value[p$model == "all"]) # the best: 0, no band
  expect_true("GeomRibbon" %in% geoms(autoplot(cmp, which = "bayes_factor")))
  renders(autoplot(cmp))
  # data shorter than two chunks: the models on the x axis, a dot and a +/- 2 SE bar each
  short <- quietly(compare_models(lapply(m, function(x) x), d[1:300, ], replicates = 2,
                                  particles = 20, early_particles = 20, max_rounds = 1, seed = 1,
                                  progress = FALSE, method = "sgais"))
  plot <- autoplot(short, which = "bayes_factor")
  expect_true(all(c("GeomPoint", "GeomErrorbar") %in% geoms(plot)))
  expect_false("GeomLine" %in% geoms(plot))
  expect_match(plot$labels$subtitle, "after 300 observations")
  renders(plot)
})
