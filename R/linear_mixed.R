# Linear regression with random effects per group (`y ~ x + (1 | g)`, or random slopes, correlated
# `y ~ x + (1 + x | g)` or independent `(1 + x || g)`, in linear_regression()), the group effects
# integrated out: src/linear_mixed.c says how, and why each row then has a likelihood of its own.
# Each row carries its random-effect covariates (`data$zt`, q x n: 1 for the intercept, then the
# slopes' covariates as the design has them) and its group's sums over the rows before it
# (`data$st`, w x n, w = q (q + 1) / 2 + q + q p: sum z z', sum z y, sum z x'), computed when the
# rows are added (in C, ffi_group_prefix()) from the model's running totals `group_sums` (w x
# groups, over every row it has seen) and its group keys `groups` (as character, in the order first
# seen; `data$group` indexes them). A row keeps its statistics when rows are shuffled or subsampled.

# Whether `x` is a random-effect term, `( ... | g)` or `( ... || g)`.
is_bar_term <- function(x) {
  is.call(x) && identical(x[[1L]], as.name("(")) && is.call(x[[2L]]) &&
    (identical(x[[2L]][[1L]], as.name("|")) || identical(x[[2L]][[1L]], as.name("||")))
}

# The random-effect terms of a formula's right-hand side, as the calls inside their parentheses.
formula_bars <- function(x) {
  if (is.call(x)) {
    if (is_bar_term(x)) return(list(x[[2L]]))
    return(do.call(c, lapply(as.list(x)[-1L], formula_bars)))
  }
  NULL
}

has_bars <- function(formula) {
  inherits(formula, "formula") && length(formula) == 3L && length(formula_bars(formula[[3L]])) > 0L
}

# The right-hand side without its random-effect terms (NULL when nothing is left).
drop_bars <- function(x) {
  if (!is.call(x)) return(x)
  if (length(formula_bars(x)) == 0L) return(x)
  if (is_bar_term(x)) return(NULL)
  if (identical(x[[1L]], as.name("+")) && length(x) == 3L) {
    left <- drop_bars(x[[2L]])
    right <- drop_bars(x[[3L]])
    if (is.null(left)) return(right)
    if (is.null(right)) return(left)
    return(call("+", left, right))
  }
  NULL # a random-effect term inside another call: refused by the caller
}

# The fixed-effects formula, the grouping column and the random effects (`intercept`, the
# `slopes`' names, and whether they are `correlated`) of a formula with one random-effect term:
# `(1 | g)`, `(0 + x | g)` (one effect), independent effects `(1 + x || g)` or correlated ones
# `(1 + x | g)`; a classed error for what the model cannot represent yet.
parse_random_effects <- function(formula, call) {
  bars <- formula_bars(formula[[3L]])
  refuse <- function(message) abort(message, call, "sgais_error_random_effects")
  if (length(bars) > 1L) {
    refuse(sprintf(paste("`formula` has %d random-effect terms; the model takes one, such as",
                         "`(1 | g)` or `(1 + x || g)` (one grouping factor: its group effects are",
                         "integrated out group by group, which crossed or nested factors would",
                         "not allow)."), length(bars)))
  }
  bar <- bars[[1L]]
  shown <- paste(deparse(bar), collapse = " ")
  group <- bar[[3L]]
  if (!is.name(group)) {
    refuse(sprintf(paste("The grouping factor of `(%s)` must be one column of `data`, such as",
                         "`(1 | subject)`; make a column for a combined factor first."), shown))
  }
  lhs <- tryCatch(stats::terms(stats::as.formula(call("~", bar[[2L]]))),
                  error = function(e) refuse(sprintf("`(%s)` is not a random-effect term: %s",
                                                     shown, conditionMessage(e))))
  intercept <- attr(lhs, "intercept") == 1L
  slopes <- attr(lhs, "term.labels")
  q <- intercept + length(slopes)
  if (q == 0L) refuse(sprintf("`(%s)` has no random effect.", shown))
  if (q > 8L) refuse(sprintf("`(%s)` has %d random effects; the most is 8.", shown, q))
  rhs <- drop_bars(formula[[3L]])
  if (length(formula_bars(rhs %||% 1))) {
    refuse("`formula` has a random-effect term inside another term; write it as `+ (1 | g)`.")
  }
  if (is.null(rhs)) rhs <- 1
  # `y ~ . + (1 | g)`: the dot takes every column but the group's
  if ("." %in% all.vars(rhs)) rhs <- call("-", rhs, group)
  fixed <- formula
  fixed[[3L]] <- rhs
  list(fixed = fixed, group = as.character(group), intercept = intercept, slopes = slopes,
       shown = shown, correlated = q > 1L && identical(bar[[1L]], as.name("|")))
}

