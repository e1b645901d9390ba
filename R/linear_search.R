# The engine of Bayesian variable selection in linear regression (src/linear_search.c): the exact
# log evidence of submodels of one design from its sufficient statistics. Internal; model_search()
# builds the inputs from a formula and data.
#
# The inputs, shared by the functions below:
#   stats    list(xtx = A'A, xty = A'y, yy = y'y, n = rows) of the design A (q columns, the
#            intercept first when there is one), e.g. from linear_search_stats(). The submodels'
#            evidences are those of the models built on these columns with the same prior (when
#            the covariates are centred, at the centres the full model uses). With a response
#            far from 0 relative to its spread, accumulate the statistics of y - y0 for some y0
#            near its mean (adding y0 to the intercept's prior mean): y'y then keeps its digits.
#   group    integer, one per column: 0 for columns in every submodel (the intercept, terms that
#            are kept), k = 1..K for the columns of candidate term k (a factor's dummy columns or
#            a polynomial's are one term, in or out together). Every term has a column.
#   parents  NULL, or a list of K integer vectors: the terms each term requires (marginality,
#            e.g. a and b for a:b); only submodels holding every included term's parents are
#            allowed.
#   prior    the full model's prior, whose restriction to a submodel's columns is that
#            submodel's; a list with `kind` and
#              "normal": s2 (the known noise variance), mean and var (per column, or one each):
#                        theta_j ~ N(mean_j, var_j), as lr_log_evidence();
#              "nig":    shape, scale, mean, var: sigma^2 ~ InvGamma(shape, scale), theta_j |
#                        sigma^2 ~ N(mean_j, sigma^2 var_j), as nig_lr_log_evidence();
#              "g":      g and gram: BayesFactor's g-prior, as zellner_log_evidence(): a flat
#                        intercept (column 1, in group 0) and log sigma^2, slopes | sigma^2 ~
#                        N(0, g sigma^2 gram^-1), gram = M (q - 1 square) and g in its units
#                        (the model's hyper$g: Liang et al.'s g over the rows M was built from);
#              "zs":     r2 and gram: the Zellner-Siow prior, g ~ InvGamma(1/2, r2 / 2) (r2 the
#                        scale squared, the model's hyper$g), as zellner_siow_integral();
#            and optionally `offset`, added to every log evidence: for "g" and "zs",
#            flat_top_offset(hyper$flat) makes them exact_log_evidence()'s.
# A submodel is a logical vector of one element per term, or, with at most 30 terms, an integer
# code with bit k - 1 for term k (linear_search_members() and linear_search_codes() convert).

# The sufficient statistics of design `a` and response `y`.
linear_search_stats <- function(a, y) {
  list(xtx = crossprod(a), xty = drop(crossprod(a, y)), yy = sum(y^2), n = nrow(a))
}

# Every allowed submodel (at most 30 terms): a list of `code`, `size` (the number of terms) and
# `log_evidence`, in the Gray-code order of the enumeration.
linear_search_enumerate <- function(stats, group, parents, prior) {
  call <- sys.call()
  p <- check_linear_search(stats, group, parents, prior, call)
  if (p$K > 30L) {
    abort(sprintf(paste("%d terms make 2^%d submodels, more than an enumeration takes (2^30);",
                        "search them by MCMC."), p$K, p$K), call, "sgais_error_input")
  }
  .Call(C_ffi_linear_search_enumerate, p$stats, p$group, p$parents, p$prior)
}

# The log evidence of each submodel of `models` (a logical matrix, one row per submodel and one
# column per term, or integer codes), and with `moments = TRUE` a list of each one's posterior
# of the coefficients (q of them, zero for excluded columns): `kind` "normal" (covariance `cov`),
# "t" (multivariate t with `df` degrees of freedom and scale matrix `scale`, cov = scale df /
# (df - 2)) or, for "zs", "t_mixture": t's with `df`, locations `node_mean` (q x nodes) and
# scales `node_scale` (q x q x nodes) at the quadrature's nodes `g` with probabilities `weight`,
# whose mixture has mean `mean` and covariance `cov` (draw a node, then from its t; `scale` is
# then cov (df - 2) / df). Marginality is not checked.
linear_search_models <- function(stats, group, prior, models, moments = FALSE) {
  call <- sys.call()
  p <- check_linear_search(stats, group, NULL, prior, call)
  models <- check_linear_search_models(models, p$K, "models", call)
  check_flag(moments, "moments", call)
  .Call(C_ffi_linear_search_models, p$stats, p$group, p$prior, models, moments)
}

