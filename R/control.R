# Tuning of the estimators: the control objects of sgais(), ais(), nested_sampling(), sir() and
# sequential_sgmcmc(). A control object holds the preset, the values the user gave and the
# resolved settings, which the C core reads by name through its settings table (src/ffi.c).
# The settings themselves (types, ranges, codes, defaults per preset, derived values) are one
# table, settings_schema (R/settings.R), from which control_presets is built.

# The function that makes `method`'s control: a preset, and settings by name.
control_maker <- function(method) {
  force(method)
  function(preset = c("robust", "paper"), ...) {
    # the default lists the choices; a preset given is one of them
    if (missing(preset)) preset <- preset[1L]
    new_control(method, preset, list(...), sys.call())
  }
}

#' Tuning of the estimators: presets and settings
#'
#' `sgais_control()`, `ais_control()`, `nested_control()`, `online_nested_control()`,
#' `sir_control()` and `sequential_control()` hold the tuning of [sgais()], [ais()],
#' [nested_sampling()], [online_nested_sampling()], [sir()] and [sequential_sgmcmc()]. Start
#' from a preset and change settings by name; `print()` the result to see every resolved setting.
#' `control$particles <- 500` changes a setting of a control through the same checks (`NULL`
#' restores the preset's value); a setting given twice is an error.
#'
#' \describe{
#'   \item{`"robust"` (the default)}{accurate off the paper's simulated model: use it for
#'     evidence you rely on. Moves are in target widths, Metropolis-adjusted where the
#'     potential is exact; SGAIS adds control-variate gradients and an exact early phase;
#'     particles are resampled when their ESS falls; mixtures get jump proposals between
#'     modes; an online run restarts after a shift; nested sampling walks within the contour.
#'     Moves that spread the particles over 4 times are redone on all the data, or with half the
#'     step (with a warning) if only a reservoir is held.}
#'   \item{`"paper"`}{Cameron, Eggers and Kroon (2019), Algorithm 1 and their reference AIS and
#'     nested sampling with their Section 6.1 settings: use it to reproduce the paper. Its
#'     mini-batch noise heats the particles, so log Z comes out low by about
#'     \eqn{N p \cdot lr / (4 \alpha |B| \sigma^2)}{N p lr / (4 alpha |B| sigma^2)} nats (p
#'     parameters, noise variance \eqn{\sigma^2}{sigma^2}).}
#' }
#' Measurements: `vignette("validation")`; reasons for each default:
#' `system.file("design.md", package = "sgais")`.
#'
#' @section Kernels:
#' `kernel` chooses how the particles of SGAIS, AIS, SIR and the sequential estimator move:
#' \describe{
#'   \item{`"sghmc"`}{stochastic gradient HMC (paper eq. 3), Metropolis-adjusted where the
#'     potential is exact in the robust presets.}
#'   \item{`"sgld"`}{stochastic gradient Langevin dynamics (Welling and Teh 2011). Unadjusted it
#'     heats the particles: for comparing kernels, not for evidence you rely on.}
#'   \item{`"austerity"`, `"confidence"`}{random-walk Metropolis-Hastings whose test reads a
#'     growing subset of the data: until a t-test settles it at level `mh_tolerance`
#'     (Korattikara, Chen and Welling 2014; approximate), or by the confidence sampler's bound,
#'     exact with probability 1 - `mh_tolerance` (Bardenet, Doucet and Holmes 2014; logistic,
#'     softmax and known-noise linear regression).}
#'   \item{`"flymc"`}{Firefly Monte Carlo (Maclaurin and Adams 2014), exact; for logistic and
#'     softmax regression.}
#' }
#' Other models give an error of class `sgais_error_kernel`. `data_fraction` is the fraction of
#' the data the MH kernels read.
#'
#' @param preset `"robust"` (the default) or `"paper"`.
#' @param ... Settings that replace the preset's, by name. Defaults are given as robust / paper.
#'   \describe{
#'   \item{`particles`}{number of particles M, at least 2 (SGAIS 50 / 10; AIS and SIR 100 / 10);}
#'   \item{`target_ess`}{the ESS each annealing step keeps, in (1, `particles`) (`NULL`: 0.8
#'     `particles` / 5);}
#'   \item{`annealing_ess`}{`"conditional"` (Zhou, Johansen and Aston 2016) / `"incremental"`;}
#'   \item{`resample`}{`FALSE`, `TRUE` (always) or a fraction of `particles` the weight ESS
#'     must fall below (0.5 / `FALSE`);}
#'   \item{`sghmc_steps`, `min_sghmc_steps`}{most and fewest steps per move (20; 5 in robust
#'     SGAIS, else `NULL`: the most);}
#'   \item{`max_rounds`, `max_correlation`}{exact moves, and a mixture's mini-batch moves within
#'     its clusters, are repeated, up to `max_rounds`, while
#'     the particles correlate with their start by more than `max_correlation` (4, 0.2 / 1, 1; a
#'     mixture 0.5, and once, with `max_rounds` times the `jumps` or data augmentation as
#'     [gaussian_mixture()] says, while it has more components than clusters);}
#'   \item{`step_scale`, `step_size`, `learning_rate`}{`"width"`, steps of `step_size` (0.3)
#'     target widths / `"per_observation"`, the paper's `learning_rate` / n (0.1; nested
#'     sampling `learning_rate`, 1e-3);}
#'   \item{`momentum_decay`, `preconditioner`}{SGHMC friction in (0, 1] (0.6 / 0.2; nested
#'     sampling 0.1); `"dense"`, `"diagonal"` or `"none"` (`"dense"` / `"none"`);}
#'   \item{`integrator`}{`"baoab"` / `"euler"`, the paper's (nested sampling `"euler"`);}
#'   \item{`batch_size`, `chunk_size`}{(SGAIS, online nested sampling) mini-batch size (500) and
#'     observations per chunk (`NULL`: `batch_size`; online nested sampling a tenth of the data);}
#'   \item{`control_variates`, `score_control_variate`}{(SGAIS) control-variate mini-batch
#'     gradients, and the score control variate on each evidence increment (`TRUE` / `FALSE`);}
#'   \item{`exact_until`, `early_particles`}{(SGAIS) exact gradients, with `early_particles`
#'     particles, up to `exact_until` earlier observations (`NULL`: 4 / 1 `batch_size`; 100,
#'     [sir()] 400 if it never restarts / `particles`);}
#'   \item{`jumps`}{independence Metropolis-Hastings jumps between modes after each exact move,
#'     for models that have them, such as mixtures (10, nested sampling 80 / 0);}
#'   \item{`reference`}{start from a reference distribution built from the data instead of the
#'     prior, for models that have one (mixtures of 2 to 12 components whose data show no more
#'     clusters than components, and clusters that barely overlap): AIS and SGAIS anneal from it
#'     where they would from the prior,
#'     nested sampling takes it as its prior with the likelihood reweighted to leave the
#'     evidence unchanged (`TRUE` / `FALSE`; `inst/design.md`, "Mixtures");}
#'   \item{`restart_threshold`, `restart_every`, `restart_ess`}{when an online run starts
#'     again from all the data so far: after a shift, on a grid, after a poor step; their
#'     defaults by preset, estimator and model are on [restarts];}
#'   \item{`reservoir_size`}{(SGAIS) mini-batches from a sample of this many (`Inf`; [sgais()]);}
#'   \item{`update`, `first_chunk_size`}{(set by [sir_control()], [sequential_control()])
#'     `"annealed"`, `"importance"` or `"averaged"`; chunks of 1, 2, ... `first_chunk_size` up
#'     to `chunk_size` (`NULL`: `chunk_size` throughout); `split_ess`: a chunk whose one step
#'     would leave a lower ESS fraction enters in blocks ([sir()]; 0: never, for SGAIS always);}
#'   \item{`kernel`, `mh_tolerance`, `mh_batch_size`, `mh_bound`}{see "Kernels" (`"sghmc"`);
#'     the MH test's level (0.05), first subset (100) and `"bernstein"` or `"hoeffding"` bound;}
#'   \item{`live_points`, `tolerance`, `max_iterations`}{(nested sampling, online too) live
#'     points (100 / 2), remaining evidence fraction to stop at (0.01), most iterations (1e6);}
#'   \item{`move`, `walk_steps`, `max_walk_steps`}{(nested sampling) `"walk"` in the contour /
#'     `"sghmc"`, the paper's; proposals per walk (`NULL`: adapted) and their cap (`NULL`: 100
#'     per parameter, at least 250).}
#'   }
#' @return A list of class `sgais_control`: `method`, `preset`, the values given and the
#'   resolved `settings`.
#' @seealso [sgais()], [ais()], [nested_sampling()]
#' @references Cameron, S. A., Eggers, H. C. and Kroon, S. (2019). Stochastic Gradient Annealed
#'   Importance Sampling for Efficient Online Marginal Likelihood Estimation. *Entropy* 21(11),
#'   1109. \doi{10.3390/e21111109}
#'
#'   Welling, M. and Teh, Y. W. (2011). Bayesian learning via stochastic gradient Langevin
#'   dynamics. *ICML 2011*, 681-688.
#'
#'   Korattikara, A., Chen, Y. and Welling, M. (2014). Austerity in MCMC land: cutting the
#'   Metropolis-Hastings budget. *ICML 2014*, 181-189.
#'
#'   Bardenet, R., Doucet, A. and Holmes, C. (2014). Towards scaling up Markov chain Monte Carlo:
#'   an adaptive subsampling approach. *ICML 2014*, 405-413.
#'
#'   Maclaurin, D. and Adams, R. P. (2014). Firefly Monte Carlo: exact MCMC with subsets of
#'   data. *UAI 2014*, 543-552.
#' @export
#' @examples
#' sgais_control()
#' sgais_control("paper")
#' sgais_control(particles = 50, step_size = 0.05)
#' nested_control(live_points = 200)
#' ais_control(kernel = "austerity", mh_tolerance = 0.01)
#' sir_control()
#' sequential_control("paper")
sgais_control <- control_maker("sgais")