# The design columns (indices into `columns`) of the random slopes of `spec`, which must be
# numeric columns of the fixed-effects design; a classed error naming those that are not.
slope_columns <- function(spec, columns, call) {
  missing <- setdiff(spec$slopes, columns)
  if (length(missing)) {
    abort(sprintf(paste("The random slope%s on %s must be %s of the fixed effects too (numeric",
                        "covariates, as the design has them): add %s to the formula."),
                  if (length(missing) > 1) "s" else "", backticked(missing),
                  if (length(missing) > 1) "columns" else "a column", backticked(missing)),
          call, "sgais_error_random_effects")
  }
  match(spec$slopes, columns)
}

# The random-effect covariates (q x n) of the rows' design `a`: 1 for the intercept, then the
# slopes' columns (slope_columns()).
random_covariates <- function(spec, a, call) {
  cols <- slope_columns(spec, colnames(a), call)
  rbind(if (spec$intercept) rep(1, nrow(a)), t(a[, cols, drop = FALSE]), deparse.level = 0)
}

# The group keys of a column: its values as character (a factor's labels), missing ones refused.
group_keys <- function(column, name, what, call) {
  if (is.null(column)) {
    abort_mismatch(sprintf("%s has no column `%s`, the model's grouping factor.", what, name),
                   call, "sgais_error_missing_column", column = name)
  }
  if (!is.atomic(column) || !is.null(dim(column))) {
    abort(sprintf("The grouping factor `%s` of %s must be a vector (factor, character or numbers), not %s.",
                  name, what, describe(column)), call, "sgais_error_column_type", column = name)
  }
  keys <- as.character(column) # a factor's labels
  if (anyNA(keys)) {
    abort(sprintf("The grouping factor `%s` of %s has a missing value, at row %d.", name, what,
                  which(is.na(keys))[1L]), call, "sgais_error_non_finite", row = which(is.na(keys))[1L])
  }
  keys
}

# The rows `new_data` of a random-effects model as its data list, their statistics continuing
# from `groups` and `sums` (those of the rows before them); returns the data, and the groups and
# sums after them. `sequential = FALSE`: every row from `sums` alone, not from the others (the
# rows to predict). `rows`: the design already built (the data a model is built with).
linear_mixed_rows <- function(spec, new_data, groups, sums, call, arg = "new_data",
                              sequential = TRUE, rows = NULL) {
  what <- sprintf("`%s`", arg)
  if (is.null(rows)) {
    check_data_frame(new_data, what, call)
    new_data <- plain_columns(new_data, what, call)
    new_data <- apply_glm_rows(spec$mixed_rows, new_data, spec$full_formula, what, call)
    rows <- regression_rows(spec, new_data, call)
  }
  keys <- group_keys(new_data[[spec$group]], spec$group, what, call)
  check_response(rows$y, rows$what, call)
  if (length(keys) != length(rows$y)) {
    abort(sprintf("%s has %d rows but a design of %d.", what, length(keys), length(rows$y)), call)
  }
  fresh <- unique(keys[!keys %in% groups])
  if (length(fresh)) {
    groups <- c(groups, fresh)
    sums <- cbind(sums, matrix(0, nrow(sums), length(fresh)))
  }
  code <- match(keys, groups)
  xt <- by_observation(rows$a)
  zt <- random_covariates(spec, rows$a, call)
  y <- as.double(rows$y)
  if (sequential) {
    out <- .Call(C_ffi_group_prefix, xt, y, zt, code, sums)
    st <- out$st
    sums <- out$sums
  } else {
    st <- sums[, code, drop = FALSE]
    dimnames(st) <- NULL
  }
  list(data = list(xt = xt, y = y, group = code, zt = zt, st = st), groups = groups, sums = sums)
}

# How many statistics a row carries, with p covariates and q random effects: q (q + 1) / 2
# (sum z z', its lower triangle) + q (sum z y) + q p (sum z x').
mixed_stats_width <- function(p, q) q * (q + 1) / 2 + q + q * p

#' @exportS3Method
model_data.sgais_linear_mixed <- function(model, new_data, call = NULL) {
  spec <- spec_of(model, call)
  linear_mixed_rows(spec, new_data, character(0), matrix(0, nrow(model$data$st), 0), call)$data
}

#' @exportS3Method
model_with_data.sgais_linear_mixed <- function(model, new_data, call = NULL) {
  spec <- spec_of(model, call)
  rows <- linear_mixed_rows(spec, new_data, character(0), matrix(0, nrow(model$data$st), 0), call)
  model <- with_rows(model, rows$data)
  model$groups <- rows$groups
  model$group_sums <- rows$sums
  model
}

