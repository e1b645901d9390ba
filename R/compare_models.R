#' Compare models on the same data, each by the estimator that suits it
#'
#' Estimates every model's evidence on the same observations and compares them: each model's log
#' evidence \eqn{\log \hat Z_k(n)} with its standard error, its log Bayes factor against the best
#' model, and the posterior model probabilities
#' \deqn{p(M_k \mid y_{1:n}) = \frac{p(M_k) Z_k(n)}{\sum_j p(M_j) Z_j(n)}}{p(M_k | y_1..n) =
#' p(M_k) Z_k(n) / sum_j p(M_j) Z_j(n)}
#' (thesis eq. 1.7), for every prefix length \eqn{n} at which all the fits have an estimate: the
#' chunk ends for fits with a trajectory ([sgais()], [exact_evidence()]), else all the
#' observations only.
#'
#' @section Which estimator:
#' `method = "auto"` (the default) picks, for each model, the cheapest estimator that is
#' accurate for it, and says which and why (`$methods`, `print()`, `summary()`,
#' `as.data.frame()`):
#' \enumerate{
#'   \item the closed form ([exact_evidence()]) where the model has one (linear regression with
#'     normal, g- or Zellner-Siow priors, with or without random intercepts);
#'   \item else [importance_sampling()], when its diagnostic passes on these data (the Pareto
#'     \eqn{\hat k}{k-hat} of its weights at most 0.7): models of few parameters whose posterior
#'     is close to a Gaussian, such as GLMs with or without random intercepts;
#'   \item else [sgais()], and always for a stream (`data` a file, query or function).
#' }
#' Any other `method` forces that estimator for every model (`"sgais"`, `"sir"`,
#' `"sequential_sgmcmc"` also read streams); `...` and `control` are its settings. Under
#' `"auto"` they are those of the models given to SGAIS.
#'
#' Every model is fitted with the same settings and the same `seed`, so adding a model to a
#' comparison or removing one never changes another model's fit (with `seed = NULL` one seed is
#' drawn from the session's stream and used for all). The exception: a model whose
#' observations are groups (a GLM with random effects) takes its own default `batch_size` (see
#' [logistic_regression()]).
#'
#' @section Formulas:
#' `models` can be formulas, with `family` saying which regression they are: `"gaussian"`
#' ([linear_regression()]), `"binomial"` ([logistic_regression()]), `"poisson"`
#' ([poisson_regression()]), `"negative_binomial"` ([negative_binomial_regression()]),
#' `"robust"` ([robust_regression()]) or `"categorical"` ([softmax_regression()]), each at its
#' defaults; [stats::gaussian()], [stats::binomial()] or [stats::poisson()] with their
#' canonical links; or a function of `formula` and `data` returning a model, for other settings
#' (e.g. `function(formula, data) linear_regression(formula, data, prior = g_prior())`).
#' `weights`, `subset`, `na.action` and `offset` then apply to every formula as in
#' [stats::glm()] (see [linear_regression()] and [poisson_regression()]).
#'
#' @section Fits, and models that hold their data:
#' `models` can be fits of any estimator, mixed, made separately from the same observations
#' (the same responses, identified by the digest `fit$data_digest`); fits of other observations
#' are an error of class `sgais_error_data_mismatch`. With `data` they are continued on it
#' first, as by `update()`. Without `data`, models are compared on the observations they hold,
#' which must be the same.
#'
#' @section Continuing, streams and interrupts:
#' `update(comparison, new_data)` adds observations: [sgais()] fits (and SIR and the sequential
#' estimator's) continue on them, closed forms are recomputed on all the rows and
#' importance-sampling fits redone on all the rows with their seed; fits of [ais()] and the
#' nested samplers cannot be updated (an error of class `sgais_error_not_continuable`).
#' `data` (or `new_data`) can be a stream source as in [sgais_stream()]: rows are read
#' `block_size` at a time and every model takes a block before the next is read; the result is
#' the same for every source and block size. An interrupt keeps the comparison of the blocks
#' done, returned with a warning of class `sgais_warning_interrupted`; an error of the source
#' keeps it in the field `comparison` of an error of class `sgais_error_stream`.
#'
#' @param models A named list of models (e.g. [linear_regression()] or [gaussian_mixture()]),
#'   each built on data like `data` (the regressions' default prior takes its scales from the
#'   rows a model is built on, so build them on `data` or representative rows); or of formulas
#'   (with `family`); or of fits of the same observations, by any estimator.
#' @param data The observations, as the models' constructors take them, or a source to read them
#'   from (see `source` in [sgais_stream()]). Optional when `models` hold their data.
#' @param method `"auto"` (see "Which estimator"), or the estimator for every model:
#'   `"exact"`, `"importance_sampling"`, `"sgais"`, `"sir"`, `"sequential_sgmcmc"`, `"ais"`,
#'   `"nested_sampling"` or `"online_nested_sampling"`.
#' @param family With formulas in `models`: which regression they are (see "Formulas").
#' @param ... Settings of the estimator (e.g. `chunk_size = 1000` for SGAIS, `draws = 2000` for
#'   importance sampling), the same for every model.
#' @param control The estimator's control ([sgais_control()], [ais_control()],
#'   [nested_control()], [sir_control()], [sequential_control()]); `NULL`: its default.
#' @param weights,subset,na.action,offset With formulas: as in [stats::glm()], for every
#'   formula (an `offset` is an expression in the columns of `data`).
#' @param block_size Rows read per block from a source; by default 20 chunks, and all of
#'   in-memory data.
#' @param prior Prior model probabilities, in the order of `models` (normalised to sum to 1);
#'   `NULL` means equal.
#' @inheritParams sgais
#' @return An object of class `sgais_comparison`: a list with `fits` (named as `models`),
#'   `methods` (a data frame: `model`, `method`, the estimator's name, and `reason`, why it was
#'   chosen), `prior`, and `trajectory`, a data frame with one row per model and prefix length:
#'   `model`, `n`, `log_evidence`, `log_evidence_se`, `log_bayes_factor` (against the best model
#'   at that `n`), `probability` (the posterior model probability), `method` and `reason`. Use
#'   `print()`, `summary()`, `plot()` and `as.data.frame()` (the trajectory).
#' @seealso [sgais()], [detect_shifts()] (each model's trajectory scored for shifts)
#' @export
#' @examples
#' # formulas: each model by its cheapest accurate estimator (here the closed form)
#' # (glm's row arguments, such as `subset`, apply to every formula)
#' compare_models(list(large = mpg ~ wt + hp + qsec, small = mpg ~ wt + hp), mtcars,
#'                family = "gaussian", subset = cyl != 6, seed = 1)
#'
#' # fits of several estimators of the same data compare too
#' data <- simulate_linear_regression(2000, seed = 1)
#' fits <- list(all = exact_evidence(linear_regression(y ~ ., data)),
#'              two = importance_sampling(linear_regression(y ~ x1 + x2, data), seed = 1),
#'              one = sgais(linear_regression(y ~ x1, data), seed = 1, progress = FALSE))
#' compare_models(fits)
#'
#' # SGAIS for every model: the comparison along n, continued as more data arrive
#' models <- list(all = linear_regression(y ~ ., data), two = linear_regression(y ~ x1 + x2, data))
#' cmp <- compare_models(models, data[1:1500, ], method = "sgais", seed = 1, progress = FALSE)
#' cmp <- update(cmp, data[1501:2000, ], progress = FALSE)
#' summary(cmp)
compare_models <- function(models, data, ..., method = "auto", family = NULL, control = NULL,
                           prior = NULL, replicates = 1, block_size = NULL, weights = NULL,
                           subset = NULL, na.action = NULL, offset = NULL,
                           progress = default_progress(), seed = NULL) {
  call <- sys.call()
  has_data <- !missing(data)
  if (!is.list(models) || inherits(models, "sgais_model") || inherits(models, "sgais_evidence") ||
      length(models) < 2L) {
    abort(sprintf("`models` must be a list of at least two models or fits, not %s.",
                  describe(models)), call)
  }
  names <- names(models)
  if (is.null(names) || anyNA(names) || !all(nzchar(names)) || anyDuplicated(names)) {
    abort("`models` must be named, each with its own name (e.g. `list(small = m1, large = m2)`).",
          call)
  }
  rows <- list(weights = substitute(weights), subset = substitute(subset), na.action = na.action,
               offset = substitute(offset), env = parent.frame())
  formulas <- vapply(models, inherits, logical(1), "formula")
  if (any(formulas)) {
    if (!has_data) {
      abort("`data` is missing: formulas in `models` are built on it (with `family`).", call)
    }
    selected <- formula_rows_of(data, models[formulas], rows, call)
    data <- selected$data
    models[formulas] <- models_of_formulas(models[formulas], data, family, selected$rows, call)
  } else {
    if (!is.null(family)) {
      abort("`family` is for formulas in `models`; these models are built already.", call)
    }
    given <- !vapply(rows[c("weights", "subset", "na.action", "offset")], is.null, logical(1))
    if (any(given)) {
      abort(sprintf("%s %s for formulas in `models`; these models are built already.",
                    backticked(names(given)[given]), if (sum(given) == 1L) "is" else "are"),
            call, "sgais_error_argument")
    }
  }
  fitted <- vapply(models, inherits, logical(1), "sgais_evidence")
  for (name in names) {
    if (!fitted[[name]] && !inherits(models[[name]], "sgais_model")) {
      abort(sprintf("`models$%s` must be an sgais model, a formula or a fit, not %s.", name,
                    describe(models[[name]])), call)
    }
  }
  if (any(fitted) && !all(fitted)) {
    abort(sprintf("`models` must be all models or all fits; %s %s fits and %s not.",
                  backticked(names[fitted]), if (sum(fitted) == 1L) "is" else "are",
                  backticked(names[!fitted])), call)
  }
  prior <- check_model_prior(prior, names, call)
  progress <- check_flag(progress, "progress", call)
  if (all(fitted)) {
    if (...length() || !is.null(control) || !missing(replicates) || !is.null(seed) ||
        !missing(method)) {
      abort(paste("Fits are compared (and continued) with their own estimators, settings,",
                  "replicates and random streams; give none of `method`, `...`, `control`,",
                  "`replicates` or `seed`."), call)
    }
    fits <- lapply(models, validate_sgais_evidence, call = call)
    cmp <- new_sgais_comparison(fits, prior, fit_methods(fits), call)
    if (!has_data) return(cmp)
    return(update_comparison(cmp, data, block_size, progress, call))
  }
  method <- check_choice(method, "method", compare_methods, call, "sgais_error_argument")
  for (name in names) check_all_rows(models[[name]], call)
  if (!has_data) {
    if (!is.null(block_size)) abort("`block_size` is for `data`; the models hold theirs.", call)
    check_same_observations(models, call)
  }
  replicates <- check_whole_number(replicates, "replicates", 1, call)
  seed <- check_seed(seed, call)
  # one seed for all, so that each fit depends on its own model alone
  if (is.null(seed)) seed <- sample.int(.Machine$integer.max, 1L)
  # a source, or data in memory read in blocks
  stream <- has_data && (!is_in_memory(data) || !is.null(block_size))
  if (stream && !method %in% c("auto", streaming_methods)) {
    abort(sprintf(paste("Only SGAIS, SIR and the sequential estimator read data in blocks (`data`",
                        "a stream, or `block_size` given); `method = \"%s\"` needs all the",
                        "data at once."), method), call, "sgais_error_argument")
  }
  settings <- list(dots = list(...), control = control, replicates = replicates, seed = seed,
                   progress = progress)
  if (stream) {
    choices <- rep(list(list(method = if (method == "auto") "sgais" else method,
                             reason = if (method == "auto") "a stream" else "chosen")), length(names))
    names(choices) <- names
    return(compare_streamed(models, choices, data, block_size, prior, settings, call))
  }
  held <- lapply(models, function(m) if (!has_data) m else model_with_data(m, data, call))
  for (name in names) {
    if (has_data) warn_autoscale_template(models[[name]], held[[name]]$n, call,
                                                sprintf("Model `%s`", name))
  }
  fits <- list()
  choices <- list()
  bar <- if (progress && length(names) > 2L) {
    cli::cli_progress_bar("Comparing models", total = length(names), .auto_close = FALSE)
  }
  for (name in names) {
    grid <- comparison_grid(held[[name]]$n, settings, call)
    chosen <- if (method == "auto") auto_method(held[[name]], grid, settings, call) else
      list(method = method, reason = "chosen")
    fits[[name]] <- chosen$fit %||%
      fit_by(chosen$method, held[[name]], grid, settings, progress && is.null(bar), call)
    chosen$fit <- NULL
    choices[[name]] <- chosen
    if (!is.null(bar)) cli::cli_progress_update(id = bar)
  }
  if (!is.null(bar)) cli::cli_progress_done(id = bar)
  cmp <- new_sgais_comparison(fits, prior, methods_frame(choices), call)
  warn_comparison(cmp, call)
  cmp
}

