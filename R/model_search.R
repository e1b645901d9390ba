#' Variable selection and model averaging over the submodels of a regression
#'
#' Scores every submodel of the largest model `formula` (its terms in or out, those in `keep`
#' always in) by its evidence and a prior over the models, and returns the posterior model
#' probabilities, the posterior inclusion probability of every term, and the model-averaged
#' coefficients:
#' \deqn{p(M \mid y) = \frac{p(M) Z_M}{\sum_{M'} p(M') Z_{M'}}, \qquad
#' P(\mathrm{term} \in M \mid y) = \sum_{M \ni \mathrm{term}} p(M \mid y).}{p(M | y) = p(M) Z_M /
#' sum_M' p(M') Z_M',  P(term in M | y) = sum over the models M with the term of p(M | y).}
#' A factor, a polynomial or a spline is one term (its columns enter and leave together), and an
#' interaction enters only with the terms it is made of (marginality: `a:b` needs `a` and `b`).
#' Every submodel is the model the family's constructor builds on the data with that formula and
#' the same arguments (`...`), so its evidence is what [compare_models()] or
#' [exact_log_evidence()] would give it.
#'
#' @section How the evidences are computed:
#' **Linear regression** (`family = "gaussian"`, with normal priors, [g_prior()] or
#' [zellner_siow_prior()], and known or unknown noise, the default): every submodel's evidence
#' is its closed form, computed from the sufficient statistics \eqn{A^\top A}{A'A},
#' \eqn{A^\top y}{A'y}, \eqn{y^\top y}{y'y} and \eqn{n} of the largest model's design, gathered in
#' one pass over the data, so a data frame, a file, a database query or a function of blocks (a
#' stream, as in [sgais_stream()]) all work. With at most `enumerate` candidate terms every
#' submodel is visited, from one to the next by sweeping a term in or out (not a new
#' factorisation each); beyond, a Metropolis-Hastings chain over the models (adding, dropping and
#' swapping terms) of `iterations` steps visits them, each distinct model's evidence computed
#' once, and the probabilities are those of the visited models, renormalised; a warning of class
#' `sgais_warning_unconverged` says when their inclusion probabilities and the chain's visit
#' frequencies disagree by more than 0.02.
#'
#' **Other families** (logistic, Poisson, negative binomial, binomial counts, random intercepts,
#' linear models with random effects): a Laplace approximation of the largest model screens the
#' submodels (the Savage-Dickey ratio of its Gaussian posterior at the excluded coefficients'
#' zero), then the models that hold the posterior mass get their evidence from the package's
#' accurate estimators, chosen per model as [compare_models()]'s `method = "auto"` does (the
#' closed form, else importance sampling where its Pareto \eqn{\hat k}{k-hat} passes, else
#' [sgais()]), and the screen is redone with them until the models holding all but
#' `mass_tolerance` of the probability have accurate evidence. The mass of the models without
#' accurate evidence is `mass_outside`. These evidence computations run through the future
#' package: with `future::plan(future::multisession)` they use every core, with a cluster plan
#' many machines, and the result is the same on any plan (each model's seed is fixed by `seed`
#' and the model).
#'
#' @section Along the data:
#' With `block_size` (or a stream), the search records the inclusion and model probabilities
#' after every block ([inclusion_probabilities()] with `along = TRUE`, `plot(which = "along")`):
#' when a term started to matter. `update(search, new_data)` continues a linear search on new
#' rows: the statistics take the new rows, and the result is the search of all the rows, the same
#' to the last bit whatever the blocks they came in.
#'
#' @param formula The largest model, a formula such as `y ~ .` or `y ~ x1 + f + x1:f`; a random
#'   effect such as `(1 | g)` and an `offset()` are in every model.
#' @param data A data frame, or a source of rows as in [sgais_stream()] (linear regression only).
#' @param family The regression: `"gaussian"` ([linear_regression()]), `"binomial"`
#'   ([logistic_regression()], binomial counts too), `"poisson"`, `"negative_binomial"`, or a
#'   [stats::family()] object with its canonical link.
#' @param ... Arguments of the family's constructor for every submodel, e.g. `prior =
#'   zellner_siow_prior()` or `noise_sd = 1`.
#' @param model_prior The prior over the models: `"uniform"` (every allowed model alike),
#'   `"beta-binomial"` (beta-binomial(1, 1) on the number of terms: every size alike), or a
#'   number in (0, 1), the prior inclusion probability of every term, independently.
#' @param keep Term labels in every model (e.g. `keep = "age"`).
#' @param method `"auto"`: enumerate when there are at most `enumerate` candidate terms, else
#'   the chain over models; or `"enumerate"` or `"mcmc"`.
#' @param enumerate The most candidate terms enumerated by `method = "auto"` (linear regression;
#'   other families enumerate their screen, up to 20 terms).
#' @param iterations The chain's steps (`method = "mcmc"`); by default 5,000 per candidate term,
#'   at least 200,000.
#' @param mass_tolerance Other families: the probability left to models without accurate evidence.
#' @param weights,subset,na.action As in [stats::glm()] (see [linear_regression()]).
#' @param block_size Rows read per block: with it (or a stream) the probabilities are recorded
#'   after each block. By default all of in-memory data at once, and 10,000 rows of a stream.
#' @param top How many models the result keeps and prints.
#' @inheritParams sgais
#' @return An object of class `sgais_model_search`: a list with `models` (a data frame of the
#'   `top` most probable models: a logical column per candidate term, `size`, `log_evidence`,
#'   `log_evidence_se`, `log_prior`, `probability`, `probability_lower` and `probability_upper`
#'   (its probability with its log evidence 2 SE lower and every other's 2 SE higher, and the
#'   reverse: equal to `probability` where every evidence is exact, `NA` for a model scored by
#'   the screen alone), `method`, the estimator of its evidence, and `formula`), `inclusion`
#'   (the posterior inclusion probability of every candidate term),
#'   `coefficients` (model-averaged: `mean`, `sd`, and the 2.5% and 97.5% quantiles, `lower` and
#'   `upper`, of every coefficient, on the data's scale), `trajectory` (the inclusion
#'   probabilities and the top model's probability after each block), `n`, `visited` (the models
#'   scored), `mass_outside` and `estimator`. Use `print()`, `summary()`, `as.data.frame()` (the
#'   models), [inclusion_probabilities()], `coef()`, `plot()` and `update()`.
#' @seealso [compare_models()] for models listed by hand.
#' @export
#' @examples
#' # every subset of mtcars' covariates, exact, with the default prior
#' search <- model_search(mpg ~ ., mtcars, progress = FALSE)
#' search
#' inclusion_probabilities(search)
#' coef(search)
#'
#' # BayesFactor's Zellner-Siow prior, wt and qsec in every model, beta-binomial model prior
#' model_search(mpg ~ ., mtcars, prior = zellner_siow_prior(), keep = c("wt", "qsec"),
#'              model_prior = "beta-binomial", progress = FALSE)
#'
#' # a logistic regression: screened, then accurate evidence for the models that matter
#' search <- model_search(am ~ wt + hp + qsec + drat, mtcars, family = "binomial", seed = 1,
#'                        progress = FALSE)
#' search$models[, c("wt", "hp", "qsec", "drat", "probability", "method")]
model_search <- function(formula, data, family = "gaussian", ..., model_prior = "uniform",
                         keep = NULL, method = "auto", enumerate = 20, iterations = NULL,
                         mass_tolerance = 0.001, weights = NULL, subset = NULL, na.action = NULL,
                         block_size = NULL, top = 20, progress = default_progress(), seed = NULL) {
  call <- sys.call()
  if (!inherits(formula, "formula") || length(formula) != 3L) {
    abort(sprintf("`formula` must be a formula with a response, such as `y ~ .`, not %s.",
                  describe(formula)), call)
  }
  if (missing(data)) abort("`data` is missing: give the rows to search the models on.", call)
  method <- check_choice(method, "method", c("auto", "enumerate", "mcmc"), call,
                         "sgais_error_argument")
  enumerate <- check_whole_number(enumerate, "enumerate", 0, call)
  top <- check_whole_number(top, "top", 1, call)
  if (!is.null(iterations)) iterations <- check_whole_number(iterations, "iterations", 1, call)
  mass_tolerance <- check_probability(mass_tolerance, "mass_tolerance", call)
  progress <- check_flag(progress, "progress", call)
  seed <- check_seed(seed, call)
  if (is.null(seed)) seed <- sample.int(.Machine$integer.max, 1L)
  build <- family_constructor(family, call)
  if (is.function(family)) {
    abort("`family` must be a name or a stats family object here, not a function.", call,
          "sgais_error_family")
  }
  rows <- list(weights = substitute(weights), subset = substitute(subset), na.action = na.action,
               offset = NULL, env = parent.frame())
  stream <- !is_in_memory(data) || !is.null(block_size)
  if (stream) {
    block_size <- if (is.null(block_size)) 10000 else
      check_whole_number(block_size, "block_size", 1, call)
    source <- stream_source(data, block_size, call, "data")
    on.exit(source(NULL), add = TRUE)
  }
  first <- if (stream) source(block_size) else data
  if (is.null(first)) abort("`data` gave no rows.", call)
  selected <- formula_rows_of(first, list(formula), rows, call)
  space <- model_space(formula, selected$data, keep, call)
  full <- build_submodel(build, space, rep(TRUE, length(space$terms)), selected$data, list(...),
                         selected$rows, call)
  settings <- list(family = family, dots = list(...), rows = selected$rows, seed = seed,
                   model_prior = check_model_prior_spec(model_prior, call), top = top,
                   method = method, enumerate = enumerate, iterations = iterations,
                   mass_tolerance = mass_tolerance, block_size = block_size)
  if (linear_engine_applies(full)) {
    state <- linear_search_state(full, space, selected$data, settings, call)
    state <- linear_search_add(state, full$data, settings, call)
    if (stream) {
      bar <- if (progress) {
        cli::cli_progress_bar(format = paste("Searching {length(space$terms)} terms",
                                             "{cli::pb_spin} {format_count(state$n)} rows |",
                                             "{cli::pb_elapsed}"), total = NA, .auto_close = FALSE)
      }
      while (!is.null(block <- source(block_size))) {
        block <- formula_rows_of(block, list(formula), rows, call)$data
        state <- linear_search_add(state, model_data(full, block, call), settings, call)
        if (!is.null(bar)) cli::cli_progress_update(id = bar)
      }
      if (!is.null(bar)) cli::cli_progress_done(id = bar)
    }
    return(new_sgais_model_search(state, call))
  }
  if (stream) {
    abort(paste("Only a linear search reads its data in blocks (`block_size`, or a stream):",
                "other families estimate each model's evidence from all the rows at once; give",
                "them as a data frame, without `block_size`."), call, "sgais_error_argument")
  }
  state <- generic_search(build, full, space, selected$data, settings, progress, call)
  new_sgais_model_search(state, call)
}

