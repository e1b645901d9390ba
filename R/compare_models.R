#' Compare models on the same data as the data arrive
#'
#' Fits every model by [sgais()] on the same observations, in the same chunks, and compares them
#' along the way: for every prefix length \eqn{n} on the chunk grid, each model's log evidence
#' \eqn{\log \hat Z_k(n)} with its standard error (from replicates, or a single run's own, see
#' [sgais()]; none under the paper preset), its log Bayes
#' factor against the best model at that \eqn{n}, and the posterior model probabilities
#' \deqn{p(M_k \mid y_{1:n}) = \frac{p(M_k) Z_k(n)}{\sum_j p(M_j) Z_j(n)}}{p(M_k | y_1..n) =
#' p(M_k) Z_k(n) / sum_j p(M_j) Z_j(n)}
#' (thesis eq. 1.7). Because SGAIS updates the evidence chunk by chunk, the whole history of the
#' comparison costs one pass over the data per model. `update(comparison, new_data)` continues
#' every fit on new observations (see [sgais()], "Continuing a fit on new data").
#'
#' Every model is fitted with the same settings (`control` and `...`; but a model whose
#' observations are groups, a GLM with a random intercept, takes its own default `batch_size`:
#' see [logistic_regression()]) and the same `seed`: a model's fit depends only on the model,
#' the data and the seed, so adding a model to a
#' comparison or removing one never changes another model's fit. With `seed = NULL` one seed is
#' drawn from the session's random stream and used for all of them.
#'
#' Fits made separately by [sgais()] or [sgais_stream()] can be compared too (give them as
#' `models`, without `data`, or with `data` to continue them all), provided they are fits of the
#' same observations on the same chunks: the same number, and the same responses, which every
#' fit identifies by a digest (`fit$data_digest`, of the responses only, so models with other
#' covariates compare); fits of other observations are an error of class
#' `sgais_error_data_mismatch`.
#'
#' @section Streams and interrupts:
#' `data` can also be a stream source as in [sgais_stream()]: a CSV file, a database query or a
#' function returning the next rows. The rows are then read `block_size` at a time and every
#' model takes a block before the next is read (in-memory data are one block unless `block_size`
#' is given). The result is the same for every source and block size. An interrupt (Ctrl-C)
#' keeps the comparison of the blocks done, returned with a warning of class
#' `sgais_warning_interrupted`; an error of the source keeps it in the field `comparison` of an
#' error of class `sgais_error_stream`. Either continues with `update(comparison, new_data)`. An
#' interrupt during the only block (in-memory data without `block_size`) has nothing to keep.
#'
#' @section Formulas, and models that hold their data:
#' `models` can be formulas, with `family` saying which regression they are, e.g.
#' `compare_models(list(small = y ~ x1, large = y ~ x1 + x2), data, family = "gaussian")`: each
#' is built on `data` by the family's constructor (`"gaussian"`: [linear_regression()] with an
#' unknown noise variance; `"binomial"`: [logistic_regression()]; `"poisson"`:
#' [poisson_regression()]; `"negative_binomial"`: [negative_binomial_regression()]; `"robust"`:
#' [robust_regression()]; `"categorical"`: [softmax_regression()]; or [stats::gaussian()], [stats::binomial()], [stats::poisson()] with
#' their canonical links; or a function of `formula` and `data` returning a model, for any other
#' settings, e.g. `function(formula, data) linear_regression(formula, data, noise_sd = 2)`).
#'
#' Without `data`, models are compared on the observations they hold, which must be the same
#' (the same number and the same responses; for [custom_model()]s and [compiled_model()]s, the
#' same data, which is all their response); this is how models written in R or C, whose data
#' are theirs to define, are compared.
#'
#' @param models A named list of models ([linear_regression()], [softmax_regression()],
#'   [gaussian_mixture()], [custom_model()], ...), each built on data like `data`; they are
#'   fitted to `data` (through their specification, as new rows are in [sgais()]), so the
#'   comparison is on exactly the same observations. Their priors are those they were built
#'   with: the regressions' default prior (`prior = "autoscale"`) takes its scales from those
#'   rows, so build them on `data` itself or on representative rows (fewer than 100 give a
#'   warning of class `sgais_warning_autoscale_rows`). Or a named list of formulas, with `family`
#'   (see "Formulas, and models that hold their data"). Or a named list of fits from [sgais()] of
#'   the same observations.
#' @param data The observations, as the models' constructors take them (e.g. a data frame for
#'   models built from formulas, a matrix for mixtures), or a source to read them from (see
#'   `source` in [sgais_stream()]). Optional when `models` are fits, or models that hold the
#'   same observations.
#' @param family With formulas in `models`: which regression they are, a name (`"gaussian"`,
#'   `"binomial"`, `"poisson"`, `"negative_binomial"`, `"robust"`, `"categorical"`), a
#'   [stats::family()] object, or a function of `formula` and `data` that builds the model.
#' @param ... Settings for [sgais()], the same for every model (e.g. `chunk_size = 1000`).
#' @param block_size Rows read per block from a source; by default 20 chunks, and all of
#'   in-memory data. Blocks are grouped as in [sgais_stream()].
#' @param prior Prior model probabilities, in the order of `models` (normalised to sum to 1);
#'   `NULL` means equal.
#' @inheritParams sgais
#' @return An object of class `sgais_comparison`: a list with `fits` (the [sgais()] fits, named as
#'   `models`), `prior`, and `trajectory`, a data frame with one row per model and prefix length:
#'   `model`, `n`, `log_evidence`, `log_evidence_se`, `log_bayes_factor` (against the best model
#'   at that `n`) and `probability` (the posterior model probability). Use `print()`, `summary()`
#'   and `as.data.frame()` (the trajectory).
#' @seealso [sgais()], [detect_shifts()] (each model's trajectory scored for shifts)
#' @export
#' @examples
#' data <- simulate_linear_regression(5000, seed = 1)
#' models <- list(
#'   all = linear_regression(y ~ ., data),
#'   two = linear_regression(y ~ x1 + x2, data)
#' )
#' cmp <- compare_models(models, data[1:3000, ], seed = 1)
#' cmp
#' tail(as.data.frame(cmp))
#'
#' # and as more data arrive
#' cmp <- update(cmp, data[3001:5000, ])
#' summary(cmp)
#'
#' # fits made separately, of the same observations, compare too
#' compare_models(list(all = sgais(models$all, seed = 2), two = sgais(models$two, seed = 2)))
#'
#' # formulas, with the family of their regression (here unknown noise variance)
#' compare_models(list(one = y ~ x1, three = y ~ x1 + x2 + x3), data[1:500, ],
#'                family = "gaussian", seed = 1)
#'
#' # models that hold their data: compared on it
#' compare_models(list(all = models$all, two = models$two), seed = 1)
compare_models <- function(models, data, ..., family = NULL, control = sgais_control(),
                           prior = NULL, replicates = 1, block_size = NULL,
                           progress = default_progress(), seed = NULL) {
  call <- sys.call()
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
  formulas <- vapply(models, inherits, logical(1), "formula")
  if (any(formulas)) {
    if (missing(data)) {
      abort("`data` is missing: formulas in `models` are built on it (with `family`).", call)
    }
    models[formulas] <- models_of_formulas(models[formulas], data, family, call)
  } else if (!is.null(family)) {
    abort("`family` is for formulas in `models`; these models are built already.", call)
  }
  fitted <- vapply(models, inherits, logical(1), "sgais_fit")
  for (name in names) {
    if (!fitted[[name]] && !inherits(models[[name]], "sgais_model")) {
      abort(sprintf("`models$%s` must be an sgais model or a fit from sgais(), not %s.", name,
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
    if (...length() || !missing(control) || !missing(replicates) || !is.null(seed)) {
      abort(paste("Fits are compared (and continued) with their own settings, replicates and",
                  "random streams; give none of `...`, `control`, `replicates` or `seed`."), call)
    }
    fits <- lapply(models, validate_continuable, call = call)
    cmp <- new_sgais_comparison(fits, prior, call)
    if (missing(data)) return(cmp)
    return(compare_blocks(cmp$fits, NULL, data, block_size, prior, progress, call))
  }
  for (name in names) check_all_rows(models[[name]], call)
  if (missing(data)) check_same_observations(models, call)
  # each model's settings: the same but for a default that depends on the model (the mini-batch
  # of a model whose observations are groups, model_batch_size())
  settings <- lapply(models, function(m) {
    check_kernel_model(control_settings(control, list(...), "sgais", call, m), m, call)
  })
  replicates <- check_whole_number(replicates, "replicates", 1, call)
  check_seed(seed, call)
  # one seed for all, so that each fit depends on its own model alone
  if (is.null(seed)) seed <- sample.int(.Machine$integer.max, 1L)
  if (missing(data)) {
    if (!is.null(block_size)) abort("`block_size` is for `data`; the models hold theirs.", call)
    fits <- lapply(stats::setNames(names, names), function(name) {
      fit <- sgais_start(models[[name]], settings[[name]], replicates, progress, seed, call)
      # an interrupt keeps no comparison: the other models have not seen these observations
      if (!is.null(attr(fit, "interrupted"))) resignal_interrupt()
      fit
    })
    cmp <- new_sgais_comparison(fits, prior, call)
    warn_comparison(cmp, call)
    return(cmp)
  }
  new <- list(models = models, settings = settings, replicates = replicates, seed = seed)
  compare_blocks(NULL, new, data, block_size, prior, progress, call)
}

# Models built from the formulas of compare_models() on `data`, by the constructor `family`
# names (or is).
models_of_formulas <- function(formulas, data, family, call) {
  build <- family_constructor(family, call)
  if (!is.data.frame(data)) {
    abort(sprintf("With formulas in `models`, `data` must be a data frame, not %s.",
                  describe(data)), call)
  }
  lapply(formulas, function(formula) {
    model <- build(formula, data)
    if (!inherits(model, "sgais_model")) {
      abort(sprintf("`family` must build an sgais model from a formula and data; it returned %s.",
                    describe(model)), call)
    }
    model
  })
}

# The constructor of a model from a formula and data that `family` names (see compare_models()).
family_constructor <- function(family, call) {
  constructors <- list(
    gaussian = function(formula, data) linear_regression(formula, data, noise_sd = NULL),
    binomial = function(formula, data) logistic_regression(formula, data),
    poisson = function(formula, data) poisson_regression(formula, data),
    robust = function(formula, data) robust_regression(formula, data),
    categorical = function(formula, data) softmax_regression(formula, data),
    negative_binomial = function(formula, data) negative_binomial_regression(formula, data)
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

# Fits the models of `new` (a list of models, settings, replicates and seed), or continues the
# `fits`, on the rows of `source` (a stream source, see stream_source()), one block at a time:
# every model takes a block before the next is read, so an interrupt or an error of the source
# keeps the comparison of the blocks done. In-memory data are one block unless `block_size` is
# given. Returns the comparison, with each fit's unreliable-estimate warning named by its model.
compare_blocks <- function(fits, new, source, block_size, prior, progress, call, arg = "data") {
  names <- if (is.null(fits)) names(new$models) else names(fits)
  settings <- if (is.null(fits)) new$settings[[1]] else fits[[1]]$settings
  in_memory <- is_in_memory(source)
  if (is.null(fits) && in_memory) {
    for (name in names) {
      warn_autoscale_template(new$models[[name]], nrow_of(source), call, sprintf("Model `%s`", name))
    }
  }
  block_size <- if (!is.null(block_size)) check_whole_number(block_size, "block_size", 1, call)
    else if (in_memory) max(1, nrow_of(source)) else 20 * settings$chunk_size
  next_block <- grouped_blocks(stream_source(source, block_size, call, arg), block_size,
                               function() if (is.null(fits)) 0 else data_rows(fits[[1]]$model$data))
  on.exit(next_block(NULL), add = TRUE)
  # a bar per model fit for one block of data in memory; a count of rows for a stream
  one_block <- in_memory && block_size >= nrow_of(source)
  if (progress && !one_block) {
    seen <- if (is.null(fits)) 0 else fits[[1]]$n
    bar <- cli::cli_progress_bar(
      format = "Comparing {length(names)} models {cli::pb_spin} {format_count(seen)} observations | {cli::pb_elapsed}",
      total = NA, .auto_close = FALSE
    )
    on.exit(cli::cli_progress_done(id = bar), add = TRUE)
  }
  advance <- function(name, block) {
    fit <- if (is.null(fits)) {
      sgais_start(model_with_data(new$models[[name]], block, call), new$settings[[name]],
                  new$replicates, progress && one_block, new$seed, call)
    } else {
      fit <- fits[[name]]
      sgais_more(fit, model_add_rows(fit$model, block, call), progress && one_block)
    }
    # one replicate, interrupted inside the block: the block is not done for every model
    if (!is.null(attr(fit, "interrupted"))) signalCondition(interrupt_condition())
    fit
  }
  done <- function() if (is.null(fits)) NULL else new_sgais_comparison(fits, prior, call)
  stopped <- function() {
    sprintf("the comparison of the %s observations of the blocks done is kept",
            format_count(fits[[1]]$n))
  }
  added <- FALSE
  cmp <- tryCatch({
    repeat {
      block <- next_block(block_size)
      if (is.null(block)) break
      fits <- stats::setNames(lapply(names, advance, block = block), names) # all or nothing
      added <- TRUE
      if (progress && !one_block) {
        seen <- fits[[1]]$n
        cli::cli_progress_update(id = bar, set = seen)
      }
    }
    if (is.null(fits)) abort(sprintf("`%s` gave no rows.", arg), call)
    done()
  }, interrupt = function(e) {
    if (is.null(fits)) resignal_interrupt()
    warn(paste0("Interrupted: ", stopped(), ". Continue it with `update(comparison, new_data)` ",
                "on the observations after the first ", format_count(fits[[1]]$n), "."),
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

new_sgais_comparison <- function(fits, prior, call = NULL) {
  validate_sgais_comparison(structure(
    list(fits = fits, prior = prior, trajectory = comparison_trajectory(fits, prior)),
    class = "sgais_comparison"
  ), call)
}

# The fits must be SGAIS fits of the same observations, on the same chunk grid.
validate_sgais_comparison <- function(x, call = NULL) {
  fits <- x$fits
  ok <- is.list(fits) && length(fits) >= 2L && !is.null(names(fits)) &&
    all(vapply(fits, inherits, logical(1), "sgais_fit"))
  if (!ok) abort("A comparison must hold at least two named SGAIS fits.", call)
  # models whose observations are groups of rows (R/glm_mixed.R) are compared on the rows seen,
  # where their trajectories meet the others' (the ends of the blocks of data they were given)
  grouped <- any(vapply(fits, function(f) model_of_groups(f$model), logical(1)))
  n <- vapply(fits, function(f) if (grouped) model_rows(f$model) else f$n, numeric(1))
  if (length(unique(n)) != 1L) {
    abort(sprintf("The fits have seen different numbers of %s (%s); they cannot be compared.",
                  if (grouped) "rows" else "observations",
                  paste(sprintf("%s: %s", names(fits), format_count(n)), collapse = ", ")), call)
  }
  digests <- vapply(fits, function(f) as.character(f$data_digest)[1], character(1))
  if (!grouped && (anyNA(digests) || length(unique(digests)) != 1L)) {
    abort(sprintf(paste(
      "The fits are not of the same observations: they have seen %s each, but their responses",
      "differ (`data_digest`: %s); they cannot be compared."), format_count(n[1]),
      paste(sprintf("%s: %s", names(fits), digests), collapse = ", ")), call,
      "sgais_error_data_mismatch")
  }
  grids <- lapply(fits, function(f) f$trajectory$n)
  if (!grouped && !all(vapply(grids, identical, logical(1), grids[[1]]))) {
    abort("The fits do not share their chunks (`chunk_size`); they cannot be compared along n.", call)
  }
  if (!is.numeric(x$prior) || length(x$prior) != length(fits)) {
    abort("A comparison's `prior` must have one probability per fit.", call)
  }
  x
}

# One row per model and prefix length (rows, when a model's observations are groups; the
# prefixes all the fits have a point at): log evidence, its SE, the log Bayes factor against the
# best model at that n, and the posterior model probability (log-sum-exp over the models).
comparison_trajectory <- function(fits, prior) {
  # the rows seen at each point of each fit's trajectory, and the points all fits share
  rows <- lapply(fits, function(f) {
    d <- f$model$data
    if (is.null(d$unit_rows)) return(f$trajectory$n)
    cumsum(d$unit_rows - d$unit_context)[f$trajectory$n]
  })
  n <- Reduce(intersect, rows)
  at <- lapply(rows, match, x = n)
  log_z <- vapply(seq_along(fits), function(k) fits[[k]]$trajectory$log_evidence[at[[k]]],
                  numeric(length(n)))
  se <- vapply(seq_along(fits), function(k) fits[[k]]$trajectory$log_evidence_se[at[[k]]],
               numeric(length(n)))
  log_z <- matrix(log_z, nrow = length(n))
  se <- matrix(se, nrow = length(n))
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
  object$fits <- lapply(object$fits, validate_continuable, call = call)
  compare_blocks(object$fits, NULL, new_data, block_size, object$prior, progress, call,
                 "new_data")
}

#' @export
as.data.frame.sgais_comparison <- function(x, ...) {
  x$trajectory
}

# The comparison after all observations: one row per model, best first.
comparison_final <- function(x) {
  tr <- x$trajectory
  last <- tr[tr$n == max(tr$n), ]
  last <- last[order(-last$log_evidence), ]
  rownames(last) <- NULL
  last
}

#' @export
format.sgais_comparison <- function(x, ...) {
  last <- comparison_final(x)
  shown <- data.frame(
    model = as.character(last$model),
    log_evidence = sprintf("%.4f", last$log_evidence),
    se = ifelse(is.na(last$log_evidence_se), "", sprintf("%.4f", last$log_evidence_se)),
    log_bf = sprintf("%.3f", last$log_bayes_factor),
    probability = format(signif(last$probability, 4), scientific = 3)
  )
  with_se <- !anyNA(last$log_evidence_se)
  if (with_se) {
    # the log Bayes factor's SE against the best, and the probability's +/- 2 SE range
    shown$bf_se <- sprintf("%.3f", sqrt(last$log_evidence_se^2 + last$log_evidence_se[1]^2))
    shown$bf_se[1] <- ""
    bf <- comparison_intervals(last, x$prior, "probability")
    shown$interval <- sprintf("[%s, %s]", format(signif(bf$lower, 3), scientific = 3),
                              format(signif(bf$upper, 3), scientific = 3))
    shown <- shown[c("model", "log_evidence", "se", "log_bf", "bf_se", "probability", "interval")]
  }
  if (all(!nzchar(shown$se))) shown$se <- NULL
  c(
    sprintf("<SGAIS comparison of %d models on %s observations>", length(x$fits),
            format_count(max(x$trajectory$n))),
    utils::capture.output(print(shown, row.names = FALSE, right = TRUE)),
    "  (log_bf: log Bayes factor against the best model; probability: posterior, with the prior given)",
    if (with_se) paste("  (bf_se: the log Bayes factor's standard error; interval: the probability",
                       "when every log evidence moves up to 2 SE against it, or for it)")
  )
}

#' @export
print.sgais_comparison <- function(x, ...) {
  cat_lines(format(x, ...))
  invisible(x)
}

#' @export
summary.sgais_comparison <- function(object, ...) {
  tr <- object$trajectory
  best <- tapply(seq_len(nrow(tr)), tr$n, function(i) as.character(tr$model[i][which.max(tr$log_evidence[i])]))
  n <- as.numeric(names(best))
  changes <- c(TRUE, best[-1] != best[-length(best)])
  structure(
    list(final = comparison_final(object), prior = object$prior,
         leaders = data.frame(from_n = n[changes], best = unname(best[changes])),
         settings = object$fits[[1]]$settings),
    class = "summary.sgais_comparison"
  )
}

#' @export
format.summary.sgais_comparison <- function(x, ...) {
  c(
    sprintf("SGAIS comparison of %d models on %s observations (prior %s).", nrow(x$final),
            format_count(max(x$final$n)),
            paste(sprintf("%s %.3g", names(x$prior), x$prior), collapse = ", ")),
    "",
    "After all observations:",
    utils::capture.output(print(x$final[c("model", "log_evidence", "log_evidence_se",
                                          "log_bayes_factor", "probability")],
                                row.names = FALSE, digits = 8)),
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
