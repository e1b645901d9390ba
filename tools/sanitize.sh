#!/bin/sh
# Builds sgais with AddressSanitizer and UndefinedBehaviorSanitizer into a temporary library and
# runs the tests that exercise the C core against it; fails on a test failure, on a non-zero exit
# and on any sanitizer report, wherever it went (R's output, or a child process such as the
# Rscript a test starts). Used by `make sanitize` and .ci/run. Environment:
#   SANITIZE_FILES  which test files: tools/run-tests.R --files (default empty: every file)
#   SANITIZE_TAGS   which tests: tools/run-tests.R --tags (default empty: every test)
#   R               the R front end (default R)
# The whole suite runs by default: under ASan it is about 3 times slower than natively, a few
# minutes, and every test file reaches the C core (the hostile-input table sends bad arguments
# and corrupted models and fits to its entry points). The time limit of the ordinary suite does
# not apply.
# The flags come from a private Makevars file (R_MAKEVARS_USER); src/Makevars is not touched.
# The tests run on 2 threads (SGAIS_NUM_THREADS=2): ASan handles libgomp's threads without false
# reports, so the parallel paths are covered too (test-threads.R, with 20,000 observations, is the
# test that reaches the parallel passes over the full data).
# Blind spot (of valgrind too): an overrun of R_alloc() scratch of at most 128 bytes stays inside
# one of R's pages of small vectors, which is one malloc() block; larger R_alloc() blocks are
# malloc()ed one by one and are checked.
set -eu
R=${R:-R}
FILES=${SANITIZE_FILES-}
TAGS=${SANITIZE_TAGS-}

CC=$("$R" CMD config CC)
case "$CC" in
  *gcc*) ;;
  *) echo "sanitize: R compiles with '$CC'; this target supports gcc only" >&2; exit 1 ;;
esac
cc=${CC%% *}
# gcc -print-file-name prints the bare name when it has no such file.
find_runtime() {
  libasan=$($cc -print-file-name=libasan.so)
  libubsan=$($cc -print-file-name=libubsan.so)
  [ -f "$libasan" ] && [ -f "$libubsan" ]
}
if ! find_runtime; then
  # On Debian/Ubuntu the runtimes come with libgcc-<version>-dev, which gcc depends on.
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    deb="libgcc-$($cc -dumpversion | cut -d. -f1)-dev"
    echo "sanitize: apt-get install $deb"
    apt-get update -qq || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$deb" >/dev/null
  fi
  find_runtime || { echo "sanitize: $cc has no libasan.so/libubsan.so" >&2; exit 1; }
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/lib" "$tmp/reports"
# CFLAGS replaces R's (its -D_FORTIFY_SOURCE needs -O2 and only duplicates ASan's checks); -O1
# keeps the stack traces readable at a modest cost. -fno-sanitize-recover: every UBSan report
# ends the process, whatever UBSAN_OPTIONS says.
cat >"$tmp/Makevars" <<'EOF'
CFLAGS = -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
LDFLAGS = -fsanitize=address,undefined
EOF

echo "sanitize: building with -fsanitize=address,undefined into $tmp/lib"
# --no-test-load: an instrumented library loads only into a process that starts with the ASan
# runtime (LD_PRELOAD below), as the tests do. --clean: no instrumented objects are left in src/.
R_MAKEVARS_USER="$tmp/Makevars" "$R" CMD INSTALL --preclean --clean --no-multiarch \
  --no-test-load -l "$tmp/lib" . >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log" >&2; exit 1; }

# detect_leaks=0: R does not free everything at exit (the leak checks are valgrind's job).
# ASan's log_path sends its reports to files, so that none is lost in output that R or a test
# swallows (a child process, a fork); GCC's UBSan ignores log_path, so its reports are found in
# the output and by the exit status.
echo "sanitize: running the tests${FILES:+ in $FILES}${TAGS:+ tagged $TAGS}"
echo 0 >"$tmp/status" # the pipeline hides the exit status; it is kept here
{
  R_LIBS="$tmp/lib${R_LIBS:+:$R_LIBS}" SGAIS_NUM_THREADS=2 LD_PRELOAD="$libasan" \
    ASAN_OPTIONS="detect_leaks=0:log_path=$tmp/reports/asan" \
    UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    "$R" --vanilla --no-echo -e 'source("tools/run-tests.R")' --args --files="$FILES" --tags="$TAGS" \
    --budget=0 2>&1 ||
    echo $? >"$tmp/status"
} | tee "$tmp/tests.log"
status=$(cat "$tmp/status")
files=$(ls "$tmp/reports" | wc -l)
if [ "$files" -gt 0 ]; then
  echo "sanitize: $files ASan report file(s):" >&2
  cat "$tmp"/reports/* >&2
fi
pattern='runtime error:|ERROR: (Address|Leak)Sanitizer|SUMMARY: UndefinedBehaviorSanitizer'
lines=$(grep -cE "$pattern" "$tmp/tests.log" || true)
summary=$(grep '^testthat:' "$tmp/tests.log" | tail -n 1)
if [ "$status" -ne 0 ] || [ "$files" -gt 0 ] || [ "$lines" -gt 0 ] || [ -z "$summary" ]; then
  echo "sanitize: FAILED (exit $status, $files report file(s), $lines report line(s) in the" \
    "output) ${summary:-the tests did not finish}" >&2
  exit 1
fi
echo "sanitize: ${summary#testthat: }; no sanitizer reports"
