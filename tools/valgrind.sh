#!/bin/sh
# Runs tests against the installed sgais under valgrind's memcheck; fails on a test failure, on
# any memcheck error (invalid read or write, use of an uninitialised value, bad free) and on any
# definitely lost block. Possibly lost blocks are not errors: the threads of libgomp and of cli
# leave their thread-local storage "possibly lost" at exit. Used by `make valgrind` and .ci/run.
# Environment:
#   VALGRIND_TAGS   which tests: tools/run-tests.R --tags (default "memcheck": the tests tagged
#                   test_tags("memcheck"), one small test of each C code path; empty: every test)
#   VALGRIND_FILES  which test files: tools/run-tests.R --files (default empty: every file)
#   R               the R front end (default R)
# Under memcheck R runs 20 to 50 times slower (the C core about 50), so the default runs the
# tagged tests alone: a few seconds natively, a few minutes here. The time limit of the ordinary
# suite does not apply.
set -eu
R=${R:-R}
TAGS=${VALGRIND_TAGS-memcheck}
FILES=${VALGRIND_FILES-}

if ! command -v valgrind >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "valgrind: apt-get install valgrind"
    apt-get update -qq || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends valgrind \
      >/dev/null
  fi
  command -v valgrind >/dev/null 2>&1 || { echo "valgrind: it is not installed" >&2; exit 1; }
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
memcheck="valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite"
# --child-silent-after-fork: the log is R's alone, not also that of the processes R forks (to run
# a command, or a forked worker), which would end it with their own summaries
echo "valgrind: running the tests${TAGS:+ tagged $TAGS}${FILES:+ in $FILES} under $memcheck"
# memcheck writes to its own log, printed after the tests' output
# The script is source()d rather than read by R as its input (-f): a forked child that exits under
# valgrind moves the input file's offset, which R shares with it, and R then read part of the
# script twice ("unexpected symbol" after the last test)
# OMP_WAIT_POLICY=passive: valgrind runs one thread at a time, and a thread that spins while it
# waits for another spends its turn for nothing
echo 0 >"$tmp/status" # the pipeline hides the exit status; it is kept here
{
  OMP_WAIT_POLICY=passive "$R" -d "$memcheck --child-silent-after-fork=yes --log-file=$tmp/memcheck.log" \
    --vanilla --no-echo -e 'source("tools/run-tests.R")' --args --tags="$TAGS" --files="$FILES" \
    --budget=0 2>&1 ||
    echo $? >"$tmp/status"
} | tee "$tmp/tests.log"
status=$(cat "$tmp/status")
cat "$tmp/memcheck.log"
summary=$(grep '^testthat:' "$tmp/tests.log" | tail -n 1)
errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$tmp/memcheck.log" | tail -n 1)
definite=$(sed -n 's/.*definitely lost: \([0-9,]*\) bytes.*/\1/p' "$tmp/memcheck.log" | tail -n 1)
possible=$(sed -n 's/.*possibly lost: \([0-9,]*\) bytes.*/\1/p' "$tmp/memcheck.log" | tail -n 1)
# no "definitely lost" line: no leak at all ("All heap blocks were freed")
if [ "$status" -ne 0 ] || [ -z "$summary" ] || [ "${errors:-x}" != 0 ] ||
   [ "${definite:-0}" != 0 ]; then
  echo "valgrind: FAILED (exit $status, ${errors:-unknown} memcheck errors," \
    "${definite:-0} bytes definitely lost) ${summary:-the tests did not finish}" >&2
  exit 1
fi
echo "valgrind: ${summary#testthat: }; no memcheck errors, no definite leaks" \
  "(${possible:-0} bytes possibly lost)"