# ---- the model space ------------------------------------------------------------------------

# The candidate terms of `formula` on `data`: `terms` (labels), `parents` (for each term, the
# terms it is made of: an interaction's marginal terms), and what is in every model: `keep`
# (labels), `fixed` (random effects and offsets, as text) and the intercept. `response` is the
# formula's left side.
model_space <- function(formula, data, keep, call) {
  tt <- stats::terms(formula, data = data)
  labels <- attr(tt, "term.labels")
  random <- grepl("|", labels, fixed = TRUE)
  variables <- vapply(attr(tt, "variables"), function(v) paste(deparse(v), collapse = " "),
                      character(1))[-1L]
  offsets <- variables[attr(tt, "offset")]
  fixed <- c(sprintf("(%s)", labels[random]), offsets)
  labels <- labels[!random]
  if (!is.null(keep)) {
    if (!is.character(keep) || anyNA(keep) || !all(keep %in% labels)) {
      abort(sprintf("`keep` must be term labels of `formula` (%s), not %s.",
                    backticked(labels), describe(keep)), call, "sgais_error_argument")
    }
  }
  factors <- attr(tt, "factors")
  factors <- factors[, colnames(factors) %in% labels, drop = FALSE]
  # term k needs term j when j's variables are a proper subset of k's
  uses <- lapply(labels, function(l) rownames(factors)[factors[, l] > 0])
  parents <- lapply(seq_along(labels), function(k) {
    which(vapply(seq_along(labels), function(j) {
      j != k && all(uses[[j]] %in% uses[[k]])
    }, logical(1)))
  })
  kept <- labels %in% keep
  for (k in which(kept)) {
    missing <- setdiff(parents[[k]], which(kept))
    if (length(missing)) {
      abort(sprintf("`keep` has %s but not %s, which it is made of.", backticked(labels[k]),
                    backticked(labels[missing])), call, "sgais_error_argument")
    }
  }
  free <- which(!kept)
  candidates <- labels[free]
  if (!length(candidates)) {
    abort("`formula` has no term to search over: every term is kept.", call,
          "sgais_error_argument")
  }
  list(formula = formula, response = formula[[2L]], intercept = attr(tt, "intercept") == 1L,
       keep = labels[kept],
       fixed = fixed, terms = candidates,
       parents = lapply(parents[free], function(p) match(labels[p], candidates)),
       all_terms = labels)
}