# The estimators compare_models() can run, and those that read a stream in blocks.
compare_methods <- c("auto", "exact", "importance_sampling", "sgais", "sir", "sequential_sgmcmc",
                     "ais", "nested_sampling", "online_nested_sampling")
streaming_methods <- c("sgais", "sir", "sequential_sgmcmc")

# compare_models(method = "auto")'s choice for `model` (holding the data): the closed form where
# there is one; else importance sampling when its weights' Pareto k is at most 0.7 (its fit is
# kept); else SGAIS. A list of `method`, `reason` and, where a fit was made on the way, `fit`.
auto_method <- function(model, grid, settings, call) {
  exact <- tryCatch(exact_evidence(model, n = grid, seed = settings$seed),
                    sgais_error_no_closed_form = function(e) NULL)
  if (!is.null(exact)) return(list(method = "exact", reason = "the model has one", fit = exact))
  failed <- NULL
  is <- tryCatch(
    suppress_unreliable(importance_sampling(model, seed = settings$seed, progress = FALSE)),
    sgais_error = function(e) {
      failed <<- if (inherits(e, "sgais_error_multimodal")) "several modes" else
        "no Laplace approximation"
      NULL
    })
  if (!is.null(is)) {
    k <- is$pareto_k
    if (!is.na(k) && k <= 0.7) {
      return(list(method = "importance_sampling", reason = sprintf("Pareto k %.2f <= 0.7", k),
                  fit = is))
    }
    failed <- sprintf("Pareto k %.2f > 0.7", k)
  }
  list(method = "sgais", reason = paste("importance sampling:", failed))
}

