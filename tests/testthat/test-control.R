test_that("the paper presets reproduce their reference runs, bit for bit", {
  # log Z, the sum of the final particles and the gradient evaluations of runs made when the
  # random numbers moved to the keyed streams of src/rng.h (issue 12; the same runs before that
  # reproduced the package before presets existed, commit 6bf3f2c), printed with 17 significant
  # digits. Any change here changes what the paper preset computes: say why in the commit.
  lin <- linear_regression(y ~ ., prior = "paper", data = simulate_linear_regression(3000, seed = 1),
                           noise_sd = 1)
  soft <- softmax_regression(y ~ ., prior = "paper", data = simulate_softmax_regression(600, seed = 2))
  mix <- gaussian_mixture(simulate_gaussian_mixture(600, components = 3, seed = 3), components = 3)
  same <- function(fit, log_z, particle_sum, gradients) {
    expect_identical(sprintf("%.17g", fit$log_evidence), log_z)
    if (!is.null(fit$state)) expect_identical(sprintf("%.17g", sum(fit$state$particles)), particle_sum)
    expect_identical(fit$gradient_evaluations, gradients)
  }
  same(paper_sgais(lin, seed = 1), "-4297.1270035466187", "-0.88773510133674916", 3800000)
  same(paper_sgais(lin, seed = 2, resample = TRUE, chunk_size = 300, batch_size = 200),
       "-4286.2717741895485", "-1.1689103170230208", 2460000)
  same(paper_sgais(soft, seed = 3), "-408.9639179326644", "29.17740911822872", 3740000)
  same(paper_sgais(mix, seed = 4), "-3370.9073672577888", "-16.275679373924138", 10700000)
  same(paper_ais(lin, seed = 5), "-4339.9545910019078", "-1.4085466496121741", 19200000)
  same(paper_ais(mix, seed = 6, resample = TRUE), "-3438.643666819471", "4.0394041487484937",
       2400000)
  same(paper_ns(lin, seed = 7, live_points = 5), "-4263.8460856573847", NULL, 2238000)
  same(paper_ns(soft, seed = 8, live_points = 3), "-289.35477057742588", NULL, 282000)
})

test_that("the default presets reproduce their reference runs, bit for bit", {
  # Pinned before the C core was split into core and glue layers (issue 43, from commit
  # b1b562e): moving code between files must not change what the defaults compute.
  lin <- linear_regression(y ~ ., data = simulate_linear_regression(2500, seed = 11), noise_sd = 1)
  logi <- logistic_regression(am ~ wt + hp, data = mtcars)
  mix <- gaussian_mixture(simulate_gaussian_mixture(2500, components = 3, seed = 13), components = 3)
  same <- function(fit, log_z, particle_sum, gradients) {
    expect_identical(sprintf("%.17g", fit$log_evidence), log_z)
    if (!is.null(particle_sum)) {
      expect_identical(sprintf("%.17g", sum(fit$state$particles)), particle_sum)
    }
    expect_identical(fit$gradient_evaluations, gradients)
  }
  q <- function(x) suppressWarnings(x)
  # re-pinned in issue 65: the robust presets' exact moves decorrelate to max_correlation = 0.2
  # (a mixture's stay at 0.5, model_max_correlation())
  same(q(sgais(lin, seed = 1, progress = FALSE)), "-3521.0034266716889", "-327.97032063089608",
       54252000)
  same(q(sgais(logi, seed = 2, progress = FALSE)), "-11.99116345368739", "-645.72558004741268",
       387200)
  # re-pinned in issue 42: mixtures anneal from their reference distribution, and the exact
  # kernels keep the particles in their labelling region
  same(q(sgais(mix, seed = 3, progress = FALSE)), "-12829.90141145569", "-795.97257125735462",
       45733500)
  same(q(ais(logi, seed = 4, progress = FALSE)), "-11.744471698834152", "-601.68710356276131",
       396800)
  same(q(nested_sampling(lin, seed = 5, progress = FALSE)), "-3521.8139089202009", NULL, 0)
})

