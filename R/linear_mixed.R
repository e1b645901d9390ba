# Linear regression with a random intercept per group (`y ~ x + (1 | g)` in linear_regression()),
# the group effects integrated out: src/linear_mixed.c says how, and why each row then has a
# likelihood of its own. Each row carries its group's count, sum of y and sums of the
# covariates over the rows before it (`data$st`, p + 2 x n), computed when the rows are added
# (in C, ffi_group_prefix()), from the model's running totals `group_sums` (p + 2 x groups, over
# every row it has seen) and its group keys `groups` (as character, in the order first seen;
# `data$group` indexes them). A row keeps its statistics when rows are shuffled or subsampled.

# The random-effect terms `( ... | g)` of a formula's right-hand side, as calls.
formula_bars <- function(x) {
  if (is.call(x)) {
    if (identical(x[[1L]], as.name("(")) && is.call(x[[2L]]) &&
        (identical(x[[2L]][[1L]], as.name("|")) || identical(x[[2L]][[1L]], as.name("||")))) {
      return(list(x[[2L]]))
    }
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
  if (identical(x[[1L]], as.name("(")) && length(formula_bars(x)) == 1L &&
      is.call(x[[2L]]) && (identical(x[[2L]][[1L]], as.name("|")) ||
                           identical(x[[2L]][[1L]], as.name("||")))) {
    return(NULL)
  }
  if (identical(x[[1L]], as.name("+")) && length(x) == 3L) {
    left <- drop_bars(x[[2L]])
    right <- drop_bars(x[[3L]])
    if (is.null(left)) return(right)
    if (is.null(right)) return(left)
    return(call("+", left, right))
  }
  NULL # a random-effect term inside another call: refused by the caller
}

# The fixed-effects formula and the grouping column of a formula with one `(1 | g)` term, or a
# classed error for what the model cannot represent yet.
parse_random_intercept <- function(formula, call) {
  bars <- formula_bars(formula[[3L]])
  refuse <- function(message) abort(message, call, "sgais_error_random_effects")
  if (length(bars) > 1L) {
    refuse(sprintf(paste("`formula` has %d random-effect terms; the model takes one, `(1 | g)`",
                         "(one grouping factor: its group effects are integrated out group by",
                         "group, which crossed or nested factors would not allow)."), length(bars)))
  }
  bar <- bars[[1L]]
  lhs <- bar[[2L]]
  group <- bar[[3L]]
  if (!identical(lhs, 1) && !identical(lhs, 1L)) {
    refuse(sprintf(paste("`formula` has the random-effect term `(%s)`; the model has random",
                         "intercepts only, `(1 | g)`: random slopes are not supported yet."),
                   paste(deparse(bar), collapse = " ")))
  }
  if (!is.name(group)) {
    refuse(sprintf(paste("The grouping factor of `(%s)` must be one column of `data`, such as",
                         "`(1 | subject)`; make a column for a combined factor first."),
                   paste(deparse(bar), collapse = " ")))
  }
  rhs <- drop_bars(formula[[3L]])
  if (length(formula_bars(rhs %||% 1))) {
    refuse("`formula` has a random-effect term inside another term; write it as `+ (1 | g)`.")
  }
  if (is.null(rhs)) rhs <- 1
  # `y ~ . + (1 | g)`: the dot takes every column but the group's
  if ("." %in% all.vars(rhs)) rhs <- call("-", rhs, group)
  fixed <- formula
  fixed[[3L]] <- rhs
  list(fixed = fixed, group = as.character(group))
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
  keys <- if (is.factor(column)) as.character(column) else as.character(column)
  if (anyNA(keys)) {
    abort(sprintf("The grouping factor `%s` of %s has a missing value, at row %d.", name, what,
                  which(is.na(keys))[1L]), call, "sgais_error_non_finite", row = which(is.na(keys))[1L])
  }
  keys
}

# The rows `new_data` of a random-intercept model as its data list, their statistics continuing
# from `groups` and `sums` (those of the rows before them); returns the data, and the groups and
# sums after them. `sequential = FALSE`: every row from `sums` alone, not from the others (the
# rows to predict).
# `rows`: the design already built (the data a model is built with).
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
  y <- as.double(rows$y)
  if (sequential) {
    out <- .Call(C_ffi_group_prefix, xt, y, code, sums)
    st <- out$st
    sums <- out$sums
  } else {
    st <- sums[, code, drop = FALSE]
    dimnames(st) <- NULL
  }
  list(data = list(xt = xt, y = y, group = code, st = st), groups = groups, sums = sums)
}