# Whether `included` (one logical per candidate term) respects marginality.
allowed_model <- function(space, included) {
  all(vapply(which(included), function(k) all(included[space$parents[[k]]]), logical(1)))
}

# The formula of the submodel with the candidate terms `included`.
submodel_formula <- function(space, included) {
  rhs <- c(space$keep, space$terms[included], space$fixed)
  if (!length(rhs)) rhs <- "1"
  f <- stats::reformulate(rhs, response = space$response, intercept = space$intercept)
  environment(f) <- globalenv()
  f
}

# The submodel with the terms `included`, built by the family's constructor on `data` with the
# search's arguments `dots` and glm's row rules `rows` (formula_rows_of()).
build_submodel <- function(build, space, included, data, dots, rows, call) {
  formula <- submodel_formula(space, included)
  args <- c(list(formula, quote(data)), dots,
            list(weights = rows$weights, na.action = rows$na.action))
  tryCatch(eval(as.call(c(list(quote(build)), args)), list(data = data, build = build)),
           sgais_error = function(e) {
             e$call <- call
             stop(e)
           })
}

# The prior over models, as given: list(kind = "uniform" / "beta-binomial" / "inclusion", p).
check_model_prior_spec <- function(x, call) {
  if (is.character(x) && length(x) == 1L && x %in% c("uniform", "beta-binomial")) {
    return(list(kind = x))
  }
  if (is_number(x) && x > 0 && x < 1) return(list(kind = "inclusion", p = x))
  abort(sprintf(paste("`model_prior` must be \"uniform\", \"beta-binomial\" or a prior inclusion",
                      "probability in (0, 1), not %s."), describe(x)), call, "sgais_error_argument")
}

# The log prior of a model with k of the K candidate terms, for k = 0, ..., K (unnormalised:
# the probabilities are normalised over the allowed models).
model_log_prior_size <- function(spec, K) {
  k <- 0:K
  switch(spec$kind,
    uniform = rep(0, K + 1L),
    "beta-binomial" = -lchoose(K, k),
    inclusion = k * log(spec$p) + (K - k) * log1p(-spec$p)
  )
}

check_probability <- function(x, arg, call) {
  if (!is_number(x) || x <= 0 || x >= 1) {
    abort(sprintf("`%s` must be a number in (0, 1), not %s.", arg, describe(x)), call,
          "sgais_error_argument")
  }
  x
}

# The models as codes: model i's terms are the set bits of code i (term k is bit k - 1).
code_of <- function(included) sum(2^(which(included) - 1))
included_of <- function(code, K) (code %/% 2^(seq_len(K) - 1L)) %% 2 == 1 # K <= 52

# For codes of models of K terms: a logical matrix, one row per code, a column per term.
members_of <- function(codes, K) {
  if (K <= 30L) {
    codes <- as.integer(codes)
    return(vapply(seq_len(K), function(k) bitwAnd(codes, 2L^(k - 1L)) != 0L,
                  logical(length(codes))))
  }
  vapply(seq_len(K), function(k) (codes %/% 2^(k - 1)) %% 2 == 1, logical(length(codes)))
}

# Every allowed model's membership, as a K x m logical matrix (the empty model first).
allowed_models <- function(space) {
  K <- length(space$terms)
  codes <- seq(0, 2^K - 1)
  keep <- vapply(codes, function(c) allowed_model(space, included_of(c, K)), logical(1))
  vapply(codes[keep], included_of, logical(K), K = K)
}


# ---- linear regression: closed forms from sufficient statistics -------------------------------

# Whether the submodels of `full` have closed forms the engine computes (R/linear_search.R):
# linear regression without random effects, with normal coefficient priors (known noise or the
# conjugate unknown variance), a g-prior or the Zellner-Siow prior.
linear_engine_applies <- function(full) {
  if (!inherits(full, "sgais_linear_regression")) return(FALSE)
  if (inherits(full, "sgais_linear_regression_zellner")) return(TRUE)
  coef_prior_moments(full, nrow(full$data$xt))$normal
}

# The rows are added to the statistics in chunks of this many rows counted from the first, so
# that the sums, and the search, are the same to the last bit whatever the blocks.
search_chunk <- 4096L

# The state of a linear search: the largest model (one row of its data kept, for its spec and
# prior), the engine's description of the model space and prior (`group`: the candidate term of
# each design column, 0 for those in every model; `parents`; `prior`), the statistics of the
# whole chunks so far and the rows of the last partial one, and the results at each block end.
linear_search_state <- function(full, space, data, settings, call) {
  q <- nrow(full$data$xt)
  # the statistics are of y - y0, y0 the first rows' mean, so that y'y keeps its digits
  y0 <- mean(full$data$y)
  columns <- full$parameter_names[seq_len(q)]
  group <- match(term_of_columns(full, data, call), space$terms)
  group[is.na(group)] <- 0L
  K <- length(space$terms)
  list(
    kind = "linear", full = with_rows(full, data_columns(full$data, 1L)), space = space,
    columns = columns, group = as.integer(group), y0 = y0, prior = linear_engine_prior(full, y0),
    log_prior_size = model_log_prior_size(settings$model_prior, K),
    stats = list(xtx = matrix(0, q, q), xty = numeric(q), yy = 0, n = 0),
    pending = list(xt = matrix(0, q, 0L), y = numeric(0)),
    settings = settings, trajectory = NULL, result = NULL, mcmc = NULL
  )
}

