# The settings schema: one table of every estimator setting, its type and range, the methods it
# applies to, its code for the C core, what a NULL value means and its default in each preset.
# It drives the checks of the control objects (resolve_settings()), the encoding of the settings
# passed to C (encode_settings(), through c_settings()) and the presets (control_presets, built
# from it below); test-control.R compares it with the C core's own table (src/ffi.c, read by
# sg_settings_read() and exported by ffi_settings_table()), so that the two cannot drift apart.
#
# Kinds: "count" (a whole number >= lower), "positive" (a positive finite number), "fraction"
# (a number in (lower, upper]), "open" (a number in (lower, upper)), "choice" (one of
# names(codes); C reads the code), "flag" (TRUE or FALSE; C reads 0 or 1) and "custom" (its own
# `check`, given the settings resolved so far). `null`: a function of the settings resolved so
# far giving the value of a NULL setting, or NULL when NULL stays NULL (the estimator chooses).
# `after`: a check of the setting against those resolved before it. `c_name`: the name C reads
# it by, when not its own. `defaults`: its value in each preset (preset()), from which
# control_presets is built. Settings are resolved in the table's order.
setting <- function(kind, methods, defaults, lower = NULL, upper = NULL, codes = NULL,
                    null = NULL, check = NULL, after = NULL, c_name = NULL,
                    nullable = !is.null(null)) {
  list(kind = kind, methods = methods, defaults = defaults, lower = lower, upper = upper,
       codes = codes, null = null, check = check, after = after, c_name = c_name,
       nullable = nullable)
}

# A setting's defaults: its value in the "paper" and "robust" presets (NULL: the null rule
# decides), with per-method exceptions, e.g. `ais = list(robust = 100)`. `presets`: the methods
# whose presets offer the setting to users (all it applies to, unless given).
preset <- function(paper, robust, ..., presets = NULL) {
  list(paper = list(paper), robust = list(robust), by_method = list(...), presets = presets)
}

# The most steps per move (sghmc_steps).
max_moves <- 10000L

# The methods each group of settings applies to.
all_methods <- c("sgais", "sir", "sequential", "ais", "nested_sampling",
                 "online_nested_sampling")
ns_methods <- c("nested_sampling", "online_nested_sampling")
annealing_methods <- c("sgais", "sir", "sequential", "ais")
sgais_methods <- c("sgais", "sir", "sequential")