#' @rdname sgais_control
#' @export
ais_control <- control_maker("ais")

#' @rdname sgais_control
#' @export
nested_control <- control_maker("nested_sampling")

#' @rdname sgais_control
#' @export
online_nested_control <- control_maker("online_nested_sampling")

#' @rdname sgais_control
#' @export
sir_control <- control_maker("sir")

#' @rdname sgais_control
#' @export
sequential_control <- control_maker("sequential")

new_control <- function(method, preset, given, call) {
  if (!is.character(preset) || length(preset) != 1L || is.na(preset)) {
    abort(sprintf("`preset` must be \"robust\" or \"paper\", not %s.", describe(preset)), call)
  }
  defaults <- control_presets[[method]][[preset]]
  if (is.null(defaults)) {
    abort(sprintf("`preset` must be \"robust\" or \"paper\", not \"%s\".", preset), call)
  }
  check_setting_names(given, call)
  unknown <- setdiff(names(given), names(defaults))
  if (length(unknown)) {
    abort(sprintf("Unknown setting%s %s for %s(); the settings are: %s.",
                  if (length(unknown) > 1) "s" else "",
                  paste0("`", unknown, "`", collapse = ", "), method,
                  paste0("`", names(defaults), "`", collapse = ", ")), call)
  }
  values <- utils::modifyList(defaults, given, keep.null = TRUE)
  # a smaller sghmc_steps than the preset's fewest lowers the fewest too, unless that is given
  if (!is.null(given$sghmc_steps) && is.null(given$min_sghmc_steps) &&
      !is.null(values$min_sghmc_steps) && is_number(given$sghmc_steps) &&
      values$min_sghmc_steps > given$sghmc_steps) {
    values$min_sghmc_steps <- given$sghmc_steps
  }
  structure(
    list(method = method, preset = preset, given = given,
         settings = resolve_settings(method, values, call)),
    class = "sgais_control"
  )
}