# For each column of the largest model's design, the index of its term in the formula's
# term.labels (0: the intercept), as model.matrix()'s "assign", from a few rows of `data`.
design_assign <- function(full, data, call) {
  if (!identical(full$spec$interface, "formula")) {
    abort("`model_search()` takes a formula and a data frame.", call, "sgais_error_argument")
  }
  rows <- plain_columns(utils::head(data, 50L), "`data`", call)
  formula_matrix(full$spec, rows, "`data`", call)$assign
}

# The prior of the largest model's coefficients and noise, as the engine takes it
# (R/linear_search.R), for the response less `y0` (the intercept's prior mean less it too).
linear_engine_prior <- function(full, y0) {
  h <- full$hyper
  q <- nrow(full$data$xt)
  if (inherits(full, "sgais_linear_regression_zellner")) {
    gram <- if (q > 1L) crossprod(h$gram_chol) else matrix(0, 0, 0)
    prior <- list(kind = if (h$zellner == 1) "g" else "zs", gram = gram,
                  offset = flat_top_offset(h$flat))
    if (h$zellner == 1) prior$g <- h$g else prior$r2 <- h$g
    return(prior)
  }
  m <- coef_prior_moments(full, q)
  mean <- m$location
  if (identical(full$parameter_names[1L], "(Intercept)")) mean[1L] <- mean[1L] - y0
  if (inherits(full, "sgais_linear_regression_nig")) {
    return(list(kind = "nig", shape = h$variance_shape, scale = h$variance_scale, mean = mean,
                var = m$scale^2))
  }
  list(kind = "normal", s2 = h$noise_sd^2, mean = mean, var = m$scale^2)
}

# `state` with the rows `data` (the largest model's data list: xt, y) added to its statistics,
# and the search done again at this block's end (a row of the trajectory; the full result is kept
# for the last).
linear_search_add <- function(state, data, settings, call) {
  xt <- cbind(state$pending$xt, data$xt)
  y <- c(state$pending$y, data$y - state$y0)
  whole <- ncol(xt) %/% search_chunk * search_chunk
  for (start in search_chunk * seq_len(whole %/% search_chunk) - search_chunk + 1L) {
    state$stats <- add_statistics(state$stats, xt, y, seq.int(start, length.out = search_chunk))
  }
  rest <- seq.int(whole + 1L, length.out = ncol(xt) - whole)
  state$pending <- list(xt = xt[, rest, drop = FALSE], y = y[rest])
  stats <- add_statistics(state$stats, xt, y, rest)
  if (stats$n == 0) return(state)
  state$result <- linear_search_result(state, stats, settings, call)
  state$trajectory <- rbind(state$trajectory, trajectory_row(state$result, stats$n))
  state$n <- stats$n
  state
}

# The model average of the coefficients of a linear search: draws from each model's exact
# posterior (normal with known noise, else multivariate t, a mixture of t's over g for the
# Zellner-Siow prior; the engine's moments), in proportion to the models' probabilities, with
# the intercept at x = 0 (uncentred_draws()) and the response's shift y0 undone.
linear_coefficients <- function(state, result, stats, call) {
  seed <- state$settings$seed
  # the models that hold all but 1e-4 of the probability, at most 1,000 of them, renormalised
  order <- order(-result$probability)
  held <- cumsum(result$probability[order])
  order <- utils::head(order[c(TRUE, held[-length(held)] < 1 - 1e-4)], 1000L)
  p <- result$probability[order] / sum(result$probability[order])
  counts <- with_seed(seed, as.vector(stats::rmultinom(1L, search_mixture_draws, p)))
  picked <- order[counts > 0]
  counts <- counts[counts > 0]
  K <- length(state$space$terms)
  members <- matrix(members_of(result$codes[picked], K), ncol = K)
  # the moments of at most 50 models at a time: a Zellner-Siow model's are a matrix per node;
  # each model's draws from its own seed (R's RNG restored once, after all of them)
  draws <- with_rng_restored(do.call(rbind, lapply(
    split(seq_along(picked), (seq_along(picked) - 1L) %/% 50L), function(chunk) {
      moments <- linear_search_models(stats, state$group, state$prior,
                                      members[chunk, , drop = FALSE], moments = TRUE)$moments
      do.call(rbind, lapply(seq_along(chunk), function(i) {
        j <- chunk[i]
        included <- state$group == 0L | state$group %in% which(members[j, ])
        if (!is.null(seed)) set.seed(model_seed(seed, result$codes[picked[j]]))
        moment_draws(moments[[i]], counts[j], included)
      }))
    })))
  if (identical(state$columns[1L], "(Intercept)")) draws[, 1L] <- draws[, 1L] + state$y0
  colnames(draws) <- state$columns
  draws_summary(uncentred_draws(state$full, draws))
}

# `n` draws from the engine's posterior moments `m` of a model (R/linear_search.R) over its
# `included` columns (the others 0).
moment_draws <- function(m, n, included) {
  out <- matrix(0, n, length(included))
  k <- sum(included)
  if (!k) return(out)
  node <- if (m$kind == "t_mixture") sample.int(length(m$weight), n, TRUE, m$weight) else NULL
  z <- matrix(stats::rnorm(n * k), n, k)
  if (m$kind != "normal") z <- z * sqrt(m$df / stats::rchisq(n, m$df))
  one <- function(rows, mean, scale) {
    out[rows, included] <<- z[rows, , drop = FALSE] %*% chol(scale[included, included]) +
      rep(mean[included], each = length(rows))
  }
  if (is.null(node)) {
    one(seq_len(n), m$mean, if (m$kind == "normal") m$cov else m$scale)
  } else {
    for (v in unique(node)) one(which(node == v), m$node_mean[, v], m$node_scale[, , v])
  }
  out
}