suppress_unreliable <- function(code) {
  withCallingHandlers(code, sgais_warning_unreliable = function(w) invokeRestart("muffleWarning"))
}

# A fit of `model` by the estimator `method` with compare_models()'s `settings` (the estimator's
# `...`, `control`, `replicates`, `seed`, `progress`); the closed form at the prefix lengths
# `grid`. The call is built with the model as a name, so that the fit's stored call stays short.
fit_by <- function(method, model, grid, settings, progress, call) {
  if (method == "exact") {
    if (length(settings$dots) || !is.null(settings$control)) {
      abort("The closed form has no settings: give no `...` or `control` with `method = \"exact\"`.",
            call, "sgais_error_argument")
    }
    return(exact_evidence(model, n = grid, seed = settings$seed))
  }
  args <- c(list(quote(model)), settings$dots, list(seed = settings$seed, progress = progress))
  if (method != "importance_sampling") {
    args$replicates <- settings$replicates
    if (!is.null(settings$control)) args$control <- settings$control
  } else if (!is.null(settings$control)) {
    abort("Importance sampling has no `control`; give its settings (`draws`, ...) in `...`.",
          call, "sgais_error_argument")
  }
  fit <- eval(as.call(c(as.name(method), args)), list(model = model), asNamespace("sgais"))
  # an interrupt keeps no comparison: the other models have not seen these observations
  if (!is.null(attr(fit, "interrupted"))) resignal_interrupt()
  fit
}

