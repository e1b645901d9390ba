test_that("replicates combine by log-mean-exp with a jackknife standard error", {
  test_tags("memcheck")
  model <- small_model(1000)
  # (20 particles, one move a step: the combination depends on neither)
  fit <- quiet_sgais(model, replicates = 3, particles = 20, early_particles = 20, max_rounds = 1,
                     seed = 1)
  z <- fit$replicate_log_evidence
  expect_length(z, 3)
  expect_equal(fit$log_evidence, log(mean(exp(z - max(z)))) + max(z))
  loo <- vapply(1:3, function(i) log(mean(exp(z[-i] - max(z)))), numeric(1))
  jackknife <- sqrt(2 / 3 * sum((loo - mean(loo))^2))
  expect_equal(sgais:::log_mean_exp_se(z), jackknife)
  # for replicates that agree, about the delta method's
  w <- exp(z - max(z))
  expect_equal(jackknife, sd(w) / (sqrt(3) * mean(w)), tolerance = 0.2)
  # the SE is the jackknife's, or if larger sqrt(mean(predicted_sd^2) / R) (se_floor())
  floor <- sqrt(mean(fit$diagnostics$predicted_sd^2) / 3)
  expect_equal(fit$log_evidence_se, max(jackknife, floor))
  expect_equal(fit$replicate_sd, sd(z))
  # the trajectory carries the combination and its SE at every n
  tr <- fit$trajectory
  expect_equal(tr$log_evidence[nrow(tr)], fit$log_evidence)
  expect_equal(tr$log_evidence_se[nrow(tr)], fit$log_evidence_se)
  expect_true(all(tr$log_evidence_se > 0))
  # and at every n never below the floor of the predicted sds up to there: each replicate's
  # predicted variance so far is the larger of its steps' summed chi-square divergences and
  # its genealogy's estimate (anneal_diagnostics())
  cum <- sapply(fit$state$traces, sgais:::predicted_var_path)
  expect_true(all(cum >= sapply(fit$state$traces, function(t) cumsum(t$predicted_var))))
  expect_true(all(tr$log_evidence_se >= sqrt(rowMeans(cum) / 3) - 1e-12))
  expect_equal(sqrt(mean(cum[nrow(cum), ]) / 3), floor)
  expect_identical(nrow(fit$diagnostics), 3L)
  expect_identical(fit$diagnostics$log_evidence, z)
  # all replicates' particles, each with its own weight, make the posterior sample (1,000
  # observations never leave the exact early phase, which has early_particles)
  expect_identical(nrow(fit$state$particles), 3L * fit$settings$early_particles)
  expect_output(print(fit), "\\+/- [0-9.]+ \\(SE from 3 replicates\\)")
  expect_output(print(summary(fit)), "SE from 3 replicates")
  # one replicate's SE is the sd it predicts for itself, along the trajectory too
  one <- quiet_sgais(model, particles = 20, early_particles = 20, seed = 1)
  expect_identical(one$log_evidence_se, one$diagnostics$predicted_sd)
  expect_true(all(is.finite(one$trajectory$log_evidence_se)))
  expect_identical(tail(one$trajectory$log_evidence_se, 1), one$log_evidence_se)
  expect_true(is.na(one$replicate_sd))
  expect_output(print(one), "\\+/- [0-9.]+ \\(SE predicted by the run itself\\)")
  expect_equal(confint(one)[1, ], one$log_evidence + c(-1, 1) * qnorm(0.975) * one$log_evidence_se,
               ignore_attr = TRUE)
  # but not under the paper preset, whose bias the weights cannot see
  paper <- quietly(sgais(model, control = sgais_control("paper"), seed = 1, progress = FALSE))
  expect_true(is.na(paper$log_evidence_se))
  expect_error(confint(paper), "has no standard error", class = "sgais_error")
})