# Draws of a model average, summarised per coefficient: the mean, sd and 2.5% and 97.5%
# quantiles.
draws_summary <- function(draws) {
  mean <- colMeans(draws)
  centred <- draws - rep(mean, each = nrow(draws))
  q <- apply(draws, 2L, stats::quantile, c(0.025, 0.975), names = FALSE)
  data.frame(coefficient = colnames(draws), mean = unname(mean),
             sd = unname(sqrt(colSums(centred^2) / (nrow(draws) - 1L))),
             lower = q[1L, ], upper = q[2L, ], stringsAsFactors = FALSE)
}

# How many draws make a model average.
search_mixture_draws <- 4000L

# `stats` with the rows `rows` of the design `xt` (columns are rows) and response `y` added.
add_statistics <- function(stats, xt, y, rows) {
  if (!length(rows)) return(stats)
  a <- xt[, rows, drop = FALSE]
  list(xtx = stats$xtx + tcrossprod(a), xty = stats$xty + drop(a %*% y[rows]),
       yy = stats$yy + sum(y[rows]^2), n = stats$n + length(rows))
}

# The search at statistics `stats`: every allowed model's log evidence (enumerated), or the
# visited models' (the chain over models), with their log priors and posterior probabilities.
linear_search_result <- function(state, stats, settings, call) {
  space <- state$space
  K <- length(space$terms)
  mcmc <- settings$method == "mcmc" || (settings$method == "auto" && K > settings$enumerate)
  parents <- lapply(space$parents, as.integer)
  if (!mcmc) {
    out <- linear_search_enumerate(stats, state$group, parents, state$prior)
    codes <- out$code
    size <- out$size
    visits <- NULL
  } else {
    iterations <- settings$iterations %||% max(2e5, 5000 * K)
    start <- if (!is.null(state$result$chain)) state$result$chain$model
    chain <- with_seed(settings$seed, linear_search_mcmc(
      stats, state$group, parents, state$prior, state$log_prior_size, iterations, model = start))
    out <- list(log_evidence = chain$log_evidence)
    codes <- apply(chain$models, 1L, code_of)
    size <- rowSums(chain$models)
    visits <- chain$visits
  }
  log_prior <- state$log_prior_size[size + 1L]
  list(codes = codes, log_evidence = out$log_evidence, log_evidence_se = 0,
       log_prior = log_prior, probability = normalised(out$log_evidence + log_prior),
       visits = visits, method = if (mcmc) "mcmc" else "enumerate", estimator = "exact",
       stats = stats, terms = space$terms, chain = if (mcmc) chain)
}

normalised <- function(log_w) exp(log_w - log_sum_exp(log_w))

# ---- other families: a Laplace screen, then accurate evidence for the models that matter -------

# The search of the submodels of `full` (any family): every allowed model's log evidence screened
# by the Laplace approximation of `full` (screen_log_evidence()), then accurate evidence, by
# compare_models()'s "auto" choice, for the most probable models until those without it hold at
# most `mass_tolerance` of the probability.
generic_search <- function(build, full, space, data, settings, progress, call) {
  K <- length(space$terms)
  if (K > 20L) {
    abort(sprintf(paste("`formula` has %d candidate terms; beyond 20 only linear regression is",
                        "searched (by a chain over models). Keep some terms (`keep`)."), K), call,
          "sgais_error_too_large")
  }
  models <- allowed_models(space)
  codes <- apply(models, 2L, code_of)
  size <- colSums(models)
  log_prior <- model_log_prior_size(settings$model_prior, K)[size + 1L]
  screen <- screen_log_evidence(full, space, models, data, call)
  accurate <- rep(NA_real_, length(codes))
  se <- rep(NA_real_, length(codes))
  method <- rep("screen", length(codes))
  draws <- vector("list", length(codes))
  columns <- full$parameter_names[seq_len(nrow(full$data$xt))]
  bar <- if (progress) cli::cli_progress_bar("Searching models", total = NA, .auto_close = FALSE)
  repeat {
    z <- ifelse(is.na(accurate), screen, accurate)
    p <- normalised(z + log_prior)
    order <- order(-p)
    cover <- cumsum(p[order]) <= 1 - settings$mass_tolerance
    wanted <- order[c(TRUE, cover[-length(cover)])] # the models up to the mass, and the next
    todo <- wanted[is.na(accurate[wanted])]
    if (!length(todo)) break
    fits <- future.apply::future_lapply(todo, function(i) {
      model <- build_submodel(build, space, models[, i], data, settings$dots, settings$rows, call)
      grid <- comparison_grid(model$n, list(), call)
      s <- list(seed = model_seed(settings$seed, codes[i]), dots = list(), replicates = 1)
      chosen <- auto_method(model, grid, s, call)
      fit <- chosen$fit %||% fit_by(chosen$method, model, grid, s, FALSE, call)
      list(log_evidence = fit$log_evidence, se = fit$log_evidence_se %||% NA_real_,
           method = chosen$method,
           draws = suppressWarnings(posterior_samples(fit, search_draws, seed = s$seed)))
    }, future.seed = NULL)
    accurate[todo] <- vapply(fits, `[[`, numeric(1), "log_evidence")
    se[todo] <- vapply(fits, `[[`, numeric(1), "se")
    method[todo] <- vapply(fits, `[[`, character(1), "method")
    draws[todo] <- lapply(fits, function(f) full_columns(f$draws, columns))
    if (!is.null(bar)) cli::cli_progress_update(id = bar, set = sum(!is.na(accurate)))
  }
  if (!is.null(bar)) cli::cli_progress_done(id = bar)
  z <- ifelse(is.na(accurate), screen, accurate)
  p <- normalised(z + log_prior)
  result <- list(codes = codes, log_evidence = z, log_evidence_se = se, log_prior = log_prior,
                 probability = p, method = "enumerate", estimator = method,
                 mass_outside = sum(p[is.na(accurate)]), screen = screen, terms = space$terms,
                 coefficients = mixture_summary(draws, p, columns, settings$seed))
  list(kind = "generic", full = full, space = space, data = data, build = build,
       settings = settings, result = result, n = model_rows(full),
       trajectory = trajectory_row(result, model_rows(full)))
}