# A Metropolis-Hastings chain over the allowed submodels, targeting exp(log evidence +
# log_prior_size[k + 1]) for a submodel of k terms (K + 1 numbers, -Inf allowed): `iterations`
# steps from `state` (NULL: a new chain from `model`, by default the submodel of no terms, with a
# key drawn from R's RNG). Returns the state to continue from: `model`, `iteration`, `key`, every
# submodel evaluated so far (`models`, a logical matrix, with `log_evidence` and `visits`, the
# iterations the chain spent there; rejected proposals have 0), this call's `trace_size` (the
# number of terms after each step) and `accepted` moves. A chain continued in pieces is the same
# chain, to the bit; an interrupt ends a call without a result, so run long chains in pieces
# (e.g. between progress updates).
linear_search_mcmc <- function(stats, group, parents, prior, log_prior_size, iterations,
                               state = NULL, model = NULL) {
  call <- sys.call()
  p <- check_linear_search(stats, group, parents, prior, call)
  K <- p$K
  if (!is.numeric(log_prior_size) || length(log_prior_size) != K + 1L ||
      anyNA(log_prior_size) || any(log_prior_size == Inf) || !any(is.finite(log_prior_size))) {
    abort(sprintf(paste("`log_prior_size` must be %d numbers (the log prior of a submodel of 0,",
                        "..., %d terms), below Inf and not all -Inf, not %s."), K + 1L, K,
                  describe(log_prior_size)), call, "sgais_error_input")
  }
  iterations <- check_whole_number(iterations, "iterations", 0, call)
  if (is.null(state)) {
    model <- if (is.null(model)) rep(FALSE, K) else model
    model <- check_linear_search_models(model, K, "model", call)
    state <- list(model = model[1, ], iteration = 0, key = rng_key(),
                  models = matrix(FALSE, 0, K), log_evidence = numeric(0), visits = numeric(0))
  } else {
    state <- check_linear_search_state(state, K, call)
  }
  if (!linear_search_allowed(state$model, p$parents)) {
    abort("The chain's `model` must hold every included term's parents.", call,
          "sgais_error_input")
  }
  .Call(C_ffi_linear_search_mcmc, p$stats, p$group, p$parents, p$prior,
        as.double(log_prior_size), iterations, state)
}

# The logical matrix (one row per code, K columns) of integer codes, bit k - 1 for term k.
linear_search_members <- function(code, K) {
  bits <- bitwAnd(rep(as.integer(code), each = K), rep(as.integer(2^(seq_len(K) - 1L)),
                                                       length(code)))
  matrix(bits != 0L, nrow = length(code), ncol = K, byrow = TRUE)
}

# The integer codes of the rows of a logical matrix of at most 30 columns.
linear_search_codes <- function(members) {
  members <- as.matrix(members)
  drop(members %*% 2^(seq_len(ncol(members)) - 1L))
}

# Whether submodel `model` (logical) holds the parents of each of its terms.
linear_search_allowed <- function(model, parents) {
  if (is.null(parents)) return(TRUE)
  all(vapply(which(model), function(k) all(model[parents[[k]]]), logical(1)))
}

# ---- checks ----------------------------------------------------------------------------------

# The inputs checked and normalised: stats with double fields, group and parents as integers, the
# prior's per-column values recycled to q, and K.
check_linear_search <- function(stats, group, parents, prior, call) {
  bad <- function(what) abort(what, call, "sgais_error_input")
  fields <- c("xtx", "xty", "yy", "n")
  if (!is.list(stats) || !all(fields %in% names(stats))) {
    bad(sprintf("`stats` must be a list of %s, not %s.", paste0("`", fields, "`", collapse = ", "),
                describe(stats)))
  }
  xtx <- stats$xtx
  if (!is.numeric(xtx) || !is.matrix(xtx) || nrow(xtx) != ncol(xtx) || nrow(xtx) < 1L ||
      !all(is.finite(xtx))) {
    bad("`stats$xtx` must be a square matrix of finite numbers.")
  }
  q <- nrow(xtx)
  if (!isSymmetric(unname(xtx * 1))) bad("`stats$xtx` must be symmetric.")
  if (!is.numeric(stats$xty) || length(stats$xty) != q || !all(is.finite(stats$xty))) {
    bad(sprintf("`stats$xty` must be %d finite numbers.", q))
  }
  if (!is_number(stats$yy) || !is.finite(stats$yy) || stats$yy < 0) {
    bad("`stats$yy` must be a finite number >= 0.")
  }
  if (!is_number(stats$n) || !is.finite(stats$n) || stats$n < 1 || stats$n != round(stats$n)) {
    bad("`stats$n` must be a whole number >= 1.")
  }
  stats <- list(xtx = unname(xtx * 1), xty = as.double(stats$xty), yy = as.double(stats$yy),
                n = as.double(stats$n))
  if (!is.numeric(group) || length(group) != q || anyNA(group) || any(group < 0) ||
      any(group != round(group))) {
    bad(sprintf("`group` must be %d whole numbers >= 0 (one per column), not %s.", q,
                describe(group)))
  }
  group <- as.integer(group)
  K <- max(group)
  if (K > 0L && !all(seq_len(K) %in% group)) {
    bad(sprintf("`group` must give every term 1..%d a column.", K))
  }
  if (!is.null(parents)) {
    if (!is.list(parents) || length(parents) != K) {
      bad(sprintf("`parents` must be NULL or a list of %d integer vectors.", K))
    }
    parents <- lapply(seq_len(K), function(k) {
      r <- parents[[k]]
      if (length(r) && (!is.numeric(r) || anyNA(r) || any(r != round(r)) || any(r < 1) ||
                        any(r > K) || any(r == k))) {
        bad(sprintf("`parents[[%d]]` must hold other terms, in 1..%d.", k, K))
      }
      as.integer(r)
    })
  }
  list(stats = stats, group = group, parents = parents, K = K,
       prior = check_linear_search_prior(prior, q, group, stats$n, call))
}