test_that("SGAIS replicates take a pilot run's annealing steps, chunk by chunk", {
  model <- small_model(1300)
  # (20 particles, one move a step: the schedules' sharing depends on neither)
  lean <- function(model, ...) {
    quiet_sgais(model, particles = 20, early_particles = 20, max_rounds = 1, ...)
  }
  fit <- lean(model, replicates = 3, seed = 4)
  expect_identical(fit$annealing, "pilot")
  # the pilot is the plain run with this seed; its steps, chunk by chunk, the replicates'
  plain <- lean(model, seed = 4)
  expect_identical(fit$pilot$log_evidence, plain$log_evidence)
  expect_false(fit$pilot$log_evidence %in% fit$replicate_log_evidence)
  lambdas <- lapply(fit$state$resume, `[[`, "lambdas")
  expect_identical(lambdas[[1]], plain$state$resume[[1]]$lambdas)
  expect_identical(lambdas[[2]], lambdas[[1]])
  expect_identical(lambdas[[3]], lambdas[[1]])
  expect_equal(fit$trajectory$annealing_steps, plain$trajectory$annealing_steps)
  expect_identical(fit$pilot$steps, sum(plain$trajectory$annealing_steps))
  # its cost is counted, its estimate not
  expect_equal(fit$gradient_evaluations,
               sum(fit$trajectory$chunk_gradient_evaluations) + plain$gradient_evaluations)
  expect_output(print(fit), "on a pilot run's schedule")
  # chunks with the score control variate (from n_prev = 4 chunks on) anneal adaptively
  longer <- lean(small_model(3000), replicates = 2, seed = 4)
  by_chunk <- function(r) {
    split(longer$state$resume[[r]]$lambdas,
          rep(seq_along(longer$state$traces[[r]]$n), longer$state$traces[[r]]$annealing_steps))
  }
  first <- by_chunk(1)
  second <- by_chunk(2)
  early <- longer$state$traces[[1]]$n <= 2000
  expect_identical(first[early], second[early])
  expect_false(identical(first[!early], second[!early]))
  # each replicate choosing its own steps
  own <- lean(model, replicates = 2, schedule = "adaptive", seed = 4)
  expect_identical(own$annealing, "adaptive")
  # their steps in a chunk are means, printed with one decimal
  own$trajectory$annealing_steps[1] <- 47 / 3
  expect_match(format(own), "at most 15.7 in a chunk", fixed = TRUE, all = FALSE)
  expect_null(own$pilot)
  expect_null(own$state$pilot)
  expect_false(identical(own$state$resume[[1]]$lambdas, own$state$resume[[2]]$lambdas))
  expect_error(lean(model, replicates = 2, schedule = c(0.5, 1)),
               "`schedule` must be NULL, \"adaptive\", \"pilot\", not a double vector of length 2")
  # the estimators without annealing steps have no schedule
  expect_identical(quietly(sir(model, replicates = 2, particles = 20, early_particles = 20,
                               seed = 1, progress = FALSE))$annealing, "adaptive")
})

test_that("confint() uses the t quantile of the replicates' standard error", {
  model <- small_model(800)
  # (20 particles, one move a step: the interval is a function of the estimate and its SE)
  fit <- quiet_sgais(model, replicates = 4, particles = 20, early_particles = 20, max_rounds = 1,
                     seed = 3)
  ci <- confint(fit)
  expect_identical(dim(ci), c(1L, 2L))
  expect_equal(unname(ci[1, ]), fit$log_evidence + c(-1, 1) * qt(0.975, 3) * fit$log_evidence_se)
  expect_equal(unname(confint(fit, level = 0.5)[1, 2] - fit$log_evidence),
               qt(0.75, 3) * fit$log_evidence_se)
  expect_error(confint(quietly(sgais(model, control = sgais_control("paper"), seed = 1, progress = FALSE))),
               "fit it with `replicates` of 2 or more")
  expect_error(confint(fit, level = 2), "`level` must be a number in \\(0, 1\\)")
})

test_that("log_mean_exp_se() is stable and NA where undefined", {
  expect_true(is.na(sgais:::log_mean_exp_se(1)))
  expect_true(is.na(sgais:::log_mean_exp_se(c(1, NA))))
  expect_equal(sgais:::log_mean_exp_se(c(-1e6, -1e6)), 0)
  expect_equal(sgais:::log_mean_exp(c(-1e6, -1e6 + log(3))), -1e6 + log(2))
  # one dominating replicate: the SE shows the disagreement (the delta method says tanh(d / 2))
  expect_equal(sgais:::log_mean_exp_se(c(0, -2000)), 1000)
  expect_equal(sgais:::log_mean_exp_se(c(-1e6, -1e6 - 4)), 2)
  x <- c(-1557, rep(-1557.5, 8), -1247)
  loo <- vapply(seq_along(x), function(i) sgais:::log_mean_exp(x[-i]), numeric(1))
  expect_equal(sgais:::log_mean_exp_se(x), sqrt(9 / 10 * sum((loo - mean(loo))^2)))
  expect_gt(sgais:::log_mean_exp_se(x), 250)
})