#' @exportS3Method
model_data.sgais_linear_mixed <- function(model, new_data, call = NULL) {
  spec <- spec_of(model, call)
  linear_mixed_rows(spec, new_data, character(0), matrix(0, nrow(model$data$st), 0), call)$data
}

#' @exportS3Method
model_with_data.sgais_linear_mixed <- function(model, new_data, call = NULL) {
  spec <- spec_of(model, call)
  rows <- linear_mixed_rows(spec, new_data, character(0), matrix(0, nrow(model$data$st), 0), call)
  model$data <- rows$data
  model$groups <- rows$groups
  model$group_sums <- rows$sums
  model$n <- data_rows(rows$data)
  model$dropped <- NULL
  model
}

#' @exportS3Method
model_add_rows.sgais_linear_mixed <- function(model, new_data, call = NULL) {
  spec <- spec_of(model, call)
  rows <- linear_mixed_rows(spec, new_data, model$groups, model$group_sums, call)
  held <- data_rows(model$data)
  n_add <- data_rows(rows$data)
  if (held + n_add > .Machine$integer.max) {
    abort(sprintf("A model can hold at most %s observations; it has %s and `new_data` %s.",
                  format_count(.Machine$integer.max), format_count(held), format_count(n_add)),
          call)
  }
  model$data <- data_bind(model$data, rows$data)
  model$groups <- rows$groups
  model$group_sums <- rows$sums
  model$n <- as_count(model$n + n_add)
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
  for (i in last) sums[, d$group[i]] <- d$st[, i] + c(1, d$y[i], d$xt[, i])
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
  model$data <- rows$data
  model$n <- data_rows(rows$data)
  model$dropped <- NULL
  model
}