#' @exportS3Method
model_add_rows.sgais_linear_mixed <- function(model, new_data, call = NULL) {
  spec <- spec_of(model, call)
  rows <- linear_mixed_rows(spec, new_data, model$groups, model$group_sums, call)
  model <- append_rows(model, rows$data, call)
  model$groups <- rows$groups
  model$group_sums <- rows$sums
  model
}

# The first n rows: the group totals are those after them, from the last row of each group
# among them (its statistics plus itself: the same sums, to the last bit, as when the rows were
# added).
#' @exportS3Method
model_keep_first.sgais_linear_mixed <- function(model, n) {
  if (n == model$n) return(model)
  model <- model_keep_first.default(model, n)
  d <- model$data
  sums <- matrix(0, nrow(d$st), length(model$groups))
  last <- which(!duplicated(d$group, fromLast = TRUE))
  for (i in last) {
    # the row's terms as ffi_group_prefix() adds them: z_k z_l (l <= k), z_k y, z_k x_j
    z <- d$zt[, i]
    zz <- unlist(lapply(seq_along(z), function(k) z[k] * z[seq_len(k)]))
    sums[, d$group[i]] <- d$st[, i] + c(zz, z * d$y[i], as.vector(outer(d$xt[, i], z)))
  }
  model$group_sums <- sums
  model
}

# Rows to predict from a fit of the model: each from the groups' totals over the rows the fit
# has seen (a group the model has not seen starts from its prior), not from the other new rows.
#' @exportS3Method
model_for_prediction.sgais_linear_mixed <- function(model, new_data, call = NULL) {
  spec <- spec_of(model, call)
  rows <- linear_mixed_rows(spec, new_data, model$groups, model$group_sums, call,
                            sequential = FALSE)
  with_rows(model, rows$data)
}