# Prefix lengths at which closed forms are computed in a comparison of `n` observations: the
# ends of SGAIS's chunks with compare_models()'s `settings` (so that they meet its
# trajectories), at most 50 of them, spread on a log scale, and `n`.
comparison_grid <- function(n, settings, call) {
  size <- tryCatch(
    control_settings(settings$control %||% sgais_control(), settings$dots, "sgais", call)$chunk_size,
    sgais_error = function(e) 500)
  ends <- unique(c(size * seq_len(n %/% size), n))
  if (length(ends) > 50L) {
    keep <- round(exp(seq(0, log(length(ends)), length.out = 50L)))
    ends <- ends[unique(c(keep, length(ends)))]
  }
  ends
}

# The estimator of each fit, as compare_models() records it: given fits were not chosen.
fit_methods <- function(fits) {
  methods_frame(lapply(fits, function(f) list(method = method_name(f), reason = "given")))
}

# The name compare_models()'s `method` gives a fit's estimator.
method_name <- function(fit) {
  switch(fit$method, "closed form" = "exact", "importance sampling" = "importance_sampling",
         SGAIS = "sgais", SIR = "sir", AIS = "ais", "Nested sampling" = "nested_sampling",
         "Online NS" = "online_nested_sampling",
         if (startsWith(fit$method, "sequential")) "sequential_sgmcmc" else fit$method)
}

methods_frame <- function(choices) {
  data.frame(model = names(choices),
             method = vapply(choices, `[[`, character(1), "method"),
             reason = vapply(choices, `[[`, character(1), "reason"),
             row.names = NULL, stringsAsFactors = FALSE)
}

# The rows of `data` that compare_models()'s formulas are compared on, and `rows` with its
# `weights` the name of their column: weights given as a vector become the column `(weights)`
# (as in glm_rows()), so that they follow `subset`, which selects the rows here, once for all
# the models. Incomplete rows and weights are the models' rules (their specs), applied to every
# block they are given.
formula_rows_of <- function(data, formulas, rows, call) {
  if (!is.data.frame(data)) {
    abort(sprintf("With formulas in `models`, `data` must be a data frame, not %s.",
                  describe(data)), call)
  }
  if (!is.null(rows$weights)) {
    w <- weights_column(rows$weights, data, rows$env, call)
    if (is.numeric(w)) {
      data[[weights_vector]] <- w
      w <- weights_vector
    }
    rows$weights <- w
  }
  if (!is.null(rows$subset)) {
    data <- glm_rows(data, formulas[[1]], NULL, rows$subset, NULL, rows$env, call)
    attr(data, "sgais_rows") <- NULL
  }
  list(data = data, rows = rows)
}

# Models built from the formulas of compare_models() on `data`, by the constructor `family`
# names (or is), with glm's `weights` (a column's name, formula_rows_of()), `na.action` and
# `offset` of `rows`. A function of the user's takes rows already weighted (frequency weights).
models_of_formulas <- function(formulas, data, family, rows, call) {
  build <- family_constructor(family, call)
  lapply(formulas, function(formula) {
    formula <- formula_with_offset(formula, rows$offset, data, rows$env, call)
    model <- if (is.function(family)) {
      build(formula, glm_rows(data, formula, rows$weights, NULL, rows$na.action, rows$env, call))
    } else {
      # the weights' name inline, as a constructor's `weights` takes it unevaluated
      eval(bquote(build(formula, data, weights = .(rows$weights), na.action = .(rows$na.action))))
    }
    if (!inherits(model, "sgais_model")) {
      abort(sprintf("`family` must build an sgais model from a formula and data; it returned %s.",
                    describe(model)), call)
    }
    model
  })
}

# The constructor of a model from a formula and data (and glm's row arguments, for the named
# families) that `family` names (see compare_models()).
family_constructor <- function(family, call) {
  constructors <- list(
    gaussian = linear_regression,
    binomial = logistic_regression,
    poisson = poisson_regression,
    robust = robust_regression,
    categorical = softmax_regression,
    negative_binomial = negative_binomial_regression
  )
  if (is.null(family)) {
    abort(sprintf(paste("`family` is missing: formulas in `models` need it to say which",
                        "regression they are: %s, a stats family object, or a function of",
                        "`formula` and `data` that builds the model."),
                  paste0("\"", names(constructors), "\"", collapse = ", ")), call,
          "sgais_error_family")
  }
  if (is.function(family)) return(family)
  if (inherits(family, "family")) {
    canonical <- c(gaussian = "identity", binomial = "logit", poisson = "log")
    if (!family$family %in% names(canonical) || family$link != canonical[[family$family]]) {
      abort(sprintf(paste("`family` %s(link = \"%s\") has no sgais model; the families are",
                          "gaussian (identity), binomial (logit) and poisson (log)."),
                    family$family, family$link), call, "sgais_error_family")
    }
    family <- family$family
  }
  if (!is.character(family) || length(family) != 1L || !family %in% names(constructors)) {
    abort(sprintf("`family` must be one of %s, a stats family object or a function, not %s.",
                  paste0("\"", names(constructors), "\"", collapse = ", "), describe(family)),
          call, "sgais_error_family")
  }
  constructors[[family]]
}

