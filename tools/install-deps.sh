#!/bin/sh
# Installs what sgais needs to build, test and check, skipping what is already there:
#   R packages cli, future, future.apply, ggplot2 (imported), testthat, withr, knitr, rmarkdown, DBI, RSQLite,
#   bit64, MASS, nlme, data.table
#   (suggested: tests, vignette, database streams, the fast CSV reader of sgais_stream()),
#   and pandoc (to build the vignette).
# As root on Debian/Ubuntu they come prebuilt from the distribution (r-cran-*, pandoc); anything
# still missing is installed from CRAN, through the repository R is configured with
# (getOption("repos")).
set -eu
PKGS="cli future future.apply ggplot2 testthat withr knitr rmarkdown DBI RSQLite bit64 MASS nlme data.table"
missing_r() {
  Rscript -e 'p <- commandArgs(TRUE); cat(p[!vapply(p, requireNamespace, logical(1), quietly = TRUE)])' $PKGS
}
missing=$(missing_r)
if { [ -n "$missing" ] || ! command -v pandoc >/dev/null 2>&1; } &&
   command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  debs="pandoc"
  # Debian names R packages in lower case (r-cran-dbi for DBI).
  for p in $missing; do debs="$debs r-cran-$(echo "$p" | tr '[:upper:]' '[:lower:]')"; done
  echo "install-deps: apt-get install $debs"
  apt-get update -qq || true
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $debs >/dev/null ||
    echo "install-deps: apt-get failed; falling back to CRAN"
fi
missing=$(missing_r)
if [ -n "$missing" ]; then
  echo "install-deps: installing from CRAN: $missing"
  Rscript -e 'r <- getOption("repos"); if (!length(r) || any(r == "@CRAN@")) stop("no CRAN repository is configured (options(repos))"); install.packages(commandArgs(TRUE), repos = r)' $missing
fi
missing=$(missing_r)
if [ -n "$missing" ]; then
  echo "install-deps: could not install: $missing" >&2
  exit 1
fi
command -v pandoc >/dev/null 2>&1 || echo "install-deps: no pandoc; the vignette cannot be built (tests still run)"
echo "install-deps: all R dependencies present"