# `split_ess` or `restart_ess`: a fraction in [0, 1); 0 only for SGAIS ("annealed" update), whose
# annealing steps keep the ESS (only SIR and the sequential estimator take chunks in one step).
check_step_ess <- function(x, name, update, call) {
  if (!is_number(x) || !(x >= 0 && x < 1)) {
    abort(sprintf("`%s` must be a number in [0, 1), not %s.", name, describe(x)), call)
  }
  if (update == "annealed" && x > 0) {
    abort(sprintf(paste("`%s` must be 0 with `update = \"annealed\"`: SGAIS's annealing steps",
                        "keep the ESS; only SIR and the sequential estimator take a chunk in one",
                        "step."), name), call)
  }
  x
}

# Inf, or a whole number: the exact early phase needs every earlier observation, so at least
# exact_until of them.
check_reservoir_size <- function(x, exact_until, call) {
  if (is_number(x) && x == Inf) return(Inf)
  if (!is_number(x) || !is.finite(x) || x != round(x) || x < 1 || x > .Machine$integer.max) {
    abort(sprintf("`reservoir_size` must be Inf or a whole number, not %s.", describe(x)), call)
  }
  if (x < exact_until) {
    abort(sprintf(paste(
      "`reservoir_size` (%s) must be at least `exact_until` (%s): the exact early phase uses",
      "every earlier observation. Lower `exact_until` or enlarge the reservoir."),
      format_count(x), format_count(exact_until)), call)
  }
  as.integer(x)
}

