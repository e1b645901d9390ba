# A fit as an earlier version of the package saved it (format version 0): without the fields
# later versions added, each of which upgrade_fit() fills with what those versions did.
as_version_0 <- function(fit) {
  fit$format_version <- NULL
  gone <- c("kernel", "mh_bound", "mh_tolerance", "mh_batch_size", "jumps", "max_rounds",
            "max_correlation", "annealing_ess", "score_control_variate", "update",
            "first_chunk_size", "reservoir_size", "restart_threshold", "restart_every")
  fit$settings[gone] <- NULL
  if (inherits(fit, "sgais_fit")) {
    fit$state$resume <- lapply(fit$state$resume, function(r) {
      r[c("score", "restart_n", "shift_restart_n", "genealogy")] <- NULL
      r
    })
    fit$state$traces <- lapply(fit$state$traces, function(t) {
      t[c("data_fraction", "step_halvings", "jump_acceptance", "exact_fallback", "restarts",
        "shift_restarts", "genealogy_var")] <- NULL
      t
    })
  }
  if (inherits(fit, "sgais_ais_fit")) fit$annealing <- NULL
  fit
}

test_that("fits carry their format version, and older fits are upgraded in one place", {
  d <- simulate_linear_regression(700, seed = 4)
  model <- linear_regression(y ~ ., prior = "paper", data = d[1:500, ], noise_sd = 1)
  fit <- quietly(sgais(model, control = sgais_control("paper"), seed = 1, progress = FALSE))
  expect_identical(fit$format_version, sgais:::fit_format_version)
  expect_identical(sgais:::upgrade_fit(fit), fit)

  old <- as_version_0(fit)
  up <- sgais:::upgrade_fit(old)
  expect_identical(up$format_version, sgais:::fit_format_version)
  expect_identical(up$settings[c("kernel", "jumps", "max_rounds", "annealing_ess", "update",
                                 "restart_threshold", "restart_every")],
                   list(kernel = "sghmc", jumps = 0L, max_rounds = 1L,
                        annealing_ess = "incremental", update = "annealed",
                        restart_threshold = Inf, restart_every = Inf))
  expect_identical(up$settings$first_chunk_size, up$settings$chunk_size)
  expect_identical(up$state$resume[[1]]$restart_n, 0)
  expect_identical(up$state$traces[[1]]$restarts, rep(0L, nrow(fit$state$traces[[1]])))
  expect_identical(up$state$traces[[1]]$shift_restarts, rep(0L, nrow(fit$state$traces[[1]])))
  # an upgraded fit prints and continues like the fit whose settings it now states: the paper
  # preset's values are the ones the earlier versions used
  expect_output(print(old), "SGAIS")
  more <- quietly(sgais(old, d[501:700, ], progress = FALSE))
  same <- quietly(sgais(fit, d[501:700, ], progress = FALSE))
  expect_identical(more$log_evidence, same$log_evidence)
  expect_identical(more$format_version, sgais:::fit_format_version)
  # a fit saved after restarts existed keeps `restart_every` unset: chosen by the model
  robust <- quietly(sgais(model, seed = 2, progress = FALSE))
  newer <- robust
  newer$format_version <- NULL
  expect_null(sgais:::upgrade_fit(newer)$settings$restart_every)
  expect_identical(sgais:::upgrade_fit(newer)$settings$restart_threshold, 5)
})

test_that("older AIS and nested-sampling fits are upgraded too", {
  model <- linear_regression(y ~ ., prior = "paper", data = simulate_linear_regression(300, seed = 5),
                             noise_sd = 1)
  fit <- quietly(ais(model, particles = 20, seed = 1, progress = FALSE))
  old <- as_version_0(fit)
  expect_identical(sgais:::upgrade_fit(old)$annealing, "adaptive")
  expect_output(print(old), "AIS")
  ns <- quietly(nested_sampling(model, live_points = 20, seed = 1, progress = FALSE))
  ns$format_version <- NULL
  ns$settings$jumps <- NULL
  ns$settings$reference <- NULL
  expect_identical(sgais:::upgrade_fit(ns)$settings$jumps, 0L)
  expect_false(sgais:::upgrade_fit(ns)$settings$reference)
  old_ais <- fit
  old_ais$settings$reference <- NULL
  expect_false(sgais:::upgrade_settings(old_ais$settings)$reference)
  expect_output(print(ns), "Nested sampling evidence estimate")
})