test_that("presets hold the documented settings", {
  paper <- sgais_control("paper")$settings
  expect_identical(paper[c("particles", "target_ess", "sghmc_steps", "min_sghmc_steps",
                           "learning_rate", "momentum_decay", "batch_size", "chunk_size",
                           "exact_until")],
                   list(particles = 10L, target_ess = 5, sghmc_steps = 20L, min_sghmc_steps = 20L,
                        learning_rate = 0.1, momentum_decay = 0.2, batch_size = 500L,
                        chunk_size = 500L, exact_until = 500L))
  expect_identical(paper$step_scale, "per_observation")
  expect_identical(paper$preconditioner, "none")
  expect_false(paper$control_variates)
  robust <- sgais_control()$settings
  expect_identical(robust$step_scale, "width")
  expect_identical(robust$integrator, "baoab")
  expect_true(robust$control_variates)
  expect_identical(robust$target_ess, 0.8 * robust$particles)
  expect_identical(robust$exact_until, 4L * robust$batch_size)
  # derived values follow the values they derive from
  expect_identical(sgais_control(particles = 40)$settings$target_ess, 32)
  expect_identical(sgais_control(batch_size = 100)$settings$chunk_size, 100L)
  expect_identical(sgais_control("paper", batch_size = 100)$settings$exact_until, 100L)
  # a per-observation step has no preconditioner
  expect_identical(sgais_control(step_scale = "per_observation")$settings$preconditioner, "none")
  expect_identical(nested_control("paper")$settings$move, "sghmc")
  expect_identical(nested_control()$settings$move, "walk")
  expect_identical(ais_control("paper")$settings$particles, 10L)
  # fewer steps than the preset's fewest lower the fewest, unless those are given too
  expect_identical(sgais_control(sghmc_steps = 3)$settings$min_sghmc_steps, 3L)
  expect_error(sgais_control(sghmc_steps = 3, min_sghmc_steps = 4), "`min_sghmc_steps` \\(4\\)")
})

test_that("settings given to an estimator replace the control's, through the same checks", {
  model <- small_model(600)
  fit <- quiet_sgais(model, particles = 12, control = sgais_control("paper"), seed = 1)
  expect_identical(fit$settings$particles, 12L)
  expect_identical(fit$settings$target_ess, 5)  # the paper's, given explicitly by the preset
  expect_identical(fit$settings$preset, "paper")
  expect_identical(nrow(fit$state$particles), 12L)
  fit <- quiet_sgais(model, particles = 12, seed = 1)
  expect_equal(fit$settings$target_ess, 0.8 * 12)
  expect_error(sgais(model, control = sgais_control(), particles = 1),
               "`particles` must be a whole number >= 2")
})

test_that("controls print and reject bad presets and settings", {
  expect_output(print(sgais_control()), "<sgais control, preset \"robust\">")
  expect_output(print(sgais_control(particles = 20)), "particles +20 +\\(set\\)")
  expect_output(print(nested_control("paper")), "live_points +2")
  expect_error(sgais_control("best"), "`preset` must be \"robust\" or \"paper\", not \"best\"")
  expect_error(sgais_control(NA), "`preset` must be")
  expect_error(ais_control(batch_size = 10), "Unknown setting `batch_size` for ais\\(\\)")
  expect_error(nested_control(particles = 10), "Unknown setting `particles`")
  expect_error(nested_control(live_points = 1), "`live_points` must be at least 2")
  expect_identical(nested_control("paper", live_points = 1)$settings$live_points, 1L)
  expect_error(nested_control(move = "slice"), "`move` must be one of \"sghmc\", \"walk\"")
  expect_error(nested_control(walk_steps = -1), "`walk_steps` must be a whole number >= 0")
  expect_error(sgais_control(integrator = "leapfrog"), "`integrator` must be one of")
  expect_error(ais(small_model(100), control = nested_control()),
               "`control` must come from `ais_control()`, not `nested_control()`.", fixed = TRUE)
  expect_error(sgais_stream(small_model(100), data.frame(y = 1, x = 1), control = sir_control()),
               "`control` must come from `sgais_control()`, not `sir_control()`.", fixed = TRUE)
  expect_error(nested_sampling(small_model(100), control = list()),
               "`control` must come from `nested_control\\(\\)`")
})