# Builds the random-intercept model for linear_regression() (see its "Random intercepts").
linear_mixed <- function(formula, data, noise_sd, group_sd, prior_sd, prior_sd_missing, prior,
                         prior_intercept, variance_shape, variance_scale, call) {
  parsed <- parse_random_intercept(formula, call)
  check_data_frame(data, "`data`", call)
  if (!parsed$group %in% names(data)) {
    abort(sprintf("`formula` groups by `%s`, which is not a column of `data`.", parsed$group),
          call, "sgais_error_missing_column", column = parsed$group)
  }
  keys <- group_keys(data[[parsed$group]], parsed$group, "`data`", call)
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
  unit <- if (known_noise) noise_sd else if (identical(prior, "autoscale") && is.finite(sd_y) && sd_y > 0) sd_y else 1
  coef <- regression_prior(colnames(design$a), auto$prior, auto$prior_intercept, prior_sd, call)
  p <- ncol(design$a)
  coef_blocks <- coef$prior %||% matrix(c(prior_kinds[["normal"]], 0, p, 0, coef$prior_sd, NA), 6L)
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
  if (is.numeric(group_sd) && !inherits(group_sd, "sgais_prior")) {
    hyper$group_sd <- check_hyper(group_sd, "group_sd", call)
    prior_text <- sprintf("%s; group sd %s (known)", prior_text, format(hyper$group_sd))
  } else {
    group_prior <- group_sd %||% half_normal_prior(unit)
    blocks <- c(blocks, list(scale_block(group_prior, length(names), "group_sd", call)))
    names <- c(names, "log_group_sd")
    prior_text <- sprintf("%s; %s", prior_text,
                          sub("exp(theta)", "group sd", group_prior$blocks[[1]]$label, fixed = TRUE))
  }
  hyper$prior <- do.call(cbind, blocks)
  spec <- c(design$spec, list(hyper = hyper, group = parsed$group, full_formula = formula,
                              mixed_rows = rows_rule))
  spec$rows <- NULL # the row rules are applied once, with the group's column (linear_mixed_rows())
  rows <- linear_mixed_rows(spec, data, character(0), matrix(0, p + 2L, 0), call, "data",
                            rows = design)
  n_groups <- length(rows$groups)
  new_sgais_model(
    family = "linear_mixed",
    data = rows$data,
    spec = spec,
    n = nrow(design$a),
    parameter_names = names,
    label = "Bayesian linear regression with random intercepts",
    details = c(
      likelihood = sprintf(paste("%s ~ N(a'theta + u_g, sd = %s), u_g ~ N(0, group_sd^2) for each",
                                 "of the %s groups of `%s`, integrated out"), spec$response,
                           if (known_noise) format(noise_sd) else "sigma",
                           format_count(n_groups), parsed$group),
      prior = prior_text,
      scaling = if (is.null(auto$rule)) NULL else
        sub("; sigma ~ half-normal(sd(y))", "; sigma^2 ~ InvGamma(shape, var(y) scale)", auto$rule,
            fixed = TRUE),
      sampled = paste(c("theta", if (!known_noise) "log(sigma)",
                        if (is.null(hyper$group_sd)) "log(group_sd)"), collapse = ", ")
    ),
    formula = formula,
    groups = rows$groups,
    group_sums = rows$sums,
    class = "sgais_linear_mixed"
  )
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
  b <- prior$blocks[[1]]
  matrix(c(prior_kinds[[b$kind]], start, 1, b$location, b$scale, b$df), 6L)
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
  vapply(n, function(k) {
    rows <- seq_len(k)
    stats <- mixed_statistics(model$data$xt[, rows, drop = FALSE], model$data$y[rows],
                              model$data$group[rows], location)
    if (!is.null(h$noise_sd) && !is.null(h$group_sd)) {
      return(mixed_log_evidence(stats, h$noise_sd^2, h$group_sd^2, t2))
    }
    mixed_scale_quadrature(model, stats, t2, location)
  }, numeric(1))
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
# coefficients integrated out in closed form), by the trapezoid rule on a grid in log sigma
# and log tau. The grid is centred at the integrand's mode, spaced by a tenth of its Laplace sd
# in each direction, and reaches out until the integrand is e^-40 of its peak (the rule's error
# on a smooth integrand that has decayed that far is far below 10^-6 nats). The prior of the
# scales is the model's own (its C blocks, through model_evaluate()).
mixed_scale_quadrature <- function(model, stats, t2, location) {
  h <- model$hyper
  p <- length(t2)
  free <- c(sigma = is.null(h$noise_sd), tau = is.null(h$group_sd))
  # log p(beta = location) of the normal coefficient blocks, taken off model_evaluate()'s
  log_prior_beta <- sum(-0.5 * log(2 * pi * t2))
  f <- function(u) {
    theta <- c(location, u)
    lp <- model_evaluate(model, theta, n = 0L)$log_prior - log_prior_beta
    s <- if (free[["sigma"]]) exp(u[1]) else h$noise_sd
    g <- if (free[["tau"]]) exp(u[sum(free)]) else h$group_sd
    lp + mixed_log_evidence(stats, s^2, g^2, t2)
  }
  # scales beyond e^+-50 of the data's are refused by the integrand (the prior has no mass there)
  start <- c(if (free[["sigma"]]) 0.5 * log(max(stats$rr, 1e-300) / stats$n), if (free[["tau"]]) 0)
  safe <- function(u) {
    if (any(abs(u - start) > 50)) return(-Inf)
    v <- tryCatch(f(u), error = function(e) -Inf)
    if (is.finite(v)) v else -Inf
  }
  opt <- stats::optim(start, function(u) -max(safe(u), -1e300), method = "BFGS", hessian = TRUE,
                      control = list(maxit = 500, reltol = 1e-12))
  sd <- sqrt(pmax(diag(solve(opt$hessian)), 1e-8))
  peak <- -opt$value
  axis <- function(k) {
    # extend each way from the mode in steps of sd / 10 until the integrand along the axis is
    # e^-40 of the peak
    step <- sd[k] / 10
    reach <- function(direction) {
      j <- 0
      repeat {
        j <- j + 10
        u <- opt$par
        u[k] <- u[k] + direction * j * step
        if (safe(u) < peak - 40 || j > 4000) return(j)
      }
    }
    opt$par[k] + step * seq(-reach(-1), reach(1))
  }
  axes <- lapply(seq_along(opt$par), axis)
  grid <- as.matrix(expand.grid(axes))
  values <- apply(grid, 1L, safe)
  cell <- prod(vapply(axes, function(a) a[2] - a[1], numeric(1)))
  log_sum_exp(values) + log(cell)
}