# Models compared on the observations they hold must hold the same ones: as many, with the same
# responses (the digest fits carry, extend_digest()).
check_same_observations <- function(models, call) {
  grouped <- any(vapply(models, model_of_groups, logical(1)))
  n <- vapply(models, model_rows, numeric(1))
  digests <- vapply(models, function(m) {
    if (model_dropped(m) > 0) return(NA_character_)
    # a model of groups holds its rows in another order: only their number is compared
    if (grouped) "" else extend_digest("", m, 0, m$n)
  }, character(1))
  if (length(unique(n)) != 1L || anyNA(digests) || length(unique(digests)) != 1L) {
    abort(sprintf(paste(
      "`data` is missing, and the models do not hold the same observations (%s), so they cannot",
      "be compared on their own data: give `data`."),
      paste(sprintf("%s: %s", names(models), format_count(n)), collapse = ", ")), call,
      "sgais_error_data_mismatch")
  }
  invisible(models)
}

# Each fit's unreliable-estimate warning, named by its model; and a warning when the two best
# models after all observations are within 2 SE of each other.
warn_comparison <- function(cmp, call) {
  for (name in names(cmp$fits)) {
    withCallingHandlers(warn_if_unreliable(cmp$fits[[name]]), sgais_warning_unreliable = function(w) {
      warn(sprintf("Model `%s`: %s", name, conditionMessage(w)), call, "sgais_warning_unreliable")
      invokeRestart("muffleWarning")
    })
  }
  last <- comparison_final(cmp)
  se <- sqrt(sum(last$log_evidence_se[1:2]^2))
  gap <- last$log_evidence[1] - last$log_evidence[2]
  if (!is.na(se) && gap < 2 * se) {
    warn(sprintf(paste(
      "The ranking of the two best models is within 2 standard errors: `%s` leads `%s` by %.2f",
      "nats, with a standard error of %.2f. Run more replicates, or give the comparison more",
      "data, before preferring one."), last$model[1], last$model[2], gap, se), call,
      "sgais_warning_close_call")
  }
}

# compare_models() of `models` on a stream `source` (or in-memory data read in blocks), each by
# the estimator `choices` names for it (SGAIS, SIR or the sequential estimator).
compare_streamed <- function(models, choices, source, block_size, prior, settings, call) {
  key <- c(sgais = "sgais", sir = "sir", sequential_sgmcmc = "sequential")
  model_settings <- lapply(names(models), function(name) {
    m <- models[[name]]
    control <- settings$control %||% default_control(key[[choices[[name]]$method]])
    check_kernel_model(control_settings(control, settings$dots, key[[choices[[name]]$method]],
                                        call, m), m, call)
  })
  names(model_settings) <- names(models)
  new <- list(models = models, settings = model_settings, replicates = settings$replicates,
              seed = settings$seed)
  compare_blocks(NULL, new, source, block_size, prior, methods_frame(choices),
                 settings$progress, call)
}

# The control of an estimator of SGAIS's sampler at its defaults.
default_control <- function(method) {
  switch(method, sgais = sgais_control(), sir = sir_control(), sequential = sequential_control())
}

# update() of a comparison, and compare_models() of fits with `data`: the fits on the rows of
# `source` added. Fits of SGAIS's sampler continue; closed forms and importance sampling are
# done again on all the rows; other fits cannot take rows.
update_comparison <- function(cmp, source, block_size, progress, call, arg = "data") {
  fixed <- !vapply(cmp$fits, inherits, logical(1), c("sgais_fit", "sgais_exact_fit",
                                                      "sgais_is_fit"))
  if (any(fixed)) {
    abort(sprintf(paste(
      "%s cannot take new rows (fits of %s): only fits of sgais(), sir() and",
      "sequential_sgmcmc() continue, and closed forms and importance sampling are done again.",
      "Compare the models on all the data, or with `method = \"sgais\"` to continue."),
      backticked(names(cmp$fits)[fixed]),
      paste(unique(vapply(cmp$fits[fixed], `[[`, character(1), "method")), collapse = ", ")),
      call, "sgais_error_not_continuable")
  }
  fits <- lapply(cmp$fits, function(f) {
    if (inherits(f, "sgais_fit")) validate_continuable(f, call) else f
  })
  compare_blocks(fits, NULL, source, block_size, cmp$prior, cmp$methods, progress, call, arg)
}

# A fit that compare_blocks() has given rows without continuing it (its model holds them): the
# closed form or importance sampling of all its model's rows, with the fit's seed and settings.
redo_fit <- function(fit, grid) {
  if (inherits(fit, "sgais_exact_fit")) {
    return(exact_evidence(fit$model, n = grid[grid <= fit$model$n], seed = fit$seed))
  }
  s <- fit$settings
  importance_sampling(fit$model, draws = s$draws, df = s$df %||% 10,
                      inflation = s$inflation %||% 1.1, seed = fit$seed, progress = FALSE)
}