test_that("the kernels' metric is the particles' weighted covariance, and leaves the moved particle out", {
  # unbiased weighted covariance, as src/precond.c computes it
  wcov <- function(theta, logw) {
    w <- exp(logw - max(logw))
    w <- w / sum(w)
    d <- theta - drop(theta %*% w)
    (d %*% (w * t(d))) / (1 - sum(w^2))
  }
  set.seed(42)
  dim <- 3L; M <- 40L
  theta <- matrix(rnorm(dim * M), dim) + c(0, 5, -2)
  theta[2, ] <- theta[2, ] + 0.8 * theta[1, ]
  logw <- rnorm(M)
  expect_equal(precond_metric(theta, logw), wcov(theta, logw), tolerance = 1e-12)
  for (a in c(1L, 17L, M)) {
    expect_equal(precond_metric(theta, logw, leave_out = a), wcov(theta[, -a], logw[-a]),
                 tolerance = 1e-12)
  }
  # the diagonal kind keeps the variances only
  expect_equal(precond_metric(theta, logw, "diagonal", leave_out = 5L),
               diag(diag(wcov(theta[, -5L], logw[-5L]))), tolerance = 1e-12)
  # fewer than 6 particles per dimension: the diagonal, with or without the moved particle
  few <- theta[, 1:12]
  expect_equal(precond_metric(few, logw[1:12], leave_out = 3L),
               diag(diag(wcov(few[, -3L], logw[1:12][-3L]))), tolerance = 1e-12)
  # a particle that carries nearly all the weight: the others' covariance
  heavy <- logw
  heavy[9] <- 8
  expect_equal(precond_metric(theta, heavy, leave_out = 9L), wcov(theta[, -9L], heavy[-9L]),
               tolerance = 1e-8)
})

test_that("the C core's settings table agrees with the R settings schema", {
  c_table <- as.data.frame(.Call(sgais:::C_ffi_settings_table), stringsAsFactors = FALSE)
  schema <- sgais:::settings_schema
  c_name <- vapply(names(schema), function(n) schema[[n]]$c_name %||% n, character(1))
  # what R resolves itself before C sees it: the walk's lengths (as sghmc_steps) and the grid
  # of periodic restarts (as the triggers of R/restart.R, restart_triggers(), which C reads too)
  r_only <- c("walk_steps", "max_walk_steps", "restart_every")
  triggers <- c("trigger_after", "trigger_due", "trigger_on_reference")
  expect_setequal(c_table$name, c(c_name[setdiff(names(schema), r_only)], triggers))
  expect_setequal(names(sgais:::restart_never(list())),
                  c("restart_threshold", "restart_ess", triggers))
  for (i in seq_len(nrow(c_table))) {
    row <- c_table[i, ]
    if (row$name %in% triggers) next
    spec <- schema[[names(c_name)[c_name == row$name]]]
    what <- paste(row$name, spec$kind)
    switch(spec$kind,
      count = {
        expect_true(row$type %in% c("i", "d"), label = what)
        expect_identical(row$lower, as.double(spec$lower), label = what)
      },
      choice = {
        expect_identical(row$type, "c", label = what)
        expect_identical(c(row$lower, row$upper), as.double(range(spec$codes)), label = what)
      },
      flag = expect_identical(c(row$type, row$lower, row$upper), c("c", "0", "1"), label = what),
      positive = expect_identical(list(row$type, row$lower, row$upper, row$open_lower),
                                  list("d", 0, Inf, TRUE), label = what),
      fraction = expect_identical(list(row$type, row$lower, row$upper, row$open_lower,
                                       row$open_upper),
                                  list("d", spec$lower, spec$upper, TRUE, FALSE), label = what),
      open = expect_identical(list(row$type, row$lower, row$upper, row$open_lower,
                                   row$open_upper),
                              list("d", spec$lower, spec$upper, TRUE, TRUE), label = what),
      custom = expect_true(is.function(spec$check), label = what)
    )
  }
})