# The reservoir size of SGAIS's settings (the other estimators keep every observation).
reservoir_cap <- function(settings) {
  if (is.null(settings$reservoir_size)) Inf else settings$reservoir_size
}
bounded_reservoir <- function(settings) is.finite(reservoir_cap(settings))

check_target_ess <- function(x, particles, call) {
  if (!is_number(x) || !(x > 1 && x < particles)) {
    abort(sprintf(paste(
      "`target_ess` must be a number in (1, particles) = (1, %d), not %s: the annealing steps",
      "are chosen to keep the weights' effective sample size at `target_ess`, and at the number",
      "of particles no step is small enough."), particles, describe(x)), call)
  }
  as.double(x)
}

check_resample <- function(x, call) {
  if (is.logical(x) && length(x) == 1L && !is.na(x)) return(as.double(x))
  if (!is_number(x) || !(x >= 0 && x <= 1)) {
    abort(sprintf("`resample` must be TRUE, FALSE or a number in [0, 1], not %s.", describe(x)), call)
  }
  as.double(x)
}

check_control <- function(control, method, call) {
  if (!inherits(control, "sgais_control") || !identical(control$method, method)) {
    # another estimator's control is named by its maker, not by the class they share
    known <- inherits(control, "sgais_control") && isTRUE(control$method %in% names(control_makers))
    given <- if (known) sprintf("`%s()`", control_makers[[control$method]]) else describe(control)
    abort(sprintf("`control` must come from `%s()`, not %s.", control_makers[[method]], given),
          call)
  }
  control
}

# The function that makes each estimator's control.
control_makers <- c(sgais = "sgais_control", ais = "ais_control",
                    nested_sampling = "nested_control",
                    online_nested_sampling = "online_nested_control", sir = "sir_control",
                    sequential = "sequential_control")

# Settings given in `...`: each named, and once.
check_setting_names <- function(x, call) {
  if (length(x) && (is.null(names(x)) || any(names(x) == ""))) {
    abort("Settings in `...` must be named, e.g. `particles = 50`.", call)
  }
  twice <- unique(names(x)[duplicated(names(x))])
  if (length(twice)) {
    abort(sprintf("%s given more than once; give each setting once.", backticked(twice)),
          call, "sgais_error_argument")
  }
}

# A control object is changed through its settings: `control$particles <- 500` (or [[ ]])
# gives the control with that setting, checked like any other (NULL: the preset's value again);
# its other fields cannot be edited (an edit of `settings` would bypass the checks and be
# silently ignored by a run).
#' @export
`$<-.sgais_control` <- function(x, name, value) {
  edit_control(x, name, value, sys.call())
}
#' @export
`[[<-.sgais_control` <- function(x, i, value) {
  edit_control(x, i, value, sys.call())
}
edit_control <- function(x, name, value, call) {
  x <- unclass(x)
  known <- names(control_presets[[x$method]][[x$preset]])
  if (!is.character(name) || length(name) != 1L || !name %in% known) {
    abort(sprintf(paste(
      "`%s` is not a setting of %s(); change a control through its settings",
      "(`control$particles <- 500`) or make a new one (`%s(\"%s\", particles = 500)`)."),
      paste(format(name), collapse = " "), x$method, control_makers[[x$method]], x$preset),
      call, "sgais_error_argument")
  }
  given <- x$given
  given[name] <- list(value)
  if (is.null(value)) given[[name]] <- NULL # back to the preset's value
  new_control(x$method, x$preset, given, call)
}

