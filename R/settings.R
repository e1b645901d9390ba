# The settings schema: one table of every estimator setting, its type and range, the methods it
# applies to, its code for the C core and what a NULL value means. It drives the checks of the
# control objects (resolve_settings()), the encoding of the settings passed to C (c_settings())
# and, through test-control.R, is compared with the C core's own table (src/ffi.c,
# settings_table), so that the two cannot drift apart. The defaults per preset are in
# control_presets (R/control.R).
#
# Kinds: "count" (a whole number >= lower), "positive" (a positive finite number), "fraction"
# (a number in (lower, upper]), "open" (a number in (lower, upper)), "choice" (one of
# names(codes); C reads the code), "flag" (TRUE or FALSE; C reads 0 or 1) and "custom" (its own
# `check`, given the settings resolved so far). `null`: a function of the settings resolved so
# far giving the value of a NULL setting, or NULL when NULL stays NULL (the estimator chooses).
# `after`: a check of the setting against those resolved before it. `c_name`: the name C reads
# it by, when not its own. Settings are resolved in the table's order.
setting <- function(kind, methods, lower = NULL, upper = NULL, codes = NULL, null = NULL,
                    check = NULL, after = NULL, c_name = NULL, nullable = !is.null(null)) {
  list(kind = kind, methods = methods, lower = lower, upper = upper, codes = codes, null = null,
       check = check, after = after, c_name = c_name, nullable = nullable)
}

# The methods each group of settings applies to.
all_methods <- c("sgais", "sir", "sequential", "ais", "nested_sampling")
annealing_methods <- c("sgais", "sir", "sequential", "ais")
sgais_methods <- c("sgais", "sir", "sequential")

settings_schema <- list(
  step_scale = setting("choice", all_methods, codes = c(per_observation = 0L, width = 1L)),
  preconditioner = setting(
    "choice", all_methods, codes = c(none = 0L, diagonal = 1L, dense = 2L),
    # a per-observation step has no preconditioner
    after = function(s, call) {
      if (s$step_scale == "per_observation") s$preconditioner <- "none"
      s
    }
  ),
  integrator = setting("choice", all_methods, codes = c(euler = 0L, baoab = 1L)),
  sghmc_steps = setting("count", all_methods, lower = 0),
  min_sghmc_steps = setting(
    "count", all_methods, lower = 0, null = function(s) s$sghmc_steps,
    after = function(s, call) {
      if (s$min_sghmc_steps > s$sghmc_steps) {
        abort(sprintf("`min_sghmc_steps` (%d) must not exceed `sghmc_steps` (%d).",
                      s$min_sghmc_steps, s$sghmc_steps), call)
      }
      s
    }
  ),
  learning_rate = setting("positive", all_methods),
  step_size = setting("positive", all_methods),
  momentum_decay = setting("fraction", all_methods, lower = 0, upper = 1),
  jumps = setting("count", all_methods, lower = 0),

  live_points = setting("count", "nested_sampling", lower = 1),
  move = setting("choice", "nested_sampling", codes = c(sghmc = 0L, walk = 1L)),
  # NULL: as many as travel a fixed distance (src/nested_sampling.c, walk_length()), at least 25
  # and at most max_walk_steps; NULL there is 100 per parameter, set by nested_sampling()
  walk_steps = setting("count", "nested_sampling", lower = 0, nullable = TRUE),
  max_walk_steps = setting(
    "count", "nested_sampling", lower = 25, nullable = TRUE,
    after = function(s, call) {
      if (s$step_scale == "width" && s$live_points < 2) {
        abort("`live_points` must be at least 2 with `step_scale = \"width\"`: the step is scaled to the live points' spread.", call)
      }
      s
    }
  ),
  tolerance = setting("positive", "nested_sampling"),
  max_iterations = setting("count", "nested_sampling", lower = 1),

  max_rounds = setting("count", annealing_methods, lower = 1),
  max_correlation = setting("fraction", annealing_methods, lower = 0, upper = 1),
  kernel = setting("choice", annealing_methods,
                   codes = c(sghmc = 0L, sgld = 1L, austerity = 2L, confidence = 3L, flymc = 4L)),
  mh_tolerance = setting("open", annealing_methods, lower = 0, upper = 1),
  mh_batch_size = setting("count", annealing_methods, lower = 2),
  mh_bound = setting(
    "choice", annealing_methods, codes = c(bernstein = 0L, hoeffding = 1L),
    after = function(s, call) {
      if (s$kernel %in% random_walk_kernels && s$step_scale != "width") {
        abort(sprintf(paste(
          "`kernel = \"%s\"` needs `step_scale = \"width\"`: its random-walk proposals are scaled",
          "to the particles' spread."), s$kernel), call)
      }
      s
    }
  ),
  particles = setting("count", annealing_methods, lower = 2),
  # NULL: 0.8 of the particles (robust presets; inst/design.md). Strictly below the particles:
  # an annealing step is the largest that keeps the weights' ESS at target_ess, and with
  # target_ess = particles only a step of zero does, so it never finishes
  target_ess = setting("custom", annealing_methods, null = function(s) 0.8 * s$particles,
                       check = function(x, s, call) check_target_ess(x, s$particles, call)),
  annealing_ess = setting("choice", annealing_methods,
                          codes = c(conditional = 1L, incremental = 0L),
                          c_name = "conditional_ess"),
  resample = setting("custom", annealing_methods, c_name = "resample_ess",
                     check = function(x, s, call) check_resample(x, call)),

  batch_size = setting("count", sgais_methods, lower = 1),
  chunk_size = setting("count", sgais_methods, lower = 1, null = function(s) s$batch_size),
  first_chunk_size = setting("count", sgais_methods, lower = 1,
                             null = function(s) s$chunk_size),
  update = setting(
    "choice", sgais_methods, codes = c(annealed = 0L, importance = 1L, averaged = 2L),
    after = function(s, call) {
      if (s$update == "averaged" && s$resample > 0) {
        abort(paste("`resample` must be FALSE with `update = \"averaged\"`: the sequential",
                    "estimator averages the weights after every chunk, so they never degenerate."),
              call)
      }
      s
    }
  ),
  control_variates = setting("flag", sgais_methods),
  score_control_variate = setting("flag", sgais_methods),
  exact_until = setting("count", sgais_methods, lower = 0, null = function(s) {
    if (s$step_scale == "per_observation") s$batch_size else 4L * s$batch_size
  }),
  early_particles = setting(
    "count", sgais_methods, lower = 2, null = function(s) s$particles,
    after = function(s, call) {
      if (s$early_particles < s$particles) {
        abort(sprintf("`early_particles` (%d) must be at least `particles` (%d).",
                      s$early_particles, s$particles), call)
      }
      s
    }
  ),
  reservoir_size = setting("custom", sgais_methods, check = function(x, s, call) {
    check_reservoir_size(x, s$exact_until, call)
  }),
  restart_threshold = setting("custom", sgais_methods, check = function(x, s, call) {
    check_restart_threshold(x, s$update, call)
  }),
  # NULL: by the model (2 for models with jump proposals, else Inf; sgais_advance())
  restart_every = setting("custom", sgais_methods, nullable = TRUE,
                          check = function(x, s, call) check_restart_every(x, s$update, call))
)

