# Tags choose the tests that the slow builds run: tools/run-tests.R --tags=memcheck runs only
# the tests whose body begins with test_tags("memcheck", ...), and `make valgrind` runs those.
# The tag is read from the test's source by the runner; in an ordinary run (and in R CMD check)
# test_tags() does nothing.
#   memcheck  one small test of each C code path (each estimator, kernel and model family, the
#             threads, the state and streams): the valgrind job runs these alone, about 50
#             times slower than natively, so together they take seconds natively.
#   sanitize  the hostile-input table (bad arguments and corrupted objects sent to every entry
#             point): CI's sanitizer job runs these and the memcheck tests (the whole suite is
#             `make sanitize`'s default).
#   slow      a statistical check that needs many fits (an estimator's accuracy against an exact
#             or independent reference, within a calibrated spread): left out of `make test`,
#             the sanitizer build and CI, and run by `make validate-quick` (run-tests.R
#             --tags=slow). The suite is for mechanics; these guard accuracy.
test_tags <- function(...) invisible(NULL)