test_that("the replicate SE is never below the replicates' own predicted sds", {
  rs <- sgais:::replicate_summary
  # replicates that agree by chance: the floor sqrt(mean(p^2) / R)
  s <- rs(c(-100, -100.01), predicted_sd = c(0.3, 0.4))
  expect_equal(s$log_evidence_se, sqrt(mean(c(0.09, 0.16)) / 2))
  s <- rs(c(-100, -100.01), "log", predicted_sd = c(0.3, 0.4))
  expect_equal(s$log_evidence_se, sqrt(mean(c(0.09, 0.16)) / 2))
  # replicates that disagree more than predicted keep their own SE
  x <- c(-100, -103, -101)
  expect_identical(rs(x, predicted_sd = c(0.1, 0.1, 0.1))$log_evidence_se, sgais:::log_mean_exp_se(x))
  expect_identical(rs(x, "log", predicted_sd = rep(0.1, 3))$log_evidence_se, sd(x) / sqrt(3))
  # no predictions, one replicate, or predictions that are not finite: no floor
  expect_identical(rs(x)$log_evidence_se, sgais:::log_mean_exp_se(x))
  expect_identical(rs(-100, predicted_sd = 0.5)$log_evidence_se, 0.5)
  expect_true(is.na(rs(-100, predicted_sd = 0.5, single = FALSE)$log_evidence_se))
  expect_true(is.na(rs(-100)$log_evidence_se))
  expect_true(is.na(rs(-100, predicted_sd = Inf)$log_evidence_se))
  expect_identical(rs(x, predicted_sd = c(0.1, Inf, 0.1))$log_evidence_se, sgais:::log_mean_exp_se(x))
  expect_true(is.na(rs(c(-100, NA), predicted_sd = c(0.1, 0.1))$log_evidence_se))
})

test_that("replicates give identical results under sequential and multisession plans", {
  skip_on_cran()
  skip_if_not_installed("future")
  model <- small_model(800)
  # (20 particles, one move a step: the random streams depend on neither)
  lean <- function(...) {
    quiet_sgais(model, particles = 20, early_particles = 20, max_rounds = 1, ...)
  }
  lean_ais <- function() {
    quietly(ais(model, replicates = 2, particles = 20, max_rounds = 1, seed = 8,
                progress = FALSE))
  }
  withr::defer(future::plan(future::sequential))
  future::plan(future::sequential)
  seq_fit <- lean(replicates = 3, seed = 7)
  seq_ais <- lean_ais()
  future::plan(future::multisession, workers = 2)
  par_fit <- lean(replicates = 3, seed = 7)
  par_ais <- lean_ais()
  expect_identical(par_fit$replicate_log_evidence, seq_fit$replicate_log_evidence)
  expect_identical(state_without_time(par_fit$state), state_without_time(seq_fit$state))
  expect_identical(par_ais$replicate_log_evidence, seq_ais$replicate_log_evidence)
  # and set.seed() makes an unseeded call reproducible
  future::plan(future::sequential)
  set.seed(3); a <- lean(replicates = 2)
  set.seed(3); b <- lean(replicates = 2)
  expect_identical(a$replicate_log_evidence, b$replicate_log_evidence)
  # an unseeded call advances the session's stream: the next one is another run
  c <- lean(replicates = 2)
  expect_false(identical(b$replicate_log_evidence, c$replicate_log_evidence))
})

test_that("replicates leave the session's random number generator as it was", {
  # future.apply switches the session to L'Ecuyer-CMRG; every later set.seed() would then give
  # other streams
  model <- small_model(600)
  # (20 particles, one move a step: what the session's generator is left at depends on neither)
  lean <- function(...) {
    quiet_sgais(model, particles = 20, early_particles = 20, max_rounds = 1, ...)
  }
  kind <- RNGkind()
  set.seed(11); x <- runif(1)
  lean(replicates = 2, seed = 1)
  expect_identical(RNGkind(), kind)
  set.seed(11)
  expect_identical(runif(1), x)
  # an unseeded call advances the caller's stream, deterministically
  set.seed(12); lean(replicates = 2); y1 <- runif(1)
  set.seed(12); lean(replicates = 2); y2 <- runif(1)
  expect_identical(y1, y2)
})

