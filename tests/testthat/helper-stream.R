# A source function (see sgais_stream()) over the rows of `d` that calls `fail()` -- an error,
# or an interrupt as Ctrl-C signals it -- once `after` rows have been read.
failing_source <- function(d, after, fail) {
  at <- 0
  function(n) {
    if (at >= after) fail()
    rows <- d[seq(at + 1, min(at + n, nrow(d))), ]
    at <<- at + nrow(rows)
    rows
  }
}

interrupt_now <- function() signalCondition(sgais:::interrupt_condition())

# A real interrupt (SIGINT, as Ctrl-C sends) `after` seconds from now, from another process.
interrupt_in <- function(after) {
  system(sprintf("(sleep %g; kill -INT %d) >/dev/null 2>&1 &", after, Sys.getpid()))
}