# A model's seed in a search: fixed by the search's seed and the model, whatever order or plan
# the models are estimated in.
model_seed <- function(seed, code) {
  as.integer((as.double(seed) * 7919 + code * 104729) %% .Machine$integer.max)
}

# Approximate log evidences of the submodels `models` (candidate terms x models) of `full`, by
# the Savage-Dickey ratio of `full`'s Laplace approximation: a submodel fixes the coefficients of
# its excluded terms at 0, and with independent priors its evidence is full's times the ratio of
# their posterior to their prior density at 0, the posterior taken as the Gaussian at the mode
# with the inverse Hessian as covariance. Exact for Gaussian posteriors; a screen otherwise, near
# the models that hold the mass (where 0 is not far in the posterior's tails).
screen_log_evidence <- function(full, space, models, data, call) {
  lap <- laplace_mode(full, call)
  d <- length(lap$mode)
  e <- model_evaluate(full, lap$mode)
  chol_h <- chol(lap$hessian)
  log_z <- e$log_prior + e$log_lik + 0.5 * d * log(2 * pi) - sum(log(diag(chol_h)))
  cov <- chol2inv(chol_h)
  q <- nrow(full$data$xt)
  column_term <- match(term_of_columns(full, data, call), space$terms)
  log_prior0 <- coef_log_density_at_zero(full, q)
  apply(models, 2L, function(included) {
    out <- which(column_term %in% which(!included))
    if (!length(out)) return(log_z)
    s <- cov[out, out, drop = FALSE]
    r <- chol(s)
    dev <- backsolve(r, lap$mode[out], transpose = TRUE)
    log_post0 <- -0.5 * (length(out) * log(2 * pi) + sum(dev^2)) - sum(log(diag(r)))
    log_z + log_post0 - sum(log_prior0[out])
  })
}

# The term label of each design column of `full` (NA for the intercept).
term_of_columns <- function(full, data, call) {
  assign <- design_assign(full, data, call)
  labels <- attr(full$spec$terms, "term.labels")
  ifelse(assign == 0L, NA_character_, labels[pmax(assign, 1L)])
}

# The log prior density at 0 of each of the first q coefficients of `model` (independent normal
# or Student-t priors, R/prior.R's blocks).
coef_log_density_at_zero <- function(model, q) {
  m <- model$hyper[["prior"]]
  if (is.null(m)) return(stats::dnorm(0, 0, model$hyper$prior_sd, log = TRUE) + numeric(q))
  n <- m[3, ]
  kind <- rep(m[1, ], n)[seq_len(q)]
  location <- rep(m[4, ], n)[seq_len(q)]
  scale <- rep(m[5, ], n)[seq_len(q)]
  df <- rep(m[6, ], n)[seq_len(q)]
  ifelse(kind == prior_kinds[["normal"]], stats::dnorm(0, location, scale, log = TRUE),
         stats::dt(-location / scale, df, log = TRUE) - log(scale))
}

# Posterior draws a search keeps of each model whose evidence it estimates, for the model average.
search_draws <- 400L

# `draws` (a matrix with a column per coefficient of a submodel, named) as a matrix with the
# largest model's coefficient `columns`, 0 for those the submodel leaves out.
full_columns <- function(draws, columns) {
  out <- matrix(0, nrow(draws), length(columns), dimnames = list(NULL, columns))
  shared <- intersect(columns, colnames(draws))
  out[, shared] <- draws[, shared]
  out
}

# The model average of the coefficients from each model's draws (`draws`, NULL where a model
# has none) and the models' probabilities `p`: the mixture's draws, resampled with the search's
# seed, summarised (draws_summary()).
mixture_summary <- function(draws, p, columns, seed) {
  have <- which(!vapply(draws, is.null, logical(1)))
  counts <- with_seed(seed, as.vector(stats::rmultinom(1L, search_mixture_draws,
                                                       p[have] / sum(p[have]))))
  picked <- do.call(rbind, lapply(seq_along(have), function(j) {
    if (!counts[j]) return(NULL)
    d <- draws[[have[j]]]
    d[with_seed(model_seed(seed, j), sample.int(nrow(d), counts[j], replace = TRUE)), ,
      drop = FALSE]
  }))
  draws_summary(picked)
}

# ---- the result ---------------------------------------------------------------------------------

# The trajectory's row for `result` after n observations: the inclusion probabilities and the
# most probable model's probability.
trajectory_row <- function(result, n) {
  data.frame(n = n, as.list(inclusion_of(result)), top_probability = max(result$probability),
             check.names = FALSE)
}

# The posterior inclusion probability of each candidate term (a sum of probabilities that add to
# 1, kept within [0, 1] against rounding).
inclusion_of <- function(result) {
  members <- matrix(members_of(result$codes, length(result$terms)), ncol = length(result$terms))
  stats::setNames(pmin(pmax(drop(result$probability %*% members), 0), 1), result$terms)
}