settings_schema <- c(list(
  step_scale = setting("choice", all_methods, preset("per_observation", "width"),
                       codes = c(per_observation = 0L, width = 1L)),
  preconditioner = setting(
    "choice", all_methods, preset("none", "dense"),
    codes = c(none = 0L, diagonal = 1L, dense = 2L),
    # a per-observation step has no preconditioner
    after = function(s, call) {
      if (s$step_scale == "per_observation") s$preconditioner <- "none"
      s
    }
  ),
  integrator = setting("choice", all_methods,
                       preset("euler", "baoab", nested_sampling = list(robust = "euler")),
                       codes = c(euler = 0L, baoab = 1L)),
  sghmc_steps = setting(
    "count", all_methods, preset(20, 20), lower = 0,
    # a move's steps run for every particle at every annealing step: beyond this a run would
    # not end in any useful time
    after = function(s, call) {
      if (s$sghmc_steps > max_moves) {
        abort(sprintf(paste("`sghmc_steps` (%s) must be at most %s: every particle takes that many",
                            "steps at every annealing step."), format_count(s$sghmc_steps),
                      format_count(max_moves)), call, "sgais_error_too_large")
      }
      s
    }
  ),
  min_sghmc_steps = setting(
    "count", all_methods, preset(NULL, 5, ais = list(robust = NULL), presets = annealing_methods),
    lower = 0, null = function(s) s$sghmc_steps,
    after = function(s, call) {
      if (s$min_sghmc_steps > s$sghmc_steps) {
        abort(sprintf("`min_sghmc_steps` (%d) must not exceed `sghmc_steps` (%d).",
                      s$min_sghmc_steps, s$sghmc_steps), call)
      }
      s
    }
  ),
  learning_rate = setting("positive", all_methods,
                          preset(0.1, 0.1, nested_sampling = list(paper = 1e-3, robust = 1e-3))),
  step_size = setting("positive", all_methods, preset(0.1, 0.3)),
  momentum_decay = setting("fraction", all_methods,
                           preset(0.2, 0.6, nested_sampling = list(paper = 0.1, robust = 0.1)),
                           lower = 0, upper = 1),
  jumps = setting("count", all_methods, preset(0, 10, nested_sampling = list(robust = 80)),
                  lower = 0),

  live_points = setting("count", ns_methods, preset(2, 100), lower = 1),
  move = setting("choice", ns_methods, preset("sghmc", "walk"),
                 codes = c(sghmc = 0L, walk = 1L)),
  # NULL: as many as travel a fixed distance (src/nested_sampling.c, walk_length()), at least 25
  # and at most max_walk_steps; NULL there is 100 per parameter, set by nested_sampling()
  walk_steps = setting("count", ns_methods, preset(NULL, NULL), lower = 0, nullable = TRUE),
  max_walk_steps = setting(
    "count", ns_methods, preset(NULL, NULL), lower = 25, nullable = TRUE,
    after = function(s, call) {
      if (s$step_scale == "width" && s$live_points < 2) {
        abort(paste("`live_points` must be at least 2 with `step_scale = \"width\"`: the step is",
                    "scaled to the live points' spread."), call)
      }
      s
    }
  ),
  # below 1e-12 of Z-hat the live points' share changes log Z-hat by less than rounding, and a
  # run would go on to max_iterations
  tolerance = setting("positive", ns_methods, preset(0.01, 0.01), after = function(s, call) {
    if (s$tolerance < 1e-12) {
      abort(sprintf(paste("`tolerance` (%g) must be at least 1e-12: below that the live points'",
                          "share of the evidence is lost in rounding, and the run would only",
                          "stop at `max_iterations`."), s$tolerance), call, "sgais_error_argument")
    }
    s
  }),
  max_iterations = setting("count", ns_methods, preset(1e6, 1e6), lower = 1),

  max_rounds = setting("count", annealing_methods, preset(1, 4), lower = 1),
  max_correlation = setting("fraction", annealing_methods, preset(1, 0.2), lower = 0, upper = 1),
  kernel = setting("choice", annealing_methods, preset("sghmc", "sghmc"),
                   codes = c(sghmc = 0L, sgld = 1L, austerity = 2L, confidence = 3L, flymc = 4L)),
  mh_tolerance = setting("open", annealing_methods, preset(0.05, 0.05), lower = 0, upper = 1),
  mh_batch_size = setting("count", annealing_methods, preset(100, 100), lower = 2),
  mh_bound = setting(
    "choice", annealing_methods, preset("bernstein", "bernstein"),
    codes = c(bernstein = 0L, hoeffding = 1L),
    after = function(s, call) {
      if (s$kernel %in% random_walk_kernels && s$step_scale != "width") {
        abort(sprintf(paste(
          "`kernel = \"%s\"` needs `step_scale = \"width\"`: its random-walk proposals are scaled",
          "to the particles' spread."), s$kernel), call)
      }
      s
    }
  ),
  particles = setting("count", annealing_methods, preset(10, 50, ais = list(robust = 100)),
                      lower = 2),
  # NULL: 0.8 of the particles (robust presets; inst/design.md). Strictly below the particles:
  # an annealing step is the largest that keeps the weights' ESS at target_ess, and with
  # target_ess = particles only a step of zero does, so it never finishes
  target_ess = setting("custom", annealing_methods, preset(5, NULL),
                       null = function(s) 0.8 * s$particles,
                       check = function(x, s, call) check_target_ess(x, s$particles, call)),
  annealing_ess = setting("choice", annealing_methods, preset("incremental", "conditional"),
                          codes = c(conditional = 1L, incremental = 0L),
                          c_name = "conditional_ess"),
  resample = setting("custom", annealing_methods, preset(FALSE, 0.5), c_name = "resample_ess",
                     check = function(x, s, call) check_resample(x, call)),

  batch_size = setting("count", c(sgais_methods, "online_nested_sampling"), preset(500, 500),
                       lower = 1),
  # NULL: a mini-batch; online nested sampling's NULL stays NULL (a tenth of the data,
  # online_nested_sampling())
  chunk_size = setting("count", c(sgais_methods, "online_nested_sampling"), preset(NULL, NULL),
                       lower = 1, null = function(s) if (is.null(s$live_points)) s$batch_size,
                       nullable = TRUE),
  first_chunk_size = setting("count", sgais_methods, preset(NULL, NULL), lower = 1,
                             null = function(s) s$chunk_size),
  update = setting(
    "choice", sgais_methods, preset("annealed", "annealed"),
    codes = c(annealed = 0L, importance = 1L, averaged = 2L),
    after = function(s, call) {
      if (s$update == "averaged" && s$resample > 0) {
        abort(paste("`resample` must be FALSE with `update = \"averaged\"`: the sequential",
                    "estimator averages the weights after every chunk, so they never degenerate."),
              call)
      }
      s
    }
  ),
  # (SIR, the sequential estimator) a chunk whose one step would leave an ESS below this
  # fraction of the particles is taken in blocks of observations (src/sgais.c, split_step());
  # 0: never, as published
  split_ess = setting("custom", sgais_methods, preset(0, 0), check = function(x, s, call) {
    check_step_ess(x, "split_ess", s$update, call)
  }),
  control_variates = setting("flag", sgais_methods, preset(FALSE, TRUE)),
  reference = setting("flag", all_methods, preset(FALSE, TRUE)),
  score_control_variate = setting("flag", sgais_methods, preset(FALSE, TRUE)),
  exact_until = setting("count", sgais_methods, preset(NULL, NULL), lower = 0, null = function(s) {
    if (s$step_scale == "per_observation") s$batch_size else 4L * s$batch_size
  }),
  early_particles = setting(
    "count", sgais_methods, preset(NULL, 100), lower = 2, null = function(s) s$particles,
    after = function(s, call) {
      if (s$early_particles < s$particles) {
        abort(sprintf("`early_particles` (%d) must be at least `particles` (%d).",
                      s$early_particles, s$particles), call)
      }
      s
    }
  ),
  reservoir_size = setting("custom", sgais_methods, preset(Inf, Inf), check = function(x, s, call) {
    check_reservoir_size(x, s$exact_until, call)
  })
), restart_settings())

