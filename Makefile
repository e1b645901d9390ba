# sgais developer and user entry points. Every target installs what it needs first.
#   make install  build the source tarball with its vignettes and install it (about 3 minutes;
#               vignette("sgais") and browseVignettes("sgais") then work)
#   make demo   fit the paper's linear regression, compare with the exact evidence, draw sgais-demo.png
#   make test   run the test suite (prints its 10 slowest tests, those over 10 s, and "testthat: N
#               passed, N failed, N skipped"; fails on a failed test, never on a slow one). Takes
#               about 5 minutes.
#   make check  R CMD check --no-manual of the tarball, without the tests (that is `make test`) and
#               without rebuilding the vignettes (`make install` has built them)
#   make check-vignettes  R CMD check that reruns the vignettes' code and rebuilds them, no tests
#   make validate-quick  the tests tagged "slow" (statistical checks of many fits, left out of
#               `make test`), every estimator x preset x model family once on small data against its
#               reference, and the quick statistical checks (inst/validation/quick.R, < 12 minutes;
#               overwrites inst/validation/quick.csv and checks.csv)
#   make validate  every estimator and preset against exact and Stan references (inst/validation/
#               run.R, 70-80 minutes, into results.csv), then every statistical check
#               (inst/validation/checks.R); run.R's header lists the rest of the suite
#   make bench  the linear-regression benchmark (N = 1e4, 1e5, 1e6)
#   make bench-models  SGAIS, NS and AIS on softmax regression and the mixture (N = 1e4, 1e5)
#   make docs   regenerate man/ and NAMESPACE with roxygen2
#   make sanitize  the whole suite against a build with AddressSanitizer and UBSan, on 2 threads
#               (tools/sanitize.sh); fails on any sanitizer report (about 15 minutes)
#   make valgrind  the tests tagged test_tags("memcheck") under valgrind memcheck
#               (tools/valgrind.sh); fails on any memcheck error or definite leak (about 10 minutes)
# .ci/run runs test, check, then sanitize and valgrind side by side. SANITIZE_FILES/SANITIZE_TAGS
# and VALGRIND_FILES/VALGRIND_TAGS choose other tests (tools/run-tests.R --files and --tags), e.g.
#   make valgrind VALGRIND_FILES=nested_sampling VALGRIND_TAGS=
R ?= R
RSCRIPT ?= Rscript
VERSION := $(shell sed -n 's/^Version: //p' DESCRIPTION)
TARBALL := sgais_$(VERSION).tar.gz
# What the tarball is built from: it is rebuilt when one of these changes.
SOURCES := DESCRIPTION NAMESPACE LICENSE $(shell find R src man vignettes inst -type f \
  ! -name '*.o' ! -name '*.so' ! -name '*.dll' ! -path 'inst/doc/*' 2>/dev/null)
N ?= 100000
PNG ?= sgais-demo.png
# the C sources compile two at a time in each build, install and check (the machines have two
# cores or more); JOBS=1 compiles one at a time
JOBS ?= 2
BUILD_ENV := MAKEFLAGS=-j$(JOBS)

.PHONY: deps install demo test check check-vignettes bench bench-models validate validate-quick \
  docs sanitize valgrind clean

deps:
	sh tools/install-deps.sh

# R CMD build runs the vignettes (R CMD INSTALL of the directory would leave them out).
$(TARBALL): $(SOURCES) | deps
	$(BUILD_ENV) $(R) CMD build .

install: $(TARBALL)
	$(BUILD_ENV) $(R) CMD INSTALL --no-multiarch $(TARBALL)

demo: install
	$(RSCRIPT) inst/examples/demo.R $(N) $(PNG)

# OMP_WAIT_POLICY=passive: threads that spin while they wait slow the threaded tests down many
# times on a machine whose processors are busy (?sgais_threads)
test: install
	OMP_WAIT_POLICY=passive $(RSCRIPT) tools/run-tests.R

check: $(TARBALL)
	$(BUILD_ENV) _R_CHECK_FORCE_SUGGESTS_=false $(R) CMD check --no-manual --no-tests --ignore-vignettes $(TARBALL)

check-vignettes: $(TARBALL)
	$(BUILD_ENV) _R_CHECK_FORCE_SUGGESTS_=false $(R) CMD check --no-manual --no-tests $(TARBALL)

bench: install
	$(RSCRIPT) inst/bench/linear-regression.R

bench-models: install
	$(RSCRIPT) inst/bench/models.R

validate-quick: install
	$(RSCRIPT) tools/run-tests.R --tags=slow
	$(RSCRIPT) inst/validation/quick.R

validate: install
	$(RSCRIPT) inst/validation/run.R
	$(RSCRIPT) inst/validation/checks.R --tier=full

docs:
	$(RSCRIPT) -e 'roxygen2::roxygenise(load_code = "source")'

# Builds its own instrumented copy in a temporary library (src/Makevars is not changed).
sanitize: deps
	R="$(R)" sh tools/sanitize.sh

# Against the package as `make install` builds it.
valgrind: install
	R="$(R)" sh tools/valgrind.sh

clean:
	rm -rf sgais_*.tar.gz sgais.Rcheck src/*.o src/*.so