# Builds the random-effects model for linear_regression() (see its "Random effects").
linear_mixed <- function(formula, data, noise_sd, group_sd, prior_sd, prior_sd_missing, prior,
                         prior_intercept, variance_shape, variance_scale, call, group_cor = NULL) {
  parsed <- parse_random_effects(formula, call)
  check_data_frame(data, "`data`", call)
  if (!parsed$group %in% names(data)) {
    abort(sprintf("`formula` groups by `%s`, which is not a column of `data`.", parsed$group),
          call, "sgais_error_missing_column", column = parsed$group)
  }
  group_keys(data[[parsed$group]], parsed$group, "`data`", call) # a missing group is an error
  rows_rule <- attr(data, "sgais_rows")
  prior <- default_prior(prior, prior_sd_missing)
  if (inherits(prior, "sgais_zellner_prior")) {
    abort("`g_prior()` and `zellner_siow_prior()` are priors of models without random effects.",
          call, "sgais_error_prior")
  }
  known_noise <- !is.null(noise_sd)
  if (known_noise) noise_sd <- check_hyper(noise_sd, "noise_sd", call)
  prior_sd <- check_hyper(prior_sd, "prior_sd", call)
  design <- regression_design(parsed$fixed, data, NULL, NULL, call)
  auto <- with_autoscale(design, prior, prior_intercept, if (known_noise) "linear" else "robust",
                         call, noise_sd)
  design <- auto$design
  check_response(design$y, design$what, call)
  sd_y <- stats::sd(design$y)
  # the scale that the defaults of the noise's and the group effects' priors take: the known
  # noise sd, else the response's sd (the rule of prior = "autoscale"), else 1
  unit <- if (known_noise) {
    noise_sd
  } else if (identical(prior, "autoscale") && is.finite(sd_y) && sd_y > 0) {
    sd_y
  } else {
    1
  }
  coef <- regression_prior(colnames(design$a), auto$prior, auto$prior_intercept, prior_sd, call)
  p <- ncol(design$a)
  coef_blocks <- coef$prior %||% prior_matrix(normal_prior(0, coef$prior_sd), p, call)
  names <- colnames(design$a)
  blocks <- list(coef_blocks)
  prior_text <- coef$description %||% sprintf("theta_j ~ N(0, sd = %s), independent",
                                              format(coef$prior_sd))
  hyper <- list(prior_sd = coef$prior_sd)
  if (known_noise) {
    hyper$noise_sd <- noise_sd
  } else {
    variance_shape <- check_hyper(variance_shape, "variance_shape", call)
    variance_scale <- check_hyper(variance_scale %||% unit^2, "variance_scale", call)
    sigma_prior <- inverse_gamma_prior(variance_shape, variance_scale)
    blocks <- c(blocks, list(scale_block(sigma_prior, length(names), "noise_sd", call)))
    names <- c(names, "log_sigma")
    prior_text <- sprintf("%s; %s", prior_text,
                          sub("exp(2 theta)", "sigma^2", sigma_prior$blocks[[1]]$label, fixed = TRUE))
  }
  spec <- c(design$spec, list(group = parsed$group, full_formula = formula,
                              mixed_rows = rows_rule, intercept = parsed$intercept,
                              slopes = parsed$slopes))
  spec$rows <- NULL # the row rules are applied once, with the group's column (linear_mixed_rows())
  zt <- random_covariates(spec, design$a, call) # (checks the slopes before the priors)
  q <- nrow(zt)
  effects <- c(if (parsed$intercept) "(Intercept)", parsed$slopes)
  # default group sd priors: half-normal, its scale the unit's for the intercept and the unit
  # over the covariate's sd for a slope (the rule of prior = "autoscale")
  spread <- apply(zt, 1L, stats::sd)
  scales <- ifelse(parsed$intercept & seq_len(q) == 1L, unit, unit / spread)
  ge <- group_effects_prior(parsed, effects, group_sd, group_cor, scales, length(names), call)
  hyper[names(ge$hyper)] <- ge$hyper
  blocks <- c(blocks, ge$blocks)
  names <- c(names, ge$names)
  prior_text <- paste0(prior_text, ge$text)
  hyper$prior <- do.call(cbind, blocks)
  spec$hyper <- hyper
  rows <- linear_mixed_rows(spec, data, character(0), matrix(0, mixed_stats_width(p, q), 0), call,
                            "data", rows = design)
  n_groups <- length(rows$groups)
  effect_text <- if (q == 1L && parsed$intercept) "u_g ~ N(0, group_sd^2)" else
    sprintf("%s normal effects of %s", if (parsed$correlated) "correlated" else "independent",
            paste(effects, collapse = ", "))
  new_sgais_model(
    family = "linear_mixed",
    data = rows$data,
    spec = spec,
    n = nrow(design$a),
    parameter_names = names,
    label = sprintf("Bayesian linear regression with random %s",
                    if (q == 1L && parsed$intercept) "intercepts" else "effects"),
    details = c(
      likelihood = sprintf(paste("%s ~ N(a'theta + z'u_g, sd = %s), %s for each of the %s groups",
                                 "of `%s`, integrated out"), spec$response,
                           if (known_noise) format(noise_sd) else "sigma", effect_text,
                           format_count(n_groups), parsed$group),
      prior = prior_text,
      scaling = if (is.null(auto$rule)) NULL else
        sub("; sigma ~ half-normal(sd(y))", "; sigma^2 ~ InvGamma(shape, var(y) scale)", auto$rule,
            fixed = TRUE),
      sampled = paste(c("theta", if (!known_noise) "log(sigma)",
                        if (is.null(hyper$group_sd)) "log(group sds)",
                        if (parsed$correlated && is.null(hyper$group_cor))
                          "atanh(their canonical partial correlations)"), collapse = ", ")
    ),
    formula = formula,
    groups = rows$groups,
    group_sums = rows$sums,
    class = "sgais_linear_mixed"
  )
}