# The presets of sgais(), ais() and nested_sampling(), from the schema's defaults: for each method
# and preset, every setting its presets offer with its value there. "paper" is the paper's
# Section 6.1 (and Appendix A) exactly; "robust" moves in units of the target's width, with
# control-variate gradients, an exact early phase and adaptive resampling (inst/design.md).
presets_of <- function(method, which) {
  out <- list()
  for (name in names(settings_schema)) {
    d <- settings_schema[[name]]$defaults
    offered <- if (is.null(d$presets)) settings_schema[[name]]$methods else d$presets
    if (!method %in% offered) next
    # online nested sampling takes nested sampling's exceptions
    own <- d$by_method[[if (method == "online_nested_sampling") "nested_sampling" else method]]
    out[name] <- if (which %in% names(own)) own[which] else d[[which]]
  }
  out
}
control_presets <- lapply(c(sgais = "sgais", ais = "ais", nested_sampling = "nested_sampling",
                            online_nested_sampling = "online_nested_sampling"),
                          function(m) list(paper = presets_of(m, "paper"),
                                           robust = presets_of(m, "robust")))

# The estimators that share SGAIS's sampler (src/sgais.c) with another `update`: SIR with data
# tempering (thesis Alg. 7) and the sequential SG-MCMC estimator (thesis Section 4.1). "paper"
# is the thesis's version: Alg. 7 literally (one observation at a time, resampled every time,
# moved by Metropolis-adjusted HMC on the exact potential: its cost grows as N^2), and the
# estimator of Cameron et al. (2019a) with the paper's SGHMC and their chunk schedule (20
# observations, growing by 20 up to 500). "robust" takes the robust SGAIS moves and chunks of 1,
# 2, 3, ... observations up to 500 (about sqrt(2 n) at n observations, so that a chunk's share of
# the information shrinks as n grows; inst/design.md, "Measurements behind the defaults"); SIR's
# splits a chunk whose one step would leave an ESS below half the particles, where it resamples:
# data in an order that moves the posterior far within a chunk (inst/design.md, "Related
# estimators"). Such steps lose more of log Z than annealing steps held at 0.8 of the particles,
# and the loss shrinks as 1 / particles: hence SIR's 100 (inst/design.md, "SIR's particles").
# Each is SGAIS's preset `base` with `changes`, then the schema's exceptions for the method
# (preset()'s `...`).
sampler_preset <- function(method, which, base, changes) {
  own <- list()
  for (name in names(settings_schema)) {
    d <- settings_schema[[name]]$defaults$by_method[[method]]
    if (which %in% names(d)) own[name] <- d[which]
  }
  utils::modifyList(utils::modifyList(control_presets$sgais[[base]], changes), own)
}
control_presets$sir <- list(
  paper = sampler_preset("sir", "paper", "robust", list(
    particles = 10, early_particles = NULL, update = "importance", resample = TRUE,
    chunk_size = 1, batch_size = 1, exact_until = .Machine$integer.max, control_variates = FALSE,
    score_control_variate = FALSE, jumps = 0, reference = FALSE
  )),
  robust = sampler_preset("sir", "robust", "robust", list(
    update = "importance", first_chunk_size = 1, reference = FALSE,
    split_ess = 0.5, particles = 100
  ))
)
control_presets$sequential <- list(
  paper = sampler_preset("sequential", "paper", "paper", list(
    update = "averaged", chunk_size = 500, first_chunk_size = 20
  )),
  robust = sampler_preset("sequential", "robust", "robust", list(
    update = "averaged", resample = FALSE, first_chunk_size = 1, reference = FALSE
  ))
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