# The codes C reads for a choice setting.
setting_codes <- function(name) settings_schema[[name]]$codes

# One setting's value checked by its kind; `s` holds the settings resolved before it.
check_setting <- function(name, x, s, call) {
  spec <- settings_schema[[name]]
  switch(spec$kind,
    count = check_whole_number(x, name, spec$lower, call),
    positive = check_positive(x, name, call),
    fraction = check_half_open(x, name, spec$lower, spec$upper, call),
    open = check_open_interval(x, name, spec$lower, spec$upper, call),
    choice = check_choice(x, name, names(spec$codes), call),
    flag = check_flag(x, name, call),
    custom = spec$check(x, s, call)
  )
}

# Checks every value of `method`'s settings `v` (a preset's defaults with the user's values) in
# the schema's order and fills in the values of NULL settings; returns the list the estimators
# and, through c_settings(), the C core read.
resolve_settings <- function(method, v, call) {
  s <- list()
  for (name in names(settings_schema)) {
    spec <- settings_schema[[name]]
    if (!method %in% spec$methods) next
    x <- v[[name]]
    if (is.null(x) && spec$nullable) {
      if (!is.null(spec$null)) s[[name]] <- spec$null(s)
    } else {
      s[[name]] <- check_setting(name, x, s, call)
    }
    if (!is.null(spec$after)) s <- spec$after(s, call)
  }
  s
}

# The schema's settings as C reads them: choices as their codes (under their C names), flags as
# 0 or 1; the other values as they are.
encode_settings <- function(settings) {
  for (name in intersect(names(settings_schema), names(settings))) {
    spec <- settings_schema[[name]]
    to <- spec$c_name %||% name
    if (spec$kind == "choice") settings[[to]] <- spec$codes[[settings[[name]]]]
    else if (spec$kind == "flag") settings[[to]] <- as.integer(settings[[name]])
    else if (!is.null(spec$c_name)) settings[[to]] <- settings[[name]]
  }
  settings
}