test_that("nested sampling replicates average their log evidences and pool their dead points", {
  model <- small_model(300)
  fit <- nested_sampling(model, replicates = 3, live_points = 20, seed = 2, progress = FALSE)
  x <- fit$replicate_log_evidence
  expect_length(x, 3)
  expect_false(x[1] == x[2])
  # a run's log Z-hat is unbiased in the log (Skilling's volumes), so the logs are averaged
  expect_equal(fit$log_evidence, mean(x))
  # the SE is sd / sqrt(R), but never below sqrt(H_r / M) averaged over the replicates / sqrt(R):
  # three replicates can agree by chance (here they spread by a fifth of what H predicts)
  floor <- sqrt(mean(fit$diagnostics$information) / 20 / 3)
  expect_lt(sd(x) / sqrt(3), floor)
  expect_equal(fit$log_evidence_se, max(sd(x) / sqrt(3), floor))
  expect_equal(fit$log_evidence_se, sgais:::se_floor(fit$diagnostics$predicted_sd, 3))
  expect_lt(fit$log_evidence, sgais:::log_mean_exp(x))
  expect_equal(unname(confint(fit)[1, ]), mean(x) + c(-1, 1) * qt(0.975, 2) * fit$log_evidence_se)
  lw <- fit$dead[, "log_weight"]
  # each replicate's weights sum to the combined evidence (equal shares of the posterior)
  expect_equal(sgais:::log_sum_exp(lw), fit$log_evidence + log(3))
  expect_equal(fit$log_evidence_sd, sqrt(fit$information / (20 * 3)))
})

test_that("diagnostics predict an unreliable estimate and warn with a class", {
  model <- small_model(2000)
  # the paper's 10 particles: the chi-square divergences predict a spread of over 1 nat
  w <- tryCatch(sgais(model, control = sgais_control("paper"), seed = 1, progress = FALSE),
                sgais_warning_unreliable = identity)
  expect_s3_class(w, "sgais_warning")
  expect_match(conditionMessage(w), "SGAIS estimate may be unreliable: .* Use more `particles`")
  fit <- paper_sgais(model, seed = 1)
  d <- fit$diagnostics
  expect_named(d, c("replicate", "log_evidence", "predicted_sd", "lowest_ess",
                    "final_log_weight_var", "many_steps_fraction"))
  expect_gt(d$predicted_sd, 1)
  expect_equal(d$lowest_ess, min(fit$trajectory$min_ess))
  expect_equal(d$final_log_weight_var, var(fit$state$log_weights))
  # the robust preset on the same data is predicted (and measured) reliable: no warning
  expect_no_warning(fit <- sgais(model, seed = 1, progress = FALSE))
  expect_lt(fit$diagnostics$predicted_sd, 1)
  w <- tryCatch(nested_sampling(model, live_points = 5, seed = 1, progress = FALSE),
                sgais_warning_unreliable = identity)
  expect_match(conditionMessage(w), "standard error sqrt\\(H / M\\) is")
})

test_that("replicates that disagree far more than they predict give a warning", {
  # measured: AIS on the unscaled faithful data with 2 components, 10 replicates, 9 of which
  # settled in a mode 307 nats below the dominant one, each predicting an sd of 0.35
  fake <- function(log_z, predicted) {
    list(method = "AIS", log_evidence = log_z[1], replicate_log_evidence = log_z,
         diagnostics = data.frame(predicted_sd = predicted))
  }
  expect_null(sgais:::replicate_disagreement(fake(c(-1236, -1236.5, -1235.8), 0.35)))
  expect_null(sgais:::replicate_disagreement(fake(-1236, 0.35)))
  # an sd of 2 nats where 0.9 is predicted is not flagged (over 1 nat but under 3 x 0.9)
  expect_null(sgais:::replicate_disagreement(fake(c(-10, -12, -14, -12), 0.9)))
  far <- fake(c(-1543, -1542.7, -1236, -1542.1), 0.35)
  expect_equal(sgais:::replicate_disagreement(far), 307)
  w <- tryCatch(sgais:::warn_if_unreliable(far), sgais_warning_unreliable = identity)
  expect_s3_class(w, "sgais_warning")
  expect_match(conditionMessage(w), "The 4 replicates of AIS disagree: their log evidences span 307 nats")
})