# The priors of the q random effects of `parsed` (parse_random_effects(); `effects`, their
# names): their sds from `group_sd` (known numbers, one or one per effect, a prior for each, or a
# list of one prior per effect; NULL: half-normal with the `scales` given) and, when correlated,
# their correlation from `group_cor` (NULL: LKJ(1)). The parameters start at `start` (0-based).
# Returns list(hyper = the known `group_sd`, `correlated` and known `group_cor`, blocks = their
# prior blocks, names = their parameters' names, text = "; ..." for the model's prior line).
group_effects_prior <- function(parsed, effects, group_sd, group_cor, scales, start, call) {
  q <- length(effects)
  out <- list(hyper = list(), blocks = list(), names = character(0), text = "")
  add <- function(block, name, text) {
    out$blocks[[length(out$blocks) + 1L]] <<- block
    out$names <<- c(out$names, name)
    out$text <<- sprintf("%s; %s", out$text, text)
  }
  sd_names <- if (q == 1L && parsed$intercept) "log_group_sd" else
    sprintf("log_group_sd[%s]", effects)
  if (is.numeric(group_sd) && !inherits(group_sd, "sgais_prior")) {
    if (!length(group_sd) %in% c(1L, q)) {
      abort(sprintf("`group_sd` has %d values for %d random effect%s: give one, or one per effect.",
                    length(group_sd), q, if (q == 1L) "" else "s"), call, "sgais_error_prior")
    }
    out$hyper$group_sd <- rep_len(vapply(group_sd, check_hyper, numeric(1), "group_sd", call), q)
    out$text <- sprintf("; group sd%s %s (known)", if (q > 1) "s" else "",
                        paste(format(out$hyper$group_sd), collapse = ", "))
  } else {
    group_prior <- if (is.null(group_sd)) {
      lapply(scales, half_normal_prior)
    } else if (inherits(group_sd, "sgais_prior")) {
      rep(list(group_sd), q)
    } else if (is.list(group_sd) && length(group_sd) == q) {
      group_sd
    } else {
      abort(sprintf(paste("`group_sd` must be a positive number (a known sd), one per effect, a",
                          "prior such as `half_normal_prior()` or a list of %d of them; not %s."),
                    q, describe(group_sd)), call, "sgais_error_prior")
    }
    for (k in seq_len(q)) {
      add(scale_block(group_prior[[k]], start + k - 1L, "group_sd", call), sd_names[k],
          sub("exp(theta)", if (q == 1L) "group sd" else sprintf("group sd of %s", effects[k]),
              group_prior[[k]]$blocks[[1]]$label, fixed = TRUE))
    }
  }
  if (!parsed$correlated) {
    if (!is.null(group_cor)) {
      abort(sprintf(paste("`group_cor` is the correlation of correlated random effects, such as",
                          "`(1 + x | g)`; `(%s)` has %s."), parsed$shown,
                    if (q > 1) "independent ones" else "one"),
            call, "sgais_error_random_effects")
    }
    return(out)
  }
  out$hyper$correlated <- TRUE
  cor <- correlation_prior(group_cor %||% lkj_prior(1), effects, start + length(out$names), call)
  if (is.null(cor$block)) {
    out$hyper$group_cor <- cor$matrix
    out$text <- sprintf("%s; group effects' correlation known", out$text)
  } else {
    add(cor$block, cor$names,
        sub("correlation", "group effects' correlation", cor$label, fixed = TRUE))
  }
  out
}

# The correlation of correlated random effects (`effects`, their names) from `group_cor`: a known
# correlation matrix (list(matrix)), or an LKJ prior as the block C reads at parameter `start`
# (0-based), with the parameters' names and the prior's label (list(block, names, label)).
correlation_prior <- function(group_cor, effects, start, call) {
  q <- length(effects)
  if (is.numeric(group_cor) && is.matrix(group_cor)) {
    r <- group_cor
    ok <- nrow(r) == q && ncol(r) == q && all(is.finite(r)) && isSymmetric(unname(r)) &&
      all(diag(r) == 1) && all(abs(r) <= 1)
    pd <- ok && min(eigen(r, symmetric = TRUE, only.values = TRUE)$values) > 1e-10
    if (!pd) {
      abort(sprintf(paste("`group_cor` must be a %d x %d correlation matrix (symmetric, unit",
                          "diagonal, positive definite) of the effects %s, or `lkj_prior()`."),
                    q, q, paste(effects, collapse = ", ")), call, "sgais_error_prior")
    }
    storage.mode(r) <- "double"
    return(list(matrix = unname(r)))
  }
  if (!inherits(group_cor, "sgais_prior") || length(group_cor$blocks) != 1L ||
      group_cor$blocks[[1]]$kind != "lkj") {
    abort(sprintf(paste("`group_cor` must be `lkj_prior()` or a known %d x %d correlation matrix,",
                        "not %s."), q, q,
                  if (inherits(group_cor, "sgais_prior")) format_prior_kinds(group_cor) else
                    describe(group_cor)), call, "sgais_error_prior")
  }
  m <- prior_matrix(group_cor, q * (q - 1L) / 2L, call, "group_cor")
  m[2L, ] <- start
  pairs <- which(lower.tri(diag(q)), arr.ind = TRUE)
  pairs <- pairs[order(pairs[, 1L], pairs[, 2L]), , drop = FALSE] # by rows: (2,1), (3,1), (3,2)
  names <- sprintf("atanh_group_%s[%s,%s]", ifelse(pairs[, 2L] == 1L, "cor", "pcor"),
                   effects[pairs[, 1L]], effects[pairs[, 2L]])
  list(block = m, names = names, label = group_cor$blocks[[1]]$label)
}

