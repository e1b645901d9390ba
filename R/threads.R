# The number of threads of the C core's parallel loops. C holds the setting and caps it at what
# OpenMP and the machine allow (src/threads.c); R checks every value before .Call, chooses the
# default when the package is loaded (threads_init(), from .onLoad) and applies R CMD check's
# limit on cores.

#' Number of threads
#'
#' `sgais_threads()` reports how many threads the samplers use, and `sgais_threads(n)` sets it.
#' Threads never change results: a run gives bit-identical results with any number of threads
#' (the work is split into fixed blocks, whose results are combined in a fixed order), so the
#' setting changes only how long a run takes.
#'
#' These computations use threads:
#' * [sgais()] moves its particles in parallel.
#' * [ais()] and [nested_sampling()] split each pass of the likelihood over the full data by
#'   observations (passes of 16,384 observations or more: shorter ones cost less than starting
#'   the threads; SGAIS likewise moves particles in parallel only when a move reads that many).
#'
#' Models written in R ([custom_model()]) and compiled models ([compiled_model()]) run on one
#' thread whatever the setting.
#'
#' @section Default:
#' When the package is loaded, the number of threads comes from the option `sgais.threads`,
#' else from the environment variable `SGAIS_NUM_THREADS`, else it is the number of processors
#' available. An unusable value is ignored, with a warning. Whatever its source, the number is at
#' most `OMP_THREAD_LIMIT`, and at most 2 when the environment variable `_R_CHECK_LIMIT_CORES_`
#' is set (as `R CMD check --as-cran` does).
#'
#' A process forked from R, e.g. by [parallel::mclapply()] or future's multicore plan, uses one
#' thread. When the replicates of [sgais()], [ais()] or [nested_sampling()] run in parallel
#' through a `future::plan()` other than sequential, each uses this session's threads divided by
#' the number of workers (at least one), so that together they stay within its threads.
#'
#' @section On a busy machine:
#' OpenMP's threads wait for each other by spinning unless told otherwise, and on a machine whose
#' processors are busy with other work a spinning thread holds a processor that the thread it
#' waits for needs: a threaded run can then take many times longer than on one thread. Either use
#' fewer threads than there are idle processors (`sgais_threads(1)`), or set the environment
#' variable `OMP_WAIT_POLICY=passive` before R starts (in the shell; R reads `.Renviron` after the
#' OpenMP runtime has read its settings). `make test` sets it for the test suite.
#'
#' If sgais was built without OpenMP, it always uses one thread: `sgais_threads()` returns 1, and
#' asking for more gives a warning of class `sgais_warning_no_openmp` once per session.
#'
#' @param threads `NULL` to report the number of threads, or a whole number to set it. `0` means
#'   all available processors (at most `OMP_THREAD_LIMIT`, and 2 under `R CMD check`'s limit, as
#'   above). A larger number is reduced to that many.
#' @return With `threads = NULL`, the number of threads (an integer). Otherwise the previous
#'   number, invisibly, so that `old <- sgais_threads(1)` followed by `sgais_threads(old)`
#'   restores the setting.
#' @export
#' @examples
#' sgais_threads()
#' old <- sgais_threads(1)
#' sgais_threads()
#' sgais_threads(old)
sgais_threads <- function(threads = NULL) {
  if (is.null(threads)) return(.Call(C_ffi_threads_get))
  call <- sys.call()
  threads <- check_whole_number(threads, "threads", 0, call)
  if (threads > 1L && !threads_openmp()) warn_no_openmp(threads, call)
  invisible(.Call(C_ffi_threads_set, check_limit_cores(threads)))
}

# Sets the default (see ?sgais_threads); called by .onLoad.
threads_init <- function() {
  .Call(C_ffi_threads_set, check_limit_cores(threads_default()))
}

# The number asked for by the option sgais.threads, else by SGAIS_NUM_THREADS, else 0 (all
# available). An unusable value is a warning, not an error: it must not stop the package from
# loading.
threads_default <- function() {
  value <- getOption("sgais.threads")
  name <- "options(sgais.threads)"
  if (is.null(value)) {
    value <- Sys.getenv("SGAIS_NUM_THREADS")
    name <- "SGAIS_NUM_THREADS"
    if (!nzchar(value)) return(0L)
    number <- suppressWarnings(as.numeric(value))
    if (!is.na(number)) value <- number
  }
  tryCatch(check_whole_number(value, name, 0, NULL), sgais_error = function(e) {
    warn(paste(conditionMessage(e), "It is ignored: sgais uses all available processors."),
         NULL, "sgais_warning_threads")
    0L
  })
}

# At most 2 threads when R CMD check limits cores (_R_CHECK_LIMIT_CORES_ set and not "false",
# the rule of the parallel package); 0 (all) counts as more.
check_limit_cores <- function(threads) {
  limit <- tolower(Sys.getenv("_R_CHECK_LIMIT_CORES_"))
  if (nzchar(limit) && limit != "false" && (threads == 0L || threads > 2L)) 2L else threads
}

threads_openmp <- function() {
  .Call(C_ffi_threads_openmp) > 0L
}

threads_state <- new.env(parent = emptyenv())

warn_no_openmp <- function(threads, call) {
  if (isTRUE(threads_state$warned_no_openmp)) return(invisible(FALSE))
  threads_state$warned_no_openmp <- TRUE
  warn(sprintf(paste("sgais was built without OpenMP, so it runs on one thread, not %d.",
                     "This warning is shown once per session."), threads),
       call, "sgais_warning_no_openmp")
  invisible(TRUE)
}
