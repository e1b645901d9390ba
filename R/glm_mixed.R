# Logistic, Poisson and negative binomial regression with random effects per group (`y ~ x +
# (1 | g)`, or up to three effects such as `(1 + x | g)`, in logistic_regression(),
# poisson_regression() and negative_binomial_regression()), each group's effects integrated out
# by adaptive Gauss-Hermite quadrature (src/glm_mixed.c says how, and why). The model's
# observations are units of rows of one group: its data hold the rows (`xt`, `y`, `offset`, and
# for binomial counts `trials`, one column or element per row, the rows of a unit together and
# the units in order) and, one per
# unit, `unit_rows` (how many rows), `unit_context` (how many of them, first, are the group's
# earlier rows, which the others are conditioned on) and `unit_group` (which of the model's
# `groups`, the group keys as character in the order first seen). A model built on data makes
# one unit of each group's rows; rows added later (a stream's next block) make a unit for each
# group they have rows of, with the group's earlier rows as its context.

# The Gauss-Hermite rule for the weight e^(-x^2) with q nodes, as the 2 x q matrix C reads
# (nodes, log weights), by Golub and Welsch (1969): the nodes are the eigenvalues of the
# symmetric tridiagonal Jacobi matrix of the Hermite polynomials, the weights sqrt(pi) times the
# squared first components of its eigenvectors.
gauss_hermite <- function(q) {
  jacobi <- matrix(0, q, q)
  if (q > 1L) {
    off <- sqrt(seq_len(q - 1L) / 2)
    jacobi[cbind(seq_len(q - 1L), 2:q)] <- off
    jacobi[cbind(2:q, seq_len(q - 1L))] <- off
  }
  e <- eigen(jacobi, symmetric = TRUE)
  rbind(e$values, log(sqrt(pi) * e$vectors[1L, ]^2), deparse.level = 0)
}

# The Gauss-Hermite rules, as the 3-row matrix C reads (the fewest rows of an integral a rule is
# for, then its nodes and log weights), for q random effects per group (a rule's grid is the
# product of q copies of it: a node costs a pass over a group's rows, and n nodes per axis cost
# n^q passes). One effect: 21 nodes for integrals over fewer than 200 rows, 15 from
# 200. A group of few rows, and of rare events with a large group sd, has an integrand far from a
# Gaussian (its left tail is the prior's), where the rule converges slowly. Two effects: 9
# nodes per axis below 200 rows, 7 from 200 (81 and 49 nodes); three: 7 and 5 (343 and 125).
# The errors of these rules against finer ones are in inst/design.md, "Measurements behind the
# defaults".
glmm_quadrature <- function(q = 1L) {
  nodes <- switch(q, c(21L, 15L), c(9L, 7L), c(7L, 5L))
  cbind(rbind(0, gauss_hermite(nodes[1])), rbind(200, gauss_hermite(nodes[2])), deparse.level = 0)
}

# (binomial: logistic regression of binomial counts, whose rows have trials)
glmm_family_codes <- c(logistic = 1L, poisson = 2L, negative_binomial = 3L, binomial = 4L)

# The rows of `new_data` for a model of `spec`: the base family's data (xt, y, offset, and
# trials for binomial counts) and their group keys. The row rules (weights, missing values) are
# applied here, once, to the rows and their group keys together; the data a model is built with
# (`arg` "data") have had them applied already (glm_rows()).
glm_mixed_rows <- function(spec, new_data, call, arg = "new_data") {
  what <- sprintf("`%s`", arg)
  check_data_frame(new_data, what, call)
  if (arg != "data") {
    new_data <- apply_glm_rows(spec$mixed_rows, new_data, spec$full_formula, what, call)
  }
  base <- structure(list(spec = spec), class = c(spec$base_class, "sgais_model"))
  rows <- model_data(base, new_data, call)
  keys <- group_keys(new_data[[spec$group]], spec$group, what, call)
  if (length(keys) != length(rows$y)) {
    abort(sprintf("%s has %d rows but a design of %d.", what, length(keys), length(rows$y)), call)
  }
  if (is.null(rows$offset)) rows$offset <- numeric(length(rows$y))
  list(rows = rows[intersect(c("xt", "y", "offset", "trials"), names(rows))], keys = keys)
}