check_linear_search_prior <- function(prior, q, group, n, call) {
  bad <- function(what) abort(what, call, "sgais_error_input")
  kinds <- c("normal", "nig", "g", "zs")
  if (!is.list(prior) || !is.character(prior$kind) || length(prior$kind) != 1L ||
      !prior$kind %in% kinds) {
    bad(sprintf("`prior` must be a list whose `kind` is one of %s.",
                paste0("\"", kinds, "\"", collapse = ", ")))
  }
  positive <- function(name) {
    x <- prior[[name]]
    if (!is_number(x) || !is.finite(x) || x <= 0) {
      bad(sprintf("`prior$%s` must be a positive number, not %s.", name, describe(x)))
    }
    as.double(x)
  }
  per_column <- function(name, positive) {
    x <- prior[[name]]
    if (!is.numeric(x) || !length(x) %in% c(1L, q) || !all(is.finite(x)) ||
        (positive && any(x <= 0))) {
      bad(sprintf("`prior$%s` must be 1 or %d finite%s numbers.", name, q,
                  if (positive) " positive" else ""))
    }
    rep_len(as.double(x), q)
  }
  offset <- prior$offset %||% 0
  if (!is_number(offset) || !is.finite(offset)) bad("`prior$offset` must be a finite number.")
  out <- list(kind = prior$kind, offset = as.double(offset))
  if (prior$kind %in% c("normal", "nig")) {
    out$mean <- per_column("mean", FALSE)
    out$var <- per_column("var", TRUE)
    if (prior$kind == "normal") {
      out$s2 <- positive("s2")
    } else {
      out$shape <- positive("shape")
      out$scale <- positive("scale")
    }
    return(out)
  }
  if (group[1] != 0L) bad("The g-priors need the intercept as the first column, in group 0.")
  if (n <= q) bad("The g-priors need more rows than design columns.")
  gram <- prior$gram
  if (!is.numeric(gram) || !is.matrix(gram) || any(dim(gram) != q - 1L) ||
      !all(is.finite(gram)) || !isSymmetric(unname(gram * 1))) {
    bad(sprintf("`prior$gram` must be a symmetric %d x %d matrix of finite numbers.", q - 1L,
                q - 1L))
  }
  out$gram <- unname(gram * 1)
  if (prior$kind == "g") out$g <- positive("g") else out$r2 <- positive("r2")
  out
}

# Submodels as a logical matrix of K columns, from one (a vector), a matrix or integer codes.
check_linear_search_models <- function(models, K, arg, call) {
  if (is.logical(models) && is.null(dim(models))) models <- matrix(models, nrow = 1L)
  if (is.numeric(models) && is.null(dim(models)) && K <= 30L) {
    if (anyNA(models) || any(models < 0 | models >= 2^K | models != round(models))) {
      abort(sprintf("`%s` must be codes in [0, 2^%d).", arg, K), call, "sgais_error_input")
    }
    models <- linear_search_members(models, K)
  }
  if (!is.logical(models) || !is.matrix(models) || ncol(models) != K || anyNA(models)) {
    abort(sprintf(paste("`%s` must be a logical matrix of %d columns (one per term) or integer",
                        "codes, not %s."), arg, K, describe(models)), call, "sgais_error_input")
  }
  unname(models)
}

check_linear_search_state <- function(state, K, call) {
  fields <- c("model", "iteration", "key", "models", "log_evidence", "visits")
  if (!is.list(state) || !all(fields %in% names(state))) {
    abort(sprintf("`state` must be the result of linear_search_mcmc(), with %s.",
                  paste0("`", fields, "`", collapse = ", ")), call, "sgais_error_input")
  }
  state$models <- check_linear_search_models(state$models, K, "state$models", call)
  model <- check_linear_search_models(state$model, K, "state$model", call)
  state$model <- model[1, ]
  m <- nrow(state$models)
  if (!is.numeric(state$log_evidence) || length(state$log_evidence) != m ||
      !is.numeric(state$visits) || length(state$visits) != m || anyNA(state$visits) ||
      any(state$visits < 0) || !is_number(state$iteration) || state$iteration < 0 ||
      !is.numeric(state$key) || length(state$key) != 2L) {
    abort("`state` must be the result of linear_search_mcmc().", call, "sgais_error_input")
  }
  state[fields]
}
