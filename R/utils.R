# Run `code` with R's RNG seeded by `seed`, restoring the caller's RNG state afterwards, so a
# seeded call is reproducible and leaves the user's random stream alone. With seed = NULL the
# code draws from (and advances) the user's stream.
with_seed <- function(seed, code) {
  if (is.null(seed)) return(code)
  with_rng_restored({
    set.seed(seed)
    code
  })
}

# Evaluates `code` and puts R's RNG kind and state (or its absence) back as they were.
with_rng_restored <- function(code) {
  env <- globalenv()
  kind <- RNGkind()
  old <- get0(".Random.seed", envir = env, inherits = FALSE)
  on.exit({
    RNGkind(kind[1], kind[2], kind[3])
    if (is.null(old)) {
      if (exists(".Random.seed", envir = env, inherits = FALSE)) rm(".Random.seed", envir = env)
    } else {
      assign(".Random.seed", old, envir = env)
    }
  }, add = TRUE)
  code
}

# Evaluates `run` (a sampler run, a list) under `seed` and adds R's RNG state before and after
# it as `initial_seed` and `final_seed`, so the run can be reproduced and continued. `run` is a
# promise: it is evaluated only after the seed is set and the initial state is taken.
seeded_run <- function(seed, run) {
  with_seed(seed, {
    initial_seed <- rng_state()
    out <- run # the sampler runs here
    out$initial_seed <- initial_seed
    out$final_seed <- rng_state()
    out
  })
}

# A run's key for the C core's random streams (src/rng.h): two whole numbers in [0, 2^32) from
# R's RNG, the one draw through which RNGkind() matters; every later draw of the run comes from
# streams keyed by it and by the run's position (chunk, annealing step or iteration, particle).
rng_key <- function() {
  floor(stats::runif(2) * 2^32)
}

# The current RNG state, initialising the generator first if it has not been used yet.
rng_state <- function() {
  if (!exists(".Random.seed", envir = globalenv(), inherits = FALSE)) stats::runif(1)
  get(".Random.seed", envir = globalenv(), inherits = FALSE)
}

default_progress <- function() {
  getOption("sgais.progress", interactive())
}

# A count of observations: an integer while R can index it, else a double (exact to 2^53).
as_count <- function(x) {
  if (all(x <= .Machine$integer.max)) as.integer(x) else as.double(x)
}

format_count <- function(x) {
  formatC(as.double(x), format = "f", digits = 0, big.mark = ",")
}

format_big <- function(x) {
  ifelse(x < 1e6, format_count(round(x)), formatC(x, format = "e", digits = 2))
}

# Passes on an interrupt that was caught and cannot be recovered from: signals it to the
# caller's handlers, then returns to the top level as an unhandled interrupt does.
resignal_interrupt <- function() {
  signalCondition(interrupt_condition())
  invokeRestart("abort")
}

interrupt_condition <- function() {
  structure(class = c("interrupt", "condition"), list(message = "", call = NULL))
}

# The driver shared by every estimator: calls `slice(state, budget)` until `finished(state)`.
# Each slice is given a time budget of about a quarter of a second (with a progress bar, or when
# an interrupt is to be recovered from); the bar is updated between slices. The C samplers carry
# their whole state (and R's RNG stream) across slices, so the result is the same whatever the
# budget. `slice` returns list(state = , trace = <data frame of the rows it added>). The bar's
# `format` may use `{label}`, set to `status(state)` after each slice; `position(state)` is its
# position out of `total` (NA for a spinner). The bar never moves back: a position predicted from
# the run so far (ais_progress(), ns_progress()) can dip when the prediction is revised, and the
# bar then waits for the run to catch up.
#
# With `recover = TRUE` an interrupt (Ctrl-C) ends the run instead of the call: the result is the
# state after the last whole slice, with `interrupted = TRUE`, and R's RNG state put back to
# where that slice left it (an interrupted .Call never stores its RNG state, but an interrupt
# in R code just after one could leave the stream ahead of the state). The state and its trace
# pieces are committed in one assignment, so an interrupt never separates them.
run_in_slices <- function(slice, state, finished, progress, format, total, position, status,
                          budget = if (progress || recover) 0.25 else Inf, recover = FALSE) {
  label <- ""
  shown <- 0
  if (progress) {
    bar <- cli::cli_progress_bar(format = format, total = total, current = FALSE,
                                 .auto_close = FALSE)
    on.exit(cli::cli_progress_done(id = bar), add = TRUE)
  }
  started <- proc.time()[["elapsed"]]
  done <- list(state = state, pieces = list(), seed = if (recover) rng_state())
  loop <- function() {
    while (!finished(done$state)) {
      res <- slice(done$state, budget)
      done <<- list(state = res$state, pieces = c(done$pieces, list(res$trace)),
                    seed = if (recover) rng_state())
      if (progress) {
        label <<- status(done$state)
        at <- position(done$state)
        if (!is.na(at)) shown <<- max(shown, at)
        cli::cli_progress_update(set = if (is.na(at)) at else shown, id = bar)
      }
    }
    FALSE
  }
  interrupted <- if (recover) {
    tryCatch(loop(), interrupt = function(e) {
      assign(".Random.seed", done$seed, envir = globalenv())
      TRUE
    })
  } else {
    loop()
  }
  list(state = done$state, trace = do.call(rbind, done$pieces),
       seconds = proc.time()[["elapsed"]] - started, interrupted = interrupted)
}

`%||%` <- function(x, y) if (is.null(x)) y else x

# Arguments in `...` that a method does not take (its generic has `...`): an error of class
# `sgais_error_argument` naming them, and the argument meant when one of `known` is close, rather
# than a misspelling (`sed = 1` for `seed = 1`) silently ignored.
check_dots_empty <- function(call, known, ...) {
  if (!...length()) return(invisible())
  given <- ...names()
  if (is.null(given)) given <- rep("", ...length())
  shown <- ifelse(nzchar(given), paste0("`", given, "`"), "an unnamed argument")
  hints <- vapply(given, function(g) {
    if (!nzchar(g)) return("")
    near <- known[utils::adist(g, known) <= 2]
    if (length(near)) sprintf(" (did you mean `%s`?)", near[1L]) else ""
  }, character(1))
  abort(sprintf("Unknown argument%s: %s.", if (length(given) > 1L) "s" else "",
                paste0(shown, hints, collapse = ", ")), call, "sgais_error_argument")
}

# Prints the lines of a format() method within `width` columns: a longer line is wrapped at
# spaces, its continuation indented under the text after its label ("  settings:  ..."), or two
# spaces in from its own indent.
cat_lines <- function(lines, width = 100L) {
  cat(wrap_lines(lines, width), sep = "\n")
}

# The lines print() gives a data frame, without row names, at most `width` columns wide (R's
# default width, 80, would wrap a table that fits in 100).
print_width <- function(x, ..., width = 100L) {
  old <- options(width = width)
  on.exit(options(old))
  utils::capture.output(print(x, row.names = FALSE, ...))
}

wrap_lines <- function(lines, width = 100L) {
  unlist(lapply(lines, function(line) {
    if (is.na(line) || nchar(line) <= width) return(line)
    label <- regmatches(line, regexpr("^ *[A-Za-z(][^:]{0,30}: +", line))
    indent <- if (length(label)) nchar(label) else nchar(sub("^( *).*", "\\1", line)) + 2L
    head <- if (length(label)) label else sub("^( *).*", "\\1", line)
    body <- strwrap(substring(line, nchar(head) + 1L), width = width - indent)
    c(paste0(head, body[1L]), paste0(strrep(" ", indent), body[-1L]))
  }), use.names = FALSE)
}