# Fits the models of `new` (a list of models, settings, replicates and seed), or continues the
# `fits`, on the rows of `source` (a stream source, see stream_source()), one block at a time:
# every model takes a block before the next is read, so an interrupt or an error of the source
# keeps the comparison of the blocks done. In-memory data are one block unless `block_size` is
# given. A fit that is not SGAIS's takes the rows into its model and is done again at the end
# (redo_fit()). Returns the comparison (`methods`: its table of estimators), with each fit's
# unreliable-estimate warning named by its model.
compare_blocks <- function(fits, new, source, block_size, prior, methods, progress, call,
                           arg = "data") {
  names <- if (is.null(fits)) names(new$models) else names(fits)
  sampled <- if (is.null(fits)) new$settings else
    lapply(Filter(function(f) inherits(f, "sgais_fit"), fits), `[[`, "settings")
  chunk <- if (length(sampled)) sampled[[1]]$chunk_size else 500
  in_memory <- is_in_memory(source)
  if (is.null(fits) && in_memory) {
    for (name in names) {
      warn_autoscale_template(new$models[[name]], nrow_of(source), call, sprintf("Model `%s`", name))
    }
  }
  block_size <- if (!is.null(block_size)) check_whole_number(block_size, "block_size", 1, call)
    else if (in_memory) max(1, nrow_of(source)) else 20 * chunk
  next_block <- grouped_blocks(stream_source(source, block_size, call, arg), block_size,
                               function() if (is.null(fits)) 0 else data_rows(fits[[1]]$model$data))
  on.exit(next_block(NULL), add = TRUE)
  # a bar per model fit for one block of data in memory; a count of rows for a stream
  one_block <- in_memory && block_size >= nrow_of(source)
  if (progress && !one_block) {
    seen <- if (is.null(fits)) 0 else fits[[1]]$model$n
    bar <- cli::cli_progress_bar(
      format = paste("Comparing {length(names)} models {cli::pb_spin}",
                     "{format_count(seen)} observations | {cli::pb_elapsed}"),
      total = NA, .auto_close = FALSE
    )
    on.exit(cli::cli_progress_done(id = bar), add = TRUE)
  }
  advance <- function(name, block) {
    fit <- if (is.null(fits)) {
      settings <- new$settings[[name]]
      model <- model_with_data(new$models[[name]], block, call)
      if (settings$update == "averaged") settings$hybrid <- check_hybrid(TRUE, model, call)
      sgais_start(model, settings, new$replicates, progress && one_block, new$seed, call)
    } else if (inherits(fits[[name]], "sgais_fit")) {
      fit <- fits[[name]]
      sgais_more(fit, model_add_rows(fit$model, block, call), progress && one_block)
    } else {
      fit <- fits[[name]]
      fit$model <- model_add_rows(fit$model, block, call)
      fit
    }
    # one replicate, interrupted inside the block: the block is not done for every model
    if (!is.null(attr(fit, "interrupted"))) signalCondition(interrupt_condition())
    fit
  }
  done <- function() {
    if (is.null(fits)) return(NULL)
    continued <- vapply(fits, inherits, logical(1), "sgais_fit")
    grid <- if (any(continued)) fits[[which(continued)[1]]]$trajectory$n else
      comparison_grid(fits[[1]]$model$n, list(), call)
    for (name in names[!continued]) {
      if (fits[[name]]$model$n != fits[[name]]$n) fits[[name]] <- redo_fit(fits[[name]], grid)
    }
    new_sgais_comparison(fits, prior, methods, call)
  }
  stopped <- function() {
    sprintf("the comparison of the %s observations of the blocks done is kept",
            format_count(fits[[1]]$model$n))
  }
  added <- FALSE
  cmp <- tryCatch({
    repeat {
      block <- next_block(block_size)
      if (is.null(block)) break
      fits <- stats::setNames(lapply(names, advance, block = block), names) # all or nothing
      added <- TRUE
      if (progress && !one_block) {
        seen <- fits[[1]]$model$n
        cli::cli_progress_update(id = bar, set = seen)
      }
    }
    if (is.null(fits)) abort(sprintf("`%s` gave no rows.", arg), call)
    done()
  }, interrupt = function(e) {
    if (is.null(fits)) resignal_interrupt()
    warn(paste0("Interrupted: ", stopped(), ". Continue it with `update(comparison, new_data)` ",
                "on the observations after the first ", format_count(fits[[1]]$model$n), "."),
         call, "sgais_warning_interrupted")
    done()
  }, error = function(e) {
    if (!added) stop(e)
    abort(paste0(conditionMessage(e), "\nThe data stopped; ", stopped(), ". Get it as ",
                 "`e$comparison` from tryCatch(..., sgais_error_stream = function(e) e$comparison)."),
          call, "sgais_error_stream", comparison = done(), parent = e)
  })
  warn_comparison(cmp, call)
  cmp
}

check_model_prior <- function(prior, names, call) {
  if (is.null(prior)) return(stats::setNames(rep(1 / length(names), length(names)), names))
  if (!is.numeric(prior) || length(prior) != length(names) || anyNA(prior) ||
      any(!is.finite(prior)) || any(prior < 0) || sum(prior) <= 0) {
    abort(sprintf(
      "`prior` must be %d non-negative numbers (one per model), not all zero; not %s.",
      length(names), describe(prior)), call)
  }
  if (!is.null(names(prior)) && !setequal(names(prior), names)) {
    abort("The names of `prior` must be the names of `models`.", call)
  }
  if (!is.null(names(prior))) prior <- prior[names]
  stats::setNames(prior / sum(prior), names)
}