new_sgais_model_search <- function(state, call) {
  result <- state$result
  if (identical(state$kind, "linear")) {
    result$coefficients <- linear_coefficients(state, result, result$stats, call)
  }
  space <- state$space
  K <- length(space$terms)
  order <- order(-result$probability)
  top <- utils::head(order, state$settings$top)
  memb <- t(matrix(members_of(result$codes[top], K), ncol = K,
                   dimnames = list(NULL, space$terms)))
  models <- data.frame(t(memb), check.names = FALSE)
  models$size <- colSums(memb)
  models$log_evidence <- result$log_evidence[top]
  models$log_evidence_se <- if (length(result$log_evidence_se) == 1L) result$log_evidence_se else
    result$log_evidence_se[top]
  models$log_prior <- result$log_prior[top]
  models$probability <- result$probability[top]
  # the bounds where evidences are estimated (an evidence of the screen alone has no SE: the
  # model's bounds are NA, and as another's it counts as exact; mass_outside says how much
  # probability rests on the screen)
  se <- rep_len(result$log_evidence_se, length(result$codes))
  bounds <- probability_bounds(result$log_evidence + result$log_prior,
                               ifelse(is.na(se), 0, se), top)
  models$probability_lower <- ifelse(is.na(se[top]), NA_real_, bounds$lower)
  models$probability_upper <- ifelse(is.na(se[top]), NA_real_, bounds$upper)
  models$method <- if (length(result$estimator) == 1L) result$estimator else result$estimator[top]
  models$formula <- vapply(seq_along(top), function(j) {
    paste(deparse(submodel_formula(space, memb[, j]), width.cutoff = 500L), collapse = " ")
  }, character(1))
  if (!is.null(result$visits)) {
    frequency <- result
    frequency$probability <- result$visits / sum(result$visits)
    gap <- max(abs(inclusion_of(frequency) - inclusion_of(result)))
    if (gap > 0.02) {
      warn(sprintf(paste(
        "The chain over models has not converged: its visit frequencies and the renormalised",
        "evidences of the %s models it visited give inclusion probabilities up to %.3f apart.",
        "Run more `iterations`."), format_count(length(result$codes)), gap), call,
        "sgais_warning_unconverged")
    }
  }
  structure(list(
    models = models,
    inclusion = inclusion_of(result),
    coefficients = result$coefficients,
    trajectory = state$trajectory,
    n = state$n %||% result$stats$n,
    visited = length(result$codes),
    visits = result$visits,
    mass_outside = result$mass_outside %||% 0,
    search = result$method,
    family = state$full$label,
    space = space,
    call = call,
    state = state
  ), class = "sgais_model_search")
}

# ---- methods ------------------------------------------------------------------------------------

#' Posterior inclusion probabilities of a model search
#'
#' @param x A search from [model_search()].
#' @param along `FALSE`: the probabilities after all the observations, a vector named by term.
#'   `TRUE`: after each block of the data, a data frame with a column `n` and one per term.
#' @param ... Unused.
#' @return A named numeric vector, or a data frame.
#' @export
#' @examples
#' search <- model_search(mpg ~ wt + hp + qsec + drat, mtcars, progress = FALSE)
#' inclusion_probabilities(search)
inclusion_probabilities <- function(x, along = FALSE, ...) {
  call <- sys.call()
  check_dots_empty(call, c("x", "along"), ...)
  x <- validate_sgais_model_search(x, call)
  along <- check_flag(along, "along", call)
  if (!along) return(x$inclusion)
  out <- x$trajectory[c("n", names(x$inclusion))]
  rownames(out) <- NULL
  out
}

validate_sgais_model_search <- function(x, call = NULL) {
  ok <- inherits(x, "sgais_model_search") && is.list(x) && is.data.frame(x$models) &&
    is.numeric(x$inclusion) && !is.null(names(x$inclusion)) && is.data.frame(x$trajectory) &&
    all(c("n", names(x$inclusion)) %in% names(x$trajectory))
  if (!ok) {
    abort("`x` is not a valid model search (from `model_search()`).", call,
          "sgais_error_invalid_fit")
  }
  x
}

#' @export
format.sgais_model_search <- function(x, ...) {
  x <- validate_sgais_model_search(x, sys.call())
  m <- x$models
  K <- length(x$inclusion)
  shown <- utils::head(m, 5L)
  terms <- names(x$inclusion)
  table <- data.frame(
    model = vapply(seq_len(nrow(shown)), function(i) {
      inc <- terms[unlist(shown[i, terms])]
      if (length(inc)) paste(inc, collapse = " + ") else "(none)"
    }, character(1)),
    log_evidence = sprintf("%.3f", shown$log_evidence),
    probability = vapply(signif(shown$probability, 3), format, character(1), scientific = 3)
  )
  if (has_probability_bounds(shown)) {
    table$interval <- probability_interval_labels(shown$probability_lower, shown$probability_upper)
  }
  table$model <- ifelse(nchar(table$model) > 60, paste0(substr(table$model, 1, 57), "..."),
                        table$model)
  inc <- sort(x$inclusion, decreasing = TRUE)
  c(
    sprintf("<model search: %s of %s, %d candidate term%s, %s observations>",
            if (x$search == "mcmc") sprintf("%s models visited", format_count(x$visited)) else
              sprintf("%s models", format_count(x$visited)),
            x$family, K, if (K == 1L) "" else "s", format_count(x$n)),
    sprintf("  evidence: %s", estimator_summary(x)),
    "",
    "Most probable models:",
    print_width(table, right = FALSE),
    "",
    "Posterior inclusion probabilities:",
    print_width(data.frame(term = names(inc), probability = sprintf("%.3f", inc)),
                right = FALSE)
  )
}

# Whether the models' probabilities have bounds wider than the probability itself (estimated
# evidences), to be printed (probability_interval_labels(): "" for a model of the screen alone).
has_probability_bounds <- function(models) {
  any(!is.na(models$probability_lower) &
        (models$probability_lower < models$probability |
           models$probability_upper > models$probability))
}

# How the evidences were made, in words: `estimator`, each scored model's ("screen" for the
# screened ones), and the probability the screened ones hold.
estimator_summary <- function(x) {
  r <- x$state$result
  est <- r$estimator
  if (length(est) == 1L) {
    return(if (x$search == "mcmc") sprintf("%s, for each model the chain visited",
                                           method_labels[[est]])
           else sprintf("%s, for every model", method_labels[[est]]))
  }
  counts <- table(method_labels[est[est != "screen"]])
  screened <- sum(est == "screen")
  paste0(paste(sprintf("%s for %s model%s", names(counts), format_count(counts),
                       ifelse(counts == 1L, "", "s")), collapse = ", "),
         if (screened) sprintf("; %s screened, with %.2g of the probability",
                               format_count(screened), x$mass_outside) else "")
}

#' @export
print.sgais_model_search <- function(x, ...) {
  cat_lines(format(x, ...))
  invisible(x)
}

#' @export
summary.sgais_model_search <- function(object, ...) {
  object <- validate_sgais_model_search(object, sys.call())
  structure(list(search = object), class = "summary.sgais_model_search")
}

