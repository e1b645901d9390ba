# Run `code` with R's RNG seeded by `seed`, restoring the caller's RNG state afterwards, so a
# seeded call is reproducible and leaves the user's random stream alone. With seed = NULL the
# code draws from (and advances) the user's stream.
with_seed <- function(seed, code) {
  if (is.null(seed)) return(code)
  env <- globalenv()
  old <- get0(".Random.seed", envir = env, inherits = FALSE)
  on.exit(
    if (is.null(old)) {
      rm(".Random.seed", envir = env)
    } else {
      assign(".Random.seed", old, envir = env)
    },
    add = TRUE
  )
  set.seed(seed)
  code
}

# The current RNG state, initialising the generator first if it has not been used yet.
rng_state <- function() {
  if (!exists(".Random.seed", envir = globalenv(), inherits = FALSE)) stats::runif(1)
  get(".Random.seed", envir = globalenv(), inherits = FALSE)
}

default_progress <- function() {
  getOption("sgais.progress", interactive())
}

format_count <- function(x) {
  formatC(x, format = "d", big.mark = ",")
}

format_big <- function(x) {
  ifelse(x < 1e6, format_count(round(x)), formatC(x, format = "e", digits = 2))
}