# A one-parameter prior of a scale (`arg`: noise_sd or group_sd) at parameter `start` (0-based)
# as the 6-row block C reads: half-normal, half-t, exponential, inverse-gamma, or log-normal.
scale_block <- function(prior, start, arg, call) {
  kinds <- c("half_normal", "half_t", "exponential", "inverse_gamma", "normal")
  if (!inherits(prior, "sgais_prior") || length(prior$blocks) != 1L ||
      !prior$blocks[[1]]$kind %in% kinds || length(prior$blocks[[1]]$location) != 1L ||
      length(prior$blocks[[1]]$scale) != 1L) {
    abort(sprintf(paste("`%s` must be a positive number (a known sd) or the prior of one:",
                        "`half_normal_prior()`, `half_t_prior()`, `inverse_gamma_prior()`,",
                        "`exponential_prior()` or `log_normal_prior()`; not %s."), arg,
                  if (inherits(prior, "sgais_prior")) format_prior_kinds(prior) else describe(prior)),
          call, "sgais_error_prior")
  }
  m <- prior_matrix(prior, 1L, call, arg)
  m[2L, ] <- start
  m
}

#' @rdname exact_log_evidence
#' @export
exact_log_evidence.sgais_linear_mixed <- function(model, n = NULL) {
  call <- sys.call()
  check_all_rows(model, call)
  n <- check_prefix_lengths(n, model$n, call)
  h <- model$hyper
  p <- nrow(model$data$xt)
  m <- h$prior
  coef <- m[, m[2, ] < p, drop = FALSE]
  if (any(coef[1, ] != prior_kinds[["normal"]])) {
    abort(paste("`model` has a Student-t or Cauchy prior on its coefficients: its evidence has no",
                "closed form. Estimate it with `sgais()`."), call, "sgais_error_no_closed_form")
  }
  location <- rep(coef[4, ], coef[3, ])
  t2 <- rep(coef[5, ], coef[3, ])^2
  known <- !is.null(h$noise_sd) && !is.null(h$group_sd) &&
    (!isTRUE(h$correlated) || !is.null(h$group_cor))
  intercept_only <- nrow(model$data$zt) == 1L && isTRUE(model$spec$intercept)
  if (!known && !intercept_only) {
    abort(paste("`model` has random slopes with unknown sds or correlation: its evidence has no",
                "closed form (with known `noise_sd`, `group_sd` and `group_cor` it has). Estimate",
                "it with `sgais()` or `importance_sampling()`."),
          call, "sgais_error_no_closed_form")
  }
  vapply(n, function(k) {
    rows <- seq_len(k)
    xt <- model$data$xt[, rows, drop = FALSE]
    if (!intercept_only) {
      cov <- h$group_sd * (h$group_cor %||% diag(length(h$group_sd))) *
        rep(h$group_sd, each = length(h$group_sd))
      return(mixed_effects_log_evidence(xt, model$data$y[rows], model$data$zt[, rows, drop = FALSE],
                                        model$data$group[rows], h$noise_sd^2, cov,
                                        location, t2))
    }
    stats <- mixed_statistics(xt, model$data$y[rows], model$data$group[rows], location)
    if (known) return(mixed_log_evidence(stats, h$noise_sd^2, h$group_sd^2, t2))
    mixed_scale_quadrature(model, stats, t2, location)
  }, numeric(1))
}

# The same with q random effects per group (covariates zt, q x n) of known covariance G (q x q):
# S_g^-1 = (I - Z_g M_g^-1 Z_g') / s2 with M_g = s2 G^-1 + Z_g'Z_g, and
# log det S_g = (n_g - q) log s2 + log det M_g + log det G, so that A'S^-1 A, A'S^-1 r and
# r'S^-1 r take each group's Z'Z, Z'A and Z'r only (mixed_log_evidence() for the rest).
mixed_effects_log_evidence <- function(xt, y, zt, group, s2, G, m, t2) {
  q <- nrow(zt)
  p <- nrow(xt)
  r <- y - drop(crossprod(xt, m))
  z <- t(zt)
  pairs <- which(lower.tri(diag(q), diag = TRUE), arr.ind = TRUE)
  zz <- rowsum(z[, pairs[, 1], drop = FALSE] * z[, pairs[, 2], drop = FALSE], group, reorder = TRUE)
  x <- t(xt)
  zx <- rowsum(z[, rep(seq_len(q), each = p), drop = FALSE] * x[, rep(seq_len(p), q), drop = FALSE],
               group, reorder = TRUE)
  zr <- rowsum(z * r, group, reorder = TRUE)
  count <- tabulate(group)
  count <- count[count > 0]
  a_s_a <- tcrossprod(xt)
  b <- drop(xt %*% r)
  quad <- sum(r^2)
  chol_g <- chol(G)
  log_det_s <- sum(count - q) * log(s2) + length(count) * 2 * sum(log(diag(chol_g)))
  prior_precision <- s2 * chol2inv(chol_g)
  for (g in seq_along(count)) {
    M <- prior_precision
    M[pairs] <- M[pairs] + zz[g, ]
    M[pairs[, 2:1, drop = FALSE]] <- M[pairs]
    R <- chol(M)
    C <- matrix(zx[g, ], q, p, byrow = TRUE)
    u <- backsolve(R, C, transpose = TRUE)
    v <- backsolve(R, zr[g, ], transpose = TRUE)
    a_s_a <- a_s_a - crossprod(u)
    b <- b - drop(crossprod(u, v))
    quad <- quad - sum(v^2)
    log_det_s <- log_det_s + 2 * sum(log(diag(R)))
  }
  chol_p <- chol(a_s_a / s2 + diag(1 / t2, length(t2)))
  z2 <- backsolve(chol_p, b / s2, transpose = TRUE)
  -0.5 * (length(y) * log(2 * pi) + log_det_s + sum(log(t2)) + 2 * sum(log(diag(chol_p))) +
            quad / s2 - sum(z2^2))
}