new_sgais_comparison <- function(fits, prior, methods, call = NULL) {
  methods$model <- names(fits)
  validate_sgais_comparison(structure(
    list(fits = fits, methods = methods, prior = prior,
         trajectory = comparison_trajectory(fits, prior, methods)),
    class = "sgais_comparison"
  ), call)
}

# The fits must be fits of the same observations, each valid, with a method recorded for each.
validate_sgais_comparison <- function(x, call = NULL) {
  fits <- x$fits
  ok <- inherits(x, "sgais_comparison") && is.list(fits) && length(fits) >= 2L &&
    !is.null(names(fits)) && all(vapply(fits, inherits, logical(1), "sgais_evidence"))
  if (!ok) abort("A comparison must hold at least two named fits.", call, "sgais_error_invalid_fit")
  for (name in names(fits)) fits[[name]] <- validate_sgais_evidence(fits[[name]], call)
  # comparisons made before the estimators were recorded hold SGAIS fits only
  if (is.null(x$methods)) x$methods <- fit_methods(fits)
  m <- x$methods
  if (!is.data.frame(m) || !identical(m$model, names(fits)) || !is.character(m$method) ||
      !is.character(m$reason)) {
    abort("A comparison's `methods` must name each fit's estimator and why it was chosen.", call,
          "sgais_error_invalid_fit")
  }
  # models whose observations are groups of rows (R/glm_mixed.R) are compared on the rows seen,
  # where their trajectories meet the others' (the ends of the blocks of data they were given)
  grouped <- any(vapply(fits, function(f) model_of_groups(f$model), logical(1)))
  n <- vapply(fits, function(f) if (grouped) model_rows(f$model) else f$n, numeric(1))
  if (length(unique(n)) != 1L) {
    abort(sprintf("The fits have seen different numbers of %s (%s); they cannot be compared.",
                  if (grouped) "rows" else "observations",
                  paste(sprintf("%s: %s", names(fits), format_count(n)), collapse = ", ")), call,
          "sgais_error_data_mismatch")
  }
  digests <- vapply(fits, function(f) as.character(f$data_digest)[1], character(1))
  if (!grouped && (anyNA(digests) || length(unique(digests)) != 1L)) {
    abort(sprintf(paste(
      "The fits are not of the same observations: they have seen %s each, but their responses",
      "differ (`data_digest`: %s); they cannot be compared."), format_count(n[1]),
      paste(sprintf("%s: %s", names(fits), digests), collapse = ", ")), call,
      "sgais_error_data_mismatch")
  }
  if (!is.numeric(x$prior) || length(x$prior) != length(fits) || !all(is.finite(x$prior)) ||
      any(x$prior < 0)) {
    abort("A comparison's `prior` must have one probability per fit.", call,
          "sgais_error_invalid_fit")
  }
  x$fits <- fits
  x
}

# The fits of a comparison, for the function `what` that reads SGAIS's trajectories: an error
# of class `sgais_error_not_sgais` when one was made by another estimator.
comparison_sgais_fits <- function(cmp, what, call) {
  other <- !vapply(cmp$fits, inherits, logical(1), "sgais_fit")
  if (any(other)) {
    abort(sprintf(paste(
      "%s reads the trajectories of fits of sgais(), sir() or sequential_sgmcmc(), but %s %s",
      "fitted by another estimator (%s). Compare with `method = \"sgais\"`."), what,
      backticked(names(cmp$fits)[other]),
      if (sum(other) == 1L) "was" else "were",
      paste(unique(vapply(cmp$fits[other], `[[`, character(1), "method")), collapse = ", ")),
      call, "sgais_error_not_sgais")
  }
  cmp$fits
}

# A fit's estimates along n: its trajectory's n, log evidence and SE where it has one (SGAIS and
# its relatives, online nested sampling, closed forms), else the estimate of all its
# observations. In rows seen when the model's observations are groups of rows.
evidence_points <- function(fit) {
  tr <- fit$trajectory
  out <- if (is.null(tr)) {
    data.frame(n = fit$n, log_evidence = fit$log_evidence,
               log_evidence_se = fit$log_evidence_se %||% NA_real_)
  } else {
    data.frame(n = tr$n, log_evidence = tr$log_evidence,
               log_evidence_se = tr$log_evidence_se %||% NA_real_)
  }
  d <- fit$model$data
  if (!is.null(d$unit_rows)) out$n <- cumsum(d$unit_rows - d$unit_context)[out$n]
  out
}

# One row per model and prefix length (rows, when a model's observations are groups of rows; the
# prefixes all the fits have a point at): log evidence, its SE, the log Bayes factor against the
# best model at that n, the posterior model probability (log-sum-exp over the models), and the
# estimator.
comparison_trajectory <- function(fits, prior, methods) {
  points <- lapply(fits, evidence_points)
  n <- Reduce(intersect, lapply(points, `[[`, "n"))
  at <- lapply(points, function(p) match(n, p$n))
  column <- function(col) {
    matrix(vapply(seq_along(fits), function(k) points[[k]][[col]][at[[k]]], numeric(length(n))),
           nrow = length(n))
  }
  log_z <- column("log_evidence")
  se <- column("log_evidence_se")
  log_post <- sweep(log_z, 2, log(prior), `+`)
  norm <- apply(log_post, 1, log_sum_exp)
  best <- apply(log_z, 1, max)
  K <- length(fits)
  data.frame(
    model = factor(rep(names(fits), each = length(n)), levels = names(fits)),
    n = rep(n, K),
    log_evidence = as.vector(log_z),
    log_evidence_se = as.vector(se),
    log_bayes_factor = as.vector(log_z - best),
    probability = as.vector(exp(log_post - norm)),
    method = rep(methods$method, each = length(n)),
    reason = rep(methods$reason, each = length(n)),
    stringsAsFactors = FALSE
  )
}