# Units of `rows` (glm_mixed_rows()): one per group among them, its rows in their order, after
# its context, the group's earlier rows in `held` (the data list the model holds; NULL: none),
# copied. `groups`: the group keys so far. `each_row`: one unit per row (rows to predict, each
# from its group's earlier rows, not from the other new ones). Returns the data list and the
# groups after them. (Finding a group's earlier rows scans the units held, so adding rows costs
# O(groups x units): fine for blocks of a stream, slow for many small ones.)
glm_mixed_units <- function(rows, groups, held = NULL, each_row = FALSE) {
  fresh <- unique(rows$keys[!rows$keys %in% groups])
  groups <- c(groups, fresh)
  code <- match(rows$keys, groups)
  unit_of <- if (each_row) seq_along(code) else match(code, unique(code))
  ord <- order(unit_of) # stable: a group's rows keep their order
  unit_group <- code[!duplicated(unit_of)] # unit_of numbers the units as they first appear
  own <- tabulate(unit_of, max(0L, unit_of))
  context <- lapply(unit_group, function(g) glm_mixed_group_rows(held, g))
  n_context <- lengths(context)
  # each unit's context rows (from `held`), then its own rows
  from_held <- unlist(context, use.names = FALSE)
  unit_start <- cumsum(c(0L, n_context + own))[seq_along(own)]
  own_at <- unlist(lapply(seq_along(own), function(u) unit_start[u] + n_context[u] + seq_len(own[u])))
  held_at <- unlist(lapply(seq_along(own), function(u) unit_start[u] + seq_len(n_context[u])))
  total <- sum(own) + length(from_held)
  pick <- function(new, old) {
    if (is.matrix(new)) {
      out <- matrix(0, nrow(new), total)
      out[, own_at] <- new[, ord]
      if (length(held_at)) out[, held_at] <- old[, from_held]
    } else {
      out <- numeric(total)
      out[own_at] <- new[ord]
      if (length(held_at)) out[held_at] <- old[from_held]
    }
    out
  }
  data <- list(
    xt = pick(rows$rows$xt, held$xt), y = pick(rows$rows$y, held$y),
    offset = pick(rows$rows$offset, held$offset),
    trials = if (!is.null(rows$rows$trials)) pick(rows$rows$trials, held$trials),
    unit_rows = as.integer(own + n_context), unit_context = as.integer(n_context),
    unit_group = as.integer(unit_group)
  )
  data <- data[!vapply(data, is.null, logical(1))]
  list(data = data, groups = groups)
}

# The columns of `held` (a glm_mixed model's data) holding the rows of group `g`, in order: the
# own rows (not the context) of its units.
glm_mixed_group_rows <- function(held, g) {
  if (is.null(held)) return(integer(0))
  units <- which(held$unit_group == g)
  if (!length(units)) return(integer(0))
  start <- cumsum(c(0L, held$unit_rows))
  unlist(lapply(units, function(u) start[u] + seq.int(held$unit_context[u] + 1L, held$unit_rows[u])),
         use.names = FALSE)
}

#' @exportS3Method
model_data.sgais_glm_mixed <- function(model, new_data, call = NULL) {
  spec <- spec_of(model, call)
  glm_mixed_units(glm_mixed_rows(spec, new_data, call), character(0))$data
}

#' @exportS3Method
model_with_data.sgais_glm_mixed <- function(model, new_data, call = NULL) {
  spec <- spec_of(model, call)
  units <- glm_mixed_units(glm_mixed_rows(spec, new_data, call), character(0))
  model <- with_rows(model, units$data)
  model$groups <- units$groups
  model
}

#' @exportS3Method
model_add_rows.sgais_glm_mixed <- function(model, new_data, call = NULL) {
  spec <- spec_of(model, call)
  units <- glm_mixed_units(glm_mixed_rows(spec, new_data, call), model$groups, model$data)
  model <- append_rows(model, units$data, call)
  model$groups <- units$groups
  model
}

# Each row to predict is a unit of its own, conditioned on its group's rows in the model (a
# group the model has not seen starts from the prior).
#' @exportS3Method
model_for_prediction.sgais_glm_mixed <- function(model, new_data, call = NULL) {
  spec <- spec_of(model, call)
  units <- glm_mixed_units(glm_mixed_rows(spec, new_data, call), model$groups, model$data,
                           each_row = TRUE)
  with_rows(model, units$data)
}

# Whether a regression constructor's call asks for random effects (a `( | )` term in `formula`),
# with the errors of a call that mixes them with what they do not take (linear_regression() and
# the GLMs; `offset` for the count models).
random_effects_call <- function(formula, x, y, group_sd, call, offset = NULL, group_cor = NULL) {
  if (has_bars(formula)) {
    if (!is.null(x) || !is.null(y)) abort("Give either `formula` and `data` or `x` and `y`, not both.", call)
    if (!is.null(offset)) {
      abort("Give the offset of a formula in the formula, as in `y ~ x + offset(log(t)) + (1 | g)`.",
            call)
    }
    return(TRUE)
  }
  if (!is.null(group_sd)) {
    abort("`group_sd` is the sd of random effects: give it with a term such as `(1 | g)` in `formula`.",
          call, "sgais_error_random_effects")
  }
  if (!is.null(group_cor)) {
    abort(paste("`group_cor` is the correlation of correlated random effects: give it with a",
                "term such as `(1 + x | g)` in `formula`."), call, "sgais_error_random_effects")
  }
  FALSE
}