# The control with the settings given in an estimator's `...` replacing its own (so that
# `sgais(model, particles = 50)` works), checked by the same parser; then the settings as the C
# core reads them.
control_settings <- function(control, overrides, method, call, model = NULL) {
  control <- check_control(control, method, call)
  check_setting_names(overrides, call)
  given <- c(names(control$given), names(overrides))
  overrides <- c(overrides, model_batch_size(model, method, given),
                 model_max_correlation(model, method, control$preset, given))
  if (length(overrides)) {
    control <- new_control(method, control$preset, utils::modifyList(control$given, overrides,
                                                                      keep.null = TRUE), call)
  }
  s <- control$settings
  early <- model_early_particles(model, method, control$preset,
                                 c(names(control$given), names(overrides)), s)
  if (!is.null(early)) {
    control <- new_control(method, control$preset,
                           utils::modifyList(control$given, c(overrides, early), keep.null = TRUE),
                           call)
    s <- control$settings
  }
  s$preset <- control$preset
  s
}

# The default mini-batch of a model whose observations are groups of rows (R/glm_mixed.R), for
# the SGAIS methods when `given` (the settings given) has none: about 500 rows, the default's
# size in rows, not 500 groups (each group's rows cost a pass per quadrature node); at least 2
# groups. As list(batch_size =), or NULL.
model_batch_size <- function(model, method, given) {
  if (!inherits(model, "sgais_glm_mixed") || !method %in% sgais_methods || "batch_size" %in% given) {
    return(NULL)
  }
  rows <- ncol(model$data$xt) / max(1, model$n)
  list(batch_size = as.integer(max(2, min(500, round(500 / rows)))))
}

# The robust presets' `max_correlation` for a model with jump proposals (a mixture), when `given`
# (the settings given) has none, as list(max_correlation =), else NULL (the preset's 0.2). Its
# whitened correlation is largest along the directions between modes, which repeated local
# moves do not decorrelate (the jumps do): 0.5 bounds the rounds that buy little there, and
# 0.2, where the statistic is mostly noise, repeats the moves a single run's SE needs
# (inst/design.md, "Repeated moves").
model_max_correlation <- function(model, method, preset, given) {
  if (is.null(model) || !method %in% annealing_methods || !identical(preset, "robust") ||
      "max_correlation" %in% given || !model_has_jumps(model)) {
    return(NULL)
  }
  list(max_correlation = 0.5)
}

# The kernels whose moves are random-walk Metropolis-Hastings with a subsampled test, and all
# the kernels whose moves are random-walk MH steps (src/kernel.h, sg_kernel_random_walk).
mh_kernels <- c("austerity", "confidence")
random_walk_kernels <- c(mh_kernels, "flymc")

# The kernel must suit the model: an error of class `sgais_error_kernel` when it does not. The
# rule and its message are the C core's (src/precond.c, sg_kernel_suits_model), which reads what
# the model supplies (model_capabilities()).
check_kernel_model <- function(settings, model, call) {
  kernel <- settings$kernel %||% "sghmc"
  if (inherits(model, c("sgais_linear_mixed", "sgais_glm_mixed")) && bounded_reservoir(settings)) {
    # its rows' likelihoods depend on their groups' earlier rows, whose totals a model that
    # dropped rows could not rebuild
    abort(paste("A model with random effects keeps all its rows: `reservoir_size` must be",
                "left unbounded (Inf)."), call, "sgais_error_reservoir")
  }
  if (kernel %in% c("confidence", "flymc")) {
    why <- with_model_errors(.Call(C_ffi_kernel_suits_model, model,
                                   setting_codes("kernel")[[kernel]]))
    if (!is.null(why)) abort(why, call, "sgais_error_kernel")
  }
  invisible(settings)
}