#' @rdname compare_models
#' @param object A comparison from `compare_models()`.
#' @param new_data New observations for every model (see [sgais()]), or a source to read them
#'   from (see `data`).
#' @export
update.sgais_comparison <- function(object, new_data, ..., block_size = NULL,
                                    progress = default_progress()) {
  call <- sys.call()
  object <- validate_sgais_comparison(object, call)
  if (...length()) {
    abort("A comparison is continued with the settings its fits were made with; give no `...`.",
          call)
  }
  if (missing(new_data)) abort("`new_data` is missing: give the observations to add.", call)
  progress <- check_flag(progress, "progress", call)
  update_comparison(object, new_data, block_size, progress, call, "new_data")
}

#' @export
as.data.frame.sgais_comparison <- function(x, row.names = NULL, optional = FALSE, ...) {
  call <- sys.call()
  check_dots_empty(call, c("x", "row.names", "optional"), ...)
  validate_sgais_comparison(x, call)$trajectory
}

# The comparison after all observations: one row per model, best first, with the reason for its
# estimator.
comparison_final <- function(x) {
  tr <- x$trajectory
  last <- tr[tr$n == max(tr$n), ]
  last$reason <- x$methods$reason[match(as.character(last$model), x$methods$model)]
  last$method <- x$methods$method[match(as.character(last$model), x$methods$model)]
  last <- last[order(-last$log_evidence), ]
  rownames(last) <- NULL
  last
}

#' @export
format.sgais_comparison <- function(x, ...) {
  call <- sys.call()
  check_dots_empty(call, "x", ...)
  x <- validate_sgais_comparison(x, call)
  last <- comparison_final(x)
  shown <- data.frame(
    model = as.character(last$model),
    log_evidence = sprintf("%.3f", last$log_evidence),
    se = ifelse(is.na(last$log_evidence_se), "", sprintf("%.3f", last$log_evidence_se)),
    log_bf = sprintf("%.2f", last$log_bayes_factor),
    probability = format(signif(last$probability, 3), scientific = 3)
  )
  # an interval where some estimate has a standard error, and every one has one
  with_se <- !anyNA(last$log_evidence_se) && any(last$log_evidence_se > 0)
  if (with_se) {
    bf <- comparison_intervals(last, x$prior, "probability")
    shown$interval <- probability_interval_labels(bf$lower, bf$upper)
  }
  shown$estimator <- method_labels[last$method]
  if (all(!nzchar(shown$se))) shown$se <- NULL
  c(
    sprintf("<comparison of %d models on %s observations>", length(x$fits),
            format_count(max(x$trajectory$n))),
    print_width(shown, right = TRUE),
    "  log_bf: log Bayes factor against the best; probability: posterior, with the prior given",
    if (with_se) "  interval: the probability when every log evidence moves 2 SE for it or against it"
  )
}

# How prints name an estimator (compare_models()'s `method`).
method_labels <- c(exact = "closed form", importance_sampling = "importance sampling",
                   sgais = "SGAIS", sir = "SIR", sequential_sgmcmc = "sequential",
                   ais = "AIS", nested_sampling = "nested sampling",
                   online_nested_sampling = "online NS")

#' @export
print.sgais_comparison <- function(x, ...) {
  cat_lines(format(x, ...))
  invisible(x)
}

#' @export
summary.sgais_comparison <- function(object, ...) {
  call <- sys.call()
  check_dots_empty(call, "object", ...)
  object <- validate_sgais_comparison(object, call)
  tr <- object$trajectory
  best <- tapply(seq_len(nrow(tr)), tr$n, function(i) as.character(tr$model[i][which.max(tr$log_evidence[i])]))
  n <- as.numeric(names(best))
  changes <- c(TRUE, best[-1] != best[-length(best)])
  structure(
    list(final = comparison_final(object), prior = object$prior, methods = object$methods,
         leaders = data.frame(from_n = n[changes], best = unname(best[changes]))),
    class = "summary.sgais_comparison"
  )
}

#' @export
format.summary.sgais_comparison <- function(x, ...) {
  f <- x$final
  f$se <- f$log_evidence_se
  f$estimator <- paste0(method_labels[f$method], ": ", f$reason)
  c(
    sprintf("Comparison of %d models on %s observations (prior %s).", nrow(f),
            format_count(max(f$n)),
            paste(sprintf("%s %.3g", names(x$prior), x$prior), collapse = ", ")),
    "",
    "After all observations:",
    utils::capture.output(print(f[c("model", "log_evidence", "se", "log_bayes_factor",
                                    "probability")], row.names = FALSE, digits = 6)),
    "",
    "Estimators:",
    utils::capture.output(print(f[c("model", "estimator")], row.names = FALSE, right = FALSE)),
    "",
    "Best model as the data arrived:",
    utils::capture.output(print(x$leaders, row.names = FALSE))
  )
}

#' @export
print.summary.sgais_comparison <- function(x, ...) {
  cat_lines(format(x, ...))
  invisible(x)
}