# The sufficient statistics of the rows for mixed_log_evidence(), of r = y - A m (the response
# less the prior mean's prediction): each group's count and sums of the covariates (groups x p)
# and of r, and the scatter within the groups, W = A_c'A_c, A_c'r_c and r_c'r_c (A_c, r_c: less
# their group's means; computed from the centred rows, not as differences of sums, so that W's
# intercept row stays exactly 0 and W positive semi-definite).
mixed_statistics <- function(xt, y, group, m) {
  r <- y - drop(crossprod(xt, m))
  count <- tabulate(group)
  used <- count > 0
  sx <- rowsum(t(xt), group, reorder = TRUE)
  sr <- drop(rowsum(r, group, reorder = TRUE))
  slot <- cumsum(used)[group] # each row's group among those present
  xc <- t(xt) - sx[slot, , drop = FALSE] / count[used][slot]
  rc <- r - sr[slot] / count[used][slot]
  list(count = count[used], sx = sx, sr = sr, w = crossprod(xc), wr = drop(crossprod(xc, rc)),
       rr = sum(rc^2), n = length(y))
}

# log N(y; A m, S + A diag(t2) A'), S block-diagonal with s2 I + g2 11' for each group, from
# mixed_statistics(). S_g^-1 = (I - c_g 11') / s2 with c_g = g2 / (s2 + n_g g2), so with
# w_g = s2 / (s2 + n_g g2) = 1 - n_g c_g and the group means' part split from the scatter
# within the groups, A'S^-1 A = (W + sum_g w_g s_g s_g' / n_g) / s2 (s_g: the group's sums),
# and likewise A'S^-1 r and r'S^-1 r, every term >= 0. With log det S_g = n_g log s2 +
# log(1 + n_g g2 / s2), P = diag(1 / t2) + A'S^-1 A = R'R, b = A'S^-1 r and z = R^-T b,
# Woodbury and the determinant lemma give
# log Z = -(N log(2 pi) + log det S + sum(log t2) + 2 sum(log diag R) + r'S^-1 r - z'z) / 2.
mixed_log_evidence <- function(stats, s2, g2, t2) {
  k <- s2 / (s2 + stats$count * g2) / stats$count
  a_s_a <- (stats$w + crossprod(stats$sx * sqrt(k))) / s2
  b <- (stats$wr + drop(crossprod(stats$sx, k * stats$sr))) / s2
  quad <- (stats$rr + sum(k * stats$sr^2)) / s2
  log_det_s <- sum(stats$count * log(s2) + log1p(stats$count * g2 / s2))
  chol_p <- chol(a_s_a + diag(1 / t2, length(t2)))
  z <- backsolve(chol_p, b, transpose = TRUE)
  -0.5 * (stats$n * log(2 * pi) + log_det_s + sum(log(t2)) + 2 * sum(log(diag(chol_p))) +
            quad - sum(z^2))
}