# The settings list passed to .Call (encode_settings(): codes instead of names). Settings of fits
# saved by earlier versions are completed first (upgrade_settings()).
c_settings <- function(settings) {
  settings <- upgrade_settings(settings)
  if (is.null(settings$particles)) {
    # nested sampling moves by SGHMC or its walk, once per iteration; the C core reads the number
    # of moves of either kind from sghmc_steps (the most) and min_sghmc_steps (the fewest; the
    # walk's length adapts in between)
    settings[c("kernel", "mh_bound", "mh_tolerance", "mh_batch_size", "max_rounds",
               "max_correlation")] <- list("sghmc", "bernstein", 0.05, 100L, 1L, 1)
    if (identical(settings$move, "walk")) {
      if (is.null(settings$walk_steps)) {
        settings$sghmc_steps <- settings$max_walk_steps
        settings$min_sghmc_steps <- min(25L, settings$max_walk_steps)
      } else {
        settings$sghmc_steps <- settings$min_sghmc_steps <- settings$walk_steps
      }
    }
  } else {
    # AIS has no score control variate
    settings$score_control_variate <- isTRUE(settings$score_control_variate)
  }
  encode_settings(settings)
}

#' @export
format.sgais_control <- function(x, ...) {
  s <- x$settings
  shown <- vapply(s, function(v) paste(format(v), collapse = " "), character(1))
  width <- max(17L, nchar(names(s)))
  c(sprintf("<%s control, preset \"%s\">", x$method, x$preset),
    sprintf("  %-*s %s%s", width, names(s), shown,
            ifelse(names(s) %in% names(x$given), "  (set)", "")))
}

#' @export
print.sgais_control <- function(x, ...) {
  cat_lines(format(x, ...))
  invisible(x)
}

# One line describing the settings of a fit, for print().
format_settings <- function(s) {
  kernel <- s$kernel %||% "sghmc" # nested sampling's settings name none
  unit <- switch(kernel, sghmc = "SGHMC steps", sgld = "SGLD steps",
                 "random-walk proposals")
  steps <- if (s$min_sghmc_steps < s$sghmc_steps) {
    sprintf("%d-%d %s", s$min_sghmc_steps, s$sghmc_steps, unit)
  } else {
    sprintf("%d %s", s$sghmc_steps, unit)
  }
  if (kernel == "flymc") {
    return(paste0(sprintf("preset \"%s\": ", s$preset), steps,
                  sprintf(" (%s preconditioner), FlyMC with the model's quadratic likelihood bound",
                          s$preconditioner)))
  }
  if (kernel %in% mh_kernels) {
    test <- if (kernel == "austerity") "t-test" else sprintf("%s bound", s$mh_bound)
    return(paste0(sprintf("preset \"%s\": ", s$preset), steps,
                  sprintf(" (%s preconditioner), %s MH test with tolerance %s on subsets from %s",
                          s$preconditioner, test, format(s$mh_tolerance),
                          format_count(s$mh_batch_size))))
  }
  move <- if (s$step_scale == "width") {
    sprintf("steps of %s widths (%s preconditioner)", format(s$step_size), s$preconditioner)
  } else {
    sprintf("learning rate %s", format(s$learning_rate))
  }
  rounds <- s$max_rounds %||% 1L
  if (rounds > 1L) {
    # SGAIS's mini-batch moves have no Metropolis test and are not repeated
    steps <- sprintf("%s (up to %d moves%s, until correlation <= %s)", steps, rounds,
                     if (is.null(s$exact_until)) "" else " in the exact phase",
                     format(s$max_correlation))
  }
  paste0(sprintf("preset \"%s\": ", s$preset), steps, ", ", move,
         if (kernel == "sghmc") sprintf(", momentum decay %s", format(s$momentum_decay)))
}

# The kernels' metric (inverse mass matrix) for particles `theta` (dim x M) with log-weights
# `logw`, as src/precond.c estimates it: from all the particles, or with particle `leave_out`
# left out, as each particle is moved (sg_precond_leave_out()). Internal: it lets the tests
# check the C estimate against a covariance computed in R.
precond_metric <- function(theta, logw = numeric(ncol(theta)), kind = c("dense", "diagonal"),
                           leave_out = 0L) {
  kind <- match.arg(kind)
  stopifnot(is.matrix(theta), is.double(theta), ncol(theta) >= 2L, all(is.finite(theta)),
            is.double(logw), length(logw) == ncol(theta), !anyNA(logw),
            length(leave_out) == 1L, leave_out %in% 0:ncol(theta))
  .Call(C_ffi_precond_metric, theta, logw, setting_codes("preconditioner")[[kind]],
        as.integer(leave_out))
}
