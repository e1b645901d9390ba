# sgais developer and user entry points. Every target installs what it needs first.
#   make demo   fit the paper's linear regression, compare with the exact evidence, draw sgais-demo.png
#   make test   run the test suite (prints "testthat: N passed, N failed, N skipped")
#   make check  R CMD build + R CMD check --no-manual
#   make bench  the linear-regression benchmark (N = 1e4, 1e5, 1e6)
#   make bench-models  SGAIS, NS and AIS on softmax regression and the mixture (N = 1e4, 1e5)
#   make validate  every estimator and preset against exact and Stan references (inst/validation)
#   make docs   regenerate man/ and NAMESPACE with roxygen2
#   make sanitize  the C-heavy tests against a build with AddressSanitizer and UBSan, on 2 threads
#               (tools/sanitize.sh); fails on any sanitizer report (about 4 minutes)
#   make valgrind  the estimator tests under valgrind memcheck (tools/valgrind.sh); fails on any
#               memcheck error or definite leak (about 6 minutes)
# .ci/run runs test, check, sanitize and valgrind. SANITIZE_TESTS / VALGRIND_TESTS choose other
# test files (a testthat filter; empty: all) and SANITIZE_SKIP / VALGRIND_SKIP other tests to skip
# by description (empty: none; the defaults are in the scripts), e.g.
#   make valgrind VALGRIND_TESTS=nested VALGRIND_SKIP=
R ?= R
RSCRIPT ?= Rscript
VERSION := $(shell sed -n 's/^Version: //p' DESCRIPTION)
TARBALL := sgais_$(VERSION).tar.gz
N ?= 100000
PNG ?= sgais-demo.png

.PHONY: deps install demo test check bench bench-models validate docs sanitize valgrind clean

deps:
	sh tools/install-deps.sh

install: deps
	$(R) CMD INSTALL --preclean --no-multiarch .

demo: install
	$(RSCRIPT) inst/examples/demo.R $(N) $(PNG)

test: install
	$(RSCRIPT) tools/run-tests.R

$(TARBALL): deps
	$(R) CMD build .

check: $(TARBALL)
	_R_CHECK_FORCE_SUGGESTS_=false $(R) CMD check --no-manual $(TARBALL)

bench: install
	$(RSCRIPT) inst/bench/linear-regression.R

bench-models: install
	$(RSCRIPT) inst/bench/models.R

validate: install
	$(RSCRIPT) inst/validation/run.R

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