# With the noise sd, the group sd or both unknown: log of the integral of
# p(log sigma, log tau) Z(sigma, tau) over the unknown ones (Z: mixed_log_evidence(), the
# coefficients integrated out in closed form), by the trapezoid rule on a grid in log sigma and
# log tau. The grid is centred at the integrand's mode, spaced by two thirds of the integrand's
# half-width along each axis (where it falls by 1/2 in log: an sd for a Gaussian, found by
# bisection, so that it is right for posteriors as narrow as 10^6 rows make them, where a
# finite-difference Hessian is not), and grows on each side until the integrand on the grid's
# edge is e^-40 of its peak: the trapezoid rule's error on a smooth integrand that has decayed
# that far falls exponentially with the spacing (on a Gaussian, about exp(-2 pi^2 / h^2) with
# h the spacing in sds: below e^-44 at this one;
# Trefethen & Weideman 2014, "The exponentially convergent trapezoidal rule"). The prior of the
# scales is the model's own (its C blocks, through model_evaluate()); they are independent, so
# on the grid it is a sum of each axis's part.
mixed_scale_quadrature <- function(model, stats, t2, location) {
  h <- model$hyper
  free <- c(sigma = is.null(h$noise_sd), tau = is.null(h$group_sd))
  # log p(beta = location) of the normal coefficient blocks, taken off model_evaluate()'s
  log_prior_beta <- sum(-0.5 * log(2 * pi * t2))
  # scales beyond e^+-50 of the data's are refused (the prior has no mass there)
  start <- c(if (free[["sigma"]]) 0.5 * log(max(stats$rr, 1e-300) / stats$n), if (free[["tau"]]) 0)
  finite <- function(expr) {
    v <- tryCatch(expr, error = function(e) -Inf)
    if (length(v) == 1L && is.finite(v)) v else -Inf
  }
  log_prior <- function(u) {
    if (any(abs(u - start) > 50)) return(-Inf)
    finite(model_evaluate(model, c(location, u), n = 0L)$log_prior - log_prior_beta)
  }
  log_z <- function(u) {
    s <- if (free[["sigma"]]) exp(u[1]) else h$noise_sd
    g <- if (free[["tau"]]) exp(u[sum(free)]) else h$group_sd
    finite(mixed_log_evidence(stats, s^2, g^2, t2))
  }
  f <- function(u) {
    lp <- log_prior(u)
    if (lp == -Inf) lp else lp + log_z(u)
  }
  d <- sum(free)
  one <- d == 1L
  opt <- stats::optim(start, function(u) -max(f(u), -1e300),
                      method = if (one) "Brent" else "BFGS",
                      lower = if (one) start - 50 else -Inf, upper = if (one) start + 50 else Inf,
                      control = list(maxit = 500, reltol = 1e-12))
  mode <- opt$par
  # the half-width along axis k on one side (direction +-1), by doubling then bisection
  half_width <- function(k, direction, centre, peak) {
    at <- function(w) {
      u <- centre
      u[k] <- u[k] + direction * w
      f(u) - (peak - 0.5)
    }
    lo <- 0
    hi <- 1
    while (at(hi) > 0 && hi < 100) {
      lo <- hi
      hi <- 2 * hi
    }
    for (i in 1:60) {
      mid <- if (lo == 0) hi / 2 else sqrt(lo * hi)
      if (at(mid) > 0) lo <- mid else hi <- mid
      if (lo > 0 && hi / lo < 1 + 1e-3) break
    }
    hi
  }
  # refine the mode along each axis (BFGS's finite differences are coarse for narrow
  # posteriors), then the widths
  for (pass in 1:2) {
    for (k in seq_len(d)) {
      w <- mean(c(half_width(k, -1, mode, f(mode)), half_width(k, 1, mode, f(mode))))
      line <- stats::optimize(function(v) {
        u <- mode
        u[k] <- v
        f(u)
      }, mode[k] + c(-5, 5) * w, maximum = TRUE, tol = w * 1e-6)
      mode[k] <- line$maximum
    }
  }
  peak <- f(mode)
  step <- vapply(seq_len(d), function(k) {
    mean(c(half_width(k, -1, mode, peak), half_width(k, 1, mode, peak))) / 1.5
  }, numeric(1))
  # points of each axis on each side of the mode, grown until the edges are e^-40 of the peak
  # (about 9 half-widths)
  reach <- matrix(15, d, 2)
  repeat {
    axes <- lapply(seq_len(d), function(k) mode[k] + step[k] * seq(-reach[k, 1], reach[k, 2]))
    grid <- as.matrix(expand.grid(axes))
    prior_axes <- lapply(seq_len(d), function(k) {
      vapply(axes[[k]], function(v) {
        u <- mode
        u[k] <- v
        log_prior(u)
      }, numeric(1))
    })
    prior_grid <- Reduce(`+`, lapply(seq_len(d), function(k) {
      prior_axes[[k]][match(grid[, k], axes[[k]])]
    })) - (d - 1) * log_prior(mode)
    values <- prior_grid
    keep <- is.finite(values)
    values[keep] <- values[keep] + apply(grid[keep, , drop = FALSE], 1L, log_z)
    grown <- FALSE
    for (k in seq_len(d)) {
      for (side in 1:2) {
        edge <- grid[, k] == (if (side == 1) min(axes[[k]]) else max(axes[[k]]))
        if (max(values[edge]) > peak - 40 && reach[k, side] < 3000) {
          reach[k, side] <- 2 * reach[k, side]
          grown <- TRUE
        }
      }
    }
    if (!grown) break
  }
  log_sum_exp(values) + sum(log(step))
}