test_that("misspelled and repeated arguments are errors, and edits of a control take effect", {
  model <- small_model(300)
  fit <- quiet_sgais(model, seed = 1)
  expect_error(posterior_samples(fit, 10, sed = 1), "`sed` \\(did you mean `seed`\\?\\)",
               class = "sgais_error_argument")
  expect_error(confint(fit, levl = 0.5), "`levl` \\(did you mean `level`\\?\\)",
               class = "sgais_error_argument")
  expect_error(predictive_density(fit, model$data, 3), "an unnamed argument",
               class = "sgais_error_argument")
  expect_error(sgais(model, particles = 10, particles = 20, progress = FALSE),
               "`particles` given more than once", class = "sgais_error_argument")
  expect_error(sgais_control(jumps = 1, jumps = 2), "`jumps` given more than once",
               class = "sgais_error_argument")
  control <- sgais_control()
  control$particles <- 60
  expect_identical(control$settings$particles, 60L)
  expect_identical(control$settings$target_ess, 48)
  control[["particles"]] <- NULL # back to the preset's value
  expect_identical(control$settings$particles, 50L)
  expect_error(control$particles <- 1, "`particles` must be a whole number >= 2")
  expect_error(control$settings$particles <- 500, "`settings` is not a setting of sgais",
               class = "sgais_error_argument")
  expect_error(control$partcles <- 5, "`partcles` is not a setting", class = "sgais_error_argument")
  nested <- nested_control()
  nested$live_points <- 30
  expect_identical(nested$settings$live_points, 30L)
})

test_that("a preset is one preset", {
  for (maker in list(sgais_control, ais_control, nested_control, online_nested_control,
                     sir_control, sequential_control)) {
    expect_error(maker(c("robust", "paper")), "`preset`", class = "sgais_error")
    expect_identical(maker()$preset, "robust")
  }
})

test_that("the work guard's lower bound lets paper-size runs with the defaults through", {
  big <- list(n = 1e6, dim = 10)
  for (method in c("sgais", "sir", "sequential", "ais", "nested_sampling",
                   "online_nested_sampling")) {
    s <- get(sgais:::control_makers[[method]])()$settings
    s$max_walk_steps <- s$max_walk_steps %||% 1000L
    expect_lt(10 * sgais:::run_work(s, big, method), getOption("sgais.max_work", 1e12))
  }
})

test_that("requests that could not finish or fit in memory are refused before any work", {
  model <- small_model(200)
  fit <- quiet_sgais(model, seed = 1)
  expect_error(sgais(model, replicates = 1e6, progress = FALSE),
               "1,000,000 replicates of 100 particles in 6 dimensions would need 23.8 GB",
               class = "sgais_error_too_large")
  expect_error(ais(model, replicates = 1e6, progress = FALSE), class = "sgais_error_too_large")
  expect_error(posterior_samples(fit, 1e9), "would need 44.7 GB", class = "sgais_error_too_large")
  withr::with_options(list(sgais.max_memory = 1000),
                      expect_error(posterior_samples(fit, 100), "more than the 1e\\+03 bytes allowed",
                                   class = "sgais_error_too_large"))
  expect_error(sgais(model, sghmc_steps = 1e7, progress = FALSE), "at most 10,000",
               class = "sgais_error_too_large")
  expect_error(nested_sampling(model, tolerance = 1e-300, progress = FALSE),
               "must be at least 1e-12", class = "sgais_error_argument")
  # work: every setting that multiplies it, against options(sgais.max_work =)
  expect_error(nested_sampling(model, walk_steps = 1e8, progress = FALSE),
               "would take at least .* evaluations .*\\(about .*sgais.max_work",
               class = "sgais_error_too_large")
  expect_error(online_nested_sampling(model, walk_steps = 1e8, progress = FALSE),
               "sgais.max_work", class = "sgais_error_too_large")
  expect_error(ais(model, particles = 1e6, sghmc_steps = 1e4, progress = FALSE), "sgais.max_work",
               class = "sgais_error_too_large")
  expect_error(sgais(model, particles = 1e6, early_particles = 1e6, sghmc_steps = 1e4,
                     min_sghmc_steps = 1e4, progress = FALSE), "sgais.max_work",
               class = "sgais_error_too_large")
  expect_error(sgais_stream(model, simulate_linear_regression(10, seed = 1), replicates = 1e6,
                            progress = FALSE), "would need", class = "sgais_error_too_large")
  withr::with_options(list(sgais.max_work = 1e4), {
    expect_error(nested_sampling(model, progress = FALSE), "more than the 10,000 allowed",
                 class = "sgais_error_too_large")
    expect_error(importance_sampling(model, progress = FALSE), "sgais.max_work",
                 class = "sgais_error_too_large")
  })
  wide <- gaussian_mixture(matrix(stats::rnorm(2000), 2, 1000), components = 1)
  expect_error(sgais(wide, progress = FALSE), "use `preconditioner = \"diagonal\"`",
               class = "sgais_error_too_large")
})