# Builds the random-effects model for logistic_regression(), poisson_regression() and
# negative_binomial_regression() (`kind`, a name of glmm_family_codes); `base_args` are the
# arguments of the family's constructor but the formula and data.
glm_mixed <- function(kind, formula, data, base_args, group_sd, call, group_cor = NULL) {
  parsed <- parse_random_effects(formula, call)
  check_data_frame(data, "`data`", call)
  if (!parsed$group %in% names(data)) {
    abort(sprintf("`formula` groups by `%s`, which is not a column of `data`.", parsed$group),
          call, "sgais_error_missing_column", column = parsed$group)
  }
  constructor <- switch(kind, logistic = logistic_regression, poisson = poisson_regression,
                        negative_binomial = negative_binomial_regression)
  base <- tryCatch(do.call(constructor, c(list(formula = parsed$fixed, data = data), base_args)),
                   sgais_error = function(e) {
                     e$call <- call # the error is this call's
                     stop(e)
                   })
  p <- nrow(base$data$xt)
  columns <- base$parameter_names[seq_len(p)]
  slopes <- slope_columns(parsed, columns, call)
  effects <- c(if (parsed$intercept) "(Intercept)", parsed$slopes)
  if (length(effects) > 3L) {
    abort(sprintf(paste("`(%s)` has %d random effects; a GLM takes at most 3 per group (each",
                        "group's integral is on a grid of nodes^q points)."),
                  parsed$shown, length(effects)), call, "sgais_error_random_effects")
  }
  spec <- c(base$spec, list(group = parsed$group, full_formula = formula,
                            mixed_rows = attr(data, "sgais_rows"), base_class = class(base)[1L]))
  spec$rows <- NULL # the row rules are applied once, with the group's column (glm_mixed_rows())
  rows <- glm_mixed_rows(spec, data, call, "data")
  units <- glm_mixed_units(rows, character(0))
  hyper <- base$hyper
  blocks <- list(hyper[["prior"]] %||% prior_matrix(normal_prior(0, hyper$prior_sd), p, call))
  names <- base$parameter_names
  prior_text <- base$details[["prior"]]
  if (kind == "negative_binomial") {
    blocks <- c(blocks, list(scale_block(half_normal_prior(hyper$overdispersion_prior), p,
                                         "overdispersion_prior", call)))
  }
  # the default sd priors: half-normal(1) on the linear predictor's scale for an intercept, where
  # a group sd of 1 moves the odds (or the mean) of a group by a factor of e, and half-normal(1 /
  # sd(x)) for a slope of x, the same effect at one sd of x
  # (binomial counts: over the trials, as the fixed effects' default prior)
  spread <- apply(rows$rows$xt[slopes, , drop = FALSE], 1L, weighted_sd, rows$rows$trials)
  scales <- c(if (parsed$intercept) 1, 1 / ifelse(is.finite(spread) & spread > 0, spread, 1))
  ge <- group_effects_prior(parsed, effects, group_sd, group_cor, scales, length(names), call)
  hyper[names(ge$hyper)] <- ge$hyper
  blocks <- c(blocks, ge$blocks)
  names <- c(names, ge$names)
  prior_text <- paste0(prior_text, ge$text)
  hyper$effects <- as.integer(c(if (parsed$intercept) 0L, slopes))
  hyper$glmm_family <- glmm_family_codes[[if (is.null(base$data$trials)) kind else "binomial"]]
  hyper$quadrature <- glmm_quadrature(length(effects))
  hyper$prior <- do.call(cbind, blocks)
  spec$hyper <- hyper
  n_groups <- length(units$groups)
  details <- base$details
  intercept_only <- length(effects) == 1L && parsed$intercept
  details[["likelihood"]] <- sprintf(
    "%s, with %s added to a'theta for each of the %s groups of `%s`, integrated out",
    sub(", a = row of the design", "", details[["likelihood"]], fixed = TRUE),
    if (intercept_only) "u_g ~ N(0, group_sd^2)" else
      sprintf("z'u_g, %s normal effects of %s,", if (parsed$correlated) "correlated" else
                "independent", paste(effects, collapse = ", ")),
    format_count(n_groups), parsed$group)
  details[["prior"]] <- prior_text
  sds <- if (length(effects) == 1L) "log(group sd)" else "log(group sds)"
  details[["sampled"]] <- paste(c("theta", if (kind == "negative_binomial") "log(omega)",
                                  if (is.null(hyper$group_sd)) sds,
                                  if (parsed$correlated && is.null(hyper$group_cor))
                                    "atanh(their canonical partial correlations)"),
                                collapse = ", ")
  new_sgais_model(
    family = "glm_mixed",
    data = units$data,
    spec = spec,
    n = n_groups,
    parameter_names = names,
    label = sprintf("%s with %s", base$label,
                    if (intercept_only) "a random intercept" else "random effects"),
    details = details,
    formula = formula,
    groups = units$groups,
    class = "sgais_glm_mixed"
  )
}