test_that("runs whose moves were almost all rejected warn that the points barely moved", {
  model <- linear_regression(y ~ ., simulate_linear_regression(200, seed = 1), noise_sd = 1)
  a <- ais(model, seed = 1, progress = FALSE)
  expect_silent(sgais:::warn_if_stuck(a))
  a$schedule$acceptance <- 0.01
  expect_warning(sgais:::warn_if_stuck(a), "acceptance 1.0%", class = "sgais_warning_unreliable")
  # a mixture's jump proposals move the points where its local moves are refused
  a$schedule$jump_acceptance <- 0.5
  expect_silent(sgais:::warn_if_stuck(a))
  a$schedule$jump_acceptance <- 0.02
  expect_warning(sgais:::warn_if_stuck(a), "acceptance 2.0%", class = "sgais_warning_unreliable")
  ns <- nested_sampling(model, seed = 1, progress = FALSE)
  expect_silent(sgais:::warn_if_stuck(ns))
  ns$trace$rejected_steps <- ns$trace$steps
  expect_warning(sgais:::warn_if_stuck(ns), "acceptance 0.0%", class = "sgais_warning_unreliable")
  # the paper presets' unadjusted moves report no acceptance: nothing to judge
  p <- suppressWarnings(sgais(model, control = sgais_control("paper"), seed = 1, progress = FALSE))
  p$trajectory$acceptance <- NA
  expect_silent(sgais:::warn_if_stuck(p))
})

test_that("impossible results are errors, not values", {
  model <- linear_regression(y ~ ., simulate_linear_regression(200, seed = 1), noise_sd = 1)
  a <- ais(model, seed = 1, progress = FALSE)
  a$log_evidence <- NaN
  expect_error(sgais:::check_plausible(a), "log evidence of NaN", class = "sgais_error_numerical")
  ns <- nested_sampling(model, seed = 1, progress = FALSE)
  expect_identical(sgais:::check_plausible(ns), ns)
  ns$log_evidence <- max(ns$dead[, "log_likelihood"]) + 10
  expect_error(sgais:::check_plausible(ns), "outside", class = "sgais_error_numerical")
})

test_that("steps too small to move the particles and degenerate resume states are warned of", {
  model <- linear_regression(y ~ ., data = simulate_linear_regression(1000, seed = 1), noise_sd = 1)
  # (particles that barely move stay correlated with their ancestors, which the genealogy's
  # predicted sd sees: it may warn of that too)
  muffle <- function(w) invokeRestart("muffleWarning")
  expect_warning(withCallingHandlers(sgais(model, step_size = 0.005, seed = 1, progress = FALSE),
                                     sgais_warning_unreliable = muffle),
                 "barely moved", class = "sgais_warning_small_steps")
  expect_warning(ais(model, step_size = 0.005, seed = 1, progress = FALSE),
                 "barely moved", class = "sgais_warning_small_steps")
  expect_no_warning(sgais(model, seed = 1, progress = FALSE), class = "sgais_warning_small_steps")
  fit <- quietly(sgais(linear_regression(y ~ ., data = simulate_linear_regression(600, seed = 2)[1:500, ],
                                         noise_sd = 1),
                       seed = 1, progress = FALSE))
  more <- simulate_linear_regression(600, seed = 2)[501:600, ]
  bad <- fit
  bad$state$resume[[1]]$logw[] <- -Inf
  bad$state$resume[[1]]$logw[1] <- 0
  expect_warning(sgais(bad, more, progress = FALSE), "degenerate",
                 class = "sgais_warning_degenerate_state")
  bad$state$resume[[1]]$logw[2] <- Inf
  expect_error(sgais(bad, more, progress = FALSE), "no valid log-weights",
               class = "sgais_error_invalid_state")
})

test_that("replicates predicted to take long say so at once, with progress bars only", {
  m <- linear_regression(y ~ ., simulate_linear_regression(300, seed = 1), noise_sd = 1)
  withr::local_options(sgais.long_run = 0) # every run is "long"
  # (20 particles, one move a step: the message depends on neither)
  lean <- list(particles = 20, early_particles = 20, max_rounds = 1)
  said <- NULL
  fit <- suppressMessages(withCallingHandlers(
    do.call(sgais, c(list(m, replicates = 3, seed = 1, progress = TRUE), lean)),
    sgais_message_long_run = function(m) {
      said <<- m
      invokeRestart("muffleMessage")
    }
  ))
  expect_s3_class(said, "message")
  expect_match(conditionMessage(said), "The 3 replicates will take about")
  expect_gt(said$seconds, 0)
  # progress = FALSE asks for silence; and the fit is the same either way
  quiet <- expect_silent(do.call(sgais, c(list(m, replicates = 3, seed = 1, progress = FALSE),
                                           lean)))
  expect_identical(quiet$log_evidence, fit$log_evidence)
  suppressMessages(expect_message(do.call(ais, c(list(m, replicates = 2, seed = 1,
                                                      progress = TRUE), lean[-2])),
                                  class = "sgais_message_long_run"))
  withr::local_options(sgais.long_run = Inf)
  expect_no_condition(do.call(sgais, c(list(m, replicates = 2, seed = 1, progress = TRUE), lean)),
                      class = "sgais_message_long_run")
})