#' @export
format.summary.sgais_model_search <- function(x, ...) {
  s <- x$search
  m <- s$models
  models <- m[setdiff(names(m), "formula")]
  models$log_evidence <- round(models$log_evidence, 3)
  models$log_prior <- round(models$log_prior, 3)
  models$log_evidence_se <- signif(models$log_evidence_se, 2)
  models$probability <- signif(models$probability, 3)
  if (has_probability_bounds(m)) {
    models$interval <- probability_interval_labels(m$probability_lower, m$probability_upper)
  }
  models$probability_lower <- models$probability_upper <- NULL
  models$method <- method_labels[models$method]
  # what is the same for every model is said once, not in a column
  same <- vapply(c("log_evidence_se", "log_prior", "method"), function(col) {
    v <- models[[col]]
    all(is.na(v)) || length(unique(v)) == 1L
  }, logical(1))
  models <- models[setdiff(names(models), names(same)[same])]
  terms <- names(s$inclusion)
  for (t in terms) models[[t]] <- ifelse(models[[t]], "x", "")
  coefs <- s$coefficients
  if (!is.null(coefs)) coefs[-1] <- lapply(coefs[-1], signif, 4)
  c(
    format(s),
    "",
    sprintf("The %d most probable models (x: the term is in):", nrow(models)),
    print_width(models, right = TRUE),
    if (!is.null(coefs)) c("", "Model-averaged coefficients (on the data's scale):",
                           print_width(coefs, right = TRUE))
  )
}

#' @export
print.summary.sgais_model_search <- function(x, ...) {
  cat_lines(format(x, ...))
  invisible(x)
}

#' @export
as.data.frame.sgais_model_search <- function(x, ...) {
  validate_sgais_model_search(x, sys.call())$models
}

#' @export
coef.sgais_model_search <- function(object, ...) {
  object <- validate_sgais_model_search(object, sys.call())
  stats::setNames(object$coefficients$mean, object$coefficients$coefficient)
}

#' @rdname sgais_plots
#' @export
plot_data.sgais_model_search <- function(object, which = c("inclusion", "models", "along"), ...) {
  call <- sys.call()
  which <- plot_panel(which, c("inclusion", "models", "along"), call, ...)
  object <- validate_sgais_model_search(object, call)
  terms <- names(object$inclusion)
  switch(which,
    inclusion = data.frame(term = factor(terms, levels = terms[order(object$inclusion)]),
                           probability = unname(object$inclusion)),
    models = {
      m <- object$models
      rank <- seq_len(nrow(m))
      data.frame(rank = rep(rank, length(terms)),
                 term = factor(rep(terms, each = nrow(m)), levels = terms),
                 included = unlist(m[terms], use.names = FALSE),
                 log_posterior_odds = rep(log(m$probability / m$probability[nrow(m)]),
                                          length(terms)))
    },
    along = {
      tr <- object$trajectory
      data.frame(n = rep(tr$n, length(terms)),
                 term = factor(rep(terms, each = nrow(tr)), levels = terms),
                 probability = unlist(tr[terms], use.names = FALSE))
    }
  )
}

#' @rdname sgais_plots
#' @export
autoplot.sgais_model_search <- function(object, which = c("inclusion", "models", "along"), ...) {
  call <- sys.call()
  which <- plot_panel(which, c("inclusion", "models", "along"), call, ...)
  d <- plot_data.sgais_model_search(object, which = which)
  switch(which,
    inclusion = ggplot2::ggplot(d, ggplot2::aes(.data$probability, .data$term)) +
      ggplot2::geom_col(fill = colour_at(1)) +
      ggplot2::geom_vline(xintercept = 0.5, linetype = "dashed", colour = "grey40") +
      ggplot2::scale_x_continuous(limits = c(0, 1)) +
      ggplot2::labs(x = "posterior inclusion probability", y = NULL) + plot_theme(),
    models = ggplot2::ggplot(d, ggplot2::aes(.data$term, .data$rank)) +
      ggplot2::geom_tile(ggplot2::aes(fill = ifelse(.data$included, .data$log_posterior_odds,
                                                    NA_real_)), colour = "white") +
      ggplot2::scale_fill_gradient(NULL, low = colour_at(2), high = colour_at(1),
                                   na.value = "grey92") +
      ggplot2::scale_y_reverse(breaks = unique(d$rank)) +
      ggplot2::labs(x = NULL, y = "model rank",
                    caption = "filled: in the model, coloured by its log posterior odds") +
      plot_theme() + ggplot2::theme(axis.text.x = ggplot2::element_text(angle = 45, hjust = 1)),
    along = ggplot2::ggplot(d, ggplot2::aes(.data$n, .data$probability, colour = .data$term)) +
      line_if(length(unique(d$n)) > 1L) + ggplot2::geom_point(size = 0.8) +
      ggplot2::scale_colour_manual(NULL, values = palette_for(levels(d$term))) +
      ggplot2::scale_y_continuous(limits = c(0, 1)) +
      ggplot2::scale_x_continuous(labels = count_labels) +
      ggplot2::labs(x = "observations", y = "posterior inclusion probability") + plot_theme()
  )
}

#' @rdname sgais_plots
#' @export
plot.sgais_model_search <- function(x, ..., colours = NULL, col = NULL) {
  plot.sgais_evidence(x, ..., colours = colours, col = col)
}

#' @rdname model_search
#' @param object A search from `model_search()`.
#' @param new_data New rows (a data frame, or a source as `data`) for a linear search.
#' @export
update.sgais_model_search <- function(object, new_data, ...) {
  call <- sys.call()
  object <- validate_sgais_model_search(object, call)
  check_dots_empty(call, c("object", "new_data"), ...)
  if (missing(new_data)) abort("`new_data` is missing: give the rows to add.", call)
  state <- object$state
  if (!identical(state$kind, "linear")) {
    abort(paste("Only a linear search continues on new rows; search the models of this family on",
                "all the data again."), call, "sgais_error_not_continuable")
  }
  s <- state$settings
  block_size <- s$block_size %||% nrow_of(new_data)
  source <- stream_source(new_data, block_size, call, "new_data")
  on.exit(source(NULL), add = TRUE)
  while (!is.null(block <- source(block_size))) {
    block <- formula_rows_of(block, list(state$space$formula), s$rows, call)$data
    state <- linear_search_add(state, model_data(state$full, block, call), s, call)
  }
  new_sgais_model_search(state, object$call)
}
